// SPDX-License-Identifier: MIT
/*
 * The samples by symbol, DSO or source line (lib/report/ctx.h). A pass
 * over millions of samples formats, allocates and compares no string:
 * each sample is counted under (identifier, pid, epoch, ip) by the reader
 * threads; names come once per distinct key afterwards, and the entries
 * are sorted by event, period, then samples. For pmon_annotate(), the
 * samples of one symbol by (file, address).
 */
#include <linux/perf_event.h>
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "report/ctx.h"

/* Count @samples samples of @period in all under @key; *@index (if given) is the key's
 * order of first use, which stays put as the table grows. */
int pmon__counter_add(struct counter *c, const char *key, uint64_t samples, uint64_t period,
		      uint32_t *index)
{
	if (c->n * 2 >= c->cap) {
		struct counter nc = { 0 };
		nc.cap = c->cap ? c->cap * 2 : 1024;
		nc.key = calloc(nc.cap, sizeof(char *));
		nc.samples = calloc(nc.cap, sizeof(uint64_t));
		nc.period = calloc(nc.cap, sizeof(uint64_t));
		nc.index = calloc(nc.cap, sizeof(uint32_t));
		if (!nc.key || !nc.samples || !nc.period || !nc.index) {
			free(nc.key), free(nc.samples), free(nc.period), free(nc.index);
			return -ENOMEM;
		}
		for (size_t i = 0; i < c->cap; i++) {
			if (!c->key[i])
				continue;
			size_t j =
				pmon__fnv(c->key[i], strlen(c->key[i]), 14695981039346656037ULL) &
				(nc.cap - 1);
			while (nc.key[j])
				j = (j + 1) & (nc.cap - 1);
			nc.key[j] = c->key[i], nc.samples[j] = c->samples[i],
			nc.period[j] = c->period[i], nc.index[j] = c->index[i];
		}
		nc.n = c->n;
		free(c->key), free(c->samples), free(c->period), free(c->index);
		*c = nc;
	}
	size_t j = pmon__fnv(key, strlen(key), 14695981039346656037ULL) & (c->cap - 1);
	while (c->key[j] && strcmp(c->key[j], key))
		j = (j + 1) & (c->cap - 1);
	if (!c->key[j]) {
		c->key[j] = strdup(key);
		if (!c->key[j])
			return -ENOMEM;
		c->index[j] = (uint32_t)c->n++;
	}
	c->samples[j] += samples;
	c->period[j] += period;
	if (index)
		*index = c->index[j];
	return 0;
}

void pmon__counter_free(struct counter *c)
{
	for (size_t i = 0; i < c->cap; i++)
		free(c->key[i]);
	free(c->key), free(c->samples), free(c->period), free(c->index);
}

/* ---- aggregation by numbers ----------------------------------------------
 * A pass over millions of samples formats, allocates and compares no
 * string: each sample is counted under (identifier, pid, epoch, ip) and
 * its call chain under the same with the chain's addresses, in open
 * addressing tables of plain numbers; names come once per distinct key
 * after the pass. "epoch" counts the MMAP2/FORK records before the sample,
 * so that a key resolves against the maps its process had then. */

static int leaf_cmp(const void *a, const void *b)
{
	const struct leaf *x = a, *y = b;

	if (x->sid != y->sid)
		return x->sid < y->sid ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->epoch != y->epoch)
		return x->epoch < y->epoch ? -1 : 1;
	return (x->ip > y->ip) - (x->ip < y->ip);
}

/* The event of a sample identifier (the last EVENT record naming it). */
unsigned pmon__event_of(const struct ctx *x, uint64_t sid)
{
	if (!sid || !x->capevids)
		return 0;
	for (size_t j = pmon__mix64(sid) & (x->capevids - 1); x->evids[j].id;
	     j = (j + 1) & (x->capevids - 1))
		if (x->evids[j].id == sid)
			return x->evids[j].ev;
	return 0;
}

/* The events a (samples, period sum) pair stands for: a fixed period is
 * recorded once, not with each sample. */
uint64_t pmon__period_of(const struct ctx *x, unsigned ev, uint64_t samples, uint64_t period)
{
	if (x->sample_type & PERF_SAMPLE_PERIOD)
		return period;
	return samples * (x->r->events[ev].sample_period ? x->r->events[ev].sample_period : 1);
}

/* Name every distinct sampled address once and count the report's entries
 * (or, for pmon_annotate(), the wanted symbol's addresses). */
