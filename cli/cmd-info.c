// SPDX-License-Identifier: MIT
/*
 * pmon info: what this machine can count and, when it cannot, exactly why
 * and what remains. CPUID facts come from libpmon's decoder (live, one CPU,
 * or another machine's dump); kernel facts from its probe; the verdicts
 * combine both. Text for people, --json (docs/info-json.md) for programs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include <pmon/pmon.h>

struct info {
	struct pmon_cpu_info ci;
	bool live; /* facts of this machine (not a dump) */
	const char *source;
	struct pmon_kernel_info k;
	char clocksource[64], clocksources[256];
	struct pmon_clock_res clocks[16];
	size_t nclocks;
	struct pmon_tsc_choice tsc; /* the figure used and what it was checked against */
	struct pmon_verdict v[PMON_VERDICT__COUNT];
};

/* ---- text ------------------------------------------------------------ */

static void row(FILE *f, const char *label, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void row(FILE *f, const char *label, const char *fmt, ...)
{
	va_list ap;

	fprintf(f, "  %-22s ", label);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
}

static void print_perfmon(FILE *f, const struct pmon_cpu_info *ci)
{
	const struct pmon_perfmon *pm = &ci->pm;
	char buf[512];

	fprintf(f, "\nPerformance-monitoring counters (CPUID)\n");
	row(f, "model", "%s", pmon_perfmon_model_name(pm->model));
	if (ci->id.vendor == PMON_VENDOR_INTEL) {
		if (pm->leaf_0a == PMON_LEAF_OK)
			row(f, "leaf 0AH",
			    "EAX=%08" PRIx32 " EBX=%08" PRIx32 " ECX=%08" PRIx32 " EDX=%08" PRIx32,
			    pm->raw_0a[0], pm->raw_0a[1], pm->raw_0a[2], pm->raw_0a[3]);
		else
			row(f, "leaf 0AH", "%s", pmon_leaf_state_name(pm->leaf_0a));
	}
	if (pm->model == PMON_PERFMON_INTEL_ARCH) {
		row(f, "version", "%u (CPUID.0AH:EAX[7:0])", pm->version);
		if (pm->leaf_23 == PMON_LEAF_OK)
			row(f, "leaf 23H",
			    "present: counters below come from it (0AH says %u GP, "
			    "fixed mask %#x)",
			    pm->gp_count_0a,
			    pm->fixed_mask_0a |
				    (pm->fixed_count_0a ? (1u << pm->fixed_count_0a) - 1 : 0));
		row(f, "general-purpose", "%u x %u bits (mask %#" PRIx64 ")", pm->gp_count,
		    pm->gp_width, pm->gp_mask);
		row(f, "fixed-function", "%u x %u bits (mask %#" PRIx32 ")", pm->fixed_count,
		    pm->fixed_width, pm->fixed_mask);
		for (unsigned i = 0; i < 32; i++)
			if ((pm->fixed_mask >> i) & 1) {
				snprintf(buf, sizeof(buf), "  fixed %u", i);
				row(f, buf, "%s",
				    pmon_fixed_counter_name(i) ? pmon_fixed_counter_name(i)
							       : "(model specific)");
			}
		size_t n = 0;
		buf[0] = '\0';
		for (unsigned e = 0; e < PMON_ARCH_EVENT__COUNT; e++)
			if ((pm->arch_events >> e) & 1) {
				int k = snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? ", " : "",
						 pmon_arch_event_name(e));
				if (k < 0 || (size_t)k >= sizeof(buf) - n)
					break;
				n += (size_t)k;
			}
		row(f, "architectural events", "%s", n ? buf : "none");
		/* 23H.03H enumerates every event; 0AH only its EBX length. */
		unsigned nev = pm->leaf_23 == PMON_LEAF_OK && (pm->subleaves_23 & 8)
			? PMON_ARCH_EVENT__COUNT
			: pm->ebx_length;
		for (unsigned e = 0; e < PMON_ARCH_EVENT__COUNT && e < nev; e++)
			if (!((pm->arch_events >> e) & 1)) {
				snprintf(buf, sizeof(buf), "  not available");
				row(f, buf, "%s", pmon_arch_event_name(e));
			}
		if (pm->version >= 2 && pm->version <= 4 && pm->fixed_count_0a < 3 &&
		    pm->leaf_23 != PMON_LEAF_OK)
			row(f, "note",
			    "CPUID.0AH:EDX[4:0] reports %u fixed counters with version %u; "
			    "these processors have 3, and Linux assumes 3%s",
			    pm->fixed_count_0a, pm->version,
			    pm->fixed_assumed ? ": so does pmon (not a VM)"
					      : "; not in a VM, so EDX is believed here");
		if (pm->edx_reserved)
			row(f, "note", "reserved CPUID.0AH:EDX bits set (%#" PRIx32 "): ignored",
			    pm->edx_reserved);
		if (ci->hybrid_0a_subset)
			row(f, "note",
			    "hybrid part without leaf 23H: 0AH reports only what all core "
			    "types share");
		if (ci->leaf_23_ignored)
			row(f, "note",
			    "leaf 23H is within the maximum leaf but CPUID.(07H,1):EAX[8] "
			    "ArchPerfmonExt = 0: not read (as Linux)");
		if (pm->hybrid_pcore_extra)
			row(f, "core type",
			    "the figures above are the P-core's: 0AH's %u GP "
			    "+ 2 and %u fixed + 1, as Linux's cpu_core PMU (intel_pmu_init)",
			    pm->gp_count_0a, pm->fixed_count_0a);
		else if (pm->core_type)
			row(f, "core type", "the figures above are the %s's",
			    pmon_core_type_name(pm->core_type) ? pmon_core_type_name(pm->core_type)
							       : "dumped core");
	} else if (pm->model != PMON_PERFMON_NONE) {
		row(f, "general-purpose", "%u x %u bits", pm->gp_count, pm->gp_width);
		for (unsigned i = 0; i < pm->nranges; i++) {
			snprintf(buf, sizeof(buf), "  rdpmc %u-%u", pm->ranges[i].first,
				 pm->ranges[i].first + pm->ranges[i].count - 1);
			row(f, buf, "%s, %u bits%s", pm->ranges[i].what, pm->ranges[i].width,
			    pm->ranges[i].fast_read ? ", ECX[31] fast read" : "");
		}
		if (!pm->rdpmc_instruction)
			row(f, "rdpmc", "no (Pentium without MMX: RDMSR at CPL 0 only)");
		if (pm->amd_v2)
			row(f, "PerfMonV2", "yes: %u core, %u DF, %u UMC counters", pm->gp_count,
			    pm->amd_nb_count, pm->amd_umc_count);
	} else {
		row(f, "counters", "none: %s",
		    ci->pm_none_why ? ci->pm_none_why : "no counter model");
	}
	if (ci->pm_hv_unverifiable)
		row(f, "note",
		    "a hypervisor's CPUID (CPUID.01H:ECX[31] = 1): CPUID cannot tell whether the "
		    "hypervisor provides these counters");
}

