// SPDX-License-Identifier: MIT
/*
 * pmon simulate --mca: the pipeline view of a hot loop by LLVM's llvm-mca,
 * a program pmon runs (never a library it links). What is here is pure:
 * the hottest block of a function from the simulated per-instruction
 * counts, the llvm-mca -mcpu for a CPU (a table by vendor, family and
 * model), objdump's disassembly of the block turned into assembly
 * llvm-mca reads, and llvm-mca's summary read back. objdump's and
 * llvm-mca's output are another program's: every line is bounded by the
 * buffer, nothing is NUL-terminated for us.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include <pmon/sample.h>
#include <pmon/sim.h>
#include <pmon/spawn.h>

/* ---- the hottest block ------------------------------------------------ */

static bool fn_is(const char *fn, const char *want)
{
	size_t n = strlen(want);

	/* callgrind names a function re-entered by a jump to its start "f'2" */
	return !strncmp(fn, want, n) && (fn[n] == '\0' || fn[n] == '\'');
}

struct ins {
	uint64_t addr, count;
};

static int by_addr(const void *a, const void *b)
{
	uint64_t x = ((const struct ins *)a)->addr, y = ((const struct ins *)b)->addr;

	return (x > y) - (x < y);
}

int pmon_sim__hot_block(struct pmon_callgrind *const *cg, size_t ncg, const char *fn,
			struct pmon_sim_block *out)
{
	struct ins *in = NULL;
	size_t n = 0, cap = 0;
	const char *obj = NULL;

