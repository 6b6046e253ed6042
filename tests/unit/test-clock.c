// SPDX-License-Identifier: MIT
/* Timers: the clock table, the clocksource reader on a fake sysfs tree,
 * TSC calibration (plausibility only: no timing assertions), and the perf
 * mmap page's TSC conversion on synthetic pages filled as the kernel fills
 * them (arch/x86/kernel/tsc.c __set_cyc2ns_scale(), arch/x86/events/core.c
 * arch_perf_update_userpage(), arch/arm64/kernel/perf_event.c for the
 * short counter). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

#include <pmon/pmon.h>

static void test_clock__table(void **state)
{
	struct pmon_clock_res c[16];
	size_t n = pmon_clocks(c, 16);
	bool raw = false;

	(void)state;
	assert_true(n >= 8);
	for (size_t i = 0; i < n; i++) {
		assert_non_null(c[i].name);
		if (!strcmp(c[i].name, "CLOCK_MONOTONIC_RAW")) {
			raw = true;
			assert_true(c[i].res_ns > 0);
		}
	}
	assert_true(raw);
	assert_int_equal(pmon_clocks(c, 2), 2);
}

static void test_clock__clocksource_fake_sysfs(void **state)
{
	char root[] = "/tmp/pmon-sysfs-XXXXXX", path[256], cur[64], avail[128];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/devices/system/clocksource/clocksource0", root);
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "mkdir -p %s", path);
	assert_int_equal(system(cmd), 0);
	strcat(path, "/current_clocksource");
	f = fopen(path, "w");
	fputs("tsc\n", f);
	fclose(f);
	assert_int_equal(pmon_clocksource(root, cur, sizeof(cur), avail, sizeof(avail)), 0);
	assert_string_equal(cur, "tsc");
	assert_string_equal(avail, "");
	assert_int_equal(pmon_clocksource("/nonexistent", cur, sizeof(cur), NULL, 0), -ENOENT);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
}

static void test_clock__tsc_calibration(void **state)
{
	uint64_t hz = 0;
	uint32_t ppm;

	(void)state;
	assert_int_equal(pmon_tsc_calibrate(0, &hz, &ppm), -EINVAL);
	assert_int_equal(pmon_tsc_calibrate(1001, &hz, &ppm), -EINVAL);
	assert_int_equal(pmon_tsc_calibrate(5, &hz, &ppm), 0);
	/* Any x86-64 TSC runs between 100 MHz and 10 GHz. */
	assert_true(hz > 100000000ULL && hz < 10000000000ULL);
}

/* kernel/time/clocksource.c clocks_calc_mult_shift(from = khz, to =
 * NSEC_PER_MSEC, maxsec = 0), then __set_cyc2ns_scale()'s "shift 32 is
 * exported to the perf page, which expects at most 31" halving. */
/* #24.1: the library decides between a CPUID figure and a calibration. A
 * derivation loses beyond the tolerance (the Skylake-X workstation: 25 MHz
 * assumed, 24 MHz real, +4.17%); a reported frequency never does. */
