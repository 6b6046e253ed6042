// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: the trace reader (lib/trace/reader.c) and every view of
 * what it read (table, ticks, Chrome JSON, Perfetto, and the timeline that
 * libpmon-plot draws with cairo as SVG or PNG), kernel events (TKEV
 * chunks) and their time base (TCLK: a perf-clock conversion from any
 * bytes) included. Structure-aware: the
 * first byte chooses between the input as a whole file and the input as
 * chunk payloads behind a valid header, each chunk given its right length
 * and CRC, so the fuzzer reaches the record decoder and the views instead
 * of stopping at the CRC check. Every input is also read as an ftrace
 * ring-buffer page (pmon__ftrace_page(): the kernel's wake-ups). The
 * Chrome JSON must parse as UTF-8 JSON and the SVG timeline be well-formed
 * XML whatever the channel and thread names hold (fuzz-valid.h).
 */
#define _GNU_SOURCE
#include "fuzz-valid.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "trace/tracefile.h"
#include <pmon/plot.h>
#include <pmon/trace.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void views(const struct pmon_trace_reader *r, bool png)
{
	size_t nch = pmon_trace_reader__nchannels(r);
	struct pmon_trace_chan_stats *st = calloc(nch + 1, sizeof(*st));
	if (st)
		(void)pmon_trace_summarize(r, 0, UINT64_MAX, st);
	free(st);
	char row[33];
	for (uint32_t ch = 0; ch <= nch && ch < 8; ch++)
		pmon_trace_ticks_row(r, ch, 0, 1000000, row, 32);
	FILE *f = fopen("/dev/null", "w");
	if (f) {
		(void)pmon_trace_write_perfetto(r, f);
		fclose(f);
	}
	char *buf = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&buf, &n);
	if (m && !pmon_trace_write_chrome(r, m) && !fflush(m))
		fuzz_check_json("Chrome trace JSON", buf, n);
	if (m)
		fclose(m);
	free(buf);
	/* the smallest picture: drawing, not compressing, is under test */
	struct pmon_plot_trace_opts o = { .sz = sizeof(o),
					  .format = png ? PMON_PLOT_PNG : PMON_PLOT_SVG,
					  .to_ns = 1000000000,
					  .width = 380 };
	buf = NULL, n = 0;
	m = open_memstream(&buf, &n);
	if (m && !pmon_plot_trace(r, m, &o) && !fflush(m) && !png)
		fuzz_check_xml("trace timeline SVG", buf, n);
	if (m)
		fclose(m);
	free(buf);
}

static void ftrace_event(void *ctx, uint64_t ts, const uint8_t *data, size_t n)
{
	uint64_t *sum = ctx;
	*sum += ts;
	for (size_t i = 0; i < n; i++)
		*sum += data[i];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pmon_trace_reader *r;
	uint64_t sum = 0;

	(void)pmon__ftrace_page(data, size, ftrace_event, &sum);
	if (!size)
		return 0;
	if (data[0] & 1) {
		r = pmon_trace_reader__open_mem(data + 1, size - 1, "fuzz");
	} else {
		/* A valid header, then chunks: each takes a magic (from a byte), a
		 * length (from a byte, bounded by what is left) and its CRC. */
		static const char *magic[] = { "TCHN", "TEVT", "TEND", "TXXX",
					       "TKEV", "TEVT", "TKEV", "TCLK" };
		size_t cap = sizeof(struct pmon_trace_disk_header) + size * 9 +
			64; /* 16 bytes of chunk header per 2 input bytes at most */
		uint8_t *buf = calloc(1, cap);
		if (!buf)
			return 0;
		struct pmon_trace_disk_header h = { .version = PMON_TRACE_VERSION,
						    .header_size = sizeof(h),
						    .ticks_per_sec = 1000000000u,
						    .flags = data[0] & 2 ? PMON_TRACE_RATE_GIVEN
									 : 0 };
		memcpy(h.magic, PMON_TRACE_MAGIC, 8);
		memcpy(buf, &h, sizeof(h));
		size_t n = sizeof(h), i = 1;
		while (i + 2 <= size) {
			struct pmon_trace_chunk c = { .len = data[i + 1] };
			memcpy(c.magic, magic[data[i] & 7], 4);
			i += 2;
			if (c.len > size - i)
				c.len = (uint32_t)(size - i);
			c.crc = (uint32_t)crc32(0L, data + i, c.len);
			memcpy(buf + n, &c, sizeof(c));
			memcpy(buf + n + sizeof(c), data + i, c.len);
			n += sizeof(c) + c.len;
			i += c.len;
		}
		r = pmon_trace_reader__open_mem(buf, n, "fuzz");
		free(buf);
	}
	if (r)
		views(r, data[0] & 4);
	pmon_trace_reader__free(r);
	return 0;
}
