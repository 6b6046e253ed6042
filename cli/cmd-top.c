// SPDX-License-Identifier: MIT
/*
 * pmon top: live event rates, the seeds' PMON/MTPM "events per second" and
 * P5MON/PTACH "oscilloscope", on a terminal (ncurses) or as plain lines
 * (--batch, or when standard output is not a terminal), logging every
 * interval to a file as it goes (MTPMPlus). Counting is libpmon's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curses.h>

#include "cli.h"
#include <pmon/pmon.h>

#define HIST 240
#define MAXEV 32
#define MAXPROC 4096 /* processes seen in one interval */
#define SHOWPROC 10

enum ring { RING_BOTH, RING_USER, RING_KERNEL };

struct ev {
	char text[128]; /* as the user named it, without the ring modifier */
	double rate, min, max;
	double hist[HIST];
	unsigned nhist;
	bool ok;
	char why[160];
};

/* One process's share of the selected event in the last interval. */
struct proc {
	pid_t pid;
	double period; /* events represented by its samples */
	char comm[17];
};

struct top {
	struct ev ev[MAXEV];
	size_t nev;
	enum ring ring;
	unsigned long interval_ms, count;
	bool paused, per_cpu, batch, sort_rate, help, utf8;
	size_t sel;
	char status[256];
	struct pmon_evlist *list;
	struct pmon_monitor *mon;
	struct pmon_count *cur; /* the last interval's counts */
	struct pmon_count *unit_cur; /* the same per unit (CPU) */
	double dt; /* the last interval's real length */
	bool reopened; /* new counters: the next interval starts with them */
	struct pmon_target *target; /* -p/-C checked once; then the command or all CPUs */
	struct pmon_open_opts how; /* inherit; enable_on_exec until the command runs */
	size_t npids, ncpus;
	char **cmd;
	struct pmon_run *run; /* the command, or what -p watches */
	FILE *log;
	const char *logpath;
	bool log_json;
	bool out_failed; /* the log or standard output cannot be written: stop */
	double t0;
	char **names; /* for Tab completion */
	size_t nnames, capnames;
	/* The per-process view: the selected event sampled, samples by pid. */
	bool per_proc;
	struct pmon_sampler *smp;
	char smp_text[128]; /* which event and ring it samples */
	enum ring smp_ring;
	char smp_why[200];
	struct proc *acc; /* this interval's, unsorted */
	size_t nacc;
	struct proc shown[SHOWPROC]; /* the last interval's top processes */
	size_t nshown;
	double shown_total;
};

#define now pmon_monotonic_s

/* (Re)open the counters for the current events and ring. */
static int reopen(struct top *t)
{
	struct pmon_evlist *l = pmon_evlist__new(NULL);
	const char *mod = t->ring == RING_USER ? ":u" : t->ring == RING_KERNEL ? ":k" : "";
	int err = 0;

	if (!l)
		return -ENOMEM;
	for (size_t i = 0; i < t->nev && !err; i++) {
		char spec[160];
		snprintf(spec, sizeof(spec), "%s%s", t->ev[i].text, mod);
		err = pmon_evlist__add(l, spec);
	}
	if (err) {
		snprintf(t->status, sizeof(t->status), "%s", pmon_errdetail());
		pmon_evlist__free(l);
		return err;
	}
	/* New counters are a new baseline: rates never mix two sets of them. */
	struct pmon_monitor *m = pmon_monitor__open(l, t->target, &t->how);
	if (!m) {
		snprintf(t->status, sizeof(t->status), "%s", pmon_errdetail());
		pmon_evlist__free(l);
		return -errno;
	}
	pmon_monitor__close(t->mon);
	pmon_evlist__free(t->list);
	free(t->cur);
	free(t->unit_cur);
	t->mon = m;
	t->list = l;
	t->dt = 0;
	t->reopened = true;
	t->cur = calloc(t->nev, sizeof(*t->cur));
	t->unit_cur = calloc(t->nev * pmon_counters__nunits(pmon_monitor__counters(m)),
			     sizeof(*t->unit_cur));
	if (!t->cur || !t->unit_cur)
		return -ENOMEM;
	pmon_counters__read(pmon_monitor__counters(m), t->cur);
	for (size_t i = 0; i < t->nev; i++) {
		t->ev[i].ok = t->cur[i].status != PMON_COUNT_NOT_SUPPORTED;
		snprintf(t->ev[i].why, sizeof(t->ev[i].why), "%s",
			 t->cur[i].reason ? t->cur[i].reason : "");
		t->ev[i].nhist = 0;
		t->ev[i].min = INFINITY;
		t->ev[i].max = 0;
		t->ev[i].rate = 0;
	}
	memset(t->cur, 0, t->nev * sizeof(*t->cur));
	return 0;
}

