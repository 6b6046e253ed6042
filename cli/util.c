// SPDX-License-Identifier: MIT
/*
 * Helpers shared by the subcommands: one-line errors, number parsing, output
 * files. Everything that touches the machine goes through libpmon instead.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "cli.h"

__attribute__((format(printf, 2, 0))) static void vmsg(const char *prefix, const char *fmt,
						       va_list ap)
{
	char buf[1024];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	/* Mask control characters (a garbage file's bytes must not drive the
	 * terminal); bytes >= 0x80 pass, so UTF-8 file names stay readable. */
	for (char *p = buf; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	fflush(stdout);
	fprintf(stderr, "pmon: %s%s\n", prefix, buf);
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

bool cli_parse_uint(const char *s, unsigned long max, const char *what, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!s || !isdigit((unsigned char)*s)) {
		cli_error("%s '%s' is not a non-negative integer", what, s ? s : "");
		return false;
	}
	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end) {
		cli_error("%s '%s' is not a non-negative integer", what, s);
		return false;
	}
	if (v > max) {
		cli_error("%s %lu is too large (at most %lu)", what, v, max);
		return false;
	}
	*out = v;
	return true;
}

FILE *cli_open_output(const char *path)
{
	FILE *f;

	if (!path || !strcmp(path, "-"))
		return stdout;
	f = fopen(path, "we");
	if (!f)
		cli_error("cannot write '%s': %s", path, strerror(errno));
	return f;
}

int cli_close_output(FILE *f, const char *path)
{
	bool bad = ferror(f) != 0;

	if (f == stdout) {
		bad |= fflush(f) != 0;
	} else {
		bad |= fclose(f) != 0;
	}
	if (bad) {
		cli_error("write error on '%s': %s", path ? path : "standard output",
			  strerror(errno ? errno : EIO));
		return CLI_FAIL;
	}
	return CLI_OK;
}

int cli_parse_u64(const char *s, int base, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno == ERANGE)
		return -ERANGE;
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}
