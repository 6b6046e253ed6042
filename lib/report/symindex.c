// SPDX-License-Identifier: MIT
/*
 * A sorted index of a module's sized symbols, for naming sampled addresses.
 *
 * elfutils' dwfl_module_addrinfo() walks the whole symbol table on every
 * call (libdwfl/dwfl_module_addrsym.c, search_table()): ~450,000
 * instructions per address in libc, 70% of a small report's time, and the
 * part of a large one that grows with the number of distinct addresses
 * (issue #16). perf keeps its symbols in a tree for the same reason
 * (tools/perf/util/symbol.c, symbols__find()). This index is built once per
 * module in one pass over the table and answers in O(log n).
 *
 * It gives the answer dwfl_module_addrsym() gives, by its rules:
 * - candidates hold the address: value <= addr < value + size; section,
 *   file and TLS symbols, undefined ones and empty names are skipped;
 * - the global (and weak) symbols are searched first; the local ones only
 *   if no global holds the address;
 * - within a pass, in table order, a symbol replaces the one kept when the
 *   kept one starts lower or binds more weakly (local < weak < global).
 * Where no sized symbol holds the address (code outside any exported
 * symbol of a stripped library, an assembly label without a size) or a
 * sizeless global stands exactly on it (which stops libdwfl from searching
 * the locals), the index does not guess: it asks dwfl_module_addrinfo(),
 * once per gap between two edges (a symbol's start or end, a section's),
 * as nothing its search compares changes inside one.
 * tests/unit/test-symindex.c compares the two at the edges of every symbol
 * and at random addresses of real libraries.
 */
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

struct pmon__sym {
	GElf_Addr start, end;
	const char *name; /* elfutils' string table: lives as long as the module */
	uint32_t order; /* index in the table: libdwfl's search order */
	uint8_t rank; /* 3 global, 2 weak, 1 local, 0 other */
	bool local;
};

/* libdwfl's binding_value(): higher is better. */
static uint8_t rank_of(const GElf_Sym *s)
{
	switch (GELF_ST_BIND(s->st_info)) {
	case STB_GLOBAL:
		return 3;
	case STB_WEAK:
		return 2;
	case STB_LOCAL:
		return 1;
	default:
		return 0;
	}
}

/*
 * Sort @n keys (with their @val, when given) ascending, stable: LSD radix,
 * a byte a pass, the passes where all keys agree skipped. A libc qsort()
 * of libc's ~28,000 symbols and their edges cost more than the lookups it
 * saves on a small report; this is linear. Return: false without memory.
 */
static bool radix_sort(uint64_t *key, uint32_t *val, size_t n)
{
	uint64_t *k2 = malloc(n * sizeof(*k2));
	uint32_t *v2 = val ? malloc(n * sizeof(*v2)) : NULL;
	uint64_t all_or = 0, all_and = ~0ULL;
	bool ok = k2 && (!val || v2);

	for (size_t i = 0; ok && i < n; i++)
		all_or |= key[i], all_and &= key[i];
	for (unsigned shift = 0; ok && shift < 64; shift += 8) {
		size_t count[257] = { 0 };
		if (!(((all_or ^ all_and) >> shift) & 0xff))
			continue; /* every key has the same bits here */
		for (size_t i = 0; i < n; i++)
			count[((key[i] >> shift) & 0xff) + 1]++;
		for (size_t d = 1; d <= 256; d++)
			count[d] += count[d - 1];
		for (size_t i = 0; i < n; i++) {
			size_t at = count[(key[i] >> shift) & 0xff]++;
			k2[at] = key[i];
			if (val)
				v2[at] = val[i];
		}
		memcpy(key, k2, n * sizeof(*key));
		if (val)
			memcpy(val, v2, n * sizeof(*val));
	}
	free(k2);
	free(v2);
	return ok;
}

