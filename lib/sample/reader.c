// SPDX-License-Identifier: MIT
/*
 * The recording reader (sample/reader.h), beside its writer (datafile.c):
 * check the header, find the chunks (a header that is not one starts a
 * damaged stretch, and the walk resumes at the next whole chunk that
 * passes its CRC), read them in parallel (CRC-checked, inflated), frame
 * their records (8-byte multiples) and hand each on decoded. Records that
 * change what later samples see are handed on in file order; the rest are
 * tagged with their epoch, so that readers on several threads agree on
 * which maps a sample saw. Ends with the one-line account of the damage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "internal.h"
#include "sample/datafile.h"
#include "sample/reader.h"

struct chunk {
	uint64_t off; /* of its header */
	uint32_t len, crc; /* stored payload */
	char kind; /* 'K' raw, 'Z' deflated, 'S' kernel symbols */
	bool bad; /* failed its CRC or does not inflate */
	uint32_t misaligned; /* a record whose size is not a multiple of 8, at byte - 1 */
	uint16_t misaligned_size;
	uint8_t *keep; /* its ordered records, for the ordered pass */
	size_t nkeep, capkeep;
	uint64_t seq; /* its PMON_RECORD_CHUNK number + 1; 0: none read */
};

/* A damaged stretch: bytes between two chunks (or before the end) that
 * hold no valid chunk header. */
struct stretch {
	size_t next; /* the index of the chunk after it (n: none) */
	uint64_t bytes;
	bool samples; /* not a torn kernel-symbol chunk */
};

struct worker {
	struct pmon__rec_reader *rd;
	unsigned index;
	pthread_t th;
	uint8_t *buf, *zbuf;
	z_stream zs; /* raw inflate, reset per chunk */
	bool zs_ready;
	uint64_t lost, samples, bad_samples, good_bytes;
	char name[4096]; /* an MMAP record's file name */
	int err;
};

struct pmon__rec_reader {
	struct pmon__perf_reader *perf; /* perf.data: it reads, this forwards */
	char *path;
	int fd;
	uint64_t fsize, header_size;
	struct pmon__rec_header h;
	struct chunk *c;
	size_t n, cap;
	struct stretch *st;
	size_t nst, capst;
	bool tail_cut;
	/* CRC bytes resync() may still spend on candidate chunks: it earns
	 * RESYNC_CRC_PER_BYTE per byte it passes (RESYNC_CRC_FIRST at the
	 * start), so fake headers every 16 bytes, each claiming 512 KiB, cost
	 * a bounded multiple of the file's size rather than 32,768 times it. */
	uint64_t crc_budget;
	/* a run */
	const struct pmon__rec_ops *ops;
	void *arg;
	bool inline_ordered; /* one thread: ordered records handed on as met */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t next, published; /* chunks claimed; chunks whose first epoch is known */
	uint32_t epoch_next; /* the first epoch of chunk `published` */
	struct pmon__rec_stats stats;
};

/* ---- decoding ------------------------------------------------------------ */

static bool is_epoch(uint32_t type)
{
	return type == PERF_RECORD_MMAP || type == PERF_RECORD_MMAP2 || type == PERF_RECORD_FORK;
}

static bool is_ordered(uint32_t type)
{
	return is_epoch(type) || type == PERF_RECORD_COMM || type == PERF_RECORD_EXIT ||
		type == PMON_RECORD_EVENT || type == PMON_RECORD_TPFMT;
}

/* MMAP (file name at 40) and MMAP2 (at 72; Linux 5.12+: the build id
 * where device and inode were). */
static int decode_mmap(const uint8_t *p, size_t len, uint16_t misc, bool v2, char *name,
		       struct pmon__rec_mmap *m)
{
	size_t at = v2 ? 72 : 40;

	if (len <= at)
		return -EINVAL;
	m->pid = pmon__u32_at(p + 8);
	m->tid = pmon__u32_at(p + 12);
	m->start = pmon__u64_at(p + 16);
	m->len = pmon__u64_at(p + 24);
	m->pgoff = pmon__u64_at(p + 32);
	m->build_id_size = 0;
	if (v2 && misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		m->build_id_size = p[40] <= 20 ? p[40] : 20;
		memcpy(m->build_id, p + 44, 20);
	}
	pmon__fmt(name, 4096, "%.*s", (int)(len - at), (const char *)p + at);
	m->filename = name;
	return 0;
}

static int decode_event(const uint8_t *p, size_t len, struct pmon__rec_event *e)
{
	struct pmon_record_event re;

	if (len < sizeof(re))
		return -EINVAL;
	memcpy(&re, p, sizeof(re));
	e->index = re.index;
	e->period = re.period;
	e->freq = re.freq;
	e->attr_type = re.attr_type;
	e->attr_config = re.attr_config;
	pmon__fmt(e->name, sizeof(e->name), "%.*s", (int)sizeof(re.name), re.name);
	e->nids = (len - sizeof(re)) / 8;
	if (re.nids < e->nids)
		e->nids = re.nids;
	e->ids = p + sizeof(re);
	return 0;
}

