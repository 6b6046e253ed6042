// SPDX-License-Identifier: MIT
/*
 * speedscope's file format (https://www.speedscope.app/file-format-schema.json)
 * for a report's stacks: the distinct stacks with their periods as one
 * "sampled" profile (pmon_report_write_speedscope()), or every sample of
 * the stack event in time order, one "sampled" profile per thread
 * (pmon_report_write_speedscope_samples()), which is what speedscope's
 * Time Order view draws: the aggregated stacks lose when each ran.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "internal.h"
#include "report/report.h"
#include <pmon/sample.h>

int pmon_report_write_speedscope(const struct pmon_report *r, FILE *out)
{
	json_t *frames = json_array(), *samples = json_array(), *weights = json_array();
	uint64_t end = 0;
	char name[512];
	int err = 0;

	for (size_t i = 0; i < r->nframes; i++)
		json_array_append_new(frames,
				      json_pack("{s:s, s:s}", "name", r->frames[i].symbol, "file",
						r->frames[i].dso));
	for (size_t i = 0; i < r->nstacks; i++) {
		json_t *st = json_array();
		for (uint32_t k = 0; k < r->stacks[i].depth; k++)
			json_array_append_new(st, json_integer(r->stacks[i].frame[k]));
		json_array_append_new(samples, st);
		json_array_append_new(weights, json_integer((json_int_t)r->stacks[i].period));
		end += r->stacks[i].period;
	}
	pmon__fmt(name, sizeof(name), "%s%s%s%s", pmon__export_event(r),
		  r->header.command[0] ? " in '" : "", r->header.command,
		  r->header.command[0] ? "'" : "");
	json_t *j =
		json_pack("{s:s, s:{s:o}, s:[{s:s, s:s, s:s, s:i, s:I, s:o, s:o}], s:s, s:i, s:s}",
			  "$schema", "https://www.speedscope.app/file-format-schema.json", "shared",
			  "frames", frames, "profiles", "type", "sampled", "name", name, "unit",
			  pmon__export_ns(r) ? "nanoseconds" : "none", "startValue", 0, "endValue",
			  (json_int_t)end, "samples", samples, "weights", weights, "name", name,
			  "activeProfileIndex", 0, "exporter", "pmon " PMON_VERSION_STRING);
	if (!j || json_dumpf(j, out, JSON_COMPACT) || fputc('\n', out) == EOF)
		err = j ? -EIO : -ENOMEM;
	json_decref(j);
	return err;
}

/* ---- every sample, per thread, in time order ------------------------------ */

struct ss_sample {
	uint64_t time, weight, seq;
	uint32_t thread, off, len; /* @len frame indexes at arena[@off], outermost first */
};

struct ss_thread {
	uint64_t key; /* pid << 32 | tid */
	uint64_t weight;
	char comm[64];
};

struct ss {
	unsigned ev;
	json_t *frames;
	char **fkey; /* interned "symbol\tdso" -> frame index (fidx) */
	uint32_t *fidx;
	size_t fcap, nframes;
	uint32_t *tidx; /* open addressing over threads by key; index + 1, 0: empty */
	size_t tcap;
	struct ss_thread *th;
	size_t nth, capth;
	struct ss_sample *s;
	size_t ns, caps;
	uint32_t *arena;
	size_t alen, acap;
};

static uint64_t ss_hash(const void *p, size_t n, uint64_t h)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h ^ (h >> 29);
}

