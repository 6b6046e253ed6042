// SPDX-License-Identifier: MIT
/*
 * Sampling ring buffers (pmon/sample.h). One perf event per CPU with its
 * own mmapped ring (1 + 2^n pages); records are read between data_tail and
 * data_head as include/uapi/linux/perf_event.h prescribes: load data_head
 * with acquire order, copy, then store data_tail with release order so the
 * kernel may reuse the space. A drain hands the records of all rings over
 * in time order (perf's "ordered events" per round), so a thread's sample
 * on one CPU never comes before the mmap that another CPU recorded for it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "sample/datafile.h"
#include <pmon/sample.h>

struct ring {
	int fd;
	struct perf_event_mmap_page *pc;
	uint8_t *data;
	size_t size; /* data area, a power of two */
};

struct pmon_sampler {
	struct pmon_open_opts how; /* the caller's (inherit, enable_on_exec) */
	struct ring *r;
	size_t n;
	int *extra; /* the other events' fds, writing into their CPU's ring */
	size_t nextra;
	uint64_t *ids; /* [event * nunit + thread * ncpu + cpu] */
	size_t nev, ncpu, nunit;
	size_t maplen;
	uint64_t sample_type;
	bool build_id; /* asked for build ids in MMAP2 (until the kernel refuses) */
	bool cgroup; /* the pid is a cgroup directory's fd (PERF_FLAG_PID_CGROUP) */
	uint64_t regs_user;
	uint8_t *buf; /* one record, contiguous */
	size_t buflen;
	struct pollfd *pfd;
	uint8_t *all; /* one drain's records, back to back */
	size_t all_len, all_cap;
	struct order {
		uint64_t time;
		size_t off, seq;
	} * ord;
	size_t nord, cap_ord;
};

void pmon_sampler__close(struct pmon_sampler *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		if (s->r[i].pc)
			munmap(s->r[i].pc, s->maplen);
		if (s->r[i].fd >= 0)
			close(s->r[i].fd);
	}
	for (size_t i = 0; i < s->nextra; i++)
		close(s->extra[i]);
	free(s->extra);
	free(s->ids);
	free(s->r);
	free(s->buf);
	free(s->pfd);
	free(s->all);
	free(s->ord);
	free(s);
}

