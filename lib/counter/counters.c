// SPDX-License-Identifier: MIT
/*
 * The perf_event backend (pmon/counter.h): opening an event list on a
 * target, group reads, multiplexing scale, and per-event reasons. Layout:
 * fds and ids are [unit][event] arrays; a unit is one (CPU, thread) pair.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stddef.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include <pmon/counter.h>
#include <pmon/kernel.h>

struct unit {
	int cpu;
	pid_t tid;
};

struct evstate {
	double scale; /* the event's unit scale (looked up once: every read uses it) */
	int err; /* first refusal on any unit */
	int opened; /* units it opened on */
	bool user_only;
	char reason[200];
};

struct pmon_counters {
	const struct pmon_evlist *list;
	size_t nev, nunits;
	struct unit *units;
	int *fd; /* [u * nev + e] */
	uint64_t *id;
	int *leader; /* [u * nev + e]: the event whose fd leads e's group on u */
	struct evstate *st;
	uint64_t *buf;
	size_t buflen;
	double *sum; /* [e]: scaled sums of a read, sized once (no malloc per read) */
	/* Per event: the CPUs its PMU counts on (a hybrid part's cpu_core or
	 * cpu_atom); NULL: every CPU. */
	long **pmu_cpus;
	size_t *npmu_cpus;
	int cgroup_fd; /* the target's cgroup directory while opening, or -1 */
	int *ev_cgroup_fd; /* [e]: -G's cgroup of each event while opening, or -1 */
	struct pmon_open_opts how; /* the caller's, copied at open */
};

static void close_event_cgroups(struct pmon_counters *c);

/* Whether event @e may open on @cpu: perf opens a hybrid PMU's events only
 * on that PMU's CPUs (evsel->pmu->cpus); on the others they would fail, or
 * count nothing, and their time would be "scaled" as if multiplexed. */
static bool pmu_counts_on(const struct pmon_counters *c, size_t e, int cpu)
{
	if (cpu < 0 || !c->pmu_cpus[e])
		return true;
	for (size_t i = 0; i < c->npmu_cpus[e]; i++)
		if (c->pmu_cpus[e][i] == cpu)
			return true;
	return false;
}

static int load_pmu_cpus(struct pmon_counters *c)
{
	c->pmu_cpus = calloc(c->nev, sizeof(*c->pmu_cpus));
	c->npmu_cpus = calloc(c->nev, sizeof(*c->npmu_cpus));
	if (!c->pmu_cpus || !c->npmu_cpus)
		return -ENOMEM;
	for (size_t e = 0; e < c->nev; e++) {
		const char *pmu = pmon_evlist__event(c->list, e)->pmu;
		if (strncmp(pmu, "cpu_", 4))
			continue; /* only the hybrid core PMUs are limited to some CPUs */
		int err = pmon_kernel_pmu_cpus(NULL, pmu, &c->pmu_cpus[e], &c->npmu_cpus[e]);
		if (err == -ENOMEM)
			return err;
	}
	return 0;
}

int pmon_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
			 unsigned long flags, bool user_fallback)
{
	int fd = (int)syscall(SYS_perf_event_open, attr, pid, cpu, group_fd,
			      flags | PERF_FLAG_FD_CLOEXEC);

	if (fd < 0 && (errno == EACCES || errno == EPERM) && user_fallback &&
	    !attr->exclude_kernel) {
		/* perf_event_paranoid >= 2 allows user-space counting only. */
		attr->exclude_kernel = 1;
		attr->exclude_hv = 1;
		fd = (int)syscall(SYS_perf_event_open, attr, pid, cpu, group_fd,
				  flags | PERF_FLAG_FD_CLOEXEC);
	}
	return fd;
}

static bool core_pmu_present(void)
{
	return pmon_kernel_has_core_pmu(NULL);
}

