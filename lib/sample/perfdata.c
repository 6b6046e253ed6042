// SPDX-License-Identifier: MIT
/*
 * perf's recording (perf.data) on the way in (sample/reader.h), beside
 * pmon's own (reader.c): the one place that knows perf's file format. It
 * reads the file header, the attrs (each by the size the file gives, so
 * attrs larger than this build's headers know are read), their ids and
 * the feature sections, or in pipe mode the HEADER_* records at the
 * stream's start, then hands the data section's records on decoded
 * through the same struct pmon__record and callbacks as pmon's reader, so
 * every report view reads either.
 *
 * Written from tools/perf/Documentation/perf.data-file-format.txt and
 * include/uapi/linux/perf_event.h in the Linux tree. Every length comes
 * from the input and is checked as "what is left" before use.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "sample/datafile.h"
#include "sample/reader.h"

/* perf's own record types (tools/lib/perf/include/perf/event.h:
 * enum perf_user_event_type), written by perf, not the kernel. */
enum {
	PF_HEADER_ATTR = 64,
	PF_HEADER_EVENT_TYPE = 65,
	PF_HEADER_TRACING_DATA = 66,
	PF_HEADER_BUILD_ID = 67,
	PF_FINISHED_ROUND = 68,
	PF_ID_INDEX = 69,
	PF_AUXTRACE_INFO = 70,
	PF_AUXTRACE = 71,
	PF_AUXTRACE_ERROR = 72,
	PF_THREAD_MAP = 73,
	PF_CPU_MAP = 74,
	PF_STAT_CONFIG = 75,
	PF_STAT = 76,
	PF_STAT_ROUND = 77,
	PF_EVENT_UPDATE = 78,
	PF_TIME_CONV = 79,
	PF_HEADER_FEATURE = 80,
	PF_COMPRESSED = 81,
	PF_FINISHED_INIT = 82,
	PF_COMPRESSED2 = 83,
};

/* The feature bits (perf.data-file-format.txt, "HEADER_*"). */
enum {
	FEAT_TRACING_DATA = 1,
	FEAT_BUILD_ID = 2,
	FEAT_HOSTNAME = 3,
	FEAT_OSRELEASE = 4,
	FEAT_VERSION = 5,
	FEAT_ARCH = 6,
	FEAT_NRCPUS = 7,
	FEAT_CPUDESC = 8,
	FEAT_CMDLINE = 11,
	FEAT_EVENT_DESC = 12,
	FEAT_DIR_FORMAT = 24,
	FEAT_BITS = 256,
};

/* PERF_ATTR_SIZE_VER0: the first perf_event_attr, the smallest a file holds. */
#define ATTR_SIZE_MIN 64u
/* How much of an event's attr this reader keeps: what the uapi header
 * knows; the rest of a larger attr is read past by its size. */
#define ATTR_KEEP ((uint32_t)sizeof(struct perf_event_attr))
#define MAX_ATTRS 4096u
#define MAX_DIR_FILES 4096u
#define BUF_CAP (1u << 20)

struct section {
	uint64_t offset, size;
};

/* struct perf_file_header: 104 bytes. */
struct file_header {
	char magic[8];
	uint64_t size, attr_size;
	struct section attrs, data, event_types;
	uint64_t features[4];
};

struct pattr {
	struct perf_event_attr a; /* zero past what the file held */
	struct pmon__sample_fmt fmt;
	uint64_t *ids;
	size_t nids, capids;
	char name[65];
	bool sent; /* its PMON_RECORD_EVENT was handed on */
};

struct idmap {
	uint64_t id;
	uint32_t at;
};

struct qrec {
	uint64_t time, seq;
	size_t off;
	uint32_t len;
};

struct buildid {
	uint8_t id[20], size;
	char *path;
};

/* A PERF_SAMPLE_READ value's last reading, by id (and thread: perf's
 * per-thread period storage, for inherited events). */
struct lastread {
	uint64_t id, value;
	uint32_t tid;
	bool used;
};

struct pmon__perf_reader {
	char *path;
	int fd;
	struct pmon__perf_info info;
	struct pattr *at;
	size_t nat, capat;
	struct idmap *idx;
	size_t nidx, capidx;
	bool idx_sorted, all_identifier;
	int id_pos; /* u64 index of the sample id in a sample (from the header); -1: none */
	struct buildid *bid;
	size_t nbid, capbid;
	/* the stream of records */
	uint8_t *buf;
	size_t bpos, blen;
	uint64_t left; /* bytes of the data section not yet in buf; UINT64_MAX: to EOF */
	uint64_t data_size, consumed;
	bool eof, cut, unsized;
	/* perf record --threads: the data.N files beside the header's, read
	 * after its data section (HEADER_DIR_FORMAT version 1 and up) */
	uint64_t dir_version;
	bool in_dir; /* opened as DIR/data */
	char **files;
	size_t nfiles, nextfile;
	uint32_t epoch;
	uint64_t lost_records; /* the LOST records' counts */
	bool had_lost_samples; /* a LOST_SAMPLES record was read */
	/* time order (perf's ordered_events): the records of the last two
	 * rounds, sorted and handed on up to the time the round before ended at */
	bool ordering;
	struct qrec *q;
	size_t nq, capq;
	uint8_t *arena, *arena2;
	size_t narena, caparena, caparena2;
	uint64_t seq, max_time, next_flush;
	/* perf record -z: the decompressed stream, a record may span two */
	struct pmon__zstd *z;
	bool z_tried, z_missing;
	uint8_t *zbuf;
	size_t zlen, zcap;
	uint64_t regs[17]; /* a DWARF sample's registers, in pmon's order */
	uint64_t lbr[512]; /* an LBR sample's chain, rebuilt (LBR_CHAIN_MAX) */
	struct lastread *lr; /* open addressing, a power of two, at most half full */
	size_t nlr, caplr;
	char name[4096];
	const struct pmon__rec_ops *ops;
	void *arg;
	struct pmon__rec_stats stats;
};

/* ---- input --------------------------------------------------------------- */

/* Make @need bytes available at buf + bpos; false at the end of the input. */
static bool fill(struct pmon__perf_reader *p, size_t need)
{
	if (p->blen - p->bpos >= need)
		return true;
	if (p->bpos) {
		memmove(p->buf, p->buf + p->bpos, p->blen - p->bpos);
		p->blen -= p->bpos;
		p->bpos = 0;
	}
	while (p->blen < need && !p->eof && p->left) {
		size_t room = BUF_CAP - p->blen;
		if (room > p->left)
			room = (size_t)p->left;
		ssize_t r = read(p->fd, p->buf + p->blen, room);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN) { /* a non-blocking pipe: wait for it */
			struct pollfd pfd = { .fd = p->fd, .events = POLLIN };
			poll(&pfd, 1, -1);
			continue;
		}
		if (r <= 0) {
			p->eof = true;
			break;
		}
		p->blen += (size_t)r;
		if (p->left != UINT64_MAX)
			p->left -= (uint64_t)r;
	}
	return p->blen - p->bpos >= need;
}

/* Pass @n bytes of the stream (a payload that follows its record),
 * copied to @to when it is not NULL. */
static bool take(struct pmon__perf_reader *p, uint64_t n, uint8_t *to)
{
	while (n) {
		if (p->blen == p->bpos && !fill(p, 1))
			return false;
		size_t have = p->blen - p->bpos;
		size_t k = n < have ? (size_t)n : have;
		if (to) {
			memcpy(to, p->buf + p->bpos, k);
			to += k;
		}
		p->bpos += k;
		p->consumed += k;
		n -= k;
	}
	return true;
}

static bool skip(struct pmon__perf_reader *p, uint64_t n)
{
	return take(p, n, NULL);
}

/* The tracing data (perf's trace-event-info.c: the tracepoints' formats),
 * kept for the report to decode RAW samples by; the last one wins. At most
 * 64 MiB are kept. Return: 0 or -ENOMEM. */
static int keep_tracing_data(struct pmon__perf_reader *p, uint8_t *b, size_t n)
{
	free(p->info.tracing_data);
	p->info.tracing_data = b;
	p->info.tracing_data_size = n;
	return 0;
}

