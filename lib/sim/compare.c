// SPDX-License-Identifier: MIT
/*
 * pmon simulate --compare: a sampling recording of a program beside its
 * simulation, per function: the share of the measured event's samples
 * (by period, the events they stand for) against the share of the
 * simulated counterpart, and the largest disagreements flagged. What
 * measured event a simulated one stands for is a table; the arithmetic is
 * pure, so it is tested on synthetic weights where no PMU exists.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include <pmon/sim.h>

/* Measured events (perf's generic names, as pmon record and perf name
 * them) and the simulated event that counts the same thing in callgrind's
 * model. Cycles and the clocks are time, compared with instructions: a
 * function's share of time over its share of instructions is its CPI
 * against the program's. */
static const struct {
	const char *measured, *simulated;
} counterpart[] = {
	{ "instructions", "sim/instructions/" },
	{ "cycles", "sim/instructions/" },
	{ "cpu-cycles", "sim/instructions/" },
	{ "ref-cycles", "sim/instructions/" },
	{ "cpu-clock", "sim/instructions/" },
	{ "task-clock", "sim/instructions/" },
	{ "L1-dcache-loads", "sim/L1-dcache-loads/" },
	{ "L1-dcache-stores", "sim/L1-dcache-stores/" },
	{ "L1-dcache-load-misses", "sim/L1-dcache-load-misses/" },
	{ "L1-dcache-store-misses", "sim/L1-dcache-store-misses/" },
	{ "L1-icache-load-misses", "sim/L1-icache-load-misses/" },
	{ "LLC-load-misses", "sim/LLC-load-misses/" },
	{ "LLC-store-misses", "sim/LLC-store-misses/" },
	{ "cache-misses", "sim/LLC-load-misses/" },
	{ "branches", "sim/branches/" },
	{ "branch-instructions", "sim/branches/" },
	{ "branch-misses", "sim/branch-misses/" },
};

int pmon_sim_event__counterpart(const char *measured)
{
	char name[96];
	const char *s = measured, *slash;

	if (!measured)
		return pmon__err(-EINVAL, "no event");
	/* "cpu/cycles/", "cpu_core/instructions/u": the name inside the PMU's */
	if ((slash = strchr(s, '/'))) {
		s = slash + 1;
		pmon__strlcpy(name, s, sizeof(name));
		name[strcspn(name, "/")] = '\0';
	} else {
		pmon__strlcpy(name, s, sizeof(name));
	}
	name[strcspn(name, ":")] = '\0'; /* modifiers: cycles:u, cycles:ppp */
	for (size_t i = 0; i < sizeof(counterpart) / sizeof(counterpart[0]); i++)
		if (!strcmp(name, counterpart[i].measured))
			return pmon_sim_event__find(counterpart[i].simulated);
	return pmon__err(-PMON_ERRNO__EVENT_UNKNOWN,
			 "'%s' has no simulated counterpart (compare a recording of cycles, "
			 "instructions, cpu-clock, task-clock, cache or branch misses)",
			 measured);
}

struct acc {
	const char *name;
	double m, s;
};

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct acc *)a)->name, ((const struct acc *)b)->name);
}

static int by_disagreement(const void *a, const void *b)
{
	const struct pmon_sim_cmp_row *x = a, *y = b;
	double dx = fabs(x->diff), dy = fabs(y->diff);

	if (dx != dy)
		return dx < dy ? 1 : -1;
	/* The larger share of each row (no fmax(): the core maps no libm). */
	double mx = x->measured > x->simulated ? x->measured : x->simulated;
	double my = y->measured > y->simulated ? y->measured : y->simulated;
	if (mx != my)
		return mx < my ? 1 : -1;
	return strcmp(x->name, y->name);
}

