// SPDX-License-Identifier: MIT
/*
 * pmon trace: the Soft Logic Analyzer. `pmon trace -o FILE -- CMD` runs a
 * program whose trace hooks (pmon/trace.h) then write FILE; with `-k
 * GROUPS` pmon records the program's kernel events meanwhile (its
 * scheduling, system calls, faults, interrupts) and merges them into FILE
 * on the same CLOCK_MONOTONIC timeline. `pmon trace report FILE` prints
 * the delta-time table per channel, the logic-analyzer view (one row of
 * ticks per channel), Chrome JSON, Perfetto's protobuf or an SVG timeline.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include <pmon/pmon.h>
#include <pmon/trace.h>

static const char run_usage[] =
	"usage: pmon trace [-e CHANNELS] [--hooks | --no-hooks] [-o FILE]\n"
	"                  [--duration SECONDS] -- COMMAND [ARGS...]\n"
	"       pmon trace [-e CHANNELS] [-o FILE] [--duration SECONDS] -p PIDS\n"
	"       pmon trace [-e CHANNELS] [-o FILE] [--duration SECONDS] -a [-- COMMAND]\n"
	"       pmon trace -e help\n"
	"       pmon trace report [FILE] [--format FORMAT] [--from MS] [--to MS]\n"
	"                         [--width N] [-o OUT]   (see 'pmon trace report --help')";

static const char report_usage[] =
	"usage: pmon trace report [FILE]\n"
	"                         [--format table|ticks|json|chrome-json|perfetto|svg|png]\n"
	"                         [--from MS] [--to MS] [--width N] [-o OUT]";

/* `pmon trace -e help`: every group, what it records, whether this machine
 * has its tracepoints (rights are checked when they open). */
static int list_channels(void)
{
	size_t n;
	const struct pmon_trace_kernel_group *g = pmon_trace_kernel_groups(&n);

	printf("kernel event channels for 'pmon trace -e' (comma-separated, or all):\n");
	for (size_t i = 0; i < n; i++) {
		int err = pmon_trace_kernel_probe(g[i].name, NULL);
		printf("  %-9s %s\n  %-9s %s%s%s\n", g[i].name, g[i].what, "", g[i].events,
		       err ? "; not here: " : "", err ? pmon_errdetail() : "");
	}
	return cli_close_output(stdout, NULL);
}

/* -e's list, checked before anything runs: each name a group, or "all". */
static bool channels_ok(const char *list)
{
	size_t n;
	const struct pmon_trace_kernel_group *g = pmon_trace_kernel_groups(&n);
	char names[256] = "";

	for (const char *p = list;; p++) {
		size_t len = strcspn(p, ","), i = 0;
		while (i < n && (strlen(g[i].name) != len || strncmp(p, g[i].name, len)))
			i++;
		if (i == n && (len != 3 || strncmp(p, "all", 3))) {
			for (size_t j = 0, w = 0; j < n && w < sizeof(names); j++) {
				int k = snprintf(names + w, sizeof(names) - w, "%s, ", g[j].name);
				w += k > 0 ? (size_t)k : 0;
			}
			cli_error("unknown kernel channel '%.*s' (%sor all; 'pmon trace -e help' "
				  "lists them)",
				  (int)len, p, names);
			return false;
		}
		p += len;
		if (!*p)
			return true;
	}
}

/* A process traced with -p that wrote its hooks by itself: its environment
 * names the file (PMON_TRACE, read by libpmon when it loaded). */
static void note_own_hooks(pid_t pid)
{
	char path[64], env[65536];
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	size_t n = fread(env, 1, sizeof(env) - 1, f);
	fclose(f);
	env[n] = '\0';
	for (size_t i = 0; i < n; i += strlen(env + i) + 1)
		if (!strncmp(env + i, "PMON_TRACE=", 11) && env[i + 11]) {
			cli_warn("process %d writes its own hooks to '%s' (its PMON_TRACE); this "
				 "trace holds its kernel events",
				 (int)pid, env + i + 11);
			return;
		}
}

struct run_opts {
	const char *out, *channels;
	int hooks; /* -1: the default (with a command), 0 --no-hooks, 1 --hooks */
	struct pmon_target_spec spec;
	bool all;
	double duration; /* seconds; 0: none */
	char **cmd;
	/* A COMMAND, no -e and no --hooks: its kernel events (DEFAULT_CHANNELS)
	 * are recorded too and kept only when it writes no hooks. */
	bool default_kernel;
	char kernel_why[512]; /* why they could not be recorded; "" */
};

#define DEFAULT_CHANNELS "sched,syscalls"

static int trace_run(struct run_opts *o, struct pmon_target *pt, struct pmon_output *out,
		     struct pmon_output *kout);

