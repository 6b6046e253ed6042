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

/* What was measured in @b's block, in @text: the block's IPC where the
 * recording samples cycles and instructions (its cycles an iteration in
 * *@cycles), else its share of the function's samples and why no cycles. */
static void block_measured(const char *path, const struct pmon_report_opts *ro,
			   const struct pmon_annotation *a, struct pmon_annotate_block *b,
			   char *text, size_t len, double *cycles)
{
	int err = pmon_annotate_block_cost(path, ro, a, b);

	*cycles = -1;
	if (!err) {
		*cycles = b->cost.cycles_per_iteration;
		snprintf(
			text, len,
			"IPC %.2f: %.0f %s over %.0f %s%s in the block, from %llu and %llu samples",
			b->cost.ipc, b->cost.instructions, b->instructions_event, b->cost.cycles,
			b->cycles_event, b->ref_cycles ? " (reference cycles)" : "",
			(unsigned long long)b->cost.instructions_samples,
			(unsigned long long)b->cost.cycles_samples);
		return;
	}
	snprintf(text, len,
		 "%llu of the function's %llu samples fell in the block (%.1f%%); no measured "
		 "cycles: %s%s",
		 (unsigned long long)b->in_block, (unsigned long long)a->samples,
		 a->samples ? 100.0 * (double)b->in_block / (double)a->samples : 0.0,
		 pmon_errdetail(),
		 err == -ENOENT ? " (hardware events: 'pmon record -e cycles,instructions' "
				  "where a PMU counts them)"
				: "");
}

int sim_mca_annotation(FILE *f, const struct pmon_annotation *a, bool exact, const char *mcpu,
		       const char *cpuid_file, const char *path, const struct pmon_report_opts *ro)
{
	char m[96], from[160], tmpl[4096], what[320], measured[600];
	struct pmon_annotate_block blk;
	int rc = CLI_FAIL;

	if (pmon_annotate_hot_block(a, exact, &blk)) {
		cli_error("--mca: '%s' has no sample", a->symbol);
		return CLI_USAGE;
	}
	if (mcpu) {
		snprintf(m, sizeof(m), "%s", mcpu);
		snprintf(from, sizeof(from), "--mcpu");
	} else if (!sim_mca_cpu(cpuid_file, m, sizeof(m), from, sizeof(from))) {
		return CLI_USAGE;
	}
	if (pmon_spawn_workdir("mca", tmpl, sizeof(tmpl))) {
		cli_error("%s", pmon_errdetail());
		return CLI_FAIL;
	}
	snprintf(what, sizeof(what), "pmon annotate --mca %s", a->symbol);
	double mcycles = -1;
	if (!exact)
		block_measured(path, ro, a, &blk, measured, sizeof(measured), &mcycles);
	struct sim_mca_block b = { .what = what,
				   .symbol = a->symbol,
				   .obj = a->dso,
				   .start = blk.start,
				   .last = blk.last,
				   .count = exact ? blk.count : 0,
				   .count_of = exact ? "simulated" : "sampled",
				   .mcpu = m,
				   .cpu = from,
				   .measured = exact ? NULL : measured,
				   .measured_cycles = mcycles,
				   .executed = exact ? blk.executed : 0 };
	rc = sim_mca_block(f, &b, tmpl);
	char p[4200];
	const char *files[] = { "block.objdump", "block.s", "mca.txt" };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", tmpl, files[i]);
		unlink(p);
	}
	rmdir(tmpl);
	return rc;
}
