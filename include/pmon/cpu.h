/* SPDX-License-Identifier: MIT */
/*
 * CPU knowledge: raw CPUID snapshots and their pure decoding.
 *
 * A snapshot (struct pmon_cpuid) holds raw leaf/subleaf registers from one
 * source: the CPUID instruction on this CPU, /dev/cpu/N/cpuid, or a dump file
 * in the format of shared/data/cpuid ("LLLLLLLL SS: EAX EBX ECX EDX").
 * pmon_cpu_decode() turns a snapshot into facts (struct pmon_cpu_info); it
 * never executes CPUID itself, so another machine's dump decodes exactly like
 * the live CPU. Everything that asks "how many counters, how wide, may this
 * one be read" asks these structs and never re-derives it.
 */
#ifndef PMON_CPU_H
#define PMON_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <pmon/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pmon_cpuid;

struct pmon_cpuid_regs {
	uint32_t eax, ebx, ecx, edx;
};

/**
 * pmon_cpuid__new_live() - snapshot the CPU this thread runs on.
 *
 * Executes CPUID for every basic, hypervisor and extended leaf up to the
 * maximum each range reports, with the subleaves each leaf defines, with the
 * thread pinned to the CPU it is on for the duration (its affinity is put
 * back after): on a hybrid part every leaf then describes one core type.
 * pmon_cpuid__cpu() says which CPU.
 * Return: a new snapshot (free with pmon_cpuid__free()), or NULL with errno.
 */
PMON_API struct pmon_cpuid *pmon_cpuid__new_live(void);

/**
 * pmon_cpuid__new_cpu() - snapshot logical CPU @cpu.
 *
 * Reads /dev/cpu/@cpu/cpuid when the cpuid driver is loaded; otherwise pins
 * the calling thread to @cpu for the duration and executes CPUID there.
 * Return: a new snapshot, or NULL with errno (ENODEV: no such CPU).
 */
PMON_API struct pmon_cpuid *pmon_cpuid__new_cpu(int cpu);

/**
 * pmon_cpuid__new_file() - read a dump file.
 *
 * Format: one "LLLLLLLL SS: EAX EBX ECX EDX" line per leaf and subleaf, in hex;
 * lines starting with '#' and blank lines are ignored.
 * Return: a new snapshot, or NULL with errno set to EINVAL (malformed or empty;
 * pmon_errdetail() names file and line) or the open/read error.
 */
PMON_API struct pmon_cpuid *pmon_cpuid__new_file(const char *path);

/** pmon_cpuid__new_buf() - as pmon_cpuid__new_file(), from memory; @name is
 * used in error details. */
PMON_API struct pmon_cpuid *pmon_cpuid__new_buf(const char *buf, size_t len, const char *name);

/** pmon_cpuid__free() - free a snapshot; NULL is accepted. */
PMON_API void pmon_cpuid__free(struct pmon_cpuid *c);

/**
 * pmon_cpuid__get() - the registers of one leaf and subleaf.
 *
 * Return: 0 with @out filled, or -ENOENT with @out zeroed when the snapshot
 * has no such row (a real CPU returns zeros or the highest basic leaf there).
 */
PMON_API int pmon_cpuid__get(const struct pmon_cpuid *c, uint32_t leaf, uint32_t subleaf,
			     struct pmon_cpuid_regs *out);

/** pmon_cpuid__count() / __entry() - iterate the rows, sorted by leaf, subleaf. */
PMON_API size_t pmon_cpuid__count(const struct pmon_cpuid *c);
PMON_API int pmon_cpuid__entry(const struct pmon_cpuid *c, size_t i, uint32_t *leaf,
			       uint32_t *subleaf, struct pmon_cpuid_regs *out);

/** pmon_cpuid__cpu() - the logical CPU a snapshot was taken on, or -1 (a
 * dump file or buffer, or a live snapshot that could not be pinned). */
PMON_API int pmon_cpuid__cpu(const struct pmon_cpuid *c);

