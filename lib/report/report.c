// SPDX-License-Identifier: MIT
/*
 * Reports from a recording (pmon/sample.h): read the chunks (CRC-checked;
 * a torn tail is a warning), follow MMAP2/FORK records into per-process
 * maps, symbolize each unique address once with elfutils (libdwfl, offline
 * modules; the file offset is turned into the ELF address through its
 * PT_LOAD segments), and aggregate by symbol, DSO or source line, most
 * period (then samples) first; call chains become stacks of interned frames (the exports
 * in export.c draw on them); pmon_annotate() counts the samples of one
 * symbol per instruction (disassembled in annotate.c).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <gelf.h>
#include <libgen.h>
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <pthread.h>
#include <unistd.h>

#include "internal.h"
#include "report/report.h"
#include "sample/datafile.h"
#include "sample/reader.h"
#include <pmon/sample.h>
#include <pmon/sim.h>

struct map {
	uint32_t pid;
	uint64_t start, end, pgoff;
	int file; /* index into files */
};

struct file {
	char *path;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct pmon__symindex syms; /* @mod's symbols by address, built on first use */
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

uint64_t pmon__module_bias(Dwfl_Module *mod)
{
	GElf_Addr bias = 0;

	return mod && dwfl_module_getelf(mod, &bias) ? bias : 0;
}

/* Where an address resolved to. */
struct loc {
	const char *sym, *dso;
	int file; /* -1: not an ELF file on disk */
	size_t slot; /* its sym_cache slot where file >= 0 */
};

struct jit_map { /* /tmp/perf-PID.map of one process, sorted by start */
	uint32_t pid;
	struct pmon__jit_sym *s;
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
	struct counter agg, frames;
	uint32_t *vis; /* vis[E]: the maps visible after E MMAP2/FORK records */
	size_t nvis, capvis;
	enum pmon_report_sort sort;
	uint64_t sample_type, regs_user;
	struct pmon_report *r;
	const char *debug_dir;
	bool inlines; /* expand inlined functions in the stacks */
	bool no_stacks; /* opts->no_stacks */
	char *dipath; /* elfutils' debuginfo path with debug_dir in it */
	char *dipath_dir; /* debug_dir made absolute */
	Dwfl_Callbacks cb;
	unsigned nstale; /* files whose build id is not the recorded one */
	char stale_first[300];
	struct file_ksym *fk; /* the recording's kernel symbols, by start */
	size_t nfk, capfk;
	/* pmon_annotate(): the samples of one symbol, by (file, address) */
	const char *want;
	struct counter hits; /* "file\taddress" */
	const char *want_where; /* "kernel" or "JIT" where the symbol is not in a file */
	struct ev_id { /* a sample's identifier -> its event (PMON_RECORD_EVENT) */
		uint64_t id;
		unsigned ev;
	} * evids;
	size_t nevids, capevids;
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

/* Count @samples samples of @period in all under @key; *@index (if given) is the key's
 * order of first use, which stays put as the table grows. */
static int counter_add(struct counter *c, const char *key, uint64_t samples, uint64_t period,
		       uint32_t *index)
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
	c->samples[j] += samples;
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

static void close_module(struct file *f)
{
	pmon__symindex_free(&f->syms);
	f->syms = (struct pmon__symindex){ 0 };
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
	pthread_once(&ksyms_once, ksyms_load);
	const struct pmon__ksym *k = pmon__ksyms_find(&proc_ksyms, ip, NULL);
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
 * frame is named by its symbol alone (locate()), and the start names the
 * same one (the last symbol starting at or below an address holds it), so
 * chains that differ only in where inside a kernel function they were are
 * one chain. Profiles taken at high rates are full of interrupt chains
 * whose leaves land on every instruction of a few functions: keeping each
 * raw chain cost the folded export 50-80 MB on 4.8 M samples (issue #16).
 * An address in no symbol is kept as it is.
 */
static uint64_t kernel_canonical(const struct ctx *x, uint64_t ip)
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
		struct jit_map *nj = realloc(x->jit, (x->njit + 1) * sizeof(*nj));
		if (!nj)
			return NULL;
		x->jit = nj;
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
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			struct pmon__jit_sym *ns = realloc(s, cap * sizeof(*ns));
			if (!ns)
				break;
			s = ns;
		}
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
static void locate(struct ctx *x, uint32_t pid, uint64_t ip, uint32_t epoch, struct loc *l)
{
	const char *js;
	/* The maps this process had when the sample was taken: the latest
	 * mapping of an address wins (exec, dlclose and dlopen reuse them). */
	size_t nmaps = epoch < x->nvis ? x->vis[epoch] : x->nmaps;

	*l = (struct loc){ .sym = "[unknown]", .dso = "[unknown]", .file = -1 };
	if (ip >= 0xffff800000000000ULL) {
		l->dso = "[kernel]";
		l->sym = (js = kernel_symbol(x, ip)) ? js : "[kernel]";
		return;
	}
	for (size_t i = nmaps; i-- > 0;) {
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
	return counter_add(&x->frames, key, 1, 0, index);
}

/* The frames of a located address into @out (up to @max): its function,
 * then the functions inlined there, outermost first, when the report asked
 * for them. Return: how many, or -ENOMEM. */
static int frames_of(struct ctx *x, const struct loc *l, uint32_t *out, int max)
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

static int vis_push(struct ctx *x);

/*
 * Apply a record that changes what the samples after it see (MMAP2, FORK:
 * each is one "epoch"; PMON_RECORD_EVENT), in file order: inline when one
 * thread reads, else after the parallel pass from the chunks' copies.
 */
/* Is the recorded event @have the one asked for, @want? The same name, or
 * for a simulated recording the same simulated event by either of its
 * names: pmon's ("sim/L1-dcache-load-misses", with or without the final
 * '/') or the engine's ("D1mr"). */
static bool event_is(const char *have, const char *want)
{
	if (!strcmp(have, want))
		return true;
	if (strncmp(have, "sim/", 4))
		return false;
	int a = pmon_sim_event__find(have), b = pmon_sim_event__find(want);
	return a >= 0 && a == b;
}

/* A PMON_RECORD_EVENT: one sampled event and its sample identifiers. */
static int add_event(struct ctx *x, const struct pmon__rec_event *re)
{
	if (re->index >= PMON_ARRAY_SIZE(x->r->events))
		return 0;
	struct pmon_report_event *ev = &x->r->events[re->index];
	pmon__strlcpy(ev->name, re->name, sizeof(ev->name));
	ev->sample_period = re->period;
	ev->freq = re->freq;
	if (re->index >= x->r->nevents)
		x->r->nevents = re->index + 1;
	if (x->stack_event_name && event_is(ev->name, x->stack_event_name)) {
		x->stack_ev = re->index;
		x->stack_ev_found = true;
	}
	if (PMON_GROW(&x->evids, &x->capevids, x->nevids + re->nids + 1))
		return -ENOMEM;
	for (size_t i = 0; i < re->nids; i++) {
		x->evids[x->nevids].id = pmon__rec_event_id(re, i);
		x->evids[x->nevids++].ev = re->index;
	}
	return 0;
}

static int apply_record(struct ctx *x, const struct pmon__record *rec)
{
	int err = 0;

	if (rec->type == PERF_RECORD_MMAP2) {
		const struct pmon__rec_mmap *m = &rec->mmap;
		err = add_map(x, m->pid, m->start, m->len, m->pgoff, m->filename, m->build_id,
			      m->build_id_size);
	} else if (rec->type == PERF_RECORD_FORK) {
		uint32_t pid = rec->task.pid, ppid = rec->task.ppid;
		if (pid != ppid) /* a new process: it starts with its parent's maps */
			for (size_t i = 0, n = x->nmaps; i < n && !err; i++)
				if (x->maps[i].pid == ppid) {
					struct map m = x->maps[i];
					const struct file *mf = &x->files[m.file];
					err = add_map(x, pid, m.start, m.end - m.start, m.pgoff,
						      mf->path, mf->bid, mf->bidlen);
				}
	} else if (rec->type == PMON_RECORD_EVENT) {
		return add_event(x, &rec->event);
	} else if (rec->type != PERF_RECORD_MMAP && rec->type != PMON__RECORD_SHORT) {
		return 0; /* COMM, EXIT: not needed to name addresses */
	}
	if (err)
		return err;
	return vis_push(x);
}

/* One more epoch: vis[E] is the number of maps the first E MMAP2/FORK
 * records made (vis[0] = 0, pushed before the first). */
static int vis_push(struct ctx *x)
{
	if (x->nvis == x->capvis) {
		size_t cap = x->capvis ? x->capvis * 2 : 256;
		uint32_t *v = realloc(x->vis, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		x->vis = v;
		x->capvis = cap;
	}
	x->vis[x->nvis++] = (uint32_t)x->nmaps;
	return 0;
}

/* ---- aggregation by numbers ----------------------------------------------
 * A pass over millions of samples formats, allocates and compares no
 * string: each sample is counted under (identifier, pid, epoch, ip) and
 * its call chain under the same with the chain's addresses, in open
 * addressing tables of plain numbers; names come once per distinct key
 * after the pass. "epoch" counts the MMAP2/FORK records before the sample,
 * so that a key resolves against the maps its process had then. */

static uint64_t mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 33);
}

struct leaf {
	uint64_t sid, ip, samples, period; /* samples == 0: an empty slot */
	uint32_t pid, epoch;
};

struct leaf_tab {
	struct leaf *e;
	size_t cap, n;
};

static uint64_t leaf_hash(uint64_t sid, uint32_t pid, uint32_t epoch, uint64_t ip)
{
	return mix64(ip ^ mix64(sid ^ ((uint64_t)pid << 32 | epoch)));
}

static int leaf_add(struct leaf_tab *t, uint64_t sid, uint32_t pid, uint32_t epoch, uint64_t ip,
		    uint64_t samples, uint64_t period)
{
	if (t->n * 2 >= t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct leaf *e = calloc(cap, sizeof(*e));
		if (!e)
			return -ENOMEM;
		for (size_t i = 0; i < t->cap; i++) {
			const struct leaf *o = &t->e[i];
			if (!o->samples)
				continue;
			size_t j = leaf_hash(o->sid, o->pid, o->epoch, o->ip) & (cap - 1);
			while (e[j].samples)
				j = (j + 1) & (cap - 1);
			e[j] = *o;
		}
		free(t->e);
		t->e = e;
		t->cap = cap;
	}
	size_t j = leaf_hash(sid, pid, epoch, ip) & (t->cap - 1);
	for (;; j = (j + 1) & (t->cap - 1)) {
		struct leaf *l = &t->e[j];
		if (!l->samples) {
			*l = (struct leaf){ sid, ip, samples, period, pid, epoch };
			t->n++;
			return 0;
		}
		if (l->ip == ip && l->sid == sid && l->pid == pid && l->epoch == epoch) {
			l->samples += samples;
			l->period += period;
			return 0;
		}
	}
}

/*
 * The distinct raw call chains, as a tree: a node is (parent, address),
 * stored once, so chains share their callers; the first two levels are the
 * sample identifier and (pid, epoch), the rest the chain from its
 * outermost caller to its leaf. A chain is the id of its last node, and
 * the samples that had it are counted there. Chains differ mostly near the
 * leaf (the interrupted instruction, an interrupt's kernel path): a flat
 * copy of each distinct chain made the folded export's memory grow with
 * them (issue #16).
 */
struct cnode {
	uint64_t addr;
	uint32_t parent; /* 0: a root (node 0 is not used) */
	uint32_t depth; /* 0 for a root */
};

struct stk_tab {
	struct cnode *n;
	uint64_t *samples, *period; /* per node: the chains that end there */
	uint32_t nn, capn; /* nodes used (with node 0), allocated */
	uint32_t *idx; /* open addressing over nodes by (parent, address); 0: empty */
	size_t capi;
	size_t nstacks; /* nodes with samples */
};

static uint64_t cnode_hash(uint32_t parent, uint64_t addr)
{
	return mix64(addr ^ (uint64_t)parent * 0x9e3779b97f4a7c15ULL);
}

/* The id of node (@parent, @addr), made if new; 0 without memory. */
static uint32_t cnode_get(struct stk_tab *t, uint32_t parent, uint64_t addr)
{
	if ((size_t)t->nn * 2 >= t->capi) {
		size_t cap = t->capi ? t->capi * 2 : 4096;
		uint32_t *idx = calloc(cap, sizeof(*idx));
		if (!idx)
			return 0;
		for (uint32_t i = 1; i < t->nn; i++) {
			size_t j = cnode_hash(t->n[i].parent, t->n[i].addr) & (cap - 1);
			while (idx[j])
				j = (j + 1) & (cap - 1);
			idx[j] = i;
		}
		free(t->idx);
		t->idx = idx;
		t->capi = cap;
	}
	size_t j = cnode_hash(parent, addr) & (t->capi - 1);
	for (; t->idx[j]; j = (j + 1) & (t->capi - 1)) {
		const struct cnode *c = &t->n[t->idx[j]];
		if (c->addr == addr && c->parent == parent)
			return t->idx[j];
	}
	if (t->nn + 1 >= t->capn) {
		if (t->capn >= UINT32_MAX / 2)
			return 0;
		uint32_t cap = t->capn ? t->capn * 2 : 4096;
		struct cnode *n = realloc(t->n, cap * sizeof(*n));
		if (n)
			t->n = n;
		uint64_t *sa = n ? realloc(t->samples, cap * sizeof(*sa)) : NULL;
		if (sa)
			t->samples = sa;
		uint64_t *pe = sa ? realloc(t->period, cap * sizeof(*pe)) : NULL;
		if (!pe)
			return 0;
		t->period = pe;
		t->capn = cap;
	}
	if (!t->nn)
		t->nn = 1; /* node 0: "no parent" */
	uint32_t id = t->nn++;
	t->n[id] = (struct cnode){ addr, parent, parent ? t->n[parent].depth + 1 : 0 };
	t->samples[id] = t->period[id] = 0;
	t->idx[j] = id;
	return id;
}

/* Count @samples of @period under the chain @a (@n addresses, leaf first). */
static int stk_add(struct stk_tab *t, uint64_t sid, uint32_t pid, uint32_t epoch, const uint64_t *a,
		   uint32_t n, uint64_t samples, uint64_t period)
{
	uint32_t id = cnode_get(t, 0, sid);

	if (id)
		id = cnode_get(t, id, (uint64_t)pid << 32 | epoch);
	for (uint32_t k = n; id && k-- > 0;)
		id = cnode_get(t, id, a[k]);
	if (!id)
		return -ENOMEM;
	t->nstacks += !t->samples[id];
	t->samples[id] += samples;
	t->period[id] += period;
	return 0;
}

/* The addresses of chain @id into @a, leaf first; its sid, pid and epoch. */
static uint32_t stk_chain(const struct stk_tab *t, uint32_t id, uint64_t *a, uint64_t *sid,
			  uint32_t *pid, uint32_t *epoch)
{
	uint32_t n = 0;

	for (; t->n[id].depth > 1; id = t->n[id].parent)
		a[n++] = t->n[id].addr;
	*pid = (uint32_t)(t->n[id].addr >> 32);
	*epoch = (uint32_t)t->n[id].addr;
	*sid = t->n[t->n[id].parent].addr;
	return n;
}

static void stk_free(struct stk_tab *t)
{
	free(t->n);
	free(t->samples);
	free(t->period);
	free(t->idx);
}

/* ---- the records: counted by the reader's threads ----------------------- */

struct worker { /* one per reader thread */
	struct ctx *x;
	struct leaf_tab leaves;
	struct stk_tab stacks;
	bool callchains;
	struct kcache { /* kernel address -> kernel_canonical(), direct-mapped */
		uint64_t ip, start;
	} * kc;
};

struct scan {
	struct ctx *x;
	struct worker *w;
	unsigned nw;
	bool unwinding; /* one thread: the unwinder needs each process's maps of now */
};

/* kernel_canonical(), remembered: a chain's kernel return addresses repeat
 * from sample to sample, and a symbol lookup is a binary search. */
static uint64_t kernel_start(struct worker *w, uint64_t ip)
{
	enum { KCACHE = 4096 };

	if (!w->kc && !(w->kc = calloc(KCACHE, sizeof(*w->kc))))
		return ip; /* uncached is still right: chains merge a little less */
	struct kcache *e = &w->kc[mix64(ip) & (KCACHE - 1)];
	if (e->ip != ip) {
		e->ip = ip;
		e->start = kernel_canonical(w->x, ip);
	}
	return e->start;
}

/*
 * Count one sample of epoch @epoch. The addresses of a call chain are the
 * ones to look up: a return address minus 1, inside its call (the first
 * entry after a context marker is where the code ran, not a return
 * address).
 */
static int aggregate(struct worker *w, const struct pmon_sample *sm, uint32_t epoch, bool unwinding)
{
	struct ctx *x = w->x;
	uint64_t all[256];
	int err;

	if ((err = leaf_add(&w->leaves, sm->id, sm->pid, epoch, sm->ip, 1, sm->period)))
		return err;
	uint32_t nall = 0;
	bool fresh = true;
	for (uint64_t k = 0; k < sm->nr && nall < 128; k++) {
		uint64_t v = pmon_sample__chain(sm, k);
		if (v >= (uint64_t)-4095) { /* PERF_CONTEXT_* */
			fresh = true;
			continue;
		}
		all[nall++] = !fresh && v ? v - 1 : v;
		fresh = false;
	}
	/* DWARF mode: the user frames unwound from the registers and the
	 * stack copy (one reader: the unwinder needs the maps of now). */
	if (unwinding && sm->nregs == 17 && sm->stack_dyn) {
		uint64_t regs[17], pcs[128];
		memcpy(regs, sm->regs, sizeof(regs));
		int n = unwind(x, sm->pid, regs, sm->stack, sm->stack_dyn, pcs, 128);
		for (int k = 0; k < n; k++)
			all[nall++] = k && pcs[k] ? pcs[k] - 1 : pcs[k];
	}
	if (nall)
		w->callchains = true;
	else
		all[nall++] = sm->ip; /* no chain: the sampled address alone */
	if (x->no_stacks)
		return 0;
	for (uint32_t k = 0; k < nall; k++)
		if (all[k] >= 0xffff800000000000ULL)
			all[k] = kernel_start(w, all[k]);
	return stk_add(&w->stacks, sm->id, sm->pid, epoch, all, nall, 1, sm->period);
}

static int on_record(void *arg, unsigned thread, const struct pmon__record *rec, uint32_t epoch)
{
	struct scan *s = arg;

	if (rec->type != PERF_RECORD_SAMPLE)
		return 0;
	return aggregate(&s->w[thread], &rec->sample, epoch, s->unwinding);
}

static int leaf_cmp(const void *a, const void *b)
{
	const struct leaf *x = a, *y = b;

	if (x->sid != y->sid)
		return x->sid < y->sid ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->epoch != y->epoch)
		return x->epoch < y->epoch ? -1 : 1;
	return (x->ip > y->ip) - (x->ip < y->ip);
}

/* Chains in the order of (sid, pid, epoch, length, addresses leaf first):
 * the same for any number of readers, whose node ids differ. */
static int stk_cmp(const void *a, const void *b, void *tab)
{
	const struct stk_tab *t = tab;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct cnode *px = &t->n[x], *py = &t->n[y];

	while (px->depth > 1) /* up to the (pid, epoch) nodes */
		px = &t->n[px->parent];
	while (py->depth > 1)
		py = &t->n[py->parent];
	uint64_t sx = t->n[px->parent].addr, sy = t->n[py->parent].addr;
	if (sx != sy)
		return sx < sy ? -1 : 1;
	if (px->addr >> 32 != py->addr >> 32) /* pid */
		return px->addr >> 32 < py->addr >> 32 ? -1 : 1;
	if ((uint32_t)px->addr != (uint32_t)py->addr) /* epoch */
		return (uint32_t)px->addr < (uint32_t)py->addr ? -1 : 1;
	if (t->n[x].depth != t->n[y].depth)
		return t->n[x].depth < t->n[y].depth ? -1 : 1;
	for (; x != y && t->n[x].depth > 1; x = t->n[x].parent, y = t->n[y].parent)
		if (t->n[x].addr != t->n[y].addr)
			return t->n[x].addr < t->n[y].addr ? -1 : 1;
	return 0;
}

/* The event of a sample identifier (the last EVENT record naming it). */
static unsigned event_of(const struct ctx *x, uint64_t sid)
{
	unsigned ev = 0;

	for (size_t i = 0; sid && i < x->nevids; i++)
		if (x->evids[i].id == sid)
			ev = x->evids[i].ev;
	return ev;
}

/* The events a (samples, period sum) pair stands for: a fixed period is
 * recorded once, not with each sample. */
static uint64_t period_of(const struct ctx *x, unsigned ev, uint64_t samples, uint64_t period)
{
	if (x->sample_type & PERF_SAMPLE_PERIOD)
		return period;
	return samples * (x->r->events[ev].sample_period ? x->r->events[ev].sample_period : 1);
}

/* Name every distinct sampled address once and count the report's entries
 * (or, for pmon_annotate(), the wanted symbol's addresses). */
static int name_leaves(struct ctx *x, struct leaf_tab *t)
{
	struct pmon_report *r = x->r;
	struct leaf *v = malloc((t->n ? t->n : 1) * sizeof(*v));
	size_t n = 0;
	int err = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++)
		if (t->e[i].samples)
			v[n++] = t->e[i];
	qsort(v, n, sizeof(*v), leaf_cmp); /* the same order for any number of readers */
	for (size_t i = 0; i < n && !err; i++) {
		unsigned ev = event_of(x, v[i].sid);
		uint64_t samples = v[i].samples, period = period_of(x, ev, samples, v[i].period);
		struct loc l;
		char key[900];
		r->events[ev].samples += samples;
		r->events[ev].period += period;
		if (x->want && ev != x->stack_ev)
			continue; /* pmon_annotate(): another event's sample */
		r->samples += samples;
		r->period += period;
		locate(x, v[i].pid, v[i].ip, v[i].epoch, &l);
		if (x->want) { /* pmon_annotate(): only the wanted symbol's addresses */
			if (l.file < 0 && !strcmp(l.sym, x->want))
				x->want_where = !strcmp(l.dso, "[kernel]") ? "kernel" : "JIT";
			if (l.file < 0 || strcmp(l.sym, x->want)) {
				err = counter_add(&x->agg, l.sym, samples, period, NULL);
				continue;
			}
			pmon__fmt(key, sizeof(key), "%d\t%llx", l.file,
				  (unsigned long long)x->sc.addr[l.slot]);
			err = counter_add(&x->hits, key, samples, period, NULL);
			continue;
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
		err = counter_add(&x->agg, key, samples, period, NULL);
	}
	free(v);
	return err;
}

/* A looked-up address of the stacks: (pid, epoch, address) -> its frames. */
struct fslot {
	uint64_t addr;
	uint32_t pid, epoch, off, n;
	bool used;
};

struct ftab {
	struct fslot *e;
	size_t cap, n;
	uint32_t *arena;
	size_t alen, acap;
};

static int ftab_grow(struct ftab *t)
{
	size_t cap = t->cap ? t->cap * 2 : 4096;
	struct fslot *e = calloc(cap, sizeof(*e));

	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->e[i].used)
			continue;
		const struct fslot *o = &t->e[i];
		size_t j = leaf_hash(0, o->pid, o->epoch, o->addr) & (cap - 1);
		while (e[j].used)
			j = (j + 1) & (cap - 1);
		e[j] = *o;
	}
	free(t->e);
	t->e = e;
	t->cap = cap;
	return 0;
}

