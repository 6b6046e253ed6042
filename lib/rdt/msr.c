// SPDX-License-Identifier: MIT
/*
 * RDT monitoring through MSRs (pmon/rdt.h), exactly as the CMT/MBM seed lays
 * it out: the RMID goes into IA32_PQR_ASSOC of each monitored logical CPU
 * (SDM 17.16.6); IA32_QM_EVTSEL selects event and RMID, IA32_QM_CTR returns
 * the data with an Error (63) and an Unavailable (62) bit (17.16.7); the
 * data times CPUID.(0FH,1):EBX is bytes; MBM counters are 24 + EAX[7:0]
 * bits wide (44 on AMD parts that report 0) and wrap. IA32_QM_CTR answers
 * for the L3 domain of the CPU that reads it, so each domain is read on one
 * of its own CPUs and reported apart, as resctrl's mon_L3_NN files are.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include <pmon/cpu.h>
#include <pmon/monitor.h>
#include <pmon/msr.h>
#include <pmon/rdt.h>

#define MSR_QM_EVTSEL 0xc8d
#define MSR_QM_CTR 0xc8e
#define MSR_PQR_ASSOC 0xc8f
#define MSR_RMID_SNC_CONFIG 0xca0 /* bit 0: 1 (power-on) legacy mode, 0 RMID sharing */
#define SNC_MAX 6
#define QM_ERROR (1ULL << 63)
#define QM_UNAVAILABLE (1ULL << 62)

enum { EV_OCC = 1, EV_TOTAL = 2, EV_LOCAL = 3 }; /* IA32_QM_EVTSEL EvtID */

struct dom {
	int id; /* L3 id from sysfs (-1 unknown) */
	int reader; /* the CPU IA32_QM_CTR is read on */
	uint64_t saved_evtsel;
	/* per SNC node of the domain (one without SNC), by event: */
	bool have_prev[SNC_MAX][4];
	uint64_t prev[SNC_MAX][4], chunks[SNC_MAX][4]; /* raw last reading, units */
};

struct pmon_rdt_msr {
	const char *device;
	int *cpus;
	size_t ncpus;
	unsigned rmid, width;
	unsigned snc, num_rmid; /* SNC nodes per L3 (1: none), logical RMIDs */
	uint64_t rmid_mask; /* IA32_PQR_ASSOC[rmid_bits-1:0] */
	uint32_t upscale;
	struct pmon_rdt rdt; /* for the errata */
	bool ev[4];
	uint64_t *saved_pqr;
	struct dom dom[PMON_RDT_MAX_DOMAINS];
	size_t ndom;
	bool restored;
	bool written; /* IA32_PQR_ASSOC writes began: only then is there anything to put back */
	char *state_file; /* NULL: none kept */
	/* The writes, most recent last; a long run's event-select writes (one
	 * per event, node and domain each second) are dropped from the front
	 * past 4096, keeping the last 1024. */
	struct pmon__msr_log log;
};

uint64_t pmon_rdt_mbm_delta(uint64_t prev, uint64_t cur, unsigned width, uint32_t upscale)
{
	uint64_t mask = width >= 62 ? (1ULL << 62) - 1 : (1ULL << width) - 1;

	return ((cur - prev) & mask) * upscale;
}

static int wr(struct pmon_rdt_msr *m, int cpu, uint32_t addr, uint64_t v, bool restore)
{
	return pmon__msr_log_write(&m->log, m->device, cpu, addr, v, restore);
}

void pmon_rdt_msr__free(struct pmon_rdt_msr *m)
{
	if (!m)
		return;
	free(m->cpus);
	free(m->saved_pqr);
	free(m->state_file);
	free(m->log.rec);
	free(m);
}

