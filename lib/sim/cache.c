// SPDX-License-Identifier: MIT
/*
 * The cache geometry a simulator needs (pmon/sim.h), decoded from a CPUID
 * snapshot, live or from a dump, so the simulated L1 and last-level caches
 * are this machine's (or the dump's), not the engine's own guess (valgrind
 * 3.19 takes this bhyve guest's LL for 512 MiB 2-way). Pure: reads only
 * the snapshot.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include <pmon/sim.h>

struct cache {
	unsigned type; /* 1 data, 2 instruction, 3 unified (leaf 4 EAX[4:0]) */
	unsigned level;
	struct pmon_cache_geom g;
};

static bool pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/*
 * Leaf 4 and AMD's 8000001DH share one layout (SDM Vol. 2A, CPUID leaf 04H;
 * APM Vol. 3, CPUID Fn8000_001D): EAX[4:0] type (0: no more caches),
 * EAX[7:5] level; EBX[11:0] line size - 1, EBX[21:12] physical line
 * partitions - 1, EBX[31:22] ways - 1; ECX sets - 1. The size is ways *
 * partitions * line * sets.
 */
static size_t deterministic(const struct pmon_cpuid *c, uint32_t leaf, struct cache *out,
			    size_t max)
{
	size_t n = 0;

	for (uint32_t sub = 0; sub < 32 && n < max; sub++) {
		struct pmon_cpuid_regs r;
		if (pmon_cpuid__get(c, leaf, sub, &r) || !(r.eax & 0x1f))
			break;
		uint64_t line = (r.ebx & 0xfff) + 1, parts = ((r.ebx >> 12) & 0x3ff) + 1;
		uint64_t ways = ((r.ebx >> 22) & 0x3ff) + 1, sets = (uint64_t)r.ecx + 1;
		out[n++] = (struct cache){ .type = r.eax & 0x1f,
					   .level = (r.eax >> 5) & 7,
					   .g = { .size = ways * parts * line * sets,
						  .assoc = (unsigned)(ways * parts),
						  .line = (unsigned)line } };
	}
	return n;
}

/* APM Vol. 3, CPUID Fn8000_0006: the L2/L3 associativity field's encoding
 * (0: disabled; 9: "see Fn8000_001D", which this CPU lacks; 0xF: fully). */
static const unsigned amd_assoc[16] = { 0, 1, 2, 3, 4, 6, 8, 0, 16, 0, 32, 48, 64, 96, 128, ~0u };

static struct pmon_cache_geom amd_geom(uint64_t size, unsigned assoc, unsigned line)
{
	struct pmon_cache_geom g = { .size = size, .assoc = assoc, .line = line };

	if (assoc == ~0u || assoc == 0xff) /* fully associative */
		g.assoc = line ? (unsigned)(size / line) : 0;
	return g;
}

/* AMD's older leaves: 80000005H ECX/EDX for L1 data/instruction ([31:24] KiB,
 * [23:16] ways, 0xFF fully, [7:0] line), 80000006H ECX for L2 ([31:16] KiB,
 * [15:12] encoded ways, [7:0] line) and EDX for L3 ([31:18] in 512 KiB). */
static size_t amd_legacy(const struct pmon_cpuid *c, struct cache *out)
{
	struct pmon_cpuid_regs r5, r6;
	size_t n = 0;

	if (pmon_cpuid__get(c, 0x80000005, 0, &r5))
		return 0;
	out[n++] = (struct cache){ 1, 1,
				   amd_geom((uint64_t)(r5.ecx >> 24) * 1024, (r5.ecx >> 16) & 0xff,
					    r5.ecx & 0xff) };
	out[n++] = (struct cache){ 2, 1,
				   amd_geom((uint64_t)(r5.edx >> 24) * 1024, (r5.edx >> 16) & 0xff,
					    r5.edx & 0xff) };
	if (pmon_cpuid__get(c, 0x80000006, 0, &r6))
		return n;
	unsigned a2 = amd_assoc[(r6.ecx >> 12) & 0xf], a3 = amd_assoc[(r6.edx >> 12) & 0xf];
	if (a2 && (r6.ecx >> 16))
		out[n++] = (struct cache){
			3, 2, amd_geom((uint64_t)(r6.ecx >> 16) * 1024, a2, r6.ecx & 0xff)
		};
	if (a3 && (r6.edx >> 18))
		out[n++] = (struct cache){
			3, 3, amd_geom((uint64_t)(r6.edx >> 18) * 512 * 1024, a3, r6.edx & 0xff)
		};
	return n;
}

