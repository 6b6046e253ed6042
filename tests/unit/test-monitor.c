// SPDX-License-Identifier: MIT
/*
 * The monitor layer: the one list parser (table-driven), target validation
 * against a given online list, deltas of (raw, enabled, running) before
 * scaling on synthetic kernel triples, Welford statistics where the sum of
 * squares cancels, perf's relative standard error, derived metrics; and on
 * the kernel with software events, a process expanded to all its threads
 * and the run-command helpers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <pmon/pmon.h>

/* ---- the list parser ---------------------------------------------------- */

static void test_monitor__idlist_parse(void **state)
{
	static const struct {
		int line;
		const char *s;
		long max;
		int err;
		const char *want; /* the values, comma-separated */
		const char *detail; /* part of the error detail */
	} rows[] = {
		{ __LINE__, "0-3,5", 100, 0, "0,1,2,3,5", NULL },
		{ __LINE__, "7", 100, 0, "7", NULL },
		{ __LINE__, "2-2", 100, 0, "2", NULL },
		{ __LINE__, "1,1", 100, 0, "1,1", NULL },
		{ __LINE__, "1,,2", 100, -EINVAL, NULL, "an empty item" },
		{ __LINE__, ",1", 100, -EINVAL, NULL, "an empty item" },
		{ __LINE__, "1,", 100, -EINVAL, NULL, "an empty item" },
		{ __LINE__, "", 100, -EINVAL, NULL, "empty" },
		{ __LINE__, "3-1", 100, -EINVAL, NULL, "backwards" },
		{ __LINE__, "abc", 100, -EINVAL, NULL, "'abc' is not a valid list" },
		{ __LINE__, "-1", 100, -EINVAL, NULL, "not a valid list" },
		{ __LINE__, "1-", 100, -EINVAL, NULL, "not a valid list" },
		{ __LINE__, " 1", 100, -EINVAL, NULL, "not a valid list" },
		{ __LINE__, "1 ", 100, -EINVAL, NULL, "not a valid list" },
		{ __LINE__, "0x10", 100, -EINVAL, NULL, "not a valid list" },
		{ __LINE__, "5", 4, -EINVAL, NULL, "above the largest, 4" },
		{ __LINE__, "99999999999999999999", 1L << 30, -EINVAL, NULL, "above the largest" },
	};

	(void)state;
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		long *v = NULL;
		size_t n = 0;
		int err = pmon_idlist__parse(rows[r].s, rows[r].max, &v, &n);
		if (err != rows[r].err)
			fail_msg("line %d: '%s' gave %d, want %d", rows[r].line, rows[r].s, err,
				 rows[r].err);
		if (err) {
			if (!strstr(pmon_errdetail(), rows[r].detail))
				fail_msg("line %d: detail '%s' lacks '%s'", rows[r].line,
					 pmon_errdetail(), rows[r].detail);
			continue;
		}
		char got[256] = "";
		size_t off = 0;
		for (size_t i = 0; i < n; i++)
			off += (size_t)snprintf(got + off, sizeof(got) - off, "%s%ld", i ? "," : "",
						v[i]);
		if (strcmp(got, rows[r].want))
			fail_msg("line %d: '%s' gave %s, want %s", rows[r].line, rows[r].s, got,
				 rows[r].want);
		free(v);
	}
}

/* No silent cap: a list as long as the user writes (top kept 64 pids, 256 CPUs). */
static void test_monitor__idlist_no_cap(void **state)
{
	long *v;
	size_t n;

	(void)state;
	assert_int_equal(pmon_idlist__parse("0-4999,7000", 1 << 20, &v, &n), 0);
	assert_int_equal(n, 5001);
	assert_int_equal(v[4999], 4999);
	assert_int_equal(v[5000], 7000);
	free(v);
}

/* The list a recording keeps (record -C): runs as ranges, cut with ",...". */
static void test_monitor__idlist_format(void **state)
{
	static const struct {
		int line;
		int ids[8];
		size_t n, len;
		int ret;
		const char *want;
	} rows[] = {
		{ __LINE__, { 0 }, 1, 64, 0, "0" },
		{ __LINE__, { 0, 2, 3 }, 3, 64, 0, "0,2-3" },
		{ __LINE__, { 0, 1, 2, 3, 8, 9, 11 }, 7, 64, 0, "0-3,8-9,11" },
		{ __LINE__, { 0 }, 0, 64, 0, "" },
		{ __LINE__, { 10, 20, 30 }, 3, 8, -ENOSPC, "10,..." },
		{ __LINE__, { 10, 20, 30 }, 3, 10, 0, "10,20,30" },
		{ __LINE__, { 10, 20, 30, 40 }, 4, 11, -ENOSPC, "10,20,..." },
		{ __LINE__, { 10, 20 }, 2, 6, 0, "10,20" },
		{ __LINE__, { 123456, 2 }, 2, 5, -ENOSPC, "..." },
		{ __LINE__, { 1 }, 1, 4, -EINVAL, NULL },
	};
	(void)state;
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		char buf[64];
		int ret = pmon_idlist__format(rows[r].ids, rows[r].n, buf, rows[r].len);
		if (ret != rows[r].ret || (rows[r].want && strcmp(buf, rows[r].want)))
			fail_msg("row at line %d: %d '%s'", rows[r].line, ret,
				 ret == -EINVAL ? "" : buf);
		if (rows[r].want)
			assert_true(strlen(buf) < rows[r].len);
	}
}