/* What the kernel offers: event sources, rights, rdpmc, the mmap page. */
static void print_kernel(FILE *f, const struct pmon_kernel_info *k)
{
	char buf[512];
	size_t n = 0;

	fprintf(f, "\nKernel\n");
	buf[0] = '\0';
	for (size_t i = 0; i < k->npmus; i++) {
		int w = snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? " " : "", k->pmus[i].name);
		if (w < 0 || (size_t)w >= sizeof(buf) - n)
			break;
		n += (size_t)w;
	}
	row(f, "event sources", "%s", n ? buf : "(none)");
	if (k->ncore_pmus > 1) /* hybrid: one core PMU per core type */
		row(f, "core PMU", "%s and %s (hybrid: generic events open on each)",
		    k->core_pmus[0].name, k->core_pmus[1].name);
	else
		row(f, "core PMU", "%s", k->core_pmu[0] ? k->core_pmu : "none");
	if (k->paranoid == INT_MIN)
		row(f, "perf_event_paranoid", "absent (kernel without perf events?)");
	else
		row(f, "perf_event_paranoid", "%d%s", k->paranoid,
		    k->paranoid >= 2	       ? " (own processes, user space only, unless root)"
			    : k->paranoid == 1 ? " (own processes, user and kernel)"
					       : " (system-wide allowed)");
	if (k->rdpmc_mode >= 0)
		row(f, "rdpmc sysfs mode", "%d (%s)", k->rdpmc_mode,
		    k->rdpmc_mode == 0		 ? "never"
			    : k->rdpmc_mode == 1 ? "processes with an mmapped event"
						 : "any process");
	else
		row(f, "rdpmc sysfs mode", "absent (no core PMU)");
	if (k->mmap_event)
		row(f, "mmap page", "%s: cap_user_rdpmc=%d cap_user_time=%d pmc_width=%u",
		    k->mmap_event, k->cap_user_rdpmc, k->cap_user_time, k->pmc_width);
	else
		row(f, "mmap page", "no event could be mapped");
	char why[256];
	row(f, "/dev/cpu/0/msr", "%s%s%s", k->msr_dev ? "present" : "absent: ",
	    k->msr_dev ? "" : pmon_msr_missing_why(why, sizeof(why)), "");
	row(f, "/dev/cpu/0/cpuid", "%s", k->cpuid_dev ? "present" : "absent (modprobe cpuid)");
	if (k->nmi_watchdog >= 0)
		row(f, "nmi_watchdog", "%d%s", k->nmi_watchdog,
		    k->nmi_watchdog ? " (holds one counter)" : "");
}

