/* SPDX-License-Identifier: MIT */
/*
 * Resource monitoring (CMT/MBM) through Linux resctrl: the OS side of the
 * seed's IA32_PQR_ASSOC (a monitoring group owns an RMID; its tasks carry it
 * on every context switch) and IA32_QM_EVTSEL/QM_CTR (the kernel reads them
 * for the group's mon_data files). pmon creates its own groups
 * (mon_groups/pmon-PID-N), never touches others, and removes its own --
 * also those a crashed earlier run left behind.
 *
 * The resctrl root is a parameter. A root that is not a resctrl mount is an
 * emulated tree (tests): there pmon creates a new group's files as the
 * kernel would (tasks, and mon_data with the root's domains and events,
 * reading 0), and the caller updates them.
 */
#ifndef PMON_RDT_H
#define PMON_RDT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <pmon/common.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PMON_RESCTRL_ROOT "/sys/fs/resctrl"
#define PMON_RDT_MAX_DOMAINS 64

enum pmon_rdt_state {
	PMON_RDT_OK = 0,
	PMON_RDT_ERROR, /* "Error": bad RMID or event (QM_CTR bit 63) */
	PMON_RDT_UNAVAILABLE, /* "Unavailable": no data yet (QM_CTR bit 62) */
	PMON_RDT_UNASSIGNED, /* "Unassigned": no hardware counter assigned (mbm_event mode) */
	PMON_RDT_ABSENT, /* no such file: the event is not monitored here */
};

struct pmon_rdt_value {
	uint64_t v; /* bytes (occupancy) or cumulative bytes (bandwidth) */
	enum pmon_rdt_state state;
};

struct pmon_rdt_domain {
	char name[32]; /* "mon_L3_00" */
	struct pmon_rdt_value occupancy, total, local;
};

struct pmon_rdt_reading {
	size_t n;
	struct pmon_rdt_domain d[PMON_RDT_MAX_DOMAINS];
};

struct pmon_rdt_caps {
	char root[256];
	bool emulated; /* not a resctrl mount */
	unsigned num_rmids; /* info/L3_MON/num_rmids */
	bool occupancy, mbm_total, mbm_local; /* info/L3_MON/mon_features */
	uint64_t max_threshold_occupancy;
	unsigned groups; /* monitoring groups in use (each holds an RMID) */
};

/**
 * pmon_rdt_caps() - what the resctrl tree at @root offers (NULL: the mounted
 * one). Return: 0, -ENOENT (detail: not mounted / no L3_MON), -errno.
 */
PMON_API int pmon_rdt_caps(const char *root, struct pmon_rdt_caps *out);

struct pmon_rdt_group;

/**
 * pmon_rdt_group__new() - create mon_groups/pmon-<pid>-<n> under @root.
 * Return: the group, or NULL with errno: ENOSPC (no free RMID: num_rmids in
 * use, say which), EBUSY (RMIDs in limbo), or another.
 */
PMON_API struct pmon_rdt_group *pmon_rdt_group__new(const char *root);
/** pmon_rdt_group__root() - the root group (every task of the system); never
 * removed by pmon_rdt_group__remove(), which then only frees the handle. */
PMON_API struct pmon_rdt_group *pmon_rdt_group__root(const char *root);
/** pmon_rdt_group__set_cpus() - monitor the CPUs of @list ("0-3,8") with the
 * group (its cpus_list file). */
PMON_API int pmon_rdt_group__set_cpus(struct pmon_rdt_group *g, const char *list);
/** Move @pid (and, with @threads, all its threads) into the group. -ESRCH if gone. */
PMON_API int pmon_rdt_group__add(struct pmon_rdt_group *g, pid_t pid, bool threads);
/** Read every domain's occupancy and cumulative bandwidth now. */
PMON_API int pmon_rdt_group__read(struct pmon_rdt_group *g, struct pmon_rdt_reading *r);
PMON_API const char *pmon_rdt_group__path(const struct pmon_rdt_group *g);
/** Remove the group (its tasks return to the parent group) and free it. */
PMON_API int pmon_rdt_group__remove(struct pmon_rdt_group *g);

