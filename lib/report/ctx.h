/* SPDX-License-Identifier: MIT */
/*
 * The state of one report, shared by the files of lib/report that build
 * it: maps.c (processes and their memory maps), symbols.c (addresses to
 * symbols, lines, inlines), histogram.c (the samples by symbol, line or
 * DSO), callgraph.c (the call chains as stacks of frames) and report.c
 * (the read: records from sample/reader.h into these). Private.
 */
#ifndef PMON_REPORT_CTX_H
#define PMON_REPORT_CTX_H

#include <stdbool.h>
#include <stdint.h>

#include <elfutils/libdwfl.h>

#include "internal.h"
#include "report/report.h"
#include <pmon/sample.h>

struct map {
	uint32_t pid;
	uint64_t start, end, pgoff;
	int file; /* index into files */
};

/* One process's maps (maps.c): the indexes of its own in ctx.maps,
 * ascending, and its forks: from epoch fork[k].epoch on, it is a new
 * process that starts with what fork[k].ppid had mapped just before. */
struct proc_maps {
	uint32_t pid;
	bool used; /* a slot of ctx.procs' open addressing */
	uint32_t *idx;
	size_t n, cap;
	struct proc_fork {
		uint32_t epoch, ppid;
	} * fork;
	size_t nfork, capfork;
	long unw; /* its DWARF unwinder in ctx.unw, -1: none yet */
	/* idx[0..nsorted) again, by start (then index), and the largest end
	 * up to each: a lookup is a binary search, not a scan of them all */
	uint32_t *by_start;
	uint64_t *maxend;
	size_t nsorted, capsorted;
};

struct file {
	char *path;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct pmon__symindex syms; /* @mod's symbols by address, built on first use */
	bool tried;
	uint8_t bid[20]; /* the build id the kernel recorded, if it did */
	uint8_t bidlen;
};

struct sym_cache { /* (file, offset) -> symbol name, address, line; open addressing */
	int *file;
	uint64_t *off;
	char **name;
	uint64_t *addr; /* in the module's Dwfl address space */
	char **line; /* "file.c:42", looked up on first use */
	char **inl; /* functions inlined there, innermost first, tab-separated; on first use */
	size_t cap, n;
};

struct counter { /* string -> samples, period, order of first use */
	char **key;
	uint64_t *samples, *period;
	uint32_t *index;
	size_t cap, n;
};

/* Where an address resolved to. */
struct loc {
	const char *sym, *dso;
	int file; /* -1: not an ELF file on disk */
	size_t slot; /* its sym_cache slot where file >= 0 */
	long map; /* index into ctx.maps, -1: in none (the kernel's, unknown) */
};

struct jit_map { /* /tmp/perf-PID.map of one process, sorted by start */
	uint32_t pid;
	struct pmon__jit_sym *s;
	size_t n;
};

struct file_ksym {
	uint64_t start, end;
	char *name;
};

/* pmon_annotate(): samples by (file, Dwfl address), open addressing. */
struct hit_tab {
	struct hit {
		uint64_t addr, samples, period;
		int file; /* -1: an empty slot */
	} * e;
	size_t cap, n;
};

/* Each thread's command, as the last COMM record said (open addressing by
 * tid; tid 0 never stored). Zero it to start; free ->e. */
struct comm_tab {
	struct comm {
		uint32_t tid;
		char name[16]; /* TASK_COMM_LEN */
	} * e;
	size_t n, cap;
	char unknown[16];
};

struct pmon__sites;

