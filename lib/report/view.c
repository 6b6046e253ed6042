// SPDX-License-Identifier: MIT
/*
 * perf report's views (issue #27): entries keyed by any list of perf's
 * sort keys (comm, pid, tid, cpu, dso, symbol, line), samples filtered by
 * command, process, thread, CPU, DSO, symbol and time, and the children
 * (cumulative) share of each entry. One reader thread walks the samples in
 * file order, as pmon script's does (script.c), so that each sample's
 * thread has the command the COMM records before it gave; the leaf and
 * the chain are named by symbols.c as the report names them. The fast
 * report by symbol, DSO or line (report.c, histogram.c) is not this path.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "report/ctx.h"
#include "sample/reader.h"
#include <pmon/sample.h>

/* ---- threads' commands ---------------------------------------------------- */

static struct comm *comm_slot(struct comm_tab *t, uint32_t tid)
{
	size_t j = pmon__mix64(tid) & (t->cap - 1);

	while (t->e[j].tid && t->e[j].tid != tid)
		j = (j + 1) & (t->cap - 1);
	return &t->e[j];
}

static int comm_set(struct comm_tab *t, uint32_t tid, const char *name)
{
	if (!tid)
		return 0;
	if ((t->n + 1) * 2 >= t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256, oldcap = t->cap;
		struct comm *old = t->e;
		if (!(t->e = calloc(cap, sizeof(*t->e)))) {
			t->e = old;
			return -ENOMEM;
		}
		t->cap = cap;
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].tid)
				*comm_slot(t, old[i].tid) = old[i];
		free(old);
	}
	struct comm *c = comm_slot(t, tid);
	if (!c->tid)
		t->n++;
	c->tid = tid;
	pmon__strlcpy(c->name, name, sizeof(c->name));
	return 0;
}

int pmon__comm_record(struct comm_tab *t, const struct pmon__record *rec)
{
	if (rec->type == PERF_RECORD_COMM)
		return comm_set(t, rec->comm.tid, rec->comm.comm);
	/* A fork's child is named as its parent until its own COMM (perf's
	 * thread__fork()): `sh -c` children before their exec. */
	if (rec->type == PERF_RECORD_FORK && t->cap && rec->task.tid) {
		const struct comm *c = comm_slot(t, rec->task.ptid);
		if (!c->tid)
			c = comm_slot(t, rec->task.ppid);
		if (c->tid && !comm_slot(t, rec->task.tid)->tid) {
			char name[sizeof(c->name)];
			memcpy(name, c->name, sizeof(name)); /* the table may grow */
			return comm_set(t, rec->task.tid, name);
		}
	}
	return 0;
}

const char *pmon__comm_of(struct comm_tab *t, uint32_t pid, uint32_t tid)
{
	if (tid == UINT32_MAX) { /* a task the kernel saw exiting: perf's ":-1" */
		pmon__strlcpy(t->unknown, ":-1", sizeof(t->unknown));
		return t->unknown;
	}
	if (t->cap) {
		struct comm *c = comm_slot(t, tid);
		if (c->tid)
			return c->name;
		if ((c = comm_slot(t, pid))->tid) /* a thread not named apart: its process */
			return c->name;
	}
	if (!tid) /* the idle task: perf names it so (machine__init()) */
		return "swapper";
	snprintf(t->unknown, sizeof(t->unknown), ":%u", tid);
	return t->unknown;
}

/* ---- the options, parsed -------------------------------------------------- */

#define VIEW_LIST_MAX 64
#define VIEW_FRAMES 256

struct idlist { /* pids, tids or CPUs: single numbers or ranges */
	uint32_t lo[VIEW_LIST_MAX], hi[VIEW_LIST_MAX];
	size_t n;
	bool on;
};

struct strlist {
	char *buf; /* the list with its commas made NULs */
	const char *s[VIEW_LIST_MAX];
	size_t n;
	bool on;
};

struct trange {
	uint64_t lo, hi; /* inclusive, ns */
	double plo, phi; /* percents of the span, where @pct */
	bool pct;
};