/* The frames of an address of a stack, looked up once: *@fr, @return count. */
static int frames_at(struct ctx *x, struct ftab *t, uint32_t pid, uint32_t epoch, uint64_t addr,
		     const uint32_t **fr)
{
	if (t->n * 2 >= t->cap && ftab_grow(t))
		return -ENOMEM;
	size_t j = leaf_hash(0, pid, epoch, addr) & (t->cap - 1);
	while (t->e[j].used &&
	       !(t->e[j].addr == addr && t->e[j].pid == pid && t->e[j].epoch == epoch))
		j = (j + 1) & (t->cap - 1);
	if (!t->e[j].used) {
		struct loc l;
		uint32_t tmp[33];
		locate(x, pid, addr, epoch, &l);
		int n = frames_of(x, &l, tmp, 33);
		if (n < 0)
			return n;
		if (t->alen + (size_t)n > t->acap) {
			size_t cap = t->acap ? t->acap * 2 : 4096;
			uint32_t *a = realloc(t->arena, cap * sizeof(*a));
			if (!a)
				return -ENOMEM;
			t->arena = a;
			t->acap = cap;
		}
		memcpy(t->arena + t->alen, tmp, (size_t)n * sizeof(*tmp));
		t->e[j] = (struct fslot){ addr, pid, epoch, (uint32_t)t->alen, (uint32_t)n, true };
		t->alen += (size_t)n;
		t->n++;
	}
	*fr = t->arena + t->e[j].off;
	return (int)t->e[j].n;
}

