// SPDX-License-Identifier: MIT
/*
 * Event parsing: generic/cache/software tables, modifiers, groups, raw
 * values, and PMU terms read from a fake sysfs tree laid out like
 * /sys/bus/event_source/devices (format/ files with split bit ranges, events/
 * aliases with .unit and .scale). A table of bad inputs checks each error.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <pmon/pmon.h>

static char root[] = "/tmp/pmon-event-XXXXXX";
static char sysfs[300], tracefs[300];

static void put(const char *rel, const char *text)
{
	char path[600], cmd[700];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	if (system(cmd))
		abort();
	f = fopen(path, "w");
	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(root))
		return -1;
	/* A core PMU as the kernel describes an Intel one. */
	put("sys/bus/event_source/devices/cpu/type", "4\n");
	put("sys/bus/event_source/devices/cpu/format/event", "config:0-7\n");
	put("sys/bus/event_source/devices/cpu/format/umask", "config:8-15\n");
	put("sys/bus/event_source/devices/cpu/format/edge", "config:18\n");
	put("sys/bus/event_source/devices/cpu/format/inv", "config:23\n");
	put("sys/bus/event_source/devices/cpu/format/cmask", "config:24-31\n");
	put("sys/bus/event_source/devices/cpu/format/ldlat", "config1:0-15\n");
	/* A split field: low 8 bits at 0-7, the next 4 at 32-35 (AMD's event). */
	put("sys/bus/event_source/devices/cpu/format/event2", "config:0-7,32-35\n");
	put("sys/bus/event_source/devices/cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
	put("sys/bus/event_source/devices/cpu/events/mem-loads.unit", "loads\n");
	/* RAPL-like PMU with unit and scale. */
	put("sys/bus/event_source/devices/power/type", "23\n");
	put("sys/bus/event_source/devices/power/format/event", "config:0-7\n");
	put("sys/bus/event_source/devices/power/events/energy-pkg", "event=0x02\n");
	put("sys/bus/event_source/devices/power/events/energy-pkg.unit", "Joules\n");
	put("sys/bus/event_source/devices/power/events/energy-pkg.scale",
	    "2.3283064365386962890625e-10\n");
	put("sys/bus/event_source/devices/software/type", "1\n");
	put("tracing/events/sched/sched_switch/id", "316\n");
	put("tracing/events/sched/sched_wakeup/id", "318\n");
	snprintf(sysfs, sizeof(sysfs), "%s/sys", root);
	snprintf(tracefs, sizeof(tracefs), "%s/tracing", root);
	return 0;
}

static int teardown(void **state)
{
	char cmd[400];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	return system(cmd);
}

static struct pmon_evlist *list_with(const char *spec, int *err)
{
	struct pmon_event_opts o = {
		.sz = sizeof(o), .sysfs_root = sysfs, .tracefs_root = tracefs, .no_pfm = true
	};
	struct pmon_evlist *l = pmon_evlist__new(&o);

	assert_non_null(l);
	*err = pmon_evlist__add(l, spec);
	return l;
}

struct good_row {
	int line;
	const char *spec;
	uint32_t type;
	uint64_t config, config1;
	int xu, xk, xh; /* exclude_user/kernel/hv */
	const char *pmu, *unit;
};

