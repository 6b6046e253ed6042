// SPDX-License-Identifier: MIT
/* The MSR table, parsing and field decoding, and file-backed access. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <pmon/pmon.h>

#include "fake-msr.h"

static void test_msr__names_and_addresses(void **state)
{
	uint32_t a;

	(void)state;
	assert_int_equal(pmon_msr_parse_addr("IA32_PERF_GLOBAL_CTRL", &a), 0);
	assert_int_equal(a, 0x38f);
	assert_int_equal(pmon_msr_parse_addr("ia32_pqr_assoc", &a), 0);
	assert_int_equal(a, 0xc8f);
	assert_int_equal(pmon_msr_parse_addr("cesr", &a), 0);
	assert_int_equal(a, 0x11);
	assert_int_equal(pmon_msr_parse_addr("0xC0010200", &a), 0);
	assert_string_equal(pmon_msr_by_addr(a)->name, "AMD_PERF_CTL0");
	assert_int_equal(pmon_msr_parse_addr("17", &a), 0);
	assert_int_equal(a, 17);
	assert_int_equal(pmon_msr_parse_addr("0x100000000", &a), -PMON_ERRNO__PARSE);
	assert_int_equal(pmon_msr_parse_addr("NOPE", &a), -PMON_ERRNO__PARSE);
	assert_int_equal(pmon_msr_parse_addr("", &a), -PMON_ERRNO__PARSE);
	assert_string_equal(pmon_msr_by_addr(0x18d)->name, "IA32_PERFEVTSEL7");
	assert_string_equal(pmon_msr_by_addr(0x30c)->name, "IA32_FIXED_CTR3");
}

static void test_msr__decode(void **state)
{
	char buf[1024];

	(void)state;
	/* cycles at any ring, enabled: SDM Table 21-1 event 3CH */
	pmon_msr_decode(0x186, 0x43003c, buf, sizeof(buf));
	assert_non_null(strstr(buf, "EventSelect=0x3c UMask=0 USR=0x1 OS=0x1"));
	assert_non_null(strstr(buf, "EN=0x1 INV=0 CMASK=0"));
	pmon_msr_decode(0x38d, 0x0b3, buf, sizeof(buf));
	assert_non_null(strstr(buf, "EN0=0x3"));
	assert_non_null(strstr(buf, "PMI1=0x1"));
	pmon_msr_decode(0xc8e, 1ULL << 63 | 42, buf, sizeof(buf));
	assert_non_null(strstr(buf, "Data=0x2a Unavailable=0 Error=0x1"));
	pmon_msr_decode(0x11, 0x83, buf, sizeof(buf));
	assert_non_null(strstr(buf, "CTR0: event 03H DATA_READ_MISS, events at CPL 3"));
	assert_int_equal(pmon_msr_decode(0x12, 5, buf, sizeof(buf)), 0); /* a plain counter */
}

/* #24.3: the RMID fields are ceil(log2(1 + CPUID.(0FH,0):EBX)) bits (SDM
 * 17.16.6): RMID 1500 on Zen 5 (4096 RMIDs, 12 bits) is 0x5dc, not the
 * 0x1dc of a fixed 10-bit field; on Cascade Lake (10 bits) a bit above is
 * reserved and not part of the RMID; with no CPU known, the whole room. */
