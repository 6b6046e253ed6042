// SPDX-License-Identifier: MIT
/* pmon_summarize(): exact answers on small known samples. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "internal.h"
#include <pmon/stats.h>

static void test_stats__basics(void **state)
{
	const double v[] = { 5, 1, 4, 2, 3 };
	struct pmon_summary s = { .sz = sizeof(s) };

	(void)state;
	assert_int_equal(pmon_summarize(v, 5, 0, &s), 0);
	assert_true(s.median == 3 && s.min == 1 && s.max == 5 && s.mean == 3);
	assert_true(fabs(s.stddev - sqrt(2.5)) < 1e-12);
	assert_true(s.mad == 1); /* deviations 2 2 1 1 0 -> 1 */
	assert_true(s.mode == 1); /* all once: the smallest */
	assert_true(fabs(s.p5 - 1.2) < 1e-12 && fabs(s.p95 - 4.8) < 1e-12);
	assert_int_equal(pmon_summarize(v, 0, 0, &s), -EINVAL);
}

static void test_stats__mode_and_culling(void **state)
{
	/* The seed's case: a near-constant time with a few interrupted runs. */
	double v[100];
	struct pmon_summary s = { .sz = sizeof(s) };

	(void)state;
	for (int i = 0; i < 100; i++)
		v[i] = i % 10 == 0 ? 131 : i % 3 ? 120 : 121;
	v[7] = 50000; /* an interrupt */
	assert_int_equal(pmon_summarize(v, 100, 5, &s), 0);
	assert_true(s.mode == 120);
	assert_true(s.median == 120);
	assert_int_equal(s.culled, 1); /* only the interrupt, not the 131s */
	assert_true(s.max == 131);
	assert_true(s.mad == 0 && s.cull_scale > 0); /* MAD 0: mean abs. dev. scales */
	/* No culling asked: the interrupt stays in the mean. */
	assert_int_equal(pmon_summarize(v, 100, 0, &s), 0);
	assert_int_equal(s.culled, 0);
	assert_true(s.max == 50000 && s.mean > 600);
	/* All equal: nothing to cull, stddev 0. */
	for (int i = 0; i < 100; i++)
		v[i] = 7;
	assert_int_equal(pmon_summarize(v, 100, 5, &s), 0);
	assert_true(s.culled == 0 && s.stddev == 0 && s.mode == 7 && s.mode_count == 100);
}

static void test_stats__large_values_keep_precision(void **state)
{
	/* TSC-sized values: a one-pass sum of squares would lose the spread. */
	const double v[] = { 1e12 + 1, 1e12 + 2, 1e12 + 3 };
	struct pmon_summary s = { .sz = sizeof(s) };

	(void)state;
	assert_int_equal(pmon_summarize(v, 3, 0, &s), 0);
	assert_true(fabs(s.stddev - 1) < 1e-6);
}

/* The output carries its size: an unset size is refused, a caller built
 * with a larger struct gets zeros past what this library knows. */
/* The region runtime's overhead median (pmon__median_inplace(), selection
 * in place) is the median pmon_summarize() gives, for odd and even counts,
 * ties, sorted and reversed input. */
static void test_stats__median_inplace_is_summarize_median(void **state)
{
	uint64_t v[301], w[301];
	double d[301];
	uint32_t x = 12345;

	(void)state;
	for (size_t n = 1; n <= 301; n += (n < 12 ? 1 : 37)) {
		for (int shape = 0; shape < 4; shape++) {
			for (size_t i = 0; i < n; i++) {
				x = x * 1103515245u + 12345u;
				v[i] = shape == 0    ? (x >> 16) % 1000
					: shape == 1 ? (x >> 16) % 3 /* many ties */
					: shape == 2 ? i /* sorted */
						     : n - i; /* reversed */
				d[i] = (double)v[i];
			}
			memcpy(w, v, n * sizeof(*w));
			struct pmon_summary s = { .sz = sizeof(s) };
			assert_int_equal(pmon_summarize(d, n, 0, &s), 0);
			double m = pmon__median_inplace(w, n);
			if (m != s.median)
				fail_msg("n %zu shape %d: %g, summarize %g", n, shape, m, s.median);
		}
	}
}

static void test_stats__output_size(void **state)
{
	const double v[] = { 1, 2, 3 };
	struct {
		struct pmon_summary s;
		double later;
	} big;
	struct pmon_summary s = { 0 };

	(void)state;
	assert_int_equal(pmon_summarize(v, 3, 0, &s), -EINVAL);
	memset(&big, 0xff, sizeof(big));
	big.s.sz = sizeof(big);
	assert_int_equal(pmon_summarize(v, 3, 0, &big.s), 0);
	assert_true(big.s.median == 2 && big.s.n == 3);
	assert_true(big.later == 0);
	assert_int_equal(big.s.sz, sizeof(big));
}

