// SPDX-License-Identifier: MIT
/* libFuzzer harness: pmon plot's interval-log reader (pmon stat -I CSV and
 * JSON lines, pmon rdt CSV and JSON lines) on arbitrary bytes, and the
 * drawing of what it accepted (ticks, grid, gaps) as a small SVG. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>

#include <pmon/pmon.h>

#include "fuzz-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], svg[600];
	struct pmon_plot_data d;
	int fd = fuzz_memfd(data, size, path, sizeof(path));

	if (fd < 0)
		return 0;
	if (!pmon_plot_read_log(path, &d)) {
		size_t points = 0;
		for (size_t i = 0; i < d.n; i++) {
			const struct pmon_series *s = &d.s[i];
			if (!s->name[0] || s->n > s->cap)
				__builtin_trap(); /* the reader promises named series */
			points += s->n;
		}
		/* Drawing goes through cairo (not instrumented): only small logs. */
		if (d.n <= 8 && points <= 256) {
			snprintf(svg, sizeof(svg), "%s/plot.svg", fuzz_tmpdir());
			pmon_plot_render(&d, svg, 400, (unsigned)(100 + 60 * d.n));
		}
		pmon_plot_data_release(&d);
	}
	close(fd);
	return 0;
}
