// SPDX-License-Identifier: MIT
/*
 * Pure CPUID decoding (pmon/cpu.h): raw leaves in, facts out. Sources:
 * Intel SDM Vol. 2A (CPUID), Vol. 3B ch. 21 (architectural perfmon, leaves
 * 0AH and 23H) and 17.16-17.19 (RDT, leaves 07H/0FH/10H), Vol. 2B (RDPMC) for
 * the legacy counter models; AMD APM Vol. 3 (80000001H, 80000007H,
 * 80000022H) and AMD's PQoS spec (leaf 0FH on AMD uses Intel's layout).
 */
#include <errno.h>
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
	} else if (id->family >= 0xf) {
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
		       struct pmon_perfmon *pm)
{
	struct pmon_cpuid_regs r;

	/* K7 and later: 4 core counters of 48 bits (AMD APM Vol. 2 13.2). */
	if (id->family < 6)
		return;
	pm->model = PMON_PERFMON_AMD_LEGACY;
	pm->rdpmc_instruction = true;
	pm->gp_count = 4;
	pm->gp_width = 48;
	if (leaf(x, 0x80000001, 0, &r) == PMON_LEAF_OK) {
		pm->amd_ext_core = PMON_BIT(r.ecx, 23);
		pm->amd_ext_nb = PMON_BIT(r.ecx, 24);
		pm->amd_ext_llc = PMON_BIT(r.ecx, 28);
	}
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
	if (pm->amd_ext_nb)
		add_range(pm, 6, 4, 48, false, "northbridge/DF PerfCtr");
	if (pm->amd_ext_llc)
		add_range(pm, 10, 6, 48, false, "L3 PerfCtr");
}

static void decode_perfmon(const struct leafctx *x, const struct pmon_cpu_ident *id,
			   struct pmon_perfmon *pm)
{
	struct pmon_cpuid_regs r;

	pm->leaf_0a = leaf(x, 0x0a, 0, &r);
	pm->leaf_23 = leaf(x, 0x23, 0, &r);
	pm->leaf_amd_22 = PMON_LEAF_NOT_ENUMERATED;
	pm->perf_capabilities = id->pdcm;

	if (id->vendor == PMON_VENDOR_AMD || id->vendor == PMON_VENDOR_HYGON) {
		/* AMD reads 0AH as zero; its counters are described elsewhere. */
		if (pm->leaf_0a == PMON_LEAF_OK) {
			leaf(x, 0x0a, 0, &r);
			pm->raw_0a[0] = r.eax, pm->raw_0a[1] = r.ebx;
			pm->raw_0a[2] = r.ecx, pm->raw_0a[3] = r.edx;
		}
		decode_amd(x, id, pm);
		return;
	}
	if (id->vendor != PMON_VENDOR_INTEL)
		return;

	if (pm->leaf_0a == PMON_LEAF_OK) {
		leaf(x, 0x0a, 0, &r);
		pm->raw_0a[0] = r.eax, pm->raw_0a[1] = r.ebx;
		pm->raw_0a[2] = r.ecx, pm->raw_0a[3] = r.edx;
		pm->version = PMON_BITS(r.eax, 7, 0);
	}
	if (pm->version == 0) {
		/* CPUID.0AH:EAX[7:0] = 0 (or no leaf 0AH): no architectural
		 * perfmon. A VM that hides the PMU looks like this too; for a
		 * family-6 CPU with leaf 0AH present that is the only reading. */
		if (pm->leaf_0a == PMON_LEAF_OK && id->family == 6)
			return;
		decode_legacy_intel(id, pm);
		return;
	}

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
	for (unsigned e = 0; e < PMON_ARCH_EVENT__COUNT && e < pm->ebx_length; e++)
		if (!PMON_BIT(r.ebx, e))
			pm->arch_events |= 1u << e;

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
	pm->gp_count = popcount64(pm->gp_mask);
	pm->fixed_count = popcount64(pm->fixed_mask);
}

