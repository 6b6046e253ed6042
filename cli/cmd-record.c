// SPDX-License-Identifier: MIT
/*
 * pmon record: event-based sampling (the seeds' VTune EBS, "Sample After"
 * N events with -c, or a rate with -F) of a command, processes or the whole
 * system, into a chunked recording that survives a crash.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include <pmon/pmon.h>

static volatile sig_atomic_t got_sig;
static volatile pid_t child;

static void on_sig(int s)
{
	got_sig = s;
	if (child > 0)
		kill(child, s);
}

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
	struct pmon_child ch = { .pid = -1, .go_fd = -1, .err_fd = -1 };
	struct pmon_target t = { .sz = sizeof(t), .inherit = true, .enable_on_exec = true };
	size_t nev = pmon_evlist__count(ev);
	struct pmon_count n[16] = { 0 };
	struct timespec t0, t1;
	int status = 0, err;

	if (pmon_child__fork(cmd, &ch)) {
		cli_error("cannot run '%s': %s", cmd[0], pmon_errdetail());
		return CLI_FAIL;
	}
	t.pid = ch.pid;
	struct pmon_counters *c = pmon_counters__open(ev, &t);
	if (!c) {
		cli_error("--calibrate: %s", pmon_errdetail());
		kill(ch.pid, SIGKILL);
		pmon_child__wait(&ch, NULL, NULL);
		return CLI_UNSUPPORTED;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	child = ch.pid;
	err = pmon_child__start(&ch);
	pmon_child__wait(&ch, &status, NULL);
	child = 0;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	int rerr = pmon_counters__read(c, n);
	pmon_counters__close(c);
	if (err) {
		cli_error("cannot run '%s': %s", cmd[0], strerror(-err));
		return 127;
	}
	if (got_sig)
		return 128 + got_sig;
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

/* Append @spec to the comma-separated @buf. Return: false when it does not fit. */
static bool append_event(char *buf, size_t len, const char *spec)
{
	size_t used = strlen(buf);
	int w = snprintf(buf + used, len - used, "%s%s", used ? "," : "", spec);

	return w > 0 && (size_t)w < len - used;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pmon record [-e EVENT] [-c N | -F HZ | --calibrate[=HZ]]\n"
		"                   [-g | --call-graph fp|dwarf[,SIZE]] [-o FILE]\n"
		"                   (-- command | -p PID | -a)\n\n"
		"  -e EVENTS  the events to sample, comma-separated or -e again (default\n"
		"             cpu-clock; cycles where a PMU exists); report shows each\n"
		"  -c N       a sample every N events (the seeds' \"Sample After\")\n"
		"  -F HZ      about HZ samples per second (default 1000, VTune's rule of thumb)\n"
		"  --calibrate[=HZ]  count the command once, then record it with, for each\n"
		"             event, the -c N that gives about HZ samples per second of it\n"
		"             (default 1000)\n"
		"  -g, --call-graph fp  call stacks through frame pointers (the kernel's)\n"
		"  --call-graph dwarf[,SIZE]  for code built without frame pointers: SIZE\n"
		"             bytes of user stack (default 8192) and the registers with each\n"
		"             sample, unwound at report time with the DWARF CFI (elfutils)\n"
		"  -o FILE    the recording (default pmon.data; format: "
		"docs/pmon-data-format.md)\n");
}

