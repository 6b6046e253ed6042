/* SPDX-License-Identifier: MIT */
/*
 * Running the tools pmon needs (valgrind, llvm-mca, objdump, as, ld): one
 * helper (lib/util/spawn.c) for the library and the tool alike.
 */
#ifndef PMON_SPAWN_H
#define PMON_SPAWN_H

#include <stdbool.h>
#include <stddef.h>
#include <pmon/common.h>

struct pmon_spawn_opts {
	size_t sz;
	/* Standard output into this file (created 0600, or truncated), or NULL. */
	const char *stdout_path;
	/* Non-NULL: standard error (and standard output, unless @stdout_path)
	 * collected into *@capture (malloc()ed, NUL-terminated, the caller
	 * frees; NULL on error), at most @capture_max bytes kept (0: 1 MiB),
	 * the rest read and dropped. Its length into *@capture_len if set. */
	char **capture;
	size_t *capture_len;
	/* These descriptors stay open in the tool under the same numbers. */
	const int *keep_fds;
	size_t nkeep;
	/* > 0: the tool is killed (SIGKILL) when it has not ended this many
	 * seconds after it closed its output. */
	double timeout_s;
	size_t capture_max;
};

/*
 * pmon_spawn() - run @argv (NULL-terminated; argv[0] an absolute path,
 * never looked up on $PATH) with the environment, wait for it.
 * Return: 0 with *@status (if not NULL) set as waitpid() sets it, or -errno
 * with pmon_errdetail() set: it could not start (-ENOENT, -EACCES...),
 * -ETIMEDOUT (killed after @opts->timeout_s), -ENOMEM.
 * Thread-safe; SIGCHLD must not be ignored.
 */
PMON_API int pmon_spawn(char *const argv[], const struct pmon_spawn_opts *opts, int *status);

/**
 * pmon_spawn_which() - the absolute path a tool @name would run from: a
 * name with a slash as it is (made absolute), else the first executable
 * regular file of that name on $PATH (/usr/local/bin:/usr/bin:/bin when
 * unset), a relative PATH entry made absolute, so the path pmon names is
 * the one it runs whatever the directory then.
 * Return: 0 with the path in @found; -ENOENT when there is none (a name
 * with a slash: access()'s -errno, e.g. -EACCES), or -ENAMETOOLONG when
 * it does not fit @len.
 */
PMON_API int pmon_spawn_which(const char *name, char *found, size_t len);

/**
 * pmon_spawn_workdir() - a new private folder for a tool's files,
 * $TMPDIR/pmon-@stem-XXXXXX (/tmp without $TMPDIR), its name in @path.
 * Return: 0, or -errno with pmon_errdetail() naming the folder it could
 * not make it in and why.
 */
PMON_API int pmon_spawn_workdir(const char *stem, char *path, size_t len);

/**
 * pmon_spawn_tmpfile() - a new private file $TMPDIR/pmon-@stem-XXXXXX
 * (/tmp without $TMPDIR), open for reading and writing, its name in @path.
 * Return: the descriptor (the caller closes it and removes the file), or
 * -errno (errno set too).
 */
PMON_API int pmon_spawn_tmpfile(const char *stem, char *path, size_t len);

#endif
