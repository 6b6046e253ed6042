// SPDX-License-Identifier: MIT
/*
 * pmon_report_read() on synthetic recordings written here (header, deflated
 * chunks with their CRCs, a kernel-symbol chunk: docs/pmon-data-format.md):
 * what the reader keeps in memory for the call stacks.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <locale.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>

#include <pmon/sample.h>

#include "report/ctx.h"
#include "sample/datafile.h"

#define KBASE 0xffffffff81000000ULL

static void put_chunk(FILE *f, const char *magic, const uint8_t *p, size_t len)
{
	uLongf zlen = compressBound(len);
	uint8_t *z = malloc(zlen);
	struct pmon_data_chunk h;

	assert_non_null(z);
	if (!strcmp(magic, PMON_CHUNKZ_MAGIC)) {
		assert_int_equal(compress2(z, &zlen, p, len, 1), Z_OK);
		p = z;
		len = zlen;
	}
	memcpy(h.magic, magic, 4);
	h.len = (uint32_t)len;
	h.crc = (uint32_t)crc32(0L, p, (uInt)len);
	h.nrec = 1;
	assert_int_equal(fwrite(&h, sizeof(h), 1, f), 1);
	assert_int_equal(fwrite(p, 1, len, f), len);
	free(z);
}

static void put_ksym(uint8_t *b, size_t *len, uint64_t start, uint64_t end, const char *name)
{
	struct pmon_record_ksym k = { .type = PMON_RECORD_KSYM, .size = sizeof(k) + 16 };

	k.start = start;
	k.end = end;
	memset(b + *len, 0, k.size);
	memcpy(b + *len, &k, sizeof(k));
	memcpy(b + *len + sizeof(k), name, strlen(name) + 1);
	*len += k.size;
}

/*
 * @n samples of one kernel call chain, @depth frames in k_mid under a leaf
 * in k_leaf that is another address each time: n distinct raw chains, one
 * stack of functions.
 */
static void write_kernel_chains_as(const char *path, unsigned n, unsigned depth,
				   const struct pmon_data_disk_header_ext *e, size_t ext_size)
{
	const uint64_t st =
		PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
	struct pmon_data_disk_header dh = { .version = 2,
					    .header_size = (uint32_t)(sizeof(dh) + ext_size),
					    .sample_type = st,
					    .attr_type = PERF_TYPE_SOFTWARE,
					    .attr_config = PERF_COUNT_SW_CPU_CLOCK,
					    .period = 1000 };
	FILE *f = fopen(path, "wb");
	uint8_t *b = malloc(PMON_CHUNK_RAW_MAX);
	size_t len = 0;

	assert_non_null(f);
	assert_non_null(b);
	memcpy(dh.magic, PMON_DATA_MAGIC, 8);
	snprintf(dh.event, sizeof(dh.event), "cpu-clock");
	fwrite(&dh, sizeof(dh), 1, f);
	fwrite(e, ext_size, 1, f);
	for (unsigned i = 0; i < n; i++) {
		uint64_t rec[8 + 256];
		size_t k = 1;
		rec[k++] = KBASE + 0x1000 + 4 * (uint64_t)i; /* ip: in k_leaf */
		rec[k++] = (uint64_t)42 << 32 | 42; /* pid, tid */
		rec[k++] = 1000; /* period */
		rec[k++] = depth + 2; /* nr */
		rec[k++] = (uint64_t)PERF_CONTEXT_KERNEL;
		rec[k++] = rec[1];
		for (unsigned d = 0; d < depth; d++)
			rec[k++] = KBASE + 0x200000 + 0x40 + d; /* return addresses in k_mid */
		struct perf_event_header h = { .type = PERF_RECORD_SAMPLE,
					       .size = (uint16_t)(k * 8) };
		memcpy(rec, &h, sizeof(h));
		if (len + h.size > PMON_CHUNK_RAW_MAX) {
			put_chunk(f, PMON_CHUNKZ_MAGIC, b, len);
			len = 0;
		}
		memcpy(b + len, rec, h.size);
		len += h.size;
	}
	put_chunk(f, PMON_CHUNKZ_MAGIC, b, len);
	len = 0;
	put_ksym(b, &len, KBASE + 0x1000, KBASE + 0x100000, "k_leaf");
	put_ksym(b, &len, KBASE + 0x200000, KBASE + 0x300000, "k_mid");
	put_chunk(f, PMON_CHUNKS_MAGIC, b, len);
	free(b);
	assert_int_equal(fclose(f), 0);
}

static void write_kernel_chains(const char *path, unsigned n, unsigned depth)
{
	struct pmon_data_disk_header_ext ext = { 0 };

	write_kernel_chains_as(path, n, depth, &ext, sizeof(ext));
}

static long max_rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/*
 * Chains that differ only inside a kernel function are one chain while the
 * reader counts (it keeps each distinct raw chain until the pass ends): 60 K
 * samples whose leaves are all different held 60 K chains of 102 addresses,
 * 50 MB and more; now one. Output the same with one reader and two.
 */
