// SPDX-License-Identifier: MIT
/*
 * Pure CPUID decoding (pmon/cpu.h): raw leaves in, facts out. Sources:
 * Intel SDM Vol. 2A (CPUID), Vol. 3B ch. 21 (architectural perfmon, leaves
 * 0AH and 23H) and 17.16-17.19 (RDT, leaves 07H/0FH/10H), Vol. 2B (RDPMC) for
 * the legacy counter models; AMD APM Vol. 3 (80000001H, 80000007H,
 * 80000022H) and AMD's PQoS spec (leaf 0FH on AMD uses Intel's layout).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include <pmon/cpu.h>

/* Row lookup that also reports whether the leaf is within its range. */
struct leafctx {
	const struct pmon_cpuid *c;
	uint32_t max_leaf, max_ext, max_hv;
};

static enum pmon_leaf_state leaf(const struct leafctx *x, uint32_t l, uint32_t sub,
				 struct pmon_cpuid_regs *r)
{
	uint32_t max = l >= 0x80000000 ? x->max_ext : l >= 0x40000000 ? x->max_hv : x->max_leaf;

	memset(r, 0, sizeof(*r));
	if (l > max || (l >= 0x80000000 && !x->max_ext) ||
	    (l >= 0x40000000 && l < 0x80000000 && !x->max_hv))
		return PMON_LEAF_NOT_ENUMERATED;
	return pmon_cpuid__get(x->c, l, sub, r) ? PMON_LEAF_ABSENT : PMON_LEAF_OK;
}

static void regs_str(char *dst, const uint32_t *w, int n)
{
	for (int i = 0; i < n; i++)
		memcpy(dst + 4 * i, &w[i], 4);
	dst[4 * n] = '\0';
}

/* Hypervisor signatures at CPUID 40000000H:EBX,ECX,EDX. */
static const struct {
	const char *sig, *name;
} hv_table[] = {
	{ "KVMKVMKVM", "KVM" },		 { "Linux KVM Hv", "KVM (Hyper-V interface)" },
	{ "Microsoft Hv", "Hyper-V" },	 { "VMwareVMware", "VMware" },
	{ "XenVMMXenVMM", "Xen" },	 { "TCGTCGTCGTCG", "QEMU TCG" },
	{ "bhyve bhyve ", "bhyve" },	 { "ACRNACRNACRN", "ACRN" },
	{ " lrpepyh  vr", "Parallels" }, { "VBoxVBoxVBox", "VirtualBox" },
	{ "QNXQVMBSQG", "QNX" },	 { "Jailhouse", "Jailhouse" },
};

/* Leaf 2 descriptors that name an L3 cache (SDM Vol. 2A, Table 3-12). */
static const uint8_t l3_descriptors[] = { 0x22, 0x23, 0x25, 0x29, 0x46, 0x47, 0x4a, 0x4b, 0x4c,
					  0x4d, 0xd0, 0xd1, 0xd2, 0xd6, 0xd7, 0xd8, 0xdc, 0xdd,
					  0xde, 0xe2, 0xe3, 0xe4, 0xea, 0xeb, 0xec };

static bool leaf2_has_l3(const struct pmon_cpuid_regs *r)
{
	uint32_t w[4] = { r->eax & ~0xffu, r->ebx, r->ecx, r->edx };

	for (int i = 0; i < 4; i++) {
		if (w[i] >> 31) /* bit 31 set: the register holds no descriptors */
			continue;
		for (int b = 0; b < 4; b++) {
			uint8_t d = (uint8_t)(w[i] >> (8 * b));
			for (size_t k = 0; d && k < sizeof(l3_descriptors); k++)
				if (d == l3_descriptors[k])
					return true;
		}
	}
	return false;
}