static void test_msr__decode_rmid_width(void **state)
{
	static const struct {
		int line;
		const char *cpu; /* NULL: no CPU */
		uint32_t addr;
		uint64_t value;
		const char *want;
	} t[] = {
		{ __LINE__, "amd-epyc-9655-zen5-turin", 0xc8f, 0x3000005dcULL,
		  "RMID=0x5dc CLOS=0x3" },
		{ __LINE__, "amd-epyc-9655-zen5-turin", 0xc8d, 1500ULL << 32 | 2,
		  "EvtID=0x2 RMID=0x5dc" },
		{ __LINE__, "intel-xeon-4214-cascadelake-sp", 0xc8f, 0x5fULL | 1ULL << 10,
		  "RMID=0x5f CLOS=0" },
		{ __LINE__, "intel-xeon-4214-cascadelake-sp", 0xc8d,
		  (0x5fULL | 1ULL << 10) << 32 | 1, "EvtID=0x1 RMID=0x5f" },
		{ __LINE__, NULL, 0xc8f, 1500, "RMID=0x5dc CLOS=0" },
		{ __LINE__, NULL, 0xc8d, 1500ULL << 32 | 3, "EvtID=0x3 RMID=0x5dc" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct pmon_cpu_info ci;
		char path[512], buf[256];
		if (t[i].cpu) {
			snprintf(path, sizeof(path), "%s/%s.txt", PMON_CPUID_DIR, t[i].cpu);
			struct pmon_cpuid *c = pmon_cpuid__new_file(path);
			assert_non_null(c);
			assert_int_equal(pmon_cpu_decode(c, &ci), 0);
			pmon_cpuid__free(c);
		}
		pmon_msr_decode_cpu(t[i].cpu ? &ci : NULL, t[i].addr, t[i].value, buf, sizeof(buf));
		if (strcmp(buf, t[i].want))
			fail_msg("line %d: '%s', want '%s'", t[i].line, buf, t[i].want);
	}
}

static void test_msr__file_device(void **state)
{
	char path[] = "/tmp/pmon-msr-XXXXXX", pattern[64];
	int fd = mkstemp(path);
	uint64_t v;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 8192), 0);
	close(fd);
	assert_int_equal(pmon_msr_write(path, 0, 0x38f, 0x70000000fULL), 0);
	assert_int_equal(pmon_msr_read(path, 0, 0x38f, &v), 0);
	assert_int_equal(v, 0x70000000fULL);
	/* beyond the end of a regular file: a short read, explained */
	assert_int_equal(pmon_msr_read(path, 0, 0xc0010000, &v), -EIO);
	assert_non_null(strstr(pmon_errdetail(), "short read"));
	/* a %d pattern for per-CPU files; only one %d allowed */
	snprintf(pattern, sizeof(pattern), "/nonexistent/cpu%%d/msr");
	assert_int_equal(pmon_msr_read(pattern, 3, 0x10, &v), -ENOENT);
	assert_non_null(strstr(pmon_errdetail(), "/nonexistent/cpu3/msr"));
	assert_int_equal(pmon_msr_read("/tmp/%d%d", 0, 0x10, &v), -EINVAL);
	unlink(path);
}

/* ---- the MSR counting backend against a fake device that acts like the
 * hardware (tests/unit/fake-msr.h), on the real Skylake dump's figures ---- */

static struct pmon_cpu_info skl;
static struct fake_msr fake;
static struct pmon__msr_ops ops;

static void skl_setup(bool fw_write)
{
	char path[512];
	struct pmon_cpuid *c;

	snprintf(path, sizeof(path), "%s/intel-core-i7-6700k-skylake.txt", PMON_CPUID_DIR);
	c = pmon_cpuid__new_file(path);
	assert_non_null(c);
	assert_int_equal(pmon_cpu_decode(c, &skl), 0);
	pmon_cpuid__free(c);
	assert_true(skl.pm.perf_capabilities); /* PDCM: PERF_CAPABILITIES exists */
	memset(&fake, 0, sizeof(fake));
	fake.ncpus = 2;
	fake.gp = skl.pm.gp_count;
	fake.width = skl.pm.gp_width;
	fake.fixed = skl.pm.fixed_count;
	fake.fixed_width = skl.pm.fixed_width;
	fake.pdcm = true;
	fake.fw_write = fw_write;
	fake_msr_plug(&fake, &ops);
}