static void test_report__kernel_chains_merge(void **state)
{
	char path[] = "/tmp/pmon-test-report-XXXXXX";
	const unsigned n = 60000, depth = 100;
	struct pmon_report_opts o = { .sz = sizeof(o), .sort = PMON_SORT_SYMBOL };
	struct pmon_report r1, r2;
	(void)state;

	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	write_kernel_chains(path, n, depth);
	long before = max_rss_kb();
	setenv("PMON_REPORT_THREADS", "2", 1);
	assert_int_equal(pmon_report_read(path, &o, &r2), 0);
	long grew = max_rss_kb() - before;
	setenv("PMON_REPORT_THREADS", "1", 1);
	assert_int_equal(pmon_report_read(path, &o, &r1), 0);
	unsetenv("PMON_REPORT_THREADS");
	unlink(path);

	assert_int_equal(r1.samples, n);
	assert_true(r1.callchains);
	assert_int_equal(r1.nstacks, 1);
	assert_int_equal(r1.stacks[0].samples, n);
	assert_int_equal(r1.stacks[0].depth, depth + 1);
	assert_string_equal(r1.frames[r1.stacks[0].frame[0]].symbol, "k_mid");
	assert_string_equal(r1.frames[r1.stacks[0].frame[depth]].symbol, "k_leaf");
	assert_string_equal(r1.frames[r1.stacks[0].frame[depth]].dso, "[kernel]");
	/* two readers: the same stacks */
	assert_int_equal(r2.nstacks, r1.nstacks);
	assert_int_equal(r2.stacks[0].samples, n);
	assert_int_equal(r2.stacks[0].depth, depth + 1);
	/* 60 K raw chains of 102 addresses alone are 49 MB: the reader keeps
	 * one, its buffers and tables stay a few MB. Not under ASan: its
	 * quarantine keeps freed blocks resident (a `make test` run saw the
	 * peak grow 29 MB with the same single stack). */
#if defined(__SANITIZE_ADDRESS__)
	print_message("peak RSS grew %ld KB (not checked under ASan)\n", grew);
#else
	if (grew >= 24 * 1024)
		fail_msg("reading grew the peak RSS by %ld KB", grew);
#endif
	pmon_report_release(&r1);
	pmon_report_release(&r2);
}

/* The call graph's first line (the subject every header shares) of @path. */
static char *callgraph_head(const char *path, struct pmon_report *r)
{
	struct pmon_report_opts o = { .sz = sizeof(o), .sort = PMON_SORT_SYMBOL };
	char *text = NULL;
	size_t len = 0;

	assert_int_equal(pmon_report_read(path, &o, r), 0);
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(pmon_report_write_callgraph(r, f, false, 0, false), 0);
	fclose(f);
	char *nl = strchr(text, '\n');
	if (nl)
		*nl = '\0';
	return text;
}

/*
 * Issue #29: a record -C recording keeps its CPU list in the header and
 * every header names those CPUs; a system-wide file from before the list
 * (header_size 493) still reads "all CPUs".
 */
static void test_report__cpu_list_in_header(void **state)
{
	char path[] = "/tmp/pmon-test-report-XXXXXX";
	struct pmon_data_disk_header_ext ext = { .flags = PMON_DATA_SYSTEM_WIDE };
	struct pmon_report r;
	(void)state;

	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	/* Before issue #29: the extension ended with captured (85 bytes). */
	size_t old = offsetof(struct pmon_data_disk_header_ext, cpus);
	assert_int_equal(sizeof(struct pmon_data_disk_header) + old, 493);
	snprintf(ext.cpus, sizeof(ext.cpus), "0,2-3"); /* past header_size: unread */
	write_kernel_chains_as(path, 5, 2, &ext, old);
	char *head = callgraph_head(path, &r);
	assert_string_equal(r.header.cpus, "");
	assert_true(r.header.flags & PMON_DATA_SYSTEM_WIDE);
	if (!strstr(head, "system-wide (all CPUs)"))
		fail_msg("old file: '%s'", head);
	free(head);
	pmon_report_release(&r);

	write_kernel_chains_as(path, 5, 2, &ext, sizeof(ext));
	head = callgraph_head(path, &r);
	assert_string_equal(r.header.cpus, "0,2-3");
	if (!strstr(head, "system-wide (CPUs 0,2-3)"))
		fail_msg("-C 0,2-3: '%s'", head);
	free(head);
	pmon_report_release(&r);

	/* A list that is no list (a damaged or crafted file) is not printed. */
	snprintf(ext.cpus, sizeof(ext.cpus), "0<svg>");
	write_kernel_chains_as(path, 5, 2, &ext, sizeof(ext));
	head = callgraph_head(path, &r);
	assert_string_equal(r.header.cpus, "");
	free(head);
	pmon_report_release(&r);
	unlink(path);
}

/*
 * #14.15: 1,529 samples of main -> f and one whose frame-pointer chain ran
 * into garbage (main, then 125 [unknown] frames), and one cut at the
 * kernel's 127 frames. The flame graph is as tall as the frames it draws,
 * the run of [unknown] is one box saying how many it stands for, and the
 * picture says how many stacks were damaged.
 */