/* HEADER_TRACING_DATA of pipe mode: { header; u32 size; }, then size bytes. */
static int pipe_tracing_data(struct pmon__perf_reader *p, const uint8_t *rec, size_t len)
{
	uint32_t n = len >= 12 ? pmon__u32_at(rec + 8) : 0;
	uint8_t *b = n && n <= 64u << 20 ? malloc(n) : NULL;

	if (!take(p, n, b)) {
		p->cut = true;
		free(b);
		return 0;
	}
	return b ? keep_tracing_data(p, b, n) : 0;
}

/*
 * The next record of the stream: 1 with *@rec and its length, 0 at a
 * clean end, -1 where the input ends inside a record or a record's size
 * is less than its header (the rest cannot be framed).
 */
static int next_record(struct pmon__perf_reader *p, const uint8_t **rec, size_t *len)
{
	struct perf_event_header h;

	if (!fill(p, sizeof(h)))
		return p->blen == p->bpos ? 0 : -1;
	memcpy(&h, p->buf + p->bpos, sizeof(h));
	if (h.size < sizeof(h) || !fill(p, h.size))
		return -1;
	*rec = p->buf + p->bpos;
	*len = h.size;
	p->bpos += h.size;
	p->consumed += h.size;
	return 1;
}

/* ---- events -------------------------------------------------------------- */

static const char *const hw_names[] = {
	"cycles",
	"instructions",
	"cache-references",
	"cache-misses",
	"branches",
	"branch-misses",
	"bus-cycles",
	"stalled-cycles-frontend",
	"stalled-cycles-backend",
	"ref-cycles",
};
static const char *const sw_names[] = {
	"cpu-clock",	    "task-clock",   "page-faults",  "context-switches",
	"cpu-migrations",   "minor-faults", "major-faults", "alignment-faults",
	"emulation-faults", "dummy",	    "bpf-output",   "cgroup-switches",
};
static const char *const cache_names[] = { "L1-dcache", "L1-icache", "LLC", "dTLB",
					   "iTLB",	"branch",    "node" };
static const char *const cache_ops[] = { "load", "store", "prefetch" };

/*
 * The name perf gives an event it has no description of
 * (tools/perf/util/evsel.c, evsel__name()): the generic names, a cache
 * event as cache-op[-misses], a raw one as rXXXX.
 */
static void attr_name(const struct perf_event_attr *a, char *out, size_t len)
{
	uint64_t c = a->config;

	if (a->type == PERF_TYPE_HARDWARE && c < PMON_ARRAY_SIZE(hw_names))
		pmon__fmt(out, len, "%s", hw_names[c]);
	else if (a->type == PERF_TYPE_SOFTWARE && c < PMON_ARRAY_SIZE(sw_names))
		pmon__fmt(out, len, "%s", sw_names[c]);
	else if (a->type == PERF_TYPE_HW_CACHE && (c & 0xff) < PMON_ARRAY_SIZE(cache_names) &&
		 (c >> 8 & 0xff) < 3 && (c >> 16 & 0xff) < 2)
		pmon__fmt(out, len, "%s-%s%s", cache_names[c & 0xff], cache_ops[c >> 8 & 0xff],
			  c >> 16 & 0xff ? "-misses" : "s");
	else if (a->type == PERF_TYPE_RAW)
		pmon__fmt(out, len, "r%llx", (unsigned long long)c);
	else if (a->type == PERF_TYPE_TRACEPOINT)
		pmon__fmt(out, len, "tracepoint:%llu", (unsigned long long)c);
	else
		pmon__fmt(out, len, "type%u/config=0x%llx/", a->type, (unsigned long long)c);
}

/* A new event from @n bytes of a perf_event_attr. */
static struct pattr *add_attr(struct pmon__perf_reader *p, const uint8_t *raw, size_t n)
{
	if (p->nat >= MAX_ATTRS || PMON_GROW(&p->at, &p->capat, p->nat + 1))
		return NULL;
	struct pattr *e = &p->at[p->nat++];
	memset(e, 0, sizeof(*e));
	memcpy(&e->a, raw, n < ATTR_KEEP ? n : ATTR_KEEP);
	e->fmt = (struct pmon__sample_fmt){ .sample_type = e->a.sample_type,
					    .regs_user = e->a.sample_regs_user,
					    .read_format = e->a.read_format,
					    .branch_sample_type = e->a.branch_sample_type };
	if (n >= offsetof(struct perf_event_attr, sample_regs_intr) + 8)
		e->fmt.regs_intr = e->a.sample_regs_intr;
	attr_name(&e->a, e->name, sizeof(e->name));
	return e;
}

static int add_id(struct pmon__perf_reader *p, size_t at, uint64_t id)
{
	struct pattr *e = &p->at[at];

	if (PMON_GROW(&e->ids, &e->capids, e->nids + 1) ||
	    PMON_GROW(&p->idx, &p->capidx, p->nidx + 1))
		return -ENOMEM;
	e->ids[e->nids++] = id;
	p->idx[p->nidx++] = (struct idmap){ id, (uint32_t)at };
	p->idx_sorted = false;
	return 0;
}