/* The mode lies in [min, max]: of the samples kept, never one culled (a
 * bench under load printed a mode below its min: all values distinct, the
 * smallest of all samples, which culling had removed). */
static void test_stats__mode_within_min_max(void **state)
{
	double v[101];
	struct pmon_summary s = { .sz = sizeof(s) };

	(void)state;
	/* All distinct, one wild low sample: culled, and not the mode. */
	for (int i = 0; i < 101; i++)
		v[i] = 236 + (i % 50) * 0.37 + i * 0.001;
	v[3] = -756;
	assert_int_equal(pmon_summarize(v, 101, 5, &s), 0);
	assert_int_equal(s.culled, 1);
	assert_true(s.min <= s.mode && s.mode <= s.max);
	assert_true(s.min > 0);
	/* Bimodal: the larger cluster's value, within range. */
	for (int i = 0; i < 101; i++)
		v[i] = i % 3 ? 40 : 400;
	assert_int_equal(pmon_summarize(v, 101, 5, &s), 0);
	assert_true(s.mode == 40 && s.mode_count == 67);
	assert_true(s.min <= s.mode && s.mode <= s.max);
	/* A mode that only the culled samples share: not taken. */
	for (int i = 0; i < 101; i++)
		v[i] = 100 + i;
	v[0] = v[1] = v[2] = -5000;
	assert_int_equal(pmon_summarize(v, 101, 5, &s), 0);
	assert_int_equal(s.culled, 3);
	assert_true(s.mode != -5000 && s.min <= s.mode && s.mode <= s.max);
}

/* Statistics of samples less an overhead: below 0 within the error, 0 and
 * marked; below by more, left and marked; >= 0, untouched. */
static void test_stats__clamp_below_overhead(void **state)
{
	double v[100], total;
	struct pmon_summary s = { .sz = sizeof(s) };

	(void)state;
	/* Empty pairs whose overhead was over-estimated by 1..3 ticks. */
	for (int i = 0; i < 100; i++)
		v[i] = -(double)(1 + i % 3);
	total = -200;
	assert_int_equal(pmon_summarize(v, 100, 5, &s), 0);
	assert_int_equal(pmon__summary_clamp(&s, 5, &total, 5 * 100), PMON__CLAMPED);
	assert_true(s.min == 0 && s.median == 0 && s.mode == 0 && s.mean == 0 && s.max == 0);
	assert_true(s.p5 == 0 && s.p95 == 0 && total == 0);
	/* By more than the error: left as they are, and said. */
	for (int i = 0; i < 100; i++)
		v[i] = -26 + (i % 2);
	total = -2550;
	assert_int_equal(pmon_summarize(v, 100, 5, &s), 0);
	assert_int_equal(pmon__summary_clamp(&s, 10, &total, 1000), PMON__BELOW);
	assert_true(s.min == -26 && total == -2550);
	/* Some within, some beyond. */
	for (int i = 0; i < 100; i++)
		v[i] = i < 10 ? -30 : i < 50 ? -2 : 5;
	assert_int_equal(pmon_summarize(v, 100, 0, &s), 0);
	assert_int_equal(pmon__summary_clamp(&s, 3, NULL, 0), PMON__CLAMPED | PMON__BELOW);
	assert_true(s.min == -30 && s.max == 5 && s.min <= s.p5 && s.p5 <= s.median);
	/* Nothing below 0: nothing done; the stddev is never touched. */
	for (int i = 0; i < 100; i++)
		v[i] = 10 + i % 4;
	total = 1150;
	assert_int_equal(pmon_summarize(v, 100, 5, &s), 0);
	double sd = s.stddev, mean = s.mean;
	assert_int_equal(pmon__summary_clamp(&s, 3, &total, 300), 0);
	assert_true(s.stddev == sd && s.mean == mean && total == 1150);
	/* No summary, a total only. */
	total = -1;
	assert_int_equal(pmon__summary_clamp(NULL, 0, &total, 2), PMON__CLAMPED);
	assert_true(total == 0);
}

/* pmon bench's differences: below zero or a spread wider than the value is
 * doubted, with the reason; a steady positive cost is not. */
