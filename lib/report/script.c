// SPDX-License-Identifier: MIT
/*
 * The samples of a recording one by one, in file order, symbolized
 * (pmon_report_foreach_sample(), for pmon script): one reader thread, so
 * that the maps, forks and commands a sample sees are those of the records
 * before it. The names come from symbols.c as the report's do; the offsets
 * into the symbols and the file-relative addresses are what perf script
 * prints (tools/perf/builtin-script.c, sample__fprintf_callchain()).
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "report/ctx.h"
#include "sample/reader.h"
#include <pmon/sample.h>

#define SCRIPT_MAX_FRAMES 256

struct walk {
	struct ctx x;
	struct pmon_report r;
	int (*cb)(void *ctx, const struct pmon_report_sample *s);
	void *cbctx;
	struct comm_tab comms;
	struct pmon_report_sample_frame chain[SCRIPT_MAX_FRAMES];
};

/* Name @ip of process @pid at @epoch into @f; @lookup is the address to look
 * up (a return address minus 1: inside its call). */
static void name_frame(struct walk *w, uint32_t pid, uint32_t epoch, uint64_t ip, uint64_t lookup,
		       struct pmon_report_sample_frame *f)
{
	struct loc l;
	uint64_t off;

	pmon__locate(&w->x, pid, lookup, epoch, &l);
	*f = (struct pmon_report_sample_frame){ .ip = ip, .addr = ip, .sym = l.sym, .dso = l.dso };
	if (!strcmp(l.dso, "[kernel]"))
		f->dso = "[kernel.kallsyms]";
	if (!strcmp(l.sym, "[kernel]"))
		f->sym = "[unknown]";
	if (l.file >= 0 || f->dso[0] == '/') {
		long i = l.map >= 0 ? l.map : pmon__maps_find(&w->x, pid, lookup, epoch);
		if (i >= 0)
			f->addr = ip - w->x.maps[i].start + w->x.maps[i].pgoff;
	}
	if (strcmp(f->sym, "[unknown]") && pmon__symoff(&w->x, &l, lookup, &off)) {
		f->symoff = off + (ip - lookup);
		f->has_symoff = true;
	}
}

/* The frames of @sm's call chain into w->chain (context markers left out;
 * a caller's frame looked up at its return address minus 1). */
static size_t chain_of(struct walk *w, const struct pmon_sample *sm, uint32_t epoch)
{
	size_t n = 0;
	bool fresh = true;

	for (uint64_t k = 0; k < sm->nr && n < SCRIPT_MAX_FRAMES; k++) {
		uint64_t v = pmon_sample__chain(sm, k);
		if (v >= (uint64_t)-4095) { /* PERF_CONTEXT_* */
			fresh = true;
			continue;
		}
		name_frame(w, sm->pid, epoch, v, !fresh && v ? v - 1 : v, &w->chain[n++]);
		fresh = false;
	}
	/* DWARF mode: the user frames unwound from the registers and stack. */
	if (sm->nregs == 17 && sm->stack_dyn && n < SCRIPT_MAX_FRAMES) {
		uint64_t regs[17], pcs[128];
		memcpy(regs, sm->regs, sizeof(regs));
		int m = pmon__maps_unwind(&w->x, sm->pid, regs, sm->stack, sm->stack_dyn, pcs, 128);
		for (int k = 0; k < m && n < SCRIPT_MAX_FRAMES; k++)
			name_frame(w, sm->pid, epoch, pcs[k], k && pcs[k] ? pcs[k] - 1 : pcs[k],
				   &w->chain[n++]);
	}
	return n;
}

static int on_sample(struct walk *w, const struct pmon_sample *sm, uint32_t epoch)
{
	struct pmon_report *r = &w->r;
	struct pmon_report_sample s = { .sample_type = w->x.sample_type,
					.pid = sm->pid,
					.tid = sm->tid,
					.cpu = sm->cpu,
					.time = sm->time,
					.period = sm->period,
					.addr = sm->addr,
					.raw = sm->raw,
					.raw_size = sm->raw_size };

	s.event = pmon__event_of(&w->x, sm->id);
	if (s.event >= r->nevents)
		s.event = 0;
	s.event_name = r->events[s.event].name;
	s.events = r->events;
	s.nevents = r->nevents;
	if (!(s.sample_type & PERF_SAMPLE_PERIOD))
		s.period = r->events[s.event].sample_period;
	r->samples++;
	r->period += s.period;
	r->events[s.event].samples++;
	r->events[s.event].period += s.period;
	s.comm = pmon__comm_of(&w->comms, sm->pid, sm->tid);
	if (sm->raw && w->x.tp)
		s.trace = pmon__tp_print(w->x.tp, sm->raw, sm->raw_size, (int)sm->cpu);
	name_frame(w, sm->pid, epoch, sm->ip, sm->ip, &s.leaf);
	s.has_chain = sm->nr || sm->stack_dyn;
	if (s.has_chain) {
		s.nchain = chain_of(w, sm, epoch);
		s.chain = w->chain;
		r->callchains = true;
	}
	return w->cb(w->cbctx, &s);
}

