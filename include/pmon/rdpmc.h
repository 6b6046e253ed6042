/* SPDX-License-Identifier: MIT */
/*
 * RDPMC rules, exactly as the SDM (Vol. 2B, RDPMC) states them: how ECX selects
 * a counter, which encodings are valid on a given processor, how wide the
 * counter read is, and width-aware arithmetic on counter values.
 *
 * With architectural perfmon (CPUID.0AH:EAX[7:0] > 0), ECX[31:16] is the type
 * (0 general purpose, 4000H fixed function, 2000H performance metrics) and
 * ECX[15:0] the index within it. Without it, ECX[30:0] is an index and ECX[31]
 * selects a 32-bit "fast" read where the processor has one. An invalid
 * encoding makes RDPMC raise #GP(0); these functions say so first, naming the
 * rule, so that nothing in pmon ever executes one.
 */
#ifndef PMON_RDPMC_H
#define PMON_RDPMC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pmon/common.h>
#include <pmon/cpu.h>

#ifdef __cplusplus
extern "C" {
#endif

enum pmon_pmc_type {
	PMON_PMC_GP = 0x0000, /* IA32_PMCx */
	PMON_PMC_FIXED = 0x4000, /* IA32_FIXED_CTRx */
	PMON_PMC_METRICS = 0x2000, /* PERF_METRICS */
	PMON_PMC_LEGACY = 0xffff, /* non-architectural: a plain index */
};

struct pmon_rdpmc_sel {
	uint32_t ecx;
	enum pmon_pmc_type type;
	unsigned index;
	bool fast; /* legacy fast read: EAX = counter[31:0], EDX = 0 */
	unsigned width; /* bits of the value RDPMC returns; 0 when implementation specific */
	char rule[160]; /* the rule that decided, e.g. "GP index 4 < CPUID.0AH:EAX[15:8] = 4" */
};

/**
 * pmon_rdpmc_encode() - build and validate the ECX value for a counter.
 * @pm:       the decoded perfmon enumeration of the processor.
 * @type:     PMON_PMC_GP, _FIXED, _METRICS, or _LEGACY (non-architectural index).
 * @index:    counter index within the type.
 * @fast:     request a legacy fast (32-bit) read (non-architectural only).
 * @perf_metrics: IA32_PERF_CAPABILITIES[15] PERF_METRICS_AVAILABLE, or
 *            PMON_UNKNOWN when that MSR could not be read.
 * @out:      the selection; out->rule is filled on success and failure.
 *
 * Return: 0 when RDPMC with out->ecx is valid; -PMON_ERRNO__RDPMC_RULE when it
 * would raise #GP(0) (out->rule and pmon_errdetail() name the broken rule);
 * -PMON_ERRNO__RDPMC_UNKNOWN when validity depends on @perf_metrics being
 * unknown.
 */
PMON_API int pmon_rdpmc_encode(const struct pmon_perfmon *pm, enum pmon_pmc_type type,
			       unsigned index, bool fast, enum pmon_tristate perf_metrics,
			       struct pmon_rdpmc_sel *out);

/**
 * pmon_rdpmc_validate() - validate a raw ECX value.
 *
 * As pmon_rdpmc_encode(), with the type and index taken from @ecx by the rules
 * that apply to @pm's processor.
 */
PMON_API int pmon_rdpmc_validate(const struct pmon_perfmon *pm, uint32_t ecx,
				 enum pmon_tristate perf_metrics, struct pmon_rdpmc_sel *out);

/** pmon_pmc_mask() - all-ones in the low @width bits (64 for width >= 64). */
static inline uint64_t pmon_pmc_mask(unsigned width)
{
	return width >= 64 ? ~0ULL : width == 0 ? 0 : (1ULL << width) - 1;
}

/**
 * pmon_pmc_delta() - end - start of a counter @width bits wide.
 *
 * Correct across one wrap of the counter: the Pentium tools note's 64-bit
 * subtract with borrow, generalised to the enumerated width (40, 48 ...).
 */
static inline uint64_t pmon_pmc_delta(uint64_t start, uint64_t end, unsigned width)
{
	return (end - start) & pmon_pmc_mask(width);
}

/**
 * pmon_pmc_sign_extend() - sign-extend a @width-bit value to 64 bits.
 *
 * The kernel's mmap self-read adds a sign-extended RDPMC value to the event
 * offset (perf_event_mmap_page::pmc_width); never assume 48.
 */
static inline int64_t pmon_pmc_sign_extend(uint64_t v, unsigned width)
{
	if (width == 0 || width >= 64)
		return (int64_t)v;
	unsigned shift = 64 - width;
	return (int64_t)(v << shift) >> shift;
}

#ifdef __cplusplus
}
#endif
#endif
