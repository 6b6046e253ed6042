// SPDX-License-Identifier: MIT
/*
 * pmon simulate: run a command under valgrind's callgrind with this CPU's
 * (or a dump's, or the user's) cache geometry, and keep what it simulated
 * at every instruction as a pmon recording for pmon report / annotate, or
 * print the totals as a stat table (--stat). VTune's Dynamic Analyzer:
 * events where no PMU exists, exact to the instruction, 20-100x slower.
 * See docs/simulate.md.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "sim.h"
#include <pmon/pmon.h>

static void geom_text(char *buf, size_t len, const char *name, const struct pmon_cache_geom *g)
{
	if (g->size % (1024 * 1024) == 0)
		snprintf(buf, len, "%s %lluM %u-way %uB", name, (unsigned long long)(g->size >> 20),
			 g->assoc, g->line);
	else if (g->size % 1024 == 0)
		snprintf(buf, len, "%s %lluK %u-way %uB", name, (unsigned long long)(g->size >> 10),
			 g->assoc, g->line);
	else
		snprintf(buf, len, "%s %lluB %u-way %uB", name, (unsigned long long)g->size,
			 g->assoc, g->line);
}

struct runs {
	struct pmon_callgrind **cg;
	size_t n;
};

static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4400];

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
	if (d)
		closedir(d);
	rmdir(dir);
}

struct stat_opts {
	const char *sep; /* -x */
	bool json;
};

/*
 * The simulated totals in pmon stat's three forms, row for row as
 * cli/cmd-stat.c prints a count (perf's: the table's "%20.0f" value and
 * 30-column name, -x's seven fields value,unit,event,runtime,%running,
 * metric,unit, --json's keys of docs/stat-json.md), marked as simulated:
 * the sim/ names, a "(simulated)" header and "# simulated by" line, and
 * "simulated": true with the engine in every JSON row. No runtime was
 * counted (0, 100% "running": a simulation is never multiplexed).
 */
static int print_stat(FILE *f, const struct runs *r, const unsigned *ev, size_t nev,
		      const char *cmdline, const char *geom, const struct stat_opts *so,
		      double elapsed)
{
	const struct pmon_sim_event *tab;
	uint64_t total[16] = { 0 };

	pmon_sim_events(&tab);
	for (size_t i = 0; i < nev; i++)
		for (size_t k = 0; k < r->n; k++) {
			uint64_t v;
			if (pmon_callgrind__total(r->cg[k], tab[ev[i]].engine, NULL, &v)) {
				cli_error("%s", pmon_errdetail());
				return CLI_USAGE;
			}
			total[i] += v;
		}
	if (so->json) {
		for (size_t i = 0; i < nev; i++) {
			char val[32];
			snprintf(val, sizeof(val), "%llu.000000", (unsigned long long)total[i]);
			json_t *j = json_pack(
				"{s:s, s:s, s:s, s:i, s:f, s:s, s:I, s:b, s:s}", "counter-value",
				val, "unit", "", "event", tab[ev[i]].name, "event-runtime", 0,
				"pcnt-running", 100.0, "status", "counted", "value",
				(json_int_t)total[i], "simulated", 1, "engine", "callgrind");
			json_dumpf(j, f, JSON_COMPACT | JSON_PRESERVE_ORDER);
			fputc('\n', f);
			json_decref(j);
		}
		json_t *j =
			json_pack("{s:s, s:f, s:b, s:s, s:s}", "type", "summary", "elapsed",
				  elapsed, "simulated", 1, "engine", "callgrind", "caches", geom);
		json_dumpf(j, f, JSON_COMPACT | JSON_PRESERVE_ORDER);
		fputc('\n', f);
		json_decref(j);
		return CLI_OK;
	}
	if (so->sep) {
		const char *x = so->sep;
		fprintf(f, "# simulated by callgrind (%s)\n", geom);
		for (size_t i = 0; i < nev; i++)
			fprintf(f, "%llu%s%s%s%s0%s100.00%s%s\n", (unsigned long long)total[i], x,
				x, tab[ev[i]].name, x, x, x, x);
		return CLI_OK;
	}
	fprintf(f, "# simulated by callgrind (%s)\n", geom);
	fprintf(f, "\n Performance counter stats for '%s' (simulated):\n\n", cmdline);
	for (size_t i = 0; i < nev; i++)
		fprintf(f, "%20llu       %-30s # %s\n", (unsigned long long)total[i],
			tab[ev[i]].name, tab[ev[i]].desc);
	fprintf(f, "\n%20.9f seconds time elapsed (under the engine)\n\n", elapsed);
	return CLI_OK;
}

/* Per region: the simulated events, then the region runtime's own figures
 * (measured during the simulated run, so slowed down by the engine). */
