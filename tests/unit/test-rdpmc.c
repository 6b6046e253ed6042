// SPDX-License-Identifier: MIT
/*
 * RDPMC encoding rules (SDM Vol. 2B RDPMC, the first two seeds), valid and
 * invalid, on decoded real CPUs and on small synthetic dumps for processors
 * the shared set lacks (Pentium, Pentium 4 Xeon with L3).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <pmon/pmon.h>

/* Synthetic dumps: only the leaves the decoder reads for these models. */
static const char p5_plain[] = /* Pentium 75-200, no MMX: family 5 model 2 */
	"00000000 00: 00000001 756e6547 6c65746e 49656e69\n"
	"00000001 00: 0000052c 00000000 00000000 000003bf\n";
static const char p5_mmx[] = /* Pentium MMX (P55C): family 5 model 4, EDX[23] */
	"00000000 00: 00000001 756e6547 6c65746e 49656e69\n"
	"00000001 00: 00000543 00000000 00000000 008001bf\n";
static const char p4_xeon_l3[] = /* 64-bit Xeon MP with L3 (leaf 2 descriptor 22H) */
	"00000000 00: 00000005 756e6547 6c65746e 49656e69\n"
	"00000001 00: 00000f41 00020800 0000641d bfebfbff\n"
	"00000002 00: 00227b01 00000000 00000000 007c7040\n"
	"80000000 00: 80000008 00000000 00000000 00000000\n"
	"80000001 00: 00000000 00000000 00000001 20100800\n";
static const char p4_no_l3[] = /* Pentium 4 without L3 */
	"00000000 00: 00000005 756e6547 6c65746e 49656e69\n"
	"00000001 00: 00000f41 00020800 0000641d bfebfbff\n"
	"00000002 00: 00007b01 00000000 00000000 007c7040\n"
	"80000000 00: 80000008 00000000 00000000 00000000\n"
	"80000001 00: 00000000 00000000 00000001 20100800\n";
static const char vm_zero[] = "00000000 00: 0000000d 756e6547 6c65746e 49656e69\n"
			      "00000001 00: 000806f8 00800800 fffefbff bfebfbff\n"
			      "0000000a 00: 00000000 00000000 00000000 00000000\n";

static const char vm_fam13[] = /* Intel family 13H (extended family 4) in a VM */
	"00000000 00: 00000023 756e6547 6c65746e 49656e69\n"
	"00000001 00: 00400f01 00800800 fffefbff bfebfbff\n"
	"0000000a 00: 00000000 00000000 00000000 00000000\n";

static const char
	amd_f16_jaguar[] = /* family 16H: PerfCtrExtCore, _NB, _L2I (80000001H:ECX 23, 24, 28) */
	"00000000 00: 0000000d 68747541 444d4163 69746e65\n"
	"00000001 00: 00700f01 00040800 3ed8220b 178bfbff\n"
	"80000000 00: 8000001e 68747541 444d4163 69746e65\n"
	"80000001 00: 00700f01 00000000 15c037ff 2fd3fbff\n";

static const char kvm64[] = /* QEMU kvm64 on Intel: family 0FH model 6, max leaf 0DH, hypervisor */
	"00000000 00: 0000000d 756e6547 6c65746e 49656e69\n"
	"00000001 00: 00000f61 00000800 80002001 078bfbfd\n"
	"0000000a 00: 00000000 00000000 00000000 00000000\n"
	"40000000 00: 40000001 4b4d564b 564b4d56 0000004d\n";
static const char amd_guest[] = /* AMD family 19H KVM guest, PerfCtrExtCore clear */
	"00000000 00: 0000001c 68747541 444d4163 69746e65\n"
	"00000001 00: 00a10f11 00020800 fffa3203 178bfbff\n"
	"40000000 00: 40000001 4b4d564b 564b4d56 0000004d\n"
	"80000000 00: 80000021 68747541 444d4163 69746e65\n"
	"80000001 00: 00a10f11 40000000 004003f3 2fd3fbff\n";

struct cpu_src {
	const char *name; /* file in shared/data/cpuid, or a label */
	const char *inline_dump;
};

