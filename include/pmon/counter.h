/* SPDX-License-Identifier: MIT */
/*
 * Counting through perf_event_open(2): a list of events opened on a target
 * (a forked child enabled on exec, a process or threads, CPUs), read with
 * one read() per group (PERF_FORMAT_GROUP | ID, time enabled/running),
 * scaled for multiplexing, with a status and a reason for every event.
 * Also the self-monitoring read through the mmapped perf_event_mmap_page
 * (rdpmc when the kernel allows it, read() otherwise).
 */
#ifndef PMON_COUNTER_H
#define PMON_COUNTER_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <pmon/common.h>
#include <pmon/event.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the target: who is counted -------------------------------------- */

/*
 * A target names who is counted (perf's struct target): processes, threads,
 * CPUs, a cgroup, a forked command or the caller. It is built and checked
 * once by a constructor and is opaque: every open call that takes one reads
 * the same lists. How the events count on it (inherit, enable_on_exec,
 * start_disabled) goes beside it, in struct pmon_open_opts.
 */
struct pmon_target;

/* What the user named. Strings as typed, or NULL. */
struct pmon_target_spec {
	size_t sz; /* sizeof(struct pmon_target_spec) */
	const char *pid; /* processes: each means all its threads */
	const char *tid; /* threads */
	const char *cpu_list; /* CPUs (implies system-wide) */
	bool system_wide;
	/* A cgroup directory (a perf_event hierarchy of cgroup v1, or cgroup v2
	 * with the perf_event controller): count the tasks of that cgroup and
	 * its descendants on every CPU of cpu_list (all online when NULL), one
	 * counter per CPU (perf's cgroup mode, PERF_FLAG_PID_CGROUP). Needs
	 * CPU-wide counting rights; implies system-wide; pid and tid are
	 * ignored. */
	const char *cgroup;
	/* The online CPU list that cpu_list is checked against ("0-1", as
	 * /sys/devices/system/cpu/online reads); NULL: read from sysfs. */
	const char *online;
};

enum pmon_target_kind {
	PMON_TARGET_NONE = 0, /* nothing named (an empty spec) */
	PMON_TARGET_SELF, /* the calling process */
	PMON_TARGET_PID, /* one process, e.g. a forked command (pmon_target__new_pid()) */
	PMON_TARGET_PIDS, /* processes, each with all its threads (-p) */
	PMON_TARGET_TIDS, /* threads (-t) */
	PMON_TARGET_CPUS, /* every task on CPUs (-a, -C) */
	PMON_TARGET_CGROUP, /* the tasks of a cgroup, per CPU (-G) */
};

/**
 * pmon_target__new() - the target @spec names, parsed and checked once,
 * before anything opens: every list well-formed, every CPU online, every
 * process and thread present, a cgroup a directory holding cgroup.procs.
 * Processes (each with all its threads, listed when the counters open, each
 * opened with inherit so that threads created later count too, as perf does
 * for -p) combine with CPUs; threads override processes.
 * Return: the target (free it with pmon_target__free()), or NULL with errno:
 * EINVAL (a list that does not parse; the detail names which, or an
 * unreadable online list), ENODEV (detail: "CPU 5 does not exist (online:
 * 0-1)"), ESRCH (a missing process or thread), ENOENT or ENOTDIR (a cgroup
 * that is not one), ENOMEM.
 */
PMON_API struct pmon_target *pmon_target__new(const struct pmon_target_spec *spec);
/**
 * pmon_target__new_pid() - one process: @pid > 0 (e.g. a forked command,
 * counted from its exec with pmon_open_opts.enable_on_exec; otherwise all
 * its threads), or 0 for the calling process. Not checked: a process that
 * is gone fails at open with ESRCH.
 * Return: the target, or NULL with errno EINVAL (@pid < 0), ENOMEM.
 */
PMON_API struct pmon_target *pmon_target__new_pid(pid_t pid);
/**
 * pmon_target__new_cpus() - every task on the @n CPUs of @cpus (copied), or
 * on every online CPU when @n is 0. The CPUs are not checked against the
 * online list (pmon_target__new() does that for typed lists).
 * Return: the target, or NULL with errno ENOMEM.
 */
