// SPDX-License-Identifier: MIT
/*
 * pmon serve's request- and label-facing text (cli/serve.h), apart from the
 * collector and the HTTP library so that the unit tests and the fuzz
 * harness (tests/fuzz/fuzz-serve.c) link it alone: content negotiation on
 * the Accept header, the numbers of ?seconds= and ?hz=, metric names made
 * from event names, and label values made from any bytes (cgroup paths,
 * event names). libc only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "serve.h"

void serve_metric_name(const char *event, char *out, size_t len)
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
size_t serve_utf8_len(const unsigned char *p)
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

void serve_label_escape(const char *s, char *out, size_t len)
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
		} else if (*p < 0x20 || *p == 0x7f || !(n = serve_utf8_len(p))) {
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

/* The q value of one Accept item's parameters ("; q=0.5"), 1 without one
 * (RFC 9110 section 12.4.2: a qvalue is 0 to 1, three decimals at most). */
static double accept_q(const char *params, size_t len)
{
	for (size_t i = 0; i + 2 < len; i++) {
		if ((params[i] == 'q' || params[i] == 'Q') && params[i + 1] == '=' &&
		    (i == 0 || params[i - 1] == ';' || params[i - 1] == ' ')) {
			char num[16];
			size_t k = 0;
			for (size_t j = i + 2; j < len && k + 1 < sizeof(num) &&
			     ((params[j] >= '0' && params[j] <= '9') || params[j] == '.');
			     j++)
				num[k++] = params[j];
			num[k] = '\0';
			char *end;
			double q = strtod(num, &end);
			return end == num || q < 0 ? 0 : q > 1 ? 1 : q;
		}
	}
	return 1;
}

bool serve_accept_openmetrics(const char *accept)
{
	double om = -1, text = -1;

	if (!accept)
		return false;
	for (const char *p = accept; *p;) {
		size_t len = strcspn(p, ",");
		const char *semi = memchr(p, ';', len);
		size_t tlen = semi ? (size_t)(semi - p) : len;
		while (tlen && (*p == ' ' || *p == '\t'))
			p++, tlen--, len--;
		while (tlen && (p[tlen - 1] == ' ' || p[tlen - 1] == '\t'))
			tlen--;
		double q = semi ? accept_q(semi + 1, len - (size_t)(semi - p) - 1) : 1;
#define IS(s) (tlen == sizeof(s) - 1 && !strncasecmp(p, s, tlen))
		if (IS("application/openmetrics-text") && q > om)
			om = q;
		else if ((IS("text/plain") || IS("*/*") || IS("text/*")) && q > text)
			text = q;
#undef IS
		p += len;
		if (*p == ',')
			p++;
	}
	return om > 0 && om >= text;
}

bool serve_query_uint(const char *v, unsigned long def, unsigned long max, unsigned long *out)
{
	char *end;

	*out = def;
	if (!v)
		return true;
	if (*v < '0' || *v > '9') /* strtoul() would take spaces and signs */
		return false;
	errno = 0;
	unsigned long n = strtoul(v, &end, 10);
	if (*end || errno || n < 1 || n > max)
		return false;
	*out = n;
	return true;
}
