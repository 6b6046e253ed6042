// SPDX-License-Identifier: MIT
/*
 * pmon stat --backend msr: count a command's run by programming the
 * architectural counters through MSRs (lib/msr), for machines where
 * perf_event is unavailable. System-wide on the chosen CPUs, like LIKWID's
 * direct mode; every register touched is restored, on exit and after a
 * signal, and the writes are listed. While programmed, a state file says how
 * to put them back: after a SIGKILL, --cleanup does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "stat.h"
#include <pmon/pmon.h>

static void print_writes(FILE *f, const struct pmon_msr_counting *m)
{
	size_t n;
	const struct pmon_msr_write_rec *w = pmon_msr_counting__writes(m, &n);
	bool restoring = false;

	fprintf(f, " MSR writes, in order:\n");
	for (size_t i = 0; i < n; i++) {
		const struct pmon_msr_info *info = pmon_msr_by_addr(w[i].addr);
		if (w[i].restore && !restoring) {
			fprintf(f, " restored:\n");
			restoring = true;
		}
		fprintf(f, "   CPU%d %-24s %#06" PRIx32 " <- %#" PRIx64 "\n", w[i].cpu,
			info ? info->name : "?", w[i].addr, w[i].value);
	}
}

int stat_msr_cleanup(FILE *f, const char *device)
{
	char path[4096];

	return cli_msr_cleanup(
		f, "pmon stat",
		pmon_msr_state_path(device, ".pmon-state", "msr-state", path, sizeof(path)));
}

int stat_msr_backend(FILE *f, char **argv, const struct pmon_evlist *l, const int *cpus_in,
		     size_t ncpus_in, const char *device, const char *cpuid_file)
{
	struct pmon_cpu_info ci;
	struct pmon_msr_counting *m = NULL;
	uint64_t values[16];
	int *cpus = NULL, err, rc;
	bool exec_failed = false;
	size_t ncpus = ncpus_in;
	long wd = 0;
	FILE *w;

	if (!cli_cpu_decode(cpuid_file, &ci))
		return CLI_USAGE;
	if (ncpus_in) {
		cpus = malloc(ncpus * sizeof(*cpus));
		if (cpus)
			memcpy(cpus, cpus_in, ncpus * sizeof(*cpus));
	} else if ((err = pmon_cpus_online(NULL, &cpus, &ncpus))) {
		/* The online list, not 0..N-1: CPUs may be offline in between. */
		cli_error("--backend msr: %s", pmon_errdetail());
		return err == -ENOMEM ? CLI_FAIL : CLI_UNSUPPORTED;
	}
	if (!cpus) {
		cli_error("out of memory");
		return CLI_FAIL;
	}
	/* A hybrid part's core types have their own counters: each CPU is
	 * described by its own CPUID (a dump stands for every CPU). */
	struct pmon_cpu_info *per = NULL;
	const struct pmon_cpu_info **perp = NULL;
	if (!cpuid_file && ci.hybrid.hybrid) {
		per = calloc(ncpus, sizeof(*per));
		perp = calloc(ncpus, sizeof(*perp));
		for (size_t i = 0; per && perp && i < ncpus; i++) {
			struct pmon_cpuid *snap = pmon_cpuid__new_cpu(cpus[i]);

			if (snap && !pmon_cpu_decode(snap, &per[i]))
				perp[i] = &per[i];
			pmon_cpuid__free(snap);
			if (!perp[i]) {
				cli_error("--backend msr: cannot read CPUID of CPU %d: %s", cpus[i],
					  pmon_errdetail()[0] ? pmon_errdetail() : strerror(errno));
				free(per);
				free(perp);
				free(cpus);
				return CLI_UNSUPPORTED;
			}
		}
		if (!per || !perp) {
			cli_error("out of memory");
			free(per);
			free(perp);
			free(cpus);
			return CLI_FAIL;
		}
	}
	w = fopen("/proc/sys/kernel/nmi_watchdog", "re");
	if (w) {
		if (fscanf(w, "%ld", &wd) != 1)
			wd = 0;
		fclose(w);
	}
	char state[4096];
	struct pmon_msr_counting_opts mo = { .sz = sizeof(mo),
					     .state_file = pmon_msr_state_path(
						     device, ".pmon-state", "msr-state", state,
						     sizeof(state)),
					     .cpu_info = perp };
	m = pmon_msr_counting__start_opts(device, &ci, l, cpus, ncpus, wd > 0, &mo);
	err = m ? 0 : -errno;
	free(per);
	free(perp);
	if (err) {
		cli_error("--backend msr: %s", pmon_errdetail());
		free(cpus);
		return err == -EBUSY || err == -EOPNOTSUPP || err == -ENOENT || err == -EACCES ||
				err == -EIO
			? CLI_UNSUPPORTED
			: CLI_USAGE;
	}
	struct pmon_run *run = pmon_run__new(argv, NULL, NULL);
	err = run ? pmon_run__start(run, NULL) : -errno;
	if (err) {
		cli_error("%s", pmon_errdetail());
		exec_failed = run && pmon_run__exit_code(run) == 127;
	} else {
		pmon_run__wait(run);
	}
	rc = run ? pmon_run__exit_code(run) : CLI_FAIL;
	pmon_run__free(run);
	/* Stop and restore whatever happened to the command. */
	int serr = pmon_msr_counting__stop(m, values);
	int rerr = pmon_msr_counting__restore(m);
	if (!err && !serr) {
		fprintf(f,
			"\n Performance counter stats for '%s' (MSR backend: every task on %zu "
			"CPU(s), "
			"IA32_PERFEVTSELx programmed directly):\n\n",
			argv[0], ncpus);
		for (size_t i = 0; i < pmon_evlist__count(l); i++)
			if (pmon_msr_counting__lost(m, i))
				fprintf(f, "%20s       %s\n", "<not counted>",
					pmon_evlist__event(l, i)->name);
			else
				fprintf(f, "%20" PRIu64 "       %s\n", values[i],
					pmon_evlist__event(l, i)->name);
		fputc('\n', f);
		for (size_t i = 0; i < pmon_evlist__count(l); i++)
			if (pmon_msr_counting__lost(m, i))
				cli_warn("'%s' not counted: %s", pmon_evlist__event(l, i)->name,
					 pmon_msr_counting__lost(m, i));
	}
	print_writes(f, m);
	if (serr)
		cli_error("--backend msr: reading the counters: %s", pmon_errdetail());
	if (rerr)
		cli_error("--backend msr: RESTORE FAILED, check the registers listed: %s",
			  pmon_errdetail());
	pmon_msr_counting__free(m);
	free(cpus);
	if (err)
		return exec_failed ? 127 : CLI_FAIL;
	if (serr || rerr)
		return CLI_FAIL;
	return rc;
}
