/* SPDX-License-Identifier: MIT */
/*
 * Errors of libpmon. Functions return 0 or a negative error: either a
 * negated errno value or a negated pmon code below. Constructors (the
 * functions that return a new object: pmon_X__new(), __open(), __start())
 * return the object, or NULL with errno set to the same positive value, as
 * libbpf 1.0 does; their objects are freed by the matching __free(),
 * __close() or __remove(), which accept NULL. The library never prints;
 * it keeps a per-thread detail string (which file and line, which rule, which
 * sysfs knob) that the caller can show with pmon_errdetail().
 */
#ifndef PMON_ERROR_H
#define PMON_ERROR_H

#include <pmon/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* pmon's own codes, above the errno range. Append only: the values are ABI. */
enum pmon_errno {
	PMON_ERRNO__START = 4000,
	PMON_ERRNO__PARSE = PMON_ERRNO__START, /* malformed input text */
	PMON_ERRNO__NOT_ENUMERATED, /* CPUID leaf beyond the maximum leaf */
	PMON_ERRNO__RDPMC_RULE, /* an RDPMC ECX value breaks an SDM rule */
	PMON_ERRNO__RDPMC_UNKNOWN, /* validity depends on an unreadable MSR */
	PMON_ERRNO__NO_PMU, /* no hardware PMU is exposed */
	PMON_ERRNO__PARANOID, /* perf_event_paranoid forbids it */
	PMON_ERRNO__UNSUPPORTED, /* this machine or kernel lacks it */
	PMON_ERRNO__EVENT_UNKNOWN, /* no event has that name */
	PMON_ERRNO__EVENT_SYNTAX, /* bad modifier, raw value or PMU term */
	PMON_ERRNO__PMU_MISSING, /* a known event of a PMU this machine lacks */
	PMON_ERRNO__END,
};

/**
 * pmon_strerror() - a short text for an error code.
 * @err: a value returned by a libpmon function, negative or positive.
 *
 * Return: a static string; never NULL. Thread safe.
 */
PMON_API const char *pmon_strerror(int err);

/**
 * pmon_errdetail() - the detail of the last failure in this thread.
 *
 * Return: a thread-local string such as "dump.txt:7: expected 4 registers",
 * or "" when the last failing call left none. Valid until the next libpmon
 * call in the same thread.
 */
PMON_API const char *pmon_errdetail(void);

#ifdef __cplusplus
}
#endif
#endif
