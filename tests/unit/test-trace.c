// SPDX-License-Identifier: MIT
/*
 * Trace hooks and the trace reader (lib/trace): a fake clock makes every
 * duration exact; several threads, a ring too small to hold the hooks
 * (drops counted, never blocking), 64-bit counter values, a cut and a
 * damaged file read up to and around the damage, fork; kernel events
 * (TKEV chunks) merged onto the hooks' timeline, pmon_trace_merge(), and
 * the SVG timeline's structure and escaping.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>

#include "trace/tracefile.h"
#include "trace-synth.h"
#include <pmon/trace.h>

static char path[64];
static uint64_t fake_now;

/* Each read of the fake clock advances it by 10 ticks (1 tick = 1 ns). */
static uint64_t fake_clock(void)
{
	return __atomic_add_fetch(&fake_now, 10, __ATOMIC_RELAXED);
}

static int setup(void **state)
{
	snprintf(path, sizeof(path), "/tmp/pmon-trace-%d.trace", (int)getpid());
	return 0;
}

static int teardown(void **state)
{
	unlink(path);
	return 0;
}

static void start(size_t ring, unsigned flush_ms)
{
	struct pmon_trace_opts o = { .sz = sizeof(o),
				     .path = path,
				     .buffer_records = ring,
				     .flush_ms = flush_ms,
				     .clock = fake_clock,
				     .ticks_per_sec = 1000000000u };
	assert_int_equal(pmon_trace_start(&o), 0);
}

static const struct pmon_trace_chan_stats *row(const struct pmon_trace_reader *r,
					       const struct pmon_trace_chan_stats *st, long n,
					       const char *name)
{
	for (long i = 0; i < n; i++)
		if (!strcmp(pmon_trace_reader__channel(r, st[i].channel), name))
			return &st[i];
	fail_msg("no row for channel '%s'", name);
	return NULL;
}

static void test_trace__exact_table(void **state)
{
	start(0, 0);
	uint32_t a = pmon_trace_channel("a"), b = pmon_trace_channel("b");
	assert_int_equal(pmon_trace_channel("a"), a); /* interned */
	assert_int_equal(pmon_trace_channel(""), 0);
	for (int i = 0; i < 100; i++) {
		pmon_trace_begin(a); /* t */
		pmon_trace_begin(b); /* t+10 */
		pmon_trace_end(b); /* t+20: b lasts 10 */
		pmon_trace_end(a); /* t+30: a lasts 30 */
		pmon_trace_mark(b);
	}
	pmon_trace_counter(b, -5);
	pmon_trace_counter(b, (int64_t)1 << 40); /* needs the second record */
	pmon_trace_counter(b, 7);
	pmon_trace_end(a); /* an end without a begin */
	pmon_trace_begin(b); /* a begin never ended */
	pmon_trace_begin(0); /* channel 0: ignored */
	assert_int_equal(pmon_trace_stop(), 0);

	struct stat sb;
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);

	struct pmon_trace_reader *r = pmon_trace_reader__open(path);
	assert_non_null(r);
	const struct pmon_trace_info *in = pmon_trace_reader__info(r);
	assert_true(in->complete);
	assert_int_equal(in->dropped, 0);
	assert_int_equal(in->torn_chunks, 0);
	assert_int_equal(in->ticks_per_sec, 1000000000u); /* the given rate wins */
	assert_int_equal(pmon_trace_reader__nevents(r), 100 * 5 + 3 + 2);
	struct pmon_trace_chan_stats st[4];
	long n = pmon_trace_summarize(r, 0, UINT64_MAX, st);
	assert_int_equal(n, 2);
	const struct pmon_trace_chan_stats *ra = row(r, st, n, "a"), *rb = row(r, st, n, "b");
	assert_int_equal(ra->spans, 100);
	assert_int_equal(ra->min_ns, 30);
	assert_int_equal(ra->max_ns, 30);
	assert_int_equal(ra->median_ns, 30);
	assert_int_equal(ra->p99_ns, 30);
	assert_int_equal(ra->total_ns, 3000);
	assert_int_equal(ra->unmatched, 1);
	assert_int_equal(rb->spans, 100);
	assert_int_equal(rb->total_ns, 1000);
	assert_int_equal(rb->marks, 100);
	assert_int_equal(rb->counters, 3);
	assert_true(rb->counter_min == -5);
	assert_true(rb->counter_max == (int64_t)1 << 40);
	assert_true(rb->counter_last == 7);
	assert_int_equal(rb->unmatched, 1);

	/* A window holding the first 10 rounds only (each round: 5 hooks x 10 ns). */
	uint64_t first = pmon_trace_reader__event(r, 0)->ns;
	n = pmon_trace_summarize(r, first, first + 500, st);
	assert_int_equal(row(r, st, n, "a")->spans, 10);

	/* The logic-analyzer row of 'a' over its first round: busy, then idle. */
	char ticks[41];
	pmon_trace_ticks_row(r, a, first, first + 50, ticks, 40);
	assert_int_equal(strspn(ticks, "#"), 25); /* 30 of 50 ns: cells 0..24 */
	assert_int_equal(strlen(ticks), 40);

	/* Chrome JSON: every hook an event. */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(pmon_trace_write_chrome(r, f), 0);
	fclose(f);
	size_t b_events = 0;
	for (char *p = buf; (p = strstr(p, "\"ph\":\"B\"")); p++)
		b_events++;
	assert_int_equal(b_events, 201);
	assert_non_null(strstr(buf, "\"traceEvents\""));
	free(buf);
	pmon_trace_reader__free(r);
}

