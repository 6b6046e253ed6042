/* SPDX-License-Identifier: MIT */
/*
 * The monitor layer (../shared/ARCHITECTURE.md, "features"): what stat, top,
 * serve and trace share above the counters. The one parser of pid/tid/CPU
 * lists (the target built from them is pmon_target__new(), pmon/counter.h),
 * reading with deltas taken of raw, enabled and
 * running before scaling (perf's evsel__compute_deltas()), derived metrics
 * (perf's shadow stats), repeat statistics (Welford) and the interval
 * ticker every periodic reader uses.
 */
#ifndef PMON_MONITOR_H
#define PMON_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <pmon/common.h>
#include <pmon/counter.h>
#include <pmon/event.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pmon_monitor;
struct rusage;

/* ---- lists and targets ------------------------------------------------ */

/**
 * pmon_idlist__parse() - parse a list of non-negative integers and ranges,
 * "0-3,5" (the syntax of /sys/devices/system/cpu/online and of perf's -C,
 * -p, -t). An empty item ("1,,2", a leading or trailing comma), a range
 * that runs backwards, or a value above @max is refused. No limit on the
 * number of entries.
 * Return: 0 with a malloc()ed array in *@out (the caller frees it) and its
 * length in *@n; -EINVAL with the detail quoting the list; -ENOMEM.
 */
PMON_API int pmon_idlist__parse(const char *s, long max, long **out, size_t *n);
/**
 * pmon_idlist__format() - the @n integers of @ids as such a list, each run
 * of consecutive ascending values as a range ("0,2-3"), into @buf of @len
 * bytes, NUL-terminated. Where the list does not fit it ends after the last
 * whole item that does, with ",..." (@len >= 5).
 * Return: 0; -ENOSPC when the list was cut so; -EINVAL (@len < 5).
 */
PMON_API int pmon_idlist__format(const int *ids, size_t n, char *buf, size_t len);

/**
 * pmon_cpus_online() - the online CPUs, as /sys/devices/system/cpu/online
 * lists them (non-contiguous after a hot-unplug or with isolated cores:
 * "0-3,8-11"), never 0 .. sysconf(_SC_NPROCESSORS_ONLN) - 1.
 * @sysfs_root: NULL for "/sys" (tests pass a copy).
 * Return: 0 with a malloc()ed array in *@cpus and its length in *@n; -EINVAL
 * (detail) when the file is missing or does not parse; -ENOMEM.
 */
PMON_API int pmon_cpus_online(const char *sysfs_root, int **cpus, size_t *n);

/**
 * pmon_process_alive() - the one liveness rule for a process pmon did not
 * fork (or no longer waits for): alive unless kill(@pid, 0) says ESRCH or
 * /proc/@pid/stat says it is a zombie ('Z') or dead ('X'). EPERM (another
 * user's process) is alive. @pid <= 0 is not a process.
 */
PMON_API bool pmon_process_alive(pid_t pid);

/* Targets (struct pmon_target, pmon_target__new()) live in pmon/counter.h. */

/* ---- the run engine: a command or the processes it watches ------------- */

/*
 * One run of what pmon measures (git's run-command, for every command that
 * runs or watches something): a command forked and held until its counters
 * are open, released to exec (enable_on_exec starts them there), killed
 * with pmon (PR_SET_PDEATHSIG); or processes, threads, CPUs or a cgroup
 * watched until they end or a signal comes. SIGINT, SIGTERM and SIGHUP are
 * passed on to the command, which has a grace period to end by them before
 * pmon stops it (docs/exit-codes.md, "Signals"). The exit code, 127 for a
 * command that could not be executed and 128+N, is decided here.
 * One run at a time per process (the signal handlers are process-wide),
 * from the main thread.
 */
struct pmon_run;

struct pmon_run_opts {
	size_t sz; /* sizeof(struct pmon_run_opts) */
	/* After a signal passed on, the command's time to end by it before
	 * pmon stops it; 0: 1000 ms (docs/exit-codes.md). */
	unsigned grace_ms;
	/* When pmon stops the command: SIGTERM, then SIGKILL this much later;
	 * 0: 2000 ms. */
	unsigned stop_ms;
};

/**
 * pmon_run__new() - begin a run: from now until pmon_run__free(), SIGINT,
 * SIGTERM and SIGHUP are recorded (pmon_run__signal()) and passed on to the
 * command. @argv (NULL: no command) is forked and held: open its counters
 * on pmon_run__pid() with enable_on_exec, then pmon_run__start(). @watch
 * (NULL: none): the run also ends once all of its processes (pids) and
 * threads (tids) have ended (pass NULL where the command alone decides,
 * perf's -p PID -- sleep N); its arrays are copied. CPUs and cgroups never
 * end: such a run ends by a signal or pmon_run__stop().
 * @opts: NULL for the defaults.
 * Return: the run (free it with pmon_run__free()), or NULL with errno:
 * EINVAL (an empty command, bad @opts), ENOMEM, or the fork's error (the
 * detail says "cannot run 'CMD': ...").
 */