/* pmon__record_decode(), inlined into the readers' loop (the exported
 * name is called through the PLT, and this is once per record). */
static inline int decode(const uint8_t *p, size_t len, uint64_t sample_type, uint64_t regs_user,
			 char *name, struct pmon__record *r)
{
	struct perf_event_header h;

	memcpy(&h, p, sizeof(h));
	r->type = h.type;
	r->misc = h.misc;
	r->size = h.size;
	r->raw = p;
	switch (h.type) {
	case PERF_RECORD_SAMPLE:
		return pmon_sample__parse(p, len, sample_type, regs_user, &r->sample) ? -EINVAL : 0;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return decode_mmap(p, len, h.misc, h.type == PERF_RECORD_MMAP2, name, &r->mmap);
	case PERF_RECORD_COMM:
		if (len <= 16)
			return -EINVAL;
		r->comm.pid = pmon__u32_at(p + 8);
		r->comm.tid = pmon__u32_at(p + 12);
		r->comm.exec = h.misc & PERF_RECORD_MISC_COMM_EXEC;
		pmon__fmt(name, 4096, "%.*s", (int)(len - 16), (const char *)p + 16);
		r->comm.comm = name;
		return 0;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (len < 24)
			return -EINVAL;
		r->task.pid = pmon__u32_at(p + 8);
		r->task.ppid = pmon__u32_at(p + 12);
		r->task.tid = pmon__u32_at(p + 16);
		r->task.ptid = pmon__u32_at(p + 20);
		r->task.time = len >= 32 ? pmon__u64_at(p + 24) : 0;
		return 0;
	case PERF_RECORD_LOST:
		if (len < 24)
			return -EINVAL;
		r->lost.id = pmon__u64_at(p + 8);
		r->lost.lost = pmon__u64_at(p + 16);
		return 0;
	case PMON_RECORD_EVENT:
		return decode_event(p, len, &r->event);
	case PMON_RECORD_TPFMT: { /* { header; u32 index, sys_len; sys; format; NUL } */
		if (len < sizeof(struct pmon_record_tpfmt))
			return -EINVAL;
		uint32_t sys = pmon__u32_at(p + 12);
		size_t at = sizeof(struct pmon_record_tpfmt);
		if (sys > len - at)
			return -EINVAL;
		r->tpfmt.index = pmon__u32_at(p + 8);
		r->tpfmt.sys = (const char *)p + at;
		r->tpfmt.sys_len = sys;
		r->tpfmt.format = (const char *)p + at + sys;
		r->tpfmt.len = strnlen(r->tpfmt.format, len - at - sys);
		return 0;
	}
	default:
		return 0;
	}
}

int pmon__record_decode(const uint8_t *p, size_t len, uint64_t sample_type, uint64_t regs_user,
			char *name, struct pmon__record *r)
{
	return decode(p, len, sample_type, regs_user, name, r);
}

/* ---- the chunks: found and checked --------------------------------------- */

static char chunk_kind(const char m[4], unsigned version)
{
	if (!memcmp(m, PMON_CHUNK_MAGIC, 4))
		return 'K';
	if (version >= 2 && !memcmp(m, PMON_CHUNKZ_MAGIC, 4))
		return 'Z';
	if (version >= 2 && !memcmp(m, PMON_CHUNKS_MAGIC, 4))
		return 'S';
	return 0;
}

/* A chunk header at @off that fits in the file, or 0. */
static char header_at(const struct pmon__rec_reader *s, uint64_t off, struct pmon_data_chunk *h)
{
	uint64_t fsize = s->fsize;
	char k;

	/* The writer never writes an empty chunk: a length of 0 (whose CRC
	 * over no bytes is 0) is no header, however it begins. */
	if (fsize - off < sizeof(*h) || !pmon__read_at(s->fd, h, sizeof(*h), off) ||
	    !(k = chunk_kind(h->magic, s->h.version)) || !h->len || h->len > PMON_CHUNK_RAW_MAX ||
	    h->len > fsize - off - sizeof(*h))
		return 0;
	return k;
}

static bool crc_ok(const struct pmon__rec_reader *s, uint64_t off, const struct pmon_data_chunk *h,
		   uint8_t *buf)
{
	return pmon__read_at(s->fd, buf, h->len, off + sizeof(*h)) &&
		crc32(0L, buf, h->len) == h->crc;
}

#define RESYNC_CRC_PER_BYTE 16u
#define RESYNC_CRC_FIRST (4u << 20)

