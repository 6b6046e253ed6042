// SPDX-License-Identifier: MIT
/*
 * pmon top's live side: the counters for the rows (reopened when the rows
 * or the ring change), the sampler behind the per-process view, one
 * interval's readings turned into rates, history, log lines and batch
 * lines, and the loop that ticks until the run ends. Counting is
 * libpmon's (pmon_monitor, pmon_sampler); the run (struct pmon_run) is the
 * caller's, which this only watches. Entry points in top.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <langinfo.h>
#include <stdlib.h>
#include <string.h>

#include "top/view.h"

#define now pmon_monotonic_s

struct top_view *top_view__new(const struct top_opts *o)
{
	struct top_view *v;

	if (!o->nev || o->nev > TOP_MAXEV) {
		errno = EINVAL;
		return NULL;
	}
	if (!(v = calloc(1, sizeof(*v))))
		return NULL;
	if (!(v->acc = calloc(TOP_MAXPROC, sizeof(*v->acc)))) {
		free(v);
		return NULL;
	}
	v->o = *o;
	v->s.nev = o->nev;
	for (size_t i = 0; i < o->nev; i++)
		snprintf(v->s.ev[i].text, sizeof(v->s.ev[i].text), "%s", o->events[i]);
	v->o.events = NULL; /* the caller's array need not outlive this call */
	v->s.interval_ms = o->interval_ms;
	v->s.per_proc = o->per_proc;
	v->fn.on = o->functions;
	return v;
}

void top_view__free(struct top_view *v)
{
	if (!v)
		return;
	pmon_sampler__close(v->smp);
	top_funcs__close(v);
	free(v->acc);
	pmon_monitor__close(v->mon);
	pmon_evlist__free(v->list);
	free(v->cur);
	free(v->unit_cur);
	for (size_t i = 0; i < v->nnames; i++)
		free(v->names[i]);
	free(v->names);
	free(v);
}

const char *top_view__status(const struct top_view *v)
{
	return v->s.status;
}

struct pmon_monitor *top_view__monitor(const struct top_view *v)
{
	return v->mon;
}

void top_view__set_log(struct top_view *v, FILE *log, const char *path, bool json)
{
	v->log = log;
	v->logpath = path;
	v->log_json = json;
}

int top_view__open(struct top_view *v)
{
	return top_view__reopen(v);
}

void top_view__start(struct top_view *v)
{
	top_view__sampler(v);
	top_funcs__open(v);
}

/* (Re)open the counters for the current events and ring. */
int top_view__reopen(struct top_view *v)
{
	struct top_state *s = &v->s;
	struct pmon_evlist *l = pmon_evlist__new(NULL);
	const char *mod = top_ring__modifier(s->ring);
	int err = 0;

	if (!l)
		return -ENOMEM;
	for (size_t i = 0; i < s->nev && !err; i++) {
		char spec[160];
		snprintf(spec, sizeof(spec), "%s%s", s->ev[i].text, mod);
		err = pmon_evlist__add(l, spec);
	}
	if (err) {
		snprintf(s->status, sizeof(s->status), "%s", pmon_errdetail());
		pmon_evlist__free(l);
		return err;
	}
	/* New counters are a new baseline: rates never mix two sets of them. */
	struct pmon_monitor *m = pmon_monitor__open(l, v->o.target, v->o.how);
	if (!m) {
		snprintf(s->status, sizeof(s->status), "%s", pmon_errdetail());
		pmon_evlist__free(l);
		return -errno;
	}
	pmon_monitor__close(v->mon);
	pmon_evlist__free(v->list);
	free(v->cur);
	free(v->unit_cur);
	v->mon = m;
	v->list = l;
	v->dt = 0;
	v->reopened = true;
	v->cur = calloc(s->nev, sizeof(*v->cur));
	v->unit_cur = calloc(s->nev * pmon_counters__nunits(pmon_monitor__counters(m)),
			     sizeof(*v->unit_cur));
	if (!v->cur || !v->unit_cur)
		return -ENOMEM;
	pmon_counters__read(pmon_monitor__counters(m), v->cur);
	for (size_t i = 0; i < s->nev; i++)
		top_row__reset(&s->ev[i], v->cur[i].status != PMON_COUNT_NOT_SUPPORTED,
			       v->cur[i].reason);
	memset(v->cur, 0, s->nev * sizeof(*v->cur));
	return 0;
}

/*
 * (Re)open the sampler behind the per-process view when it is on and the
 * selected event or the ring changed: the event sampled at about 250 Hz
 * per CPU (the kernel adjusts the period; each sample says how many events
 * it stands for).
 */
