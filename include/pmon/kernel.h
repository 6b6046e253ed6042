/* SPDX-License-Identifier: MIT */
/*
 * What the running kernel exposes for counting: the perf event sources
 * (/sys/bus/event_source/devices), perf_event_paranoid, the core PMU's rdpmc
 * sysfs mode, whether a hardware event opens, what an mmapped event's page
 * says (cap_user_rdpmc, pmc_width), and the device files of the direct paths
 * (/dev/cpu/N/msr, /dev/cpu/N/cpuid) and resctrl. Read-only: nothing here
 * changes a setting.
 */
#ifndef PMON_KERNEL_H
#define PMON_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pmon/common.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PMON_MAX_PMUS 64

struct pmon_pmu_desc {
	char name[64]; /* "cpu", "software", "msr", "uncore_imc_0" */
	int type; /* perf_event_attr.type, -1 when unreadable */
};

struct pmon_kernel_info {
	int paranoid; /* /proc/sys/kernel/perf_event_paranoid; INT_MIN if absent */
	int nmi_watchdog; /* /proc/sys/kernel/nmi_watchdog; -1 if absent */
	struct pmon_pmu_desc pmus[PMON_MAX_PMUS];
	size_t npmus;
	char core_pmu[64]; /* "cpu", or "cpu_core" on hybrid parts ("cpu_atom" if
			    * only that one is there); "" when none */
	int rdpmc_mode; /* core PMU's rdpmc file: 0 never, 1 mmapped events, 2 always; -1 absent */
	bool has_sw_pmu; /* the "software" PMU exists */
	bool has_tracepoints; /* the "tracepoint" PMU exists */
	int hw_open_err; /* 0 when a cycles event opens for this process, else -errno */
	int sw_open_err; /* likewise for task-clock */
	/* The mmapped page of an event of this process (cycles if it opens, else
	 * task-clock). A software event's page never allows rdpmc. */
	const char *mmap_event; /* "cycles", "task-clock", or NULL when none could be mapped */
	int mmap_err;
	bool cap_user_rdpmc, cap_user_time, cap_user_time_zero;
	unsigned pmc_width;
	bool msr_dev; /* /dev/cpu/0/msr exists */
	bool cpuid_dev; /* /dev/cpu/0/cpuid exists */
	bool resctrl_mounted; /* a resctrl file system is mounted */
	char resctrl_path[256];
	bool resctrl_l3_mon; /* <resctrl>/info/L3_MON exists */
	/* Every core PMU with a readable type: "cpu", or on hybrid Intel parts
	 * "cpu_core" and "cpu_atom" (Linux arch/x86/events/intel/core.c
	 * intel_pmu_init() registers one per core type), in that order. */
	struct pmon_pmu_desc core_pmus[4];
	size_t ncore_pmus;
};

struct pmon_kernel_probe_opts {
	size_t sz; /* sizeof(struct pmon_kernel_probe_opts) */
	const char *sysfs_root; /* NULL: "/sys" */
	const char *procfs_root; /* NULL: "/proc" */
	const char *dev_root; /* NULL: "/dev" */
	bool no_perf_open; /* skip perf_event_open probes (tests on fake trees) */
};

/**
 * pmon_kernel_probe() - find out what this kernel offers.
 * @opts: may be NULL.
 * A macro: it passes the size of *@out as the caller was built to
 * pmon_kernel_probe_sized(), so that struct pmon_kernel_info may grow (a
 * caller built with a larger one gets zeros past this library's; one
 * smaller than the first release's is refused with -EINVAL).
 * Return: 0 (every field filled, absences recorded in it), or -EINVAL for
 * bad @opts.
 */
PMON_API int pmon_kernel_probe_sized(const struct pmon_kernel_probe_opts *opts,
				     struct pmon_kernel_info *out, size_t out_sz);
#define pmon_kernel_probe(opts, out) pmon_kernel_probe_sized((opts), (out), sizeof(*(out)))
/* The function of release 0.1, for programs linked before the macro. */
PMON_API int(pmon_kernel_probe)(const struct pmon_kernel_probe_opts *opts,
				struct pmon_kernel_info *out);

/**
 * pmon_kernel_core_pmus() - the core PMUs under @sysfs_root (NULL: "/sys"):
 * "cpu", or "cpu_core" and "cpu_atom" on hybrid parts, with their
 * perf_event_attr types. The one answer to "is there a core PMU" (the
 * discovery pmon_kernel_probe() uses, without perf_event_open).
 * @out: room for @max entries (4 is enough); may be NULL with @max 0.
 * Return: how many there are (0: none), or a negative error.
 */
