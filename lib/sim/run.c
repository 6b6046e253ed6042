// SPDX-License-Identifier: MIT
/*
 * The simulation runner (include/pmon/sim.h, pmon_sim__run()): a command
 * run under valgrind's callgrind with a given cache geometry, waited for
 * (with a progress callback), and what callgrind wrote per process parsed
 * (lib/sim/callgrind.c). The engine of `pmon simulate` and `pmon stat
 * --simulate`; the tool parses options and prints. valgrind is started
 * through the one spawn helper (lib/util/spawn.c).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include <pmon/pmon.h>

#define MAX_FILE (1ULL << 30) /* a callgrind file larger than this is refused */
#define SIM_CALLERS "50" /* callgraph: callers kept apart per function (deeper chains merge) */
#define MAX_LOG (1u << 20) /* valgrind's messages kept */

static volatile sig_atomic_t got_sig;
static volatile pid_t child_pid;

/*
 * A signal typed at the terminal reaches the whole process group, so valgrind
 * has it too: it stops the program, writes what it gathered and dies with
 * the same signal. One sent to pmon alone (kill PID: SI_USER) is passed on,
 * once. Not pmon_child__forward_signals(): it passes on every signal, so
 * valgrind would get a Ctrl-C twice, the second while it writes its output.
 */
static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (!got_sig && child_pid > 0 && si && si->si_code != SI_KERNEL)
		kill(child_pid, sig);
	got_sig = sig;
}

static int cmp_pid(const void *a, const void *b)
{
	uint32_t x = pmon_callgrind__pid(*(struct pmon_callgrind *const *)a);
	uint32_t y = pmon_callgrind__pid(*(struct pmon_callgrind *const *)b);

	return (x > y) - (x < y);
}

/* The whole of the regular file @path (at most MAX_FILE bytes). */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	struct stat st;
	char *buf = NULL;

	if (!f)
		return NULL;
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > MAX_FILE) {
		fclose(f);
		errno = EFBIG;
		return NULL;
	}
	if ((buf = malloc((size_t)st.st_size + 1))) {
		*len = fread(buf, 1, (size_t)st.st_size, f);
		buf[*len] = '\0';
	}
	fclose(f);
	return buf;
}

/* Parse every callgrind.out.* in @dir into @r, by pid. Return: 0 or -errno. */
static int read_runs(const char *dir, struct pmon_sim_run *r)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4400];
	int err = 0;

	if (!d)
		return pmon__err(-errno, "cannot read '%s': %s", dir, strerror(errno));
	while (!err && (e = readdir(d))) {
		if (strncmp(e->d_name, "callgrind.out.", 14))
			continue;
		pmon__fmt(path, sizeof(path), "%s/%s", dir, e->d_name);
		size_t len = 0;
		char *buf = slurp(path, &len);
		if (!buf) {
			err = pmon__err(-errno, "cannot read '%s': %s", path, strerror(errno));
			break;
		}
		struct pmon_callgrind *cg;
		err = pmon_callgrind__parse(buf, len, path, &cg);
		free(buf);
		if (err) {
			char why[400];
			pmon__strlcpy(why, pmon_errdetail(), sizeof(why));
			err = pmon__err(err, "callgrind's output: %s", why);
			break;
		}
		struct pmon_callgrind **n = realloc(r->runs, (r->nruns + 1) * sizeof(*n));
		if (!n) {
			pmon_callgrind__free(cg);
			err = pmon__err(-ENOMEM, "out of memory");
			break;
		}
		r->runs = n;
		r->runs[r->nruns++] = cg;
	}
	closedir(d);
	if (r->nruns > 1)
		qsort(r->runs, r->nruns, sizeof(*r->runs), cmp_pid);
	return err;
}

/*
 * valgrind's own messages (its log, one file per process), less the notes
 * of its auto-detected LL cache, which the --LL passed replaces (they would
 * name a cache that is not simulated). NULL when there are none.
 */
static char *read_log(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4400], line[1024], *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	while (out && d && (e = readdir(d))) {
		if (strncmp(e->d_name, "valgrind.log.", 13))
			continue;
		pmon__fmt(path, sizeof(path), "%s/%s", dir, e->d_name);
		FILE *f = fopen(path, "re");
		while (f && fgets(line, sizeof(line), f) && len < MAX_LOG)
			if (!strstr(line, "using its data for the LL simulation") &&
			    !strstr(line, " LL cache: line_size"))
				fputs(line, out);
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	if (out)
		fclose(out);
	if (text && !text[0]) {
		free(text);
		text = NULL;
	}
	return text;
}

/* The engine's CPU seconds and resident memory so far (/proc/PID/stat,
 * proc(5): utime and stime, fields 14-15, in clock ticks; rss, field 24,
 * in pages). False when it has gone. */
static bool engine_usage(pid_t pid, double *cpu_s, double *rss_mb)
{
	char path[64], buf[1024];
	FILE *f;
	size_t n;

	pmon__fmt(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')'); /* the command name may hold blanks */
	unsigned long long v[24] = { 0 };
	for (int i = 3; p && i <= 24; i++) {
		p = strchr(p + 1, ' ');
		if (p && i >= 14)
			v[i - 1] = strtoull(p + 1, NULL, 10);
	}
	if (!p)
		return false;
	long tck = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	*cpu_s = (double)(v[13] + v[14]) / (double)(tck > 0 ? tck : 100);
	*rss_mb = (double)v[23] * (double)(page > 0 ? page : 4096) / (1 << 20);
	return true;
}

