// SPDX-License-Identifier: MIT
/*
 * Example: which RDPMC encodings are valid on a CPU, and why the others are
 * not. Reads this CPU, or a dump file given as the argument. Build against
 * an installed libpmon:
 *     cc rdpmc-map.c $(pkg-config --cflags --libs libpmon) -o rdpmc-map
 */
#include <stdio.h>

#include <pmon/pmon.h>

int main(int argc, char **argv)
{
	struct pmon_cpuid *c = argc > 1 ? pmon_cpuid__new_file(argv[1]) : pmon_cpuid__new_live();
	struct pmon_cpu_info ci;
	struct pmon_rdpmc_sel sel;
	static const enum pmon_pmc_type types[] = { PMON_PMC_GP, PMON_PMC_FIXED };

	if (!c || pmon_cpu_decode(c, &ci)) {
		fprintf(stderr, "rdpmc-map: %s\n", pmon_errdetail());
		pmon_cpuid__free(c);
		return 2;
	}
	printf("%s: %s\n", ci.id.brand[0] ? ci.id.brand : ci.id.vendor_id,
	       pmon_perfmon_model_name(ci.pm.model));
	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
		for (unsigned i = 0; i < 12; i++) {
			int err = pmon_rdpmc_encode(&ci.pm, types[t], i, false, PMON_UNKNOWN, &sel);
			printf("  %-5s %2u  ECX=%08x  %-7s %s\n", t ? "fixed" : "gp", i, sel.ecx,
			       err ? "#GP" : "ok", sel.rule);
		}
	pmon_cpuid__free(c);
	return 0;
}
