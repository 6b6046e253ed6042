// SPDX-License-Identifier: MIT
/*
 * RDPMC ECX encoding and validation (pmon/rdpmc.h), rule by rule from the
 * SDM's RDPMC page (Vol. 2B) as quoted in the first two seeds. Each verdict
 * carries the rule that decided it, so a user sees why an encoding would
 * raise #GP(0) instead of receiving the fault.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "internal.h"
#include <pmon/rdpmc.h>

static int verdict(struct pmon_rdpmc_sel *out, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int verdict(struct pmon_rdpmc_sel *out, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out->rule, sizeof(out->rule), fmt, ap);
	va_end(ap);
	if (err)
		pmon__detail("ECX=%08" PRIx32 "H: %s", out->ecx, out->rule);
	return err;
}

static int validate_arch(const struct pmon_perfmon *pm, uint32_t ecx, enum pmon_tristate metrics,
			 struct pmon_rdpmc_sel *out)
{
	unsigned type = ecx >> 16, x = ecx & 0xffff;
	bool has23 = pm->leaf_23 == PMON_LEAF_OK && PMON_BIT(pm->subleaves_23, 1);

	out->index = x;
	switch (type) {
	case PMON_PMC_GP:
		out->type = PMON_PMC_GP;
		out->width = pm->gp_width;
		if (x >> 8)
			return verdict(out, -PMON_ERRNO__RDPMC_RULE,
				       "GP counters: ECX[15:8] must be 0 (index %u)", x);
		if (has23) {
			if (x < 64 && (pm->gp_mask >> x) & 1)
				return verdict(out, 0, "GP index %u: CPUID.23H.01H:EAX[%u] = 1", x,
					       x);
			return verdict(out, -PMON_ERRNO__RDPMC_RULE,
				       "GP index %u: CPUID.23H.01H:EAX[%u] = 0 (no such counter)",
				       x, x);
		}
		if (pm->hybrid_pcore_extra) {
			/* Hybrid P-core without 23H: 0AH is the E-core subset;
			 * Linux intel_pmu_init() gives cpu_core 0AH + 2. */
			if (x < pm->gp_count)
				return verdict(out, 0,
					       "GP index %u < %u on a P-core (CPUID.0AH:EAX[15:8] "
					       "= %u is the E-core subset; + 2 as Linux's "
					       "cpu_core)",
					       x, pm->gp_count, pm->gp_count_0a);
			return verdict(
				out, -PMON_ERRNO__RDPMC_RULE,
				"GP index %u must be < %u on a P-core (CPUID.0AH:EAX[15:8] = "
				"%u + 2)",
				x, pm->gp_count, pm->gp_count_0a);
		}
		if (x < pm->gp_count_0a)
			return verdict(out, 0, "GP index %u < CPUID.0AH:EAX[15:8] = %u%s", x,
				       pm->gp_count_0a, pm->core_type == 0x20 ? " (E-core)" : "");
		return verdict(out, -PMON_ERRNO__RDPMC_RULE,
			       "GP index %u must be < CPUID.0AH:EAX[15:8] = %u", x,
			       pm->gp_count_0a);
	case PMON_PMC_FIXED:
		out->type = PMON_PMC_FIXED;
		out->width = pm->fixed_width;
		if (x >> 5)
			return verdict(out, -PMON_ERRNO__RDPMC_RULE,
				       "fixed counters: ECX[15:5] must be 0 (index %u)", x);
		if (has23) {
			if ((pm->fixed_mask >> x) & 1)
				return verdict(out, 0, "fixed index %u: CPUID.23H.01H:EBX[%u] = 1",
					       x, x);
			return verdict(
				out, -PMON_ERRNO__RDPMC_RULE,
				"fixed index %u: CPUID.23H.01H:EBX[%u] = 0 (no such counter)", x,
				x);
		}
		if (pm->fixed_assumed && x < 3)
			return verdict(
				out, 0,
				"fixed index %u: CPUID.0AH:EDX[4:0] = %u misreports; perfmon "
				"v%u parts have 3 (Linux intel_pmu_init() assumes 3 outside "
				"a VM)",
				x, pm->fixed_count_0a, pm->version);
		if (pm->fixed_count_0a > x)
			return verdict(out, 0, "fixed index %u: CPUID.0AH:EDX[4:0] = %u > %u%s", x,
				       pm->fixed_count_0a, x,
				       pm->core_type == 0x20 ? " (E-core)" : "");
		if (pm->hybrid_pcore_extra && ((pm->fixed_mask >> x) & 1))
			return verdict(out, 0,
				       "fixed index %u on a P-core: CPUID.0AH:EDX[4:0] = %u is the "
				       "E-core subset; + 1 as Linux's cpu_core",
				       x, pm->fixed_count_0a);
		if ((pm->fixed_mask_0a >> x) & 1)
			return verdict(out, 0, "fixed index %u: CPUID.0AH:ECX[%u] = 1", x, x);
		return verdict(
			out, -PMON_ERRNO__RDPMC_RULE,
			"fixed index %u needs CPUID.0AH:EDX[4:0] > %u or CPUID.0AH:ECX[%u] = 1 "
			"(EDX[4:0] = %u, ECX = %" PRIx32 "H)",
			x, x, x, pm->fixed_count_0a, pm->fixed_mask_0a);
	case PMON_PMC_METRICS:
		out->type = PMON_PMC_METRICS;
		out->width = 0; /* implementation specific, as is the index */
		if (!pm->perf_capabilities)
			return verdict(
				out, -PMON_ERRNO__RDPMC_RULE,
				"performance metrics need IA32_PERF_CAPABILITIES[15], and that "
				"MSR does not exist (CPUID.01H:ECX[15] PDCM = 0)");
		if (metrics == PMON_YES)
			return verdict(
				out, 0,
				"performance metrics: IA32_PERF_CAPABILITIES[15] "
				"PERF_METRICS_AVAILABLE = 1 (index %u is implementation specific)",
				x);
		if (metrics == PMON_NO)
			return verdict(out, -PMON_ERRNO__RDPMC_RULE,
				       "performance metrics need IA32_PERF_CAPABILITIES[15] "
				       "PERF_METRICS_AVAILABLE = 1; it is 0");
		return verdict(out, -PMON_ERRNO__RDPMC_UNKNOWN,
			       "performance metrics need IA32_PERF_CAPABILITIES[15] "
			       "PERF_METRICS_AVAILABLE = 1; unknown: MSR 345H could not be read");
	default:
		out->type = (enum pmon_pmc_type)type;
		if ((type & 0x8000) && pm->fast_read_arch) {
			/* Core Solo/Duo, Core 2: ECX[31] = fast read of the
			 * counter ECX[30:0] selects (SDM Vol. 2B RDPMC operation
			 * for these families; seed 001's "IF (ECX = 0 or 1) ...
			 * IF (ECX[31] = 1)" reads ECX[30:0] in its first test). */
			char rule[sizeof(out->rule)];
			int err;

			if (((ecx & 0x7fffffffu) >> 16) == PMON_PMC_METRICS)
				return verdict(out, -PMON_ERRNO__RDPMC_RULE,
					       "no fast read of performance metrics");
			err = validate_arch(pm, ecx & 0x7fffffffu, metrics, out);
			out->ecx = ecx;
			out->fast = true;
			if (err)
				return err;
			out->width = 32;
			pmon__strlcpy(rule, out->rule, sizeof(rule));
			return verdict(out, 0,
				       "%s; ECX[31] fast read (Core Solo/Duo, Core 2): bits 31:0, "
				       "EDX = 0",
				       rule);
		}
		if (type & 0x8000)
			return verdict(
				out, -PMON_ERRNO__RDPMC_RULE,
				"ECX[31] (legacy fast read) is not defined with architectural "
				"perfmon: ECX[31:16] is the type (0, 4000H or 2000H)");
		return verdict(
			out, -PMON_ERRNO__RDPMC_RULE,
			"ECX[31:16] = %04XH is not a PMC type (0 GP, 4000H fixed, 2000H metrics)",
			type);
	}
}