static const struct cpu_src cpus[] = {
	{ "intel-core-i7-6700k-skylake", NULL }, /* 0: v4, 4 GP, 3 fixed, PDCM */
	{ "intel-xeon-8351n-icelake-sp", NULL }, /* 1: v5, ECX=f, 4 fixed */
	{ "intel-core-ultra9-288v-lunarlake-ecore", NULL }, /* 2: 23H fixed mask 77 */
	{ "intel-core-ultra9-288v-lunarlake-pcore", NULL }, /* 3: 23H GP mask 3ff */
	{ "intel-core2-x6800-conroe", NULL }, /* 4: v2, EDX=0 */
	{ "intel-core2-qx9650-yorkfield", NULL }, /* 5: v2, EDX[4:0]=3 */
	{ "intel-pentium-pro", NULL }, /* 6: P6 legacy */
	{ "p5-plain", p5_plain }, /* 7 */
	{ "p5-mmx", p5_mmx }, /* 8 */
	{ "p4-xeon-l3", p4_xeon_l3 }, /* 9 */
	{ "p4-no-l3", p4_no_l3 }, /* 10 */
	{ "amd-epyc-9654-zen4-genoa", NULL }, /* 11 */
	{ "amd-athlon64-2800-k8", NULL }, /* 12 */
	{ "vm-zero-0a", vm_zero }, /* 13 */
	{ "intel-celeron-215-yonah", NULL }, /* 14: v1, no fixed */
	{ "intel-core-i9-12900k-alderlake-pcore", NULL }, /* 15: hybrid P-core, no 23H */
	{ "intel-core-i9-12900k-alderlake-ecore", NULL }, /* 16: hybrid E-core, no 23H */
	{ "vm-family-13h", vm_fam13 }, /* 17: family 13H, 0AH zero */
	{ "amd-ryzen9-9950x-zen5-graniteridge", NULL }, /* 18: PerfMonV2, 16 DF counters */
	{ "amd-epyc-7742-zen2-rome", NULL }, /* 19: no PerfMonV2: 4 DF counters */
	{ "amd-family-16h-jaguar", amd_f16_jaguar }, /* 20: L2I counters */
	{ "qemu-kvm64", kvm64 }, /* 21: not NetBurst */
	{ "amd-kvm-guest", amd_guest }, /* 22: PMU hidden */
};

static struct pmon_cpu_info decoded[sizeof(cpus) / sizeof(cpus[0])];

static int setup(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cpus) / sizeof(cpus[0]); i++) {
		struct pmon_cpuid *c;
		char path[512];

		if (cpus[i].inline_dump) {
			c = pmon_cpuid__new_buf(cpus[i].inline_dump, strlen(cpus[i].inline_dump),
						cpus[i].name);
		} else {
			snprintf(path, sizeof(path), "%s/%s.txt", PMON_CPUID_DIR, cpus[i].name);
			c = pmon_cpuid__new_file(path);
		}
		if (!c || pmon_cpu_decode(c, &decoded[i]))
			return -1;
		pmon_cpuid__free(c);
	}
	return 0;
}

enum { OK = 0, BAD = -PMON_ERRNO__RDPMC_RULE, UNK = -PMON_ERRNO__RDPMC_UNKNOWN };

struct enc_row {
	int line, cpu;
	enum pmon_pmc_type type;
	unsigned index;
	bool fast;
	enum pmon_tristate metrics;
	int want;
	uint32_t ecx; /* expected ECX when valid */
	unsigned width; /* expected width when valid */
	const char *rule; /* substring of the rule text */
};

#define R(...)                                                                                     \
	{                                                                                          \
		__LINE__, __VA_ARGS__                                                              \
	}
#define GP PMON_PMC_GP
#define FX PMON_PMC_FIXED
#define MT PMON_PMC_METRICS
#define LG PMON_PMC_LEGACY
#define NO PMON_NO
#define YES PMON_YES
#define UNKN PMON_UNKNOWN

