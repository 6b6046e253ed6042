// SPDX-License-Identifier: MIT
/*
 * The region runtime (pmon/region.h): per-thread state and sample rings,
 * set-up from code or the environment, the overhead of an empty pair, and
 * the report. The hot path is inline in the header; what is here runs once
 * per thread (set-up), once per pair after the TSC is read at the end
 * (event read and recording), at thread exit (folding the thread's samples
 * into per-region totals, then freeing it) and in a forked child (which
 * starts with no samples and opens its own counters).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <jansson.h>
#include <linux/perf_event.h>

#include <pmon/output.h>

#include "internal.h"
#include <pmon/counter.h>
#include <pmon/cpu.h>
#include <pmon/event.h>
#include <pmon/region.h>
#include <pmon/stats.h>
#include <pmon/trace.h>

/* valgrind's client requests (a no-op instruction sequence outside it) for
 * pmon simulate --regions; without the header nothing is switched. */
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#endif

#define MAX_EVENTS 16 /* events read per pair */
#define NMETRIC (1 + MAX_EVENTS) /* the TSC, then each event */
#define NSLOT (PMON_REGION_MAX + 1) /* user ids, then the overhead's */
#define OV_ID (NSLOT - 1)

/* One region's record on one thread (live), or of the threads gone (retired). */
struct store {
	uint64_t warm; /* warm-up pairs seen and left out */
	uint64_t count; /* completed pairs (exact, never lost) */
	uint64_t unmatched; /* ends without a begin */
	uint64_t dropped; /* pairs whose events could not be read */
	uint64_t shared; /* pairs ended while the thread's counters were time-shared */
	uint64_t unended; /* begins never ended (retired: the thread exited inside) */
	uint64_t threads; /* retired: threads folded in */
	uint64_t nring, pos; /* retired: samples held, next one written */
	uint64_t *ring; /* ring[i * (1 + nev) + m] */
	uint64_t sum[NMETRIC];
};

struct rthread {
	struct pmon__rthread pub; /* first: the header's view */
	struct pmon_selfgroup *grp;
	uint64_t v1[MAX_EVENTS]; /* the events at end */
	struct store *store[NSLOT]; /* allocated on the region's first end */
	struct rthread *next;
};

static struct {
	pthread_mutex_t lock;
	bool inited; /* set-up started (under the lock) */
	bool ready; /* set-up complete: other threads may open their events */
	bool key_made, atexit_done, atfork_done;
	struct pmon_evlist *ev;
	unsigned nev;
	uint32_t fence;
	unsigned ring;
	unsigned warmup;
	double cull_k;
	unsigned overhead_runs;
	char output[512];
	enum pmon_report_format format;
	double overhead[NMETRIC]; /* subtracted: the low percentile of the empty pairs */
	double ov_median[NMETRIC], ov_high[NMETRIC]; /* their median and 95th percentile */
	double tsc_step;
	bool rdpmc;
	bool sim; /* pmon simulate --regions: switch callgrind's collection */
	char read_why[200];
	char names[PMON_REGION_MAX][64];
	struct rthread *threads;
	struct store *retired[NSLOT];
	uint64_t threads_seen, event_open_failed;
	pthread_key_t key;
} G = { .lock = PTHREAD_MUTEX_INITIALIZER };

__thread struct pmon__rthread *pmon__rt __attribute__((tls_model("initial-exec")));

static struct pmon__rslot *slot_of(struct pmon__rthread *t, unsigned id)
{
	return (struct pmon__rslot *)(void *)(t->slot + (size_t)id * t->stride);
}

/* ---- recording --------------------------------------------------------- */

/* Begin's reading. The slot holds, after the nev values, the group's time
 * enabled and running and whether the read worked (the library chooses the
 * slot's stride, so callers' compiled code does not know these words). */
static void sim_begin(struct pmon__rthread *pt, const uint64_t *v);
static void sim_end(struct pmon__rthread *pt, unsigned id);

void pmon__region_read(struct pmon__rthread *pt, uint64_t *v)
{
	struct rthread *t = (struct rthread *)pt;

	v[pt->nev + 2] = !pmon_selfgroup__read_times(t->grp, v, &v[pt->nev], &v[pt->nev + 1]);
	if (__builtin_expect(G.sim, 0))
		sim_begin(pt, v);
}

static struct store *store_new(void)
{
	return calloc(1, sizeof(struct store));
}

/* A running trace (pmon/trace.h) gets each recorded pair as a span on the
 * region's channel, stamped with the region's own TSC reads, and each event's
 * delta as a value on the channel "REGION/EVENT": the trace shows regions
 * and their counts on the same timeline as its hooks. Channel ids are cached
 * per region (0: not yet interned); ids outlive traces. */
static uint32_t trace_chan[NSLOT][1 + MAX_EVENTS];

static uint32_t trace_channel(unsigned id, unsigned m)
{
	uint32_t ch = __atomic_load_n(&trace_chan[id][m], __ATOMIC_RELAXED);
	if (ch)
		return ch;
	char name[64 + 1 + 128];
	const char *rn = G.names[id][0] ? G.names[id] : NULL;
	char num[24];
	if (!rn) {
		snprintf(num, sizeof(num), "region %u", id);
		rn = num;
	}
	if (m == 0)
		snprintf(name, sizeof(name), "%s", rn);
	else
		snprintf(name, sizeof(name), "%s/%s", rn, pmon_evlist__event(G.ev, m - 1)->name);
	ch = pmon_trace_channel(name);
	__atomic_store_n(&trace_chan[id][m], ch, __ATOMIC_RELAXED);
	return ch;
}

static void trace_pair(const struct pmon__rslot *sl, unsigned id, uint64_t t1, const uint64_t *d,
		       unsigned nev)
{
	pmon__trace_emit_at(1, trace_channel(id, 0), sl->t0, 0);
	pmon__trace_emit_at(2, trace_channel(id, 0), t1, 0);
	for (unsigned e = 0; e < nev; e++)
		pmon__trace_emit_at(4, trace_channel(id, 1 + e), t1, (int64_t)d[e]);
}

