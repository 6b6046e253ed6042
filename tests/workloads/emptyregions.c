// SPDX-License-Identifier: MIT
/*
 * Workload of empty regions, for the overhead subtraction (t1102): PAIRS
 * back-to-back PMON_REGION_BEGIN/END("empty") pairs with nothing between
 * them, whose cost after the subtraction is 0 within the overhead's error.
 * usage: emptyregions PAIRS
 */
#include <stdio.h>
#include <stdlib.h>

#include <pmon/region.h>

int main(int argc, char **argv)
{
	long pairs = argc > 1 ? strtol(argv[1], NULL, 10) : 0;

	if (argc != 2 || pairs <= 0) {
		fprintf(stderr, "usage: emptyregions PAIRS\n");
		return 2;
	}
	for (long i = 0; i < pairs; i++) {
		PMON_REGION_BEGIN("empty");
		PMON_REGION_END("empty");
	}
	return 0;
}