static int print_regions(FILE *f, const struct runs *r, const unsigned *ev, size_t nev,
			 const char *report, const char *geom, const struct stat_opts *so)
{
	const struct pmon_sim_event *tab;
	struct pmon_sim_region *reg;
	size_t n;

	pmon_sim_events(&tab);
	if (pmon_sim__regions(r->cg, r->n, ev, nev, &reg, &n)) {
		cli_error("%s", pmon_errdetail());
		return CLI_USAGE;
	}
	bool any = false;
	for (size_t i = 0; i < n; i++)
		any |= reg[i].id >= 0;
	if (!any) {
		free(reg);
		cli_error("no region was simulated: the program does not use pmon's region API, "
			  "or its libpmon was built without valgrind's <valgrind/callgrind.h>");
		return CLI_FAIL;
	}
	struct pmon_sim_region_figures *real;
	size_t nreal;
	if (pmon_sim__region_figures(report, &real, &nreal)) {
		free(reg);
		return CLI_FAIL;
	}
	if (!so->json)
		fprintf(f,
			"# simulated by callgrind inside regions only (%s); measured: the "
			"region runtime's own figures, taken under the engine\n\n"
			"%-24s %10s  %-34s %20s\n",
			geom, "region", "pairs", "event", "total");
	for (size_t i = 0; i < n; i++) {
		const struct pmon_sim_region_figures *rr =
			pmon_sim_region_figures__find(real, nreal, reg[i].name);
		json_int_t pairs = rr ? (json_int_t)rr->pairs : 0;
		char num[40], pc[32];
		snprintf(pc, sizeof(pc), "%lld", (long long)pairs);
		for (size_t e = 0; e < nev; e++) {
			if (so->json) {
				json_t *j = json_pack("{s:s, s:i, s:I, s:s, s:I, s:b}", "region",
						      reg[i].name, "id", reg[i].id, "pairs", pairs,
						      "event", tab[ev[e]].name, "value",
						      (json_int_t)reg[i].v[e], "simulated", 1);
				json_dumpf(j, f, JSON_COMPACT | JSON_PRESERVE_ORDER);
				fputc('\n', f);
				json_decref(j);
				continue;
			}
			cli_group_digits(num, sizeof(num), reg[i].v[e]);
			fprintf(f, "%-24s %10s  %-34s %20s\n", e ? "" : reg[i].name,
				e || reg[i].id < 0 ? "" : pc, tab[ev[e]].name, num);
		}
		for (size_t k = 0; rr && k < rr->nm; k++) {
			const char *mn = rr->m[k].name, *unit = rr->m[k].unit;
			double t = rr->m[k].total;
			if (so->json) {
				json_t *j = json_pack("{s:s, s:i, s:I, s:s, s:f, s:s, s:b}",
						      "region", reg[i].name, "id", reg[i].id,
						      "pairs", pairs, "event", mn, "value", t,
						      "unit", unit ? unit : "", "simulated", 0);
				json_dumpf(j, f, JSON_COMPACT | JSON_PRESERVE_ORDER);
				fputc('\n', f);
				json_decref(j);
				continue;
			}
			char label[80];
			snprintf(label, sizeof(label), "%s [%s, measured]", mn, unit ? unit : "");
			cli_group_digits(num, sizeof(num), t > 0 ? (uint64_t)(t + 0.5) : 0);
			fprintf(f, "%-24s %10s  %-34s %20s\n", "", "", label, num);
		}
	}
	if (!so->json)
		fputc('\n', f);
	free(real);
	free(reg);
	return CLI_OK;
}

/* Recording @rec's report as plain rows (the report module's
 * report_sim_profile()). Return: CLI_OK or a code, said. */
static int read_profile(const char *rec, struct pmon_sim_profile *p)
{
	int (*fn)(const char *, struct pmon_sim_profile *) =
		(int (*)(const char *, struct pmon_sim_profile *))cli_module_symbol(
			CLI_MODULE_REPORT, "report_sim_profile", "--compare");
	int err;

	memset(p, 0, sizeof(*p));
	if (!fn)
		return CLI_UNSUPPORTED;
	if ((err = fn(rec, p))) {
		cli_error("%s", pmon_errdetail()); /* as pmon report says it */
		return err == -ENOENT || err == -PMON_ERRNO__PARSE ? CLI_USAGE : CLI_FAIL;
	}
	if (p->warning[0])
		cli_warn("%s: %s", rec, p->warning);
	return CLI_OK;
}

struct compare {
	const char *rec; /* --compare RECORDING */
	struct pmon_sim_profile measured; /* its report */
	const char *mevent; /* the measured event compared */
	int sim; /* its simulated counterpart */
};

/* Before the simulation: the recording's report, and which of its events
 * has a simulated counterpart (refused here, before the slow part). */
