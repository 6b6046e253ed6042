// SPDX-License-Identifier: MIT
/*
 * The one way pmon opens an output a user named (include/pmon/output.h,
 * issue #23): the path is looked at once, with lstat(), and what it is
 * decides how it is written. A regular file is replaced through a
 * temporary made beside it with mkostemp() (O_CREAT|O_EXCL: never through a
 * link, never over something that is there) and renamed over it only when
 * complete, as git's lockfile.c and coreutils' install do; a device or FIFO
 * is opened O_NONBLOCK first, so a FIFO nobody reads is an error at once
 * and not a hang; a link or file planted by another user in a sticky
 * world-writable directory is not used (the kernel's protected_symlinks and
 * protected_regular rules, fs/namei.c may_follow_link() and
 * may_create_in_sticky(), applied whatever the sysctls are). Nothing here
 * ever unlinks or renames a path as the user gave it: only the temporary
 * and, under KEEP_OLD, the regular file this output created.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pmon/output.h>

#include "internal.h"

enum out_kind {
	OUT_FILE, /* a regular file: replaced, in place, or created under KEEP_OLD */
	OUT_STREAM, /* a character device or FIFO */
	OUT_FD, /* a descriptor of the caller (/dev/stdout, /dev/fd/N) */
};

struct pmon_output {
	FILE *f;
	enum out_kind kind;
	bool created; /* KEEP_OLD: this output created ->path */
	bool kept_old; /* KEEP_OLD: ->path was renamed to ->old */
	dev_t dev; /* of what this output created (->tmp or ->path) */
	ino_t ino;
	int slot; /* in the temporaries' table, or -1 */
	char shown[PATH_MAX]; /* the name as given, for messages */
	char path[PATH_MAX]; /* the file written: the name, links resolved */
	char tmp[PATH_MAX]; /* the temporary, or "" */
	char old[PATH_MAX + 8];
};

/* What a name stands for, looked at once. */
struct target {
	int fd; /* >= 0: a descriptor of the caller */
	bool procfd; /* /proc/PID/fd/N of another process (its parent's file) */
	bool exists;
	struct stat st; /* of the file (links resolved) */
	struct stat dir; /* of its directory */
	char path[PATH_MAX];
	char dirname[PATH_MAX];
};

/* ---- temporaries removed at exit and on fatal signals -------------------- */

/* A fixed table, so the signal handler reads no memory that may be freed
 * under it: a slot is 0 (free), 1 (being filled or emptied) or 2 (live). */
#define NTEMPS 8
static int temp_state[NTEMPS];
static pid_t temp_pid[NTEMPS];
static char temp_path[NTEMPS][PATH_MAX];

static int temp_add(const char *path, size_t len)
{
	for (int i = 0; i < NTEMPS; i++) {
		int want = 0;
		if (!__atomic_compare_exchange_n(&temp_state[i], &want, 1, false, __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		memcpy(temp_path[i], path, len + 1);
		temp_pid[i] = getpid();
		__atomic_store_n(&temp_state[i], 2, __ATOMIC_RELEASE);
		return i;
	}
	return -1; /* a ninth open output: still removed by commit or abandon */
}

static void temp_drop(int slot)
{
	if (slot < 0)
		return;
	__atomic_store_n(&temp_state[slot], 1, __ATOMIC_RELEASE);
	temp_path[slot][0] = '\0';
	__atomic_store_n(&temp_state[slot], 0, __ATOMIC_RELEASE);
}

/* Async-signal-safe: getpid() and unlink() only. A forked child that has
 * not yet exec'd shares the table but not the files' owner: it removes
 * nothing. */
static void temps_remove(void)
{
	pid_t me = getpid();

	for (int i = 0; i < NTEMPS; i++)
		if (__atomic_load_n(&temp_state[i], __ATOMIC_ACQUIRE) == 2 && temp_pid[i] == me)
			unlink(temp_path[i]);
}

static void on_fatal_signal(int sig)
{
	int e = errno;

	temps_remove();
	errno = e;
	raise(sig); /* SA_RESETHAND: the default action, once this returns */
}

void pmon_output_cleanup_on_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	static bool done;
	struct sigaction sa = { .sa_handler = on_fatal_signal, .sa_flags = SA_RESETHAND };
	struct sigaction old;

	if (done)
		return;
	done = true;
	atexit(temps_remove);
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < PMON_ARRAY_SIZE(sigs); i++)
		if (!sigaction(sigs[i], NULL, &old) && !(old.sa_flags & SA_SIGINFO) &&
		    old.sa_handler == SIG_DFL)
			sigaction(sigs[i], &sa, NULL);
}