/*
 * stat -I --summary: the total of multiplexed intervals carries the spread
 * of their rates, not only the counting noise of one summed reading. Four
 * intervals, each counted half of its 100 ms: 1e6 and 3e6 events seen in
 * turn (rates 0.02 and 0.06 per ns), and one not counted.
 */
static void test_monitor__summary_mux_error(void **state)
{
	const double seen[] = { 1e6, 3e6, 1e6, 3e6 };
	struct pmon_count total, d;
	struct pmon_mux_error mux, one = { 0 };
	(void)state;

	for (size_t i = 0; i < 5; i++) {
		d = (struct pmon_count){ .status = PMON_COUNT_OK,
					 .enabled = 100000000,
					 .running = 50000000 };
		if (i == 4)
			d = (struct pmon_count){ .status = PMON_COUNT_NOT_COUNTED,
						 .enabled = 100000000 };
		else
			d.value = 2 * seen[i]; /* scaled: x enabled / running */
		d.raw = (uint64_t)(d.value / 2);
		pmon_count__add_interval(&total, &mux, &d, i == 0);
	}
	assert_true(total.value == 16e6);
	assert_int_equal(total.running, 200000000);
	assert_int_equal(mux.n, 4); /* the interval not counted: no reading */
	/* By hand (lib/stats/mux.c): counting noise sum(v U E / R^2) = 16e6;
	 * rates' variance 4e-4 x 4/3, times sum(U^2) = 1e16. */
	double want = sqrt(16e6 + 1e16 * 4e-4 * 4 / 3);
	assert_true(fabs(pmon_mux_error__estimate(&mux) - want) < 1e-6 * want);
	/* The summed total as one reading knows the noise alone: 4000. */
	pmon_mux_error__add(&one, total.value, total.enabled - 100000000, total.running);
	assert_true(fabs(pmon_mux_error__estimate(&one) - 4000) < 1e-6);
	assert_true(pmon_mux_error__estimate(&mux) > 500 * pmon_mux_error__estimate(&one));

	/* A steady rate: nothing but that noise, as one reading says. */
	for (size_t i = 0; i < 4; i++) {
		d = (struct pmon_count){ .status = PMON_COUNT_OK,
					 .enabled = 100000000,
					 .running = 50000000,
					 .value = 4e6 };
		pmon_count__add_interval(&total, &mux, &d, i == 0);
	}
	assert_true(fabs(pmon_mux_error__estimate(&mux) - 4000) < 1e-6);
}

/* ---- targets -------------------------------------------------------------- */

static void test_monitor__target_validate(void **state)
{
	struct pmon_target_spec spec = { .sz = sizeof(spec), .cpu_list = "0,5", .online = "0-1" };
	struct pmon_target *t;
	const int *cpus;
	size_t n;
	char self[32];

	(void)state;
	/* CPU 5 on a two-CPU machine: named, with the online list. */
	errno = 0;
	assert_null(pmon_target__new(&spec));
	assert_int_equal(errno, ENODEV);
	assert_string_equal(pmon_errdetail(), "CPU 5 does not exist (online: 0-1)");
	spec.online = "0,2-5";
	assert_non_null(t = pmon_target__new(&spec));
	assert_true(pmon_target__system_wide(t)); /* -C implies system-wide, as perf */
	assert_int_equal(pmon_target__kind(t), PMON_TARGET_CPUS);
	assert_non_null(cpus = pmon_target__cpus(t, &n));
	assert_int_equal(n, 2);
	assert_int_equal(cpus[0], 0);
	assert_int_equal(cpus[1], 5);
	assert_int_equal(pmon_target__pid(t), -1);
	pmon_target__free(t);
	/* Each CPU once, in order, as perf's cpu map: "5,0,0-0" is 0 and 5. */
	spec.cpu_list = "5,0,0-0";
	assert_non_null(t = pmon_target__new(&spec));
	assert_non_null(cpus = pmon_target__cpus(t, &n));
	assert_int_equal(n, 2);
	assert_int_equal(cpus[0], 0);
	assert_int_equal(cpus[1], 5);
	pmon_target__free(t);
	spec.cpu_list = "0,5";

	/* Processes: this one exists, pid 0x3fffffff almost surely not. */
	snprintf(self, sizeof(self), "%d", (int)getpid());
	spec = (struct pmon_target_spec){ .sz = sizeof(spec), .pid = self };
	assert_non_null(t = pmon_target__new(&spec));
	const pid_t *pids = pmon_target__pids(t, &n);
	assert_int_equal(n, 1);
	assert_int_equal(pids[0], getpid());
	assert_false(pmon_target__system_wide(t));
	assert_int_equal(pmon_target__kind(t), PMON_TARGET_PIDS);
	assert_null(pmon_target__tids(t, &n));
	assert_int_equal(n, 0);
	pmon_target__free(t);
	spec.pid = "1073741823";
	errno = 0;
	assert_null(pmon_target__new(&spec));
	assert_int_equal(errno, ESRCH);
	assert_string_equal(pmon_errdetail(), "process 1073741823 does not exist");

	/* The same list parser behind each list: "1,,2" refused, named. */
	spec = (struct pmon_target_spec){ .sz = sizeof(spec), .tid = "1,,2" };
	errno = 0;
	assert_null(pmon_target__new(&spec));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(pmon_errdetail(), "threads: '1,,2' is not a valid list"));
}

