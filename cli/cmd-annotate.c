// SPDX-License-Identifier: MIT
/*
 * pmon annotate: the instructions of one function of a recording (Capstone),
 * with the samples that fell on each and the source lines they came from.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "cli.h"
#include <pmon/pmon.h>

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pmon annotate [-i FILE] [--format text|json] [--no-source] [-o OUT]\n"
		"                     [--debug-dir D] [--event E] [SYMBOL]\n\n"
		"  SYMBOL        the function to show (default: the one with most samples)\n"
		"  -i FILE       the recording (default pmon.data)\n"
		"  --no-source   leave out the source lines between the instructions\n"
		"  --debug-dir D look for debuginfo by build id in D/.build-id/ first\n"
		"  --event E     with several events recorded: whose samples (default: the "
		"first)\n");
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
		FILE *f = fopen(s->path, "re");
		size_t cap = 0, len = 0;
		char buf[4096];
		while (f && (len = fread(buf, 1, sizeof(buf), f)) > 0) {
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

static void print_text(FILE *out, const struct pmon_annotation *a, bool source)
{
	struct src *srcs = calloc(a->nsrcs ? a->nsrcs : 1, sizeof(*srcs));
	const char *last_src = NULL;
	unsigned last_line = 0;

	fprintf(out, "# pmon annotate: %s in %s: %llu of %llu samples (%.2f%%)\n#\n", a->symbol,
		a->dso, (unsigned long long)a->samples, (unsigned long long)a->total,
		a->total ? 100.0 * (double)a->samples / (double)a->total : 0.0);
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
			fprintf(out, "  %7.2f%% %8llu",
				100.0 * (double)in->samples / (double)a->samples,
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
		json_t *j = json_pack(
			"{s:s, s:s, s:I, s:I, s:f}", "address", addr, "text", in->text, "samples",
			(json_int_t)in->samples, "period", (json_int_t)in->period, "percent",
			a->samples ? 100.0 * (double)in->samples / (double)a->samples : 0.0);
		if (in->src) {
			json_object_set_new(j, "source", json_string(in->src));
			json_object_set_new(j, "line", json_integer(in->line));
		}
		json_array_append_new(insns, j);
	}
	snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)a->start);
	json_t *j = json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:o}", "symbol", a->symbol, "dso",
			      a->dso, "start", addr, "size", (json_int_t)a->size, "samples",
			      (json_int_t)a->samples, "total", (json_int_t)a->total, "instructions",
			      insns);
	json_dumpf(j, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', out);
	json_decref(j);
}

int cmd_annotate(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "format", required_argument, NULL, 'f' },
		{ "no-source", no_argument, NULL, 'S' },
		{ "debug-dir", required_argument, NULL, 'D' },
		{ "event", required_argument, NULL, 'e' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *in = "pmon.data", *outpath = NULL, *symbol = NULL, *debug_dir = NULL;
	const char *stack_event = NULL;
	bool json = false, source = true;
	struct pmon_annotation a;
	int c, rc = CLI_OK;
	FILE *out;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			in = optarg;
			break;
		case 'f':
			if (strcmp(optarg, "text") && strcmp(optarg, "json")) {
				cli_error("--format '%s': text or json", optarg);
				return CLI_USAGE;
			}
			json = !strcmp(optarg, "json");
			break;
		case 'S':
			source = false;
			break;
		case 'D':
			debug_dir = optarg;
			break;
		case 'e':
			stack_event = optarg;
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
	if (optind < argc)
		symbol = argv[optind++];
	if (optind < argc) {
		cli_error("unexpected argument '%s' (annotate one symbol at a time)", argv[optind]);
		return CLI_USAGE;
	}
	struct stat dst;
	if (debug_dir && (stat(debug_dir, &dst) || !S_ISDIR(dst.st_mode))) {
		cli_error("--debug-dir '%s': %s", debug_dir,
			  errno == ENOENT ? "no such directory" : "not a directory");
		return CLI_USAGE;
	}
	struct pmon_report_opts ro = { .sz = sizeof(ro),
				       .debug_dir = debug_dir,
				       .event = stack_event };
	int err = pmon_annotate(in, symbol, &ro, &a);
	if (err) {
		cli_error("%s", pmon_errdetail());
		return err == -ENOTSUP				      ? CLI_UNSUPPORTED
			: err == -ENOENT || err == -PMON_ERRNO__PARSE ? CLI_USAGE
								      : CLI_FAIL;
	}
	out = cli_open_output(outpath);
	if (!out) {
		pmon_annotation_release(&a);
		return CLI_USAGE;
	}
	if (json)
		print_json(out, &a);
	else
		print_text(out, &a, source);
	if (cli_close_output(out, outpath) != CLI_OK)
		rc = CLI_FAIL;
	pmon_annotation_release(&a);
	return rc;
}
