// SPDX-License-Identifier: MIT
/*
 * The Soft Logic Analyzer's "non-invasive hooks": kernel events of the
 * traced program — scheduler switches and wake-ups, system calls, page
 * faults, hard and soft interrupts, block I/O, KVM exits — recorded from
 * tracepoints and software events through the sampler's per-CPU perf rings
 * (lib/sample/sampler.c, one sample per event: period 1), stamped by the
 * kernel on one time base with the hooks' TSC (time_base(), below): the
 * perf clock where the perf mmap page converts the TSC to it, else
 * CLOCK_MONOTONIC (attr.use_clockid), the clock the hooks' TSC is paired
 * with; written as TKEV chunks of a trace file (lib/trace/tracefile.h)
 * after a TCLK chunk naming the base and the alignment measured.
 * pmon_trace_merge() puts them beside the hooks.
 *
 * Tracepoints are named through lib/event (tracefs ids, mounted there if
 * need be) and their fields found in tracefs format files, never assumed:
 * the layout of sched_switch changed across Linux versions.
 *
 * Per-task events see what happens while the task runs: a sleeping
 * thread's wake-up runs in another task (a timer interrupt, the thread
 * that posts to it), so sched_wakeup is read on every CPU and kept where
 * the wakee is one of the traced threads (the target's, and those seen in
 * the per-task events; a tracepoint filter cannot name a process's
 * threads) -- from a tracefs instance of pmon's own, not perf, which misses
 * the wake-ups an idle CPU makes (ftrace_open() says what was measured).
 * System-wide (-a) every task is traced and nothing is filtered. Switching
 * back in is not seen by a per-task sched_switch either (it runs in the
 * previous task), so the sched group also asks for PERF_RECORD_SWITCH
 * (attr.context_switch), which the kernel emits on both the way out and the
 * way in of a task-bound event (Linux kernel/events/core.c,
 * perf_event_switch()).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "trace/tracefile.h"
#include <pmon/arch.h>
#include <pmon/clock.h>
#include <pmon/counter.h>
#include <pmon/event.h>
#include <pmon/sample.h>
#include <pmon/trace.h>

#define TRACEFS_DEFAULT "/sys/kernel/tracing"

/* The groups -e names, in the order `pmon trace -e help` lists them. */
static const struct pmon_trace_kernel_group groups[] = {
	{ "sched", "sched:sched_switch, sched:sched_wakeup, PERF_RECORD_SWITCH",
	  "switches (with prev_state), wake-ups (with the waker), off-CPU spans" },
	{ "syscalls", "raw_syscalls:sys_enter, raw_syscalls:sys_exit",
	  "a span per system call, sys_NAME, with its return value" },
	{ "faults", "page-faults (software event)", "page faults with the address and the ip" },
	{ "irq", "irq:irq_handler_entry, irq:irq_handler_exit",
	  "hard interrupts, irq_N spans, while they interrupt the traced tasks" },
	{ "softirq", "irq:softirq_entry, irq:softirq_exit",
	  "soft interrupts, softirq_NAME spans, while they interrupt the traced tasks" },
	{ "block", "block:block_rq_issue, block:block_rq_complete",
	  "block I/O issued and completed (sector, sectors)" },
	{ "kvm", "kvm:kvm_exit, kvm:kvm_userspace_exit",
	  "VM exits of a guest on this host (exit reason), and those that reach the VMM in user "
	  "space (KVM_EXIT_*)" },
};

/* What each event becomes: a record type and the fields for its a and b. */
static const struct kdef {
	const char *group, *event;
	uint16_t type;
	const char *fa, *fb; /* tracepoint fields; NULL: none (or from the sample) */
	bool wide; /* on every CPU, kept for the traced threads (see the top) */
} defs[] = {
	{ "sched", "sched:sched_switch", PMON__K_SWITCH_OUT, "prev_state", "next_pid", false },
	{ "sched", "sched:sched_wakeup", PMON__K_WAKEUP, "pid", "target_cpu", true },
	{ "syscalls", "raw_syscalls:sys_enter", PMON__K_SYS_ENTER, "id", NULL, false },
	{ "syscalls", "raw_syscalls:sys_exit", PMON__K_SYS_EXIT, "id", "ret", false },
	{ "faults", "page-faults", PMON__K_FAULT, NULL, NULL, false },
	{ "irq", "irq:irq_handler_entry", PMON__K_IRQ_ENTRY, "irq", NULL, false },
	{ "irq", "irq:irq_handler_exit", PMON__K_IRQ_EXIT, "irq", "ret", false },
	{ "softirq", "irq:softirq_entry", PMON__K_SOFTIRQ_ENTRY, "vec", NULL, false },
	{ "softirq", "irq:softirq_exit", PMON__K_SOFTIRQ_EXIT, "vec", NULL, false },
	{ "block", "block:block_rq_issue", PMON__K_BLOCK_ISSUE, "sector", "nr_sector", false },
	{ "block", "block:block_rq_complete", PMON__K_BLOCK_COMPLETE, "sector", "nr_sector",
	  false },
	{ "kvm", "kvm:kvm_exit", PMON__K_KVM_EXIT, "exit_reason", "guest_rip", false },
	/* KVM_RUN returning to the VMM (virt/kvm/kvm_main.c, kvm_vcpu_ioctl()):
	 * on every host, also where kvm_exit never fires (a software-only KVM
	 * such as kvm_pvm, whose exits are not the vendor module's). */
	{ "kvm", "kvm:kvm_userspace_exit", PMON__K_KVM_USER_EXIT, "reason", "errno", false },
};
#define NDEFS (sizeof(defs) / sizeof(defs[0]))

struct field {
	unsigned off, size;
	bool have;
};

struct pmon_trace_kernel {
	struct pmon_evlist *ev;
	struct pmon_sampler *s;
	struct pmon_evlist *wev; /* the wide events (sched_wakeup) on every CPU */
	struct pmon_sampler *ws;
	const struct kdef *wdef;
	struct field wfa, wfb;
	bool all; /* system-wide: every task's events are kept */
	struct ftrace {
		char dir[512]; /* pmon's tracefs instance; "" when none */
		int *fd; /* per_cpu/cpuN/trace_pipe_raw */
		int *cpu;
		size_t n;
		unsigned id; /* sched_wakeup's common_type */
		struct field pid, waker, tcpu;
		uint8_t *page;
		struct pmon__krec *held; /* wake-ups of threads not seen yet */
		size_t nheld, capheld;
		int err;
		bool mounted; /* tracefs mounted by ftrace_open(), for the trace */
	} ft;
	char ft_why[256]; /* why not through ftrace */
	struct pmon_open_opts how; /* the caller's (inherit, enable_on_exec) */
	int32_t *tids; /* the traced threads: the target's, then those seen */
	size_t ntids, captids;
	const struct kdef *def[NDEFS]; /* per event of the list */
	struct field fa[NDEFS], fb[NDEFS];
	size_t nev;
	uint64_t sample_type;
	int fd;
	struct pmon__krec *buf;
	size_t n, cap;
	uint64_t events, lost;
	uint64_t unwritten; /* events read after a write failed (a full disk) */
	int err;
	struct skip { /* the events skipped for one reason */
		char why[256], what[256];
	} skip[8];
	size_t nskip;
	char skipped[2048]; /* "A, B: why; C: why" (pmon_trace_kernel__skipped()) */
	struct pmon_trace_chunk_clock clk; /* the time base (time_base()) */
	struct pmon_perf_tsc tc;
};

static int ftrace_open(struct pmon_trace_kernel *k, const struct pmon_event_opts *eo,
		       const char *root);
