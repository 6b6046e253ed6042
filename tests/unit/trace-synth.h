/* SPDX-License-Identifier: MIT */
/*
 * Trace files built by hand for the unit tests (test-trace, test-trace-clock,
 * test-plot): a buffer, CRC'd chunks as lib/trace/trace.c writes them, a
 * channel chunk and a header whose ticks are nanoseconds.
 */
#ifndef PMON_TESTS_TRACE_SYNTH_H
#define PMON_TESTS_TRACE_SYNTH_H

#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include "trace/tracefile.h"

struct fbuf {
	unsigned char b[8192];
	size_t n;
};

static inline void put(struct fbuf *f, const void *p, size_t n)
{
	assert_true(f->n + n <= sizeof(f->b));
	memcpy(f->b + f->n, p, n);
	f->n += n;
}

static inline void chunk(struct fbuf *f, const char *magic, const void *a, size_t alen,
			 const void *b, size_t blen)
{
	struct pmon_trace_chunk c = { .len = (uint32_t)(alen + blen) };
	memcpy(c.magic, magic, 4);
	c.crc = (uint32_t)crc32(0L, a, (uInt)alen);
	if (blen)
		c.crc = (uint32_t)crc32(c.crc, b, (uInt)blen);
	put(f, &c, sizeof(c));
	put(f, a, alen);
	if (blen)
		put(f, b, blen);
}

static inline void channel(struct fbuf *f, uint32_t id, const char *name)
{
	uint32_t hdr[2] = { id, (uint32_t)strlen(name) };
	chunk(f, "TCHN", hdr, sizeof(hdr), name, hdr[1]);
}

/* Ticks are ns (a given rate) and tick 1000 is CLOCK_MONOTONIC 5000 ns: the
 * trace's time 0 when no kernel event comes earlier. */
static inline void header_ns(struct fbuf *f)
{
	struct pmon_trace_disk_header h = { .version = PMON_TRACE_VERSION,
					    .header_size = sizeof(h),
					    .pid = 7,
					    .flags = PMON_TRACE_RATE_GIVEN,
					    .ticks_per_sec = 1000000000u,
					    .tick0 = 1000,
					    .mono0_ns = 5000,
					    .command = "prog" };
	memcpy(h.magic, PMON_TRACE_MAGIC, 8);
	put(f, &h, sizeof(h));
}

#endif