PMON_API struct pmon_target *pmon_target__new_cpus(const int *cpus, size_t n);
/**
 * pmon_target__new_cgroup() - the tasks of the cgroup directory @path on
 * every online CPU, checked as pmon_target__new() checks a cgroup.
 * Return: the target, or NULL with errno EINVAL (no @path), ENOENT,
 * ENOTDIR, ENOMEM.
 */
PMON_API struct pmon_target *pmon_target__new_cgroup(const char *path);
/** Free @t; @t may be NULL. */
PMON_API void pmon_target__free(struct pmon_target *t);

/** What @t names (cgroup, then threads, processes, CPUs, one process). */
PMON_API enum pmon_target_kind pmon_target__kind(const struct pmon_target *t);
/** The processes of @t, *@n of them (owned by @t; NULL, 0 when none). */
PMON_API const pid_t *pmon_target__pids(const struct pmon_target *t, size_t *n);
/** The threads of @t, *@n of them (owned by @t; NULL, 0 when none). */
PMON_API const pid_t *pmon_target__tids(const struct pmon_target *t, size_t *n);
/** The CPUs listed for @t, *@n of them (owned by @t; NULL, 0: all online or any). */
PMON_API const int *pmon_target__cpus(const struct pmon_target *t, size_t *n);
/** Does @t count every task on its CPUs (-a, -C, a cgroup)? */
PMON_API bool pmon_target__system_wide(const struct pmon_target *t);
/** The one process of @t: > 0 a pid, 0 the caller, -1 none (lists, CPUs). */
PMON_API pid_t pmon_target__pid(const struct pmon_target *t);
/** The cgroup directory of @t, or NULL. Owned by @t. */
PMON_API const char *pmon_target__cgroup(const struct pmon_target *t);

/**
 * pmon_cgroup_resolve() - perf's -G NAME as a directory: NAME under the
 * perf_event cgroup hierarchy, as perf finds it in the mount table (a
 * cgroup v1 mount with the perf_event controller, else the cgroup2 mount).
 * @dir: @len bytes for the path.
 * Return: 0; -ENOENT (detail) when no such hierarchy is mounted or NAME is
 * not a cgroup in it; -ENAMETOOLONG.
 */
PMON_API int pmon_cgroup_resolve(const char *name, char *dir, size_t len);

/**
 * pmon_target__threads() - the threads @t names, expanded once (perf's
 * thread map): explicit tids as given, each process of pids (or pid, when
 * not a child started on exec) as all its threads from /proc/PID/task,
 * otherwise one entry: the child's pid, 0 (the caller) or -1 (every task,
 * system-wide). @enable_on_exec: a single process is a command started on
 * exec (its threads come later, inherited): itself alone.
 * Return: 0 with a malloc()ed array the caller frees, or -ESRCH (the detail
 * names the process or thread that does not exist), -ENOMEM.
 */
PMON_API int pmon_target__threads(const struct pmon_target *t, bool enable_on_exec, pid_t **tids,
				  size_t *n);

/*
 * How events open on a target (perf's attr bits beside the target). NULL
 * wherever it is taken means all false.
 */
struct pmon_open_opts {
	size_t sz; /* sizeof(struct pmon_open_opts) */
	bool inherit; /* count children and threads created later */
	bool enable_on_exec; /* start when the target calls exec (a forked child) */
	bool start_disabled; /* start with pmon_counters__enable(); else counting starts
			      * when open returns (every group member at once) */
};

/**
 * pmon_perf_event_open() - the one perf_event_open(2) call of the library.
 *
 * Opens close-on-exec (PERF_FLAG_FD_CLOEXEC is always added to @flags).
 * With @user_fallback, a refusal for rights (EACCES/EPERM: perf_event_paranoid
 * >= 2 forbids kernel counting for unprivileged users, see
 * perf_event_paranoid_check() in the kernel) is retried with exclude_kernel
 * and exclude_hv set in *@attr, so the caller sees from @attr that the event
 * now counts user space only.
 * Return: the file descriptor, or -1 with errno set.
 */
PMON_API int pmon_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
				  unsigned long flags, bool user_fallback);

enum pmon_count_status {
	PMON_COUNT_OK = 0,
	PMON_COUNT_NOT_COUNTED, /* opened, but never scheduled (time_running == 0) */
	PMON_COUNT_NOT_SUPPORTED, /* the kernel refused to open it; see reason */
};

