/* SPDX-License-Identifier: MIT */
/*
 * Simulated events (VTune's Dynamic Analyzer, issue #17): the cache geometry
 * a simulator needs, decoded from CPUID (leaf 4, AMD 8000001DH, or AMD's
 * older 80000005H/80000006H); a bounds-checked parser of callgrind's output
 * format; and its conversion into a pmon recording whose samples carry the
 * exact simulated count of each instruction as their period
 * (docs/simulate.md). Pure: nothing here runs the engine.
 */
#ifndef PMON_SIM_H
#define PMON_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pmon/common.h>
#include <pmon/cpu.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One cache as a simulator takes it (valgrind's --I1/--D1/--LL). */
struct pmon_cache_geom {
	uint64_t size; /* bytes */
	unsigned assoc; /* ways */
	unsigned line; /* bytes */
};

struct pmon_sim_caches {
	struct pmon_cache_geom i1, d1, ll;
	unsigned ll_level; /* the level the LL geometry came from (2, 3...) */
	/* The enumerated LL associativity where its set count was not a power of
	 * two (a 30 MiB 12-way L3) and ->ll.assoc was raised to make it one,
	 * size and line kept; 0 when unchanged. */
	unsigned ll_assoc_enumerated;
	const char *source; /* "CPUID leaf 4", "CPUID 8000001DH", "CPUID 80000005H/80000006H" */
};

/**
 * pmon_sim_caches_from_cpuid() - the L1 instruction, L1 data and last-level
 * caches of @c: Intel's deterministic cache parameters leaf 4 (SDM Vol. 2A,
 * CPUID "Deterministic Cache Parameters Leaf"), AMD's 8000001DH with the
 * same layout (APM Vol. 3, E.4.15), else AMD's 80000005H (L1) and
 * 80000006H (L2/L3, associativity as the APM's encoded field). Pure.
 * Return: 0; -ENOENT (detail says which cache is missing) when @c
 * enumerates none of these.
 */
PMON_API int pmon_sim_caches_from_cpuid(const struct pmon_cpuid *c, struct pmon_sim_caches *out);

/**
 * pmon_cache_geom__parse() - "SIZE,ASSOC,LINE" with SIZE in bytes or with a
 * K/M/G suffix (powers of 1024): "48K,12,64". Then checked as
 * pmon_cache_geom__check() does. Return: 0 or -EINVAL (detail says why).
 */
PMON_API int pmon_cache_geom__parse(const char *s, struct pmon_cache_geom *out);
/**
 * pmon_cache_geom__check() - what a set-associative simulator can model:
 * nothing zero, the line a power of two of at least 16 bytes, the size a
 * multiple of assoc * line, the set count a power of two, the size larger
 * than a line. Return: 0 or -EINVAL (detail says why).
 */
PMON_API int pmon_cache_geom__check(const struct pmon_cache_geom *g);

/* ---- the simulated events ------------------------------------------ */

struct pmon_sim_event {
	const char *name; /* pmon's: "sim/L1-dcache-load-misses/" */
	const char *engine; /* callgrind's events it sums: "ILmr+DLmr" */
	const char *desc;
	bool branch; /* needs --branch-sim */
};

/** The table of simulated events. Return: how many; *@out the table. */
PMON_API size_t pmon_sim_events(const struct pmon_sim_event **out);
/**
 * pmon_sim_event__find() - an event by pmon's name ("sim/instructions/",
 * with or without "sim/" and the trailing slash) or by the engine's
 * ("Ir", "D1mr", "ILmr+DLmr"). Return: its index, or
 * -PMON_ERRNO__EVENT_UNKNOWN.
 */
PMON_API int pmon_sim_event__find(const char *name);

/* ---- callgrind's output format ----------------------------------- */

struct pmon_callgrind;

/* The self cost of one instruction of one object (what callgrind wrote
 * with --dump-instr=yes). */
struct pmon_callgrind_cost {
	const char *obj; /* "ob=" name: a path, or "???" */
	const char *fn; /* "fn=" name */
	uint64_t addr; /* as written: the ELF address in @obj (valgrind subtracts
			* the object's text bias), absolute for "???" */
	const uint64_t *v; /* one count per event (pmon_callgrind__event()) */
};

