// SPDX-License-Identifier: MIT
/*
 * Two profiles compared (pmon_report_diff(), for pmon diff): the entries of
 * two reports matched by symbol, DSO or both, with each one's share of its
 * own profile, the delta and the ratio, as perf diff computes them
 * (tools/perf/builtin-diff.c: delta = new% - base%); and the union of their
 * stacks with the samples of each, as FlameGraph's difffolded.pl pairs two
 * folded files (stacks matched by their frames' names). The exports of a
 * diff are in export.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "report/ctx.h"
#include <pmon/sample.h>

/* Byte strings -> index, open addressing; keys copied. */
struct keymap {
	char **key;
	size_t *len, *val;
	size_t cap, n;
};

static uint64_t key_hash(const void *k, size_t len)
{
	return pmon__mix64(pmon__fnv(k, len, 14695981039346656037ULL));
}

/* The index of @k, or, when new, @next (returned); SIZE_MAX without memory. */
static size_t keymap_get(struct keymap *m, const void *k, size_t len, size_t next)
{
	if ((m->n + 1) * 2 >= m->cap) {
		struct keymap o = *m;
		size_t cap = m->cap ? m->cap * 2 : 256;
		m->key = calloc(cap, sizeof(*m->key));
		m->len = calloc(cap, sizeof(*m->len));
		m->val = calloc(cap, sizeof(*m->val));
		if (!m->key || !m->len || !m->val) {
			free(m->key), free(m->len), free(m->val);
			*m = o;
			return SIZE_MAX;
		}
		m->cap = cap;
		for (size_t i = 0; i < o.cap; i++) {
			if (!o.key[i])
				continue;
			size_t j = key_hash(o.key[i], o.len[i]) & (cap - 1);
			while (m->key[j])
				j = (j + 1) & (cap - 1);
			m->key[j] = o.key[i], m->len[j] = o.len[i], m->val[j] = o.val[i];
		}
		free(o.key), free(o.len), free(o.val);
	}
	size_t j = key_hash(k, len) & (m->cap - 1);
	for (; m->key[j]; j = (j + 1) & (m->cap - 1))
		if (m->len[j] == len && !memcmp(m->key[j], k, len))
			return m->val[j];
	if (!(m->key[j] = malloc(len ? len : 1)))
		return SIZE_MAX;
	memcpy(m->key[j], k, len);
	m->len[j] = len;
	m->val[j] = next;
	m->n++;
	return next;
}

static void keymap_free(struct keymap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->key[i]);
	free(m->key), free(m->len), free(m->val);
}

/* A profile's total of its compared event: the events its samples stand for. */
static uint64_t total_of(const struct pmon_report *r)
{
	unsigned ev = r->stack_event < r->nevents ? r->stack_event : 0;

	if (r->nevents && r->events[ev].period)
		return r->events[ev].period;
	return r->nevents ? r->events[ev].samples : r->period;
}

/* Add @r's entries of its compared event (@second: the new profile). */
static int add_entries(struct pmon_report_diff *d, struct keymap *m, size_t *cap,
		       const struct pmon_report *r, enum pmon_diff_key key, bool second)
{
	char k[520];

	for (size_t i = 0; i < r->n; i++) {
		const struct pmon_report_entry *en = &r->e[i];
		if (en->event != r->stack_event)
			continue;
		int len = snprintf(k, sizeof(k), "%s%c%s", key == PMON_DIFF_SYMBOL ? "" : en->dso,
				   0x1f, key == PMON_DIFF_DSO ? "" : en->symbol);
		if (len < 0)
			return -EINVAL;
		size_t at = keymap_get(m, k, (size_t)len, d->n);
		if (at == SIZE_MAX || PMON_GROW(&d->e, cap, d->n + 1))
			return -ENOMEM;
		struct pmon_report_diff_entry *e = &d->e[at];
		if (at == d->n) {
			memset(e, 0, sizeof(*e));
			d->n++;
			if (key != PMON_DIFF_DSO)
				pmon__strlcpy(e->symbol, en->symbol, sizeof(e->symbol));
			pmon__strlcpy(e->dso, en->dso, sizeof(e->dso));
		}
		if (second)
			e->new_period += en->period, e->new_samples += en->samples;
		else
			e->base_period += en->period, e->base_samples += en->samples;
	}
	return 0;
}

/* Most baseline share first, then most new share, then by name. */
static int cmp_entry(const void *a, const void *b)
{
	const struct pmon_report_diff_entry *x = a, *y = b;

	if (x->base_share != y->base_share)
		return x->base_share > y->base_share ? -1 : 1;
	if (x->new_share != y->new_share)
		return x->new_share > y->new_share ? -1 : 1;
	int c = strcmp(x->dso, y->dso);
	return c ? c : strcmp(x->symbol, y->symbol);
}

static void finish_entries(struct pmon_report_diff *d)
{
	for (size_t i = 0; i < d->n; i++) {
		struct pmon_report_diff_entry *e = &d->e[i];
		e->base_share = d->base_total
			? 100.0 * (double)e->base_period / (double)d->base_total
			: 0.0;
		e->new_share =
			d->new_total ? 100.0 * (double)e->new_period / (double)d->new_total : 0.0;
		e->delta = e->new_share - e->base_share;
		e->ratio = e->base_share > 0 ? e->new_share / e->base_share : 0.0;
	}
	if (d->n > 1)
		qsort(d->e, d->n, sizeof(*d->e), cmp_entry);
}