static struct pmon_evlist *events(const char *spec)
{
	char dir[] = "/tmp/pmon-nosys-XXXXXX";
	struct pmon_event_opts o = { .sz = sizeof(o), .no_pfm = true };
	struct pmon_evlist *l;

	assert_non_null(mkdtemp(dir));
	o.sysfs_root = dir; /* no PMUs: no hybrid expansion */
	l = pmon_evlist__new(&o);
	assert_non_null(l);
	assert_int_equal(pmon_evlist__add(l, spec), 0);
	rmdir(dir);
	return l;
}

/* The model refuses what the hardware refuses and truncates as it does. */
static void test_msr__fake_device_is_the_hardware(void **state)
{
	uint64_t v;

	(void)state;
	skl_setup(false);
	/* IA32_PMC0 <- 0x8000_8000_0000: bits 31:0 = 8000_0000, sign-extended */
	assert_int_equal(pmon_msr_write(NULL, 0, 0xc1, 0x800080000000ULL), 0);
	assert_int_equal(pmon_msr_read(NULL, 0, 0xc1, &v), 0);
	assert_int_equal(v, 0xffff80000000ULL);
	assert_int_equal(v, pmon_msr_pmc_written(0x800080000000ULL, 48, false));
	/* no FW_WRITE: no IA32_A_PMC0 */
	assert_int_equal(pmon_msr_write(NULL, 0, 0x4c1, 5), -EIO);
	assert_non_null(strstr(pmon_errdetail(), "faulted"));
	/* reserved bits: GLOBAL_CTRL bit 4 (4 GP counters), EVTSEL bit 32 */
	assert_int_equal(pmon_msr_write(NULL, 0, 0x38f, 1ULL << 4), -EIO);
	assert_int_equal(pmon_msr_write(NULL, 0, 0x38f, 0x70000000fULL), 0);
	assert_int_equal(pmon_msr_write(NULL, 0, 0x186, 1ULL << 32), -EIO);
	assert_int_equal(pmon_msr_write(NULL, 0, 0x345, 0), -EIO); /* read-only */
	assert_int_equal(pmon_msr_read(NULL, 0, 0x1a0, &v), -EIO); /* not modelled */
	fake_msr_unplug();
	skl_setup(true);
	assert_int_equal(pmon_msr_write(NULL, 0, 0x4c1, 0x800080000000ULL), 0);
	assert_int_equal(pmon_msr_read(NULL, 0, 0xc1, &v), 0);
	assert_int_equal(v, 0x800080000000ULL);
	assert_int_equal(pmon_msr_write(NULL, 0, 0x4c1, 1ULL << 48), -EIO);
	fake_msr_unplug();
}

/* #13.4a: GLOBAL_CTRL bits alone (Linux leaves them all set) are not "busy";
 * an enabled IA32_PERFEVTSELx is, and then nothing is written. */
static void test_msr__counting_refuses_enables_not_global_ctrl(void **state)
{
	struct pmon_evlist *l = events("cycles,instructions");
	struct pmon_msr_counting *m = NULL;
	int cpus[] = { 0, 1 };
	uint64_t vals[2];

	(void)state;
	skl_setup(false);
	fake.global[0] = fake.global[1] = 0x70000000fULL; /* intel_pmu_enable_all() */
	assert_non_null(m = pmon_msr_counting__start(NULL, &skl, l, cpus, 2, false));
	assert_int_equal(fake.global[1], 0x70000000fULL);
	assert_int_equal(fake.evtsel[1][0], 0x43003c);
	fake.pmc[1][0] = 1000; /* counted */
	assert_int_equal(pmon_msr_counting__stop(m, vals), 0);
	assert_int_equal(vals[0], 1000);
	assert_int_equal(pmon_msr_counting__restore(m), 0);
	assert_int_equal(fake.global[0], 0x70000000fULL);
	assert_int_equal(fake.evtsel[0][0], 0);
	pmon_msr_counting__free(m);

	fake.evtsel[1][1] = 0x4300c0; /* someone counts instructions on CPU 1 */
	memcpy(fake.pmc[0], (uint64_t[]){ 7, 8 }, 2 * sizeof(uint64_t));
	m = NULL;
	assert_null(m = pmon_msr_counting__start(NULL, &skl, l, cpus, 2, false));
	assert_int_equal(errno, EBUSY);
	assert_null(m);
	assert_non_null(strstr(pmon_errdetail(), "IA32_PERFEVTSEL1 on CPU 1 is enabled"));
	assert_int_equal(fake.pmc[0][0], 7); /* untouched */
	assert_int_equal(fake.evtsel[1][1], 0x4300c0);
	fake_msr_unplug();
	pmon_evlist__free(l);
}

