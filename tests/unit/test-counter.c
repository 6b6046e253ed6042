// SPDX-License-Identifier: MIT
/*
 * The counting backend: the mmap self-read protocol on a synthetic
 * perf_event_mmap_page (rdpmc and rdtsc replaced, so the sign extension by
 * pmc_width, the seqlock retry and the time conversion are checked without
 * a PMU), and the real kernel path with software events: group reads, a
 * forked child enabled on exec, refusals with reasons, the read() fallback.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <pmon/pmon.h>

static struct perf_event_mmap_page page;
static uint64_t fake_pmc;
static int rdpmc_calls;
static uint32_t rdpmc_index;
static uint64_t fake_tsc;

static uint64_t fake_rdpmc(uint32_t idx)
{
	rdpmc_calls++;
	rdpmc_index = idx;
	if (rdpmc_calls == 1 && page.lock == 1)
		page.lock = 2; /* the kernel updated the page under us: retry */
	return fake_pmc;
}

static uint64_t fake_rdtsc(void)
{
	return fake_tsc;
}

static const struct pmon_mmap_ops ops = { fake_rdpmc, fake_rdtsc };

static void reset_page(void)
{
	memset(&page, 0, sizeof(page));
	rdpmc_calls = 0;
	page.cap_user_rdpmc = 1;
	page.index = 3; /* hardware counter 2 */
	page.pmc_width = 40;
	page.offset = 1000;
	page.time_enabled = page.time_running = 5000;
}

static void test_counter__mmap_sign_extends_by_pmc_width(void **state)
{
	struct pmon_self_count c;

	(void)state;
	reset_page();
	fake_pmc = 0xfffffffff0ULL; /* -16 in 40 bits */
	assert_int_equal(pmon_mmap_read(&page, &ops, &c), 0);
	assert_int_equal(rdpmc_index, 2);
	assert_int_equal(c.value, 1000 - 16);
	assert_true(c.via_rdpmc);
	/* The same bits in a 48-bit counter are a large positive value. */
	reset_page();
	page.pmc_width = 48;
	assert_int_equal(pmon_mmap_read(&page, &ops, &c), 0);
	assert_int_equal(c.value, 1000 + 0xfffffffff0ULL);
	assert_int_equal(c.enabled, 5000);
	assert_int_equal(c.running, 5000);
}

static void test_counter__mmap_retries_on_seqlock(void **state)
{
	struct pmon_self_count c;

	(void)state;
	reset_page();
	page.lock = 1;
	fake_pmc = 7;
	assert_int_equal(pmon_mmap_read(&page, &ops, &c), 0);
	assert_int_equal(rdpmc_calls, 2);
	assert_int_equal(c.value, 1007);
}

static void test_counter__mmap_refuses_without_rdpmc(void **state)
{
	struct pmon_self_count c;

	(void)state;
	reset_page();
	page.cap_user_rdpmc = 0;
	assert_int_equal(pmon_mmap_read(&page, &ops, &c), -EOPNOTSUPP);
	reset_page();
	page.index = 0; /* not on a counter right now */
	assert_int_equal(pmon_mmap_read(&page, &ops, &c), -EOPNOTSUPP);
	assert_int_equal(rdpmc_calls, 0);
}

static void test_counter__mmap_time_conversion(void **state)
{
	struct pmon_self_count c;

	(void)state;
	reset_page();
	page.cap_user_time = 1;
	page.time_enabled = 4000;
	page.time_running = 3000; /* multiplexed: enabled != running */
	page.time_mult = 3u << 20; /* 3 ns per cycle after >> 20 ... */
	page.time_shift = 20;
	page.time_offset = (uint64_t)-29000; /* time since the last update */
	fake_tsc = 10000; /* 3 * 10000 - 29000 = 1000 ns */
	fake_pmc = 0;
	assert_int_equal(pmon_mmap_read(&page, &ops, &c), 0);
	assert_int_equal(c.enabled, 5000);
	assert_int_equal(c.running, 4000);
	/* cap_user_time_short: cycles wrap in time_mask around time_cycles */
	reset_page();
	page.cap_user_time = 1;
	page.cap_user_time_short = 1;
	page.time_enabled = 0;
	page.time_running = 100;
	page.time_mult = 1u << 10, page.time_shift = 10;
	page.time_offset = 0;
	page.time_cycles = 0x100;
	page.time_mask = 0xff;
	fake_tsc = 0x1234; /* becomes 0x100 + (0x1134 & 0xff) = 0x134 */
	assert_int_equal(pmon_mmap_read(&page, &ops, &c), 0);
	assert_int_equal(c.enabled, 0x134);
}

