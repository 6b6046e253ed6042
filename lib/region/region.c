// SPDX-License-Identifier: MIT
/*
 * The region runtime (pmon/region.h): per-thread state and sample rings,
 * set-up from code or the environment, the overhead of an empty pair, and
 * the report. The hot path is inline in the header; what is here runs once
 * per thread (set-up) or once per pair after the end reads (recording).
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

#include "internal.h"
#include <pmon/counter.h>
#include <pmon/cpu.h>
#include <pmon/event.h>
#include <pmon/region.h>
#include <pmon/stats.h>

#define NMETRIC (1 + PMON_REGION_MAX_EVENTS) /* the TSC, then each event */

struct store {
	uint64_t warm; /* warm-up pairs seen and left out */
	uint64_t count; /* completed pairs (exact, never lost) */
	uint64_t unmatched; /* ends without a begin */
	uint64_t sum[NMETRIC];
	uint64_t *ring; /* ring[i * (1 + nev) + m] */
};

struct rthread {
	struct pmon__rthread pub; /* first: the header's view */
	struct pmon_selfgroup *grp;
	pid_t tid;
	struct store store[PMON_REGION_MAX + 1];
	struct rthread *next;
};

static struct {
	pthread_mutex_t lock;
	bool inited;
	bool ready; /* set-up complete: other threads may open their events */
	int init_err;
	char init_detail[320];
	struct pmon_evlist *ev;
	unsigned nev;
	enum pmon_fence fence;
	unsigned ring;
	unsigned warmup;
	double cull_k;
	unsigned overhead_runs;
	char output[512];
	enum pmon_report_format format;
	double overhead[NMETRIC];
	bool rdpmc;
	char read_why[200];
	char names[PMON_REGION_MAX][64];
	struct rthread *threads;
	pthread_key_t key;
} G = { .lock = PTHREAD_MUTEX_INITIALIZER };

__thread struct pmon__rthread *pmon__rt __attribute__((tls_model("initial-exec")));

/* ---- recording --------------------------------------------------------- */

void pmon__region_read(struct pmon__rthread *pt, uint64_t *v)
{
	struct rthread *t = (struct rthread *)pt;

	pmon_selfgroup__read(t->grp, v);
}