/* ---- what the name is ----------------------------------------------------- */

/* /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: the descriptor, or
 * -1. Opening those names anew would reopen a redirected file at offset 0
 * (Linux's /proc/PID/fd links are to the file, not the descriptor). */
static int own_fd(const char *p)
{
	const char *n = NULL;
	char *end;
	long v;

	if (!strcmp(p, "/dev/stdout"))
		return 1;
	if (!strcmp(p, "/dev/stderr"))
		return 2;
	if (!strncmp(p, "/dev/fd/", 8))
		n = p + 8;
	else if (!strncmp(p, "/proc/self/fd/", 14))
		n = p + 14;
	if (!n || !isdigit((unsigned char)*n))
		return -1;
	errno = 0;
	v = strtol(n, &end, 10);
	if (errno || *end || v > INT_MAX)
		return -1;
	return (int)v;
}

/* /proc/PID/fd/N: a descriptor of another process, reopened through the
 * kernel's magic link (proc_fd_link()) -- how pmon stat --regions hands a
 * command the unlinked report file it reads back. Never resolved as a
 * path: the file may have no name left. */
static bool proc_fd_name(const char *p)
{
	size_t n;

	if (strncmp(p, "/proc/", 6))
		return false;
	p += 6;
	n = strspn(p, "0123456789");
	if (!n || strncmp(p + n, "/fd/", 4))
		return false;
	p += n + 4;
	n = strspn(p, "0123456789");
	return n && !p[n];
}

static void dir_of(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		pmon__strlcpy(dir, ".", len);
	else if (slash == path)
		pmon__strlcpy(dir, "/", len);
	else
		pmon__fmt(dir, len, "%.*s", (int)(slash - path), path);
}

/* A directory where anyone may create and only owners may remove: /tmp. */
static bool sticky_shared(const struct stat *d)
{
	return (d->st_mode & (S_ISVTX | S_IWOTH)) == (S_ISVTX | S_IWOTH);
}

static const char *kind_name(mode_t m)
{
	return S_ISCHR(m)     ? "a character device"
		: S_ISFIFO(m) ? "a FIFO"
		: S_ISBLK(m)  ? "a block device"
		: S_ISSOCK(m) ? "a socket"
		: S_ISDIR(m)  ? "a directory"
			      : "not a regular file";
}

