// SPDX-License-Identifier: MIT
/*
 * Reading a trace file (lib/trace/tracefile.h): chunks checked by length and
 * CRC, a damaged one skipped by searching for the next valid chunk header,
 * read from the file as they come (never the whole file held: a 4 GB
 * sparse trace is 4 GB of damage, not 4 GB of memory) and resynchronized
 * in one forward pass whose CRC work is bounded by the bytes it passed,
 * records decoded per thread and merged into one time-ordered list; then
 * the views `pmon trace report` prints: the delta-time table per channel,
 * the logic-analyzer row, Chrome trace-event JSON.
 *
 * The file may come from anyone: every length is checked against what is
 * left before use, with overflow-safe arithmetic.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "internal.h"
#include "trace/tracefile.h"
#include <pmon/clock.h>
#include <pmon/stats.h>
#include <pmon/trace.h>

struct pmon_trace_reader {
	struct pmon_trace_info info;
	struct pmon_trace_event *ev;
	size_t nev, cap;
	char **chan; /* [0 .. chancap): the hooks' ids from the file, then the kernel's */
	bool *kern;
	size_t nchan, chancap;
	/* The kernel's channels by name (kernel_channel()): open addressing,
	 * 0 free, at most half full. 200,000 unknown syscall numbers are
	 * 400,000 names; a scan of them per record was quadratic. */
	uint32_t *khash;
	size_t khcap, nkh;
	uint32_t max_hook_channel; /* of the hooks' events, named or not */
	uint64_t tick0;
	/* Who is which process: the task records as read, then one entry per
	 * thread, sorted by tid (build_threads()). */
	struct task_rec {
		int32_t tid;
		uint32_t type; /* PMON__K_TASK, PMON__K_COMM, TASK_REC_THREAD */
		int64_t a, b;
		uint64_t ns, seq;
	} * tr;
	size_t ntr, captr;
	struct pmon__trace_thread *thr, dflt;
	size_t nthr;
	struct pmon_trace_disk_snapshot snap; /* have_snap: from the header */
	bool have_snap;
	uint64_t snap_trace_ns; /* snap.tick on the time base (set_times()) */
	/* Each exec (a COMM record flagged PERF_RECORD_MISC_COMM_EXEC): its
	 * process and time, sorted by both (build_threads()). */
	struct exec_at {
		int32_t pid;
		uint64_t ns;
	} * exec;
	size_t nexec, capexec;
};

#define TASK_REC_THREAD 0x100u /* a TTHR chunk: a, b the name; ns the flags */

static int push_task(struct pmon_trace_reader *r, const struct task_rec *t)
{
	if (PMON_GROW(&r->tr, &r->captr, r->ntr + 1))
		return -ENOMEM;
	r->tr[r->ntr] = *t;
	r->tr[r->ntr].seq = r->ntr;
	r->ntr++;
	return 0;
}

/* Make room for channel @id. */
static int chan_room(struct pmon_trace_reader *r, size_t id)
{
	if (id < r->chancap)
		return 0;
	/* Two arrays of one length: each grows from the same capacity, so
	 * both reach the same one; where the second fails, the old capacity
	 * stays (the first is only larger than needed). */
	size_t cc = r->chancap, ck = r->chancap;
	if (PMON_GROW(&r->chan, &cc, id + 1) || PMON_GROW(&r->kern, &ck, id + 1))
		return -ENOMEM;
	memset(r->chan + r->chancap, 0, (cc - r->chancap) * sizeof(*r->chan));
	memset(r->kern + r->chancap, 0, (ck - r->chancap) * sizeof(*r->kern));
	r->chancap = cc < ck ? cc : ck;
	return 0;
}

static int push(struct pmon_trace_reader *r, const struct pmon_trace_event *e)
{
	if (PMON_GROW(&r->ev, &r->cap, r->nev + 1))
		return -ENOMEM;
	r->ev[r->nev++] = *e;
	return 0;
}

static bool known_magic(const char *m)
{
	return !memcmp(m, "TCHN", 4) || !memcmp(m, "TEVT", 4) || !memcmp(m, "TEND", 4) ||
		!memcmp(m, "TKEV", 4) || !memcmp(m, "TCLK", 4) || !memcmp(m, "TTHR", 4);
}

/*
 * Where the chunks come from: the file, read as they come through one
 * buffer that holds the largest chunk read (PMON_TRACE_CHUNK_MAX at most),
 * or a buffer the caller holds (pmon_trace_reader__open_mem, the fuzzer).
 */
struct src {
	const unsigned char *mem; /* NULL: read @fd */
	int fd;
	uint64_t size;
	unsigned char *buf;
	size_t cap;
	/* CRC bytes a resync may still spend on candidate chunks: it earns
	 * RESYNC_CRC_PER_BYTE per byte it passes (and RESYNC_CRC_FIRST once),
	 * so fake headers every few bytes, each claiming a long payload,
	 * cost a bounded multiple of the file's size, not its square. */
	uint64_t crc_budget;
};

#define RESYNC_CRC_PER_BYTE 16u
#define RESYNC_CRC_FIRST (4u << 20)

