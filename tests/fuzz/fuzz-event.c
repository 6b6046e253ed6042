// SPDX-License-Identifier: MIT
/* libFuzzer harness: the event-list parser (perf syntax, PMU terms, groups,
 * modifiers, sysfs aliases, tracepoints) against a fake sysfs and tracefs
 * made once per process, so that PMU terms and tracepoints are parsed on any
 * machine (a VM without a core PMU, an empty tracefs), and without libpfm4
 * (its tables are not under test here, and cost 20x the time per input).
 * The tree follows the kernel's ABI documents
 * (sysfs-bus-event_source-devices-format/-events) and what an Intel core
 * PMU, RAPL, an uncore PMU and the msr PMU publish. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <pmon/pmon.h>

#include "fuzz-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char sysfs[600], tracefs[600];

static const char *const tree[][2] = {
	{ "bus/event_source/devices/cpu/type", "4\n" },
	{ "bus/event_source/devices/cpu/format/event", "config:0-7\n" },
	{ "bus/event_source/devices/cpu/format/umask", "config:8-15\n" },
	{ "bus/event_source/devices/cpu/format/edge", "config:18\n" },
	{ "bus/event_source/devices/cpu/format/pc", "config:19\n" },
	{ "bus/event_source/devices/cpu/format/any", "config:21\n" },
	{ "bus/event_source/devices/cpu/format/inv", "config:23\n" },
	{ "bus/event_source/devices/cpu/format/cmask", "config:24-31\n" },
	{ "bus/event_source/devices/cpu/format/in_tx", "config:32\n" },
	{ "bus/event_source/devices/cpu/format/ldlat", "config1:0-15\n" },
	{ "bus/event_source/devices/cpu/format/offcore_rsp", "config1:0-63\n" },
	{ "bus/event_source/devices/cpu/format/frontend", "config1:0-23\n" },
	{ "bus/event_source/devices/cpu/format/split", "config:0-3,8-11,32-35\n" },
	{ "bus/event_source/devices/cpu/events/cpu-cycles", "event=0x3c\n" },
	{ "bus/event_source/devices/cpu/events/instructions", "event=0xc0\n" },
	{ "bus/event_source/devices/cpu/events/ref-cycles", "event=0x00,umask=0x03\n" },
	{ "bus/event_source/devices/cpu/events/branch-misses", "event=0xc5\n" },
	{ "bus/event_source/devices/cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n" },
	{ "bus/event_source/devices/cpu/events/topdown-retiring", "event=0x00,umask=0x80\n" },
	{ "bus/event_source/devices/cpu/events/topdown-retiring.scale", "5\n" },
	{ "bus/event_source/devices/cpu/events/slots", "event=0x00,umask=0x4\n" },
	{ "bus/event_source/devices/cpu/events/bad-alias", "event=zz,nosuch=1\n" },
	{ "bus/event_source/devices/cpu/caps/pmu_name", "skylake\n" },
	{ "bus/event_source/devices/cpu/cpus", "0-3\n" },
	{ "bus/event_source/devices/software/type", "1\n" },
	{ "bus/event_source/devices/tracepoint/type", "2\n" },
	{ "bus/event_source/devices/breakpoint/type", "5\n" },
	{ "bus/event_source/devices/msr/type", "9\n" },
	{ "bus/event_source/devices/msr/format/event", "config:0-63\n" },
	{ "bus/event_source/devices/msr/events/tsc", "event=0x00\n" },
	{ "bus/event_source/devices/msr/events/aperf", "event=0x01\n" },
	{ "bus/event_source/devices/power/type", "20\n" },
	{ "bus/event_source/devices/power/format/event", "config:0-7\n" },
	{ "bus/event_source/devices/power/events/energy-pkg", "event=0x02\n" },
	{ "bus/event_source/devices/power/events/energy-pkg.scale",
	  "2.3283064365386962890625e-10\n" },
	{ "bus/event_source/devices/power/events/energy-pkg.unit", "Joules\n" },
	{ "bus/event_source/devices/power/events/energy-cores.scale", "not a number\n" },
	{ "bus/event_source/devices/power/events/energy-cores", "event=0x01\n" },
	{ "bus/event_source/devices/uncore_imc_0/type", "14\n" },
	{ "bus/event_source/devices/uncore_imc_0/format/event", "config:0-7\n" },
	{ "bus/event_source/devices/uncore_imc_0/format/umask", "config:8-15\n" },
	{ "bus/event_source/devices/uncore_imc_0/events/cas_count_read",
	  "event=0x04,umask=0x03\n" },
	{ "bus/event_source/devices/uncore_imc_0/events/cas_count_read.scale", "6.103515625e-5\n" },
	{ "bus/event_source/devices/uncore_imc_0/events/cas_count_read.unit", "MiB\n" },
	{ "bus/event_source/devices/uncore_imc_0/cpumask", "0\n" },
};

static const char *const tracepoints[][2] = {
	{ "events/sched/sched_switch/id", "316\n" },
	{ "events/sched/sched_wakeup/id", "317\n" },
	{ "events/sched/sched_process_exec/id", "311\n" },
	{ "events/syscalls/sys_enter_read/id", "640\n" },
	{ "events/raw_syscalls/sys_enter/id", "21\n" },
	{ "events/bad/no_number/id", "abc\n" },
	{ "events/bad/huge/id", "99999999999999999999999\n" },
	{ "events/bad/empty/id", "" },
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(sysfs, sizeof(sysfs), "%s/sys", fuzz_tmpdir());
	snprintf(tracefs, sizeof(tracefs), "%s/tracing", fuzz_tmpdir());
	for (size_t i = 0; i < sizeof(tree) / sizeof(tree[0]); i++)
		fuzz_puts(sysfs, tree[i][0], tree[i][1]);
	for (size_t i = 0; i < sizeof(tracepoints) / sizeof(tracepoints[0]); i++)
		fuzz_puts(tracefs, tracepoints[i][0], tracepoints[i][1]);

	/* The fake tree must work, or the harness would fuzz error paths only. */
	struct pmon_event_opts o = {
		.sz = sizeof(o), .sysfs_root = sysfs, .tracefs_root = tracefs, .no_pfm = true
	};
	struct pmon_evlist *l = pmon_evlist__new(&o);
	if (!l ||
	    pmon_evlist__add(l,
			     "cpu/event=0x3c,umask=1,cmask=2/u,cpu/mem-loads/,"
			     "sched:sched_switch,power/energy-pkg/,uncore_imc_0/"
			     "cas_count_read/,msr/tsc/") ||
	    pmon_evlist__count(l) != 6) {
		fprintf(stderr, "fuzz-event: the fake sysfs does not parse: %s\n",
			pmon_errdetail());
		abort();
	}
	pmon_evlist__free(l);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pmon_event_opts o = {
		.sz = sizeof(o), .sysfs_root = sysfs, .tracefs_root = tracefs, .no_pfm = true
	};
	char spec[1024];
	struct pmon_evlist *l;

	if (size >= sizeof(spec))
		return 0;
	memcpy(spec, data, size);
	spec[size] = '\0';
	l = pmon_evlist__new(&o);
	if (!l)
		return 0;
	if (pmon_evlist__add(l, spec) == 0) {
		for (size_t i = 0; i < pmon_evlist__count(l); i++) {
			const struct pmon_event_desc *d = pmon_evlist__event(l, i);
			if (d->group < 0 || (size_t)d->group > i)
				__builtin_trap(); /* a leader always comes first */
		}
		struct pmon_evlist *s = pmon_evlist__slice(l, 0, pmon_evlist__count(l));
		pmon_evlist__free(s);
	}
	pmon_evlist__free(l);
	return 0;
}
