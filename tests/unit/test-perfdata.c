// SPDX-License-Identifier: MIT
/* The perf.data reader (lib/sample/perfdata.c), through the recording
 * reader's open (lib/sample/reader.h): small files built here from the
 * documented layout (tools/perf/Documentation/perf.data-file-format.txt,
 * include/uapi/linux/perf_event.h), not from perf's output: several events
 * and their ids, sample_id_all trailers, an attr larger than this build's
 * headers know, each record type, pipe mode, a file cut at every byte, the
 * other byte order; and the sample parser's attr-dependent fields. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <pmon/pmon.h>
#include <pmon/sample.h>

#include "sample/datafile.h"
#include "sample/reader.h"

/* ---- building files ------------------------------------------------------ */

struct buf {
	uint8_t *b;
	size_t n, cap;
};

static void bytes(struct buf *o, const void *p, size_t n)
{
	if (o->n + n > o->cap) {
		o->cap = (o->n + n) * 2 + 256;
		o->b = realloc(o->b, o->cap);
		assert_non_null(o->b);
	}
	memcpy(o->b + o->n, p, n);
	o->n += n;
}

static void u64(struct buf *o, uint64_t v)
{
	bytes(o, &v, 8);
}

static void u32(struct buf *o, uint32_t v)
{
	bytes(o, &v, 4);
}

static void zeros(struct buf *o, size_t n)
{
	static const uint8_t z[256];

	while (n) {
		size_t k = n < sizeof(z) ? n : sizeof(z);
		bytes(o, z, k);
		n -= k;
	}
}

static void at64(struct buf *o, size_t at, uint64_t v)
{
	memcpy(o->b + at, &v, 8);
}

/* A record header; returns where it starts, for end_rec(). */
static size_t rec(struct buf *o, uint32_t type, uint16_t misc)
{
	size_t at = o->n;

	u32(o, type);
	u32(o, misc); /* size filled by end_rec() */
	return at;
}

static void end_rec(struct buf *o, size_t at)
{
	while ((o->n - at) % 8)
		zeros(o, 1);
	uint16_t size = (uint16_t)(o->n - at);
	memcpy(o->b + at + 6, &size, 2);
}

#define ST                                                                                         \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |            \
	 PERF_SAMPLE_PERIOD)
/* An attr of @size bytes (larger than struct perf_event_attr: as perf
 * 6.3+ writes, with fields this build does not know, left nonzero). */
static void attr(struct buf *o, uint32_t size, uint32_t type, uint64_t config, uint64_t st)
{
	struct perf_event_attr a = { .type = type, .size = size, .config = config };
	size_t n = size < sizeof(a) ? size : sizeof(a);

	a.sample_period = 1000;
	a.sample_type = st;
	a.sample_id_all = 1;
	bytes(o, &a, n);
	for (size_t i = n; i < size; i++)
		bytes(o, "\xa5", 1);
}

/* The id trailer of a non-sample record (sample_id_all, ST): tid, time, identifier. */
static void trailer(struct buf *o, uint64_t id)
{
	u64(o, 7 | 7ULL << 32);
	u64(o, 50); /* before the samples' 99 */
	u64(o, id);
}

static void sample_at(struct buf *o, uint64_t id, uint64_t ip, uint64_t period, uint64_t time)
{
	size_t r = rec(o, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);

	u64(o, id);
	u64(o, ip);
	u64(o, 7 | 7ULL << 32);
	u64(o, time);
	u64(o, period);
	end_rec(o, r);
}

static void sample(struct buf *o, uint64_t id, uint64_t ip, uint64_t period)
{
	sample_at(o, id, ip, period, 99);
}

/* The data section: one of each record perf writes. */
static void data_records(struct buf *o)
{
	size_t r = rec(o, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	u32(o, 7), u32(o, 7);
	bytes(o, "work\0\0\0\0", 8);
	trailer(o, 11);
	end_rec(o, r);
	r = rec(o, PERF_RECORD_MMAP2, 0);
	u32(o, 7), u32(o, 7);
	u64(o, 0x400000), u64(o, 0x1000), u64(o, 0);
	zeros(o, 32); /* maj, min, ino, ino_generation, prot, flags */
	bytes(o, "/bin/work\0\0\0\0\0\0\0", 16);
	trailer(o, 11);
	end_rec(o, r);
	r = rec(o, PERF_RECORD_FORK, 0);
	u32(o, 8), u32(o, 7), u32(o, 8), u32(o, 7);
	u64(o, 5);
	trailer(o, 11);
	end_rec(o, r);
	sample(o, 11, 0x400010, 100);
	sample(o, 22, 0x400020, 7);
	sample(o, 12, 0x400030, 100);
	static const uint32_t plain[] = { PERF_RECORD_THROTTLE,	    PERF_RECORD_UNTHROTTLE,
					  68 /* FINISHED_ROUND */,  PERF_RECORD_KSYMBOL,
					  PERF_RECORD_BPF_EVENT,    PERF_RECORD_CGROUP,
					  79 /* TIME_CONV */,	    69 /* ID_INDEX */,
					  PERF_RECORD_LOST_SAMPLES, 250 /* unknown */,
					  PERF_RECORD_AUX };
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		r = rec(o, plain[i], 0);
		u64(o, 3);
		trailer(o, 11);
		end_rec(o, r);
	}
	r = rec(o, 71 /* AUXTRACE */, 0); /* 40 bytes then its 16-byte payload */
	u64(o, 16), u64(o, 0), u64(o, 0), u32(o, 0), u32(o, 0), u32(o, 0), u32(o, 0);
	end_rec(o, r);
	zeros(o, 16);
	r = rec(o, PERF_RECORD_LOST, 0);
	u64(o, 11), u64(o, 4);
	trailer(o, 11);
	end_rec(o, r);
	r = rec(o, PERF_RECORD_EXIT, 0);
	u32(o, 8), u32(o, 7), u32(o, 8), u32(o, 7);
	u64(o, 6);
	trailer(o, 11);
	end_rec(o, r);
}

