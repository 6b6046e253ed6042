// SPDX-License-Identifier: MIT
/*
 * Outside text made safe for cairo (lib/plot/text.h): pmon plot's series
 * names and the trace timeline's channel names and command line.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "plot/text.h"

/* The code point of the character at @p (@n bytes, 1..4), or UINT32_MAX
 * where cairo would refuse it. */
static uint32_t decode(const unsigned char *p, size_t n)
{
	static const uint32_t first_mask[5] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
	static const uint32_t least[5] = { 0, 0, 0x80, 0x800, 0x10000 };
	uint32_t c = p[0] & first_mask[n];

	for (size_t k = 1; k < n; k++) {
		if ((p[k] & 0xc0) != 0x80)
			return UINT32_MAX;
		c = c << 6 | (p[k] & 0x3f);
	}
	if (c < least[n] || c > 0x10ffff || (c & 0xfffff800) == 0xd800 ||
	    (c >= 0xfdd0 && c <= 0xfdef) || (c & 0xfffe) == 0xfffe)
		return UINT32_MAX;
	return c;
}

void pmon__plot_clean_text(const char *in, char *out, size_t len)
{
	const unsigned char *p = (const unsigned char *)(in ? in : "");
	size_t o = 0;

	if (!len)
		return;
	while (*p) {
		size_t n = *p < 0x80	      ? 1
			: (*p & 0xe0) == 0xc0 ? 2
			: (*p & 0xf0) == 0xe0 ? 3
			: (*p & 0xf8) == 0xf0 ? 4
					      : 0;
		/* the bytes of a character are all there before the NUL: a
		 * continuation byte is never 0, and decode() stops at one that
		 * is not a continuation */
		uint32_t c = n ? decode(p, n) : UINT32_MAX;
		bool ok = c != UINT32_MAX && c >= 0x20 && c != 0x7f;
		size_t w = ok ? n : 1;

		if (o + w >= len)
			break;
		if (ok)
			memcpy(out + o, p, n);
		else
			out[o] = '?';
		o += w;
		p += ok ? n : 1;
	}
	out[o] = '\0';
}
