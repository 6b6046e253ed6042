/* SPDX-License-Identifier: MIT */
/* Shared inside lib/report: the reader and the disassembler behind pmon_annotate(). */
#ifndef PMON_REPORT_REPORT_H
#define PMON_REPORT_REPORT_H

#include <stdio.h>
#include <elfutils/libdwfl.h>
#include <pmon/sample.h>

/* One line of a JIT's /tmp/perf-PID.map ("START SIZE name", hex). */
struct pmon__jit_sym {
	uint64_t start, end;
	char *name;
};
/* Parse a perf map from @f (at most 4 Mi lines; malformed lines skipped),
 * sorted by start. Return: the number of entries in *@out (the caller
 * frees each name and the array). */
size_t pmon__perf_map_parse(FILE *f, struct pmon__jit_sym **out);
/* The name of the entry holding @ip, or NULL. */
const char *pmon__perf_map_find(const struct pmon__jit_sym *s, size_t n, uint64_t ip);

/* A module's sized symbols sorted by address (symindex.c); zero it to start. */
struct pmon__symindex {
	struct pmon__sym *sym;
	GElf_Addr *maxend; /* the highest end of sym[0..i] */
	GElf_Addr *labels; /* sizeless global symbols, sorted */
	GElf_Addr *edge; /* where elfutils' answer may change, sorted */
	struct pmon__symgap {
		const char *name;
		bool asked;
	} * gap; /* elfutils' answer below edge[0], between edges, above the last */
	size_t n, nlabels, nedge;
	unsigned asked; /* answers taken from elfutils before the index was built */
	bool built;
	unsigned long fallbacks; /* times elfutils was asked (for the tests) */
};
/* The name of @mod's symbol holding Dwfl address @a, as dwfl_module_addrinfo()
 * names it, or NULL; builds @ix on first use. */
const char *pmon__symindex_find(struct pmon__symindex *ix, Dwfl_Module *mod, GElf_Addr a);
/* Release @ix (it stays usable: lookups then ask elfutils). */
void pmon__symindex_free(struct pmon__symindex *ix);

/* The Dwfl address of ELF address 0 in @mod (0 for an executable). */
uint64_t pmon__module_bias(Dwfl_Module *mod);

/* The samples of one symbol per address, for pmon_annotate() (annotate.c). */
struct pmon__hits {
	struct ctx *x; /* the reader's state: owns @mod */
	Dwfl_Module *mod; /* the file holding most of the symbol's samples */
	uint64_t *addr, *samples, *period; /* per Dwfl address in @mod */
	size_t n;
};

/*
 * Read the recording at @path counting the samples of @symbol (NULL: the
 * hottest symbol); fill @a's symbol, dso and total and @h.
 * Return: 0 (release @h with pmon__hits_release()) or pmon_annotate()'s
 * errors, with @h released.
 */
int pmon__annotate_hits(const char *path, const char *symbol, const struct pmon_report_opts *opts,
			struct pmon_annotation *a, struct pmon__hits *h);
void pmon__hits_release(struct pmon__hits *h);

/*
 * Fill @a->insn with the instructions of the symbol of @mod that holds Dwfl
 * address @inside (start, size and bytes from the ELF file, Capstone's Intel
 * syntax, source lines from the line table when there is one).
 * Return: 0 or -errno with the detail set.
 */
int pmon__disassemble(Dwfl_Module *mod, uint64_t inside, struct pmon_annotation *a);

/* What an export says of its one event (export.c): the stack event's name,
 * whether its periods are nanoseconds, and the unit of a stack's weight. */
const char *pmon__export_event(const struct pmon_report *r);
bool pmon__export_ns(const struct pmon_report *r);
/* Which CPUs a system-wide recording sampled (export.c): "all CPUs", or
 * record -C's "CPU 0", "CPUs 0,2-3". */
const char *report_cpus(const struct pmon_report *r, char *buf, size_t len);

/* DWARF unwinding of sampled user stacks (unwind.c): one per process. */
struct pmon__unw;
struct pmon__unw *pmon__unw_new(pid_t pid);
/* Report @path loaded at @base (the mapping's start minus its file offset). */
int pmon__unw_report(struct pmon__unw *u, const char *path, uint64_t base);
/* After the last report: ready to unwind. Return: 0 or -errno. */
int pmon__unw_finish(struct pmon__unw *u);
/*
 * The return addresses of one sample, leaf (its ip) first: @perf_regs in
 * PMON_REGS_USER_X86 order, @stack the @size bytes copied from its sp.
 * Return: how many of @max went into @pcs.
 */
int pmon__unw_frames(struct pmon__unw *u, const uint64_t *perf_regs, const uint8_t *stack,
		     uint64_t size, uint64_t *pcs, int max);
void pmon__unw_free(struct pmon__unw *u);

/*
 * The stacks as pprof's profile.proto holds them (sites.c builds them
 * while the stacks are named, export-pprof.c writes them): each distinct
 * address once per mapping, with the functions and source lines there
 * (several where functions are inlined, innermost first), and the
 * distinct stacks of those locations, per thread in a system-wide
 * recording. Indexes are 0-based; a location's @map is 1-based (0: none).
 */
struct pmon__sites {
	struct pmon__site_map {
		uint64_t start, limit, offset;
		char *file; /* the DSO's path, "[kernel.kallsyms]", "[vdso]" */
		char bid[41]; /* hex, "" when unknown */
		bool named; /* pmon named its functions (and lines where DWARF has them) */
	} * maps;
	struct pmon__site_fn {
		char *name, *file; /* file: the source file, "" when unknown */
		int64_t start_line;
	} * fns;
	struct pmon__site_line {
		uint32_t fn;
		int64_t line;
	} * lines;
	struct pmon__site_loc {
		uint64_t addr;
		uint32_t map; /* 1-based */
		uint32_t line, nline; /* into ->lines */
	} * locs;
	struct pmon__site_stack {
		uint32_t *loc; /* outermost caller first */
		uint32_t depth;
		uint32_t pid, tid; /* with ->threads */
		char comm[16];
		uint64_t samples, period;
	} * stacks;
	size_t nmaps, nfns, nlines, nlocs, nstacks;
	size_t capmaps, capfns, caplines, caplocs;
	bool threads; /* system-wide: stacks per thread, with pid, tid and comm */
	struct counter *keys; /* while built: maps, functions, locations by key */
};
void pmon__sites_free(struct pmon__sites *s);

#endif