/* One domain per distinct L3 id, read on the first listed CPU of each. */
static int group_domains(struct pmon_rdt_msr *m, const int *l3_ids)
{
	for (size_t i = 0; i < m->ncpus; i++) {
		int id = l3_ids ? l3_ids[i] : -1;
		size_t d;

		if (id < 0 && m->ndom)
			continue; /* unknown: counted in the first domain */
		for (d = 0; d < m->ndom && m->dom[d].id != id; d++)
			;
		if (d < m->ndom)
			continue;
		if (m->ndom == PMON_RDT_MAX_DOMAINS)
			return pmon__err(-E2BIG, "more than %d L3 domains", PMON_RDT_MAX_DOMAINS);
		m->dom[m->ndom].id = id;
		m->dom[m->ndom].reader = m->cpus[i];
		m->ndom++;
	}
	return 0;
}

/* What puts the registers back, in order: every CPU's IA32_PQR_ASSOC,
 * then each domain's IA32_QM_EVTSEL (the reverse of programming). */
static int restore_seq(const void *obj, int (*emit)(void *ctx, int cpu, uint32_t addr, uint64_t v),
		       void *ctx)
{
	const struct pmon_rdt_msr *m = obj;
	int first = 0, err;

	for (size_t i = m->ncpus; i-- > 0;)
		if ((err = emit(ctx, m->cpus[i], MSR_PQR_ASSOC, m->saved_pqr[i])) && !first)
			first = err;
	for (size_t d = m->ndom; d-- > 0;)
		if ((err = emit(ctx, m->dom[d].reader, MSR_QM_EVTSEL, m->dom[d].saved_evtsel)) &&
		    !first)
			first = err;
	return first;
}

static int emit_write(void *ctx, int cpu, uint32_t addr, uint64_t v)
{
	return wr(ctx, cpu, addr, v, true);
}

/* Linux's snc_cpu_ids[] (arch/x86/kernel/cpu/resctrl/monitor.c): the
 * family 6 models with MSR_RMID_SNC_CONFIG. */
static const unsigned snc_models[] = {
	0x6a, /* ICELAKE_X */
	0x8f, /* SAPPHIRERAPIDS_X */
	0xcf, /* EMERALDRAPIDS_X */
	0xad, /* GRANITERAPIDS_X */
	0xaf, /* ATOM_CRESTMONT_X */
};

/* CPUs in a sysfs cpumask ("ff,00000000"): its set bits. */
static unsigned mask_weight(const char *s)
{
	unsigned n = 0;

	for (; *s; s++) {
		int v = *s >= '0' && *s <= '9'	 ? *s - '0'
			: *s >= 'a' && *s <= 'f' ? *s - 'a' + 10
			: *s >= 'A' && *s <= 'F' ? *s - 'A' + 10
						 : 0;
		n += (unsigned)__builtin_popcount((unsigned)v);
	}
	return n;
}

/* CPUs sharing CPU 0's L3 (cpu0/cache/indexN, level 3, shared_cpu_map). */
static unsigned cpus_per_l3(const char *sys)
{
	char path[512], buf[4096];
	long level;

	for (int idx = 0; idx < 16; idx++) {
		pmon__fmt(path, sizeof(path), "%s/devices/system/cpu/cpu0/cache/index%d/level", sys,
			  idx);
		if (pmon__read_long(path, &level))
			return 0;
		if (level != 3)
			continue;
		pmon__fmt(path, sizeof(path),
			  "%s/devices/system/cpu/cpu0/cache/index%d/shared_cpu_map", sys, idx);
		return pmon__read_text(path, buf, sizeof(buf)) > 0 ? mask_weight(buf) : 0;
	}
	return 0;
}

/* CPUs of CPU 0's NUMA node (node/nodeN/cpulist holding 0). */
static unsigned cpus_per_node(const char *sys)
{
	char path[512], buf[4096];
	unsigned found = 0;
	DIR *d;
	struct dirent *e;

	pmon__fmt(path, sizeof(path), "%s/devices/system/node", sys);
	if (!(d = opendir(path)))
		return 0;
	while (!found && (e = readdir(d))) {
		long *v, node;
		size_t n;
		char *end;
		if (strncmp(e->d_name, "node", 4) || !isdigit((unsigned char)e->d_name[4]))
			continue;
		node = strtol(e->d_name + 4, &end, 10);
		if (*end || node < 0)
			continue;
		pmon__fmt(path, sizeof(path), "%s/devices/system/node/node%ld/cpulist", sys, node);
		if (pmon__read_text(path, buf, sizeof(buf)) <= 0)
			continue;
		buf[strcspn(buf, "\n")] = '\0';
		if (pmon__idlist_parse(buf, 1 << 16, &v, &n))
			continue;
		for (size_t i = 0; i < n; i++)
			if (v[i] == 0)
				found = (unsigned)n;
		free(v);
	}
	closedir(d);
	return found;
}