static int run(int argc, char **argv)
{
	struct run_opts o = { .out = "pmon.trace", .hooks = -1, .spec = { .sz = sizeof(o.spec) } };
	const struct cli_option options[] = {
		CLI_OPT_TEXT(
			"Records a timeline into FILE: the COMMAND's trace hooks\n"
			"(PMON_TRACE_BEGIN/END/MARK/COUNTER of <pmon/trace.h>: TSC timestamps,\n"
			"per-thread buffers, a writer thread in the program) and, with -e, kernel\n"
			"events on the same timeline (docs/trace.md)."),
		CLI_OPT_OUTPUT(&o.out, "FILE", "the trace file (default pmon.trace, created 0600)"),
		CLI_OPT_JOIN('e', "channels", &o.channels, "CHANNELS",
			     "kernel events to record, comma-separated or -e again:\n"
			     "sched "
			     "(switches, wake-ups, off-CPU spans), syscalls,\n"
			     "faults, irq, softirq, block, kvm, or all; -e help\n"
			     "lists them and which this machine has; one missing\n"
			     "here is named and skipped"),
		CLI_OPT_JOIN('k', "kernel", &o.channels, "CHANNELS", "the same as -e"),
		CLI_OPT_SET_INT(0, "hooks", &o.hooks, 1,
				"record the COMMAND's hooks (the default with one)"),
		CLI_OPT_SET_INT(0, "no-hooks", &o.hooks, 0,
				"do not: its kernel events alone (needs -e)"),
		CLI_OPT_STRING('p', "pid", &o.spec.pid, "PIDS",
			       "running processes (1,3-5), each with all its\n"
			       "threads: their kernel events (default -e\n"
			       "sched,syscalls); not their hooks (a process writes\n"
			       "those itself, see docs/trace.md)"),
		CLI_OPT_FLAG('a', "all-cpus", &o.all,
			     "kernel events of every task on every CPU (root, or\n"
			     "perf_event_paranoid <= 0); with a COMMAND, its\n"
			     "hooks too, and until it ends"),
		CLI_OPT_CALLBACK(0, "duration", &o.duration, "SECONDS", cli_opt_duration,
				 "stop after SECONDS (a COMMAND still running then\n"
				 "gets SIGTERM); -p and -a otherwise run until Ctrl-C\n"
				 "or SIGTERM (or -p's processes end); the file is\n"
				 "left whole"),
		CLI_OPT_TEXT(
			"Exit status: the command's (128+N if killed by signal N; 0 when "
			"--duration\n"
			"ended it), or 1 when it exited 0 but no trace file came out\n"
			"(--hooks, not linked with libpmon; without -e its sched,syscalls are "
			"kept\n"
			"then, exit 3 where they cannot be recorded); with -p or -a, 0 -- also for "
			"a trace with no events "
			"in it:\n"
			"the processes did nothing traced meanwhile -- or 128+N when signal N "
			"ended\n"
			"the trace; 2 for bad input; 3 when this machine or these rights allow "
			"no\n"
			"kernel event asked for."),
		CLI_OPT_END(),
	};
	int argi = cli_parse_options("trace", run_usage, options, CLI_PARSE_STOP_AT_OPERAND, argc,
				     argv);

	if (argi <= 0)
		return -argi;
	if (o.channels && (!strcmp(o.channels, "help") || !strcmp(o.channels, "list")))
		return list_channels();
	if (o.channels && !channels_ok(o.channels))
		return CLI_USAGE;
	o.cmd = argi < argc ? argv + argi : NULL;
	bool pid = o.spec.pid != NULL;
	if (pid + o.all + (o.cmd && !o.all) != 1) {
		cli_error(pid && o.all	? "-p and -a exclude each other"
				  : pid ? "-p traces running processes: leave out the command"
					: "give a command to trace: pmon trace -o FILE -- COMMAND "
					  "(or -p PIDS, -a)");
		return CLI_USAGE;
	}
	if (o.hooks == 1 && !o.cmd) {
		/* A running process's hook buffers are drained by the writer
		 * thread inside it, which only its own start begins. */
		cli_error("--hooks needs a COMMAND: a running process writes its hooks "
			  "itself, when started with PMON_TRACE=FILE (docs/trace.md)");
		return CLI_USAGE;
	}
	o.default_kernel = o.cmd && !o.all && !o.channels && o.hooks == -1;
	if (o.hooks == -1)
		o.hooks = o.cmd != NULL;
	if (!o.hooks && !o.channels && o.cmd && !o.all) {
		cli_error("--no-hooks records nothing without -e CHANNELS");
		return CLI_USAGE;
	}
	struct pmon_target *t = pmon_target__new(&o.spec);
	if (!t) {
		cli_error("%s", pmon_errdetail());
		return CLI_USAGE;
	}
	/* The program writes its hooks, and pmon the kernel's events, into
	 * two temporaries beside the trace (include/pmon/output.h); the
	 * merged one replaces the trace only when all went well, so nothing
	 * the user named is removed or written through. A device, FIFO or
	 * descriptor is refused: the two are merged and read back. */
	struct pmon_output_opts oo = { .sz = sizeof(oo), .flags = 0 };
	struct pmon_output *out = pmon_output__open(o.out, &oo), *kout = NULL;
	if (!out || !(kout = pmon_output__open(o.out, &oo))) {
		cli_error("%s", pmon_errdetail());
		pmon_output__abandon(out);
		pmon_target__free(t);
		return CLI_USAGE;
	}
	int rc = trace_run(&o, t, out, kout);
	pmon_target__free(t);
	return rc;
}

