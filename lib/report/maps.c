// SPDX-License-Identifier: MIT
/*
 * Processes and their memory maps (lib/report/ctx.h): the files the
 * MMAP2 records name, each process's mappings (a fork starts with its
 * parent's), and the epochs that let a sample resolve against the maps its
 * process had when it was taken; the DWARF unwinder of each process sees
 * the same maps.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "report/ctx.h"

/* ---- files, by (path, build id): 200,000 distinct paths stay linear ---- */

static uint64_t file_hash(const char *path, const uint8_t *bid, uint8_t bidlen)
{
	return pmon__fnv(bid, bidlen, pmon__fnv(path, strlen(path), 1469598103934665603ULL));
}

static int fidx_grow(struct ctx *x, size_t cap)
{
	uint32_t *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < x->nfiles; i++) {
		const struct file *f = &x->files[i];
		size_t j = file_hash(f->path, f->bid, f->bidlen) & (cap - 1);
		while (t[j])
			j = (j + 1) & (cap - 1);
		t[j] = (uint32_t)i + 1;
	}
	free(x->fidx);
	x->fidx = t;
	x->capfidx = cap;
	return 0;
}

static int file_index(struct ctx *x, const char *path, const uint8_t *bid, uint8_t bidlen)
{
	if ((x->nfiles + 1) * 2 > x->capfidx && fidx_grow(x, x->capfidx ? x->capfidx * 2 : 64))
		return -1;
	size_t j = file_hash(path, bid, bidlen) & (x->capfidx - 1);
	for (; x->fidx[j]; j = (j + 1) & (x->capfidx - 1)) {
		const struct file *f = &x->files[x->fidx[j] - 1];
		if (f->bidlen == bidlen && (!bidlen || !memcmp(f->bid, bid, bidlen)) &&
		    !strcmp(f->path, path))
			return (int)x->fidx[j] - 1;
	}
	if (x->nfiles >= INT32_MAX || PMON_GROW(&x->files, &x->capfiles, x->nfiles + 1))
		return -1;
	struct file *f = &x->files[x->nfiles];
	memset(f, 0, sizeof(*f));
	if (bidlen) /* @bid may be NULL without one (maps read from /proc) */
		memcpy(f->bid, bid, bidlen);
	f->bidlen = bidlen;
	if (!(f->path = strdup(path)))
		return -1;
	x->fidx[j] = (uint32_t)++x->nfiles;
	return (int)x->nfiles - 1;
}

/* ---- processes, by pid -------------------------------------------------- */

static size_t pid_slot(uint32_t pid, size_t cap)
{
	return pmon__mix64(pid) & (cap - 1);
}

/* Process @pid's maps; with @make, made where there are none yet. NULL:
 * none, or out of memory with @make. */
static struct proc_maps *proc_of(struct ctx *x, uint32_t pid, bool make)
{
	if (make && (x->nprocs + 1) * 2 > x->capprocs) {
		size_t cap = x->capprocs ? x->capprocs * 2 : 64;
		struct proc_maps *t = calloc(cap, sizeof(*t));
		if (!t)
			return NULL;
		for (size_t i = 0; i < x->capprocs; i++) {
			if (!x->procs[i].used)
				continue;
			size_t j = pid_slot(x->procs[i].pid, cap);
			while (t[j].used)
				j = (j + 1) & (cap - 1);
			t[j] = x->procs[i];
		}
		free(x->procs);
		x->procs = t;
		x->capprocs = cap;
	}
	if (!x->capprocs)
		return NULL;
	size_t j = pid_slot(pid, x->capprocs);
	for (; x->procs[j].used; j = (j + 1) & (x->capprocs - 1))
		if (x->procs[j].pid == pid)
			return &x->procs[j];
	if (!make)
		return NULL;
	x->procs[j] = (struct proc_maps){ .pid = pid, .used = true, .unw = -1 };
	x->nprocs++;
	return &x->procs[j];
}

void pmon__maps_free(struct ctx *x)
{
	for (size_t i = 0; i < x->capprocs; i++) {
		struct proc_maps *p = &x->procs[i];
		free(p->idx), free(p->fork), free(p->by_start), free(p->maxend);
	}
	free(x->procs);
	free(x->fidx);
	free(x->fmark);
}

int pmon__maps_add(struct ctx *x, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		   const char *file, const uint8_t *bid, uint8_t bidlen)
{
	int fi = file_index(x, file, bid, bidlen);
	struct proc_maps *p = fi < 0 ? NULL : proc_of(x, pid, true);

	if (!p || x->nmaps >= UINT32_MAX || PMON_GROW(&x->maps, &x->capmaps, x->nmaps + 1) ||
	    PMON_GROW(&p->idx, &p->cap, p->n + 1))
		return -ENOMEM;
	/* A crafted length must not wrap the end below the start. */
	uint64_t end = len > UINT64_MAX - start ? UINT64_MAX : start + len;
	p->idx[p->n++] = (uint32_t)x->nmaps;
	x->maps[x->nmaps++] = (struct map){ pid, start, end, pgoff, fi };
	if (p->unw >= 0)
		x->unw[p->unw].stale = true;
	return 0;
}