static void string(struct buf *o, const char *s)
{
	uint32_t len = (uint32_t)((strlen(s) + 1 + 7) / 8 * 8);

	u32(o, len);
	bytes(o, s, strlen(s));
	zeros(o, len - strlen(s));
}

/*
 * A file mode perf.data: two events (cycles with ids 11 and 12, a raw
 * event with 22) whose attrs are @asz bytes, the data records, and the
 * HOSTNAME, NRCPUS, CMDLINE and EVENT_DESC features.
 */
static void file_data_with(struct buf *o, uint32_t asz, void (*records)(struct buf *))
{
	size_t ids, data;

	bytes(o, "PERFILE2", 8);
	u64(o, 104);
	u64(o, asz + 16);
	zeros(o, 104 - 24);
	/* the ids, then the attrs section */
	ids = o->n;
	u64(o, 11), u64(o, 12), u64(o, 22);
	at64(o, 24, o->n), at64(o, 32, 2 * (asz + 16));
	attr(o, asz, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, ST);
	u64(o, ids), u64(o, 16);
	attr(o, asz, PERF_TYPE_RAW, 0x1c4, ST);
	u64(o, ids + 16), u64(o, 8);
	data = o->n;
	records(o);
	at64(o, 40, data), at64(o, 48, o->n - data);
	uint64_t feats = 1ULL << 3 | 1ULL << 7 | 1ULL << 11 | 1ULL << 12;
	at64(o, 72, feats);
	size_t secs = o->n;
	zeros(o, 4 * 16);
	size_t s0 = o->n;
	string(o, "box");
	at64(o, secs, s0), at64(o, secs + 8, o->n - s0);
	s0 = o->n;
	u32(o, 4), u32(o, 2);
	at64(o, secs + 16, s0), at64(o, secs + 24, o->n - s0);
	s0 = o->n;
	u32(o, 2);
	string(o, "perf");
	string(o, "record");
	at64(o, secs + 32, s0), at64(o, secs + 40, o->n - s0);
	s0 = o->n;
	u32(o, 1), u32(o, asz);
	attr(o, asz, PERF_TYPE_RAW, 0x1c4, ST);
	u32(o, 1);
	string(o, "cpu/event=0xc4,umask=0x1/u");
	u64(o, 22);
	at64(o, secs + 48, s0), at64(o, secs + 56, o->n - s0);
}

static void file_data(struct buf *o, uint32_t asz)
{
	file_data_with(o, asz, data_records);
}

/* A sample written before the MMAP2 it follows in time (perf dumps each
 * CPU's ring in turn), a round end between them. */
static void late_mmap(struct buf *o)
{
	sample(o, 11, 0x400010, 100);
	size_t r = rec(o, 68, 0); /* FINISHED_ROUND */
	end_rec(o, r);
	r = rec(o, PERF_RECORD_MMAP2, 0);
	u32(o, 7), u32(o, 7);
	u64(o, 0x400000), u64(o, 0x1000), u64(o, 0);
	zeros(o, 32);
	bytes(o, "/bin/work\0\0\0\0\0\0\0", 16);
	trailer(o, 11);
	end_rec(o, r);
	r = rec(o, 68, 0);
	end_rec(o, r);
}

static char *write_tmp(const struct buf *o, size_t n)
{
	char *path = strdup("/tmp/pmon-test-perfdata-XXXXXX");
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, o->b, n), (ssize_t)n);
	close(fd);
	return path;
}

/* ---- reading ------------------------------------------------------------- */

struct seen {
	uint64_t samples, period[2], lost, ordered, mmaps, comms, forks, exits, other;
	uint32_t epoch_last;
	uint64_t last_time;
	bool out_of_order;
	char names[2][65];
	size_t nevents, ids[2];
	uint64_t evid[2][4];
	char mmap_name[64], comm[16];
	uint64_t nr, chain[8]; /* the last sample's call chain */
};

/* The event a sample's id names. */
static int ev_of(const struct seen *s, uint64_t id)
{
	for (int e = 0; e < 2; e++)
		for (size_t i = 0; i < s->ids[e]; i++)
			if (s->evid[e][i] == id)
				return e;
	return -1;
}

static int on_record(void *arg, unsigned thread, const struct pmon__record *r, uint32_t epoch)
{
	struct seen *s = arg;

	assert_int_equal(thread, 0);
	if (r->type == PERF_RECORD_SAMPLE) {
		int e = ev_of(s, r->sample.id);
		assert_true(e >= 0);
		s->samples++;
		s->period[e] += r->sample.period;
		s->epoch_last = epoch;
		s->out_of_order |= r->sample.time < s->last_time;
		s->last_time = r->sample.time;
		s->nr = r->sample.nr;
		for (uint64_t k = 0; k < r->sample.nr && k < 8; k++)
			s->chain[k] = pmon_sample__chain(&r->sample, k);
	} else if (r->type == PERF_RECORD_LOST) {
		s->lost += r->lost.lost;
	} else {
		s->other++;
	}
	return 0;
}

static int on_ordered(void *arg, const struct pmon__record *r)
{
	struct seen *s = arg;

	s->ordered++;
	switch (r->type) {
	case PMON_RECORD_EVENT:
		assert_true(r->event.index < 2);
		memcpy(s->names[r->event.index], r->event.name, 65);
		s->ids[r->event.index] = r->event.nids < 4 ? r->event.nids : 4;
		for (size_t i = 0; i < s->ids[r->event.index]; i++)
			s->evid[r->event.index][i] = pmon__rec_event_id(&r->event, i);
		s->nevents++;
		break;
	case PERF_RECORD_MMAP2:
		s->mmaps++;
		snprintf(s->mmap_name, sizeof(s->mmap_name), "%s", r->mmap.filename);
		break;
	case PERF_RECORD_COMM:
		s->comms++;
		snprintf(s->comm, sizeof(s->comm), "%s", r->comm.comm);
		break;
	case PERF_RECORD_FORK:
		s->forks++;
		break;
	case PERF_RECORD_EXIT:
		s->exits++;
		break;
	}
	return 0;
}

