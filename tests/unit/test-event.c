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
	/* A format file as Linux 6.x writes it (trace_format_show()). */
	put("tracing/events/sched/sched_switch/format",
	    "name: sched_switch\nID: 316\nformat:\n"
	    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	    "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	    "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	    "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	    "\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n\n"
	    "print fmt: \"prev_comm=%s next_pid=%d\", REC->prev_comm, REC->next_pid\n");
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

/* #13.9: hardware events exclude the guest by default, as perf's
 * event_attr_init(); :G and :H choose as parse_events__modifier_list() does
 * (GH: both). Software events keep 0. */
static void test_event__exclude_guest(void **state)
{
	static const struct {
		int line;
		const char *spec;
		int eg, eh; /* exclude_guest, exclude_host */
	} t[] = {
		{ __LINE__, "cycles", 1, 0 },
		{ __LINE__, "cycles:u", 1, 0 },
		{ __LINE__, "cycles:G", 0, 1 },
		{ __LINE__, "cycles:H", 1, 0 },
		{ __LINE__, "cycles:GH", 0, 0 },
		{ __LINE__, "L1-dcache-loads", 1, 0 },
		{ __LINE__, "r003c", 1, 0 },
		{ __LINE__, "cpu/event=0x3c/", 1, 0 },
		{ __LINE__, "cpu/event=0x3c/G", 0, 1 },
		{ __LINE__, "task-clock", 0, 0 },
		{ __LINE__, "energy-pkg", 0, 0 },
		{ __LINE__, "{cycles,instructions}:G", 0, 1 },
		{ __LINE__, "{cycles:H,task-clock}:G", 0, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int err;
		struct pmon_evlist *l = list_with(t[i].spec, &err);
		const struct pmon_event_desc *d;

		print_message("row at line %d: %s\n", t[i].line, t[i].spec);
		assert_int_equal(err, 0);
		d = pmon_evlist__event(l, 0);
		assert_int_equal(d->attr.exclude_guest, t[i].eg);
		assert_int_equal(d->attr.exclude_host, t[i].eh);
		pmon_evlist__free(l);
	}
}

/* A hybrid part's sysfs as Linux lays it out (Alder Lake: cpu_core type 4,
 * cpu_atom type 10, each with its cpus, format/ and events/). */
static void hybrid_tree(char *out, size_t len)
{
	put("hyb/bus/event_source/devices/cpu_core/type", "4\n");
	put("hyb/bus/event_source/devices/cpu_core/cpus", "0-15\n");
	put("hyb/bus/event_source/devices/cpu_core/format/event", "config:0-7\n");
	put("hyb/bus/event_source/devices/cpu_core/format/umask", "config:8-15\n");
	put("hyb/bus/event_source/devices/cpu_core/events/cpu-cycles", "event=0x3c\n");
	put("hyb/bus/event_source/devices/cpu_atom/type", "10\n");
	put("hyb/bus/event_source/devices/cpu_atom/cpus", "16-23\n");
	put("hyb/bus/event_source/devices/cpu_atom/format/event", "config:0-7\n");
	put("hyb/bus/event_source/devices/cpu_atom/format/umask", "config:8-15\n");
	put("hyb/bus/event_source/devices/cpu_atom/events/cpu-cycles", "event=0x3c\n");
	put("hyb/bus/event_source/devices/software/type", "1\n");
	snprintf(out, len, "%s/hyb", root);
}

static struct pmon_evlist *hybrid_list(const char *spec, int *err)
{
	char hyb[300];
	struct pmon_event_opts o = { .sz = sizeof(o), .tracefs_root = tracefs, .no_pfm = true };
	struct pmon_evlist *l;

	hybrid_tree(hyb, sizeof(hyb));
	o.sysfs_root = hyb;
	l = pmon_evlist__new(&o);
	assert_non_null(l);
	*err = pmon_evlist__add(l, spec);
	return l;
}

/* A tracepoint's fields from its tracefs format file (the trace's kernel
 * events read sched_switch's prev_state and next_pid there). */
static void test_event__tracepoint_fields(void **state)
{
	int err;
	struct pmon_evlist *l = list_with("task-clock", &err);
	static const struct {
		int line;
		const char *tp, *field;
		int err;
		unsigned off, size;
	} rows[] = {
		{ __LINE__, "sched:sched_switch", "prev_state", 0, 32, 8 },
		{ __LINE__, "sched:sched_switch", "next_pid", 0, 56, 4 },
		{ __LINE__, "sched:sched_switch", "prev_comm", 0, 8, 16 },
		{ __LINE__, "sched:sched_switch", "common_pid", 0, 4, 4 },
		{ __LINE__, "sched:sched_switch", "prev", -ENOENT, 0, 0 }, /* a prefix */
		{ __LINE__, "sched:sched_switch", "pid", -ENOENT, 0, 0 }, /* a suffix */
		{ __LINE__, "sched:sched_wakeup", "pid", -ENOENT, 0, 0 }, /* no format file */
		{ __LINE__, "sched", "pid", -EINVAL, 0, 0 },
		{ __LINE__, "../x:y", "pid", -EINVAL, 0, 0 },
	};

	(void)state;
	assert_int_equal(err, 0);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		unsigned off = 0, size = 0;
		int e = pmon_evlist__tp_field(l, rows[i].tp, rows[i].field, &off, &size);
		if (e != rows[i].err || (!e && (off != rows[i].off || size != rows[i].size)))
			fail_msg("line %d: %s %s: err %d offset %u size %u", rows[i].line,
				 rows[i].tp, rows[i].field, e, off, size);
	}
	pmon_evlist__free(l);
}

