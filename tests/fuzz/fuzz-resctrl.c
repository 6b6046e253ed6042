// SPDX-License-Identifier: MIT
/* libFuzzer harness: the resctrl files pmon rdt reads (info/L3_MON's
 * num_rmids, mon_features and max_threshold_occupancy; each domain's
 * llc_occupancy, mbm_total_bytes and mbm_local_bytes: a number, Error,
 * Unavailable or Unassigned) in an emulated tree whose file contents are the
 * input, split at 0xff bytes; then a group is made, read and cleaned up. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>

#include <pmon/pmon.h>

#include "fuzz-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const files[] = {
	"info/L3_MON/num_rmids",
	"info/L3_MON/mon_features",
	"info/L3_MON/max_threshold_occupancy",
	"mon_data/mon_L3_00/llc_occupancy",
	"mon_data/mon_L3_00/mbm_total_bytes",
	"mon_data/mon_L3_00/mbm_local_bytes",
	"mon_data/mon_L3_01/llc_occupancy",
	"mon_data/mon_L3_01/mbm_total_bytes",
	"mon_data/mon_L3_01/mbm_local_bytes",
};
#define NFILES (sizeof(files) / sizeof(files[0]))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *part[NFILES];
	size_t plen[NFILES], n;
	char root[600];
	struct pmon_rdt_caps caps;
	struct pmon_rdt_group *g = NULL;
	struct pmon_rdt_reading r;
	unsigned removed;

	snprintf(root, sizeof(root), "%s/resctrl", fuzz_tmpdir());
	fuzz_puts(root, "tasks", "");
	fuzz_puts(root, "mon_groups/.keep", "");
	n = fuzz_split(data, size, part, plen, NFILES);
	for (size_t i = 0; i < NFILES; i++)
		fuzz_put(root, files[i], i < n ? part[i] : (const uint8_t *)"",
			 i < n ? plen[i] : 0);

	if (pmon_rdt_caps(root, &caps))
		return 0;
	if ((g = pmon_rdt_group__root(root))) {
		if (!pmon_rdt_group__read(g, &r) && r.n > PMON_RDT_MAX_DOMAINS)
			__builtin_trap();
		pmon_rdt_group__remove(g); /* the root group: not removed, only freed */
	}
	if ((g = pmon_rdt_group__new(root))) {
		if (!pmon_rdt_group__read(g, &r))
			for (size_t i = 0; i < r.n; i++)
				(void)pmon_rdt_state_name(r.d[i].occupancy.state);
		pmon_rdt_group__remove(g);
	}
	pmon_rdt_cleanup(root, &removed);
	return 0;
}
