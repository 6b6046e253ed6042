// SPDX-License-Identifier: MIT
/*
 * Decoder tests against real CPUID dumps (shared/data/cpuid). Each row was
 * checked by hand against the raw leaves and the SDM / AMD APM field layouts
 * (see the comments), and tests/cli/t0130-info-oracle.sh cross-checks the
 * same dumps against Debian's `cpuid` tool.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <dirent.h>
#include <stdlib.h>
#include <cmocka.h>

#include <pmon/pmon.h>

struct expect {
	int line;
	const char *file;
	enum pmon_vendor vendor;
	unsigned family, model, stepping;
	enum pmon_perfmon_model pm_model;
	unsigned version, gp_count, gp_width, fixed_count, fixed_width;
	uint32_t fixed_mask, arch_events;
	bool pqm, cmt, mbm_total, mbm_local;
	uint32_t max_rmid, upscale;
	unsigned rmid_width;
	uint64_t tsc_hz;
	unsigned core_type;
};

#define ROW(...)                                                                                   \
	{                                                                                          \
		__LINE__, __VA_ARGS__                                                              \
	}
#define I PMON_VENDOR_INTEL
#define A PMON_VENDOR_AMD

static const struct expect rows[] = {
	/* v1: Yonah, 0AH EAX=07280201 -> 2 GP x 40, 7 events, no fixed. */
	ROW("intel-celeron-215-yonah", I, 6, 0x0e, 8, PMON_PERFMON_INTEL_ARCH, 1, 2, 40, 0, 0, 0,
	    0x7f, 0, 0, 0, 0, 0, 0, 0, 0, 0),
	/* v2 with no fixed counters in EDX (EDX=0): the part has 3 and Linux
	 * assumes 3 outside a VM; so does pmon (issue 13's disputed point). */
	ROW("intel-core2-x6800-conroe", I, 6, 0x0f, 6, PMON_PERFMON_INTEL_ARCH, 2, 2, 40, 3, 40,
	    0x7, 0x7f, 0, 0, 0, 0, 0, 0, 0, 0, 0),
	/* v2, EDX=0503: 3 fixed x 40. */
	ROW("intel-core2-qx9650-yorkfield", I, 6, 0x17, 6, PMON_PERFMON_INTEL_ARCH, 2, 2, 40, 3, 40,
	    0x7, 0x7f, 0, 0, 0, 0, 0, 0, 0, 0, 0),
	/* v3, EDX=2501: 1 fixed x 40 reported (bit 13 reserved, set on this
	 * chip); Bonnell has 3: assumed as Linux does. */
	ROW("intel-atom-330-diamondville", I, 6, 0x1c, 2, PMON_PERFMON_INTEL_ARCH, 3, 2, 40, 3, 40,
	    0x7, 0x7f, 0, 0, 0, 0, 0, 0, 0, 0, 0),
	/* v3, EBX=44: reference cycles and branch mispredicts unavailable. */
	ROW("intel-core-i7-860-lynnfield", I, 6, 0x1e, 5, PMON_PERFMON_INTEL_ARCH, 3, 4, 48, 3, 48,
	    0x7, 0x3b, 0, 0, 0, 0, 0, 0, 0, 0, 0),
	/* v4; TSC from 15H ratio 334/2 and the crystal Linux derives from 16H's
	 * 4000 MHz base (23952 kHz, native_calibrate_tsc()); the SDM's nominal
	 * 24 MHz is only for parts without 16H. */
	ROW("intel-core-i7-6700k-skylake", I, 6, 0x5e, 3, PMON_PERFMON_INTEL_ARCH, 4, 4, 48, 3, 48,
	    0x7, 0x7f, 0, 0, 0, 0, 0, 0, 0, 3999984000ULL, 0),
	/* v4 Xeon, 0FH.0 EBX=bf, 0FH.1 EBX=18000, width 24. CPUID says CMT/MBM,
	 * but stepping 4 <= 4: Linux's __check_quirks_intel() disables them. */
	ROW("intel-xeon-8160-skylake-sp", I, 6, 0x55, 4, PMON_PERFMON_INTEL_ARCH, 4, 4, 48, 3, 48,
	    0x7, 0x7f, 1, 0, 0, 0, 191, 98304, 24, 2100000000ULL, 0),
	/* Haswell-EP: occupancy only (0FH.1 EDX=1). No leaf 15H (max leaf 0FH). */
	ROW("intel-xeon-e5-2696v3-haswell-ep", I, 6, 0x3f, 2, PMON_PERFMON_INTEL_ARCH, 3, 4, 48, 3,
	    48, 0x7, 0x7f, 1, 1, 0, 0, 71, 73728, 24, 0, 0),
	/* v5 Ice Lake-SP: 4 fixed (ECX=f), RMID width 24+8; TSC from 16H base. */
	ROW("intel-xeon-8351n-icelake-sp", I, 6, 0x6a, 6, PMON_PERFMON_INTEL_ARCH, 5, 8, 48, 4, 48,
	    0xf, 0xff, 1, 1, 1, 1, 287, 73728, 32, 2400000000ULL, 0),
	/* Hybrid, E-cores on: 0AH gives only what both core types share (6 GP,
	 * 3 fixed); on this P-core Linux's cpu_core PMU has 0AH + 2 GP and + 1
	 * fixed (intel_pmu_init), which the E-cores-off dump confirms. */
	ROW("intel-core-i9-12900k-alderlake-pcore", I, 6, 0x97, 2, PMON_PERFMON_INTEL_ARCH, 5, 8,
	    48, 4, 48, 0xf, 0x7f, 0, 0, 0, 0, 0, 0, 0, 3187200000ULL, 0x40),
	/* ... and on the E-core, 0AH's subset is all there is. */
	ROW("intel-core-i9-12900k-alderlake-ecore", I, 6, 0x97, 2, PMON_PERFMON_INTEL_ARCH, 5, 6,
	    48, 3, 48, 0x7, 0x7f, 0, 0, 0, 0, 0, 0, 0, 3187200000ULL, 0x20),
	/* Same chip, E-cores off in the BIOS: the P-core's full 8 GP + 4 fixed. */
	ROW("intel-core-i9-12900k-alderlake-ecores-off", I, 6, 0x97, 2, PMON_PERFMON_INTEL_ARCH, 5,
	    8, 48, 4, 48, 0xf, 0xff, 0, 0, 0, 0, 0, 0, 0, 3187200000ULL, 0x40),
	/* Meteor Lake P-core: 23H.1 GP ff fixed f; 23H.3 events dff. */
	ROW("intel-core-ultra7-155h-meteorlake-pcore", I, 6, 0xaa, 4, PMON_PERFMON_INTEL_ARCH, 5, 8,
	    48, 4, 48, 0xf, 0xdff, 0, 0, 0, 0, 0, 0, 0, 2995200000ULL, 0x40),
	/* Lunar Lake P-core: 23H reports 10 GP where 0AH says 8. */
	ROW("intel-core-ultra9-288v-lunarlake-pcore", I, 6, 0xbd, 1, PMON_PERFMON_INTEL_ARCH, 6, 10,
	    48, 4, 48, 0xf, 0x1dff, 0, 0, 0, 0, 0, 0, 0, 3302400000ULL, 0x40),
	/* Lunar Lake E-core: fixed mask 77 has a gap at 3 -- a mask, not a count. */
	ROW("intel-core-ultra9-288v-lunarlake-ecore", I, 6, 0xbd, 1, PMON_PERFMON_INTEL_ARCH, 6, 8,
	    48, 6, 48, 0x77, 0x1f7f, 0, 0, 0, 0, 0, 0, 0, 3302400000ULL, 0x20),
	/* Granite Rapids: 23H and CMT/MBM; crystal 25 MHz in 15H:ECX. */
	ROW("intel-xeon-658x-graniterapids", I, 6, 0xad, 1, PMON_PERFMON_INTEL_ARCH, 5, 8, 48, 4,
	    48, 0xf, 0xdff, 1, 1, 1, 1, 287, 73728, 32, 3000000000ULL, 0x40),
	/* No leaf 0AH (max leaf 2): P6 legacy, 2 x 40. */
	ROW("intel-pentium-pro", I, 6, 0x01, 9, PMON_PERFMON_INTEL_P6, 0, 2, 40, 0, 0, 0, 0, 0, 0,
	    0, 0, 0, 0, 0, 0, 0),
	/* AMD: 0AH reads zero; K8 has 4 x 48-bit counters. */
	ROW("amd-athlon64-2800-k8", A, 0xf, 0x04, 10, PMON_PERFMON_AMD_LEGACY, 0, 4, 48, 0, 0, 0, 0,
	    0, 0, 0, 0, 0, 0, 0, 0, 0),
	ROW("amd-phenom2-x4-940-k10", A, 0x10, 0x04, 2, PMON_PERFMON_AMD_LEGACY, 0, 4, 48, 0, 0, 0,
	    0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
	/* PerfCtrExtCore (80000001H:ECX[23]) -> 6 counters. */
	ROW("amd-fx-8150-bulldozer", A, 0x15, 0x01, 2, PMON_PERFMON_AMD_EXT, 0, 6, 48, 0, 0, 0, 0,
	    0, 0, 0, 0, 0, 0, 0, 0, 0),
	/* Zen 2: AMD's leaf 0FH in Intel's layout; EAX[7:0] = 0 on AMD means
	 * 44-bit counters: Linux adds MBM_CNTR_WIDTH_OFFSET_AMD (20). */
	ROW("amd-epyc-7742-zen2-rome", A, 0x17, 0x31, 0, PMON_PERFMON_AMD_EXT, 0, 6, 48, 0, 0, 0, 0,
	    1, 1, 1, 1, 255, 64, 44, 0, 0),
	/* Zen 3: 80000022H present but zero -> still PerfCtrExtCore; width 44. */
	ROW("amd-epyc-7763-zen3-milan", A, 0x19, 0x01, 1, PMON_PERFMON_AMD_EXT, 0, 6, 48, 0, 0, 0,
	    0, 1, 1, 1, 1, 255, 64, 44, 0, 0),
	/* Zen 4: PerfMonV2, 80000022H:EBX[3:0] = 6; 0FH.1 EAX=14 -> 44-bit counters. */
	ROW("amd-epyc-9654-zen4-genoa", A, 0x19, 0x11, 1, PMON_PERFMON_AMD_V2, 0, 6, 48, 0, 0, 0, 0,
	    1, 1, 1, 1, 255, 64, 44, 0, 0),
	/* Zen 5: 4096 RMIDs. */
	ROW("amd-epyc-9655-zen5-turin", A, 0x1a, 0x02, 1, PMON_PERFMON_AMD_V2, 0, 6, 48, 0, 0, 0, 0,
	    1, 1, 1, 1, 4095, 64, 44, 0, 0),
};

