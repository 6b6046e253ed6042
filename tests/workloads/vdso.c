// SPDX-License-Identifier: MIT
/*
 * Workload for the vDSO's names: N calls of clock_gettime(CLOCK_MONOTONIC),
 * which the C library answers in the vDSO (where the clock source allows:
 * else each is a system call). Built with frame pointers and symbols.
 * usage: vdso [N]
 */
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 3000000;
	struct timespec t;
	unsigned long sum = 0;

	for (long i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		sum += (unsigned long)t.tv_nsec;
	}
	return sum == 42;
}
