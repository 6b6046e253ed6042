// SPDX-License-Identifier: MIT
/*
 * pmon serve's pure helpers (cli/serve-text.c): content negotiation on
 * the Accept header a client sends, label-value escaping of cgroup paths
 * (any bytes a directory name may hold), metric names from event names, and
 * the numbers of ?seconds= and ?hz=.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serve/serve.h"
#include "monitor/collect.h"
#include <pmon/pmon.h>

static void test_serve__accept(void **state)
{
	static const struct {
		int line;
		const char *accept;
		bool om;
	} rows[] = {
		{ __LINE__, NULL, false },
		{ __LINE__, "", false },
		{ __LINE__, "*/*", false },
		{ __LINE__, "text/plain", false },
		{ __LINE__, "application/openmetrics-text", true },
		/* Prometheus 2.x's scrape header */
		{ __LINE__,
		  "application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
		  "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
		  true },
		{ __LINE__, "application/openmetrics-text;q=0.2,text/plain", false },
		{ __LINE__, "text/plain;q=0.3, application/openmetrics-text; q=0.9", true },
		{ __LINE__, "application/openmetrics-text;q=0", false },
		{ __LINE__, "Application/OpenMetrics-Text", true },
		{ __LINE__, "application/openmetrics-textual", false },
		{ __LINE__, "application/openmetrics-text;q=abc", false },
		{ __LINE__, ",,,;;;q=", false },
		{ __LINE__, "application/openmetrics-text;q=1.5,text/plain;q=1", true },
		{ __LINE__, "  application/openmetrics-text  ;version=1.0.0", true },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		bool got = serve_accept_openmetrics(rows[i].accept);
		if (got != rows[i].om)
			fail_msg("line %d: '%s' gives %d", rows[i].line,
				 rows[i].accept ? rows[i].accept : "(null)", got);
	}
}

static void test_serve__label_escape(void **state)
{
	static const struct {
		int line;
		const char *in, *out;
	} rows[] = {
		{ __LINE__, "/system.slice/nginx.service", "/system.slice/nginx.service" },
		{ __LINE__, "a\"b", "a\\\"b" },
		{ __LINE__, "a\\b", "a\\\\b" },
		{ __LINE__, "a\nb", "a\\nb" },
		{ __LINE__, "tab\there", "tab?here" },
		{ __LINE__, "caf\xc3\xa9", "caf\xc3\xa9" }, /* valid UTF-8 kept */
		{ __LINE__, "bad\xff\xfe", "bad??" },
		{ __LINE__, "cut\xe2\x82", "cut??" }, /* a sequence cut short */
		{ __LINE__, "over\xc0\xaf", "over??" }, /* overlong '/' */
		/* What Go's utf8.ValidString() refuses, and Prometheus with it
		 * (Unicode 3.9 table 3-7): */
		{ __LINE__, "o3\xe0\x80\xaf", "o3???" }, /* overlong 3 bytes */
		{ __LINE__, "o4\xf0\x80\x80\xaf", "o4????" }, /* overlong 4 bytes */
		{ __LINE__, "sur\xed\xa0\x80", "sur???" }, /* surrogate U+D800 */
		{ __LINE__, "big\xf4\x90\x80\x80", "big????" }, /* past U+10FFFF */
		{ __LINE__, "f5\xf5\x80\x80\x80", "f5????" },
		{ __LINE__, "ok\xed\x9f\xbf\xf4\x8f\xbf\xbf", "ok\xed\x9f\xbf\xf4\x8f\xbf\xbf" },
		{ __LINE__, "emoji\xf0\x9f\x98\x80", "emoji\xf0\x9f\x98\x80" },
		{ __LINE__, "del\x7f", "del?" },
		{ __LINE__, "", "" },
	};
	char out[64];

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		pmon__prom_label_escape(rows[i].in, out, sizeof(out));
		if (strcmp(out, rows[i].out))
			fail_msg("line %d: got '%s'", rows[i].line, out);
	}
	/* Cut to the buffer, never in the middle of an escape. */
	char small[4];
	pmon__prom_label_escape("ab\"c", small, sizeof(small));
	assert_string_equal(small, "ab");
	pmon__prom_label_escape("x", small, 1);
	assert_string_equal(small, "");
}

static void test_serve__metric_name(void **state)
{
	static const struct {
		int line;
		const char *in, *out;
	} rows[] = {
		{ __LINE__, "task-clock", "task_clock" },
		{ __LINE__, "cycles:u", "cycles_u" },
		{ __LINE__, "cpu/event=0x3c,umask=0/", "cpu_event_0x3c_umask_0_" },
		{ __LINE__, "sched:sched_switch", "sched_sched_switch" },
	};
	char out[64];

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		pmon__prom_metric_name(rows[i].in, out, sizeof(out));
		if (strcmp(out, rows[i].out))
			fail_msg("line %d: got '%s'", rows[i].line, out);
	}
}

