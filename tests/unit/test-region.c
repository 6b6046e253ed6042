// SPDX-License-Identifier: MIT
/*
 * Regions on known work, in one process (regions are set up once per
 * process): exact page faults per pair, an empty region near zero after the
 * overhead is subtracted, nesting, 16 threads x 10^5 pairs with nothing
 * lost, unmatched ends, names, and the event sweep.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include <jansson.h>

#include <pmon/pmon.h>

static json_t *report(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_error_t e;
	json_t *j;

	assert_int_equal(pmon_region_report(f, PMON_REPORT_JSON), 0);
	fclose(f);
	j = json_loads(buf, 0, &e);
	if (!j)
		fail_msg("report is not JSON: %s: %s", e.text, buf);
	free(buf);
	return j;
}

static json_t *region(json_t *root, const char *name)
{
	size_t i;
	json_t *r;

	json_array_foreach(
		json_object_get(root, "regions"), i,
		r) if (!strcmp(json_string_value(json_object_get(r, "name")), name)) return r;
	fail_msg("no region '%s' in the report", name);
	return NULL;
}

static double metric(json_t *reg, const char *name, const char *key)
{
	size_t i;
	json_t *m;

	json_array_foreach(json_object_get(reg, "metrics"), i,
			   m) if (!strcmp(json_string_value(json_object_get(m, "name")),
					  name)) return json_number_value(json_object_get(m, key));
	fail_msg("no metric '%s'", name);
	return NAN;
}

static int setup(void **state)
{
	struct pmon_region_opts o = { .sz = sizeof(o),
				      .events = "page-faults",
				      .fence = PMON_FENCE_LFENCE,
				      .output = "/dev/null",
				      .warmup = 2 };
	(void)state;
	if (pmon_region_init(&o)) {
		fprintf(stderr, "set-up failed: %s\n", pmon_errdetail());
		return -1;
	}
	return 0;
}

/* Not instrumented by ASan: its shadow memory would fault too. */
__attribute__((no_sanitize_address, noinline)) static void touch(volatile char *p, long psz,
								 int pages)
{
	for (int k = 0; k < pages; k++)
		p[k * psz] = 1;
}

static void test_region__exact_page_faults(void **state)
{
	long psz = sysconf(_SC_PAGESIZE);
	json_t *j, *r;

	(void)state;
	for (int i = 0; i < 52; i++) { /* 2 warm-up pairs, then 50 */
		volatile char *p = mmap(NULL, 16 * (size_t)psz, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		madvise((void *)p, 16 * (size_t)psz, MADV_NOHUGEPAGE);
		PMON_REGION_BEGIN("faults");
		touch(p, psz, 16);
		PMON_REGION_END("faults");
		munmap((void *)p, 16 * (size_t)psz);
	}
	j = report();
	r = region(j, "faults");
	assert_int_equal(json_integer_value(json_object_get(r, "pairs")), 50);
	assert_true(metric(r, "page-faults", "median") == 16);
	assert_true(metric(r, "page-faults", "min") == 16);
	assert_true(metric(r, "page-faults", "total") == 800);
	assert_true(metric(r, "tsc", "median") > 0);
	json_decref(j);
}

/* An empty region reports about zero after subtraction, not the raw cost.
 * Tolerance: half the subtracted overhead (the TSC here ticks in steps of
 * about 20, and an empty pair costs some 40 ticks). */
static void test_region__empty_is_near_zero(void **state)
{
	json_t *j, *r;
	double over, med;

	(void)state;
	for (int i = 0; i < 5000; i++) {
		PMON_REGION_BEGIN("empty");
		PMON_REGION_END("empty");
	}
	j = report();
	over = json_number_value(json_object_get(json_object_get(j, "overhead"), "tsc"));
	r = region(j, "empty");
	med = metric(r, "tsc", "median");
	print_message("raw overhead %.1f ticks, empty region after subtraction %.1f\n", over, med);
	assert_true(over > 0);
	assert_true(fabs(med) <= 0.5 * over);
	assert_true(metric(r, "page-faults", "median") == 0);
	json_decref(j);
}

static void test_region__nesting_and_unmatched(void **state)
{
	volatile unsigned long sink = 0;
	json_t *j, *outer, *inner;

	(void)state;
	for (int i = 0; i < 202; i++) {
		PMON_REGION_BEGIN("outer");
		for (int k = 0; k < 2; k++) {
			PMON_REGION_BEGIN("inner");
			for (int n = 0; n < 200; n++)
				sink += (unsigned long)n;
			PMON_REGION_END("inner");
		}
		PMON_REGION_END("outer");
	}
	PMON_REGION_END("never-begun");
	(void)sink; /* the loop is only there to be timed */
	j = report();
	outer = region(j, "outer");
	inner = region(j, "inner");
	assert_int_equal(json_integer_value(json_object_get(outer, "pairs")), 200);
	assert_int_equal(json_integer_value(json_object_get(inner, "pairs")), 402);
	assert_true(metric(outer, "tsc", "median") > metric(inner, "tsc", "median"));
	assert_int_equal(json_integer_value(json_object_get(region(j, "never-begun"), "unmatched")),
			 1);
	json_decref(j);
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100002; i++) {
		PMON_REGION_BEGIN("mt");
		PMON_REGION_END("mt");
	}
	return NULL;
}