static struct pmon_cpuid *load(const char *name)
{
	char path[512];
	struct pmon_cpuid *c;

	snprintf(path, sizeof(path), "%s/%s.txt", PMON_CPUID_DIR, name);
	c = pmon_cpuid__new_file(path);
	if (!c)
		fail_msg("%s: %s", path, pmon_errdetail());
	return c;
}

static void test_cpu__dumps_decode_as_checked(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct expect *e = &rows[i];
		struct pmon_cpuid *c = load(e->file);
		struct pmon_cpu_info ci;

		print_message("row at line %d: %s\n", e->line, e->file);
		assert_int_equal(pmon_cpu_decode(c, &ci), 0);
		assert_int_equal(ci.id.vendor, e->vendor);
		assert_int_equal(ci.id.family, e->family);
		assert_int_equal(ci.id.model, e->model);
		assert_int_equal(ci.id.stepping, e->stepping);
		assert_int_equal(ci.pm.model, e->pm_model);
		assert_int_equal(ci.pm.version, e->version);
		assert_int_equal(ci.pm.gp_count, e->gp_count);
		assert_int_equal(ci.pm.gp_width, e->gp_width);
		assert_int_equal(ci.pm.fixed_count, e->fixed_count);
		assert_int_equal(ci.pm.fixed_width, e->fixed_width);
		assert_int_equal(ci.pm.fixed_mask, e->fixed_mask);
		assert_int_equal(ci.pm.arch_events, e->arch_events);
		assert_int_equal(ci.rdt.pqm, e->pqm);
		assert_int_equal(ci.rdt.occupancy, e->cmt);
		assert_int_equal(ci.rdt.mbm_total, e->mbm_total);
		assert_int_equal(ci.rdt.mbm_local, e->mbm_local);
		assert_int_equal(ci.rdt.max_rmid, e->max_rmid);
		assert_int_equal(ci.rdt.upscale, e->upscale);
		assert_int_equal(ci.rdt.counter_width, e->rmid_width);
		assert_int_equal(ci.tsc.hz, e->tsc_hz);
		assert_int_equal(ci.hybrid.core_type, e->core_type);
		pmon_cpuid__free(c);
	}
}