unsigned pmon_rdt_snc_nodes(const char *sysfs_root, const struct pmon_cpu_info *ci)
{
	const char *sys = sysfs_root ? sysfs_root : "/sys";
	unsigned l3, node, snc;
	bool model = false;

	/* snc_get_config(): only the models above; there, the CPUs sharing
	 * CPU 0's L3 over the CPUs of CPU 0's node; only 1, 2, 3, 4 and 6
	 * are believed ("Ignore improbable SNC node count"). */
	if (ci->id.vendor != PMON_VENDOR_INTEL || ci->id.family != 6)
		return 1;
	for (size_t i = 0; i < PMON_ARRAY_SIZE(snc_models); i++)
		model |= ci->id.model == snc_models[i];
	if (!model || !(l3 = cpus_per_l3(sys)) || !(node = cpus_per_node(sys)))
		return 1;
	snc = l3 / node;
	return snc >= 1 && snc <= SNC_MAX && snc != 5 ? snc : 1;
}

/* SNC counts correctly only in RMID sharing mode, MSR_RMID_SNC_CONFIG bit 0
 * clear, which Linux sets up as resctrl starts (arch_mon_domain_online()):
 * the power-on legacy mode partitions the RMIDs between the nodes instead,
 * and pmon does not change the mode under other users. */
static int check_snc_mode(struct pmon_rdt_msr *m)
{
	for (size_t d = 0; d < m->ndom; d++) {
		uint64_t v;
		int err = pmon_msr_read(m->device, m->dom[d].reader, MSR_RMID_SNC_CONFIG, &v);
		if (err)
			return pmon__err(-EOPNOTSUPP,
					 "Sub-NUMA Clustering with %u nodes per L3, but "
					 "MSR_RMID_SNC_CONFIG (CA0H) cannot be read on CPU %d: the "
					 "RMID mode is unknown",
					 m->snc, m->dom[d].reader);
		if (v & 1)
			return pmon__err(
				-EOPNOTSUPP,
				"Sub-NUMA Clustering with %u nodes per L3, and "
				"MSR_RMID_SNC_CONFIG (CA0H) bit 0 = 1 on CPU %d: RMIDs are "
				"in legacy mode, split between the nodes; an SNC-aware "
				"kernel (Linux 6.11 and later, arch_mon_domain_online()) "
				"selects RMID sharing mode as each domain comes online, this "
				"one did not, and pmon does not change the mode under other "
				"users",
				m->snc, m->dom[d].reader);
	}
	return 0;
}

/* The registers a state file names, for its messages. */
#define STATE_WHAT "IA32_PQR_ASSOC and IA32_QM_EVTSEL (RDT monitoring)"