/* Distinct stacks of frame indexes (several raw chains name the same). */
struct fstk {
	uint64_t hash, samples, period;
	uint32_t len, off;
	bool used;
};

struct fstk_tab {
	struct fstk *e;
	size_t cap, n;
	uint32_t *arena;
	size_t alen, acap;
	uint32_t *order; /* slots in order of first use */
};

static int fstk_add(struct fstk_tab *t, const uint32_t *f, uint32_t n, uint64_t samples,
		    uint64_t period)
{
	uint64_t h = 1469598103934665603ULL ^ n;

	for (uint32_t i = 0; i < n; i++)
		h = (h ^ f[i]) * 0x100000001b3ULL;
	h = mix64(h);
	if (t->n * 2 >= t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct fstk *e = calloc(cap, sizeof(*e));
		uint32_t *o = malloc(cap * sizeof(*o));
		if (!e || !o) {
			free(e), free(o);
			return -ENOMEM;
		}
		for (size_t i = 0; i < t->n; i++) { /* in order of first use */
			const struct fstk *old = &t->e[t->order[i]];
			size_t j = old->hash & (cap - 1);
			while (e[j].used)
				j = (j + 1) & (cap - 1);
			e[j] = *old;
			o[i] = (uint32_t)j;
		}
		free(t->e), free(t->order);
		t->e = e, t->order = o, t->cap = cap;
	}
	size_t j = h & (t->cap - 1);
	for (; t->e[j].used; j = (j + 1) & (t->cap - 1)) {
		struct fstk *s = &t->e[j];
		if (s->hash == h && s->len == n && !memcmp(t->arena + s->off, f, n * sizeof(*f))) {
			s->samples += samples;
			s->period += period;
			return 0;
		}
	}
	if (t->alen + n > t->acap) {
		size_t cap = t->acap ? t->acap * 2 : 4096;
		while (cap < t->alen + n)
			cap *= 2;
		uint32_t *a = realloc(t->arena, cap * sizeof(*a));
		if (!a)
			return -ENOMEM;
		t->arena = a;
		t->acap = cap;
	}
	memcpy(t->arena + t->alen, f, n * sizeof(*f));
	t->e[j] = (struct fstk){ h, samples, period, n, (uint32_t)t->alen, true };
	t->order[t->n++] = (uint32_t)j;
	t->alen += n;
	return 0;
}