PMON_API struct pmon_run *pmon_run__new(char *const argv[], const struct pmon_target *watch,
					const struct pmon_run_opts *opts);
/**
 * pmon_run__free() - end the run: a command not yet reaped is killed
 * (SIGKILL) and reaped, and signals are no longer passed on (the last one
 * stays recorded). @r may be NULL.
 */
PMON_API void pmon_run__free(struct pmon_run *r);
/** The command's pid while it was not reaped, else -1 (also without one). */
PMON_API pid_t pmon_run__pid(const struct pmon_run *r);

/**
 * pmon_run__start() - start counting and release the command: the
 * counters of @m (NULL: none) that an exec cannot start are enabled
 * (pmon_monitor__start()), then the command may exec.
 * Return: 0; the -errno of the exec (the command is reaped, the detail is
 * "cannot run 'CMD': REASON" and pmon_run__exit_code() is 127); or the
 * -errno of the enable (the command is killed; detail "cannot start the
 * counters: REASON").
 */
PMON_API int pmon_run__start(struct pmon_run *r, struct pmon_monitor *m);

/**
 * pmon_run__delay() - perf stat -D: let the command run uncounted for
 * @delay_ms, then start counting (pmon_monitor__start(@m, NULL): enable,
 * new baseline), unless the run ended first. Call after
 * pmon_run__start(@r, NULL), with @m opened start_disabled and without
 * enable_on_exec (counters that children inherited are enabled with their
 * parent's). Sleeps in short steps so that a command that ends early ends
 * the wait.
 * Return: 1 when counting started, 0 when the run ended before (nothing
 * was counted), or the -errno of the enable (detail).
 */
PMON_API int pmon_run__delay(struct pmon_run *r, struct pmon_monitor *m, unsigned delay_ms);

/**
 * pmon_run__done() - has the run ended? Does not block. Ended: the command
 * exited (reaped, its status kept), or every watched process and thread
 * is gone (pmon_process_alive()), or a signal came.
 */
PMON_API bool pmon_run__done(struct pmon_run *r);
/** The last of SIGINT/SIGTERM/SIGHUP received by this process since the first run began, or 0. */
PMON_API int pmon_run__signal(const struct pmon_run *r);
/**
 * pmon_run__stop() - pmon ends the command (-n reached, an output that
 * failed, a key): SIGTERM, then SIGKILL after stop_ms; reaped either way.
 * Its status is then pmon's doing, not the command's. Nothing without one.
 */
PMON_API void pmon_run__stop(struct pmon_run *r);
/**
 * pmon_run__wait() - wait until the run ends: the command exits (after a
 * signal passed on, it has grace_ms to do so, then it is stopped with
 * pmon_run__stop()); without a command, until pmon_run__done(). Sleeps without
 * polling the command (a pidfd, where the kernel has them); a signal to
 * pmon interrupts it.
 * Return: 0, or -errno.
 */
PMON_API int pmon_run__wait(struct pmon_run *r);

/**
 * pmon_run__loop() - the interval loop: call @tick every @interval_s seconds
 * of CLOCK_MONOTONIC (pmon_ticker) until the run is done, then once more
 * with @last true (the partial last interval), then pmon_run__wait().
 * @at_s: seconds since the loop began. @tick returns 0 to go on, anything
 * else to end the run now: the command is stopped (pmon_run__stop()) and
 * that value is returned. @interval_s <= 0: no ticks, pmon_run__wait() alone.
 * Return: 0, @tick's value, or -errno of the wait.
 */
PMON_API int pmon_run__loop(struct pmon_run *r, double interval_s,
			    int (*tick)(void *ctx, double at_s, bool last), void *ctx);

/**
 * pmon_run__status() - how the command ended by itself.
 * Return: true with its wait status in *@status and resources in *@ru
 * (each may be NULL) when it exited or was killed by a signal not sent by
 * pmon_run__stop(); false when it has not ended, never ran or pmon stopped it.
 */
PMON_API bool pmon_run__status(const struct pmon_run *r, int *status, struct rusage *ru);
/**
 * pmon_run__exit_code() - the shell's code for the run (docs/exit-codes.md):
 * 127 when the command could not be executed, the command's own status
 * (128+N when signal N killed it) when it ended by itself, 128+N when pmon
 * got signal N (with no command, or one it had to stop), else 0.
 */
PMON_API int pmon_run__exit_code(const struct pmon_run *r);

/* ---- deltas and scaling ----------------------------------------------- */