/* The frame index of (@sym, @dso), made if new; -ENOMEM. */
static int64_t ss_frame(struct ss *x, const char *sym, const char *dso)
{
	char key[1024];

	pmon__fmt(key, sizeof(key), "%s\t%s", sym, dso);
	if (x->nframes * 2 >= x->fcap) {
		size_t cap = x->fcap ? x->fcap * 2 : 1024;
		char **k = calloc(cap, sizeof(*k));
		uint32_t *v = calloc(cap, sizeof(*v));
		if (!k || !v) {
			free(k), free(v);
			return -ENOMEM;
		}
		for (size_t i = 0; i < x->fcap; i++) {
			if (!x->fkey[i])
				continue;
			size_t j = ss_hash(x->fkey[i], strlen(x->fkey[i]), 14695981039346656037ULL);
			for (j &= cap - 1; k[j]; j = (j + 1) & (cap - 1))
				;
			k[j] = x->fkey[i], v[j] = x->fidx[i];
		}
		free(x->fkey), free(x->fidx);
		x->fkey = k, x->fidx = v, x->fcap = cap;
	}
	size_t j = ss_hash(key, strlen(key), 14695981039346656037ULL) & (x->fcap - 1);
	for (; x->fkey[j]; j = (j + 1) & (x->fcap - 1))
		if (!strcmp(x->fkey[j], key))
			return x->fidx[j];
	if (!(x->fkey[j] = strdup(key)) ||
	    json_array_append_new(x->frames, json_pack("{s:s, s:s}", "name", sym, "file", dso)))
		return -ENOMEM;
	x->fidx[j] = (uint32_t)x->nframes;
	return (int64_t)x->nframes++;
}

