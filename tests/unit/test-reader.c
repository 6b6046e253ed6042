// SPDX-License-Identifier: MIT
/* The recording reader (lib/sample/reader.h): records decoded through
 * structs, table-driven with each row's line; a recording written by the
 * writer read back with one thread and with several, the epochs of its
 * samples, and a damaged chunk skipped and counted. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <pmon/sample.h>

#include "sample/datafile.h"
#include "sample/reader.h"

struct rec {
	uint8_t b[512];
	size_t n;
};

static void put(struct rec *r, uint64_t v)
{
	memcpy(r->b + r->n, &v, 8);
	r->n += 8;
}

static void put32(struct rec *r, uint32_t a, uint32_t b)
{
	put(r, a | (uint64_t)b << 32);
}

/* @s padded with NULs to a multiple of 8. */
static void put_str(struct rec *r, const char *s)
{
	size_t n = (strlen(s) + 8) & ~(size_t)7;

	memset(r->b + r->n, 0, n);
	memcpy(r->b + r->n, s, strlen(s));
	r->n += n;
}

static size_t finish(struct rec *r, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc, .size = (uint16_t)r->n };

	memcpy(r->b, &h, sizeof(h));
	return r->n;
}

static size_t mmap2(struct rec *r, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		    const char *name, bool bid)
{
	r->n = 8;
	put32(r, pid, pid);
	put(r, start);
	put(r, len);
	put(r, pgoff);
	if (bid) { /* build id size, reserved, 20 bytes, where maj/min/ino were */
		uint8_t b[24] = { 20 };
		for (int i = 0; i < 20; i++)
			b[4 + i] = (uint8_t)(0xa0 + i);
		memcpy(r->b + r->n, b, 24);
		r->n += 24;
	} else {
		put32(r, 8, 1); /* maj, min */
		put(r, 1234); /* ino */
		put(r, 0); /* ino generation */
	}
	put32(r, 5, 2); /* prot, flags */
	put_str(r, name);
	return finish(r, PERF_RECORD_MMAP2, bid ? PERF_RECORD_MISC_MMAP_BUILD_ID : 0);
}

