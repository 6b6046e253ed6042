/* SPDX-License-Identifier: MIT */
/*
 * Private to `pmon serve` (pmon-serve.so): the collector that counts in the
 * background with the monitor layer and renders what it has cached as
 * Prometheus text or OpenMetrics (cli/serve-collect.c), used by the HTTP
 * side (cli/cmd-serve.c).
 */
#ifndef PMON_CLI_SERVE_H
#define PMON_CLI_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct serve_opts {
	const char *events; /* -e, or NULL for the defaults */
	bool system_wide; /* -a: every task, per CPU */
	char **cgroups; /* --cgroup, as given */
	size_t ncgroups;
	const char *cgroup_root; /* --cgroup-root: every cgroup below, rescanned */
	bool rdt;
	const char *resctrl_root; /* --resctrl-root, or NULL: the mounted one */
	unsigned interval_ms;
};

struct serve_collector;

/*
 * serve_collector__new() - resolve the events and open every counter the
 * options name (the system-wide ones, the cgroups that exist now), with the
 * baseline taken. Prints a one-line error on failure.
 * Return: CLI_OK with *@out set, or a CLI exit code.
 */
int serve_collector__new(const struct serve_opts *o, struct serve_collector **out);
/* Start the background thread that reads every interval. Return: 0 or -errno. */
int serve_collector__start(struct serve_collector *c);
/* Stop the thread (if started), close every counter, free. NULL is fine. */
void serve_collector__free(struct serve_collector *c);

/* One scrape's answer: the body the last reading rendered (shared, not
 * copied), then the scrape's own lines. */
struct serve_scrape;

/*
 * serve_collector__render() - the metrics of the last reading, as
 * Prometheus text format 0.0.4, or OpenMetrics 1.0 with @openmetrics; no
 * counter is opened or read here. The first scrape after a reading renders
 * them (rewriting the previous body in place when no response still holds
 * it: no allocation in steady state); the scrapes after it share that body.
 * Thread-safe.
 * Return: 0 with *@out set (free it with serve_scrape__free(), from any
 * thread, once sent), or -ENOMEM.
 */
int serve_collector__render(struct serve_collector *c, bool openmetrics, struct serve_scrape **out);
/* The shared body, then the scrape's own part: send both, in this order. */
const char *serve_scrape__body(const struct serve_scrape *sc, size_t *len);
const char *serve_scrape__tail(const struct serve_scrape *sc, size_t *len);
/* Drop the scrape's reference to the body; NULL is fine. (void *: a
 * libmicrohttpd free callback.) */
void serve_scrape__free(void *sc);
/* One line per exported event and per counted cgroup, as HTML list items. */
int serve_collector__describe(struct serve_collector *c, char **buf, size_t *len);
/* The directory of the counted cgroup labelled @label ("/a/b", as in the
 * metrics) into @out. Return: true when one is counted now. */
bool serve_collector__cgroup_path(struct serve_collector *c, const char *label, char *out,
				  size_t len);
/* Whether a profile is being taken (the pmon_profile_in_progress gauge). */
void serve_collector__set_profiling(struct serve_collector *c, bool on);
/* Counted cgroups now. */
size_t serve_collector__ncgroups(struct serve_collector *c);
size_t serve_collector__nevents(const struct serve_collector *c);

/* ---- text (cli/serve-text.c: libc only, linked alone by the fuzz harness) ---- */

/* @s made a label value: backslash, quote and newline escaped, other control
 * bytes and bytes that are not well-formed UTF-8 as '?'. Into @out
 * (NUL-terminated, cut to @len, never inside an escape or a character). */
void serve_label_escape(const char *s, char *out, size_t len);
/* Length of the well-formed UTF-8 character at @p (1-4), 0 when it is not
 * one (overlong, a surrogate, past U+10FFFF, cut short). */
size_t serve_utf8_len(const unsigned char *p);
/* An event name made a metric name part: [a-zA-Z0-9_] kept, the rest '_'. */
void serve_metric_name(const char *event, char *out, size_t len);
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

/* ---- RDT per cgroup (cli/serve-rdt.c) ---------------------------------- */

struct pmon_rdt_group;
struct pmon_rdt_reading;
/* A resctrl monitoring group that follows one cgroup's threads. */
struct serve_rdt_cgroup;

/*
 * serve_rdt_cgroup__new() - make a monitoring group under @resctrl_root
 * (NULL: the mounted one; pmon_rdt_group__new()) for the cgroup directory
 * @cgroup_dir. Return: it, or NULL with errno (ENOSPC: no free RMID).
 */
struct serve_rdt_cgroup *serve_rdt_cgroup__new(const char *resctrl_root, const char *cgroup_dir);
/* Remove the group (its threads return to the root group) and free. NULL is fine. */
void serve_rdt_cgroup__free(struct serve_rdt_cgroup *r);
/* Read the cgroup's threads now (cgroup.threads, or tasks in v1). Return: 0 or -errno. */
int serve_rdt_cgroup__scan(struct serve_rdt_cgroup *r);
/* Threads moved in before that the scan no longer saw: written into @root
 * (the root group). Return: how many were. Run for every cgroup first... */
unsigned serve_rdt_cgroup__release(struct serve_rdt_cgroup *r, struct pmon_rdt_group *root);
/* ...then this: the scan's threads not yet moved, written into the group.
 * Return: how many were (refused ones are counted apart, not retried). */
unsigned serve_rdt_cgroup__claim(struct serve_rdt_cgroup *r);
/* Occupancy and bandwidth of the group (pmon_rdt_group__read()). */
int serve_rdt_cgroup__read(struct serve_rdt_cgroup *r, struct pmon_rdt_reading *out);
/* The group's path below the resctrl root: "mon_groups/pmon-PID-N". */
const char *serve_rdt_cgroup__group(const struct serve_rdt_cgroup *r);
/* Threads the kernel refused (in another control group), since new. */
uint64_t serve_rdt_cgroup__refused(const struct serve_rdt_cgroup *r);
/* Threads of the cgroup at the last scan that were moved in (or refused). */
size_t serve_rdt_cgroup__ntasks(const struct serve_rdt_cgroup *r);

#endif