static int by_addr(const void *a, const void *b)
{
	const GElf_Addr *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/* Add @a to @ix's edges (room for it was made by build()). */
static void edge(struct pmon__symindex *ix, GElf_Addr a)
{
	ix->edge[ix->nedge++] = a;
}

/* Fill @ix from @mod's symbol table; false when memory ran out. */
static bool build(struct pmon__symindex *ix, Dwfl_Module *mod)
{
	int n = dwfl_module_getsymtab(mod);
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	size_t nsec = 0;

	ix->built = true;
	if (n <= 1)
		return true;
	if (elf && elf_getshdrnum(elf, &nsec))
		nsec = 0;
	ix->sym = malloc((size_t)n * sizeof(*ix->sym));
	ix->maxend = malloc((size_t)n * sizeof(*ix->maxend));
	ix->labels = malloc((size_t)n * sizeof(*ix->labels));
	ix->edge = malloc(((size_t)n * 2 + nsec * 3) * sizeof(*ix->edge));
	if (!ix->sym || !ix->maxend || !ix->labels || !ix->edge)
		return false;
	for (int i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, i, &s, &addr, &shndx, NULL, NULL);
		int type = GELF_ST_TYPE(s.st_info);
		if (!name || !*name || shndx == SHN_UNDEF || type == STT_SECTION ||
		    type == STT_FILE || type == STT_TLS)
			continue;
		bool local = GELF_ST_BIND(s.st_info) == STB_LOCAL;
		edge(ix, addr);
		edge(ix, addr + (s.st_size ? s.st_size : 1));
		if (!s.st_size) {
			if (!local)
				ix->labels[ix->nlabels++] = addr;
			continue;
		}
		ix->sym[ix->n++] = (struct pmon__sym){ .start = addr,
						       .end = addr + s.st_size,
						       .name = name,
						       .order = (uint32_t)i,
						       .rank = rank_of(&s),
						       .local = local };
	}
	/* libdwfl also asks which section holds an address. */
	for (Elf_Scn *scn = NULL; elf && (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_flags & SHF_ALLOC) {
			/* Its end, and its end rounded up to its alignment,
			 * where elfutils was seen to stop naming a label. */
			GElf_Addr end = sh.sh_addr + sh.sh_size + bias;
			GElf_Xword align = sh.sh_addralign > 1 ? sh.sh_addralign : 1;
			edge(ix, sh.sh_addr + bias);
			edge(ix, end);
			edge(ix, (end + align - 1) / align * align);
		}
	}
	/* By start, ties in table order (the stable sort keeps the order
	 * they were read in). */
	uint64_t *start = malloc(ix->n * sizeof(*start) + 1);
	uint32_t *at = malloc(ix->n * sizeof(*at) + 1);
	struct pmon__sym *sorted = malloc(ix->n * sizeof(*sorted) + 1);
	bool ok = start && at && sorted;
	for (size_t i = 0; ok && i < ix->n; i++)
		start[i] = ix->sym[i].start, at[i] = (uint32_t)i;
	ok = ok && radix_sort(start, at, ix->n);
	for (size_t i = 0; ok && i < ix->n; i++)
		sorted[i] = ix->sym[at[i]];
	free(start);
	free(at);
	if (!ok) {
		free(sorted);
		return false;
	}
	free(ix->sym);
	ix->sym = sorted;
	if (!radix_sort(ix->labels, NULL, ix->nlabels) || !radix_sort(ix->edge, NULL, ix->nedge))
		return false;
	size_t u = 0;
	for (size_t i = 0; i < ix->nedge; i++)
		if (!u || ix->edge[u - 1] != ix->edge[i])
			ix->edge[u++] = ix->edge[i];
	ix->nedge = u;
	ix->gap = calloc(u + 1, sizeof(*ix->gap));
	if (!ix->gap)
		return false;
	for (size_t i = 0; i < ix->n; i++)
		ix->maxend[i] = i && ix->maxend[i - 1] > ix->sym[i].end ? ix->maxend[i - 1]
									: ix->sym[i].end;
	return true;
}