#define STACK_MAX_FRAMES 1024

/* The distinct stacks of the stack event, outermost caller first. */
static int name_stacks(struct ctx *x, struct stk_tab *t, bool callchains)
{
	struct pmon_report *r = x->r;
	uint32_t *v = malloc((t->nstacks ? t->nstacks : 1) * sizeof(*v));
	uint32_t *frames = malloc(STACK_MAX_FRAMES * sizeof(*frames));
	uint64_t chain[STACK_MAX_FRAMES];
	struct ftab ft = { 0 };
	struct fstk_tab st = { 0 };
	size_t n = 0;
	int err = 0;

	if (!v || !frames) {
		free(v), free(frames);
		return -ENOMEM;
	}
	r->callchains = callchains;
	for (uint32_t i = 1; i < t->nn; i++) {
		if (!t->samples[i])
			continue;
		uint32_t root = i;
		while (t->n[root].parent)
			root = t->n[root].parent;
		if (event_of(x, t->n[root].addr) == x->stack_ev)
			v[n++] = i;
	}
	qsort_r(v, n, sizeof(*v), stk_cmp, t);
	for (size_t i = 0; i < n && !err; i++) {
		uint64_t sid;
		uint32_t pid, epoch, depth = 0;
		uint32_t len = stk_chain(t, v[i], chain, &sid, &pid, &epoch);
		for (uint32_t k = len; k-- > 0 && depth < STACK_MAX_FRAMES;) {
			const uint32_t *fr;
			int nf = frames_at(x, &ft, pid, epoch, chain[k], &fr);
			if (nf < 0) {
				err = nf;
				break;
			}
			for (int m = 0; m < nf && depth < STACK_MAX_FRAMES; m++)
				frames[depth++] = fr[m];
		}
		if (!err && depth)
			err = fstk_add(
				&st, frames, depth, t->samples[v[i]],
				period_of(x, x->stack_ev, t->samples[v[i]], t->period[v[i]]));
	}
	free(v);
	free(frames);
	free(ft.e);
	free(ft.arena);
	if (!err && x->frames.n) {
		r->frames = calloc(x->frames.n, sizeof(*r->frames));
		if (!r->frames)
			err = -ENOMEM;
		else
			r->nframes = x->frames.n;
		for (size_t i = 0; !err && i < x->frames.cap; i++) {
			const char *k = x->frames.key[i];
			const char *tab = k ? strchr(k, '\t') : NULL;
			if (!tab)
				continue;
			struct pmon_report_frame *f = &r->frames[x->frames.index[i]];
			f->symbol = strndup(k, (size_t)(tab - k));
			f->dso = strdup(tab + 1);
			if (!f->symbol || !f->dso)
				err = -ENOMEM;
		}
	}
	if (!err && st.n && !(r->stacks = calloc(st.n, sizeof(*r->stacks))))
		err = -ENOMEM;
	for (size_t i = 0; !err && i < st.n; i++) {
		const struct fstk *s = &st.e[st.order[i]];
		struct pmon_report_stack *rs = &r->stacks[r->nstacks++];
		if (!(rs->frame = malloc(s->len * sizeof(uint32_t)))) {
			err = -ENOMEM;
			break;
		}
		memcpy(rs->frame, st.arena + s->off, s->len * sizeof(uint32_t));
		rs->depth = s->len;
		rs->samples = s->samples;
		rs->period = s->period;
	}
	free(st.e), free(st.order), free(st.arena);
	return err;
}

