// SPDX-License-Identifier: MIT
/*
 * The recording file (docs/pmon-data-format.md): a header, then chunks of
 * raw perf records, each with its length and a CRC-32, written at least
 * every second, so a crash loses at most the last chunk and a reader can
 * tell a complete chunk from a torn one. A chunk is stored deflated (zlib,
 * fastest level) when that makes it smaller: call chains repeat a lot.
 */
#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <zlib.h>

#include <pmon/event.h>
#include <pmon/output.h>

#include "internal.h"
#include "util/procmaps.h"
#include "sample/datafile.h"
#include <pmon/sample.h>

#define CHUNK_MAX (256 * 1024)
/* A chunk's numbering record, records up to CHUNK_MAX, and one more record. */
#define CHUNK_BUF (sizeof(struct pmon_record_chunk) + CHUNK_MAX + 65536)

struct pmon_data_writer {
	FILE *f;
	char path[512];
	uint8_t *buf;
	size_t len;
	uint32_t nrec;
	uint64_t seq; /* data chunks written (PMON_RECORD_CHUNK) */
	uint8_t *z; /* the deflated chunk */
	size_t zcap;
	uint64_t sample_type;
	uint64_t *kaddr; /* kernel addresses sampled: a set, 0 is empty */
	size_t nk, capk;
	struct pmon_output *out; /* ->f's owner: keeps FILE.old, puts it back */
	struct bid { /* build ids of the files /proc maps named, read once */
		char *path;
		uint8_t id[20], len;
	} * bids;
	size_t nbids, capbids;
	/* The [vdso] mappings recorded (each process has its own address),
	 * until a sample lands in one: then its image goes in at the end. */
	struct vdso_map {
		uint64_t start, end;
	} * vmaps;
	size_t nvmaps, capvmaps;
	bool vdso_hit;
};

static int write_all(struct pmon_data_writer *w, const void *p, size_t n)
{
	errno = 0;
	if (fwrite(p, 1, n, w->f) != n) {
		int e = errno ? errno : EIO; /* ENOSPC, EDQUOT, EFBIG: say which */
		return pmon__err(-e, "cannot write '%s': %s", w->path, strerror(e));
	}
	return 0;
}

static int writer_open(const char *path, const struct pmon_data_header *h,
		       struct pmon_data_writer **out)
{
	struct pmon_data_writer *w = calloc(1, sizeof(*w));
	struct pmon_data_disk_header dh;

	if (!w || !(w->buf = malloc(CHUNK_BUF)) ||
	    !(w->z = malloc(w->zcap = compressBound(CHUNK_BUF)))) {
		if (w)
			free(w->buf);
		free(w);
		return -ENOMEM;
	}
	if (!pmon__fmt(w->path, sizeof(w->path), "%s", path)) {
		free(w->buf);
		free(w->z);
		free(w);
		return pmon__err(-ENAMETOOLONG, "cannot write '%.64s...': the name is too long",
				 path);
	}
	/* perf's rule (perf-record(1), --output): an existing recording is kept
	 * as FILE.old, so a failed run never destroys a good one; the new one
	 * is created in its place (O_EXCL), written as it is recorded so that
	 * a crash keeps every whole chunk. Only a regular file is renamed, and
	 * nothing is written through another user's link (pmon/output.h); a
	 * device or FIFO is a stream (`-o /dev/stdout | ...`). Recordings hold
	 * kernel addresses and, with --call-graph dwarf, raw stack bytes:
	 * owner-only, as perf creates perf.data (0600). */
	struct pmon_output_opts oo = { .sz = sizeof(oo),
				       .flags = PMON_OUTPUT_KEEP_OLD | PMON_OUTPUT_STREAM };
	w->out = pmon_output__open(path, &oo);
	w->f = pmon_output__file(w->out);
	if (!w->f) {
		int e = -errno;
		free(w->buf);
		free(w->z);
		free(w);
		return e;
	}
	memset(&dh, 0, sizeof(dh));
	memcpy(dh.magic, PMON_DATA_MAGIC, 8);
	dh.version = PMON_DATA_VERSION;
	dh.header_size = sizeof(dh) + sizeof(struct pmon_data_disk_header_ext);
	dh.sample_type = w->sample_type = h->sample_type;
	dh.attr_type = h->attr_type;
	dh.attr_config = h->attr_config;
	dh.period = h->period;
	dh.freq = h->freq;
	pmon__strlcpy(dh.event, h->event, sizeof(dh.event));
	pmon__strlcpy(dh.command, h->command, sizeof(dh.command));
	struct pmon_data_disk_header_ext ext = { .regs_user = h->regs_user,
						 .flags = h->flags,
						 .captured =
							 h->captured ? h->captured : time(NULL) };
	struct utsname un;
	if (h->hostname[0])
		pmon__strlcpy(ext.hostname, h->hostname, sizeof(ext.hostname));
	else if (!uname(&un))
		pmon__strlcpy(ext.hostname, un.nodename, sizeof(ext.hostname));
	pmon__strlcpy(ext.cpus, h->cpus, sizeof(ext.cpus));
	int err = write_all(w, &dh, sizeof(dh));
	if (!err)
		err = write_all(w, &ext, sizeof(ext));
	if (!err && fflush(w->f))
		err = pmon__err(-errno, "cannot write '%s': %s", path, strerror(errno));
	if (err) {
		pmon_output__abandon(w->out); /* FILE.old back in its place */
		free(w->buf);
		free(w->z);
		free(w);
		return err;
	}
	*out = w;
	return 0;
}

