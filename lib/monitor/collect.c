// SPDX-License-Identifier: MIT
/*
 * The cgroup collector behind pmon serve (include/pmon/collect.h): one monitor
 * for system-wide counting and one per cgroup (perf's cgroup mode: a
 * counter per CPU per cgroup), read every interval by a background thread
 * that adds the scaled deltas (deltas of raw, enabled and running taken
 * before scaling) into per-CPU totals. A scrape never opens, reads or
 * parses anything: the first one after a reading renders the totals into a
 * body kept for the scrapes that follow (one per format, shared with the
 * responses still sending it, reused once they are done), and each adds
 * only its few lines of its own. With
 * --cgroup-root the tree is walked each interval; cgroups that appeared
 * get counters, ones that vanished (or were made anew under the same name)
 * lose theirs, and their series leave the output.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "monitor/collect.h"
#include <pmon/pmon.h>

#define MAX_CGROUPS 1024
#define CGROUP_DEPTH 8
#define MAX_MOUNTS 64

struct acc {
	double value; /* scaled, in the exported unit (not for clocks) */
	uint64_t ns; /* clocks: the scaled count in ns, exported as seconds exactly */
	uint64_t enabled, running; /* ns */
};

/* A rendered body: the metrics of one reading in one format, shared by the
 * responses that send it (refs: the collector's cache holds one, each
 * response one more) and rewritten in place once only the cache holds it. */
struct pmon__body {
	atomic_uint refs;
	uint64_t gen; /* the reading it shows */
	bool oom;
	bool fixed; /* p is not malloc()ed: never grown (a scrape's own lines) */
	size_t len, cap;
	char *p;
};

struct pmon_scrape {
	struct pmon__body *body;
	size_t tail_len;
	char tail[1024]; /* this scrape's own lines (and OpenMetrics' # EOF) */
};

struct source {
	struct source *next;
	char *path; /* the directory; NULL for system-wide */
	char *label; /* the cgroup label: its path inside its hierarchy, "" system-wide */
	ino_t ino; /* the directory's inode: a cgroup made anew is another */
	struct pmon_monitor *m;
	size_t nunits;
	int *cpu; /* per unit */
	struct acc *acc; /* [unit * nev + e] */
	struct pmon_count *delta; /* scratch: [unit * nev + e] */
	struct pmon_count *sum; /* scratch: [e] */
	bool *supported; /* [e]: the kernel opened it */
	bool seen, read_ok;
	char *label_esc; /* the label escaped once, as every scrape prints it */
	/* Every row but its value, made once: [(e * 3 + col) * nunits + u] in
	 * rows, "pmon_task_clock_total{cpu=\"0\",cgroup=\"/a\",event=\"task-clock\",
	 * unit=\"seconds\"} " (the same in both formats) */
	char *rows;
	struct row {
		uint32_t off, len;
	} * row;
	struct pmon__rdt_cgroup *rdt; /* --rdt: its monitoring group, or NULL */
	struct pmon_rdt_reading *rdt_now; /* with rdt; under the collector's lock */
	bool rdt_ok;
};

struct pmon_collector {
	struct {
		bool system_wide, rdt, rdt_cleaned;
		char **cgroups; /* counted from the start (and followed) */
		size_t ncgroups;
		char *cgroup_root; /* every cgroup below, rescanned */
		char *resctrl_root;
		unsigned interval_ms;
	} o;
	char rdt_why[256]; /* --rdt counts nothing: why */
	struct pmon_evlist *ev;
	size_t nev;
	char (*family)[160]; /* per event: "pmon_task_clock" */
	char (*unit)[32]; /* per event: the unit label */
	double *mul; /* per event: scaled value -> exported unit */
	bool *clock; /* per event: a clock counting ns, exported in seconds */
	/* [(e * 3 + col) * 2 + om]: a family's # HELP and # TYPE lines, made
	 * once (for the first event of each family) */
	char **head;
	bool *first; /* per event: the first of its family (others join it) */
	char mounts[MAX_MOUNTS][256]; /* cgroup hierarchies' mount points */
	size_t nmounts;

	pthread_mutex_t lock; /* guards the list for readers, and the figures */
	pthread_t thread;
	bool started;
	atomic_bool stop;
	int stop_fd; /* an eventfd: written to wake the collector for a stop */
	struct source *sources; /* changed by the collector thread only, under lock */
	size_t ncgroups;
	/* --cgroup-root: an inotify watch on every directory walked; the tree
	 * is walked again only when one reports a change (-1: every interval). */
	int watch_fd;
	bool walked;
	bool tree_dirty; /* the watches reported a change since the last walk */

	bool pmu, profiling;
	double collect_s, last_scrape_s;
	uint64_t collect_errors, scrapes[2], readings; /* scrapes: text, OpenMetrics */
	/* Counted by the collector thread outside the lock (while it walks the
	 * tree and opens cgroups), read by scrapes: atomics, not plain fields. */
	atomic_uint_least64_t cgroup_errors;
	atomic_uint_least64_t rdt_errors; /* cgroups without a group (no free RMID),
					    threads refused */
	uint64_t gen; /* readings made: a rendered body older than this is stale */
	struct pmon__body *body[2]; /* the last rendered, text and OpenMetrics */
	size_t body_len[2]; /* its length: the next body's first size */

	struct pmon_rdt_group *rdt; /* the root group */
	struct pmon_rdt_reading rdt_now;
	bool rdt_ok;
};

/* ---- rendered bodies -------------------------------------------------------- */

static void body_put(struct pmon__body *b)
{
	if (b && atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1) {
		free(b->p);
		free(b);
	}
}

static struct pmon__body *body_new(size_t cap)
{
	struct pmon__body *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->cap = cap < 4096 ? 4096 : cap;
	b->p = malloc(b->cap);
	if (!b->p) {
		free(b);
		return NULL;
	}
	atomic_init(&b->refs, 1);
	return b;
}

static bool body_grow(struct pmon__body *b, size_t n);

/* Room for @n more bytes (and a NUL); false, with oom set, when none. (Its
 * test inline: a scrape asks once per row.) */
static inline bool body_room(struct pmon__body *b, size_t n)
{
	return (!b->oom && n < b->cap - b->len) || body_grow(b, n);
}

