// SPDX-License-Identifier: MIT
/*
 * pmon report: where the samples of a recording fell, by symbol, DSO or
 * source line, as text or JSON; and the call stacks as folded lines, a
 * flame graph SVG, speedscope JSON or a pprof profile.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include <pmon/pmon.h>

/* --min-percent P: double *, from 0 to 100. */
static int opt_percent(const struct cli_option *opt, const char *arg)
{
	char *end;
	double p = strtod(arg, &end);

	if (end == arg || *end || !(p >= 0 && p <= 100)) {
		cli_error("--min-percent '%s': a number from 0 to 100", arg);
		return CLI_USAGE;
	}
	*(double *)opt->value = p;
	return CLI_OK;
}

/* An entry's share of its own event: by period (the events its samples
 * stand for), as perf's percentages are, since samples may carry unequal
 * periods (frequency mode; pmon simulate, whose samples carry counts); by
 * samples where the recording has no periods. */
static double share(const struct pmon_report *r, const struct pmon_report_entry *e)
{
	uint64_t period = e->event < r->nevents ? r->events[e->event].period : r->period;
	uint64_t of = e->event < r->nevents ? r->events[e->event].samples : r->samples;

	if (period)
		return 100.0 * (double)e->period / (double)period;
	return of ? 100.0 * (double)e->samples / (double)of : 0.0;
}