static const struct good_row good_rows[] = {
	{ __LINE__, "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 0, 0, 0, 0, "cpu", "" },
	{ __LINE__, "instructions:u", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 0, 0, 1, 1,
	  "cpu", "" },
	{ __LINE__, "branch-misses:k", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, 0, 1, 0, 1,
	  "cpu", "" },
	{ __LINE__, "ref-cycles:uk", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, 0, 0, 0, 1,
	  "cpu", "" },
	{ __LINE__, "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 0, 0, 0, 0,
	  "software", "msec" },
	{ __LINE__, "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 0, 0, 0, 0,
	  "software", "" },
	{ __LINE__, "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, 0, 0, 0, 0,
	  "software", "" },
	/* cache: id | op << 8 | result << 16 */
	{ __LINE__, "L1-dcache-load-misses", PERF_TYPE_HW_CACHE, 0x10000, 0, 0, 0, 0, "cpu", "" },
	{ __LINE__, "LLC-stores", PERF_TYPE_HW_CACHE, 0x00102, 0, 0, 0, 0, "cpu", "" },
	{ __LINE__, "dTLB-prefetch-misses", PERF_TYPE_HW_CACHE, 0x10203, 0, 0, 0, 0, "cpu", "" },
	{ __LINE__, "r01c2", PERF_TYPE_RAW, 0x1c2, 0, 0, 0, 0, "cpu", "" },
	{ __LINE__, "r0x1c2:u", PERF_TYPE_RAW, 0x1c2, 0, 0, 1, 1, "cpu", "" },
	/* PMU terms: event 0x3c, umask 0, cmask 1, inv, edge */
	{ __LINE__, "cpu/event=0x3c,umask=0x00,cmask=1,inv,edge/", 4,
	  0x3c | 1u << 24 | 1u << 23 | 1u << 18, 0, 0, 0, 0, "cpu", "" },
	{ __LINE__, "cpu/event=0xd1,umask=0x20/u", 4, 0x20d1, 0, 0, 1, 1, "cpu", "" },
	{ __LINE__, "cpu/event=0xd1,umask=0x20/:k", 4, 0x20d1, 0, 1, 0, 1, "cpu", "" },
	{ __LINE__, "cpu/event2=0x123/", 4, 0x23 | 1ULL << 32, 0, 0, 0, 0, "cpu", "" },
	{ __LINE__, "cpu/config=0x1234,config1=7/", 4, 0x1234, 7, 0, 0, 0, "cpu", "" },
	/* aliases, with and without the PMU, carrying config1 and a unit */
	{ __LINE__, "cpu/mem-loads/", 4, 0x1cd, 3, 0, 0, 0, "cpu", "loads" },
	{ __LINE__, "mem-loads", 4, 0x1cd, 3, 0, 0, 0, "cpu", "loads" },
	{ __LINE__, "energy-pkg", 23, 0x2, 0, 0, 0, 0, "power", "Joules" },
	{ __LINE__, "sched:sched_switch", PERF_TYPE_TRACEPOINT, 316, 0, 0, 0, 0, "tracepoint", "" },
};

static void test_event__good(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(good_rows) / sizeof(good_rows[0]); i++) {
		const struct good_row *r = &good_rows[i];
		int err;
		struct pmon_evlist *l = list_with(r->spec, &err);
		const struct pmon_event_desc *d;

		print_message("row at line %d: %s -> %s\n", r->line, r->spec,
			      err ? pmon_errdetail() : "ok");
		assert_int_equal(err, 0);
		assert_int_equal(pmon_evlist__count(l), 1);
		d = pmon_evlist__event(l, 0);
		assert_int_equal(d->attr.type, r->type);
		assert_int_equal(d->attr.config, r->config);
		assert_int_equal(d->attr.config1, r->config1);
		assert_int_equal(d->attr.exclude_user, r->xu);
		assert_int_equal(d->attr.exclude_kernel, r->xk);
		assert_int_equal(d->attr.exclude_hv, r->xh);
		assert_string_equal(d->pmu, r->pmu);
		assert_string_equal(d->unit, r->unit);
		assert_string_equal(d->name, r->spec);
		pmon_evlist__free(l);
	}
}