/* @len bytes of @fd at @off into @b, whatever short reads and EINTR come. */
static bool read_at(int fd, unsigned char *b, size_t len, uint64_t off)
{
	for (size_t got = 0; got < len;) {
		ssize_t n = pread(fd, b + got, len - got, (off_t)(off + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		got += (size_t)n;
	}
	return true;
}

/* @len bytes at @off: a pointer valid until the next call, or NULL where
 * the file ends first (or cannot be read). */
static const unsigned char *src_at(struct src *s, uint64_t off, size_t len)
{
	if (off > s->size || len > s->size - off)
		return NULL;
	if (s->mem)
		return s->mem + off;
	if (PMON_GROW(&s->buf, &s->cap, len ? len : 1) || !read_at(s->fd, s->buf, len, off))
		return NULL;
	return s->buf;
}

/* A chunk header at @off whose magic is known and whose length fits the
 * file and the format's bound (PMON_TRACE_CHUNK_MAX), into @c; or false. */
static bool header_ok(struct src *s, uint64_t off, struct pmon_trace_chunk *c)
{
	const unsigned char *p = src_at(s, off, sizeof(*c));
	if (!p)
		return false;
	memcpy(c, p, sizeof(*c));
	return known_magic(c->magic) && c->len <= PMON_TRACE_CHUNK_MAX &&
		c->len <= s->size - off - sizeof(*c);
}

/* A valid chunk at @off: its total size, or 0. */
static size_t chunk_ok(struct src *s, uint64_t off)
{
	struct pmon_trace_chunk c;
	if (!header_ok(s, off, &c))
		return 0;
	const unsigned char *p = src_at(s, off + sizeof(c), c.len);
	if (!p || (uint32_t)crc32(0L, p, c.len) != c.crc)
		return 0;
	return sizeof(c) + c.len;
}

/* The next offset after @from holding a whole chunk that passes its CRC,
 * or the end: one forward pass in windows, a CRC only for a known magic
 * with a length that fits, and only while the budget allows. */
static uint64_t resync(struct src *s, uint64_t from)
{
	enum { WIN = 64 * 1024 };
	unsigned char win[WIN + 3];
	uint64_t credited = from; /* bytes before it have earned their budget */

	for (uint64_t at = from; at < s->size; at += WIN) {
		size_t n = s->size - at < sizeof(win) ? (size_t)(s->size - at) : sizeof(win);
		const unsigned char *w = s->mem ? s->mem + at : win;
		if (!s->mem && !read_at(s->fd, win, n, at))
			return s->size;
		for (size_t i = 0; i + 3 < n && i < WIN; i++) {
			const unsigned char *t = memchr(w + i, 'T', (n < WIN ? n : WIN) - i);
			if (!t)
				break;
			i = (size_t)(t - w);
			struct pmon_trace_chunk c;
			if (i + 3 >= n || !known_magic((const char *)t) ||
			    !header_ok(s, at + i, &c))
				continue;
			s->crc_budget += RESYNC_CRC_PER_BYTE * (at + i - credited);
			credited = at + i;
			if (c.len > s->crc_budget)
				continue; /* unchecked: part of the damaged stretch */
			s->crc_budget -= c.len;
			if (chunk_ok(s, at + i))
				return at + i;
		}
	}
	return s->size;
}

static int decode_events(struct pmon_trace_reader *r, const unsigned char *p, size_t len,
			 uint64_t *dropped_by_tid_max)
{
	struct pmon_trace_chunk_events ce;
	if (len < sizeof(ce))
		return -EINVAL;
	memcpy(&ce, p, sizeof(ce));
	if (ce.nrec > (len - sizeof(ce)) / sizeof(struct pmon__trec))
		return -EINVAL;
	*dropped_by_tid_max = ce.dropped;
	const unsigned char *q = p + sizeof(ce);
	for (uint32_t i = 0; i < ce.nrec; i++) {
		struct pmon__trec t;
		memcpy(&t, q + (size_t)i * sizeof(t), sizeof(t));
		uint32_t kind = PMON__TR_KIND(t.word), ch = PMON__TR_CHAN(t.word);
		struct pmon_trace_event e = {
			.tick = t.tick, .tid = ce.tid, .channel = ch, .cpu = -1
		};
		switch (kind) {
		case PMON__TR_BEGIN:
			e.kind = PMON_TRACE_BEGIN_EV;
			break;
		case PMON__TR_END:
			e.kind = PMON_TRACE_END_EV;
			break;
		case PMON__TR_MARK:
			e.kind = PMON_TRACE_MARK_EV;
			break;
		case PMON__TR_COUNTER:
			e.kind = PMON_TRACE_COUNTER_EV;
			e.value = (int32_t)t.arg;
			break;
		case PMON__TR_COUNTER64: {
			struct pmon__trec v;
			if (i + 1 >= ce.nrec)
				return -EINVAL;
			memcpy(&v, q + (size_t)(i + 1) * sizeof(v), sizeof(v));
			if (PMON__TR_KIND(v.word) != PMON__TR_VALUE)
				return -EINVAL;
			e.kind = PMON_TRACE_COUNTER_EV;
			e.value = (int64_t)v.tick;
			i++;
			break;
		}
		default:
			continue; /* a later version's record: skipped */
		}
		if (!ch || ch > PMON_TRACE_MAX_CHANNELS)
			continue;
		if (ch > r->max_hook_channel)
			r->max_hook_channel = ch;
		e.seq = r->nev;
		int err = push(r, &e);
		if (err)
			return err;
	}
	return 0;
}

static int cmp_event(const void *a, const void *b)
{
	const struct pmon_trace_event *x = a, *y = b;
	if (x->ns != y->ns)
		return x->ns < y->ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq; /* equal times: file order */
}

/* The channel named @name among the kernel's (interned after the hooks'). */
static size_t name_hash(const char *name)
{
	uint64_t h = 14695981039346656037ull; /* FNV-1a */
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	return (size_t)(h ^ (h >> 29));
}

/* Channel @id into the kernel channels' index. Return: 0 or -ENOMEM. */
static int khash_add(struct pmon_trace_reader *r, uint32_t id)
{
	if (2 * (r->nkh + 1) > r->khcap) {
		size_t cap = r->khcap ? 2 * r->khcap : 64;
		uint32_t *t = calloc(cap, sizeof(*t));
		if (!t)
			return -ENOMEM;
		for (size_t i = 0; i < r->khcap; i++) {
			if (!r->khash[i])
				continue;
			size_t j = name_hash(r->chan[r->khash[i]]) & (cap - 1);
			while (t[j])
				j = (j + 1) & (cap - 1);
			t[j] = r->khash[i];
		}
		free(r->khash);
		r->khash = t;
		r->khcap = cap;
	}
	size_t j = name_hash(r->chan[id]) & (r->khcap - 1);
	while (r->khash[j])
		j = (j + 1) & (r->khcap - 1);
	r->khash[j] = id;
	r->nkh++;
	return 0;
}

static long kernel_channel(struct pmon_trace_reader *r, const char *name)
{
	if (r->khcap) {
		for (size_t j = name_hash(name) & (r->khcap - 1); r->khash[j];
		     j = (j + 1) & (r->khcap - 1))
			if (!strcmp(r->chan[r->khash[j]], name))
				return (long)r->khash[j];
	}
	size_t id = r->nchan + 1;
	if (id > UINT32_MAX || chan_room(r, id))
		return -ENOMEM;
	if (!(r->chan[id] = strdup(name)))
		return -ENOMEM;
	r->kern[id] = true;
	r->nchan = id;
	if (khash_add(r, (uint32_t)id))
		return -ENOMEM;
	return (long)id;
}

/* Softirq vectors (Linux include/linux/interrupt.h, softirq_to_name[]). */
static const char *const softirq_names[] = { "HI",	 "TIMER",   "NET_TX", "NET_RX",	 "BLOCK",
					     "IRQ_POLL", "TASKLET", "SCHED",  "HRTIMER", "RCU" };

/* A kernel record's channel name and event kind (docs/trace.md). */
static enum pmon_trace_kind kernel_name(const struct pmon__krec *k, char *name, size_t len)
{
	const char *s;
	switch (k->type) {
	case PMON__K_SWITCH_OUT:
		pmon__strlcpy(name, "sched_switch", len);
		return PMON_TRACE_MARK_EV;
	case PMON__K_WAKEUP:
		pmon__strlcpy(name, "sched_wakeup", len);
		return PMON_TRACE_MARK_EV;
	case PMON__K_OFFCPU_BEGIN:
	case PMON__K_OFFCPU_END:
		pmon__strlcpy(name, "off-cpu", len);
		return k->type == PMON__K_OFFCPU_BEGIN ? PMON_TRACE_BEGIN_EV : PMON_TRACE_END_EV;
	case PMON__K_SYS_ENTER:
	case PMON__K_SYS_EXIT:
		if ((s = pmon__syscall_name(k->a)))
			snprintf(name, len, "sys_%s", s);
		else
			snprintf(name, len, "sys_%lld", (long long)k->a);
		return k->type == PMON__K_SYS_ENTER ? PMON_TRACE_BEGIN_EV : PMON_TRACE_END_EV;
	case PMON__K_FAULT:
		pmon__strlcpy(name, "page_fault", len);
		return PMON_TRACE_MARK_EV;
	case PMON__K_IRQ_ENTRY:
	case PMON__K_IRQ_EXIT:
		snprintf(name, len, "irq_%lld", (long long)k->a);
		return k->type == PMON__K_IRQ_ENTRY ? PMON_TRACE_BEGIN_EV : PMON_TRACE_END_EV;
	case PMON__K_SOFTIRQ_ENTRY:
	case PMON__K_SOFTIRQ_EXIT:
		if (k->a >= 0 && (size_t)k->a < PMON_ARRAY_SIZE(softirq_names))
			snprintf(name, len, "softirq_%s", softirq_names[k->a]);
		else
			snprintf(name, len, "softirq_%lld", (long long)k->a);
		return k->type == PMON__K_SOFTIRQ_ENTRY ? PMON_TRACE_BEGIN_EV : PMON_TRACE_END_EV;
	case PMON__K_BLOCK_ISSUE:
		pmon__strlcpy(name, "block_rq_issue", len);
		return PMON_TRACE_MARK_EV;
	case PMON__K_BLOCK_COMPLETE:
		pmon__strlcpy(name, "block_rq_complete", len);
		return PMON_TRACE_MARK_EV;
	case PMON__K_KVM_EXIT:
		pmon__strlcpy(name, "kvm_exit", len);
		return PMON_TRACE_MARK_EV;
	case PMON__K_KVM_USER_EXIT:
		pmon__strlcpy(name, "kvm_userspace_exit", len);
		return PMON_TRACE_MARK_EV;
	default:
		return 0; /* a later version's record: skipped */
	}
}

static int decode_kernel(struct pmon_trace_reader *r, const unsigned char *p, size_t len)
{
	struct pmon_trace_chunk_kernel ck;
	if (len < sizeof(ck))
		return -EINVAL;
	memcpy(&ck, p, sizeof(ck));
	if (ck.nrec > (len - sizeof(ck)) / sizeof(struct pmon__krec))
		return -EINVAL;
	if (ck.lost > r->info.kernel_lost)
		r->info.kernel_lost = ck.lost;
	for (uint32_t i = 0; i < ck.nrec; i++) {
		struct pmon__krec k;
		char name[64];
		memcpy(&k, p + sizeof(ck) + (size_t)i * sizeof(k), sizeof(k));
		if (k.type == PMON__K_TASK || k.type == PMON__K_COMM) {
			struct task_rec t = { k.tid, k.type, k.a, k.b, k.mono_ns, 0 };
			int err = push_task(r, &t);
			if (err)
				return err;
			continue;
		}
		enum pmon_trace_kind kind = kernel_name(&k, name, sizeof(name));
		if (!kind)
			continue;
		long ch = kernel_channel(r, name);
		if (ch < 0)
			return (int)ch;
		struct pmon_trace_event e = {
			.tick = k.mono_ns,
			.tid = k.tid,
			.channel = (uint32_t)ch,
			.kind = kind,
			.value = k.type == PMON__K_SYS_EXIT ? k.b : k.a,
			.seq = r->nev,
			.flags = PMON_TRACE_EV_KERNEL,
			.cpu = k.cpu,
			.arg = k.type == PMON__K_SYS_EXIT ? k.a : k.b,
		};
		int err = push(r, &e);
		if (err)
			return err;
		r->info.kernel_events++;
	}
	return 0;
}

/* The time base of a TCLK chunk @c (NULL: none, CLOCK_MONOTONIC) into
 * @in, with the page's conversion in @tc; why not the perf clock, said
 * again from the cap bits by the same decision the writer made. */
static void time_base(struct pmon_trace_info *in, const struct pmon_trace_chunk_clock *c,
		      struct pmon_perf_tsc *tc)
{
	const char *why = NULL;

	in->time_base = PMON_TIMEBASE_MONO;
	in->kernel_align_ns = UINT32_MAX;
	if (!c)
		return;
	tc->cap_time = c->caps & PMON__CLK_CAP_TIME;
	tc->cap_time_zero = c->caps & PMON__CLK_CAP_TIME_ZERO;
	tc->cap_time_short = c->caps & PMON__CLK_CAP_TIME_SHORT;
	tc->mult = c->time_mult;
	tc->shift = c->time_shift;
	tc->zero = c->time_zero;
	tc->cycles = c->time_cycles;
	tc->mask = c->time_mask;
	enum pmon_timebase can = pmon_perf_tsc__timebase(tc, &why);
	if (c->base == PMON_TIMEBASE_PERF && can == PMON_TIMEBASE_PERF) {
		in->time_base = PMON_TIMEBASE_PERF;
		in->time_mult = tc->mult;
		in->time_shift = tc->shift;
	} else {
		pmon__strlcpy(in->time_base_why,
			      !(c->caps & PMON__CLK_PROBED)
				      ? "no perf event could be opened to read the perf mmap page"
				      : why ? why
					    : "the trace's writer chose it",
			      sizeof(in->time_base_why));
	}
	memcpy(in->clocksource, c->clocksource, sizeof(in->clocksource));
	in->clocksource[sizeof(in->clocksource) - 1] = '\0';
	in->kernel_align_ns = c->align_ns;
	memcpy(in->align_measured_with, c->measured_with, sizeof(in->align_measured_with));
	in->align_measured_with[sizeof(in->align_measured_with) - 1] = '\0';
}

/* Per-thread drop counts are running totals; keep the last of each. */
struct drop {
	int32_t tid;
	uint64_t n;
};

/* What the chunks say besides the events, gathered as they are read. */
struct scan {
	struct pmon_trace_chunk_end end;
	struct pmon_trace_chunk_clock clk;
	bool have_end, have_clk;
	struct drop *drops;
	size_t ndrops, capdrops;
	struct kchunk {
		uint64_t off;
		size_t len;
	} * kch;
	size_t nkch, capkch;
};

/* A TCHN chunk (@p, @len bytes): a channel's id and name. Return: 0 or -ENOMEM. */
static int read_channel(struct pmon_trace_reader *r, const unsigned char *p, size_t len)
{
	uint32_t hdr[2];

	if (len < sizeof(hdr))
		return 0;
	memcpy(hdr, p, sizeof(hdr));
	if (hdr[0] < 1 || hdr[0] > PMON_TRACE_MAX_CHANNELS || hdr[1] > len - sizeof(hdr))
		return 0;
	if (chan_room(r, hdr[0]))
		return -ENOMEM;
	if (!r->chan[hdr[0]]) {
		r->chan[hdr[0]] = strndup((const char *)p + sizeof(hdr), hdr[1]);
		if (!r->chan[hdr[0]])
			return -ENOMEM;
		if (hdr[0] > r->nchan)
			r->nchan = hdr[0];
	}
	return 0;
}

/* A TEVT chunk (@p, @len bytes; @n with its frame): a thread's events,
 * and its running total of drops, kept per thread in @s. Return: 0 or -ENOMEM. */
static int read_events(struct pmon_trace_reader *r, struct scan *s, const unsigned char *p,
		       size_t len, size_t n)
{
	uint64_t d = 0;
	int e = decode_events(r, p, len, &d);

	if (e == -ENOMEM)
		return e;
	if (e) {
		r->info.torn_chunks++; /* a valid CRC over nonsense */
		r->info.torn_bytes += n;
		return 0;
	}
	int32_t tid;
	memcpy(&tid, p, sizeof(tid));
	/* Each chunk's running total; the largest per thread kept when all
	 * are read (finish_scan()): a search per chunk was quadratic in threads. */
	if (PMON_GROW(&s->drops, &s->capdrops, s->ndrops + 1))
		return -ENOMEM;
	s->drops[s->ndrops++] = (struct drop){ tid, d };
	return 0;
}

static int cmp_drop(const void *a, const void *b)
{
	const struct drop *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->n < y->n ? -1 : x->n > y->n;
}

/* After every chunk is read: the drops summed, and the kernel's events
 * decoded on channels numbered after the hooks' ones. Return: 0 or -ENOMEM. */
static int finish_scan(struct pmon_trace_reader *r, struct src *src, struct scan *s)
{
	int err = 0;

	if (s->ndrops)
		qsort(s->drops, s->ndrops, sizeof(*s->drops), cmp_drop);
	for (size_t k = 0; k < s->ndrops; k++) /* the last, largest, of each thread */
		if (k + 1 == s->ndrops || s->drops[k + 1].tid != s->drops[k].tid)
			r->info.dropped += s->drops[k].n;
	free(s->drops);
	s->drops = NULL;
	/* Kernel channels after every id the hooks use, named or not. */
	if (s->nkch && r->max_hook_channel > r->nchan) {
		if (chan_room(r, r->max_hook_channel))
			err = -ENOMEM;
		else
			r->nchan = r->max_hook_channel;
	}
	for (size_t k = 0; !err && k < s->nkch; k++) {
		const unsigned char *p = src_at(src, s->kch[k].off, s->kch[k].len);
		int e = p ? decode_kernel(r, p, s->kch[k].len) : -EINVAL;
		if (e == -ENOMEM)
			err = e;
		else if (e) {
			r->info.torn_chunks++; /* a valid CRC over nonsense */
			r->info.torn_bytes += s->kch[k].len;
		}
	}
	free(s->kch);
	s->kch = NULL;
	return err;
}

/* ---- threads and processes ---------------------------------------------- */

static int cmp_task(const void *a, const void *b)
{
	const struct task_rec *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_thread(const void *a, const void *b)
{
	const struct pmon__trace_thread *x = a, *y = b;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

const struct pmon__trace_thread *pmon__trace_thread(const struct pmon_trace_reader *r, int32_t tid)
{
	struct pmon__trace_thread key = { .tid = tid };
	const struct pmon__trace_thread *t =
		r->nthr ? bsearch(&key, r->thr, r->nthr, sizeof(*r->thr), cmp_thread) : NULL;
	return t ? t : &r->dflt;
}

const char *pmon__trace_process_name(const struct pmon_trace_reader *r, int32_t pid)
{
	const struct pmon__trace_thread *t = pmon__trace_thread(r, pid);
	if (t->tid == pid && t->name[0])
		return t->name;
	return pid == r->info.pid ? r->info.command : "";
}

static int cmp_exec(const void *a, const void *b)
{
	const struct exec_at *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->ns < y->ns ? -1 : x->ns > y->ns;
}

/* The first exec of process @pid at or after @ns, or UINT64_MAX. */
static uint64_t exec_after(const struct pmon_trace_reader *r, int32_t pid, uint64_t ns)
{
	size_t lo = 0, hi = r->nexec;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct exec_at *x = &r->exec[mid];
		if (x->pid < pid || (x->pid == pid && x->ns < ns))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->nexec && r->exec[lo].pid == pid ? r->exec[lo].ns : UINT64_MAX;
}

/* One entry per thread from the task records, in the file's order per
 * thread: its last process and name, its exit; a forked child not named
 * since has its parent's name (fork copies it). O(n log n) in the records. */
static int build_threads(struct pmon_trace_reader *r, uint64_t origin)
{
	int32_t *parent = NULL;

	r->dflt = (struct pmon__trace_thread){ .pid = r->info.pid, .exit_ns = UINT64_MAX };
	if (!r->ntr)
		return 0;
	qsort(r->tr, r->ntr, sizeof(*r->tr), cmp_task);
	r->thr = calloc(r->ntr, sizeof(*r->thr));
	parent = calloc(r->ntr, sizeof(*parent));
	if (!r->thr || !parent) {
		free(parent);
		return -ENOMEM;
	}
	for (size_t i = 0; i < r->ntr; i++) {
		const struct task_rec *k = &r->tr[i];
		if (!r->nthr || r->thr[r->nthr - 1].tid != k->tid)
			r->thr[r->nthr++] =
				(struct pmon__trace_thread){ .tid = k->tid, .exit_ns = UINT64_MAX };
		struct pmon__trace_thread *t = &r->thr[r->nthr - 1];
		char name[17] = { 0 };
		memcpy(name, &k->a, 8);
		memcpy(name + 8, &k->b, 8);
		t->flags |= PMON__THREAD_KNOWN;
		switch (k->type) {
		case PMON__K_TASK:
			if (k->a > 0 && k->a <= INT32_MAX)
				t->pid = (int32_t)k->a;
			if ((k->b & 0xff) == PMON__TASK_EXIT)
				t->exit_ns = k->ns > origin ? k->ns - origin : 0;
			if ((k->b & 0xff) == PMON__TASK_FORK)
				parent[r->nthr - 1] = (int32_t)(k->b >> 8);
			if ((k->b & 0xff) == PMON__TASK_EXEC && k->a > 0 && k->a <= INT32_MAX) {
				if (PMON_GROW(&r->exec, &r->capexec, r->nexec + 1)) {
					free(parent);
					return -ENOMEM;
				}
				r->exec[r->nexec++] =
					(struct exec_at){ (int32_t)k->a,
							  k->ns > origin ? k->ns - origin : 0 };
			}
			break;
		case PMON__K_COMM:
			memcpy(t->name, name, sizeof(t->name));
			break;
		case TASK_REC_THREAD: /* the hooks' name, where the kernel gave none */
			if (!t->name[0])
				memcpy(t->name, name, sizeof(t->name));
			t->flags |= (uint32_t)k->ns & PMON__THREAD_WRITER;
			break;
		}
	}
	for (size_t i = 0; i < r->nthr; i++) {
		struct pmon__trace_thread *t = &r->thr[i];
		t->name[sizeof(t->name) - 1] = '\0';
		if (!t->pid)
			t->pid = r->info.pid;
		if (!t->name[0] && parent[i])
			memcpy(t->name, pmon__trace_thread(r, parent[i])->name, sizeof(t->name));
	}
	free(parent);
	if (r->nexec)
		qsort(r->exec, r->nexec, sizeof(*r->exec), cmp_exec);
	free(r->tr);
	r->tr = NULL;
	r->ntr = r->captr = 0;
	return 0;
}

/* libpmon's own writer thread is not the program's: its kernel events
 * (the futex it waits on, the write() of each chunk) are left out. */
static void drop_writer(struct pmon_trace_reader *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->nev; i++) {
		const struct pmon_trace_event *e = &r->ev[i];
		if ((e->flags & PMON_TRACE_EV_KERNEL) &&
		    (pmon__trace_thread(r, e->tid)->flags & PMON__THREAD_WRITER)) {
			r->info.kernel_events--;
			continue;
		}
		r->ev[n++] = *e;
	}
	r->nev = n;
}

static bool is_exec(const char *name)
{
	return name && (!strcmp(name, "sys_execve") || !strcmp(name, "sys_execveat"));
}

/* A system call that never returns: its thread ends (or becomes the new
 * image) inside it. */
static bool never_returns(const char *name)
{
	return name &&
		(!strcmp(name, "sys_exit") || !strcmp(name, "sys_exit_group") || is_exec(name));
}

/* Where the old image's execve begun at @b ends: its process's next exec
 * (the new image starts there; its return, when seen, is the new image's),
 * or UINT64_MAX: none seen, or @b is no execve. */
static uint64_t exec_end(const struct pmon_trace_reader *r, const struct pmon_trace_event *b)
{
	if (!r->nexec || !is_exec(pmon_trace_reader__channel(r, b->channel)))
		return UINT64_MAX;
	return exec_after(r, pmon__trace_thread(r, b->tid)->pid, b->ns);
}

/* A copy of begin @b as its end at @ns, into @add. */
static int add_end(struct pmon_trace_event **add, size_t *nadd, size_t *cadd,
		   const struct pmon_trace_event *b, uint64_t ns, uint64_t seq)
{
	if (PMON_GROW(add, cadd, *nadd + 1))
		return -ENOMEM;
	(*add)[*nadd] = *b;
	(*add)[*nadd].kind = PMON_TRACE_END_EV;
	(*add)[*nadd].ns = (*add)[*nadd].tick = ns;
	(*add)[*nadd].seq = seq;
	(*nadd)++;
	return 0;
}

static int cmp_span(const void *a, const void *b, void *ctx)
{
	const struct pmon_trace_event *ev = ctx, *x = &ev[*(const size_t *)a],
				      *y = &ev[*(const size_t *)b];
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->channel != y->channel)
		return x->channel < y->channel ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

/* The kernel's spans as they happened (the hooks' are the program's own
 * and stay as written): an execve's ends at its process's exec where that
 * was seen (the old image's call ends there: its return, when seen, is
 * the new image's, an instant); a begin never ended is ended at its
 * thread's exit where that was seen, else one that never returns (exit, exit_group, an
 * execve whose end was not seen) becomes an instant; an end whose begin
 * came before the trace (a command's execve, a process attached in a
 * call) is an instant too. Viewers then draw no endless bar. */
static int close_spans(struct pmon_trace_reader *r)
{
	size_t *ix = NULL, nix = 0, cix = 0, *stack = NULL, nst = 0, cst = 0;
	struct pmon_trace_event *add = NULL;
	size_t nadd = 0, cadd = 0;
	int err = -ENOMEM;

	for (size_t i = 0; i < r->nev; i++) {
		const struct pmon_trace_event *e = &r->ev[i];
		if (!(e->flags & PMON_TRACE_EV_KERNEL) ||
		    (e->kind != PMON_TRACE_BEGIN_EV && e->kind != PMON_TRACE_END_EV))
			continue;
		if (PMON_GROW(&ix, &cix, nix + 1))
			goto out;
		ix[nix++] = i;
	}
	if (nix)
		qsort_r(ix, nix, sizeof(*ix), cmp_span, r->ev);
	for (size_t j = 0; j <= nix; j++) {
		struct pmon_trace_event *e = j < nix ? &r->ev[ix[j]] : NULL;
		struct pmon_trace_event *prev = j ? &r->ev[ix[j - 1]] : NULL;
		if (prev && (!e || e->tid != prev->tid || e->channel != prev->channel)) {
			/* The group of @prev ends: what is still open. */
			uint64_t exit_ns = pmon__trace_thread(r, prev->tid)->exit_ns;
			for (size_t k = 0; k < nst; k++) {
				struct pmon_trace_event *b = &r->ev[stack[k]];
				uint64_t x = exec_end(r, b);
				if (x == UINT64_MAX && exit_ns != UINT64_MAX && exit_ns >= b->ns)
					x = exit_ns;
				if (x != UINT64_MAX) {
					if (add_end(&add, &nadd, &cadd, b, x, r->nev + nadd))
						goto out;
				} else if (never_returns(
						   pmon_trace_reader__channel(r, b->channel))) {
					b->kind = PMON_TRACE_MARK_EV;
				}
			}
			nst = 0;
		}
		if (!e)
			break;
		if (e->kind == PMON_TRACE_BEGIN_EV) {
			if (PMON_GROW(&stack, &cst, nst + 1))
				goto out;
			stack[nst++] = ix[j];
		} else if (nst) {
			struct pmon_trace_event *b = &r->ev[stack[--nst]];
			uint64_t x = exec_end(r, b);
			if (x <= e->ns) { /* ended at the exec; @e the new image's return */
				if (add_end(&add, &nadd, &cadd, b, x, r->nev + nadd))
					goto out;
				e->kind = PMON_TRACE_MARK_EV;
			}
		} else {
			e->kind = PMON_TRACE_MARK_EV;
		}
	}
	err = 0;
	for (size_t k = 0; k < nadd && !err; k++) /* kernel events of the trace too */
		if (!(err = push(r, &add[k])))
			r->info.kernel_events++;
	if (!err && nadd)
		qsort(r->ev, r->nev, sizeof(*r->ev), cmp_event);
out:
	free(ix);
	free(stack);
	free(add);
	return err;
}

/* The tick rate and one time base for every event (see below). */
static int set_times(struct pmon_trace_reader *r, const struct pmon_trace_disk_header *hp,
		     const struct scan *s, const char *path)
{
	const struct pmon_trace_disk_header h = *hp;

	/* The tick rate: the two clock pairs where the trace was stopped and ran
	 * long enough, else the calibration at start. */
	r->info.complete = s->have_end;
	uint64_t hz = h.ticks_per_sec, bracket = h.bracket0;
	if (s->have_end) {
		if (s->end.dropped > r->info.dropped)
			r->info.dropped = s->end.dropped;
		if (!(h.flags & PMON_TRACE_RATE_GIVEN) &&
		    s->end.mono1_ns > h.mono0_ns + 10000000u && s->end.tick1 > h.tick0)
			hz = (uint64_t)((unsigned __int128)(s->end.tick1 - h.tick0) * 1000000000u /
					(s->end.mono1_ns - h.mono0_ns));
		if (s->end.bracket1 > bracket)
			bracket = s->end.bracket1;
	}
	if (!hz)
		return pmon__err(-EINVAL, "'%s': no tick rate (neither calibrated nor stopped)",
				 path);
	r->info.ticks_per_sec = hz;
	r->info.align_err_ns = (uint32_t)((unsigned __int128)bracket * 1000000000u / hz / 2 + 1);
	/* One time base: the kernel's events as stamped, on the base the TCLK
	 * chunk names (CLOCK_MONOTONIC without one: a version-1 file); the
	 * hooks' ticks through the perf mmap page's conversion on the perf
	 * clock (not a program's own clock: PMON_TRACE_RATE_GIVEN), else
	 * through the clock pairs. The trace starts at the earlier of the
	 * first pair and the first kernel event. */
	struct pmon_perf_tsc tc = { 0 };
	time_base(&r->info, s->have_clk ? &s->clk : NULL, &tc);
	bool via_page =
		r->info.time_base == PMON_TIMEBASE_PERF && !(h.flags & PMON_TRACE_RATE_GIVEN);
	uint64_t origin = via_page ? pmon_perf_tsc__to_ns(&tc, h.tick0) : h.mono0_ns;
	for (size_t i = 0; i < r->nev; i++) {
		struct pmon_trace_event *e = &r->ev[i];
		if (e->flags & PMON_TRACE_EV_KERNEL) {
			e->ns = e->tick;
		} else if (via_page) {
			e->ns = pmon_perf_tsc__to_ns(&tc, e->tick);
		} else {
			unsigned __int128 d = e->tick > r->tick0
				? (unsigned __int128)(e->tick - r->tick0) * 1000000000u / hz
				: 0;
			d += h.mono0_ns;
			e->ns = d > UINT64_MAX ? UINT64_MAX : (uint64_t)d;
		}
		if (e->ns < origin)
			origin = e->ns;
	}
	for (size_t i = 0; i < r->nev; i++)
		r->ev[i].ns -= origin;
	r->info.mono_start_ns = origin;
	r->snap_trace_ns = r->info.time_base == PMON_TIMEBASE_PERF
		? pmon_perf_tsc__to_ns(&tc, r->snap.tick)
		: r->snap.mono_ns;
	int err = build_threads(r, origin);
	if (!err)
		drop_writer(r);
	if (!err && r->nev)
		qsort(r->ev, r->nev, sizeof(*r->ev), cmp_event);
	if (!err)
		err = close_spans(r);
	return err;
}

static int parse(struct pmon_trace_reader *r, struct src *src, const char *path)
{
	struct pmon_trace_disk_header h;
	struct scan s = { 0 };
	int err = 0;
	uint64_t size = src->size;
	const unsigned char *hp = src_at(src, 0, size < sizeof(h) ? (size_t)size : sizeof(h));

	if (!hp || size < 8 || memcmp(hp, PMON_TRACE_MAGIC, 8))
		return pmon__err(-EINVAL, "'%s' is not a pmon trace (no %s header)", path,
				 PMON_TRACE_MAGIC);
	if (size < sizeof(h))
		return pmon__err(-EINVAL, "'%s': the header is cut short (%llu bytes)", path,
				 (unsigned long long)size);
	memcpy(&h, hp, sizeof(h));
	if (h.version < PMON_TRACE_VERSION_MIN || h.version > PMON_TRACE_VERSION ||
	    h.header_size < sizeof(h) || h.header_size > size)
		return pmon__err(-EINVAL,
				 "'%s': trace version %u (header %u bytes) is not one pmon reads",
				 path, h.version, h.header_size);
	r->info.sz = sizeof(r->info);
	r->info.pid = h.pid;
	memcpy(r->info.command, h.command, sizeof(r->info.command));
	r->info.command[sizeof(r->info.command) - 1] = '\0';
	r->info.mono_start_ns = h.mono0_ns;
	r->tick0 = h.tick0;
	const unsigned char *sp = h.header_size >= sizeof(h) + sizeof(r->snap)
		? src_at(src, sizeof(h), sizeof(r->snap))
		: NULL;
	if (sp) {
		memcpy(&r->snap, sp, sizeof(r->snap));
		r->have_snap = true;
	}

	src->crc_budget = RESYNC_CRC_FIRST;
	uint64_t off = h.header_size;
	while (off < size) {
		size_t n = chunk_ok(src, off);
		if (!n) {
			/* Damaged or torn: find the next valid chunk. */
			uint64_t to = resync(src, off + 1);
			r->info.torn_chunks++;
			r->info.torn_bytes += to - off;
			off = to;
			continue;
		}
		struct pmon_trace_chunk c;
		const unsigned char *p = src_at(src, off, n); /* read again: in the buffer */
		if (!p) { /* cut short since it was checked: the rest is lost */
			r->info.torn_chunks++;
			r->info.torn_bytes += size - off;
			break;
		}
		memcpy(&c, p, sizeof(c));
		p += sizeof(c);
		r->info.chunks++;
		if (!memcmp(c.magic, "TCHN", 4)) {
			if ((err = read_channel(r, p, c.len)))
				break;
		} else if (!memcmp(c.magic, "TEVT", 4)) {
			if ((err = read_events(r, &s, p, c.len, n)))
				break;
		} else if (!memcmp(c.magic, "TKEV", 4)) {
			/* After the loop: kernel channels are numbered after the
			 * hooks' ones, wherever the chunks lie. */
			if (PMON_GROW(&s.kch, &s.capkch, s.nkch + 1)) {
				err = -ENOMEM;
				break;
			}
			s.kch[s.nkch++] = (struct kchunk){ off + sizeof(c), c.len };
		} else if (!memcmp(c.magic, "TTHR", 4)) {
			struct pmon_trace_chunk_thread th;
			if (c.len >= sizeof(th)) {
				memcpy(&th, p, sizeof(th));
				struct task_rec t = { th.tid, TASK_REC_THREAD, 0, 0, th.flags, 0 };
				memcpy(&t.a, th.name, 8);
				memcpy(&t.b, th.name + 8, 8);
				if ((err = push_task(r, &t)))
					break;
			}
		} else if (!memcmp(c.magic, "TCLK", 4)) {
			if (c.len >= sizeof(s.clk)) {
				memcpy(&s.clk, p, sizeof(s.clk));
				s.have_clk = true;
			}
		} else if (c.len >= sizeof(s.end)) {
			memcpy(&s.end, p, sizeof(s.end));
			s.have_end = true;
		}
		off += n;
	}
	if (!err)
		err = finish_scan(r, src, &s);
	free(s.drops);
	free(s.kch);
	if (err)
		return err;

	return set_times(r, &h, &s, path);
}

struct pmon_trace_reader *pmon_trace_reader__open(const char *path)
{
	struct pmon_trace_reader *r = calloc(1, sizeof(*r));
	struct src src = { .fd = -1 };
	struct stat st;
	int err = 0;

	if (!r) {
		errno = ENOMEM;
		return NULL;
	}
	/* The one safe open of an input (a FIFO or device never blocks), which
	 * says what a directory, a recording or a perf.data is (#14.11). */
	int fd = pmon__open_format(path, PMON__FILE_TRACE);
	if (fd == -ENOENT || fd == -EACCES || fd == -ELOOP) {
		err = pmon__err(fd, "cannot read trace '%s': %s", path, strerror(-fd));
		goto fail;
	}
	if (fd < 0) {
		err = fd;
		goto fail;
	}
	src.fd = fd;
	if (fstat(fd, &st)) {
		err = pmon__err(-errno, "cannot read trace '%s': %s", path, strerror(errno));
		goto fail;
	}
	src.size = (uint64_t)st.st_size;
	err = parse(r, &src, path);
	if (err)
		goto fail;
	close(fd);
	free(src.buf);
	return r;
fail:
	if (src.fd >= 0)
		close(src.fd);
	free(src.buf);
	pmon_trace_reader__free(r);
	errno = -err;
	return NULL;
}

struct pmon_trace_reader *pmon_trace_reader__open_mem(const void *buf, size_t size,
						      const char *name)
{
	struct pmon_trace_reader *r = calloc(1, sizeof(*r));
	struct src src = { .mem = buf, .fd = -1, .size = size };
	if (!r) {
		errno = ENOMEM;
		return NULL;
	}
	int err = parse(r, &src, name ? name : "(memory)");
	if (err) {
		pmon_trace_reader__free(r);
		errno = -err;
		return NULL;
	}
	return r;
}

void pmon_trace_reader__free(struct pmon_trace_reader *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->chancap; i++)
		free(r->chan[i]);
	free(r->chan);
	free(r->kern);
	free(r->khash);
	free(r->ev);
	free(r->tr);
	free(r->thr);
	free(r->exec);
	free(r);
}

bool pmon__trace_snapshot(const struct pmon_trace_reader *r, uint64_t *trace_ns, uint64_t *mono_ns,
			  uint64_t *boot_ns)
{
	if (!r->have_snap)
		return false;
	*trace_ns = r->snap_trace_ns;
	*mono_ns = r->snap.mono_ns;
	*boot_ns = r->snap.boot_ns;
	return true;
}

const struct pmon_trace_info *pmon_trace_reader__info(const struct pmon_trace_reader *r)
{
	return &r->info;
}

size_t pmon_trace_reader__nevents(const struct pmon_trace_reader *r)
{
	return r->nev;
}

const struct pmon_trace_event *pmon_trace_reader__event(const struct pmon_trace_reader *r, size_t i)
{
	return i < r->nev ? &r->ev[i] : NULL;
}

size_t pmon_trace_reader__nchannels(const struct pmon_trace_reader *r)
{
	return r->nchan;
}

const char *pmon_trace_reader__channel(const struct pmon_trace_reader *r, uint32_t id)
{
	return id >= 1 && id < r->chancap ? r->chan[id] : NULL;
}

bool pmon_trace_reader__channel_kernel(const struct pmon_trace_reader *r, uint32_t id)
{
	return id >= 1 && id < r->chancap && r->kern[id];
}

/* ---- views ---------------------------------------------------------------- */

/* Open begins of one (thread, channel): a stack, for nested spans. */
struct open_span {
	int32_t tid;
	uint32_t channel;
	uint64_t *ns;
	size_t n, cap;
};

/* The open spans by (thread, channel): open addressing over indexes + 1.
 * A scan of them per event was quadratic (200,000 syscalls entered and
 * never left are 200,000 open spans). */
struct open_set {
	struct open_span *v;
	size_t n, cap;
	uint32_t *idx;
	size_t icap;
};

static size_t open_hash(int32_t tid, uint32_t ch, size_t cap)
{
	uint64_t h = ((uint64_t)(uint32_t)tid << 32 | ch) * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 20) & (cap - 1);
}

static struct open_span *find_open(struct open_set *o, int32_t tid, uint32_t ch)
{
	size_t j;

	if (o->icap) {
		for (j = open_hash(tid, ch, o->icap); o->idx[j]; j = (j + 1) & (o->icap - 1)) {
			struct open_span *s = &o->v[o->idx[j] - 1];
			if (s->tid == tid && s->channel == ch)
				return s;
		}
	}
	if (o->n >= UINT32_MAX - 1 || PMON_GROW(&o->v, &o->cap, o->n + 1))
		return NULL;
	if (2 * (o->n + 1) > o->icap) {
		size_t cap = o->icap ? 2 * o->icap : 64;
		uint32_t *t = calloc(cap, sizeof(*t));
		if (!t)
			return NULL;
		for (size_t i = 0; i < o->n; i++) {
			for (j = open_hash(o->v[i].tid, o->v[i].channel, cap); t[j];)
				j = (j + 1) & (cap - 1);
			t[j] = (uint32_t)i + 1;
		}
		free(o->idx);
		o->idx = t;
		o->icap = cap;
	}
	for (j = open_hash(tid, ch, o->icap); o->idx[j];)
		j = (j + 1) & (o->icap - 1);
	o->idx[j] = (uint32_t)o->n + 1;
	o->v[o->n] = (struct open_span){ .tid = tid, .channel = ch };
	return &o->v[o->n++];
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

long pmon_trace_summarize(const struct pmon_trace_reader *r, uint64_t from_ns, uint64_t to_ns,
			  struct pmon_trace_chan_stats *out)
{
	size_t nch = r->nchan;
	struct open_set os = { 0 };
	uint64_t **dur = calloc(nch + 1, sizeof(*dur));
	size_t *ndur = calloc(nch + 1, sizeof(*ndur)), *cdur = calloc(nch + 1, sizeof(*cdur));
	struct pmon_trace_chan_stats *st = calloc(nch + 1, sizeof(*st));
	long rows = -ENOMEM;

	if (!dur || !ndur || !cdur || !st)
		goto out;
	for (size_t i = 1; i <= nch; i++) {
		st[i].channel = (uint32_t)i;
		st[i].min_ns = UINT64_MAX;
		st[i].counter_min = INT64_MAX;
		st[i].counter_max = INT64_MIN;
	}
	for (size_t i = 0; i < r->nev; i++) {
		const struct pmon_trace_event *e = &r->ev[i];
		if (e->channel > nch || e->ns < from_ns || e->ns >= to_ns)
			continue;
		struct pmon_trace_chan_stats *s = &st[e->channel];
		struct open_span *o;
		switch (e->kind) {
		case PMON_TRACE_BEGIN_EV:
			if (!(o = find_open(&os, e->tid, e->channel)))
				goto out;
			if (PMON_GROW(&o->ns, &o->cap, o->n + 1))
				goto out;
			o->ns[o->n++] = e->ns;
			break;
		case PMON_TRACE_END_EV: {
			if (!(o = find_open(&os, e->tid, e->channel)))
				goto out;
			if (!o->n) {
				s->unmatched++;
				break;
			}
			uint64_t d = e->ns - o->ns[--o->n];
			if (PMON_GROW(&dur[e->channel], &cdur[e->channel], ndur[e->channel] + 1))
				goto out;
			dur[e->channel][ndur[e->channel]++] = d;
			s->spans++;
			s->total_ns += d;
			break;
		}
		case PMON_TRACE_MARK_EV:
			s->marks++;
			break;
		case PMON_TRACE_COUNTER_EV:
			s->counters++;
			if (e->value < s->counter_min)
				s->counter_min = e->value;
			if (e->value > s->counter_max)
				s->counter_max = e->value;
			s->counter_last = e->value;
			break;
		}
	}
	for (size_t i = 0; i < os.n; i++)
		st[os.v[i].channel].unmatched += os.v[i].n;
	rows = 0;
	for (size_t c = 1; c <= nch; c++) {
		struct pmon_trace_chan_stats *s = &st[c];
		if (!s->spans && !s->marks && !s->counters && !s->unmatched)
			continue;
		if (ndur[c]) {
			/* Nearest-rank percentiles over the exact durations. */
			qsort(dur[c], ndur[c], sizeof(uint64_t), cmp_u64);
			s->min_ns = dur[c][0];
			s->max_ns = dur[c][ndur[c] - 1];
			s->median_ns = dur[c][(ndur[c] - 1) / 2];
			size_t k = (ndur[c] * 99 + 99) / 100;
			s->p99_ns = dur[c][(k ? k : 1) - 1];
		} else {
			s->min_ns = 0;
		}
		if (!s->counters)
			s->counter_min = s->counter_max = 0;
		out[rows++] = *s;
	}
out:
	for (size_t i = 0; i < os.n; i++)
		free(os.v[i].ns);
	free(os.v);
	free(os.idx);
	if (dur)
		for (size_t c = 0; c <= nch; c++)
			free(dur[c]);
	free(dur);
	free(ndur);
	free(cdur);
	free(st);
	return rows;
}

static int json_string(FILE *f, const char *s)
{
	pmon__fputs_json(f, s);
	return ferror(f) ? -EIO : 0;
}

#define CHROME_KERNEL_TID 1000000000LL /* above any Linux tid (PID_MAX_LIMIT 2^22) */

int pmon__cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return x < y ? -1 : x > y;
}

/* The distinct tids of the events, sorted. Return: their count, or -ENOMEM. */
long pmon__trace_tids(const struct pmon_trace_reader *r, int32_t **out)
{
	int32_t *t = malloc((r->nev ? r->nev : 1) * sizeof(*t));
	size_t n = 0;
	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < r->nev; i++)
		t[i] = r->ev[i].tid;
	qsort(t, r->nev, sizeof(*t), pmon__cmp_i32);
	for (size_t i = 0; i < r->nev; i++)
		if (!n || t[n - 1] != t[i])
			t[n++] = t[i];
	*out = t;
	return (long)n;
}

