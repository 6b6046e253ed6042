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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

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
				if (PMON_GROW(&r, &cap, nr + 1)) {
					err = -ENOMEM;
					goto fail;
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

const struct pmon_sim_region_figures *
pmon_sim_region_figures__find(const struct pmon_sim_region_figures *f, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(f[i].name, name))
			return &f[i];
	return NULL;
}

/* Add document @doc's regions to @f. Return: 0 or -ENOMEM. */
static int add_report(json_t *doc, struct pmon_sim_region_figures **f, size_t *n, size_t *cap)
{
	size_t i, k;
	json_t *r, *m;

	json_array_foreach(json_object_get(doc, "regions"), i, r)
	{
		const char *name = json_string_value(json_object_get(r, "name"));
		if (!name)
			continue;
		struct pmon_sim_region_figures *e =
			(struct pmon_sim_region_figures *)pmon_sim_region_figures__find(*f, *n,
											name);
		if (!e) {
			if (*n == *cap) {
				size_t c = *cap ? *cap * 2 : 8;
				void *p = c > SIZE_MAX / sizeof(**f) ? NULL
								     : realloc(*f, c * sizeof(**f));
				if (!p)
					return -ENOMEM;
				*f = p;
				*cap = c;
			}
			e = &(*f)[(*n)++];
			memset(e, 0, sizeof(*e));
			pmon__strlcpy(e->name, name, sizeof(e->name));
		}
		e->pairs += (uint64_t)json_integer_value(json_object_get(r, "pairs"));
		json_array_foreach(json_object_get(r, "metrics"), k, m)
		{
			const char *mn = json_string_value(json_object_get(m, "name"));
			const char *unit = json_string_value(json_object_get(m, "unit"));
			size_t j = 0;
			if (!mn)
				continue;
			while (j < e->nm && strcmp(e->m[j].name, mn))
				j++;
			if (j == e->nm) {
				if (e->nm == sizeof(e->m) / sizeof(e->m[0]))
					continue;
				pmon__strlcpy(e->m[e->nm++].name, mn, sizeof(e->m[0].name));
			}
			e->m[j].total += json_number_value(json_object_get(m, "total"));
			pmon__strlcpy(e->m[j].unit, unit ? unit : "", sizeof(e->m[j].unit));
		}
	}
	return 0;
}

int pmon_sim__region_figures(const char *path, struct pmon_sim_region_figures **out, size_t *n)
{
	FILE *f = fopen(path, "re");
	size_t cap = 0;
	json_t *doc;
	int err = 0;

	*out = NULL;
	*n = 0;
	while (f && !err && (doc = json_loadf(f, JSON_DISABLE_EOF_CHECK, NULL))) {
		err = add_report(doc, out, n, &cap);
		json_decref(doc);
	}
	if (f)
		fclose(f);
	if (err) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return err;
}