static void decode_ident(const struct leafctx *x, struct pmon_cpu_ident *id)
{
	struct pmon_cpuid_regs r;
	uint32_t w[4];

	pmon_cpuid__get(x->c, 0, 0, &r);
	w[0] = r.ebx, w[1] = r.edx, w[2] = r.ecx;
	regs_str(id->vendor_id, w, 3);
	id->max_leaf = r.eax;
	if (!strcmp(id->vendor_id, "GenuineIntel"))
		id->vendor = PMON_VENDOR_INTEL;
	else if (!strcmp(id->vendor_id, "AuthenticAMD"))
		id->vendor = PMON_VENDOR_AMD;
	else if (!strcmp(id->vendor_id, "HygonGenuine"))
		id->vendor = PMON_VENDOR_HYGON;

	/* Family/model/stepping, SDM Vol. 2A CPUID.01H: the extended family is
	 * added only when the base family is 0FH, the extended model when the
	 * base family is 06H or 0FH. */
	if (leaf(x, 1, 0, &r) == PMON_LEAF_OK) {
		unsigned fam = PMON_BITS(r.eax, 11, 8), mod = PMON_BITS(r.eax, 7, 4);

		id->signature = r.eax;
		id->stepping = PMON_BITS(r.eax, 3, 0);
		id->family = fam == 0xf ? fam + PMON_BITS(r.eax, 27, 20) : fam;
		id->model =
			(fam == 0x6 || fam == 0xf) ? mod | (PMON_BITS(r.eax, 19, 16) << 4) : mod;
		id->hypervisor = PMON_BIT(r.ecx, 31);
		id->pdcm = PMON_BIT(r.ecx, 15);
		id->mmx = PMON_BIT(r.edx, 23);
	}

	if (id->hypervisor) {
		struct pmon_cpuid_regs h;
		if (!pmon_cpuid__get(x->c, 0x40000000, 0, &h)) {
			w[0] = h.ebx, w[1] = h.ecx, w[2] = h.edx;
			regs_str(id->hv_signature, w, 3);
			id->hv_max_leaf = h.eax;
			for (size_t i = 0; i < PMON_ARRAY_SIZE(hv_table); i++)
				if (!strcmp(id->hv_signature, hv_table[i].sig))
					id->hv_name = hv_table[i].name;
		}
	}

	if (!pmon_cpuid__get(x->c, 0x80000000, 0, &r) && r.eax >= 0x80000000 && r.eax <= 0x800000ff)
		id->max_ext_leaf = r.eax;
	if (id->max_ext_leaf >= 0x80000001 && !pmon_cpuid__get(x->c, 0x80000001, 0, &r))
		id->long_mode = PMON_BIT(r.edx, 29);
	if (id->max_ext_leaf >= 0x80000004) {
		uint32_t b[12];
		for (int i = 0; i < 3; i++) {
			pmon_cpuid__get(x->c, 0x80000002 + (uint32_t)i, 0, &r);
			b[4 * i] = r.eax, b[4 * i + 1] = r.ebx, b[4 * i + 2] = r.ecx,
			      b[4 * i + 3] = r.edx;
		}
		char raw[49];
		regs_str(raw, b, 12);
		const char *p = raw;
		while (*p == ' ')
			p++;
		pmon__strlcpy(id->brand, p, sizeof(id->brand));
		for (size_t n = strlen(id->brand); n && id->brand[n - 1] == ' ';)
			id->brand[--n] = '\0';
	}

	/* L3: deterministic cache leaf 4 (level in EAX[7:5]), leaf 2
	 * descriptors, or AMD's 80000006H:EDX[31:18] (L3 size). */
	for (uint32_t s = 0; s < 16 && id->max_leaf >= 4; s++) {
		if (pmon_cpuid__get(x->c, 4, s, &r))
			break;
		if (PMON_BITS(r.eax, 4, 0) && PMON_BITS(r.eax, 7, 5) == 3)
			id->has_l3 = true;
	}
	if (!id->has_l3 && id->max_leaf >= 2 && !pmon_cpuid__get(x->c, 2, 0, &r))
		id->has_l3 = leaf2_has_l3(&r);
	if (!id->has_l3 && id->vendor != PMON_VENDOR_INTEL && id->max_ext_leaf >= 0x80000006 &&
	    !pmon_cpuid__get(x->c, 0x80000006, 0, &r))
		id->has_l3 = (r.edx >> 18) != 0;
}

static unsigned popcount64(uint64_t v)
{
	return (unsigned)__builtin_popcountll(v);
}

static void add_range(struct pmon_perfmon *pm, unsigned first, unsigned count, unsigned width,
		      bool fast, const char *what)
{
	if (pm->nranges < PMON_MAX_PMC_RANGES)
		pm->ranges[pm->nranges++] =
			(struct pmon_pmc_range){ first, count, width, fast, what };
}

/* Processors without architectural perfmon: the RDPMC seed's legacy rules. */
static void decode_legacy_intel(const struct pmon_cpu_ident *id, struct pmon_perfmon *pm)
{
	if (id->family == 5) {
		/* Pentium: CESR/CTR0/CTR1; RDPMC only on the Pentium with MMX
		 * technology (the tools note: "P55C or later"). */
		pm->model = PMON_PERFMON_INTEL_P5;
		pm->rdpmc_instruction = id->mmx;
		add_range(pm, 0, 2, 40, false, "CTR0/CTR1 (MSR 12H/13H)");
	} else if (id->family == 6) {
		/* Pentium Pro .. Pentium M: PerfCtr0/1, 40 bits (SDM Vol. 2B RDPMC). */
		pm->model = PMON_PERFMON_INTEL_P6;
		pm->rdpmc_instruction = true;
		add_range(pm, 0, 2, 40, false, "PerfCtr0/1");
	} else if (id->family == 0xf) {
		/* Pentium 4 / Xeon: 18 counters with fast (32-bit) and slow
		 * (40-bit) reads; on 64-bit Xeons with L3, indices 18-25 are
		 * 32-bit counters (SDM Vol. 2B RDPMC, 4-242). */
		pm->model = PMON_PERFMON_INTEL_NETBURST;
		pm->rdpmc_instruction = true;
		add_range(pm, 0, 18, 40, true, "ESCR-selected counters");
		if (id->long_mode && id->has_l3)
			add_range(pm, 18, 8, 32, false, "L3-Xeon 32-bit counters");
	}
	if (pm->nranges) {
		pm->gp_count = pm->ranges[0].count;
		pm->gp_mask = (1ULL << pm->gp_count) - 1;
		pm->gp_width = pm->ranges[0].width;
	}
}

static void decode_amd(const struct leafctx *x, const struct pmon_cpu_ident *id,
		       struct pmon_perfmon *pm, const char **why)
{
	struct pmon_cpuid_regs r;