/* Each constructor's target: what it names, read back through accessors. */
static void test_monitor__target_constructors(void **state)
{
	static const struct {
		int line;
		pid_t pid; /* new_pid() */
		enum pmon_target_kind kind;
		pid_t want_pid;
	} rows[] = {
		{ __LINE__, 0, PMON_TARGET_SELF, 0 },
		{ __LINE__, 1, PMON_TARGET_PID, 1 },
		{ __LINE__, 4242, PMON_TARGET_PID, 4242 },
	};
	struct pmon_target *t;
	size_t n;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		t = pmon_target__new_pid(rows[i].pid);
		if (!t)
			fail_msg("row %d: NULL", rows[i].line);
		if (pmon_target__kind(t) != rows[i].kind ||
		    pmon_target__pid(t) != rows[i].want_pid || pmon_target__system_wide(t))
			fail_msg("row %d: kind %d pid %d", rows[i].line, (int)pmon_target__kind(t),
				 (int)pmon_target__pid(t));
		pmon_target__free(t);
	}
	errno = 0;
	assert_null(pmon_target__new_pid(-1));
	assert_int_equal(errno, EINVAL);

	/* Every CPU, or the ones given (copied). */
	assert_non_null(t = pmon_target__new_cpus(NULL, 0));
	assert_int_equal(pmon_target__kind(t), PMON_TARGET_CPUS);
	assert_true(pmon_target__system_wide(t));
	assert_null(pmon_target__cpus(t, &n));
	assert_int_equal(n, 0);
	pmon_target__free(t);
	int cpus[2] = { 1, 0 };
	assert_non_null(t = pmon_target__new_cpus(cpus, 2));
	cpus[0] = 7;
	assert_int_equal(pmon_target__cpus(t, &n)[0], 1);
	assert_int_equal(n, 2);
	pmon_target__free(t);

	/* An empty spec names nothing; -a alone is every CPU. */
	struct pmon_target_spec spec = { .sz = sizeof(spec) };
	assert_non_null(t = pmon_target__new(&spec));
	assert_int_equal(pmon_target__kind(t), PMON_TARGET_NONE);
	assert_int_equal(pmon_target__pid(t), -1);
	pmon_target__free(t);
	spec.system_wide = true;
	assert_non_null(t = pmon_target__new(&spec));
	assert_int_equal(pmon_target__kind(t), PMON_TARGET_CPUS);
	pmon_target__free(t);

	/* Threads: this one, by its tid. */
	char tid[32];
	snprintf(tid, sizeof(tid), "%d", (int)getpid());
	spec = (struct pmon_target_spec){ .sz = sizeof(spec), .tid = tid };
	assert_non_null(t = pmon_target__new(&spec));
	assert_int_equal(pmon_target__kind(t), PMON_TARGET_TIDS);
	assert_int_equal(pmon_target__tids(t, &n)[0], getpid());
	assert_int_equal(n, 1);
	pmon_target__free(t);

	/* No spec, and a spec smaller than the first release's: refused. */
	errno = 0;
	assert_null(pmon_target__new(NULL));
	assert_int_equal(errno, EINVAL);
	spec = (struct pmon_target_spec){ .sz = offsetof(struct pmon_target_spec, cpu_list) };
	errno = 0;
	assert_null(pmon_target__new(&spec));
	assert_int_equal(errno, EINVAL);
	pmon_target__free(NULL); /* accepted */
	assert_int_equal(pmon_target__kind(NULL), PMON_TARGET_NONE);
}

/* A cgroup target (perf's -G): per CPU, so system-wide; validated as a
 * directory with cgroup.procs before anything opens (a fake tree here). */
static void test_monitor__target_cgroup(void **state)
{
	char dir[] = "/tmp/pmon-test-cgroup-XXXXXX", path[128], procs[160];
	struct pmon_target_spec spec = { .sz = sizeof(spec) };
	struct pmon_target *t;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/gone", dir);
	spec.cgroup = path;
	errno = 0;
	assert_null(pmon_target__new(&spec));
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(pmon_errdetail(), "does not exist"));
	errno = 0;
	assert_null(pmon_target__new_cgroup(path));
	assert_int_equal(errno, ENOENT);

	/* a directory, but no cgroup.procs */
	errno = 0;
	assert_null(pmon_target__new_cgroup(dir));
	assert_int_equal(errno, ENOTDIR);
	errno = 0;
	assert_null(pmon_target__new_cgroup(NULL));
	assert_int_equal(errno, EINVAL);

	snprintf(path, sizeof(path), "%s/cg", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", path);
	FILE *f = fopen(procs, "w");
	assert_non_null(f);
	fclose(f);
	assert_non_null(t = pmon_target__new(&spec));
	assert_int_equal(pmon_target__kind(t), PMON_TARGET_CGROUP);
	assert_true(pmon_target__system_wide(t));
	assert_int_equal(pmon_target__pid(t), -1);
	assert_string_equal(pmon_target__cgroup(t), path);
	pmon_target__free(t);
	assert_non_null(t = pmon_target__new_cgroup(path));
	assert_string_equal(pmon_target__cgroup(t), path);

	/* Gone between the check and the open: the open fails before any
	 * counter, naming the cgroup. */
	unlink(procs);
	rmdir(path);
	struct pmon_evlist *l = pmon_evlist__new(NULL);
	assert_int_equal(pmon_evlist__add(l, "task-clock"), 0);
	errno = 0;
	assert_null(pmon_counters__open(l, t, NULL));
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(pmon_errdetail(), "cannot open cgroup"));
	pmon_evlist__free(l);
	pmon_target__free(t);
	rmdir(dir);

	/* An older caller's spec (without the field) names no cgroup. */
	spec = (struct pmon_target_spec){ .sz = offsetof(struct pmon_target_spec, cgroup),
					  .cgroup = "/nonexistent" };
	assert_non_null(t = pmon_target__new(&spec));
	assert_null(pmon_target__cgroup(t));
	assert_false(pmon_target__system_wide(t));
	pmon_target__free(t);
}

