// SPDX-License-Identifier: MIT
/*
 * Example: instrumented regions. Two lines around the code to measure; the
 * events come from the environment (or from pmon stat --regions -e ...):
 *     PMON_EVENTS=task-clock,page-faults ./regions
 *     pmon stat --regions -e task-clock,page-faults -- ./regions
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <pmon/region.h>

static volatile unsigned long sink;

int main(void)
{
	long psz = sysconf(_SC_PAGESIZE);

	for (int i = 0; i < 1000; i++) {
		PMON_REGION_BEGIN("sum-1000");
		for (unsigned long k = 0; k < 1000; k++)
			sink += k;
		PMON_REGION_END("sum-1000");
	}
	for (int i = 0; i < 20; i++) {
		char *p = mmap(NULL, 16 * (size_t)psz, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		madvise(p, 16 * (size_t)psz, MADV_NOHUGEPAGE);
		PMON_REGION_BEGIN("touch-16-pages");
		for (int k = 0; k < 16; k++)
			p[k * psz] = 1;
		PMON_REGION_END("touch-16-pages");
		munmap(p, 16 * (size_t)psz);
	}
	return 0;
}
