// SPDX-License-Identifier: MIT
/*
 * pmon annotate: the instructions of one function of a recording (Capstone),
 * with the samples that fell on each and the source lines they came from.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "sim.h"
#include <pmon/pmon.h>

/* At most this much of a source file is shown. */
#define SRC_MAX (16u << 20)

/*
 * The source file at @path (named by the binary's line table) as a stream,
 * if it is a regular file: a FIFO or device there would block or never end.
 */
static FILE *src_open(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	FILE *f;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !(f = fdopen(fd, "r"))) {
		close(fd);
		return NULL;
	}
	return f;
}

/* A source file's lines, read once; an unreadable file has none. */
struct src {
	const char *path;
	char *text;
	char **line;
	size_t n;
};

static const char *src_line(struct src *s, unsigned no)
{
	if (!s->text && !s->line) {
		FILE *f = src_open(s->path);
		size_t cap = 0, len = 0;
		char buf[4096];
		while (f && cap < SRC_MAX && (len = fread(buf, 1, sizeof(buf), f)) > 0) {
			char *t = realloc(s->text, cap + len + 1);
			if (!t)
				break;
			s->text = t;
			memcpy(s->text + cap, buf, len);
			cap += len;
			s->text[cap] = '\0';
		}
		if (f)
			fclose(f);
		for (char *p = s->text; p && *p;) {
			char **l = realloc(s->line, (s->n + 1) * sizeof(*l));
			if (!l)
				break;
			s->line = l;
			s->line[s->n++] = p;
			if (!(p = strchr(p, '\n')))
				break;
			*p++ = '\0';
		}
		if (!s->line)
			s->line = calloc(1, sizeof(char *)); /* tried */
	}
	return no >= 1 && no <= s->n ? s->line[no - 1] : NULL;
}

/* @part of @whole in percent: shares are of periods, the events the samples
 * stand for (perf annotate's local-period), which for a simulated recording
 * are the exact counts. */
static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void print_text(FILE *out, const struct pmon_annotation *a, bool source)
{
	struct src *srcs = calloc(a->nsrcs ? a->nsrcs : 1, sizeof(*srcs));
	const char *last_src = NULL;
	unsigned last_line = 0;

	fprintf(out,
		"# pmon annotate: %s in %s: %llu of %llu samples, %.2f%% of the events they "
		"stand for\n#\n",
		a->symbol, a->dso, (unsigned long long)a->samples, (unsigned long long)a->total,
		share(a->period, a->total_period));
	fprintf(out, "# %8s %8s  %10s  %s\n", "percent", "samples", "address", "instruction");
	for (size_t i = 0; i < a->n; i++) {
		const struct pmon_annotate_insn *in = &a->insn[i];
		if (source && srcs && in->src && (in->src != last_src || in->line != last_line)) {
			size_t k = 0;
			while (k < a->nsrcs && a->srcs[k] != in->src)
				k++;
			const char *slash = strrchr(in->src, '/'), *text = NULL;
			if (k < a->nsrcs) {
				srcs[k].path = in->src;
				text = src_line(&srcs[k], in->line);
			}
			fprintf(out, "%32s%s:%u", "", slash ? slash + 1 : in->src, in->line);
			if (text) {
				while (*text == ' ' || *text == '\t')
					text++;
				fprintf(out, "  %s", text);
			}
			fputc('\n', out);
			last_src = in->src;
			last_line = in->line;
		}
		if (in->samples)
			fprintf(out, "  %7.2f%% %8llu", share(in->period, a->period),
				(unsigned long long)in->samples);
		else
			fprintf(out, "  %8s %8s", "", "");
		fprintf(out, "  %10llx:  %s\n", (unsigned long long)in->addr, in->text);
	}
	for (size_t k = 0; srcs && k < a->nsrcs; k++)
		free(srcs[k].text), free(srcs[k].line);
	free(srcs);
}

