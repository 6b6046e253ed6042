// SPDX-License-Identifier: MIT
/* RDT's MSR interface: counter wrap, refusals, and Error/Unavailable bits
 * read through a file laid out like /dev/cpu/N/msr; per-L3-domain reads, the
 * RMID field width, AMD's 44-bit counters and Linux's errata against a fake
 * device that behaves like the hardware (fake-msr.h); and --cleanup's walk of
 * an emulated resctrl tree that another user may have shaped. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <pmon/pmon.h>

#include "fake-msr.h"

static struct pmon_cpu_info xeon; /* Cascade Lake-SP: 24-bit counters, upscale 49152 */

static int setup(void **state)
{
	char path[512];
	struct pmon_cpuid *c;

	(void)state;
	snprintf(path, sizeof(path), "%s/intel-xeon-4214-cascadelake-sp.txt", PMON_CPUID_DIR);
	c = pmon_cpuid__new_file(path);
	if (!c || pmon_cpu_decode(c, &xeon))
		return -1;
	pmon_cpuid__free(c);
	return 0;
}

static void test_rdt__mbm_wraps_at_the_enumerated_width(void **state)
{
	(void)state;
	assert_int_equal(pmon_rdt_mbm_delta(100, 300, 24, 64), 200 * 64);
	/* a 24-bit counter that wrapped: 0xfffff0 -> 0x10 is 0x20 units */
	assert_int_equal(pmon_rdt_mbm_delta(0xfffff0, 0x10, 24, 64), 0x20 * 64);
	/* the same readings of a 44-bit counter (Zen 4) did not wrap: huge */
	assert_true(pmon_rdt_mbm_delta(0xfffff0, 0x10, 44, 64) > (1ULL << 40));
	assert_int_equal(pmon_rdt_mbm_delta(5, 5, 24, 98304), 0);
}

static void test_rdt__msr_refusals(void **state)
{
	struct pmon_rdt_msr *m;
	int cpu = 0;
	struct pmon_cpu_info none;

	(void)state;
	assert_null(m = pmon_rdt_msr__start("/tmp/x", &xeon, &cpu, 1, NULL, 1, true));
	assert_int_equal(errno, EBUSY);
	assert_non_null(strstr(pmon_errdetail(), "resctrl is mounted"));
	assert_null(m = pmon_rdt_msr__start("/tmp/x", &xeon, &cpu, 1, NULL, 0, false));
	assert_int_equal(errno, EINVAL);
	assert_null(m = pmon_rdt_msr__start("/tmp/x", &xeon, &cpu, 1, NULL, 96, false));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(pmon_errdetail(), "1..95"));
	memset(&none, 0, sizeof(none));
	assert_null(m = pmon_rdt_msr__start("/tmp/x", &none, &cpu, 1, NULL, 1, false));
	assert_int_equal(errno, EOPNOTSUPP);
}

/* IA32_QM_CTR (C8EH) in a file standing for the device (8 bytes per MSR at
 * 8 x its address): its top byte holds the Error and Unavailable bits. */
