// SPDX-License-Identifier: MIT
/*
 * The list parser for pids, tids and CPUs, "0-3,5" (the syntax of
 * /sys/devices/system/cpu/online, of a PMU's cpus file and of perf's -C, -p,
 * -t). Support layer: sysfs readers in the layers below lib/monitor use it
 * (lib/event/pmu.c), and pmon_idlist__parse() (lib/monitor/target.c,
 * pmon/monitor.h) exports it unchanged (issue #25).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

static int bad_list(const char *s, const char *why)
{
	return pmon__err(-EINVAL, "'%s' is not a valid list (e.g. 1,3-5)%s%s", s, why ? ": " : "",
			 why ? why : "");
}

/* One number of a list: digits only (no sign, no blanks), at most @max. */
static int number(const char **p, long max, long *v)
{
	char *end;

	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	errno = 0;
	*v = strtol(*p, &end, 10);
	if (errno || *v > max)
		return -ERANGE;
	*p = end;
	return 0;
}

int pmon__idlist_parse(const char *s, long max, long **out, size_t *n)
{
	long *v = NULL;
	size_t cap = 0, cnt = 0;
	const char *p = s;

	pmon__clear_detail();
	*out = NULL;
	*n = 0;
	if (!s || !*s)
		return pmon__err(-EINVAL, "the list is empty");
	for (;;) {
		long a, b;
		int err = number(&p, max, &a);

		if (!err) {
			b = a;
			if (*p == '-') {
				p++;
				err = number(&p, max, &b);
			}
		}
		if (err == -ERANGE) {
			free(v);
			char why[64];
			pmon__fmt(why, sizeof(why), "above the largest, %ld", max);
			return bad_list(s, why);
		}
		if (err || (*p && *p != ',')) {
			free(v);
			return bad_list(s, *p == ',' || !*p ? "an empty item" : NULL);
		}
		if (b < a) {
			free(v);
			return bad_list(s, "a range runs backwards");
		}
		for (long x = a; x <= b; x++) {
			if (PMON_GROW(&v, &cap, cnt + 1)) {
				free(v);
				return -ENOMEM;
			}
			v[cnt++] = x;
		}
		if (!*p)
			break;
		p++; /* the comma: an item must follow */
	}
	*out = v;
	*n = cnt;
	return 0;
}
