// SPDX-License-Identifier: MIT
/*
 * The verdicts of pmon info (pmon/kernel.h): can this machine count, take
 * samples, read counters from user space, time with the TSC, monitor
 * caches, and where not, exactly why, from what CPUID decoded (cpu/), what
 * the kernel probe found (probe.c) and the TSC figure chosen (clock/). Pure:
 * a C program gets the same sentences the tool prints.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include <pmon/clock.h>
#include <pmon/cpu.h>
#include <pmon/kernel.h>

static void setv(struct pmon_verdict *v, enum pmon_verdict_state s, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void setv(struct pmon_verdict *v, enum pmon_verdict_state s, const char *fmt, ...)
{
	va_list ap;

	v->state = s;
	va_start(ap, fmt);
	vsnprintf(v->why, sizeof(v->why), fmt, ap);
	va_end(ap);
}

const char *pmon_verdict_state_name(enum pmon_verdict_state s)
{
	switch (s) {
	case PMON_VERDICT_YES:
		return "yes";
	case PMON_VERDICT_PARTIAL:
		return "partial";
	case PMON_VERDICT_NA:
		return "n/a";
	default:
		return "no";
	}
}

static void describe_counters(const struct pmon_perfmon *pm, char *buf, size_t len)
{
	if (pm->model == PMON_PERFMON_NONE) {
		snprintf(buf, len, "none enumerated");
		return;
	}
	int n = snprintf(buf, len, "%u general-purpose x %u bits", pm->gp_count, pm->gp_width);
	if (n > 0 && (size_t)n < len && pm->fixed_count)
		snprintf(buf + n, len - (size_t)n, ", %u fixed x %u bits", pm->fixed_count,
			 pm->fixed_width);
}

/* The kernel's verdicts on this machine: counters, rdpmc, sampling,
 * software events, tracepoints (@counters: CPUID's in words). */