static void remove_stale(const char *root);
static void measure_alignment(struct pmon_trace_kernel *k, const struct pmon_trace_disk_header *h,
			      const struct pmon_event_opts *eo);
static void ftrace_close(struct ftrace *f);
static int seed_names(struct pmon_trace_kernel *k);
static int write_file(const char *dir, const char *name, const char *what);

/* @what is skipped because of @why: events skipped for the same reason are
 * named together, so that a warning for every group as an unprivileged
 * user stays one readable line. */
static void note_skip(struct pmon_trace_kernel *k, const char *what, const char *why)
{
	size_t i = 0, n = strcspn(what, " ");
	/* lib/event's reasons name the event first: it is named here already */
	if (!strncmp(why, "event '", 7) && !strncmp(why + 7, what, n) &&
	    !strncmp(why + 7 + n, "': ", 3))
		why += 7 + n + 3;
	while (i < k->nskip && strcmp(k->skip[i].why, why))
		i++;
	if (i == k->nskip) {
		if (i == PMON_ARRAY_SIZE(k->skip))
			i--; /* more reasons than room: the last one says "and more" */
		else
			pmon__strlcpy(k->skip[k->nskip++].why, why, sizeof(k->skip[0].why));
	}
	struct skip *s = &k->skip[i];
	n = strlen(s->what);
	if (n + 3 < sizeof(s->what))
		snprintf(s->what + n, sizeof(s->what) - n, "%s%s", n ? ", " : "", what);
	k->skipped[0] = '\0';
	for (size_t j = 0, m = 0; j < k->nskip && m < sizeof(k->skipped); j++) {
		int w = snprintf(k->skipped + m, sizeof(k->skipped) - m, "%s%s: %s", j ? "; " : "",
				 k->skip[j].what, k->skip[j].why);
		m += w > 0 ? (size_t)w : 0;
	}
}

/* KVM exits come only where guests run: /dev/kvm is there (the kvm module
 * loaded with VMX or SVM to use). The kvm tracepoints exist without it
 * wherever the module is built in -- in a guest too, whose CPU is not
 * offered virtualization: the events would open and never fire. */
static const char *no_kvm(void)
{
	if (!access("/dev/kvm", F_OK))
		return NULL;
	return "no KVM host here: /dev/kvm is absent (no VMX/SVM for the kvm module, or it is "
	       "not loaded), so no guest can run and exit";
}

static bool is_kvm(uint16_t type)
{
	return type == PMON__K_KVM_EXIT || type == PMON__K_KVM_USER_EXIT;
}

const struct pmon_trace_kernel_group *pmon_trace_kernel_groups(size_t *n)
{
	*n = PMON_ARRAY_SIZE(groups);
	return groups;
}

int pmon_trace_kernel_probe(const char *name, const char *tracefs_root)
{
	struct pmon_event_opts eo = { .sz = sizeof(eo),
				      .tracefs_root = tracefs_root,
				      .no_pfm = true };
	bool known = false;
	int err = 0;

	for (size_t i = 0; i < NDEFS && !err; i++) {
		if (strcmp(defs[i].group, name))
			continue;
		known = true;
		if (is_kvm(defs[i].type) && no_kvm()) {
			err = pmon__err(-ENOENT, "%s: %s", defs[i].event, no_kvm());
			break;
		}
		struct pmon_evlist *one = pmon_evlist__new(&eo);
		if (!one)
			return -errno;
		err = pmon_evlist__add(one, defs[i].event);
		pmon_evlist__free(one);
		if (err && err != -ENOMEM) {
			char why[256];
			pmon__strlcpy(why, pmon_errdetail(), sizeof(why));
			err = pmon__err(-ENOENT, "%s: %s", defs[i].event, why);
		}
	}
	return known ? err : pmon__err(-EINVAL, "unknown kernel event group '%s'", name);
}

/* @names ("sched,irq", "all") to a mask over groups[]; -1 on a bad name. */
static long group_mask(const char *names, char *bad, size_t badlen)
{
	long mask = 0;
	const char *p = names;

	while (*p) {
		size_t n = strcspn(p, ",");
		bool ok = false;
		if (n == 3 && !strncmp(p, "all", 3)) {
			mask = (1L << PMON_ARRAY_SIZE(groups)) - 1;
			ok = true;
		}
		for (size_t g = 0; !ok && g < PMON_ARRAY_SIZE(groups); g++)
			if (strlen(groups[g].name) == n && !strncmp(p, groups[g].name, n)) {
				mask |= 1L << g;
				ok = true;
			}
		if (!ok) {
			snprintf(bad, badlen, "%.*s", (int)n, p);
			return -1;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	return mask;
}

static bool in_mask(long mask, const char *group)
{
	for (size_t g = 0; g < PMON_ARRAY_SIZE(groups); g++)
		if (!strcmp(groups[g].name, group))
			return mask & (1L << g);
	return false;
}

static int write_header(struct pmon_trace_kernel *k, const struct pmon_trace_kernel_opts *o,
			const struct pmon_event_opts *eo)
{
	struct pmon_trace_disk_header h = { .version = PMON_TRACE_VERSION,
					    .header_size = sizeof(h),
					    .pid = o->pid };
	memcpy(h.magic, PMON_TRACE_MAGIC, 8);
	pmon__trace_clock_pair(NULL, &h.tick0, &h.mono0_ns, &h.bracket0);
	if (pmon_tsc_calibrate(5, &h.ticks_per_sec, NULL))
		h.ticks_per_sec = 0;
	pmon__strlcpy(h.command, o->command ? o->command : "", sizeof(h.command));
	measure_alignment(k, &h, eo);
	int err = pmon__trace_write_header(k->fd, &h);
	if (err)
		return err;
	return pmon__trace_write_chunk(k->fd, "TCLK", &k->clk, sizeof(k->clk), NULL, 0);
}

static bool traced(const struct pmon_trace_kernel *k, int32_t tid)
{
	if (k->all)
		return true;
	for (size_t i = 0; i < k->ntids; i++)
		if (k->tids[i] == tid)
			return true;
	return false;
}

static int see(struct pmon_trace_kernel *k, int32_t tid)
{
	if (k->all || traced(k, tid))
		return 0;
	if (PMON_GROW(&k->tids, &k->captids, k->ntids + 1))
		return -ENOMEM;
	k->tids[k->ntids++] = tid;
	return 0;
}

/* The target's threads are traced before any of their events is seen: a
 * wake-up may be the first event of a thread (of -p's process, say). */
static int seed_threads(struct pmon_trace_kernel *k, const struct pmon_target *t)
{
	pid_t *tids = NULL;
	size_t n = 0;
	int err;

	if (k->all)
		return 0;
	if ((err = pmon_target__threads(t, k->how.enable_on_exec, &tids, &n)))
		return err;
	for (size_t i = 0; i < n && !err; i++)
		if (tids[i] > 0)
			err = see(k, tids[i]);
	free(tids);
	return err;
}

/* ---- the time base ------------------------------------------------------ */

/* A software event or tracepoint of this thread that samples every
 * occurrence with its time, mmapped with one data page: its first page
 * tells whether the kernel converts the TSC to the perf clock, its ring
 * gives kernel stamps to measure the alignment with. @mono: stamped with
 * CLOCK_MONOTONIC (use_clockid), else the perf clock (x86 offers
 * cap_user_time_zero only then: arch_perf_update_userpage()). */
struct probe {
	int fd;
	struct perf_event_mmap_page *pc;
	size_t pg;
};

static void probe_close(struct probe *p)
{
	if (p->pc)
		munmap(p->pc, 2 * p->pg);
	if (p->fd >= 0)
		close(p->fd);
	p->pc = NULL;
	p->fd = -1;
}

/* @tp: a tracepoint's attr (type, config), or NULL: page faults. */
static int probe_open(struct probe *p, bool mono, const struct perf_event_attr *tp)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_PAGE_FAULTS,
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_TIME,
		.exclude_kernel = 1, /* a user fault's regs are user mode: counted */
		.exclude_hv = 1,
	};
	if (tp) {
		a.type = tp->type;
		a.config = tp->config;
		a.exclude_kernel = 0;
	}
	if (mono) {
		a.use_clockid = 1;
		a.clockid = CLOCK_MONOTONIC;
	}
	p->pc = NULL;
	p->pg = (size_t)sysconf(_SC_PAGESIZE);
	p->fd = pmon_perf_event_open(&a, 0, -1, -1, 0, false);
	if (p->fd < 0)
		return -errno;
	void *m = mmap(NULL, 2 * p->pg, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd, 0);
	if (m == MAP_FAILED) {
		int err = -errno;
		probe_close(p);
		return err;
	}
	p->pc = m;
	return 0;
}

