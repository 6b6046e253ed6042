// SPDX-License-Identifier: MIT
/*
 * pmon annotate --mca: the hottest block of the annotated function
 * (lib/sim's pmon_sim__hot_range(): its innermost loop, or its equally
 * executed neighbours in a simulation, or its basic block) through
 * llvm-mca (cli/sim-mca.c). In the annotate module only: it reads the
 * recording with libpmon-report.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "sim.h"
#include <pmon/pmon.h>

/* ---- pmon annotate --mca ------------------------------------------------- */

int sim_mca_annotate(const char *path, const char *symbol, struct pmon_report_opts *ro,
		     struct pmon_annotation *a, bool *exact)
{
	const char *asked = ro->event;
	int err;

	*exact = false;
	/* A simulation's executions are exact counts: sim/instructions/ is
	 * what runs how often, whatever other event was simulated. */
	if (!asked && pmon_sim__is_recording(path) == 1) {
		ro->event = "sim/instructions/";
		err = pmon_annotate(path, symbol, ro, a);
		ro->event = asked;
		if (!err) {
			*exact = true;
			return 0;
		}
	}
	err = pmon_annotate(path, symbol, ro, a);
	if (!err)
		*exact = pmon_sim__is_recording(path) == 1;
	return err;
}

/* Capstone's Intel text ("jne 0x1139", "call 0x1030", "ret"): a control
 * transfer, with its target when direct. */
static bool branch_of(const char *text, uint64_t *target)
{
	size_t m = strcspn(text, " ");
	bool br = text[0] == 'j' || (m >= 4 && !strncmp(text, "loop", 4)) ||
		(m == 4 && !strncmp(text, "call", 4)) || (m >= 3 && !strncmp(text, "ret", 3));

	*target = 0;
	if (br && text[m] == ' ' && !strncmp(text + m + 1, "0x", 2)) {
		char *end;
		errno = 0;
		unsigned long long t = strtoull(text + m + 3, &end, 16);
		if (!errno && *end == '\0')
			*target = t;
	}
	return br;
}

/*
 * The measured cost of the block @start..@last (@ninsn instructions) of
 * @a's function in recording @path: where it samples core (or reference)
 * cycles and instructions, the block's IPC and cycles an iteration
 * (pmon_sim__block_cost()) into *@cycles and @text; else, in @text, the
 * share of @a's samples in the block and why no cycles were measured.
 */
static void block_measured(const char *path, const struct pmon_report_opts *ro,
			   const struct pmon_annotation *a, uint64_t in_block, uint64_t start,
			   uint64_t last, size_t ninsn, char *text, size_t len, double *cycles)
{
	struct pmon_report_opts o = *ro;
	struct pmon_report r;
	const char *cyc = NULL, *ins = NULL;
	bool ref = false;
	char names[200] = "";

	*cycles = -1;
	int n = snprintf(text, len,
			 "%llu of the function's %llu samples fell in the block (%.1f%%)",
			 (unsigned long long)in_block, (unsigned long long)a->samples,
			 a->samples ? 100.0 * (double)in_block / (double)a->samples : 0.0);
	size_t used = n > 0 && (size_t)n < len ? (size_t)n : len - 1;
	o.sz = sizeof(o);
	o.no_stacks = true;
	if (pmon_report_read(path, &o, &r)) {
		snprintf(text + used, len - used, "; no measured cycles: %s", pmon_errdetail());
		return;
	}
	for (size_t e = 0; e < r.nevents; e++) {
		enum pmon_sim_role role = pmon_sim_event_role(r.events[e].name);
		size_t k = strlen(names);
		snprintf(names + k, sizeof(names) - k, "%s%s", k ? ", " : "", r.events[e].name);
		if (role == PMON_SIM_ROLE_INSTRUCTIONS && !ins)
			ins = r.events[e].name;
		else if (role == PMON_SIM_ROLE_CYCLES && (!cyc || ref))
			cyc = r.events[e].name, ref = false;
		else if (role == PMON_SIM_ROLE_REF_CYCLES && !cyc)
			cyc = r.events[e].name, ref = true;
	}
	if (!cyc || !ins) {
		snprintf(text + used, len - used,
			 "; no measured cycles: the recording samples %s, not cycles and "
			 "instructions (hardware events: 'pmon record -e cycles,instructions' "
			 "where a PMU counts them)",
			 names[0] ? names : "no event");
		pmon_report_release(&r);
		return;
	}
	struct pmon_annotation ac = { 0 }, ai = { 0 };
	struct pmon_sim_block_cost c = { 0 };
	o.event = cyc;
	int err = pmon_annotate(path, a->symbol, &o, &ac);
	o.event = ins;
	if (!err)
		err = pmon_annotate(path, a->symbol, &o, &ai);
	if (!err)
		err = pmon_sim__block_cost(&ac, &ai, start, last, ninsn, &c);
	if (err) {
		snprintf(text + used, len - used, "; no measured cycles: %s", pmon_errdetail());
	} else {
		*cycles = c.cycles_per_iteration;
		snprintf(
			text, len,
			"IPC %.2f: %.0f %s over %.0f %s%s in the block, from %llu and %llu samples",
			c.ipc, c.instructions, ins, c.cycles, cyc, ref ? " (reference cycles)" : "",
			(unsigned long long)c.instructions_samples,
			(unsigned long long)c.cycles_samples);
	}
	pmon_annotation_release(&ac);
	pmon_annotation_release(&ai);
	pmon_report_release(&r);
}