static bool body_grow(struct pmon__body *b, size_t n)
{
	if (b->oom || b->fixed) {
		b->oom = true;
		return false;
	}
	size_t cap = b->cap;
	while (n >= cap - b->len)
		cap *= 2;
	char *p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

static void put(struct pmon__body *b, const char *s, size_t n)
{
	if (body_room(b, n)) {
		memcpy(b->p + b->len, s, n);
		b->len += n;
	}
}

static void puts_(struct pmon__body *b, const char *s)
{
	put(b, s, strlen(s));
}

__attribute__((format(printf, 2, 3))) static void putf(struct pmon__body *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n >= b->cap - b->len && body_room(b, (size_t)n)) {
		va_start(ap, fmt);
		n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	if (n < 0)
		b->oom = true;
	else if (!b->oom)
		b->len += (size_t)n;
}

/* ---- sources ------------------------------------------------------------ */

/* Mount points of cgroup (v1) and cgroup2 file systems, from mountinfo:
 * "36 25 0:31 / /sys/fs/cgroup/perf_event rw,... - cgroup cgroup rw,perf_event". */
static void load_mounts(struct pmon_collector *c)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[1024];

	while (f && fgets(line, sizeof(line), f) && c->nmounts < MAX_MOUNTS) {
		char *dash = strstr(line, " - ");
		char *save = NULL, *tok;
		int field = 0;
		char mnt[256] = "";

		if (!dash)
			continue;
		if (strncmp(dash + 3, "cgroup ", 7) && strncmp(dash + 3, "cgroup2 ", 8))
			continue;
		*dash = '\0';
		for (tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
			if (++field == 5)
				snprintf(mnt, sizeof(mnt), "%s", tok);
		if (mnt[0] == '/' && !strchr(mnt, '\\')) /* octal escapes: not ours */
			snprintf(c->mounts[c->nmounts++], sizeof(c->mounts[0]), "%s", mnt);
	}
	if (f)
		fclose(f);
}

/* @path's name inside its hierarchy ("/sys/fs/cgroup/perf_event/a/b" -> "/a/b"):
 * the cgroup as /proc/PID/cgroup names it. The path itself when no mount
 * point holds it. */
static char *cgroup_label(const struct pmon_collector *c, const char *path)
{
	size_t best = 0;
	char *label;

	for (size_t i = 0; i < c->nmounts; i++) {
		size_t n = strlen(c->mounts[i]);
		if (n > best && !strncmp(path, c->mounts[i], n) &&
		    (path[n] == '/' || path[n] == '\0'))
			best = n;
	}
	if (best && asprintf(&label, "%s", path[best] ? path + best : "/") >= 0)
		return label;
	return strdup(path);
}

static void source_free(const struct pmon_collector *c, struct source *s)
{
	if (!s)
		return;
	pmon_monitor__close(s->m);
	pmon__rdt_cgroup__free(s->rdt);
	free(s->path);
	free(s->label);
	free(s->label_esc);
	free(s->rows);
	free(s->row);
	free(s->rdt_now);
	free(s->cpu);
	free(s->acc);
	free(s->delta);
	free(s->sum);
	free(s->supported);
	free(s);
}

enum col { COL_VALUE, COL_ENABLED, COL_RUNNING };

static const char *const col_suffix[] = { "_total", "_enabled_seconds_total",
					  "_running_seconds_total" };

/* @s's rows but their values (struct source's rows). Return: 0, -ENOMEM. */
static int make_rows(const struct pmon_collector *c, struct source *s)
{
	size_t n = c->nev * 3 * s->nunits, len = 0;
	FILE *f;

	s->row = calloc(n, sizeof(*s->row));
	if (!s->row || !(f = open_memstream(&s->rows, &len)))
		return -ENOMEM;
	for (size_t e = 0; e < c->nev; e++) {
		char ev[256];
		pmon__prom_label_escape(pmon_evlist__event(c->ev, e)->name, ev, sizeof(ev));
		for (size_t col = 0; col < 3; col++)
			for (size_t u = 0; u < s->nunits; u++) {
				struct row *r = &s->row[(e * 3 + col) * s->nunits + u];
				long off = ftell(f);
				/* per-CPU units: a CPU number, never -1 */
				fprintf(f,
					"%s%s{cpu=\"%d\",cgroup=\"%s\",event=\"%s\",unit=\"%s\"} ",
					c->family[e], col_suffix[col],
					s->cpu[u] < 0 ? 0 : s->cpu[u], s->label_esc, ev,
					col ? "seconds" : c->unit[e]);
				r->off = (uint32_t)off;
				r->len = (uint32_t)(ftell(f) - off);
			}
	}
	if (fclose(f) || len > UINT32_MAX)
		return -ENOMEM;
	return 0;
}

/* Counters for @path (NULL: system-wide). NULL with the detail set when none
 * opened (the kernel refused, or the cgroup went away meanwhile). */
static struct source *source_open(struct pmon_collector *c, const char *path, ino_t ino)
{
	/* Built here, not checked: a cgroup gone meanwhile fails to open. */
	struct pmon_target t = { .pid = -1, .system_wide = true, .cgroup = (char *)path };
	struct source *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->ino = ino;
	s->path = path ? strdup(path) : NULL;
	s->label = path ? cgroup_label(c, path) : strdup("");
	s->m = pmon_monitor__open(c->ev, &t, NULL);
	if (!s->m || !s->label || (path && !s->path)) {
		source_free(c, s);
		return NULL;
	}
	/* Escaped at most 2 bytes for 1, once: scrapes only copy it. */
	size_t elen = 2 * strlen(s->label) + 1;
	if (!(s->label_esc = malloc(elen))) {
		source_free(c, s);
		return NULL;
	}
	pmon__prom_label_escape(s->label, s->label_esc, elen);
	if (path && c->rdt &&
	    (!(s->rdt_now = calloc(1, sizeof(*s->rdt_now))) ||
	     !(s->rdt = pmon__rdt_cgroup__new(c->o.resctrl_root, path))))
		atomic_fetch_add_explicit(&c->rdt_errors, 1, memory_order_relaxed); /* no free
			RMID: the cgroup is counted, without RDT */
	s->nunits = pmon_counters__nunits(pmon_monitor__counters(s->m));
	s->cpu = calloc(s->nunits, sizeof(*s->cpu));
	s->acc = calloc(s->nunits * c->nev, sizeof(*s->acc));
	s->delta = calloc(s->nunits * c->nev, sizeof(*s->delta));
	s->sum = calloc(c->nev, sizeof(*s->sum));
	s->supported = calloc(c->nev, sizeof(*s->supported));
	if (!s->cpu || !s->acc || !s->delta || !s->sum || !s->supported) {
		source_free(c, s);
		return NULL;
	}
	for (size_t u = 0; u < s->nunits; u++) {
		pid_t tid;
		pmon_counters__unit(pmon_monitor__counters(s->m), u, &s->cpu[u], &tid);
	}
	if (make_rows(c, s)) {
		source_free(c, s);
		return NULL;
	}
	/* Which events the kernel took: a reading now (the baseline again). */
	if (pmon_counters__read(pmon_monitor__counters(s->m), s->sum) ||
	    pmon_monitor__rebase(s->m)) {
		source_free(c, s);
		return NULL;
	}
	for (size_t e = 0; e < c->nev; e++)
		s->supported[e] = s->sum[e].status != PMON_COUNT_NOT_SUPPORTED;
	return s;
}

static struct source *find_source(struct pmon_collector *c, const char *path)
{
	for (struct source *s = c->sources; s; s = s->next)
		if (s->path && !strcmp(s->path, path))
			return s;
	return NULL;
}

/* Count @path (an existing cgroup directory) from now on, or keep counting it. */
static void want_cgroup(struct pmon_collector *c, const char *path, ino_t ino,
			struct source **added)
{
	struct source *s = find_source(c, path);

	if (s && s->ino == ino) {
		s->seen = true;
		return;
	}
	for (s = *added; s; s = s->next)
		if (!strcmp(s->path, path))
			return;
	if (c->ncgroups >= MAX_CGROUPS) {
		atomic_fetch_add_explicit(&c->cgroup_errors, 1, memory_order_relaxed);
		return;
	}
	s = source_open(c, path, ino);
	if (!s) {
		atomic_fetch_add_explicit(&c->cgroup_errors, 1, memory_order_relaxed);
		return;
	}
	s->seen = true;
	s->next = *added;
	*added = s;
}

/* Every directory below @dir (not @dir itself), depth-first, at most
 * CGROUP_DEPTH levels down. */
static void walk(struct pmon_collector *c, const char *dir, int depth, struct source **added)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	/* A cgroup made or removed below @dir is a mkdir()/rmdir() on it:
	 * fsnotify_mkdir()/fsnotify_rmdir() in the VFS, cgroupfs included.
	 * Adding a watch that exists returns the same one. */
	if (c->watch_fd >= 0 &&
	    inotify_add_watch(c->watch_fd, dir,
			      IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF |
				      IN_ONLYDIR) < 0) {
		close(c->watch_fd); /* out of watches: walk every interval */
		c->watch_fd = -1;
	}
	while ((de = readdir(d))) {
		char path[PATH_MAX];
		struct stat st;

		if (de->d_name[0] == '.' || (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path))
			continue;
		/* cgroupfs (kernfs) gives the type and the inode in the entry,
		 * the same st_ino a stat() would (kernfs_fop_readdir() emits
		 * kernfs_ino()): no stat per cgroup per interval. */
		st.st_ino = de->d_ino;
		if (de->d_type == DT_UNKNOWN && (lstat(path, &st) || !S_ISDIR(st.st_mode)))
			continue;
		want_cgroup(c, path, st.st_ino, added);
		if (depth + 1 < CGROUP_DEPTH)
			walk(c, path, depth + 1, added);
	}
	closedir(d);
}

