/* SPDX-License-Identifier: MIT */
/*
 * Model-specific registers: the seeds' PMX (RDMSR/WRMSR at ring 0) through
 * Linux's msr driver, /dev/cpu/N/msr (8 bytes at offset = MSR address,
 * root only). The device path is a parameter, so a regular file laid out
 * the same way stands in for it in tests. Known MSRs are data with their
 * fields (SDM Vol. 4 and Vol. 3B), decoded on read.
 */
#ifndef PMON_MSR_H
#define PMON_MSR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pmon/common.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PMON_MSR_DEVICE "/dev/cpu/%d/msr"

struct pmon_msr_field {
	const char *name;
	unsigned lo, hi; /* bit range, inclusive */
	const char *desc;
};

struct pmon_msr_info {
	const char *name;
	uint32_t addr;
	const char *desc;
	const struct pmon_msr_field *fields; /* NULL-name terminated; NULL: a plain value */
};

/** pmon_msr_lookup() - a known MSR by name (case-insensitive); NULL if unknown. */
PMON_API const struct pmon_msr_info *pmon_msr_by_name(const char *name);
/** pmon_msr_by_addr() - a known MSR by address; NULL if unknown. */
PMON_API const struct pmon_msr_info *pmon_msr_by_addr(uint32_t addr);
/** The table, for listing: *@n gets its length. */
PMON_API const struct pmon_msr_info *pmon_msr_table(size_t *n);

/**
 * pmon_msr_parse_addr() - an MSR name or number ("IA32_PQR_ASSOC", "0xc8f", "17").
 * Return: 0, -PMON_ERRNO__PARSE (detail: unknown name, or not 32 bits).
 */
PMON_API int pmon_msr_parse_addr(const char *s, uint32_t *addr);

/**
 * pmon_msr_decode() - "EventSelect=0x3c UMask=0 USR=1 ..." for a known MSR,
 * and the Pentium CESR's events by name. Return: snprintf()'s length.
 */
PMON_API int pmon_msr_decode(uint32_t addr, uint64_t value, char *buf, size_t len);

struct pmon_cpu_info;
/**
 * pmon_msr_decode_cpu() - pmon_msr_decode() for the CPU @ci describes: the
 * RMID fields of IA32_PQR_ASSOC (N-1:0) and IA32_QM_EVTSEL (32+N-1:32) are
 * N = ceil(log2(1 + CPUID.(0FH,0):EBX)) bits (SDM 17.16.6, @ci->rdt.rmid_bits).
 * @ci NULL, or a CPU without RDT monitoring: each field up to the next
 * non-reserved bits (31:0, 63:32), as pmon_msr_decode() does.
 */
PMON_API int pmon_msr_decode_cpu(const struct pmon_cpu_info *ci, uint32_t addr, uint64_t value,
				 char *buf, size_t len);

/**
 * pmon_msr_read() / pmon_msr_write() - access MSR @addr on CPU @cpu.
 * @device: a path with "%d" for the CPU (NULL: /dev/cpu/%d/msr), or a plain
 *          file used for every CPU. The msr driver's offset is the MSR's
 *          address, 8 bytes read there; a regular file (a fake device for
 *          tests and dry runs) keeps MSR @addr at offset 8 x @addr instead, so
 *          that neighbouring MSRs (IA32_PERFEVTSEL0 at 186H, 1 at 187H) are
 *          separate registers as on the hardware, not 7 shared bytes.
 * Return: 0, or -errno with a detail that names the cause: the msr driver
 * not loaded (ENOENT for the default path), not root (EACCES), an MSR the
 * CPU does not have (EIO: the WRMSR/RDMSR faulted in the kernel).
 */
PMON_API int pmon_msr_read(const char *device, int cpu, uint32_t addr, uint64_t *value);
/**
 * pmon_msr_missing_why() - why /dev/cpu/N/msr is absent, and what can help
 * on this machine: "modprobe msr" only where the running kernel has the
 * driver as a module (modules.dep of /lib/modules/RELEASE); built in, no
 * module tree, or no driver at all said as such. Return: @buf.
 */
PMON_API const char *pmon_msr_missing_why(char *buf, size_t len);
PMON_API int pmon_msr_write(const char *device, int cpu, uint32_t addr, uint64_t value);

/* ---- the MSR counting backend (LIKWID's direct mode) -------------------- */

struct pmon_evlist;

struct pmon_msr_write_rec {
	int cpu;
	uint32_t addr;
	uint64_t value;
	bool restore; /* part of putting things back */
};

struct pmon_msr_counting;

/**
 * pmon_msr_pmc_written() - what a general-purpose counter @width bits wide
 * holds after writing @value: through IA32_A_PMCx (@full_width, the alias
 * that exists when IA32_PERF_CAPABILITIES[13] is set) the value itself; through
 * IA32_PMCx only bits 31:0, sign-extended from bit 31 (SDM Vol. 3B 21.2.6).
 */
PMON_API uint64_t pmon_msr_pmc_written(uint64_t value, unsigned width, bool full_width);