/* The command line of what is traced, for the trace's header. */
static void describe(const struct run_opts *o, const struct pmon_target *t, char *buf, size_t len)
{
	size_t n = 0, npids;
	const pid_t *pids = pmon_target__pids(t, &npids);
	buf[0] = '\0';
	if (o->all)
		n = (size_t)snprintf(buf, len, "%s", o->cmd ? "all CPUs: " : "all CPUs");
	if (npids) {
		char comm[64] = "", path[64];
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pids[0]);
		FILE *f = fopen(path, "re");
		if (f) {
			if (!fgets(comm, sizeof(comm), f))
				comm[0] = '\0';
			comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
		n = (size_t)snprintf(buf, len, "-p %s%s%s%s", o->spec.pid, comm[0] ? " (" : "",
				     comm, comm[0] ? ")" : "");
	}
	for (char **a = o->cmd; a && *a && n < len; a++) {
		int w = snprintf(buf + n, len - n, "%s%s", a == o->cmd ? "" : " ", *a);
		if (w > 0)
			n += (size_t)w;
	}
}

/* What a recorded trace's summary says besides the file's own counts. */
struct trace_result {
	bool kernel, timed_out;
	uint64_t kev, klost;
	int write_err; /* -errno of a write that failed (a full disk): said once, exit 1 */
};

static int trace_record(struct run_opts *o, struct pmon_target *pt, const char *tpath,
			const char *kpath, struct trace_result *res);
static int trace_summary(const struct run_opts *o, const struct trace_result *res, int rc);

/* Runs the trace into @out's temporary (the hooks) and @kout's (the
 * kernel's events), merges them, and commits @out over -o's file; both are
 * freed on every path. */
static int trace_run(struct run_opts *o, struct pmon_target *pt, struct pmon_output *out,
		     struct pmon_output *kout)
{
	struct trace_result res = { 0 };
	int rc = trace_record(o, pt, pmon_output__path(out), pmon_output__path(kout), &res);
	pmon_output__abandon(kout); /* merged, renamed into @out, or dropped */
	if (rc < 0) {
		pmon_output__abandon(out);
		return -rc;
	}
	/* The program's or the kernel's trace, or nothing: an empty temporary
	 * is no trace, and the file named keeps what it held. */
	struct stat st;
	if (!fstat(pmon_output__fd(out), &st) && st.st_size == 0 &&
	    !stat(pmon_output__path(out), &st) && st.st_size == 0) {
		pmon_output__abandon(out);
		if (res.write_err) {
			cli_error("cannot write trace '%s': %s; no trace written", o->out,
				  strerror(-res.write_err));
			return CLI_FAIL;
		}
		if (o->default_kernel && o->kernel_why[0]) {
			/* Nothing to show, and the machine is why (docs/exit-codes.md). */
			cli_error("'%s' wrote no trace: it has no hooks (not linked with libpmon) "
				  "and its kernel events (-e %s) cannot be recorded here: %s",
				  o->cmd[0], DEFAULT_CHANNELS, o->kernel_why);
			return rc ? rc : CLI_UNSUPPORTED;
		}
		cli_error("'%s' wrote no trace: it is not linked with libpmon, or unset "
			  "PMON_TRACE",
			  o->cmd ? o->cmd[0] : "?");
		return rc ? rc : CLI_FAIL;
	}
	if (pmon_output__commit(out)) {
		cli_error("%s", pmon_errdetail());
		return CLI_FAIL;
	}
	return trace_summary(o, &res, rc);
}

/* The run: the command forked (held) with PMON_TRACE for its hooks, or
 * the processes of -p watched. Return: the run, or NULL (said). */
static struct pmon_run *trace_start(const struct run_opts *o, const struct pmon_target *pt,
				    const char *tpath)
{
	struct pmon_run *run;

	/* The hooks: libpmon in the command starts its trace writer when it
	 * finds PMON_TRACE (lib/trace/trace.c); without --hooks it must not
	 * find one, not even pmon's own. */
	if (o->cmd && (o->hooks ? setenv("PMON_TRACE", tpath, 1) : unsetenv("PMON_TRACE"))) {
		cli_error("cannot set PMON_TRACE: %s", strerror(errno));
		return NULL;
	}
	run = pmon_run__new(o->cmd, pt, NULL);
	if (o->cmd)
		unsetenv("PMON_TRACE");
	if (!run)
		cli_error("%s", pmon_errdetail());
	return run;
}

/* The kernel's events, into a file of their own while the program writes
 * its hooks (merged when it has ended). Return: 0 with *@k (NULL when
 * skipped or not asked for), or the negative exit status (said). */
