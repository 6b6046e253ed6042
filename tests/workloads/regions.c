// SPDX-License-Identifier: MIT
/*
 * Workload instrumented with pmon's region API, for `pmon stat --regions`:
 * "faults" touches exactly 16 fresh pages per pair, "outer" holds two
 * "inner" pairs, "mt" runs in T threads.
 * It calls setlocale(LC_ALL, "") as programs do: the report must not follow.
 * usage: regions PAIRS [THREADS]
 */
#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <pmon/region.h>

static volatile unsigned long sink;
static long pairs;

/* Not instrumented by ASan: its shadow memory would fault too. */
__attribute__((no_sanitize_address)) static void touch16(char *p, long psz)
{
	for (int k = 0; k < 16; k++)
		p[k * psz] = 1;
}

static void *worker(void *arg)
{
	(void)arg;
	for (long i = 0; i < pairs; i++) {
		PMON_REGION_BEGIN("mt");
		sink++;
		PMON_REGION_END("mt");
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long psz = sysconf(_SC_PAGESIZE);
	long threads = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
	pthread_t th[64];

	setlocale(LC_ALL, "");
	pairs = argc > 1 ? strtol(argv[1], NULL, 10) : 100;
	if (pairs <= 0 || threads < 0 || threads > 64) {
		fprintf(stderr, "usage: regions PAIRS [THREADS]\n");
		return 2;
	}
	for (long i = 0; i < pairs; i++) {
		char *p = mmap(NULL, 16 * (size_t)psz, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		madvise(p, 16 * (size_t)psz, MADV_NOHUGEPAGE);
		PMON_REGION_BEGIN("faults");
		touch16(p, psz);
		PMON_REGION_END("faults");
		munmap(p, 16 * (size_t)psz);

		PMON_REGION_BEGIN("outer");
		for (int k = 0; k < 2; k++) {
			PMON_REGION_BEGIN("inner");
			for (int j = 0; j < 100; j++)
				sink += (unsigned long)j;
			PMON_REGION_END("inner");
		}
		PMON_REGION_END("outer");
	}
	for (long t = 0; t < threads; t++)
		pthread_create(&th[t], NULL, worker, NULL);
	for (long t = 0; t < threads; t++)
		pthread_join(th[t], NULL);
	return 0;
}