/* Open event @ev of the list on @cpu (its attr with the sampler's settings). */
static int open_one(struct pmon_sampler *s, const struct pmon_event_desc *d,
		    const struct pmon_target *t, const struct pmon_sample_opts *o, size_t ev,
		    pid_t pid, int cpu, int *out)
{
	struct perf_event_attr a = d->attr;
	uint64_t period = o && o->periods && o->periods[ev] ? o->periods[ev] : o ? o->period : 0;
	int fd;

	a.size = sizeof(a);
	a.sample_type = s->sample_type;
	/* A tracepoint without -c or -F: every hit, as perf samples them
	 * (evsel__newtp_idx(): sample_period 1), not a frequency the kernel
	 * would chase with periods of thousands. */
	if (!period && d->attr.type == PERF_TYPE_TRACEPOINT && !(o && o->freq))
		period = 1;
	if (period) {
		a.freq = 0;
		a.sample_period = period;
	} else {
		a.freq = 1;
		a.sample_freq = o && o->freq ? o->freq : 1000;
	}
	a.disabled = 1;
	a.enable_on_exec = s->how.enable_on_exec;
	a.inherit = s->how.inherit;
	/* Side-band records (mmaps, comms, tasks) once, from the first event. */
	a.mmap = a.mmap2 = a.comm = a.task = ev == 0 && !(o && o->no_side_band);
	/* An exec's COMM flagged PERF_RECORD_MISC_COMM_EXEC (3.16+), as perf
	 * asks: the trace reader ends the old image's execve there (#28). */
	a.comm_exec = a.comm;
	a.build_id = a.mmap2 && s->build_id; /* MMAP2 with the file's build id (5.12+) */
	a.context_switch = ev == 0 && o && o->context_switch;
	if (o && o->use_clockid) {
		a.use_clockid = 1;
		a.clockid = o->clockid;
	}
	a.sample_id_all = 1;
	if (s->regs_user) {
		a.sample_regs_user = s->regs_user;
		a.sample_stack_user = o->stack_user;
		a.exclude_callchain_user = 1; /* the report unwinds user space */
	}
	a.wakeup_watermark = (uint32_t)(s->maplen / 4);
	a.watermark = 1;
	bool user_fallback = !(d->mods & (PMON_MOD_U | PMON_MOD_K | PMON_MOD_H));
	unsigned long flags = s->cgroup ? PERF_FLAG_PID_CGROUP : 0;
	fd = pmon_perf_event_open(&a, pid, cpu, -1, flags, user_fallback);
	if (fd < 0 && errno == EINVAL && a.build_id) {
		a.build_id = 0; /* an older kernel: device and inode */
		s->build_id = false;
		fd = pmon_perf_event_open(&a, pid, cpu, -1, flags, user_fallback);
	}
	if (fd < 0) {
		int e = -errno;
		if (e == -ESRCH)
			return pmon__err(e, "process %d does not exist", (int)pid);
		/* Rights, as perf_event_open(2) checks them: CPU-wide sampling
		 * needs CAP_PERFMON above perf_event_paranoid 0; another user's
		 * process needs the right to ptrace it. */
		if ((e == -EACCES || e == -EPERM) && pid == -1)
			return pmon__err(e,
					 "cannot sample '%s' on CPU %d: sampling every task of a "
					 "CPU needs root or CAP_PERFMON (perf_event_paranoid is "
					 "above 0); this user's own processes can be sampled "
					 "without",
					 d->name, cpu);
		if (e == -EACCES || e == -EPERM)
			return pmon__err(e,
					 "cannot sample '%s' on process %d: it is another user's, "
					 "or perf_event_paranoid forbids it; root or CAP_PERFMON "
					 "can",
					 d->name, (int)pid);
		return pmon__err(e, "cannot sample '%s' on CPU %d: %s", d->name, cpu,
				 e == -ENOENT || e == -EOPNOTSUPP
					 ? "this machine cannot sample this event (no PMU? "
					   "software events such as cpu-clock can)"
					 : strerror(-e));
	}
	*out = fd;
	return 0;
}

/* The sample type of @o's samples (and the registers of DWARF mode). */
static int set_sample_type(struct pmon_sampler *s, const struct pmon_evlist *events,
			   const struct pmon_sample_opts *o)
{
	s->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
		PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
		(o && o->callchain ? PERF_SAMPLE_CALLCHAIN : 0) | (o ? o->sample_type_extra : 0);
	/*
	 * The period goes into each sample only in frequency mode, where the
	 * kernel changes it. With a fixed one (-c, --calibrate) the recording
	 * says it once: asking for it anyway makes the kernel sample a software
	 * event such as page-faults at every occurrence (perf_swevent_event()
	 * takes PERF_SAMPLE_PERIOD without freq as "report each one").
	 */
	/* A tracepoint's record (its fields), as perf records it: pmon
	 * script decodes it by the format the recording keeps. */
	for (size_t i = 0; i < pmon_evlist__count(events); i++)
		if (pmon_evlist__event(events, i)->attr.type == PERF_TYPE_TRACEPOINT)
			s->sample_type |= PERF_SAMPLE_RAW;
	bool fixed = o && (o->period || o->periods);
	for (size_t i = 0; fixed && o->periods && i < pmon_evlist__count(events); i++)
		fixed = o->periods[i] || o->period;
	if (!fixed)
		s->sample_type |= PERF_SAMPLE_PERIOD;
	if (o && o->stack_user) {
		if (o->stack_user % 8 || o->stack_user > 65528)
			return pmon__err(-EINVAL, "stack size %u: a multiple of 8 up to 65528",
					 o->stack_user);
		/* What DWARF CFI needs on x86-64: the general registers, sp, ip. */
		s->regs_user = PMON_REGS_USER_X86;
		s->sample_type |=
			PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	}
	return 0;
}