static int resolve(const char *name, struct target *t)
{
	struct stat lst;

	memset(t, 0, sizeof(*t));
	t->fd = own_fd(name);
	if (t->fd >= 0) {
		if (fstat(t->fd, &t->st))
			return pmon__err(-errno, "cannot write '%s': %s", name, strerror(errno));
		t->exists = true;
		return 0;
	}
	if (!*name)
		return pmon__err(-ENOENT, "cannot write '': the file name is empty");
	if (!pmon__fmt(t->path, sizeof(t->path), "%s", name))
		return pmon__err(-ENAMETOOLONG, "cannot write '%.64s...': the name is too long",
				 name);
	if (proc_fd_name(name)) {
		if (stat(name, &t->st))
			return pmon__err(-errno, "cannot write '%s': %s", name, strerror(errno));
		t->procfd = t->exists = true;
		return 0;
	}
	dir_of(t->path, t->dirname, sizeof(t->dirname));
	if (lstat(name, &lst)) {
		if (errno != ENOENT)
			return pmon__err(-errno, "cannot write '%s': %s", name, strerror(errno));
		if (stat(t->dirname, &t->dir) || !S_ISDIR(t->dir.st_mode))
			return pmon__err(-ENOENT,
					 "cannot write '%s': its directory '%s' does not exist",
					 name, t->dirname);
		return 0;
	}
	if (S_ISLNK(lst.st_mode)) {
		struct stat ld;
		if (stat(t->dirname, &ld))
			return pmon__err(-errno, "cannot write '%s': %s", name, strerror(errno));
		/* fs/namei.c may_follow_link(): in a sticky world-writable
		 * directory a link is followed only when the follower or the
		 * directory's owner owns it. Another user's link in /tmp is how
		 * a root tool is made to overwrite a file of root's choosing. */
		if (sticky_shared(&ld) && lst.st_uid != geteuid() && lst.st_uid != ld.st_uid)
			return pmon__err(-EPERM,
					 "will not write through '%s': a symbolic link of another "
					 "user (uid %u) in the shared directory '%s'",
					 name, (unsigned)lst.st_uid, t->dirname);
		char *real = realpath(name, NULL);
		if (!real) {
			int e = errno;
			if (e == ENOENT)
				return pmon__err(-ENOENT,
						 "cannot write '%s': a symbolic link to nothing "
						 "(name the file itself)",
						 name);
			return pmon__err(-e, "cannot write '%s': %s", name, strerror(e));
		}
		bool fits = pmon__fmt(t->path, sizeof(t->path), "%s", real);
		free(real);
		if (!fits)
			return pmon__err(-ENAMETOOLONG, "cannot write '%s': the name is too long",
					 name);
		dir_of(t->path, t->dirname, sizeof(t->dirname));
		if (lstat(t->path, &lst))
			return pmon__err(-errno, "cannot write '%s': %s", name, strerror(errno));
	}
	t->st = lst;
	t->exists = true;
	if (stat(t->dirname, &t->dir))
		return pmon__err(-errno, "cannot write '%s': %s", name, strerror(errno));
	return 0;
}

static int decide(const char *name, const struct target *t, unsigned flags)
{
	mode_t m = t->st.st_mode;

	if (t->fd >= 0 || t->procfd) {
		if (!(flags & PMON_OUTPUT_STREAM))
			return pmon__err(-EINVAL,
					 "cannot write '%s': a descriptor, and this output must be "
					 "a file that can be read back",
					 name);
		return 0;
	}
	if (!t->exists)
		return 0;
	if (S_ISDIR(m))
		return pmon__err(-EISDIR, "cannot write '%s': it is a directory", name);
	if (S_ISCHR(m) || S_ISFIFO(m)) {
		if (!(flags & PMON_OUTPUT_STREAM))
			return pmon__err(-EINVAL,
					 "cannot write '%s': %s, and this output must be a "
					 "regular file (it is read back); name a file",
					 name, kind_name(m));
	} else if (!S_ISREG(m)) {
		return pmon__err(-EINVAL, "cannot write '%s': %s, not a regular file", name,
				 kind_name(m));
	}
	/* fs/namei.c may_create_in_sticky() (protected_regular, protected_fifos):
	 * an existing file or FIFO in a sticky world-writable directory that
	 * neither this user nor the directory's owner owns is not opened for
	 * writing; character devices are not covered, as in the kernel. */
	if ((S_ISREG(m) || S_ISFIFO(m)) && sticky_shared(&t->dir) && t->st.st_uid != geteuid() &&
	    t->st.st_uid != t->dir.st_uid)
		return pmon__err(-EPERM,
				 "will not write '%s': %s of another user (uid %u) in the shared "
				 "directory '%s'",
				 name, S_ISREG(m) ? "a file" : "a FIFO", (unsigned)t->st.st_uid,
				 t->dirname);
	return 0;
}

static unsigned opts_flags(const struct pmon_output_opts *o)
{
	return o && o->sz >= offsetof(struct pmon_output_opts, flags) + sizeof(o->flags) ? o->flags
											 : 0;
}

