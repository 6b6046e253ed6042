/* SPDX-License-Identifier: MIT */
/*
 * Microbenchmarks in the spirit of the seeds' RDTSC method and nanoBench:
 * a body of code is run unrolled U times and 2U times inside a loop of N
 * iterations, both timed, and the difference divided by U x N, so that the
 * loop, the call and the reads cancel out. Each of R samples gives one
 * per-iteration value; the result is their distribution (median, mode ...).
 *
 * Assembly bodies are Intel syntax, assembled with the GNU assembler and
 * linked with ld. In the body, r15 is the loop counter and must not be
 * changed; r14 points to 4 KiB of scratch memory; rsp must be kept. Other
 * registers may be used freely (the callee-saved ones are saved around).
 */
#ifndef PMON_BENCH_H
#define PMON_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pmon/common.h>
#include <pmon/event.h>
#include <pmon/stats.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PMON_BENCH_MAX_EVENTS 16

/* A loaded body: fn(iterations, scratch) runs the body U times per iteration. */
typedef void (*pmon_bench_fn)(uint64_t iterations, void *scratch);

struct pmon_bench_code;

/**
 * pmon_bench_code__asm() - assemble @body unrolled @unroll and 2 x @unroll times.
 * Return: 0 with *@out set, or a negative error; for code the assembler
 * rejects, -PMON_ERRNO__PARSE with the assembler's message in the detail.
 */
PMON_API int pmon_bench_code__asm(const char *body, unsigned unroll, struct pmon_bench_code **out);
/**
 * pmon_bench_code__so() - a C function `void f(void)` from a shared object,
 * called @unroll and 2 x @unroll times per iteration.
 */
PMON_API int pmon_bench_code__so(const char *path, const char *function, unsigned unroll,
				 struct pmon_bench_code **out);
PMON_API void pmon_bench_code__free(struct pmon_bench_code *c);

struct pmon_bench_opts {
	size_t sz;
	uint64_t iterations; /* N (default 1000) */
	unsigned samples; /* R (default 101) */
	unsigned warmup; /* untimed runs first (default 10) */
	const struct pmon_evlist *events; /* may be NULL: TSC only */
};

struct pmon_bench_result {
	unsigned unroll;
	uint64_t iterations;
	struct pmon_summary tsc; /* TSC ticks per body execution (values rounded to 0.01,
				       * so that the mode is meaningful) */
	size_t nevents;
	struct pmon_summary *events; /* per event, per body execution; owned, free with __release */
	bool via_rdpmc;
};

/**
 * pmon_bench_run() - measure @code.
 * Return: 0, or a negative error (an event that does not open, ENOMEM).
 */
PMON_API int pmon_bench_run(const struct pmon_bench_code *code, const struct pmon_bench_opts *opts,
			    struct pmon_bench_result *out);
PMON_API void pmon_bench_result_release(struct pmon_bench_result *r);

#ifdef __cplusplus
}
#endif
#endif
