// SPDX-License-Identifier: MIT
/*
 * Addresses to names (lib/report/ctx.h): each unique (file, offset) is
 * resolved once with elfutils (libdwfl, offline modules; the file offset is
 * turned into the ELF address through its PT_LOAD segments, the symbol
 * found through symindex.c), a file whose build id changed since the
 * recording through its debuginfo; kernel addresses by the recording's
 * kernel symbols or this machine's kallsyms; JIT code by /tmp/perf-PID.map.
 * Source lines and inlined functions are looked up on first use.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <inttypes.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "internal.h"
#include "report/ctx.h"

uint64_t pmon__module_bias(Dwfl_Module *mod)
{
	GElf_Addr bias = 0;

	return mod && dwfl_module_getelf(mod, &bias) ? bias : 0;
}

/* Open @path as @f's module (offline); false if elfutils cannot. The path
 * comes from the recording: only a regular file is handed to elfutils (a
 * FIFO there would block the read of its ELF header forever). */
static bool open_module(struct ctx *x, struct file *f, const char *path)
{
	int fd = pmon__open_regular(path, false);

	if (fd < 0)
		return false;
	f->dwfl = dwfl_begin(&x->cb);
	if (f->dwfl) {
		/* On success elfutils owns @fd (libdwfl.h); on failure it leaves a
		 * descriptor it did not open alone. */
		f->mod = dwfl_report_offline(f->dwfl, path, path, fd);
		dwfl_report_end(f->dwfl, NULL, NULL);
	}
	if (!f->mod)
		close(fd);
	if (!f->mod && f->dwfl) {
		dwfl_end(f->dwfl);
		f->dwfl = NULL;
	}
	return f->mod != NULL;
}

/* Is @f's module the file the kernel recorded (same build id)? */
static bool module_matches(const struct file *f)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(f->mod, &bits, &vaddr);

	return n == f->bidlen && !memcmp(bits, f->bid, (size_t)n);
}

void pmon__file_close(struct file *f)
{
	pmon__symindex_free(&f->syms);
	f->syms = (struct pmon__symindex){ 0 };
	if (f->dwfl)
		dwfl_end(f->dwfl);
	f->dwfl = NULL;
	f->mod = NULL;
}

/* The vDSO from the image the recording keeps (a memfd: elfutils reads a
 * descriptor); a build id recorded for it must be the image's. */
static void open_image(struct ctx *x, struct file *f)
{
	int fd = x->vdso_len ? memfd_create("vdso", MFD_CLOEXEC) : -1;

	if (fd < 0)
		return;
	if (pwrite(fd, x->vdso, x->vdso_len, 0) != (ssize_t)x->vdso_len ||
	    !(f->dwfl = dwfl_begin(&x->cb))) {
		close(fd);
		return;
	}
	f->mod = dwfl_report_offline(f->dwfl, "[vdso]", "[vdso]", fd); /* owns @fd */
	dwfl_report_end(f->dwfl, NULL, NULL);
	if (!f->mod)
		close(fd);
	if (!f->mod || (f->bidlen && !module_matches(f)))
		pmon__file_close(f);
}

/*
 * Open @f for symbols, as perf's dso__load() looks: the file itself (under
 * --symfs when given) when it is the one recorded (or no build id was
 * recorded), else the copy in perf's build-id cache, else debuginfo with
 * the recorded build id (--debug-dir, then /usr/lib/debug), else nothing:
 * a rebuilt binary's symbols would name the samples wrongly. The vDSO is
 * in no file: only the cache's copy of it names it.
 */