/* The TSC: CPUID's leaves, the crystal, the figure used and its cross-check. */
static void print_tsc(FILE *f, const struct info *in)
{
	const struct pmon_cpu_info *ci = &in->ci;

	fprintf(f, "\nTime-stamp counter\n");
	row(f, "TSC / RDTSCP", "%s / %s", ci->tsc.tsc ? "yes" : "no",
	    ci->tsc.rdtscp ? "yes" : "no");
	row(f, "invariant", "%s (CPUID.80000007H:EDX[8]%s)", ci->tsc.invariant ? "yes" : "no",
	    ci->id.max_ext_leaf >= 0x80000007 ? "" : " not enumerated");
	if (ci->tsc.leaf_15 == PMON_LEAF_OK)
		row(f, "leaf 15H", "ratio %" PRIu32 "/%" PRIu32 ", crystal %" PRIu32 " Hz",
		    ci->tsc.numerator, ci->tsc.denominator, ci->tsc.crystal_hz);
	else
		row(f, "leaf 15H", "%s", pmon_leaf_state_name(ci->tsc.leaf_15));
	if (ci->tsc.leaf_16 == PMON_LEAF_OK)
		row(f, "leaf 16H", "base %" PRIu32 " MHz, max %" PRIu32 " MHz, bus %" PRIu32 " MHz",
		    ci->tsc.base_mhz, ci->tsc.max_mhz, ci->tsc.bus_mhz);
	if (ci->tsc.leaf_hv == PMON_LEAF_OK)
		row(f, "leaf 40000010H", "TSC %" PRIu32 " kHz, bus %" PRIu32 " kHz",
		    ci->tsc.hv_tsc_khz, ci->tsc.hv_bus_khz);
	if (ci->tsc_crystal_hz) {
		const char *how = "CPUID.15H:ECX";
		char buf[160];

		if (ci->tsc.source == PMON_TSC_HZ_LEAF15_16) {
			snprintf(buf, sizeof(buf),
				 "16H base %" PRIu32 " MHz x %" PRIu32 " / %" PRIu32
				 ", in kHz as Linux native_calibrate_tsc()",
				 ci->tsc.base_mhz, ci->tsc.denominator, ci->tsc.numerator);
			how = buf;
		} else if (ci->tsc.source == PMON_TSC_HZ_LEAF15_NOMINAL) {
			how = "the SDM's nominal table by model: leaf 16H is absent";
		} else if (ci->tsc.source == PMON_TSC_HZ_LEAF15_DENVERTON) {
			how = "Denverton reports none: 25 MHz, as Linux";
		}
		row(f, "crystal", "%" PRIu32 " Hz (%s)", ci->tsc_crystal_hz, how);
	}
	if (in->tsc.hz)
		row(f, "frequency", "%.6f GHz (%s%s)", (double)in->tsc.hz / 1e9,
		    pmon_tsc_source_name(in->tsc.source),
		    in->tsc.source == PMON_TSC_HZ_CALIBRATED ? ", 5 x 20 ms windows" : "");
	else
		row(f, "frequency", "not enumerated%s",
		    in->live ? "" : " (calibration needs the machine)");
	if (in->tsc.compared)
		row(f, "cross-check",
		    "CPUID %.6f GHz (%s) vs calibrated %.6f GHz: %+" PRId64 " ppm, %s the %" PRIu32
		    " ppm tolerance: the %s figure wins",
		    (double)in->tsc.cpuid_hz / 1e9, pmon_tsc_source_name(in->tsc.cpuid_source),
		    (double)in->tsc.calibrated_hz / 1e9, in->tsc.diff_ppm,
		    in->tsc.source == PMON_TSC_HZ_CALIBRATED ? "beyond" : "within",
		    in->tsc.tolerance_ppm,
		    in->tsc.source == PMON_TSC_HZ_CALIBRATED ? "calibrated" : "CPUID");
	else if (!in->live && pmon_tsc_source_is_derived(in->tsc.source))
		row(f, "cross-check",
		    "a derivation, not a reported frequency: on the machine itself pmon "
		    "calibrates and compares (the calibration wins beyond %u ppm)",
		    PMON_TSC_TOLERANCE_PPM);
	if (in->tsc.calibrated_hz)
		row(f, "calibration spread", "%" PRIu32 " ppm", in->tsc.spread_ppm);
}

