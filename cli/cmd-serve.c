// SPDX-License-Identifier: MIT
/*
 * pmon serve (issue #19): an agent for every host of a fleet, counting in
 * the background and serving /metrics (Prometheus text or OpenMetrics),
 * /debug/pprof/profile, /healthz and / over HTTP(S). This file parses the
 * command line and says what happened; the server is lib/serve/
 * (serve_agent__run(), lib/serve/serve.h), in the presentation layer. Both
 * live in pmon-serve.so (loaded by cli/ui.c), so pmon itself never maps
 * libmicrohttpd.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "serve/serve.h"
#include <pmon/pmon.h>

/* cmd_serve is what pmon-serve.so exports (cli/pmon-serve.map). */
int cmd_serve(int argc, char **argv);

/* The --cgroup paths, as given. */
struct cgroup_list {
	char **paths;
	size_t n;
};

/* --cgroup PATH, repeatable: appended to the cgroup_list at opt->value. */
static int opt_cgroup(const struct cli_option *opt, const char *arg)
{
	struct cgroup_list *l = opt->value;
	char **nc = realloc(l->paths, (l->n + 1) * sizeof(*nc));

	if (!nc) {
		cli_error("out of memory");
		return CLI_FAIL;
	}
	l->paths = nc;
	l->paths[l->n++] = (char *)arg;
	return CLI_OK;
}

static void on_warn(void *ctx, enum pmon_serve_warning w, const char *detail)
{
	(void)ctx;
	if (w == PMON_SERVE_WARN_OPEN)
		cli_warn("serving on '%s', beyond this host, without --auth-file", detail);
	else
		cli_warn("--rdt: no resctrl monitoring here (%s); pmon_rdt_available is 0", detail);
}

static void on_listening(void *ctx, const struct pmon_serve_listening *l)
{
	const struct pmon_serve_opts *o = ctx;

	fprintf(stderr,
		"pmon serve: listening on %s://%s%s%s:%u/ (%zu events, %zu cgroups, every %u ms)\n",
		l->tls ? "https" : "http", l->v6 ? "[" : "", l->host, l->v6 ? "]" : "", l->port,
		l->nevents, l->ncgroups, o->interval_ms);
}

static void on_stopping(void *ctx, int sig)
{
	(void)ctx;
	fprintf(stderr, "pmon serve: stopping (%s)\n", strsignal(sig));
}

/* The server's failure @err in step @at, said in one line. Return: the
 * exit code (docs/exit-codes.md). */
static int serve_error(enum pmon_serve_step at, int err)
{
	switch (at) {
	case PMON_SERVE_STEP_LISTEN:
		cli_error("--listen %s", pmon_errdetail());
		return CLI_USAGE;
	case PMON_SERVE_STEP_CGROUP_ROOT:
		cli_error("--cgroup-root: %s", pmon_errdetail());
		return CLI_USAGE;
	default:
		break;
	}
	cli_error("%s", pmon_errdetail());
	switch (at) {
	case PMON_SERVE_STEP_TLS:
		return err == -EOPNOTSUPP ? CLI_UNSUPPORTED : CLI_USAGE;
	case PMON_SERVE_STEP_AUTH:
		return err == -ENOMEM ? CLI_FAIL : CLI_USAGE;
	case PMON_SERVE_STEP_EVENTS:
		/* out of memory, out of descriptors; else the events named */
		return err == -ENOMEM || err == -EMFILE || err == -ENFILE || err == -ENODEV
			? CLI_FAIL
			: CLI_USAGE;
	case PMON_SERVE_STEP_SYSTEM_WIDE:
		return CLI_UNSUPPORTED;
	case PMON_SERVE_STEP_CGROUP:
		return err == -ENOENT || err == -ENOTDIR ? CLI_USAGE : CLI_UNSUPPORTED;
	default: /* the collector's thread, listening, the clean stop */
		return CLI_FAIL;
	}
}

