// SPDX-License-Identifier: MIT
/*
 * pmon/bench.h: build a body unrolled U and 2U times (GNU as + ld, or a C
 * function from a shared object), then time both and take the difference,
 * the n / 2n method of nanoBench, with the seeds' fenced RDTSC reads.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include <pmon/arch.h>
#include <pmon/bench.h>
#include <pmon/counter.h>

extern char **environ;

struct pmon_bench_code {
	void *dl;
	char dir[64];
	unsigned unroll;
	pmon_bench_fn fn[2]; /* U and 2U copies */
	void (*cfn)(void); /* --so mode */
};

/* The loop around the body: callee-saved registers kept, r15 counts,
 * r14 = scratch; the body repeated @copies times per iteration. */
static int write_asm(FILE *f, const char *name, const char *body, unsigned copies)
{
	fprintf(f,
		".globl %s\n.type %s,@function\n.p2align 6\n%s:\n"
		"\tpush rbx\n\tpush rbp\n\tpush r12\n\tpush r13\n\tpush r14\n\tpush r15\n"
		"\tmov r15, rdi\n\tmov r14, rsi\n\ttest r15, r15\n\tjz 2f\n.p2align 4\n1:\n",
		name, name, name);
	for (unsigned i = 0; i < copies; i++)
		fprintf(f, "\t%s\n", body);
	fprintf(f,
		"\tdec r15\n\tjnz 1b\n2:\n\tpop r15\n\tpop r14\n\tpop r13\n\tpop r12\n"
		"\tpop rbp\n\tpop rbx\n\tret\n.size %s, .-%s\n",
		name, name);
	return ferror(f) ? -EIO : 0;
}

/* Run @argv, collecting its standard error into @err. Return: exit status,
 * or -errno when it could not start. */
static int run_tool(char *const argv[], char *err, size_t errlen)
{
	posix_spawn_file_actions_t fa;
	int p[2], status;
	pid_t pid;
	size_t got = 0;
	ssize_t n;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 2);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	int e = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (e) {
		close(p[0]);
		return -e;
	}
	while (got < errlen - 1 && (n = read(p[0], err + got, errlen - 1 - got)) > 0)
		got += (size_t)n;
	err[got] = '\0';
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The assembler's first "Error:" message, without our file name. */
static void first_error(const char *text, char *out, size_t len)
{
	const char *e = strstr(text, "Error: ");
	const char *end;

	if (!e) {
		pmon__strlcpy(out, text, len);
	} else {
		e += 7;
		end = strchr(e, '\n');
		pmon__fmt(out, len, "%.*s", (int)(end ? end - e : (long)strlen(e)), e);
	}
	for (char *p = out; *p; p++)
		if (*p == '\n')
			*p = ' ';
}

static void cleanup_dir(struct pmon_bench_code *c)
{
	char path[128];

	if (!c->dir[0])
		return;
	static const char *const files[] = { "body.s", "body.o", "body.so" };
	for (size_t i = 0; i < PMON_ARRAY_SIZE(files); i++) {
		pmon__fmt(path, sizeof(path), "%s/%s", c->dir, files[i]);
		unlink(path);
	}
	rmdir(c->dir);
	c->dir[0] = '\0';
}

void pmon_bench_code__free(struct pmon_bench_code *c)
{
	if (!c)
		return;
	if (c->dl)
		dlclose(c->dl);
	cleanup_dir(c);
	free(c);
}

int pmon_bench_code__asm(const char *body, unsigned unroll, struct pmon_bench_code **out)
{
	struct pmon_bench_code *c;
	char src[128], obj[128], so[128], msg[4096], first[512];
	FILE *f;
	int err;

	if (!body || !*body || strchr(body, '\n'))
		return pmon__err(-EINVAL, "the assembly body is empty or spans lines (use ';')");
	if (!unroll || unroll > 100000)
		return pmon__err(-EINVAL, "unroll %u is outside 1..100000", unroll);
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->unroll = unroll;
	pmon__strlcpy(c->dir, "/tmp/pmon-bench-XXXXXX", sizeof(c->dir));
	if (!mkdtemp(c->dir)) {
		c->dir[0] = '\0';
		free(c);
		return pmon__err(-errno, "cannot create a temporary folder: %s", strerror(errno));
	}
	pmon__fmt(src, sizeof(src), "%s/body.s", c->dir);
	pmon__fmt(obj, sizeof(obj), "%s/body.o", c->dir);
	pmon__fmt(so, sizeof(so), "%s/body.so", c->dir);
	f = fopen(src, "we");
	if (!f) {
		err = pmon__err(-errno, "%s: %s", src, strerror(errno));
		goto fail;
	}
	fprintf(f, ".intel_syntax noprefix\n.text\n");
	err = write_asm(f, "pmon_body_1", body, unroll);
	if (!err)
		err = write_asm(f, "pmon_body_2", body, 2 * unroll);
	fprintf(f, ".section .note.GNU-stack,\"\",@progbits\n");
	if (fclose(f) && !err)
		err = -EIO;
	if (err)
		goto fail;

	char *as_argv[] = { "as", "--64", "-o", obj, src, NULL };
	int st = run_tool(as_argv, msg, sizeof(msg));
	if (st < 0) {
		err = pmon__err(st,
				"cannot run the GNU assembler 'as' (apt-get install binutils): %s",
				strerror(-st));
		goto fail;
	}
	if (st) {
		first_error(msg, first, sizeof(first));
		err = pmon__err(-PMON_ERRNO__PARSE, "the assembler rejected the code: %s", first);
		goto fail;
	}
	char *ld_argv[] = { "ld", "-shared", "-o", so, obj, NULL };
	st = run_tool(ld_argv, msg, sizeof(msg));
	if (st) {
		first_error(msg, first, sizeof(first));
		err = pmon__err(st < 0 ? st : -PMON_ERRNO__PARSE, "the linker failed: %s", first);
		goto fail;
	}
	c->dl = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	if (!c->dl) {
		err = pmon__err(-ENOEXEC, "cannot load the assembled code: %s", dlerror());
		goto fail;
	}
	*(void **)&c->fn[0] = dlsym(c->dl, "pmon_body_1");
	*(void **)&c->fn[1] = dlsym(c->dl, "pmon_body_2");
	if (!c->fn[0] || !c->fn[1]) {
		err = pmon__err(-ENOEXEC, "the assembled code lacks its entry points");
		goto fail;
	}
	cleanup_dir(c); /* loaded: the files are no longer needed */
	*out = c;
	return 0;
fail:
	pmon_bench_code__free(c);
	return err;
}

