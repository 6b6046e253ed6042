// SPDX-License-Identifier: MIT
/*
 * Cost of one trace hook, in TSC ticks, against the floor it is built from
 * (a bare rdtsc and a 16-byte store into a per-thread ring) and, when built
 * with -DWITH_LTTNG, an LTTng-UST tracepoint recorded by a real session.
 * One variant per process run (argv[1]); bench/trace-overhead.sh runs them
 * interleaved and pinned and takes medians. Prints "VARIANT TICKS_PER_HOOK".
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pmon/arch.h>
#include <pmon/trace.h>

#ifdef WITH_LTTNG
#define TRACEPOINT_DEFINE
#define TRACEPOINT_CREATE_PROBES
#include "trace-overhead-tp.h"
#endif

#define N 50000 /* hooks per batch: fits the ring, so nothing is dropped */
#define BATCHES 20

struct rec {
	uint64_t tick;
	uint32_t word, arg;
};
static struct rec ring[1 << 17];
static __thread uint64_t head;

static inline void bare_hook(uint32_t ch)
{
	struct rec *r = &ring[head++ & ((1 << 17) - 1)];
	r->tick = pmon_rdtsc();
	r->word = ch;
	r->arg = 0;
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	const char *v = argc > 1 ? argv[1] : "pmon";
	uint64_t best = UINT64_MAX;

	if (!strcmp(v, "pmon")) {
		char path[64];
		snprintf(path, sizeof(path), "%s/pmon-bench-%d.trace",
			 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
		struct pmon_trace_opts o = { .sz = sizeof(o),
					     .path = path,
					     .buffer_records = 1 << 17 };
		if (pmon_trace_start(&o))
			return 1;
		uint32_t ch = pmon_trace_channel("bench");
		usleep(100000); /* the writer calibrates, then drains every 20 ms */
		for (int b = 0; b < BATCHES; b++) {
			uint64_t t0 = pmon_rdtsc();
			for (int i = 0; i < N; i++)
				pmon_trace_mark(ch);
			uint64_t t = pmon_rdtsc() - t0;
			if (t < best)
				best = t;
			usleep(30000); /* let the writer drain */
		}
		pmon_trace_stop();
		struct pmon_trace_reader *r = pmon_trace_reader__open(path);
		unsigned long long dropped = r ? pmon_trace_reader__info(r)->dropped : 0;
		pmon_trace_reader__free(r);
		unlink(path);
		if (dropped)
			fprintf(stderr, "pmon: %llu hooks dropped\n", dropped);
	} else if (!strcmp(v, "bare")) {
		for (int b = 0; b < BATCHES; b++) {
			uint64_t t0 = pmon_rdtsc();
			for (int i = 0; i < N; i++)
				bare_hook(1);
			uint64_t t = pmon_rdtsc() - t0;
			if (t < best)
				best = t;
		}
#ifdef WITH_LTTNG
	} else if (!strcmp(v, "lttng")) {
		for (int b = 0; b < BATCHES; b++) {
			uint64_t t0 = pmon_rdtsc();
			for (int i = 0; i < N; i++)
				tracepoint(pmonbench, mark, 1);
			uint64_t t = pmon_rdtsc() - t0;
			if (t < best)
				best = t;
			usleep(30000);
		}
#endif
	} else {
		fprintf(stderr, "unknown variant '%s'\n", v);
		return 2;
	}
	printf("%s %.2f\n", v, (double)best / N);
	return 0;
}