/* Open options: a struct smaller than the first release's is refused. */
static void test_monitor__open_opts_size(void **state)
{
	struct pmon_target *t = pmon_target__new_pid(0);
	struct pmon_evlist *l = pmon_evlist__new(NULL);
	struct pmon_open_opts how = { .sz = offsetof(struct pmon_open_opts, enable_on_exec) };

	(void)state;
	assert_non_null(t);
	assert_int_equal(pmon_evlist__add(l, "task-clock"), 0);
	errno = 0;
	assert_null(pmon_counters__open(l, t, &how));
	assert_int_equal(errno, EINVAL);
	assert_null(pmon_monitor__open(l, t, &how));
	assert_int_equal(errno, EINVAL);
	pmon_evlist__free(l);
	pmon_target__free(t);
}

/* ---- deltas ----------------------------------------------------------------- */

static struct pmon_count triple(uint64_t raw, uint64_t ena, uint64_t run)
{
	return (struct pmon_count){ .raw = raw, .enabled = ena, .running = run };
}

static void test_monitor__delta_scales_after_subtracting(void **state)
{
	static const struct {
		int line;
		uint64_t r0, e0, u0, r1, e1, u1;
		double scale, want;
		enum pmon_count_status st;
	} rows[] = {
		/* The case: (1000,100,50) -> (1100,200,150) is 100, never -533. */
		{ __LINE__, 1000, 100, 50, 1100, 200, 150, 1, 100, PMON_COUNT_OK },
		/* No multiplexing: the plain difference. */
		{ __LINE__, 500, 1000, 1000, 800, 2000, 2000, 1, 300, PMON_COUNT_OK },
		/* Half the interval running: doubled. */
		{ __LINE__, 0, 0, 0, 100, 200, 100, 1, 200, PMON_COUNT_OK },
		/* The unit scale (task-clock ns -> msec) after multiplexing. */
		{ __LINE__, 1000000, 10, 10, 3000000, 30, 20, 1e-6, 4, PMON_COUNT_OK },
		/* Enabled but never scheduled in the interval: not counted. */
		{ __LINE__, 1000, 100, 50, 1000, 200, 50, 1, 0, PMON_COUNT_NOT_COUNTED },
	};

	(void)state;
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		struct pmon_count a = triple(rows[r].r0, rows[r].e0, rows[r].u0);
		struct pmon_count b = triple(rows[r].r1, rows[r].e1, rows[r].u1), d;
		pmon_count__delta(&a, &b, rows[r].scale, &d);
		if (fabs(d.value - rows[r].want) > 1e-9 || d.status != rows[r].st)
			fail_msg("line %d: got %g status %d, want %g status %d", rows[r].line,
				 d.value, d.status, rows[r].want, rows[r].st);
	}
	/* The old way, for the record: scaled totals subtracted. */
	double wrong = pmon_count__scale(1100, 200, 150) - pmon_count__scale(1000, 100, 50);
	assert_true(wrong < -533 && wrong > -534);

	/* running percentage is the interval's own: 100 of 100 here. */
	struct pmon_count a = triple(1000, 100, 50), b = triple(1100, 200, 150), d;
	pmon_count__delta(&a, &b, 1, &d);
	assert_int_equal(d.raw, 100);
	assert_int_equal(d.enabled, 100);
	assert_int_equal(d.running, 100);
	assert_true(fabs(d.running_pct - 100) < 1e-9);
	/* A first reading: the delta is the reading itself. */
	pmon_count__delta(NULL, &b, 1, &d);
	assert_true(fabs(d.value - 1100 * 200.0 / 150.0) < 1e-9);
	/* Not supported stays so, with no value. */
	b.status = PMON_COUNT_NOT_SUPPORTED;
	pmon_count__delta(&a, &b, 1, &d);
	assert_int_equal(d.status, PMON_COUNT_NOT_SUPPORTED);
	assert_true(d.value == 0);
}

/* ---- statistics -------------------------------------------------------------- */

static double naive_stddev(const double *v, size_t n)
{
	double sum = 0, sumsq = 0;

	for (size_t i = 0; i < n; i++)
		sum += v[i], sumsq += v[i] * v[i];
	double var = (sumsq - sum * sum / (double)n) / (double)(n - 1);
	return var > 0 ? sqrt(var) : 0;
}

