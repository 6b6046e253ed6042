// SPDX-License-Identifier: MIT
/*
 * pmon report: where the samples of a recording fell, by symbol, DSO or
 * source line, as text or JSON; and the call stacks as folded lines, a
 * flame graph SVG, speedscope JSON or a pprof profile.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include <pmon/pmon.h>

/* --percent-limit P (and --min-percent P): double *, from 0 to 100. */
static int opt_limit_percent(const struct cli_option *opt, const char *arg)
{
	char *end;
	double p = strtod(arg, &end);

	if (end == arg || *end || !(p >= 0 && p <= 100)) {
		cli_error("--%s '%s': a number from 0 to 100", opt->long_name, arg);
		return CLI_USAGE;
	}
	*(double *)opt->value = p;
	return CLI_OK;
}

/* A simulated recording (pmon simulate: attr_type "sim", docs/simulate.md):
 * each of its samples is one instruction, with its count as period. */
static bool simulated(const struct pmon_report *r)
{
	return r->header.attr_type == 0x6d6973;
}

/* Share of @v events of event @ev's total: by period (the events samples
 * stand for), as perf's percentages are, since samples may carry unequal
 * periods (frequency mode; pmon simulate, whose samples carry counts); by
 * samples (@n of the event's) where the recording has no periods. */
static double share_of(const struct pmon_report *r, unsigned ev, uint64_t v, uint64_t n)
{
	uint64_t period = ev < r->nevents ? r->events[ev].period : r->period;
	uint64_t of = ev < r->nevents ? r->events[ev].samples : r->samples;

	if (period)
		return 100.0 * (double)v / (double)period;
	return of ? 100.0 * (double)n / (double)of : 0.0;
}

static double share(const struct pmon_report *r, const struct pmon_report_entry *e)
{
	return share_of(r, e->event, e->period, e->samples);
}

static double children_share(const struct pmon_report *r, const struct pmon_report_entry *e)
{
	return share_of(r, e->event, e->children_period, e->children_samples);
}

/* What a view's row is ranked by (--percent-limit hides what is under). */
static double rank_share(const struct pmon_report *r, const struct pmon_report_entry *e)
{
	return r->children ? children_share(r, e) : share(r, e);
}

static const char *const key_name[] = {
	[PMON_SORT_SYMBOL] = "symbol", [PMON_SORT_DSO] = "dso", [PMON_SORT_LINE] = "line",
	[PMON_SORT_COMM] = "comm",     [PMON_SORT_PID] = "pid", [PMON_SORT_TID] = "tid",
	[PMON_SORT_CPU] = "cpu"
};

/* The keys of @en a view was sorted by, into the JSON object @e. */
static void json_keys(const struct pmon_report *r, const struct pmon_report_entry *en, json_t *e)
{
	for (size_t k = 0; k < r->nkeys; k++) {
		json_t *v = NULL;
		switch (r->keys[k]) {
		case PMON_SORT_SYMBOL:
			v = json_string(en->symbol);
			break;
		case PMON_SORT_DSO:
			v = json_string(en->dso);
			break;
		case PMON_SORT_LINE:
			v = json_string(en->line);
			break;
		case PMON_SORT_COMM:
			v = json_string(en->comm);
			break;
		case PMON_SORT_PID:
			v = json_integer(en->pid);
			break;
		case PMON_SORT_TID:
			v = json_integer(en->tid);
			break;
		case PMON_SORT_CPU:
			v = json_integer((int)en->cpu);
			break;
		}
		json_object_set_new(e, key_name[r->keys[k]], v);
	}
	if (r->children) {
		json_object_set_new(e, "children_samples",
				    json_integer((json_int_t)en->children_samples));
		json_object_set_new(e, "children_period",
				    json_integer((json_int_t)en->children_period));
		json_object_set_new(e, "children_percent", json_real(children_share(r, en)));
	}
}

static json_t *json_entry(const struct pmon_report *r, const struct pmon_report_entry *en,
			  enum pmon_report_sort sort)
{
	json_t *e = json_pack("{s:s}", "event", r->events[en->event].name);

	if (r->nkeys) {
		json_keys(r, en, e);
	} else {
		json_object_set_new(e, "symbol", json_string(en->symbol));
		json_object_set_new(e, "dso", json_string(en->dso));
	}
	json_object_set_new(e, "samples", json_integer((json_int_t)en->samples));
	json_object_set_new(e, "period", json_integer((json_int_t)en->period));
	json_object_set_new(e, "percent", json_real(share(r, en)));
	if (!r->nkeys && sort == PMON_SORT_LINE)
		json_object_set_new(e, "line", json_string(en->line));
	return e;
}

