// SPDX-License-Identifier: MIT
/*
 * RDT per cgroup for the cgroup collector (lib/monitor/collect.h): a resctrl monitoring group
 * (include/pmon/rdt.h) that follows one cgroup's tasks. resctrl knows
 * nothing of cgroups: a monitoring group holds an RMID, and a task is
 * counted under the RMID of the group whose `tasks` file it was written to
 * (Documentation/filesystems/resctrl.rst, "Resource monitoring"; the RMID
 * goes into IA32_PQR_ASSOC on each context switch, SDM 17.16.6). So each
 * interval the collector reads the cgroup's threads (`cgroup.threads` in
 * cgroup v2, `tasks` in v1), writes the ones that joined into the group,
 * and writes the ones that left back into the root group, in two phases
 * over all cgroups (every release before any claim), so that a thread that
 * moved between two counted cgroups ends in the right one.
 *
 * Only the cgroup's own threads, not its descendants' (a thread has one
 * RMID; perf's cgroup mode counts descendants too). The root group's
 * mon_data keeps counting every task of the system (for a control group the
 * kernel sums its monitoring groups in). The kernel refuses a thread that
 * belongs to another control group (resctrl's CLOS groups): counted in
 * refused, not retried.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monitor/collect.h"
#include <pmon/pmon.h>

struct pmon__rdt_cgroup {
	struct pmon_rdt_group *g;
	char *dir; /* the cgroup directory */
	char rel[128]; /* the group's path below the resctrl root */
	pid_t *moved; /* sorted: threads written into g (or refused) */
	size_t nmoved;
	pid_t *now; /* sorted: the cgroup's threads at the last scan */
	size_t nnow;
	uint64_t refused;
};

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static bool has(const pid_t *set, size_t n, pid_t tid)
{
	return n && bsearch(&tid, set, n, sizeof(*set), cmp_pid);
}

struct pmon__rdt_cgroup *pmon__rdt_cgroup__new(const char *resctrl_root, const char *cgroup_dir)
{
	struct pmon__rdt_cgroup *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->dir = strdup(cgroup_dir);
	if (!r->dir || !(r->g = pmon_rdt_group__new(resctrl_root))) {
		int err = errno;
		pmon__rdt_cgroup__free(r);
		errno = err;
		return NULL;
	}
	const char *p = pmon_rdt_group__path(r->g), *m = strstr(p, "/mon_groups/");
	snprintf(r->rel, sizeof(r->rel), "%s", m ? m + 1 : p);
	return r;
}

void pmon__rdt_cgroup__free(struct pmon__rdt_cgroup *r)
{
	if (!r)
		return;
	if (r->g)
		pmon_rdt_group__remove(r->g); /* its threads return to the root group */
	free(r->dir);
	free(r->moved);
	free(r->now);
	free(r);
}

int pmon__rdt_cgroup__scan(struct pmon__rdt_cgroup *r)
{
	static const char *const files[] = { "cgroup.threads", "tasks" };
	char path[4096], *line = NULL;
	size_t cap = 0, n = 0, lcap = 0;
	pid_t *tids = NULL;
	FILE *f = NULL;

	for (size_t i = 0; i < 2 && !f; i++) {
		snprintf(path, sizeof(path), "%s/%s", r->dir, files[i]);
		f = fopen(path, "re");
	}
	if (!f)
		return -errno;
	while (getline(&line, &lcap, f) > 0) {
		char *end;
		errno = 0;
		long v = strtol(line, &end, 10);
		if (end == line || (*end && *end != '\n') || errno || v <= 0 || v > INT32_MAX)
			continue;
		if (n == cap) {
			size_t nc = cap ? 2 * cap : 64;
			pid_t *t = realloc(tids, nc * sizeof(*t));
			if (!t) {
				free(tids);
				free(line);
				fclose(f);
				return -ENOMEM;
			}
			tids = t;
			cap = nc;
		}
		tids[n++] = (pid_t)v;
	}
	free(line);
	fclose(f);
	if (n)
		qsort(tids, n, sizeof(*tids), cmp_pid);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) /* unique */
		if (!k || tids[k - 1] != tids[i])
			tids[k++] = tids[i];
	free(r->now);
	r->now = tids;
	r->nnow = k;
	return 0;
}

unsigned pmon__rdt_cgroup__release(struct pmon__rdt_cgroup *r, struct pmon_rdt_group *root)
{
	unsigned out = 0;
	size_t k = 0;

	for (size_t i = 0; i < r->nmoved; i++) {
		if (has(r->now, r->nnow, r->moved[i])) {
			r->moved[k++] = r->moved[i];
			continue;
		}
		/* Gone (-ESRCH), or now elsewhere: back to the root group, from
		 * where another cgroup's claim may take it. */
		out += root && !pmon_rdt_group__add(root, r->moved[i], false);
	}
	r->nmoved = k;
	return out;
}

unsigned pmon__rdt_cgroup__claim(struct pmon__rdt_cgroup *r)
{
	pid_t *moved = malloc((r->nnow ? r->nnow : 1) * sizeof(*moved));
	unsigned in = 0;
	size_t k = 0;

	if (!moved)
		return 0;
	for (size_t i = 0; i < r->nnow; i++) {
		pid_t tid = r->now[i];
		if (!has(r->moved, r->nmoved, tid)) {
			int err = pmon_rdt_group__add(r->g, tid, false);
			if (err == -ESRCH)
				continue; /* ended since the scan */
			if (err)
				r->refused++; /* another control group: not retried */
			else
				in++;
		}
		moved[k++] = tid;
	}
	free(r->moved);
	r->moved = moved;
	r->nmoved = k;
	return in;
}

int pmon__rdt_cgroup__read(struct pmon__rdt_cgroup *r, struct pmon_rdt_reading *out)
{
	return pmon_rdt_group__read(r->g, out);
}

const char *pmon__rdt_cgroup__group(const struct pmon__rdt_cgroup *r)
{
	return r->rel;
}

uint64_t pmon__rdt_cgroup__refused(const struct pmon__rdt_cgroup *r)
{
	return r->refused;
}

size_t pmon__rdt_cgroup__ntasks(const struct pmon__rdt_cgroup *r)
{
	return r->nmoved;
}