static void test_rdt__msr_error_bits(void **state)
{
	char path[] = "/tmp/pmon-rdt-XXXXXX";
	int fd = mkstemp(path), cpu = 0;
	struct pmon_rdt_msr *m;
	struct pmon_rdt_reading rd;
	struct pmon_rdt_domain *d = &rd.d[0];
	uint8_t top;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 65536), 0);
	assert_int_equal(pmon_msr_write(path, 0, 0xc8f, 0x500000000ULL), 0); /* CLOS 5 */
	assert_non_null(m = pmon_rdt_msr__start(path, &xeon, &cpu, 1, NULL, 7, false));
	size_t n;
	const struct pmon_msr_write_rec *w = pmon_rdt_msr__writes(m, &n);
	assert_int_equal(n, 1);
	assert_int_equal(w[0].addr, 0xc8f);
	assert_int_equal(w[0].value, 0x500000007ULL); /* the RMID, the CLOS kept */

	top = 0x40; /* bit 62: Unavailable */
	assert_int_equal(pwrite(fd, &top, 1, 0xc8e * 8 + 7), 1);
	assert_int_equal(pmon_rdt_msr__read(m, &rd), 0);
	assert_int_equal(d->occupancy.state, PMON_RDT_UNAVAILABLE);
	assert_int_equal(d->total.state, PMON_RDT_UNAVAILABLE);
	top = 0x80; /* bit 63: Error */
	assert_int_equal(pwrite(fd, &top, 1, 0xc8e * 8 + 7), 1);
	assert_int_equal(pmon_rdt_msr__read(m, &rd), 0);
	assert_int_equal(d->local.state, PMON_RDT_ERROR);
	uint64_t data = 7ULL << 24; /* no Error, no Unavailable: a count */
	assert_int_equal(pwrite(fd, &data, 8, 0xc8e * 8), 8);
	assert_int_equal(pmon_rdt_msr__read(m, &rd), 0);
	assert_int_equal(d->occupancy.state, PMON_RDT_OK);
	assert_int_equal(d->occupancy.v, (7ULL << 24) * 49152);
	w = pmon_rdt_msr__writes(m, &n);
	assert_int_equal(w[n - 1].addr, 0xc8d);
	assert_int_equal(w[n - 1].value, 7ULL << 32 | 3); /* local bandwidth, RMID 7 */
	assert_int_equal(pmon_rdt_msr__restore(m), 0);
	w = pmon_rdt_msr__writes(m, &n);
	assert_true(w[n - 2].restore && w[n - 2].addr == 0xc8f && w[n - 2].value == 0x500000000ULL);
	pmon_rdt_msr__free(m);
	close(fd);
	unlink(path);
}

static struct pmon_cpu_info load(const char *name)
{
	char path[512];
	struct pmon_cpuid *c;
	struct pmon_cpu_info ci;

	snprintf(path, sizeof(path), "%s/%s.txt", PMON_CPUID_DIR, name);
	c = pmon_cpuid__new_file(path);
	assert_non_null(c);
	assert_int_equal(pmon_cpu_decode(c, &ci), 0);
	pmon_cpuid__free(c);
	return ci;
}

static struct fake_msr fake;
static struct pmon__msr_ops ops;

static void fake_rdt(unsigned ncpus, unsigned rmid_bits)
{
	memset(&fake, 0, sizeof(fake));
	fake.ncpus = ncpus;
	fake.rmid_bits = rmid_bits;
	fake_msr_plug(&fake, &ops);
}

/* #13.5: IA32_QM_CTR answers for the L3 of the CPU that reads it: two
 * domains, two readings, each read on one of its own CPUs. */
static void test_rdt__msr_one_reading_per_l3_domain(void **state)
{
	int cpus[] = { 0, 1, 2, 3 }, l3[] = { 0, 0, 1, 1 };
	struct pmon_rdt_msr *m = NULL;
	struct pmon_rdt_reading r;

	(void)state;
	fake_rdt(4, xeon.rdt.rmid_bits);
	memcpy(fake.l3_of_cpu, l3, sizeof(l3));
	fake.qm_rmid = 5;
	fake.qm[0][1] = 10; /* occupancy units, domain 0 */
	fake.qm[1][1] = 20;
	assert_non_null(m = pmon_rdt_msr__start(NULL, &xeon, cpus, 4, l3, 5, false));
	for (int c = 0; c < 4; c++)
		assert_int_equal(fake.pqr[c], 5);
	assert_int_equal(pmon_rdt_msr__read(m, &r), 0);
	assert_int_equal(r.n, 2);
	assert_string_equal(r.d[0].name, "mon_L3_00");
	assert_string_equal(r.d[1].name, "mon_L3_01");
	assert_int_equal(r.d[0].occupancy.v, 10ULL * 49152);
	assert_int_equal(r.d[1].occupancy.v, 20ULL * 49152);
	/* read on CPU 0 and CPU 2, the first of each domain */
	assert_int_equal(fake.qm_evtsel[0] >> 32, 5);
	assert_int_equal(fake.qm_evtsel[2] >> 32, 5);
	assert_int_equal(fake.qm_evtsel[1], 0);
	assert_int_equal(pmon_rdt_msr__restore(m), 0);
	assert_int_equal(fake.qm_evtsel[2], 0);
	assert_int_equal(fake.pqr[3], 0);
	pmon_rdt_msr__free(m);
	fake_msr_unplug();
}