static int rdt_msr_start(const char *device, const struct pmon_cpu_info *ci, const int *cpus,
			 size_t ncpus, const int *l3_ids, unsigned rmid, bool resctrl_mounted,
			 const struct pmon_rdt_msr_opts *opts, struct pmon_rdt_msr **out)
{
	const char *state = PMON_OPTS_GET(opts, state_file, NULL);
	const char *sysfs = PMON_OPTS_GET(opts, sysfs_root, NULL);
	unsigned snc = 1, num_rmid;
	const struct pmon_rdt *r = &ci->rdt;
	struct pmon_rdt_msr *m;
	unsigned bits;
	int err = 0;

	if (!r->pqm || !r->l3)
		return pmon__err(-EOPNOTSUPP,
				 "this CPU exposes no L3 monitoring (CPUID.(07H,0):EBX[12] "
				 "PQM = %d)",
				 r->pqm);
	if (r->mon_erratum_disabled)
		return pmon__err(-EOPNOTSUPP,
				 "Skylake-SP stepping %u: CMT and MBM have errata and Linux "
				 "disables them (resctrl __check_quirks_intel); so does pmon",
				 ci->id.stepping);
	if (resctrl_mounted)
		return pmon__err(-EBUSY,
				 "resctrl is mounted: the kernel owns the RMIDs and rewrites "
				 "IA32_PQR_ASSOC on every context switch; monitor through resctrl "
				 "(or unmount it)");
	/* Sub-NUMA Clustering: Linux divides the RMIDs between the nodes of
	 * an L3 (rdt_get_mon_l3_config(): num_rmid = (max + 1) / snc). */
	snc = pmon_rdt_snc_nodes(sysfs, ci);
	num_rmid = (r->l3_max_rmid + 1) / snc;
	if (!rmid || rmid >= num_rmid) {
		if (snc > 1)
			return pmon__err(
				-EINVAL,
				"RMID %u: choose 1..%u (Sub-NUMA Clustering, %u nodes per "
				"L3: (CPUID.(0FH,1):ECX + 1) / %u RMIDs per node, as Linux "
				"divides them; 0 is everyone's default)",
				rmid, num_rmid - 1, snc, snc);
		return pmon__err(-EINVAL,
				 "RMID %u: choose 1..%" PRIu32 " (CPUID.(0FH,1):ECX; 0 is "
				 "everyone's default)",
				 rmid, r->l3_max_rmid);
	}
	if (!ncpus || ncpus > 4096)
		return pmon__err(-EINVAL, "1 to 4096 CPUs");
	/* Before anything is read: a leftover says more than the values would. */
	if (state && (err = pmon__msr_state_check(state, STATE_WHAT)))
		return err;
	m = calloc(1, sizeof(*m));
	if (!m || !(m->cpus = malloc(ncpus * sizeof(*cpus))) ||
	    !(m->saved_pqr = calloc(ncpus, sizeof(*m->saved_pqr))) ||
	    (state && !(m->state_file = strdup(state)))) {
		pmon_rdt_msr__free(m);
		return -ENOMEM;
	}
	memcpy(m->cpus, cpus, ncpus * sizeof(*cpus));
	m->device = device;
	m->log.max = 4096; /* a long run writes event selects every second */
	m->ncpus = ncpus;
	m->rmid = rmid;
	m->snc = snc;
	m->num_rmid = num_rmid;
	m->rdt = *r;
	/* SDM 17.16.6: RMID field = ceil(log2(1 + CPUID.(0FH,0):EBX)) bits;
	 * a snapshot without 0FH.0 keeps the 10 bits of the first parts. */
	bits = r->rmid_bits ? r->rmid_bits : 10;
	m->rmid_mask = bits >= 32 ? 0xffffffffULL : (1ULL << bits) - 1;
	m->width = r->counter_width ? r->counter_width : 24;
	m->upscale = r->upscale ? r->upscale : 1;
	/* Each SNC node counts its share: Linux's mon_scale = upscale / snc. */
	if (snc > 1 && m->upscale / snc)
		m->upscale /= snc;
	m->ev[EV_OCC] = r->occupancy;
	m->ev[EV_TOTAL] = r->mbm_total;
	m->ev[EV_LOCAL] = r->mbm_local;
	err = group_domains(m, l3_ids);
	if (!err && snc > 1)
		err = check_snc_mode(m);
	for (size_t d = 0; d < m->ndom && !err; d++)
		err = pmon_msr_read(device, m->dom[d].reader, MSR_QM_EVTSEL,
				    &m->dom[d].saved_evtsel);
	for (size_t i = 0; i < ncpus && !err; i++)
		err = pmon_msr_read(device, cpus[i], MSR_PQR_ASSOC, &m->saved_pqr[i]);
	/* Saved before the first write: a pmon killed from here on leaves the
	 * writes that put the registers back (`pmon rdt --msr --cleanup`). */
	if (!err && m->state_file && (err = pmon__msr_state_write(state, device, restore_seq, m))) {
		pmon_rdt_msr__free(m);
		return err;
	}
	/* Tag each CPU's traffic with the RMID: clear the old RMID field, keep
	 * the CLOS (bits 63:32) and anything else there. Only from here on is
	 * there anything to put back: a refusal before writes nothing. */
	m->written = !err;
	for (size_t i = 0; i < ncpus && !err; i++)
		err = wr(m, cpus[i], MSR_PQR_ASSOC, (m->saved_pqr[i] & ~m->rmid_mask) | rmid,
			 false);
	if (err) {
		char detail[512];
		pmon__strlcpy(detail, pmon_errdetail(), sizeof(detail));
		if (m->written)
			pmon_rdt_msr__restore(m);
		pmon__detail("%s", detail);
		pmon_rdt_msr__free(m);
		return err;
	}
	*out = m;
	return 0;
}

