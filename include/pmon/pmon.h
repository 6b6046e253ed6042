/* SPDX-License-Identifier: MIT */
/*
 * libpmon: hardware performance monitoring for Linux x86-64.
 * This header includes every public header of the library.
 */
#ifndef PMON_PMON_H
#define PMON_PMON_H

#include <pmon/common.h>
#include <pmon/error.h>
#include <pmon/arch.h>
#include <pmon/cpu.h>
#include <pmon/rdpmc.h>
#include <pmon/p5.h>
#include <pmon/clock.h>
#include <pmon/kernel.h>
#include <pmon/event.h>
#include <pmon/counter.h>
#include <pmon/monitor.h>
#include <pmon/collect.h>
#include <pmon/stats.h>
#include <pmon/region.h>
#include <pmon/bench.h>
#include <pmon/msr.h>
#include <pmon/rdt.h>
#include <pmon/plot.h>
#include <pmon/sample.h>
#include <pmon/trace.h>
#include <pmon/sim.h>
#include <pmon/output.h>
#include <pmon/spawn.h>

#ifdef __cplusplus
extern "C" {
#endif

/** pmon_version() - the library's version, "MAJOR.MINOR.PATCH". */
PMON_API const char *pmon_version(void);

#ifdef __cplusplus
}
#endif
#endif
