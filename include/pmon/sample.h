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
#include <pmon/sim.h>
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
	/* More PERF_SAMPLE_* fields in each sample (PERF_SAMPLE_RAW for a
	 * tracepoint's fields, PERF_SAMPLE_ADDR for a fault's address). */
	uint64_t sample_type_extra;
	/* Stamp records with this POSIX clock (attr.use_clockid, Linux 4.1+),
	 * e.g. CLOCK_MONOTONIC to line them up with user-space timestamps. */
	bool use_clockid;
	int clockid;
	/* PERF_RECORD_SWITCH side-band records: the target's threads switching
	 * in and out (attr.context_switch, Linux 4.3+). */
	bool context_switch;
	/* No MMAP2/COMM/FORK/EXIT side-band records. */
	bool no_side_band;
	/* How the events open on the target: inherit and enable_on_exec (a
	 * sampler always opens disabled: pmon_sampler__enable()). NULL: neither. */
	const struct pmon_open_opts *open;
};

struct pmon_sampler;

/**
 * pmon_sampler__open() - sample every event of @events on @target: one ring
 * buffer per CPU (with the target's pid and @opts->open for a command or
 * process, every task for system-wide); the other events of a CPU write
 * into its first event's ring (PERF_EVENT_IOC_SET_OUTPUT). Records: SAMPLE
 * (identifier, ip, pid/tid, time, cpu, period, callchain), MMAP2, COMM,
 * FORK, EXIT, LOST, THROTTLE; a sample's identifier names its event
 * (pmon_sampler__ids()).
 * Return: the sampler, or NULL with errno, the event and reason in the detail.
 */
PMON_API struct pmon_sampler *pmon_sampler__open(const struct pmon_evlist *events,
						 const struct pmon_target *target,
						 const struct pmon_sample_opts *opts);
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

/* ---- one PERF_RECORD_SAMPLE, decoded ------------------------------------ */

/*
 * The fields of one sample record, as the attr's sample_type lays them out
 * (Linux include/uapi/linux/perf_event.h, "PERF_RECORD_SAMPLE"; filled by
 * the kernel's perf_output_sample()). A field the sample_type lacks is 0.
 * Pointers point into the record (no alignment promised: read the chain
 * with pmon_sample__chain()).
 */
struct pmon_sample {
	uint64_t id; /* PERF_SAMPLE_IDENTIFIER, else PERF_SAMPLE_ID */
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t addr;
	uint64_t stream_id;
	uint32_t cpu;
	uint64_t period;
	uint64_t nr; /* call chain entries (context markers included) */
	const uint8_t *chain; /* nr u64s, leaf first */
	uint64_t abi; /* PERF_SAMPLE_REGS_ABI_*; 0: no registers follow */
	uint64_t nregs; /* popcount(regs_user) when abi != 0 */
	const uint8_t *regs; /* nregs u64s, ascending register index */
	uint64_t stack_size; /* bytes copied (0: none) */
	uint64_t stack_dyn; /* of them, bytes that held stack (<= stack_size) */
	const uint8_t *stack;
	const uint8_t *raw; /* PERF_SAMPLE_RAW: a tracepoint's record, raw_size bytes */
	uint32_t raw_size;
};

/**
 * pmon_sample__parse() - decode the PERF_RECORD_SAMPLE at @rec (@len bytes,
 * its perf_event_header included) for an attr with @sample_type and
 * @regs_user (sample_regs_user, for PERF_SAMPLE_REGS_USER). Every length
 * is checked against the record without overflow, however large the
 * values it holds. Fields after PERF_SAMPLE_STACK_USER are not decoded.
 * Return: 0; -EINVAL (a field runs past the record, or it is not a
 * sample), -ENOTSUP (@sample_type has PERF_SAMPLE_READ or
 * PERF_SAMPLE_BRANCH_STACK, whose sizes depend on more of the attr).
 * Thread-safe: touches only @out.
 */
PMON_API int pmon_sample__parse(const void *rec, size_t len, uint64_t sample_type,
				uint64_t regs_user, struct pmon_sample *out);

