// SPDX-License-Identifier: MIT
/*
 * pmon_summarize() (pmon/stats.h). Sorting once gives the median,
 * percentiles and the mode (the longest run of equal values among the
 * samples kept); culling uses
 * the median absolute deviation, which one wild sample cannot move, unlike
 * the standard deviation.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include <pmon/stats.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y); /* never x - y: it overflows and truncates */
}

/* Linear interpolation between closest ranks of sorted @s. */
static double quantile(const double *s, size_t n, double q)
{
	double pos = q * (double)(n - 1);
	size_t i = (size_t)pos;
	double frac = pos - (double)i;

	return i + 1 < n ? s[i] + (s[i + 1] - s[i]) * frac : s[n - 1];
}

/* The size of the first version of struct pmon_summary (through cull_scale). */
#define SUMMARY_SZ_V1 (offsetof(struct pmon_summary, cull_scale) + sizeof(double))

static int summarize(const double *v, size_t n, double cull_k, struct pmon_summary *out);

int pmon_summarize(const double *v, size_t n, double cull_k, struct pmon_summary *out)
{
	struct pmon_summary full = { .sz = sizeof(full) };
	size_t sz = out->sz;
	int err;

	if (sz < SUMMARY_SZ_V1)
		return pmon__err(-EINVAL, "struct pmon_summary: size %zu unknown (set ->sz)", sz);
	err = summarize(v, n, cull_k, &full);
	/* A caller built with a larger struct gets zeros in what it knows and
	 * this library does not; one built with a smaller one gets its part. */
	if (sz > sizeof(full)) {
		memset((char *)out + sizeof(full), 0, sz - sizeof(full));
		sz = sizeof(full);
	}
	memcpy((char *)out + sizeof(out->sz), (char *)&full + sizeof(full.sz),
	       sz - sizeof(out->sz));
	return err;
}

static int summarize(const double *v, size_t n, double cull_k, struct pmon_summary *out)
{
	double *s, *dev, sum = 0, sumsq = 0;
	size_t kept = 0, run = 1, best = 0;

	if (!n)
		return pmon__err(-EINVAL, "no samples to summarize");
	s = malloc(n * sizeof(*s));
	dev = malloc(n * sizeof(*dev));
	if (!s || !dev) {
		free(s);
		free(dev);
		return -ENOMEM;
	}
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	out->n = n;
	out->median = quantile(s, n, 0.5);
	for (size_t i = 0; i < n; i++)
		dev[i] = fabs(s[i] - out->median);
	qsort(dev, n, sizeof(*dev), cmp_double);
	out->mad = quantile(dev, n, 0.5);

	/* The scale of the culling rule: the MAD, or where more than half the
	 * samples are equal (MAD = 0) the mean absolute deviation, so that a
	 * wild sample among very stable ones is still recognised. */
	out->cull_scale = out->mad;
	if (out->cull_scale == 0) {
		double sad = 0;
		for (size_t i = 0; i < n; i++)
			sad += dev[i];
		out->cull_scale = sad / (double)n;
	}
	/* Keep the samples within the rule, compacting s in place. */
	out->cull_k = cull_k > 0 && out->cull_scale > 0 ? cull_k : 0;
	for (size_t i = 0; i < n; i++) {
		if (out->cull_k && fabs(s[i] - out->median) > out->cull_k * out->cull_scale)
			continue;
		s[kept++] = s[i];
	}
	out->culled = n - kept;
	/* The mode of the samples kept, as min and max are: of all samples it
	 * could be one culled far outside [min, max] (where no value repeats,
	 * the smallest; a bench under load printed a mode below its min). */
	out->mode = s[0];
	for (size_t i = 1; i <= kept; i++) {
		if (i < kept && s[i] == s[i - 1]) {
			run++;
			continue;
		}
		if (run > best) {
			best = run;
			out->mode = s[i - 1];
		}
		run = 1;
	}
	out->mode_count = best;
	/* Two passes: sums of squares of TSC-sized values lose all precision. */
	for (size_t i = 0; i < kept; i++)
		sum += s[i];
	out->mean = sum / (double)kept;
	for (size_t i = 0; i < kept; i++)
		sumsq += (s[i] - out->mean) * (s[i] - out->mean);
	out->min = s[0];
	out->max = s[kept - 1];
	out->stddev = kept > 1 ? sqrt(sumsq / (double)(kept - 1)) : 0;
	out->p5 = quantile(s, kept, 0.05);
	out->p95 = quantile(s, kept, 0.95);
	free(s);
	free(dev);
	return 0;
}

/* The k-th smallest of v[lo..hi] (Hoare's selection; the middle element as
 * the pivot, so sorted or constant runs stay linear). */
static uint64_t select_kth(uint64_t *v, size_t lo, size_t hi, size_t k)
{
	while (lo < hi) {
		uint64_t pivot = v[lo + (hi - lo) / 2];
		size_t i = lo, j = hi;
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				uint64_t t = v[i];
				v[i] = v[j];
				v[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return v[k];
	}
	return v[k];
}

double pmon__median_inplace(uint64_t *v, size_t n)
{
	size_t h = (n - 1) / 2;
	uint64_t a = select_kth(v, 0, n - 1, h);
	if (n % 2)
		return (double)a;
	uint64_t b = v[h + 1]; /* everything past h is >= a: its smallest */
	for (size_t i = h + 2; i < n; i++)
		if (v[i] < b)
			b = v[i];
	return (double)a + (double)(b - a) * 0.5;
}

double pmon__rank_inplace(uint64_t *v, size_t n, double q)
{
	return (double)select_kth(v, 0, n - 1, (size_t)(q * (double)(n - 1)));
}

/* One value of a statistic from which an overhead was subtracted. */
static unsigned clamp_one(double *x, double err)
{
	if (!(*x < 0))
		return 0;
	if (-*x <= err) {
		*x = 0; /* the measurement cannot tell it from 0 */
		return PMON__CLAMPED;
	}
	return PMON__BELOW; /* left as it is: the report says why */
}

unsigned pmon__summary_clamp(struct pmon_summary *s, double err, double *total, double total_err)
{
	unsigned r = total ? clamp_one(total, total_err) : 0;

	if (!s)
		return r;
	double *f[] = { &s->median, &s->mode, &s->mean, &s->min, &s->p5, &s->p95, &s->max };
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		r |= clamp_one(f[i], err);
	return r;
}

unsigned pmon_summary__doubts(const struct pmon_summary *s, char *why, size_t len)
{
	unsigned d = 0;
	int w = 0;

	if (len)
		why[0] = 0;
	if (!s || !s->n)
		return 0;
	/* How far apart equal measurements land: the subtraction cannot
	 * resolve a cost smaller than this. */
	double res = s->stddev > s->mad ? s->stddev : s->mad;
	if (s->min < 0 || s->median < 0 || s->mean < 0 || s->mode < 0) {
		d |= PMON_DOUBT_NEGATIVE;
		w = snprintf(why, len,
			     "values below zero (min %.2f, median %.2f): noise, the cost measured "
			     "is below the subtraction's resolution (spread %.2f)",
			     s->min, s->median, res);
	}
	if (res > fabs(s->median)) {
		d |= PMON_DOUBT_SPREAD;
		if (w >= 0 && (size_t)w < len)
			snprintf(why + w, len - (size_t)w,
				 "%sthe spread (%.2f) is wider than the value (median %.2f): "
				 "noise",
				 w ? "; " : "", res, s->median);
	}
	return d;
}
