// SPDX-License-Identifier: MIT
/*
 * stat's engine (pmon/monitor.h): counters read in intervals with deltas
 * taken before scaling, derived metrics, repeat statistics and the
 * interval ticker. stat, top (and later serve and trace) only render what
 * this computes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include <pmon/monitor.h>

/* ---- deltas ----------------------------------------------------------- */

/* The bodies of pmon_count__scale() and pmon_count__delta(), inline here:
 * a reading takes one delta per unit and event (an exported function is
 * not inlined into its callers in a shared library). */
static inline double count_scale(uint64_t raw, uint64_t enabled, uint64_t running)
{
	if (!running || running >= enabled)
		return (double)raw;
	return (double)raw * ((double)enabled / (double)running);
}

static uint64_t sub(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

static inline void count_delta(const struct pmon_count *prev, const struct pmon_count *cur,
			       double scale, struct pmon_count *out)
{
	struct pmon_count d = *cur;

	/* perf's evsel__compute_deltas(): raw, enabled and running each
	 * minus the previous reading, and only then the scaling. */
	if (prev && prev->status != PMON_COUNT_NOT_SUPPORTED) {
		d.raw = sub(cur->raw, prev->raw);
		d.enabled = sub(cur->enabled, prev->enabled);
		d.running = sub(cur->running, prev->running);
	}
	d.value = count_scale(d.raw, d.enabled, d.running) * (scale > 0 ? scale : 1.0);
	d.running_pct = d.enabled ? 100.0 * (double)d.running / (double)d.enabled : 0;
	if (d.running_pct > 100)
		d.running_pct = 100;
	if (cur->status == PMON_COUNT_OK && !d.running)
		d.status = PMON_COUNT_NOT_COUNTED;
	if (d.status != PMON_COUNT_OK)
		d.value = 0;
	*out = d;
}

double pmon_count__scale(uint64_t raw, uint64_t enabled, uint64_t running)
{
	return count_scale(raw, enabled, running);
}

void pmon_count__delta(const struct pmon_count *prev, const struct pmon_count *cur, double scale,
		       struct pmon_count *out)
{
	count_delta(prev, cur, scale, out);
}

/* ---- the monitor ------------------------------------------------------ */

struct pmon_monitor {
	const struct pmon_evlist *list;
	struct pmon_counters *c;
	size_t nev, nunits;
	struct pmon_count *base; /* [unit][event]: the previous reading */
	struct pmon_count *now; /* one unit's reading */
	/* [e]: sized at open, so that a reading allocates nothing (an agent
	 * reads every second for months: pmon serve, top) */
	double *sum; /* the scaled deltas summed over units */
	double *scale; /* each event's unit scale, looked up once */
	bool have_base;
	double tbase;
	bool exec_enables; /* the target's enable_on_exec */
};

double pmon_monotonic_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void pmon_monitor__close(struct pmon_monitor *m)
{
	if (!m)
		return;
	pmon_counters__close(m->c);
	free(m->base);
	free(m->now);
	free(m->sum);
	free(m->scale);
	free(m);
}

struct pmon_monitor *pmon_monitor__open(const struct pmon_evlist *events,
					const struct pmon_target *target,
					const struct pmon_open_opts *opts)
{
	struct pmon_monitor *m = calloc(1, sizeof(*m));
	int e;

	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	m->c = pmon_counters__open(events, target, opts);
	if (!m->c) {
		e = errno;
		free(m);
		errno = e;
		return NULL;
	}
	m->list = events;
	m->nev = pmon_evlist__count(events);
	m->nunits = pmon_counters__nunits(m->c);
	m->exec_enables = PMON_OPTS_GET(opts, enable_on_exec, false); /* checked at open */
	m->base = calloc(m->nunits * m->nev, sizeof(*m->base));
	m->now = calloc(m->nev, sizeof(*m->now));
	m->sum = calloc(m->nev, sizeof(*m->sum));
	m->scale = calloc(m->nev, sizeof(*m->scale));
	if (!m->base || !m->now || !m->sum || !m->scale) {
		pmon_monitor__close(m);
		errno = ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < m->nev; i++)
		m->scale[i] = pmon_evlist__event(events, i)->scale;
	if (pmon_monitor__rebase(m)) {
		e = errno;
		pmon_monitor__close(m);
		errno = e;
		return NULL;
	}
	return m;
}

struct pmon_counters *pmon_monitor__counters(struct pmon_monitor *m)
{
	return m->c;
}

/*
 * A reading's time is the mean of its units' read times, each the middle
 * of the clock taken around its own read: unit u's delta spans from its
 * read in one reading to its read in the next, so the summed deltas span
 * nunits x the difference of the means. A time taken after one reading's
 * reads and before the next's left them out of the interval: top's first
 * interval after a reopen, microseconds long, showed cpu-clock at 3000
 * msec/s on 2 CPUs.
 */
static int read_unit(struct pmon_monitor *m, size_t u, struct pmon_count *dst, double *tsum)
{
	double t0 = pmon_monotonic_s();
	int err = pmon_counters__read_unit(m->c, u, dst);

	*tsum += (t0 + pmon_monotonic_s()) / 2;
	return err;
}

static double reading_time(const struct pmon_monitor *m, double tsum)
{
	return m->nunits ? tsum / (double)m->nunits : pmon_monotonic_s();
}

int pmon_monitor__rebase(struct pmon_monitor *m)
{
	double tsum = 0;

	for (size_t u = 0; u < m->nunits; u++) {
		int err = read_unit(m, u, m->base + u * m->nev, &tsum);
		if (err) {
			errno = -err;
			return err;
		}
	}
	m->tbase = reading_time(m, tsum);
	m->have_base = true;
	return 0;
}

int pmon_monitor__start(struct pmon_monitor *m, struct pmon_child *child)
{
	int err = 0;

	/*
	 * Counters on the child's own task start at its exec; CPU-wide ones
	 * (system-wide, -C) cannot (pmon_counters__open() leaves them
	 * disabled), so they start now, as the child is released: they also
	 * count the few microseconds of its exec. Enabling the exec-started
	 * ones too would count the child's wait; they are left alone.
	 */
	bool cpu_wide = false;
	for (size_t u = 0; u < m->nunits; u++) {
		int cpu;
		pid_t tid;
		pmon_counters__unit(m->c, u, &cpu, &tid);
		cpu_wide |= tid == -1;
	}
	if (cpu_wide || !m->exec_enables || !child)
		err = pmon_counters__enable(m->c);
	if (!err)
		err = pmon_monitor__rebase(m);
	if (!err && child && child->pid > 0)
		err = pmon_child__start(child);
	return err;
}

int pmon_monitor__read_delta(struct pmon_monitor *m, struct pmon_count *out,
			     struct pmon_count *per_unit, double *elapsed_s)
{
	double t, tsum = 0;
	double *sum = m->sum;

	memset(out, 0, m->nev * sizeof(*out));
	memset(sum, 0, m->nev * sizeof(*sum));
	for (size_t u = 0; u < m->nunits; u++) {
		struct pmon_count *b = m->base + u * m->nev;
		int err = read_unit(m, u, m->now, &tsum);

		if (err)
			return err;
		for (size_t e = 0; e < m->nev; e++) {
			struct pmon_count dl;

			count_delta(m->have_base ? &b[e] : NULL, &m->now[e], m->scale[e], &dl);
			if (per_unit)
				per_unit[u * m->nev + e] = dl;
			out[e].raw += dl.raw;
			out[e].enabled += dl.enabled;
			out[e].running += dl.running;
			sum[e] += dl.value;
			if (u == 0 || dl.status == PMON_COUNT_OK) {
				out[e].status = dl.status;
				out[e].err = dl.err;
				out[e].reason = dl.reason;
				out[e].user_only = dl.user_only;
			}
		}
		memcpy(b, m->now, m->nev * sizeof(*b));
	}
	t = reading_time(m, tsum);
	for (size_t e = 0; e < m->nev; e++) {
		out[e].value = out[e].status == PMON_COUNT_OK ? sum[e] : 0;
		out[e].running_pct = out[e].enabled
			? 100.0 * (double)out[e].running / (double)out[e].enabled
			: 0;
	}
	if (elapsed_s)
		*elapsed_s = t - m->tbase;
	m->tbase = t;
	m->have_base = true;
	return 0;
}

/* ---- derived metrics -------------------------------------------------- */

static double find_value(const struct pmon_evlist *l, const struct pmon_count *v, const char *name,
			 bool *found)
{
	for (size_t i = 0; i < pmon_evlist__count(l); i++) {
		const struct pmon_event_desc *d = pmon_evlist__event(l, i);
		/* Compare the name without modifiers. */
		size_t n = strcspn(d->name, ":");
		if (strlen(name) == n && !strncmp(d->name, name, n) &&
		    v[i].status == PMON_COUNT_OK) {
			*found = true;
			return v[i].value;
		}
	}
	*found = false;
	return 0;
}

/* Metric @unit: @num / @den, where the event named @den was counted. */
struct ratio {
	const char *event, *den, *unit;
	double mul;
};

/* perf's shadow stats (tools/perf/util/stat-shadow.c): a ratio to another
 * event of the list. */
static const struct ratio ratios[] = {
	{ "instructions", "cycles", "insn per cycle", 1 },
	{ "branch-misses", "branches", "% of all branches", 100 },
	{ "cache-misses", "cache-references", "% of all cache refs", 100 },
	{ "L1-dcache-load-misses", "L1-dcache-loads", "% of all L1-dcache accesses", 100 },
};

struct pmon_metric pmon_metric__derive(const struct pmon_evlist *l, const struct pmon_count *v,
				       size_t i, double wall_s)
{
	const struct pmon_event_desc *d = pmon_evlist__event(l, i);
	struct pmon_metric m = { 0 };
	size_t n = strcspn(d->name, ":");
	char base[128];
	bool f;
	double other, task_ms = find_value(l, v, "task-clock", &f);
	bool have_task = f && task_ms > 0;

	if (v[i].status != PMON_COUNT_OK)
		return m;
	pmon__fmt(base, sizeof(base), "%.*s", (int)n, d->name);
	if (!strcmp(base, "task-clock")) {
		if (wall_s > 0)
			m = (struct pmon_metric){ v[i].value / 1e3 / wall_s, "CPUs utilized",
						  true };
		return m;
	}
	if (!strcmp(base, "cycles") || !strcmp(base, "cpu-cycles")) {
		if (have_task)
			m = (struct pmon_metric){ v[i].value / (task_ms * 1e6), "GHz", true };
		return m;
	}
	for (size_t k = 0; k < PMON_ARRAY_SIZE(ratios); k++) {
		if (strcmp(base, ratios[k].event))
			continue;
		other = find_value(l, v, ratios[k].den, &f);
		if (f && other > 0)
			m = (struct pmon_metric){ ratios[k].mul * v[i].value / other,
						  ratios[k].unit, true };
		return m;
	}
	if (d->source == PMON_EV_SOFTWARE && have_task && strcmp(base, "cpu-clock")) {
		double rate = v[i].value / (task_ms / 1e3);
		m = rate >= 1e6	      ? (struct pmon_metric){ rate / 1e6, "M/sec", true }
			: rate >= 1e3 ? (struct pmon_metric){ rate / 1e3, "K/sec", true }
				      : (struct pmon_metric){ rate, "/sec", true };
	}
	return m;
}

/* ---- repeat statistics ------------------------------------------------ */

void pmon_running_stats__add(struct pmon_running_stats *s, double v)
{
	double delta;

	if (!s->n || v < s->min)
		s->min = v;
	if (!s->n || v > s->max)
		s->max = v;
	s->n++;
	delta = v - s->mean;
	s->mean += delta / (double)s->n;
	s->m2 += delta * (v - s->mean);
}

double pmon_running_stats__stddev(const struct pmon_running_stats *s)
{
	return s->n > 1 ? sqrt(s->m2 / (double)(s->n - 1)) : 0;
}

double pmon_running_stats__rel_stderr(const struct pmon_running_stats *s)
{
	if (s->n < 2 || s->mean == 0)
		return 0;
	return 100.0 * (pmon_running_stats__stddev(s) / sqrt((double)s->n)) / fabs(s->mean);
}

/* ---- the ticker ------------------------------------------------------- */

void pmon_ticker__init(struct pmon_ticker *tk, double step_s)
{
	tk->start = pmon_monotonic_s();
	tk->step = step_s;
	tk->next = tk->start + step_s;
}

double pmon_ticker__remaining(const struct pmon_ticker *tk)
{
	return tk->next - pmon_monotonic_s();
}

bool pmon_ticker__sleep(const struct pmon_ticker *tk)
{
	struct timespec ts = { .tv_sec = (time_t)tk->next,
			       .tv_nsec = (long)((tk->next - (double)(time_t)tk->next) * 1e9) };

	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	return pmon_ticker__remaining(tk) <= 0;
}

void pmon_ticker__advance(struct pmon_ticker *tk)
{
	double t = pmon_monotonic_s();

	tk->next += tk->step;
	while (tk->next < t) /* fell behind: skip, do not burst */
		tk->next += tk->step;
}

void pmon_ticker__set_step(struct pmon_ticker *tk, double step_s)
{
	tk->next += step_s - tk->step;
	tk->step = step_s;
}