/* What a reader needs only while it reads chunks: freed before the naming,
 * whose elfutils modules and DWARF then reuse the memory. */
static void worker_done(struct worker *w)
{
	free(w->kc);
	w->kc = NULL;
}

static void worker_free(struct worker *w)
{
	worker_done(w);
	free(w->leaves.e);
	stk_free(&w->stacks);
}

/* Add @b's counts to @a. */
static int worker_merge(struct worker *a, const struct worker *b)
{
	int err = 0;

	for (size_t i = 0; i < b->leaves.cap && !err; i++) {
		const struct leaf *l = &b->leaves.e[i];
		if (l->samples)
			err = leaf_add(&a->leaves, l->sid, l->pid, l->epoch, l->ip, l->samples,
				       l->period);
	}
	for (uint32_t i = 1; i < b->stacks.nn && !err; i++) {
		uint64_t chain[STACK_MAX_FRAMES], sid;
		uint32_t pid, epoch;
		if (!b->stacks.samples[i])
			continue;
		uint32_t n = stk_chain(&b->stacks, i, chain, &sid, &pid, &epoch);
		err = stk_add(&a->stacks, sid, pid, epoch, chain, n, b->stacks.samples[i],
			      b->stacks.period[i]);
	}
	a->callchains |= b->callchains;
	return err;
}

