// SPDX-License-Identifier: MIT
/*
 * Processes and their memory maps (lib/report/ctx.h): the files the
 * MMAP2 records name, each process's mappings (a fork starts with its
 * parent's), and the epochs that let a sample resolve against the maps its
 * process had when it was taken; the DWARF unwinder of each process sees
 * the same maps.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "report/ctx.h"

static int file_index(struct ctx *x, const char *path, const uint8_t *bid, uint8_t bidlen)
{
	for (size_t i = 0; i < x->nfiles; i++)
		if (!strcmp(x->files[i].path, path) && x->files[i].bidlen == bidlen &&
		    (!bidlen || !memcmp(x->files[i].bid, bid, bidlen)))
			return (int)i;
	if (PMON_GROW(&x->files, &x->capfiles, x->nfiles + 1))
		return -1;
	memset(&x->files[x->nfiles], 0, sizeof(x->files[0]));
	if (bidlen) /* @bid may be NULL without one (maps read from /proc) */
		memcpy(x->files[x->nfiles].bid, bid, bidlen);
	x->files[x->nfiles].bidlen = bidlen;
	x->files[x->nfiles].path = strdup(path);
	return x->files[x->nfiles].path ? (int)x->nfiles++ : -1;
}

int pmon__maps_add(struct ctx *x, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		   const char *file, const uint8_t *bid, uint8_t bidlen)
{
	int fi = file_index(x, file, bid, bidlen);

	if (fi < 0)
		return -ENOMEM;
	if (PMON_GROW(&x->maps, &x->capmaps, x->nmaps + 1))
		return -ENOMEM;
	/* A crafted length must not wrap the end below the start. */
	uint64_t end = len > UINT64_MAX - start ? UINT64_MAX : start + len;
	x->maps[x->nmaps++] = (struct map){ pid, start, end, pgoff, fi };
	for (size_t i = 0; i < x->nunw; i++)
		if (x->unw[i].pid == pid)
			x->unw[i].stale = true;
	return 0;
}

/*
 * Unwind a DWARF-mode sample of process @pid: its unwinder reports every
 * file the process has mapped at its load address (the mapping's start
 * minus its offset, as perf does). Return: frames found, leaf first.
 */
int pmon__maps_unwind(struct ctx *x, uint32_t pid, const uint64_t *regs, const uint8_t *stack,
		      uint64_t size, uint64_t *pcs, int max)
{
	struct unw_proc *p = NULL;

	for (size_t i = 0; i < x->nunw; i++)
		if (x->unw[i].pid == pid)
			p = &x->unw[i];
	if (!p) {
		if (PMON_GROW(&x->unw, &x->capunw, x->nunw + 1))
			return 0;
		p = &x->unw[x->nunw++];
		*p = (struct unw_proc){ .pid = pid, .stale = true };
	}
	if (p->stale) {
		pmon__unw_free(p->u);
		p->u = pmon__unw_new((pid_t)pid);
		p->stale = false;
		if (!p->u)
			return 0;
		for (size_t i = 0; i < x->nmaps; i++) {
			const struct map *m = &x->maps[i];
			const char *path = x->files[m->file].path;
			bool seen = false;
			if (m->pid != pid || path[0] != '/' || !strncmp(path, "//anon", 6))
				continue;
			for (size_t k = 0; k < i && !seen; k++)
				seen = x->maps[k].pid == pid && x->maps[k].file == m->file;
			if (!seen)
				pmon__unw_report(p->u, path, m->start - m->pgoff);
		}
		pmon__unw_finish(p->u);
	}
	return pmon__unw_frames(p->u, regs, stack, size, pcs, max);
}

/* One more epoch: vis[E] is the number of maps the first E MMAP2/FORK
 * records made (vis[0] = 0, pushed before the first). */
int pmon__maps_epoch(struct ctx *x)
{
	if (PMON_GROW(&x->vis, &x->capvis, x->nvis + 1))
		return -ENOMEM;
	x->vis[x->nvis++] = (uint32_t)x->nmaps;
	return 0;
}

int pmon__maps_fork(struct ctx *x, uint32_t pid, uint32_t ppid)
{
	int err = 0;

	if (pid == ppid) /* a thread: it shares the maps */
		return 0;
	for (size_t i = 0, n = x->nmaps; i < n && !err; i++)
		if (x->maps[i].pid == ppid) {
			struct map m = x->maps[i];
			const struct file *mf = &x->files[m.file];
			err = pmon__maps_add(x, pid, m.start, m.end - m.start, m.pgoff, mf->path,
					     mf->bid, mf->bidlen);
		}
	return err;
}