int pmon_output__check(const char *path, const struct pmon_output_opts *opts)
{
	struct target t;
	int err;

	if (!path)
		return pmon__err(-EINVAL, "no output named");
	if ((err = resolve(path, &t)) || (err = decide(path, &t, opts_flags(opts))))
		return err;
	if (t.fd >= 0 || t.procfd || (t.exists && !S_ISREG(t.st.st_mode)))
		return 0;
	/* A new file, or one replaced through a temporary: the directory
	 * must take it (a file written in place only needs itself writable). */
	/* (an existing writable file in a directory that takes no new one is
	 * written in place: open_replace()'s fallback; KEEP_OLD must rename) */
	if (access(t.dirname, W_OK | X_OK) &&
	    (!t.exists || access(t.path, W_OK) || (opts_flags(opts) & PMON_OUTPUT_KEEP_OLD)))
		return pmon__err(-errno, "cannot write '%s': cannot create files in '%s': %s", path,
				 t.dirname, strerror(errno));
	if (t.exists && access(t.path, W_OK))
		return pmon__err(-errno, "cannot write '%s': %s", path, strerror(errno));
	return 0;
}

/* Blocking writes from here: the O_NONBLOCK was for the open only. */
static int set_blocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) ? -errno : 0;
}

static int open_stream(struct pmon_output *o, const struct target *t, bool append)
{
	int fd;

	if (t->procfd) {
		/* Through the magic link (no O_NOFOLLOW: the link is the way),
		 * never truncated: the other process's file as it stands. */
		o->kind = OUT_FD;
		fd = open(t->path,
			  O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (append ? O_APPEND : 0));
		if (fd < 0 || set_blocking(fd)) {
			int e = errno;
			if (fd >= 0)
				close(fd);
			return pmon__err(-e, "cannot write '%s': %s", o->shown, strerror(e));
		}
		return fd;
	}
	if (t->fd >= 0) {
		o->kind = OUT_FD;
		fd = fcntl(t->fd, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			return pmon__err(-errno, "cannot write '%s': %s", o->shown,
					 strerror(errno));
		return fd;
	}
	o->kind = OUT_STREAM;
	fd = open(t->path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENXIO)
		return pmon__err(-ENXIO, "cannot write '%s': a FIFO that nobody reads", o->shown);
	if (fd < 0)
		return pmon__err(-errno, "cannot write '%s': %s", o->shown, strerror(errno));
	struct stat st;
	int err = fstat(fd, &st) ? -errno : 0;
	/* The same device or FIFO that was looked at, not one swapped in. */
	if (!err &&
	    ((st.st_mode & S_IFMT) != (t->st.st_mode & S_IFMT) ||
	     (S_ISCHR(st.st_mode) ? st.st_rdev != t->st.st_rdev
				  : st.st_dev != t->st.st_dev || st.st_ino != t->st.st_ino)))
		err = -EAGAIN;
	if (!err)
		err = set_blocking(fd);
	if (err) {
		close(fd);
		return pmon__err(err, "cannot write '%s': %s", o->shown,
				 err == -EAGAIN ? "it changed while being opened" : strerror(-err));
	}
	return fd;
}

/* In place: truncated where it is. O_NOFOLLOW and O_NONBLOCK guard the time
 * between the look and the open: a link or FIFO put there meanwhile fails
 * or is seen by fstat, and never hangs. */
static int open_in_place(struct pmon_output *o, const struct target *t, bool append)
{
	int fd = open(t->path,
		      O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC) | O_NOFOLLOW | O_NOCTTY |
			      O_NONBLOCK | O_CLOEXEC,
		      0600);
	struct stat st;

	if (fd < 0)
		return pmon__err(-errno, "cannot write '%s': %s", o->shown, strerror(errno));
	int err = fstat(fd, &st) ? -errno : !S_ISREG(st.st_mode) ? -EAGAIN : set_blocking(fd);
	if (err) {
		close(fd);
		return pmon__err(err, "cannot write '%s': %s", o->shown,
				 err == -EAGAIN ? "it changed while being opened" : strerror(-err));
	}
	o->kind = OUT_FILE;
	return fd;
}