static int cmp_idmap(const void *a, const void *b)
{
	const struct idmap *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The event with id @id, or NULL. */
static const struct pattr *attr_of_id(struct pmon__perf_reader *p, uint64_t id)
{
	if (!p->nidx)
		return NULL;
	if (!p->idx_sorted) {
		qsort(p->idx, p->nidx, sizeof(*p->idx), cmp_idmap);
		p->idx_sorted = true;
	}
	struct idmap key = { id, 0 };
	const struct idmap *m = bsearch(&key, p->idx, p->nidx, sizeof(*p->idx), cmp_idmap);
	return m ? &p->at[m->at] : NULL;
}

/* The sample's event: by its id where events are told apart by one. */
static const struct pattr *sample_attr(struct pmon__perf_reader *p, const uint8_t *rec, size_t len)
{
	uint64_t id;

	if (p->nat <= 1 || !p->nidx)
		return p->nat ? &p->at[0] : NULL;
	if (p->all_identifier && len >= 16)
		id = pmon__u64_at(rec + 8);
	else if (p->id_pos > 0 && len >= 8 * (size_t)p->id_pos + 8)
		id = pmon__u64_at(rec + 8 * (size_t)p->id_pos);
	else
		return &p->at[0];
	const struct pattr *e = attr_of_id(p, id);
	return e ? e : &p->at[0];
}

/*
 * Where a sample's id is when not every event writes
 * PERF_SAMPLE_IDENTIFIER first: after the header, IP, TID, TIME and ADDR
 * of the first event's sample_type (perf requires every event of a file
 * to put it at the same place: evlist__valid_sample_type()).
 */
static void find_id_pos(struct pmon__perf_reader *p)
{
	p->all_identifier = p->nat > 0;
	for (size_t i = 0; i < p->nat; i++)
		if (!(p->at[i].a.sample_type & PERF_SAMPLE_IDENTIFIER))
			p->all_identifier = false;
	p->id_pos = -1;
	if (!p->nat)
		return;
	uint64_t t = p->at[0].a.sample_type;
	if (t & PERF_SAMPLE_IDENTIFIER) {
		p->id_pos = 1;
	} else if (t & PERF_SAMPLE_ID) {
		p->id_pos = 1;
		uint64_t before[] = { PERF_SAMPLE_IP, PERF_SAMPLE_TID, PERF_SAMPLE_TIME,
				      PERF_SAMPLE_ADDR };
		for (size_t i = 0; i < PMON_ARRAY_SIZE(before); i++)
			p->id_pos += !!(t & before[i]);
	}
}

/* ---- feature sections ------------------------------------------------------ */

/* A struct perf_header_string at @at of the @n bytes at @b: { u32 len;
 * char str[len]; } (NUL-padded). Return: the bytes it took, or 0. */
static size_t take_string(const uint8_t *b, size_t n, size_t at, char *out, size_t outlen)
{
	if (n < 4 || at > n - 4)
		return 0;
	uint32_t len = pmon__u32_at(b + at);
	if (len > n - at - 4)
		return 0;
	pmon__fmt(out, outlen, "%.*s", (int)strnlen((const char *)b + at + 4, len),
		  (const char *)b + at + 4);
	return 4 + (size_t)len;
}

static void feat_cmdline(struct pmon__perf_reader *p, const uint8_t *b, size_t n)
{
	char word[256];
	size_t at = 4, used = 0;

	if (n < 4)
		return;
	uint32_t nr = pmon__u32_at(b);
	p->info.cmdline[0] = 0;
	for (uint32_t i = 0; i < nr; i++) {
		size_t k = take_string(b, n, at, word, sizeof(word));
		if (!k)
			break;
		at += k;
		int w = snprintf(p->info.cmdline + used, sizeof(p->info.cmdline) - used, "%s%s",
				 i ? " " : "", word);
		if (w < 0 || (size_t)w >= sizeof(p->info.cmdline) - used)
			break;
		used += (size_t)w;
	}
}

/*
 * HEADER_EVENT_DESC: { u32 nr, attr_size; { attr; u32 nr_ids; string
 * name; u64 ids[nr_ids]; } [nr] }. The names perf gave its events: each
 * event found by its first id, else by its place.
 */
static void feat_event_desc(struct pmon__perf_reader *p, const uint8_t *b, size_t n)
{
	if (n < 8)
		return;
	uint32_t nr = pmon__u32_at(b), asz = pmon__u32_at(b + 4);
	size_t at = 8;
	char name[128];

	for (uint32_t i = 0; i < nr && asz <= n && at <= n - asz; i++) {
		at += asz;
		if (n - at < 4)
			return;
		uint32_t nids = pmon__u32_at(b + at);
		size_t k = take_string(b, n, at + 4, name, sizeof(name));
		if (!k)
			return;
		at += 4 + k;
		if (nids > (n - at) / 8)
			return;
		size_t which = i;
		for (size_t j = 0; nids && j < p->nat; j++)
			if (p->at[j].nids && p->at[j].ids[0] == pmon__u64_at(b + at))
				which = j;
		if (which < p->nat && name[0])
			pmon__strlcpy(p->at[which].name, name, sizeof(p->at[which].name));
		at += 8 * (size_t)nids;
	}
}

/*
 * HEADER_BUILD_ID: build_id records, { header; s32 pid; u8 build_id[24];
 * char filename[]; }; with PERF_RECORD_MISC_BUILD_ID_SIZE (1 << 15) in
 * misc, byte 20 of build_id is its size (else 20). Kept by file name,
 * for the MMAP2 records that carry device and inode instead.
 */
static int feat_build_ids(struct pmon__perf_reader *p, const uint8_t *b, size_t n)
{
	for (size_t at = 0; n - at >= 8 + 4 + 24;) {
		struct perf_event_header h;
		memcpy(&h, b + at, sizeof(h));
		if (h.size < 8 + 4 + 24 || h.size > n - at)
			break;
		const uint8_t *id = b + at + 12;
		char *path = strndup((const char *)b + at + 36, h.size - 36u);
		if (!path || PMON_GROW(&p->bid, &p->capbid, p->nbid + 1)) {
			free(path);
			return -ENOMEM;
		}
		struct buildid *e = &p->bid[p->nbid++];
		memcpy(e->id, id, 20);
		e->size = h.misc & (1 << 15) && id[20] <= 20 ? id[20] : 20;
		e->path = path;
		if (!strcmp(path, "[kernel.kallsyms]")) {
			memcpy(p->info.kernel_build_id, e->id, 20);
			p->info.kernel_build_id_size = e->size;
		}
		at += h.size;
	}
	p->info.nbuild_ids = p->nbid;
	return 0;
}

/* One feature section's @n bytes at @b. */
static int feature(struct pmon__perf_reader *p, unsigned bit, const uint8_t *b, size_t n)
{
	struct pmon__perf_info *f = &p->info;

	f->features[bit / 64] |= 1ULL << bit % 64;
	switch (bit) {
	case FEAT_HOSTNAME:
		take_string(b, n, 0, f->hostname, sizeof(f->hostname));
		break;
	case FEAT_OSRELEASE:
		take_string(b, n, 0, f->osrelease, sizeof(f->osrelease));
		break;
	case FEAT_VERSION:
		take_string(b, n, 0, f->version, sizeof(f->version));
		break;
	case FEAT_ARCH:
		take_string(b, n, 0, f->arch, sizeof(f->arch));
		break;
	case FEAT_CPUDESC:
		take_string(b, n, 0, f->cpudesc, sizeof(f->cpudesc));
		break;
	case FEAT_NRCPUS:
		if (n >= 8) {
			f->nrcpus_avail = pmon__u32_at(b);
			f->nrcpus_online = pmon__u32_at(b + 4);
		}
		break;
	case FEAT_CMDLINE:
		feat_cmdline(p, b, n);
		break;
	case FEAT_EVENT_DESC:
		feat_event_desc(p, b, n);
		break;
	case FEAT_BUILD_ID:
		return feat_build_ids(p, b, n);
	case FEAT_DIR_FORMAT: /* { u64 version; } */
		if (n >= 8)
			p->dir_version = pmon__u64_at(b);
		break;
	default:
		break;
	}
	return 0;
}

/*
 * The feature sections of a file: one struct perf_file_section per set
 * bit, in bit order, right after the data section. A section that does
 * not fit the file is passed by (the data can still be read).
 */
static int read_features(struct pmon__perf_reader *p, const struct file_header *fh, uint64_t fsize)
{
	uint64_t at = fh->data.offset + fh->data.size;
	int err = 0;

	for (unsigned bit = 0; bit < FEAT_BITS && !err; bit++) {
		struct section s;
		if (!(fh->features[bit / 64] >> bit % 64 & 1))
			continue;
		if (at > fsize || fsize - at < sizeof(s) ||
		    !pmon__read_at(p->fd, &s, sizeof(s), at))
			break;
		at += sizeof(s);
		if (s.offset > fsize || s.size > fsize - s.offset || s.size > 64u << 20)
			continue;
		uint8_t *b = malloc(s.size ? s.size : 1);
		if (!b)
			return -ENOMEM;
		if (!pmon__read_at(p->fd, b, s.size, s.offset)) {
			free(b);
			continue;
		}
		if (bit == FEAT_TRACING_DATA) { /* the reader keeps it */
			err = keep_tracing_data(p, b, s.size);
			continue;
		}
		err = feature(p, bit, b, s.size);
		free(b);
	}
	return err;
}

/* ---- perf record --threads: a directory ----------------------------------- */

static int cmp_data_file(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	const char *nx = strrchr(x, '.') + 1, *ny = strrchr(y, '.') + 1;
	unsigned long ix = strtoul(nx, NULL, 10), iy = strtoul(ny, NULL, 10);

	return ix != iy ? (ix < iy ? -1 : 1) : strcmp(x, y);
}

/*
 * The data files of a directory recording (tools/perf/util/data.c,
 * perf_data__open_dir()): every regular file whose name starts with
 * "data." beside the header's file, each a stream of records from its
 * start to its end, in the order of their numbers. Return: 0 or -ENOMEM.
 */
static int list_data_files(struct pmon__perf_reader *p)
{
	const char *slash = strrchr(p->path, '/');
	char *dir = slash ? strndup(p->path, (size_t)(slash - p->path + 1)) : strdup("./");
	size_t cap = 0;
	int err = 0;

	if (!dir)
		return -ENOMEM;
	DIR *d = opendir(dir);
	for (struct dirent *e; d && !err && (e = readdir(d));) {
		char *path;
		struct stat st;
		if (strncmp(e->d_name, "data.", 5) || p->nfiles >= MAX_DIR_FILES)
			continue;
		if (asprintf(&path, "%s%s", dir, e->d_name) < 0) {
			err = -ENOMEM;
			break;
		}
		if (stat(path, &st) || !S_ISREG(st.st_mode)) {
			free(path);
			continue;
		}
		if (PMON_GROW(&p->files, &cap, p->nfiles + 1)) {
			free(path);
			err = -ENOMEM;
			break;
		}
		p->files[p->nfiles++] = path;
	}
	if (d)
		closedir(d);
	free(dir);
	if (p->nfiles)
		qsort(p->files, p->nfiles, sizeof(*p->files), cmp_data_file);
	return err;
}

/* Go on with the next data file's records. False when there is none. A
 * file that cannot be opened is passed by, and said so (as cut short). */
static bool next_data_file(struct pmon__perf_reader *p)
{
	while (p->nextfile < p->nfiles) {
		const char *path = p->files[p->nextfile++];
		int fd = pmon__open_regular(path, false);
		struct stat st;
		if (fd < 0 || fstat(fd, &st)) {
			if (fd >= 0)
				close(fd);
			p->cut = true;
			continue;
		}
		close(p->fd);
		p->fd = fd;
		p->left = (uint64_t)st.st_size;
		p->data_size += (uint64_t)st.st_size;
		p->bpos = p->blen = 0;
		p->eof = false;
		/* each file is its own zstd stream (perf compresses per thread) */
		p->zlen = 0;
		pmon__zstd_free(p->z);
		p->z = NULL;
		p->z_tried = false;
		return true;
	}
	return false;
}

/* ---- the header ------------------------------------------------------------ */

static bool section_ok(const struct section *s, uint64_t fsize)
{
	return s->offset <= fsize && s->size <= fsize - s->offset;
}

/* The attrs section: attr_size-byte entries, each a perf_event_attr of
 * attr_size - 16 bytes and the file section of its ids. */
static int read_attrs(struct pmon__perf_reader *p, const struct file_header *fh, uint64_t fsize)
{
	uint64_t asz = fh->attr_size, n;
	uint8_t *e;
	int err = 0;

	if (asz < ATTR_SIZE_MIN + 16 || asz > 4096 || fh->attrs.size % asz ||
	    !section_ok(&fh->attrs, fsize))
		return pmon__err(
			-PMON_ERRNO__PARSE,
			"%s: perf.data attrs section is malformed (%llu bytes of %llu-byte "
			"entries at byte %llu)",
			p->path, (unsigned long long)fh->attrs.size, (unsigned long long)asz,
			(unsigned long long)fh->attrs.offset);
	n = fh->attrs.size / asz;
	if (!n || n > MAX_ATTRS)
		return pmon__err(-PMON_ERRNO__PARSE, "%s: perf.data holds %llu events (1 to %u)",
				 p->path, (unsigned long long)n, MAX_ATTRS);
	if (!(e = malloc(asz)))
		return -ENOMEM;
	for (uint64_t i = 0; i < n && !err; i++) {
		struct section ids;
		if (!pmon__read_at(p->fd, e, asz, fh->attrs.offset + i * asz)) {
			err = -EIO;
			break;
		}
		memcpy(&ids, e + asz - 16, 16);
		if (!add_attr(p, e, asz - 16)) {
			err = -ENOMEM;
			break;
		}
		if (!section_ok(&ids, fsize) || ids.size % 8) {
			err = pmon__err(-PMON_ERRNO__PARSE,
					"%s: perf.data event %llu's ids lie outside the file",
					p->path, (unsigned long long)i);
			break;
		}
		for (uint64_t k = 0; k < ids.size / 8 && !err; k++) {
			uint64_t id;
			if (!pmon__read_at(p->fd, &id, 8, ids.offset + 8 * k))
				err = -EIO;
			else
				err = add_id(p, p->nat - 1, id);
		}
	}
	free(e);
	return err;
}

/* perf's magic in the byte order of the writer; ours is little-endian. */
static int check_magic(const char *path, const char *m)
{
	if (!memcmp(m, "PERFILE2", 8))
		return 0;
	if (!memcmp(m, "2ELIFREP", 8))
		return pmon__err(
			-PMON_ERRNO__PARSE,
			"%s: perf.data written on a big-endian machine: pmon reads "
			"little-endian perf.data only ('perf report' on that machine reads it)",
			path);
	if (!memcmp(m, "PERFFILE", 8))
		return pmon__err(
			-PMON_ERRNO__PARSE,
			"%s: perf.data of version 1 (perf before Linux 2.6.37): pmon reads "
			"version 2 (PERFILE2)",
			path);
	return pmon__err(-PMON_ERRNO__PARSE, "%s: not a perf.data (no PERFILE2 header)", path);
}

/*
 * A recording without HEADER_BUILD_ID's [kernel.kallsyms] (perf record
 * --buildid-mmap writes no build-id table) may carry the kernel's build id
 * in the MMAP2 record perf synthesizes for it first (pid -1, the name
 * "[kernel.kallsyms]_text", PERF_RECORD_MISC_MMAP_BUILD_ID: build_id_size
 * at byte 40, the id at 44; include/uapi/linux/perf_event.h). Looked for
 * in the first 64 KiB of the data, as pmon__kernel_pick() decides before
 * the records are read whether this machine's kallsyms names them.
 */
static void kernel_mmap_build_id(struct pmon__perf_reader *p, uint64_t data_at)
{
	size_t n = p->left < 65536 ? (size_t)p->left : 65536;
	uint8_t *b = n ? malloc(n) : NULL;
	ssize_t got = b ? pread(p->fd, b, n, (off_t)data_at) : -1;

	for (size_t at = 0; got > 0 && (size_t)got - at >= sizeof(struct perf_event_header);) {
		struct perf_event_header h;
		uint32_t pid;
		memcpy(&h, b + at, sizeof(h));
		if (h.size < sizeof(h) || h.size > (size_t)got - at)
			break;
		if (h.type == PERF_RECORD_MMAP2 && h.size > 72 + 17 &&
		    h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID && b[at + 40] && b[at + 40] <= 20 &&
		    (memcpy(&pid, b + at + 8, 4), pid == UINT32_MAX) &&
		    !strncmp((const char *)b + at + 72, "[kernel.kallsyms]", 17)) {
			memcpy(p->info.kernel_build_id, b + at + 44, b[at + 40]);
			p->info.kernel_build_id_size = b[at + 40];
			break;
		}
		at += h.size;
	}
	free(b);
}

static int open_file(struct pmon__perf_reader *p, const struct file_header *fh, uint64_t fsize)
{
	int err;

	if (fh->size < sizeof(*fh))
		return pmon__err(-PMON_ERRNO__PARSE,
				 "%s: perf.data header of %llu bytes (at least %zu)", p->path,
				 (unsigned long long)fh->size, sizeof(*fh));
	if ((err = read_attrs(p, fh, fsize)))
		return err;
	if (fh->data.offset > fsize)
		return pmon__err(-PMON_ERRNO__PARSE,
				 "%s: perf.data is cut short: its data section starts at byte %llu "
				 "of %llu",
				 p->path, (unsigned long long)fh->data.offset,
				 (unsigned long long)fsize);
	p->data_size = fh->data.size;
	p->left = fh->data.size;
	if (!fh->data.size && fsize > fh->data.offset && !fh->features[0]) {
		/* perf writes the sizes when it ends: a perf killed before that
		 * leaves 0 and its records after the header */
		p->left = fsize - fh->data.offset;
		p->unsized = true;
	} else if (fh->data.size > fsize - fh->data.offset) { /* the tail is missing */
		p->left = fsize - fh->data.offset;
		p->cut = true;
	} else if ((err = read_features(p, fh, fsize))) {
		return err;
	}
	if (lseek(p->fd, (off_t)fh->data.offset, SEEK_SET) < 0)
		return pmon__err(-errno, "%s: %s", p->path, strerror(errno));
	if (!p->info.kernel_build_id_size)
		kernel_mmap_build_id(p, fh->data.offset);
	return 0;
}

/* perf's side-band event (-a, --switch-events...): it never samples, so
 * perf report does not list it, nor does pmon once another event does. */
static bool is_dummy(const struct pmon__perf_reader *p, const struct pattr *e)
{
	return p->nat > 1 && e->a.type == PERF_TYPE_SOFTWARE && e->a.config == PERF_COUNT_SW_DUMMY;
}

static void fill_header(struct pmon__perf_reader *p, struct pmon__rec_header *h)
{
	memset(h, 0, sizeof(*h));
	h->version = 0;
	if (!p->nat)
		return;
	const struct pattr *e = &p->at[0];
	for (size_t i = 1; i < p->nat && is_dummy(p, e); i++)
		e = &p->at[i];
	h->sample_type = e->a.sample_type;
	/* PERF_SAMPLE_READ samples are handed on with their read's growth
	 * as their period (sample_read()), whatever the attr samples. */
	if (e->a.sample_type & PERF_SAMPLE_READ && e->a.read_format & PERF_FORMAT_ID)
		h->sample_type |= PERF_SAMPLE_PERIOD;
	h->regs_user = e->a.sample_regs_user;
	/* pmon unwinds DWARF samples from its 17 registers: perf's x86-64
	 * set (PERF_REGS_MASK) holds them, and hands them on in pmon's order. */
	if (e->a.sample_type & PERF_SAMPLE_REGS_USER &&
	    (e->a.sample_regs_user & PMON_REGS_USER_X86) == PMON_REGS_USER_X86)
		h->regs_user = PMON_REGS_USER_X86;
	h->attr_type = e->a.type;
	h->attr_config = e->a.config;
	h->freq = e->a.freq ? e->a.sample_freq : 0;
	h->period = e->a.freq ? 0 : e->a.sample_period;
	pmon__strlcpy(h->event, e->name, sizeof(h->event));
	pmon__strlcpy(h->command, p->info.cmdline, sizeof(h->command));
	pmon__strlcpy(h->hostname, p->info.hostname, sizeof(h->hostname));
	/* perf writes no system-wide flag: its command line says -a, or -C
	 * LIST (-CLIST, --cpu LIST, --cpu=LIST), which also keeps the list. */
	char words[256];
	const char *list = NULL;
	bool cpu = false;
	pmon__strlcpy(words, p->info.cmdline, sizeof(words));
	for (char *save = NULL, *w = strtok_r(words, " ", &save); w;
	     w = strtok_r(NULL, " ", &save)) {
		if (cpu)
			list = w;
		cpu = false;
		if (!strcmp(w, "--"))
			break;
		if (!strcmp(w, "-a") || !strcmp(w, "--all-cpus"))
			h->flags |= PMON_DATA_SYSTEM_WIDE;
		else if (!strcmp(w, "-C") || !strcmp(w, "--cpu"))
			cpu = true;
		else if (!strncmp(w, "-C", 2) || !strncmp(w, "--cpu=", 6))
			list = w + (w[1] == 'C' ? 2 : 6);
	}
	if (list && *list && strspn(list, "0123456789,-") == strlen(list)) {
		h->flags |= PMON_DATA_SYSTEM_WIDE;
		pmon__strlcpy(h->cpus, list, sizeof(h->cpus));
	}
}

static int handle_header_record(struct pmon__perf_reader *p, const uint8_t *rec, size_t len);

/* Pipe mode: the HEADER_* records before the first of the kernel's. */
static int open_pipe(struct pmon__perf_reader *p)
{
	p->info.pipe = true;
	p->left = UINT64_MAX;
	for (;;) {
		struct perf_event_header h;
		const uint8_t *rec;
		size_t len;
		if (!fill(p, sizeof(h)))
			break;
		memcpy(&h, p->buf + p->bpos, sizeof(h));
		if (h.type < PF_HEADER_ATTR || h.type == PF_FINISHED_ROUND)
			break;
		int got = next_record(p, &rec, &len);
		if (got <= 0)
			break;
		int err = handle_header_record(p, rec, len);
		if (err)
			return err;
		if (h.type == PF_FINISHED_INIT)
			break;
	}
	if (!p->nat)
		return pmon__err(-PMON_ERRNO__PARSE,
				 "%s: perf.data in pipe mode %s: no event's attr (HEADER_ATTR)",
				 p->path, p->eof ? "is cut short" : "names no event");
	return 0;
}

struct pmon__perf_reader *pmon__perf_reader_open(int fd, const char *path,
						 struct pmon__rec_header *h)
{
	struct pmon__perf_reader *p = calloc(1, sizeof(*p));
	struct file_header fh = { 0 };
	struct stat st;
	int err;

	if (!p || !(p->path = strdup(path)) || !(p->buf = malloc(BUF_CAP))) {
		err = -ENOMEM;
		goto fail;
	}
	p->fd = fd;
	fd = -1;
	if (fstat(p->fd, &st)) {
		err = pmon__err(-errno, "%s: %s", path, strerror(errno));
		goto fail;
	}
	/* The first 16 bytes: the magic, then the header's size (16: a pipe). */
	p->left = 16;
	if (!fill(p, 16)) {
		err = pmon__err(-PMON_ERRNO__PARSE,
				"%s: perf.data is cut short: %zu bytes, not even its header", path,
				p->blen);
		goto fail;
	}
	memcpy(&fh, p->buf, 16);
	if ((err = check_magic(path, fh.magic)))
		goto fail;
	if (fh.size == 16) {
		p->bpos = 16;
		p->consumed = 16;
		err = open_pipe(p);
	} else if (!S_ISREG(st.st_mode) || !pmon__read_at(p->fd, &fh, sizeof(fh), 0)) {
		err = pmon__err(
			-PMON_ERRNO__PARSE,
			"%s: perf.data is cut short: its header is %zu bytes, the file %llu", path,
			sizeof(fh), (unsigned long long)st.st_size);
	} else {
		p->bpos = p->blen = 0;
		err = open_file(p, &fh, (uint64_t)st.st_size);
	}
	if (err)
		goto fail;
	find_id_pos(p);
	p->info.nattrs = p->nat;
	fill_header(p, h);
	return p;
fail:
	if (fd >= 0)
		close(fd);
	pmon__perf_reader_free(p);
	errno = -err;
	return NULL;
}

void pmon__perf_reader_free(struct pmon__perf_reader *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nat; i++)
		free(p->at[i].ids);
	free(p->at);
	free(p->idx);
	free(p->lr);
	for (size_t i = 0; i < p->nfiles; i++)
		free(p->files[i]);
	free(p->files);
	for (size_t i = 0; i < p->nbid; i++)
		free(p->bid[i].path);
	free(p->bid);
	free(p->info.tracing_data);
	free(p->buf);
	free(p->q);
	free(p->arena);
	free(p->arena2);
	free(p->zbuf);
	pmon__zstd_free(p->z);
	if (p->fd >= 0)
		close(p->fd);
	free(p->path);
	free(p);
}