static const struct pmon__rec_ops ops = { .record = on_record, .ordered = on_ordered };

static int read_path(const char *path, struct pmon__rec_header *h, struct seen *s,
		     const struct pmon__rec_stats **st, struct pmon__perf_info *info)
{
	struct pmon__rec_reader *rd = pmon__rec_reader_open(path, h);
	int err;

	memset(s, 0, sizeof(*s));
	if (!rd)
		return -errno;
	err = pmon__rec_reader_run(rd, pmon__rec_reader_threads(rd), &ops, s);
	static struct pmon__rec_stats keep;
	keep = *pmon__rec_reader_stats(rd);
	if (st)
		*st = &keep;
	if (info && pmon__rec_reader_perf_info(rd))
		*info = *pmon__rec_reader_perf_info(rd);
	pmon__rec_reader_free(rd);
	return err;
}

/* Four CPUs' rings, each in time order, dumped in turn per round (as
 * perf does), and a last stretch with no round end: handed on sorted. */
static void four_rings(struct buf *o)
{
	for (uint64_t round = 0; round < 5; round++) {
		for (uint64_t cpu = 0; cpu < 4; cpu++)
			for (uint64_t k = 0; k < 50; k++)
				sample_at(o, 11, 0x400010, 1, 1000 * round + 4 * k + (3 - cpu));
		if (round < 4) {
			size_t r = rec(o, 68, 0);
			end_rec(o, r);
		}
	}
}

/*
 * perf record -z: three samples (id 11, times 100 to 102, period 1) as two
 * zstd frames (made with zstd -19 from the records' bytes), cut inside the
 * second sample, each in a PERF_RECORD_COMPRESSED: one stream whose
 * records span two compressed ones.
 */
static const uint8_t zframe1[] = {
	0x28, 0xb5, 0x2f, 0xfd, 0x04, 0x68, 0x25, 0x01, 0x00, 0x12, 0x43, 0x06, 0x0d,
	0xc0, 0xa7, 0x31, 0xfe, 0xdc, 0xf7, 0xb7, 0x6b, 0xb6, 0x3a, 0xf6, 0x4e, 0x01,
	0xe5, 0x3f, 0x7f, 0xf2, 0x7d, 0x7f, 0x0c, 0x7f, 0x50, 0xa4, 0x57, 0x02, 0x00,
	0x20, 0x11, 0x30, 0x71, 0x05, 0x05, 0x1a, 0x4d, 0xad, 0xef,
};
static const uint8_t zframe2[] = {
	0x28, 0xb5, 0x2f, 0xfd, 0x04, 0x68, 0xc5, 0x00, 0x00, 0xc2, 0x02, 0x05, 0x0a,
	0xe0, 0xad, 0x06, 0x60, 0x7d, 0x41, 0x0d, 0xd3, 0x7b, 0xa7, 0x7f, 0xf8, 0xdf,
	0xe5, 0xf2, 0x2d, 0xfd, 0x67, 0x8d, 0x00, 0x23, 0xd5, 0x88, 0x4f,
};

static void zstd_records(struct buf *o)
{
	/* PERF_RECORD_COMPRESSED is not padded to 8 bytes (which is why
	 * COMPRESSED2 came): the records after it are off alignment */
	size_t r = rec(o, 81, 0);
	bytes(o, zframe1, sizeof(zframe1));
	uint16_t size = (uint16_t)(o->n - r);
	memcpy(o->b + r + 6, &size, 2);
	r = rec(o, 83, 0); /* COMPRESSED2: { u64 data_size; data; padding } */
	u64(o, sizeof(zframe2));
	bytes(o, zframe2, sizeof(zframe2));
	end_rec(o, r);
}

static void test_perfdata__compressed(void **state)
{
	(void)state;
	struct pmon__zstd *z = pmon__zstd_new();
	struct buf o = { 0 };
	struct pmon__rec_header h;
	const struct pmon__rec_stats *st;
	struct pmon__perf_info info = { 0 };
	struct seen s;

	if (!z)
		skip(); /* no libzstd.so.1 on this machine */
	pmon__zstd_free(z);
	file_data_with(&o, 128, zstd_records);
	char *path = write_tmp(&o, o.n);
	assert_int_equal(read_path(path, &h, &s, &st, &info), 0);
	assert_int_equal(info.compressed_records, 2);
	assert_int_equal(info.compressed_bad, 0);
	assert_int_equal(s.samples, 3);
	assert_int_equal(s.period[0], 3);
	assert_false(st->truncated);
	unlink(path);
	free(path);
	free(o.b);
}

static void test_perfdata__time_order(void **state)
{
	(void)state;
	struct buf o = { 0 };
	struct pmon__rec_header h;
	struct seen s;

	file_data_with(&o, 128, late_mmap);
	char *path = write_tmp(&o, o.n);
	assert_int_equal(read_path(path, &h, &s, NULL, NULL), 0);
	assert_int_equal(s.samples, 1);
	assert_int_equal(s.epoch_last, 1); /* after the MMAP2, as its time says */
	unlink(path);
	free(path);
	free(o.b);
	o = (struct buf){ 0 };
	file_data_with(&o, 128, four_rings);
	path = write_tmp(&o, o.n);
	assert_int_equal(read_path(path, &h, &s, NULL, NULL), 0);
	assert_int_equal(s.samples, 5 * 4 * 50);
	assert_false(s.out_of_order);
	unlink(path);
	free(path);
	free(o.b);
}

