// SPDX-License-Identifier: MIT
/*
 * Reports from a recording (pmon/sample.h): read the chunks (CRC-checked;
 * a torn tail is a warning), follow MMAP2/FORK records into per-process
 * maps, symbolize each unique address once with elfutils (libdwfl, offline
 * modules; the file offset is turned into the ELF address through its
 * PT_LOAD segments), and aggregate by symbol, DSO or source line, most
 * samples first; call chains become stacks of interned frames (the exports
 * in export.c draw on them); pmon_annotate() counts the samples of one
 * symbol per instruction (disassembled in annotate.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <gelf.h>
#include <libgen.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <pthread.h>
#include <unistd.h>
#include <zlib.h>

#include "internal.h"
#include "report/report.h"
#include "sample/datafile.h"
#include <pmon/sample.h>

struct map {
	uint32_t pid;
	uint64_t start, end, pgoff;
	int file; /* index into files */
};

struct file {
	char *path;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	bool tried;
	uint8_t bid[20]; /* the build id the kernel recorded, if it did */
	uint8_t bidlen;
};

struct sym_cache { /* (file, offset) -> symbol name, address, line; open addressing */
	int *file;
	uint64_t *off;
	char **name;
	uint64_t *addr; /* in the module's Dwfl address space */
	char **line; /* "file.c:42", looked up on first use */
	char **inl; /* functions inlined there, innermost first, tab-separated; on first use */
	size_t cap, n;
};

struct counter { /* string -> samples, period, order of first use */
	char **key;
	uint64_t *samples, *period;
	uint32_t *index;
	size_t cap, n;
};

/* Where an address resolved to. */
struct loc {
	const char *sym, *dso;
	int file; /* -1: not an ELF file on disk */
	size_t slot; /* its sym_cache slot where file >= 0 */
};

struct jit_sym {
	uint64_t start, end;
	char *name;
};

struct jit_map { /* /tmp/perf-PID.map of one process, sorted by start */
	uint32_t pid;
	struct jit_sym *s;
	size_t n;
};

struct ctx {
	struct jit_map *jit;
	size_t njit;
	struct map *maps;
	size_t nmaps, capmaps;
	struct file *files;
	size_t nfiles, capfiles;
	struct sym_cache sc;
	struct counter agg, frames, stacks;
	enum pmon_report_sort sort;
	uint64_t sample_type, regs_user;
	struct pmon_report *r;
	const char *debug_dir;
	bool inlines; /* expand inlined functions in the stacks */
	char *dipath; /* elfutils' debuginfo path with debug_dir in it */
	char *dipath_dir; /* debug_dir made absolute */
	Dwfl_Callbacks cb;
	unsigned nstale; /* files whose build id is not the recorded one */
	char stale_first[300];
	struct file_ksym *fk; /* the recording's kernel symbols, by start */
	size_t nfk;
	/* pmon_annotate(): the samples of one symbol, by (file, address) */
	const char *want;
	struct counter hits; /* "file\taddress" */
	const char *want_where; /* "kernel" or "JIT" where the symbol is not in a file */
	struct ev_id { /* a sample's identifier -> its event (PMON_RECORD_EVENT) */
		uint64_t id;
		unsigned ev;
	} * evids;
	size_t nevids;
	const char *stack_event_name; /* opts->event */
	unsigned stack_ev; /* the event of the stacks and annotations */
	bool stack_ev_found;
	struct unw_proc { /* DWARF unwinders, one per process, rebuilt when its maps grow */
		uint32_t pid;
		struct pmon__unw *u;
		bool stale;
	} * unw;
	size_t nunw;
};

static uint64_t fnv(const void *p, size_t n, uint64_t h)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h;
}

/* Count one sample of @period under @key; *@index (if given) is the key's
 * order of first use, which stays put as the table grows. */
static int counter_add(struct counter *c, const char *key, uint64_t period, uint32_t *index)
{
	if (c->n * 2 >= c->cap) {
		struct counter nc = { 0 };
		nc.cap = c->cap ? c->cap * 2 : 1024;
		nc.key = calloc(nc.cap, sizeof(char *));
		nc.samples = calloc(nc.cap, sizeof(uint64_t));
		nc.period = calloc(nc.cap, sizeof(uint64_t));
		nc.index = calloc(nc.cap, sizeof(uint32_t));
		if (!nc.key || !nc.samples || !nc.period || !nc.index) {
			free(nc.key), free(nc.samples), free(nc.period), free(nc.index);
			return -ENOMEM;
		}
		for (size_t i = 0; i < c->cap; i++) {
			if (!c->key[i])
				continue;
			size_t j = fnv(c->key[i], strlen(c->key[i]), 14695981039346656037ULL) &
				(nc.cap - 1);
			while (nc.key[j])
				j = (j + 1) & (nc.cap - 1);
			nc.key[j] = c->key[i], nc.samples[j] = c->samples[i],
			nc.period[j] = c->period[i], nc.index[j] = c->index[i];
		}
		nc.n = c->n;
		free(c->key), free(c->samples), free(c->period), free(c->index);
		*c = nc;
	}
	size_t j = fnv(key, strlen(key), 14695981039346656037ULL) & (c->cap - 1);
	while (c->key[j] && strcmp(c->key[j], key))
		j = (j + 1) & (c->cap - 1);
	if (!c->key[j]) {
		c->key[j] = strdup(key);
		if (!c->key[j])
			return -ENOMEM;
		c->index[j] = (uint32_t)c->n++;
	}
	c->samples[j]++;
	c->period[j] += period;
	if (index)
		*index = c->index[j];
	return 0;
}

static void counter_free(struct counter *c)
{
	for (size_t i = 0; i < c->cap; i++)
		free(c->key[i]);
	free(c->key), free(c->samples), free(c->period), free(c->index);
}

