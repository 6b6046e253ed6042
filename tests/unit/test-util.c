// SPDX-License-Identifier: MIT
/*
 * lib/util: the ELF build-id reader the recording writer uses (a note
 * parser over untrusted bytes, and a file reader that never blocks on a
 * FIFO), and the C-locale number helpers.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "internal.h"
#include <pmon/pmon.h>

/* A note: header, name padded to @align, descriptor padded to @align. */
static size_t put_note(uint8_t *p, uint32_t type, const char *name, uint32_t namesz,
		       const uint8_t *desc, uint32_t descsz, size_t align)
{
	Elf64_Nhdr nh = { .n_namesz = namesz, .n_descsz = descsz, .n_type = type };
	size_t off = 0;
	memcpy(p, &nh, sizeof(nh));
	off += sizeof(nh);
	memcpy(p + off, name, namesz);
	off += (namesz + align - 1) & ~(align - 1);
	memcpy(p + off, desc, descsz);
	off += (descsz + align - 1) & ~(align - 1);
	return off;
}

static void test_util__note_parser(void **state)
{
	uint8_t seg[256], id[20], want[20];
	for (int i = 0; i < 20; i++)
		want[i] = (uint8_t)(0xa0 + i);

	/* A GNU property note first (8-aligned, as in a PT_NOTE with p_align 8),
	 * then the build id: found after skipping the first. */
	for (size_t align = 4; align <= 8; align += 4) {
		uint8_t prop[16] = { 0 };
		size_t n = put_note(seg, 5 /* NT_GNU_PROPERTY_TYPE_0 */, "GNU", 4, prop, 16, align);
		n += put_note(seg + n, NT_GNU_BUILD_ID, "GNU", 4, want, 20, align);
		memset(id, 0, sizeof(id));
		assert_int_equal(pmon__elf_note_build_id(seg, n, align, id), 20);
		assert_memory_equal(id, want, 20);
		/* Cut anywhere inside the build-id note: nothing read past the end. */
		for (size_t cut = n - 1; cut > n - 20; cut--)
			assert_int_equal(pmon__elf_note_build_id(seg, cut, align, id), 0);
	}
	/* A name size that wraps the offset arithmetic is refused. */
	Elf64_Nhdr bad = { .n_namesz = 0xfffffffcu, .n_descsz = 8, .n_type = NT_GNU_BUILD_ID };
	memcpy(seg, &bad, sizeof(bad));
	assert_int_equal(pmon__elf_note_build_id(seg, 64, 4, id), 0);
	/* Another owner's note of the same type, and a too-long id: not ours. */
	size_t n = put_note(seg, NT_GNU_BUILD_ID, "XYZ", 4, want, 20, 4);
	assert_int_equal(pmon__elf_note_build_id(seg, n, 4, id), 0);
	uint8_t big[32] = { 1 };
	n = put_note(seg, NT_GNU_BUILD_ID, "GNU", 4, big, 32, 4);
	assert_int_equal(pmon__elf_note_build_id(seg, n, 4, id), 0);
}

static void test_util__build_id_of_files(void **state)
{
	uint8_t id[20];
	char dir[] = "/tmp/pmon-util-XXXXXX", fifo[64], text[64];

	/* This test program itself carries a build id (Debian's gcc links with
	 * --build-id): the same bytes `readelf -n` prints. */
	size_t n = pmon__elf_build_id("/proc/self/exe", id);
	assert_true(n == 20 || n == 16 || n == 8);
	char cmd[128], want[64] = "", got[64] = "";
	snprintf(cmd, sizeof(cmd), "readelf -n /proc/%d/exe 2>/dev/null", (int)getpid());
	FILE *p = popen(cmd, "r");
	if (p) {
		char line[256];
		while (fgets(line, sizeof(line), p))
			if (sscanf(line, " Build ID: %63s", want) == 1)
				break;
		pclose(p);
	}
	for (size_t i = 0; i < n; i++)
		snprintf(got + 2 * i, sizeof(got) - 2 * i, "%02x", id[i]);
	if (want[0])
		assert_string_equal(got, want);

	/* A FIFO where a binary should be: refused at once, never blocking. */
	assert_non_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(pmon__elf_build_id(fifo, id), 0);
	/* Not an ELF file, and a missing one. */
	snprintf(text, sizeof(text), "%s/text", dir);
	FILE *f = fopen(text, "w");
	assert_non_null(f);
	fputs("not an ELF file at all, just text\n", f);
	fclose(f);
	assert_int_equal(pmon__elf_build_id(text, id), 0);
	assert_int_equal(pmon__elf_build_id("/nonexistent/pmon", id), 0);
	unlink(fifo);
	unlink(text);
	rmdir(dir);
}

