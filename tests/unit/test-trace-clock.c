// SPDX-License-Identifier: MIT
/*
 * The trace's one clock (docs/trace.md "Time") on files built by hand: a
 * TCLK chunk naming the perf clock puts the hooks' TSC on it through the
 * page's conversion, beside the kernel's stamps; one naming
 * CLOCK_MONOTONIC says why not, and a version-1 file (no TCLK) still reads,
 * on CLOCK_MONOTONIC. Then KVM exits: a kvm_exit record decoded from a
 * tracefs format file with the layout of Linux's TRACE_EVENT(kvm_exit)
 * (arch/x86/kvm/trace.h; the format file here is the one Linux 6.18
 * writes) through the perf raw sample parser and through an ftrace page.
 */
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
#include <zlib.h>
#include <cmocka.h>
#include <linux/perf_event.h>

#include "trace/tracefile.h"
#include "trace-synth.h"
#include <pmon/clock.h>
#include <pmon/event.h>
#include <pmon/sample.h>
#include <pmon/trace.h>

/* A 2.1 GHz TSC; the first clock pair at tick T0, CLOCK_MONOTONIC 5 s. */
#define T0 4200000000000ULL
#define HZ 2100000000ULL

static void header(struct fbuf *f, uint32_t version)
{
	struct pmon_trace_disk_header h = { .version = version,
					    .header_size = sizeof(h),
					    .pid = 7,
					    .ticks_per_sec = HZ,
					    .tick0 = T0,
					    .mono0_ns = 5000000000ULL,
					    .command = "prog" };
	memcpy(h.magic, PMON_TRACE_MAGIC, 8);
	put(f, &h, sizeof(h));
}

/* A "work" span of thread 7 from T0 + 2100 ticks to T0 + 4200 (1 to 2 us). */
static void hooks(struct fbuf *f)
{
	uint32_t hdr[2] = { 1, 4 };
	chunk(f, "TCHN", hdr, sizeof(hdr), "work", 4);
	struct pmon__trec rec[2] = { { T0 + 2100, PMON__TR_WORD(PMON__TR_BEGIN, 1), 0 },
				     { T0 + 4200, PMON__TR_WORD(PMON__TR_END, 1), 0 } };
	struct pmon_trace_chunk_events ce = { .tid = 7, .nrec = 2 };
	chunk(f, "TEVT", &ce, sizeof(ce), rec, sizeof(rec));
}

/* x86's page for a 2.1 GHz TSC (arch/x86/kernel/tsc.c __set_cyc2ns_scale():
 * mult 1022611261, shift 31), time_zero making tick 0 perf-clock 1000 ns. */
static struct pmon_trace_chunk_clock perf_clock(void)
{
	struct pmon_trace_chunk_clock c = {
		.base = PMON_TIMEBASE_PERF,
		.caps = PMON__CLK_CAP_TIME | PMON__CLK_CAP_TIME_ZERO | PMON__CLK_PROBED,
		.align_ns = 321,
		.time_shift = 31,
		.time_mult = 1022611261u,
		.time_zero = 1000,
		.clocksource = "tsc",
		.measured_with = "raw_syscalls:sys_enter",
	};
	return c;
}

static void kernel_at(struct fbuf *f, uint64_t ns)
{
	struct pmon__krec k[] = { { ns, 7, PMON__K_SYS_ENTER, 1, 1, 0 },
				  { ns + 100, 7, PMON__K_SYS_EXIT, 1, 1, 6 } };
	struct pmon_trace_chunk_kernel ck = { .nrec = 2 };
	chunk(f, "TKEV", &ck, sizeof(ck), k, sizeof(k));
}

/* The perf clock: the hooks' ticks through the page, exactly as the kernel
 * converts its own (time_zero + (tsc * mult) >> shift), the kernel's
 * stamps as they are: a write(2) stamped between the span's ends lands
 * inside it. */