static void *hooker(void *arg)
{
	uint32_t ch = *(uint32_t *)arg;
	for (int i = 0; i < 5000; i++) {
		pmon_trace_begin(ch);
		pmon_trace_end(ch);
	}
	return NULL;
}

static void test_trace__threads(void **state)
{
	start(1024, 1); /* small rings, drained every millisecond */
	uint32_t ch = pmon_trace_channel("work");
	pthread_t t[8];
	for (int i = 0; i < 8; i++)
		assert_int_equal(pthread_create(&t[i], NULL, hooker, &ch), 0);
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(pmon_trace_stop(), 0);
	struct pmon_trace_reader *r = pmon_trace_reader__open(path);
	assert_non_null(r);
	const struct pmon_trace_info *in = pmon_trace_reader__info(r);
	/* Every hook is in the file or counted as dropped. */
	assert_int_equal(pmon_trace_reader__nevents(r) + in->dropped, 8 * 5000 * 2);
	struct pmon_trace_chan_stats st[2];
	long n = pmon_trace_summarize(r, 0, UINT64_MAX, st);
	assert_int_equal(n, 1);
	/* Eight threads: a begin and its end are always on one thread, so no
	 * span pairs across threads even though they interleave in time. */
	if (!in->dropped)
		assert_int_equal(st[0].spans, 8 * 5000);
	pmon_trace_reader__free(r);
}

static void test_trace__full_ring_drops(void **state)
{
	/* A ring of 16 records and a writer that only drains when stopped: the
	 * hooks never block; what did not fit is counted. */
	start(16, 100000);
	uint32_t ch = pmon_trace_channel("burst");
	for (int i = 0; i < 1000; i++)
		pmon_trace_mark(ch);
	assert_int_equal(pmon_trace_stop(), 0);
	struct pmon_trace_reader *r = pmon_trace_reader__open(path);
	assert_non_null(r);
	const struct pmon_trace_info *in = pmon_trace_reader__info(r);
	assert_int_equal(pmon_trace_reader__nevents(r) + in->dropped, 1000);
	assert_true(in->dropped >= 1000 - 32);
	pmon_trace_reader__free(r);
}

static void rewrite(const char *p, long off, int cut)
{
	FILE *f = fopen(p, "r+b");
	assert_non_null(f);
	if (cut) {
		assert_int_equal(ftruncate(fileno(f), off), 0);
	} else {
		fseek(f, off, SEEK_SET);
		int c = fgetc(f);
		fseek(f, off, SEEK_SET);
		fputc(c ^ 0x5a, f);
	}
	fclose(f);
}