/* perf record's rule: the old recording is kept as PATH.old, the new one
 * created in its place; O_EXCL, so nothing that appeared meanwhile is
 * written through. */
static int open_keep_old(struct pmon_output *o, const struct target *t)
{
	struct stat st;
	int fd;

	if (!pmon__fmt(o->old, sizeof(o->old), "%s.old", t->path))
		return pmon__err(-ENAMETOOLONG, "cannot write '%s': the name is too long",
				 o->shown);
	struct stat ost;
	if (t->exists && !lstat(o->old, &ost) && !S_ISREG(ost.st_mode))
		return pmon__err(-EEXIST,
				 "cannot keep '%s' as '%s': that is %s, not a regular file; "
				 "move it away",
				 o->shown, o->old,
				 S_ISLNK(ost.st_mode) ? "a symbolic link" : kind_name(ost.st_mode));
	if (t->exists) {
		if (rename(t->path, o->old))
			return pmon__err(-errno, "cannot keep '%s' as '%s': %s", o->shown, o->old,
					 strerror(errno));
		o->kept_old = true;
	}
	fd = open(t->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
	if (fd < 0 || fstat(fd, &st)) {
		int e = errno;
		if (fd >= 0) {
			close(fd);
			unlink(t->path); /* created by this open, O_EXCL */
		}
		if (o->kept_old)
			(void)rename(o->old, t->path);
		o->kept_old = false;
		return pmon__err(-e, "cannot write '%s': %s", o->shown, strerror(e));
	}
	o->created = true;
	o->dev = st.st_dev;
	o->ino = st.st_ino;
	o->kind = OUT_FILE;
	return fd;
}

/* Replaced whole: a temporary beside the file (the same file system, so the
 * rename is atomic), with the file's mode and, for root, its owner, so a
 * rewrite changes its content only. A directory that takes no new file (a
 * writable file in a read-only directory) is written in place instead. */
static int open_replace(struct pmon_output *o, const struct target *t)
{
	const char *base = strrchr(t->path, '/');
	struct stat st;
	int fd;

	base = base ? base + 1 : t->path;
	/* An absolute name: a program given it (pmon trace's PMON_TRACE) may
	 * change directory before it opens it. */
	char cwd[PATH_MAX] = "";
	if (t->dirname[0] != '/' && !getcwd(cwd, sizeof(cwd)))
		return pmon__err(-errno, "cannot write '%s': %s", o->shown, strerror(errno));
	if (!pmon__fmt(o->tmp, sizeof(o->tmp), "%s%s%s/.%s.pmon-XXXXXX", cwd, cwd[0] ? "/" : "",
		       t->dirname, base)) {
		o->tmp[0] = '\0';
		return pmon__err(-ENAMETOOLONG, "cannot write '%s': the name is too long",
				 o->shown);
	}
	fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		o->tmp[0] = '\0';
		if ((e == EACCES || e == EPERM) && t->exists && !access(t->path, W_OK))
			return open_in_place(o, t, false);
		return pmon__err(-e, "cannot write '%s': cannot create files in '%s': %s", o->shown,
				 t->dirname, strerror(e));
	}
	o->slot = temp_add(o->tmp, strlen(o->tmp));
	if (t->exists) {
		if (geteuid() == 0 && (t->st.st_uid != 0 || t->st.st_gid != getegid()))
			(void)!fchown(fd, t->st.st_uid, t->st.st_gid);
		(void)fchmod(fd, t->st.st_mode & 0777);
	}
	if (fstat(fd, &st)) {
		int e = errno;
		close(fd);
		return pmon__err(-e, "cannot write '%s': %s", o->shown, strerror(e));
	}
	o->dev = st.st_dev;
	o->ino = st.st_ino;
	o->kind = OUT_FILE;
	return fd;
}

static void output_free(struct pmon_output *o)
{
	temp_drop(o->slot);
	free(o);
}

