// SPDX-License-Identifier: MIT
/*
 * The GNU build id of an ELF file, read from its PT_NOTE segments with
 * nothing but <elf.h> and pread(): the recording writer (lib/sample) names
 * every mapped file by build id, and the core library must not pull in
 * libelf for those few bytes (issue #11: the core links libc, libm, zlib
 * and jansson only). The layouts are the System V gABI's "Note Section":
 * Elf64_Nhdr / Elf32_Nhdr, then the name and the descriptor, each padded to
 * the segment's alignment (4, or 8 for segments with p_align 8).
 *
 * The path comes from /proc/PID/maps or a recording, so another user may
 * have put anything there: a FIFO must not block (O_NONBLOCK, then fstat
 * for a regular file), and every size read from the file is bounded before
 * use, with overflow-safe arithmetic.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define NOTE_SEG_MAX (64 * 1024) /* build-id notes sit in a small segment */
#define PHDR_MAX 256

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

size_t pmon__elf_note_build_id(const uint8_t *p, size_t n, size_t align, uint8_t id[20])
{
	size_t off = 0;

	if (align != 8)
		align = 4;
	/* Elf32_Nhdr and Elf64_Nhdr are the same three 32-bit words. */
	while (off <= n && n - off >= sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr nh;
		memcpy(&nh, p + off, sizeof(nh));
		off += sizeof(nh);
		size_t name = align_up(nh.n_namesz, align), desc = align_up(nh.n_descsz, align);
		if (nh.n_namesz > n || nh.n_descsz > n || name > n - off || desc > n - off - name)
			return 0; /* runs past the segment: a damaged file */
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp(p + off, "GNU", 4) && nh.n_descsz > 0 && nh.n_descsz <= 20) {
			memcpy(id, p + off + name, nh.n_descsz);
			return nh.n_descsz;
		}
		off += name + desc;
	}
	return 0;
}

/* The program headers as (type, offset, size, align), whatever the class. */
struct seg {
	uint32_t type;
	uint64_t off, size, align;
};

static int read_segs(int fd, struct seg *segs, size_t *nsegs)
{
	unsigned char ident[EI_NIDENT];
	if (pread(fd, ident, sizeof(ident), 0) != (ssize_t)sizeof(ident) ||
	    memcmp(ident, ELFMAG, SELFMAG) || ident[EI_DATA] != ELFDATA2LSB)
		return -ENOEXEC;
	size_t n = 0;
	if (ident[EI_CLASS] == ELFCLASS64) {
		Elf64_Ehdr eh;
		if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
		    eh.e_phentsize != sizeof(Elf64_Phdr))
			return -ENOEXEC;
		for (size_t i = 0; i < eh.e_phnum && i < PHDR_MAX; i++) {
			Elf64_Phdr ph;
			if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
			    (ssize_t)sizeof(ph))
				return -ENOEXEC;
			segs[n++] = (struct seg){ ph.p_type, ph.p_offset, ph.p_filesz, ph.p_align };
		}
	} else if (ident[EI_CLASS] == ELFCLASS32) {
		Elf32_Ehdr eh;
		if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
		    eh.e_phentsize != sizeof(Elf32_Phdr))
			return -ENOEXEC;
		for (size_t i = 0; i < eh.e_phnum && i < PHDR_MAX; i++) {
			Elf32_Phdr ph;
			if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
			    (ssize_t)sizeof(ph))
				return -ENOEXEC;
			segs[n++] = (struct seg){ ph.p_type, ph.p_offset, ph.p_filesz, ph.p_align };
		}
	} else {
		return -ENOEXEC;
	}
	*nsegs = n;
	return 0;
}

size_t pmon__elf_build_id(const char *path, uint8_t id[20])
{
	struct seg segs[PHDR_MAX];
	uint8_t *buf = NULL;
	struct stat st;
	size_t nsegs = 0, len = 0;

	/* A FIFO, a device, a directory: not an ELF file to read. */
	int fd = pmon__open_regular(path, false);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st))
		goto out;
	if (read_segs(fd, segs, &nsegs) || !(buf = malloc(NOTE_SEG_MAX)))
		goto out;
	for (size_t i = 0; i < nsegs && !len; i++) {
		if (segs[i].type != PT_NOTE || !segs[i].size || segs[i].size > NOTE_SEG_MAX ||
		    segs[i].off > (uint64_t)st.st_size ||
		    segs[i].size > (uint64_t)st.st_size - segs[i].off)
			continue;
		if (pread(fd, buf, segs[i].size, (off_t)segs[i].off) != (ssize_t)segs[i].size)
			continue;
		len = pmon__elf_note_build_id(buf, segs[i].size, segs[i].align, id);
	}
out:
	free(buf);
	close(fd);
	return len;
}
