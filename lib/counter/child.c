// SPDX-License-Identifier: MIT
/*
 * A forked child that waits until its counters are open, then executes the
 * command (pmon/counter.h). With enable_on_exec the counts start exactly at
 * exec: pmon's own fork and setup are not counted. An exec failure comes
 * back through a close-on-exec pipe, so "no such command" is told apart
 * from a command that ran and exited 127. The rest of git's run-command
 * is here too: polling, killing and reaping the child, the shell's exit
 * code, and forwarding the user's signals to it, so that no command of the
 * tool carries its own copy. The child dies with its parent
 * (PR_SET_PDEATHSIG): a pmon killed by SIGKILL leaves no workload behind.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include <pmon/counter.h>

/*
 * The child's side, before it waits for the go: what a program expects at
 * exec. SIGPIPE's default (a caller that ignores it to see EPIPE, as the pmon
 * tool does, must not hand that to the command: `yes | head` relies on it),
 * and no blocked signals. Other ignored signals stay ignored: a shell's
 * background job or nohup set them for the command too. Handlers are reset by
 * exec itself.
 */
static void child_signals(pid_t parent)
{
	static const int fwd[] = { SIGINT, SIGTERM, SIGHUP, SIGCHLD };
	sigset_t none;

	signal(SIGPIPE, SIG_DFL);
	/* The parent's forwarding handlers (pmon_child__forward_signals()),
	 * inherited by the fork, reset now and not only at exec: a SIGINT
	 * forwarded before the exec must end the command as it would after,
	 * not be caught here and leave `sleep 10` to run its course (seen
	 * as exit 0 instead of 130 in t1400). The parent forked with them
	 * blocked, so one sent in between is pending and acts now. */
	for (size_t i = 0; i < sizeof(fwd) / sizeof(fwd[0]); i++) {
		struct sigaction sa;
		if (!sigaction(fwd[i], NULL, &sa) && sa.sa_handler != SIG_IGN)
			signal(fwd[i], SIG_DFL);
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Killed with the parent (prctl(2)); kept across exec. The parent may
	 * have died before the prctl: then the child is already reparented and
	 * the death signal never comes, so check getppid() after it. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
}

int pmon_child__fork(char *const argv[], struct pmon_child *child)
{
	int go[2], ex[2];
	pid_t pid, parent = getpid();

	if (!argv || !argv[0] || !argv[0][0])
		return pmon__err(-EINVAL, "no command to run");
	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(ex, O_CLOEXEC)) {
		int e = -errno;
		close(go[0]);
		close(go[1]);
		return e;
	}
	/* The forwarded signals held across the fork: the child must not run
	 * the parent's handler (child_signals() resets it, then unblocks). */
	sigset_t held, old;
	sigemptyset(&held);
	sigaddset(&held, SIGINT);
	sigaddset(&held, SIGTERM);
	sigaddset(&held, SIGHUP);
	sigprocmask(SIG_BLOCK, &held, &old);
	pid = fork();
	if (pid > 0)
		child->pid = pid; /* before the unblock: a held signal is forwarded to it */
	if (pid != 0)
		sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid < 0) {
		int e = -errno;
		close(go[0]), close(go[1]), close(ex[0]), close(ex[1]);
		return pmon__err(e, "cannot fork: %s", strerror(-e));
	}
	if (pid == 0) {
		char c = 0;
		ssize_t n;
		int e;

		close(go[1]);
		close(ex[0]);
		child_signals(parent);
		/* Wait for the parent; EOF without a byte means it gave up (c is
		 * then never written: test the count, not only the byte). */
		while ((n = read(go[0], &c, 1)) < 0 && errno == EINTR)
			;
		if (n != 1 || c != 'g')
			_exit(127);
		execvp(argv[0], argv);
		e = errno;
		while (write(ex[1], &e, sizeof(e)) < 0 && errno == EINTR)
			;
		_exit(127);
	}
	close(go[0]);
	close(ex[1]);
	child->pid = pid;
	child->go_fd = go[1];
	child->err_fd = ex[0];
	return 0;
}

int pmon_child__start(struct pmon_child *child)
{
	char c = 'g';
	int e = 0;
	ssize_t n;

	while ((n = write(child->go_fd, &c, 1)) < 0 && errno == EINTR)
		;
	close(child->go_fd);
	child->go_fd = -1;
	if (n != 1)
		return -EPIPE;
	while ((n = read(child->err_fd, &e, sizeof(e))) < 0 && errno == EINTR)
		;
	close(child->err_fd);
	child->err_fd = -1;
	return n == (ssize_t)sizeof(e) ? -e : 0;
}

/* The child signals go to, and the last signal received: a handler may
 * read only these (async-signal-safe). Reaping sets the child's pid to -1
 * and stops forwarding to it, so a reaped child's pid, which the system
 * may reuse, is never signalled. */
static struct pmon_child *volatile fwd_child;
static volatile sig_atomic_t fwd_sig;

static void reaped(struct pmon_child *child)
{
	child->pid = -1;
	if (fwd_child == child)
		fwd_child = NULL;
}

int pmon_child__wait(struct pmon_child *child, int *status, struct rusage *ru)
{
	pid_t r;

	if (child->go_fd >= 0) { /* never started: let it exit */
		close(child->go_fd);
		child->go_fd = -1;
	}
	if (child->err_fd >= 0) {
		close(child->err_fd);
		child->err_fd = -1;
	}
	if (child->pid <= 0)
		return -ECHILD;
	do {
		r = wait4(child->pid, status, 0, ru);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	reaped(child);
	return 0;
}

int pmon_child__poll(struct pmon_child *child, int *status, struct rusage *ru)
{
	pid_t r;

	if (child->pid <= 0)
		return -ECHILD;
	do {
		r = wait4(child->pid, status, WNOHANG, ru);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if (r == 0)
		return 0;
	reaped(child);
	return 1;
}

int pmon_child__kill(struct pmon_child *child, int sig, int *status)
{
	if (child->pid <= 0)
		return -ECHILD;
	if (kill(child->pid, sig) && errno != ESRCH)
		return -errno;
	return pmon_child__wait(child, status, NULL);
}

int pmon_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

static void on_signal(int sig)
{
	struct pmon_child *c = fwd_child;
	pid_t p = c ? c->pid : -1;

	fwd_sig = sig;
	if (p > 0)
		kill(p, sig);
}

static void on_chld(int sig)
{
	(void)sig; /* only to interrupt the caller's sleep */
}

void pmon_child__forward_signals(struct pmon_child *child)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa = { .sa_handler = on_signal }, sc = { .sa_handler = on_chld };

	fwd_child = child;
	if (!child)
		return; /* the handlers stay: a late signal is recorded, not fatal */
	sigemptyset(&sa.sa_mask);
	sigemptyset(&sc.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	sigaction(SIGCHLD, &sc, NULL);
}

int pmon_child__got_signal(void)
{
	return fwd_sig;
}
