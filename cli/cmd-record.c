// SPDX-License-Identifier: MIT
/*
 * pmon record: event-based sampling (the seeds' VTune EBS, "Sample After"
 * N events with -c, or a rate with -F) of a command, processes or the whole
 * system, into a chunked recording that survives a crash.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include <pmon/pmon.h>

/* --switch-output: how the recording is cut into pieces (perf's). */
enum { SWITCH_NONE = 0, SWITCH_SIGNAL, SWITCH_SIZE, SWITCH_TIME };

struct record_opts {
	bool all; /* -a, or -C: every task on the CPUs */
	bool no_inherit; /* --no-inherit, or -t */
	unsigned long calib;
	const char *event, *out;
	double duration; /* --duration SECONDS; 0: none */
	int sw; /* SWITCH_* */
	uint64_t sw_bytes; /* SWITCH_SIZE */
	double sw_secs; /* SWITCH_TIME */
};

/* The piece being written: its writer and what went into it. */
struct piece {
	struct pmon_data_writer *w;
	uint64_t bytes; /* of records, as the kernel gave them */
	double t0; /* when it was opened (pmon_monotonic_s()) */
	char last[32]; /* the last piece's timestamp, to keep names apart */
};

static int write_rec(void *ctx, const void *rec, size_t len)
{
	struct piece *p = ctx;

	p->bytes += len;
	return pmon_data_writer__add(p->w, rec, len);
}

static volatile sig_atomic_t switch_asked; /* SIGUSR2 with --switch-output */

static void on_usr2(int sig)
{
	(void)sig;
	switch_asked = 1;
}

/*
 * VTune's "Sample After" calibration: run the command once, counting the
 * event, and pick the N that gives about @hz samples per second of its wall
 * time. The command runs twice; the second run is the recording.
 */
