// SPDX-License-Identifier: MIT
/*
 * A live profile (pmon_report_live, pmon/sample.h): pmon top's hottest
 * functions, perf top's view. No recording: the sampler's records come one
 * by one in time order, decoded by the recording reader's decoder
 * (sample/reader.h) and counted by a live view (view.c) that names them as
 * pmon report does (maps.c, symbols.c); what the sampler could not see, the
 * mappings of processes that ran before it opened, is read from /proc once
 * per process. Every named sample is also kept by address, so that a
 * function can be annotated (annotate.c's disassembly) at any time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "report/ctx.h"
#include "sample/reader.h"
#include "util/procmaps.h"
#include <pmon/sample.h>

struct pmon_report_live {
	struct view *v;
	struct ctx *x; /* the view's */
	struct pmon_report cur; /* the interval's totals (the view counts into it) */
	uint64_t sample_type, regs_user;
	struct hit_tab hits; /* every sample in a file since the start, by address */
	uint32_t *known; /* processes whose maps are known, open addressing; 0: empty */
	size_t nknown, capknown;
	char name[4096]; /* the decoder's buffer for a map's file name */
};

/* Is @pid's set of maps known? Marks it so; false the first time. */
static bool known(struct pmon_report_live *l, uint32_t pid, bool *nomem)
{
	if (l->nknown * 2 >= l->capknown) {
		size_t cap = l->capknown ? l->capknown * 2 : 256;
		uint32_t *k = calloc(cap, sizeof(*k));
		if (!k) {
			*nomem = true;
			return true;
		}
		for (size_t i = 0; i < l->capknown; i++) {
			if (!l->known[i])
				continue;
			size_t j = pmon__mix64(l->known[i]) & (cap - 1);
			while (k[j])
				j = (j + 1) & (cap - 1);
			k[j] = l->known[i];
		}
		free(l->known);
		l->known = k;
		l->capknown = cap;
	}
	size_t j = pmon__mix64(pid) & (l->capknown - 1);
	while (l->known[j] && l->known[j] != pid)
		j = (j + 1) & (l->capknown - 1);
	if (l->known[j])
		return true;
	l->known[j] = pid;
	l->nknown++;
	return false;
}

/* The code @pid had mapped before the sampler saw it, and its command, from
 * /proc (as pmon record writes them for a process it attaches to). A
 * process that has gone keeps its samples [unknown]. */
static int load_proc(struct pmon_report_live *l, uint32_t pid)
{
	char path[64], line[4352], comm[32] = "";
	struct loc loc;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	while (!err && fgets(line, sizeof(line), f)) {
		struct pmon__maps_line ml;
		if (pmon__maps_parse_line(line, &ml) || ml.perms[2] != 'x' || ml.name[0] != '/')
			continue;
		err = pmon__maps_add(l->x, pid, ml.start, ml.end - ml.start, ml.pgoff, ml.name,
				     NULL, 0);
	}
	fclose(f);
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	if (!err && (f = fopen(path, "re"))) {
		if (fgets(comm, sizeof(comm), f)) {
			comm[strcspn(comm, "\n")] = '\0';
			struct pmon__record rec = {
				.type = PERF_RECORD_COMM,
				.comm = { .pid = pid, .tid = pid, .comm = comm }
			};
			err = pmon__view_live_record(l->v, &rec, &loc);
		}
		fclose(f);
	}
	return err ? err : pmon__maps_epoch(l->x);
}

struct pmon_report_live *pmon_report_live__new(uint64_t sample_type, uint64_t regs_user,
					       const struct pmon_report_opts *user)
{
	struct pmon_report_opts o = { .sz = sizeof(o) };
	struct pmon_report_live *l;
	int err;

	if ((err = PMON_OPTS_COPY(&o, user, struct pmon_report_opts, sz))) {
		errno = -err;
		return NULL;
	}
	if (!(l = calloc(1, sizeof(*l))))
		return NULL;
	l->sample_type = sample_type;
	l->regs_user = regs_user;
	pmon__strlcpy(l->cur.events[0].name, o.event ? o.event : "samples",
		      sizeof(l->cur.events[0].name));
	l->cur.nevents = 1;
	if (!(l->v = pmon__view_live_new(&o, &l->cur))) {
		err = errno;
		free(l);
		errno = err;
		return NULL;
	}
	l->x = pmon__view_ctx(l->v);
	l->x->sample_type = sample_type;
	l->x->regs_user = regs_user;
	return l;
}

void pmon_report_live__free(struct pmon_report_live *l)
{
	if (!l)
		return;
	pmon__view_live_free(l->v);
	free(l->hits.e);
	free(l->known);
	free(l);
}

int pmon_report_live__view(struct pmon_report_live *l, const struct pmon_report_opts *user)
{
	struct pmon_report_opts o = { .sz = sizeof(o) };
	int err = PMON_OPTS_COPY(&o, user, struct pmon_report_opts, sz);

	return err ? err : pmon__view_live_set(l->v, &o);
}

