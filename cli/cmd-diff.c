// SPDX-License-Identifier: MIT
/*
 * pmon diff BASE NEW: two recordings compared as perf diff compares them
 * (baseline share, new share, delta, ratio per symbol or DSO), or their
 * stacks as a differential flame graph: difffolded.pl's folded lines or
 * an SVG. The matching and arithmetic are pmon_report_diff()'s; this file
 * reads the two files and prints.
 */
#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "cli.h"
#include <pmon/pmon.h>

static void print_table(FILE *out, const struct pmon_report_diff *d, enum pmon_diff_key key,
			const char *base, const char *cur)
{
	fprintf(out, "# pmon diff: %s, baseline %s, new %s\n#\n", d->event, base, cur);
	fprintf(out, "# %8s %9s %9s %9s  ", "Baseline", "New", "Delta", "Ratio");
	if (key != PMON_DIFF_SYMBOL)
		fprintf(out, "%-40s ", "Shared Object");
	fprintf(out, "%s\n", key == PMON_DIFF_DSO ? "" : "Symbol");
	for (size_t i = 0; i < d->n; i++) {
		const struct pmon_report_diff_entry *e = &d->e[i];
		fprintf(out, "  %8.2f%% %8.2f%% %+8.2f%% ", e->base_share, e->new_share, e->delta);
		if (e->base_period)
			fprintf(out, "%9.4f  ", e->ratio);
		else
			fprintf(out, "%9s  ", "");
		if (key != PMON_DIFF_SYMBOL)
			fprintf(out, "%-40s ", e->dso);
		fprintf(out, "%s\n", e->symbol);
	}
}

/* The table as JSON: each entry's keys, shares, delta, ratio (null where
 * the baseline has none) and the periods and samples behind them. */
static int print_json(FILE *out, const struct pmon_report_diff *d, const char *sort,
		      const char *base, const char *cur)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < d->n; i++) {
		const struct pmon_report_diff_entry *e = &d->e[i];
		json_t *j = json_pack(
			"{s:s, s:s, s:f, s:f, s:f, s:o, s:I, s:I, s:I, s:I}", "symbol", e->symbol,
			"dso", e->dso, "baseline", e->base_share, "new", e->new_share, "delta",
			e->delta, "ratio", e->base_period ? json_real(e->ratio) : json_null(),
			"baseline_period", (json_int_t)e->base_period, "new_period",
			(json_int_t)e->new_period, "baseline_samples", (json_int_t)e->base_samples,
			"new_samples", (json_int_t)e->new_samples);
		if (!j || json_array_append_new(a, j)) { /* a name that is not UTF-8 */
			json_decref(a);
			return -EILSEQ;
		}
	}
	json_t *doc = a ? json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:o}", "event", d->event,
				    "baseline_file", base, "new_file", cur, "sort", sort,
				    "baseline_total", (json_int_t)d->base_total, "new_total",
				    (json_int_t)d->new_total, "entries", a)
			: NULL;
	if (!doc)
		return -ENOMEM;
	json_dumpf(doc, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', out);
	json_decref(doc);
	return ferror(out) ? -EIO : 0;
}

int cmd_diff(int argc, char **argv)
{
	static const char *const formats[] = { "text", "folded", "flamegraph", "json", NULL };
	static const char *const sorts[] = {
		"symbol", "dso", "dso,sym", "sym", "dso,symbol", NULL
	};
	static const enum pmon_diff_key key_of[] = { PMON_DIFF_SYMBOL, PMON_DIFF_DSO,
						     PMON_DIFF_DSO_SYMBOL, PMON_DIFF_SYMBOL,
						     PMON_DIFF_DSO_SYMBOL };
	const char *outpath = NULL, *event = NULL;
	unsigned long width = 1200;
	int fmti = 0, sorti = 0;
	struct cli_symbols syms = { 0 };
	const struct cli_option options[] = {
		CLI_OPT_CHOICE(0, "sort", &sorti, "KEY", sorts,
			       "match by symbol (default), dso, or dso,sym"),
		CLI_OPT_CHOICE(0, "format", &fmti, "F", formats,
			       "text: the table; json: the table's rows; folded:\n"
			       "'outer;...;leaf BASE NEW' per stack (difffolded.pl);\n"
			       "flamegraph: a differential flame graph SVG (red grew,\n"
			       "blue shrank; --width)"),
		CLI_OPT_UINT_MIN(0, "width", &width, "PX", 200, 100000, "at least 200 pixels",
				 "the flame graph's width (default 1200)"),
		CLI_OPT_STRING(
			0, "event", &event, "E",
			"with several events recorded: the one compared (default: the first)"),
		CLI_OPT_SYMBOLS(&syms),
		CLI_OPT_OUTPUT(&outpath, "OUT", "write to OUT instead of standard output"),
		CLI_OPT_END(),
	};
	int rc = cli_parse_options(
		"diff",
		"usage: pmon diff [--sort symbol|dso|dso,sym] [-o OUT]\n"
		"                 [--format text|json|folded|flamegraph] [--width PX]\n"
		"                 [--event E] [BASE [NEW]]  (default pmon.data.old "
		"pmon.data)",
		options, 0, argc, argv);

	if (rc <= 0)
		return -rc;
	const char *base = rc < argc ? argv[rc] : "pmon.data.old";
	const char *cur = rc + 1 < argc ? argv[rc + 1] : "pmon.data";
	if (rc + 2 < argc && !cli_no_operands_at("diff", rc + 2, argc, argv))
		return CLI_USAGE;
	struct pmon_report_opts ro = { .sz = sizeof(ro),
				       .debug_dir = syms.debug_dir,
				       .symfs = syms.symfs,
				       .kallsyms = syms.kallsyms,
				       .event = event };
	struct pmon_report_diff d;
	char warn[600];
	bool stacks = fmti == 1 || fmti == 2;
	int err = pmon_report_diff_files(base, cur, &ro, stacks, key_of[sorti], &d, warn,
					 sizeof(warn));
	if (err) {
		cli_error("%s", pmon_errdetail());
		return err == -ENOENT || err == -PMON_ERRNO__PARSE ? CLI_USAGE : CLI_FAIL;
	}
	if (warn[0])
		cli_warn("%s", warn);
	FILE *out = cli_open_output(outpath);
	if (!out) {
		pmon_report_diff_release(&d);
		return CLI_USAGE;
	}
	if (fmti == 1)
		err = pmon_report_diff_write_folded(&d, out);
	else if (fmti == 2)
		err = pmon_report_diff_write_flamegraph(&d, out, (unsigned)width);
	else if (fmti == 3)
		err = print_json(out, &d, sorts[sorti], base, cur);
	else
		print_table(out, &d, key_of[sorti], base, cur);
	rc = CLI_OK;
	if (err && err != -EIO) {
		cli_error("--format %s: %s", formats[fmti], strerror(-err));
		cli_abandon_output(out);
		rc = CLI_FAIL;
	} else if (cli_close_output(out, outpath) != CLI_OK) {
		rc = CLI_FAIL;
	}
	pmon_report_diff_release(&d);
	return rc;
}