/* #13.4b: a saved 48-bit counter value survives the restore only through
 * IA32_A_PMCx; without FW_WRITE the loss is said, not hidden. */
static void test_msr__counting_restore_full_width(void **state)
{
	struct pmon_evlist *l = events("cycles");
	struct pmon_msr_counting *m = NULL;
	const struct pmon_msr_write_rec *w;
	int cpus[] = { 0 };
	uint64_t vals[1], saved = 0x812345678ULL; /* wider than 32 bits */
	size_t n;
	bool a_pmc = false;

	(void)state;
	skl_setup(true);
	fake.pmc[0][0] = saved;
	assert_non_null(m = pmon_msr_counting__start(NULL, &skl, l, cpus, 1, false));
	assert_int_equal(pmon_msr_counting__stop(m, vals), 0);
	assert_int_equal(pmon_msr_counting__restore(m), 0);
	assert_int_equal(fake.pmc[0][0], saved);
	w = pmon_msr_counting__writes(m, &n);
	for (size_t i = 0; i < n; i++)
		a_pmc |= w[i].restore && w[i].addr == 0x4c1 && w[i].value == saved;
	assert_true(a_pmc);
	pmon_msr_counting__free(m);
	fake_msr_unplug();

	skl_setup(false);
	fake.pmc[0][0] = saved;
	m = NULL;
	assert_non_null(m = pmon_msr_counting__start(NULL, &skl, l, cpus, 1, false));
	assert_int_equal(pmon_msr_counting__stop(m, vals), 0);
	assert_int_equal(pmon_msr_counting__restore(m), 0);
	assert_int_equal(fake.pmc[0][0], 0x12345678ULL);
	assert_non_null(strstr(pmon_errdetail(), "sign-extended low 32 bits"));
	pmon_msr_counting__free(m);
	fake_msr_unplug();
	pmon_evlist__free(l);
}

/* #13.3: ref-cycles is fixed counter 2 (TSC rate), not GP event 3CH/01H. */
static void test_msr__counting_ref_cycles_on_fixed_2(void **state)
{
	struct pmon_evlist *l = events("ref-cycles,cycles:u");
	struct pmon_msr_counting *m = NULL;
	const struct pmon_msr_write_rec *w;
	int cpus[] = { 0 };
	uint64_t vals[2];
	size_t n;

	(void)state;
	skl_setup(false);
	fake.fixed_ctrl[0] = 0x0b0; /* fixed 1 in use by someone: kept */
	fake.global[0] = 0x70000000fULL;
	assert_non_null(m = pmon_msr_counting__start(NULL, &skl, l, cpus, 1, false));
	assert_int_equal(fake.fixed_ctrl[0], 0x3b0); /* EN2 = 3: OS and USR */
	assert_int_equal(fake.evtsel[0][0], 0x41003c); /* cycles:u on PMC0 */
	w = pmon_msr_counting__writes(m, &n);
	for (size_t i = 0; i < n; i++)
		assert_false(w[i].addr >= 0x186 && w[i].addr < 0x18e &&
			     (w[i].value & 0xffff) == 0x013c);
	fake.fixed_ctr[0][2] = 4000;
	fake.pmc[0][0] = 3000;
	assert_int_equal(pmon_msr_counting__stop(m, vals), 0);
	assert_int_equal(vals[0], 4000);
	assert_int_equal(vals[1], 3000);
	assert_int_equal(pmon_msr_counting__restore(m), 0);
	assert_int_equal(fake.fixed_ctrl[0], 0x0b0);
	assert_int_equal(fake.global[0], 0x70000000fULL);
	pmon_msr_counting__free(m);

	/* fixed counter 2 enabled by someone else: refused */
	fake.fixed_ctrl[0] = 0x200;
	m = NULL;
	assert_null(m = pmon_msr_counting__start(NULL, &skl, l, cpus, 1, false));
	assert_int_equal(errno, EBUSY);
	assert_non_null(strstr(pmon_errdetail(), "IA32_FIXED_CTR_CTRL"));
	fake_msr_unplug();
	pmon_evlist__free(l);
}

