// SPDX-License-Identifier: MIT
/*
 * Memory of 10^8 trace hooks from 4 threads onto a slow disk (issue #18's
 * goal: memory bounded, every hook written or counted as dropped), run by
 * bench/trace-memory.sh. Two roles:
 *
 *   trace-memory produce VARIANT THREADS TOTAL [PATH]
 *       THREADS threads call TOTAL hooks in all, as fast as they can, and
 *       the process prints "maxrss_kb N seconds S". VARIANT: floor (each
 *       thread stores rdtsc and 16 bytes into its own 65536-record ring,
 *       the memory pmon's rings take, and no writer), pmon (PMON_TRACE_MARK
 *       into a trace written to PATH), lttng (an LTTng-UST tracepoint, with
 *       -DWITH_LTTNG, recorded by the session the script made). With
 *       GAP=N in the environment each hook is followed by N iterations of a
 *       loop: a program that works between its hooks.
 *   trace-memory consume PATH MB_PER_S
 *       the slow disk: reads the trace from the FIFO at PATH at MB_PER_S,
 *       parses its chunks as they stream by (lib/trace/tracefile.h) and
 *       prints the bytes, the records written, and the hooks dropped as the
 *       trace counts them (the trailer's total, and the sum of each
 *       thread's last count). Nothing is kept: the check needs no disk.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include <pmon/arch.h>
#include <pmon/trace.h>

#include "../lib/trace/tracefile.h"

#ifdef WITH_LTTNG
#define TRACEPOINT_DEFINE
#define TRACEPOINT_CREATE_PROBES
#include "trace-overhead-tp.h"
#endif

static const char *variant;
static long per_thread, gap;
static volatile unsigned long sink;

/* Work between hooks ($GAP loop iterations): a program that does something. */
static inline void work(void)
{
	for (long k = 0; k < gap; k++)
		sink += (unsigned long)k;
}

struct rec {
	uint64_t tick;
	uint32_t word, arg;
};

static void *worker(void *arg)
{
	(void)arg;
	if (!strcmp(variant, "floor")) {
		struct rec *ring = calloc(65536, sizeof(*ring));
		if (!ring)
			return NULL;
		for (long i = 0; i < per_thread; i++) {
			struct rec *r = &ring[i & 65535];
			r->tick = pmon_rdtsc();
			r->word = 1;
			r->arg = 0;
			__asm__ volatile("" ::: "memory");
			work();
		}
		free(ring);
	} else if (!strcmp(variant, "pmon")) {
		for (long i = 0; i < per_thread; i++) {
			PMON_TRACE_MARK("bench");
			work();
		}
#ifdef WITH_LTTNG
	} else if (!strcmp(variant, "lttng")) {
		for (long i = 0; i < per_thread; i++) {
			tracepoint(pmonbench, mark, 1);
			work();
		}
#endif
	}
	return NULL;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int produce(int argc, char **argv)
{
	if (argc < 5)
		return 2;
	variant = argv[2];
	int nth = atoi(argv[3]);
	long total = atol(argv[4]);
	if (nth < 1 || nth > 64 || total < nth)
		return 2;
	per_thread = total / nth;
	gap = getenv("GAP") ? atol(getenv("GAP")) : 0;
	if (!strcmp(variant, "pmon")) {
		struct pmon_trace_opts o = { .sz = sizeof(o), .path = argc > 5 ? argv[5] : NULL };
		if (pmon_trace_start(&o)) {
			fprintf(stderr, "trace-memory: cannot start the trace\n");
			return 1;
		}
	}
	pthread_t t[64];
	double t0 = now();
	for (int i = 0; i < nth; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < nth; i++)
		pthread_join(t[i], NULL);
	double hooks_s = now() - t0;
	if (!strcmp(variant, "pmon"))
		pmon_trace_stop();
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("maxrss_kb %ld hooks_seconds %.2f total_seconds %.2f\n", ru.ru_maxrss, hooks_s,
	       now() - t0);
	return 0;
}

struct tid_drop {
	int32_t tid;
	uint64_t dropped;
};

static int read_full(int fd, void *p, size_t n, double rate, double t0, uint64_t *bytes)
{
	char *c = p;
	while (n) {
		/* The slow disk: never ahead of rate bytes per second. */
		double due = t0 + (double)*bytes / rate, t = now();
		if (due > t)
			usleep((useconds_t)((due - t) * 1e6));
		size_t want = n > 65536 ? 65536 : n;
		ssize_t k = read(fd, c, want);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		c += k;
		n -= (size_t)k;
		*bytes += (uint64_t)k;
	}
	return 0;
}

static int consume(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	double rate = atof(argv[3]) * 1e6;
	int fd = open(argv[2], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || rate <= 0)
		return 1;
	struct pmon_trace_disk_header h;
	uint64_t bytes = 0, records = 0, chunks = 0, bad = 0, end_dropped = 0;
	struct tid_drop td[256];
	size_t ntd = 0;
	double t0 = now();
	if (read_full(fd, &h, sizeof(h), rate, t0, &bytes) || memcmp(h.magic, PMON_TRACE_MAGIC, 8))
		return 1;
	size_t cap = 1 << 20;
	unsigned char *buf = malloc(cap);
	for (;;) {
		struct pmon_trace_chunk c;
		if (read_full(fd, &c, sizeof(c), rate, t0, &bytes))
			break;
		if (c.len > cap) {
			free(buf);
			cap = c.len;
			buf = malloc(cap);
		}
		if (!buf || read_full(fd, buf, c.len, rate, t0, &bytes))
			break;
		chunks++;
		if ((uint32_t)crc32(0L, buf, c.len) != c.crc) {
			bad++;
			continue;
		}
		if (!memcmp(c.magic, "TEVT", 4) &&
		    c.len >= sizeof(struct pmon_trace_chunk_events)) {
			struct pmon_trace_chunk_events ce;
			memcpy(&ce, buf, sizeof(ce));
			records += ce.nrec;
			size_t k = 0;
			while (k < ntd && td[k].tid != ce.tid)
				k++;
			if (k == ntd && ntd < 256)
				td[ntd++] = (struct tid_drop){ ce.tid, 0 };
			if (k < ntd && ce.dropped > td[k].dropped)
				td[k].dropped = ce.dropped;
		} else if (!memcmp(c.magic, "TEND", 4) &&
			   c.len >= sizeof(struct pmon_trace_chunk_end)) {
			struct pmon_trace_chunk_end e;
			memcpy(&e, buf, sizeof(e));
			end_dropped = e.dropped;
		}
	}
	uint64_t thread_dropped = 0;
	for (size_t k = 0; k < ntd; k++)
		thread_dropped += td[k].dropped;
	printf("bytes %llu records %llu dropped %llu thread_dropped %llu chunks %llu bad %llu "
	       "seconds %.2f\n",
	       (unsigned long long)bytes, (unsigned long long)records,
	       (unsigned long long)end_dropped, (unsigned long long)thread_dropped,
	       (unsigned long long)chunks, (unsigned long long)bad, now() - t0);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "produce"))
		return produce(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "consume"))
		return consume(argc, argv);
	fprintf(stderr,
		"usage: trace-memory produce floor|pmon|lttng THREADS TOTAL [PATH]\n"
		"       trace-memory consume FIFO MB_PER_S\n");
	return 2;
}