static void test_trace_clock__perf_clock(void **state)
{
	struct fbuf f = { .n = 0 };
	struct pmon_trace_chunk_clock c = perf_clock();
	struct pmon_perf_tsc tc = { .cap_time = true,
				    .cap_time_zero = true,
				    .mult = c.time_mult,
				    .shift = c.time_shift,
				    .zero = c.time_zero };
	uint64_t begin = pmon_perf_tsc__to_ns(&tc, T0 + 2100),
		 origin = pmon_perf_tsc__to_ns(&tc, T0);

	(void)state;
	header(&f, PMON_TRACE_VERSION);
	hooks(&f);
	chunk(&f, "TCLK", &c, sizeof(c), NULL, 0); /* merged after the hooks */
	kernel_at(&f, begin + 400);
	struct pmon_trace_reader *r = pmon_trace_reader__open_mem(f.b, f.n, "t");
	assert_non_null(r);
	const struct pmon_trace_info *in = pmon_trace_reader__info(r);
	assert_int_equal(in->time_base, PMON_TIMEBASE_PERF);
	assert_string_equal(in->time_base_why, "");
	assert_int_equal(in->time_mult, 1022611261u);
	assert_int_equal(in->time_shift, 31);
	assert_int_equal(in->kernel_align_ns, 321);
	assert_string_equal(in->align_measured_with, "raw_syscalls:sys_enter");
	assert_string_equal(in->clocksource, "tsc");
	assert_int_equal(in->mono_start_ns, origin); /* on the perf clock */
	assert_int_equal(pmon_trace_reader__nevents(r), 4);
	static const char *const order[] = { "work", "sys_write", "sys_write", "work" };
	for (size_t i = 0; i < 4; i++) {
		const struct pmon_trace_event *e = pmon_trace_reader__event(r, i);
		assert_string_equal(pmon_trace_reader__channel(r, e->channel), order[i]);
	}
	/* 2100 ticks of 2.1 GHz: 1000 ns, to the kernel's rounding. */
	const struct pmon_trace_event *b = pmon_trace_reader__event(r, 0),
				      *k = pmon_trace_reader__event(r, 1),
				      *e = pmon_trace_reader__event(r, 3);
	assert_int_equal(b->ns, begin - origin);
	assert_true(b->ns >= 999 && b->ns <= 1001);
	assert_true(e->ns >= 1999 && e->ns <= 2001);
	assert_int_equal(k->ns, begin + 400 - origin);
	pmon_trace_reader__free(r);
}

/* CLOCK_MONOTONIC, and why: the page offered nothing (a guest on
 * kvm-clock), or no perf event could read it; the hooks go through the
 * calibrated pairs (T0 + 2100 ticks: 5 s + 1000 ns). */