/* #14.6: a pmon killed while counting (here: freed without a restore) leaves
 * a state file; the next start refuses, naming it, and replaying the file
 * puts every register back as it was, then removes it. */
static void test_msr__counting_state_file_after_a_kill(void **state)
{
	struct pmon_evlist *l = events("cycles,ref-cycles,instructions");
	struct pmon_msr_counting *m = NULL;
	struct pmon_msr_write_rec *w = NULL;
	char dir[] = "/tmp/pmon-msrstate-XXXXXX", path[64], bad[80];
	int cpus[] = { 0, 1 };
	size_t n = 0;

	(void)state;
	skl_setup(true);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/state", dir);
	struct pmon_msr_counting_opts o = { .sz = sizeof(o), .state_file = path };
	fake.global[0] = fake.global[1] = 0x70000000fULL;
	fake.pmc[0][0] = 0x812345678ULL; /* wider than 32 bits: through IA32_A_PMC0 */
	fake.pmc[1][1] = 77;
	fake.fixed_ctr[1][2] = 99;
	fake.fixed_ctrl[0] = 0x3; /* fixed counter 0 is someone else's: kept */
	struct fake_msr before = fake;

	assert_non_null(m = pmon_msr_counting__start_opts(NULL, &skl, l, cpus, 2, false, &o));
	assert_int_equal(access(path, F_OK), 0);
	assert_int_equal(fake.evtsel[0][0], 0x43003c);
	pmon_msr_counting__free(m); /* SIGKILL: nothing restored */
	m = NULL;

	/* A fake "pid" that is gone (a killed pmon's): refused, and nothing written. */
	FILE *f = fopen(path, "r+");
	assert_non_null(f);
	char buf[4096];
	size_t len = fread(buf, 1, sizeof(buf) - 1, f);
	buf[len] = '\0';
	char *pidline = strstr(buf, "pid ");
	assert_non_null(pidline);
	fclose(f);
	char *rest = strchr(pidline, '\n');
	f = fopen(path, "w");
	fprintf(f, "pmon-msr-state 1\npid 999999999%s", rest);
	fclose(f);
	unsigned long long sel0 = fake.evtsel[0][0];
	assert_null(m = pmon_msr_counting__start_opts(NULL, &skl, l, cpus, 2, false, &o));
	assert_int_equal(errno, EBUSY);
	assert_null(m);
	assert_non_null(strstr(pmon_errdetail(), "left the counters programmed"));
	assert_int_equal(fake.evtsel[0][0], sel0);

	/* A damaged copy writes nothing. */
	snprintf(bad, sizeof(bad), "%s/bad", dir);
	f = fopen(bad, "w");
	fprintf(f, "pmon-msr-state 1\npid 999999999\nwrite 0 0x38f 0\nwrite 0 zz\n");
	fclose(f);
	assert_int_equal(pmon_msr_state__restore(bad, &w, &n), -EINVAL);
	free(w);
	assert_int_equal(fake.evtsel[0][0], sel0);

	assert_int_equal(pmon_msr_state__restore(path, &w, &n), 0);
	assert_true(n > 0);
	free(w);
	assert_int_not_equal(access(path, F_OK), 0); /* removed */
	for (unsigned c = 0; c < 2; c++) {
		assert_int_equal(fake.global[c], before.global[c]);
		assert_int_equal(fake.fixed_ctrl[c], before.fixed_ctrl[c]);
		assert_memory_equal(fake.evtsel[c], before.evtsel[c], sizeof(fake.evtsel[c]));
		assert_memory_equal(fake.pmc[c], before.pmc[c], sizeof(fake.pmc[c]));
		assert_int_equal(fake.fixed_ctr[c][2], before.fixed_ctr[c][2]);
	}
	/* And counting works again. */
	assert_non_null(m = pmon_msr_counting__start_opts(NULL, &skl, l, cpus, 2, false, &o));
	assert_int_equal(pmon_msr_counting__restore(m), 0);
	assert_int_not_equal(access(path, F_OK), 0);
	pmon_msr_counting__free(m);
	unlink(bad);
	rmdir(dir);
	fake_msr_unplug();
	pmon_evlist__free(l);
}