/**
 * pmon_callgrind__parse() - parse one callgrind output file held in @buf
 * (not NUL-terminated; @len bytes): the "events:" header, name compression
 * "(id) name", positions "instr line" with relative subpositions
 * ("+N", "-N", "*"), ob/fl/fi/fe/fn and cob/cfi/cfn/calls lines. The cost
 * line after "calls=" is the call's inclusive cost and is not self cost.
 * Costs of the same (object, address) are summed. @name names the input in
 * errors. Return: 0, or -PMON_ERRNO__PARSE ("NAME:LINE: why") or -ENOMEM.
 */
PMON_API int pmon_callgrind__parse(const char *buf, size_t len, const char *name,
				   struct pmon_callgrind **out);
PMON_API void pmon_callgrind__free(struct pmon_callgrind *cg);
PMON_API size_t pmon_callgrind__nevents(const struct pmon_callgrind *cg);
PMON_API const char *pmon_callgrind__event(const struct pmon_callgrind *cg, size_t i);
/** The process id of the "pid:" line (0 if none) and the "cmd:" line ("" if none). */
PMON_API uint32_t pmon_callgrind__pid(const struct pmon_callgrind *cg);
PMON_API const char *pmon_callgrind__cmd(const struct pmon_callgrind *cg);
PMON_API size_t pmon_callgrind__ncosts(const struct pmon_callgrind *cg);
PMON_API void pmon_callgrind__cost(const struct pmon_callgrind *cg, size_t i,
				   struct pmon_callgrind_cost *out);
/**
 * pmon_callgrind__total() - the sum over every instruction of the events in
 * @expr ("Ir", "ILmr+DLmr"), in function @fn only when @fn is not NULL.
 * Return: 0, or -ENOENT when an event of @expr was not collected.
 */
PMON_API int pmon_callgrind__total(const struct pmon_callgrind *cg, const char *expr,
				   const char *fn, uint64_t *out);

/* One dump of a run ("part:"; a file without one is one part). */
struct pmon_callgrind_part {
	const char
		*trigger; /* "desc: Trigger:" text: "Client Request: ...", "Program termination" */
	const uint64_t *v; /* the part's self cost per event (pmon_callgrind__event()) */
};

/* A call site (callgrind's "calls=" lines): with --separate-callers the
 * function names carry their callers ("inner'middle'outer"), so the call
 * edges of the contexts give each cost its call stack. */
struct pmon_callgrind_call {
	const char *obj, *fn; /* the caller: object and function (context) */
	uint64_t addr; /* the call instruction, as cost addresses are */
	const char *callee; /* the called function (context) */
	uint64_t count; /* calls made there */
	uint64_t inclusive; /* their inclusive cost of the first event */
};
PMON_API size_t pmon_callgrind__ncalls(const struct pmon_callgrind *cg);
PMON_API void pmon_callgrind__call(const struct pmon_callgrind *cg, size_t i,
				   struct pmon_callgrind_call *out);

/** The parts of @cg (at least 1), in the file's order. */
PMON_API size_t pmon_callgrind__nparts(const struct pmon_callgrind *cg);
/** Part @i of @cg; valid while @cg is. Beyond the last: an empty part. */
PMON_API void pmon_callgrind__part(const struct pmon_callgrind *cg, size_t i,
				   struct pmon_callgrind_part *out);

/* ---- regions (pmon simulate --regions) ----------------------------- */

/* The label of the dump the region runtime (lib/region) asks callgrind for
 * when region ID starts collecting: "pmon-region ID NAME". The part it
 * closes belongs to the region before; the parts after it, to ID. */
#define PMON_SIM_REGION_LABEL "pmon-region "

struct pmon_sim_region {
	int id; /* the region API's id; -1: outside every region */
	char name[64];
	uint64_t v[16]; /* per event asked for, summed over parts and runs */
};

/**
 * pmon_sim__regions() - the simulated counts of events @events (indexes
 * into pmon_sim_events()) per region: each part of each run goes to the
 * region named by the last "pmon-region" dump before it, the parts before
 * any to id -1 ("outside", listed only when not zero). Regions in the order
 * they first collected. Pure.
 * Return: 0 with *@out (free() it) and *@n set; -ENOENT (an event the runs
 * did not collect), -EINVAL, -ENOMEM.
 */
PMON_API int pmon_sim__regions(struct pmon_callgrind *const *cg, size_t ncg, const unsigned *events,
			       size_t nevents, struct pmon_sim_region **out, size_t *n);

