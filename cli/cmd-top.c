// SPDX-License-Identifier: MIT
/*
 * pmon top: live event rates, the seeds' PMON/MTPM "events per second" and
 * P5MON/PTACH "oscilloscope", on a terminal (ncurses) or as plain lines
 * (--batch, or when standard output is not a terminal), logging every
 * interval to a file as it goes (MTPMPlus). This file parses the command
 * line, builds the target, starts the run and speaks (messages, exit
 * codes); the screen and the live view are lib/top's (top/top.h), the
 * counting libpmon's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "top/top.h"
#include <pmon/pmon.h>

/* What the command line gave, and the run; the view is lib/top's. */
struct top {
	struct {
		char text[128]; /* as the user named it */
	} ev[TOP_MAXEV];
	size_t nev;
	unsigned long interval_ms, count;
	bool batch, per_proc, functions, all;
	struct pmon_target *target; /* -p/-C checked once; then the command or all CPUs */
	struct pmon_open_opts how; /* inherit; enable_on_exec until the command runs */
	size_t npids, ncpus;
	char **cmd;
	struct pmon_run *run; /* the command, or what -p watches */
	FILE *log;
	struct top_view *view;
	const char *status; /* the view's: why the counters did not open */
};

/* The view on the target, the rows as given. */
static struct top_view *view_new(struct top *t)
{
	const char *events[TOP_MAXEV];
	struct top_opts o = {
		.events = events,
		.nev = t->nev,
		.title = "pmon top",
		.target = t->target,
		.how = &t->how,
		.run = t->run,
		.what = t->cmd	   ? t->cmd[0]
			: t->npids ? "processes"
			: t->ncpus ? "CPUs"
				   : "all CPUs",
		.ncpus = t->ncpus,
		.interval_ms = t->interval_ms,
		.count = t->count,
		.batch = t->batch,
		.per_proc = t->per_proc,
		.functions = t->functions,
		.out = stdout,
		.output_failed = cli_output_failed,
	};

	for (size_t i = 0; i < t->nev; i++)
		events[i] = t->ev[i].text;
	return top_view__new(&o);
}

/* Fork the command (held), open the counters and the log, and start. */
static int top_start(struct top *t, const char *logpath)
{
	int rc = CLI_OK;

	t->run = pmon_run__new(t->cmd, t->target, NULL);
	if (!t->run) {
		cli_error("%s", pmon_errdetail());
		return CLI_FAIL;
	}
	struct pmon_target *who = NULL;
	if (t->cmd) {
		who = pmon_target__new_pid(pmon_run__pid(t->run));
		t->how.enable_on_exec = true;
	} else if (!t->npids && !t->ncpus) {
		who = pmon_target__new_cpus(NULL, 0); /* all CPUs (-C: those already) */
	}
	if (who) {
		pmon_target__free(t->target);
		t->target = who;
	} else if (t->cmd || (!t->npids && !t->ncpus)) {
		cli_error("%s", strerror(errno));
		return CLI_FAIL;
	}
	t->view = view_new(t);
	if (!t->view)
		return CLI_FAIL;
	int oerr = top_view__open(t->view);
	if (oerr) {
		t->status = top_view__status(t->view);
		cli_error("%s%s", t->status,
			  pmon_target__system_wide(t->target) && strstr(t->status, "paranoid")
				  ? " (all CPUs need root; try -p PID or -- command)"
				  : "");
		/* Bad names and vanished targets are input errors; refusals are not. */
		rc = oerr == -PMON_ERRNO__PMU_MISSING ? cli_event_error_code(oerr)
			: oerr == -PMON_ERRNO__EVENT_UNKNOWN || oerr == -PMON_ERRNO__EVENT_SYNTAX ||
				oerr == -ESRCH
			? CLI_USAGE
			: CLI_UNSUPPORTED;
		return rc;
	}
	if (logpath) {
		size_t n = strlen(logpath);
		/* a log, followed while written: in place */
		t->log = cli_open_output_as(logpath, PMON_OUTPUT_STREAM | PMON_OUTPUT_IN_PLACE);
		if (!t->log) {
			return CLI_USAGE;
		}
		top_view__set_log(t->view, t->log, logpath,
				  n > 5 && !strcmp(logpath + n - 5, ".json"));
	}
	/* The per-process sampler before the command runs: a process it forks
	 * before a sampler opened on it later would not inherit it (t1600 lost
	 * a forking command's child in a third of the runs). */
	top_view__start(t->view);
	if (t->cmd && pmon_run__start(t->run, top_view__monitor(t->view))) {
		cli_error("%s", pmon_errdetail());
		return pmon_run__exit_code(t->run) == 127 ? 127 : CLI_FAIL;
	}
	return rc;
}

/* The screen (or the batch lines) every interval until the run ends. */
static int top_loop(struct top *t)
{
	/* Events added later open on the running command at once. */
	t->how.enable_on_exec = false;
	int err = top_view__run(t->view);
	/* -n, q, or the output failed: the command is stopped (SIGTERM, then
	 * SIGKILL). One that ended by itself passes its status on, as stat. */
	pmon_run__stop(t->run);
	if (err)
		return CLI_FAIL;
	if (pmon_run__signal(t->run))
		return 128 + pmon_run__signal(t->run);
	return pmon_run__exit_code(t->run);
}

