// SPDX-License-Identifier: MIT
/*
 * Call chains as stacks of frames (lib/report/ctx.h): the raw chains are a
 * tree of (parent, address) nodes counted by the reader threads; after the
 * read, each distinct address is named once (its function, and the
 * functions inlined there when asked) and the chains become distinct
 * stacks of interned frames, outermost caller first, which the exports in
 * export.c draw on.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "report/ctx.h"

static uint64_t cnode_hash(uint32_t parent, uint64_t addr)
{
	return pmon__mix64(addr ^ (uint64_t)parent * 0x9e3779b97f4a7c15ULL);
}

/* The id of node (@parent, @addr), made if new; 0 without memory. */
static uint32_t cnode_get(struct stk_tab *t, uint32_t parent, uint64_t addr)
{
	if ((size_t)t->nn * 2 >= t->capi) {
		size_t cap = t->capi ? t->capi * 2 : 4096;
		uint32_t *idx = calloc(cap, sizeof(*idx));
		if (!idx)
			return 0;
		for (uint32_t i = 1; i < t->nn; i++) {
			size_t j = cnode_hash(t->n[i].parent, t->n[i].addr) & (cap - 1);
			while (idx[j])
				j = (j + 1) & (cap - 1);
			idx[j] = i;
		}
		free(t->idx);
		t->idx = idx;
		t->capi = cap;
	}
	size_t j = cnode_hash(parent, addr) & (t->capi - 1);
	for (; t->idx[j]; j = (j + 1) & (t->capi - 1)) {
		const struct cnode *c = &t->n[t->idx[j]];
		if (c->addr == addr && c->parent == parent)
			return t->idx[j];
	}
	if (t->nn + 1 >= t->capn) {
		if (t->capn >= UINT32_MAX / 2)
			return 0;
		/* Three arrays of one capacity: each grows to the same size. */
		size_t cap[3] = { t->capn, t->capn, t->capn };
		if (PMON_GROW(&t->n, &cap[0], (size_t)t->nn + 2) ||
		    PMON_GROW(&t->samples, &cap[1], (size_t)t->nn + 2) ||
		    PMON_GROW(&t->period, &cap[2], (size_t)t->nn + 2))
			return 0;
		t->capn = (uint32_t)cap[0];
	}
	if (!t->nn)
		t->nn = 1; /* node 0: "no parent" */
	uint32_t id = t->nn++;
	t->n[id] = (struct cnode){ addr, parent, parent ? t->n[parent].depth + 1 : 0 };
	t->samples[id] = t->period[id] = 0;
	t->idx[j] = id;
	return id;
}

/* Count @samples of @period under the chain @a (@n addresses, leaf first). */
int pmon__stk_add(struct stk_tab *t, uint64_t sid, uint32_t pid, uint32_t tid, uint32_t epoch,
		  const uint64_t *a, uint32_t n, uint64_t samples, uint64_t period)
{
	uint32_t id = cnode_get(t, 0, sid);

	if (id)
		id = cnode_get(t, id, (uint64_t)pid << 32 | epoch);
	if (id)
		id = cnode_get(t, id, tid);
	for (uint32_t k = n; id && k-- > 0;)
		id = cnode_get(t, id, a[k]);
	if (!id)
		return -ENOMEM;
	t->nstacks += !t->samples[id];
	t->samples[id] += samples;
	t->period[id] += period;
	return 0;
}

/* The addresses of chain @id into @a, leaf first; its sid, pid, tid and epoch. */
uint32_t pmon__stk_chain(const struct stk_tab *t, uint32_t id, uint64_t *a, uint64_t *sid,
			 uint32_t *pid, uint32_t *tid, uint32_t *epoch)
{
	uint32_t n = 0;

	for (; t->n[id].depth > 2; id = t->n[id].parent)
		a[n++] = t->n[id].addr;
	*tid = (uint32_t)t->n[id].addr;
	id = t->n[id].parent;
	*pid = (uint32_t)(t->n[id].addr >> 32);
	*epoch = (uint32_t)t->n[id].addr;
	*sid = t->n[t->n[id].parent].addr;
	return n;
}

void pmon__stk_free(struct stk_tab *t)
{
	free(t->n);
	free(t->samples);
	free(t->period);
	free(t->idx);
}