struct view {
	struct ctx x;
	struct pmon_report *r;
	struct comm_tab comms;
	enum pmon_report_sort keys[PMON_REPORT_KEYS_MAX];
	size_t nkeys;
	bool children;
	struct idlist pids, tids, cpus;
	struct strlist comm_f, dso_f, sym_f;
	struct trange tr[VIEW_LIST_MAX];
	size_t ntr;
	bool tr_pct;
	struct counter self, kids;
	uint64_t first, last;
	/* A live view (pmon_report_live): each entry's process, where pid is
	 * no key, by majority vote of its samples' periods (Boyer-Moore), by
	 * the entry's order of first use. */
	struct owner {
		uint32_t pid;
		uint64_t votes;
		char comm[16];
	} * own;
	size_t capown;
	bool live;
};

static const struct {
	const char *name;
	enum pmon_report_sort key;
} key_names[] = {
	{ "comm", PMON_SORT_COMM },  { "pid", PMON_SORT_PID },	 { "tid", PMON_SORT_TID },
	{ "cpu", PMON_SORT_CPU },    { "dso", PMON_SORT_DSO },	 { "symbol", PMON_SORT_SYMBOL },
	{ "sym", PMON_SORT_SYMBOL }, { "line", PMON_SORT_LINE }, { "srcline", PMON_SORT_LINE },
};

static int parse_keys(struct view *v, const char *spec)
{
	char buf[256];

	pmon__strlcpy(buf, spec, sizeof(buf));
	if (!buf[0])
		return pmon__err(-EINVAL,
				 "no sort key given (comm, pid, tid, cpu, dso, symbol, line)");
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		size_t i = 0;
		while (i < PMON_ARRAY_SIZE(key_names) && strcmp(key_names[i].name, t))
			i++;
		if (i == PMON_ARRAY_SIZE(key_names))
			return pmon__err(
				-EINVAL,
				"--sort '%s': symbol, dso, line, caller or callee; or perf's "
				"keys comm, pid, tid, cpu, dso, symbol, line, combined with "
				"commas",
				t);
		bool dup = false;
		for (size_t k = 0; k < v->nkeys; k++)
			dup |= v->keys[k] == key_names[i].key;
		if (dup)
			continue;
		if (v->nkeys == PMON_REPORT_KEYS_MAX)
			return pmon__err(-EINVAL, "more than %d sort keys", PMON_REPORT_KEYS_MAX);
		v->keys[v->nkeys++] = key_names[i].key;
	}
	if (!v->nkeys)
		return pmon__err(-EINVAL,
				 "no sort key given (comm, pid, tid, cpu, dso, symbol, line)");
	return 0;
}

/* "1,4-7": numbers and ranges, as perf's --pid, --tid and --cpu lists. */
static int parse_ids(struct idlist *l, const char *spec, const char *what)
{
	char buf[1024];

	pmon__strlcpy(buf, spec, sizeof(buf));
	l->on = true;
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *end;
		errno = 0;
		unsigned long a = strtoul(t, &end, 10), b = a;
		if (end != t && *end == '-' && end[1]) {
			const char *s = end + 1;
			b = strtoul(s, &end, 10);
			if (end == s)
				end = (char *)s - 1;
		}
		if (end == t || *end || errno || a > UINT32_MAX || b > UINT32_MAX || b < a ||
		    t[0] == '-')
			return pmon__err(-EINVAL, "%s '%s' is not a number or a range N-M", what,
					 t);
		if (l->n == VIEW_LIST_MAX)
			return pmon__err(-EINVAL, "more than %d %ss", VIEW_LIST_MAX, what);
		l->lo[l->n] = (uint32_t)a;
		l->hi[l->n++] = (uint32_t)b;
	}
	if (!l->n)
		return pmon__err(-EINVAL, "an empty list of %ss", what);
	return 0;
}

static bool id_in(const struct idlist *l, uint32_t id)
{
	for (size_t i = 0; i < l->n; i++)
		if (id >= l->lo[i] && id <= l->hi[i])
			return true;
	return !l->on;
}