static void test_report__flamegraph_of_a_garbage_chain(void **state)
{
	struct pmon_report_frame frames[] = { { "main", "a.out" },
					      { "f", "a.out" },
					      { "[unknown]", "[unknown]" },
					      { "g", "a.out" } };
	uint32_t good[] = { 0, 1 }, bad[126], deep[127];
	struct pmon_report_stack stacks[] = { { good, 2, 1529, 1529 },
					      { bad, 126, 1, 1 },
					      { deep, 127, 1, 1 } };
	struct pmon_report r = { .frames = frames, .nframes = 4, .stacks = stacks, .nstacks = 3 };
	char *svg = NULL;
	size_t len = 0;
	unsigned width, height;

	(void)state;
	bad[0] = 0;
	for (int i = 1; i < 126; i++)
		bad[i] = 2;
	for (int i = 0; i < 127; i++)
		deep[i] = i % 2 ? 3 : 0; /* main, g, main, g ...: real frames */
	r.callchains = true;
	snprintf(r.header.event, sizeof(r.header.event), "cpu-clock");
	FILE *f = open_memstream(&svg, &len);
	assert_non_null(f);
	assert_int_equal(pmon_report_write_flamegraph(&r, f, 1200), 0);
	fclose(f);
	assert_int_equal(sscanf(strstr(svg, "<svg"),
				"<svg xmlns=\"http://www.w3.org/2000/svg\" "
				"width=\"%u\" height=\"%u\"",
				&width, &height),
			 2);
	/* 1 px is 1.3 samples: the 127-deep stack of one sample is drawn (0.77
	 * px > 0.1), so 128 rows; the garbage one is 3 (all, main, [unknown]). */
	assert_true(height <= 60 + 129 * 16);
	assert_non_null(strstr(svg, "[unknown] x125 (a run of 125 unknown frames drawn as one)"));
	assert_non_null(strstr(svg,
			       "1 of 1531 samples' stacks ran into frames pmon could not "
			       "name"));
	assert_non_null(strstr(svg, "1 were cut short at the kernel's limit (127 frames)"));
	free(svg);

	/* Without the deep stack: as tall as its three drawn rows, not 127. */
	r.nstacks = 2;
	svg = NULL;
	f = open_memstream(&svg, &len);
	assert_int_equal(pmon_report_write_flamegraph(&r, f, 1200), 0);
	fclose(f);
	assert_int_equal(sscanf(strstr(svg, "<svg"),
				"<svg xmlns=\"http://www.w3.org/2000/svg\" "
				"width=\"%u\" height=\"%u\"",
				&width, &height),
			 2);
	assert_int_equal(height, 60 + 3 * 16 + 16);
	free(svg);

	/* A sample of width under 0.1 px draws nothing and adds no height. */
	stacks[0].samples = stacks[0].period = 100000;
	f = open_memstream(&svg, &len);
	assert_int_equal(pmon_report_write_flamegraph(&r, f, 1200), 0);
	fclose(f);
	sscanf(strstr(svg, "<svg"),
	       "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" "
	       "height=\"%u\"",
	       &width, &height);
	assert_null(strstr(svg, "x125"));
	assert_int_equal(height, 60 + 3 * 16 + 16);
	free(svg);

	/* The call graph's text and JSON say it too. */
	f = open_memstream(&svg, &len);
	assert_int_equal(pmon_report_write_callgraph(&r, f, false, 0.5, false), 0);
	fclose(f);
	assert_non_null(strstr(svg,
			       "\n# 1 of 100001 samples' stacks ran into frames pmon could "
			       "not name; 0 were cut short"));
	free(svg);
	f = open_memstream(&svg, &len);
	assert_int_equal(pmon_report_write_callgraph(&r, f, false, 0.5, true), 0);
	fclose(f);
	assert_non_null(strstr(svg, "\"samples_unknown_frames\": 1,"));
	free(svg);
}

/* A numeric attribute of @svg (x="", y="", width="", height="") holding a comma. */
static const char *comma_in_number(const char *svg)
{
	static const char *const attrs[] = { " x=\"", " y=\"", " width=\"", " height=\"" };

	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++)
		for (const char *p = strstr(svg, attrs[i]); p; p = strstr(p + 1, attrs[i])) {
			const char *v = strchr(p, '"') + 1, *end = strchr(v, '"');
			const char *c = strchr(v, ',');
			if (c && c < end)
				return p;
		}
	return NULL;
}

/*
 * A program in a German locale (LC_NUMERIC de_DE: "1,5") gets the same
 * flame graph and call graph as in "C": numbers in SVG and in pmon's text
 * are written with a point.
 */
