/* SPDX-License-Identifier: MIT */
/*
 * pmon simulate's parts other commands call (docs/simulate.md): the run
 * itself (cli/cmd-simulate.c), for `pmon stat --simulate`; the pipeline
 * view of a block of code by llvm-mca (cli/sim-mca.c), for `simulate
 * --mca`, `annotate --mca` and `bench --asm ... --predict`.
 */
#ifndef PMON_CLI_SIM_H
#define PMON_CLI_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

/* What to simulate and what to print: the options of pmon simulate. */
struct sim_req {
	const char *const *events; /* -e lists (each comma-separated), or none */
	size_t nevents;
	const char *cpuid_file, *l1, *ll; /* --cpuid-file, --l1, --ll */
	int nsrc; /* CPUID sources named (--cache-from-cpuid, --cpuid-file) */
	bool branch, stat, regions, json;
	bool callgraph; /* -g: call stacks from callgrind's contexts */
	const char *sep; /* -x */
	const char *out; /* -o: the recording */
	const char *stat_out; /* the --stat table's file; NULL: standard error */
	const char *keep; /* --callgrind-dir */
	const char *compare; /* --compare RECORDING */
	const char *mca, *mcpu; /* --mca SYMBOL, --mcpu */
	long progress_s; /* --progress S: a line every S s; 0 none; -1: when stderr is a tty */
	const char *who; /* the command named in messages: "simulate", "stat --simulate" */
	char **argv; /* the command, NULL-terminated */
};

/* Run the simulation @r asks for. Return: the command's exit status or a
 * CLI_* code (docs/simulate.md's table). */
int sim_run(const struct sim_req *r);

/* ---- llvm-mca (cli/sim-mca.c) ------------------------------------------- */

/* Whether llvm-mca and objdump are on PATH; false after one error line
 * naming the Debian package (@what: "--mca", "--predict"). */
bool sim_mca_available(const char *what, bool objdump);

/* llvm-mca's -mcpu for this CPU (or the dump @cpuid_file's) into @mcpu,
 * where it came from into @cpu. False after an error line. */
bool sim_mca_cpu(const char *cpuid_file, char *mcpu, size_t mcpulen, char *cpu, size_t cpulen);

/* A block of an object's code, as the caller found it hottest. */
struct sim_mca_block {
	const char *what; /* "pmon simulate --mca chain", "pmon annotate --mca chain" */
	const char *symbol;
	const char *obj; /* the file */
	uint64_t start, last; /* ELF addresses of its first and last instruction */
	uint64_t count; /* times it ran, or 0 when unknown */
	const char
		*count_of; /* what @count is: "simulated", "samples on its hottest instruction" */
	const char *mcpu, *cpu;
	const char *measured; /* the measured cost beside the prediction, or NULL */
	double measured_cycles; /* measured cycles an iteration, or <= 0 when none */
	uint64_t executed; /* simulated: instructions executed in the block in all, or 0 */
};

/* Disassemble @b with objdump into @dir, predict it with llvm-mca and print
 * the block, the prediction and llvm-mca's views on @f. Return: CLI_*. */
int sim_mca_block(FILE *f, const struct sim_mca_block *b, const char *dir);

struct pmon_mca_summary;

/* llvm-mca on the assembly @asmtext (Intel syntax, one instruction a line)
 * with -mcpu @mcpu, @iterations times; its output into @dir/mca.txt, kept
 * in *@text (free()) and summarized in @sum. Return: CLI_*. */
int sim_mca_run(const char *asmtext, const char *mcpu, unsigned iterations, const char *dir,
		const char *what, char **text, size_t *len, struct pmon_mca_summary *sum);

/* The hottest block of annotation @a (pmon_sim__hot_range()) through
 * llvm-mca, printed on @f, beside the cost measured in recording @path
 * (read with @ro) where it samples cycles and instructions. @mcpu NULL:
 * from this CPU or @cpuid_file. */
struct pmon_report_opts;
struct pmon_annotation;
int sim_mca_annotation(FILE *f, const struct pmon_annotation *a, bool exact, const char *mcpu,
		       const char *cpuid_file, const char *path, const struct pmon_report_opts *ro);

/* pmon bench --asm BODY --predict: llvm-mca's prediction for one
 * execution of BODY (Intel syntax, ';'-separated). */
struct sim_prediction {
	char mcpu[96], cpu[160]; /* -mcpu, and where it came from */
	double cycles; /* per execution of the body */
	double rthroughput, ipc;
};
int sim_mca_predict(const char *body, const char *mcpu, struct sim_prediction *pr);

struct pmon_bench_clock;

/* bench's measurement, per execution of the body (medians), in core
 * cycles where they are known: counted by the PMU, or TSC ticks times the
 * core clock calibrated beside the body (pmon_bench_clock). */
struct sim_measured {
	double tsc_ticks, tsc_mode; /* the median, and the mode (with a calibration) */
	uint64_t tsc_hz; /* the TSC's calibrated frequency */
	double core_cycles; /* the PMU's cycles, or < 0 without one */
	const struct pmon_bench_clock *clock; /* the calibration, or NULL */
	double mca_chain; /* llvm-mca's cycles for the clock chain's instruction, or 0 */
};
/* @ms from bench's medians, with the TSC calibrated here (@core_cycles < 0:
 * no PMU; @clock: the core clock calibrated beside the body, or NULL). */
void sim_measured_set(struct sim_measured *ms, double tsc_ticks, double tsc_mode,
		      double core_cycles, const struct pmon_bench_clock *clock);
/* Measured core cycles an execution (counted: the median; else the mode
 * of the TSC ticks x the calibrated core cycles a tick), or < 0 when
 * neither exists; *@how says which. */
double sim_measured_cycles(const struct sim_measured *ms, const char **how);
/* The prediction beside the measurement: text, or a JSON object. */
json_t *sim_mca_predict_json(const struct sim_prediction *pr, const struct sim_measured *ms);
void sim_mca_predict_print(FILE *f, const struct sim_prediction *pr, const struct sim_measured *ms);

#endif