	/* K7 and later: 4 core counters of 48 bits (AMD APM Vol. 2 13.2;
	 * Linux amd_pmu_init(): "Performance-monitoring supported from K7"). */
	if (id->family < 6) {
		*why = "AMD before the K7 (family < 6) has no performance counters";
		return;
	}
	if (leaf(x, 0x80000001, 0, &r) == PMON_LEAF_OK) {
		pm->amd_ext_core = PMON_BIT(r.ecx, 23);
		pm->amd_ext_nb = PMON_BIT(r.ecx, 24);
		pm->amd_ext_llc = PMON_BIT(r.ecx, 28);
	}
	/* Every AMD processor from family 15H (Bulldozer) on has the six
	 * PerfCtrExtCore counters; one that clears 80000001H:ECX[23] is a
	 * hypervisor hiding the PMU (a KVM guest without a vPMU), and the
	 * legacy K7 counters it would leave are not there either: Linux in
	 * such a guest registers no 'cpu' PMU. Issue #24's rule. */
	if (id->family >= 0x15 && !pm->amd_ext_core) {
		*why = "PerfCtrExtCore (CPUID.80000001H:ECX[23]) = 0 on family 15H or later: "
		       "every such AMD processor has it, so a hypervisor hid the PMU";
		return;
	}
	pm->model = PMON_PERFMON_AMD_LEGACY;
	pm->rdpmc_instruction = true;
	pm->gp_count = 4;
	pm->gp_width = 48;
	if (pm->amd_ext_core) {
		pm->model = PMON_PERFMON_AMD_EXT;
		pm->gp_count = 6;
	}
	/* 80000022H (PerfMonV2): EAX[0] PerfMonV2, EBX[3:0] core counters,
	 * EBX[9:4] LBR v2 depth, EBX[15:10] DF counters, EBX[21:16] UMC counters. */
	pm->leaf_amd_22 = leaf(x, 0x80000022, 0, &r);
	if (pm->leaf_amd_22 == PMON_LEAF_OK && PMON_BIT(r.eax, 0)) {
		pm->model = PMON_PERFMON_AMD_V2;
		pm->amd_v2 = true;
		if (PMON_BITS(r.ebx, 3, 0))
			pm->gp_count = PMON_BITS(r.ebx, 3, 0);
		pm->amd_lbr_v2_depth = PMON_BITS(r.ebx, 9, 4);
		pm->amd_nb_count = PMON_BITS(r.ebx, 15, 10);
		pm->amd_umc_count = PMON_BITS(r.ebx, 21, 16);
	}
	pm->gp_mask = (1ULL << pm->gp_count) - 1;
	/* RDPMC ECX on AMD (APM Vol. 3 RDPMC): 0-5 core, 6-9 DF/NB, 10-15 L3. */
	add_range(pm, 0, pm->gp_count, 48, false, "core PerfCtr");
	/* PerfMonV2 enumerates the DF counters in 80000022H:EBX[15:10] (16 on
	 * Genoa, Turin, 7950X, 9950X); counters 4 and up sit above the L3
	 * block: Linux arch/x86/events/amd/uncore.c amd_uncore_df_add() reads
	 * counter idx >= NUM_COUNTERS_NB (4) at RDPMC_BASE_NB + idx +
	 * NUM_COUNTERS_L3 (6), i.e. from 16 (amd_uncore_df_ctx_scan() takes
	 * the count from 80000022H when PerfMonV2, else 4). */
	unsigned ndf = !pm->amd_ext_nb ? 0 : pm->amd_v2 ? pm->amd_nb_count : 4;
	if (ndf)
		add_range(pm, 6, ndf < 4 ? ndf : 4, 48, false, "northbridge/DF PerfCtr");
	/* 80000001H:ECX[28] is PerfCtrExtLLC from family 17H and PerfCtrExtL2I
	 * before it: Linux amd_uncore init uses the L2 PMU below family 17H,
	 * NUM_COUNTERS_L2 = 4 at RDPMC_BASE_LLC (10), and the L3 PMU from 17H,
	 * NUM_COUNTERS_L3 = 6. */
	if (pm->amd_ext_llc) {
		if (id->family >= 0x17)
			add_range(pm, 10, 6, 48, false, "L3 PerfCtr");
		else
			add_range(pm, 10, 4, 48, false, "L2I PerfCtr");
	}
	if (ndf > 4)
		add_range(pm, 16, ndf - 4, 48, false, "DF PerfCtr 4 and up");
}

/* Hybrid parts without leaf 23H whose 0AH reports the counters common to
 * both core types (the Gracemont E-core's 6 GP and 3 fixed): Alder Lake and
 * Raptor Lake (Linux intel_pmu_init() "case INTEL_ALDERLAKE ... RAPTORLAKE").
 * With the E-cores disabled in the BIOS 07H:EDX[15] may stay set while 0AH
 * reports the P-core's full 8 and 4 (the ecores-off dump; Kan Liang's "Fix
 * fixed counter check warning for some ADL"): only the subset is widened. */
static const struct {
	unsigned model, gp, fixed;
} hybrid_subset[] = {
	{ 0x97, 6, 3 }, { 0x9a, 6, 3 }, /* Alder Lake S, P */
	{ 0xb7, 6, 3 }, { 0xba, 6, 3 }, { 0xbf, 6, 3 }, /* Raptor Lake S, P, S-refresh */
};

static bool hybrid_0a_is_subset(const struct pmon_cpu_ident *id, const struct pmon_perfmon *pm)
{
	if (id->family != 6)
		return false;
	for (size_t i = 0; i < PMON_ARRAY_SIZE(hybrid_subset); i++)
		if (hybrid_subset[i].model == id->model && hybrid_subset[i].gp == pm->gp_count_0a &&
		    hybrid_subset[i].fixed == pm->fixed_count_0a)
			return true;
	return false;
}

/* Intel with CPUID.0AH:EAX[7:0] = 0 (or no leaf 0AH): no architectural
 * perfmon, a VM hiding the PMU, or a legacy (P6, NetBurst) model. */