int sim_mca_annotation(FILE *f, const struct pmon_annotation *a, bool exact, const char *mcpu,
		       const char *cpuid_file, const char *path, const struct pmon_report_opts *ro)
{
	char m[96], from[160], tmpl[4096], what[320], measured[600];
	struct pmon_sim_insn *in = calloc(a->n ? a->n : 1, sizeof(*in));
	size_t lo, hi, hot;
	int rc = CLI_FAIL;

	if (!in)
		return CLI_FAIL;
	for (size_t i = 0; i < a->n; i++) {
		in[i].addr = a->insn[i].addr;
		in[i].count = exact ? a->insn[i].period : a->insn[i].samples;
		in[i].branch = branch_of(a->insn[i].text, &in[i].target);
	}
	if (pmon_sim__hot_range(in, a->n, exact, &lo, &hi, &hot)) {
		cli_error("--mca: '%s' has no sample", a->symbol);
		free(in);
		return CLI_USAGE;
	}
	if (mcpu) {
		snprintf(m, sizeof(m), "%s", mcpu);
		snprintf(from, sizeof(from), "--mcpu");
	} else if (!sim_mca_cpu(cpuid_file, m, sizeof(m), from, sizeof(from))) {
		free(in);
		return CLI_USAGE;
	}
	if (pmon_spawn_workdir("mca", tmpl, sizeof(tmpl))) {
		cli_error("%s", pmon_errdetail());
		free(in);
		return CLI_FAIL;
	}
	uint64_t in_block = 0, executed = 0;
	for (size_t i = lo; i <= hi; i++) {
		in_block += a->insn[i].samples;
		executed += in[i].count;
	}
	snprintf(what, sizeof(what), "pmon annotate --mca %s", a->symbol);
	double mcycles = -1;
	if (!exact)
		block_measured(path, ro, a, in_block, in[lo].addr, in[hi].addr, hi - lo + 1,
			       measured, sizeof(measured), &mcycles);
	struct sim_mca_block b = { .what = what,
				   .symbol = a->symbol,
				   .obj = a->dso,
				   .start = in[lo].addr,
				   .last = in[hi].addr,
				   .count = exact ? in[hot].count : 0,
				   .count_of = exact ? "simulated" : "sampled",
				   .mcpu = m,
				   .cpu = from,
				   .measured = exact ? NULL : measured,
				   .measured_cycles = mcycles,
				   .executed = exact ? executed : 0 };
	rc = sim_mca_block(f, &b, tmpl);
	char p[4200];
	const char *files[] = { "block.objdump", "block.s", "mca.txt" };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", tmpl, files[i]);
		unlink(p);
	}
	rmdir(tmpl);
	free(in);
	return rc;
}