void pmon__perf_reader_in_dir(struct pmon__perf_reader *p)
{
	p->in_dir = true;
}

const struct pmon__rec_stats *pmon__perf_reader_stats(const struct pmon__perf_reader *p)
{
	return &p->stats;
}

const struct pmon__perf_info *pmon__perf_reader_info(const struct pmon__perf_reader *p)
{
	return &p->info;
}

/* ---- the records ----------------------------------------------------------- */

/* Hand on the PMON_RECORD_EVENT of each event not yet handed on,
 * numbered without the side-band ones. */
static int send_events(struct pmon__perf_reader *p)
{
	uint32_t index = 0;

	for (size_t i = 0; i < p->nat; i++) {
		struct pattr *e = &p->at[i];
		if (is_dummy(p, e))
			continue;
		index++;
		if (e->sent || !p->ops)
			continue;
		struct pmon__record r = { .type = PMON_RECORD_EVENT };
		r.event = (struct pmon__rec_event){ .index = index - 1,
						    .period = e->a.freq ? 0 : e->a.sample_period,
						    .freq = e->a.freq ? e->a.sample_freq : 0,
						    .attr_type = e->a.type,
						    .attr_config = e->a.config,
						    .nids = e->nids,
						    .ids = (const uint8_t *)e->ids };
		pmon__strlcpy(r.event.name, e->name, sizeof(r.event.name));
		e->sent = true;
		int err = p->ops->ordered(p->arg, &r);
		if (err)
			return err;
	}
	return 0;
}

