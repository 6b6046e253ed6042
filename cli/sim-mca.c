// SPDX-License-Identifier: MIT
/*
 * The pipeline view of a block of code by LLVM's llvm-mca (Debian's llvm),
 * a program pmon runs, never a library it links: the block disassembled
 * by objdump (binutils), repeated by llvm-mca with the -mcpu of this CPU
 * or a dump's, its prediction and views printed. One copy for `pmon
 * simulate --mca`, `pmon annotate --mca` (in the annotate module too) and
 * `pmon bench --asm ... --predict` (docs/simulate.md). The pure parts
 * (objdump's text to llvm-mca's input, llvm-mca's summary) are lib/sim's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "sim.h"
#include <pmon/pmon.h>

/* The tools, found on PATH once and run by that absolute path, the one the
 * output names (NULL: not there). */
static const char *tool(const char *name)
{
	static char mca[4096], objdump[4096];
	static bool looked[2], there[2];
	bool is_mca = !strcmp(name, "llvm-mca");
	char *buf = is_mca ? mca : objdump;

	if (!looked[is_mca]) {
		there[is_mca] = !pmon_spawn_which(name, buf, sizeof(mca));
		looked[is_mca] = true;
	}
	return there[is_mca] ? buf : NULL;
}

bool sim_mca_available(const char *what, bool objdump)
{
	if (!tool("llvm-mca")) {
		cli_error("llvm-mca is not installed: %s runs LLVM's llvm-mca (Debian package "
			  "'llvm')",
			  what);
		return false;
	}
	if (objdump && !tool("objdump")) {
		cli_error("objdump is not installed: %s disassembles with it (Debian package "
			  "'binutils')",
			  what);
		return false;
	}
	return true;
}

bool sim_mca_cpu(const char *cpuid_file, char *mcpu, size_t mcpulen, char *cpu, size_t cpulen)
{
	struct pmon_cpuid *id =
		cpuid_file ? pmon_cpuid__new_file(cpuid_file) : pmon_cpuid__new_live();
	struct pmon_cpu_info info;

	if (!id || pmon_cpu_decode(id, &info)) {
		pmon_cpuid__free(id);
		cli_error("llvm-mca's CPU: %s (name it with --mcpu)", pmon_errdetail());
		return false;
	}
	snprintf(mcpu, mcpulen, "%s", pmon_sim_mcpu(&info.id));
	snprintf(cpu, cpulen, "%s family %02XH model %02XH%s", info.id.vendor_id, info.id.family,
		 info.id.model, cpuid_file ? ", from the dump" : "");
	pmon_cpuid__free(id);
	return true;
}

int sim_mca_run(const char *asmtext, const char *mcpu, unsigned iterations, const char *dir,
		const char *what, char **text, size_t *len, struct pmon_mca_summary *sum)
{
	const char *mca = tool("llvm-mca");

	*text = NULL;
	if (!mca) {
		cli_error("%s: llvm-mca failed on the block (its message is above)", what);
		return CLI_FAIL;
	}
	if (pmon_sim__mca_run(mca, asmtext, mcpu, iterations, dir, text, len, sum)) {
		cli_error("%s: %s", what, pmon_errdetail());
		return CLI_FAIL;
	}
	return CLI_OK;
}

int sim_mca_block(FILE *f, const struct sim_mca_block *b, const char *dir)
{
	const char *what = b->what;
	char *asmtext = NULL, *mtext = NULL;
	size_t len = 0, n = 0;
	int rc = CLI_FAIL;

	if (pmon_sim__block_asm(tool("objdump"), b->obj, b->start, b->last, dir, &asmtext, &n)) {
		cli_error("%s: %s", what, pmon_errdetail());
		return CLI_FAIL;
	}
	struct pmon_mca_summary sum;
	if ((rc = sim_mca_run(asmtext, b->mcpu, 100, dir, what, &mtext, &len, &sum)))
		goto out;
	double per = sum.cycles / sum.iterations;
	fprintf(f, "# %s: the hottest block of '%s' in %s, 0x%llx-0x%llx, %zu instructions", what,
		b->symbol, b->obj, (unsigned long long)b->start, (unsigned long long)b->last, n);
	if (b->count) {
		char cnt[40];
		cli_group_digits(cnt, sizeof(cnt), b->count);
		fprintf(f, ", executed %s times (%s)", cnt, b->count_of);
	} else if (b->count_of) {
		fprintf(f, " (%s)", b->count_of);
	}
	fprintf(f,
		"\n# llvm-mca -mcpu=%s (%s), the block repeated 100 times (%s, disassembled by "
		"%s)\n"
		"# predicted: %.2f cycles an iteration (%.2f instructions a cycle)",
		b->mcpu, b->cpu, tool("llvm-mca") ?: "?", tool("objdump") ?: "?", per,
		sum.instructions / sum.cycles);
	bool simulated = b->count && b->count_of && !strcmp(b->count_of, "simulated");
	if (simulated) {
		char cnt[40], tot[40];
		cli_group_digits(cnt, sizeof(cnt), b->count);
		cli_group_digits(tot, sizeof(tot), (uint64_t)(per * (double)b->count + 0.5));
		fprintf(f, ", so %s cycles for the block's %s executions", tot, cnt);
	}
	if (simulated && b->executed) {
		char ex[40];
		cli_group_digits(ex, sizeof(ex), b->executed);
		fprintf(f,
			"\n# simulated: %.2f instructions an iteration (%s executed in the block, "
			"exact; llvm-mca: %.2f)",
			(double)b->executed / (double)b->count, ex,
			sum.instructions / sum.iterations);
	}
	if (b->measured_cycles > 0)
		fprintf(f, "\n# measured: %.2f cycles an iteration, %.2fx the prediction (%s)\n\n",
			b->measured_cycles, per > 0 ? b->measured_cycles / per : 0,
			b->measured ? b->measured : "");
	else
		fprintf(f, "; measured: %s\n\n",
			b->measured	    ? b->measured
				: simulated ? "none (valgrind counts instructions, not cycles, "
					      "and no PMU was read)"
					    : "none here (no PMU)");
	fputs("# the block as llvm-mca read it:\n", f);
	for (char *p = asmtext, *e; *p; p = e + 1) {
		e = strchr(p, '\n');
		if (!e)
			break;
		fprintf(f, "#   %.*s\n", (int)(e - p), p);
	}
	fputc('\n', f);
	fwrite(mtext, 1, len, f);
	rc = CLI_OK;
out:
	free(mtext);
	free(asmtext);
	return rc;
}