/* Whether the cgroup tree must be walked: always, but with --cgroup-root
 * alone (no --cgroup to stat) only when the watches reported a change since
 * the last walk (the collector's wait polls the inotify descriptor: no
 * system call at all in an interval without one, instead of an opendir(),
 * two getdents64() and a close() per cgroup). Any event (an overflow too)
 * says walk. */
static bool tree_changed(struct pmon_collector *c)
{
	bool changed = c->tree_dirty;

	c->tree_dirty = false;
	if (c->o.ncgroups || c->watch_fd < 0 || !c->walked) {
		c->walked = true;
		return true;
	}
	return changed;
}

/* The watches reported something: read it all, walk at the next reading. */
static void drain_watches(struct pmon_collector *c)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	while (read(c->watch_fd, buf, sizeof(buf)) > 0)
		c->tree_dirty = true;
}

/* Bring the cgroup sources up to date: open the new, drop the vanished. */
static void rescan(struct pmon_collector *c)
{
	struct source *added = NULL, *gone = NULL;

	if (!c->o.cgroup_root && !c->o.ncgroups)
		return;
	if (!tree_changed(c))
		return; /* --cgroup-root alone, and no directory of it changed */
	for (struct source *s = c->sources; s; s = s->next)
		s->seen = !s->path;
	for (size_t i = 0; i < c->o.ncgroups; i++) {
		struct stat st;
		if (!stat(c->o.cgroups[i], &st) && S_ISDIR(st.st_mode))
			want_cgroup(c, c->o.cgroups[i], st.st_ino, &added);
	}
	if (c->o.cgroup_root)
		walk(c, c->o.cgroup_root, 0, &added);

	pthread_mutex_lock(&c->lock);
	for (struct source **pp = &c->sources; *pp;) {
		struct source *s = *pp;
		if (!s->seen) {
			*pp = s->next;
			s->next = gone;
			gone = s;
			c->ncgroups--;
		} else {
			pp = &s->next;
		}
	}
	while (added) {
		struct source *s = added;
		added = s->next;
		s->next = NULL;
		struct source **pp = &c->sources; /* appended: the order of discovery */
		while (*pp)
			pp = &(*pp)->next;
		*pp = s;
		c->ncgroups++;
	}
	pthread_mutex_unlock(&c->lock);
	while (gone) {
		struct source *s = gone;
		gone = s->next;
		source_free(c, s);
	}
}