static int calibrate(const struct pmon_evlist *ev, char **cmd, unsigned long hz, uint64_t *periods)
{
	struct pmon_open_opts how = { .sz = sizeof(how), .inherit = true, .enable_on_exec = true };
	size_t nev = pmon_evlist__count(ev);
	struct pmon_count n[16] = { 0 };
	struct timespec t0, t1;
	int err;

	struct pmon_run *run = pmon_run__new(cmd, NULL, NULL);
	if (!run) {
		cli_error("%s", pmon_errdetail());
		return CLI_FAIL;
	}
	struct pmon_target *t = pmon_target__new_pid(pmon_run__pid(run));
	struct pmon_counters *c = t ? pmon_counters__open(ev, t, &how) : NULL;
	pmon_target__free(t);
	if (!c) {
		cli_error("--calibrate: %s", pmon_errdetail());
		pmon_run__free(run);
		return CLI_UNSUPPORTED;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = pmon_run__start(run, NULL);
	if (err)
		cli_error("%s", pmon_errdetail());
	else
		pmon_run__wait(run);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	int rerr = pmon_counters__read(c, n);
	pmon_counters__close(c);
	int sig = pmon_run__signal(run), status = 0;
	pmon_run__status(run, &status, NULL);
	pmon_run__free(run);
	if (err)
		return 127;
	if (sig)
		return 128 + sig;
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	for (size_t i = 0; i < nev; i++) {
		const char *name = pmon_evlist__event(ev, i)->name;
		if (rerr || n[i].status != PMON_COUNT_OK || n[i].raw < 1) {
			cli_error("--calibrate: '%s' counted nothing in the calibration run (%s)",
				  name,
				  rerr			? pmon_errdetail()
					  : n[i].reason ? n[i].reason
							: "a count of 0");
			return CLI_UNSUPPORTED;
		}
		/* The period is in the counter's own units (ns for cpu-clock), not the
		 * scaled value stat prints; multiplexing is scaled out. */
		double raw = n[i].running
			? (double)n[i].raw * (double)n[i].enabled / (double)n[i].running
			: (double)n[i].raw;
		double want = secs * (double)hz;
		periods[i] = want >= raw ? 1 : (uint64_t)(raw / want);
		fprintf(stderr,
			"pmon record: calibrated: %s counted %.0f in %.6f s; Sample After %llu for "
			"about %lu samples per second\n",
			name, raw, secs, (unsigned long long)periods[i], hz);
	}
	if (WIFEXITED(status) && WEXITSTATUS(status))
		fprintf(stderr, "pmon record: note: the calibration run exited with status %d\n",
			WEXITSTATUS(status));
	return CLI_OK;
}

#define RECORD_EVENTS_LEN 1024

/* -e EVENTS: char[RECORD_EVENTS_LEN]; -e a -e b is -e a,b. */
static int opt_event(const struct cli_option *opt, const char *arg)
{
	char *buf = opt->value;
	size_t used = strlen(buf);
	int w;

	if (!arg[0]) {
		cli_error("-e '': no event named");
		return CLI_USAGE;
	}
	w = snprintf(buf + used, RECORD_EVENTS_LEN - used, "%s%s", used ? "," : "", arg);
	if (w < 0 || (size_t)w >= RECORD_EVENTS_LEN - used) {
		cli_error("-e: the events run longer than %d characters", RECORD_EVENTS_LEN - 1);
		return CLI_USAGE;
	}
	return CLI_OK;
}

/* --calibrate[=HZ]: unsigned long *, 1000 without a value. */
static int opt_calibrate(const struct cli_option *opt, const char *arg)
{
	unsigned long *hz = opt->value;

	*hz = 1000;
	if (arg && (!cli_parse_uint(arg, 100000, "--calibrate", hz) || !*hz)) {
		if (!*hz)
			cli_error("--calibrate=0: at least 1 sample per second");
		return CLI_USAGE;
	}
	return CLI_OK;
}

/*
 * perf's --switch-output[=signal|SIZE|TIME] (struct record_opts *): no
 * value or "signal" cuts at SIGUSR2; SIZE ends in B, K, M or G; TIME in s,
 * m, h or d (tools/perf/builtin-record.c, switch_output_setup()).
 */
static int opt_switch_output(const struct cli_option *opt, const char *arg)
{
	static const struct {
		char tag;
		int mode;
		double mult;
	} units[] = { { 'B', SWITCH_SIZE, 1 },	     { 'K', SWITCH_SIZE, 1024 },
		      { 'M', SWITCH_SIZE, 1 << 20 }, { 'G', SWITCH_SIZE, 1 << 30 },
		      { 's', SWITCH_TIME, 1 },	     { 'm', SWITCH_TIME, 60 },
		      { 'h', SWITCH_TIME, 3600 },    { 'd', SWITCH_TIME, 86400 } };
	struct record_opts *ro = opt->value;
	char *end;

	ro->sw = SWITCH_SIGNAL;
	if (!arg || !strcmp(arg, "signal"))
		return CLI_OK;
	errno = 0;
	unsigned long long v = strtoull(arg, &end, 10);
	for (size_t i = 0; !errno && end != arg && v && v < (1ULL << 40) && i < 8; i++) {
		if (end[0] != units[i].tag || end[1])
			continue;
		ro->sw = units[i].mode;
		ro->sw_bytes = (uint64_t)((double)v * units[i].mult);
		ro->sw_secs = (double)v * units[i].mult;
		return CLI_OK;
	}
	cli_error("--switch-output '%s': signal, a size (e.g. 100M) or a time (e.g. 30s)", arg);
	return CLI_USAGE;
}

/* perf's --call-graph fp | dwarf[,SIZE]: struct pmon_sample_opts *. */
static int opt_call_graph(const struct cli_option *opt, const char *arg)
{
	struct pmon_sample_opts *so = opt->value;
	unsigned long size;

	so->callchain = true;
	if (!strcmp(arg, "fp"))
		return CLI_OK;
	if (strncmp(arg, "dwarf", 5) || (arg[5] && arg[5] != ',')) {
		cli_error("--call-graph '%s': fp or dwarf[,SIZE]", arg);
		return CLI_USAGE;
	}
	so->stack_user = 8192;
	if (arg[5] == ',') {
		if (!cli_parse_uint(arg + 6, 65528, "--call-graph dwarf,SIZE", &size))
			return CLI_USAGE;
		if (!size || size % 8) {
			cli_error("--call-graph dwarf,%lu: a multiple of 8 bytes", size);
			return CLI_USAGE;
		}
		so->stack_user = (unsigned)size;
	}
	return CLI_OK;
}

static int record(const struct pmon_target *t, char **cmd, const struct record_opts *ro,
		  struct pmon_sample_opts *sop);

int cmd_record(int argc, char **argv)
{
	struct pmon_sample_opts so = { .sz = sizeof(so) };
	struct pmon_target *t;
	struct pmon_target_spec spec = { .sz = sizeof(spec) };
	struct record_opts ro = { .out = "pmon.data" };
	char events[RECORD_EVENTS_LEN] = "";
	unsigned long period = 0, freq = 0;
	bool g = false;
	const struct cli_option options[] = {
		CLI_OPT_STRING('p', "pid", &spec.pid, "PIDS",
			       "processes (0-3,5: each with all its threads); -p and\n"
			       "-a record until Ctrl-C, or for as long as a command\n"
			       "given after them runs"),
		CLI_OPT_STRING('t', "tid", &spec.tid, "TIDS",
			       "threads (a comma list), without the threads they\n"
			       "start (as perf's -t: --no-inherit implied)"),
		CLI_OPT_FLAG('a', "all-cpus", &ro.all, "every task on every CPU"),
		CLI_OPT_STRING('C', "cpu", &spec.cpu_list, "CPUS",
			       "every task on these CPUs only (0-3,5; implies -a)"),
		CLI_OPT_FLAG('i', "no-inherit", &ro.no_inherit,
			     "child tasks and new threads are not followed"),
		CLI_OPT_CALLBACK('e', "event", events, "EVENTS", opt_event,
				 "the events to sample, comma-separated or -e again\n"
				 "(default cpu-clock; cycles where a PMU exists); report\n"
				 "shows each"),
		CLI_OPT_UINT_MIN('c', "count", &period, "N", 1, 1UL << 62,
				 "sample after at least 1 event",
				 "a sample every N events (the seeds' \"Sample After\")"),
		CLI_OPT_UINT_MIN('F', "freq", &freq, "HZ", 1, 100000,
				 "at least 1 sample per second",
				 "about HZ samples per second (default 1000, VTune's\n"
				 "rule of thumb)"),
		{ .type = CLI_OPTION_CALLBACK,
		  .long_name = "calibrate",
		  .value = &ro.calib,
		  .argname = "HZ",
		  .flags = CLI_OPTARG,
		  .cb = opt_calibrate,
		  .help = "count the command once, then record it with, for\n"
			  "each event, the -c N that gives about HZ samples per\n"
			  "second of it (default 1000)" },
		CLI_OPT_FLAG('g', NULL, &g, "call stacks through frame pointers (the kernel's)"),
		CLI_OPT_CALLBACK(0, "call-graph", &so, "MODE", opt_call_graph,
				 "fp: as -g; dwarf[,SIZE], for code built without frame\n"
				 "pointers: SIZE bytes of user stack (default 8192) and\n"
				 "the registers with each sample, unwound at report time\n"
				 "with the DWARF CFI (elfutils)"),
		CLI_OPT_OUTPUT(&ro.out, "FILE",
			       "the recording (default pmon.data; format:\n"
			       "docs/pmon-data-format.md)"),
		CLI_OPT_CALLBACK(0, "duration", &ro.duration, "SECONDS", cli_opt_duration,
				 "stop after SECONDS and exit 0 (a command still\n"
				 "running then is stopped); pmon's own: perf record\n"
				 "has no such option"),
		{ .type = CLI_OPTION_CALLBACK,
		  .long_name = "switch-output",
		  .value = &ro,
		  .argname = "signal|SIZE|TIME",
		  .flags = CLI_OPTARG,
		  .cb = opt_switch_output,
		  .help = "cut the recording into pieces, each complete and\n"
			  "named FILE.YYYYMMDDHHMMSScc (when it ended), as perf:\n"
			  "at each SIGUSR2 (signal, the default), after SIZE\n"
			  "bytes of records (B, K, M, G) or TIME (s, m, h, d)" },
		CLI_OPT_END(),
	};
	int rc = CLI_OK;
	int argi = cli_parse_options(
		"record",
		"usage: pmon record [-e EVENT] [-c N | -F HZ | --calibrate[=HZ]]\n"
		"                   [-g | --call-graph fp|dwarf[,SIZE]] [-o FILE]\n"
		"                   [--no-inherit] [--duration SECONDS]\n"
		"                   [--switch-output[=signal|SIZE|TIME]]\n"
		"                   (-- command | -p PIDS | -t TIDS | -a | -C CPUS)\n"
		"                   [-- command]",
		options, CLI_PARSE_STOP_AT_OPERAND, argc, argv);

	if (argi <= 0)
		return -argi;
	const char *event = events[0] ? events : NULL;
	so.period = period;
	so.freq = freq;
	so.callchain |= g;
	char **cmd = argi < argc ? argv + argi : NULL;
	/* The recording's name is checked before anything runs (#14.7). */
	if (!cli_check_output_as(ro.out, "-o", PMON_OUTPUT_STREAM | PMON_OUTPUT_KEEP_OLD))
		return CLI_USAGE;
	/* Each piece is renamed from -o's path: only a regular file, never a
	 * link (renaming would move the user's link, not pmon's file). */
	struct stat st;
	if (ro.sw && (!strcmp(ro.out, "-") || (!lstat(ro.out, &st) && !S_ISREG(st.st_mode)))) {
		cli_error("--switch-output: '%s' is not a regular file to cut into pieces", ro.out);
		return CLI_USAGE;
	}
	ro.all |= spec.cpu_list != NULL;
	ro.no_inherit |= spec.tid != NULL; /* perf's -t: no_inherit unless asked */
	/* One parser and one check for every command's lists (pmon/monitor.h). */
	if (!(t = pmon_target__new(&spec))) {
		cli_error("%s", pmon_errdetail());
		return CLI_USAGE;
	}
	ro.event = event;
	rc = record(t, cmd, &ro, &so);
	pmon_target__free(t);
	return rc;
}

static int record_run(const struct pmon_target *t, struct pmon_run *run, struct pmon_evlist *ev,
		      char **cmd, const struct record_opts *ro, struct pmon_sample_opts *so);

/* The tasks of a -p or -t target (their maps come from /proc), or NULL. */
static const pid_t *target_tasks(const struct pmon_target *t, size_t *n)
{
	const pid_t *p = pmon_target__pids(t, n);
	return p ? p : pmon_target__tids(t, n);
}

/* The recording itself, once the options are read. */
static int record(const struct pmon_target *t, char **cmd, const struct record_opts *ro,
		  struct pmon_sample_opts *sop)
{
	struct pmon_sample_opts so = *sop;
	struct pmon_open_opts how = { .sz = sizeof(how), .inherit = !ro->no_inherit };
	int rc = CLI_OK, err;
	size_t npids;
	bool pid = target_tasks(t, &npids) != NULL, all = ro->all;
	const char *event = ro->event;
	unsigned long calib = ro->calib;

	/* With -p or -a, a command only says how long to record (perf's
	 * "record -p PID -- sleep 1"). */
	bool span = cmd && (pid || all);
	if (pid + all != (cmd && !span ? 0 : 1)) {
		cli_error("give one target: a command ('-- CMD'), -p PID, -t TID, -a or -C CPUS");
		return CLI_USAGE;
	}
	if (so.period && so.freq) {
		cli_error("-c and -F exclude each other");
		return CLI_USAGE;
	}
	struct pmon_evlist *ev = pmon_evlist__new(NULL);
	if (!ev) {
		cli_error("out of memory");
		return CLI_FAIL;
	}
	err = pmon_evlist__add(ev,
			       event					? event
				       : pmon_kernel_has_core_pmu(NULL) ? "cycles"
									: "cpu-clock");
	if (err) {
		cli_error("%s", pmon_errdetail());
		pmon_evlist__free(ev);
		/* A known event of a PMU this machine lacks: not possible here. */
		return cli_event_error_code(err);
	}
	uint64_t periods[16] = { 0 };
	if (pmon_evlist__count(ev) > 16) {
		cli_error("%zu events: pmon record samples at most 16 at once",
			  pmon_evlist__count(ev));
		pmon_evlist__free(ev);
		return CLI_USAGE;
	}
	if (calib && (!cmd || span || so.period || so.freq)) {
		cli_error(!cmd ? "--calibrate runs a command twice: give '-- CMD'"
			       : "--calibrate chooses -c itself: leave out -c and -F");
		pmon_evlist__free(ev);
		return CLI_USAGE;
	}
	if (calib) {
		int crc = calibrate(ev, cmd, calib, periods);
		so.periods = periods;
		if (crc != CLI_OK) {
			pmon_evlist__free(ev);
			return crc;
		}
	}
	struct pmon_run *run = pmon_run__new(cmd, t, NULL);
	if (!run) {
		cli_error("%s", pmon_errdetail());
		pmon_evlist__free(ev);
		return CLI_FAIL;
	}
	/* The command itself, from its exec; or every CPU (-a); or -p's processes. */
	struct pmon_target *own = NULL;
	if (cmd && !span) {
		own = pmon_target__new_pid(pmon_run__pid(run));
		how.enable_on_exec = true;
	} else if (!pid) {
		size_t ncpus;
		const int *cpus = pmon_target__cpus(t, &ncpus);
		own = pmon_target__new_cpus(cpus, ncpus);
	}
	so.open = &how;
	if (own || pid) {
		rc = record_run(own ? own : t, run, ev, cmd, ro, &so);
	} else {
		cli_error("%s", strerror(errno));
		rc = CLI_FAIL;
	}
	pmon_target__free(own);
	pmon_run__free(run);
	pmon_evlist__free(ev);
	return rc;
}

/* The recording's file: its header, then the event table (which sample
 * identifier is which event). Return: the writer, or NULL with *@rc. */
static struct pmon_data_writer *open_recording(struct pmon_sampler *s, struct pmon_evlist *ev,
					       char **cmd, const struct pmon_target *t, bool all,
					       const char *out, const struct pmon_sample_opts *so,
					       int *rc)
{
	struct pmon_data_header h = { .sample_type = pmon_sampler__sample_type(s),
				      .regs_user = pmon_sampler__regs_user(s),
				      .attr_type = pmon_evlist__event(ev, 0)->attr.type,
				      .attr_config = pmon_evlist__event(ev, 0)->attr.config,
				      .period = so->periods ? so->periods[0] : so->period,
				      .flags = all ? PMON_DATA_SYSTEM_WIDE : 0,
				      .freq = so->period ? 0
					      : so->freq ? so->freq
							 : 1000 };
	for (size_t i = 0, o = 0; i < pmon_evlist__count(ev) && o < sizeof(h.event); i++) {
		int k = snprintf(h.event + o, sizeof(h.event) - o, "%s%s", i ? "," : "",
				 pmon_evlist__event(ev, i)->name);
		if (k > 0)
			o += (size_t)k;
	}
	size_t ncpus;
	const int *cpus = all ? pmon_target__cpus(t, &ncpus) : NULL;
	if (cpus) /* -C: the reports say which CPUs, not "all CPUs" */
		pmon_idlist__format(cpus, ncpus, h.cpus, sizeof(h.cpus));
	size_t off = 0;
	for (char **a = cmd; a && *a && off < sizeof(h.command); a++) {
		int k = snprintf(h.command + off, sizeof(h.command) - off, "%s%s", off ? " " : "",
				 *a);
		if (k > 0)
			off += (size_t)k;
	}
	struct pmon_data_writer *w = pmon_data_writer__open(out, &h);
	int err = w ? 0 : -errno;

	if (err) {
		/* The name was checked: what fails now is the machine's, or a
		 * FIFO nobody reads (found only by opening it): bad input, 2. */
		cli_error("%s", pmon_errdetail());
		*rc = err == -ENXIO || err == -EPERM || err == -EISDIR ? CLI_USAGE : CLI_FAIL;
		return NULL;
	}
	for (size_t i = 0; !err && i < pmon_evlist__count(ev); i++) {
		const struct pmon_event_desc *d = pmon_evlist__event(ev, i);
		const uint64_t *ids = NULL;
		size_t nids = pmon_sampler__ids(s, i, &ids);
		uint64_t period = so->periods && so->periods[i] ? so->periods[i] : so->period;
		if (!period && !so->freq && d->attr.type == PERF_TYPE_TRACEPOINT)
			period = 1; /* every hit, as the sampler opened it */
		err = pmon_data_writer__add_event(w, (unsigned)i, d->name, d->attr.type,
						  d->attr.config, period,
						  period	     ? 0
							  : so->freq ? so->freq
								     : 1000,
						  ids, nids);
	}
	if (!err)
		err = pmon_data_writer__add_tp_formats(w, ev);
	if (err) { /* the file cannot say what its samples are: none is kept */
		cli_error("%s: %s", out, pmon_errdetail());
		pmon_data_writer__abandon(w);
		*rc = CLI_FAIL;
		return NULL;
	}
	return w;
}

/* Records in chunks written whole (@records, what a report reads). */
struct drained {
	long records; /* of the piece being written */
	bool write_failed;
	bool timed_out; /* --duration ended the recording */
	long werr; /* the write's -errno */
};

/* The recording's tasks and how it is written: what a new piece needs. */
struct recording {
	struct pmon_sampler *s;
	struct pmon_evlist *ev;
	const struct pmon_target *t;
	struct pmon_run *run;
	char **cmd;
	const struct record_opts *ro;
	const struct pmon_sample_opts *so;
	struct piece p;
};

/*
 * The mappings the tasks have now, from /proc: the kernel reports only
 * those made after sampling began (-p, -t, -a), or, in a piece after the
 * first, after that piece began. Return: CLI_OK or the exit status.
 */
static int add_maps(struct recording *r, bool first)
{
	size_t n;
	const pid_t *pids = target_tasks(r->t, &n);
	pid_t cmd_pid = r->cmd && !n && !r->ro->all ? pmon_run__pid(r->run) : 0;

	if (first && r->cmd && !n && !r->ro->all)
		return CLI_OK; /* the command's own come as it runs */
	if (r->ro->all)
		n = 1;
	else if (!n)
		n = 1, pids = &cmd_pid;
	for (size_t i = 0; i < n; i++) {
		long m = pmon_data_writer__add_maps(r->p.w, r->ro->all ? 0 : pids[i]);
		if (m < 0 && first && !r->ro->all) {
			cli_error("%s", pmon_errdetail());
			return m == -ESRCH ? CLI_USAGE : CLI_FAIL;
		}
	}
	return CLI_OK;
}

/* FILE.YYYYMMDDHHMMSScc, local time, as perf names its pieces; a name
 * never repeats (a piece cut within 10 ms of the last waits for the next). */
static void piece_name(struct piece *p, const char *out, char *name, size_t len)
{
	char ts[32];

	for (;;) {
		struct timespec now;
		struct tm tm;
		clock_gettime(CLOCK_REALTIME, &now);
		localtime_r(&now.tv_sec, &tm);
		size_t k = strftime(ts, sizeof(ts) - 3, "%Y%m%d%H%M%S", &tm);
		snprintf(ts + k, sizeof(ts) - k, "%02ld", now.tv_nsec / 10000000);
		if (strcmp(ts, p->last))
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 2000000 }, NULL);
	}
	snprintf(p->last, sizeof(p->last), "%s", ts);
	snprintf(name, len, "%s.%s", out, ts);
}

