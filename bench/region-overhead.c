// SPDX-License-Identifier: MIT
/*
 * Benchmark driver: the cost of one begin/end pair, in TSC ticks, for one
 * variant per process (regions are set up once per process):
 *   bare-tsc   two fenced TSC reads (lfence;rdtsc;lfence), the primitive
 *              pmon's TSC-only pair wraps (RDTSCP where the CPU has it)
 *   pmon-tsc   pmon_region_begin/end, TSC only
 *   bare-read  two read() calls of a task-clock event
 *   pmon-read  pmon_region_begin/end with task-clock
 *   papi-read  PAPI_read twice (perf::TASK-CLOCK), where PAPI can count
 *   papi-hl    PAPI_hl_region_begin/end, where PAPI can count
 * Prints "VARIANT TICKS_PER_PAIR" or "VARIANT refused: REASON".
 * Built and run by bench/region-overhead.sh.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <pmon/pmon.h>
#ifdef HAVE_PAPI
#include <papi.h>
#endif

#define N 20000

static volatile uint64_t sink;

static uint64_t now(void)
{
	return pmon__tsc_end(PMON_FENCE_LFENCE);
}

static int pmon_variant(const char *events)
{
	struct pmon_region_opts o = { .sz = sizeof(o), .events = events, .output = "/dev/null" };
	uint64_t t0, t1;

	if (pmon_region_init(&o)) {
		printf("refused: %s\n", pmon_errdetail());
		return 1;
	}
	for (int i = 0; i < 1000; i++) {
		pmon_region_begin(0);
		pmon_region_end(0);
	}
	t0 = now();
	for (int i = 0; i < N; i++) {
		pmon_region_begin(0);
		pmon_region_end(0);
	}
	t1 = now();
	printf("%.2f\n", (double)(t1 - t0) / N);
	return 0;
}

int main(int argc, char **argv)
{
	const char *v = argc > 1 ? argv[1] : "";
	uint64_t t0, t1;
	bool rdtscp = false;
	uint32_t r[4];

	pmon_cpuid(0x80000001, 0, r);
	rdtscp = (r[3] >> 27) & 1;
	printf("%s ", v);
	if (!strcmp(v, "bare-tsc")) {
		enum pmon_fence f = rdtscp ? PMON_FENCE_RDTSCP : PMON_FENCE_LFENCE;
		t0 = now();
		for (int i = 0; i < N; i++) {
			uint64_t a = pmon__tsc_begin(f), b = pmon__tsc_end(f);
			sink += b - a;
		}
		t1 = now();
		printf("%.2f\n", (double)(t1 - t0) / N);
	} else if (!strcmp(v, "pmon-tsc")) {
		return pmon_variant("");
	} else if (!strcmp(v, "pmon-read")) {
		return pmon_variant("task-clock");
	} else if (!strcmp(v, "bare-read")) {
		struct perf_event_attr a = { .size = sizeof(a),
					     .type = PERF_TYPE_SOFTWARE,
					     .config = PERF_COUNT_SW_TASK_CLOCK };
		int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
		uint64_t x;
		if (fd < 0) {
			printf("refused: perf_event_open: %s\n", strerror(errno));
			return 1;
		}
		t0 = now();
		for (int i = 0; i < N; i++) {
			if (read(fd, &x, 8) != 8 || read(fd, &x, 8) != 8)
				return 1;
			sink += x;
		}
		t1 = now();
		printf("%.2f\n", (double)(t1 - t0) / N);
#ifdef HAVE_PAPI
	} else if (!strcmp(v, "papi-read")) {
		int es = PAPI_NULL, rc;
		long long vals[1];
		if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT) {
			printf("refused: PAPI_library_init failed\n");
			return 1;
		}
		if ((rc = PAPI_create_eventset(&es)) != PAPI_OK ||
		    (rc = PAPI_add_named_event(es, "perf::TASK-CLOCK")) != PAPI_OK ||
		    (rc = PAPI_start(es)) != PAPI_OK) {
			printf("refused: %s\n", PAPI_strerror(rc));
			return 1;
		}
		t0 = now();
		for (int i = 0; i < N; i++) {
			PAPI_read(es, vals);
			PAPI_read(es, vals);
		}
		t1 = now();
		printf("%.2f\n", (double)(t1 - t0) / N);
	} else if (!strcmp(v, "papi-hl")) {
		int rc = PAPI_hl_region_begin("r");
		if (rc != PAPI_OK) {
			printf("refused: PAPI_hl_region_begin: %s\n", PAPI_strerror(rc));
			return 1;
		}
		PAPI_hl_region_end("r");
		t0 = now();
		for (int i = 0; i < N; i++) {
			PAPI_hl_region_begin("r");
			PAPI_hl_region_end("r");
		}
		t1 = now();
		printf("%.2f\n", (double)(t1 - t0) / N);
#endif
	} else {
		printf("refused: unknown variant (built without PAPI?)\n");
		return 2;
	}
	return 0;
}
