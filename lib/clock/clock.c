// SPDX-License-Identifier: MIT
/*
 * Timers (pmon/clock.h): TSC calibration against CLOCK_MONOTONIC_RAW for
 * machines whose CPUID enumerates no TSC frequency (this project's VMs) or
 * only derives one, and the choice between the two (pmon_tsc_choose()), the
 * POSIX clocks with their resolution, the kernel's clocksource, and the
 * perf mmap page's TSC conversion (the trace's perf-clock time base, and
 * the self-read's time_enabled extension in lib/counter/self.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/perf_event.h>

#include "internal.h"
#include <pmon/arch.h>
#include <pmon/clock.h>

static const struct {
	const char *name;
	clockid_t id;
	const char *what;
} clock_table[] = {
	{ "CLOCK_REALTIME", CLOCK_REALTIME, "wall clock, steps with settimeofday/NTP" },
	{ "CLOCK_REALTIME_COARSE", CLOCK_REALTIME_COARSE, "wall clock at tick resolution, cheap" },
	{ "CLOCK_MONOTONIC", CLOCK_MONOTONIC, "monotonic, NTP-slewed" },
	{ "CLOCK_MONOTONIC_COARSE", CLOCK_MONOTONIC_COARSE, "monotonic at tick resolution, cheap" },
	{ "CLOCK_MONOTONIC_RAW", CLOCK_MONOTONIC_RAW, "monotonic, never slewed (TSC calibration)" },
	{ "CLOCK_BOOTTIME", CLOCK_BOOTTIME, "monotonic including suspend" },
	{ "CLOCK_TAI", CLOCK_TAI, "international atomic time" },
	{ "CLOCK_PROCESS_CPUTIME_ID", CLOCK_PROCESS_CPUTIME_ID, "CPU time of this process" },
	{ "CLOCK_THREAD_CPUTIME_ID", CLOCK_THREAD_CPUTIME_ID, "CPU time of this thread" },
};

size_t pmon_clocks(struct pmon_clock_res *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < PMON_ARRAY_SIZE(clock_table) && n < max; i++, n++) {
		struct timespec ts;

		out[n].name = clock_table[i].name;
		out[n].id = clock_table[i].id;
		out[n].what = clock_table[i].what;
		out[n].res_ns = clock_getres(clock_table[i].id, &ts)
			? -1
			: (long)(ts.tv_sec * 1000000000L + ts.tv_nsec);
	}
	return n;
}

int pmon_clocksource(const char *sysfs_root, char *cur, size_t curlen, char *avail, size_t availlen)
{
	char path[512];
	long n;

	if (!sysfs_root)
		sysfs_root = "/sys";
	pmon__fmt(path, sizeof(path),
		  "%s/devices/system/clocksource/clocksource0/current_clocksource", sysfs_root);
	n = pmon__read_text(path, cur, curlen);
	if (n < 0)
		return pmon__err((int)n, "%s: %s", path, strerror((int)-n));
	if (avail && availlen) {
		pmon__fmt(path, sizeof(path),
			  "%s/devices/system/clocksource/clocksource0/available_clocksource",
			  sysfs_root);
		if (pmon__read_text(path, avail, availlen) < 0)
			avail[0] = '\0';
	}
	return 0;
}

static uint64_t ns_raw(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Read the TSC between two clock reads and keep the tightest of a few tries,
 * so that an interrupt between the reads cannot skew the pairing. */
static void paired_read(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 8; i++) {
		uint64_t a = ns_raw();
		pmon_lfence();
		uint64_t t = pmon_rdtsc();
		pmon_lfence();
		uint64_t b = ns_raw();
		if (b - a < best) {
			best = b - a;
			*tsc = t;
			*ns = a + (b - a) / 2;
		}
	}
}

int pmon_tsc_calibrate(unsigned ms, uint64_t *hz, uint32_t *spread_ppm)
{
	enum { WINDOWS = 5 };
	uint64_t f[WINDOWS];

	if (ms < 1 || ms > 1000)
		return pmon__err(-EINVAL, "calibration window %u ms is outside 1..1000", ms);
	for (int w = 0; w < WINDOWS; w++) {
		uint64_t t0, n0, t1, n1;
		struct timespec d = { .tv_sec = ms / 1000,
				      .tv_nsec = (long)(ms % 1000) * 1000000L };

		paired_read(&t0, &n0);
		while (nanosleep(&d, &d) && errno == EINTR)
			;
		paired_read(&t1, &n1);
		f[w] = n1 > n0 ? (uint64_t)((double)(t1 - t0) * 1e9 / (double)(n1 - n0)) : 0;
	}
	qsort(f, WINDOWS, sizeof(f[0]), cmp_u64);
	*hz = f[WINDOWS / 2];
	if (spread_ppm)
		*spread_ppm =
			*hz ? (uint32_t)((double)(f[WINDOWS - 1] - f[0]) * 1e6 / (double)*hz) : 0;
	return 0;
}