/* Each cgroup's monitoring group brought up to its threads (all releases
 * before any claim: lib/monitor/collect-rdt.c), then read. Return: failed readings. */
static uint64_t rdt_cgroups(struct pmon_collector *c)
{
	uint64_t errors = 0, refused = 0;

	for (struct source *s = c->sources; s; s = s->next)
		if (s->rdt && !pmon__rdt_cgroup__scan(s->rdt))
			pmon__rdt_cgroup__release(s->rdt, c->rdt);
	for (struct source *s = c->sources; s; s = s->next) {
		if (!s->rdt)
			continue;
		uint64_t before = pmon__rdt_cgroup__refused(s->rdt);
		pmon__rdt_cgroup__claim(s->rdt);
		refused += pmon__rdt_cgroup__refused(s->rdt) - before;
		struct pmon_rdt_reading r;
		bool ok = !pmon__rdt_cgroup__read(s->rdt, &r);
		errors += !ok;
		pthread_mutex_lock(&c->lock);
		if (ok)
			*s->rdt_now = r;
		s->rdt_ok = ok;
		pthread_mutex_unlock(&c->lock);
	}
	atomic_fetch_add_explicit(&c->rdt_errors, refused, memory_order_relaxed);
	return errors;
}

/* One reading of every source, added to the totals. */
static void collect(struct pmon_collector *c)
{
	double t0 = pmon_monotonic_s();
	uint64_t errors = 0;
	size_t nev = c->nev;

	rescan(c);
	/* Only this thread changes the list and the sources' scratch: it reads
	 * without the lock, then takes it once to add to the totals that the
	 * scrapes read. */
	for (struct source *s = c->sources; s; s = s->next) {
		s->read_ok = !pmon_monitor__read_delta(s->m, s->sum, s->delta, NULL);
		errors += !s->read_ok;
	}
	struct pmon_rdt_reading r;
	bool rdt_ok = c->rdt && !pmon_rdt_group__read(c->rdt, &r);
	if (c->rdt && !rdt_ok)
		errors++;
	if (c->rdt)
		errors += rdt_cgroups(c);
	pthread_mutex_lock(&c->lock);
	for (struct source *s = c->sources; s; s = s->next) {
		if (!s->read_ok)
			continue;
		for (size_t u = 0; u < s->nunits; u++) {
			const struct pmon_count *d = &s->delta[u * nev];
			struct acc *a = &s->acc[u * nev];
			for (size_t e = 0; e < nev; e++) {
				if (d[e].status == PMON_COUNT_NOT_SUPPORTED)
					continue;
				if (c->clock[e]) /* ns; exact below 2^53 */
					a[e].ns +=
						(uint64_t)(pmon_count__scale(d[e].raw, d[e].enabled,
									     d[e].running) +
							   0.5);
				else
					a[e].value += d[e].value * c->mul[e];
				a[e].enabled += d[e].enabled;
				a[e].running += d[e].running;
			}
		}
	}
	if (rdt_ok)
		c->rdt_now = r;
	c->rdt_ok = rdt_ok;
	c->collect_errors += errors;
	c->collect_s = pmon_monotonic_s() - t0;
	c->readings++;
	c->gen++; /* the bodies rendered before are stale */
	pthread_mutex_unlock(&c->lock);
}

static void *collector_main(void *arg)
{
	struct pmon_collector *c = arg;
	struct pmon_ticker tk;

	pmon_ticker__init(&tk, c->o.interval_ms / 1000.0);
	while (!atomic_load(&c->stop)) {
		double left = pmon_ticker__remaining(&tk);
		if (left > 0) {
			/* One call per interval: the deadline, a stop, or a change
			 * in the cgroup tree (drained now, walked at the reading).
			 * (A condition variable cost a second call: glibc marks the
			 * mutex contended when a timed wait takes it back.) */
			struct pollfd pf[2] = { { .fd = c->stop_fd, .events = POLLIN },
						{ .fd = c->watch_fd, .events = POLLIN } };
			struct timespec ts = { .tv_sec = (time_t)left,
					       .tv_nsec = (long)((left - (double)(time_t)left) *
								 1e9) };
			if (ppoll(pf, c->watch_fd >= 0 ? 2 : 1, &ts, NULL) > 0 &&
			    (pf[1].revents & POLLIN))
				drain_watches(c);
			continue;
		}
		collect(c);
		pmon_ticker__advance(&tk);
	}
	return NULL;
}

/* ---- life cycle --------------------------------------------------------- */

/* The defaults as groups: one read() per CPU (and cgroup) returns a whole
 * group (PERF_FORMAT_GROUP), and an agent reads every second. The hardware
 * group stays within four general counters (cycles and instructions have
 * fixed ones on Intel, SDM 20.2.2). */
static const char *const default_events =
	"{task-clock,cpu-clock,context-switches,cpu-migrations,page-faults}";
static const char *const pmu_events = ",{cycles,instructions,branches,branch-misses}";

/*
 * An -e list of software events only, none grouped, is counted as one group:
 * one read() per CPU per cgroup (PERF_FORMAT_GROUP) instead of one per
 * event, every interval. Software events always schedule together (no
 * counter limit: kernel/events/core.c, perf_swevent_add()). Hardware events
 * stay as given: a group must fit the PMU's counters.
 */
static void group_software(struct pmon_collector *c, const char *events)
{
	size_t n = pmon_evlist__count(c->ev);
	char *spec = NULL;
	struct pmon_evlist *g;

	if (n < 2 || strchr(events, '{'))
		return;
	for (size_t e = 0; e < n; e++) {
		const struct pmon_event_desc *d = pmon_evlist__event(c->ev, e);
		if (d->attr.type != PERF_TYPE_SOFTWARE || d->group != (int)e)
			return;
	}
	if (asprintf(&spec, "{%s}", events) < 0)
		return;
	g = pmon_evlist__new(NULL);
	if (g && !pmon_evlist__add(g, spec) && pmon_evlist__count(g) == n) {
		pmon_evlist__free(c->ev);
		c->ev = g;
	} else {
		pmon_evlist__free(g);
	}
	free(spec);
}