/*
 * (Re)open the sampler behind the per-process view when it is on and the
 * selected event or the ring changed: the event sampled at about 250 Hz
 * per CPU (the kernel adjusts the period; each sample says how many events
 * it stands for).
 */
static void proc_sampler(struct top *t)
{
	if (!t->per_proc) {
		pmon_sampler__close(t->smp);
		t->smp = NULL;
		return;
	}
	if ((t->smp || t->smp_why[0]) && !strcmp(t->smp_text, t->ev[t->sel].text) &&
	    t->smp_ring == t->ring)
		return;
	pmon_sampler__close(t->smp);
	t->smp = NULL;
	t->nacc = t->nshown = 0;
	snprintf(t->smp_text, sizeof(t->smp_text), "%s", t->ev[t->sel].text);
	t->smp_ring = t->ring;
	t->smp_why[0] = '\0';
	struct pmon_evlist *l = pmon_evlist__new(NULL);
	const char *mod = t->ring == RING_USER ? ":u" : t->ring == RING_KERNEL ? ":k" : "";
	char spec[160];
	struct pmon_sample_opts o = { .sz = sizeof(o), .freq = 250, .pages = 16, .open = &t->how };
	snprintf(spec, sizeof(spec), "%s%s", t->ev[t->sel].text, mod);
	/* Opened on a command before it runs (cmd_top()), the sampler starts at
	 * its exec, so that the processes it forks at once inherit it; later
	 * (another event, the 't' key) it starts now, on every thread. */
	if (!l || pmon_evlist__add(l, spec) || !(t->smp = pmon_sampler__open(l, t->target, &o)) ||
	    (!t->how.enable_on_exec && pmon_sampler__enable(t->smp))) {
		snprintf(t->smp_why, sizeof(t->smp_why), "cannot sample %s: %s", spec,
			 pmon_errdetail());
		pmon_sampler__close(t->smp);
		t->smp = NULL;
	}
	pmon_evlist__free(l);
}

/* A SAMPLE record's pid and period, added to the interval's processes. */
static int proc_add(void *ctx, const void *rec, size_t len)
{
	struct top *t = ctx;
	const struct perf_event_header *h = rec;
	uint64_t st = pmon_sampler__sample_type(t->smp);
	struct pmon_sample smp;

	/* The library's one sample parser (lib/sample/parse.c). */
	if (h->type != PERF_RECORD_SAMPLE || !(st & PERF_SAMPLE_TID) ||
	    pmon_sample__parse(rec, len, st, pmon_sampler__regs_user(t->smp), &smp))
		return 0;
	uint32_t pid = smp.pid;
	uint64_t period = st & PERF_SAMPLE_PERIOD ? smp.period : 1;
	size_t i = 0;
	while (i < t->nacc && t->acc[i].pid != (pid_t)pid)
		i++;
	if (i == t->nacc) {
		if (t->nacc == MAXPROC)
			return 0;
		t->acc[t->nacc++] = (struct proc){ .pid = (pid_t)pid };
	}
	t->acc[i].period += (double)period;
	return 0;
}

static int cmp_proc(const void *a, const void *b)
{
	const struct proc *x = a, *y = b;

	return (x->period < y->period) - (x->period > y->period);
}

