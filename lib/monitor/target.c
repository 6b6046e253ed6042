// SPDX-License-Identifier: MIT
/*
 * Targets (pmon/monitor.h): the one list parser for pids, tids and CPUs
 * (exported here, kept in lib/util/idlist.c), and perf's struct target with its validate step, so that stat, top,
 * record and rdt accept the same lists and refuse the same mistakes with
 * the same words before anything is opened.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include <pmon/monitor.h>

/* The parser lives in the support layer (lib/util/idlist.c) so that the
 * layers below this one read sysfs lists with it too (issue #25). */
int pmon_idlist__parse(const char *s, long max, long **out, size_t *n)
{
	return pmon__idlist_parse(s, max, out, n);
}

/* @s parsed into a new array of @T (pid_t or int). */
static int parse_into(const char *s, const char *what, long max, void **out, size_t *n, size_t elem)
{
	long *v;
	size_t cnt;
	int err = pmon_idlist__parse(s, max, &v, &cnt);

	if (err) {
		if (err == -EINVAL) {
			char d[256];
			pmon__strlcpy(d, pmon_errdetail(), sizeof(d));
			pmon__err(err, "%s: %s", what, d);
		}
		return err;
	}
	unsigned char *a = malloc(cnt * elem);
	if (!a) {
		free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < cnt; i++) {
		if (elem == sizeof(pid_t)) {
			pid_t x = (pid_t)v[i];
			memcpy(a + i * elem, &x, elem);
		} else {
			int x = (int)v[i];
			memcpy(a + i * elem, &x, elem);
		}
	}
	free(v);
	*out = a;
	*n = cnt;
	return 0;
}

int pmon_target__parse(const struct pmon_target_spec *spec, struct pmon_target *t)
{
	void *pids = NULL, *tids = NULL, *cpus = NULL;
	size_t npids = 0, ntids = 0, ncpus = 0;
	int err = 0;

	if (!spec || !t)
		return pmon__err(-EINVAL, "pmon_target__parse: no spec or no target");
	if ((err = PMON_OPTS_CHECK(spec, struct pmon_target_spec, system_wide)))
		return err;
	/* @t is written, every field: the caller's must hold them all. */
	if (t->sz < sizeof(*t))
		return pmon__err(-EINVAL,
				 "struct pmon_target: size %zu, but pmon_target__parse() writes "
				 "all %zu bytes of it",
				 t->sz, sizeof(*t));
	if (spec->pid)
		err = parse_into(spec->pid, "processes", 0x3fffffff, &pids, &npids, sizeof(pid_t));
	if (!err && spec->tid)
		err = parse_into(spec->tid, "threads", 0x3fffffff, &tids, &ntids, sizeof(pid_t));
	if (!err && spec->cpu_list)
		err = parse_into(spec->cpu_list, "CPUs", 1 << 20, &cpus, &ncpus, sizeof(int));
	if (err) {
		free(pids);
		free(tids);
		free(cpus);
		return err;
	}
	t->pids = pids;
	t->npids = npids;
	t->tids = tids;
	t->ntids = ntids;
	t->cpus = cpus;
	t->ncpus = ncpus;
	t->system_wide = spec->system_wide || ncpus > 0;
	if (npids || ntids)
		t->pid = -1;
	if (PMON_OPTS_HAS_NN(spec, cgroup) && spec->cgroup) {
		/* perf's cgroup mode counts per CPU: -G implies -a */
		t->cgroup = spec->cgroup;
		t->system_wide = true;
		t->pid = -1;
	}
	return 0;
}

void pmon_target__release(struct pmon_target *t)
{
	if (!t)
		return;
	free((void *)t->pids);
	free((void *)t->tids);
	free((void *)t->cpus);
	t->pids = t->tids = NULL;
	t->cpus = NULL;
	t->npids = t->ntids = t->ncpus = 0;
}

int pmon_cpus_online(const char *sysfs_root, int **cpus, size_t *n)
{
	char path[4096], buf[4096];
	long *ids;
	size_t nids;
	long len;
	int err;

	*cpus = NULL;
	*n = 0;
	pmon__fmt(path, sizeof(path), "%s/devices/system/cpu/online",
		  sysfs_root ? sysfs_root : "/sys");
	len = pmon__read_text(path, buf, sizeof(buf));
	if (len <= 0)
		return pmon__err(-EINVAL, "cannot read the online CPUs from %s", path);
	buf[strcspn(buf, "\n")] = '\0';
	err = pmon_idlist__parse(buf, 1 << 20, &ids, &nids);
	if (err)
		return pmon__err(-EINVAL, "%s: the online CPU list '%s' does not parse", path, buf);
	if (!nids) {
		free(ids);
		return pmon__err(-EINVAL, "%s lists no CPU", path);
	}
	*cpus = malloc(nids * sizeof(**cpus));
	if (!*cpus) {
		free(ids);
		return pmon__err(-ENOMEM, "out of memory for %zu online CPUs", nids);
	}
	for (size_t i = 0; i < nids; i++)
		(*cpus)[i] = (int)ids[i];
	*n = nids;
	free(ids);
	return 0;
}

int pmon_target__validate(const struct pmon_target *t, const char *online)
{
	char buf[4096];

	if (t->ncpus) {
		long *on;
		size_t non;
		int err;

		if (!online) {
			long len =
				pmon__read_text("/sys/devices/system/cpu/online", buf, sizeof(buf));
			if (len <= 0)
				return pmon__err(-EINVAL,
						 "cannot read the online CPUs from "
						 "/sys/devices/system/cpu/online");
			buf[strcspn(buf, "\n")] = '\0';
			online = buf;
		}
		err = pmon_idlist__parse(online, 1 << 20, &on, &non);
		if (err)
			return pmon__err(-EINVAL, "the online CPU list '%s' does not parse",
					 online);
		for (size_t i = 0; i < t->ncpus; i++) {
			bool found = false;
			for (size_t k = 0; k < non && !found; k++)
				found = on[k] == t->cpus[i];
			if (!found) {
				free(on);
				return pmon__err(-ENODEV, "CPU %d does not exist (online: %s)",
						 t->cpus[i], online);
			}
		}
		free(on);
	}
	for (size_t i = 0; i < t->npids; i++) {
		char path[64];
		pmon__fmt(path, sizeof(path), "/proc/%d", (int)t->pids[i]);
		if (t->pids[i] <= 0 || access(path, F_OK))
			return pmon__err(-ESRCH, "process %d does not exist", (int)t->pids[i]);
	}
	for (size_t i = 0; i < t->ntids; i++) {
		char path[64];
		pmon__fmt(path, sizeof(path), "/proc/%d", (int)t->tids[i]);
		if (t->tids[i] <= 0 || access(path, F_OK))
			return pmon__err(-ESRCH, "thread %d does not exist", (int)t->tids[i]);
	}
	if (PMON_OPTS_GET_NN(t, cgroup, NULL)) {
		struct stat st;
		char procs[4096];
		if (stat(t->cgroup, &st))
			return pmon__err(-ENOENT, "cgroup '%s' does not exist", t->cgroup);
		pmon__fmt(procs, sizeof(procs), "%s/cgroup.procs", t->cgroup);
		if (!S_ISDIR(st.st_mode) || access(procs, F_OK))
			return pmon__err(-ENOTDIR,
					 "'%s' is not a cgroup directory (no cgroup.procs)",
					 t->cgroup);
	}
	return 0;
}