static int validate_legacy(const struct pmon_perfmon *pm, uint32_t ecx, struct pmon_rdpmc_sel *out)
{
	unsigned x = ecx & 0x7fffffffu;

	out->type = PMON_PMC_LEGACY;
	out->index = x;
	out->fast = ecx >> 31;
	if (pm->model == PMON_PERFMON_NONE)
		return verdict(out, -PMON_ERRNO__RDPMC_RULE,
			       "no counters are enumerated for this processor (struct "
			       "pmon_cpu_info's pm_none_why says why)");
	if (!pm->rdpmc_instruction)
		return verdict(out, -PMON_ERRNO__RDPMC_RULE,
			       "this Pentium has no RDPMC (it came with the Pentium Pro and the "
			       "Pentium with MMX technology): read CTR0/CTR1 with RDMSR 12H/13H");
	for (unsigned i = 0; i < pm->nranges; i++) {
		const struct pmon_pmc_range *r = &pm->ranges[i];

		if (x < r->first || x - r->first >= r->count)
			continue;
		if (out->fast && !r->fast_read)
			return verdict(out, -PMON_ERRNO__RDPMC_RULE,
				       "ECX[31] fast read is not supported for index %u (%s)", x,
				       r->what);
		out->width = out->fast ? 32 : r->width;
		return verdict(out, 0, "index %u in %u-%u: %s, %u bits%s", x, r->first,
			       r->first + r->count - 1, r->what, r->width,
			       out->fast ? ", fast read returns bits 31:0" : "");
	}
	char valid[96] = "";
	size_t n = 0;
	for (unsigned i = 0; i < pm->nranges && n < sizeof(valid); i++) {
		int k = snprintf(valid + n, sizeof(valid) - n, "%s%u-%u", i ? ", " : "",
				 pm->ranges[i].first,
				 pm->ranges[i].first + pm->ranges[i].count - 1);
		if (k < 0)
			break;
		n += (size_t)k;
	}
	return verdict(out, -PMON_ERRNO__RDPMC_RULE,
		       "ECX[30:0] = %u is not a counter index of this processor (valid: %s)", x,
		       valid);
}