struct ctx {
	struct jit_map *jit;
	size_t njit, capjit;
	struct map *maps;
	size_t nmaps, capmaps;
	struct file *files;
	size_t nfiles, capfiles;
	struct sym_cache sc;
	struct counter agg, frames;
	uint32_t *vis; /* vis[E]: the maps visible after E MMAP2/FORK records */
	size_t nvis, capvis;
	uint32_t *fidx; /* files by (path, build id): index + 1, 0 empty */
	size_t capfidx;
	struct proc_maps *procs; /* by pid, open addressing */
	size_t nprocs, capprocs;
	uint32_t *fmark, fgen; /* the files one walk over a process's maps has seen */
	size_t capfmark;
	enum pmon_report_sort sort;
	uint64_t sample_type, regs_user;
	struct pmon_report *r;
	const char *debug_dir;
	bool inlines; /* expand inlined functions in the stacks */
	bool no_stacks; /* opts->no_stacks */
	char *dipath; /* elfutils' debuginfo path with debug_dir in it */
	char *dipath_dir; /* debug_dir made absolute */
	Dwfl_Callbacks cb;
	unsigned nstale; /* files whose build id is not the recorded one */
	char stale_first[300];
	struct file_ksym *fk; /* the recording's kernel symbols, by start */
	size_t nfk, capfk;
	/* Where the recording has none (kernel.c): this machine's kallsyms,
	 * a kallsyms file (--kallsyms, perf's build-id cache), or nothing. */
	enum { PMON__KSYMS_PROC, PMON__KSYMS_FILE, PMON__KSYMS_NONE } kernel_from;
	struct pmon__ksyms kfile;
	char kernel_note[300]; /* why its addresses are not named */
	const char *symfs; /* --symfs: the recorded paths are under it */
	const char *kallsyms; /* --kallsyms: the kernel's symbols */
	struct pmon__tp *tp; /* tracepoint formats (tracepoint.c), or NULL */
	uint8_t *vdso; /* the vDSO image pmon's recording keeps, or NULL */
	size_t vdso_len;
	/* pmon_annotate(): the samples of one symbol, by (file, address) */
	const char *want;
	struct hit_tab hits;
	const char *want_where; /* "kernel" or "JIT" where the symbol is not in a file */
	struct ev_id { /* a sample's identifier -> its event (the last
			* PMON_RECORD_EVENT naming it); open addressing, id 0 empty */
		uint64_t id;
		unsigned ev;
	} * evids;
	size_t nevids, capevids;
	const char *stack_event_name; /* opts->event */
	unsigned stack_ev; /* the event of the stacks and annotations */
	bool stack_ev_found;
	struct unw_proc { /* DWARF unwinders, one per process, rebuilt when its maps grow */
		uint32_t pid;
		struct pmon__unw *u;
		bool stale;
	} * unw;
	size_t nunw, capunw;
	struct comm_tab comms; /* the threads' commands (system-wide: pprof's labels) */
	bool threads; /* system-wide: the stacks are kept per thread */
	/* Each compile unit's out-of-line functions by address, built on a
	 * unit's first lookup (report_scopes_at()), keyed "module unit". */
	struct dw_unit *units;
	size_t nunits, capunits;
	struct counter unit_keys;
};

/* The out-of-line function holding @pc (module-relative) in compile unit
 * @cu of @mod into @fn (*@found), and the inlined subroutines around @pc
 * in it into @in, outermost first, at most @max: what dwarf_getscopes()
 * finds (but the function itself, not an inlined one's abstract origin),
 * without its walk of the whole unit per address, which was quadratic in
 * a unit of 50,000 functions. Return: how many in @in, or -ENOMEM. */
int report_scopes_at(struct ctx *x, Dwfl_Module *mod, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *fn,
		     bool *found, Dwarf_Die *in, int max);
void report_units_free(struct ctx *x);

static inline uint64_t pmon__fnv(const void *p, size_t n, uint64_t h)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h;
}

static inline uint64_t pmon__mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 33);
}

struct leaf {
	uint64_t sid, ip, samples, period; /* samples == 0: an empty slot */
	uint32_t pid, epoch;
};

struct leaf_tab {
	struct leaf *e;
	size_t cap, n;
};

static inline uint64_t pmon__leaf_hash(uint64_t sid, uint32_t pid, uint32_t epoch, uint64_t ip)
{
	return pmon__mix64(ip ^ pmon__mix64(sid ^ ((uint64_t)pid << 32 | epoch)));
}

/*
 * The distinct raw call chains, as a tree: a node is (parent, address),
 * stored once, so chains share their callers; the first three levels are
 * the sample identifier, (pid, epoch) and the thread (0 unless the
 * recording is system-wide: pprof's labels), the rest the chain from its
 * outermost caller to its leaf. A chain is the id of its last node, and
 * the samples that had it are counted there. Chains differ mostly near the
 * leaf (the interrupted instruction, an interrupt's kernel path): a flat
 * copy of each distinct chain made the folded export's memory grow with
 * them (issue #16).
 */
struct cnode {
	uint64_t addr;
	uint32_t parent; /* 0: a root (node 0 is not used) */
	uint32_t depth; /* 0 for a root */
};

struct stk_tab {
	struct cnode *n;
	uint64_t *samples, *period; /* per node: the chains that end there */
	uint32_t nn, capn; /* nodes used (with node 0), allocated */
	uint32_t *idx; /* open addressing over nodes by (parent, address); 0: empty */
	size_t capi;
	size_t nstacks; /* nodes with samples */
};

#define STACK_MAX_FRAMES 1024

/* ---- maps.c: processes and their memory maps ---------------------------- */

/* Process @pid maps [@start, @start + @len) of @file at @pgoff. Return: 0 or -ENOMEM. */
int pmon__maps_add(struct ctx *x, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		   const char *file, const uint8_t *bid, uint8_t bidlen);
/* From the next epoch on, process @pid is a new one that starts with what
 * @ppid has mapped (a fork, as perf's machine__process_fork_event(): an
 * earlier process of that pid is gone; nothing when they are one, a
 * thread). The maps are shared, not copied. Return: 0 or -ENOMEM. */