static int open_kernel(struct run_opts *o, const struct pmon_target *pt, struct pmon_run *run,
		       const char *kpath, char *cmdline, struct pmon_trace_kernel **k)
{
	pid_t child = pmon_run__pid(run);
	struct pmon_open_opts how = { .sz = sizeof(how), .inherit = true };
	const struct pmon_target *t = pt; /* -p's processes, each with all its threads */
	struct pmon_target *own = NULL;
	size_t npids;
	const pid_t *pids = pmon_target__pids(pt, &npids);
	int err;

	*k = NULL;
	if (!o->channels && o->cmd && !o->all && !o->default_kernel)
		return 0;
	if (o->all) {
		t = own = pmon_target__new_cpus(NULL, 0);
	} else if (!npids) {
		t = own = pmon_target__new_pid(child);
		how.enable_on_exec = true;
	}
	struct pmon_trace_kernel_opts ko = {
		.sz = sizeof(ko),
		.groups = o->default_kernel ? DEFAULT_CHANNELS : o->channels,
		.pid = npids	    ? pids[0]
			: child > 0 ? child
				    : 0,
		.command = cmdline,
		.open = &how,
	};
	err = t ? pmon_trace_kernel__open(t, kpath, &ko, k) : -errno;
	pmon_target__free(own);
	bool missing = err == -EACCES || err == -EPERM || err == -ENOENT;
	if (err && missing && o->default_kernel) {
		/* Said only if the command writes no hooks either. */
		snprintf(o->kernel_why, sizeof(o->kernel_why), "%s", pmon_errdetail());
		return 0;
	}
	if (err && missing && o->cmd && o->hooks && !o->all) {
		/* Named and skipped, not fatal (issue #18): the command's hooks
		 * are still worth a trace. */
		cli_warn("kernel events skipped: %s; the trace holds the hooks only",
			 pmon_errdetail());
		*k = NULL;
		return 0;
	}
	if (err && pmon_run__signal(run)) /* Ctrl-C ended the command first: no error */
		return -cli_run_interrupted(run);
	if (err) {
		/* a full disk or another I/O failure is a runtime one (1), not
		 * "not possible here" (3), and names the trace, not the
		 * temporary it was written to */
		bool io = err == -ENOSPC || err == -EDQUOT || err == -EIO || err == -EFBIG;
		if (io)
			cli_error("cannot write '%s': %s", o->out, strerror(-err));
		else if (o->all && missing)
			cli_error("cannot trace all CPUs: %s (every CPU's events need root, "
				  "CAP_PERFMON or perf_event_paranoid <= 0)",
				  pmon_errdetail());
		else
			cli_error("cannot record kernel events: %s", pmon_errdetail());
		return err == -EINVAL || err == -ESRCH ? -CLI_USAGE
			: io			       ? -CLI_FAIL
						       : -CLI_UNSUPPORTED;
	}
	if (*k && *pmon_trace_kernel__skipped(*k) && !o->default_kernel)
		cli_warn("kernel events skipped: %s", pmon_trace_kernel__skipped(*k));
	return 0;
}

struct trace_tick {
	const struct run_opts *o;
	struct pmon_trace_kernel *k;
	double t0;
	bool timed_out;
	int *write_err; /* the first write failure, said at the end */
};

enum { TRACE_TIMED_OUT = 1, TRACE_DRAIN_FAILED = 2 };

/* Every 20 ms: the kernel's rings drained (every-CPU wake-ups fill fast),
 * --duration watched. */
static int trace_tick(void *ctx, double at, bool last)
{
	struct trace_tick *tt = ctx;

	(void)at;
	long n = tt->k ? pmon_trace_kernel__drain(tt->k) : 0;
	if (n < 0) {
		*tt->write_err = (int)n;
		return TRACE_DRAIN_FAILED;
	}
	if (!last && tt->o->duration && pmon_monotonic_s() - tt->t0 >= tt->o->duration) {
		/* the command is stopped: SIGTERM, then SIGKILL */
		tt->timed_out = true;
		return TRACE_TIMED_OUT;
	}
	return 0;
}

/* Whether the program wrote its hooks into @tpath. */
static bool has_hooks(const char *tpath)
{
	struct stat st;
	return !stat(tpath, &st) && st.st_size > 0;
}

/* Records into @tpath (the hooks, written by the program) and @kpath (the
 * kernel's events), and merges the second into the first. Return: the exit
 * status to give, or its negative where nothing may be kept. */