/* #24.10: the NMI watchdog's presence refuses nothing: Linux puts it on
 * fixed counter 1, which pmon does not use. On a counter pmon needs, its
 * enable bit refuses the start like anyone's, and the watchdog is named. */
static void test_msr__counting_nmi_watchdog_is_a_collision_only(void **state)
{
	struct pmon_evlist *l = events("cycles,instructions");
	struct pmon_msr_counting *m = NULL;
	int cpus[] = { 0, 1 };
	uint64_t vals[2];

	(void)state;
	skl_setup(false);
	/* the watchdog's cycles on IA32_FIXED_CTR1: field 1 = OS | PMI (0xb) */
	fake.fixed_ctrl[0] = fake.fixed_ctrl[1] = 0xb0;
	fake.global[0] = fake.global[1] = 0x70000000fULL;
	assert_non_null(m = pmon_msr_counting__start(NULL, &skl, l, cpus, 2, true));
	assert_int_equal(fake.evtsel[0][0], 0x43003c);
	fake.pmc[0][0] = 10, fake.pmc[1][0] = 20;
	assert_int_equal(pmon_msr_counting__stop(m, vals), 0);
	assert_int_equal(vals[0], 30);
	assert_null(pmon_msr_counting__lost(m, 0));
	assert_int_equal(pmon_msr_counting__restore(m), 0);
	assert_int_equal(fake.fixed_ctrl[1], 0xb0); /* never touched */
	pmon_msr_counting__free(m);

	fake.evtsel[1][0] = 0x53003c; /* a watchdog that sits on PMC0 */
	m = NULL;
	assert_null(m = pmon_msr_counting__start(NULL, &skl, l, cpus, 2, true));
	assert_int_equal(errno, EBUSY);
	assert_non_null(strstr(pmon_errdetail(), "IA32_PERFEVTSEL0 on CPU 1 is enabled"));
	assert_non_null(strstr(pmon_errdetail(), "NMI watchdog"));
	fake_msr_unplug();
	pmon_evlist__free(l);
}

/* #24.5: perf schedules its own event onto pmon's counter mid-run: that
 * count is not pmon's. It is reported lost (0, with the reason), the
 * others still count, and the taken counter is left to its new owner. */