int pmon__maps_fork(struct ctx *x, uint32_t pid, uint32_t ppid);
/* The map of process @pid at @epoch that holds @ip (the latest mapping of
 * an address wins), or -1. */
long pmon__maps_find(struct ctx *x, uint32_t pid, uint64_t ip, uint32_t epoch);
void pmon__maps_free(struct ctx *x);
/* One more epoch: vis[E] is the number of maps the first E MMAP/MMAP2/FORK
 * records made. Return: 0 or -ENOMEM. */
int pmon__maps_epoch(struct ctx *x);
/* The user frames of a DWARF-mode sample of @pid, leaf first (up to @max). */
int pmon__maps_unwind(struct ctx *x, uint32_t pid, const uint64_t *regs, const uint8_t *stack,
		      uint64_t size, uint64_t *pcs, int max);

/* ---- symbols.c: addresses to names -------------------------------------- */

void pmon__file_close(struct file *f);
int pmon__file_ksym_cmp(const void *a, const void *b);
/* A kernel address as the start of its symbol (chains merge by symbol). */
uint64_t pmon__kernel_canonical(const struct ctx *x, uint64_t ip);
/* Where @ip of process @pid lands at @epoch: symbol, DSO, and file. */
void pmon__locate(struct ctx *x, uint32_t pid, uint64_t ip, uint32_t epoch, struct loc *l);
/* "file.c:42" for a located address, or NULL. */
const char *pmon__srcline(struct ctx *x, const struct loc *l);
const char *pmon__base_name(const char *path);
/* The frame indexes of a located address (its function, then what is
 * inlined there when asked) into @out. Return: how many, or -ENOMEM. */
int pmon__frames_of(struct ctx *x, const struct loc *l, uint32_t *out, int max);
/* The offset of @ip (located at @l) from the start of its symbol, as perf
 * script's symoff: false where the symbol's start is not known (JIT code,
 * no symbol). */
bool pmon__symoff(struct ctx *x, const struct loc *l, uint64_t ip, uint64_t *off);

/* ---- demangle.c: C++ names ----------------------------------------------- */

/* @name demangled as perf prints it ("_ZN3foo3barEi" -> "foo::bar"),
 * malloc()ed; NULL where it is not a mangled name or no demangler is
 * installed. */
char *pmon__demangle(const char *name);
/* A demangled name cut as perf prints it: no parameters, no template
 * function's return type (in place). */
void pmon__demangle_short(char *d);

/* ---- kernel.c: which kernel symbols, perf's build-id cache -------------- */

struct pmon__rec_reader;
/* Choose what names @rd's kernel addresses (x->kernel_from), after the
 * recording's own symbols are loaded; @kallsyms: the user's file or NULL.
 * Return: 0, or -errno with the detail set (--kallsyms unreadable). */
int pmon__kernel_pick(struct ctx *x, const struct pmon__rec_reader *rd, const char *kallsyms);
/* The GNU build id among the ELF notes @b (as /sys/kernel/notes holds
 * them) into @id. Return: its size, 0 if none. */
size_t pmon__notes_build_id(const uint8_t *b, size_t n, uint8_t id[20]);
/* perf's cached copy of the file with build id @bid as @leaf ("elf",
 * "kallsyms", "vdso", "debug") into @out: true if it is there. */
bool pmon__cache_file(const uint8_t *bid, size_t bidlen, const char *leaf, char *out, size_t n);

/* ---- tracepoint.c: RAW samples decoded by their formats ----------------- */

struct pmon__tp;
/* The formats of perf.data's tracing data; NULL if none could be parsed. */
struct pmon__tp *pmon__tp_new_perf(const uint8_t *data, size_t n);
/* One tracepoint's format text (tracefs' events/SYS/NAME/format) into *@tp
 * (made on first use). Return: 0 or -ENOMEM. */
int pmon__tp_add_format(struct pmon__tp **tp, const char *sys, const char *fmt, size_t n);
/* A RAW record as its event's print format prints it (perf script's
 * trace field), valid until the next call; NULL where no format fits. */
const char *pmon__tp_print(struct pmon__tp *t, const void *raw, uint32_t size, int cpu);
void pmon__tp_free(struct pmon__tp *t);

/* ---- histogram.c: the samples by symbol, line or DSO -------------------- */

int pmon__counter_add(struct counter *c, const char *key, uint64_t samples, uint64_t period,
		      uint32_t *index);
void pmon__counter_free(struct counter *c);
/* The event of a sample identifier. */
unsigned pmon__event_of(const struct ctx *x, uint64_t sid);
/* The events a (samples, period sum) pair of event @ev stands for. */
uint64_t pmon__period_of(const struct ctx *x, unsigned ev, uint64_t samples, uint64_t period);
/* Name every distinct sampled address once and count the report's entries
 * (or, for pmon_annotate(), the wanted symbol's addresses). */
