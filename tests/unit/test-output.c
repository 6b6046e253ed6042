// SPDX-License-Identifier: MIT
/*
 * lib/util/output.c: the one way pmon opens an output a user named
 * (issue #23). Each case makes the path's state itself in a private
 * directory: a new file, an existing one replaced whole or kept when the
 * run fails, PATH.old, a log written in place, a FIFO with and without a
 * reader, a directory, links (one another user planted in a sticky
 * directory: root only), the path swapped for a FIFO before commit, and a
 * fatal signal with a temporary open.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <pmon/output.h>

static char dir[256];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "%s/pmon-out-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];
	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *at(const char *name)
{
	static char p[4][512];
	static int i;
	i = (i + 1) % 4;
	snprintf(p[i], sizeof(p[i]), "%s/%s", dir, name);
	return p[i];
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static const char *get(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	return f ? buf : "<none>";
}

/* How many entries of the directory hold @part (temporaries: ".pmon-"). */
static int count(const char *part)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	while (d && (e = readdir(d)))
		n += strstr(e->d_name, part) != NULL;
	if (d)
		closedir(d);
	return n;
}

static struct pmon_output *open_as(const char *path, unsigned flags)
{
	struct pmon_output_opts o = { .sz = sizeof(o), .flags = flags };
	return pmon_output__open(path, &o);
}

static void test_output__new_file_through_a_temporary(void **state)
{
	(void)state;
	const char *p = at("new.out");
	struct pmon_output *o = open_as(p, 0);
	assert_non_null(o);
	assert_false(pmon_output__is_stream(o));
	assert_non_null(strstr(pmon_output__path(o), "/.new.out.pmon-"));
	assert_int_equal(access(p, F_OK), -1); /* nothing at the name until commit */
	fputs("hello", pmon_output__file(o));
	assert_int_equal(pmon_output__commit(o), 0);
	assert_string_equal(get(p), "hello");
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(count(".pmon-"), 0);
}

static void test_output__replace_keeps_mode_abandon_keeps_file(void **state)
{
	(void)state;
	const char *p = at("old.out");
	struct stat before, after;
	put(p, "old");
	chmod(p, 0640);
	stat(p, &before);
	struct pmon_output *o = open_as(p, PMON_OUTPUT_STREAM);
	assert_non_null(o);
	fputs("half", pmon_output__file(o));
	pmon_output__abandon(o);
	assert_string_equal(get(p), "old");
	assert_int_equal(count(".pmon-"), 0);
	o = open_as(p, PMON_OUTPUT_STREAM);
	fputs("new", pmon_output__file(o));
	assert_int_equal(pmon_output__commit(o), 0);
	assert_string_equal(get(p), "new");
	stat(p, &after);
	assert_int_equal(after.st_mode & 0777, 0640);
	assert_true(after.st_ino != before.st_ino); /* replaced, not rewritten */
	assert_int_equal(count(".pmon-"), 0);
}