static int parse_strs(struct strlist *l, const char *spec, const char *what)
{
	if (!(l->buf = strdup(spec)))
		return -ENOMEM;
	l->on = true;
	for (char *save = NULL, *t = strtok_r(l->buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		if (l->n == VIEW_LIST_MAX)
			return pmon__err(-EINVAL, "more than %d %ss", VIEW_LIST_MAX, what);
		l->s[l->n++] = t;
	}
	if (!l->n)
		return pmon__err(-EINVAL, "an empty list of %ss", what);
	return 0;
}

static bool str_in(const struct strlist *l, const char *s, const char *alt)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->s[i], s) || (alt && !strcmp(l->s[i], alt)))
			return true;
	return !l->on;
}

/* "SEC[.NANOSEC]" into ns, exactly (a double would round a timestamp's ns). */
static bool parse_seconds(const char *s, size_t len, uint64_t *ns)
{
	uint64_t sec = 0, frac = 0, scale = 1000000000ULL;
	size_t i = 0;

	if (!len)
		return false;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
		if (sec > UINT64_MAX / 10 / 1000000000ULL)
			return false;
		sec = sec * 10 + (uint64_t)(s[i] - '0');
	}
	if (i < len && s[i] == '.')
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++)
			if (scale > 1)
				scale /= 10, frac += (uint64_t)(s[i] - '0') * scale;
	if (i != len || (len == 1 && s[0] == '.'))
		return false;
	*ns = sec * 1000000000ULL + frac;
	return true;
}

/* "a%/n" (the n-th slice of a%) or "a%-b%" (from a% to b%). */
static int parse_percent(struct trange *t, const char *tok)
{
	char *end;
	double a = strtod(tok, &end);

	if (end == tok || *end != '%')
		return -EINVAL;
	if (end[1] == '/') {
		const char *s = end + 2;
		unsigned long n = strtoul(s, &end, 10);
		if (end == s || *end || !n || !(a > 0 && a <= 100) || a * (double)n > 100 + 1e-9)
			return -EINVAL;
		t->plo = a * (double)(n - 1) / 100, t->phi = a * (double)n / 100;
	} else if (end[1] == '-') {
		const char *s = end + 2;
		double b = strtod(s, &end);
		if (end == s || strcmp(end, "%") || !(a >= 0 && a < b && b <= 100))
			return -EINVAL;
		t->plo = a / 100, t->phi = b / 100;
	} else {
		return -EINVAL;
	}
	t->pct = true;
	return 0;
}

/* perf's --time: "START,STOP" ranges separated by spaces, or percent
 * slices separated by commas (tools/perf/util/time-utils.c). */
static int parse_time(struct view *v, const char *spec)
{
	char buf[1024];
	bool pct = strchr(spec, '%') != NULL;

	pmon__strlcpy(buf, spec, sizeof(buf));
	for (char *save = NULL, *t = strtok_r(buf, pct ? "," : " ", &save); t;
	     t = strtok_r(NULL, pct ? "," : " ", &save)) {
		struct trange *r = &v->tr[v->ntr];
		if (v->ntr == VIEW_LIST_MAX)
			return pmon__err(-EINVAL, "more than %d time ranges", VIEW_LIST_MAX);
		if (pct) {
			if (parse_percent(r, t))
				return pmon__err(-EINVAL,
						 "time slice '%s' is not 'a%%/n' (the n-th a%% of "
						 "the recording) or 'a%%-b%%' (0 <= a < b <= 100)",
						 t);
			v->tr_pct = true;
		} else {
			const char *comma = strchr(t, ',');
			r->lo = 0, r->hi = UINT64_MAX;
			if (!comma ||
			    (comma > t && !parse_seconds(t, (size_t)(comma - t), &r->lo)) ||
			    (comma[1] && !parse_seconds(comma + 1, strlen(comma + 1), &r->hi)) ||
			    r->hi < r->lo)
				return pmon__err(-EINVAL,
						 "time range '%s' is not 'START,STOP' in seconds "
						 "(either may be left out), or percents",
						 t);
		}
		v->ntr++;
	}
	if (!v->ntr)
		return pmon__err(-EINVAL, "an empty --time");
	return 0;
}