struct pmon_rdt_msr *pmon_rdt_msr__start(const char *device, const struct pmon_cpu_info *ci,
					 const int *cpus, size_t ncpus, const int *l3_ids,
					 unsigned rmid, bool resctrl_mounted)
{
	struct pmon_rdt_msr *m = NULL;
	int err = rdt_msr_start(device, ci, cpus, ncpus, l3_ids, rmid, resctrl_mounted, NULL, &m);

	return pmon__ret_ptr(err, m);
}

struct pmon_rdt_msr *pmon_rdt_msr__start_opts(const char *device, const struct pmon_cpu_info *ci,
					      const int *cpus, size_t ncpus, const int *l3_ids,
					      unsigned rmid, bool resctrl_mounted,
					      const struct pmon_rdt_msr_opts *opts)
{
	struct pmon_rdt_msr *m = NULL;
	int err = rdt_msr_start(device, ci, cpus, ncpus, l3_ids, rmid, resctrl_mounted, opts, &m);

	return pmon__ret_ptr(err, m);
}

/* Select @ev for SNC node @k's physical RMID in IA32_QM_EVTSEL and read
 * IA32_QM_CTR, on the domain's own CPU (SDM 17.16.7). In RMID sharing mode
 * the logical RMID of IA32_PQR_ASSOC counts on node k as physical RMID
 * logical + k * num_rmid (Linux's logical_rmid_to_physical_rmid(), with
 * k = cpu_to_node(cpu) % snc), readable from any CPU of the L3. */
static int read_raw(struct pmon_rdt_msr *m, struct dom *d, unsigned k, int ev, uint64_t *raw)
{
	uint64_t prmid = m->rmid + (uint64_t)k * m->num_rmid;
	int err = wr(m, d->reader, MSR_QM_EVTSEL, prmid << 32 | (uint64_t)ev, false);

	return err ? err : pmon_msr_read(m->device, d->reader, MSR_QM_CTR, raw);
}

/* Bandwidth: fold the step since the last reading, wrap-safe at the
 * enumerated width (AMD's 44 bits included), into the running count --
 * Linux's mbm_overflow_count() into arch_mbm_state.chunks. A reading with
 * the Error or Unavailable bit carries no data and moves nothing. */
static void fold(struct pmon_rdt_msr *m, struct dom *d, unsigned k, int ev, uint64_t raw)
{
	raw &= (1ULL << 62) - 1;
	if (d->have_prev[k][ev])
		d->chunks[k][ev] += pmon_rdt_mbm_delta(d->prev[k][ev], raw, m->width, 1);
	d->prev[k][ev] = raw;
	d->have_prev[k][ev] = true;
}

/* One event of a domain: the sum over its SNC nodes' physical RMIDs (one
 * without SNC). As Linux's __mon_event_count() sums the nodes of an L3, a
 * node that answers Error or Unavailable is left out of the sum; the state
 * is that node's only when no node has data. */
static struct pmon_rdt_value read_event(struct pmon_rdt_msr *m, struct dom *d, int ev, int *err)
{
	struct pmon_rdt_value v = { 0, PMON_RDT_ABSENT };
	enum pmon_rdt_state bad = PMON_RDT_ABSENT;
	uint64_t sum = 0;
	bool any = false;

