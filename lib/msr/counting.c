// SPDX-License-Identifier: MIT
/*
 * The MSR counting backend (pmon/msr.h): Intel's architectural counters
 * programmed directly through IA32_PERFEVTSELx / IA32_PMCx /
 * IA32_PERF_GLOBAL_CTRL (SDM Vol. 3B 21.2), for systems without perf_event,
 * like LIKWID's direct mode, but never silently: every register touched is
 * saved first, counters someone else enabled are refused, and everything
 * is put back, each write logged for the user to see. While the counters
 * are programmed, a state file holds the writes that put them back, so a
 * pmon killed meanwhile leaves a way out (pmon_msr_state__restore()).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include <pmon/cpu.h>
#include <pmon/event.h>
#include <pmon/msr.h>

#define MSR_PMC0 0xc1
#define MSR_A_PMC0 0x4c1 /* full-width alias (SDM Vol. 3B 21.2.6) */
#define MSR_PERFEVTSEL0 0x186
#define MSR_FIXED_CTR0 0x309
#define MSR_PERF_CAPABILITIES 0x345
#define MSR_FIXED_CTR_CTRL 0x38d
#define MSR_GLOBAL_CTRL 0x38f
#define PERF_CAP_FW_WRITE (1ULL << 13)
#define EVTSEL_USR (1u << 16)
#define EVTSEL_OS (1u << 17)
#define EVTSEL_EN (1u << 22)
#define EVTSEL_INT (1u << 20)
#define FIXED_REF_CYCLES 2 /* IA32_FIXED_CTR2: CPU_CLK_UNHALTED.REF_TSC */

/* Architectural events, SDM Vol. 3B Table 21-1: UMask << 8 | EventSelect. */
static const struct {
	uint64_t perf_id;
	uint32_t code;
	enum pmon_arch_event arch;
} arch_map[] = {
	{ PERF_COUNT_HW_CPU_CYCLES, 0x003c, PMON_ARCH_CORE_CYCLES },
	{ PERF_COUNT_HW_INSTRUCTIONS, 0x00c0, PMON_ARCH_INSTRUCTIONS },
	{ PERF_COUNT_HW_CACHE_REFERENCES, 0x4f2e, PMON_ARCH_LLC_REFERENCES },
	{ PERF_COUNT_HW_CACHE_MISSES, 0x412e, PMON_ARCH_LLC_MISSES },
	{ PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 0x00c4, PMON_ARCH_BRANCHES },
	{ PERF_COUNT_HW_BRANCH_MISSES, 0x00c5, PMON_ARCH_BRANCH_MISSES },
};

#define MAX_EV 16

struct saved {
	int cpu;
	unsigned width, fixed_width; /* this CPU's core type's (hybrid parts differ) */
	uint64_t global, fixed_ctrl;
	uint64_t sel[MAX_EV], pmc[MAX_EV], fixed_ctr[4];
	/* Found changed at the stop: someone else now owns these counters,
	 * so they are neither read nor put back. */
	uint32_t taken_gp;
	bool taken_fixed, lost_global;
	/* What the restore writes to the shared registers: the saved values
	 * (the state file's), or, at a live restore, each register's value now
	 * with only pmon's bits put back -- another user's changes during the
	 * run (perf reprogramming fixed counters 0/1) are theirs to keep. */
	uint64_t put_global, put_fixed_ctrl;
	uint64_t cur_global; /* GLOBAL_CTRL as read at the stop */
};

struct pmon_msr_counting {
	const char *device;
	size_t n; /* events */
	size_t ngp; /* of which on general-purpose counters, 0 .. ngp-1 */
	int slot[MAX_EV]; /* event i: GP counter slot[i], or -1 - fixed index */
	uint32_t sel[MAX_EV]; /* event select values of the GP counters, EN set */
	uint64_t fixed_field; /* our bits of IA32_FIXED_CTR_CTRL */
	uint64_t fixed_field_mask; /* the fields we own in it */
	uint64_t mask; /* our bits of IA32_PERF_GLOBAL_CTRL */
	unsigned width, fixed_width;
	bool global; /* version >= 2: IA32_PERF_GLOBAL_CTRL exists */
	bool full_width; /* IA32_A_PMCx usable (PERF_CAPABILITIES[13]) */
	bool uses_fixed;
	struct saved *cpus;
	size_t ncpus;
	bool programmed, restored;
	bool nmi_watchdog; /* the kernel's watchdog counts: named in a collision */
	char *lost[MAX_EV]; /* event i not counted: why (NULL: counted) */
	struct pmon__msr_log log; /* every write, kept whole */
	char *state_file; /* NULL: none kept */
};