static void decode_intel_no_arch(const struct pmon_cpu_ident *id, struct pmon_cpu_info *ci)
{
	struct pmon_perfmon *pm = &ci->pm;

	/* CPUID.0AH:EAX[7:0] = 0 (or no leaf 0AH): no architectural
	 * perfmon. A VM that hides the PMU looks like this too; for a
	 * family-6 CPU with leaf 0AH present that is the only reading.
	 * Only family 0FH is NetBurst (SDM Vol. 3B 21.6.3 "Pentium 4 and
	 * Intel Xeon processors"); every later family (10H and up, e.g.
	 * 13H) has architectural perfmon, so version 0 there means none,
	 * never 18 ESCR counters RDPMC would be said to accept. */
	if (pm->leaf_0a == PMON_LEAF_OK && id->family == 6) {
		ci->pm_none_why = "CPUID.0AH:EAX[7:0] = 0: no architectural perfmon (a VM "
				  "that hides the PMU reads so)";
		return;
	}
	if (id->family > 0xf) {
		ci->pm_none_why = "CPUID.0AH:EAX[7:0] = 0 on family 10H or later: only "
				  "family 0FH is NetBurst, so no counters";
		return;
	}
	/* Family 0FH is NetBurst only on a real Pentium 4 / Xeon:
	 * those report a maximum basic leaf of at most 6, so an
	 * enumerated leaf 0AH, or the hypervisor bit, means a virtual
	 * CPU model such as QEMU's kvm64 (family 0FH model 6, max leaf
	 * 0DH). Linux finds no NetBurst PMU there either: p4_pmu_init()
	 * "unsupported Netburst CPU model 6" (IA32_MISC_ENABLE[7] clear),
	 * "no PMU driver". Issue #24's rule. */
	if (id->family == 0xf && id->hypervisor) {
		ci->pm_none_why = "family 0FH under a hypervisor (CPUID.01H:ECX[31] = 1): "
				  "a virtual CPU model such as QEMU's kvm64, not a Pentium "
				  "4; Linux: 'unsupported Netburst CPU model', no PMU driver";
		return;
	}
	if (id->family == 0xf && pm->leaf_0a != PMON_LEAF_NOT_ENUMERATED) {
		ci->pm_none_why = "family 0FH enumerating leaf 0AH with CPUID.0AH:EAX[7:0] "
				  "= 0: real Pentium 4s report a maximum leaf of at most 6, "
				  "so this is no NetBurst PMU";
		return;
	}
	decode_legacy_intel(id, pm);
	if (pm->model == PMON_PERFMON_NONE)
		ci->pm_none_why = "no architectural perfmon (CPUID.0AH) and no legacy "
				  "counter model for this family";
	return;
}

/* Architectural perfmon from leaf 0AH (@r: its registers), SDM Vol. 3B
 * 21.2 and Vol. 2A CPUID.0AH. */
static void decode_intel_0a(const struct pmon_cpu_ident *id, const struct pmon_cpuid_regs *r0,
			    struct pmon_perfmon *pm)
{
	const struct pmon_cpuid_regs r = *r0;

	pm->model = PMON_PERFMON_INTEL_ARCH;
	pm->rdpmc_instruction = true;
	pm->gp_count_0a = PMON_BITS(r.eax, 15, 8);
	pm->gp_width = PMON_BITS(r.eax, 23, 16);
	pm->ebx_length = PMON_BITS(r.eax, 31, 24);
	pm->ebx_unavailable = r.ebx;
	pm->fixed_mask_0a = r.ecx;
	if (pm->version > 1) {
		/* EDX[4:0] fixed counters, EDX[12:5] their width, EDX[15]
		 * AnyThread deprecation; bits 13, 14 and 16-31 are reserved. */
		pm->fixed_count_0a = PMON_BITS(r.edx, 4, 0);
		pm->fixed_width = PMON_BITS(r.edx, 12, 5);
		pm->anythread_deprecated = PMON_BIT(r.edx, 15);
		pm->edx_reserved = r.edx & ~0x9fffu;
	} else {
		pm->edx_reserved = r.edx; /* version 1: all of EDX is reserved */
	}
	pm->gp_count = pm->gp_count_0a;
	pm->gp_mask = pm->gp_count >= 64 ? ~0ULL : (1ULL << pm->gp_count) - 1;
	/* Fixed counter x exists if EDX[4:0] > x or ECX[x] = 1 (SDM RDPMC): a
	 * mask, not a count. */
	pm->fixed_mask = pm->fixed_mask_0a;
	if (pm->fixed_count_0a)
		pm->fixed_mask |= pm->fixed_count_0a >= 32 ? ~0u : (1u << pm->fixed_count_0a) - 1;
	/* Disputed point (issue 13), decided for Linux: v2-v4 parts that read
	 * EDX[4:0] < 3 outside a hypervisor have the 3 fixed counters anyway
	 * (intel_pmu_init(): num_counters_fixed = max(EDX[4:0], 3 *
	 * !X86_FEATURE_HYPERVISOR)); a hypervisor's 0 or 1 is believed. */
	if (pm->version >= 2 && pm->version <= 4 && pm->fixed_count_0a < 3 && !id->hypervisor) {
		pm->fixed_assumed = true;
		pm->fixed_mask |= 0x7;
		if (!pm->fixed_width)
			pm->fixed_width = pm->gp_width; /* EDX[12:5] is 0 there too */
	}
	/* SDM Vol. 2B RDPMC, "Intel Core 2 Duo processor family ... / Intel
	 * Core Solo and Intel Core Duo processors" operation: ECX[31] selects
	 * a 32-bit read of ECX[30:0]'s counter. */
	if (id->family == 6 &&
	    (id->model == 0x0e || id->model == 0x0f || id->model == 0x16 || id->model == 0x17 ||
	     id->model == 0x1d))
		pm->fast_read_arch = true;
	for (unsigned e = 0; e < PMON_ARCH_EVENT__COUNT && e < pm->ebx_length; e++)
		if (!PMON_BIT(r.ebx, e))
			pm->arch_events |= 1u << e;
}