static void test_util__c_locale_numbers(void **state)
{
	/* Under a locale with a decimal comma (when the machine has one), the
	 * library still parses and prints numbers the C way. */
	const char *de = setlocale(LC_ALL, "de_DE.UTF-8");
	char *end;
	double v = pmon__strtod_c("2.328e-10", &end);
	assert_true(*end == '\0');
	assert_true(v > 2.3279e-10 && v < 2.3281e-10);
	locale_t prev = pmon__c_locale_enter();
	char buf[32];
	snprintf(buf, sizeof(buf), "%.2f", 1.5);
	pmon__c_locale_leave(prev);
	assert_string_equal(buf, "1.50");
	if (de) {
		snprintf(buf, sizeof(buf), "%.2f", 1.5);
		assert_string_equal(buf, "1,50"); /* the caller's locale is back */
	}
	setlocale(LC_ALL, "C");
}

/* #25: one options convention (libbpf's OPTS_VALID/OPTS_GET). */
struct opts_v2 {
	size_t sz;
	int a; /* first release */
	const char *b; /* added later */
};

static void test_util__opts_convention(void **state)
{
	struct opts_v2 small = { .sz = pmon__offsetofend(struct opts_v2, a), .a = 7 };
	struct opts_v2 full = { .sz = sizeof(full), .a = 1, .b = "x" }, copy;
	unsigned char big[sizeof(struct opts_v2) + 16] = { 0 };
	struct opts_v2 *newer = (struct opts_v2 *)big, *sp = &small, *fp = &full;

	(void)state;
	/* an older caller: accepted, its missing field reads as the fallback */
	assert_int_equal(PMON_OPTS_CHECK(sp, struct opts_v2, a), 0);
	assert_false(PMON_OPTS_HAS(sp, b));
	assert_null(PMON_OPTS_GET(sp, b, NULL));
	assert_int_equal(PMON_OPTS_COPY(&copy, sp, struct opts_v2, a), 0);
	assert_int_equal(copy.a, 7);
	assert_null(copy.b); /* zero past the caller's size, never read from it */
	assert_int_equal(PMON_OPTS_GET(fp, b, NULL)[0], 'x');
	/* smaller than the first release: refused */
	small.sz = sizeof(size_t);
	assert_int_equal(PMON_OPTS_CHECK(sp, struct opts_v2, a), -EINVAL);
	assert_non_null(strstr(pmon_errdetail(), "smaller than its first release"));
	/* a newer caller: a zero tail is accepted, a set field refused */
	newer->sz = sizeof(big);
	newer->a = 3;
	assert_int_equal(PMON_OPTS_COPY(&copy, newer, struct opts_v2, a), 0);
	assert_int_equal(copy.a, 3);
	assert_int_equal(copy.sz, sizeof(struct opts_v2));
	big[sizeof(struct opts_v2) + 3] = 1;
	assert_int_equal(PMON_OPTS_CHECK(newer, struct opts_v2, a), -EINVAL);
	assert_non_null(strstr(pmon_errdetail(), "a field of a newer libpmon"));
	assert_int_equal(PMON_OPTS_CHECK((struct opts_v2 *)NULL, struct opts_v2, a), 0);
}

/* The convention through the public API: pmon_evlist__new() refused any
 * struct larger than its own, even one whose extra fields were unset. */
static void test_util__opts_public_zero_tail(void **state)
{
	unsigned char big[sizeof(struct pmon_event_opts) + 8] = { 0 };
	struct pmon_event_opts *o = (struct pmon_event_opts *)big;
	struct pmon_evlist *l;

	(void)state;
	o->sz = sizeof(big);
	o->no_pfm = true;
	assert_non_null(l = pmon_evlist__new(o));
	pmon_evlist__free(l);
	big[sizeof(struct pmon_event_opts)] = 1;
	assert_null(pmon_evlist__new(o));
	assert_int_equal(errno, EINVAL);
	o->sz = 4; /* not even sz */
	assert_null(pmon_evlist__new(o));
}

/* pmon_spawn(): output captured or written to a file, the exit status as
 * waitpid() gives it, a tool that cannot start or does not end. */
static void test_util__spawn(void **state)
{
	char *text = NULL, path[] = "/tmp/pmon-test-spawn-XXXXXX", buf[64];
	size_t len = 0;
	int status = -1, fd;
	struct pmon_spawn_opts o = { .sz = sizeof(o), .capture = &text, .capture_len = &len };
	char *sh[] = { "/bin/sh", "-c", "echo out; echo err >&2; exit 3", NULL };

	assert_int_equal(pmon_spawn(sh, &o, &status), 0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 3);
	assert_non_null(text);
	assert_non_null(strstr(text, "out\n"));
	assert_non_null(strstr(text, "err\n"));
	assert_int_equal(len, strlen(text));
	free(text);

	/* Kept to capture_max bytes, the rest drained (the tool still ends). */
	char *big[] = { "/bin/sh", "-c", "head -c 100000 /dev/zero | tr '\\0' x", NULL };
	o.capture_max = 10;
	assert_int_equal(pmon_spawn(big, &o, &status), 0);
	assert_int_equal(len, 10);
	assert_string_equal(text, "xxxxxxxxxx");
	free(text);

	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	struct pmon_spawn_opts fo = { .sz = sizeof(fo), .stdout_path = path };
	char *echo[] = { "/bin/echo", "to the file", NULL };
	assert_int_equal(pmon_spawn(echo, &fo, &status), 0);
	assert_int_equal(WEXITSTATUS(status), 0);
	fd = open(path, O_RDONLY);
	assert_int_equal(read(fd, buf, sizeof(buf)), 12);
	close(fd);
	assert_memory_equal(buf, "to the file\n", 12);
	unlink(path);

	char *none[] = { "/nonexistent/tool", NULL };
	assert_int_equal(pmon_spawn(none, NULL, &status), -ENOENT);
	assert_true(pmon_errdetail()[0] != '\0');

	/* A tool that never ends is killed; the call returns. */
	struct pmon_spawn_opts to = { .sz = sizeof(to), .timeout_s = 0.05 };
	char *stuck[] = { "/bin/sleep", "1000", NULL };
	assert_int_equal(pmon_spawn(stuck, &to, &status), -ETIMEDOUT);
}