static void test_event__scale_and_modifiers(void **state)
{
	int err;
	struct pmon_evlist *l = list_with("energy-pkg,cycles:pppI,task-clock:D,cycles:G", &err);

	(void)state;
	assert_int_equal(err, 0);
	assert_true(pmon_evlist__event(l, 0)->scale > 2.32e-10 &&
		    pmon_evlist__event(l, 0)->scale < 2.33e-10);
	assert_int_equal(pmon_evlist__event(l, 1)->attr.precise_ip, 3);
	assert_int_equal(pmon_evlist__event(l, 1)->attr.exclude_idle, 1);
	assert_int_equal(pmon_evlist__event(l, 2)->attr.pinned, 1);
	assert_true(pmon_evlist__event(l, 2)->scale == 1e-6); /* ns -> msec */
	assert_int_equal(pmon_evlist__event(l, 3)->attr.exclude_host, 1);
	pmon_evlist__free(l);
}

static void test_event__groups(void **state)
{
	int err;
	struct pmon_evlist *l =
		list_with("cs,{task-clock,page-faults,cpu/event=1,umask=2/}:u,cycles", &err);

	(void)state;
	assert_int_equal(err, 0);
	assert_int_equal(pmon_evlist__count(l), 5);
	assert_int_equal(pmon_evlist__event(l, 0)->group, 0);
	for (int i = 1; i <= 3; i++) {
		assert_int_equal(pmon_evlist__event(l, (size_t)i)->group, 1);
		assert_int_equal(pmon_evlist__event(l, (size_t)i)->attr.exclude_kernel, 1);
	}
	assert_int_equal(pmon_evlist__event(l, 3)->attr.config, 0x201);
	assert_int_equal(pmon_evlist__event(l, 4)->group, 4);
	assert_int_equal(pmon_evlist__event(l, 4)->attr.exclude_kernel, 0);
	/* A failing add leaves the list as it was. */
	assert_int_not_equal(pmon_evlist__add(l, "page-faults,nosuchevent"), 0);
	assert_int_equal(pmon_evlist__count(l), 5);
	pmon_evlist__free(l);
}

struct bad_row {
	int line;
	const char *spec;
	int err;
	const char *detail;
};

#define SYN (-PMON_ERRNO__EVENT_SYNTAX)
#define UNK (-PMON_ERRNO__EVENT_UNKNOWN)
#define MIS (-PMON_ERRNO__PMU_MISSING)

static const struct bad_row bad_rows[] = {
	{ __LINE__, "", SYN, "empty event list" },
	{ __LINE__, "cycels", UNK, "event 'cycels' is unknown; did you mean 'cycles'" },
	{ __LINE__, "pagefaults", UNK, "did you mean 'page-faults'" },
	{ __LINE__, "xyzzy-plugh-frobnicate", UNK,
	  "event 'xyzzy-plugh-frobnicate' is unknown (see 'pmon list')" },
	{ __LINE__, "cycles:x", SYN, "unknown modifier 'x'" },
	{ __LINE__, "cycles:", SYN, "empty modifier" },
	{ __LINE__, "cycles:pppp", SYN, "at most 3 'p' modifiers" },
	{ __LINE__, "r12zz", SYN, "'12zz' is not a hexadecimal number" },
	{ __LINE__, "r1ffffffffffffffff", SYN, "is not a 64-bit hexadecimal number" },
	{ __LINE__, "cpu/foo=1/", SYN,
	  "'foo' is neither a format term nor an event of PMU 'cpu' (terms: cmask, edge, event, "
	  "event2, inv, ldlat, umask)" },
	{ __LINE__, "cpu/event=0x1ff/", SYN,
	  "value 0x1ff does not fit 'event' (8 bits: config:0-7)" },
	{ __LINE__, "cpu/event=zz/", SYN, "'event=zz': the value is not a number" },
	{ __LINE__, "cpu/event=1", SYN, "expected 'pmu/term=value,.../'" },
	{ __LINE__, "cpu//", SYN, "no terms between the slashes" },
	{ __LINE__, "cpu/event=1/x", SYN, "unknown modifier" },
	{ __LINE__, "nopmu/event=1/", MIS, "PMU 'nopmu' does not exist here" },
	{ __LINE__, "{cycles,task-clock", SYN, "missing '}'" },
	{ __LINE__, "cycles}", SYN, "unmatched '}'" },
	{ __LINE__, "{}", SYN, "empty group" },
	{ __LINE__, "{cycles}:q", SYN, "expected ':modifiers' after '}'" },
	{ __LINE__, "cycles,,task-clock", SYN, "empty event in the list" },
	{ __LINE__, "cycles,", SYN, "empty event in the list" },
	{ __LINE__, "sched:sched_swich", UNK,
	  "tracepoint 'sched:sched_swich' does not exist; did you mean 'sched:sched_switch'" },
};