/* What leaf 23H and the hybrid rules change of leaf 0AH's description. */
static void decode_intel_ext(const struct leafctx *x, struct pmon_cpu_info *ci)
{
	const struct pmon_hybrid *hy = &ci->hybrid;
	const struct pmon_cpu_ident *id = &ci->id;
	struct pmon_perfmon *pm = &ci->pm;
	struct pmon_cpuid_regs r;

	/* Leaf 23H (architectural perfmon extended leaf): per core type, and on
	 * hybrid parts the only complete description; it wins over 0AH. */
	if (pm->leaf_23 == PMON_LEAF_OK) {
		leaf(x, 0x23, 0, &r);
		pm->subleaves_23 = r.eax;
		pm->umask2 = PMON_BIT(r.ebx, 0);
		pm->eq_bit = PMON_BIT(r.ebx, 1);
		pm->rdpmc_user_disable = PMON_BIT(r.ebx, 2);
		pm->topdown_slots = PMON_BITS(r.ecx, 7, 0);
		if (PMON_BIT(pm->subleaves_23, 1) && !pmon_cpuid__get(x->c, 0x23, 1, &r)) {
			pm->gp_mask = r.eax;
			pm->fixed_mask = r.ebx;
		}
		if (PMON_BIT(pm->subleaves_23, 3) && !pmon_cpuid__get(x->c, 0x23, 3, &r))
			pm->arch_events = r.eax & ((1u << PMON_ARCH_EVENT__COUNT) - 1);
	}
	if (hy->hybrid && hy->leaf_1a == PMON_LEAF_OK)
		pm->core_type = hy->core_type;
	/* Hybrid P-core without leaf 23H: 0AH reports the E-core's subset
	 * (Alder/Raptor Lake: 6 GP, 3 fixed); the Golden Cove core has two GP
	 * and one fixed counter more -- Linux intel_pmu_init() sets cpu_core's
	 * num_counters = 0AH + 2, num_counters_fixed = 0AH + 1 when
	 * X86_FEATURE_HYBRID_CPU. The same chip with its E-cores disabled
	 * enumerates exactly that (8 GP, 4 fixed). */
	ci->hybrid_0a_subset =
		hy->hybrid && pm->leaf_23 != PMON_LEAF_OK && hybrid_0a_is_subset(id, pm);
	if (ci->hybrid_0a_subset && pm->core_type == 0x40) {
		pm->hybrid_pcore_extra = true;
		pm->gp_mask = (1ULL << (pm->gp_count_0a + 2)) - 1;
		if (pm->fixed_count_0a < 31)
			pm->fixed_mask |= (1u << (pm->fixed_count_0a + 1)) - 1;
	}
	pm->gp_count = popcount64(pm->gp_mask);
	pm->fixed_count = popcount64(pm->fixed_mask);
}

static void decode_perfmon(const struct leafctx *x, struct pmon_cpu_info *ci)
{
	const struct pmon_cpu_ident *id = &ci->id;
	struct pmon_perfmon *pm = &ci->pm;
	struct pmon_cpuid_regs r;

	pm->leaf_0a = leaf(x, 0x0a, 0, &r);
	/* Leaf 23H is read only where CPUID.(07H,1):EAX[8] ArchPerfmonExt
	 * says it exists (SDM Vol. 2A CPUID.07H.1; Linux gates every read of
	 * ARCH_PERFMON_EXT_LEAF on X86_FEATURE_ARCH_PERFMON_EXT): a maximum
	 * leaf of 23H or more alone does not enumerate it. Sub-leaf 1 of 07H
	 * exists when 07H.0:EAX (the highest sub-leaf) is at least 1. */
	ci->leaf_07_1 = PMON_LEAF_NOT_ENUMERATED;
	if (leaf(x, 7, 0, &r) == PMON_LEAF_OK && r.eax >= 1)
		ci->leaf_07_1 = leaf(x, 7, 1, &r);
	ci->arch_perfmon_ext = ci->leaf_07_1 == PMON_LEAF_OK && PMON_BIT(r.eax, 8);
	pm->leaf_23 = leaf(x, 0x23, 0, &r);
	if (pm->leaf_23 != PMON_LEAF_NOT_ENUMERATED && !ci->arch_perfmon_ext) {
		ci->leaf_23_ignored = pm->leaf_23 == PMON_LEAF_OK;
		pm->leaf_23 = PMON_LEAF_NOT_ENUMERATED;
	}
	pm->leaf_amd_22 = PMON_LEAF_NOT_ENUMERATED;
	pm->perf_capabilities = id->pdcm;

	if (id->vendor == PMON_VENDOR_AMD || id->vendor == PMON_VENDOR_HYGON) {
		/* AMD reads 0AH as zero; its counters are described elsewhere. */
		if (pm->leaf_0a == PMON_LEAF_OK) {
			leaf(x, 0x0a, 0, &r);
			pm->raw_0a[0] = r.eax, pm->raw_0a[1] = r.ebx;
			pm->raw_0a[2] = r.ecx, pm->raw_0a[3] = r.edx;
		}
		decode_amd(x, id, pm, &ci->pm_none_why);
		return;
	}
	if (id->vendor != PMON_VENDOR_INTEL) {
		ci->pm_none_why = "neither Intel, AMD nor Hygon: pmon knows no counter model for "
				  "this vendor";
		return;
	}

	if (pm->leaf_0a == PMON_LEAF_OK) {
		leaf(x, 0x0a, 0, &r);
		pm->raw_0a[0] = r.eax, pm->raw_0a[1] = r.ebx;
		pm->raw_0a[2] = r.ecx, pm->raw_0a[3] = r.edx;
		pm->version = PMON_BITS(r.eax, 7, 0);
	}
	if (pm->version == 0) {
		decode_intel_no_arch(id, ci);
		return;
	}
	decode_intel_0a(id, &r, pm);
	decode_intel_ext(x, ci);
}