static int file_index(struct ctx *x, const char *path, const uint8_t *bid, uint8_t bidlen)
{
	for (size_t i = 0; i < x->nfiles; i++)
		if (!strcmp(x->files[i].path, path) && x->files[i].bidlen == bidlen &&
		    !memcmp(x->files[i].bid, bid, bidlen))
			return (int)i;
	if (x->nfiles == x->capfiles) {
		size_t cap = x->capfiles ? x->capfiles * 2 : 64;
		struct file *f = realloc(x->files, cap * sizeof(*f));
		if (!f)
			return -1;
		x->files = f;
		x->capfiles = cap;
	}
	memset(&x->files[x->nfiles], 0, sizeof(x->files[0]));
	memcpy(x->files[x->nfiles].bid, bid, bidlen);
	x->files[x->nfiles].bidlen = bidlen;
	x->files[x->nfiles].path = strdup(path);
	return x->files[x->nfiles].path ? (int)x->nfiles++ : -1;
}

/* Open @path as @f's module (offline); false if elfutils cannot. */
static bool open_module(struct ctx *x, struct file *f, const char *path)
{
	if (access(path, R_OK))
		return false;
	f->dwfl = dwfl_begin(&x->cb);
	if (f->dwfl) {
		f->mod = dwfl_report_offline(f->dwfl, path, path, -1);
		dwfl_report_end(f->dwfl, NULL, NULL);
	}
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

static void close_module(struct file *f)
{
	if (f->dwfl)
		dwfl_end(f->dwfl);
	f->dwfl = NULL;
	f->mod = NULL;
}

/*
 * Open @f for symbols: the file itself when it is the one recorded (or no
 * build id was recorded), else debuginfo with the recorded build id
 * (--debug-dir, then /usr/lib/debug), else nothing: a rebuilt binary's
 * symbols would name the samples wrongly.
 */
static void open_file(struct ctx *x, struct file *f)
{
	char hex[41], path[4200];

	if (open_module(x, f, f->path) && (!f->bidlen || module_matches(f)))
		return;
	close_module(f);
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
		close_module(f);
	}
	if (!x->nstale++)
		pmon__fmt(x->stale_first, sizeof(x->stale_first), "%s, build id %s", f->path, hex);
}

/* The symbol at file offset @off of @f, or NULL; *@addr: the Dwfl address. */
static const char *resolve(struct ctx *x, struct file *f, uint64_t off, uint64_t pgoff,
			   uint64_t *addr)
{
	GElf_Addr bias;
	GElf_Sym sym;
	GElf_Off symoff;
	Elf *elf;
	size_t nph;

	if (!f->tried) {
		f->tried = true;
		if (f->path[0] == '[')
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
		if (off >= ph.p_offset && off < ph.p_offset + ph.p_filesz) {
			GElf_Addr a = off - ph.p_offset + ph.p_vaddr + bias;
			*addr = a;
			return dwfl_module_addrinfo(f->mod, a, &symoff, &sym, NULL, NULL, NULL);
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
		return dwfl_module_addrinfo(f->mod, a, &symoff, &sym, NULL, NULL, NULL);
	}
	return NULL;
}

/*
 * Kernel text symbols: those the recording carries (CHNS chunks, written
 * by the recorder from its machine's kallsyms), else this machine's
 * /proc/kallsyms, loaded once per process (a fuzzer calls the reader many
 * times). Empty where kptr_restrict shows every address as 0.
 */
static struct pmon__ksyms proc_ksyms;
static pthread_once_t ksyms_once = PTHREAD_ONCE_INIT;

static void ksyms_load(void)
{
	pmon__ksyms_load("/proc/kallsyms", &proc_ksyms);
}

struct file_ksym {
	uint64_t start, end;
	char *name;
};

static int file_ksym_cmp(const void *a, const void *b)
{
	const struct file_ksym *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static const char *kernel_symbol(const struct ctx *x, uint64_t ip)
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
		return lo && ip < x->fk[lo - 1].end ? x->fk[lo - 1].name : NULL;
	}
	pthread_once(&ksyms_once, ksyms_load);
	const struct pmon__ksym *k = pmon__ksyms_find(&proc_ksyms, ip, NULL);
	return k ? k->name : NULL;
}

