// SPDX-License-Identifier: MIT
/*
 * Trace hooks (include/pmon/trace.h): per-thread single-producer /
 * single-consumer rings of 16-byte records, filled by the hooks without a
 * lock or a system call, drained by one writer thread into the trace file
 * (lib/trace/tracefile.h) every few milliseconds.
 *
 * The ring protocol: the producer (the hooking thread) owns @head, the
 * writer owns @tail. The producer stores the record, then publishes it with
 * a release store of head; the writer reads head with acquire, copies
 * [tail, head), then gives the slots back with a release store of tail,
 * which the producer reads with acquire before reusing a slot. A full ring
 * drops the hook and counts it (the Soft Logic Analyzer must never stall
 * the code it watches).
 *
 * Buffers live as long as their thread: a thread-exit destructor marks a
 * buffer dead and the writer frees it once drained, so a hook never writes
 * into freed memory, even after pmon_trace_stop().
 *
 * Async-signal safety (issue #31.8): a hook may run in a signal handler, so
 * nothing a hook reaches takes a lock or calls the allocator. A thread's
 * first hook maps its buffer with mmap(2) and pushes it on a lock-free list
 * the writer takes over; channels are interned into a static table with
 * compare-and-swap. A hook that interrupts another hook of the same thread
 * (a handler run inside one) would race it for the same slot: a per-thread
 * "in a hook" flag makes it count a drop instead, so every hook called is
 * either a record or a drop, never lost unseen.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "internal.h"
#include "trace/tracefile.h"
#include <pmon/arch.h>
#include <pmon/clock.h>
#include <pmon/trace.h>

#define CHUNK_RECORDS 4096

struct tbuf {
	struct pmon__trec *ring;
	uint64_t mask;
	uint64_t head; /* producer; release-published */
	uint64_t tail; /* writer; release-published */
	uint64_t dropped; /* producer increments (atomic: a nested hook may too) */
	size_t map_len; /* the mapping: this struct, then the ring */
	int32_t tid;
	char name[16]; /* the thread's name at its first hook */
	bool named; /* its TTHR chunk is written (writer) */
	unsigned gen; /* the trace it belongs to */
	int dead; /* the thread has exited, or a new trace replaced it */
	struct tbuf *next;
};

static struct {
	pthread_mutex_t lock; /* the writer's buffer list, start/stop */
	pthread_cond_t wake;
	int running; /* hooks record (relaxed loads in the hot path) */
	unsigned gen; /* trace number: a thread's buffer of an earlier trace is replaced */
	uint64_t tick0, mono0, bracket0; /* the first clock pair, taken at start */
	int stopping;
	pthread_t writer;
	int fd;
	char path[4096];
	uint64_t (*clock)(void);
	uint64_t ticks_per_sec;
	size_t ring_records;
	unsigned flush_ms;
	struct tbuf *bufs; /* the writer's */
	struct tbuf *newbufs; /* attached since the last drain: a lock-free stack */
	uint32_t chan_written;
	int write_err;
	uint64_t dropped_dead; /* drops of freed buffers */
	uint64_t dropped_nobuf; /* hooks dropped with no buffer to count them on */
	pthread_key_t key;
} G = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER, .fd = -1 };

int pmon__trace_on; /* mirrors G.running for the region code */

static __thread struct tbuf *tls_buf __attribute__((tls_model("initial-exec")));
/* Set while a hook of this thread runs: a hook nested in it (a signal
 * handler's) counts a drop. */
static __thread int tls_in_hook __attribute__((tls_model("initial-exec")));

/* Channel names, interned without a lock (a hook's first call at a call
 * site interns, maybe in a signal handler): a slot is set once, by
 * compare-and-swap, to a copy in the arena; ids are never reused, across
 * traces too (call sites cache them). */
#define CHAN_ARENA (1u << 20)
static const char *chan_tab[PMON_TRACE_MAX_CHANNELS + 1];
static char chan_arena[CHAN_ARENA];
static size_t chan_used;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static uint64_t now_tick(void)
{
	return G.clock ? G.clock() : pmon_rdtsc();
}