int cmd_serve(int argc, char **argv)
{
	struct pmon_serve_opts o = { .sz = sizeof(o),
				     .listen = "127.0.0.1:9464",
				     .warn = on_warn,
				     .listening = on_listening,
				     .stopping = on_stopping,
				     .ctx = &o };
	struct cgroup_list cgroups = { 0 };
	enum pmon_serve_step at;
	unsigned long interval = 1000, maxprof = 30, timeout = 10, maxconn = 128, maxclient = 64;
	int rc = CLI_OK, err;
	const struct cli_option options[] = {
		CLI_OPT_TEXT("Count in the background and serve, over HTTP:\n"
			     "  /metrics               Prometheus text 0.0.4 or OpenMetrics 1.0 "
			     "(Accept)\n"
			     "  /debug/pprof/profile   ?seconds=N&hz=H: a CPU profile for go tool "
			     "pprof\n"
			     "  /healthz, /            liveness; what is exported"),
		CLI_OPT_STRING(0, "listen", &o.listen, "ADDR:PORT",
			       "default 127.0.0.1:9464; [::1]:PORT for IPv6; port 0\n"
			       "picks a free one (printed on stderr)"),
		CLI_OPT_JOIN('e', "events", &o.events, "LIST",
			     "events to count, comma-separated or -e again (default:\n"
			     "the software events, and cycles, instructions,\n"
			     "branches where a PMU exists)"),
		CLI_OPT_FLAG('a', "all-cpus", &o.system_wide,
			     "every task on every CPU (the default without cgroups)"),
		CLI_OPT_CALLBACK(0, "cgroup", &cgroups, "PATH", opt_cgroup,
				 "count this cgroup directory, per CPU (repeatable)"),
		CLI_OPT_STRING(0, "cgroup-root", &o.cgroup_root, "PATH",
			       "count every cgroup below PATH, as they come and go"),
		CLI_OPT_FLAG(0, "rdt", &o.rdt,
			     "L3 occupancy and memory bandwidth (resctrl), of the\n"
			     "system and of each counted cgroup's threads"),
		CLI_OPT_STRING(0, "resctrl-root", &o.resctrl_root, "DIR",
			       "another resctrl mount (tests: an emulated tree)"),
		CLI_OPT_UINT_MIN(0, "interval", &interval, "MS", 100, 3600000, "100 ms at least",
				 "reading interval (default 1000, 100 at least)"),
		CLI_OPT_STRING(0, "tls-cert", &o.tls_cert, "FILE",
			       "serve HTTPS with this PEM certificate"),
		CLI_OPT_STRING(0, "tls-key", &o.tls_key, "FILE", "...and this key (mode 0600)"),
		CLI_OPT_STRING(0, "auth-file", &o.auth_file, "FILE",
			       "basic authentication: lines 'user:password'"),
		CLI_OPT_UINT_MIN(0, "max-profile-seconds", &maxprof, "N", 1, 3600, "1 at least",
				 "the longest profile one request may ask for (30)"),
		CLI_OPT_UINT_MIN(0, "timeout", &timeout, "S", 1, 3600, "1 at least",
				 "a request's head must be in, and a silent connection\n"
				 "is closed, within S seconds (10)"),
		CLI_OPT_UINT_MIN(0, "max-connections", &maxconn, "N", 1, 65536, "1 at least",
				 "connections served at once (128)"),
		CLI_OPT_UINT_MIN(0, "max-client-connections", &maxclient, "N", 1, 65536,
				 "1 at least", "connections from one address at once (64)"),
		CLI_OPT_TEXT(
			"Cgroups need a perf_event hierarchy (cgroup v1) or cgroup v2 with the\n"
			"perf_event controller. Metric list: docs/serve.md."),
		CLI_OPT_END(),
	};
	int argi = cli_parse_options(
		"serve",
		"usage: pmon serve [--listen ADDR:PORT] [-e EVENTS] [-a] [--cgroup PATH]...\n"
		"                  [--cgroup-root PATH] [--rdt [--resctrl-root DIR]] [--interval "
		"MS]\n"
		"                  [--tls-cert FILE --tls-key FILE] [--auth-file FILE]\n"
		"                  [--max-profile-seconds N] [--timeout S]\n"
		"                  [--max-connections N] [--max-client-connections N]",
		options, 0, argc, argv);

	if (argi <= 0) {
		rc = -argi;
		goto out;
	}
	if (argi < argc) {
		cli_error("unexpected argument '%s' (pmon serve runs no command)", argv[argi]);
		rc = CLI_USAGE;
		goto out;
	}
	if (!o.tls_cert != !o.tls_key) {
		cli_error("--tls-cert and --tls-key go together");
		rc = CLI_USAGE;
		goto out;
	}
	o.interval_ms = (unsigned)interval;
	o.max_profile_s = (unsigned)maxprof;
	o.timeout_s = (unsigned)timeout;
	o.max_conns = (unsigned)maxconn;
	o.max_client_conns = (unsigned)maxclient;
	o.cgroups = cgroups.paths;
	o.ncgroups = cgroups.n;
	if (!o.ncgroups && !o.cgroup_root)
		o.system_wide = true;
	if ((err = serve_agent__run(&o, &at)))
		rc = serve_error(at, err);
out:
	free(cgroups.paths);
	return rc;
}
