// SPDX-License-Identifier: MIT
/* RDT's MSR interface: counter wrap, refusals, and Error/Unavailable bits
 * read through a file laid out like /dev/cpu/N/msr. */
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

static struct pmon_cpu_info xeon; /* Skylake-SP: 24-bit counters, upscale 98304 */

static int setup(void **state)
{
	char path[512];
	struct pmon_cpuid *c;

	(void)state;
	snprintf(path, sizeof(path), "%s/intel-xeon-8160-skylake-sp.txt", PMON_CPUID_DIR);
	c = pmon_cpuid__new_file(path);
	if (!c || pmon_cpu_decode(c, &xeon))
		return -1;
	pmon_cpuid__free(c);
	return 0;
}

static void test_rdt__mbm_wraps_at_the_enumerated_width(void **state)
{
	(void)state;
	assert_int_equal(pmon_rdt_mbm_delta(100, 300, 24, 64), 200 * 64);
	/* a 24-bit counter that wrapped: 0xfffff0 -> 0x10 is 0x20 units */
	assert_int_equal(pmon_rdt_mbm_delta(0xfffff0, 0x10, 24, 64), 0x20 * 64);
	/* the same readings of a 44-bit counter (Zen 4) did not wrap: huge */
	assert_true(pmon_rdt_mbm_delta(0xfffff0, 0x10, 44, 64) > (1ULL << 40));
	assert_int_equal(pmon_rdt_mbm_delta(5, 5, 24, 98304), 0);
}

static void test_rdt__msr_refusals(void **state)
{
	struct pmon_rdt_msr *m;
	int cpu = 0;
	struct pmon_cpu_info none;

	(void)state;
	assert_int_equal(pmon_rdt_msr__start("/tmp/x", &xeon, &cpu, 1, 1, true, &m), -EBUSY);
	assert_non_null(strstr(pmon_errdetail(), "resctrl is mounted"));
	assert_int_equal(pmon_rdt_msr__start("/tmp/x", &xeon, &cpu, 1, 0, false, &m), -EINVAL);
	assert_int_equal(pmon_rdt_msr__start("/tmp/x", &xeon, &cpu, 1, 192, false, &m), -EINVAL);
	assert_non_null(strstr(pmon_errdetail(), "1..191"));
	memset(&none, 0, sizeof(none));
	assert_int_equal(pmon_rdt_msr__start("/tmp/x", &none, &cpu, 1, 1, false, &m), -EOPNOTSUPP);
}

/* In a flat file IA32_QM_CTR (C8EH) shares 7 bytes with IA32_QM_EVTSEL
 * (C8DH); its top byte -- the Error and Unavailable bits -- is its own. */
static void test_rdt__msr_error_bits(void **state)
{
	char path[] = "/tmp/pmon-rdt-XXXXXX";
	int fd = mkstemp(path), cpu = 0;
	struct pmon_rdt_msr *m;
	struct pmon_rdt_domain d;
	uint8_t top;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 8192), 0);
	assert_int_equal(pmon_msr_write(path, 0, 0xc8f, 0x500000000ULL), 0); /* CLOS 5 */
	assert_int_equal(pmon_rdt_msr__start(path, &xeon, &cpu, 1, 7, false, &m), 0);
	size_t n;
	const struct pmon_msr_write_rec *w = pmon_rdt_msr__writes(m, &n);
	assert_int_equal(n, 1);
	assert_int_equal(w[0].addr, 0xc8f);
	assert_int_equal(w[0].value, 0x500000007ULL); /* the RMID, the CLOS kept */

	top = 0x40; /* bit 62: Unavailable */
	assert_int_equal(pwrite(fd, &top, 1, 0xc8e + 7), 1);
	assert_int_equal(pmon_rdt_msr__read(m, &d), 0);
	assert_int_equal(d.occupancy.state, PMON_RDT_UNAVAILABLE);
	assert_int_equal(d.total.state, PMON_RDT_UNAVAILABLE);
	top = 0x80; /* bit 63: Error */
	assert_int_equal(pwrite(fd, &top, 1, 0xc8e + 7), 1);
	assert_int_equal(pmon_rdt_msr__read(m, &d), 0);
	assert_int_equal(d.local.state, PMON_RDT_ERROR);
	top = 0;
	assert_int_equal(pwrite(fd, &top, 1, 0xc8e + 7), 1);
	assert_int_equal(pmon_rdt_msr__read(m, &d), 0);
	/* the data bits read back the selector shifted a byte: RMID 7 << 24 */
	assert_int_equal(d.occupancy.state, PMON_RDT_OK);
	assert_int_equal(d.occupancy.v, (7ULL << 24) * 98304);
	w = pmon_rdt_msr__writes(m, &n);
	assert_int_equal(w[n - 1].addr, 0xc8d);
	assert_int_equal(w[n - 1].value, 7ULL << 32 | 3); /* local bandwidth, RMID 7 */
	assert_int_equal(pmon_rdt_msr__restore(m), 0);
	w = pmon_rdt_msr__writes(m, &n);
	assert_true(w[n - 2].restore && w[n - 2].addr == 0xc8f && w[n - 2].value == 0x500000000ULL);
	pmon_rdt_msr__free(m);
	close(fd);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rdt__mbm_wraps_at_the_enumerated_width),
		cmocka_unit_test(test_rdt__msr_refusals),
		cmocka_unit_test(test_rdt__msr_error_bits),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
