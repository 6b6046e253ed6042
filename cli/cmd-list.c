// SPDX-License-Identifier: MIT
/*
 * pmon list: every event name pmon accepts, grouped by source (generic,
 * cache, software, sysfs PMU aliases, tracepoints, libpfm4), with whether it
 * can be counted on this machine and why not.
 */
#include <errno.h>
#include <getopt.h>
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

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pmon list [--json] [FILTER]\n\n"
		"Lists every event name pmon accepts, by source; FILTER keeps names (or PMUs)\n"
		"containing it, case-insensitively. Tracepoints need root (tracefs).\n");
}

int cmd_list(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct list_ctx c = { .f = stdout, .last_src = -1 };
	const char *filter = NULL;
	long n;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "+jh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			c.json = true;
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			usage(stderr);
			return CLI_USAGE;
		}
	}
	if (optind < argc)
		filter = argv[optind++];
	if (optind < argc) {
		cli_error("one filter at most (got '%s' too)", argv[optind]);
		return CLI_USAGE;
	}
	c.core = access("/sys/bus/event_source/devices/cpu/type", F_OK) == 0 ||
		access("/sys/bus/event_source/devices/cpu_core/type", F_OK) == 0;
	n = pmon_event_list_names(NULL, filter, cb, &c);
	if (n < 0) {
		cli_error("cannot list events: %s", pmon_strerror((int)n));
		return CLI_FAIL;
	}
	if (!n && filter) {
		cli_error("no event matches '%s'", filter);
		return CLI_USAGE;
	}
	return CLI_OK;
}
