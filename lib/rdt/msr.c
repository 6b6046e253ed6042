// SPDX-License-Identifier: MIT
/*
 * RDT monitoring through MSRs (pmon/rdt.h), exactly as the CMT/MBM seed lays
 * it out: the RMID goes into IA32_PQR_ASSOC of each monitored logical CPU
 * (SDM 17.16.6); IA32_QM_EVTSEL selects event and RMID, IA32_QM_CTR returns
 * the data with an Error (63) and an Unavailable (62) bit (17.16.7); the
 * data times CPUID.(0FH,1):EBX is bytes; MBM counters are 24 + EAX[7:0]
 * bits wide and wrap.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include <pmon/cpu.h>
#include <pmon/msr.h>
#include <pmon/rdt.h>

#define MSR_QM_EVTSEL 0xc8d
#define MSR_QM_CTR 0xc8e
#define MSR_PQR_ASSOC 0xc8f
#define QM_ERROR (1ULL << 63)
#define QM_UNAVAILABLE (1ULL << 62)
#define RMID_MASK 0x3ffULL /* IA32_PQR_ASSOC[9:0] */

enum { EV_OCC = 1, EV_TOTAL = 2, EV_LOCAL = 3 }; /* IA32_QM_EVTSEL EvtID */

struct pmon_rdt_msr {
	const char *device;
	int *cpus;
	size_t ncpus;
	unsigned rmid, width;
	uint32_t upscale;
	bool ev[4];
	uint64_t saved_pqr[256], saved_evtsel;
	bool have_prev[4];
	uint64_t prev[4], acc[4]; /* raw last reading, bytes accumulated */
	bool restored;
	struct pmon_msr_write_rec *log;
	size_t nlog, caplog;
};

uint64_t pmon_rdt_mbm_delta(uint64_t prev, uint64_t cur, unsigned width, uint32_t upscale)
{
	uint64_t mask = width >= 62 ? (1ULL << 62) - 1 : (1ULL << width) - 1;

	return ((cur - prev) & mask) * upscale;
}

static int wr(struct pmon_rdt_msr *m, int cpu, uint32_t addr, uint64_t v, bool restore)
{
	if (m->nlog == m->caplog) {
		size_t cap = m->caplog ? m->caplog * 2 : 32;
		struct pmon_msr_write_rec *l = realloc(m->log, cap * sizeof(*l));
		if (!l)
			return -ENOMEM;
		m->log = l;
		m->caplog = cap;
	}
	m->log[m->nlog++] = (struct pmon_msr_write_rec){ cpu, addr, v, restore };
	return pmon_msr_write(m->device, cpu, addr, v);
}

void pmon_rdt_msr__free(struct pmon_rdt_msr *m)
{
	if (!m)
		return;
	free(m->cpus);
	free(m->log);
	free(m);
}

int pmon_rdt_msr__start(const char *device, const struct pmon_cpu_info *ci, const int *cpus,
			size_t ncpus, unsigned rmid, bool resctrl_mounted,
			struct pmon_rdt_msr **out)
{
	const struct pmon_rdt *r = &ci->rdt;
	struct pmon_rdt_msr *m;
	int err = 0;