/* The samples the ring got since the last call: how many, the last one's
 * time in *@time; the ring is emptied. */
static unsigned probe_samples(struct probe *p, uint64_t *time)
{
	const uint8_t *data = (const uint8_t *)p->pc + p->pg;
	uint64_t head = __atomic_load_n(&p->pc->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = p->pc->data_tail;
	unsigned n = 0;

	while (head - tail >= sizeof(struct perf_event_header)) {
		uint8_t rec[64];
		struct perf_event_header h;
		for (size_t i = 0; i < sizeof(h); i++)
			((uint8_t *)&h)[i] = data[(tail + i) % p->pg];
		if (h.size < sizeof(h) || h.size > head - tail)
			break;
		if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof(h) + 8 &&
		    h.size <= sizeof(rec)) {
			for (size_t i = 0; i < h.size; i++)
				rec[i] = data[(tail + i) % p->pg];
			memcpy(time, rec + sizeof(h), 8);
			n++;
		}
		tail += h.size;
	}
	__atomic_store_n(&p->pc->data_tail, head, __ATOMIC_RELEASE);
	return n;
}

/* TSC @tick on @k's time base: through the page, or the header's pair and
 * calibrated rate. */
static uint64_t tick_ns(const struct pmon_trace_kernel *k, const struct pmon_trace_disk_header *h,
			uint64_t tick)
{
	if (k->clk.base == PMON_TIMEBASE_PERF)
		return pmon_perf_tsc__to_ns(&k->tc, tick);
	if (!h->ticks_per_sec)
		return h->mono0_ns;
	if (tick >= h->tick0)
		return h->mono0_ns +
			(uint64_t)((unsigned __int128)(tick - h->tick0) * 1000000000u /
				   h->ticks_per_sec);
	return h->mono0_ns -
		(uint64_t)((unsigned __int128)(h->tick0 - tick) * 1000000000u / h->ticks_per_sec);
}

/*
 * The alignment of the kernel's stamps with the hooks', measured: an event
 * the kernel stamps -- a system call's raw_syscalls:sys_enter where
 * tracepoints may be opened, else a page fault -- between two TSC reads,
 * the TSC reads put on the time base as the reader puts the hooks'; the
 * width of the smallest interval holding both reads and the kernel's
 * stamp, the narrowest of 16. A stamp outside the reads (an offset between
 * the clocks) widens it by as much. Into k->clk: align_ns
 * (PMON__CLK_UNMEASURED when nothing could be measured) and the event.
 */
static void measure_alignment(struct pmon_trace_kernel *k, const struct pmon_trace_disk_header *h,
			      const struct pmon_event_opts *eo)
{
	enum { TRIES = 16 };
	struct probe p = { .fd = -1 };
	uint64_t best = UINT64_MAX, t = 0;
	bool sys = false, mono = k->clk.base == PMON_TIMEBASE_MONO;
	struct pmon_evlist *one = pmon_evlist__new(eo);

	k->clk.align_ns = PMON__CLK_UNMEASURED;
	if (one && !pmon_evlist__add(one, "raw_syscalls:sys_enter"))
		sys = !probe_open(&p, mono, &pmon_evlist__event(one, 0)->attr);
	pmon_evlist__free(one);
	if (!sys && probe_open(&p, mono, NULL))
		return;
	volatile char *mem = mmap(NULL, TRIES * p.pg, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		probe_close(&p);
		return;
	}
	(void)probe_samples(&p, &t);
	for (size_t i = 0; i < TRIES; i++) {
		pmon_lfence();
		uint64_t a = pmon_rdtsc();
		pmon_lfence();
		if (sys)
			(void)syscall(SYS_getppid);
		else
			mem[i * p.pg] = 1; /* the first touch of the page: a fault */
		pmon_lfence();
		uint64_t b = pmon_rdtsc();
		pmon_lfence();
		if (probe_samples(&p, &t) != 1)
			continue; /* another one came in: not this one's alone */
		uint64_t ta = tick_ns(k, h, a), tb = tick_ns(k, h, b);
		uint64_t lo = ta < t ? ta : t, hi = tb > t ? tb : t;
		if (hi - lo < best)
			best = hi - lo;
	}
	munmap((void *)mem, TRIES * p.pg);
	probe_close(&p);
	if (best >= PMON__CLK_UNMEASURED)
		return;
	k->clk.align_ns = (uint32_t)best;
	pmon__strlcpy(k->clk.measured_with, sys ? "raw_syscalls:sys_enter" : "page-faults",
		      sizeof(k->clk.measured_with));
}

/*
 * The time base: the perf clock where the kernel offers the TSC's
 * conversion to it in the mmap page (cap_user_time_zero; on x86 only with
 * the TSC as a stable sched_clock, arch/x86/events/core.c
 * arch_perf_update_userpage()): the kernel's events keep their own stamps
 * (perf_clock() = local_clock(), kernel/events/core.c; tracefs's "perf"
 * clock is trace_clock() = local_clock() too, kernel/trace/trace_clock.c)
 * and the hooks' TSC is converted exactly, by the kernel's own
 * multiplier. Elsewhere (a guest on kvm-clock: the page's cap bits are 0)
 * CLOCK_MONOTONIC, which the hooks' TSC is mapped to by calibration.
 */
static void time_base(struct pmon_trace_kernel *k)
{
	struct probe p;

	k->clk.base = PMON_TIMEBASE_MONO;
	k->clk.align_ns = PMON__CLK_UNMEASURED;
	if (!probe_open(&p, false, NULL)) {
		pmon_perf_tsc__read(p.pc, NULL, &k->tc, NULL);
		probe_close(&p);
		k->clk.base = pmon_perf_tsc__timebase(&k->tc, NULL);
		k->clk.caps = (k->tc.cap_time ? PMON__CLK_CAP_TIME : 0) |
			(k->tc.cap_time_zero ? PMON__CLK_CAP_TIME_ZERO : 0) |
			(k->tc.cap_time_short ? PMON__CLK_CAP_TIME_SHORT : 0) | PMON__CLK_PROBED;
		k->clk.time_mult = k->tc.mult;
		k->clk.time_shift = k->tc.shift;
		k->clk.time_zero = k->tc.zero;
		k->clk.time_cycles = k->tc.cycles;
		k->clk.time_mask = k->tc.mask;
	}
	char cur[64] = "";
	if (!pmon_clocksource(NULL, cur, sizeof(cur), NULL, 0))
		cur[strcspn(cur, " \n")] = '\0';
	pmon__strlcpy(k->clk.clocksource, cur, sizeof(k->clk.clocksource));
}

