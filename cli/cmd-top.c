// SPDX-License-Identifier: MIT
/*
 * pmon top: live event rates, the seeds' PMON/MTPM "events per second" and
 * P5MON/PTACH "oscilloscope", on a terminal (ncurses) or as plain lines
 * (--batch, or when standard output is not a terminal), logging every
 * interval to a file as it goes (MTPMPlus). Counting is libpmon's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <signal.h>
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
	struct pmon_counters *cnt;
	struct pmon_count *prev, *cur;
	struct pmon_target target;
	pid_t pids[64];
	size_t npids;
	int cpus[256];
	size_t ncpus;
	char **cmd;
	struct pmon_child child;
	FILE *log;
	bool log_json;
	double t0, tprev;
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

static volatile sig_atomic_t got_sig;

static void on_sig(int s)
{
	got_sig = s;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

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
	struct pmon_counters *c = pmon_counters__open(l, &t->target);
	if (!c) {
		snprintf(t->status, sizeof(t->status), "%s", pmon_errdetail());
		pmon_evlist__free(l);
		return -errno;
	}
	pmon_counters__close(t->cnt);
	pmon_evlist__free(t->list);
	free(t->prev);
	free(t->cur);
	t->cnt = c;
	t->list = l;
	t->prev = calloc(t->nev, sizeof(*t->prev));
	t->cur = calloc(t->nev, sizeof(*t->cur));
	if (!t->prev || !t->cur)
		return -ENOMEM;
	pmon_counters__read(c, t->prev);
	for (size_t i = 0; i < t->nev; i++) {
		t->ev[i].ok = t->prev[i].status != PMON_COUNT_NOT_SUPPORTED;
		snprintf(t->ev[i].why, sizeof(t->ev[i].why), "%s",
			 t->prev[i].reason ? t->prev[i].reason : "");
		t->ev[i].nhist = 0;
		t->ev[i].min = INFINITY;
		t->ev[i].max = 0;
	}
	t->tprev = now();
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
	if (t->npids > 1) {
		snprintf(t->smp_why, sizeof(t->smp_why),
			 "per process: all CPUs, one -p PID or a command only");
		return;
	}
	struct pmon_evlist *l = pmon_evlist__new(NULL);
	const char *mod = t->ring == RING_USER ? ":u" : t->ring == RING_KERNEL ? ":k" : "";
	char spec[160];
	struct pmon_target tg = t->target;
	struct pmon_sample_opts o = { .sz = sizeof(o), .freq = 250, .pages = 16 };
	snprintf(spec, sizeof(spec), "%s%s", t->ev[t->sel].text, mod);
	if (t->npids == 1) {
		tg.tids = NULL;
		tg.ntids = 0;
		tg.pid = t->pids[0];
	}
	tg.enable_on_exec = false;
	if (!l || pmon_evlist__add(l, spec) || pmon_sampler__open(l, &tg, &o, &t->smp) ||
	    pmon_sampler__enable(t->smp)) {
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
	uint64_t st = pmon_sampler__sample_type(t->smp), period = 1;
	size_t at =
		sizeof(*h) + (st & PERF_SAMPLE_IDENTIFIER ? 8 : 0) + (st & PERF_SAMPLE_IP ? 8 : 0);
	uint32_t pid;

	if (h->type != PERF_RECORD_SAMPLE || !(st & PERF_SAMPLE_TID) || at + 8 > len)
		return 0;
	memcpy(&pid, (const uint8_t *)rec + at, 4);
	at += 8 + 8 * (!!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_CPU));
	if (st & PERF_SAMPLE_PERIOD && at + 8 <= len)
		memcpy(&period, (const uint8_t *)rec + at, 8);
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
		double v = t->cur[i].value - t->prev[i].value;
		if (t->log_json)
			fprintf(t->log,
				"{\"interval\":%.6f,\"event\":\"%s\",\"value\":%.6f,\"unit\":\"%"
				"s\","
				"\"rate\":%.6f}\n",
				ts, d->name, v, d->unit, v / dt);
		else if (t->ev[i].ok)
			fprintf(t->log, "%.9f,%.2f,%s,%s,%llu,100.00,%.2f,/s\n", ts, v, d->unit,
				d->name,
				(unsigned long long)(t->cur[i].running - t->prev[i].running),
				v / dt);
		else
			fprintf(t->log, "%.9f,<not supported>,%s,%s,0,100.00,,\n", ts, d->unit,
				d->name);
	}
	if (t->log)
		fflush(t->log);
}

/* One interval: read, rates, history, log. */
static void sample(struct top *t)
{
	double tn = now(), dt = tn - t->tprev;

	if (dt <= 0 || pmon_counters__read(t->cnt, t->cur))
		return;
	for (size_t i = 0; i < t->nev; i++) {
		struct ev *e = &t->ev[i];
		e->rate = (t->cur[i].value - t->prev[i].value) / dt;
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
		fflush(stdout);
	}
	struct pmon_count *sw = t->prev;
	t->prev = t->cur;
	t->cur = sw;
	t->tprev = tn;
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

static void draw(struct top *t)
{
	int rows, cols, y = 0;
	char a[32], b[32], c[32];
	const char *ring = t->ring == RING_USER ? "user"
		: t->ring == RING_KERNEL	? "kernel"
						: "user+kernel";
	const struct ev *order[MAXEV];

	getmaxyx(stdscr, rows, cols); /* every time: the terminal may have been resized */
	erase();
	attron(A_REVERSE);
	mvprintw(y++, 0, " pmon top -- %s -- every %lu ms -- counting %s%s ",
		 t->cmd		    ? t->cmd[0]
			 : t->npids ? "processes"
			 : t->ncpus ? "CPUs"
				    : "all CPUs",
		 t->interval_ms, ring, t->paused ? " -- PAUSED" : "");
	attroff(A_REVERSE);
	mvprintw(++y, 0, "%-26s %12s %12s %12s  %s", "EVENT", "RATE/s", "MIN/s", "MAX/s",
		 "TRACE (newest right)");
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
		mvprintw(y, 0, "%s%-25.25s", sel ? ">" : " ", e->text);
		if (!e->ok) {
			printw(" <not supported> %.*s", cols > 45 ? cols - 45 : 0, e->why);
		} else {
			human(e->rate, a, sizeof(a));
			human(isinf(e->min) ? 0 : e->min, b, sizeof(b));
			human(e->max, c, sizeof(c));
			printw(" %12s %12s %12s  ", a, b, c);
			draw_trace(t, e, cols - 68 > 10 ? cols - 68 : 10);
		}
		if (sel)
			attroff(A_BOLD);
	}
	if (t->per_cpu && t->nev && t->ncpus != 1) {
		y++;
		mvprintw(y++, 0, "per CPU: %s", t->ev[t->sel].text);
		struct pmon_count *u = calloc(t->nev, sizeof(*u));
		for (size_t k = 0; u && k < pmon_counters__nunits(t->cnt) && y < rows - 3; k++) {
			int cpu;
			pid_t tid;
			if (pmon_counters__read_unit(t->cnt, k, u))
				continue;
			pmon_counters__unit(t->cnt, k, &cpu, &tid);
			human(u[t->sel].value / fmax(now() - t->t0, 1e-3), a, sizeof(a));
			mvprintw(y++, 2, "CPU%-4d %12s /s (average since start)", cpu, a);
		}
		free(u);
	}
	if (t->per_proc && t->nev) {
		y++;
		mvprintw(y++, 0, "per process: %s (sampled)", t->ev[t->sel].text);
		if (t->smp_why[0])
			mvprintw(y++, 2, "%.*s", cols > 2 ? cols - 2 : 0, t->smp_why);
		else
			mvprintw(y++, 2, "%-8s %-16s %12s %7s", "PID", "COMMAND", "RATE/s",
				 "SHARE");
		for (size_t i = 0; i < t->nshown && y < rows - 3; i++) {
			human(t->shown[i].period, a, sizeof(a));
			mvprintw(y++, 2, "%-8d %-16s %12s %6.1f%%", (int)t->shown[i].pid,
				 t->shown[i].comm, a,
				 t->shown_total > 0 ? 100.0 * t->shown[i].period / t->shown_total
						    : 0.0);
		}
	}
	if (t->help) {
		y++;
		mvprintw(y++, 2, "a add an event (Tab completes)   d delete the selected one");
		mvprintw(y++, 2, "u user  k kernel  b both (the seeds' ring selection)");
		mvprintw(y++, 2,
			 "+ / - interval x2 / /2   space pause   c per-CPU   t per-process");
		mvprintw(y++, 2, "up/down select the event the views break down   s sort   q quit");
	}
	attron(A_REVERSE);
	mvprintw(rows - 1, 0, "%-*.*s", cols, cols,
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

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pmon top [-e EVENTS] [-I MS] [-n COUNT] [-p PID | -C CPUS | -- command]\n"
		"                [-o LOG] [--batch] [-P]\n\n"
		"Live event rates with min, max and a trace; all CPUs by default (root or\n"
		"perf_event_paranoid <= 0). -o LOG writes every interval as CSV (pmon plot reads "
		"it;\n"
		"a name ending in .json gives JSON lines). --batch (or output that is not a\n"
		"terminal) prints plain lines. -P (--per-process, key t) also shows the\n"
		"processes with most of the selected event, from sampling it at ~250 Hz per\n"
		"CPU. Keys: h.\n");
}