static int wr(struct pmon_msr_counting *m, int cpu, uint32_t addr, uint64_t v, bool restore)
{
	return pmon__msr_log_write(&m->log, m->device, cpu, addr, v, restore);
}

static int write_state(const struct pmon_msr_counting *m);
static int check_state(const char *path);

static uint64_t width_mask(unsigned w)
{
	return w >= 64 ? ~0ULL : (1ULL << w) - 1;
}

uint64_t pmon_msr_pmc_written(uint64_t value, unsigned width, bool full_width)
{
	uint64_t lo = value & 0xffffffffULL;

	if (full_width)
		return value & width_mask(width);
	/* SDM Vol. 3B 21.2.6: a write to IA32_PMCx sets bits 31:0 and
	 * sign-extends bit 31 up to the counter width. */
	if (lo >> 31)
		lo |= ~0xffffffffULL;
	return lo & width_mask(width);
}

static int encode(const struct pmon_cpu_info *ci, const struct pmon_event_desc *d, uint32_t *sel,
		  int *fixed)
{
	uint32_t code = 0;
	bool found = false;

	*fixed = -1;
	if (d->attr.type == PERF_TYPE_HARDWARE &&
	    (d->attr.config & 0xffffffffULL) == PERF_COUNT_HW_REF_CPU_CYCLES) {
		/* perf's ref-cycles and pmon's own fixed counter 2 tick at the
		 * TSC rate (CPU_CLK_UNHALTED.REF_TSC); the architectural GP
		 * encoding 3CH/01H ticks at the bus or crystal clock instead
		 * (SDM Vol. 3B Table 21-1 note; Linux intel_perfmon_event_map
		 * maps ref-cycles to fixed counter 2 only, event 0x0300). */
		if (!(ci->pm.fixed_mask & (1u << FIXED_REF_CYCLES)) || ci->pm.version < 2)
			return pmon__err(-EOPNOTSUPP,
					 "event '%s': ref-cycles counts at the TSC rate on fixed "
					 "counter 2, which this CPU does not enumerate; r013c "
					 "counts the GP encoding, at the bus/crystal clock",
					 d->name);
		*fixed = FIXED_REF_CYCLES;
		*sel = 0;
		return 0;
	}
	if (d->attr.type == PERF_TYPE_HARDWARE) {
		for (size_t i = 0; i < PMON_ARRAY_SIZE(arch_map); i++) {
			if (arch_map[i].perf_id != (d->attr.config & 0xffffffffULL))
				continue;
			if (!((ci->pm.arch_events >> arch_map[i].arch) & 1))
				return pmon__err(
					-EOPNOTSUPP,
					"event '%s': CPUID.0AH:EBX says '%s' is not available "
					"on this CPU",
					d->name, pmon_arch_event_name(arch_map[i].arch));
			code = arch_map[i].code;
			found = true;
		}
	} else if (d->attr.type == PERF_TYPE_RAW) {
		/* The raw config of Intel's core PMU is the event-select layout:
		 * keep event, umask, edge, inv, cmask; pmon owns USR/OS/INT/EN. */
		if (d->attr.config >> 32)
			return pmon__err(-EINVAL,
					 "event '%s': bits above 31 do not fit IA32_PERFEVTSEL",
					 d->name);
		code = (uint32_t)d->attr.config &
			~(EVTSEL_USR | EVTSEL_OS | EVTSEL_INT | EVTSEL_EN | (1u << 19) |
			  (1u << 21));
		found = true;
	}
	if (!found)
		return pmon__err(
			-EOPNOTSUPP,
			"event '%s' cannot be programmed by the MSR backend: it takes "
			"architectural events (cycles, instructions, ref-cycles, branches, "
			"branch-misses, cache-references, cache-misses) and raw rNNNN values",
			d->name);
	*sel = code | EVTSEL_EN | (d->attr.exclude_user ? 0 : EVTSEL_USR) |
		(d->attr.exclude_kernel ? 0 : EVTSEL_OS);
	return 0;
}