/* Chrome's metadata events: every process and thread (and thread's
 * kernel lane) named, so each lane says whose it is. */
static void chrome_names(const struct pmon_trace_reader *r, FILE *f, const int32_t *tids, size_t n,
			 bool *first)
{
	int32_t *pids = malloc((n ? n : 1) * sizeof(*pids));
	size_t np = 0;
	for (size_t i = 0; pids && i < n; i++)
		pids[np++] = pmon__trace_thread(r, tids[i])->pid;
	if (pids)
		qsort(pids, np, sizeof(*pids), pmon__cmp_i32);
	for (size_t i = 0; pids && i < np; i++) {
		if (i && pids[i] == pids[i - 1])
			continue;
		fprintf(f,
			"%s{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{"
			"\"name\":",
			*first ? "" : ",\n", (int)pids[i], (int)pids[i]);
		json_string(f, pmon__trace_process_name(r, pids[i]));
		fputs("}}", f);
		*first = false;
	}
	free(pids);
	/* Which lanes there are: a thread's hooks', its kernel's (bit 1, 2). */
	uint8_t *lanes = calloc(n ? n : 1, 1);
	for (size_t i = 0; lanes && i < r->nev; i++) {
		const int32_t *k = bsearch(&r->ev[i].tid, tids, n, sizeof(*tids), pmon__cmp_i32);
		if (k)
			lanes[k - tids] |= r->ev[i].flags & PMON_TRACE_EV_KERNEL ? 2 : 1;
	}
	for (size_t i = 0; i < n; i++) {
		const struct pmon__trace_thread *t = pmon__trace_thread(r, tids[i]);
		char name[64];
		for (int kern = 0; kern < 2; kern++) {
			if (lanes && !(lanes[i] & (1 << kern)))
				continue;
			snprintf(name, sizeof(name), "%s%s%d%s", t->name, t->name[0] ? " " : "",
				 (int)tids[i], kern ? " kernel" : "");
			fprintf(f,
				"%s{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%lld,"
				"\"args\":{\"name\":",
				*first ? "" : ",\n", (int)t->pid,
				(long long)tids[i] + (kern ? CHROME_KERNEL_TID : 0));
			json_string(f, name);
			fputs("}}", f);
			*first = false;
		}
	}
	free(lanes);
}