/* ---- pmon bench --asm ... --predict ------------------------------------- */

int sim_mca_predict(const char *body, const char *mcpu, struct sim_prediction *pr)
{
	struct pmon_mca_summary sum;

	memset(pr, 0, sizeof(*pr));
	if (mcpu) {
		snprintf(pr->mcpu, sizeof(pr->mcpu), "%s", mcpu);
		snprintf(pr->cpu, sizeof(pr->cpu), "--mcpu");
	} else if (!sim_mca_cpu(NULL, pr->mcpu, sizeof(pr->mcpu), pr->cpu, sizeof(pr->cpu))) {
		return CLI_USAGE;
	}
	if (!tool("llvm-mca")) {
		cli_error("--predict: llvm-mca failed on the block (its message is above)");
		return CLI_FAIL;
	}
	if (pmon_sim__predict(tool("llvm-mca"), body, pr->mcpu, 1000, &sum)) {
		cli_error("--predict: %s", pmon_errdetail());
		return CLI_FAIL;
	}
	pr->cycles = sum.cycles / sum.iterations;
	pr->rthroughput = sum.rthroughput;
	pr->ipc = sum.instructions / sum.cycles;
	return CLI_OK;
}

double sim_measured_cycles(const struct sim_measured *ms, const char **how)
{
	*how = NULL;
	if (ms->core_cycles >= 0) {
		*how = "counted by the PMU's cycles event";
		return ms->core_cycles;
	}
	if (ms->clock && ms->clock->latency && ms->clock->cycles_per_tick > 0) {
		*how = "TSC ticks x the core clock calibrated with a dependent imul chain "
		       "(modes)";
		return ms->tsc_mode * ms->clock->cycles_per_tick;
	}
	return -1;
}