void pmon__region_end(struct pmon__rthread *pt, unsigned id, uint64_t t1)
{
	struct rthread *t = (struct rthread *)pt;
	struct pmon__rslot *sl = slot_of(pt, id);
	struct store *st;
	unsigned w = 1 + G.nev;

	uint64_t en1 = 0, run1 = 0;
	int rerr = 0;
	if (__builtin_expect(G.sim, 0))
		sim_end(pt, id);
	if (pt->nev) /* right after the TSC */
		rerr = pmon_selfgroup__read_times(t->grp, t->v1, &en1, &run1);
	st = t->store[id];
	if (__builtin_expect(!st, 0)) {
		st = t->store[id] = store_new();
		if (!st) {
			sl->open = 0;
			return;
		}
	}
	if (!sl->open) {
		st->unmatched++;
		return;
	}
	sl->open = 0;
	if (st->warm < G.warmup && id != OV_ID) {
		st->warm++;
		return;
	}
	/* A thread whose events could not be opened, or a read that failed
	 * (the group reads as zeros then; counts never decrease): the pair is
	 * dropped, never a difference taken from zero. */
	if (pt->nev != G.nev || rerr || (pt->nev && !pmon__rslot_v0(sl)[pt->nev + 2])) {
		st->dropped++;
		return;
	}
	for (unsigned e = 0; e < pt->nev; e++)
		if (t->v1[e] < pmon__rslot_v0(sl)[e]) {
			st->dropped++;
			return;
		}
	/* Time-shared within this pair: enabled grew more than running. */
	if (pt->nev && en1 - pmon__rslot_v0(sl)[pt->nev] != run1 - pmon__rslot_v0(sl)[pt->nev + 1])
		st->shared++;
	if (!st->ring) {
		st->ring = malloc((size_t)G.ring * w * sizeof(uint64_t));
		if (!st->ring) {
			st->dropped++;
			return;
		}
	}
	/* The ring is a power of two: a mask, not a division (~25 cycles). */
	uint64_t *r = &st->ring[(st->count & (G.ring - 1)) * w];
	r[0] = t1 - sl->t0;
	st->sum[0] += r[0];
	for (unsigned e = 0; e < pt->nev; e++) {
		r[1 + e] = t->v1[e] - pmon__rslot_v0(sl)[e];
		st->sum[1 + e] += r[1 + e];
	}
	st->count++;
	if (__builtin_expect(__atomic_load_n(&pmon__trace_on, __ATOMIC_RELAXED), 0) && id != OV_ID)
		trace_pair(sl, id, t1, r + 1, pt->nev);
}

/* ---- threads: created on first begin, folded and freed at exit --------- */

static void store_free(struct store *st)
{
	if (st) {
		free(st->ring);
		free(st);
	}
}

static void thread_free(struct rthread *t)
{
	if (!t)
		return;
	pmon_selfgroup__close(t->grp);
	for (unsigned id = 0; id < NSLOT; id++)
		store_free(t->store[id]);
	free(t->pub.slot);
	free(t);
}

/* Add live store @st (and @unended begins still open) of region @id to the
 * retired totals. G.lock held. */
static void fold_store(unsigned id, const struct store *st, bool unended)
{
	unsigned w = 1 + G.nev, mask = G.ring - 1;
	struct store *r = G.retired[id];

	if (!r) {
		r = G.retired[id] = store_new();
		if (!r)
			return; /* ENOMEM at thread exit: the thread's pairs are lost */
	}
	r->threads++;
	r->unended += unended;
	if (!st)
		return;
	r->count += st->count;
	r->unmatched += st->unmatched;
	r->dropped += st->dropped;
	r->shared += st->shared;
	for (unsigned m = 0; m < w; m++)
		r->sum[m] += st->sum[m];
	if (!st->ring || !st->count)
		return;
	if (!r->ring) {
		r->ring = malloc((size_t)G.ring * w * sizeof(uint64_t));
		if (!r->ring)
			return; /* exact counts kept, the samples not */
	}
	/* Oldest first, so the retired ring keeps the latest samples. */
	uint64_t k = st->count < G.ring ? st->count : G.ring;
	uint64_t first = st->count - k;
	for (uint64_t i = 0; i < k; i++) {
		memcpy(&r->ring[r->pos * w], &st->ring[((first + i) & mask) * w],
		       w * sizeof(uint64_t));
		r->pos = (r->pos + 1) & mask;
		if (r->nring < G.ring)
			r->nring++;
	}
}

static void unlink_thread(struct rthread *t)
{
	for (struct rthread **p = &G.threads; *p; p = &(*p)->next)
		if (*p == t) {
			*p = t->next;
			return;
		}
}

/* The thread's TLS destructor: its samples go into the per-region totals
 * and everything it held is freed, so short-lived threads cost no memory
 * once gone. */
static void thread_gone(void *p)
{
	struct rthread *t = p;

	pthread_mutex_lock(&G.lock);
	for (unsigned id = 0; id < OV_ID; id++) {
		bool open = slot_of(&t->pub, id)->open != 0;
		if (t->store[id] || open)
			fold_store(id, t->store[id], open);
	}
	unlink_thread(t);
	pthread_mutex_unlock(&G.lock);
	if (pmon__rt == &t->pub)
		pmon__rt = NULL;
	thread_free(t);
}

static struct rthread *thread_new(void)
{
	struct rthread *t = calloc(1, sizeof(*t));
	/* The values, then time enabled, time running, read-ok (pmon__region_read). */
	uint32_t stride =
		(uint32_t)(sizeof(struct pmon__rslot) + (G.nev ? G.nev + 3 : 0) * sizeof(uint64_t));

	if (!t)
		return NULL;
	t->pub.slot = calloc(NSLOT, stride);
	if (!t->pub.slot) {
		free(t);
		return NULL;
	}
	t->pub.stride = stride;
	t->pub.nslot = NSLOT;
	t->pub.fence = G.fence;
	if (G.nev) {
		/* A thread whose events cannot be opened (out of descriptors)
		 * still counts its pairs; they are reported as dropped. */
		if ((t->grp = pmon_selfgroup__open(G.ev)))
			t->pub.nev = G.nev;
	}
	pthread_mutex_lock(&G.lock);
	G.threads_seen++;
	if (G.nev && !t->grp)
		G.event_open_failed++;
	t->next = G.threads;
	G.threads = t;
	pthread_mutex_unlock(&G.lock);
	pthread_setspecific(G.key, t);
	pmon__rt = &t->pub;
	return t;
}

/* ---- fork: the child starts empty, with its own counters --------------- */