/* One event; a kernel span's end is followed by an instant with its args.
 * Speedscope (src/import/chrome.ts: frameInfoForEvent) names a frame by
 * its name plus the JSON of its args and reads only B, E and X: args on a
 * span's begin or end would name a frame per call (or warn of an end whose
 * differ from its begin's), while an instant ("i") is skipped there and
 * keeps the args for Perfetto and chrome://tracing (issue #28.7). */
static void chrome_event(const struct pmon_trace_reader *r, FILE *f,
			 const struct pmon_trace_event *e, const char *ph)
{
	bool kern = e->flags & PMON_TRACE_EV_KERNEL;
	long long tid = (long long)e->tid + (kern ? CHROME_KERNEL_TID : 0);
	int pid = (int)pmon__trace_thread(r, e->tid)->pid;
	for (; *ph; ph++) {
		fputs("{\"name\":", f);
		json_string(f, pmon_trace_reader__channel(r, e->channel));
		fprintf(f, ",\"ph\":\"%c\",\"ts\":%llu.%03llu,\"pid\":%d,\"tid\":%lld", *ph,
			(unsigned long long)(e->ns / 1000), (unsigned long long)(e->ns % 1000), pid,
			tid);
		if (*ph == 'i')
			fputs(",\"s\":\"t\"", f);
		if (kern)
			fputs(",\"cat\":\"kernel\"", f);
		if (e->kind == PMON_TRACE_COUNTER_EV)
			fprintf(f, ",\"args\":{\"value\":%lld}", (long long)e->value);
		else if (kern && *ph == 'i')
			fprintf(f, ",\"args\":{\"value\":%lld,\"arg\":%lld,\"cpu\":%d}",
				(long long)e->value, (long long)e->arg, (int)e->cpu);
		fputs(ph[1] ? "},\n" : "}", f);
	}
}