static int open_sampler(struct pmon_evlist *ev, const struct pmon_target *t,
			const struct pmon_open_opts *how, unsigned pages, bool sched, bool mono,
			struct pmon_sampler **out)
{
	struct pmon_sample_opts so = {
		.sz = sizeof(so),
		.period = 1, /* every occurrence */
		.pages = pages,
		.sample_type_extra = PERF_SAMPLE_RAW | PERF_SAMPLE_ADDR,
		.use_clockid = mono, /* else the perf clock, perf's default */
		.clockid = CLOCK_MONOTONIC,
		.context_switch = sched,
		/* The traced tasks' forks, execs, exits and names (COMM, FORK,
		 * EXIT; MMAP2 comes along and is ignored), not the wide
		 * wake-ups' (every task's): who is which process. */
		.no_side_band = how == NULL,
		.open = how,
	};
	*out = pmon_sampler__open(ev, t, &so);
	return *out ? 0 : -errno;
}

/* A wide event (sched_wakeup) on every CPU, for a target that is not
 * system-wide (root or CAP_PERFMON); skipped, named, if not. */
static int open_wide(struct pmon_trace_kernel *k, const struct kdef *df,
		     const struct pmon_event_opts *eo, unsigned pages)
{
	struct pmon_target all = { .pid = -1, .system_wide = true };
	int err;

	if (!(k->wev = pmon_evlist__new(eo)))
		return -errno;
	if (!(err = pmon_evlist__add(k->wev, df->event)))
		err = open_sampler(k->wev, &all, NULL, pages, false,
				   k->clk.base == PMON_TIMEBASE_MONO, &k->ws);
	if (err == -ENOMEM)
		return err;
	if (err) {
		char what[128];
		pmon__fmt(what, sizeof(what), "%s on every CPU", df->event);
		note_skip(k, what, pmon_errdetail());
		pmon_evlist__free(k->wev);
		k->wev = NULL;
		return 0;
	}
	k->wdef = df;
	if (k->ft_why[0])
		note_skip(k,
			  "sched:sched_wakeup from tracefs (perf's instead: wake-ups an idle CPU "
			  "makes may be missing)",
			  k->ft_why);
	k->wfa.have = !pmon_evlist__tp_field(k->wev, df->event, df->fa, &k->wfa.off, &k->wfa.size);
	k->wfb.have = !pmon_evlist__tp_field(k->wev, df->event, df->fb, &k->wfb.off, &k->wfb.size);
	return 0;
}

/* The events of @mask's groups that this kernel has (one missing here is
 * noted and skipped), into @cand. Return: 0 or -errno. */
static int candidates(struct pmon_trace_kernel *k, long mask, const struct pmon_event_opts *eo,
		      const struct kdef **cand, size_t *ncandp)
{
	size_t ncand = 0;
	int err;

	/* Each event on its own: one that is missing here is skipped. */
	for (size_t i = 0; i < NDEFS; i++) {
		if (!in_mask(mask, defs[i].group) || (defs[i].wide && (!k->all || k->ft.dir[0])))
			continue;
		if (is_kvm(defs[i].type) && no_kvm()) {
			note_skip(k, defs[i].event, no_kvm());
			continue;
		}
		struct pmon_evlist *one = pmon_evlist__new(eo);
		if (!one) {
			err = -errno;
			return err;
		}
		err = pmon_evlist__add(one, defs[i].event);
		pmon_evlist__free(one);
		if (err == -ENOMEM)
			return err;
		if (err) {
			note_skip(k, defs[i].event, pmon_errdetail());
			continue;
		}
		cand[ncand++] = &defs[i];
	}
	*ncandp = ncand;
	return 0;
}

/* Open @cand together; where that fails, find the ones that cannot be
 * opened, note them and open the rest. Return: 0 or -errno. */
static int open_candidates(struct pmon_trace_kernel *k, const struct pmon_target *t,
			   const struct pmon_trace_kernel_opts *dp,
			   const struct pmon_event_opts *eo, const struct kdef **cand, size_t ncand)
{
	const struct pmon_trace_kernel_opts d = *dp;
	int err;

	/* Open them all; where that fails, find the ones that cannot be opened. */
	bool sched = false;
	for (;;) {
		pmon_evlist__free(k->ev);
		k->ev = pmon_evlist__new(eo);
		if (!k->ev) {
			err = -errno;
			return err;
		}
		sched = false;
		k->nev = 0;
		for (size_t i = 0; i < ncand; i++) {
			if ((err = pmon_evlist__add(k->ev, cand[i]->event)))
				return err;
			k->def[k->nev++] = cand[i];
			sched |= cand[i]->type == PMON__K_SWITCH_OUT;
		}
		if (!ncand) {
			err = pmon__err(-ENOENT, "no kernel event can be recorded here (%s)",
					k->skipped);
			return err;
		}
		err = open_sampler(k->ev, t, &k->how, d.pages ? d.pages : 128, sched,
				   k->clk.base == PMON_TIMEBASE_MONO, &k->s);
		if (!err)
			break;
		if (err == -ESRCH || err == -ENOMEM)
			return err;
		/* Which one? Each alone, the failing ones named and left out. */
		char why[256];
		pmon__strlcpy(why, pmon_errdetail(), sizeof(why));
		size_t keep = 0;
		for (size_t i = 0; i < ncand; i++) {
			struct pmon_evlist *save = k->ev;
			struct pmon_sampler *s1 = NULL;
			k->ev = pmon_evlist__new(eo);
			int e = k->ev ? pmon_evlist__add(k->ev, cand[i]->event) : -ENOMEM;
			if (!e)
				e = open_sampler(k->ev, t, &k->how, 1,
						 cand[i]->type == PMON__K_SWITCH_OUT,
						 k->clk.base == PMON_TIMEBASE_MONO, &s1);
			pmon_sampler__close(s1);
			pmon_evlist__free(k->ev);
			k->ev = save;
			if (e == -ENOMEM || e == -ESRCH) {
				err = e;
				return err;
			}
			if (e)
				note_skip(k, cand[i]->event, pmon_errdetail());
			else
				cand[keep++] = cand[i];
		}
		if (keep == ncand) { /* each opens alone, not together */
			err = pmon__err(err, "%s", why);
			return err;
		}
		ncand = keep;
	}
	return 0;
}

/* With the events open: the wide wake-ups, the threads known at start,
 * the tracepoints' fields, the file's header; then enable. Return: 0 or -errno. */
static int finish_open(struct pmon_trace_kernel *k, const struct pmon_target *t, const char *path,
		       long mask, const struct pmon_trace_kernel_opts *dp,
		       const struct pmon_event_opts *eop)
{
	const struct pmon_trace_kernel_opts d = *dp;
	struct pmon_event_opts eo = *eop;
	int err;

	/* Every CPU's wake-ups, of every task: a busy machine makes many, and
	 * pmon may wait for a CPU itself; 4x the rings (2 MiB per CPU). */
	for (size_t i = 0; i < NDEFS && !k->all && !k->ft.dir[0]; i++) {
		if (!defs[i].wide || !in_mask(mask, defs[i].group))
			continue;
		if ((err = open_wide(k, &defs[i], &eo, 4 * (d.pages ? d.pages : 128))))
			return err;
	}
	if ((err = seed_threads(k, t)) || (err = seed_names(k)))
		return err;
	for (size_t i = 0; i < k->nev; i++) {
		const struct kdef *df = k->def[i];
		if (df->fa)
			k->fa[i].have = !pmon_evlist__tp_field(k->ev, df->event, df->fa,
							       &k->fa[i].off, &k->fa[i].size);
		if (df->fb)
			k->fb[i].have = !pmon_evlist__tp_field(k->ev, df->event, df->fb,
							       &k->fb[i].off, &k->fb[i].size);
	}
	/* Traces show what a program did and when: owner-only. */
	k->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW, 0600);
	if (k->fd < 0) {
		err = pmon__err(-errno, "cannot write '%s': %s", path, strerror(errno));
		return err;
	}
	if ((err = write_header(k, &d, &eo))) {
		err = pmon__err(err, "cannot write '%s': %s", path, strerror(-err));
		return err;
	}
	/* A command's events start at its exec (enable_on_exec). */
	if ((!k->how.enable_on_exec && (err = pmon_sampler__enable(k->s))) ||
	    (k->ws && (err = pmon_sampler__enable(k->ws)))) {
		err = pmon__err(err, "cannot enable the kernel events: %s", strerror(-err));
		return err;
	}
	return 0;
}

