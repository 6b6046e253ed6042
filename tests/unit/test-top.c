// SPDX-License-Identifier: MIT
/*
 * Unit tests of pmon top's view state (lib/top/view.c), without a terminal
 * or counters: a row's rate, min, max and history (oldest dropped at
 * TOP_HIST), rows that cannot count, the oscilloscope trace in UTF-8 and
 * ASCII, the columns each width keeps, short numbers, what each key
 * changes, and the processes' shares.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <curses.h>

#include "top/view.h"

static struct top_row row_ok(void)
{
	struct top_row r = { .text = "cycles" };

	top_row__reset(&r, true, NULL);
	return r;
}

static void test_top__row_history(void **state)
{
	struct top_row r = row_ok();

	(void)state;
	assert_true(isinf(r.min));
	top_row__push(&r, 5);
	top_row__push(&r, 2);
	top_row__push(&r, 9);
	assert_int_equal(r.nhist, 3);
	assert_true(r.rate == 9 && r.min == 2 && r.max == 9);
	for (unsigned i = 0; i < TOP_HIST; i++)
		top_row__push(&r, 100 + i);
	assert_int_equal(r.nhist, TOP_HIST);
	/* the oldest went first: the history is the last TOP_HIST, in order */
	assert_true(r.hist[0] == 100 && r.hist[TOP_HIST - 1] == 100 + TOP_HIST - 1);
	assert_true(r.min == 2 && r.max == 100 + TOP_HIST - 1);
	top_row__reset(&r, true, NULL);
	assert_int_equal(r.nhist, 0);
	assert_true(r.max == 0 && r.rate == 0);
}

static void test_top__row_not_supported(void **state)
{
	struct top_row r = { .text = "rnope" };

	(void)state;
	top_row__reset(&r, false, "no such counter");
	top_row__push(&r, 7);
	assert_true(r.rate == 7);
	assert_int_equal(r.nhist, 0);
	assert_string_equal(r.why, "no such counter");
}