/**
 * pmon_thread_pin() - pin the calling thread to logical CPU @cpu, or to the
 * CPU it runs on now when @cpu < 0, so that what it executes next (CPUID,
 * RDPMC, RDMSR through /dev/cpu/N/msr of that CPU) all concerns one CPU.
 * Return: the CPU pinned to, or -errno with a detail (EINVAL: not online or
 * not allowed by the thread's cpuset).
 */
PMON_API int pmon_thread_pin(int cpu);

/** pmon_cpuid__source() - where the snapshot came from ("cpuid instruction",
 * "/dev/cpu/3/cpuid", a file name). */
PMON_API const char *pmon_cpuid__source(const struct pmon_cpuid *c);

/** pmon_cpuid__write() - write the snapshot in the dump format (readable back
 * by pmon_cpuid__new_file()). Return: 0 or -errno. */
PMON_API int pmon_cpuid__write(const struct pmon_cpuid *c, FILE *f);

/* ---- decoded facts ---------------------------------------------------- */

/* Whether a leaf could be decoded. */
enum pmon_leaf_state {
	PMON_LEAF_NOT_ENUMERATED = 0, /* beyond the maximum (basic/extended/hv) leaf */
	PMON_LEAF_ABSENT, /* within range, but the snapshot lacks it */
	PMON_LEAF_OK,
};

enum pmon_vendor {
	PMON_VENDOR_OTHER = 0,
	PMON_VENDOR_INTEL,
	PMON_VENDOR_AMD,
	PMON_VENDOR_HYGON,
};

struct pmon_cpu_ident {
	enum pmon_vendor vendor;
	char vendor_id[13]; /* "GenuineIntel" */
	unsigned family; /* with the extended family added (SDM CPUID.01H) */
	unsigned model; /* with the extended model added */
	unsigned stepping;
	uint32_t signature; /* CPUID.01H:EAX */
	char brand[49]; /* 80000002H-80000004H, leading blanks removed; "" if none */
	uint32_t max_leaf; /* CPUID.00H:EAX */
	uint32_t max_ext_leaf; /* CPUID.80000000H:EAX, 0 if the range is absent */
	bool hypervisor; /* CPUID.01H:ECX[31] */
	char hv_signature[13]; /* 40000000H:EBX,ECX,EDX, e.g. "KVMKVMKVM" */
	const char *hv_name; /* "KVM", "Hyper-V", "bhyve"...; NULL if unknown or none */
	uint32_t hv_max_leaf;
	bool pdcm; /* CPUID.01H:ECX[15]: IA32_PERF_CAPABILITIES exists */
	bool mmx; /* CPUID.01H:EDX[23] */
	bool long_mode; /* CPUID.80000001H:EDX[29] */
	bool has_l3; /* an L3 cache is enumerated (leaf 4, leaf 2 or 80000006H) */
};

/* Architectural events of CPUID.0AH:EBX and 23H.03H:EAX (SDM Vol. 3B 21.2). */
enum pmon_arch_event {
	PMON_ARCH_CORE_CYCLES = 0,
	PMON_ARCH_INSTRUCTIONS,
	PMON_ARCH_REF_CYCLES,
	PMON_ARCH_LLC_REFERENCES,
	PMON_ARCH_LLC_MISSES,
	PMON_ARCH_BRANCHES,
	PMON_ARCH_BRANCH_MISSES,
	PMON_ARCH_TOPDOWN_SLOTS,
	PMON_ARCH_TOPDOWN_BACKEND,
	PMON_ARCH_TOPDOWN_BAD_SPEC,
	PMON_ARCH_TOPDOWN_FRONTEND,
	PMON_ARCH_TOPDOWN_RETIRING,
	PMON_ARCH_LBR_INSERTS,
	PMON_ARCH_EVENT__COUNT,
};