/* #13.6: Zen 5's 4096 RMIDs need a 12-bit field; the old RMID is cleared
 * whole, the CLOS kept, and the fake device refuses bits beyond it. */
static void test_rdt__msr_rmid_field_width(void **state)
{
	struct pmon_cpu_info zen5 = load("amd-epyc-9655-zen5-turin");
	struct pmon_rdt_msr *m = NULL;
	struct pmon_rdt_reading r;
	int cpu = 0;

	(void)state;
	assert_int_equal(zen5.rdt.rmid_bits, 12);
	fake_rdt(1, 12);
	fake.pqr[0] = 0x500000c01ULL; /* CLOS 5, RMID 0xc01 (bits 11 and 10 set) */
	fake.qm_rmid = 0x123;
	fake.qm[0][1] = 3;
	assert_non_null(m = pmon_rdt_msr__start(NULL, &zen5, &cpu, 1, NULL, 0x123, false));
	assert_int_equal(fake.pqr[0], 0x500000123ULL);
	assert_int_equal(pmon_rdt_msr__read(m, &r), 0);
	assert_int_equal(r.d[0].occupancy.v, 3ULL * zen5.rdt.upscale);
	assert_int_equal(pmon_rdt_msr__restore(m), 0);
	assert_int_equal(fake.pqr[0], 0x500000c01ULL);
	pmon_rdt_msr__free(m);
	/* RMID 4095 fits; the fake device refuses a 13th bit as #GP */
	m = NULL;
	assert_non_null(m = pmon_rdt_msr__start(NULL, &zen5, &cpu, 1, NULL, 4095, false));
	assert_int_equal(fake.pqr[0] & 0xfff, 0xfff);
	pmon_rdt_msr__restore(m);
	pmon_rdt_msr__free(m);
	assert_int_equal(pmon_msr_write(NULL, 0, 0xc8f, 0x1000), -EIO);
	fake_msr_unplug();
}

/* #14.6: rdt --msr killed (here: freed without a restore) leaves a state
 * file naming IA32_PQR_ASSOC and IA32_QM_EVTSEL as they were; the next start
 * refuses, naming it, and replaying the file puts both back and removes it;
 * a restore that succeeds removes it too. */
