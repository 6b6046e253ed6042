// SPDX-License-Identifier: MIT
/* The dump parser: accepted forms, and a file:line error for each way a
 * file can be wrong (empty, truncated, garbage, duplicated, binary). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <pmon/pmon.h>

#define L0 "00000000 00: 0000000d 68747541 444d4163 69746e65\n"

struct bad_row {
	int line;
	const char *text;
	size_t len; /* 0: strlen */
	const char *detail;
};

static const struct bad_row bad_rows[] = {
	{ __LINE__, "", 0, "t.txt:1: no CPUID rows" },
	{ __LINE__, "# only a comment\n\n", 0, "t.txt:2: no CPUID rows" },
	{ __LINE__, "hello world\n", 0,
	  "t.txt:1: expected 'LLLLLLLL SS: EAX EBX ECX EDX', got 'hello world'" },
	{ __LINE__, L0 "0000000a 00: 0730", 0,
	  "t.txt:2: register EAX has 4 hex digits, expected 8" },
	{ __LINE__, L0 "0000000a 00: 07300404 00000000", 0,
	  "t.txt:2: expected 4 registers (EAX EBX ECX EDX), found 2" },
	{ __LINE__, L0 "0000000a 00 07300404 00000000 00000000 00000000\n", 0,
	  "t.txt:2: expected ':'" },
	{ __LINE__, L0 "0000000a 00: 07300404 00000000 00000000 00000000 junk\n", 0,
	  "t.txt:2: unexpected text" },
	{ __LINE__, L0 "0000000a 00: 07300404 00000000 00000000 000\n", 0,
	  "t.txt:2: register EDX has 3 hex digits, expected 8" },
	{ __LINE__, L0 "0000000a 00: 107300404 0 0 0\n", 0, "t.txt:2: expected 4 registers" },
	{ __LINE__,
	  L0 "00000001 00: 00000001 00000002 00000003 00000004\n00000001 00: 00000001 00000002 "
	     "00000003 00000004\n",
	  0, "t.txt:3: leaf 00000001 subleaf 00 already given at line 2" },
	{ __LINE__, "00000001 00: 00000001 00000002 00000003 00000004\n", 0,
	  "t.txt:1: no leaf 0 row" },
	{ __LINE__, L0 "\0\x01\x02garbage\n", sizeof(L0) + 10, "t.txt:2: binary data" },
};

static void test_cpuid_file__bad_inputs(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_rows) / sizeof(bad_rows[0]); i++) {
		const struct bad_row *r = &bad_rows[i];
		size_t len = r->len ? r->len : strlen(r->text);
		struct pmon_cpuid *c;

		print_message("row at line %d\n", r->line);
		errno = 0;
		c = pmon_cpuid__new_buf(r->text, len, "t.txt");
		assert_null(c);
		assert_int_equal(errno, EINVAL);
		print_message("  detail: %s\n", pmon_errdetail());
		assert_non_null(strstr(pmon_errdetail(), r->detail));
	}
}

static void test_cpuid_file__accepted_forms(void **state)
{
	/* pmon's format with comments, blank lines, CRLF, short hex; then the
	 * `cpuid -r` format, of which only the first CPU is taken. */
	static const char pmon_fmt[] =
		"# a comment\n\n" L0 "  0000000a 0: 07300404 00000000 00000000 00000603\r\n";
	static const char cpuid_r[] =
		"CPU 0:\n"
		"   0x00000000 0x00: eax=0x0000000d ebx=0x68747541 ecx=0x444d4163 edx=0x69746e65\n"
		"   0x00000001 0x00: eax=0x00b00f21 ebx=0x4dfe0800 ecx=0xfed83203 edx=0x178bfbff\n"
		"CPU 1:\n"
		"   0x00000000 0x00: eax=0x0000000d ebx=0x68747541 ecx=0x444d4163 edx=0x69746e65\n";
	struct pmon_cpuid_regs r;
	struct pmon_cpuid *c;

	(void)state;
	c = pmon_cpuid__new_buf(pmon_fmt, sizeof(pmon_fmt) - 1, "a");
	assert_non_null(c);
	assert_int_equal(pmon_cpuid__count(c), 2);
	assert_int_equal(pmon_cpuid__get(c, 0xa, 0, &r), 0);
	assert_int_equal(r.eax, 0x7300404);
	assert_int_equal(r.edx, 0x603);
	assert_int_equal(pmon_cpuid__get(c, 0xb, 0, &r), -ENOENT);
	assert_int_equal(r.eax, 0);
	pmon_cpuid__free(c);

	c = pmon_cpuid__new_buf(cpuid_r, sizeof(cpuid_r) - 1, "b");
	assert_non_null(c);
	assert_int_equal(pmon_cpuid__count(c), 2);
	assert_int_equal(pmon_cpuid__get(c, 1, 0, &r), 0);
	assert_int_equal(r.eax, 0x00b00f21);
	pmon_cpuid__free(c);
}

static void test_cpuid_file__missing_file(void **state)
{
	(void)state;
	errno = 0;
	assert_null(pmon_cpuid__new_file("/nonexistent/dump.txt"));
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(pmon_errdetail(), "/nonexistent/dump.txt"));
	pmon_cpuid__free(NULL); /* accepted */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpuid_file__bad_inputs),
		cmocka_unit_test(test_cpuid_file__accepted_forms),
		cmocka_unit_test(test_cpuid_file__missing_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
