// SPDX-License-Identifier: MIT
/*
 * The one way pmon runs the tools it needs (valgrind, llvm-mca, objdump,
 * as, ld): posix_spawn() of an absolute path, standard output into a file
 * or, with standard error, collected through a pipe, the exit status
 * waited for without losing it to EINTR, and a stuck tool killed after a
 * timeout. Not for the command a user measures: that is the run engine's
 * (pmon_child, lib/counter/child.c), which enables counters on its exec.
 * Support layer: libc only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include <pmon/pmon.h>

extern char **environ;

int pmon__spawn_start(char *const argv[], const struct pmon_spawn_opts *o, int out_fd, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	int err;

	if (!argv || !argv[0])
		return pmon__err(-EINVAL, "nothing to run");
	if (posix_spawn_file_actions_init(&fa))
		return pmon__err(-ENOMEM, "out of memory");
	if (o && o->stdout_path)
		posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, o->stdout_path,
						 O_WRONLY | O_CREAT | O_TRUNC, 0600);
	else if (out_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, out_fd, STDOUT_FILENO);
	if (out_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, out_fd, STDERR_FILENO);
	/* dup2 onto itself clears FD_CLOEXEC in the child (POSIX.1-2024
	 * posix_spawn_file_actions_adddup2(), glibc 2.29 and later). */
	for (size_t i = 0; o && i < o->nkeep; i++)
		posix_spawn_file_actions_adddup2(&fa, o->keep_fds[i], o->keep_fds[i]);
	err = posix_spawn(pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err)
		return pmon__err(-err, "cannot run '%s': %s", argv[0], strerror(err));
	return 0;
}

int pmon__spawn_wait(pid_t pid, int *status, double timeout_s)
{
	int st = 0, pfd = -1;

	if (timeout_s > 0)
		pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pfd >= 0) {
		struct pollfd p = { .fd = pfd, .events = POLLIN };
		double ms = timeout_s * 1000;
		int r;
		while ((r = poll(&p, 1, ms > 2e9 ? -1 : (int)ms)) < 0 && errno == EINTR)
			;
		close(pfd);
		if (r == 0) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
			return pmon__err(-ETIMEDOUT, "no answer in %.3g s: stopped", timeout_s);
		}
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return pmon__err(-errno, "waiting for a tool: %s", strerror(errno));
	if (status)
		*status = st;
	return 0;
}

/* Read @fd to its end into @o's capture (what does not fit is drained). */
static int collect(int fd, const struct pmon_spawn_opts *o)
{
	size_t cap = o->capture_max ? o->capture_max : 1 << 20, got = 0;
	char *buf = malloc(cap + 1), sink[4096];
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		// cppcheck-suppress legacyUninitvar ; read() fills it, nothing reads it
		char *to = got < cap ? buf + got : sink;
		size_t room = got < cap ? cap - got : sizeof(sink);
		n = read(fd, to, room);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (got < cap)
			got += (size_t)n;
	}
	buf[got] = '\0';
	*o->capture = buf;
	if (o->capture_len)
		*o->capture_len = got;
	return 0;
}

int pmon_spawn(char *const argv[], const struct pmon_spawn_opts *opts, int *status)
{
	struct pmon_spawn_opts o = { 0 };
	int p[2] = { -1, -1 }, err;
	pid_t pid;

	err = PMON_OPTS_COPY(&o, opts, struct pmon_spawn_opts, capture_max);
	if (err)
		return err;
	if (o.capture) {
		*o.capture = NULL;
		if (pipe2(p, O_CLOEXEC))
			return pmon__err(-errno, "cannot make a pipe: %s", strerror(errno));
	}
	err = pmon__spawn_start(argv, &o, p[1], &pid);
	if (p[1] >= 0)
		close(p[1]);
	if (err) {
		if (p[0] >= 0)
			close(p[0]);
		return err;
	}
	if (p[0] >= 0) {
		/* Read before waiting: a tool that fills the pipe would never end. */
		int cerr = collect(p[0], &o);
		close(p[0]);
		err = pmon__spawn_wait(pid, status, o.timeout_s);
		if (!err && cerr)
			err = pmon__err(cerr, "out of memory");
		if (err) {
			free(*o.capture);
			*o.capture = NULL;
		}
		return err;
	}
	return pmon__spawn_wait(pid, status, o.timeout_s);
}

/* A relative PATH entry ("", ".") or name ("./prog") made absolute. */
static int found_at(const char *rel, char *found, size_t len)
{
	char cwd[4096];
	int n = rel[0] == '/' || !getcwd(cwd, sizeof(cwd))
		? snprintf(found, len, "%s", rel)
		: snprintf(found, len, "%s/%s", cwd, rel);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int pmon_spawn_which(const char *name, char *found, size_t len)
{
	char cand[4096];
	const char *path = getenv("PATH");

	if (strchr(name, '/')) {
		int err = found_at(name, found, len);
		return err ? err : access(name, X_OK) ? -errno : 0;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path;; p++) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		struct stat st;
		snprintf(cand, sizeof(cand), "%.*s%s%s", (int)n, p, n ? "/" : "", name);
		if (!access(cand, X_OK) && !stat(cand, &st) && S_ISREG(st.st_mode))
			return found_at(cand, found, len);
		if (!e)
			return -ENOENT;
		p = e;
	}
}

/* $TMPDIR/pmon-@stem-XXXXXX into @path; the folder in *@dir, and whether it
 * came from $TMPDIR. */
static int tmp_name(const char *stem, char *path, size_t len, const char **dir, bool *env)
{
	const char *t = getenv("TMPDIR");

	*env = t && *t;
	*dir = *env ? t : "/tmp";
	int n = snprintf(path, len, "%s/pmon-%s-XXXXXX", *dir, stem);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int pmon_spawn_workdir(const char *stem, char *path, size_t len)
{
	const char *dir;
	bool env;
	int err = tmp_name(stem, path, len, &dir, &env);

	if (!err && !mkdtemp(path))
		err = -errno;
	if (err)
		return pmon__err(err, "cannot make a temporary directory in '%s'%s: %s", dir,
				 env ? " ($TMPDIR)" : "", strerror(-err));
	return 0;
}

int pmon_spawn_tmpfile(const char *stem, char *path, size_t len)
{
	const char *dir;
	bool env;
	int err = tmp_name(stem, path, len, &dir, &env), fd;

	if (err) {
		errno = -err;
		return err;
	}
	fd = mkstemp(path);
	return fd < 0 ? -errno : fd;
}
