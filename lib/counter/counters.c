// SPDX-License-Identifier: MIT
/*
 * The perf_event backend (pmon/counter.h): opening an event list on a
 * target, group reads, multiplexing scale, and per-event reasons. Layout:
 * fds and ids are [unit][event] arrays; a unit is one (CPU, thread) pair.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include <pmon/counter.h>

struct unit {
	int cpu;
	pid_t tid;
};

struct evstate {
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
};

static int perf_open(struct perf_event_attr *a, pid_t pid, int cpu, int group)
{
	return (int)syscall(SYS_perf_event_open, a, pid, cpu, group, PERF_FLAG_FD_CLOEXEC);
}

static bool core_pmu_present(void)
{
	return access("/sys/bus/event_source/devices/cpu/type", F_OK) == 0 ||
		access("/sys/bus/event_source/devices/cpu_core/type", F_OK) == 0;
}

static int paranoid(void)
{
	long v;

	return pmon__read_long("/proc/sys/kernel/perf_event_paranoid", &v) ? INT_MIN : (int)v;
}

static void set_reason(struct evstate *st, const struct pmon_event_desc *d, int err)
{
	const char *hw = d->needs_core_pmu && !core_pmu_present()
		? "this machine exposes no hardware PMU (see 'pmon info')"
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
		pmon__fmt(st->reason, sizeof(st->reason),
			  "perf_event_paranoid = %d forbids it; run as root, grant CAP_PERFMON, "
			  "or lower /proc/sys/kernel/perf_event_paranoid",
			  paranoid());
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

static int build_units(struct pmon_counters *c, const struct pmon_target *t)
{
	pid_t *tids = NULL, one[1];
	size_t ntids = 0, ncpus = 0;
	int *cpus = NULL, any[1] = { -1 }, err;
	bool own_tids = false, own_cpus = false;

	if (t->tids && t->ntids) {
		tids = (pid_t *)t->tids;
		ntids = t->ntids;
		for (size_t i = 0; i < ntids; i++) {
			char path[64];
			pmon__fmt(path, sizeof(path), "/proc/%d", (int)tids[i]);
			if (tids[i] <= 0 || access(path, F_OK))
				return pmon__err(-ESRCH, "thread %d does not exist", (int)tids[i]);
		}
	} else if (t->system_wide) {
		one[0] = -1;
		tids = one;
		ntids = 1;
	} else if (t->pid > 0 && !t->enable_on_exec) {
		err = list_threads(t->pid, &tids, &ntids);
		if (err)
			return err;
		own_tids = true;
	} else {
		one[0] = t->pid > 0 ? t->pid : 0;
		tids = one;
		ntids = 1;
	}
	if (t->cpus && t->ncpus) {
		cpus = (int *)t->cpus;
		ncpus = t->ncpus;
	} else if (t->system_wide) {
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
	for (size_t i = 0; c->fd && i < c->nunits * c->nev; i++)
		if (c->fd[i] >= 0)
			close(c->fd[i]);
	free(c->units);
	free(c->fd);
	free(c->id);
	free(c->leader);
	free(c->st);
	free(c->buf);
	free(c);
}

static int open_one(struct pmon_counters *c, size_t u, size_t e, const struct pmon_target *t)
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
	a.size = sizeof(a);
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
		PERF_FORMAT_ID | PERF_FORMAT_GROUP;
	a.inherit = t->inherit;
	/* Leaders start disabled: a sibling added to a running group is not
	 * scheduled until the group is next switched in, so it would miss
	 * counts. The whole group is enabled once every member exists. */
	a.disabled = lead < 0;
	a.enable_on_exec = lead < 0 && t->enable_on_exec;

	fd = perf_open(&a, c->units[u].tid, c->units[u].cpu, lead < 0 ? -1 : c->fd[base + lead]);
	if (fd < 0 && (errno == EACCES || errno == EPERM) && !a.exclude_kernel &&
	    !(d->mods & (PMON_MOD_U | PMON_MOD_K | PMON_MOD_H))) {
		/* perf_event_paranoid >= 2 allows user-space counting only. */
		a.exclude_kernel = 1;
		a.exclude_hv = 1;
		fd = perf_open(&a, c->units[u].tid, c->units[u].cpu,
			       lead < 0 ? -1 : c->fd[base + lead]);
		if (fd >= 0 && !c->st[e].user_only) {
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
			set_reason(&c->st[e], d, err);
		}
		return 0;
	}
	c->fd[base + e] = fd;
	c->st[e].opened++;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &c->id[base + e]))
		c->id[base + e] = 0;
	return 0;
}

