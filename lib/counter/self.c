// SPDX-License-Identifier: MIT
/*
 * Self-monitoring reads (pmon/counter.h): the perf_event_mmap_page protocol
 * with rdpmc, and the read() fallback. The protocol follows the kernel's
 * documentation in include/uapi/linux/perf_event.h and libperf's
 * perf_mmap__read_self; the instructions are injectable for tests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include <pmon/arch.h>
#include <pmon/clock.h>
#include <pmon/counter.h>
#include <pmon/kernel.h>
#include <pmon/rdpmc.h>

#define barrier() __asm__ __volatile__("" ::: "memory")

static uint64_t real_rdpmc(uint32_t c)
{
	return pmon_rdpmc(c);
}

static uint64_t real_rdtsc(void)
{
	return pmon_rdtsc();
}

static const struct pmon_mmap_ops real_ops = { real_rdpmc, real_rdtsc };

int pmon_mmap_read(const volatile struct perf_event_mmap_page *pc, const struct pmon_mmap_ops *ops,
		   struct pmon_self_count *out)
{
	uint32_t seq, idx;
	uint64_t ena, run, cnt, cyc = 0;
	struct pmon_perf_tsc tc = { 0 }; /* the TSC scaling, lib/clock/clock.c */

	if (!ops)
		ops = &real_ops;
	do {
		seq = pc->lock;
		barrier();
		ena = pc->time_enabled;
		run = pc->time_running;
		if (pc->cap_user_time && ena != run) {
			cyc = ops->rdtsc();
			tc.mult = pc->time_mult;
			tc.shift = pc->time_shift;
			tc.offset = pc->time_offset;
			if (pc->cap_user_time_short) {
				tc.cap_time_short = true;
				tc.cycles = pc->time_cycles;
				tc.mask = pc->time_mask;
			}
		}
		idx = pc->index;
		cnt = pc->offset;
		/* index is the hardware counter + 1; 0 means not on a counter now. */
		if (!pc->cap_user_rdpmc || !idx)
			return -EOPNOTSUPP;
		cnt += (uint64_t)pmon_pmc_sign_extend(ops->rdpmc(idx - 1), pc->pmc_width);
		barrier();
	} while (pc->lock != seq);

	if (ena != run) {
		uint64_t delta = tc.offset + pmon_perf_tsc__scale(&tc, cyc);
		ena += delta;
		if (idx)
			run += delta;
	}
	out->value = cnt;
	out->enabled = ena;
	out->running = run;
	out->via_rdpmc = true;
	return 0;
}

struct pmon_self {
	int fd;
	struct perf_event_mmap_page *pc;
	size_t len;
};

static int self_open(const struct pmon_event_desc *ev, struct pmon_self **out)
{
	struct perf_event_attr a = ev->attr;
	struct pmon_self *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	a.size = sizeof(a);
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	s->fd = pmon_perf_event_open(&a, 0, -1, -1, 0, true);
	if (s->fd < 0) {
		int e = -errno;
		free(s);
		return pmon__err(e, "cannot open '%s' on this thread: %s", ev->name, strerror(-e));
	}
	s->len = (size_t)sysconf(_SC_PAGESIZE);
	s->pc = mmap(NULL, s->len, PROT_READ, MAP_SHARED, s->fd, 0);
	if (s->pc == MAP_FAILED)
		s->pc = NULL; /* read() still works */
	*out = s;
	return 0;
}

struct pmon_self *pmon_self__open(const struct pmon_event_desc *ev)
{
	struct pmon_self *s = NULL;

	int err = self_open(ev, &s);

	return pmon__ret_ptr(err, s);
}

int pmon_self__read(struct pmon_self *s, struct pmon_self_count *out)
{
	uint64_t v[3];

	if (s->pc && pmon_mmap_read(s->pc, NULL, out) == 0)
		return 0;
	if (read(s->fd, v, sizeof(v)) != (ssize_t)sizeof(v))
		return -errno ? -errno : -EIO;
	out->value = v[0];
	out->enabled = v[1];
	out->running = v[2];
	out->via_rdpmc = false;
	return 0;
}

void pmon_self__close(struct pmon_self *s)
{
	if (!s)
		return;
	if (s->pc)
		munmap(s->pc, s->len);
	close(s->fd);
	free(s);
}

/* ---- pmon_selfgroup ---------------------------------------------------- */

struct pmon_selfgroup {
	size_t n;
	bool rdpmc;
	const char *why;
	bool multiplexed;
	int *fd;
	struct perf_event_mmap_page **pc;
	uint64_t *buf; /* nr, enabled, running, values... */
	size_t pagelen;
};

void pmon_selfgroup__close(struct pmon_selfgroup *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n; i++) {
		if (g->pc && g->pc[i])
			munmap(g->pc[i], g->pagelen);
		if (g->fd && g->fd[i] >= 0)
			close(g->fd[i]);
	}
	free(g->fd);
	free(g->pc);
	free(g->buf);
	free(g);
}

