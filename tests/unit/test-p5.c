// SPDX-License-Identifier: MIT
/* The Pentium CESR model (SDM Vol. 3B 18.26, the third seed) and the
 * tools note's PMX example "PMX32 WRMSR 11 AND FFFFFC00 OR 00000083". */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <pmon/pmon.h>

static void test_p5__pmx_example_decodes(void **state)
{
	struct pmon_p5_cesr cfg;
	char buf[256];

	(void)state;
	/* 00000083: CTR0 counts event 03H (data read miss) at CPL 3. */
	assert_int_equal(pmon_p5_cesr_decode(0x00000083, &cfg), 0);
	assert_int_equal(cfg.ctr[0].event, 0x03);
	assert_int_equal(cfg.ctr[0].cc, PMON_P5_CC_EVENTS_CPL3);
	assert_false(cfg.ctr[0].pc_overflow);
	assert_int_equal(cfg.ctr[1].cc, PMON_P5_CC_OFF);
	assert_string_equal(pmon_p5_event(0x03, 0)->name, "DATA_READ_MISS");
	assert_true(pmon_p5_cesr_describe(0x83, buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "CTR0: event 03H DATA_READ_MISS, events at CPL 3"));

	/* "AND FFFFFC00 OR 00000083" rewrites CTR0's fields (bits 0-9) and
	 * leaves CTR1's alone. */
	uint32_t before = 0x02d60016; /* CTR1: 16H at any CPL + PC1; CTR0: 16H off */
	uint32_t after = (before & 0xfffffc00u) | 0x83u;
	pmon_p5_cesr_decode(before, &cfg);
	struct pmon_p5_ctr ctr1 = cfg.ctr[1];
	pmon_p5_cesr_decode(after, &cfg);
	assert_int_equal(cfg.ctr[0].event, 0x03);
	assert_int_equal(cfg.ctr[1].event, ctr1.event);
	assert_int_equal(cfg.ctr[1].cc, ctr1.cc);
	assert_int_equal(cfg.ctr[1].pc_overflow, ctr1.pc_overflow);
}

static void test_p5__encode_decode_round_trip(void **state)
{
	(void)state;
	for (unsigned ev = 0; ev < 64; ev += 7)
		for (unsigned cc = 0; cc < 8; cc++)
			for (unsigned pc = 0; pc < 2; pc++) {
				struct pmon_p5_cesr in = { { { ev, cc, pc },
							     { 63 - ev, 7 - cc, !pc } } };
				struct pmon_p5_cesr out;
				uint32_t v;

				assert_int_equal(pmon_p5_cesr_encode(&in, &v), 0);
				assert_int_equal(v & 0xfc00fc00u, 0);
				assert_int_equal(pmon_p5_cesr_decode(v, &out), 0);
				for (int c = 0; c < 2; c++) {
					assert_int_equal(in.ctr[c].event, out.ctr[c].event);
					assert_int_equal(in.ctr[c].cc, out.ctr[c].cc);
					assert_int_equal(in.ctr[c].pc_overflow,
							 out.ctr[c].pc_overflow);
				}
			}
	/* Field positions: ES1 bits 16-21, CC1 22-24, PC1 25. */
	struct pmon_p5_cesr one = { { { 0, 0, 0 }, { 0x16, PMON_P5_CC_EVENTS_ALL, 1 } } };
	uint32_t v;
	assert_int_equal(pmon_p5_cesr_encode(&one, &v), 0);
	assert_int_equal(v, (0x16u << 16) | (3u << 22) | (1u << 25));
}

static void test_p5__bad_fields_and_reserved_bits(void **state)
{
	struct pmon_p5_cesr cfg = { { { 0x40, 0, 0 }, { 0, 0, 0 } } };
	uint32_t v;

	(void)state;
	assert_int_equal(pmon_p5_cesr_encode(&cfg, &v), -EINVAL);
	assert_non_null(strstr(pmon_errdetail(), "ES0"));
	cfg.ctr[0].event = 1;
	cfg.ctr[1].cc = 8;
	assert_int_equal(pmon_p5_cesr_encode(&cfg, &v), -EINVAL);
	assert_non_null(strstr(pmon_errdetail(), "CC1"));
	assert_int_equal(pmon_p5_cesr_decode(0x80000483, &cfg), 0x80000400);
}

static void test_p5__event_table(void **state)
{
	unsigned mask;

	(void)state;
	/* P55C codes count different events on CTR0 and CTR1. */
	assert_string_equal(pmon_p5_event(0x2b, 0)->name, "MMX_INSTRUCTIONS_EXECUTED_U_PIPE");
	assert_string_equal(pmon_p5_event(0x2b, 1)->name, "MMX_INSTRUCTIONS_EXECUTED_V_PIPE");
	assert_true(pmon_p5_event(0x2b, 0)->mmx_only);
	assert_false(pmon_p5_event(0x03, 1)->mmx_only);
	assert_true(pmon_p5_event(0x18, 0)->duration);
	assert_false(pmon_p5_event(0x16, 0)->duration);
	assert_null(pmon_p5_event(0x10, 0)); /* reserved */
	assert_null(pmon_p5_event(0x39, 1)); /* RETURNS exists on CTR0 only */
	assert_null(pmon_p5_event(0x03, 2));
	assert_non_null(pmon_p5_event_by_name("data_read_miss", &mask));
	assert_int_equal(mask, 3);
	assert_null(pmon_p5_event_by_name("NO_SUCH_EVENT", &mask));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_p5__pmx_example_decodes),
		cmocka_unit_test(test_p5__encode_decode_round_trip),
		cmocka_unit_test(test_p5__bad_fields_and_reserved_bits),
		cmocka_unit_test(test_p5__event_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
