// SPDX-License-Identifier: MIT
/*
 * Workload with known trace hooks, for pmon trace: NTHREADS threads each
 * run ROUNDS "outer" spans holding two "inner" spans, one "tick" instant
 * per round and one "depth" counter value per round (the last round's a
 * 64-bit value); the main thread adds one "setup" span. So:
 *   outer 2*ROUNDS spans, inner 4*ROUNDS, tick 2*ROUNDS, depth 2*ROUNDS, setup 1;
 * and 5 pairs of the instrumented region "region-a". The threads are named
 * "hooks-1" .. "hooks-NTHREADS" (pthread_setname_np), for their lanes.
 * usage: wl-tracehooks [ROUNDS]   (default 500)
 *
 * wl-tracehooks sleep N: for pmon trace -k, the main thread alone runs N
 * rounds of: "nap" span around a 20 ms nanosleep, then a "write" span
 * around one write(2) of 6 bytes to /dev/null; a "before" instant first and
 * an "after" instant last. The kernel's sched_switch, sched_wakeup and the
 * clock_nanosleep and write system calls must fall inside those spans.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pmon/region.h>
#include <pmon/trace.h>

#define NTHREADS 2

static volatile unsigned long sink;
static long rounds = 500;

static void work(unsigned n)
{
	for (unsigned k = 0; k < n; k++)
		sink += k;
}

static void *thread_main(void *arg)
{
	char name[16];
	snprintf(name, sizeof(name), "hooks-%d", (int)(intptr_t)arg);
	pthread_setname_np(pthread_self(), name);
	for (long i = 0; i < rounds; i++) {
		PMON_TRACE_BEGIN("outer");
		PMON_TRACE_BEGIN("inner");
		work(200);
		PMON_TRACE_END("inner");
		PMON_TRACE_BEGIN("inner");
		work(100);
		PMON_TRACE_END("inner");
		PMON_TRACE_END("outer");
		PMON_TRACE_MARK("tick");
		PMON_TRACE_COUNTER("depth", i + 1 == rounds ? (int64_t)1 << 40 : i);
	}
	return NULL;
}

static int sleeper(long n)
{
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	PMON_TRACE_MARK("before");
	for (long i = 0; i < n; i++) {
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		PMON_TRACE_BEGIN("nap");
		nanosleep(&ts, NULL);
		PMON_TRACE_END("nap");
		PMON_TRACE_BEGIN("write");
		if (write(fd, "hello\n", 6) != 6)
			return 1;
		PMON_TRACE_END("write");
	}
	PMON_TRACE_MARK("after");
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t t[NTHREADS];

	if (argc > 2 && !strcmp(argv[1], "sleep"))
		return sleeper(strtol(argv[2], NULL, 10));
	if (argc > 1)
		rounds = strtol(argv[1], NULL, 10);
	PMON_TRACE_BEGIN("setup");
	work(1000);
	PMON_TRACE_END("setup");
	/* Instrumented regions become spans of a running trace by themselves,
	 * with their events' deltas as counter values. */
	for (int i = 0; i < 5; i++) {
		PMON_REGION_BEGIN("region-a");
		work(500);
		PMON_REGION_END("region-a");
	}
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, thread_main, (void *)(intptr_t)(i + 1));
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	return 0;
}