/* The tools' paths and work files: found as execvp(3) finds them, made
 * absolute; folders and files under $TMPDIR, private. */
static void test_util__spawn_which_workdir(void **state)
{
	char found[4096], dir[4096], file[4096], saved[4096];
	const char *tmp = getenv("TMPDIR");
	struct stat st;

	(void)state;
	assert_int_equal(pmon_spawn_which("sh", found, sizeof(found)), 0);
	assert_true(found[0] == '/');
	assert_int_equal(access(found, X_OK), 0);
	assert_int_equal(pmon_spawn_which("pmon-no-such-tool", found, sizeof(found)), -ENOENT);
	assert_int_equal(pmon_spawn_which("/nonexistent/tool", found, sizeof(found)), -ENOENT);
	assert_int_equal(pmon_spawn_which("sh", found, 3), -ENAMETOOLONG);

	snprintf(saved, sizeof(saved), "%s", tmp ? tmp : "");
	assert_int_equal(pmon_spawn_workdir("unit", dir, sizeof(dir)), 0);
	assert_int_equal(stat(dir, &st), 0);
	assert_true(S_ISDIR(st.st_mode) && (st.st_mode & 077) == 0);
	assert_non_null(strstr(dir, "/pmon-unit-"));
	setenv("TMPDIR", dir, 1);
	int fd = pmon_spawn_tmpfile("f", file, sizeof(file));
	assert_true(fd >= 0);
	assert_int_equal(strncmp(file, dir, strlen(dir)), 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(S_ISREG(st.st_mode) && (st.st_mode & 077) == 0);
	close(fd);
	assert_int_equal(unlink(file), 0);
	/* a $TMPDIR that is not there: the detail names it */
	setenv("TMPDIR", "/nonexistent/pmon", 1);
	assert_int_equal(pmon_spawn_workdir("unit", file, sizeof(file)), -ENOENT);
	assert_non_null(strstr(pmon_errdetail(), "'/nonexistent/pmon' ($TMPDIR)"));
	assert_true(pmon_spawn_tmpfile("f", file, sizeof(file)) < 0);
	assert_int_equal(errno, ENOENT);
	if (saved[0])
		setenv("TMPDIR", saved, 1);
	else
		unsetenv("TMPDIR");
	assert_int_equal(rmdir(dir), 0);
}

/* Text from outside bytes stays well-formed: XML (the flame graph) and
 * JSON (the trace's Chrome JSON) whatever the bytes (issue #31). */
static void test_util__utf8_writers(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	/* ESC, DEL, a stray 0xff, an overlong 0xc0 0xaf, then "é" and "<&>\"" */
	const char in[] = "a\033b\177c\377d\300\257e\303\251<&>\"";
	assert_non_null(f = open_memstream(&buf, &len));
	pmon__fputs_xml(f, in, 100);
	fclose(f);
	assert_string_equal(buf, "a?b?c?d??e\303\251&lt;&amp;&gt;&quot;");
	free(buf);
	assert_non_null(f = open_memstream(&buf, &len));
	pmon__fputs_json(f, in);
	fclose(f);
	assert_string_equal(buf, "\"a\\u001bb\\u007fc\\ufffdd\\ufffd\\ufffde\303\251<&>\\\"\"");
	free(buf);
	assert_int_equal(pmon__utf8_len((const unsigned char *)"\xed\xa0\x80"),
			 0); /* a surrogate */
	assert_int_equal(pmon__utf8_len((const unsigned char *)"\xf4\x8f\xbf\xbf"), 4);
	assert_int_equal(pmon__utf8_len((const unsigned char *)"\xf4\x90\x80\x80"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_util__note_parser),
		cmocka_unit_test(test_util__build_id_of_files),
		cmocka_unit_test(test_util__c_locale_numbers),
		cmocka_unit_test(test_util__opts_convention),
		cmocka_unit_test(test_util__opts_public_zero_tail),
		cmocka_unit_test(test_util__spawn),
		cmocka_unit_test(test_util__spawn_which_workdir),
		cmocka_unit_test(test_util__utf8_writers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