struct pmon_data_writer *pmon_data_writer__open(const char *path, const struct pmon_data_header *h)
{
	struct pmon_data_writer *w = NULL;

	int err = writer_open(path, h, &w);

	return pmon__ret_ptr(err, w);
}

/* Write the buffered records as one chunk; deflated where @may_deflate and smaller. */
static int write_chunk(struct pmon_data_writer *w, const char *magic, bool may_deflate)
{
	struct pmon_data_chunk c;
	int err;

	if (!w->len)
		return 0;
	uLongf zlen = (uLongf)w->zcap;
	const uint8_t *payload = w->buf;
	memcpy(c.magic, magic, 4);
	c.len = (uint32_t)w->len;
	if (may_deflate && compress2(w->z, &zlen, w->buf, (uLong)w->len, Z_BEST_SPEED) == Z_OK &&
	    zlen < w->len) {
		memcpy(c.magic, PMON_CHUNKZ_MAGIC, 4);
		c.len = (uint32_t)zlen;
		payload = w->z;
	}
	c.crc = (uint32_t)crc32(0L, payload, (uInt)c.len);
	c.nrec = w->nrec;
	if (memcmp(magic, PMON_CHUNKS_MAGIC, 4))
		w->seq++; /* a data chunk, numbered by its first record */
	err = write_all(w, &c, sizeof(c));
	if (!err)
		err = write_all(w, payload, c.len);
	if (!err && fflush(w->f))
		err = pmon__err(-errno, "cannot write '%s': %s", w->path, strerror(errno));
	w->len = 0;
	w->nrec = 0;
	return err;
}

int pmon_data_writer__flush(struct pmon_data_writer *w)
{
	return write_chunk(w, PMON_CHUNK_MAGIC, true);
}

static int note_kaddr(struct pmon_data_writer *w, uint64_t a)
{
	if (a < 0xffff800000000000ULL || a >= (uint64_t)-4095) /* user, or a context marker */
		return 0;
	if (w->nk * 2 >= w->capk) {
		size_t cap = w->capk ? w->capk * 2 : 4096;
		uint64_t *n = calloc(cap, sizeof(*n));
		if (!n)
			return -ENOMEM;
		for (size_t i = 0; i < w->capk; i++)
			if (w->kaddr[i]) {
				size_t j = (w->kaddr[i] * 0x9e3779b97f4a7c15ULL >> 20) & (cap - 1);
				while (n[j])
					j = (j + 1) & (cap - 1);
				n[j] = w->kaddr[i];
			}
		free(w->kaddr);
		w->kaddr = n;
		w->capk = cap;
	}
	size_t j = (a * 0x9e3779b97f4a7c15ULL >> 20) & (w->capk - 1);
	while (w->kaddr[j] && w->kaddr[j] != a)
		j = (j + 1) & (w->capk - 1);
	if (!w->kaddr[j]) {
		w->kaddr[j] = a;
		w->nk++;
	}
	return 0;
}