int pmon_trace_write_chrome(const struct pmon_trace_reader *r, FILE *f)
{
	int32_t *tids = NULL;
	long ntids = pmon__trace_tids(r, &tids);
	if (ntids < 0)
		return (int)ntids;
	locale_t prev = pmon__c_locale_enter();

	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"command\":", f);
	json_string(f, r->info.command);
	fprintf(f, ",\"align_err_ns\":%u,\"time_base\":\"%s\",\"kernel_align_ns\":",
		r->info.align_err_ns, r->info.time_base == PMON_TIMEBASE_PERF ? "perf" : "mono");
	/* The alignment measured between the kernel's stamps and the hooks'
	 * (the TCLK chunk), as the table's header states it; null: none. */
	if (r->info.kernel_align_ns == UINT32_MAX)
		fputs("null", f);
	else
		fprintf(f, "%u", r->info.kernel_align_ns);
	fprintf(f, ",\"dropped\":%llu},\"traceEvents\":[\n", (unsigned long long)r->info.dropped);
	/* A thread's kernel events go on a lane of their own (tid +
	 * CHROME_KERNEL_TID, named "NAME TID kernel"): the viewers want the
	 * spans of one tid nested, and the kernel's and the hooks' are stamped
	 * by different clocks aligned only to within align_err_ns. Each event
	 * carries its own thread's process. */
	bool first = true;
	chrome_names(r, f, tids, (size_t)ntids, &first);
	for (size_t i = 0; i < r->nev; i++) {
		const struct pmon_trace_event *e = &r->ev[i];
		static const char *const ph[] = { "", "B", "E", "i", "C" };
		bool kern_end = e->flags & PMON_TRACE_EV_KERNEL && e->kind == PMON_TRACE_END_EV;
		if (!first)
			fputs(",\n", f);
		first = false;
		chrome_event(r, f, e, kern_end ? "Ei" : ph[e->kind]);
	}
	free(tids);
	fputs("\n]}\n", f);
	pmon__c_locale_leave(prev);
	/* flushed, so that a write's failure and its reason (ENOSPC) come back
	 * here; EIO where the stream kept no reason */
	errno = 0;
	if (fflush(f) || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}