/* A frame of the diff by its name (difffolded.pl matches names). */
static size_t frame_of(struct pmon_report_diff *d, struct keymap *m, size_t *cap,
		       const struct pmon_report_frame *f)
{
	size_t at = keymap_get(m, f->symbol, strlen(f->symbol), d->nframes);

	if (at != d->nframes)
		return at;
	if (at == SIZE_MAX || PMON_GROW(&d->frames, cap, d->nframes + 1))
		return SIZE_MAX;
	d->frames[at].symbol = strdup(f->symbol);
	d->frames[at].dso = strdup(f->dso ? f->dso : "");
	if (!d->frames[at].symbol || !d->frames[at].dso) {
		free(d->frames[at].symbol), free(d->frames[at].dso);
		return SIZE_MAX;
	}
	d->nframes++;
	return at;
}

/* Add @r's stacks (@second: the new profile's). */
static int add_stacks(struct pmon_report_diff *d, struct keymap *fm, struct keymap *sm,
		      size_t *capf, size_t *caps, const struct pmon_report *r, bool second)
{
	uint32_t *fr = NULL;
	size_t capfr = 0;
	int err = 0;

	for (size_t i = 0; i < r->nstacks && !err; i++) {
		const struct pmon_report_stack *st = &r->stacks[i];
		if (PMON_GROW(&fr, &capfr, st->depth + 1)) {
			err = -ENOMEM;
			break;
		}
		for (uint32_t k = 0; k < st->depth && !err; k++) {
			size_t f = frame_of(d, fm, capf, &r->frames[st->frame[k]]);
			err = f == SIZE_MAX ? -ENOMEM : 0;
			fr[k] = (uint32_t)f;
		}
		size_t at = err ? SIZE_MAX : keymap_get(sm, fr, st->depth * 4, d->nstacks);
		if (at == SIZE_MAX || PMON_GROW(&d->stacks, caps, d->nstacks + 1)) {
			err = -ENOMEM;
			break;
		}
		if (at == d->nstacks) {
			struct pmon_report_diff_stack *s = &d->stacks[d->nstacks];
			memset(s, 0, sizeof(*s));
			if (!(s->frame = malloc((st->depth + 1) * sizeof(*s->frame)))) {
				err = -ENOMEM;
				break;
			}
			memcpy(s->frame, fr, st->depth * sizeof(*fr));
			s->depth = st->depth;
			d->nstacks++;
		}
		uint64_t w = r->header.attr_type == 0x6d6973 ? st->period : st->samples;
		if (second)
			d->stacks[at].new_samples += w, d->new_samples += w;
		else
			d->stacks[at].base_samples += w, d->base_samples += w;
	}
	free(fr);
	return err;
}

int pmon_report_diff(const struct pmon_report *base, const struct pmon_report *other,
		     enum pmon_diff_key key, struct pmon_report_diff *d)
{
	struct keymap em = { 0 }, fm = { 0 }, sm = { 0 };
	size_t cape = 0, capf = 0, caps = 0;
	int err;

	memset(d, 0, sizeof(*d));
	d->base_total = total_of(base);
	d->new_total = total_of(other);
	if (base->nevents)
		pmon__strlcpy(d->event, base->events[base->stack_event % base->nevents].name,
			      sizeof(d->event));
	err = add_entries(d, &em, &cape, base, key, false);
	if (!err)
		err = add_entries(d, &em, &cape, other, key, true);
	if (!err)
		finish_entries(d);
	if (!err)
		err = add_stacks(d, &fm, &sm, &capf, &caps, base, false);
	if (!err)
		err = add_stacks(d, &fm, &sm, &capf, &caps, other, true);
	keymap_free(&em);
	keymap_free(&fm);
	keymap_free(&sm);
	if (err)
		pmon_report_diff_release(d);
	return err;
}

int pmon_report_diff_files(const char *base, const char *other, const struct pmon_report_opts *user,
			   bool stacks, enum pmon_diff_key key, struct pmon_report_diff *out,
			   char *warn, size_t warnlen)
{
	struct pmon_report_opts o = { 0 };
	struct pmon_report rb, rn;
	int err;

	memset(out, 0, sizeof(*out));
	if (warn && warnlen)
		warn[0] = '\0';
	if ((err = PMON_OPTS_COPY(&o, user, struct pmon_report_opts, sz)))
		return err;
	o.sz = sizeof(o);
	o.inlines = stacks;
	o.no_stacks = !stacks;
	if ((err = pmon_report_read(base, &o, &rb)))
		return err;
	if ((err = pmon_report_read(other, &o, &rn))) {
		pmon_report_release(&rb);
		return err;
	}
	if (warn && warnlen && rb.warning[0])
		pmon__fmt(warn, warnlen, "%s: %s", base, rb.warning);
	else if (warn && warnlen && rn.warning[0])
		pmon__fmt(warn, warnlen, "%s: %s", other, rn.warning);
	err = pmon_report_diff(&rb, &rn, key, out);
	pmon_report_release(&rb);
	pmon_report_release(&rn);
	return err;
}

void pmon_report_diff_release(struct pmon_report_diff *d)
{
	if (!d)
		return;
	free(d->e);
	for (size_t i = 0; i < d->nframes; i++)
		free(d->frames[i].symbol), free(d->frames[i].dso);
	free(d->frames);
	for (size_t i = 0; i < d->nstacks; i++)
		free(d->stacks[i].frame);
	free(d->stacks);
	memset(d, 0, sizeof(*d));
}

int pmon_report_diff_write_folded(const struct pmon_report_diff *d, FILE *out)
{
	for (size_t i = 0; i < d->nstacks; i++) {
		const struct pmon_report_diff_stack *s = &d->stacks[i];
		for (uint32_t k = 0; k < s->depth; k++)
			fprintf(out, "%s%s", k ? ";" : "", d->frames[s->frame[k]].symbol);
		fprintf(out, " %llu %llu\n", (unsigned long long)s->base_samples,
			(unsigned long long)s->new_samples);
	}
	return ferror(out) ? -EIO : 0;
}