int pmon_trace_kernel__open(const struct pmon_target *t, const char *path,
			    const struct pmon_trace_kernel_opts *o, struct pmon_trace_kernel **out)
{
	struct pmon_trace_kernel_opts d = { .sz = sizeof(d) };
	struct pmon_event_opts eo = { .sz = sizeof(eo) };
	struct pmon_trace_kernel *k;
	const struct kdef *cand[NDEFS];
	size_t ncand = 0;
	char bad[64];
	int err;

	/* First release: up to @command; fields added later read as 0. */
	if ((err = PMON_OPTS_COPY(&d, o, struct pmon_trace_kernel_opts, command)))
		return err;
	long mask = group_mask(d.groups ? d.groups : "sched,syscalls", bad, sizeof(bad));
	if (mask < 0) {
		char names[256] = "";
		for (size_t g = 0, n = 0; g < PMON_ARRAY_SIZE(groups) && n < sizeof(names); g++) {
			int w = snprintf(names + n, sizeof(names) - n, "%s, ", groups[g].name);
			n += w > 0 ? (size_t)w : 0;
		}
		return pmon__err(-EINVAL, "unknown kernel event group '%s' (%sor all)", bad, names);
	}
	if (!mask)
		return pmon__err(-EINVAL, "no kernel event group named");
	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->fd = -1;
	if ((err = pmon__open_opts_get(d.open, &k->how))) {
		free(k);
		return err;
	}
	time_base(k);
	/* System-wide, every task is traced: the wide events join the others. */
	k->all = t->system_wide;
	eo.tracefs_root = d.tracefs_root;
	eo.no_pfm = true;
	k->ev = pmon_evlist__new(&eo);
	if (!k->ev) {
		err = -errno;
		goto fail;
	}
	/* What a killed pmon left, whatever this trace records (issue #31.10). */
	remove_stale(d.tracefs_root ? d.tracefs_root : TRACEFS_DEFAULT);
	/* The wake-ups through ftrace where it can (see ftrace_open()); else
	 * through perf, below. */
	if (in_mask(mask, "sched")) {
		err = ftrace_open(k, &eo, d.tracefs_root);
		if (err == -ENOMEM)
			goto fail;
		if (err) {
			pmon__strlcpy(k->ft_why, pmon_errdetail(), sizeof(k->ft_why));
			ftrace_close(&k->ft);
			pmon_evlist__free(k->wev);
			k->wev = NULL;
		}
	}
	if ((err = candidates(k, mask, &eo, cand, &ncand)))
		goto fail;
	if ((err = open_candidates(k, t, &d, &eo, cand, ncand)))
		goto fail;
	k->sample_type = pmon_sampler__sample_type(k->s);
	if ((err = finish_open(k, t, path, mask, &d, &eo)))
		goto fail;
	*out = k;
	return 0;
fail:
	if (k->fd >= 0)
		close(k->fd); /* @path is the caller's to remove (cli: a temporary) */
	ftrace_close(&k->ft);
	pmon_sampler__close(k->s);
	pmon_evlist__free(k->ev);
	pmon_sampler__close(k->ws);
	pmon_evlist__free(k->wev);
	free(k);
	return err;
}

const char *pmon_trace_kernel__skipped(const struct pmon_trace_kernel *k)
{
	return k->skipped;
}

int pmon_trace_kernel__poll(struct pmon_trace_kernel *k, int timeout_ms)
{
	return pmon_sampler__poll(k->s, timeout_ms);
}

int64_t pmon__trace_tp_field(const uint8_t *raw, size_t n, unsigned off, unsigned size)
{
	if (!raw || off > n || size > n - off)
		return 0;
	const uint8_t *p = raw + off;
	switch (size) {
	case 1:
		return p[0];
	case 2: {
		uint16_t v;
		memcpy(&v, p, 2);
		return v;
	}
	case 4: {
		int32_t v;
		memcpy(&v, p, 4);
		return v;
	}
	default: {
		int64_t v = 0;
		memcpy(&v, p, size < 8 ? size : 8);
		return v;
	}
	}
}

/* A field of a perf sample's raw record (pmon__trace_tp_field()). */
static int64_t field(const struct pmon_sample *smp, const struct field *f)
{
	return f->have ? pmon__trace_tp_field(smp->raw, smp->raw_size, f->off, f->size) : 0;
}

static int add(struct pmon_trace_kernel *k, const struct pmon__krec *r)
{
	/* tid 0: a CPU's idle task, no lane of its own (docs/trace.md); a
	 * negative one is no task (a record without its sample_id). */
	if (r->tid <= 0)
		return 0;
	if (PMON_GROW(&k->buf, &k->cap, k->n + 1))
		return -ENOMEM;
	k->buf[k->n++] = *r;
	return 0;
}

/* The sample_id trailer of a side-band record (sample_id_all), laid out as
 * the sampler's sample_type has it: TID, TIME, CPU, IDENTIFIER, 8 bytes
 * each (perf_event.h "struct sample_id"). */
static bool trailer(const struct pmon_trace_kernel *k, const uint8_t *rec, size_t len, int32_t *tid,
		    uint64_t *time, uint16_t *cpu)
{
	size_t n = 32;
	uint32_t v[2];
	if (len < sizeof(struct perf_event_header) + n ||
	    (k->sample_type & (PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID)))
		return false;
	const uint8_t *p = rec + len - n;
	memcpy(v, p, 8);
	*tid = (int32_t)v[1];
	memcpy(time, p + 8, 8);
	memcpy(v, p + 16, 8);
	*cpu = (uint16_t)v[0];
	return true;
}

/* A sched_wakeup from the every-CPU rings: kept when it wakes a traced
 * thread; put on the wakee's lane, with the waker. */
static int on_wakeup(void *ctx, const void *rec, size_t len)
{
	struct pmon_trace_kernel *k = ctx;
	const struct perf_event_header *h = rec;
	struct pmon_sample smp;

	if (h->type == PERF_RECORD_LOST) {
		uint64_t lost;
		if (len >= sizeof(*h) + 16) {
			memcpy(&lost, (const uint8_t *)rec + sizeof(*h) + 8, 8);
			k->lost += lost;
		}
		return 0;
	}
	if (h->type != PERF_RECORD_SAMPLE || pmon_sample__parse(rec, len, k->sample_type, 0, &smp))
		return 0;
	struct pmon__krec r = {
		.mono_ns = smp.time,
		.tid = (int32_t)field(&smp, &k->wfa),
		.type = k->wdef->type,
		.cpu = (uint16_t)smp.cpu,
		.a = (int64_t)smp.tid,
		.b = field(&smp, &k->wfb),
	};
	return traced(k, r.tid) ? add(k, &r) : 0;
}