static int trace_record(struct run_opts *o, struct pmon_target *pt, const char *tpath,
			const char *kpath, struct trace_result *res)
{
	char cmdline[256];
	struct pmon_trace_kernel *k = NULL;
	struct pmon_run *run = trace_start(o, pt, tpath);
	int err;

	if (!run)
		return -CLI_FAIL;
	describe(o, pt, cmdline, sizeof(cmdline));
	if ((err = open_kernel(o, pt, run, kpath, cmdline, &k))) {
		pmon_run__free(run);
		return err;
	}
	size_t npids;
	const pid_t *pids = pmon_target__pids(pt, &npids);
	for (size_t i = 0; i < npids; i++)
		note_own_hooks(pids[i]);
	struct trace_tick tt = { o, k, pmon_monotonic_s(), false, &res->write_err };
	char why[512] = "";
	err = pmon_run__start(run, NULL);
	if (err) {
		snprintf(why, sizeof(why), "%s", pmon_errdetail()); /* said after the merge */
	} else {
		/* A signal is passed on to the command: most end by it, in a
		 * second; then, and at --duration's end, SIGTERM and SIGKILL. */
		pmon_run__loop(run, 0.02, trace_tick, &tt);
	}
	uint64_t kev = 0, klost = 0;
	bool kept = k && (!o->default_kernel || !has_hooks(tpath));
	if (k) {
		const char *skipped = pmon_trace_kernel__skipped(k);
		if (kept && o->default_kernel)
			o->hooks = 0; /* a trace of its kernel events alone */
		if (kept && o->default_kernel)
			fprintf(stderr,
				"pmon trace: '%s' has no hooks (not linked with libpmon): recorded "
				"its "
				"kernel events, -e %s%s%s (-e CHANNELS to choose)\n",
				o->cmd[0], DEFAULT_CHANNELS, *skipped ? "; skipped: " : "",
				skipped);
		/* A write that failed (a full disk) is said once, at the end,
		 * with what the file keeps; the steps after it fail alike. */
		int kerr = pmon_trace_kernel__close(k, &kev, &klost);
		if (kerr && !res->write_err)
			res->write_err = kerr;
		int merr = !err && kept ? pmon_trace_merge(tpath, kpath) : 0;
		if (merr) {
			if (!res->write_err)
				res->write_err = merr;
			kept = false; /* not in the file: lost, not recorded */
			klost += kev;
			kev = 0;
		}
	}
	/* A command stopped because a write failed ends pmon with 1 (the
	 * write's failure), not with the signal that stopped it. */
	int rc = tt.timed_out || res->write_err ? CLI_OK : pmon_run__exit_code(run);
	pmon_run__free(run);
	if (err) {
		cli_error("%s", why);
		return -127;
	}
	res->kernel = kept;
	res->kev = kev;
	res->klost = klost;
	res->timed_out = tt.timed_out;
	return rc;
}

static int trace_summary(const struct run_opts *o, const struct trace_result *res, int rc)
{
	struct pmon_trace_reader *r = pmon_trace_reader__open(o->out);
	if (!r) {
		cli_error("%s", pmon_errdetail());
		return rc ? rc : CLI_FAIL;
	}
	const struct pmon_trace_info *in = pmon_trace_reader__info(r);
	if (res->write_err) {
		/* One line (docs/exit-codes.md): the failure and what is kept:
		 * the kernel's events not written are lost, and the program's
		 * hooks, when it wrote any, may be cut short too. */
		size_t nev = pmon_trace_reader__nevents(r);
		bool hooks = o->hooks && (nev > in->kernel_events || in->dropped);
		char hk[160] = "";
		if (hooks)
			snprintf(hk, sizeof(hk), ", %llu hooks dropped%s",
				 (unsigned long long)in->dropped,
				 in->complete ? "" : " (and the program's own trace cut short)");
		cli_error("cannot write trace '%s': %s; it keeps %zu events, %llu kernel events "
			  "lost%s",
			  o->out, strerror(-res->write_err), nev, (unsigned long long)res->klost,
			  hk);
		pmon_trace_reader__free(r);
		return CLI_FAIL;
	}
	fprintf(stderr, "pmon trace: %zu events on %zu channels written to %s (%llu dropped%s)\n",
		pmon_trace_reader__nevents(r), pmon_trace_reader__nchannels(r), o->out,
		(unsigned long long)in->dropped,
		!o->hooks || in->complete ? ""
					  : " before the cut; the program did not stop the trace: "
					    "what it hooked after that is not in the file");
	if (res->kernel)
		fprintf(stderr,
			"pmon trace: %llu of them kernel events (%llu lost by the kernel)\n",
			(unsigned long long)res->kev, (unsigned long long)res->klost);
	if (res->timed_out)
		fprintf(stderr, "pmon trace: stopped after --duration %g s%s\n", o->duration,
			o->cmd ? "; the command was ended" : "");
	pmon_trace_reader__free(r);
	return rc;
}

/* Nanoseconds as the table prints them: three significant figures and a unit. */
static const char *fmt_ns(char *buf, size_t len, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.3g us", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.3g ms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.3g s", (double)ns / 1e9);
	return buf;
}

static int parse_ms(const char *s, const char *what, uint64_t *ns)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || v < 0 || v > 1e12) {
		cli_error("%s '%s' is not a number of milliseconds", what, s);
		return -1;
	}
	*ns = (uint64_t)(v * 1e6);
	return 0;
}

/* --from MS, --to MS: milliseconds from the trace's start, into ns. */
static int opt_ms(const struct cli_option *opt, const char *s)
{
	char what[16];
	snprintf(what, sizeof(what), "--%s", opt->long_name);
	return parse_ms(s, what, opt->value) ? CLI_USAGE : CLI_OK;
}

/* The table's time-base line: which base, why, and the alignment measured
 * between the kernel's stamps and the hooks' (docs/trace.md "Time"). */
