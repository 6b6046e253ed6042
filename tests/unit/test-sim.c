// SPDX-License-Identifier: MIT
/* pmon simulate's pure parts (lib/sim): cache geometry from real CPUID
 * dumps (values checked by hand against the SDM/APM layouts), geometry
 * strings, the simulated event names, callgrind's output format, and a
 * synthetic run written as a recording and read back by pmon report. */
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <linux/perf_event.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <pmon/pmon.h>

struct geom_row {
	int line;
	const char *dump;
	int err;
	uint64_t i1, d1, ll; /* sizes */
	unsigned i1w, d1w, llw, llline, lllevel, ll_enumerated;
	const char *source;
};

/*
 * By hand from the dumps' rows. Alder Lake P-core leaf 4: subleaf 0 (L1d)
 * EBX 02c0003f ECX 3f: 12 ways * 64 B * 64 sets = 48K; subleaf 1 (L1i)
 * EBX 01c0003f: 8 ways, 32K; subleaf 3 (L3) EBX 02c0003f ECX 9fff: 12 ways
 * * 64 B * 40960 sets = 30M, a set count no simulator indexes, so 15 ways.
 * Genoa 8000001DH subleaf 3: EBX 03c0003f ECX 7fff: 16 ways, 32768 sets,
 * 32M. Athlon 64 (K8): 80000005H ECX 40020140 (64K 2-way 64B), 80000006H
 * ECX 02008140 (512K, code 8: 16-way).
 */
static const struct geom_row geom_rows[] = {
	{ __LINE__, "intel-core-i9-12900k-alderlake-pcore.txt", 0, 32768, 49152, 30 << 20, 8, 12,
	  15, 64, 3, 12, "CPUID leaf 4" },
	{ __LINE__, "intel-core-i7-6700k-skylake.txt", 0, 32768, 32768, 8 << 20, 8, 8, 16, 64, 3, 0,
	  "CPUID leaf 4" },
	{ __LINE__, "amd-epyc-9654-zen4-genoa.txt", 0, 32768, 32768, 32 << 20, 8, 8, 16, 64, 3, 0,
	  "CPUID 8000001DH" },
	{ __LINE__, "amd-athlon64-2800-k8.txt", 0, 65536, 65536, 512 << 10, 2, 2, 16, 64, 2, 0,
	  "CPUID 80000005H/80000006H" },
	{ __LINE__, "intel-pentium-pro.txt", -ENOENT, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL },
};

static void test_sim__caches_from_dumps(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(geom_rows) / sizeof(geom_rows[0]); i++) {
		const struct geom_row *r = &geom_rows[i];
		char path[1024];
		struct pmon_sim_caches c;

		print_message("row at line %d: %s\n", r->line, r->dump);
		snprintf(path, sizeof(path), "%s/%s", PMON_CPUID_DIR, r->dump);
		struct pmon_cpuid *id = pmon_cpuid__new_file(path);
		if (!id) {
			print_message("no %s: %s\n", path, pmon_errdetail());
			skip();
		}
		int err = pmon_sim_caches_from_cpuid(id, &c);
		pmon_cpuid__free(id);
		assert_int_equal(err, r->err);
		if (err)
			continue;
		assert_string_equal(c.source, r->source);
		assert_int_equal(c.i1.size, r->i1);
		assert_int_equal(c.i1.assoc, r->i1w);
		assert_int_equal(c.d1.size, r->d1);
		assert_int_equal(c.d1.assoc, r->d1w);
		assert_int_equal(c.d1.line, 64);
		assert_int_equal(c.ll.size, r->ll);
		assert_int_equal(c.ll.assoc, r->llw);
		assert_int_equal(c.ll.line, r->llline);
		assert_int_equal(c.ll_level, r->lllevel);
		assert_int_equal(c.ll_assoc_enumerated, r->ll_enumerated);
		assert_int_equal(pmon_cache_geom__check(&c.i1), 0);
		assert_int_equal(pmon_cache_geom__check(&c.d1), 0);
		assert_int_equal(pmon_cache_geom__check(&c.ll), 0);
	}
}

/* Every dump either yields a geometry valgrind takes, or says why not. */
static void test_sim__caches_all_dumps_valid(void **state)
{
	(void)state;
	const char *dumps[] = { "intel-core-ultra9-288v-lunarlake-pcore.txt",
				"intel-xeon-w9-3475x-sapphirerapids.txt",
				"amd-epyc-9655-zen5-turin.txt",
				"amd-ryzen9-9950x-zen5-graniteridge.txt",
				"intel-core-i9-12900k-alderlake-ecore.txt",
				"amd-phenom2-x4-940-k10.txt",
				"intel-core2-qx9650-yorkfield.txt" };
	for (size_t i = 0; i < sizeof(dumps) / sizeof(dumps[0]); i++) {
		char path[1024];
		struct pmon_sim_caches c;
		snprintf(path, sizeof(path), "%s/%s", PMON_CPUID_DIR, dumps[i]);
		struct pmon_cpuid *id = pmon_cpuid__new_file(path);
		print_message("%s\n", dumps[i]);
		if (!id)
			skip();
		int err = pmon_sim_caches_from_cpuid(id, &c);
		pmon_cpuid__free(id);
		if (err) {
			assert_int_equal(err, -ENOENT);
			continue;
		}
		assert_int_equal(pmon_cache_geom__check(&c.i1), 0);
		assert_int_equal(pmon_cache_geom__check(&c.d1), 0);
		assert_int_equal(pmon_cache_geom__check(&c.ll), 0);
	}
}

struct parse_row {
	int line;
	const char *text;
	int err;
	uint64_t size;
	unsigned assoc, linesz;
	const char *detail;
};

static const struct parse_row parse_rows[] = {
	{ __LINE__, "48K,12,64", 0, 49152, 12, 64, NULL },
	{ __LINE__, "32768,8,64", 0, 32768, 8, 64, NULL },
	{ __LINE__, "32M,16,64", 0, 32 << 20, 16, 64, NULL },
	{ __LINE__, "1m,16,64", 0, 1 << 20, 16, 64, NULL },
	{ __LINE__, "0,12,64", -EINVAL, 0, 0, 0, "must not be zero" },
	{ __LINE__, "32K,0,64", -EINVAL, 0, 0, 0, "must not be zero" },
	{ __LINE__, "32K,8,48", -EINVAL, 0, 0, 0, "line size 48 is not a power of two" },
	{ __LINE__, "32K,8,8", -EINVAL, 0, 0, 0, "too small" },
	{ __LINE__, "30M,12,64", -EINVAL, 0, 0, 0, "40960 sets" },
	{ __LINE__, "48K,5,64", -EINVAL, 0, 0, 0, "not a multiple" },
	{ __LINE__, "64,1,64", -EINVAL, 0, 0, 0, "not larger than a line" },
	{ __LINE__, "32K,8", -EINVAL, 0, 0, 0, "is not SIZE,ASSOC,LINE" },
	{ __LINE__, "32K,8,64,1", -EINVAL, 0, 0, 0, "is not SIZE,ASSOC,LINE" },
	{ __LINE__, "big,8,64", -EINVAL, 0, 0, 0, "is not SIZE,ASSOC,LINE" },
	{ __LINE__, "-32K,8,64", -EINVAL, 0, 0, 0, "is not SIZE,ASSOC,LINE" },
	{ __LINE__, "99999999999999999999,8,64", -EINVAL, 0, 0, 0, "is not SIZE,ASSOC,LINE" },
	{ __LINE__, "4G,8,64", -EINVAL, 0, 0, 0, "too large" },
};

static void test_sim__geom_parse(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(parse_rows) / sizeof(parse_rows[0]); i++) {
		const struct parse_row *r = &parse_rows[i];
		struct pmon_cache_geom g;
		print_message("row at line %d: %s\n", r->line, r->text);
		int err = pmon_cache_geom__parse(r->text, &g);
		assert_int_equal(err, r->err);
		if (err) {
			assert_non_null(strstr(pmon_errdetail(), r->detail));
			continue;
		}
		assert_int_equal(g.size, r->size);
		assert_int_equal(g.assoc, r->assoc);
		assert_int_equal(g.line, r->linesz);
	}
}