/* HEADER_ATTR: { attr (attr.size bytes, 0: VER0); u64 id[]; } */
static int header_attr(struct pmon__perf_reader *p, const uint8_t *rec, size_t len)
{
	const uint8_t *b = rec + 8;
	size_t n = len - 8;

	if (n < ATTR_SIZE_MIN)
		return 0;
	uint32_t asz = pmon__u32_at(b + offsetof(struct perf_event_attr, size));
	if (!asz)
		asz = ATTR_SIZE_MIN;
	if (asz < ATTR_SIZE_MIN || asz > n)
		return 0;
	if (!add_attr(p, b, asz))
		return -ENOMEM;
	for (size_t k = asz; n - k >= 8; k += 8) {
		int err = add_id(p, p->nat - 1, pmon__u64_at(b + k));
		if (err)
			return err;
	}
	find_id_pos(p);
	p->info.nattrs = p->nat;
	return send_events(p);
}

/* EVENT_UPDATE of type NAME (1): { header; u64 type, id; char name[]; },
 * the name of the event with that id (pipe mode, perf 4.10+), where no
 * description came before the event was handed on. */
static void event_update(struct pmon__perf_reader *p, const uint8_t *rec, size_t len)
{
	if (len <= 24 || pmon__u64_at(rec + 8) != 1)
		return;
	uint64_t id = pmon__u64_at(rec + 16);
	for (size_t i = 0; i < p->nat; i++)
		for (size_t k = 0; k < p->at[i].nids; k++)
			if (p->at[i].ids[k] == id && !p->at[i].sent) {
				pmon__fmt(p->at[i].name, sizeof(p->at[i].name), "%.*s",
					  (int)strnlen((const char *)rec + 24, len - 24),
					  (const char *)rec + 24);
				return;
			}
}

