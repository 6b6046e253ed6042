/* SPDX-License-Identifier: MIT */
/*
 * Event-based sampling (the seeds' VTune EBS: "Sample After" N events) on
 * perf_event ring buffers, a chunked recording file that survives a crash
 * (docs/pmon-data-format.md), and reports by symbol or DSO.
 */
#ifndef PMON_SAMPLE_H
#define PMON_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <pmon/common.h>
#include <pmon/counter.h>
#include <pmon/event.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pmon_sample_opts {
	size_t sz;
	uint64_t period; /* sample every N events ("Sample After"); 0: use freq */
	const uint64_t *periods; /* per event of the list (0: period/freq), or NULL */
	uint64_t freq; /* samples per second (kernel-adjusted period); default 1000 */
	bool callchain; /* frame-pointer call chains (-g) */
	/* > 0: DWARF mode (--call-graph dwarf): copy this many bytes of the user
	 * stack (a multiple of 8, at most 65528) and the user registers with
	 * each sample for the report to unwind; the kernel's chain then holds
	 * the kernel frames only. */
	unsigned stack_user;
	unsigned pages; /* ring pages per CPU, a power of two (default 64) */
};

struct pmon_sampler;

/**
 * pmon_sampler__open() - sample every event of @events on @target: one ring
 * buffer per CPU (with the target's pid and inherit for a command or
 * process, every task for system-wide); the other events of a CPU write
 * into its first event's ring (PERF_EVENT_IOC_SET_OUTPUT). Records: SAMPLE
 * (identifier, ip, pid/tid, time, cpu, period, callchain), MMAP2, COMM,
 * FORK, EXIT, LOST, THROTTLE; a sample's identifier names its event
 * (pmon_sampler__ids()).
 * Return: 0, or -errno with the event and reason in the detail.
 */
PMON_API int pmon_sampler__open(const struct pmon_evlist *events, const struct pmon_target *target,
				const struct pmon_sample_opts *opts, struct pmon_sampler **out);
PMON_API int pmon_sampler__enable(struct pmon_sampler *s);
PMON_API int pmon_sampler__disable(struct pmon_sampler *s);
/** Wait up to @timeout_ms for data. Return: > 0 data ready, 0 timeout, -errno. */
PMON_API int pmon_sampler__poll(struct pmon_sampler *s, int timeout_ms);
/**
 * pmon_sampler__drain() - pass every record waiting in every ring to @cb
 * (a contiguous copy, even where it wrapped), all rings merged in time
 * order. Return: records drained, or the first negative value @cb returned
 * (or -ENOMEM).
 */
PMON_API long pmon_sampler__drain(struct pmon_sampler *s,
				  int (*cb)(void *ctx, const void *rec, size_t len), void *ctx);
PMON_API uint64_t pmon_sampler__sample_type(const struct pmon_sampler *s);
/** The kernel's ids of event @i's file descriptors (one per CPU). Return: how many. */
PMON_API size_t pmon_sampler__ids(const struct pmon_sampler *s, size_t i, const uint64_t **ids);
/** The user registers each sample carries (a PERF_REG_X86_* mask), or 0. */
PMON_API uint64_t pmon_sampler__regs_user(const struct pmon_sampler *s);
PMON_API void pmon_sampler__close(struct pmon_sampler *s);

/* ---- the recording file ----------------------------------------------- */

struct pmon_data_header {
	uint64_t sample_type;
	uint64_t regs_user; /* perf_event_attr.sample_regs_user (DWARF mode), else 0 */
	uint32_t attr_type;
	uint64_t attr_config, period, freq;
	char event[96];
	char command[256];
};

struct pmon_data_writer;

/** Create @path and write its header. Return: 0 or -errno (detail names the file). */
PMON_API int pmon_data_writer__open(const char *path, const struct pmon_data_header *h,
				    struct pmon_data_writer **out);
/** Add a record; a chunk is written whenever 256 KiB are buffered. */
PMON_API int pmon_data_writer__add(struct pmon_data_writer *w, const void *rec, size_t len);
/**
 * pmon_data_writer__add_maps() - write an MMAP2 record for every executable
 * file mapping that process @pid has now (/proc/PID/maps), or every
 * process's for @pid 0: what the kernel does not report for a process that
 * was running before sampling began (-p, -a). Return: records written, or
 * -errno (-ESRCH: @pid has gone).
 */
PMON_API long pmon_data_writer__add_maps(struct pmon_data_writer *w, pid_t pid);
/**
 * pmon_data_writer__add_event() - describe sampled event @index (its name,
 * type and config, period or frequency) and the kernel's ids of its file
 * descriptors, before the first sample. Return: 0 or -errno.
 */
PMON_API int pmon_data_writer__add_event(struct pmon_data_writer *w, unsigned index,
					 const char *name, uint32_t attr_type, uint64_t attr_config,
					 uint64_t period, uint64_t freq, const uint64_t *ids,
					 size_t nids);
/** Write the buffered records as a chunk (call at least every second). */
PMON_API int pmon_data_writer__flush(struct pmon_data_writer *w);
/** Flush, close; Return: 0 or -errno. Frees @w. */
PMON_API int pmon_data_writer__close(struct pmon_data_writer *w);

/* ---- reports ------------------------------------------------------------ */

enum pmon_report_sort { PMON_SORT_SYMBOL = 0, PMON_SORT_DSO, PMON_SORT_LINE };