/** Entry @i (< s->nr) of a parsed sample's call chain. */
static inline uint64_t pmon_sample__chain(const struct pmon_sample *s, uint64_t i)
{
	uint64_t v;

	__builtin_memcpy(&v, s->chain + 8 * i, 8);
	return v;
}

/* ---- the recording file ----------------------------------------------- */

struct pmon_data_header {
	uint64_t sample_type;
	uint64_t regs_user; /* perf_event_attr.sample_regs_user (DWARF mode), else 0 */
	uint32_t attr_type;
	uint64_t attr_config, period, freq;
	char event[96];
	char command[256];
	/* Added with issue #27 (a reader of an older file finds them zero). */
	uint32_t flags; /* PMON_DATA_SYSTEM_WIDE */
	char hostname[65]; /* the recording machine's; "" to let the writer fill it in */
	int64_t captured; /* when it was recorded (Unix seconds); 0: the file's mtime */
	/* Added with issue #29 (a reader of an older file finds it ""): the
	 * CPUs of a recording limited to some (record -C), as "0,2-3"
	 * (pmon_idlist__format()); "" where every CPU was sampled, or none. */
	char cpus[256];
};

/* pmon_data_header.flags: every CPU was sampled (record -a); ->command, if
 * any, only said for how long. */
#define PMON_DATA_SYSTEM_WIDE 0x1u

struct pmon_data_writer;

/**
 * pmon_data_writer__open() - create @path (mode 0600: a recording holds
 * kernel addresses and, with DWARF call graphs, raw stack bytes) and write
 * its header. An existing regular file at @path is kept as @path.old, as
 * perf does, until pmon_data_writer__abandon() puts it back.
 * Return: the writer, or NULL with errno (detail names the file).
 */
PMON_API struct pmon_data_writer *pmon_data_writer__open(const char *path,
							 const struct pmon_data_header *h);
/** Add a record; a chunk is written whenever 256 KiB are buffered. */
PMON_API int pmon_data_writer__add(struct pmon_data_writer *w, const void *rec, size_t len);
/**
 * pmon_data_writer__add_maps() - write an MMAP2 record for every executable
 * file mapping that process @pid has now (/proc/PID/maps), and a COMM
 * record for each of its threads, or every process's for @pid 0: what the
 * kernel does not report for a process that was running before sampling
 * began (-p, -a). Return: the MMAP2 records written, or -errno (-ESRCH:
 * @pid has gone).
 */
PMON_API long pmon_data_writer__add_maps(struct pmon_data_writer *w, pid_t pid);
/**
 * pmon_data_writer__add_tp_formats() - for each tracepoint of @events (the
 * sampled events, in their order), its tracefs format description, so a
 * reader decodes its samples' raw records by field. Call after the events'
 * pmon_data_writer__add_event(), before the first sample. A format that
 * cannot be read is left out (those samples stay raw). Return: 0 or -errno.
 */
struct pmon_evlist;
PMON_API int pmon_data_writer__add_tp_formats(struct pmon_data_writer *w,
					      struct pmon_evlist *events);
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
/**
 * pmon_data_writer__abandon() - nothing was recorded (the command could not
 * be started): remove the new file, put a kept @path.old back. Frees @w.
 */
PMON_API void pmon_data_writer__abandon(struct pmon_data_writer *w);

/* ---- reports ------------------------------------------------------------ */

/* What the entries are keyed by: perf report's --sort keys. The last four
 * are the sample's thread's command, process, thread and CPU. */