static int compare_prepare(struct compare *c)
{
	if (access(c->rec, R_OK)) {
		cli_error("--compare '%s': %s", c->rec, strerror(errno));
		return CLI_USAGE;
	}
	int rc = read_profile(c->rec, &c->measured);
	if (rc)
		return rc;
	c->sim = pmon_sim_profile__counterpart(&c->measured, &c->mevent);
	if (c->sim < 0) {
		if (c->measured.nevents)
			cli_error("--compare: %s", pmon_errdetail());
		else
			cli_error("--compare: '%s' holds no sampled event", c->rec);
		return CLI_USAGE;
	}
	return CLI_OK;
}

/* The simulated misses --compare shows beside the compared pair. */
static const char *const miss_events[] = { "sim/L1-dcache-load-misses/", "sim/LLC-load-misses/" };
#define NMISS (sizeof(miss_events) / sizeof(miss_events[0]))

struct miss {
	const char *name;
	struct pmon_sim_weight *w; /* per function, user space */
	size_t n;
	double total;
};

static const char *miss_label(const char *event)
{
	return strstr(event, "LLC") ? "LL misses" : "L1 misses";
}

/* Function @fn's share of @m's total, in percent (0 where it has none). */
static double miss_share(const struct miss *m, const char *fn)
{
	return pmon_sim_weights_share(m->w, m->n, m->total, fn);
}

static int compare_print(FILE *f, struct compare *c, const char *simrec, const struct stat_opts *so)
{
	const struct pmon_sim_event *tab;
	struct pmon_sim_weight *mw = NULL, *sw = NULL;
	struct pmon_sim_cmp_row *r = NULL;
	struct pmon_sim_profile sim;
	size_t n = 0, nm = 0, ns = 0;
	int rc;

	pmon_sim_events(&tab);
	if ((rc = read_profile(simrec, &sim)))
		return rc;
	struct miss miss[NMISS] = { 0 };
	size_t nmiss = 0;
	double mk = 0, sk = 0;
	rc = CLI_FAIL;
	if (pmon_sim_profile__weights(&c->measured, c->mevent, &mw, &nm, &mk) ||
	    pmon_sim_profile__weights(&sim, tab[c->sim].name, &sw, &ns, &sk))
		goto out;
	double mt = pmon_sim_weights_total(mw, nm);
	if (pmon_sim__compare(mw, nm, sw, ns, NULL, &r, &n)) {
		cli_error("--compare: %s", pmon_errdetail());
		goto out;
	}
	/* Beside the compared pair, each function's share of the simulated
	 * misses (issue #17: "share of simulated instructions and misses"),
	 * where the simulation counted them and they are not the pair itself. */
	for (size_t e = 0; e < NMISS; e++) {
		struct miss *ms = &miss[nmiss];
		ms->name = miss_events[e];
		if (!strcmp(ms->name, tab[c->sim].name))
			continue;
		double k = 0;
		if (pmon_sim_profile__weights(&sim, ms->name, &ms->w, &ms->n, &k))
			goto out;
		ms->total = pmon_sim_weights_total(ms->w, ms->n);
		if (ms->total > 0)
			nmiss++;
		else
			free(ms->w), ms->w = NULL;
	}
	if (so->json) {
		for (size_t i = 0; i < n; i++) {
			json_t *j = json_pack("{s:s, s:s, s:s, s:f, s:f, s:f, s:b}", "function",
					      r[i].name, "measured_event", c->mevent,
					      "simulated_event", tab[c->sim].name, "measured",
					      r[i].measured, "simulated", r[i].simulated, "diff",
					      r[i].diff, "flagged", r[i].flagged);
			if (nmiss) {
				json_t *o = json_object();
				for (size_t e = 0; e < nmiss; e++)
					json_object_set_new(
						o, miss[e].name,
						json_real(miss_share(&miss[e], r[i].name)));
				json_object_set_new(j, "simulated_misses", o);
			}
			json_dumpf(j, f, JSON_COMPACT | JSON_PRESERVE_ORDER);
			fputc('\n', f);
			json_decref(j);
		}
		rc = CLI_OK;
		goto out;
	}
	fprintf(f,
		"# measured: %s in '%s' (%lld samples); simulated: %s (callgrind)\n"
		"# per function, the share of each in user space (measured by period; "
		"%.1f%% of the measured was in the kernel, which is not simulated); << marks "
		"the largest disagreements\n",
		c->mevent, c->rec, (long long)c->measured.samples, tab[c->sim].name,
		mk + mt > 0 ? 100.0 * mk / (mk + mt) : 0.0);
	if (!strcmp(tab[c->sim].name, "sim/instructions/") && !strstr(c->mevent, "instructions"))
		fprintf(f,
			"# time against instructions: a function's measured share over its "
			"simulated share is its CPI over the program's\n");
	for (size_t e = 0; e < nmiss; e++)
		fprintf(f, "# %s: the function's share of %s (simulated)\n",
			miss_label(miss[e].name), miss[e].name);
	fprintf(f, "#\n# %9s %10s", "measured", "simulated");
	for (size_t e = 0; e < nmiss; e++)
		fprintf(f, " %10s", miss_label(miss[e].name));
	fprintf(f, " %8s  %s\n", "diff", "function");
	for (size_t i = 0, shown = 0; i < n && shown < 40; i++) {
		if (!r[i].flagged && r[i].measured < 0.1 && r[i].simulated < 0.1)
			continue;
		shown++;
		fprintf(f, "  %8.2f%% %9.2f%%", r[i].measured, r[i].simulated);
		for (size_t e = 0; e < nmiss; e++)
			fprintf(f, " %9.2f%%", miss_share(&miss[e], r[i].name));
		fprintf(f, " %+8.2f  %s%s\n", r[i].diff, r[i].name, r[i].flagged ? "  <<" : "");
	}
	rc = CLI_OK;
out:
	for (size_t e = 0; e < NMISS; e++)
		free(miss[e].w);
	free(r);
	free(mw);
	free(sw);
	pmon_sim_profile_release(&sim);
	return rc;
}

