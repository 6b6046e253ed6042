/* SPDX-License-Identifier: MIT */
/*
 * Private helpers shared by the layers of libpmon: the error-detail string,
 * bounded string helpers, small file readers. Never installed.
 */
#ifndef PMON_INTERNAL_H
#define PMON_INTERNAL_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/types.h>
#include <stddef.h>
#include <string.h>
#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <pmon/error.h>

/* Exported from libpmon.so under PMON_PRIVATE_0.1 (lib/libpmon.map) for the
 * sibling libraries libpmon-report and libpmon-plot; not part of the ABI. */
#pragma GCC visibility push(default)

#define PMON_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define PMON_BIT(x, n) (((x) >> (n)) & 1u)
#define PMON_BITS(x, hi, lo) (((x) >> (lo)) & ((1u << ((hi) - (lo) + 1)) - 1u))

/* Record the detail of a failure (printf-style) and return @err unchanged, so
 * error paths read `return pmon__err(-EINVAL, "%s:%d: ...", ...)`. */
__attribute__((format(printf, 2, 3))) int pmon__err(int err, const char *fmt, ...);
__attribute__((format(printf, 1, 2))) void pmon__detail(const char *fmt, ...);
void pmon__clear_detail(void);

/* The constructor convention (docs/architecture.md, "API conventions"): a
 * constructor returns its object, or NULL with errno set, as libbpf 1.0
 * does. pmon__ret_ptr() turns an implementation's 0/-errno and out-pointer
 * into that: @p when @err is 0, else NULL with errno = -@err. Call the
 * implementation before, not in the argument list: the order in which
 * arguments are evaluated is unspecified (C11 6.5.2.2p10). */
/* An output struct's copy to a caller built with another size of it
 * (docs/architecture.md: output structs that may grow): @out_sz bytes of
 * @full, zeros past this library's @full_sz. */
static inline void pmon__copy_out(void *out, size_t out_sz, const void *full, size_t full_sz)
{
	memcpy(out, full, out_sz < full_sz ? out_sz : full_sz);
	if (out_sz > full_sz)
		memset((char *)out + full_sz, 0, out_sz - full_sz);
}

/* The median of @v[0..@n) as pmon_summarize() gives it (the mean of the
 * two middle values where @n is even), found in place by selection: @v is
 * reordered, and nothing is allocated (lib/stats/summary.c). @n > 0. */
double pmon__median_inplace(uint64_t *v, size_t n);
/* The value of rank floor(@q x (@n - 1)) of @v (0 <= @q <= 1: the nearest
 * rank at or below the @q quantile), in place as above. @n > 0. */
double pmon__rank_inplace(uint64_t *v, size_t n, double q);

/* What pmon__summary_clamp() did. */
enum {
	PMON__CLAMPED = 1, /* a value below 0 by at most the error was set to 0 */
	PMON__BELOW = 2, /* a value below 0 by more than the error, left as it is */
};
/* The statistics of @s, taken of samples from which an overhead known
 * within +-@err was subtracted, and *@total (NULL: none) within
 * +-@total_err: each below 0 by at most its error is set to 0, one below
 * by more is left for the caller to flag. Return: PMON__CLAMPED |
 * PMON__BELOW bits, 0 when every value was >= 0 (lib/stats/summary.c). */
struct pmon_summary;
unsigned pmon__summary_clamp(struct pmon_summary *s, double err, double *total, double total_err);

static inline void *pmon__ret_ptr(int err, void *p)
{
	if (err) {
		errno = -err;
		return NULL;
	}
	return p;
}

/* Make room for @need elements of @size bytes in the array *@p of *@cap
 * (lib/util/grow.c): at least double it (16 at first), checking the byte
 * count for overflow. *@p and *@cap change only on success.
 * Return: 0 or -ENOMEM (out of memory, or the size would overflow). */
int pmon__grow(void **p, size_t *cap, size_t need, size_t size);
/* pmon__grow() for a typed pointer @arr: PMON_GROW(&x->maps, &x->cap, n + 1). */
#define PMON_GROW(arr, cap, need) pmon__grow((void **)(arr), (cap), (need), sizeof(**(arr)))

/* @s as XML character data (lib/util/xml.c): markup escaped (& < > " '),
 * control characters and bytes that are not UTF-8 written as '?'. */