static int print_json(FILE *out, const struct pmon_report *r, enum pmon_report_sort sort,
		      size_t limit, double pct_limit)
{
	json_t *a = json_array(), *evs = json_array();
	size_t shown[16] = { 0 };

	for (size_t i = 0; i < r->n; i++) {
		const struct pmon_report_entry *en = &r->e[i];
		if (en->event >= r->nevents || (limit && shown[en->event] >= limit) ||
		    rank_share(r, en) < pct_limit)
			continue;
		shown[en->event]++;
		json_array_append_new(a, json_entry(r, en, sort));
	}
	for (size_t i = 0; i < r->nevents; i++)
		json_array_append_new(evs,
				      json_pack("{s:s, s:I, s:I, s:I, s:I}", "name",
						r->events[i].name, "samples",
						(json_int_t)r->events[i].samples, "period",
						(json_int_t)r->events[i].period, "sample_period",
						(json_int_t)r->events[i].sample_period, "freq",
						(json_int_t)r->events[i].freq));
	json_t *j = json_pack("{s:s, s:s, s:I, s:I, s:b, s:o, s:o}", "event", r->header.event,
			      "command", r->header.command, "samples", (json_int_t)r->samples,
			      "lost", (json_int_t)r->lost, "truncated", r->truncated, "events", evs,
			      "entries", a);
	json_object_set_new(j, "system_wide",
			    json_boolean(r->header.flags & PMON_DATA_SYSTEM_WIDE));
	if (r->header.flags & PMON_DATA_SYSTEM_WIDE)
		json_object_set_new(j, "cpus",
				    json_string(r->header.cpus[0] ? r->header.cpus : "all"));
	if (r->nkeys) {
		json_t *keys = json_array();
		for (size_t k = 0; k < r->nkeys; k++)
			json_array_append_new(keys, json_string(key_name[r->keys[k]]));
		json_object_set_new(j, "sort", keys);
		json_object_set_new(j, "children", json_boolean(r->children));
	}
	if (r->warning[0])
		json_object_set_new(
			j, "damaged",
			json_pack("{s:I, s:I, s:I, s:s}", "chunks", (json_int_t)r->damaged_chunks,
				  "bytes", (json_int_t)r->damaged_bytes, "samples_estimate",
				  (json_int_t)r->damaged_samples, "warning", r->warning));
	json_dumpf(j, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', out);
	json_decref(j);
	return CLI_OK;
}

/* Which CPUs a system-wide recording sampled: all, or record -C's list. */
static const char *cpus_phrase(const struct pmon_report *r, char *buf, size_t len)
{
	const char *c = r->header.cpus;

	if (!c[0])
		return "all CPUs";
	snprintf(buf, len, "%s %s", strpbrk(c, ",-") ? "CPUs" : "CPU", c);
	return buf;
}

/* Whose samples a table holds: "in 'CMD'", or system-wide (record -a, -C),
 * where the command only said for how long. */
static void print_subject(FILE *out, const struct pmon_report *r)
{
	char p[4096], c[300];

	if (r->header.flags & PMON_DATA_SYSTEM_WIDE)
		fprintf(out, ", system-wide (%s)%s%s%s", cpus_phrase(r, c, sizeof(c)),
			r->header.command[0] ? " while '" : "",
			cli_printable(r->header.command, p, sizeof(p)),
			r->header.command[0] ? "' ran" : "");
	else if (r->header.command[0])
		fprintf(out, " in '%s'", cli_printable(r->header.command, p, sizeof(p)));
}

/* The first line of event @ev's table. A simulated recording's "sample"
 * is an instruction with its exact count: the table says so. */
static void print_table_head(FILE *out, const struct pmon_report *r, size_t ev)
{
	char p[4096];

	if (simulated(r))
		fprintf(out,
			"# pmon report: %llu simulated %s events at %llu distinct instructions",
			(unsigned long long)r->events[ev].period,
			cli_printable(r->events[ev].name, p, sizeof(p)),
			(unsigned long long)r->events[ev].samples);
	else
		fprintf(out, "# pmon report: %llu samples of %s",
			(unsigned long long)r->events[ev].samples,
			cli_printable(r->events[ev].name, p, sizeof(p)));
	print_subject(out, r);
	if (r->lost && !ev)
		fprintf(out, "; %llu LOST", (unsigned long long)r->lost);
	fputc('\n', out);
	if (simulated(r))
		fprintf(out,
			"# percent: of the simulated events; insns: the distinct "
			"instructions that had them\n");
}

/* A view's row: its shares and samples, then one column per key. */
static void print_view_row(FILE *out, const struct pmon_report *r,
			   const struct pmon_report_entry *en)
{
	char p[4096];

	if (r->children)
		fprintf(out, "  %7.2f%%", children_share(r, en));
	fprintf(out, "  %7.2f%% %10llu", share(r, en), (unsigned long long)en->samples);
	for (size_t k = 0; k < r->nkeys; k++) {
		bool last = k + 1 == r->nkeys;
		switch (r->keys[k]) {
		case PMON_SORT_COMM:
			fprintf(out, "  %-*s", last ? 0 : 16,
				cli_printable(en->comm, p, sizeof(p)));
			break;
		case PMON_SORT_PID:
			fprintf(out, "  %7u", en->pid);
			break;
		case PMON_SORT_TID:
			fprintf(out, "  %7u", en->tid);
			break;
		case PMON_SORT_CPU:
			fprintf(out, "  %3d", (int)en->cpu);
			break;
		case PMON_SORT_DSO:
			fprintf(out, "  %-*s", last ? 0 : 24, cli_printable(en->dso, p, sizeof(p)));
			break;
		case PMON_SORT_SYMBOL:
			fprintf(out, "  %-*s", last ? 0 : 40,
				cli_printable(en->symbol, p, sizeof(p)));
			break;
		case PMON_SORT_LINE:
			fprintf(out, "  %-*s", last ? 0 : 24,
				cli_printable(en->line, p, sizeof(p)));
			break;
		}
	}
	fputc('\n', out);
}

static void print_view_head(FILE *out, const struct pmon_report *r)
{
	static const int width[] = {
		[PMON_SORT_SYMBOL] = 40, [PMON_SORT_DSO] = 24, [PMON_SORT_LINE] = 24,
		[PMON_SORT_COMM] = 16,	 [PMON_SORT_PID] = 7,  [PMON_SORT_TID] = 7,
		[PMON_SORT_CPU] = 3
	};

	fputc('#', out);
	if (r->children)
		fprintf(out, " %9s", "children");
	fprintf(out, " %9s %10s", r->children ? "self" : "percent",
		simulated(r) ? "insns" : "samples");
	for (size_t k = 0; k < r->nkeys; k++) {
		enum pmon_report_sort key = r->keys[k];
		bool num = key == PMON_SORT_PID || key == PMON_SORT_TID || key == PMON_SORT_CPU;
		fprintf(out, "  %*s",
			k + 1 == r->nkeys && !num ? 0
				: num		  ? width[key]
						  : -width[key],
			key_name[key]);
	}
	fputc('\n', out);
}

static int print_entries(FILE *out, const struct pmon_report *r, enum pmon_report_sort sort,
			 size_t limit, double pct_limit)
{
	/* One table per event, as perf report prints one per event. Every
	 * string from the file is printed with its control bytes masked: a
	 * crafted recording must not drive the terminal (issue #31). */
	char p1[4096], p2[4096], p3[512];
	for (size_t ev = 0; ev < r->nevents; ev++) {
		if (ev)
			fputc('\n', out);
		print_table_head(out, r, ev);
		fputs("#\n", out);
		if (r->nkeys) {
			print_view_head(out, r);
		} else {
			fprintf(out, "# %8s %10s  ", "percent", simulated(r) ? "insns" : "samples");
			if (sort == PMON_SORT_LINE)
				fprintf(out, "%-24s ", "line");
			fprintf(out, "%-*s%s\n", sort == PMON_SORT_DSO ? 0 : 41,
				sort == PMON_SORT_DSO ? "" : "symbol", "dso");
		}
		size_t shown = 0;
		for (size_t i = 0; i < r->n; i++) {
			const struct pmon_report_entry *en = &r->e[i];
			if (en->event != ev || (limit && shown >= limit) ||
			    rank_share(r, en) < pct_limit)
				continue;
			shown++;
			if (r->nkeys) {
				print_view_row(out, r, en);
				continue;
			}
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

/* --header: what the recording says of itself, before the tables, as perf
 * report --header prints its perf.data header. */
static void print_header(FILE *out, const struct pmon_report *r, const char *in)
{
	char p[4096], when[64] = "";
	time_t t = (time_t)r->header.captured;
	struct tm tm;

	if (t && localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%a %b %e %H:%M:%S %Y", &tm);
	fputs("# ========\n", out);
	fprintf(out, "# recording    : %s\n", cli_printable(in, p, sizeof(p)));
	if (when[0])
		fprintf(out, "# captured on  : %s\n", when);
	if (r->header.hostname[0])
		fprintf(out, "# hostname     : %s\n",
			cli_printable(r->header.hostname, p, sizeof(p)));
	fprintf(out, "# command      : %s\n",
		r->header.command[0] ? cli_printable(r->header.command, p, sizeof(p)) : "(none)");
	char c[300];
	if (r->header.flags & PMON_DATA_SYSTEM_WIDE)
		fprintf(out, "# target       : system-wide (%s)\n", cpus_phrase(r, c, sizeof(c)));
	else
		fputs("# target       : the command or processes\n", out);
	for (size_t i = 0; i < r->nevents; i++) {
		const struct pmon_report_event *e = &r->events[i];
		fprintf(out, "# event        : %s (", cli_printable(e->name, p, sizeof(p)));
		if (e->sample_period)
			fprintf(out, "every %llu events", (unsigned long long)e->sample_period);
		else
			fprintf(out, "%llu Hz", (unsigned long long)e->freq);
		fprintf(out, "; %llu samples)\n", (unsigned long long)e->samples);
	}
	fprintf(out, "# call chains  : %s\n", r->callchains ? "yes" : "no");
	if (r->last_time > r->first_time)
		fprintf(out, "# sample time  : %llu.%09llu to %llu.%09llu s\n",
			(unsigned long long)(r->first_time / 1000000000ULL),
			(unsigned long long)(r->first_time % 1000000000ULL),
			(unsigned long long)(r->last_time / 1000000000ULL),
			(unsigned long long)(r->last_time % 1000000000ULL));
	fputs("# ========\n#\n", out);
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

/* What pmon report writes, and how. */
struct shown {
	const char *fmt;
	int graph; /* 1: caller, 2: callee */
	unsigned width;
	double min_pct;
	enum pmon_report_sort sort;
	size_t limit;
	double pct_limit;
	const char *in; /* speedscope reads the recording again, in time order */
	const struct pmon_report_opts *ro;
};

/* The report in its format. Return: 0 or -errno. */
static int write_format(FILE *out, const struct pmon_report *r, const struct shown *h)
{
	if (!strcmp(h->fmt, "folded"))
		return pmon_report_write_folded(r, out);
	if (!strcmp(h->fmt, "flamegraph"))
		return pmon_report_write_flamegraph(r, out, h->width);
	if (!strcmp(h->fmt, "speedscope")) /* in time order: the file read again */
		return pmon_report_write_speedscope_samples(r, h->in, h->ro, out);
	if (!strcmp(h->fmt, "pprof"))
		return pmon_report_write_pprof(r, out);
	if (h->graph)
		return pmon_report_write_callgraph(r, out, h->graph == 2, h->min_pct,
						   !strcmp(h->fmt, "json"));
	if (!strcmp(h->fmt, "json"))
		print_json(out, r, h->sort, h->limit, h->pct_limit);
	else
		print_entries(out, r, h->sort, h->limit, h->pct_limit);
	return 0;
}

/* write_format(), and on a failed write (-EIO) the errno it left (ENOSPC)
 * kept for the close to say. */
static int write_report(FILE *out, const struct pmon_report *r, const struct shown *h)
{
	int err = write_format(out, r, h);

	if (err == -EIO && errno)
		cli_output_errno(out, errno);
	return err;
}

/* The options of pmon report that perf report has too (issue #27). */
struct views {
	struct cli_symbols syms; /* --debug-dir, --symfs, --kallsyms */
	const char *sort, *comms, *dsos, *symbols, *pids, *tids, *cpus, *time;
	bool children, no_children, nr_samples, stdio, header;
	int graph; /* -g: 0 none given, 1 caller, 2 callee, 3 none */
	double pct_limit;
};

/* --sort KEYS into the classic sort, a call graph (1 caller, 2 callee), or
 * a view's key list for the library. Return: CLI_OK or CLI_USAGE. */
static int sort_of(struct views *vw, enum pmon_report_sort *sort, int *graph,
		   struct pmon_report_opts *ro)
{
	static const char *const classic[] = { "symbol", "dso", "line" };

	*sort = PMON_SORT_SYMBOL;
	*graph = vw->graph == 1 || vw->graph == 2 ? vw->graph : 0;
	if (!vw->sort)
		return CLI_OK;
	if (!strcmp(vw->sort, "caller") || !strcmp(vw->sort, "callee")) {
		if (vw->graph) {
			cli_error("--sort %s and -g: give one call graph", vw->sort);
			return CLI_USAGE;
		}
		*graph = !strcmp(vw->sort, "caller") ? 1 : 2;
		return CLI_OK;
	}
	for (size_t i = 0; i < 3; i++)
		if (!strcmp(vw->sort, classic[i])) {
			*sort = (enum pmon_report_sort)i;
			return CLI_OK;
		}
	ro->sort_keys = vw->sort; /* the library checks the keys */
	return CLI_OK;
}

static int graph_opt(const struct cli_option *opt, const char *arg)
{
	static const char *const modes[] = { "caller", "callee", "none" };

	for (int i = 0; i < 3; i++)
		if (!strcmp(arg, modes[i])) {
			*(int *)opt->value = i + 1;
			return CLI_OK;
		}
	cli_error("-g '%s': caller, callee or none", arg);
	return CLI_USAGE;
}

/* The report's options from the command line: a view where perf's keys,
 * filters or --children ask for one. Return: CLI_OK or CLI_USAGE. */
static int views_opts(struct views *vw, const char *fmt, int graph, struct pmon_report_opts *ro)
{
	ro->comms = vw->comms, ro->dsos = vw->dsos, ro->symbols = vw->symbols;
	ro->pids = vw->pids, ro->tids = vw->tids, ro->cpus = vw->cpus, ro->time = vw->time;
	ro->children = vw->children && !vw->no_children;
	bool view = ro->sort_keys || ro->comms || ro->dsos || ro->symbols || ro->pids || ro->tids ||
		ro->cpus || ro->time || ro->children;
	if (view && (graph || (strcmp(fmt, "text") && strcmp(fmt, "json")))) {
		cli_error("--sort KEYS, the filters and --children make the text and json "
			  "tables: not %s%s",
			  graph ? "the call graph (-g, --sort caller|callee)" : "--format ",
			  graph ? "" : fmt);
		return CLI_USAGE;
	}
	return CLI_OK;
}

int cmd_report(int argc, char **argv)
{
	static const char *const formats[] = { "text",	     "json",  "folded", "flamegraph",
					       "speedscope", "pprof", NULL };
	const char *in = "pmon.data", *outpath = NULL, *stack_event = NULL;
	unsigned long limit = 0, width = 1200;
	int fmti = 0;
	bool no_inline = false;
	double min_pct = -1;
	struct views vw = { .pct_limit = 0 };
	const struct cli_option options[] = {
		CLI_OPT_STRING('i', "input", &in, "FILE", "the recording (default pmon.data)"),
		CLI_OPT_STRING('s', "sort", &vw.sort, "KEYS",
			       "symbol (default), dso or line; perf's keys comm, pid,\n"
			       "tid, cpu, dso, symbol (sym), line (srcline), combined\n"
			       "with commas (comm,dso,symbol: one column each); or the\n"
			       "call graph: caller (from the outermost callers down),\n"
			       "callee (each sampled function, then its callers)"),
		CLI_OPT_FLAG(0, "children", &vw.children,
			     "a children column too: each entry's share of the samples\n"
			     "with it anywhere in their call chain (record with -g)"),
		CLI_OPT_FLAG(0, "no-children", &vw.no_children,
			     "self shares only (pmon's default; perf's without -g)"),
		CLI_OPT_CALLBACK(0, "percent-limit", &vw.pct_limit, "P", opt_limit_percent,
				 "hide entries under P% (the call graph: its nodes)"),
		CLI_OPT_FLAG('n', "show-nr-samples", &vw.nr_samples,
			     "the samples column (pmon shows it always)"),
		CLI_OPT_STRING('c', "comms", &vw.comms, "LIST", "only these commands"),
		CLI_OPT_STRING(0, "comm", &vw.comms, "LIST", NULL),
		CLI_OPT_STRING(0, "pid", &vw.pids, "LIST", "only these processes"),
		CLI_OPT_STRING(0, "tid", &vw.tids, "LIST", "only these threads"),
		CLI_OPT_STRING('C', "cpu", &vw.cpus, "LIST", "only these CPUs (0,2-3)"),
		CLI_OPT_STRING('d', "dsos", &vw.dsos, "LIST",
			       "only samples in these files (base name or path)"),
		CLI_OPT_STRING(0, "dso", &vw.dsos, "LIST", NULL),
		CLI_OPT_STRING('S', "symbols", &vw.symbols, "LIST",
			       "only samples in these functions"),
		CLI_OPT_STRING(0, "symbol", &vw.symbols, "LIST", NULL),
		CLI_OPT_STRING(0, "time", &vw.time, "T",
			       "only samples in START,STOP (seconds of the recording's\n"
			       "clock; ranges apart by spaces), or percents of its span:\n"
			       "10%/2 (the second tenth), 0%-10%,30%-40%"),
		CLI_OPT_CALLBACK('g', "call-graph", &vw.graph, "MODE", graph_opt,
				 "perf's -g: caller or callee (--sort caller|callee),\n"
				 "none (the flat table)"),
		CLI_OPT_FLAG(0, "header", &vw.header, "the recording's header info first"),
		CLI_OPT_FLAG(0, "stdio", &vw.stdio, "accepted for perf's users: pmon prints text"),
		CLI_OPT_CALLBACK(0, "min-percent", &min_pct, "P", opt_limit_percent,
				 "the call graph leaves out nodes under P% of the samples\n"
				 "(default 0.5, or --percent-limit)"),
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
		CLI_OPT_SYMBOLS(&vw.syms),
		CLI_OPT_OUTPUT(&outpath, "OUT", "write to OUT instead of standard output"),
		CLI_OPT_END(),
	};
	struct pmon_report r;
	FILE *out;
	int rc = cli_parse_options(
		"report",
		"usage: pmon report [-i FILE] [--sort KEYS|caller|callee] [--limit N]\n"
		"                   [--children] [--percent-limit P] [-n] [--header]\n"
		"                   [--comms L] [--pid L] [--tid L] [--cpu L] [--dsos L]\n"
		"                   [--symbols L] [--time T] [-g caller|callee|none]\n"
		"                   [--min-percent P] [-o OUT]\n"
		"                   [--format text|json|folded|flamegraph|speedscope|pprof]\n"
		"                   [--width PX] [--event E]",
		options, CLI_PARSE_NO_OPERANDS, argc, argv);

	if (rc <= 0)
		return -rc;
	rc = CLI_OK;
	const char *fmt = formats[fmti];
	enum pmon_report_sort sort;
	int graph; /* 1: caller, 2: callee */
	struct pmon_report_opts ro = { .sz = sizeof(ro),
				       .debug_dir = vw.syms.debug_dir,
				       .symfs = vw.syms.symfs,
				       .kallsyms = vw.syms.kallsyms,
				       .event = stack_event };
	if (sort_of(&vw, &sort, &graph, &ro) || views_opts(&vw, fmt, graph, &ro))
		return CLI_USAGE;
	if (min_pct < 0)
		min_pct = vw.pct_limit > 0 ? vw.pct_limit : 0.5;
	bool inl = !no_inline;
	if (!strcmp(fmt, "pprof") && (!outpath || !strcmp(outpath, "-")) && isatty(1)) {
		cli_error("--format pprof writes gzipped binary: give -o FILE");
		return CLI_USAGE;
	}
	bool stacks = graph || (strcmp(fmt, "text") && strcmp(fmt, "json"));
	ro.sort = sort;
	ro.inlines = inl && stacks;
	ro.no_stacks = !stacks;
	int err = pmon_report_read(in, &ro, &r);
	if (err == -EINVAL) { /* a sort key, filter or time range the library refused */
		cli_error("%s", pmon_errdetail());
		return CLI_USAGE;
	}
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
	if (vw.header && !strcmp(fmt, "text"))
		print_header(out, &r, in);
	struct shown how = { fmt, graph, (unsigned)width, min_pct, sort, limit, vw.pct_limit,
			     in,  &ro };
	err = write_report(out, &r, &how);
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
