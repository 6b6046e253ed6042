// SPDX-License-Identifier: MIT
/*
 * The event sweep (pmon/region.h): PmonStat's "automates looping a code
 * segment through all the performance events". A list longer than the
 * counters is measured in counter-sized batches, the function run @reps
 * times per batch, and every event reported as if counted at once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "internal.h"
#include <pmon/counter.h>
#include <pmon/cpu.h>
#include <pmon/event.h>
#include <pmon/region.h>
#include <pmon/stats.h>

#define MAX_BATCH 16 /* events opened as one group */

static unsigned default_batch(void)
{
	struct pmon_cpuid *c = pmon_cpuid__new_live();
	struct pmon_cpu_info ci;
	unsigned n = 4;

	if (c && !pmon_cpu_decode(c, &ci) && ci.pm.gp_count)
		n = ci.pm.gp_count;
	pmon_cpuid__free(c);
	return n > MAX_BATCH ? MAX_BATCH : n;
}

static void row(FILE *f, enum pmon_report_format fmt, const char *name, unsigned batch,
		const struct pmon_summary *s, double overhead)
{
	if (fmt == PMON_REPORT_CSV) {
		fprintf(f, "%s,%u,%zu,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%zu,%.2f\n", name, batch,
			s->n, s->median, s->mode, s->mean, s->stddev, s->min, s->max, s->mad,
			s->culled, overhead);
	} else if (fmt == PMON_REPORT_JSON) {
		json_t *j =
			json_pack("{s:s, s:i, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:f}",
				  "event", name, "batch", (int)batch, "samples", (json_int_t)s->n,
				  "median", s->median, "mode", s->mode, "mean", s->mean, "stddev",
				  s->stddev, "min", s->min, "max", s->max, "mad", s->mad, "culled",
				  (json_int_t)s->culled, "overhead", overhead);
		json_dumpf(j, f, JSON_COMPACT | JSON_PRESERVE_ORDER);
		fputc('\n', f);
		json_decref(j);
	} else {
		fprintf(f, "%-32.32s %5u %12.1f %12.1f %12.1f %11.1f %12.1f %12.1f %7zu\n", name,
			batch, s->median, s->mode, s->mean, s->stddev, s->min, s->max, s->culled);
	}
}

/* Measure one batch: empty pairs for the overhead, then @reps calls. */
static int run_batch(struct pmon_evlist *b, unsigned reps, void (*fn)(void *), void *arg,
		     double cull_k, FILE *f, enum pmon_report_format fmt, unsigned batchno)
{
	size_t n = pmon_evlist__count(b);
	struct pmon_selfgroup *g;
	uint64_t v0[MAX_BATCH], v1[MAX_BATCH];
	double *d = malloc((size_t)reps * n * sizeof(*d)), *col = malloc(reps * sizeof(*col));
	double over[MAX_BATCH];
	int err;

	g = pmon_selfgroup__open(b);
	err = g ? 0 : -errno;

	if (err || !d || !col) {
		free(d);
		free(col);
		if (!err)
			pmon_selfgroup__close(g);
		return err ? err : -ENOMEM;
	}
	/* The overhead: the median of empty read pairs, per event. */
	for (unsigned r = 0; r < reps; r++) {
		pmon_selfgroup__read(g, v0);
		pmon_selfgroup__read(g, v1);
		for (size_t e = 0; e < n; e++)
			d[e * reps + r] = (double)(v1[e] - v0[e]);
	}
	for (size_t e = 0; e < n; e++) {
		struct pmon_summary s = { .sz = sizeof(s) };
		pmon_summarize(&d[e * reps], reps, 0, &s);
		over[e] = s.median;
	}
	for (unsigned r = 0; r < reps; r++) {
		pmon_selfgroup__read(g, v0);
		fn(arg);
		pmon_selfgroup__read(g, v1);
		for (size_t e = 0; e < n; e++)
			d[e * reps + r] = (double)(v1[e] - v0[e]) - over[e];
	}
	for (size_t e = 0; e < n; e++) {
		struct pmon_summary s = { .sz = sizeof(s) };
		const struct pmon_event_desc *ev = pmon_evlist__event(b, e);
		memcpy(col, &d[e * reps], reps * sizeof(*col));
		for (unsigned r = 0; r < reps; r++)
			col[r] *= ev->scale;
		pmon_summarize(col, reps, cull_k, &s);
		row(f, fmt, ev->name, batchno, &s, over[e] * ev->scale);
	}
	pmon_selfgroup__close(g);
	free(d);
	free(col);
	return 0;
}

int pmon_region_sweep(const struct pmon_sweep_opts *opts, void (*fn)(void *arg), void *arg, FILE *f,
		      enum pmon_report_format fmt)
{
	struct pmon_sweep_opts o = { .sz = sizeof(o) };
	struct pmon_evlist *all;
	unsigned batch, reps;
	double cull_k;
	locale_t loc;
	size_t n;
	int err;

	/* Fields past the caller's size read as 0 (defaults); a larger struct
	 * from a newer header is accepted when the fields it adds are unset. */
	if ((err = PMON_OPTS_COPY(&o, opts, struct pmon_sweep_opts, sz)))
		return err;
	opts = &o;
	if (!opts->events || !fn)
		return pmon__err(-EINVAL, "pmon_region_sweep: events and a function are required");
	batch = opts->batch ? opts->batch : default_batch();
	if (batch > MAX_BATCH)
		batch = MAX_BATCH;
	reps = opts->reps ? opts->reps : 100;
	cull_k = opts->cull_k < 0 ? 0 : opts->cull_k > 0 ? opts->cull_k : 5.0;
	all = pmon_evlist__new(NULL);
	if (!all)
		return -ENOMEM;
	err = pmon_evlist__add(all, opts->events);
	if (err) {
		pmon_evlist__free(all);
		return err;
	}
	/* Numbers with '.' whatever locale the program chose. */
	loc = pmon__c_locale_enter();
	n = pmon_evlist__count(all);
	if (fmt == PMON_REPORT_CSV)
		fprintf(f,
			"event,batch,samples,median,mode,mean,stddev,min,max,mad,culled,"
			"overhead\n");
	else if (fmt == PMON_REPORT_TABLE)
		fprintf(f,
			"pmon sweep: %zu events in batches of %u, %u calls each; overhead of an "
			"empty "
			"read pair subtracted; culled beyond %.1f x MAD\n%-32s %5s %12s %12s %12s "
			"%11s "
			"%12s %12s %7s\n",
			n, batch, reps, cull_k, "event", "batch", "median", "mode", "mean",
			"stddev", "min", "max", "culled");
	for (size_t first = 0, no = 0; first < n && !err; first += batch, no++) {
		size_t k = n - first < batch ? n - first : batch;
		struct pmon_evlist *b = pmon_evlist__slice(all, first, k);
		if (!b) {
			err = -ENOMEM;
			break;
		}
		err = run_batch(b, reps, fn, arg, cull_k, f, fmt, (unsigned)no);
		pmon_evlist__free(b);
	}
	pmon_evlist__free(all);
	pmon__c_locale_leave(loc);
	return err;
}
