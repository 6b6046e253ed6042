// SPDX-License-Identifier: MIT
/*
 * Regions on known work, in one process (regions are set up once per
 * process): exact page faults per pair, an empty region at zero after the
 * overhead is subtracted, nesting, 16 threads x 10^5 pairs with nothing
 * lost while threads come and go, 20,000 short-lived threads folded and
 * freed, unmatched ends and begins never ended, fork, a German locale,
 * names and the per-call-site id cache, and the event sweep. Counts and
 * states only: no durations are asserted.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <locale.h>
#include <malloc.h>
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
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <jansson.h>

#include <pmon/pmon.h>

/* Count the lookups a call site makes: PMON_REGION_BEGIN() expands to a
 * call of pmon_region_id(), which is rescanned and replaced by this. */
static int id_lookups;
static int counted_region_id(const char *name)
{
	id_lookups++;
	return pmon_region_id(name);
}
#define pmon_region_id(name) counted_region_id(name)

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif
#ifdef UNDER_SANITIZER
/* <sanitizer/allocator_interface.h>, which not every compiler installs */
size_t __sanitizer_get_current_allocated_bytes(void);
#endif

/* Bytes allocated and not freed, the allocator's own count. */
static size_t live_bytes(void)
{
#ifdef UNDER_SANITIZER
	return __sanitizer_get_current_allocated_bytes();
#else
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
#endif
}

static char *report_text(enum pmon_report_format fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_int_equal(pmon_region_report(f, fmt), 0);
	fclose(f);
	return buf;
}

static json_t *parse_json(char *buf)
{
	json_error_t e;
	json_t *j = json_loads(buf, 0, &e);

	if (!j)
		fail_msg("report is not JSON: %s: %s", e.text, buf);
	free(buf);
	return j;
}

static json_t *report(void)
{
	return parse_json(report_text(PMON_REPORT_JSON));
}

static json_t *find_region(json_t *root, const char *name)
{
	size_t i;
	json_t *r;

	json_array_foreach(json_object_get(root, "regions"), i, r)
	{
		if (!strcmp(json_string_value(json_object_get(r, "name")), name))
			return r;
	}
	return NULL;
}

static long long ival(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_integer(v))
		fail_msg("no integer '%s'", key);
	return json_integer_value(v);
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

/* Whether metric @name of @reg has values below 0 by more than the
 * overhead's error (left as they are, and marked). */
static bool beyond_error(json_t *reg, const char *name)
{
	size_t i;
	json_t *m;

	json_array_foreach(json_object_get(reg, "metrics"), i, m)
	{
		const char *c = json_string_value(json_object_get(m, "clamped"));
		if (!strcmp(json_string_value(json_object_get(m, "name")), name))
			return c && !strcmp(c, "beyond-error");
	}
	return false;
}

