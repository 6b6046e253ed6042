// SPDX-License-Identifier: MIT
/*
 * pmon stat: run a command (or watch processes, threads, CPUs) and count its
 * events -- the seeds' EMON, on perf_event_open. Options follow perf stat;
 * the output is perf's (table, -x CSV, --json lines; docs/stat-json.md)
 * with a reason on every row that could not be counted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#include <jansson.h>

#include "cli.h"
#include "sim.h"
#include "stat.h"
#include <pmon/pmon.h>

enum fmt { FMT_TABLE, FMT_CSV, FMT_JSON };

struct stat_opts {
	struct cli_list events; /* -e, as given */
	unsigned long repeat;
	unsigned long interval_ms;
	unsigned long interval_count;
	const char *sep;
	int fmt; /* enum fmt */
	const char *outpath;
	bool no_inherit, per_thread, per_cpu, system_wide, regions;
	int aggr; /* -A, --per-core ...: enum pmon_aggr_mode, 0 for none */
	long delay_ms; /* -D */
	unsigned detailed; /* -d, -dd, -ddd: perf's detailed sets */
	struct {
		const char *text;
		size_t after; /* how many -e came before it: it filters the last */
	} filter[8], cgroup[8]; /* --filter; -G */
	size_t nfilter, ncgroup;
	bool interval_clear, summary, metric_only;
	int big_num; /* -B 1, --no-big-num 0, else -1: grouped on a terminal */
	bool msr_backend, msr_cleanup;
	bool simulate; /* --simulate: callgrind's totals (cli/cmd-simulate.c) */
	const char *plot;
	const char *msr_device, *cpuid_file;
	struct pmon_target_spec spec; /* -p, -t, -C, -a as typed */
	struct pmon_target *tgt; /* built from spec and checked once */
	size_t npids, ntids; /* its -p processes, -t threads */
	char **argv; /* the command, or NULL */
};

/* One event's values over the -r runs. */
struct series {
	struct pmon_running_stats st;
	struct pmon_mux_error mux; /* each run's reading, for the error of the mean */
	struct pmon_count last;
};

/* The standard error of row @c's value from multiplexing (docs/stat-json.md):
 * with -r over the runs (of their mean), else of this reading; 0 when it
 * ran all the time it was enabled. */
static double mux_error(const struct pmon_count *c, const struct series *s)
{
	struct pmon_mux_error one = { 0 };

	if (c->status != PMON_COUNT_OK)
		return 0;
	if (s && s->mux.n)
		return pmon_mux_error__estimate(&s->mux) / (double)s->mux.n;
	pmon_mux_error__add(&one, c->value, c->enabled, c->running);
	return pmon_mux_error__estimate(&one);
}

static struct out *plot_out; /* --plot: the intervals as CSV, for pmon plot */
static struct pmon_aggr *aggr; /* -A, --per-*: the run's units grouped */
static struct series *aggr_runs; /* with -r: each group's events over the runs */
static size_t naggr_runs;

/* -x SEP: CSV with that separator; struct stat_opts *. */
static int opt_csv(const struct cli_option *opt, const char *arg)
{
	struct stat_opts *o = opt->value;

	if (!arg[0]) {
		cli_error("-x: the separator is empty");
		return CLI_USAGE;
	}
	o->sep = arg;
	o->fmt = FMT_CSV;
	return CLI_OK;
}

/* -D MS: perf's ms, or -1 (enabled later through perf's --control: not
 * offered yet); struct stat_opts *. */
static int opt_delay(const struct cli_option *opt, const char *arg)
{
	struct stat_opts *o = opt->value;
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (v == -1 && !*end) {
		cli_error("-D -1 (start disabled until perf's --control enables the events): not "
			  "yet, pmon has no --control; give the delay in ms");
		return CLI_USAGE;
	}
	if (errno || end == arg || *end || v < 0 || v > 3600000) {
		cli_error("-D '%s': the delay is in milliseconds, 0 to 3600000", arg);
		return CLI_USAGE;
	}
	o->delay_ms = v;
	return CLI_OK;
}

/* --filter F: for the last event of the -e before it (perf's); struct
 * stat_opts *. */
static int opt_filter(const struct cli_option *opt, const char *arg)
{
	struct stat_opts *o = opt->value;

	if (!o->events.n || o->nfilter == sizeof(o->filter) / sizeof(o->filter[0])) {
		cli_error(o->events.n ? "--filter: at most 8, one per tracepoint"
				      : "--filter follows the -e tracepoint it filters (as perf)");
		return CLI_USAGE;
	}
	o->filter[o->nfilter].text = arg;
	o->filter[o->nfilter++].after = o->events.n;
	return CLI_OK;
}

/* -G NAMES: for the events of the -e before it (perf's); struct stat_opts *. */
static int opt_cgroup(const struct cli_option *opt, const char *arg)
{
	struct stat_opts *o = opt->value;

	if (!o->events.n || o->ncgroup == sizeof(o->cgroup) / sizeof(o->cgroup[0])) {
		cli_error(o->events.n ? "-G: at most 8"
				      : "-G follows the -e events it counts in "
					"the cgroups (as perf)");
		return CLI_USAGE;
	}
	o->cgroup[o->ncgroup].text = arg;
	o->cgroup[o->ncgroup++].after = o->events.n;
	return CLI_OK;
}

/* perf's -G: one name for every event before it that has none yet, or a
 * name per event in order ("a,,b": the second counts everything).
 * Return: 0, a negative error (detail), or 1 when said here. */
static int apply_cgroups(const struct stat_opts *o, struct pmon_evlist *l, const size_t *last)
{
	int err = 0;

	for (size_t g = 0; g < o->ncgroup && !err; g++) {
		const char *p = o->cgroup[g].text;
		size_t nev = last[o->cgroup[g].after - 1] + 1, k = 0;
		bool one = !strchr(p, ',');
		for (; !err && (k == 0 || *p); k++) {
			char name[256], dir[4096] = "";
			size_t len = strcspn(p, ",");
			snprintf(name, sizeof(name), "%.*s", (int)len, p);
			p += len + (p[len] == ',');
			if (k >= nev) {
				cli_error("-G '%s': more cgroups than the %zu events before it",
					  o->cgroup[g].text, nev);
				return 1; /* said */
			}
			if (name[0] && (err = pmon_cgroup_resolve(name, dir, sizeof(dir))))
				break;
			for (size_t e = one ? 0 : k; e < (one ? nev : k + 1) && !err; e++)
				if (!one || !pmon_evlist__cgroup(l, e))
					err = pmon_evlist__set_cgroup(l, e, dir);
		}
	}
	return err;
}

/* -d: once per d (perf's -dd, -ddd; more is -ddd); struct stat_opts *. */
static int opt_detailed(const struct cli_option *opt, const char *arg)
{
	struct stat_opts *o = opt->value;

	(void)arg;
	o->detailed += o->detailed < 3;
	return CLI_OK;
}

/* Checks of the options #29 added; CLI_OK or CLI_USAGE (said). */
static int check_perf_options(const struct stat_opts *o)
{
	if (o->aggr && !o->system_wide) {
		cli_error("%s needs -a or -C: it groups CPU-wide counts by where each CPU sits",
			  o->aggr == PMON_AGGR_CPU ? "-A/--no-aggr"
						   : "--per-core/-die/-socket/-node");
		return CLI_USAGE;
	}
	if (o->ncgroup && !o->system_wide) {
		cli_error("-G needs -a or -C: a cgroup's tasks are counted on each CPU (as perf)");
		return CLI_USAGE;
	}
	if (o->aggr && o->per_cpu) {
		cli_error("-A and --per-core/-die/-socket/-node exclude --per-cpu");
		return CLI_USAGE;
	}
	if (o->plot && ((o->aggr && o->aggr != PMON_AGGR_CPU) || o->metric_only)) {
		cli_error("--plot draws events per interval or CPU: not yet with --per-core/-die/"
			  "-socket/-node or --metric-only");
		return CLI_USAGE;
	}
	if ((o->summary || o->interval_clear) && !o->interval_ms) {
		cli_error("--%s goes with -I", o->summary ? "summary" : "interval-clear");
		return CLI_USAGE;
	}
	if (o->big_num == 1 && o->fmt != FMT_TABLE) {
		cli_error("-B groups the table's digits: not with -x or --json (perf refuses it "
			  "too)");
		return CLI_USAGE;
	}
	if (o->delay_ms && o->regions) {
		cli_error("-D and --regions exclude each other: the regions count from the start");
		return CLI_USAGE;
	}
	return CLI_OK;
}

