/* SPDX-License-Identifier: MIT */
/*
 * Private helpers shared by the layers of libpmon: the error-detail string,
 * bounded string helpers, small file readers. Never installed.
 */
#ifndef PMON_INTERNAL_H
#define PMON_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pmon/error.h>

#define PMON_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define PMON_BIT(x, n) (((x) >> (n)) & 1u)
#define PMON_BITS(x, hi, lo) (((x) >> (lo)) & ((1u << ((hi) - (lo) + 1)) - 1u))

/* Record the detail of a failure (printf-style) and return @err unchanged, so
 * error paths read `return pmon__err(-EINVAL, "%s:%d: ...", ...)`. */
__attribute__((format(printf, 2, 3))) int pmon__err(int err, const char *fmt, ...);
__attribute__((format(printf, 1, 2))) void pmon__detail(const char *fmt, ...);
void pmon__clear_detail(void);

/* snprintf that always terminates and reports truncation as false. */
__attribute__((format(printf, 3, 4))) bool pmon__fmt(char *buf, size_t len, const char *fmt, ...);
/* Bounded copy that always terminates. */
void pmon__strlcpy(char *dst, const char *src, size_t len);

/* Read a whole small file (up to len-1 bytes), trailing newline removed.
 * Return: bytes read, or -errno. */
long pmon__read_text(const char *path, char *buf, size_t len);
/* Read a file holding one decimal integer. Return: 0 or -errno / -EINVAL. */
int pmon__read_long(const char *path, long *out);
/* strtoul-based parsing with full error checks. Return: 0 or -EINVAL/-ERANGE. */
int pmon__parse_u64(const char *s, int base, uint64_t *out);

#endif
