// SPDX-License-Identifier: MIT
/*
 * The stacks' addresses as pprof's profile.proto wants them (report.h's
 * struct pmon__sites): while callgraph.c names the stacks, each distinct
 * (mapping, address) becomes a location with its mapping (start, limit,
 * file offset, path, build id) and its lines, the functions inlined there
 * innermost first, as pprof's Line entries, each with the function's
 * source file and first line from DWARF. export-pprof.c writes them; go
 * tool pprof's -list, -disasm, -lines and -traces read them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "internal.h"
#include "report/ctx.h"

enum { KEY_MAP, KEY_FN, KEY_LOC, NKEYS };

struct pmon__sites *pmon__sites_new(void)
{
	struct pmon__sites *s = calloc(1, sizeof(*s));

	if (s && !(s->keys = calloc(NKEYS, sizeof(struct counter)))) {
		free(s);
		return NULL;
	}
	return s;
}

void pmon__sites_free(struct pmon__sites *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nmaps; i++)
		free(s->maps[i].file);
	for (size_t i = 0; i < s->nfns; i++)
		free(s->fns[i].name), free(s->fns[i].file);
	for (size_t i = 0; i < s->nstacks; i++)
		free(s->stacks[i].loc);
	for (int k = 0; s->keys && k < NKEYS; k++)
		pmon__counter_free(&s->keys[k]);
	free(s->keys);
	free(s->maps), free(s->fns), free(s->lines), free(s->locs), free(s->stacks);
	free(s);
}

/* @key's index in counter @k, and whether it is new. Return: 0 or -ENOMEM. */
static int key_index(struct pmon__sites *s, int k, const char *key, size_t have, uint32_t *index,
		     bool *fresh)
{
	int err = pmon__counter_add(&s->keys[k], key, 0, 0, index);

	*fresh = !err && *index == have;
	return err;
}