static void test_report__exports_in_a_comma_locale(void **state)
{
	struct pmon_report_frame frames[] = { { "main", "a.out" }, { "f", "a.out" } };
	uint32_t a[] = { 0, 1 }, b[] = { 0 };
	struct pmon_report_stack stacks[] = { { a, 2, 7, 7 }, { b, 1, 3, 3 } };
	struct pmon_report r = { .frames = frames, .nframes = 2, .stacks = stacks, .nstacks = 2 };
	char *out = NULL, probe[16];
	size_t len = 0;

	(void)state;
	if (!setlocale(LC_NUMERIC, "de_DE.UTF-8") && !setlocale(LC_NUMERIC, "de_DE.utf8"))
		skip(); /* the locale is not installed */
	snprintf(probe, sizeof(probe), "%.1f", 1.5);
	assert_string_equal(probe, "1,5"); /* the locale is in force */
	r.callchains = true;
	snprintf(r.header.event, sizeof(r.header.event), "cpu-clock");
	FILE *f = open_memstream(&out, &len);
	assert_non_null(f);
	assert_int_equal(pmon_report_write_flamegraph(&r, f, 1201), 0);
	fclose(f);
	assert_non_null(strstr(out, "<rect x=\""));
	const char *bad = comma_in_number(out);
	if (bad)
		fail_msg("a comma in a number: %.60s", bad);
	assert_non_null(strstr(out, "70.00%"));
	free(out);

	f = open_memstream(&out, &len);
	assert_int_equal(pmon_report_write_callgraph(&r, f, false, 0.5, false), 0);
	fclose(f);
	assert_non_null(strstr(out, "nodes under 0.5% left out"));
	assert_non_null(strstr(out, "100.00%"));
	assert_null(strstr(out, "00,00%"));
	free(out);

	/* The caller's locale is given back. */
	snprintf(probe, sizeof(probe), "%.1f", 1.5);
	assert_string_equal(probe, "1,5");
	setlocale(LC_NUMERIC, "C");
}

/* annotate --mca's block: the loop around the hottest instruction, found
 * from Capstone's text (a backward jne to the loop's head), its samples
 * and, with exact counts, its executions. */
static void test_report__annotate_hot_block(void **state)
{
	struct pmon_annotate_insn insn[] = {
		{ .addr = 0x1000, .text = "mov ecx, 10", .samples = 1, .period = 1 },
		{ .addr = 0x1005, .text = "add eax, 3", .samples = 40, .period = 10 },
		{ .addr = 0x1008, .text = "dec ecx", .samples = 30, .period = 10 },
		{ .addr = 0x100a, .text = "jne 0x1005", .samples = 20, .period = 10 },
		{ .addr = 0x100c, .text = "ret", .samples = 2, .period = 1 },
	};
	struct pmon_annotation a = { .symbol = "loop", .insn = insn, .n = 5, .samples = 93 };
	struct pmon_annotate_block b;

	(void)state;
	assert_int_equal(pmon_annotate_hot_block(&a, false, &b), 0);
	assert_int_equal(b.lo, 1);
	assert_int_equal(b.hi, 3);
	assert_int_equal(b.hot, 1);
	assert_int_equal(b.start, 0x1005);
	assert_int_equal(b.last, 0x100a);
	assert_int_equal(b.count, 40);
	assert_int_equal(b.in_block, 90);
	assert_int_equal(b.executed, 0);
	assert_int_equal(pmon_annotate_hot_block(&a, true, &b), 0);
	assert_int_equal(b.lo, 1);
	assert_int_equal(b.hi, 3);
	assert_int_equal(b.count, 10);
	assert_int_equal(b.executed, 30);
	/* no counts at all: no block */
	for (size_t i = 0; i < 5; i++)
		insn[i].samples = insn[i].period = 0;
	assert_int_equal(pmon_annotate_hot_block(&a, false, &b), -ENOENT);
}

/* Fields as perf script's -F reads them, one row per spec. */
static void test_report__sample_fields(void **state)
{
	static const struct {
		int line;
		const char *spec;
		int err;
		unsigned want;
	} rows[] = {
		{ __LINE__, "comm,tid", 0, PMON_SF_COMM | PMON_SF_TID },
		{ __LINE__, "sw:ip,sym,symoff", 0, PMON_SF_IP | PMON_SF_SYM | PMON_SF_SYMOFF },
		{ __LINE__, "-cpu,-period", 0, PMON_SF_DEFAULT & ~(PMON_SF_CPU | PMON_SF_PERIOD) },
		{ __LINE__, "+pid", 0, PMON_SF_DEFAULT | PMON_SF_PID },
		{ __LINE__, "comm,bogus", -EINVAL, PMON_SF_DEFAULT },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		unsigned f = PMON_SF_DEFAULT;
		int err = pmon_report_sample_fields(rows[i].spec, &f);
		if (err != rows[i].err || f != rows[i].want)
			fail_msg("line %d: '%s' gave %d, %#x", rows[i].line, rows[i].spec, err, f);
	}
}

