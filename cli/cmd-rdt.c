// SPDX-License-Identifier: MIT
/*
 * pmon rdt: cache occupancy and memory bandwidth of a command or processes,
 * per L3 domain and interval, through resctrl monitoring groups (pmon/rdt.h),
 * with core events of the same target beside them. `pmon rdt info` walks
 * the seed's enumeration steps; `--cleanup` removes groups a crashed run
 * left. Every group pmon creates is removed on exit and on SIGINT/SIGTERM.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include <pmon/pmon.h>

#define now pmon_monotonic_s
#define MSR_MAX_CPUS 256 /* CPUs --msr programs in one run */

static const char *fmt_value(const struct pmon_rdt_value *v, char *buf, size_t len)
{
	if (v->state != PMON_RDT_OK)
		return pmon_rdt_state_name(v->state);
	snprintf(buf, len, "%" PRIu64, v->v);
	return buf;
}

/* A bandwidth: the difference of two cumulative readings over @dt. */
static const char *fmt_rate(const struct pmon_rdt_value *a, const struct pmon_rdt_value *b,
			    double dt, char *buf, size_t len, double *out)
{
	*out = -1;
	if (b->state != PMON_RDT_OK)
		return pmon_rdt_state_name(b->state);
	if (!a || a->state != PMON_RDT_OK || b->v < a->v || dt <= 0)
		return "n/a"; /* first reading, or the counter was reset */
	*out = (double)(b->v - a->v) / dt;
	snprintf(buf, len, "%.0f", *out);
	return buf;
}

/* What an event that has no rate this interval shows, as stat says it. */
static const char *not_ok(const struct pmon_count *c)
{
	return c->status == PMON_COUNT_NOT_SUPPORTED ? "<not supported>" : "<not counted>";
}

/* A CSV field: quoted (RFC 4180) when it holds the separator or a quote,
 * as an event name such as cpu/event=0x3c,umask=0/ does under -x,. */