static int paranoid(void)
{
	long v;

	return pmon__read_long("/proc/sys/kernel/perf_event_paranoid", &v) ? INT_MIN : (int)v;
}

/* The owner of thread @tid, or -1 when it cannot be told. */
static long thread_uid(pid_t tid)
{
	char path[64];
	struct stat st;

	pmon__fmt(path, sizeof(path), "/proc/%d", (int)tid);
	return stat(path, &st) ? -1 : (long)st.st_uid;
}

/* Why the kernel refused @d on thread @tid (-1: every task of a CPU) for
 * rights: the check that failed, as perf_event_open(2) makes them
 * (perf_event_paranoid_check() for CPU-wide events, ptrace_may_access()
 * for another user's task), and what would allow it. */
static void rights_reason(struct evstate *st, pid_t tid)
{
	int p = paranoid();
	long uid = tid > 0 ? thread_uid(tid) : -1;

	if (geteuid() == 0)
		pmon__fmt(st->reason, sizeof(st->reason),
			  "the kernel refuses it even to root (EACCES: an event it keeps for "
			  "itself, or a security module's rule)");
	else if (tid == -1)
		pmon__fmt(st->reason, sizeof(st->reason),
			  "counting every task of a CPU needs root or CAP_PERFMON at "
			  "perf_event_paranoid %d (above 0); this user's own processes can be "
			  "counted without",
			  p);
	else if (uid >= 0 && (uid_t)uid != geteuid())
		pmon__fmt(st->reason, sizeof(st->reason),
			  "thread %d belongs to another user (uid %ld): counting it needs root, "
			  "CAP_PERFMON or the right to ptrace it",
			  (int)tid, uid);
	else
		pmon__fmt(st->reason, sizeof(st->reason),
			  "perf_event_paranoid = %d forbids it; run as root, grant CAP_PERFMON, "
			  "or lower /proc/sys/kernel/perf_event_paranoid",
			  p);
}

static void set_reason(struct evstate *st, const struct pmon_event_desc *d, int err, pid_t tid)
{
	const char *hw = d->needs_core_pmu && !core_pmu_present()
		? "this machine exposes no hardware PMU"
		: NULL;

	switch (-err) {
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		if (hw)
			pmon__strlcpy(st->reason, hw, sizeof(st->reason));
		else
			pmon__fmt(st->reason, sizeof(st->reason),
				  "the kernel does not support this event here (%s)",
				  strerrorname_np(-err) ? strerrorname_np(-err) : "?");
		break;
	case EACCES:
	case EPERM:
		rights_reason(st, tid);
		break;
	case EBUSY:
		pmon__strlcpy(st->reason, "the counter is held by another user (EBUSY)",
			      sizeof(st->reason));
		break;
	case EMFILE:
		pmon__strlcpy(st->reason, "too many open files: raise 'ulimit -n'",
			      sizeof(st->reason));
		break;
	case EINVAL:
		pmon__fmt(st->reason, sizeof(st->reason),
			  "the kernel rejected its settings (EINVAL)%s",
			  hw ? "; this machine exposes no hardware PMU" : "");
		break;
	default:
		pmon__fmt(st->reason, sizeof(st->reason), "%s", strerror(-err));
	}
}

/* Threads of @pid from /proc/PID/task. */
static int list_threads(pid_t pid, pid_t **out, size_t *n)
{
	char path[64];
	DIR *d;
	struct dirent *de;
	size_t cap = 16;
	pid_t *t = malloc(cap * sizeof(*t));

	if (!t)
		return -ENOMEM;
	pmon__fmt(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d) {
		free(t);
		return pmon__err(-ESRCH, "process %d does not exist", (int)pid);
	}
	*n = 0;
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if (*n == cap) {
			pid_t *nt = realloc(t, (cap *= 2) * sizeof(*t));
			if (!nt) {
				closedir(d);
				free(t);
				return -ENOMEM;
			}
			t = nt;
		}
		t[(*n)++] = (pid_t)strtol(de->d_name, NULL, 10);
	}
	closedir(d);
	*out = t;
	return 0;
}

