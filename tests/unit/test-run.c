// SPDX-License-Identifier: MIT
/*
 * The run engine (lib/monitor/run.c) with real commands: the command's own
 * exit code, 127 with the "cannot run" detail for one that cannot execute,
 * 128+N for one killed by signal N, a SIGINT to pmon passed on to the
 * command, the interval callback once per tick and once at the end, and
 * processes watched until they end. States and counts only, no durations.
 * The signal case runs last: the record of a signal is process-wide.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <pmon/pmon.h>

static struct pmon_run *run_cmd(char **argv)
{
	struct pmon_run *r = pmon_run__new(argv, NULL, NULL);

	assert_non_null(r);
	assert_true(pmon_run__pid(r) > 0);
	return r;
}

static void test_run__exit_status(void **state)
{
	char *argv[] = { "sh", "-c", "exit 3", NULL };
	struct pmon_run *r = run_cmd(argv);
	int status = -1;

	(void)state;
	assert_int_equal(pmon_run__start(r, NULL), 0);
	assert_int_equal(pmon_run__wait(r), 0);
	assert_true(pmon_run__status(r, &status, NULL));
	assert_true(WIFEXITED(status));
	assert_int_equal(pmon_run__exit_code(r), 3);
	assert_int_equal(pmon_run__pid(r), -1);
	pmon_run__free(r);
}

static void test_run__exec_failure_is_127(void **state)
{
	char *argv[] = { "pmon-test-no-such-command", NULL };
	struct pmon_run *r = run_cmd(argv);

	(void)state;
	assert_int_equal(pmon_run__start(r, NULL), -ENOENT);
	assert_non_null(strstr(pmon_errdetail(), "cannot run 'pmon-test-no-such-command': "));
	assert_non_null(strstr(pmon_errdetail(), strerror(ENOENT)));
	assert_int_equal(pmon_run__exit_code(r), 127);
	assert_false(pmon_run__status(r, NULL, NULL) && pmon_run__exit_code(r) != 127);
	pmon_run__free(r);
}

static void test_run__empty_command(void **state)
{
	char *argv[] = { "", NULL };

	(void)state;
	assert_null(pmon_run__new(argv, NULL, NULL));
	assert_int_equal(errno, EINVAL);
}

static void test_run__killed_is_128_plus_n(void **state)
{
	char *argv[] = { "sh", "-c", "kill -TERM $$", NULL };
	struct pmon_run *r = run_cmd(argv);
	int status = 0;

	(void)state;
	assert_int_equal(pmon_run__start(r, NULL), 0);
	assert_int_equal(pmon_run__wait(r), 0);
	assert_true(pmon_run__status(r, &status, NULL));
	assert_true(WIFSIGNALED(status));
	assert_int_equal(pmon_run__exit_code(r), 128 + SIGTERM);
	pmon_run__free(r);
}

struct ticks {
	unsigned n, last, stop_after;
};

static int on_tick(void *ctx, double at_s, bool last)
{
	struct ticks *t = ctx;

	assert_true(at_s >= 0);
	t->n++;
	t->last += last;
	return t->stop_after && t->n >= t->stop_after ? 7 : 0;
}

static void test_run__tick_stops_command(void **state)
{
	char *argv[] = { "sleep", "600", NULL };
	struct pmon_run *r = run_cmd(argv);
	struct ticks t = { .stop_after = 3 };

	(void)state;
	assert_int_equal(pmon_run__start(r, NULL), 0);
	assert_int_equal(pmon_run__loop(r, 0.01, on_tick, &t), 7);
	assert_int_equal(t.n, 3);
	assert_int_equal(t.last, 0);
	/* stopped by pmon: not the command's status, and gone */
	assert_false(pmon_run__status(r, NULL, NULL));
	assert_int_equal(pmon_run__pid(r), -1);
	assert_int_equal(pmon_run__exit_code(r), 0);
	pmon_run__free(r);
}