/* Linux arch/x86/kernel/cpu/resctrl/monitor.c mbm_cf_table: indexed by
 * (max RMID + 1) / 8 - 1; RMIDs above the threshold are multiplied by the
 * factor, given here x 2^20 as Linux's CF() macro rounds it. */
#define CF(cf) ((uint64_t)(1048576 * (cf) + 0.5))
static const struct {
	uint32_t rmid_threshold;
	uint64_t cf;
} mbm_cf_table[] = {
	{ 7, CF(1.000000) },   { 15, CF(1.000000) },  { 15, CF(0.969650) },  { 31, CF(1.000000) },
	{ 31, CF(1.066667) },  { 31, CF(0.969650) },  { 47, CF(1.142857) },  { 63, CF(1.000000) },
	{ 63, CF(1.185115) },  { 63, CF(1.066553) },  { 79, CF(1.454545) },  { 95, CF(1.000000) },
	{ 95, CF(1.230769) },  { 95, CF(1.142857) },  { 95, CF(1.066667) },  { 127, CF(1.000000) },
	{ 127, CF(1.254863) }, { 127, CF(1.185255) }, { 151, CF(1.000000) }, { 127, CF(1.066667) },
	{ 167, CF(1.000000) }, { 159, CF(1.454334) }, { 183, CF(1.000000) }, { 127, CF(0.969744) },
	{ 191, CF(1.280246) }, { 191, CF(1.230921) }, { 215, CF(1.000000) }, { 191, CF(1.143118) },
};
#undef CF

/* ceil(log2(n)), n >= 1 */
static unsigned ceil_log2(uint64_t n)
{
	unsigned b = 0;

	while (b < 64 && (1ULL << b) < n)
		b++;
	return b;
}

static void rdt_errata(const struct pmon_cpu_ident *id, struct pmon_rdt *rdt)
{
	bool skx = id->model == 0x55, bdx = id->model == 0x4f;

	/* __check_quirks_intel(): INTEL_SKYLAKE_X stepping <= 4 sets
	 * "!cmt,!mbmtotal,!mbmlocal"; SKYLAKE_X (Cascade Lake too: same
	 * model) and BROADWELL_X apply intel_rdt_mbm_apply_quirk(). */
	if (id->vendor != PMON_VENDOR_INTEL || id->family != 6 || !(skx || bdx))
		return;
	if (skx && id->stepping <= 4) {
		rdt->mon_erratum_disabled = true;
		rdt->occupancy = rdt->mbm_total = rdt->mbm_local = false;
	}
	if (rdt->leaf_0f_1 == PMON_LEAF_OK) {
		uint32_t idx = (rdt->l3_max_rmid + 1) / 8;

		/* intel_rdt_mbm_apply_quirk(): x86_cache_max_rmid is 0FH.1:ECX */
		/* A threshold at the last RMID (or a factor of 1) corrects
		 * nothing: only report a correction that changes a count. */
		if (idx >= 1 && idx - 1 < PMON_ARRAY_SIZE(mbm_cf_table) &&
		    mbm_cf_table[idx - 1].rmid_threshold < rdt->l3_max_rmid &&
		    mbm_cf_table[idx - 1].cf != 1048576) {
			rdt->mbm_cf_quirk = true;
			rdt->mbm_cf_rmid_threshold = mbm_cf_table[idx - 1].rmid_threshold;
			rdt->mbm_cf = mbm_cf_table[idx - 1].cf;
		}
	}
}

uint64_t pmon_rdt_mbm_correct(const struct pmon_rdt *r, unsigned rmid, uint64_t bytes)
{
	if (!r || !r->mbm_cf_quirk || rmid <= r->mbm_cf_rmid_threshold)
		return bytes;
	/* get_corrected_mbm_count(): (val * mbm_cf) >> 20, in 128 bits so a
	 * large count cannot overflow. */
	return (uint64_t)(((unsigned __int128)bytes * r->mbm_cf) >> 20);
}

static void decode_rdt(const struct leafctx *x, const struct pmon_cpu_ident *id,
		       struct pmon_rdt *rdt)
{
	struct pmon_cpuid_regs r;

