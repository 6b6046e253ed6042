// SPDX-License-Identifier: MIT
/*
 * Workload for sampling: hot() runs 70% of the iterations, cold() 30%.
 * Built with frame pointers and symbols, never instrumented.
 * usage: hotcold [N] [cold|hot] [LOOPS]  ("cold": the shares swapped, 30% hot,
 * 70% cold, the other side of pmon diff's test; LOOPS rounds of hot then
 * cold, 10 by default: many short rounds keep the 70/30 split within any
 * interval a live view takes, pmon top's functions)
 */
#include <stdlib.h>

static volatile unsigned long sink;

static __attribute__((noinline)) void hot(long n)
{
	for (long i = 0; i < n; i++)
		sink += (unsigned long)i * 3;
}

static __attribute__((noinline)) void cold(long n)
{
	for (long i = 0; i < n; i++)
		sink += (unsigned long)i * 5;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 30000000;
	int swap = argc > 2 && argv[2][0] == 'c';
	long loops = argc > 3 ? strtol(argv[3], NULL, 10) : 10;

	for (long k = 0; k < loops; k++) {
		hot(n * (swap ? 3 : 7) / 10);
		cold(n * (swap ? 7 : 3) / 10);
	}
	return 0;
}
