/* SPDX-License-Identifier: MIT */
/*
 * Trace hooks, the Soft Logic Analyzer's "invasive hooks" (the Pentium tools
 * note): calls a program makes to time-stamp what it does on named
 * channels — spans (begin/end), instants (mark) and counter values — with
 * the TSC, into per-thread lock-free buffers that a background thread of
 * libpmon drains into a crash-safe file (docs/trace.md). A full buffer never
 * blocks the program: the hook is dropped and counted, per thread.
 *
 *     pmon_trace_start(&(struct pmon_trace_opts){ .sz = sizeof(o), .path = "t.trace" });
 *     PMON_TRACE_BEGIN("decode");  ...  PMON_TRACE_END("decode");
 *     PMON_TRACE_MARK("frame");    PMON_TRACE_COUNTER("queue", depth);
 *
 * Or let `pmon trace -o FILE -- ./prog` start it: tracing starts by itself
 * in a program linked with libpmon when PMON_TRACE names a file. Without a
 * started trace every hook returns at once.
 *
 * Signals: the hooks (and pmon_trace_channel(), which the macros call once
 * per call site) are async-signal-safe: no lock, no allocation (a thread's
 * first hook maps its buffer with mmap), errno kept. A hook run inside
 * another hook of the same thread (by a signal handler) is dropped and
 * counted, so every hook called is either recorded or counted as dropped.
 * pmon_trace_start(), pmon_trace_stop() and the readers are not
 * async-signal-safe; neither is the region API (pmon/region.h).
 *
 * Reading: pmon_trace_reader__open() and the summaries below; `pmon trace
 * report` prints them.
 */
#ifndef PMON_TRACE_H
#define PMON_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <pmon/clock.h>
#include <pmon/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pmon_trace_opts {
	size_t sz; /* sizeof(struct pmon_trace_opts) */
	const char *path; /* the file to write; NULL: $PMON_TRACE */
	size_t buffer_records; /* per thread, rounded up to a power of two; 0: 65536 */
	unsigned flush_ms; /* how often the writer drains the buffers; 0: 20 */
	/* The timestamp source; NULL: the TSC. Tests give a fake clock, with
	 * @ticks_per_sec its rate. */
	uint64_t (*clock)(void);
	uint64_t ticks_per_sec;
};

/**
 * pmon_trace_start() - start tracing to @o->path (created 0600, replaced
 * if it exists): starts the writer thread, which writes the header.
 * Return: 0; -EALREADY when a trace runs; -errno (detail set) when the file
 * cannot be created.
 */
PMON_API int pmon_trace_start(const struct pmon_trace_opts *o);
/**
 * pmon_trace_stop() - drain every buffer, write the trailer (the final
 * TSC/CLOCK_MONOTONIC pair and the drop counts) and close the file. Called
 * at exit for a trace that was started. Return: 0 or -errno of a write.
 */
PMON_API int pmon_trace_stop(void);

/**
 * pmon_trace_channel() - the id of channel @name (interned; the same name
 * gives the same id). Lock-free and async-signal-safe. Return: the id
 * (>= 1), or 0 when the table is full (4095 channels, or 1 MiB of names)
 * or @name is empty: hooks on channel 0 are ignored.
 */
PMON_API uint32_t pmon_trace_channel(const char *name);

/* The hooks: one TSC read and one 16-byte store into this thread's buffer.
 * Thread-safe and async-signal-safe (see above); a full buffer, or a hook
 * nested in one of the same thread, drops the hook and counts it. */
PMON_API void pmon_trace_begin(uint32_t channel);
PMON_API void pmon_trace_end(uint32_t channel);
PMON_API void pmon_trace_mark(uint32_t channel);
PMON_API void pmon_trace_counter(uint32_t channel, int64_t value);