/*
 * A set-associative simulator indexes sets by address bits, so their count
 * must be a power of two; a 30 MiB 12-way L3 has 40960. Keep size and line
 * and take the smallest associativity at least the real one that makes it
 * so (valgrind tweaks its own auto-detected LL the same way); false if none
 * up to 1024 ways.
 */
static bool fix_sets(struct pmon_cache_geom *g)
{
	if (!g->line || !g->assoc || g->size % g->line)
		return false;
	uint64_t lines = g->size / g->line;
	for (uint64_t a = g->assoc; a <= 1024 && a <= lines; a++)
		if (lines % a == 0 && pow2(lines / a)) {
			g->assoc = (unsigned)a;
			return true;
		}
	return false;
}

int pmon_sim_caches_from_cpuid(const struct pmon_cpuid *c, struct pmon_sim_caches *out)
{
	struct cache k[32];
	struct pmon_cpuid_regs r;
	size_t n = 0;
	bool amd = false;

	memset(out, 0, sizeof(*out));
	if (!pmon_cpuid__get(c, 0, 0, &r))
		amd = r.ebx == 0x68747541 /* "Auth" */ || r.ebx == 0x6f677948 /* "Hygo" */;
	if ((n = deterministic(c, 4, k, 32)))
		out->source = "CPUID leaf 4";
	else if (amd && (n = deterministic(c, 0x8000001d, k, 32)))
		out->source = "CPUID 8000001DH";
	else if (amd && (n = amd_legacy(c, k)))
		out->source = "CPUID 80000005H/80000006H";
	if (!n)
		return pmon__err(-ENOENT,
				 "%s enumerates no cache parameters (CPUID leaf 4, "
				 "8000001DH or 80000005H): give --l1 and --ll",
				 pmon_cpuid__source(c));
	const struct cache *i1 = NULL, *d1 = NULL, *ll = NULL;
	for (size_t i = 0; i < n; i++) {
		if (k[i].level == 1 && k[i].type == 2)
			i1 = &k[i];
		if (k[i].level == 1 && (k[i].type == 1 || k[i].type == 3))
			d1 = &k[i];
		if (k[i].type == 3 && k[i].level >= 2 && (!ll || k[i].level > ll->level))
			ll = &k[i];
	}
	if (!i1 || !d1 || !ll)
		return pmon__err(-ENOENT, "%s: %s enumerates no %s cache: give --l1 and --ll",
				 pmon_cpuid__source(c), out->source,
				 !i1	       ? "L1 instruction"
					 : !d1 ? "L1 data"
					       : "unified L2 or L3");
	out->i1 = i1->g;
	out->d1 = d1->g;
	out->ll = ll->g;
	out->ll_level = ll->level;
	if (out->ll.line && out->ll.assoc && !pow2(out->ll.size / out->ll.line / out->ll.assoc)) {
		unsigned was = out->ll.assoc;
		if (fix_sets(&out->ll))
			out->ll_assoc_enumerated = was;
	}
	return 0;
}

int pmon_cache_geom__check(const struct pmon_cache_geom *g)
{
	if (!g->size || !g->assoc || !g->line)
		return pmon__err(-EINVAL, "size, associativity and line size must not be zero");
	if (!pow2(g->line))
		return pmon__err(-EINVAL, "line size %u is not a power of two", g->line);
	if (g->line < 16) /* valgrind: an instruction must not straddle three lines */
		return pmon__err(-EINVAL, "line size %u is too small (at least 16)", g->line);
	if (g->size <= g->line)
		return pmon__err(-EINVAL, "size %llu is not larger than a line (%u)",
				 (unsigned long long)g->size, g->line);
	if (g->size % ((uint64_t)g->assoc * g->line))
		return pmon__err(-EINVAL,
				 "size %llu is not a multiple of associativity * line (%u * %u)",
				 (unsigned long long)g->size, g->assoc, g->line);
	uint64_t sets = g->size / ((uint64_t)g->assoc * g->line);
	if (!pow2(sets))
		return pmon__err(-EINVAL,
				 "%llu sets (size / (associativity * line)) is not a power of two",
				 (unsigned long long)sets);
	if (g->size > (1ULL << 31)) /* valgrind takes an Int */
		return pmon__err(-EINVAL, "size %llu is too large (at most 2G)",
				 (unsigned long long)g->size);
	return 0;
}