bool pmon__view_wanted(const struct pmon_report_opts *o)
{
	return o &&
		(o->sort_keys || o->comms || o->dsos || o->symbols || o->pids || o->tids ||
		 o->cpus || o->time || o->children);
}

static int view_parse(struct view *v, const struct pmon_report_opts *o)
{
	int err = 0;
	static const enum pmon_report_sort by[] = { [PMON_SORT_SYMBOL] = PMON_SORT_SYMBOL,
						    [PMON_SORT_DSO] = PMON_SORT_DSO,
						    [PMON_SORT_LINE] = PMON_SORT_LINE };

	if (o->sort_keys)
		err = parse_keys(v, o->sort_keys);
	else if ((unsigned)o->sort < PMON_ARRAY_SIZE(by)) { /* the classic keys: symbol and DSO */
		v->keys[v->nkeys++] = by[o->sort];
		if (o->sort != PMON_SORT_DSO)
			v->keys[v->nkeys++] = PMON_SORT_DSO;
	} else {
		v->keys[v->nkeys++] = o->sort;
	}
	v->children = o->children;
	if (!err && o->pids)
		err = parse_ids(&v->pids, o->pids, "pid");
	if (!err && o->tids)
		err = parse_ids(&v->tids, o->tids, "tid");
	if (!err && o->cpus)
		err = parse_ids(&v->cpus, o->cpus, "cpu");
	if (!err && o->comms)
		err = parse_strs(&v->comm_f, o->comms, "command");
	if (!err && o->dsos)
		err = parse_strs(&v->dso_f, o->dsos, "dso");
	if (!err && o->symbols)
		err = parse_strs(&v->sym_f, o->symbols, "symbol");
	if (!err && o->time)
		err = parse_time(v, o->time);
	return err;
}

/* ---- the walk ------------------------------------------------------------- */

/* The key of a sample located at @l: its event, then each key's value. */
static void make_key(struct view *v, char *key, size_t len, unsigned ev,
		     const struct pmon_sample *sm, const char *comm, const struct loc *l)
{
	size_t off = (size_t)snprintf(key, len, "%u", ev);

	for (size_t k = 0; k < v->nkeys && off < len; k++) {
		const char *ln;
		int w = 0;
		switch (v->keys[k]) {
		case PMON_SORT_COMM:
			w = snprintf(key + off, len - off, "\t%s", comm);
			break;
		case PMON_SORT_PID:
			w = snprintf(key + off, len - off, "\t%u", sm->pid);
			break;
		case PMON_SORT_TID:
			w = snprintf(key + off, len - off, "\t%u", sm->tid);
			break;
		case PMON_SORT_CPU: /* UINT32_MAX where the samples carry no CPU (perf's -1) */
			w = snprintf(key + off, len - off, "\t%u",
				     v->x.sample_type & PERF_SAMPLE_CPU ? sm->cpu : UINT32_MAX);
			break;
		case PMON_SORT_DSO:
			w = snprintf(key + off, len - off, "\t%s", pmon__base_name(l->dso));
			break;
		case PMON_SORT_SYMBOL:
			w = snprintf(key + off, len - off, "\t%s", l->sym);
			break;
		case PMON_SORT_LINE:
			ln = pmon__srcline(&v->x, l);
			w = snprintf(key + off, len - off, "\t%s", ln ? ln : "[unknown]");
			break;
		}
		off += w > 0 ? (size_t)w : 0;
	}
}

static bool in_time(const struct view *v, uint64_t t)
{
	for (size_t i = 0; i < v->ntr; i++)
		if (t >= v->tr[i].lo && t <= v->tr[i].hi)
			return true;
	return !v->ntr;
}

/* The chain's addresses to look up, leaf first: a return address minus 1
 * (inside its call), as report.c and script.c read them. */
