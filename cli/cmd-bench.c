// SPDX-License-Identifier: MIT
/*
 * pmon bench: time a snippet of assembly or a C function per execution, the
 * seeds' RDTSC method made robust: bodies unrolled U and 2U times and
 * subtracted (nanoBench), many samples, their mode and median.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "sim.h"
#include <pmon/pmon.h>

static bool core_pmu(void)
{
	return pmon_kernel_has_core_pmu(NULL);
}

static json_t *summary_json(const struct pmon_summary *s)
{
	char why[256];
	json_t *j =
		json_pack("{s:f, s:f, s:I, s:f, s:f, s:f, s:f, s:f, s:I, s:I}", "median", s->median,
			  "mode", s->mode, "mode_count", (json_int_t)s->mode_count, "min", s->min,
			  "max", s->max, "mean", s->mean, "stddev", s->stddev, "mad", s->mad,
			  "culled", (json_int_t)s->culled, "samples", (json_int_t)s->n);

	if (pmon_summary__doubts(s, why, sizeof(why)))
		json_object_set_new(j, "doubt", json_string(why));
	return j;
}

/* A row; one in doubt is marked '?' and its reason follows it. */
static void print_row(const char *name, const struct pmon_summary *s)
{
	char why[256];
	unsigned d = pmon_summary__doubts(s, why, sizeof(why));

	printf("  %-24s %10.2f %10.2f %10.2f %10.2f %10.2f %9.2f %7zu%s\n", name, s->median,
	       s->mode, s->min, s->max, s->mean, s->stddev, s->culled, d ? "  ?" : "");
	if (d)
		printf("  %-24s ? not a result: %s\n", "", why);
}

/* The body to measure, from --asm or --so. Return: CLI_OK or the exit
 * code, said. */
static int make_code(const char *asm_body, const char *so, unsigned long unroll,
		     struct pmon_bench_code **code)
{
	int err;

	if (asm_body) {
		err = pmon_bench_code__asm(asm_body, (unsigned)unroll, code);
	} else {
		char *colon = strrchr(so, ':');
		char path[4096];
		if (!colon || colon == so || !colon[1]) {
			cli_error("--so '%s': expected LIB.so:FUNCTION", so);
			return CLI_USAGE;
		}
		snprintf(path, sizeof(path), "%.*s", (int)(colon - so), so);
		err = pmon_bench_code__so(path, colon + 1, (unsigned)unroll, code);
	}
	if (err) {
		cli_error("%s", pmon_errdetail());
		return err == -ENOMEM ? CLI_FAIL : CLI_USAGE;
	}
	return CLI_OK;
}

/* --predict: llvm-mca's cycles for @asm_body, and the measured ones of
 * @res beside them (@clock: the calibrated core clock where no PMU counts
 * cycles). Return: CLI_OK or the exit code, said. */
static int predict_cycles(const char *asm_body, const struct pmon_bench_result *res,
			  const struct pmon_bench_clock *clock, struct sim_prediction *pr,
			  struct sim_measured *ms)
{
	int rc = sim_mca_predict(asm_body, NULL, pr);

	if (rc)
		return rc;
	sim_measured_set(ms, res->tsc.median, res->tsc.mode,
			 core_pmu() && res->nevents ? res->events[0].median : -1, clock);
	/* llvm-mca's own latency of the clock chain, for the same -mcpu,
	 * beside the table's (cli/sim-mca.c prints both) */
	struct sim_prediction chain;
	if (clock && clock->latency && !sim_mca_predict(PMON_BENCH_CLOCK_CHAIN, pr->mcpu, &chain))
		ms->mca_chain = chain.cycles;
	return CLI_OK;
}

/* What a measurement shows, in either form. */
struct bench_shown {
	const char *body, *kind; /* --asm's or --so's text; "asm" or "so" */
	unsigned long unroll, iters, samples;
	bool pinned;
	const char *tools; /* the toolchain that built it, or NULL */
	const struct pmon_evlist *ev;
	const struct pmon_bench_result *res;
	const struct sim_prediction *pr; /* --predict, or NULL */
	const struct sim_measured *ms;
};