/* The # HELP and # TYPE lines of every event family, in both formats
 * (OpenMetrics names a counter's family without its _total, the 0.0.4 text
 * format with it). Return: 0, -ENOMEM. */
static int make_heads(struct pmon_collector *c)
{
	for (size_t e = 0; e < c->nev; e++) {
		const char *ev = pmon_evlist__event(c->ev, e)->name;
		if (!c->first[e])
			continue;
		for (size_t col = 0; col < 3; col++) {
			static const char *const help[][2] = {
				{ "Count of perf event ", ", scaled for multiplexing." },
				{ "Time perf event ", " was enabled." },
				{ "Time perf event ",
				  " was counting (below enabled: multiplexed)." },
			};
			char h[256];
			snprintf(h, sizeof(h), "%s%s%s", help[col][0], ev, help[col][1]);
			for (int om = 0; om < 2; om++)
				if (asprintf(&c->head[(e * 3 + col) * 2 + om],
					     "# HELP %s%.*s %s\n# TYPE %s%.*s counter\n",
					     c->family[e],
					     (int)strlen(col_suffix[col]) - (om ? 6 : 0),
					     col_suffix[col], h, c->family[e],
					     (int)strlen(col_suffix[col]) - (om ? 6 : 0),
					     col_suffix[col]) < 0) {
					c->head[(e * 3 + col) * 2 + om] = NULL;
					return -ENOMEM;
				}
		}
	}
	return 0;
}

/* Per event: its metric family, unit and multiplier. Return: 0, -ENOMEM. */
static int make_families(struct pmon_collector *c)
{
	c->nev = pmon_evlist__count(c->ev);
	c->family = calloc(c->nev, sizeof(*c->family));
	c->unit = calloc(c->nev, sizeof(*c->unit));
	c->mul = calloc(c->nev, sizeof(*c->mul));
	c->clock = calloc(c->nev, sizeof(*c->clock));
	c->first = calloc(c->nev, sizeof(*c->first));
	c->head = calloc(c->nev * 6, sizeof(*c->head));
	if (!c->family || !c->unit || !c->mul || !c->clock || !c->first || !c->head)
		return -ENOMEM;
	for (size_t e = 0; e < c->nev; e++) {
		const struct pmon_event_desc *d = pmon_evlist__event(c->ev, e);
		char name[128];
		pmon__prom_metric_name(d->name, name, sizeof(name));
		snprintf(c->family[e], sizeof(c->family[e]), "pmon_%s", name);
		c->first[e] = true;
		for (size_t k = 0; k < e; k++)
			if (!strcmp(c->family[k], c->family[e]))
				c->first[e] = false; /* "cycles:u" beside "cycles_u": one family */
		/* Clocks count in ns (scaled to ms for stat): exported in seconds,
		 * Prometheus's base unit, so rate() reads as CPUs busy. */
		if (!strcmp(d->unit, "msec")) {
			snprintf(c->unit[e], sizeof(c->unit[e]), "seconds");
			c->mul[e] = 1e-3;
			/* task-clock, cpu-clock: ns scaled by 1e-6 to ms (the
			 * kernel's software clocks count ns) */
			c->clock[e] = d->scale == 1e-6;
		} else {
			snprintf(c->unit[e], sizeof(c->unit[e]), "%s",
				 d->unit[0] ? d->unit : "events");
			c->mul[e] = 1;
		}
	}
	return make_heads(c);
}

/* --rdt: the root monitoring group, or the reason there is none. */
static void find_rdt(struct pmon_collector *c)
{
	struct pmon_rdt_caps caps;

	pmon__clear_detail();
	if (pmon_rdt_caps(c->o.resctrl_root, &caps) || (!caps.occupancy && !caps.mbm_total) ||
	    !(c->rdt = pmon_rdt_group__root(c->o.resctrl_root))) {
		snprintf(c->rdt_why, sizeof(c->rdt_why), "%s",
			 pmon_errdetail()[0] ? pmon_errdetail() : "no L3 monitoring");
		c->rdt = NULL;
	}
}

struct pmon_collector *pmon_collector__new(const struct pmon_collector_opts *opts)
{
	struct pmon_collector_opts o = { 0 };
	struct pmon_collector *c;
	char spec[512];
	int err = PMON_OPTS_COPY(&o, opts, struct pmon_collector_opts, resctrl_root);

	if (err) {
		errno = -err;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		pmon__detail("out of memory");
		errno = ENOMEM;
		return NULL;
	}
	c->watch_fd = -1;
	c->stop_fd = -1;
	pthread_mutex_init(&c->lock, NULL);
	c->o.interval_ms = o.interval_ms ? o.interval_ms : 1000;
	c->o.rdt = o.rdt;
	if (o.resctrl_root && !(c->o.resctrl_root = strdup(o.resctrl_root))) {
		err = pmon__err(-ENOMEM, "out of memory");
		goto fail;
	}
	c->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->stop_fd < 0) {
		err = pmon__err(-errno, "cannot make an eventfd: %s", strerror(errno));
		goto fail;
	}
	c->pmu = pmon_kernel_has_core_pmu(NULL);
	load_mounts(c);
	snprintf(spec, sizeof(spec), "%s%s", default_events, c->pmu ? pmu_events : "");
	c->ev = pmon_evlist__new(NULL);
	if (!c->ev) {
		err = -errno;
		goto fail;
	}
	err = pmon_evlist__add(c->ev, o.events ? o.events : spec);
	if (err)
		goto fail;
	if (o.events)
		group_software(c, o.events);
	if (make_families(c)) {
		err = pmon__err(-ENOMEM, "out of memory");
		goto fail;
	}
	if (o.rdt)
		find_rdt(c);
	return c;
fail:
	pmon_collector__free(c);
	errno = err < 0 ? -err : EINVAL;
	return NULL;
}

const char *pmon_collector__rdt_unavailable(const struct pmon_collector *c)
{
	return c->o.rdt && !c->rdt ? c->rdt_why : NULL;
}

/* Counting cgroups with --rdt: first remove the groups a pmon that crashed
 * left behind. */
static void rdt_cleanup_once(struct pmon_collector *c)
{
	unsigned removed;

	if (c->rdt && !c->o.rdt_cleaned)
		pmon_rdt_cleanup(c->o.resctrl_root, &removed);
	c->o.rdt_cleaned = true;
}

