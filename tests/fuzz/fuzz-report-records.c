// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness, structure-aware: the fuzzed bytes are perf records
 * (and a few choices), and the harness wraps them in a valid recording
 * (docs/pmon-data-format.md): the header with the fuzzed sample_type and
 * sample_regs_user, then chunks with correct CRCs, raw or deflated, so
 * that every input reaches the record parsers, the sample decoder, the
 * DWARF unwinder and the exports, which fuzz-report (arbitrary file
 * bytes) rarely passes the CRC to. On request one chunk is damaged, which
 * drives the reader's resynchronisation.
 *
 * Input: struct prefix, then records back to back (each begins with a
 * perf_event_header; bytes after the last whole record end the last chunk).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <pmon/pmon.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct prefix {
	uint8_t flags;
	uint8_t per_chunk; /* records per chunk: 1 + per_chunk % 16 */
	uint8_t pad[6];
	uint64_t sample_type;
	uint64_t regs_user;
} __attribute__((packed));

enum {
	F_V2 = 1, /* version 2 header (with regs_user) */
	F_DEFLATE = 2, /* CHNZ chunks (version 2) */
	F_FLIP = 4, /* chunk 1's payload damaged: its CRC fails */
	F_TEAR = 8, /* chunk 1's header damaged: the reader scans for the next */
	F_LINES = 16, /* sort by source line */
	F_THREADS = 32, /* read with two threads */
};

static void put_chunk(FILE *f, const struct prefix *p, const uint8_t *rec, size_t len,
		      unsigned index)
{
	static uint8_t z[1 << 20];
	uLongf zlen = sizeof(z);
	const uint8_t *stored = rec;
	char magic[5] = "CHNK";

	if (p->flags & F_V2 && p->flags & F_DEFLATE && compress2(z, &zlen, rec, len, 1) == Z_OK) {
		stored = z;
		len = zlen;
		memcpy(magic, "CHNZ", 4);
	}
	uint32_t hdr[4] = { 0, (uint32_t)len, (uint32_t)crc32(0L, stored, (uInt)len), 1 };
	memcpy(hdr, magic, 4);
	if (index == 1 && p->flags & F_TEAR)
		memcpy(hdr, "CHXK", 4);
	fwrite(hdr, 1, sizeof(hdr), f);
	if (index == 1 && p->flags & F_FLIP && len) {
		fwrite(stored, 1, len / 2, f);
		fputc(stored[len / 2] ^ 0x40, f);
		fwrite(stored + len / 2 + 1, 1, len - len / 2 - 1, f);
	} else {
		fwrite(stored, 1, len, f);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/pmon-fuzz-records-XXXXXX";
	struct prefix p;
	struct pmon_report r;

	if (size < sizeof(p) || size > (256u << 10))
		return 0;
	memcpy(&p, data, sizeof(p));
	data += sizeof(p), size -= sizeof(p);
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd), unlink(path);
		return 0;
	}
	/* The header (lib/sample/datafile.h, struct pmon_data_disk_header). */
	uint8_t h[416] = "PMONDATA";
	uint32_t version = p.flags & F_V2 ? 2 : 1, hsize = p.flags & F_V2 ? 416 : 408;
	memcpy(h + 8, &version, 4);
	memcpy(h + 12, &hsize, 4);
	memcpy(h + 16, &p.sample_type, 8);
	memcpy(h + 56, "cpu-clock", 9);
	memcpy(h + 408, &p.regs_user, 8);
	fwrite(h, 1, hsize, f);
	/* The records, so many per chunk. */
	size_t start = 0, off = 0;
	unsigned n = 0, per = 1 + p.per_chunk % 16, index = 0;
	while (size - off >= 8) {
		uint16_t rs;
		memcpy(&rs, data + off + 6, 2);
		if (rs < 8 || rs > size - off)
			break;
		off += rs;
		if (++n == per) {
			put_chunk(f, &p, data + start, off - start, index++);
			start = off, n = 0;
		}
	}
	if (size > start)
		put_chunk(f, &p, data + start, size - start, index++);
	fclose(f);
	setenv("PMON_REPORT_THREADS", p.flags & F_THREADS ? "2" : "1", 1);
	struct pmon_report_opts o = { .sz = sizeof(o),
				      .sort = p.flags & F_LINES ? PMON_SORT_LINE : PMON_SORT_SYMBOL,
				      .inlines = true };
	if (!pmon_report_read(path, &o, &r)) {
		FILE *null = fopen("/dev/null", "we");
		if (null) {
			pmon_report_write_folded(&r, null);
			pmon_report_write_flamegraph(&r, null, 800);
			pmon_report_write_callgraph(&r, null, true, 0.0, true);
			pmon_report_write_speedscope(&r, null);
			pmon_report_write_pprof(&r, null);
			fclose(null);
		}
		pmon_report_release(&r);
	}
	unlink(path);
	return 0;
}