static void check_full_read(const struct seen *s, const struct pmon__rec_stats *st,
			    const struct pmon__perf_info *info)
{
	assert_int_equal(s->nevents, 2);
	assert_string_equal(s->names[0], "cycles");
	assert_string_equal(s->names[1], "cpu/event=0xc4,umask=0x1/u"); /* event_desc */
	assert_int_equal(s->samples, 3);
	assert_int_equal(s->period[0], 200);
	assert_int_equal(s->period[1], 7);
	assert_int_equal(s->lost, 4); /* the LOST record's */
	/* perf report's Total Lost Samples: the LOST_SAMPLES records' sum
	 * alone (perf 6.0+ writes them from the kernel's count, which holds
	 * the LOST records' too): not 4 + 3 */
	assert_int_equal(st->lost, 3);
	assert_int_equal(s->mmaps, 1);
	assert_string_equal(s->mmap_name, "/bin/work");
	assert_string_equal(s->comm, "work");
	assert_int_equal(s->forks, 1);
	assert_int_equal(s->exits, 1);
	assert_int_equal(s->epoch_last, 2); /* after the MMAP2 and the FORK */
	assert_int_equal(st->samples, 3);
	assert_int_equal(info->unknown_records, 1);
	assert_int_equal(info->aux_records, 2); /* AUX, AUXTRACE */
	assert_int_equal(info->aux_bytes, 16);
	assert_int_equal(info->throttles, 1);
	assert_int_equal(info->lost_samples, 3);
	assert_non_null(strstr(st->warning, "skipped 2 AUX/itrace records"));
	assert_non_null(strstr(st->warning, "1 records of unknown type"));
}

static void test_perfdata__file_mode(void **state)
{
	(void)state;
	/* the attr size perf 6.1 writes, one larger than any header knows, and
	 * the first one (PERF_ATTR_SIZE_VER0) */
	static const uint32_t sizes[] = { 128, sizeof(struct perf_event_attr) + 24, 64 };
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct buf o = { 0 };
		struct pmon__rec_header h;
		struct pmon__perf_info info = { 0 };
		const struct pmon__rec_stats *st;
		struct seen s;
		file_data(&o, sizes[k]);
		char *path = write_tmp(&o, o.n);
		assert_int_equal(read_path(path, &h, &s, &st, &info), 0);
		check_full_read(&s, st, &info);
		assert_string_equal(h.event, "cycles");
		assert_string_equal(h.command, "perf record");
		assert_int_equal(h.sample_type, ST);
		assert_string_equal(info.hostname, "box");
		assert_int_equal(info.nrcpus_online, 2);
		assert_false(info.pipe);
		unlink(path);
		free(path);
		free(o.b);
	}
}

/* Pipe mode: the header, HEADER_ATTR records with their ids, a feature,
 * then the same data; read from a file and from standard input. */
static void pipe_data(struct buf *o)
{
	bytes(o, "PERFILE2", 8);
	u64(o, 16);
	size_t r = rec(o, 64, 0);
	attr(o, 128, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, ST);
	u64(o, 11), u64(o, 12);
	end_rec(o, r);
	r = rec(o, 64, 0);
	attr(o, 128, PERF_TYPE_RAW, 0x1c4, ST);
	u64(o, 22);
	end_rec(o, r);
	r = rec(o, 66, 0); /* HEADER_TRACING_DATA: 24 bytes follow */
	u32(o, 24), u32(o, 0);
	end_rec(o, r);
	zeros(o, 24);
	r = rec(o, 80, 0); /* HEADER_FEATURE: hostname */
	u64(o, 3);
	string(o, "pipebox");
	end_rec(o, r);
	r = rec(o, 78, 0); /* EVENT_UPDATE, NAME, of id 12 (cycles) */
	u64(o, 1), u64(o, 12);
	bytes(o, "cycles:u\0", 9);
	end_rec(o, r);
	r = rec(o, 82, 0); /* FINISHED_INIT */
	end_rec(o, r);
	data_records(o);
}

static void test_perfdata__pipe_mode(void **state)
{
	(void)state;
	struct buf o = { 0 };
	struct pmon__rec_header h;
	struct pmon__perf_info info = { 0 };
	const struct pmon__rec_stats *st;
	struct seen s;

	pipe_data(&o);
	char *path = write_tmp(&o, o.n);
	assert_int_equal(read_path(path, &h, &s, &st, &info), 0);
	assert_true(info.pipe);
	assert_string_equal(info.hostname, "pipebox");
	assert_int_equal(s.samples, 3);
	assert_int_equal(s.period[0], 200);
	assert_string_equal(s.names[0], "cycles:u"); /* EVENT_UPDATE's */
	assert_string_equal(s.names[1], "r1c4"); /* no event_desc: perf's name */
	/* standard input */
	int save = dup(0);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	dup2(fileno(f), 0);
	assert_int_equal(read_path("-", &h, &s, &st, &info), 0);
	assert_int_equal(s.samples, 3);
	dup2(save, 0);
	close(save);
	fclose(f);
	unlink(path);
	free(path);
	free(o.b);
}

/* The names perf gives events it has no description of (evsel__name()),
 * one pipe-mode stream per row. */