static void test_serve__query_uint(void **state)
{
	static const struct {
		int line;
		const char *v;
		unsigned long max;
		bool ok;
		unsigned long out;
	} rows[] = {
		{ __LINE__, NULL, 30, true, 10 }, /* absent: the default */
		{ __LINE__, "5", 30, true, 5 },
		{ __LINE__, "30", 30, true, 30 },
		{ __LINE__, "0030", 30, true, 30 },
		{ __LINE__, "31", 30, false, 10 },
		{ __LINE__, "0", 30, false, 10 },
		{ __LINE__, "", 30, false, 10 },
		{ __LINE__, " 5", 30, false, 10 },
		{ __LINE__, "+5", 30, false, 10 },
		{ __LINE__, "-5", 30, false, 10 },
		{ __LINE__, "5s", 30, false, 10 },
		{ __LINE__, "1e3", 1000, false, 10 },
		{ __LINE__, "99999999999999999999999", 30, false, 10 }, /* overflow */
	};
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		unsigned long out = 0;
		bool ok = serve_query_uint(rows[i].v, 10, rows[i].max, &out);
		if (ok != rows[i].ok || out != rows[i].out)
			fail_msg("line %d: '%s' gives %d, %lu", rows[i].line,
				 rows[i].v ? rows[i].v : "(null)", ok, out);
	}
}

/* ---- RDT per cgroup, on an emulated resctrl tree and fake cgroups ---- */

static void put(const char *dir, const char *rel, const char *text)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void mk(const char *dir, const char *rel)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	assert_int_equal(mkdir(path, 0700), 0);
}

/* The whole of @dir/@rel. */
static const char *slurp(const char *dir, const char *rel)
{
	static char buf[4096];
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(p);
}

/* A resctrl tree as the kernel lays it out (one L3 domain, 4 RMIDs), and
 * two cgroup directories: v2 (cgroup.threads) and v1 (tasks). */