static size_t chain_addrs(struct view *v, const struct pmon_sample *sm, uint64_t *a)
{
	size_t n = 0;
	bool fresh = true;

	for (uint64_t k = 0; k < sm->nr && n < VIEW_FRAMES; k++) {
		uint64_t c = pmon_sample__chain(sm, k);
		if (c >= (uint64_t)-4095) { /* PERF_CONTEXT_* */
			fresh = true;
			continue;
		}
		a[n++] = !fresh && c ? c - 1 : c;
		fresh = false;
	}
	if (sm->nregs == 17 && sm->stack_dyn && n < VIEW_FRAMES) { /* DWARF mode */
		uint64_t regs[17], pcs[128];
		memcpy(regs, sm->regs, sizeof(regs));
		int m = pmon__maps_unwind(&v->x, sm->pid, regs, sm->stack, sm->stack_dyn, pcs, 128);
		for (int k = 0; k < m && n < VIEW_FRAMES; k++)
			a[n++] = k && pcs[k] ? pcs[k] - 1 : pcs[k];
	}
	return n;
}

/* The children: every distinct entry of the sample's chain (its leaf
 * among them) gets the sample once. */
static int add_children(struct view *v, const struct pmon_sample *sm, uint32_t epoch, unsigned ev,
			const char *comm, const char *leaf_key, uint64_t period)
{
	uint64_t a[VIEW_FRAMES], seen[VIEW_FRAMES + 1];
	size_t n = chain_addrs(v, sm, a), nseen = 0;
	char key[1200];
	int err;

	seen[nseen++] = pmon__fnv(leaf_key, strlen(leaf_key), 14695981039346656037ULL);
	if ((err = pmon__counter_add(&v->kids, leaf_key, 1, period, NULL)))
		return err;
	for (size_t i = 0; i < n; i++) {
		struct loc l;
		pmon__locate(&v->x, sm->pid, a[i], epoch, &l);
		make_key(v, key, sizeof(key), ev, sm, comm, &l);
		uint64_t h = pmon__fnv(key, strlen(key), 14695981039346656037ULL);
		bool dup = false;
		for (size_t k = 0; k < nseen && !dup; k++)
			dup = seen[k] == h;
		if (dup)
			continue;
		seen[nseen++] = h;
		if ((err = pmon__counter_add(&v->kids, key, 1, period, NULL)))
			return err;
	}
	return 0;
}

/* The sample's process as its entry's owner, where it wins the vote. */
static int vote(struct view *v, uint32_t index, const struct pmon_sample *sm, const char *comm,
		uint64_t period)
{
	size_t had = v->capown;
	if (PMON_GROW(&v->own, &v->capown, (size_t)index + 1))
		return -ENOMEM;
	if (v->capown > had) /* grown: no owner yet */
		memset(v->own + had, 0, (v->capown - had) * sizeof(*v->own));
	struct owner *o = &v->own[index];
	if (o->pid == sm->pid || !o->votes) {
		o->pid = sm->pid;
		pmon__strlcpy(o->comm, comm, sizeof(o->comm));
		o->votes += period;
	} else {
		o->votes = o->votes > period ? o->votes - period : 0;
	}
	return 0;
}

static int on_sample_at(struct view *v, const struct pmon_sample *sm, uint32_t epoch,
			struct loc *where)
{
	struct pmon_report *r = v->r;
	unsigned ev = pmon__event_of(&v->x, sm->id);
	char key[1200];
	struct loc l;
	uint32_t index;

