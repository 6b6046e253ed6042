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

#include "internal.h"
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