static const struct enc_row enc_rows[] = {
	/* GP: index < CPUID.0AH:EAX[15:8] */
	R(0, GP, 0, 0, NO, OK, 0x0, 48, "< CPUID.0AH:EAX[15:8] = 4"),
	R(0, GP, 3, 0, NO, OK, 0x3, 48, "GP index 3"),
	R(0, GP, 4, 0, NO, BAD, 0, 0, "must be < CPUID.0AH:EAX[15:8] = 4"),
	R(0, GP, 0x100, 0, NO, BAD, 0, 0, "ECX[15:8] must be 0"),
	/* Fixed: EDX[4:0] > x or ECX[x] = 1; ECX[15:5] = 0 */
	R(0, FX, 0, 0, NO, OK, 0x40000000, 48, "EDX[4:0] = 3 > 0"),
	R(0, FX, 2, 0, NO, OK, 0x40000002, 48, "EDX[4:0] = 3 > 2"),
	R(0, FX, 3, 0, NO, BAD, 0, 0, "needs CPUID.0AH:EDX[4:0] > 3 or CPUID.0AH:ECX[3] = 1"),
	R(0, FX, 32, 0, NO, BAD, 0, 0, "ECX[15:5] must be 0"),
	R(1, FX, 3, 0, NO, OK, 0x40000003, 48, "EDX[4:0] = 4 > 3"),
	R(2, FX, 3, 0, NO, BAD, 0, 0, "CPUID.23H.01H:EBX[3] = 0"),
	R(2, FX, 4, 0, NO, OK, 0x40000004, 48, "CPUID.23H.01H:EBX[4] = 1"),
	R(2, FX, 6, 0, NO, OK, 0x40000006, 48, "EBX[6] = 1"),
	R(2, FX, 7, 0, NO, BAD, 0, 0, "EBX[7] = 0"),
	R(3, GP, 9, 0, NO, OK, 0x9, 48, "CPUID.23H.01H:EAX[9] = 1"),
	R(3, GP, 10, 0, NO, BAD, 0, 0, "EAX[10] = 0"),
	/* Disputed: Conroe reads EDX[4:0] = 0 but has 3 fixed counters;
	 * Linux assumes 3 outside a VM, and pmon follows it. */
	R(4, FX, 0, 0, NO, OK, 0x40000000, 40, "EDX[4:0] = 0 misreports"),
	R(4, FX, 2, 0, NO, OK, 0x40000002, 40, "Linux intel_pmu_init() assumes 3"),
	R(4, FX, 3, 0, NO, BAD, 0, 0, "needs CPUID.0AH:EDX[4:0] > 3"),
	/* Disputed: Core 2's RDPMC honours ECX[31] (fast read), Skylake's not */
	R(4, GP, 1, 1, NO, OK, 0x80000001, 32, "ECX[31] fast read (Core Solo/Duo, Core 2)"),
	R(5, FX, 1, 1, NO, OK, 0xc0000001, 32, "fast read"),
	R(4, GP, 2, 1, NO, BAD, 0, 0, "must be < CPUID.0AH:EAX[15:8] = 2"),
	R(14, GP, 0, 1, NO, OK, 0x80000000, 32, "Core Solo/Duo"),
	R(4, GP, 1, 0, NO, OK, 0x1, 40, "< CPUID.0AH:EAX[15:8] = 2"),
	R(5, FX, 2, 0, NO, OK, 0x40000002, 40, "EDX[4:0] = 3 > 2"),
	R(14, FX, 0, 0, NO, BAD, 0, 0, "EDX[4:0] = 0"),
	/* #13.2: a hybrid P-core without 23H is not capped at 0AH's E-core
	 * subset (Linux's cpu_core: + 2 GP, + 1 fixed); the E-core is, and
	 * each rule names its core type. */
	R(15, GP, 7, 0, NO, OK, 0x7, 48, "GP index 7 < 8 on a P-core"),
	R(15, GP, 8, 0, NO, BAD, 0, 0, "must be < 8 on a P-core"),
	R(15, FX, 3, 0, NO, OK, 0x40000003, 48, "fixed index 3 on a P-core"),
	R(16, GP, 5, 0, NO, OK, 0x5, 48, "< CPUID.0AH:EAX[15:8] = 6 (E-core)"),
	R(16, GP, 6, 0, NO, BAD, 0, 0, "must be < CPUID.0AH:EAX[15:8] = 6"),
	R(16, FX, 3, 0, NO, BAD, 0, 0, "needs CPUID.0AH:EDX[4:0] > 3"),
	/* #13.7: family 13H with 0AH version 0 is no perfmon, not NetBurst */
	R(17, LG, 0, 0, NO, BAD, 0, 0, "no counters are enumerated"),
	/* Metrics: IA32_PERF_CAPABILITIES[15] */
	R(0, MT, 0, 0, YES, OK, 0x20000000, 0, "PERF_METRICS_AVAILABLE = 1"),
	R(0, MT, 3, 0, NO, BAD, 0, 0, "it is 0"),
	R(0, MT, 0, 0, UNKN, UNK, 0, 0, "unknown"),
	R(6, MT, 0, 0, YES, BAD, 0, 0, "need architectural perfmon"),
	/* Fast read is a legacy mode */
	R(0, GP, 0, 1, NO, BAD, 0, 0, "fast read"),
	/* Legacy: ECX[30:0] index, ECX[31] fast read where supported */
	R(6, LG, 0, 0, NO, OK, 0x0, 40, "PerfCtr0/1"),
	R(6, LG, 1, 0, NO, OK, 0x1, 40, "index 1"),
	R(6, LG, 2, 0, NO, BAD, 0, 0, "valid: 0-1"),
	R(6, LG, 0, 1, NO, BAD, 0, 0, "fast read is not supported"),
	R(6, FX, 0, 0, NO, BAD, 0, 0, "need architectural perfmon"),
	R(7, LG, 0, 0, NO, BAD, 0, 0, "has no RDPMC"),
	R(8, LG, 1, 0, NO, OK, 0x1, 40, "CTR0/CTR1"),
	R(9, LG, 17, 1, NO, OK, 0x80000011, 32, "fast read returns bits 31:0"),
	R(9, LG, 17, 0, NO, OK, 0x11, 40, "40 bits"),
	R(9, LG, 18, 0, NO, OK, 0x12, 32, "L3-Xeon 32-bit"),
	R(9, LG, 25, 0, NO, OK, 0x19, 32, "18-25"),
	R(9, LG, 18, 1, NO, BAD, 0, 0, "fast read is not supported"),
	R(9, LG, 26, 0, NO, BAD, 0, 0, "valid: 0-17, 18-25"),
	R(10, LG, 18, 0, NO, BAD, 0, 0, "valid: 0-17"),
	R(11, LG, 5, 0, NO, OK, 0x5, 48, "core PerfCtr"),
	R(11, LG, 9, 0, NO, OK, 0x9, 48, "northbridge"),
	R(11, LG, 15, 0, NO, OK, 0xf, 48, "L3 PerfCtr"),
	R(12, LG, 4, 0, NO, BAD, 0, 0, "valid: 0-3"),
	/* #24.3: PerfMonV2 DF counters 4-15 (80000022H:EBX[15:10] = 16) are
	 * RDPMC 16-27, past the L3 block (Linux amd_uncore_df_add()). */
	R(11, LG, 16, 0, NO, OK, 0x10, 48, "DF PerfCtr 4 and up"),
	R(11, LG, 27, 0, NO, OK, 0x1b, 48, "index 27 in 16-27"),
	R(11, LG, 28, 0, NO, BAD, 0, 0, "valid: 0-5, 6-9, 10-15, 16-27"),
	R(18, LG, 9, 0, NO, OK, 0x9, 48, "northbridge/DF"),
	R(18, LG, 20, 0, NO, OK, 0x14, 48, "DF PerfCtr 4 and up"),
	R(19, LG, 16, 0, NO, BAD, 0, 0, "valid: 0-5, 6-9, 10-15"),
	/* #24.4: below family 17H ECX 10-13 are the 4 L2I counters (Linux
	 * amd_uncore: NUM_COUNTERS_L2), not 6 L3 ones. */
	R(20, LG, 13, 0, NO, OK, 0xd, 48, "L2I PerfCtr"),
	R(20, LG, 14, 0, NO, BAD, 0, 0, "valid: 0-5, 6-9, 10-13"),
	R(19, LG, 15, 0, NO, OK, 0xf, 48, "L3 PerfCtr"),
	/* #24.2: a VM's CPUID is no NetBurst nor AMD legacy PMU */
	R(21, LG, 17, 0, NO, BAD, 0, 0, "no counters are enumerated"),
	R(21, LG, 0, 1, NO, BAD, 0, 0, "no counters are enumerated"),
	R(22, LG, 3, 0, NO, BAD, 0, 0, "no counters are enumerated"),
	R(13, GP, 0, 0, NO, BAD, 0, 0, "no counters are enumerated"),
};