static void test_event__bad(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_rows) / sizeof(bad_rows[0]); i++) {
		const struct bad_row *r = &bad_rows[i];
		int err;
		struct pmon_evlist *l = list_with(r->spec, &err);

		print_message("row at line %d: '%s' -> %s\n", r->line, r->spec, pmon_errdetail());
		assert_int_equal(err, r->err);
		assert_non_null(strstr(pmon_errdetail(), r->detail));
		assert_int_equal(pmon_evlist__count(l), 0);
		pmon_evlist__free(l);
	}
}

/* libpfm4: a CPU-specific name resolves where its PMU exists and otherwise
 * says which PMU it needs, never "unknown". */
static void test_event__libpfm4(void **state)
{
	struct pmon_evlist *l = pmon_evlist__new(NULL);
	int err;

	(void)state;
	err = pmon_evlist__add(l, "skl::INST_RETIRED:ANY_P");
	print_message("skl::INST_RETIRED:ANY_P -> %d %s\n", err, pmon_errdetail());
	if (err) {
		assert_int_equal(err, MIS);
		assert_non_null(strstr(pmon_errdetail(), "needs the"));
		assert_non_null(strstr(pmon_errdetail(), "'skl'"));
	} else {
		assert_int_equal(pmon_evlist__event(l, 0)->source, PMON_EV_PFM);
	}
	assert_int_equal(pmon_evlist__add(l, "skl::NO_SUCH_EVENT_AT_ALL"), UNK);
	pmon_evlist__free(l);
}

struct names {
	int hw, cache, sw, alias, tp;
	bool saw_alias_unit;
};

static void count_cb(void *ctx, enum pmon_event_source src, const char *pmu, const char *name,
		     const char *desc)
{
	struct names *n = ctx;

	(void)pmu, (void)desc;
	switch (src) {
	case PMON_EV_HARDWARE:
		n->hw++;
		break;
	case PMON_EV_CACHE:
		n->cache++;
		break;
	case PMON_EV_SOFTWARE:
		n->sw++;
		break;
	case PMON_EV_ALIAS:
		n->alias++;
		/* the .unit and .scale files are attributes, not events */
		assert_null(strstr(name, ".unit"));
		break;
	case PMON_EV_TRACEPOINT:
		n->tp++;
		break;
	default:
		break;
	}
}

static void test_event__list_names(void **state)
{
	struct pmon_event_opts o = {
		.sz = sizeof(o), .sysfs_root = sysfs, .tracefs_root = tracefs, .no_pfm = true
	};
	struct names n = { 0 };

	(void)state;
	assert_true(pmon_event_list_names(&o, NULL, count_cb, &n) > 50);
	assert_int_equal(n.hw, 14);
	assert_int_equal(n.cache, 7 * 3 * 2);
	assert_int_equal(n.alias, 2);
	assert_int_equal(n.tp, 2);
	memset(&n, 0, sizeof(n));
	assert_int_equal(pmon_event_list_names(&o, "sched_w", count_cb, &n), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event__good),
		cmocka_unit_test(test_event__scale_and_modifiers),
		cmocka_unit_test(test_event__groups),
		cmocka_unit_test(test_event__bad),
		cmocka_unit_test(test_event__libpfm4),
		cmocka_unit_test(test_event__list_names),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