static void test_serve__rdt_cgroup(void **state)
{
	char t[] = "/tmp/pmon-test-serve-XXXXXX", root[600], a[600], b[600], p[900];
	(void)state;
	assert_non_null(mkdtemp(t));
	snprintf(root, sizeof(root), "%s/resctrl", t);
	mk(t, "resctrl");
	mk(root, "info");
	mk(root, "info/L3_MON");
	put(root, "info/L3_MON/num_rmids", "4\n");
	put(root, "info/L3_MON/mon_features", "llc_occupancy\nmbm_total_bytes\n");
	mk(root, "mon_data");
	mk(root, "mon_data/mon_L3_00");
	put(root, "mon_data/mon_L3_00/llc_occupancy", "0\n");
	put(root, "mon_data/mon_L3_00/mbm_total_bytes", "0\n");
	put(root, "tasks", "");
	mk(root, "mon_groups");
	snprintf(a, sizeof(a), "%s/a", t);
	snprintf(b, sizeof(b), "%s/b", t);
	mk(t, "a");
	mk(t, "b");
	put(a, "cgroup.threads", "30\n10\n20\n10\n");
	put(b, "tasks", "40\n");

	struct pmon__rdt_cgroup *ra = pmon__rdt_cgroup__new(root, a);
	struct pmon__rdt_cgroup *rb = pmon__rdt_cgroup__new(root, b);
	struct pmon_rdt_group *rg = pmon_rdt_group__root(root);
	assert_non_null(ra);
	assert_non_null(rb);
	assert_non_null(rg);
	assert_non_null(strstr(pmon__rdt_cgroup__group(ra), "mon_groups/pmon-"));
	assert_string_not_equal(pmon__rdt_cgroup__group(ra), pmon__rdt_cgroup__group(rb));

	/* First interval: every thread moved in once (duplicates too). */
	assert_int_equal(pmon__rdt_cgroup__scan(ra), 0);
	assert_int_equal(pmon__rdt_cgroup__scan(rb), 0);
	assert_int_equal(pmon__rdt_cgroup__release(ra, rg), 0);
	assert_int_equal(pmon__rdt_cgroup__release(rb, rg), 0);
	assert_int_equal(pmon__rdt_cgroup__claim(ra), 3);
	assert_int_equal(pmon__rdt_cgroup__claim(rb), 1);
	snprintf(p, sizeof(p), "%s/tasks", pmon__rdt_cgroup__group(ra));
	assert_string_equal(slurp(root, p), "10\n20\n30\n");
	snprintf(p, sizeof(p), "%s/tasks", pmon__rdt_cgroup__group(rb));
	assert_string_equal(slurp(root, p), "40\n");

	/* Nothing changed: nothing written. */
	assert_int_equal(pmon__rdt_cgroup__scan(ra), 0);
	assert_int_equal(pmon__rdt_cgroup__release(ra, rg), 0);
	assert_int_equal(pmon__rdt_cgroup__claim(ra), 0);
	assert_int_equal(pmon__rdt_cgroup__ntasks(ra), 3);

	/* 20 moves from a to b, 10 ends, 50 starts in a: 20 and 10 go back to
	 * the root group (all releases first), then b claims 20, a claims 50. */
	put(a, "cgroup.threads", "30\n50\n");
	put(b, "tasks", "40\n20\n");
	assert_int_equal(pmon__rdt_cgroup__scan(ra), 0);
	assert_int_equal(pmon__rdt_cgroup__scan(rb), 0);
	assert_int_equal(pmon__rdt_cgroup__release(ra, rg), 2);
	assert_int_equal(pmon__rdt_cgroup__release(rb, rg), 0);
	assert_string_equal(slurp(root, "tasks"), "10\n20\n");
	assert_int_equal(pmon__rdt_cgroup__claim(ra), 1);
	assert_int_equal(pmon__rdt_cgroup__claim(rb), 1);
	snprintf(p, sizeof(p), "%s/tasks", pmon__rdt_cgroup__group(ra));
	assert_string_equal(slurp(root, p), "10\n20\n30\n50\n");
	snprintf(p, sizeof(p), "%s/tasks", pmon__rdt_cgroup__group(rb));
	assert_string_equal(slurp(root, p), "40\n20\n");
	assert_int_equal(pmon__rdt_cgroup__ntasks(ra), 2);
	assert_int_equal(pmon__rdt_cgroup__refused(ra), 0);

	/* The group's own reading: what "the kernel" put in its mon_data. */
	snprintf(p, sizeof(p), "%s/mon_data/mon_L3_00/llc_occupancy", pmon__rdt_cgroup__group(ra));
	put(root, p, "1048576\n");
	struct pmon_rdt_reading r;
	assert_int_equal(pmon__rdt_cgroup__read(ra, &r), 0);
	assert_int_equal(r.n, 1);
	assert_string_equal(r.d[0].name, "mon_L3_00");
	assert_int_equal(r.d[0].occupancy.state, PMON_RDT_OK);
	assert_int_equal(r.d[0].occupancy.v, 1048576);

	/* A cgroup that went away: the scan says so, nothing is moved. */
	put(a, "cgroup.threads", "");
	snprintf(p, sizeof(p), "%s/cgroup.threads", a);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(pmon__rdt_cgroup__scan(ra), -ENOENT);

	/* RMIDs run out: 4 in all, the root's and two groups hold 3. */
	struct pmon__rdt_cgroup *rc = pmon__rdt_cgroup__new(root, b);
	assert_non_null(rc);
	assert_null(pmon__rdt_cgroup__new(root, b));
	assert_int_equal(errno, ENOSPC);

	/* Freed: the groups are removed. */
	pmon__rdt_cgroup__free(ra);
	pmon__rdt_cgroup__free(rb);
	pmon__rdt_cgroup__free(rc);
	pmon__rdt_cgroup__free(NULL);
	pmon_rdt_group__remove(rg);
	snprintf(p, sizeof(p), "%s/mon_groups", root);
	assert_int_equal(rmdir(p), 0); /* empty */
	nftw(t, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The collector's set-up (include/pmon/collect.h): errors come back as
 * values with a detail, never printed; a scrape before any reading renders
 * the metrics of nothing. Opens no counter (no cgroup, no system-wide). */
static void test_serve__collector_setup(void **state)
{
	struct pmon_collector_opts o = { .sz = sizeof(o),
					 .events = "no-such-event-xyz",
					 .interval_ms = 100 };
	struct pmon_collector *c;
	struct pmon_scrape *sc;
	const char *body;
	size_t len;

	errno = 0;
	assert_null(pmon_collector__new(&o));
	assert_int_not_equal(errno, 0);
	assert_true(pmon_errdetail()[0] != '\0');

	o.events = "task-clock,page-faults";
	o.rdt = true;
	o.resctrl_root = "/nonexistent-resctrl";
	c = pmon_collector__new(&o);
	assert_non_null(c);
	assert_int_equal(pmon_collector__nevents(c), 2);
	assert_non_null(pmon_collector__rdt_unavailable(c));
	assert_int_equal(pmon_collector__add_cgroup(c, "/nonexistent-cgroup"), -ENOENT);
	assert_true(pmon_errdetail()[0] != '\0');
	assert_int_not_equal(pmon_collector__watch_root(c, "/nonexistent-cgroup"), 0);
	assert_int_equal(pmon_collector__ncgroups(c), 0);
	assert_int_equal(pmon_collector__render(c, false, &sc), 0);
	body = pmon_scrape__body(sc, &len);
	assert_non_null(body);
	assert_non_null(strstr(body, "pmon_"));
	pmon_scrape__free(sc);
	pmon_collector__free(c);
	pmon_collector__free(NULL);

	o.rdt = false;
	o.sz = 1; /* smaller than the first release's struct */
	errno = 0;
	assert_null(pmon_collector__new(&o));
	assert_int_equal(errno, EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_serve__accept),
		cmocka_unit_test(test_serve__label_escape),
		cmocka_unit_test(test_serve__metric_name),
		cmocka_unit_test(test_serve__query_uint),
		cmocka_unit_test(test_serve__rdt_cgroup),
		cmocka_unit_test(test_serve__collector_setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