/* A PMON_RECORD_KSYM of the recording: kept, sorted after the last. */
static int add_ksym(void *arg, const struct pmon__record *rec)
{
	struct ctx *x = arg;
	char *name = strdup(rec->ksym.name);

	if (!name || PMON_GROW(&x->fk, &x->capfk, x->nfk + 1)) {
		free(name);
		return -ENOMEM;
	}
	x->fk[x->nfk++] = (struct file_ksym){ rec->ksym.start, rec->ksym.end, name };
	return 0;
}

static int on_ordered(void *arg, const struct pmon__record *rec)
{
	struct scan *s = arg;

	return apply_record(s->x, rec);
}

/* The header into x->r (one event unless PMON_RECORD_EVENT records say more). */
static void take_header(struct ctx *x, const struct pmon__rec_header *h)
{
	struct pmon_report *r = x->r;

	r->header.regs_user = x->regs_user = h->regs_user;
	r->header.sample_type = x->sample_type = h->sample_type;
	r->header.attr_type = h->attr_type;
	r->header.attr_config = h->attr_config;
	r->header.period = h->period;
	r->header.freq = h->freq;
	pmon__strlcpy(r->header.event, h->event, sizeof(r->header.event));
	pmon__strlcpy(r->header.command, h->command, sizeof(r->header.command));
	pmon__strlcpy(r->events[0].name, h->event, sizeof(r->events[0].name));
	r->events[0].sample_period = h->period;
	r->events[0].freq = h->freq;
	r->nevents = 1;
}