/* Per call site: the channel is interned once, then cached. */
#define PMON__TRACE_ID(name)                                                                       \
	__extension__({                                                                            \
		static uint32_t pmon__tr_id;                                                       \
		uint32_t pmon__i = __atomic_load_n(&pmon__tr_id, __ATOMIC_RELAXED);                \
		if (!pmon__i)                                                                      \
			__atomic_store_n(&pmon__tr_id, pmon__i = pmon_trace_channel(name),         \
					 __ATOMIC_RELAXED);                                        \
		pmon__i;                                                                           \
	})
#define PMON_TRACE_BEGIN(name) pmon_trace_begin(PMON__TRACE_ID(name))
#define PMON_TRACE_END(name) pmon_trace_end(PMON__TRACE_ID(name))
#define PMON_TRACE_MARK(name) pmon_trace_mark(PMON__TRACE_ID(name))
#define PMON_TRACE_COUNTER(name, v) pmon_trace_counter(PMON__TRACE_ID(name), (v))

/* ---- kernel events (the "non-invasive hooks") ---------------------------- */

struct pmon_target;
struct pmon_open_opts;

/* A group of kernel events -e names (pmon_trace_kernel_opts.groups). */
struct pmon_trace_kernel_group {
	const char *name; /* "sched" */
	const char *events; /* what it records: "sched:sched_switch, ..." */
	const char *what; /* one line: what it shows in the trace */
};

/**
 * pmon_trace_kernel_groups() - the groups of kernel events there are, in a
 * static table. Return: the table, its length in *@n.
 */
PMON_API const struct pmon_trace_kernel_group *pmon_trace_kernel_groups(size_t *n);

/**
 * pmon_trace_kernel_probe() - can group @name be named on this machine: do
 * its tracepoints exist (under @tracefs_root; NULL: /sys/kernel/tracing,
 * mounted if root)? Rights are not checked: opening is.
 * Return: 0, -EINVAL for an unknown group, or -ENOENT (detail: the first
 * event missing, and why).
 */
PMON_API int pmon_trace_kernel_probe(const char *name, const char *tracefs_root);

struct pmon_trace_kernel_opts {
	size_t sz; /* sizeof(struct pmon_trace_kernel_opts) */
	/* Comma-separated groups: sched (sched_switch, sched_wakeup, and the
	 * off-CPU spans of PERF_RECORD_SWITCH), syscalls (raw_syscalls), faults
	 * (the page-faults software event with the address), irq (hard
	 * interrupts), softirq (soft interrupts), block
	 * (block_rq_issue/complete), kvm (kvm_exit),
	 * or "all". NULL: "sched,syscalls". */
	const char *groups;
	unsigned pages; /* ring pages per CPU, a power of two; 0: 128 */
	const char *tracefs_root; /* NULL: /sys/kernel/tracing (mounted if root) */
	int32_t pid; /* the header's pid and command when no program writes one */
	const char *command;
	/* How the events open on the target (inherit, enable_on_exec for a
	 * command; start_disabled is implied). NULL: neither. */
	const struct pmon_open_opts *open;
};

struct pmon_trace_kernel;

/**
 * pmon_trace_kernel__open() - record the kernel events of @o->groups for
 * @target (a command's pid, with inherit and enable_on_exec in @o->open, as
 * stat and record open it; processes, each with all its threads; or system-wide,
 * every task on every CPU) through perf rings, stamped with the perf clock
 * where the perf mmap page converts the TSC to it, else CLOCK_MONOTONIC
 * (the base and the alignment measured go in the file's TCLK chunk), into
 * the trace file @path (created 0600, never through a link; merge it into
 * the program's own trace with pmon_trace_merge(); on failure @path is left
 * for the caller to remove: pmon trace names a temporary of its own,
 * pmon/output.h). An event this machine lacks, or may not open
 * (no tracefs, not root, no KVM), is skipped and named in
 * pmon_trace_kernel__skipped(); only when nothing is left is it an error.
 * Return: 0, or -errno (detail says why).
 */
PMON_API int pmon_trace_kernel__open(const struct pmon_target *target, const char *path,
				     const struct pmon_trace_kernel_opts *o,
				     struct pmon_trace_kernel **out);