struct pmon_count {
	uint64_t raw; /* the counter sum, unscaled */
	uint64_t enabled, running; /* ns, summed over CPUs/threads */
	double value; /* raw scaled for multiplexing, times the event's scale */
	double running_pct; /* 100 * running / enabled */
	enum pmon_count_status status;
	int err; /* -errno of the refusal, for NOT_SUPPORTED */
	const char *reason; /* why not supported / why user-only; owned by the counters */
	bool user_only; /* fell back to user-space counting (perf_event_paranoid) */
};

struct pmon_counters;

/**
 * pmon_counters__open() - open every event of @events on @target.
 *
 * An event the kernel refuses is recorded as not supported, with its reason,
 * and the others still open (a refused group leader hands the group to the
 * next member). Where perf_event_paranoid forbids kernel counting and the
 * event named no u/k/h modifier, it is retried user-only and marked so.
 * @events must outlive the counters. @opts: how (NULL: all false).
 * Return: the counters, or NULL with errno and pmon_errdetail(): ESRCH (the
 * process does not exist), EINVAL (bad target), ENOMEM, or the error of the
 * first event when no event at all could be opened.
 */
PMON_API struct pmon_counters *pmon_counters__open(const struct pmon_evlist *events,
						   const struct pmon_target *target,
						   const struct pmon_open_opts *opts);
PMON_API void pmon_counters__close(struct pmon_counters *c);

PMON_API int pmon_counters__enable(struct pmon_counters *c);
PMON_API int pmon_counters__disable(struct pmon_counters *c);

/** pmon_counters__nunits() - CPUs x threads the events were opened on. */
PMON_API size_t pmon_counters__nunits(const struct pmon_counters *c);
/** The CPU (-1: any) and thread (-1: all) of unit @u. */
PMON_API void pmon_counters__unit(const struct pmon_counters *c, size_t u, int *cpu, pid_t *tid);

/**
 * pmon_counters__read() - current totals, one struct per event, in list order.
 * @out: array of pmon_evlist__count() entries.
 * Allocates nothing (scratch sized at open); one thread at a time per @c.
 * Return: 0, or -errno when a read failed (the detail names the event).
 */
PMON_API int pmon_counters__read(struct pmon_counters *c, struct pmon_count *out);
/** As pmon_counters__read(), for unit @u alone. */
PMON_API int pmon_counters__read_unit(struct pmon_counters *c, size_t u, struct pmon_count *out);

/* ---- a forked child, started on exec --------------------------------- */

struct pmon_child {
	pid_t pid;
	int go_fd; /* parent writes: start */
	int err_fd; /* child writes errno if exec fails */
};

/**
 * pmon_child__fork() - fork a child that waits, then executes @argv.
 * Open counters on child->pid with enable_on_exec, then pmon_child__start().
 * Return: 0, or -errno.
 */
PMON_API int pmon_child__fork(char *const argv[], struct pmon_child *child);
/**
 * pmon_child__start() - let the child exec.
 * Return: 0 when exec succeeded; -errno of the failed exec (the child then
 * exits with status 127, reap it with pmon_child__wait()).
 */
PMON_API int pmon_child__start(struct pmon_child *child);
/**
 * pmon_child__wait() - wait for the child (retrying on EINTR); @status and
 * @ru may be NULL. A reaped child's pid becomes -1.
 * Return: 0, -ECHILD when there is no child (pid <= 0), or -errno.
 */
PMON_API int pmon_child__wait(struct pmon_child *child, int *status, struct rusage *ru);
/**
 * pmon_child__poll() - has the child ended? Does not block.
 * Return: 1 with *@status (and *@ru, may be NULL) set when it ended and was
 * reaped (child->pid is then -1), 0 while it runs, -errno.
 */
PMON_API int pmon_child__poll(struct pmon_child *child, int *status, struct rusage *ru);
/**
 * pmon_child__kill() - send @sig to a child not yet reaped and reap it
 * (a child never started exits at once). Return: 0 or -errno.
 */
