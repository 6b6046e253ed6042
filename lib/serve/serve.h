/* SPDX-License-Identifier: MIT */
/*
 * Private to pmon-serve.so: the HTTP agent behind `pmon serve` (issue #19),
 * in the presentation layer beside report/ and plot/. cli/cmd-serve.c
 * parses the command line, calls serve_agent__run() and says what it
 * returns; the server (lib/serve/server.c, http.c) never prints, never
 * exits, and tells what an operator should see through the callbacks of
 * its options. The collector it serves is libpmon's
 * (include/pmon/collect.h); this header is not installed.
 */
#ifndef PMON_SERVE_SERVE_H
#define PMON_SERVE_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a warning is about (the server goes on). */
enum pmon_serve_warning {
	/* The listen address is beyond this host and no auth file was given
	 * (detail: the address as given). */
	PMON_SERVE_WARN_OPEN,
	/* RDT was asked for and resctrl monitoring is missing here (detail:
	 * why); pmon_rdt_available reads 0. */
	PMON_SERVE_WARN_NO_RDT,
};

/* Which step serve_agent__run() failed in: what the caller says and which
 * exit code it maps the error to (docs/exit-codes.md). */
enum pmon_serve_step {
	PMON_SERVE_STEP_LISTEN, /* the address: not ADDRESS:PORT */
	PMON_SERVE_STEP_TLS, /* the certificate or key; -EOPNOTSUPP: no TLS here */
	PMON_SERVE_STEP_AUTH, /* the auth file */
	PMON_SERVE_STEP_EVENTS, /* the collector refused the events */
	PMON_SERVE_STEP_SYSTEM_WIDE, /* counting every task */
	PMON_SERVE_STEP_CGROUP, /* counting a cgroup (the detail names it) */
	PMON_SERVE_STEP_CGROUP_ROOT, /* watching the cgroup root */
	PMON_SERVE_STEP_RUN, /* the collector's thread, listening, the clean stop */
};

/* Where the server listens, once it does. */
struct pmon_serve_listening {
	bool tls, v6;
	const char *host; /* numeric, without brackets */
	unsigned port; /* the one bound (port 0 asked the kernel for one) */
	size_t nevents, ncgroups;
};

struct pmon_serve_opts {
	size_t sz;
	const char *listen; /* "127.0.0.1:9464", "[::1]:9464", "localhost:9464" */
	/* What to count (pmon_collector_opts and its adders). */
	const char *events; /* NULL: the collector's defaults */
	bool system_wide;
	char *const *cgroups;
	size_t ncgroups;
	const char *cgroup_root; /* every cgroup below, rescanned; or NULL */
	bool rdt;
	const char *resctrl_root; /* NULL: the mounted one */
	unsigned interval_ms;
	/* HTTPS with these PEM files (both or neither; the key mode 0600);
	 * basic authentication with "user:password" lines (mode 0600). */
	const char *tls_cert, *tls_key, *auth_file;
	unsigned max_profile_s; /* the longest ?seconds= of a profile */
	/* Against slow clients (0: the default in brackets): a connection's
	 * request head must be in, and a silent connection is closed, within
	 * timeout_s [10]; at most max_conns [128] connections at once and
	 * max_client_conns [64] from one address. */
	unsigned timeout_s, max_conns, max_client_conns;
	/* Told from the calling thread; each may be NULL. */
	void (*warn)(void *ctx, enum pmon_serve_warning w, const char *detail);
	void (*listening)(void *ctx, const struct pmon_serve_listening *l);
	void (*stopping)(void *ctx, int sig);
	void *ctx;
};

/*
 * serve_agent__run() - count in the background and serve /metrics,
 * /debug/pprof/profile, /healthz and / over HTTP(S) until SIGTERM, SIGINT
 * or SIGHUP. Those signals and SIGPIPE are blocked in the calling thread
 * (and so in every thread it starts) while it runs and taken with
 * sigwait(); the mask is restored before it returns. One at a time per
 * process.
 * Return: 0 after a stop by signal with every counter closed; -errno with
 * pmon_errdetail() set and *@step (when not NULL) saying where it failed.
 */
int serve_agent__run(const struct pmon_serve_opts *o, enum pmon_serve_step *step);

/* ---- text (lib/serve/text.c: libc only, linked alone by the fuzz harness) ---- */

/*
 * serve_accept_openmetrics() - HTTP content negotiation on @accept: true when
 * it prefers application/openmetrics-text (by q value, ties going to
 * OpenMetrics as Prometheus asks for it first) over text/plain; NULL: false.
 */
bool serve_accept_openmetrics(const char *accept);
/*
 * serve_query_uint() - a query parameter's value @v (NULL: absent) as a
 * whole number in [1, @max]: digits only, no sign or space.
 * Return: true with *@out set (@def when absent), false when it is not one.
 */
bool serve_query_uint(const char *v, unsigned long def, unsigned long max, unsigned long *out);

#endif