enum pmon_report_sort {
	PMON_SORT_SYMBOL = 0,
	PMON_SORT_DSO,
	PMON_SORT_LINE,
	PMON_SORT_COMM,
	PMON_SORT_PID,
	PMON_SORT_TID,
	PMON_SORT_CPU,
};
#define PMON_REPORT_KEYS_MAX 8

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
	/* The entries alone: no call stacks are collected (->stacks stays
	 * empty), which saves the memory and time of the distinct chains. */
	bool no_stacks;
	/* Binaries are looked up under this directory (the recorded path
	 * appended), as perf's --symfs: another machine's files. */
	const char *symfs;
	/* The kernel's symbols from this kallsyms file, whatever kernel the
	 * recording was made on (perf's --kallsyms). Without it: the
	 * recording's own, else this machine's when it runs the recorded
	 * kernel (same build id), else perf's build-id cache's copy. */
	const char *kallsyms;
	/*
	 * perf report's views (issue #27; lib/report/view.c). Where any is set
	 * the entries are keyed, filtered and counted by them, and ->sort is
	 * not used; the stacks are not collected (as with no_stacks).
	 * @sort_keys: perf's --sort list, "comm,dso,symbol": comm, pid, tid,
	 * cpu, dso, symbol (sym), line (srcline), at most PMON_REPORT_KEYS_MAX.
	 * Filters, comma lists as perf's: @comms, @dsos (base name or path),
	 * @symbols, @pids, @tids, @cpus ("0,2-3"); @time: perf's --time,
	 * "START,STOP" in seconds of the recording's clock (either may be
	 * empty; several ranges separated by spaces) or percents of the span
	 * from the first sample to the last, "10%/2" (the second tenth),
	 * "0%-10%,30%-40%". A sample is counted where it passes every filter,
	 * and the totals (->events, ->samples, ->period) are the filtered
	 * ones, so shares are of what passed (perf's --percentage relative).
	 * @children: each entry also gets the samples and period of every
	 * sample whose call chain holds it anywhere (once per sample), perf's
	 * --children; the entries are then ordered by that.
	 */
	const char *sort_keys;
	const char *comms, *dsos, *symbols, *pids, *tids, *cpus, *time;
	bool children;
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
	/* With the view keys (pmon_report_opts.sort_keys): the sample's thread's
	 * command, process, thread and CPU, where keyed by them (@cpu is
	 * UINT32_MAX where the samples carry no CPU, perf's -1). */
	char comm[16];
	uint32_t pid, tid, cpu;
	/* pmon_report_opts.children: the samples (and their period) whose call
	 * chain holds this entry anywhere, each sample once. */
	uint64_t children_samples, children_period;
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

struct pmon__sites;

struct pmon_report {
	struct pmon_data_header header;
	struct pmon_report_entry *e;
	size_t n;
	uint64_t samples, lost, period;
	/* Chunks were damaged (a torn or flipped middle chunk, a cut tail): the
	 * reader skipped to the next valid chunk; ->warning says what (it also
	 * names junk between two chunks numbered in sequence, which hides
	 * nothing: then ->truncated is false). */
	bool truncated;
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
	/* What a damaged file lost: chunks skipped (a damaged stretch counted
	 * as the chunks it held, docs/pmon-data-format.md), the bytes skipped,
	 * and the samples they held, estimated from the good chunks' samples
	 * per byte (junk between two consecutive chunks held none). */
	uint64_t damaged_chunks, damaged_bytes, damaged_samples;
	/* The keys of a view (pmon_report_opts.sort_keys), in the order given;
	 * 0 keys where the report was keyed by ->sort alone. */
	enum pmon_report_sort keys[PMON_REPORT_KEYS_MAX];
	size_t nkeys;
	bool children; /* entries carry children_samples/children_period */
	/* A view's first and last sample time (ns, the recording's clock), of
	 * all samples before any filter; 0 where the samples carry no time or
	 * the report is no view. */
	uint64_t first_time, last_time;
	/* pprof's detail of the stacks (their addresses, mappings, source
	 * lines, threads), private to the library: NULL without stacks. */
	struct pmon__sites *sites;
};

/**
 * pmon_report_read() - read a recording, symbolize every address once per
 * unique address (elfutils), aggregate by @opts->sort (NULL: by symbol),
 * most events represented (period) first, then most samples, as perf
 * orders them, and collect the distinct call stacks. A file whose
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
/** A self-contained flame graph SVG, @width px wide: hover titles, and flamegraph.pl's
 * click-to-zoom and search in an inline script. */
