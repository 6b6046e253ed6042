/* SPDX-License-Identifier: MIT */
/*
 * One line of /proc/PID/maps (proc(5)): "START-END PERMS OFFSET MAJ:MIN INODE
 * [PATH]", parsed strictly; private to libpmon
 * (lib/util/procmaps.c) and its sibling libpmon-report.
 */
#ifndef PMON_UTIL_PROCMAPS_H
#define PMON_UTIL_PROCMAPS_H

#include <stdint.h>

struct pmon__maps_line {
	uint64_t start, end, pgoff, ino;
	unsigned maj, min;
	char perms[5]; /* "r-xp" */
	char *name; /* into the line, newline removed; "" for an anonymous mapping */
};

#pragma GCC visibility push(default) /* libpmon-report's live profile reads them too */

/*
 * pmon__maps_parse_line() - parse @line in place (the name's end is cut).
 * Return: 0, or -EINVAL for a line that is not a maps line (a fragment of
 * one too long for the caller's buffer, garbage, end before start).
 */
int pmon__maps_parse_line(char *line, struct pmon__maps_line *m);

#pragma GCC visibility pop

#endif