/* The hottest block of --mca's function, from the simulated counts,
 * through objdump and llvm-mca (cli/sim-mca.c). */
static int mca_print(FILE *f, const struct sim_req *q, const char *mcpu, const char *cpu,
		     const struct runs *r, const char *dir, const char *cwd)
{
	struct pmon_sim_block b;
	char obj[4200], what[300];
	int err = pmon_sim__hot_block(r->cg, r->n, q->mca, &b);

	if (err == -ENOMEM)
		return CLI_FAIL;
	if (err) {
		cli_error("--mca: %s", pmon_errdetail());
		return CLI_USAGE;
	}
	if (b.obj[0] == '/' || !strcmp(b.obj, "???"))
		snprintf(obj, sizeof(obj), "%s", b.obj);
	else
		snprintf(obj, sizeof(obj), "%s/%s", cwd ? cwd : ".", b.obj);
	snprintf(what, sizeof(what), "pmon simulate --mca %s", q->mca);
	struct sim_mca_block mb = { .what = what,
				    .symbol = q->mca,
				    .obj = obj,
				    .start = b.start,
				    .last = b.last,
				    .count = b.count,
				    .executed = b.executed,
				    .count_of = "simulated",
				    .mcpu = mcpu,
				    .cpu = cpu };
	return sim_mca_block(f, &mb, dir);
}

/* -e's list into @ev; *@branch set when one needs the branch simulation. */
static bool parse_events(const char *list, unsigned *ev, size_t *nev, bool *branch)
{
	const struct pmon_sim_event *tab;
	char buf[1024], *save = NULL;

	pmon_sim_events(&tab);
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int i = pmon_sim_event__find(t);
		if (i < 0) {
			cli_error("%s", pmon_errdetail());
			return false;
		}
		if (*nev == 16) {
			cli_error("-e: at most 16 events");
			return false;
		}
		bool dup = false;
		for (size_t k = 0; k < *nev; k++)
			dup |= ev[k] == (unsigned)i;
		if (!dup)
			ev[(*nev)++] = (unsigned)i;
		*branch |= tab[i].branch;
	}
	if (!*nev) {
		cli_error("-e '%s' names no event", list);
		return false;
	}
	return true;
}

/* The options that go together and those that do not. Return: CLI_OK or
 * CLI_USAGE, said. */
static int check_request(const struct sim_req *q, const char *who)
{
	if (!q->argv || !q->argv[0]) {
		cli_error("%s what? give the command after --", who);
		return CLI_USAGE;
	}
	if ((q->l1 || q->ll) && q->nsrc) {
		cli_error("--l1/--ll or a CPUID source, not both");
		return CLI_USAGE;
	}
	if (q->nsrc > 1) {
		cli_error("--cache-from-cpuid or --cpuid-file, not both");
		return CLI_USAGE;
	}
	if (!!q->l1 != !!q->ll) {
		cli_error("--l1 and --ll go together (the simulator needs both)");
		return CLI_USAGE;
	}
	if (q->sep && !q->stat) {
		cli_error("-x is a form of --stat");
		return CLI_USAGE;
	}
	if (q->json && !q->stat && !q->regions && !q->compare) {
		cli_error("--json is a form of --stat, --regions or --compare");
		return CLI_USAGE;
	}
	if (q->sep && q->json) {
		cli_error("-x or --json, not both");
		return CLI_USAGE;
	}
	if (q->sep && !q->sep[0]) {
		cli_error("-x: the separator is empty");
		return CLI_USAGE;
	}
	return CLI_OK;
}

/* --l1/--ll, else this CPU's or the dump's caches, checked. Return:
 * CLI_OK or the exit code, said. */