	memset(out, 0, sizeof(*out));
	/* every executed instruction of @fn in the first object that has it,
	 * its "Ir" summed over processes */
	for (size_t k = 0; k < ncg; k++) {
		size_t ir = 0, ne = pmon_callgrind__nevents(cg[k]);
		while (ir < ne && strcmp(pmon_callgrind__event(cg[k], ir), "Ir"))
			ir++;
		if (ir == ne)
			continue;
		for (size_t i = 0; i < pmon_callgrind__ncosts(cg[k]); i++) {
			struct pmon_callgrind_cost c;
			pmon_callgrind__cost(cg[k], i, &c);
			if (!fn_is(c.fn, fn) || !c.v[ir] || (obj && strcmp(obj, c.obj)))
				continue;
			obj = c.obj;
			size_t j = 0;
			while (j < n && in[j].addr != c.addr)
				j++;
			if (j == n) {
				if (PMON_GROW(&in, &cap, n + 1)) {
					free(in);
					return -ENOMEM;
				}
				in[n++] = (struct ins){ c.addr, 0 };
			}
			in[j].count += c.v[ir];
		}
	}
	if (!n) {
		free(in);
		return pmon__err(-ENOENT, "'%s' executed no instruction in the simulation", fn);
	}
	qsort(in, n, sizeof(*in), by_addr);
	/* The hottest instruction and its neighbours executed as often
	 * (pmon_sim__hot_range() with exact counts: callgrind gives no
	 * branches here), as annotate --mca finds it. */
	struct pmon_sim_insn *si = calloc(n, sizeof(*si));
	size_t lo, hi, h;
	if (!si) {
		free(in);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		si[i] = (struct pmon_sim_insn){ .addr = in[i].addr, .count = in[i].count };
	int err = pmon_sim__hot_range(si, n, true, &lo, &hi, &h);
	free(si);
	if (err) {
		free(in);
		return pmon__err(err, "'%s' executed no instruction in the simulation", fn);
	}
	pmon__strlcpy(out->obj, obj, sizeof(out->obj));
	out->start = in[lo].addr;
	out->last = in[hi].addr;
	out->ninsn = hi - lo + 1;
	out->count = in[h].count;
	for (size_t i = lo; i <= hi; i++)
		out->executed += in[i].count;
	free(in);
	return 0;
}

static bool is_target(const struct pmon_sim_insn *in, size_t n, uint64_t addr)
{
	for (size_t i = 0; i < n; i++)
		if (in[i].target == addr)
			return true;
	return false;
}

int pmon_sim__hot_range(const struct pmon_sim_insn *in, size_t n, bool exact, size_t *lo,
			size_t *hi, size_t *hot)
{
	size_t h = 0, best = SIZE_MAX;

	for (size_t i = 1; i < n; i++)
		if (in[i].count > in[h].count)
			h = i;
	if (!n || !in[h].count)
		return pmon__err(-ENOENT, "no instruction of the function has a count");
	*hot = *lo = *hi = h;
	/* The innermost loop around it: the shortest backward jump that
	 * crosses it (a loop's closing branch; compilers put the test at the
	 * bottom). Addresses are sorted, so the target's index is found by
	 * a scan. */
	for (size_t j = h; j < n; j++) {
		uint64_t t = in[j].target;
		if (!in[j].branch || !t || t > in[h].addr || t < in[0].addr)
			continue;
		if (best == SIZE_MAX || in[j].addr - t < in[best].addr - in[best].target)
			best = j;
	}
	if (best != SIZE_MAX) {
		size_t k = 0;
		while (k < h && in[k].addr < in[best].target)
			k++;
		*lo = k;
		*hi = best;
		return 0;
	}
	if (exact) { /* a loop body or straight block runs each instruction as often */
		while (*lo > 0 && in[*lo - 1].count == in[h].count)
			(*lo)--;
		while (*hi + 1 < n && in[*hi + 1].count == in[h].count)
			(*hi)++;
		return 0;
	}
	while (*lo > 0 && !in[*lo - 1].branch && !is_target(in, n, in[*lo].addr))
		(*lo)--;
	while (*hi + 1 < n && !in[*hi].branch && !is_target(in, n, in[*hi + 1].addr))
		(*hi)++;
	return 0;
}

/* ---- the measured cost of a block --------------------------------------- */

/* Event names by role: perf's generic names (tools/perf/util/parse-events.c's
 * event_symbols_hw), Intel's architectural events (SDM Vol. 3B table 21-1:
 * UnHalted Core Cycles, Instructions Retired, UnHalted Reference Cycles) as
 * the kernel's and perf's JSON files spell them, and AMD's (PPR for family
 * 19H/1AH: PMCx076 LsNotHaltedCyc, PMCx0C0 ExRetInstr). */
static const struct {
	const char *name;
	enum pmon_sim_role role;
} roles[] = {
	{ "cycles", PMON_SIM_ROLE_CYCLES },
	{ "cpu-cycles", PMON_SIM_ROLE_CYCLES },
	{ "cpu_clk_unhalted.thread", PMON_SIM_ROLE_CYCLES },
	{ "cpu_clk_unhalted.thread_p", PMON_SIM_ROLE_CYCLES },
	{ "cpu_clk_unhalted.core", PMON_SIM_ROLE_CYCLES },
	{ "cpu_clk_unhalted.core_p", PMON_SIM_ROLE_CYCLES },
	{ "ls_not_halted_cyc", PMON_SIM_ROLE_CYCLES },
	{ "ref-cycles", PMON_SIM_ROLE_REF_CYCLES },
	{ "cpu_clk_unhalted.ref_tsc", PMON_SIM_ROLE_REF_CYCLES },
	{ "cpu_clk_unhalted.ref", PMON_SIM_ROLE_REF_CYCLES },
	{ "instructions", PMON_SIM_ROLE_INSTRUCTIONS },
	{ "inst_retired.any", PMON_SIM_ROLE_INSTRUCTIONS },
	{ "inst_retired.any_p", PMON_SIM_ROLE_INSTRUCTIONS },
	{ "ex_ret_instr", PMON_SIM_ROLE_INSTRUCTIONS },
};

enum pmon_sim_role pmon_sim_event_role(const char *name)
{
	char base[64];
	size_t n;

