// SPDX-License-Identifier: MIT
/*
 * Raw CPUID snapshots (pmon/cpu.h): the one place that executes CPUID, reads
 * /dev/cpu/N/cpuid or parses dump files. Everything above works on the
 * sorted rows kept here, so a live CPU and another machine's dump look alike.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include <pmon/arch.h>
#include <pmon/cpu.h>

struct cpuid_row {
	uint32_t leaf, subleaf;
	struct pmon_cpuid_regs r;
	unsigned line; /* source line for files, 0 otherwise */
};

struct pmon_cpuid {
	struct cpuid_row *rows;
	size_t n, cap;
	char source[256];
	int cpu; /* the logical CPU it was taken on; -1: a file, or unpinned */
};

/* A way to execute one CPUID: the instruction, or the cpuid device. */
typedef int (*cpuid_fetch_fn)(void *ctx, uint32_t leaf, uint32_t sub, struct pmon_cpuid_regs *r);

static struct pmon_cpuid *snap_new(const char *source)
{
	struct pmon_cpuid *c = calloc(1, sizeof(*c));

	if (c) {
		pmon__strlcpy(c->source, source, sizeof(c->source));
		c->cpu = -1;
	}
	return c;
}

void pmon_cpuid__free(struct pmon_cpuid *c)
{
	if (!c)
		return;
	free(c->rows);
	free(c);
}

static int snap_add(struct pmon_cpuid *c, uint32_t leaf, uint32_t sub,
		    const struct pmon_cpuid_regs *r, unsigned line)
{
	if (PMON_GROW(&c->rows, &c->cap, c->n + 1))
		return -ENOMEM;
	c->rows[c->n++] = (struct cpuid_row){ leaf, sub, *r, line };
	return 0;
}

static int row_cmp(const void *a, const void *b)
{
	const struct cpuid_row *x = a, *y = b;

	if (x->leaf != y->leaf)
		return x->leaf < y->leaf ? -1 : 1;
	if (x->subleaf != y->subleaf)
		return x->subleaf < y->subleaf ? -1 : 1;
	return 0;
}

static const struct cpuid_row *snap_find(const struct pmon_cpuid *c, uint32_t leaf, uint32_t sub)
{
	struct cpuid_row key = { .leaf = leaf, .subleaf = sub };

	if (!c->n)
		return NULL;
	return bsearch(&key, c->rows, c->n, sizeof(key), row_cmp);
}

int pmon_cpuid__get(const struct pmon_cpuid *c, uint32_t leaf, uint32_t sub,
		    struct pmon_cpuid_regs *out)
{
	const struct cpuid_row *row = snap_find(c, leaf, sub);

	if (!row) {
		memset(out, 0, sizeof(*out));
		return -ENOENT;
	}
	*out = row->r;
	return 0;
}

size_t pmon_cpuid__count(const struct pmon_cpuid *c)
{
	return c ? c->n : 0;
}

int pmon_cpuid__entry(const struct pmon_cpuid *c, size_t i, uint32_t *leaf, uint32_t *sub,
		      struct pmon_cpuid_regs *out)
{
	if (!c || i >= c->n)
		return -ERANGE;
	*leaf = c->rows[i].leaf;
	*sub = c->rows[i].subleaf;
	*out = c->rows[i].r;
	return 0;
}

const char *pmon_cpuid__source(const struct pmon_cpuid *c)
{
	return c->source;
}

int pmon_cpuid__write(const struct pmon_cpuid *c, FILE *f)
{
	fprintf(f, "# source: pmon cpuid (%s)\n", c->source);
	fprintf(f, "# format: LLLLLLLL SS: EAX EBX ECX EDX (hex)\n");
	for (size_t i = 0; i < c->n; i++) {
		const struct cpuid_row *w = &c->rows[i];

		fprintf(f,
			"%08" PRIx32 " %02" PRIx32 ": %08" PRIx32 " %08" PRIx32 " %08" PRIx32
			" %08" PRIx32 "\n",
			w->leaf, w->subleaf, w->r.eax, w->r.ebx, w->r.ecx, w->r.edx);
	}
	return ferror(f) ? -EIO : 0;
}

/* ---- live enumeration ------------------------------------------------ */

static int fetch_insn(void *ctx, uint32_t leaf, uint32_t sub, struct pmon_cpuid_regs *r)
{
	uint32_t v[4];

	(void)ctx;
	pmon_cpuid(leaf, sub, v);
	*r = (struct pmon_cpuid_regs){ v[0], v[1], v[2], v[3] };
	return 0;
}