static void test_rdt__msr_state_file_after_a_kill(void **state)
{
	struct pmon_cpu_info zen5 = load("amd-epyc-9655-zen5-turin");
	struct pmon_rdt_msr *m = NULL;
	struct pmon_rdt_reading r;
	struct pmon_msr_write_rec *w = NULL;
	char dir[] = "/tmp/pmon-rdtstate-XXXXXX", path[64];
	int cpus[] = { 0, 1 };
	size_t n = 0;

	(void)state;
	fake_rdt(2, 12);
	fake.pqr[0] = 0x500000001ULL; /* CLOS 5, RMID 1: someone's */
	fake.pqr[1] = 0x300000000ULL;
	fake.qm_evtsel[0] = 0x200000001ULL;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/state", dir);
	struct pmon_rdt_msr_opts o = { .sz = sizeof(o), .state_file = path };

	assert_non_null(m = pmon_rdt_msr__start_opts(NULL, &zen5, cpus, 2, NULL, 7, false, &o));
	assert_int_equal(access(path, F_OK), 0);
	assert_int_equal(pmon_rdt_msr__read(m, &r), 0);
	assert_int_equal(fake.pqr[0], 0x500000007ULL);
	pmon_rdt_msr__free(m); /* SIGKILL: nothing restored */
	m = NULL;

	/* The writer is this process, alive: "is programming"; a dead one's
	 * pid: "left ... programmed". Either way nothing is written. */
	assert_null(m = pmon_rdt_msr__start_opts(NULL, &zen5, cpus, 2, NULL, 7, false, &o));
	assert_int_equal(errno, EBUSY);
	assert_non_null(strstr(pmon_errdetail(), "is programming IA32_PQR_ASSOC"));
	FILE *f = fopen(path, "r");
	char buf[4096];
	size_t len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	char *rest = strchr(strstr(buf, "pid "), '\n');
	f = fopen(path, "w");
	fprintf(f, "pmon-msr-state 1\npid 999999999%s", rest);
	fclose(f);
	assert_null(m = pmon_rdt_msr__start_opts(NULL, &zen5, cpus, 2, NULL, 9, false, &o));
	assert_int_equal(errno, EBUSY);
	assert_non_null(
		strstr(pmon_errdetail(),
		       "left IA32_PQR_ASSOC and IA32_QM_EVTSEL (RDT monitoring) programmed"));
	assert_int_equal(fake.pqr[0], 0x500000007ULL);

	assert_int_equal(pmon_msr_state__restore(path, &w, &n), 0);
	free(w);
	assert_int_equal(n, 3); /* PQR_ASSOC of CPU 1 and 0, one domain's QM_EVTSEL */
	assert_int_equal(fake.pqr[0], 0x500000001ULL);
	assert_int_equal(fake.pqr[1], 0x300000000ULL);
	assert_int_equal(fake.qm_evtsel[0], 0x200000001ULL);
	assert_int_not_equal(access(path, F_OK), 0);

	/* A run that restores leaves no file. */
	assert_non_null(m = pmon_rdt_msr__start_opts(NULL, &zen5, cpus, 2, NULL, 7, false, &o));
	assert_int_equal(pmon_rdt_msr__restore(m), 0);
	pmon_rdt_msr__free(m);
	assert_int_not_equal(access(path, F_OK), 0);
	rmdir(dir);
	fake_msr_unplug();
}

/* #13.1: Rome's MBM counters are 44 bits (24 + 20 when AMD reports 0): a
 * step of 2^24 + 5 units is that, not 5 units of a wrapped 24-bit counter. */
static void test_rdt__msr_amd_44_bit_counters(void **state)
{
	struct pmon_cpu_info rome = load("amd-epyc-7742-zen2-rome");
	struct pmon_rdt_msr *m = NULL;
	struct pmon_rdt_reading r;
	int cpu = 0;

	(void)state;
	assert_int_equal(rome.rdt.counter_width, 44);
	fake_rdt(1, rome.rdt.rmid_bits);
	fake.qm_rmid = 1;
	fake.qm[0][2] = 1ULL << 40;
	assert_non_null(m = pmon_rdt_msr__start(NULL, &rome, &cpu, 1, NULL, 1, false));
	assert_int_equal(pmon_rdt_msr__read(m, &r), 0);
	assert_int_equal(r.d[0].total.v, 0);
	fake.qm[0][2] += (1ULL << 24) + 5;
	assert_int_equal(pmon_rdt_msr__read(m, &r), 0);
	assert_int_equal(r.d[0].total.v, ((1ULL << 24) + 5) * 64);
	pmon_rdt_msr__restore(m);
	pmon_rdt_msr__free(m);
	fake_msr_unplug();
}

/* #24.2: a print interval is cut into steps of at most Linux's
 * MBM_OVERFLOW_INTERVAL (1 s). */
