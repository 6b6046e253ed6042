// SPDX-License-Identifier: MIT
/* libFuzzer harness: the recording reader (header, chunks, CRCs, perf
 * records of every kind) on arbitrary bytes written to a file, and every
 * export of what it read (folded, flame graph, speedscope, pprof); the flame
 * graph must be well-formed XML and speedscope's file valid UTF-8 JSON
 * whatever names the recording holds (fuzz-valid.h). */
#define _GNU_SOURCE
#include "fuzz-valid.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <pmon/pmon.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/pmon-fuzz-report-XXXXXX";
	int fd = mkstemp(path);
	struct pmon_report r;

	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size &&
	    !pmon_report_read(path,
			      &(struct pmon_report_opts){ .sz = sizeof(struct pmon_report_opts),
							  .sort = PMON_SORT_LINE },
			      &r)) {
		FILE *null = fopen("/dev/null", "we");
		if (null) {
			pmon_report_write_folded(&r, null);
			pmon_report_write_pprof(&r, null);
			fclose(null);
		}
		char *buf = NULL;
		size_t n = 0;
		FILE *m = open_memstream(&buf, &n);
		if (m && !pmon_report_write_flamegraph(&r, m, 800) && !fflush(m))
			fuzz_check_xml("flame graph SVG", buf, n);
		if (m)
			fclose(m);
		free(buf);
		buf = NULL, n = 0;
		m = open_memstream(&buf, &n);
		if (m && !pmon_report_write_speedscope(&r, m) && !fflush(m))
			fuzz_check_json("speedscope JSON", buf, n);
		if (m)
			fclose(m);
		free(buf);
		pmon_report_release(&r);
	}
	close(fd);
	unlink(path);
	return 0;
}
