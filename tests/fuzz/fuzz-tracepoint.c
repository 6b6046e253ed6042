// SPDX-License-Identifier: MIT
/* libFuzzer harness: perf.data's tracing data (the tracepoints' formats, as
 * perf's trace-event-info.c writes them; parsed by lib/report/tracepoint.c
 * and libtraceevent) on arbitrary bytes, then the input's tail decoded as a
 * tracepoint's raw record by whatever formats were parsed. The first two
 * bytes say where the tracing data ends. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "report/ctx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	size_t split = (size_t)(data[0] | data[1] << 8);
	data += 2, size -= 2;
	if (split > size)
		split = size;
	struct pmon__tp *t = pmon__tp_new_perf(data, split);
	if (!t)
		return 0;
	const char *s = pmon__tp_print(t, data + split, (uint32_t)(size - split), 0);
	if (s && strlen(s) > (1u << 20))
		__builtin_trap(); /* one record's text stays bounded */
	pmon__tp_free(t);
	return 0;
}
