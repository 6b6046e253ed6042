// SPDX-License-Identifier: MIT
/* libFuzzer harness: a JIT's /tmp/perf-PID.map ("START SIZE name" lines, hex,
 * what pmon report reads for JIT code) on arbitrary bytes, then lookups of
 * addresses below, inside and past what it read. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pmon__jit_sym *s = NULL;
	FILE *f = fmemopen((void *)data, size ? size : 1, "r");

	if (!f)
		return 0;
	size_t n = size ? pmon__perf_map_parse(f, &s) : 0;
	fclose(f);
	for (size_t i = 0; i < n; i++) {
		if (i && s[i - 1].start > s[i].start)
			__builtin_trap(); /* lookups need them sorted */
		if (s[i].end <= s[i].start || strchr(s[i].name, '\n'))
			__builtin_trap(); /* a non-empty range, one line's name */
	}
	uint64_t probe[] = { 0,
			     1,
			     UINT64_MAX,
			     n ? s[0].start : 0,
			     n ? s[n - 1].end : 0,
			     n ? s[n / 2].start + 1 : 0 };
	for (size_t i = 0; i < sizeof(probe) / sizeof(probe[0]); i++) {
		const char *name = pmon__perf_map_find(s, n, probe[i]);
		int inside = 0;
		for (size_t k = 0; k < n && !inside; k++)
			inside = s[k].start <= probe[i] && probe[i] < s[k].end;
		if (name && !inside)
			__builtin_trap(); /* a name only for an address some entry holds */
	}
	for (size_t i = 0; i < n; i++)
		free(s[i].name);
	free(s);
	return 0;
}
