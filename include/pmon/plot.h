/* SPDX-License-Identifier: MIT */
/*
 * Pictures, drawn with cairo as SVG or PNG (libpmon-plot): interval logs
 * (pmon stat -I as CSV or JSON lines, pmon rdt as CSV or JSON lines) as one
 * panel per series, time on x, rate on y; and a trace (pmon/trace.h) as a
 * timeline, a lane per thread.
 */
#ifndef PMON_PLOT_H
#define PMON_PLOT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <pmon/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most series (panels) one log may hold. */
#define PMON_PLOT_MAX_SERIES 64

struct pmon_series {
	char name[160]; /* "task-clock", "mon_L3_00 mbm_total" */
	char unit[48]; /* "msec/s", "events/s", "bytes", "bytes/s" */
	size_t n, cap;
	double *t, *v; /* seconds since start, value */
};

struct pmon_plot_data {
	struct pmon_series *s;
	size_t n;
	char title[256];
	/* What reading skipped and why (a last line cut short), "" when none. */
	char warning[256];
};

/**
 * pmon_plot_read_log() - parse an interval log into series. Counts per
 * interval become rates (divided by the interval); rows that could not be
 * counted ("<not counted>", "Unavailable", "n/a") are gaps. The log is outside
 * input: every field of every record is checked (type, finite, time >= 0), and
 * more than PMON_PLOT_MAX_SERIES series is an error. A last line without its
 * newline (a writer stopped mid-line: a full disk, a kill) is a warning, not
 * an error: a CSV one is skipped (a field may be cut), a JSON one kept only
 * if it is a whole record; @out->warning says what was skipped and why. A
 * damaged line before the last one stays an error.
 * Return: 0, or -PMON_ERRNO__PARSE with "FILE:LINE: why" in the detail, or -errno.
 */
PMON_API int pmon_plot_read_log(const char *path, struct pmon_plot_data *out);

/**
 * pmon_plot_render() - draw @d into @path: SVG or PNG by the extension.
 * Return: 0, -EINVAL (unknown extension, no data), -EIO (cairo failed).
 */
PMON_API int pmon_plot_render(const struct pmon_plot_data *d, const char *path, unsigned width,
			      unsigned height);

PMON_API void pmon_plot_data_release(struct pmon_plot_data *d);

/* ---- a trace as a timeline ---------------------------------------------- */

struct pmon_trace_reader;

enum pmon_plot_format {
	PMON_PLOT_SVG = 1,
	PMON_PLOT_PNG = 2,
};

struct pmon_plot_trace_opts {
	size_t sz; /* sizeof(struct pmon_plot_trace_opts) */
	enum pmon_plot_format format;
	/* The window, in ns from the trace's start; @to_ns 0: its last event. */
	uint64_t from_ns, to_ns;
	unsigned width; /* px; 0: 1200 */
};

/*
 * The picture's geometry, for programs (and tests) that read it back: time
 * runs from x = LEFT at the window's start to x = width - RIGHT at its end;
 * the first lane starts at y = TOP; in a lane, PAD px, then rows of ROW px:
 * the hooks' tick row (where the thread has instants or counters), one row
 * per nesting depth of its spans, then the kernel's rows the same way, then
 * PAD px. A span's bar is BAR px high, centred in its row.
 */
#define PMON_PLOT_TRACE_LEFT 160
#define PMON_PLOT_TRACE_RIGHT 20
#define PMON_PLOT_TRACE_TOP 60
#define PMON_PLOT_TRACE_ROW 18
#define PMON_PLOT_TRACE_BAR 14
#define PMON_PLOT_TRACE_PAD 4

/**
 * pmon_plot_trace() - draw the window [@o->from_ns, @o->to_ns) of the trace
 * @r as a timeline into @out, as SVG or PNG: a time axis with units, one lane
 * per thread in order of first appearance, the hooks' spans stacked by
 * nesting depth with the kernel's below them, instants and counter values
 * as ticks (labelled where there is room), names inside the bars that hold
 * them, and a legend of the channels. Names that are not UTF-8 are drawn
 * with '?' for the bytes cairo would refuse. A picture is at most 32000 px
 * high (and 64 Mi pixels): threads past that are counted, not drawn.
 * Return: 0; -EINVAL (empty window, width outside 380..20000, unknown
 * format); -ENOMEM; -EIO (a write failed). The detail says which.
 * Thread safety: @r is only read.
 */
PMON_API int pmon_plot_trace(const struct pmon_trace_reader *r, FILE *out,
			     const struct pmon_plot_trace_opts *o);

#ifdef __cplusplus
}
#endif
#endif