	/* The CMT/MBM seed's enumeration, steps 1-5 (SDM Vol. 3B 17.16.3). */
	rdt->max_leaf = x->max_leaf; /* step 1 */
	rdt->leaf_0f = rdt->leaf_0f_1 = rdt->leaf_10 = PMON_LEAF_NOT_ENUMERATED;
	if (leaf(x, 7, 0, &r) != PMON_LEAF_OK) /* step 2 */
		return;
	rdt->pqm = PMON_BIT(r.ebx, 12);
	rdt->pqe = PMON_BIT(r.ebx, 15);
	if (rdt->pqm) {
		rdt->leaf_0f = leaf(x, 0x0f, 0, &r); /* step 3 */
		if (rdt->leaf_0f == PMON_LEAF_OK) {
			rdt->max_rmid = r.ebx;
			/* SDM 17.16.6: the RMID field of IA32_PQR_ASSOC is
			 * ceil(log2(1 + CPUID.(0FH,0):EBX[31:0])) bits wide. */
			rdt->rmid_bits = ceil_log2((uint64_t)r.ebx + 1);
			rdt->resources = r.edx;
			rdt->l3 = PMON_BIT(r.edx, 1);
			rdt->other_resources = r.edx & ~0x3u; /* step 5 */
		}
		if (rdt->l3) { /* step 4 */
			rdt->leaf_0f_1 = leaf(x, 0x0f, 1, &r);
			if (rdt->leaf_0f_1 == PMON_LEAF_OK) {
				/* SDM 17.16.3: width = 24 + EAX[7:0]. AMD and Hygon
				 * report 0 on parts whose counters are 44 and 32
				 * bits: Linux resctrl_cpu_detect() then uses
				 * MBM_CNTR_WIDTH_OFFSET_AMD (20) / _HYGON (8). */
				rdt->width_offset = PMON_BITS(r.eax, 7, 0);
				rdt->counter_width = 24 + rdt->width_offset;
				if (!rdt->width_offset &&
				    (id->vendor == PMON_VENDOR_AMD ||
				     id->vendor == PMON_VENDOR_HYGON)) {
					rdt->width_vendor_default = true;
					rdt->counter_width +=
						id->vendor == PMON_VENDOR_AMD ? 20 : 8;
				}
				rdt->overflow_bit = PMON_BIT(r.eax, 8);
				rdt->upscale = r.ebx;
				rdt->l3_max_rmid = r.ecx;
				rdt->occupancy = PMON_BIT(r.edx, 0);
				rdt->mbm_total = PMON_BIT(r.edx, 1);
				rdt->mbm_local = PMON_BIT(r.edx, 2);
				rdt->cpuid_occupancy = rdt->occupancy;
				rdt->cpuid_mbm_total = rdt->mbm_total;
				rdt->cpuid_mbm_local = rdt->mbm_local;
			}
		}
		rdt_errata(id, rdt);
	}
	/* Allocation (leaf 10H), informational. */
	if (!rdt->pqe)
		return;
	rdt->leaf_10 = leaf(x, 0x10, 0, &r);
	if (rdt->leaf_10 != PMON_LEAF_OK)
		return;
	rdt->l3_cat = PMON_BIT(r.ebx, 1);
	rdt->l2_cat = PMON_BIT(r.ebx, 2);
	rdt->mba = PMON_BIT(r.ebx, 3);
	rdt->leaf_10_1 = rdt->leaf_10_2 = rdt->leaf_10_3 = PMON_LEAF_NOT_ENUMERATED;
	if (rdt->l3_cat)
		rdt->leaf_10_1 = leaf(x, 0x10, 1, &r);
	if (rdt->leaf_10_1 == PMON_LEAF_OK) {
		rdt->l3_cbm_len = PMON_BITS(r.eax, 4, 0) + 1;
		rdt->l3_cdp = PMON_BIT(r.ecx, 2);
		rdt->l3_cos_max = PMON_BITS(r.edx, 15, 0);
	}
	if (rdt->l2_cat)
		rdt->leaf_10_2 = leaf(x, 0x10, 2, &r);
	if (rdt->leaf_10_2 == PMON_LEAF_OK) {
		rdt->l2_cbm_len = PMON_BITS(r.eax, 4, 0) + 1;
		rdt->l2_cos_max = PMON_BITS(r.edx, 15, 0);
	}
	if (rdt->mba)
		rdt->leaf_10_3 = leaf(x, 0x10, 3, &r);
	if (rdt->leaf_10_3 == PMON_LEAF_OK) {
		rdt->mba_max = PMON_BITS(r.eax, 11, 0) + 1;
		rdt->mba_linear = PMON_BIT(r.ecx, 2);
		rdt->mba_cos_max = PMON_BITS(r.edx, 15, 0);
	}
}

/* SDM Vol. 3B, "Determining the Processor Base Frequency" table: nominal
 * core crystal clock for processors whose CPUID.15H:ECX reads 0. Used only
 * where leaf 16H is absent: Linux's native_calibrate_tsc()
 * (arch/x86/kernel/tsc.c) replaced its model table by the 16H derivation,
 * and had already dropped Skylake-X (55H) from it, whose workstation parts
 * run a 24 MHz crystal, not the 25 MHz of the Xeon Scalable row ("x86/tsc:
 * Fix erroneous TSC rate on Skylake Xeon"): 55H is not here. */
static const struct {
	unsigned model;
	uint32_t hz;
} nominal_crystal[] = {
	{ 0x4e, 24000000 }, { 0x5e, 24000000 }, /* 6th gen Core (Skylake) */
	{ 0x8e, 24000000 }, { 0x9e, 24000000 }, /* 7th/8th gen Core (Kaby/Coffee Lake) */
	{ 0x5c, 19200000 }, /* Atom Goldmont */
};

