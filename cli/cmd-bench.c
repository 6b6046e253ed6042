// SPDX-License-Identifier: MIT
/*
 * pmon bench: time a snippet of assembly or a C function per execution, the
 * seeds' RDTSC method made robust: bodies unrolled U and 2U times and
 * subtracted (nanoBench), many samples, their mode and median.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include <pmon/pmon.h>

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pmon bench (--asm 'INSNS' | --so LIB.so:FUNCTION) [options]\n\n"
		"  --asm 'INSNS'      Intel-syntax body; several instructions separated by ';'.\n"
		"                     r15 is the loop counter (keep it), r14 points to 4 KiB of\n"
		"                     scratch memory, keep rsp; other registers are free\n"
		"  --so LIB:FUNC      a C function 'void FUNC(void)' from a shared object\n"
		"  -u, --unroll U     copies of the body per iteration (default 100)\n"
		"  -n, --iterations N loop iterations per measurement (default 1000)\n"
		"  -r, --samples R    measurements (default 101)\n"
		"      --warmup W     untimed runs first (default 10)\n"
		"  -e, --event LIST   also count these events (perf syntax); where a PMU\n"
		"                     exists, 'cycles' is added for core cycles\n"
		"      --cpu C        pin to CPU C while measuring\n"
		"      --json         one JSON object (tsc_per_iteration: median, mode, min, "
		"max)\n\n"
		"Each measurement runs the body U x N and 2U x N times and divides the\n"
		"difference by U x N: the loop, the call and the timer reads cancel.\n");
}

static bool core_pmu(void)
{
	return access("/sys/bus/event_source/devices/cpu/type", F_OK) == 0 ||
		access("/sys/bus/event_source/devices/cpu_core/type", F_OK) == 0;
}

static json_t *summary_json(const struct pmon_summary *s)
{
	return json_pack("{s:f, s:f, s:I, s:f, s:f, s:f, s:f, s:f, s:I, s:I}", "median", s->median,
			 "mode", s->mode, "mode_count", (json_int_t)s->mode_count, "min", s->min,
			 "max", s->max, "mean", s->mean, "stddev", s->stddev, "mad", s->mad,
			 "culled", (json_int_t)s->culled, "samples", (json_int_t)s->n);
}

static void print_row(const char *name, const struct pmon_summary *s)
{
	printf("  %-24s %10.2f %10.2f %10.2f %10.2f %10.2f %9.2f %7zu\n", name, s->median, s->mode,
	       s->min, s->max, s->mean, s->stddev, s->culled);
}

int cmd_bench(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "asm", required_argument, NULL, 'a' },
		{ "so", required_argument, NULL, 's' },
		{ "unroll", required_argument, NULL, 'u' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "samples", required_argument, NULL, 'r' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "event", required_argument, NULL, 'e' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *asm_body = NULL, *so = NULL, *events = NULL;
	unsigned long unroll = 100, iters = 1000, samples = 101, warmup = 10, ul;
	long cpu = -1;
	bool json = false;
	struct pmon_evlist *ev = NULL;
	struct pmon_bench_code *code = NULL;
	struct pmon_bench_result res = { 0 };
	int c, rc = CLI_OK, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+u:n:r:e:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'a':
			asm_body = optarg;
			break;
		case 's':
			so = optarg;
			break;
		case 'u':
			if (!cli_parse_uint(optarg, 100000, "--unroll", &unroll))
				return CLI_USAGE;
			break;
		case 'n':
			if (!cli_parse_uint(optarg, 1000000000, "-n", &iters))
				return CLI_USAGE;
			break;
		case 'r':
			if (!cli_parse_uint(optarg, 1000000, "-r", &samples))
				return CLI_USAGE;
			break;
		case 'w':
			if (!cli_parse_uint(optarg, 1000000, "--warmup", &warmup))
				return CLI_USAGE;
			break;
		case 'e':
			events = optarg;
			break;
		case 'c':
			if (!cli_parse_uint(optarg, 4095, "--cpu", &ul))
				return CLI_USAGE;
			cpu = (long)ul;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			usage(stderr);
			return CLI_USAGE;
		}
	}
	if (optind < argc) {
		cli_error("unexpected argument '%s' (see 'pmon bench --help')", argv[optind]);
		return CLI_USAGE;
	}
	if (!asm_body == !so) {
		cli_error("give exactly one of --asm and --so");
		return CLI_USAGE;
	}
	if (!unroll || !iters || samples < 3) {
		cli_error("--unroll and -n must be at least 1, -r at least 3");
		return CLI_USAGE;
	}
	if (cpu >= 0) {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET((int)cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one)) {
			cli_error("cannot run on CPU %ld: %s", cpu,
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
	if (asm_body) {
		err = pmon_bench_code__asm(asm_body, (unsigned)unroll, &code);
	} else {
		char *colon = strrchr(so, ':');
		char path[4096];
		if (!colon || colon == so || !colon[1]) {
			cli_error("--so '%s': expected LIB.so:FUNCTION", so);
			rc = CLI_USAGE;
			goto out;
		}
		snprintf(path, sizeof(path), "%.*s", (int)(colon - so), so);
		err = pmon_bench_code__so(path, colon + 1, (unsigned)unroll, &code);
	}
	if (err) {
		cli_error("%s", pmon_errdetail());
		rc = err == -ENOMEM ? CLI_FAIL : CLI_USAGE;
		goto out;
	}
	struct pmon_bench_opts o = { .sz = sizeof(o),
				     .iterations = iters,
				     .samples = (unsigned)samples,
				     .warmup = (unsigned)warmup,
				     .events = pmon_evlist__count(ev) ? ev : NULL };
	err = pmon_bench_run(code, &o, &res);
	if (err) {
		cli_error("%s", pmon_errdetail());
		rc = CLI_UNSUPPORTED;
		goto out;
	}
	if (json) {
		json_t *j =
			json_pack("{s:s, s:s, s:i, s:I, s:i, s:o}", "body",
				  asm_body ? asm_body : so, "kind", asm_body ? "asm" : "so",
				  "unroll", (int)unroll, "iterations", (json_int_t)iters, "samples",
				  (int)samples, "tsc_per_iteration", summary_json(&res.tsc));
		json_t *evs = json_object();
		for (size_t e = 0; e < res.nevents; e++)
			json_object_set_new(evs, pmon_evlist__event(ev, e)->name,
					    summary_json(&res.events[e]));
		json_object_set_new(j, "events", evs);
		json_object_set_new(j, "cycles",
				    json_string(core_pmu() ? "core cycles in events.cycles"
							   : "no PMU: TSC reference cycles only"));
		json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(j);
	} else {
		printf("pmon bench: %s, unrolled %lu and %lu times, %lu iterations, %lu "
		       "samples%s\n",
		       asm_body ? asm_body : so, unroll, 2 * unroll, iters, samples,
		       cpu >= 0 ? " (pinned)" : "");
		printf("  per execution of the body; (2U - U) / (U x N) per sample; culled beyond "
		       "5 x MAD\n");
		if (!core_pmu())
			printf("  cycles: TSC reference cycles (this machine exposes no PMU for "
			       "core "
			       "cycles)\n");
		printf("\n  %-24s %10s %10s %10s %10s %10s %9s %7s\n", "metric", "median", "mode",
		       "min", "max", "mean", "stddev", "culled");
		print_row("TSC ticks", &res.tsc);
		for (size_t e = 0; e < res.nevents; e++)
			print_row(pmon_evlist__event(ev, e)->name, &res.events[e]);
	}
out:
	pmon_bench_result_release(&res);
	pmon_bench_code__free(code);
	pmon_evlist__free(ev);
	return rc;
}