/* The target built once, and the options checked together; CLI_OK or
 * CLI_USAGE (said). */
static int check_args(struct stat_opts *o)
{
	if (o->argv && !o->argv[0][0]) {
		cli_error("the command is empty");
		return CLI_USAGE;
	}
	o->spec.sz = sizeof(o->spec);
	/* Once, before anything opens: the lists parse, every CPU is online,
	 * every process and thread is there. */
	o->tgt = pmon_target__new(&o->spec);
	if (!o->tgt) {
		cli_error("%s", pmon_errdetail());
		return CLI_USAGE;
	}
	pmon_target__pids(o->tgt, &o->npids);
	pmon_target__tids(o->tgt, &o->ntids);
	o->system_wide = pmon_target__system_wide(o->tgt);
	if (!o->argv && !o->npids && !o->ntids && !o->system_wide) {
		cli_error("nothing to count: give a command ('pmon stat -- CMD') or a target (-p, "
			  "-t, "
			  "-a)");
		return CLI_USAGE;
	}
	if ((o->npids || o->ntids) && o->system_wide) {
		cli_error("-p/-t exclude -a/-C: count one kind of target");
		return CLI_USAGE;
	}
	if (o->npids && o->ntids) {
		cli_error("-p and -t exclude each other");
		return CLI_USAGE;
	}
	if (o->repeat > 1 && (o->interval_ms || !o->argv)) {
		cli_error("-r needs a command and excludes -I");
		return CLI_USAGE;
	}
	if (o->plot && !o->interval_ms) {
		cli_error("--plot draws the intervals: it needs -I");
		return CLI_USAGE;
	}
	if (o->interval_count && !o->interval_ms) {
		cli_error("--interval-count needs -I");
		return CLI_USAGE;
	}
	if (o->per_thread && !(o->npids || o->ntids)) {
		cli_error("--per-thread needs -p or -t");
		return CLI_USAGE;
	}
	if (o->msr_backend &&
	    (!o->argv || o->npids || o->ntids || o->repeat > 1 || o->interval_ms || o->regions ||
	     o->fmt != FMT_TABLE)) {
		cli_error("--backend msr counts a command's run on CPUs: no "
			  "-p/-t/-r/-I/--regions/-x/--json");
		return CLI_USAGE;
	}
	if ((o->msr_device || o->cpuid_file) && !o->msr_backend) {
		cli_error("--msr-device and --cpuid-file go with --backend msr");
		return CLI_USAGE;
	}
	if (o->regions && !o->argv) {
		cli_error("--regions needs a command (one linked with libpmon's region API)");
		return CLI_USAGE;
	}
	if (o->per_cpu && !o->system_wide) {
		cli_error("--per-cpu needs -a or -C");
		return CLI_USAGE;
	}
	return check_perf_options(o);
}

static int parse_args(int argc, char **argv, struct stat_opts *o)
{
	static const char *const backends[] = { "perf", "msr", NULL };
	int backend = 0;
	const struct cli_option options[] = {
		CLI_OPT_LIST('e', "event", &o->events, "LIST",
			     "events (repeatable; comma lists; groups {a,b});\n"
			     "'pmon list' names them"),
		CLI_OPT_UINT_MIN('r', "repeat", &o->repeat, "N", 1, 100000,
				 "the repeat count must be at least 1",
				 "run the command N times: the mean and +- its relative\n"
				 "standard error per event"),
		CLI_OPT_UINT_MIN('I', "interval", &o->interval_ms, "MS", 1, 3600000,
				 "the interval must be at least 1 ms",
				 "print counts every MS milliseconds"),
		CLI_OPT_UINT_MIN(0, "interval-print", &o->interval_ms, "MS", 1, 3600000,
				 "the interval must be at least 1 ms", NULL), /* perf's name */
		CLI_OPT_UINT_MIN(0, "interval-count", &o->interval_count, "N", 1, 100000000,
				 "must be at least 1",
				 "stop after N intervals (the command is terminated)"),
		CLI_OPT_CALLBACK('x', "field-separator", o, "SEP", opt_csv,
				 "CSV: value,unit,event,runtime,%running,metric,unit"),
		CLI_OPT_SET_INT('j', "json", &o->fmt, FMT_JSON,
				"JSON lines (schema: docs/stat-json.md)"),
		CLI_OPT_OUTPUT(&o->outpath, "FILE",
			       "write the counts to FILE (default: standard error)"),
		CLI_OPT_STRING('p', "pid", &o->spec.pid, "LIST",
			       "count existing processes (all their threads); with a\n"
			       "command, for as long as it runs (e.g. -- sleep 1)"),
		CLI_OPT_STRING('t', "tid", &o->spec.tid, "LIST", "count existing threads"),
		CLI_OPT_FLAG('a', "all-cpus", &o->spec.system_wide,
			     "count every task on every CPU"),
		CLI_OPT_STRING('C', "cpu", &o->spec.cpu_list, "LIST",
			       "only these CPUs (implies -a); lists: 0-3,5"),
		CLI_OPT_FLAG('i', "no-inherit", &o->no_inherit,
			     "do not count children and new threads"),
		CLI_OPT_FLAG(0, "per-thread", &o->per_thread, "a row per thread (with -p/-t)"),
		CLI_OPT_FLAG(0, "per-cpu", &o->per_cpu, "a row per CPU (with -a/-C)"),
		CLI_OPT_SET_INT('A', "no-aggr", &o->aggr, PMON_AGGR_CPU,
				"a row per CPU and event, as perf (with -a/-C)"),
		CLI_OPT_SET_INT(0, "per-core", &o->aggr, PMON_AGGR_CORE,
				"a row per core, S0-D0-C0 and its CPUs (with -a/-C)"),
		CLI_OPT_SET_INT(0, "per-die", &o->aggr, PMON_AGGR_DIE,
				"a row per die (with -a/-C)"),
		CLI_OPT_SET_INT(0, "per-socket", &o->aggr, PMON_AGGR_SOCKET,
				"a row per socket (with -a/-C)"),
		CLI_OPT_SET_INT(0, "per-node", &o->aggr, PMON_AGGR_NODE,
				"a row per NUMA node (with -a/-C)"),
		CLI_OPT_CALLBACK(0, "filter", o, "FILTER", opt_filter,
				 "the kernel's filter for the -e tracepoint before it\n"
				 "(e.g. 'prev_pid == 0')"),
		CLI_OPT_CALLBACK('G', "cgroup", o, "NAMES", opt_cgroup,
				 "count the -e events before it only in these cgroups\n"
				 "(perf's: one for all, or one per event; with -a)"),
		CLI_OPT_CALLBACK('d', "detailed", o, NULL, opt_detailed,
				 "also perf's cache events: -d L1-dcache, LLC; -dd\n"
				 "L1-icache, dTLB, iTLB; -ddd L1-dcache prefetches"),
		CLI_OPT_CALLBACK('D', "delay", o, "MS", opt_delay,
				 "start counting MS ms after the command starts"),
		CLI_OPT_FLAG(0, "interval-clear", &o->interval_clear,
			     "with -I: clear the screen before each interval"),
		CLI_OPT_FLAG(0, "metric-only", &o->metric_only,
			     "only the derived metrics, a column each (perf's)"),
		CLI_OPT_FLAG(0, "summary", &o->summary,
			     "with -I: the totals of the run after the intervals"),
		CLI_OPT_SET_INT('B', "big-num", &o->big_num, 1,
				"group the counts' digits as the locale does (the\n"
				"default on a terminal)"),
		CLI_OPT_SET_INT(0, "no-big-num", &o->big_num, 0, "never group the digits"),
		CLI_OPT_CHOICE(0, "backend", &backend, "msr", backends,
			       "program the counters through MSRs (root, Intel\n"
			       "architectural events; restores them; lists writes)"),
		CLI_OPT_STRING(0, "msr-device", &o->msr_device, "PATH",
			       "instead of /dev/cpu/%d/msr (tests: a file)"),
		CLI_OPT_CPUID_FILE(0, &o->cpuid_file,
				   "the CPU the MSR backend programs (with a fake device)"),
		CLI_OPT_FLAG(0, "cleanup", &o->msr_cleanup,
			     "with --backend msr: put back the MSRs a pmon that was\n"
			     "killed left programmed (from its state file)"),
		CLI_OPT_STRING(0, "plot", &o->plot, "FILE",
			       "with -I: also draw the intervals (FILE.svg or\n"
			       "FILE.png)"),
		CLI_OPT_FLAG(0, "regions", &o->regions,
			     "also collect the command's instrumented regions\n"
			     "(pmon/region.h): same events, statistics per region"),
		CLI_OPT_FLAG(0, "simulate", &o->simulate,
			     "the command's events simulated by valgrind's callgrind\n"
			     "(sim/ events; no PMU needed; 20-100x slower)"),
		CLI_OPT_TEXT("Exit status: the command's (128+N if killed by signal N); 2 for bad "
			     "input;\n"
			     "3 when no requested event can be counted here (docs/exit-codes.md)."),
		CLI_OPT_END(),
	};
	int argi;

	o->repeat = 1;
	o->big_num = -1;
	argi = cli_parse_options(
		"stat",
		"usage: pmon stat [options] [--] command [args]\n"
		"       pmon stat [options] -p PID | -t TID | -a   (until Ctrl-C or "
		"the target exits)",
		options, CLI_PARSE_STOP_AT_OPERAND, argc, argv);
	if (argi <= 0) /* --help shown (-1: the caller ends with CLI_OK), or an error said */
		return argi == 0 ? -1 : -argi;
	o->msr_backend = backend == 1;
	if (argi < argc)
		o->argv = argv + argi;
	if (o->msr_cleanup) {
		if (!o->msr_backend || o->argv) {
			cli_error("--cleanup goes with --backend msr and no command: it restores "
				  "the MSRs a killed pmon left programmed");
			return CLI_USAGE;
		}
		return CLI_OK;
	}
	return check_args(o);
}

