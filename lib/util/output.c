// SPDX-License-Identifier: MIT
/*
 * The one way pmon opens an output a user named (include/pmon/output.h,
 * issue #23). The name is walked one component at a time, as the kernel's
 * path walk does, holding the directory reached as an O_PATH descriptor:
 * every symbolic link on the way is checked by the protected_symlinks rule
 * (fs/namei.c may_follow_link()) before it is followed, whatever the
 * sysctl says, and everything after the walk -- the temporary, the open,
 * the rename, the removal -- is done relative to that descriptor, so a
 * directory swapped for a link afterwards changes nothing. What the last
 * component is decides how it is written: a regular file is replaced
 * through a temporary created beside it (O_CREAT|O_EXCL) and renamed over
 * it only when complete (git's lockfile.c, coreutils' install); a device
 * or FIFO is opened O_NONBLOCK, so a FIFO nobody reads is an error at once
 * and not a hang; a file of another user in a sticky world-writable
 * directory is not opened (protected_regular, may_create_in_sticky()).
 * /proc/PID/fd/N links met on the way (/dev/stdout is one) are
 * descriptors, never resolved to a name. Nothing here ever unlinks or
 * renames what the user named: only the temporary, and under KEEP_OLD the
 * regular file this output created.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pmon/output.h>

#include "internal.h"

enum out_kind {
	OUT_FILE, /* a regular file: replaced, in place, or created under KEEP_OLD */
	OUT_STREAM, /* a character device or FIFO */
	OUT_FD, /* a descriptor: pmon's own, or another process's through /proc */
};

struct pmon_output {
	FILE *f;
	enum out_kind kind;
	int dirfd; /* O_PATH: the directory the file is in, or -1 */
	bool created; /* KEEP_OLD: this output created ->base */
	bool kept_old; /* KEEP_OLD: ->base was renamed to ->old */
	dev_t dev; /* of what this output created (->tmp or ->base) */
	ino_t ino;
	int slot; /* in the temporaries' table, or -1 */
	char *shown; /* the name as given, for messages */
	char *tmppath; /* the temporary's absolute name, or NULL */
	char base[NAME_MAX + 1];
	char tmp[NAME_MAX + 1]; /* the temporary's name in ->dirfd, or "" */
	char old[NAME_MAX + 1]; /* ->base.old */
};

/* What a name stands for, found by walk(). */
struct target {
	int fd; /* >= 0: a descriptor of pmon's own (/dev/stdout, /proc/self/fd/N) */
	bool procfd; /* /proc/PID/fd/N of another process: reopened through it */
	bool exists;
	int dirfd; /* O_PATH of the directory holding ->base, or -1 */
	struct stat st; /* of the file (or what the descriptor is) */
	struct stat dir; /* of its directory */
	char dirname[PATH_MAX]; /* absolute, links resolved ("" is the root) */
	char base[NAME_MAX + 1]; /* for ->procfd, the N of ->dirname/N */
};

/* ---- temporaries removed at exit and on fatal signals -------------------- */

/* A fixed table, so the signal handler reads no memory that may be freed
 * under it: a slot is 0 (free), 1 (being filled or emptied) or 2 (live),
 * and names its temporary by directory descriptor and name. */
#define NTEMPS 8
static int temp_state[NTEMPS];
static pid_t temp_pid[NTEMPS];
static int temp_dirfd[NTEMPS];
static char temp_name[NTEMPS][NAME_MAX + 1];