/* Which description of the counters the figures come from. */
enum pmon_perfmon_model {
	PMON_PERFMON_NONE = 0, /* no counters known (unknown vendor, or 0AH reads zero) */
	PMON_PERFMON_INTEL_P5, /* Pentium: CESR/CTR0/CTR1 at MSR 11H-13H */
	PMON_PERFMON_INTEL_P6, /* Pentium Pro .. Pentium M: 2 x 40-bit, no 0AH */
	PMON_PERFMON_INTEL_NETBURST, /* Pentium 4 / Xeon: 18 x 40-bit (+ 8 x 32-bit with L3) */
	PMON_PERFMON_INTEL_ARCH, /* architectural perfmon, CPUID.0AH (and 23H) */
	PMON_PERFMON_AMD_LEGACY, /* K7..K10: 4 x 48-bit core counters */
	PMON_PERFMON_AMD_EXT, /* PerfCtrExtCore (80000001H:ECX[23]): 6 core counters */
	PMON_PERFMON_AMD_V2, /* PerfMonV2: core counter count in 80000022H:EBX[3:0] */
};

/* A contiguous range of legacy RDPMC indices (non-architectural processors). */
struct pmon_pmc_range {
	unsigned first, count;
	unsigned width; /* bits */
	bool fast_read; /* ECX[31] selects a 32-bit "fast" read */
	const char *what;
};

#define PMON_MAX_PMC_RANGES 4

struct pmon_perfmon {
	enum pmon_perfmon_model model;
	enum pmon_leaf_state leaf_0a, leaf_23, leaf_amd_22;
	/* Leaf 0AH raw fields, exactly as the RDPMC seed names them. */
	uint32_t raw_0a[4];
	unsigned version; /* 0AH:EAX[7:0] */
	unsigned gp_count_0a; /* 0AH:EAX[15:8] */
	unsigned ebx_length; /* 0AH:EAX[31:24]: valid bits of EBX */
	uint32_t ebx_unavailable; /* 0AH:EBX: bit set = event NOT available */
	uint32_t fixed_mask_0a; /* 0AH:ECX: fixed counters supported (v5+) */
	unsigned fixed_count_0a; /* 0AH:EDX[4:0] (version > 1) */
	bool anythread_deprecated; /* 0AH:EDX[15] */
	uint32_t edx_reserved; /* reserved 0AH:EDX bits found set (Atom 330: bit 13) */
	/* Leaf 23H (architectural perfmon extended leaf), when enumerated. */
	uint32_t subleaves_23; /* 23H.0:EAX */
	bool umask2, eq_bit, rdpmc_user_disable; /* 23H.0:EBX[0..2] */
	unsigned topdown_slots; /* 23H.0:ECX[7:0] */
	/* Resulting figures: 23H wins over 0AH where present; AMD from its leaves. */
	unsigned gp_count;
	uint64_t gp_mask; /* bit i: general-purpose counter i exists */
	unsigned gp_width; /* bits */
	unsigned fixed_count; /* counters in fixed_mask */
	uint32_t fixed_mask; /* bit i: fixed counter i exists (a mask: may have gaps) */
	unsigned fixed_width;
	uint32_t arch_events; /* bit e (enum pmon_arch_event): available */
	/* Hybrid parts: the core type the figures above describe (CPUID.1AH of
	 * the dumped CPU: 0x40 P-core, 0x20 E-core; 0 when not hybrid). Without
	 * leaf 23H, 0AH gives only what both types share; on a P-core Linux
	 * (arch/x86/events/intel/core.c intel_pmu_init(), "cpu_core") counts
	 * 0AH + 2 GP and + 1 fixed counters, and so does pmon. */
	unsigned core_type;
	bool hybrid_pcore_extra; /* the + 2 GP / + 1 fixed were added */
	/* Perfmon v2-v4 outside a VM with EDX[4:0] < 3 (Conroe 0, Atom 330 1):
	 * these parts have 3 fixed counters and misreport them; Linux
	 * intel_pmu_init() assumes 3 ("Quirk: v2 perfmon does not report
	 * fixed-purpose events"), and so does pmon (docs/direct.md). */
	bool fixed_assumed;
	/* Core Solo/Duo and Core 2 (family 6, models 0EH 0FH 16H 17H 1DH): the
	 * SDM's RDPMC operation for them honours ECX[31] (fast read: EAX =
	 * counter[31:0], EDX = 0) on top of the architectural encoding. */
	bool fast_read_arch;
	/* Legacy (non-architectural) RDPMC index ranges; empty for INTEL_ARCH. */
	struct pmon_pmc_range ranges[PMON_MAX_PMC_RANGES];
	unsigned nranges;
	bool rdpmc_instruction; /* RDPMC exists (Pentium Pro, Pentium MMX or later) */
	bool perf_capabilities; /* IA32_PERF_CAPABILITIES exists (CPUID.01H:ECX[15] PDCM) */
	/* AMD */
	bool amd_ext_core, amd_ext_nb, amd_ext_llc, amd_v2;
	unsigned amd_nb_count, amd_umc_count, amd_lbr_v2_depth;
};

