// SPDX-License-Identifier: MIT
/*
 * A simulation as a pmon recording (docs/pmon-data-format.md), so that
 * pmon report and pmon annotate read it with the same views as sampling:
 * each (object, instruction, event) with a non-zero simulated count is one
 * synthetic PERF_RECORD_SAMPLE whose PERF_SAMPLE_PERIOD is the count.
 *
 * Where the objects go: callgrind writes an instruction's address minus its
 * object's text bias (callgrind's bb.c: bb->offset = addr - obj->offset),
 * that is the ELF address objdump shows, so the load bias is not in the
 * file. A fixed-address executable (ET_EXEC) is placed at its own
 * addresses, where valgrind ran it; every position-independent object
 * (ET_DYN: PIEs, shared libraries) at a synthetic base of its own
 * (SIM_BASE + k * 4 GiB), one MMAP2 per executable PT_LOAD segment, so the
 * report turns each sample's address back into the same file offset and
 * ELF address. Code valgrind could not tie to an object ("???") keeps its
 * absolute address and no mapping: it reports as [unknown].
 * Core library: <elf.h> and pread() only (as lib/util/elfnote.c).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "sample/datafile.h"
#include <pmon/sample.h>
#include <pmon/sim.h>

#define SIM_BASE 0x600000000000ULL
#define SIM_STRIDE 0x100000000ULL
#define MAX_SEGS 8
#define MAX_TERMS 4
/* perf_event_attr.type of simulated events in the header and event
 * records: no kernel PMU has it ("sim" in ASCII). */
#define SIM_ATTR_TYPE 0x6d6973

struct seg {
	uint64_t vaddr, memsz, offset;
};

struct object {
	const char *name; /* as callgrind wrote it */
	char path[4096]; /* absolute, or "" when not an ELF file we can read */
	bool fixed; /* ET_EXEC: its own addresses */
	uint64_t base;
	struct seg seg[MAX_SEGS];
	unsigned nseg;
};

/* The executable PT_LOAD segments and type of the ELF file at @o->path. */
static bool read_elf(struct object *o)
{
	int fd = pmon__open_regular(o->path, false);
	Elf64_Ehdr eh;
	bool ok = false;

	if (fd < 0)
		return false;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    eh.e_phnum > 256 || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
		goto out;
	o->fixed = eh.e_type == ET_EXEC;
	for (unsigned i = 0; i < eh.e_phnum && o->nseg < MAX_SEGS; i++) {
		Elf64_Phdr ph;
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) != sizeof(ph))
			goto out;
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) || !ph.p_memsz)
			continue;
		/* Page-aligned as the loader maps it (p_vaddr = p_offset mod page). */
		uint64_t skew = ph.p_vaddr & 0xfff;
		if ((ph.p_offset & 0xfff) != skew || ph.p_vaddr > UINT64_MAX - ph.p_memsz)
			continue;
		o->seg[o->nseg++] =
			(struct seg){ ph.p_vaddr - skew, ph.p_memsz + skew, ph.p_offset - skew };
	}
	ok = o->nseg > 0;
out:
	close(fd);
	return ok;
}

struct writer {
	struct pmon_data_writer *w;
	struct object *obj;
	size_t nobj, capobj;
	unsigned ndyn;
	const char *cwd;
};

static struct object *object_of(struct writer *x, const char *name)
{
	for (size_t i = 0; i < x->nobj; i++)
		if (!strcmp(x->obj[i].name, name))
			return &x->obj[i];
	if (PMON_GROW(&x->obj, &x->capobj, x->nobj + 1))
		return NULL;
	struct object *o = &x->obj[x->nobj++];
	memset(o, 0, sizeof(*o));
	o->name = name;
	char joined[4096];
	if (name[0] != '/' && strcmp(name, "???"))
		pmon__fmt(joined, sizeof(joined), "%s/%s", x->cwd ? x->cwd : ".", name);
	else
		pmon__strlcpy(joined, name, sizeof(joined));
	char *real = strcmp(name, "???") ? realpath(joined, NULL) : NULL;
	if (real) {
		pmon__strlcpy(o->path, real, sizeof(o->path));
		free(real);
		if (!read_elf(o))
			o->path[0] = '\0';
	}
	if (o->path[0] && !o->fixed)
		o->base = SIM_BASE + SIM_STRIDE * x->ndyn++;
	return o;
}