/*
 * Whom to open the events for: *@tids, or the cgroup's directory in *@cgfd
 * (as the one "tid"). A process is all its threads: the kernel follows
 * only the threads created after the open (inherit), so each existing one
 * is opened too, and writes into its CPU's ring (perf record -p does the
 * same).
 */
static int sampler_units(struct pmon_sampler *s, const struct pmon_target *t, pid_t **tids,
			 size_t *ntids, int *cgfd)
{
	if (!t)
		return pmon__err(-EINVAL, "no target to sample");
	if (!t->cgroup)
		return pmon_target__threads(t, s->how.enable_on_exec, tids, ntids);
	/* perf record -G: the cgroup's tasks on every CPU; each event holds
	 * the cgroup (perf_cgroup_connect()), so its fd closes after */
	*cgfd = open(t->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*cgfd < 0)
		return pmon__err(-errno, "cannot open cgroup '%s'", t->cgroup);
	if (!(*tids = malloc(sizeof(**tids))))
		return -ENOMEM;
	(*tids)[0] = *cgfd;
	*ntids = 1;
	s->cgroup = true;
	return 0;
}

/* Map the ring of @fd, the first event on CPU ring s->n. */
static int map_ring(struct pmon_sampler *s, int fd)
{
	struct ring *r = &s->r[s->n];

	r->fd = fd;
	r->pc = mmap(NULL, s->maplen, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->pc == MAP_FAILED) {
		int e = -errno;
		r->pc = NULL;
		s->n++;
		return pmon__err(e,
				 "cannot map the ring buffer: %s (raise "
				 "/proc/sys/kernel/perf_event_mlock_kb?)",
				 strerror(-e));
	}
	r->data = (uint8_t *)r->pc + sysconf(_SC_PAGESIZE);
	r->size = s->maplen - (size_t)sysconf(_SC_PAGESIZE);
	s->pfd[s->n] = (struct pollfd){ .fd = r->fd, .events = POLLIN };
	s->n++;
	return 0;
}

/* Open event @ev for thread @th (@tid) on @cpu, the @ci-th CPU sampled:
 * its own ring for the first event of the first thread, else into that
 * CPU's ring. */
static int open_unit(struct pmon_sampler *s, const struct pmon_evlist *events,
		     const struct pmon_target *t, const struct pmon_sample_opts *o, size_t ev,
		     size_t th, pid_t tid, size_t ci, long cpu)
{
	size_t slot = ev * s->nunit + th * s->ncpu + ci;
	int fd = -1,
	    err = open_one(s, pmon_evlist__event(events, ev), t, o, ev, tid, (int)cpu, &fd);

	if (err)
		return err;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &s->ids[slot]))
		s->ids[slot] = 0;
	if (!ev && !th)
		return map_ring(s, fd);
	s->extra[s->nextra++] = fd;
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, s->r[ci].fd)) {
		int e = -errno;
		return pmon__err(e, "cannot share CPU %ld's ring with '%s': %s", cpu,
				 pmon_evlist__event(events, ev)->name, strerror(-e));
	}
	return 0;
}