	if (!m->ev[ev])
		return v;
	for (unsigned k = 0; k < m->snc; k++) {
		uint64_t raw;
		if ((*err = read_raw(m, d, k, ev, &raw)))
			return v;
		if (raw & (QM_ERROR | QM_UNAVAILABLE)) {
			if (bad == PMON_RDT_ABSENT)
				bad = raw & QM_ERROR ? PMON_RDT_ERROR : PMON_RDT_UNAVAILABLE;
			continue;
		}
		any = true;
		if (ev == EV_OCC) {
			sum += raw & ((1ULL << 62) - 1);
			continue;
		}
		/* Linux corrects the count (get_corrected_mbm_count(), by
		 * the logical RMID) before scaling it to bytes. */
		fold(m, d, k, ev, raw);
		sum += pmon_rdt_mbm_correct(&m->rdt, m->rmid, d->chunks[k][ev]);
	}
	/* A bandwidth sum without one node's share would drop, then jump by
	 * all the node missed when it answers again: while any node has no
	 * data, the domain has none (its count resumes, wrap-safe, from the
	 * node's last good reading). Occupancy is a level: the nodes that
	 * answered are what is there. */
	if (!any || (ev != EV_OCC && bad != PMON_RDT_ABSENT)) {
		v.state = bad;
		return v;
	}
	v.state = PMON_RDT_OK;
	v.v = sum * m->upscale;
	return v;
}

unsigned long pmon_rdt_mbm_samples(unsigned long interval_ms)
{
	unsigned long n = interval_ms / PMON_RDT_MBM_SAMPLE_MS;

	return n + (n * PMON_RDT_MBM_SAMPLE_MS < interval_ms) + !interval_ms;
}

int pmon_rdt_msr__sample(struct pmon_rdt_msr *m)
{
	int err = 0;

	if (m->restored)
		return pmon__err(-EINVAL, "RDT monitoring was already put back: nothing to sample");
	for (size_t i = 0; i < m->ndom && !err; i++)
		for (int ev = EV_TOTAL; ev <= EV_LOCAL && !err; ev++)
			for (unsigned k = 0; k < m->snc && m->ev[ev] && !err; k++) {
				uint64_t raw;
				if ((err = read_raw(m, &m->dom[i], k, ev, &raw)))
					continue;
				if (!(raw & (QM_ERROR | QM_UNAVAILABLE)))
					fold(m, &m->dom[i], k, ev, raw);
			}
	return err;
}

int pmon_rdt_msr__read(struct pmon_rdt_msr *m, struct pmon_rdt_reading *r)
{
	int err = 0;

	memset(r, 0, sizeof(*r));
	if (m->restored)
		return pmon__err(-EINVAL, "RDT monitoring was already put back: nothing to read");
	for (size_t i = 0; i < m->ndom && !err; i++) {
		struct pmon_rdt_domain *d = &r->d[r->n++];
		struct dom *dm = &m->dom[i];

		if (dm->id >= 0)
			pmon__fmt(d->name, sizeof(d->name), "mon_L3_%02d", dm->id);
		else
			pmon__fmt(d->name, sizeof(d->name), "rmid%u@cpu%d", m->rmid, dm->reader);
		d->occupancy = read_event(m, dm, EV_OCC, &err);
		if (!err)
			d->total = read_event(m, dm, EV_TOTAL, &err);
		if (!err)
			d->local = read_event(m, dm, EV_LOCAL, &err);
	}
	return err;
}

int pmon_rdt_msr__restore(struct pmon_rdt_msr *m)
{
	int first;

	if (!m || m->restored)
		return 0;
	m->restored = true;
	first = restore_seq(m, emit_write, m);
	if (!first && m->state_file)
		unlink(m->state_file); /* put back: nothing left to clean up */
	return first;
}

const struct pmon_msr_write_rec *pmon_rdt_msr__writes(const struct pmon_rdt_msr *m, size_t *n)
{
	*n = m->log.n;
	return m->log.rec;
}

size_t pmon_rdt_msr__writes_total(const struct pmon_rdt_msr *m)
{
	return m->log.n + m->log.dropped;
}
