// SPDX-License-Identifier: MIT
/*
 * A forked child that waits until its counters are open, then executes the
 * command (pmon/counter.h). With enable_on_exec the counts start exactly at
 * exec: pmon's own fork and setup are not counted. An exec failure comes
 * back through a close-on-exec pipe, so "no such command" is told apart
 * from a command that ran and exited 127.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include <pmon/counter.h>

int pmon_child__fork(char *const argv[], struct pmon_child *child)
{
	int go[2], ex[2];
	pid_t pid;

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
	pid = fork();
	if (pid < 0) {
		int e = -errno;
		close(go[0]), close(go[1]), close(ex[0]), close(ex[1]);
		return pmon__err(e, "cannot fork: %s", strerror(-e));
	}
	if (pid == 0) {
		char c;
		int e;

		close(go[1]);
		close(ex[0]);
		/* Wait for the parent; EOF without a byte means it gave up. */
		while (read(go[0], &c, 1) < 0 && errno == EINTR)
			;
		if (c != 'g')
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
	do {
		r = wait4(child->pid, status, 0, ru);
	} while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : 0;
}
