// SPDX-License-Identifier: MIT
/*
 * Counts summed by topology (pmon/monitor.h): perf stat's -A, --per-core,
 * --per-die, --per-socket and --per-node. Each counting unit's CPU is
 * placed by cpu/ (pmon_cpu_places(), sysfs), units with the same key share
 * a group, and the groups come in perf's order with perf's labels
 * (tools/perf/util/stat-display.c, aggr_printout()).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include <pmon/cpu.h>
#include <pmon/monitor.h>
#include <pmon/stats.h>

struct group {
	int key[4]; /* compared in order; unused places are 0 */
	char label[48];
	size_t ncpus;
	size_t first_unit; /* the group's first unit: its sum starts there */
};

struct pmon_aggr {
	size_t ngroups, nunits;
	size_t *group_of; /* per unit */
	struct group *g;
};

void pmon_count__add(struct pmon_count *acc, const struct pmon_count *d, bool first)
{
	if (first) {
		*acc = *d;
	} else {
		acc->raw += d->raw;
		acc->enabled += d->enabled;
		acc->running += d->running;
		acc->value += d->value;
		if (d->status == PMON_COUNT_OK && acc->status != PMON_COUNT_OK) {
			acc->status = d->status;
			acc->err = d->err;
			acc->reason = d->reason;
		}
		acc->user_only |= d->user_only;
	}
	if (acc->status != PMON_COUNT_OK)
		acc->value = 0;
	acc->running_pct = acc->enabled ? 100.0 * (double)acc->running / (double)acc->enabled
					: acc->running_pct;
}

void pmon_count__add_interval(struct pmon_count *acc, struct pmon_mux_error *mux,
			      const struct pmon_count *d, bool first)
{
	pmon_count__add(acc, d, first);
	if (first)
		*mux = (struct pmon_mux_error){ 0 };
	if (d->status == PMON_COUNT_OK)
		pmon_mux_error__add(mux, d->value, d->enabled, d->running);
}

/* The group key and label of a CPU at @p in mode @mode. */
static void place_key(enum pmon_aggr_mode mode, const struct pmon_cpu_place *p, struct group *g)
{
	memset(g, 0, sizeof(*g));
	switch (mode) {
	case PMON_AGGR_CORE:
		g->key[0] = p->socket, g->key[1] = p->die, g->key[2] = p->core;
		snprintf(g->label, sizeof(g->label), "S%d-D%d-C%d", p->socket, p->die, p->core);
		break;
	case PMON_AGGR_DIE:
		g->key[0] = p->socket, g->key[1] = p->die;
		snprintf(g->label, sizeof(g->label), "S%d-D%d", p->socket, p->die);
		break;
	case PMON_AGGR_SOCKET:
		g->key[0] = p->socket;
		snprintf(g->label, sizeof(g->label), "S%d", p->socket);
		break;
	case PMON_AGGR_NODE:
		g->key[0] = p->node;
		snprintf(g->label, sizeof(g->label), "N%d", p->node);
		break;
	default:
		g->key[0] = p->cpu;
		snprintf(g->label, sizeof(g->label), "CPU%d", p->cpu);
		break;
	}
}

static int key_cmp(const struct group *a, const struct group *b)
{
	for (int i = 0; i < 4; i++)
		if (a->key[i] != b->key[i])
			return a->key[i] < b->key[i] ? -1 : 1;
	return 0;
}

/* Insert @k into the sorted groups unless there; return its index. */
static size_t find_or_insert(struct pmon_aggr *a, const struct group *k)
{
	size_t lo = 0, hi = a->ngroups;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = key_cmp(&a->g[mid], k);
		if (!c)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(&a->g[lo + 1], &a->g[lo], (a->ngroups - lo) * sizeof(*a->g));
	a->g[lo] = *k;
	a->ngroups++;
	return lo;
}