int pmon__name_leaves(struct ctx *x, struct leaf_tab *t);
/* x->agg into @r's entries, sorted. */
int pmon__build_entries(struct ctx *x, struct pmon_report *r);
int pmon__hit_add(struct hit_tab *t, int file, uint64_t addr, uint64_t samples, uint64_t period);

/* ---- callgraph.c: call chains as stacks of frames ----------------------- */

int pmon__stk_add(struct stk_tab *t, uint64_t sid, uint32_t pid, uint32_t tid, uint32_t epoch,
		  const uint64_t *a, uint32_t n, uint64_t samples, uint64_t period);
/* The addresses of chain @id into @a (STACK_MAX_FRAMES), leaf first; its
 * sid, pid, tid and epoch. */
uint32_t pmon__stk_chain(const struct stk_tab *t, uint32_t id, uint64_t *a, uint64_t *sid,
			 uint32_t *pid, uint32_t *tid, uint32_t *epoch);
void pmon__stk_free(struct stk_tab *t);
/* The distinct stacks of the stack event into x->r, outermost caller
 * first, and their addresses into x->r->sites. */
int pmon__name_stacks(struct ctx *x, struct stk_tab *t, bool callchains);

/* ---- sites.c: the stacks' addresses, mappings and lines (pprof) -------- */

/* A new, empty set of sites, or NULL. */
struct pmon__sites *pmon__sites_new(void);
/* The location of @addr, located at @l (pmon__locate()), in @s: made
 * once per (mapping, address), with its lines. Return: its index, or
 * -ENOMEM. */
long pmon__sites_loc(struct ctx *x, struct pmon__sites *s, uint64_t addr, const struct loc *l);

/* ---- view.c: threads' commands, and perf report's views ---------------- */

struct pmon__record;
struct view;
/* A COMM record names its thread; a FORK's child takes its parent's name
 * until its own COMM. Other records: nothing. Return: 0 or -ENOMEM. */
int pmon__comm_record(struct comm_tab *t, const struct pmon__record *rec);
/* @tid's command, else its process's, else ":TID" (valid until the next call). */
const char *pmon__comm_of(struct comm_tab *t, uint32_t pid, uint32_t tid);
/* Do @o ask for a view (sort keys, filters, children)? */
bool pmon__view_wanted(const struct pmon_report_opts *o);
/* pmon_report_read() of a view: the entries keyed, filtered and counted
 * as @o says. Return: 0, -EINVAL (a bad key, list or range: detail), or
 * pmon_report_read()'s errors. */
int pmon__view_read(const char *path, const struct pmon_report_opts *o, struct pmon_report *r);
/* A live view (live.c): no recording, the records handed over one by one
 * in time order, every map seen so far visible to each sample. The
 * totals go into @r (the caller's, until pmon__view_live_free()); each
 * entry gets its process where pid is no key. NULL with errno. */
struct view *pmon__view_live_new(const struct pmon_report_opts *o, struct pmon_report *r);
/* New keys and filters (a zoom): the counts so far are dropped, not the
 * maps. Return: 0 or -EINVAL (detail). */
int pmon__view_live_set(struct view *v, const struct pmon_report_opts *o);
struct ctx *pmon__view_ctx(struct view *v);
/* One decoded record; a sample that passed the filters is located into
 * @l (@l->file stays -1 for any other). Return: 0 or -ENOMEM. */
int pmon__view_live_record(struct view *v, const struct pmon__record *rec, struct loc *l);
/* The entries counted since the last take into @out (zeroed by the
 * caller), sorted; the counts start again. Return: 0 or -ENOMEM. */
int pmon__view_live_take(struct view *v, struct pmon_report *out);
void pmon__view_live_free(struct view *v);

/* ---- report.c: a walk over the records in file order (script.c) -------- */

struct pmon__record;
/* Open @path: @x initialised for @r (zeroed: the header and events go
 * there), the kernel symbols loaded. Return: the reader, or NULL with
 * errno (the detail set). */
struct pmon__rec_reader *pmon__report_open(const char *path, const struct pmon_report_opts *o,
					   struct pmon_report *r, struct ctx *x);
/* Apply an ordered record (maps, forks, events) to @x. Return: 0 or -errno. */
int pmon__report_ordered(struct ctx *x, const struct pmon__record *rec);
/* Free the reader and @x (not @r). */
void pmon__report_close(struct pmon__rec_reader *rd, struct ctx *x);
/* @x for records that come without a recording (a live view): this
 * machine's kernel symbols. Return: 0 or -ENOMEM; pmon__report_fini()
 * frees @x either way. */
int pmon__report_init(struct ctx *x, struct pmon_report *r, const struct pmon_report_opts *o);
void pmon__report_fini(struct ctx *x);

#endif