/* Every thread of every process of @pids, in order. */
static int list_processes(const pid_t *pids, size_t npids, pid_t **out, size_t *n)
{
	pid_t *all = NULL;
	size_t nall = 0;

	for (size_t i = 0; i < npids; i++) {
		pid_t *t = NULL, *na;
		size_t nt = 0;
		int err = pids[i] > 0
			? list_threads(pids[i], &t, &nt)
			: pmon__err(-ESRCH, "process %d does not exist", (int)pids[i]);
		if (err) {
			free(all);
			return err;
		}
		if (!nt) { /* a process that has just ended */
			free(t);
			continue;
		}
		na = realloc(all, (nall + nt) * sizeof(*all));
		if (!na) {
			free(t);
			free(all);
			return -ENOMEM;
		}
		all = na;
		memcpy(all + nall, t, nt * sizeof(*t));
		nall += nt;
		free(t);
	}
	*out = all;
	*n = nall;
	return 0;
}

static int online_cpus(int **out, size_t *n)
{
	char buf[4096];
	long len = pmon__read_text("/sys/devices/system/cpu/online", buf, sizeof(buf));
	size_t cap = 64;
	int *cpus = malloc(cap * sizeof(*cpus));

	if (!cpus)
		return -ENOMEM;
	*n = 0;
	if (len <= 0) {
		long nc = sysconf(_SC_NPROCESSORS_ONLN);
		snprintf(buf, sizeof(buf), "0-%ld", nc > 0 ? nc - 1 : 0);
	}
	for (char *p = buf; *p;) {
		char *end;
		long a = strtol(p, &end, 10), b = a;
		if (end == p)
			break;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (long c = a; c <= b; c++) {
			if (*n == cap) {
				int *nc = realloc(cpus, (cap *= 2) * sizeof(*cpus));
				if (!nc) {
					free(cpus);
					return -ENOMEM;
				}
				cpus = nc;
			}
			cpus[(*n)++] = (int)c;
		}
		p = *end == ',' ? end + 1 : end;
	}
	*out = cpus;
	return 0;
}

int pmon_target__threads(const struct pmon_target *t, bool enable_on_exec, pid_t **out, size_t *n)
{
	pid_t *tids;

	*out = NULL;
	*n = 0;
	if (!t)
		return pmon__err(-EINVAL, "no target");
	if (t->tids && t->ntids) {
		for (size_t i = 0; i < t->ntids; i++) {
			char path[64];
			pmon__fmt(path, sizeof(path), "/proc/%d", (int)t->tids[i]);
			if (t->tids[i] <= 0 || access(path, F_OK))
				return pmon__err(-ESRCH, "thread %d does not exist",
						 (int)t->tids[i]);
		}
		tids = malloc(t->ntids * sizeof(*tids));
		if (!tids)
			return -ENOMEM;
		memcpy(tids, t->tids, t->ntids * sizeof(*tids));
		*out = tids;
		*n = t->ntids;
		return 0;
	}
	if (t->npids && t->pids)
		return list_processes(t->pids, t->npids, out, n);
	if (t->pid > 0 && !enable_on_exec && !t->system_wide)
		return list_threads(t->pid, out, n);
	tids = malloc(sizeof(*tids));
	if (!tids)
		return -ENOMEM;
	/* A child started on exec (its threads are inherited), the caller, or
	 * every task (-1) */
	tids[0] = t->system_wide ? -1 : t->pid > 0 ? t->pid : 0;
	*out = tids;
	*n = 1;
	return 0;
}