static struct pmon_evlist *events(const char *spec)
{
	struct pmon_evlist *l = pmon_evlist__new(NULL);

	assert_non_null(l);
	if (pmon_evlist__add(l, spec))
		fail_msg("%s: %s", spec, pmon_errdetail());
	return l;
}

static bool perf_allowed(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int p = 3;

	if (f) {
		if (fscanf(f, "%d", &p) != 1)
			p = 3;
		fclose(f);
	}
	return p <= 2 || geteuid() == 0;
}

/* The calling process: a group of software events read with one read(). */
static void test_counter__self_group(void **state)
{
	struct pmon_evlist *l;
	struct pmon_target *t = pmon_target__new_pid(0);
	struct pmon_counters *c;
	struct pmon_count v[3];
	volatile char *mem;

	(void)state;
	if (!perf_allowed())
		skip();
	l = events("{task-clock,page-faults,cs}");
	c = pmon_counters__open(l, t, NULL);
	assert_non_null(c);
	mem = mmap(NULL, 64 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	madvise((void *)mem, 64 * 4096, MADV_NOHUGEPAGE);
	for (int i = 0; i < 64; i++)
		mem[i * 4096] = 1;
	assert_int_equal(pmon_counters__read(c, v), 0);
	assert_int_equal(v[0].status, PMON_COUNT_OK);
	assert_true(v[0].value > 0);
	assert_true(v[1].raw >= 64); /* every page faulted once */
	assert_int_equal(v[0].enabled, v[1].enabled); /* one group, one read */
	munmap((void *)mem, 64 * 4096);
	pmon_counters__close(c);
	pmon_evlist__free(l);
	pmon_target__free(t);
}

/* A self group's reads carry the group's time enabled and running: both
 * grow, and running never passes enabled (software events: equal). */
static void test_counter__selfgroup_times(void **state)
{
	struct pmon_evlist *l;
	struct pmon_selfgroup *g = NULL;
	uint64_t v0[2], v1[2], e0, r0, e1, r1;
	volatile char *mem;

	(void)state;
	if (!perf_allowed())
		skip();
	l = events("task-clock,page-faults");
	assert_non_null(g = pmon_selfgroup__open(l));
	assert_int_equal(pmon_selfgroup__read_times(g, v0, &e0, &r0), 0);
	mem = mmap(NULL, 32 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	madvise((void *)mem, 32 * 4096, MADV_NOHUGEPAGE);
	for (int i = 0; i < 32; i++)
		mem[i * 4096] = 1;
	assert_int_equal(pmon_selfgroup__read_times(g, v1, &e1, &r1), 0);
	assert_true(e1 > e0 && r1 > r0);
	assert_true(r1 <= e1);
	assert_true(v1[1] - v0[1] >= 32);
	assert_int_equal(e1 - e0, r1 - r0); /* never time-shared here */
	assert_false(pmon_selfgroup__multiplexed(g));
	munmap((void *)mem, 32 * 4096);
	pmon_selfgroup__close(g);
	pmon_evlist__free(l);
}

/* A forked child enabled on exec: the counts are the child's from exec on. */
static void test_counter__child_on_exec(void **state)
{
	char *argv[] = { "/bin/sh", "-c", "exit 5", NULL };
	struct pmon_child ch;
	struct pmon_evlist *l;
	struct pmon_counters *c;
	struct pmon_count v[2];
	int st;

	(void)state;
	if (!perf_allowed())
		skip();
	l = events("task-clock,page-faults");
	assert_int_equal(pmon_child__fork(argv, &ch), 0);
	struct pmon_target *t = pmon_target__new_pid(ch.pid);
	struct pmon_open_opts how = { .sz = sizeof(how), .enable_on_exec = true, .inherit = true };
	c = pmon_counters__open(l, t, &how);
	pmon_target__free(t); /* not kept by the counters */
	assert_non_null(c);
	assert_int_equal(pmon_counters__read(c, v), 0);
	assert_int_equal(v[1].raw, 0); /* not started before exec */
	assert_int_equal(pmon_child__start(&ch), 0);
	assert_int_equal(pmon_child__wait(&ch, &st, NULL), 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 5);
	assert_int_equal(pmon_counters__read(c, v), 0);
	assert_true(v[1].raw > 10); /* a shell faults in its pages */
	pmon_counters__close(c);
	pmon_evlist__free(l);

	/* exec failure comes back as an error, not as a run of status 127 */
	char *bad[] = { "/nonexistent/command", NULL };
	assert_int_equal(pmon_child__fork(bad, &ch), 0);
	assert_int_equal(pmon_child__start(&ch), -ENOENT);
	assert_int_equal(pmon_child__wait(&ch, &st, NULL), 0);
	assert_int_equal(WEXITSTATUS(st), 127);
}

/* An event the kernel refuses is reported with its reason; a group whose
 * leader is refused still counts its other members. */
static void test_counter__refused_event_reason(void **state)
{
	struct pmon_evlist *l;
	struct pmon_target *t = pmon_target__new_pid(0);
	struct pmon_counters *c;
	struct pmon_count v[2];

	(void)state;
	if (!perf_allowed())
		skip();
	l = events("{cycles,task-clock}");
	c = pmon_counters__open(l, t, NULL);
	assert_non_null(c);
	assert_int_equal(pmon_counters__read(c, v), 0);
	assert_int_equal(v[1].status, PMON_COUNT_OK);
	if (v[0].status == PMON_COUNT_OK) {
		print_message("this machine has a PMU: cycles counted\n");
	} else {
		assert_int_equal(v[0].status, PMON_COUNT_NOT_SUPPORTED);
		assert_non_null(v[0].reason);
		print_message("cycles: %s\n", v[0].reason);
		assert_non_null(strstr(v[0].reason, "PMU"));
	}
	pmon_counters__close(c);
	pmon_evlist__free(l);

	/* Nothing countable at all, or a vanished target: NULL with a reason. */
	l = events("cycles");
	c = pmon_counters__open(l, t, NULL);
	if (!c)
		assert_non_null(strstr(pmon_errdetail(), "cannot open 'cycles'"));
	pmon_counters__close(c);
	struct pmon_target *gone = pmon_target__new_pid(999999999);
	errno = 0;
	assert_null(pmon_counters__open(l, gone, NULL));
	assert_int_equal(errno, ESRCH);
	assert_non_null(strstr(pmon_errdetail(), "999999999 does not exist"));
	pmon_evlist__free(l);
	pmon_target__free(gone);
	pmon_target__free(t);
}

/* pmon_self: rdpmc where the page allows it, read() otherwise; either way
 * the count moves. */
static void test_counter__self_read(void **state)
{
	struct pmon_evlist *l;
	struct pmon_self *s;
	struct pmon_self_count a, b;

	(void)state;
	if (!perf_allowed())
		skip();
	l = events("task-clock");
	assert_non_null(s = pmon_self__open(pmon_evlist__event(l, 0)));
	assert_int_equal(pmon_self__read(s, &a), 0);
	for (volatile int i = 0; i < 1000000; i++)
		;
	assert_int_equal(pmon_self__read(s, &b), 0);
	assert_true(b.value > a.value);
	assert_false(b.via_rdpmc); /* a software event never allows rdpmc */
	pmon_self__close(s);
	pmon_evlist__free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counter__mmap_sign_extends_by_pmc_width),
		cmocka_unit_test(test_counter__mmap_retries_on_seqlock),
		cmocka_unit_test(test_counter__mmap_refuses_without_rdpmc),
		cmocka_unit_test(test_counter__mmap_time_conversion),
		cmocka_unit_test(test_counter__self_group),
		cmocka_unit_test(test_counter__selfgroup_times),
		cmocka_unit_test(test_counter__child_on_exec),
		cmocka_unit_test(test_counter__refused_event_reason),
		cmocka_unit_test(test_counter__self_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
