// SPDX-License-Identifier: MIT
/*
 * Well-formed UTF-8, for every writer of text from outside bytes: the
 * Prometheus labels (lib/monitor/prom.c), the flame graph's XML and the
 * trace's JSON, which a viewer's parser refuses whole for one bad byte.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "internal.h"

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

void pmon__fputs_xml(FILE *out, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < max && p[i];) {
		size_t n = pmon__utf8_len(p + i);
		if (n > 1) {
			fwrite(p + i, 1, n, out);
			i += n;
			continue;
		}
		switch (p[i]) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		default: /* XML 1.0's Char: no C0 control, DEL, or stray byte */
			fputc(!n || p[i] < 0x20 || p[i] == 0x7f ? '?' : p[i], out);
		}
		i++;
	}
}

void pmon__fputs_json(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "?");

	fputc('"', out);
	while (*p) {
		size_t n = pmon__utf8_len(p);
		if (n > 1) {
			fwrite(p, 1, n, out);
			p += n;
			continue;
		}
		if (!n)
			fputs("\\ufffd", out); /* RFC 8259 text is UTF-8: a stray byte is U+FFFD */
		else if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
		p++;
	}
	fputc('"', out);
}
