// SPDX-License-Identifier: MIT
/* libFuzzer harness: the kallsyms reader ("ADDR TYPE NAME [module]" lines,
 * what pmon record and report read from /proc/kallsyms) on arbitrary bytes,
 * then lookups of addresses below, inside and past what it read. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>

#include "fuzz-util.h"
#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	struct pmon__ksyms k;
	int fd = fuzz_memfd(data, size, path, sizeof(path));

	if (fd < 0)
		return 0;
	if (!pmon__ksyms_load(path, &k)) {
		for (size_t i = 0; i < k.n; i++) {
			if (i && k.sym[i - 1].addr > k.sym[i].addr)
				__builtin_trap(); /* lookups need them sorted */
			if (!k.sym[i].name[0])
				__builtin_trap();
		}
		uint64_t probe[] = { 0,
				     1,
				     UINT64_MAX,
				     k.n ? k.sym[0].addr : 0,
				     k.n ? k.sym[k.n - 1].addr + 1 : 0,
				     k.n ? k.sym[k.n / 2].addr - 1 : 0 };
		for (size_t i = 0; i < sizeof(probe) / sizeof(probe[0]); i++) {
			uint64_t end = 0;
			const struct pmon__ksym *s = pmon__ksyms_find(&k, probe[i], &end);
			if (s && (s->addr > probe[i] || (end <= probe[i] && end != UINT64_MAX)))
				__builtin_trap(); /* the symbol found must hold the address */
		}
		pmon__ksyms_free(&k);
	}
	close(fd);
	return 0;
}
