// SPDX-License-Identifier: MIT
/*
 * Reports from a recording (pmon/report.h): the records come decoded from
 * the recording reader (sample/reader.h); those that change what later
 * samples see go to the maps (maps.c), the samples are counted by address
 * and call chain on the reader's threads, then named once each
 * (symbols.c) into the histogram (histogram.c) and the stacks
 * (callgraph.c) that the exports (export.c) draw on. pmon_annotate()
 * counts the samples of one symbol per instruction (annotate.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "report/ctx.h"
#include "sample/datafile.h"
#include "sample/reader.h"
#include <pmon/sample.h>
#include <pmon/sim.h>

/* Is the recorded event @have the one asked for, @want? The same name, or
 * for a simulated recording the same simulated event by either of its
 * names: pmon's ("sim/L1-dcache-load-misses", with or without the final
 * '/') or the engine's ("D1mr"). */
static bool event_is(const char *have, const char *want)
{
	if (!strcmp(have, want))
		return true;
	if (strncmp(have, "sim/", 4))
		return false;
	int a = pmon_sim_event__find(have), b = pmon_sim_event__find(want);
	return a >= 0 && a == b;
}

/* Sample identifier @id is event @ev's from now on (open addressing: a
 * perf.data may name millions of ids; id 0 is none). */
static int evid_set(struct ctx *x, uint64_t id, unsigned ev)
{
	if (!id)
		return 0;
	if ((x->nevids + 1) * 2 > x->capevids) {
		size_t cap = x->capevids ? x->capevids * 2 : 64;
		struct ev_id *t = calloc(cap, sizeof(*t));
		if (!t)
			return -ENOMEM;
		for (size_t i = 0; i < x->capevids; i++) {
			if (!x->evids[i].id)
				continue;
			size_t j = pmon__mix64(x->evids[i].id) & (cap - 1);
			while (t[j].id)
				j = (j + 1) & (cap - 1);
			t[j] = x->evids[i];
		}
		free(x->evids);
		x->evids = t;
		x->capevids = cap;
	}
	size_t j = pmon__mix64(id) & (x->capevids - 1);
	while (x->evids[j].id && x->evids[j].id != id)
		j = (j + 1) & (x->capevids - 1);
	x->nevids += !x->evids[j].id;
	x->evids[j] = (struct ev_id){ id, ev };
	return 0;
}