static void print_timers(FILE *f, const struct info *in)
{
	fprintf(f, "\nOther timers\n");
	if (in->clocksource[0])
		row(f, "clocksource", "%s (available: %s)", in->clocksource, in->clocksources);
	for (size_t i = 0; i < in->nclocks; i++) {
		if (in->clocks[i].res_ns < 0)
			row(f, in->clocks[i].name, "unsupported");
		else
			row(f, in->clocks[i].name, "%ld ns resolution: %s", in->clocks[i].res_ns,
			    in->clocks[i].what);
	}
}

/* SDM 17.16.3's enumeration steps, then allocation (leaf 10H). */
static void print_rdt(FILE *f, const struct info *in)
{
	const struct pmon_cpu_info *ci = &in->ci;
	const struct pmon_rdt *r = &ci->rdt;
	fprintf(f, "\nResource monitoring (CMT/MBM, SDM 17.16.3 steps 1-5)\n");
	row(f, "1 max leaf", "%02" PRIX32 "H%s", r->max_leaf,
	    r->max_leaf >= 7 ? "" : " (< 7: stop)");
	row(f, "2 PQM", "%s (CPUID.(07H,0):EBX[12])", r->pqm ? "1" : "0");
	if (r->pqm) {
		if (r->leaf_0f == PMON_LEAF_OK)
			row(f, "3 leaf 0FH.0",
			    "max RMID %" PRIu32 " (IA32_PQR_ASSOC RMID field %u bits), resources "
			    "%#" PRIx32 " (L3 %s)",
			    r->max_rmid, r->rmid_bits, r->resources, r->l3 ? "yes" : "no");
		else
			row(f, "3 leaf 0FH.0", "%s", pmon_leaf_state_name(r->leaf_0f));
		if (r->l3 && r->leaf_0f_1 == PMON_LEAF_OK) {
			row(f, "4 leaf 0FH.1",
			    "L3 max RMID %" PRIu32 ", upscale %" PRIu32
			    " bytes/unit, counter width %u%s%s",
			    r->l3_max_rmid, r->upscale, r->counter_width,
			    r->width_vendor_default
				    ? (ci->id.vendor == PMON_VENDOR_AMD
					       ? " (EAX[7:0] = 0 on AMD: 24 + 20, Linux's "
						 "MBM_CNTR_WIDTH_OFFSET_AMD)"
					       : " (EAX[7:0] = 0 on Hygon: 24 + 8, Linux's "
						 "MBM_CNTR_WIDTH_OFFSET_HYGON)")
				    : "",
			    r->overflow_bit ? ", overflow bit" : "");
			row(f, "  events", "%s%s%s", r->cpuid_occupancy ? "llc_occupancy " : "",
			    r->cpuid_mbm_total ? "mbm_total_bytes " : "",
			    r->cpuid_mbm_local ? "mbm_local_bytes" : "");
			if (r->mon_erratum_disabled)
				row(f, "  erratum",
				    "Skylake-SP stepping <= 4: Linux disables CMT and MBM "
				    "(resctrl __check_quirks_intel); pmon does too");
			if (r->mbm_cf_quirk)
				row(f, "  erratum",
				    "MBM counts of RMIDs above %" PRIu32 " are multiplied by "
				    "%.6f (Linux mbm_cf_table); pmon rdt --msr does too",
				    r->mbm_cf_rmid_threshold, (double)r->mbm_cf / 1048576.0);
		}
		row(f, "5 other resources", "%s", r->other_resources ? "yes" : "none");
	}
	if (r->pqe && r->leaf_10 == PMON_LEAF_OK) {
		/* A sub-leaf the dump lacks is not decoded as zeros. */
		if (r->l3_cat && r->leaf_10_1 == PMON_LEAF_OK)
			row(f, "L3 allocation", "%u-bit masks, %u classes%s", r->l3_cbm_len,
			    r->l3_cos_max + 1, r->l3_cdp ? ", CDP" : "");
		else if (r->l3_cat)
			row(f, "L3 allocation", "not enumerated (leaf 10H.1 %s)",
			    pmon_leaf_state_name(r->leaf_10_1));
		if (r->l2_cat && r->leaf_10_2 == PMON_LEAF_OK)
			row(f, "L2 allocation", "%u-bit masks, %u classes", r->l2_cbm_len,
			    r->l2_cos_max + 1);
		else if (r->l2_cat)
			row(f, "L2 allocation", "not enumerated (leaf 10H.2 %s)",
			    pmon_leaf_state_name(r->leaf_10_2));
		if (r->mba && r->leaf_10_3 == PMON_LEAF_OK)
			row(f, "memory bandwidth alloc", "max %u, %u classes%s", r->mba_max,
			    r->mba_cos_max + 1, r->mba_linear ? ", linear" : "");
		else if (r->mba)
			row(f, "memory bandwidth alloc", "not enumerated (leaf 10H.3 %s)",
			    pmon_leaf_state_name(r->leaf_10_3));
	}
	if (in->live)
		row(f, "resctrl", "%s%s",
		    in->k.resctrl_mounted ? in->k.resctrl_path : "not mounted",
		    in->k.resctrl_mounted && in->k.resctrl_l3_mon ? " (L3_MON)" : "");
}