static void test_msr__counting_counter_taken_mid_run(void **state)
{
	struct pmon_evlist *l = events("cycles,instructions,ref-cycles");
	struct pmon_msr_counting *m = NULL;
	int cpus[] = { 0, 1 };
	uint64_t vals[3];

	(void)state;
	skl_setup(false);
	assert_non_null(m = pmon_msr_counting__start(NULL, &skl, l, cpus, 2, false));
	fake.pmc[0][0] = 5, fake.pmc[1][0] = 6;
	fake.pmc[0][1] = 7, fake.pmc[1][1] = 1000000;
	fake.fixed_ctr[0][2] = 40, fake.fixed_ctr[1][2] = 2;
	/* x86_schedule_events() on CPU 1 picks PMC1 for branch-misses, and
	 * perf programs fixed counter 1 there too */
	fake.evtsel[1][1] = 0x5300c5;
	fake.fixed_ctrl[1] |= 0xb0;
	assert_int_equal(pmon_msr_counting__stop(m, vals), 0);
	assert_int_equal(vals[0], 11);
	assert_null(pmon_msr_counting__lost(m, 0));
	assert_int_equal(vals[1], 0);
	assert_non_null(pmon_msr_counting__lost(m, 1));
	assert_non_null(strstr(pmon_msr_counting__lost(m, 1), "IA32_PERFEVTSEL1 on CPU 1"));
	assert_int_equal(vals[2], 42);
	assert_null(pmon_msr_counting__lost(m, 2));
	assert_int_equal(pmon_msr_counting__restore(m), 0);
	assert_int_equal(fake.evtsel[1][1], 0x5300c5); /* theirs, left alone */
	assert_int_equal(fake.global[1] & 2, 2); /* its GLOBAL_CTRL enable too */
	assert_int_equal(fake.global[1] & 1, 0); /* pmon's PMC0 bit put back (0) */
	assert_int_equal(fake.fixed_ctrl[1], 0xb0); /* their fixed counter 1 kept */
	assert_int_equal(fake.evtsel[0][1], 0); /* ours, put back */
	assert_int_equal(fake.evtsel[1][0], 0);
	pmon_msr_counting__free(m);

	/* the fixed counter's field rewritten; then GLOBAL_CTRL cleared */
	fake.evtsel[1][1] = 0; /* perf's events have ended */
	fake.fixed_ctrl[1] = 0;
	m = NULL;
	assert_non_null(m = pmon_msr_counting__start(NULL, &skl, l, cpus, 2, false));
	assert_int_equal(fake.fixed_ctrl[0], 0x300); /* pmon's: USR|OS, no PMI */
	fake.fixed_ctrl[0] = 0xb00; /* someone's OS|PMI */
	fake.global[1] &= ~1ULL;
	assert_int_equal(pmon_msr_counting__stop(m, vals), 0);
	assert_non_null(strstr(pmon_msr_counting__lost(m, 2), "IA32_FIXED_CTR_CTRL on CPU 0"));
	assert_non_null(strstr(pmon_msr_counting__lost(m, 0), "IA32_PERF_GLOBAL_CTRL on CPU 1"));
	assert_int_equal(pmon_msr_counting__restore(m), 0);
	assert_int_equal(fake.fixed_ctrl[0], 0xb00); /* theirs */
	assert_int_equal(fake.fixed_ctrl[1], 0);
	pmon_msr_counting__free(m);
	fake_msr_unplug();
	pmon_evlist__free(l);
}

static void decode_dump(const char *name, struct pmon_cpu_info *ci)
{
	char path[512];
	struct pmon_cpuid *c;

	snprintf(path, sizeof(path), "%s/%s", PMON_CPUID_DIR, name);
	assert_non_null(c = pmon_cpuid__new_file(path));
	assert_int_equal(pmon_cpu_decode(c, ci), 0);
	pmon_cpuid__free(c);
}

/* #24.4: Alder Lake, CPU 0 a P-core (8 GP), CPU 1 an E-core (6 GP). A
 * P-core's CPUID applied to both would program IA32_PERFEVTSEL6 on the
 * E-core, where the WRMSR faults mid-start; each CPU's own CPUID refuses
 * before any register is touched, naming the CPU. */