int pmon_collector__add_system_wide(struct pmon_collector *c)
{
	struct source *s = source_open(c, NULL, 0);

	if (!s)
		return errno ? -errno : -EINVAL;
	c->o.system_wide = true;
	s->next = c->sources;
	c->sources = s;
	return 0;
}

int pmon_collector__add_cgroup(struct pmon_collector *c, const char *path)
{
	struct pmon_target *t;
	char **cg = realloc(c->o.cgroups, (c->o.ncgroups + 1) * sizeof(*cg));
	struct source *s;
	struct stat st;

	if (!cg)
		return pmon__err(-ENOMEM, "out of memory");
	c->o.cgroups = cg;
	rdt_cleanup_once(c);
	if (!(t = pmon_target__new_cgroup(path)))
		return -errno;
	pmon_target__free(t);
	if (stat(path, &st))
		return pmon__err(-errno, "%s: %s", path, strerror(errno));
	if (!(cg[c->o.ncgroups] = strdup(path)))
		return pmon__err(-ENOMEM, "out of memory");
	s = source_open(c, path, st.st_ino);
	if (!s) {
		free(cg[c->o.ncgroups]);
		return errno ? -errno : -EINVAL;
	}
	c->o.ncgroups++;
	s->seen = true;
	s->next = c->sources;
	c->sources = s;
	c->ncgroups++;
	return 0;
}

int pmon_collector__watch_root(struct pmon_collector *c, const char *root)
{
	struct pmon_target *t;

	rdt_cleanup_once(c);
	if (!(t = pmon_target__new_cgroup(root)))
		return -errno;
	pmon_target__free(t);
	free(c->o.cgroup_root);
	if (!(c->o.cgroup_root = strdup(root)))
		return pmon__err(-ENOMEM, "out of memory");
	if (!c->o.ncgroups && c->watch_fd < 0)
		c->watch_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	rescan(c);
	return 0;
}

int pmon_collector__start(struct pmon_collector *c)
{
	int err = pthread_create(&c->thread, NULL, collector_main, c);

	if (err)
		return -err;
	c->started = true;
	return 0;
}

void pmon_collector__free(struct pmon_collector *c)
{
	if (!c)
		return;
	if (c->started) {
		uint64_t one = 1;
		atomic_store(&c->stop, true);
		while (write(c->stop_fd, &one, sizeof(one)) < 0 && errno == EINTR)
			;
		pthread_join(c->thread, NULL);
	}
	while (c->sources) {
		struct source *s = c->sources;
		c->sources = s->next;
		source_free(c, s);
	}
	if (c->rdt)
		pmon_rdt_group__remove(c->rdt); /* the root group: only freed */
	if (c->watch_fd >= 0)
		close(c->watch_fd);
	if (c->stop_fd >= 0)
		close(c->stop_fd);
	for (int om = 0; om < 2; om++)
		body_put(c->body[om]);
	pmon_evlist__free(c->ev);
	free(c->family);
	free(c->unit);
	free(c->mul);
	free(c->clock);
	free(c->first);
	for (size_t i = 0; c->head && i < c->nev * 6; i++)
		free(c->head[i]);
	free(c->head);
	for (size_t i = 0; i < c->o.ncgroups; i++)
		free(c->o.cgroups[i]);
	free(c->o.cgroups);
	free(c->o.cgroup_root);
	free(c->o.resctrl_root);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

size_t pmon_collector__ncgroups(struct pmon_collector *c)
{
	pthread_mutex_lock(&c->lock);
	size_t n = c->ncgroups;
	pthread_mutex_unlock(&c->lock);
	return n;
}

bool pmon_collector__cgroup_path(struct pmon_collector *c, const char *label, char *out, size_t len)
{
	bool found = false;

	pthread_mutex_lock(&c->lock);
	for (struct source *s = c->sources; s && !found; s = s->next)
		if (s->path && !strcmp(s->label, label) &&
		    snprintf(out, len, "%s", s->path) < (int)len)
			found = true;
	pthread_mutex_unlock(&c->lock);
	return found;
}

void pmon_collector__set_profiling(struct pmon_collector *c, bool on)
{
	pthread_mutex_lock(&c->lock);
	c->profiling = on;
	pthread_mutex_unlock(&c->lock);
}

size_t pmon_collector__nevents(const struct pmon_collector *c)
{
	return c->nev;
}

/* ---- rendering ---------------------------------------------------------- */

/* "# HELP" and "# TYPE" of a family; OpenMetrics names a counter's family
 * without its _total, the 0.0.4 text format with it. */
static void family(struct pmon__body *b, bool om, const char *name, const char *type,
		   const char *help)
{
	bool counter = !strcmp(type, "counter");
	size_t n = strlen(name) - (counter && om ? 6 : 0);

	put(b, "# HELP ", 7);
	put(b, name, n);
	put(b, " ", 1);
	puts_(b, help);
	put(b, "\n# TYPE ", 8);
	put(b, name, n);
	put(b, " ", 1);
	puts_(b, type);
	put(b, "\n", 1);
}

/* The decimal digits of @v, ending at @end. Return: the first. */
static char *u64_digits(uint64_t v, char *end)
{
	char *p = end;

	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	return p;
}

/* @v's digits at @w. Return: the end. */
static char *u64_text(uint64_t v, char *w)
{
	char num[24], *end = num + sizeof(num);
	const char *p = u64_digits(v, end);
	size_t n = (size_t)(end - p);

	memcpy(w, p, n);
	return w + n;
}

/* A sample's value without printf where it can (a scrape prints thousands):
 * a whole number, as most counts are, as its digits; else "%.17g", which
 * reads back as the same double (24 bytes at most). Return: the end. */
static char *value_text(double v, char *w)
{
	if (v >= 0 && v < 9007199254740992.0 && v == (double)(uint64_t)v) /* 2^53 */
		return u64_text((uint64_t)v, w);
	int n = snprintf(w, 32, "%.17g", v);
	return w + (n < 0 ? 0 : n > 31 ? 31 : n);
}

/* Nanoseconds as seconds, exactly: "12.000345678", or "12" (30 bytes at
 * most). Return: the end. */
static char *ns_text(uint64_t ns, char *w)
{
	uint64_t frac = ns % 1000000000u;

	w = u64_text(ns / 1000000000u, w);
	if (frac) {
		*w++ = '.';
		for (int i = 8; i >= 0; i--, frac /= 10)
			w[i] = (char)('0' + frac % 10);
		w += 9;
	}
	return w;
}

/* Seconds (a duration measured as a double) as ns_text() writes them. */
static char *seconds_text(double s, char *w)
{
	return ns_text(s > 0 ? (uint64_t)(s * 1e9 + 0.5) : 0, w);
}

static void put_u64(struct pmon__body *b, uint64_t v)
{
	if (body_room(b, 24))
		b->len = (size_t)(u64_text(v, b->p + b->len) - b->p);
}

static void put_seconds(struct pmon__body *b, double s)
{
	if (body_room(b, 32))
		b->len = (size_t)(seconds_text(s, b->p + b->len) - b->p);
}

/* The rows of event @e's family (and of the events that share it) for
 * column @col: each row's labels were made with the source; only the value
 * is written here. */
static void event_family(struct pmon__body *b, struct pmon_collector *c, bool om, size_t e,
			 enum col col)
{
	bool any = false;

	for (struct source *s = c->sources; s && !any; s = s->next)
		for (size_t k = e; k < c->nev && !any; k++)
			any = !strcmp(c->family[k], c->family[e]) && s->supported[k];
	if (!any)
		return;
	puts_(b, c->head[(e * 3 + col) * 2 + om]);
	for (size_t k = e; k < c->nev; k++) {
		if (k != e && strcmp(c->family[k], c->family[e]))
			continue;
		for (struct source *s = c->sources; s; s = s->next) {
			if (!s->supported[k])
				continue;
			const struct row *r = &s->row[(k * 3 + col) * s->nunits];
			for (size_t u = 0; u < s->nunits; u++, r++) {
				const struct acc *a = &s->acc[u * c->nev + k];
				/* the row, then its value: 24 bytes at most ("%.17g") */
				if (!body_room(b, r->len + 40))
					return;
				char *w = b->p + b->len;
				memcpy(w, s->rows + r->off, r->len);
				w += r->len;
				if (col != COL_VALUE)
					w = ns_text(col == COL_ENABLED ? a->enabled : a->running,
						    w);
				else if (c->clock[k])
					w = ns_text(a->ns, w);
				else
					w = value_text(a->value, w);
				*w++ = '\n';
				b->len = (size_t)(w - b->p);
			}
		}
	}
}

/* One RDT metric's rows of one group: @k 0 occupancy, 1 total, 2 local
 * bandwidth; @cgroup already escaped ("" for the root group). */
static void rdt_rows(struct pmon__body *b, const char *name, size_t k,
		     const struct pmon_rdt_reading *r, const char *group, const char *cgroup)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct pmon_rdt_domain *d = &r->d[i];
		const struct pmon_rdt_value *v = k == 0 ? &d->occupancy
			: k == 1			? &d->total
							: &d->local;
		char dom[64], grp[256];
		if (v->state != PMON_RDT_OK)
			continue;
		pmon__prom_label_escape(d->name, dom, sizeof(dom));
		pmon__prom_label_escape(group, grp, sizeof(grp));
		putf(b, "%s{domain=\"%s\",group=\"%s\",cgroup=\"%s\"} %llu\n", name, dom, grp,
		     cgroup, (unsigned long long)v->v);
	}
}