void pmon_msr_counting__free(struct pmon_msr_counting *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < MAX_EV; i++)
		free(m->lost[i]);
	free(m->cpus);
	free(m->log.rec);
	free(m->state_file);
	free(m);
}

/* Which counters another user has enabled. IA32_PERF_GLOBAL_CTRL alone
 * counts nothing: SDM Vol. 3B 21.2.2, a counter counts only when its
 * GLOBAL_CTRL bit AND its IA32_PERFEVTSELx.EN (or its IA32_FIXED_CTR_CTRL
 * enable field) are set, and Linux sets every GLOBAL_CTRL bit whenever it
 * re-enables the PMU (intel_pmu_enable_all()). Refuse on the enables. */
static int check_busy(const struct pmon_msr_counting *m, const struct saved *s)
{
	/* The NMI watchdog is one more user: Linux gives its cycles event a
	 * fixed counter where it can (intel_pmu_init(): fixed counter 1 for
	 * CPU_CLK_UNHALTED.CORE), so its mere presence takes nothing pmon
	 * needs; where it does sit on a counter pmon needs, the enable bit
	 * says so like anyone else's. */
	const char *who = m->nmi_watchdog ? "another tool (or the kernel's NMI watchdog, which is "
					    "on) is counting"
					  : "another tool is counting";

	for (size_t i = 0; i < m->ngp; i++)
		if (s->sel[i] & EVTSEL_EN)
			return pmon__err(-EBUSY,
					 "IA32_PERFEVTSEL%zu on CPU %d is enabled (%#" PRIx64
					 "): %s; pmon will not take it",
					 i, s->cpu, s->sel[i], who);
	if (m->uses_fixed && (s->fixed_ctrl & m->fixed_field_mask & 0x3333333333333333ULL))
		return pmon__err(-EBUSY,
				 "IA32_FIXED_CTR_CTRL on CPU %d enables fixed counter %d (%#" PRIx64
				 "): %s; pmon will not take it",
				 s->cpu, FIXED_REF_CYCLES, s->fixed_ctrl, who);
	return 0;
}

static const char *core_type_of(const struct pmon_cpu_info *ci)
{
	return ci->pm.core_type == 0x40	   ? " (a P-core)"
		: ci->pm.core_type == 0x20 ? " (an E-core)"
					   : "";
}

/* Hybrid parts (SDM Vol. 3B 21.2.9 / CPUID.1AH): each core type has its own
 * counters, so the events placed by @ci must fit every CPU's own CPUID. A
 * P-core snapshot would otherwise program IA32_PERFEVTSEL6/7 on an E-core,
 * where the WRMSR faults. */
static int check_cpu_fits(const struct pmon_msr_counting *m, const struct pmon_cpu_info *ci,
			  const struct pmon_cpu_info *cc, int cpu, const struct pmon_evlist *events)
{
	if (cc == ci)
		return 0;
	if (cc->pm.model != PMON_PERFMON_INTEL_ARCH)
		return pmon__err(-EOPNOTSUPP,
				 "CPU %d has %s: the MSR backend programs Intel's architectural "
				 "counters",
				 cpu,
				 cc->pm.model == PMON_PERFMON_NONE
					 ? "no counters enumerated"
					 : pmon_perfmon_model_name(cc->pm.model));
	if ((cc->pm.version >= 2) != m->global)
		return pmon__err(-EOPNOTSUPP,
				 "CPU %d has perfmon version %u, CPU %d's differs: the MSR backend "
				 "programs one layout on every CPU",
				 cpu, cc->pm.version, m->cpus[0].cpu);
	for (size_t i = 0; i < m->ngp; i++)
		if (!((cc->pm.gp_mask >> i) & 1))
			return pmon__err(-E2BIG,
					 "%zu events need general-purpose counters: CPU %d%s has "
					 "%u",
					 m->ngp, cpu, core_type_of(cc), cc->pm.gp_count);
	if (m->uses_fixed && !(cc->pm.fixed_mask & (1u << FIXED_REF_CYCLES)))
		return pmon__err(-EOPNOTSUPP,
				 "ref-cycles needs fixed counter 2, which CPU %d%s does not "
				 "enumerate",
				 cpu, core_type_of(cc));
	for (size_t i = 0; i < m->n; i++) {
		uint32_t sel;
		int fixed, err = encode(cc, pmon_evlist__event(events, i), &sel, &fixed);

		if (err) {
			char why[256];

			pmon__strlcpy(why, pmon_errdetail(), sizeof(why));
			return pmon__err(err, "CPU %d%s: %s", cpu, core_type_of(cc), why);
		}
		if (m->slot[i] >= 0 && sel != m->sel[m->slot[i]])
			return pmon__err(-EOPNOTSUPP, "event '%s' encodes differently on CPU %d%s",
					 pmon_evlist__event(events, i)->name, cpu,
					 core_type_of(cc));
	}
	return 0;
}