static void decode_tsc(const struct leafctx *x, const struct pmon_cpu_ident *id, struct pmon_tsc *t,
		       uint32_t *crystal_hz)
{
	struct pmon_cpuid_regs r;

	if (leaf(x, 1, 0, &r) == PMON_LEAF_OK)
		t->tsc = PMON_BIT(r.edx, 4);
	if (leaf(x, 0x80000001, 0, &r) == PMON_LEAF_OK)
		t->rdtscp = PMON_BIT(r.edx, 27);
	if (leaf(x, 0x80000007, 0, &r) == PMON_LEAF_OK)
		t->invariant = PMON_BIT(r.edx, 8);

	t->leaf_16 = leaf(x, 0x16, 0, &r);
	if (t->leaf_16 == PMON_LEAF_OK) {
		t->base_mhz = PMON_BITS(r.eax, 15, 0);
		t->max_mhz = PMON_BITS(r.ebx, 15, 0);
		t->bus_mhz = PMON_BITS(r.ecx, 15, 0);
	}
	t->leaf_hv = leaf(x, 0x40000010, 0, &r);
	if (t->leaf_hv == PMON_LEAF_OK) {
		t->hv_tsc_khz = r.eax;
		t->hv_bus_khz = r.ebx;
	}
	t->leaf_15 = leaf(x, 0x15, 0, &r);
	if (t->leaf_15 == PMON_LEAF_OK) {
		t->denominator = r.eax;
		t->numerator = r.ebx;
		t->crystal_hz = r.ecx;
	}

	/* TSC Hz = crystal * EBX / EAX (SDM Vol. 2A, CPUID.15H). */
	if (t->denominator && t->numerator && t->crystal_hz) {
		t->hz = (uint64_t)t->crystal_hz * t->numerator / t->denominator;
		t->source = PMON_TSC_HZ_LEAF15;
		*crystal_hz = t->crystal_hz;
		return;
	}
	if (t->hv_tsc_khz) {
		t->hz = (uint64_t)t->hv_tsc_khz * 1000;
		t->source = PMON_TSC_HZ_HYPERVISOR;
		return;
	}
	/* 15H:ECX = 0: Linux native_calibrate_tsc() (Intel only) hard-codes
	 * Denverton's 25 MHz, else derives the crystal from 16H's base
	 * frequency, in its integer kHz: crystal_khz = base_mhz * 1000 *
	 * EAX / EBX, TSC kHz = crystal_khz * EBX / EAX. */
	if (!t->denominator || !t->numerator || id->vendor != PMON_VENDOR_INTEL)
		return;
	uint64_t crystal_khz = 0;
	if (id->family == 6 && id->model == 0x5f) { /* INTEL_ATOM_GOLDMONT_D */
		crystal_khz = 25000;
		t->source = PMON_TSC_HZ_LEAF15_DENVERTON;
	} else if (t->leaf_16 == PMON_LEAF_OK) {
		/* 16H enumerated: Linux uses it whatever it says (a base of 0
		 * gives no figure); the nominal table is not consulted. */
		crystal_khz = (uint64_t)t->base_mhz * 1000 * t->denominator / t->numerator;
		t->source = PMON_TSC_HZ_LEAF15_16;
	} else if (id->family == 6) {
		for (size_t i = 0; i < PMON_ARRAY_SIZE(nominal_crystal); i++)
			if (nominal_crystal[i].model == id->model) {
				crystal_khz = nominal_crystal[i].hz / 1000;
				t->source = PMON_TSC_HZ_LEAF15_NOMINAL;
			}
	}
	if (!crystal_khz || crystal_khz > UINT32_MAX / 1000) {
		t->source = PMON_TSC_HZ_NONE;
		return;
	}
	*crystal_hz = (uint32_t)crystal_khz * 1000;
	t->hz = crystal_khz * t->numerator / t->denominator * 1000;
}

static void decode_hybrid(const struct leafctx *x, struct pmon_hybrid *h)
{
	struct pmon_cpuid_regs r;

	if (leaf(x, 7, 0, &r) == PMON_LEAF_OK)
		h->hybrid = PMON_BIT(r.edx, 15);
	h->leaf_1a = leaf(x, 0x1a, 0, &r);
	if (h->leaf_1a == PMON_LEAF_OK) {
		h->core_type = PMON_BITS(r.eax, 31, 24);
		h->native_model = r.eax & 0xffffffu;
	}
}

/* The size of struct pmon_cpu_info in its first release (0.1): every
 * caller's is at least this. A field added later goes at the end, and
 * pm_none_why was the first of them. */
#define CPU_INFO_SZ_V1 offsetof(struct pmon_cpu_info, pm_none_why)

static int decode_full(const struct pmon_cpuid *c, struct pmon_cpu_info *out);

int pmon_cpu_decode_sized(const struct pmon_cpuid *c, struct pmon_cpu_info *out, size_t out_sz)
{
	if (out_sz == sizeof(*out))
		return decode_full(c, out);
	if (out_sz < CPU_INFO_SZ_V1)
		return pmon__err(-EINVAL, "struct pmon_cpu_info: size %zu unknown (at least %zu)",
				 out_sz, CPU_INFO_SZ_V1);
	struct pmon_cpu_info *full = malloc(sizeof(*full));
	if (!full)
		return -ENOMEM;
	int err = decode_full(c, full);
	pmon__copy_out(out, out_sz, full, sizeof(*full));
	free(full);
	return err;
}

int(pmon_cpu_decode)(const struct pmon_cpuid *c, struct pmon_cpu_info *out)
{
	return decode_full(c, out);
}

static int decode_full(const struct pmon_cpuid *c, struct pmon_cpu_info *out)
{
	struct pmon_cpuid_regs r;
	struct leafctx x = { .c = c };

	memset(out, 0, sizeof(*out));
	if (!c || pmon_cpuid__get(c, 0, 0, &r))
		return pmon__err(-EINVAL, "%s: no leaf 0: nothing to decode",
				 c ? pmon_cpuid__source(c) : "(null)");
	/* Ranges first: every other leaf is read through them. */
	x.max_leaf = r.eax;
	if (!pmon_cpuid__get(c, 0x80000000, 0, &r) && r.eax >= 0x80000000 && r.eax <= 0x800000ff)
		x.max_ext = r.eax;
	decode_ident(&x, &out->id);
	if (out->id.hypervisor) {
		uint32_t m = out->id.hv_max_leaf;
		/* KVM once reported 0 here, meaning 40000001H (Linux's kvm_cpuid_base). */
		x.max_hv = m >= 0x40000000 && m <= 0x400000ff ? m : 0x40000000;
	}
	decode_hybrid(&x, &out->hybrid);
	decode_perfmon(&x, out);
	/* A guest's CPUID describes the virtual CPU the hypervisor offers;
	 * whether it also backs the counters only the guest kernel learns
	 * (by probing them), never CPUID. */
	out->pm_hv_unverifiable = out->id.hypervisor && out->pm.model != PMON_PERFMON_NONE;
	decode_rdt(&x, &out->id, &out->rdt);
	decode_tsc(&x, &out->id, &out->tsc, &out->tsc_crystal_hz);
	return 0;
}