static void print_time_base(FILE *out, const struct pmon_trace_info *in)
{
	char align[128];

	if (in->kernel_align_ns == UINT32_MAX)
		snprintf(align, sizeof(align), "alignment with the kernel's events not measured");
	else
		snprintf(align, sizeof(align),
			 "alignment with the kernel's events %u ns (measured on %s)",
			 in->kernel_align_ns, in->align_measured_with);
	if (in->time_base == PMON_TIMEBASE_PERF)
		fprintf(out,
			"# time base: the perf clock, the TSC converted through the perf mmap page "
			"(time_mult %u, time_shift %u); %s\n",
			in->time_mult, (unsigned)in->time_shift, align);
	else
		fprintf(out, "# time base: calibrated CLOCK_MONOTONIC%s%s%s%s%s; %s\n",
			in->time_base_why[0] ? " (not the perf clock: " : "", in->time_base_why,
			in->clocksource[0] ? "; clocksource " : "", in->clocksource,
			in->time_base_why[0] ? ")" : "", align);
}

/* --format ticks: the logic-analyzer view, a row per channel. */
static int report_ticks(struct pmon_trace_reader *r, FILE *out, uint64_t from, uint64_t to,
			unsigned long width)
{
	size_t nch = pmon_trace_reader__nchannels(r);
	int rc = CLI_OK;

	if (!width) {
		struct winsize ws;
		width = isatty(fileno(out)) && !ioctl(fileno(out), TIOCGWINSZ, &ws) && ws.ws_col
			? ws.ws_col
			: 80;
	}
	size_t label = 16, cells = width > label + 10 ? width - label - 1 : 10;
	char *row = malloc(cells + 1), a[32], b[32];
	if (!row) {
		rc = CLI_FAIL;
	} else {
		fprintf(out, "# %-*s %s .. %s, %zu columns\n", (int)label - 2, "window",
			fmt_ns(a, sizeof(a), from), fmt_ns(b, sizeof(b), to), cells);
		for (uint32_t ch = 1; ch <= nch; ch++) {
			char name[256];
			const char *c = pmon_trace_reader__channel(r, ch);
			pmon_trace_ticks_row(r, ch, from, to, row, cells);
			fprintf(out, "%-*.*s %s\n", (int)label, (int)label,
				c ? cli_printable(c, name, sizeof(name)) : "", row);
		}
		free(row);
	}
	return rc;
}

/* --format json: the table as JSON. */
static int report_json(struct pmon_trace_reader *r, FILE *out,
		       const struct pmon_trace_chan_stats *st, long n)
{
	const struct pmon_trace_info *info = pmon_trace_reader__info(r);
	size_t nev = pmon_trace_reader__nevents(r);
	int rc = CLI_OK;

	json_t *rows = json_array();
	for (long i = 0; i < n; i++)
		json_array_append_new(
			rows,
			json_pack("{s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
				  "s:I, "
				  "s:I, s:I, s:I, s:I}",
				  "channel", pmon_trace_reader__channel(r, st[i].channel) ?: "?",
				  "kernel", pmon_trace_reader__channel_kernel(r, st[i].channel),
				  "spans", (json_int_t)st[i].spans, "min_ns",
				  (json_int_t)st[i].min_ns, "median_ns",
				  (json_int_t)st[i].median_ns, "p99_ns", (json_int_t)st[i].p99_ns,
				  "max_ns", (json_int_t)st[i].max_ns, "total_ns",
				  (json_int_t)st[i].total_ns, "marks", (json_int_t)st[i].marks,
				  "counters", (json_int_t)st[i].counters, "counter_min",
				  (json_int_t)st[i].counter_min, "counter_max",
				  (json_int_t)st[i].counter_max, "counter_last",
				  (json_int_t)st[i].counter_last, "unmatched",
				  (json_int_t)st[i].unmatched));
	json_t *doc = json_pack(
		"{s:s, s:i, s:I, s:I, s:b, s:I, s:I, s:I, s:I, s:I, s:s, s:s, "
		"s:s, s:s, s:o, s:o}",
		"command", info->command, "pid", (int)info->pid, "ticks_per_sec",
		(json_int_t)info->ticks_per_sec, "align_err_ns", (json_int_t)info->align_err_ns,
		"complete", info->complete, "dropped", (json_int_t)info->dropped, "events",
		(json_int_t)nev, "kernel_events", (json_int_t)info->kernel_events, "kernel_lost",
		(json_int_t)info->kernel_lost, "damaged_chunks", (json_int_t)info->torn_chunks,
		"time_base", info->time_base == PMON_TIMEBASE_PERF ? "perf" : "mono",
		"time_base_why", info->time_base_why, "clocksource", info->clocksource,
		"align_measured_with", info->align_measured_with, "kernel_align_ns",
		info->kernel_align_ns == UINT32_MAX
			? json_null()
			: json_integer((json_int_t)info->kernel_align_ns),
		"channels", rows);
	if (!doc || json_dumpf(doc, out, JSON_INDENT(2)) || fputc('\n', out) == EOF)
		rc = CLI_FAIL;
	json_decref(doc);
	return rc;
}

/* --format table: per channel, spans with min, median, p99, max, total;
 * instants; counters. */