static void test_stats__doubts(void **state)
{
	double v[101];
	char why[256];
	struct pmon_summary s = { .sz = sizeof(s) };

	(void)state;
	/* Negative after the subtraction: noise. */
	for (int i = 0; i < 101; i++)
		v[i] = (i % 7) * 60.0 - 172;
	assert_int_equal(pmon_summarize(v, 101, 5, &s), 0);
	unsigned d = pmon_summary__doubts(&s, why, sizeof(why));
	assert_true(d & PMON_DOUBT_NEGATIVE);
	assert_non_null(strstr(why, "below zero"));
	assert_non_null(strstr(why, "resolution"));
	/* Bimodal around a small value: the spread exceeds it. */
	for (int i = 0; i < 101; i++)
		v[i] = i % 2 ? 90 : 1; /* 51 ones: median 1 */
	assert_int_equal(pmon_summarize(v, 101, 5, &s), 0);
	assert_int_equal(pmon_summary__doubts(&s, why, sizeof(why)), PMON_DOUBT_SPREAD);
	assert_non_null(strstr(why, "wider than the value"));
	/* All equal and positive: a result. */
	for (int i = 0; i < 101; i++)
		v[i] = 3.25;
	assert_int_equal(pmon_summarize(v, 101, 5, &s), 0);
	assert_int_equal(pmon_summary__doubts(&s, why, sizeof(why)), 0);
	assert_string_equal(why, "");
	/* All zero: nothing below zero, no spread: not doubted either. */
	for (int i = 0; i < 101; i++)
		v[i] = 0;
	assert_int_equal(pmon_summarize(v, 101, 5, &s), 0);
	assert_int_equal(pmon_summary__doubts(&s, why, sizeof(why)), 0);
	/* A steady cost with a little noise: a result. */
	for (int i = 0; i < 101; i++)
		v[i] = 236 + (i % 5) * 0.5;
	assert_int_equal(pmon_summarize(v, 101, 5, &s), 0);
	assert_int_equal(pmon_summary__doubts(&s, why, 4), 0);
	assert_int_equal(pmon_summary__doubts(NULL, why, sizeof(why)), 0);
}

/* Multiplexed counts' error: none when fully running; small for a steady
 * rate seen half the time; larger when the rates vary across readings. */
static void test_stats__mux_error(void **state)
{
	struct pmon_mux_error full = { 0 }, steady = { 0 }, varying = { 0 }, none = { 0 };

	(void)state;
	for (int i = 0; i < 10; i++)
		pmon_mux_error__add(&full, 1e6, 100000000, 100000000);
	assert_true(pmon_mux_error__estimate(&full) == 0);
	assert_int_equal(full.n, 10);
	/* 1e6 events per 100 ms interval, seen 50 ms of each: scaled 1e6. */
	for (int i = 0; i < 10; i++)
		pmon_mux_error__add(&steady, 1e6, 100000000, 50000000);
	double e_steady = pmon_mux_error__estimate(&steady);
	assert_true(pmon_mux_error__rate_var(&steady) < 1e-18);
	/* sqrt(10 x 5e5 x 5e7 x 1e8 / 5e7^2) = sqrt(1e7) */
	assert_true(fabs(e_steady - sqrt(1e7)) < 1e-6 * sqrt(1e7));
	assert_true(e_steady > 0 && e_steady < 0.001 * 1e7); /* under 0.1% of the total */
	/* The same total, rates alternating 0.5e6 and 1.5e6 per interval. */
	for (int i = 0; i < 10; i++)
		pmon_mux_error__add(&varying, i % 2 ? 1.5e6 : 0.5e6, 100000000, 50000000);
	assert_true(pmon_mux_error__rate_var(&varying) > 0);
	assert_true(pmon_mux_error__estimate(&varying) > 10 * e_steady);
	/* Nothing running, or running beyond enabled: not counted. */
	pmon_mux_error__add(&none, 5, 100, 0);
	pmon_mux_error__add(&none, 5, 100, 200);
	assert_true(none.n == 0 && pmon_mux_error__estimate(&none) == 0);
	/* One reading: the counting noise alone (no rate spread to take). */
	pmon_mux_error__add(&none, 1e6, 100, 25);
	assert_true(pmon_mux_error__rate_var(&none) == 0);
	assert_true(fabs(pmon_mux_error__estimate(&none) - sqrt(2.5e5 * 75 * 100 / 625.0)) < 1e-6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stats__basics),
		cmocka_unit_test(test_stats__mode_and_culling),
		cmocka_unit_test(test_stats__large_values_keep_precision),
		cmocka_unit_test(test_stats__median_inplace_is_summarize_median),
		cmocka_unit_test(test_stats__output_size),
		cmocka_unit_test(test_stats__mode_within_min_max),
		cmocka_unit_test(test_stats__clamp_below_overhead),
		cmocka_unit_test(test_stats__doubts),
		cmocka_unit_test(test_stats__mux_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