/* Two synthetic profiles: hot shrinks, cold grows, new only in the second. */
static void test_report__diff_matches_and_deltas(void **state)
{
	struct pmon_report_entry eb[] = { { .event = 0,
					    .symbol = "hot",
					    .dso = "a.out",
					    .line = "",
					    .samples = 70,
					    .period = 700 },
					  { .event = 0,
					    .symbol = "cold",
					    .dso = "a.out",
					    .line = "",
					    .samples = 30,
					    .period = 300 } };
	struct pmon_report_entry en[] = { { .event = 0,
					    .symbol = "cold",
					    .dso = "a.out",
					    .line = "",
					    .samples = 60,
					    .period = 600 },
					  { .event = 0,
					    .symbol = "hot",
					    .dso = "a.out",
					    .line = "",
					    .samples = 20,
					    .period = 200 },
					  { .event = 0,
					    .symbol = "new",
					    .dso = "b.so",
					    .line = "",
					    .samples = 20,
					    .period = 200 } };
	struct pmon_report_frame frames[] = { { "main", "a.out" },
					      { "hot", "a.out" },
					      { "cold", "a.out" } };
	uint32_t s1[] = { 0, 1 }, s2[] = { 0, 2 };
	struct pmon_report_stack sb[] = { { s1, 2, 70, 700 }, { s2, 2, 30, 300 } };
	struct pmon_report_stack sn[] = { { s2, 2, 60, 600 }, { s1, 2, 40, 400 } };
	struct pmon_report b = { .e = eb,
				 .n = 2,
				 .frames = frames,
				 .nframes = 3,
				 .stacks = sb,
				 .nstacks = 2,
				 .nevents = 1 };
	struct pmon_report n = { .e = en,
				 .n = 3,
				 .frames = frames,
				 .nframes = 3,
				 .stacks = sn,
				 .nstacks = 2,
				 .nevents = 1 };
	struct pmon_report_diff d;
	(void)state;

	b.events[0] = (struct pmon_report_event){ "cpu-clock", 100, 1000, 10, 0 };
	n.events[0] = (struct pmon_report_event){ "cpu-clock", 100, 1000, 10, 0 };
	assert_int_equal(pmon_report_diff(&b, &n, PMON_DIFF_SYMBOL, &d), 0);
	assert_int_equal(d.n, 3);
	assert_string_equal(d.e[0].symbol, "hot"); /* most baseline first */
	assert_true(d.e[0].base_share == 70.0 && d.e[0].new_share == 20.0);
	assert_true(d.e[0].delta == -50.0);
	assert_true(d.e[0].ratio > 0.2857 && d.e[0].ratio < 0.2858);
	assert_string_equal(d.e[1].symbol, "cold");
	assert_true(d.e[1].delta == 30.0 && d.e[1].ratio == 2.0);
	assert_string_equal(d.e[2].symbol, "new");
	assert_true(d.e[2].base_share == 0.0 && d.e[2].new_share == 20.0 && d.e[2].ratio == 0.0);
	/* stacks: matched by name, two counts summing to each profile's */
	assert_int_equal(d.nstacks, 2);
	assert_int_equal(d.base_samples, 100);
	assert_int_equal(d.new_samples, 100);
	char *txt = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&txt, &len);
	assert_int_equal(pmon_report_diff_write_folded(&d, f), 0);
	fclose(f);
	assert_string_equal(txt, "main;hot 70 40\nmain;cold 30 60\n");
	free(txt);
	pmon_report_diff_release(&d);

	/* by DSO: a.out and b.so */
	assert_int_equal(pmon_report_diff(&b, &n, PMON_DIFF_DSO, &d), 0);
	assert_int_equal(d.n, 2);
	assert_string_equal(d.e[0].dso, "a.out");
	assert_string_equal(d.e[0].symbol, "");
	assert_true(d.e[0].base_share == 100.0 && d.e[0].new_share == 80.0);
	pmon_report_diff_release(&d);

	/* a profile against itself: every delta 0, every ratio 1 */
	assert_int_equal(pmon_report_diff(&b, &b, PMON_DIFF_DSO_SYMBOL, &d), 0);
	for (size_t i = 0; i < d.n; i++)
		assert_true(d.e[i].delta == 0.0 && d.e[i].ratio == 1.0);
	pmon_report_diff_release(&d);
	pmon_report_diff_release(NULL);
}

struct walk_seen {
	unsigned samples, k_mid_frames;
	uint64_t period;
	bool leaf_ok;
};

static int walk_cb(void *arg, const struct pmon_report_sample *s)
{
	struct walk_seen *w = arg;

	w->samples++;
	w->period += s->period;
	if (!strcmp(s->leaf.sym, "k_leaf") && s->leaf.has_symoff &&
	    s->leaf.symoff == s->leaf.ip - (KBASE + 0x1000) &&
	    !strcmp(s->leaf.dso, "[kernel.kallsyms]") && !strcmp(s->comm, ":42"))
		w->leaf_ok = true;
	for (size_t i = 0; i < s->nchain; i++)
		if (!strcmp(s->chain[i].sym, "k_mid") && s->chain[i].symoff == 0x40 + (i - 1))
			w->k_mid_frames++;
	return 0;
}

/* The samples one by one: each leaf in k_leaf at its offset, each chain's
 * callers in k_mid at theirs (a return address's own offset, as perf
 * script prints it), the totals counted. */
/* /sys/kernel/notes' layout: the GNU build id found past other notes,
 * none in a buffer cut inside a note, none of another type or name. */