/* The next offset after @from holding a whole chunk that passes its CRC, or
 * the end. A candidate the budget cannot pay for is passed over unchecked:
 * what it held is counted in the damaged stretch. */
static uint64_t resync(struct pmon__rec_reader *s, uint64_t from, uint8_t *buf)
{
	static const size_t block = 64 * 1024;
	uint8_t win[64 * 1024 + 3];
	uint64_t credited = from;

	for (uint64_t at = from; at < s->fsize; at += block) {
		size_t n = s->fsize - at < sizeof(win) ? (size_t)(s->fsize - at) : sizeof(win);
		if (!pmon__read_at(s->fd, win, n, at))
			return s->fsize;
		for (size_t i = 0; i + 3 < n && i < block; i++) {
			struct pmon_data_chunk h;
			if (win[i] != 'C' || memcmp(win + i, "CHN", 3) || !header_at(s, at + i, &h))
				continue;
			s->crc_budget += RESYNC_CRC_PER_BYTE * (at + i - credited);
			credited = at + i;
			if (h.len > s->crc_budget)
				continue;
			s->crc_budget -= h.len;
			if (crc_ok(s, at + i, &h, buf))
				return at + i;
		}
	}
	return s->fsize;
}

/* Note the damaged stretch [@pos, @to). */
static int add_stretch(struct pmon__rec_reader *s, uint64_t pos, uint64_t to)
{
	struct pmon_data_chunk h;

	if (PMON_GROW(&s->st, &s->capst, s->nst + 1))
		return -ENOMEM;
	/* A torn kernel-symbol chunk (the last of a file) held no samples. */
	s->st[s->nst++] = (struct stretch){
		.next = s->n,
		.bytes = to - pos,
		.samples =
			!(s->fsize - pos >= sizeof(h) && pmon__read_at(s->fd, &h, sizeof(h), pos) &&
			  chunk_kind(h.magic, s->h.version) == 'S'),
	};
	s->tail_cut = to == s->fsize;
	return 0;
}

/*
 * Walk the chunk headers after the file header. A header that is not one,
 * or whose length does not lead to the next header (and whose payload
 * fails its CRC), starts a damaged stretch: the walk resumes at the next
 * offset holding a whole chunk that passes its CRC, so one torn chunk
 * does not hide the rest. The payloads' CRCs are checked by the readers.
 */
static int find_chunks(struct pmon__rec_reader *s, uint64_t pos, uint8_t *buf)
{
	while (pos < s->fsize) {
		struct pmon_data_chunk h, h2;
		char k = header_at(s, pos, &h);
		if (k) {
			uint64_t next = pos + sizeof(h) + h.len;
			if (next == s->fsize || header_at(s, next, &h2) ||
			    crc_ok(s, pos, &h, buf)) {
				if (PMON_GROW(&s->c, &s->cap, s->n + 1))
					return -ENOMEM;
				s->c[s->n++] = (struct chunk){
					.off = pos, .len = h.len, .crc = h.crc, .kind = k
				};
				pos = next;
				continue;
			}
		}
		uint64_t to = resync(s, pos + 1, buf);
		int err = add_stretch(s, pos, to);
		if (err)
			return err;
		pos = to;
	}
	return 0;
}

/* The header at offset 0: magic, version, and the extension version 2 added. */
static int read_header(struct pmon__rec_reader *s)
{
	struct pmon_data_disk_header dh;
	struct pmon_data_disk_header_ext ext = { 0 };
	const char *path = s->path;

	if (!pmon__read_at(s->fd, &dh, sizeof(dh), 0) || memcmp(dh.magic, PMON_DATA_MAGIC, 8))
		return pmon__err(-PMON_ERRNO__PARSE, "%s: the header is cut short", path);
	if (dh.version < 1 || dh.version > PMON_DATA_VERSION || dh.header_size < sizeof(dh))
		return pmon__err(-PMON_ERRNO__PARSE,
				 "%s: recording format version %u (this pmon reads 1 to %d)", path,
				 dh.version, PMON_DATA_VERSION);
	/* The extension as far as header_size holds it: 8 bytes in version 2's
	 * first files, 85 since issue #27, the whole of it since issue #29. */
	size_t next = dh.header_size - sizeof(dh) < sizeof(ext) ? dh.header_size - sizeof(dh)
								: sizeof(ext);
	if (next && !pmon__read_at(s->fd, &ext, next, sizeof(dh)))
		return pmon__err(-PMON_ERRNO__PARSE, "%s: the header is cut short", path);
	s->header_size = dh.header_size;
	s->h = (struct pmon__rec_header){ .version = dh.version,
					  .sample_type = dh.sample_type,
					  .regs_user = ext.regs_user,
					  .attr_type = dh.attr_type,
					  .attr_config = dh.attr_config,
					  .period = dh.period,
					  .freq = dh.freq,
					  .flags = ext.flags,
					  .captured = ext.captured };
	ext.hostname[sizeof(ext.hostname) - 1] = '\0';
	pmon__strlcpy(s->h.hostname, ext.hostname, sizeof(s->h.hostname));
	/* A list as pmon_idlist__format() writes it, or nothing: the reports
	 * print it unquoted (in SVG too). */
	ext.cpus[sizeof(ext.cpus) - 1] = '\0';
	if (strspn(ext.cpus, "0123456789,-.") == strlen(ext.cpus))
		pmon__strlcpy(s->h.cpus, ext.cpus, sizeof(s->h.cpus));
	pmon__strlcpy(s->h.event, dh.event, sizeof(s->h.event));
	pmon__strlcpy(s->h.command, dh.command, sizeof(s->h.command));
	return 0;
}

