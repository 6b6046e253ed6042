// SPDX-License-Identifier: MIT
/* libFuzzer harness: MSR addresses as the user types them (names, decimal,
 * hex: pmon msr and stat --msr), and the field decoders of every known MSR
 * (and the Pentium CESR's event names) on arbitrary values, into buffers of
 * every size; plus RDT's MBM counter-wrap arithmetic on arbitrary widths. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <pmon/pmon.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char s[256], buf[1024];
	uint64_t value = 0, v2 = 0;
	uint32_t addr = 0, parsed;
	size_t n, blen;
	const struct pmon_msr_info *t = pmon_msr_table(&n);

	if (size < 20 || size - 20 >= sizeof(s))
		return 0;
	memcpy(&addr, data, 4);
	memcpy(&value, data + 4, 8);
	memcpy(&v2, data + 12, 8);
	memcpy(s, data + 20, size - 20);
	s[size - 20] = '\0';

	if (!pmon_msr_parse_addr(s, &parsed)) {
		const struct pmon_msr_info *m = pmon_msr_by_addr(parsed);
		if (m && strcasecmp(s, m->name) && pmon_msr_by_name(s) &&
		    pmon_msr_by_name(s)->addr != parsed)
			__builtin_trap(); /* a name parses to its own address */
	}
	/* A known MSR's decoder most of the time, an arbitrary address otherwise. */
	uint32_t a = addr & 1 ? t[(addr >> 1) % n].addr : addr;
	blen = value % sizeof(buf);
	int k = pmon_msr_decode(a, value, buf, blen);
	if (k < 0 || (blen && memchr(buf, '\0', blen) == NULL))
		__builtin_trap(); /* always terminated within the buffer */
	k = pmon_msr_decode(a, v2, buf, sizeof(buf));
	if (k < 0 || strlen(buf) != ((size_t)k < sizeof(buf) ? (size_t)k : sizeof(buf) - 1))
		__builtin_trap(); /* snprintf()'s contract */
	(void)pmon_rdt_mbm_delta(value, v2, addr % 70, (uint32_t)(v2 >> 32));
	return 0;
}
