/* SPDX-License-Identifier: MIT */
/*
 * The libpfm4 wrapper's private interface. libpfm4 ships its own copy of
 * perf_event.h that collides with <linux/perf_event.h>, so only pfm.c
 * includes libpfm4 headers, and this interface uses plain types.
 */
#ifndef PMON_EVENT_PFM_H
#define PMON_EVENT_PFM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pmon_pfm_enc {
	uint32_t type;
	uint64_t config, config1, config2;
	char fstr[256]; /* libpfm4's fully qualified name, e.g. "skl::INST_RETIRED:ANY_P:k=1:u=1" */
	char pmu[64]; /* libpfm4 PMU name of the event */
	char pmu_desc[128];
	bool core; /* a core PMU (not uncore, not the generic "perf" tables) */
};

/* Encode @name with libpfm4. Return: 0; -ENOENT when no PMU knows it;
 * -ENODEV when only a PMU that is not present here knows it (enc->pmu and
 * enc->pmu_desc name it); -EINVAL for a bad attribute (enc->fstr holds
 * libpfm4's message). */
int pmon__pfm_encode(const char *name, struct pmon_pfm_enc *enc);

/* Call @cb for every event of every present PMU; returns the count. */
long pmon__pfm_foreach(void (*cb)(void *ctx, const char *pmu, const char *name, const char *desc),
		       void *ctx);

#endif