static void kernel_verdicts(const struct pmon_cpu_info *ci, const struct pmon_kernel_info *k,
			    const char *counters, struct pmon_verdict *out)
{
	const char *hv = ci->id.hv_name ? ci->id.hv_name : "the hypervisor";
	bool hw = false;

	if (k->core_pmu[0] && k->hw_open_err == 0) {
		hw = true;
		setv(&out[PMON_VERDICT_HW], PMON_VERDICT_YES, "%s, through the '%s' PMU", counters,
		     k->core_pmu);
	} else if (k->core_pmu[0] && (k->hw_open_err == -EACCES || k->hw_open_err == -EPERM)) {
		setv(&out[PMON_VERDICT_HW], PMON_VERDICT_NO,
		     "perf_event_paranoid = %d forbids counting cycles; run as root, grant "
		     "CAP_PERFMON, or lower /proc/sys/kernel/perf_event_paranoid",
		     k->paranoid);
	} else if (k->core_pmu[0]) {
		setv(&out[PMON_VERDICT_HW], PMON_VERDICT_NO,
		     "the '%s' PMU exists but cycles does not open: %s", k->core_pmu,
		     strerror(-k->hw_open_err));
	} else if (ci->id.hypervisor) {
		setv(&out[PMON_VERDICT_HW], PMON_VERDICT_NO,
		     "%s exposes no PMU to this VM: the kernel registered no 'cpu' event "
		     "source%s%s",
		     hv,
		     ci->pm.model == PMON_PERFMON_NONE
			     ? "; CPUID agrees: "
			     : " (CPUID still describes counters the VM cannot use)",
		     ci->pm.model == PMON_PERFMON_NONE && ci->pm_none_why ? ci->pm_none_why : "");
	} else {
		setv(&out[PMON_VERDICT_HW], PMON_VERDICT_NO,
		     "the kernel registered no 'cpu' event source (no perf support for "
		     "this "
		     "CPU in this kernel)");
	}

	if (hw && k->cap_user_rdpmc)
		setv(&out[PMON_VERDICT_RDPMC], PMON_VERDICT_YES,
		     "the mmapped cycles page says cap_user_rdpmc = 1 (pmc_width %u)",
		     k->pmc_width);
	else if (!hw)
		setv(&out[PMON_VERDICT_RDPMC], PMON_VERDICT_NO,
		     "needs hardware counters; reads fall back to read()");
	else if (k->rdpmc_mode == 0)
		setv(&out[PMON_VERDICT_RDPMC], PMON_VERDICT_NO,
		     "the core PMU's rdpmc sysfs mode is 0: the kernel forbids it");
	else
		setv(&out[PMON_VERDICT_RDPMC], PMON_VERDICT_NO,
		     "the mmapped cycles page says cap_user_rdpmc = 0");

	/* What samples here, named from what the machine offers: every
	 * software event and, where the 'tracepoint' PMU exists, tracepoints
	 * sample as well as hardware events do (issue #27). */
	const char *tp = !k->has_tracepoints ? ""
		: k->paranoid > -1	     ? ", tracepoints (with root or CAP_PERFMON)"
					     : ", tracepoints";
	if (hw)
		setv(&out[PMON_VERDICT_SAMPLING], PMON_VERDICT_YES,
		     "hardware events, software events%s", tp);
	else if (k->sw_open_err == 0)
		setv(&out[PMON_VERDICT_SAMPLING], PMON_VERDICT_PARTIAL,
		     "software events (cpu-clock, task-clock, page-faults, context-switches, "
		     "...)%s; no hardware events",
		     tp);
	else
		setv(&out[PMON_VERDICT_SAMPLING], PMON_VERDICT_NO, "no event opens here");

	if (k->sw_open_err == 0)
		setv(&out[PMON_VERDICT_SW], PMON_VERDICT_YES, "task-clock opens for this process");
	else if (k->sw_open_err == -EACCES || k->sw_open_err == -EPERM)
		setv(&out[PMON_VERDICT_SW], PMON_VERDICT_NO,
		     "perf_event_paranoid = %d forbids perf_event_open", k->paranoid);
	else
		setv(&out[PMON_VERDICT_SW], PMON_VERDICT_NO, "task-clock does not open: %s",
		     strerror(-k->sw_open_err));

	if (k->has_tracepoints)
		setv(&out[PMON_VERDICT_TRACE], PMON_VERDICT_YES, "the 'tracepoint' PMU exists%s",
		     k->paranoid > -1 ? " (reading them needs root or CAP_PERFMON)" : "");
	else
		setv(&out[PMON_VERDICT_TRACE], PMON_VERDICT_NO,
		     "no 'tracepoint' PMU in this kernel");
}