static int sampler_open(const struct pmon_evlist *events, const struct pmon_target *t,
			const struct pmon_sample_opts *user, struct pmon_sampler **out)
{
	struct pmon_sample_opts oc = { 0 };
	const struct pmon_sample_opts *o = user ? &oc : NULL;
	int err = PMON_OPTS_COPY(&oc, user, struct pmon_sample_opts, sz);

	if (err)
		return err;
	struct pmon_open_opts how;
	if ((err = pmon__open_opts_get(o ? o->open : NULL, &how)))
		return err;
	const struct pmon_event_desc *d = pmon_evlist__event(events, 0);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned pages = o && o->pages ? o->pages : 64;
	struct pmon_sampler *s;
	pid_t *tids = NULL;
	size_t ntids = 0;
	int cgfd = -1;

	if (!d)
		return pmon__err(-EINVAL, "no event to sample");
	if (pages & (pages - 1))
		return pmon__err(-EINVAL, "ring pages %u: a power of two", pages);
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->how = how;
	s->maplen = (size_t)(pages + 1) * (size_t)sysconf(_SC_PAGESIZE);
	s->buflen = 65536; /* a record's size is a u16 */
	s->buf = malloc(s->buflen);
	/* A CPU list (-C) samples those CPUs alone, as perf's -C; else every
	 * online CPU. */
	size_t nlist = 0;
	const int *list = pmon_target__cpus(t, &nlist);
	size_t nring = nlist > (size_t)ncpu ? nlist : (size_t)ncpu;
	s->r = calloc(nring, sizeof(*s->r));
	s->pfd = calloc(nring, sizeof(*s->pfd));
	if (!s->buf || !s->r || !s->pfd) {
		err = -ENOMEM;
		goto fail;
	}
	s->build_id = true;
	if ((err = set_sample_type(s, events, o)) ||
	    (err = sampler_units(s, t, &tids, &ntids, &cgfd)))
		goto fail;
	s->nev = pmon_evlist__count(events);
	s->ncpu = nlist ? nlist : (size_t)ncpu;
	s->nunit = ntids * s->ncpu;
	s->ids = calloc(s->nev * s->nunit, sizeof(*s->ids));
	s->extra = calloc(s->nev * s->nunit, sizeof(int));
	if (!s->ids || !s->extra) {
		err = -ENOMEM;
		goto fail;
	}
	for (size_t ev = 0; ev < s->nev; ev++)
		for (size_t th = 0; th < ntids; th++)
			for (size_t ci = 0; ci < s->ncpu; ci++) {
				long cpu = nlist ? list[ci] : (long)ci;
				err = open_unit(s, events, t, o, ev, th, tids[th], ci, cpu);
				if (err == -ESRCH && th > 0)
					err = 0; /* that thread ended meanwhile */
				if (err)
					goto fail;
			}
	free(tids);
	if (cgfd >= 0)
		close(cgfd);
	*out = s;
	return 0;
fail:
	free(tids);
	if (cgfd >= 0)
		close(cgfd);
	pmon_sampler__close(s);
	return err;
}

struct pmon_sampler *pmon_sampler__open(const struct pmon_evlist *events,
					const struct pmon_target *t,
					const struct pmon_sample_opts *o)
{
	struct pmon_sampler *s = NULL;

	int err = sampler_open(events, t, o, &s);

	return pmon__ret_ptr(err, s);
}

static int ioctl_all(struct pmon_sampler *s, unsigned long req)
{
	for (size_t i = 0; i < s->n; i++)
		if (ioctl(s->r[i].fd, req, 0))
			return -errno;
	for (size_t i = 0; i < s->nextra; i++)
		if (ioctl(s->extra[i], req, 0))
			return -errno;
	return 0;
}

size_t pmon_sampler__ids(const struct pmon_sampler *s, size_t i, const uint64_t **ids)
{
	if (i >= s->nev)
		return 0;
	*ids = s->ids + i * s->nunit;
	return s->nunit;
}

int pmon_sampler__enable(struct pmon_sampler *s)
{
	return ioctl_all(s, PERF_EVENT_IOC_ENABLE);
}

int pmon_sampler__disable(struct pmon_sampler *s)
{
	return ioctl_all(s, PERF_EVENT_IOC_DISABLE);
}

int pmon_sampler__poll(struct pmon_sampler *s, int timeout_ms)
{
	int n = poll(s->pfd, s->n, timeout_ms);

	return n < 0 ? (errno == EINTR ? 0 : -errno) : n;
}

uint64_t pmon_sampler__sample_type(const struct pmon_sampler *s)
{
	return s->sample_type;
}

uint64_t pmon_sampler__regs_user(const struct pmon_sampler *s)
{
	return s->regs_user;
}