/**
 * pmon_rdt_cleanup() - remove groups named pmon-<pid>-<n> whose process is
 * gone (a crashed run); others are never touched. *@removed gets the count.
 */
PMON_API int pmon_rdt_cleanup(const char *root, unsigned *removed);

PMON_API const char *pmon_rdt_state_name(enum pmon_rdt_state s);

/* ---- the MSR interface (SDM 17.16.6-17.16.7), for systems without resctrl ---- */

struct pmon_cpu_info;
struct pmon_msr_write_rec;
struct pmon_rdt_msr;

/**
 * pmon_rdt_mbm_delta() - bytes counted between two raw IA32_QM_CTR readings
 * of a counter @width bits wide (it wraps), times @upscale.
 */
PMON_API uint64_t pmon_rdt_mbm_delta(uint64_t prev, uint64_t cur, unsigned width, uint32_t upscale);

/**
 * pmon_rdt_msr__start() - monitor @cpus with RMID @rmid through MSRs: the RMID
 * is written into the RMID field of IA32_PQR_ASSOC of each CPU, ceil(log2(1 +
 * CPUID.(0FH,0):EBX)) bits wide (SDM 17.16.6), the old RMID cleared, the CLOS
 * kept. Refuses (-EBUSY) while resctrl is mounted, as pqos does: the kernel
 * owns the RMIDs then; and (-EOPNOTSUPP) where Linux disables monitoring for
 * an erratum (Skylake-SP stepping <= 4). With Sub-NUMA Clustering
 * (pmon_rdt_snc_nodes() > 1) the RMID is a logical one, 1 .. (max + 1) /
 * nodes - 1, and -EOPNOTSUPP unless MSR_RMID_SNC_CONFIG (CA0H) bit 0 is
 * clear on each domain (RMID sharing mode, as Linux sets it).
 * @device: as for pmon_msr_read(). @ci: CPUID facts (max RMID, events,
 * upscale, counter width, errata).
 * @l3_ids: the L3 domain of each CPU (pmon_cpu_l3_ids()), or NULL for one
 * domain; -1 entries join the first domain.
 * Return: the monitor, or NULL with errno (EBUSY, EOPNOTSUPP as above).
 */
PMON_API struct pmon_rdt_msr *pmon_rdt_msr__start(const char *device,
						  const struct pmon_cpu_info *ci, const int *cpus,
						  size_t ncpus, const int *l3_ids, unsigned rmid,
						  bool resctrl_mounted);
/**
 * pmon_rdt_snc_nodes() - Sub-NUMA Clustering nodes per L3 cache, as Linux's
 * snc_get_config() infers them (arch/x86/kernel/cpu/resctrl/monitor.c): on
 * the Intel models with MSR_RMID_SNC_CONFIG (Ice Lake-SP 6AH, Sapphire
 * Rapids-SP 8FH, Emerald Rapids CFH, Granite Rapids ADH, Sierra Forest AFH),
 * the CPUs sharing CPU 0's L3 (@sysfs_root/devices/system/cpu/cpu0/cache/
 * indexN/shared_cpu_map) over the CPUs of CPU 0's node
 * (devices/system/node/nodeN/cpulist); 1, 2, 3, 4 or 6, anything else 1.
 * With SNC, pmon_rdt_msr__start() divides the RMIDs and the upscaling factor
 * by it and reads each node's physical RMID. @sysfs_root: NULL for /sys.
 */
PMON_API unsigned pmon_rdt_snc_nodes(const char *sysfs_root, const struct pmon_cpu_info *ci);
/* Options of pmon_rdt_msr__start_opts(); @sz = sizeof. */
struct pmon_rdt_msr_opts {
	size_t sz;
	/* A file kept while the registers are programmed: the writes that
	 * put IA32_PQR_ASSOC and IA32_QM_EVTSEL back, and who wrote them, as
	 * pmon_msr_counting_opts' state_file (pmon/msr.h): written (0600,
	 * whole or absent) before the first MSR write, removed by a successful
	 * restore, replayed by pmon_msr_state__restore(). A file already there
	 * refuses the start (-EBUSY; the detail says whether a live pmon holds
	 * it or a dead one left the registers programmed). */
	const char *state_file;
	/* The sysfs that Sub-NUMA Clustering is detected from
	 * (pmon_rdt_snc_nodes()); NULL: /sys. */
	const char *sysfs_root;
};
/**
 * pmon_rdt_msr__start_opts() - pmon_rdt_msr__start() with options (@opts
 * may be NULL).
 */