/**
 * pmon_count__delta() - the count between two readings of one counter:
 * the differences of raw, enabled and running, then scaled (perf's
 * evsel__compute_deltas() followed by perf_counts_values__scale()). Scaling
 * the difference of two scaled totals is wrong under multiplexing: from
 * (1000, 100, 50) to (1100, 200, 150) the count is 100 (scaled: 100 x 100 /
 * 100), where the totals 2000 and 1466.7 differ by -533.
 * @scale: the event's unit scale (pmon_event_desc.scale; 0 means 1).
 * @prev may be NULL (a first reading: the delta is @cur itself).
 * Status: @cur's when not OK; NOT_COUNTED when the counter did not run in
 * between. A counter that went backwards (never from the kernel) gives 0.
 */
PMON_API void pmon_count__delta(const struct pmon_count *prev, const struct pmon_count *cur,
				double scale, struct pmon_count *out);

/** Scale @raw by @enabled / @running (multiplexing); @raw when running is 0 or full. */
PMON_API double pmon_count__scale(uint64_t raw, uint64_t enabled, uint64_t running);

/**
 * pmon_count__add() - add @d to the sum @acc, as pmon_monitor__read_delta()
 * sums its units: raw, enabled, running and value add up; the status is OK
 * once any part counted (else the first part's, with its reason); the
 * running percentage is recomputed. @first: @acc holds nothing yet (it is
 * overwritten). Sums CPUs into a socket, or intervals into a total.
 */
PMON_API void pmon_count__add(struct pmon_count *acc, const struct pmon_count *d, bool first);
struct pmon_mux_error;
/**
 * pmon_count__add_interval() - pmon_count__add() of interval @d to the total
 * @acc (stat -I --summary), and its reading, where it counted, to @mux: the
 * total's multiplexing error, pmon_mux_error__estimate(@mux), then holds
 * the spread of the intervals' rates besides their counting noise
 * (docs/stat-json.md). Zero @mux with @first.
 */
PMON_API void pmon_count__add_interval(struct pmon_count *acc, struct pmon_mux_error *mux,
				       const struct pmon_count *d, bool first);

/* ---- aggregation by topology (perf stat -A, --per-core ...) ------------ */

/* What one row stands for: perf stat's aggregation modes. */
enum pmon_aggr_mode {
	PMON_AGGR_CPU = 1, /* -A, --no-aggr: "CPU3" */
	PMON_AGGR_CORE, /* --per-core: "S0-D0-C1" */
	PMON_AGGR_DIE, /* --per-die: "S0-D0" */
	PMON_AGGR_SOCKET, /* --per-socket: "S0" */
	PMON_AGGR_NODE, /* --per-node: "N0" */
};

struct pmon_aggr;

/**
 * pmon_aggr__new() - group counting units by where their CPU sits
 * (pmon_cpu_places()), one group per CPU, core, die, socket or node, in
 * perf's order (by socket, die, core; by node; by CPU).
 * @unit_cpus: the CPU of each of the @nunits units (pmon_counters__unit());
 * every unit must be on a CPU (-a, -C). @sysfs_root: NULL for "/sys".
 * Return: the grouping (pmon_aggr__free()), or NULL with errno: EINVAL (a
 * bad mode, a unit on no CPU), ENOENT (the topology is unreadable; detail),
 * ENOMEM.
 */
PMON_API struct pmon_aggr *pmon_aggr__new(const char *sysfs_root, enum pmon_aggr_mode mode,
					  const int *unit_cpus, size_t nunits);
PMON_API void pmon_aggr__free(struct pmon_aggr *a);
/** How many groups (rows per event). */
PMON_API size_t pmon_aggr__ngroups(const struct pmon_aggr *a);
/** Group @g's perf label ("S0-D0-C1", "N0", "CPU3"); owned by @a. */
PMON_API const char *pmon_aggr__label(const struct pmon_aggr *a, size_t g);
/** How many distinct CPUs group @g holds (perf's "cpus" column). */
PMON_API size_t pmon_aggr__ncpus(const struct pmon_aggr *a, size_t g);
/**
 * pmon_aggr__sum() - sum the units' counts into their groups
 * (pmon_count__add()). @per_unit: nunits x @nev (unit-major, as
 * pmon_monitor__read_delta() fills it); @out: ngroups x @nev (group-major).
 */
PMON_API void pmon_aggr__sum(const struct pmon_aggr *a, const struct pmon_count *per_unit,
			     size_t nev, struct pmon_count *out);

/* ---- the monitor: counters read in intervals --------------------------- */

struct pmon_monitor;

/**
 * pmon_monitor__open() - open @events on @target with @opts
 * (pmon_counters__open()), with the readings' baseline taken at open.
 * Return: the monitor, or NULL with errno and the detail as
 * pmon_counters__open().
 */