/* A PMON_RECORD_EVENT: one sampled event and its sample identifiers. */
static int add_event(struct ctx *x, const struct pmon__rec_event *re)
{
	if (re->index >= PMON_ARRAY_SIZE(x->r->events))
		return 0;
	struct pmon_report_event *ev = &x->r->events[re->index];
	pmon__strlcpy(ev->name, re->name, sizeof(ev->name));
	ev->sample_period = re->period;
	ev->freq = re->freq;
	if (re->index >= x->r->nevents)
		x->r->nevents = re->index + 1;
	if (x->stack_event_name && event_is(ev->name, x->stack_event_name)) {
		x->stack_ev = re->index;
		x->stack_ev_found = true;
	}
	for (size_t i = 0; i < re->nids; i++) {
		int err = evid_set(x, pmon__rec_event_id(re, i), re->index);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Apply a record that changes what the samples after it see, in file
 * order: MMAP, MMAP2 and FORK each open an epoch (one too short for its
 * type too, so that the epochs stay in step with the reader's).
 */
static int apply_record(struct ctx *x, const struct pmon__record *rec)
{
	int err = 0;

	switch (rec->type) {
	case PERF_RECORD_MMAP: /* perf before 3.16 maps user space with it */
	case PERF_RECORD_MMAP2:
		/* pid -1: the kernel's own maps ([kernel.kallsyms], modules),
		 * named through the kernel's symbols, not a process's maps */
		if (rec->mmap.pid == UINT32_MAX)
			break;
		err = pmon__maps_add(x, rec->mmap.pid, rec->mmap.start, rec->mmap.len,
				     rec->mmap.pgoff, rec->mmap.filename, rec->mmap.build_id,
				     rec->mmap.build_id_size);
		break;
	case PERF_RECORD_FORK:
		err = pmon__maps_fork(x, rec->task.pid, rec->task.ppid);
		if (!err && x->threads) /* the child named as its parent until its COMM */
			err = pmon__comm_record(&x->comms, rec);
		break;
	case PMON__RECORD_SHORT:
		break;
	case PMON_RECORD_EVENT:
		return add_event(x, &rec->event);
	case PMON_RECORD_TPFMT: { /* for script's trace field */
		char sys[256];
		pmon__fmt(sys, sizeof(sys), "%.*s",
			  (int)(rec->tpfmt.sys_len < 255 ? rec->tpfmt.sys_len : 255),
			  rec->tpfmt.sys);
		return pmon__tp_add_format(&x->tp, sys, rec->tpfmt.format, rec->tpfmt.len);
	}
	case PERF_RECORD_COMM: /* a system-wide profile's pprof labels */
		return x->threads ? pmon__comm_record(&x->comms, rec) : 0;
	default:
		return 0; /* EXIT: not needed to name addresses */
	}
	return err ? err : pmon__maps_epoch(x);
}

/* ---- the records: counted by the reader's threads ----------------------- */

struct worker { /* one per reader thread */
	struct ctx *x;
	struct leaf_tab leaves;
	struct stk_tab stacks;
	bool callchains;
	struct kcache { /* kernel address -> pmon__kernel_canonical(), direct-mapped */
		uint64_t ip, start;
	} * kc;
};

struct scan {
	struct ctx *x;
	struct worker *w;
	unsigned nw;
	bool unwinding; /* one thread: the unwinder needs each process's maps of now */
};

/* Count @samples of @period under (@sid, @pid, @epoch, @ip): here, beside
 * the readers' loop, so that it inlines there. */
static int leaf_add(struct leaf_tab *t, uint64_t sid, uint32_t pid, uint32_t epoch, uint64_t ip,
		    uint64_t samples, uint64_t period)
{
	if (t->n * 2 >= t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct leaf *e = calloc(cap, sizeof(*e));
		if (!e)
			return -ENOMEM;
		for (size_t i = 0; i < t->cap; i++) {
			const struct leaf *o = &t->e[i];
			if (!o->samples)
				continue;
			size_t j = pmon__leaf_hash(o->sid, o->pid, o->epoch, o->ip) & (cap - 1);
			while (e[j].samples)
				j = (j + 1) & (cap - 1);
			e[j] = *o;
		}
		free(t->e);
		t->e = e;
		t->cap = cap;
	}
	size_t j = pmon__leaf_hash(sid, pid, epoch, ip) & (t->cap - 1);
	for (;; j = (j + 1) & (t->cap - 1)) {
		struct leaf *l = &t->e[j];
		if (!l->samples) {
			*l = (struct leaf){ sid, ip, samples, period, pid, epoch };
			t->n++;
			return 0;
		}
		if (l->ip == ip && l->sid == sid && l->pid == pid && l->epoch == epoch) {
			l->samples += samples;
			l->period += period;
			return 0;
		}
	}
}

/* pmon__kernel_canonical(), remembered: a chain's kernel return addresses repeat
 * from sample to sample, and a symbol lookup is a binary search. */
static uint64_t kernel_start(struct worker *w, uint64_t ip)
{
	enum { KCACHE = 4096 };

	if (!w->kc && !(w->kc = calloc(KCACHE, sizeof(*w->kc))))
		return ip; /* uncached is still right: chains merge a little less */
	struct kcache *e = &w->kc[pmon__mix64(ip) & (KCACHE - 1)];
	if (e->ip != ip) {
		e->ip = ip;
		e->start = pmon__kernel_canonical(w->x, ip);
	}
	return e->start;
}

/*
 * Count a sample of epoch @epoch (the other records are not needed). The
 * addresses of a call chain are the ones to look up: a return address
 * minus 1, inside its call (the first entry after a context marker is
 * where the code ran, not a return address).
 */
static int on_record(void *arg, unsigned thread, const struct pmon__record *rec, uint32_t epoch)
{
	struct scan *s = arg;
	struct worker *w = &s->w[thread];
	const struct pmon_sample *sm = &rec->sample;
	struct ctx *x = w->x;
	uint64_t all[256];
	int err;

	if (rec->type != PERF_RECORD_SAMPLE)
		return 0;
	if ((err = leaf_add(&w->leaves, sm->id, sm->pid, epoch, sm->ip, 1, sm->period)))
		return err;
	uint32_t nall = 0;
	bool fresh = true;
	for (uint64_t k = 0; k < sm->nr && nall < 128; k++) {
		uint64_t v = pmon_sample__chain(sm, k);
		if (v >= (uint64_t)-4095) { /* PERF_CONTEXT_* */
			fresh = true;
			continue;
		}
		all[nall++] = !fresh && v ? v - 1 : v;
		fresh = false;
	}
	/* DWARF mode: the user frames unwound from the registers and the
	 * stack copy (one reader: the unwinder needs the maps of now). */
	if (s->unwinding && sm->nregs == 17 && sm->stack_dyn) {
		uint64_t regs[17], pcs[128];
		memcpy(regs, sm->regs, sizeof(regs));
		int n = pmon__maps_unwind(x, sm->pid, regs, sm->stack, sm->stack_dyn, pcs, 128);
		for (int k = 0; k < n; k++)
			all[nall++] = k && pcs[k] ? pcs[k] - 1 : pcs[k];
	}
	if (nall)
		w->callchains = true;
	else
		all[nall++] = sm->ip; /* no chain: the sampled address alone */
	if (x->no_stacks)
		return 0;
	for (uint32_t k = 0; k < nall; k++)
		if (all[k] >= 0xffff800000000000ULL)
			all[k] = kernel_start(w, all[k]);
	return pmon__stk_add(&w->stacks, sm->id, sm->pid, x->threads ? sm->tid : 0, epoch, all,
			     nall, 1, sm->period);
}

/* What a reader needs only while it reads chunks: freed before the naming,
 * whose elfutils modules and DWARF then reuse the memory. */
static void worker_done(struct worker *w)
{
	free(w->kc);
	w->kc = NULL;
}

static void worker_free(struct worker *w)
{
	worker_done(w);
	free(w->leaves.e);
	pmon__stk_free(&w->stacks);
}

/* Add @b's counts to @a. */
static int worker_merge(struct worker *a, const struct worker *b)
{
	int err = 0;

	for (size_t i = 0; i < b->leaves.cap && !err; i++) {
		const struct leaf *l = &b->leaves.e[i];
		if (l->samples)
			err = leaf_add(&a->leaves, l->sid, l->pid, l->epoch, l->ip, l->samples,
				       l->period);
	}
	for (uint32_t i = 1; i < b->stacks.nn && !err; i++) {
		uint64_t chain[STACK_MAX_FRAMES], sid;
		uint32_t pid, tid, epoch;
		if (!b->stacks.samples[i])
			continue;
		uint32_t n = pmon__stk_chain(&b->stacks, i, chain, &sid, &pid, &tid, &epoch);
		err = pmon__stk_add(&a->stacks, sid, pid, tid, epoch, chain, n,
				    b->stacks.samples[i], b->stacks.period[i]);
	}
	a->callchains |= b->callchains;
	return err;
}

/* A PMON_RECORD_KSYM of the recording: kept, sorted after the last. */
static int add_ksym(void *arg, const struct pmon__record *rec)
{
	struct ctx *x = arg;

	if (rec->type == PMON_RECORD_VDSO) { /* the vDSO's image: the last one kept */
		uint8_t *img = malloc(rec->vdso.len ? rec->vdso.len : 1);
		if (!img)
			return -ENOMEM;
		memcpy(img, rec->vdso.image, rec->vdso.len);
		free(x->vdso);
		x->vdso = img;
		x->vdso_len = rec->vdso.len;
		return 0;
	}
	char *name = strdup(rec->ksym.name);

	if (!name || PMON_GROW(&x->fk, &x->capfk, x->nfk + 1)) {
		free(name);
		return -ENOMEM;
	}
	x->fk[x->nfk++] = (struct file_ksym){ rec->ksym.start, rec->ksym.end, name };
	return 0; // cppcheck-suppress memleak ; name is x->fk's now, freed with the context
}

static int on_ordered(void *arg, const struct pmon__record *rec)
{
	struct scan *s = arg;

	return apply_record(s->x, rec);
}

/* The header into x->r (one event unless PMON_RECORD_EVENT records say more). */
static void take_header(struct ctx *x, const struct pmon__rec_header *h)
{
	struct pmon_report *r = x->r;

	r->header.regs_user = x->regs_user = h->regs_user;
	r->header.sample_type = x->sample_type = h->sample_type;
	r->header.attr_type = h->attr_type;
	r->header.attr_config = h->attr_config;
	r->header.period = h->period;
	r->header.freq = h->freq;
	pmon__strlcpy(r->header.event, h->event, sizeof(r->header.event));
	pmon__strlcpy(r->header.command, h->command, sizeof(r->header.command));
	r->header.flags = h->flags;
	x->threads = h->flags & PMON_DATA_SYSTEM_WIDE;
	r->header.captured = h->captured;
	pmon__strlcpy(r->header.hostname, h->hostname, sizeof(r->header.hostname));
	pmon__strlcpy(r->header.cpus, h->cpus, sizeof(r->header.cpus));
	pmon__strlcpy(r->events[0].name, h->event, sizeof(r->events[0].name));
	r->events[0].sample_period = h->period;
	r->events[0].freq = h->freq;
	r->nevents = 1;
}

/* The damage account of a finished read into x->r. */
static void take_stats(struct ctx *x, const struct pmon__rec_stats *st)
{
	struct pmon_report *r = x->r;

	r->lost = st->lost;
	r->damaged_chunks = st->damaged_chunks;
	r->damaged_bytes = st->damaged_bytes;
	r->damaged_samples = st->damaged_samples;
	r->truncated = st->truncated;
	pmon__strlcpy(r->warning, st->warning, sizeof(r->warning));
}

/* Read the recording at @path into @x (and x->r's header and totals). */
static int scan(const char *path, struct ctx *x)
{
	struct pmon__rec_header h;
	struct scan s = { .x = x };
	struct pmon__rec_reader *rd = pmon__rec_reader_open(path, &h);
	const struct pmon__rec_ops ops = { .record = on_record, .ordered = on_ordered };
	int err;

	if (!rd)
		return -errno;
	take_header(x, &h);
	if ((err = pmon__maps_epoch(x)))
		goto out;
	/* The kernel symbols first: the readers name chains' kernel frames by them. */
	if ((err = pmon__rec_reader_ksyms(rd, add_ksym, x)))
		goto out;
	if (x->nfk > 1)
		qsort(x->fk, x->nfk, sizeof(*x->fk), pmon__file_ksym_cmp);
	if ((err = pmon__kernel_pick(x, rd, x->kallsyms)))
		goto out;
	/* DWARF unwinding needs each process's maps at the sample: one reader
	 * that applies the records as it meets them. */
	s.unwinding = x->sample_type & PERF_SAMPLE_REGS_USER &&
		x->sample_type & PERF_SAMPLE_STACK_USER && x->regs_user == PMON_REGS_USER_X86;
	s.nw = s.unwinding ? 1 : pmon__rec_reader_threads(rd);
	if (!(s.w = calloc(s.nw, sizeof(*s.w)))) {
		err = -ENOMEM;
		goto out;
	}
	for (unsigned i = 0; i < s.nw; i++)
		s.w[i].x = x;
	err = pmon__rec_reader_run(rd, s.nw, &ops, &s);
	for (unsigned i = 0; i < s.nw; i++)
		worker_done(&s.w[i]);
	for (unsigned i = 1; i < s.nw && !err; i++) {
		err = worker_merge(&s.w[0], &s.w[i]);
		worker_free(&s.w[i]);
		memset(&s.w[i], 0, sizeof(s.w[i]));
	}
	if (err)
		goto out;
	take_stats(x, pmon__rec_reader_stats(rd));
	err = pmon__name_leaves(x, &s.w[0].leaves);
	x->r->callchains = s.w[0].callchains;
	if (!err && !x->want && !x->no_stacks)
		err = pmon__name_stacks(x, &s.w[0].stacks, s.w[0].callchains);
out:
	for (unsigned i = 0; s.w && i < s.nw; i++)
		worker_free(&s.w[i]);
	free(s.w);
	pmon__rec_reader_free(rd);
	return err;
}

static void ctx_free(struct ctx *x)
{
	free(x->evids);
	for (size_t i = 0; i < x->nunw; i++)
		pmon__unw_free(x->unw[i].u);
	free(x->unw);
	free(x->dipath);
	free(x->dipath_dir);
	for (size_t i = 0; i < x->nfk; i++)
		free(x->fk[i].name);
	free(x->fk);
	pmon__ksyms_free(&x->kfile);
	free(x->vdso);
	pmon__tp_free(x->tp);
	pmon__counter_free(&x->agg);
	pmon__counter_free(&x->frames);
	report_units_free(x);
	free(x->vis);
	free(x->hits.e);
	for (size_t i = 0; i < x->nfiles; i++) {
		pmon__file_close(&x->files[i]);
		free(x->files[i].path);
	}
	free(x->files);
	free(x->maps);
	pmon__maps_free(x);
	for (size_t i = 0; i < x->njit; i++) {
		for (size_t k = 0; k < x->jit[i].n; k++)
			free(x->jit[i].s[k].name);
		free(x->jit[i].s);
	}
	free(x->jit);
	for (size_t i = 0; i < x->sc.cap; i++)
		free(x->sc.name[i]), free(x->sc.line[i]), free(x->sc.inl[i]);
	free(x->sc.file), free(x->sc.off), free(x->sc.name), free(x->sc.addr), free(x->sc.line);
	free(x->sc.inl);
	free(x->comms.e);
}

static void ctx_init(struct ctx *x, struct pmon_report *r, const struct pmon_report_opts *o)
{
	memset(x, 0, sizeof(*x));
	x->r = r;
	x->sort = o ? o->sort : PMON_SORT_SYMBOL;
	x->inlines = o && o->inlines;
	x->no_stacks = PMON_OPTS_GET(o, no_stacks, false);
	x->stack_event_name = o && o->event && o->event[0] ? o->event : NULL;
	x->symfs = PMON_OPTS_GET(o, symfs, NULL);
	x->kallsyms = PMON_OPTS_GET(o, kallsyms, NULL);
	/* elfutils' default path with the user's directory (absolute: elfutils
	 * reads a relative one as relative to the binary) before /usr/lib/debug:
	 * a stripped file's debuginfo is found through its build-id note. */
	char *abs = o && o->debug_dir && o->debug_dir[0] ? realpath(o->debug_dir, NULL) : NULL;
	if (abs && asprintf(&x->dipath, ":.debug:%s:/usr/lib/debug", abs) < 0)
		x->dipath = NULL;
	free(abs);
	x->debug_dir = NULL;
	if (x->dipath) {
		x->dipath_dir = strdup(x->dipath + strlen(":.debug:"));
		if (x->dipath_dir)
			x->dipath_dir[strlen(x->dipath_dir) - strlen(":/usr/lib/debug")] = '\0';
		x->debug_dir = x->dipath_dir;
	}
	x->cb = (Dwfl_Callbacks){ .find_debuginfo = dwfl_standard_find_debuginfo,
				  .section_address = dwfl_offline_section_address,
				  .debuginfo_path = x->dipath ? &x->dipath : NULL };
}

/* After a scan: the event asked for must be one the recording holds. */
static int check_event(struct ctx *x, const char *path)
{
	struct pmon_report *r = x->r;
	char have[512] = "";
	size_t off = 0;

	r->stack_event = x->stack_ev;
	if (!x->stack_event_name || x->stack_ev_found ||
	    (r->nevents == 1 && event_is(r->events[0].name, x->stack_event_name)))
		return 0;
	for (size_t i = 0; i < r->nevents; i++) {
		int w = snprintf(have + off, sizeof(have) - off, "%s%s", i ? ", " : "",
				 r->events[i].name);
		if (w < 0 || (size_t)w >= sizeof(have) - off)
			break;
		off += (size_t)w;
	}
	return pmon__err(-ENOENT, "event '%s' is not in %s (it holds: %s)", x->stack_event_name,
			 path, have);
}

/* The stale-file note of a finished scan. */
static void note_stale(struct ctx *x)
{
	size_t n;

	if (x->nstale)
		pmon__fmt(x->r->stale, sizeof(x->r->stale),
			  "%u file%s changed since the recording and no debuginfo has the "
			  "recorded build id (%s): %s samples are [unknown]; --debug-dir DIR "
			  "with DIR/.build-id/ names them",
			  x->nstale, x->nstale > 1 ? "s" : "", x->stale_first,
			  x->nstale > 1 ? "their" : "its");
	n = strnlen(x->r->stale, sizeof(x->r->stale) - 1);
	if (x->kernel_note[0])
		pmon__fmt(x->r->stale + n, sizeof(x->r->stale) - n, "%s%s", n ? "; " : "",
			  x->kernel_note);
}

void pmon_report_release(struct pmon_report *r)
{
	free(r->e);
	for (size_t i = 0; i < r->nframes; i++)
		free(r->frames[i].symbol), free(r->frames[i].dso);
	free(r->frames);
	for (size_t i = 0; i < r->nstacks; i++)
		free(r->stacks[i].frame);
	free(r->stacks);
	pmon__sites_free(r->sites);
	memset(r, 0, sizeof(*r));
}

static int report_scan(const char *path, const struct pmon_report_opts *opts,
		       struct pmon_report *r);

int pmon_report_read(const char *path, const struct pmon_report_opts *user, struct pmon_report *r)
{
	struct pmon_report_opts oc = { 0 };
	const struct pmon_report_opts *opts = user ? &oc : NULL;
	int err;

	memset(r, 0, sizeof(*r));
	if ((err = PMON_OPTS_COPY(&oc, user, struct pmon_report_opts, sz)))
		return err;
	if (pmon__view_wanted(opts))
		err = pmon__view_read(path, opts, r);
	else
		err = report_scan(path, opts, r);
	/* When it was recorded: the file's own word, else (perf.data, older
	 * recordings) its mtime, as perf report's "captured on" is. */
	struct stat st;
	if (!err && !r->header.captured && strcmp(path, "-") && !stat(path, &st))
		r->header.captured = st.st_mtime;
	return err;
}

/* pmon_report_read() by symbol, DSO or line: the parallel readers. */
static int report_scan(const char *path, const struct pmon_report_opts *opts, struct pmon_report *r)
{
	struct ctx x;
	int err;

	ctx_init(&x, r, opts);
	err = scan(path, &x);
	if (!err)
		err = check_event(&x, path);
	note_stale(&x);
	if (!err)
		err = pmon__build_entries(&x, r);
	ctx_free(&x);
	if (err)
		pmon_report_release(r);
	return err;
}

void pmon_annotation_release(struct pmon_annotation *a)
{
	free(a->insn);
	for (size_t i = 0; i < a->nsrcs; i++)
		free(a->srcs[i]);
	free(a->srcs);
	memset(a, 0, sizeof(*a));
}

/* The @n symbols with most samples, as "a, b, c", for an error message. */
static void hottest(const struct counter *c, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int k = 0; k < 5; k++) {
		size_t best = SIZE_MAX;
		for (size_t i = 0; i < c->cap; i++)
			if (c->key[i] && c->samples[i] &&
			    (best == SIZE_MAX || c->samples[i] > c->samples[best]))
				best = i;
		if (best == SIZE_MAX)
			break;
		int w = snprintf(buf + off, len - off, "%s%s", off ? ", " : "", c->key[best]);
		if (w < 0 || (size_t)w >= len - off)
			break;
		off += (size_t)w;
		c->samples[best] = 0; /* taken; the counter is not used again */
	}
}

int pmon__annotate_hits(const char *path, const char *symbol, const struct pmon_report_opts *user,
			struct pmon_annotation *a, struct pmon__hits *h)
{
	struct pmon_report_opts oc = { 0 };
	const struct pmon_report_opts *opts = user ? &oc : NULL;
	int cerr = PMON_OPTS_COPY(&oc, user, struct pmon_report_opts, sz);

	if (cerr)
		return cerr;
	struct pmon_report r = { 0 };
	struct pmon_report_opts o = { .sz = sizeof(o),
				      .sort = PMON_SORT_SYMBOL,
				      .debug_dir = opts ? opts->debug_dir : NULL,
				      .event = opts ? opts->event : NULL,
				      .symfs = PMON_OPTS_GET(opts, symfs, NULL),
				      .kallsyms = PMON_OPTS_GET(opts, kallsyms, NULL),
				      .no_stacks = true };
	struct ctx *x;
	char hot[512];
	int err;

	memset(a, 0, sizeof(*a));
	memset(h, 0, sizeof(*h));
	if (!symbol) { /* the hottest symbol of the recording */
		err = pmon_report_read(path, &o, &r);
		if (err)
			return err;
		if (!r.n) {
			pmon_report_release(&r);
			return pmon__err(-ENOENT, "%s holds no samples", path);
		}
		size_t top = 0; /* the hottest of the event asked for */
		while (top + 1 < r.n && r.e[top].event != r.stack_event)
			top++;
		pmon__strlcpy(a->symbol, r.e[top].symbol, sizeof(a->symbol));
		pmon_report_release(&r);
		if (!strcmp(a->symbol, "[unknown]"))
			return pmon__err(-ENOENT, "%s: the hottest code has no symbol: name one",
					 path);
	} else {
		pmon__strlcpy(a->symbol, symbol, sizeof(a->symbol));
	}
	if (!(h->x = x = malloc(sizeof(*x))))
		return -ENOMEM;
	ctx_init(x, &r, &o);
	x->want = a->symbol;
	x->no_stacks = true;
	err = scan(path, x);
	if (!err)
		err = check_event(x, path);
	a->total = r.samples;
	a->total_period = r.period;
	/* The file holding most of the symbol's samples. */
	int best = -1;
	uint64_t *per_file = err ? NULL : calloc(x->nfiles + 1, sizeof(uint64_t));
	for (size_t i = 0; per_file && i < x->hits.cap; i++) {
		const struct hit *e = &x->hits.e[i];
		if (e->file < 0)
			continue;
		per_file[e->file] += e->samples;
		if (best < 0 || per_file[e->file] > per_file[best])
			best = e->file;
	}
	if (!err && !per_file)
		err = -ENOMEM;
	if (!err && best < 0) {
		if (x->want_where)
			err = pmon__err(-ENOTSUP,
					"'%s' is %s code: its instructions are in no file on disk",
					a->symbol, x->want_where);
		else {
			hottest(&x->agg, hot, sizeof(hot));
			err = pmon__err(-ENOENT, "no samples in '%s'%s%s%s", a->symbol,
					hot[0] ? " (most samples: " : "", hot, hot[0] ? ")" : "");
		}
	}
	free(per_file);
	x->r = NULL; /* @r was this call's: the hits and modules outlive it */
	if (!err) {
		h->mod = x->files[best].mod;
		pmon__strlcpy(a->dso, x->files[best].path, sizeof(a->dso));
		h->addr = malloc((x->hits.n ? x->hits.n : 1) * sizeof(*h->addr));
		h->samples = malloc((x->hits.n ? x->hits.n : 1) * sizeof(*h->samples));
		h->period = malloc((x->hits.n ? x->hits.n : 1) * sizeof(*h->period));
		if (!h->addr || !h->samples || !h->period)
			err = -ENOMEM;
	}
	for (size_t i = 0; !err && i < x->hits.cap; i++) {
		const struct hit *e = &x->hits.e[i];
		if (e->file != best)
			continue;
		h->addr[h->n] = e->addr;
		h->samples[h->n] = e->samples;
		h->period[h->n++] = e->period;
	}
	if (err)
		pmon__hits_release(h);
	return err;
}

void pmon__hits_release(struct pmon__hits *h)
{
	if (h->x) {
		ctx_free(h->x);
		free(h->x);
	}
	free(h->addr);
	free(h->samples);
	free(h->period);
	memset(h, 0, sizeof(*h));
}

/* ---- a walk over the samples in file order (script.c) -------------------- */

struct pmon__rec_reader *pmon__report_open(const char *path, const struct pmon_report_opts *o,
					   struct pmon_report *r, struct ctx *x)
{
	struct pmon__rec_header h;
	struct pmon__rec_reader *rd;
	int err;

	memset(r, 0, sizeof(*r));
	ctx_init(x, r, o);
	x->no_stacks = true;
	if (!(rd = pmon__rec_reader_open(path, &h))) {
		err = -errno;
		ctx_free(x);
		errno = -err;
		return NULL;
	}
	take_header(x, &h);
	err = pmon__maps_epoch(x);
	if (!err)
		err = pmon__rec_reader_ksyms(rd, add_ksym, x);
	if (!err && x->nfk > 1)
		qsort(x->fk, x->nfk, sizeof(*x->fk), pmon__file_ksym_cmp);
	if (!err)
		err = pmon__kernel_pick(x, rd, x->kallsyms);
	if (err) {
		pmon__report_close(rd, x);
		errno = -err;
		return NULL;
	}
	/* perf.data's tracepoint formats (pmon's came with its CHNS records) */
	const struct pmon__perf_info *pi = pmon__rec_reader_perf_info(rd);
	if (!x->tp && pi && pi->tracing_data)
		x->tp = pmon__tp_new_perf(pi->tracing_data, pi->tracing_data_size);
	return rd;
}

int pmon__report_ordered(struct ctx *x, const struct pmon__record *rec)
{
	return apply_record(x, rec);
}

void pmon__report_close(struct pmon__rec_reader *rd, struct ctx *x)
{
	pmon__rec_reader_free(rd);
	note_stale(x);
	ctx_free(x);
}

/* ---- records without a recording (a live view, live.c) ------------------- */

int pmon__report_init(struct ctx *x, struct pmon_report *r, const struct pmon_report_opts *o)
{
	ctx_init(x, r, o);
	x->no_stacks = true;
	return pmon__maps_epoch(x);
}

void pmon__report_fini(struct ctx *x)
{
	ctx_free(x);
}