	if (ev >= r->nevents)
		ev = 0;
	uint64_t period = pmon__period_of(&v->x, ev, 1, sm->period);
	if (v->x.sample_type & PERF_SAMPLE_TIME) {
		if (!v->first || sm->time < v->first)
			v->first = sm->time;
		if (sm->time > v->last)
			v->last = sm->time;
	}
	const char *comm = pmon__comm_of(&v->comms, sm->pid, sm->tid);
	if (!id_in(&v->pids, sm->pid) || !id_in(&v->tids, sm->tid) || !id_in(&v->cpus, sm->cpu) ||
	    !str_in(&v->comm_f, comm, NULL) || !in_time(v, sm->time))
		return 0;
	pmon__locate(&v->x, sm->pid, sm->ip, epoch, &l);
	if (!str_in(&v->dso_f, pmon__base_name(l.dso), l.dso) || !str_in(&v->sym_f, l.sym, NULL))
		return 0;
	if (where)
		*where = l;
	r->events[ev].samples++;
	r->events[ev].period += period;
	r->samples++;
	r->period += period;
	if (sm->nr || sm->stack_dyn)
		r->callchains = true;
	make_key(v, key, sizeof(key), ev, sm, comm, &l);
	int err = pmon__counter_add(&v->self, key, 1, period, &index);
	if (!err && v->live)
		err = vote(v, index, sm, comm, period);
	if (!err && v->children)
		err = add_children(v, sm, epoch, ev, comm, key, period);
	return err;
}

static int on_sample(struct view *v, const struct pmon_sample *sm, uint32_t epoch)
{
	return on_sample_at(v, sm, epoch, NULL);
}

static int on_record(void *arg, unsigned thread, const struct pmon__record *rec, uint32_t epoch)
{
	(void)thread;
	return rec->type == PERF_RECORD_SAMPLE ? on_sample(arg, &rec->sample, epoch) : 0;
}

static int on_ordered(void *arg, const struct pmon__record *rec)
{
	struct view *v = arg;

	int err = pmon__comm_record(&v->comms, rec);

	return err ? err : pmon__report_ordered(&v->x, rec);
}

/* ---- percent slices: the span of the samples, read first ------------------ */

static int span_sample(void *arg, unsigned thread, const struct pmon__record *rec, uint32_t epoch)
{
	struct view *v = arg;

	(void)thread, (void)epoch;
	if (rec->type == PERF_RECORD_SAMPLE) {
		if (!v->first || rec->sample.time < v->first)
			v->first = rec->sample.time;
		if (rec->sample.time > v->last)
			v->last = rec->sample.time;
	}
	return 0;
}

static int span_ordered(void *arg, const struct pmon__record *rec)
{
	(void)arg, (void)rec;
	return 0;
}

/* Percent slices into times: a% of the span from the first sample to the
 * last; a slice ends 1 ns before the next begins, as perf's do, but the
 * last takes the last sample. */
static int resolve_percents(struct view *v, const char *path)
{
	struct pmon__rec_header h;
	const struct pmon__rec_ops ops = { .record = span_sample, .ordered = span_ordered };

	if (!strcmp(path, "-"))
		return pmon__err(-EINVAL,
				 "time percents need the recording's span, read before "
				 "the samples: not from standard input");
	struct pmon__rec_reader *rd = pmon__rec_reader_open(path, &h);
	if (!rd)
		return -errno;
	int err = pmon__rec_reader_run(rd, 1, &ops, v);
	pmon__rec_reader_free(rd);
	if (err)
		return err;
	if (!(h.sample_type & PERF_SAMPLE_TIME))
		return pmon__err(-EINVAL,
				 "%s: its samples carry no time: --time cannot select them", path);
	uint64_t span = v->last - v->first;
	for (size_t i = 0; i < v->ntr; i++) {
		struct trange *t = &v->tr[i];
		t->lo = v->first + (uint64_t)(t->plo * (double)span + 0.5);
		t->hi = v->first + (uint64_t)(t->phi * (double)span + 0.5);
		if (t->phi < 1.0 && t->hi > t->lo)
			t->hi--;
		if (t->phi >= 1.0)
			t->hi = v->last;
	}
	v->first = v->last = 0; /* the walk measures it again */
	return 0;
}

/* ---- the entries ------------------------------------------------------------ */

static size_t counter_find(const struct counter *c, const char *key)
{
	if (!c->cap)
		return SIZE_MAX;
	size_t j = pmon__fnv(key, strlen(key), 14695981039346656037ULL) & (c->cap - 1);
	while (c->key[j] && strcmp(c->key[j], key))
		j = (j + 1) & (c->cap - 1);
	return c->key[j] ? j : SIZE_MAX;
}