/**
 * pmon_msr_counting__start() - program architectural counters directly.
 * @ci:     the CPU (Intel architectural perfmon required).
 * @events: generic names with an architectural encoding (cycles,
 *          instructions, ref-cycles, branches, branch-misses, cache-references,
 *          cache-misses) or raw rNNNN event|umask<<8 values, with :u/:k.
 * @cpus, @ncpus: CPUs to program.
 * ref-cycles goes on fixed counter 2 (TSC rate, as perf's), never on the GP
 * encoding 3CH/01H (bus/crystal clock); other events on GP counters.
 * Saves every register it will touch, refuses (-EBUSY, detail names the
 * register and CPU) when a counter it needs is already enabled by someone else
 * (IA32_PERFEVTSELx.EN, an IA32_FIXED_CTR_CTRL enable: GLOBAL_CTRL bits alone
 * count nothing and Linux leaves them all set), then writes: GLOBAL_CTRL without ours, the counters = 0, the event selects
 * and fixed control, GLOBAL_CTRL with ours. The restore puts counter values
 * back through IA32_A_PMCx where full-width writes exist.
 * @nmi_watchdog: the kernel's NMI watchdog is on (/proc/sys/kernel/nmi_watchdog):
 *          only named in a refusal. Linux puts its cycles event on a fixed
 *          counter pmon does not use; where it does hold a counter pmon
 *          needs, the enable checks above find it like any other user.
 * Return: the programmed counters, or NULL with errno (EBUSY: a counter is
 * in use) and the detail.
 */
PMON_API struct pmon_msr_counting *pmon_msr_counting__start(const char *device,
							    const struct pmon_cpu_info *ci,
							    const struct pmon_evlist *events,
							    const int *cpus, size_t ncpus,
							    bool nmi_watchdog);
/* Options of pmon_msr_counting__start_opts(); @sz = sizeof. */
struct pmon_msr_counting_opts {
	size_t sz;
	/* A file kept while the counters are programmed: the writes that put
	 * them back, and who wrote them. Written (0600, whole or absent) before
	 * the first MSR write, removed by a successful restore. A file already
	 * there refuses the start (-EBUSY): a pmon counting now, or one that
	 * was killed and left the counters programmed (detail says which). */
	const char *state_file;
	/* Hybrid parts: each CPU's own decoded CPUID, @ncpus entries in the
	 * order of @cpus (a NULL entry, or a NULL array: @ci). The events are
	 * placed by @ci and must fit every CPU's counters, or the start is
	 * refused before any register is touched (-E2BIG/-EOPNOTSUPP, the
	 * detail names the CPU and its core type); the counts are masked to
	 * each CPU's own widths. */
	const struct pmon_cpu_info *const *cpu_info;
};

/**
 * pmon_msr_counting__start_opts() - pmon_msr_counting__start() with options
 * (@opts may be NULL).
 */
PMON_API struct pmon_msr_counting *
pmon_msr_counting__start_opts(const char *device, const struct pmon_cpu_info *ci,
			      const struct pmon_evlist *events, const int *cpus, size_t ncpus,
			      bool nmi_watchdog, const struct pmon_msr_counting_opts *opts);
/**
 * pmon_msr_state__restore() - replay a state file left by a pmon that was
 * killed while it had counters programmed: every write, in order, to the
 * device the file names; the file is removed when all succeeded. Refuses
 * (-EBUSY) while the pmon that wrote it runs, and writes nothing from a file
 * it cannot read whole (-EINVAL, detail: file and line).
 * @writes: the writes (caller frees), also when one failed. Return: 0, -errno.
 */
PMON_API int pmon_msr_state__restore(const char *path, struct pmon_msr_write_rec **writes,
				     size_t *n);
/**
 * pmon_msr_state_path() - where a state file named @name is kept: beside a
 * fake MSR @device (@device + @dev_suffix, tests), else in /run/pmon/
 * (made 0700 when missing: root), else in $XDG_RUNTIME_DIR as pmon-@name.
 * Return: @buf, or NULL when there is nowhere to keep it.
 */
PMON_API const char *pmon_msr_state_path(const char *device, const char *dev_suffix,
					 const char *name, char *buf, size_t len);
/**
 * pmon_msr_counting__stop() - stop (GLOBAL_CTRL without pmon's bits) and read
 * every counter, summed over the CPUs. First the control MSRs are read back on
 * each CPU: an event select, fixed-counter field or GLOBAL_CTRL enable that is
 * no longer what pmon wrote means another user (the kernel's perf scheduling
 * an event onto the same counter) took it mid-run. Such an event's value is 0
 * and pmon_msr_counting__lost() says why; its registers are left to their new
 * owner by the restore.
 */
PMON_API int pmon_msr_counting__stop(struct pmon_msr_counting *m, uint64_t *values);
/**
 * pmon_msr_counting__lost() - why event @i was not counted (perf's
 * "<not counted>"), or NULL when its value is pmon's count. Valid after
 * pmon_msr_counting__stop(), until pmon_msr_counting__free().
 */
PMON_API const char *pmon_msr_counting__lost(const struct pmon_msr_counting *m, size_t i);
/** Put back every register touched, in reverse order; safe to call twice. */
PMON_API int pmon_msr_counting__restore(struct pmon_msr_counting *m);
/** The writes made so far, in order (programming, then restore). */
PMON_API const struct pmon_msr_write_rec *
pmon_msr_counting__writes(const struct pmon_msr_counting *m, size_t *n);
PMON_API void pmon_msr_counting__free(struct pmon_msr_counting *m);

#ifdef __cplusplus
}
#endif
#endif