static void test_output__keep_old(void **state)
{
	(void)state;
	const char *p = at("rec.data"), *old = at("rec.data.old");
	put(p, "first");
	struct pmon_output *o = open_as(p, PMON_OUTPUT_KEEP_OLD);
	assert_non_null(o);
	assert_string_equal(pmon_output__path(o), p); /* written in place */
	assert_string_equal(get(old), "first");
	fputs("second", pmon_output__file(o));
	assert_int_equal(pmon_output__commit(o), 0);
	assert_string_equal(get(p), "second");
	assert_string_equal(get(old), "first");
	/* A failed start puts FILE.old back. */
	o = open_as(p, PMON_OUTPUT_KEEP_OLD);
	assert_string_equal(get(old), "second");
	pmon_output__abandon(o);
	assert_string_equal(get(p), "second");
	/* A FILE.old that is not a regular file is never renamed over. */
	unlink(old);
	assert_int_equal(mkfifo(old, 0600), 0);
	assert_null(open_as(p, PMON_OUTPUT_KEEP_OLD));
	assert_int_equal(errno, EEXIST);
	struct stat st;
	assert_int_equal(lstat(old, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_string_equal(get(p), "second");
}

static void test_output__in_place_and_append(void **state)
{
	(void)state;
	const char *p = at("log.csv");
	struct stat before, after;
	put(p, "old");
	stat(p, &before);
	struct pmon_output *o = open_as(p, PMON_OUTPUT_IN_PLACE);
	assert_non_null(o);
	assert_string_equal(get(p), ""); /* truncated now, written as it goes */
	fputs("a", pmon_output__file(o));
	pmon_output__abandon(o); /* a log keeps what was written */
	assert_string_equal(get(p), "a");
	stat(p, &after);
	assert_true(after.st_ino == before.st_ino);
	o = open_as(p, PMON_OUTPUT_APPEND);
	fputs("b", pmon_output__file(o));
	assert_int_equal(pmon_output__commit(o), 0);
	assert_string_equal(get(p), "ab");
}

static void test_output__fifo(void **state)
{
	(void)state;
	const char *p = at("fifo");
	assert_int_equal(mkfifo(p, 0600), 0);
	/* nobody reads: an error at once, never a hang */
	assert_null(open_as(p, PMON_OUTPUT_STREAM));
	assert_int_equal(errno, ENXIO);
	/* refused where the output is read back */
	assert_null(open_as(p, 0));
	assert_int_equal(errno, EINVAL);
	int rd = open(p, O_RDONLY | O_NONBLOCK);
	assert_true(rd >= 0);
	struct pmon_output *o = open_as(p, PMON_OUTPUT_STREAM);
	assert_non_null(o);
	assert_true(pmon_output__is_stream(o));
	fputs("via", pmon_output__file(o));
	assert_int_equal(pmon_output__commit(o), 0);
	char buf[8] = "";
	assert_int_equal(read(rd, buf, sizeof(buf)), 3);
	assert_memory_equal(buf, "via", 3);
	close(rd);
	struct stat st;
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(
		pmon_output__check(
			p, &(struct pmon_output_opts){ sizeof(struct pmon_output_opts), 0 }),
		-EINVAL);
}

static void test_output__refused_kinds(void **state)
{
	(void)state;
	assert_null(open_as(dir, PMON_OUTPUT_STREAM));
	assert_int_equal(errno, EISDIR);
	const char *dangling = at("dangling");
	assert_int_equal(symlink(at("nowhere/x"), dangling), 0);
	assert_null(open_as(dangling, 0));
	assert_int_equal(errno, ENOENT);
	assert_null(open_as(at("nodir/x.out"), 0));
	assert_int_equal(errno, ENOENT);
	assert_int_equal(count(".pmon-"), 0);
}

static void test_output__link_target_replaced_link_kept(void **state)
{
	(void)state;
	const char *target = at("target.out"), *link = at("link.out");
	put(target, "old");
	assert_int_equal(symlink(target, link), 0);
	struct pmon_output *o = open_as(link, 0);
	assert_non_null(o);
	fputs("new", pmon_output__file(o));
	assert_int_equal(pmon_output__commit(o), 0);
	struct stat st;
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_string_equal(get(target), "new");
	/* a link to a file not there yet: created where it points */
	assert_int_equal(symlink(at("later.out"), at("ahead.out")), 0);
	o = open_as(at("ahead.out"), 0);
	assert_non_null(o);
	fputs("made", pmon_output__file(o));
	assert_int_equal(pmon_output__commit(o), 0);
	assert_string_equal(get(at("later.out")), "made");
	assert_int_equal(lstat(at("ahead.out"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
}

static void test_output__sticky_directory_rules(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip(); /* a link or file of another user needs chown */
	const char *sticky = at("sticky");
	char link[600], file[600], mine[600];
	assert_int_equal(mkdir(sticky, 0777), 0);
	assert_int_equal(chmod(sticky, 01777), 0);
	put(at("victim"), "precious");
	snprintf(link, sizeof(link), "%s/link", sticky);
	snprintf(file, sizeof(file), "%s/theirs", sticky);
	snprintf(mine, sizeof(mine), "%s/mine", sticky);
	assert_int_equal(symlink(at("victim"), link), 0);
	assert_int_equal(lchown(link, 65534, 65534), 0);
	assert_null(open_as(link, PMON_OUTPUT_STREAM));
	assert_int_equal(errno, EPERM);
	assert_string_equal(get(at("victim")), "precious");
	put(file, "theirs");
	assert_int_equal(chown(file, 65534, 65534), 0);
	assert_null(open_as(file, PMON_OUTPUT_IN_PLACE));
	assert_int_equal(errno, EPERM);
	assert_string_equal(get(file), "theirs");
	/* root's own link there is followed */
	assert_int_equal(symlink(at("victim"), mine), 0);
	struct pmon_output *o = open_as(mine, 0);
	assert_non_null(o);
	fputs("root's", pmon_output__file(o));
	assert_int_equal(pmon_output__commit(o), 0);
	assert_string_equal(get(at("victim")), "root's");
}

/* The rule holds for every link on the way, not only the last one: a
 * directory link another user planted in /tmp, and root's own link that
 * leads through it. */
static void test_output__links_on_the_way(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip(); /* a link of another user needs lchown */
	const char *sticky = at("sticky"), *real = at("realdir");
	char evil[600], through[700], chain[700];
	assert_int_equal(mkdir(sticky, 0777), 0);
	assert_int_equal(chmod(sticky, 01777), 0);
	assert_int_equal(mkdir(real, 0755), 0);
	snprintf(evil, sizeof(evil), "%s/evil", sticky);
	assert_int_equal(symlink(real, evil), 0);
	assert_int_equal(lchown(evil, 65534, 65534), 0);
	snprintf(through, sizeof(through), "%s/passwd", evil);
	assert_null(open_as(through, PMON_OUTPUT_STREAM));
	assert_int_equal(errno, EPERM);
	assert_int_equal(access(at("realdir/passwd"), F_OK), -1);
	/* root's own link, outside the sticky directory, to the planted one */
	snprintf(chain, sizeof(chain), "%s/x.out", at("mine"));
	assert_int_equal(symlink(evil, at("mine")), 0);
	assert_null(open_as(chain, 0));
	assert_int_equal(errno, EPERM);
	assert_int_equal(count(".pmon-"), 0);
}

static void test_output__names(void **state)
{
	(void)state;
	char name[600];
	snprintf(name, sizeof(name), "%s/", dir);
	assert_null(open_as(name, PMON_OUTPUT_STREAM)); /* "dir/" */
	assert_int_equal(errno, EISDIR);
	assert_null(open_as("", 0));
	assert_int_equal(errno, ENOENT);
	/* "a/../b", "./b" and doubled slashes name the file they say */
	assert_int_equal(mkdir(at("a"), 0700), 0);
	snprintf(name, sizeof(name), "%s//a/..//./b.out", dir);
	struct pmon_output *o = open_as(name, 0);
	assert_non_null(o);
	fputs("b", pmon_output__file(o));
	assert_int_equal(pmon_output__commit(o), 0);
	assert_string_equal(get(at("b.out")), "b");
	/* /proc/thread-self/fd/N and /dev/fd/N: pmon's descriptor, at its offset */
	int fd = open(at("d.out"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "1", 1), 1);
	snprintf(name, sizeof(name), "/proc/thread-self/fd/%d", fd);
	o = open_as(name, PMON_OUTPUT_STREAM);
	assert_non_null(o);
	fputs("2", pmon_output__file(o));
	assert_int_equal(pmon_output__commit(o), 0);
	snprintf(name, sizeof(name), "/dev//fd/%d", fd);
	o = open_as(name, PMON_OUTPUT_STREAM);
	assert_non_null(o);
	fputs("3", pmon_output__file(o));
	assert_int_equal(pmon_output__commit(o), 0);
	assert_string_equal(get(at("d.out")), "123");
	close(fd);
}

static void test_output__commit_never_over_what_took_the_name(void **state)
{
	(void)state;
	const char *p = at("swapped.out");
	put(p, "old");
	struct pmon_output *o = open_as(p, 0);
	assert_non_null(o);
	fputs("new", pmon_output__file(o));
	unlink(p);
	assert_int_equal(mkfifo(p, 0600), 0); /* a FIFO put there meanwhile */
	assert_int_equal(pmon_output__commit(o), -EEXIST);
	struct stat st;
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(count(".pmon-"), 0);
}

static void test_output__descriptors(void **state)
{
	(void)state;
	const char *p = at("fd.out");
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), 1);
	char name[64];
	snprintf(name, sizeof(name), "/proc/self/fd/%d", fd);
	struct pmon_output *o = open_as(name, PMON_OUTPUT_STREAM);
	assert_non_null(o);
	assert_true(pmon_output__is_stream(o));
	fputs("y", pmon_output__file(o)); /* at the descriptor's offset */
	assert_int_equal(pmon_output__commit(o), 0);
	assert_string_equal(get(p), "xy");
	snprintf(name, sizeof(name), "/proc/%d/fd/%d", (int)getpid(), fd);
	o = open_as(name, PMON_OUTPUT_STREAM | PMON_OUTPUT_APPEND);
	assert_non_null(o);
	fputs("z", pmon_output__file(o));
	assert_int_equal(pmon_output__commit(o), 0);
	assert_string_equal(get(p), "xyz");
	assert_null(open_as("/dev/stdout", 0)); /* a trace must be a file */
	assert_int_equal(errno, EINVAL);
	close(fd);
}

static void test_output__fatal_signal_removes_the_temporary(void **state)
{
	(void)state;
	const char *p = at("sig.out");
	int pipefd[2];
	put(p, "old");
	assert_int_equal(pipe(pipefd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		signal(SIGTERM, SIG_DFL);
		pmon_output_cleanup_on_signals();
		struct pmon_output *o = open_as(p, 0);
		fputs("half", pmon_output__file(o));
		fflush(pmon_output__file(o));
		(void)!write(pipefd[1], "r", 1);
		pause(); /* SIGTERM ends it here */
		_exit(0);
	}
	char c;
	assert_int_equal(read(pipefd[0], &c, 1), 1);
	assert_int_equal(count(".sig.out.pmon-"), 1);
	kill(pid, SIGTERM);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	assert_int_equal(count(".pmon-"), 0);
	assert_string_equal(get(p), "old");
	close(pipefd[0]);
	close(pipefd[1]);
}

/* A temporary a SIGKILLed pmon left (#31.10): named with its pid, which is
 * gone; the next output of the same name removes it, but not one whose pid
 * is gone and that someone still holds locked (a pmon in another pid
 * namespace), nor another name's, nor a directory. */
static void test_output__stale_temporaries_removed(void **state)
{
	char name[64];
	(void)state;
	pid_t dead = fork();
	assert_true(dead >= 0);
	if (!dead)
		_exit(0);
	assert_int_equal(waitpid(dead, NULL, 0), dead); /* reaped: no such process */
	snprintf(name, sizeof(name), ".st.out.pmon-%d-abcdef", (int)dead);
	put(at(name), "stale");
	snprintf(name, sizeof(name), ".st.out.pmon-%d-locked", (int)dead);
	put(at(name), "held");
	int held = open(at(name), O_RDONLY | O_CLOEXEC);
	assert_true(held >= 0);
	assert_int_equal(flock(held, LOCK_EX | LOCK_NB), 0);
	snprintf(name, sizeof(name), ".other.out.pmon-%d-abcdef", (int)dead);
	put(at(name), "another name's");
	snprintf(name, sizeof(name), ".st.out.pmon-%d-dirdir", (int)dead);
	assert_int_equal(mkdir(at(name), 0700), 0);
	assert_int_equal(count(".st.out.pmon-"), 3);

	struct pmon_output *o = open_as(at("st.out"), 0);
	assert_non_null(o);
	/* Its own temporary is named with its pid. */
	snprintf(name, sizeof(name), "/.st.out.pmon-%d-", (int)getpid());
	assert_non_null(strstr(pmon_output__path(o), name));
	assert_int_equal(pmon_output__commit(o), 0);
	snprintf(name, sizeof(name), ".st.out.pmon-%d-abcdef", (int)dead);
	assert_int_equal(count(name), 0);
	assert_int_equal(count(".st.out.pmon-"), 2); /* the locked one, the folder */
	assert_int_equal(count(".other.out.pmon-"), 1);
	close(held);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_output__new_file_through_a_temporary, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_output__replace_keeps_mode_abandon_keeps_file,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_output__keep_old, setup, teardown),
		cmocka_unit_test_setup_teardown(test_output__in_place_and_append, setup, teardown),
		cmocka_unit_test_setup_teardown(test_output__fifo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_output__refused_kinds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_output__link_target_replaced_link_kept, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_output__sticky_directory_rules, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_output__links_on_the_way, setup, teardown),
		cmocka_unit_test_setup_teardown(test_output__names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_output__commit_never_over_what_took_the_name,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_output__descriptors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_output__fatal_signal_removes_the_temporary,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_output__stale_temporaries_removed, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