/* Every shared dump decodes, and its figures are internally consistent. */
static void test_cpu__every_dump_decodes(void **state)
{
	DIR *d = opendir(PMON_CPUID_DIR);
	struct dirent *de;
	int n = 0;

	(void)state;
	assert_non_null(d);
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char name[256];
		struct pmon_cpuid *c;
		struct pmon_cpu_info ci;

		if (len < 5 || strcmp(de->d_name + len - 4, ".txt"))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(len - 4), de->d_name);
		c = load(name);
		assert_int_equal(pmon_cpu_decode(c, &ci), 0);
		/* The output struct may grow (docs/architecture.md): a caller's
		 * larger one gets the same decoding and zeros past it. */
		struct {
			struct pmon_cpu_info ci;
			unsigned char more[64];
		} big;
		memset(&big, 0xaa, sizeof(big));
		assert_int_equal(pmon_cpu_decode_sized(c, &big.ci, sizeof(big)), 0);
		assert_memory_equal(&big.ci, &ci, sizeof(ci));
		for (size_t i = 0; i < sizeof(big.more); i++)
			assert_int_equal(big.more[i], 0);
		/* A caller built against release 0.1 (the struct up to its
		 * first later field) gets its part decoded; smaller is refused. */
		size_t v1 = offsetof(struct pmon_cpu_info, pm_none_why);
		memset(&big, 0xaa, sizeof(big));
		assert_int_equal(pmon_cpu_decode_sized(c, &big.ci, v1), 0);
		assert_memory_equal(&big.ci, &ci, v1);
		assert_int_equal(((unsigned char *)&big.ci)[v1], 0xaa);
		assert_int_equal(pmon_cpu_decode_sized(c, &big.ci, v1 - 8), -EINVAL);
		assert_true(ci.id.vendor == PMON_VENDOR_INTEL || ci.id.vendor == PMON_VENDOR_AMD);
		assert_true(ci.id.family >= 5);
		assert_int_equal(ci.pm.gp_count, (unsigned)__builtin_popcountll(ci.pm.gp_mask));
		assert_int_equal(ci.pm.fixed_count, (unsigned)__builtin_popcount(ci.pm.fixed_mask));
		if (ci.pm.model != PMON_PERFMON_NONE)
			assert_true(ci.pm.gp_width >= 32 && ci.pm.gp_width <= 64);
		assert_int_equal(ci.pm.model == PMON_PERFMON_NONE, ci.pm_none_why != NULL);
		assert_false(ci.pm_hv_unverifiable); /* none of them has the hypervisor bit */
		if (ci.rdt.l3)
			assert_true(ci.rdt.counter_width >= 24);
		pmon_cpuid__free(c);
		n++;
	}
	closedir(d);
	assert_true(n >= 30);
}

/* Leaves beyond the maximum leaf are never decoded, even when the dump
 * carries rows for them (garbage a real CPU would not return). */
static void test_cpu__beyond_max_leaf_not_enumerated(void **state)
{
	static const char dump[] = "00000000 00: 00000005 756e6547 6c65746e 49656e69\n"
				   "00000001 00: 000006f6 00020800 0000e3bd bfebfbff\n"
				   "0000000a 00: 07280202 00000000 00000000 00000503\n"
				   "0000000f 00: 00000000 000000ff 00000000 00000002\n";
	struct pmon_cpuid *c = pmon_cpuid__new_buf(dump, sizeof(dump) - 1, "t");
	struct pmon_cpu_info ci;

	(void)state;
	assert_non_null(c);
	assert_int_equal(pmon_cpu_decode(c, &ci), 0);
	assert_int_equal(ci.pm.leaf_0a, PMON_LEAF_NOT_ENUMERATED);
	assert_int_equal(ci.pm.version, 0);
	assert_int_equal(ci.pm.model, PMON_PERFMON_INTEL_P6); /* legacy by family */
	assert_int_equal(ci.rdt.leaf_0f, PMON_LEAF_NOT_ENUMERATED);
	assert_int_equal(ci.tsc.leaf_15, PMON_LEAF_NOT_ENUMERATED);
	assert_false(ci.rdt.l3);
	pmon_cpuid__free(c);
}