PMON_API int pmon_report_write_flamegraph(const struct pmon_report *r, FILE *out, unsigned width);
/**
 * The call graph as an indented tree with total and self shares: from the
 * outermost callers down (perf report -g caller), or with @callee from each
 * sampled function up through its callers (-g callee); nodes under
 * @min_percent of the samples left out. @json: nested objects instead.
 */
PMON_API int pmon_report_write_callgraph(const struct pmon_report *r, FILE *out, bool callee,
					 double min_percent, bool json);
/** speedscope's file format (https://www.speedscope.app/file-format-schema.json):
 * the distinct stacks with their periods as one "sampled" profile. */
PMON_API int pmon_report_write_speedscope(const struct pmon_report *r, FILE *out);
/**
 * pmon_report_write_speedscope_samples() - speedscope's file format with
 * every sample of @r's stack event in the recording at @path (the one @r
 * was read from, with the same @opts): one "sampled" profile per thread,
 * its samples in time order, weighted by their periods, so speedscope's
 * Time Order view shows what ran when. Stacks are the call chains as
 * pmon_report_foreach_sample() names them (no inlined frames).
 * Return: 0, or pmon_report_foreach_sample()'s errors, -ENOMEM, -EIO.
 */
PMON_API int pmon_report_write_speedscope_samples(const struct pmon_report *r, const char *path,
						  const struct pmon_report_opts *opts, FILE *out);
/** pprof's profile.proto, gzipped, as `go tool pprof` reads it. */
PMON_API int pmon_report_write_pprof(const struct pmon_report *r, FILE *out);

/* ---- samples one by one (pmon script) ------------------------------------ */

/* One frame of a sample, named as perf script names it. */
struct pmon_report_sample_frame {
	uint64_t ip; /* as recorded (a caller's frame: the return address) */
	/* What perf script prints for a frame of a call chain: the address in
	 * its file (ip - mapping start + file offset) for file-backed code,
	 * else @ip. */
	uint64_t addr;
	uint64_t symoff; /* @ip's offset into @sym, where @has_symoff */
	bool has_symoff;
	const char *sym; /* "[unknown]" where none */
	/* The file's path; "[kernel.kallsyms]", "[jit]" or "[unknown]" as perf names them. */
	const char *dso;
};

/* One sample, decoded and symbolized. Every pointer is valid during the
 * callback only. */
struct pmon_report_sample {
	uint64_t sample_type; /* the PERF_SAMPLE_* fields the recording holds */
	const char *comm; /* the thread's command (COMM records), ":PID" where unknown */
	uint32_t pid, tid, cpu;
	uint64_t time; /* ns, the recording's clock */
	uint64_t period;
	uint64_t addr; /* PERF_SAMPLE_ADDR */
	unsigned event; /* index into @events */
	const char *event_name;
	/* The recording's events (all of them: they precede its samples). */
	const struct pmon_report_event *events;
	size_t nevents;
	struct pmon_report_sample_frame leaf; /* the sampled ip */
	/* The call chain, leaf first (context markers left out), where the
	 * recording has chains (@has_chain); DWARF-mode user frames unwound. */
	const struct pmon_report_sample_frame *chain;
	size_t nchain;
	bool has_chain;
	/* PERF_SAMPLE_RAW: a tracepoint's record. */
	const uint8_t *raw;
	uint32_t raw_size;
	/* That record decoded by its tracepoint's format, as perf script's
	 * trace field prints it ("prev_comm=sh prev_pid=42 ... ==> ..."), from
	 * the formats the recording keeps; NULL where it keeps none for it. */
	const char *trace;
};

