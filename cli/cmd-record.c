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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include <pmon/pmon.h>

static int write_rec(void *ctx, const void *rec, size_t len)
{
	return pmon_data_writer__add(ctx, rec, len);
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

static int record(const struct pmon_target *t, char **cmd, bool all, unsigned long calib,
		  const char *event, const char *out, struct pmon_sample_opts *sop);

int cmd_record(int argc, char **argv)
{
	struct pmon_sample_opts so = { .sz = sizeof(so) };
	struct pmon_target *t;
	struct pmon_target_spec spec = { .sz = sizeof(spec) };
	const char *out = "pmon.data";
	char events[RECORD_EVENTS_LEN] = "";
	unsigned long period = 0, freq = 0, calib = 0;
	bool all = false, g = false;
	const struct cli_option options[] = {
		CLI_OPT_STRING('p', "pid", &spec.pid, "PIDS",
			       "processes (0-3,5: each with all its threads); -p and\n"
			       "-a record until Ctrl-C, or for as long as a command\n"
			       "given after them runs"),
		CLI_OPT_FLAG('a', "all-cpus", &all, "every task on every CPU"),
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
		  .value = &calib,
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
		CLI_OPT_OUTPUT(&out, "FILE",
			       "the recording (default pmon.data; format:\n"
			       "docs/pmon-data-format.md)"),
		CLI_OPT_END(),
	};
	int rc = CLI_OK;
	int argi = cli_parse_options(
		"record",
		"usage: pmon record [-e EVENT] [-c N | -F HZ | --calibrate[=HZ]]\n"
		"                   [-g | --call-graph fp|dwarf[,SIZE]] [-o FILE]\n"
		"                   (-- command | -p PIDS | -a) [-- command]",
		options, CLI_PARSE_STOP_AT_OPERAND, argc, argv);

	if (argi <= 0)
		return -argi;
	const char *event = events[0] ? events : NULL;
	so.period = period;
	so.freq = freq;
	so.callchain |= g;
	char **cmd = argi < argc ? argv + argi : NULL;
	/* The recording's name is checked before anything runs (#14.7). */
	if (!cli_check_output_as(out, "-o", PMON_OUTPUT_STREAM | PMON_OUTPUT_KEEP_OLD))
		return CLI_USAGE;
	/* One parser and one check for every command's lists (pmon/monitor.h). */
	if (!(t = pmon_target__new(&spec))) {
		cli_error("%s", pmon_errdetail());
		return CLI_USAGE;
	}
	rc = record(t, cmd, all, calib, event, out, &so);
	pmon_target__free(t);
	return rc;
}

static int record_run(const struct pmon_target *t, struct pmon_run *run, struct pmon_evlist *ev,
		      char **cmd, bool all, const char *out, struct pmon_sample_opts *so);

/* The recording itself, once the options are read. */
static int record(const struct pmon_target *t, char **cmd, bool all, unsigned long calib,
		  const char *event, const char *out, struct pmon_sample_opts *sop)
{
	struct pmon_sample_opts so = *sop;
	struct pmon_open_opts how = { .sz = sizeof(how), .inherit = true };
	int rc = CLI_OK, err;
	size_t npids;
	bool pid = pmon_target__pids(t, &npids) != NULL;

	/* With -p or -a, a command only says how long to record (perf's
	 * "record -p PID -- sleep 1"). */
	bool span = cmd && (pid || all);
	if (pid + all != (cmd && !span ? 0 : 1)) {
		cli_error("give one target: a command ('-- CMD'), -p PID or -a");
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
		rc = record_run(own ? own : t, run, ev, cmd, all, out, &so);
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
					       char **cmd, bool all, const char *out,
					       const struct pmon_sample_opts *so, int *rc)
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
	long records;
	bool write_failed;
	long werr; /* the write's -errno */
};

/* Drain the rings into the recording until the run ends or a write fails. */
static void drain_until_done(struct pmon_sampler *s, struct pmon_data_writer *w,
			     struct pmon_run *run, struct drained *d)
{
	for (;;) {
		pmon_sampler__poll(s, 200);
		long n = pmon_sampler__drain(s, write_rec, w);
		if (n < 0) {
			d->write_failed = true;
			d->werr = n;
			return;
		}
		/* A chunk at least every poll: a crash loses at most ~200 ms. */
		if ((d->werr = pmon_data_writer__flush(w))) {
			d->write_failed = true;
			return;
		}
		d->records += n;
		/* The command ended, the processes did, or Ctrl-C: the
		 * recording ends, as perf's does. */
		if (pmon_run__done(run))
			return;
	}
}

/* Open the rings, write the file, run the command and drain until it ends. */
static int record_run(const struct pmon_target *t, struct pmon_run *run, struct pmon_evlist *ev,
		      char **cmd, bool all, const char *out, struct pmon_sample_opts *so)
{
	size_t npids;
	const pid_t *pids = pmon_target__pids(t, &npids);
	bool pid = npids > 0, span = cmd && (pid || all);
	struct drained d = { 0 };
	int rc = CLI_OK;
	struct pmon_sampler *s = pmon_sampler__open(ev, t, so);

	if (!s) {
		int err = -errno, sig = cli_run_interrupted(run);
		if (sig)
			return sig;
		cli_error("%s", pmon_errdetail());
		return err == -ESRCH ? CLI_USAGE : CLI_UNSUPPORTED;
	}
	struct pmon_data_writer *w = open_recording(s, ev, cmd, all, out, so, &rc);
	if (!w) {
		pmon_sampler__close(s);
		return rc;
	}
	if (!cmd || span) {
		pmon_sampler__enable(s);
		/* The kernel reports mappings made from now on; the ones the
		 * running process(es) already have come from /proc. */
		for (size_t i = 0; i < (all ? 1 : npids) && rc == CLI_OK; i++) {
			long m = pmon_data_writer__add_maps(w, all ? 0 : pids[i]);
			if (m < 0 && pid) {
				cli_error("%s", pmon_errdetail());
				rc = m == -ESRCH ? CLI_USAGE : CLI_FAIL;
			}
		}
	}
	if (rc == CLI_OK && pmon_run__start(run, NULL)) {
		cli_error("%s", pmon_errdetail());
		rc = 127;
	}
	if (rc == CLI_OK)
		drain_until_done(s, w, run, &d);
	if (d.write_failed) {
		/* A full disk: what is on it stays readable (whole chunks; a
		 * report skips a torn last one), nothing more can be kept, so
		 * the command is stopped rather than run on unsampled. A
		 * closed pipe is the end of the output: exit 1, nothing said
		 * (docs/exit-codes.md), as stat and top. */
		if (d.werr != -EPIPE)
			cli_error("%s; the recording keeps the first %ld records, the command "
				  "was stopped",
				  pmon_errdetail(), d.records);
		rc = CLI_FAIL;
		pmon_run__stop(run);
	} else if (cmd && pmon_run__signal(run)) {
		/* The signal was passed on: a command that exits on it (most
		 * do) has a second to do so; one that ignores it is stopped,
		 * so the recording ends now. */
		pmon_run__wait(run);
	}
	pmon_sampler__disable(s);
	long n = d.write_failed ? 0 : pmon_sampler__drain(s, write_rec, w);
	if (n > 0)
		d.records += n;
	if (d.write_failed) {
		pmon_data_writer__close(w); /* fails again; keeps what was written */
	} else if (rc == 127) {
		/* The command never ran: nothing was recorded, and a recording
		 * that was at @out before is put back (not left as .old). */
		pmon_data_writer__abandon(w);
	} else if (pmon_data_writer__close(w) && rc == CLI_OK) {
		cli_error("%s", pmon_errdetail());
		rc = CLI_FAIL;
	}
	pmon_sampler__close(s);
	if (cmd && rc != 127)
		pmon_run__wait(run);
	if (rc != 127 && !d.write_failed)
		fprintf(stderr, "pmon record: %ld records written to %s\n", d.records, out);
	return rc == CLI_OK ? pmon_run__exit_code(run) : rc;
}
