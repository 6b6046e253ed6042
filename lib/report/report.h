/* SPDX-License-Identifier: MIT */
/* Shared inside lib/report: the disassembler behind pmon_annotate(). */
#ifndef PMON_REPORT_REPORT_H
#define PMON_REPORT_REPORT_H

#include <elfutils/libdwfl.h>
#include <pmon/sample.h>

/* The Dwfl address of ELF address 0 in @mod (0 for an executable). */
uint64_t pmon__module_bias(Dwfl_Module *mod);

/*
 * Fill @a->insn with the instructions of the symbol of @mod that holds Dwfl
 * address @inside (start, size and bytes from the ELF file, Capstone's Intel
 * syntax, source lines from the line table when there is one).
 * Return: 0 or -errno with the detail set.
 */
int pmon__disassemble(Dwfl_Module *mod, uint64_t inside, struct pmon_annotation *a);

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

#endif