int pmon__name_leaves(struct ctx *x, struct leaf_tab *t)
{
	struct pmon_report *r = x->r;
	struct leaf *v = malloc((t->n ? t->n : 1) * sizeof(*v));
	size_t n = 0;
	int err = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++)
		if (t->e[i].samples)
			v[n++] = t->e[i];
	qsort(v, n, sizeof(*v), leaf_cmp); /* the same order for any number of readers */
	for (size_t i = 0; i < n && !err; i++) {
		unsigned ev = pmon__event_of(x, v[i].sid);
		uint64_t samples = v[i].samples,
			 period = pmon__period_of(x, ev, samples, v[i].period);
		struct loc l;
		char key[900];
		r->events[ev].samples += samples;
		r->events[ev].period += period;
		if (x->want && ev != x->stack_ev)
			continue; /* pmon_annotate(): another event's sample */
		r->samples += samples;
		r->period += period;
		pmon__locate(x, v[i].pid, v[i].ip, v[i].epoch, &l);
		if (x->want) { /* pmon_annotate(): only the wanted symbol's addresses */
			if (l.file < 0 && !strcmp(l.sym, x->want))
				x->want_where = !strcmp(l.dso, "[kernel]") ? "kernel" : "JIT";
			if (l.file < 0 || strcmp(l.sym, x->want)) {
				err = pmon__counter_add(&x->agg, l.sym, samples, period, NULL);
				continue;
			}
			err = pmon__hit_add(&x->hits, l.file, x->sc.addr[l.slot], samples, period);
			continue;
		}
		if (x->sort == PMON_SORT_DSO) {
			pmon__fmt(key, sizeof(key), "%u\t%s", ev, pmon__base_name(l.dso));
		} else if (x->sort == PMON_SORT_LINE) {
			const char *ln = pmon__srcline(x, &l);
			pmon__fmt(key, sizeof(key), "%u\t%s\t%s\t%s", ev, l.sym,
				  pmon__base_name(l.dso), ln ? ln : "[unknown]");
		} else {
			pmon__fmt(key, sizeof(key), "%u\t%s\t%s", ev, l.sym,
				  pmon__base_name(l.dso));
		}
		err = pmon__counter_add(&x->agg, key, samples, period, NULL);
	}
	free(v);
	return err;
}

/* By event, then the most events represented first (perf report's
 * default: by period, hist_entry__cmp on the period), then the most
 * samples: a simulated profile's samples carry counts, and one sample of
 * a loop's jump stands for millions of executions. With a fixed period
 * the two orders are the same. */
static int cmp_entry(const void *a, const void *b)
{
	const struct pmon_report_entry *x = a, *y = b;

	if (x->event != y->event)
		return x->event < y->event ? -1 : 1;
	if (x->period != y->period)
		return x->period < y->period ? 1 : -1;
	return (x->samples < y->samples) - (x->samples > y->samples);
}

/* Split "a\tb\tc\td" into up to four fields (the tabs become NULs). */
static size_t split(char *key, char **field)
{
	size_t n = 0;

	for (char *p = key; n < 4; n++) {
		field[n] = p;
		if (!(p = strchr(p, '\t'))) {
			n++;
			break;
		}
		*p++ = '\0';
	}
	return n;
}

int pmon__build_entries(struct ctx *x, struct pmon_report *r)
{
	if (!x->agg.n)
		return 0;
	r->e = calloc(x->agg.n, sizeof(*r->e));
	if (!r->e)
		return -ENOMEM;
	for (size_t i = 0; i < x->agg.cap; i++) {
		if (!x->agg.key[i])
			continue;
		struct pmon_report_entry *e = &r->e[r->n++];
		char *fld[4];
		size_t nf = split(x->agg.key[i], fld);
		e->event = (unsigned)strtoul(fld[0], NULL, 10);
		if (x->sort == PMON_SORT_DSO) {
			pmon__strlcpy(e->dso, nf > 1 ? fld[1] : "", sizeof(e->dso));
		} else {
			pmon__strlcpy(e->symbol, nf > 1 ? fld[1] : "", sizeof(e->symbol));
			pmon__strlcpy(e->dso, nf > 2 ? fld[2] : "", sizeof(e->dso));
			pmon__strlcpy(e->line, nf > 3 ? fld[3] : "", sizeof(e->line));
		}
		e->samples = x->agg.samples[i];
		e->period = x->agg.period[i];
	}
	qsort(r->e, r->n, sizeof(*r->e), cmp_entry);
	return 0;
}

int pmon__hit_add(struct hit_tab *t, int file, uint64_t addr, uint64_t samples, uint64_t period)
{
	if (t->n * 2 >= t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct hit *e = malloc(cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		for (size_t i = 0; i < cap; i++)
			e[i].file = -1;
		for (size_t i = 0; i < t->cap; i++) {
			if (t->e[i].file < 0)
				continue;
			size_t j = pmon__leaf_hash(0, (uint32_t)t->e[i].file, 0, t->e[i].addr) &
				(cap - 1);
			while (e[j].file >= 0)
				j = (j + 1) & (cap - 1);
			e[j] = t->e[i];
		}
		free(t->e);
		t->e = e;
		t->cap = cap;
	}
	size_t j = pmon__leaf_hash(0, (uint32_t)file, 0, addr) & (t->cap - 1);
	while (t->e[j].file >= 0 && !(t->e[j].file == file && t->e[j].addr == addr))
		j = (j + 1) & (t->cap - 1);
	if (t->e[j].file < 0) {
		t->e[j] = (struct hit){ .addr = addr, .file = file };
		t->n++;
	}
	t->e[j].samples += samples;
	t->e[j].period += period;
	return 0;
}
