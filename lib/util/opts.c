// SPDX-License-Identifier: MIT
/*
 * The one options convention (lib/internal.h PMON_OPTS_*), in the manner of
 * libbpf's OPTS_VALID/OPTS_GET (tools/lib/bpf/libbpf_internal.h,
 * libbpf_validate_opts()): every public options struct starts with its
 * size. A caller built against an older header passes a smaller struct --
 * accepted down to the struct's first release, its later fields read as 0;
 * a caller built against a newer header passes a larger one -- accepted when
 * every byte past this library's struct is 0 (fields it does not know, left
 * unset), refused when one is set rather than half understood.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

int pmon__opts_check(const void *opts, size_t user_sz, size_t min_sz, size_t lib_sz,
		     const char *name)
{
	if (!opts)
		return 0;
	if (user_sz < min_sz)
		return pmon__err(-EINVAL,
				 "struct %s: size %zu is smaller than its first release's %zu (is "
				 "->sz set?)",
				 name, user_sz, min_sz);
	for (size_t i = lib_sz; i < user_sz; i++)
		if (((const unsigned char *)opts)[i])
			return pmon__err(
				-EINVAL,
				"struct %s: size %zu, and byte %zu past this library's %zu "
				"is set: a field of a newer libpmon this one does not have",
				name, user_sz, i, lib_sz);
	return 0;
}

int pmon__opts_copy(void *dst, size_t lib_sz, const void *src, size_t user_sz, size_t min_sz,
		    const char *name)
{
	int err;

	if (!src)
		return 0;
	err = pmon__opts_check(src, user_sz, min_sz, lib_sz, name);
	if (err)
		return err;
	memset(dst, 0, lib_sz);
	memcpy(dst, src, user_sz < lib_sz ? user_sz : lib_sz);
	*(size_t *)dst = lib_sz; /* every struct's first field: sz */
	return 0;
}