static void test_rdt__mbm_samples_per_interval(void **state)
{
	static const struct {
		int line;
		unsigned long ms, n;
	} t[] = {
		{ __LINE__, 0, 1 },	     { __LINE__, 10, 1 },   { __LINE__, 1000, 1 },
		{ __LINE__, 1001, 2 },	     { __LINE__, 3000, 3 }, { __LINE__, 2500, 3 },
		{ __LINE__, 3600000, 3600 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		unsigned long n = pmon_rdt_mbm_samples(t[i].ms);
		if (n != t[i].n)
			fail_msg("line %d: %lu ms: %lu steps, want %lu", t[i].line, t[i].ms, n,
				 t[i].n);
	}
}

/* #24.2: 50 GB/s through a 24-bit Cascade Lake counter (upscale 49152)
 * wraps it every 16.8 s; here the fake counter moves 0.8 of its range per
 * 1-s step, so it wraps twice within one 3-s interval. Sampled every step,
 * as `rdt --msr` does, the interval counts all 2.4 ranges; read once per
 * interval it would count 0.4. Time is the steps the test takes. */
static void test_rdt__msr_mbm_wraps_twice_in_one_interval(void **state)
{
	struct pmon_rdt_msr *m = NULL;
	struct pmon_rdt_reading r;
	int cpu = 0;
	const uint64_t step = (1ULL << 24) / 5 * 4; /* units per second */
	unsigned long n = pmon_rdt_mbm_samples(3000);

	(void)state;
	assert_int_equal(xeon.rdt.counter_width, 24);
	fake_rdt(1, xeon.rdt.rmid_bits);
	fake.mbm_width = 24;
	fake.qm_rmid = 1;
	fake.qm[0][2] = 0xfff000; /* near the top: the first step wraps */
	assert_non_null(m = pmon_rdt_msr__start(NULL, &xeon, &cpu, 1, NULL, 1, false));
	assert_int_equal(pmon_rdt_msr__read(m, &r), 0);
	assert_int_equal(r.d[0].total.v, 0);
	for (int interval = 1; interval <= 2; interval++) {
		for (unsigned long k = 1; k <= n; k++) {
			fake.qm[0][2] += step;
			if (k < n)
				assert_int_equal(pmon_rdt_msr__sample(m), 0);
			else
				assert_int_equal(pmon_rdt_msr__read(m, &r), 0);
		}
		assert_int_equal(r.d[0].total.state, PMON_RDT_OK);
		assert_int_equal(r.d[0].total.v, interval * n * step * 49152);
	}
	pmon_rdt_msr__restore(m);
	pmon_rdt_msr__free(m);
	fake_msr_unplug();
}

/* #13.8: Skylake-SP stepping 4 is refused (Linux disables CMT/MBM there);
 * the MBM correction of its 192-RMID table row applies to RMIDs above 127
 * on a later stepping with the same leaf 0FH (stepping changed here only). */
static void test_rdt__msr_errata(void **state)
{
	struct pmon_cpu_info skx = load("intel-xeon-8160-skylake-sp");
	struct pmon_rdt_msr *m = NULL;
	struct pmon_rdt_reading r;
	int cpu = 0;
	uint64_t units = 1000000;

	(void)state;
	fake_rdt(1, skx.rdt.rmid_bits);
	assert_null(m = pmon_rdt_msr__start(NULL, &skx, &cpu, 1, NULL, 130, false));
	assert_int_equal(errno, EOPNOTSUPP);
	assert_non_null(strstr(pmon_errdetail(), "Linux disables them"));
	assert_int_equal(fake.pqr[0], 0); /* nothing written */

	skx.rdt.mon_erratum_disabled = false; /* as on stepping 5+ */
	skx.rdt.occupancy = skx.rdt.cpuid_occupancy;
	skx.rdt.mbm_total = skx.rdt.cpuid_mbm_total;
	skx.rdt.mbm_local = skx.rdt.cpuid_mbm_local;
	fake.qm_rmid = 130;
	assert_non_null(m = pmon_rdt_msr__start(NULL, &skx, &cpu, 1, NULL, 130, false));
	assert_int_equal(pmon_rdt_msr__read(m, &r), 0);
	fake.qm[0][3] = units;
	assert_int_equal(pmon_rdt_msr__read(m, &r), 0);
	assert_int_equal(r.d[0].local.v, ((units * skx.rdt.mbm_cf) >> 20) * skx.rdt.upscale);
	assert_true(r.d[0].local.v < units * skx.rdt.upscale); /* factor 0.969744 */
	pmon_rdt_msr__restore(m);
	pmon_rdt_msr__free(m);
	fake_msr_unplug();
}

static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A sysfs tree: 8 CPUs share CPU 0's L3; CPU 0's node holds @node0. */
static void snc_tree(const char *root, const char *node0, const char *node1)
{
	char p[512];

	for (int i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "mkdir -p %s/devices/system/cpu/cpu0/cache/index%d", root,
			 i);
		assert_int_equal(system(p), 0);
		snprintf(p, sizeof(p), "%s/devices/system/cpu/cpu0/cache/index%d/level", root, i);
		put_file(p, i == 3 ? "3\n" : i == 2 ? "2\n" : "1\n");
	}
	snprintf(p, sizeof(p), "%s/devices/system/cpu/cpu0/cache/index3/shared_cpu_map", root);
	put_file(p, "00000000,000000ff\n");
	snprintf(p, sizeof(p), "mkdir -p %s/devices/system/node/node0 %s/devices/system/node/node1",
		 root, root);
	assert_int_equal(system(p), 0);
	snprintf(p, sizeof(p), "%s/devices/system/node/node0/cpulist", root);
	put_file(p, node0);
	snprintf(p, sizeof(p), "%s/devices/system/node/node1/cpulist", root);
	put_file(p, node1);
}