/* One figure the region runtime measured itself during a simulated run. */
struct pmon_sim_region_metric {
	char name[64]; /* "tsc", "task-clock"... */
	char unit[32];
	double total; /* summed over processes */
};

/* The region runtime's own report of a region, summed over processes. */
struct pmon_sim_region_figures {
	char name[64];
	uint64_t pairs; /* begin/end pairs */
	struct pmon_sim_region_metric m[32]; /* in the report's order; more are left out */
	size_t nm;
};

/**
 * pmon_sim__region_figures() - the region runtime's reports at @path
 * (PMON_FORMAT=json, one document per process, appended: the
 * regions_report of pmon_sim_run_opts) summed per region name, in order of
 * first appearance. A missing file, or one that stops parsing, gives what
 * was read up to there.
 * Return: 0 with *@out (free() it) and *@n; -ENOMEM.
 */
PMON_API int pmon_sim__region_figures(const char *path, struct pmon_sim_region_figures **out,
				      size_t *n);

/** pmon_sim_region_figures__find() - region @name in @f (@n), or NULL. Pure. */
PMON_API const struct pmon_sim_region_figures *
pmon_sim_region_figures__find(const struct pmon_sim_region_figures *f, size_t n, const char *name);

/* ---- measured against simulated (pmon simulate --compare) ---------- */

/**
 * pmon_sim_event__counterpart() - the simulated event that counts what
 * measured event @measured counts ("cycles", "cpu/instructions/u",
 * "LLC-load-misses"...; time, cycles and the clocks map to instructions).
 * Return: its index in pmon_sim_events(), or -PMON_ERRNO__EVENT_UNKNOWN
 * (detail names the event) when none does.
 */
PMON_API int pmon_sim_event__counterpart(const char *measured);

/* A function's weight on one side: the period its samples stand for, or
 * its simulated count. Names repeat freely: they are summed. */
struct pmon_sim_weight {
	const char *name;
	double w;
};

struct pmon_sim_cmp_row {
	char name[256];
	double measured, simulated; /* percent of each side's total */
	double diff; /* simulated - measured, in percentage points */
	bool flagged; /* among the largest disagreements, and at least flag_points */
};

struct pmon_sim_cmp_opts {
	size_t sz;
	double flag_points; /* flag a disagreement of at least this (default 5 points) */
	size_t flag_max; /* flag at most this many rows (default 5) */
};

/**
 * pmon_sim__compare() - per name, each side's share of its own total, the
 * difference, rows ordered by the size of the difference (then the larger
 * share, then the name), the first @o->flag_max with at least
 * @o->flag_points flagged. @o may be NULL. Pure.
 * Return: 0 with *@out (free() it) and *@n; -ENODATA when a side totals 0,
 * -EINVAL for a negative or NaN weight, -ENOMEM.
 */
PMON_API int pmon_sim__compare(const struct pmon_sim_weight *m, size_t nm,
			       const struct pmon_sim_weight *s, size_t ns,
			       const struct pmon_sim_cmp_opts *o, struct pmon_sim_cmp_row **out,
			       size_t *n);

/*
 * A recording's per-symbol rows as plain data: what --compare needs of a
 * report, filled by whoever reads recordings (the report library, through
 * the pmon executable's report module). lib/sim reads no recording itself.
 */
struct pmon_sim_profile_row {
	unsigned event; /* index into pmon_sim_profile.events */
	char symbol[256];
	char dso[256]; /* "[kernel.kallsyms]" and the like: kernel code */
	double period; /* the events the samples stand for */
};

struct pmon_sim_profile {
	char events[16][64]; /* the sampled events, in the recording's order */
	size_t nevents;
	uint64_t samples; /* all samples */
	struct pmon_sim_profile_row *rows; /* malloc()ed */
	size_t n;
	char warning[256]; /* a damaged file's note, "" when none */
};

/** pmon_sim_profile_release() - free @p's rows (NULL accepted). */
PMON_API void pmon_sim_profile_release(struct pmon_sim_profile *p);

/**
 * pmon_sim_profile__counterpart() - the first event of @p that has a
 * simulated counterpart (pmon_sim_event__counterpart()).
 * Return: its counterpart's index in pmon_sim_events(), with *@measured
 * its name in @p; -PMON_ERRNO__EVENT_UNKNOWN (detail: the first event, or
 * that @p holds none). Pure.
 */