/* Shared resource monitoring (CMT/MBM, SDM Vol. 3B 17.16) and allocation. */
struct pmon_rdt {
	uint32_t max_leaf; /* step 1 */
	bool pqm; /* step 2: CPUID.(07H,0):EBX[12] */
	enum pmon_leaf_state leaf_0f, leaf_0f_1, leaf_10;
	uint32_t max_rmid; /* step 3: CPUID.(0FH,0):EBX, highest RMID of any resource */
	uint32_t resources; /* step 3: CPUID.(0FH,0):EDX, bit 1 = L3 */
	bool l3; /* step 4 condition */
	uint32_t l3_max_rmid; /* CPUID.(0FH,1):ECX */
	uint32_t upscale; /* CPUID.(0FH,1):EBX: bytes per counter unit */
	unsigned counter_width; /* 24 + CPUID.(0FH,1):EAX[7:0]; AMD 44, Hygon 32 when 0 */
	unsigned width_offset; /* CPUID.(0FH,1):EAX[7:0] as reported */
	bool width_vendor_default; /* offset 0 on AMD/Hygon: Linux's MBM_CNTR_WIDTH_OFFSET_* used */
	unsigned rmid_bits; /* IA32_PQR_ASSOC RMID field: ceil(log2(1 + max_rmid)) (SDM 17.16.6) */
	bool overflow_bit; /* CPUID.(0FH,1):EAX[8]: IA32_QM_CTR bit 61 */
	bool occupancy, mbm_total, mbm_local; /* CPUID.(0FH,1):EDX[0..2] */
	uint32_t other_resources; /* step 5: EDX bits beyond L3 */
	/* Errata Linux applies (arch/x86/kernel/cpu/resctrl/core.c __check_quirks_intel):
	 * Skylake-SP stepping <= 4 has CMT/MBM disabled (the events above are then
	 * cleared; cpuid_* keep what CPUID said); Broadwell-EP and Skylake/Cascade
	 * Lake-SP scale MBM counts of RMIDs above a threshold (monitor.c mbm_cf_table). */
	bool mon_erratum_disabled;
	bool cpuid_occupancy, cpuid_mbm_total, cpuid_mbm_local; /* CPUID.(0FH,1):EDX as read */
	bool mbm_cf_quirk; /* the correction applies on this model */
	uint32_t mbm_cf_rmid_threshold; /* correct RMIDs above this */
	uint64_t mbm_cf; /* correction factor x 2^20 */
	/* Allocation, informational (leaf 10H) */
	bool pqe; /* CPUID.(07H,0):EBX[15] */
	bool l3_cat, l2_cat, mba;
	unsigned l3_cbm_len, l3_cos_max, l2_cbm_len, l2_cos_max, mba_max, mba_cos_max;
	bool l3_cdp, mba_linear;
	enum pmon_leaf_state leaf_10_1, leaf_10_2, leaf_10_3; /* the sub-leaves read */
};

enum pmon_tsc_source {
	PMON_TSC_HZ_NONE = 0,
	PMON_TSC_HZ_LEAF15, /* 15H with the crystal frequency in ECX */
	/* 15H ratio, crystal from the SDM's nominal table by model: only where
	 * leaf 16H is absent (a derivation: pmon_tsc_source_is_derived()) */
	PMON_TSC_HZ_LEAF15_NOMINAL,
	/* 15H ratio, crystal derived from 16H's base frequency as Linux's
	 * native_calibrate_tsc() does (a derivation) */
	PMON_TSC_HZ_LEAF15_16,
	PMON_TSC_HZ_HYPERVISOR, /* 40000010H:EAX (kHz) */
	PMON_TSC_HZ_CALIBRATED, /* measured against CLOCK_MONOTONIC_RAW (see clock.h) */
	/* 15H ratio, Denverton's (06_5FH) 25 MHz crystal, hard-coded as Linux
	 * does: the part reports neither 15H:ECX nor 16H */
	PMON_TSC_HZ_LEAF15_DENVERTON,
};