/* The last fork of @p at or before @epoch, or NULL. */
static const struct proc_fork *fork_at(const struct proc_maps *p, uint32_t epoch)
{
	size_t lo = 0, hi = p->nfork; /* forks are kept in epoch order */

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->fork[mid].epoch <= epoch)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &p->fork[lo - 1] : NULL;
}

/* A fork chain is followed this far (a crafted file may chain a fork to
 * every other: each step goes back at least one epoch, so it ends, but a
 * lookup must stay cheap). Real processes nest a few levels. */
#define FORK_DEPTH_MAX 256

/* Which of @p's own maps it had at @epoch: indexes [*lo, *lim) (those
 * since its last fork). Return: that fork, or NULL. */
static const struct proc_fork *own_bounds(const struct ctx *x, const struct proc_maps *p,
					  uint32_t epoch, size_t *lo, size_t *lim)
{
	const struct proc_fork *f = fork_at(p, epoch);

	*lim = epoch < x->nvis ? x->vis[epoch] : x->nmaps;
	*lo = f && f->epoch < x->nvis ? x->vis[f->epoch] : 0;
	return f;
}

/*
 * Walk the maps process @pid had at @epoch, latest first: its own since its
 * last fork, then (from that fork on) its parent's as they were just before
 * it. @fn returns true to stop. Return: the map index it stopped at, or -1.
 */
static long maps_walk(struct ctx *x, uint32_t pid, uint32_t epoch,
		      bool (*fn)(struct ctx *x, const struct map *m, void *arg), void *arg)
{
	for (int depth = 0; depth < FORK_DEPTH_MAX; depth++) {
		const struct proc_maps *p = proc_of(x, pid, false);
		size_t lo, lim;
		if (!p)
			return -1;
		const struct proc_fork *f = own_bounds(x, p, epoch, &lo, &lim);
		for (size_t k = p->n; k-- > 0 && p->idx[k] >= lo;)
			if (p->idx[k] < lim && fn(x, &x->maps[p->idx[k]], arg))
				return (long)p->idx[k];
		if (!f || !f->epoch)
			return -1;
		pid = f->ppid;
		epoch = f->epoch - 1; /* the parent as it was just before the fork */
	}
	return -1;
}

static int by_start_cmp(const void *a, const void *b, void *arg)
{
	uint32_t i = *(const uint32_t *)a, k = *(const uint32_t *)b;
	const struct map *maps = arg;

	if (maps[i].start != maps[k].start)
		return maps[i].start < maps[k].start ? -1 : 1;
	return (i > k) - (i < k);
}

/*
 * Bring @p's maps added since the last time into its by-start index: sorted
 * and merged in (linear in the index), once they are more than 16 and more
 * than the square root of those already in: the unsorted ones each lookup
 * scans stay few, and a file that interleaves maps and lookups costs n^1.5
 * in merges, not n^2 log n in sorts. Out of memory: left as it was (the
 * lookups scan the rest).
 */
static void own_sort(struct ctx *x, struct proc_maps *p)
{
	size_t tail = p->n - p->nsorted, n = p->n;

	if (tail <= 16 || tail * tail <= p->nsorted)
		return;
	uint32_t *add = malloc(tail * sizeof(*add)), *merged = malloc(n * sizeof(*merged));
	uint64_t *maxend = NULL;
	if (!add || !merged || PMON_GROW(&p->by_start, &p->capsorted, n) ||
	    !(maxend = realloc(p->maxend, p->capsorted * sizeof(*maxend)))) {
		free(add), free(merged);
		return;
	}
	p->maxend = maxend;
	memcpy(add, p->idx + p->nsorted, tail * sizeof(*add));
	qsort_r(add, tail, sizeof(*add), by_start_cmp, x->maps);
	for (size_t a = 0, b = 0, k = 0; k < n; k++)
		merged[k] = b == tail ||
				(a < p->nsorted &&
				 by_start_cmp(&p->by_start[a], &add[b], x->maps) < 0)
			? p->by_start[a++]
			: add[b++];
	memcpy(p->by_start, merged, n * sizeof(*merged));
	free(add), free(merged);
	for (size_t k = 0; k < n; k++) {
		uint64_t e = x->maps[p->by_start[k]].end;
		p->maxend[k] = k && p->maxend[k - 1] > e ? p->maxend[k - 1] : e;
	}
	p->nsorted = n;
}

