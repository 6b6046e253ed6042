// SPDX-License-Identifier: MIT
/*
 * pmon rdpmc: the RDPMC instruction itself, as the first two seeds specify
 * it. The ECX value is built and checked against the SDM's rules first (an
 * invalid one is never executed); then pmon finds out whether ring 3 may
 * read counters, executes RDPMC under a fault guard, and when it faults
 * says which of the seed's #GP conditions applied. --allow-user/--restore
 * change the core PMU's sysfs rdpmc mode, only when asked.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli.h"
#include <pmon/pmon.h>

static sigjmp_buf fault_jmp;
static volatile sig_atomic_t fault_sig;

static void on_fault(int sig)
{
	fault_sig = sig;
	siglongjmp(fault_jmp, 1);
}

enum ser { SER_CPUID, SER_LFENCE, SER_NONE };

static void fence(enum ser s)
{
	if (s == SER_CPUID)
		pmon_serialize();
	else if (s == SER_LFENCE)
		pmon_lfence();
}

/* Execute RDPMC @n times; 0, or the signal that ended it. */
static int guarded_rdpmc(uint32_t ecx, enum ser s, uint64_t *vals, unsigned n)
{
	struct sigaction sa = { .sa_handler = on_fault }, old_segv, old_ill;

	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGILL, &sa, &old_ill);
	fault_sig = 0;
	if (sigsetjmp(fault_jmp, 1) == 0) {
		for (unsigned i = 0; i < n; i++) {
			fence(s);
			vals[i] = pmon_rdpmc(ecx);
			fence(s);
		}
	}
	sigaction(SIGSEGV, &old_segv, NULL);
	sigaction(SIGILL, &old_ill, NULL);
	return fault_sig;
}

/* The one counter to read: --gp/--fixed/--metrics N or --ecx VALUE. */
struct counter {
	enum pmon_pmc_type type;
	unsigned long index;
	uint64_t ecx;
	bool have_sel, have_ecx;
};

static int opt_counter(const struct cli_option *opt, const char *arg)
{
	struct counter *c = opt->value;
	char name[16];

	if (c->have_sel || c->have_ecx) {
		cli_error("give one counter: --gp, --fixed, --metrics or --ecx");
		return CLI_USAGE;
	}
	if (!strcmp(opt->long_name, "ecx")) {
		bool hex = arg[0] == '0' && (arg[1] == 'x' || arg[1] == 'X');
		if (cli_parse_u64(hex ? arg + 2 : arg, hex ? 16 : 10, &c->ecx) ||
		    c->ecx > 0xffffffffULL) {
			cli_error("--ecx '%s' is not a 32-bit value", arg);
			return CLI_USAGE;
		}
		c->have_ecx = true;
		return CLI_OK;
	}
	snprintf(name, sizeof(name), "--%s", opt->long_name);
	if (!cli_parse_uint(arg, 0x7fffffff, name, &c->index))
		return CLI_USAGE;
	c->type = opt->long_name[0] == 'g' ? PMON_PMC_GP
		: opt->long_name[0] == 'f' ? PMON_PMC_FIXED
					   : PMON_PMC_METRICS;
	c->have_sel = true;
	return CLI_OK;
}

struct why {
	char text[400];
};

/* The seed's #GP(0) conditions: CR4.PCE clear at CPL 3, or an invalid
 * counter. Find which applies here. */
static void explain(const struct pmon_kernel_info *k, const struct pmon_cpu_info *ci, int open_err,
		    bool mapped, struct why *w)
{
	const char *hv = ci->id.hv_name ? ci->id.hv_name : "the hypervisor";

	if (!k->core_pmu[0]) {
		snprintf(
			w->text, sizeof(w->text),
			"CR4.PCE clear and CPL 3: this VM exposes no PMU (%s gives the guest none; "
			"the kernel registered no core PMU, so it never allows RDPMC in user "
			"space; "
			"see 'pmon info')",
			ci->id.hypervisor ? hv : "the machine");
	} else if (k->rdpmc_mode == 0) {
		snprintf(w->text, sizeof(w->text),
			 "CR4.PCE clear and CPL 3: the %s PMU's rdpmc sysfs mode is 0 (never); as "
			 "root, 'pmon rdpmc --allow-user' sets it to 2",
			 k->core_pmu);
	} else if (!mapped) {
		snprintf(w->text, sizeof(w->text),
			 "CR4.PCE clear and CPL 3: rdpmc mode %d lets only a process with an "
			 "mmapped event read counters, and pmon could not open one (%s)",
			 k->rdpmc_mode, strerror(-open_err));
	} else {
		snprintf(w->text, sizeof(w->text),
			 "invalid counter index: CR4.PCE is set for this process, so the CPU "
			 "rejected ECX itself (a hypervisor may hide counters CPUID describes)");
	}
}