void top_view__sampler(struct top_view *v)
{
	struct top_state *s = &v->s;

	if (!s->per_proc) {
		pmon_sampler__close(v->smp);
		v->smp = NULL;
		return;
	}
	if ((v->smp || v->smp_why[0]) && !strcmp(v->smp_text, s->ev[s->sel].text) &&
	    v->smp_ring == s->ring)
		return;
	pmon_sampler__close(v->smp);
	v->smp = NULL;
	v->nacc = v->nshown = 0;
	snprintf(v->smp_text, sizeof(v->smp_text), "%s", s->ev[s->sel].text);
	v->smp_ring = s->ring;
	v->smp_why[0] = '\0';
	struct pmon_evlist *l = pmon_evlist__new(NULL);
	const char *mod = top_ring__modifier(s->ring);
	char spec[160];
	struct pmon_sample_opts so = {
		.sz = sizeof(so), .freq = 250, .pages = 16, .open = v->o.how
	};
	snprintf(spec, sizeof(spec), "%s%s", s->ev[s->sel].text, mod);
	/* Opened on a command before it runs (top_view__start()), the sampler
	 * starts at its exec, so that the processes it forks at once inherit
	 * it; later (another event, the 't' key) it starts now, on every
	 * thread. */
	if (!l || pmon_evlist__add(l, spec) ||
	    !(v->smp = pmon_sampler__open(l, v->o.target, &so)) ||
	    (!v->o.how->enable_on_exec && pmon_sampler__enable(v->smp))) {
		snprintf(v->smp_why, sizeof(v->smp_why), "cannot sample %s: %s", spec,
			 pmon_errdetail());
		pmon_sampler__close(v->smp);
		v->smp = NULL;
	}
	pmon_evlist__free(l);
}

/* A SAMPLE record's pid and period, added to the interval's processes. */
static int proc_add(void *ctx, const void *rec, size_t len)
{
	struct top_view *v = ctx;
	const struct perf_event_header *h = rec;
	uint64_t st = pmon_sampler__sample_type(v->smp);
	struct pmon_sample smp;

	/* The library's one sample parser (lib/sample/parse.c). */
	if (h->type != PERF_RECORD_SAMPLE || !(st & PERF_SAMPLE_TID) ||
	    pmon_sample__parse(rec, len, st, pmon_sampler__regs_user(v->smp), &smp))
		return 0;
	uint64_t period = st & PERF_SAMPLE_PERIOD ? smp.period : 1;
	top_procs__add(v->acc, &v->nacc, (pid_t)smp.pid, (double)period);
	return 0;
}

/* The interval's samples into the top processes, rates over @dt seconds. */
static void proc_interval(struct top_view *v, double dt)
{
	if (!v->smp || !v->acc)
		return;
	v->nacc = 0;
	pmon_sampler__drain(v->smp, proc_add, v);
	top_procs__sort(v->acc, v->nacc);
	/* In the event's display unit, as the rate rows above (task-clock: msec). */
	const struct pmon_event_desc *d = pmon_evlist__event(v->list, v->s.sel);
	double scale = d && d->scale > 0 ? d->scale : 1.0;
	v->shown_total = 0;
	for (size_t i = 0; i < v->nacc; i++)
		v->shown_total += v->acc[i].period * scale / dt;
	v->nshown = v->nacc < TOP_SHOWPROC ? v->nacc : TOP_SHOWPROC;
	for (size_t i = 0; i < v->nshown; i++) {
		struct top_proc *p = &v->shown[i];
		char path[64];
		*p = v->acc[i];
		p->period *= scale / dt;
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)p->pid);
		FILE *f = p->pid ? fopen(path, "re") : NULL;
		if (!f || !fgets(p->comm, sizeof(p->comm), f))
			snprintf(p->comm, sizeof(p->comm), "%s", p->pid ? "[exited]" : "[idle]");
		p->comm[strcspn(p->comm, "\n")] = '\0';
		if (f)
			fclose(f);
	}
}

static void log_interval(struct top_view *v, double ts, double dt)
{
	for (size_t i = 0; i < v->s.nev && v->log; i++) {
		const struct pmon_event_desc *d = pmon_evlist__event(v->list, i);
		double x = v->cur[i].value;
		if (v->log_json)
			fprintf(v->log,
				"{\"interval\":%.6f,\"event\":\"%s\",\"value\":%.6f,\"unit\":\"%"
				"s\","
				"\"rate\":%.6f}\n",
				ts, d->name, x, d->unit, x / dt);
		else if (v->s.ev[i].ok)
			fprintf(v->log, "%.9f,%.2f,%s,%s,%llu,%.2f,%.2f,/s\n", ts, x, d->unit,
				d->name, (unsigned long long)v->cur[i].running,
				v->cur[i].running_pct, x / dt);
		else
			fprintf(v->log, "%.9f,<not supported>,%s,%s,0,100.00,,\n", ts, d->unit,
				d->name);
	}
	if (v->log && v->o.output_failed(v->log, v->logpath))
		v->out_failed = true;
}