PMON_API int pmon_sim_profile__counterpart(const struct pmon_sim_profile *p, const char **measured);

/**
 * pmon_sim_profile__weights() - the per-function weights (period) of
 * event @event in @p, user space only: valgrind simulates no kernel code,
 * so the kernel's part goes to *@kernel (added to) instead. Names point
 * into @p.
 * Return: 0 with *@out (free() it, non-NULL even when *@n is 0); -ENOMEM.
 */
PMON_API int pmon_sim_profile__weights(const struct pmon_sim_profile *p, const char *event,
				       struct pmon_sim_weight **out, size_t *n, double *kernel);

/* The total of @n weights @w. Pure. */
PMON_API double pmon_sim_weights_total(const struct pmon_sim_weight *w, size_t n);

/**
 * pmon_sim_weights_share() - name @name's share of @w (@n weights whose
 * total is @total), in percent; 0 where it has none or @total is not
 * positive. Pure.
 */
PMON_API double pmon_sim_weights_share(const struct pmon_sim_weight *w, size_t n, double total,
				       const char *name);

/* ---- the pipeline view of a hot block (pmon simulate --mca) -------- */

struct pmon_sim_block {
	char obj[4096]; /* the object, as callgrind named it */
	uint64_t start, last; /* ELF addresses of its first and last instruction */
	size_t ninsn; /* instructions executed in it */
	uint64_t count; /* times each ran (simulated) */
	uint64_t executed; /* instructions executed in it in all (simulated "Ir") */
};

/**
 * pmon_sim__hot_block() - the hottest block of function @fn (callgrind's
 * name; "fn'2" counts as fn): its most executed instruction and the
 * neighbours executed exactly as often (a loop body runs each of its
 * instructions the same number of times), from the simulated "Ir" of
 * @cg, summed over runs. Pure.
 * Return: 0, -ENOENT (@fn ran no instruction; detail), -ENOMEM.
 */
PMON_API int pmon_sim__hot_block(struct pmon_callgrind *const *cg, size_t ncg, const char *fn,
				 struct pmon_sim_block *out);

/* One instruction of a function, for pmon_sim__hot_range(). */
struct pmon_sim_insn {
	uint64_t addr;
	uint64_t count; /* executions (simulated) or samples */
	uint64_t target; /* a direct jump's target, else 0 */
	bool branch; /* a jump, call, return or loop instruction */
};

/**
 * pmon_sim__hot_range() - the hottest block of a function's instructions
 * @in (@n, ascending addresses): around the instruction with the largest
 * count, the innermost loop that holds it (a backward direct jump at or
 * after it whose target lies in the function at or before it: from the
 * target to the jump), else, with @exact counts (a simulation's), its
 * neighbours executed exactly as often, else its basic block (up to a
 * branch, back to a branch or a jump target). Pure.
 * Return: 0 with *@lo, *@hi (indexes into @in) and *@hot (the hottest);
 * -ENOENT when no instruction has a count.
 */
PMON_API int pmon_sim__hot_range(const struct pmon_sim_insn *in, size_t n, bool exact, size_t *lo,
				 size_t *hi, size_t *hot);

/* ---- the measured cost of a block (pmon annotate --mca) ------------- */

/* What a sampled event measures, by its name (perf's and the PMUs' names,
 * modifiers and a PMU prefix such as "cpu_core/.../" ignored). */
enum pmon_sim_role {
	PMON_SIM_ROLE_OTHER = 0,
	PMON_SIM_ROLE_CYCLES, /* core cycles: cycles, cpu-cycles, cpu_clk_unhalted.thread ... */
	PMON_SIM_ROLE_REF_CYCLES, /* reference cycles: ref-cycles, cpu_clk_unhalted.ref_tsc */
	PMON_SIM_ROLE_INSTRUCTIONS, /* instructions, inst_retired.any, ex_ret_instr */
};
/** pmon_sim_event_role() - @name's role. Pure. */
PMON_API enum pmon_sim_role pmon_sim_event_role(const char *name);

struct pmon_annotation;

/* A block's measured cost from sampled cycles and instructions. */
struct pmon_sim_block_cost {
	uint64_t cycles_samples, instructions_samples; /* samples in the block */
	double cycles, instructions; /* the events they stand for (periods summed) */
	double ipc; /* instructions / cycles */
	double cycles_per_iteration; /* the block's instructions / ipc */
};