/* Give each of @events its counter: a fixed one where it is one of the
 * fixed events, else the next general-purpose one. Return: 0 or -errno. */
static int assign_counters(struct pmon_msr_counting *m, const struct pmon_cpu_info *ci,
			   const struct pmon_evlist *events)
{
	size_t n = m->n;
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		const struct pmon_event_desc *d = pmon_evlist__event(events, i);
		uint32_t sel = 0;
		int fixed = -1;

		err = encode(ci, d, &sel, &fixed);
		if (err)
			break;
		if (fixed >= 0) {
			uint64_t field = 0x3ULL << (4 * fixed);
			if (m->fixed_field_mask & field) {
				err = pmon__err(-E2BIG, "event '%s': fixed counter %d is taken",
						d->name, fixed);
				break;
			}
			m->uses_fixed = true;
			m->fixed_field_mask |= 0xfULL << (4 * fixed);
			/* EN field: bit 0 OS, bit 1 USR (SDM Figure 21-2). */
			m->fixed_field |= (uint64_t)((d->attr.exclude_kernel ? 0 : 1) |
						     (d->attr.exclude_user ? 0 : 2))
				<< (4 * fixed);
			m->mask |= 1ULL << (32 + fixed);
			m->slot[i] = -1 - fixed;
			continue;
		}
		if (m->ngp >= ci->pm.gp_count || m->ngp >= 8) {
			/* On a hybrid part the figure is per core type: say which
			 * (a P-core without 23H has 0AH + 2, see pmon_perfmon). */
			err = pmon__err(-E2BIG,
					"%zu events need general-purpose counters: this CPU%s has "
					"%u",
					m->ngp + 1, core_type_of(ci), ci->pm.gp_count);
			break;
		}
		m->slot[i] = (int)m->ngp;
		m->sel[m->ngp] = sel;
		m->mask |= 1ULL << m->ngp;
		m->ngp++;
	}
	return err;
}

/* Read what each CPU's counters hold now, to put it back at the end, and
 * refuse counters someone else is using. Return: 0 or -errno. */
static int save_cpus(struct pmon_msr_counting *m, const struct pmon_cpu_info *ci)
{
	const char *device = m->device;
	size_t ncpus = m->ncpus;
	int err = 0;

	for (size_t c = 0; c < ncpus && !err; c++) {
		struct saved *s = &m->cpus[c];
		if (m->global)
			err = pmon_msr_read(device, s->cpu, MSR_GLOBAL_CTRL, &s->global);
		if (!err && c == 0 && ci->pm.perf_capabilities) {
			uint64_t caps;
			err = pmon_msr_read(device, s->cpu, MSR_PERF_CAPABILITIES, &caps);
			m->full_width = !err && (caps & PERF_CAP_FW_WRITE);
		}
		for (size_t i = 0; i < m->ngp && !err; i++) {
			err = pmon_msr_read(device, s->cpu, MSR_PERFEVTSEL0 + (uint32_t)i,
					    &s->sel[i]);
			if (!err)
				err = pmon_msr_read(device, s->cpu, MSR_PMC0 + (uint32_t)i,
						    &s->pmc[i]);
		}
		if (!err && m->uses_fixed) {
			err = pmon_msr_read(device, s->cpu, MSR_FIXED_CTR_CTRL, &s->fixed_ctrl);
			if (!err)
				err = pmon_msr_read(device, s->cpu,
						    MSR_FIXED_CTR0 + FIXED_REF_CYCLES,
						    &s->fixed_ctr[FIXED_REF_CYCLES]);
		}
		if (!err)
			err = check_busy(m, s);
	}
	return err;
}