static void test_sim__event_names(void **state)
{
	const struct pmon_sim_event *tab;
	(void)state;
	pmon_sim_events(&tab);
	struct {
		int line;
		const char *name;
		const char *want; /* NULL: unknown */
	} rows[] = {
		{ __LINE__, "sim/instructions/", "sim/instructions/" },
		{ __LINE__, "sim/instructions", "sim/instructions/" },
		{ __LINE__, "instructions", "sim/instructions/" },
		{ __LINE__, "Ir", "sim/instructions/" },
		{ __LINE__, "D1mr", "sim/L1-dcache-load-misses/" },
		{ __LINE__, "ILmr+DLmr", "sim/LLC-load-misses/" },
		{ __LINE__, "Bcm+Bim", "sim/branch-misses/" },
		{ __LINE__, "sim/branch-misses/", "sim/branch-misses/" },
		{ __LINE__, "sim/bogus/", NULL },
		{ __LINE__, "ir", NULL },
		{ __LINE__, "", NULL },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		print_message("row at line %d: %s\n", rows[i].line, rows[i].name);
		int k = pmon_sim_event__find(rows[i].name);
		if (!rows[i].want) {
			assert_int_equal(k, -PMON_ERRNO__EVENT_UNKNOWN);
			continue;
		}
		assert_true(k >= 0);
		assert_string_equal(tab[k].name, rows[i].want);
	}
}

/* The format's features as callgrind 3.19 writes them: name compression,
 * relative and repeated positions, calls= with its inclusive cost line. */
static const char good[] = "# callgrind format\n"
			   "version: 1\n"
			   "creator: callgrind-3.19.0\n"
			   "pid: 4242\n"
			   "cmd:  ./a.out x\n"
			   "part: 1\n"
			   "desc: I1 cache: 32768 B, 64 B, 8-way associative\n"
			   "positions: instr line\n"
			   "events: Ir Dr D1mr\n"
			   "summary: 40 9 2\n"
			   "\n"
			   "ob=(1) /bin/prog\n"
			   "fl=(1) prog.c\n"
			   "fn=(1) main\n"
			   "0x1000 10 1\n"
			   "+4 * 2 1\n"
			   "cob=(2) /lib/libc.so\n"
			   "cfi=(2) ???\n"
			   "cfn=(2) puts\n"
			   "calls=1 0x5000 0\n"
			   "* * 100 50 5\n"
			   "+3 +1 3 1 1\n"
			   "-3 -1 4\n"
			   "fi=(3) inl.h\n"
			   "+7 20 5 5\n"
			   "\n"
			   "ob=(2)\n"
			   "fl=(2)\n"
			   "fn=(2)\n"
			   "0x5000 0 25 3 1\n"
			   "totals: 40 9 2\n";

static void test_sim__callgrind_parse(void **state)
{
	struct pmon_callgrind *cg;
	uint64_t v;
	(void)state;

	assert_int_equal(pmon_callgrind__parse(good, strlen(good), "t.out", &cg), 0);
	assert_int_equal(pmon_callgrind__nevents(cg), 3);
	assert_string_equal(pmon_callgrind__event(cg, 2), "D1mr");
	assert_int_equal(pmon_callgrind__pid(cg), 4242);
	assert_string_equal(pmon_callgrind__cmd(cg), "./a.out x");
	/* 0x1000, 0x1004 (2, and 4 from "-3" after 0x1007), 0x1007, 0x100b; 0x5000 */
	assert_int_equal(pmon_callgrind__ncosts(cg), 5);
	struct {
		uint64_t addr, ir, dr;
		const char *obj, *fn;
	} want[] = {
		{ 0x1000, 1, 0, "/bin/prog", "main" },
		{ 0x1004, 2 + 4, 1, "/bin/prog", "main" },
		{ 0x1007, 3, 1, "/bin/prog", "main" },
		{ 0x100b, 5, 5, "/bin/prog", "main" },
		{ 0x5000, 25, 3, "/lib/libc.so", "puts" },
	};
	for (size_t i = 0; i < 5; i++) {
		struct pmon_callgrind_cost c;
		pmon_callgrind__cost(cg, i, &c);
		print_message("cost %zu at 0x%llx\n", i, (unsigned long long)c.addr);
		assert_int_equal(c.addr, want[i].addr);
		assert_int_equal(c.v[0], want[i].ir);
		assert_int_equal(c.v[1], want[i].dr);
		assert_string_equal(c.obj, want[i].obj);
		assert_string_equal(c.fn, want[i].fn);
	}
	/* The call's 100 is inclusive cost, in nobody's self cost. */
	assert_int_equal(pmon_callgrind__total(cg, "Ir", NULL, &v), 0);
	assert_int_equal(v, 40);
	assert_int_equal(pmon_callgrind__total(cg, "Ir", "main", &v), 0);
	assert_int_equal(v, 15);
	assert_int_equal(pmon_callgrind__total(cg, "Ir+Dr", "puts", &v), 0);
	assert_int_equal(v, 28);
	assert_int_equal(pmon_callgrind__total(cg, "Bcm", NULL, &v), -ENOENT);
	/* The call site: main's instruction at 0x1004 calls puts once, 100
	 * instructions inclusive. */
	assert_int_equal(pmon_callgrind__ncalls(cg), 1);
	struct pmon_callgrind_call call;
	pmon_callgrind__call(cg, 0, &call);
	assert_string_equal(call.obj, "/bin/prog");
	assert_string_equal(call.fn, "main");
	assert_string_equal(call.callee, "puts");
	assert_int_equal(call.addr, 0x1004);
	assert_int_equal(call.count, 1);
	assert_int_equal(call.inclusive, 100);
	pmon_callgrind__free(cg);
}

/* --separate-callers: one instruction in two contexts is two costs (each
 * its own stack); "calls=" without "cfn=" gives no call site. */
static void test_sim__callgrind_contexts(void **state)
{
	static const char ctx[] = "positions: instr\nevents: Ir\nob=(1) /p\n"
				  "fn=(1) main\n0x10 1\ncfn=(2) leaf'a'main\ncalls=1 0x40\n0x12 7\n"
				  "cfn=(3) leaf'b'main\ncalls=2 0x40\n0x14 9\n"
				  "fn=(2)\n0x40 3\nfn=(3)\n0x40 5\n";
	struct pmon_callgrind *cg;
	struct pmon_callgrind_cost c;
	struct pmon_callgrind_call k;
	(void)state;

	assert_int_equal(pmon_callgrind__parse(ctx, strlen(ctx), "t", &cg), 0);
	assert_int_equal(pmon_callgrind__ncosts(cg), 3);
	pmon_callgrind__cost(cg, 1, &c);
	assert_string_equal(c.fn, "leaf'a'main");
	assert_int_equal(c.v[0], 3);
	pmon_callgrind__cost(cg, 2, &c);
	assert_string_equal(c.fn, "leaf'b'main");
	assert_int_equal(c.v[0], 5);
	assert_int_equal(pmon_callgrind__ncalls(cg), 2);
	pmon_callgrind__call(cg, 1, &k);
	assert_string_equal(k.callee, "leaf'b'main");
	assert_int_equal(k.addr, 0x14);
	assert_int_equal(k.count, 2);
	pmon_callgrind__free(cg);
	static const char bad[] = "events: Ir\nfn=(1) main\ncalls=1 0x40\n0x12 7\n";
	assert_int_equal(pmon_callgrind__parse(bad, strlen(bad), "t", &cg), 0);
	assert_int_equal(pmon_callgrind__ncalls(cg), 0);
	pmon_callgrind__free(cg);
}

/* Three dumps of one run (--combine-dumps=yes), as pmon simulate --regions
 * gets them: names compressed in one part are referred to in the next,
 * each part's costs are its own, each part says what ended it. */
#define PART(n, trig)                                                                              \
	"part: " #n "\ndesc: Trigger: " trig "\npositions: instr line\nevents: Ir ILmr DLmr\n"
static const char parts[] =
	"version: 1\n"
	"pid: 77\n" PART(
		1,
		"Client Request: pmon-region 0 alpha") "ob=(1) /bin/p\n"
						       "fn=(1) main\n"
						       "0x10 1 3 0 1\n"
						       "totals: 3 0 1\n" PART(
							       2,
							       "Client Request: pmon-region 1 "
							       "beta") "ob=(1)\n"
								       "fn=(1)\n"
								       "0x10 1 100 1 2\n"
								       "+2 * 20\n" PART(
									       3,
									       "Client Request: "
									       "pmon-region 0 "
									       "alpha") "ob=(1)"
											"\n"
											"fn=(2) "
											"inner\n"
											"0x40 1 "
											"7 1 "
											"1"
											"\n" PART(
												4,
												"Pr"
												"og"
												"ra"
												"m "
												"te"
												"rm"
												"in"
												"at"
												"io"
												"n") "ob=(1)\n"
												     "fn=(2)\n"
												     "0x40 1 5 0 4\n";