static int on_record(void *arg, unsigned thread, const struct pmon__record *rec, uint32_t epoch)
{
	(void)thread;
	return rec->type == PERF_RECORD_SAMPLE ? on_sample(arg, &rec->sample, epoch) : 0;
}

static int on_ordered(void *arg, const struct pmon__record *rec)
{
	struct walk *w = arg;

	int err = pmon__comm_record(&w->comms, rec);

	return err ? err : pmon__report_ordered(&w->x, rec);
}

int pmon_report_foreach_sample(const char *path, const struct pmon_report_opts *user,
			       int (*cb)(void *ctx, const struct pmon_report_sample *s), void *ctx,
			       struct pmon_report *info)
{
	struct pmon_report_opts oc = { 0 };
	const struct pmon_report_opts *opts = user ? &oc : NULL;
	const struct pmon__rec_ops ops = { .record = on_record, .ordered = on_ordered };
	struct walk *w;
	int err;

	if (info)
		memset(info, 0, sizeof(*info));
	if (!cb)
		return pmon__err(-EINVAL, "pmon_report_foreach_sample: no callback");
	if ((err = PMON_OPTS_COPY(&oc, user, struct pmon_report_opts, sz)))
		return err;
	if (!(w = calloc(1, sizeof(*w))))
		return -ENOMEM;
	w->cb = cb;
	w->cbctx = ctx;
	struct pmon__rec_reader *rd = pmon__report_open(path, opts, &w->r, &w->x);
	if (!rd) {
		err = -errno;
		free(w);
		return err;
	}
	err = pmon__rec_reader_run(rd, 1, &ops, w);
	if (err >= 0) {
		const struct pmon__rec_stats *st = pmon__rec_reader_stats(rd);
		w->r.lost = st->lost;
		w->r.truncated = st->truncated;
		w->r.damaged_chunks = st->damaged_chunks;
		w->r.damaged_bytes = st->damaged_bytes;
		w->r.damaged_samples = st->damaged_samples;
		pmon__strlcpy(w->r.warning, st->warning, sizeof(w->r.warning));
	}
	pmon__report_close(rd, &w->x);
	if (info)
		*info = w->r; /* no entries or stacks: nothing to own */
	free(w->comms.e);
	free(w);
	return err;
}

/* perf script's field names (tools/perf/Documentation/perf-script.txt, -F). */
static const struct {
	const char *name;
	unsigned bit;
} field_names[] = {
	{ "comm", PMON_SF_COMM },     { "tid", PMON_SF_TID },	{ "pid", PMON_SF_PID },
	{ "cpu", PMON_SF_CPU },	      { "time", PMON_SF_TIME }, { "period", PMON_SF_PERIOD },
	{ "event", PMON_SF_EVENT },   { "ip", PMON_SF_IP },	{ "sym", PMON_SF_SYM },
	{ "symoff", PMON_SF_SYMOFF }, { "dso", PMON_SF_DSO },	{ "addr", PMON_SF_ADDR },
	{ "trace", PMON_SF_TRACE },
};

int pmon_report_sample_fields(const char *spec, unsigned *fields)
{
	const char *colon = spec ? strchr(spec, ':') : NULL, *comma;
	char buf[512];

	if (!spec || !fields)
		return pmon__err(-EINVAL, "no field list");
	comma = strchr(spec, ',');
	if (colon && (!comma || colon < comma))
		spec = colon + 1;
	pmon__strlcpy(buf, spec, sizeof(buf));
	bool modify = buf[0] == '+' || buf[0] == '-';
	unsigned f = modify ? *fields : 0;
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char op = modify && (*t == '+' || *t == '-') ? *t++ : '+';
		size_t i = 0;
		while (i < PMON_ARRAY_SIZE(field_names) && strcmp(field_names[i].name, t))
			i++;
		if (i == PMON_ARRAY_SIZE(field_names))
			return pmon__err(-EINVAL,
					 "unknown field '%s' (comm, tid, pid, cpu, time, period, "
					 "event, ip, sym, symoff, dso, addr, trace)",
					 t);
		f = op == '-' ? f & ~field_names[i].bit : f | field_names[i].bit;
	}
	*fields = f;
	return 0;
}