int pmon_sim__compare(const struct pmon_sim_weight *m, size_t nm, const struct pmon_sim_weight *s,
		      size_t ns, const struct pmon_sim_cmp_opts *o, struct pmon_sim_cmp_row **out,
		      size_t *n)
{
	double points = 5.0, tm = 0, ts = 0;
	size_t flag_max = 5, na = 0;
	struct acc *a;

	*out = NULL;
	*n = 0;
	if (PMON_OPTS_HAS(o, flag_max)) {
		if (o->flag_points > 0)
			points = o->flag_points;
		if (o->flag_max)
			flag_max = o->flag_max;
	}
	for (size_t i = 0; i < nm; i++)
		if (!(m[i].w >= 0) || !m[i].name)
			return pmon__err(-EINVAL, "measured weight %zu is not a count", i);
	for (size_t i = 0; i < ns; i++)
		if (!(s[i].w >= 0) || !s[i].name)
			return pmon__err(-EINVAL, "simulated weight %zu is not a count", i);
	if (nm > SIZE_MAX / sizeof(*a) - ns)
		return -ENOMEM;
	a = malloc((nm + ns + 1) * sizeof(*a));
	if (!a)
		return -ENOMEM;
	for (size_t i = 0; i < nm; i++) {
		a[na++] = (struct acc){ m[i].name, m[i].w, 0 };
		tm += m[i].w;
	}
	for (size_t i = 0; i < ns; i++) {
		a[na++] = (struct acc){ s[i].name, 0, s[i].w };
		ts += s[i].w;
	}
	if (!(tm > 0) || !(ts > 0)) {
		free(a);
		return pmon__err(-ENODATA, "%s",
				 tm > 0 ? "the simulation counted nothing"
					: "the recording has no samples (or only periods of 0)");
	}
	/* one row per name: sort, then sum runs of the same name */
	qsort(a, na, sizeof(*a), by_name);
	size_t k = 0;
	for (size_t i = 0; i < na; i++) {
		if (k && !strcmp(a[k - 1].name, a[i].name)) {
			a[k - 1].m += a[i].m;
			a[k - 1].s += a[i].s;
		} else {
			a[k++] = a[i];
		}
	}
	struct pmon_sim_cmp_row *r = calloc(k ? k : 1, sizeof(*r));
	if (!r) {
		free(a);
		return -ENOMEM;
	}
	for (size_t i = 0; i < k; i++) {
		pmon__strlcpy(r[i].name, a[i].name, sizeof(r[i].name));
		r[i].measured = 100.0 * a[i].m / tm;
		r[i].simulated = 100.0 * a[i].s / ts;
		r[i].diff = r[i].simulated - r[i].measured;
	}
	free(a);
	qsort(r, k, sizeof(*r), by_disagreement);
	for (size_t i = 0; i < k && i < flag_max; i++)
		r[i].flagged = fabs(r[i].diff) >= points;
	*out = r;
	*n = k;
	return 0;
}

void pmon_sim_profile_release(struct pmon_sim_profile *p)
{
	if (!p)
		return;
	free(p->rows);
	p->rows = NULL;
	p->n = 0;
}

int pmon_sim_profile__counterpart(const struct pmon_sim_profile *p, const char **measured)
{
	*measured = NULL;
	for (size_t i = 0; i < p->nevents; i++) {
		int k = pmon_sim_event__counterpart(p->events[i]);
		if (k >= 0) {
			*measured = p->events[i];
			return k;
		}
	}
	if (p->nevents) /* the first one's detail names it */
		return pmon_sim_event__counterpart(p->events[0]);
	return pmon__err(-PMON_ERRNO__EVENT_UNKNOWN, "the recording holds no sampled event");
}

int pmon_sim_profile__weights(const struct pmon_sim_profile *p, const char *event,
			      struct pmon_sim_weight **out, size_t *n, double *kernel)
{
	struct pmon_sim_weight *w = calloc(p->n + 1, sizeof(*w));
	size_t k = 0;

	*out = w;
	*n = 0;
	if (!w)
		return -ENOMEM;
	for (size_t i = 0; i < p->n; i++) {
		const struct pmon_sim_profile_row *r = &p->rows[i];
		if (r->event >= p->nevents || strcmp(p->events[r->event], event))
			continue;
		/* perf's and pmon's names of kernel maps: [kernel.kallsyms], [kernel] */
		if (!strncmp(r->dso, "[kernel", 7)) {
			*kernel += r->period;
			continue;
		}
		w[k++] = (struct pmon_sim_weight){ r->symbol, r->period };
	}
	*n = k;
	return 0;
}

double pmon_sim_weights_total(const struct pmon_sim_weight *w, size_t n)
{
	double t = 0;

	for (size_t i = 0; i < n; i++)
		t += w[i].w;
	return t;
}

double pmon_sim_weights_share(const struct pmon_sim_weight *w, size_t n, double total,
			      const char *name)
{
	double s = 0;

	for (size_t i = 0; i < n; i++)
		if (!strcmp(w[i].name, name))
			s += w[i].w;
	return total > 0 ? 100.0 * s / total : 0.0;
}
