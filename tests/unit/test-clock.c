// SPDX-License-Identifier: MIT
/* Timers: the clock table, the clocksource reader on a fake sysfs tree, and
 * TSC calibration (plausibility only: no timing assertions). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <pmon/pmon.h>

static void test_clock__table(void **state)
{
	struct pmon_clock_res c[16];
	size_t n = pmon_clocks(c, 16);
	bool raw = false;

	(void)state;
	assert_true(n >= 8);
	for (size_t i = 0; i < n; i++) {
		assert_non_null(c[i].name);
		if (!strcmp(c[i].name, "CLOCK_MONOTONIC_RAW")) {
			raw = true;
			assert_true(c[i].res_ns > 0);
		}
	}
	assert_true(raw);
	assert_int_equal(pmon_clocks(c, 2), 2);
}

static void test_clock__clocksource_fake_sysfs(void **state)
{
	char root[] = "/tmp/pmon-sysfs-XXXXXX", path[256], cur[64], avail[128];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/devices/system/clocksource/clocksource0", root);
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "mkdir -p %s", path);
	assert_int_equal(system(cmd), 0);
	strcat(path, "/current_clocksource");
	f = fopen(path, "w");
	fputs("tsc\n", f);
	fclose(f);
	assert_int_equal(pmon_clocksource(root, cur, sizeof(cur), avail, sizeof(avail)), 0);
	assert_string_equal(cur, "tsc");
	assert_string_equal(avail, "");
	assert_int_equal(pmon_clocksource("/nonexistent", cur, sizeof(cur), NULL, 0), -ENOENT);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
}

static void test_clock__tsc_calibration(void **state)
{
	uint64_t hz = 0;
	uint32_t ppm;

	(void)state;
	assert_int_equal(pmon_tsc_calibrate(0, &hz, &ppm), -EINVAL);
	assert_int_equal(pmon_tsc_calibrate(1001, &hz, &ppm), -EINVAL);
	assert_int_equal(pmon_tsc_calibrate(5, &hz, &ppm), 0);
	/* Any x86-64 TSC runs between 100 MHz and 10 GHz. */
	assert_true(hz > 100000000ULL && hz < 10000000000ULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clock__table),
		cmocka_unit_test(test_clock__clocksource_fake_sysfs),
		cmocka_unit_test(test_clock__tsc_calibration),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