static void print_text(FILE *f, const struct info *in)
{
	const struct pmon_cpu_info *ci = &in->ci;

	fprintf(f, "pmon info%s%s\n\n", in->live ? "" : " -- dump ", in->live ? "" : in->source);
	char brand[sizeof(ci->id.brand) * 2];
	/* A dump's brand string is the file's bytes: masked for the terminal. */
	row(f, "CPU", "%s",
	    ci->id.brand[0] ? cli_printable(ci->id.brand, brand, sizeof(brand))
			    : "(no brand string)");
	row(f, "vendor", "%s (%s), family %02XH, model %02XH, stepping %u",
	    pmon_vendor_name(ci->id.vendor), ci->id.vendor_id, ci->id.family, ci->id.model,
	    ci->id.stepping);
	if (ci->id.hypervisor)
		row(f, "hypervisor", "%s (signature \"%s\")",
		    ci->id.hv_name ? ci->id.hv_name : "unknown", ci->id.hv_signature);
	else
		row(f, "hypervisor", "none (CPUID.01H:ECX[31] = 0)");
	if (ci->hybrid.leaf_1a == PMON_LEAF_OK && ci->hybrid.core_type)
		row(f, "core type", "%s",
		    pmon_core_type_name(ci->hybrid.core_type)
			    ? pmon_core_type_name(ci->hybrid.core_type)
			    : "unknown");

	fprintf(f, "\nVerdict\n");
	for (int i = 0; i < PMON_VERDICT__COUNT; i++)
		fprintf(f, "  %-22s %-7s %s\n", in->v[i].label,
			pmon_verdict_state_name(in->v[i].state), in->v[i].why);
	if (in->live && in->v[PMON_VERDICT_HW].state == PMON_VERDICT_NO)
		fprintf(f,
			"  -> without hardware counters, pmon still measures with software events, "
			"tracepoints and TSC timing; simulation needs no PMU either.\n");

	print_perfmon(f, ci);
	if (in->live)
		print_kernel(f, &in->k);
	print_tsc(f, in);
	if (in->live)
		print_timers(f, in);
	print_rdt(f, in);
}

/* ---- JSON (schema: docs/info-json.md) -------------------------------- */

