/* SPDX-License-Identifier: MIT */
/*
 * x86-64 primitives, inline and header only: CPUID, RDTSC, RDTSCP, RDPMC and
 * the fences that order them. These are the instructions of the seeds; every
 * decision about whether one may run (RDPMC faults with #GP(0) when CR4.PCE is
 * clear at CPL 3, or when ECX names no counter) is made elsewhere (pmon/rdpmc.h,
 * the perf mmap page). Nothing here checks anything.
 */
#ifndef PMON_ARCH_H
#define PMON_ARCH_H

#include <stdint.h>

#if !defined(__x86_64__)
#error "pmon supports x86-64 only"
#endif

/* CPUID is serializing (SDM Vol. 3A 9.3); it is also the seeds' fence. */
static inline void pmon_cpuid(uint32_t leaf, uint32_t subleaf, uint32_t regs[4])
{
	__asm__ __volatile__("cpuid"
			     : "=a"(regs[0]), "=b"(regs[1]), "=c"(regs[2]), "=d"(regs[3])
			     : "a"(leaf), "c"(subleaf)
			     : "memory");
}

/* LFENCE waits for earlier instructions to complete locally before later
 * ones start: with it, RDTSC/RDPMC are ordered without CPUID's cost. */
static inline void pmon_lfence(void)
{
	__asm__ __volatile__("lfence" ::: "memory");
}

static inline void pmon_mfence(void)
{
	__asm__ __volatile__("mfence" ::: "memory");
}

/* A full serializing fence through CPUID leaf 0, as the RDPMC seed advises. */
static inline void pmon_serialize(void)
{
	uint32_t r[4];

	pmon_cpuid(0, 0, r);
}

/* RDTSC (0F 31): EDX:EAX <- TSC. Not serializing. */
static inline uint64_t pmon_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/* RDTSCP waits until earlier instructions executed; later ones may start
 * before it, hence the LFENCE after it in timing code. *aux gets TSC_AUX
 * (Linux stores the CPU and node number there). */
static inline uint64_t pmon_rdtscp(uint32_t *aux)
{
	uint32_t lo, hi, c;

	__asm__ __volatile__("rdtscp" : "=a"(lo), "=d"(hi), "=c"(c));
	if (aux)
		*aux = c;
	return ((uint64_t)hi << 32) | lo;
}

/* RDPMC (0F 33): EDX:EAX <- counter selected by ECX. Faults with #GP(0) when
 * not allowed; callers must have validated ECX and the permission first. */
static inline uint64_t pmon_rdpmc(uint32_t ecx)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdpmc" : "=a"(lo), "=d"(hi) : "c"(ecx));
	return ((uint64_t)hi << 32) | lo;
}

#endif