/* Atom 330's reserved EDX bit is reported, not decoded into the count. */
static void test_cpu__atom_reserved_bit(void **state)
{
	struct pmon_cpuid *c = load("intel-atom-330-diamondville");
	struct pmon_cpu_info ci;

	(void)state;
	assert_int_equal(pmon_cpu_decode(c, &ci), 0);
	assert_int_equal(ci.pm.edx_reserved, 0x2000);
	assert_int_equal(ci.pm.fixed_count_0a, 1);
	pmon_cpuid__free(c);
}

/* The VM case: Intel with 0AH all zero means no counters at all. */
static void test_cpu__vm_zero_leaf_0a(void **state)
{
	static const char dump[] = "00000000 00: 0000000d 756e6547 6c65746e 49656e69\n"
				   "00000001 00: 000806f8 00800800 fffefbff bfebfbff\n"
				   "0000000a 00: 00000000 00000000 00000000 00000000\n"
				   "40000000 00: 40000001 4b4d564b 564b4d56 0000004d\n";
	struct pmon_cpuid *c = pmon_cpuid__new_buf(dump, sizeof(dump) - 1, "vm");
	struct pmon_cpu_info ci;

	(void)state;
	assert_non_null(c);
	assert_int_equal(pmon_cpu_decode(c, &ci), 0);
	assert_true(ci.id.hypervisor);
	assert_string_equal(ci.id.hv_name, "KVM");
	assert_int_equal(ci.pm.model, PMON_PERFMON_NONE);
	assert_int_equal(ci.pm.gp_count, 0);
	pmon_cpuid__free(c);
}

/* Hypervisor TSC leaf 40000010H gives the frequency when 15H cannot. */
static void test_cpu__hypervisor_tsc_leaf(void **state)
{
	static const char dump[] = "00000000 00: 0000000d 68747541 444d4163 69746e65\n"
				   "00000001 00: 00a00f11 00000800 fed83203 178bfbff\n"
				   "40000000 00: 40000010 61774d56 4d566572 65726177\n"
				   "40000010 00: 0026259f 000f4240 00000000 00000000\n";
	struct pmon_cpuid *c = pmon_cpuid__new_buf(dump, sizeof(dump) - 1, "vmw");
	struct pmon_cpu_info ci;

	(void)state;
	assert_non_null(c);
	assert_int_equal(pmon_cpu_decode(c, &ci), 0);
	assert_string_equal(ci.id.hv_name, "VMware");
	assert_int_equal(ci.tsc.source, PMON_TSC_HZ_HYPERVISOR);
	assert_int_equal(ci.tsc.hz, 2499999000ULL);
	pmon_cpuid__free(c);
}

/* #13.1: AMD reports 0 in 0FH.1:EAX[7:0] for its 44-bit counters
 * (resctrl_cpu_detect()); Intel's 0 means 24. Zen 4 reports 20 itself. */
