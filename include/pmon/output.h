/* SPDX-License-Identifier: MIT */
/*
 * Outputs a user named (`-o FILE`, `--plot FILE`, a recording, a trace):
 * the one way every pmon writer opens them, so that no command ever
 * destroys what the path is. A regular file is replaced whole through a
 * temporary beside it (created O_EXCL, never through a link) that is
 * renamed over it only when the output is complete, or written in place
 * where a reader follows it (a log); a character device or FIFO is a
 * stream, opened so that nothing hangs when nobody reads it, or refused
 * where the command must read its file back; a directory, a block device
 * or a socket is refused; a symbolic link is followed only where the
 * kernel's protected_symlinks rule would follow it (fs/namei.c,
 * may_follow_link()), and a file in a sticky world-writable directory
 * that neither pmon's user nor the directory's owner owns is not written
 * (protected_regular, may_create_in_sticky()), whatever the sysctls say.
 */
#ifndef PMON_OUTPUT_H
#define PMON_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <pmon/common.h>

#ifdef __cplusplus
extern "C" {
#endif

enum pmon_output_flags {
	/* A character device or FIFO is written to as a stream (a FIFO
	 * nobody reads is refused with ENXIO, at once); without this flag
	 * either is refused (EINVAL), for a command that reads its file back. */
	PMON_OUTPUT_STREAM = 1u << 0,
	/* A regular file is truncated and written where it is, so that a
	 * reader following it (tail -f) sees each line; without this flag it
	 * is written to a temporary and replaced at commit. */
	PMON_OUTPUT_IN_PLACE = 1u << 1,
	/* perf record's rule: an existing regular file is renamed to
	 * PATH.old and the output created anew in place (O_EXCL);
	 * pmon_output__abandon() removes it and puts PATH.old back. */
	PMON_OUTPUT_KEEP_OLD = 1u << 2,
	/* Like IN_PLACE, but appended to (O_APPEND), not truncated: a report
	 * that several runs or processes add to. */
	PMON_OUTPUT_APPEND = 1u << 3,
};

struct pmon_output_opts {
	size_t sz; /* sizeof(struct pmon_output_opts) */
	unsigned flags; /* enum pmon_output_flags */
};

struct pmon_output;

/**
 * pmon_output__open() - open @path for writing by the rules above.
 * The name is walked component by component, every link on the way
 * checked; a name that leads to /proc/PID/fd/N of this process
 * (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`) is the caller's own
 * descriptor (duplicated, written at its offset, as a shell redirection
 * would be), and of another process that process's file reopened through
 * the link (never truncated); both count as a stream.
 * Return: the output, or NULL with errno (detail: the file and why):
 * EINVAL (a kind the flags refuse), EISDIR, ENXIO (a FIFO without reader),
 * EPERM (a link or file the protected rules refuse), ENOENT (a dangling
 * link or a missing directory), or open(2)'s own.
 * Thread safety: none; one output is used by one thread.
 */
PMON_API struct pmon_output *pmon_output__open(const char *path,
					       const struct pmon_output_opts *opts);
/**
 * pmon_output__check() - what pmon_output__open() would refuse, said
 * before anything runs: creates, truncates and opens nothing (a FIFO's
 * reader is not looked for). Return: 0 or the -errno open would give.
 */
PMON_API int pmon_output__check(const char *path, const struct pmon_output_opts *opts);
/* The stream to write (owned by the output; fclose() it never). */
PMON_API FILE *pmon_output__file(const struct pmon_output *out);
/* Its descriptor, for a writer of its own (fileno of the stream). */
PMON_API int pmon_output__fd(const struct pmon_output *out);
/* Where the bytes go until commit: the temporary's absolute name, else the
 * name as given. */
PMON_API const char *pmon_output__path(const struct pmon_output *out);
/* Whether it is a character device or FIFO (or a descriptor of the caller). */
PMON_API bool pmon_output__is_stream(const struct pmon_output *out);
/**
 * pmon_output__commit() - flush and close; a temporary is renamed over the
 * path (over a regular file only: if something else now stands there, the
 * temporary is removed and -EEXIST returned). Frees @out (NULL: 0).
 * Return: 0, or -errno of the first failed write, flush, close or rename,
 * with the detail naming the path; nothing is left beside it then.
 */
PMON_API int pmon_output__commit(struct pmon_output *out);
/**
 * pmon_output__abandon() - close and remove what this output created: the
 * temporary, or under KEEP_OLD the new file (PATH.old is put back). A file
 * written in place keeps what was written (a log's intervals). Frees @out.
 */
PMON_API void pmon_output__abandon(struct pmon_output *out);
/**
 * pmon_output_cleanup_on_signals() - for a program that writes outputs:
 * at exit, and on SIGINT, SIGTERM, SIGHUP and SIGQUIT where their action
 * is the default one, remove every temporary an uncommitted output still
 * holds (then the signal's default action). Call once, early. Signals the
 * program handles itself are left alone: it commits or abandons.
 */
PMON_API void pmon_output_cleanup_on_signals(void);

/**
 * pmon_format_grouped() - @v with @decimals decimals, grouped in thousands
 * as the user's locale groups them (LC_ALL, LC_NUMERIC, LANG: "1,234,567.89"
 * in en_US, "1.234.567,89" in de_DE, "1234567.89" in C), whatever locale
 * this process set: perf stat's -B (printf's ' flag under that locale).
 * Tables for people only: CSV and JSON stay in the C locale.
 * Return: snprintf()'s.
 */
PMON_API int pmon_format_grouped(char *buf, size_t len, double v, int decimals);

#ifdef __cplusplus
}
#endif
#endif