PMON_API struct pmon_monitor *pmon_monitor__open(const struct pmon_evlist *events,
						 const struct pmon_target *target,
						 const struct pmon_open_opts *opts);
PMON_API void pmon_monitor__close(struct pmon_monitor *m);
/** The counters underneath (owned by the monitor). */
PMON_API struct pmon_counters *pmon_monitor__counters(struct pmon_monitor *m);

/**
 * pmon_monitor__start() - start counting for a command: enable the
 * counters that an exec cannot start (CPU-wide ones, or all of them when
 * the monitor was not opened with enable_on_exec), and release @child (NULL: none)
 * with pmon_child__start(). The baseline is set here.
 * Return: 0, the -errno of the exec, or of the enable.
 */
PMON_API int pmon_monitor__start(struct pmon_monitor *m, struct pmon_child *child);

/**
 * pmon_monitor__read_delta() - counts since the previous reading (or the
 * baseline): each unit's (CPU, thread) deltas of raw, enabled and running,
 * scaled, then summed (pmon_count__delta()). The reading becomes the new
 * baseline.
 * @out: pmon_evlist__count() entries; @per_unit: NULL, or nunits x count
 * entries (unit-major) for per-CPU or per-thread rows; @elapsed_s: NULL, or
 * the real time between the two readings in seconds (CLOCK_MONOTONIC), each
 * timed at the mean of its units' reads, as its counts are.
 * Allocates nothing (its buffers are sized at open: an agent reads every
 * second for months); one thread at a time per monitor.
 * Return: 0, or -errno when a read failed.
 */
PMON_API int pmon_monitor__read_delta(struct pmon_monitor *m, struct pmon_count *out,
				      struct pmon_count *per_unit, double *elapsed_s);
/** Forget the previous reading: the next delta starts from now. Return: 0 or -errno. */
PMON_API int pmon_monitor__rebase(struct pmon_monitor *m);

/* ---- derived metrics (perf's shadow stats) ---------------------------- */

struct pmon_metric {
	double value;
	const char *unit; /* "CPUs utilized", "GHz", "insn per cycle", "K/sec" ... */
	bool ok; /* false: no metric for this event, or its inputs are missing */
};

/**
 * pmon_metric__derive() - the metric perf prints beside event @i of @l,
 * from the counts @v of the whole list (task-clock for CPUs utilized and
 * rates, cycles for IPC, branches for the miss ratio ...), over @wall_s
 * seconds of wall time.
 */
PMON_API struct pmon_metric pmon_metric__derive(const struct pmon_evlist *l,
						const struct pmon_count *v, size_t i,
						double wall_s);

/* ---- repeat statistics ------------------------------------------------ */

/* Mean and variance updated one value at a time (Welford, as perf's
 * update_stats()): no cancellation, unlike the sum of squares. */
struct pmon_running_stats {
	uint64_t n;
	double mean, m2, min, max;
};

PMON_API void pmon_running_stats__add(struct pmon_running_stats *s, double v);
/** The sample standard deviation (n - 1), 0 below two values. */
PMON_API double pmon_running_stats__stddev(const struct pmon_running_stats *s);
/**
 * pmon_running_stats__rel_stderr() - perf stat -r's "+- x%": the standard
 * error of the mean relative to the mean, in percent
 * (100 x sqrt(variance / n) / mean; perf's rel_stddev_stats()); 0 when the
 * mean is 0 or below two values.
 */
PMON_API double pmon_running_stats__rel_stderr(const struct pmon_running_stats *s);

/* ---- the interval ticker ----------------------------------------------- */

/* Deadlines every @step seconds on CLOCK_MONOTONIC; one that fell behind
 * skips ahead instead of firing in a burst. */
struct pmon_ticker {
	double start, next, step;
};

/** Seconds on CLOCK_MONOTONIC. */
PMON_API double pmon_monotonic_s(void);
/** Start ticking every @step_s seconds from now. */
PMON_API void pmon_ticker__init(struct pmon_ticker *tk, double step_s);
/** Seconds until the next deadline (<= 0: due). */
PMON_API double pmon_ticker__remaining(const struct pmon_ticker *tk);
/**
 * pmon_ticker__sleep() - sleep until the next deadline; a signal (SIGCHLD,
 * SIGINT) ends the sleep early. Return: true when the deadline has come.
 */
PMON_API bool pmon_ticker__sleep(const struct pmon_ticker *tk);
/** Move to the next deadline, skipping the ones already past. */
PMON_API void pmon_ticker__advance(struct pmon_ticker *tk);
/** Change the step (the next deadline is one new step from the last one). */
PMON_API void pmon_ticker__set_step(struct pmon_ticker *tk, double step_s);

#ifdef __cplusplus
}
#endif
#endif