static void report_table(struct pmon_trace_reader *r, FILE *out,
			 const struct pmon_trace_chan_stats *st, long n)
{
	const struct pmon_trace_info *info = pmon_trace_reader__info(r);
	size_t nch = pmon_trace_reader__nchannels(r), nev = pmon_trace_reader__nevents(r);
	char t[6][32], cmd[512], name[256];
	fprintf(out,
		"# pmon trace: '%s' pid %d, %zu events, %zu channels; %.0f MHz "
		"ticks, "
		"aligned with CLOCK_MONOTONIC to +-%u ns; %llu dropped\n",
		cli_printable(info->command, cmd, sizeof(cmd)), (int)info->pid, nev, nch,
		(double)info->ticks_per_sec / 1e6, info->align_err_ns,
		(unsigned long long)info->dropped);
	print_time_base(out, info);
	/* The name column as wide as the longest name (a kernel channel such
	 * as sys_clock_nanosleep has 19), so the numbers stay in columns. */
	int w = 18;
	for (long i = 0; i < n; i++) {
		const char *c = pmon_trace_reader__channel(r, st[i].channel);
		int len = (int)strlen(c ? cli_printable(c, name, sizeof(name)) : "?");
		if (len > w)
			w = len;
	}
	fprintf(out, "# %-*s %9s %10s %10s %10s %10s %10s %8s %8s\n", w, "channel", "spans", "min",
		"median", "p99", "max", "total", "marks", "counters");
	bool kernel_seen = false;
	for (long i = 0; i < n; i++) {
		const struct pmon_trace_chan_stats *s = &st[i];
		/* The kernel's channels come after the hooks'. */
		if (!kernel_seen && pmon_trace_reader__channel_kernel(r, s->channel)) {
			kernel_seen = true;
			fprintf(out, "# kernel events: %llu (%llu lost by the kernel)\n",
				(unsigned long long)info->kernel_events,
				(unsigned long long)info->kernel_lost);
		}
		fprintf(out, "  %-*s %9llu %10s %10s %10s %10s %10s %8llu %8llu\n", w,
			cli_printable(pmon_trace_reader__channel(r, s->channel), name, sizeof(name))
				?: "?",
			(unsigned long long)s->spans, s->spans ? fmt_ns(t[0], 32, s->min_ns) : "-",
			s->spans ? fmt_ns(t[1], 32, s->median_ns) : "-",
			s->spans ? fmt_ns(t[2], 32, s->p99_ns) : "-",
			s->spans ? fmt_ns(t[3], 32, s->max_ns) : "-",
			s->spans ? fmt_ns(t[4], 32, s->total_ns) : "-",
			(unsigned long long)s->marks, (unsigned long long)s->counters);
		if (s->unmatched)
			fprintf(out, "  %-*s %llu begin/end not matched\n", w, "",
				(unsigned long long)s->unmatched);
	}
}

/* An export the library gave up on with @err: one line, what and why. A
 * write error names the file and the write's own reason (ENOSPC: "No space
 * left on device"), once: the final close of standard output adds nothing. */
static void export_failed(FILE *out, const char *outpath, const char *what, int err)
{
	if (ferror(out))
		cli_output_error(out, outpath, -err);
	else
		cli_error("cannot write the %s: %s", what, strerror(-err));
}

/* The table or its JSON, over the window [@from, @to). */
static int report_summary(struct pmon_trace_reader *r, FILE *out, bool json, uint64_t from,
			  uint64_t to)
{
	size_t nch = pmon_trace_reader__nchannels(r);
	struct pmon_trace_chan_stats *st = calloc(nch + 1, sizeof(*st));
	long n = st ? pmon_trace_summarize(r, from, to, st) : -ENOMEM;
	int rc = CLI_OK;

	if (n < 0) {
		cli_error("out of memory");
		rc = CLI_FAIL;
	} else if (json) {
		rc = report_json(r, out, st, n);
	} else {
		report_table(r, out, st, n);
	}
	free(st);
	return rc;
}