/* The kernel addresses of a SAMPLE record (its ip and call chain). */
static int note_sample(struct pmon_data_writer *w, const uint8_t *rec, size_t len)
{
	uint64_t st = w->sample_type, v, nr;
	size_t at = 8;
	int err = 0;

	if (st & PERF_SAMPLE_READ)
		return 0; /* a layout this writer does not produce */
	at += st & PERF_SAMPLE_IDENTIFIER ? 8 : 0;
	if (st & PERF_SAMPLE_IP && at + 8 <= len) {
		memcpy(&v, rec + at, 8);
		err = note_kaddr(w, v);
		/* vDSO code calls nothing: where it runs, it is the sample's ip */
		for (size_t i = 0; !w->vdso_hit && i < w->nvmaps; i++)
			w->vdso_hit = v >= w->vmaps[i].start && v < w->vmaps[i].end;
		at += 8;
	}
	at += 8 *
		(!!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ADDR) +
		 !!(st & PERF_SAMPLE_ID) + !!(st & PERF_SAMPLE_STREAM_ID) +
		 !!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_PERIOD));
	if (!err && st & PERF_SAMPLE_CALLCHAIN && at + 8 <= len) {
		memcpy(&nr, rec + at, 8);
		at += 8;
		for (uint64_t i = 0; !err && i < nr && at + 8 <= len; i++, at += 8) {
			memcpy(&v, rec + at, 8);
			err = note_kaddr(w, v);
		}
	}
	return err;
}

/*
 * At the end: the kallsyms symbols of every kernel address recorded, as
 * PMON_RECORD_KSYM records in CHNS chunks. Without readable kallsyms
 * (kptr_restrict) there is nothing to write and the reader says [kernel].
 */
static int write_ksyms(struct pmon_data_writer *w)
{
	struct pmon__ksyms k;
	uint8_t *done; /* per kallsyms symbol: written already */
	int err = 0;

	if (!w->nk || pmon__ksyms_load("/proc/kallsyms", &k))
		return 0;
	done = calloc(k.n ? k.n : 1, 1);
	for (size_t i = 0; done && !err && i < w->capk; i++) {
		uint64_t end = 0;
		const struct pmon__ksym *s =
			w->kaddr[i] ? pmon__ksyms_find(&k, w->kaddr[i], &end) : NULL;
		if (!s || done[s - k.sym]) /* one record per symbol */
			continue;
		done[s - k.sym] = 1;
		size_t nlen = strlen(s->name) + 1,
		       size = sizeof(struct pmon_record_ksym) + ((nlen + 7) & ~(size_t)7);
		if (size > 4096)
			continue;
		if (w->len + size > CHUNK_MAX && (err = write_chunk(w, PMON_CHUNKS_MAGIC, false)))
			break;
		struct pmon_record_ksym *r = (void *)(w->buf + w->len);
		memset(r, 0, size);
		r->type = PMON_RECORD_KSYM;
		r->size = (uint16_t)size;
		r->start = s->addr;
		r->end = end;
		memcpy(r->name, s->name, nlen);
		w->len += size;
		w->nrec++;
	}
	if (!err)
		err = write_chunk(w, PMON_CHUNKS_MAGIC, false);
	free(done);
	pmon__ksyms_free(&k);
	return err;
}

/*
 * The vDSO's image as a PMON_RECORD_VDSO record in a CHNS chunk: this
 * process's own [vdso] mapping (/proc/self/maps), the one the kernel maps
 * into every 64-bit process; written when a sample landed in one. Nothing
 * where there is none or it is larger than a record holds.
 */