static int setup(void **state)
{
	struct pmon_region_opts o = { .sz = sizeof(o),
				      .events = "page-faults,context-switches",
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

/* Not instrumented by ASan or TSan: their shadow memory would fault too. */
__attribute__((no_sanitize("address", "thread"), noinline)) static void touch(volatile char *p,
									      long psz, int pages)
{
	for (int k = 0; k < pages; k++)
		p[k * psz] = 1;
}

/* The total of a region's page faults: exact, except under a sanitizer.
 * ThreadSanitizer's own trace of each thread's events is written by the
 * instrumented begin/end code inside the window and faults in a page now
 * and then (in a fork child, a copy-on-write fault: CI saw 161 for 160).
 * The median and the minimum stay exact, and they are what proves the
 * counters are the region's own. */
static void assert_exact_total(double total, double want)
{
#ifdef UNDER_SANITIZER
	assert_true(total >= want && total <= want + 64);
#else
	assert_true(total == want);
#endif
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
	assert_exact_total(metric(r, "page-faults", "total"), 800);
	assert_true(metric(r, "tsc", "median") > 0);
	json_decref(j);
}

/* An empty region reads 0 after the overhead is subtracted, per metric:
 * never below 0 unmarked, and within the overhead's error (its spread, at
 * least one step of the TSC, which advances in steps of tens of ticks on
 * virtual machines; issue 29 replaced "one step", which needed subtracting
 * the median and left empty regions negative), and exactly 0 for the
 * counts. The overhead is measured through the same inline calls and the
 * same library end path. */
static void test_region__empty_is_zero(void **state)
{
	json_t *j, *r;
	double over, step, med, err;

	(void)state;
	for (int i = 0; i < 5000; i++) {
		PMON_REGION_BEGIN("empty");
		PMON_REGION_END("empty");
	}
	j = report();
	over = json_number_value(json_object_get(json_object_get(j, "overhead"), "tsc"));
	step = json_number_value(json_object_get(j, "tsc_step"));
	err = json_number_value(json_object_get(
		json_object_get(json_object_get(j, "overhead_spread"), "tsc"), "error"));
	r = region(j, "empty");
	med = metric(r, "tsc", "median");
	print_message("raw overhead %.1f ticks, TSC step %.0f, empty region after subtraction "
		      "%.1f\n",
		      over, step, med);
	assert_true(over > 0 && step >= 1 && err >= step);
	/* Never below 0 unmarked; marked only when the overhead at set-up
	 * ran slower than the program's pairs by more than its spread. */
	assert_true(beyond_error(r, "tsc") ||
		    (med >= 0 && metric(r, "tsc", "min") >= 0 && metric(r, "tsc", "mean") >= 0));
	/*
	 * Within the overhead's error (issue #12, item 13; issue 29). A
	 * sanitizer's own code in the window, or a loaded machine, makes the
	 * remainder timing (a loaded TSan run once missed one step): only the
	 * subtraction itself is held -- without it the median would be the
	 * whole overhead, twice done minus it, so half of it apart is the
	 * line.
	 */
	assert_true(med <= fmax(err, over / 2));
	assert_true(metric(r, "page-faults", "median") == 0);
	assert_true(metric(r, "context-switches", "median") == 0);
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
	PMON_REGION_BEGIN("never-ended");
	(void)sink; /* the loop is only there to be timed */
	j = report();
	outer = region(j, "outer");
	inner = region(j, "inner");
	assert_int_equal(json_integer_value(json_object_get(outer, "pairs")), 200);
	assert_int_equal(json_integer_value(json_object_get(inner, "pairs")), 402);
	assert_int_equal(json_integer_value(json_object_get(region(j, "never-begun"), "unmatched")),
			 1);
	assert_int_equal(ival(region(j, "never-ended"), "unended"), 1);
	assert_int_equal(ival(region(j, "never-ended"), "pairs"), 0);
	assert_int_equal(ival(outer, "unended"), 0);
	json_decref(j);
	PMON_REGION_END("never-ended"); /* leave it closed for the tests after */
}

static int atoi_or(const char *s, int dflt)
{
	char *end;
	long v = strtol(s, &end, 10);

	return *s && !*end && v > 0 && v < 10000000 ? (int)v : dflt;
}

static void *short_lived(void *arg)
{
	for (int i = 0; i < 2 + 3; i++) { /* 2 warm-up pairs, then 3 */
		PMON_REGION_BEGIN("short");
		PMON_REGION_END("short");
	}
	if (arg) /* exits inside a region: reported as begun and never ended */
		PMON_REGION_BEGIN("exit-inside");
	return NULL;
}

/* Pairs per thread of the 16: fewer under a sanitizer (PMON_TEST_PAIRS). */
static int pairs_per_thread(void)
{
	const char *e = getenv("PMON_TEST_PAIRS");

	return e ? atoi_or(e, 100002) : 100002;
}

static int mt_pairs;

static void *mt_worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < mt_pairs; i++) {
		PMON_REGION_BEGIN("mt");
		PMON_REGION_END("mt");
	}
	return NULL;
}

/* 16 threads count every pair while 64 more start, record and exit beside
 * them (their state folded into the totals as they go). */