static int resolve_caches(const struct sim_req *q, struct pmon_sim_caches *caches)
{
	if (q->l1) {
		if (pmon_cache_geom__parse(q->l1, &caches->d1)) {
			cli_error("--l1 '%s': %s", q->l1, pmon_errdetail());
			return CLI_USAGE;
		}
		if (pmon_cache_geom__parse(q->ll, &caches->ll)) {
			cli_error("--ll '%s': %s", q->ll, pmon_errdetail());
			return CLI_USAGE;
		}
		caches->i1 = caches->d1;
		caches->source = "--l1/--ll";
	} else {
		struct pmon_cpuid *id = q->cpuid_file ? pmon_cpuid__new_file(q->cpuid_file)
						      : pmon_cpuid__new_live();
		if (!id) {
			cli_error("%s", pmon_errdetail());
			return CLI_USAGE;
		}
		int err = pmon_sim_caches_from_cpuid(id, caches);
		pmon_cpuid__free(id);
		if (err) {
			cli_error("%s", pmon_errdetail());
			return q->cpuid_file ? CLI_USAGE : CLI_UNSUPPORTED;
		}
		const struct pmon_cache_geom *g[3] = { &caches->i1, &caches->d1, &caches->ll };
		const char *gn[3] = { "L1i", "L1d", "LL" };
		for (int i = 0; i < 3; i++)
			if (pmon_cache_geom__check(g[i])) {
				cli_error("%s of %s: %s", gn[i], caches->source, pmon_errdetail());
				return CLI_USAGE;
			}
	}
	return CLI_OK;
}

/* The simulated caches in words into @geom, and the line that says what
 * runs. */
static void say_geometry(const char *valgrind, const struct pmon_sim_caches *caches, char *geom,
			 size_t glen)
{
	char t1[48], t2[48], t3[48];
	geom_text(t1, sizeof(t1), "L1i", &caches->i1);
	geom_text(t2, sizeof(t2), "L1d", &caches->d1);
	geom_text(t3, sizeof(t3), "LL", &caches->ll);
	snprintf(geom, glen, "%s, %s, %s from %s", t1, t2, t3, caches->source);
	fprintf(stderr,
		"pmon simulate: simulating with callgrind (%s): expect 20-100x slower (%s)\n",
		valgrind, geom);
	if (caches->ll_assoc_enumerated)
		fprintf(stderr,
			"pmon simulate: the L%u cache's %u ways give a set count that is not a "
			"power of two: simulated with %u ways, same size\n",
			caches->ll_level, caches->ll_assoc_enumerated, caches->ll.assoc);
}

/* The command as one line (cut to @len) for the headers. */
static void command_line(char **argv, char *cmdline, size_t len)
{
	size_t off = 0;
	cmdline[0] = '\0';
	for (size_t i = 0; argv[i] && off < len; i++) {
		int w = snprintf(cmdline + off, len - off, "%s%s", off ? " " : "", argv[i]);
		if (w < 0)
			break;
		off += (size_t)w;
	}
}

/* The simulated runs as a recording at @path. Return: CLI_OK or the exit
 * code, said. */
static int write_recording(const struct sim_req *q, const struct runs *runs, const unsigned *ev,
			   size_t nev, const char *cmdline, const char *simrec)
{
	int rc = CLI_OK;
	char cwd[4096];
	struct pmon_sim_write_opts wo = { .sz = sizeof(wo),
					  .events = ev,
					  .nevents = nev,
					  .command = cmdline,
					  .cwd = getcwd(cwd, sizeof(cwd)),
					  .callchains = q->callgraph };
	const char *path = simrec;
	int werr = pmon_sim__write_recording(runs->cg, runs->n, path, &wo);
	if (werr) {
		cli_error("%s", pmon_errdetail());
		/* an output refused only when opened (a FIFO nobody
		 * reads): bad input, as docs/exit-codes.md says */
		rc = werr == -ENXIO || werr == -EPERM || werr == -EISDIR || werr == -EEXIST
			? CLI_USAGE
			: CLI_FAIL;
	} else {
		fprintf(stderr, "pmon simulate: %zu process%s simulated, written to %s\n", runs->n,
			runs->n == 1 ? "" : "es", path);
	}
	return rc;
}

/* The command's exit status as pmon's: its own, or 128 + the signal that
 * killed it, said. */
static int exit_status(const struct sim_req *q, int status, int caught)
{
	int rc;

	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		if (caught && sig == caught)
			cli_error("interrupted by signal %d: kept what was simulated up to "
				  "then",
				  sig);
		else
			cli_error("'%s' was killed by signal %d (%s)", q->argv[0], sig,
				  strsignal(sig));
		rc = 128 + sig;
	} else {
		rc = WEXITSTATUS(status);
	}
	return rc;
}

/* --mca's tools and -mcpu (--mcpu, else this CPU's or the dump's). Return:
 * CLI_OK or the exit code, said. */
