// SPDX-License-Identifier: MIT
/* Text for XML documents (the SVG that pmon plot writes). */
#include <stdbool.h>
#include <stdio.h>

#include "internal.h"

/* @s as XML character data: markup escaped, controls and invalid UTF-8 '?'. */
void pmon__xml_text(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "?");
	while (*p) {
		unsigned c = *p;
		size_t n = c < 0x80	     ? 1
			: (c & 0xe0) == 0xc0 ? 2
			: (c & 0xf0) == 0xe0 ? 3
			: (c & 0xf8) == 0xf0 ? 4
					     : 0;
		bool ok = n > 0 && !(n == 2 && c < 0xc2) && !(n == 4 && c > 0xf4);
		for (size_t i = 1; ok && i < n; i++)
			ok = (p[i] & 0xc0) == 0x80;
		if (!ok) {
			fputc('?', f);
			p++;
			continue;
		}
		if (n > 1) {
			fwrite(p, 1, n, f);
			p += n;
			continue;
		}
		switch (c) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&apos;", f);
			break;
		default:
			fputc(c < 0x20 || c == 0x7f ? '?' : (int)c, f);
		}
		p++;
	}
}