/* #13.2: on cpu_core + cpu_atom a generic event opens once per core PMU,
 * the type in config[63:32], named as perf 6.x names them. */
static void test_event__hybrid_expansion(void **state)
{
	int err;
	struct pmon_evlist *l = hybrid_list("cycles:u,L1-dcache-load-misses", &err);
	const struct pmon_event_desc *d;

	(void)state;
	assert_int_equal(err, 0);
	assert_int_equal(pmon_evlist__count(l), 4);
	d = pmon_evlist__event(l, 0);
	assert_string_equal(d->name, "cpu_core/cycles:u/");
	assert_string_equal(d->pmu, "cpu_core");
	assert_int_equal(d->attr.type, PERF_TYPE_HARDWARE);
	assert_int_equal(d->attr.config, 4ULL << 32 | PERF_COUNT_HW_CPU_CYCLES);
	assert_int_equal(d->attr.exclude_kernel, 1);
	assert_int_equal(d->group, 0);
	d = pmon_evlist__event(l, 1);
	assert_string_equal(d->name, "cpu_atom/cycles:u/");
	assert_int_equal(d->attr.config, 10ULL << 32 | PERF_COUNT_HW_CPU_CYCLES);
	assert_int_equal(d->group, 1);
	d = pmon_evlist__event(l, 3);
	assert_string_equal(d->name, "cpu_atom/L1-dcache-load-misses/");
	assert_int_equal(d->attr.type, PERF_TYPE_HW_CACHE);
	assert_int_equal(d->attr.config, 10ULL << 32 | 0x10000);
	pmon_evlist__free(l);

	/* A group splits by PMU; a software member stays in the first copy. */
	l = hybrid_list("{cycles,instructions,task-clock},page-faults", &err);
	assert_int_equal(err, 0);
	assert_int_equal(pmon_evlist__count(l), 6);
	assert_string_equal(pmon_evlist__event(l, 0)->name, "cpu_core/cycles/");
	assert_string_equal(pmon_evlist__event(l, 1)->name, "cpu_core/instructions/");
	assert_string_equal(pmon_evlist__event(l, 2)->name, "task-clock");
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(pmon_evlist__event(l, i)->group, 0);
	assert_string_equal(pmon_evlist__event(l, 3)->name, "cpu_atom/cycles/");
	assert_string_equal(pmon_evlist__event(l, 4)->name, "cpu_atom/instructions/");
	assert_int_equal(pmon_evlist__event(l, 3)->group, 3);
	assert_int_equal(pmon_evlist__event(l, 4)->group, 3);
	assert_string_equal(pmon_evlist__event(l, 5)->name, "page-faults");
	assert_int_equal(pmon_evlist__event(l, 5)->attr.config, PERF_COUNT_SW_PAGE_FAULTS);
	pmon_evlist__free(l);

	/* Naming one core PMU picks it alone. */
	l = hybrid_list("cpu_atom/cycles/,cpu_core/instructions/", &err);
	assert_int_equal(err, 0);
	assert_int_equal(pmon_evlist__count(l), 2);
	assert_int_equal(pmon_evlist__event(l, 0)->attr.config, 10ULL << 32 | 0);
	assert_int_equal(pmon_evlist__event(l, 0)->attr.type, PERF_TYPE_HARDWARE);
	assert_int_equal(pmon_evlist__event(l, 0)->attr.exclude_guest, 1);
	assert_int_equal(pmon_evlist__event(l, 1)->attr.config,
			 4ULL << 32 | PERF_COUNT_HW_INSTRUCTIONS);
	pmon_evlist__free(l);

	/* Not hybrid ("cpu" only): one event, no type in config. */
	l = list_with("cycles", &err);
	assert_int_equal(err, 0);
	assert_int_equal(pmon_evlist__count(l), 1);
	assert_int_equal(pmon_evlist__event(l, 0)->attr.config, PERF_COUNT_HW_CPU_CYCLES);
	assert_string_equal(pmon_evlist__event(l, 0)->name, "cycles");
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
	{ __LINE__, "xyzzy-plugh-frobnicate", UNK, "event 'xyzzy-plugh-frobnicate' is unknown" },
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

/* The list splitter top uses is the one pmon_evlist__add() uses: groups
 * and PMU terms keep their commas; empty items and stray braces refused. */
static void test_event__list_split(void **state)
{
	static const struct {
		int line;
		const char *spec;
		const char *items[4]; /* NULL-ended; all NULL with bad: an error */
		bool bad;
	} rows[] = {
		{ __LINE__, "a,b", { "a", "b" }, false },
		{ __LINE__, "{a,b}:u,c", { "{a,b}:u", "c" }, false },
		{ __LINE__,
		  "cpu/event=0x3c,umask=0/,b",
		  { "cpu/event=0x3c,umask=0/", "b" },
		  false },
		{ __LINE__, "a,,b", { "a" }, true },
		{ __LINE__, "a,", { NULL }, true },
		{ __LINE__, "{a,b", { NULL }, true },
		{ __LINE__, "", { NULL }, true },
	};

	(void)state;
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		const char *pos = NULL;
		char item[64];
		size_t k = 0;
		int rc;

		while ((rc = pmon_evlist__next(rows[r].spec, &pos, item, sizeof(item))) > 0) {
			if (!rows[r].items[k] || strcmp(item, rows[r].items[k]))
				fail_msg("line %d: item %zu is '%s'", rows[r].line, k, item);
			k++;
		}
		if (rows[r].bad != (rc < 0))
			fail_msg("line %d: returned %d", rows[r].line, rc);
		if (!rows[r].bad && rows[r].items[k])
			fail_msg("line %d: %zu items, more expected", rows[r].line, k);
	}
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
		cmocka_unit_test(test_event__exclude_guest),
		cmocka_unit_test(test_event__hybrid_expansion),
		cmocka_unit_test(test_event__tracepoint_fields),
		cmocka_unit_test(test_event__list_split),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