/* The interval's samples into the top processes, rates over @dt seconds. */
static void proc_interval(struct top *t, double dt)
{
	if (!t->smp || !t->acc)
		return;
	t->nacc = 0;
	pmon_sampler__drain(t->smp, proc_add, t);
	if (t->nacc > 1)
		qsort(t->acc, t->nacc, sizeof(*t->acc), cmp_proc);
	/* In the event's display unit, as the rate rows above (task-clock: msec). */
	const struct pmon_event_desc *d = pmon_evlist__event(t->list, t->sel);
	double scale = d && d->scale > 0 ? d->scale : 1.0;
	t->shown_total = 0;
	for (size_t i = 0; i < t->nacc; i++)
		t->shown_total += t->acc[i].period * scale / dt;
	t->nshown = t->nacc < SHOWPROC ? t->nacc : SHOWPROC;
	for (size_t i = 0; i < t->nshown; i++) {
		struct proc *p = &t->shown[i];
		char path[64];
		*p = t->acc[i];
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

static void log_interval(struct top *t, double ts, double dt)
{
	for (size_t i = 0; i < t->nev && t->log; i++) {
		const struct pmon_event_desc *d = pmon_evlist__event(t->list, i);
		double v = t->cur[i].value;
		if (t->log_json)
			fprintf(t->log,
				"{\"interval\":%.6f,\"event\":\"%s\",\"value\":%.6f,\"unit\":\"%"
				"s\","
				"\"rate\":%.6f}\n",
				ts, d->name, v, d->unit, v / dt);
		else if (t->ev[i].ok)
			fprintf(t->log, "%.9f,%.2f,%s,%s,%llu,%.2f,%.2f,/s\n", ts, v, d->unit,
				d->name, (unsigned long long)t->cur[i].running,
				t->cur[i].running_pct, v / dt);
		else
			fprintf(t->log, "%.9f,<not supported>,%s,%s,0,100.00,,\n", ts, d->unit,
				d->name);
	}
	if (t->log && cli_output_failed(t->log, t->logpath))
		t->out_failed = true;
}

/* One interval: the counts since the last reading over the real time
 * between the two readings, history, log. */
static void sample(struct top *t)
{
	double tn = now(), dt;

	if (pmon_monitor__read_delta(t->mon, t->cur, t->unit_cur, &dt) || dt <= 0)
		return;
	t->dt = dt;
	for (size_t i = 0; i < t->nev; i++) {
		struct ev *e = &t->ev[i];
		e->rate = t->cur[i].value / dt;
		if (!e->ok)
			continue;
		e->min = fmin(e->min, e->rate);
		e->max = fmax(e->max, e->rate);
		if (e->nhist == HIST) {
			memmove(e->hist, e->hist + 1, (HIST - 1) * sizeof(double));
			e->nhist--;
		}
		e->hist[e->nhist++] = e->rate;
	}
	log_interval(t, tn - t->t0, dt);
	proc_interval(t, dt);
	if (t->batch) {
		for (size_t i = 0; i < t->nev; i++) {
			const struct pmon_event_desc *d = pmon_evlist__event(t->list, i);
			if (t->ev[i].ok)
				printf("%10.3f %-28s %16.2f %s%s/s\n", tn - t->t0, d->name,
				       t->ev[i].rate, d->unit, d->unit[0] ? "" : "events");
			else
				printf("%10.3f %-28s <not supported> %s\n", tn - t->t0, d->name,
				       t->ev[i].why);
		}
		if (t->per_proc && t->smp_why[0])
			printf("%10.3f   %s\n", tn - t->t0, t->smp_why);
		for (size_t i = 0; t->per_proc && i < t->nshown; i++) {
			const struct pmon_event_desc *d = pmon_evlist__event(t->list, t->sel);
			printf("%10.3f   pid %-8d %-16s %16.2f %s%s/s %6.2f%% of %s\n", tn - t->t0,
			       (int)t->shown[i].pid, t->shown[i].comm, t->shown[i].period, d->unit,
			       d->unit[0] ? "" : "events",
			       t->shown_total > 0 ? 100.0 * t->shown[i].period / t->shown_total
						  : 0.0,
			       d->name);
		}
		if (cli_output_failed(stdout, NULL))
			t->out_failed = true; /* a full disk, or `| head` has read enough */
	}
}

/* ---- the screen ------------------------------------------------------- */

static void draw_trace(const struct top *t, const struct ev *e, int width)
{
	static const char *const blocks[] = { " ",	"\u2581", "\u2582", "\u2583", "\u2584",
					      "\u2585", "\u2586", "\u2587", "\u2588" };
	static const char ascii[] = " .:-=+*#%@";
	unsigned n = e->nhist < (unsigned)width ? e->nhist : (unsigned)width;
	double top = 0;

	for (unsigned k = e->nhist - n; k < e->nhist; k++)
		top = fmax(top, e->hist[k]);
	for (unsigned k = e->nhist - n; k < e->nhist; k++) {
		int level = top > 0 ? (int)lround(e->hist[k] / top * 8) : 0;
		if (t->utf8)
			addstr(blocks[level < 0 ? 0 : level > 8 ? 8 : level]);
		else
			addch((chtype)ascii[level < 0 ? 0 : level > 9 ? 9 : level]);
	}
}

static void human(double v, char *buf, size_t len)
{
	const char *u[] = { "", "K", "M", "G", "T" };
	int i = 0;

	while (fabs(v) >= 1000 && i < 4)
		v /= 1000, i++;
	snprintf(buf, len, "%.2f%s", v, u[i]);
}

static int cmp_rate(const void *a, const void *b)
{
	const struct ev *x = *(const struct ev *const *)a, *y = *(const struct ev *const *)b;

	return (x->rate < y->rate) - (x->rate > y->rate);
}

/* Text at (@y, @x) cut at the right edge: ncurses would wrap it onto the
 * next row, and a narrow terminal's screen would fall apart (#14.14). */
__attribute__((format(printf, 4, 5))) static void put(int y, int x, int cols, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (x >= cols)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	mvaddnstr(y, x, buf, cols - x);
}

/* Which columns fit @cols, dropped in a fixed order: the trace first, then
 * MAX, then MIN; the name narrows last (at least 8 characters). */
struct cols {
	int name; /* the name's width, the selection mark included */
	bool min, max, trace;
};

static struct cols fit_columns(int cols)
{
	struct cols c = { .name = 26, .min = true, .max = true, .trace = true };

	if (cols < 26 + 3 * 13 + 2 + 10)
		c.trace = false;
	if (cols < 26 + 3 * 13)
		c.max = false;
	if (cols < 26 + 2 * 13)
		c.min = false;
	if (cols < 26 + 13)
		c.name = cols - 13 > 8 ? cols - 13 : 8;
	return c;
}

static void draw(struct top *t)
{
	int rows, cols, y = 0;
	char a[32], b[32], c[32];
	const char *ring = t->ring == RING_USER ? "user"
		: t->ring == RING_KERNEL	? "kernel"
						: "user+kernel";
	const struct ev *order[MAXEV];

	getmaxyx(stdscr, rows, cols); /* every time: the terminal may have been resized */
	struct cols fc = fit_columns(cols);
	erase();
	attron(A_REVERSE);
	put(y++, 0, cols, " pmon top -- %s -- every %lu ms -- counting %s%s ",
	    t->cmd	       ? t->cmd[0]
		    : t->npids ? "processes"
		    : t->ncpus ? "CPUs"
			       : "all CPUs",
	    t->interval_ms, ring, t->paused ? " -- PAUSED" : "");
	attroff(A_REVERSE);
	put(++y, 0, cols, "%-*.*s %12s%s%s%s", fc.name, fc.name, "EVENT", "RATE/s",
	    fc.min ? "        MIN/s" : "", fc.max ? "        MAX/s" : "",
	    fc.trace ? "  TRACE (newest right)" : "");
	y++;
	for (size_t i = 0; i < t->nev; i++)
		order[i] = &t->ev[i];
	if (t->sort_rate)
		qsort(order, t->nev, sizeof(order[0]), cmp_rate);
	for (size_t i = 0; i < t->nev && y < rows - 3; i++, y++) {
		const struct ev *e = order[i];
		bool sel = e == &t->ev[t->sel];
		if (sel)
			attron(A_BOLD);
		if (!e->ok) {
			put(y, 0, cols, "%s%-*.*s <not supported> %s", sel ? ">" : " ", fc.name - 1,
			    fc.name - 1, e->text, e->why);
		} else {
			human(e->rate, a, sizeof(a));
			human(isinf(e->min) ? 0 : e->min, b, sizeof(b));
			human(e->max, c, sizeof(c));
			put(y, 0, cols, "%s%-*.*s %12s%s%12s%s%12s", sel ? ">" : " ", fc.name - 1,
			    fc.name - 1, e->text, a, fc.min ? " " : "", fc.min ? b : "",
			    fc.max ? " " : "", fc.max ? c : "");
			if (fc.trace) {
				move(y, 26 + 3 * 13 + 2);
				draw_trace(t, e, cols - 67 - 1);
			}
		}
		if (sel)
			attroff(A_BOLD);
	}
	if (t->per_cpu && t->nev && t->ncpus != 1) {
		y++;
		put(y++, 0, cols, "per CPU: %s", t->ev[t->sel].text);
		struct pmon_counters *cnt = pmon_monitor__counters(t->mon);
		for (size_t k = 0; k < pmon_counters__nunits(cnt) && y < rows - 3; k++) {
			int cpu;
			pid_t tid;
			pmon_counters__unit(cnt, k, &cpu, &tid);
			human(t->dt > 0 ? t->unit_cur[k * t->nev + t->sel].value / t->dt : 0, a,
			      sizeof(a));
			put(y++, 2, cols, "CPU%-4d %12s /s", cpu, a);
		}
	}
	if (t->per_proc && t->nev) {
		y++;
		put(y++, 0, cols, "per process: %s (sampled)", t->ev[t->sel].text);
		if (t->smp_why[0])
			put(y++, 2, cols, "%s", t->smp_why);
		else
			put(y++, 2, cols, "%-8s %-16s %12s %7s", "PID", "COMMAND", "RATE/s",
			    "SHARE");
		for (size_t i = 0; i < t->nshown && y < rows - 3; i++) {
			human(t->shown[i].period, a, sizeof(a));
			put(y++, 2, cols, "%-8d %-16s %12s %6.1f%%", (int)t->shown[i].pid,
			    t->shown[i].comm, a,
			    t->shown_total > 0 ? 100.0 * t->shown[i].period / t->shown_total : 0.0);
		}
	}
	if (t->help) {
		y++;
		put(y++, 2, cols, "a add an event (Tab completes)   d delete the selected one");
		put(y++, 2, cols, "u user  k kernel  b both (the seeds' ring selection)");
		put(y++, 2, cols,
		    "+ / - interval x2 / /2   space pause   c per-CPU   t per-process");
		put(y++, 2, cols,
		    "up/down select the event the views break down   s sort   q quit");
	}
	attron(A_REVERSE);
	mvprintw(rows - 1, 0, "%-*.*s", cols - 1, cols - 1,
		 t->status[0] ? t->status
			      : " a:add d:del u/k/b:ring +/-:interval space:pause c:cpu t:tasks "
				"s:sort h:help q:quit");
	attroff(A_REVERSE);
	refresh();
}

static void add_name(void *ctx, enum pmon_event_source src, const char *pmu, const char *name,
		     const char *desc)
{
	struct top *t = ctx;

	(void)src, (void)pmu, (void)desc;
	if (t->nnames == t->capnames) {
		size_t cap = t->capnames ? t->capnames * 2 : 512;
		char **n = realloc(t->names, cap * sizeof(*n));
		if (!n)
			return;
		t->names = n;
		t->capnames = cap;
	}
	t->names[t->nnames] = strdup(name);
	if (t->names[t->nnames])
		t->nnames++;
}

/* The prompt for 'a': a line editor with Tab completion from pmon list. */
static void prompt_add(struct top *t)
{
	char buf[128] = "";
	size_t len = 0;
	int rows, cols, ch;

	if (!t->names)
		pmon_event_list_names(NULL, NULL, add_name, t);
	getmaxyx(stdscr, rows, cols);
	timeout(-1);
	for (;;) {
		mvprintw(rows - 1, 0, "%-*s", cols, "");
		mvprintw(rows - 1, 0, "add event: %s", buf);
		refresh();
		ch = getch();
		if (ch == '\n' || ch == KEY_ENTER)
			break;
		if (ch == 27) { /* Esc */
			buf[0] = '\0';
			break;
		}
		if ((ch == KEY_BACKSPACE || ch == 127 || ch == 8) && len)
			buf[--len] = '\0';
		else if (ch == '\t') {
			const char *match = NULL;
			size_t nmatch = 0;
			for (size_t i = 0; i < t->nnames; i++)
				if (!strncasecmp(t->names[i], buf, len) && (++nmatch, !match))
					match = t->names[i];
			if (match && nmatch == 1) {
				snprintf(buf, sizeof(buf), "%s", match);
				len = strlen(buf);
			} else if (match) {
				snprintf(t->status, sizeof(t->status), "%zu names start with '%s'",
					 nmatch, buf);
			}
		} else if (ch >= 32 && ch < 127 && len + 1 < sizeof(buf)) {
			buf[len++] = (char)ch;
			buf[len] = '\0';
		}
	}
	t->status[0] = '\0';
	if (!buf[0] || t->nev == MAXEV)
		return;
	snprintf(t->ev[t->nev++].text, sizeof(t->ev[0].text), "%s", buf);
	if (reopen(t)) {
		t->nev--; /* keep what was counting; the status line says why */
		reopen(t);
		char why[sizeof(t->status)];
		memcpy(why, t->status, sizeof(why));
		snprintf(t->status, sizeof(t->status), "cannot add '%.40s': %.200s", buf, why);
	}
}

static void handle_key(struct top *t, int ch)
{
	t->status[0] = '\0';
	switch (ch) {
	case 'a':
		prompt_add(t);
		break;
	case 'd':
		if (t->nev > 1) {
			memmove(&t->ev[t->sel], &t->ev[t->sel + 1],
				(t->nev - t->sel - 1) * sizeof(t->ev[0]));
			t->nev--;
			if (t->sel >= t->nev)
				t->sel = t->nev - 1;
			reopen(t);
		} else {
			snprintf(t->status, sizeof(t->status), "the last event stays");
		}
		break;
	case 'u':
	case 'k':
	case 'b': {
		enum ring old = t->ring;
		t->ring = ch == 'u' ? RING_USER : ch == 'k' ? RING_KERNEL : RING_BOTH;
		if (reopen(t)) {
			t->ring = old;
			reopen(t);
		}
		break;
	}
	case '+':
		t->interval_ms = t->interval_ms * 2 > 60000 ? 60000 : t->interval_ms * 2;
		break;
	case '-':
		t->interval_ms = t->interval_ms / 2 < 100 ? 100 : t->interval_ms / 2;
		break;
	case ' ':
	case 'p':
		t->paused = !t->paused;
		break;
	case 'c':
		t->per_cpu = !t->per_cpu;
		break;
	case 't':
		t->per_proc = !t->per_proc;
		break;
	case 's':
		t->sort_rate = !t->sort_rate;
		break;
	case 'h':
	case '?':
		t->help = !t->help;
		break;
	case KEY_UP:
		if (t->sel)
			t->sel--;
		break;
	case KEY_DOWN:
		if (t->sel + 1 < t->nev)
			t->sel++;
		break;
	default:
		break;
	}
	proc_sampler(t); /* follows the selected event, the ring, the 't' key */
}

/* Fork the command (held), open the counters and the log, and start. */
static int top_start(struct top *t, const char *logpath)
{
	int rc = CLI_OK;

	t->run = pmon_run__new(t->cmd, t->target, NULL);
	if (!t->run) {
		cli_error("%s", pmon_errdetail());
		return CLI_FAIL;
	}
	struct pmon_target *who = NULL;
	if (t->cmd) {
		who = pmon_target__new_pid(pmon_run__pid(t->run));
		t->how.enable_on_exec = true;
	} else if (!t->npids && !t->ncpus) {
		who = pmon_target__new_cpus(NULL, 0); /* all CPUs (-C: those already) */
	}
	if (who) {
		pmon_target__free(t->target);
		t->target = who;
	} else if (t->cmd || (!t->npids && !t->ncpus)) {
		cli_error("%s", strerror(errno));
		return CLI_FAIL;
	}
	int oerr = reopen(t);
	if (oerr) {
		cli_error("%s%s", t->status,
			  pmon_target__system_wide(t->target) && strstr(t->status, "paranoid")
				  ? " (all CPUs need root; try -p PID or -- command)"
				  : "");
		/* Bad names and vanished targets are input errors; refusals are not. */
		rc = oerr == -PMON_ERRNO__PMU_MISSING ? cli_event_error_code(oerr)
			: oerr == -PMON_ERRNO__EVENT_UNKNOWN || oerr == -PMON_ERRNO__EVENT_SYNTAX ||
				oerr == -ESRCH
			? CLI_USAGE
			: CLI_UNSUPPORTED;
		return rc;
	}
	if (logpath) {
		size_t n = strlen(logpath);
		/* a log, followed while written: in place */
		t->log = cli_open_output_as(logpath, PMON_OUTPUT_STREAM | PMON_OUTPUT_IN_PLACE);
		if (!t->log) {
			return CLI_USAGE;
		}
		t->logpath = logpath;
		t->log_json = n > 5 && !strcmp(logpath + n - 5, ".json");
	}
	/* The per-process sampler before the command runs: a process it forks
	 * before a sampler opened on it later would not inherit it (t1600 lost
	 * a forking command's child in a third of the runs). */
	proc_sampler(t);
	if (t->cmd && pmon_run__start(t->run, t->mon)) {
		cli_error("%s", pmon_errdetail());
		return pmon_run__exit_code(t->run) == 127 ? 127 : CLI_FAIL;
	}
	return rc;
}

/* The screen (or the batch lines) every interval until the run ends. */
static int top_loop(struct top *t)
{
	/* Events added later open on the running command at once. */
	t->how.enable_on_exec = false;
	if (!t->batch) {
		/* cli/pmon.c set LC_CTYPE (ncurses needs it for the trace's block
		 * characters); numbers stay in the C locale. */
		t->utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
		initscr();
		cbreak();
		noecho();
		keypad(stdscr, TRUE);
		curs_set(0);
	}
	struct pmon_ticker tk;
	pmon_ticker__init(&tk, (double)t->interval_ms / 1e3);
	t->t0 = tk.start;
	t->reopened = false;
	unsigned long done = 0;
	bool quit = false;
	while (!quit && !pmon_run__signal(t->run) && !t->out_failed) {
		double wait = pmon_ticker__remaining(&tk);
		if (!t->batch) {
			draw(t);
			timeout(wait > 0 ? (int)(wait * 1000) : 0);
			int ch = getch();
			if (ch == 'q' || ch == 'Q')
				quit = true;
			else if (ch != ERR)
				handle_key(t, ch);
		} else if (wait > 0) {
			pmon_ticker__sleep(&tk);
		}
		if (t->reopened) {
			/* A whole interval from the new counters' base, not the
			 * rest of the old one (an 'a' prompt left it overdue:
			 * the next was microseconds long). */
			t->reopened = false;
			pmon_ticker__init(&tk, (double)t->interval_ms / 1e3);
		}
		if (pmon_ticker__remaining(&tk) > 0)
			continue;
		if (!t->paused) {
			sample(t);
			done++;
		}
		pmon_ticker__set_step(&tk, (double)t->interval_ms / 1e3); /* keys + and - */
		pmon_ticker__advance(&tk);
		if (t->count && done >= t->count)
			quit = true;
		if (pmon_run__done(t->run)) /* the command or the processes ended */
			quit = true;
	}
	if (pmon_run__signal(t->run) && !t->paused && !t->out_failed)
		sample(t); /* the interval the signal cut short: to the log too */
	if (!t->batch)
		endwin(); /* the terminal as it was */
	/* -n, q, or the output failed: the command is stopped (SIGTERM, then
	 * SIGKILL). One that ended by itself passes its status on, as stat. */
	pmon_run__stop(t->run);
	if (t->out_failed)
		return CLI_FAIL;
	if (pmon_run__signal(t->run))
		return 128 + pmon_run__signal(t->run);
	return pmon_run__exit_code(t->run);
}

int cmd_top(int argc, char **argv)
{
	struct top *t = calloc(1, sizeof(*t));
	const char *events = NULL, *logpath = NULL;
	struct pmon_target_spec spec = { .sz = sizeof(spec) };
	int rc = CLI_OK;

	if (!t || !(t->acc = calloc(MAXPROC, sizeof(*t->acc)))) {
		free(t);
		return CLI_FAIL;
	}
	t->interval_ms = 1000;
	const struct cli_option options[] = {
		CLI_OPT_TEXT(
			"Live event rates with min, max and a trace; all CPUs by default (root "
			"or\n"
			"perf_event_paranoid <= 0). Keys: h."),
		CLI_OPT_JOIN('e', "event", &events, "EVENTS",
			     "the events, comma-separated or -e again (default: cycles,\n"
			     "instructions, cache and branch misses where a PMU\n"
			     "exists; else software events)"),
		CLI_OPT_UINT_MIN('I', "interval", &t->interval_ms, "MS", 10, 3600000,
				 "at least 10 ms", "update every MS milliseconds (default 1000)"),
		CLI_OPT_UINT_MIN('n', "count", &t->count, "COUNT", 1, 100000000,
				 "at least 1 interval", "stop after COUNT intervals"),
		CLI_OPT_STRING('p', "pid", &spec.pid, "PID", "these processes only"),
		CLI_OPT_STRING('C', "cpu", &spec.cpu_list, "CPUS", "these CPUs only (0-3,5)"),
		CLI_OPT_OUTPUT(&logpath, "LOG",
			       "also write every interval as CSV (pmon plot reads it;\n"
			       "a name ending in .json gives JSON lines)"),
		CLI_OPT_FLAG('b', "batch", &t->batch,
			     "plain lines (also when the output is not a terminal)"),
		CLI_OPT_FLAG('P', "per-process", &t->per_proc,
			     "also show the processes with most of the selected event,\n"
			     "from sampling it at ~250 Hz per CPU (key t)"),
		CLI_OPT_END(),
	};
	int argi = cli_parse_options(
		"top",
		"usage: pmon top [-e EVENTS] [-I MS] [-n COUNT] [-p PID | -C CPUS | -- command]\n"
		"                [-o LOG] [--batch] [-P]",
		options, CLI_PARSE_STOP_AT_OPERAND, argc, argv);

	if (argi <= 0) {
		rc = -argi;
		goto out;
	}
	if (argi < argc)
		t->cmd = argv + argi;
	t->how = (struct pmon_open_opts){ .sz = sizeof(t->how), .inherit = true };
	if (!(t->target = pmon_target__new(&spec))) {
		cli_error("%s", pmon_errdetail());
		rc = CLI_USAGE;
		goto out;
	}
	pmon_target__pids(t->target, &t->npids);
	pmon_target__cpus(t->target, &t->ncpus);
	if ((t->cmd != NULL) + (t->npids > 0) + (t->ncpus > 0) > 1) {
		cli_error("give one target: -p, -C or a command");
		rc = CLI_USAGE;
		goto out;
	}
	if (!isatty(STDOUT_FILENO))
		t->batch = true;
	/* The log's name is checked before anything runs (issue #14.7). */
	if (logpath &&
	    !cli_check_output_as(logpath, "-o", PMON_OUTPUT_STREAM | PMON_OUTPUT_IN_PLACE)) {
		rc = CLI_USAGE;
		goto out;
	}

	/* Events: the user's, or a default set for what can count here. */
	const char *def = pmon_kernel_has_core_pmu(NULL)
		? "cycles,instructions,cache-misses,branch-misses"
		: "cpu-clock,context-switches,cpu-migrations,page-faults";
	/* Split as stat does (pmon_evlist__next(): groups and PMU terms keep
	 * their commas, "a,,b" is refused). */
	const char *pos = NULL;
	int more = 0;
	while (!(events && !*events) && t->nev < MAXEV &&
	       (more = pmon_evlist__next(events ? events : def, &pos, t->ev[t->nev].text,
					 sizeof(t->ev[0].text))) > 0)
		if (t->ev[t->nev++].text[0] == '{') {
			cli_error("-e '%s': top shows each event on its own row: give "
				  "them without {}",
				  t->ev[t->nev - 1].text);
			rc = CLI_USAGE;
			goto out;
		}
	if (more < 0) {
		cli_error("-e: %s", pmon_errdetail());
		rc = CLI_USAGE;
		goto out;
	}
	if (!t->nev) {
		cli_error("-e '%s': no event named", events ? events : "");
		rc = CLI_USAGE;
		goto out;
	}

	rc = top_start(t, logpath);
	if (rc == CLI_OK)
		rc = top_loop(t);
out:
	if (t->log && cli_close_output(t->log, logpath) != CLI_OK)
		rc = CLI_FAIL;
	pmon_run__free(t->run);
	pmon_sampler__close(t->smp);
	free(t->acc);
	pmon_monitor__close(t->mon);
	pmon_evlist__free(t->list);
	free(t->cur);
	free(t->unit_cur);
	pmon_target__free(t->target);
	for (size_t i = 0; i < t->nnames; i++)
		free(t->names[i]);
	free(t->names);
	free(t);
	return rc;
}
