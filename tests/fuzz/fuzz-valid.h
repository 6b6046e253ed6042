/* SPDX-License-Identifier: MIT */
/*
 * In-harness validators of the text exports (issue #31): whatever bytes a
 * recording or trace holds, a JSON export must parse (jansson, which the
 * core links, and which refuses ill-formed UTF-8) and an SVG must be
 * well-formed XML 1.0: well-formed UTF-8, no control character XML
 * forbids, tags balanced, attribute values quoted, no raw '<' in them, and
 * every '&' one of the five predefined entities or a character reference
 * (CDATA sections, comments and declarations skipped whole).
 * Not a full XML parser: what an SVG writer can get wrong, checked strictly.
 * A failure prints what and where, then aborts: libFuzzer keeps the input.
 */
#ifndef PMON_FUZZ_VALID_H
#define PMON_FUZZ_VALID_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem() */
#endif
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The length of the well-formed UTF-8 sequence at @p (RFC 3629: no
 * overlong forms, no surrogates, nothing past U+10FFFF), or 0. */
static inline size_t fuzz_utf8_seq(const unsigned char *p, size_t left)
{
	unsigned c = p[0];
	size_t n = c < 0x80		 ? 1
		: c >= 0xc2 && c <= 0xdf ? 2
		: c >= 0xe0 && c <= 0xef ? 3
		: c >= 0xf0 && c <= 0xf4 ? 4
					 : 0;
	if (!n || n > left)
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f) ||
	    (c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] > 0x8f))
		return 0;
	return n;
}

static inline void fuzz_invalid(const char *what, const char *why, const char *buf, size_t n,
				size_t at)
{
	size_t from = at > 40 ? at - 40 : 0;
	fprintf(stderr, "%s: %s at byte %zu: '%.*s'\n", what, why, at,
		(int)((n - from) < 80 ? n - from : 80), buf + from);
	abort();
}

static inline void fuzz_check_utf8(const char *what, const char *buf, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t k = fuzz_utf8_seq((const unsigned char *)buf + i, n - i);
		if (!k)
			fuzz_invalid(what, "ill-formed UTF-8", buf, n, i);
		i += k;
	}
}

/* @n bytes of @what must be one JSON document. */
static inline void fuzz_check_json(const char *what, const char *buf, size_t n)
{
	json_error_t e;

	fuzz_check_utf8(what, buf, n);
	/* a count past INT64_MAX is still JSON (RFC 8259 sets no bound) */
	json_t *j = json_loadb(buf, n, JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &e);
	if (!j)
		fuzz_invalid(what, e.text, buf, n, (size_t)(e.position > 0 ? e.position : 0));
	json_decref(j);
}

/* A reference at @p ('&'): its length through ';', or 0 if none is valid. */
static inline size_t fuzz_xml_ref(const char *p, size_t left)
{
	static const char *const ent[] = { "&lt;", "&gt;", "&amp;", "&quot;", "&apos;" };
	for (size_t i = 0; i < 5; i++)
		if (left >= strlen(ent[i]) && !memcmp(p, ent[i], strlen(ent[i])))
			return strlen(ent[i]);
	size_t i = 1, digits = 0;
	bool hex = false;
	if (i >= left || p[i++] != '#')
		return 0;
	if (i < left && p[i] == 'x')
		hex = true, i++;
	for (; i < left &&
	     (hex ? strchr("0123456789abcdefABCDEF", p[i]) != NULL : p[i] >= '0' && p[i] <= '9') &&
	     p[i];
	     i++)
		digits++;
	return digits && i < left && p[i] == ';' ? i + 1 : 0;
}

static inline bool fuzz_xml_name_char(char c)
{
	return c && !strchr(" \t\r\n/>=<\"'&", c);
}

/* @n bytes of @what must be a well-formed XML document (see above). */
static inline void fuzz_check_xml(const char *what, const char *buf, size_t n)
{
	enum { DEPTH = 4096 };
	static size_t open_at[DEPTH], open_len[DEPTH];
	size_t depth = 0, roots = 0;

	fuzz_check_utf8(what, buf, n);
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)buf[i];
		if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
			fuzz_invalid(what, "a control character XML forbids", buf, n, i);
		if (c == '&') {
			size_t k = fuzz_xml_ref(buf + i, n - i);
			if (!k)
				fuzz_invalid(what, "a raw '&'", buf, n, i);
			i += k;
			continue;
		}
		if (c != '<') {
			i++;
			continue;
		}
		static const struct {
			const char *open, *close;
		} skip[] = {
			{ "<?", "?>" }, { "<!--", "-->" }, { "<![CDATA[", "]]>" }, { "<!", ">" }
		};
		bool skipped = false;
		for (size_t s = 0; s < 4 && !skipped; s++) {
			size_t ol = strlen(skip[s].open);
			if (n - i < ol || memcmp(buf + i, skip[s].open, ol))
				continue;
			const char *e = memmem(buf + i + ol, n - i - ol, skip[s].close,
					       strlen(skip[s].close));
			if (!e)
				fuzz_invalid(what, "an unclosed declaration or comment", buf, n, i);
			i = (size_t)(e - buf) + strlen(skip[s].close);
			skipped = true;
		}
		if (skipped)
			continue;
		bool closing = i + 1 < n && buf[i + 1] == '/';
		size_t name = i + 1 + closing, len = 0;
		while (name + len < n && fuzz_xml_name_char(buf[name + len]))
			len++;
		if (!len)
			fuzz_invalid(what, "a tag without a name", buf, n, i);
		i = name + len;
		if (closing) {
			while (i < n && strchr(" \t\r\n", buf[i]))
				i++;
			if (i >= n || buf[i] != '>' || !depth || open_len[depth - 1] != len ||
			    memcmp(buf + open_at[depth - 1], buf + name, len))
				fuzz_invalid(what, "an end tag that closes no open tag", buf, n,
					     name);
			depth--;
			i++;
			continue;
		}
		for (;;) { /* attributes */
			while (i < n && strchr(" \t\r\n", buf[i]) && buf[i])
				i++;
			if (i < n && buf[i] == '>') {
				if (depth == DEPTH)
					fuzz_invalid(what, "tags nested too deep", buf, n, i);
				if (!depth)
					roots++;
				open_at[depth] = name, open_len[depth++] = len;
				i++;
				break;
			}
			if (i + 1 < n && buf[i] == '/' && buf[i + 1] == '>') {
				roots += !depth;
				i += 2;
				break;
			}
			size_t an = 0;
			while (i + an < n && fuzz_xml_name_char(buf[i + an]))
				an++;
			i += an;
			if (!an || i + 1 >= n || buf[i] != '=' ||
			    (buf[i + 1] != '"' && buf[i + 1] != '\''))
				fuzz_invalid(what, "an attribute that is not name=\"value\"", buf,
					     n, i);
			char q = buf[i + 1];
			for (i += 2; i < n && buf[i] != q; i++) {
				c = (unsigned char)buf[i];
				if (c == '<' || (c < 0x20 && c != '\t' && c != '\n' && c != '\r'))
					fuzz_invalid(what, "a '<' or control character in a value",
						     buf, n, i);
				if (c == '&') {
					size_t k = fuzz_xml_ref(buf + i, n - i);
					if (!k)
						fuzz_invalid(what, "a raw '&' in a value", buf, n,
							     i);
					i += k - 1;
				}
			}
			if (i >= n)
				fuzz_invalid(what, "an unterminated attribute value", buf, n, i);
			i++;
		}
	}
	if (depth || roots != 1)
		fuzz_invalid(what, depth ? "tags left open" : "not one root element", buf, n, n);
}

#endif