static void fork_prepare(void)
{
	pthread_mutex_lock(&G.lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&G.lock);
}

/* The child has one thread: every other thread's state is gone with it, and
 * the counters inherited count the parent's thread (perf events opened with
 * pid 0 stay bound to it), so all is freed; the child's first begin opens
 * its own. The settings and the overhead measured stay. */
static void fork_child(void)
{
	struct rthread *t = G.threads;

	G.threads = NULL;
	while (t) {
		struct rthread *next = t->next;
		thread_free(t);
		t = next;
	}
	for (unsigned id = 0; id < NSLOT; id++) {
		store_free(G.retired[id]);
		G.retired[id] = NULL;
	}
	G.threads_seen = G.event_open_failed = 0;
	pmon__rt = NULL;
	if (G.key_made)
		pthread_setspecific(G.key, NULL);
	pthread_mutex_unlock(&G.lock);
}

/* ---- set-up ------------------------------------------------------------ */

static bool cpu_has_rdtscp(void)
{
	uint32_t r[4];

	pmon_cpuid(0x80000000, 0, r);
	if (r[0] < 0x80000001)
		return false;
	pmon_cpuid(0x80000001, 0, r);
	return (r[3] >> 27) & 1;
}

/* Set where pmon_region_report() could not open the report file. */
static bool report_unopened;

static void at_exit(void)
{
	if (!__atomic_load_n(&G.ready, __ATOMIC_ACQUIRE))
		return;
	/* The report file cannot be written now (a FIFO nobody reads, a
	 * file that changed since set-up): said once, and the report comes
	 * on standard error instead of being lost. */
	report_unopened = false;
	if (pmon_region_report(NULL, G.format) && report_unopened) {
		fprintf(stderr, "pmon: regions: %s; writing the report to standard error\n",
			pmon_errdetail());
		pmon_region_report(stderr, G.format);
	}
}

/* Not a constant: the pair below must load its id like user code does. */
static volatile unsigned ov_id = OV_ID;

/* The smallest step the TSC is seen to advance by (virtual machines may
 * advance it in steps of tens of ticks): the resolution of every TSC figure. */
static double measure_tsc_step(void)
{
	uint64_t best = UINT64_MAX, prev = pmon_rdtsc();

	for (int i = 0; i < 4096; i++) {
		uint64_t now = pmon_rdtsc();
		if (now > prev && now - prev < best)
			best = now - prev;
		prev = now;
	}
	return best == UINT64_MAX ? 1 : (double)best;
}

/* The overhead of metric @m from the @k empty pairs of @ring (@w words a
 * pair), reordering @v (@k words, may be @ring itself where @w is 1). */
static void overhead_of(unsigned m, uint64_t *v, const uint64_t *ring, unsigned w, unsigned k)
{
	if (v != ring)
		for (unsigned i = 0; i < k; i++)
			v[i] = ring[i * w + m];
	/* The 5th percentile: an empty pair's cost is a fixed part plus delays
	 * that only add (an interrupt, a cache line gone, a slower clock), so
	 * a low percentile estimates the fixed part that every pair pays; the
	 * median subtracted more than a warm hot path pays and left empty
	 * regions negative (issue 29). The median and the 95th percentile
	 * are the overhead's spread, which the report states. */
	G.ov_median[m] = pmon__median_inplace(v, k);
	G.overhead[m] = pmon__rank_inplace(v, k, 0.05);
	G.ov_high[m] = pmon__rank_inplace(v, k, 0.95);
}

/* Pairs run before the overhead is measured: the code, the slot and the
 * branch predictors warm as in a program's loop. */
#define OV_WARMUP 512

static int measure_overhead(struct rthread *t)
{
	unsigned n = G.overhead_runs, w = 1 + G.nev;
	unsigned k = n < G.ring ? n : G.ring;
	uint64_t *v = NULL;
	struct store *st;

	/* Warm up, then measure the very calls users make: the thread pointer
	 * loaded from TLS, the id checked against the library's limit, the
	 * event read and the end call, all as in theirs. */
	for (unsigned i = 0; i < OV_WARMUP + n; i++) {
		if (i == OV_WARMUP && t->store[OV_ID]) {
			st = t->store[OV_ID];
			st->count = st->dropped = 0;
		}
		pmon_region_begin(ov_id);
		pmon_region_end(ov_id);
	}
	st = t->store[OV_ID];
	if (!st || st->count < k) {
		return pmon__err(-EIO,
				 "the overhead of an empty pair could not be measured "
				 "(the events could not be read)");
	}
	/* Percentiles found in place, in the ring itself where it holds the
	 * TSC alone, without the copies and the sort of pmon_summarize() (they
	 * cost a region-instrumented program a dozen page faults at start-up,
	 * bench/RESULTS.md). */
	if (w == 1) {
		overhead_of(0, st->ring, st->ring, 1, k);
	} else {
		if (!(v = malloc(k * sizeof(*v))))
			return -ENOMEM;
		for (unsigned m = 0; m < w; m++)
			overhead_of(m, v, st->ring, w, k);
		free(v);
	}
	t->store[OV_ID] = NULL;
	store_free(st);
	return 0;
}

static int parse_env_format(const char *s, enum pmon_report_format *f)
{
	if (!s || !*s || !strcasecmp(s, "table"))
		*f = PMON_REPORT_TABLE;
	else if (!strcasecmp(s, "csv"))
		*f = PMON_REPORT_CSV;
	else if (!strcasecmp(s, "json"))
		*f = PMON_REPORT_JSON;
	else
		return pmon__err(-EINVAL, "PMON_FORMAT '%s': expected table, csv or json", s);
	return 0;
}

static int parse_fence(const char *s, enum pmon_fence *f)
{
	static const char *const names[] = { "auto", "rdtscp", "lfence", "cpuid", "none" };

	if (!s || !*s) {
		*f = PMON_FENCE_AUTO;
		return 0;
	}
	for (unsigned i = 0; i < PMON_ARRAY_SIZE(names); i++)
		if (!strcasecmp(s, names[i])) {
			*f = (enum pmon_fence)i;
			return 0;
		}
	return pmon__err(-EINVAL, "PMON_FENCE '%s': expected rdtscp, lfence, cpuid or none", s);
}

