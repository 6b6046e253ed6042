// SPDX-License-Identifier: MIT
/*
 * pmon_annotate(): the samples of one symbol per address (counted by
 * report.c's reader), and its instructions: the symbol's bytes from its ELF
 * file (through libdwfl's section lookup), decoded by Capstone in Intel
 * syntax, each tied to its source line by the module's DWARF line table.
 * Capstone is needed here only, and is loaded on first use, as libpfm4 is
 * (lib/event/pfm.c): a program that reads reports but never annotates
 * (pmon report, a C program linking libpmon-report) maps no Capstone, whose
 * relocated tables cost 3 MB of resident memory.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <gelf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <capstone/capstone.h>

#include "internal.h"
#include "report/report.h"

/* The soname of the major version the header describes: cs_insn's layout
 * changes between major versions, so another one must not be taken. */
#define CS_STR_(x) #x
#define CS_STR(x) CS_STR_(x)
#define CS_SONAME "libcapstone.so." CS_STR(CS_API_MAJOR)

static struct {
	cs_err (*open)(cs_arch, cs_mode, csh *);
	size_t (*disasm)(csh, const uint8_t *, size_t, uint64_t, size_t, cs_insn **);
	void (*free)(cs_insn *, size_t);
	cs_err (*close)(csh *);
} cs;

static pthread_once_t cs_once = PTHREAD_ONCE_INIT;
static bool cs_ok;
static char cs_why[256];

static void cs_init(void)
{
	void *h = dlopen(CS_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(cs_why, sizeof(cs_why), "%s", dlerror());
		return;
	}
	*(void **)&cs.open = dlsym(h, "cs_open");
	*(void **)&cs.disasm = dlsym(h, "cs_disasm");
	*(void **)&cs.free = dlsym(h, "cs_free");
	*(void **)&cs.close = dlsym(h, "cs_close");
	cs_ok = cs.open && cs.disasm && cs.free && cs.close;
	if (!cs_ok)
		snprintf(cs_why, sizeof(cs_why), "%s lacks cs_open/cs_disasm", CS_SONAME);
}

/* @path interned in @a->srcs; NULL without memory. */
static const char *intern_src(struct pmon_annotation *a, const char *path)
{
	for (size_t i = 0; i < a->nsrcs; i++)
		if (!strcmp(a->srcs[i], path))
			return a->srcs[i];
	char **n = realloc(a->srcs, (a->nsrcs + 1) * sizeof(*n));
	if (!n)
		return NULL;
	a->srcs = n;
	return (a->srcs[a->nsrcs] = strdup(path)) ? a->srcs[a->nsrcs++] : NULL;
}

int pmon__disassemble(Dwfl_Module *mod, uint64_t inside, struct pmon_annotation *a)
{
	GElf_Off symoff = 0;
	GElf_Sym sym;
	GElf_Addr bias = pmon__module_bias(mod), scnbias, rel;
	const char *name =
		mod ? dwfl_module_addrinfo(mod, inside, &symoff, &sym, NULL, NULL, NULL) : NULL;
	Elf_Scn *scn;
	Elf_Data *d;
	csh dis;
	cs_insn *insn = NULL;
	size_t n;

	if (!name || !sym.st_size)
		return pmon__err(-ENOENT, "%s: no sized symbol at 0x%llx", a->dso,
				 (unsigned long long)(inside - bias));
	uint64_t start = inside - symoff;
	a->start = start - bias;
	a->size = sym.st_size;
	rel = start;
	scn = dwfl_module_address_section(mod, &rel, &scnbias);
	/* st_size comes from the file: rel + size could wrap (overflow-safe form). */
	if (!scn || !(d = elf_getdata(scn, NULL)) || !d->d_buf || rel > d->d_size ||
	    a->size > d->d_size - rel)
		return pmon__err(
			-ENOTSUP,
			"%s: the bytes of '%s' are not on disk (its symbols came from "
			"debuginfo, which holds no code: the binary that ran was replaced)",
			a->dso, name);
	pthread_once(&cs_once, cs_init);
	if (!cs_ok)
		return pmon__err(-ENOTSUP, "cannot load the disassembler Capstone: %s (install %s)",
				 cs_why, CS_SONAME);
	if (cs.open(CS_ARCH_X86, CS_MODE_64, &dis) != CS_ERR_OK)
		return pmon__err(-ENOMEM, "Capstone: cannot open an x86-64 decoder");
	n = cs.disasm(dis, (const uint8_t *)d->d_buf + rel, a->size, a->start, 0, &insn);
	if (!n) {
		cs.close(&dis);
		return pmon__err(-PMON_ERRNO__PARSE, "%s: '%s' does not decode as x86-64", a->dso,
				 name);
	}
	a->insn = calloc(n, sizeof(*a->insn));
	for (size_t i = 0; a->insn && i < n; i++) {
		struct pmon_annotate_insn *in = &a->insn[a->n++];
		Dwfl_Line *ln = dwfl_module_getsrc(mod, insn[i].address + bias);
		const char *src;
		int lineno = 0;
		in->addr = insn[i].address;
		pmon__fmt(in->text, sizeof(in->text), "%s%s%s", insn[i].mnemonic,
			  insn[i].op_str[0] ? " " : "", insn[i].op_str);
		if (ln && (src = dwfl_lineinfo(ln, NULL, &lineno, NULL, NULL, NULL)) &&
		    lineno > 0) {
			in->src = intern_src(a, src);
			in->line = (unsigned)lineno;
		}
	}
	cs.free(insn, n);
	cs.close(&dis);
	return a->insn ? 0 : -ENOMEM;
}

int pmon_annotate(const char *path, const char *symbol, const struct pmon_report_opts *opts,
		  struct pmon_annotation *a)
{
	struct pmon__hits h;
	int err = pmon__annotate_hits(path, symbol, opts, a, &h);

	if (!err)
		err = pmon__disassemble(h.mod, h.n ? h.addr[0] : 0, a);
	uint64_t bias = pmon__module_bias(h.mod);
	for (size_t i = 0; !err && i < h.n; i++) {
		a->samples += h.samples[i];
		a->period += h.period[i];
		for (size_t k = 0; k < a->n; k++)
			if (a->insn[k].addr + bias == h.addr[i]) {
				a->insn[k].samples += h.samples[i];
				a->insn[k].period += h.period[i];
				break;
			}
	}
	pmon__hits_release(&h);
	if (err)
		pmon_annotation_release(a);
	return err;
}