static void test_sim__callgrind_parts(void **state)
{
	struct pmon_callgrind *cg;
	struct pmon_callgrind_part pt;
	(void)state;

	assert_int_equal(pmon_callgrind__parse(parts, strlen(parts), "t.out", &cg), 0);
	assert_int_equal(pmon_callgrind__nparts(cg), 4);
	static const struct {
		int line;
		const char *trigger;
		uint64_t ir, ll;
	} want[] = {
		{ __LINE__, "Client Request: pmon-region 0 alpha", 3, 1 },
		{ __LINE__, "Client Request: pmon-region 1 beta", 120, 3 },
		{ __LINE__, "Client Request: pmon-region 0 alpha", 7, 2 },
		{ __LINE__, "Program termination", 5, 4 },
	};
	for (size_t i = 0; i < 4; i++) {
		print_message("row at line %d\n", want[i].line);
		pmon_callgrind__part(cg, i, &pt);
		assert_string_equal(pt.trigger, want[i].trigger);
		assert_int_equal(pt.v[0], want[i].ir);
		assert_int_equal(pt.v[1] + pt.v[2], want[i].ll);
	}
	pmon_callgrind__part(cg, 4, &pt);
	assert_int_equal(pt.v[0], 0);
	/* the costs of the whole run are all parts' */
	uint64_t v;
	assert_int_equal(pmon_callgrind__total(cg, "Ir", NULL, &v), 0);
	assert_int_equal(v, 135);
	pmon_callgrind__free(cg);

	/* no "part:" at all: one part */
	assert_int_equal(pmon_callgrind__parse(good, strlen(good), "t.out", &cg), 0);
	assert_int_equal(pmon_callgrind__nparts(cg), 1);
	pmon_callgrind__part(cg, 0, &pt);
	assert_int_equal(pt.v[0], 40);
	pmon_callgrind__free(cg);
}

/* Each part goes to the region of the dump before it: the first part
 * (before any region) is outside, "alpha" collects parts 2 and 4 and, in
 * the second run, its only part; the LL event sums ILmr and DLmr. */
static void test_sim__regions(void **state)
{
	struct pmon_callgrind *cg[2];
	struct pmon_sim_region *r;
	size_t n;
	unsigned ev[2] = { (unsigned)pmon_sim_event__find("sim/instructions/"),
			   (unsigned)pmon_sim_event__find("sim/LLC-load-misses/") };
	static const char run2[] = "pid: 78\n" PART(
		1, "Client Request: pmon-region 0 alpha") "ob=/bin/"
							  "p\nfn=main\n0x10 "
							  "1 0 0 0\n" PART(2,
									   "Program "
									   "terminatio"
									   "n") "ob=/"
										"bin/"
										"p\nfn"
										"=main"
										"\n0x1"
										"0 1 "
										"1000 "
										"2 "
										"2\n";
	(void)state;

	assert_int_equal(pmon_callgrind__parse(parts, strlen(parts), "a", &cg[0]), 0);
	assert_int_equal(pmon_callgrind__parse(run2, strlen(run2), "b", &cg[1]), 0);
	assert_int_equal(pmon_sim__regions(cg, 2, ev, 2, &r, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(r[0].id, 0);
	assert_string_equal(r[0].name, "alpha");
	assert_int_equal(r[0].v[0], 120 + 5 + 1000);
	assert_int_equal(r[0].v[1], 3 + 4 + 4);
	assert_int_equal(r[1].id, 1);
	assert_string_equal(r[1].name, "beta");
	assert_int_equal(r[1].v[0], 7);
	assert_int_equal(r[1].v[1], 2);
	assert_int_equal(r[2].id, -1);
	assert_int_equal(r[2].v[0], 3);
	free(r);
	/* nothing outside: no "outside" row; an event not collected: -ENOENT */
	assert_int_equal(pmon_sim__regions(&cg[1], 1, ev, 1, &r, &n), 0);
	assert_int_equal(n, 1);
	free(r);
	unsigned br = (unsigned)pmon_sim_event__find("sim/branch-misses/");
	assert_int_equal(pmon_sim__regions(cg, 2, &br, 1, &r, &n), -ENOENT);
	assert_null(r);
	assert_non_null(strstr(pmon_errdetail(), "--branch"));
	pmon_callgrind__free(cg[0]);
	pmon_callgrind__free(cg[1]);
}

static void test_sim__counterpart(void **state)
{
	static const struct {
		int line;
		const char *measured, *want; /* NULL: refused */
	} rows[] = {
		{ __LINE__, "cycles", "sim/instructions/" },
		{ __LINE__, "cpu/cycles/", "sim/instructions/" },
		{ __LINE__, "cpu_core/instructions/u", "sim/instructions/" },
		{ __LINE__, "cycles:ppp", "sim/instructions/" },
		{ __LINE__, "cpu-clock", "sim/instructions/" },
		{ __LINE__, "cache-misses", "sim/LLC-load-misses/" },
		{ __LINE__, "LLC-load-misses:u", "sim/LLC-load-misses/" },
		{ __LINE__, "L1-dcache-load-misses", "sim/L1-dcache-load-misses/" },
		{ __LINE__, "branch-misses", "sim/branch-misses/" },
		{ __LINE__, "page-faults", NULL },
		{ __LINE__, "context-switches", NULL },
		{ __LINE__, "", NULL },
	};
	const struct pmon_sim_event *tab;
	(void)state;

	pmon_sim_events(&tab);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		print_message("row at line %d\n", rows[i].line);
		int k = pmon_sim_event__counterpart(rows[i].measured);
		if (!rows[i].want) {
			assert_int_equal(k, -PMON_ERRNO__EVENT_UNKNOWN);
			assert_non_null(strstr(pmon_errdetail(), "has no simulated counterpart"));
			continue;
		}
		assert_true(k >= 0);
		assert_string_equal(tab[k].name, rows[i].want);
	}
}

/* Synthetic weights: a name repeated on one side sums (two DSOs' "f"),
 * names on one side only get 0 on the other, the rows come by the size of
 * the disagreement, and only large ones among the first are flagged. */
static void test_sim__compare(void **state)
{
	const struct pmon_sim_weight m[] = {
		{ "hot", 500 }, { "warm", 300 }, { "cold", 100 }, { "f", 50 }, { "f", 50 },
	};
	const struct pmon_sim_weight s[] = {
		{ "hot", 2000 },
		{ "warm", 1400 },
		{ "cold", 400 },
		{ "sim_only", 200 },
	};
	struct pmon_sim_cmp_row *r;
	size_t n;
	(void)state;

	assert_int_equal(pmon_sim__compare(m, 5, s, 4, NULL, &r, &n), 0);
	assert_int_equal(n, 5);
	static const struct {
		int line;
		const char *name;
		double measured, simulated;
		bool flagged;
	} want[] = {
		/* f: 10% vs 0; warm: 30% vs 35%; sim_only: 0 vs 5%; hot 50 vs 50; cold 10 vs 10 */
		{ __LINE__, "f", 10.0, 0.0, true },	  { __LINE__, "warm", 30.0, 35.0, true },
		{ __LINE__, "sim_only", 0.0, 5.0, true }, { __LINE__, "hot", 50.0, 50.0, false },
		{ __LINE__, "cold", 10.0, 10.0, false },
	};
	for (size_t i = 0; i < n; i++) {
		print_message("row at line %d: %s %.3f %.3f\n", want[i].line, r[i].name,
			      r[i].measured, r[i].simulated);
		assert_string_equal(r[i].name, want[i].name);
		assert_true(fabs(r[i].measured - want[i].measured) < 1e-9);
		assert_true(fabs(r[i].simulated - want[i].simulated) < 1e-9);
		assert_true(fabs(r[i].diff - (want[i].simulated - want[i].measured)) < 1e-9);
		assert_int_equal(r[i].flagged, want[i].flagged);
	}
	free(r);
	/* at most flag_max flagged; a higher threshold flags fewer */
	struct pmon_sim_cmp_opts o = { .sz = sizeof(o), .flag_points = 6, .flag_max = 1 };
	assert_int_equal(pmon_sim__compare(m, 5, s, 4, &o, &r, &n), 0);
	assert_true(r[0].flagged);
	assert_false(r[1].flagged);
	free(r);
	o.flag_max = 5;
	assert_int_equal(pmon_sim__compare(m, 5, s, 4, &o, &r, &n), 0);
	assert_true(r[0].flagged);
	assert_false(r[1].flagged); /* warm's 5 points < 6 */
	free(r);
	/* an empty side, a bad weight */
	assert_int_equal(pmon_sim__compare(m, 0, s, 4, NULL, &r, &n), -ENODATA);
	assert_non_null(strstr(pmon_errdetail(), "the recording has no samples"));
	assert_int_equal(pmon_sim__compare(m, 5, s, 0, NULL, &r, &n), -ENODATA);
	assert_non_null(strstr(pmon_errdetail(), "the simulation counted nothing"));
	const struct pmon_sim_weight bad[] = { { "x", -1 } };
	assert_int_equal(pmon_sim__compare(bad, 1, s, 4, NULL, &r, &n), -EINVAL);
	assert_null(r);
}

/* A report as plain rows: the counterpart is the first event that has one,
 * an event's weights leave the kernel's part aside, shares are of a total. */
static void test_sim__profile(void **state)
{
	struct pmon_sim_profile_row rows[] = {
		{ 1, "spin", "wl", 900 },
		{ 1, "main", "wl", 50 },
		{ 1, "clear_page", "[kernel.kallsyms]", 50 },
		{ 0, "spin", "wl", 7 },
		{ 1, "main", "libc.so.6", 25 },
	};
	struct pmon_sim_profile p = {
		.events = { "page-faults", "cpu-clock" }, .nevents = 2, .rows = rows, .n = 5
	};
	const struct pmon_sim_event *tab;
	struct pmon_sim_weight *w;
	const char *ev;
	size_t n;
	double kernel = 0;
	(void)state;

	pmon_sim_events(&tab);
	int k = pmon_sim_profile__counterpart(&p, &ev);
	assert_true(k >= 0);
	assert_string_equal(ev, "cpu-clock");
	assert_string_equal(tab[k].name, "sim/instructions/");
	assert_int_equal(pmon_sim_profile__weights(&p, "cpu-clock", &w, &n, &kernel), 0);
	assert_int_equal(n, 3);
	assert_true(fabs(kernel - 50) < 1e-9);
	assert_true(fabs(pmon_sim_weights_total(w, n) - 975) < 1e-9);
	assert_true(fabs(pmon_sim_weights_share(w, n, 975, "main") - 100.0 * 75 / 975) < 1e-9);
	assert_true(pmon_sim_weights_share(w, n, 975, "clear_page") == 0);
	assert_true(pmon_sim_weights_share(w, n, 0, "spin") == 0);
	free(w);
	assert_int_equal(pmon_sim_profile__weights(&p, "cycles", &w, &n, &kernel), 0);
	assert_int_equal(n, 0);
	assert_non_null(w);
	free(w);
	/* no event with a counterpart: the first one is named; none at all */
	p.nevents = 1;
	assert_int_equal(pmon_sim_profile__counterpart(&p, &ev), -PMON_ERRNO__EVENT_UNKNOWN);
	assert_non_null(strstr(pmon_errdetail(), "'page-faults' has no simulated counterpart"));
	assert_null(ev);
	p.nevents = 0;
	assert_int_equal(pmon_sim_profile__counterpart(&p, &ev), -PMON_ERRNO__EVENT_UNKNOWN);
	assert_non_null(strstr(pmon_errdetail(), "no sampled event"));
	pmon_sim_profile_release(NULL);
}

/* Two processes' region reports appended: pairs and totals sum by name,
 * in order of first appearance; a missing file gives none. */
static void test_sim__region_figures(void **state)
{
	char path[] = "/tmp/pmon-test-regions-XXXXXX";
	int fd = mkstemp(path);
	const char doc[] = "{\"regions\": [{\"name\": \"a\", \"pairs\": 2, \"metrics\": "
			   "[{\"name\": \"tsc\", \"unit\": \"ticks\", \"total\": 10.5}]},"
			   " {\"name\": \"b\", \"pairs\": 1, \"metrics\": []}]}\n"
			   "{\"regions\": [{\"name\": \"a\", \"pairs\": 3, \"metrics\": "
			   "[{\"name\": \"tsc\", \"unit\": \"ticks\", \"total\": 1.5},"
			   " {\"name\": \"task-clock\", \"unit\": \"ns\", \"total\": 7}]}]}\n";
	struct pmon_sim_region_figures *f;
	size_t n;
	(void)state;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, doc, sizeof(doc) - 1), (ssize_t)sizeof(doc) - 1);
	close(fd);
	assert_int_equal(pmon_sim__region_figures(path, &f, &n), 0);
	unlink(path);
	assert_int_equal(n, 2);
	const struct pmon_sim_region_figures *a = pmon_sim_region_figures__find(f, n, "a");
	assert_non_null(a);
	assert_int_equal(a->pairs, 5);
	assert_int_equal(a->nm, 2);
	assert_string_equal(a->m[0].name, "tsc");
	assert_string_equal(a->m[0].unit, "ticks");
	assert_true(fabs(a->m[0].total - 12.0) < 1e-9);
	assert_string_equal(a->m[1].name, "task-clock");
	assert_string_equal(f[1].name, "b");
	assert_int_equal(f[1].pairs, 1);
	assert_null(pmon_sim_region_figures__find(f, n, "c"));
	free(f);
	assert_int_equal(pmon_sim__region_figures(path, &f, &n), 0);
	assert_int_equal(n, 0);
	free(f);
}