/* Is @fd perf's recording (file or pipe mode)? Its magic in either byte
 * order, or version 1's (perfdata.c says which it reads). */
static bool is_perf(int fd, bool stream, uint8_t *m)
{
	static const char *const magic[] = { "PERFILE2", "2ELIFREP", "PERFFILE" };

	if (stream)
		return true; /* standard input: pmon's format needs a file */
	if (!pmon__read_at(fd, m, 8, 0))
		return false;
	for (size_t i = 0; i < PMON_ARRAY_SIZE(magic); i++)
		if (!memcmp(m, magic[i], 8))
			return true;
	return false;
}

/*
 * perf record --threads writes a directory (tools/perf/util/data.c): its
 * header, attrs and features in DIR/data, the records in DIR/data.N
 * beside it; perf report -i DIR reads DIR/data. Return: that path (to be
 * freed) where @path is a directory holding a file `data`, else NULL.
 */
static char *perf_dir_data(const char *path)
{
	struct stat st;
	char *data = NULL;

	if (stat(path, &st) || !S_ISDIR(st.st_mode) || asprintf(&data, "%s/data", path) < 0)
		return NULL;
	if (stat(data, &st) || !S_ISREG(st.st_mode)) {
		free(data);
		return NULL;
	}
	return data;
}

struct pmon__rec_reader *pmon__rec_reader_open(const char *path, struct pmon__rec_header *h)
{
	struct pmon__rec_reader *s = calloc(1, sizeof(*s));
	bool stdin_ = !strcmp(path, "-");
	char *dir_data = stdin_ ? NULL : perf_dir_data(path);
	bool in_dir = dir_data != NULL;
	uint8_t *tmp = NULL, m[8];
	struct stat st;
	int err;