static void test_report__notes_build_id(void **state)
{
	uint8_t b[128] = { 0 }, id[20];
	size_t n = 0;
	(void)state;
	/* a "Linux" note of type 6, 4 bytes of data: name padded to 8 */
	uint32_t h1[3] = { 6, 4, 6 };
	memcpy(b, h1, 12), memcpy(b + 12, "Linux", 6), n = 12 + 8 + 4;
	/* a GNU note of type 1 (ABI tag): not a build id */
	uint32_t h2[3] = { 4, 16, 1 };
	memcpy(b + n, h2, 12), memcpy(b + n + 12, "GNU", 4), n += 12 + 4 + 16;
	uint32_t h3[3] = { 4, 20, 3 };
	memcpy(b + n, h3, 12), memcpy(b + n + 12, "GNU", 4);
	for (int i = 0; i < 20; i++)
		b[n + 16 + i] = (uint8_t)(0xa0 + i);
	size_t all = n + 16 + 20;
	assert_int_equal(pmon__notes_build_id(b, all, id), 20);
	assert_int_equal(id[0], 0xa0);
	assert_int_equal(id[19], 0xa0 + 19);
	assert_int_equal(pmon__notes_build_id(b, all - 1, id), 0); /* cut */
	assert_int_equal(pmon__notes_build_id(b, n, id), 0); /* without it */
	b[n + 12] = 'X'; /* "XNU" */
	assert_int_equal(pmon__notes_build_id(b, all, id), 0);
	/* a descriptor size that would run past the buffer */
	uint32_t big[3] = { 4, 0xfffffff0u, 3 };
	memcpy(b, big, 12);
	assert_int_equal(pmon__notes_build_id(b, all, id), 0);
}

/* perf's build-id cache: .build-id/XX/REST/LEAF (perf 4.7 on), and
 * .build-id/XX/REST the file itself (before), for "elf" only. */
static void test_report__cache_file(void **state)
{
	char dir[] = "/tmp/pmon-cache-XXXXXX", p[4300], got[4300];
	const uint8_t bid[4] = { 0xab, 0xcd, 0x01, 0x02 };
	(void)state;
	assert_non_null(mkdtemp(dir));
	setenv("PERF_BUILDID_DIR", dir, 1);
	assert_false(pmon__cache_file(bid, 4, "elf", got, sizeof(got)));
	snprintf(p, sizeof(p), "%s/.build-id", dir), mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/.build-id/ab", dir), mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/.build-id/ab/cd0102", dir);
	FILE *f = fopen(p, "w"); /* the old layout: the file itself */
	assert_non_null(f);
	fclose(f);
	assert_true(pmon__cache_file(bid, 4, "elf", got, sizeof(got)));
	assert_string_equal(got, p);
	assert_false(pmon__cache_file(bid, 4, "kallsyms", got, sizeof(got)));
	unlink(p);
	mkdir(p, 0700); /* the new one: a directory holding the files */
	snprintf(p, sizeof(p), "%s/.build-id/ab/cd0102/kallsyms", dir);
	assert_non_null(f = fopen(p, "w"));
	fclose(f);
	assert_true(pmon__cache_file(bid, 4, "kallsyms", got, sizeof(got)));
	assert_string_equal(got, p);
	assert_false(
		pmon__cache_file(bid, 4, "elf", got, sizeof(got))); /* a directory is no file */
	assert_false(pmon__cache_file(bid, 0, "elf", got, sizeof(got)));
	unlink(p);
	snprintf(p, sizeof(p), "%s/.build-id/ab/cd0102", dir), rmdir(p);
	snprintf(p, sizeof(p), "%s/.build-id/ab", dir), rmdir(p);
	snprintf(p, sizeof(p), "%s/.build-id", dir), rmdir(p);
	rmdir(dir);
	unsetenv("PERF_BUILDID_DIR");
}

/* C++ names cut as perf prints them (DMGL_NO_OPTS): no parameters, no
 * qualifiers after them, no template function's return type. */
static void test_report__demangle_short(void **state)
{
	static const char *const cases[][2] = {
		{ "foo::bar(int)", "foo::bar" },
		{ "foo::bar() const", "foo::bar" },
		{ "ns::Worker::spin(long)", "ns::Worker::spin" },
		{ "operator()(int)", "operator()" },
		{ "std::vector<int, std::allocator<int> >::push_back(int const&)",
		  "std::vector<int, std::allocator<int> >::push_back" },
		{ "int foo<int>(int)", "foo<int>" },
		{ "plain", "plain" },
		{ "", "" },
	};
	char buf[256];
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(buf, sizeof(buf), "%s", cases[i][0]);
		pmon__demangle_short(buf);
		assert_string_equal(buf, cases[i][1]);
	}
	char *d = pmon__demangle("_ZN2ns6Worker4spinEl");
	if (d) /* where a C++ runtime is installed */
		assert_string_equal(d, "ns::Worker::spin");
	free(d);
	assert_null(pmon__demangle("hot"));
	assert_null(pmon__demangle("_Znotmangled"));
}

static void test_report__foreach_sample(void **state)
{
	char path[] = "/tmp/pmon-test-report-XXXXXX";
	struct walk_seen w = { 0 };
	struct pmon_report info;
	(void)state;

	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	write_kernel_chains(path, 50, 3);
	assert_int_equal(pmon_report_foreach_sample(path, NULL, walk_cb, &w, &info), 0);
	unlink(path);
	assert_int_equal(w.samples, 50);
	assert_int_equal(w.period, 50 * 1000);
	assert_true(w.leaf_ok);
	assert_int_equal(w.k_mid_frames, 50 * 3);
	assert_int_equal(info.samples, 50);
	assert_true(info.callchains);
	assert_string_equal(info.events[0].name, "cpu-clock");
}

/* A function of this program for the live profile to name. */
static __attribute__((noinline)) int live_target(int x)
{
	return x * 3 + 1;
}