/* The report file: appended to, and owner-only (0600) like every other
 * file pmon writes (recordings, traces, stat -o): it names the program's
 * code and its costs. Opened as every output is (pmon/output.h): never
 * through another user's link, a device or FIFO as a stream that never
 * hangs. Return: the output, or NULL with errno set (detail: why). */
static struct pmon_output *open_report(const char *path)
{
	struct pmon_output_opts oo = { .sz = sizeof(oo),
				       .flags = PMON_OUTPUT_APPEND | PMON_OUTPUT_STREAM };
	return pmon_output__open(path, &oo);
}

/* A set-up from the environment has no caller to return an error to (the
 * program called pmon_region_begin()): each problem is said once on
 * standard error, with what is done instead, and set-up goes on with what
 * works. This is the only place the library writes outside a report. */
static void say(bool from_env, const char *instead)
{
	if (from_env)
		fprintf(stderr, "pmon: regions: %s; %s\n", pmon_errdetail(), instead);
}

/* Undo a set-up that failed: nothing stays, a retry starts afresh. The
 * region names stay: they are assigned before and apart from set-up. */
static void rollback(void)
{
	pthread_mutex_lock(&G.lock);
	while (G.threads) {
		struct rthread *t = G.threads;
		G.threads = t->next;
		thread_free(t);
	}
	pthread_mutex_unlock(&G.lock);
	pmon__rt = NULL;
	if (G.key_made) {
		pthread_setspecific(G.key, NULL);
		pthread_key_delete(G.key);
		G.key_made = false;
	}
	pmon_evlist__free(G.ev);
	G.ev = NULL;
	G.nev = 0;
	G.output[0] = 0;
	G.threads_seen = G.event_open_failed = 0;
	pthread_mutex_lock(&G.lock);
	G.inited = false;
	pthread_mutex_unlock(&G.lock);
}

/* The settings of @o, else of the environment (PMON_WARMUP, PMON_FORMAT,
 * PMON_FENCE, the report file): into G. Called from the environment
 * (@from_env), a bad setting is said and replaced by the default.
 * Return: 0, or -errno with a detail. */
static int setup_settings(const struct pmon_region_opts *opts, const struct pmon_region_opts *o0,
			  const char *out, bool from_env)
{
	const struct pmon_region_opts *o = o0;
	enum pmon_fence fence;
	const char *env;
	int err;

	G.ring = 4096;
	if (o->ring) {
		err = -EINVAL;
		if (o->ring > (1u << 24)) {
			pmon__err(err, "ring of %u samples: at most %u", o->ring, 1u << 24);
			return err;
		}
		for (G.ring = 1; G.ring < o->ring;) /* round up to a power of two */
			G.ring <<= 1;
	}
	G.cull_k = o->cull_k < 0 ? 0 : o->cull_k > 0 ? o->cull_k : 5.0;
	G.overhead_runs = o->overhead_runs ? o->overhead_runs : 2000;
	G.warmup = o->warmup;
	env = getenv("PMON_WARMUP");
	if (!G.warmup && env) {
		uint64_t w;
		if (pmon__parse_u64(env, 10, &w) || w > 1000000) {
			err = pmon__err(-EINVAL, "PMON_WARMUP '%s': expected 0..1000000", env);
			if (!from_env)
				return err;
			say(from_env, "no warm-up");
			w = 0;
		}
		G.warmup = (unsigned)w;
	}
	G.format = o->format;
	if (!opts || !o->format) {
		err = parse_env_format(getenv("PMON_FORMAT"), &G.format);
		if (err && !from_env)
			return err;
		if (err)
			say(from_env, "writing a table");
	}
	fence = o->fence;
	if (!opts || !o->fence) {
		err = parse_fence(getenv("PMON_FENCE"), &fence);
		if (err && !from_env)
			return err;
		if (err)
			say(from_env, "reading the TSC the default way");
	}
	if (fence == PMON_FENCE_RDTSCP && !cpu_has_rdtscp()) {
		err = pmon__err(-EOPNOTSUPP,
				"this CPU has no RDTSCP (CPUID.80000001H:EDX[27] = 0)");
		if (!from_env)
			return err;
		say(from_env, "using the lfence method");
		fence = PMON_FENCE_LFENCE;
	}
	if (fence == PMON_FENCE_AUTO)
		fence = cpu_has_rdtscp() ? PMON_FENCE_RDTSCP : PMON_FENCE_LFENCE;
#ifdef HAVE_CALLGRIND
	/* valgrind 3.19 stops at RDTSCP with SIGILL though its CPUID says it
	 * has it (VEX decodes it only with its RDTSCP hwcap): pmon simulate
	 * of a program with regions would die. */
	if (RUNNING_ON_VALGRIND && fence == PMON_FENCE_RDTSCP)
		fence = PMON_FENCE_LFENCE;
#endif
	G.fence = (uint32_t)fence;
	G.output[0] = 0;
	if (out && *out) {
		/* Found out now, not at exit when nobody can do anything about it. */
		struct pmon_output_opts oo = { .sz = sizeof(oo),
					       .flags = PMON_OUTPUT_APPEND | PMON_OUTPUT_STREAM };
		if (!(err = pmon_output__check(out, &oo))) {
			pmon__strlcpy(G.output, out, sizeof(G.output));
		} else {
			err = pmon__err(err, "report file: %s", pmon_errdetail());
			if (!from_env)
				return err;
			say(from_env, "writing the report to standard error");
		}
	}
	return 0;
}

/* The events regions read (@events, a list; NULL or empty: the TSC only). */
static int setup_events(const char *events, bool from_env)
{
	int err;

	err = -ENOMEM;
	G.ev = pmon_evlist__new(NULL);
	if (!G.ev)
		return err;
	if (events && *events) {
		err = pmon_evlist__add(G.ev, events);
		if (!err && pmon_evlist__count(G.ev) > MAX_EVENTS)
			err = pmon__err(-E2BIG, "%zu events: regions read at most %d per pair",
					pmon_evlist__count(G.ev), MAX_EVENTS);
		if (err && !from_env)
			return err;
		if (err) {
			say(from_env, "measuring the TSC only");
			pmon_evlist__free(G.ev);
			G.ev = pmon_evlist__new(NULL);
			if (!G.ev)
				return err;
		}
	}
	G.nev = (unsigned)pmon_evlist__count(G.ev);
	return 0;
}