static int mca_cpu(const struct sim_req *q, char *mcpu, size_t mlen, char *from, size_t flen)
{
	if (q->mcpu && !q->mca) {
		cli_error("--mcpu goes with --mca");
		return CLI_USAGE;
	}
	if (q->mca) {
		if (!sim_mca_available("--mca", true))
			return CLI_UNSUPPORTED;
		if (q->mcpu) {
			snprintf(mcpu, mlen, "%s", q->mcpu);
			snprintf(from, flen, "--mcpu");
		} else if (!sim_mca_cpu(q->cpuid_file, mcpu, mlen, from, flen)) {
			return CLI_USAGE;
		}
	}
	return CLI_OK;
}

/* -e's events, else the default list (with branches where asked). False
 * after an error line. */
static bool pick_events(const struct sim_req *q, unsigned *ev, size_t *nevp, bool *branchp)
{
	size_t nev = 0;
	bool branch = *branchp;

	for (size_t i = 0; i < q->nevents; i++)
		if (!parse_events(q->events[i], ev, &nev, &branch))
			return false;
	if (!q->nevents) {
		const struct pmon_sim_event *tab;
		size_t n = pmon_sim_events(&tab);
		for (size_t i = 0; i < n; i++)
			if (!tab[i].branch || branch)
				ev[nev++] = (unsigned)i;
	}
	*nevp = nev;
	*branchp = branch;
	return true;
}

/* --compare: the simulated counterpart of the measured event joins the
 * events (all of the default list, with branches, when it is a branch
 * event and -e named none). */
static void add_counterpart(const struct sim_req *q, const struct compare *c, unsigned *ev,
			    size_t *nev, bool *branch)
{
	/* the counterpart is simulated and written whatever -e said */
	bool have = false;
	const struct pmon_sim_event *tab;
	pmon_sim_events(&tab);
	for (size_t i = 0; i < *nev; i++)
		have |= ev[i] == (unsigned)c->sim;
	if (!have && *nev < 16)
		ev[(*nev)++] = (unsigned)c->sim;
	*branch |= tab[c->sim].branch;
	if (!q->nevents && tab[c->sim].branch) { /* the default list, with branches */
		*nev = 0;
		size_t nt = pmon_sim_events(&tab);
		for (size_t i = 0; i < nt; i++)
			ev[(*nev)++] = (unsigned)i;
	}
}

/* A progress line on standard error while the engine runs (@ctx: whether
 * it is a terminal, where each line overwrites the last). */
static void progress_line(void *ctx, double elapsed_s, double cpu_s, double rss_mb)
{
	bool tty = *(const bool *)ctx;

	fprintf(stderr,
		"pmon simulate: %.0f s under the engine (%.1f s of CPU, "
		"%.0f MiB); Ctrl-C stops and keeps what was simulated%s",
		elapsed_s, cpu_s, rss_mb, tty ? "\r" : "\n");
}