/* perf's records (type 64 and up) that change how the rest is read. */
static int handle_header_record(struct pmon__perf_reader *p, const uint8_t *rec, size_t len)
{
	struct perf_event_header h;

	memcpy(&h, rec, sizeof(h));
	switch (h.type) {
	case PF_HEADER_ATTR:
		return header_attr(p, rec, len);
	case PF_HEADER_TRACING_DATA:
		return pipe_tracing_data(p, rec, len);
	case PF_AUXTRACE: /* { header; u64 size, offset, ref; u32 idx, tid, cpu, res; } + data */
		p->info.aux_records++;
		if (len >= 16) {
			p->info.aux_bytes += pmon__u64_at(rec + 8);
			if (!skip(p, pmon__u64_at(rec + 8)))
				p->cut = true;
		}
		return 0;
	case PF_HEADER_FEATURE: /* { header; u64 feat_id; data } */
		if (len >= 16 && pmon__u64_at(rec + 8) < FEAT_BITS)
			return feature(p, (unsigned)pmon__u64_at(rec + 8), rec + 16, len - 16);
		return 0;
	case PF_HEADER_BUILD_ID: /* one build_id record, as in the feature section */
		return feat_build_ids(p, rec, len);
	/* ID_INDEX ({ u64 nr; { u64 id, idx, cpu, tid; } [nr] }): idx is the
	 * ring buffer's, not the event's; the attrs already give the ids. */
	case PF_EVENT_UPDATE:
		event_update(p, rec, len);
		return 0;
	case PF_ID_INDEX:
	case PF_HEADER_EVENT_TYPE:
	case PF_FINISHED_ROUND:
	case PF_FINISHED_INIT:
	case PF_TIME_CONV:
	case PF_THREAD_MAP:
	case PF_CPU_MAP:
	case PF_STAT_CONFIG:
	case PF_STAT:
	case PF_STAT_ROUND:
		return 0;
	case PF_AUXTRACE_INFO:
	case PF_AUXTRACE_ERROR:
		p->info.aux_records++;
		return 0;
	default:
		p->info.unknown_records++;
		return 0;
	}
}

/* An MMAP2 without a build id: the one HEADER_BUILD_ID gives its file. */
static void add_build_id(const struct pmon__perf_reader *p, struct pmon__rec_mmap *m)
{
	if (m->build_id_size || !p->nbid)
		return;
	for (size_t i = 0; i < p->nbid; i++)
		if (!strcmp(p->bid[i].path, m->filename)) {
			memcpy(m->build_id, p->bid[i].id, 20);
			m->build_id_size = p->bid[i].size;
			return;
		}
}

/* A record that changes what later samples see: handed on in order. */
static int ordered(struct pmon__perf_reader *p, const uint8_t *rec, size_t len, uint32_t type)
{
	struct pmon__record r;
	bool epoch =
		type == PERF_RECORD_MMAP || type == PERF_RECORD_MMAP2 || type == PERF_RECORD_FORK;

	p->epoch += epoch;
	if (pmon__record_decode(rec, len, 0, 0, p->name, &r)) {
		if (!epoch)
			return 0;
		r.type = PMON__RECORD_SHORT;
	} else if (type == PERF_RECORD_MMAP2) {
		add_build_id(p, &r.mmap);
	}
	return p->ops->ordered(p->arg, &r);
}

/* A DWARF sample's registers, perf's set picked down to pmon's 17. */
static void pick_regs(struct pmon__perf_reader *p, const struct pattr *e, struct pmon_sample *s)
{
	uint64_t have = e->a.sample_regs_user;

	if (!s->abi || have == PMON_REGS_USER_X86 ||
	    (have & PMON_REGS_USER_X86) != PMON_REGS_USER_X86)
		return;
	size_t k = 0;
	for (unsigned bit = 0; bit < 64; bit++) {
		if (!(PMON_REGS_USER_X86 >> bit & 1))
			continue;
		unsigned at = (unsigned)__builtin_popcountll(have & ((1ULL << bit) - 1));
		p->regs[k++] = pmon__u64_at(s->regs + 8 * at);
	}
	s->regs = (const uint8_t *)p->regs;
	s->nregs = k;
}

/*
 * `perf record --call-graph lbr`: the user part of the call chain is the
 * LBR call stack (branch_sample_type PERF_SAMPLE_BRANCH_CALL_STACK), each
 * entry a call, most recent first, its `from` the call site in the caller
 * (the SDM's LBR call-stack mode, 17.11; perf's
 * resolve_lbr_callchain_sample()). The chain is rebuilt as a frame-pointer
 * chain would read: the kernel's part as recorded, then PERF_CONTEXT_USER,
 * the sampled ip and each entry's `from`. Samples of other branch modes,
 * or without a user part, keep their chain.
 */
#define LBR_CHAIN_MAX 512

static void lbr_chain(struct pmon__perf_reader *p, const struct pattr *e, struct pmon_sample *s,
		      const struct pmon__sample_ext *x)
{
	if (!(e->a.sample_type & PERF_SAMPLE_BRANCH_STACK) ||
	    !(e->a.branch_sample_type & PERF_SAMPLE_BRANCH_CALL_STACK) || !x->branch_nr ||
	    s->ip >= 0xffff800000000000ULL) /* a kernel sample: its chain says it all */
		return;
	size_t n = 0, k = 0;
	for (; k < s->nr && n < LBR_CHAIN_MAX - 2; k++) { /* the kernel's part */
		uint64_t v = pmon_sample__chain(s, k);
		if (v == PERF_CONTEXT_USER)
			break;
		p->lbr[n++] = v;
	}
	p->lbr[n++] = PERF_CONTEXT_USER;
	p->lbr[n++] = s->ip;
	for (uint64_t i = 0; i < x->branch_nr && n < LBR_CHAIN_MAX; i++)
		p->lbr[n++] = pmon__u64_at(x->branches + 24 * i); /* { from, to, flags } */
	s->chain = (const uint8_t *)p->lbr;
	s->nr = n;
}

/* The slot of (@id, @tid) in the last readings, or NULL (no memory). */
static struct lastread *last_read(struct pmon__perf_reader *p, uint64_t id, uint32_t tid)
{
	if (2 * (p->nlr + 1) > p->caplr) {
		size_t cap = p->caplr ? 2 * p->caplr : 64;
		struct lastread *t = calloc(cap, sizeof(*t));
		if (!t)
			return NULL;
		for (size_t i = 0; i < p->caplr; i++) {
			if (!p->lr[i].used)
				continue;
			size_t h = (size_t)(p->lr[i].id * 0x9e3779b97f4a7c15ULL ^ p->lr[i].tid);
			while (t[h & (cap - 1)].used)
				h++;
			t[h & (cap - 1)] = p->lr[i];
		}
		free(p->lr);
		p->lr = t;
		p->caplr = cap;
	}
	size_t h = (size_t)(id * 0x9e3779b97f4a7c15ULL ^ tid);
	for (;; h++) {
		struct lastread *l = &p->lr[h & (p->caplr - 1)];
		if (!l->used) {
			*l = (struct lastread){ .id = id, .tid = tid, .used = true };
			p->nlr++;
			return l;
		}
		if (l->id == id && l->tid == tid)
			return l;
	}
}

/*
 * A sample of an event read with PERF_SAMPLE_READ (perf record -e
 * '{a,b}:S', --sample-read) is, as perf reads it (util/session.c,
 * evlist__deliver_sample(): deliver_sample_value()), one sample per value
 * of its read_format (each member of a group), of the event with that
 * value's id, its period what the value grew by since that id's last
 * sample (perf 6.12+ keeps it per thread for inherited events:
 * perf_evsel__attr_has_per_thread_sample_period()); a value that did not
 * grow, or whose id no event has, is no sample. struct read_format: {
 * value; [enabled]; [running]; [id]; [lost]; }, or with GROUP { nr;
 * [enabled]; [running]; { value; [id]; [lost]; } [nr]; }.
 */
