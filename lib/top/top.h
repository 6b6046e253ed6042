/* SPDX-License-Identifier: MIT */
/*
 * pmon top's live view (lib/top, presentation layer): what cli/cmd-top.c
 * calls once it has parsed the command line and built the target. The view
 * opens the counters and the per-process sampler on that target, draws the
 * screen (ncurses) or prints plain lines every interval, follows the keys
 * and logs each interval; the caller keeps the run (pmon_run: the command,
 * its start, stop and exit status), the log's opening and closing, and the
 * messages. Compiled into the module pmon-ui.so, beside the command: these
 * names are not libpmon's and not exported.
 */
#ifndef PMON_LIB_TOP_TOP_H
#define PMON_LIB_TOP_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <pmon/pmon.h>

#define TOP_MAXEV 32 /* rows */

struct top_opts {
	const char *const *events; /* as the user named them, without a ring */
	size_t nev; /* 1..TOP_MAXEV */
	const struct pmon_target *target; /* the caller's: read when counters open */
	const struct pmon_open_opts *how; /* the caller's: read when counters open */
	struct pmon_run *run; /* the caller's: watched, never stopped */
	const char *title; /* the header's first words: the tool's name ("pmon top") */
	const char *what; /* the header's subject: the command, "CPUs"... */
	size_t ncpus; /* -C's CPUs: one needs no per-CPU view */
	unsigned long interval_ms, count; /* count 0: until the run ends */
	bool batch; /* plain lines on @out, no screen */
	bool per_proc; /* the per-process view from the start */
	bool functions; /* the functions view (perf top's) from the start */
	FILE *out; /* the batch lines' stream */
	/* Says whether @f (the log, or @out with a NULL path) failed to be
	 * written, and tells the user once: the caller's words. */
	bool (*output_failed)(FILE *f, const char *path);
};

struct top_view;

/* The view with its rows (copies @o's events); NULL with errno. */
struct top_view *top_view__new(const struct top_opts *o);
/* Opens the counters on the target: 0, or a negative error with
 * top_view__status() (and pmon_errdetail()) saying why. */
int top_view__open(struct top_view *v);
/* What the last failure was, for the caller's one-line message. */
const char *top_view__status(const struct top_view *v);
/* The counters open now (pmon_run__start() enables them on exec). */
struct pmon_monitor *top_view__monitor(const struct top_view *v);
/* Every interval is also written to @log (CSV, or JSON lines). */
void top_view__set_log(struct top_view *v, FILE *log, const char *path, bool json);
/* Opens the per-process sampler when asked for: before the command runs,
 * so that the processes it forks at once inherit it. Never fails: a
 * sampler that cannot open says why on its rows. */
void top_view__start(struct top_view *v);
/* The screen (or the lines) every interval until q, -n, a signal or the
 * end of the run; the terminal restored. 0, or -EIO when the log or the
 * output could not be written (output_failed() said so). */
int top_view__run(struct top_view *v);
void top_view__free(struct top_view *v);

#endif
