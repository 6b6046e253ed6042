// SPDX-License-Identifier: MIT
/*
 * The monitor's readings in steady state (an agent such as pmon serve reads
 * every second for months): pmon_monitor__read_delta(),
 * pmon_counters__read() and pmon_counters__read_unit() allocate nothing
 * once open, counted by wrapping the allocator (the link's --wrap=malloc,
 * calloc, realloc: every call libpmon makes goes through these, in plain
 * and sanitized builds alike); and a group's values are matched to their
 * events by position where a member did not open (a hardware event in a
 * software group on a machine without a PMU, or a refused one).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

#include <pmon/pmon.h>

/* ---- the allocator, counted ----------------------------------------------- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);

static _Thread_local volatile bool counting; /* (volatile: malloc is assumed to read no global) */
static _Thread_local volatile unsigned long allocs;

void *__wrap_malloc(size_t n)
{
	allocs += counting;
	return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	allocs += counting;
	return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	allocs += counting;
	return __real_realloc(p, n);
}

static bool perf_allowed(int max_paranoid)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int p = 3;

	if (f) {
		if (fscanf(f, "%d", &p) != 1)
			p = 3;
		fclose(f);
	}
	return p <= max_paranoid || geteuid() == 0;
}

static struct pmon_evlist *events(const char *spec)
{
	struct pmon_evlist *l = pmon_evlist__new(NULL);

	assert_non_null(l);
	if (pmon_evlist__add(l, spec))
		fail_msg("%s: %s", spec, pmon_errdetail());
	return l;
}

/* Touch @pages fresh pages: that many page faults, at least. */
static void fault_pages(size_t pages)
{
	long ps = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, pages * (size_t)ps, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	for (size_t i = 0; i < pages; i++)
		((volatile char *)p)[i * (size_t)ps] = 1;
	munmap(p, pages * (size_t)ps);
}

/* The calling thread alone (-t TID). */
static struct pmon_target *this_thread(void)
{
	char tid[32];
	snprintf(tid, sizeof(tid), "%ld", (long)syscall(SYS_gettid));
	struct pmon_target_spec spec = { .sz = sizeof(spec), .tid = tid };
	struct pmon_target *t = pmon_target__new(&spec);

	if (!t)
		fail_msg("target: %s", pmon_errdetail());
	return t;
}

/* Readings after the first allocate nothing, on @t with @spec. */
static void no_alloc_on(const char *spec, const struct pmon_target *t)
{
	struct pmon_evlist *l = events(spec);
	struct pmon_monitor *m = pmon_monitor__open(l, t, NULL);

	if (!m)
		fail_msg("open %s: %s", spec, pmon_errdetail());
	size_t nev = pmon_evlist__count(l);
	size_t nunits = pmon_counters__nunits(pmon_monitor__counters(m));
	struct pmon_count *out = calloc(nev, sizeof(*out));
	struct pmon_count *per = calloc(nunits * nev, sizeof(*per));
	double dt;

	assert_non_null(out);
	assert_non_null(per);
	assert_int_equal(pmon_monitor__read_delta(m, out, per, &dt), 0);
	allocs = 0;
	counting = true;
	for (int i = 0; i < 50; i++) {
		int a = pmon_monitor__read_delta(m, out, per, &dt);
		int b = pmon_monitor__read_delta(m, out, NULL, NULL);
		int c = pmon_counters__read(pmon_monitor__counters(m), out);
		int d = pmon_counters__read_unit(pmon_monitor__counters(m), nunits - 1, out);
		if (a || b || c || d) {
			counting = false;
			fail_msg("a reading failed: %d %d %d %d", a, b, c, d);
		}
	}
	counting = false;
	if (allocs)
		fail_msg("%s on %zu units: %lu allocations in 50 x 4 readings (none expected)",
			 spec, nunits, allocs);
	free(out);
	free(per);
	pmon_monitor__close(m);
	pmon_evlist__free(l);
}

static void test_monitor_alloc__steady_state(void **state)
{
	(void)state;
	if (!perf_allowed(2))
		skip();
	struct pmon_target *t = this_thread();
	/* The wrapper counts: an allocation while counting is seen. */
	allocs = 0;
	counting = true;
	void *volatile p = malloc(16); /* (volatile: not elided with its free) */
	counting = false;
	free(p);
	assert_int_equal(allocs, 1);

	no_alloc_on("{task-clock,page-faults,context-switches},cpu-clock", t);
	pmon_target__free(t);
	if (!perf_allowed(0))
		return; /* (CPU-wide counting needs paranoid 0 or root) */
	struct pmon_target *sw = pmon_target__new_cpus(NULL, 0);
	no_alloc_on("{cpu-clock,task-clock,context-switches,cpu-migrations,page-faults,"
		    "minor-faults,major-faults,alignment-faults}",
		    sw);
	pmon_target__free(sw);
}

static void test_monitor_alloc__group_by_position(void **state)
{
	(void)state;
	if (!perf_allowed(2))
		skip();
	struct pmon_target *t = this_thread();
	/* A hardware event between software ones: on a machine without a PMU
	 * it does not open, and the kernel's group has two values where the
	 * list has three events (each value goes to the next member that
	 * opened). With a PMU, cycles opens too and the group moves to the
	 * hardware context; page-faults still reads its own count. */
	struct pmon_evlist *l = events("{page-faults,cycles,task-clock,minor-faults}");
	struct pmon_monitor *m = pmon_monitor__open(l, t, NULL);
	struct pmon_count out[4];
	double dt;

	if (!m)
		fail_msg("open: %s", pmon_errdetail());
	assert_int_equal(pmon_monitor__read_delta(m, out, NULL, &dt), 0);
	fault_pages(64);
	assert_int_equal(pmon_monitor__read_delta(m, out, NULL, &dt), 0);
	/* page-faults and minor-faults count the 64 pages (and a few more), in
	 * their own slots; task-clock's nanoseconds are in its own. */
	assert_int_equal(out[0].status, PMON_COUNT_OK);
	assert_true(out[0].raw >= 64 && out[0].raw < 10000);
	assert_int_equal(out[3].status, PMON_COUNT_OK);
	assert_true(out[3].raw >= 64 && out[3].raw < 10000);
	assert_int_equal(out[2].status, PMON_COUNT_OK);
	assert_true(out[2].raw > 0);
	if (out[1].status == PMON_COUNT_NOT_SUPPORTED)
		assert_int_equal(out[1].raw, 0);
	pmon_monitor__close(m);
	pmon_evlist__free(l);
	pmon_target__free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_monitor_alloc__steady_state),
		cmocka_unit_test(test_monitor_alloc__group_by_position),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