static void test_top__trace(void **state)
{
	struct top_row r = row_ok();
	char buf[TOP_HIST * 4 + 1];

	(void)state;
	top_row__push(&r, 0);
	top_row__push(&r, 4);
	top_row__push(&r, 8);
	assert_int_equal(top_row__trace(&r, 10, false, buf, sizeof(buf)), 3);
	assert_string_equal(buf, " =%"); /* 0, 4/8 and 8/8 of the largest */
	assert_int_equal(top_row__trace(&r, 10, true, buf, sizeof(buf)), 3);
	assert_string_equal(buf, " \u2584\u2588");
	/* a narrow trace shows the newest, scaled to what it shows */
	assert_int_equal(top_row__trace(&r, 1, false, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "%");
	assert_int_equal(top_row__trace(&r, 0, false, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	/* all zero: blank, no division by zero */
	struct top_row z = row_ok();
	top_row__push(&z, 0);
	top_row__push(&z, 0);
	assert_int_equal(top_row__trace(&z, 10, false, buf, sizeof(buf)), 2);
	assert_string_equal(buf, "  ");
}

static void test_top__fit_columns(void **state)
{
	static const struct {
		int line, cols, name;
		bool min, max, trace;
	} rows[] = {
		{ __LINE__, 200, 26, true, true, true },
		{ __LINE__, 77, 26, true, true, true },
		{ __LINE__, 76, 26, true, true, false },
		{ __LINE__, 65, 26, true, true, false },
		{ __LINE__, 64, 26, true, false, false },
		{ __LINE__, 52, 26, true, false, false },
		{ __LINE__, 51, 26, false, false, false },
		{ __LINE__, 39, 26, false, false, false },
		{ __LINE__, 38, 25, false, false, false },
		{ __LINE__, 20, 8, false, false, false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct top_cols c = top_fit_columns(rows[i].cols);
		if (c.name != rows[i].name || c.min != rows[i].min || c.max != rows[i].max ||
		    c.trace != rows[i].trace)
			fail_msg("row at line %d: %d columns gave name %d min %d max %d trace %d",
				 rows[i].line, rows[i].cols, c.name, c.min, c.max, c.trace);
	}
}

static void test_top__human(void **state)
{
	static const struct {
		int line;
		double v;
		const char *want;
	} rows[] = {
		{ __LINE__, 0, "0.00" },	{ __LINE__, 999.5, "999.50" },
		{ __LINE__, 1000, "1.00K" },	{ __LINE__, 2.5e6, "2.50M" },
		{ __LINE__, 3e9, "3.00G" },	{ __LINE__, 4e12, "4.00T" },
		{ __LINE__, 5e15, "5000.00T" }, { __LINE__, -2000, "-2.00K" },
	};
	char buf[32];

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		top_human(rows[i].v, buf, sizeof(buf));
		if (strcmp(buf, rows[i].want))
			fail_msg("row at line %d: '%s', want '%s'", rows[i].line, buf,
				 rows[i].want);
	}
}

static void test_top__keys(void **state)
{
	struct top_state s = { .nev = 3, .interval_ms = 1000 };

	(void)state;
	assert_int_equal(top_state__key(&s, '+'), TOP_KEY_NONE);
	assert_int_equal(s.interval_ms, 2000);
	s.interval_ms = 40000;
	top_state__key(&s, '+');
	assert_int_equal(s.interval_ms, 60000); /* at most a minute */
	s.interval_ms = 150;
	top_state__key(&s, '-');
	assert_int_equal(s.interval_ms, 100); /* at least 100 ms */
	top_state__key(&s, ' ');
	assert_true(s.paused);
	top_state__key(&s, 'p');
	assert_false(s.paused);
	top_state__key(&s, 'c');
	top_state__key(&s, 't');
	top_state__key(&s, 's');
	top_state__key(&s, '?');
	assert_true(s.per_cpu && s.per_proc && s.sort_rate && s.help);
	assert_int_equal(top_state__key(&s, 'a'), TOP_KEY_ADD);

	assert_int_equal(top_state__key(&s, 'k'), TOP_KEY_RING);
	assert_int_equal(s.ring, TOP_RING_KERNEL);
	assert_string_equal(top_ring__modifier(s.ring), ":k");
	top_state__key(&s, 'u');
	assert_string_equal(top_ring__name(s.ring), "user");
	top_state__key(&s, 'b');
	assert_string_equal(top_ring__modifier(s.ring), "");

	top_state__key(&s, KEY_UP);
	assert_int_equal(s.sel, 0); /* stays on the first row */
	top_state__key(&s, KEY_DOWN);
	top_state__key(&s, KEY_DOWN);
	top_state__key(&s, KEY_DOWN);
	assert_int_equal(s.sel, 2); /* stays on the last row */
}

static void test_top__delete(void **state)
{
	struct top_state s = { .nev = 3, .sel = 2 };

	(void)state;
	snprintf(s.ev[0].text, sizeof(s.ev[0].text), "cycles");
	snprintf(s.ev[1].text, sizeof(s.ev[1].text), "instructions");
	snprintf(s.ev[2].text, sizeof(s.ev[2].text), "page-faults");
	assert_int_equal(top_state__key(&s, 'd'), TOP_KEY_REOPEN);
	assert_int_equal(s.nev, 2);
	assert_int_equal(s.sel, 1); /* the selection follows the last row */
	s.sel = 0;
	assert_int_equal(top_state__key(&s, 'd'), TOP_KEY_REOPEN);
	assert_int_equal(s.nev, 1);
	assert_string_equal(s.ev[0].text, "instructions");
	assert_int_equal(top_state__key(&s, 'd'), TOP_KEY_NONE);
	assert_int_equal(s.nev, 1);
	assert_string_equal(s.status, "the last event stays");
}

static void test_top__procs(void **state)
{
	static struct top_proc acc[TOP_MAXPROC];
	size_t n = 0;

	(void)state;
	assert_true(top_procs__add(acc, &n, 10, 100));
	assert_true(top_procs__add(acc, &n, 20, 300));
	assert_true(top_procs__add(acc, &n, 10, 250)); /* the same process: added up */
	assert_true(top_procs__add(acc, &n, 0, 50));
	assert_int_equal(n, 3);
	top_procs__sort(acc, n);
	assert_int_equal(acc[0].pid, 10);
	assert_true(acc[0].period == 350);
	assert_int_equal(acc[1].pid, 20);
	assert_int_equal(acc[2].pid, 0);
	/* a full table keeps its processes and leaves a new one out */
	n = 0;
	for (pid_t p = 1; p <= TOP_MAXPROC; p++)
		assert_true(top_procs__add(acc, &n, p, 1));
	assert_false(top_procs__add(acc, &n, TOP_MAXPROC + 1, 1));
	assert_true(top_procs__add(acc, &n, 1, 1));
	assert_int_equal(n, TOP_MAXPROC);
	assert_true(acc[0].period == 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_top__row_history),
		cmocka_unit_test(test_top__row_not_supported),
		cmocka_unit_test(test_top__trace),
		cmocka_unit_test(test_top__fit_columns),
		cmocka_unit_test(test_top__human),
		cmocka_unit_test(test_top__keys),
		cmocka_unit_test(test_top__delete),
		cmocka_unit_test(test_top__procs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