/* --so: call the function U (or 2U) times per iteration. */
static void (*volatile so_fn)(void);

static void call_u(uint64_t it, void *scratch, unsigned copies)
{
	(void)scratch;
	for (uint64_t i = 0; i < it; i++)
		for (unsigned k = 0; k < copies; k++)
			so_fn();
}

int pmon_bench_code__so(const char *path, const char *function, unsigned unroll,
			struct pmon_bench_code **out)
{
	struct pmon_bench_code *c;

	if (!unroll || unroll > 100000)
		return pmon__err(-EINVAL, "unroll %u is outside 1..100000", unroll);
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->unroll = unroll;
	c->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!c->dl) {
		free(c);
		return pmon__err(-ENOENT, "cannot load '%s': %s", path, dlerror());
	}
	*(void **)&c->cfn = dlsym(c->dl, function);
	if (!c->cfn) {
		pmon_bench_code__free(c);
		return pmon__err(-ENOENT, "'%s' has no function '%s'", path, function);
	}
	*out = c;
	return 0;
}

static void run_body(const struct pmon_bench_code *c, int which, uint64_t it, void *scratch)
{
	if (c->cfn) {
		so_fn = c->cfn;
		call_u(it, scratch, which ? 2 * c->unroll : c->unroll);
	} else {
		c->fn[which](it, scratch);
	}
}

static uint64_t tsc_fenced(void)
{
	uint64_t t;

	pmon_lfence();
	t = pmon_rdtsc();
	pmon_lfence();
	return t;
}

void pmon_bench_result_release(struct pmon_bench_result *r)
{
	free(r->events);
	r->events = NULL;
}

int pmon_bench_run(const struct pmon_bench_code *c, const struct pmon_bench_opts *opts,
		   struct pmon_bench_result *out)
{
	uint64_t n = opts && opts->iterations ? opts->iterations : 1000;
	unsigned r = opts && opts->samples ? opts->samples : 101;
	unsigned warm = opts && opts->warmup ? opts->warmup : 10;
	const struct pmon_evlist *ev = opts ? opts->events : NULL;
	size_t ne = ev ? pmon_evlist__count(ev) : 0;
	struct pmon_selfgroup *g = NULL;
	uint64_t a[PMON_BENCH_MAX_EVENTS], b[PMON_BENCH_MAX_EVENTS], a2[PMON_BENCH_MAX_EVENTS],
		b2[PMON_BENCH_MAX_EVENTS];
	double *ts = NULL, *es = NULL;
	void *scratch = NULL;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (ne > PMON_BENCH_MAX_EVENTS)
		return pmon__err(-E2BIG, "at most %d events", PMON_BENCH_MAX_EVENTS);
	if (ne && (err = pmon_selfgroup__open(ev, &g)))
		return err;
	ts = malloc(r * sizeof(*ts));
	es = calloc((size_t)r * (ne ? ne : 1), sizeof(*es));
	scratch = aligned_alloc(64, 4096);
	out->events = ne ? calloc(ne, sizeof(*out->events)) : NULL;
	if (!ts || !es || !scratch || (ne && !out->events)) {
		err = -ENOMEM;
		goto out;
	}
	memset(scratch, 0, 4096);
	for (unsigned i = 0; i < warm; i++) {
		run_body(c, 0, n, scratch);
		run_body(c, 1, n, scratch);
	}
	for (unsigned s = 0; s < r; s++) {
		uint64_t t0, t1, t2, t3;

		/* U copies, then 2U copies, alternating which comes first would
		 * bias neither; keep one order and many samples. */
		if (g)
			pmon_selfgroup__read(g, a);
		t0 = tsc_fenced();
		run_body(c, 0, n, scratch);
		t1 = tsc_fenced();
		if (g)
			pmon_selfgroup__read(g, b);
		if (g)
			pmon_selfgroup__read(g, a2);
		t2 = tsc_fenced();
		run_body(c, 1, n, scratch);
		t3 = tsc_fenced();
		if (g)
			pmon_selfgroup__read(g, b2);
		double div = (double)c->unroll * (double)n;
		ts[s] = round(((double)(t3 - t2) - (double)(t1 - t0)) / div * 100) / 100;
		for (size_t e = 0; e < ne; e++)
			es[e * r + s] = round(((double)(b2[e] - a2[e]) - (double)(b[e] - a[e])) /
					      div * 100) /
				100;
	}
	out->unroll = c->unroll;
	out->iterations = n;
	out->nevents = ne;
	err = pmon_summarize(ts, r, 5.0, &out->tsc);
	for (size_t e = 0; !err && e < ne; e++)
		err = pmon_summarize(&es[e * r], r, 5.0, &out->events[e]);
	out->via_rdpmc = g && pmon_selfgroup__rdpmc(g, NULL);
out:
	if (err)
		pmon_bench_result_release(out);
	pmon_selfgroup__close(g);
	free(ts);
	free(es);
	free(scratch);
	return err;
}