struct pmon_tsc {
	bool tsc; /* CPUID.01H:EDX[4] */
	bool rdtscp; /* CPUID.80000001H:EDX[27] */
	bool invariant; /* CPUID.80000007H:EDX[8] */
	enum pmon_leaf_state leaf_15, leaf_16, leaf_hv;
	uint32_t denominator, numerator, crystal_hz; /* 15H EAX, EBX, ECX */
	uint32_t base_mhz, max_mhz, bus_mhz; /* 16H */
	uint32_t hv_tsc_khz, hv_bus_khz; /* 40000010H */
	uint64_t hz; /* 0 when nothing enumerates it */
	enum pmon_tsc_source source;
};

struct pmon_hybrid {
	bool hybrid; /* CPUID.(07H,0):EDX[15] */
	enum pmon_leaf_state leaf_1a;
	unsigned core_type; /* 1AH:EAX[31:24]: 0x20 Atom (E-core), 0x40 Core (P-core) */
	uint32_t native_model; /* 1AH:EAX[23:0] */
};

struct pmon_cpu_info {
	struct pmon_cpu_ident id;
	struct pmon_perfmon pm;
	struct pmon_rdt rdt;
	struct pmon_tsc tsc;
	struct pmon_hybrid hybrid;
	/* ---- added after release 0.1: the struct grows only here, at its
	 * end (pmon_cpu_decode_sized() gives an older caller the fields its
	 * size holds; the first of these must stay pointer-aligned so that
	 * its offset is the 0.1 size). ---- */
	/* Why pm describes no counters (pm.model == PMON_PERFMON_NONE), as a
	 * phrase naming the CPUID fields and the rule ("family 0FH with leaf
	 * 0AH enumerated is no Pentium 4 ..."); NULL when counters are decoded.
	 * Static storage. */
	const char *pm_none_why;
	/* CPUID.01H:ECX[31]: the figures describe a virtual CPU, and CPUID
	 * cannot tell whether the hypervisor provides these counters (only the
	 * guest's kernel can, by probing them). */
	bool pm_hv_unverifiable;
	/* CPUID.(07H,1):EAX[8] ArchPerfmonExt: leaf 23H may be read (Linux
	 * reads 23H only with X86_FEATURE_ARCH_PERFMON_EXT). leaf_07_1 is how
	 * sub-leaf 1 of 07H was read. */
	enum pmon_leaf_state leaf_07_1;
	bool arch_perfmon_ext;
	/* Leaf 23H is within the maximum leaf but 07H.1:EAX[8] = 0: ignored
	 * (pm.leaf_23 then reads PMON_LEAF_NOT_ENUMERATED). */
	bool leaf_23_ignored;
	/* Hybrid part without leaf 23H whose 0AH reports only the counters both
	 * core types share (the E-core's), not the dumped core's own. */
	bool hybrid_0a_subset;
	/* The core crystal clock behind tsc.hz, in Hz: 15H:ECX, Denverton's
	 * 25 MHz, derived from 16H (Linux's integer kHz), or the SDM's nominal
	 * table; 0 when tsc.hz has no crystal (hypervisor leaf) or none. */
	uint32_t tsc_crystal_hz;
};

/**
 * pmon_cpu_decode() - decode a snapshot.
 * @c:   the raw leaves.
 * @out: filled completely (zeroed first).
 *
 * Pure: reads only @c. Leaves beyond the maximum leaf are marked
 * PMON_LEAF_NOT_ENUMERATED and never decoded. A macro: it passes the size
 * of *@out as the caller was built to pmon_cpu_decode_sized(), so that
 * struct pmon_cpu_info may grow (a caller built with a larger one gets
 * zeros past this library's; one smaller than the first release's is
 * refused with -EINVAL).
 * Return: 0, or -EINVAL with a detail when @c lacks leaf 0 (nothing to decode).
 */