/* ---- events ---------------------------------------------------------- */

static const char *const hw_default = "cycles,instructions,branches,branch-misses";
static const char *const sw_default = "task-clock,context-switches,cpu-migrations,page-faults";

static bool core_pmu(void)
{
	return pmon_kernel_has_core_pmu(NULL);
}

static struct pmon_evlist *make_events(const struct stat_opts *o, const char **set)
{
	struct pmon_evlist *l = pmon_evlist__new(NULL);
	int err = 0;

	if (!l) {
		cli_error("out of memory");
		return NULL;
	}
	*set = NULL;
	size_t *last = calloc(o->events.n + 1, sizeof(*last)); /* each -e's last event */
	for (size_t i = 0; last && i < o->events.n && !err; i++) {
		err = pmon_evlist__add(l, o->events.v[i]);
		last[i] = pmon_evlist__count(l) - 1;
	}
	for (size_t f = 0; last && f < o->nfilter && !err; f++)
		err = pmon_evlist__set_filter(l, last[o->filter[f].after - 1], o->filter[f].text);
	if (last && !err)
		err = apply_cgroups(o, l, last);
	if (!last)
		err = -ENOMEM;
	free(last);
	if (!o->events.n) {
		err = pmon_evlist__add(l, sw_default);
		if (!err && core_pmu()) {
			err = pmon_evlist__add(l, hw_default);
			*set = "default events: software and hardware";
		} else {
			*set = "default events: software only -- this machine exposes no hardware "
			       "PMU (see 'pmon info')";
		}
	}
	if (!err && o->detailed) /* after -e or the defaults, as perf */
		err = pmon_evlist__add_detailed(l, o->detailed);
	if (err) {
		if (err < 0)
			cli_error("%s", pmon_errdetail());
		pmon_evlist__free(l);
		/* A known event of a PMU this machine lacks: not possible here. */
		errno = cli_event_error_code(err) == CLI_UNSUPPORTED ? EOPNOTSUPP : EINVAL;
		return NULL;
	}
	return l;
}

/* ---- output ---------------------------------------------------------- */

struct out {
	FILE *f;
	int fmt; /* enum fmt */
	const char *sep;
	const char *path; /* NULL: standard error */
	int aggr; /* enum pmon_aggr_mode of the rows, 0 for none */
	bool group; /* -B: the table's counts grouped in thousands */
	bool metric_only, metric_header; /* --metric-only; its header printed */
	/* --summary's totals: each event's intervals, for its error (their rates' spread) */
	const struct pmon_mux_error *sum_mux;
};

/* A number of the table: with -B in the user's locale, all of them (as
 * perf prints them; "30,16 msec ... # 0.298" read as 298 in de_DE). */
static const char *tnum(const struct out *o, char *b, size_t n, double v, int decimals)
{
	if (o->group)
		pmon_format_grouped(b, n, v, decimals);
	else
		snprintf(b, n, "%.*f", decimals, v);
	return b;
}

static const char *status_text(const struct pmon_count *c)
{
	return c->status == PMON_COUNT_NOT_SUPPORTED  ? "<not supported>"
		: c->status == PMON_COUNT_NOT_COUNTED ? "<not counted>"
						      : NULL;
}

/* docs/stat-json.md's "status" values. */
static const char *status_json(const struct pmon_count *c)
{
	return c->status == PMON_COUNT_OK		? "counted"
		: c->status == PMON_COUNT_NOT_SUPPORTED ? "not supported"
							: "not counted";
}

/* A row's CPU, thread or group in JSON (docs/stat-json.md). */
static void json_label(const struct out *o, json_t *j, const char *unit_label, size_t nr)
{
	if (nr) { /* perf's keys: "socket" : "S0", "aggregate-number" : 2 */
		static const char *const key[] = { [PMON_AGGR_CORE] = "core",
						   [PMON_AGGR_DIE] = "die",
						   [PMON_AGGR_SOCKET] = "socket",
						   [PMON_AGGR_NODE] = "node" };
		json_object_set_new(j, key[o->aggr], json_string(unit_label));
		json_object_set_new(j, "aggregate-number", json_integer((json_int_t)nr));
	} else if (unit_label) {
		/* "CPU3" from --per-cpu or -A, a thread id from --per-thread */
		if (!strncmp(unit_label, "CPU", 3))
			json_object_set_new(j, "cpu",
					    json_integer(strtol(unit_label + 3, NULL, 10)));
		else
			json_object_set_new(j, "thread",
					    json_integer(strtol(unit_label, NULL, 10)));
	}
}

/* --metric-only: event @i's metric in a fixed unit (a rate in /sec, as
 * EVENT/sec so that two rates are two columns), or !ok where it has none. */
static struct pmon_metric column_metric(const struct pmon_evlist *l, const struct pmon_count *v,
					size_t i, double wall_s, char *name, size_t len)
{
	struct pmon_metric m = pmon_metric__derive(l, v, i, wall_s);
	const char *slash = m.ok ? strstr(m.unit, "/sec") : NULL;

	if (slash) {
		m.value *= m.unit[0] == 'M' ? 1e6 : m.unit[0] == 'K' ? 1e3 : 1;
		snprintf(name, len, "%s/sec", pmon_evlist__event(l, i)->name);
	} else if (m.ok) {
		snprintf(name, len, "%s", m.unit);
	}
	return m;
}

/* --metric-only: the events with a metric when all are counted (the
 * columns, the same on every row). */
static bool has_metric(const struct pmon_evlist *l, size_t i, char *name, size_t len)
{
	size_t n = pmon_evlist__count(l);
	struct pmon_count *all = calloc(n, sizeof(*all));
	bool ok = false;

	for (size_t k = 0; all && k < n; k++)
		all[k] = (struct pmon_count){
			.value = 1, .enabled = 1, .running = 1, .running_pct = 100
		};
	if (all)
		ok = column_metric(l, all, i, 1, name, len).ok;
	free(all);
	return ok;
}

/* --metric-only: one unit's metrics on a line, after a header of their
 * names before the first (perf's layout); JSON: {"NAME": value, ...}. */