static void test_clock__tsc_choose(void **state)
{
	static const struct {
		int line;
		uint64_t cpuid;
		enum pmon_tsc_source src;
		uint64_t cal;
		uint32_t spread;
		uint64_t want;
		enum pmon_tsc_source want_src;
		bool compared;
		int64_t diff;
	} t[] = {
		/* 25 MHz x 275/2 where the part runs 24 MHz x 275/2 */
		{ __LINE__, 3437500000ULL, PMON_TSC_HZ_LEAF15_NOMINAL, 3300000000ULL, 10,
		  3300000000ULL, PMON_TSC_HZ_CALIBRATED, true, -40000 },
		/* the 16H derivation within tolerance keeps */
		{ __LINE__, 3999984000ULL, PMON_TSC_HZ_LEAF15_16, 4000100000ULL, 20, 3999984000ULL,
		  PMON_TSC_HZ_LEAF15_16, true, 29 },
		/* just past 1000 ppm: calibrated */
		{ __LINE__, 2100000000ULL, PMON_TSC_HZ_LEAF15_16, 2102200000ULL, 0, 2102200000ULL,
		  PMON_TSC_HZ_CALIBRATED, true, 1047 },
		/* a noisy calibration (spread 5000 ppm) does not overrule 0.2% */
		{ __LINE__, 2100000000ULL, PMON_TSC_HZ_LEAF15_16, 2104200000ULL, 5000,
		  2100000000ULL, PMON_TSC_HZ_LEAF15_16, true, 2000 },
		/* reported by the hardware: CPUID wins even when far off */
		{ __LINE__, 3187200000ULL, PMON_TSC_HZ_LEAF15, 3000000000ULL, 0, 3187200000ULL,
		  PMON_TSC_HZ_LEAF15, true, -58734 },
		/* nothing from CPUID: the calibration */
		{ __LINE__, 0, PMON_TSC_HZ_NONE, 2596144000ULL, 0, 2596144000ULL,
		  PMON_TSC_HZ_CALIBRATED, false, 0 },
		/* not calibrated (a dump): CPUID's figure stands */
		{ __LINE__, 2100000000ULL, PMON_TSC_HZ_LEAF15_16, 0, 0, 2100000000ULL,
		  PMON_TSC_HZ_LEAF15_16, false, 0 },
		{ __LINE__, 0, PMON_TSC_HZ_NONE, 0, 0, 0, PMON_TSC_HZ_NONE, false, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct pmon_tsc_choice ch;

		print_message("row at line %d\n", t[i].line);
		pmon_tsc_choose(t[i].cpuid, t[i].src, t[i].cal, t[i].spread, &ch);
		assert_int_equal(ch.hz, t[i].want);
		assert_int_equal(ch.source, t[i].want_src);
		assert_int_equal(ch.compared, t[i].compared);
		assert_int_equal(ch.diff_ppm, t[i].diff);
		assert_int_equal(ch.cpuid_hz, t[i].cpuid);
		assert_int_equal(ch.calibrated_hz, t[i].cal);
	}
	assert_true(pmon_tsc_wants_calibration(0, PMON_TSC_HZ_NONE));
	assert_true(pmon_tsc_wants_calibration(2100000000ULL, PMON_TSC_HZ_LEAF15_16));
	assert_true(pmon_tsc_wants_calibration(4008000000ULL, PMON_TSC_HZ_LEAF15_NOMINAL));
	assert_false(pmon_tsc_wants_calibration(3187200000ULL, PMON_TSC_HZ_LEAF15));
	assert_false(pmon_tsc_wants_calibration(2200000000ULL, PMON_TSC_HZ_LEAF15_DENVERTON));
	assert_false(pmon_tsc_wants_calibration(2499999000ULL, PMON_TSC_HZ_HYPERVISOR));
}

static void kernel_cyc2ns(uint32_t khz, uint32_t *mult, uint16_t *shift)
{
	uint64_t tmp = 0;
	uint32_t sft, sftacc = 32;

	for (sft = 32; sft > 0; sft--) {
		tmp = (uint64_t)1000000 << sft;
		tmp += khz / 2;
		tmp /= khz;
		if ((tmp >> sftacc) == 0)
			break;
	}
	if (sft == 32) {
		sft = 31;
		tmp >>= 1;
	}
	*mult = (uint32_t)tmp;
	*shift = (uint16_t)sft;
}

/* The uapi comment's own arithmetic (include/uapi/linux/perf_event.h):
 * quot = cyc >> time_shift; rem = cyc & ((1 << time_shift) - 1);
 * timestamp = time_zero + quot * time_mult + ((rem * time_mult) >> time_shift). */
static uint64_t uapi_timestamp(uint64_t zero, uint32_t mult, uint16_t shift, uint64_t cyc)
{
	uint64_t quot = cyc >> shift, rem = cyc & (((uint64_t)1 << shift) - 1);
	return zero + quot * mult + ((rem * mult) >> shift);
}

/* A 2.1 GHz TSC as x86 publishes it: mult/shift from cyc2ns, time_zero the
 * cyc2ns offset (plus __sched_clock_offset, 0 here) making sched_clock()
 * continuous at tsc_now. */
static void test_clock__perf_tsc_x86(void **state)
{
	struct pmon_perf_tsc c = { .cap_time = true, .cap_time_zero = true };
	const uint64_t tsc_now = 123456789012345ULL, ns_now = 58788947148736ULL;

	(void)state;
	kernel_cyc2ns(2100000, &c.mult, &c.shift);
	assert_int_equal(c.shift, 31); /* 32 from the search, halved */
	assert_int_equal(c.mult, 1022611261u); /* round(2^32 / 2.1) >> 1 */
	c.zero = ns_now - (uint64_t)(((unsigned __int128)tsc_now * c.mult) >> c.shift);
	assert_int_equal(pmon_perf_tsc__to_ns(&c, tsc_now), ns_now);
	/* 2.1e9 ticks later: one second, to the rounding of mult (< 1 ns). */
	uint64_t later = pmon_perf_tsc__to_ns(&c, tsc_now + 2100000000ULL);
	assert_true(later - ns_now >= 999999999ULL && later - ns_now <= 1000000001ULL);
	/* The same as the uapi's quot/rem form, far from 0 too (a TSC after
	 * years of uptime: 2^62 ticks) -- no 64-bit overflow. */
	static const uint64_t cycs[] = { 0,	     1,		 2099999999ULL,	      tsc_now,
					 1ULL << 40, 1ULL << 62, (1ULL << 62) + 12345 };
	for (size_t i = 0; i < sizeof(cycs) / sizeof(cycs[0]); i++)
		assert_int_equal(pmon_perf_tsc__to_ns(&c, cycs[i]),
				 uapi_timestamp(c.zero, c.mult, c.shift, cycs[i]));
	assert_int_equal(pmon_perf_tsc__timebase(&c, NULL), PMON_TIMEBASE_PERF);
}

/* cap_user_time_short (arm64's 56-bit counter, here a 32-bit one to see
 * the wrap): the page's time_cycles is the counter at time_zero's epoch
 * and the counter read below it has wrapped: time_cycles + ((cyc -
 * time_cycles) & time_mask) counts on past the wrap. */
static void test_clock__perf_tsc_short_wrap(void **state)
{
	struct pmon_perf_tsc c = { .cap_time = true,
				   .cap_time_zero = true,
				   .cap_time_short = true,
				   .mult = 1u << 20, /* 1 ns a tick, with shift 20 */
				   .shift = 20,
				   .zero = 1000,
				   .cycles = 0xfffffff0ULL,
				   .mask = 0xffffffffULL };

	(void)state;
	assert_int_equal(pmon_perf_tsc__to_ns(&c, 0xfffffff0ULL), 1000 + 0xfffffff0ULL);
	/* 0x20 ticks later the counter reads 0x10: */
	assert_int_equal(pmon_perf_tsc__to_ns(&c, 0x10), 1000 + 0xfffffff0ULL + 0x20);
	/* without the correction (code that ignores cap_user_time_short) it
	 * would go back by 2^32 ticks: */
	c.cap_time_short = false;
	assert_int_equal(pmon_perf_tsc__to_ns(&c, 0x10), 1000 + 0x10);
	c.cap_time_short = true;
	assert_int_equal(pmon_perf_tsc__timebase(&c, NULL), PMON_TIMEBASE_PERF);
	c.mask = 0;
	assert_int_equal(pmon_perf_tsc__timebase(&c, NULL), PMON_TIMEBASE_MONO);
}

/* The seqlock: the kernel rewrites the page between two increments of
 * lock (perf_event_update_userpage()); a read that saw lock move reads it
 * all again, the TSC with it. */
static struct perf_event_mmap_page page;
static int fake_reads;

static uint64_t fake_rdtsc(void)
{
	if (fake_reads++ == 0) { /* the kernel updates the page under us */
		page.lock += 2;
		page.time_mult = 2000;
		page.time_zero = 77;
		return 111;
	}
	return 222;
}

static void test_clock__perf_tsc_seqlock_retry(void **state)
{
	struct pmon_perf_tsc c;
	uint64_t tsc = 0;

	(void)state;
	memset(&page, 0, sizeof(page));
	page.lock = 4;
	page.cap_user_time = page.cap_user_time_zero = 1;
	page.time_mult = 1000;
	page.time_shift = 10;
	page.time_zero = 5;
	fake_reads = 0;
	assert_int_equal(pmon_perf_tsc__read(&page, fake_rdtsc, &c, &tsc), 1);
	assert_int_equal(fake_reads, 2);
	assert_int_equal(c.mult, 2000); /* the second version, whole */
	assert_int_equal(c.zero, 77);
	assert_int_equal(tsc, 222);
	assert_int_equal(c.shift, 10);
	/* unchanged: no retry */
	assert_int_equal(pmon_perf_tsc__read(&page, fake_rdtsc, &c, &tsc), 0);
	assert_int_equal(fake_reads, 3);
}

/* The decision: the perf clock only where the page offers time_zero. */
static void test_clock__timebase_decision(void **state)
{
	static const struct {
		int line;
		struct pmon_perf_tsc c;
		enum pmon_timebase want;
		const char *why; /* a part of the reason */
	} rows[] = {
		/* bare metal, stable TSC, an event without use_clockid */
		{ __LINE__,
		  { true, true, false, 1022611261u, 31, 5, 0, 0, 0 },
		  PMON_TIMEBASE_PERF,
		  NULL },
		/* this VM (kvm-clock): everything 0 */
		{ __LINE__,
		  { false, false, false, 0, 0, 0, 0, 0, 0 },
		  PMON_TIMEBASE_MONO,
		  "cap_user_time_zero 0" },
		/* an event with use_clockid: cap_user_time without time_zero */
		{ __LINE__,
		  { true, false, false, 1022611261u, 31, 0, 0, 0, 0 },
		  PMON_TIMEBASE_MONO,
		  "no cap_user_time_zero" },
		/* a short counter with its mask */
		{ __LINE__,
		  { true, true, true, 1u << 24, 24, 0, 0, 100, (1ULL << 56) - 1 },
		  PMON_TIMEBASE_PERF,
		  NULL },
		{ __LINE__,
		  { true, true, true, 1u << 24, 24, 0, 0, 100, 0 },
		  PMON_TIMEBASE_MONO,
		  "time_mask" },
		{ __LINE__,
		  { true, true, false, 0, 31, 0, 0, 0, 0 },
		  PMON_TIMEBASE_MONO,
		  "time_mult is 0" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct pmon_perf_tsc *r = &rows[i].c;
		struct pmon_perf_tsc c;
		const char *why = "unset";
		/* the row as a page, read back as the trace reads one */
		memset(&page, 0, sizeof(page));
		page.cap_user_time = r->cap_time;
		page.cap_user_time_zero = r->cap_time_zero;
		page.cap_user_time_short = r->cap_time_short;
		page.time_mult = r->mult;
		page.time_shift = r->shift;
		page.time_zero = r->zero;
		page.time_cycles = r->cycles;
		page.time_mask = r->mask;
		assert_int_equal(pmon_perf_tsc__read(&page, NULL, &c, NULL), 0);
		enum pmon_timebase b = pmon_perf_tsc__timebase(&c, &why);
		if (b != rows[i].want || (rows[i].why ? !why || !strstr(why, rows[i].why) : !!why))
			fail_msg("line %d: base %d, why '%s'", rows[i].line, b,
				 why ? why : "(null)");
	}
}

/* This machine's own page, read as the trace reads it: the decision follows
 * its cap bits (printed: on this project's VMs, kvm-clock, all 0). */
static void test_clock__timebase_here(void **state)
{
	struct perf_event_attr a = { .size = sizeof(a),
				     .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_TASK_CLOCK,
				     .exclude_kernel = 1,
				     .exclude_hv = 1 };
	struct pmon_perf_tsc c;

	(void)state;
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0)
		skip(); /* perf_event_open refused here */
	void *m = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, fd, 0);
	assert_true(m != MAP_FAILED);
	const struct perf_event_mmap_page *pc = m;
	pmon_perf_tsc__read(pc, NULL, &c, NULL);
	print_message("# this machine's page: cap_user_time %u, cap_user_time_zero %u, "
		      "cap_user_time_short %u, time_mult %u, time_shift %u\n",
		      (unsigned)pc->cap_user_time, (unsigned)pc->cap_user_time_zero,
		      (unsigned)pc->cap_user_time_short, pc->time_mult, (unsigned)pc->time_shift);
	assert_int_equal(c.cap_time_zero, pc->cap_user_time_zero);
	assert_int_equal(pmon_perf_tsc__timebase(&c, NULL),
			 pc->cap_user_time_zero && pc->time_mult ? PMON_TIMEBASE_PERF
								 : PMON_TIMEBASE_MONO);
	munmap(m, (size_t)sysconf(_SC_PAGESIZE));
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clock__table),
		cmocka_unit_test(test_clock__clocksource_fake_sysfs),
		cmocka_unit_test(test_clock__tsc_calibration),
		cmocka_unit_test(test_clock__tsc_choose),
		cmocka_unit_test(test_clock__perf_tsc_x86),
		cmocka_unit_test(test_clock__perf_tsc_short_wrap),
		cmocka_unit_test(test_clock__perf_tsc_seqlock_retry),
		cmocka_unit_test(test_clock__timebase_decision),
		cmocka_unit_test(test_clock__timebase_here),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