/* The fields of a sample as perf script names them (its -F). */
enum pmon_sample_field {
	PMON_SF_COMM = 1 << 0,
	PMON_SF_TID = 1 << 1,
	PMON_SF_PID = 1 << 2,
	PMON_SF_CPU = 1 << 3,
	PMON_SF_TIME = 1 << 4,
	PMON_SF_PERIOD = 1 << 5,
	PMON_SF_EVENT = 1 << 6,
	PMON_SF_IP = 1 << 7,
	PMON_SF_SYM = 1 << 8,
	PMON_SF_SYMOFF = 1 << 9,
	PMON_SF_DSO = 1 << 10,
	PMON_SF_ADDR = 1 << 11,
	PMON_SF_TRACE = 1 << 12,
};
/* perf script's default fields for a tracepoint's samples (builtin-script.c:
 * no period, no ip: the trace field; the chain's fields where it has one). */
#define PMON_SF_DEFAULT_TRACEPOINT                                                                 \
	(PMON_SF_COMM | PMON_SF_TID | PMON_SF_CPU | PMON_SF_TIME | PMON_SF_EVENT | PMON_SF_TRACE)
/* perf script's default fields (those a recording lacks are left out by the caller). */
#define PMON_SF_DEFAULT                                                                            \
	(PMON_SF_COMM | PMON_SF_TID | PMON_SF_CPU | PMON_SF_TIME | PMON_SF_PERIOD |                \
	 PMON_SF_EVENT | PMON_SF_IP | PMON_SF_SYM | PMON_SF_SYMOFF | PMON_SF_DSO | PMON_SF_TRACE)

/**
 * pmon_report_sample_fields() - parse a field list as perf script's -F
 * reads it: "comm,tid,..." sets the fields; "+f,-g" adds to or takes from
 * *@fields (start it at PMON_SF_DEFAULT); a leading "TYPE:" (sw:, hw:,
 * trace:) applies to every event here. Return: 0 with *@fields set, or
 * -EINVAL (detail: "unknown field 'x' (the names)"), *@fields unchanged.
 * Thread-safe.
 */
PMON_API int pmon_report_sample_fields(const char *spec, unsigned *fields);

/**
 * pmon_report_foreach_sample() - hand every sample of the recording at
 * @path to @cb in file order, with its thread's command and its address
 * and call chain symbolized (as pmon_report_read() names them, with the
 * offsets into the symbols). @opts: its debug_dir (NULL: defaults); the
 * rest is ignored. @info (may be NULL) gets the header, the events, the
 * totals and the account of damage, as pmon_report_read()'s, with no
 * entries or stacks.
 * Return: 0, @cb's first non-zero value (which ends the walk), or the
 * errors of pmon_report_read() (detail set).
 * Not thread-safe with itself on one @info; @cb runs on the calling thread.
 */
PMON_API int pmon_report_foreach_sample(const char *path, const struct pmon_report_opts *opts,
					int (*cb)(void *ctx, const struct pmon_report_sample *s),
					void *ctx, struct pmon_report *info);

/* ---- a live profile (pmon top's hottest functions) ----------------------- */

struct pmon_report_live;

/**
 * pmon_report_live__new() - a profile fed with a sampler's records as they
 * come (pmon_sampler__drain()), with no recording: the samples of each
 * interval keyed, filtered and counted as @opts' view says (its
 * sort_keys and filters, as pmon_report_read()'s views; NULL: by symbol
 * and DSO; no time or children), named as pmon report names them.
 * @sample_type and @regs_user: the sampler's (pmon_sampler__sample_type(),
 * pmon_sampler__regs_user()). A process whose mappings came before the
 * sampler (one already running, all CPUs) has them read from
 * /proc/PID/maps at its first record, and its command from /proc/PID/comm.
 * Return: the profile (free with pmon_report_live__free()), or NULL with
 * errno (EINVAL: a bad key or list, detail set; ENOMEM). Not thread-safe:
 * one thread feeds and reads it.
 */
PMON_API struct pmon_report_live *pmon_report_live__new(uint64_t sample_type, uint64_t regs_user,
							const struct pmon_report_opts *opts);
/**
 * pmon_report_live__add() - one record as the sampler hands it (@len bytes,
 * its header included): a sample is counted, maps, forks and commands
 * change what later samples see; others are ignored.
 * Return: 0, -EINVAL (no record), or -ENOMEM.
 */