static json_t *json_perfmon(const struct pmon_cpu_info *ci)
{
	const struct pmon_perfmon *pm = &ci->pm;
	json_t *o, *a;

	o = json_object();
	json_object_set_new(o, "model", json_string(pmon_perfmon_model_name(pm->model)));
	json_object_set_new(o, "version", json_integer(pm->version));
	json_object_set_new(o, "leaf_0a", json_string(pmon_leaf_state_name(pm->leaf_0a)));
	json_object_set_new(o, "leaf_23", json_boolean(pm->leaf_23 == PMON_LEAF_OK));
	json_object_set_new(o, "arch_perfmon_ext", json_boolean(ci->arch_perfmon_ext));
	json_object_set_new(o, "leaf_23_ignored", json_boolean(ci->leaf_23_ignored));
	json_object_set_new(o, "hybrid_0a_subset", json_boolean(ci->hybrid_0a_subset));
	json_object_set_new(o, "none_why",
			    ci->pm_none_why ? json_string(ci->pm_none_why) : json_null());
	json_object_set_new(o, "hypervisor_unverifiable", json_boolean(ci->pm_hv_unverifiable));
	json_object_set_new(o, "gp",
			    json_pack("{s:i, s:i, s:I}", "count", (int)pm->gp_count, "width",
				      (int)pm->gp_width, "mask", (json_int_t)pm->gp_mask));
	json_object_set_new(o, "fixed",
			    json_pack("{s:i, s:i, s:I}", "count", (int)pm->fixed_count, "width",
				      (int)pm->fixed_width, "mask", (json_int_t)pm->fixed_mask));
	a = json_array();
	for (unsigned e = 0; e < PMON_ARCH_EVENT__COUNT; e++)
		if ((pm->arch_events >> e) & 1)
			json_array_append_new(a, json_string(pmon_arch_event_name(e)));
	json_object_set_new(o, "arch_events", a);
	a = json_array();
	for (unsigned i = 0; i < pm->nranges; i++)
		json_array_append_new(
			a,
			json_pack("{s:i, s:i, s:i, s:b, s:s}", "first", (int)pm->ranges[i].first,
				  "count", (int)pm->ranges[i].count, "width",
				  (int)pm->ranges[i].width, "fast_read", pm->ranges[i].fast_read,
				  "what", pm->ranges[i].what));
	json_object_set_new(o, "rdpmc_ranges", a);
	json_object_set_new(o, "rdpmc_instruction", json_boolean(pm->rdpmc_instruction));
	json_object_set_new(o, "core_type",
			    pm->core_type ? json_string(pm->core_type == 0x40		? "P-core"
								: pm->core_type == 0x20 ? "E-core"
											: "other")
					  : json_null());
	json_object_set_new(o, "hybrid_pcore_extra", json_boolean(pm->hybrid_pcore_extra));
	json_object_set_new(o, "fixed_assumed", json_boolean(pm->fixed_assumed));
	json_object_set_new(o, "fast_read", json_boolean(pm->fast_read_arch));
	if (pm->model >= PMON_PERFMON_AMD_LEGACY)
		json_object_set_new(o, "amd",
				    json_pack("{s:b, s:b, s:b, s:b, s:i, s:i}", "perfctr_ext_core",
					      pm->amd_ext_core, "perfctr_ext_nb", pm->amd_ext_nb,
					      "perfctr_ext_llc", pm->amd_ext_llc, "perfmon_v2",
					      pm->amd_v2, "df_counters", (int)pm->amd_nb_count,
					      "umc_counters", (int)pm->amd_umc_count));
	return o;
}

static json_t *json_rdt(const struct pmon_cpu_info *ci)
{
	const struct pmon_rdt *r = &ci->rdt;
	json_t *o;

	o = json_pack("{s:b, s:b, s:b, s:b, s:b, s:I, s:I, s:I, s:i}", "pqm", r->pqm, "l3", r->l3,
		      "cmt", r->occupancy, "mbm_total", r->mbm_total, "mbm_local", r->mbm_local,
		      "max_rmid", (json_int_t)r->max_rmid, "l3_max_rmid",
		      (json_int_t)r->l3_max_rmid, "upscale", (json_int_t)r->upscale,
		      "counter_width", (int)r->counter_width);
	json_object_set_new(o, "rmid_bits", json_integer(r->rmid_bits));
	json_object_set_new(o, "counter_width_rule",
			    json_string(r->width_vendor_default ? (ci->id.vendor == PMON_VENDOR_AMD
									   ? "24+20 (AMD default)"
									   : "24+8 (Hygon default)")
								: "24+CPUID.(0FH,1):EAX[7:0]"));
	json_object_set_new(o, "erratum_mon_disabled", json_boolean(r->mon_erratum_disabled));
	/* What CPUID itself says, before the vendor default and the errata. */
	json_object_set_new(o, "cpuid",
			    json_pack("{s:i, s:b, s:b, s:b}", "counter_width",
				      r->leaf_0f_1 == PMON_LEAF_OK ? 24 + (int)r->width_offset : 0,
				      "cmt", r->cpuid_occupancy, "mbm_total", r->cpuid_mbm_total,
				      "mbm_local", r->cpuid_mbm_local));
	json_object_set_new(o, "mbm_correction",
			    r->mbm_cf_quirk ? json_pack("{s:I, s:f}", "rmid_threshold",
							(json_int_t)r->mbm_cf_rmid_threshold,
							"factor", (double)r->mbm_cf / 1048576.0)
					    : json_null());
	return o;
}

