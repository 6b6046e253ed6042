// SPDX-License-Identifier: MIT
/* libFuzzer harness: the perf.data reader (lib/sample/perfdata.c) on
 * arbitrary bytes, through the recording reader's open (file mode and pipe
 * mode, told by the magic) and the whole report of what it read, with the
 * folded export; seeded with small recordings of perf record (file, pipe,
 * DWARF). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <pmon/pmon.h>

#include "fuzz-util.h"
#include "sample/reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int on_record(void *arg, unsigned thread, const struct pmon__record *r, uint32_t epoch)
{
	(void)thread, (void)epoch;
	*(uint64_t *)arg += r->type;
	return 0;
}

static int on_ordered(void *arg, const struct pmon__record *r)
{
	*(uint64_t *)arg += r->type;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct pmon__rec_ops ops = { .record = on_record, .ordered = on_ordered };
	char path[64];
	int fd = fuzz_memfd(data, size, path, sizeof(path));
	struct pmon__rec_header h;
	struct pmon_report r;
	uint64_t sum = 0;

	if (fd < 0)
		return 0;
	struct pmon__rec_reader *rd = pmon__rec_reader_open(path, &h);
	if (rd) {
		pmon__rec_reader_run(rd, 1, &ops, &sum);
		pmon__rec_reader_free(rd);
	}
	if (!pmon_report_read(path,
			      &(struct pmon_report_opts){ .sz = sizeof(struct pmon_report_opts),
							  .sort = PMON_SORT_SYMBOL },
			      &r)) {
		FILE *null = fopen("/dev/null", "we");
		if (null) {
			pmon_report_write_folded(&r, null);
			fclose(null);
		}
		pmon_report_release(&r);
	}
	close(fd);
	return 0;
}