static size_t sample(struct rec *r, uint64_t ip, uint32_t pid)
{
	r->n = 8;
	put(r, ip);
	put32(r, pid, pid);
	put(r, 1000); /* period */
	return finish(r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
}

#define ST (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_PERIOD)

static void test_reader__decode(void **state)
{
	char name[4096];
	struct pmon__record d;
	struct rec r;

	(void)state;
	mmap2(&r, 42, 0x400000, 0x1000, 0x2000, "/usr/bin/x", true);
	assert_int_equal(pmon__record_decode(r.b, r.n, ST, 0, name, &d), 0);
	assert_int_equal(d.type, PERF_RECORD_MMAP2);
	assert_int_equal(d.mmap.pid, 42);
	assert_true(d.mmap.start == 0x400000 && d.mmap.len == 0x1000 && d.mmap.pgoff == 0x2000);
	assert_string_equal(d.mmap.filename, "/usr/bin/x");
	assert_int_equal(d.mmap.build_id_size, 20);
	assert_int_equal(d.mmap.build_id[19], 0xa0 + 19);
	mmap2(&r, 42, 0x400000, 0x1000, 0, "/lib/y.so", false);
	assert_int_equal(pmon__record_decode(r.b, r.n, ST, 0, name, &d), 0);
	assert_int_equal(d.mmap.build_id_size, 0);
	assert_string_equal(d.mmap.filename, "/lib/y.so");
	/* too short for its type: refused, never read past the record */
	assert_int_equal(pmon__record_decode(r.b, 72, ST, 0, name, &d), -EINVAL);

	static const struct {
		int line;
		uint32_t type;
		uint16_t misc;
		uint64_t w[4]; /* the body, 8 bytes each */
		size_t nw;
		int err;
	} rows[] = {
		{ __LINE__, PERF_RECORD_FORK, 0, { 7 | 3ULL << 32, 7 | 3ULL << 32, 99 }, 3, 0 },
		{ __LINE__, PERF_RECORD_EXIT, 0, { 7 | 3ULL << 32, 7 | 3ULL << 32, 99 }, 3, 0 },
		{ __LINE__, PERF_RECORD_FORK, 0, { 7 | 3ULL << 32 }, 1, -EINVAL },
		{ __LINE__, PERF_RECORD_LOST, 0, { 5, 17 }, 2, 0 },
		{ __LINE__, PERF_RECORD_LOST, 0, { 5 }, 1, -EINVAL },
		{ __LINE__,
		  PERF_RECORD_COMM,
		  PERF_RECORD_MISC_COMM_EXEC,
		  { 9 | 9ULL << 32, 0x6f6f66 /* "foo" */ },
		  2,
		  0 },
		{ __LINE__, PERF_RECORD_SAMPLE, 0, { 0x401000, 1 | 2ULL << 32, 500 }, 3, 0 },
		{ __LINE__, PERF_RECORD_SAMPLE, 0, { 0x401000 }, 1, -EINVAL },
		{ __LINE__, 99, 0, { 1 }, 1, 0 }, /* unknown: its header only */
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		r.n = 8;
		for (size_t k = 0; k < rows[i].nw; k++)
			put(&r, rows[i].w[k]);
		finish(&r, rows[i].type, rows[i].misc);
		int err = pmon__record_decode(r.b, r.n, ST, 0, name, &d);
		if (err != rows[i].err)
			fail_msg("row of line %d: %d, not %d", rows[i].line, err, rows[i].err);
		if (err)
			continue;
		if (d.type != rows[i].type || d.size != r.n || d.raw != r.b)
			fail_msg("row of line %d: header", rows[i].line);
		if (d.type == PERF_RECORD_FORK || d.type == PERF_RECORD_EXIT)
			assert_true(d.task.pid == 7 && d.task.ppid == 3 && d.task.time == 99);
		if (d.type == PERF_RECORD_LOST)
			assert_true(d.lost.id == 5 && d.lost.lost == 17);
		if (d.type == PERF_RECORD_COMM)
			assert_true(d.comm.exec && !strcmp(d.comm.comm, "foo") && d.comm.pid == 9);
		if (d.type == PERF_RECORD_SAMPLE)
			assert_true(d.sample.ip == 0x401000 && d.sample.pid == 1 &&
				    d.sample.tid == 2 && d.sample.period == 500);
	}
}

struct seen {
	unsigned samples, mmaps, forks, events;
	uint32_t max_epoch;
	uint64_t sum_ip_epoch; /* sum of ip * (epoch + 1): where each sample fell */
	pthread_mutex_t mu;
};

static int on_record(void *arg, unsigned thread, const struct pmon__record *r, uint32_t epoch)
{
	struct seen *s = arg;

	(void)thread;
	if (r->type != PERF_RECORD_SAMPLE)
		return 0;
	pthread_mutex_lock(&s->mu);
	s->samples++;
	s->sum_ip_epoch += r->sample.ip * (epoch + 1);
	if (epoch > s->max_epoch)
		s->max_epoch = epoch;
	pthread_mutex_unlock(&s->mu);
	return 0;
}

static int on_ordered(void *arg, const struct pmon__record *r)
{
	struct seen *s = arg;

	s->mmaps += r->type == PERF_RECORD_MMAP2;
	s->forks += r->type == PERF_RECORD_FORK;
	s->events += r->type == PMON_RECORD_EVENT;
	if (r->type == PMON_RECORD_EVENT) {
		assert_string_equal(r->event.name, "cpu-clock");
		assert_int_equal(r->event.nids, 2);
		assert_int_equal(pmon__rec_event_id(&r->event, 1), 22);
	}
	return 0;
}

/* A recording of @nchunks chunks: an event, then per chunk an MMAP2 and
 * 100 samples at ip = chunk + 1. */
static void write_recording(const char *path, int nchunks)
{
	struct pmon_data_header h = { .sample_type = ST, .period = 1000 };
	struct pmon_data_writer *w;
	const uint64_t ids[] = { 11, 22 };
	struct rec r;

	strcpy(h.event, "cpu-clock");
	strcpy(h.command, "test");
	w = pmon_data_writer__open(path, &h);
	assert_non_null(w);
	assert_int_equal(pmon_data_writer__add_event(w, 0, "cpu-clock", 1, 0, 1000, 0, ids, 2), 0);
	for (int c = 0; c < nchunks; c++) {
		mmap2(&r, 1, 0x400000 + 0x1000 * (uint64_t)c, 0x1000, 0, "/bin/x", false);
		assert_int_equal(pmon_data_writer__add(w, r.b, r.n), 0);
		for (int i = 0; i < 100; i++) {
			sample(&r, (uint64_t)c + 1, 1);
			assert_int_equal(pmon_data_writer__add(w, r.b, r.n), 0);
		}
		assert_int_equal(pmon_data_writer__flush(w), 0);
	}
	assert_int_equal(pmon_data_writer__close(w), 0);
}

static void read_back(const char *path, unsigned threads, struct seen *s)
{
	const struct pmon__rec_ops ops = { .record = on_record, .ordered = on_ordered };
	struct pmon__rec_header h;
	struct pmon__rec_reader *rd = pmon__rec_reader_open(path, &h);

	assert_non_null(rd);
	assert_string_equal(h.event, "cpu-clock");
	assert_true(h.sample_type == ST && h.period == 1000);
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->mu, NULL);
	assert_int_equal(pmon__rec_reader_run(rd, threads, &ops, s), 0);
	pthread_mutex_destroy(&s->mu);
	assert_int_equal(pmon__rec_reader_stats(rd)->samples, s->samples);
	pmon__rec_reader_free(rd);
}