/* Program: disable ours, zero, select, enable -- nothing else touched. */
static int program_cpus(struct pmon_msr_counting *m)
{
	int err = 0;

	for (size_t c = 0; c < m->ncpus && !err; c++) {
		struct saved *s = &m->cpus[c];
		m->programmed = true;
		if (m->global)
			err = wr(m, s->cpu, MSR_GLOBAL_CTRL, s->global & ~m->mask, false);
		for (size_t i = 0; i < m->ngp && !err; i++)
			err = wr(m, s->cpu, MSR_PMC0 + (uint32_t)i, 0, false);
		if (!err && m->uses_fixed)
			err = wr(m, s->cpu, MSR_FIXED_CTR0 + FIXED_REF_CYCLES, 0, false);
		for (size_t i = 0; i < m->ngp && !err; i++)
			err = wr(m, s->cpu, MSR_PERFEVTSEL0 + (uint32_t)i, m->sel[i], false);
		if (!err && m->uses_fixed)
			err = wr(m, s->cpu, MSR_FIXED_CTR_CTRL,
				 (s->fixed_ctrl & ~m->fixed_field_mask) | m->fixed_field, false);
		if (!err && m->global)
			err = wr(m, s->cpu, MSR_GLOBAL_CTRL, s->global | m->mask, false);
	}
	return err;
}

static int counting_start(const char *device, const struct pmon_cpu_info *ci,
			  const struct pmon_evlist *events, const int *cpus, size_t ncpus,
			  bool nmi_watchdog, const struct pmon_msr_counting_opts *opts,
			  struct pmon_msr_counting **out)
{
	struct pmon_msr_counting *m;
	size_t n = pmon_evlist__count(events);
	const char *state = PMON_OPTS_GET(opts, state_file, NULL);
	const struct pmon_cpu_info *const *cpu_info = PMON_OPTS_GET(opts, cpu_info, NULL);
	int err = 0;

	if (ci->pm.model != PMON_PERFMON_INTEL_ARCH)
		return pmon__err(
			-EOPNOTSUPP,
			"the MSR backend programs Intel's architectural counters; this CPU "
			"has %s",
			ci->pm.model == PMON_PERFMON_NONE ? "no counters enumerated"
							  : pmon_perfmon_model_name(ci->pm.model));
	if (!n || n > MAX_EV)
		return pmon__err(-E2BIG, "%zu events: the MSR backend takes 1 to %d", n, MAX_EV);
	/* Before anything is read: a leftover says more than "busy" would. */
	if (state && (err = check_state(state)))
		return err;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->device = device;
	m->nmi_watchdog = nmi_watchdog;
	if (state && !(m->state_file = strdup(state))) {
		free(m);
		return -ENOMEM;
	}
	m->n = n;
	m->width = ci->pm.gp_width ? ci->pm.gp_width : 40;
	m->fixed_width = ci->pm.fixed_width ? ci->pm.fixed_width : m->width;
	m->global = ci->pm.version >= 2;
	m->ncpus = ncpus;
	m->cpus = calloc(ncpus, sizeof(*m->cpus));
	if (!m->cpus) {
		pmon_msr_counting__free(m);
		return -ENOMEM;
	}
	err = assign_counters(m, ci, events);
	/* Each CPU as its own CPUID describes it (hybrid parts), before any
	 * register is read or written. */
	for (size_t c = 0; c < ncpus; c++) {
		const struct pmon_cpu_info *cc = cpu_info && cpu_info[c] ? cpu_info[c] : ci;

		m->cpus[c].cpu = cpus[c];
		m->cpus[c].width = cc->pm.gp_width ? cc->pm.gp_width : m->width;
		m->cpus[c].fixed_width = cc->pm.fixed_width ? cc->pm.fixed_width : m->fixed_width;
		if (!err)
			err = check_cpu_fits(m, ci, cc, cpus[c], events);
	}
	if (!err)
		err = save_cpus(m, ci);
	for (size_t c = 0; c < ncpus && !err; c++) {
		m->cpus[c].put_global = m->cpus[c].global;
		m->cpus[c].put_fixed_ctrl = m->cpus[c].fixed_ctrl;
	}
	/* What puts it all back is on disk before the first write. */
	if (!err && m->state_file)
		err = write_state(m);
	if (!err)
		err = program_cpus(m);
	if (err) {
		char detail[512];
		pmon__strlcpy(detail, pmon_errdetail(), sizeof(detail));
		pmon_msr_counting__restore(m);
		pmon__detail("%s", detail); /* keep the first error's detail */
		pmon_msr_counting__free(m);
		return err;
	}
	*out = m;
	return 0;
}

