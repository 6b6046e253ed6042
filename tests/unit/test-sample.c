// SPDX-License-Identifier: MIT
/* pmon_sample__parse() on synthetic PERF_RECORD_SAMPLE records: every
 * sample_type bit pmon uses, and lengths that would wrap a naive check. */
#include <errno.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <pmon/sample.h>

struct rec {
	uint8_t b[1024];
	size_t n;
};

static void put(struct rec *r, uint64_t v)
{
	memcpy(r->b + r->n, &v, 8);
	r->n += 8;
}

static void begin(struct rec *r)
{
	r->n = sizeof(struct perf_event_header);
}

static size_t end(struct rec *r)
{
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .size = (uint16_t)r->n };

	memcpy(r->b, &h, sizeof(h));
	return r->n;
}

static void test_sample__every_field(void **state)
{
	const uint64_t t = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
		PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
		PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
		PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	struct pmon_sample s;
	struct rec r;

	(void)state;
	begin(&r);
	put(&r, 77); /* identifier */
	put(&r, 0x401000); /* ip */
	put(&r, 42 | (43ULL << 32)); /* pid, tid */
	put(&r, 123456789); /* time */
	put(&r, 0xdead0000); /* addr */
	put(&r, 77); /* id */
	put(&r, 99); /* stream id */
	put(&r, 3); /* cpu, res */
	put(&r, 1000); /* period */
	put(&r, 3); /* nr */
	put(&r, (uint64_t)PERF_CONTEXT_USER);
	put(&r, 0x401000);
	put(&r, 0x402000);
	put(&r, PERF_SAMPLE_REGS_ABI_64);
	put(&r, 11); /* regs_user 0x5: two registers */
	put(&r, 22);
	put(&r, 16); /* stack size */
	put(&r, 0x1111);
	put(&r, 0x2222);
	put(&r, 8); /* dyn size */
	assert_int_equal(pmon_sample__parse(r.b, end(&r), t, 0x5, &s), 0);
	assert_true(s.id == 77 && s.ip == 0x401000 && s.pid == 42 && s.tid == 43);
	assert_true(s.time == 123456789 && s.addr == 0xdead0000 && s.stream_id == 99);
	assert_true(s.cpu == 3 && s.period == 1000 && s.nr == 3);
	assert_true(pmon_sample__chain(&s, 0) == (uint64_t)PERF_CONTEXT_USER);
	assert_true(pmon_sample__chain(&s, 2) == 0x402000);
	assert_true(s.abi == PERF_SAMPLE_REGS_ABI_64 && s.nregs == 2);
	uint64_t reg;
	memcpy(&reg, s.regs + 8, 8);
	assert_true(reg == 22);
	assert_true(s.stack_size == 16 && s.stack_dyn == 8 && s.stack);
	memcpy(&reg, s.stack + 8, 8);
	assert_true(reg == 0x2222);
}

/* Each field alone, so that its offset is not hidden by its neighbours. */
static void test_sample__field_offsets(void **state)
{
	static const struct {
		int line;
		uint64_t type;
		size_t off; /* of the field's value after the header */
	} rows[] = {
		{ __LINE__, PERF_SAMPLE_IP, 0 },
		{ __LINE__, PERF_SAMPLE_IP | PERF_SAMPLE_IDENTIFIER, 8 },
		{ __LINE__, PERF_SAMPLE_ADDR | PERF_SAMPLE_TIME | PERF_SAMPLE_TID, 16 },
		{ __LINE__, PERF_SAMPLE_PERIOD | PERF_SAMPLE_CPU | PERF_SAMPLE_STREAM_ID, 16 },
		{ __LINE__, PERF_SAMPLE_PERIOD | PERF_SAMPLE_ID, 8 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct pmon_sample s;
		struct rec r;
		begin(&r);
		for (int k = 0; k < __builtin_popcountll(rows[i].type); k++)
			put(&r, (uint64_t)k * 8 == rows[i].off ? 0x5555 : 1);
		assert_int_equal(pmon_sample__parse(r.b, end(&r), rows[i].type, 0, &s), 0);
		uint64_t got = rows[i].type & PERF_SAMPLE_IP ? s.ip
			: rows[i].type & PERF_SAMPLE_ADDR    ? s.addr
			: rows[i].type & PERF_SAMPLE_PERIOD  ? s.period
							     : 0;
		if (got != 0x5555)
			fail_msg("row at line %d: got %#llx", rows[i].line,
				 (unsigned long long)got);
	}
}

/* Lengths that overflow "p + n * 8 <= end" are refused, not followed. */
static void test_sample__hostile_lengths(void **state)
{
	static const struct {
		int line;
		uint64_t type, regs_user;
		uint64_t v[3];
		size_t nv;
	} rows[] = {
		{ __LINE__, PERF_SAMPLE_CALLCHAIN, 0, { 1ULL << 61 }, 1 },
		{ __LINE__, PERF_SAMPLE_CALLCHAIN, 0, { UINT64_MAX }, 1 },
		{ __LINE__, PERF_SAMPLE_CALLCHAIN, 0, { 2, 1 }, 2 },
		{ __LINE__, PERF_SAMPLE_STACK_USER, 0, { UINT64_MAX - 7, 0 }, 2 },
		{ __LINE__, PERF_SAMPLE_STACK_USER, 0, { 8, 0 }, 2 }, /* no dyn_size */
		{ __LINE__, PERF_SAMPLE_REGS_USER, UINT64_MAX, { 1, 0 }, 2 },
		{ __LINE__, PERF_SAMPLE_IP | PERF_SAMPLE_TID, 0, { 1 }, 1 },
		{ __LINE__, PERF_SAMPLE_RAW, 0, { 0xffffffffULL }, 1 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct pmon_sample s;
		struct rec r;
		begin(&r);
		for (size_t k = 0; k < rows[i].nv; k++)
			put(&r, rows[i].v[k]);
		int err = pmon_sample__parse(r.b, end(&r), rows[i].type, rows[i].regs_user, &s);
		if (err != -EINVAL)
			fail_msg("row at line %d: %d", rows[i].line, err);
	}
}

static void test_sample__not_a_sample(void **state)
{
	struct perf_event_header h = { .type = PERF_RECORD_MMAP2, .size = 8 };
	struct pmon_sample s;
	struct rec r;

	(void)state;
	assert_int_equal(pmon_sample__parse(&h, sizeof(h), PERF_SAMPLE_IP, 0, &s), -EINVAL);
	h.type = PERF_RECORD_SAMPLE;
	h.size = 64; /* says more than there is */
	assert_int_equal(pmon_sample__parse(&h, sizeof(h), 0, 0, &s), -EINVAL);
	begin(&r);
	assert_int_equal(pmon_sample__parse(r.b, end(&r), PERF_SAMPLE_READ, 0, &s), -ENOTSUP);
	/* no registers with ABI_NONE, a 0-byte stack without dyn_size */
	begin(&r);
	put(&r, PERF_SAMPLE_REGS_ABI_NONE);
	put(&r, 0);
	assert_int_equal(pmon_sample__parse(r.b, end(&r),
					    PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER, 0xff,
					    &s),
			 0);
	assert_true(s.nregs == 0 && !s.regs && s.stack_size == 0 && !s.stack);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sample__every_field),
		cmocka_unit_test(test_sample__field_offsets),
		cmocka_unit_test(test_sample__hostile_lengths),
		cmocka_unit_test(test_sample__not_a_sample),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
