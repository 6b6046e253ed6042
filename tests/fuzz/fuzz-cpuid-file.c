// SPDX-License-Identifier: MIT
/* libFuzzer harness: the CPUID dump parser and everything that decodes its
 * result, including RDPMC validation of every ECX type on the decoded CPU. */
#include <stddef.h>
#include <stdint.h>

#include <pmon/pmon.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pmon_cpuid *c = pmon_cpuid__new_buf((const char *)data, size, "fuzz");
	struct pmon_cpu_info ci;
	struct pmon_rdpmc_sel sel;

	if (!c)
		return 0;
	if (!pmon_cpu_decode(c, &ci)) {
		static const uint32_t ecx[] = { 0,	    3,		0x40000001,
						0x40000007, 0x20000000, 0x80000000,
						0x80000012, 0x12,	0xffffffff };
		for (size_t i = 0; i < sizeof(ecx) / sizeof(ecx[0]); i++)
			pmon_rdpmc_validate(&ci.pm, ecx[i], PMON_UNKNOWN, &sel);
	}
	pmon_cpuid__free(c);
	return 0;
}
