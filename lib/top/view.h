/* SPDX-License-Identifier: MIT */
/*
 * lib/top's own parts: the view's state (rows with their history, the
 * ring, the interval, the toggles the keys flip), the per-process shares,
 * and the functions the three files share. view.c is pure (no curses
 * calls, no counters: the unit test drives it), screen.c draws and reads
 * keys, live.c counts and runs the loop.
 */
#ifndef PMON_LIB_TOP_VIEW_H
#define PMON_LIB_TOP_VIEW_H

#include <sys/types.h>

#include "top/top.h"

#define TOP_HIST 240
#define TOP_MAXPROC 4096 /* processes seen in one interval */
#define TOP_SHOWPROC 10

enum top_ring { TOP_RING_BOTH, TOP_RING_USER, TOP_RING_KERNEL };

/* One event's row: the last rate, min and max since it was (re)opened, and
 * the oscilloscope's history, oldest first. */
struct top_row {
	char text[128]; /* as the user named it, without the ring modifier */
	double rate, min, max;
	double hist[TOP_HIST];
	unsigned nhist;
	bool ok;
	char why[160];
};

/* One process's share of the selected event in the last interval. */
struct top_proc {
	pid_t pid;
	double period; /* events represented by its samples */
	char comm[17];
};

/* One function of the functions view (perf top's line), of one interval. */
struct top_fn {
	char symbol[256], dso[256];
	char comm[16]; /* the process with most of its samples */
	uint32_t pid;
	uint64_t samples;
	double share; /* percent of the interval's period that passed the zoom */
};

#define TOP_MAXFN 256 /* functions kept of an interval */

/* The functions view (funcs.c): the selected event sampled on the target,
 * named live by libpmon-report (pmon_report_live), a table per interval. */
struct top_funcs {
	bool on; /* shown instead of the rates (key f, -f) */
	bool annotate; /* the selected function's instructions (key a) */
	struct pmon_sampler *smp;
	struct pmon_report_live *live;
	char text[128]; /* which event and ring it samples */
	enum top_ring ring;
	char why[300]; /* why it cannot sample or name, for the screen */
	struct top_fn *fn;
	size_t n, sel;
	uint64_t samples, lost; /* the interval's samples that passed the zoom */
	uint32_t zoom_pid; /* 0: every process */
	char zoom_comm[16];
	char zoom_dso[256]; /* "": every DSO */
	char sel_symbol[256], sel_dso[256]; /* the selection follows its function */
	struct pmon_annotation ann;
	char ann_why[300];
};

/* What the keys change. */
struct top_state {
	struct top_row ev[TOP_MAXEV];
	size_t nev;
	enum top_ring ring;
	unsigned long interval_ms;
	bool paused, per_cpu, per_proc, sort_rate, help;
	size_t sel;
	char status[256];
};

/* Which columns fit a width, dropped in a fixed order: the trace first,
 * then MAX, then MIN; the name narrows last (at least 8 characters). */
struct top_cols {
	int name; /* the name's width, the selection mark included */
	bool min, max, trace;
};

enum top_key {
	TOP_KEY_NONE, /* the state changed, or nothing did */
	TOP_KEY_REOPEN, /* an event left: the counters follow */
	TOP_KEY_RING, /* the ring changed: reopen, back to the old on failure */
	TOP_KEY_ADD, /* 'a': the screen's prompt */
};

struct top_view {
	struct top_state s;
	struct top_opts o;
	bool utf8;
	struct pmon_evlist *list;
	struct pmon_monitor *mon;
	struct pmon_count *cur; /* the last interval's counts */
	struct pmon_count *unit_cur; /* the same per unit (CPU) */
	double dt; /* the last interval's real length */
	bool reopened; /* new counters: the next interval starts with them */
	FILE *log;
	const char *logpath;
	bool log_json;
	bool out_failed; /* the log or the output cannot be written: stop */
	double t0;
	char **names; /* for Tab completion */
	size_t nnames, capnames;
	/* The per-process view: the selected event sampled, samples by pid. */
	struct pmon_sampler *smp;
	char smp_text[128]; /* which event and ring it samples */
	enum top_ring smp_ring;
	char smp_why[200];
	struct top_proc *acc; /* this interval's, unsorted */
	size_t nacc;
	struct top_proc shown[TOP_SHOWPROC]; /* the last interval's top processes */
	size_t nshown;
	double shown_total;
	struct top_funcs fn;
};

/* view.c: the state, without a terminal or counters */
const char *top_ring__modifier(enum top_ring r);
const char *top_ring__name(enum top_ring r);
void top_row__reset(struct top_row *r, bool ok, const char *why);
void top_row__push(struct top_row *r, double rate);
size_t top_row__trace(const struct top_row *r, int width, bool utf8, char *buf, size_t len);
struct top_cols top_fit_columns(int cols);
void top_human(double v, char *buf, size_t len);
enum top_key top_state__key(struct top_state *s, int ch);
bool top_procs__add(struct top_proc *acc, size_t *nacc, pid_t pid, double period);
void top_procs__sort(struct top_proc *acc, size_t nacc);

/* live.c: the counters and the sampler follow the state */
int top_view__reopen(struct top_view *v);
void top_view__sampler(struct top_view *v);

/* funcs.c: the functions view, its sampler, table, zoom and annotation */
void top_funcs__open(struct top_view *v);
void top_funcs__close(struct top_view *v);
void top_funcs__interval(struct top_view *v, double ts);
/* A key of the functions view: true when it took @ch. */
bool top_funcs__key(struct top_view *v, int ch);
/* Its part of the screen from row @y. */
void top_funcs__draw(struct top_view *v, int y, int rows, int cols);

/* screen.c */
void top_screen__open(struct top_view *v);
void top_screen__close(void);
void top_screen__draw(struct top_view *v);
void top_screen__key(struct top_view *v, int ch);
/* Waits up to @ms for a key: true when it was q (quit). */
bool top_screen__wait(struct top_view *v, int ms);

#endif