/* A sample of IP|TID|PERIOD at @ip of this process into @rec. */
static size_t live_sample(uint8_t *rec, uint64_t ip, uint64_t period)
{
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .size = 32 };
	uint32_t ids[2] = { (uint32_t)getpid(), (uint32_t)getpid() };

	memcpy(rec, &h, 8);
	memcpy(rec + 8, &ip, 8);
	memcpy(rec + 16, ids, 8);
	memcpy(rec + 24, &period, 8);
	return 32;
}

/* pmon top's functions view: a process running before the samples (its
 * maps read from /proc) named, counted per take, zoomed and annotated. */
static void test_report__live_profile(void **state)
{
	(void)state;
	uint64_t st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_PERIOD;
	struct pmon_report_opts o = { .sz = sizeof(o), .sort_keys = "symbol,dso" };
	struct pmon_report_live *l = pmon_report_live__new(st, 0, &o);
	uint8_t rec[64];
	struct pmon_report r;
	char pid[16];

	assert_non_null(l);
	assert_int_equal(live_target(1), 4);
	for (int i = 0; i < 7; i++)
		assert_int_equal(
			pmon_report_live__add(
				l, rec, live_sample(rec, (uint64_t)(uintptr_t)live_target, 10)),
			0);
	assert_int_equal(pmon_report_live__add(l, rec, live_sample(rec, 0xffffffffff000000ULL, 10)),
			 0);
	assert_int_equal(pmon_report_live__take(l, &r), 0);
	assert_int_equal(r.samples, 8);
	assert_true(r.n >= 1);
	assert_string_equal(r.e[0].symbol, "live_target");
	assert_int_equal(r.e[0].samples, 7);
	assert_int_equal(r.e[0].period, 70);
	assert_int_equal(r.e[0].pid, (uint32_t)getpid());
	pmon_report_release(&r);
	/* the counts start again */
	assert_int_equal(pmon_report_live__take(l, &r), 0);
	assert_int_equal(r.samples, 0);
	assert_int_equal(r.n, 0);
	pmon_report_release(&r);
	/* a zoom into another process: nothing passes */
	snprintf(pid, sizeof(pid), "%d", (int)getpid() + 1);
	o.pids = pid;
	assert_int_equal(pmon_report_live__view(l, &o), 0);
	assert_int_equal(pmon_report_live__add(
				 l, rec, live_sample(rec, (uint64_t)(uintptr_t)live_target, 10)),
			 0);
	assert_int_equal(pmon_report_live__take(l, &r), 0);
	assert_int_equal(r.samples, 0);
	pmon_report_release(&r);
	/* the annotation: every sample since the start that passed its view */
	struct pmon_annotation a;
	if (pmon_report_live__annotate(l, "live_target", NULL, &a) == 0) {
		assert_int_equal(a.samples, 7); /* the zoomed-out one is not counted */
		assert_true(a.n >= 2);
		pmon_annotation_release(&a);
	} else {
		/* no Capstone here: said in the detail */
		assert_true(pmon_errdetail() && pmon_errdetail()[0]);
		print_message("annotation skipped: %s\n", pmon_errdetail());
	}
	assert_int_equal(pmon_report_live__annotate(l, "no_such_fn", NULL, &a), -ENOENT);
	pmon_report_live__free(l);
}

/* Processes and their maps (maps.c), as a crafted recording drives them.
 * Issue #31's 538-byte perf.data alternated 60 FORKs between two pids and
 * each copied the parent's maps onto the child's (Fibonacci growth: 16 GB
 * in 60 s): the maps are shared now, and a fork starts a new process as
 * perf's machine__process_fork_event() does. */
