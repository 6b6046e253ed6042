// SPDX-License-Identifier: MIT
/*
 * Reports from a recording (pmon/sample.h): read the chunks (CRC-checked;
 * a torn tail is a warning), follow MMAP2/FORK records into per-process
 * maps, symbolize each unique address once with elfutils (libdwfl, offline
 * modules; the file offset is turned into the ELF address through its
 * PT_LOAD segments), and aggregate by symbol or DSO, most samples first;
 * call chains become folded stacks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <gelf.h>
#include <libgen.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <elfutils/libdwfl.h>
#include <pthread.h>
#include <unistd.h>
#include <zlib.h>

#include "internal.h"
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
};

struct sym_cache { /* (file, offset) -> symbol name, open addressing */
	int *file;
	uint64_t *off;
	char **name;
	size_t cap, n;
};

struct counter { /* string -> samples, period */
	char **key;
	uint64_t *samples, *period;
	size_t cap, n;
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
	struct counter agg, folded;
	enum pmon_report_sort sort;
	uint64_t sample_type;
	struct pmon_report *r;
};

static uint64_t fnv(const void *p, size_t n, uint64_t h)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h;
}

static int counter_add(struct counter *c, const char *key, uint64_t period)
{
	if (c->n * 2 >= c->cap) {
		struct counter nc = { 0 };
		nc.cap = c->cap ? c->cap * 2 : 1024;
		nc.key = calloc(nc.cap, sizeof(char *));
		nc.samples = calloc(nc.cap, sizeof(uint64_t));
		nc.period = calloc(nc.cap, sizeof(uint64_t));
		if (!nc.key || !nc.samples || !nc.period) {
			free(nc.key), free(nc.samples), free(nc.period);
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
			nc.period[j] = c->period[i];
		}
		nc.n = c->n;
		free(c->key), free(c->samples), free(c->period);
		*c = nc;
	}
	size_t j = fnv(key, strlen(key), 14695981039346656037ULL) & (c->cap - 1);
	while (c->key[j] && strcmp(c->key[j], key))
		j = (j + 1) & (c->cap - 1);
	if (!c->key[j]) {
		c->key[j] = strdup(key);
		if (!c->key[j])
			return -ENOMEM;
		c->n++;
	}
	c->samples[j]++;
	c->period[j] += period;
	return 0;
}

static void counter_free(struct counter *c)
{
	for (size_t i = 0; i < c->cap; i++)
		free(c->key[i]);
	free(c->key), free(c->samples), free(c->period);
}

static int file_index(struct ctx *x, const char *path)
{
	for (size_t i = 0; i < x->nfiles; i++)
		if (!strcmp(x->files[i].path, path))
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
	x->files[x->nfiles].path = strdup(path);
	return x->files[x->nfiles].path ? (int)x->nfiles++ : -1;
}

static const Dwfl_Callbacks offline_cb = {
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* The symbol at file offset @off of @f, or NULL. */
static const char *resolve(struct file *f, uint64_t off)
{
	GElf_Addr bias;
	GElf_Sym sym;
	GElf_Off symoff;
	Elf *elf;
	size_t nph;

	if (!f->tried) {
		f->tried = true;
		if (f->path[0] == '[' || access(f->path, R_OK))
			return NULL;
		f->dwfl = dwfl_begin(&offline_cb);
		if (f->dwfl) {
			f->mod = dwfl_report_offline(f->dwfl, f->path, f->path, -1);
			dwfl_report_end(f->dwfl, NULL, NULL);
		}
	}
	if (!f->mod || !(elf = dwfl_module_getelf(f->mod, &bias)) || elf_getphdrnum(elf, &nph))
		return NULL;
	/* File offset -> ELF address through the PT_LOAD segment holding it. */
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (off >= ph.p_offset && off < ph.p_offset + ph.p_filesz) {
			GElf_Addr a = off - ph.p_offset + ph.p_vaddr + bias;
			return dwfl_module_addrinfo(f->mod, a, &symoff, &sym, NULL, NULL, NULL);
		}
	}
	return NULL;
}