/* A thread's name as a PMON__K_COMM record's two arguments. */
static int add_comm(struct pmon_trace_kernel *k, int32_t tid, uint64_t ns, uint16_t cpu,
		    const char *name, size_t n)
{
	struct pmon__krec r = { .mono_ns = ns, .tid = tid, .type = PMON__K_COMM, .cpu = cpu };
	char b[16] = { 0 };
	memcpy(b, name, n < sizeof(b) - 1 ? n : sizeof(b) - 1);
	memcpy(&r.a, b, 8);
	memcpy(&r.b, b + 8, 8);
	return add(k, &r);
}

/* PERF_RECORD_COMM ({pid, tid, comm}; PERF_RECORD_MISC_COMM_EXEC at an
 * exec), FORK and EXIT ({pid, ppid, tid, ptid, time}): which process a
 * thread is of, and its name (perf_event.h). */
static int on_task(struct pmon_trace_kernel *k, const void *rec, size_t len)
{
	const struct perf_event_header *h = rec;
	const uint8_t *p = (const uint8_t *)rec + sizeof(*h);
	struct pmon__krec r = { .type = PMON__K_TASK };
	uint32_t v[4];
	int32_t tid;

	if (len < sizeof(*h) + 16 || !trailer(k, rec, len, &tid, &r.mono_ns, &r.cpu))
		return 0;
	memcpy(v, p, 16);
	if (h->type == PERF_RECORD_COMM) {
		r.tid = (int32_t)v[1];
		r.a = (int32_t)v[0];
		bool exec = h->misc & PERF_RECORD_MISC_COMM_EXEC;
		r.b = exec ? PMON__TASK_EXEC : PMON__TASK_SEEN;
		size_t room = len - sizeof(*h) - 8; /* the name, then the 32-byte trailer */
		size_t n = strnlen((const char *)p + 8, room > 32 ? room - 32 : 0);
		int err = exec ? add(k, &r) : 0;
		return err ? err : add_comm(k, r.tid, r.mono_ns, r.cpu, (const char *)p + 8, n);
	}
	r.tid = (int32_t)v[2];
	r.a = (int32_t)v[0];
	if (h->type == PERF_RECORD_EXIT) {
		r.b = PMON__TASK_EXIT;
	} else {
		r.b = PMON__TASK_FORK | (int64_t)(int32_t)v[3] << 8;
		if (see(k, r.tid))
			return -ENOMEM;
	}
	return add(k, &r);
}

/* The threads there are when the trace starts, with their process and
 * name, from /proc: every task system-wide, else the target's. */
static int read_proc_task(struct pmon_trace_kernel *k, int32_t tid)
{
	char path[64], buf[512];
	int32_t pid = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0; /* gone meanwhile */
	while (fgets(buf, sizeof(buf), f))
		if (!strncmp(buf, "Tgid:", 5)) {
			pid = (int32_t)strtol(buf + 5, NULL, 10);
			break;
		}
	fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)tid);
	f = fopen(path, "re");
	size_t n = f ? fread(buf, 1, 16, f) : 0;
	if (f)
		fclose(f);
	while (n && buf[n - 1] == '\n')
		n--;
	struct pmon__krec r = { .tid = tid, .type = PMON__K_TASK, .a = pid };
	int err = pid > 0 ? add(k, &r) : 0;
	return err || !n ? err : add_comm(k, tid, 0, 0, buf, n);
}

static int seed_names(struct pmon_trace_kernel *k)
{
	int err = 0;

	if (!k->all) {
		for (size_t i = 0; i < k->ntids && !err; i++)
			err = read_proc_task(k, k->tids[i]);
		return err;
	}
	DIR *d = opendir("/proc");
	struct dirent *de;
	while (d && !err && (de = readdir(d))) {
		char path[300];
		long pid = strtol(de->d_name, NULL, 10);
		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/task", pid);
		DIR *t = opendir(path);
		struct dirent *te;
		while (t && !err && (te = readdir(t))) {
			long tid = strtol(te->d_name, NULL, 10);
			if (tid > 0)
				err = read_proc_task(k, (int32_t)tid);
		}
		if (t)
			closedir(t);
	}
	if (d)
		closedir(d);
	return err;
}

static int on_record(void *ctx, const void *rec, size_t len)
{
	struct pmon_trace_kernel *k = ctx;
	const struct perf_event_header *h = rec;
	struct pmon__krec r = { 0 };

	if (h->type == PERF_RECORD_LOST) {
		uint64_t lost;
		if (len >= sizeof(*h) + 16) {
			memcpy(&lost, (const uint8_t *)rec + sizeof(*h) + 8, 8);
			k->lost += lost;
		}
		return 0;
	}
	/* A task-bound event's switches, or (system-wide) every CPU's: both
	 * carry the task switching in their sample_id trailer (Linux
	 * perf_event_switch_output(): the record is made in that task). */
	if (h->type == PERF_RECORD_SWITCH || h->type == PERF_RECORD_SWITCH_CPU_WIDE) {
		if (!trailer(k, rec, len, &r.tid, &r.mono_ns, &r.cpu) || r.tid == 0 ||
		    see(k, r.tid))
			return 0; /* tid 0: a CPU's idle task, no lane of its own */
		bool out = h->misc & PERF_RECORD_MISC_SWITCH_OUT;
		r.type = out ? PMON__K_OFFCPU_BEGIN : PMON__K_OFFCPU_END;
		r.a = out && (h->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
		return add(k, &r);
	}
	if (h->type == PERF_RECORD_COMM || h->type == PERF_RECORD_FORK ||
	    h->type == PERF_RECORD_EXIT)
		return on_task(k, rec, len);
	if (h->type != PERF_RECORD_SAMPLE)
		return 0;
	struct pmon_sample smp;
	if (pmon_sample__parse(rec, len, k->sample_type, 0, &smp))
		return 0;
	size_t i = 0;
	const uint64_t *ids = NULL;
	for (; i < k->nev; i++) {
		size_t n = pmon_sampler__ids(k->s, i, &ids), j = 0;
		while (j < n && ids[j] != smp.id)
			j++;
		if (j < n)
			break;
	}
	if (i == k->nev)
		return 0;
	r.mono_ns = smp.time;
	r.tid = (int32_t)smp.tid;
	r.cpu = (uint16_t)smp.cpu;
	r.type = k->def[i]->type;
	/* A wake-up's sample is the waker's, who need not be traced. */
	if (r.type != PMON__K_WAKEUP && see(k, r.tid))
		return -ENOMEM;
	r.a = field(&smp, &k->fa[i]);
	r.b = field(&smp, &k->fb[i]);
	switch (r.type) {
	case PMON__K_WAKEUP: /* system-wide: on the wakee's lane, with the waker */
		r.tid = (int32_t)r.a;
		r.a = (int64_t)smp.tid;
		break;
	case PMON__K_FAULT:
		r.a = (int64_t)smp.addr;
		r.b = (int64_t)smp.ip;
		break;
	default:
		break;
	}
	return add(k, &r);
}

/* ---- wake-ups through ftrace ------------------------------------------- */

long pmon__ftrace_page(const uint8_t *page, size_t len,
		       void (*cb)(void *ctx, uint64_t ts, const uint8_t *data, size_t n), void *ctx)
{
	const uint32_t missed = 1u << 31, stored = 1u << 30;
	uint64_t ts, commit;
	long lost = 0;

	if (len < 16)
		return -EINVAL;
	memcpy(&ts, page, 8);
	memcpy(&commit, page + 8, 8);
	size_t size = (size_t)(commit & (stored - 1));
	if (size > len - 16)
		return -EINVAL;
	const uint8_t *p = page + 16, *end = p + size;
	if (commit & missed) {
		lost = 1;
		if ((commit & stored) && (size_t)(end - page) <= len - 8) {
			uint64_t n;
			memcpy(&n, end, 8);
			lost = n ? (long)(n & 0x7fffffff) : 1;
		}
	}
	while (end - p >= 4) {
		uint32_t h, a0 = 0;
		memcpy(&h, p, 4);
		unsigned type = h & 31;
		uint32_t delta = h >> 5;
		if (type == 0 || type >= 29) {
			if (end - p < 8)
				return -EINVAL;
			memcpy(&a0, p + 4, 4);
		}
		switch (type) {
		case 29: /* padding: the page's end (delta 0), or a discarded event */
			if (!delta)
				return lost;
			if (a0 > (size_t)(end - p) - 4)
				return -EINVAL;
			p += 4 + (a0 ? a0 : 4);
			break;
		case 30: /* time extend */
			ts += ((uint64_t)a0 << 27) | delta;
			p += 8;
			break;
		case 31: { /* an absolute timestamp: its 59 bits, the page's top 5
			    * (kernel/trace/ring_buffer.c rb_fix_abs_ts()) */
			uint64_t abs = ((uint64_t)a0 << 27) | delta;
			ts = abs | (ts & (0xf8ull << 56));
			p += 8;
			break;
		}
		default: {
			size_t n = type ? type * 4u : a0;
			const uint8_t *data = p + (type ? 4 : 8);
			if (!type && a0 < 4)
				return -EINVAL;
			if (!type)
				n -= 4; /* a0 counts itself */
			if (n > (size_t)(end - data))
				return -EINVAL;
			ts += delta;
			cb(ctx, ts, data, n);
			p = data + n;
			break;
		}
		}
	}
	return lost;
}

static int write_file(const char *dir, const char *name, const char *what)
{
	char path[600];
	if (!pmon__fmt(path, sizeof(path), "%s/%s", dir, name))
		return -ENAMETOOLONG;
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t w = write(fd, what, strlen(what));
	int err = w == (ssize_t)strlen(what) ? 0 : w < 0 ? -errno : -EIO;
	close(fd);
	return err;
}

static void ftrace_close(struct ftrace *f)
{
	for (size_t i = 0; i < f->n; i++)
		close(f->fd[i]);
	if (f->dir[0]) {
		write_file(f->dir, "events/sched/sched_wakeup/enable", "0");
		rmdir(f->dir);
	}
	if (f->mounted)
		umount2(TRACEFS_DEFAULT, MNT_DETACH);
	free(f->fd);
	free(f->cpu);
	free(f->page);
	free(f->held);
	memset(f, 0, sizeof(*f));
}

/* The instances of a pmon that was killed (SIGKILL leaves them, recording):
 * removed when their process is gone. */
static void remove_stale(const char *root)
{
	char dir[600], path[900];
	if (!pmon__fmt(dir, sizeof(dir), "%s/instances", root))
		return;
	DIR *d = opendir(dir);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));) {
		char *end;
		if (strncmp(e->d_name, "pmon-trace-", 11))
			continue;
		long pid = strtol(e->d_name + 11, &end, 10);
		if (end == e->d_name + 11 || *end != '-' || pid <= 0 || pid > INT_MAX ||
		    pmon__process_alive((pid_t)pid))
			continue; /* not pmon's, or its pmon runs */
		if (pmon__fmt(path, sizeof(path), "%s/%s", dir, e->d_name)) {
			write_file(path, "events/sched/sched_wakeup/enable", "0");
			rmdir(path);
		}
	}
	closedir(d);
}