/** What was skipped and why ("irq: ...; kvm: ..."), or "". Owned by @k. */
PMON_API const char *pmon_trace_kernel__skipped(const struct pmon_trace_kernel *k);
/** Wait up to @timeout_ms for records. Return: > 0 ready, 0 timeout, -errno. */
PMON_API int pmon_trace_kernel__poll(struct pmon_trace_kernel *k, int timeout_ms);
/** Move what the rings hold into the file. Return: records written, or -errno. */
PMON_API long pmon_trace_kernel__drain(struct pmon_trace_kernel *k);
/**
 * pmon_trace_kernel__close() - stop, drain, write the trailer and close the
 * file; frees @k (NULL is fine). @events, @lost: what was written to the
 * file, and what was not: lost by the kernel's rings, or read after a write
 * failed (a full disk) (may be NULL). Return: 0 or -errno.
 */
PMON_API int pmon_trace_kernel__close(struct pmon_trace_kernel *k, uint64_t *events,
				      uint64_t *lost);
/**
 * pmon_trace_merge() - append the chunks of trace file @from (kernel
 * events) to trace file @into and remove @from; where @into holds no trace
 * (the program was not linked with libpmon: absent or empty) @from is
 * renamed to @into, which must then be absent or a regular file: a device,
 * FIFO or link at @into is refused (-EINVAL), never replaced.
 * Return: 0 or -errno (detail names the file).
 */
PMON_API int pmon_trace_merge(const char *into, const char *from);

/* ---- reading ------------------------------------------------------------ */

enum pmon_trace_kind {
	PMON_TRACE_BEGIN_EV = 1,
	PMON_TRACE_END_EV = 2,
	PMON_TRACE_MARK_EV = 3,
	PMON_TRACE_COUNTER_EV = 4,
};

struct pmon_trace_event {
	uint64_t tick; /* raw timestamp */
	uint64_t ns; /* since the trace began (on pmon_trace_info.time_base) */
	int32_t tid;
	uint32_t channel;
	enum pmon_trace_kind kind;
	int64_t value; /* counters; a kernel event's first argument */
	uint64_t seq; /* order in the file: events of equal time keep it */
	/* Kernel events (PMON_TRACE_EV_KERNEL): @tick is ns on the time base,
	 * @cpu where it happened, @arg its second argument (see docs/trace.md). */
	uint32_t flags;
	int32_t cpu; /* -1 for hooks */
	int64_t arg;
};

#define PMON_TRACE_EV_KERNEL 1u

struct pmon_trace_info {
	size_t sz;
	int32_t pid;
	char command[256];
	uint64_t ticks_per_sec; /* from the start/stop pairs, else the calibration */
	uint64_t mono_start_ns; /* CLOCK_MONOTONIC at the first pair */
	uint32_t align_err_ns; /* half the widest bracket of a TSC/clock pair */
	bool complete; /* the trailer is there (the program stopped the trace) */
	uint64_t dropped; /* hooks dropped because a buffer was full */
	uint64_t chunks, torn_chunks, torn_bytes; /* damaged chunks skipped */
	uint64_t kernel_events, kernel_lost; /* recorded, and lost by the kernel's rings */
	/* The time base of every event's ns (docs/trace.md "Time"): the perf
	 * clock (the hooks' TSC through the perf mmap page's conversion, the
	 * kernel's stamps as they are) or CLOCK_MONOTONIC (the hooks' TSC
	 * through the calibrated pairs); in the first case mono_start_ns is on
	 * the perf clock. */
	enum pmon_timebase time_base;
	char time_base_why[160]; /* CLOCK_MONOTONIC: why not the perf clock; "" */
	char clocksource[32]; /* the kernel's when the kernel events opened; "" */
	uint32_t time_mult; /* the page's conversion (the perf clock) */
	uint16_t time_shift;
	/* The kernel's stamps against the hooks' TSC on that base, measured
	 * when the kernel events opened (a system call's or a page fault's
	 * stamp between two TSC reads); UINT32_MAX when not measured (no kernel events, an older
	 * file, or no perf event to measure with). */
	uint32_t kernel_align_ns;
	char align_measured_with[32]; /* the kernel event it was measured on */
};