static void test_region__threads_lose_nothing(void **state)
{
	pthread_t th[16], churn[64];
	json_t *j, *r;

	(void)state;
	mt_pairs = pairs_per_thread();
	for (int i = 0; i < 16; i++)
		assert_int_equal(pthread_create(&th[i], NULL, mt_worker, NULL), 0);
	for (int i = 0; i < 64; i++)
		assert_int_equal(pthread_create(&churn[i], NULL, short_lived, NULL), 0);
	for (int i = 0; i < 64; i++)
		pthread_join(churn[i], NULL);
	for (int i = 0; i < 16; i++)
		pthread_join(th[i], NULL);
	j = report();
	r = region(j, "mt");
	assert_int_equal(ival(r, "pairs"), 16LL * (mt_pairs - 2)); /* 2 warm-up pairs each */
	assert_int_equal(ival(r, "threads"), 16);
	assert_int_equal(ival(r, "unmatched"), 0);
	assert_int_equal(ival(r, "dropped"), 0);
	r = region(j, "short");
	assert_int_equal(ival(r, "pairs"), 64 * 3);
	assert_int_equal(ival(r, "threads"), 64);
	json_decref(j);
}

/* 20,000 threads that each record a few pairs and exit: their samples are
 * folded into the region's totals and their state freed, so the memory
 * the library holds does not grow with the number of threads gone. */
static void test_region__exited_threads_are_freed(void **state)
{
	const char *e = getenv("PMON_TEST_THREADS");
	int n = e ? atoi_or(e, 20000) : 20000;
	pthread_t th[16];
	size_t before, after;
	json_t *j, *r;

	(void)state;
	for (int i = 0; i < 16; i++) { /* arenas and stacks the allocator keeps */
		assert_int_equal(pthread_create(&th[i], NULL, short_lived, NULL), 0);
		pthread_join(th[i], NULL);
	}
	j = report();
	long long short0 = ival(region(j, "short"), "pairs");
	long long threads0 = ival(region(j, "short"), "threads");
	json_decref(j);
	before = live_bytes();
	for (int done = 0; done < n;) {
		int k = n - done < 16 ? n - done : 16;
		for (int i = 0; i < k; i++)
			assert_int_equal(pthread_create(&th[i], NULL, short_lived,
							(void *)(intptr_t)(done + i == 0)),
					 0);
		for (int i = 0; i < k; i++)
			pthread_join(th[i], NULL);
		done += k;
	}
	after = live_bytes();
	print_message("%d threads: %zu bytes live before, %zu after\n", n, before, after);
	/* One thread's state is tens of KiB: kept, 20,000 of them are ~1 GB. */
	assert_true(after < before + 2 * 1024 * 1024);
	j = report();
	r = region(j, "short");
	assert_int_equal(ival(r, "pairs") - short0, 3LL * n);
	assert_int_equal(ival(r, "threads") - threads0, n);
	assert_int_equal(ival(region(j, "exit-inside"), "unended"), 1);
	json_decref(j);
}

static void test_region__names_and_setup(void **state)
{
	struct pmon_region_opts o = { .sz = sizeof(o) };

	(void)state;
	assert_int_equal(pmon_region_id("faults"), pmon_region_id("faults"));
	assert_int_equal(pmon_region_init(&o), -EALREADY);
	assert_int_equal(pmon_region_name(PMON_REGION_MAX, "x"), -EINVAL);
	assert_true(pmon_region_max() >= PMON_REGION_MAX);
	/* ids beyond the maximum are ignored, not written out of bounds */
	pmon_region_begin(pmon_region_max() + 5);
	pmon_region_end(pmon_region_max() + 5);
	pmon_region_begin(-ENOSPC);
	pmon_region_end(-ENOSPC);
}

