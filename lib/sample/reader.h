/* SPDX-License-Identifier: MIT */
/*
 * The recording reader (reader.c), beside the writer (datafile.c): the one
 * place that knows pmon's file format on the way in. It checks the header,
 * finds the chunks (resynchronising past damage), checks their CRCs,
 * inflates them, frames their records and hands each on decoded, so that
 * its consumers (lib/report) read no byte offsets. Another format's reader
 * (perf.data) hands its records on through the same structs.
 *
 * Private to libpmon and its sibling libraries (PMON_PRIVATE_0.1).
 */
#ifndef PMON_SAMPLE_READER_H
#define PMON_SAMPLE_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <pmon/sample.h>

/* @n bytes of @fd at @off, whatever short reads and EINTR come in between.
 * Return: false on an error or the end of the file before @n bytes. */
static inline bool pmon__read_at(int fd, void *b, size_t n, uint64_t off)
{
	for (size_t got = 0; got < n;) {
		ssize_t r = pread(fd, (uint8_t *)b + got, n - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		got += (size_t)r;
	}
	return true;
}

/* A little-endian field of a record at @p, read without an alignment
 * assumption (both formats' readers). */
static inline uint32_t pmon__u32_at(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline uint64_t pmon__u64_at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* The recording's header, decoded. */
struct pmon__rec_header {
	unsigned version;
	uint64_t sample_type, regs_user; /* of the samples */
	uint32_t attr_type;
	uint64_t attr_config, period, freq;
	char event[96];
	char command[256];
	uint32_t flags; /* PMON_DATA_SYSTEM_WIDE */
	char hostname[65];
	int64_t captured; /* Unix seconds; 0 where the file does not say */
	char cpus[256]; /* record -C's list; "" for all CPUs or none */
};

/*
 * One record, decoded: @type is perf's PERF_RECORD_* or pmon's
 * PMON_RECORD_* (sample/datafile.h), and the member of the union of that
 * name is filled. Pointers point into the reader's buffer: valid during
 * the callback only. @raw and @size are the record as stored.
 */
struct pmon__record {
	uint32_t type;
	uint16_t misc;
	uint16_t size;
	const uint8_t *raw;
	union {
		struct pmon__rec_mmap { /* PERF_RECORD_MMAP, PERF_RECORD_MMAP2 */
			uint32_t pid, tid;
			uint64_t start, len, pgoff;
			uint8_t build_id[20]; /* MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID */
			uint8_t build_id_size;
			const char *filename; /* NUL-terminated, at most 4095 bytes */
		} mmap;
		struct pmon__rec_comm { /* PERF_RECORD_COMM */
			uint32_t pid, tid;
			bool exec; /* PERF_RECORD_MISC_COMM_EXEC */
			const char *comm;
		} comm;
		struct pmon__rec_task { /* PERF_RECORD_FORK, PERF_RECORD_EXIT */
			uint32_t pid, ppid, tid, ptid;
			uint64_t time;
		} task;
		struct pmon__rec_lost { /* PERF_RECORD_LOST */
			uint64_t id, lost;
		} lost;
		struct pmon_sample sample; /* PERF_RECORD_SAMPLE */
		struct pmon__rec_event { /* PMON_RECORD_EVENT: one sampled event */
			uint32_t index;
			uint64_t period, freq;
			uint32_t attr_type;
			uint64_t attr_config;
			char name[65];
			size_t nids; /* read each with pmon__rec_event_id() */
			const uint8_t *ids;
		} event;
		struct pmon__rec_ksym { /* PMON_RECORD_KSYM: a kernel symbol the samples hit */
			uint64_t start, end;
			const char *name; /* NUL-terminated */
		} ksym;
		struct pmon__rec_tpfmt { /* PMON_RECORD_TPFMT: a tracepoint's format */
			uint32_t index;
			const char *sys; /* not NUL-terminated: @sys_len bytes */
			size_t sys_len;
			const char *format; /* @len bytes (no NUL needed) */
			size_t len;
		} tpfmt;
		struct pmon__rec_vdso { /* PMON_RECORD_VDSO: the vDSO's image */
			const uint8_t *image;
			size_t len;
		} vdso;
	};
};

/* An MMAP, MMAP2 or FORK record too short for its type, handed on as
 * this type (only raw and size set): it still counts as an epoch. */
#define PMON__RECORD_SHORT 0x7fff

/* The @i-th sample identifier of a PMON_RECORD_EVENT (@i < nids). */
static inline uint64_t pmon__rec_event_id(const struct pmon__rec_event *e, size_t i)
{
	uint64_t v;

	memcpy(&v, e->ids + 8 * i, 8);
	return v;
}

/* What a read found and what it skipped. */
struct pmon__rec_stats {
	uint64_t samples; /* SAMPLE records decoded */
	uint64_t bad_samples; /* SAMPLE records that did not decode (not handed on) */
	uint64_t lost; /* the LOST records' counts */
	uint64_t good_bytes; /* stored bytes of the chunks read */
	uint64_t damaged_chunks, damaged_bytes, damaged_samples; /* as pmon_report's */
	bool truncated; /* something is missing */
	char warning[256]; /* the one-line account of the damage, or "" */
};

/*
 * The records of a read. Records that change what the samples after them
 * see (MMAP, MMAP2, COMM, FORK, EXIT, PMON_RECORD_EVENT) are "ordered":
 * handed to @ordered one at a time in file order. The rest (SAMPLE, LOST,
 * any other) go to @record, from one of the reader's threads @thread, in
 * file order within a chunk, tagged with @epoch: how many MMAP, MMAP2 and
 * FORK records come before it in the file. With one thread the two are
 * called interleaved in file order from the calling thread; with more,
 * @ordered is called after every @record, from the calling thread. Either
 * returns 0 or a negative error, which ends the read.
 */
struct pmon__rec_ops {
	int (*record)(void *arg, unsigned thread, const struct pmon__record *r, uint32_t epoch);
	int (*ordered)(void *arg, const struct pmon__record *r);
};

#pragma GCC visibility push(default)

struct pmon__rec_reader;

/*
 * Open the recording at @path ("-": standard input) and find its chunks;
 * fill @h. pmon's format or perf's (perf.data, file or pipe mode), told
 * by the magic: the same records come out of either.
 * Return: the reader (free with pmon__rec_reader_free()) or NULL with
 * errno set and the detail naming @path (what the file is instead, its
 * version, where its header is cut short).
 */
struct pmon__rec_reader *pmon__rec_reader_open(const char *path, struct pmon__rec_header *h);
/* Hand the kernel symbols the recording keeps (PMON_RECORD_KSYM), and its
 * vDSO image (PMON_RECORD_VDSO), to @fn,
 * before the other records name kernel addresses. Return: 0 or @fn's error. */
int pmon__rec_reader_ksyms(struct pmon__rec_reader *rd,
			   int (*fn)(void *arg, const struct pmon__record *r), void *arg);
/* How many threads a read of @rd would use: PMON_REPORT_THREADS, else one
 * per online CPU (at most 8), at most one per chunk. */
unsigned pmon__rec_reader_threads(const struct pmon__rec_reader *rd);
/*
 * Read every data chunk with @nthreads threads (fewer if no thread can be
 * had; @thread is below @nthreads), handing the records to @ops.
 * Return: 0, @ops' error, -ENOMEM, or -PMON_ERRNO__PARSE with the detail
 * set when every chunk is damaged.
 */
int pmon__rec_reader_run(struct pmon__rec_reader *rd, unsigned nthreads,
			 const struct pmon__rec_ops *ops, void *arg);
/* After pmon__rec_reader_run(): the counts and the account of damage. */
const struct pmon__rec_stats *pmon__rec_reader_stats(const struct pmon__rec_reader *rd);
void pmon__rec_reader_free(struct pmon__rec_reader *rd);

/*
 * Decode the perf record at @p (@len bytes, its header included, len >=
 * 8) for samples of @sample_type and @regs_user into @r; @name is a
 * buffer of at least 4096 bytes for MMAP file names.
 * Return: 0, -EINVAL (too short for its type, or a sample that does not
 * parse). Thread-safe.
 */
int pmon__record_decode(const uint8_t *p, size_t len, uint64_t sample_type, uint64_t regs_user,
			char *name, struct pmon__record *r);

#pragma GCC visibility pop

/* ---- perf.data (perfdata.c) --------------------------------------------- */

/* sample_type and branch_sample_type bits newer than some uapi headers
 * (include/uapi/linux/perf_event.h: Linux 5.7 to 6.8). */
#define PMON__SAMPLE_AUX (1ULL << 20)
#define PMON__SAMPLE_CGROUP (1ULL << 21)
#define PMON__SAMPLE_DATA_PAGE_SIZE (1ULL << 22)
#define PMON__SAMPLE_CODE_PAGE_SIZE (1ULL << 23)
#define PMON__SAMPLE_WEIGHT_STRUCT (1ULL << 24)
#define PMON__SAMPLE_BRANCH_COUNTERS (1ULL << 19)
#define PMON__FORMAT_LOST (1ULL << 4)

/* What of an event's attr a PERF_RECORD_SAMPLE's layout depends on. */
struct pmon__sample_fmt {
	uint64_t sample_type;
	uint64_t regs_user, regs_intr; /* sample_regs_user, sample_regs_intr */
	uint64_t read_format, branch_sample_type;
};

/* The fields of a sample that struct pmon_sample (public, fixed size)
 * has no room for; pointers point into the record. */
struct pmon__sample_ext {
	const uint8_t *read; /* struct read_format, read_size bytes */
	size_t read_size;
	uint64_t read_nr; /* values in it (1 unless PERF_FORMAT_GROUP) */
	uint64_t branch_nr, branch_hw_idx;
	const uint8_t *branches; /* branch_nr { u64 from, to, flags } */
	const uint8_t *branch_counters; /* branch_nr u64s, or NULL */
	uint64_t weight, data_src, transaction;
	uint64_t intr_abi, nregs_intr;
	const uint8_t *regs_intr;
	uint64_t phys_addr, cgroup, data_page_size, code_page_size;
	uint64_t aux_size;
	const uint8_t *aux;
};

/*
 * Decode the PERF_RECORD_SAMPLE at @rec (@len bytes) for an event whose
 * attr gives @f: every sample_type bit Linux writes, READ and
 * BRANCH_STACK included. @ext (may be NULL) gets the fields struct
 * pmon_sample lacks. Return: 0 or -EINVAL (a field runs past the record).
 * Thread-safe.
 */
int pmon__sample_parse(const void *rec, size_t len, const struct pmon__sample_fmt *f,
		       struct pmon_sample *s, struct pmon__sample_ext *ext);

/* What a perf.data's header and feature sections say about the recording. */
struct pmon__perf_info {
	bool pipe; /* pipe mode (perf record -o -) */
	uint64_t features[4]; /* the HEADER_* feature bits present */
	char hostname[65], osrelease[65], version[65], arch[33];
	char cpudesc[128];
	uint32_t nrcpus_online, nrcpus_avail;
	char cmdline[256]; /* its words joined by spaces */
	size_t nattrs; /* events */
	size_t nbuild_ids; /* HEADER_BUILD_ID entries */
	uint8_t kernel_build_id[20]; /* [kernel.kallsyms]'s, to tell whether
					 this machine's kallsyms names its addresses */
	uint8_t kernel_build_id_size; /* 0: the file has none */
	/* HEADER_TRACING_DATA as perf wrote it (the tracepoints' formats,
	 * tools/perf/util/trace-event-info.c), NULL if none */
	uint8_t *tracing_data;
	size_t tracing_data_size;
	/* after a read: what was skipped */
	uint64_t unknown_records, aux_records, aux_bytes;
	uint64_t compressed_records, compressed_bad; /* read; not read (no libzstd, damaged) */
	uint64_t throttles, unthrottles, lost_samples;
};

/* zstd (zstd.c): libzstd loaded on first use. A stream decompressor, or
 * NULL with errno ENOENT (no libzstd here) or ENOMEM. */
struct pmon__zstd;
struct pmon__zstd *pmon__zstd_new(void);
/* Append what the @n bytes at @in inflate to (*@out, *@len, *@cap: grown)
 * with the stream's state kept from the calls before. Return: 0, -EINVAL
 * (not zstd), -ENOMEM, -E2BIG (more than @max bytes from these). */
int pmon__zstd_inflate(struct pmon__zstd *z, const void *in, size_t n, uint8_t **out, size_t *len,
		       size_t *cap, size_t max);
void pmon__zstd_free(struct pmon__zstd *z);

struct pmon__perf_reader;

/*
 * perf's recording on @fd (file or pipe mode, the magic at its start;
 * taken over, closed by pmon__perf_reader_free() even on failure) named
 * @path in messages. Fills @h from the first event's attr and the
 * feature sections. Return: the reader or NULL with errno set and the
 * detail saying what is wrong (cut short, other byte order, not perf's).
 */
struct pmon__perf_reader *pmon__perf_reader_open(int fd, const char *path,
						 struct pmon__rec_header *h);
/* Hand every record on to @ops, in file order, from the calling thread
 * (thread 0): one PMON_RECORD_EVENT per event first. Return: 0, @ops'
 * error, -ENOMEM, or -PMON_ERRNO__PARSE with the detail. */
int pmon__perf_reader_run(struct pmon__perf_reader *p, const struct pmon__rec_ops *ops, void *arg);
/* @p was opened as DIR/data of the directory DIR perf record --threads
 * wrote: its run reads DIR/data.N too (HEADER_DIR_FORMAT version 1 and
 * up), as perf report -i DIR does; given the file alone, perf reads it
 * alone. Before pmon__perf_reader_run(). */
void pmon__perf_reader_in_dir(struct pmon__perf_reader *p);
const struct pmon__rec_stats *pmon__perf_reader_stats(const struct pmon__perf_reader *p);
const struct pmon__perf_info *pmon__perf_reader_info(const struct pmon__perf_reader *p);
void pmon__perf_reader_free(struct pmon__perf_reader *p);

#pragma GCC visibility push(default)
/* What the perf.data @rd reads says of itself; NULL for pmon's format. */
const struct pmon__perf_info *pmon__rec_reader_perf_info(const struct pmon__rec_reader *rd);
#pragma GCC visibility pop

#endif