PMON_API int pmon_report_live__add(struct pmon_report_live *l, const void *rec, size_t len);
/**
 * pmon_report_live__view() - new keys and filters (a zoom into a process or
 * a DSO, and out again): @opts as in pmon_report_live__new(). The counts
 * of the interval so far are dropped; the maps and the annotations' counts
 * stay. Return: 0, or -EINVAL (detail set; the profile then counts nothing
 * until a good view is set).
 */
PMON_API int pmon_report_live__view(struct pmon_report_live *l,
				    const struct pmon_report_opts *opts);
/**
 * pmon_report_live__take() - the entries counted since the last take (or
 * the start) into @out, most period first, with the totals of what passed
 * the filters (->samples, ->period, ->events[0]); each entry's ->pid and
 * ->comm are those of the process with most of its samples where pid is
 * no key. The counts start again from zero. @out is the caller's: release
 * it with pmon_report_release(). Return: 0 or -ENOMEM.
 */
PMON_API int pmon_report_live__take(struct pmon_report_live *l, struct pmon_report *out);
/**
 * pmon_report_live__annotate() - pmon_annotate()'s view of @symbol in the
 * DSO @dso (base name or path; NULL: any) from every sample counted since
 * the profile was made (each under the view of its time): its instructions with the
 * samples on each; ->total and ->total_period are of all samples in files.
 * Return: 0 (release @out with pmon_annotation_release()); -ENOENT (no
 * sample in it yet), -ENOTSUP (kernel or JIT code, no bytes on disk),
 * or pmon_annotate()'s errors; the detail says which.
 */
PMON_API int pmon_report_live__annotate(struct pmon_report_live *l, const char *symbol,
					const char *dso, struct pmon_annotation *out);
PMON_API void pmon_report_live__free(struct pmon_report_live *l);

/* ---- two profiles compared (pmon diff) ---------------------------------- */

enum pmon_diff_key { PMON_DIFF_SYMBOL = 0, PMON_DIFF_DSO, PMON_DIFF_DSO_SYMBOL };

/* One symbol (or DSO) of either profile. Shares are percentages of each
 * profile's events (period) of the compared event; 0 where it is absent. */
struct pmon_report_diff_entry {
	char symbol[256]; /* "" with PMON_DIFF_DSO */
	char dso[256]; /* with PMON_DIFF_SYMBOL: the DSO it was first met in */
	uint64_t base_period, new_period, base_samples, new_samples;
	double base_share, new_share;
	double delta; /* new_share - base_share, percentage points */
	/* new_share / base_share; 0 where absent from the baseline */
	double ratio;
};

/* A distinct call stack of either profile, with its samples in each. */
struct pmon_report_diff_stack {
	uint32_t *frame; /* indexes into ->frames, outermost caller first */
	uint32_t depth;
	uint64_t base_samples, new_samples;
};

struct pmon_report_diff {
	struct pmon_report_diff_entry *e; /* most baseline share first, then new */
	size_t n;
	uint64_t base_total, new_total; /* the compared event's events (period) */
	uint64_t base_samples, new_samples; /* and its stacks' samples */
	struct pmon_report_frame *frames; /* symbol and DSO, shared by both */
	size_t nframes;
	struct pmon_report_diff_stack *stacks; /* the baseline's first, as met */
	size_t nstacks;
	char event[64]; /* the compared event (the baseline's name) */
};

/**
 * pmon_report_diff() - compare @base with @other, the new profile (both read with
 * pmon_report_read(); their stack_event is the event compared): entries
 * matched by @key (symbol, DSO, or both) with each one's shares, delta
 * and ratio, as perf diff computes them, and the union of their stacks
 * with the samples of each (FlameGraph's difffolded.pl).
 * Return: 0 or -ENOMEM (@out released). @out is the caller's: release it
 * with pmon_report_diff_release(). Thread-safe: reads only its arguments.
 */
PMON_API int pmon_report_diff(const struct pmon_report *base, const struct pmon_report *other,
			      enum pmon_diff_key key, struct pmon_report_diff *out);
