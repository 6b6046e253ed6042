// SPDX-License-Identifier: MIT
/*
 * The Prometheus / OpenMetrics text the cgroup collector (lib/monitor/
 * collect.c) writes: metric names made from event names, and label values
 * made from any bytes (cgroup paths, event names). libc only, so that the
 * unit tests and the fuzz harness (tests/fuzz/fuzz-serve.c) link it alone.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "monitor/collect.h"

void pmon__prom_metric_name(const char *event, char *out, size_t len)
{
	size_t o = 0;

	if (!len)
		return;
	for (const char *p = event; *p && o + 1 < len; p++) {
		char ch = *p;
		bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			(ch >= '0' && ch <= '9') || ch == '_';
		out[o++] = ok ? ch : '_';
	}
	out[o] = '\0';
}

/*
 * Length of the well-formed UTF-8 sequence at @p (1-4), or 0: The Unicode
 * Standard, section 3.9, table 3-7 (no overlong forms, no surrogates
 * U+D800..DFFF, nothing past U+10FFFF). Prometheus's parser refuses a label
 * value that Go's utf8.ValidString() refuses, which is this rule.
 */
size_t pmon__utf8_len(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 0; /* a continuation byte, C0/C1 (overlong), F5..FF */
	if (p[0] == 0xe0)
		lo = 0xa0; /* overlong below U+0800 */
	else if (p[0] == 0xed)
		hi = 0x9f; /* surrogates */
	else if (p[0] == 0xf0)
		lo = 0x90; /* overlong below U+10000 */
	else if (p[0] == 0xf4)
		hi = 0x8f; /* past U+10FFFF */
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

void pmon__prom_label_escape(const char *s, char *out, size_t len)
{
	size_t o = 0;
	const unsigned char *p = (const unsigned char *)s;

	if (!len)
		return;
	while (*p) {
		char esc[3] = { 0 };
		size_t n = 1, step = 1;
		const char *put;

		if (*p == '\\' || *p == '"' || *p == '\n') {
			esc[0] = '\\';
			esc[1] = *p == '\n' ? 'n' : (char)*p;
			put = esc;
			n = 2;
		} else if (*p < 0x20 || *p == 0x7f || !(n = pmon__utf8_len(p))) {
			put = "?";
			n = 1;
		} else {
			put = (const char *)p;
			step = n;
		}
		if (o + n + 1 > len)
			break;
		memcpy(out + o, put, n);
		o += n;
		p += step;
	}
	out[o] = '\0';
}