static int report(int argc, char **argv)
{
	const char *in = NULL, *format = NULL, *outpath = NULL;
	uint64_t from = 0, to = UINT64_MAX;
	unsigned long width = 0;
	const struct cli_option options[] = {
		CLI_OPT_TEXT("Reads a trace of 'pmon trace' (default pmon.trace)."),
		CLI_OPT_STRING('i', "input", &in, "FILE", "the trace (or give it as FILE)"),
		CLI_OPT_STRING('f', "format", &format, "FORMAT",
			       "table: per channel, spans with min, median, p99, max,\n"
			       "total; instants; counters (the default)\n"
			       "ticks: the logic-analyzer view, a row per channel, '#'\n"
			       "while a span is open, '|' at an instant or counter value\n"
			       "json: the table as JSON\n"
			       "chrome-json: Chrome trace-event JSON (Perfetto,\n"
			       "chrome://tracing, speedscope open it); a warning\n"
			       "past 100 MB\n"
			       "perfetto: Perfetto's protobuf trace\n"
			       "(ui.perfetto.dev), any size\n"
			       "svg, png: a timeline drawn with cairo, a lane per thread,\n"
			       "spans, instants, the kernel's events below the hooks', a\n"
			       "time axis (the default for -o NAME.svg or NAME.png)"),
		CLI_OPT_CALLBACK(0, "from", &from, "MS", opt_ms,
				 "the window's start, in ms from the trace's start"),
		CLI_OPT_CALLBACK(0, "to", &to, "MS", opt_ms, "the window's end"),
		CLI_OPT_UINT(0, "width", &width, "N", 10000,
			     "columns of the ticks view (default: the terminal's),\n"
			     "pixels of the svg or png (default 1200)"),
		CLI_OPT_OUTPUT(&outpath, "OUT", "write there, not to standard output"),
		CLI_OPT_END(),
	};
	int argi = cli_parse_options("trace report", report_usage, options, 0, argc, argv);

	if (argi <= 0)
		return -argi;
	if (!in && argi < argc)
		in = argv[argi++];
	if (!cli_no_operands_at("trace report", argi, argc, argv))
		return CLI_USAGE;
	if (!in)
		in = "pmon.trace";
	if (cli_output_is_input(outpath, in, "-o"))
		return CLI_USAGE;
	/* A picture's format from -o's extension unless --format says (as pmon plot) */
	const char *ext = outpath ? strrchr(outpath, '.') : NULL;
	const char *by_ext = !ext	   ? NULL
		: !strcasecmp(ext, ".svg") ? "svg"
		: !strcasecmp(ext, ".png") ? "png"
					   : NULL;
	if (!format)
		format = by_ext ? by_ext : "table";
	if (strcmp(format, "table") && strcmp(format, "ticks") && strcmp(format, "json") &&
	    strcmp(format, "chrome-json") && strcmp(format, "perfetto") && strcmp(format, "svg") &&
	    strcmp(format, "png")) {
		cli_error("unknown format '%s' (table, ticks, json, chrome-json, perfetto, svg or "
			  "png)",
			  format);
		return CLI_USAGE;
	}
	if (by_ext && (!strcmp(format, "svg") || !strcmp(format, "png")) &&
	    strcmp(format, by_ext)) {
		cli_error("--format %s into '%s': name the picture .%s", format, outpath, format);
		return CLI_USAGE;
	}
	if (to <= from) {
		cli_error("--to must be after --from");
		return CLI_USAGE;
	}
	/* Drawn with cairo, in the UI module (cli/ui.c): pmon links no graphics. */
	if (!strcmp(format, "svg") || !strcmp(format, "png"))
		return trace_draw(in, outpath, !strcmp(format, "png"), from, to, (unsigned)width);
	struct pmon_trace_reader *r = pmon_trace_reader__open(in);
	if (!r) {
		int e = errno;
		cli_lib_error(-e);
		/* missing or malformed: bad input, as pmon report; out of memory: a
		 * runtime failure (docs/exit-codes.md) */
		return e == ENOMEM ? CLI_FAIL : CLI_USAGE;
	}
	const struct pmon_trace_info *info = pmon_trace_reader__info(r);
	if (info->torn_chunks)
		cli_warn("'%s': %llu damaged chunks (%llu bytes) skipped; the rest is reported", in,
			 (unsigned long long)info->torn_chunks,
			 (unsigned long long)info->torn_bytes);
	FILE *out = cli_open_output(outpath);
	if (!out) {
		pmon_trace_reader__free(r);
		return CLI_USAGE;
	}
	int rc = CLI_OK, err;
	size_t nev = pmon_trace_reader__nevents(r);
	uint64_t last = nev ? pmon_trace_reader__event(r, nev - 1)->ns + 1 : 1;
	if (to == UINT64_MAX)
		to = last;
	if (!strcmp(format, "perfetto")) {
		if (!outpath && isatty(STDOUT_FILENO)) {
			cli_error("the Perfetto trace is binary: give -o FILE");
			rc = CLI_USAGE;
		} else if ((err = pmon_trace_write_perfetto(r, out))) {
			export_failed(out, outpath, "Perfetto trace", err);
			rc = CLI_FAIL;
		}
	} else if (!strcmp(format, "chrome-json")) {
		/* Chrome JSON is ~100 bytes an event and loads whole in a viewer. */
		if (nev > 1000000)
			cli_warn("%zu events make a Chrome JSON file of over 100 MB; --format "
				 "perfetto streams any size",
				 nev);
		if ((err = pmon_trace_write_chrome(r, out))) {
			export_failed(out, outpath, "Chrome JSON", err);
			rc = CLI_FAIL;
		}
	} else if (!strcmp(format, "ticks")) {
		rc = report_ticks(r, out, from, to, width);
	} else {
		rc = report_summary(r, out, !strcmp(format, "json"), from, to);
	}
	if (rc != CLI_OK && out != stdout)
		cli_abandon_output(out); /* a half export never replaces the file */
	else if (out != stdout && cli_close_output(out, outpath) != CLI_OK)
		rc = CLI_FAIL;
	pmon_trace_reader__free(r);
	return rc;
}

int cmd_trace(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "report"))
		return report(argc - 1, argv + 1);
	return run(argc, argv);
}
