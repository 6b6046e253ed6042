// SPDX-License-Identifier: MIT
/*
 * pmon annotate --mca's side of the report library: an annotation with
 * exact counts where the recording is a simulation, the hottest block of
 * the annotated function (lib/sim's pmon_sim__hot_range() over Capstone's
 * text), and that block's measured cost where the recording samples both
 * cycles and instructions (lib/sim's pmon_sim__block_cost()). The CLI
 * (cli/sim-annotate.c) prints; llvm-mca runs through lib/sim.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include <pmon/pmon.h>

int pmon_annotate_exact(const char *path, const char *symbol, const struct pmon_report_opts *opts,
			struct pmon_annotation *out, bool *exact)
{
	int err;

	*exact = false;
	/* A simulation's executions are exact counts: sim/instructions/ is
	 * what runs how often, whatever other event was simulated. */
	if ((!opts || !opts->event) && pmon_sim__is_recording(path) == 1) {
		struct pmon_report_opts o = { .sz = sizeof(o) };
		if (opts)
			o = *opts;
		o.event = "sim/instructions/";
		if (!pmon_annotate(path, symbol, &o, out)) {
			*exact = true;
			return 0;
		}
	}
	err = pmon_annotate(path, symbol, opts, out);
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

int pmon_annotate_hot_block(const struct pmon_annotation *a, bool exact,
			    struct pmon_annotate_block *b)
{
	struct pmon_sim_insn *in = calloc(a->n ? a->n : 1, sizeof(*in));
	int err;

	memset(b, 0, sizeof(*b));
	if (!in)
		return -ENOMEM;
	for (size_t i = 0; i < a->n; i++) {
		in[i].addr = a->insn[i].addr;
		in[i].count = exact ? a->insn[i].period : a->insn[i].samples;
		in[i].branch = branch_of(a->insn[i].text, &in[i].target);
	}
	err = pmon_sim__hot_range(in, a->n, exact, &b->lo, &b->hi, &b->hot);
	if (!err) {
		b->start = in[b->lo].addr;
		b->last = in[b->hi].addr;
		b->count = in[b->hot].count;
		for (size_t i = b->lo; i <= b->hi; i++) {
			b->in_block += a->insn[i].samples;
			b->executed += exact ? in[i].count : 0;
		}
	}
	free(in);
	return err;
}

/* The recording's events that measure cycles and instructions: core
 * cycles preferred to reference ones. Return: 0, or -ENOENT with the
 * detail naming what it samples instead. */
static int pick_events(const struct pmon_report *r, struct pmon_annotate_block *b)
{
	char names[200] = "";

	for (size_t e = 0; e < r->nevents; e++) {
		const char *name = r->events[e].name;
		enum pmon_sim_role role = pmon_sim_event_role(name);
		size_t k = strlen(names);
		snprintf(names + k, sizeof(names) - k, "%s%s", k ? ", " : "", name);
		if (role == PMON_SIM_ROLE_INSTRUCTIONS && !b->instructions_event[0]) {
			pmon__strlcpy(b->instructions_event, name, sizeof(b->instructions_event));
		} else if (role == PMON_SIM_ROLE_CYCLES && (!b->cycles_event[0] || b->ref_cycles)) {
			pmon__strlcpy(b->cycles_event, name, sizeof(b->cycles_event));
			b->ref_cycles = false;
		} else if (role == PMON_SIM_ROLE_REF_CYCLES && !b->cycles_event[0]) {
			pmon__strlcpy(b->cycles_event, name, sizeof(b->cycles_event));
			b->ref_cycles = true;
		}
	}
	if (b->cycles_event[0] && b->instructions_event[0])
		return 0;
	return pmon__err(-ENOENT, "the recording samples %s, not cycles and instructions",
			 names[0] ? names : "no event");
}

int pmon_annotate_block_cost(const char *path, const struct pmon_report_opts *opts,
			     const struct pmon_annotation *a, struct pmon_annotate_block *b)
{
	struct pmon_report_opts o = { .sz = sizeof(o) };
	struct pmon_annotation ac = { 0 }, ai = { 0 };
	struct pmon_report r;
	int err;

	if (opts)
		o = *opts;
	o.sz = sizeof(o);
	o.no_stacks = true;
	b->cycles_event[0] = b->instructions_event[0] = '\0';
	b->ref_cycles = false;
	if ((err = pmon_report_read(path, &o, &r)))
		return err;
	if ((err = pick_events(&r, b))) {
		pmon_report_release(&r);
		return err;
	}
	pmon_report_release(&r);
	o.event = b->cycles_event;
	err = pmon_annotate(path, a->symbol, &o, &ac);
	o.event = b->instructions_event;
	if (!err)
		err = pmon_annotate(path, a->symbol, &o, &ai);
	if (!err)
		err = pmon_sim__block_cost(&ac, &ai, b->start, b->last, b->hi - b->lo + 1,
					   &b->cost);
	pmon_annotation_release(&ac);
	pmon_annotation_release(&ai);
	return err;
}