static void test_msr__counting_hybrid_per_cpu(void **state)
{
	static struct pmon_cpu_info p, e;
	struct pmon_evlist *l7 = events("r00c0,r003c,r00c4,r00c5,r412e,r4f2e,r01c2");
	struct pmon_evlist *l6 = events("r00c0,r003c,r00c4,r00c5,r412e,r4f2e");
	const struct pmon_cpu_info *per[] = { &p, &e };
	struct pmon_msr_counting_opts o = { .sz = sizeof(o), .cpu_info = per };
	struct pmon_msr_counting *m = NULL;
	int cpus[] = { 0, 1 };
	uint64_t vals[7];

	(void)state;
	decode_dump("intel-core-i9-12900k-alderlake-pcore.txt", &p);
	decode_dump("intel-core-i9-12900k-alderlake-ecore.txt", &e);
	assert_int_equal(p.pm.gp_count, 8);
	assert_int_equal(e.pm.gp_count, 6);
	memset(&fake, 0, sizeof(fake));
	fake.ncpus = 2;
	fake.gp = 8, fake.gp_cpu[1] = 6;
	fake.width = 48, fake.fixed = 3, fake.fixed_width = 48, fake.pdcm = true;
	fake_msr_plug(&fake, &ops);

	assert_null(m = pmon_msr_counting__start_opts(NULL, &p, l7, cpus, 2, false, &o));
	assert_int_equal(errno, E2BIG);
	assert_non_null(strstr(pmon_errdetail(), "CPU 1 (an E-core) has 6"));
	assert_int_equal(fake.refused, 0); /* nothing was tried */
	assert_int_equal(fake.evtsel[0][0], 0);

	m = pmon_msr_counting__start_opts(NULL, &p, l6, cpus, 2, false, &o);
	if (!m)
		fail_msg("%s", pmon_errdetail());
	assert_int_equal(fake.evtsel[1][5], 0x434f2e); /* the E-core's last GP counter */
	fake.pmc[0][5] = 1, fake.pmc[1][5] = 2;
	assert_int_equal(pmon_msr_counting__stop(m, vals), 0);
	assert_int_equal(vals[5], 3);
	assert_int_equal(pmon_msr_counting__restore(m), 0);
	assert_int_equal(fake.refused, 0);
	pmon_msr_counting__free(m);
	fake_msr_unplug();
	pmon_evlist__free(l7);
	pmon_evlist__free(l6);
}

/* The state file beside a fake device (tests), else under /run/pmon or
 * $XDG_RUNTIME_DIR: never NULL where one of them can be made. */
static void test_msr__state_path(void **state)
{
	char buf[256];

	(void)state;
	assert_string_equal(
		pmon_msr_state_path("/tmp/fake-msr", ".pmon-state", "msr-state", buf, sizeof(buf)),
		"/tmp/fake-msr.pmon-state");
	const char *p = pmon_msr_state_path(NULL, ".pmon-state", "msr-state", buf, sizeof(buf));
	if (p)
		assert_true(!strcmp(p, "/run/pmon/msr-state") || strstr(p, "/pmon-msr-state"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_msr__names_and_addresses),
		cmocka_unit_test(test_msr__decode),
		cmocka_unit_test(test_msr__decode_rmid_width),
		cmocka_unit_test(test_msr__file_device),
		cmocka_unit_test(test_msr__fake_device_is_the_hardware),
		cmocka_unit_test(test_msr__counting_refuses_enables_not_global_ctrl),
		cmocka_unit_test(test_msr__counting_restore_full_width),
		cmocka_unit_test(test_msr__counting_ref_cycles_on_fixed_2),
		cmocka_unit_test(test_msr__counting_state_file_after_a_kill),
		cmocka_unit_test(test_msr__counting_nmi_watchdog_is_a_collision_only),
		cmocka_unit_test(test_msr__counting_counter_taken_mid_run),
		cmocka_unit_test(test_msr__counting_hybrid_per_cpu),
		cmocka_unit_test(test_msr__state_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