/* The first thread's counters: where the events cannot be opened on it,
 * the TSC only (from the environment) or an error; then how they are read. */
static int setup_first_thread(struct rthread *t, bool from_env)
{
	int err;

	if (G.nev && !t->grp) {
		/* Open once more for the reason (the first attempt's detail may
		 * have been overwritten). */
		struct pmon_selfgroup *g = pmon_selfgroup__open(G.ev);

		err = g ? 0 : -errno;
		pmon_selfgroup__close(g);
		if (!err)
			err = pmon__err(-EBUSY, "the events could not be opened on this thread");
		if (!from_env)
			return err;
		say(from_env, "measuring the TSC only");
		pmon_evlist__free(G.ev);
		G.ev = pmon_evlist__new(NULL);
		err = -ENOMEM;
		if (!G.ev)
			return err;
		G.nev = 0;
		t->pub.stride = (uint32_t)sizeof(struct pmon__rslot);
		G.event_open_failed = 0;
	}
	{
		const char *why = NULL;
		G.rdpmc = G.nev && pmon_selfgroup__rdpmc(t->grp, &why);
		pmon__strlcpy(G.read_why, why ? why : "", sizeof(G.read_why));
	}
	return 0;
}

static int setup(const struct pmon_region_opts *opts, bool from_env)
{
	struct pmon_region_opts o = { .sz = sizeof(o), .report_at_exit = true };
	const char *events, *out;
	struct rthread *t = NULL;
	int err;

	if ((err = PMON_OPTS_COPY(&o, opts, struct pmon_region_opts, sz)))
		return err;
	pthread_mutex_lock(&G.lock);
	if (G.inited) {
		pthread_mutex_unlock(&G.lock);
		return pmon__err(-EALREADY, "regions are already set up");
	}
	G.inited = true;
	pthread_mutex_unlock(&G.lock);

	events = o.events ? o.events : getenv("PMON_EVENTS");
#ifdef HAVE_CALLGRIND
	/* pmon simulate --regions: begin and end must call the library, so an
	 * event is read; a software one, as valgrind runs no RDPMC. */
	G.sim = RUNNING_ON_VALGRIND && getenv("PMON_SIMULATE_REGIONS");
	if (G.sim) {
		events = getenv("PMON_EVENTS");
		if (!events || !*events)
			events = "task-clock";
	}
#endif
	out = o.output ? o.output : getenv("PMON_OUTPUT");
	if ((err = setup_settings(opts, &o, out, from_env)))
		goto fail;
	if ((err = setup_events(events, from_env)))
		goto fail;
	err = -EAGAIN;
	if (pthread_key_create(&G.key, thread_gone))
		goto fail;
	G.key_made = true;
	err = -ENOMEM;
	t = thread_new();
	if (!t)
		goto fail;
	if ((err = setup_first_thread(t, from_env)))
		goto fail;
	G.tsc_step = measure_tsc_step();
	err = measure_overhead(t);
	if (err)
		goto fail;
	if (o.report_at_exit && !G.atexit_done) {
		atexit(at_exit);
		G.atexit_done = true;
	}
	if (!G.atfork_done) {
		pthread_atfork(fork_prepare, fork_parent, fork_child);
		G.atfork_done = true;
	}
	__atomic_store_n(&G.ready, true, __ATOMIC_RELEASE);
	return 0;
fail : {
	char detail[320];
	pmon__strlcpy(detail, pmon_errdetail(), sizeof(detail));
	rollback();
	return pmon__err(err, "%s", detail);
}
}

int pmon_region_init(const struct pmon_region_opts *opts)
{
	return setup(opts, false);
}

unsigned pmon_region_max(void)
{
	return OV_ID;
}

static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static void env_init(void)
{
	bool inited;

	pthread_mutex_lock(&G.lock);
	inited = G.inited;
	pthread_mutex_unlock(&G.lock);
	if (!inited && setup(NULL, true))
		fprintf(stderr, "pmon: regions: %s; not measuring\n", pmon_errdetail());
}

struct pmon__rthread *pmon__region_thread(void)
{
	struct rthread *t;

	/* A program that calls begin without set-up is configured from the
	 * environment (pmon stat --regions, LIKWID's marker mode); threads that
	 * arrive meanwhile wait here until the set-up is complete. */
	pthread_once(&env_once, env_init);
	if (!__atomic_load_n(&G.ready, __ATOMIC_ACQUIRE))
		return NULL;
	if (pmon__rt)
		return pmon__rt; /* the thread that ran the set-up */
	t = thread_new();
	return t ? &t->pub : NULL;
}

int pmon_region_id(const char *name)
{
	int id = -ENOSPC;

	if (!name)
		return -EINVAL;
	pthread_mutex_lock(&G.lock);
	for (int i = 0; i < PMON_REGION_MAX; i++) {
		if (!strncmp(G.names[i], name, sizeof(G.names[i]) - 1)) {
			id = i;
			break;
		}
		if (!G.names[i][0]) {
			pmon__strlcpy(G.names[i], name, sizeof(G.names[i]));
			id = i;
			break;
		}
	}
	pthread_mutex_unlock(&G.lock);
	return id;
}

int pmon_region_name(unsigned id, const char *name)
{
	if (id >= PMON_REGION_MAX || !name)
		return -EINVAL;
	pthread_mutex_lock(&G.lock);
	pmon__strlcpy(G.names[id], name, sizeof(G.names[id]));
	pthread_mutex_unlock(&G.lock);
	return 0;
}

static void store_clear(struct store *st)
{
	uint64_t *ring = st->ring;

	memset(st, 0, sizeof(*st));
	st->ring = ring;
}

void pmon_region_reset(void)
{
	pthread_mutex_lock(&G.lock);
	for (struct rthread *t = G.threads; t; t = t->next)
		for (unsigned r = 0; r < OV_ID; r++)
			if (t->store[r])
				store_clear(t->store[r]);
	for (unsigned r = 0; r < OV_ID; r++) {
		store_free(G.retired[r]);
		G.retired[r] = NULL;
	}
	pthread_mutex_unlock(&G.lock);
}

/* ---- report ------------------------------------------------------------ */

