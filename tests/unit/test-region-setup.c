// SPDX-License-Identifier: MIT
/*
 * Region set-up in a process of its own (regions are set up once per
 * process): a pmon_region_init() that fails leaves nothing set up, so a
 * retry with valid options works; nothing is printed on the way; the
 * limits come from the library.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <pmon/pmon.h>

/* Standard error into a pipe; stderr_restore() gives back what was written. */
static int stderr_to_pipe(int p[2])
{
	int saved = dup(2);

	assert_int_equal(pipe(p), 0);
	assert_int_equal(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
	dup2(p[1], 2);
	return saved;
}

static ssize_t stderr_restore(int saved, int p[2], char *buf, size_t len)
{
	ssize_t k;

	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(p[1]);
	k = read(p[0], buf, len - 1);
	close(p[0]);
	buf[k > 0 ? k : 0] = 0;
	return k > 0 ? k : 0;
}

static void test_region_setup__failure_leaves_nothing(void **state)
{
	struct pmon_region_opts bad_event = { .sz = sizeof(bad_event),
					      .events = "nosuchevent",
					      .report_at_exit = false };
	struct pmon_region_opts bad_out = { .sz = sizeof(bad_out),
					    .events = "",
					    .output = "/nonexistent/dir/report",
					    .report_at_exit = false };
	struct pmon_region_opts bad_ring = {
		.sz = sizeof(bad_ring), .events = "", .ring = 1u << 30, .report_at_exit = false
	};
	struct pmon_region_opts good = { .sz = sizeof(good),
					 .events = "page-faults",
					 .output = "/dev/null",
					 .report_at_exit = false };
	char err[512];
	int p[2], saved;

	(void)state;
	saved = stderr_to_pipe(p);
	assert_int_equal(pmon_region_init(&bad_event), -PMON_ERRNO__EVENT_UNKNOWN);
	assert_non_null(strstr(pmon_errdetail(), "nosuchevent"));
	assert_true(pmon_region_init(&bad_out) < 0);
	assert_non_null(strstr(pmon_errdetail(), "/nonexistent/dir/report"));
	assert_int_equal(pmon_region_init(&bad_ring), -EINVAL);
	/* nothing set up: no report, and begin/end before a set-up do nothing */
	assert_int_equal(pmon_region_report(stdout, PMON_REPORT_CSV), -EINVAL);
	/* the library explains through its return values, never on stderr */
	assert_int_equal(stderr_restore(saved, p, err, sizeof(err)), 0);

	assert_int_equal(pmon_region_init(&good), 0);
	assert_int_equal(pmon_region_init(&good), -EALREADY);
	PMON_REGION_BEGIN("after-retry");
	PMON_REGION_END("after-retry");
	FILE *f = fopen("/dev/null", "we");
	assert_int_equal(pmon_region_report(f, PMON_REPORT_JSON), 0);
	fclose(f);
}

static void test_region_setup__limits_come_from_the_library(void **state)
{
	(void)state;
	assert_true(pmon_region_max() >= PMON_REGION_MAX);
	assert_int_equal(pmon_region_id(NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_region_setup__failure_leaves_nothing),
		cmocka_unit_test(test_region_setup__limits_come_from_the_library),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