	if (!name)
		return PMON_SIM_ROLE_OTHER;
	/* "cpu_core/cycles/u" -> "cycles"; "cycles:ppp" -> "cycles" */
	const char *slash = strchr(name, '/');
	if (slash) {
		const char *end = strchr(slash + 1, '/');
		if (!end)
			return PMON_SIM_ROLE_OTHER;
		name = slash + 1;
		n = (size_t)(end - name);
	} else {
		n = strcspn(name, ":");
	}
	if (!n || n >= sizeof(base))
		return PMON_SIM_ROLE_OTHER;
	for (size_t i = 0; i < n; i++)
		base[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] - 'A' + 'a' : name[i]);
	base[n] = '\0';
	for (size_t i = 0; i < PMON_ARRAY_SIZE(roles); i++)
		if (!strcmp(base, roles[i].name))
			return roles[i].role;
	return PMON_SIM_ROLE_OTHER;
}

/* The samples and periods of annotation @a on @start..@last. */
static void in_range(const struct pmon_annotation *a, uint64_t start, uint64_t last,
		     uint64_t *samples, double *period)
{
	*samples = 0;
	*period = 0;
	for (size_t i = 0; i < a->n; i++)
		if (a->insn[i].addr >= start && a->insn[i].addr <= last) {
			*samples += a->insn[i].samples;
			*period += (double)a->insn[i].period;
		}
}

int pmon_sim__block_cost(const struct pmon_annotation *cycles,
			 const struct pmon_annotation *instructions, uint64_t start, uint64_t last,
			 size_t ninsn, struct pmon_sim_block_cost *out)
{
	if (!cycles || !instructions || !out || !ninsn || last < start)
		return pmon__err(-EINVAL, "pmon_sim__block_cost: no annotation, or an empty block");
	memset(out, 0, sizeof(*out));
	/* The two events' hottest files may differ (annotate picks, per
	 * event, the file with most samples): addresses of two files do not
	 * add up. */
	if (strcmp(cycles->dso, instructions->dso) || cycles->start != instructions->start)
		return pmon__err(-ENOENT,
				 "'%s': the cycles and the instructions samples are in "
				 "different files",
				 cycles->symbol);
	in_range(cycles, start, last, &out->cycles_samples, &out->cycles);
	in_range(instructions, start, last, &out->instructions_samples, &out->instructions);
	if (!out->cycles_samples || !out->instructions_samples || out->cycles <= 0)
		return pmon__err(
			-ENOENT, "no %s sample fell in the block 0x%llx-0x%llx of '%s'",
			!out->cycles_samples || out->cycles <= 0 ? "cycles" : "instructions",
			(unsigned long long)start, (unsigned long long)last, cycles->symbol);
	out->ipc = out->instructions / out->cycles;
	out->cycles_per_iteration = (double)ninsn / out->ipc;
	return 0;
}

/* ---- -mcpu ------------------------------------------------------------- */

/* llvm-mca's scheduling models by CPUID family and model (SDM Vol. 4
 * table 1-1's model numbers; AMD's families 17H Zen 1/2, 19H Zen 3/4, 1AH
 * Zen 5). Names are LLVM 14's (Debian 12); a newer model falls back to the
 * nearest older one LLVM 14 has (Zen 4 and 5 to znver3). */