/* End the piece: close it, name it FILE.<timestamp>, say so. Return: 0 or -1. */
static int end_piece(struct recording *r, long records)
{
	char name[4096];
	const char *out = r->ro->out;
	int err = pmon_data_writer__close(r->p.w);

	r->p.w = NULL;
	if (err) {
		cli_error("%s", pmon_errdetail());
		return -1;
	}
	piece_name(&r->p, out, name, sizeof(name));
	if (rename(out, name)) {
		cli_error("cannot rename '%s' to '%s': %s", out, name, strerror(errno));
		return -1;
	}
	fprintf(stderr, "pmon record: dump: %ld records written to %s\n", records, name);
	return 0;
}

/* --switch-output: end this piece and begin the next. Return: 0 or -1. */
static int switch_piece(struct recording *r, long records)
{
	int rc = CLI_OK;

	if (end_piece(r, records))
		return -1;
	r->p.w = open_recording(r->s, r->ev, r->cmd, r->t, r->ro->all, r->ro->out, r->so, &rc);
	if (!r->p.w || add_maps(r, false) != CLI_OK)
		return -1;
	r->p.bytes = 0;
	r->p.t0 = pmon_monotonic_s();
	return 0;
}

/* Whether --switch-output asks for a new piece now. */
static bool switch_due(const struct recording *r)
{
	switch (r->ro->sw) {
	case SWITCH_SIGNAL:
		return switch_asked;
	case SWITCH_SIZE:
		return r->p.bytes >= r->ro->sw_bytes;
	case SWITCH_TIME:
		return pmon_monotonic_s() - r->p.t0 >= r->ro->sw_secs;
	default:
		return false;
	}
}