static void print_json(FILE *out, const struct pmon_annotation *a)
{
	json_t *insns = json_array();
	char addr[32];

	for (size_t i = 0; i < a->n; i++) {
		const struct pmon_annotate_insn *in = &a->insn[i];
		snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)in->addr);
		json_t *j =
			json_pack("{s:s, s:s, s:I, s:I, s:f}", "address", addr, "text", in->text,
				  "samples", (json_int_t)in->samples, "period",
				  (json_int_t)in->period, "percent", share(in->period, a->period));
		if (in->src) {
			json_object_set_new(j, "source", json_string(in->src));
			json_object_set_new(j, "line", json_integer(in->line));
		}
		json_array_append_new(insns, j);
	}
	snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)a->start);
	json_t *j = json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:o}", "symbol", a->symbol,
			      "dso", a->dso, "start", addr, "size", (json_int_t)a->size, "samples",
			      (json_int_t)a->samples, "total", (json_int_t)a->total, "period",
			      (json_int_t)a->period, "total_period", (json_int_t)a->total_period,
			      "instructions", insns);
	json_dumpf(j, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', out);
	json_decref(j);
}

int cmd_annotate(int argc, char **argv)
{
	static const char *const formats[] = { "text", "json", NULL };
	const char *in = "pmon.data", *outpath = NULL, *symbol = NULL;
	const char *stack_event = NULL, *mcpu = NULL;
	bool no_source = false, mca = false, exact = false;
	int json = 0;
	struct cli_symbols syms = { 0 };
	const struct cli_option options[] = {
		CLI_OPT_TEXT("SYMBOL: the function to show (default: the one with most samples)."),
		CLI_OPT_STRING('i', "input", &in, "FILE", "the recording (default pmon.data)"),
		CLI_OPT_CHOICE(0, "format", &json, "text|json", formats,
			       "the instructions as text (default) or one JSON object"),
		CLI_OPT_FLAG(0, "no-source", &no_source,
			     "leave out the source lines between the instructions"),
		CLI_OPT_OUTPUT(&outpath, "OUT", "write to OUT instead of standard output"),
		CLI_OPT_SYMBOLS(&syms),
		CLI_OPT_STRING(0, "event", &stack_event, "E",
			       "with several events recorded: whose samples\n"
			       "(default: the first)"),
		CLI_OPT_FLAG(0, "mca", &mca,
			     "the function's hottest loop or block through LLVM's\n"
			     "llvm-mca (docs/simulate.md)"),
		CLI_OPT_STRING(0, "mcpu", &mcpu, "NAME",
			       "with --mca: its -mcpu (default: this CPU)"),
		CLI_OPT_END(),
	};
	struct pmon_annotation a;
	int rc = CLI_OK;
	FILE *out;
	int argi = cli_parse_options(
		"annotate",
		"usage: pmon annotate [-i FILE] [--format text|json] [--no-source] [-o OUT]\n"
		"                     [--debug-dir D] [--event E] [--mca [--mcpu NAME]] [SYMBOL]",
		options, 0, argc, argv);

	if (argi <= 0)
		return -argi;
	if (argi < argc)
		symbol = argv[argi++];
	if (argi < argc) {
		cli_error("unexpected argument '%s' (annotate one symbol at a time)", argv[argi]);
		return CLI_USAGE;
	}
	if ((mcpu && !mca) || (mca && json)) {
		cli_error(mca ? "--mca prints text: no --format json" : "--mcpu goes with --mca");
		return CLI_USAGE;
	}
	if (mca && !sim_mca_available("--mca", true))
		return CLI_UNSUPPORTED;
	struct pmon_report_opts ro = { .sz = sizeof(ro),
				       .debug_dir = syms.debug_dir,
				       .symfs = syms.symfs,
				       .kallsyms = syms.kallsyms,
				       .event = stack_event };
	int err = mca ? pmon_annotate_exact(in, symbol, &ro, &a, &exact)
		      : pmon_annotate(in, symbol, &ro, &a);
	if (err) {
		cli_error("%s", pmon_errdetail());
		return err == -ENOTSUP				      ? CLI_UNSUPPORTED
			: err == -ENOENT || err == -PMON_ERRNO__PARSE ? CLI_USAGE
								      : CLI_FAIL;
	}
	if (cli_output_is_input(outpath, in, "-o")) {
		pmon_annotation_release(&a);
		return CLI_USAGE;
	}
	out = cli_open_output(outpath);
	if (!out) {
		pmon_annotation_release(&a);
		return CLI_USAGE;
	}
	if (mca)
		rc = sim_mca_annotation(out, &a, exact, mcpu, NULL, in, &ro);
	else if (json)
		print_json(out, &a);
	else
		print_text(out, &a, !no_source);
	if (rc != CLI_OK)
		cli_abandon_output(out); /* a half annotation never replaces the file */
	else if (cli_close_output(out, outpath) != CLI_OK)
		rc = CLI_FAIL;
	pmon_annotation_release(&a);
	return rc;
}
