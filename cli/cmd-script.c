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

enum {
	F_COMM = 1 << 0,
	F_TID = 1 << 1,
	F_PID = 1 << 2,
	F_CPU = 1 << 3,
	F_TIME = 1 << 4,
	F_PERIOD = 1 << 5,
	F_EVENT = 1 << 6,
	F_IP = 1 << 7,
	F_SYM = 1 << 8,
	F_SYMOFF = 1 << 9,
	F_DSO = 1 << 10,
	F_ADDR = 1 << 11,
	F_TRACE = 1 << 12,
};

/* perf script's field names (Documentation/perf-script.txt, -F). */
static const struct {
	const char *name;
	unsigned bit;
} field_names[] = {
	{ "comm", F_COMM },   { "tid", F_TID },	      { "pid", F_PID },	    { "cpu", F_CPU },
	{ "time", F_TIME },   { "period", F_PERIOD }, { "event", F_EVENT }, { "ip", F_IP },
	{ "sym", F_SYM },     { "symoff", F_SYMOFF }, { "dso", F_DSO },	    { "addr", F_ADDR },
	{ "trace", F_TRACE },
};

#define F_DEFAULT                                                                                  \
	(F_COMM | F_TID | F_CPU | F_TIME | F_PERIOD | F_EVENT | F_IP | F_SYM | F_SYMOFF | F_DSO |  \
	 F_TRACE)

/* -F as perf reads it: "f1,f2" sets the fields, "+f"/"-f" adds to or takes
 * from the default ones; a leading "TYPE:" (sw:, hw:, trace:) is accepted
 * for every event. Return: CLI_OK or CLI_USAGE (one line). */
static int parse_fields(const char *spec, unsigned *out)
{
	const char *colon = strchr(spec, ':');
	char buf[512];

	if (colon && (!strchr(spec, ',') || colon < strchr(spec, ',')))
		spec = colon + 1;
	snprintf(buf, sizeof(buf), "%s", spec);
	bool modify = buf[0] == '+' || buf[0] == '-';
	unsigned f = modify ? *out : 0;
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char op = modify && (*t == '+' || *t == '-') ? *t++ : '+';
		size_t i = 0;
		while (i < sizeof(field_names) / sizeof(field_names[0]) &&
		       strcmp(field_names[i].name, t))
			i++;
		if (i == sizeof(field_names) / sizeof(field_names[0])) {
			cli_error("-F: unknown field '%s' (comm, tid, pid, cpu, time, period, "
				  "event, ip, sym, symoff, dso, addr, trace)",
				  t);
			return CLI_USAGE;
		}
		f = op == '-' ? f & ~field_names[i].bit : f | field_names[i].bit;
	}
	*out = f;
	return CLI_OK;
}

struct printer {
	FILE *out;
	unsigned fields;
	int name_width; /* the longest event name, as perf pads them */
};

static void print_sym(FILE *out, unsigned f, const struct pmon_report_sample_frame *fr)
{
	if (f & F_SYM) {
		fprintf(out, " %s", fr->sym);
		if (f & F_SYMOFF && fr->has_symoff)
			fprintf(out, "+0x%" PRIx64, fr->symoff);
	}
	if (f & F_DSO)
		fprintf(out, " (%s)", fr->dso);
}

static int print_sample(void *arg, const struct pmon_report_sample *s)
{
	struct printer *p = arg;
	unsigned f = p->fields;
	FILE *out = p->out;
	bool chain = s->has_chain && f & F_IP;

	for (size_t i = 0; !p->name_width && i < s->nevents; i++)
		if ((int)strlen(s->events[i].name) > p->name_width)
			p->name_width = (int)strlen(s->events[i].name);

	if (f & F_COMM)
		fprintf(out, chain ? "%s " : "%16s ", s->comm);
	if ((f & (F_PID | F_TID)) == (F_PID | F_TID))
		fprintf(out, "%5u/%-5u ", s->pid, s->tid);
	else if (f & (F_PID | F_TID))
		fprintf(out, "%5u ", f & F_PID ? s->pid : s->tid);
	if (f & F_CPU)
		fprintf(out, "[%03u] ", s->cpu);
	if (f & F_TIME) {
		char t[32];
		snprintf(t, sizeof(t), "%" PRIu64 ".%06" PRIu64, s->time / 1000000000,
			 s->time % 1000000000 / 1000);
		fprintf(out, "%12s: ", t);
	}
	if (f & F_PERIOD)
		fprintf(out, "%10" PRIu64 " ", s->period);
	if (f & F_EVENT)
		fprintf(out, "%*s: ", p->name_width, s->event_name);
	if (f & F_ADDR)
		fprintf(out, "%16" PRIx64 " ", s->addr);
	if (f & F_TRACE && s->raw)
		fprintf(out, "[raw: %u bytes, no tracepoint format recorded] ", s->raw_size);
	if (!(f & F_IP)) {
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
	const char *in = "pmon.data", *fields = NULL, *outpath = NULL, *debug_dir = NULL;
	const struct cli_option options[] = {
		CLI_OPT_STRING('i', "input", &in, "FILE", "the recording (default pmon.data)"),
		CLI_OPT_STRING('F', "fields", &fields, "LIST",
			       "the fields, by perf script's names: comm, tid, pid, cpu,\n"
			       "time, period, event, ip, sym, symoff, dso, addr, trace;\n"
			       "'+f,-g' adds to or takes from the default ones"),
		CLI_OPT_DEBUG_DIR(&debug_dir),
		CLI_OPT_OUTPUT(&outpath, "OUT", "write to OUT instead of standard output"),
		CLI_OPT_END(),
	};
	int rc = cli_parse_options("script", "usage: pmon script [-i FILE] [-F LIST] [-o OUT]",
				   options, CLI_PARSE_NO_OPERANDS, argc, argv);

	if (rc <= 0)
		return -rc;
	struct printer p = { .fields = F_DEFAULT };
	if (fields && (rc = parse_fields(fields, &p.fields)) != CLI_OK)
		return rc;
	struct pmon_report_opts ro = { .sz = sizeof(ro),
				       .debug_dir = debug_dir,
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