static const struct {
	enum pmon_vendor vendor;
	unsigned family, model_lo, model_hi;
	const char *mcpu;
} mcpus[] = {
	{ PMON_VENDOR_AMD, 0x17, 0x00, 0x2f, "znver1" },
	{ PMON_VENDOR_AMD, 0x17, 0x30, 0xff, "znver2" },
	{ PMON_VENDOR_HYGON, 0x18, 0x00, 0xff, "znver1" },
	{ PMON_VENDOR_AMD, 0x19, 0x00, 0xff, "znver3" },
	{ PMON_VENDOR_AMD, 0x1a, 0x00, 0xff, "znver3" },
	{ PMON_VENDOR_AMD, 0x15, 0x00, 0x0f, "bdver1" },
	{ PMON_VENDOR_AMD, 0x10, 0x00, 0xff, "amdfam10" },
	{ PMON_VENDOR_AMD, 0x0f, 0x00, 0xff, "k8" },
	{ PMON_VENDOR_INTEL, 6, 0x2a, 0x2a, "sandybridge" },
	{ PMON_VENDOR_INTEL, 6, 0x2d, 0x2d, "sandybridge" },
	{ PMON_VENDOR_INTEL, 6, 0x3a, 0x3a, "ivybridge" },
	{ PMON_VENDOR_INTEL, 6, 0x3e, 0x3e, "ivybridge" },
	{ PMON_VENDOR_INTEL, 6, 0x3c, 0x3c, "haswell" },
	{ PMON_VENDOR_INTEL, 6, 0x3f, 0x3f, "haswell" },
	{ PMON_VENDOR_INTEL, 6, 0x45, 0x46, "haswell" },
	{ PMON_VENDOR_INTEL, 6, 0x3d, 0x3d, "broadwell" },
	{ PMON_VENDOR_INTEL, 6, 0x47, 0x47, "broadwell" },
	{ PMON_VENDOR_INTEL, 6, 0x4f, 0x4f, "broadwell" },
	{ PMON_VENDOR_INTEL, 6, 0x56, 0x56, "broadwell" },
	{ PMON_VENDOR_INTEL, 6, 0x4e, 0x4e, "skylake" },
	{ PMON_VENDOR_INTEL, 6, 0x5e, 0x5e, "skylake" },
	{ PMON_VENDOR_INTEL, 6, 0x8e, 0x8e, "skylake" },
	{ PMON_VENDOR_INTEL, 6, 0x9e, 0x9e, "skylake" },
	{ PMON_VENDOR_INTEL, 6, 0xa5, 0xa6, "skylake" },
	{ PMON_VENDOR_INTEL, 6, 0x55, 0x55, "cascadelake" },
	{ PMON_VENDOR_INTEL, 6, 0x7d, 0x7e, "icelake-client" },
	{ PMON_VENDOR_INTEL, 6, 0x6a, 0x6c, "icelake-server" },
	{ PMON_VENDOR_INTEL, 6, 0x8c, 0x8d, "tigerlake" },
	{ PMON_VENDOR_INTEL, 6, 0x97, 0x9a, "alderlake" },
	{ PMON_VENDOR_INTEL, 6, 0xbe, 0xbe, "alderlake" },
	{ PMON_VENDOR_INTEL, 6, 0xb7, 0xb7, "alderlake" },
	{ PMON_VENDOR_INTEL, 6, 0xba, 0xba, "alderlake" },
	{ PMON_VENDOR_INTEL, 6, 0xbf, 0xbf, "alderlake" },
	{ PMON_VENDOR_INTEL, 6, 0xaa, 0xac, "alderlake" }, /* Meteor Lake: LLVM 14 has none */
	{ PMON_VENDOR_INTEL, 6, 0xbd, 0xbd, "alderlake" }, /* Lunar Lake */
	{ PMON_VENDOR_INTEL, 6, 0x8f, 0x8f, "sapphirerapids" },
	{ PMON_VENDOR_INTEL, 6, 0x5c, 0x5c, "goldmont" },
	{ PMON_VENDOR_INTEL, 6, 0x7a, 0x7a, "goldmont-plus" },
	{ PMON_VENDOR_INTEL, 6, 0x37, 0x37, "silvermont" },
	{ PMON_VENDOR_INTEL, 6, 0x4d, 0x4d, "silvermont" },
	{ PMON_VENDOR_INTEL, 6, 0x1a, 0x1a, "nehalem" },
	{ PMON_VENDOR_INTEL, 6, 0x1e, 0x1f, "nehalem" },
	{ PMON_VENDOR_INTEL, 6, 0x25, 0x25, "westmere" },
	{ PMON_VENDOR_INTEL, 6, 0x2c, 0x2c, "westmere" },
	{ PMON_VENDOR_INTEL, 6, 0x0f, 0x0f, "core2" },
	{ PMON_VENDOR_INTEL, 6, 0x17, 0x17, "penryn" },
	{ PMON_VENDOR_INTEL, 6, 0x1c, 0x1c, "bonnell" },
};

