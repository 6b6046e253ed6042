// SPDX-License-Identifier: MIT
/* libFuzzer harness: the /proc/PID/maps line parser pmon record uses for
 * the mappings of the processes it profiles (their paths are whatever the
 * process mapped). Each line of the input is parsed; what parses is printed
 * back as the kernel prints it and must parse to the same fields. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/procmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *save = NULL;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct pmon__maps_line m, m2;
		char again[8192];
		if (pmon__maps_parse_line(line, &m))
			continue;
		if (m.end < m.start || m.name < line || m.name > line + strlen(line))
			__builtin_trap();
		/* show_map_vma()'s format (fs/proc/task_mmu.c) */
		int n = snprintf(again, sizeof(again),
				 "%08" PRIx64 "-%08" PRIx64 " %s %08" PRIx64 " %02x:%02x %" PRIu64
				 "                   %s",
				 m.start, m.end, m.perms, m.pgoff, m.maj, m.min, m.ino, m.name);
		if (n < 0 || (size_t)n >= sizeof(again))
			continue;
		if (pmon__maps_parse_line(again, &m2) || m2.start != m.start || m2.end != m.end ||
		    m2.pgoff != m.pgoff || m2.maj != m.maj || m2.min != m.min || m2.ino != m.ino ||
		    strcmp(m2.perms, m.perms) || strcmp(m2.name, m.name))
			__builtin_trap(); /* what the kernel would print parses back the same */
	}
	free(text);
	return 0;
}
