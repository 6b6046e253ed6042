// SPDX-License-Identifier: MIT
/* libFuzzer harness: the recording reader (header, chunks, CRCs, perf
 * records of every kind) on arbitrary bytes written to a file, and every
 * export of what it read (folded, flame graph, speedscope, pprof). */
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
			pmon_report_write_flamegraph(&r, null, 800);
			pmon_report_write_speedscope(&r, null);
			pmon_report_write_pprof(&r, null);
			fclose(null);
		}
		pmon_report_release(&r);
	}
	close(fd);
	unlink(path);
	return 0;
}
