/* SPDX-License-Identifier: MIT */
/*
 * A fake /dev/cpu/N/msr that behaves like the hardware, not like a flat file,
 * for the MSR users' unit tests (plugged in through pmon__msr_set_ops()):
 *  - IA32_PMCx (C1H) stores the low 32 bits sign-extended to the counter
 *    width (SDM Vol. 3B 21.2.6 "Full-Width Writes to Performance Counters");
 *    IA32_A_PMCx (4C1H) takes the full width, and exists only when
 *    IA32_PERF_CAPABILITIES[13] (FW_WRITE) is set;
 *  - a reserved bit in IA32_PERFEVTSELx, IA32_FIXED_CTR_CTRL,
 *    IA32_PERF_GLOBAL_CTRL, IA32_QM_EVTSEL or IA32_PQR_ASSOC, a write to a
 *    read-only MSR or any access to an MSR the CPU lacks is refused with
 *    -EIO, as the msr driver reports the #GP;
 *  - IA32_QM_CTR returns the data of the L3 domain of the CPU that reads it
 *    (SDM 17.16.7), for the RMID and event selected in that CPU's
 *    IA32_QM_EVTSEL; the MBM counts (events 2 and 3) wrap at mbm_width bits
 *    when it is set (SDM 17.16.7: 24 + CPUID.(0FH,1):EAX[7:0] bits);
 *  - Sub-NUMA Clustering (snc_nodes > 1): MSR_RMID_SNC_CONFIG (CA0H) powers
 *    on at 1, legacy mode; with bit 0 clear (RMID sharing mode, as Linux
 *    sets it) the traffic of CPUs tagged with logical RMID qm_rmid on node k
 *    is read as physical RMID qm_rmid + k * (l3_rmids / snc_nodes), from
 *    any CPU of the L3 (Linux's logical_rmid_to_physical_rmid()).
 */
#ifndef PMON_TEST_FAKE_MSR_H
#define PMON_TEST_FAKE_MSR_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

#define FAKE_CPUS 8
#define FAKE_DOMAINS 4
#define FAKE_SNC 6

struct fake_msr {
	/* the machine */
	unsigned ncpus, gp, width, fixed, fixed_width;
	/* a hybrid part: CPU i's own GP counter count when nonzero (an E-core
	 * has fewer than a P-core; IA32_PERFEVTSELx beyond it faults there) */
	unsigned gp_cpu[FAKE_CPUS];
	bool pdcm, fw_write;
	unsigned rmid_bits;
	int l3_of_cpu[FAKE_CPUS];
	/* per-CPU registers */
	uint64_t evtsel[FAKE_CPUS][8], pmc[FAKE_CPUS][8];
	uint64_t fixed_ctr[FAKE_CPUS][4], fixed_ctrl[FAKE_CPUS], global[FAKE_CPUS];
	uint64_t pqr[FAKE_CPUS], qm_evtsel[FAKE_CPUS];
	/* IA32_QM_CTR data per L3 domain for RMID qm_rmid, by event 1-3 */
	unsigned qm_rmid;
	uint64_t qm[FAKE_DOMAINS][4];
	unsigned mbm_width; /* 0: qm[] read back whole */
	/* Sub-NUMA Clustering: per L3 domain and node, by event */
	unsigned snc_nodes, l3_rmids; /* nodes per L3; CPUID.(0FH,1):ECX + 1 */
	bool snc_msr; /* MSR_RMID_SNC_CONFIG exists */
	uint64_t snc_config;
	uint64_t snc_qm[FAKE_DOMAINS][FAKE_SNC][4];
	unsigned refused; /* accesses answered with -EIO */
};

static inline uint64_t fake_mask(unsigned bits)
{
	return bits >= 64 ? ~0ULL : (1ULL << bits) - 1;
}

static inline unsigned fake_gp(const struct fake_msr *f, int cpu)
{
	return f->gp_cpu[cpu] ? f->gp_cpu[cpu] : f->gp;
}

static inline int fake_refuse(struct fake_msr *f)
{
	f->refused++;
	return -EIO;
}