int cmd_top(int argc, char **argv)
{
	struct top *t = calloc(1, sizeof(*t));
	const char *events = NULL, *logpath = NULL;
	struct pmon_target_spec spec = { .sz = sizeof(spec) };
	int rc = CLI_OK;

	if (!t)
		return CLI_FAIL;
	t->interval_ms = 1000;
	const struct cli_option options[] = {
		CLI_OPT_TEXT(
			"Live event rates with min, max and a trace; all CPUs by default (root "
			"or\n"
			"perf_event_paranoid <= 0). Keys: h."),
		CLI_OPT_JOIN('e', "event", &events, "EVENTS",
			     "the events, comma-separated or -e again (default: cycles,\n"
			     "instructions, cache and branch misses where a PMU\n"
			     "exists; else software events)"),
		CLI_OPT_UINT_MIN('I', "interval", &t->interval_ms, "MS", 10, 3600000,
				 "at least 10 ms", "update every MS milliseconds (default 1000)"),
		CLI_OPT_UINT_MIN('n', "count", &t->count, "COUNT", 1, 100000000,
				 "at least 1 interval", "stop after COUNT intervals"),
		CLI_OPT_STRING('p', "pid", &spec.pid, "PID", "these processes only"),
		CLI_OPT_STRING('C', "cpu", &spec.cpu_list, "CPUS", "these CPUs only (0-3,5)"),
		CLI_OPT_OUTPUT(&logpath, "LOG",
			       "also write every interval as CSV (pmon plot reads it;\n"
			       "a name ending in .json gives JSON lines)"),
		CLI_OPT_FLAG('b', "batch", &t->batch,
			     "plain lines (also when the output is not a terminal)"),
		CLI_OPT_FLAG('P', "per-process", &t->per_proc,
			     "also show the processes with most of the selected event,\n"
			     "from sampling it at ~250 Hz per CPU (key t)"),
		CLI_OPT_FLAG('f', "functions", &t->functions,
			     "the hottest functions instead (perf top's view, key f),\n"
			     "from sampling the selected event at ~1000 Hz per CPU"),
		CLI_OPT_FLAG('a', "all-cpus", &t->all, "all CPUs (the default without a target)"),
		CLI_OPT_END(),
	};
	int argi = cli_parse_options(
		"top",
		"usage: pmon top [-e EVENTS] [-I MS] [-n COUNT] [-p PID | -C CPUS | -- command]\n"
		"                [-o LOG] [--batch] [-P] [-f] [-a]",
		options, CLI_PARSE_STOP_AT_OPERAND, argc, argv);

	if (argi <= 0) {
		rc = -argi;
		goto out;
	}
	if (argi < argc)
		t->cmd = argv + argi;
	t->how = (struct pmon_open_opts){ .sz = sizeof(t->how), .inherit = true };
	if (!(t->target = pmon_target__new(&spec))) {
		cli_error("%s", pmon_errdetail());
		rc = CLI_USAGE;
		goto out;
	}
	pmon_target__pids(t->target, &t->npids);
	pmon_target__cpus(t->target, &t->ncpus);
	if ((t->cmd != NULL) + (t->npids > 0) + (t->ncpus > 0) + t->all > 1) {
		cli_error("give one target: -a, -p, -C or a command");
		rc = CLI_USAGE;
		goto out;
	}
	if (!isatty(STDOUT_FILENO))
		t->batch = true;
	/* The log's name is checked before anything runs (issue #14.7). */
	if (logpath &&
	    !cli_check_output_as(logpath, "-o", PMON_OUTPUT_STREAM | PMON_OUTPUT_IN_PLACE)) {
		rc = CLI_USAGE;
		goto out;
	}

	/* Events: the user's, or a default set for what can count here. */
	const char *def = pmon_kernel_has_core_pmu(NULL)
		? "cycles,instructions,cache-misses,branch-misses"
		: "cpu-clock,context-switches,cpu-migrations,page-faults";
	/* Split as stat does (pmon_evlist__next(): groups and PMU terms keep
	 * their commas, "a,,b" is refused). */
	const char *pos = NULL;
	int more = 0;
	while (!(events && !*events) && t->nev < TOP_MAXEV &&
	       (more = pmon_evlist__next(events ? events : def, &pos, t->ev[t->nev].text,
					 sizeof(t->ev[0].text))) > 0)
		if (t->ev[t->nev++].text[0] == '{') {
			cli_error("-e '%s': top shows each event on its own row: give "
				  "them without {}",
				  t->ev[t->nev - 1].text);
			rc = CLI_USAGE;
			goto out;
		}
	if (more < 0) {
		cli_error("-e: %s", pmon_errdetail());
		rc = CLI_USAGE;
		goto out;
	}
	if (!t->nev) {
		cli_error("-e '%s': no event named", events ? events : "");
		rc = CLI_USAGE;
		goto out;
	}

	rc = top_start(t, logpath);
	if (rc == CLI_OK)
		rc = top_loop(t);
out:
	if (t->log && cli_close_output(t->log, logpath) != CLI_OK)
		rc = CLI_FAIL;
	pmon_run__free(t->run);
	top_view__free(t->view);
	pmon_target__free(t->target);
	free(t);
	return rc;
}