static void thread_exit(void *p)
{
	struct tbuf *b = p;
	/* A later destructor's hook attaches a new buffer, never this one
	 * the writer may free. */
	if (tls_buf == b)
		tls_buf = NULL;
	__atomic_store_n(&b->dead, 1, __ATOMIC_RELEASE);
}

static void make_key(void)
{
	(void)pthread_key_create(&G.key, thread_exit);
}

/* A thread's first hook of a trace: async-signal-safe (system calls, no
 * allocator, no lock; pthread_setspecific is neither with glibc for the
 * first 32 keys), errno kept for the program. */
static struct tbuf *attach(void)
{
	int saved = errno;
	if (tls_buf) /* of an earlier trace: the writer frees it */
		__atomic_store_n(&tls_buf->dead, 1, __ATOMIC_RELEASE);
	tls_buf = NULL;
	size_t records = __atomic_load_n(&G.ring_records, __ATOMIC_RELAXED);
	size_t head = (sizeof(struct tbuf) + 63) & ~(size_t)63;
	size_t len = head + records * sizeof(struct pmon__trec);
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		errno = saved;
		return NULL;
	}
	struct tbuf *b = m; /* zero-filled */
	b->map_len = len;
	b->ring = (struct pmon__trec *)((char *)m + head);
	b->mask = records - 1;
	b->gen = __atomic_load_n(&G.gen, __ATOMIC_ACQUIRE);
	b->tid = (int32_t)syscall(SYS_gettid);
	/* Its name, for its lane in the viewers (issue #28.5): the kernel's
	 * comm of this thread (pthread_setname_np's), read once here, on its
	 * first hook, where the allocations above already are. */
	(void)prctl(PR_GET_NAME, b->name, 0, 0, 0);
	b->name[sizeof(b->name) - 1] = '\0';
	pthread_setspecific(G.key, b); /* the key: made by pmon_trace_start() */
	b->next = __atomic_load_n(&G.newbufs, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&G.newbufs, &b->next, b, true, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED))
		;
	tls_buf = b;
	errno = saved;
	return b;
}