/**
 * pmon_sim__block_cost() - the measured cost of the block @start..@last
 * (ELF addresses of its first and last instruction, @ninsn instructions)
 * from two annotations of one function in one recording: @cycles, of a
 * cycles event, and @instructions, of instructions (pmon_annotate() with
 * the event named): IPC = the instructions' periods summed over the
 * block's addresses / the cycles', and cycles an iteration = @ninsn / IPC.
 * Pure. Return: 0; -ENOENT (no sample of one event in the block, or
 * annotations of different objects; detail), -EINVAL.
 */
PMON_API int pmon_sim__block_cost(const struct pmon_annotation *cycles,
				  const struct pmon_annotation *instructions, uint64_t start,
				  uint64_t last, size_t ninsn, struct pmon_sim_block_cost *out);

/**
 * pmon_sim__is_recording() - whether the recording at @path was written by
 * pmon simulate (its header's attr_type). Return: 1, 0 (another
 * recording), -PMON_ERRNO__PARSE (not a recording) or -errno.
 */
PMON_API int pmon_sim__is_recording(const char *path);

/**
 * pmon_sim_mcpu() - llvm-mca's -mcpu for CPU @id (a table by vendor,
 * family and model; the nearest model LLVM 14 knows; "x86-64" when the
 * CPU is not in it). Pure.
 */
PMON_API const char *pmon_sim_mcpu(const struct pmon_cpu_ident *id);

/**
 * pmon_sim__objdump_asm() - objdump -d --no-show-raw-insn output (@len
 * bytes, not NUL-terminated) to the assembly llvm-mca reads: the
 * instructions at addresses up to @last, one a line, comments dropped,
 * direct jumps and calls to a label at the block's start. Return: 0 with
 * *@ninsn; -ENOENT (no instruction), -ENOSPC (@out too small), -EINVAL.
 */
PMON_API int pmon_sim__objdump_asm(const char *text, size_t len, uint64_t last, char *out,
				   size_t outlen, size_t *ninsn);

/* llvm-mca's summary view; -1 where a field is absent. */
struct pmon_mca_summary {
	double iterations, instructions, cycles; /* "Total Cycles" */
	double rthroughput; /* "Block RThroughput": cycles per iteration, resources only */
	double ipc;
};

/**
 * pmon_sim__mca_summary() - the summary of llvm-mca's output (@len bytes,
 * not NUL-terminated). Return: 0, or -PMON_ERRNO__PARSE when it has no
 * Iterations, Instructions and Total Cycles.
 */
PMON_API int pmon_sim__mca_summary(const char *text, size_t len, struct pmon_mca_summary *out);

/**
 * pmon_sim__mca_run() - @asmtext (Intel-syntax assembly, llvm-mca's input)
 * written to @dir/block.s and run through @llvm_mca (an absolute path) with
 * -mcpu=@mcpu, @iterations times, with its bottleneck analysis; its
 * output kept in @dir/mca.txt and returned in *@text (malloc()ed, the
 * caller frees; @len bytes) with its summary in @sum.
 * Return: 0, or -errno / -PMON_ERRNO__PARSE with pmon_errdetail() set
 * (llvm-mca's own message went to standard error); *@text NULL then.
 */
PMON_API int pmon_sim__mca_run(const char *llvm_mca, const char *asmtext, const char *mcpu,
			       unsigned iterations, const char *dir, char **text, size_t *len,
			       struct pmon_mca_summary *sum);

/**
 * pmon_sim__block_asm() - the instructions of @obj from @start up to @last
 * (an ELF file's virtual addresses), disassembled by @objdump (an absolute
 * path; its output kept in @dir/block.objdump) and turned into llvm-mca's
 * input (pmon_sim__objdump_asm()).
 * Return: 0 with *@asmtext (malloc()ed, the caller frees) and its count of
 * instructions in *@ninsn; -errno with pmon_errdetail() set (objdump could
 * not run or failed, no instruction there); *@asmtext NULL then.
 */
PMON_API int pmon_sim__block_asm(const char *objdump, const char *obj, uint64_t start,
				 uint64_t last, const char *dir, char **asmtext, size_t *ninsn);