static int change_mode(const char *sysfs, bool allow)
{
	char path[512];
	int was = -1, now = 2;
	int err = allow ? pmon_rdpmc_mode_allow(sysfs, path, sizeof(path), &was)
			: pmon_rdpmc_mode_restore(sysfs, path, sizeof(path), &was, &now);

	if (err) {
		cli_error("%s", pmon_errdetail());
		return err == -ENOENT || err == -EINVAL ? CLI_USAGE
			: err == -EIO			? CLI_FAIL
							: CLI_UNSUPPORTED;
	}
	if (allow)
		printf("%s: %d -> 2 (any process may execute RDPMC); 'pmon rdpmc --restore' puts "
		       "%d back\n",
		       path, was, was);
	else
		printf("%s: %d -> %d (restored)\n", path, was, now);
	return CLI_OK;
}

int cmd_rdpmc(int argc, char **argv)
{
	static const char *const serializers[] = { "cpuid", "lfence", "none", NULL };
	struct counter ctr = { .type = PMON_PMC_GP };
	unsigned long repeat = 1;
	bool fast = false;
	int mode = 0; /* 1 allow, 2 restore */
	int ser = SER_LFENCE;
	const char *file = NULL, *sysfs = NULL;
	const struct cli_option options[] = {
		CLI_OPT_TEXT(
			"Builds ECX by the SDM's rules (type 0 GP, 4000H fixed, 2000H metrics; "
			"legacy\n"
			"index + ECX[31] fast read), refuses an invalid one with the rule it "
			"breaks,\n"
			"then executes RDPMC and explains a fault."),
		CLI_OPT_CALLBACK(0, "gp", &ctr, "N", opt_counter, "general-purpose counter N"),
		CLI_OPT_CALLBACK(0, "fixed", &ctr, "N", opt_counter, "fixed-function counter N"),
		CLI_OPT_CALLBACK(0, "metrics", &ctr, "N", opt_counter,
				 "performance metric N (PERF_METRICS)"),
		CLI_OPT_CALLBACK(0, "ecx", &ctr, "VALUE", opt_counter,
				 "this ECX as it is, checked by the same rules"),
		CLI_OPT_FLAG(0, "fast", &fast, "ECX[31]: a fast read of bits 31:0"),
		CLI_OPT_CHOICE(0, "serialize", &ser, "cpuid|lfence|none", serializers,
			       "the fence before and after (default lfence):\n"
			       "RDPMC is not serializing"),
		CLI_OPT_UINT_MIN(0, "repeat", &repeat, "N", 1, 1000000, "at least 1",
				 "read N times back to back and say whether the\n"
				 "values were monotonic"),
		CLI_OPT_CPUID_FILE(0, &file, "only validate ECX, for the CPU of that dump"),
		CLI_OPT_SET_INT(0, "allow-user", &mode, 1,
				"let ring 3 read counters (sysfs rdpmc mode 2; root)"),
		CLI_OPT_SET_INT(0, "restore", &mode, 2,
				"put back the mode --allow-user found (root)"),
		CLI_OPT_STRING(0, "sysfs-root", &sysfs, "DIR",
			       "the sysfs whose rdpmc mode to change (tests: a copy)"),
		CLI_OPT_END(),
	};
	struct pmon_cpu_info ci;
	struct pmon_rdpmc_sel sel;
	int err = cli_parse_options(
		"rdpmc",
		"usage: pmon rdpmc (--gp N | --fixed N | --metrics N | --ecx VALUE) [--fast]\n"
		"                  [--serialize cpuid|lfence|none] [--repeat N] [--cpuid-file F]\n"
		"       pmon rdpmc --allow-user | --restore      (root; changes the sysfs rdpmc "
		"mode)",
		options, CLI_PARSE_STOP_AT_OPERAND | CLI_PARSE_NO_OPERANDS, argc, argv);

	if (err <= 0)
		return -err;
	if (mode)
		return change_mode(sysfs, mode == 1);
	if (!ctr.have_sel && !ctr.have_ecx) {
		cli_error("give a counter: --gp N, --fixed N, --metrics N or --ecx VALUE");
		return CLI_USAGE;
	}

	/* One CPU from here on: the CPUID that validates the request, the
	 * IA32_PERF_CAPABILITIES read and the RDPMC executed all concern the
	 * CPU pmon stays on (a hybrid part's core types differ in all three). */
	int cpu = -1;
	if (!file && (cpu = pmon_thread_pin(-1)) < 0)
		cli_warn("%s: CPUID and RDPMC may run on different CPUs", pmon_errdetail());
	if (!cli_cpu_decode(file, &ci))
		return CLI_USAGE;

	/* PERF_METRICS_AVAILABLE, where IA32_PERF_CAPABILITIES can be read. */
	enum pmon_tristate metrics = PMON_UNKNOWN;
	uint64_t caps;
	if (!ci.pm.perf_capabilities)
		metrics = PMON_NO;
	else if (!file && cpu >= 0 && !pmon_msr_read(NULL, cpu, 0x345, &caps))
		metrics = (caps >> 15) & 1 ? PMON_YES : PMON_NO;

	if (ctr.have_ecx)
		err = pmon_rdpmc_validate(&ci.pm, (uint32_t)ctr.ecx, metrics, &sel);
	else
		err = pmon_rdpmc_encode(&ci.pm, ctr.type, (unsigned)ctr.index, fast, metrics, &sel);
	if (err) {
		/* Without counters the decoder's reason is the rule that broke. */
		cli_error("RDPMC with ECX=%08" PRIX32 "H %s: %s", sel.ecx,
			  err == -PMON_ERRNO__RDPMC_UNKNOWN ? "may or may not be valid"
							    : "would raise #GP(0)",
			  ci.pm.model == PMON_PERFMON_NONE && ci.pm_none_why ? ci.pm_none_why
									     : sel.rule);
		return CLI_USAGE;
	}
	printf("ECX = %08" PRIX32 "H: valid by the SDM's rules (%s)%s\n", sel.ecx, sel.rule,
	       ci.pm_hv_unverifiable
		       ? "; CPUID cannot tell whether the hypervisor provides these counters"
		       : "");
	if (file)
		return CLI_OK; /* another machine: nothing to execute here */

	/* May ring 3 read counters? An mmapped event makes the kernel set CR4.PCE
	 * for this process in rdpmc mode 1; open one on the same kind of counter. */
	struct pmon_kernel_info k;
	struct pmon_evlist *ev = pmon_evlist__new(NULL);
	struct pmon_self *self = NULL;
	int open_err = -ENOENT;
	pmon_kernel_probe(NULL, &k);
	if (ev && !pmon_evlist__add(ev, "cycles"))
		open_err = (self = pmon_self__open(pmon_evlist__event(ev, 0))) ? 0 : -errno;

	uint64_t *vals = calloc(repeat, sizeof(*vals));
	if (!vals) {
		pmon_self__close(self);
		pmon_evlist__free(ev);
		return CLI_FAIL;
	}
	int sig = guarded_rdpmc(sel.ecx, (enum ser)ser, vals, (unsigned)repeat);
	int rc = CLI_OK;
	if (sig) {
		struct why w;
		explain(&k, &ci, open_err, self != NULL, &w);
		cli_error("RDPMC with ECX=%08" PRIX32 "H raised %s: %s", sel.ecx,
			  sig == SIGILL ? "#UD" : "#GP(0)", w.text);
		/* A valid request this machine refuses: not possible here (3);
		 * one the SDM's rules refuse is bad input (2, above). */
		rc = CLI_UNSUPPORTED;
	} else {
		uint64_t v = vals[repeat - 1];
		printf("EDX:EAX = %08" PRIX32 ":%08" PRIX32 "  value %" PRIu64
		       " (%u-bit counter%s)\n",
		       (uint32_t)(v >> 32), (uint32_t)v, v, sel.width,
		       sel.fast ? ", fast read: bits 31:0" : "");
		if (repeat > 1) {
			unsigned back = 0;
			for (unsigned long i = 1; i < repeat; i++)
				back += vals[i] < vals[i - 1];
			printf("%lu back-to-back reads with %s: %s (%u decreases)\n", repeat,
			       ser == SER_NONE		  ? "no serialization"
				       : ser == SER_CPUID ? "CPUID"
							  : "LFENCE",
			       back ? "not monotonic" : "monotonic", back);
		}
	}
	free(vals);
	pmon_self__close(self);
	pmon_evlist__free(ev);
	return rc;
}
