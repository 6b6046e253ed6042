/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the libFuzzer harnesses: the input as a file (an
 * anonymous memfd named by /proc/self/fd/N, so that parsers that take a
 * path read it without touching the disk), and a temporary folder for fake
 * sysfs/tracefs/resctrl trees made once per process.
 */
#ifndef PMON_FUZZ_UTIL_H
#define PMON_FUZZ_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Write @data to a new memfd; @path gets its /proc/self/fd name.
 * Return: the descriptor (close it after use), or -1. */
static inline int fuzz_memfd(const uint8_t *data, size_t size, char *path, size_t len)
{
	int fd = memfd_create("pmon-fuzz", MFD_CLOEXEC);
	size_t off = 0;

	if (fd < 0)
		return -1;
	while (off < size) {
		ssize_t n = write(fd, data + off, size - off);
		if (n <= 0) {
			close(fd);
			return -1;
		}
		off += (size_t)n;
	}
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

/* Write @len bytes of @text to @dir/@rel, creating the folders on the way
 * (mkdir -p).
 * Aborts on failure: a harness without its tree would fuzz nothing. */
static inline void fuzz_put(const char *dir, const char *rel, const void *text, size_t len)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (char *p = path + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0700);
		*p = '/';
	}
	f = fopen(path, "w");
	if (!f || fwrite(text, 1, len, f) != len || fclose(f))
		abort();
}

static inline void fuzz_puts(const char *dir, const char *rel, const char *text)
{
	fuzz_put(dir, rel, text, strlen(text));
}

static inline int fuzz_rm_one(const char *p, const struct stat *st, int flag, struct FTW *w)
{
	(void)st;
	(void)flag;
	(void)w;
	return remove(p), 0;
}

static char fuzz_dir[512];

static inline void fuzz_rm_tmpdir(void)
{
	if (fuzz_dir[0])
		nftw(fuzz_dir, fuzz_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A folder under $TMPDIR (or /tmp) for this process's fake trees, removed
 * at exit. */
static inline const char *fuzz_tmpdir(void)
{
	const char *t = getenv("TMPDIR");

	if (!fuzz_dir[0]) {
		snprintf(fuzz_dir, sizeof(fuzz_dir), "%s/pmon-fuzz-XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(fuzz_dir))
			abort();
		atexit(fuzz_rm_tmpdir);
	}
	return fuzz_dir;
}

/* Split @data at 0xff bytes into at most @max parts (the last holds the
 * rest). Return: how many. */
static inline size_t fuzz_split(const uint8_t *data, size_t size, const uint8_t **part,
				size_t *plen, size_t max)
{
	size_t n = 0, start = 0;

	for (size_t i = 0; i <= size && n < max; i++)
		if (i == size || (data[i] == 0xff && n + 1 < max)) {
			part[n] = data + start;
			plen[n++] = i - start;
			start = i + 1;
		}
	return n;
}
#endif