static void test_monitor__welford_no_cancellation(void **state)
{
	static const double big[] = { 1e12 + 1, 1e12 + 2, 1e12 + 3 };
	static const double ten[] = { 1.2345e10 - 1000, 1.2345e10, 1.2345e10 + 1000,
				      1.2345e10 - 500, 1.2345e10 + 500 };
	struct pmon_running_stats s = { 0 };

	(void)state;
	for (size_t i = 0; i < 3; i++)
		pmon_running_stats__add(&s, big[i]);
	assert_true(fabs(pmon_running_stats__stddev(&s) - 1.0) < 1e-6);
	assert_true(fabs(s.mean - (1e12 + 2)) < 1e-3);
	/* The one-pass sum of squares loses it all here. */
	assert_true(fabs(naive_stddev(big, 3) - 1.0) > 0.1);

	memset(&s, 0, sizeof(s));
	for (size_t i = 0; i < 5; i++)
		pmon_running_stats__add(&s, ten[i]);
	/* sqrt(2.5e6 / 4) = 790.569... */
	assert_true(fabs(pmon_running_stats__stddev(&s) - 790.5694150420949) < 1e-3);
	assert_true(s.min == ten[0] && s.max == ten[2]);
}

/* perf's "+- x%": the standard error of the mean, relative to it. */
static void test_monitor__rel_stderr_is_perfs(void **state)
{
	struct pmon_running_stats s = { 0 };

	(void)state;
	pmon_running_stats__add(&s, 90);
	assert_true(pmon_running_stats__rel_stderr(&s) == 0); /* one value: no spread */
	pmon_running_stats__add(&s, 100);
	pmon_running_stats__add(&s, 110);
	/* stddev 10, n 3: 10 / sqrt(3) / 100 = 5.7735 % */
	assert_true(fabs(pmon_running_stats__rel_stderr(&s) - 5.773502691896258) < 1e-9);
	assert_true(fabs(pmon_running_stats__stddev(&s) - 10) < 1e-12);
}

/* ---- metrics ------------------------------------------------------------------- */

static struct pmon_evlist *events(const char *spec)
{
	struct pmon_evlist *l = pmon_evlist__new(NULL);

	assert_non_null(l);
	if (pmon_evlist__add(l, spec))
		fail_msg("%s: %s", spec, pmon_errdetail());
	return l;
}

static void test_monitor__metrics(void **state)
{
	struct pmon_evlist *l = events("task-clock,context-switches,cycles,instructions");
	struct pmon_count v[4] = { { .value = 500, .status = PMON_COUNT_OK },
				   { .value = 1000, .status = PMON_COUNT_OK },
				   { .value = 2e9, .status = PMON_COUNT_OK },
				   { .value = 3e9, .status = PMON_COUNT_OK } };
	struct pmon_metric m;

	(void)state;
	m = pmon_metric__derive(l, v, 0, 0.25); /* 500 ms of task in 0.25 s */
	assert_true(m.ok && fabs(m.value - 2.0) < 1e-12);
	assert_string_equal(m.unit, "CPUs utilized");
	m = pmon_metric__derive(l, v, 1, 0.25); /* 1000 switches per 0.5 s of task */
	assert_true(m.ok && fabs(m.value - 2.0) < 1e-12);
	assert_string_equal(m.unit, "K/sec");
	m = pmon_metric__derive(l, v, 2, 0.25);
	assert_true(m.ok && fabs(m.value - 4.0) < 1e-12);
	assert_string_equal(m.unit, "GHz");
	m = pmon_metric__derive(l, v, 3, 0.25);
	assert_true(m.ok && fabs(m.value - 1.5) < 1e-12);
	assert_string_equal(m.unit, "insn per cycle");
	v[2].status = PMON_COUNT_NOT_SUPPORTED; /* no cycles: no IPC */
	m = pmon_metric__derive(l, v, 3, 0.25);
	assert_false(m.ok);
	pmon_evlist__free(l);
}

/* ---- the kernel: a process is all its threads ----------------------------------- */

static bool perf_allowed(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int p = 3;

	if (f) {
		if (fscanf(f, "%d", &p) != 1)
			p = 3;
		fclose(f);
	}
	return p <= 2 || geteuid() == 0;
}

static volatile int stop_spin;

static void *spin(void *arg)
{
	volatile unsigned long x = 0;

	(void)arg;
	while (!stop_spin)
		x++;
	return NULL;
}