static int jit_cmp(const void *a, const void *b)
{
	const struct jit_sym *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
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
		struct jit_map *nj = realloc(x->jit, (x->njit + 1) * sizeof(*nj));
		if (!nj)
			return NULL;
		x->jit = nj;
		j = &x->jit[x->njit++];
		*j = (struct jit_map){ .pid = pid };
		char path[64], line[1024];
		snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
		FILE *f = fopen(path, "re");
		size_t cap = 0;
		while (f && fgets(line, sizeof(line), f)) {
			unsigned long long start, size;
			int pos = 0;
			if (sscanf(line, "%llx %llx %n", &start, &size, &pos) < 2 || !pos || !size)
				continue;
			if (j->n == cap) {
				cap = cap ? cap * 2 : 64;
				struct jit_sym *ns = realloc(j->s, cap * sizeof(*ns));
				if (!ns)
					break;
				j->s = ns;
			}
			char *name = line + pos;
			name[strcspn(name, "\n")] = '\0';
			if (!(j->s[j->n].name = strdup(name)))
				break;
			j->s[j->n].start = start;
			j->s[j->n++].end = start + size;
		}
		if (f)
			fclose(f);
		if (j->n)
			qsort(j->s, j->n, sizeof(*j->s), jit_cmp);
	}
	/* The entry with the greatest start at or below ip, if ip is inside it. */
	size_t lo = 0, hi = j->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (j->s[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && ip < j->s[lo - 1].end ? j->s[lo - 1].name : NULL;
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
			size_t j = (fnv(&c->off[k], 8, (uint64_t)c->file[k])) & (cap - 1);
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
	size_t j = fnv(&off, 8, (uint64_t)file) & (c->cap - 1);
	while (c->file[j] >= 0 && !(c->file[j] == file && c->off[j] == off))
		j = (j + 1) & (c->cap - 1);
	if (c->file[j] < 0) {
		uint64_t addr = 0;
		const char *s = resolve(x, &x->files[file], off, pgoff, &addr);
		c->file[j] = file;
		c->off[j] = off;
		c->addr[j] = addr;
		c->name[j] = strdup(s ? s : "[unknown]");
		c->n++;
	}
	return (long)j;
}

/* Where @ip of process @pid lands: symbol, DSO, and the file it came from. */
static void locate(struct ctx *x, uint32_t pid, uint64_t ip, struct loc *l)
{
	const char *js;

	*l = (struct loc){ .sym = "[unknown]", .dso = "[unknown]", .file = -1 };
	if (ip >= 0xffff800000000000ULL) {
		l->dso = "[kernel]";
		l->sym = (js = kernel_symbol(x, ip)) ? js : "[kernel]";
		return;
	}
	for (size_t i = x->nmaps; i-- > 0;) {
		struct map *m = &x->maps[i];
		if (m->pid != pid || ip < m->start || ip >= m->end)
			continue;
		struct file *f = &x->files[m->file];
		l->dso = f->path;
		if (f->path[0] != '/' ||
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
static const char *srcline(struct ctx *x, const struct loc *l)
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
		Dwarf_Die *scopes = NULL;
		int n = cu ? dwarf_getscopes(cu, c->addr[l->slot] - bias, &scopes) : 0;
		char buf[1024] = "";
		size_t off = 0;
		for (int i = 0; i < n; i++) {
			const char *name;
			if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine ||
			    !(name = dwarf_diename(&scopes[i])))
				continue;
			int w = snprintf(buf + off, sizeof(buf) - off, "%s%s", off ? "\t" : "",
					 name);
			if (w < 0 || (size_t)w >= sizeof(buf) - off)
				break;
			off += (size_t)w;
		}
		free(scopes);
		c->inl[l->slot] = strdup(buf);
	}
	return c->inl[l->slot] ? c->inl[l->slot] : "";
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/* The frame index of a located address ("symbol\tdso" interned). */
static int frame_of(struct ctx *x, const struct loc *l, uint32_t *index)
{
	char key[600];

	pmon__fmt(key, sizeof(key), "%s\t%s", l->sym, base_name(l->dso));
	return counter_add(&x->frames, key, 0, index);
}

/* Append a located frame to a stack key ("3,17,5"), then the functions
 * inlined there, outermost first, when the report asked for them. */
static int stack_push(struct ctx *x, const struct loc *l, char *stack, size_t size, size_t *off)
{
	const char *inl = x->inlines ? inlines(x, l) : "";
	const char *names[32];
	size_t n = 0;
	char buf[1024];
	uint32_t fi;
	int err;

	pmon__strlcpy(buf, inl, sizeof(buf));
	for (char *p = buf; *p && n < 32;) {
		names[n++] = p;
		if (!(p = strchr(p, '\t')))
			break;
		*p++ = '\0';
	}
	for (size_t i = 0; i <= n; i++) {
		struct loc li = *l;
		if (i)
			li.sym = names[n - i];
		if ((err = frame_of(x, &li, &fi)))
			return err;
		int w = snprintf(stack + *off, size - *off, "%s%u", *off ? "," : "", fi);
		if (w < 0 || (size_t)w >= size - *off)
			return 0; /* deeper than the key holds: cut */
		*off += (size_t)w;
	}
	return 0;
}

static int add_map(struct ctx *x, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		   const char *file, const uint8_t *bid, uint8_t bidlen)
{
	int fi = file_index(x, file, bid, bidlen);

	if (fi < 0)
		return -ENOMEM;
	if (x->nmaps == x->capmaps) {
		size_t cap = x->capmaps ? x->capmaps * 2 : 256;
		struct map *m = realloc(x->maps, cap * sizeof(*m));
		if (!m)
			return -ENOMEM;
		x->maps = m;
		x->capmaps = cap;
	}
	x->maps[x->nmaps++] = (struct map){ pid, start, start + len, pgoff, fi };
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
static int unwind(struct ctx *x, uint32_t pid, const uint64_t *regs, const uint8_t *stack,
		  uint64_t size, uint64_t *pcs, int max)
{
	struct unw_proc *p = NULL;

	for (size_t i = 0; i < x->nunw; i++)
		if (x->unw[i].pid == pid)
			p = &x->unw[i];
	if (!p) {
		struct unw_proc *n = realloc(x->unw, (x->nunw + 1) * sizeof(*n));
		if (!n)
			return 0;
		x->unw = n;
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

static int on_record(struct ctx *x, const uint8_t *p, size_t len)
{
	const struct perf_event_header *h = (const void *)p;
	const uint8_t *q = p + sizeof(*h);

	switch (h->type) {
	case PERF_RECORD_MMAP2:
		if (len > 72) {
			uint32_t pid;
			uint64_t addr, mlen, pgoff;
			memcpy(&pid, q, 4);
			memcpy(&addr, q + 8, 8);
			memcpy(&mlen, q + 16, 8);
			memcpy(&pgoff, q + 24, 8);
			char name[4096];
			uint8_t bidlen = 0;
			pmon__fmt(name, sizeof(name), "%.*s", (int)(len - 72),
				  (const char *)p + 72);
			/* Linux 5.12+: the build id where device and inode were. */
			if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)
				bidlen = q[32] <= 20 ? q[32] : 20;
			return add_map(x, pid, addr, mlen, pgoff, name, q + 36, bidlen);
		}
		return 0;
	case PERF_RECORD_FORK:
		if (len >= 8 + 16) {
			uint32_t pid, ppid;
			memcpy(&pid, q, 4);
			memcpy(&ppid, q + 4, 4);
			if (pid != ppid) /* a new process: it starts with its parent's maps */
				for (size_t i = 0, n = x->nmaps; i < n; i++)
					if (x->maps[i].pid == ppid) {
						struct map m = x->maps[i];
						const struct file *mf = &x->files[m.file];
						if (add_map(x, pid, m.start, m.end - m.start,
							    m.pgoff, mf->path, mf->bid, mf->bidlen))
							return -ENOMEM;
					}
		}
		return 0;
	case PERF_RECORD_LOST:
		if (len >= 8 + 16) {
			uint64_t lost;
			memcpy(&lost, q + 8, 8);
			x->r->lost += lost;
		}
		return 0;
	case PMON_RECORD_EVENT:
		if (len >= sizeof(struct pmon_record_event)) {
			struct pmon_record_event re;
			memcpy(&re, p, sizeof(re));
			if (re.index >= PMON_ARRAY_SIZE(x->r->events))
				return 0;
			struct pmon_report_event *ev = &x->r->events[re.index];
			pmon__fmt(ev->name, sizeof(ev->name), "%.*s", (int)sizeof(re.name),
				  re.name);
			ev->sample_period = re.period;
			ev->freq = re.freq;
			if (re.index >= x->r->nevents)
				x->r->nevents = re.index + 1;
			if (x->stack_event_name && !strcmp(ev->name, x->stack_event_name)) {
				x->stack_ev = re.index;
				x->stack_ev_found = true;
			}
			size_t n = (len - sizeof(re)) / 8;
			if (re.nids < n)
				n = re.nids;
			struct ev_id *ni = realloc(x->evids, (x->nevids + n + 1) * sizeof(*ni));
			if (!ni)
				return -ENOMEM;
			x->evids = ni;
			for (size_t i = 0; i < n; i++) {
				memcpy(&x->evids[x->nevids].id, p + sizeof(re) + 8 * i, 8);
				x->evids[x->nevids++].ev = re.index;
			}
		}
		return 0;
	case PERF_RECORD_SAMPLE: {
		uint64_t ip = 0, period = 1, nr = 0, sid = 0;
		uint32_t pid = 0;
		unsigned ev = 0;
		const uint8_t *e = p + len;
		const uint64_t *chain = NULL;
		if (x->sample_type & PERF_SAMPLE_IDENTIFIER && q + 8 <= e)
			memcpy(&sid, q, 8), q += 8;
		for (size_t i = 0; sid && i < x->nevids; i++)
			if (x->evids[i].id == sid)
				ev = x->evids[i].ev;
		if (x->sample_type & PERF_SAMPLE_IP && q + 8 <= e)
			memcpy(&ip, q, 8), q += 8;
		if (x->sample_type & PERF_SAMPLE_TID && q + 8 <= e)
			memcpy(&pid, q, 4), q += 8;
		if (x->sample_type & PERF_SAMPLE_TIME)
			q += 8;
		if (x->sample_type & PERF_SAMPLE_CPU)
			q += 8;
		if (!(x->sample_type & PERF_SAMPLE_PERIOD) && x->r->events[ev].sample_period)
			period = x->r->events[ev].sample_period; /* fixed: recorded once */
		if (x->sample_type & PERF_SAMPLE_PERIOD && q + 8 <= e)
			memcpy(&period, q, 8), q += 8;
		if (x->sample_type & PERF_SAMPLE_CALLCHAIN && q + 8 <= e) {
			memcpy(&nr, q, 8);
			q += 8;
			if (nr <= (uint64_t)(e - q) / 8) {
				chain = (const uint64_t *)q;
				q += nr * 8;
			} else {
				nr = 0;
				q = e;
			}
		}
		/* DWARF mode: the user registers and a copy of the user stack. */
		uint64_t uregs[17], ustack_size = 0;
		const uint8_t *ustack = NULL;
		bool have_regs = false;
		if (x->sample_type & PERF_SAMPLE_REGS_USER && q + 8 <= e) {
			uint64_t abi, n = (uint64_t)__builtin_popcountll(x->regs_user);
			memcpy(&abi, q, 8);
			q += 8;
			if (abi && n <= (uint64_t)(e - q) / 8) {
				have_regs = x->regs_user == PMON_REGS_USER_X86;
				if (have_regs)
					memcpy(uregs, q, sizeof(uregs));
				q += n * 8;
			}
		}
		if (x->sample_type & PERF_SAMPLE_STACK_USER && q + 8 <= e) {
			uint64_t size, dyn;
			memcpy(&size, q, 8);
			q += 8;
			if (size && size <= (uint64_t)(e - q) && (uint64_t)(e - q) - size >= 8) {
				memcpy(&dyn, q + size, 8);
				ustack = q;
				ustack_size = dyn < size ? dyn : size;
			}
		}
		uint64_t unwound[128];
		int nunwound = have_regs && ustack
			? unwind(x, pid, uregs, ustack, ustack_size, unwound, 128)
			: 0;
		struct loc l;
		char key[900];
		x->r->events[ev].samples++;
		x->r->events[ev].period += period;
		if (x->want && ev != x->stack_ev)
			return 0; /* pmon_annotate(): another event's sample */
		locate(x, pid, ip, &l);
		if (x->want) { /* pmon_annotate(): only the wanted symbol's addresses */
			x->r->samples++;
			x->r->period += period;
			if (l.file < 0 && !strcmp(l.sym, x->want))
				x->want_where = !strcmp(l.dso, "[kernel]") ? "kernel" : "JIT";
			if (l.file < 0 || strcmp(l.sym, x->want))
				return counter_add(&x->agg, l.sym, period, NULL);
			pmon__fmt(key, sizeof(key), "%d\t%llx", l.file,
				  (unsigned long long)x->sc.addr[l.slot]);
			return counter_add(&x->hits, key, period, NULL);
		}
		if (x->sort == PMON_SORT_DSO) {
			pmon__fmt(key, sizeof(key), "%u\t%s", ev, base_name(l.dso));
		} else if (x->sort == PMON_SORT_LINE) {
			const char *ln = srcline(x, &l);
			pmon__fmt(key, sizeof(key), "%u\t%s\t%s\t%s", ev, l.sym, base_name(l.dso),
				  ln ? ln : "[unknown]");
		} else {
			pmon__fmt(key, sizeof(key), "%u\t%s\t%s", ev, l.sym, base_name(l.dso));
		}
		x->r->samples++;
		x->r->period += period;
		int err = counter_add(&x->agg, key, period, NULL);
		if (err || ev != x->stack_ev)
			return err; /* the stacks are one event's */
		/* The stack as frame indexes, outermost first; context markers dropped.
		 * Leaf first the frames are the kernel's chain (all of it, or only its
		 * kernel part in DWARF mode), then the unwound user frames. */
		char stack[8192];
		size_t off = 0;
		uint64_t all[256];
		bool ret[256]; /* a return address: resolved at addr - 1, inside its call */
		size_t nall = 0;
		bool fresh = true; /* the entry after a context marker is where it ran */
		for (uint64_t k = 0; chain && k < nr && nall < 128; k++) {
			memcpy(&all[nall], &chain[k], 8);
			if (all[nall] >= (uint64_t)-4095) {
				fresh = true;
				continue;
			}
			ret[nall++] = !fresh;
			fresh = false;
		}
		for (int k = 0; k < nunwound; k++) {
			ret[nall] = k > 0;
			all[nall++] = unwound[k];
		}
		if (nall)
			x->r->callchains = true;
		if (!nall) { /* no chain: the sampled address alone */
			all[nall] = ip;
			ret[nall++] = false;
		}
		for (size_t k = nall; !err && k-- > 0;) {
			struct loc l2;
			locate(x, pid, ret[k] && all[k] ? all[k] - 1 : all[k], &l2);
			err = stack_push(x, &l2, stack, sizeof(stack), &off);
		}
		if (!err && off)
			err = counter_add(&x->stacks, stack, period, NULL);
		return err;
	}
	default:
		return 0;
	}
}

static int cmp_entry(const void *a, const void *b) /* by event, most samples first */
{
	const struct pmon_report_entry *x = a, *y = b;

	if (x->event != y->event)
		return x->event < y->event ? -1 : 1;
	return (x->samples < y->samples) - (x->samples > y->samples);
}

static void ctx_free(struct ctx *x)
{
	free(x->evids);
	for (size_t i = 0; i < x->nunw; i++)
		pmon__unw_free(x->unw[i].u);
	free(x->unw);
	free(x->dipath);
	free(x->dipath_dir);
	for (size_t i = 0; i < x->nfk; i++)
		free(x->fk[i].name);
	free(x->fk);
	counter_free(&x->agg);
	counter_free(&x->frames);
	counter_free(&x->stacks);
	counter_free(&x->hits);
	for (size_t i = 0; i < x->nfiles; i++) {
		if (x->files[i].dwfl)
			dwfl_end(x->files[i].dwfl);
		free(x->files[i].path);
	}
	free(x->files);
	free(x->maps);
	for (size_t i = 0; i < x->njit; i++) {
		for (size_t k = 0; k < x->jit[i].n; k++)
			free(x->jit[i].s[k].name);
		free(x->jit[i].s);
	}
	free(x->jit);
	for (size_t i = 0; i < x->sc.cap; i++)
		free(x->sc.name[i]), free(x->sc.line[i]), free(x->sc.inl[i]);
	free(x->sc.file), free(x->sc.off), free(x->sc.name), free(x->sc.addr), free(x->sc.line);
	free(x->sc.inl);
}

/*
 * Collect the kernel symbols a recording carries: walk the chunk headers
 * (seeking over the payloads) and parse the CHNS chunks, which come last.
 * A damaged chunk ends the walk quietly; the main pass reports it.
 */
static int read_ksym_chunks(FILE *f, long from, struct ctx *x, uint8_t *buf)
{
	struct pmon_data_chunk c;
	size_t cap = 0;

	fseek(f, from, SEEK_SET);
	while (fread(&c, 1, sizeof(c), f) == sizeof(c) && c.len <= PMON_CHUNK_RAW_MAX) {
		if (memcmp(c.magic, PMON_CHUNKS_MAGIC, 4)) {
			if (fseek(f, (long)c.len, SEEK_CUR))
				break;
			continue;
		}
		if (fread(buf, 1, c.len, f) != c.len || crc32(0L, buf, c.len) != c.crc)
			break;
		for (size_t off = 0; off + sizeof(struct pmon_record_ksym) < c.len;) {
			struct pmon_record_ksym k;
			memcpy(&k, buf + off, sizeof(k));
			if (k.size <= sizeof(k) || off + k.size > c.len)
				break;
			if (k.type == PMON_RECORD_KSYM && k.start < k.end) {
				if (x->nfk == cap) {
					cap = cap ? cap * 2 : 1024;
					struct file_ksym *n = realloc(x->fk, cap * sizeof(*n));
					if (!n)
						return -ENOMEM;
					x->fk = n;
				}
				char *name = strndup((const char *)buf + off + sizeof(k),
						     k.size - sizeof(k));
				if (!name)
					return -ENOMEM;
				x->fk[x->nfk++] = (struct file_ksym){ k.start, k.end, name };
			}
			off += k.size;
		}
	}
	if (x->nfk > 1)
		qsort(x->fk, x->nfk, sizeof(*x->fk), file_ksym_cmp);
	fseek(f, from, SEEK_SET);
	return 0;
}

/* Read the recording at @path into @x (and x->r's header and totals). */
static int scan(const char *path, struct ctx *x)
{
	struct pmon_report *r = x->r;
	struct pmon_data_disk_header dh;
	struct pmon_data_chunk c;
	FILE *f = fopen(path, "re");
	uint8_t *buf = NULL, *zbuf = NULL;
	unsigned chunk = 0;
	int err = 0;

	if (!f)
		return pmon__err(-errno, "%s: %s", path, strerror(errno));
	if (fread(&dh, 1, sizeof(dh), f) != sizeof(dh) || memcmp(dh.magic, PMON_DATA_MAGIC, 8)) {
		fclose(f);
		return pmon__err(-PMON_ERRNO__PARSE,
				 "%s: not a pmon recording (no PMONDATA header)", path);
	}
	if (dh.version < 1 || dh.version > PMON_DATA_VERSION || dh.header_size < sizeof(dh)) {
		fclose(f);
		return pmon__err(-PMON_ERRNO__PARSE,
				 "%s: recording format version %u (this pmon reads 1 to %d)", path,
				 dh.version, PMON_DATA_VERSION);
	}
	struct pmon_data_disk_header_ext ext = { 0 };
	if (dh.header_size >= sizeof(dh) + sizeof(ext) &&
	    fread(&ext, 1, sizeof(ext), f) != sizeof(ext)) {
		fclose(f);
		return pmon__err(-PMON_ERRNO__PARSE, "%s: the header is cut short", path);
	}
	fseek(f, (long)dh.header_size, SEEK_SET);
	r->header.regs_user = x->regs_user = ext.regs_user;
	r->header.sample_type = x->sample_type = dh.sample_type;
	r->header.attr_type = dh.attr_type;
	r->header.attr_config = dh.attr_config;
	r->header.period = dh.period;
	r->header.freq = dh.freq;
	pmon__strlcpy(r->header.event, dh.event, sizeof(r->header.event));
	pmon__strlcpy(r->header.command, dh.command, sizeof(r->header.command));
	/* One event unless PMON_RECORD_EVENT records say more. */
	pmon__strlcpy(r->events[0].name, dh.event, sizeof(r->events[0].name));
	r->events[0].sample_period = dh.period;
	r->events[0].freq = dh.freq;
	r->nevents = 1;
	buf = malloc(PMON_CHUNK_RAW_MAX);
	zbuf = malloc(PMON_CHUNK_RAW_MAX);
	if (!buf || !zbuf ||
	    (dh.version >= 2 && read_ksym_chunks(f, (long)dh.header_size, x, buf))) {
		fclose(f);
		free(buf);
		free(zbuf);
		return -ENOMEM;
	}
	for (;; chunk++) {
		size_t got = fread(&c, 1, sizeof(c), f);
		if (got == 0)
			break;
		bool z = got == sizeof(c) && dh.version >= 2 &&
			!memcmp(c.magic, PMON_CHUNKZ_MAGIC, 4);
		bool syms = got == sizeof(c) && dh.version >= 2 &&
			!memcmp(c.magic, PMON_CHUNKS_MAGIC, 4);
		if (got != sizeof(c) || (!z && !syms && memcmp(c.magic, PMON_CHUNK_MAGIC, 4)) ||
		    c.len > PMON_CHUNK_RAW_MAX) {
			r->truncated = true;
			snprintf(r->warning, sizeof(r->warning),
				 "chunk %u is damaged or cut short: reporting the %u chunks before "
				 "it",
				 chunk, chunk);
			break;
		}
		uint8_t *stored = z ? zbuf : buf;
		if (fread(stored, 1, c.len, f) != c.len || crc32(0L, stored, c.len) != c.crc) {
			r->truncated = true;
			snprintf(r->warning, sizeof(r->warning),
				 "chunk %u is cut short or fails its CRC (the recording was "
				 "killed?): "
				 "reporting the %u chunks before it",
				 chunk, chunk);
			break;
		}
		if (syms)
			continue; /* kernel symbols: read before this pass */
		if (z) {
			uLongf raw = PMON_CHUNK_RAW_MAX;
			if (uncompress(buf, &raw, zbuf, c.len) != Z_OK) {
				r->truncated = true;
				snprintf(r->warning, sizeof(r->warning),
					 "chunk %u does not inflate: reporting the %u chunks "
					 "before it",
					 chunk, chunk);
				break;
			}
			c.len = (uint32_t)raw;
		}
		for (size_t off = 0; off + sizeof(struct perf_event_header) <= c.len && !err;) {
			const struct perf_event_header *h = (const void *)(buf + off);
			if (h->size < sizeof(*h) || off + h->size > c.len)
				break;
			err = on_record(x, buf + off, h->size);
			off += h->size;
		}
		if (err)
			break;
	}
	fclose(f);
	free(buf);
	free(zbuf);
	return err;
}

static void ctx_init(struct ctx *x, struct pmon_report *r, const struct pmon_report_opts *o)
{
	memset(x, 0, sizeof(*x));
	x->r = r;
	x->sort = o ? o->sort : PMON_SORT_SYMBOL;
	x->inlines = o && o->inlines;
	x->stack_event_name = o && o->event && o->event[0] ? o->event : NULL;
	/* elfutils' default path with the user's directory (absolute: elfutils
	 * reads a relative one as relative to the binary) before /usr/lib/debug:
	 * a stripped file's debuginfo is found through its build-id note. */
	char *abs = o && o->debug_dir && o->debug_dir[0] ? realpath(o->debug_dir, NULL) : NULL;
	if (abs && asprintf(&x->dipath, ":.debug:%s:/usr/lib/debug", abs) < 0)
		x->dipath = NULL;
	free(abs);
	x->debug_dir = NULL;
	if (x->dipath) {
		x->dipath_dir = strdup(x->dipath + strlen(":.debug:"));
		if (x->dipath_dir)
			x->dipath_dir[strlen(x->dipath_dir) - strlen(":/usr/lib/debug")] = '\0';
		x->debug_dir = x->dipath_dir;
	}
	x->cb = (Dwfl_Callbacks){ .find_debuginfo = dwfl_standard_find_debuginfo,
				  .section_address = dwfl_offline_section_address,
				  .debuginfo_path = x->dipath ? &x->dipath : NULL };
}

/* After a scan: the event asked for must be one the recording holds. */
static int check_event(struct ctx *x, const char *path)
{
	struct pmon_report *r = x->r;
	char have[512] = "";
	size_t off = 0;

	r->stack_event = x->stack_ev;
	if (!x->stack_event_name || x->stack_ev_found ||
	    (r->nevents == 1 && !strcmp(r->events[0].name, x->stack_event_name)))
		return 0;
	for (size_t i = 0; i < r->nevents; i++) {
		int w = snprintf(have + off, sizeof(have) - off, "%s%s", i ? ", " : "",
				 r->events[i].name);
		if (w < 0 || (size_t)w >= sizeof(have) - off)
			break;
		off += (size_t)w;
	}
	return pmon__err(-ENOENT, "event '%s' is not in %s (it holds: %s)", x->stack_event_name,
			 path, have);
}

/* The stale-file note of a finished scan. */
static void note_stale(struct ctx *x)
{
	if (x->nstale)
		pmon__fmt(x->r->stale, sizeof(x->r->stale),
			  "%u file%s changed since the recording and no debuginfo has the "
			  "recorded build id (%s): %s samples are [unknown]; --debug-dir DIR "
			  "with DIR/.build-id/ names them",
			  x->nstale, x->nstale > 1 ? "s" : "", x->stale_first,
			  x->nstale > 1 ? "their" : "its");
}

void pmon_report_release(struct pmon_report *r)
{
	free(r->e);
	for (size_t i = 0; i < r->nframes; i++)
		free(r->frames[i].symbol), free(r->frames[i].dso);
	free(r->frames);
	for (size_t i = 0; i < r->nstacks; i++)
		free(r->stacks[i].frame);
	free(r->stacks);
	memset(r, 0, sizeof(*r));
}

/* Split "a\tb\tc\td" into up to four fields (the tabs become NULs). */
static size_t split(char *key, char **field)
{
	size_t n = 0;

	for (char *p = key; n < 4; n++) {
		field[n] = p;
		if (!(p = strchr(p, '\t'))) {
			n++;
			break;
		}
		*p++ = '\0';
	}
	return n;
}

static int build_entries(struct ctx *x, struct pmon_report *r)
{
	if (!x->agg.n)
		return 0;
	r->e = calloc(x->agg.n, sizeof(*r->e));
	if (!r->e)
		return -ENOMEM;
	for (size_t i = 0; i < x->agg.cap; i++) {
		if (!x->agg.key[i])
			continue;
		struct pmon_report_entry *e = &r->e[r->n++];
		char *fld[4];
		size_t nf = split(x->agg.key[i], fld);
		e->event = (unsigned)strtoul(fld[0], NULL, 10);
		if (x->sort == PMON_SORT_DSO) {
			pmon__strlcpy(e->dso, nf > 1 ? fld[1] : "", sizeof(e->dso));
		} else {
			pmon__strlcpy(e->symbol, nf > 1 ? fld[1] : "", sizeof(e->symbol));
			pmon__strlcpy(e->dso, nf > 2 ? fld[2] : "", sizeof(e->dso));
			pmon__strlcpy(e->line, nf > 3 ? fld[3] : "", sizeof(e->line));
		}
		e->samples = x->agg.samples[i];
		e->period = x->agg.period[i];
	}
	qsort(r->e, r->n, sizeof(*r->e), cmp_entry);
	return 0;
}

static int build_stacks(struct ctx *x, struct pmon_report *r)
{
	if (x->frames.n) {
		r->frames = calloc(x->frames.n, sizeof(*r->frames));
		if (!r->frames)
			return -ENOMEM;
		r->nframes = x->frames.n;
		for (size_t i = 0; i < x->frames.cap; i++) {
			char *fld[4];
			if (!x->frames.key[i] || split(x->frames.key[i], fld) < 2)
				continue;
			struct pmon_report_frame *f = &r->frames[x->frames.index[i]];
			f->symbol = strdup(fld[0]);
			f->dso = strdup(fld[1]);
			if (!f->symbol || !f->dso)
				return -ENOMEM;
		}
	}
	if (!x->stacks.n)
		return 0;
	r->stacks = calloc(x->stacks.n, sizeof(*r->stacks));
	if (!r->stacks)
		return -ENOMEM;
	for (size_t i = 0; i < x->stacks.cap; i++) {
		const char *k = x->stacks.key[i];
		if (!k)
			continue;
		struct pmon_report_stack *st = &r->stacks[r->nstacks++];
		uint32_t depth = 1;
		for (const char *p = k; *p; p++)
			depth += *p == ',';
		st->frame = calloc(depth, sizeof(uint32_t));
		if (!st->frame)
			return -ENOMEM;
		for (char *end; *k && st->depth < depth; k = *end ? end + 1 : end) {
			unsigned long v = strtoul(k, &end, 10);
			if (v < r->nframes)
				st->frame[st->depth++] = (uint32_t)v;
		}
		st->samples = x->stacks.samples[i];
		st->period = x->stacks.period[i];
	}
	return 0;
}

int pmon_report_read(const char *path, const struct pmon_report_opts *opts, struct pmon_report *r)
{
	struct ctx x;
	int err;

	memset(r, 0, sizeof(*r));
	ctx_init(&x, r, opts);
	err = scan(path, &x);
	if (!err)
		err = check_event(&x, path);
	note_stale(&x);
	if (!err)
		err = build_entries(&x, r);
	if (!err)
		err = build_stacks(&x, r);
	ctx_free(&x);
	if (err)
		pmon_report_release(r);
	return err;
}

void pmon_annotation_release(struct pmon_annotation *a)
{
	free(a->insn);
	for (size_t i = 0; i < a->nsrcs; i++)
		free(a->srcs[i]);
	free(a->srcs);
	memset(a, 0, sizeof(*a));
}

/* The @n symbols with most samples, as "a, b, c", for an error message. */
static void hottest(const struct counter *c, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int k = 0; k < 5; k++) {
		size_t best = SIZE_MAX;
		for (size_t i = 0; i < c->cap; i++)
			if (c->key[i] && c->samples[i] &&
			    (best == SIZE_MAX || c->samples[i] > c->samples[best]))
				best = i;
		if (best == SIZE_MAX)
			break;
		int w = snprintf(buf + off, len - off, "%s%s", off ? ", " : "", c->key[best]);
		if (w < 0 || (size_t)w >= len - off)
			break;
		off += (size_t)w;
		c->samples[best] = 0; /* taken; the counter is not used again */
	}
}

int pmon_annotate(const char *path, const char *symbol, const struct pmon_report_opts *opts,
		  struct pmon_annotation *a)
{
	struct pmon_report r = { 0 };
	struct pmon_report_opts o = { .sz = sizeof(o),
				      .sort = PMON_SORT_SYMBOL,
				      .debug_dir = opts ? opts->debug_dir : NULL,
				      .event = opts ? opts->event : NULL };
	struct ctx x;
	char hot[512];
	int err;

	memset(a, 0, sizeof(*a));
	if (!symbol) { /* the hottest symbol of the recording */
		err = pmon_report_read(path, &o, &r);
		if (err)
			return err;
		if (!r.n) {
			pmon_report_release(&r);
			return pmon__err(-ENOENT, "%s holds no samples", path);
		}
		size_t top = 0; /* the hottest of the event asked for */
		while (top + 1 < r.n && r.e[top].event != r.stack_event)
			top++;
		pmon__strlcpy(a->symbol, r.e[top].symbol, sizeof(a->symbol));
		pmon_report_release(&r);
		if (!strcmp(a->symbol, "[unknown]"))
			return pmon__err(-ENOENT, "%s: the hottest code has no symbol: name one",
					 path);
	} else {
		pmon__strlcpy(a->symbol, symbol, sizeof(a->symbol));
	}
	ctx_init(&x, &r, &o);
	x.want = a->symbol;
	err = scan(path, &x);
	if (!err)
		err = check_event(&x, path);
	a->total = r.samples;
	/* The file holding most of the symbol's samples. */
	int best = -1;
	uint64_t *per_file = err ? NULL : calloc(x.nfiles + 1, sizeof(uint64_t));
	for (size_t i = 0; per_file && i < x.hits.cap; i++)
		if (x.hits.key[i]) {
			int fi = atoi(x.hits.key[i]);
			per_file[fi] += x.hits.samples[i];
			if (best < 0 || per_file[fi] > per_file[best])
				best = fi;
		}
	if (!err && !per_file)
		err = -ENOMEM;
	if (!err && best < 0) {
		if (x.want_where)
			err = pmon__err(-ENOTSUP,
					"'%s' is %s code: its instructions are in no file on disk",
					a->symbol, x.want_where);
		else {
			hottest(&x.agg, hot, sizeof(hot));
			err = pmon__err(-ENOENT, "no samples in '%s'%s%s%s", a->symbol,
					hot[0] ? " (most samples: " : "", hot, hot[0] ? ")" : "");
		}
	}
	if (!err) {
		struct file *f = &x.files[best];
		uint64_t some = 0;
		pmon__strlcpy(a->dso, f->path, sizeof(a->dso));
		for (size_t i = 0; i < x.hits.cap; i++)
			if (x.hits.key[i] && atoi(x.hits.key[i]) == best) {
				some = strtoull(strchr(x.hits.key[i], '\t') + 1, NULL, 16);
				break;
			}
		err = pmon__disassemble(f->mod, some, a);
		for (size_t i = 0; !err && i < x.hits.cap; i++) {
			if (!x.hits.key[i] || atoi(x.hits.key[i]) != best)
				continue;
			uint64_t addr = strtoull(strchr(x.hits.key[i], '\t') + 1, NULL, 16);
			a->samples += x.hits.samples[i];
			for (size_t k = 0; k < a->n; k++)
				if (a->insn[k].addr + pmon__module_bias(f->mod) == addr) {
					a->insn[k].samples += x.hits.samples[i];
					a->insn[k].period += x.hits.period[i];
					break;
				}
		}
	}
	free(per_file);
	ctx_free(&x);
	if (err)
		pmon_annotation_release(a);
	return err;
}