/* cpuid(4): reading 16 bytes at offset (subleaf << 32 | leaf) returns
 * EAX, EBX, ECX, EDX of that leaf on the file's CPU. */
static int fetch_dev(void *ctx, uint32_t leaf, uint32_t sub, struct pmon_cpuid_regs *r)
{
	int fd = *(int *)ctx;
	uint32_t v[4];
	ssize_t n = pread(fd, v, sizeof(v), (off_t)(((uint64_t)sub << 32) | leaf));

	if (n != (ssize_t)sizeof(v))
		return n < 0 ? -errno : -EIO;
	*r = (struct pmon_cpuid_regs){ v[0], v[1], v[2], v[3] };
	return 0;
}

/* How many subleaves a leaf has, and which to keep (SDM Vol. 2A, CPUID). */
static int enum_leaf(struct pmon_cpuid *c, cpuid_fetch_fn fetch, void *ctx, uint32_t leaf)
{
	struct pmon_cpuid_regs r, r0;
	int err = fetch(ctx, leaf, 0, &r0);

	if (err)
		return err;
	err = snap_add(c, leaf, 0, &r0, 0);
	if (err)
		return err;

	uint32_t last = 0; /* highest subleaf to try */
	uint32_t bitmap = 0; /* or: the subleaves named by a bitmap */
	bool until_zero = false, keep_zero = false;

	switch (leaf) {
	case 0x4:
	case 0x8000001d:
		last = 15, until_zero = true; /* stop at cache type 0 */
		if ((r0.eax & 0x1f) == 0)
			return 0;
		break;
	case 0x7:
	case 0x14:
	case 0x17:
	case 0x18:
	case 0x1d:
	case 0x20:
	case 0x24:
		last = r0.eax < 31 ? r0.eax : 31;
		keep_zero = true;
		break;
	case 0xb:
	case 0x1f:
		last = 7, until_zero = true; /* stop at level type 0 */
		break;
	case 0xd:
		last = 63;
		break;
	case 0xf:
		bitmap = (r0.edx & ~1u) | 0x2;
		break;
	case 0x10:
		bitmap = (r0.ebx & ~1u) | 0xe;
		break;
	case 0x12:
		last = 7, until_zero = true;
		break;
	case 0x23:
		bitmap = r0.eax & ~1u;
		break;
	case 0x80000020:
	case 0x80000026:
		last = 3;
		break;
	default:
		return 0;
	}
	for (uint32_t s = 1; s < 64; s++) {
		if (bitmap ? !(bitmap & (1u << (s & 31))) || s > 31 : s > last)
			continue;
		err = fetch(ctx, leaf, s, &r);
		if (err)
			return err;
		bool zero = !r.eax && !r.ebx && !r.ecx && !r.edx;
		if (until_zero) {
			bool end = leaf == 0xb || leaf == 0x1f ? ((r.ecx >> 8) & 0xff) == 0
				: leaf == 0x12		       ? (r.eax & 0xf) == 0
							       : (r.eax & 0x1f) == 0;
			if (end)
				break;
		} else if (zero && !keep_zero && !bitmap) {
			continue;
		}
		err = snap_add(c, leaf, s, &r, 0);
		if (err)
			return err;
	}
	return 0;
}

static int enum_range(struct pmon_cpuid *c, cpuid_fetch_fn fetch, void *ctx, uint32_t base)
{
	struct pmon_cpuid_regs r;
	int err = fetch(ctx, base, 0, &r);
	uint32_t max;

	if (err)
		return err;
	max = r.eax;
	/* An absent range echoes garbage or the highest basic leaf: accept only
	 * a maximum inside the range, and at most 256 leaves of it. */
	if (max < base || max > base + 0xff) {
		if (base == 0x40000000 && r.ebx)
			max = base; /* some hypervisors report EAX = 0 with a signature */
		else if (base != 0)
			return 0;
	}
	if (base == 0 && max > 0xff)
		max = 0xff;
	for (uint32_t leaf = base; leaf <= max; leaf++) {
		err = enum_leaf(c, fetch, ctx, leaf);
		if (err)
			return err;
	}
	return 0;
}

static struct pmon_cpuid *snapshot(cpuid_fetch_fn fetch, void *ctx, const char *source)
{
	struct pmon_cpuid *c = snap_new(source);
	struct pmon_cpuid_regs r1;
	int err;