/* Everything a reading decides, in format @om, into @b (emptied first). */
static void render_body(struct pmon_collector *c, bool om, struct pmon__body *b)
{
	b->len = 0;
	b->oom = false;
	for (size_t e = 0; e < c->nev; e++) {
		if (!c->first[e])
			continue;
		for (int col = COL_VALUE; col <= COL_RUNNING; col++)
			event_family(b, c, om, e, (enum col)col);
	}
	family(b, om, "pmon_event_supported", "gauge",
	       "1 when the kernel opened the event (0: not on this machine).");
	for (size_t e = 0; e < c->nev; e++) {
		char ev[256];
		bool ok = false;
		for (struct source *s = c->sources; s; s = s->next)
			ok |= s->supported[e];
		pmon__prom_label_escape(pmon_evlist__event(c->ev, e)->name, ev, sizeof(ev));
		putf(b, "pmon_event_supported{event=\"%s\"} %d\n", ev, ok);
	}
	if (c->o.rdt) {
		family(b, om, "pmon_rdt_available", "gauge",
		       "1 when resctrl monitoring (CMT/MBM) is read.");
		putf(b, "pmon_rdt_available %d\n", c->rdt != NULL);
	}
	if (c->rdt_ok) {
		static const struct {
			const char *name, *type, *help;
		} rdt[] = {
			{ "pmon_rdt_llc_occupancy_bytes", "gauge", "L3 cache occupancy (CMT)." },
			{ "pmon_rdt_mbm_total_bytes_total", "counter",
			  "Memory bandwidth, total (MBM), cumulative bytes." },
			{ "pmon_rdt_mbm_local_bytes_total", "counter",
			  "Memory bandwidth, local (MBM), cumulative bytes." },
		};
		for (size_t k = 0; k < 3; k++) {
			family(b, om, rdt[k].name, rdt[k].type, rdt[k].help);
			rdt_rows(b, rdt[k].name, k, &c->rdt_now, "/", "");
			for (struct source *s = c->sources; s; s = s->next)
				if (s->rdt && s->rdt_ok)
					rdt_rows(b, rdt[k].name, k, s->rdt_now,
						 pmon__rdt_cgroup__group(s->rdt), s->label_esc);
		}
	}
	if (c->rdt && (c->o.ncgroups || c->o.cgroup_root)) {
		family(b, om, "pmon_rdt_errors_total", "counter",
		       "Cgroups given no monitoring group (no free RMID) and threads resctrl "
		       "refused (in another control group).");
		putf(b, "pmon_rdt_errors_total %llu\n",
		     (unsigned long long)atomic_load_explicit(&c->rdt_errors,
							      memory_order_relaxed));
	}
	family(b, om, "pmon_pmu_available", "gauge",
	       "1 when the kernel exposes a hardware PMU (0: software events only, as in many "
	       "VMs).");
	putf(b, "pmon_pmu_available %d\n", c->pmu);
	family(b, om, "pmon_build_info", "gauge", "pmon's version; always 1.");
	putf(b, "pmon_build_info{version=\"%s\"} 1\n", pmon_version());
	family(b, om, "pmon_cgroups", "gauge", "Cgroups counted now.");
	putf(b, "pmon_cgroups %zu\n", c->ncgroups);
	family(b, om, "pmon_cgroup_errors_total", "counter",
	       "Cgroups that could not be counted (gone while opening, refused, over the limit).");
	putf(b, "pmon_cgroup_errors_total %llu\n",
	     (unsigned long long)atomic_load_explicit(&c->cgroup_errors, memory_order_relaxed));
	family(b, om, "pmon_collect_duration_seconds", "gauge",
	       "Time the last background reading of every counter took.");
	puts_(b, "pmon_collect_duration_seconds ");
	put_seconds(b, c->collect_s);
	put(b, "\n", 1);
	family(b, om, "pmon_collect_errors_total", "counter",
	       "Background readings of a counter set that failed.");
	putf(b, "pmon_collect_errors_total %llu\n", (unsigned long long)c->collect_errors);
	family(b, om, "pmon_collections_total", "counter", "Background readings done.");
	putf(b, "pmon_collections_total %llu\n", (unsigned long long)c->readings);
	/* The families of the scrape itself follow in its own part. */
	family(b, om, "pmon_profile_in_progress", "gauge",
	       "1 while /debug/pprof/profile is sampling (another request gets 429).");
}