/* The loop of "chain" (8 adds, dec, jne) ran 1000 times, its set-up and
 * return once; another function's instructions and another object's "chain"
 * are not its. */
static const char hot[] =
	"events: Ir\npositions: instr\n"
	"ob=/bin/p\nfn=chain\n0x10 1\n"
	"0x12 1000\n+4 1000\n+4 1000\n+4 1000\n+4 1000\n+4 1000\n+4 1000\n+4 1000\n"
	"+4 1000\n+3 1000\n+2 1\n"
	"fn=other\n0x100 5000\n"
	"ob=/lib/q\nfn=chain\n0x12 99999\n";

static void test_sim__hot_block(void **state)
{
	struct pmon_callgrind *cg;
	struct pmon_sim_block b;
	(void)state;

	assert_int_equal(pmon_callgrind__parse(hot, strlen(hot), "t", &cg), 0);
	assert_int_equal(pmon_sim__hot_block(&cg, 1, "chain", &b), 0);
	assert_string_equal(b.obj, "/bin/p");
	assert_int_equal(b.start, 0x12);
	assert_int_equal(b.last, 0x35);
	assert_int_equal(b.ninsn, 10);
	assert_int_equal(b.count, 1000);
	/* two runs: counts summed */
	struct pmon_callgrind *two[2] = { cg, cg };
	assert_int_equal(pmon_sim__hot_block(two, 2, "chain", &b), 0);
	assert_int_equal(b.count, 2000);
	assert_int_equal(pmon_sim__hot_block(&cg, 1, "nothere", &b), -ENOENT);
	assert_non_null(strstr(pmon_errdetail(), "'nothere' executed no instruction"));
	pmon_callgrind__free(cg);
}

/* A function as annotate sees it: 0x10 setup, a loop 0x14..0x20 closed by
 * a jne back to 0x14, an exit; counts per instruction. */