static void test_cpu__mbm_width_vendor_offset(void **state)
{
	static const struct {
		int line;
		const char *file;
		unsigned width, offset;
		bool vendor_default;
	} t[] = {
		{ __LINE__, "amd-epyc-7742-zen2-rome", 44, 0, true },
		{ __LINE__, "amd-epyc-7763-zen3-milan", 44, 0, true },
		{ __LINE__, "amd-epyc-9654-zen4-genoa", 44, 20, false },
		{ __LINE__, "intel-xeon-e5-2620v4-broadwell-ep", 24, 0, false },
		{ __LINE__, "intel-xeon-8351n-icelake-sp", 32, 8, false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct pmon_cpuid *c = load(t[i].file);
		struct pmon_cpu_info ci;

		print_message("row at line %d: %s\n", t[i].line, t[i].file);
		assert_int_equal(pmon_cpu_decode(c, &ci), 0);
		assert_int_equal(ci.rdt.counter_width, t[i].width);
		assert_int_equal(ci.rdt.width_offset, t[i].offset);
		assert_int_equal(ci.rdt.width_vendor_default, t[i].vendor_default);
		pmon_cpuid__free(c);
	}
}

/* #13.6: the RMID field of IA32_PQR_ASSOC is ceil(log2(1 + max RMID)) bits
 * (SDM 17.16.6), not a fixed 10: Zen 5 needs 12. */
static void test_cpu__rmid_field_width(void **state)
{
	static const struct {
		int line;
		const char *file;
		unsigned bits;
	} t[] = {
		{ __LINE__, "amd-epyc-9655-zen5-turin", 12 }, /* 4095 */
		{ __LINE__, "amd-ryzen9-9950x-zen5-graniteridge", 12 }, /* 4095 */
		{ __LINE__, "amd-epyc-7742-zen2-rome", 8 }, /* 255 */
		{ __LINE__, "intel-xeon-8160-skylake-sp", 8 }, /* 191 */
		{ __LINE__, "intel-xeon-4214-cascadelake-sp", 7 }, /* 95 */
		{ __LINE__, "intel-xeon-658x-graniterapids", 9 }, /* 287 */
		{ __LINE__, "intel-xeon-e5-2620v4-broadwell-ep", 6 }, /* 63 */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct pmon_cpuid *c = load(t[i].file);
		struct pmon_cpu_info ci;

		print_message("row at line %d: %s\n", t[i].line, t[i].file);
		assert_int_equal(pmon_cpu_decode(c, &ci), 0);
		assert_int_equal(ci.rdt.rmid_bits, t[i].bits);
		pmon_cpuid__free(c);
	}
}

/* #13.7: only family 0FH is NetBurst. An Intel family 13H part (extended
 * family 4) in a VM that zeroes leaf 0AH has no architectural perfmon; it
 * must not decode as 18 ESCR counters. */
static void test_cpu__family_above_0f_is_not_netburst(void **state)
{
	static const char dump[] = "00000000 00: 00000023 756e6547 6c65746e 49656e69\n"
				   "00000001 00: 00400f01 00800800 fffefbff bfebfbff\n"
				   "0000000a 00: 00000000 00000000 00000000 00000000\n";
	static const char nb[] = "00000000 00: 00000002 756e6547 6c65746e 49656e69\n"
				 "00000001 00: 00000f29 00020800 00004400 bfebfbff\n";
	struct pmon_cpuid *c = pmon_cpuid__new_buf(dump, sizeof(dump) - 1, "fam13");
	struct pmon_cpu_info ci;

	(void)state;
	assert_non_null(c);
	assert_int_equal(pmon_cpu_decode(c, &ci), 0);
	assert_int_equal(ci.id.family, 0x13);
	assert_int_equal(ci.pm.model, PMON_PERFMON_NONE);
	assert_int_equal(ci.pm.nranges, 0);
	assert_int_equal(ci.pm.gp_count, 0);
	assert_false(ci.pm.rdpmc_instruction);
	pmon_cpuid__free(c);
	/* A real family 0FH (Pentium 4 Northwood signature) still is. */
	c = pmon_cpuid__new_buf(nb, sizeof(nb) - 1, "p4");
	assert_non_null(c);
	assert_int_equal(pmon_cpu_decode(c, &ci), 0);
	assert_int_equal(ci.id.family, 0xf);
	assert_int_equal(ci.pm.model, PMON_PERFMON_INTEL_NETBURST);
	assert_int_equal(ci.pm.gp_count, 18);
	pmon_cpuid__free(c);
}

static char *slurp(const char *name, size_t *len)
{
	char path[512];
	FILE *f;
	char *buf;

	snprintf(path, sizeof(path), "%s/%s.txt", PMON_CPUID_DIR, name);
	f = fopen(path, "r");
	assert_non_null(f);
	buf = calloc(1, 1 << 20);
	assert_non_null(buf);
	*len = fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	return buf;
}

/* #24.6: leaf 23H is read only with CPUID.(07H,1):EAX[8] ArchPerfmonExt
 * (Linux's X86_FEATURE_ARCH_PERFMON_EXT). The Meteor Lake P-core dump with
 * that bit cleared must fall back to 0AH. */
static void test_cpu__leaf_23_needs_arch_perfmon_ext(void **state)
{
	size_t len;
	char *buf = slurp("intel-core-ultra7-155h-meteorlake-pcore", &len);
	char *row = strstr(buf, "00000007 01: 40400910");
	struct pmon_cpu_info ci;
	struct pmon_cpuid *c;

	(void)state;
	assert_non_null(row);
	c = pmon_cpuid__new_buf(buf, len, "mtl");
	assert_int_equal(pmon_cpu_decode(c, &ci), 0);
	assert_true(ci.arch_perfmon_ext);
	assert_int_equal(ci.pm.leaf_23, PMON_LEAF_OK);
	assert_false(ci.leaf_23_ignored);
	pmon_cpuid__free(c);

	memcpy(row, "00000007 01: 40400810", 21); /* EAX[8] cleared */
	c = pmon_cpuid__new_buf(buf, len, "mtl-no-ext");
	assert_int_equal(pmon_cpu_decode(c, &ci), 0);
	assert_false(ci.arch_perfmon_ext);
	assert_int_equal(ci.leaf_07_1, PMON_LEAF_OK);
	assert_true(ci.leaf_23_ignored);
	assert_int_equal(ci.pm.leaf_23, PMON_LEAF_NOT_ENUMERATED);
	assert_int_equal(ci.pm.subleaves_23, 0);
	/* 0AH's figures: its EBX length (8) caps the events; 23H.03H had dff. */
	assert_int_equal(ci.pm.gp_count, ci.pm.gp_count_0a);
	assert_int_equal(ci.pm.arch_events & ~0xffu, 0);
	pmon_cpuid__free(c);
	free(buf);
}

/* #24.5: "0AH reports only what all core types share" holds on Alder Lake
 * with its E-cores on (6 GP / 3 fixed on either core), not with them off
 * (0AH is the P-core's own 8 / 4). */
static void test_cpu__hybrid_0a_subset(void **state)
{
	static const struct {
		const char *file;
		bool subset;
	} t[] = {
		{ "intel-core-i9-12900k-alderlake-pcore", true },
		{ "intel-core-i9-12900k-alderlake-ecore", true },
		{ "intel-core-i9-12900k-alderlake-ecores-off", false },
		{ "intel-core-ultra7-155h-meteorlake-pcore", false }, /* has 23H */
		{ "intel-core-i7-6700k-skylake", false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct pmon_cpuid *c = load(t[i].file);
		struct pmon_cpu_info ci;

		print_message("%s\n", t[i].file);
		assert_int_equal(pmon_cpu_decode(c, &ci), 0);
		assert_int_equal(ci.hybrid_0a_subset, t[i].subset);
		pmon_cpuid__free(c);
	}
}

/* #24.1: the TSC crystal as Linux's native_calibrate_tsc() finds it:
 * 15H:ECX; Denverton's 25 MHz; else derived from 16H (integer kHz); the
 * SDM's nominal table only without 16H, and without Skylake-X (55H), whose
 * workstation parts run 24 MHz where the old table said 25. */
static const char skx_w[] = /* Core i9-7900X (06_55H): 15H 275/2, 16H base 3300 */
	"00000000 00: 00000016 756e6547 6c65746e 49656e69\n"
	"00000001 00: 00050654 00100800 7ffefbff bfebfbff\n"
	"00000015 00: 00000002 00000113 00000000 00000000\n"
	"00000016 00: 00000ce4 000010cc 00000064 00000000\n";
static const char skx_no16[] = /* the same without leaf 16H: no nominal row for 55H */
	"00000000 00: 00000015 756e6547 6c65746e 49656e69\n"
	"00000001 00: 00050654 00100800 7ffefbff bfebfbff\n"
	"00000015 00: 00000002 00000113 00000000 00000000\n";
static const char skl_no16[] = /* Skylake (06_5EH) without 16H: nominal 24 MHz */
	"00000000 00: 00000015 756e6547 6c65746e 49656e69\n"
	"00000001 00: 000506e3 00100800 7ffafbbf bfebfbff\n"
	"00000015 00: 00000002 0000014e 00000000 00000000\n";
static const char dnv[] = /* Atom Denverton (06_5FH): 15H 176/2, no crystal, no 16H */
	"00000000 00: 00000015 756e6547 6c65746e 49656e69\n"
	"00000001 00: 000506f1 00100800 4ff8ebbf bfebfbff\n"
	"00000015 00: 00000002 000000b0 00000000 00000000\n";
static const char skl_16_zero[] = /* 16H enumerated with base 0: Linux gives nothing */
	"00000000 00: 00000016 756e6547 6c65746e 49656e69\n"
	"00000001 00: 000506e3 00100800 7ffafbbf bfebfbff\n"
	"00000015 00: 00000002 0000014e 00000000 00000000\n"
	"00000016 00: 00000000 00000000 00000000 00000000\n";

static void test_cpu__tsc_crystal_sources(void **state)
{
	static const struct {
		int line;
		const char *name, *dump;
		enum pmon_tsc_source source;
		uint32_t crystal;
		uint64_t hz;
	} t[] = {
		{ __LINE__, "skx-w", skx_w, PMON_TSC_HZ_LEAF15_16, 24000000, 3300000000ULL },
		{ __LINE__, "skx-no16", skx_no16, PMON_TSC_HZ_NONE, 0, 0 },
		{ __LINE__, "skl-no16", skl_no16, PMON_TSC_HZ_LEAF15_NOMINAL, 24000000,
		  4008000000ULL },
		{ __LINE__, "dnv", dnv, PMON_TSC_HZ_LEAF15_DENVERTON, 25000000, 2200000000ULL },
		{ __LINE__, "skl-16-zero", skl_16_zero, PMON_TSC_HZ_NONE, 0, 0 },
		{ __LINE__, "intel-core-i7-6700k-skylake", NULL, PMON_TSC_HZ_LEAF15_16, 23952000,
		  3999984000ULL },
		{ __LINE__, "intel-xeon-8160-skylake-sp", NULL, PMON_TSC_HZ_LEAF15_16, 25000000,
		  2100000000ULL },
		{ __LINE__, "intel-xeon-4214-cascadelake-sp", NULL, PMON_TSC_HZ_LEAF15_16, 25000000,
		  2200000000ULL },
		{ __LINE__, "intel-core-i7-1065g7-icelake", NULL, PMON_TSC_HZ_LEAF15, 38400000,
		  1497600000ULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct pmon_cpuid *c = t[i].dump
			? pmon_cpuid__new_buf(t[i].dump, strlen(t[i].dump), t[i].name)
			: load(t[i].name);
		struct pmon_cpu_info ci;

		print_message("row at line %d: %s\n", t[i].line, t[i].name);
		assert_non_null(c);
		assert_int_equal(pmon_cpu_decode(c, &ci), 0);
		assert_int_equal(ci.tsc.source, t[i].source);
		assert_int_equal(ci.tsc_crystal_hz, t[i].crystal);
		assert_int_equal(ci.tsc.hz, t[i].hz);
		assert_int_equal(pmon_tsc_source_is_derived(ci.tsc.source),
				 t[i].source == PMON_TSC_HZ_LEAF15_16 ||
					 t[i].source == PMON_TSC_HZ_LEAF15_NOMINAL);
		pmon_cpuid__free(c);
	}
}

/* #24.2: a hypervisor's CPUID that a legacy rule would read as counters.
 * QEMU's kvm64 on an Intel host (family 0FH model 6, max leaf 0DH, 0AH
 * zero, the hypervisor bit: tests/cpuid/qemu-kvm64-on-intel.txt) is no
 * Pentium 4; the same without the hypervisor bit is none either (real
 * Pentium 4s have max leaf <= 6); an AMD family 19H guest with
 * PerfCtrExtCore clear (this project's build VM, whose kernel has no
 * 'cpu' PMU) has had its PMU hidden. Each says why. */
static const char kvm64[] = "00000000 00: 0000000d 756e6547 6c65746e 49656e69\n"
			    "00000001 00: 00000f61 00000800 80002001 078bfbfd\n"
			    "0000000a 00: 00000000 00000000 00000000 00000000\n"
			    "40000000 00: 40000001 4b4d564b 564b4d56 0000004d\n";
static const char fam0f_leaf0a[] = "00000000 00: 0000000d 756e6547 6c65746e 49656e69\n"
				   "00000001 00: 00000f61 00000800 00002001 078bfbfd\n"
				   "0000000a 00: 00000000 00000000 00000000 00000000\n";
static const char amd_guest[] = "00000000 00: 0000001c 68747541 444d4163 69746e65\n"
				"00000001 00: 00a10f11 00020800 fffa3203 178bfbff\n"
				"40000000 00: 40000001 4b4d564b 564b4d56 0000004d\n"
				"80000000 00: 80000021 68747541 444d4163 69746e65\n"
				"80000001 00: 00a10f11 40000000 004003f3 2fd3fbff\n";
/* An Intel guest with a vPMU: counters, but CPUID cannot vouch for them. */
static const char intel_guest_pmu[] = "00000000 00: 0000000d 756e6547 6c65746e 49656e69\n"
				      "00000001 00: 000506e3 00800800 fffab223 0f8bfbff\n"
				      "0000000a 00: 07300404 00000000 00000000 00000603\n"
				      "40000000 00: 40000001 4b4d564b 564b4d56 0000004d\n";

static void test_cpu__vm_counters_not_assumed(void **state)
{
	static const struct {
		int line;
		const char *name, *dump;
		enum pmon_perfmon_model model;
		const char *why; /* substring of pm_none_why; NULL: none */
		bool hv_unverifiable;
	} t[] = {
		{ __LINE__, "kvm64", kvm64, PMON_PERFMON_NONE, "QEMU's kvm64", false },
		{ __LINE__, "fam0f-leaf0a", fam0f_leaf0a, PMON_PERFMON_NONE,
		  "maximum leaf of at most 6", false },
		{ __LINE__, "amd-guest", amd_guest, PMON_PERFMON_NONE, "hypervisor hid the PMU",
		  false },
		{ __LINE__, "intel-guest-pmu", intel_guest_pmu, PMON_PERFMON_INTEL_ARCH, NULL,
		  true },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct pmon_cpuid *c = pmon_cpuid__new_buf(t[i].dump, strlen(t[i].dump), t[i].name);
		struct pmon_cpu_info ci;

		print_message("row at line %d: %s\n", t[i].line, t[i].name);
		assert_non_null(c);
		assert_int_equal(pmon_cpu_decode(c, &ci), 0);
		assert_int_equal(ci.pm.model, t[i].model);
		assert_int_equal(ci.pm_hv_unverifiable, t[i].hv_unverifiable);
		if (t[i].why) {
			assert_non_null(ci.pm_none_why);
			assert_non_null(strstr(ci.pm_none_why, t[i].why));
			assert_int_equal(ci.pm.gp_count, 0);
			assert_int_equal(ci.pm.nranges, 0);
			assert_false(ci.pm.rdpmc_instruction);
		} else {
			assert_null(ci.pm_none_why);
		}
		pmon_cpuid__free(c);
	}
}

/* #13.8: Linux's RDT errata by model (resctrl __check_quirks_intel and
 * monitor.c mbm_cf_table), on the real Skylake-SP (stepping 4, 192 RMIDs),
 * Cascade Lake (55H stepping 7, 96 RMIDs: threshold = last RMID, nothing
 * corrected) and Broadwell-EP (64 RMIDs: factor 1) dumps. */
static void test_cpu__rdt_errata(void **state)
{
	struct pmon_cpuid *c = load("intel-xeon-8160-skylake-sp");
	struct pmon_cpu_info ci;
	uint64_t cf = (uint64_t)(1048576 * 0.969744 + 0.5);

	(void)state;
	assert_int_equal(pmon_cpu_decode(c, &ci), 0);
	assert_true(ci.rdt.mon_erratum_disabled);
	assert_true(ci.rdt.cpuid_occupancy && ci.rdt.cpuid_mbm_total && ci.rdt.cpuid_mbm_local);
	assert_false(ci.rdt.occupancy || ci.rdt.mbm_total || ci.rdt.mbm_local);
	/* (191 + 1) / 8 - 1 = 23: {127, CF(0.969744)} */
	assert_true(ci.rdt.mbm_cf_quirk);
	assert_int_equal(ci.rdt.mbm_cf_rmid_threshold, 127);
	assert_int_equal(ci.rdt.mbm_cf, cf);
	assert_int_equal(pmon_rdt_mbm_correct(&ci.rdt, 127, 1ULL << 40), 1ULL << 40);
	assert_int_equal(pmon_rdt_mbm_correct(&ci.rdt, 128, 1ULL << 40),
			 (1ULL << 40) / 1048576 * cf);
	pmon_cpuid__free(c);

	c = load("intel-xeon-4214-cascadelake-sp");
	assert_int_equal(pmon_cpu_decode(c, &ci), 0);
	assert_false(ci.rdt.mon_erratum_disabled);
	assert_true(ci.rdt.mbm_total);
	assert_false(ci.rdt.mbm_cf_quirk);
	assert_int_equal(pmon_rdt_mbm_correct(&ci.rdt, 95, 12345), 12345);
	pmon_cpuid__free(c);

	c = load("intel-xeon-e5-2620v4-broadwell-ep");
	assert_int_equal(pmon_cpu_decode(c, &ci), 0);
	assert_false(ci.rdt.mon_erratum_disabled);
	assert_false(ci.rdt.mbm_cf_quirk);
	pmon_cpuid__free(c);

	/* Not Intel 55H/4FH: never corrected. */
	c = load("amd-epyc-9655-zen5-turin");
	assert_int_equal(pmon_cpu_decode(c, &ci), 0);
	assert_false(ci.rdt.mbm_cf_quirk || ci.rdt.mon_erratum_disabled);
	assert_int_equal(pmon_rdt_mbm_correct(&ci.rdt, 4000, 77), 77);
	pmon_cpuid__free(c);
}

/* Disputed point: the v2 fixed-counter quirk applies on bare metal only;
 * a hypervisor's EDX[4:0] = 0 is believed (Linux: 3 * !HYPERVISOR). */
static void test_cpu__fixed_quirk_not_in_a_vm(void **state)
{
	static const char dump[] = "00000000 00: 0000000a 756e6547 6c65746e 49656e69\n"
				   "00000001 00: 000006f6 00020800 8000e3bd bfebfbff\n"
				   "0000000a 00: 07280202 00000000 00000000 00000000\n";
	struct pmon_cpuid *c = pmon_cpuid__new_buf(dump, sizeof(dump) - 1, "conroe-vm");
	struct pmon_cpu_info ci;

	(void)state;
	assert_non_null(c);
	assert_int_equal(pmon_cpu_decode(c, &ci), 0);
	assert_true(ci.id.hypervisor);
	assert_false(ci.pm.fixed_assumed);
	assert_int_equal(ci.pm.fixed_count, 0);
	assert_true(ci.pm.fast_read_arch); /* Core 2 model 0FH */
	pmon_cpuid__free(c);
}

/* #13.10: leaf 10H sub-leaves a dump lacks are not enumerated, not zeros. */
static void test_cpu__leaf_10_subleaf_absent(void **state)
{
	struct pmon_cpuid *c = load("intel-core-i9-12900k-alderlake-pcore");
	struct pmon_cpu_info ci;

	(void)state;
	assert_int_equal(pmon_cpu_decode(c, &ci), 0);
	assert_true(ci.rdt.l2_cat);
	assert_int_equal(ci.rdt.leaf_10_2, PMON_LEAF_ABSENT);
	pmon_cpuid__free(c);
}

static void put(const char *root, const char *rel, const char *text)
{
	char path[512], cmd[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	assert_int_equal(system(cmd), 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* #13.5: the L3 each CPU shares, from a sysfs tree laid out as Linux's
 * cacheinfo does (index3/id; older kernels: shared_cpu_list only). */
static void test_cpu__l3_ids_from_sysfs(void **state)
{
	char root[] = "/tmp/pmon-cache-XXXXXX", cmd[128];
	int cpus[] = { 0, 1, 2, 3 }, ids[4];

	(void)state;
	assert_non_null(mkdtemp(root));
	for (int c = 0; c < 4; c++) {
		char rel[128];
		snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/cache/index0/level", c);
		put(root, rel, "1\n");
		snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/cache/index3/level", c);
		put(root, rel, "3\n");
		snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/cache/index1/level", c);
		put(root, rel, "1\n");
		snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/cache/index2/level", c);
		put(root, rel, "2\n");
		if (c < 3) {
			snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/cache/index3/id", c);
			put(root, rel, c < 2 ? "0\n" : "1\n");
		} else {
			snprintf(rel, sizeof(rel),
				 "devices/system/cpu/cpu%d/cache/index3/shared_cpu_list", c);
			put(root, rel, "2-3\n");
		}
	}
	assert_int_equal(pmon_cpu_l3_ids(root, cpus, 4, ids), 0);
	assert_int_equal(ids[0], 0);
	assert_int_equal(ids[1], 0);
	assert_int_equal(ids[2], 1);
	assert_int_equal(ids[3], 2); /* first CPU of its shared list */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(pmon_cpu_l3_ids(root, cpus, 4, ids), -ENOENT);
}

/* The live CPU decodes, and a snapshot written out reads back identically. */
static void test_cpu__live_round_trip(void **state)
{
	struct pmon_cpuid *c = pmon_cpuid__new_live(), *back;
	struct pmon_cpu_info a, b;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_non_null(c);
	f = open_memstream(&buf, &len);
	assert_int_equal(pmon_cpuid__write(c, f), 0);
	fclose(f);
	back = pmon_cpuid__new_buf(buf, len, "mem");
	assert_non_null(back);
	assert_int_equal(pmon_cpuid__count(back), pmon_cpuid__count(c));
	assert_int_equal(pmon_cpu_decode(c, &a), 0);
	assert_int_equal(pmon_cpu_decode(back, &b), 0);
	assert_string_equal(a.id.vendor_id, b.id.vendor_id);
	assert_string_equal(a.id.brand, b.id.brand);
	assert_int_equal(a.id.signature, b.id.signature);
	assert_int_equal(a.pm.model, b.pm.model);
	assert_int_equal(a.pm.gp_mask, b.pm.gp_mask);
	assert_int_equal(a.pm.fixed_mask, b.pm.fixed_mask);
	assert_int_equal(a.rdt.pqm, b.rdt.pqm);
	assert_int_equal(a.tsc.invariant, b.tsc.invariant);
	free(buf);
	pmon_cpuid__free(c);
	pmon_cpuid__free(back);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpu__dumps_decode_as_checked),
		cmocka_unit_test(test_cpu__every_dump_decodes),
		cmocka_unit_test(test_cpu__beyond_max_leaf_not_enumerated),
		cmocka_unit_test(test_cpu__atom_reserved_bit),
		cmocka_unit_test(test_cpu__vm_zero_leaf_0a),
		cmocka_unit_test(test_cpu__hypervisor_tsc_leaf),
		cmocka_unit_test(test_cpu__live_round_trip),
		cmocka_unit_test(test_cpu__mbm_width_vendor_offset),
		cmocka_unit_test(test_cpu__rmid_field_width),
		cmocka_unit_test(test_cpu__family_above_0f_is_not_netburst),
		cmocka_unit_test(test_cpu__rdt_errata),
		cmocka_unit_test(test_cpu__leaf_23_needs_arch_perfmon_ext),
		cmocka_unit_test(test_cpu__hybrid_0a_subset),
		cmocka_unit_test(test_cpu__tsc_crystal_sources),
		cmocka_unit_test(test_cpu__vm_counters_not_assumed),
		cmocka_unit_test(test_cpu__leaf_10_subleaf_absent),
		cmocka_unit_test(test_cpu__l3_ids_from_sysfs),
		cmocka_unit_test(test_cpu__fixed_quirk_not_in_a_vm),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
