// SPDX-License-Identifier: MIT
/*
 * libpfm4 names (lib/event/pfm.h): encoding through pfm_get_os_event_encoding
 * with PFM_OS_PERF_EVENT_EXT, and the knowledge of which PMU an event
 * belongs to when that PMU is absent here (libpfm4 keeps the tables of every
 * PMU it knows; only present ones encode). No event table is copied.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <dlfcn.h>

#include <perfmon/pfmlib_perf_event.h>

#include "event/pfm.h"
#include "internal.h"

/*
 * libpfm4 is loaded on first use, not linked: its ~41,000 relocations dirty
 * some 300 pages at every program start (3-4 ms on this project's VMs),
 * while most runs never resolve a CPU-specific name. The header gives the
 * types; these pointers the functions.
 */
static struct {
	pfm_err_t (*initialize)(void);
	int (*get_os_event_encoding)(const char *, int, pfm_os_t, void *);
	pfm_err_t (*get_pmu_info)(pfm_pmu_t, pfm_pmu_info_t *);
	pfm_err_t (*get_event_info)(int, pfm_os_t, pfm_event_info_t *);
	int (*get_event_next)(int);
	const char *(*strerror)(int);
} pfm;

static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;
static bool pfm_ok;

static void pfm_init(void)
{
	void *h = dlopen("libpfm.so.4", RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return;
	*(void **)&pfm.initialize = dlsym(h, "pfm_initialize");
	*(void **)&pfm.get_os_event_encoding = dlsym(h, "pfm_get_os_event_encoding");
	*(void **)&pfm.get_pmu_info = dlsym(h, "pfm_get_pmu_info");
	*(void **)&pfm.get_event_info = dlsym(h, "pfm_get_event_info");
	*(void **)&pfm.get_event_next = dlsym(h, "pfm_get_event_next");
	*(void **)&pfm.strerror = dlsym(h, "pfm_strerror");
	pfm_ok = pfm.initialize && pfm.get_os_event_encoding && pfm.get_pmu_info &&
		pfm.get_event_info && pfm.get_event_next && pfm.strerror &&
		pfm.initialize() == PFM_SUCCESS;
}

static bool pfm_ready(void)
{
	pthread_once(&pfm_once, pfm_init);
	return pfm_ok;
}

/* PMUs that are no hardware of their own: the generic perf tables. */
static bool generic_pmu(pfm_pmu_type_t t, const char *name)
{
	return t == PFM_PMU_TYPE_OS_GENERIC || !strncmp(name, "perf", 4);
}

/* Search every PMU, present or not, for an event named @ev (case-insensitive). */
static bool find_absent(const char *name, struct pmon_pfm_enc *enc)
{
	char want_pmu[64] = "", ev[256];
	const char *sep = strstr(name, "::");
	pfm_pmu_info_t pi;
	pfm_event_info_t ei;

	if (sep) {
		pmon__fmt(want_pmu, sizeof(want_pmu), "%.*s", (int)(sep - name), name);
		name = sep + 2;
	}
	/* The event name is up to the first ':' (what follows are umasks). */
	pmon__fmt(ev, sizeof(ev), "%.*s", (int)strcspn(name, ":"), name);
	for (int p = PFM_PMU_NONE + 1; p < PFM_PMU_MAX; p++) {
		memset(&pi, 0, sizeof(pi));
		pi.size = sizeof(pi);
		if (pfm.get_pmu_info((pfm_pmu_t)p, &pi) != PFM_SUCCESS || pi.is_present)
			continue;
		if (want_pmu[0] && strcasecmp(want_pmu, pi.name))
			continue;
		for (int i = pi.first_event; i != -1; i = pfm.get_event_next(i)) {
			memset(&ei, 0, sizeof(ei));
			ei.size = sizeof(ei);
			if (pfm.get_event_info(i, PFM_OS_NONE, &ei) != PFM_SUCCESS)
				continue;
			if (!strcasecmp(ei.name, ev)) {
				pmon__strlcpy(enc->pmu, pi.name, sizeof(enc->pmu));
				pmon__strlcpy(enc->pmu_desc, pi.desc ? pi.desc : "",
					      sizeof(enc->pmu_desc));
				enc->core = pi.type == PFM_PMU_TYPE_CORE;
				return true;
			}
		}
	}
	return false;
}

int pmon__pfm_encode(const char *name, struct pmon_pfm_enc *enc)
{
	struct perf_event_attr attr;
	pfm_perf_encode_arg_t arg;
	pfm_event_info_t ei;
	pfm_pmu_info_t pi;
	char *fstr = NULL;
	int r;

	memset(enc, 0, sizeof(*enc));
	if (!pfm_ready())
		return -ENOENT;
	memset(&attr, 0, sizeof(attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &attr;
	arg.size = sizeof(arg);
	arg.fstr = &fstr;
	/* Count at all levels here; pmon applies the user's modifiers itself. */
	r = pfm.get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
	if (r == PFM_SUCCESS) {
		enc->type = attr.type;
		enc->config = attr.config;
		enc->config1 = attr.config1;
		enc->config2 = attr.config2;
		pmon__strlcpy(enc->fstr, fstr ? fstr : name, sizeof(enc->fstr));
		free(fstr);
		memset(&ei, 0, sizeof(ei));
		ei.size = sizeof(ei);
		memset(&pi, 0, sizeof(pi));
		pi.size = sizeof(pi);
		if (arg.idx >= 0 && pfm.get_event_info(arg.idx, PFM_OS_NONE, &ei) == PFM_SUCCESS &&
		    pfm.get_pmu_info(ei.pmu, &pi) == PFM_SUCCESS) {
			pmon__strlcpy(enc->pmu, pi.name, sizeof(enc->pmu));
			pmon__strlcpy(enc->pmu_desc, pi.desc ? pi.desc : "", sizeof(enc->pmu_desc));
			enc->core = pi.type == PFM_PMU_TYPE_CORE && !generic_pmu(pi.type, pi.name);
		}
		return 0;
	}
	free(fstr);
	if (r == PFM_ERR_NOTFOUND || r == PFM_ERR_NOTSUPP) {
		if (find_absent(name, enc))
			return -ENODEV;
		return -ENOENT;
	}
	/* The name was found but an attribute or umask is wrong. */
	pmon__strlcpy(enc->fstr, pfm.strerror(r), sizeof(enc->fstr));
	return -EINVAL;
}

long pmon__pfm_foreach(void (*cb)(void *ctx, const char *pmu, const char *name, const char *desc),
		       void *ctx)
{
	pfm_pmu_info_t pi;
	pfm_event_info_t ei;
	long n = 0;

	if (!pfm_ready())
		return 0;
	for (int p = PFM_PMU_NONE + 1; p < PFM_PMU_MAX; p++) {
		memset(&pi, 0, sizeof(pi));
		pi.size = sizeof(pi);
		if (pfm.get_pmu_info((pfm_pmu_t)p, &pi) != PFM_SUCCESS || !pi.is_present)
			continue;
		for (int i = pi.first_event; i != -1; i = pfm.get_event_next(i)) {
			memset(&ei, 0, sizeof(ei));
			ei.size = sizeof(ei);
			if (pfm.get_event_info(i, PFM_OS_NONE, &ei) != PFM_SUCCESS)
				continue;
			cb(ctx, pi.name, ei.name, ei.desc ? ei.desc : "");
			n++;
		}
	}
	return n;
}
