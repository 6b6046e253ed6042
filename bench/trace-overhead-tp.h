/* SPDX-License-Identifier: MIT */
/* The LTTng-UST tracepoint bench/trace-overhead.c compares pmon's hook with:
 * one integer field, as close to a trace mark as LTTng allows. */
#undef TRACEPOINT_PROVIDER
#define TRACEPOINT_PROVIDER pmonbench

#undef TRACEPOINT_INCLUDE
#define TRACEPOINT_INCLUDE "./trace-overhead-tp.h"

#if !defined(PMON_TRACE_OVERHEAD_TP_H) || defined(TRACEPOINT_HEADER_MULTI_READ)
#define PMON_TRACE_OVERHEAD_TP_H

#include <lttng/tracepoint.h>

TRACEPOINT_EVENT(pmonbench, mark, TP_ARGS(int, ch), TP_FIELDS(ctf_integer(int, ch, ch)))

#endif

#include <lttng/tracepoint-event.h>