PMON_API struct pmon_rdt_msr *
pmon_rdt_msr__start_opts(const char *device, const struct pmon_cpu_info *ci, const int *cpus,
			 size_t ncpus, const int *l3_ids, unsigned rmid, bool resctrl_mounted,
			 const struct pmon_rdt_msr_opts *opts);
/**
 * pmon_rdt_msr__read() - for each L3 domain, on one of its CPUs (IA32_QM_CTR
 * reports the domain of the CPU that reads it, SDM 17.16.7): select each
 * event for the RMID in IA32_QM_EVTSEL and read IA32_QM_CTR. One
 * pmon_rdt_domain per domain ("mon_L3_NN", as resctrl names them).
 * With SNC each domain is the sum of its nodes' physical RMIDs (logical +
 * node * RMIDs per node), scaled by upscale / nodes, as Linux's mon_L3_NN.
 * Occupancy in bytes; bandwidth as bytes accumulated since start across
 * wraps of the enumerated counter width, with Linux's MBM correction factor
 * where the erratum applies; the Error (bit 63) and Unavailable (bit 62) bits
 * become states.
 */
PMON_API int pmon_rdt_msr__read(struct pmon_rdt_msr *m, struct pmon_rdt_reading *r);
/*
 * How often the MBM counters must be read: Linux's MBM_OVERFLOW_INTERVAL
 * (arch/x86/kernel/cpu/resctrl, mbm_handle_overflow() every 1000 ms). A
 * 24-bit counter times upscale wraps in 11-33 s at 50 GB/s (Broadwell-EP,
 * Skylake-SP, Cascade Lake); two readings further apart than one wrap lose
 * whole wraps, which no delta can recover.
 */
#define PMON_RDT_MBM_SAMPLE_MS 1000
/**
 * pmon_rdt_mbm_samples() - into how many equal steps, none longer than
 * PMON_RDT_MBM_SAMPLE_MS, a print interval of @interval_ms is cut: call
 * pmon_rdt_msr__sample() at each step but the last and pmon_rdt_msr__read()
 * at the last. Pure; at least 1.
 */
PMON_API unsigned long pmon_rdt_mbm_samples(unsigned long interval_ms);
/**
 * pmon_rdt_msr__sample() - read every domain's bandwidth counters now and
 * fold the step since the last reading into the running counts that
 * pmon_rdt_msr__read() reports (nothing is returned). Call it at least every
 * PMON_RDT_MBM_SAMPLE_MS between reads. Return: 0 or -errno (detail).
 */
PMON_API int pmon_rdt_msr__sample(struct pmon_rdt_msr *m);
/** Put back IA32_PQR_ASSOC and IA32_QM_EVTSEL of every CPU; safe twice. */
PMON_API int pmon_rdt_msr__restore(struct pmon_rdt_msr *m);
/**
 * pmon_rdt_msr__writes() - the MSR writes, in order, most recent last. A long
 * run selects events in IA32_QM_EVTSEL every second: past 4096 writes the
 * oldest are dropped, keeping the last 1024 (pmon_rdt_msr__writes_total()
 * counts all of them).
 */
PMON_API const struct pmon_msr_write_rec *pmon_rdt_msr__writes(const struct pmon_rdt_msr *m,
							       size_t *n);
/** pmon_rdt_msr__writes_total() - how many MSR writes were made, kept or not. */
PMON_API size_t pmon_rdt_msr__writes_total(const struct pmon_rdt_msr *m);
PMON_API void pmon_rdt_msr__free(struct pmon_rdt_msr *m);

#ifdef __cplusplus
}
#endif
#endif