/* The processes a record needs the maps of before it is applied: a
 * sample's or a map's (the rest of its maps), a fork's parent (the child
 * starts with a copy); a process that execs starts afresh. */
static int before(struct pmon_report_live *l, const struct pmon__record *r)
{
	uint32_t pid = 0;
	bool nomem = false;
	int err = 0;

	switch (r->type) {
	case PERF_RECORD_SAMPLE:
		pid = r->sample.pid;
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		pid = r->mmap.pid;
		break;
	case PERF_RECORD_FORK:
		pid = r->task.ppid;
		break;
	case PERF_RECORD_COMM:
		if (r->comm.exec && r->comm.pid)
			known(l, r->comm.pid, &nomem);
		break;
	default:
		break;
	}
	if (pid && pid != UINT32_MAX && !known(l, pid, &nomem))
		err = load_proc(l, pid);
	if (r->type == PERF_RECORD_FORK && r->task.pid)
		known(l, r->task.pid, &nomem);
	return nomem ? -ENOMEM : err;
}

int pmon_report_live__add(struct pmon_report_live *l, const void *rec, size_t len)
{
	struct pmon__record r;
	struct loc loc;
	int err;

	if (!l || !rec || len < sizeof(struct perf_event_header))
		return -EINVAL;
	if (pmon__record_decode(rec, len, l->sample_type, l->regs_user, l->name, &r))
		return 0; /* one the decoder cannot read: as a recording's reader skips it */
	if ((err = before(l, &r)) || (err = pmon__view_live_record(l->v, &r, &loc)))
		return err;
	if (r.type != PERF_RECORD_SAMPLE || loc.file < 0)
		return 0;
	uint64_t period = l->sample_type & PERF_SAMPLE_PERIOD ? r.sample.period : 1;
	return pmon__hit_add(&l->hits, loc.file, l->x->sc.addr[loc.slot], 1, period);
}

int pmon_report_live__take(struct pmon_report_live *l, struct pmon_report *out)
{
	memset(out, 0, sizeof(*out));
	out->samples = l->cur.samples;
	out->period = l->cur.period;
	out->events[0] = l->cur.events[0];
	out->nevents = 1;
	l->cur.samples = l->cur.period = 0;
	l->cur.events[0].samples = l->cur.events[0].period = 0;
	int err = pmon__view_live_take(l->v, out);
	if (err)
		pmon_report_release(out);
	return err;
}

/* A file holding @symbol (in @dso, where given) with samples; -1 if none. */
static int find_symbol(struct pmon_report_live *l, const char *symbol, const char *dso,
		       uint64_t *inside)
{
	for (size_t i = 0; i < l->hits.cap; i++) {
		const struct hit *h = &l->hits.e[i];
		if (h->file < 0)
			continue;
		struct file *f = &l->x->files[h->file];
		if (!f->mod ||
		    (dso && strcmp(pmon__base_name(f->path), dso) && strcmp(f->path, dso)))
			continue;
		const char *name = pmon__symindex_find(&f->syms, f->mod, h->addr);
		char *dm = pmon__demangle(name); /* the table shows C++ names demangled */
		bool same = name && !strcmp(dm ? dm : name, symbol);
		free(dm);
		if (same) {
			*inside = h->addr;
			return h->file;
		}
	}
	return -1;
}

int pmon_report_live__annotate(struct pmon_report_live *l, const char *symbol, const char *dso,
			       struct pmon_annotation *a)
{
	uint64_t inside = 0;
	int file, err;

	memset(a, 0, sizeof(*a));
	if (!symbol)
		return pmon__err(-EINVAL, "no symbol to annotate");
	if ((file = find_symbol(l, symbol, dso, &inside)) < 0) {
		if (dso && dso[0] == '[')
			return pmon__err(-ENOTSUP, "'%s' is in %s: its instructions are in no file",
					 symbol, dso);
		return pmon__err(-ENOENT, "no samples in '%s' yet", symbol);
	}
	const struct file *f = &l->x->files[file];
	pmon__strlcpy(a->symbol, symbol, sizeof(a->symbol));
	pmon__strlcpy(a->dso, f->path, sizeof(a->dso));
	if ((err = pmon__disassemble(f->mod, inside, a))) {
		pmon_annotation_release(a);
		return err;
	}
	uint64_t lo = a->start + pmon__module_bias(f->mod);
	for (size_t i = 0; i < l->hits.cap; i++) {
		const struct hit *h = &l->hits.e[i];
		if (h->file < 0)
			continue;
		a->total += h->samples;
		a->total_period += h->period;
		if (h->file != file || h->addr < lo || h->addr - lo >= a->size)
			continue;
		a->samples += h->samples;
		a->period += h->period;
		for (size_t k = 0; k < a->n; k++)
			if (a->insn[k].addr == h->addr - lo + a->start) {
				a->insn[k].samples += h->samples;
				a->insn[k].period += h->period;
				break;
			}
	}
	return 0;
}
