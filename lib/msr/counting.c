// SPDX-License-Identifier: MIT
/*
 * The MSR counting backend (pmon/msr.h): Intel's architectural counters
 * programmed directly through IA32_PERFEVTSELx / IA32_PMCx /
 * IA32_PERF_GLOBAL_CTRL (SDM Vol. 3B 21.2), for systems without perf_event,
 * like LIKWID's direct mode, but never silently: every register touched is
 * saved first, counters someone else enabled are refused, and everything
 * is put back, each write logged for the user to see.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include <pmon/cpu.h>
#include <pmon/event.h>
#include <pmon/msr.h>

#define MSR_PMC0 0xc1
#define MSR_PERFEVTSEL0 0x186
#define MSR_GLOBAL_CTRL 0x38f
#define EVTSEL_USR (1u << 16)
#define EVTSEL_OS (1u << 17)
#define EVTSEL_EN (1u << 22)
#define EVTSEL_INT (1u << 20)

/* Architectural events, SDM Vol. 3B Table 21-1: UMask << 8 | EventSelect. */
static const struct {
	uint64_t perf_id;
	uint32_t code;
	enum pmon_arch_event arch;
} arch_map[] = {
	{ PERF_COUNT_HW_CPU_CYCLES, 0x003c, PMON_ARCH_CORE_CYCLES },
	{ PERF_COUNT_HW_INSTRUCTIONS, 0x00c0, PMON_ARCH_INSTRUCTIONS },
	{ PERF_COUNT_HW_REF_CPU_CYCLES, 0x013c, PMON_ARCH_REF_CYCLES },
	{ PERF_COUNT_HW_CACHE_REFERENCES, 0x4f2e, PMON_ARCH_LLC_REFERENCES },
	{ PERF_COUNT_HW_CACHE_MISSES, 0x412e, PMON_ARCH_LLC_MISSES },
	{ PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 0x00c4, PMON_ARCH_BRANCHES },
	{ PERF_COUNT_HW_BRANCH_MISSES, 0x00c5, PMON_ARCH_BRANCH_MISSES },
};

struct saved {
	int cpu;
	uint64_t global;
	uint64_t sel[16], pmc[16];
};

struct pmon_msr_counting {
	const char *device;
	size_t n; /* events = general-purpose counters used */
	uint32_t sel[16]; /* event select values, EN set */
	unsigned width;
	bool global; /* version >= 2: IA32_PERF_GLOBAL_CTRL exists */
	struct saved *cpus;
	size_t ncpus;
	bool programmed, restored;
	struct pmon_msr_write_rec *log;
	size_t nlog, caplog;
};

static int wr(struct pmon_msr_counting *m, int cpu, uint32_t addr, uint64_t v, bool restore)
{
	if (m->nlog == m->caplog) {
		size_t cap = m->caplog ? m->caplog * 2 : 64;
		struct pmon_msr_write_rec *l = realloc(m->log, cap * sizeof(*l));
		if (!l)
			return -ENOMEM;
		m->log = l;
		m->caplog = cap;
	}
	m->log[m->nlog++] = (struct pmon_msr_write_rec){ cpu, addr, v, restore };
	return pmon_msr_write(m->device, cpu, addr, v);
}

