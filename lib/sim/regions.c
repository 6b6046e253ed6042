// SPDX-License-Identifier: MIT
/*
 * pmon simulate --regions: a run's costs per instrumented region. The
 * region runtime (lib/region/region.c) switches callgrind's collection on
 * inside regions only and asks for a dump labelled "pmon-region ID NAME"
 * each time another region starts collecting; a dump zeroes the costs, so
 * the parts of callgrind's output (--combine-dumps=yes) split the run into
 * stretches that each belong to one region. This file gives each part to
 * its region and sums. Pure: it reads parsed runs only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include <pmon/sim.h>

#define MAX_TERMS 4

/* The columns of @cg that event expression @expr ("ILmr+DLmr") sums. */
static int columns(const struct pmon_callgrind *cg, const char *expr, size_t *col)
{
	int n = 0;

	for (const char *s = expr; *s;) {
		size_t len = strcspn(s, "+"), i = 0, ne = pmon_callgrind__nevents(cg);
		while (i < ne &&
		       (strlen(pmon_callgrind__event(cg, i)) != len ||
			strncmp(pmon_callgrind__event(cg, i), s, len)))
			i++;
		if (i == ne || n == MAX_TERMS)
			return pmon__err(-ENOENT, "the simulation did not collect '%.*s'%s",
					 (int)len, s,
					 s[0] == 'B' ? " (simulate with --branch)" : "");
		col[n++] = i;
		s += len;
		if (*s == '+')
			s++;
	}
	return n;
}

/* "Client Request: pmon-region ID NAME" -> @id, @name; false otherwise. */
static bool label(const char *trigger, int *id, char *name, size_t len)
{
	const char *s = strstr(trigger, PMON_SIM_REGION_LABEL);
	uint64_t v = 0;

	if (!s)
		return false;
	s += strlen(PMON_SIM_REGION_LABEL);
	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > 1u << 20)
			return false;
	}
	if (*s == ' ')
		s++;
	*id = (int)v;
	pmon__strlcpy(name, s, len);
	return true;
}

int pmon_sim__regions(struct pmon_callgrind *const *cg, size_t ncg, const unsigned *events,
		      size_t nevents, struct pmon_sim_region **out, size_t *n)
{
	const struct pmon_sim_event *tab;
	size_t ntab = pmon_sim_events(&tab);
	struct pmon_sim_region *r = NULL, outside = { .id = -1, .name = "outside regions" };
	size_t nr = 0, cap = 0;
	int err = 0;

	*out = NULL;
	*n = 0;
	if (nevents > 16)
		return pmon__err(-EINVAL, "%zu events: at most 16 per region", nevents);
	for (size_t e = 0; e < nevents; e++)
		if (events[e] >= ntab)
			return pmon__err(-EINVAL, "simulated event %u does not exist", events[e]);
	for (size_t k = 0; k < ncg; k++) {
		size_t col[16][MAX_TERMS];
		int ncol[16];
		for (size_t e = 0; e < nevents; e++)
			if ((ncol[e] = columns(cg[k], tab[events[e]].engine, col[e])) < 0) {
				err = ncol[e];
				goto fail;
			}
		struct pmon_sim_region *cur = &outside;
		size_t np = pmon_callgrind__nparts(cg[k]);
		for (size_t p = 0; p < np; p++) {
			struct pmon_callgrind_part part;
			pmon_callgrind__part(cg[k], p, &part);
			for (size_t e = 0; e < nevents; e++)
				for (int t = 0; t < ncol[e]; t++)
					cur->v[e] += part.v[col[e][t]];
			int id;
			char name[64];
			if (!label(part.trigger, &id, name, sizeof(name)))
				continue;
			size_t i = 0;
			while (i < nr && r[i].id != id)
				i++;
			if (i == nr) {
				if (nr == cap) {
					size_t c = cap ? cap * 2 : 8;
					struct pmon_sim_region *x = realloc(r, c * sizeof(*x));
					if (!x) {
						err = -ENOMEM;
						goto fail;
					}
					r = x;
					cap = c;
				}
				r[nr] = (struct pmon_sim_region){ .id = id };
				pmon__strlcpy(r[nr].name, name, sizeof(r[nr].name));
				nr++;
			}
			cur = &r[i];
		}
	}
	bool any = false;
	for (size_t e = 0; e < nevents; e++)
		any |= outside.v[e] != 0;
	if (any) {
		struct pmon_sim_region *x = realloc(r, (nr + 1) * sizeof(*x));
		if (!x) {
			err = -ENOMEM;
			goto fail;
		}
		r = x;
		r[nr++] = outside;
	}
	*out = r;
	*n = nr;
	return 0;
fail:
	free(r);
	return err;
}