static json_t *json_tsc(const struct info *in)
{
	const struct pmon_cpu_info *ci = &in->ci;
	json_t *o;

	o = json_pack("{s:b, s:b, s:I, s:s}", "present", ci->tsc.tsc, "invariant",
		      ci->tsc.invariant, "hz", (json_int_t)in->tsc.hz, "source",
		      pmon_tsc_source_name(in->tsc.source));
	json_object_set_new(o, "crystal_hz", json_integer((json_int_t)ci->tsc_crystal_hz));
	json_object_set_new(o, "cpuid",
			    json_pack("{s:I, s:s, s:b}", "hz", (json_int_t)in->tsc.cpuid_hz,
				      "source", pmon_tsc_source_name(in->tsc.cpuid_source),
				      "derived", pmon_tsc_source_is_derived(in->tsc.cpuid_source)));
	json_object_set_new(o, "calibrated",
			    in->tsc.calibrated_hz ? json_pack("{s:I, s:i}", "hz",
							      (json_int_t)in->tsc.calibrated_hz,
							      "spread_ppm", (int)in->tsc.spread_ppm)
						  : json_null());
	json_object_set_new(
		o, "cross_check",
		in->tsc.compared
			? json_pack("{s:I, s:i, s:s}", "diff_ppm", (json_int_t)in->tsc.diff_ppm,
				    "tolerance_ppm", (int)in->tsc.tolerance_ppm, "winner",
				    in->tsc.source == PMON_TSC_HZ_CALIBRATED ? "calibrated"
									     : "cpuid")
			: json_null());
	return o;
}

/* The kernel's side and the clocks: facts of this machine, null for a dump. */
static void json_kernel(const struct info *in, json_t *root)
{
	json_t *o, *a;

	if (in->live) {
		const struct pmon_kernel_info *k = &in->k;
		json_t *pmus = json_array();
		for (size_t i = 0; i < k->npmus; i++)
			json_array_append_new(pmus,
					      json_pack("{s:s, s:i}", "name", k->pmus[i].name,
							"type", k->pmus[i].type));
		o = json_pack("{s:o, s:s?, s:o, s:i, s:b, s:b, s:b, s:b}", "pmus", pmus, "core_pmu",
			      k->core_pmu[0] ? k->core_pmu : NULL, "perf_event_paranoid",
			      k->paranoid == INT_MIN ? json_null() : json_integer(k->paranoid),
			      "rdpmc_mode", k->rdpmc_mode, "cap_user_rdpmc", k->cap_user_rdpmc,
			      "msr_dev", k->msr_dev, "cpuid_dev", k->cpuid_dev, "resctrl_mounted",
			      k->resctrl_mounted);
		a = json_array();
		for (size_t i = 0; i < k->ncore_pmus; i++)
			json_array_append_new(a, json_string(k->core_pmus[i].name));
		json_object_set_new(o, "core_pmus", a);
		json_object_set_new(root, "kernel", o);
		a = json_array();
		for (size_t i = 0; i < in->nclocks; i++)
			json_array_append_new(a,
					      json_pack("{s:s, s:I}", "name", in->clocks[i].name,
							"resolution_ns",
							(json_int_t)in->clocks[i].res_ns));
		json_object_set_new(root, "clocks", a);
		json_object_set_new(root, "clocksource", json_string(in->clocksource));
	} else {
		json_object_set_new(root, "kernel", json_null());
	}
}