void sim_mca_predict_print(FILE *f, const struct sim_prediction *pr, const struct sim_measured *ms)
{
	double per = pr->cycles;
	double ns = ms->tsc_hz ? ms->tsc_ticks / (double)ms->tsc_hz * 1e9 : 0;
	const char *how;
	double cyc = sim_measured_cycles(ms, &how);

	fprintf(f,
		"\n  predicted by llvm-mca -mcpu=%s (%s), the body repeated 1000 times (%s):\n"
		"    %.2f cycles an execution of the body (%.2f instructions a cycle)\n",
		pr->mcpu, pr->cpu, tool("llvm-mca") ?: "?", per, pr->ipc);
	if (ms->core_cycles >= 0) {
		fprintf(f,
			"  measured: %.2f core cycles an execution (median of the PMU's cycles "
			"event, counted), %.2fx the prediction\n",
			ms->core_cycles, per > 0 ? ms->core_cycles / per : 0);
		return;
	}
	if (cyc >= 0) {
		const struct pmon_bench_clock *k = ms->clock;
		char mca[200] = "";
		if (ms->mca_chain > 0)
			snprintf(mca, sizeof(mca), "; llvm-mca -mcpu=%s: %.2f%s", pr->mcpu,
				 ms->mca_chain,
				 ms->mca_chain > k->latency + 0.1 ||
						 ms->mca_chain < k->latency - 0.1
					 ? ", its model differs"
					 : "");
		fprintf(f,
			"  measured: %.2f core cycles an execution, %.2fx the prediction: %.2f TSC "
			"ticks x %.3f\n"
			"    core cycles a tick (modes); core clock %.2f GHz, calibrated with a "
			"dependent\n"
			"    '%s' chain timed beside each sample (%.2f TSC ticks an instruction, "
			"latency %u\n"
			"    cycles%s); TSC %.4f GHz\n"
			"    (sample by sample: median %.2f cycles, from %.2f to %.2f)\n",
			cyc, per > 0 ? cyc / per : 0, ms->tsc_mode, k->cycles_per_tick,
			(double)ms->tsc_hz * k->cycles_per_tick / 1e9, PMON_BENCH_CLOCK_CHAIN,
			k->ticks.mode, k->latency, mca, (double)ms->tsc_hz / 1e9, k->cycles.median,
			k->cycles.min, k->cycles.max);
		return;
	}
	if (ns <= 0)
		return;
	fprintf(f,
		"  measured: %.2f TSC ticks an execution (median) = %.3f ns at the TSC's "
		"calibrated %.4f GHz\n"
		"    no PMU here counts core cycles: the prediction holds if the core runs at "
		"%.2f GHz\n"
		"    (at the TSC's own frequency the measurement is %.2fx the prediction)\n",
		ms->tsc_ticks, ns, (double)ms->tsc_hz / 1e9, per / ns,
		per > 0 ? ms->tsc_ticks / per : 0);
	if (ms->clock && ms->clock->why[0])
		fprintf(f, "    no core clock calibration: %s\n", ms->clock->why);
}

void sim_measured_set(struct sim_measured *ms, double tsc_ticks, double tsc_mode,
		      double core_cycles, const struct pmon_bench_clock *clock)
{
	uint64_t hz = 0;

	ms->tsc_ticks = tsc_ticks;
	ms->tsc_mode = tsc_mode;
	ms->core_cycles = core_cycles;
	ms->clock = clock;
	ms->mca_chain = 0;
	/* 5 windows of 20 ms against CLOCK_MONOTONIC_RAW (lib/clock) */
	ms->tsc_hz = pmon_tsc_calibrate(20, &hz, NULL) ? 0 : hz;
}

json_t *sim_mca_predict_json(const struct sim_prediction *pr, const struct sim_measured *ms)
{
	json_t *j = json_pack("{s:s, s:s, s:f, s:f}", "mcpu", pr->mcpu, "mcpu_from", pr->cpu,
			      "cycles_per_execution", pr->cycles, "ipc", pr->ipc);
	const char *how;
	double cyc = sim_measured_cycles(ms, &how);

	json_object_set_new(j, "tsc_hz", json_integer((json_int_t)ms->tsc_hz));
	if (ms->tsc_hz && ms->tsc_ticks > 0) {
		double ns = ms->tsc_ticks / (double)ms->tsc_hz * 1e9;
		json_object_set_new(j, "measured_ns", json_real(ns));
		json_object_set_new(j, "core_ghz_if_predicted", json_real(pr->cycles / ns));
	}
	if (ms->core_cycles >= 0)
		json_object_set_new(j, "measured_core_cycles", json_real(ms->core_cycles));
	json_object_set_new(j, "measured_cycles", cyc >= 0 ? json_real(cyc) : json_null());
	json_object_set_new(j, "measured_cycles_from", how ? json_string(how) : json_null());
	json_object_set_new(j, "ratio",
			    cyc >= 0 && pr->cycles > 0 ? json_real(cyc / pr->cycles) : json_null());
	if (ms->clock && ms->core_cycles < 0) {
		const struct pmon_bench_clock *k = ms->clock;
		json_t *c = json_pack("{s:s, s:i}", "chain", PMON_BENCH_CLOCK_CHAIN, "latency",
				      (int)k->latency);
		if (k->latency) {
			json_object_set_new(c, "tsc_ticks_per_instruction",
					    json_real(k->ticks.mode));
			json_object_set_new(c, "chain_ticks",
					    json_pack("{s:f, s:f, s:f, s:f}", "median",
						      k->ticks.median, "mode", k->ticks.mode, "min",
						      k->ticks.min, "mad", k->ticks.mad));
			json_object_set_new(c, "body_cycles_per_sample",
					    json_pack("{s:f, s:f, s:f, s:f}", "median",
						      k->cycles.median, "mode", k->cycles.mode,
						      "min", k->cycles.min, "mad", k->cycles.mad));
			json_object_set_new(c, "core_cycles_per_tick",
					    json_real(k->cycles_per_tick));
			json_object_set_new(c, "core_hz",
					    json_real((double)ms->tsc_hz * k->cycles_per_tick));
			if (ms->mca_chain > 0)
				json_object_set_new(c, "mca_latency", json_real(ms->mca_chain));
		} else {
			json_object_set_new(c, "why", json_string(k->why));
		}
		json_object_set_new(j, "clock_calibration", c);
	}
	return j;
}
