// SPDX-License-Identifier: MIT
/*
 * pmon_strerror() and the per-thread error detail (lib/internal.h). The
 * library reports, the caller decides what to print.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include <pmon/pmon.h>

static __thread char detail[512];

static const char *const pmon_errstr[] = {
	[PMON_ERRNO__PARSE - PMON_ERRNO__START] = "malformed input",
	[PMON_ERRNO__NOT_ENUMERATED - PMON_ERRNO__START] = "CPUID leaf not enumerated",
	[PMON_ERRNO__RDPMC_RULE - PMON_ERRNO__START] = "invalid RDPMC counter encoding",
	[PMON_ERRNO__RDPMC_UNKNOWN - PMON_ERRNO__START] = "RDPMC validity unknown",
	[PMON_ERRNO__NO_PMU - PMON_ERRNO__START] = "no hardware PMU exposed",
	[PMON_ERRNO__PARANOID - PMON_ERRNO__START] = "forbidden by perf_event_paranoid",
	[PMON_ERRNO__UNSUPPORTED - PMON_ERRNO__START] = "not supported here",
	[PMON_ERRNO__EVENT_UNKNOWN - PMON_ERRNO__START] = "unknown event",
	[PMON_ERRNO__EVENT_SYNTAX - PMON_ERRNO__START] = "malformed event",
	[PMON_ERRNO__PMU_MISSING - PMON_ERRNO__START] = "the event's PMU is absent here",
};

const char *pmon_strerror(int err)
{
	if (err < 0)
		err = -err;
	if (err >= PMON_ERRNO__START && err < PMON_ERRNO__END)
		return pmon_errstr[err - PMON_ERRNO__START];
	if (err == 0)
		return "success";
	/* strerror() is not thread safe in general; glibc's strerrordesc_np is. */
	const char *s = strerrordesc_np(err);
	return s ? s : "unknown error";
}

const char *pmon_errdetail(void)
{
	return detail;
}

void pmon__clear_detail(void)
{
	detail[0] = '\0';
}

void pmon__detail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
}

int pmon__err(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	return err;
}

const char *pmon_version(void)
{
	return PMON_VERSION_STRING;
}