static const char *fence_text(enum pmon_fence f)
{
	switch (f) {
	case PMON_FENCE_RDTSCP:
		return "begin lfence;rdtsc;lfence, end rdtscp;lfence";
	case PMON_FENCE_LFENCE:
		return "lfence;rdtsc;lfence on both sides";
	case PMON_FENCE_CPUID:
		return "cpuid;rdtsc on both sides";
	case PMON_FENCE_NONE:
		return "plain rdtsc (not serialized)";
	default:
		return "?";
	}
}

static const char *metric_name(unsigned m)
{
	return m == 0 ? "tsc" : pmon_evlist__event(G.ev, m - 1)->name;
}

/* Samples are raw deltas: TSC ticks, nanoseconds for the clocks, counts. */
static const char *metric_unit(unsigned m)
{
	const struct pmon_event_desc *d;

	if (m == 0)
		return "ticks";
	d = pmon_evlist__event(G.ev, m - 1);
	return d->attr.type == PERF_TYPE_SOFTWARE &&
			(d->attr.config == PERF_COUNT_SW_TASK_CLOCK ||
			 d->attr.config == PERF_COUNT_SW_CPU_CLOCK)
		? "ns"
		: "count";
}

struct region_sum {
	unsigned id;
	uint64_t count, unmatched, threads, dropped, shared, unended;
	uint64_t raw[NMETRIC]; /* exact sums as read, the overhead in them */
	double total[NMETRIC]; /* raw less the overhead of each pair */
	unsigned clamped[NMETRIC]; /* pmon__summary_clamp()'s bits */
	struct pmon_summary s[NMETRIC];
	size_t kept_samples;
};

static void add_counts(struct region_sum *rs, const struct store *st, unsigned w)
{
	rs->count += st->count;
	rs->unmatched += st->unmatched;
	rs->dropped += st->dropped;
	rs->shared += st->shared;
	rs->unended += st->unended;
	for (unsigned m = 0; m < w; m++)
		rs->raw[m] += st->sum[m];
}

/* How far the overhead of metric @m is known: its spread (5th to 95th
 * percentile of the empty pairs), at least one TSC step for the TSC. */
static double ov_err(unsigned m)
{
	double e = G.ov_high[m] - G.overhead[m];

	return !m && e < G.tsc_step ? G.tsc_step : e;
}

/* Gather region @id over every thread, live and gone; false when nothing
 * happened in it. G.lock held. */
static bool gather(unsigned id, struct region_sum *rs)
{
	unsigned w = 1 + G.nev;
	const struct store *ret = G.retired[id];
	size_t cap = 0, n = 0;
	double *v;

	memset(rs, 0, sizeof(*rs));
	rs->id = id;
	for (struct rthread *t = G.threads; t; t = t->next) {
		const struct store *st = t->store[id];
		bool open = slot_of(&t->pub, id)->open != 0;
		if (!st && !open)
			continue;
		rs->threads++;
		rs->unended += open; /* begun and not ended (yet) */
		if (!st)
			continue;
		add_counts(rs, st, w);
		if (st->ring)
			cap += st->count < G.ring ? st->count : G.ring;
	}
	if (ret) {
		rs->threads += ret->threads;
		add_counts(rs, ret, w);
		if (ret->ring)
			cap += ret->nring;
	}
	if (!rs->count)
		return rs->unmatched || rs->unended || rs->dropped;
	v = cap ? malloc(cap * sizeof(*v)) : NULL;
	for (unsigned m = 0; m < w; m++) {
		rs->s[m].sz = sizeof(rs->s[m]);
		n = 0;
		for (struct rthread *t = G.threads; t && v; t = t->next) {
			const struct store *st = t->store[id];
			if (!st || !st->ring)
				continue;
			uint64_t k = st->count < G.ring ? st->count : G.ring;
			for (uint64_t i = 0; i < k; i++)
				v[n++] = (double)st->ring[i * w + m] - G.overhead[m];
		}
		for (uint64_t i = 0; ret && ret->ring && v && i < ret->nring; i++)
			v[n++] = (double)ret->ring[i * w + m] - G.overhead[m];
		if (n)
			pmon_summarize(v, n, G.cull_k, &rs->s[m]);
		rs->total[m] = (double)rs->raw[m] - G.overhead[m] * (double)rs->count;
		/* Below 0 within the overhead's own error: 0, marked as such. */
		rs->clamped[m] = pmon__summary_clamp(n ? &rs->s[m] : NULL, ov_err(m), &rs->total[m],
						     ov_err(m) * (double)rs->count);
	}
	rs->kept_samples = n;
	free(v);
	return true;
}

static const char *region_label(unsigned id, char *buf, size_t len)
{
	if (G.names[id][0])
		return G.names[id];
	snprintf(buf, len, "region %u", id);
	return buf;
}

/* ---- pmon simulate --regions (docs/simulate.md) -------------------------
 * Under valgrind's callgrind started with --collect-atstart=no, a client
 * request switches collection on when a thread opens its first region and
 * off when it ends its last, so nothing outside regions is simulated
 * (callgrind keeps the switch per thread). Each time another region starts
 * collecting, a dump labelled "pmon-region ID NAME" closes the part before
 * it (a dump zeroes the costs), so each part of callgrind's output holds
 * one region's costs: lib/sim/regions.c reads them back. Begin's event
 * read and end's entry are the library's only calls on the hot path, so
 * the switch is there; the few instructions between it and the region's
 * own code (the TSC reads, the call) are simulated with the region. The
 * overhead measurement's id is never switched. */
static __thread unsigned sim_depth; /* regions open on this thread */
static int sim_pending = -1; /* the region whose costs callgrind holds now */

static void sim_begin(struct pmon__rthread *pt, const uint64_t *v)
{
#ifdef HAVE_CALLGRIND
	/* begin reads into its slot's v0 before it marks the slot open */
	size_t off = (size_t)((const unsigned char *)v - pt->slot) - sizeof(struct pmon__rslot);
	unsigned id = (unsigned)(off / pt->stride);
	char label[64 + 32], num[32];

	if (id == OV_ID || slot_of(pt, id)->open || sim_depth++)
		return;
	if (__atomic_exchange_n(&sim_pending, (int)id, __ATOMIC_RELAXED) != (int)id) {
		snprintf(label, sizeof(label), "pmon-region %u %s", id,
			 region_label(id, num, sizeof(num)));
		CALLGRIND_DUMP_STATS_AT(label);
	}
	CALLGRIND_TOGGLE_COLLECT;
#else
	(void)pt, (void)v;
#endif
}