/* The distinct CPUs of @unit_cpus, sorted, in @cpus; returns how many. */
static size_t distinct_cpus(const int *unit_cpus, size_t n, int *cpus)
{
	size_t k = 0;

	for (size_t u = 0; u < n; u++) {
		size_t i = 0;
		while (i < k && cpus[i] < unit_cpus[u])
			i++;
		if (i < k && cpus[i] == unit_cpus[u])
			continue;
		memmove(&cpus[i + 1], &cpus[i], (k - i) * sizeof(*cpus));
		cpus[i] = unit_cpus[u];
		k++;
	}
	return k;
}

struct pmon_aggr *pmon_aggr__new(const char *sysfs_root, enum pmon_aggr_mode mode,
				 const int *unit_cpus, size_t nunits)
{
	struct pmon_aggr *a = NULL;
	struct pmon_cpu_place *pl = NULL;
	int *cpus = NULL, err = -ENOMEM;
	size_t ncpus;

	if (mode < PMON_AGGR_CPU || mode > PMON_AGGR_NODE || !nunits) {
		err = pmon__err(-EINVAL, "no CPUs to aggregate, or an unknown mode %d", (int)mode);
		goto fail;
	}
	for (size_t u = 0; u < nunits; u++)
		if (unit_cpus[u] < 0) {
			err = pmon__err(-EINVAL,
					"per-CPU aggregation needs CPU-wide counters "
					"(-a or -C)");
			goto fail;
		}
	if (!(a = calloc(1, sizeof(*a))) || !(cpus = calloc(nunits, sizeof(*cpus))) ||
	    !(a->group_of = calloc(nunits, sizeof(*a->group_of))) ||
	    !(a->g = calloc(nunits, sizeof(*a->g))) || !(pl = calloc(nunits, sizeof(*pl))))
		goto fail;
	a->nunits = nunits;
	ncpus = distinct_cpus(unit_cpus, nunits, cpus);
	if ((err = pmon_cpu_places(sysfs_root, cpus, ncpus, pl)))
		goto fail;
	for (size_t i = 0; i < ncpus; i++) {
		struct group k;
		place_key(mode, &pl[i], &k);
		a->g[find_or_insert(a, &k)].ncpus++;
	}
	for (size_t u = 0; u < nunits; u++) {
		size_t i = 0;
		struct group k;
		while (cpus[i] != unit_cpus[u])
			i++;
		place_key(mode, &pl[i], &k);
		a->group_of[u] = find_or_insert(a, &k);
	}
	/* Groups are all inserted by now: their indexes no longer move. */
	for (size_t u = nunits; u-- > 0;)
		a->g[a->group_of[u]].first_unit = u;
	free(cpus);
	free(pl);
	return a;
fail:
	free(cpus);
	free(pl);
	pmon_aggr__free(a);
	errno = -err;
	return NULL;
}

void pmon_aggr__free(struct pmon_aggr *a)
{
	if (!a)
		return;
	free(a->group_of);
	free(a->g);
	free(a);
}

size_t pmon_aggr__ngroups(const struct pmon_aggr *a)
{
	return a->ngroups;
}

const char *pmon_aggr__label(const struct pmon_aggr *a, size_t g)
{
	return g < a->ngroups ? a->g[g].label : NULL;
}

size_t pmon_aggr__ncpus(const struct pmon_aggr *a, size_t g)
{
	return g < a->ngroups ? a->g[g].ncpus : 0;
}

void pmon_aggr__sum(const struct pmon_aggr *a, const struct pmon_count *per_unit, size_t nev,
		    struct pmon_count *out)
{
	memset(out, 0, a->ngroups * nev * sizeof(*out));
	for (size_t u = 0; u < a->nunits; u++) {
		size_t g = a->group_of[u];
		for (size_t e = 0; e < nev; e++)
			pmon_count__add(&out[g * nev + e], &per_unit[u * nev + e],
					u == a->g[g].first_unit);
	}
}