	if (!c)
		return NULL;
	err = enum_range(c, fetch, ctx, 0);
	if (!err && !pmon_cpuid__get(c, 1, 0, &r1) && (r1.ecx >> 31))
		err = enum_range(c, fetch, ctx, 0x40000000);
	if (!err)
		err = enum_range(c, fetch, ctx, 0x80000000);
	if (err) {
		pmon_cpuid__free(c);
		errno = -err;
		return NULL;
	}
	qsort(c->rows, c->n, sizeof(*c->rows), row_cmp);
	return c;
}

/* One CPU's leaves, never a mix: on a hybrid part leaves 04H, 0AH, 1AH and
 * 23H differ by core type (SDM Vol. 2A CPUID.1AH; Vol. 3B 21.2.9), and a
 * thread the scheduler moves between CPUID instructions would combine a
 * P-core's 0AH with an E-core's 1AH. So the snapshot is taken pinned to the
 * CPU the thread is on, and says which. */
struct pmon_cpuid *pmon_cpuid__new_live(void)
{
	cpu_set_t old, one;
	struct pmon_cpuid *c;
	int cpu = sched_getcpu(), e;
	bool pinned = false;

	if (cpu >= 0 && cpu < CPU_SETSIZE && !sched_getaffinity(0, sizeof(old), &old)) {
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		pinned = !sched_setaffinity(0, sizeof(one), &one);
	}
	c = snapshot(fetch_insn, NULL, "cpuid instruction");
	e = errno;
	if (c && pinned)
		c->cpu = cpu;
	if (pinned)
		sched_setaffinity(0, sizeof(old), &old);
	errno = e;
	return c;
}

int pmon_cpuid__cpu(const struct pmon_cpuid *c)
{
	return c ? c->cpu : -1;
}

struct pmon_cpuid *pmon_cpuid__new_cpu(int cpu)
{
	char path[64], src[64];
	struct pmon_cpuid *c;
	cpu_set_t old, one;
	int fd;

	if (cpu < 0 || cpu >= CPU_SETSIZE) {
		pmon__detail("CPU %d does not exist", cpu);
		errno = ENODEV;
		return NULL;
	}
	pmon__fmt(path, sizeof(path), "/dev/cpu/%d/cpuid", cpu);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		c = snapshot(fetch_dev, &fd, path);
		close(fd);
		if (c) {
			c->cpu = cpu;
			return c;
		}
	}
	/* No cpuid driver (or no permission): run the instruction there. */
	if (sched_getaffinity(0, sizeof(old), &old)) {
		pmon__detail("cannot read this thread's CPU affinity: %s", strerror(errno));
		return NULL;
	}
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one)) {
		int e = errno;
		pmon__detail("cannot run on CPU %d: %s", cpu,
			     e == EINVAL ? "no such online CPU" : strerror(e));
		errno = e == EINVAL ? ENODEV : e;
		return NULL;
	}
	pmon__fmt(src, sizeof(src), "cpuid instruction on CPU %d", cpu);
	c = snapshot(fetch_insn, NULL, src);
	int e = errno;
	if (c)
		c->cpu = cpu;
	sched_setaffinity(0, sizeof(old), &old);
	errno = e;
	return c;
}

/* ---- dump files ------------------------------------------------------ */

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
		p++;
	return p;
}

/* One hex number of 1..8 digits, optionally "0x"-prefixed, optionally
 * preceded by "name=" (the `cpuid -r` format: "eax=0x0000000d"). */
