// SPDX-License-Identifier: MIT
/*
 * What the kernel exposes for counting (pmon/kernel.h). Reads sysfs/procfs
 * and opens (then closes) one event of this process to learn what the perf
 * mmap page says; changes nothing. Roots are parameters so tests can point
 * it at a fake tree.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include <pmon/counter.h>
#include <pmon/kernel.h>

/* The library's one perf_event_open wrapper, without the user-only retry:
 * the probe reports what the kernel allows as asked. */
static int perf_open(struct perf_event_attr *attr)
{
	return pmon_perf_event_open(attr, 0, -1, -1, 0, false);
}

static void probe_pmus(const char *sys, struct pmon_kernel_info *k)
{
	char path[512];

	/* The discovery is the naming layer's (lib/event/pmu.c). */
	k->npmus = pmon__pmus_scan(sys, k->pmus, PMON_MAX_PMUS);
	for (size_t i = 0; i < k->npmus; i++) {
		const char *n = k->pmus[i].name;

		if (!strcmp(n, "software"))
			k->has_sw_pmu = true;
		else if (!strcmp(n, "tracepoint"))
			k->has_tracepoints = true;
	}
	k->ncore_pmus =
		pmon__pmus_core(k->pmus, k->npmus, k->core_pmus, PMON_ARRAY_SIZE(k->core_pmus));
	if (k->ncore_pmus)
		pmon__strlcpy(k->core_pmu, k->core_pmus[0].name, sizeof(k->core_pmu));
	if (k->core_pmu[0]) {
		long mode;
		pmon__fmt(path, sizeof(path), "%s/bus/event_source/devices/%s/rdpmc", sys,
			  k->core_pmu);
		if (!pmon__read_long(path, &mode))
			k->rdpmc_mode = (int)mode;
	}
}

static void probe_mmap(struct pmon_kernel_info *k, int fd, const char *name)
{
	long psz = sysconf(_SC_PAGESIZE);
	struct perf_event_mmap_page *pc = mmap(NULL, (size_t)psz, PROT_READ, MAP_SHARED, fd, 0);

	if (pc == MAP_FAILED) {
		k->mmap_err = -errno;
		return;
	}
	k->mmap_event = name;
	k->mmap_err = 0;
	k->cap_user_rdpmc = pc->cap_user_rdpmc;
	k->cap_user_time = pc->cap_user_time;
	k->cap_user_time_zero = pc->cap_user_time_zero;
	k->pmc_width = pc->pmc_width;
	munmap(pc, (size_t)psz);
}

static void probe_perf(struct pmon_kernel_info *k)
{
	struct perf_event_attr a;
	int hw, sw;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	a.exclude_kernel = 1; /* allowed at perf_event_paranoid 2 */
	a.exclude_hv = 1;
	hw = perf_open(&a);
	k->hw_open_err = hw < 0 ? -errno : 0;

	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	sw = perf_open(&a);
	k->sw_open_err = sw < 0 ? -errno : 0;

	k->mmap_err = -ENOENT;
	if (hw >= 0)
		probe_mmap(k, hw, "cycles");
	else if (sw >= 0)
		probe_mmap(k, sw, "task-clock");
	if (hw >= 0)
		close(hw);
	if (sw >= 0)
		close(sw);
}

static void probe_resctrl(const char *proc, struct pmon_kernel_info *k)
{
	char path[512], line[1024];
	FILE *f;

	pmon__fmt(path, sizeof(path), "%s/mounts", proc);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char dev[256], dir[256], fs[64];

		if (sscanf(line, "%255s %255s %63s", dev, dir, fs) == 3 && !strcmp(fs, "resctrl")) {
			k->resctrl_mounted = true;
			pmon__strlcpy(k->resctrl_path, dir, sizeof(k->resctrl_path));
			break;
		}
	}
	fclose(f);
	if (k->resctrl_mounted) {
		pmon__fmt(path, sizeof(path), "%s/info/L3_MON", k->resctrl_path);
		k->resctrl_l3_mon = access(path, F_OK) == 0;
	}
}

/* The size of struct pmon_kernel_info in its first release (0.1): every
 * caller's is at least this. A field added later goes at the end. */
#define KERNEL_INFO_SZ_V1 sizeof(struct pmon_kernel_info)

static int probe_full(const struct pmon_kernel_probe_opts *opts, struct pmon_kernel_info *k);

int pmon_kernel_probe_sized(const struct pmon_kernel_probe_opts *opts, struct pmon_kernel_info *out,
			    size_t out_sz)
{
	if (out_sz == sizeof(*out))
		return probe_full(opts, out);
	if (out_sz < KERNEL_INFO_SZ_V1)
		return pmon__err(-EINVAL,
				 "struct pmon_kernel_info: size %zu unknown (at least %zu)", out_sz,
				 KERNEL_INFO_SZ_V1);
	struct pmon_kernel_info *full = malloc(sizeof(*full));
	if (!full)
		return -ENOMEM;
	int err = probe_full(opts, full);
	pmon__copy_out(out, out_sz, full, sizeof(*full));
	free(full);
	return err;
}

int(pmon_kernel_probe)(const struct pmon_kernel_probe_opts *opts, struct pmon_kernel_info *out)
{
	return probe_full(opts, out);
}

static int probe_full(const struct pmon_kernel_probe_opts *opts, struct pmon_kernel_info *k)
{
	const char *sys = "/sys", *proc = "/proc", *dev = "/dev";
	bool no_perf = false;
	char path[512];
	long v;

	struct pmon_kernel_probe_opts oc;
	int oerr = PMON_OPTS_COPY(&oc, opts, struct pmon_kernel_probe_opts, sz);

	if (oerr)
		return oerr;
	if (opts) {
		opts = &oc;
		if (opts->sysfs_root)
			sys = opts->sysfs_root;
		if (opts->procfs_root)
			proc = opts->procfs_root;
		if (opts->dev_root)
			dev = opts->dev_root;
		no_perf = opts->no_perf_open;
	}
	memset(k, 0, sizeof(*k));
	k->rdpmc_mode = -1;
	k->hw_open_err = k->sw_open_err = k->mmap_err = -ENOENT;

	pmon__fmt(path, sizeof(path), "%s/sys/kernel/perf_event_paranoid", proc);
	k->paranoid = pmon__read_long(path, &v) ? INT_MIN : (int)v;
	pmon__fmt(path, sizeof(path), "%s/sys/kernel/nmi_watchdog", proc);
	k->nmi_watchdog = pmon__read_long(path, &v) ? -1 : (int)v;

	probe_pmus(sys, k);
	if (!no_perf)
		probe_perf(k);

	pmon__fmt(path, sizeof(path), "%s/cpu/0/msr", dev);
	k->msr_dev = access(path, F_OK) == 0;
	pmon__fmt(path, sizeof(path), "%s/cpu/0/cpuid", dev);
	k->cpuid_dev = access(path, F_OK) == 0;
	probe_resctrl(proc, k);
	return 0;
}
