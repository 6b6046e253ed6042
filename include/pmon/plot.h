/* SPDX-License-Identifier: MIT */
/*
 * Pictures of interval logs: the logs pmon writes (pmon stat -I as CSV or
 * JSON lines, pmon rdt as CSV or JSON lines) become one panel per series,
 * time on x, rate on y, drawn with cairo as SVG or PNG.
 */
#ifndef PMON_PLOT_H
#define PMON_PLOT_H

#include <stddef.h>
#include <pmon/common.h>

#ifdef __cplusplus
extern "C" {
#endif

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
};

/**
 * pmon_plot_read_log() - parse an interval log into series. Counts per
 * interval become rates (divided by the interval); rows that could not be
 * counted ("<not counted>", "Unavailable", "n/a") are gaps.
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

#ifdef __cplusplus
}
#endif
#endif
