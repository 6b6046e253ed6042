// SPDX-License-Identifier: MIT
/*
 * pmon report: where the samples of a recording fell, by symbol or DSO,
 * as text, JSON, or folded stacks (FlameGraph's input).
 */
#include <errno.h>
#include <getopt.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include <pmon/pmon.h>

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pmon report [-i FILE] [--sort symbol|dso] [--format text|json|folded]\n"
		"                   [--limit N] [-o OUT]\n\n"
		"folded: 'frame;frame;leaf count' per line (record with -g).\n");
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "sort", required_argument, NULL, 's' },
		{ "format", required_argument, NULL, 'f' },
		{ "limit", required_argument, NULL, 'l' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *in = "pmon.data", *fmt = "text", *outpath = NULL;
	enum pmon_report_sort sort = PMON_SORT_SYMBOL;
	unsigned long limit = 0;
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
			else if (strcmp(optarg, "symbol")) {
				cli_error("--sort '%s': symbol or dso", optarg);
				return CLI_USAGE;
			}
			break;
		case 'f':
			if (strcmp(optarg, "text") && strcmp(optarg, "json") &&
			    strcmp(optarg, "folded")) {
				cli_error("--format '%s': text, json or folded", optarg);
				return CLI_USAGE;
			}
			fmt = optarg;
			break;
		case 'l':
			if (!cli_parse_uint(optarg, 1000000, "--limit", &limit))
				return CLI_USAGE;
			break;
		case 'o':
			outpath = optarg;
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
	int err = pmon_report_read(in, sort, &r);
	if (err) {
		cli_error("%s", pmon_errdetail());
		return err == -ENOENT || err == -PMON_ERRNO__PARSE ? CLI_USAGE : CLI_FAIL;
	}
	if (r.truncated)
		cli_warn("%s: %s", in, r.warning);
	out = cli_open_output(outpath);
	if (!out) {
		pmon_report_release(&r);
		return CLI_USAGE;
	}
	size_t n = limit && limit < r.n ? limit : r.n;
	if (!strcmp(fmt, "folded")) {
		for (size_t i = 0; i < r.nfolded; i++)
			fprintf(out, "%s %llu\n", r.folded[i],
				(unsigned long long)r.folded_count[i]);
		if (!r.nfolded)
			cli_warn("no call stacks in %s (record with -g)", in);
	} else if (!strcmp(fmt, "json")) {
		json_t *a = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(a,
					      json_pack("{s:s, s:s, s:I, s:I, s:f}", "symbol",
							r.e[i].symbol, "dso", r.e[i].dso, "samples",
							(json_int_t)r.e[i].samples, "period",
							(json_int_t)r.e[i].period, "percent",
							r.samples ? 100.0 * (double)r.e[i].samples /
									(double)r.samples
								  : 0.0));
		json_t *j = json_pack("{s:s, s:s, s:I, s:I, s:b, s:o}", "event", r.header.event,
				      "command", r.header.command, "samples", (json_int_t)r.samples,
				      "lost", (json_int_t)r.lost, "truncated", r.truncated,
				      "entries", a);
		json_dumpf(j, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', out);
		json_decref(j);
	} else {
		fprintf(out, "# pmon report: %llu samples of %s", (unsigned long long)r.samples,
			r.header.event);
		if (r.header.command[0])
			fprintf(out, " in '%s'", r.header.command);
		if (r.lost)
			fprintf(out, "; %llu LOST", (unsigned long long)r.lost);
		bool dso = sort == PMON_SORT_DSO;
		fprintf(out, "\n#\n# %8s %10s  %-*s%s\n", "percent", "samples", dso ? 0 : 41,
			dso ? "" : "symbol", "dso");
		for (size_t i = 0; i < n; i++)
			fprintf(out, "  %7.2f%% %10llu  %-*s%s\n",
				r.samples ? 100.0 * (double)r.e[i].samples / (double)r.samples
					  : 0.0,
				(unsigned long long)r.e[i].samples, dso ? 0 : 41,
				dso ? "" : r.e[i].symbol, r.e[i].dso);
	}
	if (outpath && cli_close_output(out, outpath) != CLI_OK)
		rc = CLI_FAIL;
	pmon_report_release(&r);
	return rc;
}