/* The damage account of a finished read into x->r. */
static void take_stats(struct ctx *x, const struct pmon__rec_stats *st)
{
	struct pmon_report *r = x->r;

	r->lost = st->lost;
	r->damaged_chunks = st->damaged_chunks;
	r->damaged_bytes = st->damaged_bytes;
	r->damaged_samples = st->damaged_samples;
	r->truncated = st->truncated;
	pmon__strlcpy(r->warning, st->warning, sizeof(r->warning));
}

/* Read the recording at @path into @x (and x->r's header and totals). */
static int scan(const char *path, struct ctx *x)
{
	struct pmon__rec_header h;
	struct scan s = { .x = x };
	struct pmon__rec_reader *rd = pmon__rec_reader_open(path, &h);
	const struct pmon__rec_ops ops = { .record = on_record, .ordered = on_ordered };
	int err;

	if (!rd)
		return -errno;
	take_header(x, &h);
	if ((err = vis_push(x)))
		goto out;
	/* The kernel symbols first: the readers name chains' kernel frames by them. */
	if ((err = pmon__rec_reader_ksyms(rd, add_ksym, x)))
		goto out;
	if (x->nfk > 1)
		qsort(x->fk, x->nfk, sizeof(*x->fk), file_ksym_cmp);
	/* DWARF unwinding needs each process's maps at the sample: one reader
	 * that applies the records as it meets them. */
	s.unwinding = x->sample_type & PERF_SAMPLE_REGS_USER &&
		x->sample_type & PERF_SAMPLE_STACK_USER && x->regs_user == PMON_REGS_USER_X86;
	s.nw = s.unwinding ? 1 : pmon__rec_reader_threads(rd);
	if (!(s.w = calloc(s.nw, sizeof(*s.w)))) {
		err = -ENOMEM;
		goto out;
	}
	for (unsigned i = 0; i < s.nw; i++)
		s.w[i].x = x;
	err = pmon__rec_reader_run(rd, s.nw, &ops, &s);
	for (unsigned i = 0; i < s.nw; i++)
		worker_done(&s.w[i]);
	for (unsigned i = 1; i < s.nw && !err; i++) {
		err = worker_merge(&s.w[0], &s.w[i]);
		worker_free(&s.w[i]);
		memset(&s.w[i], 0, sizeof(s.w[i]));
	}
	if (err)
		goto out;
	take_stats(x, pmon__rec_reader_stats(rd));
	err = name_leaves(x, &s.w[0].leaves);
	x->r->callchains = s.w[0].callchains;
	if (!err && !x->want && !x->no_stacks)
		err = name_stacks(x, &s.w[0].stacks, s.w[0].callchains);
out:
	for (unsigned i = 0; s.w && i < s.nw; i++)
		worker_free(&s.w[i]);
	free(s.w);
	pmon__rec_reader_free(rd);
	return err;
}