static void test_trace__damaged_files(void **state)
{
	/* Many chunks: one thread, a small ring drained every millisecond. */
	start(64, 1);
	uint32_t ch = pmon_trace_channel("m");
	for (int i = 0; i < 3000; i++) {
		pmon_trace_mark(ch);
		if (i % 50 == 0)
			usleep(2000);
	}
	assert_int_equal(pmon_trace_stop(), 0);
	struct pmon_trace_reader *r = pmon_trace_reader__open(path);
	assert_non_null(r);
	size_t all = pmon_trace_reader__nevents(r);
	uint64_t chunks = pmon_trace_reader__info(r)->chunks;
	assert_true(chunks > 10);
	pmon_trace_reader__free(r);

	struct stat sb;
	assert_int_equal(stat(path, &sb), 0);
	char copy[80];
	snprintf(copy, sizeof(copy), "%s.copy", path);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "cp %s %s", path, copy);
	assert_int_equal(system(cmd), 0);

	/* A byte flipped in the middle: that chunk is skipped, both sides read. */
	rewrite(path, (long)sb.st_size / 2, 0);
	r = pmon_trace_reader__open(path);
	assert_non_null(r);
	const struct pmon_trace_info *in = pmon_trace_reader__info(r);
	assert_int_equal(in->torn_chunks, 1);
	assert_true(pmon_trace_reader__nevents(r) < all);
	assert_true(pmon_trace_reader__nevents(r) > all / 2 + 64);
	assert_true(in->complete); /* the trailer after the damage was found */
	pmon_trace_reader__free(r);

	/* Cut in the middle, as a killed program leaves it: up to the cut. */
	rewrite(copy, (long)sb.st_size / 2, 1);
	r = pmon_trace_reader__open(copy);
	assert_non_null(r);
	in = pmon_trace_reader__info(r);
	assert_false(in->complete);
	assert_true(pmon_trace_reader__nevents(r) > all / 2 - 200);
	assert_true(pmon_trace_reader__nevents(r) < all);
	pmon_trace_reader__free(r);

	/* Not a trace at all; a header cut short. */
	rewrite(copy, 20, 1);
	errno = 0;
	assert_null(pmon_trace_reader__open(copy));
	assert_int_equal(errno, EINVAL);
	unlink(copy);
	assert_null(pmon_trace_reader__open("/nonexistent/x.trace"));
	assert_int_equal(errno, ENOENT);
}