bool pmon_tsc_wants_calibration(uint64_t hz, enum pmon_tsc_source src)
{
	return !hz || pmon_tsc_source_is_derived(src);
}

void pmon_tsc_choose(uint64_t cpuid_hz, enum pmon_tsc_source cpuid_src, uint64_t cal_hz,
		     uint32_t spread_ppm, struct pmon_tsc_choice *out)
{
	memset(out, 0, sizeof(*out));
	out->cpuid_hz = cpuid_hz;
	out->cpuid_source = cpuid_hz ? cpuid_src : PMON_TSC_HZ_NONE;
	out->calibrated_hz = cal_hz;
	out->spread_ppm = cal_hz ? spread_ppm : 0;
	out->hz = cpuid_hz;
	out->source = out->cpuid_source;
	if (!cal_hz)
		return;
	if (!cpuid_hz) {
		out->hz = cal_hz;
		out->source = PMON_TSC_HZ_CALIBRATED;
		return;
	}
	out->compared = true;
	out->tolerance_ppm =
		spread_ppm > PMON_TSC_TOLERANCE_PPM ? spread_ppm : PMON_TSC_TOLERANCE_PPM;
	/* In 128 bits: no frequency difference can overflow. */
	__int128 d = ((__int128)cal_hz - (__int128)cpuid_hz) * 1000000 / (__int128)cpuid_hz;
	out->diff_ppm = d > INT64_MAX ? INT64_MAX : d < INT64_MIN ? INT64_MIN : (int64_t)d;
	/* Only a derivation yields: a reported frequency (15H:ECX, the
	 * hypervisor's) is what Linux trusts over its own calibration. */
	if (pmon_tsc_source_is_derived(cpuid_src) &&
	    (out->diff_ppm > (int64_t)out->tolerance_ppm ||
	     out->diff_ppm < -(int64_t)out->tolerance_ppm)) {
		out->hz = cal_hz;
		out->source = PMON_TSC_HZ_CALIBRATED;
	}
}

/* ---- the perf mmap page's TSC conversion --------------------------------- */

#define barrier() __asm__ __volatile__("" ::: "memory")

unsigned pmon_perf_tsc__read(const volatile struct perf_event_mmap_page *pc,
			     uint64_t (*rdtsc)(void), struct pmon_perf_tsc *out, uint64_t *tsc)
{
	unsigned retries = 0;
	uint32_t seq;
	uint64_t t;

	/* include/uapi/linux/perf_event.h: "do { seq = pc->lock; barrier();
	 * ... barrier(); } while (pc->lock != seq);" -- the kernel bumps lock
	 * before and after it rewrites the page (perf_event_update_userpage()). */
	for (;; retries++) {
		seq = pc->lock;
		barrier();
		out->cap_time = pc->cap_user_time;
		out->cap_time_zero = pc->cap_user_time_zero;
		out->cap_time_short = pc->cap_user_time_short;
		out->mult = pc->time_mult;
		out->shift = pc->time_shift;
		out->offset = pc->time_offset;
		out->zero = pc->time_zero;
		out->cycles = pc->time_cycles;
		out->mask = pc->time_mask;
		t = rdtsc ? rdtsc() : pmon_rdtsc();
		barrier();
		if (pc->lock == seq)
			break;
	}
	if (tsc)
		*tsc = t;
	return retries;
}

uint64_t pmon_perf_tsc__scale(const struct pmon_perf_tsc *c, uint64_t cyc)
{
	/* The uapi's "quot * time_mult + ((rem * time_mult) >> time_shift)"
	 * with quot = cyc >> shift, rem the low bits: equal to the 128-bit
	 * product shifted, as quot * mult << shift has no bits below shift. */
	if (c->cap_time_short)
		cyc = c->cycles + ((cyc - c->cycles) & c->mask);
	return (uint64_t)(((unsigned __int128)cyc * c->mult) >> (c->shift & 63));
}

uint64_t pmon_perf_tsc__to_ns(const struct pmon_perf_tsc *c, uint64_t cyc)
{
	return c->zero + pmon_perf_tsc__scale(c, cyc);
}

enum pmon_timebase pmon_perf_tsc__timebase(const struct pmon_perf_tsc *c, const char **why)
{
	const char *no = NULL;

	if (!c->cap_time_zero)
		no = c->cap_time
			? "the perf mmap page offers cap_user_time but no "
			  "cap_user_time_zero"
			: "the perf mmap page offers no TSC conversion (cap_user_time_zero "
			  "0: the TSC is not a stable sched_clock here)";
	else if (!c->mult)
		no = "the perf mmap page's time_mult is 0";
	else if (c->shift > 63)
		no = "the perf mmap page's time_shift is out of range";
	else if (c->cap_time_short && !c->mask)
		no = "the perf mmap page's time_mask is 0";
	if (why)
		*why = no;
	return no ? PMON_TIMEBASE_MONO : PMON_TIMEBASE_PERF;
}