static void test_report__fork_shares_maps(void **state)
{
	(void)state;
	struct ctx *x = calloc(1, sizeof(*x));
	const uint64_t base = 0x400000;
	char path[64];

	assert_non_null(x);
	assert_int_equal(pmon__maps_epoch(x), 0);
	for (int i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "/bin/f%d", i);
		assert_int_equal(pmon__maps_add(x, 1, base + 0x1000 * i, 0x1000, 0, path, NULL, 0),
				 0);
		assert_int_equal(pmon__maps_epoch(x), 0);
	}
	uint32_t before = (uint32_t)x->nvis - 1;
	for (int k = 0; k < 60; k++) {
		assert_int_equal(pmon__maps_fork(x, k % 2 ? 1 : 2, k % 2 ? 2 : 1), 0);
		assert_int_equal(pmon__maps_epoch(x), 0);
	}
	uint32_t now = (uint32_t)x->nvis - 1;
	assert_int_equal(x->nmaps, 4); /* shared, not copied */
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pmon__maps_find(x, 1, base + 0x1000 * i + 8, now), i);
		assert_int_equal(pmon__maps_find(x, 2, base + 0x1000 * i + 8, now), i);
	}
	assert_int_equal(pmon__maps_find(x, 2, base, before), -1); /* not yet forked then */
	assert_int_equal(pmon__maps_find(x, 1, base + 0x4000, now), -1);
	assert_int_equal(pmon__maps_find(x, 9, base, now), -1);
	/* the child's own mapping wins in the child only */
	assert_int_equal(pmon__maps_add(x, 2, base, 0x1000, 0, "/bin/new", NULL, 0), 0);
	assert_int_equal(pmon__maps_epoch(x), 0);
	assert_int_equal(pmon__maps_find(x, 2, base, (uint32_t)x->nvis - 1), 4);
	assert_int_equal(pmon__maps_find(x, 1, base, (uint32_t)x->nvis - 1), 0);
	assert_int_equal(pmon__maps_find(x, 2, base, now), 0); /* the sample taken before it */
	/* a pid reborn by a fork: its earlier process's maps are gone */
	assert_int_equal(pmon__maps_add(x, 3, 0x900000, 0x1000, 0, "/bin/three", NULL, 0), 0);
	assert_int_equal(pmon__maps_epoch(x), 0);
	uint32_t three = (uint32_t)x->nvis - 1;
	assert_int_equal(pmon__maps_fork(x, 3, 1), 0);
	assert_int_equal(pmon__maps_epoch(x), 0);
	assert_int_equal(pmon__maps_find(x, 3, 0x900000, three), 5);
	assert_int_equal(pmon__maps_find(x, 3, 0x900000, (uint32_t)x->nvis - 1), -1);
	assert_int_equal(pmon__maps_find(x, 3, base, (uint32_t)x->nvis - 1), 0);
	/* a chain of forks is followed FORK_DEPTH_MAX (256) deep, no further */
	for (uint32_t pid = 11; pid <= 400; pid++) {
		assert_int_equal(pmon__maps_fork(x, pid, pid == 11 ? 1 : pid - 1), 0);
		assert_int_equal(pmon__maps_epoch(x), 0);
	}
	now = (uint32_t)x->nvis - 1;
	assert_int_equal(pmon__maps_find(x, 200, base + 8, now), 0);
	assert_int_equal(pmon__maps_find(x, 400, base + 8, now), -1);
	/* distinct paths: one file each, the same path and build id found again */
	size_t files = x->nfiles, first = x->nmaps;
	for (int i = 0; i < 20000; i++) {
		snprintf(path, sizeof(path), "/lib/l%d.so", i);
		assert_int_equal(
			pmon__maps_add(x, 4, base + 0x1000 * (uint64_t)i, 0x1000, 0, path, NULL, 0),
			0);
	}
	assert_int_equal(x->nfiles, files + 20000);
	const uint8_t bid[4] = { 1, 2, 3, 4 };
	assert_int_equal(pmon__maps_add(x, 4, 0, 0x1000, 0, "/lib/l7.so", NULL, 0), 0);
	assert_int_equal(x->nfiles, files + 20000);
	assert_int_equal(pmon__maps_add(x, 4, 0, 0x1000, 0, "/lib/l7.so", bid, 4), 0);
	assert_int_equal(x->nfiles, files + 20001); /* another build id: another file */
	assert_int_equal(pmon__maps_epoch(x), 0);
	assert_int_equal(pmon__maps_find(x, 4, base + 0x1000 * 7 + 1, (uint32_t)x->nvis - 1),
			 (long)first + 7);
	/* through the index by start: a remapping wins from its epoch on, the
	 * samples before it still see the old one */
	uint32_t old = (uint32_t)x->nvis - 1;
	long remap = (long)x->nmaps;
	assert_int_equal(pmon__maps_add(x, 4, base + 0x7000, 0x1000, 0, "/lib/re.so", NULL, 0), 0);
	for (int i = 0; i < 200; i++) /* enough to be merged into the index */
		assert_int_equal(pmon__maps_add(x, 4, 0x10000000 + 0x1000 * (uint64_t)i, 0x1000, 0,
						"/lib/more.so", NULL, 0),
				 0);
	assert_int_equal(pmon__maps_epoch(x), 0);
	assert_int_equal(pmon__maps_find(x, 4, base + 0x7001, (uint32_t)x->nvis - 1), remap);
	assert_int_equal(pmon__maps_find(x, 4, base + 0x7001, old), (long)first + 7);
	assert_int_equal(
		pmon__maps_find(x, 4, 0x10000000 + 0x1000 * 150 + 5, (uint32_t)x->nvis - 1),
		remap + 151);
	assert_int_equal(pmon__maps_find(x, 4, 0x10000000 + 0x1000 * 200, (uint32_t)x->nvis - 1),
			 -1);
	for (size_t i = 0; i < x->nfiles; i++)
		free(x->files[i].path);
	free(x->files);
	free(x->maps);
	free(x->vis);
	pmon__maps_free(x);
	free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report__kernel_chains_merge),
		cmocka_unit_test(test_report__cpu_list_in_header),
		cmocka_unit_test(test_report__sample_fields),
		cmocka_unit_test(test_report__diff_matches_and_deltas),
		cmocka_unit_test(test_report__foreach_sample),
		cmocka_unit_test(test_report__notes_build_id),
		cmocka_unit_test(test_report__cache_file),
		cmocka_unit_test(test_report__demangle_short),
		cmocka_unit_test(test_report__flamegraph_of_a_garbage_chain),
		cmocka_unit_test(test_report__exports_in_a_comma_locale),
		cmocka_unit_test(test_report__annotate_hot_block),
		cmocka_unit_test(test_report__live_profile),
		cmocka_unit_test(test_report__fork_shares_maps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