static void test_trace__fork_and_restart(void **state)
{
	start(0, 0);
	uint32_t ch = pmon_trace_channel("parent");
	assert_int_equal(pmon_trace_start(NULL), -EALREADY);
	pmon_trace_mark(ch);
	pid_t pid = fork();
	if (pid == 0) {
		/* The child does not trace: hooks return at once, nothing breaks. */
		for (int i = 0; i < 100; i++)
			pmon_trace_mark(ch);
		_exit(pmon_trace_stop() == 0 ? 0 : 1);
	}
	int status;
	waitpid(pid, &status, 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	pmon_trace_mark(ch);
	assert_int_equal(pmon_trace_stop(), 0);
	struct pmon_trace_reader *r = pmon_trace_reader__open(path);
	assert_non_null(r);
	assert_int_equal(pmon_trace_reader__nevents(r), 2);
	pmon_trace_reader__free(r);
	/* Hooks after stop are ignored; a new trace can start. */
	pmon_trace_mark(ch);
	start(0, 0);
	pmon_trace_mark(ch);
	assert_int_equal(pmon_trace_stop(), 0);
	r = pmon_trace_reader__open(path);
	assert_non_null(r);
	assert_int_equal(pmon_trace_reader__nevents(r), 1);
	pmon_trace_reader__free(r);
}

/* ---- files built by hand ---------------------------------------------- */

/* The hooks: a "work" span of thread 7 from mono 5100 to 5400 ns. */
static void hooks(struct fbuf *f, const char *name)
{
	channel(f, 1, name);
	struct pmon__trec rec[2] = { { 1100, PMON__TR_WORD(PMON__TR_BEGIN, 1), 0 },
				     { 1400, PMON__TR_WORD(PMON__TR_END, 1), 0 } };
	struct pmon_trace_chunk_events ce = { .tid = 7, .nrec = 2 };
	chunk(f, "TEVT", &ce, sizeof(ce), rec, sizeof(rec));
}

/* The kernel: a switch-out before the hooks' first clock pair, a write(2)
 * and a wake-up inside the span, a fault after it, a record of a later
 * version (skipped). */
static void kernel(struct fbuf *f)
{
	struct pmon__krec k[] = {
		{ 5200, 7, PMON__K_SYS_ENTER, 1, 1, 0 },
		{ 5300, 7, PMON__K_SYS_EXIT, 1, 1, 6 },
		{ 4000, 7, PMON__K_SWITCH_OUT, 0, 1, 99 },
		{ 5350, 7, PMON__K_WAKEUP, 1, 99, 1 },
		{ 5360, 7, 77, 1, 0, 0 },
		{ 5500, 7, PMON__K_FAULT, 0, 0xdead, 0x1234 },
	};
	struct pmon_trace_chunk_kernel ck = { .nrec = 6, .lost = 3 };
	chunk(f, "TKEV", &ck, sizeof(ck), k, sizeof(k));
}

static void test_trace__kernel_events_on_one_timeline(void **state)
{
	struct fbuf f = { .n = 0 };
	header_ns(&f);
	kernel(&f); /* before the hooks' channels: numbered after them anyway */
	hooks(&f, "work");
	struct pmon_trace_reader *r = pmon_trace_reader__open_mem(f.b, f.n, "t");
	assert_non_null(r);
	const struct pmon_trace_info *in = pmon_trace_reader__info(r);
	assert_int_equal(in->kernel_events, 5);
	assert_int_equal(in->kernel_lost, 3);
	assert_int_equal(in->torn_chunks, 0);
	/* The trace starts at its first event, the kernel's, at 4000 ns. */
	assert_int_equal(in->mono_start_ns, 4000);
	static const struct {
		const char *name;
		enum pmon_trace_kind kind;
		uint64_t ns;
		bool kernel;
		int64_t value, arg;
		int line;
	} want[] = {
		{ "sched_switch", PMON_TRACE_MARK_EV, 0, true, 1, 99, __LINE__ },
		{ "work", PMON_TRACE_BEGIN_EV, 1100, false, 0, 0, __LINE__ },
		{ "sys_write", PMON_TRACE_BEGIN_EV, 1200, true, 1, 0, __LINE__ },
		{ "sys_write", PMON_TRACE_END_EV, 1300, true, 6, 1, __LINE__ },
		{ "sched_wakeup", PMON_TRACE_MARK_EV, 1350, true, 99, 1, __LINE__ },
		{ "work", PMON_TRACE_END_EV, 1400, false, 0, 0, __LINE__ },
		{ "page_fault", PMON_TRACE_MARK_EV, 1500, true, 0xdead, 0x1234, __LINE__ },
	};
	assert_int_equal(pmon_trace_reader__nevents(r), (sizeof(want) / sizeof(want[0])));
	for (size_t i = 0; i < (sizeof(want) / sizeof(want[0])); i++) {
		const struct pmon_trace_event *e = pmon_trace_reader__event(r, i);
		const char *name = pmon_trace_reader__channel(r, e->channel);
		if (strcmp(name, want[i].name) || e->kind != want[i].kind || e->ns != want[i].ns ||
		    !!(e->flags & PMON_TRACE_EV_KERNEL) != want[i].kernel ||
		    e->value != want[i].value || e->arg != want[i].arg || e->tid != 7 ||
		    pmon_trace_reader__channel_kernel(r, e->channel) != want[i].kernel)
			fail_msg("line %d: got %s kind %d at %llu value %lld arg %lld",
				 want[i].line, name, e->kind, (unsigned long long)e->ns,
				 (long long)e->value, (long long)e->arg);
	}
	/* The hooks keep their channel id; the kernel's come after. */
	assert_string_equal(pmon_trace_reader__channel(r, 1), "work");
	struct pmon_trace_chan_stats st[8];
	assert_true(pmon_trace_reader__nchannels(r) < 8);
	long n = pmon_trace_summarize(r, 0, UINT64_MAX, st);
	assert_int_equal(row(r, st, n, "sys_write")->spans, 1);
	assert_int_equal(row(r, st, n, "sys_write")->total_ns, 100);
	assert_int_equal(row(r, st, n, "work")->total_ns, 300);
	assert_int_equal(row(r, st, n, "sched_wakeup")->marks, 1);
	pmon_trace_reader__free(r);
}

/* Chrome JSON: a kernel span's begin and end carry no args (speedscope
 * names a frame by its name and args, and warns of an end whose differ
 * from its begin's: issue #28.7); an instant at the end, on the same lane,
 * carries the value, arg and CPU for Perfetto and chrome://tracing. */
static void test_trace__chrome_kernel_args(void **state)
{
	struct fbuf f = { .n = 0 };
	header_ns(&f);
	kernel(&f);
	hooks(&f, "work");
	struct pmon_trace_reader *r = pmon_trace_reader__open_mem(f.b, f.n, "t");
	assert_non_null(r);
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	assert_non_null(m);
	assert_int_equal(pmon_trace_write_chrome(r, m), 0);
	fclose(m);
	char *b = strstr(buf, "{\"name\":\"sys_write\",\"ph\":\"B\"");
	char *e = strstr(buf, "{\"name\":\"sys_write\",\"ph\":\"E\"");
	assert_non_null(b);
	assert_non_null(e);
	char *bline = strndup(b, strcspn(b, "\n"));
	char *eline = strndup(e, strcspn(e, "\n"));
	assert_null(strstr(bline, "\"args\""));
	assert_null(strstr(eline, "\"args\""));
	/* the next line: the instant, at the end's time, with its args */
	char *i = e + strlen(eline) + 1;
	char *iline = strndup(i, strcspn(i, "\n"));
	/* same ts, pid, tid (the rest of the end's line after "ph":"E") */
	const char *rest = strstr(eline, "\"ts\":");
	assert_non_null(rest);
	const char *head = "{\"name\":\"sys_write\",\"ph\":\"i\",";
	size_t nrest = strcspn(rest, "}") - strlen(",\"cat\":\"kernel\"");
	assert_int_equal(strncmp(iline, head, strlen(head)), 0);
	assert_int_equal(strncmp(iline + strlen(head), rest, nrest), 0);
	assert_non_null(strstr(iline,
			       "\"s\":\"t\",\"cat\":\"kernel\","
			       "\"args\":{\"value\":6,\"arg\":1,\"cpu\":1}}"));
	free(bline);
	free(eline);
	free(iline);
	/* an instant keeps its args */
	assert_non_null(strstr(buf, "\"name\":\"sched_wakeup\""));
	assert_non_null(strstr(strstr(buf, "\"name\":\"sched_wakeup\""), "\"args\":{\"value\":99"));
	free(buf);
	pmon_trace_reader__free(r);
}

static void write_file(const char *p, const struct fbuf *f)
{
	FILE *o = fopen(p, "wb");
	assert_non_null(o);
	assert_int_equal(fwrite(f->b, 1, f->n, o), f->n);
	assert_int_equal(fclose(o), 0);
}

static void test_trace__merge(void **state)
{
	char kpath[80];
	struct fbuf u = { .n = 0 }, k = { .n = 0 };
	snprintf(kpath, sizeof(kpath), "%s.kernel", path);
	header_ns(&u);
	hooks(&u, "work");
	header_ns(&k);
	kernel(&k);
	/* Into the program's trace: its hooks and the kernel's events. */
	write_file(path, &u);
	write_file(kpath, &k);
	assert_int_equal(pmon_trace_merge(path, kpath), 0);
	assert_int_equal(access(kpath, F_OK), -1);
	struct pmon_trace_reader *r = pmon_trace_reader__open(path);
	assert_non_null(r);
	assert_int_equal(pmon_trace_reader__nevents(r), 7);
	assert_int_equal(pmon_trace_reader__info(r)->torn_chunks, 0);
	pmon_trace_reader__free(r);
	/* No trace from the program: the kernel's becomes the trace. */
	unlink(path);
	write_file(kpath, &k);
	assert_int_equal(pmon_trace_merge(path, kpath), 0);
	assert_non_null(r = pmon_trace_reader__open(path));
	assert_int_equal(pmon_trace_reader__nevents(r), 5);
	pmon_trace_reader__free(r);
	/* Not a trace: refused, nothing touched. */
	FILE *o = fopen(kpath, "w");
	fputs("garbage", o);
	fclose(o);
	assert_int_equal(pmon_trace_merge(path, kpath), -EINVAL);
	unlink(kpath);
}

/* ---- ftrace ring-buffer pages (pmon__ftrace_page) ---------------------- */

struct ftev {
	uint64_t ts[8];
	size_t n[8], count;
	uint8_t first[8];
};

static void ft_cb(void *ctx, uint64_t ts, const uint8_t *data, size_t n)
{
	struct ftev *e = ctx;
	if (e->count < 8) {
		e->ts[e->count] = ts;
		e->n[e->count] = n;
		e->first[e->count] = data[0];
	}
	e->count++;
}

/* Append a u32 event header (type_len, time_delta) and optional words. */
static size_t ft_put(uint8_t *page, size_t off, unsigned type, uint32_t delta, const uint32_t *w,
		     size_t nw)
{
	uint32_t h = (delta << 5) | type;
	memcpy(page + off, &h, 4);
	off += 4;
	for (size_t i = 0; i < nw; i++, off += 4)
		memcpy(page + off, &w[i], 4);
	return off;
}

static void set_header(uint8_t *page, uint64_t ts, uint64_t commit)
{
	memcpy(page, &ts, 8);
	memcpy(page + 8, &commit, 8);
}

static void test_trace__ftrace_page(void **state)
{
	(void)state;
	uint8_t page[4096];
	uint32_t small[9] = { 0x11 }, large[31] = { 0 }, ext = 2, abs = 7;
	struct ftev e;

	/* A 36-byte entry (type_len 9), a time extend, a long entry (type_len 0,
	 * its length word counting itself), a discarded event, an absolute
	 * timestamp, then the page's padding. */
	memset(page, 0, sizeof(page));
	size_t off = 16;
	off = ft_put(page, off, 9, 100, small, 9);
	off = ft_put(page, off, 30, 5, &ext, 1); /* + (2 << 27) + 5 */
	large[0] = 4 + 120;
	large[1] = 0x22;
	off = ft_put(page, off, 0, 10, large, 31);
	uint32_t disc = 8;
	off = ft_put(page, off, 29, 1, &disc, 1);
	off += 4; /* the discarded event's other word */
	off = ft_put(page, off, 31, 3, &abs, 1); /* (7 << 27) | 3 */
	small[0] = 0x33;
	off = ft_put(page, off, 9, 1, small, 9);
	size_t commit = off - 16;
	ft_put(page, off, 29, 0, NULL, 0);
	set_header(page, 1000, commit);
	memset(&e, 0, sizeof(e));
	assert_int_equal(pmon__ftrace_page(page, sizeof(page), ft_cb, &e), 0);
	assert_int_equal(e.count, 3);
	assert_int_equal(e.ts[0], 1100);
	assert_int_equal(e.n[0], 36);
	assert_int_equal(e.first[0], 0x11);
	assert_int_equal(e.ts[1], 1100 + ((uint64_t)2 << 27) + 5 + 10);
	assert_int_equal(e.n[1], 120);
	assert_int_equal(e.first[1], 0x22);
	assert_int_equal(e.ts[2], ((uint64_t)7 << 27 | 3) + 1);
	assert_int_equal(e.first[2], 0x33);

	/* Missed events: counted (stored after the data), or 1 when not stored. */
	uint64_t missed = 42;
	memcpy(page + 16 + commit, &missed, 8);
	set_header(page, 1000, commit | (1u << 31) | (1u << 30));
	memset(&e, 0, sizeof(e));
	assert_int_equal(pmon__ftrace_page(page, sizeof(page), ft_cb, &e), 42);
	set_header(page, 1000, commit | (1u << 31));
	assert_int_equal(pmon__ftrace_page(page, sizeof(page), ft_cb, &e), 1);

	/* Malformed: the data longer than the page, an event past the data. */
	set_header(page, 1000, 5000);
	assert_int_equal(pmon__ftrace_page(page, sizeof(page), ft_cb, &e), -EINVAL);
	set_header(page, 1000, 20);
	memset(&e, 0, sizeof(e));
	assert_int_equal(pmon__ftrace_page(page, sizeof(page), ft_cb, &e), -EINVAL);
	assert_int_equal(e.count, 0);
	set_header(page, 1000, 0);
	assert_int_equal(pmon__ftrace_page(page, 8, ft_cb, &e), -EINVAL);
	assert_int_equal(pmon__ftrace_page(page, 16, ft_cb, &e), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_trace__exact_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trace__threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trace__full_ring_drops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trace__damaged_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trace__fork_and_restart, setup, teardown),
		cmocka_unit_test(test_trace__kernel_events_on_one_timeline),
		cmocka_unit_test(test_trace__chrome_kernel_args),
		cmocka_unit_test_setup_teardown(test_trace__merge, setup, teardown),
		cmocka_unit_test(test_trace__ftrace_page),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