/* The index of thread (@pid, @tid), made if new; -ENOMEM. */
static int64_t ss_thread(struct ss *x, uint32_t pid, uint32_t tid, const char *comm)
{
	uint64_t key = (uint64_t)pid << 32 | tid;

	if (x->nth * 2 >= x->tcap) {
		size_t cap = x->tcap ? x->tcap * 2 : 64;
		uint32_t *t = calloc(cap, sizeof(*t));
		if (!t)
			return -ENOMEM;
		for (size_t i = 0; i < x->nth; i++) {
			size_t j = ss_hash(&x->th[i].key, 8, 14695981039346656037ULL) & (cap - 1);
			while (t[j])
				j = (j + 1) & (cap - 1);
			t[j] = (uint32_t)i + 1;
		}
		free(x->tidx);
		x->tidx = t, x->tcap = cap;
	}
	size_t j = ss_hash(&key, 8, 14695981039346656037ULL) & (x->tcap - 1);
	for (; x->tidx[j]; j = (j + 1) & (x->tcap - 1))
		if (x->th[x->tidx[j] - 1].key == key)
			break;
	if (!x->tidx[j]) {
		if (PMON_GROW(&x->th, &x->capth, x->nth + 1))
			return -ENOMEM;
		x->th[x->nth] = (struct ss_thread){ .key = key };
		x->tidx[j] = (uint32_t)++x->nth;
	}
	struct ss_thread *t = &x->th[x->tidx[j] - 1];
	pmon__strlcpy(t->comm, comm ? comm : "", sizeof(t->comm)); /* its latest name */
	return x->tidx[j] - 1;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

static int ss_on_sample(void *arg, const struct pmon_report_sample *s)
{
	struct ss *x = arg;
	size_t n = s->has_chain && s->nchain ? s->nchain : 1;

	if (s->event != x->ev)
		return 0;
	int64_t th = ss_thread(x, s->pid, s->tid, s->comm);
	if (th < 0 || PMON_GROW(&x->arena, &x->acap, x->alen + n) ||
	    PMON_GROW(&x->s, &x->caps, x->ns + 1))
		return -ENOMEM;
	struct ss_sample *sm = &x->s[x->ns];
	*sm = (struct ss_sample){ s->time,	s->period,	   x->ns,
				  (uint32_t)th, (uint32_t)x->alen, (uint32_t)n };
	for (size_t k = n; k-- > 0;) { /* the chain is leaf first, speedscope's stack root first */
		const struct pmon_report_sample_frame *f =
			s->has_chain && s->nchain ? &s->chain[k] : &s->leaf;
		int64_t fi = ss_frame(x, f->sym, base_name(f->dso));
		if (fi < 0)
			return (int)fi;
		x->arena[x->alen++] = (uint32_t)fi;
	}
	x->th[th].weight += s->period;
	x->ns++;
	return 0;
}

/* By thread (in the order first sampled), then time, then file order. */
static int ss_cmp(const void *a, const void *b)
{
	const struct ss_sample *x = a, *y = b;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* One "sampled" profile per thread, its samples in time order. */
static json_t *ss_profiles(struct ss *x, const struct pmon_report *r, size_t *active)
{
	const char *ev = pmon__export_event(r), *unit = pmon__export_ns(r) ? "nanoseconds" : "none";
	json_t *profiles = json_array();
	size_t i = 0;

	*active = 0;
	if (x->ns) /* a recording without samples has no array (qsort's NULL) */
		qsort(x->s, x->ns, sizeof(*x->s), ss_cmp);
	for (uint32_t t = 0; profiles && t < x->nth; t++) {
		json_t *samples = json_array(), *weights = json_array();
		for (; i < x->ns && x->s[i].thread == t; i++) {
			json_t *st = json_array();
			for (uint32_t k = 0; k < x->s[i].len; k++)
				json_array_append_new(st, json_integer(x->arena[x->s[i].off + k]));
			json_array_append_new(samples, st);
			json_array_append_new(weights, json_integer((json_int_t)x->s[i].weight));
		}
		char name[256];
		const struct ss_thread *th = &x->th[t];
		pmon__fmt(name, sizeof(name), "%s in %s (pid %u, tid %u)", ev,
			  th->comm[0] ? th->comm : "?", (unsigned)(th->key >> 32),
			  (unsigned)th->key);
		if (th->weight > x->th[*active].weight)
			*active = t;
		if (json_array_append_new(profiles,
					  json_pack("{s:s, s:s, s:s, s:i, s:I, s:o, s:o}", "type",
						    "sampled", "name", name, "unit", unit,
						    "startValue", 0, "endValue",
						    (json_int_t)th->weight, "samples", samples,
						    "weights", weights))) {
			json_decref(profiles);
			return NULL;
		}
	}
	if (profiles && !x->nth) /* nothing sampled: one empty profile, as the schema wants one */
		json_array_append_new(profiles,
				      json_pack("{s:s, s:s, s:s, s:i, s:i, s:[], s:[]}", "type",
						"sampled", "name", ev, "unit", unit, "startValue",
						0, "endValue", 0, "samples", "weights"));
	return profiles;
}

int pmon_report_write_speedscope_samples(const struct pmon_report *r, const char *path,
					 const struct pmon_report_opts *opts, FILE *out)
{
	struct ss x = { .ev = r->nevents && r->stack_event < r->nevents ? r->stack_event : 0,
			.frames = json_array() };
	char name[512];
	size_t active = 0;
	int err =
		x.frames ? pmon_report_foreach_sample(path, opts, ss_on_sample, &x, NULL) : -ENOMEM;

	json_t *profiles = err ? NULL : ss_profiles(&x, r, &active);
	if (!err && !profiles)
		err = -ENOMEM;
	if (!err) {
		pmon__fmt(name, sizeof(name), "%s%s%s%s", pmon__export_event(r),
			  r->header.command[0] ? " in '" : "", r->header.command,
			  r->header.command[0] ? "'" : "");
		json_t *j = json_pack("{s:s, s:{s:O}, s:O, s:s, s:i, s:s}", "$schema",
				      "https://www.speedscope.app/file-format-schema.json",
				      "shared", "frames", x.frames, "profiles", profiles, "name",
				      name, "activeProfileIndex", (int)active, "exporter",
				      "pmon " PMON_VERSION_STRING);
		if (!j || json_dumpf(j, out, JSON_COMPACT) || fputc('\n', out) == EOF)
			err = j ? -EIO : -ENOMEM;
		json_decref(j);
	}
	json_decref(profiles);
	json_decref(x.frames);
	for (size_t i = 0; i < x.fcap; i++)
		free(x.fkey[i]);
	free(x.fkey), free(x.fidx), free(x.tidx), free(x.th), free(x.s), free(x.arena);
	return err;
}