/*
 * Wait for valgrind; every @o->progress_s seconds (0: never) @o->progress
 * with the time so far, the engine's CPU time and memory. callgrind
 * reports no progress of its own (its instruction count so far needs
 * callgrind_control, a vgdb round trip that stops the engine), so this
 * says how long it has run, not how much is left.
 */
static int wait_engine(pid_t pid, const struct pmon_sim_run_opts *o, int *status)
{
	double every = o->progress ? o->progress_s : 0;
	int pfd = every > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
	double t0 = pmon_monotonic_s(), next = t0 + every;

	if (pfd < 0)
		return pmon__spawn_wait(pid, status, 0);
	for (;;) {
		struct pollfd p = { .fd = pfd, .events = POLLIN };
		pid_t w = waitpid(pid, status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			int err = -errno;
			close(pfd);
			return pmon__err(err, "waiting for valgrind: %s", strerror(-err));
		}
		double now = pmon_monotonic_s();
		if (now >= next) {
			double cpu = 0, rss = 0;
			if (engine_usage(pid, &cpu, &rss))
				o->progress(o->ctx, now - t0, cpu, rss);
			next = now + every;
		}
		poll(&p, 1, (int)((next - now) * 1000) + 1);
	}
	close(pfd);
	return 0;
}

/* valgrind's command line for @argv into @va (room for the command + 16). */
static void engine_argv(char **va, char (*arg)[4200], const struct pmon_sim_run_opts *o,
			char *const argv[])
{
	const struct pmon_sim_caches *c = o->caches;
	size_t na = 0;

	pmon__fmt(arg[0], sizeof(arg[0]), "--callgrind-out-file=%s/callgrind.out.%%p", o->dir);
	pmon__fmt(arg[1], sizeof(arg[1]), "--log-file=%s/valgrind.log.%%p", o->dir);
	pmon__fmt(arg[2], sizeof(arg[2]), "--I1=%llu,%u,%u", (unsigned long long)c->i1.size,
		  c->i1.assoc, c->i1.line);
	pmon__fmt(arg[3], sizeof(arg[3]), "--D1=%llu,%u,%u", (unsigned long long)c->d1.size,
		  c->d1.assoc, c->d1.line);
	pmon__fmt(arg[4], sizeof(arg[4]), "--LL=%llu,%u,%u", (unsigned long long)c->ll.size,
		  c->ll.assoc, c->ll.line);
	va[na++] = (char *)o->valgrind;
	va[na++] = "--tool=callgrind";
	va[na++] = "-q";
	va[na++] = "--dump-instr=yes";
	va[na++] = "--cache-sim=yes";
	va[na++] = o->branch ? "--branch-sim=yes" : "--branch-sim=no";
	va[na++] = arg[2];
	va[na++] = arg[3];
	va[na++] = arg[4];
	va[na++] = arg[0];
	va[na++] = arg[1];
	if (o->callgraph) /* each function's cost per chain of callers (docs/simulate.md) */
		va[na++] = "--separate-callers=" SIM_CALLERS;
	if (o->regions_report) {
		/* Collection off until a region switches it on (lib/region: the
		 * client requests), each dump a part of the same file. */
		va[na++] = "--collect-atstart=no";
		va[na++] = "--combine-dumps=yes";
	}
	va[na++] = "--";
	for (size_t i = 0; argv[i]; i++)
		va[na++] = argv[i];
	va[na] = NULL;
}

int pmon_sim__run(char *const argv[], const struct pmon_sim_run_opts *opts,
		  struct pmon_sim_run *out)
{
	struct pmon_sim_run_opts o = { 0 };
	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO }, old[3];
	const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
	char arg[5][4200];
	size_t ncmd = 0;
	char **va;
	pid_t pid;
	int err = PMON_OPTS_COPY(&o, opts, struct pmon_sim_run_opts, ctx);

	memset(out, 0, sizeof(*out));
	if (err)
		return err;
	if (!opts || !o.valgrind || !o.caches || !o.dir || !argv || !argv[0])
		return pmon__err(-EINVAL, "pmon_sim__run: valgrind, caches, dir and a command");
	while (argv[ncmd])
		ncmd++;
	if (!(va = calloc(ncmd + 16, sizeof(*va))))
		return pmon__err(-ENOMEM, "out of memory");
	engine_argv(va, arg, &o, argv);
	if (o.regions_report) {
		setenv("PMON_SIMULATE_REGIONS", "1", 1);
		setenv("PMON_OUTPUT", o.regions_report, 1);
		setenv("PMON_FORMAT", "json", 1);
	}
	got_sig = 0;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &sa, &old[i]);
	double t0 = pmon_monotonic_s();
	err = pmon__spawn_start(va, NULL, -1, &pid);
	if (!err) {
		out->started = true;
		child_pid = pid;
		err = wait_engine(pid, &o, &out->status);
		child_pid = 0;
	}
	out->elapsed_s = pmon_monotonic_s() - t0;
	out->signal = got_sig;
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);
	free(va);
	if (err)
		return err;
	out->log = read_log(o.dir);
	err = read_runs(o.dir, out);
	if (err) { /* the log is still worth showing */
		for (size_t i = 0; i < out->nruns; i++)
			pmon_callgrind__free(out->runs[i]);
		free(out->runs);
		out->runs = NULL;
		out->nruns = 0;
	}
	return err;
}

void pmon_sim_run_release(struct pmon_sim_run *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nruns; i++)
		pmon_callgrind__free(r->runs[i]);
	free(r->runs);
	free(r->log);
	memset(r, 0, sizeof(*r));
}