/* Entry @e keyed by @key ("EV\tvalue\t..." in v->keys' order). */
static void entry_of(const struct view *v, const char *key, struct pmon_report_entry *e)
{
	char buf[1200], *save = NULL;

	pmon__strlcpy(buf, key, sizeof(buf));
	char *f = strtok_r(buf, "\t", &save);
	e->event = f ? (unsigned)strtoul(f, NULL, 10) : 0;
	for (size_t k = 0; k < v->nkeys; k++) {
		/* a value may be empty: split by hand, not by strtok */
		f = save;
		if (!f)
			break;
		char *tab = strchr(f, '\t');
		if (tab)
			*tab = '\0';
		save = tab ? tab + 1 : NULL;
		switch (v->keys[k]) {
		case PMON_SORT_COMM:
			pmon__strlcpy(e->comm, f, sizeof(e->comm));
			break;
		case PMON_SORT_PID:
			e->pid = (uint32_t)strtoul(f, NULL, 10);
			break;
		case PMON_SORT_TID:
			e->tid = (uint32_t)strtoul(f, NULL, 10);
			break;
		case PMON_SORT_CPU:
			e->cpu = (uint32_t)strtoul(f, NULL, 10);
			break;
		case PMON_SORT_DSO:
			pmon__strlcpy(e->dso, f, sizeof(e->dso));
			break;
		case PMON_SORT_SYMBOL:
			pmon__strlcpy(e->symbol, f, sizeof(e->symbol));
			break;
		case PMON_SORT_LINE:
			pmon__strlcpy(e->line, f, sizeof(e->line));
			break;
		}
	}
}

/* By event, then children (with --children; else every one is 0) or self
 * period, then samples,
 * then the keys, so that equal rows come out the same every time. */