/* The body of the last reading in format @om, rendered now if it is stale
 * (rewritten in place when no response holds it), with a reference for
 * the caller. Under the lock. NULL: out of memory. */
static struct pmon__body *current_body(struct pmon_collector *c, bool om)
{
	struct pmon__body *b = c->body[om];

	if (b && b->gen == c->gen && !b->oom)
		goto out;
	if (!b || atomic_load_explicit(&b->refs, memory_order_acquire) != 1) {
		/* a response still sends it: it is freed when the last one is done */
		body_put(b);
		b = c->body[om] = body_new(c->body_len[om] + c->body_len[om] / 8);
		if (!b)
			return NULL;
	}
	render_body(c, om, b);
	b->gen = c->gen;
	c->body_len[om] = b->len;
	if (b->oom)
		return NULL;
out:
	atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
	return b;
}

int pmon_collector__render(struct pmon_collector *c, bool om, struct pmon_scrape **out)
{
	double t0 = pmon_monotonic_s();
	struct pmon_scrape *sc = malloc(sizeof(*sc));

	*out = NULL;
	if (!sc)
		return -ENOMEM;
	pthread_mutex_lock(&c->lock);
	sc->body = current_body(c, om);
	if (!sc->body) {
		pthread_mutex_unlock(&c->lock);
		free(sc);
		return -ENOMEM;
	}
	c->scrapes[om]++;
	/* The body ends with pmon_profile_in_progress's # HELP and # TYPE;
	 * the rest is this scrape's (at most ~500 bytes of the 1024). */
	struct pmon__body t = { .p = sc->tail, .cap = sizeof(sc->tail), .fixed = true };
	puts_(&t, c->profiling ? "pmon_profile_in_progress 1\n" : "pmon_profile_in_progress 0\n");
	puts_(&t,
	      "# HELP pmon_scrape_duration_seconds Time the previous /metrics scrape took "
	      "to render.\n# TYPE pmon_scrape_duration_seconds gauge\n"
	      "pmon_scrape_duration_seconds ");
	put_seconds(&t, c->last_scrape_s);
	puts_(&t,
	      om ? "\n# HELP pmon_scrapes /metrics scrapes served by format, this one "
		   "included.\n# TYPE pmon_scrapes counter\n"
		 : "\n# HELP pmon_scrapes_total /metrics scrapes served by format, this one "
		   "included.\n# TYPE pmon_scrapes_total counter\n");
	puts_(&t, "pmon_scrapes_total{format=\"text\"} ");
	put_u64(&t, c->scrapes[0]);
	puts_(&t, "\npmon_scrapes_total{format=\"openmetrics\"} ");
	put_u64(&t, c->scrapes[1]);
	puts_(&t, om ? "\n# EOF\n" : "\n");
	sc->tail_len = t.oom ? 0 : t.len;
	c->last_scrape_s = pmon_monotonic_s() - t0;
	pthread_mutex_unlock(&c->lock);
	*out = sc;
	return 0;
}

const char *pmon_scrape__body(const struct pmon_scrape *sc, size_t *len)
{
	*len = sc->body->len;
	return sc->body->p;
}

const char *pmon_scrape__tail(const struct pmon_scrape *sc, size_t *len)
{
	*len = sc->tail_len;
	return sc->tail;
}

void pmon_scrape__free(void *sc)
{
	struct pmon_scrape *s = sc;

	if (!s)
		return;
	body_put(s->body);
	free(s);
}

int pmon_collector__describe(struct pmon_collector *c, char **buf, size_t *len)
{
	FILE *f = open_memstream(buf, len);

	if (!f)
		return -ENOMEM;
	pthread_mutex_lock(&c->lock);
	for (size_t e = 0; e < c->nev; e++) {
		char ev[256];
		pmon__prom_label_escape(pmon_evlist__event(c->ev, e)->name, ev, sizeof(ev));
		for (char *p = ev; *p; p++)
			if (*p == '<' || *p == '>' || *p == '&')
				*p = '?';
		fprintf(f, "<li><code>%s_total</code> (event %s, unit %s)</li>\n", c->family[e], ev,
			c->unit[e]);
	}
	fprintf(f, "<li>%zu cgroups counted%s</li>\n", c->ncgroups,
		c->o.system_wide ? ", and every task system-wide" : "");
	pthread_mutex_unlock(&c->lock);
	if (fclose(f)) {
		free(*buf);
		*buf = NULL;
		return -ENOMEM;
	}
	return 0;
}