static void test_sim__hot_range(void **state)
{
	/* addr, count, target, branch */
	static const struct pmon_sim_insn fn[] = {
		{ 0x10, 1, 0, false },	 { 0x14, 900, 0, false },    { 0x18, 1000, 0, false },
		{ 0x1c, 950, 0, false }, { 0x20, 1000, 0x14, true }, { 0x22, 1, 0, false },
		{ 0x24, 1, 0, true },
	};
	/* straight code, a jump target in the middle, no loop */
	static const struct pmon_sim_insn straight[] = {
		{ 0x10, 5, 0, false },	 { 0x12, 5, 0x18, true }, { 0x14, 7, 0, false },
		{ 0x18, 9, 0, false },	 { 0x1a, 40, 0, false },  { 0x1c, 9, 0, false },
		{ 0x1e, 9, 0x30, true }, { 0x20, 9, 0, false },
	};
	/* a simulation: exact counts, no branch information (simulate --mca) */
	static const struct pmon_sim_insn exact[] = {
		{ 0x10, 1, 0, false }, { 0x12, 7, 0, false }, { 0x14, 7, 0, false },
		{ 0x16, 7, 0, false }, { 0x18, 1, 0, false },
	};
	static const struct pmon_sim_insn none[] = { { 0x10, 0, 0, false } };
	static const struct {
		int line;
		const struct pmon_sim_insn *in;
		size_t n;
		bool exact;
		int ret;
		size_t lo, hi, hot;
	} rows[] = {
		{ __LINE__, fn, 7, false, 0, 1, 4, 2 }, /* the loop, whatever the noise */
		{ __LINE__, fn, 7, true, 0, 1, 4, 2 }, /* a loop wins over equal counts */
		{ __LINE__, straight, 8, false, 0, 3, 6, 4 }, /* target 0x18 .. branch 0x1e */
		{ __LINE__, exact, 5, true, 0, 1, 3, 1 },
		{ __LINE__, exact, 5, false, 0, 0, 4, 1 }, /* no branches: the whole */
		{ __LINE__, none, 1, false, -ENOENT, 0, 0, 0 },
		{ __LINE__, none, 0, true, -ENOENT, 0, 0, 0 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		size_t lo = 99, hi = 99, h = 99;
		int ret = pmon_sim__hot_range(rows[i].in, rows[i].n, rows[i].exact, &lo, &hi, &h);
		if (ret != rows[i].ret ||
		    (!ret && (lo != rows[i].lo || hi != rows[i].hi || h != rows[i].hot)))
			fail_msg("row at line %d: ret %d lo %zu hi %zu hot %zu", rows[i].line, ret,
				 lo, hi, h);
	}
}

/* @dump of ../shared/data/cpuid decoded into @info; the test is skipped
 * where the dump is missing. */
static void decode_dump(const char *dump, struct pmon_cpu_info *info)
{
	char path[1024];
	struct pmon_cpuid *id;

	snprintf(path, sizeof(path), "%s/%s", PMON_CPUID_DIR, dump);
	id = pmon_cpuid__new_file(path);
	if (!id)
		skip();
	assert_int_equal(pmon_cpu_decode(id, info), 0);
	pmon_cpuid__free(id);
}

static void test_sim__mcpu(void **state)
{
	static const struct {
		int line;
		const char *dump, *mcpu;
	} rows[] = {
		{ __LINE__, "intel-core-i7-6700k-skylake.txt", "skylake" },
		{ __LINE__, "intel-core-i9-12900k-alderlake-pcore.txt", "alderlake" },
		{ __LINE__, "intel-core-i5-2400-sandybridge.txt", "sandybridge" },
		{ __LINE__, "intel-xeon-4214-cascadelake-sp.txt", "cascadelake" },
		{ __LINE__, "amd-epyc-7551p-zen1.txt", "znver1" },
		{ __LINE__, "amd-epyc-7742-zen2-rome.txt", "znver2" },
		{ __LINE__, "amd-epyc-7763-zen3-milan.txt", "znver3" },
		{ __LINE__, "amd-epyc-9655-zen5-turin.txt", "znver3" }, /* LLVM 14 has no Zen 5 */
		{ __LINE__, "intel-pentium-pro.txt", "x86-64" },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct pmon_cpu_info info;
		print_message("row at line %d: %s\n", rows[i].line, rows[i].dump);
		decode_dump(rows[i].dump, &info);
		assert_string_equal(pmon_sim_mcpu(&info.id), rows[i].mcpu);
	}
}

/* bench --predict's clock chain: imul r64's latency by CPU, from dumps
 * (3 where Agner Fog's tables and uops.info measure 3; 0 elsewhere). */
static void test_sim__clock_latency(void **state)
{
	static const struct {
		int line;
		const char *dump;
		unsigned latency;
	} rows[] = {
		{ __LINE__, "intel-core-i7-860-lynnfield.txt", 3 }, /* Nehalem */
		{ __LINE__, "intel-core-i5-2400-sandybridge.txt", 3 },
		{ __LINE__, "intel-xeon-e5-2696v3-haswell-ep.txt", 3 },
		{ __LINE__, "intel-core-i7-6700k-skylake.txt", 3 },
		{ __LINE__, "intel-core-i7-1065g7-icelake.txt", 3 },
		{ __LINE__, "intel-xeon-w9-3475x-sapphirerapids.txt", 3 },
		{ __LINE__, "intel-core-i9-12900k-alderlake-pcore.txt", 3 },
		{ __LINE__, "intel-core-i9-12900k-alderlake-ecore.txt", 0 }, /* CPUID.1AH: Atom */
		{ __LINE__, "intel-core-ultra7-155h-meteorlake-pcore.txt", 3 },
		{ __LINE__, "intel-core-ultra7-155h-meteorlake-ecore.txt", 0 },
		{ __LINE__, "intel-core-i3-n305-alderlake-n.txt", 0 }, /* E-cores only */
		{ __LINE__, "intel-celeron-j4105-goldmontplus.txt", 0 },
		{ __LINE__, "intel-core2-qx9650-yorkfield.txt", 0 }, /* 5 with r64 */
		{ __LINE__, "amd-epyc-7551p-zen1.txt", 3 },
		{ __LINE__, "amd-epyc-7742-zen2-rome.txt", 3 },
		{ __LINE__, "amd-epyc-9654-zen4-genoa.txt", 3 },
		{ __LINE__, "amd-epyc-9655-zen5-turin.txt", 3 },
		{ __LINE__, "amd-fx-8150-bulldozer.txt", 0 }, /* 6 */
		{ __LINE__, "amd-phenom2-x4-940-k10.txt", 0 },
	};
	(void)state;

	assert_int_equal(pmon_bench_clock_latency(NULL), 0);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct pmon_cpu_info info;
		print_message("row at line %d: %s\n", rows[i].line, rows[i].dump);
		decode_dump(rows[i].dump, &info);
		assert_int_equal(pmon_bench_clock_latency(&info), rows[i].latency);
	}
}

static void test_sim__objdump_asm(void **state)
{
	static const char od[] = "\n/bin/p:     file format elf64-x86-64\n\n\n"
				 "Disassembly of section .text:\n\n"
				 "00000000000014a0 <chain>:\n"
				 "    14a2:\tadd    $0x1,%rax\n"
				 "    14a6:\tmov    0x10(%rip),%rcx        # 14b0 <x>\n"
				 "    14ad:\tcall   1000 <f@plt>\n"
				 "    14b2:\tjmp    *%rax\n"
				 "    14c2:\tdec    %rdi\n"
				 "    14c5:\tjne    14a2 <chain+0x2>\n"
				 "    14c7:\tret\n";
	char out[512];
	size_t n;
	(void)state;

	assert_int_equal(pmon_sim__objdump_asm(od, strlen(od), 0x14c5, out, sizeof(out), &n), 0);
	assert_int_equal(n, 6);
	assert_string_equal(out,
			    ".Lblock:\n"
			    "add    $0x1,%rax\n"
			    "mov    0x10(%rip),%rcx\n"
			    "call .Lblock\n"
			    "jmp    *%rax\n"
			    "dec    %rdi\n"
			    "jne .Lblock\n");
	/* bounded: an output too small, no instruction, not NUL-terminated */
	assert_int_equal(pmon_sim__objdump_asm(od, strlen(od), 0x14c5, out, 20, &n), -ENOSPC);
	assert_int_equal(pmon_sim__objdump_asm("14a2:", 5, 0x14c5, out, sizeof(out), &n), -ENOENT);
	char *cut = malloc(12);
	memcpy(cut, "  14a2:\tnop\n", 12);
	assert_int_equal(pmon_sim__objdump_asm(cut, 12, 0x14c5, out, sizeof(out), &n), 0);
	assert_string_equal(out, ".Lblock:\nnop\n");
	free(cut);
}

static void test_sim__mca_summary(void **state)
{
	static const char mca[] =
		"Iterations:        100\nInstructions:      900\n"
		"Total Cycles:      803\nTotal uOps:        900\n\n"
		"Dispatch Width:    6\nuOps Per Cycle:    1.12\nIPC:               1.12\n"
		"Block RThroughput: 2.3\n";
	struct pmon_mca_summary m;
	(void)state;

	assert_int_equal(pmon_sim__mca_summary(mca, strlen(mca), &m), 0);
	assert_true(m.iterations == 100 && m.instructions == 900 && m.cycles == 803);
	assert_true(fabs(m.rthroughput - 2.3) < 1e-9 && fabs(m.ipc - 1.12) < 1e-9);
	assert_int_equal(pmon_sim__mca_summary("IPC: 1\n", 7, &m), -PMON_ERRNO__PARSE);
	assert_int_equal(pmon_sim__mca_summary(mca, 20, &m), -PMON_ERRNO__PARSE);
}

