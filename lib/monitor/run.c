// SPDX-License-Identifier: MIT
/*
 * The run engine (pmon/monitor.h): what every command that runs or watches
 * something shares, in one place, so that the CLI only says what to run and
 * prints (git's run-command.c). A command is forked through counter/'s
 * pmon_child (held until its counters are open, released to exec, killed
 * with pmon); processes and threads pmon did not fork are watched with the
 * one liveness rule, pmon_process_alive(); signals are passed on to the
 * command with the grace period docs/exit-codes.md promises; one interval
 * loop calls the caller back per tick and at the end; the exit code (the
 * command's, 127, 128+N) and the "cannot run" detail are decided here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include <pmon/monitor.h>

#define RUN_GRACE_MS 1000 /* docs/exit-codes.md: "a second to end by it" */
#define RUN_STOP_MS 2000 /* "SIGTERM, and SIGKILL two seconds later" */
#define RUN_WATCH_S 0.1 /* how often watched processes are looked at */

struct pmon_run {
	struct pmon_child child;
	bool has_cmd;
	char *cmd; /* argv[0], for the detail */
	pid_t *pids, *tids; /* watched: the run ends when all are gone */
	size_t npids, ntids;
	unsigned grace_ms, stop_ms;
	int status; /* the command's wait status, once reaped */
	struct rusage ru;
	bool have_status; /* it ended by itself */
	bool stopped; /* pmon stopped it */
	bool exec_failed;
};

static int copy_ids(pid_t **dst, const pid_t *src, size_t n)
{
	if (!n)
		return 0;
	*dst = malloc(n * sizeof(**dst));
	if (!*dst)
		return -ENOMEM;
	memcpy(*dst, src, n * sizeof(**dst));
	return 0;
}

/* "cannot run 'CMD': REASON", the name cut so that the reason stays on a
 * line. @reason may be the detail buffer itself: it is copied first. */
static int cannot_run(const struct pmon_run *r, int err, const char *reason)
{
	char why[256];

	pmon__strlcpy(why, reason, sizeof(why));
	return pmon__err(err, "cannot run '%.200s%s': %s", r->cmd,
			 strlen(r->cmd) > 200 ? "..." : "", why);
}