static void open_file(struct ctx *x, struct file *f)
{
	char hex[41], path[4200];
	bool vdso = !strcmp(f->path, "[vdso]");

	if (!vdso) {
		const char *at = f->path;
		if (x->symfs) {
			pmon__fmt(path, sizeof(path), "%s/%s", x->symfs, f->path);
			at = path;
		}
		if (open_module(x, f, at) && (!f->bidlen || module_matches(f)))
			return;
		pmon__file_close(f);
	}
	if (f->bidlen &&
	    pmon__cache_file(f->bid, f->bidlen, vdso ? "vdso" : "elf", path, sizeof(path))) {
		if (open_module(x, f, path) && module_matches(f))
			return;
		pmon__file_close(f);
	}
	if (vdso) {
		open_image(x, f);
		return;
	}
	if (!f->bidlen)
		return;
	for (unsigned i = 0; i < f->bidlen; i++)
		snprintf(hex + 2 * i, 3, "%02x", f->bid[i]);
	const char *dirs[] = { x->debug_dir, "/usr/lib/debug" };
	for (size_t d = 0; d < 2; d++) {
		if (!dirs[d])
			continue;
		pmon__fmt(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", dirs[d], hex, hex + 2);
		if (open_module(x, f, path) && module_matches(f))
			return;
		pmon__file_close(f);
	}
	if (!x->nstale++)
		pmon__fmt(x->stale_first, sizeof(x->stale_first), "%s, build id %s", f->path, hex);
}

/* The symbol at file offset @off of @f, or NULL; *@addr: the Dwfl address. */
static const char *resolve(struct ctx *x, struct file *f, uint64_t off, uint64_t pgoff,
			   uint64_t *addr)
{
	GElf_Addr bias;
	Elf *elf;
	size_t nph;

	if (!f->tried) {
		f->tried = true;
		if (f->path[0] == '[' && strcmp(f->path, "[vdso]"))
			return NULL;
		open_file(x, f);
	}
	if (!f->mod || !(elf = dwfl_module_getelf(f->mod, &bias)) || elf_getphdrnum(elf, &nph))
		return NULL;
	/* File offset -> ELF address through the PT_LOAD segment holding it. */
	GElf_Phdr exec = { 0 };
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (ph.p_flags & PF_X && !exec.p_memsz)
			exec = ph;
		if (off >= ph.p_offset && off - ph.p_offset < ph.p_filesz) { /* no wrap */
			GElf_Addr a = off - ph.p_offset + ph.p_vaddr + bias;
			*addr = a;
			return pmon__symindex_find(&f->syms, f->mod, a);
		}
	}
	/*
	 * A debuginfo file standing in for its binary keeps the segments'
	 * addresses but not their file offsets. The sample is code, so its
	 * mapping (file offset @pgoff) is the executable segment's, which
	 * starts at that segment's page-aligned address.
	 */
	if (exec.p_memsz && !exec.p_filesz && off >= pgoff) {
		uint64_t align = exec.p_align > 1 ? exec.p_align : 4096;
		GElf_Addr a = (exec.p_vaddr & ~(align - 1)) + (off - pgoff) + bias;
		*addr = a;
		return pmon__symindex_find(&f->syms, f->mod, a);
	}
	return NULL;
}

/*
 * Kernel text symbols: those the recording carries (CHNS chunks, written
 * by the recorder from its machine's kallsyms), else what kernel.c chose:
 * a kallsyms file, none (another kernel's recording), or this machine's
 * /proc/kallsyms, loaded once per process (a fuzzer calls the reader many
 * times). Empty where kptr_restrict shows every address as 0.
 */
static struct pmon__ksyms proc_ksyms;
static pthread_once_t ksyms_once = PTHREAD_ONCE_INIT;

static void ksyms_load(void)
{
	pmon__ksyms_load("/proc/kallsyms", &proc_ksyms);
}