static inline int fake_msr_read(void *ctx, int cpu, uint32_t a, uint64_t *v)
{
	struct fake_msr *f = ctx;

	if (cpu < 0 || (unsigned)cpu >= f->ncpus)
		return -ENXIO; /* the driver's open() of a CPU that is not there */
	if (a >= 0xc1 && a < 0xc1 + fake_gp(f, cpu))
		*v = f->pmc[cpu][a - 0xc1];
	else if (a >= 0x4c1 && a < 0x4c1 + fake_gp(f, cpu) && f->fw_write)
		*v = f->pmc[cpu][a - 0x4c1];
	else if (a >= 0x186 && a < 0x186 + fake_gp(f, cpu))
		*v = f->evtsel[cpu][a - 0x186];
	else if (a >= 0x309 && a < 0x309 + f->fixed)
		*v = f->fixed_ctr[cpu][a - 0x309];
	else if (a == 0x38d && f->fixed)
		*v = f->fixed_ctrl[cpu];
	else if (a == 0x38f)
		*v = f->global[cpu];
	else if (a == 0x345 && f->pdcm)
		*v = f->fw_write ? 1ULL << 13 : 0;
	else if (a == 0xc8d && f->rmid_bits)
		*v = f->qm_evtsel[cpu];
	else if (a == 0xc8e && f->rmid_bits) {
		uint64_t sel = f->qm_evtsel[cpu];
		unsigned evt = (unsigned)(sel & 0xff), rmid = (unsigned)(sel >> 32);
		unsigned per = f->snc_nodes > 1 ? f->l3_rmids / f->snc_nodes : 0;
		if (evt < 1 || evt > 3)
			*v = 1ULL << 63; /* Error */
		else if (per && !(f->snc_config & 1))
			*v = rmid % per == f->qm_rmid && rmid / per < f->snc_nodes
				? f->snc_qm[f->l3_of_cpu[cpu]][rmid / per][evt]
				: 0;
		else
			*v = rmid == f->qm_rmid ? f->qm[f->l3_of_cpu[cpu]][evt] : 0;
		if (evt >= 2 && evt <= 3 && f->mbm_width)
			*v &= fake_mask(f->mbm_width);
	} else if (a == 0xc8f && f->rmid_bits)
		*v = f->pqr[cpu];
	else if (a == 0xca0 && f->snc_msr)
		*v = f->snc_config;
	else
		return fake_refuse(f);
	return 0;
}

static inline int fake_msr_write(void *ctx, int cpu, uint32_t a, uint64_t v)
{
	struct fake_msr *f = ctx;
	uint64_t fixed_ok = 0;

	if (cpu < 0 || (unsigned)cpu >= f->ncpus)
		return -ENXIO;
	for (unsigned i = 0; i < f->fixed; i++)
		fixed_ok |= 0xfULL << (4 * i);
	if (a >= 0xc1 && a < 0xc1 + fake_gp(f, cpu)) {
		/* SDM 21.2.6: bits 31:0 written, sign-extended into the rest. */
		uint64_t lo = v & 0xffffffffULL;
		if (lo >> 31)
			lo |= ~0xffffffffULL;
		f->pmc[cpu][a - 0xc1] = lo & fake_mask(f->width);
	} else if (a >= 0x4c1 && a < 0x4c1 + fake_gp(f, cpu) && f->fw_write) {
		if (v & ~fake_mask(f->width))
			return fake_refuse(f);
		f->pmc[cpu][a - 0x4c1] = v;
	} else if (a >= 0x186 && a < 0x186 + fake_gp(f, cpu)) {
		if (v >> 32)
			return fake_refuse(f);
		f->evtsel[cpu][a - 0x186] = v;
	} else if (a >= 0x309 && a < 0x309 + f->fixed) {
		if (v & ~fake_mask(f->fixed_width))
			return fake_refuse(f);
		f->fixed_ctr[cpu][a - 0x309] = v;
	} else if (a == 0x38d && f->fixed) {
		if (v & ~fixed_ok)
			return fake_refuse(f);
		f->fixed_ctrl[cpu] = v;
	} else if (a == 0x38f) {
		if (v & ~(fake_mask(fake_gp(f, cpu)) | fake_mask(f->fixed) << 32))
			return fake_refuse(f);
		f->global[cpu] = v;
	} else if (a == 0xc8d && f->rmid_bits) {
		if (v & ~(0xffULL | fake_mask(f->rmid_bits) << 32))
			return fake_refuse(f);
		f->qm_evtsel[cpu] = v;
	} else if (a == 0xc8f && f->rmid_bits) {
		if (v & ~(fake_mask(f->rmid_bits) | 0xffffffff00000000ULL))
			return fake_refuse(f);
		f->pqr[cpu] = v;
	} else if (a == 0xca0 && f->snc_msr) {
		if (v & ~1ULL)
			return fake_refuse(f);
		f->snc_config = v;
	} else {
		return fake_refuse(f); /* unknown, or read-only (345H, C8EH) */
	}
	return 0;
}

static inline void fake_msr_plug(struct fake_msr *f, struct pmon__msr_ops *ops)
{
	ops->read = fake_msr_read;
	ops->write = fake_msr_write;
	ops->ctx = f;
	pmon__msr_set_ops(ops);
}

static inline void fake_msr_unplug(void)
{
	pmon__msr_set_ops(NULL);
}

#endif
