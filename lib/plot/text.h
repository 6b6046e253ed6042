/* SPDX-License-Identifier: MIT */
/*
 * Text handed to cairo by libpmon-plot (lib/plot/plot.c, lib/plot/trace.c).
 * Names come from outside (an interval log, a traced program's channels):
 * cairo refuses a string that is not valid UTF-8 as it decodes it, and its
 * context then stays in an error state, so the whole picture is lost.
 */
#ifndef PMON_PLOT_TEXT_H
#define PMON_PLOT_TEXT_H

#include <stddef.h>

/*
 * pmon__plot_clean_text() - @in into @out (@len bytes, always terminated):
 * a byte that does not start a character cairo accepts becomes '?', as do
 * control characters. cairo's rule (cairo-unicode.c, UNICODE_VALID and the
 * shortest-form check of _utf8_get_char_extended): no overlong forms, no
 * surrogates (U+D800..DFFF), nothing past U+10FFFF, and no noncharacters
 * (U+FDD0..FDEF, U+xxFFFE, U+xxFFFF). A character never is cut in two.
 */
void pmon__plot_clean_text(const char *in, char *out, size_t len);

#endif
