/* SPDX-License-Identifier: MIT */
/*
 * Private to the cgroup collector (lib/monitor/collect.c, include/pmon/
 * collect.h): the Prometheus text helpers (lib/monitor/prom.c) and the
 * resctrl monitoring group that follows one cgroup (lib/monitor/
 * collect-rdt.c). The unit tests and the fuzz harness reach them here.
 */
#ifndef PMON_LIB_MONITOR_COLLECT_H
#define PMON_LIB_MONITOR_COLLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- text (lib/monitor/prom.c: libc only) ---- */

/* @s made a label value: backslash, quote and newline escaped, other control
 * bytes and bytes that are not well-formed UTF-8 as '?'. Into @out
 * (NUL-terminated, cut to @len, never inside an escape or a character). */
void pmon__prom_label_escape(const char *s, char *out, size_t len);
/* An event name made a metric name part: [a-zA-Z0-9_] kept, the rest '_'. */
void pmon__prom_metric_name(const char *event, char *out, size_t len);

/* ---- RDT per cgroup (lib/monitor/collect-rdt.c) ---- */

struct pmon_rdt_group;
struct pmon_rdt_reading;
/* A resctrl monitoring group that follows one cgroup's threads. */
struct pmon__rdt_cgroup;

/*
 * pmon__rdt_cgroup__new() - make a monitoring group under @resctrl_root
 * (NULL: the mounted one; pmon_rdt_group__new()) for the cgroup directory
 * @cgroup_dir. Return: it, or NULL with errno (ENOSPC: no free RMID).
 */
struct pmon__rdt_cgroup *pmon__rdt_cgroup__new(const char *resctrl_root, const char *cgroup_dir);
/* Remove the group (its threads return to the root group) and free. NULL is fine. */
void pmon__rdt_cgroup__free(struct pmon__rdt_cgroup *r);
/* Read the cgroup's threads now (cgroup.threads, or tasks in v1). Return: 0 or -errno. */
int pmon__rdt_cgroup__scan(struct pmon__rdt_cgroup *r);
/* Threads moved in before that the scan no longer saw: written into @root
 * (the root group). Return: how many were. Run for every cgroup first... */
unsigned pmon__rdt_cgroup__release(struct pmon__rdt_cgroup *r, struct pmon_rdt_group *root);
/* ...then this: the scan's threads not yet moved, written into the group.
 * Return: how many were (refused ones are counted apart, not retried). */
unsigned pmon__rdt_cgroup__claim(struct pmon__rdt_cgroup *r);
/* Occupancy and bandwidth of the group (pmon_rdt_group__read()). */
int pmon__rdt_cgroup__read(struct pmon__rdt_cgroup *r, struct pmon_rdt_reading *out);
/* The group's path below the resctrl root: "mon_groups/pmon-PID-N". */
const char *pmon__rdt_cgroup__group(const struct pmon__rdt_cgroup *r);
/* Threads the kernel refused (in another control group), since new. */
uint64_t pmon__rdt_cgroup__refused(const struct pmon__rdt_cgroup *r);
/* Threads of the cgroup at the last scan that were moved in (or refused). */
size_t pmon__rdt_cgroup__ntasks(const struct pmon__rdt_cgroup *r);

#endif