static json_t *json_info(const struct info *in)
{
	const struct pmon_cpu_info *ci = &in->ci;
	json_t *root = json_object(), *o;

	json_object_set_new(root, "schema", json_string("pmon-info/1"));
	json_object_set_new(root, "source", json_string(in->source));
	json_object_set_new(root, "cpu",
			    json_pack("{s:s, s:s, s:i, s:i, s:i, s:s, s:I, s:I}", "vendor",
				      pmon_vendor_name(ci->id.vendor), "vendor_id",
				      ci->id.vendor_id, "family", (int)ci->id.family, "model",
				      (int)ci->id.model, "stepping", (int)ci->id.stepping, "brand",
				      ci->id.brand, "max_leaf", (json_int_t)ci->id.max_leaf,
				      "max_ext_leaf", (json_int_t)ci->id.max_ext_leaf));
	if (ci->id.hypervisor)
		json_object_set_new(root, "hypervisor",
				    json_pack("{s:s?, s:s}", "name", ci->id.hv_name, "signature",
					      ci->id.hv_signature));
	else
		json_object_set_new(root, "hypervisor", json_null());

	json_object_set_new(root, "perfmon", json_perfmon(ci));
	json_object_set_new(root, "rdt", json_rdt(ci));
	json_object_set_new(root, "tsc", json_tsc(in));
	if (ci->hybrid.leaf_1a == PMON_LEAF_OK && ci->hybrid.core_type)
		json_object_set_new(root, "hybrid",
				    json_pack("{s:i, s:s?}", "core_type", (int)ci->hybrid.core_type,
					      "name", pmon_core_type_name(ci->hybrid.core_type)));
	else
		json_object_set_new(root, "hybrid", json_null());

	json_kernel(in, root);
	o = json_object();
	for (int i = 0; i < PMON_VERDICT__COUNT; i++)
		json_object_set_new(o, in->v[i].key,
				    json_pack("{s:s, s:s}", "state",
					      pmon_verdict_state_name(in->v[i].state), "why",
					      in->v[i].why));
	json_object_set_new(root, "verdict", o);
	return root;
}

int cmd_info(int argc, char **argv)
{
	const char *file = NULL, *outpath = NULL;
	bool json = false;
	int cpu = -1;
	const struct cli_option options[] = {
		CLI_OPT_FLAG('j', "json", &json,
			     "machine-readable output (schema: docs/info-json.md)"),
		CLI_OPT_CPU('c', &cpu, "describe logical CPU N (hybrid parts: its core type)"),
		CLI_OPT_CPUID_FILE('f', &file,
				   "decode another machine's dump ('pmon cpuid' writes one)"),
		CLI_OPT_OUTPUT(&outpath, "FILE", "write to FILE instead of standard output"),
		CLI_OPT_END(),
	};
	struct pmon_cpuid *snap;
	struct info *in;
	FILE *out;
	int rc = cli_parse_options(
		"info", "usage: pmon info [--json] [--cpu N | --cpuid-file FILE] [-o FILE]",
		options, CLI_PARSE_STOP_AT_OPERAND | CLI_PARSE_NO_OPERANDS, argc, argv);

	if (rc <= 0)
		return -rc;
	rc = CLI_OK;
	snap = cli_cpuid_snapshot(file, cpu, &rc);
	if (!snap)
		return rc;
	in = calloc(1, sizeof(*in));
	if (!in) {
		pmon_cpuid__free(snap);
		cli_error("out of memory");
		return CLI_FAIL;
	}
	if (pmon_cpu_decode(snap, &in->ci)) {
		cli_error("%s", pmon_errdetail());
		rc = CLI_USAGE;
		goto out_free;
	}
	in->live = !file;
	in->source = file ? file : pmon_cpuid__source(snap);
	uint64_t cal_hz = 0;
	uint32_t spread = 0;
	if (in->live) {
		pmon_kernel_probe(NULL, &in->k);
		in->nclocks = pmon_clocks(in->clocks, sizeof(in->clocks) / sizeof(in->clocks[0]));
		if (pmon_clocksource(NULL, in->clocksource, sizeof(in->clocksource),
				     in->clocksources, sizeof(in->clocksources)))
			in->clocksource[0] = '\0';
		/* Calibrate where CPUID gives nothing or only a derivation;
		 * the library decides which figure wins. */
		if (in->ci.tsc.tsc &&
		    pmon_tsc_wants_calibration(in->ci.tsc.hz, in->ci.tsc.source) &&
		    pmon_tsc_calibrate(20, &cal_hz, &spread))
			cal_hz = 0;
	}
	pmon_tsc_choose(in->ci.tsc.hz, in->ci.tsc.source, cal_hz, spread, &in->tsc);
	pmon_verdicts(&in->ci, in->live ? &in->k : NULL, &in->tsc, in->v);

	out = cli_open_output(outpath);
	if (!out) {
		rc = CLI_USAGE; /* an output that cannot be written: docs/exit-codes.md */
		goto out_free;
	}
	if (json) {
		json_t *root = json_info(in);
		if (!root || json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER) ||
		    fputc('\n', out) == EOF)
			rc = CLI_FAIL;
		json_decref(root);
	} else {
		print_text(out, in);
	}
	if (outpath && out != stdout && cli_close_output(out, outpath) != CLI_OK)
		rc = CLI_FAIL;
out_free:
	free(in);
	pmon_cpuid__free(snap);
	return rc;
}