int pmon_rdpmc_validate(const struct pmon_perfmon *pm, uint32_t ecx,
			enum pmon_tristate perf_metrics, struct pmon_rdpmc_sel *out)
{
	memset(out, 0, sizeof(*out));
	out->ecx = ecx;
	pmon__clear_detail();
	if (pm->model == PMON_PERFMON_INTEL_ARCH)
		return validate_arch(pm, ecx, perf_metrics, out);
	return validate_legacy(pm, ecx, out);
}

int pmon_rdpmc_encode(const struct pmon_perfmon *pm, enum pmon_pmc_type type, unsigned index,
		      bool fast, enum pmon_tristate perf_metrics, struct pmon_rdpmc_sel *out)
{
	uint32_t ecx;

	memset(out, 0, sizeof(*out));
	out->type = type;
	out->index = index;
	out->fast = fast;
	/* The ECX asked for, so that even a refusal names it. */
	out->ecx = type == PMON_PMC_LEGACY || (type == PMON_PMC_GP && fast)
		? (index & 0x7fffffffu) | (fast ? 0x80000000u : 0)
		: ((uint32_t)type << 16) | (index & 0xffffu);
	if (pm->model == PMON_PERFMON_INTEL_ARCH) {
		if (type == PMON_PMC_LEGACY)
			type = PMON_PMC_GP;
		if (fast && !pm->fast_read_arch)
			return verdict(out, -PMON_ERRNO__RDPMC_RULE,
				       "fast read (ECX[31]) exists only without architectural "
				       "perfmon (and on Core Solo/Duo and Core 2); here ECX[31:16] "
				       "is the counter type");
		if (type != PMON_PMC_GP && type != PMON_PMC_FIXED && type != PMON_PMC_METRICS)
			return verdict(out, -PMON_ERRNO__RDPMC_RULE, "unknown PMC type %04XH",
				       (unsigned)type);
		if (index > 0xffff)
			return verdict(out, -PMON_ERRNO__RDPMC_RULE,
				       "index %u does not fit ECX[15:0]", index);
		ecx = ((uint32_t)type << 16) | index | (fast ? 0x80000000u : 0);
	} else {
		if (type == PMON_PMC_FIXED || type == PMON_PMC_METRICS)
			return verdict(out, -PMON_ERRNO__RDPMC_RULE,
				       "%s counters need architectural perfmon (CPUID.0AH:EAX[7:0] "
				       "> 0); this processor has none",
				       type == PMON_PMC_FIXED ? "fixed-function"
							      : "performance-metrics");
		if (index > 0x7fffffffu)
			return verdict(out, -PMON_ERRNO__RDPMC_RULE,
				       "index %u does not fit ECX[30:0]", index);
		ecx = index | (fast ? 0x80000000u : 0);
	}
	return pmon_rdpmc_validate(pm, ecx, perf_metrics, out);
}