static void print_metric_row(struct out *o, const struct pmon_evlist *l, const struct pmon_count *v,
			     double wall_s, double interval, const char *label, size_t nr)
{
	size_t n = pmon_evlist__count(l);
	bool csv = o->fmt == FMT_CSV;
	const char *x = csv ? o->sep : " ";
	json_t *j = o->fmt == FMT_JSON ? json_object() : NULL;
	char name[256];

	if (!j && !o->metric_header) {
		o->metric_header = true;
		if (interval >= 0)
			fprintf(o->f, csv ? "time%s" : "#%13s%s", csv ? x : "time", x);
		if (label)
			fprintf(o->f, csv ? "%s" : "%-12s ", csv ? x : "");
		if (nr)
			fprintf(o->f, csv ? "cpus%s" : "%4s ", csv ? x : "cpus");
		for (size_t i = 0, k = 0; i < n; i++)
			if (has_metric(l, i, name, sizeof(name)))
				fprintf(o->f, csv ? "%s%s" : "%s%20s", k++ ? x : "", name);
		fputc('\n', o->f);
	}
	if (j) {
		if (interval >= 0)
			json_object_set_new(j, "interval", json_real(interval));
		json_label(o, j, label, nr);
	} else {
		char t[64];
		if (interval >= 0 && csv)
			fprintf(o->f, "%.9f%s", interval, x);
		else if (interval >= 0)
			fprintf(o->f, "%14s ", tnum(o, t, sizeof(t), interval, 6));
		if (label)
			fprintf(o->f, csv ? "%s%s" : "%-12s ", label, x);
		if (nr)
			fprintf(o->f, csv ? "%zu%s" : "%4zu ", nr, x);
	}
	for (size_t i = 0, k = 0; i < n; i++) {
		if (!has_metric(l, i, name, sizeof(name)))
			continue;
		struct pmon_metric m = column_metric(l, v, i, wall_s, name, sizeof(name));
		if (j && m.ok)
			json_object_set_new(j, name, json_real(m.value));
		else if (!j && m.ok && csv)
			fprintf(o->f, "%s%.2f", k ? x : "", m.value);
		else if (!j && m.ok)
			fprintf(o->f, "%20s", tnum(o, name, sizeof(name), m.value, 3));
		else if (!j)
			fprintf(o->f, csv ? "%s" : "%s%20s", k ? x : "", "");
		k++;
	}
	if (j) {
		json_dumpf(j, o->f, JSON_COMPACT | JSON_PRESERVE_ORDER);
		json_decref(j);
	}
	fputc('\n', o->f);
}

/*
 * One event row. @s: the -r statistics (NULL for a single run); @interval:
 * the time of an -I row, or < 0; @unit_label: a CPU or thread label, or NULL;
 * @nr: the CPUs of a --per-core/-die/-socket/-node group (perf's column), or 0.
 * With -r, perf's "+- x%" is the standard error of the mean relative to the
 * mean (rel_stddev_stats()); -x puts it after the event name ("variance").
 */
static void print_row(struct out *o, const struct pmon_evlist *l, const struct pmon_count *v,
		      size_t i, double wall_s, const struct series *s, double interval,
		      const char *unit_label, size_t nr)
{
	const struct pmon_event_desc *d = pmon_evlist__event(l, i);
	const struct pmon_count *c = &v[i];
	struct pmon_metric m = pmon_metric__derive(l, v, i, wall_s);
	const char *st = status_text(c);
	double mean = s && s->st.n ? s->st.mean : c->value;
	double sd = s ? pmon_running_stats__stddev(&s->st) : 0;
	double noise = s ? pmon_running_stats__rel_stderr(&s->st) : 0;
	double cv = s && mean != 0 ? 100 * sd / fabs(mean) : 0;
	double mux = o->sum_mux && !unit_label && !nr && c->status == PMON_COUNT_OK
		? pmon_mux_error__estimate(&o->sum_mux[i])
		: mux_error(c, s);

	if (o->fmt == FMT_CSV) {
		const char *x = o->sep;
		char var[32] = "";
		if (s)
			snprintf(var, sizeof(var), "%.2f%%%s", noise, x);
		if (interval >= 0)
			fprintf(o->f, "%.9f%s", interval, x);
		if (unit_label)
			fprintf(o->f, "%s%s", unit_label, x);
		if (nr)
			fprintf(o->f, "%zu%s", nr, x);
		if (st) { /* perf's 7 fields: <not supported>,,cycles,0,100.00,, */
			fprintf(o->f, "%s%s%s%s%s%s%s0%s100.00%s%s\n", st, x, d->unit, x, d->name,
				x, var, x, x, x);
			return;
		}
		fprintf(o->f, "%.*f%s%s%s%s%s%s%llu%s%.2f%s", d->unit[0] ? 2 : 0, mean, x, d->unit,
			x, d->name, x, var, (unsigned long long)c->running, x, c->running_pct, x);
		if (m.ok)
			fprintf(o->f, "%.2f%s%s", m.value, x, m.unit);
		else
			fprintf(o->f, "%s", x);
		if (mux > 0) /* multiplexed: one field more, the value's error */
			fprintf(o->f, "%s%.*f", x, d->unit[0] ? 2 : 0, mux);
		fputc('\n', o->f);
		return;
	}
	if (o->fmt == FMT_JSON) {
		json_t *j = json_object();
		char val[64];
		if (interval >= 0)
			json_object_set_new(j, "interval", json_real(interval));
		json_label(o, j, unit_label, nr);
		snprintf(val, sizeof(val), "%f", mean);
		json_object_set_new(j, "counter-value", json_string(st ? st : val));
		json_object_set_new(j, "unit", json_string(d->unit));
		json_object_set_new(j, "event", json_string(d->name));
		if (s)
			json_object_set_new(j, "variance", json_real(noise));
		json_object_set_new(j, "event-runtime", json_integer((json_int_t)c->running));
		json_object_set_new(j, "pcnt-running", json_real(st ? 0 : c->running_pct));
		if (m.ok) {
			json_object_set_new(j, "metric-value", json_real(m.value));
			json_object_set_new(j, "metric-unit", json_string(m.unit));
		}
		json_object_set_new(j, "status", json_string(status_json(c)));
		if (!st)
			json_object_set_new(j, "value", json_real(mean));
		if (mux > 0)
			json_object_set_new(j, "mux-error", json_real(mux));
		if (s && s->st.n > 1) {
			json_object_set_new(j, "stddev", json_real(sd));
			json_object_set_new(j, "cv-percent", json_real(cv));
			json_object_set_new(j, "runs", json_integer((json_int_t)s->st.n));
		}
		if (c->reason)
			json_object_set_new(j, "reason", json_string(c->reason));
		if (c->user_only)
			json_object_set_new(j, "user-only", json_true());
		json_dumpf(j, o->f, JSON_COMPACT | JSON_PRESERVE_ORDER);
		fputc('\n', o->f);
		json_decref(j);
		return;
	}
	/* table */
	char b[64];
	if (interval >= 0)
		fprintf(o->f, "%14s ", tnum(o, b, sizeof(b), interval, 6));
	if (unit_label)
		fprintf(o->f, "%-12s ", unit_label);
	if (nr)
		fprintf(o->f, "%4zu ", nr);
	if (st) {
		char why[512];
		snprintf(why, sizeof(why), "%s", c->reason ? c->reason : "");
		cli_hint(why, sizeof(why));
		fprintf(o->f, "%20s      %-30s %s\n", st, d->name, why);
		return;
	}
	char num[64];
	if (o->group)
		pmon_format_grouped(num, sizeof(num), mean, d->unit[0] ? 2 : 0);
	else
		snprintf(num, sizeof(num), "%.*f", d->unit[0] ? 2 : 0, mean);
	fprintf(o->f, "%20s %-5s %-30s", num, d->unit, d->name);
	bool more = s || (c->running_pct < 99.995 && c->status == PMON_COUNT_OK);
	if (m.ok)
		fprintf(o->f, " # %8s %-*s", tnum(o, b, sizeof(b), m.value, 3), more ? 16 : 0,
			m.unit);
	if (s)
		fprintf(o->f, "  ( +- %5s%% )", tnum(o, b, sizeof(b), noise, 2));
	if (c->running_pct < 99.995 && c->status == PMON_COUNT_OK) {
		fprintf(o->f, " (%s%%", tnum(o, b, sizeof(b), c->running_pct, 2));
		if (mux > 0)
			fprintf(o->f, ", +- %s", tnum(o, b, sizeof(b), mux, d->unit[0] ? 2 : 0));
		fputc(')', o->f);
	}
	fputc('\n', o->f);
}

/* ---- running --------------------------------------------------------- */

struct run_result {
	int status; /* wait status */
	bool have_status;
	double wall_s;
	struct rusage ru;
	bool interrupted;
	bool ended_by_us; /* --interval-count terminated the command: not its failure */
	bool output_failed; /* a full disk or a closed pipe: the command was stopped */
	int exit_code; /* the run's (pmon_run__exit_code()) */
};

static void add_series(struct series *s, const struct pmon_count *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		s[i].last = v[i];
		if (v[i].status == PMON_COUNT_OK) {
			pmon_running_stats__add(&s[i].st, v[i].value);
			pmon_mux_error__add(&s[i].mux, v[i].value, v[i].enabled, v[i].running);
		}
	}
}