static void test_trace_clock__monotonic_says_why(void **state)
{
	static const struct {
		int line;
		uint32_t caps;
		const char *why;
	} rows[] = {
		{ __LINE__, PMON__CLK_PROBED, "cap_user_time_zero 0" },
		{ __LINE__, PMON__CLK_PROBED | PMON__CLK_CAP_TIME, "no cap_user_time_zero" },
		{ __LINE__, 0, "no perf event could be opened" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fbuf f = { .n = 0 };
		struct pmon_trace_chunk_clock c = { .base = PMON_TIMEBASE_MONO,
						    .caps = rows[i].caps,
						    .align_ns = 1383,
						    .clocksource = "kvm-clock",
						    .measured_with = "page-faults" };
		header(&f, PMON_TRACE_VERSION);
		chunk(&f, "TCLK", &c, sizeof(c), NULL, 0);
		hooks(&f);
		kernel_at(&f, 5000000000ULL + 1500);
		struct pmon_trace_reader *r = pmon_trace_reader__open_mem(f.b, f.n, "t");
		assert_non_null(r);
		const struct pmon_trace_info *in = pmon_trace_reader__info(r);
		if (in->time_base != PMON_TIMEBASE_MONO || !strstr(in->time_base_why, rows[i].why))
			fail_msg("line %d: base %d why '%s'", rows[i].line, in->time_base,
				 in->time_base_why);
		assert_int_equal(in->kernel_align_ns, 1383);
		assert_string_equal(in->clocksource, "kvm-clock");
		assert_int_equal(in->mono_start_ns, 5000000000ULL);
		assert_int_equal(pmon_trace_reader__event(r, 0)->ns, 1000);
		assert_int_equal(pmon_trace_reader__event(r, 1)->ns, 1500); /* sys_write */
		pmon_trace_reader__free(r);
	}
}

/* A file of an earlier pmon: version 1, no TCLK: CLOCK_MONOTONIC, the
 * alignment not measured; a later version than this reader's is refused. */
static void test_trace_clock__version_1_still_reads(void **state)
{
	struct fbuf f = { .n = 0 };

	(void)state;
	header(&f, 1);
	hooks(&f);
	kernel_at(&f, 5000000000ULL + 1500);
	struct pmon_trace_reader *r = pmon_trace_reader__open_mem(f.b, f.n, "old");
	assert_non_null(r);
	const struct pmon_trace_info *in = pmon_trace_reader__info(r);
	assert_int_equal(in->time_base, PMON_TIMEBASE_MONO);
	assert_int_equal(in->kernel_align_ns, UINT32_MAX);
	assert_int_equal(in->torn_chunks, 0);
	assert_int_equal(pmon_trace_reader__nevents(r), 4);
	assert_int_equal(pmon_trace_reader__event(r, 1)->ns, 1500);
	pmon_trace_reader__free(r);

	f.n = 0;
	header(&f, PMON_TRACE_VERSION + 1);
	assert_null(pmon_trace_reader__open_mem(f.b, f.n, "new"));
	assert_int_equal(errno, EINVAL);
}

/* ---- KVM exits ---------------------------------------------------------- */

static char root[64];

static void put_file(const char *rel, const char *text)
{
	char p[256], cmd[300];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", p);
	assert_int_equal(system(cmd), 0);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* /sys/kernel/tracing/events/kvm/kvm_exit/format of Linux 6.18 (x86-64):
 * TRACE_EVENT(kvm_exit) of arch/x86/kvm/trace.h, print fmt shortened. */
static const char kvm_exit_format[] =
	"name: kvm_exit\nID: 103\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:unsigned int exit_reason;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned long guest_rip;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:u32 isa;\toffset:24;\tsize:4;\tsigned:0;\n"
	"\tfield:u64 info1;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\tfield:u64 info2;\toffset:40;\tsize:8;\tsigned:0;\n"
	"\tfield:u32 intr_info;\toffset:48;\tsize:4;\tsigned:0;\n"
	"\tfield:u32 error_code;\toffset:52;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned int vcpu_id;\toffset:56;\tsize:4;\tsigned:0;\n"
	"\tfield:u64 requests;\toffset:64;\tsize:8;\tsigned:0;\n\n"
	"print fmt: \"vcpu %u reason %s%s%s rip 0x%lx info1 0x%016llx info2 0x%016llx "
	"intr_info 0x%08x error_code 0x%08x requests 0x%016llx\", REC->vcpu_id, ...\n";

/* A VMX exit of vCPU 3: reason 30 (IO_INSTRUCTION, SDM Vol. 3C Appendix C),
 * isa 1 (VMX), the exit qualification in info1. */
static const struct {
	const char *name;
	unsigned off, size;
	uint64_t v;
} kvm_fields[] = {
	{ "common_type", 0, 2, 103 }, { "common_pid", 4, 4, 4242 },
	{ "exit_reason", 8, 4, 30 },  { "guest_rip", 16, 8, 0xffffffff81234567ULL },
	{ "isa", 24, 4, 1 },	      { "info1", 32, 8, 0x3f80008ULL },
	{ "info2", 40, 8, 0 },	      { "intr_info", 48, 4, 0x80000030u },
	{ "error_code", 52, 4, 0 },   { "vcpu_id", 56, 4, 3 },
	{ "requests", 64, 8, 0 },
};

/* The entry as the kernel writes it: 72 bytes, the fields at their offsets. */
static void kvm_entry(uint8_t *e)
{
	memset(e, 0, 72);
	for (size_t i = 0; i < sizeof(kvm_fields) / sizeof(kvm_fields[0]); i++)
		memcpy(e + kvm_fields[i].off, &kvm_fields[i].v, kvm_fields[i].size);
}

/* Every field from the format file, then from the entry. The 4-byte ones
 * read as ints sign-extend (pid_t): intr_info's bit 31 (valid) shows as a
 * negative value, its low 32 bits the kernel's. */
static void check_fields(struct pmon_evlist *l, const uint8_t *raw, size_t n)
{
	for (size_t i = 0; i < sizeof(kvm_fields) / sizeof(kvm_fields[0]); i++) {
		unsigned off = 0, size = 0;
		if (pmon_evlist__tp_field(l, "kvm:kvm_exit", kvm_fields[i].name, &off, &size) ||
		    off != kvm_fields[i].off || size != kvm_fields[i].size)
			fail_msg("%s: offset %u size %u", kvm_fields[i].name, off, size);
		uint64_t got = (uint64_t)pmon__trace_tp_field(raw, n, off, size);
		uint64_t mask = size == 8 ? ~0ULL : (1ULL << (8 * size)) - 1;
		if ((got & mask) != kvm_fields[i].v)
			fail_msg("%s: got 0x%llx, want 0x%llx", kvm_fields[i].name,
				 (unsigned long long)got, (unsigned long long)kvm_fields[i].v);
	}
	/* A field past the record's end reads 0, not beyond it. */
	assert_int_equal(pmon__trace_tp_field(raw, 60, 64, 8), 0);
}

static struct pmon_evlist *kvm_list(void)
{
	struct pmon_event_opts o = { .sz = sizeof(o), .no_pfm = true };
	char tracefs[128];

	snprintf(tracefs, sizeof(tracefs), "%s/tracing", root);
	o.tracefs_root = tracefs;
	struct pmon_evlist *l = pmon_evlist__new(&o);
	assert_non_null(l);
	assert_int_equal(pmon_evlist__add(l, "kvm:kvm_exit"), 0);
	assert_int_equal(pmon_evlist__event(l, 0)->attr.type, PERF_TYPE_TRACEPOINT);
	assert_int_equal(pmon_evlist__event(l, 0)->attr.config, 103);
	return l;
}

/* The perf path: a PERF_RECORD_SAMPLE with the tracepoint's raw record (the
 * kernel pads u32 size + data to 8 bytes, perf_trace_buf_alloc()). */
static void test_trace_clock__kvm_exit_perf_sample(void **state)
{
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		uint64_t time;
		uint32_t cpu, res;
		uint32_t size;
		uint8_t raw[76];
	} __attribute__((packed)) s = {
		.h = { PERF_RECORD_SAMPLE, 0, sizeof(s) },
		.pid = 4242,
		.tid = 4242,
		.time = 123456789,
		.cpu = 1,
		.size = 76,
	};
	struct pmon_sample smp;

	(void)state;
	assert_int_equal(sizeof(s) % 8, 0);
	kvm_entry(s.raw);
	struct pmon_evlist *l = kvm_list();
	assert_int_equal(pmon_sample__parse(&s, sizeof(s),
					    PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
						    PERF_SAMPLE_RAW,
					    0, &smp),
			 0);
	assert_int_equal(smp.raw_size, 76);
	assert_int_equal(smp.time, 123456789);
	assert_int_equal(smp.cpu, 1);
	check_fields(l, smp.raw, smp.raw_size);
	pmon_evlist__free(l);
}

struct seen {
	uint64_t ts;
	uint8_t data[80];
	size_t n;
	int count;
};

static void on_event(void *ctx, uint64_t ts, const uint8_t *data, size_t n)
{
	struct seen *s = ctx;
	s->ts = ts;
	s->n = n < sizeof(s->data) ? n : sizeof(s->data);
	memcpy(s->data, data, s->n);
	s->count++;
}

/* The ftrace path: the same entry in a trace_pipe_raw page, a data event of
 * type_len 18 (72 bytes) after the page's header (ring_buffer.c). */
static void test_trace_clock__kvm_exit_ftrace_page(void **state)
{
	uint8_t page[4096] = { 0 };
	uint64_t ts = 1000000, commit = 4 + 72;
	uint32_t h = 18u | (500u << 5); /* type_len 18, time_delta 500 */
	struct seen seen = { 0 };

	(void)state;
	memcpy(page, &ts, 8);
	memcpy(page + 8, &commit, 8);
	memcpy(page + 16, &h, 4);
	kvm_entry(page + 20);
	assert_int_equal(pmon__ftrace_page(page, sizeof(page), on_event, &seen), 0);
	assert_int_equal(seen.count, 1);
	assert_int_equal(seen.ts, 1000500);
	assert_int_equal(seen.n, 72);
	struct pmon_evlist *l = kvm_list();
	check_fields(l, seen.data, seen.n);
	pmon_evlist__free(l);
}

static int kvm_setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/pmon-kvm-XXXXXX");
	if (!mkdtemp(root))
		return -1;
	put_file("tracing/events/kvm/kvm_exit/id", "103\n");
	put_file("tracing/events/kvm/kvm_exit/format", kvm_exit_format);
	return 0;
}

static int kvm_teardown(void **state)
{
	char cmd[128];
	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trace_clock__perf_clock),
		cmocka_unit_test(test_trace_clock__monotonic_says_why),
		cmocka_unit_test(test_trace_clock__version_1_still_reads),
		cmocka_unit_test_setup_teardown(test_trace_clock__kvm_exit_perf_sample, kvm_setup,
						kvm_teardown),
		cmocka_unit_test_setup_teardown(test_trace_clock__kvm_exit_ftrace_page, kvm_setup,
						kvm_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