PMON_API int pmon_cpu_decode_sized(const struct pmon_cpuid *c, struct pmon_cpu_info *out,
				   size_t out_sz);
#define pmon_cpu_decode(c, out) pmon_cpu_decode_sized((c), (out), sizeof(*(out)))
/* The function of release 0.1, for programs linked before the macro. */
PMON_API int(pmon_cpu_decode)(const struct pmon_cpuid *c, struct pmon_cpu_info *out);

/**
 * pmon_rdt_mbm_correct() - an MBM byte count of RMID @rmid with Linux's
 * per-RMID correction factor applied where @r says the erratum applies
 * (get_corrected_mbm_count(): (v * cf) >> 20 for RMIDs above the threshold);
 * @bytes unchanged otherwise. Pure.
 */
PMON_API uint64_t pmon_rdt_mbm_correct(const struct pmon_rdt *r, unsigned rmid, uint64_t bytes);

/**
 * pmon_cpu_l3_ids() - the L3 cache each of @cpus shares, from sysfs
 * (cpuN/cache/indexM with level 3: its id, else the first CPU of its
 * shared_cpu_list). @sysfs_root: NULL for "/sys".
 * @ids: n entries, -1 where unknown.
 * Return: 0, or -ENOENT (detail) when no CPU lists an L3.
 */
PMON_API int pmon_cpu_l3_ids(const char *sysfs_root, const int *cpus, size_t n, int *ids);

/* Where a logical CPU sits: Linux's topology ids (Documentation/ABI/stable/
 * sysfs-devices-system-cpu: cpuN/topology/{physical_package_id,die_id,
 * core_id}) and its NUMA node (sysfs-devices-node: nodeK/cpulist). */
struct pmon_cpu_place {
	int cpu, socket, die, core, node;
};

/**
 * pmon_cpu_places() - the socket, die, core and NUMA node of each of @cpus,
 * from sysfs. A die_id the kernel does not list (before Linux 5.2) reads 0,
 * a machine without /sys/devices/system/node is node 0, as perf reads them.
 * @sysfs_root: NULL for "/sys" (tests pass a copy). @out: @n entries.
 * Return: 0, or -ENOENT (detail naming the file) when a CPU has no
 * physical_package_id or core_id.
 */
PMON_API int pmon_cpu_places(const char *sysfs_root, const int *cpus, size_t n,
			     struct pmon_cpu_place *out);

/* ---- names ------------------------------------------------------------ */

PMON_API const char *pmon_vendor_name(enum pmon_vendor v);
PMON_API const char *pmon_perfmon_model_name(enum pmon_perfmon_model m);
/** e.g. "instructions retired"; NULL when out of range. */
PMON_API const char *pmon_arch_event_name(unsigned event);
/** The event a fixed counter counts ("instructions retired" for 0); NULL if unknown. */
PMON_API const char *pmon_fixed_counter_name(unsigned index);
/** "E-core (Atom)", "P-core (Core)", or NULL. */
PMON_API const char *pmon_core_type_name(unsigned core_type);
PMON_API const char *pmon_leaf_state_name(enum pmon_leaf_state s);
PMON_API const char *pmon_tsc_source_name(enum pmon_tsc_source s);
/**
 * pmon_tsc_source_is_derived() - whether a CPUID TSC figure from @s is a
 * derivation rather than a frequency the hardware reports: the SDM's
 * nominal crystal table and the crystal derived from 16H's base frequency
 * (Linux sets X86_FEATURE_TSC_KNOWN_FREQ only for 15H:ECX and Denverton).
 * A derived figure is worth checking against a calibration (clock.h,
 * pmon_tsc_choose()).
 */
PMON_API bool pmon_tsc_source_is_derived(enum pmon_tsc_source s);

#ifdef __cplusplus
}
#endif
#endif
