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

#endif
