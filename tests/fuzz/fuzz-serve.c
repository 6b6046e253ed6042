// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for what pmon serve reads from a client or from the
 * host's names (cli/serve-text.c): the Accept header (content negotiation),
 * the values of ?seconds= and ?hz=, metric names made from event names, and
 * label values made from any bytes (a cgroup directory's path, an event
 * name). Property: whatever the bytes, the metric line the writer makes of
 * them parses under the Prometheus text format's grammar (checked by a small
 * validator here, written from the format's description, not from the
 * writer): a legal metric name, label values with only \\, \" and \n
 * escapes and no raw newline, well-formed UTF-8 (Go's utf8.ValidString(),
 * which Prometheus's parser applies). And escaping is lossless for a clean
 * value: unescaped, it gives the bytes back.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "serve/serve.h"
#include "monitor/collect.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz-serve: %s:%d: %s\n", __FILE__, __LINE__, #cond);     \
			__builtin_trap();                                                          \
		}                                                                                  \
	} while (0)

/* Well-formed UTF-8, decoded to code points (RFC 3629 section 4's grammar). */
static bool utf8_ok(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned c = s[i], cp, k;
		if (c < 0x80) {
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0)
			k = 1, cp = c & 0x1f;
		else if ((c & 0xf0) == 0xe0)
			k = 2, cp = c & 0x0f;
		else if ((c & 0xf8) == 0xf0)
			k = 3, cp = c & 0x07;
		else
			return false;
		for (unsigned j = 1; j <= k; j++) {
			if (i + j >= n || (s[i + j] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + j] & 0x3f);
		}
		static const unsigned min[] = { 0, 0x80, 0x800, 0x10000 };
		if (cp < min[k] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += k + 1;
	}
	return true;
}

static bool name_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}

static bool name_char(char c)
{
	return name_start(c) || (c >= '0' && c <= '9');
}

/*
 * One sample line of the text format 0.0.4: name{l="v",...} value\n. The
 * label values unescaped into @vals (NUL-separated, at most @vlen bytes).
 * Return: true when it parses.
 */
static bool parse_line(const char *l, char *vals, size_t vlen)
{
	const char *p = l;
	size_t v = 0;

	if (!name_start(*p))
		return false;
	while (name_char(*p))
		p++;
	if (*p == '{') {
		p++;
		while (*p != '}') {
			if (!name_start(*p) || *p == ':')
				return false;
			while (name_char(*p) && *p != ':')
				p++;
			if (*p++ != '=' || *p++ != '"')
				return false;
			const char *start = p;
			while (*p != '"') {
				char ch = *p;
				if (!ch || ch == '\n')
					return false;
				if (ch == '\\') {
					p++;
					if (*p != '\\' && *p != '"' && *p != 'n')
						return false;
					ch = *p == 'n' ? '\n' : *p;
				}
				if (v + 1 >= vlen)
					return false;
				vals[v++] = ch;
				p++;
			}
			if (!utf8_ok((const unsigned char *)start, (size_t)(p - start)))
				return false;
			vals[v++] = '\0';
			p++;
			if (*p == ',')
				p++;
			else if (*p != '}')
				return false;
		}
		p++;
	}
	if (*p++ != ' ')
		return false;
	char *end;
	strtod(p, &end);
	return end != p && end[0] == '\n' && !end[1];
}

/* Clean: what escaping keeps as it is (no control bytes but '\n', UTF-8). */
static bool clean(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if ((*p < 0x20 && *p != '\n') || *p == 0x7f)
			return false;
	return utf8_ok((const unsigned char *)s, strlen(s));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s, esc[8192], name[512], line[9000], vals[9000];
	unsigned long n;

	if (size < 1 || size > 2048)
		return 0;
	s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1); /* data[0] picks a buffer size below */
	s[size - 1] = '\0';

	/* Accept: any header; OpenMetrics only when it is named. */
	if (serve_accept_openmetrics(s)) {
		bool named = false;
		for (const char *p = s; *p && !named; p++)
			named = !strncasecmp(p, "application/openmetrics-text", 28);
		CHECK(named);
	}

	/* ?seconds= and ?hz=: in range when taken, and only digits. */
	unsigned long max = (unsigned long)data[0] * 13 + 1;
	if (serve_query_uint(s, 10, max, &n)) {
		CHECK(n >= 1 && n <= max);
		CHECK(s[0] && strspn(s, "0123456789") == strlen(s));
	}
	CHECK(serve_query_uint(NULL, 7, max, &n) && n == 7);

	/* A metric name of an event name: pmon_ + [a-zA-Z0-9_]. */
	pmon__prom_metric_name(s, name, sizeof(name));
	char full[600];
	snprintf(full, sizeof(full), "pmon_%s_total", name);
	for (const char *p = full; *p; p++)
		CHECK(name_char(*p) && *p != ':');

	/* A label value from any bytes, into a buffer of any size: the line
	 * parses, and a clean value that was not cut comes back as it was. */
	size_t blen = data[0] == 0xff ? sizeof(esc) : (size_t)data[0] % 64;
	memset(esc, 'X', sizeof(esc));
	pmon__prom_label_escape(s, esc, blen);
	if (blen) {
		CHECK(memchr(esc, '\0', blen));
		CHECK(utf8_ok((const unsigned char *)esc, strlen(esc)));
	} else {
		CHECK(esc[0] == 'X'); /* nothing written */
		pmon__prom_label_escape(s, esc, sizeof(esc));
	}
	snprintf(line, sizeof(line), "%s{cpu=\"0\",cgroup=\"%s\",event=\"%s\"} 1.5\n", full, esc,
		 esc);
	CHECK(parse_line(line, vals, sizeof(vals)));
	CHECK(!strcmp(vals, "0"));
	if (blen == sizeof(esc) && clean(s)) {
		const char *cg = vals + 2;
		CHECK(!strcmp(cg, s));
		CHECK(!strcmp(cg + strlen(cg) + 1, s));
	}
	free(s);
	return 0;
}