int sim_run(const struct sim_req *q)
{
	const char *who = q->who ? q->who : "simulate";
	struct stat_opts so = { .sep = q->sep, .json = q->json };
	bool branch = q->branch;
	struct compare cmp = { .rec = q->compare };
	char mcpu[96] = "", mcpu_from[160] = "";
	int rc = CLI_OK;
	FILE *sf = stderr;

	if ((rc = check_request(q, who)) != CLI_OK)
		return rc;
	/* The cache geometry, checked before anything runs. */
	struct pmon_sim_caches caches = { 0 };
	if ((rc = resolve_caches(q, &caches)) != CLI_OK)
		return rc;
	if ((rc = mca_cpu(q, mcpu, sizeof(mcpu), mcpu_from, sizeof(mcpu_from))) != CLI_OK)
		return rc;
	unsigned ev[16];
	size_t nev = 0;
	if (!pick_events(q, ev, &nev, &branch))
		return CLI_USAGE;
	char valgrind[4096], prog[4096];
	if (pmon_spawn_which("valgrind", valgrind, sizeof(valgrind))) {
		cli_error("valgrind is not installed: simulate runs valgrind's callgrind "
			  "(Debian package 'valgrind')");
		return CLI_UNSUPPORTED;
	}
	int werr = pmon_spawn_which(q->argv[0], prog, sizeof(prog));
	if (werr) {
		cli_error("cannot run '%s': %s", q->argv[0],
			  werr == -EACCES ? "permission denied" : "no such file or directory");
		return 127;
	}
	/* The recording written is -o, else pmon.data, unless --stat --compare
	 * wants one only to compare: never the compared recording itself,
	 * which FILE.old would silently take the place of (issue #23). */
	const char *recout = q->out ? q->out : q->stat && cmp.rec ? NULL : "pmon.data";
	struct stat rs, cs;
	if (cmp.rec && recout && !stat(recout, &rs) && !stat(cmp.rec, &cs) &&
	    rs.st_dev == cs.st_dev && rs.st_ino == cs.st_ino) {
		cli_error("--compare '%s' is the recording this simulation would write%s: name "
			  "another with -o",
			  cmp.rec, q->out ? "" : " (the default -o pmon.data)");
		return CLI_USAGE;
	}
	if (recout && !cli_check_output_as(recout, "-o", PMON_OUTPUT_STREAM | PMON_OUTPUT_KEEP_OLD))
		return CLI_USAGE;
	if (q->stat_out) { /* checked before the slow part, as pmon stat does */
		if (!cli_check_output_path(q->stat_out, "-o"))
			return CLI_USAGE;
		if (!(sf = cli_open_output(q->stat_out)))
			return CLI_USAGE;
	}
	char dir[4096];
	if (q->keep) {
		if (mkdir(q->keep, 0700) && errno != EEXIST) {
			cli_error("--callgrind-dir '%s': %s", q->keep, strerror(errno));
			rc = CLI_USAGE;
			goto out_file;
		}
		snprintf(dir, sizeof(dir), "%s", q->keep);
	} else if (pmon_spawn_workdir("sim", dir, sizeof(dir))) {
		cli_error("%s", pmon_errdetail());
		rc = CLI_FAIL;
		goto out_file;
	}
	if (cmp.rec) {
		if ((rc = compare_prepare(&cmp)))
			goto out_dir;
		add_counterpart(q, &cmp, ev, &nev, &branch);
	}
	char geom[200];
	say_geometry(valgrind, &caches, geom, sizeof(geom));

	char cmdline[256];
	command_line(q->argv, cmdline, sizeof(cmdline));

	char a_report[4200];
	snprintf(a_report, sizeof(a_report), "%s/regions.json", dir);
	bool tty = isatty(STDERR_FILENO);
	long every = q->progress_s < 0 ? (tty ? 5 : 0) : q->progress_s;
	struct pmon_sim_run_opts ro = { .sz = sizeof(ro),
					.valgrind = valgrind,
					.caches = &caches,
					.dir = dir,
					.branch = branch,
					.callgraph = q->callgraph,
					.regions_report = q->regions ? a_report : NULL,
					.progress_s = (double)every,
					.progress = progress_line,
					.ctx = &tty };
	struct pmon_sim_run run;
	int err = pmon_sim__run(q->argv, &ro, &run);
	if (tty && every > 0 && run.elapsed_s >= (double)every)
		fputc('\n', stderr); /* past the last progress line */
	if (run.log)
		fputs(run.log, stderr);
	int status = run.status;
	if (err) {
		cli_error("%s", pmon_errdetail());
		rc = run.started || err == -ENOMEM || err == -EAGAIN ? CLI_FAIL : CLI_UNSUPPORTED;
	} else if (!run.nruns) {
		cli_error("callgrind wrote no output (valgrind %s %d)",
			  WIFSIGNALED(status) ? "was killed by signal" : "exited with status",
			  WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
		rc = CLI_FAIL;
	}
	double elapsed = run.elapsed_s;
	struct runs runs = { .cg = run.runs, .n = run.nruns };
	if (rc == CLI_OK && q->stat)
		rc = print_stat(sf, &runs, ev, nev, cmdline, geom, &so, elapsed);
	if (rc == CLI_OK && q->regions)
		rc = print_regions(stderr, &runs, ev, nev, a_report, geom, &so);
	char simrec[4200];
	snprintf(simrec, sizeof(simrec), "%s",
		 q->out			      ? q->out
			 : q->stat && cmp.rec ? ""
					      : "pmon.data");
	if (!simrec[0]) /* --stat --compare without -o: a recording only to compare */
		snprintf(simrec, sizeof(simrec), "%s/simulated.data", dir);
	if (rc == CLI_OK && (!q->stat || q->out || cmp.rec))
		rc = write_recording(q, &runs, ev, nev, cmdline, simrec);
	if (rc == CLI_OK && cmp.rec)
		rc = compare_print(stdout, &cmp, simrec, &so);
	if (rc == CLI_OK && q->mca) {
		char cwd[4096];
		rc = mca_print(stdout, q, mcpu, mcpu_from, &runs, dir, getcwd(cwd, sizeof(cwd)));
	}
	if (rc == CLI_OK)
		rc = exit_status(q, status, run.signal);
	pmon_sim_run_release(&run);
out_dir:
	pmon_sim_profile_release(&cmp.measured);
	if (!q->keep)
		remove_dir(dir);
out_file:
	if (q->stat_out && cli_close_output(sf, q->stat_out) != CLI_OK && rc == CLI_OK)
		rc = CLI_FAIL;
	return rc;
}

/* -e, repeatable: the lists are parsed by sim_run(). */
static int opt_event(const struct cli_option *opt, const char *arg)
{
	struct sim_req *q = opt->value;

	if (q->nevents == 16) {
		cli_error("-e: at most 16 lists");
		return CLI_USAGE;
	}
	((const char **)q->events)[q->nevents++] = arg;
	return CLI_OK;
}

int cmd_simulate(int argc, char **argv)
{
	const char *events[16];
	struct sim_req q = { .events = events };
	bool from_cpuid = false;
	unsigned long progress = (unsigned long)-1;
	const struct cli_option options[] = {
		CLI_OPT_TEXT("Runs COMMAND under valgrind's callgrind (expect 20-100x slower) and "
			     "keeps the\nsimulated events of every instruction as a recording for "
			     "pmon report and\npmon annotate ('pmon list sim' names the events; "
			     "docs/simulate.md)."),
		CLI_OPT_CALLBACK('e', "event", &q, "EVENTS", opt_event,
				 "sim/instructions/,sim/L1-dcache-load-misses/... or the\n"
				 "engine's names (Ir, D1mr, ...); default: all collected"),
		CLI_OPT_FLAG(0, "cache-from-cpuid", &from_cpuid,
			     "the caches of this CPU (CPUID leaf 4 / 8000001DH /\n"
			     "80000005H-6H; the default)"),
		CLI_OPT_CPUID_FILE(0, &q.cpuid_file,
				   "the caches of a CPUID dump ('pmon cpuid' writes one)"),
		CLI_OPT_STRING(0, "l1", &q.l1, "G",
			       "L1 (instruction and data) geometry: size (K/M suffix),\n"
			       "ways, line bytes: 32K,8,64"),
		CLI_OPT_STRING(0, "ll", &q.ll, "G", "last-level geometry, the same way"),
		CLI_OPT_FLAG(0, "branch", &q.branch,
			     "simulate branch prediction too (sim/branch-misses/)"),
		CLI_OPT_FLAG('g', "call-graph", &q.callgraph,
			     "call stacks in the recording (callgrind's contexts):\n"
			     "pmon report --sort caller|callee, --format folded..."),
		CLI_OPT_OUTPUT(&q.out, "FILE",
			       "the recording (default pmon.data; with --stat: none\n"
			       "unless given)"),
		CLI_OPT_FLAG(0, "stat", &q.stat,
			     "print the simulated totals as pmon stat does, on\n"
			     "standard error; -x SEP: CSV, --json: JSON lines"),
		CLI_OPT_STRING('x', "field-separator", &q.sep, "SEP", "--stat as CSV"),
		CLI_OPT_FLAG(0, "json", &q.json, "--stat, --regions, --compare as JSON lines"),
		CLI_OPT_FLAG(0, "regions", &q.regions,
			     "simulate inside the region API's regions only, and\n"
			     "print per region the simulated events beside the\n"
			     "region's own TSC and software-event figures"),
		CLI_OPT_STRING(0, "compare", &q.compare, "REC",
			       "beside the simulation, the sampling recording REC of\n"
			       "the same program: per function, share of the measured\n"
			       "event against share of its simulated counterpart\n"
			       "(cycles, clocks: instructions), largest disagreements\n"
			       "flagged"),
		CLI_OPT_STRING(0, "mca", &q.mca, "SYMBOL",
			       "the hottest block of function SYMBOL through LLVM's\n"
			       "llvm-mca: predicted cycles, port pressure, bottleneck"),
		CLI_OPT_STRING(0, "mcpu", &q.mcpu, "NAME",
			       "llvm-mca's -mcpu (default: from CPUID, or the dump's)"),
		CLI_OPT_UINT(0, "progress", &progress, "S", 3600,
			     "a progress line every S seconds on standard error (0:\n"
			     "none; default: every 5 s when it is a terminal)"),
		CLI_OPT_STRING(0, "callgrind-dir", &q.keep, "D",
			       "keep callgrind's own output files (callgrind.out.PID) in D"),
		CLI_OPT_END(),
	};
	int argi = cli_parse_options(
		"simulate",
		"usage: pmon simulate [-e EVENTS] [-g] [--cache-from-cpuid | --cpuid-file F |\n"
		"                     --l1 SIZE,ASSOC,LINE --ll SIZE,ASSOC,LINE] [--branch]\n"
		"                     [-o FILE] [--stat] [--regions] [-x SEP | --json]\n"
		"                     [--compare REC] [--mca SYMBOL [--mcpu NAME]]\n"
		"                     [--progress S] [--callgrind-dir D] -- COMMAND [ARGS]\n"
		"       pmon stat --simulate [-e EVENTS] [-x SEP | --json] [-o FILE] -- COMMAND",
		options, CLI_PARSE_STOP_AT_OPERAND, argc, argv);

	if (argi <= 0)
		return -argi;
	q.nsrc = from_cpuid + !!q.cpuid_file;
	q.progress_s = progress == (unsigned long)-1 ? -1 : (long)progress;
	q.argv = argi < argc ? argv + argi : NULL;
	return sim_run(&q);
}