struct pmon_report_opts {
	size_t sz;
	enum pmon_report_sort sort;
	/* Searched first for debuginfo by build id (DIR/.build-id/xx/rest.debug),
	 * before /usr/lib/debug: a stripped or since-rebuilt binary's symbols. */
	const char *debug_dir;
	/* The event the stacks and annotations are for (several were
	 * recorded): its name; NULL for the first. */
	const char *event;
	/* Stacks get a frame for each function inlined at an address (from the
	 * DWARF scopes; costs a lookup per distinct address), as perf's --inline. */
	bool inlines;
};

/* One sampled event of a recording. */
struct pmon_report_event {
	char name[64];
	uint64_t samples, period; /* its samples, and the events they stand for */
	uint64_t sample_period, freq; /* as recorded: "Sample After" N, or Hz */
};

struct pmon_report_entry {
	unsigned event; /* index into pmon_report.events */
	char symbol[256];
	char dso[256];
	char line[256]; /* "file.c:42" (PMON_SORT_LINE), "[unknown]" without line tables */
	uint64_t samples;
	uint64_t period; /* events represented */
};

/* One function of the call stacks: the frames of pprof, speedscope and flame graphs. */
struct pmon_report_frame {
	char *symbol;
	char *dso; /* base name */
};

/* A distinct call stack (the leaf alone when the recording has no chains). */
struct pmon_report_stack {
	uint32_t *frame; /* indexes into ->frames, outermost caller first */
	uint32_t depth;
	uint64_t samples, period;
};

struct pmon_report {
	struct pmon_data_header header;
	struct pmon_report_entry *e;
	size_t n;
	uint64_t samples, lost, period;
	bool truncated; /* the file ended inside a chunk or a chunk failed its CRC */
	bool callchains; /* the samples carry call chains (recorded with -g) */
	char warning[256];
	/* Files whose build id differs from the recording's, with no debuginfo
	 * found for the recorded one: their samples are [unknown], never another
	 * binary's symbols. "" when none. */
	char stale[512];
	struct pmon_report_event events[16];
	size_t nevents;
	unsigned stack_event; /* the event whose samples the stacks hold */
	struct pmon_report_frame *frames;
	size_t nframes;
	struct pmon_report_stack *stacks;
	size_t nstacks;
};

/**
 * pmon_report_read() - read a recording, symbolize every address once per
 * unique address (elfutils), aggregate by @opts->sort (NULL: by symbol),
 * most samples first, and collect the distinct call stacks. A file whose
 * build id is not the recorded one is symbolized from debuginfo with the
 * recorded build id, or not at all (->stale says so).
 * A damaged or truncated tail is reported in ->warning, not an error.
 * Return: 0, or -PMON_ERRNO__PARSE ("FILE: why") for a file that is not a
 * recording, or -errno.
 */
PMON_API int pmon_report_read(const char *path, const struct pmon_report_opts *opts,
			      struct pmon_report *out);
PMON_API void pmon_report_release(struct pmon_report *r);

/* Exports of a report's stacks (lib/report/export.c). Return: 0 or -errno. */
/** Brendan Gregg's folded format: "outer;...;leaf count" per stack. */
PMON_API int pmon_report_write_folded(const struct pmon_report *r, FILE *out);
/** A self-contained flame graph SVG (hover titles, no script), @width px wide. */
PMON_API int pmon_report_write_flamegraph(const struct pmon_report *r, FILE *out, unsigned width);
/**
 * The call graph as an indented tree with total and self shares: from the
 * outermost callers down (perf report -g caller), or with @callee from each
 * sampled function up through its callers (-g callee); nodes under
 * @min_percent of the samples left out. @json: nested objects instead.
 */
PMON_API int pmon_report_write_callgraph(const struct pmon_report *r, FILE *out, bool callee,
					 double min_percent, bool json);
/** speedscope's file format (https://www.speedscope.app/file-format-schema.json). */
PMON_API int pmon_report_write_speedscope(const struct pmon_report *r, FILE *out);
/** pprof's profile.proto, gzipped, as `go tool pprof` reads it. */
PMON_API int pmon_report_write_pprof(const struct pmon_report *r, FILE *out);

/* ---- annotation --------------------------------------------------------- */

struct pmon_annotate_insn {
	uint64_t addr; /* the ELF address (as objdump shows it) */
	char text[160]; /* "add eax, 3" (Capstone, Intel syntax) */
	uint64_t samples, period;
	const char *src; /* source file, or NULL without line tables */
	unsigned line;
};

struct pmon_annotation {
	char symbol[256];
	char dso[4096]; /* the file's path */
	uint64_t start, size; /* ELF address and size of the symbol */
	uint64_t samples, total; /* samples in the symbol; in the recording */
	struct pmon_annotate_insn *insn;
	size_t n;
	char **srcs; /* distinct source files the instructions point into */
	size_t nsrcs;
};

/**
 * pmon_annotate() - the instructions of @symbol (NULL: the symbol with most
 * samples) with the samples that landed on each and their source lines.
 * The symbol is looked up among the sampled code of the recording at @path;
 * where several files define it, the one with most samples wins.
 * Return: 0; -ENOENT (no sample in @symbol: the detail names the hottest
 * symbols), -ENOTSUP (kernel or JIT code, whose bytes are not on disk),
 * -PMON_ERRNO__PARSE, or -errno.
 */
PMON_API int pmon_annotate(const char *path, const char *symbol,
			   const struct pmon_report_opts *opts, struct pmon_annotation *out);
PMON_API void pmon_annotation_release(struct pmon_annotation *a);

#ifdef __cplusplus
}
#endif
#endif