static int by_order(const void *a, const void *b)
{
	const struct pmon__sym *const *x = a, *const *y = b;

	return (*x)->order < (*y)->order ? -1 : (*x)->order > (*y)->order;
}

/*
 * One pass of libdwfl's search (@local: the locals' pass) over the symbols
 * holding @a, of those starting below index @hi. Return: the pass's
 * choice, NULL if none holds @a; *@many when the holders are too many to
 * replay (the caller then asks elfutils).
 */
static const struct pmon__sym *pass(const struct pmon__symindex *ix, size_t hi, GElf_Addr a,
				    bool local, bool *many)
{
	const struct pmon__sym *c[32], *best = NULL;
	size_t n = 0;

	/* Every holder starts at or below @a: walk down from the last such
	 * start while some symbol below may still reach @a. */
	for (size_t i = hi; i-- > 0 && ix->maxend[i] > a;) {
		const struct pmon__sym *s = &ix->sym[i];
		if (s->local != local || a >= s->end)
			continue;
		if (n == sizeof(c) / sizeof(c[0])) {
			*many = true;
			return NULL;
		}
		c[n++] = s;
	}
	/* In table order, as libdwfl reads them: a holder replaces the one
	 * kept when the kept one starts lower or binds more weakly. */
	// cppcheck-suppress uninitvar ; c[0..n) are set above
	qsort(c, n, sizeof(c[0]), by_order);
	for (size_t i = 0; i < n; i++)
		if (!best || best->start < c[i]->start || best->rank < c[i]->rank)
			best = c[i];
	return best;
}

const char *pmon__symindex_find(struct pmon__symindex *ix, Dwfl_Module *mod, GElf_Addr a)
{
	GElf_Off off;
	GElf_Sym sym;

	/* A module named once or twice is cheaper to ask directly: building
	 * libc's index costs about eight of elfutils' answers there. */
	if (!ix->built && ix->asked < 2) {
		ix->asked++;
		ix->fallbacks++;
		return dwfl_module_addrinfo(mod, a, &off, &sym, NULL, NULL, NULL);
	}
	if (!ix->built && !build(ix, mod))
		pmon__symindex_free(ix); /* out of memory: ask elfutils each time */
	if (ix->sym) {
		size_t lo = 0, hi = ix->n;
		while (lo < hi) { /* hi: the first symbol starting above @a */
			size_t mid = lo + (hi - lo) / 2;
			if (ix->sym[mid].start <= a)
				lo = mid + 1;
			else
				hi = mid;
		}
		bool many = false;
		const struct pmon__sym *s = pass(ix, lo, a, false, &many);
		if (s)
			return s->name;
		if (!many && !bsearch(&a, ix->labels, ix->nlabels, sizeof(a), by_addr) &&
		    (s = pass(ix, lo, a, true, &many)))
			return s->name;
		if (!many) {
			/* Between two edges elfutils' answer cannot change: ask once. */
			size_t k = 0, hi2 = ix->nedge;
			while (k < hi2) {
				size_t mid = k + (hi2 - k) / 2;
				if (ix->edge[mid] <= a)
					k = mid + 1;
				else
					hi2 = mid;
			}
			if (!ix->gap[k].asked) {
				ix->fallbacks++;
				ix->gap[k].name =
					dwfl_module_addrinfo(mod, a, &off, &sym, NULL, NULL, NULL);
				ix->gap[k].asked = true;
			}
			return ix->gap[k].name;
		}
	}
	ix->fallbacks++;
	return dwfl_module_addrinfo(mod, a, &off, &sym, NULL, NULL, NULL);
}

void pmon__symindex_free(struct pmon__symindex *ix)
{
	free(ix->sym);
	free(ix->maxend);
	free(ix->labels);
	free(ix->edge);
	free(ix->gap);
	*ix = (struct pmon__symindex){ .built = true };
}