/* --json: one object. */
static void print_json(const struct bench_shown *b)
{
	json_t *j =
		json_pack("{s:s, s:s, s:i, s:I, s:i, s:o}", "body", b->body, "kind", b->kind,
			  "unroll", (int)b->unroll, "iterations", (json_int_t)b->iters, "samples",
			  (int)b->samples, "tsc_per_iteration", summary_json(&b->res->tsc));
	json_t *evs = json_object();
	for (size_t e = 0; e < b->res->nevents; e++)
		json_object_set_new(evs, pmon_evlist__event(b->ev, e)->name,
				    summary_json(&b->res->events[e]));
	json_object_set_new(j, "events", evs);
	if (b->tools)
		json_object_set_new(j, "toolchain", json_string(b->tools));
	json_object_set_new(j, "cycles",
			    json_string(core_pmu() ? "core cycles in events.cycles"
						   : "no PMU: TSC reference cycles only"));
	if (b->pr)
		json_object_set_new(j, "predicted", sim_mca_predict_json(b->pr, b->ms));
	json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(j);
}

/* The table. */
static void print_text(const struct bench_shown *b)
{
	printf("pmon bench: %s, unrolled %lu and %lu times, %lu iterations, %lu "
	       "samples%s\n",
	       b->body, b->unroll, 2 * b->unroll, b->iters, b->samples,
	       b->pinned ? " (pinned)" : "");
	if (b->tools)
		printf("  built with %s\n", b->tools);
	printf("  per execution of the body; (2U - U) / (U x N) per sample; culled beyond "
	       "5 x MAD\n");
	if (!core_pmu())
		printf("  cycles: TSC reference cycles (this machine exposes no PMU for "
		       "core "
		       "cycles)\n");
	printf("\n  %-24s %10s %10s %10s %10s %10s %9s %7s\n", "metric", "median", "mode", "min",
	       "max", "mean", "stddev", "culled");
	print_row("TSC ticks", &b->res->tsc);
	for (size_t e = 0; e < b->res->nevents; e++)
		print_row(pmon_evlist__event(b->ev, e)->name, &b->res->events[e]);
	if (b->pr)
		sim_mca_predict_print(stdout, b->pr, b->ms);
}

