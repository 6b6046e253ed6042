// SPDX-License-Identifier: MIT
/* The kernel probe on a fake sysfs/procfs/dev tree (every field it reads),
 * and on the real kernel (software events must open where paranoid allows). */
#include <errno.h>
#include <limits.h>
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
#include "internal.h"

static char root[] = "/tmp/pmon-kernel-XXXXXX";

static void put(const char *rel, const char *text)
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

static void test_kernel__fake_tree(void **state)
{
	char sys[300], proc[300], dev[300], mounts[600];
	struct pmon_kernel_probe_opts o = { .sz = sizeof(o), .no_perf_open = true };
	struct pmon_kernel_info k;

	(void)state;
	assert_non_null(mkdtemp(root));
	put("sys/bus/event_source/devices/cpu/type", "4\n");
	put("sys/bus/event_source/devices/cpu/rdpmc", "2\n");
	put("sys/bus/event_source/devices/software/type", "1\n");
	put("sys/bus/event_source/devices/tracepoint/type", "2\n");
	put("proc/sys/kernel/perf_event_paranoid", "-1\n");
	put("proc/sys/kernel/nmi_watchdog", "1\n");
	put("dev/cpu/0/msr", "");
	put("resctrl/info/L3_MON/num_rmids", "256\n");
	snprintf(mounts, sizeof(mounts),
		 "proc /proc proc rw 0 0\nresctrl %s/resctrl resctrl rw 0 0\n", root);
	put("proc/mounts", mounts);
	snprintf(sys, sizeof(sys), "%s/sys", root);
	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(dev, sizeof(dev), "%s/dev", root);
	o.sysfs_root = sys, o.procfs_root = proc, o.dev_root = dev;

	assert_int_equal(pmon_kernel_probe(&o, &k), 0);
	assert_int_equal(k.npmus, 3);
	assert_string_equal(k.pmus[0].name, "cpu");
	assert_int_equal(k.pmus[0].type, 4);
	assert_string_equal(k.core_pmu, "cpu");
	assert_int_equal(k.rdpmc_mode, 2);
	assert_true(k.has_sw_pmu);
	assert_true(k.has_tracepoints);
	assert_int_equal(k.paranoid, -1);
	assert_int_equal(k.nmi_watchdog, 1);
	assert_true(k.msr_dev);
	assert_false(k.cpuid_dev);
	assert_true(k.resctrl_mounted);
	assert_true(k.resctrl_l3_mon);
	assert_null(k.mmap_event);

	/* A hybrid machine: cpu_core is the core PMU. An empty proc: absent. */
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf %s/sys/bus/event_source/devices/cpu %s/proc/*", root,
		 root);
	assert_int_equal(system(cmd), 0);
	put("sys/bus/event_source/devices/cpu_atom/type", "10\n");
	put("sys/bus/event_source/devices/cpu_core/type", "4\n");
	assert_int_equal(pmon_kernel_probe(&o, &k), 0);
	assert_string_equal(k.core_pmu, "cpu_core");
	assert_int_equal(k.rdpmc_mode, -1);
	assert_int_equal(k.paranoid, INT_MIN);
	assert_false(k.resctrl_mounted);
	/* #11/#13.2: the one core-PMU check knows both halves of a hybrid part. */
	assert_int_equal(k.ncore_pmus, 2);
	assert_string_equal(k.core_pmus[0].name, "cpu_core");
	assert_string_equal(k.core_pmus[1].name, "cpu_atom");
	assert_int_equal(k.core_pmus[1].type, 10);
	struct pmon_pmu_desc cp[4];
	assert_int_equal(pmon_kernel_core_pmus(sys, cp, 4), 2);
	assert_int_equal(cp[0].type, 4);
	assert_true(pmon_kernel_has_core_pmu(sys));
	/* Only the E-core PMU (P-cores offline at boot): still a core PMU --
	 * three of the eight old copies looked for cpu and cpu_core only. */
	snprintf(cmd, sizeof(cmd), "rm -rf %s/sys/bus/event_source/devices/cpu_core", root);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(pmon_kernel_probe(&o, &k), 0);
	assert_string_equal(k.core_pmu, "cpu_atom");
	assert_true(pmon_kernel_has_core_pmu(sys));
	/* A directory without a type file is no PMU perf can open. */
	snprintf(cmd, sizeof(cmd), "rm -f %s/sys/bus/event_source/devices/cpu_atom/type", root);
	assert_int_equal(system(cmd), 0);
	assert_false(pmon_kernel_has_core_pmu(sys));
	assert_int_equal(pmon_kernel_core_pmus(sys, NULL, 0), 0);

	/* The output struct may grow: a caller built with a larger one gets
	 * this library's fields and zeros past them; a smaller one is refused,
	 * never overrun (docs/architecture.md). */
	struct {
		struct pmon_kernel_info k;
		unsigned char more[64];
	} big;
	assert_int_equal(pmon_kernel_probe(&o, &k), 0);
	memset(&big, 0xaa, sizeof(big));
	assert_int_equal(pmon_kernel_probe_sized(&o, &big.k, sizeof(big)), 0);
	assert_int_equal(big.k.paranoid, k.paranoid);
	assert_string_equal(big.k.core_pmu, k.core_pmu);
	for (size_t i = 0; i < sizeof(big.more); i++)
		assert_int_equal(big.more[i], 0);
	memset(&big, 0xaa, sizeof(big));
	assert_int_equal(pmon_kernel_probe_sized(&o, &big.k, sizeof(big.k) - 8), -EINVAL);
	assert_int_equal(((unsigned char *)&big)[0], 0xaa); /* untouched */
	assert_int_equal((pmon_kernel_probe)(&o, &big.k), 0); /* release 0.1's symbol */
	assert_int_equal(big.k.paranoid, k.paranoid);

	o.sz = 3; /* not a size this library knows */
	assert_int_equal(pmon_kernel_probe(&o, &k), -EINVAL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
}

/* The kallsyms parser: text symbols only, module suffixes cut, zero
 * (kptr_restrict) addresses dropped, unsorted input sorted, lookups with
 * the next symbol's start as the end. */
/* A hybrid part's core PMUs each count on their own CPUs (Alder Lake's
 * sysfs layout); a PMU without a cpus file counts everywhere. */
static void test_kernel__pmu_cpus(void **state)
{
	char tree[] = "/tmp/pmon-pmucpus-XXXXXX", sys[300], path[400];
	long *cpus = NULL;
	size_t n = 0;

	(void)state;
	assert_non_null(mkdtemp(tree));
	snprintf(sys, sizeof(sys), "%s/sys", tree);
	const char *files[][2] = {
		{ "cpu_core/type", "4\n" },  { "cpu_core/cpus", "0-7\n" },
		{ "cpu_atom/type", "10\n" }, { "cpu_atom/cpus", "8-15\n" },
		{ "software/type", "1\n" },  { "cpu_bad/cpus", "8-x\n" },
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char cmd[600];
		snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s", sys, files[i][0]);
		snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
		assert_int_equal(system(cmd), 0);
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fputs(files[i][1], f);
		fclose(f);
	}
	assert_int_equal(pmon_kernel_pmu_cpus(sys, "cpu_core", &cpus, &n), 0);
	assert_int_equal(n, 8);
	assert_int_equal(cpus[0], 0);
	assert_int_equal(cpus[7], 7);
	free(cpus);
	assert_int_equal(pmon_kernel_pmu_cpus(sys, "cpu_atom", &cpus, &n), 0);
	assert_int_equal(n, 8);
	assert_int_equal(cpus[0], 8);
	free(cpus);
	assert_int_equal(pmon_kernel_pmu_cpus(sys, "software", &cpus, &n), -ENOENT);
	assert_null(cpus);
	assert_int_equal(pmon_kernel_pmu_cpus(sys, "cpu_bad", &cpus, &n), -EINVAL);
	assert_int_equal(pmon_kernel_pmu_cpus(sys, "../x", &cpus, &n), -EINVAL);
	snprintf(path, sizeof(path), "rm -rf '%s'", tree);
	assert_int_equal(system(path), 0);
}

static void test_kernel__ksyms(void **state)
{
	char path[] = "/tmp/pmon-ksyms-XXXXXX";
	int fd = mkstemp(path);
	const char *text = "ffffffff81000000 T _stext\n"
			   "ffffffff81000100 t helper\n"
			   "ffffffff81000080 D some_data\n"
			   "ffffffffc0001000 t mod_fn\t[mymod]\n"
			   "ffffffff81000050 W weak_fn\n"
			   "0000000000000000 T hidden\n"
			   "garbage line\n"
			   "ffffffff81000200 T last";
	struct pmon__ksyms k;
	uint64_t end = 0;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	assert_int_equal(pmon__ksyms_load(path, &k), 0);
	unlink(path);
	assert_int_equal(k.n, 5);
	assert_string_equal(k.sym[1].name, "weak_fn"); /* sorted by address */
	assert_string_equal(pmon__ksyms_find(&k, 0xffffffff81000060, &end)->name, "weak_fn");
	assert_true(end == 0xffffffff81000100); /* some_data is not text */
	assert_string_equal(pmon__ksyms_find(&k, 0xffffffff81000200, &end)->name, "last");
	assert_true(end == 0xffffffffc0001000);
	assert_string_equal(pmon__ksyms_find(&k, 0xffffffffc0001234, &end)->name, "mod_fn");
	assert_true(end == UINT64_MAX);
	assert_null(pmon__ksyms_find(&k, 0xffffffff80000000, NULL));
	pmon__ksyms_free(&k);
	assert_int_equal(pmon__ksyms_load("/nonexistent/kallsyms", &k), -ENOENT);
}

/* The verdicts from synthetic facts: a VM without a PMU (software events
 * only), the same CPU as a dump (the kernel's part cannot be told), and a
 * paranoid setting that forbids counting. */
static void test_kernel__verdicts(void **state)
{
	struct pmon_cpu_info ci = { 0 };
	struct pmon_kernel_info k = { 0 };
	struct pmon_tsc_choice tsc = { 0 };
	struct pmon_verdict v[PMON_VERDICT__COUNT];
	(void)state;

	ci.id.hypervisor = true;
	ci.id.hv_name = "KVM";
	ci.tsc.tsc = true;
	k.paranoid = 2;
	k.has_tracepoints = true;
	pmon_verdicts(&ci, &k, &tsc, v);
	assert_string_equal(v[PMON_VERDICT_HW].key, "hardware_counters");
	assert_int_equal(v[PMON_VERDICT_HW].state, PMON_VERDICT_NO);
	assert_non_null(strstr(v[PMON_VERDICT_HW].why, "KVM exposes no PMU to this VM"));
	assert_int_equal(v[PMON_VERDICT_SAMPLING].state, PMON_VERDICT_PARTIAL);
	assert_int_equal(v[PMON_VERDICT_SW].state, PMON_VERDICT_YES);
	assert_int_equal(v[PMON_VERDICT_TRACE].state, PMON_VERDICT_YES);
	assert_int_equal(v[PMON_VERDICT_TSC].state, PMON_VERDICT_PARTIAL);
	assert_int_equal(v[PMON_VERDICT_RDT].state, PMON_VERDICT_NO);
	assert_string_equal(pmon_verdict_state_name(v[PMON_VERDICT_TSC].state), "partial");

	pmon_verdicts(&ci, NULL, &tsc, v);
	assert_int_equal(v[PMON_VERDICT_HW].state, PMON_VERDICT_NO);
	assert_int_equal(v[PMON_VERDICT_RDPMC].state, PMON_VERDICT_NA);
	assert_string_equal(v[PMON_VERDICT_SW].why, "depends on the kernel of that machine");
	assert_string_equal(pmon_verdict_state_name(PMON_VERDICT_NA), "n/a");

	snprintf(k.core_pmu, sizeof(k.core_pmu), "cpu");
	k.hw_open_err = -EACCES;
	k.sw_open_err = -EACCES;
	pmon_verdicts(&ci, &k, &tsc, v);
	assert_int_equal(v[PMON_VERDICT_HW].state, PMON_VERDICT_NO);
	assert_non_null(strstr(v[PMON_VERDICT_HW].why, "perf_event_paranoid = 2"));
	assert_int_equal(v[PMON_VERDICT_SAMPLING].state, PMON_VERDICT_NO);
	assert_int_equal(v[PMON_VERDICT_SW].state, PMON_VERDICT_NO);
}

static void test_kernel__real(void **state)
{
	struct pmon_kernel_info k;

	(void)state;
	assert_int_equal(pmon_kernel_probe(NULL, &k), 0);
	if (k.paranoid > 2 && geteuid() != 0) {
		print_message("skip: perf_event_paranoid = %d forbids perf_event_open\n",
			      k.paranoid);
		skip();
	}
	assert_true(k.has_sw_pmu);
	assert_int_equal(k.sw_open_err, 0);
	assert_non_null(k.mmap_event); /* a software event's page at least */
	if (k.hw_open_err)
		/* Without a hardware event the page is a software event's, and
		 * such a page never allows rdpmc. */
		assert_false(k.cap_user_rdpmc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel__fake_tree), cmocka_unit_test(test_kernel__verdicts),
		cmocka_unit_test(test_kernel__pmu_cpus),  cmocka_unit_test(test_kernel__ksyms),
		cmocka_unit_test(test_kernel__real),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
