// SPDX-License-Identifier: MIT
/*
 * pmon top's screen (ncurses): the header, the rates table with its min,
 * max and oscilloscope trace, the per-CPU and per-process views, the help
 * and the status line, laid out anew on every draw so that a resized or
 * narrow terminal is followed; the keys and the 'a' prompt with Tab
 * completion from pmon list. The state it shows is view.c's; the counters
 * are live.c's.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curses.h>

#include "top/view.h"

void top_screen__open(struct top_view *v)
{
	(void)v;
	initscr();
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
}

void top_screen__close(void)
{
	endwin();
}

static int cmp_rate(const void *a, const void *b)
{
	const struct top_row *x = *(const struct top_row *const *)a,
			     *y = *(const struct top_row *const *)b;

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

/* The event rows from @y, in the user's order or by rate; the next row. */
static int draw_rows(const struct top_view *v, int y, int rows, int cols)
{
	const struct top_state *s = &v->s;
	struct top_cols fc = top_fit_columns(cols);
	const struct top_row *order[TOP_MAXEV];
	char a[32], b[32], c[32], trace[TOP_HIST * 4 + 1];

	for (size_t i = 0; i < s->nev; i++)
		order[i] = &s->ev[i];
	if (s->sort_rate)
		qsort(order, s->nev, sizeof(order[0]), cmp_rate);
	for (size_t i = 0; i < s->nev && y < rows - 3; i++, y++) {
		const struct top_row *e = order[i];
		bool sel = e == &s->ev[s->sel];
		if (sel)
			attron(A_BOLD);
		if (!e->ok) {
			put(y, 0, cols, "%s%-*.*s <not supported> %s", sel ? ">" : " ", fc.name - 1,
			    fc.name - 1, e->text, e->why);
		} else {
			top_human(e->rate, a, sizeof(a));
			top_human(isinf(e->min) ? 0 : e->min, b, sizeof(b));
			top_human(e->max, c, sizeof(c));
			put(y, 0, cols, "%s%-*.*s %12s%s%12s%s%12s", sel ? ">" : " ", fc.name - 1,
			    fc.name - 1, e->text, a, fc.min ? " " : "", fc.min ? b : "",
			    fc.max ? " " : "", fc.max ? c : "");
			if (fc.trace) {
				move(y, 26 + 3 * 13 + 2);
				top_row__trace(e, cols - 67 - 1, v->utf8, trace, sizeof(trace));
				addstr(trace);
			}
		}
		if (sel)
			attroff(A_BOLD);
	}
	return y;
}

/* The per-CPU and per-process views of the selected event; the next row. */
static int draw_views(const struct top_view *v, int y, int rows, int cols)
{
	const struct top_state *s = &v->s;
	char a[32];

	if (s->per_cpu && s->nev && v->o.ncpus != 1) {
		y++;
		put(y++, 0, cols, "per CPU: %s", s->ev[s->sel].text);
		struct pmon_counters *cnt = pmon_monitor__counters(v->mon);
		for (size_t k = 0; k < pmon_counters__nunits(cnt) && y < rows - 3; k++) {
			int cpu;
			pid_t tid;
			pmon_counters__unit(cnt, k, &cpu, &tid);
			top_human(v->dt > 0 ? v->unit_cur[k * s->nev + s->sel].value / v->dt : 0, a,
				  sizeof(a));
			put(y++, 2, cols, "CPU%-4d %12s /s", cpu, a);
		}
	}
	if (s->per_proc && s->nev) {
		y++;
		put(y++, 0, cols, "per process: %s (sampled)", s->ev[s->sel].text);
		if (v->smp_why[0])
			put(y++, 2, cols, "%s", v->smp_why);
		else
			put(y++, 2, cols, "%-8s %-16s %12s %7s", "PID", "COMMAND", "RATE/s",
			    "SHARE");
		for (size_t i = 0; i < v->nshown && y < rows - 3; i++) {
			top_human(v->shown[i].period, a, sizeof(a));
			put(y++, 2, cols, "%-8d %-16s %12s %6.1f%%", (int)v->shown[i].pid,
			    v->shown[i].comm, a,
			    v->shown_total > 0 ? 100.0 * v->shown[i].period / v->shown_total : 0.0);
		}
	}
	return y;
}