void pmon__xml_text(FILE *f, const char *s);

/* The file formats pmon reads (lib/util/filekind.c). */
/* PMON__FILE_RECORDING_ANY: pmon's recording or perf's (perf.data, file
 * or pipe mode), which the recording reader tells apart by the magic. */
enum pmon__file_format { PMON__FILE_RECORDING, PMON__FILE_TRACE, PMON__FILE_RECORDING_ANY };
/* Whether @fd (opened from @path) is a regular file starting with @want's
 * magic. Return: 0, or -PMON_ERRNO__PARSE (-errno when unreadable) with a
 * detail saying what it is instead (a directory, a device, an empty file,
 * perf's recording and what reads it, pmon's other format). */
int pmon__file_check(int fd, const char *path, enum pmon__file_format want);

/* A mount pmon made for this run (@path), undone by umount2() if a fatal
 * signal ends pmon before it does (pmon_output_cleanup_on_signals());
 * NULL: unmounted by pmon itself, nothing to undo (lib/util/output.c). */
void pmon__fatal_umount(const char *path);
/* Open @path, a name taken from outside input (a recording, a map file),
 * for reading (lib/util/filekind.c): non-blocking, no controlling
 * terminal, without following a final symlink when @nofollow, and only if
 * it is a regular file (a FIFO or device there must not block or act).
 * Return: the descriptor, or -errno (-EINVAL: not a regular file). */
int pmon__open_regular(const char *path, bool nofollow);
/* Open @path, an input file in format @want, as pmon__open_regular()
 * does, and check it with pmon__file_check(), whose detail says what it
 * is instead. Return: the descriptor, or -errno / -PMON_ERRNO__PARSE with
 * the detail set. */
int pmon__open_format(const char *path, enum pmon__file_format want);

/* The MSR state file (lib/msr/state.c): a pmon that programs MSRs keeps
 * the writes that put them back. A restore sequence calls @emit for each
 * write, in order; pmon__msr_state_write() writes them (0600, whole or
 * absent) with this pid and @device; pmon__msr_state_check() is 0 when no
 * file is there, else -EBUSY with a detail saying that a live pmon is
 * programming @what, or that a dead one left @what programmed.
 * pmon_msr_state__restore() (pmon/msr.h) replays a file. */
typedef int (*pmon__msr_restore_seq)(const void *obj,
				     int (*emit)(void *ctx, int cpu, uint32_t addr, uint64_t v),
				     void *ctx);
int pmon__msr_state_write(const char *path, const char *device, pmon__msr_restore_seq seq,
			  const void *obj);
int pmon__msr_state_check(const char *path, const char *what);

/* snprintf that always terminates and reports truncation as false. */
__attribute__((format(printf, 3, 4))) bool pmon__fmt(char *buf, size_t len, const char *fmt, ...);
/* Bounded copy that always terminates. */
void pmon__strlcpy(char *dst, const char *src, size_t len);

/* Read a whole small file (up to len-1 bytes), trailing newline removed.
 * Return: bytes read, or -errno. */
long pmon__read_text(const char *path, char *buf, size_t len);
/* ---- options structs (lib/util/opts.c) ----
 * Every public options struct starts with `size_t sz`. PMON_OPTS_CHECK
 * refuses a struct smaller than its first release's (it ends with @v1_last)
 * and a larger one whose bytes past this library's struct are not all 0;
 * PMON_OPTS_HAS/GET read a field only when the caller's struct holds it
 * (otherwise 0, or @fallback); PMON_OPTS_COPY does the check and copies into
 * a full local struct, zero past the caller's size. */
#define pmon__offsetofend(type, f) (offsetof(type, f) + sizeof(((type *)0)->f))
/* Where @field of *@opts ends (@opts not NULL; no typeof, for cppcheck). */
#define pmon__opts_end(opts, field)                                                                \
	((size_t)((const char *)&(opts)->field - (const char *)(opts)) + sizeof((opts)->field))
int pmon__opts_check(const void *opts, size_t user_sz, size_t min_sz, size_t lib_sz,
		     const char *name);
int pmon__opts_copy(void *dst, size_t lib_sz, const void *src, size_t user_sz, size_t min_sz,
		    const char *name);