static int build_units(struct pmon_counters *c, const struct pmon_target *t)
{
	pid_t *tids = NULL;
	size_t ntids = 0, ncpus = 0;
	int *cpus = NULL, any[1] = { -1 }, err;
	bool own_tids = true, own_cpus = false;

	if (c->cgroup_fd >= 0) {
		/* cgroup mode: pid is the cgroup, on every CPU */
		tids = malloc(sizeof(*tids));
		if (!tids)
			return -ENOMEM;
		tids[0] = -1;
		ntids = 1;
	} else {
		err = pmon_target__threads(t, c->how.enable_on_exec, &tids, &ntids);
		if (err)
			return err;
	}
	if (t->cpus && t->ncpus) {
		cpus = (int *)t->cpus;
		ncpus = t->ncpus;
	} else if (t->system_wide || c->cgroup_fd >= 0) {
		err = online_cpus(&cpus, &ncpus);
		if (err)
			goto out;
		own_cpus = true;
	} else {
		cpus = any;
		ncpus = 1;
	}
	c->nunits = ntids * ncpus;
	c->units = calloc(c->nunits, sizeof(*c->units));
	err = c->units ? 0 : -ENOMEM;
	for (size_t i = 0; !err && i < ntids; i++)
		for (size_t k = 0; k < ncpus; k++)
			c->units[i * ncpus + k] = (struct unit){ cpus[k], tids[i] };
out:
	if (own_tids)
		free(tids);
	if (own_cpus)
		free(cpus);
	return err;
}

void pmon_counters__close(struct pmon_counters *c)
{
	if (!c)
		return;
	if (c->cgroup_fd >= 0)
		close(c->cgroup_fd);
	close_event_cgroups(c);
	for (size_t i = 0; c->fd && i < c->nunits * c->nev; i++)
		if (c->fd[i] >= 0)
			close(c->fd[i]);
	free(c->units);
	free(c->fd);
	free(c->id);
	free(c->leader);
	free(c->st);
	free(c->buf);
	free(c->sum);
	for (size_t e = 0; c->pmu_cpus && e < c->nev; e++)
		free(c->pmu_cpus[e]);
	free(c->pmu_cpus);
	free(c->npmu_cpus);
	free(c);
}

static int open_one(struct pmon_counters *c, size_t u, size_t e)
{
	const struct pmon_event_desc *d = pmon_evlist__event(c->list, e);
	struct perf_event_attr a = d->attr;
	size_t base = u * c->nev;
	int lead = -1, fd;

	/* The group's leader on this unit: the first member that opened. */
	for (size_t k = (size_t)d->group; k < e; k++) {
		if (pmon_evlist__event(c->list, k)->group == d->group && c->fd[base + k] >= 0) {
			lead = (int)k;
			break;
		}
	}
	c->leader[base + e] = lead < 0 ? (int)e : lead;
	if (!pmu_counts_on(c, e, c->units[u].cpu))
		return 0; /* not this PMU's CPU: no counter, no refusal */
	a.size = sizeof(a);
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
		PERF_FORMAT_ID | PERF_FORMAT_GROUP;
	a.inherit = c->how.inherit;
	/* Leaders start disabled: a sibling added to a running group is not
	 * scheduled until the group is next switched in, so it would miss
	 * counts. The whole group is enabled once every member exists. */
	a.disabled = lead < 0;
	/* enable_on_exec fires for the events of the task that calls exec
	 * (perf_event_enable_on_exec() walks that task's contexts): a CPU-wide
	 * event (pid -1) would never start. Those wait for pmon_counters__enable(). */
	a.enable_on_exec = lead < 0 && c->how.enable_on_exec && c->units[u].tid != -1;

	bool ex = a.exclude_kernel;
	int cg = c->ev_cgroup_fd && c->ev_cgroup_fd[e] >= 0 ? c->ev_cgroup_fd[e] : c->cgroup_fd;
	fd = pmon_perf_event_open(&a, cg >= 0 ? cg : c->units[u].tid, c->units[u].cpu,
				  lead < 0 ? -1 : c->fd[base + lead],
				  cg >= 0 ? PERF_FLAG_PID_CGROUP : 0,
				  !(d->mods & (PMON_MOD_U | PMON_MOD_K | PMON_MOD_H)));
	if (fd >= 0 && a.exclude_kernel && !ex) {
		if (!c->st[e].user_only) {
			c->st[e].user_only = true;
			pmon__fmt(
				c->st[e].reason, sizeof(c->st[e].reason),
				"user space only: perf_event_paranoid = %d forbids kernel counting",
				paranoid());
		}
	}
	if (fd < 0) {
		int err = -errno;
		if (err == -ESRCH)
			return pmon__err(-ESRCH, "the target (thread %d) no longer exists",
					 (int)c->units[u].tid);
		if (!c->st[e].err) {
			c->st[e].err = err;
			set_reason(&c->st[e], d, err, cg >= 0 ? -1 : c->units[u].tid);
		}
		return 0;
	}
	const char *filter = pmon_evlist__filter(c->list, e);
	if (filter && ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter)) {
		int err = errno;
		close(fd);
		/* The user's text: bad input, as a bad event name is. */
		return pmon__err(-PMON_ERRNO__EVENT_SYNTAX,
				 "the kernel refused the filter '%s' of '%s': %s (the syntax and "
				 "fields: Documentation/trace/events.rst, 'Event filtering')",
				 filter, d->name, strerror(err));
	}
	c->fd[base + e] = fd;
	c->st[e].opened++;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &c->id[base + e]))
		c->id[base + e] = 0;
	return 0;
}