static void sim_end(struct pmon__rthread *pt, unsigned id)
{
#ifdef HAVE_CALLGRIND
	if (id != OV_ID && slot_of(pt, id)->open && sim_depth && !--sim_depth)
		CALLGRIND_TOGGLE_COLLECT;
#else
	(void)pt, (void)id;
#endif
}

/* The note under a metric whose values went below 0 once the overhead was
 * subtracted: they are 0 within the overhead's error, or the overhead does
 * not fit this region. */
static void print_clamped(FILE *f, const struct region_sum *rs, unsigned m)
{
	if (rs->clamped[m] & PMON__CLAMPED)
		fprintf(f,
			"%-16s %9s %s: values below 0 shown as 0: within +-%.0f a pair of the "
			"overhead "
			"(its spread)\n",
			"", "", metric_name(m), ov_err(m));
	if (rs->clamped[m] & PMON__BELOW)
		fprintf(f,
			"%-16s %9s %s: negative values are below 0 by more than the overhead's "
			"spread (+-%.0f): the overhead measured at set-up does not fit this "
			"region\n",
			"", "", metric_name(m), ov_err(m));
}

/* The JSON word and CSV field for pmon__summary_clamp()'s bits. */
static const char *clamp_word(unsigned c)
{
	return c & PMON__BELOW ? "beyond-error" : c & PMON__CLAMPED ? "within-error" : "";
}

static void report_table(FILE *f)
{
	char label[32];

	fprintf(f, "\npmon regions (pid %d)\n", (int)getpid());
	fprintf(f, "  TSC read:  %s (advances in steps of %.0f ticks)\n", fence_text(G.fence),
		G.tsc_step);
	if (G.nev) {
		fprintf(f, "  events:    ");
		for (unsigned e = 0; e < G.nev; e++)
			fprintf(f, "%s%s", e ? ", " : "", pmon_evlist__event(G.ev, e)->name);
		fprintf(f, " -- read with %s%s%s\n",
			G.rdpmc ? "rdpmc" : "one read() of a per-thread group", G.rdpmc ? "" : ": ",
			G.rdpmc ? "" : G.read_why);
		if (G.event_open_failed)
			fprintf(f,
				"             the events could not be opened on %llu of %llu "
				"threads: their pairs are dropped\n",
				(unsigned long long)G.event_open_failed,
				(unsigned long long)G.threads_seen);
	} else {
		fprintf(f,
			"  events:    none (TSC only; set PMON_EVENTS, or the events of "
			"pmon_region_init())\n");
	}
	fprintf(f,
		"  overhead:  subtracted from every sample, the 5th percentile of %u empty pairs "
		"(after %d warm-up pairs);\n             its spread (median, 95th percentile) "
		"after it:",
		G.overhead_runs, OV_WARMUP);
	for (unsigned m = 0; m <= G.nev; m++)
		fprintf(f, "%s %s %.0f (%.0f, %.0f)", m ? "," : "", metric_name(m), G.overhead[m],
			G.ov_median[m], G.ov_high[m]);
	fprintf(f,
		"\n             total: exact, less the overhead of each pair; raw total: exact, "
		"as read");
	if (G.warmup)
		fprintf(f,
			"\n  warm-up:   the first %u pairs of each region and thread are left out",
			G.warmup);
	fprintf(f, "\n  culling:   %s\n",
		G.cull_k ? "samples with |x - median| > k x MAD are left out of min..max, mean, "
			   "stddev, p5, p95"
			 : "none");
	if (G.cull_k)
		fprintf(f,
			"             (k = %.1f; where MAD = 0 the mean absolute deviation is the "
			"scale)\n",
			G.cull_k);
	fprintf(f,
		"\n%-16s %9s %-22s %14s %16s %12s %12s %12s %11s %12s %12s %12s %12s %10s "
		"%7s\n",
		"region", "pairs", "metric [unit]", "total", "raw total", "median", "mode", "mean",
		"stddev", "min", "p5", "p95", "max", "MAD", "culled");
	for (unsigned id = 0; id < OV_ID; id++) {
		struct region_sum rs;
		if (!gather(id, &rs))
			continue;
		for (unsigned m = 0; m <= G.nev && rs.count; m++) {
			const struct pmon_summary *s = &rs.s[m];
			char pairs[24] = "", metric[160];
			if (!m)
				snprintf(pairs, sizeof(pairs), "%llu",
					 (unsigned long long)rs.count);
			snprintf(metric, sizeof(metric), "%s [%s]", metric_name(m), metric_unit(m));
			fprintf(f,
				"%-16.16s %9s %-22.22s %14.0f %16llu %12.1f %12.1f %12.1f %11.1f "
				"%12.1f %12.1f %12.1f %12.1f %10.1f %7zu\n",
				m ? "" : region_label(id, label, sizeof(label)), pairs, metric,
				rs.total[m], (unsigned long long)rs.raw[m], s->median, s->mode,
				s->mean, s->stddev, s->min, s->p5, s->p95, s->max, s->mad,
				s->culled);
			print_clamped(f, &rs, m);
		}
		if (!rs.count)
			fprintf(f, "%-16.16s %9s no pair completed\n",
				region_label(id, label, sizeof(label)), "0");
		if (rs.count && (rs.threads > 1 || rs.kept_samples < rs.count))
			fprintf(f,
				"%-16s %9s %llu thread(s); statistics over the last %zu samples\n",
				"", "", (unsigned long long)rs.threads, rs.kept_samples);
		if (rs.unmatched)
			fprintf(f, "%-16s %9s %llu end(s) without a begin\n", "", "",
				(unsigned long long)rs.unmatched);
		if (rs.unended)
			fprintf(f, "%-16s %9s %llu begin(s) never ended\n", "", "",
				(unsigned long long)rs.unended);
		if (rs.dropped)
			fprintf(f, "%-16s %9s %llu pair(s) dropped: the events could not be read\n",
				"", "", (unsigned long long)rs.dropped);
		if (rs.shared)
			fprintf(f,
				"%-16s %9s %llu pair(s) ended while the counters were time-shared "
				"(multiplexed): their event counts cover only part of the pair\n",
				"", "", (unsigned long long)rs.shared);
	}
}