static int write_mmaps(struct writer *x, const struct object *o, uint32_t pid)
{
	uint8_t bid[20];
	size_t bidlen = pmon__elf_build_id(o->path, bid);
	size_t nlen = strlen(o->path) + 1, size = 72 + ((nlen + 7) & ~(size_t)7);
	uint8_t rec[72 + 4096 + 8];

	for (unsigned i = 0; i < o->nseg; i++) {
		memset(rec, 0, sizeof(rec));
		struct perf_event_header h = { .type = PERF_RECORD_MMAP2,
					       .misc = PERF_RECORD_MISC_USER |
						       (bidlen ? PERF_RECORD_MISC_MMAP_BUILD_ID
							       : 0),
					       .size = (uint16_t)size };
		uint32_t ids[2] = { pid, pid }, prot = PROT_READ | PROT_EXEC;
		uint64_t v[3] = { o->base + o->seg[i].vaddr, o->seg[i].memsz, o->seg[i].offset };
		memcpy(rec, &h, sizeof(h));
		memcpy(rec + 8, ids, 8);
		memcpy(rec + 16, v, 24);
		if (bidlen) { /* as the kernel: size, 3 reserved bytes, the id */
			rec[40] = (uint8_t)bidlen;
			memcpy(rec + 44, bid, bidlen);
		}
		memcpy(rec + 64, &prot, 4);
		memcpy(rec + 72, o->path, nlen);
		int err = pmon_data_writer__add(x->w, rec, size);
		if (err)
			return err;
	}
	return 0;
}

/* The column of each term of @expr in @cg; -ENOENT naming a missing one. */
static int terms(const struct pmon_callgrind *cg, const char *expr, int *col)
{
	int n = 0;

	for (const char *s = expr; *s && n < MAX_TERMS;) {
		size_t len = strcspn(s, "+"), i = 0, ne = pmon_callgrind__nevents(cg);
		while (i < ne &&
		       (strlen(pmon_callgrind__event(cg, i)) != len ||
			strncmp(pmon_callgrind__event(cg, i), s, len)))
			i++;
		if (i == ne)
			return pmon__err(-ENOENT, "the simulation did not collect '%.*s'%s",
					 (int)len, s,
					 s[0] == 'B' ? " (simulate with --branch)" : "");
		col[n++] = (int)i;
		s += len;
		if (*s == '+')
			s++;
	}
	return n;
}

/* The call sites by callee, the heaviest first for each (a context called
 * from several sites of the same caller, or from several callers once
 * --separate-callers' depth is exceeded: the chain follows the heaviest). */
static int by_callee(const void *a, const void *b)
{
	const struct pmon_callgrind_call *x = a, *y = b;
	int c = strcmp(x->callee, y->callee);

	if (c)
		return c;
	if (x->inclusive != y->inclusive)
		return x->inclusive < y->inclusive ? 1 : -1;
	return (x->count < y->count) - (x->count > y->count);
}