PMON_API int pmon_kernel_core_pmus(const char *sysfs_root, struct pmon_pmu_desc *out, size_t max);

/**
 * pmon_kernel_pmu_cpus() - the CPUs PMU @pmu counts on, from
 * SYSFS/bus/event_source/devices/PMU/cpus (on hybrid parts cpu_core has the
 * P-cores, cpu_atom the E-cores; perf opens each PMU's events on those CPUs
 * only). @sysfs_root NULL: "/sys".
 * Return: 0 with a malloc()ed list in *@cpus (the caller frees it) and its
 * length in *@n; -ENOENT when the PMU has no cpus file (it counts on every
 * CPU); -EINVAL for an unreadable list.
 */
PMON_API int pmon_kernel_pmu_cpus(const char *sysfs_root, const char *pmu, long **cpus, size_t *n);

/** pmon_kernel_has_core_pmu() - pmon_kernel_core_pmus() > 0. */
PMON_API bool pmon_kernel_has_core_pmu(const char *sysfs_root);

/* ---- verdicts: what this machine can count, and why not (pmon info) ---- */

enum pmon_verdict_state {
	PMON_VERDICT_NO = 0,
	PMON_VERDICT_YES,
	PMON_VERDICT_PARTIAL, /* some of it: software events only, RDT not mounted */
	PMON_VERDICT_NA, /* cannot be told (another machine's dump) */
};

/* The capabilities judged, in pmon info's order. */
enum pmon_verdict_kind {
	PMON_VERDICT_HW, /* hardware counters */
	PMON_VERDICT_RDPMC, /* user-space rdpmc */
	PMON_VERDICT_SAMPLING,
	PMON_VERDICT_SW, /* software events */
	PMON_VERDICT_TRACE, /* tracepoints */
	PMON_VERDICT_TSC, /* TSC timing */
	PMON_VERDICT_RDT, /* CMT/MBM */
	PMON_VERDICT__COUNT
};

struct pmon_verdict {
	const char *key; /* a stable name: "hardware_counters", "user_rdpmc"... */
	const char *label; /* in words: "hardware counters" */
	enum pmon_verdict_state state;
	char why[320]; /* the reason, with the fix where one exists */
};

/** pmon_verdict_state_name() - "yes", "no", "partial" or "n/a". */
PMON_API const char *pmon_verdict_state_name(enum pmon_verdict_state s);

struct pmon_cpu_info;
struct pmon_tsc_choice;

/**
 * pmon_verdicts() - each capability of enum pmon_verdict_kind judged from
 * CPUID's facts @ci (pmon_cpu_decode()), the kernel's @k (pmon_kernel_probe()
 * of this machine; NULL when @ci is another machine's dump: then only what
 * CPUID tells) and the TSC figure @tsc (pmon_tsc_choose()), into @out
 * indexed by the kind. Pure; thread-safe.
 */
PMON_API void pmon_verdicts(const struct pmon_cpu_info *ci, const struct pmon_kernel_info *k,
			    const struct pmon_tsc_choice *tsc,
			    struct pmon_verdict out[PMON_VERDICT__COUNT]);

/**
 * pmon_rdpmc_mode_allow() - let any process execute RDPMC for a session:
 * the core PMU's sysfs rdpmc mode (set_attr_rdpmc() in Linux) set to 2,
 * the mode before saved in @sysfs/.pmon-rdpmc-saved (/run without @sysfs)
 * for pmon_rdpmc_mode_restore(). @sysfs: NULL for /sys (tests pass a copy).
 * Return: 0 with the knob's path in @path and the mode before in *@was;
 * -ENODEV (no core PMU with an rdpmc mode), -EACCES or -EIO (the state
 * could not be saved), -errno of writing the knob (root needed); detail set.
 */
PMON_API int pmon_rdpmc_mode_allow(const char *sysfs, char *path, size_t len, int *was);
/**
 * pmon_rdpmc_mode_restore() - put back the mode pmon_rdpmc_mode_allow()
 * saved, and remove the state. Return: 0 with the knob's path, the mode
 * before (*@was) and after (*@now); -ENOENT (nothing saved), -EINVAL (a
 * state that is not a mode), -ENODEV, -errno of writing; detail set.
 */
PMON_API int pmon_rdpmc_mode_restore(const char *sysfs, char *path, size_t len, int *was, int *now);

#ifdef __cplusplus
}
#endif
#endif