struct pmon_counters *pmon_counters__open(const struct pmon_evlist *events,
					  const struct pmon_target *t)
{
	struct pmon_counters *c;
	int err = 0;

	pmon__clear_detail();
	if (!events || !t || t->sz < sizeof(size_t) || t->sz > sizeof(*t) ||
	    !pmon_evlist__count(events)) {
		pmon__detail("pmon_counters__open: %s",
			     !events || !pmon_evlist__count(events) ? "no events" : "bad target");
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->list = events;
	c->nev = pmon_evlist__count(events);
	err = build_units(c, t);
	if (err)
		goto fail;
	c->fd = malloc(c->nunits * c->nev * sizeof(*c->fd));
	c->id = calloc(c->nunits * c->nev, sizeof(*c->id));
	c->leader = calloc(c->nunits * c->nev, sizeof(*c->leader));
	c->st = calloc(c->nev, sizeof(*c->st));
	c->buflen = 3 + 2 * c->nev;
	c->buf = calloc(c->buflen, sizeof(*c->buf));
	if (!c->fd || !c->id || !c->leader || !c->st || !c->buf) {
		err = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < c->nunits * c->nev; i++)
		c->fd[i] = -1;
	for (size_t u = 0; u < c->nunits && !err; u++)
		for (size_t e = 0; e < c->nev && !err; e++)
			err = open_one(c, u, e, t);
	if (err)
		goto fail;
	size_t opened = 0;
	for (size_t e = 0; e < c->nev; e++)
		opened += c->st[e].opened > 0;
	if (opened && !t->enable_on_exec && !t->start_disabled) {
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

/* Read unit @u: add each event's raw/enabled/running/scaled into @acc. */
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
		for (uint64_t k = 0; k < nr; k++) {
			uint64_t val = c->buf[3 + 2 * k], id = c->buf[4 + 2 * k];
			for (size_t m = e; m < c->nev; m++) {
				if (c->fd[base + m] < 0 || c->leader[base + m] != (int)e ||
				    c->id[base + m] != id)
					continue;
				acc[m].raw += val;
				acc[m].enabled += ena;
				acc[m].running += run;
				sum[m] += scaled(val, ena, run);
				break;
			}
		}
	}
	return 0;
}

static void finish(struct pmon_counters *c, struct pmon_count *out, const double *sum)
{
	for (size_t e = 0; e < c->nev; e++) {
		const struct pmon_event_desc *d = pmon_evlist__event(c->list, e);
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
		o->value = sum[e] * d->scale;
	}
}

int pmon_counters__read(struct pmon_counters *c, struct pmon_count *out)
{
	double *sum = calloc(c->nev, sizeof(*sum));
	int err = 0;

	if (!sum)
		return -ENOMEM;
	memset(out, 0, c->nev * sizeof(*out));
	for (size_t u = 0; u < c->nunits && !err; u++)
		err = read_unit(c, u, out, sum);
	if (!err)
		finish(c, out, sum);
	free(sum);
	return err;
}

int pmon_counters__read_unit(struct pmon_counters *c, size_t u, struct pmon_count *out)
{
	double *sum;
	int err;

	if (u >= c->nunits)
		return -ERANGE;
	sum = calloc(c->nev, sizeof(*sum));
	if (!sum)
		return -ENOMEM;
	memset(out, 0, c->nev * sizeof(*out));
	err = read_unit(c, u, out, sum);
	if (!err)
		finish(c, out, sum);
	free(sum);
	return err;
}
