// SPDX-License-Identifier: MIT
/* libFuzzer harness: the parsers of pmon simulate's engines' output on
 * arbitrary bytes: callgrind's (lib/sim/callgrind.c), then every accessor,
 * total, part, region split and hot block of a file it took (costs must
 * stay within the events it declared); objdump's and llvm-mca's
 * (lib/sim/mca.c) on the same bytes, and the bytes' first 63 as an event
 * name of a recording (pmon_sim_event_role(): annotate --mca's). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <pmon/pmon.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void other_parsers(const uint8_t *data, size_t size)
{
	char out[4096];
	size_t n;
	struct pmon_mca_summary m;

	if (!pmon_sim__objdump_asm((const char *)data, size, UINT64_MAX, out, sizeof(out), &n) &&
	    (!n || strlen(out) >= sizeof(out)))
		__builtin_trap();
	(void)pmon_sim__objdump_asm((const char *)data, size, 0x1000, out, 64, &n);
	if (!pmon_sim__mca_summary((const char *)data, size, &m) && !(m.iterations > 0))
		__builtin_trap();
	char name[64]; /* a recording's event name: struct pmon_report_event */
	size_t k = size < sizeof(name) - 1 ? size : sizeof(name) - 1;
	memcpy(name, data, k);
	name[k] = '\0';
	if ((unsigned)pmon_sim_event_role(name) > PMON_SIM_ROLE_INSTRUCTIONS)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pmon_callgrind *cg;

	other_parsers(data, size);
	const struct pmon_sim_event *tab;
	size_t ntab = pmon_sim_events(&tab);

	if (pmon_callgrind__parse((const char *)data, size, "fuzz", &cg))
		return 0;
	size_t ne = pmon_callgrind__nevents(cg);
	if (!ne || !pmon_callgrind__event(cg, ne - 1) || pmon_callgrind__event(cg, ne))
		__builtin_trap();
	(void)pmon_callgrind__pid(cg);
	if (!pmon_callgrind__cmd(cg))
		__builtin_trap();
	uint64_t sum = 0;
	for (size_t i = 0; i < pmon_callgrind__ncosts(cg); i++) {
		struct pmon_callgrind_cost c;
		pmon_callgrind__cost(cg, i, &c);
		if (!c.obj || !c.fn || !c.v)
			__builtin_trap();
		for (size_t k = 0; k < ne; k++)
			sum += c.v[k];
	}
	uint64_t t = 0;
	for (size_t e = 0; e < ntab; e++)
		(void)pmon_callgrind__total(cg, tab[e].engine, NULL, &t);
	(void)pmon_callgrind__total(cg, pmon_callgrind__event(cg, 0), "main", &t);
	for (size_t i = 0; i < pmon_callgrind__nparts(cg); i++) {
		struct pmon_callgrind_part pt;
		pmon_callgrind__part(cg, i, &pt);
		if (!pt.trigger || !pt.v)
			__builtin_trap();
		for (size_t k = 0; k < ne; k++)
			sum += pt.v[k];
	}
	unsigned ev[16];
	for (size_t e = 0; e < ntab && e < 16; e++)
		ev[e] = (unsigned)e;
	struct pmon_sim_region *r;
	size_t nr;
	if (!pmon_sim__regions(&cg, 1, ev, 1, &r, &nr))
		free(r);
	struct pmon_sim_block b;
	(void)pmon_sim__hot_block(&cg, 1, "main", &b);
	/* the call sites (simulate -g's stacks), and the hot-range rule on the
	 * costs as annotate --mca would give them (any order, any targets) */
	struct pmon_sim_insn in[64];
	size_t nin = 0;
	for (size_t i = 0; i < pmon_callgrind__ncalls(cg); i++) {
		struct pmon_callgrind_call k;
		pmon_callgrind__call(cg, i, &k);
		if (!k.obj || !k.fn || !k.callee)
			__builtin_trap();
		if (nin < 64)
			in[nin++] = (struct pmon_sim_insn){ k.addr, k.count, k.inclusive, true };
	}
	for (size_t i = 0; i < pmon_callgrind__ncosts(cg) && nin < 64; i++) {
		struct pmon_callgrind_cost c;
		pmon_callgrind__cost(cg, i, &c);
		in[nin++] = (struct pmon_sim_insn){ c.addr, c.v[0], 0, false };
	}
	size_t lo, hi, h;
	for (int exact = 0; exact < 2; exact++)
		if (!pmon_sim__hot_range(in, nin, exact, &lo, &hi, &h) &&
		    (lo > h || h > hi || hi >= nin))
			__builtin_trap();
	(void)sum;
	pmon_callgrind__free(cg);
	return 0;
}