/* #24.1: Ice Lake-SP with two SNC nodes per L3 (Linux snc_get_config():
 * 8 CPUs on the L3 / 4 on CPU 0's node). Its 288 RMIDs are 144 per node;
 * the upscale 73728 is 36864 per node; logical RMID 5 goes into
 * IA32_PQR_ASSOC and is read as physical RMIDs 5 and 149, summed. The
 * power-on legacy mode of MSR_RMID_SNC_CONFIG is refused. */
static void test_rdt__msr_sub_numa_clustering(void **state)
{
	struct pmon_cpu_info icx = load("intel-xeon-8351n-icelake-sp");
	struct pmon_rdt_msr *m = NULL;
	struct pmon_rdt_reading r;
	char root[] = "/tmp/pmon-snc-XXXXXX", cmd[600];
	int cpus[] = { 0, 1, 2, 3, 4, 5, 6, 7 };

	(void)state;
	assert_non_null(mkdtemp(root));
	snc_tree(root, "0-3\n", "4-7\n");
	assert_int_equal(icx.rdt.l3_max_rmid, 287);
	assert_int_equal(pmon_rdt_snc_nodes(root, &icx), 2);
	assert_int_equal(pmon_rdt_snc_nodes(root, &xeon), 1); /* 55H: no CA0H, not in the list */
	struct pmon_rdt_msr_opts o = { .sz = sizeof(o), .sysfs_root = root };

	fake_rdt(8, icx.rdt.rmid_bits);
	fake.snc_nodes = 2;
	fake.l3_rmids = 288;
	fake.snc_msr = true;
	fake.snc_config = 1; /* power-on: legacy mode */
	fake.qm_rmid = 5;
	/* an allocation tool's CLOS 7 and RMID 3, and someone's event select */
	for (int c = 0; c < 8; c++)
		fake.pqr[c] = 7ULL << 32 | 3;
	fake.qm_evtsel[0] = 9ULL << 32 | 2;
	assert_null(m = pmon_rdt_msr__start_opts(NULL, &icx, cpus, 8, NULL, 5, false, &o));
	assert_int_equal(errno, EOPNOTSUPP);
	assert_non_null(strstr(pmon_errdetail(), "bit 0 = 1 on CPU 0: RMIDs are in legacy mode"));
	for (int c = 0; c < 8; c++) /* a refusal writes nothing, not even 'restores' */
		assert_int_equal(fake.pqr[c], 7ULL << 32 | 3);
	assert_int_equal(fake.qm_evtsel[0], 9ULL << 32 | 2);
	memset(fake.pqr, 0, sizeof(fake.pqr));
	fake.qm_evtsel[0] = 0;

	fake.snc_config = 0; /* as Linux leaves it: RMID sharing mode */
	assert_null(m = pmon_rdt_msr__start_opts(NULL, &icx, cpus, 8, NULL, 144, false, &o));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(pmon_errdetail(), "choose 1..143 (Sub-NUMA Clustering, 2 nodes"));

	fake.snc_qm[0][0][1] = 10; /* occupancy units, node 0 */
	fake.snc_qm[0][1][1] = 20; /* node 1 */
	fake.snc_qm[0][0][2] = 1000;
	fake.snc_qm[0][1][2] = 7000;
	assert_non_null(m = pmon_rdt_msr__start_opts(NULL, &icx, cpus, 8, NULL, 5, false, &o));
	for (int c = 0; c < 8; c++)
		assert_int_equal(fake.pqr[c], 5); /* the logical RMID */
	assert_int_equal(pmon_rdt_msr__read(m, &r), 0);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.d[0].occupancy.v, 30ULL * 36864);
	assert_int_equal(r.d[0].total.v, 0);
	fake.snc_qm[0][0][2] += 100;
	fake.snc_qm[0][1][2] += 50;
	assert_int_equal(pmon_rdt_msr__read(m, &r), 0);
	assert_int_equal(r.d[0].total.v, 150ULL * 36864);
	assert_int_equal(fake.qm_evtsel[0], 149ULL << 32 | 3); /* node 1's local, last */
	/* Node 1 answers Error for a while: the domain's bandwidth is Error, not
	 * node 0's share alone; when node 1 answers again, the count goes on
	 * from its last good reading, with nothing lost or counted twice. */
	fake.snc_qm[0][0][2] += 10;
	fake.snc_qm[0][1][2] |= 1ULL << 63;
	assert_int_equal(pmon_rdt_msr__read(m, &r), 0);
	assert_int_equal(r.d[0].total.state, PMON_RDT_ERROR);
	assert_int_equal(r.d[0].occupancy.state, PMON_RDT_OK);
	fake.snc_qm[0][1][2] &= ~(1ULL << 63);
	fake.snc_qm[0][1][2] += 5;
	assert_int_equal(pmon_rdt_msr__read(m, &r), 0);
	assert_int_equal(r.d[0].total.state, PMON_RDT_OK);
	assert_int_equal(r.d[0].total.v, 165ULL * 36864);
	pmon_rdt_msr__restore(m);
	assert_int_equal(pmon_rdt_msr__read(m, &r), -EINVAL); /* put back: no more reads */
	assert_int_equal(pmon_rdt_msr__sample(m), -EINVAL);
	pmon_rdt_msr__free(m);

	/* One node per L3 (SNC off): logical = physical, all 288 RMIDs. */
	snc_tree(root, "0-7\n", "\n");
	assert_int_equal(pmon_rdt_snc_nodes(root, &icx), 1);
	snprintf(cmd, sizeof(cmd), "rm -r %s", root);
	assert_int_equal(system(cmd), 0);
	fake_msr_unplug();
}