static int encode(const struct pmon_cpu_info *ci, const struct pmon_event_desc *d, uint32_t *sel)
{
	uint32_t code = 0;
	bool found = false;

	if (d->attr.type == PERF_TYPE_HARDWARE) {
		for (size_t i = 0; i < PMON_ARRAY_SIZE(arch_map); i++) {
			if (arch_map[i].perf_id != d->attr.config)
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
	free(m->cpus);
	free(m->log);
	free(m);
}

int pmon_msr_counting__start(const char *device, const struct pmon_cpu_info *ci,
			     const struct pmon_evlist *events, const int *cpus, size_t ncpus,
			     bool nmi_watchdog, struct pmon_msr_counting **out)
{
	struct pmon_msr_counting *m;
	size_t n = pmon_evlist__count(events);
	uint64_t mask;
	int err = 0;

	if (ci->pm.model != PMON_PERFMON_INTEL_ARCH)
		return pmon__err(
			-EOPNOTSUPP,
			"the MSR backend programs Intel's architectural counters; this CPU "
			"has %s (see 'pmon info')",
			ci->pm.model == PMON_PERFMON_NONE ? "no counters enumerated"
							  : pmon_perfmon_model_name(ci->pm.model));
	if (!n || n > ci->pm.gp_count || n > 16)
		return pmon__err(-E2BIG, "%zu events: this CPU has %u general-purpose counters", n,
				 ci->pm.gp_count);
	if (nmi_watchdog)
		return pmon__err(-EBUSY,
				 "the kernel's NMI watchdog holds a counter: as root, echo 0 > "
				 "/proc/sys/kernel/nmi_watchdog (and restore it after)");
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->device = device;
	m->n = n;
	m->width = ci->pm.gp_width ? ci->pm.gp_width : 40;
	m->global = ci->pm.version >= 2;
	m->ncpus = ncpus;
	m->cpus = calloc(ncpus, sizeof(*m->cpus));
	if (!m->cpus) {
		pmon_msr_counting__free(m);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n && !err; i++)
		err = encode(ci, pmon_evlist__event(events, i), &m->sel[i]);
	mask = (1ULL << n) - 1;

	/* Save, and refuse counters someone else is using. */
	for (size_t c = 0; c < ncpus && !err; c++) {
		struct saved *s = &m->cpus[c];
		s->cpu = cpus[c];
		if (m->global)
			err = pmon_msr_read(device, s->cpu, MSR_GLOBAL_CTRL, &s->global);
		for (size_t i = 0; i < n && !err; i++) {
			err = pmon_msr_read(device, s->cpu, MSR_PERFEVTSEL0 + (uint32_t)i,
					    &s->sel[i]);
			if (!err)
				err = pmon_msr_read(device, s->cpu, MSR_PMC0 + (uint32_t)i,
						    &s->pmc[i]);
			if (!err && (s->sel[i] & EVTSEL_EN))
				err = pmon__err(
					-EBUSY,
					"IA32_PERFEVTSEL%zu on CPU %d is enabled (%#" PRIx64
					"): another tool is counting; pmon will not take it",
					i, s->cpu, s->sel[i]);
		}
		if (!err && m->global && (s->global & mask))
			err = pmon__err(-EBUSY,
					"IA32_PERF_GLOBAL_CTRL on CPU %d enables counters pmon "
					"needs (%#" PRIx64 "): another tool is counting",
					s->cpu, s->global);
	}
	/* Program: disable ours, zero, select, enable -- nothing else touched. */
	for (size_t c = 0; c < ncpus && !err; c++) {
		struct saved *s = &m->cpus[c];
		m->programmed = true;
		if (m->global)
			err = wr(m, s->cpu, MSR_GLOBAL_CTRL, s->global & ~mask, false);
		for (size_t i = 0; i < n && !err; i++)
			err = wr(m, s->cpu, MSR_PMC0 + (uint32_t)i, 0, false);
		for (size_t i = 0; i < n && !err; i++)
			err = wr(m, s->cpu, MSR_PERFEVTSEL0 + (uint32_t)i, m->sel[i], false);
		if (!err && m->global)
			err = wr(m, s->cpu, MSR_GLOBAL_CTRL, s->global | mask, false);
	}
	if (err) {
		pmon_msr_counting__restore(m);
		/* keep the first error's detail */
		pmon_msr_counting__free(m);
		return err;
	}
	*out = m;
	return 0;
}

int pmon_msr_counting__stop(struct pmon_msr_counting *m, uint64_t *values)
{
	uint64_t mask = (1ULL << m->n) - 1;
	int err = 0;

	memset(values, 0, m->n * sizeof(*values));
	for (size_t c = 0; c < m->ncpus && !err; c++) {
		struct saved *s = &m->cpus[c];
		if (m->global)
			err = wr(m, s->cpu, MSR_GLOBAL_CTRL, s->global & ~mask, false);
		else
			for (size_t i = 0; i < m->n && !err; i++)
				err = wr(m, s->cpu, MSR_PERFEVTSEL0 + (uint32_t)i,
					 m->sel[i] & ~EVTSEL_EN, false);
		for (size_t i = 0; i < m->n && !err; i++) {
			uint64_t v;
			err = pmon_msr_read(m->device, s->cpu, MSR_PMC0 + (uint32_t)i, &v);
			values[i] += v & ((m->width >= 64) ? ~0ULL : (1ULL << m->width) - 1);
		}
	}
	return err;
}

int pmon_msr_counting__restore(struct pmon_msr_counting *m)
{
	int first = 0;

	if (!m || !m->programmed || m->restored)
		return 0;
	m->restored = true;
	/* Reverse order of programming; keep going past errors, report the first. */
	for (size_t c = m->ncpus; c-- > 0;) {
		struct saved *s = &m->cpus[c];
		int err;
		if (m->global &&
		    (err = wr(m, s->cpu, MSR_GLOBAL_CTRL, s->global & ~((1ULL << m->n) - 1),
			      true)) &&
		    !first)
			first = err;
		for (size_t i = m->n; i-- > 0;) {
			if ((err = wr(m, s->cpu, MSR_PERFEVTSEL0 + (uint32_t)i, s->sel[i], true)) &&
			    !first)
				first = err;
			if ((err = wr(m, s->cpu, MSR_PMC0 + (uint32_t)i, s->pmc[i], true)) &&
			    !first)
				first = err;
		}
		if (m->global && (err = wr(m, s->cpu, MSR_GLOBAL_CTRL, s->global, true)) && !first)
			first = err;
	}
	return first;
}

const struct pmon_msr_write_rec *pmon_msr_counting__writes(const struct pmon_msr_counting *m,
							   size_t *n)
{
	*n = m->nlog;
	return m->log;
}