struct bad_cg {
	int line;
	const char *text;
	const char *detail;
};

#define HDR "positions: instr line\nevents: Ir\n"
static const struct bad_cg bad_cgs[] = {
	{ __LINE__, "", "t.out: no 'events:' line" },
	{ __LINE__, "hello world\n", "t.out:1: not a line of callgrind's format" },
	{ __LINE__, "0x10 1 2\n", "t.out:1: a cost line before 'events:'" },
	{ __LINE__, HDR "fn=(7)\n", "t.out:3: a compressed name refers to an id never defined" },
	{ __LINE__, HDR "fn=(7 main\n", "t.out:3: a compressed name is not" },
	{ __LINE__, HDR "fn=(99999999) main\n", "t.out:3: a compressed name id is too large" },
	{ __LINE__, HDR "0x10 1 2 3\n", "t.out:3: a cost line has more counts" },
	{ __LINE__, HDR "0x10 1 x\n", "t.out:3: a cost line's count is not a number" },
	{ __LINE__, HDR "0x10 1 99999999999999999999\n", "t.out:3: a cost line's count" },
	{ __LINE__, HDR "0xg 1 2\n", "t.out:3: a cost line's position" },
	{ __LINE__, HDR "+ 1 2\n", "t.out:3: a cost line's position" },
	{ __LINE__, HDR "0x10z 1 2\n", "t.out:3: a cost line's position is followed by garbage" },
	{ __LINE__, HDR "calls=1 0x10 1\n", "t.out:3: the file ends after 'calls='" },
	{ __LINE__, HDR "calls=1 0x10 1\nfn=x\n", "t.out:4: 'calls=' is not followed" },
	{ __LINE__, HDR "calls=x\n", "t.out:3: 'calls=' has no call count" },
	{ __LINE__, HDR "events: Ir Dr\n", "t.out:3: 'events:' differs" },
	{ __LINE__, "events:\n", "t.out:1: 'events:' names no event" },
	{ __LINE__, "positions: a b c d e\n", "t.out:1: too many positions" },
	{ __LINE__, HDR "0x10 1 2\npositions: line\n", "t.out:4: 'positions:' changes" },
};

static void test_sim__callgrind_bad(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_cgs) / sizeof(bad_cgs[0]); i++) {
		struct pmon_callgrind *cg = (void *)1;
		print_message("row at line %d\n", bad_cgs[i].line);
		assert_int_equal(pmon_callgrind__parse(bad_cgs[i].text, strlen(bad_cgs[i].text),
						       "t.out", &cg),
				 -PMON_ERRNO__PARSE);
		assert_null(cg);
		print_message("  %s\n", pmon_errdetail());
		assert_non_null(strstr(pmon_errdetail(), bad_cgs[i].detail));
	}
}

/* Not NUL-terminated: a parse stops at @len, never reads past it. */
static void test_sim__callgrind_bounds(void **state)
{
	struct pmon_callgrind *cg;
	uint64_t v;
	(void)state;
	const char text[] = HDR "0x10 1 7";
	char *buf = malloc(sizeof(text) - 1);
	assert_non_null(buf);
	memcpy(buf, text, sizeof(text) - 1); /* no NUL after the last digit */
	assert_int_equal(pmon_callgrind__parse(buf, sizeof(text) - 1, "t.out", &cg), 0);
	assert_int_equal(pmon_callgrind__total(cg, "Ir", NULL, &v), 0);
	assert_int_equal(v, 7);
	pmon_callgrind__free(cg);
	free(buf);
}

__attribute__((noinline, used)) int sim_target_function(int x);
__attribute__((noinline, used)) int sim_target_function(int x)
{
	return x * 3 + 1;
}

static int first_object(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(uint64_t *)data = info->dlpi_addr; /* the main program comes first */
	return 1;
}

/*
 * Remove a recording this test wrote at @path, and the FILE.old the writer
 * kept of what was there before (perf's rule, lib/sample/datafile.c): a
 * run leaves nothing in /tmp.
 */
static void remove_recording(const char *path)
{
	char old[512];

	snprintf(old, sizeof(old), "%s.old", path);
	unlink(path);
	unlink(old);
	assert_int_not_equal(access(path, F_OK), 0);
	assert_int_not_equal(access(old, F_OK), 0);
}

/* A synthetic run in this test program's own code, written as a
 * recording: pmon report names the function and weighs it by the count. */
static void test_sim__recording_roundtrip(void **state)
{
	char exe[4096], text[8192], path[] = "/tmp/pmon-test-sim.XXXXXX";
	uint64_t bias = 0;
	(void)state;

	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	dl_iterate_phdr(first_object, &bias);
	uint64_t addr = (uint64_t)(uintptr_t)&sim_target_function - bias;
	snprintf(text, sizeof(text),
		 "pid: 77\npositions: instr line\nevents: Ir D1mr\n"
		 "ob=(1) %s\nfn=(1) sim_target_function\n0x%llx 0 1000 3\n+1 0 500\n"
		 "ob=(2) ???\nfn=(2) 0x0000000004838030\n0x4838030 0 9 0\n",
		 exe, (unsigned long long)addr);
	struct pmon_callgrind *cg;
	assert_int_equal(pmon_callgrind__parse(text, strlen(text), "t.out", &cg), 0);
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	unsigned ev[2] = { (unsigned)pmon_sim_event__find("Ir"),
			   (unsigned)pmon_sim_event__find("D1mr") };
	struct pmon_sim_write_opts o = {
		.sz = sizeof(o), .events = ev, .nevents = 2, .command = "synthetic"
	};
	assert_int_equal(pmon_sim__write_recording(&cg, 1, path, &o), 0);
	/* An event the run did not collect is refused before writing. */
	unsigned br = (unsigned)pmon_sim_event__find("sim/branch-misses/");
	struct pmon_sim_write_opts ob = { .sz = sizeof(ob), .events = &br, .nevents = 1 };
	assert_int_equal(pmon_sim__write_recording(&cg, 1, "/nonexistent/x", &ob), -ENOENT);
	assert_non_null(strstr(pmon_errdetail(), "--branch"));
	pmon_callgrind__free(cg);

	struct pmon_report r;
	struct pmon_report_opts ro = { .sz = sizeof(ro) };
	assert_int_equal(pmon_report_read(path, &ro, &r), 0);
	assert_int_equal(r.nevents, 2);
	assert_string_equal(r.events[0].name, "sim/instructions/");
	assert_string_equal(r.events[1].name, "sim/L1-dcache-load-misses/");
	assert_int_equal(r.events[0].period, 1509);
	assert_int_equal(r.events[1].period, 3);
	bool found = false;
	for (size_t i = 0; i < r.n; i++) {
		print_message("%u %s %s %llu\n", r.e[i].event, r.e[i].symbol, r.e[i].dso,
			      (unsigned long long)r.e[i].period);
		if (r.e[i].event == 0 && !strcmp(r.e[i].symbol, "sim_target_function")) {
			assert_int_equal(r.e[i].period, 1500);
			found = true;
		}
		if (!strcmp(r.e[i].symbol, "[unknown]"))
			assert_int_equal(r.e[i].period, 9);
	}
	assert_true(found);
	pmon_report_release(&r);
	remove_recording(path);
}

/* ---- annotate --mca's measured cost: synthetic cycles/instructions ---- */

__attribute__((noinline, used)) long sim_cost_target(long n);
__attribute__((noinline, used)) long sim_cost_target(long n)
{
	long s = 0;

	for (long i = 0; i < n; i++)
		s += (i * 7) ^ (s >> 3);
	return s;
}

/* The main program's executable segments, as the kernel's MMAP2 records
 * would name them. */
struct exe_segs {
	uint64_t bias;
	uint64_t addr[8], len[8], off[8];
	unsigned n;
};