/* A hook nested in a hook of the same thread, or one with no buffer. */
static void count_drop(void)
{
	struct tbuf *b = tls_buf;
	if (b && b->gen == __atomic_load_n(&G.gen, __ATOMIC_RELAXED))
		__atomic_fetch_add(&b->dropped, 1, __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(&G.dropped_nobuf, 1, __ATOMIC_RELAXED);
}

/* The hot path: one timestamp, one or two 16-byte stores, one release.
 * @tick: the timestamp, or 0 to read the clock now. */
static inline void emit(uint32_t kind, uint32_t ch, int64_t value, uint64_t tick)
{
	/* Acquire: the settings pmon_trace_start() made before it set running. */
	if (!__atomic_load_n(&G.running, __ATOMIC_ACQUIRE) || !ch)
		return;
	if (__builtin_expect(tls_in_hook, 0)) {
		count_drop();
		return;
	}
	tls_in_hook = 1;
	/* The flag is set before anything below, as a handler would see it. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	struct tbuf *b = tls_buf;
	if (__builtin_expect(!b || b->gen != __atomic_load_n(&G.gen, __ATOMIC_RELAXED), 0) &&
	    !(b = attach())) {
		__atomic_fetch_add(&G.dropped_nobuf, 1, __ATOMIC_RELAXED);
		goto out;
	}
	uint64_t h = b->head, need = kind == PMON__TR_COUNTER64 ? 2 : 1;
	if (h + need - __atomic_load_n(&b->tail, __ATOMIC_ACQUIRE) > b->mask + 1) {
		__atomic_fetch_add(&b->dropped, 1, __ATOMIC_RELAXED);
		goto out;
	}
	struct pmon__trec *r = &b->ring[h & b->mask];
	r->tick = tick ? tick : now_tick();
	r->word = PMON__TR_WORD(kind, ch);
	r->arg = (uint32_t)value;
	if (need == 2) {
		struct pmon__trec *v = &b->ring[(h + 1) & b->mask];
		v->tick = (uint64_t)value;
		v->word = PMON__TR_WORD(PMON__TR_VALUE, ch);
		v->arg = 0;
	}
	__atomic_store_n(&b->head, h + need, __ATOMIC_RELEASE);
out:
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	tls_in_hook = 0;
}

void pmon_trace_begin(uint32_t channel)
{
	emit(PMON__TR_BEGIN, channel, 0, 0);
}

void pmon_trace_end(uint32_t channel)
{
	emit(PMON__TR_END, channel, 0, 0);
}

void pmon_trace_mark(uint32_t channel)
{
	emit(PMON__TR_MARK, channel, 0, 0);
}

static uint32_t counter_kind(int64_t value)
{
	return value == (int64_t)(int32_t)value ? PMON__TR_COUNTER : PMON__TR_COUNTER64;
}

void pmon_trace_counter(uint32_t channel, int64_t value)
{
	emit(counter_kind(value), channel, value, 0);
}

void pmon__trace_emit_at(unsigned kind, uint32_t channel, uint64_t tick, int64_t value)
{
	emit(kind == PMON__TR_COUNTER ? counter_kind(value) : kind, channel, value,
	     tick ? tick : 1);
}

/* Lock-free: the slots are taken in order, each once, so the first slot
 * holding @name or free decides, whoever races (a name that lost a slot's
 * race leaves its arena bytes unused). */
uint32_t pmon_trace_channel(const char *name)
{
	const char *mine = NULL;

	if (!name || !*name)
		return 0;
	size_t len = strlen(name) + 1;
	for (uint32_t i = 1; i <= PMON_TRACE_MAX_CHANNELS; i++) {
		const char *p = __atomic_load_n(&chan_tab[i], __ATOMIC_ACQUIRE);
		if (!p) {
			if (!mine) {
				size_t off = __atomic_fetch_add(&chan_used, len, __ATOMIC_RELAXED);
				if (len > CHAN_ARENA || off > CHAN_ARENA - len)
					return 0; /* the arena is full */
				mine = memcpy(chan_arena + off, name, len);
			}
			if (__atomic_compare_exchange_n(&chan_tab[i], &p, mine, false,
							__ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
				return i;
		}
		if (!strcmp(p, name))
			return i;
	}
	return 0;
}

/* ---- the writer --------------------------------------------------------- */

static int write_full(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t k = write(fd, c, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

/* One chunk in one write(): header and payload together. */
int pmon__trace_write_chunk(int fd, const char magic[4], const void *a, size_t alen, const void *b,
			    size_t blen)
{
	struct pmon_trace_chunk c = { .len = (uint32_t)(alen + blen) };
	memcpy(c.magic, magic, 4);
	c.crc = (uint32_t)crc32(0L, a, (uInt)alen);
	if (blen)
		c.crc = (uint32_t)crc32(c.crc, b, (uInt)blen);
	size_t n = sizeof(c) + alen + blen;
	char *buf = malloc(n);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, &c, sizeof(c));
	memcpy(buf + sizeof(c), a, alen);
	if (blen)
		memcpy(buf + sizeof(c) + alen, b, blen);
	int err = write_full(fd, buf, n);
	free(buf);
	return err;
}

static int write_chunk(const char magic[4], const void *a, size_t alen, const void *b, size_t blen)
{
	return pmon__trace_write_chunk(G.fd, magic, a, alen, b, blen);
}

/* A TSC / CLOCK_MONOTONIC pair: the clock read between two ticks, the pair
 * at the mid-point, the bracket its uncertainty. The narrowest of a few. */
void pmon__trace_clock_pair(uint64_t (*clk)(void), uint64_t *tick, uint64_t *mono,
			    uint64_t *bracket)
{
	*bracket = UINT64_MAX;
	for (int i = 0; i < 5; i++) {
		struct timespec ts;
		uint64_t a = clk ? clk() : pmon_rdtsc();
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t b = clk ? clk() : pmon_rdtsc();
		if (b - a < *bracket) {
			*bracket = b - a;
			*tick = a + (b - a) / 2;
			*mono = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		}
	}
}

/* The header, then the clocks read together: TSC, CLOCK_MONOTONIC,
 * CLOCK_BOOTTIME, TSC, the narrowest bracket of five (a reading of the
 * trace's clock at the TSC's mid-point, on either time base). */
int pmon__trace_write_header(int fd, struct pmon_trace_disk_header *h)
{
	struct pmon_trace_disk_snapshot s = { .bracket = UINT64_MAX };
	char buf[sizeof(*h) + sizeof(s)];

	for (int i = 0; i < 5; i++) {
		struct timespec m, b;
		uint64_t t0 = pmon_rdtsc();
		clock_gettime(CLOCK_MONOTONIC, &m);
		clock_gettime(CLOCK_BOOTTIME, &b);
		uint64_t t1 = pmon_rdtsc();
		if (t1 - t0 < s.bracket) {
			s.bracket = t1 - t0;
			s.tick = t0 + (t1 - t0) / 2;
			s.mono_ns = (uint64_t)m.tv_sec * 1000000000u + (uint64_t)m.tv_nsec;
			s.boot_ns = (uint64_t)b.tv_sec * 1000000000u + (uint64_t)b.tv_nsec;
		}
	}
	h->header_size = sizeof(buf);
	memcpy(buf, h, sizeof(*h));
	memcpy(buf + sizeof(*h), &s, sizeof(s));
	return write_full(fd, buf, sizeof(buf));
}

static void clock_pair(uint64_t *tick, uint64_t *mono, uint64_t *bracket)
{
	pmon__trace_clock_pair(G.clock, tick, mono, bracket);
}

static void write_channels(void)
{
	pthread_mutex_lock(&G.lock);
	while (!G.write_err && G.chan_written < PMON_TRACE_MAX_CHANNELS) {
		const char *name = __atomic_load_n(&chan_tab[G.chan_written + 1], __ATOMIC_ACQUIRE);
		if (!name)
			break;
		uint32_t id = ++G.chan_written;
		uint32_t hdr[2] = { id, (uint32_t)strlen(name) };
		G.write_err = write_chunk("TCHN", hdr, sizeof(hdr), name, hdr[1]);
	}
	pthread_mutex_unlock(&G.lock);
}

/* The buffers attached since the last drain join the writer's list. */
static void take_new_buffers(void)
{
	struct tbuf *n = __atomic_exchange_n(&G.newbufs, NULL, __ATOMIC_ACQUIRE);
	while (n) {
		struct tbuf *next = n->next;
		n->next = G.bufs;
		G.bufs = n;
		n = next;
	}
}

/* Drain every buffer; free the dead ones once empty. Return: whether a
 * buffer was a quarter full or more (the writer then comes back at once:
 * a burst fills a ring faster than the flush interval). */
static bool drain(void)
{
	bool busy = false;
	static struct pmon__trec out[CHUNK_RECORDS];

	write_channels();
	pthread_mutex_lock(&G.lock);
	take_new_buffers();
	struct tbuf **pp = &G.bufs;
	while (*pp) {
		struct tbuf *b = *pp;
		int dead = __atomic_load_n(&b->dead, __ATOMIC_ACQUIRE);
		uint64_t head = __atomic_load_n(&b->head, __ATOMIC_ACQUIRE);
		uint64_t tail = b->tail;
		if (head - tail >= (b->mask + 1) / 4)
			busy = true;
		if (tail != head && !b->named && !G.write_err) {
			/* Before its first records: the thread's name (TTHR). */
			struct pmon_trace_chunk_thread th = { .tid = b->tid };
			memcpy(th.name, b->name, sizeof(th.name));
			G.write_err = write_chunk("TTHR", &th, sizeof(th), NULL, 0);
			b->named = true;
		}
		while (tail != head) {
			uint64_t n = head - tail;
			if (n > CHUNK_RECORDS)
				n = CHUNK_RECORDS;
			for (uint64_t i = 0; i < n; i++)
				out[i] = b->ring[(tail + i) & b->mask];
			/* A 64-bit counter's two records stay in one chunk. */
			if (n > 1 && PMON__TR_KIND(out[n - 1].word) == PMON__TR_COUNTER64)
				n--;
			struct pmon_trace_chunk_events ce = {
				.tid = b->tid,
				.nrec = (uint32_t)n,
				.dropped = __atomic_load_n(&b->dropped, __ATOMIC_RELAXED),
			};
			if (!G.write_err)
				G.write_err = write_chunk("TEVT", &ce, sizeof(ce), out,
							  n * sizeof(out[0]));
			tail += n;
			__atomic_store_n(&b->tail, tail, __ATOMIC_RELEASE);
		}
		if (dead) {
			*pp = b->next;
			/* An earlier trace's drops were in its own trailer. */
			if (b->gen == __atomic_load_n(&G.gen, __ATOMIC_RELAXED))
				G.dropped_dead += __atomic_load_n(&b->dropped, __ATOMIC_RELAXED);
			munmap(b, b->map_len);
			continue;
		}
		pp = &b->next;
	}
	pthread_mutex_unlock(&G.lock);
	return busy;
}

static void *writer_main(void *arg)
{
	struct pmon_trace_disk_header h = { .version = PMON_TRACE_VERSION,
					    .header_size = sizeof(h),
					    .pid = (int32_t)getpid() };
	(void)arg;
	memcpy(h.magic, PMON_TRACE_MAGIC, 8);
	h.tick0 = G.tick0;
	h.mono0_ns = G.mono0;
	h.bracket0 = G.bracket0;
	h.ticks_per_sec = G.ticks_per_sec;
	if (G.clock)
		h.flags |= PMON_TRACE_RATE_GIVEN;
	if (!h.ticks_per_sec && pmon_tsc_calibrate(5, &h.ticks_per_sec, NULL))
		h.ticks_per_sec = 0;
	char cmd[256] = "";
	long n = pmon__read_text("/proc/self/cmdline", cmd, sizeof(cmd));
	for (long i = 0; i + 1 < n; i++)
		if (!cmd[i])
			cmd[i] = ' ';
	pmon__strlcpy(h.command, cmd, sizeof(h.command));
	/* This thread is libpmon's, not the program's: named (the kernel's
	 * COMM record says so too) and declared in a TTHR chunk, so that the
	 * reader leaves its system calls and switches out of the program's
	 * lanes and table (issue #28.4). */
	struct pmon_trace_chunk_thread th = { .tid = (int32_t)syscall(SYS_gettid),
					      .flags = PMON__THREAD_WRITER };
	pmon__strlcpy(th.name, "pmon-writer", sizeof(th.name));
	pthread_setname_np(pthread_self(), th.name);
	pthread_mutex_lock(&G.lock);
	G.write_err = pmon__trace_write_header(G.fd, &h);
	if (!G.write_err)
		G.write_err = write_chunk("TTHR", &th, sizeof(th), NULL, 0);
	pthread_mutex_unlock(&G.lock);

	bool busy = false;
	for (;;) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		/* Busy: back after 1 ms (a yield of the CPU the hooks may need). */
		ts.tv_nsec += (busy ? 1L : (long)G.flush_ms) * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_mutex_lock(&G.lock);
		if (!G.stopping)
			pthread_cond_timedwait(&G.wake, &G.lock, &ts);
		int stop = G.stopping;
		pthread_mutex_unlock(&G.lock);
		busy = drain();
		if (stop)
			break;
	}
	struct pmon_trace_chunk_end e = { 0 };
	clock_pair(&e.tick1, &e.mono1_ns, &e.bracket1);
	pthread_mutex_lock(&G.lock);
	take_new_buffers();
	e.dropped = G.dropped_dead + __atomic_load_n(&G.dropped_nobuf, __ATOMIC_RELAXED);
	for (struct tbuf *b = G.bufs; b; b = b->next)
		if (b->gen == __atomic_load_n(&G.gen, __ATOMIC_RELAXED))
			e.dropped += __atomic_load_n(&b->dropped, __ATOMIC_RELAXED);
	if (!G.write_err)
		G.write_err = write_chunk("TEND", &e, sizeof(e), NULL, 0);
	pthread_mutex_unlock(&G.lock);
	return NULL;
}

static void at_exit(void)
{
	(void)pmon_trace_stop();
}

static void in_child(void)
{
	/* A forked child has no writer thread: it does not trace (its buffers
	 * are the parent's copies, left alone). */
	G.running = 0;
	pmon__trace_on = 0;
	G.stopping = 0;
	G.bufs = NULL;
	G.newbufs = NULL;
	G.fd = -1;
	tls_buf = NULL;
	pthread_mutex_init(&G.lock, NULL);
}

int pmon_trace_start(const struct pmon_trace_opts *o)
{
	static bool hooks_set;
	struct pmon_trace_opts d = { .sz = sizeof(d) };
	int err = 0;

	/* A caller's struct is copied up to its own size only (d = *o read
	 * past a smaller one). */
	if ((err = PMON_OPTS_COPY(&d, o, struct pmon_trace_opts, ticks_per_sec)))
		return err;
	const char *path = d.path ? d.path : getenv("PMON_TRACE");
	pthread_mutex_lock(&G.lock);
	if (G.running || G.stopping) {
		pthread_mutex_unlock(&G.lock);
		return pmon__err(-EALREADY, "a trace is already running (to '%s')", G.path);
	}
	if (!path || !*path) {
		pthread_mutex_unlock(&G.lock);
		return pmon__err(-EINVAL, "no trace file named (set PMON_TRACE)");
	}
	if (!pmon__fmt(G.path, sizeof(G.path), "%s", path)) {
		err = pmon__err(-ENAMETOOLONG, "trace file name too long");
		goto out;
	}
	/* Traces show what a program did and when: owner-only, like recordings. */
	/* O_NOFOLLOW: never written through a link planted where the trace
	 * goes (pmon trace names a temporary it made; issue #23). */
	G.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW, 0600);
	if (G.fd < 0) {
		err = pmon__err(-errno, "cannot write trace '%s': %s", path, strerror(errno));
		goto out;
	}
	size_t ring = d.buffer_records ? d.buffer_records : 65536;
	if (ring < 16)
		ring = 16;
	G.ring_records = 1;
	while (G.ring_records < ring)
		G.ring_records <<= 1;
	G.flush_ms = d.flush_ms ? d.flush_ms : 20;
	G.clock = d.clock;
	G.ticks_per_sec = d.clock ? d.ticks_per_sec : 0;
	G.write_err = 0;
	G.chan_written = 0;
	/* Before any hook of this trace: every timestamp comes after tick0. */
	clock_pair(&G.tick0, &G.mono0, &G.bracket0);
	__atomic_add_fetch(&G.gen, 1, __ATOMIC_RELEASE);
	G.dropped_dead = 0;
	__atomic_store_n(&G.dropped_nobuf, 0, __ATOMIC_RELAXED);
	/* The key the thread-exit destructor hangs on, made here and not on a
	 * hook's path (pthread_once there could deadlock a handler). */
	pthread_once(&key_once, make_key);
	if (!hooks_set) {
		atexit(at_exit);
		pthread_atfork(NULL, NULL, in_child);
		hooks_set = true;
	}
	if ((err = -pthread_create(&G.writer, NULL, writer_main, NULL))) {
		close(G.fd);
		G.fd = -1;
		err = pmon__err(err, "cannot start the trace writer: %s", strerror(-err));
		goto out;
	}
	__atomic_store_n(&G.running, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&pmon__trace_on, 1, __ATOMIC_RELAXED);
out:
	pthread_mutex_unlock(&G.lock);
	return err;
}

int pmon_trace_stop(void)
{
	pthread_mutex_lock(&G.lock);
	if (!G.running) {
		pthread_mutex_unlock(&G.lock);
		return 0;
	}
	__atomic_store_n(&G.running, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&pmon__trace_on, 0, __ATOMIC_RELAXED);
	G.stopping = 1;
	pthread_cond_signal(&G.wake);
	pthread_mutex_unlock(&G.lock);
	pthread_join(G.writer, NULL);
	pthread_mutex_lock(&G.lock);
	G.stopping = 0;
	int err = G.write_err;
	if (close(G.fd) && !err)
		err = -errno;
	G.fd = -1;
	pthread_mutex_unlock(&G.lock);
	if (err)
		return pmon__err(err, "trace '%s': %s", G.path, strerror(-err));
	return 0;
}

/* `pmon trace -- CMD` names the file in PMON_TRACE: the first process
 * linked with libpmon takes it (and removes it from its environment, so its
 * own children do not write the same file). */
__attribute__((constructor)) static void trace_from_env(void)
{
	const char *p = getenv("PMON_TRACE");
	if (!p || !*p)
		return;
	char path[4096];
	pmon__strlcpy(path, p, sizeof(path));
	unsetenv("PMON_TRACE");
	struct pmon_trace_opts o = { .sz = sizeof(o), .path = path };
	(void)pmon_trace_start(&o);
}