/* Drain the rings into the recording until the run ends, --duration is
 * over or a write fails; cut pieces as --switch-output asks. */
static void drain_until_done(struct recording *r, struct drained *d)
{
	double t0 = pmon_monotonic_s();

	for (;;) {
		pmon_sampler__poll(r->s, 200);
		long n = pmon_sampler__drain(r->s, write_rec, &r->p);
		if (n < 0) {
			d->write_failed = true;
			d->werr = n;
			return;
		}
		/* A chunk at least every poll: a crash loses at most ~200 ms. */
		if ((d->werr = pmon_data_writer__flush(r->p.w))) {
			d->write_failed = true;
			return;
		}
		d->records += n;
		if (switch_due(r)) {
			switch_asked = 0;
			if (switch_piece(r, d->records)) {
				d->write_failed = true;
				d->werr = -EIO;
				return;
			}
			d->records = 0;
		}
		if (r->ro->duration && pmon_monotonic_s() - t0 >= r->ro->duration) {
			d->timed_out = true;
			if (r->cmd)
				pmon_run__stop(r->run);
			return;
		}
		/* The command ended, the processes did, or Ctrl-C: the
		 * recording ends, as perf's does. */
		if (pmon_run__done(r->run))
			return;
	}
}

/* Open the rings, write the file, run the command and drain until it ends. */
static int record_run(const struct pmon_target *t, struct pmon_run *run, struct pmon_evlist *ev,
		      char **cmd, const struct record_opts *ro, struct pmon_sample_opts *so)
{
	size_t npids;
	bool pid = target_tasks(t, &npids) != NULL, span = cmd && (pid || ro->all);
	struct drained d = { 0 };
	int rc = CLI_OK;
	struct recording r = { .s = pmon_sampler__open(ev, t, so),
			       .ev = ev,
			       .t = t,
			       .run = run,
			       .cmd = cmd,
			       .ro = ro,
			       .so = so };

	/* Before the file exists: once it does, SIGUSR2 cuts, never kills. */
	if (ro->sw == SWITCH_SIGNAL)
		sigaction(SIGUSR2, &(struct sigaction){ .sa_handler = on_usr2 }, NULL);
	if (!r.s) {
		int err = -errno, sig = cli_run_interrupted(run);
		if (sig)
			return sig;
		cli_error("%s", pmon_errdetail());
		return err == -ESRCH ? CLI_USAGE : CLI_UNSUPPORTED;
	}
	r.p.w = open_recording(r.s, ev, cmd, t, ro->all, ro->out, so, &rc);
	if (!r.p.w) {
		pmon_sampler__close(r.s);
		return rc;
	}
	r.p.t0 = pmon_monotonic_s();
	if (!cmd || span) {
		pmon_sampler__enable(r.s);
		rc = add_maps(&r, true);
	}
	if (rc == CLI_OK && pmon_run__start(run, NULL)) {
		cli_error("%s", pmon_errdetail());
		rc = 127;
	}
	if (rc == CLI_OK)
		drain_until_done(&r, &d);
	if (d.write_failed) {
		/* A full disk: what is on it stays readable (whole chunks; a
		 * report skips a torn last one), nothing more can be kept, so
		 * the command is stopped rather than run on unsampled. A
		 * closed pipe is the end of the output: exit 1, nothing said
		 * (docs/exit-codes.md), as stat and top. */
		if (d.werr != -EPIPE && r.p.w)
			cli_error("%s; the recording keeps the first %ld records, the command "
				  "was stopped",
				  pmon_errdetail(), d.records);
		rc = CLI_FAIL;
		pmon_run__stop(run);
	} else if (cmd && !d.timed_out && pmon_run__signal(run)) {
		/* The signal was passed on: a command that exits on it (most
		 * do) has a second to do so; one that ignores it is stopped,
		 * so the recording ends now. */
		pmon_run__wait(run);
	}
	pmon_sampler__disable(r.s);
	long n = d.write_failed ? 0 : pmon_sampler__drain(r.s, write_rec, &r.p);
	if (n > 0)
		d.records += n;
	if (!r.p.w) {
		/* a piece could not be begun: the earlier ones are whole */
	} else if (d.write_failed) {
		pmon_data_writer__close(r.p.w); /* fails again; keeps what was written */
	} else if (rc == 127) {
		/* The command never ran: nothing was recorded, and a recording
		 * that was at @out before is put back (not left as .old). */
		pmon_data_writer__abandon(r.p.w);
	} else if (ro->sw) {
		if (end_piece(&r, d.records) && rc == CLI_OK)
			rc = CLI_FAIL;
	} else if (pmon_data_writer__close(r.p.w) && rc == CLI_OK) {
		cli_error("%s", pmon_errdetail());
		rc = CLI_FAIL;
	}
	pmon_sampler__close(r.s);
	if (cmd && rc != 127)
		pmon_run__wait(run);
	if (rc != 127 && !d.write_failed && !ro->sw)
		fprintf(stderr, "pmon record: %ld records written to %s\n", d.records, ro->out);
	if (rc == CLI_OK && d.timed_out)
		return CLI_OK; /* --duration ended it, as asked */
	return rc == CLI_OK ? pmon_run__exit_code(run) : rc;
}