/*
 * The time of a record: a sample's PERF_SAMPLE_TIME, or the time in the
 * sample_id trailer of any other record (sample_id_all). Our sample_type
 * puts TID, TIME and CPU there, 8 bytes each, in that order.
 */
static uint64_t rec_time(const struct pmon_sampler *s, const uint8_t *rec, size_t len)
{
	const struct perf_event_header *h = (const void *)rec;
	uint64_t t = 0;

	if (!(s->sample_type & PERF_SAMPLE_TIME))
		return 0;
	if (h->type == PERF_RECORD_SAMPLE) {
		/* The library's one sample parser (lib/sample/parse.c). */
		struct pmon_sample smp;
		return pmon_sample__parse(rec, len, s->sample_type, s->regs_user, &smp) ? 0
											: smp.time;
	}
	/* The sample_id trailer (sample_id_all): TID, TIME, CPU, IDENTIFIER as
	 * our sample_type has them, 8 bytes each, at the end of the record. */
	size_t trailer = (s->sample_type & PERF_SAMPLE_TID ? 8 : 0) + 8 +
		(s->sample_type & PERF_SAMPLE_CPU ? 8 : 0) +
		(s->sample_type & PERF_SAMPLE_IDENTIFIER ? 8 : 0);
	if (len < sizeof(*h) + trailer)
		return 0;
	memcpy(&t, rec + len - trailer + (s->sample_type & PERF_SAMPLE_TID ? 8 : 0), 8);
	return t;
}

static int cmp_order(const void *a, const void *b)
{
	const struct order *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Copy one record to the drain buffer with its time. */
static int keep(struct pmon_sampler *s, const uint8_t *rec, size_t len)
{
	if (PMON_GROW(&s->all, &s->all_cap, s->all_len + len) ||
	    PMON_GROW(&s->ord, &s->cap_ord, s->nord + 1))
		return -ENOMEM;
	memcpy(s->all + s->all_len, rec, len);
	s->ord[s->nord] = (struct order){ rec_time(s, rec, len), s->all_len, s->nord };
	s->nord++;
	s->all_len += len;
	return 0;
}

long pmon_sampler__drain(struct pmon_sampler *s, int (*cb)(void *, const void *, size_t), void *ctx)
{
	int err = 0;

	s->all_len = s->nord = 0;
	for (size_t i = 0; i < s->n && !err; i++) {
		struct ring *r = &s->r[i];
		uint64_t head = __atomic_load_n(&r->pc->data_head, __ATOMIC_ACQUIRE);
		uint64_t tail = r->pc->data_tail;

		while (tail < head) {
			const struct perf_event_header *h =
				(const void *)(r->data + (tail & (r->size - 1)));
			size_t off = tail & (r->size - 1), len;
			struct perf_event_header hdr;

			/* The header itself may wrap. */
			if (off + sizeof(hdr) <= r->size) {
				hdr = *h;
			} else {
				size_t first = r->size - off;
				memcpy(&hdr, r->data + off, first);
				memcpy((uint8_t *)&hdr + first, r->data, sizeof(hdr) - first);
			}
			len = hdr.size;
			if (len < sizeof(hdr) || len > s->buflen)
				break; /* corrupt: stop reading this ring */
			if (off + len <= r->size) {
				memcpy(s->buf, r->data + off, len);
			} else {
				size_t first = r->size - off;
				memcpy(s->buf, r->data + off, first);
				memcpy(s->buf + first, r->data, len - first);
			}
			if ((err = keep(s, s->buf, len)))
				break;
			tail += len;
		}
		__atomic_store_n(&r->pc->data_tail, tail, __ATOMIC_RELEASE);
	}
	if (s->nord > 1)
		qsort(s->ord, s->nord, sizeof(*s->ord), cmp_order);
	for (size_t i = 0; i < s->nord; i++) {
		const uint8_t *rec = s->all + s->ord[i].off;
		int rc = cb(ctx, rec, ((const struct perf_event_header *)(const void *)rec)->size);
		if (rc < 0)
			return rc;
	}
	return err ? err : (long)s->nord;
}
