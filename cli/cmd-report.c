// SPDX-License-Identifier: MIT
/*
 * pmon report: where the samples of a recording fell, by symbol, DSO or
 * source line, as text or JSON; and the call stacks as folded lines, a
 * flame graph SVG, speedscope JSON or a pprof profile.
 */
#include <errno.h>
#include <getopt.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include <pmon/pmon.h>

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pmon report [-i FILE] [--sort symbol|dso|line|caller|callee] [--limit N]\n"
		"                   [--min-percent P] [-o OUT]\n"
		"                   [--format text|json|folded|flamegraph|speedscope|pprof]\n"
		"                   [--width PX] [--event E]\n\n"
		"  -i FILE        the recording (default pmon.data)\n"
		"  --sort         by function (default), by file mapped, by source line; or\n"
		"                 the call graph: caller (from the outermost callers down),\n"
		"                 callee (each sampled function, then its callers); nodes\n"
		"                 under --min-percent P of the samples (default 0.5) left out\n"
		"  --format       text and json list the entries; the others export the call\n"
		"                 stacks (record with -g; else each stack is the sampled\n"
		"                 function alone):\n"
		"                   folded      'outer;...;leaf count' lines (flamegraph.pl)\n"
		"                   flamegraph  a self-contained SVG (--width, default 1200)\n"
		"                   speedscope  https://www.speedscope.app JSON\n"
		"                   pprof       gzipped profile.proto for go tool pprof (-o)\n"
		"  --limit N      text/json: the N entries with most samples (per event)\n"
		"  --event E      with several events recorded: the one whose stacks the\n"
		"                 call graph and exports show (default: the first)\n"
		"  --no-inline    stacks without the inlined functions (by default each\n"
		"                 address's inlined callees are frames too, from DWARF)\n"
		"  --debug-dir D  look for debuginfo by build id in D/.build-id/ first\n"
		"                 (then /usr/lib/debug): stripped or rebuilt binaries\n"
		"  -o OUT         write to OUT instead of standard output\n");
}

/* An entry's share of its own event's samples. */
static double share(const struct pmon_report *r, const struct pmon_report_entry *e)
{
	uint64_t of = e->event < r->nevents ? r->events[e->event].samples : r->samples;

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
		json_dumpf(j, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', out);
		json_decref(j);
		return CLI_OK;
	}
	/* One table per event, as perf report prints one per event. */
	for (size_t ev = 0; ev < r->nevents; ev++) {
		if (ev)
			fputc('\n', out);
		fprintf(out, "# pmon report: %llu samples of %s",
			(unsigned long long)r->events[ev].samples, r->events[ev].name);
		if (r->header.command[0])
			fprintf(out, " in '%s'", r->header.command);
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
				fprintf(out, "%-24s ", en->line);
			fprintf(out, "%-*s%s\n", sort == PMON_SORT_DSO ? 0 : 41,
				sort == PMON_SORT_DSO ? "" : en->symbol, en->dso);
		}
	}
	return CLI_OK;
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "sort", required_argument, NULL, 's' },
		{ "format", required_argument, NULL, 'f' },
		{ "limit", required_argument, NULL, 'l' },
		{ "width", required_argument, NULL, 'w' },
		{ "min-percent", required_argument, NULL, 'm' },
		{ "debug-dir", required_argument, NULL, 'D' },
		{ "no-inline", no_argument, NULL, 'N' },
		{ "event", required_argument, NULL, 'e' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const formats[] = { "text",	     "json",	   "folded",
					       "flamegraph", "speedscope", "pprof" };
	const char *in = "pmon.data", *fmt = "text", *outpath = NULL, *debug_dir = NULL;
	const char *stack_event = NULL;
	enum pmon_report_sort sort = PMON_SORT_SYMBOL;
	unsigned long limit = 0, width = 1200;
	int graph = 0; /* 1: caller, 2: callee */
	bool inl = true;
	double min_pct = 0.5;
	struct pmon_report r;
	int c, rc = CLI_OK;
	FILE *out;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			in = optarg;
			break;
		case 's':
			if (!strcmp(optarg, "dso"))
				sort = PMON_SORT_DSO;
			else if (!strcmp(optarg, "line"))
				sort = PMON_SORT_LINE;
			else if (!strcmp(optarg, "caller") || !strcmp(optarg, "callee"))
				graph = optarg[5] == 'r' ? 1 : 2;
			else if (strcmp(optarg, "symbol")) {
				cli_error("--sort '%s': symbol, dso, line, caller or callee",
					  optarg);
				return CLI_USAGE;
			}
			break;
		case 'm': {
			char *end;
			min_pct = strtod(optarg, &end);
			if (end == optarg || *end || !(min_pct >= 0 && min_pct <= 100)) {
				cli_error("--min-percent '%s': a number from 0 to 100", optarg);
				return CLI_USAGE;
			}
			break;
		}
		case 'f':
			fmt = NULL;
			for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
				if (!strcmp(optarg, formats[i]))
					fmt = formats[i];
			if (!fmt) {
				cli_error("--format '%s': text, json, folded, flamegraph, "
					  "speedscope or pprof",
					  optarg);
				return CLI_USAGE;
			}
			break;
		case 'l':
			if (!cli_parse_uint(optarg, 1000000, "--limit", &limit))
				return CLI_USAGE;
			break;
		case 'w':
			if (!cli_parse_uint(optarg, 100000, "--width", &width))
				return CLI_USAGE;
			if (width < 200) {
				cli_error("--width %lu: at least 200 pixels", width);
				return CLI_USAGE;
			}
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'D':
			debug_dir = optarg;
			break;
		case 'N':
			inl = false;
			break;
		case 'e':
			stack_event = optarg;
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
		cli_error("unexpected argument '%s'", argv[optind]);
		return CLI_USAGE;
	}
	struct stat dst;
	if (debug_dir && (stat(debug_dir, &dst) || !S_ISDIR(dst.st_mode))) {
		cli_error("--debug-dir '%s': %s", debug_dir,
			  errno == ENOENT ? "no such directory" : "not a directory");
		return CLI_USAGE;
	}
	if (!strcmp(fmt, "pprof") && (!outpath || !strcmp(outpath, "-")) && isatty(1)) {
		cli_error("--format pprof writes gzipped binary: give -o FILE");
		return CLI_USAGE;
	}
	bool stacks = graph || (strcmp(fmt, "text") && strcmp(fmt, "json"));
	struct pmon_report_opts ro = { .sz = sizeof(ro),
				       .sort = sort,
				       .debug_dir = debug_dir,
				       .inlines = inl && stacks,
				       .event = stack_event };
	int err = pmon_report_read(in, &ro, &r);
	if (err) {
		cli_error("%s", pmon_errdetail());
		return err == -ENOENT || err == -PMON_ERRNO__PARSE ? CLI_USAGE : CLI_FAIL;
	}
	if (r.truncated)
		cli_warn("%s: %s", in, r.warning);
	if (r.stale[0])
		cli_warn("%s", r.stale);
	if (stacks && !r.callchains && r.samples)
		cli_warn("no call chains in %s (record with -g): each stack is the sampled "
			 "function alone",
			 in);
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
		err = pmon_report_write_speedscope(&r, out);
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
	}
	if (cli_close_output(out, outpath) != CLI_OK)
		rc = CLI_FAIL;
	pmon_report_release(&r);
	return rc;
}