static int print_entries(FILE *out, const struct pmon_report *r, enum pmon_report_sort sort,
			 size_t limit, bool json)
{
	if (json) {
		json_t *a = json_array(), *evs = json_array();
		size_t shown[16] = { 0 };
		for (size_t i = 0; i < r->n; i++) {
			const struct pmon_report_entry *en = &r->e[i];
			if (en->event >= r->nevents || (limit && shown[en->event]++ >= limit))
				continue;
			json_t *e =
				json_pack("{s:s, s:s, s:s, s:I, s:I, s:f}", "event",
					  r->events[en->event].name, "symbol", en->symbol, "dso",
					  en->dso, "samples", (json_int_t)en->samples, "period",
					  (json_int_t)en->period, "percent", share(r, en));
			if (sort == PMON_SORT_LINE)
				json_object_set_new(e, "line", json_string(en->line));
			json_array_append_new(a, e);
		}
		for (size_t i = 0; i < r->nevents; i++)
			json_array_append_new(
				evs,
				json_pack("{s:s, s:I, s:I, s:I, s:I}", "name", r->events[i].name,
					  "samples", (json_int_t)r->events[i].samples, "period",
					  (json_int_t)r->events[i].period, "sample_period",
					  (json_int_t)r->events[i].sample_period, "freq",
					  (json_int_t)r->events[i].freq));
		json_t *j = json_pack("{s:s, s:s, s:I, s:I, s:b, s:o, s:o}", "event",
				      r->header.event, "command", r->header.command, "samples",
				      (json_int_t)r->samples, "lost", (json_int_t)r->lost,
				      "truncated", r->truncated, "events", evs, "entries", a);
		if (r->warning[0])
			json_object_set_new(
				j, "damaged",
				json_pack("{s:I, s:I, s:I, s:s}", "chunks",
					  (json_int_t)r->damaged_chunks, "bytes",
					  (json_int_t)r->damaged_bytes, "samples_estimate",
					  (json_int_t)r->damaged_samples, "warning", r->warning));
		json_dumpf(j, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', out);
		json_decref(j);
		return CLI_OK;
	}
	/* One table per event, as perf report prints one per event. Every
	 * string from the file is printed with its control bytes masked: a
	 * crafted recording must not drive the terminal (issue #31). */
	char p1[4096], p2[4096], p3[512];
	for (size_t ev = 0; ev < r->nevents; ev++) {
		if (ev)
			fputc('\n', out);
		fprintf(out, "# pmon report: %llu samples of %s",
			(unsigned long long)r->events[ev].samples,
			cli_printable(r->events[ev].name, p1, sizeof(p1)));
		if (r->header.command[0])
			fprintf(out, " in '%s'", cli_printable(r->header.command, p1, sizeof(p1)));
		if (r->lost && !ev)
			fprintf(out, "; %llu LOST", (unsigned long long)r->lost);
		fprintf(out, "\n#\n# %8s %10s  ", "percent", "samples");
		if (sort == PMON_SORT_LINE)
			fprintf(out, "%-24s ", "line");
		fprintf(out, "%-*s%s\n", sort == PMON_SORT_DSO ? 0 : 41,
			sort == PMON_SORT_DSO ? "" : "symbol", "dso");
		size_t shown = 0;
		for (size_t i = 0; i < r->n; i++) {
			const struct pmon_report_entry *en = &r->e[i];
			if (en->event != ev || (limit && shown >= limit))
				continue;
			shown++;
			fprintf(out, "  %7.2f%% %10llu  ", share(r, en),
				(unsigned long long)en->samples);
			if (sort == PMON_SORT_LINE)
				fprintf(out, "%-24s ", cli_printable(en->line, p3, sizeof(p3)));
			fprintf(out, "%-*s%s\n", sort == PMON_SORT_DSO ? 0 : 41,
				sort == PMON_SORT_DSO ? ""
						      : cli_printable(en->symbol, p1, sizeof(p1)),
				cli_printable(en->dso, p2, sizeof(p2)));
		}
	}
	return CLI_OK;
}

/*
 * pmon simulate --compare's view of a recording (the pmon executable
 * reaches it through cli_module_symbol(), cli/pmon-ui.map): the report's
 * rows by symbol as plain data, for lib/sim's join, which reads no
 * recording itself. Return: 0, or pmon_report_read()'s error (detail set).
 */
int report_sim_profile(const char *path, struct pmon_sim_profile *out)
{
	struct pmon_report_opts ro = { .sz = sizeof(ro), .no_stacks = true };
	struct pmon_report r;
	int err = pmon_report_read(path, &ro, &r);

	memset(out, 0, sizeof(*out));
	if (err)
		return err;
	out->rows = calloc(r.n + 1, sizeof(*out->rows));
	if (!out->rows) {
		pmon_report_release(&r);
		return -ENOMEM;
	}
	for (size_t i = 0; i < r.nevents && i < 16; i++)
		snprintf(out->events[i], sizeof(out->events[i]), "%s", r.events[i].name);
	out->nevents = r.nevents < 16 ? r.nevents : 16;
	for (size_t i = 0; i < r.n; i++) {
		struct pmon_sim_profile_row *w = &out->rows[out->n++];
		w->event = r.e[i].event;
		snprintf(w->symbol, sizeof(w->symbol), "%s", r.e[i].symbol);
		snprintf(w->dso, sizeof(w->dso), "%s", r.e[i].dso);
		w->period = (double)r.e[i].period;
	}
	out->samples = r.samples;
	snprintf(out->warning, sizeof(out->warning), "%s", r.warning);
	pmon_report_release(&r);
	return 0;
}

int cmd_report(int argc, char **argv)
{
	static const char *const formats[] = { "text",	     "json",  "folded", "flamegraph",
					       "speedscope", "pprof", NULL };
	static const char *const sorts[] = { "symbol", "dso", "line", "caller", "callee", NULL };
	static const enum pmon_report_sort sort_by[] = { PMON_SORT_SYMBOL, PMON_SORT_DSO,
							 PMON_SORT_LINE, PMON_SORT_SYMBOL,
							 PMON_SORT_SYMBOL };
	const char *in = "pmon.data", *outpath = NULL, *debug_dir = NULL;
	const char *stack_event = NULL;
	unsigned long limit = 0, width = 1200;
	int fmti = 0, sorti = 0;
	bool no_inline = false;
	double min_pct = 0.5;
	const struct cli_option options[] = {
		CLI_OPT_STRING('i', "input", &in, "FILE", "the recording (default pmon.data)"),
		CLI_OPT_CHOICE(0, "sort", &sorti, "KEY", sorts,
			       "by function (default), by file mapped, by source line; or\n"
			       "the call graph: caller (from the outermost callers down),\n"
			       "callee (each sampled function, then its callers)"),
		CLI_OPT_CALLBACK(0, "min-percent", &min_pct, "P", opt_percent,
				 "the call graph leaves out nodes under P% of the samples\n"
				 "(default 0.5)"),
		CLI_OPT_CHOICE(0, "format", &fmti, "F", formats,
			       "text and json list the entries; the others export the\n"
			       "call stacks (record with -g; else each stack is the\n"
			       "sampled function alone):\n"
			       "  folded      'outer;...;leaf count' (flamegraph.pl)\n"
			       "  flamegraph  a self-contained SVG (--width)\n"
			       "  speedscope  https://www.speedscope.app JSON\n"
			       "  pprof       gzipped profile.proto: go tool pprof (-o)"),
		CLI_OPT_UINT_MIN(0, "width", &width, "PX", 200, 100000, "at least 200 pixels",
				 "the flame graph's width (default 1200)"),
		CLI_OPT_UINT(0, "limit", &limit, "N", 1000000,
			     "text/json: the N entries with most samples (per event)"),
		CLI_OPT_STRING(0, "event", &stack_event, "E",
			       "with several events recorded: the one whose stacks the\n"
			       "call graph and exports show (default: the first)"),
		CLI_OPT_FLAG(0, "no-inline", &no_inline,
			     "stacks without the inlined functions (by default each\n"
			     "address's inlined callees are frames too, from DWARF)"),
		CLI_OPT_DEBUG_DIR(&debug_dir),
		CLI_OPT_OUTPUT(&outpath, "OUT", "write to OUT instead of standard output"),
		CLI_OPT_END(),
	};
	struct pmon_report r;
	FILE *out;
	int rc = cli_parse_options(
		"report",
		"usage: pmon report [-i FILE] [--sort symbol|dso|line|caller|callee] [--limit N]\n"
		"                   [--min-percent P] [-o OUT]\n"
		"                   [--format text|json|folded|flamegraph|speedscope|pprof]\n"
		"                   [--width PX] [--event E]",
		options, CLI_PARSE_NO_OPERANDS, argc, argv);

	if (rc <= 0)
		return -rc;
	rc = CLI_OK;
	const char *fmt = formats[fmti];
	enum pmon_report_sort sort = sort_by[sorti];
	int graph = sorti >= 3 ? sorti - 2 : 0; /* 1: caller, 2: callee */
	bool inl = !no_inline;
	if (!strcmp(fmt, "pprof") && (!outpath || !strcmp(outpath, "-")) && isatty(1)) {
		cli_error("--format pprof writes gzipped binary: give -o FILE");
		return CLI_USAGE;
	}
	bool stacks = graph || (strcmp(fmt, "text") && strcmp(fmt, "json"));
	struct pmon_report_opts ro = { .sz = sizeof(ro),
				       .sort = sort,
				       .debug_dir = debug_dir,
				       .inlines = inl && stacks,
				       .no_stacks = !stacks,
				       .event = stack_event };
	int err = pmon_report_read(in, &ro, &r);
	if (err) {
		cli_lib_error(err);
		return err == -ENOENT || err == -PMON_ERRNO__PARSE ? CLI_USAGE : CLI_FAIL;
	}
	if (r.warning[0])
		cli_warn("%s: %s", in, r.warning);
	if (r.stale[0])
		cli_warn("%s", r.stale);
	if (stacks && !r.callchains && r.samples)
		cli_warn("no call chains in %s (record with -g): each stack is the sampled "
			 "function alone",
			 in);
	if (cli_output_is_input(outpath, in, "-o")) {
		pmon_report_release(&r);
		return CLI_USAGE;
	}
	out = cli_open_output(outpath);
	if (!out) {
		pmon_report_release(&r);
		return CLI_USAGE;
	}
	if (!strcmp(fmt, "folded"))
		err = pmon_report_write_folded(&r, out);
	else if (!strcmp(fmt, "flamegraph"))
		err = pmon_report_write_flamegraph(&r, out, (unsigned)width);
	else if (!strcmp(fmt, "speedscope"))
		err = pmon_report_write_speedscope_samples(&r, in, &ro, out);
	else if (!strcmp(fmt, "pprof"))
		err = pmon_report_write_pprof(&r, out);
	else if (graph)
		err = pmon_report_write_callgraph(&r, out, graph == 2, min_pct,
						  !strcmp(fmt, "json"));
	else
		print_entries(out, &r, sort, limit, !strcmp(fmt, "json"));
	if (err && err != -EIO) {
		cli_error("--format %s: %s", fmt, strerror(-err));
		rc = CLI_FAIL;
		cli_abandon_output(out); /* a half export never replaces the file */
	} else if (cli_close_output(out, outpath) != CLI_OK) {
		rc = CLI_FAIL;
	}
	pmon_report_release(&r);
	return rc;
}
