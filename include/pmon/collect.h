/* SPDX-License-Identifier: MIT */
/*
 * The cgroup collector (lib/monitor/collect.c): counts events in the
 * background, system-wide and per cgroup (a fixed list, or every cgroup
 * below a root, followed as cgroups come and go), optionally with resctrl
 * occupancy and bandwidth per cgroup, and renders what it has read as
 * Prometheus text format 0.0.4 or OpenMetrics 1.0. The engine behind
 * `pmon serve`; the HTTP side is the caller's.
 *
 * Set up: pmon_collector__new(), then any of __add_system_wide(),
 * __add_cgroup(), __watch_root(), then __start(). Rendering and the
 * accessors are thread-safe once started.
 */
#ifndef PMON_COLLECT_H
#define PMON_COLLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <pmon/common.h>

struct pmon_collector;
/* One scrape's answer: the body the last reading rendered (shared, not
 * copied), then the scrape's own lines. */
struct pmon_scrape;

struct pmon_collector_opts {
	size_t sz;
	const char *events; /* an event list (pmon_evlist__add()), or NULL for the defaults */
	unsigned interval_ms; /* how often the background thread reads (0: 1000) */
	bool rdt; /* resctrl occupancy and bandwidth too, where monitoring exists */
	const char *resctrl_root; /* NULL: the mounted resctrl */
};

/*
 * pmon_collector__new() - resolve the events (@opts->events, or software
 * events plus the hardware ones where a core PMU exists) and, with
 * @opts->rdt, find resctrl monitoring. Counts nothing yet.
 * Return: the collector (free with pmon_collector__free()), or NULL with
 * errno and pmon_errdetail() set: ENOMEM, EMFILE/ENFILE (no eventfd), or
 * the event list's error (the events named are wrong). resctrl monitoring
 * missing is not an error: see pmon_collector__rdt_unavailable().
 */
PMON_API struct pmon_collector *pmon_collector__new(const struct pmon_collector_opts *opts);
/* Why --rdt counts nothing (a detail line), or NULL when it counts or was
 * not asked for. Owned by the collector. */
PMON_API const char *pmon_collector__rdt_unavailable(const struct pmon_collector *c);
/* Count every task, per CPU. Before __start(). Return: 0 or -errno (detail set). */
PMON_API int pmon_collector__add_system_wide(struct pmon_collector *c);
/* Count the cgroup directory @path (perf's cgroup mode), which must exist.
 * Before __start(). Return: 0, -ENOENT/-ENOTDIR (no such cgroup) or another
 * -errno (cannot count it), pmon_errdetail() set. */
PMON_API int pmon_collector__add_cgroup(struct pmon_collector *c, const char *path);
/* Count every cgroup below the directory @root (at most 8 deep), walked now
 * and again whenever the tree changes (inotify; with cgroups added by
 * __add_cgroup(), every interval). Before __start(). Return: 0 or -errno
 * (@root is no cgroup directory), pmon_errdetail() set. */
PMON_API int pmon_collector__watch_root(struct pmon_collector *c, const char *root);
/* Start the background thread that reads every interval. Return: 0 or -errno. */
PMON_API int pmon_collector__start(struct pmon_collector *c);
/* Stop the thread (if started), close every counter, free. NULL is fine. */
PMON_API void pmon_collector__free(struct pmon_collector *c);

/*
 * pmon_collector__render() - the metrics of the last reading, as
 * Prometheus text format 0.0.4, or OpenMetrics 1.0 with @openmetrics; no
 * counter is opened or read here. The first scrape after a reading renders
 * them (rewriting the previous body in place when no response still holds
 * it: no allocation in steady state); the scrapes after it share that body.
 * Thread-safe.
 * Return: 0 with *@out set (free it with pmon_scrape__free(), from any
 * thread, once sent), or -ENOMEM.
 */
PMON_API int pmon_collector__render(struct pmon_collector *c, bool openmetrics,
				    struct pmon_scrape **out);
/* The shared body, then the scrape's own part: send both, in this order. */
PMON_API const char *pmon_scrape__body(const struct pmon_scrape *sc, size_t *len);
PMON_API const char *pmon_scrape__tail(const struct pmon_scrape *sc, size_t *len);
/* Drop the scrape's reference to the body; NULL is fine. (void *: an HTTP
 * library's free callback.) */
PMON_API void pmon_scrape__free(void *sc);
/* One line per exported event and per counted cgroup, as HTML list items,
 * into *@buf (malloc()ed, the caller frees). Return: 0 or -ENOMEM. */
PMON_API int pmon_collector__describe(struct pmon_collector *c, char **buf, size_t *len);
/* The directory of the counted cgroup labelled @label ("/a/b", as in the
 * metrics) into @out. Return: true when one is counted now. */
PMON_API bool pmon_collector__cgroup_path(struct pmon_collector *c, const char *label, char *out,
					  size_t len);
/* Whether a profile is being taken (the pmon_profile_in_progress gauge). */
PMON_API void pmon_collector__set_profiling(struct pmon_collector *c, bool on);
/* Counted cgroups now. */
PMON_API size_t pmon_collector__ncgroups(struct pmon_collector *c);
/* Events exported. */
PMON_API size_t pmon_collector__nevents(const struct pmon_collector *c);

#endif