/* Chains in the order of (sid, pid, epoch, tid, length, addresses leaf
 * first): the same for any number of readers, whose node ids differ. */
static int stk_cmp(const void *a, const void *b, void *tab)
{
	const struct stk_tab *t = tab;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct cnode *tx = &t->n[x], *ty = &t->n[y];

	while (tx->depth > 2) /* up to the tid nodes */
		tx = &t->n[tx->parent];
	while (ty->depth > 2)
		ty = &t->n[ty->parent];
	const struct cnode *px = &t->n[tx->parent], *py = &t->n[ty->parent];
	uint64_t sx = t->n[px->parent].addr, sy = t->n[py->parent].addr;
	if (sx != sy)
		return sx < sy ? -1 : 1;
	if (px->addr >> 32 != py->addr >> 32) /* pid */
		return px->addr >> 32 < py->addr >> 32 ? -1 : 1;
	if ((uint32_t)px->addr != (uint32_t)py->addr) /* epoch */
		return (uint32_t)px->addr < (uint32_t)py->addr ? -1 : 1;
	if (tx->addr != ty->addr) /* tid */
		return tx->addr < ty->addr ? -1 : 1;
	if (t->n[x].depth != t->n[y].depth)
		return t->n[x].depth < t->n[y].depth ? -1 : 1;
	for (; x != y && t->n[x].depth > 2; x = t->n[x].parent, y = t->n[y].parent)
		if (t->n[x].addr != t->n[y].addr)
			return t->n[x].addr < t->n[y].addr ? -1 : 1;
	return 0;
}

/* A looked-up address of the stacks: (pid, epoch, address) -> its frames. */
struct fslot {
	uint64_t addr;
	uint32_t pid, epoch, off, n;
	uint32_t loc; /* its location in the sites (pprof) */
	bool used;
};

struct ftab {
	struct fslot *e;
	size_t cap, n;
	uint32_t *arena;
	size_t alen, acap;
};

static int ftab_grow(struct ftab *t)
{
	size_t cap = t->cap ? t->cap * 2 : 4096;
	struct fslot *e = calloc(cap, sizeof(*e));

	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->e[i].used)
			continue;
		const struct fslot *o = &t->e[i];
		size_t j = pmon__leaf_hash(0, o->pid, o->epoch, o->addr) & (cap - 1);
		while (e[j].used)
			j = (j + 1) & (cap - 1);
		e[j] = *o;
	}
	free(t->e);
	t->e = e;
	t->cap = cap;
	return 0;
}

/* The frames of an address of a stack, looked up once: *@fr, @return
 * count; *@loc its location among @sites. */
static int frames_at(struct ctx *x, struct ftab *t, struct pmon__sites *sites, uint32_t pid,
		     uint32_t epoch, uint64_t addr, const uint32_t **fr, uint32_t *loc)
{
	if (t->n * 2 >= t->cap && ftab_grow(t))
		return -ENOMEM;
	size_t j = pmon__leaf_hash(0, pid, epoch, addr) & (t->cap - 1);
	while (t->e[j].used &&
	       !(t->e[j].addr == addr && t->e[j].pid == pid && t->e[j].epoch == epoch))
		j = (j + 1) & (t->cap - 1);
	if (!t->e[j].used) {
		struct loc l;
		uint32_t tmp[33];
		pmon__locate(x, pid, addr, epoch, &l);
		int n = pmon__frames_of(x, &l, tmp, 33);
		if (n < 0)
			return n;
		long li = pmon__sites_loc(x, sites, addr, &l);
		if (li < 0)
			return (int)li;
		if (PMON_GROW(&t->arena, &t->acap, t->alen + (size_t)n))
			return -ENOMEM;
		memcpy(t->arena + t->alen, tmp, (size_t)n * sizeof(*tmp));
		t->e[j] = (struct fslot){ addr,	       pid,	     epoch, (uint32_t)t->alen,
					  (uint32_t)n, (uint32_t)li, true };
		t->alen += (size_t)n;
		t->n++;
	}
	*fr = t->arena + t->e[j].off;
	*loc = t->e[j].loc;
	return (int)t->e[j].n;
}

/* Distinct stacks of frame indexes (several raw chains name the same). */
struct fstk {
	uint64_t hash, samples, period;
	uint32_t len, off;
	bool used;
};

