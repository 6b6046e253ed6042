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

int pmon__ksyms_load(const char *path, struct pmon__ksyms *k)
{
	/* Only a regular file: a kallsyms from a build-id cache is a name
	 * from outside (/proc/kallsyms is one too). */
	int fd = pmon__open_regular(path, false);
	size_t len = 0, cap = 1 << 22, cap_sym = 0;
	bool sorted = true;

	memset(k, 0, sizeof(*k));
	if (fd < 0)
		return fd;
	/* /proc files have no size: read until EOF. */
	for (ssize_t got = 1; got > 0;) {
		if (!k->text || len + 65536 > cap) {
			cap = k->text ? cap * 2 : cap;
			char *t = realloc(k->text, cap + 1);
			if (!t) {
				close(fd);
				pmon__ksyms_free(k);
				return -ENOMEM;
			}
			k->text = t;
		}
		got = read(fd, k->text + len, cap - len);
		if (got < 0 && errno == EINTR)
			got = 1;
		else if (got > 0)
			len += (size_t)got;
	}
	close(fd);
	if (!k->text)
		return -ENOMEM;
	k->text[len] = '\0';
	for (char *p = k->text, *end = k->text + len; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *line = p;
		uint64_t addr = 0;
		int v;
		if (!nl)
			nl = end;
		p = nl + 1;
		while ((v = hexval(*line)) >= 0)
			addr = addr << 4 | (uint64_t)v, line++;
		/* " T name" (text symbols only; weak ones too) */
		if (!addr || line[0] != ' ' || !strchr("tTwW", line[1]) || !line[1] ||
		    line[2] != ' ')
			continue;
		char *name = line + 3, *ne = name;
		/* a NUL ends the name too: the file may hold any bytes */
		while (ne < nl && *ne && *ne != '\t' && *ne != ' ')
			ne++;
		if (ne == name)
			continue;
		*ne = '\0';
		if (PMON_GROW(&k->sym, &cap_sym, k->n + 1)) {
			pmon__ksyms_free(k);
			return -ENOMEM;
		}
		if (k->n && k->sym[k->n - 1].addr > addr)
			sorted = false;
		k->sym[k->n].addr = addr;
		k->sym[k->n++].name = name;
	}
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