static void close_event_cgroups(struct pmon_counters *c)
{
	for (size_t e = 0; c->ev_cgroup_fd && e < c->nev; e++)
		if (c->ev_cgroup_fd[e] >= 0)
			close(c->ev_cgroup_fd[e]);
	free(c->ev_cgroup_fd);
	c->ev_cgroup_fd = NULL;
}

/* -G: each event's cgroup opened once; each counter takes its own
 * reference (perf_cgroup_connect()), so they are closed once all are open.
 * Per-cgroup counting is per CPU: every unit must be CPU-wide. */
static int open_event_cgroups(struct pmon_counters *c)
{
	for (size_t e = 0; e < c->nev; e++) {
		const char *dir = pmon_evlist__cgroup(c->list, e);
		if (!dir)
			continue;
		for (size_t u = 0; u < c->nunits; u++)
			if (c->units[u].tid != -1 || c->cgroup_fd >= 0)
				return pmon__err(-EINVAL,
						 "-G counts a cgroup's tasks per CPU: it "
						 "needs CPU-wide counters (-a or -C)");
		if (!c->ev_cgroup_fd) {
			if (!(c->ev_cgroup_fd = malloc(c->nev * sizeof(*c->ev_cgroup_fd))))
				return -ENOMEM;
			for (size_t k = 0; k < c->nev; k++)
				c->ev_cgroup_fd[k] = -1;
		}
		c->ev_cgroup_fd[e] = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (c->ev_cgroup_fd[e] < 0) {
			int err = errno;
			return pmon__err(-err, "cannot open cgroup '%s': %s", dir, strerror(err));
		}
	}
	return 0;
}