struct pmon_msr_counting *pmon_msr_counting__start(const char *device,
						   const struct pmon_cpu_info *ci,
						   const struct pmon_evlist *events,
						   const int *cpus, size_t ncpus, bool nmi_watchdog)
{
	return pmon_msr_counting__start_opts(device, ci, events, cpus, ncpus, nmi_watchdog, NULL);
}

struct pmon_msr_counting *
pmon_msr_counting__start_opts(const char *device, const struct pmon_cpu_info *ci,
			      const struct pmon_evlist *events, const int *cpus, size_t ncpus,
			      bool nmi_watchdog, const struct pmon_msr_counting_opts *opts)
{
	struct pmon_msr_counting *m = NULL;

	int err = counting_start(device, ci, events, cpus, ncpus, nmi_watchdog, opts, &m);

	return pmon__ret_ptr(err, m);
}

/* pmon's GLOBAL_CTRL bits on @s's CPU that are still pmon's. */
static uint64_t ours(const struct pmon_msr_counting *m, const struct saved *s)
{
	uint64_t taken =
		(uint64_t)s->taken_gp | (s->taken_fixed ? 1ULL << (32 + FIXED_REF_CYCLES) : 0);

	return m->mask & ~taken;
}

/* Event i lost its counter: keep the first reason. */
static int set_lost(struct pmon_msr_counting *m, size_t i, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int set_lost(struct pmon_msr_counting *m, size_t i, const char *fmt, ...)
{
	va_list ap;

	if (m->lost[i])
		return 0;
	va_start(ap, fmt);
	int n = vasprintf(&m->lost[i], fmt, ap);
	va_end(ap);
	if (n < 0) {
		m->lost[i] = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* Does pmon still own its counters on @s's CPU? Nothing tells another user
 * of the PMU that pmon programmed it -- the kernel's perf may schedule an
 * event onto the same counter mid-run (x86_schedule_events() sees only its
 * own) -- so the control MSRs are read back before the counts are believed:
 * an event select, fixed-counter field or GLOBAL_CTRL enable that is no
 * longer what pmon wrote means the count is someone else's. */
static int check_owned(struct pmon_msr_counting *m, struct saved *s)
{
	uint64_t v;
	int err = 0;

	for (size_t i = 0; i < m->ngp && !err; i++) {
		err = pmon_msr_read(m->device, s->cpu, MSR_PERFEVTSEL0 + (uint32_t)i, &v);
		if (!err && v != m->sel[i])
			s->taken_gp |= 1u << i;
	}
	if (!err && m->uses_fixed) {
		err = pmon_msr_read(m->device, s->cpu, MSR_FIXED_CTR_CTRL, &v);
		if (!err && (v & m->fixed_field_mask) != m->fixed_field)
			s->taken_fixed = true;
	}
	if (!err && m->global) {
		err = pmon_msr_read(m->device, s->cpu, MSR_GLOBAL_CTRL, &v);
		s->cur_global = v;
		if (!err && (v & m->mask) != m->mask)
			s->lost_global = true;
	}
	for (size_t i = 0; i < m->n && !err; i++) {
		int slot = m->slot[i];
		bool gp = slot >= 0;

		if (gp && ((s->taken_gp >> slot) & 1))
			err = set_lost(m, i,
				       "IA32_PERFEVTSEL%d on CPU %d no longer holds pmon's event "
				       "select (%#" PRIx32
				       "): another user took the counter mid-run",
				       slot, s->cpu, m->sel[slot]);
		else if (!gp && s->taken_fixed)
			err = set_lost(
				m, i,
				"IA32_FIXED_CTR_CTRL on CPU %d no longer holds pmon's field "
				"for fixed counter %d: another user took the counter mid-run",
				s->cpu, -1 - slot);
		else if (s->lost_global)
			err = set_lost(m, i,
				       "IA32_PERF_GLOBAL_CTRL on CPU %d lost pmon's enable bits "
				       "(%#" PRIx64 "): the counters were stopped by someone else",
				       s->cpu, m->mask);
	}
	return err;
}

int pmon_msr_counting__stop(struct pmon_msr_counting *m, uint64_t *values)
{
	int err = 0;

	memset(values, 0, m->n * sizeof(*values));
	for (size_t c = 0; c < m->ncpus && !err; c++) {
		struct saved *s = &m->cpus[c];

		err = check_owned(m, s);
		if (!err && m->global)
			err = wr(m, s->cpu, MSR_GLOBAL_CTRL, s->cur_global & ~ours(m, s), false);
		else
			for (size_t i = 0; i < m->ngp && !err; i++)
				if (!((s->taken_gp >> i) & 1))
					err = wr(m, s->cpu, MSR_PERFEVTSEL0 + (uint32_t)i,
						 m->sel[i] & ~EVTSEL_EN, false);
		for (size_t i = 0; i < m->n && !err; i++) {
			uint64_t v = 0;
			if (m->lost[i])
				continue; /* not pmon's count: never added */
			if (m->slot[i] >= 0) {
				err = pmon_msr_read(m->device, s->cpu,
						    MSR_PMC0 + (uint32_t)m->slot[i], &v);
				values[i] += v & width_mask(s->width);
			} else {
				err = pmon_msr_read(m->device, s->cpu,
						    MSR_FIXED_CTR0 + (uint32_t)(-1 - m->slot[i]),
						    &v);
				values[i] += v & width_mask(s->fixed_width);
			}
		}
	}
	/* A lost event counts nothing on any CPU: a partial sum is no count. */
	for (size_t i = 0; i < m->n; i++)
		if (m->lost[i])
			values[i] = 0;
	return err;
}

const char *pmon_msr_counting__lost(const struct pmon_msr_counting *m, size_t i)
{
	return m && i < m->n ? m->lost[i] : NULL;
}

/* The writes that put everything back, in order: the reverse of the
 * programming, per CPU. @emit's first error is returned, but every write is
 * still tried. */
static int restore_seq(const struct pmon_msr_counting *m,
		       int (*emit)(void *ctx, int cpu, uint32_t addr, uint64_t v), void *ctx)
{
	int first = 0, err;

#define EMIT(cpu, a, v)                                                                            \
	do {                                                                                       \
		if ((err = emit(ctx, cpu, a, v)) && !first)                                        \
			first = err;                                                               \
	} while (0)
	for (size_t c = m->ncpus; c-- > 0;) {
		const struct saved *s = &m->cpus[c];
		if (m->global)
			EMIT(s->cpu, MSR_GLOBAL_CTRL, s->put_global & ~ours(m, s));
		/* A counter someone else took mid-run is theirs now: leave it. */
		if (m->uses_fixed && !s->taken_fixed) {
			EMIT(s->cpu, MSR_FIXED_CTR_CTRL, s->put_fixed_ctrl);
			EMIT(s->cpu, MSR_FIXED_CTR0 + FIXED_REF_CYCLES,
			     s->fixed_ctr[FIXED_REF_CYCLES]);
		}
		for (size_t i = m->ngp; i-- > 0;) {
			if ((s->taken_gp >> i) & 1)
				continue;
			EMIT(s->cpu, MSR_PERFEVTSEL0 + (uint32_t)i, s->sel[i]);
			/* A full value goes back through IA32_A_PMCx; IA32_PMCx
			 * would keep only the sign-extended low 32 bits. */
			EMIT(s->cpu, (m->full_width ? MSR_A_PMC0 : MSR_PMC0) + (uint32_t)i,
			     s->pmc[i]);
		}
		if (m->global)
			EMIT(s->cpu, MSR_GLOBAL_CTRL, s->put_global);
	}
#undef EMIT
	return first;
}

static int emit_write(void *ctx, int cpu, uint32_t addr, uint64_t v)
{
	return wr(ctx, cpu, addr, v, true);
}

/* The state file's restore sequence (lib/msr/state.c). */
static int state_seq(const void *obj, int (*emit)(void *ctx, int cpu, uint32_t addr, uint64_t v),
		     void *ctx)
{
	return restore_seq(obj, emit, ctx);
}

static int write_state(const struct pmon_msr_counting *m)
{
	return pmon__msr_state_write(m->state_file, m->device, state_seq, m);
}

static int check_state(const char *path)
{
	return pmon__msr_state_check(path, "the counters");
}

int pmon_msr_counting__restore(struct pmon_msr_counting *m)
{
	int first;
	bool inexact = false;

	if (!m || !m->programmed || m->restored)
		return 0;
	m->restored = true;
	/* Put back pmon's bits into what the shared registers hold now. */
	for (size_t c = 0; c < m->ncpus; c++) {
		struct saved *s = &m->cpus[c];
		uint64_t cur, own = ours(m, s);

		if (m->global && !pmon_msr_read(m->device, s->cpu, MSR_GLOBAL_CTRL, &cur))
			s->put_global = (cur & ~own) | (s->global & own);
		if (m->uses_fixed && !s->taken_fixed &&
		    !pmon_msr_read(m->device, s->cpu, MSR_FIXED_CTR_CTRL, &cur))
			s->put_fixed_ctrl = (cur & ~m->fixed_field_mask) |
				(s->fixed_ctrl & m->fixed_field_mask);
	}
	/* Reverse order of programming; keep going past errors, report the first. */
	first = restore_seq(m, emit_write, m);
	for (size_t c = 0; c < m->ncpus && !m->full_width; c++)
		for (size_t i = 0; i < m->ngp; i++)
			if (!((m->cpus[c].taken_gp >> i) & 1) &&
			    pmon_msr_pmc_written(m->cpus[c].pmc[i], m->cpus[c].width, false) !=
				    m->cpus[c].pmc[i])
				inexact = true;
	if (!first && m->state_file)
		unlink(m->state_file); /* put back: nothing left to clean up */
	if (!first && inexact)
		pmon__detail("a saved IA32_PMCx value did not fit 32 bits and this CPU has no "
			     "full-width writes (IA32_PERF_CAPABILITIES[13] = 0): it was put back "
			     "as its sign-extended low 32 bits (SDM 21.2.6)");
	return first;
}

int pmon_msr_state__restore(const char *path, struct pmon_msr_write_rec **writes, size_t *n)
{
	char line[512], device[4096] = "";
	struct pmon_msr_write_rec *log = NULL;
	size_t nlog = 0, cap = 0;
	int pid = 0, first = 0, lineno = 0;
	FILE *f;

	*writes = NULL;
	*n = 0;
	f = fopen(path, "re");
	if (!f)
		return pmon__err(-errno, "MSR state file '%s': %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		int cpu;
		unsigned long long a, v;
		lineno++;
		if (lineno == 1 && !strcmp(line, "pmon-msr-state 1\n"))
			continue;
		if (lineno == 1) {
			first = pmon__err(-EINVAL, "'%s' is not a pmon MSR state file", path);
			break;
		}
		if (sscanf(line, "pid %d", &pid) == 1)
			continue;
		if (!strncmp(line, "device ", 7)) {
			pmon__strlcpy(device, line + 7, sizeof(device));
			device[strcspn(device, "\n")] = '\0';
			continue;
		}
		if (sscanf(line, "write %d %llx %llx", &cpu, &a, &v) != 3 || a > UINT32_MAX) {
			first = pmon__err(-EINVAL, "%s:%d: not a register write", path, lineno);
			break;
		}
		if (pid > 0 && getpid() != pid && pmon__process_alive(pid)) {
			first = pmon__err(-EBUSY,
					  "pmon (pid %d) is still counting: it restores the "
					  "MSRs itself",
					  pid);
			break;
		}
		if (PMON_GROW(&log, &cap, nlog + 1)) {
			first = -ENOMEM;
			break;
		}
		log[nlog++] = (struct pmon_msr_write_rec){ cpu, (uint32_t)a, v, true };
	}
	fclose(f);
	/* Only a whole file is replayed: a line it cannot read writes nothing. */
	for (size_t i = 0; !first && i < nlog; i++) {
		int err = pmon_msr_write(strcmp(device, "-") ? device : NULL, log[i].cpu,
					 log[i].addr, log[i].value);
		if (err && !first)
			first = err;
	}
	if (!first)
		unlink(path);
	*writes = log;
	*n = nlog;
	return first;
}

const struct pmon_msr_write_rec *pmon_msr_counting__writes(const struct pmon_msr_counting *m,
							   size_t *n)
{
	*n = m->log.n;
	return m->log.rec;
}