void pmon__region_record(struct pmon__rthread *pt, unsigned id, uint64_t t1, const uint64_t *v1)
{
	struct rthread *t = (struct rthread *)pt;
	struct pmon__rslot *sl = &pt->slot[id];
	struct store *st = &t->store[id];
	unsigned w = 1 + pt->nev;

	if (!sl->open) {
		st->unmatched++;
		return;
	}
	sl->open = 0;
	if (st->warm < G.warmup && id < PMON_REGION_MAX) {
		st->warm++;
		return;
	}
	if (!st->ring) {
		st->ring = malloc((size_t)G.ring * w * sizeof(uint64_t));
		if (!st->ring) {
			st->unmatched++;
			return;
		}
	}
	/* The ring is a power of two: a mask, not a division (~25 cycles). */
	uint64_t *r = &st->ring[(st->count & (G.ring - 1)) * w];
	r[0] = t1 - sl->t0;
	st->sum[0] += r[0];
	for (unsigned e = 0; e < pt->nev; e++) {
		r[1 + e] = v1[e] - sl->v0[e];
		st->sum[1 + e] += r[1 + e];
	}
	st->count++;
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

static void thread_gone(void *p)
{
	struct rthread *t = p;

	/* Keep the samples for the report; the counters go with the thread. */
	pthread_mutex_lock(&G.lock);
	pmon_selfgroup__close(t->grp);
	t->grp = NULL;
	t->pub.nev = 0;
	pthread_mutex_unlock(&G.lock);
}

static struct rthread *thread_new(void)
{
	struct rthread *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->pub.fence = G.fence;
	t->tid = (pid_t)syscall(SYS_gettid);
	if (G.nev) {
		int err = pmon_selfgroup__open(G.ev, &t->grp);
		if (err) {
			free(t);
			return NULL;
		}
		t->pub.nev = G.nev;
	}
	pthread_mutex_lock(&G.lock);
	t->next = G.threads;
	G.threads = t;
	pthread_mutex_unlock(&G.lock);
	pthread_setspecific(G.key, t);
	pmon__rt = &t->pub;
	return t;
}

static void at_exit(void)
{
	pmon_region_report(NULL, G.format);
}

/* Not a constant: the pair below must load its id like user code does. */
static volatile unsigned ov_id = PMON_REGION_MAX;

static int measure_overhead(struct rthread *t)
{
	unsigned n = G.overhead_runs, w = 1 + G.nev;
	struct store *st = &t->store[PMON_REGION_MAX];
	double *v = malloc(n * sizeof(*v));

	if (!v)
		return -ENOMEM;
	/* Warm up, then measure the very calls users make: the thread pointer
	 * loaded from TLS and checked inside the timed window, as in theirs. */
	for (unsigned i = 0; i < 64 + n; i++) {
		if (i == 64) {
			st->count = 0;
			memset(st->sum, 0, sizeof(st->sum));
		}
		pmon_region_begin(ov_id);
		pmon_region_end(ov_id);
	}
	for (unsigned m = 0; m < w; m++) {
		struct pmon_summary s;
		unsigned k = n < G.ring ? n : G.ring;
		for (unsigned i = 0; i < k; i++)
			v[i] = (double)st->ring[i * w + m];
		pmon_summarize(v, k, 0, &s);
		G.overhead[m] = s.median;
	}
	free(v);
	st->count = 0;
	memset(st->sum, 0, sizeof(st->sum));
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

int pmon_region_init(const struct pmon_region_opts *opts)
{
	struct pmon_region_opts o = { .sz = sizeof(o), .report_at_exit = true };
	const char *events, *out;
	struct rthread *t = NULL;
	int err;

	if (opts) {
		if (opts->sz < sizeof(size_t) || opts->sz > sizeof(o))
			return pmon__err(-EINVAL, "pmon_region_opts: unknown size %zu", opts->sz);
		memcpy(&o, opts, opts->sz);
	}
	pthread_mutex_lock(&G.lock);
	if (G.inited) {
		pthread_mutex_unlock(&G.lock);
		return pmon__err(-EALREADY, "regions are already set up");
	}
	G.inited = true;
	pthread_mutex_unlock(&G.lock);

	events = o.events ? o.events : getenv("PMON_EVENTS");
	out = o.output ? o.output : getenv("PMON_OUTPUT");
	G.ring = 4096;
	if (o.ring) {
		if (o.ring > (1u << 24))
			return pmon__err(-EINVAL, "ring of %u samples: at most %u", o.ring,
					 1u << 24);
		for (G.ring = 1; G.ring < o.ring;) /* round up to a power of two */
			G.ring <<= 1;
	}
	G.cull_k = o.cull_k < 0 ? 0 : o.cull_k > 0 ? o.cull_k : 5.0;
	G.warmup = o.warmup;
	if (!G.warmup && getenv("PMON_WARMUP")) {
		uint64_t w;
		if (pmon__parse_u64(getenv("PMON_WARMUP"), 10, &w) || w > 1000000)
			return pmon__err(-EINVAL, "PMON_WARMUP '%s': expected 0..1000000",
					 getenv("PMON_WARMUP"));
		G.warmup = (unsigned)w;
	}
	G.overhead_runs = o.overhead_runs ? o.overhead_runs : 2000;
	G.format = o.format;
	G.fence = o.fence;
	err = 0;
	if (!opts || !o.format)
		err = parse_env_format(getenv("PMON_FORMAT"), &G.format);
	if (!err && (!opts || !o.fence))
		err = parse_fence(getenv("PMON_FENCE"), &G.fence);
	if (!err && G.fence == PMON_FENCE_AUTO)
		G.fence = cpu_has_rdtscp() ? PMON_FENCE_RDTSCP : PMON_FENCE_LFENCE;
	if (!err && G.fence == PMON_FENCE_RDTSCP && !cpu_has_rdtscp())
		err = pmon__err(-EOPNOTSUPP,
				"this CPU has no RDTSCP (CPUID.80000001H:EDX[27] = 0): "
				"use the lfence method");
	if (out)
		pmon__strlcpy(G.output, out, sizeof(G.output));
	G.ev = pmon_evlist__new(NULL);
	if (!err && !G.ev)
		err = -ENOMEM;
	if (!err && events && *events) {
		err = pmon_evlist__add(G.ev, events);
		if (!err && pmon_evlist__count(G.ev) > PMON_REGION_MAX_EVENTS)
			err = pmon__err(-E2BIG, "%zu events: regions read at most %d per pair",
					pmon_evlist__count(G.ev), PMON_REGION_MAX_EVENTS);
	}
	if (!err)
		G.nev = (unsigned)pmon_evlist__count(G.ev);
	if (!err)
		err = pthread_key_create(&G.key, thread_gone) ? -EAGAIN : 0;
	if (!err) {
		t = thread_new();
		if (!t)
			err = pmon_errdetail()[0] ? -EINVAL : -ENOMEM;
	}
	if (!err) {
		const char *why = NULL;
		G.rdpmc = G.nev && pmon_selfgroup__rdpmc(t->grp, &why);
		pmon__strlcpy(G.read_why, why ? why : "", sizeof(G.read_why));
		err = measure_overhead(t);
	}
	if (err) {
		G.init_err = err;
		pmon__strlcpy(G.init_detail, pmon_errdetail(), sizeof(G.init_detail));
		return err;
	}
	if (o.report_at_exit)
		atexit(at_exit);
	__atomic_store_n(&G.ready, true, __ATOMIC_RELEASE);
	return 0;
}

static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static void env_init(void)
{
	if (!__atomic_load_n(&G.inited, __ATOMIC_ACQUIRE))
		pmon_region_init(NULL);
}

struct pmon__rthread *pmon__region_thread(void)
{
	struct rthread *t;

	/* A program that calls begin without set-up is configured from the
	 * environment (pmon stat --regions, LIKWID's marker mode); threads that
	 * arrive meanwhile wait here until the set-up is complete. */
	pthread_once(&env_once, env_init);
	if (G.init_err || !__atomic_load_n(&G.ready, __ATOMIC_ACQUIRE))
		return NULL;
	if (pmon__rt)
		return pmon__rt; /* the thread that ran the set-up */
	t = thread_new();
	return t ? &t->pub : NULL;
}

int pmon_region_id(const char *name)
{
	int id = -ENOSPC;

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

void pmon_region_reset(void)
{
	pthread_mutex_lock(&G.lock);
	for (struct rthread *t = G.threads; t; t = t->next)
		for (unsigned r = 0; r < PMON_REGION_MAX; r++) {
			t->store[r].count = t->store[r].unmatched = t->store[r].warm = 0;
			memset(t->store[r].sum, 0, sizeof(t->store[r].sum));
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
	uint64_t count, unmatched, threads;
	double total[NMETRIC];
	struct pmon_summary s[NMETRIC];
	size_t kept_samples;
};

/* Gather region @id over every thread; false when it has no pairs. */
static bool gather(unsigned id, struct region_sum *rs)
{
	unsigned w = 1 + G.nev;
	size_t cap = 0, n = 0;
	double *v;

	memset(rs, 0, sizeof(*rs));
	rs->id = id;
	for (struct rthread *t = G.threads; t; t = t->next) {
		struct store *st = &t->store[id];
		if (!st->count && !st->unmatched)
			continue;
		rs->threads++;
		rs->count += st->count;
		rs->unmatched += st->unmatched;
		for (unsigned m = 0; m < w; m++)
			rs->total[m] += (double)st->sum[m];
		cap += st->count < G.ring ? st->count : G.ring;
	}
	if (!rs->count)
		return rs->unmatched > 0;
	v = malloc(cap * sizeof(*v));
	if (!v)
		return false;
	for (unsigned m = 0; m < w; m++) {
		n = 0;
		for (struct rthread *t = G.threads; t; t = t->next) {
			struct store *st = &t->store[id];
			uint64_t k = st->count < G.ring ? st->count : G.ring;
			for (uint64_t i = 0; i < k; i++)
				v[n++] = (double)st->ring[i * w + m] - G.overhead[m];
		}
		pmon_summarize(v, n, G.cull_k, &rs->s[m]);
		rs->total[m] -= G.overhead[m] * (double)rs->count;
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

static void report_table(FILE *f)
{
	char label[32];

	fprintf(f, "\npmon regions (pid %d)\n", (int)getpid());
	fprintf(f, "  TSC read:  %s\n", fence_text(G.fence));
	if (G.nev) {
		fprintf(f, "  events:    ");
		for (unsigned e = 0; e < G.nev; e++)
			fprintf(f, "%s%s", e ? ", " : "", pmon_evlist__event(G.ev, e)->name);
		fprintf(f, " -- read with %s%s%s\n",
			G.rdpmc ? "rdpmc" : "one read() of a per-thread group", G.rdpmc ? "" : ": ",
			G.rdpmc ? "" : G.read_why);
	} else {
		fprintf(f,
			"  events:    none (TSC only; set PMON_EVENTS or pmon stat --regions "
			"-e)\n");
	}
	fprintf(f, "  overhead:  subtracted from every sample, the median of %u empty pairs:",
		G.overhead_runs);
	for (unsigned m = 0; m <= G.nev; m++)
		fprintf(f, "%s %s %.0f", m ? "," : "", metric_name(m), G.overhead[m]);
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
	fprintf(f, "\n%-16s %9s %-22s %14s %12s %12s %12s %11s %12s %12s %12s %12s %10s %7s\n",
		"region", "pairs", "metric [unit]", "total", "median", "mode", "mean", "stddev",
		"min", "p5", "p95", "max", "MAD", "culled");
	for (unsigned id = 0; id < PMON_REGION_MAX; id++) {
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
				"%-16.16s %9s %-22.22s %14.0f %12.1f %12.1f %12.1f %11.1f %12.1f "
				"%12.1f %12.1f %12.1f %10.1f %7zu\n",
				m ? "" : region_label(id, label, sizeof(label)), pairs, metric,
				rs.total[m], s->median, s->mode, s->mean, s->stddev, s->min, s->p5,
				s->p95, s->max, s->mad, s->culled);
		}
		if (rs.count && (rs.threads > 1 || rs.kept_samples < rs.count || rs.unmatched))
			fprintf(f,
				"%-16s %9s %llu thread(s); statistics over the last %zu "
				"samples%s\n",
				"", "", (unsigned long long)rs.threads, rs.kept_samples,
				rs.unmatched ? "; some ends had no begin" : "");
		else if (!rs.count)
			fprintf(f, "%-16.16s %9s %llu end(s) without a begin\n",
				region_label(id, label, sizeof(label)), "0",
				(unsigned long long)rs.unmatched);
	}
}

static void report_csv(FILE *f)
{
	char label[32];

	fprintf(f,
		"region,id,pairs,threads,metric,total,median,mode,mean,stddev,min,p5,p95,max,mad,"
		"culled,samples\n");
	for (unsigned id = 0; id < PMON_REGION_MAX; id++) {
		struct region_sum rs;
		if (!gather(id, &rs) || !rs.count)
			continue;
		for (unsigned m = 0; m <= G.nev; m++) {
			const struct pmon_summary *s = &rs.s[m];
			fprintf(f,
				"%s,%u,%llu,%llu,%s,%.0f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%."
				"2f,%zu,%zu\n",
				region_label(id, label, sizeof(label)), id,
				(unsigned long long)rs.count, (unsigned long long)rs.threads,
				metric_name(m), rs.total[m], s->median, s->mode, s->mean, s->stddev,
				s->min, s->p5, s->p95, s->max, s->mad, s->culled, s->n);
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
	for (unsigned e = 0; e < G.nev; e++)
		json_array_append_new(evs,
				      json_pack("{s:s, s:s}", "name",
						pmon_evlist__event(G.ev, e)->name, "read",
						G.rdpmc ? "rdpmc" : "read"));
	json_object_set_new(root, "events", evs);
	if (!G.rdpmc && G.nev)
		json_object_set_new(root, "rdpmc_unavailable", json_string(G.read_why));
	for (unsigned m = 0; m <= G.nev; m++)
		json_object_set_new(ov, metric_name(m), json_real(G.overhead[m]));
	json_object_set_new(root, "overhead", ov);
	json_object_set_new(root, "overhead_runs", json_integer(G.overhead_runs));
	json_object_set_new(root, "cull_k", json_real(G.cull_k));
	json_object_set_new(root, "warmup", json_integer(G.warmup));
	for (unsigned id = 0; id < PMON_REGION_MAX; id++) {
		struct region_sum rs;
		json_t *metrics = json_array();
		if (!gather(id, &rs)) {
			json_decref(metrics);
			continue;
		}
		for (unsigned m = 0; rs.count && m <= G.nev; m++) {
			const struct pmon_summary *s = &rs.s[m];
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
		}
		json_array_append_new(regions,
				      json_pack("{s:i, s:s, s:I, s:I, s:I, s:o}", "id", (int)id,
						"name", region_label(id, label, sizeof(label)),
						"pairs", (json_int_t)rs.count, "unmatched",
						(json_int_t)rs.unmatched, "threads",
						(json_int_t)rs.threads, "metrics", metrics));
	}
	json_object_set_new(root, "regions", regions);
	json_dumpf(root, f, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
	fputc('\n', f);
	json_decref(root);
}

int pmon_region_report(FILE *f, enum pmon_report_format fmt)
{
	bool own = false;
	int err = 0;

	if (G.init_err)
		return pmon__err(G.init_err, "%s", G.init_detail);
	if (!G.inited)
		return pmon__err(-EINVAL, "regions are not set up");
	if (!f) {
		if (G.output[0]) {
			f = fopen(G.output, "ae");
			if (!f)
				return pmon__err(-errno, "%s: %s", G.output, strerror(errno));
			own = true;
		} else {
			f = stderr;
		}
	}
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
	if (fflush(f) || ferror(f))
		err = -EIO;
	if (own && fclose(f))
		err = -errno;
	return err;
}