const char *pmon_sim_mcpu(const struct pmon_cpu_ident *id)
{
	for (size_t i = 0; i < sizeof(mcpus) / sizeof(mcpus[0]); i++)
		if (mcpus[i].vendor == id->vendor && mcpus[i].family == id->family &&
		    id->model >= mcpus[i].model_lo && id->model <= mcpus[i].model_hi)
			return mcpus[i].mcpu;
	return id->vendor == PMON_VENDOR_AMD || id->vendor == PMON_VENDOR_HYGON ? "x86-64-v2"
										: "x86-64";
}

/* ---- objdump's block into llvm-mca's input ------------------------------- */

static const char *eol(const char *s, const char *e)
{
	const char *nl = memchr(s, '\n', (size_t)(e - s));
	return nl ? nl : e;
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

int pmon_sim__objdump_asm(const char *text, size_t len, uint64_t last, char *out, size_t outlen,
			  size_t *ninsn)
{
	const char *s = text, *end = text + len;
	size_t o = 0, n = 0;

	*ninsn = 0;
	if (!outlen)
		return -EINVAL;
	out[0] = '\0';
	for (; s < end; s = eol(s, end) + 1) {
		const char *e = eol(s, end), *p = s;
		/* "    1139:\tdec    %rdi" (--no-show-raw-insn) */
		while (p < e && *p == ' ')
			p++;
		const char *a = p;
		uint64_t addr = 0;
		while (p < e && is_hex(*p) && p - a < 16) {
			addr = addr << 4 | (uint64_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
			p++;
		}
		if (p == a || p >= e || *p != ':' || p + 1 >= e || p[1] != '\t')
			continue;
		if (addr > last) /* objdump ran on to the end of the last instruction */
			break;
		p += 2;
		/* without the comment, and a jump's or call's target a label of
		 * its own: llvm-mca repeats the block whatever its branches say */
		const char *c = memchr(p, '#', (size_t)(e - p));
		const char *ie = c ? c : e;
		while (ie > p && (ie[-1] == ' ' || ie[-1] == '\t'))
			ie--;
		if (ie == p)
			continue;
		/* the mnemonic: up to a blank, within the line (@text is not a
		 * string: no strcspn() past its end) */
		size_t mlen = 0;
		while (p + mlen < ie && p[mlen] != ' ' && p[mlen] != '\t')
			mlen++;
		bool branch = (p[0] == 'j' || (mlen >= 4 && !memcmp(p, "call", 4))) &&
			!memchr(p, '*', (size_t)(ie - p)); /* indirect: as is */
		int w;
		if (branch)
			w = pmon__fmt(out + o, outlen - o, "%.*s .Lblock\n", (int)mlen, p) ? 0 : -1;
		else
			w = pmon__fmt(out + o, outlen - o, "%.*s\n", (int)(ie - p), p) ? 0 : -1;
		if (w < 0)
			return pmon__err(-ENOSPC, "the block's assembly is larger than %zu bytes",
					 outlen);
		o += strlen(out + o);
		n++;
	}
	if (!n)
		return pmon__err(-ENOENT, "objdump printed no instruction of the block");
	/* the label the branches go to: the block's start */
	char head[] = ".Lblock:\n";
	size_t hl = strlen(head);
	if (o + hl + 1 > outlen)
		return pmon__err(-ENOSPC, "the block's assembly is larger than %zu bytes", outlen);
	memmove(out + hl, out, o + 1);
	memcpy(out, head, hl);
	*ninsn = n;
	return 0;
}

/* ---- llvm-mca's summary ---------------------------------------------------- */

/* "Name:   123.4" at the start of a line of @s..@e: the number, or -1. */
static double field(const char *s, const char *e, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = s; p < e; p = eol(p, e) + 1) {
		const char *le = eol(p, e);
		if ((size_t)(le - p) <= n || memcmp(p, name, n) || p[n] != ':')
			continue;
		const char *q = p + n + 1;
		while (q < le && (*q == ' ' || *q == '\t'))
			q++;
		double v = 0, scale = 0;
		bool any = false;
		for (; q < le; q++) {
			if (*q >= '0' && *q <= '9') {
				any = true;
				if (scale) {
					v += (*q - '0') * scale;
					scale /= 10;
				} else {
					v = v * 10 + (*q - '0');
					if (v > 1e15)
						return -1;
				}
			} else if (*q == '.' && !scale) {
				scale = 0.1;
			} else {
				break;
			}
		}
		return any ? v : -1;
	}
	return -1;
}

int pmon_sim__mca_summary(const char *text, size_t len, struct pmon_mca_summary *out)
{
	const char *e = text + len;

	out->iterations = field(text, e, "Iterations");
	out->instructions = field(text, e, "Instructions");
	out->cycles = field(text, e, "Total Cycles");
	out->rthroughput = field(text, e, "Block RThroughput");
	out->ipc = field(text, e, "IPC");
	if (out->iterations <= 0 || out->cycles < 0 || out->instructions < 0)
		return pmon__err(-PMON_ERRNO__PARSE,
				 "llvm-mca's output has no 'Iterations', 'Instructions' and "
				 "'Total Cycles'");
	return 0;
}

/* llvm-mca's output larger than this is refused */
#define MCA_MAX_TEXT (64u << 20)

int pmon_sim__mca_run(const char *llvm_mca, const char *asmtext, const char *mcpu,
		      unsigned iterations, const char *dir, char **text, size_t *len,
		      struct pmon_mca_summary *sum)
{
	char asmf[4200], out[4200], a_mcpu[96], a_it[48];
	struct pmon_spawn_opts so = { .sz = sizeof(so), .stdout_path = out };
	int status = 0, err;
	FILE *af;

	*text = NULL;
	*len = 0;
	pmon__fmt(asmf, sizeof(asmf), "%s/block.s", dir);
	af = fopen(asmf, "we");
	if (!af)
		return pmon__err(-EIO, "cannot write '%s'", asmf);
	err = fputs(asmtext, af) < 0;
	if (fclose(af) || err)
		return pmon__err(-EIO, "cannot write '%s'", asmf);
	pmon__fmt(a_mcpu, sizeof(a_mcpu), "-mcpu=%s", mcpu);
	pmon__fmt(a_it, sizeof(a_it), "-iterations=%u", iterations);
	pmon__fmt(out, sizeof(out), "%s/mca.txt", dir);
	char *mc[] = { (char *)llvm_mca, a_mcpu, a_it, "-bottleneck-analysis", asmf, NULL };
	err = pmon_spawn(mc, &so, &status);
	if (err || !WIFEXITED(status) || WEXITSTATUS(status))
		return pmon__err(err ? err : -ECHILD,
				 "llvm-mca failed on the block (its message is above)");
	int fd = pmon__open_regular(out, true);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) || (uint64_t)st.st_size > MCA_MAX_TEXT ||
	    !(*text = malloc((size_t)st.st_size + 1))) {
		if (fd >= 0)
			close(fd);
		return pmon__err(-EIO, "cannot read llvm-mca's output");
	}
	ssize_t n, got = 0;
	while (got < st.st_size && (n = read(fd, *text + got, (size_t)(st.st_size - got))) > 0)
		got += n;
	close(fd);
	(*text)[got] = '\0';
	*len = (size_t)got;
	err = pmon_sim__mca_summary(*text, *len, sum);
	if (err) {
		free(*text);
		*text = NULL;
	}
	return err;
}