static void test_perfdata__event_names(void **state)
{
	(void)state;
	static const struct {
		int line;
		uint32_t type;
		uint64_t config;
		const char *name;
	} rows[] = {
		{ __LINE__, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cycles" },
		{ __LINE__, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, "branch-misses" },
		{ __LINE__, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, "ref-cycles" },
		{ __LINE__, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "page-faults" },
		{ __LINE__, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "task-clock" },
		{ __LINE__, PERF_TYPE_HW_CACHE, 0 | 0 << 8 | 1 << 16, "L1-dcache-load-misses" },
		{ __LINE__, PERF_TYPE_HW_CACHE, 2 | 1 << 8 | 0 << 16, "LLC-stores" },
		{ __LINE__, PERF_TYPE_HW_CACHE, 3 | 0 << 8 | 1 << 16, "dTLB-load-misses" },
		{ __LINE__, PERF_TYPE_RAW, 0x1c4, "r1c4" },
		{ __LINE__, PERF_TYPE_RAW, 0x5300c0, "r5300c0" },
		{ __LINE__, 8, 0x3c, "type8/config=0x3c/" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct buf o = { 0 };
		struct pmon__rec_header h;
		struct seen s;
		bytes(&o, "PERFILE2", 8);
		u64(&o, 16);
		size_t r = rec(&o, 64, 0);
		attr(&o, 128, rows[i].type, rows[i].config, ST);
		u64(&o, 11);
		end_rec(&o, r);
		char *path = write_tmp(&o, o.n);
		assert_int_equal(read_path(path, &h, &s, NULL, NULL), 0);
		if (strcmp(s.names[0], rows[i].name))
			fail_msg("row at line %d: '%s', not '%s'", rows[i].line, s.names[0],
				 rows[i].name);
		unlink(path);
		free(path);
		free(o.b);
	}
}

/* Cut after every byte: a short header is refused with one line, a short
 * data section read as far as it goes and said to be cut. */
static void test_perfdata__truncated(void **state)
{
	(void)state;
	struct buf o = { 0 };

	file_data(&o, 128);
	for (int mode = 0; mode < 2; mode++) {
		if (mode) {
			o.n = 0;
			pipe_data(&o);
		}
		for (size_t n = 0; n < o.n; n++) {
			struct pmon__rec_header h;
			const struct pmon__rec_stats *st;
			struct seen s;
			char *path = write_tmp(&o, n);
			int err = read_path(path, &h, &s, &st, NULL);
			uint64_t data_end = 0;
			if (!mode)
				data_end = *(uint64_t *)(o.b + 40) + *(uint64_t *)(o.b + 48);
			/* a pipe cut between records cannot tell: it ended there */
			if (err)
				assert_int_equal(err, -PMON_ERRNO__PARSE);
			else if (!mode && n < data_end)
				assert_true(st->truncated);
			unlink(path);
			free(path);
		}
	}
	free(o.b);
}

/* A perf killed before it wrote the sizes: data size 0, no features,
 * the records after the header read to the end, and said so. */
static void test_perfdata__unsized(void **state)
{
	(void)state;
	struct buf o = { 0 };
	struct pmon__rec_header h;
	const struct pmon__rec_stats *st;
	struct seen s;

	file_data(&o, 128);
	o.n = *(uint64_t *)(o.b + 40) + *(uint64_t *)(o.b + 48); /* no features */
	at64(&o, 48, 0);
	at64(&o, 72, 0);
	char *path = write_tmp(&o, o.n);
	assert_int_equal(read_path(path, &h, &s, &st, NULL), 0);
	assert_int_equal(s.samples, 3);
	assert_true(st->truncated);
	assert_non_null(strstr(st->warning, "was perf record killed?"));
	unlink(path);
	free(path);
	free(o.b);
}

static void test_perfdata__other_endian(void **state)
{
	(void)state;
	struct buf o = { 0 };
	struct pmon__rec_header h;
	struct seen s;

	file_data(&o, 128);
	memcpy(o.b, "2ELIFREP", 8);
	char *path = write_tmp(&o, o.n);
	assert_int_equal(read_path(path, &h, &s, NULL, NULL), -PMON_ERRNO__PARSE);
	assert_non_null(strstr(pmon_errdetail(), "big-endian"));
	unlink(path);
	free(path);
	free(o.b);
}

/* A garbage attrs section: refused, not read past. */
static void test_perfdata__garbage(void **state)
{
	(void)state;
	struct buf o = { 0 };
	struct pmon__rec_header h;
	struct seen s;

	file_data(&o, 128);
	at64(&o, 16, 7); /* attr_size */
	char *path = write_tmp(&o, o.n);
	assert_int_equal(read_path(path, &h, &s, NULL, NULL), -PMON_ERRNO__PARSE);
	at64(&o, 16, 144);
	at64(&o, 32, 1ULL << 40); /* attrs.size */
	FILE *f = fopen(path, "w");
	fwrite(o.b, 1, o.n, f);
	fclose(f);
	assert_int_equal(read_path(path, &h, &s, NULL, NULL), -PMON_ERRNO__PARSE);
	unlink(path);
	free(path);
	free(o.b);
}

/* ---- the attr-dependent sample fields ------------------------------------ */

static void test_perfdata__sample_fields(void **state)
{
	(void)state;
	struct buf o = { 0 };
	struct pmon__sample_fmt f = {
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN |
			PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC |
			PERF_SAMPLE_TRANSACTION | PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_PHYS_ADDR |
			PMON__SAMPLE_CGROUP | PMON__SAMPLE_DATA_PAGE_SIZE |
			PMON__SAMPLE_CODE_PAGE_SIZE | PMON__SAMPLE_AUX,
		.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED,
		.branch_sample_type = PERF_SAMPLE_BRANCH_HW_INDEX,
		.regs_intr = 0x3,
	};
	struct pmon_sample s;
	struct pmon__sample_ext x;

	size_t r = rec(&o, PERF_RECORD_SAMPLE, 0);
	u64(&o, 0x1234);
	u64(&o, 2), u64(&o, 1000), u64(&o, 5), u64(&o, 1), u64(&o, 6), u64(&o, 2); /* read */
	u64(&o, 1), u64(&o, 0x1234); /* callchain */
	u64(&o, 1), u64(&o, 9), u64(&o, 0x10), u64(&o, 0x20), u64(&o, 0); /* branches */
	u64(&o, 77), u64(&o, 0x42), u64(&o, 3); /* weight, data_src, transaction */
	u64(&o, 2), u64(&o, 0xa), u64(&o, 0xb); /* regs_intr */
	u64(&o, 0xdead000), u64(&o, 5), u64(&o, 4096), u64(&o, 2 << 20); /* phys..code_page */
	u64(&o, 8), u64(&o, 0x55); /* aux */
	end_rec(&o, r);
	assert_int_equal(pmon__sample_parse(o.b, o.n, &f, &s, &x), 0);
	assert_int_equal(s.ip, 0x1234);
	assert_int_equal(x.read_nr, 2);
	assert_int_equal(x.read_size, 6 * 8); /* nr, enabled, 2 x { value, id } */
	assert_int_equal(s.nr, 1);
	assert_int_equal(x.branch_nr, 1);
	assert_int_equal(x.branch_hw_idx, 9);
	assert_int_equal(x.weight, 77);
	assert_int_equal(x.data_src, 0x42);
	assert_int_equal(x.transaction, 3);
	assert_int_equal(x.nregs_intr, 2);
	assert_int_equal(x.phys_addr, 0xdead000);
	assert_int_equal(x.cgroup, 5);
	assert_int_equal(x.data_page_size, 4096);
	assert_int_equal(x.code_page_size, 2 << 20);
	assert_int_equal(x.aux_size, 8);
	/* every shorter record runs past: refused, never read past */
	for (size_t n = 8; n < o.n; n += 8) {
		uint16_t sz = (uint16_t)n;
		memcpy(o.b + 6, &sz, 2);
		assert_int_equal(pmon__sample_parse(o.b, n, &f, &s, &x), -EINVAL);
	}
	/* a group count that would wrap */
	at64(&o, 16, UINT64_MAX / 2);
	uint16_t sz = (uint16_t)o.n;
	memcpy(o.b + 6, &sz, 2);
	assert_int_equal(pmon__sample_parse(o.b, o.n, &f, &s, &x), -EINVAL);
	/* the public call still refuses what it is not given the attr for */
	assert_int_equal(pmon_sample__parse(o.b, o.n, f.sample_type, 0, &s), -ENOTSUP);
	free(o.b);
}

/* perf before 3.16 mapped user space with PERF_RECORD_MMAP (no MMAP2):
 * report names the file a sample ran in from it, as from MMAP2; the
 * kernel's own MMAP (pid -1) is no process's map. */
static void old_mmap(struct buf *o)
{
	size_t r = rec(o, PERF_RECORD_MMAP, 0);
	u32(o, UINT32_MAX), u32(o, 0);
	u64(o, 0xffffffff81000000ULL), u64(o, 0x1000000), u64(o, 0);
	bytes(o, "[kernel.kallsyms]_text\0\0", 24);
	trailer(o, 11);
	end_rec(o, r);
	r = rec(o, PERF_RECORD_MMAP, 0);
	u32(o, 7), u32(o, 7);
	u64(o, 0x400000), u64(o, 0x1000), u64(o, 0);
	bytes(o, "/bin/oldwork\0\0\0\0", 16);
	trailer(o, 11);
	end_rec(o, r);
	sample(o, 11, 0x400010, 100);
}

static void test_perfdata__old_mmap(void **state)
{
	struct buf o = { 0 };
	struct pmon_report_opts ro = { .sz = sizeof(ro), .sort = PMON_SORT_DSO, .no_stacks = true };
	struct pmon_report r;

	(void)state;
	file_data_with(&o, 128, old_mmap);
	char *path = write_tmp(&o, o.n);
	assert_int_equal(pmon_report_read(path, &ro, &r), 0);
	assert_int_equal(r.samples, 1);
	bool named = false;
	for (size_t k = 0; k < r.n; k++)
		named |= strstr(r.e[k].dso, "oldwork") != NULL;
	assert_true(named);
	pmon_report_release(&r);
	unlink(path);
	free(path);
	free(o.b);
}

/* perf record --buildid-mmap writes no build-id table: the kernel's build id
 * is in the MMAP2 record perf synthesizes for it (pid -1), which tells
 * whether this machine's kallsyms names the recording's kernel. */
static void kernel_mmap2_bid(struct buf *o)
{
	size_t r =
		rec(o, PERF_RECORD_MMAP2, PERF_RECORD_MISC_KERNEL | PERF_RECORD_MISC_MMAP_BUILD_ID);
	u32(o, UINT32_MAX), u32(o, 0);
	u64(o, 0xffffffff81000000ULL), u64(o, 0x1000000), u64(o, 0);
	uint8_t bid[24] = { 20, 0, 0, 0 };
	for (int i = 0; i < 20; i++)
		bid[4 + i] = (uint8_t)(0xa0 + i);
	bytes(o, bid, sizeof(bid));
	u32(o, 5), u32(o, 2);
	bytes(o, "[kernel.kallsyms]_text\0\0", 24);
	trailer(o, 11);
	end_rec(o, r);
	sample(o, 11, 0x400010, 100);
}

static void test_perfdata__kernel_mmap2_build_id(void **state)
{
	struct buf o = { 0 };
	struct pmon__rec_header h;

	(void)state;
	file_data_with(&o, 128, kernel_mmap2_bid);
	char *path = write_tmp(&o, o.n);
	struct pmon__rec_reader *rd = pmon__rec_reader_open(path, &h);
	assert_non_null(rd);
	const struct pmon__perf_info *pi = pmon__rec_reader_perf_info(rd);
	assert_non_null(pi);
	assert_int_equal(pi->kernel_build_id_size, 20);
	assert_int_equal(pi->kernel_build_id[0], 0xa0);
	assert_int_equal(pi->kernel_build_id[19], 0xa0 + 19);
	pmon__rec_reader_free(rd);
	unlink(path);
	free(path);
	free(o.b);
}

/* LOST counts a file states add up without wrapping (issue #31: a report
 * said "18446744073665863616 LOST"): at most UINT64_MAX. */
static void huge_lost(struct buf *o)
{
	for (int k = 0; k < 3; k++) {
		size_t r = rec(o, PERF_RECORD_LOST, 0);
		u64(o, 11), u64(o, 1ULL << 63);
		trailer(o, 11);
		end_rec(o, r);
	}
	sample(o, 11, 0x400010, 100);
}

static void test_perfdata__lost_saturates(void **state)
{
	struct buf o = { 0 };
	struct pmon__rec_header h;
	const struct pmon__rec_stats *st;
	struct seen s;

	(void)state;
	file_data_with(&o, 128, huge_lost);
	char *path = write_tmp(&o, o.n);
	assert_int_equal(read_path(path, &h, &s, &st, NULL), 0);
	assert_true(st->lost == UINT64_MAX);
	unlink(path);
	free(path);
	free(o.b);
}

/*
 * perf record --call-graph lbr: the user chain is the LBR call stack. A
 * sample with a kernel part, the kernel's (frame-pointer) user part and
 * two LBR entries (calls, most recent first: from = the call site) reads
 * as kernel frames, PERF_CONTEXT_USER, the ip and the two call sites; the
 * same sample without CALL_STACK keeps its chain.
 */
static void lbr_file(struct buf *o, uint64_t bst)
{
	const uint32_t asz = sizeof(struct perf_event_attr);
	const uint64_t st = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
		PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
		PERF_SAMPLE_BRANCH_STACK;
	struct perf_event_attr a = { .type = PERF_TYPE_HARDWARE, .size = asz };

	a.sample_period = 1000;
	a.sample_type = st;
	a.branch_sample_type = bst;
	bytes(o, "PERFILE2", 8);
	u64(o, 104);
	u64(o, asz + 16);
	zeros(o, 104 - 24);
	size_t ids = o->n;
	u64(o, 11);
	at64(o, 24, o->n), at64(o, 32, asz + 16);
	bytes(o, &a, asz);
	u64(o, ids), u64(o, 8);
	size_t data = o->n, r = rec(o, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	u64(o, 11), u64(o, 0x401010), u64(o, 7 | 7ULL << 32), u64(o, 99), u64(o, 1000);
	u64(o, 5); /* callchain: kernel, kernel, user marker, ip, a frame-pointer guess */
	u64(o, PERF_CONTEXT_KERNEL), u64(o, 0xffffffff81000100ULL);
	u64(o, PERF_CONTEXT_USER), u64(o, 0x401010), u64(o, 0xbad);
	u64(o, 2); /* branches { from, to, flags }: b() called from a(), a() from main() */
	u64(o, 0x401205), u64(o, 0x401000), u64(o, 0);
	u64(o, 0x401305), u64(o, 0x401200), u64(o, 0);
	end_rec(o, r);
	at64(o, 40, data), at64(o, 48, o->n - data);
}

static void test_perfdata__lbr_chain(void **state)
{
	struct pmon__rec_header h;
	struct seen s;
	struct buf o = { 0 };
	(void)state;

	lbr_file(&o, PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_CALL_STACK);
	char *path = write_tmp(&o, o.n);
	assert_int_equal(read_path(path, &h, &s, NULL, NULL), 0);
	assert_int_equal(s.samples, 1);
	assert_int_equal(s.nr, 6);
	assert_true(s.chain[0] == PERF_CONTEXT_KERNEL);
	assert_true(s.chain[1] == 0xffffffff81000100ULL);
	assert_true(s.chain[2] == PERF_CONTEXT_USER);
	assert_int_equal(s.chain[3], 0x401010); /* the sampled ip */
	assert_int_equal(s.chain[4], 0x401205); /* a(), where it called b() */
	assert_int_equal(s.chain[5], 0x401305); /* main(), where it called a() */
	unlink(path);
	free(path);
	free(o.b);
	/* any branch mode other than the call stack: the chain as recorded */
	memset(&o, 0, sizeof(o));
	lbr_file(&o, PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_ANY_CALL);
	path = write_tmp(&o, o.n);
	assert_int_equal(read_path(path, &h, &s, NULL, NULL), 0);
	assert_int_equal(s.nr, 5);
	assert_int_equal(s.chain[4], 0xbad);
	unlink(path);
	free(path);
	free(o.b);
}

/*
 * PERF_SAMPLE_READ (perf record -e '{a,b}:S'): a leader (id 11) whose
 * samples read the group, a member (id 22), both sampled with
 * read_format GROUP, ID, the times and LOST, or one event read alone.
 * perf hands on one sample per value, of the event with its id, with the
 * value's growth since that id's (and, for an inherited event, that
 * thread's) last sample as its period; a value that did not grow, or of
 * an id no event has, is none. @vals: per sample { tid, leader, member }.
 */
static void read_file(struct buf *o, bool group, bool inherit, const uint64_t (*vals)[3], size_t n)
{
	const uint32_t asz = sizeof(struct perf_event_attr);
	const uint64_t rf = PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED |
		PERF_FORMAT_TOTAL_TIME_RUNNING | (group ? PERF_FORMAT_GROUP : 0) |
		(1ULL << 4); /* PERF_FORMAT_LOST */
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = asz };

	a.sample_period = 1000;
	a.sample_type = ST | PERF_SAMPLE_READ;
	a.read_format = rf;
	a.sample_id_all = 1;
	a.inherit = inherit;
	bytes(o, "PERFILE2", 8);
	u64(o, 104);
	u64(o, asz + 16);
	zeros(o, 104 - 24);
	size_t ids = o->n;
	u64(o, 11), u64(o, 22);
	at64(o, 24, o->n), at64(o, 32, 2 * (asz + 16));
	bytes(o, &a, asz);
	u64(o, ids), u64(o, 8);
	a.config = PERF_COUNT_SW_PAGE_FAULTS;
	bytes(o, &a, asz);
	u64(o, ids + 8), u64(o, 8);
	size_t data = o->n;
	for (size_t i = 0; i < n; i++) {
		size_t r = rec(o, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
		u64(o, 11), u64(o, 0x401000 + i), u64(o, vals[i][0] | vals[i][0] << 32);
		u64(o, 100 + i), u64(o, 1000); /* time, period (perf reads the values) */
		if (group) { /* nr, enabled, running, { value, id, lost } [nr] */
			u64(o, 3), u64(o, 5000), u64(o, 5000);
			u64(o, vals[i][1]), u64(o, 11), u64(o, 0);
			u64(o, vals[i][2]), u64(o, 22), u64(o, 0);
			u64(o, 1000 * i), u64(o, 33), u64(o, 0); /* an id of no event */
		} else { /* value, enabled, running, id, lost */
			u64(o, vals[i][1]), u64(o, 5000), u64(o, 5000), u64(o, 11), u64(o, 0);
		}
		end_rec(o, r);
	}
	at64(o, 40, data), at64(o, 48, o->n - data);
}

static void check_read(bool group, bool inherit, const uint64_t (*vals)[3], size_t n,
		       uint64_t samples, uint64_t p0, uint64_t p1)
{
	struct pmon__rec_header h;
	struct seen s;
	struct buf o = { 0 };

	read_file(&o, group, inherit, vals, n);
	char *path = write_tmp(&o, o.n);
	assert_int_equal(read_path(path, &h, &s, NULL, NULL), 0);
	assert_true(h.sample_type & PERF_SAMPLE_PERIOD);
	assert_int_equal(s.samples, samples);
	assert_int_equal(s.period[0], p0);
	assert_int_equal(s.period[1], p1);
	unlink(path);
	free(path);
	free(o.b);
}

static void test_perfdata__sample_read(void **state)
{
	/* the member does not grow in the second sample: no sample of it */
	static const uint64_t grp[][3] = { { 7, 100, 5 }, { 7, 250, 5 }, { 7, 400, 9 } };
	/* two threads of an inherited event: each counted from its own last */
	static const uint64_t thr[][3] = {
		{ 7, 100, 5 }, { 8, 50, 2 }, { 7, 300, 6 }, { 8, 60, 2 }
	};
	(void)state;

	check_read(true, false, grp, 3, 5, 400, 9);
	check_read(false, false, grp, 3, 3, 400, 0);
	check_read(true, true, thr, 4, 7, 360, 8);
}

/*
 * perf record --threads: a directory, its header, attrs and features in
 * DIR/data (HEADER_DIR_FORMAT, version @version), the records in
 * DIR/data.N beside it, each in time order, read after the header's data
 * section and merged by time; version 0 (one file in a directory) has
 * none, nor has DIR/data given alone, so stray data.N files are not read.
 */
static char *dir_recording(uint64_t version)
{
	const uint32_t asz = sizeof(struct perf_event_attr);
	char *dir = strdup("/tmp/pmon-test-perfdir-XXXXXX"), path[256];
	struct buf o = { 0 };

	assert_non_null(mkdtemp(dir));
	bytes(&o, "PERFILE2", 8);
	u64(&o, 104);
	u64(&o, asz + 16);
	zeros(&o, 104 - 24);
	size_t ids = o.n;
	u64(&o, 11);
	at64(&o, 24, o.n), at64(&o, 32, asz + 16);
	attr(&o, asz, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, ST);
	u64(&o, ids), u64(&o, 8);
	size_t data = o.n;
	sample_at(&o, 11, 0x400010, 1, 10); /* the header's data section */
	at64(&o, 40, data), at64(&o, 48, o.n - data);
	at64(&o, 72 + 8 * (24 / 64), 1ULL << 24 % 64); /* HEADER_DIR_FORMAT */
	size_t secs = o.n;
	zeros(&o, 16);
	at64(&o, secs, o.n), at64(&o, secs + 8, 8);
	u64(&o, version);
	snprintf(path, sizeof(path), "%s/data", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(o.b, 1, o.n, f), o.n);
	fclose(f);
	for (int k = 0; k < 2; k++) { /* data.0: 20, 40; data.1: 30, 50 */
		o.n = 0;
		sample_at(&o, 11, 0x400020, 10, 20 + 10 * (uint64_t)k);
		sample_at(&o, 11, 0x400030, 100, 40 + 10 * (uint64_t)k);
		snprintf(path, sizeof(path), "%s/data.%d", dir, k);
		f = fopen(path, "w");
		assert_non_null(f);
		assert_int_equal(fwrite(o.b, 1, o.n, f), o.n);
		fclose(f);
	}
	free(o.b);
	return dir;
}

static void rm_dir_recording(char *dir)
{
	char path[256];

	for (int k = -1; k < 2; k++) {
		snprintf(path, sizeof(path), k < 0 ? "%s/data" : "%s/data.%d", dir, k);
		unlink(path);
	}
	rmdir(dir);
	free(dir);
}

static void test_perfdata__directory(void **state)
{
	struct pmon__rec_header h;
	const struct pmon__rec_stats *st;
	struct seen s;
	(void)state;

	char *dir = dir_recording(1);
	assert_int_equal(read_path(dir, &h, &s, &st, NULL), 0);
	assert_int_equal(s.samples, 5);
	assert_int_equal(s.period[0], 1 + 2 * 10 + 2 * 100);
	assert_false(s.out_of_order);
	assert_false(st->truncated);
	rm_dir_recording(dir);
	/* DIR/data named alone: that file alone, as perf reads it */
	char data[256];
	dir = dir_recording(1);
	snprintf(data, sizeof(data), "%s/data", dir);
	assert_int_equal(read_path(data, &h, &s, &st, NULL), 0);
	assert_int_equal(s.samples, 1);
	rm_dir_recording(dir);
	dir = dir_recording(0);
	assert_int_equal(read_path(dir, &h, &s, &st, NULL), 0);
	assert_int_equal(s.samples, 1);
	rm_dir_recording(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_perfdata__file_mode),
		cmocka_unit_test(test_perfdata__pipe_mode),
		cmocka_unit_test(test_perfdata__time_order),
		cmocka_unit_test(test_perfdata__compressed),
		cmocka_unit_test(test_perfdata__event_names),
		cmocka_unit_test(test_perfdata__truncated),
		cmocka_unit_test(test_perfdata__unsized),
		cmocka_unit_test(test_perfdata__other_endian),
		cmocka_unit_test(test_perfdata__garbage),
		cmocka_unit_test(test_perfdata__sample_fields),
		cmocka_unit_test(test_perfdata__old_mmap),
		cmocka_unit_test(test_perfdata__kernel_mmap2_build_id),
		cmocka_unit_test(test_perfdata__lost_saturates),
		cmocka_unit_test(test_perfdata__lbr_chain),
		cmocka_unit_test(test_perfdata__sample_read),
		cmocka_unit_test(test_perfdata__directory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