int cmd_bench(int argc, char **argv)
{
	const char *asm_body = NULL, *so = NULL, *events = NULL;
	unsigned long unroll = 100, iters = 1000, samples = 101, warmup = 10, timeout = 10;
	int cpu = -1;
	bool json = false, predict = false;
	const struct cli_option options[] = {
		CLI_OPT_STRING(0, "asm", &asm_body, "'INSNS'",
			       "Intel-syntax body; several instructions separated by ';'.\n"
			       "r15 is the loop counter (keep it), r14 points to 4 KiB of\n"
			       "scratch memory, keep rsp; other registers are free"),
		CLI_OPT_STRING(0, "so", &so, "LIB:FUNC",
			       "a C function 'void FUNC(void)' from a shared object"),
		CLI_OPT_UINT('u', "unroll", &unroll, "U", 100000,
			     "copies of the body per iteration (default 100)"),
		CLI_OPT_UINT('n', "iterations", &iters, "N", 1000000000,
			     "loop iterations per measurement (default 1000)"),
		CLI_OPT_UINT('r', "samples", &samples, "R", 1000000, "measurements (default 101)"),
		CLI_OPT_UINT(0, "warmup", &warmup, "W", 1000000, "untimed runs first (default 10)"),
		CLI_OPT_JOIN('e', "event", &events, "LIST",
			     "also count these events (perf syntax; comma-separated\n"
			     "or -e again); where a PMU exists, 'cycles' is added\n"
			     "for core cycles"),
		CLI_OPT_CPU(0, &cpu, "pin to CPU N while measuring"),
		CLI_OPT_UINT(0, "timeout", &timeout, "SEC", 86400,
			     "stop the body when no run of it ends for SEC seconds\n"
			     "(default 10; it runs in a child process)"),
		CLI_OPT_FLAG(0, "json", &json,
			     "one JSON object (tsc_per_iteration: median, mode,\n"
			     "min, max)"),
		CLI_OPT_FLAG(0, "predict", &predict,
			     "with --asm: LLVM's llvm-mca's cycles per execution\n"
			     "beside the measured core cycles (counted by the PMU,\n"
			     "else TSC ticks x the core clock calibrated with a\n"
			     "dependent imul chain; docs/simulate.md)"),
		CLI_OPT_TEXT(
			"Each measurement runs the body U x N and 2U x N times and divides the\n"
			"difference by U x N: the loop, the call and the timer reads cancel.\n"
			"The assembler and linker are /usr/bin/as and /usr/bin/ld (or /bin,\n"
			"/usr/local/bin), never found through PATH; the header line names them."),
		CLI_OPT_END(),
	};
	struct pmon_evlist *ev = NULL;
	struct pmon_bench_code *code = NULL;
	struct pmon_bench_result res = { 0 };
	struct pmon_bench_clock clock = { 0 };
	int rc = cli_parse_options(
		"bench", "usage: pmon bench (--asm 'INSNS' | --so LIB.so:FUNCTION) [options]",
		options, CLI_PARSE_STOP_AT_OPERAND | CLI_PARSE_NO_OPERANDS, argc, argv);
	int err;

	if (rc <= 0)
		return -rc;
	rc = CLI_OK;
	if (!timeout) {
		cli_error("--timeout must be at least 1 second");
		return CLI_USAGE;
	}
	if (!asm_body == !so) {
		cli_error("give exactly one of --asm and --so");
		return CLI_USAGE;
	}
	if (predict && (!asm_body || !sim_mca_available("--predict", false))) {
		if (!asm_body)
			cli_error("--predict goes with --asm: llvm-mca reads assembly");
		return asm_body ? CLI_UNSUPPORTED : CLI_USAGE;
	}
	if (!unroll || !iters || samples < 3) {
		cli_error("--unroll and -n must be at least 1, -r at least 3");
		return CLI_USAGE;
	}
	if (cpu >= 0) {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one)) {
			cli_error("cannot run on CPU %d: %s", cpu,
				  errno == EINVAL ? "no such online CPU" : strerror(errno));
			return CLI_USAGE;
		}
	}
	ev = pmon_evlist__new(NULL);
	if (!ev) {
		cli_error("out of memory");
		return CLI_FAIL;
	}
	err = 0;
	if (core_pmu())
		err = pmon_evlist__add(ev, "cycles");
	if (!err && events)
		err = pmon_evlist__add(ev, events);
	if (err) {
		cli_error("%s", pmon_errdetail());
		rc = CLI_USAGE;
		goto out;
	}
	if ((rc = make_code(asm_body, so, unroll, &code)) != CLI_OK)
		goto out;
	struct pmon_bench_opts o = { .sz = sizeof(o),
				     .iterations = iters,
				     .samples = (unsigned)samples,
				     .warmup = (unsigned)warmup,
				     .events = pmon_evlist__count(ev) ? ev : NULL,
				     .time_limit_ms = (unsigned)timeout * 1000,
				     /* no PMU counts cycles: the core clock
				      * calibrated beside the body (pmon/bench.h) */
				     .clock = predict && !core_pmu() ? &clock : NULL };
	err = pmon_bench_run(code, &o, &res);
	if (err) {
		cli_error("%s", pmon_errdetail());
		/* A body that faults, traps, hangs or exits is bad input (2);
		 * an event that cannot count here is 3 (docs/exit-codes.md). */
		rc = err == -EFAULT || err == -ETIMEDOUT || err == -ECHILD ? CLI_USAGE
			: err == -ENOMEM				   ? CLI_FAIL
									   : CLI_UNSUPPORTED;
		goto out;
	}
	const char *tools = pmon_bench_code__tools(code);
	struct sim_prediction pr;
	struct sim_measured ms;
	if (predict && (rc = predict_cycles(asm_body, &res, o.clock, &pr, &ms)))
		goto out;
	struct bench_shown shown = { .body = asm_body ? asm_body : so,
				     .kind = asm_body ? "asm" : "so",
				     .unroll = unroll,
				     .iters = iters,
				     .samples = samples,
				     .pinned = cpu >= 0,
				     .tools = tools,
				     .ev = ev,
				     .res = &res,
				     .pr = predict ? &pr : NULL,
				     .ms = &ms };
	if (json)
		print_json(&shown);
	else
		print_text(&shown);
out:
	pmon_bench_result_release(&res);
	pmon_bench_code__free(code);
	pmon_evlist__free(ev);
	return rc;
}
