// SPDX-License-Identifier: MIT
/*
 * Human names for the decoded facts of pmon/cpu.h: the architectural events
 * (SDM Vol. 3B, Table 21-1 and the 23H.03H bit vector), the fixed counters,
 * core types of leaf 1AH, and pmon's own enums.
 */
#include "internal.h"
#include <pmon/cpu.h>

static const char *const arch_events[PMON_ARCH_EVENT__COUNT] = {
	[PMON_ARCH_CORE_CYCLES] = "core cycles",
	[PMON_ARCH_INSTRUCTIONS] = "instructions retired",
	[PMON_ARCH_REF_CYCLES] = "reference cycles",
	[PMON_ARCH_LLC_REFERENCES] = "LLC references",
	[PMON_ARCH_LLC_MISSES] = "LLC misses",
	[PMON_ARCH_BRANCHES] = "branch instructions retired",
	[PMON_ARCH_BRANCH_MISSES] = "branch mispredicts retired",
	[PMON_ARCH_TOPDOWN_SLOTS] = "topdown slots",
	[PMON_ARCH_TOPDOWN_BACKEND] = "topdown backend bound",
	[PMON_ARCH_TOPDOWN_BAD_SPEC] = "topdown bad speculation",
	[PMON_ARCH_TOPDOWN_FRONTEND] = "topdown frontend bound",
	[PMON_ARCH_TOPDOWN_RETIRING] = "topdown retiring",
	[PMON_ARCH_LBR_INSERTS] = "LBR inserts",
};

/* IA32_FIXED_CTRx (SDM Vol. 3B 21.2.2, 21.2.5 and perfmon v6). */
static const char *const fixed_counters[] = {
	"instructions retired", /* INST_RETIRED.ANY */
	"core cycles", /* CPU_CLK_UNHALTED.THREAD */
	"reference cycles (TSC rate)", /* CPU_CLK_UNHALTED.REF_TSC */
	"topdown slots", /* TOPDOWN.SLOTS */
	"topdown bad speculation",
	"topdown frontend bound",
	"topdown retiring",
};

const char *pmon_arch_event_name(unsigned e)
{
	return e < PMON_ARCH_EVENT__COUNT ? arch_events[e] : NULL;
}

const char *pmon_fixed_counter_name(unsigned i)
{
	return i < PMON_ARRAY_SIZE(fixed_counters) ? fixed_counters[i] : NULL;
}

const char *pmon_core_type_name(unsigned t)
{
	switch (t) {
	case 0x20:
		return "E-core (Atom)";
	case 0x40:
		return "P-core (Core)";
	default:
		return NULL;
	}
}

const char *pmon_vendor_name(enum pmon_vendor v)
{
	switch (v) {
	case PMON_VENDOR_INTEL:
		return "Intel";
	case PMON_VENDOR_AMD:
		return "AMD";
	case PMON_VENDOR_HYGON:
		return "Hygon";
	default:
		return "other";
	}
}

const char *pmon_perfmon_model_name(enum pmon_perfmon_model m)
{
	switch (m) {
	case PMON_PERFMON_INTEL_P5:
		return "intel-p5";
	case PMON_PERFMON_INTEL_P6:
		return "intel-p6";
	case PMON_PERFMON_INTEL_NETBURST:
		return "intel-netburst";
	case PMON_PERFMON_INTEL_ARCH:
		return "intel-arch";
	case PMON_PERFMON_AMD_LEGACY:
		return "amd-legacy";
	case PMON_PERFMON_AMD_EXT:
		return "amd-perfctr-ext";
	case PMON_PERFMON_AMD_V2:
		return "amd-perfmon-v2";
	default:
		return "none";
	}
}

const char *pmon_leaf_state_name(enum pmon_leaf_state s)
{
	switch (s) {
	case PMON_LEAF_OK:
		return "ok";
	case PMON_LEAF_ABSENT:
		return "absent from the snapshot";
	default:
		return "not enumerated";
	}
}

const char *pmon_tsc_source_name(enum pmon_tsc_source s)
{
	switch (s) {
	case PMON_TSC_HZ_LEAF15:
		return "CPUID.15H";
	case PMON_TSC_HZ_LEAF15_NOMINAL:
		return "CPUID.15H ratio, nominal crystal (SDM table)";
	case PMON_TSC_HZ_LEAF15_16:
		return "CPUID.15H ratio, crystal from CPUID.16H";
	case PMON_TSC_HZ_HYPERVISOR:
		return "hypervisor leaf 40000010H";
	case PMON_TSC_HZ_CALIBRATED:
		return "calibrated against CLOCK_MONOTONIC_RAW";
	case PMON_TSC_HZ_LEAF15_DENVERTON:
		return "CPUID.15H ratio, Denverton's 25 MHz crystal";
	default:
		return "not enumerated";
	}
}

bool pmon_tsc_source_is_derived(enum pmon_tsc_source s)
{
	return s == PMON_TSC_HZ_LEAF15_NOMINAL || s == PMON_TSC_HZ_LEAF15_16;
}
