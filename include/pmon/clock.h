/* SPDX-License-Identifier: MIT */
/*
 * Timers: the TSC (frequency by calibration when CPUID enumerates none or
 * only derives one, and the choice between the two) and
 * the other clocks a Linux program can read, with their resolution, as the
 * Pentium tools note's sections 4 and 5 survey them for Windows.
 */
#ifndef PMON_CLOCK_H
#define PMON_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <pmon/common.h>
#include <pmon/cpu.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pmon_clock_res {
	const char *name; /* "CLOCK_MONOTONIC_RAW" */
	int id; /* a clockid_t (an int on Linux): the type needs _POSIX_C_SOURCE, this header must not */
	long res_ns; /* clock_getres(); -1 when the clock is unsupported */
	const char *what; /* one-phrase description */
};

/**
 * pmon_clocks() - the POSIX clocks with their resolution.
 * @out: array of at least @max entries. Return: the number filled.
 */
PMON_API size_t pmon_clocks(struct pmon_clock_res *out, size_t max);

/**
 * pmon_clocksource() - the kernel's current clocksource ("tsc", "kvm-clock").
 * @sysfs_root: "/sys" normally; another root in tests; NULL means "/sys".
 * Return: 0, or -errno when the file cannot be read.
 */
PMON_API int pmon_clocksource(const char *sysfs_root, char *cur, size_t curlen, char *avail,
			      size_t availlen);

/**
 * pmon_tsc_calibrate() - measure the TSC frequency against CLOCK_MONOTONIC_RAW.
 * @ms:   length of each of the 5 measurement windows, in milliseconds (1..1000).
 * @hz:   the median of the windows, in Hz.
 * @spread_ppm: the max-min spread of the windows, in parts per million (may be NULL).
 * Return: 0, or -EINVAL for a bad @ms.
 */
PMON_API int pmon_tsc_calibrate(unsigned ms, uint64_t *hz, uint32_t *spread_ppm);

/*
 * How far a calibrated TSC frequency may stray from a derived CPUID figure
 * before the calibration wins. Linux warns when a CPUID/MSR frequency and
 * its HW-timer calibration differ by more than tsc_khz >> 11 (~500 ppm,
 * arch/x86/kernel/tsc.c tsc_refine_calibration_work()); pmon's 5 x 20 ms
 * calibration against CLOCK_MONOTONIC_RAW is coarser, so it allows 1000
 * ppm, or the calibration's own spread where that is larger. A derivation
 * gone wrong is far outside it: a 25 MHz crystal assumed where the part
 * runs 24 MHz is +41667 ppm.
 */
#define PMON_TSC_TOLERANCE_PPM 1000

/* Which TSC frequency pmon uses, and what it was checked against. */
struct pmon_tsc_choice {
	uint64_t hz; /* the frequency to use; 0 when there is none */
	enum pmon_tsc_source source; /* where it came from (PMON_TSC_HZ_CALIBRATED or CPUID's) */
	uint64_t cpuid_hz; /* the CPUID figure (0: none) */
	enum pmon_tsc_source cpuid_source;
	uint64_t calibrated_hz; /* 0: not calibrated */
	uint32_t spread_ppm; /* the calibration's spread */
	bool compared; /* both figures were there */
	int64_t diff_ppm; /* (calibrated - CPUID) / CPUID in ppm, when compared */
	uint32_t tolerance_ppm; /* the tolerance applied, when compared */
};

/**
 * pmon_tsc_wants_calibration() - whether the TSC should be calibrated
 * besides a CPUID figure of @hz from @src: when there is none, or it is a
 * derivation (pmon_tsc_source_is_derived()). A figure the hardware or the
 * hypervisor reports (15H:ECX, Denverton, 40000010H) is used as it is.
 */
PMON_API bool pmon_tsc_wants_calibration(uint64_t hz, enum pmon_tsc_source src);