/**
 * pmon_sim__predict() - llvm-mca's prediction for a loop body in pmon
 * bench's syntax (Intel syntax, instructions separated by ';' or new
 * lines), repeated @iterations times on -mcpu=@mcpu by @llvm_mca (an
 * absolute path), in a work folder removed afterwards.
 * Return: 0 with llvm-mca's summary in @sum; -errno with pmon_errdetail().
 */
PMON_API int pmon_sim__predict(const char *llvm_mca, const char *body, const char *mcpu,
			       unsigned iterations, struct pmon_mca_summary *sum);

/* ---- the runner (lib/sim/run.c) ----------------------------------- */

struct pmon_sim_run_opts {
	size_t sz;
	const char *valgrind; /* valgrind's absolute path (never looked up on $PATH) */
	const struct pmon_sim_caches *caches; /* the geometry simulated */
	const char *dir; /* an existing folder: callgrind's files and valgrind's logs */
	bool branch; /* simulate branches too (--branch-sim=yes) */
	bool callgraph; /* each function's cost per chain of callers (--separate-callers) */
	/* Non-NULL: simulate inside regions only (lib/region switches collection
	 * on), the region runtime's JSON report of the run into this file
	 * (PMON_SIMULATE_REGIONS, PMON_OUTPUT and PMON_FORMAT are set in this
	 * process's environment for it). */
	const char *regions_report;
	/* > 0 with @progress: called every @progress_s seconds while it runs,
	 * with the time so far, the engine's CPU time and resident memory. */
	double progress_s;
	void (*progress)(void *ctx, double elapsed_s, double cpu_s, double rss_mb);
	void *ctx;
};

struct pmon_sim_run {
	bool started; /* valgrind ran (false: it could not start) */
	int status; /* valgrind's wait status (waitpid()) */
	int signal; /* SIGINT, SIGTERM or SIGHUP that reached pmon meanwhile, or 0 */
	double elapsed_s;
	struct pmon_callgrind **runs; /* one per simulated process, by pid */
	size_t nruns;
	char *log; /* valgrind's own messages (less its LL cache notes), or NULL */
};

/**
 * pmon_sim__run() - run @argv (NULL-terminated; argv[0] as exec finds it)
 * under callgrind with @opts->caches, wait for it and parse what it wrote
 * per process. While it runs, SIGINT, SIGTERM and SIGHUP are caught: one
 * sent to pmon alone is passed on to valgrind once (one typed at the
 * terminal reaches valgrind by itself), which stops the program and writes
 * what it gathered; the handlers are restored after. Not reentrant.
 * Return: 0 with @out filled (release it with pmon_sim_run_release()); or
 * -errno, pmon_errdetail() set: -EINVAL (options), valgrind not started
 * (@out->started false), or its output unreadable (@out->log kept).
 * A run whose processes wrote nothing is 0 with @out->nruns 0.
 */
PMON_API int pmon_sim__run(char *const argv[], const struct pmon_sim_run_opts *opts,
			   struct pmon_sim_run *out);
/* Free what @r holds; NULL is fine. */
PMON_API void pmon_sim_run_release(struct pmon_sim_run *r);

/* ---- the recording ------------------------------------------------- */

struct pmon_sim_write_opts {
	size_t sz;
	const unsigned *events; /* indexes into pmon_sim_events() */
	size_t nevents;
	const char *command; /* the simulated command line, for the header */
	const char *cwd; /* relative "ob=" paths are taken from here; NULL: "." */
	/* Each sample gets the call chain of its function's context from the
	 * call sites (pmon_callgrind__call(); simulate -g runs callgrind with
	 * --separate-callers): PERF_SAMPLE_CALLCHAIN, the callers' call
	 * instructions + 1 (return addresses, as a kernel chain holds). */
	bool callchains;
};

/**
 * pmon_sim__write_recording() - write the simulated runs @cg (one per
 * process) as a recording at @path: one PMON_RECORD_EVENT per event, an
 * MMAP2 per executable segment of each object (at a synthetic base per
 * shared object, at its own addresses for a fixed-address executable:
 * docs/simulate.md), then per (object, instruction, event) with a non-zero
 * count one SAMPLE (identifier, ip, pid/tid, period = the count).
 * Return: 0, or -ENOENT (an event the run did not collect, named in the
 * detail), or -errno from the writer.
 */
PMON_API int pmon_sim__write_recording(struct pmon_callgrind *const *cg, size_t ncg,
				       const char *path, const struct pmon_sim_write_opts *o);

#ifdef __cplusplus
}
#endif
#endif
