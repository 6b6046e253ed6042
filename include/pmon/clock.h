/* SPDX-License-Identifier: MIT */
/*
 * Timers: the TSC (frequency by calibration when CPUID enumerates none) and
 * the other clocks a Linux program can read, with their resolution, as the
 * Pentium tools note's sections 4 and 5 survey them for Windows.
 */
#ifndef PMON_CLOCK_H
#define PMON_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <pmon/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pmon_clock_res {
	const char *name; /* "CLOCK_MONOTONIC_RAW" */
	clockid_t id;
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

#ifdef __cplusplus
}
#endif
#endif