static int write_vdso(struct pmon_data_writer *w)
{
	char line[512];
	uint64_t start = 0, end = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return 0;
	while (!start && fgets(line, sizeof(line), f)) {
		struct pmon__maps_line ml;
		if (!pmon__maps_parse_line(line, &ml) && !strcmp(ml.name, "[vdso]"))
			start = ml.start, end = ml.end;
	}
	fclose(f);
	size_t len = (size_t)(end - start),
	       size = sizeof(struct pmon_record_vdso) + ((len + 7) & ~7u);
	if (!start || size > 65535)
		return 0;
	if (w->len + size > CHUNK_MAX) {
		int err = write_chunk(w, PMON_CHUNKS_MAGIC, false);
		if (err)
			return err;
	}
	struct pmon_record_vdso *r = (void *)(w->buf + w->len);
	memset(r, 0, size);
	r->type = PMON_RECORD_VDSO;
	r->size = (uint16_t)size;
	r->len = len;
	r->start = start;
	memcpy(r->image, (const void *)(uintptr_t)start, len);
	w->len += size;
	w->nrec++;
	return write_chunk(w, PMON_CHUNKS_MAGIC, false);
}

/* Keep the range of @rec if it is an MMAP or MMAP2 of [vdso] ({ header;
 * u32 pid, tid; u64 addr, len; ... } and the name at 72 or 40). At most
 * 4096 are kept: past them, the image goes in whatever the samples hit. */
static int note_vdso(struct pmon_data_writer *w, const uint8_t *rec, size_t len)
{
	uint32_t type;
	uint64_t v[2];
	size_t name;

	memcpy(&type, rec, 4);
	name = type == PERF_RECORD_MMAP2 ? 72 : type == PERF_RECORD_MMAP ? 40 : 0;
	if (!name || len < name + 7 || memcmp(rec + name, "[vdso]", 7))
		return 0;
	if (w->nvmaps >= 4096) {
		w->vdso_hit = true;
		return 0;
	}
	if (PMON_GROW(&w->vmaps, &w->capvmaps, w->nvmaps + 1))
		return -ENOMEM;
	memcpy(v, rec + 16, 16);
	w->vmaps[w->nvmaps++] = (struct vdso_map){ v[0], v[0] + v[1] };
	return 0;
}

int pmon_data_writer__add_event(struct pmon_data_writer *w, unsigned index, const char *name,
				uint32_t attr_type, uint64_t attr_config, uint64_t period,
				uint64_t freq, const uint64_t *ids, size_t nids)
{
	uint8_t rec[4096] = { 0 };
	struct pmon_record_event *e = (void *)rec;
	size_t size = sizeof(*e) + nids * sizeof(uint64_t);

	if (size > sizeof(rec))
		return pmon__err(-EINVAL, "%zu ids for one event", nids);
	e->type = PMON_RECORD_EVENT;
	e->size = (uint16_t)size;
	e->index = index;
	e->nids = (uint32_t)nids;
	e->period = period;
	e->freq = freq;
	e->attr_type = attr_type;
	e->attr_config = attr_config;
	pmon__strlcpy(e->name, name, sizeof(e->name));
	memcpy(rec + sizeof(*e), ids, nids * sizeof(uint64_t));
	return pmon_data_writer__add(w, rec, size);
}

int pmon_data_writer__add_tp_formats(struct pmon_data_writer *w, struct pmon_evlist *events)
{
	enum { FMT_MAX = 60000 };
	char *fmt = NULL;
	uint8_t *rec = NULL;
	int err = 0;

	for (size_t i = 0; !err && i < pmon_evlist__count(events); i++) {
		const struct pmon_event_desc *d = pmon_evlist__event(events, i);
		if (d->attr.type != PERF_TYPE_TRACEPOINT)
			continue;
		if (!fmt && !(fmt = malloc(FMT_MAX))) {
			err = -ENOMEM;
			break;
		}
		long n = pmon_evlist__tp_format(events, i, fmt, FMT_MAX);
		if (n < 0) /* its samples stay undecoded, the rest is recorded */
			continue;
		size_t sys = strcspn(d->name, ":");
		size_t size =
			(sizeof(struct pmon_record_tpfmt) + sys + (size_t)n + 1 + 7) & ~(size_t)7;
		if (size > 65535 || (!rec && !(rec = malloc(65536)))) {
			err = rec ? 0 : -ENOMEM;
			continue;
		}
		memset(rec, 0, size);
		struct pmon_record_tpfmt *r = (void *)rec;
		r->type = PMON_RECORD_TPFMT;
		r->size = (uint16_t)size;
		r->index = (uint32_t)i;
		r->sys_len = (uint32_t)sys;
		memcpy(r->text, d->name, sys);
		memcpy(r->text + sys, fmt, (size_t)n);
		err = pmon_data_writer__add(w, rec, size);
	}
	free(rec);
	free(fmt);
	return err;
}