static int cmp_view(const void *a, const void *b)
{
	const struct pmon_report_entry *x = a, *y = b;
	int c;

	if (x->event != y->event)
		return x->event < y->event ? -1 : 1;
	if (x->children_period != y->children_period)
		return x->children_period < y->children_period ? 1 : -1;
	if (x->period != y->period)
		return x->period < y->period ? 1 : -1;
	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	if ((c = strcmp(x->comm, y->comm)) || (c = strcmp(x->symbol, y->symbol)) ||
	    (c = strcmp(x->dso, y->dso)) || (c = strcmp(x->line, y->line)))
		return c;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

/* The entries: self's keys, and with children every key met in a chain. */
static int view_entries(struct view *v, struct pmon_report *r)
{
	const struct counter *all = v->children ? &v->kids : &v->self;

	if (!all->n)
		return 0;
	if (!(r->e = calloc(all->n, sizeof(*r->e))))
		return -ENOMEM;
	for (size_t i = 0; i < all->cap; i++) {
		if (!all->key[i])
			continue;
		struct pmon_report_entry *e = &r->e[r->n++];
		entry_of(v, all->key[i], e);
		size_t s = v->children ? counter_find(&v->self, all->key[i]) : i;
		if (s != SIZE_MAX)
			e->samples = v->self.samples[s], e->period = v->self.period[s];
		if (v->children)
			e->children_samples = all->samples[i], e->children_period = all->period[i];
		bool keyed = false;
		for (size_t k = 0; k < v->nkeys; k++)
			keyed |= v->keys[k] == PMON_SORT_PID;
		if (v->live && !keyed && s != SIZE_MAX && v->self.index[s] < v->capown) {
			e->pid = v->own[v->self.index[s]].pid;
			pmon__strlcpy(e->comm, v->own[v->self.index[s]].comm, sizeof(e->comm));
		}
	}
	qsort(r->e, r->n, sizeof(*r->e), cmp_view);
	return 0;
}

/* The parsed keys and filters, and the counts, dropped (the maps stay). */
static void view_clear(struct view *v)
{
	pmon__counter_free(&v->self);
	pmon__counter_free(&v->kids);
	free(v->comm_f.buf);
	free(v->dso_f.buf);
	free(v->sym_f.buf);
	memset(&v->self, 0, sizeof(v->self));
	memset(&v->kids, 0, sizeof(v->kids));
	memset(&v->pids, 0, sizeof(v->pids));
	memset(&v->tids, 0, sizeof(v->tids));
	memset(&v->cpus, 0, sizeof(v->cpus));
	memset(&v->comm_f, 0, sizeof(v->comm_f));
	memset(&v->dso_f, 0, sizeof(v->dso_f));
	memset(&v->sym_f, 0, sizeof(v->sym_f));
	v->nkeys = v->ntr = 0;
	v->tr_pct = false;
	if (v->own)
		memset(v->own, 0, v->capown * sizeof(*v->own));
}

static void view_free(struct view *v)
{
	view_clear(v);
	free(v->comms.e);
	free(v->own);
	free(v);
}

int pmon__view_read(const char *path, const struct pmon_report_opts *o, struct pmon_report *r)
{
	const struct pmon__rec_ops ops = { .record = on_record, .ordered = on_ordered };
	struct view *v = calloc(1, sizeof(*v));
	int err;

	memset(r, 0, sizeof(*r));
	if (!v)
		return -ENOMEM;
	v->r = r;
	if ((err = view_parse(v, o)) || (v->tr_pct && (err = resolve_percents(v, path)))) {
		view_free(v);
		return err;
	}
	struct pmon__rec_reader *rd = pmon__report_open(path, o, r, &v->x);
	if (!rd) {
		err = -errno;
		view_free(v);
		return err;
	}
	err = pmon__rec_reader_run(rd, 1, &ops, v);
	if (!err) {
		const struct pmon__rec_stats *st = pmon__rec_reader_stats(rd);
		r->lost = st->lost;
		r->truncated = st->truncated;
		r->damaged_chunks = st->damaged_chunks;
		r->damaged_bytes = st->damaged_bytes;
		r->damaged_samples = st->damaged_samples;
		pmon__strlcpy(r->warning, st->warning, sizeof(r->warning));
		err = view_entries(v, r);
	}
	pmon__report_close(rd, &v->x);
	memcpy(r->keys, v->keys, sizeof(r->keys));
	r->nkeys = v->nkeys;
	r->children = v->children;
	r->first_time = v->first;
	r->last_time = v->last;
	view_free(v);
	if (err)
		pmon_report_release(r);
	return err;
}

/* ---- a live view (live.c): records one at a time, entries per interval ---- */

struct view *pmon__view_live_new(const struct pmon_report_opts *o, struct pmon_report *r)
{
	struct view *v = calloc(1, sizeof(*v));
	int err;

	if (!v)
		return NULL;
	v->r = r;
	v->live = true;
	if ((err = pmon__report_init(&v->x, r, o)) || (err = pmon__view_live_set(v, o))) {
		pmon__report_fini(&v->x);
		view_free(v);
		errno = -err;
		return NULL;
	}
	return v;
}

int pmon__view_live_set(struct view *v, const struct pmon_report_opts *o)
{
	view_clear(v);
	if (o->time || o->children)
		return pmon__err(-EINVAL, "a live view takes no --time or --children");
	int err = view_parse(v, o);
	if (err)
		view_clear(v);
	return err;
}

struct ctx *pmon__view_ctx(struct view *v)
{
	return &v->x;
}

int pmon__view_live_record(struct view *v, const struct pmon__record *rec, struct loc *l)
{
	l->file = -1;
	if (rec->type == PERF_RECORD_SAMPLE)
		return on_sample_at(v, &rec->sample, UINT32_MAX, l);
	return on_ordered(v, rec);
}

int pmon__view_live_take(struct view *v, struct pmon_report *out)
{
	int err = view_entries(v, out);

	memcpy(out->keys, v->keys, sizeof(out->keys));
	out->nkeys = v->nkeys;
	pmon__counter_free(&v->self);
	memset(&v->self, 0, sizeof(v->self));
	if (v->own)
		memset(v->own, 0, v->capown * sizeof(*v->own));
	return err;
}

void pmon__view_live_free(struct view *v)
{
	if (!v)
		return;
	pmon__report_fini(&v->x);
	view_free(v);
}
