/* SPDX-License-Identifier: MIT */
/* pmon stat's backends (cli/cmd-stat.c, cli/stat-msr.c). */
#ifndef PMON_CLI_STAT_H
#define PMON_CLI_STAT_H

#include <stdio.h>
#include <sys/types.h>

struct pmon_evlist;

/* Run @argv with @l counted through MSRs on @cpus (all online if none);
 * returns the exit code (the command's, or a CLI_* code). */
int stat_msr_backend(FILE *f, char **argv, const struct pmon_evlist *l, const int *cpus,
		     size_t ncpus, const char *device, const char *cpuid_file);

/* --backend msr --cleanup: put back the registers a killed pmon left
 * programmed, from its state file. Returns a CLI_* code. */
int stat_msr_cleanup(FILE *f, const char *device);

#endif