static int temp_add(int dirfd, const char *name)
{
	for (int i = 0; i < NTEMPS; i++) {
		int want = 0;
		if (!__atomic_compare_exchange_n(&temp_state[i], &want, 1, false, __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		pmon__strlcpy(temp_name[i], name, sizeof(temp_name[i]));
		temp_dirfd[i] = dirfd;
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
	temp_name[slot][0] = '\0';
	__atomic_store_n(&temp_state[slot], 0, __ATOMIC_RELEASE);
}

/* Async-signal-safe: getpid() and unlinkat() only. A forked child that has
 * not yet exec'd shares the table but not the files: it removes nothing. */
static void temps_remove(void)
{
	pid_t me = getpid();

	for (int i = 0; i < NTEMPS; i++)
		if (__atomic_load_n(&temp_state[i], __ATOMIC_ACQUIRE) == 2 && temp_pid[i] == me)
			unlinkat(temp_dirfd[i], temp_name[i], 0);
}

/*
 * A mount made for the run (tracefs, where pmon mounted it: lib/event), to
 * be undone if a signal ends pmon before it unmounts it: the system is left
 * as pmon found it. One at a time; the path is copied while no signal can
 * read it half written (state 1), as the temporaries' names are.
 */
static char fatal_mount[512];
static int fatal_mount_state; /* 0 none, 1 being written, 2 set */

void pmon__fatal_umount(const char *path)
{
	__atomic_store_n(&fatal_mount_state, 1, __ATOMIC_RELEASE);
	if (path)
		pmon__strlcpy(fatal_mount, path, sizeof(fatal_mount));
	__atomic_store_n(&fatal_mount_state, path ? 2 : 0, __ATOMIC_RELEASE);
}

/* Async-signal-safe: umount2() only. */
static void mount_undo(void)
{
	if (__atomic_load_n(&fatal_mount_state, __ATOMIC_ACQUIRE) == 2)
		umount2(fatal_mount, MNT_DETACH);
}

static void on_fatal_signal(int sig)
{
	int e = errno;

	mount_undo();
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
	atexit(mount_undo);
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < PMON_ARRAY_SIZE(sigs); i++)
		if (!sigaction(sigs[i], NULL, &old) && !(old.sa_flags & SA_SIGINFO) &&
		    old.sa_handler == SIG_DFL)
			sigaction(sigs[i], &sa, NULL);
}

/* ---- the walk -------------------------------------------------------------- */

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
		: S_ISLNK(m)  ? "a symbolic link"
			      : "not a regular file";
}

/* "/proc/PID/fd" or "/proc/PID/task/TID/fd": the PID, else 0. */
static long proc_fd_dir(const char *d)
{
	char *end;
	long pid;

	if (strncmp(d, "/proc/", 6))
		return 0;
	pid = strtol(d + 6, &end, 10);
	if (end == d + 6 || pid <= 0)
		return 0;
	if (!strcmp(end, "/fd"))
		return pid;
	if (strncmp(end, "/task/", 6))
		return 0;
	strtol(end + 6, &end, 10);
	return strcmp(end, "/fd") ? 0 : pid;
}

static void dir_up(char *d)
{
	char *slash = strrchr(d, '/');
	if (slash)
		*slash = '\0'; /* "" is the root */
}

/* A walk in progress: what is left of the name (a link's text put in front
 * of it as it is met), and the directory reached so far. A name, and each
 * link on the way, fit in PATH_MAX as the kernel's do. (The stack is kept
 * small: a region report at a program's exit walks its name, and every
 * page touched there is a fault the program pays: bench/stat-overhead.sh.) */
struct walk {
	const char *name; /* as the user gave it, for the messages */
	struct target *t;
	char rest[PATH_MAX];
	const char *p; /* into rest */
	int dfd, hops;
};

/* Open where @w's name starts: "/" or the working directory. */
static int walk_start(struct walk *w)
{
	struct target *t = w->t;

	if (!*w->name)
		return pmon__err(-ENOENT, "cannot write '': the file name is empty");
	if (!pmon__fmt(w->rest, sizeof(w->rest), "%s", w->name))
		return pmon__err(-ENAMETOOLONG, "cannot write '%.64s...': the name is too long",
				 w->name);
	if (w->name[0] == '/') {
		t->dirname[0] = '\0';
		w->dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	} else {
		if (!getcwd(t->dirname, sizeof(t->dirname)))
			return pmon__err(-errno, "cannot write '%s': %s", w->name, strerror(errno));
		if (!strcmp(t->dirname, "/"))
			t->dirname[0] = '\0';
		w->dfd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	if (w->dfd < 0)
		return pmon__err(-errno, "cannot write '%s': %s", w->name, strerror(errno));
	w->p = w->rest;
	return 0;
}

/* Close the directory and return @err (already a -errno with its detail). */
static int walk_fail(struct walk *w, int err)
{
	if (w->dfd >= 0)
		close(w->dfd);
	w->dfd = -1;
	return err;
}

/* Component @comp of the name does not exist. Return: 1 when it is the new
 * file to create (the walk ends there), else -errno with a detail. */
static int walk_missing(struct walk *w, const char *comp, int e, bool last, bool trailing_slash)
{
	struct target *t = w->t;

	if (e == ENOENT && last && proc_fd_dir(t->dirname))
		return walk_fail(w,
				 pmon__err(-EBADF, "cannot write '%s': descriptor %s is not open",
					   w->name, comp));
	if (e == ENOENT && last && !trailing_slash) {
		/* a new file; where a link led here (one the rule allowed), it
		 * is created where the link points, as open(O_CREAT) would */
		pmon__strlcpy(t->base, comp, sizeof(t->base));
		return 1;
	}
	if (e == ENOENT)
		return walk_fail(w,
				 pmon__err(-ENOENT,
					   "cannot write '%s': its directory '%s/%s' does not "
					   "exist",
					   w->name, t->dirname, comp));
	return walk_fail(w, pmon__err(-e, "cannot write '%s': %s", w->name, strerror(e)));
}

/* The last component is /proc/PID/fd/N: a descriptor, pmon's own (@pid is
 * this process) or another process's. Ends the walk: 0 or -errno. */
static int walk_proc_fd(struct walk *w, const char *comp, long pid)
{
	struct target *t = w->t;
	char buf[PATH_MAX];
	char *end;
	long fd = strtol(comp, &end, 10);

	walk_fail(w, 0);
	if (*end || fd < 0 || fd > INT_MAX)
		return pmon__err(-ENOENT, "cannot write '%s': no such descriptor", w->name);
	pmon__strlcpy(t->base, comp, sizeof(t->base));
	if (pid == getpid()) {
		t->fd = (int)fd;
		if (fstat(t->fd, &t->st))
			return pmon__err(-errno, "cannot write '%s': %s", w->name, strerror(errno));
	} else {
		t->procfd = true;
		pmon__fmt(buf, sizeof(buf), "%s/%s", t->dirname, comp);
		if (stat(buf, &t->st))
			return pmon__err(-errno, "cannot write '%s': %s", w->name, strerror(errno));
	}
	t->exists = true;
	return 0;
}

/* Follow the symbolic link @comp (its lstat in @st): the rest of the walk
 * becomes "LINK/what was left". Return: 0, or -errno with a detail. */
static int walk_link(struct walk *w, const char *comp, const struct stat *st, bool trailing_slash)
{
	struct target *t = w->t;
	char buf[PATH_MAX];
	struct stat ds;

	if (++w->hops > 40)
		return walk_fail(
			w, pmon__err(-ELOOP, "cannot write '%s': %s", w->name, strerror(ELOOP)));
	/* fs/namei.c may_follow_link(): in a sticky world-writable directory
	 * a link is followed only when the follower or the directory's owner
	 * owns it. Another user's link in /tmp is how a root tool is made to
	 * write a file of the attacker's choosing. */
	if (fstat(w->dfd, &ds) ||
	    (sticky_shared(&ds) && st->st_uid != geteuid() && st->st_uid != ds.st_uid))
		return walk_fail(w,
				 pmon__err(-EPERM,
					   "will not write through '%s': '%s/%s' is a "
					   "symbolic link of another user (uid %u) in a "
					   "shared directory",
					   w->name, t->dirname, comp, (unsigned)st->st_uid));
	ssize_t len = readlinkat(w->dfd, comp, buf, sizeof(buf) - 1);
	if (len <= 0)
		return walk_fail(w,
				 pmon__err(len < 0 ? -errno : -ENOENT, "cannot write '%s': %s",
					   w->name, len < 0 ? strerror(errno) : "an empty link"));
	buf[len] = '\0';
	/* rest becomes "LINK/what was left" (or "LINK/" for a name that
	 * ended in a slash), built in place */
	size_t lp = strlen(w->p), lb = (size_t)len, sep = lp || trailing_slash;
	if (lb + sep + lp + 1 > sizeof(w->rest))
		return walk_fail(w,
				 pmon__err(-ENAMETOOLONG, "cannot write '%s': %s", w->name,
					   strerror(ENAMETOOLONG)));
	memmove(w->rest + lb + sep, w->p, lp + 1);
	if (sep)
		w->rest[lb] = '/';
	memcpy(w->rest, buf, lb);
	w->p = w->rest;
	if (buf[0] == '/') {
		walk_fail(w, 0);
		t->dirname[0] = '\0';
		if ((w->dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
			return pmon__err(-errno, "cannot write '%s': %s", w->name, strerror(errno));
	}
	return 0;
}

/* Step into the directory @comp (its lstat in @st). Return: 0 or -errno. */
static int walk_into(struct walk *w, const char *comp, const struct stat *st)
{
	struct target *t = w->t;

	if (!S_ISDIR(st->st_mode))
		return walk_fail(w,
				 pmon__err(-ENOTDIR,
					   "cannot write '%s': '%s/%s' is not a directory", w->name,
					   t->dirname, comp));
	int sub = openat(w->dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	walk_fail(w, 0);
	if (sub < 0)
		return pmon__err(-errno, "cannot write '%s': %s", w->name, strerror(errno));
	w->dfd = sub;
	size_t dl = strlen(t->dirname);
	if (!pmon__fmt(t->dirname + dl, sizeof(t->dirname) - dl, "/%s", comp))
		return walk_fail(w,
				 pmon__err(-ENAMETOOLONG, "cannot write '%s': %s", w->name,
					   strerror(ENAMETOOLONG)));
	return 0;
}

/* Walk @name to the directory holding its last component, following links
 * the protected_symlinks rule allows. Return: 0, or -errno with a detail. */
static int walk(const char *name, struct target *t)
{
	struct walk w = { .name = name, .t = t, .dfd = -1 };
	char comp[NAME_MAX + 1];
	int err = walk_start(&w);

	if (err)
		return err;
	for (;;) {
		const char *p = w.p;
		while (*p == '/')
			p++;
		size_t n = strcspn(p, "/");
		const char *after = p + n;
		while (*after == '/')
			after++;
		bool last = !*after, trailing_slash = last && p[n] == '/';
		if (!n) { /* "/" alone, or a name ending in "/" */
			t->st.st_mode = S_IFDIR;
			t->exists = true;
			break;
		}
		if (n > NAME_MAX)
			return walk_fail(&w,
					 pmon__err(-ENAMETOOLONG,
						   "cannot write '%s': a name in it is too long",
						   name));
		memcpy(comp, p, n);
		comp[n] = '\0';
		w.p = after;
		if (!strcmp(comp, ".") && !last)
			continue;
		if (!strcmp(comp, "..") && !last) {
			int up = openat(w.dfd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
			walk_fail(&w, 0);
			if (up < 0)
				return pmon__err(-errno, "cannot write '%s': %s", name,
						 strerror(errno));
			w.dfd = up;
			dir_up(t->dirname);
			continue;
		}
		struct stat st;
		if (fstatat(w.dfd, comp, &st, AT_SYMLINK_NOFOLLOW)) {
			err = walk_missing(&w, comp, errno, last, trailing_slash);
			if (err < 0)
				return err;
			break;
		}
		long pid = proc_fd_dir(t->dirname);
		if (S_ISLNK(st.st_mode) && pid && last)
			return walk_proc_fd(&w, comp, pid);
		if (S_ISLNK(st.st_mode)) {
			if ((err = walk_link(&w, comp, &st, trailing_slash)))
				return err;
			continue;
		}
		if (last && !trailing_slash) {
			pmon__strlcpy(t->base, comp, sizeof(t->base));
			t->st = st;
			t->exists = true;
			break;
		}
		if ((err = walk_into(&w, comp, &st)))
			return err;
		if (last) { /* "dir/": the directory itself */
			t->st = st;
			t->exists = true;
			break;
		}
	}
	if (fstat(w.dfd, &t->dir)) {
		int e = errno;
		return walk_fail(&w, pmon__err(-e, "cannot write '%s': %s", name, strerror(e)));
	}
	t->dirfd = w.dfd;
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
				 t->dirname[0] ? t->dirname : "/");
	/* perf's FILE.old: only a regular file is ever renamed over. */
	if ((flags & PMON_OUTPUT_KEEP_OLD) && S_ISREG(m)) {
		char old[NAME_MAX + 8];
		struct stat ost;
		if (!pmon__fmt(old, sizeof(old), "%s.old", t->base) || strlen(old) > NAME_MAX)
			return pmon__err(-ENAMETOOLONG, "cannot keep '%s' as '%s.old': %s", name,
					 name, strerror(ENAMETOOLONG));
		if (!fstatat(t->dirfd, old, &ost, AT_SYMLINK_NOFOLLOW) && !S_ISREG(ost.st_mode))
			return pmon__err(-EEXIST,
					 "cannot keep '%s' as '%s.old': that is %s, not a regular "
					 "file; move it away",
					 name, name, kind_name(ost.st_mode));
	}
	return 0;
}

static unsigned opts_flags(const struct pmon_output_opts *o)
{
	return PMON_OPTS_GET(o, flags, 0u);
}

static void target_release(struct target *t)
{
	if (t->dirfd >= 0)
		close(t->dirfd);
	t->dirfd = -1;
}

static int look(const char *name, struct target *t, unsigned flags)
{
	int err;

	memset(t, 0, sizeof(*t));
	t->fd = t->dirfd = -1;
	if ((err = walk(name, t)) || (err = decide(name, t, flags)))
		target_release(t);
	return err;
}

int pmon_output__check(const char *path, const struct pmon_output_opts *opts)
{
	unsigned flags = opts_flags(opts);
	struct target t;
	int err = 0;

	if (!path)
		return pmon__err(-EINVAL, "no output named");
	if ((err = look(path, &t, flags)))
		return err;
	if (t.fd >= 0 || t.procfd || (t.exists && !S_ISREG(t.st.st_mode)))
		goto out;
	/* A new file, a temporary, or FILE.old: the directory must take them
	 * (a log or report written in place only needs the file writable). */
	bool in_place = flags & (PMON_OUTPUT_IN_PLACE | PMON_OUTPUT_APPEND);
	if ((!t.exists || !in_place) && faccessat(t.dirfd, ".", W_OK | X_OK, 0))
		err = pmon__err(-errno, "cannot write '%s': cannot create files in '%s/': %s", path,
				t.dirname, strerror(errno));
	else if (t.exists && faccessat(t.dirfd, t.base, W_OK, 0))
		err = pmon__err(-errno, "cannot write '%s': %s", path, strerror(errno));
out:
	target_release(&t);
	return err;
}

/* ---- opening ------------------------------------------------------------- */

/* Blocking writes from here: the O_NONBLOCK was for the open only. */
static int set_blocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) ? -errno : 0;
}

/* The file @fd is the one that was looked at, not one swapped in since. */
static bool same_file(int fd, const struct stat *want)
{
	struct stat st;

	if (fstat(fd, &st) || (st.st_mode & S_IFMT) != (want->st_mode & S_IFMT))
		return false;
	if (S_ISCHR(st.st_mode))
		return st.st_rdev == want->st_rdev;
	return st.st_dev == want->st_dev && st.st_ino == want->st_ino;
}

static int open_fail(struct pmon_output *o, int fd, int err)
{
	if (fd >= 0)
		close(fd);
	return pmon__err(err, "cannot write '%s': %s", o->shown,
			 err == -EAGAIN ? "it changed while being opened" : strerror(-err));
}

static int open_stream(struct pmon_output *o, const struct target *t, bool append)
{
	int fd;

	if (t->fd >= 0) { /* written at its offset, as a redirection is */
		o->kind = OUT_FD;
		fd = fcntl(t->fd, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? open_fail(o, -1, -errno) : fd;
	}
	if (t->procfd) {
		/* Through the magic link (proc_fd_link()): another process's
		 * file as it stands, never truncated. */
		o->kind = OUT_FD;
		char magic[PATH_MAX + NAME_MAX + 2];
		pmon__fmt(magic, sizeof(magic), "%s/%s", t->dirname, t->base);
		fd = open(magic,
			  O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (append ? O_APPEND : 0));
		if (fd < 0)
			return open_fail(o, -1, -errno);
		int err = set_blocking(fd);
		return err ? open_fail(o, fd, err) : fd;
	}
	o->kind = OUT_STREAM;
	fd = openat(t->dirfd, t->base, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENXIO && S_ISFIFO(t->st.st_mode))
		return pmon__err(-ENXIO, "cannot write '%s': a FIFO that nobody reads", o->shown);
	if (fd < 0)
		return open_fail(o, -1, -errno);
	int err = same_file(fd, &t->st) ? set_blocking(fd) : -EAGAIN;
	return err ? open_fail(o, fd, err) : fd;
}

/* In place: a new file is created O_EXCL; an existing one is opened
 * without O_CREAT or O_TRUNC, checked to be the file that was looked at
 * (whose owner decide() judged), and only then truncated. O_NOFOLLOW and
 * O_NONBLOCK: a link or FIFO put there meanwhile fails or is seen, and
 * never hangs. */
static int open_in_place(struct pmon_output *o, const struct target *t, bool append)
{
	int flags = O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC |
		(append ? O_APPEND : 0) | (t->exists ? 0 : O_CREAT | O_EXCL);
	int fd = openat(t->dirfd, t->base, flags, 0600);

	if (fd < 0)
		return open_fail(o, -1, errno == EEXIST ? -EAGAIN : -errno);
	int err = t->exists && !same_file(fd, &t->st) ? -EAGAIN : 0;
	if (!err && t->exists && !append && ftruncate(fd, 0))
		err = -errno;
	if (!err)
		err = set_blocking(fd);
	if (err)
		return open_fail(o, fd, err);
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

	pmon__fmt(o->old, sizeof(o->old), "%s.old", t->base); /* length checked by decide() */
	if (t->exists) {
		if (renameat(t->dirfd, t->base, t->dirfd, o->old))
			return pmon__err(-errno, "cannot keep '%s' as '%s.old': %s", o->shown,
					 o->shown, strerror(errno));
		o->kept_old = true;
	}
	fd = openat(t->dirfd, t->base,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
	if (fd < 0 || fstat(fd, &st)) {
		int e = errno;
		if (fd >= 0) {
			close(fd);
			unlinkat(t->dirfd, t->base, 0); /* created by this open, O_EXCL */
		}
		/* put back, but never over what took the name meanwhile (the
		 * O_EXCL open may have failed because something is there) */
		if (o->kept_old)
			(void)renameat2(t->dirfd, o->old, t->dirfd, t->base, RENAME_NOREPLACE);
		o->kept_old = false;
		return pmon__err(-e, "cannot write '%s': %s", o->shown, strerror(e));
	}
	o->created = true;
	o->dev = st.st_dev;
	o->ino = st.st_ino;
	o->kind = OUT_FILE;
	return fd;
}

/*
 * Temporaries are named .BASE.pmon-PID-XXXXXX and hold an flock() while
 * their output is open. SIGKILL removes nothing, so the next output of the
 * same name removes what a killed pmon left (issue #31.10): a temporary of
 * ours whose pmon is gone and which no one holds locked (a pmon in another
 * pid namespace, where its pid means nothing here, still holds its lock).
 * Only the temporaries of @t->base: never a file the user named.
 */
static void remove_stale_temps(const struct target *t)
{
	char prefix[NAME_MAX + 16];
	int dfd = openat(t->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;

	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return;
	}
	size_t np = pmon__fmt(prefix, sizeof(prefix), ".%s.pmon-", t->base) ? strlen(prefix) : 0;
	for (struct dirent *e; np && (e = readdir(d));) {
		char *end;
		struct stat st, now;
		if (strncmp(e->d_name, prefix, np))
			continue;
		long pid = strtol(e->d_name + np, &end, 10);
		if (end == e->d_name + np || *end != '-' || pid <= 0 || pid > INT_MAX ||
		    pid == getpid() || pmon__process_alive((pid_t)pid))
			continue;
		int fd = openat(dfd, e->d_name,
				O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
		    !flock(fd, LOCK_EX | LOCK_NB) &&
		    !fstatat(dfd, e->d_name, &now, AT_SYMLINK_NOFOLLOW) &&
		    now.st_dev == st.st_dev && now.st_ino == st.st_ino)
			unlinkat(dfd, e->d_name, 0);
		close(fd);
	}
	closedir(d);
}

/* Replaced whole: a temporary beside the file (the same file system, so the
 * rename is atomic), created O_EXCL under a random name, with the file's
 * mode and, for root, its owner, so a rewrite changes its content only.
 * There is no fallback to writing in place: a directory that takes no new
 * file is said, before anything runs (pmon_output__check()). */
static int open_replace(struct pmon_output *o, const struct target *t)
{
	static const char chars[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	struct stat st;
	int fd = -1, e = EEXIST;

	remove_stale_temps(t);
	for (int tries = 0; tries < 100 && fd < 0 && e == EEXIST; tries++) {
		unsigned char r[6];
		char sfx[7];
		if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
			for (size_t i = 0; i < sizeof(r); i++)
				r[i] = (unsigned char)(rand() ^ (int)getpid() ^ tries);
		for (size_t i = 0; i < sizeof(r); i++)
			sfx[i] = chars[r[i] % (sizeof(chars) - 1)];
		sfx[6] = '\0';
		if (!pmon__fmt(o->tmp, sizeof(o->tmp), ".%s.pmon-%d-%s", t->base, (int)getpid(),
			       sfx)) {
			o->tmp[0] = '\0';
			return pmon__err(-ENAMETOOLONG, "cannot write '%s': the name is too long",
					 o->shown);
		}
		fd = openat(t->dirfd, o->tmp,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
		e = fd < 0 ? errno : 0;
	}
	if (fd < 0) {
		o->tmp[0] = '\0';
		return pmon__err(-e, "cannot write '%s': cannot create files in '%s/': %s",
				 o->shown, t->dirname, strerror(e));
	}
	o->slot = temp_add(o->dirfd, o->tmp);
	/* Held until the output is closed: a temporary no one holds is stale. */
	(void)flock(fd, LOCK_EX | LOCK_NB);
	if (fstat(fd, &st)) {
		e = errno;
		close(fd);
		unlinkat(t->dirfd, o->tmp, 0); /* just created, O_EXCL */
		o->tmp[0] = '\0';
		return pmon__err(-e, "cannot write '%s': %s", o->shown, strerror(e));
	}
	o->dev = st.st_dev;
	o->ino = st.st_ino;
	if (t->exists) {
		if (geteuid() == 0 && (t->st.st_uid != 0 || t->st.st_gid != getegid()))
			(void)!fchown(fd, t->st.st_uid, t->st.st_gid);
		(void)fchmod(fd, t->st.st_mode & 0777);
	}
	if (asprintf(&o->tmppath, "%s/%s", t->dirname, o->tmp) < 0) {
		o->tmppath = NULL;
		close(fd);
		unlinkat(t->dirfd, o->tmp, 0);
		o->tmp[0] = '\0';
		return pmon__err(-ENOMEM, "cannot write '%s': %s", o->shown, strerror(ENOMEM));
	}
	o->kind = OUT_FILE;
	return fd;
}

static void output_free(struct pmon_output *o)
{
	temp_drop(o->slot);
	if (o->dirfd >= 0)
		close(o->dirfd);
	free(o->shown);
	free(o->tmppath);
	free(o);
}

/* Remove this output's temporary, if it is still the one it made. */
static void drop_tmp(struct pmon_output *o)
{
	struct stat st;

	if (o->tmp[0] && !fstatat(o->dirfd, o->tmp, &st, AT_SYMLINK_NOFOLLOW) &&
	    st.st_dev == o->dev && st.st_ino == o->ino)
		unlinkat(o->dirfd, o->tmp, 0);
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
	if ((err = look(path, &t, flags)))
		return pmon__ret_ptr(err, NULL);
	if (!(o = calloc(1, sizeof(*o))) || !(o->shown = strdup(path))) {
		free(o);
		target_release(&t);
		return pmon__ret_ptr(-ENOMEM, NULL);
	}
	o->slot = -1;
	o->dirfd = t.dirfd; /* the output's now */
	pmon__strlcpy(o->base, t.base, sizeof(o->base));
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
	return !o ? NULL : o->tmp[0] ? o->tmppath : o->shown;
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
		if (!fstatat(o->dirfd, o->base, &st, AT_SYMLINK_NOFOLLOW) && !S_ISREG(st.st_mode))
			err = pmon__err(-EEXIST,
					"cannot replace '%s': it is no longer a regular file "
					"(left as it is)",
					o->shown);
		else if (renameat(o->dirfd, o->tmp, o->dirfd, o->base))
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
	if (o->created && !fstatat(o->dirfd, o->base, &st, AT_SYMLINK_NOFOLLOW) &&
	    st.st_dev == o->dev && st.st_ino == o->ino) {
		unlinkat(o->dirfd, o->base, 0); /* the regular file this output created, O_EXCL */
		if (o->kept_old)
			(void)renameat2(o->dirfd, o->old, o->dirfd, o->base, RENAME_NOREPLACE);
	}
	output_free(o);
}
