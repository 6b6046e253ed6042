// SPDX-License-Identifier: MIT
/*
 * pmon list: every event name pmon accepts, grouped by source (generic,
 * cache, software, sysfs PMU aliases, tracepoints, libpfm4), with whether it
 * can be counted on this machine and why not.
 */
#define _GNU_SOURCE /* strcasestr */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include <pmon/pmon.h>

struct list_ctx {
	FILE *f;
	bool json;
	bool core;
	int last_src;
	long n;
};

static const char *section(enum pmon_event_source s)
{
	switch (s) {
	case PMON_EV_HARDWARE:
		return "Generic hardware events";
	case PMON_EV_CACHE:
		return "Generic cache events";
	case PMON_EV_SOFTWARE:
		return "Software events";
	case PMON_EV_ALIAS:
		return "Kernel PMU events (sysfs)";
	case PMON_EV_TRACEPOINT:
		return "Tracepoints";
	case PMON_EV_PFM:
		return "CPU-specific events (libpfm4)";
	default:
		return "Other";
	}
}

static void cb(void *p, enum pmon_event_source src, const char *pmu, const char *name,
	       const char *desc)
{
	struct list_ctx *c = p;
	bool usable = !((src == PMON_EV_HARDWARE || src == PMON_EV_CACHE) && !c->core);

	c->n++;
	if (c->json) {
		json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:b}", "name", name, "source",
				      pmon_event_source_name(src), "pmu", pmu, "description", desc,
				      "usable", usable);
		if (!usable)
			json_object_set_new(j, "reason",
					    json_string("this machine exposes no hardware PMU"));
		json_dumpf(j, c->f, JSON_COMPACT | JSON_PRESERVE_ORDER);
		fputc('\n', c->f);
		json_decref(j);
		return;
	}
	if ((int)src != c->last_src) {
		fprintf(c->f, "%s%s%s\n", c->last_src < 0 ? "" : "\n", section(src),
			usable ? ""
			       : "  [not usable here: this machine exposes no hardware PMU, see "
				 "'pmon info']");
		c->last_src = (int)src;
	}
	if (desc && *desc && src != PMON_EV_HARDWARE && src != PMON_EV_CACHE &&
	    src != PMON_EV_SOFTWARE)
		fprintf(c->f, "  %-44s %s\n", name, desc);
	else
		fprintf(c->f, "  %s\n", name);
}

/* The events pmon simulate computes (docs/simulate.md), marked as simulated. */
static long list_simulated(struct list_ctx *c, const char *filter)
{
	const struct pmon_sim_event *tab;
	size_t n = pmon_sim_events(&tab);
	long shown = 0;

	for (size_t i = 0; i < n; i++) {
		if (filter && !strcasestr(tab[i].name, filter) &&
		    !strcasestr(tab[i].engine, filter))
			continue;
		if (c->json) {
			json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:b, s:b, s:s, s:s}", "name",
					      tab[i].name, "source", "simulated", "pmu", "sim",
					      "description", tab[i].desc, "usable", 1, "simulated",
					      1, "engine", "callgrind", "alias", tab[i].engine);
			json_dumpf(j, c->f, JSON_COMPACT | JSON_PRESERVE_ORDER);
			fputc('\n', c->f);
			json_decref(j);
		} else {
			if (!shown)
				fprintf(c->f,
					"%sSimulated events (pmon simulate: valgrind's callgrind, "
					"not hardware)\n",
					c->last_src < 0 ? "" : "\n");
			char desc[160];
			snprintf(desc, sizeof(desc), "[simulated] %s (%s)", tab[i].desc,
				 tab[i].engine);
			fprintf(c->f, "  %-44s %s\n", tab[i].name, desc);
		}
		shown++;
	}
	return shown;
}

int cmd_list(int argc, char **argv)
{
	struct list_ctx c = { .f = stdout, .last_src = -1 };
	const struct cli_option options[] = {
		CLI_OPT_TEXT("Lists every event name pmon accepts, by source; FILTER keeps names "
			     "(or PMUs)\n"
			     "containing it, case-insensitively. Tracepoints need root (tracefs)."),
		CLI_OPT_FLAG('j', "json", &c.json,
			     "one JSON object per event: name, source, pmu, description, usable"),
		CLI_OPT_END(),
	};
	const char *filter = NULL;
	long n;
	int argi = cli_parse_options("list", "usage: pmon list [--json] [FILTER]", options,
				     CLI_PARSE_STOP_AT_OPERAND, argc, argv);

	if (argi <= 0)
		return -argi;
	if (argi < argc)
		filter = argv[argi++];
	if (argi < argc) {
		cli_error("one filter at most (got '%s' too)", argv[argi]);
		return CLI_USAGE;
	}
	c.core = pmon_kernel_has_core_pmu(NULL);
	n = pmon_event_list_names(NULL, filter, cb, &c);
	if (n < 0) {
		cli_error("cannot list events: %s", pmon_strerror((int)n));
		return CLI_FAIL;
	}
	n += list_simulated(&c, filter);
	/* Tracepoints this user cannot see are not listed: say so, and why. */
	bool no_tp = pmon_event_tracepoints_listable(NULL) != 0;
	if (!n && filter) {
		if (no_tp)
			cli_error("no event matches '%s' (tracepoints are not listed: %s)", filter,
				  pmon_errdetail());
		else
			cli_error("no event matches '%s'", filter);
		return CLI_USAGE;
	}
	if (no_tp)
		cli_warn("tracepoints are not listed: %s", pmon_errdetail());
	return CLI_OK;
}