/**
 * pmon_report_diff_files() - read the recordings at @base and @other with
 * @opts (stacks and inlines only where @stacks) and compare them:
 * pmon_report_diff(). Each file's damage warning (a read that skipped
 * chunks; the first file's where both) goes into @warn (@warnlen bytes, "" when none).
 * Return: 0, or pmon_report_read()'s errors (detail names the file).
 */
PMON_API int pmon_report_diff_files(const char *base, const char *other,
				    const struct pmon_report_opts *opts, bool stacks,
				    enum pmon_diff_key key, struct pmon_report_diff *out,
				    char *warn, size_t warnlen);
PMON_API void pmon_report_diff_release(struct pmon_report_diff *d);
/** "outer;...;leaf base new" per stack, as difffolded.pl writes. Return: 0 or -EIO. */
PMON_API int pmon_report_diff_write_folded(const struct pmon_report_diff *d, FILE *out);
/**
 * A differential flame graph SVG, @width px wide (flamegraph.pl on
 * difffolded output): widths are the new profile's samples, red where a
 * frame's share grew, blue where it shrank, deeper the more (the
 * baseline normalised to the new profile's total). Return: 0 or -errno.
 */
PMON_API int pmon_report_diff_write_flamegraph(const struct pmon_report_diff *d, FILE *out,
					       unsigned width);

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
	/* The events the samples stand for (their periods): in the symbol; in
	 * the recording. Shares are of these, as perf annotate's local-period
	 * (a simulated recording's "sample" is an instruction's exact count). */
	uint64_t period, total_period;
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

/**
 * pmon_annotate_exact() - pmon_annotate(), with exact counts where they
 * exist: in a recording of pmon simulate (with no event asked for in
 * @opts) the executions of sim/instructions/, whatever else was simulated.
 * *@exact says whether the counts are executions (a simulation's) rather
 * than samples. Return: as pmon_annotate().
 */
PMON_API int pmon_annotate_exact(const char *path, const char *symbol,
				 const struct pmon_report_opts *opts, struct pmon_annotation *out,
				 bool *exact);

/* The hottest block of an annotated function (pmon annotate --mca), and
 * what was measured in it. */
struct pmon_annotate_block {
	size_t lo, hi, hot; /* indexes into the annotation's instructions */
	uint64_t start, last; /* ELF addresses of the first and last instruction */
	uint64_t count; /* the hottest instruction's executions (exact) or samples */
	uint64_t in_block; /* samples in the block */
	uint64_t executed; /* instructions executed in it (exact counts only) */
	/* Measured by sampled cycles and instructions (pmon_annotate_block_cost()). */
	char cycles_event[64], instructions_event[64]; /* the recording's names */
	bool ref_cycles; /* reference cycles stand for core cycles */
	struct pmon_sim_block_cost cost;
};

/**
 * pmon_annotate_hot_block() - the hottest block of @a (pmon_sim__hot_range()
 * over its instructions, Capstone's text telling the branches and their
 * direct targets), counts as executions when @exact.
 * Return: 0 with @b's block fields; -ENOENT when no instruction has a
 * count, -ENOMEM.
 */
PMON_API int pmon_annotate_hot_block(const struct pmon_annotation *a, bool exact,
				     struct pmon_annotate_block *b);

/**
 * pmon_annotate_block_cost() - the measured cost of @b's block of @a's
 * function in the recording at @path: where it samples core (or reference)
 * cycles and instructions, their events and the block's IPC and cycles an
 * iteration (pmon_sim__block_cost()) in @b.
 * Return: 0; -ENOENT (detail: which events the recording samples instead:
 * hardware events recorded where a PMU counts them give the cost),
 * or the error of reading it (detail set).
 */
PMON_API int pmon_annotate_block_cost(const char *path, const struct pmon_report_opts *opts,
				      const struct pmon_annotation *a,
				      struct pmon_annotate_block *b);
PMON_API void pmon_annotation_release(struct pmon_annotation *a);

#ifdef __cplusplus
}
#endif
#endif