	if (!r->pqm || !r->l3)
		return pmon__err(-EOPNOTSUPP,
				 "this CPU exposes no L3 monitoring (CPUID.(07H,0):EBX[12] "
				 "PQM = %d)",
				 r->pqm);
	if (resctrl_mounted)
		return pmon__err(-EBUSY,
				 "resctrl is mounted: the kernel owns the RMIDs and rewrites "
				 "IA32_PQR_ASSOC on every context switch; use pmon rdt without "
				 "--msr (or unmount resctrl)");
	if (!rmid || rmid > r->l3_max_rmid)
		return pmon__err(-EINVAL,
				 "RMID %u: choose 1..%" PRIu32 " (CPUID.(0FH,1):ECX; 0 is "
				 "everyone's default)",
				 rmid, r->l3_max_rmid);
	if (!ncpus || ncpus > 256)
		return pmon__err(-EINVAL, "1 to 256 CPUs");
	m = calloc(1, sizeof(*m));
	if (!m || !(m->cpus = malloc(ncpus * sizeof(*cpus)))) {
		free(m);
		return -ENOMEM;
	}
	memcpy(m->cpus, cpus, ncpus * sizeof(*cpus));
	m->device = device;
	m->ncpus = ncpus;
	m->rmid = rmid;
	m->width = r->counter_width ? r->counter_width : 24;
	m->upscale = r->upscale ? r->upscale : 1;
	m->ev[EV_OCC] = r->occupancy;
	m->ev[EV_TOTAL] = r->mbm_total;
	m->ev[EV_LOCAL] = r->mbm_local;
	err = pmon_msr_read(device, cpus[0], MSR_QM_EVTSEL, &m->saved_evtsel);
	for (size_t i = 0; i < ncpus && !err; i++)
		err = pmon_msr_read(device, cpus[i], MSR_PQR_ASSOC, &m->saved_pqr[i]);
	/* Tag each CPU's traffic with the RMID, keeping its CLOS (bits 63:32). */
	for (size_t i = 0; i < ncpus && !err; i++)
		err = wr(m, cpus[i], MSR_PQR_ASSOC, (m->saved_pqr[i] & ~RMID_MASK) | rmid, false);
	if (err) {
		pmon_rdt_msr__restore(m);
		pmon_rdt_msr__free(m);
		return err;
	}
	*out = m;
	return 0;
}

static struct pmon_rdt_value read_event(struct pmon_rdt_msr *m, int ev, int *err)
{
	struct pmon_rdt_value v = { 0, PMON_RDT_ABSENT };
	uint64_t raw;

	if (!m->ev[ev])
		return v;
	*err = wr(m, m->cpus[0], MSR_QM_EVTSEL, (uint64_t)m->rmid << 32 | (uint64_t)ev, false);
	if (!*err)
		*err = pmon_msr_read(m->device, m->cpus[0], MSR_QM_CTR, &raw);
	if (*err)
		return v;
	if (raw & QM_ERROR) {
		v.state = PMON_RDT_ERROR;
		return v;
	}
	if (raw & QM_UNAVAILABLE) {
		v.state = PMON_RDT_UNAVAILABLE;
		return v;
	}
	raw &= (1ULL << 62) - 1;
	v.state = PMON_RDT_OK;
	if (ev == EV_OCC) {
		v.v = raw * m->upscale;
		return v;
	}
	/* Bandwidth: accumulate wrap-safe deltas into a cumulative byte count. */
	if (m->have_prev[ev])
		m->acc[ev] += pmon_rdt_mbm_delta(m->prev[ev], raw, m->width, m->upscale);
	m->prev[ev] = raw;
	m->have_prev[ev] = true;
	v.v = m->acc[ev];
	return v;
}

int pmon_rdt_msr__read(struct pmon_rdt_msr *m, struct pmon_rdt_domain *d)
{
	int err = 0;

	memset(d, 0, sizeof(*d));
	pmon__fmt(d->name, sizeof(d->name), "rmid%u@cpu%d", m->rmid, m->cpus[0]);
	d->occupancy = read_event(m, EV_OCC, &err);
	if (!err)
		d->total = read_event(m, EV_TOTAL, &err);
	if (!err)
		d->local = read_event(m, EV_LOCAL, &err);
	return err;
}

int pmon_rdt_msr__restore(struct pmon_rdt_msr *m)
{
	int first = 0, err;

	if (!m || m->restored)
		return 0;
	m->restored = true;
	for (size_t i = m->ncpus; i-- > 0;)
		if ((err = wr(m, m->cpus[i], MSR_PQR_ASSOC, m->saved_pqr[i], true)) && !first)
			first = err;
	if ((err = wr(m, m->cpus[0], MSR_QM_EVTSEL, m->saved_evtsel, true)) && !first)
		first = err;
	return first;
}

const struct pmon_msr_write_rec *pmon_rdt_msr__writes(const struct pmon_rdt_msr *m, size_t *n)
{
	*n = m->nlog;
	return m->log;
}