void pmon_trace_ticks_row(const struct pmon_trace_reader *r, uint32_t channel, uint64_t from_ns,
			  uint64_t to_ns, char *row, size_t width)
{
	memset(row, '.', width);
	row[width] = '\0';
	if (to_ns <= from_ns || !width)
		return;
	uint64_t span = to_ns - from_ns;
	int depth = 0; /* spans open on any thread, for the channel */
	uint64_t since = from_ns;
#define CELL(ns) ((size_t)((unsigned __int128)((ns)-from_ns) * width / span))
	for (size_t i = 0; i < r->nev; i++) {
		const struct pmon_trace_event *e = &r->ev[i];
		if (e->channel != channel)
			continue;
		if (e->ns >= to_ns)
			break;
		uint64_t t = e->ns < from_ns ? from_ns : e->ns;
		if (e->kind == PMON_TRACE_BEGIN_EV) {
			if (depth++ == 0)
				since = t;
		} else if (e->kind == PMON_TRACE_END_EV && depth > 0) {
			if (--depth == 0 && e->ns >= from_ns)
				for (size_t c = CELL(since); c <= CELL(t) && c < width; c++)
					row[c] = '#';
		} else if ((e->kind == PMON_TRACE_MARK_EV || e->kind == PMON_TRACE_COUNTER_EV) &&
			   e->ns >= from_ns) {
			row[CELL(t)] = '|';
		}
	}
	if (depth > 0)
		for (size_t c = CELL(since); c < width; c++)
			row[c] = '#';
#undef CELL
}
