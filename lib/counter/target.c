// SPDX-License-Identifier: MIT
/*
 * Targets (pmon/counter.h): who is counted, in one opaque object that
 * stat, top, record, rdt, trace and serve build alike (perf's struct target
 * with target__validate()): parsed from what the user typed and checked
 * once, before anything opens, so that every command refuses the same
 * mistakes with the same words. It sits in the counting layer because
 * pmon_counters__open() reads it; how events open on it (inherit,
 * enable_on_exec, start_disabled) is struct pmon_open_opts, beside it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include <pmon/counter.h>

static struct pmon_target *target_alloc(void)
{
	struct pmon_target *t = calloc(1, sizeof(*t));

	if (t)
		t->pid = -1;
	return t;
}

void pmon_target__free(struct pmon_target *t)
{
	if (!t)
		return;
	free(t->pids);
	free(t->tids);
	free(t->cpus);
	free(t->cgroup);
	free(t);
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

/* @s parsed into a new array of @elem-byte ints (pid_t or int), sorted and
 * each once, as perf's cpu and thread maps are: "-C 0,0-1" opened CPU 0
 * twice and counted its events double. */
static int parse_into(const char *s, const char *what, long max, void **out, size_t *n, size_t elem)
{
	long *v;
	size_t cnt;
	int err = pmon__idlist_parse(s, max, &v, &cnt);

	if (err) {
		if (err == -EINVAL) {
			char d[256];
			pmon__strlcpy(d, pmon_errdetail(), sizeof(d));
			pmon__err(err, "%s: %s", what, d);
		}
		return err;
	}
	qsort(v, cnt, sizeof(*v), cmp_long);
	size_t u = 0;
	for (size_t i = 0; i < cnt; i++)
		if (!u || v[i] != v[u - 1])
			v[u++] = v[i];
	cnt = u;
	unsigned char *a = malloc(cnt ? cnt * elem : 1);
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

/* Every CPU of @t is in @online (NULL: the sysfs list). */
static int check_cpus(const struct pmon_target *t, const char *online)
{
	char buf[4096];
	long *on;
	size_t non;
	int err;

	if (!t->ncpus)
		return 0;
	if (!online) {
		long len = pmon__read_text("/sys/devices/system/cpu/online", buf, sizeof(buf));
		if (len <= 0)
			return pmon__err(-EINVAL,
					 "cannot read the online CPUs from "
					 "/sys/devices/system/cpu/online");
		buf[strcspn(buf, "\n")] = '\0';
		online = buf;
	}
	err = pmon__idlist_parse(online, 1 << 20, &on, &non);
	if (err)
		return pmon__err(-EINVAL, "the online CPU list '%s' does not parse", online);
	for (size_t i = 0; i < t->ncpus; i++) {
		bool found = false;
		for (size_t k = 0; k < non && !found; k++)
			found = on[k] == t->cpus[i];
		if (!found) {
			free(on);
			return pmon__err(-ENODEV, "CPU %d does not exist (online: %s)", t->cpus[i],
					 online);
		}
	}
	free(on);
	return 0;
}

static int check_ids(const pid_t *ids, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++) {
		char path[64];
		pmon__fmt(path, sizeof(path), "/proc/%d", (int)ids[i]);
		if (ids[i] <= 0 || access(path, F_OK))
			return pmon__err(-ESRCH, "%s %d does not exist", what, (int)ids[i]);
	}
	return 0;
}

static int check_cgroup(const char *dir)
{
	struct stat st;
	char procs[4096];

	if (stat(dir, &st))
		return pmon__err(-ENOENT, "cgroup '%s' does not exist", dir);
	pmon__fmt(procs, sizeof(procs), "%s/cgroup.procs", dir);
	if (!S_ISDIR(st.st_mode) || access(procs, F_OK))
		return pmon__err(-ENOTDIR, "'%s' is not a cgroup directory (no cgroup.procs)", dir);
	return 0;
}

int pmon_cgroup_resolve(const char *name, char *dir, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[1024], v1[512] = "", v2[512] = "";

	/* "36 25 0:31 / /sys/fs/cgroup/perf_event rw - cgroup cgroup rw,perf_event":
	 * the mount point is field 5, the type and options follow " - ". */
	while (f && !v1[0] && fgets(line, sizeof(line), f)) {
		char *dash = strstr(line, " - "), mnt[512], type[32], src[64], opts[512];
		if (!dash || sscanf(line, "%*s %*s %*s %*s %511s", mnt) != 1 ||
		    sscanf(dash + 3, "%31s %63s %511s", type, src, opts) != 3 || strchr(mnt, '\\'))
			continue;
		if (!strcmp(type, "cgroup") && strstr(opts, "perf_event"))
			pmon__strlcpy(v1, mnt, sizeof(v1));
		else if (!strcmp(type, "cgroup2") && !v2[0])
			pmon__strlcpy(v2, mnt, sizeof(v2));
	}
	if (f)
		fclose(f);
	const char *base = v1[0] ? v1 : v2;
	if (!base[0])
		return pmon__err(-ENOENT,
				 "cgroup '%s': no perf_event cgroup hierarchy is mounted "
				 "(cgroup v1's perf_event or cgroup2)",
				 name);
	while (*name == '/')
		name++;
	if (!pmon__fmt(dir, len, "%s%s%s", base, *name ? "/" : "", name))
		return pmon__err(-ENAMETOOLONG, "cgroup '%s': the path is too long", name);
	return check_cgroup(dir);
}