static void test_rdpmc__encode_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(enc_rows) / sizeof(enc_rows[0]); i++) {
		const struct enc_row *r = &enc_rows[i];
		struct pmon_rdpmc_sel sel;
		int err = pmon_rdpmc_encode(&decoded[r->cpu].pm, r->type, r->index, r->fast,
					    r->metrics, &sel);

		print_message("row at line %d (%s): %s\n", r->line, cpus[r->cpu].name, sel.rule);
		assert_int_equal(err, r->want);
		assert_non_null(strstr(sel.rule, r->rule));
		if (err == 0) {
			assert_int_equal(sel.ecx, r->ecx);
			assert_int_equal(sel.width, r->width);
			/* The raw ECX value validates the same way. */
			struct pmon_rdpmc_sel again;
			assert_int_equal(pmon_rdpmc_validate(&decoded[r->cpu].pm, sel.ecx,
							     r->metrics, &again),
					 0);
			assert_int_equal(again.index, r->index);
		} else {
			/* The error detail names the rule too. */
			assert_non_null(strstr(pmon_errdetail(), r->rule));
		}
	}
}

struct ecx_row {
	int line, cpu;
	uint32_t ecx;
	int want;
	const char *rule;
};

static const struct ecx_row ecx_rows[] = {
	{ __LINE__, 0, 0x00010000, BAD, "ECX[31:16] = 0001H is not a PMC type" },
	{ __LINE__, 0, 0x80000000, BAD, "not defined with architectural" },
	{ __LINE__, 0, 0xc0000000, BAD, "not defined with architectural" },
	{ __LINE__, 0, 0x40000001, OK, "fixed index 1" },
	{ __LINE__, 0, 0x40000020, BAD, "ECX[15:5] must be 0" },
	{ __LINE__, 6, 0x80000000, BAD, "fast read is not supported" },
	{ __LINE__, 9, 0x80000000, OK, "fast read" },
	{ __LINE__, 9, 0x7fffffff, BAD, "is not a counter index" },
	{ __LINE__, 4, 0x80000000, OK, "fast read" },
	{ __LINE__, 4, 0xa0000000, BAD, "no fast read of performance metrics" },
};