/*
 * sched_wakeup from a tracefs instance of pmon's own, not from perf: here
 * (Linux 6.18 under bhyve) a wake-up made by a CPU's idle task -- a timer
 * or an interrupt waking a sleeper on an idle CPU, exactly a nap's end --
 * reaches ftrace's ring but, on some CPUs, never a perf event's: measured
 * with `perf record -a` beside a tracefs instance, 25 of 25 idle-task
 * wake-ups on CPU 1 missing from perf and none on CPU 0, no loss counted.
 * The instance's clock is the perf events' one: "mono" (CLOCK_MONOTONIC)
 * or "perf" (time_base()).
 */
static int ftrace_open(struct pmon_trace_kernel *k, const struct pmon_event_opts *eo,
		       const char *root)
{
	struct ftrace *f = &k->ft;
	static unsigned seq;
	char path[600];
	int err;

	/* An instance lives as long as the trace, but lib/event mounts tracefs
	 * only while it parses (parse.c, tracefs_ready()): where nothing is
	 * mounted at the usual place, mount it here, as root, until
	 * ftrace_close() (a machine that mounts no tracefs at boot). */
	pmon__fmt(path, sizeof(path), "%s/instances", TRACEFS_DEFAULT);
	if (!root && access(path, F_OK) && geteuid() == 0 &&
	    mount("nodev", TRACEFS_DEFAULT, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0)
		f->mounted = true;
	if (!(k->wev = pmon_evlist__new(eo)))
		return -errno;
	if ((err = pmon_evlist__add(k->wev, "sched:sched_wakeup")))
		return err;
	f->id = (unsigned)pmon_evlist__event(k->wev, 0)->attr.config;
	f->pid.have = !pmon_evlist__tp_field(k->wev, "sched:sched_wakeup", "pid", &f->pid.off,
					     &f->pid.size);
	f->tcpu.have = !pmon_evlist__tp_field(k->wev, "sched:sched_wakeup", "target_cpu",
					      &f->tcpu.off, &f->tcpu.size);
	f->waker.have = !pmon_evlist__tp_field(k->wev, "sched:sched_wakeup", "common_pid",
					       &f->waker.off, &f->waker.size);
	if (!f->waker.have) /* the common fields' layout (trace_entry) */
		f->waker = (struct field){ .off = 4, .size = 4, .have = true };
	if (!f->pid.have)
		return pmon__err(-ENOENT, "sched:sched_wakeup has no field 'pid'");
	if (f->mounted) /* mounted just now: the instances were out of sight */
		remove_stale(root ? root : TRACEFS_DEFAULT);
	pmon__fmt(f->dir, sizeof(f->dir), "%s/instances/pmon-trace-%d-%u",
		  root ? root : TRACEFS_DEFAULT, (int)getpid(), seq++);
	if (mkdir(f->dir, 0700)) {
		err = pmon__err(-errno, "cannot make the tracefs instance '%s': %s", f->dir,
				strerror(errno));
		f->dir[0] = '\0';
		return err;
	}
	/* The sampler's clock: "perf" is trace_clock() = local_clock(), as
	 * perf_clock() is (kernel/trace/trace_clock.c, kernel/events/core.c). */
	if ((err = write_file(f->dir, "trace_clock",
			      k->clk.base == PMON_TIMEBASE_PERF ? "perf" : "mono")) ||
	    (err = write_file(f->dir, "buffer_size_kb", "1024")))
		return pmon__err(err, "cannot set up the tracefs instance '%s': %s", f->dir,
				 strerror(-err));
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	f->fd = calloc((size_t)ncpu, sizeof(*f->fd));
	f->cpu = calloc((size_t)ncpu, sizeof(*f->cpu));
	f->page = malloc(65536); /* a read gives one sub-buffer: 4 KiB unless
				   * buffer_subbuf_size_kb says more */
	if (!f->fd || !f->cpu || !f->page)
		return -ENOMEM;
	for (long c = 0; c < ncpu; c++) {
		pmon__fmt(path, sizeof(path), "%s/per_cpu/cpu%ld/trace_pipe_raw", f->dir, c);
		int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue; /* a CPU not online */
		f->fd[f->n] = fd;
		f->cpu[f->n++] = (int)c;
	}
	if (!f->n)
		return pmon__err(-ENOENT, "no per-CPU ring in '%s'", f->dir);
	if ((err = write_file(f->dir, "events/sched/sched_wakeup/enable", "1")))
		return pmon__err(err, "cannot enable sched_wakeup in '%s': %s", f->dir,
				 strerror(-err));
	return 0;
}

static int64_t raw_field(const uint8_t *data, size_t n, const struct field *f)
{
	return f->have ? pmon__trace_tp_field(data, n, f->off, f->size) : 0;
}

struct ft_ctx {
	struct pmon_trace_kernel *k;
	int cpu;
};

static void on_ftrace(void *ctx, uint64_t ts, const uint8_t *data, size_t n)
{
	struct ft_ctx *c = ctx;
	struct ftrace *f = &c->k->ft;
	uint16_t type;

	if (n < 8 || f->err)
		return;
	memcpy(&type, data, 2);
	if (type != f->id)
		return;
	struct pmon__krec r = {
		.mono_ns = ts,
		.tid = (int32_t)raw_field(data, n, &f->pid),
		.type = PMON__K_WAKEUP,
		.cpu = (uint16_t)c->cpu,
		.a = raw_field(data, n, &f->waker),
		.b = raw_field(data, n, &f->tcpu),
	};
	if (PMON_GROW(&f->held, &f->capheld, f->nheld + 1)) {
		f->err = -ENOMEM;
		return;
	}
	f->held[f->nheld++] = r;
}

/*
 * Keep the wake-ups held since the last drain that wake a traced thread,
 * then read what the instance's rings hold now into @held: a thread's
 * first events may come after its wake-up in this drain's per-task rings,
 * so a wake-up is judged one drain later (and at the end).
 */
static int ftrace_drain(struct pmon_trace_kernel *k, bool last)
{
	struct ftrace *f = &k->ft;
	int err = 0;

	for (int round = 0; round < (last ? 2 : 1) && !err; round++) {
		for (size_t i = 0; i < f->nheld && !err; i++)
			if (traced(k, f->held[i].tid))
				err = add(k, &f->held[i]);
		f->nheld = 0;
		for (size_t i = 0; i < f->n && !err && !(last && round); i++) {
			struct ft_ctx c = { k, f->cpu[i] };
			for (;;) {
				ssize_t got = read(f->fd[i], f->page, 65536);
				if (got < 0 && errno == EINTR)
					continue;
				if (got <= 0)
					break; /* EAGAIN: nothing more now */
				long lost = pmon__ftrace_page(f->page, (size_t)got, on_ftrace, &c);
				if (lost > 0)
					k->lost += (uint64_t)lost;
			}
		}
		err = err ? err : f->err;
		if (!last)
			break;
	}
	return err;
}

static int flush(struct pmon_trace_kernel *k)
{
	size_t done = 0;
	while (done < k->n) {
		size_t n = k->n - done > 4096 ? 4096 : k->n - done;
		struct pmon_trace_chunk_kernel ck = { .nrec = (uint32_t)n, .lost = k->lost };
		if (!k->err)
			k->err = pmon__trace_write_chunk(k->fd, "TKEV", &ck, sizeof(ck),
							 k->buf + done, n * sizeof(*k->buf));
		/* Events in the file, or not written (said as lost, never as
		 * recorded); who is which task is not an event. */
		uint64_t ev = 0;
		for (size_t i = done; i < done + n; i++)
			ev += k->buf[i].type != PMON__K_TASK && k->buf[i].type != PMON__K_COMM;
		*(k->err ? &k->unwritten : &k->events) += ev;
		done += n;
	}
	k->n = 0;
	return k->err;
}

static long drain(struct pmon_trace_kernel *k, bool last)
{
	/* The traced threads first: the wake-ups are kept for those seen. */
	long n = pmon_sampler__drain(k->s, on_record, k);
	if (n >= 0 && k->ws)
		n = pmon_sampler__drain(k->ws, on_wakeup, k);
	if (n >= 0 && k->ft.dir[0])
		n = ftrace_drain(k, last);
	if (n < 0)
		return n;
	size_t got = k->n;
	int err = flush(k);
	return err ? pmon__err(err, "cannot write the kernel events: %s", strerror(-err))
		   : (long)got;
}

long pmon_trace_kernel__drain(struct pmon_trace_kernel *k)
{
	return drain(k, false);
}

int pmon_trace_kernel__close(struct pmon_trace_kernel *k, uint64_t *events, uint64_t *lost)
{
	if (!k)
		return 0;
	pmon_sampler__disable(k->s);
	if (k->ws)
		pmon_sampler__disable(k->ws);
	if (k->ft.dir[0])
		write_file(k->ft.dir, "events/sched/sched_wakeup/enable", "0");
	long n = drain(k, true);
	int err = n < 0 ? (int)n : 0;
	struct pmon_trace_chunk_end e = { 0 };
	pmon__trace_clock_pair(NULL, &e.tick1, &e.mono1_ns, &e.bracket1);
	if (!err && !k->err)
		err = pmon__trace_write_chunk(k->fd, "TEND", &e, sizeof(e), NULL, 0);
	if (close(k->fd) && !err)
		err = -errno;
	if (events)
		*events = k->events;
	if (lost)
		*lost = k->lost + k->unwritten;
	pmon_sampler__close(k->s);
	pmon_evlist__free(k->ev);
	pmon_sampler__close(k->ws);
	pmon_evlist__free(k->wev);
	ftrace_close(&k->ft);
	free(k->tids);
	free(k->buf);
	free(k);
	return err;
}

/* ---- merging ------------------------------------------------------------ */

static int copy_chunks(int in, int out, uint32_t skip)
{
	char buf[65536];
	if (lseek(in, skip, SEEK_SET) < 0)
		return -errno;
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return 0;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return w < 0 ? -errno : -EIO;
			off += w;
		}
	}
}

