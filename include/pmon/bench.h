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
#include <pmon/cpu.h>
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
/**
 * pmon_bench_code__tools() - the assembler and linker that built an --asm
 * body, by absolute path ("/usr/bin/as, /usr/bin/ld"; never found through
 * $PATH); NULL for a shared object. Owned by @c.
 */
PMON_API const char *pmon_bench_code__tools(const struct pmon_bench_code *c);

/*
 * The core clock against the TSC, where no PMU counts core cycles (a VM):
 * the TSC ticks at a constant rate, the core at whatever clock it runs.
 * A chain of dependent `imul rax, rax` (PMON_BENCH_CLOCK_CHAIN), whose
 * latency is fixed and documented on the cores of
 * pmon_bench_clock_latency()'s table, is timed the way the body is (U and
 * 2U copies, the difference), one sample of it right after each of the
 * body's; core cycles per TSC tick = latency / (the mode of its TSC ticks
 * per imul), the mode as for the body: a sample slowed by another thread
 * on the core or by the scheduler falls anywhere above it. Not `add`: a
 * body of adds would then be calibrated by itself.
 */
#define PMON_BENCH_CLOCK_CHAIN "imul rax, rax"

struct pmon_bench_clock {
	unsigned latency; /* the chain's latency in core cycles; 0: not calibrated (->why) */
	double cycles_per_tick; /* core cycles per TSC tick: latency / ticks.mode */
	struct pmon_summary ticks; /* TSC ticks per instruction of the chain */
	/* The body's core cycles per execution sample by sample (its TSC ticks
	 * x latency / the chain's ticks of the same sample): their spread
	 * shows how much the clock and the load moved between samples. */
	struct pmon_summary cycles;
	char why[160]; /* why there is no calibration, when latency is 0 */
};

/**
 * pmon_bench_clock_latency() - the latency in core cycles of a dependent
 * `imul r64, r64` on the CPU @info decodes: 3 on Intel's cores from
 * Nehalem on (the P-cores of hybrid parts) and AMD's from Zen on; 0 for a
 * CPU the table does not know (Atom-class cores, a hybrid part's E-core by
 * its CPUID.1AH core type, Bulldozer, older parts).
 */
PMON_API unsigned pmon_bench_clock_latency(const struct pmon_cpu_info *info);

struct pmon_bench_opts {
	size_t sz;
	uint64_t iterations; /* N (default 1000) */
	unsigned samples; /* R (default 101) */
	unsigned warmup; /* untimed runs first (default 10) */
	const struct pmon_evlist *events; /* may be NULL: TSC only */
	unsigned time_limit_ms; /* stop a body when no run of it ends for this long
				 * (default 10000) */
	/* Out, where non-NULL: the core clock calibrated beside the body (the
	 * struct's comment); ->latency 0 and ->why when this CPU's imul latency
	 * is not known. The caller owns it. */
	struct pmon_bench_clock *clock;
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
 * pmon_bench_run() - measure @code, in a child process: the body may fault,
 * trap or never end without taking the caller with it.
 * Return: 0, or a negative error with the body named in the detail:
 * -EFAULT (the body was killed by a signal: SIGSEGV, SIGILL, SIGTRAP ...),
 * -ETIMEDOUT (no run of it ended within opts->time_limit_ms: an endless loop,
 * or r15 changed), -ECHILD (the body ended the process), or an event that
 * does not open, -ENOMEM.
 */
PMON_API int pmon_bench_run(const struct pmon_bench_code *code, const struct pmon_bench_opts *opts,
			    struct pmon_bench_result *out);
PMON_API void pmon_bench_result_release(struct pmon_bench_result *r);

#ifdef __cplusplus
}
#endif
#endif
