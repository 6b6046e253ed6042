// SPDX-License-Identifier: MIT
/*
 * pmon stat: run a command (or watch processes, threads, CPUs) and count its
 * events -- the seeds' EMON, on perf_event_open. Options follow perf stat;
 * the output is perf's (table, -x CSV, --json lines; docs/stat-json.md)
 * with a reason on every row that could not be counted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#include <jansson.h>

#include "cli.h"
#include "stat.h"
#include <pmon/pmon.h>

enum fmt { FMT_TABLE, FMT_CSV, FMT_JSON };

struct stat_opts {
	char **events;
	size_t nevents;
	unsigned long repeat;
	unsigned long interval_ms;
	unsigned long interval_count;
	const char *sep;
	enum fmt fmt;
	const char *outpath;
	bool no_inherit, per_thread, per_cpu, system_wide, regions;
	bool msr_backend;
	const char *plot;
	const char *msr_device, *cpuid_file;
	pid_t *pids, *tids;
	size_t npids, ntids;
	int *cpus;
	size_t ncpus;
	char **argv; /* the command, or NULL */
};

/* One event's values over the -r runs. */
struct series {
	double sum, sumsq;
	unsigned n;
	struct pmon_count last;
};

static volatile sig_atomic_t got_signal;
static struct out *plot_out; /* --plot: the intervals as CSV, for pmon plot */
static volatile pid_t child_pid;

static void on_signal(int sig)
{
	got_signal = sig;
	if (child_pid > 0)
		kill(child_pid, sig); /* forward: the child decides what an INT means */
}

static void on_chld(int sig)
{
	(void)sig; /* only to interrupt the interval sleep */
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool parse_list(const char *s, const char *what, long max, long **out, size_t *n)
{
	char *copy = strdup(s), *save = NULL;
	long *v = NULL;
	size_t cap = 0;

	*n = 0;
	if (!copy)
		return false;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *end;
		long a, b;

		errno = 0;
		a = strtol(t, &end, 10);
		b = a;
		if (end != t && *end == '-')
			b = strtol(end + 1, &end, 10);
		if (errno || end == t || *end || a < 0 || b < a || b > max) {
			cli_error("%s: '%s' is not a valid list (e.g. 1,3-5)", what, s);
			free(copy);
			free(v);
			return false;
		}
		for (long x = a; x <= b; x++) {
			if (*n == cap) {
				long *nv = realloc(v, (cap = cap ? cap * 2 : 16) * sizeof(*v));
				if (!nv) {
					free(copy);
					free(v);
					return false;
				}
				v = nv;
			}
			v[(*n)++] = x;
		}
	}
	free(copy);
	if (!*n) {
		cli_error("%s: empty list", what);
		return false;
	}
	*out = v;
	return true;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pmon stat [options] [--] command [args]\n"
		"       pmon stat [options] -p PID | -t TID | -a   (until Ctrl-C or the target "
		"exits)\n\n"
		"  -e, --event LIST      events (repeatable; comma lists; groups {a,b}); 'pmon "
		"list'\n"
		"  -r, --repeat N        run the command N times: mean, stddev and CV per event\n"
		"  -I, --interval MS     print counts every MS milliseconds\n"
		"      --interval-count N  stop after N intervals (the command is terminated)\n"
		"  -x, --field-separator SEP  CSV: value,unit,event,runtime,%%running,metric,unit\n"
		"  -j, --json            JSON lines (schema: docs/stat-json.md)\n"
		"  -o, --output FILE     write the counts to FILE (default: standard error)\n"
		"  -p, --pid LIST        count existing processes (all their threads)\n"
		"  -t, --tid LIST        count existing threads\n"
		"  -a, --all-cpus        count every task on every CPU\n"
		"  -C, --cpu LIST        only these CPUs (with -a)\n"
		"      --no-inherit      do not count children and new threads\n"
		"      --per-thread      a row per thread (with -p/-t)\n"
		"      --per-cpu         a row per CPU (with -a/-C)\n"
		"      --backend msr     program the counters through MSRs (root, Intel\n"
		"                        architectural events; restores them; lists writes)\n"
		"      --msr-device PATH  instead of /dev/cpu/%%d/msr (tests: a file)\n"
		"      --cpuid-file FILE  the CPU the MSR backend programs (with a fake device)\n"
		"      --plot FILE       with -I: also draw the intervals (FILE.svg or FILE.png)\n"
		"      --regions         also collect the command's instrumented regions\n"
		"                        (pmon/region.h): same events, statistics per region\n\n"
		"Exit status: the command's (128+N if killed by signal N); 2 for bad input;\n"
		"3 when no requested event can be counted here (docs/exit-codes.md).\n");
}