#define PMON_OPTS_CHECK(opts, type, v1_last)                                                       \
	((opts) ? pmon__opts_check((opts), (opts)->sz, pmon__offsetofend(type, v1_last),           \
				   sizeof(type), #type)                                            \
		: 0)
#define PMON_OPTS_COPY(dst, src, type, v1_last)                                                    \
	pmon__opts_copy((dst), sizeof(type), (src), (src) ? (src)->sz : 0,                         \
			pmon__offsetofend(type, v1_last), #type)
#define PMON_OPTS_HAS(opts, field) ((opts) && (opts)->sz >= pmon__opts_end(opts, field))
#define PMON_OPTS_GET(opts, field, fallback)                                                       \
	(PMON_OPTS_HAS(opts, field) ? (opts)->field : (fallback))
/* The same for a struct known to be there (no NULL test). */
#define PMON_OPTS_HAS_NN(opts, field) ((opts)->sz >= pmon__opts_end(opts, field))
#define PMON_OPTS_GET_NN(opts, field, fallback)                                                    \
	(PMON_OPTS_HAS_NN(opts, field) ? (opts)->field : (fallback))

/* The liveness rule of pmon_process_alive() (lib/util/process.c), for the
 * layers below lib/monitor. */
bool pmon__process_alive(pid_t pid);
/* Read a file holding one decimal integer. Return: 0 or -errno / -EINVAL. */
int pmon__read_long(const char *path, long *out);
/* strtoul-based parsing with full error checks. Return: 0 or -EINVAL/-ERANGE. */
int pmon__parse_u64(const char *s, int base, uint64_t *out);

/* Numbers in the C locale whatever the caller's setlocale() (lib/util/cnum.c).
 * pmon__strtod_c() parses like strtod() in "C"; pmon__c_locale_enter()
 * switches the calling thread to "C" for printf-family output and returns
 * the previous locale for pmon__c_locale_leave(). */
double pmon__strtod_c(const char *s, char **end);
locale_t pmon__c_locale_enter(void);
void pmon__c_locale_leave(locale_t prev);

/* The GNU build id (up to 20 bytes) of the ELF file at @path, from its
 * PT_NOTE segments (lib/util/elfnote.c); 0 when it has none, is not a
 * regular file (a FIFO never blocks) or cannot be read. The note parser
 * alone, over a segment of @n bytes aligned to @align, is for tests. */
size_t pmon__elf_build_id(const char *path, uint8_t id[20]);
size_t pmon__elf_note_build_id(const uint8_t *p, size_t n, size_t align, uint8_t id[20]);

/* Trace hooks for the rest of the library (lib/trace/trace.c): whether a
 * trace runs (a relaxed load is enough: a hook racing a start or stop is
 * recorded or not), and a record with a timestamp taken elsewhere (a
 * region's own TSC stamps). @kind: 1 begin, 2 end, 3 mark, 4 counter. */
extern int pmon__trace_on;
void pmon__trace_emit_at(unsigned kind, uint32_t channel, uint64_t tick, int64_t value);

/* Kernel text symbols of a kallsyms file (lib/util/ksyms.c), by address. */
struct pmon__ksym {
	uint64_t addr;
	const char *name; /* points into ->text */
};
struct pmon__ksyms {
	struct pmon__ksym *sym;
	size_t n;
	char *text;
};
/* Return: 0 (no symbols where kptr_restrict shows zeros), or -errno. */
int pmon__ksyms_load(const char *path, struct pmon__ksyms *k);
/* The symbol holding @ip, or NULL; *@end: where the next symbol starts. */
const struct pmon__ksym *pmon__ksyms_find(const struct pmon__ksyms *k, uint64_t ip, uint64_t *end);
void pmon__ksyms_free(struct pmon__ksyms *k);

/* pmon_idlist__parse() (pmon/monitor.h) for the layers below lib/monitor
 * (lib/util/idlist.c): "0-3,5" into a malloc()ed array; the same checks,
 * errors and detail. */
int pmon__idlist_parse(const char *s, long max, long **out, size_t *n);

/* sysfs PMU discovery (lib/event/pmu.c), under pmon_kernel_probe() and
 * pmon_kernel_core_pmus(). pmon__pmus_scan(): up to @max PMUs under
 * @sys/bus/event_source/devices, sorted by name, type -1 where unreadable;
 * returns how many. pmon__pmus_core(): the core PMUs among @pmus ("cpu",
 * then "cpu_core", "cpu_atom"), up to @max into @core; returns how many. */
struct pmon_pmu_desc;
size_t pmon__pmus_scan(const char *sys, struct pmon_pmu_desc *out, size_t max);
size_t pmon__pmus_core(const struct pmon_pmu_desc *pmus, size_t n, struct pmon_pmu_desc *core,
		       size_t max);

/* MSR access seam (lib/msr/msr.c): when set, pmon_msr_read()/_write() call
 * these instead of the device file, so tests can put a model of the hardware
 * (tests/unit/fake-msr.h: reserved bits fault, IA32_PMCx sign-extends) behind
 * every MSR user. NULL restores the device. Not thread-safe; tests only. */
struct pmon__msr_ops {
	int (*read)(void *ctx, int cpu, uint32_t addr, uint64_t *value);
	int (*write)(void *ctx, int cpu, uint32_t addr, uint64_t value);
	void *ctx;
};
void pmon__msr_set_ops(const struct pmon__msr_ops *ops);

/* ---- tools pmon runs (lib/util/spawn.c, pmon_spawn()) ---- */
struct pmon_spawn_opts;
/* Start @argv without waiting: standard output into @o->stdout_path, else
 * onto @out_fd (>= 0), standard error onto @out_fd (>= 0). Return: 0 with
 * *@pid, or -errno (detail set). */
int pmon__spawn_start(char *const argv[], const struct pmon_spawn_opts *o, int out_fd, pid_t *pid);
/* Wait for @pid (EINTR retried); with @timeout_s > 0 kill it past that.
 * Return: 0 with *@status (if not NULL), -ETIMEDOUT or -errno. */
int pmon__spawn_wait(pid_t pid, int *status, double timeout_s);

/* ---- the target (lib/counter/target.c) ----
 * struct pmon_target is opaque to callers (pmon/counter.h); the library
 * reads its fields here. Built only by the pmon_target__new*() constructors,
 * never changed after. */
struct pmon_target {
	pid_t pid; /* > 0: that process; 0: the caller; -1: none */
	pid_t *tids; /* explicit threads (override pids and pid) */
	size_t ntids;
	pid_t *pids; /* processes, each with all its threads; combine with cpus */
	size_t npids;
	bool system_wide; /* every task on the CPUs (pid -1) */
	int *cpus; /* CPUs to count on; NULL: all online (system-wide) or any */
	size_t ncpus;
	char *cgroup; /* a cgroup directory (perf's cgroup mode), or NULL */
};
/* @user (NULL: all false) checked and copied into @out. Return: 0 or -EINVAL. */
struct pmon_open_opts;
int pmon__open_opts_get(const struct pmon_open_opts *user, struct pmon_open_opts *out);

/* Well-formed UTF-8 (lib/util/utf8.c). Length of the character at @p
 * (1-4), 0 when it is not one (overlong, a surrogate, past U+10FFFF, cut
 * short: The Unicode Standard, 3.9, table 3-7). */
size_t pmon__utf8_len(const unsigned char *p);
/* At most @max bytes of @s as XML text: & < > " escaped, control bytes,
 * DEL and bytes that are not UTF-8 as '?'. */
void pmon__fputs_xml(FILE *out, const char *s, size_t max);
/* @s (NULL: "?") as a JSON string, quotes included: escapes for quote,
 * backslash and control bytes, U+FFFD for a byte that is not UTF-8. */
void pmon__fputs_json(FILE *out, const char *s);

/* @a + @b, at most UINT64_MAX: counts a file states (LOST records) may be
 * anything, and a total must not wrap to a small number. */
static inline uint64_t pmon__sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

#pragma GCC visibility pop

/* The one logged MSR write (lib/msr/msr.c), used by the MSR counting
 * backend and rdt --msr: each write is recorded (what pmon changed, shown
 * and restored from), then done. With @max > 0 the log keeps the most
 * recent: past @max entries the oldest are dropped down to @max / 4, and
 * counted in @dropped. */
struct pmon_msr_write_rec;
struct pmon__msr_log {
	struct pmon_msr_write_rec *rec;
	size_t n, cap, dropped, max;
};
int pmon__msr_log_write(struct pmon__msr_log *log, const char *device, int cpu, uint32_t addr,
			uint64_t v, bool restore);

#endif