static void test_monitor__process_is_all_threads(void **state)
{
	pthread_t th;
	pid_t *tids;
	size_t n;
	struct pmon_open_opts how = { .sz = sizeof(how), .inherit = true };
	char self[32];

	(void)state;
	snprintf(self, sizeof(self), "%d", (int)getpid());
	struct pmon_target_spec spec = { .sz = sizeof(spec), .pid = self };
	struct pmon_target *t = pmon_target__new(&spec);
	assert_non_null(t);
	stop_spin = 0;
	assert_int_equal(pthread_create(&th, NULL, spin, NULL), 0);
	assert_int_equal(pmon_target__threads(t, false, &tids, &n), 0);
	assert_true(n >= 2);
	free(tids);
	if (!perf_allowed()) {
		stop_spin = 1;
		pthread_join(th, NULL);
		pmon_target__free(t);
		skip();
	}
	/* Counting the process counts the spinning thread, not only main. */
	struct pmon_evlist *l = events("task-clock");
	struct pmon_monitor *m = pmon_monitor__open(l, t, &how);
	pmon_target__free(t); /* not kept by the monitor */
	assert_non_null(m);
	assert_true(pmon_counters__nunits(pmon_monitor__counters(m)) >= 2);
	assert_int_equal(pmon_monitor__start(m, NULL), 0);
	struct pmon_count d,
		*per = calloc(pmon_counters__nunits(pmon_monitor__counters(m)), sizeof(*per));
	double dt = 0;
	assert_non_null(per);
	/* Wait until the spinner has run 20 ms of CPU (a count, not a duration). */
	double total = 0;
	for (int i = 0; i < 1000 && total < 20; i++) {
		usleep(5000);
		assert_int_equal(pmon_monitor__read_delta(m, &d, per, &dt), 0);
		total += d.value;
		assert_true(dt > 0);
	}
	assert_true(total >= 20);
	stop_spin = 1;
	pthread_join(th, NULL);
	free(per);
	pmon_monitor__close(m);
	pmon_evlist__free(l);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * The interval after a rebase (top's reopen) is timed between the same
 * points as its counts: back-to-back readings, microseconds apart, add up
 * to no more CPU time than the elapsed time allows. The elapsed time used
 * to be taken after the base's reads and before the next reading's,
 * leaving both readings' length out: 3000 msec/s of cpu-clock on 2 CPUs,
 * 30 times the possible here. The median pair: one preempted read makes
 * one pair's rate anything.
 */
static void rebase_rate(const char *spec, const struct pmon_target *t, double max_per_unit)
{
	enum { PAIRS = 2001 };
	struct pmon_evlist *l = events(spec);
	struct pmon_monitor *m = pmon_monitor__open(l, t, NULL);
	double *ratio = calloc(PAIRS, sizeof(*ratio));

	assert_non_null(m);
	assert_non_null(ratio);
	size_t n = pmon_counters__nunits(pmon_monitor__counters(m));
	struct pmon_count d, *per = calloc(n, sizeof(*per));
	assert_non_null(per);
	for (int i = 0; i < PAIRS; i++) {
		double dt = 0;
		assert_int_equal(pmon_monitor__rebase(m), 0);
		assert_int_equal(pmon_monitor__read_delta(m, &d, per, &dt), 0);
		assert_true(dt > 0);
		ratio[i] = d.value / (max_per_unit * (double)n * dt);
	}
	qsort(ratio, PAIRS, sizeof(*ratio), cmp_double);
	if (ratio[PAIRS / 2] > 1.05)
		fail_msg("%s: the median pair counts %.2f x the possible", spec, ratio[PAIRS / 2]);
	free(ratio);
	free(per);
	pmon_monitor__close(m);
	pmon_evlist__free(l);
}

static void test_monitor__rebase_interval(void **state)
{
	(void)state;
	if (!perf_allowed())
		skip();
	struct pmon_target *self = pmon_target__new_pid(0), *all = pmon_target__new_cpus(NULL, 0);
	assert_non_null(self);
	assert_non_null(all);
	rebase_rate("task-clock", self, 1000); /* msec per second */
	if (geteuid() == 0) /* every CPU: a reading is one IPI per CPU */
		rebase_rate("cpu-clock", all, 1000);
	pmon_target__free(self);
	pmon_target__free(all);
}

/* ---- run-command ------------------------------------------------------------------ */

static void test_monitor__child_never_started(void **state)
{
	char path[] = "/tmp/pmon-test-monitor-XXXXXX";
	int fd = mkstemp(path);
	char *argv[] = { "/bin/rm", "-f", path, NULL };
	struct pmon_child ch;
	int st;
	struct stat sb;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	/* Closing the start pipe without the go byte: the child exits 127 and
	 * the command never runs (child.c read an uninitialised byte here). */
	assert_int_equal(pmon_child__fork(argv, &ch), 0);
	assert_int_equal(pmon_child__wait(&ch, &st, NULL), 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 127);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(ch.pid, -1); /* reaped: never signalled again */
	assert_int_equal(pmon_child__wait(&ch, &st, NULL), -ECHILD);
	unlink(path);

	/* Kill and reap; the shell's exit code of a signal death. */
	char *sl[] = { "/bin/sleep", "10", NULL };
	assert_int_equal(pmon_child__fork(sl, &ch), 0);
	assert_int_equal(pmon_child__start(&ch), 0);
	assert_int_equal(pmon_child__poll(&ch, &st, NULL), 0);
	assert_int_equal(pmon_child__kill(&ch, SIGTERM, &st), 0);
	assert_int_equal(pmon_exit_code(st), 128 + SIGTERM);
	assert_int_equal(pmon_child__kill(&ch, SIGTERM, &st), -ECHILD);
}

/* A file under a fake sysfs root, its directories made on the way. */
static void put_file(const char *root, const char *rel, const char *text)
{
	char path[512], cmd[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	assert_int_equal(system(cmd), 0);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

struct aggr_row {
	const char *label;
	size_t ncpus;
	double value;
	int line;
	enum pmon_count_status status; /* OK unless said */
};

/* Group the six units of test_monitor__aggr_topology()'s tree by @mode and
 * compare with @want (each row tagged with its __LINE__). */
static void check_aggr(const char *root, enum pmon_aggr_mode mode, const struct aggr_row *want,
		       size_t nwant)
{
	static const int unit_cpus[] = { 3, 0, 4, 1, 5, 2 }; /* any order */
	struct pmon_count per_unit[6], out[6];
	struct pmon_aggr *a = pmon_aggr__new(root, mode, unit_cpus, 6);

	assert_non_null(a);
	for (size_t u = 0; u < 6; u++) {
		per_unit[u] = (struct pmon_count){ .raw = 1u << unit_cpus[u],
						   .value = (double)(1u << unit_cpus[u]),
						   .enabled = 100,
						   .running = 100 };
		/* a CPU that never ran the event: its group still counted */
		if (unit_cpus[u] == 4)
			per_unit[u] = (struct pmon_count){ .status = PMON_COUNT_NOT_COUNTED,
							   .enabled = 100 };
	}
	pmon_aggr__sum(a, per_unit, 1, out);
	assert_int_equal(pmon_aggr__ngroups(a), nwant);
	for (size_t g = 0; g < nwant; g++) {
		if (strcmp(pmon_aggr__label(a, g), want[g].label) ||
		    pmon_aggr__ncpus(a, g) != want[g].ncpus || out[g].value != want[g].value ||
		    out[g].status != want[g].status)
			fail_msg("line %d: got %s %zu %g status %d", want[g].line,
				 pmon_aggr__label(a, g), pmon_aggr__ncpus(a, g), out[g].value,
				 (int)out[g].status);
	}
	pmon_aggr__free(a);
}

/* #29: perf stat's -A, --per-core, --per-die, --per-socket and --per-node
 * from a sysfs tree of two sockets, the first with two dies and a core of
 * two threads (this machine has one socket): perf's labels and order, the
 * CPUs per group, the counts summed. */
static void test_monitor__aggr_topology(void **state)
{
	/* cpu: socket, die, core; node 0 holds 0-2,4, node 1 holds 3,5 */
	static const int topo[6][3] = { { 0, 0, 0 }, { 0, 0, 1 }, { 0, 1, 0 },
					{ 1, 0, 0 }, { 0, 0, 0 }, { 1, 0, 0 } };
	char root[] = "/tmp/pmon-topo-XXXXXX", rel[128], v[16], cmd[64];
	static const char *const file[] = { "physical_package_id", "die_id", "core_id" };

	(void)state;
	assert_non_null(mkdtemp(root));
	for (int c = 0; c < 6; c++)
		for (int f = 0; f < 3; f++) {
			if (c == 5 && f == 1)
				continue; /* no die_id (before Linux 5.2): die 0 */
			snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/topology/%s", c,
				 file[f]);
			snprintf(v, sizeof(v), "%d\n", topo[c][f]);
			put_file(root, rel, v);
		}
	put_file(root, "devices/system/node/node0/cpulist", "0-2,4\n");
	put_file(root, "devices/system/node/node1/cpulist", "3,5\n");
	put_file(root, "devices/system/node/has_cpu", "0-1\n");

	const struct aggr_row core[] = { { "S0-D0-C0", 2, 1, __LINE__, PMON_COUNT_OK },
					 { "S0-D0-C1", 1, 2, __LINE__, PMON_COUNT_OK },
					 { "S0-D1-C0", 1, 4, __LINE__, PMON_COUNT_OK },
					 { "S1-D0-C0", 2, 8 + 32, __LINE__, PMON_COUNT_OK } };
	const struct aggr_row die[] = { { "S0-D0", 3, 1 + 2, __LINE__, PMON_COUNT_OK },
					{ "S0-D1", 1, 4, __LINE__, PMON_COUNT_OK },
					{ "S1-D0", 2, 40, __LINE__, PMON_COUNT_OK } };
	const struct aggr_row socket[] = { { "S0", 4, 1 + 2 + 4, __LINE__, PMON_COUNT_OK },
					   { "S1", 2, 40, __LINE__, PMON_COUNT_OK } };
	const struct aggr_row node[] = { { "N0", 4, 7, __LINE__, PMON_COUNT_OK },
					 { "N1", 2, 40, __LINE__, PMON_COUNT_OK } };
	const struct aggr_row cpu[] = { { "CPU0", 1, 1, __LINE__, PMON_COUNT_OK },
					{ "CPU1", 1, 2, __LINE__, PMON_COUNT_OK },
					{ "CPU2", 1, 4, __LINE__, PMON_COUNT_OK },
					{ "CPU3", 1, 8, __LINE__, PMON_COUNT_OK },
					{ "CPU4", 1, 0, __LINE__, PMON_COUNT_NOT_COUNTED },
					{ "CPU5", 1, 32, __LINE__, PMON_COUNT_OK } };
	check_aggr(root, PMON_AGGR_CORE, core, 4);
	check_aggr(root, PMON_AGGR_DIE, die, 3);
	check_aggr(root, PMON_AGGR_SOCKET, socket, 2);
	check_aggr(root, PMON_AGGR_NODE, node, 2);
	check_aggr(root, PMON_AGGR_CPU, cpu, 6); /* CPU4 never ran: <not counted> */

	/* a unit on no CPU (a thread's counter), an unknown topology */
	static const int none[] = { -1 }, seven[] = { 7 };
	assert_null(pmon_aggr__new(root, PMON_AGGR_SOCKET, none, 1));
	assert_int_equal(errno, EINVAL);
	assert_null(pmon_aggr__new(root, PMON_AGGR_SOCKET, seven, 1));
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(pmon_errdetail(), "cpu7/topology/physical_package_id"));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

/* #24 (small): the MSR backend's default CPUs are the online list, which has
 * gaps after a hot-unplug: "0,2-3" is CPUs 0, 2 and 3, never 0..2. */
static void test_monitor__cpus_online(void **state)
{
	char root[] = "/tmp/pmon-online-XXXXXX", path[512];
	int *cpus = NULL;
	size_t n = 0;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(root));
	assert_int_equal(pmon_cpus_online(root, &cpus, &n), -EINVAL); /* no file */
	assert_null(cpus);
	snprintf(path, sizeof(path), "%s/devices", root);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/devices/system", root);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/devices/system/cpu", root);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/devices/system/cpu/online", root);
	assert_non_null(f = fopen(path, "w"));
	fputs("0,2-3\n", f);
	fclose(f);
	assert_int_equal(pmon_cpus_online(root, &cpus, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(cpus[0], 0);
	assert_int_equal(cpus[1], 2);
	assert_int_equal(cpus[2], 3);
	free(cpus);
	assert_non_null(f = fopen(path, "w"));
	fputs("0-\n", f);
	fclose(f);
	assert_int_equal(pmon_cpus_online(root, &cpus, &n), -EINVAL);
	assert_non_null(strstr(pmon_errdetail(), "does not parse"));
	unlink(path);
	snprintf(path, sizeof(path), "%s/devices/system/cpu", root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/devices/system", root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/devices", root);
	rmdir(path);
	rmdir(root);
}

/* #24.4: a live CPUID snapshot is one CPU's: taken pinned, it says which
 * CPU, and the thread's affinity is put back after. pmon_thread_pin()
 * keeps the thread where the snapshot was taken. */
static void test_monitor__cpuid_snapshot_pinned(void **state)
{
	cpu_set_t before, after;
	struct pmon_cpuid *c;
	int cpu;

	(void)state;
	assert_int_equal(sched_getaffinity(0, sizeof(before), &before), 0);
	assert_non_null(c = pmon_cpuid__new_live());
	assert_true(pmon_cpuid__cpu(c) >= 0);
	assert_true(CPU_ISSET(pmon_cpuid__cpu(c), &before));
	assert_int_equal(sched_getaffinity(0, sizeof(after), &after), 0);
	assert_true(CPU_EQUAL(&before, &after));
	pmon_cpuid__free(c);

	cpu = pmon_thread_pin(-1);
	assert_true(cpu >= 0);
	assert_int_equal(sched_getcpu(), cpu);
	assert_int_equal(sched_getaffinity(0, sizeof(after), &after), 0);
	assert_int_equal(CPU_COUNT(&after), 1);
	assert_true(CPU_ISSET(cpu, &after));
	assert_non_null(c = pmon_cpuid__new_live());
	assert_int_equal(pmon_cpuid__cpu(c), cpu);
	pmon_cpuid__free(c);
	assert_true(pmon_thread_pin(CPU_SETSIZE + 1) < 0);
	assert_int_equal(sched_setaffinity(0, sizeof(before), &before), 0);
}

/* #25: one liveness rule. A zombie has exited -- kill(pid, 0) still
 * succeeds on it, which the old checks took for "running" -- and a process
 * of another user (EPERM) is alive. */
static void test_monitor__process_alive(void **state)
{
	char path[64], buf[256];
	pid_t pid;
	int status;

	(void)state;
	assert_true(pmon_process_alive(getpid()));
	assert_true(pmon_process_alive(1));
	assert_false(pmon_process_alive(0));
	assert_false(pmon_process_alive(-1));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (;;) { /* poll for the state, never a fixed sleep */
		FILE *f = fopen(path, "r");
		char *p = NULL;

		assert_non_null(f);
		if (fgets(buf, sizeof(buf), f))
			p = strrchr(buf, ')');
		fclose(f);
		if (p && p[2] == 'Z')
			break;
		sched_yield();
	}
	assert_int_equal(kill(pid, 0), 0); /* what the old rule asked */
	assert_false(pmon_process_alive(pid));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_false(pmon_process_alive(pid));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_monitor__idlist_parse),
		cmocka_unit_test(test_monitor__idlist_format),
		cmocka_unit_test(test_monitor__summary_mux_error),
		cmocka_unit_test(test_monitor__idlist_no_cap),
		cmocka_unit_test(test_monitor__target_validate),
		cmocka_unit_test(test_monitor__target_constructors),
		cmocka_unit_test(test_monitor__open_opts_size),
		cmocka_unit_test(test_monitor__delta_scales_after_subtracting),
		cmocka_unit_test(test_monitor__welford_no_cancellation),
		cmocka_unit_test(test_monitor__rel_stderr_is_perfs),
		cmocka_unit_test(test_monitor__metrics),
		cmocka_unit_test(test_monitor__target_cgroup),
		cmocka_unit_test(test_monitor__process_is_all_threads),
		cmocka_unit_test(test_monitor__rebase_interval),
		cmocka_unit_test(test_monitor__child_never_started),
		cmocka_unit_test(test_monitor__cpus_online),
		cmocka_unit_test(test_monitor__aggr_topology),
		cmocka_unit_test(test_monitor__cpuid_snapshot_pinned),
		cmocka_unit_test(test_monitor__process_alive),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