/* By event, then the most events represented first (perf report's
 * default: by period, hist_entry__cmp on the period), then the most
 * samples: a simulated profile's samples carry counts, and one sample of
 * a loop's jump stands for millions of executions. With a fixed period
 * the two orders are the same. */
static int cmp_entry(const void *a, const void *b)
{
	const struct pmon_report_entry *x = a, *y = b;

	if (x->event != y->event)
		return x->event < y->event ? -1 : 1;
	if (x->period != y->period)
		return x->period < y->period ? 1 : -1;
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
	free(x->vis);
	counter_free(&x->hits);
	for (size_t i = 0; i < x->nfiles; i++) {
		close_module(&x->files[i]);
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

static void ctx_init(struct ctx *x, struct pmon_report *r, const struct pmon_report_opts *o)
{
	memset(x, 0, sizeof(*x));
	x->r = r;
	x->sort = o ? o->sort : PMON_SORT_SYMBOL;
	x->inlines = o && o->inlines;
	x->no_stacks = PMON_OPTS_GET(o, no_stacks, false);
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
	    (r->nevents == 1 && event_is(r->events[0].name, x->stack_event_name)))
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

int pmon_report_read(const char *path, const struct pmon_report_opts *user, struct pmon_report *r)
{
	struct pmon_report_opts oc = { 0 };
	const struct pmon_report_opts *opts = user ? &oc : NULL;
	struct ctx x;
	int err;

	memset(r, 0, sizeof(*r));
	if ((err = PMON_OPTS_COPY(&oc, user, struct pmon_report_opts, sz)))
		return err;
	ctx_init(&x, r, opts);
	err = scan(path, &x);
	if (!err)
		err = check_event(&x, path);
	note_stale(&x);
	if (!err)
		err = build_entries(&x, r);
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

int pmon__annotate_hits(const char *path, const char *symbol, const struct pmon_report_opts *user,
			struct pmon_annotation *a, struct pmon__hits *h)
{
	struct pmon_report_opts oc = { 0 };
	const struct pmon_report_opts *opts = user ? &oc : NULL;
	int cerr = PMON_OPTS_COPY(&oc, user, struct pmon_report_opts, sz);

	if (cerr)
		return cerr;
	struct pmon_report r = { 0 };
	struct pmon_report_opts o = { .sz = sizeof(o),
				      .sort = PMON_SORT_SYMBOL,
				      .debug_dir = opts ? opts->debug_dir : NULL,
				      .event = opts ? opts->event : NULL,
				      .no_stacks = true };
	struct ctx *x;
	char hot[512];
	int err;

	memset(a, 0, sizeof(*a));
	memset(h, 0, sizeof(*h));
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
	if (!(h->x = x = malloc(sizeof(*x))))
		return -ENOMEM;
	ctx_init(x, &r, &o);
	x->want = a->symbol;
	x->no_stacks = true;
	err = scan(path, x);
	if (!err)
		err = check_event(x, path);
	a->total = r.samples;
	a->total_period = r.period;
	/* The file holding most of the symbol's samples. */
	int best = -1;
	uint64_t *per_file = err ? NULL : calloc(x->nfiles + 1, sizeof(uint64_t));
	for (size_t i = 0; per_file && i < x->hits.cap; i++)
		if (x->hits.key[i]) {
			int fi = atoi(x->hits.key[i]);
			per_file[fi] += x->hits.samples[i];
			if (best < 0 || per_file[fi] > per_file[best])
				best = fi;
		}
	if (!err && !per_file)
		err = -ENOMEM;
	if (!err && best < 0) {
		if (x->want_where)
			err = pmon__err(-ENOTSUP,
					"'%s' is %s code: its instructions are in no file on disk",
					a->symbol, x->want_where);
		else {
			hottest(&x->agg, hot, sizeof(hot));
			err = pmon__err(-ENOENT, "no samples in '%s'%s%s%s", a->symbol,
					hot[0] ? " (most samples: " : "", hot, hot[0] ? ")" : "");
		}
	}
	free(per_file);
	x->r = NULL; /* @r was this call's: the hits and modules outlive it */
	if (!err) {
		h->mod = x->files[best].mod;
		pmon__strlcpy(a->dso, x->files[best].path, sizeof(a->dso));
		h->addr = malloc((x->hits.n ? x->hits.n : 1) * sizeof(*h->addr));
		h->samples = malloc((x->hits.n ? x->hits.n : 1) * sizeof(*h->samples));
		h->period = malloc((x->hits.n ? x->hits.n : 1) * sizeof(*h->period));
		if (!h->addr || !h->samples || !h->period)
			err = -ENOMEM;
	}
	for (size_t i = 0; !err && i < x->hits.cap; i++) {
		if (!x->hits.key[i] || atoi(x->hits.key[i]) != best)
			continue;
		h->addr[h->n] = strtoull(strchr(x->hits.key[i], '\t') + 1, NULL, 16);
		h->samples[h->n] = x->hits.samples[i];
		h->period[h->n++] = x->hits.period[i];
	}
	if (err)
		pmon__hits_release(h);
	return err;
}

void pmon__hits_release(struct pmon__hits *h)
{
	if (h->x) {
		ctx_free(h->x);
		free(h->x);
	}
	free(h->addr);
	free(h->samples);
	free(h->period);
	memset(h, 0, sizeof(*h));
}