int pmon_data_writer__add(struct pmon_data_writer *w, const void *rec, size_t len)
{
	if (len > 65536)
		return pmon__err(-EINVAL, "a record of %zu bytes", len);
	if (((const struct perf_event_header *)rec)->type == PERF_RECORD_SAMPLE) {
		int err = note_sample(w, rec, len);
		if (err)
			return err;
	} else if (!w->vdso_hit && len >= 8) {
		int err = note_vdso(w, rec, len);
		if (err)
			return err;
	}
	if (!w->len) {
		struct pmon_record_chunk n = { .type = PMON_RECORD_CHUNK,
					       .size = sizeof(n),
					       .seq = w->seq };
		memcpy(w->buf, &n, sizeof(n));
		w->len = sizeof(n);
		w->nrec = 1;
	}
	memcpy(w->buf + w->len, rec, len);
	w->len += len;
	w->nrec++;
	return w->len >= CHUNK_MAX ? pmon_data_writer__flush(w) : 0;
}

static void writer_free(struct pmon_data_writer *w)
{
	free(w->buf);
	free(w->z);
	free(w->kaddr);
	free(w->vmaps);
	for (size_t i = 0; i < w->nbids; i++)
		free(w->bids[i].path);
	free(w->bids);
	free(w);
}

int pmon_data_writer__close(struct pmon_data_writer *w)
{
	int err;

	if (!w)
		return 0;
	err = pmon_data_writer__flush(w);
	if (!err)
		err = write_ksyms(w);
	if (!err && w->vdso_hit)
		err = write_vdso(w);
	int cerr = pmon_output__commit(w->out); /* the file stays, whole chunks readable */
	if (cerr && !err)
		err = pmon__err(cerr, "%s: %s", w->path, strerror(-cerr));
	writer_free(w);
	return err;
}

void pmon_data_writer__abandon(struct pmon_data_writer *w)
{
	if (!w)
		return;
	pmon_output__abandon(w->out); /* removes what it created, puts FILE.old back */
	writer_free(w);
}

/* The GNU build id of the ELF file at @path (its PT_NOTE segments), read
 * once per path; 0 bytes where there is none or the file is unreadable. */
static uint8_t build_id_of(struct pmon_data_writer *w, const char *path, const uint8_t **id)
{
	for (size_t i = 0; i < w->nbids; i++)
		if (!strcmp(w->bids[i].path, path)) {
			*id = w->bids[i].id;
			return w->bids[i].len;
		}
	if (PMON_GROW(&w->bids, &w->capbids, w->nbids + 1))
		return 0;
	struct bid *b = &w->bids[w->nbids];
	*b = (struct bid){ .path = strdup(path) };
	if (!b->path)
		return 0;
	w->nbids++;
	b->len = (uint8_t)pmon__elf_build_id(path, b->id);
	*id = b->id;
	return b->len;
}

/* The command of each thread of @pid as COMM records ({ header; u32 pid,
 * tid; char comm[] } padded to 8), as perf synthesizes them for what ran
 * before it (perf_event__synthesize_comm()): the kernel writes COMM only at
 * exec and prctl. A thread gone meanwhile is left out. */