/* The rows of one reading: totals (@v), or one block per unit from
 * @per_unit with --per-cpu / --per-thread. */
/* One unit's rows (one event each, or its metrics on one line). */
static void print_unit(struct out *o, const struct pmon_evlist *l, const struct pmon_count *v,
		       const struct series *s, double wall_s, double interval, const char *label,
		       size_t nr)
{
	if (o->metric_only) {
		print_metric_row(o, l, v, wall_s, interval, label, nr);
		return;
	}
	for (size_t i = 0; i < pmon_evlist__count(l); i++)
		print_row(o, l, v, i, wall_s, s ? &s[i] : NULL, interval, label, nr);
}

/* -A, --per-*: the groups' counts @g (group-major), with -r @gs their
 * series over the runs (each row's "+- x%" as the totals have), or NULL. */
static void print_groups(struct out *o, const struct stat_opts *so, struct pmon_evlist *l,
			 const struct pmon_count *g, const struct series *gs, double wall_s,
			 double interval)
{
	size_t n = pmon_evlist__count(l), ng = pmon_aggr__ngroups(aggr);
	/* perf -A: each event's CPUs; --per-*: each group's events */
	bool by_event = so->aggr == PMON_AGGR_CPU && !o->metric_only;

	for (size_t k = 0; by_event && k < ng * n; k++)
		print_row(o, l, g + k % ng * n, k / ng, wall_s,
			  gs ? gs + k % ng * n + k / ng : NULL, interval,
			  pmon_aggr__label(aggr, k % ng), 0);
	for (size_t gi = 0; !by_event && gi < ng; gi++)
		print_unit(o, l, g + gi * n, gs ? gs + gi * n : NULL, wall_s, interval,
			   pmon_aggr__label(aggr, gi),
			   so->aggr == PMON_AGGR_CPU ? 0 : pmon_aggr__ncpus(aggr, gi));
}

static void print_counts(struct out *o, const struct stat_opts *so, struct pmon_evlist *l,
			 struct pmon_counters *c, const struct pmon_count *v,
			 const struct pmon_count *per_unit, const struct series *s, double wall_s,
			 double interval)
{
	size_t n = pmon_evlist__count(l);

	if (aggr && per_unit) {
		struct pmon_count *g = calloc(pmon_aggr__ngroups(aggr) * n, sizeof(*g));
		if (!g)
			return;
		pmon_aggr__sum(aggr, per_unit, n, g);
		print_groups(o, so, l, g, NULL, wall_s, interval);
		free(g);
		return;
	}
	if ((so->per_cpu || so->per_thread) && per_unit) {
		for (size_t u = 0; u < pmon_counters__nunits(c); u++) {
			int cpu;
			pid_t tid;
			char label[32];
			pmon_counters__unit(c, u, &cpu, &tid);
			if (so->per_cpu)
				snprintf(label, sizeof(label), "CPU%d", cpu);
			else
				snprintf(label, sizeof(label), "%d", (int)tid);
			print_unit(o, l, per_unit + u * n, NULL, wall_s, interval, label, 0);
		}
		return;
	}
	print_unit(o, l, v, s, wall_s, interval, NULL, 0);
}

/* One interval's state, for the run engine's tick. */
struct interval {
	struct out *o;
	const struct stat_opts *so;
	struct pmon_evlist *l;
	struct pmon_monitor *m;
	struct run_result *rr;
	struct pmon_count *delta, *per_unit;
	unsigned long printed;
	struct pmon_count *sum, *sum_unit; /* --summary: the intervals added up */
	struct pmon_mux_error *sum_mux; /* and each event's interval readings */
	double sum_s;
};

enum { TICK_OUTPUT_FAILED = 1, TICK_COUNT_REACHED = 2, TICK_READ_FAILED = 3 };

/* Interval mode: print the deltas of one interval (@last: the partial one
 * at the end of the run). */
static int interval_tick(void *ctx, double at, bool last)
{
	struct interval *iv = ctx;
	const struct stat_opts *so = iv->so;
	struct pmon_counters *c = pmon_monitor__counters(iv->m);
	double dt;

	if (pmon_monitor__read_delta(iv->m, iv->delta, iv->per_unit, &dt))
		return TICK_READ_FAILED;
	if (iv->sum) {
		size_t n = pmon_evlist__count(iv->l),
		       nu = iv->per_unit ? pmon_counters__nunits(c) : 0;
		for (size_t k = 0; k < n; k++)
			pmon_count__add_interval(&iv->sum[k], &iv->sum_mux[k], &iv->delta[k],
						 iv->sum_s == 0);
		for (size_t k = 0; k < n * nu; k++)
			pmon_count__add(&iv->sum_unit[k], &iv->per_unit[k], iv->sum_s == 0);
		iv->sum_s += dt > 0 ? dt : 1e-9;
	}
	/* The last, partial interval is printed unless it is a sliver after a
	 * whole one; a command shorter than one interval still gets its line
	 * (nothing measured is lost, and --plot has a point to draw). With
	 * --summary always, as perf: the intervals then add up to the total. */
	if (!last || dt > 1e-3 || iv->printed == 0 || so->summary) {
		if (so->interval_clear && iv->o->fmt == FMT_TABLE) { /* perf's CONSOLE_CLEAR */
			fputs("\033[H\033[2J", iv->o->f);
			iv->o->metric_header = false; /* --metric-only's, again */
			if (!so->metric_only)
				fprintf(iv->o->f, "#%13s %20s %-5s %s\n", "time", "counts", "unit",
					"events");
		}
		print_counts(iv->o, so, iv->l, c, iv->delta, iv->per_unit, NULL, dt, at);
		if (plot_out)
			print_counts(plot_out, so, iv->l, c, iv->delta, iv->per_unit, NULL, dt, at);
		iv->printed++;
	}
	/* A full disk or a reader gone (`| head`): nothing more can be kept,
	 * so the command is stopped rather than left to run. */
	if (cli_output_failed(iv->o->f, iv->o->path)) {
		iv->rr->output_failed = true;
		return TICK_OUTPUT_FAILED;
	}
	if (!last && so->interval_count && iv->printed >= so->interval_count) {
		iv->rr->ended_by_us = true;
		return TICK_COUNT_REACHED;
	}
	return 0;
}

static void print_title(struct out *o, const struct stat_opts *so, const char *set);

/* --summary: the intervals' sum, as perf prints it after them (CSV rows
 * marked "summary" in the time field). */
static void print_summary_rows(struct out *o, const struct stat_opts *so, struct pmon_evlist *l,
			       struct pmon_monitor *m, const struct interval *iv)
{
	struct pmon_counters *c = pmon_monitor__counters(m);
	const struct pmon_count *sum = iv->sum, *sum_unit = iv->sum_unit;
	double wall_s = iv->sum_s;

	if (o->fmt == FMT_TABLE) {
		print_title(o, so, NULL);
		o->metric_header = false; /* no time column now */
		print_counts(o, so, l, c, sum, sum_unit, NULL, wall_s, -1);
		return;
	}
	if (o->fmt == FMT_CSV) {
		/* perf's "summary" field: each row starts with it */
		char *buf = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&buf, &len);
		struct out mo = *o;
		if (!mem)
			return;
		mo.f = mem;
		print_counts(&mo, so, l, c, sum, sum_unit, NULL, wall_s, -1);
		fclose(mem);
		for (char *line = buf, *nl; line && *line; line = nl ? nl + 1 : NULL) {
			nl = strchr(line, '\n');
			fprintf(o->f, "summary%s%.*s\n", o->sep,
				(int)(nl ? nl - line : (ptrdiff_t)strlen(line)), line);
		}
		free(buf);
		return;
	}
	print_counts(o, so, l, c, sum, sum_unit, NULL, wall_s, -1);
}

/* The totals' multiplexing error from their intervals (docs/stat-json.md). */
static void print_summary(struct out *o, const struct stat_opts *so, struct pmon_evlist *l,
			  struct pmon_monitor *m, const struct interval *iv)
{
	o->sum_mux = iv->sum_unit ? NULL : iv->sum_mux;
	print_summary_rows(o, so, l, m, iv);
	o->sum_mux = NULL;
}

