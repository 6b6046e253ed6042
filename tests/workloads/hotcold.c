// SPDX-License-Identifier: MIT
/*
 * Workload for sampling (frame pointers, symbols, never instrumented): hot()
 * runs 70% of the iterations, cold() 30%, both 64-byte aligned (one loop
 * layout ran 53/47 here). usage: hotcold [N] [cold] [LOOPS] ("cold": 30% hot,
 * 70% cold, pmon diff's other side; LOOPS rounds of both, 10: pmon top -f)
 */
#include <stdlib.h>

static volatile unsigned long sink;

static __attribute__((noinline, aligned(64))) void hot(long n)
{
	for (long i = 0; i < n; i++)
		sink += (unsigned long)i * 3;
}

static __attribute__((noinline, aligned(64))) void cold(long n)
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
