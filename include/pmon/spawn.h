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

#endif