static const char *parse_hex32(const char *p, const char *end, uint32_t *out)
{
	const char *q;
	uint64_t v = 0;
	int digits = 0;

	p = skip_ws(p, end);
	for (q = p; q < end && isalpha((unsigned char)*q); q++)
		;
	if (q < end && *q == '=' && q > p)
		p = q + 1;
	if (end - p >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	while (p < end && isxdigit((unsigned char)*p)) {
		int d = isdigit((unsigned char)*p) ? *p - '0'
						   : (tolower((unsigned char)*p) - 'a' + 10);
		v = v * 16 + (uint64_t)d;
		p++;
		if (++digits > 8)
			return NULL;
	}
	if (!digits)
		return NULL;
	*out = (uint32_t)v;
	return p;
}

struct pmon_cpuid *pmon_cpuid__new_buf(const char *buf, size_t len, const char *name)
{
	struct pmon_cpuid *c = snap_new(name);
	const char *p = buf, *end = buf + len;
	unsigned line = 0;
	bool seen_cpu_header = false;

	if (!c)
		return NULL;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *le = eol ? eol : end, *q;
		uint32_t leaf, sub, v[4];

		line++;
		q = skip_ws(p, le);
		p = eol ? eol + 1 : end;
		if (q == le || *q == '#')
			continue;
		if (memchr(q, '\0', (size_t)(le - q))) {
			pmon__detail("%s:%u: binary data in a text dump", name, line);
			goto bad;
		}
		/* `cpuid -r` prints "CPU 0:" before each CPU's rows; keep the first. */
		if (le - q >= 4 && !strncmp(q, "CPU ", 4)) {
			if (seen_cpu_header)
				break;
			seen_cpu_header = true;
			continue;
		}
		const char *ls = q;
		q = parse_hex32(q, le, &leaf);
		if (!q || q >= le || (*q != ' ' && *q != '\t')) {
			pmon__detail("%s:%u: expected 'LLLLLLLL SS: EAX EBX ECX EDX', got '%.*s'",
				     name, line, (int)(le - ls < 40 ? le - ls : 40), ls);
			goto bad;
		}
		q = parse_hex32(q, le, &sub);
		q = q ? skip_ws(q, le) : NULL;
		if (!q || q >= le || *q != ':') {
			pmon__detail("%s:%u: expected ':' after the leaf and subleaf", name, line);
			goto bad;
		}
		q++;
		for (int i = 0; i < 4; i++) {
			const char *start = skip_ws(q, le);
			q = parse_hex32(q, le, &v[i]);
			if (!q) {
				pmon__detail(
					"%s:%u: expected 4 registers (EAX EBX ECX EDX), found %d",
					name, line, i);
				goto bad;
			}
			/* Registers always have 8 digits: a shorter one is a cut line. */
			if (q - start < 8 || (q - start != 8 && q[-9] != 'x' && q[-9] != '=')) {
				pmon__detail("%s:%u: register %s has %d hex digits, expected 8 "
					     "(truncated?)",
					     name, line,
					     (const char *[]){ "EAX", "EBX", "ECX", "EDX" }[i],
					     (int)(q - start));
				goto bad;
			}
		}
		q = skip_ws(q, le);
		if (q != le) {
			pmon__detail("%s:%u: unexpected text after the 4 registers", name, line);
			goto bad;
		}
		struct pmon_cpuid_regs r = { v[0], v[1], v[2], v[3] };
		for (size_t i = 0; i < c->n; i++) {
			if (c->rows[i].leaf == leaf && c->rows[i].subleaf == sub) {
				pmon__detail("%s:%u: leaf %08" PRIx32 " subleaf %02" PRIx32
					     " already given at line %u",
					     name, line, leaf, sub, c->rows[i].line);
				goto bad;
			}
		}
		if (snap_add(c, leaf, sub, &r, line)) {
			pmon_cpuid__free(c);
			errno = ENOMEM;
			return NULL;
		}
	}
	if (!c->n) {
		pmon__detail("%s:%u: no CPUID rows ('LLLLLLLL SS: EAX EBX ECX EDX') in the file",
			     name, line ? line : 1);
		goto bad;
	}
	qsort(c->rows, c->n, sizeof(*c->rows), row_cmp);
	if (!snap_find(c, 0, 0)) {
		pmon__detail("%s:%u: no leaf 0 row: the dump is incomplete", name, c->rows[0].line);
		goto bad;
	}
	return c;
bad:
	pmon_cpuid__free(c);
	errno = EINVAL;
	return NULL;
}

struct pmon_cpuid *pmon_cpuid__new_file(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t len = 0, cap = 0;
	struct pmon_cpuid *c;

	if (!f) {
		int e = errno;
		pmon__detail("%s: %s", path, strerror(e));
		errno = e;
		return NULL;
	}
	for (;;) {
		if (cap - len < 4096) {
			if (cap >= (16u << 20)) {
				pmon__detail("%s: larger than 16 MiB: not a CPUID dump", path);
				free(buf);
				fclose(f);
				errno = EFBIG;
				return NULL;
			}
			char *nb = realloc(buf, cap ? cap * 2 : 16384);
			if (!nb) {
				free(buf);
				fclose(f);
				errno = ENOMEM;
				return NULL;
			}
			buf = nb;
			cap = cap ? cap * 2 : 16384;
		}
		size_t n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		int e = errno ? errno : EIO;
		pmon__detail("%s: read error: %s", path, strerror(e));
		free(buf);
		fclose(f);
		errno = e;
		return NULL;
	}
	fclose(f);
	c = pmon_cpuid__new_buf(buf, len, path);
	free(buf);
	return c;
}
