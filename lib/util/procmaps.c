// SPDX-License-Identifier: MIT
/*
 * /proc/PID/maps lines (proc(5), show_map_vma() in fs/proc/task_mmu.c:
 * "%08lx-%08lx %c%c%c%c %08llx %02x:%02x %lu " then the padded path). The
 * file belongs to a process pmon may not trust (its paths are whatever it
 * mapped), so the numbers are parsed strictly, without scanf.
 */
#include <errno.h>
#include <string.h>

#include "util/procmaps.h"

/* Parse digits of @base (10 or 16) at *@p; at least one, no overflow. */
static int num(char **p, unsigned base, uint64_t *out)
{
	uint64_t v = 0;
	char *s = *p;

	for (;; s++) {
		unsigned d;
		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && (*s | 0x20) >= 'a' && (*s | 0x20) <= 'f')
			d = (unsigned)((*s | 0x20) - 'a' + 10);
		else
			break;
		if (v > (UINT64_MAX - d) / base)
			return -EINVAL;
		v = v * base + d;
	}
	if (s == *p)
		return -EINVAL;
	*out = v;
	*p = s;
	return 0;
}

static int expect(char **p, char c)
{
	if (**p != c)
		return -EINVAL;
	(*p)++;
	return 0;
}

int pmon__maps_parse_line(char *line, struct pmon__maps_line *m)
{
	char *p = line;
	uint64_t maj, min;

	memset(m, 0, sizeof(*m));
	if (num(&p, 16, &m->start) || expect(&p, '-') || num(&p, 16, &m->end) || expect(&p, ' '))
		return -EINVAL;
	for (int i = 0; i < 4; i++, p++) {
		if (!*p || !strchr(i == 3 ? "ps" : i == 2 ? "x-" : i == 1 ? "w-" : "r-", *p))
			return -EINVAL;
		m->perms[i] = *p;
	}
	if (expect(&p, ' ') || num(&p, 16, &m->pgoff) || expect(&p, ' ') || num(&p, 16, &maj) ||
	    expect(&p, ':') || num(&p, 16, &min) || expect(&p, ' ') || num(&p, 10, &m->ino))
		return -EINVAL;
	if (m->end < m->start || maj > 0xfff || min > 0xfffff)
		return -EINVAL;
	m->maj = (unsigned)maj;
	m->min = (unsigned)min;
	if (*p && *p != ' ' && *p != '\n')
		return -EINVAL;
	while (*p == ' ')
		p++;
	m->name = p;
	p[strcspn(p, "\n")] = '\0';
	return 0;
}
