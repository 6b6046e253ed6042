/* SPDX-License-Identifier: MIT */
/*
 * Event names: a user's event text, in the syntax perf users already type,
 * resolved into one description (perf_event_attr, display name, unit, scale).
 *
 *   cycles, instructions, ref-cycles ...      generic hardware events
 *   L1-dcache-load-misses, LLC-loads ...      generic cache events
 *   task-clock, page-faults, cs ...           software events
 *   r01c2, r0x3c                              raw core-PMU config
 *   cpu/event=0x3c,umask=0,cmask=1,inv/       PMU terms (sysfs format/ files)
 *   msr/tsc/, tsc                             sysfs event aliases (events/)
 *   sched:sched_switch                        tracepoints (tracefs)
 *   INST_RETIRED:ANY_P, skl::INST_RETIRED:ANY_P  libpfm4 names
 *   name:ukhGHpPID                            modifiers (ring selection ...)
 *   {a,b,c}:u                                 a group, read together
 */
#ifndef PMON_EVENT_H
#define PMON_EVENT_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pmon/common.h>

#ifdef __cplusplus
extern "C" {
#endif

enum pmon_event_source {
	PMON_EV_HARDWARE = 0, /* generic hardware event (PERF_TYPE_HARDWARE) */
	PMON_EV_CACHE, /* generic cache event (PERF_TYPE_HW_CACHE) */
	PMON_EV_SOFTWARE, /* PERF_TYPE_SOFTWARE */
	PMON_EV_RAW, /* rNNNN */
	PMON_EV_PMU, /* pmu/terms/ */
	PMON_EV_ALIAS, /* a sysfs events/ alias, with or without pmu/ */
	PMON_EV_TRACEPOINT, /* subsystem:name */
	PMON_EV_PFM, /* a libpfm4 name */
};

/* Modifiers the user gave (bit per letter). */
enum pmon_event_mod {
	PMON_MOD_U = 1 << 0, /* user */
	PMON_MOD_K = 1 << 1, /* kernel */
	PMON_MOD_H = 1 << 2, /* hypervisor */
	PMON_MOD_GUEST = 1 << 3, /* G */
	PMON_MOD_HOST = 1 << 4, /* H */
	PMON_MOD_PRECISE = 1 << 5, /* p, pp, ppp, P */
	PMON_MOD_NO_IDLE = 1 << 6, /* I */
	PMON_MOD_PINNED = 1 << 7, /* D */
};

/* The PMU type in config[63:32] of a PERF_TYPE_HARDWARE / HW_CACHE event
 * (include/uapi/linux/perf_event.h PERF_PMU_TYPE_SHIFT): on hybrid parts,
 * which core PMU counts it. */
#define PMON_PMU_TYPE_SHIFT 32

struct pmon_event_desc {
	struct perf_event_attr attr;
	char name[128]; /* display name (the text as typed, or name=) */
	char pmu[64]; /* PMU it belongs to: "cpu", "software", "tracepoint", "msr" ... */
	char unit[32]; /* "msec" for the clocks; a sysfs .unit file's text */
	double scale; /* multiply counts by this (clocks: 1e-6 ns->ms; sysfs .scale) */
	enum pmon_event_source source;
	unsigned mods; /* enum pmon_event_mod */
	bool needs_core_pmu; /* opens only where the kernel has the core PMU */
	int group; /* index of the group leader in its list (itself if leader) */
};

struct pmon_event_opts {
	size_t sz; /* sizeof(struct pmon_event_opts) */
	const char *sysfs_root; /* NULL: "/sys" */
	const char *tracefs_root; /* NULL: /sys/kernel/tracing, mounted there if root and absent */
	bool no_pfm; /* do not consult libpfm4 */
};

struct pmon_evlist;

/**
 * pmon_evlist__new() - an empty event list.
 * @opts: may be NULL; copied.
 * Return: the list (free with pmon_evlist__free()), or NULL with errno.
 */
PMON_API struct pmon_evlist *pmon_evlist__new(const struct pmon_event_opts *opts);
PMON_API void pmon_evlist__free(struct pmon_evlist *l);

/**
 * pmon_evlist__add() - parse a comma-separated event list and append it.
 * @spec: e.g. "cycles:u,{task-clock,page-faults},sched:sched_switch".
 *
 * Return: 0, or a negative error with pmon_errdetail() naming the event and
 * the reason, with the closest known names where the name is unknown:
 * -PMON_ERRNO__EVENT_UNKNOWN, -PMON_ERRNO__EVENT_SYNTAX (bad modifier, bad raw
 * value, malformed PMU term), -PMON_ERRNO__PMU_MISSING (the name exists, for
 * a PMU this machine lacks). On error the list is unchanged.
 */
PMON_API int pmon_evlist__add(struct pmon_evlist *l, const char *spec);
/**
 * pmon_evlist__add_detailed() - append perf stat's -d sets up to @level
 * (1-3): 1 L1-dcache-loads, L1-dcache-load-misses, LLC-loads,
 * LLC-load-misses; 2 adds L1-icache-loads/-misses, dTLB-loads/-misses,
 * iTLB-loads/-misses; 3 adds L1-dcache-prefetches/-misses (perf's
 * builtin-stat.c, detailed_attrs and the two after it). Generic cache
 * events: where the PMU lacks one, it opens as not supported, with why.
 * Return: as pmon_evlist__add(); -EINVAL for a level outside 1-3.
 */
PMON_API int pmon_evlist__add_detailed(struct pmon_evlist *l, unsigned level);
/**
 * pmon_evlist__set_filter() - perf's --filter: the kernel's event filter
 * (Documentation/trace/events.rst, "Event filtering": "prev_pid == 0",
 * "comm ~ \"sh*\"") for tracepoint event @i, set on each of its counters
 * as they open (PERF_EVENT_IOC_SET_FILTER). Copied; a second one replaces it.
 * Return: 0; -EINVAL (detail) when @i is not a tracepoint or the filter is
 * empty; -ENOMEM. The kernel checks the syntax when the counters open.
 */
PMON_API int pmon_evlist__set_filter(struct pmon_evlist *l, size_t i, const char *filter);
/** Event @i's filter, or NULL; owned by @l. */
PMON_API const char *pmon_evlist__filter(const struct pmon_evlist *l, size_t i);
/**
 * pmon_evlist__set_cgroup() - perf stat's -G: count event @i only for the
 * tasks of the cgroup directory @dir (pmon_cgroup_resolve() turns perf's
 * name into one), on CPU-wide counters (-a, -C). NULL or "" clears it.
 * Copied. Return: 0, -EINVAL (no event @i), -ENOMEM.
 */
PMON_API int pmon_evlist__set_cgroup(struct pmon_evlist *l, size_t i, const char *dir);
/** Event @i's cgroup directory, or NULL; owned by @l. */
PMON_API const char *pmon_evlist__cgroup(const struct pmon_evlist *l, size_t i);
/**
 * pmon_evlist__next() - split an event list as pmon_evlist__add() does: a
 * comma ends an event except inside a {group} or a PMU's /terms/. Start
 * with *@pos NULL; each call copies the next event (or group) into @item
 * and moves *@pos on.
 * Return: 1, 0 after the last, or -PMON_ERRNO__EVENT_SYNTAX (an empty
 * event as in "a,,b" or "a,", a brace unmatched, an event longer than
 * @len - 1) with the detail set.
 */
PMON_API int pmon_evlist__next(const char *spec, const char **pos, char *item, size_t len);

PMON_API size_t pmon_evlist__count(const struct pmon_evlist *l);
/** The i-th event; NULL when out of range. Owned by the list. */
PMON_API const struct pmon_event_desc *pmon_evlist__event(const struct pmon_evlist *l, size_t i);
/**
 * pmon_evlist__slice() - a new list of events @first .. @first + @n - 1 of
 * @l, each its own group leader. Return: the list, or NULL with errno.
 */
PMON_API struct pmon_evlist *pmon_evlist__slice(const struct pmon_evlist *l, size_t first,
						size_t n);
/**
 * pmon_evlist__tp_format() - the tracefs format description of event @i, a
 * tracepoint (events/SYS/NAME/format: its fields and print format), into
 * @buf (NUL-terminated, cut at @n - 1 bytes). Return: its length, or
 * -EINVAL (not a tracepoint), -ENOENT (tracefs or the file gone; detail
 * set), -errno.
 */
PMON_API long pmon_evlist__tp_format(struct pmon_evlist *l, size_t i, char *buf, size_t n);
/**
 * pmon_evlist__tp_field() - where @field lies in the raw record
 * (PERF_SAMPLE_RAW) of tracepoint @tp ("sched:sched_switch"), from its
 * tracefs format file (mounted as pmon_evlist__add() does, and unmounted).
 * Return: 0 with *@offset and *@size in bytes; -ENOENT (no such tracepoint
 * or field; detail set), -EACCES, or -errno.
 */
PMON_API int pmon_evlist__tp_field(struct pmon_evlist *l, const char *tp, const char *field,
				   unsigned *offset, unsigned *size);
/** Make every event count user space only (exclude_kernel, exclude_hv). */
PMON_API void pmon_evlist__set_user_only(struct pmon_evlist *l, size_t i);

/**
 * pmon_event_list_names() - every event name usable here, by source.
 * @cb: called once per name with its source, PMU, and a description (may be "").
 * @filter: substring (case-insensitive) or NULL for all.
 * Return: the number of names reported, or a negative error.
 */
/**
 * pmon_event_tracepoints_listable() - whether pmon_event_list_names()
 * lists the tracepoints here (tracefs mounted or mountable, readable, and
 * the kernel letting this user open them).
 * Return: 0; else why not, with the detail set: -EPERM (perf_event_paranoid
 * without CAP_PERFMON), -EACCES (tracefs root's only), -ENOENT (not
 * mounted, and this user cannot mount it).
 */
PMON_API int pmon_event_tracepoints_listable(const struct pmon_event_opts *opts);

PMON_API long pmon_event_list_names(const struct pmon_event_opts *opts, const char *filter,
				    void (*cb)(void *ctx, enum pmon_event_source src,
					       const char *pmu, const char *name, const char *desc),
				    void *ctx);

PMON_API const char *pmon_event_source_name(enum pmon_event_source s);

#ifdef __cplusplus
}
#endif
#endif