struct fstk_tab {
	struct fstk *e;
	size_t cap, n;
	uint32_t *arena;
	size_t alen, acap;
	uint32_t *order; /* slots in order of first use */
};

static int fstk_add(struct fstk_tab *t, const uint32_t *f, uint32_t n, uint64_t samples,
		    uint64_t period)
{
	uint64_t h = 1469598103934665603ULL ^ n;

	for (uint32_t i = 0; i < n; i++)
		h = (h ^ f[i]) * 0x100000001b3ULL;
	h = pmon__mix64(h);
	if (t->n * 2 >= t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct fstk *e = calloc(cap, sizeof(*e));
		uint32_t *o = malloc(cap * sizeof(*o));
		if (!e || !o) {
			free(e), free(o);
			return -ENOMEM;
		}
		for (size_t i = 0; i < t->n; i++) { /* in order of first use */
			const struct fstk *old = &t->e[t->order[i]];
			size_t j = old->hash & (cap - 1);
			while (e[j].used)
				j = (j + 1) & (cap - 1);
			e[j] = *old;
			o[i] = (uint32_t)j;
		}
		free(t->e), free(t->order);
		t->e = e, t->order = o, t->cap = cap;
	}
	size_t j = h & (t->cap - 1);
	for (; t->e[j].used; j = (j + 1) & (t->cap - 1)) {
		struct fstk *s = &t->e[j];
		if (s->hash == h && s->len == n && !memcmp(t->arena + s->off, f, n * sizeof(*f))) {
			s->samples += samples;
			s->period += period;
			return 0;
		}
	}
	if (PMON_GROW(&t->arena, &t->acap, t->alen + n))
		return -ENOMEM;
	memcpy(t->arena + t->alen, f, n * sizeof(*f));
	t->e[j] = (struct fstk){ h, samples, period, n, (uint32_t)t->alen, true };
	t->order[t->n++] = (uint32_t)j;
	t->alen += n;
	return 0;
}

/* The interned frames' names into r->frames. */
static int take_frames(struct ctx *x, struct pmon_report *r)
{
	if (!x->frames.n)
		return 0;
	if (!(r->frames = calloc(x->frames.n, sizeof(*r->frames))))
		return -ENOMEM;
	r->nframes = x->frames.n;
	for (size_t i = 0; i < x->frames.cap; i++) {
		const char *k = x->frames.key[i];
		const char *tab = k ? strchr(k, '\t') : NULL;
		if (!tab)
			continue;
		struct pmon_report_frame *f = &r->frames[x->frames.index[i]];
		f->symbol = strndup(k, (size_t)(tab - k));
		f->dso = strdup(tab + 1);
		if (!f->symbol || !f->dso)
			return -ENOMEM;
	}
	return 0;
}

/* The distinct stacks of @st into r->stacks. */
static int take_stacks(const struct fstk_tab *st, struct pmon_report *r)
{
	if (st->n && !(r->stacks = calloc(st->n, sizeof(*r->stacks))))
		return -ENOMEM;
	for (size_t i = 0; i < st->n; i++) {
		const struct fstk *s = &st->e[st->order[i]];
		struct pmon_report_stack *rs = &r->stacks[r->nstacks++];
		if (!(rs->frame = malloc(s->len * sizeof(uint32_t))))
			return -ENOMEM;
		memcpy(rs->frame, st->arena + s->off, s->len * sizeof(uint32_t));
		rs->depth = s->len;
		rs->samples = s->samples;
		rs->period = s->period;
	}
	return 0;
}

/* The distinct stacks of locations of @st ([pid, tid, locations...]) into
 * @sites, with the threads' commands where they are kept per thread. */
