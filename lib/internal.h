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

/* Kernel text symbols of a kallsyms file (lib/util/ksyms.c), by address. */
struct pmon__ksym {
	uint64_t addr;
	const char *name; /* points into ->text */
};
struct pmon__ksyms {
	struct pmon__ksym *sym;
	size_t n;
	char *text;
};
/* Return: 0 (no symbols where kptr_restrict shows zeros), or -errno. */
int pmon__ksyms_load(const char *path, struct pmon__ksyms *k);
/* The symbol holding @ip, or NULL; *@end: where the next symbol starts. */
const struct pmon__ksym *pmon__ksyms_find(const struct pmon__ksyms *k, uint64_t ip, uint64_t *end);
void pmon__ksyms_free(struct pmon__ksyms *k);

#endif
