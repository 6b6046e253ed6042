/* SPDX-License-Identifier: MIT */
/*
 * Instrumented regions: the seeds' PMX + RDPMC method and PmonStat, measured
 * around chosen sections of one's own code.
 *
 *     pmon_region_begin(3);  ...code...  pmon_region_end(3);
 *     PMON_REGION_BEGIN("parse");  ...  PMON_REGION_END("parse");
 *
 * Every pair records one sample: TSC ticks always, and the configured events
 * (rdpmc through the perf mmap page where the kernel allows it, else one
 * read() of a per-thread group). Each thread has its own storage: no locks
 * on the hot path; a thread's storage is folded into per-region totals and
 * freed when it exits. The cost of an empty pair is measured at set-up and
 * subtracted; the report gives per region and metric the count, exact sums,
 * and the distribution (min, median, mode, mean, stddev, p5/p95, MAD) after
 * culling anomalous samples, and says how each value was read.
 *
 * Set-up is pmon_region_init(), or, when a program calls begin without it,
 * the environment: PMON_EVENTS (event list, perf syntax), PMON_OUTPUT (report
 * file, appended; default standard error), PMON_FORMAT (table, csv, json),
 * PMON_FENCE (rdtscp, lfence, cpuid, none), PMON_WARMUP (pairs per region and
 * thread left out first); the report is then written at exit, and problems
 * with these variables are said once on standard error (see
 * pmon_region_init()). `pmon stat --regions -e ... -- ./app` sets these.
 */
#ifndef PMON_REGION_H
#define PMON_REGION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <pmon/arch.h>
#include <pmon/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Region ids 0 .. PMON_REGION_MAX - 1 are accepted by this and every later
 * libpmon; pmon_region_max() gives the running library's limit, which may be
 * higher. Nothing compiled from this header depends on the value. */
#define PMON_REGION_MAX 256

/* How the TSC is read (the seeds' CPUID/serialization discussion). */
enum pmon_fence {
	PMON_FENCE_AUTO = 0, /* rdtscp where the CPU has it, else lfence */
	PMON_FENCE_RDTSCP, /* begin: lfence;rdtsc;lfence  end: rdtscp;lfence */
	PMON_FENCE_LFENCE, /* lfence;rdtsc;lfence on both sides */
	PMON_FENCE_CPUID, /* cpuid;rdtsc on both sides: fully serializing, slow */
	PMON_FENCE_NONE, /* plain rdtsc: may be reordered with the code measured */
};

enum pmon_report_format {
	PMON_REPORT_TABLE = 0,
	PMON_REPORT_CSV,
	PMON_REPORT_JSON,
};

struct pmon_region_opts {
	size_t sz; /* sizeof(struct pmon_region_opts) */
	const char *events; /* perf-syntax list; NULL: $PMON_EVENTS; "": TSC only */
	enum pmon_fence fence; /* 0: $PMON_FENCE, else auto */
	unsigned ring; /* samples kept per region and thread (default 4096) */
	double cull_k; /* cull beyond cull_k x MAD from the median (default 5; <0: none) */
	unsigned overhead_runs; /* empty pairs measured for the overhead (default 2000) */
	const char *output; /* report file (appended); NULL: $PMON_OUTPUT, else stderr */
	enum pmon_report_format format; /* 0 with $PMON_FORMAT unset: table */
	bool report_at_exit; /* write the report from an atexit handler */
	unsigned warmup; /* first pairs of each region and thread not recorded (0: $PMON_WARMUP) */
};

/**
 * pmon_region_init() - configure regions for the whole process.
 * @opts: NULL to take everything from the environment (and report at exit).
 *
 * Opens the events for the calling thread, measures the overhead of an
 * empty pair, and registers the exit report if asked. Other threads open
 * their events on their first begin. Calling it twice is an error. A call
 * that fails leaves nothing set up: a later call with other options starts
 * afresh. Nothing is printed: errors are returned.
 *
 * Without it, the first pmon_region_begin() sets regions up from the
 * environment. That set-up has no caller to return an error to, so each
 * problem (an unknown or unopenable event in PMON_EVENTS, an unwritable
 * PMON_OUTPUT, a bad PMON_FORMAT, PMON_FENCE or PMON_WARMUP) is said once on
 * standard error as "pmon: regions: ...; what is done instead", and the set-up
 * goes on with what works: the TSC at least, the report on standard error.
 *
 * After fork() the child starts with no samples and opens its own counters
 * on its first begin; the settings and the measured overhead are kept.
 * Return: 0, or a negative error (pmon_errdetail() names the event or value).
 */