static void report_csv(FILE *f)
{
	char label[32];

	fprintf(f,
		"region,id,pairs,threads,metric,total,median,mode,mean,stddev,min,p5,p95,max,mad,"
		"culled,samples,unmatched,unended,dropped,time_shared,raw_total,clamped,error\n");
	for (unsigned id = 0; id < OV_ID; id++) {
		struct region_sum rs;
		if (!gather(id, &rs))
			continue;
		for (unsigned m = 0; m <= G.nev; m++) {
			const struct pmon_summary *s = &rs.s[m];
			fprintf(f,
				"%s,%u,%llu,%llu,%s,%.0f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%."
				"2f,%zu,%zu,%llu,%llu,%llu,%llu,%llu,%s,%.2f\n",
				region_label(id, label, sizeof(label)), id,
				(unsigned long long)rs.count, (unsigned long long)rs.threads,
				metric_name(m), rs.total[m], s->median, s->mode, s->mean, s->stddev,
				s->min, s->p5, s->p95, s->max, s->mad, s->culled, s->n,
				(unsigned long long)rs.unmatched, (unsigned long long)rs.unended,
				(unsigned long long)rs.dropped, (unsigned long long)rs.shared,
				(unsigned long long)rs.raw[m], clamp_word(rs.clamped[m]),
				ov_err(m));
		}
	}
}

static void report_json(FILE *f)
{
	json_t *root = json_object(), *regions = json_array(), *evs = json_array(),
	       *ov = json_object();
	char label[32];

	json_object_set_new(root, "schema", json_string("pmon-regions/1"));
	json_object_set_new(root, "pid", json_integer(getpid()));
	json_object_set_new(root, "tsc_read", json_string(fence_text(G.fence)));
	json_object_set_new(root, "tsc_step", json_real(G.tsc_step));
	for (unsigned e = 0; e < G.nev; e++)
		json_array_append_new(evs,
				      json_pack("{s:s, s:s}", "name",
						pmon_evlist__event(G.ev, e)->name, "read",
						G.rdpmc ? "rdpmc" : "read"));
	json_object_set_new(root, "events", evs);
	if (!G.rdpmc && G.nev)
		json_object_set_new(root, "rdpmc_unavailable", json_string(G.read_why));
	json_object_set_new(root, "threads_events_failed",
			    json_integer((json_int_t)G.event_open_failed));
	for (unsigned m = 0; m <= G.nev; m++)
		json_object_set_new(ov, metric_name(m), json_real(G.overhead[m]));
	json_object_set_new(root, "overhead", ov);
	ov = json_object();
	for (unsigned m = 0; m <= G.nev; m++)
		json_object_set_new(ov, metric_name(m),
				    json_pack("{s:f, s:f, s:f, s:f}", "subtracted", G.overhead[m],
					      "median", G.ov_median[m], "p95", G.ov_high[m],
					      "error", ov_err(m)));
	json_object_set_new(root, "overhead_spread", ov);
	json_object_set_new(root, "overhead_runs", json_integer(G.overhead_runs));
	json_object_set_new(root, "cull_k", json_real(G.cull_k));
	json_object_set_new(root, "warmup", json_integer(G.warmup));
	for (unsigned id = 0; id < OV_ID; id++) {
		struct region_sum rs;
		json_t *metrics = json_array();
		if (!gather(id, &rs)) {
			json_decref(metrics);
			continue;
		}
		for (unsigned m = 0; rs.count && m <= G.nev; m++) {
			const struct pmon_summary *s = &rs.s[m];
			json_t *mj;
			json_array_append_new(
				metrics,
				json_pack("{s:s, s:s, s:f, s:f, s:f, s:I, s:f, s:f, s:f, s:f, s:f, "
					  "s:f, s:f, s:I, s:I}",
					  "name", metric_name(m), "unit", metric_unit(m), "total",
					  rs.total[m], "median", s->median, "mode", s->mode,
					  "mode_count", (json_int_t)s->mode_count, "mean", s->mean,
					  "stddev", s->stddev, "min", s->min, "p5", s->p5, "p95",
					  s->p95, "max", s->max, "mad", s->mad, "culled",
					  (json_int_t)s->culled, "samples", (json_int_t)s->n));
			mj = json_array_get(metrics, json_array_size(metrics) - 1);
			json_object_set_new(mj, "raw_total", json_integer((json_int_t)rs.raw[m]));
			if (rs.clamped[m])
				json_object_set_new(mj, "clamped",
						    json_string(clamp_word(rs.clamped[m])));
		}
		json_array_append_new(
			regions,
			json_pack("{s:i, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:o}", "id", (int)id,
				  "name", region_label(id, label, sizeof(label)), "pairs",
				  (json_int_t)rs.count, "unmatched", (json_int_t)rs.unmatched,
				  "unended", (json_int_t)rs.unended, "dropped",
				  (json_int_t)rs.dropped, "time_shared", (json_int_t)rs.shared,
				  "threads", (json_int_t)rs.threads, "metrics", metrics));
	}
	json_object_set_new(root, "regions", regions);
	json_dumpf(root, f, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
	fputc('\n', f);
	json_decref(root);
}

int pmon_region_report(FILE *f, enum pmon_report_format fmt)
{
	struct pmon_output *rout = NULL;
	bool own = false;
	int err = 0;

	locale_t loc;

	if (!__atomic_load_n(&G.ready, __ATOMIC_ACQUIRE))
		return pmon__err(-EINVAL, "regions are not set up");
	if (!f) {
		if (G.output[0]) {
			if (!(rout = open_report(G.output))) {
				report_unopened = true;
				return -errno; /* the detail names the file and why */
			}
			f = pmon_output__file(rout);
			own = true;
		} else {
			f = stderr;
		}
	}
	/* Numbers with '.' whatever locale the program chose. */
	loc = pmon__c_locale_enter();
	pthread_mutex_lock(&G.lock);
	switch (fmt) {
	case PMON_REPORT_CSV:
		report_csv(f);
		break;
	case PMON_REPORT_JSON:
		report_json(f);
		break;
	default:
		report_table(f);
	}
	pthread_mutex_unlock(&G.lock);
	pmon__c_locale_leave(loc);
	if (fflush(f) || ferror(f))
		err = -EIO;
	int cerr = own ? pmon_output__commit(rout) : 0;
	if (cerr && !err)
		err = cerr;
	return err;
}