static int exec_segments(struct dl_phdr_info *info, size_t size, void *data)
{
	struct exe_segs *x = data;
	(void)size;
	x->bias = info->dlpi_addr;
	for (unsigned i = 0; i < info->dlpi_phnum && x->n < 8; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		x->addr[x->n] = info->dlpi_addr + ph->p_vaddr;
		x->len[x->n] = ph->p_memsz;
		x->off[x->n] = ph->p_offset;
		x->n++;
	}
	return 1; /* the main program comes first */
}

struct hw_sample {
	unsigned event; /* 0 cycles, 1 instructions, 2 cpu-clock */
	uint64_t addr; /* ELF address */
	uint64_t period;
	unsigned times;
};

/* A recording of this test program sampling @names (1 to 3 of cycles,
 * instructions, cpu-clock by @kinds) with @s, written with pmon's own
 * writer (pmon_data_writer: docs/pmon-data-format.md). */
static void write_hw_recording(const char *path, const unsigned *kinds, size_t nk,
			       const struct hw_sample *s, size_t ns)
{
	static const struct {
		const char *name;
		uint32_t type;
		uint64_t config;
	} ev[] = { { "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
		   { "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
		   { "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK } };
	char exe[4096];
	struct exe_segs x = { 0 };
	struct pmon_data_header h = { 0 };
	uint32_t pid = (uint32_t)getpid();

	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	dl_iterate_phdr(exec_segments, &x);
	assert_true(x.n > 0);
	h.sample_type =
		PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_PERIOD;
	h.attr_type = ev[kinds[0]].type;
	h.attr_config = ev[kinds[0]].config;
	h.freq = 1000;
	snprintf(h.event, sizeof(h.event), "%s", ev[kinds[0]].name);
	snprintf(h.command, sizeof(h.command), "test-sim");
	struct pmon_data_writer *w = pmon_data_writer__open(path, &h);
	assert_non_null(w);
	for (size_t k = 0; k < nk; k++) {
		uint64_t id = 100 + kinds[k];
		assert_int_equal(pmon_data_writer__add_event(w, (unsigned)k, ev[kinds[k]].name,
							     ev[kinds[k]].type, ev[kinds[k]].config,
							     0, 1000, &id, 1),
				 0);
	}
	for (unsigned i = 0; i < x.n; i++) { /* MMAP2, as lib/sim/convert.c writes it */
		uint8_t rec[72 + 4096 + 8] = { 0 };
		size_t nlen = strlen(exe) + 1, size = 72 + ((nlen + 7) & ~(size_t)7);
		struct perf_event_header eh = { .type = PERF_RECORD_MMAP2,
						.misc = PERF_RECORD_MISC_USER,
						.size = (uint16_t)size };
		uint32_t ids[2] = { pid, pid }, prot = PROT_READ | PROT_EXEC;
		uint64_t v[3] = { x.addr[i], x.len[i], x.off[i] };
		memcpy(rec, &eh, sizeof(eh));
		memcpy(rec + 8, ids, 8);
		memcpy(rec + 16, v, 24);
		memcpy(rec + 64, &prot, 4);
		memcpy(rec + 72, exe, nlen);
		assert_int_equal(pmon_data_writer__add(w, rec, size), 0);
	}
	for (size_t i = 0; i < ns; i++)
		for (unsigned t = 0; t < s[i].times; t++) {
			uint64_t rec[5];
			struct perf_event_header eh = { .type = PERF_RECORD_SAMPLE,
							.misc = PERF_RECORD_MISC_USER,
							.size = sizeof(rec) };
			memcpy(rec, &eh, sizeof(eh));
			rec[1] = 100 + s[i].event;
			rec[2] = x.bias + s[i].addr;
			rec[3] = (uint64_t)pid << 32 | pid;
			rec[4] = s[i].period;
			assert_int_equal(pmon_data_writer__add(w, rec, sizeof(rec)), 0);
		}
	assert_int_equal(pmon_data_writer__close(w), 0);
}

static void annotate_event(const char *path, const char *event, struct pmon_annotation *a)
{
	struct pmon_report_opts ro = { .sz = sizeof(ro), .event = event };

	assert_int_equal(pmon_annotate(path, "sim_cost_target", &ro, a), 0);
}

/* IPC and cycles an iteration of a block from sampled cycles and
 * instructions at known addresses and periods: only the block's samples
 * count, periods (not sample counts) are summed, the arithmetic exact. */
static void test_sim__block_cost(void **state)
{
	char path[] = "/tmp/pmon-test-sim-cost.XXXXXX";
	uint64_t fn;
	struct exe_segs x = { 0 };
	struct pmon_annotation a = { 0 }, ac = { 0 }, ai = { 0 };
	struct pmon_sim_block_cost c;
	(void)state;

	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	dl_iterate_phdr(exec_segments, &x);
	fn = (uint64_t)(uintptr_t)&sim_cost_target - x.bias;
	/* pass 1: the function's instructions, as annotate disassembles them */
	const unsigned both[] = { 0, 1 };
	struct hw_sample one[] = { { 0, fn, 1000, 1 }, { 1, fn, 1000, 1 } };
	write_hw_recording(path, both, 2, one, 2);
	annotate_event(path, "cycles", &a);
	assert_true(a.n >= 5);
	uint64_t i0 = a.insn[0].addr, i1 = a.insn[1].addr, i2 = a.insn[2].addr, i3 = a.insn[3].addr,
		 i4 = a.insn[4].addr;
	pmon_annotation_release(&a);

	/* The block is instructions 1..3. In it: cycles 4 x 1000 + 2 x 1000 =
	 * 6000 (6 samples); instructions 3 x 2000 + 1 x 3000 = 9000 (4
	 * samples). Outside it (instructions 0 and 4), samples that would
	 * change the result if counted. IPC 1.5, 3 / 1.5 = 2 cycles. */
	struct hw_sample s[] = {
		{ 0, i1, 1000, 4 }, { 0, i3, 1000, 2 },	 { 1, i1, 2000, 3 }, { 1, i2, 3000, 1 },
		{ 0, i0, 1000, 5 }, { 1, i0, 1000, 10 }, { 0, i4, 7000, 3 }, { 1, i4, 50, 1 },
	};
	write_hw_recording(path, both, 2, s, sizeof(s) / sizeof(s[0]));
	annotate_event(path, "cycles", &ac);
	annotate_event(path, "instructions", &ai);
	assert_int_equal(pmon_sim__block_cost(&ac, &ai, i1, i3, 3, &c), 0);
	assert_int_equal(c.cycles_samples, 6);
	assert_int_equal(c.instructions_samples, 4);
	assert_true(c.cycles == 6000 && c.instructions == 9000);
	assert_true(fabs(c.ipc - 1.5) < 1e-12);
	assert_true(fabs(c.cycles_per_iteration - 2.0) < 1e-12);
	/* The whole function: 21 samples of cycles ... */
	assert_int_equal(pmon_sim__block_cost(&ac, &ai, i0, i4, 5, &c), 0);
	assert_true(c.cycles == 32000 && c.instructions == 19050);
	/* a block with no cycles sample: no IPC, said */
	assert_int_equal(pmon_sim__block_cost(&ac, &ai, i2, i2, 1, &c), -ENOENT);
	assert_non_null(strstr(pmon_errdetail(), "no cycles sample"));
	assert_int_equal(pmon_sim__block_cost(&ac, &ai, i3, i1, 1, &c), -EINVAL);
	pmon_annotation_release(&ac);
	pmon_annotation_release(&ai);

	/* Only a software event (this pool's VMs): no cycles or instructions
	 * event to pair; the names say so. */
	const unsigned sw[] = { 2 };
	struct hw_sample t[] = { { 2, i1, 1000000, 3 } };
	write_hw_recording(path, sw, 1, t, 1);
	struct pmon_report r;
	struct pmon_report_opts ro = { .sz = sizeof(ro), .no_stacks = true };
	assert_int_equal(pmon_report_read(path, &ro, &r), 0);
	assert_int_equal(r.nevents, 1);
	assert_int_equal(pmon_sim_event_role(r.events[0].name), PMON_SIM_ROLE_OTHER);
	pmon_report_release(&r);
	remove_recording(path);
}

static void test_sim__event_role(void **state)
{
	static const struct {
		int line;
		const char *name;
		enum pmon_sim_role role;
	} rows[] = {
		{ __LINE__, "cycles", PMON_SIM_ROLE_CYCLES },
		{ __LINE__, "cycles:ppp", PMON_SIM_ROLE_CYCLES },
		{ __LINE__, "cpu-cycles:u", PMON_SIM_ROLE_CYCLES },
		{ __LINE__, "cpu_core/cycles/", PMON_SIM_ROLE_CYCLES },
		{ __LINE__, "cpu/cpu-cycles/u", PMON_SIM_ROLE_CYCLES },
		{ __LINE__, "CPU_CLK_UNHALTED.THREAD", PMON_SIM_ROLE_CYCLES },
		{ __LINE__, "ls_not_halted_cyc", PMON_SIM_ROLE_CYCLES },
		{ __LINE__, "ref-cycles", PMON_SIM_ROLE_REF_CYCLES },
		{ __LINE__, "cpu_clk_unhalted.ref_tsc", PMON_SIM_ROLE_REF_CYCLES },
		{ __LINE__, "instructions", PMON_SIM_ROLE_INSTRUCTIONS },
		{ __LINE__, "instructions:u", PMON_SIM_ROLE_INSTRUCTIONS },
		{ __LINE__, "cpu_atom/instructions/", PMON_SIM_ROLE_INSTRUCTIONS },
		{ __LINE__, "inst_retired.any_p", PMON_SIM_ROLE_INSTRUCTIONS },
		{ __LINE__, "ex_ret_instr", PMON_SIM_ROLE_INSTRUCTIONS },
		{ __LINE__, "cpu-clock", PMON_SIM_ROLE_OTHER },
		{ __LINE__, "task-clock", PMON_SIM_ROLE_OTHER },
		{ __LINE__, "sim/instructions/", PMON_SIM_ROLE_INSTRUCTIONS },
		{ __LINE__, "cpu/cycles", PMON_SIM_ROLE_OTHER }, /* unclosed */
		{ __LINE__, "", PMON_SIM_ROLE_OTHER },
		{ __LINE__, "cache-misses", PMON_SIM_ROLE_OTHER },
	};
	(void)state;

	assert_int_equal(pmon_sim_event_role(NULL), PMON_SIM_ROLE_OTHER);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		print_message("row at line %d: '%s'\n", rows[i].line, rows[i].name);
		assert_int_equal(pmon_sim_event_role(rows[i].name), rows[i].role);
	}
}

/* pmon_sim__run(): options refused, valgrind that cannot start, and (where
 * valgrind is installed) one process simulated and parsed. */
static void test_sim__run(void **state)
{
	struct pmon_sim_caches caches = { .i1 = { 32768, 8, 64 },
					  .d1 = { 32768, 8, 64 },
					  .ll = { 8 << 20, 16, 64 },
					  .source = "test" };
	char dir[] = "/tmp/pmon-test-simrun-XXXXXX";
	char *cmd[] = { "/bin/true", NULL };
	struct pmon_sim_run r;

	assert_non_null(mkdtemp(dir));
	struct pmon_sim_run_opts o = { .sz = sizeof(o), .caches = &caches, .dir = dir };
	assert_int_equal(pmon_sim__run(cmd, &o, &r), -EINVAL); /* no valgrind named */
	assert_false(r.started);

	o.valgrind = "/nonexistent/valgrind";
	assert_int_equal(pmon_sim__run(cmd, &o, &r), -ENOENT);
	assert_false(r.started);
	assert_non_null(strstr(pmon_errdetail(), "/nonexistent/valgrind"));
	pmon_sim_run_release(&r);

	o.valgrind = "/usr/bin/valgrind";
	if (access(o.valgrind, X_OK) == 0) {
		assert_int_equal(pmon_sim__run(cmd, &o, &r), 0);
		assert_true(r.started);
		assert_true(WIFEXITED(r.status));
		assert_int_equal(WEXITSTATUS(r.status), 0);
		assert_int_equal(r.nruns, 1);
		assert_int_equal(r.signal, 0);
		pmon_sim_run_release(&r);
		assert_int_equal(r.nruns, 0);
	}
	pmon_sim_run_release(NULL);
	char rm[200];
	snprintf(rm, sizeof(rm), "rm -rf '%s'", dir);
	assert_int_equal(system(rm), 0);
}

/* pmon_sim__mca_run(): a tool that is not there, and (where llvm-mca is
 * installed) one block's summary. */
static void test_sim__mca_run(void **state)
{
	char dir[] = "/tmp/pmon-test-mca-XXXXXX", rm[200], *text = (char *)"x";
	struct pmon_mca_summary sum;
	size_t len = 1;

	assert_non_null(mkdtemp(dir));
	assert_true(pmon_sim__mca_run("/nonexistent/llvm-mca",
				      ".intel_syntax noprefix\nadd rax, 1\n", "skylake", 10, dir,
				      &text, &len, &sum) < 0);
	assert_null(text);
	assert_true(pmon_errdetail()[0] != '\0');
	if (access("/usr/bin/llvm-mca", X_OK) == 0) {
		assert_int_equal(pmon_sim__mca_run("/usr/bin/llvm-mca",
						   ".intel_syntax noprefix\nadd rax, 1\n",
						   "skylake", 10, dir, &text, &len, &sum),
				 0);
		assert_non_null(text);
		assert_int_equal(len, strlen(text));
		assert_true(sum.iterations == 10);
		free(text);
	}
	snprintf(rm, sizeof(rm), "rm -rf '%s'", dir);
	assert_int_equal(system(rm), 0);
}

/* A block of a real ELF file through objdump, and bench's body syntax
 * through llvm-mca, each in its own work folder. */
static void test_sim__block_asm_predict(void **state)
{
	char dir[] = "/tmp/pmon-test-blk-XXXXXX", rm[200], sh[4096], *asmtext = (char *)"x";
	struct pmon_mca_summary sum;
	size_t n = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_true(pmon_sim__block_asm("/nonexistent/objdump", "/bin/sh", 0x1000, 0x1010, dir,
					&asmtext, &n) < 0);
	assert_null(asmtext);
	assert_non_null(strstr(pmon_errdetail(), "objdump could not disassemble '/bin/sh'"));
	assert_true(pmon_sim__predict("/nonexistent/llvm-mca", "add rax, 1", "skylake", 10, &sum) <
		    0);
	if (access("/usr/bin/llvm-mca", X_OK) == 0) {
		/* two instructions, ';' between them: llvm-mca counts both */
		assert_int_equal(pmon_sim__predict("/usr/bin/llvm-mca",
						   " add rax, 1; imul rbx, rax", "skylake", 10,
						   &sum),
				 0);
		assert_true(sum.iterations == 10);
		assert_true(sum.instructions == 20);
	}
	if (access("/usr/bin/objdump", X_OK) == 0 && !pmon_spawn_which("sh", sh, sizeof(sh))) {
		/* an address with no code: objdump prints nothing to convert */
		assert_true(pmon_sim__block_asm("/usr/bin/objdump", sh, 0x10, 0x20, dir, &asmtext,
						&n) < 0);
		assert_null(asmtext);
	}
	snprintf(rm, sizeof(rm), "rm -rf '%s'", dir);
	assert_int_equal(system(rm), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sim__caches_from_dumps),
		cmocka_unit_test(test_sim__caches_all_dumps_valid),
		cmocka_unit_test(test_sim__geom_parse),
		cmocka_unit_test(test_sim__event_names),
		cmocka_unit_test(test_sim__callgrind_parse),
		cmocka_unit_test(test_sim__callgrind_parts),
		cmocka_unit_test(test_sim__callgrind_contexts),
		cmocka_unit_test(test_sim__regions),
		cmocka_unit_test(test_sim__counterpart),
		cmocka_unit_test(test_sim__compare),
		cmocka_unit_test(test_sim__profile),
		cmocka_unit_test(test_sim__region_figures),
		cmocka_unit_test(test_sim__hot_block),
		cmocka_unit_test(test_sim__hot_range),
		cmocka_unit_test(test_sim__mcpu),
		cmocka_unit_test(test_sim__clock_latency),
		cmocka_unit_test(test_sim__objdump_asm),
		cmocka_unit_test(test_sim__mca_summary),
		cmocka_unit_test(test_sim__callgrind_bad),
		cmocka_unit_test(test_sim__callgrind_bounds),
		cmocka_unit_test(test_sim__recording_roundtrip),
		cmocka_unit_test(test_sim__block_cost),
		cmocka_unit_test(test_sim__event_role),
		cmocka_unit_test(test_sim__run),
		cmocka_unit_test(test_sim__mca_run),
		cmocka_unit_test(test_sim__block_asm_predict),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