	if (dir_data)
		path = dir_data;
	if (!s || !(s->path = strdup(stdin_ ? "standard input" : path))) {
		free(dir_data);
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	s->fd = stdin_ ? fcntl(0, F_DUPFD_CLOEXEC, 3)
		       : pmon__open_format(path, PMON__FILE_RECORDING_ANY);
	free(dir_data);
	path = s->path;
	if (s->fd < 0) {
		err = stdin_ ? pmon__err(-errno, "standard input: %s", strerror(errno)) : s->fd;
		goto fail;
	}
	if (is_perf(s->fd, stdin_, m)) {
		s->perf = pmon__perf_reader_open(s->fd, s->path, h);
		s->fd = -1; /* the perf reader's now */
		if (!s->perf) {
			err = -errno;
			goto fail;
		}
		if (in_dir)
			pmon__perf_reader_in_dir(s->perf);
		return s;
	}
	if (fstat(s->fd, &st)) {
		err = pmon__err(-errno, "%s: %s", path, strerror(errno));
		goto fail;
	}
	s->fsize = (uint64_t)st.st_size;
	if ((err = read_header(s)))
		goto fail;
	if (!(tmp = malloc(PMON_CHUNK_RAW_MAX))) {
		err = -ENOMEM;
		goto fail;
	}
	s->crc_budget = RESYNC_CRC_FIRST;
	if (s->fsize > s->header_size && (err = find_chunks(s, s->header_size, tmp)))
		goto fail;
	free(tmp);
	*h = s->h;
	return s;
fail:
	free(tmp);
	pmon__rec_reader_free(s);
	errno = -err;
	return NULL;
}

const struct pmon__perf_info *pmon__rec_reader_perf_info(const struct pmon__rec_reader *s)
{
	return s->perf ? pmon__perf_reader_info(s->perf) : NULL;
}

void pmon__rec_reader_free(struct pmon__rec_reader *s)
{
	if (!s)
		return;
	pmon__perf_reader_free(s->perf);
	for (size_t k = 0; k < s->n; k++)
		free(s->c[k].keep);
	free(s->c);
	free(s->st);
	if (s->fd >= 0)
		close(s->fd);
	free(s->path);
	free(s);
}

/* The kernel symbols of the CHNS chunks. */
int pmon__rec_reader_ksyms(struct pmon__rec_reader *s,
			   int (*fn)(void *arg, const struct pmon__record *r), void *arg)
{
	uint8_t *buf = NULL;
	int err = 0;

	for (size_t i = 0; i < s->n && !err; i++) {
		struct chunk *c = &s->c[i];
		if (c->kind != 'S')
			continue;
		if (!buf && !(buf = malloc(PMON_CHUNK_RAW_MAX)))
			return -ENOMEM;
		if (!pmon__read_at(s->fd, buf, c->len, c->off + sizeof(struct pmon_data_chunk)) ||
		    crc32(0L, buf, c->len) != c->crc) {
			c->bad = true; /* the readers pass these by */
			continue;
		}
		for (size_t off = 0; !err && c->len - off > sizeof(struct pmon_record_ksym);) {
			struct pmon_record_ksym k;
			memcpy(&k, buf + off, sizeof(k));
			if (k.size <= sizeof(k) || k.size > c->len - off)
				break;
			if (k.type == PMON_RECORD_KSYM && k.start < k.end) {
				char *name = strndup((const char *)buf + off + sizeof(k),
						     k.size - sizeof(k));
				struct pmon__record r = { .type = k.type,
							  .misc = k.misc,
							  .size = k.size,
							  .raw = buf + off,
							  .ksym = { k.start, k.end, name } };
				err = name ? fn(arg, &r) : -ENOMEM;
				free(name);
			} else if (k.type == PMON_RECORD_VDSO &&
				   k.size >= sizeof(struct pmon_record_vdso)) {
				struct pmon_record_vdso v;
				memcpy(&v, buf + off, sizeof(v));
				if (v.len <= k.size - sizeof(v)) {
					struct pmon__record r = { .type = k.type,
								  .misc = k.misc,
								  .size = k.size,
								  .raw = buf + off };
					r.vdso.image = buf + off + sizeof(v);
					r.vdso.len = (size_t)v.len;
					err = fn(arg, &r);
				}
			}
			off += k.size;
		}
	}
	free(buf);
	return err;
}

unsigned pmon__rec_reader_threads(const struct pmon__rec_reader *s)
{
	const char *env = getenv("PMON_REPORT_THREADS");
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	char *end;

	if (s->perf)
		return 1; /* one stream, read in order */
	if (env && *env) {
		unsigned long v = strtoul(env, &end, 10);
		if (!*end && v >= 1 && v <= 64)
			n = (long)v;
	} else if (n > 8) {
		n = 8;
	}
	if (n < 1)
		n = 1;
	if ((size_t)n > s->n)
		n = s->n ? (long)s->n : 1;
	return (unsigned)n;
}

/* ---- the chunks: read in parallel ---------------------------------------- */

/* The records of chunk @c, CRC-checked and inflated; NULL if damaged. */
static const uint8_t *load(struct worker *w, struct chunk *c, size_t *len)
{
	uint8_t *stored = c->kind == 'Z' ? w->zbuf : w->buf;

	if (!pmon__read_at(w->rd->fd, stored, c->len, c->off + sizeof(struct pmon_data_chunk)) ||
	    crc32(0L, stored, c->len) != c->crc) {
		c->bad = true;
		return NULL;
	}
	*len = c->len;
	if (c->kind == 'Z') {
		/*
		 * The chunk's CRC already vouches for the stored bytes, so the
		 * deflate stream is inflated raw (RFC 1950's 2-byte header
		 * checked and stepped over, its Adler-32 trailer not
		 * recomputed): uncompress() spent a third of a report's time in
		 * adler32 for nothing.
		 */
		const uint8_t *z = w->zbuf;
		if (c->len < 6 || (z[0] & 0x0f) != 8 || (z[0] << 8 | z[1]) % 31 || z[1] & 0x20 ||
		    (!w->zs_ready && inflateInit2(&w->zs, -15) != Z_OK)) {
			c->bad = true;
			return NULL;
		}
		w->zs_ready = true;
		inflateReset(&w->zs);
		w->zs.next_in = (Bytef *)z + 2;
		w->zs.avail_in = c->len - 2;
		w->zs.next_out = w->buf;
		w->zs.avail_out = PMON_CHUNK_RAW_MAX;
		if (inflate(&w->zs, Z_FINISH) != Z_STREAM_END) {
			c->bad = true;
			return NULL;
		}
		*len = PMON_CHUNK_RAW_MAX - w->zs.avail_out;
	}
	return w->buf;
}

/*
 * The length of the well-formed records at the start of @p, and how many
 * of them open an epoch. perf's records are 8-byte multiples (the kernel
 * rounds every record up, perf_event_header__init_id and friends): one that
 * is not would put the next header off alignment, so the chunk's rest is
 * refused and named in the warning.
 */
static size_t walk(struct chunk *c, const uint8_t *p, size_t len, uint32_t *epochs)
{
	size_t off = 0;

	*epochs = 0;
	while (len - off >= sizeof(struct perf_event_header)) {
		struct perf_event_header h;
		memcpy(&h, p + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > len - off)
			break;
		if (h.size % 8) {
			c->misaligned = (uint32_t)off + 1;
			c->misaligned_size = h.size;
			break;
		}
		*epochs += is_epoch(h.type);
		off += h.size;
	}
	return off;
}

static int keep_record(struct chunk *c, const uint8_t *p, size_t len)
{
	if (pmon__grow((void **)&c->keep, &c->capkeep, c->nkeep + len, 1))
		return -ENOMEM;
	memcpy(c->keep + c->nkeep, p, len);
	c->nkeep += len;
	return 0;
}

/* An ordered record: handed on now (one thread), else kept for later. A
 * record too short for its type is still an epoch: handed on with only
 * its type, so that the consumer's epochs stay in step. */
static int ordered(struct worker *w, struct chunk *c, const uint8_t *rec, size_t len)
{
	struct pmon__rec_reader *s = w->rd;
	struct pmon__record r;

	if (!s->inline_ordered)
		return keep_record(c, rec, len);
	if (decode(rec, len, s->h.sample_type, s->h.regs_user, w->name, &r)) {
		if (!is_epoch(r.type))
			return 0;
		r.type = PMON__RECORD_SHORT;
	}
	return s->ops->ordered(s->arg, &r);
}

/* Hand on the records of one chunk, whose first epoch is @epoch. */
static int hand_on(struct worker *w, struct chunk *c, const uint8_t *p, size_t len, uint32_t epoch)
{
	struct pmon__rec_reader *s = w->rd;
	/* In locals: the callback may write any memory, so these would be
	 * loaded again after each call. */
	const uint64_t sample_type = s->h.sample_type, regs_user = s->h.regs_user;
	int (*const record)(void *, unsigned, const struct pmon__record *, uint32_t) =
		s->ops->record;
	void *const arg = s->arg;
	const unsigned index = w->index;
	int err = 0;

	for (size_t off = 0; off < len && !err;) {
		struct perf_event_header h;
		const uint8_t *rec = p + off;
		struct pmon__record r;
		memcpy(&h, rec, sizeof(h));
		off += h.size;
		if (h.type == PERF_RECORD_SAMPLE) { /* most records: first */
			if (pmon_sample__parse(rec, h.size, sample_type, regs_user, &r.sample)) {
				w->bad_samples++;
				continue;
			}
			r.type = h.type, r.misc = h.misc, r.size = h.size, r.raw = rec;
			w->samples++;
		} else if (is_ordered(h.type)) {
			epoch += is_epoch(h.type);
			err = ordered(w, c, rec, h.size);
			continue;
		} else if (h.type == PMON_RECORD_CHUNK ||
			   decode(rec, h.size, sample_type, regs_user, w->name, &r)) {
			continue;
		} else if (h.type == PERF_RECORD_LOST) {
			w->lost = pmon__sat_add(w->lost, r.lost.lost);
		}
		err = record(arg, index, &r, epoch);
	}
	return err;
}

/* Claim chunks in order until none is left. */
static void *work(void *arg)
{
	struct worker *w = arg;
	struct pmon__rec_reader *s = w->rd;

	for (;;) {
		pthread_mutex_lock(&s->mu);
		size_t k = s->next++;
		pthread_mutex_unlock(&s->mu);
		if (k >= s->n)
			break;
		struct chunk *c = &s->c[k];
		const uint8_t *p = NULL;
		size_t len = 0, used = 0;
		uint32_t epochs = 0;
		if (c->kind != 'S' && !w->err && (p = load(w, c, &len))) {
			struct pmon_record_chunk cn;
			if (len >= sizeof(cn)) {
				memcpy(&cn, p, sizeof(cn));
				if (cn.type == PMON_RECORD_CHUNK && cn.size == sizeof(cn))
					c->seq = cn.seq + 1;
			}
			used = walk(c, p, len, &epochs);
			w->good_bytes += c->len;
		}
		/* The epochs of the chunks before this one are known once they
		 * are read: chunks are claimed in order, so this waits at most
		 * for the other readers' current chunks to inflate. */
		pthread_mutex_lock(&s->mu);
		while (s->published != k)
			pthread_cond_wait(&s->cv, &s->mu);
		uint32_t epoch = s->epoch_next;
		s->epoch_next += epochs;
		s->published++;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
		if (p && !w->err)
			w->err = hand_on(w, c, p, used, epoch);
	}
	return NULL;
}

/* What a reader needs only while it reads chunks. */
static void worker_done(struct worker *w)
{
	free(w->buf);
	free(w->zbuf);
	if (w->zs_ready)
		inflateEnd(&w->zs);
	w->buf = w->zbuf = NULL;
	w->zs_ready = false;
}

/* The ordered records the threads kept, in file order. */
static int replay(struct pmon__rec_reader *s, struct worker *w)
{
	int err = 0;

	s->inline_ordered = true;
	for (size_t k = 0; k < s->n && !err; k++) {
		for (size_t off = 0; off < s->c[k].nkeep && !err;) {
			struct perf_event_header h;
			memcpy(&h, s->c[k].keep + off, sizeof(h));
			err = ordered(w, &s->c[k], s->c[k].keep + off, h.size);
			off += h.size;
		}
		free(s->c[k].keep);
		s->c[k].keep = NULL;
		s->c[k].nkeep = s->c[k].capkeep = 0;
	}
	return err;
}

static int run_workers(struct pmon__rec_reader *s, struct worker *w, unsigned nw)
{
	unsigned started = 0;
	int err = 0;

	for (unsigned i = 0; i < nw; i++) {
		w[i].rd = s;
		w[i].index = i;
		w[i].buf = malloc(PMON_CHUNK_RAW_MAX);
		w[i].zbuf = malloc(PMON_CHUNK_RAW_MAX);
		if (!w[i].buf || !w[i].zbuf)
			err = -ENOMEM;
	}
	if (!err && nw == 1) {
		work(&w[0]);
	} else if (!err) {
		for (; started < nw; started++)
			if (pthread_create(&w[started].th, NULL, work, &w[started]))
				break;
		if (!started)
			work(&w[0]); /* no thread to be had: read alone */
		for (unsigned i = 0; i < started; i++)
			pthread_join(w[i].th, NULL);
	}
	for (unsigned i = 0; i < nw; i++) {
		worker_done(&w[i]);
		if (!err)
			err = w[i].err;
		s->stats.lost = pmon__sat_add(s->stats.lost, w[i].lost);
		s->stats.samples += w[i].samples;
		s->stats.bad_samples += w[i].bad_samples, s->stats.good_bytes += w[i].good_bytes;
	}
	return err;
}

static void note_damage(struct pmon__rec_reader *s);

int pmon__rec_reader_run(struct pmon__rec_reader *s, unsigned nthreads,
			 const struct pmon__rec_ops *ops, void *arg)
{
	struct worker *w;
	int err;

	if (s->perf)
		return pmon__perf_reader_run(s->perf, ops, arg);
	if (!nthreads)
		nthreads = 1;
	if (!(w = calloc(nthreads, sizeof(*w))))
		return -ENOMEM;
	s->ops = ops;
	s->arg = arg;
	s->inline_ordered = nthreads == 1;
	s->next = s->published = 0;
	s->epoch_next = 0;
	memset(&s->stats, 0, sizeof(s->stats));
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	err = run_workers(s, w, nthreads);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	if (!err)
		err = replay(s, &w[0]);
	free(w);
	if (err)
		return err;
	note_damage(s);
	if (!s->stats.good_bytes && s->stats.damaged_chunks)
		return pmon__err(
			-PMON_ERRNO__PARSE,
			"%s: every chunk is damaged (%llu bytes after the header): nothing "
			"to report",
			s->path, (unsigned long long)s->stats.damaged_bytes);
	return 0;
}

const struct pmon__rec_stats *pmon__rec_reader_stats(const struct pmon__rec_reader *s)
{
	if (s->perf)
		return pmon__perf_reader_stats(s->perf);
	return &s->stats;
}

/* ---- the account of damage ----------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * How many chunks damaged stretch @k held. Where the good chunks around
 * it carry their numbers (PMON_RECORD_CHUNK), the gap between them, less
 * the damaged chunks whose headers are still there: exact, and 0 for junk
 * inserted between two consecutive chunks. Else (an older recording, a
 * cut tail, several stretches in one gap) its bytes over the median stored
 * size of the good data chunks (a recording's first and last chunks are
 * often short), rounded, at least 1.
 */
static uint64_t stretch_chunks(const struct pmon__rec_reader *s, size_t k, uint64_t median)
{
	const struct stretch *t = &s->st[k];
	size_t hi = t->next, between = 0;
	size_t lo = hi;
	uint64_t est = median ? (t->bytes + median / 2) / median : 1;

	if (!est)
		est = 1;
	while (hi < s->n && !s->c[hi].seq)
		hi++;
	while (lo > 0 && !s->c[lo - 1].seq)
		lo--;
	if (hi == s->n)
		return est;
	for (size_t j = 0; j < s->nst; j++)
		between += s->st[j].next >= lo && s->st[j].next <= hi;
	/* lo - 1: the numbered chunk before (none: the count starts at 0) */
	uint64_t before = lo ? s->c[lo - 1].seq : 0, gap = s->c[hi].seq - before - 1;
	/* A chunk is at least its 16-byte header and a 16-byte number. */
	if (between != 1 || s->c[hi].seq <= before || gap < hi - lo ||
	    (gap - (hi - lo)) * 32 > t->bytes)
		return est;
	return gap - (hi - lo);
}

/* The median stored size of the good data chunks (0: none). */
static uint64_t median_chunk(const struct pmon__rec_reader *s, size_t good)
{
	uint64_t median = 0, *sz = good ? malloc(good * sizeof(*sz)) : NULL;

	if (sz) {
		size_t m = 0;
		for (size_t i = 0; i < s->n; i++)
			if (!s->c[i].bad && s->c[i].kind != 'S')
				sz[m++] = sizeof(struct pmon_data_chunk) + s->c[i].len;
		qsort(sz, m, sizeof(*sz), cmp_u64);
		median = sz[m / 2];
		free(sz);
	}
	return median;
}

/* The warning of a damaged file. */
static void damage_warning(struct pmon__rec_reader *s, uint64_t bad_bytes, uint64_t junk,
			   size_t good, const char *extra)
{
	struct pmon__rec_stats *r = &s->stats;
	char junk_s[96] = "";

	/* Truncated: something is missing. Junk between two chunks numbered in
	 * sequence is said (->warning) but hides no sample. */
	r->truncated = r->damaged_chunks || extra[0];
	if (junk)
		pmon__fmt(junk_s, sizeof(junk_s), "%s%llu bytes that were no chunk",
			  r->damaged_chunks ? " and " : "", (unsigned long long)junk);
	if (r->damaged_chunks)
		pmon__fmt(r->warning, sizeof(r->warning),
			  "skipped %llu damaged chunk%s (%llu bytes, about %llu samples%s)%s: "
			  "reporting the %zu good chunk%s around them%s",
			  (unsigned long long)r->damaged_chunks, r->damaged_chunks > 1 ? "s" : "",
			  (unsigned long long)bad_bytes, (unsigned long long)r->damaged_samples,
			  s->tail_cut ? "; the last is cut short: was the recording killed?" : "",
			  junk_s, good, good == 1 ? "" : "s", extra);
	else if (junk)
		pmon__fmt(r->warning, sizeof(r->warning),
			  "skipped %s between chunks numbered in sequence: no chunk is missing%s",
			  junk_s, extra);
	else
		pmon__fmt(r->warning, sizeof(r->warning), "%s", extra + 2);
}

/* The one-line account of what a damaged file lost. */
static void note_damage(struct pmon__rec_reader *s)
{
	struct pmon__rec_stats *r = &s->stats;
	uint64_t bad = 0, bad_bytes = 0, sample_bytes = 0, junk = 0, lost = 0;
	size_t good = 0;
	char extra[160] = "";

	for (size_t i = 0; i < s->n; i++) {
		if (s->c[i].bad) {
			bad++;
			bad_bytes += sizeof(struct pmon_data_chunk) + s->c[i].len;
			if (s->c[i].kind != 'S')
				sample_bytes += sizeof(struct pmon_data_chunk) + s->c[i].len;
		} else if (s->c[i].kind != 'S') {
			good++;
		}
		if (s->c[i].misaligned && !extra[0])
			pmon__fmt(extra, sizeof(extra),
				  "; chunk %zu: a record of %u bytes (not a multiple of 8) at "
				  "byte %u ends its records",
				  i, s->c[i].misaligned_size, s->c[i].misaligned - 1);
	}
	uint64_t median = median_chunk(s, good);
	for (size_t k = 0; k < s->nst; k++) {
		uint64_t n = stretch_chunks(s, k, median);
		if (!n) { /* junk between two consecutive chunks: nothing lost */
			junk += s->st[k].bytes;
			continue;
		}
		lost += n;
		bad_bytes += s->st[k].bytes;
		if (s->st[k].samples)
			sample_bytes += s->st[k].bytes;
	}
	r->damaged_chunks = bad + lost;
	r->damaged_bytes = bad_bytes + junk;
	/* The samples a byte of the good chunks held, times the bytes lost. */
	r->damaged_samples = r->good_bytes
		? (uint64_t)((double)r->samples * (double)sample_bytes / (double)r->good_bytes +
			     0.5)
		: 0;
	if (r->damaged_chunks || junk || extra[0])
		damage_warning(s, bad_bytes, junk, good, extra);
}