/* A trace file's header size, or 0 when @fd holds no trace header. */
static uint32_t header_size(int fd)
{
	struct pmon_trace_disk_header h;
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    memcmp(h.magic, PMON_TRACE_MAGIC, 8) || h.header_size < sizeof(h))
		return 0;
	return h.header_size;
}

int pmon_trace_merge(const char *into, const char *from)
{
	int in = open(from, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), out = -1, err = 0;
	struct stat st;

	if (in < 0)
		return pmon__err(-errno, "cannot read '%s': %s", from, strerror(errno));
	uint32_t skip = header_size(in);
	if (!skip) {
		close(in);
		return pmon__err(-EINVAL, "'%s' is not a pmon trace", from);
	}
	/* O_NONBLOCK: a FIFO put at @into never hangs the merge; it is refused
	 * below, as anything but a regular file is: only a file is renamed over. */
	out = open(into, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
	if (out < 0 && errno != ENOENT) {
		err = pmon__err(-errno, "cannot append to '%s': %s", into, strerror(errno));
		goto done;
	}
	if (out >= 0 && (fstat(out, &st) || !S_ISREG(st.st_mode))) {
		err = pmon__err(-EINVAL, "cannot append to '%s': not a regular file", into);
		goto done;
	}
	if (out < 0 || !header_size(out)) {
		/* No trace from the program: the kernel's is the trace. */
		if (out >= 0)
			close(out);
		out = -1;
		if (rename(from, into))
			err = pmon__err(-errno, "cannot rename '%s' to '%s': %s", from, into,
					strerror(errno));
		goto done;
	}
	err = copy_chunks(in, out, skip);
	if (!err && close(out))
		err = -errno;
	out = -1;
	if (err)
		err = pmon__err(err, "cannot append to '%s': %s", into, strerror(-err));
	else
		unlink(from);
done:
	if (out >= 0)
		close(out);
	close(in);
	return err;
}