static void test_run__last_tick_once(void **state)
{
	char *argv[] = { "true", NULL };
	struct pmon_run *r = run_cmd(argv);
	struct ticks t = { 0 };

	(void)state;
	assert_int_equal(pmon_run__start(r, NULL), 0);
	assert_int_equal(pmon_run__loop(r, 0.01, on_tick, &t), 0);
	assert_true(t.n >= 1);
	assert_int_equal(t.last, 1);
	assert_true(pmon_run__done(r));
	assert_int_equal(pmon_run__exit_code(r), 0);
	pmon_run__free(r);
}

static void test_run__watch_until_gone(void **state)
{
	pid_t pid = fork();
	int status;

	(void)state;
	assert_true(pid >= 0);
	if (pid == 0) {
		pause();
		_exit(0);
	}
	char pids[32];
	snprintf(pids, sizeof(pids), "%d", (int)pid);
	struct pmon_target_spec spec = { .sz = sizeof(spec), .pid = pids };
	struct pmon_target *t = pmon_target__new(&spec);
	assert_non_null(t);
	struct pmon_run *r = pmon_run__new(NULL, t, NULL);
	pmon_target__free(t); /* its lists are copied */
	assert_non_null(r);
	assert_int_equal(pmon_run__pid(r), -1);
	assert_int_equal(pmon_run__start(r, NULL), 0);
	assert_false(pmon_run__done(r));
	kill(pid, SIGKILL); /* a zombie now: not alive by the one rule */
	assert_int_equal(pmon_run__wait(r), 0);
	assert_true(pmon_run__done(r));
	assert_int_equal(pmon_run__exit_code(r), 0);
	pmon_run__free(r);
	waitpid(pid, &status, 0);
}

/* The run ends with the command killed by SIGINT itself (not by pmon's
 * SIGTERM after the grace), and pmon's exit status says so. Frees @r. */
static void ended_by_sigint(struct pmon_run *r)
{
	int status = 0;

	assert_int_equal(pmon_run__wait(r), 0);
	assert_true(pmon_run__status(r, &status, NULL));
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGINT);
	assert_int_equal(pmon_run__exit_code(r), 128 + SIGINT);
	pmon_run__free(r);
}

static void test_run__sigint_passed_on(void **state)
{
	/* the command keeps SIGINT's default: this process does not ignore it */
	char *argv[] = { "sleep", "600", NULL };
	struct pmon_run *r = run_cmd(argv);

	(void)state;
	assert_int_equal(pmon_run__start(r, NULL), 0);
	assert_false(pmon_run__done(r));
	raise(SIGINT); /* to pmon: recorded, and passed on to the command */
	assert_int_equal(pmon_run__signal(r), SIGINT);
	ended_by_sigint(r);
}

/* A SIGINT passed on while the command is still held (forked, not yet
 * executed) ends it by SIGINT itself: the fork does not keep pmon's
 * forwarding handler, which caught it there and let `sleep` run (the
 * run then ended only by pmon's SIGTERM after the grace second). */
static void test_run__sigint_before_exec(void **state)
{
	char *argv[] = { "sleep", "600", NULL };
	struct pmon_run *r = run_cmd(argv);

	(void)state;
	raise(SIGINT); /* before the go: passed on to the held child */
	assert_int_equal(pmon_run__start(r, NULL), 0);
	ended_by_sigint(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run__exit_status),
		cmocka_unit_test(test_run__exec_failure_is_127),
		cmocka_unit_test(test_run__empty_command),
		cmocka_unit_test(test_run__killed_is_128_plus_n),
		cmocka_unit_test(test_run__tick_stops_command),
		cmocka_unit_test(test_run__last_tick_once),
		cmocka_unit_test(test_run__watch_until_gone),
		cmocka_unit_test(test_run__sigint_passed_on), /* last: see above */
		cmocka_unit_test(test_run__sigint_before_exec),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