struct pmon_trace_reader;

/**
 * pmon_trace_reader__open() - read the trace file @path: every complete
 * chunk is checked (CRC-32) and a damaged one skipped, reading on at the
 * next valid chunk; events come out in time order.
 * Return: the reader, or NULL with errno (detail names the file and why).
 */
PMON_API struct pmon_trace_reader *pmon_trace_reader__open(const char *path);
/** As pmon_trace_reader__open(), over @size bytes at @buf (@name for messages). */
PMON_API struct pmon_trace_reader *pmon_trace_reader__open_mem(const void *buf, size_t size,
							       const char *name);
PMON_API void pmon_trace_reader__free(struct pmon_trace_reader *r);
PMON_API const struct pmon_trace_info *pmon_trace_reader__info(const struct pmon_trace_reader *r);
/** Events in time order (ties keep file order). */
PMON_API size_t pmon_trace_reader__nevents(const struct pmon_trace_reader *r);
PMON_API const struct pmon_trace_event *pmon_trace_reader__event(const struct pmon_trace_reader *r,
								 size_t i);
/** Channel names: ids 1..nchannels; NULL for an id never named. */
PMON_API size_t pmon_trace_reader__nchannels(const struct pmon_trace_reader *r);
PMON_API const char *pmon_trace_reader__channel(const struct pmon_trace_reader *r, uint32_t id);
/** Whether channel @id holds kernel events (sched_switch, sys_read, ...). */
PMON_API bool pmon_trace_reader__channel_kernel(const struct pmon_trace_reader *r, uint32_t id);

/* Per channel, over [from_ns, to_ns): spans (begin/end pairs on one thread,
 * nested allowed), instants and counter values. */
struct pmon_trace_chan_stats {
	uint32_t channel;
	uint64_t spans, marks, counters;
	uint64_t unmatched; /* ends without a begin, begins never ended */
	/* span durations (ns): */
	uint64_t min_ns, median_ns, p99_ns, max_ns, total_ns;
	int64_t counter_min, counter_max, counter_last;
};

/**
 * pmon_trace_summarize() - the delta-time table: one row per channel that
 * has an event in the window. @out: array of nchannels entries.
 * Return: rows filled, or -ENOMEM.
 */
PMON_API long pmon_trace_summarize(const struct pmon_trace_reader *r, uint64_t from_ns,
				   uint64_t to_ns, struct pmon_trace_chan_stats *out);

/**
 * pmon_trace_write_chrome() - the trace as Chrome trace-event JSON (ph B/E/i/C,
 * timestamps in microseconds), which Perfetto, chrome://tracing and
 * speedscope open. Return: 0 or -errno of a write.
 */
PMON_API int pmon_trace_write_chrome(const struct pmon_trace_reader *r, FILE *out);

/**
 * pmon_trace_write_perfetto() - the trace in Perfetto's protobuf format
 * (ui.perfetto.dev, trace_processor), streamed: a track per thread with its
 * spans and instants, a counter track per counter channel, names interned.
 * Timestamps are CLOCK_MONOTONIC nanoseconds. Return: 0 or -errno.
 */
PMON_API int pmon_trace_write_perfetto(const struct pmon_trace_reader *r, FILE *out);

/**
 * pmon_trace_ticks_row() - the logic-analyzer view of one channel: @width
 * cells over [from_ns, to_ns), '#' where a span of the channel is active,
 * '|' where an instant or counter falls, '.' idle. @row gets width+1 bytes.
 */
PMON_API void pmon_trace_ticks_row(const struct pmon_trace_reader *r, uint32_t channel,
				   uint64_t from_ns, uint64_t to_ns, char *row, size_t width);

#ifdef __cplusplus
}
#endif
#endif
