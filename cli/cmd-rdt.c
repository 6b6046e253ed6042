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
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include <pmon/pmon.h>

static volatile sig_atomic_t got_sig;
static volatile pid_t child;

static void on_sig(int s)
{
	got_sig = s;
	if (child > 0)
		kill(child, s);
}

static void on_chld(int s)
{
	(void)s;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pmon rdt info [--cpuid-file FILE] [--resctrl-root DIR]\n"
		"       pmon rdt --cleanup [--resctrl-root DIR]\n"
		"       pmon rdt [options] (-- command | -p PID[,PID])\n\n"
		"  -I, --interval MS    print every MS milliseconds (default 1000)\n"
		"  -n, --count N        stop after N intervals\n"
		"  -e, --event LIST     core events of the same target, per second\n"
		"  -x, --field-separator SEP   CSV;  -j, --json   JSON lines\n"
		"  --resctrl-root DIR   another resctrl mount (tests: an emulated tree)\n\n"
		"LLC occupancy in bytes, total and local memory bandwidth in bytes/s, per L3\n"
		"domain; Error, Unavailable and Unassigned are shown as such.\n");
}

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

static int do_info(int argc, char **argv)
{
	const char *file = NULL, *root = NULL;
	struct pmon_cpuid *snap;
	struct pmon_cpu_info ci;
	struct pmon_rdt_caps caps;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--cpuid-file") && i + 1 < argc)
			file = argv[++i];
		else if (!strcmp(argv[i], "--resctrl-root") && i + 1 < argc)
			root = argv[++i];
		else {
			cli_error("rdt info: unexpected argument '%s'", argv[i]);
			return CLI_USAGE;
		}
	}
	snap = file ? pmon_cpuid__new_file(file) : pmon_cpuid__new_live();
	if (!snap || pmon_cpu_decode(snap, &ci)) {
		cli_error("%s", pmon_errdetail());
		pmon_cpuid__free(snap);
		return CLI_USAGE;
	}
	pmon_cpuid__free(snap);
	const struct pmon_rdt *r = &ci.rdt;
	printf("CMT/MBM enumeration (SDM 17.16.3)%s%s\n", file ? " of " : "", file ? file : "");
	printf("  1 CPUID.00H:EAX max leaf    %02" PRIX32 "H%s\n", r->max_leaf,
	       r->max_leaf < 7 ? " (< 7: no leaf 07H)" : "");
	printf("  2 CPUID.(07H,0):EBX[12] PQM %d\n", r->pqm);
	if (r->pqm) {
		printf("  3 CPUID.(0FH,0): max RMID %" PRIu32 ", EDX %#" PRIx32 " (L3 %s)\n",
		       r->max_rmid, r->resources, r->l3 ? "yes" : "no");
		if (r->l3)
			printf("  4 CPUID.(0FH,1): L3 max RMID %" PRIu32 ", upscale %" PRIu32
			       " bytes, counter width %u, events:%s%s%s\n",
			       r->l3_max_rmid, r->upscale, r->counter_width,
			       r->occupancy ? " llc_occupancy" : "",
			       r->mbm_total ? " mbm_total_bytes" : "",
			       r->mbm_local ? " mbm_local_bytes" : "");
		printf("  5 other resource types:     %s\n", r->other_resources ? "yes" : "none");
	}
	if (file && !root)
		return CLI_OK;
	if (pmon_rdt_caps(root, &caps)) {
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

/* --msr: the seed's interface, on CPUs rather than tasks. */
static int run_msr(char **cmd, const char *dev, const char *cpuid_file, const int *cpus_in,
		   size_t ncpus_in, unsigned rmid, unsigned long interval, unsigned long count,
		   const char *sep, bool json)
{
	struct pmon_cpuid *snap =
		cpuid_file ? pmon_cpuid__new_file(cpuid_file) : pmon_cpuid__new_live();
	struct pmon_cpu_info ci;
	struct pmon_kernel_info k;
	struct pmon_rdt_msr *m = NULL;
	int cpus[256], status = 0, rc = CLI_OK, err;
	size_t ncpus = ncpus_in;
	struct pmon_child ch = { .pid = -1, .go_fd = -1, .err_fd = -1 };

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
	else
		for (long i = 0; i < sysconf(_SC_NPROCESSORS_ONLN) && ncpus < 256; i++)
			cpus[ncpus++] = (int)i;
	pmon_kernel_probe(NULL, &k);
	err = pmon_rdt_msr__start(dev, &ci, cpus, ncpus, rmid, k.resctrl_mounted && !dev, &m);
	if (err) {
		cli_error("--msr: %s", pmon_errdetail());
		return err == -EINVAL ? CLI_USAGE : CLI_UNSUPPORTED;
	}
	struct sigaction sa = { .sa_handler = on_sig }, sc = { .sa_handler = on_chld };
	sigemptyset(&sa.sa_mask);
	sigemptyset(&sc.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGCHLD, &sc, NULL);
	err = pmon_child__fork(cmd, &ch);
	if (!err) {
		child = ch.pid;
		err = pmon_child__start(&ch);
	}
	if (err) {
		cli_error("cannot run '%s': %s", cmd[0], strerror(-err));
		rc = 127;
	}
	struct pmon_rdt_domain a, b;
	double t0 = now(), tp = t0, step = (double)interval / 1e3, next = t0 + step;
	unsigned long printed = 0;
	bool have_status = false;
	if (!err && pmon_rdt_msr__read(m, &a)) {
		cli_error("--msr: %s", pmon_errdetail());
		rc = CLI_FAIL;
	}
	if (sep)
		printf("time%sdomain%sllc_occupancy_bytes%smbm_total_bytes_per_s%smbm_local_bytes_"
		       "per_s\n",
		       sep, sep, sep, sep);
	else if (!json)
		printf("#%11s %-14s %16s %16s %16s\n", "time", "rmid@cpu", "llc_occupancy[B]",
		       "mbm_total[B/s]", "mbm_local[B/s]");
	while (!err && rc == CLI_OK) {
		struct timespec ts = { .tv_sec = (time_t)next,
				       .tv_nsec = (long)((next - (double)(time_t)next) * 1e9) };
		bool done = false;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		if (waitpid(ch.pid, &status, WNOHANG) == ch.pid)
			have_status = done = true;
		if (got_sig)
			done = true;
		double tn = now();
		if (!done && tn < next)
			continue;
		if (pmon_rdt_msr__read(m, &b)) {
			cli_error("--msr: %s", pmon_errdetail());
			rc = CLI_FAIL;
			break;
		}
		char b1[32], b2[32], b3[32];
		double tot, loc;
		const char *occ = fmt_value(&b.occupancy, b1, sizeof(b1));
		const char *rt = fmt_rate(&a.total, &b.total, tn - tp, b2, sizeof(b2), &tot);
		const char *rl = fmt_rate(&a.local, &b.local, tn - tp, b3, sizeof(b3), &loc);
		if (json)
			printf("{\"time\":%.3f,\"domain\":\"%s\",\"llc_occupancy\":\"%s\",\"mbm_"
			       "total_rate\":\"%s\","
			       "\"mbm_local_rate\":\"%s\"}\n",
			       tn - t0, b.name, occ, rt, rl);
		else if (sep)
			printf("%.3f%s%s%s%s%s%s%s%s\n", tn - t0, sep, b.name, sep, occ, sep, rt,
			       sep, rl);
		else
			printf("%12.3f %-14s %16s %16s %16s\n", tn - t0, b.name, occ, rt, rl);
		fflush(stdout);
		a = b;
		tp = tn;
		if (done || (count && ++printed >= count))
			break;
		next += step;
	}
	if (ch.pid > 0 && !have_status) {
		kill(ch.pid, SIGTERM);
		pmon_child__wait(&ch, &status, NULL);
		have_status = !count || printed < count;
	}
	child = 0;
	int rerr = pmon_rdt_msr__restore(m);
	size_t nw;
	const struct pmon_msr_write_rec *w = pmon_rdt_msr__writes(m, &nw);
	fprintf(stderr, " MSR writes (the last %zu of %zu), in order:\n", nw < 12 ? nw : (size_t)12,
		nw);
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
	if (rc == CLI_OK && have_status)
		rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	else if (rc == CLI_OK && got_sig)
		rc = 128 + got_sig;
	return rc;
}

int cmd_rdt(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "interval", required_argument, NULL, 'I' },
		{ "count", required_argument, NULL, 'n' },
		{ "event", required_argument, NULL, 'e' },
		{ "pid", required_argument, NULL, 'p' },
		{ "field-separator", required_argument, NULL, 'x' },
		{ "json", no_argument, NULL, 'j' },
		{ "resctrl-root", required_argument, NULL, 'R' },
		{ "cleanup", no_argument, NULL, 'K' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "cpus", required_argument, NULL, 'L' },
		{ "plot", required_argument, NULL, 'P' },
		{ "msr", no_argument, NULL, 'M' },
		{ "msr-device", required_argument, NULL, 'D' },
		{ "cpuid-file", required_argument, NULL, 'U' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "rmid", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long interval = 1000, count = 0, ul;
	const char *events = NULL, *root = NULL, *sep = NULL;
	bool json = false, cleanup = false, use_msr = false;
	const char *plot = NULL, *cpulist = NULL;
	bool all_cpus = false;
	char plotlog[] = "/tmp/pmon-rdtplot-XXXXXX";
	FILE *pf = NULL;
	const char *msr_dev = NULL, *cpuid_file = NULL;
	unsigned long rmid = 1;
	int mcpus[256];
	size_t nmcpus = 0;
	pid_t pids[64];
	size_t npids = 0;
	int c, rc = CLI_OK, err;

	if (argc > 1 && !strcmp(argv[1], "info"))
		return do_info(argc - 1, argv + 1);
	optind = 1;
	while ((c = getopt_long(argc, argv, "+I:n:e:p:x:jhaC:", longopts, NULL)) != -1) {
		if (c == 'C')
			c = 'L';
		switch (c) {
		case 'I':
			if (!cli_parse_uint(optarg, 3600000, "-I", &interval))
				return CLI_USAGE;
			if (interval < 10) {
				cli_error(
					"-I %lu: at least 10 ms (resctrl updates about every 1 s)",
					interval);
				return CLI_USAGE;
			}
			break;
		case 'n':
			if (!cli_parse_uint(optarg, 100000000, "-n", &count))
				return CLI_USAGE;
			break;
		case 'e':
			events = optarg;
			break;
		case 'p': {
			char *copy = strdup(optarg), *save = NULL;
			for (char *t = strtok_r(copy, ",", &save); t;
			     t = strtok_r(NULL, ",", &save)) {
				if (!cli_parse_uint(t, 1u << 30, "-p", &ul) || !ul || npids == 64) {
					free(copy);
					return CLI_USAGE;
				}
				pids[npids++] = (pid_t)ul;
			}
			free(copy);
			break;
		}
		case 'x':
			sep = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'R':
			root = optarg;
			break;
		case 'K':
			cleanup = true;
			break;
		case 'a':
			all_cpus = true;
			break;
		case 'L':
			cpulist = optarg;
			break;
		case 'M':
			use_msr = true;
			break;
		case 'P':
			plot = optarg;
			break;
		case 'D':
			msr_dev = optarg;
			break;
		case 'U':
			cpuid_file = optarg;
			break;
		case 'r':
			if (!cli_parse_uint(optarg, 1u << 20, "--rmid", &rmid))
				return CLI_USAGE;
			break;
		case 'c': {
			char *copy = strdup(optarg), *save = NULL;
			for (char *t = strtok_r(copy, ",", &save); t;
			     t = strtok_r(NULL, ",", &save)) {
				if (!cli_parse_uint(t, 4095, "--cpu", &ul) || nmcpus == 256) {
					free(copy);
					return CLI_USAGE;
				}
				mcpus[nmcpus++] = (int)ul;
			}
			free(copy);
			break;
		}
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			usage(stderr);
			return CLI_USAGE;
		}
	}
	char **cmd = optind < argc ? argv + optind : NULL;

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
	if (use_msr)
		return run_msr(cmd, msr_dev, cpuid_file, mcpus, nmcpus, (unsigned)rmid, interval,
			       count, sep, json);
	/* What the machine offers: an explicit tree speaks for itself;
	 * otherwise CPUID first (the seed's steps), then the mounted resctrl. */
	if (!root) {
		struct pmon_cpuid *snap = pmon_cpuid__new_live();
		struct pmon_cpu_info ci;
		if (snap && !pmon_cpu_decode(snap, &ci) && !(ci.rdt.pqm && ci.rdt.l3)) {
			pmon_cpuid__free(snap);
			cli_error("this CPU exposes no RDT monitoring (CPUID.(07H,0):EBX[12] PQM = "
				  "%d%s); "
				  "see 'pmon rdt info'",
				  ci.rdt.pqm, ci.rdt.pqm ? ", no L3 monitoring in leaf 0FH" : "");
			return CLI_USAGE;
		}
		pmon_cpuid__free(snap);
	}
	struct pmon_rdt_caps caps;
	if (pmon_rdt_caps(root, &caps)) {
		cli_error("%s", pmon_errdetail());
		return CLI_UNSUPPORTED;
	}
	unsigned stale = 0;
	pmon_rdt_cleanup(root, &stale); /* a crashed earlier run's groups */
	if (stale)
		cli_warn("removed %u monitoring group(s) left by an earlier pmon run", stale);

	struct pmon_evlist *ev = NULL;
	if (events) {
		ev = pmon_evlist__new(NULL);
		if (!ev || pmon_evlist__add(ev, events)) {
			cli_error("%s", pmon_errdetail());
			pmon_evlist__free(ev);
			return CLI_USAGE;
		}
	}
	/* One monitoring group per target: the command, each -p process, the
	 * CPUs of -C; -a reads the root group (every task). */
	struct rtarget {
		char label[48];
		struct pmon_rdt_group *g;
		struct pmon_rdt_reading *a, *b;
	} tg[64];
	size_t ntg = 0;
	memset(tg, 0, sizeof(tg));
	err = 0;
	if (all_cpus) {
		snprintf(tg[0].label, sizeof(tg[0].label), "all");
		err = pmon_rdt_group__root(root, &tg[ntg++].g);
	} else if (cpulist) {
		snprintf(tg[0].label, sizeof(tg[0].label), "cpus %s", cpulist);
		err = pmon_rdt_group__new(root, &tg[ntg++].g);
		if (!err)
			err = pmon_rdt_group__set_cpus(tg[0].g, cpulist);
	} else if (cmd) {
		snprintf(tg[0].label, sizeof(tg[0].label), "cmd");
		err = pmon_rdt_group__new(root, &tg[ntg++].g);
	} else {
		for (size_t i = 0; i < npids && !err; i++) {
			snprintf(tg[i].label, sizeof(tg[i].label), "pid %d", (int)pids[i]);
			err = pmon_rdt_group__new(root, &tg[ntg++].g);
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
		pmon_evlist__free(ev);
		return err == -ENOSPC || err == -EBUSY ? CLI_UNSUPPORTED : CLI_FAIL;
	}
	struct sigaction sa = { .sa_handler = on_sig }, sc = { .sa_handler = on_chld };
	sigemptyset(&sa.sa_mask);
	sigemptyset(&sc.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGCHLD, &sc, NULL);

	struct pmon_child ch = { .pid = -1, .go_fd = -1, .err_fd = -1 };
	struct pmon_counters *cnt = NULL;
	struct pmon_target t = { .sz = sizeof(t), .pid = -1, .inherit = true };
	int status = 0;
	bool have_status = false;
	if (cmd) {
		err = pmon_child__fork(cmd, &ch);
		if (!err && !all_cpus && !cpulist) /* before exec: children follow */
			err = pmon_rdt_group__add(tg[0].g, ch.pid, false);
		t.pid = ch.pid;
		t.enable_on_exec = true;
	} else {
		for (size_t i = 0; i < npids && !err; i++)
			err = pmon_rdt_group__add(tg[i].g, pids[i], true);
		t.tids = pids;
		t.ntids = npids;
	}
	/* Core events of the same target: the CPUs for -a and -C. */
	int ecpus[256];
	size_t necpus = 0;
	if (all_cpus || cpulist) {
		t.system_wide = true;
		t.pid = -1;
		t.tids = NULL;
		t.ntids = 0;
		t.enable_on_exec = false;
		for (const char *p = cpulist; p && *p && necpus < 256;) {
			char *end;
			long a = strtol(p, &end, 10), b = a;
			if (end == p)
				break;
			if (*end == '-')
				b = strtol(end + 1, &end, 10);
			for (long x = a; x <= b && necpus < 256; x++)
				ecpus[necpus++] = (int)x;
			p = *end == ',' ? end + 1 : end;
		}
		t.cpus = necpus ? ecpus : NULL;
		t.ncpus = necpus;
	}
	if (!err && ev) {
		cnt = pmon_counters__open(ev, &t);
		if (!cnt)
			err = -errno;
	}
	bool exec_failed = false;
	if (!err && cmd) {
		child = ch.pid;
		err = pmon_child__start(&ch);
		exec_failed = err != 0;
	}
	if (err) {
		if (exec_failed)
			cli_error("cannot run '%s': %s", cmd[0], strerror(-err));
		else
			cli_error("%s", pmon_errdetail());
		rc = exec_failed ? 127 : err == -ESRCH ? CLI_USAGE : CLI_FAIL;
		if (ch.pid > 0) {
			kill(ch.pid, SIGKILL);
			pmon_child__wait(&ch, NULL, NULL);
		}
		goto out;
	}

	size_t nev = ev ? pmon_evlist__count(ev) : 0;
	struct pmon_count *cur = nev ? calloc(nev, sizeof(*cur)) : NULL,
			  *prev = nev ? calloc(nev, sizeof(*prev)) : NULL;
	double t0 = now(), tprev = t0, step = (double)interval / 1e3, next = t0 + step;
	unsigned long printed = 0;
	if (nev && (!cur || !prev)) {
		cli_error("out of memory");
		rc = CLI_FAIL;
		goto loop_out;
	}
	if (plot) {
		int pfd = mkstemp(plotlog);
		pf = pfd >= 0 ? fdopen(pfd, "w") : NULL;
		if (!pf) {
			cli_error("--plot: cannot create a temporary log: %s", strerror(errno));
			rc = CLI_FAIL;
			goto loop_out;
		}
		fprintf(pf,
			"time,domain,llc_occupancy_bytes,mbm_total_bytes_per_s,mbm_local_bytes_per_"
			"s\n");
	}
	for (size_t k = 0; k < ntg; k++)
		pmon_rdt_group__read(tg[k].g, tg[k].a);
	if (!json && !sep)
		printf("#%11s %-10s %16s %16s %16s  %s\n", "time", "domain", "llc_occupancy[B]",
		       "mbm_total[B/s]", "mbm_local[B/s]", nev ? "events/s" : "");
	else if (sep)
		printf("time%sdomain%sllc_occupancy_bytes%smbm_total_bytes_per_s%smbm_local_bytes_"
		       "per_s\n",
		       sep, sep, sep, sep);
	for (;;) {
		struct timespec ts = { .tv_sec = (time_t)next,
				       .tv_nsec = (long)((next - (double)(time_t)next) * 1e9) };
		bool done = false;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		if (cmd && waitpid(ch.pid, &status, WNOHANG) == ch.pid) {
			have_status = done = true;
			child = 0;
		}
		if (!cmd && npids) {
			done = true;
			for (size_t i = 0; i < npids; i++)
				if (kill(pids[i], 0) == 0 || errno == EPERM)
					done = false;
		}
		if (got_sig)
			done = true;
		double tn = now();
		if (!done && tn < next)
			continue;
		if (cnt)
			pmon_counters__read(cnt, cur);
		double dt = tn - tprev;
		for (size_t k = 0; k < ntg; k++) {
			struct pmon_rdt_reading *ra = tg[k].a, *rb = tg[k].b;
			pmon_rdt_group__read(tg[k].g, rb);
			for (size_t i = 0; i < rb->n; i++) {
				const struct pmon_rdt_domain *d = &rb->d[i], *pd = NULL;
				char dname[160];
				/* Several targets: say whose domain it is. */
				if (ntg > 1)
					snprintf(dname, sizeof(dname), "%.48s:%.100s", tg[k].label,
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
				if (pf)
					fprintf(pf, "%.3f,%s,%s,%s,%s\n", tn - t0, dname, occ, rt,
						rl);
				if (json) {
					json_t *j = json_pack(
						"{s:f, s:s, s:s, s:s, s:s}", "time", tn - t0,
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
					for (size_t e = 0; k == 0 && i == 0 && e < nev; e++)
						if (cur[e].status == PMON_COUNT_OK)
							json_object_set_new(
								j, pmon_evlist__event(ev, e)->name,
								json_real((cur[e].value -
									   prev[e].value) /
									  dt));
					json_dumpf(j, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
					putchar('\n');
					json_decref(j);
				} else if (sep) {
					printf("%.3f%s%s%s%s%s%s%s%s\n", tn - t0, sep, dname, sep,
					       occ, sep, rt, sep, rl);
				} else {
					printf("%12.3f %-10s %16s %16s %16s ", tn - t0, dname, occ,
					       rt, rl);
					for (size_t e = 0; k == 0 && i == 0 && e < nev; e++) {
						if (cur[e].status == PMON_COUNT_OK)
							printf(" %s %.0f%s%s/s",
							       pmon_evlist__event(ev, e)->name,
							       (cur[e].value - prev[e].value) / dt,
							       pmon_evlist__event(ev, e)->unit[0]
								       ? " "
								       : "",
							       pmon_evlist__event(ev, e)->unit);
						else
							printf(" %s <not supported>",
							       pmon_evlist__event(ev, e)->name);
					}
					putchar('\n');
				}
			}
			tg[k].a = rb;
			tg[k].b = ra;
		}
		fflush(stdout);
		printed++;
		if (nev)
			memcpy(prev, cur, nev * sizeof(*cur));
		tprev = tn;
		if (done)
			break;
		if (count && printed >= count) {
			if (cmd && ch.pid > 0)
				kill(ch.pid, SIGTERM);
			break;
		}
		next += step;
	}
loop_out:
	if (pf) {
		fclose(pf);
		if (rc == CLI_OK) {
			char title[512] = "pmon rdt";
			size_t off = strlen(title);
			for (char **a = cmd; a && *a && off < sizeof(title); a++) {
				int k = snprintf(title + off, sizeof(title) - off, " %s", *a);
				if (k > 0)
					off += (size_t)k;
			}
			rc = plot_log(plotlog, plot, 900, 0, title);
		}
		unlink(plotlog);
	}
	free(cur);
	free(prev);
	if (cmd && !have_status) {
		pmon_child__wait(&ch, &status, NULL);
		have_status = !count || printed < count;
	}
	child = 0;
	if (rc == CLI_OK && have_status)
		rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	else if (rc == CLI_OK && got_sig)
		rc = 128 + got_sig;
out:
	pmon_counters__close(cnt);
	for (size_t k = 0; k < ntg; k++) {
		if (pmon_rdt_group__remove(tg[k].g) && rc == CLI_OK) {
			cli_error("%s", pmon_errdetail());
			rc = CLI_FAIL;
		}
		free(tg[k].a);
		free(tg[k].b);
	}
	pmon_evlist__free(ev);
	return rc;
}