int pmon__file_ksym_cmp(const void *a, const void *b)
{
	const struct file_ksym *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The name of the kernel symbol holding @ip, and its start in *@start; NULL if none. */
static const char *kernel_symbol_at(const struct ctx *x, uint64_t ip, uint64_t *start)
{
	if (x->nfk) { /* the recording names its own kernel addresses */
		size_t lo = 0, hi = x->nfk;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (x->fk[mid].start <= ip)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (!lo || ip >= x->fk[lo - 1].end)
			return NULL;
		*start = x->fk[lo - 1].start;
		return x->fk[lo - 1].name;
	}
	if (x->kernel_from == PMON__KSYMS_NONE) /* another kernel's addresses */
		return NULL;
	if (x->kernel_from == PMON__KSYMS_PROC)
		pthread_once(&ksyms_once, ksyms_load);
	const struct pmon__ksym *k = pmon__ksyms_find(
		x->kernel_from == PMON__KSYMS_FILE ? &x->kfile : &proc_ksyms, ip, NULL);
	if (!k)
		return NULL;
	*start = k->addr;
	return k->name;
}

static const char *kernel_symbol(const struct ctx *x, uint64_t ip)
{
	uint64_t start;

	return kernel_symbol_at(x, ip, &start);
}

/*
 * A kernel address of a call chain as the start of its symbol: a kernel
 * frame is named by its symbol alone (pmon__locate()), and the start names the
 * same one (the last symbol starting at or below an address holds it), so
 * chains that differ only in where inside a kernel function they were are
 * one chain. Profiles taken at high rates are full of interrupt chains
 * whose leaves land on every instruction of a few functions: keeping each
 * raw chain cost the folded export 50-80 MB on 4.8 M samples (issue #16).
 * An address in no symbol is kept as it is.
 */
uint64_t pmon__kernel_canonical(const struct ctx *x, uint64_t ip)
{
	uint64_t start = ip;

	return ip >= 0xffff800000000000ULL && kernel_symbol_at(x, ip, &start) ? start : ip;
}

static int jit_cmp(const void *a, const void *b)
{
	const struct pmon__jit_sym *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* At most this many lines of a perf map are read: a file another program
 * keeps writing (or /dev/zero behind a link) cannot hold the report. */
#define JIT_MAX_LINES (4u << 20)

/*
 * Open a /tmp/perf-PID.map as perf does (tools/perf/util/symbol.c,
 * dso__load_perf_map() through filename__read_...: a map file not owned by
 * the user or root is ignored): in a world-writable /tmp anyone can create
 * that name, and a report run as root must not print symbols a stranger
 * wrote. No link is followed, and only a regular file is read (a FIFO
 * would block).
 */
static FILE *jit_open(const char *path)
{
	struct stat st;
	int fd = pmon__open_regular(path, true);
	FILE *f;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || (st.st_uid != 0 && st.st_uid != geteuid()) ||
	    !(f = fdopen(fd, "r"))) {
		close(fd);
		return NULL;
	}
	return f;
}

/*
 * The symbol a JIT wrote for @ip in /tmp/perf-PID.map (perf's convention:
 * "START SIZE name" per line, hex), loaded once per process; NULL if none.
 */
static const char *jit_symbol(struct ctx *x, uint32_t pid, uint64_t ip)
{
	struct jit_map *j = NULL;

	for (size_t i = 0; i < x->njit; i++)
		if (x->jit[i].pid == pid)
			j = &x->jit[i];
	if (!j) {
		if (PMON_GROW(&x->jit, &x->capjit, x->njit + 1))
			return NULL;
		j = &x->jit[x->njit++];
		*j = (struct jit_map){ .pid = pid };
		char path[64];
		snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
		FILE *f = jit_open(path);
		if (f) {
			j->n = pmon__perf_map_parse(f, &j->s);
			fclose(f);
		}
	}
	return pmon__perf_map_find(j->s, j->n, ip);
}

/* A hex number at @s (no sign, an optional 0x, at most 64 bits) and the
 * blanks after it: what follows, or NULL when there is no such number or no
 * blank after it (a wider number is refused, not cut to 64 bits). */
static const char *hex_field(const char *s, uint64_t *v)
{
	char *end;

	if (!isxdigit((unsigned char)s[0]))
		return NULL;
	errno = 0;
	*v = strtoull(s, &end, 16);
	if (errno || (*end != ' ' && *end != '\t'))
		return NULL;
	while (*end == ' ' || *end == '\t')
		end++;
	return end;
}

size_t pmon__perf_map_parse(FILE *f, struct pmon__jit_sym **out)
{
	struct pmon__jit_sym *s = NULL;
	size_t n = 0, cap = 0, nline = 0;
	char line[1024];

	while (nline++ < JIT_MAX_LINES && fgets(line, sizeof(line), f)) {
		uint64_t start, size;
		const char *p = hex_field(line, &start);
		if (!p || !(p = hex_field(p, &size)) || !size || start == UINT64_MAX)
			continue;
		size_t pos = (size_t)(p - line);
		if (PMON_GROW(&s, &cap, n + 1))
			break;
		char *name = line + pos;
		name[strcspn(name, "\n")] = '\0';
		if (!(s[n].name = strdup(name)))
			break;
		s[n].start = start;
		s[n++].end = size > UINT64_MAX - start ? UINT64_MAX : start + size;
	}
	if (n)
		qsort(s, n, sizeof(*s), jit_cmp);
	*out = s;
	return n;
}

const char *pmon__perf_map_find(const struct pmon__jit_sym *s, size_t n, uint64_t ip)
{
	/* The entry with the greatest start at or below ip, if ip is inside it. */
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && ip < s[lo - 1].end ? s[lo - 1].name : NULL;
}

/* The sym_cache slot of (@file, @off), resolved on first use (@pgoff: the
 * file offset its mapping starts at); -1 without memory. */
static long cache_slot(struct ctx *x, int file, uint64_t off, uint64_t pgoff)
{
	struct sym_cache *c = &x->sc;

	if (c->n * 2 >= c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 4096;
		int *nf = malloc(cap * sizeof(int));
		uint64_t *no = malloc(cap * sizeof(uint64_t)), *na = malloc(cap * sizeof(uint64_t));
		char **nn = calloc(cap, sizeof(char *)), **nl = calloc(cap, sizeof(char *));
		char **ni = calloc(cap, sizeof(char *));
		if (!nf || !no || !na || !nn || !nl || !ni) {
			free(nf), free(no), free(na), free(nn), free(nl), free(ni);
			return -1;
		}
		for (size_t k = 0; k < cap; k++)
			nf[k] = -1;
		for (size_t k = 0; k < c->cap; k++) {
			if (c->file[k] < 0)
				continue;
			size_t j = (pmon__fnv(&c->off[k], 8, (uint64_t)c->file[k])) & (cap - 1);
			while (nf[j] >= 0)
				j = (j + 1) & (cap - 1);
			nf[j] = c->file[k], no[j] = c->off[k], nn[j] = c->name[k];
			na[j] = c->addr[k], nl[j] = c->line[k], ni[j] = c->inl[k];
		}
		free(c->file), free(c->off), free(c->name), free(c->addr), free(c->line);
		free(c->inl);
		c->file = nf, c->off = no, c->name = nn, c->addr = na, c->line = nl, c->cap = cap;
		c->inl = ni;
	}
	size_t j = pmon__fnv(&off, 8, (uint64_t)file) & (c->cap - 1);
	while (c->file[j] >= 0 && !(c->file[j] == file && c->off[j] == off))
		j = (j + 1) & (c->cap - 1);
	if (c->file[j] < 0) {
		uint64_t addr = 0;
		const char *s = resolve(x, &x->files[file], off, pgoff, &addr);
		c->file[j] = file;
		c->off[j] = off;
		c->addr[j] = addr;
		char *dm = pmon__demangle(s); /* C++ names as perf prints them */
		c->name[j] = dm ? dm : strdup(s ? s : "[unknown]");
		c->n++;
	}
	return (long)j;
}

/* Where @ip of process @pid lands: symbol, DSO, and the file it came from. */
void pmon__locate(struct ctx *x, uint32_t pid, uint64_t ip, uint32_t epoch, struct loc *l)
{
	const char *js;
	*l = (struct loc){ .sym = "[unknown]", .dso = "[unknown]", .file = -1, .map = -1 };
	if (ip >= 0xffff800000000000ULL) {
		l->dso = "[kernel]";
		l->sym = (js = kernel_symbol(x, ip)) ? js : "[kernel]";
		return;
	}
	/* The maps this process had when the sample was taken: the latest
	 * mapping of an address wins (exec, dlclose and dlopen reuse them). */
	long i = pmon__maps_find(x, pid, ip, epoch);
	if (i >= 0) {
		struct map *m = &x->maps[i];
		struct file *f = &x->files[m->file];
		l->dso = f->path;
		l->map = (long)i;
		bool vdso = !strcmp(f->path, "[vdso]"); /* named by perf's cache's copy */
		if ((f->path[0] != '/' && !vdso) ||
		    !strncmp(f->path, "//anon", 6)) { /* code made at run time */
			if ((js = jit_symbol(x, pid, ip))) {
				l->dso = "[jit]";
				l->sym = js;
			}
			return;
		}
		/* Each unique (file, offset) is resolved once. */
		long j = cache_slot(x, m->file, ip - m->start + m->pgoff, m->pgoff);
		if (j >= 0 && x->sc.name[j]) {
			l->sym = x->sc.name[j];
			l->file = m->file;
			l->slot = (size_t)j;
		}
		return;
	}
	if ((js = jit_symbol(x, pid, ip))) {
		l->dso = "[jit]";
		l->sym = js;
	}
}

/* "file.c:42" for a located address (its line table, looked up once), or NULL. */
const char *pmon__srcline(struct ctx *x, const struct loc *l)
{
	struct sym_cache *c = &x->sc;

	if (l->file < 0)
		return NULL;
	if (!c->line[l->slot]) {
		struct file *f = &x->files[l->file];
		Dwfl_Line *ln = f->mod ? dwfl_module_getsrc(f->mod, c->addr[l->slot]) : NULL;
		const char *src;
		int lineno = 0;
		char buf[512];
		if (ln && (src = dwfl_lineinfo(ln, NULL, &lineno, NULL, NULL, NULL)) &&
		    lineno > 0) {
			const char *slash = strrchr(src, '/');
			pmon__fmt(buf, sizeof(buf), "%s:%d", slash ? slash + 1 : src, lineno);
		} else {
			pmon__fmt(buf, sizeof(buf), "[unknown]");
		}
		c->line[l->slot] = strdup(buf);
	}
	return c->line[l->slot];
}

/* ---- compile units' functions by address --------------------------------- */

struct dw_unit {
	struct unit_fn {
		Dwarf_Addr lo, hi;
		Dwarf_Off die;
	} * fn;
	size_t n, cap;
};

void report_units_free(struct ctx *x)
{
	for (size_t i = 0; i < x->nunits; i++)
		free(x->units[i].fn);
	free(x->units);
	x->units = NULL;
	x->nunits = x->capunits = 0;
	pmon__counter_free(&x->unit_keys);
}

static int cmp_unit_fn(const void *a, const void *b)
{
	const struct unit_fn *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Compile unit @cu of @mod's functions by address, built on first use.
 * Return: the unit, or NULL (out of memory). */
static struct dw_unit *unit_of(struct ctx *x, Dwfl_Module *mod, Dwarf_Die *cu)
{
	char key[64];
	uint32_t i;
	Dwarf_Die d;

	pmon__fmt(key, sizeof(key), "%p %" PRIx64, (void *)mod, (uint64_t)dwarf_dieoffset(cu));
	if (pmon__counter_add(&x->unit_keys, key, 0, 0, &i))
		return NULL;
	if (i < x->nunits)
		return &x->units[i];
	if (PMON_GROW(&x->units, &x->capunits, x->nunits + 1))
		return NULL;
	struct dw_unit *u = &x->units[x->nunits++];
	*u = (struct dw_unit){ 0 };
	if (dwarf_child(cu, &d))
		return u;
	do {
		if (dwarf_tag(&d) != DW_TAG_subprogram)
			continue;
		Dwarf_Addr base, lo, hi;
		for (ptrdiff_t o = 0; (o = dwarf_ranges(&d, o, &base, &lo, &hi)) > 0;) {
			if (PMON_GROW(&u->fn, &u->cap, u->n + 1))
				return NULL;
			u->fn[u->n++] = (struct unit_fn){ lo, hi, dwarf_dieoffset(&d) };
		}
	} while (!dwarf_siblingof(&d, &d));
	if (u->n)
		qsort(u->fn, u->n, sizeof(*u->fn), cmp_unit_fn);
	return u;
}

/* The subprogram among @u's holding @pc into @out. */
static bool subprogram_at(struct dw_unit *u, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *out)
{
	size_t lo = 0, hi = u->n;

	while (lo < hi) { /* the first range starting past @pc */
		size_t mid = lo + (hi - lo) / 2;
		if (u->fn[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Ranges rarely overlap: a few steps back find one that holds @pc. */
	for (size_t k = lo, steps = 0; k-- > 0 && steps < 8; steps++)
		if (pc < u->fn[k].hi)
			return dwarf_offdie(dwarf_cu_getdwarf(cu->cu), u->fn[k].die, out) != NULL;
	return false;
}

int report_scopes_at(struct ctx *x, Dwfl_Module *mod, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *fn,
		     bool *found, Dwarf_Die *in, int max)
{
	struct dw_unit *u = unit_of(x, mod, cu);
	Dwarf_Die d, scope;
	int n = 0;

	*found = false;
	if (!u)
		return -ENOMEM;
	if (!(*found = subprogram_at(u, cu, pc, fn)))
		return 0;
	/* Down through @fn's own DIEs only: the block or inlined subroutine
	 * holding @pc at each level. */
	scope = *fn;
	while (n < max && !dwarf_child(&scope, &d)) {
		bool deeper = false;
		do {
			int tag = dwarf_tag(&d);
			if ((tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block) &&
			    dwarf_haspc(&d, pc) == 1) {
				if (tag == DW_TAG_inlined_subroutine)
					in[n++] = d;
				scope = d;
				deeper = true;
				break;
			}
		} while (!dwarf_siblingof(&d, &d));
		if (!deeper)
			break;
	}
	return n;
}

/*
 * The functions inlined at a located address, innermost first and
 * tab-separated ("" for none): the DW_TAG_inlined_subroutine scopes around
 * it in its compile unit's DWARF, looked up once per address.
 */
static const char *inlines(struct ctx *x, const struct loc *l)
{
	struct sym_cache *c = &x->sc;

	if (l->file < 0)
		return "";
	if (!c->inl[l->slot]) {
		struct file *f = &x->files[l->file];
		Dwarf_Addr bias = 0;
		Dwarf_Die *cu =
			f->mod ? dwfl_module_addrdie(f->mod, c->addr[l->slot], &bias) : NULL;
		Dwarf_Die fn, in[64];
		bool found;
		int n = cu ? report_scopes_at(x, f->mod, cu, c->addr[l->slot] - bias, &fn, &found,
					      in, (int)PMON_ARRAY_SIZE(in))
			   : 0;
		char buf[1024] = "";
		size_t off = 0;
		if (n < 0)
			return "";
		for (int i = n - 1; i >= 0; i--) { /* innermost first */
			const char *name;
			if (!(name = dwarf_diename(&in[i])))
				continue;
			int w = snprintf(buf + off, sizeof(buf) - off, "%s%s", off ? "\t" : "",
					 name);
			if (w < 0 || (size_t)w >= sizeof(buf) - off)
				break;
			off += (size_t)w;
		}
		c->inl[l->slot] = strdup(buf);
	}
	return c->inl[l->slot] ? c->inl[l->slot] : "";
}

const char *pmon__base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/* The frame index of a located address ("symbol\tdso" interned). */
static int frame_of(struct ctx *x, const struct loc *l, uint32_t *index)
{
	char key[600];

	pmon__fmt(key, sizeof(key), "%s\t%s", l->sym, pmon__base_name(l->dso));
	return pmon__counter_add(&x->frames, key, 1, 0, index);
}

/* The frames of a located address into @out (up to @max): its function,
 * then the functions inlined there, outermost first, when the report asked
 * for them. Return: how many, or -ENOMEM. */
int pmon__frames_of(struct ctx *x, const struct loc *l, uint32_t *out, int max)
{
	const char *inl = x->inlines ? inlines(x, l) : "";
	const char *names[32];
	size_t n = 0;
	char buf[1024];
	int k = 0;

	pmon__strlcpy(buf, inl, sizeof(buf));
	for (char *p = buf; *p && n < 32;) {
		names[n++] = p;
		if (!(p = strchr(p, '\t')))
			break;
		*p++ = '\0';
	}
	for (size_t i = 0; i <= n && k < max; i++) {
		struct loc li = *l;
		if (i)
			li.sym = names[n - i];
		if (frame_of(x, &li, &out[k++]))
			return -ENOMEM;
	}
	return k;
}

bool pmon__symoff(struct ctx *x, const struct loc *l, uint64_t ip, uint64_t *off)
{
	uint64_t start;

	if (ip >= 0xffff800000000000ULL) {
		if (!kernel_symbol_at(x, ip, &start))
			return false;
		*off = ip - start;
		return true;
	}
	if (l->file < 0 || !x->files[l->file].mod)
		return false;
	GElf_Off o = 0;
	GElf_Sym sym;
	const char *name = dwfl_module_addrinfo(x->files[l->file].mod, x->sc.addr[l->slot], &o,
						&sym, NULL, NULL, NULL);
	if (!name)
		return false;
	*off = o;
	return true;
}