static int sample_read(struct pmon__perf_reader *p, const struct pattr *e, struct pmon__record *r,
		       const struct pmon__sample_ext *x)
{
	uint64_t rf = e->a.read_format;
	size_t times =
		!!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) + !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
	size_t per = 2 + !!(rf & PMON__FORMAT_LOST);
	bool per_thread = e->a.inherit && e->a.sample_type & PERF_SAMPLE_TID;
	int err = 0;

	for (uint64_t i = 0; i < x->read_nr && !err; i++) {
		const uint8_t *v =
			rf & PERF_FORMAT_GROUP ? x->read + 8 * (1 + times + per * i) : x->read;
		uint64_t id = pmon__u64_at(v + (rf & PERF_FORMAT_GROUP ? 8 : 8 * (1 + times)));
		if (!attr_of_id(p, id))
			continue;
		struct lastread *l = last_read(p, id, per_thread ? r->sample.tid : 0);
		if (!l)
			return -ENOMEM;
		uint64_t value = pmon__u64_at(v);
		r->sample.period = value - l->value;
		l->value = value;
		r->sample.id = id;
		if (r->sample.period)
			err = p->ops->record(p->arg, 0, r, p->epoch);
	}
	return err;
}

static int sample(struct pmon__perf_reader *p, const uint8_t *rec, size_t len)
{
	const struct pattr *e = sample_attr(p, rec, len);
	struct pmon__sample_ext x;
	struct pmon__record r;

	if (!e || pmon__sample_parse(rec, len, &e->fmt, &r.sample, &x)) {
		p->stats.bad_samples++;
		return 0;
	}
	lbr_chain(p, e, &r.sample, &x);
	if (!(e->a.sample_type & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER)) && e->nids)
		r.sample.id = e->ids[0]; /* one event, no id in its samples */
	if (!(e->a.sample_type & PERF_SAMPLE_PERIOD))
		r.sample.period = e->a.freq ? 1 : e->a.sample_period;
	if (e->a.sample_type & PERF_SAMPLE_REGS_USER)
		pick_regs(p, e, &r.sample);
	r.type = PERF_RECORD_SAMPLE;
	r.misc = pmon__u32_at(rec + 4) & 0xffff;
	r.size = (uint16_t)len;
	r.raw = rec;
	p->stats.samples++;
	if (e->a.sample_type & PERF_SAMPLE_READ && e->a.read_format & PERF_FORMAT_ID)
		return sample_read(p, e, &r, &x);
	return p->ops->record(p->arg, 0, &r, p->epoch);
}

/* The kernel's records (below 64). */
static int kernel_record(struct pmon__perf_reader *p, const uint8_t *rec, size_t len, uint32_t type)
{
	struct pmon__record r;

	switch (type) {
	case PERF_RECORD_SAMPLE:
		return sample(p, rec, len);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return ordered(p, rec, len, type);
	case PERF_RECORD_LOST:
		if (pmon__record_decode(rec, len, 0, 0, p->name, &r))
			return 0;
		p->lost_records = pmon__sat_add(p->lost_records, r.lost.lost);
		return p->ops->record(p->arg, 0, &r, p->epoch);
	case PERF_RECORD_LOST_SAMPLES: /* { header; u64 lost; sample_id } */
		if (len >= 16) {
			p->info.lost_samples =
				pmon__sat_add(p->info.lost_samples, pmon__u64_at(rec + 8));
			p->had_lost_samples = true;
		}
		return 0;
	case PERF_RECORD_THROTTLE:
		p->info.throttles++;
		return 0;
	case PERF_RECORD_UNTHROTTLE:
		p->info.unthrottles++;
		return 0;
	case PERF_RECORD_AUX:
	case PERF_RECORD_ITRACE_START:
	case PERF_RECORD_AUX_OUTPUT_HW_ID:
		p->info.aux_records++;
		return 0;
	case PERF_RECORD_READ:
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
	case PERF_RECORD_NAMESPACES:
	case PERF_RECORD_KSYMBOL:
	case PERF_RECORD_BPF_EVENT:
	case PERF_RECORD_CGROUP:
	case PERF_RECORD_TEXT_POKE:
		r = (struct pmon__record){ .type = type, .size = (uint16_t)len, .raw = rec };
		return p->ops->record(p->arg, 0, &r, p->epoch);
	default:
		p->info.unknown_records++;
		return 0;
	}
}

/* The one-line account of what the read passed by. */
static void note_skipped(struct pmon__perf_reader *p)
{
	struct pmon__rec_stats *st = &p->stats;
	const struct pmon__perf_info *f = &p->info;
	char parts[4][96];
	size_t n = 0;

	if (p->unsized)
		pmon__fmt(parts[n++], sizeof(parts[0]),
			  "perf's header gives its data no size (was perf record killed?): "
			  "read the %llu bytes after it",
			  (unsigned long long)p->consumed);
	if (p->cut)
		pmon__fmt(parts[n++], sizeof(parts[0]),
			  "the data section is cut short after %llu of %llu bytes",
			  (unsigned long long)(p->consumed),
			  (unsigned long long)(p->data_size ? p->data_size : p->consumed));
	if (f->aux_records)
		pmon__fmt(parts[n++], sizeof(parts[0]),
			  "skipped %llu AUX/itrace records (%llu bytes of hardware trace)",
			  (unsigned long long)f->aux_records, (unsigned long long)f->aux_bytes);
	if (f->compressed_bad)
		pmon__fmt(parts[n++], sizeof(parts[0]), "skipped %llu compressed records (%s)",
			  (unsigned long long)f->compressed_bad,
			  p->z_missing ? "perf record -z: no libzstd.so.1 here to read them"
				       : "they do not decompress");
	if (f->unknown_records)
		pmon__fmt(parts[n++], sizeof(parts[0]), "skipped %llu records of unknown type",
			  (unsigned long long)f->unknown_records);
	st->truncated = p->cut || p->unsized || f->compressed_bad;
	st->warning[0] = 0;
	for (size_t i = 0, used = 0; i < n; i++) {
		int w = snprintf(st->warning + used, sizeof(st->warning) - used, "%s%s",
				 i ? "; " : "", parts[i]);
		if (w < 0 || (size_t)w >= sizeof(st->warning) - used)
			break;
		used += (size_t)w;
	}
}

/* ---- time order ------------------------------------------------------------ */

#define TRAILER_BITS                                                                               \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |             \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

/* Every event stamps every record with its time (sample_id_all, TIME). */
static bool can_order(const struct pmon__perf_reader *p)
{
	for (size_t i = 0; i < p->nat; i++)
		if (!p->at[i].a.sample_id_all || !(p->at[i].a.sample_type & PERF_SAMPLE_TIME))
			return false;
	return p->nat > 0;
}

/*
 * A kernel record's time: a sample's TIME (after IDENTIFIER, IP, TID), or
 * the sample_id_all trailer's of any other record ({ TID, TIME, ID,
 * STREAM_ID, CPU, IDENTIFIER } at its end, as its event's sample_type has
 * them: the last u64 is the event's id where every event writes
 * IDENTIFIER). False when it has none.
 */
static bool record_time(struct pmon__perf_reader *p, const uint8_t *rec, size_t len, uint32_t type,
			uint64_t *t)
{
	const struct pattr *e = &p->at[0];
	uint64_t st;

	if (type == PERF_RECORD_SAMPLE) {
		e = sample_attr(p, rec, len);
		st = e->a.sample_type;
		size_t at = 8 *
			(1 +
			 (size_t)__builtin_popcountll(
				 st & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID)));
		if (len < at + 8)
			return false;
		*t = pmon__u64_at(rec + at);
		return true;
	}
	if (p->all_identifier && p->nidx && len >= 16) {
		const struct pattr *m = attr_of_id(p, pmon__u64_at(rec + len - 8));
		if (m)
			e = m;
	}
	st = e->a.sample_type;
	size_t n = 8 * (size_t)__builtin_popcountll(st & TRAILER_BITS);
	if (len < 8 + n)
		return false;
	*t = pmon__u64_at(rec + len - n + 8 * !!(st & PERF_SAMPLE_TID));
	return true;
}