PMON_API int pmon_region_init(const struct pmon_region_opts *opts);

/** pmon_region_max() - the number of region ids this libpmon accepts
 * (ids 0 .. pmon_region_max() - 1; at least PMON_REGION_MAX). */
PMON_API unsigned pmon_region_max(void);

/** pmon_region_id() - the id of region @name, assigning one on first use
 * (thread safe, takes a lock: cache it, as PMON_REGION_BEGIN() does).
 * Return: id, -ENOSPC when every id is taken, -EINVAL for NULL. */
PMON_API int pmon_region_id(const char *name);

/** pmon_region_name() - name region @id (for reports). Return: 0 or -EINVAL. */
PMON_API int pmon_region_name(unsigned id, const char *name);

/**
 * pmon_region_report() - write the summary of every region so far.
 * @f: NULL: the configured output. Thread safe with respect to running
 * regions only at quiescent points (samples being written may be missed).
 * Return: 0 or -errno.
 */
PMON_API int pmon_region_report(FILE *f, enum pmon_report_format fmt);

/** pmon_region_reset() - drop every sample so far (the overhead stays). */
PMON_API void pmon_region_reset(void);

/* ---- event sweep: more events than counters, in counter-sized batches ---- */

struct pmon_sweep_opts {
	size_t sz;
	const char *events; /* perf-syntax list, any length */
	unsigned batch; /* events per batch (default: the CPU's GP counters, else 4) */
	unsigned reps; /* calls of the function per batch (default 100) */
	double cull_k; /* as for regions */
};

/**
 * pmon_region_sweep() - call @fn @reps times per batch of events, measuring
 * each call, until every event of the list was measured ("automates looping
 * a code segment through all the performance events"), and write one row
 * per event to @f in @fmt. Return: 0 or a negative error.
 */
PMON_API int pmon_region_sweep(const struct pmon_sweep_opts *opts, void (*fn)(void *arg), void *arg,
			       FILE *f, enum pmon_report_format fmt);

/* ---- the hot path: private, not part of the API or ABI ----------------
 * Everything below named pmon__ is the library's business: it may change in
 * any release and is not documented. Programs compiled against this header
 * depend only on the first fields of struct pmon__rthread, which every
 * libpmon keeps, and take the number of ids, the size of a slot and the
 * number of events from the running library at their first begin: a
 * library built with other limits does not break compiled programs. */

/* A region's slot: these two, then the events at begin (the library's nev
 * of them, pmon__rslot_v0()). Not a flexible array member, which ISO C++
 * has not: the layout is the same. */
struct pmon__rslot {
	uint64_t t0; /* TSC at begin */
	uint64_t open; /* begin seen, end not yet */
};

static inline uint64_t *pmon__rslot_v0(struct pmon__rslot *s)
{
	return (uint64_t *)(void *)(s + 1);
}

struct pmon__rthread {
	unsigned char *slot; /* slot of id i at slot + i * stride */
	uint32_t stride; /* bytes from one slot to the next */
	uint32_t nslot; /* ids accepted: 0 .. nslot - 1 (the last is the library's own) */
	uint32_t nev; /* events read per pair on this thread */
	uint32_t fence; /* enum pmon_fence, resolved (never AUTO) */
	/* the library's private fields follow in its allocation */
};

extern PMON_API __thread struct pmon__rthread *pmon__rt __attribute__((tls_model("initial-exec")));

PMON_API struct pmon__rthread *pmon__region_thread(void);
PMON_API void pmon__region_read(struct pmon__rthread *t, uint64_t *v);
PMON_API void pmon__region_end(struct pmon__rthread *t, unsigned id, uint64_t t1);

