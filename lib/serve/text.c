// SPDX-License-Identifier: MIT
/*
 * pmon serve's request-facing text (lib/serve/serve.h), apart from the HTTP
 * library so that the unit tests and the fuzz harness
 * (tests/fuzz/fuzz-serve.c) link it alone: content negotiation on the Accept
 * header, the numbers of ?seconds= and ?hz=. libc only. (Metric names and
 * label values are the collector's: lib/monitor/prom.c.)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "serve.h"

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
