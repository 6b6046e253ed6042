// SPDX-License-Identifier: MIT
/*
 * Kernel text symbols from a kallsyms file ("ADDR TYPE NAME [module]" per
 * line, hex): read in one go and parsed in place (no scanf, no allocation
 * per name); /proc/kallsyms is ~120,000 lines and already nearly sorted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static int cmp_sym(const void *a, const void *b)
{
	const struct pmon__ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)(c | 0x20);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* One kallsyms line ("ADDR TYPE NAME [module]"): a text symbol's address
 * into *@addr and its name's bytes into *@name, *@nlen; false for others. */
static bool parse_line(const char *line, const char *nl, uint64_t *addr, const char **name,
		       size_t *nlen)
{
	int v;

	*addr = 0;
	while (line < nl && (v = hexval(*line)) >= 0)
		*addr = *addr << 4 | (uint64_t)v, line++;
	/* " T name" (text symbols only; weak ones too) */
	if (!*addr || nl - line < 4 || line[0] != ' ' || !strchr("tTwW", line[1]) || !line[1] ||
	    line[2] != ' ')
		return false;
	const char *n = line + 3, *ne = n;
	/* a NUL ends the name too: the file may hold any bytes */
	while (ne < nl && *ne && *ne != '\t' && *ne != ' ')
		ne++;
	*name = n;
	*nlen = (size_t)(ne - n);
	return ne > n;
}

/* Append a symbol: its name into the pool at an offset, kept in ->name
 * as that offset until the pool stops moving. Return: 0 or -ENOMEM. */
static int add_sym(struct pmon__ksyms *k, size_t *cap_sym, size_t *used, size_t *cap_text,
		   uint64_t addr, const char *name, size_t nlen)
{
	if (PMON_GROW(&k->sym, cap_sym, k->n + 1) ||
	    pmon__grow((void **)&k->text, cap_text, *used + nlen + 1, 1))
		return -ENOMEM;
	memcpy(k->text + *used, name, nlen);
	k->text[*used + nlen] = '\0';
	k->sym[k->n].addr = addr;
	k->sym[k->n++].name = (const char *)(uintptr_t)*used;
	*used += nlen + 1;
	return 0;
}

/*
 * Read in 64 KiB pieces, a line at a time, keeping only the text symbols'
 * names: /proc/kallsyms is ~5 MB of which the names are ~3; holding the
 * whole file and the table at once cost a report of a perf.data 7 MB of
 * its ~13 MB peak (issue #26's 0.2x memory goal).
 */
int pmon__ksyms_load(const char *path, struct pmon__ksyms *k)
{
	/* Only a regular file: a kallsyms from a build-id cache is a name
	 * from outside (/proc/kallsyms is one too). */
	int fd = pmon__open_regular(path, false);
	size_t cap_sym = 0, used = 0, cap_text = 0, have = 0;
	bool sorted = true;
	char buf[65536 + 1];
	int err = 0;

	memset(k, 0, sizeof(*k));
	if (fd < 0)
		return fd;
	for (;;) { /* /proc files have no size: read until EOF */
		ssize_t got = read(fd, buf + have, sizeof(buf) - 1 - have);
		if (got < 0 && errno == EINTR)
			continue;
		if (got > 0)
			have += (size_t)got;
		bool eof = got <= 0;
		size_t start = 0;
		for (;;) {
			const char *nl = memchr(buf + start, '\n', have - start);
			if (!nl && !(eof && start < have) && have - start < sizeof(buf) - 1)
				break; /* a line not yet whole */
			if (!nl) /* the last line, or one longer than the piece: as it is */
				nl = buf + have;
			const char *name;
			size_t nlen;
			uint64_t addr;
			if (parse_line(buf + start, nl, &addr, &name, &nlen)) {
				if (k->n && k->sym[k->n - 1].addr > addr)
					sorted = false;
				if ((err = add_sym(k, &cap_sym, &used, &cap_text, addr, name,
						   nlen)))
					break;
			}
			start = (size_t)(nl - buf) + (nl < buf + have);
			if (start >= have)
				break;
		}
		memmove(buf, buf + start, have - start);
		have -= start;
		if (err || eof)
			break;
	}
	close(fd);
	if (err) {
		pmon__ksyms_free(k);
		return err;
	}
	for (size_t i = 0; i < k->n; i++) /* offsets into the pool, now at rest */
		k->sym[i].name = k->text + (uintptr_t)k->sym[i].name;
	if (!sorted)
		qsort(k->sym, k->n, sizeof(*k->sym), cmp_sym);
	return 0;
}

const struct pmon__ksym *pmon__ksyms_find(const struct pmon__ksyms *k, uint64_t ip, uint64_t *end)
{
	size_t lo = 0, hi = k->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->sym[mid].addr <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	if (end) /* the next symbol's start (some at the same address are aliases) */
		for (size_t i = lo; i <= k->n; i++)
			if (i == k->n || k->sym[i].addr > k->sym[lo - 1].addr) {
				*end = i < k->n ? k->sym[i].addr : UINT64_MAX;
				break;
			}
	return &k->sym[lo - 1];
}

void pmon__ksyms_free(struct pmon__ksyms *k)
{
	free(k->sym);
	free(k->text);
	memset(k, 0, sizeof(*k));
}
