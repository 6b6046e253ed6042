/* SPDX-License-Identifier: MIT */
/*
 * Robust statistics of repeated measurements: the seeds' "mode of ~100
 * trials" and PmonStat's culling of anomalous measurements, next to the
 * usual median, mean, spread and percentiles.
 */
#ifndef PMON_STATS_H
#define PMON_STATS_H

#include <stddef.h>
#include <stdint.h>
#include <pmon/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An output that may grow: the caller sets sz to sizeof(struct pmon_summary)
 * as it knows it, and the library fills that much (fields added later go
 * at the end). */
struct pmon_summary {
	size_t sz; /* set by the caller: sizeof(struct pmon_summary) */
	size_t n; /* samples given */
	size_t culled; /* samples removed as anomalous */
	double median; /* of all samples */
	double mad; /* median absolute deviation from the median, of all samples */
	/* Of the samples kept after culling (so min <= mode <= max): */
	double mode; /* most frequent value (ties, or none repeats: the smallest) */
	size_t mode_count; /* how often the mode occurs (1: no value repeats) */
	double min, max, mean, stddev, p5, p95;
	double cull_k; /* the rule: culled when |x - median| > cull_k * cull_scale (0: none) */
	double cull_scale; /* the MAD; where MAD = 0, the mean absolute deviation */
};

/**
 * pmon_summarize() - summarize @n samples.
 * @v:      the samples; not modified.
 * @out:    ->sz set by the caller (at least the size of this first version);
 *          the rest is written.
 * @cull_k: cull samples farther than cull_k * MAD from the median; 0 keeps
 *          all. Where MAD = 0 the mean absolute deviation is the scale; where
 *          that is 0 too (all samples equal) nothing is culled.
 * Return: 0, -EINVAL for @n = 0 or an unknown ->sz, -ENOMEM. Thread safe.
 */
PMON_API int pmon_summarize(const double *v, size_t n, double cull_k, struct pmon_summary *out);

/* Why a summary's values cannot be taken as a result (bits). */
enum pmon_doubt {
	PMON_DOUBT_NEGATIVE = 1 << 0, /* min, median, mean or mode below zero */
	PMON_DOUBT_SPREAD = 1 << 1, /* the spread (stddev or MAD) exceeds |median| */
};

/**
 * pmon_summary__doubts() - say whether a summary of differences (a cost
 * measured as one time minus another, as pmon bench's (2U - U) / (U x N))
 * can be read as a result. A value below zero, or a spread wider than the
 * median, means the cost is below the subtraction's resolution: noise.
 * @s:   a summary from pmon_summarize().
 * @why: where the reason is written ("" when none), @len bytes.
 * Return: enum pmon_doubt bits, 0 when nothing is in doubt. Thread safe.
 */
PMON_API unsigned pmon_summary__doubts(const struct pmon_summary *s, char *why, size_t len);

/* The uncertainty of a multiplexed count (docs/stat-json.md, "Multiplexed
 * counts and their error"): zero it, add each reading, ask the estimate. */
struct pmon_mux_error {
	size_t n; /* readings with running time */
	double w, mean, m2; /* the rates' running-time-weighted mean and sum of squares */
	double poisson; /* the counting noise of the unseen time, summed */
	double unseen2; /* the unseen times squared, summed */
};

/**
 * pmon_mux_error__add() - add one reading: @scaled, the value as the kernel
 * scaled it (counted x @enabled / @running), of an event enabled @enabled
 * and counted @running (the same unit, ns). A reading with @running 0 is
 * not counted (nothing to scale from). Thread safe for distinct @m.
 */
PMON_API void pmon_mux_error__add(struct pmon_mux_error *m, double scaled, uint64_t enabled,
				  uint64_t running);
/** pmon_mux_error__rate_var() - the variance of the readings' rates
 * (counts per unit of running time), weighted by running time; 0 below two. */
PMON_API double pmon_mux_error__rate_var(const struct pmon_mux_error *m);
/**
 * pmon_mux_error__estimate() - the standard error of the sum of the scaled
 * values added, in their unit: 0 when every reading ran all the time it
 * was enabled; from the counting noise of the unseen time, and with two
 * readings or more from the spread of their rates too.
 */
PMON_API double pmon_mux_error__estimate(const struct pmon_mux_error *m);

#ifdef __cplusplus
}
#endif
#endif