static void hex_id(const uint8_t *b, size_t n, char out[41])
{
	out[0] = '\0';
	for (size_t i = 0; i < n && i < 20; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* The mapping (1-based) of a located address: its process map, the
 * kernel's, or none (0). Return: 0 or -ENOMEM. */
static int map_of(struct ctx *x, struct pmon__sites *s, const struct loc *l, uint64_t addr,
		  uint32_t *id)
{
	const struct map *m = l->map >= 0 ? &x->maps[l->map] : NULL;
	bool kernel = addr >= 0xffff800000000000ULL;
	char key[64];
	uint32_t i;
	bool fresh;

	*id = 0;
	if (!m && !kernel)
		return 0;
	if (m)
		pmon__fmt(key, sizeof(key), "%" PRIx64 " %" PRIx64 " %" PRIx64 " %d", m->start,
			  m->end, m->pgoff, m->file);
	else
		pmon__fmt(key, sizeof(key), "kernel");
	if (key_index(s, KEY_MAP, key, s->nmaps, &i, &fresh))
		return -ENOMEM;
	if (fresh) {
		if (PMON_GROW(&s->maps, &s->capmaps, s->nmaps + 1))
			return -ENOMEM;
		struct pmon__site_map *sm = &s->maps[s->nmaps];
		*sm = (struct pmon__site_map){ .start = 0xffff800000000000ULL,
					       .limit = UINT64_MAX };
		const struct file *f = m ? &x->files[m->file] : NULL;
		if (f) {
			sm->start = m->start, sm->limit = m->end, sm->offset = m->pgoff;
			hex_id(f->bid, f->bidlen, sm->bid);
			const unsigned char *b;
			GElf_Addr va;
			int n = !f->bidlen && f->mod ? dwfl_module_build_id(f->mod, &b, &va) : 0;
			if (n > 0)
				hex_id(b, (size_t)n, sm->bid);
			/* pprof looks for no names where pmon found them, nor in
			 * what is no file ("memfd:x (deleted)", "//anon") */
			sm->named = f->mod || f->path[0] != '/' || !strncmp(f->path, "//", 2) ||
				strstr(f->path, " (deleted)");
		} else {
			sm->named = true; /* the kernel's symbols */
		}
		if (!(sm->file = strdup(f ? f->path : "[kernel.kallsyms]")))
			return -ENOMEM;
		s->nmaps++;
	}
	*id = i + 1;
	return 0;
}

/* The function (@name, source @file, first line @start) once. */
static int fn_of(struct pmon__sites *s, const char *name, const char *file, int start, uint32_t *id)
{
	char key[1200];
	bool fresh;

	pmon__fmt(key, sizeof(key), "%s\t%s\t%d", name, file, start);
	if (key_index(s, KEY_FN, key, s->nfns, id, &fresh))
		return -ENOMEM;
	if (!fresh)
		return 0;
	if (PMON_GROW(&s->fns, &s->capfns, s->nfns + 1))
		return -ENOMEM;
	struct pmon__site_fn *f = &s->fns[s->nfns];
	f->name = strdup(name);
	f->file = strdup(file);
	f->start_line = start > 0 ? start : 0;
	if (!f->name || !f->file) {
		free(f->name), free(f->file);
		return -ENOMEM;
	}
	s->nfns++;
	return 0;
}

static int line_add(struct pmon__sites *s, const char *name, const char *file, int start, int line)
{
	uint32_t fn;

	if (fn_of(s, name, file ? file : "", start, &fn) ||
	    PMON_GROW(&s->lines, &s->caplines, s->nlines + 1))
		return -ENOMEM;
	s->lines[s->nlines++] = (struct pmon__site_line){ fn, line > 0 ? line : 0 };
	return 0;
}

/*
 * The lines of a file-backed address: the functions inlined there,
 * innermost first, each at the line it is at (the address's own line for
 * the innermost, the call's line, DW_AT_call_line, for the others), then
 * the function holding them, named as the stacks name it (@sym), with its
 * source file and first line where DWARF has them.
 */
static int dwarf_lines(struct ctx *x, struct pmon__sites *s, const struct loc *l)
{
	Dwfl_Module *mod = x->files[l->file].mod;
	uint64_t a = x->sc.addr[l->slot];
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = mod ? dwfl_module_addrdie(mod, a, &bias) : NULL;
	Dwarf_Die fn, in[64];
	int line = 0, start = 0, err = 0;
	bool found = false;
	int n = cu
		? report_scopes_at(x, mod, cu, a - bias, &fn, &found, in, (int)PMON_ARRAY_SIZE(in))
		: 0;
	Dwfl_Line *ln = mod ? dwfl_module_getsrc(mod, a) : NULL;
	const char *src = ln ? dwfl_lineinfo(ln, NULL, &line, NULL, NULL, NULL) : NULL;

	if (n < 0)
		return n;
	for (int i = n - 1; i >= 0 && !err; i--) { /* innermost first */
		const char *name = dwarf_diename(&in[i]);
		dwarf_decl_line(&in[i], &start);
		if (x->inlines) /* --no-inline: only the function holding them */
			err = line_add(s, name ? name : "[unknown]", dwarf_decl_file(&in[i]), start,
				       line);
		Dwarf_Attribute at;
		Dwarf_Word call = 0;
		if (dwarf_formudata(dwarf_attr(&in[i], DW_AT_call_line, &at), &call))
			call = 0;
		line = (int)call; /* the caller's line: where this was inlined */
		src = NULL;
	}
	start = 0;
	if (found) {
		src = dwarf_decl_file(&fn);
		dwarf_decl_line(&fn, &start);
	}
	return err ? err : line_add(s, l->sym, src, start, line);
}

long pmon__sites_loc(struct ctx *x, struct pmon__sites *s, uint64_t addr, const struct loc *l)
{
	uint32_t map, i;
	char key[64];
	bool fresh;

	if (map_of(x, s, l, addr, &map))
		return -ENOMEM;
	pmon__fmt(key, sizeof(key), "%" PRIu32 " %" PRIx64, map, addr);
	if (key_index(s, KEY_LOC, key, s->nlocs, &i, &fresh))
		return -ENOMEM;
	if (!fresh)
		return i;
	if (PMON_GROW(&s->locs, &s->caplocs, s->nlocs + 1))
		return -ENOMEM;
	struct pmon__site_loc *lo = &s->locs[s->nlocs];
	*lo = (struct pmon__site_loc){ .addr = addr, .map = map, .line = (uint32_t)s->nlines };
	int err = l->file >= 0 ? dwarf_lines(x, s, l) : line_add(s, l->sym, NULL, 0, 0);
	if (err)
		return err;
	lo->nline = (uint32_t)(s->nlines - lo->line);
	s->nlocs++;
	return i;
}