/* Until the run ends: ticks with -I, else a wait. */
static void run_loop(struct out *o, const struct stat_opts *so, struct pmon_evlist *l,
		     struct pmon_monitor *m, struct pmon_run *run, struct run_result *rr)
{
	size_t n = pmon_evlist__count(l), nu = pmon_counters__nunits(pmon_monitor__counters(m));
	bool units = so->per_cpu || so->per_thread || so->aggr;
	struct interval iv = { o, so, l, m, rr, NULL, NULL, 0, NULL, NULL, NULL, 0 };

	if (!so->interval_ms) {
		pmon_run__wait(run);
		return;
	}
	iv.delta = calloc(n, sizeof(*iv.delta));
	iv.per_unit = units ? calloc(n * nu, sizeof(*iv.per_unit)) : NULL;
	if (so->summary) {
		iv.sum = calloc(n, sizeof(*iv.sum));
		iv.sum_mux = calloc(n, sizeof(*iv.sum_mux));
		iv.sum_unit = units ? calloc(n * nu, sizeof(*iv.sum_unit)) : NULL;
	}
	if (iv.delta && (!units || iv.per_unit) &&
	    (!so->summary || (iv.sum && iv.sum_mux && (!units || iv.sum_unit))))
		pmon_run__loop(run, (double)so->interval_ms / 1e3, interval_tick, &iv);
	else
		pmon_run__wait(run);
	if (iv.sum && iv.sum_s > 0 && !rr->output_failed)
		print_summary(o, so, l, m, &iv);
	free(iv.sum_mux);
	free(iv.delta);
	free(iv.per_unit);
	free(iv.sum);
	free(iv.sum_unit);
}

static void print_header(struct out *o, const struct stat_opts *so, const char *set);

/*
 * The target of one run. A command alone: its process, counted from its
 * exec. -a/-C: CPU-wide counters, started as the command is released (an
 * exec cannot start them). -p/-t: those, for as long as the command runs
 * when there is one (perf's -p PID -- sleep N), else until they exit.
 */
static const struct pmon_target *run_target(const struct stat_opts *so, pid_t child,
					    struct pmon_open_opts *how, struct pmon_target **own)
{
	*how = (struct pmon_open_opts){ .sz = sizeof(*how), .inherit = !so->no_inherit };
	*own = NULL;
	if (so->npids || so->ntids) {
		how->start_disabled = true;
	} else if (so->system_wide) {
		how->enable_on_exec = child > 0 && !so->delay_ms;
		how->start_disabled = true;
	} else if (child > 0) {
		/* -D: enabled by pmon_run__delay(), never by the exec */
		how->enable_on_exec = !so->delay_ms;
		how->start_disabled = so->delay_ms > 0;
		return *own = pmon_target__new_pid(child);
	}
	return so->tgt;
}

/* Open the counters of one run; on failure, say why. Return: the monitor,
 * or NULL with the exit code in *@rc. */
static struct pmon_monitor *open_counters(const struct stat_opts *so, struct pmon_evlist *l,
					  struct pmon_run *run, int *rc)
{
	struct pmon_open_opts how;
	struct pmon_target *own;
	const struct pmon_target *t = run_target(so, pmon_run__pid(run), &how, &own);
	struct pmon_monitor *m = t ? pmon_monitor__open(l, t, &how) : NULL;

	pmon_target__free(own);

	if (m)
		return m;
	if ((*rc = cli_run_interrupted(run))) /* Ctrl-C ended the command first */
		return NULL;
	if (errno == ESRCH || errno == PMON_ERRNO__EVENT_SYNTAX) { /* gone; a bad --filter */
		cli_error("%s", pmon_errdetail());
		*rc = CLI_USAGE;
	} else {
		/* Software events as the way out only where the hardware is what
		 * is missing, never when the rights are (they are refused too). */
		bool rights = errno == EACCES || errno == EPERM;
		cli_error("%s%s", pmon_errdetail(),
			  core_pmu() || rights
				  ? ""
				  : "; software events still work, e.g. -e task-clock");
		*rc = CLI_UNSUPPORTED;
	}
	return NULL;
}

/* -A, --per-* with -r: add this run's groups to their series; after the
 * last, print each group's means with their spread. Return: a CLI code. */
static int add_group_run(struct out *o, const struct stat_opts *so, struct pmon_evlist *l,
			 const struct pmon_count *per_unit, const struct pmon_running_stats *wall,
			 bool last)
{
	size_t n = pmon_evlist__count(l), ng = pmon_aggr__ngroups(aggr), k = ng * n;
	struct pmon_count *g = calloc(k + 1, sizeof(*g));

	if (!aggr_runs) {
		naggr_runs = k;
		aggr_runs = calloc(k + 1, sizeof(*aggr_runs));
	}
	if (!g || !aggr_runs || naggr_runs != k) {
		if (g && aggr_runs)
			cli_error("-r: the CPUs' topology changed between runs");
		free(g);
		return CLI_FAIL;
	}
	pmon_aggr__sum(aggr, per_unit, n, g);
	add_series(aggr_runs, g, k);
	if (last) {
		for (size_t i = 0; i < k; i++)
			if (aggr_runs[i].st.n)
				g[i].value = aggr_runs[i].st.mean; /* metrics of the means */
		print_groups(o, so, l, g, aggr_runs, wall->mean, -1);
	}
	free(g);
	return CLI_OK;
}

/* The counts of a run without -I: kept for -r, printed after the last. */
static int print_totals(struct out *o, const struct stat_opts *so, struct pmon_evlist *l,
			struct pmon_monitor *m, struct series *s, struct pmon_running_stats *wall,
			struct run_result *rr, bool last)
{
	size_t n = pmon_evlist__count(l), nu = pmon_counters__nunits(pmon_monitor__counters(m));
	bool units = so->per_cpu || so->per_thread || so->aggr;
	struct pmon_count *v = calloc(n, sizeof(*v));
	struct pmon_count *per_unit = units ? calloc(n * nu, sizeof(*per_unit)) : NULL;
	double dt;
	int rc = CLI_OK;

	if (!v || (units && !per_unit)) {
		rc = CLI_FAIL;
	} else if (pmon_monitor__read_delta(m, v, per_unit, &dt)) {
		cli_error("cannot read the counters: %s", pmon_errdetail());
		rc = CLI_FAIL;
	} else {
		add_series(s, v, n);
		pmon_running_stats__add(wall, rr->wall_s);
		if (aggr && so->repeat > 1)
			rc = add_group_run(o, so, l, per_unit, wall, last);
		else if (last && so->repeat > 1) {
			/* Means of the runs, so derived metrics use them too. */
			for (size_t i = 0; i < n; i++)
				if (s[i].st.n)
					v[i].value = s[i].st.mean;
			print_counts(o, so, l, pmon_monitor__counters(m), v, NULL, s, wall->mean,
				     -1);
		} else if (last) {
			print_counts(o, so, l, pmon_monitor__counters(m), v, per_unit, NULL,
				     rr->wall_s, -1);
		}
	}
	free(v);
	free(per_unit);
	return rc;
}

/* -A, --per-*: the units (CPUs) of @c grouped by @mode; NULL (detail). */
static struct pmon_aggr *make_aggr(int mode, const struct pmon_counters *c)
{
	size_t nu = pmon_counters__nunits(c);
	int *cpus = calloc(nu ? nu : 1, sizeof(*cpus));
	struct pmon_aggr *a = NULL;

	for (size_t u = 0; cpus && u < nu; u++)
		pmon_counters__unit(c, u, &cpus[u], &(pid_t){ 0 });
	if (cpus)
		a = pmon_aggr__new(NULL, (enum pmon_aggr_mode)mode, cpus, nu);
	free(cpus);
	return a;
}

/* -D: the command runs uncounted for @ms, then counting starts (perf's
 * "Events disabled"/"Events enabled" on standard error); the elapsed time
 * starts then, as perf's. */
static int start_delayed(struct pmon_run *run, struct pmon_monitor *m, long ms, double *t0)
{
	fprintf(stderr, "Events disabled\n");
	int r = pmon_run__delay(run, m, (unsigned)ms);
	if (r < 0) {
		cli_error("%s", pmon_errdetail());
		return CLI_FAIL;
	}
	if (r > 0) {
		fprintf(stderr, "Events enabled\n");
		*t0 = pmon_monotonic_s();
	}
	return CLI_OK;
}