static void test_rdpmc__validate_raw_ecx(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(ecx_rows) / sizeof(ecx_rows[0]); i++) {
		const struct ecx_row *r = &ecx_rows[i];
		struct pmon_rdpmc_sel sel;
		int err = pmon_rdpmc_validate(&decoded[r->cpu].pm, r->ecx, PMON_NO, &sel);

		print_message("row at line %d: %s\n", r->line, sel.rule);
		assert_int_equal(err, r->want);
		assert_non_null(strstr(sel.rule, r->rule));
	}
}

/* Width-aware arithmetic: the Pentium tools note's 64-bit subtract with
 * borrow, at the widths the CPU enumerates. */
static void test_rdpmc__delta_and_sign_extension(void **state)
{
	(void)state;
	/* The seed's example: EndL < StartL borrows from the high part. */
	uint32_t start_h = 0x12, start_l = 0xfffffff0, end_h = 0x13, end_l = 0x10;
	uint64_t start = (uint64_t)start_h << 32 | start_l, end = (uint64_t)end_h << 32 | end_l;
	assert_int_equal(pmon_pmc_delta(start, end, 40), 0x20);
	/* A 40-bit counter that wrapped. */
	assert_int_equal(pmon_pmc_delta(0xfffffffff0ULL, 0x10, 40), 0x20);
	/* A 48-bit counter that wrapped; a fixed 40-bit mask (or jevents'
	 * 48 on a 40-bit counter) would be wrong. */
	assert_int_equal(pmon_pmc_delta(0xffffffffffffULL, 5, 48), 6);
	assert_int_equal(pmon_pmc_delta(0, 0x10000000000ULL, 48), 0x10000000000ULL);
	assert_int_equal(pmon_pmc_delta(0, 0x10000000000ULL, 40), 0); /* 2^40 wraps to 0 */
	assert_int_equal(pmon_pmc_delta(0, 0xffffffffULL, 32), 0xffffffffULL);
	assert_int_equal(pmon_pmc_delta(1, 0, 64), UINT64_MAX);
	assert_int_equal(pmon_pmc_mask(48), 0xffffffffffffULL);
	assert_int_equal(pmon_pmc_sign_extend(0x800000000000ULL, 48), -0x800000000000LL);
	assert_int_equal(pmon_pmc_sign_extend(0x7fffffffffffULL, 48), 0x7fffffffffffLL);
	assert_int_equal(pmon_pmc_sign_extend(0xffffffffffULL, 40), -1);
	assert_int_equal(pmon_pmc_sign_extend(0xffffffffffULL, 48), 0xffffffffffLL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rdpmc__encode_table),
		cmocka_unit_test(test_rdpmc__validate_raw_ecx),
		cmocka_unit_test(test_rdpmc__delta_and_sign_extension),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