static const struct pmon_callgrind_call *caller_of(const struct pmon_callgrind_call *calls,
						   size_t n, const char *fn)
{
	size_t lo = 0, hi = n;

	while (lo < hi) { /* the first of @fn's: the heaviest */
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(calls[mid].callee, fn) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && !strcmp(calls[lo].callee, fn) ? &calls[lo] : NULL;
}

#define MAX_CHAIN 127 /* perf's default sysctl_perf_event_max_stack */

static int write_run(struct writer *x, const struct pmon_callgrind *cg, uint32_t pid,
		     const struct pmon_sim_write_opts *o, bool chains)
{
	const struct pmon_sim_event *tab;
	int col[16][MAX_TERMS], ncol[16];
	size_t nc = pmon_callgrind__ncosts(cg), ncall = chains ? pmon_callgrind__ncalls(cg) : 0;
	struct pmon_callgrind_call *calls = NULL;
	int err = 0;

	pmon_sim_events(&tab);
	for (size_t e = 0; e < o->nevents; e++)
		if ((ncol[e] = terms(cg, tab[o->events[e]].engine, col[e])) < 0)
			return ncol[e];
	if (ncall) {
		if (!(calls = malloc(ncall * sizeof(*calls))))
			return -ENOMEM;
		for (size_t i = 0; i < ncall; i++)
			pmon_callgrind__call(cg, i, &calls[i]);
		qsort(calls, ncall, sizeof(*calls), by_callee);
	}
	/* The mappings first: the reader must see them before the samples;
	 * a call site's object too. */
	bool *mapped = calloc(x->capobj + nc + ncall + 1, sizeof(bool));
	if (!mapped) {
		free(calls);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nc + ncall && !err; i++) {
		struct pmon_callgrind_cost c;
		const char *name;
		if (i < nc) {
			pmon_callgrind__cost(cg, i, &c);
			name = c.obj;
		} else {
			name = calls[i - nc].obj;
		}
		struct object *ob = object_of(x, name);
		if (!ob) {
			err = -ENOMEM;
			break;
		}
		size_t k = (size_t)(ob - x->obj);
		if (ob->path[0] && !mapped[k]) {
			mapped[k] = true;
			err = write_mmaps(x, ob, pid);
		}
	}
	free(mapped);
	/* One sample per (instruction, context, event): identifier, ip,
	 * pid/tid, period, then with chains nr and the chain: the user
	 * context mark, the instruction, each caller's call instruction + 1
	 * (a return address: the reader takes 1 off callers' addresses). */
	uint64_t rec[8 + 2 + MAX_CHAIN + 2];
	const char *last_fn = NULL, *last_obj = NULL;
	uint64_t callers[MAX_CHAIN];
	size_t ncallers = 0;
	for (size_t i = 0; i < nc && !err; i++) {
		struct pmon_callgrind_cost c;
		pmon_callgrind__cost(cg, i, &c);
		const struct object *ob = object_of(x, c.obj);
		uint64_t ip = (ob && ob->path[0] ? ob->base : 0) + c.addr;
		if (chains && (c.fn != last_fn || c.obj != last_obj)) {
			ncallers = 0;
			const char *fn = c.fn;
			const struct pmon_callgrind_call *e;
			while (ncallers < MAX_CHAIN && (e = caller_of(calls, ncall, fn))) {
				const struct object *co = object_of(x, e->obj);
				callers[ncallers++] =
					(co && co->path[0] ? co->base : 0) + e->addr + 1;
				fn = e->fn;
			}
			last_fn = c.fn;
			last_obj = c.obj;
		}
		for (size_t e = 0; e < o->nevents && !err; e++) {
			uint64_t v = 0;
			for (int t = 0; t < ncol[e]; t++)
				v += c.v[col[e][t]];
			if (!v)
				continue;
			size_t n = 1; /* the header's 8 bytes */
			rec[n++] = e + 1;
			rec[n++] = ip;
			rec[n++] = (uint64_t)pid << 32 | pid;
			rec[n++] = v;
			if (chains) {
				rec[n++] = 2 + ncallers;
				rec[n++] = PERF_CONTEXT_USER;
				rec[n++] = ip;
				memcpy(&rec[n], callers, ncallers * sizeof(uint64_t));
				n += ncallers;
			}
			struct perf_event_header h = { .type = PERF_RECORD_SAMPLE,
						       .misc = PERF_RECORD_MISC_USER,
						       .size = (uint16_t)(n * 8) };
			memcpy(rec, &h, sizeof(h));
			err = pmon_data_writer__add(x->w, rec, n * 8);
		}
	}
	free(calls);
	return err;
}

int pmon_sim__write_recording(struct pmon_callgrind *const *cg, size_t ncg, const char *path,
			      const struct pmon_sim_write_opts *o)
{
	const struct pmon_sim_event *tab;
	size_t ntab = pmon_sim_events(&tab);
	struct pmon_data_header h = { 0 };
	struct writer x = { 0 };
	int err;

	if (!o)
		return pmon__err(-EINVAL, "pmon_sim__write_recording: no options");
	if ((err = PMON_OPTS_CHECK(o, struct pmon_sim_write_opts, command)))
		return err;
	/* A caller built before a field existed passed a smaller struct. */
	x.cwd = PMON_OPTS_GET(o, cwd, NULL);
	if (!o->nevents || o->nevents > 16)
		return pmon__err(-EINVAL, "%zu events: 1 to 16 can be written", o->nevents);
	for (size_t e = 0; e < o->nevents; e++)
		if (o->events[e] >= ntab)
			return pmon__err(-EINVAL, "simulated event %u does not exist",
					 o->events[e]);
	/* Every event must be in every run before anything is written. */
	for (size_t r = 0; r < ncg; r++)
		for (size_t e = 0; e < o->nevents; e++) {
			int col[MAX_TERMS];
			if ((err = terms(cg[r], tab[o->events[e]].engine, col)) < 0)
				return err;
		}
	bool chains = PMON_OPTS_GET(o, callchains, false);
	h.sample_type =
		PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_PERIOD;
	if (chains)
		h.sample_type |= PERF_SAMPLE_CALLCHAIN;
	h.attr_type = SIM_ATTR_TYPE;
	h.attr_config = o->events[0];
	pmon__strlcpy(h.event, tab[o->events[0]].name, sizeof(h.event));
	pmon__strlcpy(h.command, o->command ? o->command : "", sizeof(h.command));
	if (!(x.w = pmon_data_writer__open(path, &h)))
		return -errno;
	err = 0;
	for (size_t e = 0; e < o->nevents && !err; e++) {
		uint64_t id = e + 1;
		err = pmon_data_writer__add_event(x.w, (unsigned)e, tab[o->events[e]].name,
						  SIM_ATTR_TYPE, o->events[e], 0, 0, &id, 1);
	}
	for (size_t r = 0; r < ncg && !err; r++) {
		uint32_t pid = pmon_callgrind__pid(cg[r]);
		err = write_run(&x, cg[r], pid ? pid : (uint32_t)(r + 1), o, chains);
	}
	free(x.obj);
	if (err) {
		pmon_data_writer__abandon(x.w);
		return err;
	}
	return pmon_data_writer__close(x.w);
}

int pmon_sim__is_recording(const char *path)
{
	struct pmon_data_disk_header h;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	ssize_t n;
	struct stat st;

	if (fd < 0)
		return pmon__err(-errno, "cannot open '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return pmon__err(-PMON_ERRNO__PARSE, "'%s' is not a recording (not a file)", path);
	}
	n = pread(fd, &h, sizeof(h), 0);
	close(fd);
	if (n != (ssize_t)sizeof(h) || memcmp(h.magic, PMON_DATA_MAGIC, 8))
		return pmon__err(-PMON_ERRNO__PARSE, "'%s' is not a recording", path);
	return h.attr_type == SIM_ATTR_TYPE;
}