/* objdump's or llvm-mca's output larger than this is not read */
#define MAX_TOOL_TEXT (64u << 20)

/* @path's bytes, NUL-terminated (malloc()ed), at most MAX_TOOL_TEXT. */
static char *read_text(const char *path, size_t *len)
{
	int fd = pmon__open_regular(path, true); /* our own file, in our own folder */
	struct stat st;
	char *buf = NULL;

	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st) && (uint64_t)st.st_size <= MAX_TOOL_TEXT &&
	    (buf = malloc((size_t)st.st_size + 1))) {
		ssize_t n = pread(fd, buf, (size_t)st.st_size, 0);
		*len = n > 0 ? (size_t)n : 0;
		buf[*len] = '\0';
	}
	close(fd);
	return buf;
}

int pmon_sim__block_asm(const char *objdump, const char *obj, uint64_t start, uint64_t last,
			const char *dir, char **asmtext, size_t *ninsn)
{
	char from[32], to[32], dump[4200];
	struct pmon_spawn_opts o = { .sz = sizeof(o), .stdout_path = dump };
	int status = 0, err;
	size_t len = 0;

	*asmtext = NULL;
	snprintf(from, sizeof(from), "--start-address=0x%llx", (unsigned long long)start);
	snprintf(to, sizeof(to), "--stop-address=0x%llx", (unsigned long long)last + 16);
	snprintf(dump, sizeof(dump), "%s/block.objdump", dir);
	char *od[] = { (char *)objdump, "-d", "--no-show-raw-insn", from, to, (char *)obj, NULL };
	if (pmon_spawn(od, &o, &status) || !WIFEXITED(status) || WEXITSTATUS(status))
		return pmon__err(-EIO,
				 "objdump could not disassemble '%s' (Debian package "
				 "'binutils')",
				 obj);
	char *text = read_text(dump, &len), *out = malloc(1 << 16);
	if (!text || !out) {
		free(text);
		free(out);
		return pmon__err(-ENOMEM, "cannot read objdump's output");
	}
	err = pmon_sim__objdump_asm(text, len, last, out, 1 << 16, ninsn);
	free(text);
	if (err) {
		free(out);
		return err;
	}
	*asmtext = out;
	return 0;
}