struct pmon_run *pmon_run__new(char *const argv[], const struct pmon_target *watch,
			       const struct pmon_run_opts *opts)
{
	struct pmon_run *r;
	int err;

	if ((err = PMON_OPTS_CHECK(opts, struct pmon_run_opts, stop_ms)))
		return errno = -err, NULL;
	if (argv && (!argv[0] || !argv[0][0])) {
		pmon__err(-EINVAL, "no command to run");
		return errno = EINVAL, NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->child = (struct pmon_child){ .pid = -1, .go_fd = -1, .err_fd = -1 };
	r->grace_ms = PMON_OPTS_GET(opts, grace_ms, 0) ?: RUN_GRACE_MS;
	r->stop_ms = PMON_OPTS_GET(opts, stop_ms, 0) ?: RUN_STOP_MS;
	r->has_cmd = argv != NULL;
	if ((argv && !(r->cmd = strdup(argv[0]))) ||
	    (watch &&
	     (copy_ids(&r->pids, watch->pids, watch->npids) ||
	      copy_ids(&r->tids, watch->tids, watch->ntids)))) {
		pmon_run__free(r);
		return errno = ENOMEM, NULL;
	}
	if (watch)
		r->npids = watch->npids, r->ntids = watch->ntids;
	/* Before the fork: a signal this process ignores would otherwise stay
	 * ignored in the command (pmon_child__forward_signals()). */
	pmon_child__forward_signals(&r->child);
	if (argv && (err = pmon_child__fork(argv, &r->child))) {
		cannot_run(r, err, pmon_errdetail());
		pmon_run__free(r);
		return errno = -err, NULL;
	}
	return r;
}

void pmon_run__free(struct pmon_run *r)
{
	if (!r)
		return;
	if (r->child.pid > 0)
		pmon_child__kill(&r->child, SIGKILL, NULL);
	else
		pmon_child__wait(&r->child, NULL, NULL); /* closes a held child's pipes */
	pmon_child__forward_signals(NULL);
	free(r->cmd);
	free(r->pids);
	free(r->tids);
	free(r);
}

pid_t pmon_run__pid(const struct pmon_run *r)
{
	return r->child.pid > 0 ? r->child.pid : -1;
}

int pmon_run__start(struct pmon_run *r, struct pmon_monitor *m)
{
	int err;

	if (m)
		err = pmon_monitor__start(m, &r->child);
	else
		err = r->child.pid > 0 ? pmon_child__start(&r->child) : 0;
	if (!err)
		return 0;
	if (r->child.pid > 0 && r->child.go_fd < 0) {
		pmon_child__wait(&r->child, &r->status, &r->ru);
		if (WIFSIGNALED(r->status)) {
			/* a signal passed on (Ctrl-C) ended it before its exec:
			 * the run is over, with the status of that signal */
			r->have_status = true;
			return 0;
		}
		/* released, and its exec failed: it exits 127 at once */
		r->exec_failed = true;
		return cannot_run(r, err, strerror(-err));
	}
	if (r->child.pid > 0)
		pmon_child__kill(&r->child, SIGKILL, NULL);
	return pmon__err(err, "cannot start the counters: %s", strerror(-err));
}

static bool watched_alive(const struct pmon_run *r)
{
	for (size_t i = 0; i < r->npids; i++)
		if (pmon_process_alive(r->pids[i]))
			return true;
	for (size_t i = 0; i < r->ntids; i++)
		if (pmon_process_alive(r->tids[i]))
			return true;
	return false;
}

/* Reap the command if it has ended. Return: whether it is gone. */
static bool reaped(struct pmon_run *r)
{
	if (r->child.pid > 0 && pmon_child__poll(&r->child, &r->status, &r->ru) == 1)
		r->have_status = true;
	return r->child.pid <= 0;
}

bool pmon_run__done(struct pmon_run *r)
{
	if (r->has_cmd && reaped(r))
		return true;
	if ((r->npids || r->ntids) && !watched_alive(r))
		return true;
	return pmon_child__got_signal() != 0;
}

int pmon_run__signal(const struct pmon_run *r)
{
	(void)r; /* the handler's record is process-wide */
	return pmon_child__got_signal();
}

void pmon_run__stop(struct pmon_run *r)
{
	struct timespec ms = { 0, 10 * 1000 * 1000 };

	if (r->child.pid <= 0 || reaped(r))
		return;
	r->stopped = true;
	kill(r->child.pid, SIGTERM);
	for (unsigned t = 0; t < r->stop_ms; t += 10) {
		if (reaped(r)) {
			r->have_status = false; /* ended by pmon's SIGTERM */
			return;
		}
		nanosleep(&ms, NULL);
	}
	pmon_child__kill(&r->child, SIGKILL, &r->status);
	r->have_status = false;
}

int pmon_run__delay(struct pmon_run *r, struct pmon_monitor *m, unsigned delay_ms)
{
	double end = pmon_monotonic_s() + delay_ms / 1e3;

	for (;;) {
		if (pmon_run__done(r))
			return 0;
		double left = end - pmon_monotonic_s();
		if (left <= 0)
			break;
		/* 10 ms steps: a command that ends early ends the wait soon */
		left = left < 0.01 ? left : 0.01;
		struct timespec ts = { 0, (long)(left * 1e9) };
		nanosleep(&ts, NULL);
	}
	int err = pmon_monitor__start(m, NULL);
	return err ? pmon__err(err, "cannot start the counters: %s", strerror(-err)) : 1;
}

/* Wait for the command; after a signal passed on, it has grace_ms. */
static int wait_command(struct pmon_run *r)
{
	double since = 0;
	int pfd;

	if (r->child.pid <= 0)
		return 0;
	/* A pidfd becomes readable when the child ends (pidfd_open(2), Linux
	 * 5.3): poll() on it sleeps without the SIGCHLD race of a sleep, and a
	 * signal to pmon interrupts it. Without one, a plain blocking wait. */
	pfd = (int)syscall(SYS_pidfd_open, r->child.pid, 0);
	if (pfd < 0) {
		int err = pmon_child__wait(&r->child, &r->status, &r->ru);
		r->have_status = !err;
		return err;
	}
	while (!reaped(r)) {
		struct pollfd p = { .fd = pfd, .events = POLLIN };
		if (pmon_child__got_signal()) {
			double t = pmon_monotonic_s();
			if (!since) {
				since = t;
			} else if (t - since >= r->grace_ms / 1e3) {
				pmon_run__stop(r);
				break;
			}
		}
		poll(&p, 1, pmon_child__got_signal() ? 10 : -1);
	}
	close(pfd);
	return 0;
}

int pmon_run__wait(struct pmon_run *r)
{
	struct pmon_ticker tk;

	if (r->has_cmd)
		return wait_command(r);
	pmon_ticker__init(&tk, RUN_WATCH_S);
	while (!pmon_run__done(r)) {
		pmon_ticker__sleep(&tk);
		pmon_ticker__advance(&tk);
	}
	return 0;
}

int pmon_run__loop(struct pmon_run *r, double interval_s,
		   int (*tick)(void *ctx, double at_s, bool last), void *ctx)
{
	struct pmon_ticker tk;
	int rc = 0;

	if (interval_s <= 0 || !tick)
		return pmon_run__wait(r);
	pmon_ticker__init(&tk, interval_s);
	for (;;) {
		pmon_ticker__sleep(&tk);
		bool done = pmon_run__done(r);
		if (!done && pmon_ticker__remaining(&tk) > 0)
			continue; /* woken early by an unrelated signal */
		rc = tick(ctx, pmon_monotonic_s() - tk.start, done);
		if (rc) {
			pmon_run__stop(r);
			return rc;
		}
		if (done)
			break;
		pmon_ticker__advance(&tk);
	}
	return pmon_run__wait(r);
}

bool pmon_run__status(const struct pmon_run *r, int *status, struct rusage *ru)
{
	if (!r->have_status)
		return false;
	if (status)
		*status = r->status;
	if (ru)
		*ru = r->ru;
	return true;
}

int pmon_run__exit_code(const struct pmon_run *r)
{
	if (r->exec_failed)
		return 127;
	if (r->have_status)
		return pmon_exit_code(r->status);
	if (pmon_child__got_signal())
		return 128 + pmon_child__got_signal();
	return 0;
}