/* One run: the command (or the targets) from start to end. */
static int run_once(struct out *o, const struct stat_opts *so, struct pmon_evlist *l,
		    struct series *s, struct pmon_running_stats *wall, struct run_result *rr,
		    bool first, bool last, const char *set)
{
	struct pmon_run *run;
	struct pmon_monitor *m = NULL;
	double t0;
	int rc = CLI_OK;

	memset(rr, 0, sizeof(*rr));
	/* -p/-t with a command: the command alone decides (perf's -p PID -- sleep N) */
	run = pmon_run__new(so->argv, so->argv ? NULL : so->tgt, NULL);
	if (!run) {
		cli_error("%s", pmon_errdetail());
		return CLI_FAIL;
	}
	if (!(m = open_counters(so, l, run, &rc)))
		goto out;
	if (so->aggr && !(aggr = make_aggr(so->aggr, pmon_monitor__counters(m)))) {
		cli_error("%s", pmon_errdetail());
		rc = CLI_FAIL;
		goto out;
	}
	t0 = pmon_monotonic_s();
	if (pmon_run__start(run, so->delay_ms ? NULL : m)) {
		/* Every exec failure is 127, the shell's "could not execute". */
		cli_error("%s", pmon_errdetail());
		rc = pmon_run__exit_code(run) == 127 ? 127 : CLI_FAIL;
		goto out;
	}
	if (so->delay_ms && (rc = start_delayed(run, m, so->delay_ms, &t0)) != CLI_OK)
		goto out;
	if (first)
		print_header(o, so, set); /* once counting and the command both started */
	run_loop(o, so, l, m, run, rr);
	rr->wall_s = pmon_monotonic_s() - t0;
	rr->interrupted = pmon_run__signal(run) != 0;
	rr->have_status = pmon_run__status(run, &rr->status, &rr->ru);
	rr->exit_code = pmon_run__exit_code(run);
	if (rr->output_failed)
		rc = CLI_FAIL;
	else if (!so->interval_ms)
		rc = print_totals(o, so, l, m, s, wall, rr, last || rr->interrupted);
out:
	pmon_aggr__free(aggr);
	aggr = NULL;
	pmon_monitor__close(m);
	pmon_run__free(run);
	return rc;
}

static void print_header(struct out *o, const struct stat_opts *so, const char *set)
{
	if (o->fmt != FMT_TABLE)
		return;
	print_title(o, so, set);
	if (so->interval_ms && !so->interval_clear && !so->metric_only)
		fprintf(o->f, "#%13s %20s %-5s %s\n", "time", "counts", "unit", "events");
}

/* " Performance counter stats for 'CMD':", perf's title. */
static void print_title(struct out *o, const struct stat_opts *so, const char *set)
{
	size_t n, ncpus;

	fprintf(o->f, "\n Performance counter stats for ");
	if (so->npids || so->ntids) {
		fprintf(o->f, "%s", so->npids ? "process id(s)" : "thread id(s)");
		const pid_t *ids =
			so->npids ? pmon_target__pids(so->tgt, &n) : pmon_target__tids(so->tgt, &n);
		for (size_t i = 0; i < n; i++)
			fprintf(o->f, "%s%d", i ? "," : " ", (int)ids[i]);
	} else if (so->system_wide) {
		pmon_target__cpus(so->tgt, &ncpus);
		fprintf(o->f, "%s", ncpus ? "the listed CPUs" : "the whole system");
	} else if (so->argv) {
		fputc('\'', o->f);
		for (char **a = so->argv; *a; a++)
			fprintf(o->f, "%s%s", a == so->argv ? "" : " ", *a);
		fputc('\'', o->f);
	}
	if (so->repeat > 1)
		fprintf(o->f, " (%lu runs)", so->repeat);
	fprintf(o->f, ":\n");
	if (set)
		fprintf(o->f, " (%s)\n", set);
	fputc('\n', o->f);
}

static void print_footer(struct out *o, const struct stat_opts *so, const struct run_result *rr,
			 const struct series *s, const struct pmon_evlist *l,
			 const struct pmon_running_stats *wall)
{
	bool user_only = false;
	double user = (double)rr->ru.ru_utime.tv_sec + (double)rr->ru.ru_utime.tv_usec / 1e6;
	double sys = (double)rr->ru.ru_stime.tv_sec + (double)rr->ru.ru_stime.tv_usec / 1e6;

	if (o->fmt != FMT_TABLE) {
		if (o->fmt == FMT_JSON) {
			json_t *j = json_pack("{s:s, s:f, s:f, s:f}", "type", "summary", "elapsed",
					      rr->wall_s, "user", user, "sys", sys);
			if (wall->n > 1)
				json_object_set_new(
					j, "elapsed-variance",
					json_real(pmon_running_stats__rel_stderr(wall)));
			if (rr->have_status)
				json_object_set_new(j, "exit-status",
						    json_integer(pmon_exit_code(rr->status)));
			json_dumpf(j, o->f, JSON_COMPACT | JSON_PRESERVE_ORDER);
			fputc('\n', o->f);
			json_decref(j);
		}
		return;
	}
	for (size_t i = 0; i < pmon_evlist__count(l); i++)
		if (s[i].last.user_only)
			user_only = true;
	char a[64], b[64], c[64];
	if (wall->n > 1) /* perf: the mean, +- its standard error, and that relative */
		fprintf(o->f, "\n%20s +- %s seconds time elapsed  ( +- %5s%% )\n",
			tnum(o, a, sizeof(a), wall->mean, 9),
			tnum(o, b, sizeof(b),
			     pmon_running_stats__stddev(wall) / sqrt((double)wall->n), 9),
			tnum(o, c, sizeof(c), pmon_running_stats__rel_stderr(wall), 2));
	else
		fprintf(o->f, "\n%20s seconds time elapsed\n",
			tnum(o, a, sizeof(a), rr->wall_s, 9));
	if (so->argv)
		fprintf(o->f, "\n%20s seconds user\n%20s seconds sys\n",
			tnum(o, a, sizeof(a), user, 9), tnum(o, b, sizeof(b), sys, 9));
	if (user_only)
		fprintf(o->f,
			"\n Some events were counted in user space only: "
			"perf_event_paranoid forbids kernel counting (run as root or lower it).\n");
	if (rr->interrupted)
		fprintf(o->f, "\n Interrupted: the counts cover the run up to the signal.\n");
	fputc('\n', o->f);
}

/* --simulate: the engine's totals in stat's forms (docs/simulate.md). */
static int stat_simulate(const struct stat_opts *o)
{
	if (o->npids || o->ntids || o->system_wide || o->repeat > 1 || o->interval_ms ||
	    o->regions || o->msr_backend || o->plot || o->no_inherit) {
		cli_error("--simulate runs a command under the engine: no -p/-t/-a/-C/-r/-I/"
			  "--regions/--backend/--plot/--no-inherit");
		return CLI_USAGE;
	}
	struct sim_req q = { .events = (const char *const *)o->events.v,
			     .nevents = o->events.n,
			     .stat = true,
			     .sep = o->fmt == FMT_CSV ? o->sep : NULL,
			     .json = o->fmt == FMT_JSON,
			     .stat_out = o->outpath,
			     .progress_s = -1,
			     .who = "stat --simulate",
			     .argv = o->argv };
	return sim_run(&q);
}

/* The command's regions use the same events; pmon_region_init() in the
 * command reads them from the environment (docs: pmon/region.h). */
static int setup_regions(const struct stat_opts *so, const struct pmon_evlist *l, const char *file)
{
	char ev[4096] = "";
	size_t off = 0;

	for (size_t i = 0; i < pmon_evlist__count(l); i++) {
		const struct pmon_event_desc *d = pmon_evlist__event(l, i);
		int n = snprintf(ev + off, sizeof(ev) - off, "%s%s", i ? "," : "", d->name);
		if (n < 0 || (size_t)n >= sizeof(ev) - off) {
			errno = E2BIG;
			return -1;
		}
		off += (size_t)n;
	}
	if (setenv("PMON_EVENTS", ev, 1) || setenv("PMON_OUTPUT", file, 1) ||
	    setenv("PMON_FORMAT",
		   so->fmt == FMT_JSON		? "json"
			   : so->fmt == FMT_CSV ? "csv"
						: "table",
		   1))
		return -1;
	return 0;
}

static void copy_regions(int fd, struct out *o)
{
	char buf[8192];
	ssize_t n;
	bool any = false;

	lseek(fd, 0, SEEK_SET);
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		fwrite(buf, 1, (size_t)n, o->f);
		any = true;
	}
	if (!any && o->fmt == FMT_TABLE)
		fprintf(o->f,
			" No regions were recorded: the command must call pmon_region_begin()/"
			"end() (pmon/region.h, linked with libpmon).\n\n");
	else if (!any)
		cli_warn("--regions: the command recorded no regions");
}