void top_screen__draw(struct top_view *v)
{
	const struct top_state *s = &v->s;
	int rows, cols, y = 0;

	getmaxyx(stdscr, rows, cols); /* every time: the terminal may have been resized */
	struct top_cols fc = top_fit_columns(cols);
	erase();
	attron(A_REVERSE);
	put(y++, 0, cols, " %s -- %s -- every %lu ms -- counting %s%s ", v->o.title, v->o.what,
	    s->interval_ms, top_ring__name(s->ring), s->paused ? " -- PAUSED" : "");
	attroff(A_REVERSE);
	put(++y, 0, cols, "%-*.*s %12s%s%s%s", fc.name, fc.name, "EVENT", "RATE/s",
	    fc.min ? "        MIN/s" : "", fc.max ? "        MAX/s" : "",
	    fc.trace ? "  TRACE (newest right)" : "");
	if (v->fn.on) { /* perf top's view instead of the rates (funcs.c) */
		top_funcs__draw(v, y + 1, rows, cols);
		attron(A_REVERSE);
		mvprintw(rows - 1, 0, "%-*.*s", cols - 1, cols - 1,
			 s->status[0] ? s->status
				      : " f:rates t:zoom process d:zoom dso a:annotate Esc:back "
					"up/down:select +/-:interval space:pause q:quit");
		attroff(A_REVERSE);
		refresh();
		return;
	}
	y++;
	y = draw_rows(v, y, rows, cols);
	y = draw_views(v, y, rows, cols);
	if (s->help) {
		y++;
		put(y++, 2, cols, "a add an event (Tab completes)   d delete the selected one");
		put(y++, 2, cols, "u user  k kernel  b both (the seeds' ring selection)");
		put(y++, 2, cols,
		    "+ / - interval x2 / /2   space pause   c per-CPU   t per-process");
		put(y++, 2, cols,
		    "up/down select the event the views break down   s sort   q quit");
		put(y++, 2, cols,
		    "f functions (perf top's view: t/d zoom, a annotate; f back to the rates)");
	}
	attron(A_REVERSE);
	mvprintw(rows - 1, 0, "%-*.*s", cols - 1, cols - 1,
		 s->status[0] ? s->status
			      : " a:add d:del u/k/b:ring +/-:interval space:pause c:cpu t:tasks "
				"f:functions s:sort h:help q:quit");
	attroff(A_REVERSE);
	refresh();
}

static void add_name(void *ctx, enum pmon_event_source src, const char *pmu, const char *name,
		     const char *desc)
{
	struct top_view *v = ctx;

	(void)src, (void)pmu, (void)desc;
	if (v->nnames == v->capnames) {
		size_t cap = v->capnames ? v->capnames * 2 : 512;
		char **n = realloc(v->names, cap * sizeof(*n));
		if (!n)
			return;
		v->names = n;
		v->capnames = cap;
	}
	v->names[v->nnames] = strdup(name);
	if (v->names[v->nnames])
		v->nnames++;
}

/* Tab: the one name that starts with @buf, or how many do. */
static void complete(struct top_view *v, char *buf, size_t size, size_t *len)
{
	const char *match = NULL;
	size_t nmatch = 0;

	for (size_t i = 0; i < v->nnames; i++)
		if (!strncasecmp(v->names[i], buf, *len) && (++nmatch, !match))
			match = v->names[i];
	if (match && nmatch == 1) {
		snprintf(buf, size, "%s", match);
		*len = strlen(buf);
	} else if (match) {
		snprintf(v->s.status, sizeof(v->s.status), "%zu names start with '%s'", nmatch,
			 buf);
	}
}

/* The prompt for 'a': a line editor with Tab completion from pmon list. */
static void prompt_add(struct top_view *v)
{
	struct top_state *s = &v->s;
	char buf[128] = "";
	size_t len = 0;
	int rows, cols, ch;

	if (!v->names)
		pmon_event_list_names(NULL, NULL, add_name, v);
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
		else if (ch == '\t')
			complete(v, buf, sizeof(buf), &len);
		else if (ch >= 32 && ch < 127 && len + 1 < sizeof(buf)) {
			buf[len++] = (char)ch;
			buf[len] = '\0';
		}
	}
	s->status[0] = '\0';
	if (!buf[0] || s->nev == TOP_MAXEV)
		return;
	snprintf(s->ev[s->nev++].text, sizeof(s->ev[0].text), "%s", buf);
	if (top_view__reopen(v)) {
		s->nev--; /* keep what was counting; the status line says why */
		top_view__reopen(v);
		char why[sizeof(s->status)];
		memcpy(why, s->status, sizeof(why));
		snprintf(s->status, sizeof(s->status), "cannot add '%.40s': %.200s", buf, why);
	}
}

void top_screen__key(struct top_view *v, int ch)
{
	enum top_ring old = v->s.ring;

	v->s.status[0] = '\0';
	if (top_funcs__key(v, ch)) {
		top_funcs__open(v);
		return;
	}
	switch (top_state__key(&v->s, ch)) {
	case TOP_KEY_ADD:
		prompt_add(v);
		break;
	case TOP_KEY_REOPEN:
		top_view__reopen(v);
		break;
	case TOP_KEY_RING:
		if (top_view__reopen(v)) {
			v->s.ring = old;
			top_view__reopen(v);
		}
		break;
	case TOP_KEY_NONE:
		break;
	}
	top_view__sampler(v); /* follows the selected event, the ring, the 't' key */
	top_funcs__open(v);
}

bool top_screen__wait(struct top_view *v, int ms)
{
	timeout(ms);
	int ch = getch();
	if (ch == 'q' || ch == 'Q')
		return true;
	if (ch != ERR)
		top_screen__key(v, ch);
	return false;
}
