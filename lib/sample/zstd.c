// SPDX-License-Identifier: MIT
/*
 * zstd for perf.data's compressed records (perf record -z), through the
 * system's libzstd loaded on first use (dlopen, as lib/event/pfm.c loads
 * libpfm4): the core does not link it, and a machine without it still
 * reads every other recording. The few calls used are zstd's stable
 * streaming API (zstd.h: ZSTD_createDStream .. ZSTD_freeDStream), declared
 * here so that building needs no zstd headers.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sample/reader.h"

struct zin {
	const void *src;
	size_t size, pos;
};

struct zout {
	void *dst;
	size_t size, pos;
};

static struct {
	void *(*create)(void);
	size_t (*init)(void *);
	size_t (*stream)(void *, struct zout *, struct zin *);
	unsigned (*is_error)(size_t);
	size_t (*free)(void *);
} zs;

static pthread_once_t zs_once = PTHREAD_ONCE_INIT;
static bool zs_ok;

static void zs_load(void)
{
	void *h = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return;
	*(void **)&zs.create = dlsym(h, "ZSTD_createDStream");
	*(void **)&zs.init = dlsym(h, "ZSTD_initDStream");
	*(void **)&zs.stream = dlsym(h, "ZSTD_decompressStream");
	*(void **)&zs.is_error = dlsym(h, "ZSTD_isError");
	*(void **)&zs.free = dlsym(h, "ZSTD_freeDStream");
	zs_ok = zs.create && zs.init && zs.stream && zs.is_error && zs.free;
}

struct pmon__zstd {
	void *ds;
};

struct pmon__zstd *pmon__zstd_new(void)
{
	struct pmon__zstd *z;

	pthread_once(&zs_once, zs_load);
	if (!zs_ok) {
		errno = ENOENT;
		return NULL;
	}
	if (!(z = calloc(1, sizeof(*z))) || !(z->ds = zs.create()) || zs.is_error(zs.init(z->ds))) {
		pmon__zstd_free(z);
		errno = ENOMEM;
		return NULL;
	}
	return z;
}

int pmon__zstd_inflate(struct pmon__zstd *z, const void *in, size_t n, uint8_t **out, size_t *len,
		       size_t *cap, size_t max)
{
	struct zin i = { in, n, 0 };
	size_t start = *len;

	for (;;) {
		if (*cap - *len < 65536) {
			if (*len - start >= max)
				return -E2BIG;
			if (pmon__grow((void **)out, cap, *len + (1u << 20), 1))
				return -ENOMEM;
		}
		struct zout o = { *out + *len, *cap - *len, 0 };
		size_t r = zs.stream(z->ds, &o, &i);
		if (zs.is_error(r))
			return -EINVAL;
		*len += o.pos;
		/* all input taken and room left over: nothing more is pending */
		if (i.pos == i.size && o.pos < o.size)
			return 0;
	}
}

void pmon__zstd_free(struct pmon__zstd *z)
{
	if (!z)
		return;
	if (z->ds)
		zs.free(z->ds);
	free(z);
}