static int selfgroup_open(const struct pmon_evlist *events, struct pmon_selfgroup **out)
{
	struct pmon_selfgroup *g = calloc(1, sizeof(*g));
	int err = 0;

	if (!g)
		return -ENOMEM;
	g->n = pmon_evlist__count(events);
	g->fd = malloc(g->n * sizeof(*g->fd));
	g->pc = calloc(g->n, sizeof(*g->pc));
	g->buf = calloc(3 + g->n, sizeof(*g->buf));
	g->pagelen = (size_t)sysconf(_SC_PAGESIZE);
	if (!g->fd || !g->pc || !g->buf) {
		pmon_selfgroup__close(g);
		return -ENOMEM;
	}
	for (size_t i = 0; i < g->n; i++)
		g->fd[i] = -1;
	g->rdpmc = g->n > 0;
	for (size_t i = 0; i < g->n && !err; i++) {
		const struct pmon_event_desc *d = pmon_evlist__event(events, i);
		struct perf_event_attr a = d->attr;

		a.size = sizeof(a);
		a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
			PERF_FORMAT_TOTAL_TIME_RUNNING;
		a.disabled = i == 0; /* enabled as a whole once complete */
		a.inherit = 0;
		int fd = pmon_perf_event_open(&a, 0, -1, i ? g->fd[0] : -1, 0,
					      !(d->mods & (PMON_MOD_U | PMON_MOD_K | PMON_MOD_H)));
		if (fd < 0) {
			int e = -errno;
			bool hw = d->needs_core_pmu && !pmon_kernel_has_core_pmu(NULL);
			err = pmon__err(e, "cannot open '%s' on this thread: %s", d->name,
					hw ? "this machine exposes no hardware PMU" : strerror(-e));
			break;
		}
		g->fd[i] = fd;
		g->pc[i] = mmap(NULL, g->pagelen, PROT_READ, MAP_SHARED, fd, 0);
		if (g->pc[i] == MAP_FAILED)
			g->pc[i] = NULL;
	}
	if (!err && g->n && ioctl(g->fd[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP))
		err = pmon__err(-errno, "cannot enable the events: %s", strerror(errno));
	if (err) {
		pmon_selfgroup__close(g);
		return err;
	}
	/* rdpmc only if every page allows it now; a software event never does. */
	for (size_t i = 0; i < g->n && g->rdpmc; i++) {
		if (!g->pc[i] || !g->pc[i]->cap_user_rdpmc) {
			g->rdpmc = false;
			g->why = g->pc[i] ? "the kernel's page says cap_user_rdpmc = 0 (a software "
					    "event, or rdpmc disabled)"
					  : "the event could not be mmapped";
		}
	}
	*out = g;
	return 0;
}

struct pmon_selfgroup *pmon_selfgroup__open(const struct pmon_evlist *events)
{
	struct pmon_selfgroup *g = NULL;

	int err = selfgroup_open(events, &g);

	return pmon__ret_ptr(err, g);
}

int pmon_selfgroup__read_times(struct pmon_selfgroup *g, uint64_t *v, uint64_t *enabled,
			       uint64_t *running)
{
	uint64_t en = 0, run = 0;

	if (g->rdpmc) {
		struct pmon_self_count c;
		bool ok = true;

		for (size_t i = 0; i < g->n && ok; i++) {
			ok = pmon_mmap_read(g->pc[i], NULL, &c) == 0;
			v[i] = c.value;
			if (ok && c.enabled != c.running)
				g->multiplexed = true;
			if (ok && i == 0) /* a group is scheduled as one: the leader's times */
				en = c.enabled, run = c.running;
		}
		if (ok)
			goto out;
	}
	/* One read() for the whole group. */
	ssize_t want = (ssize_t)((3 + g->n) * sizeof(uint64_t));
	if (read(g->fd[0], g->buf, (size_t)want) != want) {
		int err = -errno ? -errno : -EIO;
		memset(v, 0, g->n * sizeof(*v));
		if (enabled)
			*enabled = 0;
		if (running)
			*running = 0;
		return err;
	}
	if (g->buf[1] != g->buf[2])
		g->multiplexed = true;
	for (size_t i = 0; i < g->n && i < g->buf[0]; i++)
		v[i] = g->buf[3 + i];
	en = g->buf[1];
	run = g->buf[2];
out:
	if (enabled)
		*enabled = en;
	if (running)
		*running = run;
	return 0;
}

void pmon_selfgroup__read(struct pmon_selfgroup *g, uint64_t *v)
{
	(void)pmon_selfgroup__read_times(g, v, NULL, NULL);
}

bool pmon_selfgroup__rdpmc(const struct pmon_selfgroup *g, const char **why)
{
	if (why)
		*why = g->why;
	return g->rdpmc;
}

bool pmon_selfgroup__multiplexed(struct pmon_selfgroup *g)
{
	return g->multiplexed;
}