static void test_region__threads_lose_nothing(void **state)
{
	pthread_t th[16];
	json_t *j, *r;

	(void)state;
	for (int i = 0; i < 16; i++)
		assert_int_equal(pthread_create(&th[i], NULL, worker, NULL), 0);
	for (int i = 0; i < 16; i++)
		pthread_join(th[i], NULL);
	j = report();
	r = region(j, "mt");
	assert_int_equal(json_integer_value(json_object_get(r, "pairs")), 1600000);
	assert_int_equal(json_integer_value(json_object_get(r, "threads")), 16);
	assert_int_equal(json_integer_value(json_object_get(r, "unmatched")), 0);
	json_decref(j);
}

static void test_region__names_and_setup(void **state)
{
	struct pmon_region_opts o = { .sz = sizeof(o) };

	(void)state;
	assert_int_equal(pmon_region_id("faults"), pmon_region_id("faults"));
	assert_int_equal(pmon_region_init(&o), -EALREADY);
	assert_int_equal(pmon_region_name(PMON_REGION_MAX, "x"), -EINVAL);
	/* ids beyond the maximum are ignored, not written out of bounds */
	pmon_region_begin(PMON_REGION_MAX + 5);
	pmon_region_end(PMON_REGION_MAX + 5);
}

static void touch4(void *arg)
{
	long psz = sysconf(_SC_PAGESIZE);
	volatile char *p = mmap(NULL, 4 * (size_t)psz, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)arg;
	madvise((void *)p, 4 * (size_t)psz, MADV_NOHUGEPAGE);
	touch(p, psz, 4);
	munmap((void *)p, 4 * (size_t)psz);
}

static void test_region__sweep(void **state)
{
	struct pmon_sweep_opts o = { .sz = sizeof(o),
				     .events =
					     "page-faults,minor-faults,major-faults,cs,task-clock",
				     .batch = 2,
				     .reps = 50 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	char ev[64];
	unsigned batch;
	double median;
	int rows = 0, faults = 0;

	(void)state;
	assert_int_equal(pmon_region_sweep(&o, touch4, NULL, f, PMON_REPORT_CSV), 0);
	fclose(f);
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		if (sscanf(line, "%63[^,],%u,%*u,%lf", ev, &batch, &median) != 3)
			continue;
		rows++;
		if (!strcmp(ev, "page-faults") || !strcmp(ev, "minor-faults")) {
			assert_true(median == 4);
			faults++;
		}
		if (!strcmp(ev, "task-clock"))
			assert_int_equal(batch, 2); /* 5 events, batches of 2 */
	}
	assert_int_equal(rows, 5);
	assert_int_equal(faults, 2);
	free(buf);
	o.events = "nosuchevent";
	assert_int_equal(pmon_region_sweep(&o, touch4, NULL, stderr, PMON_REPORT_CSV),
			 -PMON_ERRNO__EVENT_UNKNOWN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_region__exact_page_faults),
		cmocka_unit_test(test_region__empty_is_near_zero),
		cmocka_unit_test(test_region__nesting_and_unmatched),
		cmocka_unit_test(test_region__threads_lose_nothing),
		cmocka_unit_test(test_region__names_and_setup),
		cmocka_unit_test(test_region__sweep),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
