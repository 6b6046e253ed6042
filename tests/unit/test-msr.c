// SPDX-License-Identifier: MIT
/* The MSR table, parsing and field decoding, and file-backed access. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <pmon/pmon.h>

static void test_msr__names_and_addresses(void **state)
{
	uint32_t a;

	(void)state;
	assert_int_equal(pmon_msr_parse_addr("IA32_PERF_GLOBAL_CTRL", &a), 0);
	assert_int_equal(a, 0x38f);
	assert_int_equal(pmon_msr_parse_addr("ia32_pqr_assoc", &a), 0);
	assert_int_equal(a, 0xc8f);
	assert_int_equal(pmon_msr_parse_addr("cesr", &a), 0);
	assert_int_equal(a, 0x11);
	assert_int_equal(pmon_msr_parse_addr("0xC0010200", &a), 0);
	assert_string_equal(pmon_msr_by_addr(a)->name, "AMD_PERF_CTL0");
	assert_int_equal(pmon_msr_parse_addr("17", &a), 0);
	assert_int_equal(a, 17);
	assert_int_equal(pmon_msr_parse_addr("0x100000000", &a), -PMON_ERRNO__PARSE);
	assert_int_equal(pmon_msr_parse_addr("NOPE", &a), -PMON_ERRNO__PARSE);
	assert_int_equal(pmon_msr_parse_addr("", &a), -PMON_ERRNO__PARSE);
	assert_string_equal(pmon_msr_by_addr(0x18d)->name, "IA32_PERFEVTSEL7");
	assert_string_equal(pmon_msr_by_addr(0x30c)->name, "IA32_FIXED_CTR3");
}

static void test_msr__decode(void **state)
{
	char buf[1024];

	(void)state;
	/* cycles at any ring, enabled: SDM Table 21-1 event 3CH */
	pmon_msr_decode(0x186, 0x43003c, buf, sizeof(buf));
	assert_non_null(strstr(buf, "EventSelect=0x3c UMask=0 USR=0x1 OS=0x1"));
	assert_non_null(strstr(buf, "EN=0x1 INV=0 CMASK=0"));
	pmon_msr_decode(0x38d, 0x0b3, buf, sizeof(buf));
	assert_non_null(strstr(buf, "EN0=0x3"));
	assert_non_null(strstr(buf, "PMI1=0x1"));
	pmon_msr_decode(0xc8e, 1ULL << 63 | 42, buf, sizeof(buf));
	assert_non_null(strstr(buf, "Data=0x2a Unavailable=0 Error=0x1"));
	pmon_msr_decode(0x11, 0x83, buf, sizeof(buf));
	assert_non_null(strstr(buf, "CTR0: event 03H DATA_READ_MISS, events at CPL 3"));
	assert_int_equal(pmon_msr_decode(0x12, 5, buf, sizeof(buf)), 0); /* a plain counter */
}

static void test_msr__file_device(void **state)
{
	char path[] = "/tmp/pmon-msr-XXXXXX", pattern[64];
	int fd = mkstemp(path);
	uint64_t v;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 8192), 0);
	close(fd);
	assert_int_equal(pmon_msr_write(path, 0, 0x38f, 0x70000000fULL), 0);
	assert_int_equal(pmon_msr_read(path, 0, 0x38f, &v), 0);
	assert_int_equal(v, 0x70000000fULL);
	/* beyond the end of a regular file: a short read, explained */
	assert_int_equal(pmon_msr_read(path, 0, 0xc0010000, &v), -EIO);
	assert_non_null(strstr(pmon_errdetail(), "short read"));
	/* a %d pattern for per-CPU files; only one %d allowed */
	snprintf(pattern, sizeof(pattern), "/nonexistent/cpu%%d/msr");
	assert_int_equal(pmon_msr_read(pattern, 3, 0x10, &v), -ENOENT);
	assert_non_null(strstr(pmon_errdetail(), "/nonexistent/cpu3/msr"));
	assert_int_equal(pmon_msr_read("/tmp/%d%d", 0, 0x10, &v), -EINVAL);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_msr__names_and_addresses),
		cmocka_unit_test(test_msr__decode),
		cmocka_unit_test(test_msr__file_device),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