struct pmon_counters *pmon_counters__open(const struct pmon_evlist *events,
					  const struct pmon_target *t,
					  const struct pmon_open_opts *opts)
{
	struct pmon_open_opts how;
	struct pmon_counters *c;
	int err = 0;

	pmon__clear_detail();
	if (!events || !t || !pmon_evlist__count(events)) {
		pmon__detail("pmon_counters__open: %s",
			     !events || !pmon_evlist__count(events) ? "no events" : "no target");
		errno = EINVAL;
		return NULL;
	}
	if ((err = pmon__open_opts_get(opts, &how))) {
		errno = -err;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->list = events;
	c->nev = pmon_evlist__count(events);
	c->cgroup_fd = -1;
	c->how = how;
	if (t->cgroup) {
		/* Each event takes its own reference to the cgroup
		 * (perf_cgroup_connect()): the directory is closed once all are open. */
		c->cgroup_fd = open(t->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (c->cgroup_fd < 0) {
			int e = errno;
			err = pmon__err(-e, "cannot open cgroup '%s': %s", t->cgroup, strerror(e));
			goto fail;
		}
	}
	err = build_units(c, t);
	if (!err)
		err = load_pmu_cpus(c);
	if (err)
		goto fail;
	c->fd = malloc(c->nunits * c->nev * sizeof(*c->fd));
	c->id = calloc(c->nunits * c->nev, sizeof(*c->id));
	c->leader = calloc(c->nunits * c->nev, sizeof(*c->leader));
	c->st = calloc(c->nev, sizeof(*c->st));
	c->buflen = 3 + 2 * c->nev;
	c->buf = calloc(c->buflen, sizeof(*c->buf));
	c->sum = calloc(c->nev, sizeof(*c->sum));
	if (!c->fd || !c->id || !c->leader || !c->st || !c->buf || !c->sum) {
		err = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < c->nunits * c->nev; i++)
		c->fd[i] = -1;
	for (size_t e = 0; e < c->nev; e++)
		c->st[e].scale = pmon_evlist__event(events, e)->scale;
	if (!err)
		err = open_event_cgroups(c);
	for (size_t u = 0; u < c->nunits && !err; u++)
		for (size_t e = 0; e < c->nev && !err; e++)
			err = open_one(c, u, e);
	if (c->cgroup_fd >= 0) {
		close(c->cgroup_fd);
		c->cgroup_fd = -1;
	}
	close_event_cgroups(c);
	if (err)
		goto fail;
	size_t opened = 0;
	for (size_t e = 0; e < c->nev; e++)
		opened += c->st[e].opened > 0;
	if (opened && !how.enable_on_exec && !how.start_disabled) {
		/* (with enable_on_exec, CPU-wide units wait for the caller's enable) */
		err = pmon_counters__enable(c);
		if (err) {
			pmon__err(err, "cannot enable the counters: %s", strerror(-err));
			goto fail;
		}
	}
	if (!opened) {
		const struct pmon_event_desc *d = pmon_evlist__event(events, 0);
		err = pmon__err(c->st[0].err ? c->st[0].err : -ENOENT, "cannot open '%s': %s",
				d->name, c->st[0].reason);
		goto fail;
	}
	return c;
fail:
	pmon_counters__close(c);
	errno = -err;
	return NULL;
}

static int ioctl_leaders(struct pmon_counters *c, unsigned long req)
{
	for (size_t u = 0; u < c->nunits; u++)
		for (size_t e = 0; e < c->nev; e++) {
			size_t i = u * c->nev + e;
			if (c->fd[i] >= 0 && c->leader[i] == (int)e &&
			    ioctl(c->fd[i], req, PERF_IOC_FLAG_GROUP))
				return -errno;
		}
	return 0;
}

int pmon_counters__enable(struct pmon_counters *c)
{
	return ioctl_leaders(c, PERF_EVENT_IOC_ENABLE);
}

int pmon_counters__disable(struct pmon_counters *c)
{
	return ioctl_leaders(c, PERF_EVENT_IOC_DISABLE);
}

size_t pmon_counters__nunits(const struct pmon_counters *c)
{
	return c->nunits;
}

void pmon_counters__unit(const struct pmon_counters *c, size_t u, int *cpu, pid_t *tid)
{
	*cpu = u < c->nunits ? c->units[u].cpu : -1;
	*tid = u < c->nunits ? c->units[u].tid : -1;
}

/* Scale @raw by enabled/running without overflow (multiplexing). */
static double scaled(uint64_t raw, uint64_t enabled, uint64_t running)
{
	if (!running || running >= enabled)
		return (double)raw;
	return (double)raw * ((double)enabled / (double)running);
}

/* Read unit @u: add each event's raw/enabled/running/scaled into @acc.
 * A group's values come in the order its members were attached to the
 * leader (the leader first, then perf_group_attach()'s list_add_tail(),
 * which is the order open_one() made them: perf_read_group() and
 * __perf_read_group_add() in kernel/events/core.c). Each value is matched
 * to the next member by position and checked by id; only a mismatch
 * (never seen) searches the group. */
static int read_unit(struct pmon_counters *c, size_t u, struct pmon_count *acc, double *sum)
{
	size_t base = u * c->nev;

	for (size_t e = 0; e < c->nev; e++) {
		int fd = c->fd[base + e];
		ssize_t n;

		if (fd < 0 || c->leader[base + e] != (int)e)
			continue;
		n = read(fd, c->buf, c->buflen * sizeof(uint64_t));
		if (n < 0)
			return pmon__err(-errno, "reading '%s': %s",
					 pmon_evlist__event(c->list, e)->name, strerror(errno));
		if (n < 3 * 8 || (size_t)n < (3 + 2 * c->buf[0]) * 8)
			return pmon__err(-EIO, "reading '%s': short read of %zd bytes",
					 pmon_evlist__event(c->list, e)->name, n);
		uint64_t nr = c->buf[0], ena = c->buf[1], run = c->buf[2];
		size_t next = e; /* the member expected at the next position */
		for (uint64_t k = 0; k < nr; k++) {
			uint64_t val = c->buf[3 + 2 * k], id = c->buf[4 + 2 * k];
			size_t m = next;
			while (m < c->nev && (c->fd[base + m] < 0 || c->leader[base + m] != (int)e))
				m++;
			if (m >= c->nev || c->id[base + m] != id) {
				for (m = e; m < c->nev; m++)
					if (c->fd[base + m] >= 0 && c->leader[base + m] == (int)e &&
					    c->id[base + m] == id)
						break;
				if (m >= c->nev)
					continue; /* not one of ours */
			}
			next = m + 1;
			acc[m].raw += val;
			acc[m].enabled += ena;
			acc[m].running += run;
			sum[m] += scaled(val, ena, run);
		}
	}
	return 0;
}

static void finish(struct pmon_counters *c, struct pmon_count *out, const double *sum)
{
	for (size_t e = 0; e < c->nev; e++) {
		struct pmon_count *o = &out[e];

		o->user_only = c->st[e].user_only;
		o->reason = c->st[e].reason[0] ? c->st[e].reason : NULL;
		if (!c->st[e].opened) {
			o->status = PMON_COUNT_NOT_SUPPORTED;
			o->err = c->st[e].err;
			continue;
		}
		o->status = o->running ? PMON_COUNT_OK : PMON_COUNT_NOT_COUNTED;
		o->running_pct = o->enabled ? 100.0 * (double)o->running / (double)o->enabled : 0;
		o->value = sum[e] * c->st[e].scale;
	}
}

int pmon_counters__read(struct pmon_counters *c, struct pmon_count *out)
{
	int err = 0;

	memset(out, 0, c->nev * sizeof(*out));
	memset(c->sum, 0, c->nev * sizeof(*c->sum));
	for (size_t u = 0; u < c->nunits && !err; u++)
		err = read_unit(c, u, out, c->sum);
	if (!err)
		finish(c, out, c->sum);
	return err;
}

int pmon_counters__read_unit(struct pmon_counters *c, size_t u, struct pmon_count *out)
{
	int err;

	if (u >= c->nunits)
		return -ERANGE;
	memset(out, 0, c->nev * sizeof(*out));
	memset(c->sum, 0, c->nev * sizeof(*c->sum));
	err = read_unit(c, u, out, c->sum);
	if (!err)
		finish(c, out, c->sum);
	return err;
}
