// SPDX-License-Identifier: MIT
/*
 * Workload for pmon simulate --regions (tests/cli/t1910-simulate-regions.sh):
 * "alpha" runs spin(A) in each of PAIRS pairs, "beta" spin(B) once, nested
 * "alpha" inside it; outside(), a hot loop of 1,000,000 trips, runs outside
 * every region, so a simulation of the regions only must read zero there.
 * usage: simregions PAIRS A B
 */
#include <stdio.h>
#include <stdlib.h>

#include <pmon/region.h>

void spin(unsigned long n);
void outside(void);

/* dec + jnz per trip, as in simloop.c: 2 instructions a trip. */
__attribute__((noinline)) void spin(unsigned long n)
{
	__asm__ volatile("1:\n\tdec %0\n\tjnz 1b" : "+r"(n) : : "cc");
}

/* Its own loop, so that its instructions are its own symbol's. */
__attribute__((noinline)) void outside(void)
{
	unsigned long n = 1000000;

	__asm__ volatile("1:\n\tdec %0\n\tjnz 1b" : "+r"(n) : : "cc");
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: simregions PAIRS A B\n");
		return 2;
	}
	long pairs = strtol(argv[1], NULL, 10);
	unsigned long a = strtoul(argv[2], NULL, 10), b = strtoul(argv[3], NULL, 10);

	outside();
	for (long i = 0; i < pairs; i++) {
		PMON_REGION_BEGIN("alpha");
		spin(a);
		PMON_REGION_END("alpha");
	}
	outside();
	PMON_REGION_BEGIN("beta");
	spin(b);
	PMON_REGION_BEGIN("alpha"); /* nested: beta keeps collecting */
	spin(a);
	PMON_REGION_END("alpha");
	PMON_REGION_END("beta");
	outside();
	return 0;
}
