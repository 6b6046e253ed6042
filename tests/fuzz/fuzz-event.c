// SPDX-License-Identifier: MIT
/* libFuzzer harness: the event-list parser (perf syntax, PMU terms, groups,
 * modifiers) on this machine's sysfs. Tracepoints are pointed at an empty
 * folder so that the harness never mounts anything. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <pmon/pmon.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pmon_event_opts o = { .sz = sizeof(o), .tracefs_root = "/nonexistent-tracefs" };
	char spec[1024];
	struct pmon_evlist *l;

	if (size >= sizeof(spec))
		return 0;
	memcpy(spec, data, size);
	spec[size] = '\0';
	l = pmon_evlist__new(&o);
	if (!l)
		return 0;
	if (pmon_evlist__add(l, spec) == 0) {
		for (size_t i = 0; i < pmon_evlist__count(l); i++) {
			const struct pmon_event_desc *d = pmon_evlist__event(l, i);
			if (d->group < 0 || (size_t)d->group > i)
				__builtin_trap(); /* a leader always comes first */
		}
	}
	pmon_evlist__free(l);
	return 0;
}