int cmd_top(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "event", required_argument, NULL, 'e' },
		{ "interval", required_argument, NULL, 'I' },
		{ "count", required_argument, NULL, 'n' },
		{ "pid", required_argument, NULL, 'p' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "output", required_argument, NULL, 'o' },
		{ "batch", no_argument, NULL, 'B' },
		{ "per-process", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct top *t = calloc(1, sizeof(*t));
	const char *events = NULL, *logpath = NULL;
	unsigned long ul;
	int c, rc = CLI_OK;

	if (!t || !(t->acc = calloc(MAXPROC, sizeof(*t->acc)))) {
		free(t);
		return CLI_FAIL;
	}
	t->interval_ms = 1000;
	t->child.pid = -1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+e:I:n:p:C:o:bPh", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			events = optarg;
			break;
		case 'I':
			if (!cli_parse_uint(optarg, 3600000, "-I", &t->interval_ms) ||
			    t->interval_ms < 10) {
				if (t->interval_ms < 10)
					cli_error("-I %lu: at least 10 ms", t->interval_ms);
				rc = CLI_USAGE;
				goto out;
			}
			break;
		case 'n':
			if (!cli_parse_uint(optarg, 100000000, "-n", &t->count)) {
				rc = CLI_USAGE;
				goto out;
			}
			break;
		case 'p':
		case 'C': {
			char *copy = strdup(optarg), *save = NULL;
			for (char *s = strtok_r(copy, ",", &save); s;
			     s = strtok_r(NULL, ",", &save)) {
				if (!cli_parse_uint(s, c == 'p' ? 1u << 30 : 4095,
						    c == 'p' ? "-p" : "-C", &ul)) {
					free(copy);
					rc = CLI_USAGE;
					goto out;
				}
				if (c == 'p' && t->npids < 64)
					t->pids[t->npids++] = (pid_t)ul;
				if (c == 'C' && t->ncpus < 256)
					t->cpus[t->ncpus++] = (int)ul;
			}
			free(copy);
			break;
		}
		case 'o':
			logpath = optarg;
			break;
		case 'B':
		case 'b':
			t->batch = true;
			break;
		case 'P':
			t->per_proc = true;
			break;
		case 'h':
			usage(stdout);
			goto out;
		default:
			usage(stderr);
			rc = CLI_USAGE;
			goto out;
		}
	}
	if (optind < argc)
		t->cmd = argv + optind;
	if ((t->cmd != NULL) + (t->npids > 0) + (t->ncpus > 0) > 1) {
		cli_error("give one target: -p, -C or a command");
		rc = CLI_USAGE;
		goto out;
	}
	if (!isatty(STDOUT_FILENO))
		t->batch = true;

	/* Events: the user's, or a default set for what can count here. */
	const char *def = access("/sys/bus/event_source/devices/cpu/type", F_OK) == 0
		? "cycles,instructions,cache-misses,branch-misses"
		: "cpu-clock,context-switches,cpu-migrations,page-faults";
	char *list = strdup(events ? events : def), *save = NULL;
	for (char *s = strtok_r(list, ",", &save); s && t->nev < MAXEV;
	     s = strtok_r(NULL, ",", &save))
		snprintf(t->ev[t->nev++].text, sizeof(t->ev[0].text), "%s", s);
	free(list);

	t->target = (struct pmon_target){ .sz = sizeof(t->target), .pid = -1, .inherit = true };
	if (t->cmd) {
		if (pmon_child__fork(t->cmd, &t->child)) {
			cli_error("cannot run '%s': %s", t->cmd[0], pmon_errdetail());
			rc = CLI_FAIL;
			goto out;
		}
		t->target.pid = t->child.pid;
		t->target.enable_on_exec = true;
	} else if (t->npids) {
		t->target.tids = t->pids;
		t->target.ntids = t->npids;
	} else {
		t->target.system_wide = true;
		t->target.cpus = t->ncpus ? t->cpus : NULL;
		t->target.ncpus = t->ncpus;
	}
	int oerr = reopen(t);
	if (oerr) {
		cli_error("%s%s", t->status,
			  t->target.system_wide && strstr(t->status, "paranoid")
				  ? " (all CPUs need root; try -p PID or -- command)"
				  : "");
		/* Bad names and vanished targets are input errors; refusals are not. */
		rc = oerr == -PMON_ERRNO__EVENT_UNKNOWN || oerr == -PMON_ERRNO__EVENT_SYNTAX ||
				oerr == -PMON_ERRNO__PMU_MISSING || oerr == -ESRCH
			? CLI_USAGE
			: CLI_UNSUPPORTED;
		if (t->child.pid > 0) {
			kill(t->child.pid, SIGKILL);
			pmon_child__wait(&t->child, NULL, NULL);
		}
		goto out;
	}
	if (logpath) {
		size_t n = strlen(logpath);
		t->log = fopen(logpath, "we");
		if (!t->log) {
			cli_error("cannot write '%s': %s", logpath, strerror(errno));
			rc = CLI_USAGE;
			goto out;
		}
		t->log_json = n > 5 && !strcmp(logpath + n - 5, ".json");
	}
	if (t->cmd && pmon_child__start(&t->child)) {
		cli_error("cannot run '%s'", t->cmd[0]);
		rc = 127;
		goto out;
	}
	/* Events added later open on the running command at once. */
	t->target.enable_on_exec = false;
	proc_sampler(t);
	struct sigaction sa = { .sa_handler = on_sig };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!t->batch) {
		setlocale(LC_ALL, "");
		t->utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
		initscr();
		cbreak();
		noecho();
		keypad(stdscr, TRUE);
		curs_set(0);
	}
	t->t0 = t->tprev = now();
	double next = t->t0 + (double)t->interval_ms / 1e3;
	unsigned long done = 0;
	bool quit = false;
	while (!quit && !got_sig) {
		double wait = next - now();
		if (!t->batch) {
			draw(t);
			timeout(wait > 0 ? (int)(wait * 1000) : 0);
			int ch = getch();
			if (ch == 'q' || ch == 'Q')
				quit = true;
			else if (ch != ERR)
				handle_key(t, ch);
		} else if (wait > 0) {
			struct timespec ts = { .tv_sec = (time_t)wait,
					       .tv_nsec = (long)((wait - (double)(time_t)wait) *
								 1e9) };
			nanosleep(&ts, NULL);
		}
		if (now() < next)
			continue;
		if (!t->paused) {
			sample(t);
			done++;
		}
		next += (double)t->interval_ms / 1e3;
		if (next < now())
			next = now() + (double)t->interval_ms / 1e3;
		if (t->count && done >= t->count)
			quit = true;
		if (t->child.pid > 0 && waitpid(t->child.pid, NULL, WNOHANG) == t->child.pid) {
			t->child.pid = -1;
			quit = true;
		}
		if (t->npids) {
			bool alive = false;
			for (size_t i = 0; i < t->npids; i++)
				alive |= kill(t->pids[i], 0) == 0 || errno == EPERM;
			if (!alive)
				quit = true;
		}
	}
	if (!t->batch)
		endwin(); /* the terminal as it was */
	if (t->child.pid > 0) {
		kill(t->child.pid, SIGTERM);
		pmon_child__wait(&t->child, NULL, NULL);
	}
	if (got_sig)
		rc = 128 + got_sig;
out:
	if (t->log && fclose(t->log) && rc == CLI_OK) {
		cli_error("write error on '%s': %s", logpath, strerror(errno));
		rc = CLI_FAIL;
	}
	pmon_sampler__close(t->smp);
	free(t->acc);
	pmon_counters__close(t->cnt);
	pmon_evlist__free(t->list);
	free(t->prev);
	free(t->cur);
	for (size_t i = 0; i < t->nnames; i++)
		free(t->names[i]);
	free(t->names);
	free(t);
	return rc;
}
