// SPDX-License-Identifier: MIT
/*
 * pmon script: a recording's samples one a line, in perf script's layout
 * (tools/perf/builtin-script.c: perf_sample__fprintf_start(), the call
 * chain's frames below, tab-indented); -F chooses the fields by perf's
 * names. The samples come symbolized from pmon_report_foreach_sample():
 * this file prints only.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include <pmon/pmon.h>

struct printer {
	FILE *out;
	unsigned fields;
	bool chosen; /* -F given: the same fields for every event */
	int name_width; /* the longest event name, as perf pads them */
	bool widths; /* name_width set */
};

static void print_sym(FILE *out, unsigned f, const struct pmon_report_sample_frame *fr)
{
	if (f & PMON_SF_SYM) {
		fprintf(out, " %s", fr->sym);
		if (f & PMON_SF_SYMOFF && fr->has_symoff)
			fprintf(out, "+0x%" PRIx64, fr->symoff);
	}
	if (f & PMON_SF_DSO)
		fprintf(out, " (%s)", fr->dso);
}

static int print_sample(void *arg, const struct pmon_report_sample *s)
{
	struct printer *p = arg;
	unsigned f = p->fields;
	FILE *out = p->out;

	/* perf script's defaults for a tracepoint: its fields, not its ip
	 * (the chain's frames where it has one) */
	if (!p->chosen && s->raw)
		f = PMON_SF_DEFAULT_TRACEPOINT |
			(s->has_chain ? PMON_SF_IP | PMON_SF_SYM | PMON_SF_SYMOFF | PMON_SF_DSO
				      : 0);
	bool chain = s->has_chain && f & PMON_SF_IP;

	for (size_t i = 0; !p->widths && i < s->nevents; i++) /* once: the longest of all */
		if ((int)strlen(s->events[i].name) > p->name_width)
			p->name_width = (int)strlen(s->events[i].name);
	p->widths = true;

	if (f & PMON_SF_COMM)
		fprintf(out, chain ? "%s " : "%16s ", s->comm);
	/* signed, as perf prints them: an exiting task's samples say -1 */
	if ((f & (PMON_SF_PID | PMON_SF_TID)) == (PMON_SF_PID | PMON_SF_TID))
		fprintf(out, "%5d/%-5d ", (int)s->pid, (int)s->tid);
	else if (f & (PMON_SF_PID | PMON_SF_TID))
		fprintf(out, "%5d ", (int)(f & PMON_SF_PID ? s->pid : s->tid));
	if (f & PMON_SF_CPU)
		fprintf(out, "[%03u] ", s->cpu);
	if (f & PMON_SF_TIME) {
		char t[32];
		snprintf(t, sizeof(t), "%" PRIu64 ".%06" PRIu64, s->time / 1000000000,
			 s->time % 1000000000 / 1000);
		fprintf(out, "%12s: ", t);
	}
	if (f & PMON_SF_PERIOD)
		fprintf(out, "%10" PRIu64 " ", s->period);
	if (f & PMON_SF_EVENT)
		fprintf(out, "%*s: ", p->name_width, s->event_name);
	if (f & PMON_SF_ADDR)
		fprintf(out, "%16" PRIx64 " ", s->addr);
	if (f & PMON_SF_TRACE && s->trace)
		fputs(s->trace, out);
	else if (f & PMON_SF_TRACE && s->raw)
		fprintf(out, "[raw: %u bytes, no tracepoint format recorded] ", s->raw_size);
	if (!(f & PMON_SF_IP)) {
		fputc('\n', out);
	} else if (!chain) {
		fprintf(out, " %16" PRIx64, s->leaf.ip);
		print_sym(out, f, &s->leaf);
		fputc('\n', out);
	} else {
		fputc('\n', out);
		for (size_t i = 0; i < s->nchain; i++) {
			fprintf(out, "\t%16" PRIx64, s->chain[i].addr);
			print_sym(out, f, &s->chain[i]);
			fputc('\n', out);
		}
		fputc('\n', out);
	}
	return ferror(out) ? -EIO : 0;
}

int cmd_script(int argc, char **argv)
{
	const char *in = "pmon.data", *fields = NULL, *outpath = NULL;
	struct cli_symbols syms = { 0 };
	const struct cli_option options[] = {
		CLI_OPT_STRING('i', "input", &in, "FILE", "the recording (default pmon.data)"),
		CLI_OPT_STRING('F', "fields", &fields, "LIST",
			       "the fields, by perf script's names: comm, tid, pid, cpu,\n"
			       "time, period, event, ip, sym, symoff, dso, addr, trace;\n"
			       "'+f,-g' adds to or takes from the default ones"),
		CLI_OPT_SYMBOLS(&syms),
		CLI_OPT_OUTPUT(&outpath, "OUT", "write to OUT instead of standard output"),
		CLI_OPT_END(),
	};
	int rc = cli_parse_options("script", "usage: pmon script [-i FILE] [-F LIST] [-o OUT]",
				   options, CLI_PARSE_NO_OPERANDS, argc, argv);

	if (rc <= 0)
		return -rc;
	struct printer p = { .fields = PMON_SF_DEFAULT, .chosen = fields != NULL };
	if (fields && pmon_report_sample_fields(fields, &p.fields)) {
		cli_error("-F: %s", pmon_errdetail());
		return CLI_USAGE;
	}
	struct pmon_report_opts ro = { .sz = sizeof(ro),
				       .debug_dir = syms.debug_dir,
				       .symfs = syms.symfs,
				       .kallsyms = syms.kallsyms,
				       .no_stacks = true };
	if (cli_output_is_input(outpath, in, "-o") || !(p.out = cli_open_output(outpath)))
		return CLI_USAGE;
	struct pmon_report info;
	int err = pmon_report_foreach_sample(in, &ro, print_sample, &p, &info);
	if (!err && info.warning[0])
		cli_warn("%s: %s", in, info.warning);
	if (err && err != -EIO) {
		cli_error("%s", pmon_errdetail());
		cli_abandon_output(p.out);
		return err == -ENOENT || err == -PMON_ERRNO__PARSE ? CLI_USAGE : CLI_FAIL;
	}
	return cli_close_output(p.out, outpath) != CLI_OK ? CLI_FAIL : CLI_OK;
}