static int parse_args(int argc, char **argv, struct stat_opts *o)
{
	static const struct option longopts[] = {
		{ "event", required_argument, NULL, 'e' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "interval", required_argument, NULL, 'I' },
		{ "interval-print", required_argument, NULL, 'I' },
		{ "interval-count", required_argument, NULL, 'N' },
		{ "field-separator", required_argument, NULL, 'x' },
		{ "json", no_argument, NULL, 'j' },
		{ "output", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, 't' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "no-inherit", no_argument, NULL, 'i' },
		{ "per-thread", no_argument, NULL, 'T' },
		{ "per-cpu", no_argument, NULL, 'A' },
		{ "regions", no_argument, NULL, 'R' },
		{ "backend", required_argument, NULL, 'B' },
		{ "plot", required_argument, NULL, 'P' },
		{ "msr-device", required_argument, NULL, 'M' },
		{ "cpuid-file", required_argument, NULL, 'U' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long ul;
	long *list;
	size_t n;
	int c;

	o->repeat = 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+e:r:I:x:jo:p:t:aC:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'e': {
			char **ev = realloc(o->events, (o->nevents + 1) * sizeof(*ev));
			if (!ev)
				return CLI_FAIL;
			o->events = ev;
			o->events[o->nevents++] = optarg;
			break;
		}
		case 'r':
			if (!cli_parse_uint(optarg, 100000, "-r", &ul))
				return CLI_USAGE;
			if (!ul) {
				cli_error("-r 0: the repeat count must be at least 1");
				return CLI_USAGE;
			}
			o->repeat = ul;
			break;
		case 'I':
			if (!cli_parse_uint(optarg, 3600000, "-I", &ul))
				return CLI_USAGE;
			if (!ul) {
				cli_error("-I 0: the interval must be at least 1 ms");
				return CLI_USAGE;
			}
			o->interval_ms = ul;
			break;
		case 'N':
			if (!cli_parse_uint(optarg, 100000000, "--interval-count", &ul))
				return CLI_USAGE;
			if (!ul) {
				cli_error("--interval-count 0: must be at least 1");
				return CLI_USAGE;
			}
			o->interval_count = ul;
			break;
		case 'x':
			if (!optarg[0]) {
				cli_error("-x: the separator is empty");
				return CLI_USAGE;
			}
			o->sep = optarg;
			o->fmt = FMT_CSV;
			break;
		case 'j':
			o->fmt = FMT_JSON;
			break;
		case 'o':
			o->outpath = optarg;
			break;
		case 'p':
		case 't':
			if (!parse_list(optarg, c == 'p' ? "-p" : "-t", 1L << 30, &list, &n))
				return CLI_USAGE;
			pid_t *p = malloc(n * sizeof(*p));
			if (!p) {
				free(list);
				return CLI_FAIL;
			}
			for (size_t i = 0; i < n; i++)
				p[i] = (pid_t)list[i];
			free(list);
			if (c == 'p')
				free(o->pids), o->pids = p, o->npids = n;
			else
				free(o->tids), o->tids = p, o->ntids = n;
			break;
		case 'a':
			o->system_wide = true;
			break;
		case 'C':
			if (!parse_list(optarg, "-C", 4095, &list, &n))
				return CLI_USAGE;
			free(o->cpus);
			o->cpus = malloc(n * sizeof(*o->cpus));
			if (!o->cpus) {
				free(list);
				return CLI_FAIL;
			}
			for (size_t i = 0; i < n; i++)
				o->cpus[i] = (int)list[i];
			o->ncpus = n;
			free(list);
			break;
		case 'i':
			o->no_inherit = true;
			break;
		case 'T':
			o->per_thread = true;
			break;
		case 'A':
			o->per_cpu = true;
			break;
		case 'R':
			o->regions = true;
			break;
		case 'B':
			if (!strcmp(optarg, "msr"))
				o->msr_backend = true;
			else if (strcmp(optarg, "perf")) {
				cli_error("--backend '%s': expected perf or msr", optarg);
				return CLI_USAGE;
			}
			break;
		case 'M':
			o->msr_device = optarg;
			break;
		case 'P':
			o->plot = optarg;
			break;
		case 'U':
			o->cpuid_file = optarg;
			break;
		case 'h':
			usage(stdout);
			return -1;
		default:
			usage(stderr);
			return CLI_USAGE;
		}
	}
	if (optind < argc)
		o->argv = argv + optind;
	if (o->argv && !o->argv[0][0]) {
		cli_error("the command is empty");
		return CLI_USAGE;
	}
	if (!o->argv && !o->npids && !o->ntids && !o->system_wide && !o->ncpus) {
		cli_error("nothing to count: give a command ('pmon stat -- CMD') or a target (-p, "
			  "-t, "
			  "-a)");
		return CLI_USAGE;
	}
	if (o->ncpus)
		o->system_wide = true;
	if ((o->npids || o->ntids) && (o->system_wide || o->argv)) {
		cli_error("-p/-t exclude a command and -a/-C: count one kind of target");
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
	return CLI_OK;
}

/* ---- events ---------------------------------------------------------- */

static const char *const hw_default = "cycles,instructions,branches,branch-misses";
static const char *const sw_default = "task-clock,context-switches,cpu-migrations,page-faults";

static bool core_pmu(void)
{
	return access("/sys/bus/event_source/devices/cpu/type", F_OK) == 0 ||
		access("/sys/bus/event_source/devices/cpu_core/type", F_OK) == 0;
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
	for (size_t i = 0; i < o->nevents && !err; i++)
		err = pmon_evlist__add(l, o->events[i]);
	if (!o->nevents) {
		err = pmon_evlist__add(l, sw_default);
		if (!err && core_pmu()) {
			err = pmon_evlist__add(l, hw_default);
			*set = "default events: software and hardware";
		} else {
			*set = "default events: software only -- this machine exposes no hardware "
			       "PMU (see 'pmon info')";
		}
	}
	if (err) {
		cli_error("%s", pmon_errdetail());
		pmon_evlist__free(l);
		return NULL;
	}
	return l;
}

/* ---- derived metrics (perf's shadow stats) ---------------------------- */

struct metric {
	double value;
	const char *unit;
	bool ok;
};

static double find_value(const struct pmon_evlist *l, const struct pmon_count *v, const char *name,
			 bool *found)
{
	for (size_t i = 0; i < pmon_evlist__count(l); i++) {
		const struct pmon_event_desc *d = pmon_evlist__event(l, i);
		/* Compare the name without modifiers. */
		size_t n = strcspn(d->name, ":");
		if (strlen(name) == n && !strncmp(d->name, name, n) &&
		    v[i].status == PMON_COUNT_OK) {
			*found = true;
			return v[i].value;
		}
	}
	*found = false;
	return 0;
}

static struct metric derive(const struct pmon_evlist *l, const struct pmon_count *v, size_t i,
			    double wall_s)
{
	const struct pmon_event_desc *d = pmon_evlist__event(l, i);
	struct metric m = { 0 };
	size_t n = strcspn(d->name, ":");
	char base[128];
	bool f;
	double other, task_ms = find_value(l, v, "task-clock", &f);
	bool have_task = f && task_ms > 0;

	if (v[i].status != PMON_COUNT_OK)
		return m;
	snprintf(base, sizeof(base), "%.*s", (int)n, d->name);
	if (!strcmp(base, "task-clock") && wall_s > 0) {
		m = (struct metric){ v[i].value / 1e3 / wall_s, "CPUs utilized", true };
	} else if (!strcmp(base, "cycles") || !strcmp(base, "cpu-cycles")) {
		if (have_task)
			m = (struct metric){ v[i].value / (task_ms * 1e6), "GHz", true };
	} else if (!strcmp(base, "instructions")) {
		other = find_value(l, v, "cycles", &f);
		if (f && other > 0)
			m = (struct metric){ v[i].value / other, "insn per cycle", true };
	} else if (!strcmp(base, "branch-misses")) {
		other = find_value(l, v, "branches", &f);
		if (f && other > 0)
			m = (struct metric){ 100 * v[i].value / other, "% of all branches", true };
	} else if (!strcmp(base, "cache-misses")) {
		other = find_value(l, v, "cache-references", &f);
		if (f && other > 0)
			m = (struct metric){ 100 * v[i].value / other, "% of all cache refs",
					     true };
	} else if (!strcmp(base, "L1-dcache-load-misses")) {
		other = find_value(l, v, "L1-dcache-loads", &f);
		if (f && other > 0)
			m = (struct metric){ 100 * v[i].value / other,
					     "% of all L1-dcache accesses", true };
	} else if (d->source == PMON_EV_SOFTWARE && have_task && strcmp(base, "cpu-clock")) {
		double rate = v[i].value / (task_ms / 1e3);
		m = rate >= 1e6	      ? (struct metric){ rate / 1e6, "M/sec", true }
			: rate >= 1e3 ? (struct metric){ rate / 1e3, "K/sec", true }
				      : (struct metric){ rate, "/sec", true };
	}
	return m;
}

/* ---- output ---------------------------------------------------------- */

struct out {
	FILE *f;
	enum fmt fmt;
	const char *sep;
};

static const char *status_text(const struct pmon_count *c)
{
	return c->status == PMON_COUNT_NOT_SUPPORTED  ? "<not supported>"
		: c->status == PMON_COUNT_NOT_COUNTED ? "<not counted>"
						      : NULL;
}

/* One event row. @prefix: interval time or a CPU/thread label (may be NULL). */
static void print_row(struct out *o, const struct pmon_evlist *l, const struct pmon_count *v,
		      size_t i, double wall_s, const struct series *s, double interval,
		      const char *unit_label)
{
	const struct pmon_event_desc *d = pmon_evlist__event(l, i);
	const struct pmon_count *c = &v[i];
	struct metric m = derive(l, v, i, wall_s);
	const char *st = status_text(c);
	double mean = s && s->n ? s->sum / s->n : c->value;
	double sd = 0, cv = 0;

	if (s && s->n > 1) {
		double var = (s->sumsq - s->sum * s->sum / s->n) / (s->n - 1);
		sd = var > 0 ? sqrt(var) : 0;
		cv = mean != 0 ? 100 * sd / mean : 0;
	}

	if (o->fmt == FMT_CSV) {
		const char *x = o->sep;
		if (interval >= 0)
			fprintf(o->f, "%.9f%s", interval, x);
		if (unit_label)
			fprintf(o->f, "%s%s", unit_label, x);
		if (st) /* perf's 7 fields: <not supported>,,cycles,0,100.00,, */
			fprintf(o->f, "%s%s%s%s%s%s0%s100.00%s%s\n", st, x, d->unit, x, d->name, x,
				x, x, x);
		if (st)
			return;
		else
			fprintf(o->f, "%.*f%s%s%s%s%s%llu%s%.2f%s", d->unit[0] ? 2 : 0, mean, x,
				d->unit, x, d->name, x, (unsigned long long)c->running, x,
				c->running_pct, x);
		if (m.ok)
			fprintf(o->f, "%.2f%s%s", m.value, x, m.unit);
		else
			fprintf(o->f, "%s", x);
		fputc('\n', o->f);
		return;
	}
	if (o->fmt == FMT_JSON) {
		json_t *j = json_object();
		char val[64];
		if (interval >= 0)
			json_object_set_new(j, "interval", json_real(interval));
		if (unit_label) {
			/* "CPU3" from --per-cpu, a thread id from --per-thread */
			if (!strncmp(unit_label, "CPU", 3))
				json_object_set_new(j, "cpu",
						    json_integer(strtol(unit_label + 3, NULL, 10)));
			else
				json_object_set_new(j, "thread",
						    json_integer(strtol(unit_label, NULL, 10)));
		}
		snprintf(val, sizeof(val), "%f", mean);
		json_object_set_new(j, "counter-value", json_string(st ? st : val));
		json_object_set_new(j, "unit", json_string(d->unit));
		json_object_set_new(j, "event", json_string(d->name));
		json_object_set_new(j, "event-runtime", json_integer((json_int_t)c->running));
		json_object_set_new(j, "pcnt-running", json_real(st ? 0 : c->running_pct));
		if (m.ok) {
			json_object_set_new(j, "metric-value", json_real(m.value));
			json_object_set_new(j, "metric-unit", json_string(m.unit));
		}
		json_object_set_new(j, "status",
				    json_string(c->status == PMON_COUNT_OK ? "counted"
							: st		   ? st + 1
									   : "?"));
		if (!st)
			json_object_set_new(j, "value", json_real(mean));
		if (s && s->n > 1) {
			json_object_set_new(j, "stddev", json_real(sd));
			json_object_set_new(j, "cv-percent", json_real(cv));
			json_object_set_new(j, "runs", json_integer(s->n));
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
	if (interval >= 0)
		fprintf(o->f, "%14.6f ", interval);
	if (unit_label)
		fprintf(o->f, "%-12s ", unit_label);
	if (st) {
		fprintf(o->f, "%20s      %-30s %s\n", st, d->name, c->reason ? c->reason : "");
		return;
	}
	if (!strcmp(d->unit, "msec"))
		fprintf(o->f, "%20.2f %-5s %-30s", mean, d->unit, d->name);
	else if (d->unit[0])
		fprintf(o->f, "%20.2f %-5s %-30s", mean, d->unit, d->name);
	else
		fprintf(o->f, "%20.0f       %-30s", mean, d->name);
	bool more = (s && s->n > 1) || (c->running_pct < 99.995 && c->status == PMON_COUNT_OK);
	if (m.ok)
		fprintf(o->f, " # %8.3f %-*s", m.value, more ? 16 : 0, m.unit);
	if (s && s->n > 1)
		fprintf(o->f, " ( +- %.2f%% CV, stddev %.2f )", cv, sd);
	if (c->running_pct < 99.995 && c->status == PMON_COUNT_OK)
		fprintf(o->f, " (%.2f%%)", c->running_pct);
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
};

static void add_series(struct series *s, const struct pmon_count *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		s[i].last = v[i];
		if (v[i].status != PMON_COUNT_OK)
			continue;
		s[i].sum += v[i].value;
		s[i].sumsq += v[i].value * v[i].value;
		s[i].n++;
	}
}

static void print_counts(struct out *o, const struct stat_opts *so, struct pmon_evlist *l,
			 struct pmon_counters *c, const struct pmon_count *v,
			 const struct series *s, double wall_s, double interval)
{
	size_t n = pmon_evlist__count(l);

	if (so->per_cpu || so->per_thread) {
		struct pmon_count *uv = calloc(n, sizeof(*uv));
		if (!uv)
			return;
		for (size_t u = 0; u < pmon_counters__nunits(c); u++) {
			int cpu;
			pid_t tid;
			char label[32];
			if (pmon_counters__read_unit(c, u, uv))
				continue;
			pmon_counters__unit(c, u, &cpu, &tid);
			if (so->per_cpu)
				snprintf(label, sizeof(label), "CPU%d", cpu);
			else
				snprintf(label, sizeof(label), "%d", (int)tid);
			for (size_t i = 0; i < n; i++)
				print_row(o, l, uv, i, wall_s, NULL, interval, label);
		}
		free(uv);
		return;
	}
	for (size_t i = 0; i < n; i++)
		print_row(o, l, v, i, wall_s, s ? &s[i] : NULL, interval, NULL);
}

/* Sleep until @deadline (CLOCK_MONOTONIC seconds), returning early on a
 * signal (SIGCHLD, SIGINT). */
static void sleep_until(double deadline)
{
	struct timespec ts = { .tv_sec = (time_t)deadline,
			       .tv_nsec = (long)((deadline - (double)(time_t)deadline) * 1e9) };

	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

static bool target_alive(const struct stat_opts *so)
{
	for (size_t i = 0; i < so->npids; i++)
		if (kill(so->pids[i], 0) == 0 || errno == EPERM)
			return true;
	for (size_t i = 0; i < so->ntids; i++) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d", (int)so->tids[i]);
		if (access(path, F_OK) == 0)
			return true;
	}
	return !so->npids && !so->ntids;
}

/* Interval mode: print deltas every interval until the target ends. */
static void interval_loop(struct out *o, const struct stat_opts *so, struct pmon_evlist *l,
			  struct pmon_counters *c, pid_t child, struct run_result *rr, double t0)
{
	size_t n = pmon_evlist__count(l);
	struct pmon_count *prev = calloc(n, sizeof(*prev)), *cur = calloc(n, sizeof(*cur)),
			  *delta = calloc(n, sizeof(*delta));
	double step = (double)so->interval_ms / 1e3, next = t0 + step;
	unsigned long printed = 0;

	if (!prev || !cur || !delta)
		goto out;
	for (;;) {
		bool done = false;

		sleep_until(next);
		if (child > 0 && !rr->have_status &&
		    wait4(child, &rr->status, WNOHANG, &rr->ru) == child) {
			rr->have_status = true;
			done = true;
		}
		if (child <= 0 && !target_alive(so))
			done = true;
		if (got_signal)
			done = true;
		double t = now_s();
		if (!done && t < next)
			continue; /* woken early by an unrelated signal */
		if (pmon_counters__read(c, cur))
			break;
		for (size_t i = 0; i < n; i++) {
			delta[i] = cur[i];
			delta[i].raw = cur[i].raw - prev[i].raw;
			delta[i].enabled = cur[i].enabled - prev[i].enabled;
			delta[i].running = cur[i].running - prev[i].running;
			delta[i].value = cur[i].value - prev[i].value;
			delta[i].running_pct = delta[i].enabled
				? 100.0 * (double)delta[i].running / (double)delta[i].enabled
				: 0;
			if (cur[i].status == PMON_COUNT_OK && !delta[i].running)
				delta[i].status = PMON_COUNT_NOT_COUNTED;
		}
		if (!done || t - (next - step) > 1e-3) {
			for (size_t i = 0; i < n; i++) {
				print_row(o, l, delta, i, t - (next - step), NULL, t - t0, NULL);
				if (plot_out)
					print_row(plot_out, l, delta, i, t - (next - step), NULL,
						  t - t0, NULL);
			}
			printed++;
		}
		fflush(o->f);
		memcpy(prev, cur, n * sizeof(*cur));
		if (done)
			break;
		if (so->interval_count && printed >= so->interval_count) {
			if (child > 0) {
				kill(child, SIGTERM);
				rr->ended_by_us = true;
			}
			break;
		}
		next += step;
		while (next < now_s()) /* we fell behind: skip, do not burst */
			next += step;
	}
out:
	free(prev);
	free(cur);
	free(delta);
}

static void print_header(struct out *o, const struct stat_opts *so, const char *set);

static int run_once(struct out *o, const struct stat_opts *so, struct pmon_evlist *l,
		    struct series *s, struct run_result *rr, bool first, bool last, const char *set,
		    double *wall_sum, unsigned runs)
{
	struct pmon_target t = { .sz = sizeof(t), .pid = -1, .inherit = !so->no_inherit };
	struct pmon_child child = { .pid = -1, .go_fd = -1, .err_fd = -1 };
	struct pmon_counters *c;
	struct pmon_count *v;
	size_t n = pmon_evlist__count(l);
	double t0;
	int err;

	memset(rr, 0, sizeof(*rr));
	if (so->argv) {
		err = pmon_child__fork(so->argv, &child);
		if (err) {
			cli_error("cannot run '%s': %s", so->argv[0], pmon_errdetail());
			return CLI_FAIL;
		}
		t.pid = child.pid;
		t.enable_on_exec = true;
	} else if (so->npids) {
		t.pid = so->pids[0];
	}
	if (so->ntids) {
		t.tids = so->tids;
		t.ntids = so->ntids;
	}
	if (so->system_wide) {
		t.system_wide = true;
		t.cpus = so->cpus;
		t.ncpus = so->ncpus;
		t.pid = -1;
	}
	/* Several -p processes: count them as tids of all their threads. */
	pid_t *alltids = NULL;
	if (so->npids > 1) {
		size_t cap = 0, cnt = 0;
		for (size_t i = 0; i < so->npids; i++) {
			char path[64];
			snprintf(path, sizeof(path), "/proc/%d", (int)so->pids[i]);
			if (access(path, F_OK)) {
				cli_error("process %d does not exist", (int)so->pids[i]);
				free(alltids);
				return CLI_USAGE;
			}
			pid_t *na = realloc(alltids, (cap += 1) * sizeof(*na));
			if (!na) {
				free(alltids);
				return CLI_FAIL;
			}
			alltids = na;
			alltids[cnt++] = so->pids[i];
		}
		t.tids = alltids;
		t.ntids = cnt;
		t.pid = -1;
	}

	c = pmon_counters__open(l, &t);
	free(alltids);
	if (!c) {
		int e = errno;
		if (child.pid > 0) {
			kill(child.pid, SIGKILL);
			pmon_child__wait(&child, NULL, NULL);
		}
		if (e == ESRCH) {
			cli_error("%s", pmon_errdetail());
			return CLI_USAGE;
		}
		cli_error("%s%s", pmon_errdetail(),
			  core_pmu() ? "" : "; software events still work, e.g. -e task-clock");
		return CLI_UNSUPPORTED;
	}
	v = calloc(n, sizeof(*v));
	if (!v) {
		pmon_counters__close(c);
		return CLI_FAIL;
	}
	if (!so->argv)
		pmon_counters__enable(c);

	t0 = now_s();
	if (child.pid > 0) {
		child_pid = child.pid;
		err = pmon_child__start(&child);
		if (err) {
			pmon_child__wait(&child, &rr->status, NULL);
			child_pid = 0;
			cli_error("cannot run '%s': %s", so->argv[0], strerror(-err));
			free(v);
			pmon_counters__close(c);
			return err == -ENOENT || err == -EACCES ? 127 : CLI_FAIL;
		}
	}
	if (first)
		print_header(o, so, set); /* once counting and the command both started */
	if (so->interval_ms) {
		interval_loop(o, so, l, c, child.pid, rr, t0);
	} else if (child.pid <= 0) {
		while (!got_signal && target_alive(so))
			sleep_until(now_s() + 0.1);
	}
	if (child.pid > 0 && !rr->have_status) {
		pmon_child__wait(&child, &rr->status, &rr->ru);
		rr->have_status = true;
	}
	child_pid = 0;
	rr->wall_s = now_s() - t0;
	rr->interrupted = got_signal != 0;
	err = pmon_counters__read(c, v);
	if (err) {
		cli_error("%s", pmon_errdetail());
	} else {
		add_series(s, v, n);
		*wall_sum += rr->wall_s;
		if (last && !so->interval_ms) {
			if (so->repeat > 1) {
				/* Means of the runs, so derived metrics use them too. */
				for (size_t i = 0; i < n; i++)
					if (s[i].n)
						v[i].value = s[i].sum / s[i].n;
				print_counts(o, so, l, c, v, s, *wall_sum / runs, -1);
			} else {
				print_counts(o, so, l, c, v, NULL, rr->wall_s, -1);
			}
		}
	}
	free(v);
	pmon_counters__close(c);
	return err ? CLI_FAIL : CLI_OK;
}

static void print_header(struct out *o, const struct stat_opts *so, const char *set)
{
	if (o->fmt != FMT_TABLE)
		return;
	fprintf(o->f, "\n Performance counter stats for ");
	if (so->argv) {
		fputc('\'', o->f);
		for (char **a = so->argv; *a; a++)
			fprintf(o->f, "%s%s", a == so->argv ? "" : " ", *a);
		fputc('\'', o->f);
	} else if (so->system_wide) {
		fprintf(o->f, "%s", so->ncpus ? "the listed CPUs" : "the whole system");
	} else {
		fprintf(o->f, "%s", so->npids ? "process id(s)" : "thread id(s)");
		pid_t *ids = so->npids ? so->pids : so->tids;
		size_t n = so->npids ? so->npids : so->ntids;
		for (size_t i = 0; i < n; i++)
			fprintf(o->f, "%s%d", i ? "," : " ", (int)ids[i]);
	}
	if (so->repeat > 1)
		fprintf(o->f, " (%lu runs)", so->repeat);
	fprintf(o->f, ":\n");
	if (set)
		fprintf(o->f, " (%s)\n", set);
	fputc('\n', o->f);
	if (so->interval_ms)
		fprintf(o->f, "#%13s %20s %-5s %s\n", "time", "counts", "unit", "events");
}

static void print_footer(struct out *o, const struct stat_opts *so, const struct run_result *rr,
			 const struct series *s, const struct pmon_evlist *l)
{
	bool user_only = false;

	if (o->fmt != FMT_TABLE) {
		if (o->fmt == FMT_JSON) {
			json_t *j = json_pack(
				"{s:s, s:f, s:f, s:f}", "type", "summary", "elapsed", rr->wall_s,
				"user",
				(double)rr->ru.ru_utime.tv_sec + rr->ru.ru_utime.tv_usec / 1e6,
				"sys",
				(double)rr->ru.ru_stime.tv_sec + rr->ru.ru_stime.tv_usec / 1e6);
			if (rr->have_status)
				json_object_set_new(
					j, "exit-status",
					json_integer(WIFEXITED(rr->status)
							     ? WEXITSTATUS(rr->status)
							     : 128 + WTERMSIG(rr->status)));
			json_dumpf(j, o->f, JSON_COMPACT | JSON_PRESERVE_ORDER);
			fputc('\n', o->f);
			json_decref(j);
		}
		return;
	}
	for (size_t i = 0; i < pmon_evlist__count(l); i++)
		if (s[i].last.user_only)
			user_only = true;
	fprintf(o->f, "\n%20.9f seconds time elapsed\n", rr->wall_s);
	if (so->argv)
		fprintf(o->f, "\n%20.9f seconds user\n%20.9f seconds sys\n",
			(double)rr->ru.ru_utime.tv_sec + rr->ru.ru_utime.tv_usec / 1e6,
			(double)rr->ru.ru_stime.tv_sec + rr->ru.ru_stime.tv_usec / 1e6);
	if (user_only)
		fprintf(o->f,
			"\n Some events were counted in user space only: "
			"perf_event_paranoid forbids kernel counting (run as root or lower it).\n");
	if (rr->interrupted)
		fprintf(o->f, "\n Interrupted: the counts cover the run up to the signal.\n");
	fputc('\n', o->f);
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

int cmd_stat(int argc, char **argv)
{
	struct stat_opts so = { 0 };
	struct pmon_evlist *l = NULL;
	struct series *s = NULL;
	struct run_result rr = { 0 };
	struct out o = { 0 };
	const char *set = NULL;
	double wall_sum = 0;
	unsigned runs_done = 0;
	int rc;

	rc = parse_args(argc, argv, &so);
	if (rc) {
		rc = rc < 0 ? CLI_OK : rc;
		goto out;
	}
	l = make_events(&so, &set);
	if (!l) {
		rc = CLI_USAGE;
		goto out;
	}
	s = calloc(pmon_evlist__count(l), sizeof(*s));
	if (!s) {
		rc = CLI_FAIL;
		goto out;
	}
	o.fmt = so.fmt;
	o.sep = so.sep;
	o.f = so.outpath ? fopen(so.outpath, "we") : stderr;
	if (!o.f) {
		cli_error("cannot write '%s': %s", so.outpath, strerror(errno));
		rc = CLI_USAGE;
		goto out;
	}

	struct sigaction sa = { .sa_handler = on_signal }, sc = { .sa_handler = on_chld };
	sigemptyset(&sa.sa_mask);
	sigemptyset(&sc.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGCHLD, &sc, NULL);

	if (so.msr_backend) {
		rc = stat_msr_backend(o.f, so.argv, l, so.cpus, so.ncpus, so.msr_device,
				      so.cpuid_file, &child_pid);
		goto close_out;
	}
	char regfile[] = "/tmp/pmon-regions-XXXXXX";
	int regfd = -1;
	if (so.regions) {
		regfd = mkstemp(regfile);
		if (regfd < 0 || setup_regions(&so, l, regfile)) {
			cli_error("cannot set up --regions: %s", strerror(errno));
			rc = CLI_FAIL;
			goto out;
		}
	}
	char plotlog[] = "/tmp/pmon-plot-XXXXXX";
	struct out po = { .fmt = FMT_CSV, .sep = "," };
	if (so.plot) {
		int pfd = mkstemp(plotlog);
		po.f = pfd >= 0 ? fdopen(pfd, "w+") : NULL;
		if (!po.f) {
			cli_error("--plot: cannot create a temporary log: %s", strerror(errno));
			rc = CLI_FAIL;
			goto out;
		}
		plot_out = &po;
	}
	for (unsigned long r = 0; r < so.repeat; r++) {
		rc = run_once(&o, &so, l, s, &rr, r == 0, r + 1 == so.repeat || got_signal, set,
			      &wall_sum, (unsigned)r + 1);
		runs_done = (unsigned)r + 1;
		if (rc != CLI_OK || got_signal)
			break;
	}
	if (rc == CLI_OK) {
		if (runs_done > 1)
			rr.wall_s = wall_sum / runs_done; /* the footer shows the mean */
		print_footer(&o, &so, &rr, s, l);
		if (rr.ended_by_us)
			rc = CLI_OK;
		else if (rr.have_status)
			rc = WIFEXITED(rr.status) ? WEXITSTATUS(rr.status)
						  : 128 + WTERMSIG(rr.status);
		else if (got_signal)
			rc = 128 + got_signal;
	}
	if (plot_out) {
		fclose(po.f);
		plot_out = NULL;
		if (rc != CLI_USAGE && rc != CLI_UNSUPPORTED) {
			char title[512] = "pmon stat";
			size_t off = strlen(title);
			for (char **a = so.argv; a && *a && off < sizeof(title); a++) {
				int k = snprintf(title + off, sizeof(title) - off, " %s", *a);
				if (k > 0)
					off += (size_t)k;
			}
			int prc = plot_log(plotlog, so.plot, 900, 0, title);
			if (prc != CLI_OK && rc == CLI_OK)
				rc = prc;
		}
		unlink(plotlog);
	}
	if (regfd >= 0) {
		if (rc != CLI_USAGE && rc != CLI_UNSUPPORTED)
			copy_regions(regfd, &o);
		close(regfd);
		unlink(regfile);
	}
close_out:
	if (so.outpath) {
		if (fclose(o.f)) {
			cli_error("write error on '%s': %s", so.outpath, strerror(errno));
			if (rc == CLI_OK)
				rc = CLI_FAIL;
		}
	} else if (fflush(stderr) || ferror(stderr)) {
		if (rc == CLI_OK)
			rc = CLI_FAIL;
	}
out:
	free(s);
	pmon_evlist__free(l);
	free(so.events);
	free(so.pids);
	free(so.tids);
	free(so.cpus);
	return rc;
}