static void csv_field(FILE *f, const char *sep, const char *s)
{
	if (!strstr(s, sep) && !strchr(s, '"')) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* The CSV header (docs/rdt.md): the five RDT columns, then one column per
 * -e event, "NAME UNIT/s" (events per second where the event has no unit). */
static void csv_header(FILE *f, const char *sep, struct pmon_evlist *ev, size_t nev)
{
	fprintf(f,
		"time%sdomain%sllc_occupancy_bytes%smbm_total_bytes_per_s%smbm_local_bytes_per_s",
		sep, sep, sep, sep);
	for (size_t e = 0; e < nev; e++) {
		const struct pmon_event_desc *pe = pmon_evlist__event(ev, e);
		char col[512];
		snprintf(col, sizeof(col), "%s %s/s", pe->name, pe->unit[0] ? pe->unit : "events");
		fputs(sep, f);
		csv_field(f, sep, col);
	}
	fputc('\n', f);
}

/* A CSV row; the events' rates go on the first row of an interval (@cur
 * non-NULL), as in the text and JSON outputs; later rows leave them empty. */
static void csv_row(FILE *f, const char *sep, double t, const char *domain, const char *occ,
		    const char *rt, const char *rl, size_t nev, const struct pmon_count *cur,
		    double edt)
{
	fprintf(f, "%.3f%s", t, sep);
	csv_field(f, sep, domain);
	fprintf(f, "%s%s%s%s%s%s", sep, occ, sep, rt, sep, rl);
	for (size_t e = 0; e < nev; e++) {
		fputs(sep, f);
		if (!cur)
			continue;
		if (cur[e].status == PMON_COUNT_OK)
			fprintf(f, "%.0f", cur[e].value / edt);
		else
			fputs(not_ok(&cur[e]), f);
	}
	fputc('\n', f);
}

static int do_info(int argc, char **argv)
{
	const char *file = NULL, *root = NULL;
	struct pmon_cpu_info ci;
	struct pmon_rdt_caps caps;

	const struct cli_option options[] = {
		CLI_OPT_TEXT("What CPUID enumerates of Cache Monitoring and Memory Bandwidth\n"
			     "Monitoring (SDM 17.16.3), and what resctrl offers."),
		CLI_OPT_CPUID_FILE(0, &file, "decode another machine's dump"),
		CLI_OPT_STRING(0, "resctrl-root", &root, "DIR", "another resctrl mount"),
		CLI_OPT_END(),
	};
	int argi = cli_parse_options(
		"rdt info", "usage: pmon rdt info [--cpuid-file FILE] [--resctrl-root DIR]",
		options, CLI_PARSE_NO_OPERANDS, argc, argv);

	if (argi <= 0)
		return -argi;
	if (!cli_cpu_decode(file, &ci))
		return CLI_USAGE;
	const struct pmon_rdt *r = &ci.rdt;
	printf("CMT/MBM enumeration (SDM 17.16.3)%s%s\n", file ? " of " : "", file ? file : "");
	printf("  1 CPUID.00H:EAX max leaf    %02" PRIX32 "H%s\n", r->max_leaf,
	       r->max_leaf < 7 ? " (< 7: no leaf 07H)" : "");
	printf("  2 CPUID.(07H,0):EBX[12] PQM %d\n", r->pqm);
	if (r->pqm) {
		printf("  3 CPUID.(0FH,0): max RMID %" PRIu32 ", EDX %#" PRIx32 " (L3 %s)\n",
		       r->max_rmid, r->resources, r->l3 ? "yes" : "no");
		/* The events as CPUID enumerates them (cpuid_*: the others are
		 * cleared where an erratum disables them), then the errata, as
		 * 'pmon info' prints them. */
		if (r->l3)
			printf("  4 CPUID.(0FH,1): L3 max RMID %" PRIu32 ", upscale %" PRIu32
			       " bytes, counter width %u, events:%s%s%s\n",
			       r->l3_max_rmid, r->upscale, r->counter_width,
			       r->cpuid_occupancy ? " llc_occupancy" : "",
			       r->cpuid_mbm_total ? " mbm_total_bytes" : "",
			       r->cpuid_mbm_local ? " mbm_local_bytes" : "");
		if (r->l3 && r->mon_erratum_disabled)
			printf("    erratum: Skylake-SP stepping %u <= 4: Linux disables CMT and "
			       "MBM (resctrl __check_quirks_intel); pmon does too\n",
			       ci.id.stepping);
		if (r->l3 && r->mbm_cf_quirk)
			printf("    erratum: MBM counts of RMIDs above %" PRIu32
			       " are multiplied by %.6f (Linux mbm_cf_table); pmon rdt --msr "
			       "does too\n",
			       r->mbm_cf_rmid_threshold, (double)r->mbm_cf / 1048576.0);
		printf("  5 other resource types:     %s\n", r->other_resources ? "yes" : "none");
	}
	if (file && !root)
		return CLI_OK;
	int cerr = pmon_rdt_caps(root, &caps);
	if (cerr == -ENOENT && !root && !ci.rdt.pqm) {
		/* Mounting it would not help: advise only what can (issue #29). */
		printf("resctrl: not mounted, and this CPU has no resource monitoring to mount it "
		       "for (PQM = 0)\n");
	} else if (cerr) {
		printf("resctrl: %s\n", pmon_errdetail());
	} else {
		printf("resctrl at %s%s: num_rmids %u (%u in use), mon_features%s%s%s, "
		       "max_threshold_occupancy %" PRIu64 "\n",
		       caps.root, caps.emulated ? " (emulated tree)" : "", caps.num_rmids,
		       caps.groups, caps.occupancy ? " llc_occupancy" : "",
		       caps.mbm_total ? " mbm_total_bytes" : "",
		       caps.mbm_local ? " mbm_local_bytes" : "", caps.max_threshold_occupancy);
	}
	return CLI_OK;
}

/* rdt --msr --cleanup: replay the state file a killed `rdt --msr` left. */
static int msr_cleanup(const char *device)
{
	char path[4096];

	return cli_msr_cleanup(
		stdout, "pmon rdt",
		pmon_msr_state_path(device, ".pmon-rdt-state", "rdt-state", path, sizeof(path)));
}

/* --msr: the seed's interface, on CPUs rather than tasks. */
/* The CPUs online, as the kernel lists them (Documentation/ABI/testing/
 * sysfs-devices-system-cpu, "online"): an offline CPU leaves a hole that
 * 0..count-1 would miss. More than --msr programs is refused, not cut. */
static int online_cpus(int *cpus, size_t *ncpus)
{
	int *v;
	size_t n;

	if (pmon_cpus_online(NULL, &v, &n)) {
		cli_error("--msr: %s (name the CPUs with --cpu)", pmon_errdetail());
		return CLI_UNSUPPORTED;
	}
	if (n > MSR_MAX_CPUS) {
		free(v);
		cli_error("--msr: %zu CPUs online, --msr programs at most %d: choose them with "
			  "--cpu",
			  n, MSR_MAX_CPUS);
		return CLI_USAGE;
	}
	memcpy(cpus, v, n * sizeof(*v));
	*ncpus = n;
	free(v);
	return CLI_OK;
}

/* --msr's run, for the run engine's tick. */
struct msr_run {
	struct pmon_rdt_msr *m;
	const char *sep;
	bool json;
	unsigned long count, nsamp, tick, printed;
	struct pmon_rdt_reading a, b;
	double t0, tp;
	int rc;
};

/* The rows of one interval, a reading per L3 domain. */
static void msr_rows(const struct msr_run *r, double tn)
{
	for (size_t di = 0; di < r->b.n && di < r->a.n; di++) {
		const struct pmon_rdt_domain *da = &r->a.d[di], *db = &r->b.d[di];
		char b1[32], b2[32], b3[32];
		double tot, loc;
		const char *occ = fmt_value(&db->occupancy, b1, sizeof(b1));
		const char *rt = fmt_rate(&da->total, &db->total, tn - r->tp, b2, sizeof(b2), &tot);
		const char *rl = fmt_rate(&da->local, &db->local, tn - r->tp, b3, sizeof(b3), &loc);
		if (r->json)
			printf("{\"time\":%.3f,\"domain\":\"%s\",\"llc_occupancy\":\"%s\","
			       "\"mbm_total_rate\":\"%s\",\"mbm_local_rate\":\"%s\"}\n",
			       tn - r->t0, db->name, occ, rt, rl);
		else if (r->sep)
			csv_row(stdout, r->sep, tn - r->t0, db->name, occ, rt, rl, 0, NULL, 0);
		else
			printf("%12.3f %-14s %16s %16s %16s\n", tn - r->t0, db->name, occ, rt, rl);
	}
}

/* Every sub-interval: fold a sample in; every nsamp-th (and at the end):
 * read and print. Nonzero ends the run (the command is stopped). */
static int msr_tick(void *ctx, double at, bool last)
{
	struct msr_run *r = ctx;

	(void)at;
	if (!last && ++r->tick % r->nsamp) {
		if (pmon_rdt_msr__sample(r->m)) {
			cli_error("--msr: %s", pmon_errdetail());
			r->rc = CLI_FAIL;
			return 1;
		}
		return 0;
	}
	double tn = now();
	if (pmon_rdt_msr__read(r->m, &r->b)) {
		cli_error("--msr: %s", pmon_errdetail());
		r->rc = CLI_FAIL;
		return 1;
	}
	msr_rows(r, tn);
	if (cli_output_failed(stdout, NULL)) {
		r->rc = CLI_FAIL; /* `| head` has read enough, or a full disk */
		return 1;
	}
	r->a = r->b;
	r->tp = tn;
	if (!last && r->count && ++r->printed >= r->count)
		return 2; /* -n: the command is ended by us */
	return 0;
}

static int run_msr(char **cmd, const char *dev, const char *cpuid_file, const int *cpus_in,
		   size_t ncpus_in, unsigned rmid, unsigned long interval, unsigned long count,
		   const char *sep, bool json)
{
	struct pmon_cpuid *snap =
		cpuid_file ? pmon_cpuid__new_file(cpuid_file) : pmon_cpuid__new_live();
	struct pmon_cpu_info ci;
	struct pmon_kernel_info k;
	struct pmon_rdt_msr *m = NULL;
	int cpus[MSR_MAX_CPUS], rc = CLI_OK, err;
	size_t ncpus = ncpus_in;

	if (!cmd) {
		cli_error("--msr monitors CPUs while a command runs: give one ('-- CMD')");
		pmon_cpuid__free(snap);
		return CLI_USAGE;
	}
	if (!snap || pmon_cpu_decode(snap, &ci)) {
		cli_error("%s", pmon_errdetail());
		pmon_cpuid__free(snap);
		return CLI_USAGE;
	}
	pmon_cpuid__free(snap);
	if (ncpus)
		memcpy(cpus, cpus_in, ncpus * sizeof(*cpus));
	else if ((rc = online_cpus(cpus, &ncpus)))
		return rc;
	pmon_kernel_probe(NULL, &k);
	/* One reading per L3 domain: IA32_QM_CTR answers for the reader's L3.
	 * A machine whose sysfs lists no L3 is read as one domain. */
	int l3[MSR_MAX_CPUS];
	bool have_l3 = pmon_cpu_l3_ids(NULL, cpus, ncpus, l3) == 0;
	/* A state file while the registers are programmed: a pmon killed
	 * meanwhile leaves what puts them back (--cleanup replays it). */
	char state[4096];
	struct pmon_rdt_msr_opts mo = { .sz = sizeof(mo),
					.state_file = pmon_msr_state_path(dev, ".pmon-rdt-state",
									  "rdt-state", state,
									  sizeof(state)) };
	m = pmon_rdt_msr__start_opts(dev, &ci, cpus, ncpus, have_l3 ? l3 : NULL, rmid,
				     k.resctrl_mounted && !dev, &mo);
	err = m ? 0 : -errno;
	if (err) {
		const char *d = pmon_errdetail();
		cli_error("--msr: %s%s", d,
			  strstr(d, ") left ") ? "; 'pmon rdt --msr --cleanup' puts them back"
					       : "");
		return err == -EINVAL ? CLI_USAGE : CLI_UNSUPPORTED;
	}
	struct pmon_run *run = pmon_run__new(cmd, NULL, NULL);
	err = run ? pmon_run__start(run, NULL) : -errno;
	if (err) {
		cli_error("%s", pmon_errdetail());
		rc = run && pmon_run__exit_code(run) == 127 ? 127 : CLI_FAIL;
	}
	struct msr_run r = { .m = m, .sep = sep, .json = json, .count = count, .rc = rc };
	/* The counters are read at least every second, whatever -I says: a
	 * 24-bit MBM counter can wrap in 11 s (pmon_rdt_mbm_samples()); the
	 * library folds each step in, and every nsamp-th tick prints. */
	r.nsamp = pmon_rdt_mbm_samples(interval);
	if (!err && pmon_rdt_msr__read(m, &r.a)) {
		cli_error("--msr: %s", pmon_errdetail());
		r.rc = CLI_FAIL;
	}
	if (sep)
		csv_header(stdout, sep, NULL, 0);
	else if (!json)
		printf("#%11s %-14s %16s %16s %16s\n", "time", "domain", "llc_occupancy[B]",
		       "mbm_total[B/s]", "mbm_local[B/s]");
	if (!err && r.rc == CLI_OK) {
		r.t0 = r.tp = now();
		pmon_run__loop(run, (double)interval / 1e3 / (double)r.nsamp, msr_tick, &r);
		rc = r.rc == CLI_OK ? pmon_run__exit_code(run) : r.rc;
	} else if (!err) {
		rc = r.rc;
	}
	pmon_run__free(run);
	int rerr = pmon_rdt_msr__restore(m);
	size_t nw;
	const struct pmon_msr_write_rec *w = pmon_rdt_msr__writes(m, &nw);
	fprintf(stderr, " MSR writes (the last %zu of %zu), in order:\n", nw < 12 ? nw : (size_t)12,
		pmon_rdt_msr__writes_total(m));
	for (size_t i = nw > 12 ? nw - 12 : 0; i < nw; i++) {
		const struct pmon_msr_info *info = pmon_msr_by_addr(w[i].addr);
		fprintf(stderr, "   CPU%d %-16s <- %#" PRIx64 "%s\n", w[i].cpu,
			info ? info->name : "?", w[i].value, w[i].restore ? "  (restore)" : "");
	}
	if (rerr) {
		cli_error("--msr: RESTORE FAILED: %s", pmon_errdetail());
		rc = CLI_FAIL;
	}
	pmon_rdt_msr__free(m);
	return rc;
}

/* What pmon rdt was asked, once parsed. */
struct rdt_args {
	unsigned long interval, count;
	const char *events, *root, *sep;
	bool json;
	const char *plot, *cpulist;
	bool all_cpus;
	char **cmd;
	const pid_t *pids;
	size_t npids;
	const struct pmon_target *tgtp;
};

/* One monitoring group per target. */
struct rtarget {
	char label[48];
	struct pmon_rdt_group *g;
	struct pmon_rdt_reading *a, *b;
};

/* The resctrl run's state, for the run engine's tick. */
struct rdt_run {
	const struct rdt_args *o;
	struct rtarget *tg;
	size_t ntg;
	struct pmon_evlist *ev;
	struct pmon_monitor *mon;
	struct pmon_count *cur;
	size_t nev;
	FILE *pf;
	const char *sep;
	bool json;
	double t0, tprev;
	unsigned long printed;
	int rc;
};

/* What the machine offers, the stale groups removed, and the events.
 * Return: CLI_OK with *@evp (NULL without -e), or the exit code (said). */
static int resctrl_check(const struct rdt_args *o, struct pmon_evlist **evp)
{
	/* What the machine offers: an explicit tree speaks for itself;
	 * otherwise CPUID first (the seed's steps), then the mounted resctrl. */
	if (!o->root) {
		struct pmon_cpuid *snap = pmon_cpuid__new_live();
		struct pmon_cpu_info ci;
		if (snap && !pmon_cpu_decode(snap, &ci) && !(ci.rdt.pqm && ci.rdt.l3)) {
			pmon_cpuid__free(snap);
			cli_error("this CPU exposes no RDT monitoring (CPUID.(07H,0):EBX[12] PQM = "
				  "%d%s); "
				  "see 'pmon rdt info'",
				  ci.rdt.pqm, ci.rdt.pqm ? ", no L3 monitoring in leaf 0FH" : "");
			return CLI_UNSUPPORTED; /* not possible here, as --msr says */
		}
		pmon_cpuid__free(snap);
	}
	struct pmon_rdt_caps caps;
	if (pmon_rdt_caps(o->root, &caps)) {
		cli_error("%s", pmon_errdetail());
		return CLI_UNSUPPORTED;
	}
	unsigned stale = 0;
	pmon_rdt_cleanup(o->root, &stale); /* a crashed earlier run's groups */
	if (stale)
		cli_warn("removed %u monitoring group(s) left by an earlier pmon run", stale);

	struct pmon_evlist *ev = NULL;

	*evp = NULL;
	if (o->events) {
		ev = pmon_evlist__new(NULL);
		if (!ev || pmon_evlist__add(ev, o->events)) {
			cli_error("%s", pmon_errdetail());
			pmon_evlist__free(ev);
			return CLI_USAGE;
		}
	}
	*evp = ev;
	return CLI_OK;
}

/* One monitoring group per target: the command, each -p process, the CPUs
 * of -C; -a reads the root group (every task). Return: CLI_OK with *@n
 * groups in @tg (64), or the exit code (said; nothing left). */
static int make_groups(const struct rdt_args *o, struct rtarget *tg, size_t *n)
{
	size_t ntg = 0;
	int err = 0;

	memset(tg, 0, 64 * sizeof(*tg));
	if (o->all_cpus) {
		snprintf(tg[0].label, sizeof(tg[0].label), "all");
		err = (tg[ntg++].g = pmon_rdt_group__root(o->root)) ? 0 : -errno;
	} else if (o->cpulist) {
		snprintf(tg[0].label, sizeof(tg[0].label), "cpus %s", o->cpulist);
		err = (tg[ntg++].g = pmon_rdt_group__new(o->root)) ? 0 : -errno;
		if (!err)
			err = pmon_rdt_group__set_cpus(tg[0].g, o->cpulist);
	} else if (o->cmd) {
		snprintf(tg[0].label, sizeof(tg[0].label), "cmd");
		err = (tg[ntg++].g = pmon_rdt_group__new(o->root)) ? 0 : -errno;
	} else {
		for (size_t i = 0; i < o->npids && !err; i++) {
			snprintf(tg[i].label, sizeof(tg[i].label), "pid %d", (int)o->pids[i]);
			err = (tg[ntg++].g = pmon_rdt_group__new(o->root)) ? 0 : -errno;
		}
	}
	for (size_t i = 0; i < ntg && !err; i++) {
		tg[i].a = calloc(1, sizeof(*tg[i].a));
		tg[i].b = calloc(1, sizeof(*tg[i].b));
		if (!tg[i].a || !tg[i].b)
			err = -ENOMEM;
	}
	if (err) {
		cli_error("%s", pmon_errdetail());
		for (size_t i = 0; i < ntg; i++) {
			pmon_rdt_group__remove(tg[i].g);
			free(tg[i].a);
			free(tg[i].b);
		}
		return err == -ENOSPC || err == -EBUSY ? CLI_UNSUPPORTED : CLI_FAIL;
	}
	*n = ntg;
	return CLI_OK;
}

/* The run: the command forked (held) into the first group, or the -p
 * processes added to theirs; the core events of the same target opened,
 * and everything started. Return: the run, or NULL with the exit code. */
static struct pmon_run *rdt_start(const struct rdt_args *o, struct rdt_run *r, int *rc)
{
	struct pmon_open_opts how = { .sz = sizeof(how), .inherit = true };
	/* the -p processes (each with all its threads), or one made here */
	const struct pmon_target *t = o->tgtp;
	struct pmon_target *own = NULL;
	/* with a command, the command alone decides when the run ends */
	struct pmon_run *run = pmon_run__new(o->cmd, o->cmd ? NULL : o->tgtp, NULL);
	int err = run ? 0 : -errno;

	if (!err && o->cmd) {
		if (!o->all_cpus && !o->cpulist) /* before exec: children follow */
			err = pmon_rdt_group__add(r->tg[0].g, pmon_run__pid(run), false);
		t = own = pmon_target__new_pid(pmon_run__pid(run));
		how.enable_on_exec = true;
	} else if (!err) {
		for (size_t i = 0; i < o->npids && !err; i++)
			err = pmon_rdt_group__add(r->tg[i].g, o->pids[i], true);
	}
	/* Core events of the same target: the CPUs for -a and -C. */
	if (!err && (o->all_cpus || o->cpulist)) {
		size_t ncpus;
		const int *cpus = pmon_target__cpus(o->tgtp, &ncpus);
		pmon_target__free(own);
		t = own = pmon_target__new_cpus(cpus, ncpus);
	}
	if (!err && !t)
		err = -errno;
	if (!err && r->ev && !(r->mon = pmon_monitor__open(r->ev, t, &how)))
		err = -errno;
	pmon_target__free(own);
	/* CPU-wide counters start as the command is released. */
	if (!err && (o->cmd || r->mon) && (err = pmon_run__start(run, r->mon))) {
		cli_error("%s", pmon_errdetail());
		*rc = pmon_run__exit_code(run) == 127 ? 127 : CLI_FAIL;
		pmon_run__free(run);
		return NULL;
	}
	if (err) {
		cli_error("%s", pmon_errdetail());
		*rc = err == -ESRCH ? CLI_USAGE : CLI_FAIL;
		pmon_run__free(run);
		return NULL;
	}
	return run;
}

/* The rows of one interval: each group's domains, the events once. */
static void print_rows(struct rdt_run *r, double tn, double dt, double edt)
{
	for (size_t k = 0; k < r->ntg; k++) {
		struct pmon_rdt_reading *ra = r->tg[k].a, *rb = r->tg[k].b;
		pmon_rdt_group__read(r->tg[k].g, rb);
		for (size_t i = 0; i < rb->n; i++) {
			const struct pmon_rdt_domain *d = &rb->d[i], *pd = NULL;
			char dname[160];
			/* Several targets: say whose domain it is. */
			if (r->ntg > 1)
				snprintf(dname, sizeof(dname), "%.48s:%.100s", r->tg[k].label,
					 d->name);
			else
				snprintf(dname, sizeof(dname), "%s", d->name);
			char b1[32], b2[32], b3[32];
			double tot, loc;
			for (size_t m = 0; m < ra->n; m++)
				if (!strcmp(ra->d[m].name, d->name))
					pd = &ra->d[m];
			const char *occ = fmt_value(&d->occupancy, b1, sizeof(b1));
			const char *rt = fmt_rate(pd ? &pd->total : NULL, &d->total, dt, b2,
						  sizeof(b2), &tot);
			const char *rl = fmt_rate(pd ? &pd->local : NULL, &d->local, dt, b3,
						  sizeof(b3), &loc);
			/* The events once per interval: the first target's
			 * first domain (the text and JSON rows likewise). */
			const struct pmon_count *ecur = k == 0 && i == 0 ? r->cur : NULL;
			if (r->pf)
				csv_row(r->pf, ",", tn - r->t0, dname, occ, rt, rl, r->nev, ecur,
					edt);
			if (r->json) {
				json_t *j =
					json_pack("{s:f, s:s, s:s, s:s, s:s}", "time", tn - r->t0,
						  "domain", dname, "llc_occupancy", occ,
						  "mbm_total_rate", rt, "mbm_local_rate", rl);
				if (d->occupancy.state == PMON_RDT_OK)
					json_object_set_new(
						j, "llc_occupancy_bytes",
						json_integer((json_int_t)d->occupancy.v));
				if (tot >= 0)
					json_object_set_new(j, "mbm_total_bytes_per_s",
							    json_real(tot));
				if (loc >= 0)
					json_object_set_new(j, "mbm_local_bytes_per_s",
							    json_real(loc));
				for (size_t e = 0; k == 0 && i == 0 && e < r->nev; e++)
					if (r->cur[e].status == PMON_COUNT_OK)
						json_object_set_new(
							j, pmon_evlist__event(r->ev, e)->name,
							json_real(r->cur[e].value / edt));
				json_dumpf(j, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
				putchar('\n');
				json_decref(j);
			} else if (r->sep) {
				csv_row(stdout, r->sep, tn - r->t0, dname, occ, rt, rl, r->nev,
					ecur, edt);
			} else {
				printf("%12.3f %-10s %16s %16s %16s ", tn - r->t0, dname, occ, rt,
				       rl);
				for (size_t e = 0; k == 0 && i == 0 && e < r->nev; e++) {
					if (r->cur[e].status == PMON_COUNT_OK)
						printf(" %s %.0f%s%s/s",
						       pmon_evlist__event(r->ev, e)->name,
						       r->cur[e].value / edt,
						       pmon_evlist__event(r->ev, e)->unit[0] ? " "
											     : "",
						       pmon_evlist__event(r->ev, e)->unit);
					else
						printf(" %s %s", pmon_evlist__event(r->ev, e)->name,
						       not_ok(&r->cur[e]));
				}
				putchar('\n');
			}
		}
		r->tg[k].a = rb;
		r->tg[k].b = ra;
	}
}

enum { RDT_OUTPUT_FAILED = 1, RDT_COUNT_REACHED = 2 };

/* Every interval: read the groups and the events, print. */
static int rdt_tick(void *ctx, double at, bool last)
{
	struct rdt_run *r = ctx;
	double tn = now();
	double dt = tn - r->tprev, edt = dt;

	(void)at;
	/* The events' counts since the last reading, scaled after the
	 * difference (pmon_count__delta()), over their own real time. */
	if (r->mon && pmon_monitor__read_delta(r->mon, r->cur, NULL, &edt))
		memset(r->cur, 0, r->nev * sizeof(*r->cur));
	print_rows(r, tn, dt, edt);
	if (cli_output_failed(stdout, NULL)) {
		r->rc = CLI_FAIL; /* `| head` has read enough, or a full disk */
		return RDT_OUTPUT_FAILED;
	}
	r->printed++;
	r->tprev = tn;
	if (!last && r->o->count && r->printed >= r->o->count)
		return RDT_COUNT_REACHED; /* -n: the command is ended by us */
	return 0;
}

/* --plot: a temporary log, read back by its descriptor (nothing left
 * after a kill). Return: CLI_OK, or CLI_FAIL (said). */
static int open_plot_log(struct rdt_run *r, char *plotlog, size_t len)
{
	int pfd = pmon_spawn_tmpfile("rdtplot", plotlog, len);

	if (pfd >= 0) {
		fcntl(pfd, F_SETFD, FD_CLOEXEC);
		unlink(plotlog);
		snprintf(plotlog, len, "/proc/self/fd/%d", pfd);
	}
	r->pf = pfd >= 0 ? fdopen(pfd, "w") : NULL;
	if (!r->pf) {
		cli_error("--plot: cannot create a temporary log: %s", strerror(errno));
		return CLI_FAIL;
	}
	csv_header(r->pf, ",", r->ev, r->nev);
	return CLI_OK;
}

/* --plot: draw the log, titled with the command. */
static int draw_plot(const struct rdt_args *o, FILE *pf, const char *plotlog, int rc)
{
	fflush(pf);
	if (rc == CLI_OK) {
		char title[512] = "pmon rdt";
		size_t off = strlen(title);
		for (char **a = o->cmd; a && *a && off < sizeof(title); a++) {
			int k = snprintf(title + off, sizeof(title) - off, " %s", *a);
			if (k > 0)
				off += (size_t)k;
		}
		rc = plot_log(plotlog, o->plot, 900, 0, title);
	}
	fclose(pf);
	return rc;
}

/* Read the groups every interval until the run ends. */
static int resctrl_loop(const struct rdt_args *o, struct rdt_run *r, struct pmon_run *run)
{
	char plotlog[4096] = "";

	r->nev = r->ev ? pmon_evlist__count(r->ev) : 0;
	r->cur = r->nev ? calloc(r->nev, sizeof(*r->cur)) : NULL;
	if (r->nev && !r->cur) {
		cli_error("out of memory");
		return CLI_FAIL;
	}
	if (o->plot && open_plot_log(r, plotlog, sizeof(plotlog)))
		return CLI_FAIL;
	for (size_t k = 0; k < r->ntg; k++)
		pmon_rdt_group__read(r->tg[k].g, r->tg[k].a);
	if (!o->json && !o->sep)
		printf("#%11s %-10s %16s %16s %16s  %s\n", "time", "domain", "llc_occupancy[B]",
		       "mbm_total[B/s]", "mbm_local[B/s]", r->nev ? "events/s" : "");
	else if (o->sep)
		csv_header(stdout, o->sep, r->ev, r->nev);
	r->t0 = r->tprev = now();
	pmon_run__loop(run, (double)o->interval / 1e3, rdt_tick, r);
	if (r->pf)
		r->rc = draw_plot(o, r->pf, plotlog, r->rc);
	return r->rc == CLI_OK ? pmon_run__exit_code(run) : r->rc;
}

/* pmon rdt through resctrl: the groups, the run, the loop, the clean-up. */
static int run_resctrl(const struct rdt_args *o)
{
	struct rtarget tg[64];
	struct rdt_run r = { .o = o, .tg = tg, .sep = o->sep, .json = o->json };
	struct pmon_run *run;
	int rc = resctrl_check(o, &r.ev);

	if (rc != CLI_OK)
		return rc;
	if ((rc = make_groups(o, tg, &r.ntg)) != CLI_OK) {
		pmon_evlist__free(r.ev);
		return rc;
	}
	run = rdt_start(o, &r, &rc);
	if (run)
		rc = resctrl_loop(o, &r, run);
	pmon_run__free(run);
	free(r.cur);
	pmon_monitor__close(r.mon);
	for (size_t k = 0; k < r.ntg; k++) {
		if (pmon_rdt_group__remove(tg[k].g) && rc == CLI_OK) {
			cli_error("%s", pmon_errdetail());
			rc = CLI_FAIL;
		}
		free(tg[k].a);
		free(tg[k].b);
	}
	pmon_evlist__free(r.ev);
	return rc;
}

static int rdt_main(int argc, char **argv, struct pmon_target **tgtp);

int cmd_rdt(int argc, char **argv)
{
	struct pmon_target *tgt = NULL;
	int rc = rdt_main(argc, argv, &tgt);

	pmon_target__free(tgt);
	return rc;
}

/* pmon rdt, with the target owned by the caller. */
static int rdt_main(int argc, char **argv, struct pmon_target **tgtp)
{
	unsigned long interval = 1000, count = 0;
	const char *events = NULL, *root = NULL, *sep = NULL;
	bool json = false, cleanup = false, use_msr = false;
	const char *plot = NULL, *cpulist = NULL;
	bool all_cpus = false;
	const char *msr_dev = NULL, *cpuid_file = NULL;
	unsigned long rmid = 1;
	const char *mcpu_list = NULL;
	int mcpus[MSR_MAX_CPUS];
	size_t nmcpus = 0;
	struct pmon_target_spec spec = { .sz = sizeof(spec) };
	const struct cli_option options[] = {
		CLI_OPT_TEXT("LLC occupancy in bytes, total and local memory bandwidth in bytes/s, "
			     "per L3\n"
			     "domain; Error, Unavailable and Unassigned are shown as such."),
		CLI_OPT_UINT_MIN('I', "interval", &interval, "MS", 10, 3600000,
				 "at least 10 ms (resctrl updates about every 1 s)",
				 "print every MS milliseconds (default 1000)"),
		CLI_OPT_UINT('n', "count", &count, "N", 100000000, "stop after N intervals"),
		CLI_OPT_JOIN('e', "event", &events, "LIST",
			     "core events of the same target, per second\n"
			     "(comma-separated or -e again)"),
		CLI_OPT_STRING('p', "pid", &spec.pid, "PID", "these processes (each in a group)"),
		CLI_OPT_FLAG('a', "all-cpus", &all_cpus, "the whole machine (the default group)"),
		CLI_OPT_STRING('C', "cpus", &cpulist, "CPUS", "these CPUs (0-3,5)"),
		CLI_OPT_STRING('x', "field-separator", &sep, "SEP", "CSV with SEP between fields"),
		CLI_OPT_FLAG('j', "json", &json, "JSON lines"),
		CLI_OPT_STRING(0, "plot", &plot, "FILE",
			       "draw the run into FILE (.svg, .png or .txt)"),
		CLI_OPT_STRING(0, "resctrl-root", &root, "DIR",
			       "another resctrl mount (tests: an emulated tree)"),
		CLI_OPT_FLAG(0, "cleanup", &cleanup,
			     "remove the groups a killed pmon left (with --msr: restore\n"
			     "the MSRs it saved)"),
		CLI_OPT_FLAG(0, "msr", &use_msr,
			     "program IA32_PQR_ASSOC and IA32_QM_EVTSEL directly"),
		CLI_OPT_STRING(0, "msr-device", &msr_dev, "FILE",
			       "the MSR device (default /dev/cpu/N/msr)"),
		CLI_OPT_CPUID_FILE(0, &cpuid_file, "take the RDT enumeration from a dump"),
		CLI_OPT_STRING(0, "cpu", &mcpu_list, "LIST", "with --msr: these CPUs"),
		CLI_OPT_UINT(0, "rmid", &rmid, "N", 1u << 20,
			     "with --msr: the RMID to use (default 1)"),
		CLI_OPT_END(),
	};

	if (argc > 1 && !strcmp(argv[1], "info"))
		return do_info(argc - 1, argv + 1);
	int argi =
		cli_parse_options("rdt",
				  "usage: pmon rdt info [--cpuid-file FILE] [--resctrl-root DIR]\n"
				  "       pmon rdt --cleanup [--resctrl-root DIR]\n"
				  "       pmon rdt --msr --cleanup [--msr-device FILE]\n"
				  "       pmon rdt [options] (-- command | -p PID[,PID])",
				  options, CLI_PARSE_STOP_AT_OPERAND, argc, argv);
	if (argi <= 0)
		return -argi;
	spec.cpu_list = cpulist;
	char **cmd = argi < argc ? argv + argi : NULL;
	/* The lists every command parses alike (pmon/monitor.h): -C x is an
	 * error, not "all CPUs". */
	if (!(*tgtp = pmon_target__new(&spec))) {
		cli_error("%s", pmon_errdetail());
		return CLI_USAGE;
	}
	size_t npids;
	const pid_t *pids = pmon_target__pids(*tgtp, &npids);
	if (npids > 64) {
		cli_error("-p: %zu processes; pmon rdt monitors at most 64 (one resctrl group "
			  "each)",
			  npids);
		return CLI_USAGE;
	}
	if (mcpu_list) {
		long *v;
		size_t n;
		if (pmon_idlist__parse(mcpu_list, 4095, &v, &n)) {
			cli_error("--cpu: %s", pmon_errdetail());
			return CLI_USAGE;
		}
		if (n > MSR_MAX_CPUS) {
			free(v);
			cli_error("--cpu: %zu CPUs; --msr programs at most %d", n, MSR_MAX_CPUS);
			return CLI_USAGE;
		}
		for (size_t i = 0; i < n; i++)
			mcpus[nmcpus++] = (int)v[i];
		free(v);
	}

	if (cleanup && use_msr) {
		if (cmd) {
			cli_error("--cleanup takes no command: it restores the MSRs a killed "
				  "'pmon rdt --msr' left");
			return CLI_USAGE;
		}
		return msr_cleanup(msr_dev);
	}
	if (cleanup) {
		unsigned removed;
		if (pmon_rdt_cleanup(root, &removed)) {
			cli_error("%s", pmon_errdetail());
			return CLI_UNSUPPORTED;
		}
		printf("removed %u monitoring group(s) left by pmon runs that are gone\n", removed);
		return CLI_OK;
	}
	if (!cmd && !npids && !all_cpus && !cpulist) {
		cli_error("nothing to monitor: give a command ('pmon rdt -- CMD'), -p PID, -C CPUS "
			  "or -a");
		return CLI_USAGE;
	}
	if ((cmd != NULL) + (npids > 0) + all_cpus + (cpulist != NULL) > 1 &&
	    !(cmd && (all_cpus || cpulist))) {
		cli_error("give one target: a command, -p, -C or -a (a command may go with -C/-a: "
			  "it then only sets how long to monitor)");
		return CLI_USAGE;
	}
	if ((msr_dev || cpuid_file || nmcpus) && !use_msr) {
		cli_error("--msr-device, --cpuid-file and --cpu go with --msr");
		return CLI_USAGE;
	}
	if (plot && use_msr) {
		cli_error("--plot goes with the resctrl interface, not --msr, for now");
		return CLI_USAGE;
	}
	/* The picture's name is checked before anything runs (issue #14.7). */
	if (plot && (!cli_check_output_path(plot, "--plot") || !cli_plot_name_ok(plot)))
		return CLI_USAGE;
	if (use_msr)
		return run_msr(cmd, msr_dev, cpuid_file, mcpus, nmcpus, (unsigned)rmid, interval,
			       count, sep, json);
	struct rdt_args ra = { interval, count,	   events, root, sep,	json, plot,
			       cpulist,	 all_cpus, cmd,	   pids, npids, *tgtp };
	return run_resctrl(&ra);
}