/* Run @fn in a child process; return what it wrote to the pipe it gets. */
static char *in_child(void (*fn)(FILE *out))
{
	int p[2], status;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		FILE *f = fdopen(p[1], "w");
		close(p[0]);
		fn(f);
		fclose(f);
		_exit(0);
	}
	close(p[1]);
	for (;;) {
		if (len + 4096 + 1 > cap) {
			cap = 2 * cap + 8192;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		ssize_t k = read(p[0], buf + len, cap - len - 1);
		if (k <= 0)
			break;
		len += (size_t)k;
	}
	buf[len] = 0;
	close(p[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return buf;
}

static void child_pairs(FILE *out)
{
	long psz = sysconf(_SC_PAGESIZE);

	for (int i = 0; i < 12; i++) { /* 2 warm-up pairs, then 10 */
		volatile char *p = mmap(NULL, 16 * (size_t)psz, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		madvise((void *)p, 16 * (size_t)psz, MADV_NOHUGEPAGE);
		PMON_REGION_BEGIN("child");
		touch(p, psz, 16);
		PMON_REGION_END("child");
		munmap((void *)p, 16 * (size_t)psz);
	}
	pmon_region_report(out, PMON_REPORT_JSON);
}

/* The child of fork() reports only its own pairs, counted by its own
 * counters: the parent sits in waitpid() and faults no page, so counters
 * inherited from it would read 0 faults per pair. */
static void test_region__fork_child_has_its_own(void **state)
{
	json_t *j, *r;

	(void)state;
	for (int i = 0; i < 5; i++) {
		PMON_REGION_BEGIN("parent-only");
		PMON_REGION_END("parent-only");
	}
	j = parse_json(in_child(child_pairs));
	assert_null(find_region(j, "parent-only"));
	assert_null(find_region(j, "faults"));
	assert_int_equal(json_array_size(json_object_get(j, "regions")), 1);
	r = region(j, "child");
	assert_int_equal(ival(r, "pairs"), 10);
	assert_int_equal(ival(r, "threads"), 1);
	assert_true(metric(r, "page-faults", "median") == 16);
	assert_true(metric(r, "page-faults", "min") == 16);
	assert_exact_total(metric(r, "page-faults", "total"), 160);
	json_decref(j);
	/* and the parent still has its own */
	j = report();
	assert_null(find_region(j, "child"));
	assert_true(ival(region(j, "parent-only"), "pairs") >= 3);
	json_decref(j);
}

/* Close this process's perf event descriptors (a child's: its own). */
static void close_perf_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	char path[64], link[64];

	assert_non_null(d);
	while ((de = readdir(d))) {
		int fd = atoi_or(de->d_name, -1);
		ssize_t k;
		if (fd < 0 || fd == dirfd(d))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		k = readlink(path, link, sizeof(link) - 1);
		if (k > 0) {
			link[k] = 0;
			if (strstr(link, "perf_event"))
				close(fd);
		}
	}
	closedir(d);
}

static void child_failed_read(FILE *out)
{
	long psz = sysconf(_SC_PAGESIZE);
	volatile char *p = mmap(NULL, 4 * (size_t)psz, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	madvise((void *)p, 4 * (size_t)psz, MADV_NOHUGEPAGE);
	for (int i = 0; i < 3; i++) { /* opens the child's counters; they count */
		PMON_REGION_BEGIN("before");
		touch(p + i * psz, psz, 1);
		PMON_REGION_END("before");
	}
	for (int i = 0; i < 2; i++) { /* the warm-up pairs */
		PMON_REGION_BEGIN("read-fails");
		PMON_REGION_END("read-fails");
	}
	PMON_REGION_BEGIN("read-fails");
	close_perf_fds(); /* the end's read() fails */
	PMON_REGION_END("read-fails");
	pmon_region_report(out, PMON_REPORT_JSON);
}

/* A pair whose end read fails is dropped and counted, never a difference
 * taken from zero (which wraps to ~2^64). */
static void test_region__failed_read_drops_the_pair(void **state)
{
	json_t *j, *r;

	(void)state;
	j = parse_json(in_child(child_failed_read));
	r = region(j, "read-fails");
	assert_int_equal(ival(r, "pairs"), 0);
	assert_int_equal(ival(r, "dropped"), 1);
	assert_int_equal(ival(region(j, "before"), "dropped"), 0);
	json_decref(j);
}

/* Fields of a CSV line (no quoting in the region report). */
static int csv_fields(const char *line)
{
	int n = 1;

	for (; *line; line++)
		n += *line == ',';
	return n;
}

/* A program that chose a German locale still gets '.' decimals and the
 * header's number of fields in every row. */
static void test_region__german_locale(void **state)
{
	char *old = strdup(setlocale(LC_ALL, NULL)), *csv, *table, *line, *save;
	char probe[16];
	int rows = 0, header = 0;
	json_t *j;

	(void)state;
	if (!setlocale(LC_ALL, "de_DE.UTF-8")) {
		free(old);
		print_message("skipped: no de_DE.UTF-8 locale (make deps generates it as root)\n");
		skip();
	}
	snprintf(probe, sizeof(probe), "%.1f", 1.5);
	assert_string_equal(probe, "1,5"); /* the locale is in force */
	csv = report_text(PMON_REPORT_CSV);
	table = report_text(PMON_REPORT_TABLE);
	j = report();
	setlocale(LC_ALL, old);
	free(old);
	for (line = strtok_r(csv, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!header) {
			header = csv_fields(line);
			continue;
		}
		rows++;
		assert_int_equal(csv_fields(line), header);
		if (!strncmp(line, "faults,", 7) && strstr(line, ",page-faults,")) {
			/* the total is exact only without a sanitizer, whose own
			 * trace faults in a page now and then (assert_exact_total) */
#ifdef UNDER_SANITIZER
			assert_non_null(strstr(line, ",16.00,16.00,")); /* median, mode */
#else
			assert_non_null(strstr(line, ",800,16.00,16.00,16.00,0.00,"));
#endif
		}
	}
	assert_true(header == 24 && rows > 0); /* issue 29 added raw_total,clamped,error */
	assert_non_null(strstr(table, "faults "));
	assert_null(strstr(table, " 16,0 "));
	assert_non_null(strstr(table, " 16.0 "));
	assert_true(metric(region(j, "faults"), "page-faults", "median") == 16);
	json_decref(j);
	free(csv);
	free(table);
}

/* Four fresh pages per call: touched, then given back with MADV_DONTNEED
 * (not munmap, which a sanitizer intercepts and follows with faults of its
 * own on shadow memory). */
static void touch4(void *arg)
{
	long psz = sysconf(_SC_PAGESIZE);
	volatile char *p = arg;

	touch(p, psz, 4);
	madvise((void *)p, 4 * (size_t)psz, MADV_DONTNEED);
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
	long psz = sysconf(_SC_PAGESIZE);
	void *pages = mmap(NULL, 4 * (size_t)psz, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(pages != MAP_FAILED);
	madvise(pages, 4 * (size_t)psz, MADV_NOHUGEPAGE);
	assert_int_equal(pmon_region_sweep(&o, touch4, pages, f, PMON_REPORT_CSV), 0);
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
	assert_int_equal(pmon_region_sweep(&o, touch4, pages, stderr, PMON_REPORT_CSV),
			 -PMON_ERRNO__EVENT_UNKNOWN);
	munmap(pages, 4 * (size_t)psz);
}

/* A call site whose name found no free id caches the failure: begin and end
 * ignore it without taking the library's lock again. Runs last: it uses up
 * every id. */
static void test_region__id_cache_keeps_failures(void **state)
{
	char name[32];
	int got = 0, n;

	(void)state;
	for (unsigned i = 0; i < pmon_region_max() + 1; i++) {
		snprintf(name, sizeof(name), "fill-%u", i);
		if (pmon_region_id(name) == -ENOSPC) {
			got = 1;
			break;
		}
	}
	assert_true(got);
	n = id_lookups;
	for (int i = 0; i < 5; i++) {
		PMON_REGION_BEGIN("one-too-many");
		PMON_REGION_END("one-too-many");
	}
	assert_int_equal(id_lookups - n, 2); /* one per call site */
	assert_int_equal(pmon_region_id("one-too-many"), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_region__exact_page_faults),
		cmocka_unit_test(test_region__empty_is_zero),
		cmocka_unit_test(test_region__nesting_and_unmatched),
		cmocka_unit_test(test_region__threads_lose_nothing),
		cmocka_unit_test(test_region__exited_threads_are_freed),
		cmocka_unit_test(test_region__fork_child_has_its_own),
		cmocka_unit_test(test_region__failed_read_drops_the_pair),
		cmocka_unit_test(test_region__german_locale),
		cmocka_unit_test(test_region__names_and_setup),
		cmocka_unit_test(test_region__sweep),
		cmocka_unit_test(test_region__id_cache_keeps_failures),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