static int cmp_qrec(const void *a, const void *b)
{
	const struct qrec *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Sort the queue by (time, seq): a natural merge sort, since it holds
 * one time-sorted run per CPU ring (and the sorted rest of the round
 * before), so its cost is n log(runs), not n log n.
 */
static int sort_queue(struct pmon__perf_reader *p)
{
	size_t n = p->nq;
	bool sorted = true;

	for (size_t i = 1; i < n && sorted; i++)
		sorted = cmp_qrec(&p->q[i - 1], &p->q[i]) <= 0;
	if (sorted)
		return 0;
	struct qrec *tmp = malloc(n * sizeof(*tmp)), *src = p->q, *dst = tmp;
	if (!tmp)
		return -ENOMEM;
	for (;;) {
		size_t runs = 0;
		for (size_t i = 0; i < n; runs++) {
			size_t m = i + 1;
			while (m < n && cmp_qrec(&src[m - 1], &src[m]) <= 0)
				m++;
			size_t e = m < n ? m + 1 : n;
			while (e < n && cmp_qrec(&src[e - 1], &src[e]) <= 0)
				e++;
			size_t x = i, y = m, o = i;
			while (x < m && y < e)
				dst[o++] = cmp_qrec(&src[y], &src[x]) < 0 ? src[y++] : src[x++];
			while (x < m)
				dst[o++] = src[x++];
			while (y < e)
				dst[o++] = src[y++];
			i = e;
		}
		struct qrec *t = src;
		src = dst;
		dst = t;
		if (runs <= 1)
			break;
	}
	if (src != p->q)
		memcpy(p->q, src, n * sizeof(*src));
	free(tmp);
	return 0;
}

/* Hand on the queued records up to time @limit, in time order; the rest
 * move to the front of the other arena, which becomes this one. */
static int flush_upto(struct pmon__perf_reader *p, uint64_t limit)
{
	size_t k = 0, rest = 0;
	int err;

	if (!p->nq)
		return 0;
	if ((err = sort_queue(p)))
		return err;
	while (k < p->nq && p->q[k].time <= limit && !err) {
		const uint8_t *rec = p->arena + p->q[k].off;
		err = kernel_record(p, rec, p->q[k].len, pmon__u32_at(rec));
		k++;
	}
	if (err)
		return err;
	for (size_t i = k; i < p->nq; i++)
		rest += p->q[i].len;
	if (rest && pmon__grow((void **)&p->arena2, &p->caparena2, rest, 1))
		return -ENOMEM;
	size_t at = 0;
	for (size_t i = k; i < p->nq; i++) {
		memcpy(p->arena2 + at, p->arena + p->q[i].off, p->q[i].len);
		p->q[i - k] = p->q[i];
		p->q[i - k].off = at;
		at += p->q[i].len;
	}
	p->nq -= k;
	uint8_t *t = p->arena;
	size_t c = p->caparena;
	p->arena = p->arena2, p->caparena = p->caparena2;
	p->arena2 = t, p->caparena2 = c;
	p->narena = rest;
	return 0;
}

/* Queue a kernel record by its time (one with none: at the latest seen). */
static int enqueue(struct pmon__perf_reader *p, const uint8_t *rec, size_t len, uint32_t type)
{
	uint64_t t;

	if (!record_time(p, rec, len, type, &t))
		t = p->max_time;
	if (t > p->max_time)
		p->max_time = t;
	if (PMON_GROW(&p->q, &p->capq, p->nq + 1) ||
	    pmon__grow((void **)&p->arena, &p->caparena, p->narena + len, 1))
		return -ENOMEM;
	memcpy(p->arena + p->narena, rec, len);
	p->q[p->nq++] = (struct qrec){ t, p->seq++, p->narena, (uint32_t)len };
	p->narena += len;
	/* A file without rounds (or with huge ones) is not kept whole. */
	if (p->narena > (64u << 20))
		return flush_upto(p, UINT64_MAX);
	return 0;
}

static int compressed(struct pmon__perf_reader *p, const uint8_t *rec, size_t len);

/* One record of the stream: queued (in time order), or handled now. */
static int dispatch(struct pmon__perf_reader *p, const uint8_t *rec, size_t len)
{
	uint32_t type = pmon__u32_at(rec);

	if (type < PF_HEADER_ATTR)
		return p->ordering ? enqueue(p, rec, len, type) : kernel_record(p, rec, len, type);
	if (type == PF_COMPRESSED || type == PF_COMPRESSED2)
		return compressed(p, rec, len);
	if (type == PF_FINISHED_ROUND && p->ordering) {
		/* perf's ordered_events__flush(OE_FLUSH__ROUND): what came
		 * before the time the previous round ended at is all there. */
		int err = flush_upto(p, p->next_flush);
		p->next_flush = p->max_time;
		return err;
	}
	int err = handle_header_record(p, rec, len);
	if (!err && type == PF_HEADER_ATTR && p->ordering && !can_order(p)) {
		err = flush_upto(p, UINT64_MAX);
		p->ordering = false;
	}
	return err;
}

/* The records a compressed one's bytes completed (a record can span two
 * compressed ones: the rest is kept for the next). Records that carry a
 * payload after them in the stream, or compressed ones, are not perf's
 * inside: counted as unknown. */
static int decompressed_records(struct pmon__perf_reader *p)
{
	size_t off = 0;
	int err = 0;

	while (!err && p->zlen - off >= sizeof(struct perf_event_header)) {
		struct perf_event_header h;
		memcpy(&h, p->zbuf + off, sizeof(h));
		if (h.size < sizeof(h)) { /* cannot be framed: the rest is lost */
			p->info.compressed_bad++;
			off = p->zlen;
			break;
		}
		if (h.size > p->zlen - off)
			break;
		if (h.type == PF_COMPRESSED || h.type == PF_COMPRESSED2 || h.type == PF_AUXTRACE ||
		    h.type == PF_HEADER_TRACING_DATA)
			p->info.unknown_records++;
		else
			err = dispatch(p, p->zbuf + off, h.size);
		off += h.size;
	}
	memmove(p->zbuf, p->zbuf + off, p->zlen - off);
	p->zlen -= off;
	return err;
}

/*
 * PERF_RECORD_COMPRESSED: { header; zstd data[size - 8]; } (perf 5.2+),
 * COMPRESSED2: { header; u64 data_size; data; padding } (perf 6.15+):
 * one zstd stream across them, decompressed into records.
 */
static int compressed(struct pmon__perf_reader *p, const uint8_t *rec, size_t len)
{
	const uint8_t *data = rec + 8;
	size_t n = len - 8;

	if (pmon__u32_at(rec) == PF_COMPRESSED2) {
		if (len < 16 || pmon__u64_at(rec + 8) > len - 16) {
			p->info.compressed_bad++;
			return 0;
		}
		data = rec + 16;
		n = (size_t)pmon__u64_at(rec + 8);
	}
	if (!p->z_tried) {
		p->z_tried = true;
		p->z = pmon__zstd_new();
		p->z_missing = !p->z && errno == ENOENT;
	}
	if (!p->z) {
		p->info.compressed_bad++;
		return 0;
	}
	int err = pmon__zstd_inflate(p->z, data, n, &p->zbuf, &p->zlen, &p->zcap, 64u << 20);
	if (err == -ENOMEM)
		return err;
	if (err) { /* damaged: what it held is lost, and what it left half */
		p->info.compressed_bad++;
		p->zlen = 0;
		return 0;
	}
	p->info.compressed_records++;
	return decompressed_records(p);
}

int pmon__perf_reader_run(struct pmon__perf_reader *p, const struct pmon__rec_ops *ops, void *arg)
{
	const uint8_t *rec;
	size_t len;
	int got, err;

	p->ops = ops;
	p->arg = arg;
	p->epoch = 0;
	memset(&p->stats, 0, sizeof(p->stats));
	p->lost_records = p->info.lost_samples = 0;
	p->had_lost_samples = false;
	p->ordering = can_order(p);
	if ((err = send_events(p)))
		return err;
	if (p->in_dir && p->dir_version >= 1 && !p->nfiles && (err = list_data_files(p)))
		return err;
	do {
		while ((got = next_record(p, &rec, &len)) > 0)
			if ((err = dispatch(p, rec, len)))
				return err;
		if (got < 0 || (p->left && p->left != UINT64_MAX && p->eof))
			p->cut = true;
	} while (next_data_file(p));
	if ((err = flush_upto(p, UINT64_MAX)))
		return err;
	p->stats.good_bytes = p->consumed;
	/* perf record 6.0+ ends a file with one LOST_SAMPLES per event and
	 * CPU or thread, from the kernel's count (PERF_FORMAT_LOST): every
	 * sample the LOST records counted, and those lost elsewhere. perf
	 * report's "Total Lost Samples" is their sum alone (session.c:
	 * total_lost_samples); a file without them has the LOST records'. */
	p->stats.lost = p->had_lost_samples ? p->info.lost_samples : p->lost_records;
	note_skipped(p);
	return 0;
}