/* -o (stderr without it), checked before the command runs (issue #14.7)
 * and never the file --plot names. Return: CLI_OK with o->f open, or
 * CLI_USAGE (said). */
static int open_output(const struct stat_opts *so, struct out *o)
{
	/* Every output is checked before the command runs (issue #14.7). */
	if (!cli_check_output_as(so->outpath, "-o",
				 PMON_OUTPUT_STREAM |
					 (so->interval_ms ? PMON_OUTPUT_IN_PLACE : 0)) ||
	    (so->plot && !cli_check_output_path(so->plot, "--plot"))) {
		return CLI_USAGE;
	}
	struct stat lst, pst;
	bool same = so->plot && so->outpath &&
		(!strcmp(so->plot, so->outpath) ||
		 (!stat(so->outpath, &lst) && !stat(so->plot, &pst) && lst.st_dev == pst.st_dev &&
		  lst.st_ino == pst.st_ino && S_ISREG(lst.st_mode)));
	if (same) {
		/* -o's log and --plot's picture: two outputs, never one file
		 * (the picture would be renamed over the log) */
		cli_error("--plot '%s' is -o's file '%s': name two files", so->plot, so->outpath);
		return CLI_USAGE;
	}
	if (so->plot && !cli_plot_name_ok(so->plot)) {
		return CLI_USAGE;
	}
	/* -I's intervals are written where the file is, so that `tail -f`
	 * follows them and a run stopped early keeps each one; the totals
	 * replace the file whole when the run has ended. */
	o->f = so->outpath
		? cli_open_output_as(so->outpath,
				     PMON_OUTPUT_STREAM |
					     (so->interval_ms ? PMON_OUTPUT_IN_PLACE : 0))
		: stderr;
	if (!o->f) {
		return CLI_USAGE;
	}
	/* The same, for a log that did not exist before (another name of it,
	 * "./F" and "F"): it exists by now. */
	if (so->plot && so->outpath && !stat(so->outpath, &lst) && !stat(so->plot, &pst) &&
	    lst.st_dev == pst.st_dev && lst.st_ino == pst.st_ino && S_ISREG(lst.st_mode)) {
		cli_error("--plot '%s' is -o's file '%s': name two files", so->plot, so->outpath);
		cli_abandon_output(o->f);
		return CLI_USAGE;
	}
	return CLI_OK;
}

/* --plot: a temporary CSV log of the intervals, read back by its
 * descriptor (nothing left after a kill). Return: 0, or -1 (said). */
static int open_plot_log(struct out *po, char *plotlog, size_t len)
{
	int pfd = pmon_spawn_tmpfile("plot", plotlog, len);

	if (pfd >= 0) {
		fcntl(pfd, F_SETFD, FD_CLOEXEC);
		unlink(plotlog);
		snprintf(plotlog, len, "/proc/self/fd/%d", pfd);
	}
	po->f = pfd >= 0 ? fdopen(pfd, "w+") : NULL;
	if (!po->f) {
		cli_error("--plot: cannot create a temporary log: %s", strerror(errno));
		return -1;
	}
	plot_out = po;
	return 0;
}

/* --plot: draw the log, titled with the command. Return: @rc, or the
 * drawing's failure when @rc was CLI_OK. */
static int draw_plot(const struct stat_opts *so, struct out *po, const char *plotlog, int rc)
{
	fflush(po->f);
	plot_out = NULL;
	if (rc != CLI_USAGE && rc != CLI_UNSUPPORTED) {
		char title[512] = "pmon stat";
		size_t off = strlen(title);
		for (char **a = so->argv; a && *a && off < sizeof(title); a++) {
			int k = snprintf(title + off, sizeof(title) - off, " %s", *a);
			if (k > 0)
				off += (size_t)k;
		}
		int prc = plot_log(plotlog, so->plot, 900, 0, title);
		if (prc != CLI_OK && rc == CLI_OK)
			rc = prc;
	}
	fclose(po->f);
	return rc;
}

int cmd_stat(int argc, char **argv)
{
	struct stat_opts so = { 0 };
	struct pmon_evlist *l = NULL;
	struct series *s = NULL;
	struct run_result rr = { 0 };
	struct out o = { 0 };
	const char *set = NULL;
	struct pmon_running_stats wall = { 0 };
	int rc;

	rc = parse_args(argc, argv, &so);
	if (rc) {
		rc = rc < 0 ? CLI_OK : rc;
		goto out;
	}
	if (so.msr_cleanup) {
		rc = stat_msr_cleanup(stderr, so.msr_device);
		goto out;
	}
	if (so.simulate) {
		rc = stat_simulate(&so);
		goto out;
	}
	l = make_events(&so, &set);
	if (!l) {
		rc = errno == EOPNOTSUPP ? CLI_UNSUPPORTED : CLI_USAGE;
		goto out;
	}
	s = calloc(pmon_evlist__count(l), sizeof(*s));
	if (!s) {
		rc = CLI_FAIL;
		goto out;
	}
	o.fmt = so.fmt;
	o.sep = so.sep;
	o.path = so.outpath;
	o.aggr = so.aggr;
	o.metric_only = so.metric_only;
	if ((rc = open_output(&so, &o)) != CLI_OK)
		goto out;
	/* -B: perf groups by default; pmon where a person reads the table */
	o.group =
		o.fmt == FMT_TABLE && (so.big_num == 1 || (so.big_num < 0 && isatty(fileno(o.f))));
	if (so.msr_backend) {
		size_t ncpus;
		const int *cpus = pmon_target__cpus(so.tgt, &ncpus);
		rc = stat_msr_backend(o.f, so.argv, l, cpus, ncpus, so.msr_device, so.cpuid_file);
		goto close_out;
	}
	char regfile[4096] = "";
	int regfd = -1;
	if (so.regions) {
		regfd = pmon_spawn_tmpfile("regions", regfile, sizeof(regfile));
		/* Named by its descriptor and unlinked at once, so that a pmon
		 * killed by SIGKILL leaves no file behind (#14.6); the command
		 * appends through /proc (lib/region opens it "a"). */
		if (regfd >= 0) {
			fcntl(regfd, F_SETFD, FD_CLOEXEC);
			unlink(regfile);
			snprintf(regfile, sizeof(regfile), "/proc/%d/fd/%d", (int)getpid(), regfd);
		}
		if (regfd < 0 || setup_regions(&so, l, regfile)) {
			cli_error("cannot set up --regions: %s", strerror(errno));
			rc = CLI_FAIL;
			cli_abandon_output(o.f); /* -o's file keeps what it held */
			goto out;
		}
	}
	char plotlog[4096] = "";
	struct out po = { .fmt = FMT_CSV, .sep = "," };
	if (so.plot && open_plot_log(&po, plotlog, sizeof(plotlog))) {
		rc = CLI_FAIL;
		cli_abandon_output(o.f);
		goto out;
	}
	for (unsigned long r = 0; r < so.repeat; r++) {
		rc = run_once(&o, &so, l, s, &wall, &rr, r == 0, r + 1 == so.repeat, set);
		if (rc != CLI_OK || rr.interrupted)
			break;
	}
	bool measured = rc == CLI_OK;
	if (rc == CLI_OK) {
		if (wall.n > 1)
			rr.wall_s = wall.mean; /* the footer shows the mean */
		print_footer(&o, &so, &rr, s, l, &wall);
		rc = rr.ended_by_us ? CLI_OK : rr.exit_code;
	}
	if (plot_out)
		rc = draw_plot(&so, &po, plotlog, rc);
	if (regfd >= 0) {
		if (rc != CLI_USAGE && rc != CLI_UNSUPPORTED)
			copy_regions(regfd, &o);
		close(regfd);
	}
	/* Nothing measured (the command could not run, no event could be
	 * counted): the file -o named keeps what it held, as after any
	 * failed run (docs/exit-codes.md, "Outputs"); -I's intervals are
	 * kept whatever happened (they were written in place). */
	if (!measured) {
		cli_abandon_output(o.f);
		goto out;
	}
close_out:
	/* Counts that could not be written are a failure whatever the
	 * command's status: 1, with the file and the reason said once. */
	if (cli_close_output(o.f, so.outpath) != CLI_OK)
		rc = CLI_FAIL;
out:
	free(s);
	free(aggr_runs);
	aggr_runs = NULL;
	pmon_evlist__free(l);
	free(so.events.v);
	pmon_target__free(so.tgt);
	return rc;
}