/* A crashed pmon's groups in an emulated tree: one nested far below what
 * pmon makes, with a path of more than 1023 characters (the old recursive
 * walk cut the path and recursed on itself until the stack overflowed), and
 * one that is a symbolic link to a directory of someone else's files (the old
 * walk followed it and emptied that directory). */
static void test_rdt__cleanup_walk_is_bounded_and_follows_no_link(void **state)
{
	char root[] = "/tmp/pmon-test-rdt-XXXXXX", p[4096], victim[600];
	unsigned removed = 99;
	size_t len;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(p, sizeof(p), "%s/info", root);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/info/L3_MON", root);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/info/L3_MON/num_rmids", root);
	put_file(p, "8\n");
	snprintf(p, sizeof(p), "%s/mon_groups", root);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(victim, sizeof(victim), "%s/victim", root);
	assert_int_equal(mkdir(victim, 0700), 0);
	snprintf(p, sizeof(p), "%s/victim/keep", root);
	put_file(p, "someone else's\n");

	/* pmon-999999999-1: the shape pmon makes; removed */
	snprintf(p, sizeof(p), "%s/mon_groups/pmon-999999999-1", root);
	assert_int_equal(mkdir(p, 0700), 0);
	len = strlen(p);
	snprintf(p + len, sizeof(p) - len, "/mon_data");
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p + len, sizeof(p) - len, "/mon_data/mon_L3_00");
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p + len, sizeof(p) - len, "/mon_data/mon_L3_00/llc_occupancy");
	put_file(p, "0\n");
	snprintf(p + len, sizeof(p) - len, "/tasks");
	put_file(p, "");
	snprintf(p + len, sizeof(p) - len, "/link-to-victim");
	assert_int_equal(symlink(victim, p), 0);

	/* pmon-999999999-2: 40 levels of 60-character names (2,400+ chars) */
	snprintf(p, sizeof(p), "%s/mon_groups/pmon-999999999-2", root);
	assert_int_equal(mkdir(p, 0700), 0);
	for (int i = 0; i < 40; i++) {
		len = strlen(p);
		snprintf(p + len, sizeof(p) - len, "/%060d",
			 i); /* 60 digits: the path passes 1023 at level 15 */
		assert_int_equal(mkdir(p, 0700), 0);
	}
	assert_true(strlen(p) > 1023);

	/* pmon-999999999-3: a link where a group directory should be */
	snprintf(p, sizeof(p), "%s/mon_groups/pmon-999999999-3", root);
	assert_int_equal(symlink(victim, p), 0);

	assert_int_equal(pmon_rdt_cleanup(root, &removed), 0);
	assert_int_equal(removed, 1);
	snprintf(p, sizeof(p), "%s/mon_groups/pmon-999999999-1", root);
	assert_int_equal(access(p, F_OK), -1);
	snprintf(p, sizeof(p), "%s/victim/keep", root);
	assert_int_equal(access(p, F_OK), 0); /* neither link was followed */
	snprintf(p, sizeof(p), "%s/mon_groups/pmon-999999999-2", root);
	assert_int_equal(access(p, F_OK), 0); /* too deep for pmon's: refused, kept */

	snprintf(p, sizeof(p), "rm -rf '%s'", root);
	assert_int_equal(system(p), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rdt__mbm_wraps_at_the_enumerated_width),
		cmocka_unit_test(test_rdt__msr_refusals),
		cmocka_unit_test(test_rdt__msr_error_bits),
		cmocka_unit_test(test_rdt__msr_one_reading_per_l3_domain),
		cmocka_unit_test(test_rdt__msr_rmid_field_width),
		cmocka_unit_test(test_rdt__msr_state_file_after_a_kill),
		cmocka_unit_test(test_rdt__msr_amd_44_bit_counters),
		cmocka_unit_test(test_rdt__msr_errata),
		cmocka_unit_test(test_rdt__mbm_samples_per_interval),
		cmocka_unit_test(test_rdt__msr_mbm_wraps_twice_in_one_interval),
		cmocka_unit_test(test_rdt__msr_sub_numa_clustering),
		cmocka_unit_test(test_rdt__cleanup_walk_is_bounded_and_follows_no_link),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