/* Remove this output's temporary, if it is still the one it made. */
static void drop_tmp(struct pmon_output *o)
{
	struct stat st;

	if (o->tmp[0] && !lstat(o->tmp, &st) && st.st_dev == o->dev && st.st_ino == o->ino)
		unlink(o->tmp);
	o->tmp[0] = '\0';
}

struct pmon_output *pmon_output__open(const char *path, const struct pmon_output_opts *opts)
{
	unsigned flags = opts_flags(opts);
	struct pmon_output *o;
	struct target t;
	int err, fd;

	if (!path)
		return pmon__ret_ptr(pmon__err(-EINVAL, "no output named"), NULL);
	if ((err = resolve(path, &t)) || (err = decide(path, &t, flags)))
		return pmon__ret_ptr(err, NULL);
	if (!(o = calloc(1, sizeof(*o))))
		return pmon__ret_ptr(-ENOMEM, NULL);
	o->slot = -1;
	pmon__strlcpy(o->shown, path, sizeof(o->shown));
	pmon__strlcpy(o->path, t.path, sizeof(o->path));
	if (t.fd >= 0 || t.procfd || (t.exists && !S_ISREG(t.st.st_mode)))
		fd = open_stream(o, &t, flags & PMON_OUTPUT_APPEND);
	else if (flags & PMON_OUTPUT_KEEP_OLD)
		fd = open_keep_old(o, &t);
	else if (flags & (PMON_OUTPUT_IN_PLACE | PMON_OUTPUT_APPEND))
		fd = open_in_place(o, &t, flags & PMON_OUTPUT_APPEND);
	else
		fd = open_replace(o, &t);
	if (fd < 0) {
		drop_tmp(o);
		output_free(o);
		return pmon__ret_ptr(fd, NULL);
	}
	if (!(o->f = fdopen(fd, "w"))) {
		err = -errno;
		close(fd);
		o->f = NULL;
		pmon_output__abandon(o);
		return pmon__ret_ptr(err, NULL);
	}
	return o;
}

FILE *pmon_output__file(const struct pmon_output *o)
{
	return o ? o->f : NULL;
}

int pmon_output__fd(const struct pmon_output *o)
{
	return o && o->f ? fileno(o->f) : -1;
}

const char *pmon_output__path(const struct pmon_output *o)
{
	return !o ? NULL : o->tmp[0] ? o->tmp : o->path;
}

bool pmon_output__is_stream(const struct pmon_output *o)
{
	return o && o->kind != OUT_FILE;
}

int pmon_output__commit(struct pmon_output *o)
{
	int err = 0;
	struct stat st;

	if (!o)
		return 0;
	errno = 0;
	if (fflush(o->f) || ferror(o->f))
		err = -(errno ? errno : EIO);
	if (fclose(o->f) && !err)
		err = -(errno ? errno : EIO);
	o->f = NULL;
	if (err) {
		err = pmon__err(err, "cannot write '%s': %s", o->shown, strerror(-err));
		drop_tmp(o); /* the file named keeps what it held */
		output_free(o);
		return err;
	}
	if (o->tmp[0]) {
		/* Only over a regular file: a device, FIFO or link that took
		 * the name meanwhile is left as it is, and so is the name. */
		if (!lstat(o->path, &st) && !S_ISREG(st.st_mode))
			err = pmon__err(-EEXIST,
					"cannot replace '%s': it is no longer a regular file "
					"(left as it is)",
					o->shown);
		else if (rename(o->tmp, o->path))
			err = pmon__err(-errno, "cannot write '%s': %s", o->shown, strerror(errno));
		else
			o->tmp[0] = '\0';
		drop_tmp(o);
	}
	output_free(o);
	return err;
}

void pmon_output__abandon(struct pmon_output *o)
{
	struct stat st;

	if (!o)
		return;
	if (o->f)
		fclose(o->f);
	o->f = NULL;
	drop_tmp(o);
	if (o->created && !lstat(o->path, &st) && st.st_dev == o->dev && st.st_ino == o->ino) {
		unlink(o->path); /* the regular file this output created, O_EXCL */
		if (o->kept_old)
			(void)rename(o->old, o->path);
	}
	output_free(o);
}