PMON_API int pmon_child__kill(struct pmon_child *child, int sig, int *status);
/** The shell's exit code for a wait status: the exit status, or 128+N for signal N. */
PMON_API int pmon_exit_code(int status);
/**
 * pmon_child__forward_signals() - until pmon_child__forward_signals(NULL),
 * SIGINT, SIGTERM and SIGHUP sent to this process are recorded (see
 * pmon_child__got_signal()) and forwarded to @child while it runs: the
 * command decides what an interrupt means (git's run-command does the same
 * for its children). SIGCHLD gets an empty handler, so sleeps of the caller
 * end when the child does. Installs process-wide signal handlers: call it
 * from the program's main thread, one child at a time, and before
 * pmon_child__fork(): a signal this process ignores (a shell's background
 * job ignores SIGINT) would otherwise stay ignored in the command, while a
 * handled one is reset to the default by exec. @child->pid is read when a
 * signal comes, so the struct may be filled in by the fork afterwards;
 * reaping the child (pmon_child__wait(), __poll(), __kill()) stops the
 * forwarding. A @child that is never reaped (never forked) must stay valid
 * until pmon_child__forward_signals(NULL).
 */
PMON_API void pmon_child__forward_signals(struct pmon_child *child);
/** The last of SIGINT/SIGTERM/SIGHUP received since forwarding began, or 0. */
PMON_API int pmon_child__got_signal(void);

/* ---- self-monitoring read -------------------------------------------- */

struct pmon_self_count {
	uint64_t value, enabled, running;
	bool via_rdpmc; /* read with rdpmc from user space, not read() */
};

/* The instructions the mmap read uses; tests replace them. */
struct pmon_mmap_ops {
	uint64_t (*rdpmc)(uint32_t counter);
	uint64_t (*rdtsc)(void);
};

/**
 * pmon_mmap_read() - read an event of this thread from its mmapped page.
 *
 * The kernel's protocol (tools/lib/perf/mmap.c, perf_mmap__read_self): retry
 * while the page's seqlock moves; rdpmc only when cap_user_rdpmc and index
 * are set, the value sign-extended by pmc_width and added to offset; time
 * enabled/running extended with the TSC conversion when cap_user_time.
 * @ops: NULL for the real instructions.
 * Return: 0, or -EOPNOTSUPP when the page does not allow rdpmc (use read()).
 */
PMON_API int pmon_mmap_read(const volatile struct perf_event_mmap_page *pc,
			    const struct pmon_mmap_ops *ops, struct pmon_self_count *out);

struct pmon_self;

/**
 * pmon_self__open() - count @ev on the calling thread, mmapped for self-reads.
 * Return: the counter, or NULL with errno (detail set).
 */
PMON_API struct pmon_self *pmon_self__open(const struct pmon_event_desc *ev);
/** Read: rdpmc through the page where allowed, else read(). Return: 0 or -errno. */
PMON_API int pmon_self__read(struct pmon_self *s, struct pmon_self_count *out);
PMON_API void pmon_self__close(struct pmon_self *s);

/* ---- a group on the calling thread, for hot-path reads (regions) ------ */

struct pmon_selfgroup;

/**
 * pmon_selfgroup__open() - open every event of @events as one group on the
 * calling thread, counting from now on, each mmapped for rdpmc.
 * Return: the group, or NULL with errno, the refused event and its reason in
 * the detail.
 */
PMON_API struct pmon_selfgroup *pmon_selfgroup__open(const struct pmon_evlist *events);
/**
 * pmon_selfgroup__read() - the raw counts of every event, in list order:
 * rdpmc through the pages when every page allows it, else one read().
 * Not scaled for multiplexing (see pmon_selfgroup__multiplexed()).
 */
PMON_API void pmon_selfgroup__read(struct pmon_selfgroup *g, uint64_t *v);
/**
 * pmon_selfgroup__read_times() - as pmon_selfgroup__read(), with the group's
 * time enabled and running (ns; the leader's, the group being scheduled as
 * one): a difference of the two between two reads says the counters were
 * time-shared in between. @enabled/@running may be NULL.
 * Return: 0, or -errno when the read failed (@v, times: zeros).
 */
PMON_API int pmon_selfgroup__read_times(struct pmon_selfgroup *g, uint64_t *v, uint64_t *enabled,
					uint64_t *running);
/** true when reads use rdpmc; @why (may be NULL) gets the reason they do not. */
PMON_API bool pmon_selfgroup__rdpmc(const struct pmon_selfgroup *g, const char **why);
/** true when the group was ever not running while enabled. */
PMON_API bool pmon_selfgroup__multiplexed(struct pmon_selfgroup *g);
PMON_API void pmon_selfgroup__close(struct pmon_selfgroup *g);

#ifdef __cplusplus
}
#endif
#endif