static inline uint64_t pmon__tsc_begin(uint32_t f)
{
	uint64_t t;

	switch (f) {
	case PMON_FENCE_CPUID:
		pmon_serialize();
		return pmon_rdtsc();
	case PMON_FENCE_NONE:
		return pmon_rdtsc();
	default: /* RDTSCP and LFENCE: nothing before may still run, nothing after starts */
		pmon_lfence();
		t = pmon_rdtsc();
		pmon_lfence();
		return t;
	}
}

static inline uint64_t pmon__tsc_end(uint32_t f)
{
	uint64_t t;

	switch (f) {
	case PMON_FENCE_RDTSCP:
		t = pmon_rdtscp(NULL); /* waits for the code measured */
		pmon_lfence();
		return t;
	case PMON_FENCE_CPUID:
		pmon_serialize();
		return pmon_rdtsc();
	case PMON_FENCE_NONE:
		return pmon_rdtsc();
	default:
		pmon_lfence();
		t = pmon_rdtsc();
		pmon_lfence();
		return t;
	}
}

/** pmon_region_begin() - start region @id on this thread. Ids the library
 * does not accept (>= pmon_region_max()) are ignored. Not async-signal
 * safe, nor is any region call: a thread's first one allocates its state
 * and takes the runtime's lock, an end reads counters and may allocate its
 * sample ring, and a pair run in a handler that interrupted a begin or end
 * of the same thread would corrupt that thread's slot. Never call them from
 * a signal handler (trace hooks may be: pmon/trace.h). */
static inline void pmon_region_begin(unsigned id)
{
	struct pmon__rthread *t = pmon__rt;
	struct pmon__rslot *s;

	if (__builtin_expect(!t, 0)) {
		t = pmon__region_thread();
		if (!t)
			return;
	}
	/* id nslot - 1 is the library's own (the overhead measurement takes
	 * this very path): accepted, never reported. */
	if (__builtin_expect(id >= t->nslot, 0))
		return;
	s = (struct pmon__rslot *)(void *)(t->slot + (size_t)id * t->stride);
	/* Events first, the TSC last: the TSC interval excludes the event read. */
	if (t->nev)
		pmon__region_read(t, pmon__rslot_v0(s));
	s->open = 1;
	s->t0 = pmon__tsc_begin(t->fence);
}

/** pmon_region_end() - end region @id and record the sample. */
static inline void pmon_region_end(unsigned id)
{
	struct pmon__rthread *t = pmon__rt;

	/* The TSC first; the library then reads the events and records. */
	if (__builtin_expect(t != NULL && id < t->nslot, 1))
		pmon__region_end(t, id, pmon__tsc_end(t->fence));
}

/* The id of a call site's region, looked up once into the site's static,
 * then @fn(id). Several threads may race to fill it: each stores the same
 * value (pmon_region_id() returns one id per name), so relaxed atomics
 * suffice; a failure (-ENOSPC) is cached too, and makes begin and end
 * ignore the site. A statement, in ISO C and C++ (a block with the site's
 * static, no statement expression). */
#define PMON__REGION_SITE(name, fn)                                                                \
	do {                                                                                       \
		static int pmon__id_ = -1;                                                         \
		int pmon__i_ = __atomic_load_n(&pmon__id_, __ATOMIC_RELAXED);                      \
		if (__builtin_expect(pmon__i_ == -1, 0)) {                                         \
			pmon__i_ = pmon_region_id(name);                                           \
			__atomic_store_n(&pmon__id_, pmon__i_, __ATOMIC_RELAXED);                  \
		}                                                                                  \
		fn((unsigned)pmon__i_);                                                            \
	} while (0)

/* By name; the id is looked up once per call site. */
#define PMON_REGION_BEGIN(name) PMON__REGION_SITE(name, pmon_region_begin)
#define PMON_REGION_END(name) PMON__REGION_SITE(name, pmon_region_end)

#ifdef __cplusplus
}
#endif
#endif