/**
 * pmon_tsc_choose() - decide between a CPUID TSC figure and a calibration.
 * @cpuid_hz, @cpuid_src: pmon_cpu_info's tsc.hz and tsc.source (0: none).
 * @cal_hz, @spread_ppm: pmon_tsc_calibrate()'s result; 0 when not calibrated.
 * @out:  filled completely.
 *
 * The CPUID figure wins unless it is a derivation and the calibration
 * differs from it by more than max(PMON_TSC_TOLERANCE_PPM, @spread_ppm);
 * with no CPUID figure the calibration is used. Pure; thread-safe.
 */
PMON_API void pmon_tsc_choose(uint64_t cpuid_hz, enum pmon_tsc_source cpuid_src, uint64_t cal_hz,
			      uint32_t spread_ppm, struct pmon_tsc_choice *out);

struct perf_event_mmap_page;

/*
 * The perf mmap page's TSC conversion (include/uapi/linux/perf_event.h,
 * struct perf_event_mmap_page): the kernel's clock for perf records (on
 * x86 perf_clock() = local_clock(), sched_clock() from the TSC through
 * cyc2ns) as a function of the TSC. x86 offers it only when the TSC is the
 * sched_clock and stable (arch/x86/events/core.c,
 * arch_perf_update_userpage(): using_native_sched_clock() &&
 * sched_clock_stable(); cap_user_time_zero only for an event without
 * use_clockid); a guest with kvm-clock gets zeros.
 */
struct pmon_perf_tsc {
	bool cap_time; /* cap_user_time: time_mult, time_shift, time_offset */
	bool cap_time_zero; /* cap_user_time_zero: time_zero */
	bool cap_time_short; /* cap_user_time_short: time_cycles, time_mask */
	uint32_t mult;
	uint16_t shift;
	uint64_t zero, offset;
	uint64_t cycles, mask;
};

/**
 * pmon_perf_tsc__read() - copy the conversion out of the mmap page @pc
 * under its seqlock (pc->lock, re-read until unchanged, as the uapi
 * comment's loop does), reading the TSC inside the same window.
 * @rdtsc: the TSC reader; NULL: the rdtsc instruction (tests inject one).
 * @tsc:   the TSC read with this version of the page (may be NULL).
 * Return: the number of retries the seqlock cost (0: none).
 */
PMON_API unsigned pmon_perf_tsc__read(const volatile struct perf_event_mmap_page *pc,
				      uint64_t (*rdtsc)(void), struct pmon_perf_tsc *out,
				      uint64_t *tsc);

/**
 * pmon_perf_tsc__scale() - (cyc * mult) >> shift, the uapi's quot/rem form
 * computed exactly in 128 bits; with cap_time_short @cyc is first widened
 * to time_cycles + ((cyc - time_cycles) & time_mask), so a short counter
 * that wrapped past time_cycles still counts forward.
 */
PMON_API uint64_t pmon_perf_tsc__scale(const struct pmon_perf_tsc *c, uint64_t cyc);

/** pmon_perf_tsc__to_ns() - TSC @cyc on the perf clock: time_zero + scale. */
PMON_API uint64_t pmon_perf_tsc__to_ns(const struct pmon_perf_tsc *c, uint64_t cyc);

/* The time base a trace puts the hooks' TSC and the kernel's events on. */
enum pmon_timebase {
	PMON_TIMEBASE_MONO = 1, /* a calibrated TSC/CLOCK_MONOTONIC mapping */
	PMON_TIMEBASE_PERF = 2, /* the perf clock, the TSC through the mmap page */
};

/**
 * pmon_perf_tsc__timebase() - the time base @c allows: PMON_TIMEBASE_PERF
 * when the page offers cap_user_time_zero with a usable mult, else
 * PMON_TIMEBASE_MONO, with @why (may be NULL) set to a phrase saying why
 * ("the perf mmap page offers no cap_user_time_zero", ...).
 */
PMON_API enum pmon_timebase pmon_perf_tsc__timebase(const struct pmon_perf_tsc *c,
						    const char **why);

#ifdef __cplusplus
}
#endif
#endif
