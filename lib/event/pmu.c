// SPDX-License-Identifier: MIT
/*
 * sysfs PMU discovery (pmon/kernel.h): the PMUs under
 * SYSFS/bus/event_source/devices, which of them are core PMUs, and the CPUs
 * a PMU counts on. The naming layer owns it (the event parser asks whether a
 * core PMU is there and which ones a hybrid part has); the counting layer's
 * pmon_kernel_probe() and the counters build on it, never the reverse (issue
 * #25). Reads sysfs only; roots are parameters so tests can point it at a
 * fake tree.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include <pmon/kernel.h>

static int pmu_cmp(const void *a, const void *b)
{
	return strcmp(((const struct pmon_pmu_desc *)a)->name,
		      ((const struct pmon_pmu_desc *)b)->name);
}

size_t pmon__pmus_scan(const char *sys, struct pmon_pmu_desc *out, size_t max)
{
	char path[512];
	DIR *d;
	struct dirent *de;
	size_t n = 0;

	pmon__fmt(path, sizeof(path), "%s/bus/event_source/devices", sys);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max) {
		struct pmon_pmu_desc *p;
		long type;

		if (de->d_name[0] == '.')
			continue;
		p = &out[n++];
		pmon__strlcpy(p->name, de->d_name, sizeof(p->name));
		pmon__fmt(path, sizeof(path), "%s/bus/event_source/devices/%s/type", sys,
			  de->d_name);
		p->type = pmon__read_long(path, &type) ? -1 : (int)type;
	}
	closedir(d);
	qsort(out, n, sizeof(out[0]), pmu_cmp);
	return n;
}

size_t pmon__pmus_core(const struct pmon_pmu_desc *pmus, size_t n, struct pmon_pmu_desc *core,
		       size_t max)
{
	/* The core PMU is "cpu"; on hybrid Intel parts "cpu_core" and
	 * "cpu_atom" (perf's pmu_is_core / is_pmu_hybrid; report the P-core
	 * one as the main one, the E-core one where it is alone). */
	static const char *const core_names[] = { "cpu", "cpu_core", "cpu_atom" };
	size_t ncore = 0;

	for (size_t c = 0; c < PMON_ARRAY_SIZE(core_names); c++)
		for (size_t i = 0; i < n; i++)
			if (!strcmp(pmus[i].name, core_names[c]) && pmus[i].type >= 0 &&
			    ncore < max)
				core[ncore++] = pmus[i];
	return ncore;
}

int pmon_kernel_core_pmus(const char *sysfs_root, struct pmon_pmu_desc *out, size_t max)
{
	/* As many as struct pmon_kernel_info holds, so the answer is
	 * pmon_kernel_probe()'s ncore_pmus. */
	struct pmon_pmu_desc core[PMON_ARRAY_SIZE(((struct pmon_kernel_info *)0)->core_pmus)];
	struct pmon_pmu_desc *pmus = malloc(PMON_MAX_PMUS * sizeof(*pmus));
	size_t n, ncore;

	if (!pmus)
		return -ENOMEM;
	n = pmon__pmus_scan(sysfs_root ? sysfs_root : "/sys", pmus, PMON_MAX_PMUS);
	ncore = pmon__pmus_core(pmus, n, core, PMON_ARRAY_SIZE(core));
	free(pmus);
	for (size_t i = 0; i < ncore && i < max; i++)
		out[i] = core[i];
	return (int)ncore;
}

bool pmon_kernel_has_core_pmu(const char *sysfs_root)
{
	return pmon_kernel_core_pmus(sysfs_root, NULL, 0) > 0;
}

int pmon_kernel_pmu_cpus(const char *sysfs_root, const char *pmu, long **cpus, size_t *n)
{
	char path[512], buf[4096];

	*cpus = NULL;
	*n = 0;
	if (!pmu || !*pmu || strchr(pmu, '/') ||
	    !pmon__fmt(path, sizeof(path), "%s/bus/event_source/devices/%s/cpus",
		       sysfs_root ? sysfs_root : "/sys", pmu))
		return -EINVAL;
	long len = pmon__read_text(path, buf, sizeof(buf));
	if (len == -ENOENT)
		return -ENOENT;
	if (len < 0)
		return (int)len;
	return pmon__idlist_parse(buf, 1 << 20, cpus, n);
}