void pmon_verdicts(const struct pmon_cpu_info *ci, const struct pmon_kernel_info *k,
		   const struct pmon_tsc_choice *tsc, struct pmon_verdict out[PMON_VERDICT__COUNT])
{
	bool live = k != NULL;
	char counters[128];

	describe_counters(&ci->pm, counters, sizeof(counters));
	out[PMON_VERDICT_HW] =
		(struct pmon_verdict){ .key = "hardware_counters", .label = "hardware counters" };
	out[PMON_VERDICT_RDPMC] =
		(struct pmon_verdict){ .key = "user_rdpmc", .label = "user-space rdpmc" };
	out[PMON_VERDICT_SAMPLING] =
		(struct pmon_verdict){ .key = "sampling", .label = "sampling" };
	out[PMON_VERDICT_SW] =
		(struct pmon_verdict){ .key = "software_events", .label = "software events" };
	out[PMON_VERDICT_TRACE] =
		(struct pmon_verdict){ .key = "tracepoints", .label = "tracepoints" };
	out[PMON_VERDICT_TSC] = (struct pmon_verdict){ .key = "tsc_timing", .label = "TSC timing" };
	out[PMON_VERDICT_RDT] = (struct pmon_verdict){ .key = "rdt", .label = "RDT (CMT/MBM)" };

	if (!live) {
		/* Another machine's dump: only what CPUID can tell. */
		if (ci->pm.model == PMON_PERFMON_NONE)
			setv(&out[PMON_VERDICT_HW], PMON_VERDICT_NO,
			     "CPUID enumerates no counters: %s",
			     ci->pm_none_why ? ci->pm_none_why : "no counter model");
		else
			setv(&out[PMON_VERDICT_HW], PMON_VERDICT_YES, "per CPUID: %s%s%s", counters,
			     ci->pm.fixed_assumed
				     ? " (3 fixed: v2-v4 parts misreport CPUID.0AH:EDX[4:0]; "
				       "Linux assumes 3 outside a VM)"
				     : ci->pm.hybrid_pcore_extra
				     ? " (P-core: CPUID.0AH's common subset + 2 GP, + 1 fixed, as "
				       "Linux's cpu_core)"
				     : "",
			     ci->pm_hv_unverifiable ? "; CPUID cannot tell whether the hypervisor "
						      "provides these counters"
						    : "");
		setv(&out[PMON_VERDICT_RDPMC], PMON_VERDICT_NA,
		     "depends on the kernel of that machine");
		setv(&out[PMON_VERDICT_SAMPLING], PMON_VERDICT_NA,
		     "depends on the kernel of that machine");
		setv(&out[PMON_VERDICT_SW], PMON_VERDICT_NA,
		     "depends on the kernel of that machine");
		setv(&out[PMON_VERDICT_TRACE], PMON_VERDICT_NA,
		     "depends on the kernel of that machine");
	} else {
		kernel_verdicts(ci, k, counters, out);
	}

	if (!ci->tsc.tsc)
		setv(&out[PMON_VERDICT_TSC], PMON_VERDICT_NO, "no TSC (CPUID.01H:EDX[4] = 0)");
	else if (!ci->tsc.invariant)
		setv(&out[PMON_VERDICT_TSC], PMON_VERDICT_PARTIAL,
		     "TSC present but not invariant (CPUID.80000007H:EDX[8] = 0): its rate may "
		     "follow frequency changes");
	else if (tsc->hz)
		setv(&out[PMON_VERDICT_TSC], PMON_VERDICT_YES, "invariant TSC at %.3f GHz (%s)",
		     (double)tsc->hz / 1e9, pmon_tsc_source_name(tsc->source));
	else
		setv(&out[PMON_VERDICT_TSC], PMON_VERDICT_YES,
		     "invariant TSC; its frequency is not enumerated");

	const struct pmon_rdt *r = &ci->rdt;
	if (!r->pqm)
		setv(&out[PMON_VERDICT_RDT], PMON_VERDICT_NO,
		     "CPUID.(07H,0):EBX[12] PQM = 0: no resource monitoring");
	else if (r->mon_erratum_disabled)
		setv(&out[PMON_VERDICT_RDT], PMON_VERDICT_NO,
		     "CPUID enumerates L3 monitoring, but Skylake-SP stepping %u <= 4 has "
		     "CMT/MBM errata: Linux disables them (resctrl __check_quirks_intel)",
		     ci->id.stepping);
	else if (!r->l3 || !(r->occupancy || r->mbm_total || r->mbm_local))
		setv(&out[PMON_VERDICT_RDT], PMON_VERDICT_NO,
		     "PQM = 1 but no L3 monitoring events are enumerated");
	else if (!live)
		setv(&out[PMON_VERDICT_RDT], PMON_VERDICT_YES, "per CPUID: L3 %s%s%s",
		     r->occupancy ? "occupancy " : "", r->mbm_total ? "total-bandwidth " : "",
		     r->mbm_local ? "local-bandwidth" : "");
	else if (k->resctrl_mounted && k->resctrl_l3_mon)
		setv(&out[PMON_VERDICT_RDT], PMON_VERDICT_YES,
		     "resctrl mounted at %s with L3 monitoring", k->resctrl_path);
	else
		setv(&out[PMON_VERDICT_RDT], PMON_VERDICT_PARTIAL,
		     "the CPU has it; mount resctrl to use it: mount -t resctrl resctrl "
		     "/sys/fs/resctrl");
}