static int add_comms_of(struct pmon_data_writer *w, pid_t pid)
{
	char path[64], name[32];
	struct dirent *e;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	while (!err && (e = readdir(d))) {
		char *end;
		long tid = strtol(e->d_name, &end, 10);
		if (tid <= 0 || *end)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%ld/comm", (int)pid, tid);
		if (pmon__read_text(path, name, 17) <= 0)
			continue;
		uint8_t rec[16 + 24] = { 0 };
		size_t n = strlen(name) + 1, size = 16 + ((n + 7) & ~(size_t)7);
		struct perf_event_header h = { .type = PERF_RECORD_COMM, .size = (uint16_t)size };
		uint32_t ids[2] = { (uint32_t)pid, (uint32_t)tid };
		memcpy(rec, &h, sizeof(h));
		memcpy(rec + 8, ids, 8);
		memcpy(rec + 16, name, n);
		err = pmon_data_writer__add(w, rec, size);
	}
	closedir(d);
	return err;
}

/* One process's executable file mappings as MMAP2 records (the layout of
 * perf_event_open(2); what the reader needs: pid, addr, len, pgoff, name). */
static long add_maps_of(struct pmon_data_writer *w, pid_t pid)
{
	char path[64], line[4352];
	long n = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? pmon__err(-ESRCH, "process %d does not exist", (int)pid)
				       : pmon__err(-errno, "%s: %s", path, strerror(errno));
	int cerr = add_comms_of(w, pid);
	if (cerr) {
		fclose(f);
		return cerr;
	}
	while (fgets(line, sizeof(line), f)) {
		struct pmon__maps_line ml;
		/* executable files, and the vDSO (its image goes in at the end) */
		if (pmon__maps_parse_line(line, &ml) || ml.perms[2] != 'x' ||
		    (ml.name[0] != '/' && strcmp(ml.name, "[vdso]")))
			continue;
		uint64_t start = ml.start, end = ml.end, pgoff = ml.pgoff, ino = ml.ino;
		unsigned maj = ml.maj, min = ml.min;
		char *name = ml.name;
		size_t nlen = strlen(name) + 1, size = 72 + ((nlen + 7) & ~(size_t)7);
		uint8_t rec[72 + 4352] = { 0 };
		const uint8_t *bid;
		uint8_t bidlen = build_id_of(w, name, &bid);
		struct perf_event_header h = { .type = PERF_RECORD_MMAP2,
					       .misc = PERF_RECORD_MISC_USER |
						       (bidlen ? PERF_RECORD_MISC_MMAP_BUILD_ID
							       : 0),
					       .size = (uint16_t)size };
		uint32_t ids[2] = { (uint32_t)pid, (uint32_t)pid }, dev[2] = { maj, min };
		uint64_t v[3] = { start, end - start, pgoff }, inode = ino;
		uint32_t prot = PROT_READ | PROT_EXEC;
		memcpy(rec, &h, sizeof(h));
		memcpy(rec + 8, ids, 8);
		memcpy(rec + 16, v, 24);
		if (bidlen) { /* as the kernel does: size, 3 reserved bytes, the id */
			rec[40] = bidlen;
			memcpy(rec + 44, bid, bidlen);
		} else {
			memcpy(rec + 40, dev, 8);
			memcpy(rec + 48, &inode, 8);
		}
		memcpy(rec + 64, &prot, 4);
		memcpy(rec + 72, name, nlen);
		int err = pmon_data_writer__add(w, rec, size);
		if (err) {
			fclose(f);
			return err;
		}
		n++;
	}
	fclose(f);
	return n;
}

long pmon_data_writer__add_maps(struct pmon_data_writer *w, pid_t pid)
{
	if (pid > 0)
		return add_maps_of(w, pid);
	DIR *d = opendir("/proc");
	if (!d)
		return pmon__err(-errno, "/proc: %s", strerror(errno));
	long n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		char *end;
		long p = strtol(e->d_name, &end, 10);
		if (p <= 0 || *end)
			continue;
		long k = add_maps_of(
			w, (pid_t)p); /* a process that has gone, or kernel thread: skip */
		if (k == -ENOMEM || k == -EIO || k == -EINVAL) {
			closedir(d);
			return k;
		}
		if (k > 0)
			n += k;
	}
	closedir(d);
	return n;
}