/* bench's body (Intel syntax, ';' between instructions) as llvm-mca's input. */
static char *body_asm(const char *body)
{
	size_t cap = strlen(body) * 2 + 64;
	char *asmtext = malloc(cap);

	if (!asmtext)
		return NULL;
	size_t o = (size_t)snprintf(asmtext, cap, ".intel_syntax noprefix\n");
	for (const char *p = body; *p;) {
		size_t n = strcspn(p, ";\n");
		while (n && (*p == ' ' || *p == '\t'))
			p++, n--;
		if (n)
			o += (size_t)snprintf(asmtext + o, cap - o, "%.*s\n", (int)n, p);
		p += n;
		if (*p)
			p++;
	}
	return asmtext;
}

int pmon_sim__predict(const char *llvm_mca, const char *body, const char *mcpu, unsigned iterations,
		      struct pmon_mca_summary *sum)
{
	char dir[4096], path[4200];
	char *asmtext = body_asm(body), *text = NULL;
	size_t len = 0;
	int err;

	if (!asmtext)
		return pmon__err(-ENOMEM, "out of memory");
	if ((err = pmon_spawn_workdir("mca", dir, sizeof(dir)))) {
		free(asmtext);
		return err;
	}
	err = pmon_sim__mca_run(llvm_mca, asmtext, mcpu, iterations, dir, &text, &len, sum);
	snprintf(path, sizeof(path), "%s/block.s", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/mca.txt", dir);
	unlink(path);
	rmdir(dir);
	free(asmtext);
	free(text);
	return err;
}