/*
 * Kernel text symbols from /proc/kallsyms, loaded once per process (they do
 * not change while pmon runs, and a fuzzer calls the reader many times).
 * Empty where kptr_restrict shows every address as 0.
 */
struct ksym {
	uint64_t addr;
	char *name;
};
static struct ksym *ksyms;
static size_t nksyms;
static pthread_once_t ksyms_once = PTHREAD_ONCE_INIT;

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void ksyms_load(void)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512], name[256], type;
	unsigned long long addr;
	size_t cap = 0;

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 || !addr ||
		    (type != 't' && type != 'T' && type != 'w' && type != 'W'))
			continue;
		if (nksyms == cap) {
			cap = cap ? cap * 2 : 65536;
			struct ksym *n = realloc(ksyms, cap * sizeof(*n));
			if (!n)
				break;
			ksyms = n;
		}
		if (!(ksyms[nksyms].name = strdup(name)))
			break;
		ksyms[nksyms++].addr = addr;
	}
	if (f)
		fclose(f);
	if (nksyms)
		qsort(ksyms, nksyms, sizeof(*ksyms), ksym_cmp);
}

static const char *kernel_symbol(uint64_t ip)
{
	size_t lo = 0, hi;

	pthread_once(&ksyms_once, ksyms_load);
	for (hi = nksyms; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;
		if (ksyms[mid].addr <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? ksyms[lo - 1].name : NULL;
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

static const char *symbolize(struct ctx *x, uint32_t pid, uint64_t ip, const char **dso)
{
	static char unknown[32];
	const char *js;

	*dso = "[unknown]";
	if (ip >= 0xffff800000000000ULL) {
		*dso = "[kernel]";
		return (js = kernel_symbol(ip)) ? js : "[kernel]";
	}
	for (size_t i = x->nmaps; i-- > 0;) {
		struct map *m = &x->maps[i];
		if (m->pid != pid || ip < m->start || ip >= m->end)
			continue;
		struct file *f = &x->files[m->file];
		uint64_t off = ip - m->start + m->pgoff;
		*dso = f->path;
		if (f->path[0] != '/' ||
		    !strncmp(f->path, "//anon", 6)) { /* code made at run time */
			if ((js = jit_symbol(x, pid, ip))) {
				*dso = "[jit]";
				return js;
			}
			return "[unknown]";
		}
		/* Each unique (file, offset) is resolved once. */
		struct sym_cache *c = &x->sc;
		if (c->n * 2 >= c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 4096;
			int *nf = malloc(cap * sizeof(int));
			uint64_t *no = malloc(cap * sizeof(uint64_t));
			char **nn = calloc(cap, sizeof(char *));
			if (!nf || !no || !nn) {
				free(nf), free(no), free(nn);
				return "[unknown]";
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
			}
			free(c->file), free(c->off), free(c->name);
			c->file = nf, c->off = no, c->name = nn, c->cap = cap;
		}
		size_t j = fnv(&off, 8, (uint64_t)m->file) & (c->cap - 1);
		while (c->file[j] >= 0 && !(c->file[j] == m->file && c->off[j] == off))
			j = (j + 1) & (c->cap - 1);
		if (c->file[j] < 0) {
			const char *s = resolve(f, off);
			c->file[j] = m->file;
			c->off[j] = off;
			c->name[j] = strdup(s ? s : "[unknown]");
			c->n++;
		}
		return c->name[j] ? c->name[j] : "[unknown]";
	}
	if ((js = jit_symbol(x, pid, ip))) {
		*dso = "[jit]";
		return js;
	}
	snprintf(unknown, sizeof(unknown), "[unknown]");
	return unknown;
}

static int add_map(struct ctx *x, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		   const char *file)
{
	int fi = file_index(x, file);

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
	return 0;
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
			pmon__fmt(name, sizeof(name), "%.*s", (int)(len - 72),
				  (const char *)p + 72);
			return add_map(x, pid, addr, mlen, pgoff, name);
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
						if (add_map(x, pid, m.start, m.end - m.start,
							    m.pgoff, x->files[m.file].path))
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
	case PERF_RECORD_SAMPLE: {
		uint64_t ip = 0, period = 1, nr = 0;
		uint32_t pid = 0;
		const uint8_t *e = p + len;
		const uint64_t *chain = NULL;
		if (x->sample_type & PERF_SAMPLE_IP && q + 8 <= e)
			memcpy(&ip, q, 8), q += 8;
		if (x->sample_type & PERF_SAMPLE_TID && q + 8 <= e)
			memcpy(&pid, q, 4), q += 8;
		if (x->sample_type & PERF_SAMPLE_TIME)
			q += 8;
		if (x->sample_type & PERF_SAMPLE_CPU)
			q += 8;
		if (x->sample_type & PERF_SAMPLE_PERIOD && q + 8 <= e)
			memcpy(&period, q, 8), q += 8;
		if (x->sample_type & PERF_SAMPLE_CALLCHAIN && q + 8 <= e) {
			memcpy(&nr, q, 8);
			q += 8;
			if (q + nr * 8 <= e)
				chain = (const uint64_t *)q;
			else
				nr = 0;
		}
		const char *dso, *sym = symbolize(x, pid, ip, &dso);
		char key[600];
		char *base = strdup(dso), *b = base ? basename(base) : (char *)dso;
		if (x->sort == PMON_SORT_DSO)
			pmon__fmt(key, sizeof(key), "%s", b);
		else
			pmon__fmt(key, sizeof(key), "%s\t%s", sym, b);
		free(base);
		x->r->samples++;
		x->r->period += period;
		int err = counter_add(&x->agg, key, period);
		if (!err && chain && nr) {
			/* Folded stack: root first, context markers dropped. */
			char stack[8192] = "";
			size_t off = 0;
			for (uint64_t k = nr; k-- > 0;) {
				uint64_t a;
				memcpy(&a, &chain[k], 8);
				if (a >= (uint64_t)-4095)
					continue;
				const char *d2, *s2 = symbolize(x, pid, a, &d2);
				int w = snprintf(stack + off, sizeof(stack) - off, "%s%s",
						 off ? ";" : "", s2);
				if (w < 0 || (size_t)w >= sizeof(stack) - off)
					break;
				off += (size_t)w;
			}
			if (off)
				err = counter_add(&x->folded, stack, period);
		}
		return err;
	}
	default:
		return 0;
	}
}

static int cmp_entry(const void *a, const void *b)
{
	const struct pmon_report_entry *x = a, *y = b;

	return (x->samples < y->samples) - (x->samples > y->samples);
}

void pmon_report_release(struct pmon_report *r)
{
	free(r->e);
	for (size_t i = 0; i < r->nfolded; i++)
		free(r->folded[i]);
	free(r->folded);
	free(r->folded_count);
	memset(r, 0, sizeof(*r));
}

int pmon_report_read(const char *path, enum pmon_report_sort sort, struct pmon_report *r)
{
	struct ctx x = { .sort = sort, .r = r };
	struct pmon_data_disk_header dh;
	struct pmon_data_chunk c;
	FILE *f = fopen(path, "re");
	uint8_t *buf = NULL;
	unsigned chunk = 0;
	int err = 0;

	memset(r, 0, sizeof(*r));
	if (!f)
		return pmon__err(-errno, "%s: %s", path, strerror(errno));
	if (fread(&dh, 1, sizeof(dh), f) != sizeof(dh) || memcmp(dh.magic, PMON_DATA_MAGIC, 8)) {
		fclose(f);
		return pmon__err(-PMON_ERRNO__PARSE,
				 "%s: not a pmon recording (no PMONDATA header)", path);
	}
	if (dh.version != PMON_DATA_VERSION || dh.header_size < sizeof(dh)) {
		fclose(f);
		return pmon__err(-PMON_ERRNO__PARSE,
				 "%s: recording format version %u (this pmon reads %d)", path,
				 dh.version, PMON_DATA_VERSION);
	}
	fseek(f, (long)dh.header_size, SEEK_SET);
	r->header.sample_type = x.sample_type = dh.sample_type;
	r->header.attr_type = dh.attr_type;
	r->header.attr_config = dh.attr_config;
	r->header.period = dh.period;
	r->header.freq = dh.freq;
	pmon__strlcpy(r->header.event, dh.event, sizeof(r->header.event));
	pmon__strlcpy(r->header.command, dh.command, sizeof(r->header.command));
	buf = malloc(512 * 1024);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	for (;; chunk++) {
		size_t got = fread(&c, 1, sizeof(c), f);
		if (got == 0)
			break;
		if (got != sizeof(c) || memcmp(c.magic, PMON_CHUNK_MAGIC, 4) ||
		    c.len > 512 * 1024) {
			r->truncated = true;
			snprintf(r->warning, sizeof(r->warning),
				 "chunk %u is damaged or cut short: reporting the %u chunks before "
				 "it",
				 chunk, chunk);
			break;
		}
		if (fread(buf, 1, c.len, f) != c.len || crc32(0L, buf, c.len) != c.crc) {
			r->truncated = true;
			snprintf(r->warning, sizeof(r->warning),
				 "chunk %u is cut short or fails its CRC (the recording was "
				 "killed?): "
				 "reporting the %u chunks before it",
				 chunk, chunk);
			break;
		}
		for (size_t off = 0; off + sizeof(struct perf_event_header) <= c.len && !err;) {
			const struct perf_event_header *h = (const void *)(buf + off);
			if (h->size < sizeof(*h) || off + h->size > c.len)
				break;
			err = on_record(&x, buf + off, h->size);
			off += h->size;
		}
		if (err)
			break;
	}
	fclose(f);
	free(buf);
	/* The aggregate, most samples first. */
	if (!err && x.agg.n) {
		r->e = calloc(x.agg.n, sizeof(*r->e));
		if (!r->e)
			err = -ENOMEM;
		for (size_t i = 0; !err && i < x.agg.cap; i++) {
			if (!x.agg.key[i])
				continue;
			struct pmon_report_entry *e = &r->e[r->n++];
			char *tab = strchr(x.agg.key[i], '\t');
			if (tab) {
				pmon__fmt(e->symbol, sizeof(e->symbol), "%.*s",
					  (int)(tab - x.agg.key[i]), x.agg.key[i]);
				pmon__strlcpy(e->dso, tab + 1, sizeof(e->dso));
			} else {
				pmon__strlcpy(e->dso, x.agg.key[i], sizeof(e->dso));
			}
			e->samples = x.agg.samples[i];
			e->period = x.agg.period[i];
		}
		qsort(r->e, r->n, sizeof(*r->e), cmp_entry);
	}
	if (!err && x.folded.n) {
		r->folded = calloc(x.folded.n, sizeof(char *));
		r->folded_count = calloc(x.folded.n, sizeof(uint64_t));
		for (size_t i = 0; r->folded && r->folded_count && i < x.folded.cap; i++)
			if (x.folded.key[i]) {
				r->folded[r->nfolded] = strdup(x.folded.key[i]);
				r->folded_count[r->nfolded++] = x.folded.samples[i];
			}
	}
	counter_free(&x.agg);
	counter_free(&x.folded);
	for (size_t i = 0; i < x.nfiles; i++) {
		if (x.files[i].dwfl)
			dwfl_end(x.files[i].dwfl);
		free(x.files[i].path);
	}
	free(x.files);
	free(x.maps);
	for (size_t i = 0; i < x.njit; i++) {
		for (size_t k = 0; k < x.jit[i].n; k++)
			free(x.jit[i].s[k].name);
		free(x.jit[i].s);
	}
	free(x.jit);
	for (size_t i = 0; i < x.sc.cap; i++)
		free(x.sc.name[i]);
	free(x.sc.file), free(x.sc.off), free(x.sc.name);
	if (err)
		pmon_report_release(r);
	return err;
}