static int take_sites(struct ctx *x, const struct fstk_tab *st, struct pmon__sites *sites)
{
	if (st->n && !(sites->stacks = calloc(st->n, sizeof(*sites->stacks))))
		return -ENOMEM;
	sites->threads = x->threads;
	for (size_t i = 0; i < st->n; i++) {
		const struct fstk *s = &st->e[st->order[i]];
		struct pmon__site_stack *ss = &sites->stacks[sites->nstacks++];
		const uint32_t *a = st->arena + s->off;
		ss->depth = s->len - 2;
		if (!(ss->loc = malloc((ss->depth ? ss->depth : 1) * sizeof(uint32_t))))
			return -ENOMEM;
		memcpy(ss->loc, a + 2, ss->depth * sizeof(uint32_t));
		ss->pid = a[0], ss->tid = a[1];
		if (x->threads) /* pid 0: the idle task, perf's "swapper" */
			pmon__strlcpy(ss->comm,
				      a[0] || a[1] ? pmon__comm_of(&x->comms, a[0], a[1])
						   : "swapper",
				      sizeof(ss->comm));
		ss->samples = s->samples;
		ss->period = s->period;
	}
	for (int k = 0; k < 3; k++) /* the keys were for the building */
		pmon__counter_free(&sites->keys[k]);
	free(sites->keys);
	sites->keys = NULL;
	return 0;
}

/* The frames of chain @id into @frames and its locations, after its pid
 * and tid, into @locs: Return: how many frames, or -ENOMEM. */
static int chain_frames(struct ctx *x, struct stk_tab *t, uint32_t id, struct ftab *ft,
			struct pmon__sites *sites, uint32_t *frames, uint32_t *locs,
			uint32_t *nlocs)
{
	uint64_t chain[STACK_MAX_FRAMES], sid;
	uint32_t pid, tid, epoch, depth = 0, nl = 2;
	uint32_t len = pmon__stk_chain(t, id, chain, &sid, &pid, &tid, &epoch);

	locs[0] = x->threads ? pid : 0;
	locs[1] = tid;
	for (uint32_t k = len; k-- > 0 && depth < STACK_MAX_FRAMES;) {
		const uint32_t *fr = NULL;
		int nf = frames_at(x, ft, sites, pid, epoch, chain[k], &fr, &locs[nl++]);
		if (nf < 0)
			return nf;
		for (int m = 0; m < nf && depth < STACK_MAX_FRAMES; m++)
			frames[depth++] = fr[m];
	}
	*nlocs = nl;
	return (int)depth;
}

/* The distinct stacks of the stack event, outermost caller first; their
 * locations into r->sites (pprof). */
int pmon__name_stacks(struct ctx *x, struct stk_tab *t, bool callchains)
{
	struct pmon_report *r = x->r;
	uint32_t *v = malloc((t->nstacks ? t->nstacks : 1) * sizeof(*v));
	uint32_t *frames = malloc(STACK_MAX_FRAMES * sizeof(*frames));
	uint32_t *locs = malloc((STACK_MAX_FRAMES + 2) * sizeof(*locs));
	struct ftab ft = { 0 };
	struct fstk_tab st = { 0 }, lt = { 0 };
	size_t n = 0;
	int err = 0;

	if (!v || !frames || !locs || !(r->sites = pmon__sites_new())) {
		free(v), free(frames), free(locs);
		return -ENOMEM;
	}
	r->callchains = callchains;
	for (uint32_t i = 1; i < t->nn; i++) {
		if (!t->samples[i])
			continue;
		uint32_t root = i;
		while (t->n[root].parent)
			root = t->n[root].parent;
		if (pmon__event_of(x, t->n[root].addr) == x->stack_ev)
			v[n++] = i;
	}
	qsort_r(v, n, sizeof(*v), stk_cmp, t);
	for (size_t i = 0; i < n && !err; i++) {
		uint32_t nl;
		int depth = chain_frames(x, t, v[i], &ft, r->sites, frames, locs, &nl);
		if (depth < 0) {
			err = depth;
			break;
		}
		uint64_t samples = t->samples[v[i]];
		uint64_t period = pmon__period_of(x, x->stack_ev, samples, t->period[v[i]]);
		if (depth)
			err = fstk_add(&st, frames, (uint32_t)depth, samples, period);
		if (!err && depth)
			err = fstk_add(&lt, locs, nl, samples, period);
	}
	free(v), free(frames), free(locs);
	free(ft.e), free(ft.arena);
	if (!err)
		err = take_frames(x, r);
	if (!err)
		err = take_stacks(&st, r);
	if (!err)
		err = take_sites(x, &lt, r->sites);
	free(st.e), free(st.order), free(st.arena);
	free(lt.e), free(lt.order), free(lt.arena);
	return err;
}
