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
#include <zlib.h>

#include "internal.h"
#include "sample/datafile.h"
#include <pmon/sample.h>

#define CHUNK_MAX (256 * 1024)

struct pmon_data_writer {
	FILE *f;
	char path[512];
	uint8_t *buf;
	size_t len;
	uint32_t nrec;
	uint8_t *z; /* the deflated chunk */
	size_t zcap;
};

static int write_all(struct pmon_data_writer *w, const void *p, size_t n)
{
	if (fwrite(p, 1, n, w->f) != n)
		return pmon__err(-EIO, "%s: write error", w->path);
	return 0;
}

int pmon_data_writer__open(const char *path, const struct pmon_data_header *h,
			   struct pmon_data_writer **out)
{
	struct pmon_data_writer *w = calloc(1, sizeof(*w));
	struct pmon_data_disk_header dh;

	if (!w || !(w->buf = malloc(CHUNK_MAX + 65536)) ||
	    !(w->z = malloc(w->zcap = compressBound(CHUNK_MAX + 65536)))) {
		if (w)
			free(w->buf);
		free(w);
		return -ENOMEM;
	}
	pmon__strlcpy(w->path, path, sizeof(w->path));
	w->f = fopen(path, "we");
	if (!w->f) {
		int e = -errno;
		free(w->buf);
		free(w->z);
		free(w);
		return pmon__err(e, "cannot write '%s': %s", path, strerror(-e));
	}
	memset(&dh, 0, sizeof(dh));
	memcpy(dh.magic, PMON_DATA_MAGIC, 8);
	dh.version = PMON_DATA_VERSION;
	dh.header_size = sizeof(dh);
	dh.sample_type = h->sample_type;
	dh.attr_type = h->attr_type;
	dh.attr_config = h->attr_config;
	dh.period = h->period;
	dh.freq = h->freq;
	pmon__strlcpy(dh.event, h->event, sizeof(dh.event));
	pmon__strlcpy(dh.command, h->command, sizeof(dh.command));
	int err = write_all(w, &dh, sizeof(dh));
	if (!err && fflush(w->f))
		err = pmon__err(-errno, "%s: %s", path, strerror(errno));
	if (err) {
		fclose(w->f);
		free(w->buf);
		free(w->z);
		free(w);
		return err;
	}
	*out = w;
	return 0;
}

int pmon_data_writer__flush(struct pmon_data_writer *w)
{
	struct pmon_data_chunk c;
	int err;

	if (!w->len)
		return 0;
	uLongf zlen = (uLongf)w->zcap;
	const uint8_t *payload = w->buf;
	memcpy(c.magic, PMON_CHUNK_MAGIC, 4);
	c.len = (uint32_t)w->len;
	if (compress2(w->z, &zlen, w->buf, (uLong)w->len, Z_BEST_SPEED) == Z_OK && zlen < w->len) {
		memcpy(c.magic, PMON_CHUNKZ_MAGIC, 4);
		c.len = (uint32_t)zlen;
		payload = w->z;
	}
	c.crc = (uint32_t)crc32(0L, payload, (uInt)c.len);
	c.nrec = w->nrec;
	err = write_all(w, &c, sizeof(c));
	if (!err)
		err = write_all(w, payload, c.len);
	if (!err && fflush(w->f))
		err = pmon__err(-errno, "%s: %s", w->path, strerror(errno));
	w->len = 0;
	w->nrec = 0;
	return err;
}

int pmon_data_writer__add(struct pmon_data_writer *w, const void *rec, size_t len)
{
	if (len > 65536)
		return pmon__err(-EINVAL, "a record of %zu bytes", len);
	memcpy(w->buf + w->len, rec, len);
	w->len += len;
	w->nrec++;
	return w->len >= CHUNK_MAX ? pmon_data_writer__flush(w) : 0;
}

int pmon_data_writer__close(struct pmon_data_writer *w)
{
	int err;

	if (!w)
		return 0;
	err = pmon_data_writer__flush(w);
	if (fclose(w->f) && !err)
		err = pmon__err(-errno, "%s: %s", w->path, strerror(errno));
	free(w->buf);
	free(w->z);
	free(w);
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
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff, ino;
		unsigned maj, min;
		char perms[8];
		int pos = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &pgoff,
			   &maj, &min, &ino, &pos) < 7 ||
		    !pos || perms[2] != 'x' || line[pos] != '/')
			continue;
		char *name = line + pos;
		name[strcspn(name, "\n")] = '\0';
		size_t nlen = strlen(name) + 1, size = 72 + ((nlen + 7) & ~(size_t)7);
		uint8_t rec[72 + 4352] = { 0 };
		struct perf_event_header h = { .type = PERF_RECORD_MMAP2,
					       .misc = PERF_RECORD_MISC_USER,
					       .size = (uint16_t)size };
		uint32_t ids[2] = { (uint32_t)pid, (uint32_t)pid }, dev[2] = { maj, min };
		uint64_t v[3] = { start, end - start, pgoff }, inode = ino;
		uint32_t prot = PROT_READ | PROT_EXEC;
		memcpy(rec, &h, sizeof(h));
		memcpy(rec + 8, ids, 8);
		memcpy(rec + 16, v, 24);
		memcpy(rec + 40, dev, 8);
		memcpy(rec + 48, &inode, 8);
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