int cmd_record(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "event", required_argument, NULL, 'e' },
		{ "count", required_argument, NULL, 'c' },
		{ "freq", required_argument, NULL, 'F' },
		{ "call-graph", required_argument, NULL, 'G' },
		{ "output", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, 'p' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "calibrate", optional_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct pmon_sample_opts so = { .sz = sizeof(so) };
	struct pmon_target t = { .sz = sizeof(t), .pid = -1, .inherit = true };
	const char *event = NULL, *out = "pmon.data";
	char events[1024] = "";
	unsigned long ul;
	bool all = false;
	unsigned long calib = 0;
	pid_t pid = 0;
	int c, rc = CLI_OK, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+e:c:F:go:p:ah", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			/* -e a -e b is -e a,b */
			if (!append_event(events, sizeof(events), optarg)) {
				cli_error("-e: the events run longer than %zu characters",
					  sizeof(events) - 1);
				return CLI_USAGE;
			}
			event = events;
			break;
		case 'c':
			if (!cli_parse_uint(optarg, 1UL << 62, "-c", &ul) || !ul) {
				if (!ul)
					cli_error("-c 0: sample after at least 1 event");
				return CLI_USAGE;
			}
			so.period = ul;
			break;
		case 'F':
			if (!cli_parse_uint(optarg, 100000, "-F", &ul) || !ul) {
				if (!ul)
					cli_error("-F 0: at least 1 sample per second");
				return CLI_USAGE;
			}
			so.freq = ul;
			break;
		case 'C':
			calib = 1000;
			if (optarg &&
			    (!cli_parse_uint(optarg, 100000, "--calibrate", &calib) || !calib)) {
				if (!calib)
					cli_error("--calibrate=0: at least 1 sample per second");
				return CLI_USAGE;
			}
			break;
		case 'g':
			so.callchain = true;
			break;
		case 'G': /* perf's --call-graph fp | dwarf[,SIZE] */
			so.callchain = true;
			if (!strcmp(optarg, "fp"))
				break;
			if (strncmp(optarg, "dwarf", 5) || (optarg[5] && optarg[5] != ',')) {
				cli_error("--call-graph '%s': fp or dwarf[,SIZE]", optarg);
				return CLI_USAGE;
			}
			so.stack_user = 8192;
			if (optarg[5] == ',') {
				if (!cli_parse_uint(optarg + 6, 65528, "--call-graph dwarf,SIZE",
						    &ul))
					return CLI_USAGE;
				if (!ul || ul % 8) {
					cli_error("--call-graph dwarf,%lu: a multiple of 8 bytes",
						  ul);
					return CLI_USAGE;
				}
				so.stack_user = (unsigned)ul;
			}
			break;
		case 'o':
			out = optarg;
			break;
		case 'p':
			if (!cli_parse_uint(optarg, 1u << 30, "-p", &ul) || !ul)
				return CLI_USAGE;
			pid = (pid_t)ul;
			break;
		case 'a':
			all = true;
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			usage(stderr);
			return CLI_USAGE;
		}
	}
	char **cmd = optind < argc ? argv + optind : NULL;
	if (!!cmd + !!pid + all != 1) {
		cli_error("give one target: a command ('-- CMD'), -p PID or -a");
		return CLI_USAGE;
	}
	if (so.period && so.freq) {
		cli_error("-c and -F exclude each other");
		return CLI_USAGE;
	}
	struct pmon_evlist *ev = pmon_evlist__new(NULL);
	if (!ev ||
	    pmon_evlist__add(ev,
			     event ? event
				     : access("/sys/bus/event_source/devices/cpu/type", F_OK) == 0
				     ? "cycles"
				     : "cpu-clock")) {
		cli_error("%s", pmon_errdetail());
		pmon_evlist__free(ev);
		return CLI_USAGE;
	}
	uint64_t periods[16] = { 0 };
	if (pmon_evlist__count(ev) > 16) {
		cli_error("%zu events: pmon record samples at most 16 at once",
			  pmon_evlist__count(ev));
		pmon_evlist__free(ev);
		return CLI_USAGE;
	}
	if (calib && (!cmd || so.period || so.freq)) {
		cli_error(!cmd ? "--calibrate runs a command twice: give '-- CMD'"
			       : "--calibrate chooses -c itself: leave out -c and -F");
		pmon_evlist__free(ev);
		return CLI_USAGE;
	}
	if (calib) {
		struct sigaction sc = { .sa_handler = on_sig };
		sigemptyset(&sc.sa_mask);
		sigaction(SIGINT, &sc, NULL);
		sigaction(SIGTERM, &sc, NULL);
		int crc = calibrate(ev, cmd, calib, periods);
		so.periods = periods;
		if (crc != CLI_OK) {
			pmon_evlist__free(ev);
			return crc;
		}
	}
	struct pmon_child ch = { .pid = -1, .go_fd = -1, .err_fd = -1 };
	if (cmd) {
		if (pmon_child__fork(cmd, &ch)) {
			cli_error("cannot run '%s': %s", cmd[0], pmon_errdetail());
			pmon_evlist__free(ev);
			return CLI_FAIL;
		}
		t.pid = ch.pid;
		t.enable_on_exec = true;
	} else if (pid) {
		t.pid = pid;
	} else {
		t.system_wide = true;
	}
	struct pmon_sampler *s = NULL;
	err = pmon_sampler__open(ev, &t, &so, &s);
	if (err) {
		cli_error("%s", pmon_errdetail());
		if (ch.pid > 0) {
			kill(ch.pid, SIGKILL);
			pmon_child__wait(&ch, NULL, NULL);
		}
		pmon_evlist__free(ev);
		return err == -ESRCH ? CLI_USAGE : CLI_UNSUPPORTED;
	}
	struct pmon_data_header h = { .sample_type = pmon_sampler__sample_type(s),
				      .regs_user = pmon_sampler__regs_user(s),
				      .attr_type = pmon_evlist__event(ev, 0)->attr.type,
				      .attr_config = pmon_evlist__event(ev, 0)->attr.config,
				      .period = so.periods ? so.periods[0] : so.period,
				      .freq = so.period ? 0
					      : so.freq ? so.freq
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
	struct pmon_data_writer *w = NULL;
	err = pmon_data_writer__open(out, &h, &w);
	if (err) {
		cli_error("%s", pmon_errdetail());
		if (ch.pid > 0) {
			kill(ch.pid, SIGKILL);
			pmon_child__wait(&ch, NULL, NULL);
		}
		pmon_sampler__close(s);
		pmon_evlist__free(ev);
		return CLI_USAGE;
	}
	/* The event table: which sample identifier is which event. */
	for (size_t i = 0; !err && i < pmon_evlist__count(ev); i++) {
		const struct pmon_event_desc *d = pmon_evlist__event(ev, i);
		const uint64_t *ids = NULL;
		size_t nids = pmon_sampler__ids(s, i, &ids);
		uint64_t period = so.periods && so.periods[i] ? so.periods[i] : so.period;
		err = pmon_data_writer__add_event(w, (unsigned)i, d->name, d->attr.type,
						  d->attr.config, period,
						  period	    ? 0
							  : so.freq ? so.freq
								    : 1000,
						  ids, nids);
	}
	struct sigaction sa = { .sa_handler = on_sig };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!cmd) {
		pmon_sampler__enable(s);
		/* The kernel reports mappings made from now on; the ones the
		 * running process(es) already have come from /proc. */
		long m = pmon_data_writer__add_maps(w, all ? 0 : pid);
		if (m < 0 && pid) {
			cli_error("%s", pmon_errdetail());
			rc = m == -ESRCH ? CLI_USAGE : CLI_FAIL;
		}
	}
	int status = 0;
	bool have_status = false;
	if (cmd) {
		child = ch.pid;
		if ((err = pmon_child__start(&ch))) {
			cli_error("cannot run '%s': %s", cmd[0], strerror(-err));
			rc = 127;
		}
	}
	long records = 0;
	while (rc == CLI_OK) {
		pmon_sampler__poll(s, 200);
		long n = pmon_sampler__drain(s, write_rec, w);
		if (n < 0) {
			cli_error("%s", pmon_errdetail());
			rc = CLI_FAIL;
			break;
		}
		records += n;
		/* A chunk at least every poll: a crash loses at most ~200 ms. */
		if (pmon_data_writer__flush(w)) {
			cli_error("%s", pmon_errdetail());
			rc = CLI_FAIL;
			break;
		}
		if (cmd && waitpid(ch.pid, &status, WNOHANG) == ch.pid) {
			have_status = true;
			break;
		}
		if (pid && kill(pid, 0) && errno == ESRCH)
			break;
		if (got_sig && !cmd)
			break;
	}
	child = 0;
	pmon_sampler__disable(s);
	long n = pmon_sampler__drain(s, write_rec, w);
	if (n > 0)
		records += n;
	if (pmon_data_writer__close(w) && rc == CLI_OK) {
		cli_error("%s", pmon_errdetail());
		rc = CLI_FAIL;
	}
	pmon_sampler__close(s);
	pmon_evlist__free(ev);
	if (cmd && !have_status && ch.pid > 0 && rc != 127)
		pmon_child__wait(&ch, &status, NULL), have_status = true;
	fprintf(stderr, "pmon record: %ld records written to %s\n", records, out);
	if (rc == CLI_OK && have_status)
		rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	else if (rc == CLI_OK && got_sig)
		rc = 128 + got_sig;
	return rc;
}
