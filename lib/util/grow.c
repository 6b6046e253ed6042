// SPDX-License-Identifier: MIT
/*
 * The one grow-by-doubling array (lib/internal.h): every table that grows
 * as it is filled (a reader's chunks, a report's maps and files) grows
 * here, where cap * size is checked for overflow once.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "internal.h"

int pmon__grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap;

	if (need <= n)
		return 0;
	n = n > SIZE_MAX / 2 ? SIZE_MAX : n * 2;
	if (n < need)
		n = need;
	if (n < 16)
		n = 16;
	if (!size || n > SIZE_MAX / size)
		return -ENOMEM;
	void *q = realloc(*p, n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}