static void test_reader__epochs(void **state)
{
	char path[] = "/tmp/pmon-test-reader.XXXXXX";
	int fd = mkstemp(path);
	struct seen s;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	write_recording(path, 6);
	for (unsigned threads = 1; threads <= 4; threads *= 2) {
		read_back(path, threads, &s);
		assert_int_equal(s.samples, 600);
		assert_int_equal(s.mmaps, 6);
		assert_int_equal(s.events, 1);
		/* chunk c's samples come after c + 1 MMAP2 records, whichever
		 * thread read them: epoch c + 1 */
		uint64_t want = 0;
		for (uint64_t c = 0; c < 6; c++)
			want += 100 * (c + 1) * (c + 2);
		assert_int_equal(s.sum_ip_epoch, want);
		assert_int_equal(s.max_epoch, 6);
	}
	unlink(path);
}

static void test_reader__damaged_chunk(void **state)
{
	char path[] = "/tmp/pmon-test-reader.XXXXXX";
	int fd = mkstemp(path);
	struct seen s;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	write_recording(path, 4);
	/* flip a byte in the middle of the third chunk's payload: that chunk
	 * fails its CRC. Found by walking the chunks from header_size, not at
	 * the file's middle, which moves with the header (issue #29's 256
	 * bytes put it on a chunk's nrec, which no reader checks). */
	FILE *f = fopen(path, "r+");
	assert_non_null(f);
	struct pmon_data_disk_header dh;
	struct pmon_data_chunk ch;
	assert_int_equal(fread(&dh, sizeof(dh), 1, f), 1);
	long at = (long)dh.header_size;
	for (int k = 0; k < 2; k++) {
		fseek(f, at, SEEK_SET);
		assert_int_equal(fread(&ch, sizeof(ch), 1, f), 1);
		at += (long)sizeof(ch) + (long)ch.len;
	}
	fseek(f, at, SEEK_SET);
	assert_int_equal(fread(&ch, sizeof(ch), 1, f), 1);
	at += (long)sizeof(ch) + (long)ch.len / 2;
	fseek(f, at, SEEK_SET);
	int c = fgetc(f);
	fseek(f, at, SEEK_SET);
	fputc(c ^ 0xff, f);
	fclose(f);
	read_back(path, 2, &s);
	assert_int_equal(s.samples, 300);
	struct pmon__rec_header h;
	struct pmon__rec_reader *rd = pmon__rec_reader_open(path, &h);
	const struct pmon__rec_ops ops = { .record = on_record, .ordered = on_ordered };
	pthread_mutex_init(&s.mu, NULL);
	assert_int_equal(pmon__rec_reader_run(rd, 1, &ops, &s), 0);
	const struct pmon__rec_stats *st = pmon__rec_reader_stats(rd);
	assert_int_equal(st->damaged_chunks, 1);
	assert_true(st->truncated);
	assert_non_null(strstr(st->warning, "skipped 1 damaged chunk"));
	pmon__rec_reader_free(rd);
	pthread_mutex_destroy(&s.mu);
	unlink(path);
}

static void test_reader__not_a_recording(void **state)
{
	struct pmon__rec_header h;

	(void)state;
	errno = 0;
	assert_null(pmon__rec_reader_open("/", &h));
	assert_int_not_equal(errno, 0);
	assert_null(pmon__rec_reader_open("/nonexistent/pmon.data", &h));
	assert_int_equal(errno, ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reader__decode),
		cmocka_unit_test(test_reader__epochs),
		cmocka_unit_test(test_reader__damaged_chunk),
		cmocka_unit_test(test_reader__not_a_recording),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