/* The latest of @p's own maps in [@lo, @lim) that holds @ip, or -1. */
static long own_find(struct ctx *x, struct proc_maps *p, uint64_t ip, size_t lo, size_t lim)
{
	own_sort(x, p);
	/* the newest first: those not in the index yet */
	for (size_t k = p->n; k-- > p->nsorted;) {
		const struct map *m = &x->maps[p->idx[k]];
		if (p->idx[k] < lo)
			return -1; /* and so is every older one */
		if (p->idx[k] < lim && ip >= m->start && ip < m->end)
			return (long)p->idx[k];
	}
	if (!p->nsorted || p->idx[p->nsorted - 1] < lo)
		return -1;
	/* the last that starts at or below @ip, then back while one before
	 * it may still reach @ip */
	size_t a = 0, b = p->nsorted;
	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if (x->maps[p->by_start[mid]].start <= ip)
			a = mid + 1;
		else
			b = mid;
	}
	long best = -1;
	for (size_t k = a; k-- > 0 && p->maxend[k] > ip;) {
		uint32_t i = p->by_start[k];
		if (i >= lo && i < lim && (long)i > best && ip < x->maps[i].end)
			best = (long)i;
	}
	return best;
}

long pmon__maps_find(struct ctx *x, uint32_t pid, uint64_t ip, uint32_t epoch)
{
	for (int depth = 0; depth < FORK_DEPTH_MAX; depth++) {
		struct proc_maps *p = proc_of(x, pid, false);
		size_t lo, lim;
		if (!p)
			return -1;
		const struct proc_fork *f = own_bounds(x, p, epoch, &lo, &lim);
		long i = own_find(x, p, ip, lo, lim);
		if (i >= 0 || !f || !f->epoch)
			return i;
		pid = f->ppid;
		epoch = f->epoch - 1; /* the parent as it was just before the fork */
	}
	return -1;
}

int pmon__maps_fork(struct ctx *x, uint32_t pid, uint32_t ppid)
{
	if (pid == ppid) /* a thread: it shares the maps */
		return 0;
	struct proc_maps *p = proc_of(x, pid, true);
	if (!p || PMON_GROW(&p->fork, &p->capfork, p->nfork + 1))
		return -ENOMEM;
	/* It holds from the epoch this record opens (pmon__maps_epoch() next). */
	p->fork[p->nfork++] = (struct proc_fork){ (uint32_t)x->nvis, ppid };
	if (p->unw >= 0)
		x->unw[p->unw].stale = true;
	return 0;
}

/* Report each file a process has mapped once, at its load address (the
 * mapping's start minus its offset, as perf does). */
static bool report_file(struct ctx *x, const struct map *m, void *arg)
{
	struct pmon__unw *u = arg;
	const char *path = x->files[m->file].path;

	if (path[0] == '/' && strncmp(path, "//anon", 6) && x->fmark[m->file] != x->fgen) {
		x->fmark[m->file] = x->fgen;
		pmon__unw_report(u, path, m->start - m->pgoff);
	}
	return false;
}

/*
 * Unwind a DWARF-mode sample of process @pid: its unwinder reports every
 * file the process has mapped now. Return: frames found, leaf first.
 */
int pmon__maps_unwind(struct ctx *x, uint32_t pid, const uint64_t *regs, const uint8_t *stack,
		      uint64_t size, uint64_t *pcs, int max)
{
	struct proc_maps *pm = proc_of(x, pid, true);
	struct unw_proc *p;

	if (!pm)
		return 0;
	if (pm->unw < 0) {
		if (PMON_GROW(&x->unw, &x->capunw, x->nunw + 1))
			return 0;
		x->unw[x->nunw] = (struct unw_proc){ .pid = pid, .stale = true };
		pm->unw = (long)x->nunw++;
	}
	p = &x->unw[pm->unw];
	if (p->stale) {
		pmon__unw_free(p->u);
		p->u = pmon__unw_new((pid_t)pid);
		p->stale = false;
		if (!p->u)
			return 0;
		if (x->capfmark < x->nfiles) {
			uint32_t *t = realloc(x->fmark, x->nfiles * sizeof(*t));
			if (!t)
				return 0;
			memset(t + x->capfmark, 0, (x->nfiles - x->capfmark) * sizeof(*t));
			x->fmark = t;
			x->capfmark = x->nfiles;
		}
		if (!++x->fgen) { /* wrapped: no mark may look current */
			memset(x->fmark, 0, x->capfmark * sizeof(*x->fmark));
			x->fgen = 1;
		}
		maps_walk(x, pid, UINT32_MAX, report_file, p->u);
		pmon__unw_finish(p->u);
	}
	return pmon__unw_frames(p->u, regs, stack, size, pcs, max);
}

/* One more epoch: vis[E] is the number of maps the first E MMAP2/FORK
 * records made (vis[0] = 0, pushed before the first). */
int pmon__maps_epoch(struct ctx *x)
{
	if (PMON_GROW(&x->vis, &x->capvis, x->nvis + 1))
		return -ENOMEM;
	x->vis[x->nvis++] = (uint32_t)x->nmaps;
	return 0;
}