/* --batch: a line per event, then the processes. */
static void batch_lines(struct top_view *v, double ts)
{
	FILE *out = v->o.out;

	for (size_t i = 0; i < v->s.nev; i++) {
		const struct pmon_event_desc *d = pmon_evlist__event(v->list, i);
		if (v->s.ev[i].ok)
			fprintf(out, "%10.3f %-28s %16.2f %s%s/s\n", ts, d->name, v->s.ev[i].rate,
				d->unit, d->unit[0] ? "" : "events");
		else
			fprintf(out, "%10.3f %-28s <not supported> %s\n", ts, d->name,
				v->s.ev[i].why);
	}
	if (v->s.per_proc && v->smp_why[0])
		fprintf(out, "%10.3f   %s\n", ts, v->smp_why);
	for (size_t i = 0; v->s.per_proc && i < v->nshown; i++) {
		const struct pmon_event_desc *d = pmon_evlist__event(v->list, v->s.sel);
		fprintf(out, "%10.3f   pid %-8d %-16s %16.2f %s%s/s %6.2f%% of %s\n", ts,
			(int)v->shown[i].pid, v->shown[i].comm, v->shown[i].period, d->unit,
			d->unit[0] ? "" : "events",
			v->shown_total > 0 ? 100.0 * v->shown[i].period / v->shown_total : 0.0,
			d->name);
	}
	if (v->o.output_failed(out, NULL))
		v->out_failed = true; /* a full disk, or `| head` has read enough */
}

/* One interval: the counts since the last reading over the real time
 * between the two readings, history, log. */
static void sample(struct top_view *v)
{
	double tn = now(), dt;

	if (pmon_monitor__read_delta(v->mon, v->cur, v->unit_cur, &dt) || dt <= 0)
		return;
	v->dt = dt;
	for (size_t i = 0; i < v->s.nev; i++)
		top_row__push(&v->s.ev[i], v->cur[i].value / dt);
	log_interval(v, tn - v->t0, dt);
	proc_interval(v, dt);
	if (v->o.batch)
		batch_lines(v, tn - v->t0);
	top_funcs__interval(v, tn - v->t0);
}

int top_view__run(struct top_view *v)
{
	struct top_state *s = &v->s;

	if (!v->o.batch) {
		/* cli/pmon.c set LC_CTYPE (ncurses needs it for the trace's block
		 * characters); numbers stay in the C locale. */
		v->utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
		top_screen__open(v);
	}
	struct pmon_ticker tk;
	pmon_ticker__init(&tk, (double)s->interval_ms / 1e3);
	v->t0 = tk.start;
	v->reopened = false;
	unsigned long done = 0;
	bool quit = false;
	while (!quit && !pmon_run__signal(v->o.run) && !v->out_failed) {
		double wait = pmon_ticker__remaining(&tk);
		if (!v->o.batch) {
			top_screen__draw(v);
			quit = top_screen__wait(v, wait > 0 ? (int)(wait * 1000) : 0);
		} else if (wait > 0) {
			pmon_ticker__sleep(&tk);
		}
		if (v->reopened) {
			/* A whole interval from the new counters' base, not the
			 * rest of the old one (an 'a' prompt left it overdue:
			 * the next was microseconds long). */
			v->reopened = false;
			pmon_ticker__init(&tk, (double)s->interval_ms / 1e3);
		}
		if (pmon_ticker__remaining(&tk) > 0)
			continue;
		if (!s->paused) {
			sample(v);
			done++;
		}
		pmon_ticker__set_step(&tk, (double)s->interval_ms / 1e3); /* keys + and - */
		pmon_ticker__advance(&tk);
		if (v->o.count && done >= v->o.count)
			quit = true;
		if (pmon_run__done(v->o.run)) /* the command or the processes ended */
			quit = true;
	}
	if (pmon_run__signal(v->o.run) && !s->paused && !v->out_failed)
		sample(v); /* the interval the signal cut short: to the log too */
	if (!v->o.batch)
		top_screen__close(); /* the terminal as it was */
	return v->out_failed ? -EIO : 0;
}