/* A non-negative decimal number with an optional K/M/G suffix (@suffix). */
static int parse_num(const char *s, char **end, bool suffix, uint64_t *out)
{
	uint64_t v = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (suffix && *p) {
		unsigned shift = *p == 'K' || *p == 'k' ? 10
			: *p == 'M' || *p == 'm'	? 20
			: *p == 'G' || *p == 'g'	? 30
							: 0;
		if (shift) {
			if (v > (UINT64_MAX >> shift))
				return -ERANGE;
			v <<= shift;
			p++;
		}
	}
	*end = (char *)p;
	*out = v;
	return 0;
}

int pmon_cache_geom__parse(const char *s, struct pmon_cache_geom *g)
{
	uint64_t v[3];
	char *p = (char *)s;

	for (int i = 0; i < 3; i++) {
		if (parse_num(p, &p, i == 0, &v[i]) || (i < 2 && *p != ',') || (i == 2 && *p))
			return pmon__err(-EINVAL, "'%s' is not SIZE,ASSOC,LINE (e.g. 48K,12,64)",
					 s);
		if (i < 2)
			p++;
	}
	if (v[1] > 65536 || v[2] > 65536)
		return pmon__err(-EINVAL, "'%s': associativity or line size too large", s);
	*g = (struct pmon_cache_geom){ .size = v[0],
				       .assoc = (unsigned)v[1],
				       .line = (unsigned)v[2] };
	return pmon_cache_geom__check(g);
}

/* ---- the simulated events ------------------------------------------ */

/*
 * pmon's names follow perf's generic hardware cache events; the engine
 * names are callgrind's (Ir, Dr, Dw, I1mr, D1mr, D1mw, ILmr, DLmr, DLmw,
 * Bc, Bcm, Bi, Bim). LLC-load-misses counts instruction fetches missing
 * the LL too (ILmr), as a hardware LLC miss counter does.
 */
static const struct pmon_sim_event events[] = {
	{ "sim/instructions/", "Ir", "instructions executed", false },
	{ "sim/L1-dcache-loads/", "Dr", "data reads (loads)", false },
	{ "sim/L1-dcache-stores/", "Dw", "data writes (stores)", false },
	{ "sim/L1-icache-load-misses/", "I1mr", "L1 instruction cache read misses", false },
	{ "sim/L1-dcache-load-misses/", "D1mr", "L1 data cache read misses", false },
	{ "sim/L1-dcache-store-misses/", "D1mw", "L1 data cache write misses", false },
	{ "sim/LLC-load-misses/", "ILmr+DLmr", "last-level cache read misses (code and data)",
	  false },
	{ "sim/LLC-store-misses/", "DLmw", "last-level cache write misses", false },
	{ "sim/branches/", "Bc+Bi", "branches executed (conditional and indirect)", true },
	{ "sim/branch-misses/", "Bcm+Bim", "branches mispredicted (conditional and indirect)",
	  true },
};

size_t pmon_sim_events(const struct pmon_sim_event **out)
{
	*out = events;
	return PMON_ARRAY_SIZE(events);
}

int pmon_sim_event__find(const char *name)
{
	char want[80];
	const char *p = name;

	if (!strncmp(p, "sim/", 4))
		p += 4;
	pmon__strlcpy(want, p, sizeof(want));
	size_t n = strlen(want);
	if (n && want[n - 1] == '/')
		want[n - 1] = '\0';
	for (size_t i = 0; i < PMON_ARRAY_SIZE(events); i++) {
		const char *s = events[i].name + 4;
		size_t len = strlen(s) - 1;
		if ((strlen(want) == len && !strncmp(want, s, len)) ||
		    !strcmp(name, events[i].engine))
			return (int)i;
	}
	return pmon__err(-PMON_ERRNO__EVENT_UNKNOWN, "'%s' is not a simulated event", name);
}