static void decode_rdt(const struct leafctx *x, struct pmon_rdt *rdt)
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
			rdt->resources = r.edx;
			rdt->l3 = PMON_BIT(r.edx, 1);
			rdt->other_resources = r.edx & ~0x3u; /* step 5 */
		}
		if (rdt->l3) { /* step 4 */
			rdt->leaf_0f_1 = leaf(x, 0x0f, 1, &r);
			if (rdt->leaf_0f_1 == PMON_LEAF_OK) {
				rdt->counter_width = 24 + PMON_BITS(r.eax, 7, 0);
				rdt->overflow_bit = PMON_BIT(r.eax, 8);
				rdt->upscale = r.ebx;
				rdt->l3_max_rmid = r.ecx;
				rdt->occupancy = PMON_BIT(r.edx, 0);
				rdt->mbm_total = PMON_BIT(r.edx, 1);
				rdt->mbm_local = PMON_BIT(r.edx, 2);
			}
		}
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
	if (rdt->l3_cat && !pmon_cpuid__get(x->c, 0x10, 1, &r)) {
		rdt->l3_cbm_len = PMON_BITS(r.eax, 4, 0) + 1;
		rdt->l3_cdp = PMON_BIT(r.ecx, 2);
		rdt->l3_cos_max = PMON_BITS(r.edx, 15, 0);
	}
	if (rdt->l2_cat && !pmon_cpuid__get(x->c, 0x10, 2, &r)) {
		rdt->l2_cbm_len = PMON_BITS(r.eax, 4, 0) + 1;
		rdt->l2_cos_max = PMON_BITS(r.edx, 15, 0);
	}
	if (rdt->mba && !pmon_cpuid__get(x->c, 0x10, 3, &r)) {
		rdt->mba_max = PMON_BITS(r.eax, 11, 0) + 1;
		rdt->mba_linear = PMON_BIT(r.ecx, 2);
		rdt->mba_cos_max = PMON_BITS(r.edx, 15, 0);
	}
}

/* SDM Vol. 3B, "Determining the Processor Base Frequency" table: nominal
 * core crystal clock for processors whose CPUID.15H:ECX reads 0. */
static const struct {
	unsigned model;
	uint32_t hz;
} nominal_crystal[] = {
	{ 0x4e, 24000000 }, { 0x5e, 24000000 }, /* 6th gen Core (Skylake) */
	{ 0x8e, 24000000 }, { 0x9e, 24000000 }, /* 7th/8th gen Core (Kaby/Coffee Lake) */
	{ 0x55, 25000000 }, /* Xeon Scalable (Skylake-SP, Cascade Lake) */
	{ 0x5c, 19200000 }, /* Atom Goldmont */
};

static void decode_tsc(const struct leafctx *x, const struct pmon_cpu_ident *id, struct pmon_tsc *t)
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
		return;
	}
	if (t->hv_tsc_khz) {
		t->hz = (uint64_t)t->hv_tsc_khz * 1000;
		t->source = PMON_TSC_HZ_HYPERVISOR;
		return;
	}
	if (t->denominator && t->numerator && id->vendor == PMON_VENDOR_INTEL && id->family == 6) {
		for (size_t i = 0; i < PMON_ARRAY_SIZE(nominal_crystal); i++) {
			if (nominal_crystal[i].model == id->model) {
				t->hz = (uint64_t)nominal_crystal[i].hz * t->numerator /
					t->denominator;
				t->source = PMON_TSC_HZ_LEAF15_NOMINAL;
				return;
			}
		}
		/* As Linux does: derive the crystal from 16H's base frequency;
		 * the TSC then runs at the base frequency. */
		if (t->base_mhz) {
			t->hz = (uint64_t)t->base_mhz * 1000000;
			t->source = PMON_TSC_HZ_LEAF15_16;
		}
	}
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

int pmon_cpu_decode(const struct pmon_cpuid *c, struct pmon_cpu_info *out)
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
	decode_perfmon(&x, &out->id, &out->pm);
	decode_rdt(&x, &out->rdt);
	decode_tsc(&x, &out->id, &out->tsc);
	decode_hybrid(&x, &out->hybrid);
	return 0;
}