static int target_parse(const struct pmon_target_spec *spec, struct pmon_target *t)
{
	void *v;
	size_t n;
	int err = 0;

	if (spec->pid) {
		err = parse_into(spec->pid, "processes", 0x3fffffff, &v, &n, sizeof(pid_t));
		if (err)
			return err;
		t->pids = v;
		t->npids = n;
	}
	if (spec->tid) {
		err = parse_into(spec->tid, "threads", 0x3fffffff, &v, &n, sizeof(pid_t));
		if (err)
			return err;
		t->tids = v;
		t->ntids = n;
	}
	if (spec->cpu_list) {
		err = parse_into(spec->cpu_list, "CPUs", 1 << 20, &v, &n, sizeof(int));
		if (err)
			return err;
		t->cpus = v;
		t->ncpus = n;
	}
	t->system_wide = spec->system_wide || t->ncpus > 0;
	if (PMON_OPTS_GET_NN(spec, cgroup, NULL)) {
		/* perf's cgroup mode counts per CPU: -G implies -a */
		t->cgroup = strdup(spec->cgroup);
		if (!t->cgroup)
			return -ENOMEM;
		t->system_wide = true;
	}
	return 0;
}

static int target_check(const struct pmon_target *t, const char *online)
{
	int err = check_cpus(t, online);

	if (!err)
		err = check_ids(t->pids, t->npids, "process");
	if (!err)
		err = check_ids(t->tids, t->ntids, "thread");
	if (!err && t->cgroup)
		err = check_cgroup(t->cgroup);
	return err;
}

struct pmon_target *pmon_target__new(const struct pmon_target_spec *spec)
{
	struct pmon_target *t;
	int err;

	pmon__clear_detail();
	if (!spec)
		return pmon__ret_ptr(pmon__err(-EINVAL, "pmon_target__new: no spec"), NULL);
	if ((err = PMON_OPTS_CHECK(spec, struct pmon_target_spec, system_wide)))
		return pmon__ret_ptr(err, NULL);
	if (!(t = target_alloc()))
		return pmon__ret_ptr(-ENOMEM, NULL);
	err = target_parse(spec, t);
	if (!err)
		err = target_check(t, PMON_OPTS_GET_NN(spec, online, NULL));
	if (err) {
		pmon_target__free(t);
		return pmon__ret_ptr(err, NULL);
	}
	return t;
}

struct pmon_target *pmon_target__new_pid(pid_t pid)
{
	struct pmon_target *t;

	if (pid < 0)
		return pmon__ret_ptr(pmon__err(-EINVAL, "pmon_target__new_pid: pid %d", (int)pid),
				     NULL);
	if (!(t = target_alloc()))
		return pmon__ret_ptr(-ENOMEM, NULL);
	t->pid = pid;
	return t;
}

struct pmon_target *pmon_target__new_cpus(const int *cpus, size_t n)
{
	struct pmon_target *t = target_alloc();

	if (!t)
		return pmon__ret_ptr(-ENOMEM, NULL);
	t->system_wide = true;
	if (cpus && n) {
		t->cpus = malloc(n * sizeof(*t->cpus));
		if (!t->cpus) {
			pmon_target__free(t);
			return pmon__ret_ptr(-ENOMEM, NULL);
		}
		memcpy(t->cpus, cpus, n * sizeof(*t->cpus));
		t->ncpus = n;
	}
	return t;
}

struct pmon_target *pmon_target__new_cgroup(const char *path)
{
	struct pmon_target *t;
	int err;

	pmon__clear_detail();
	if (!path || !*path)
		return pmon__ret_ptr(pmon__err(-EINVAL, "pmon_target__new_cgroup: no path"), NULL);
	if ((err = check_cgroup(path)))
		return pmon__ret_ptr(err, NULL);
	if (!(t = target_alloc()) || !(t->cgroup = strdup(path))) {
		pmon_target__free(t);
		return pmon__ret_ptr(-ENOMEM, NULL);
	}
	t->system_wide = true;
	return t;
}

enum pmon_target_kind pmon_target__kind(const struct pmon_target *t)
{
	if (!t)
		return PMON_TARGET_NONE;
	if (t->cgroup)
		return PMON_TARGET_CGROUP;
	if (t->ntids)
		return PMON_TARGET_TIDS;
	if (t->npids)
		return PMON_TARGET_PIDS;
	if (t->system_wide)
		return PMON_TARGET_CPUS;
	if (t->pid > 0)
		return PMON_TARGET_PID;
	return t->pid == 0 ? PMON_TARGET_SELF : PMON_TARGET_NONE;
}

const pid_t *pmon_target__pids(const struct pmon_target *t, size_t *n)
{
	*n = t && t->npids ? t->npids : 0;
	return *n ? t->pids : NULL;
}

const pid_t *pmon_target__tids(const struct pmon_target *t, size_t *n)
{
	*n = t && t->ntids ? t->ntids : 0;
	return *n ? t->tids : NULL;
}

const int *pmon_target__cpus(const struct pmon_target *t, size_t *n)
{
	*n = t && t->ncpus ? t->ncpus : 0;
	return *n ? t->cpus : NULL;
}

bool pmon_target__system_wide(const struct pmon_target *t)
{
	return t && t->system_wide;
}

pid_t pmon_target__pid(const struct pmon_target *t)
{
	return t ? t->pid : -1;
}

const char *pmon_target__cgroup(const struct pmon_target *t)
{
	return t ? t->cgroup : NULL;
}

int pmon__open_opts_get(const struct pmon_open_opts *user, struct pmon_open_opts *out)
{
	memset(out, 0, sizeof(*out));
	out->sz = sizeof(*out);
	return PMON_OPTS_COPY(out, user, struct pmon_open_opts, start_disabled);
}
