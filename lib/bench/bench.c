// SPDX-License-Identifier: MIT
/*
 * pmon/bench.h: build a body unrolled U and 2U times (GNU as + ld, or a C
 * function from a shared object), then time both and take the difference,
 * the n / 2n method of nanoBench, with the seeds' fenced RDTSC reads.
 *
 * A body is the user's code and may do anything: fault, trap, loop forever,
 * change the loop counter. It runs in a child process with a time limit; the
 * results come back through a shared mapping, and the parent reports the
 * signal or the time-out naming the body. The body is assembled and linked
 * in memfds and loaded from one, so it runs where $TMPDIR or /tmp is mounted
 * noexec and a pmon killed while building leaves no file (a linker that
 * cannot write through /proc builds in a pid-named folder instead, which the
 * next build removes if its pmon is gone).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include <pmon/arch.h>
#include <pmon/bench.h>
#include <pmon/spawn.h>
#include <pmon/counter.h>
#include <pmon/cpu.h>

struct pmon_bench_code {
	void *dl;
	int memfd; /* the loaded code's memfd, or -1: open while loaded, so that
		    * its /proc/self/fd name is unique among loaded objects (dlopen
		    * returns an already loaded object of the same name) */
	char dir[4096];
	char what[256]; /* the body as the user gave it, for messages */
	char tools[160]; /* "/usr/bin/as, /usr/bin/ld" */
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

/*
 * The assembler and linker by absolute path, never through $PATH: pmon often
 * runs as root, and a PATH with a folder another user writes would run their
 * `as`. The first of the usual places that holds an executable regular file
 * owned by root (or by the caller) and not writable by others.
 */
static int find_tool(const char *name, char *out, size_t len)
{
	static const char *const dirs[] = { "/usr/bin", "/bin", "/usr/local/bin" };

	for (size_t i = 0; i < PMON_ARRAY_SIZE(dirs); i++) {
		struct stat st;
		pmon__fmt(out, len, "%s/%s", dirs[i], name);
		if (stat(out, &st) || !S_ISREG(st.st_mode) || access(out, X_OK) ||
		    (st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & S_IWOTH))
			continue;
		return 0;
	}
	out[0] = '\0';
	return -ENOENT;
}

/* Run @argv (argv[0] an absolute path), collecting its standard output and
 * error into @err; the descriptors @keep (close-on-exec here) stay open in
 * it under the same numbers, so it names them /proc/self/fd/N. Return:
 * exit status, or -errno when it could not start. */
static int run_tool(char *const argv[], const int *keep, size_t nkeep, char *err, size_t errlen)
{
	char *text = NULL;
	struct pmon_spawn_opts o = { .sz = sizeof(o),
				     .capture = &text,
				     .capture_max = errlen - 1,
				     .keep_fds = keep,
				     .nkeep = nkeep };
	int status = 0, e = pmon_spawn(argv, &o, &status);

	if (e)
		return e;
	pmon__strlcpy(err, text, errlen);
	free(text);
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
	char path[4200];

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
	if (c->memfd >= 0)
		close(c->memfd);
	cleanup_dir(c);
	free(c);
}

/*
 * Load @so through a memfd: dlopen() of a file on a noexec mount (a hardened
 * /tmp or $TMPDIR) fails with "failed to map segment", while an anonymous
 * memfd is mapped executable (MFD_EXEC where the kernel knows it, for
 * vm.memfd_noexec; older kernels reject the flag: retried without).
 */
static int new_memfd(const char *name)
{
#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U /* include/uapi/linux/memfd.h, Linux 6.3 */
#endif
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_EXEC);

	if (fd < 0 && errno == EINVAL)
		fd = memfd_create(name, MFD_CLOEXEC);
	return fd;
}

/* dlopen() the shared object in memfd @fd (kept open while loaded). */
static void *dlopen_memfd(int fd, char *why, size_t whylen)
{
	char path[64];
	void *dl;

	pmon__fmt(path, sizeof(path), "/proc/self/fd/%d", fd);
	dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!dl)
		pmon__fmt(why, whylen, "%s", dlerror());
	return dl;
}

static void *load_via_memfd(const char *so, int *memfd, char *why, size_t whylen)
{
	char buf[65536];
	void *dl = NULL;
	ssize_t n;
	int in = open(so, O_RDONLY | O_CLOEXEC), fd;

	if (in < 0) {
		pmon__fmt(why, whylen, "%s: %s", so, strerror(errno));
		return NULL;
	}
	fd = new_memfd("pmon-bench-body");
	if (fd < 0) {
		pmon__fmt(why, whylen, "memfd_create: %s", strerror(errno));
		close(in);
		return NULL;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(fd, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	close(in);
	if (n < 0)
		pmon__fmt(why, whylen, "copying %s: %s", so, strerror(errno));
	else
		dl = dlopen_memfd(fd, why, whylen);
	if (dl)
		*memfd = fd;
	else
		close(fd);
	return dl;
}

/* The source of both bodies, into @f (closed here). */
static int write_source(FILE *f, const char *body, unsigned unroll)
{
	int err;

	fprintf(f, ".intel_syntax noprefix\n.text\n");
	err = write_asm(f, "pmon_body_1", body, unroll);
	if (!err)
		err = write_asm(f, "pmon_body_2", body, 2 * unroll);
	fprintf(f, ".section .note.GNU-stack,\"\",@progbits\n");
	if (fclose(f) && !err)
		err = -EIO;
	return err;
}

/* Assemble @src into @obj, link @obj into @so (paths the tools open; @keep:
 * descriptors they name). Return: 0, or the error with its detail. */
static int assemble(struct pmon_bench_code *c, const char *as, const char *ld, char *src, char *obj,
		    char *so, const int *keep, size_t nkeep)
{
	char msg[4096], first[512];
	char *as_argv[] = { (char *)as, "--64", "-o", obj, src, NULL };
	int st = run_tool(as_argv, keep, nkeep, msg, sizeof(msg));

	if (st < 0)
		return pmon__err(st, "cannot run the GNU assembler %s: %s", as, strerror(-st));
	if (st) {
		first_error(msg, first, sizeof(first));
		return pmon__err(-PMON_ERRNO__PARSE, "the assembler rejected the code: %s", first);
	}
	char *ld_argv[] = { (char *)ld, "-shared", "-o", so, obj, NULL };
	st = run_tool(ld_argv, keep, nkeep, msg, sizeof(msg));
	if (st) {
		first_error(msg, first, sizeof(first));
		return pmon__err(st < 0 ? st : -PMON_ERRNO__PARSE, "the linker %s failed: %s", ld,
				 first);
	}
	(void)c;
	return 0;
}

/*
 * Build in memory: source, object and shared object are memfds that the
 * tools open as /proc/self/fd/N (they inherit them), and the code is loaded
 * from the last. Nothing touches the file system, so a pmon killed while
 * assembling leaves nothing behind (#14.6) and no folder needs exec rights.
 * GNU as, ld.bfd and gold write there; ld.lld writes a temporary file beside
 * its output and renames it, which /proc refuses: that, or any failure, is
 * retried with files (build_in_dir()).
 */
static int build_in_memory(struct pmon_bench_code *c, const char *body, const char *as,
			   const char *ld)
{
	static const char *const names[3] = { "pmon-bench-s", "pmon-bench-o", "pmon-bench-so" };
	char path[3][64], why[512];
	int fd[3] = { -1, -1, -1 }, err = 0;
	FILE *f = NULL;

	for (int i = 0; i < 3 && !err; i++) {
		if ((fd[i] = new_memfd(names[i])) < 0)
			err = pmon__err(-errno, "memfd_create: %s", strerror(errno));
		pmon__fmt(path[i], sizeof(path[i]), "/proc/self/fd/%d", fd[i]);
	}
	if (!err) {
		int d = dup(fd[0]);
		f = d < 0 ? NULL : fdopen(d, "w");
		if (!f) {
			err = pmon__err(-errno, "memfd: %s", strerror(errno));
			if (d >= 0)
				close(d);
		}
	}
	if (!err)
		err = write_source(f, body, c->unroll);
	if (!err)
		err = assemble(c, as, ld, path[0], path[1], path[2], fd, 3);
	if (!err && !(c->dl = dlopen_memfd(fd[2], why, sizeof(why))))
		err = pmon__err(-ENOEXEC, "cannot load the assembled code: %s", why);
	if (!err) {
		c->memfd = fd[2];
		fd[2] = -1;
	}
	for (int i = 0; i < 3; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	return err;
}

/*
 * Folders of the file build are named pmon-bench-PID-XXXXXX: one whose pmon
 * is gone (killed while assembling) is removed by the next build, if it is
 * ours and holds nothing but the three files a build makes (every build
 * looks, whichever way it builds).
 */
static void remove_stale_dirs(const char *tmp)
{
	static const char *const files[] = { "body.s", "body.o", "body.so" };
	DIR *d = opendir(tmp);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[4200], file[4300], end;
		struct stat st;
		int pid;
		if (sscanf(e->d_name, "pmon-bench-%d-%*6[A-Za-z0-9]%c", &pid, &end) != 1 ||
		    pmon__process_alive(pid))
			continue;
		if (!pmon__fmt(path, sizeof(path), "%s/%s", tmp, e->d_name) || lstat(path, &st) ||
		    !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
			continue;
		for (size_t i = 0; i < PMON_ARRAY_SIZE(files); i++) {
			pmon__fmt(file, sizeof(file), "%s/%s", path, files[i]);
			unlink(file);
		}
		rmdir(path); /* fails, harmlessly, where something else is inside */
	}
	closedir(d);
}

/* Build with files under $TMPDIR (a linker that cannot write to /proc). */
static int build_in_dir(struct pmon_bench_code *c, const char *body, const char *as, const char *ld)
{
	char src[4200], obj[4200], so[4200], why[512];
	const char *tmp = getenv("TMPDIR");
	FILE *f;
	int err;

	tmp = tmp && *tmp == '/' ? tmp : "/tmp";
	/* $TMPDIR as other tools use it; the code itself is loaded from memory,
	 * so this folder needs no exec rights. */
	if (!pmon__fmt(c->dir, sizeof(c->dir), "%s/pmon-bench-%d-XXXXXX", tmp, (int)getpid()) ||
	    !mkdtemp(c->dir)) {
		err = pmon__err(errno ? -errno : -ENAMETOOLONG,
				"cannot create a temporary folder under %s: %s", tmp,
				strerror(errno ? errno : ENAMETOOLONG));
		c->dir[0] = '\0';
		return err;
	}
	pmon__fmt(src, sizeof(src), "%s/body.s", c->dir);
	pmon__fmt(obj, sizeof(obj), "%s/body.o", c->dir);
	pmon__fmt(so, sizeof(so), "%s/body.so", c->dir);
	f = fopen(src, "we");
	if (!f)
		return pmon__err(-errno, "%s: %s", src, strerror(errno));
	err = write_source(f, body, c->unroll);
	if (!err)
		err = assemble(c, as, ld, src, obj, so, NULL, 0);
	if (!err && !(c->dl = load_via_memfd(so, &c->memfd, why, sizeof(why))))
		err = pmon__err(-ENOEXEC, "cannot load the assembled code: %s", why);
	cleanup_dir(c); /* loaded or failed: the files are no longer needed */
	return err;
}

int pmon_bench_code__asm(const char *body, unsigned unroll, struct pmon_bench_code **out)
{
	struct pmon_bench_code *c;
	char as[64], ld[64];
	int err;

	if (!body || !*body || strchr(body, '\n'))
		return pmon__err(-EINVAL, "the assembly body is empty or spans lines (use ';')");
	if (!unroll || unroll > 100000)
		return pmon__err(-EINVAL, "unroll %u is outside 1..100000", unroll);
	if (find_tool("as", as, sizeof(as)))
		return pmon__err(-ENOENT,
				 "no GNU assembler in /usr/bin, /bin or /usr/local/bin "
				 "(apt-get install binutils)");
	if (find_tool("ld", ld, sizeof(ld)))
		return pmon__err(-ENOENT,
				 "no linker 'ld' in /usr/bin, /bin or /usr/local/bin "
				 "(apt-get install binutils)");
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->memfd = -1;
	c->unroll = unroll;
	pmon__fmt(c->what, sizeof(c->what), "%s", body);
	pmon__fmt(c->tools, sizeof(c->tools), "%s, %s", as, ld);
	const char *tmp = getenv("TMPDIR");
	remove_stale_dirs(tmp && *tmp == '/' ? tmp : "/tmp"); /* a killed build's */
	err = build_in_memory(c, body, as, ld);
	/* Code the assembler refused is refused with files too. */
	if (err && err != -ENOMEM && strncmp(pmon_errdetail(), "the assembler rejected", 22)) {
		if (c->dl) {
			dlclose(c->dl);
			c->dl = NULL;
		}
		err = build_in_dir(c, body, as, ld); /* its error is the one said */
	}
	if (err)
		goto fail;
	*(void **)&c->fn[0] = dlsym(c->dl, "pmon_body_1");
	*(void **)&c->fn[1] = dlsym(c->dl, "pmon_body_2");
	if (!c->fn[0] || !c->fn[1]) {
		err = pmon__err(-ENOEXEC, "the assembled code lacks its entry points");
		goto fail;
	}
	*out = c;
	return 0;
fail:
	pmon_bench_code__free(c);
	return err;
}

const char *pmon_bench_code__tools(const struct pmon_bench_code *c)
{
	return c && c->tools[0] ? c->tools : NULL;
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
	c->memfd = -1;
	c->unroll = unroll;
	pmon__fmt(c->what, sizeof(c->what), "%s:%s", path, function);
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
	/* A data symbol would be "called" into a non-executable page: say so
	 * now, by the symbol's ELF type (read before the library is closed). */
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	unsigned type = STT_FUNC;
	if (dladdr1(*(void **)&c->cfn, &info, (void **)&sym, RTLD_DL_SYMENT) && sym)
		type = ELF64_ST_TYPE(sym->st_info);
	if (type == STT_OBJECT || type == STT_TLS || type == STT_COMMON) {
		pmon_bench_code__free(c);
		return pmon__err(-EINVAL, "'%s' in '%s' is %s, not a function", function, path,
				 type == STT_TLS ? "a thread-local variable" : "a variable");
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

/* @v rounded to the nearest hundredth, halves away from zero, as
 * round(v * 100) / 100 without libm: the core library then needs no libm at
 * all (each library mapped at start-up costs a program ~10 page faults). Per
 * iteration figures are far inside int64_t's range. */
static double hundredths(double v)
{
	double c = v * 100;

	return (double)(int64_t)(c < 0 ? c - 0.5 : c + 0.5) / 100;
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

/* The clock chain's loop: its U copies, 300 iterations (30,000 imuls,
 * 90,000 core cycles: 25 us at 3.6 GHz, about the default body's time),
 * whatever the body's N: a longer window is more often cut by the
 * scheduler on a loaded machine. */
#define CLOCK_ITERATIONS 300

/* One sample of @ref: TSC ticks per instruction of the chain, by U and 2U. */
static double clock_sample(const struct pmon_bench_code *ref, void *scratch)
{
	uint64_t t0, t1, t2, t3;

	t0 = tsc_fenced();
	run_body(ref, 0, CLOCK_ITERATIONS, scratch);
	t1 = tsc_fenced();
	t2 = tsc_fenced();
	run_body(ref, 1, CLOCK_ITERATIONS, scratch);
	t3 = tsc_fenced();
	/* hundredths, as the body's: equal values repeat, so that the mode
	 * means something */
	return hundredths(((double)(t3 - t2) - (double)(t1 - t0)) /
			  ((double)ref->unroll * CLOCK_ITERATIONS));
}

/* The measurement itself, in the child; *@progress grows with every run of
 * the body, so that the parent can tell a slow body from a stuck one. With
 * @ref (the clock chain, @latency cycles an instruction), each of the
 * body's samples is followed by one of the chain's, into @ref_out, and the
 * body's sample converted with it into core cycles, into @cyc_out. */
static int measure(const struct pmon_bench_code *c, const struct pmon_bench_opts *opts,
		   struct pmon_bench_result *out, uint64_t *progress,
		   const struct pmon_bench_code *ref, unsigned latency,
		   struct pmon_summary *ref_out, struct pmon_summary *cyc_out)
{
	uint64_t n = opts && opts->iterations ? opts->iterations : 1000;
	unsigned r = opts && opts->samples ? opts->samples : 101;
	unsigned warm = opts && opts->warmup ? opts->warmup : 10;
	const struct pmon_evlist *ev = opts ? opts->events : NULL;
	size_t ne = ev ? pmon_evlist__count(ev) : 0;
	struct pmon_selfgroup *g = NULL;
	uint64_t a[PMON_BENCH_MAX_EVENTS], b[PMON_BENCH_MAX_EVENTS], a2[PMON_BENCH_MAX_EVENTS],
		b2[PMON_BENCH_MAX_EVENTS];
	double *ts = NULL, *es = NULL, *rs = NULL, *cs = NULL;
	void *scratch = NULL;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (ne > PMON_BENCH_MAX_EVENTS)
		return pmon__err(-E2BIG, "at most %d events", PMON_BENCH_MAX_EVENTS);
	if (ne && !(g = pmon_selfgroup__open(ev)))
		return -errno;
	ts = malloc(r * sizeof(*ts));
	es = calloc((size_t)r * (ne ? ne : 1), sizeof(*es));
	scratch = aligned_alloc(64, 4096);
	out->events = ne ? calloc(ne, sizeof(*out->events)) : NULL;
	rs = ref ? malloc(r * sizeof(*rs)) : NULL;
	cs = ref ? malloc(r * sizeof(*cs)) : NULL;
	if (!ts || !es || !scratch || (ne && !out->events) || (ref && (!rs || !cs))) {
		err = -ENOMEM;
		goto out;
	}
	memset(scratch, 0, 4096);
	for (unsigned i = 0; i < warm; i++) {
		run_body(c, 0, n, scratch);
		run_body(c, 1, n, scratch);
		if (ref)
			clock_sample(ref, scratch);
		__atomic_add_fetch(progress, 1, __ATOMIC_RELAXED);
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
		__atomic_add_fetch(progress, 1, __ATOMIC_RELAXED);
		double div = (double)c->unroll * (double)n;
		ts[s] = hundredths(((double)(t3 - t2) - (double)(t1 - t0)) / div);
		for (size_t e = 0; e < ne; e++)
			es[e * r + s] =
				hundredths(((double)(b2[e] - a2[e]) - (double)(b[e] - a[e])) / div);
		if (ref) {
			/* Also sample by sample (the body and the chain ran
			 * within a millisecond): how far these spread shows how
			 * much the clock and the load moved (pmon_bench_clock). */
			rs[s] = clock_sample(ref, scratch);
			cs[s] = rs[s] > 0 ? hundredths(ts[s] * latency / rs[s]) : 0;
		}
	}
	out->unroll = c->unroll;
	out->iterations = n;
	out->nevents = ne;
	out->tsc.sz = sizeof(out->tsc);
	err = pmon_summarize(ts, r, 5.0, &out->tsc);
	for (size_t e = 0; !err && e < ne; e++) {
		out->events[e].sz = sizeof(out->events[e]);
		err = pmon_summarize(&es[e * r], r, 5.0, &out->events[e]);
	}
	if (!err && ref) {
		ref_out->sz = sizeof(*ref_out);
		cyc_out->sz = sizeof(*cyc_out);
		err = pmon_summarize(rs, r, 5.0, ref_out);
		if (!err)
			err = pmon_summarize(cs, r, 5.0, cyc_out);
	}
	out->via_rdpmc = g && pmon_selfgroup__rdpmc(g, NULL);
out:
	if (err)
		pmon_bench_result_release(out);
	pmon_selfgroup__close(g);
	free(ts);
	free(rs);
	free(cs);
	free(es);
	free(scratch);
	return err;
}

/* What the child hands back, in a shared anonymous mapping. */
struct shared {
	int err;
	bool done, via_rdpmc;
	size_t nevents;
	uint64_t progress;
	char detail[512];
	struct pmon_summary tsc;
	struct pmon_summary events[PMON_BENCH_MAX_EVENTS];
	struct pmon_summary clock; /* the clock chain's, with a ref */
	struct pmon_summary cycles; /* the body's core cycles, with a ref */
};

static void child(const struct pmon_bench_code *c, const struct pmon_bench_opts *opts,
		  struct shared *sh, pid_t parent, const struct pmon_bench_code *ref,
		  unsigned latency)
{
	static const int faults[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS };
	struct rlimit nocore = { 0, 0 };
	struct pmon_bench_result r;

	prctl(PR_SET_PDEATHSIG, SIGKILL); /* pmon gone: the body goes too */
	if (getppid() != parent)
		_exit(127);
	setrlimit(RLIMIT_CORE, &nocore); /* a faulting body is reported, not dumped */
	for (size_t i = 0; i < PMON_ARRAY_SIZE(faults); i++)
		signal(faults[i], SIG_DFL); /* a sanitizer's handler would exit instead */
	sh->err = measure(c, opts, &r, &sh->progress, ref, latency, &sh->clock, &sh->cycles);
	if (sh->err) {
		pmon__strlcpy(sh->detail, pmon_errdetail(), sizeof(sh->detail));
	} else {
		sh->tsc = r.tsc;
		sh->nevents = r.nevents;
		for (size_t e = 0; e < r.nevents; e++)
			sh->events[e] = r.events[e];
		sh->via_rdpmc = r.via_rdpmc;
	}
	__atomic_store_n(&sh->done, true, __ATOMIC_RELEASE);
	_exit(0);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static const char *fault_hint(int sig)
{
	switch (sig) {
	case SIGSEGV:
		return "a bad memory access";
	case SIGBUS:
		return "a misaligned or unbacked memory access";
	case SIGILL:
		return "an invalid instruction";
	case SIGTRAP:
		return "a breakpoint or trap";
	case SIGFPE:
		return "a division error";
	default:
		return sigdescr_np(sig) ? sigdescr_np(sig) : "a signal";
	}
}

/*
 * The latency of `imul r64, r64` (a dependent chain: each result feeds the
 * next) in core cycles, by CPU: 3 on every core listed. Sources: Agner
 * Fog's "Instruction tables" (www.agner.org/optimize): IMUL r64,r64
 * latency 3 from Nehalem on and on AMD from Zen on; uops.info's
 * measurements of IMUL (R64, R64): 3 on Nehalem through Alder Lake-P and
 * Zen+ through Zen 4; for Zen 5 (family 1AH), AMD's Software Optimization
 * Guide for family 1AH processors (pub. 58455) lists 3, and llvm-mca's
 * znver models agree from znver3 on. Not here: Core 2 (5 with 64-bit
 * operands), Atom-class cores (Silvermont .. Tremont: 5), Bulldozer (6),
 * K8/K10 (4). Model numbers: SDM Vol. 4 table 1-1, as lib/sim/mca.c's.
 * LLVM 14's znver1/znver2 models say 4 where uops.info measured 3: `pmon
 * bench --predict` prints llvm-mca's figure beside the one used.
 */
static const struct {
	enum pmon_vendor vendor;
	unsigned family, model_lo, model_hi;
} imul3[] = {
	{ PMON_VENDOR_AMD, 0x17, 0x00, 0xff }, /* Zen, Zen+, Zen 2 */
	{ PMON_VENDOR_HYGON, 0x18, 0x00, 0xff }, /* Dhyana: Zen */
	{ PMON_VENDOR_AMD, 0x19, 0x00, 0xff }, /* Zen 3, Zen 4 */
	{ PMON_VENDOR_AMD, 0x1a, 0x00, 0xff }, /* Zen 5 */
	{ PMON_VENDOR_INTEL, 6, 0x1a, 0x1a }, /* Nehalem */
	{ PMON_VENDOR_INTEL, 6, 0x1e, 0x1f },
	{ PMON_VENDOR_INTEL, 6, 0x2e, 0x2e },
	{ PMON_VENDOR_INTEL, 6, 0x25, 0x25 }, /* Westmere */
	{ PMON_VENDOR_INTEL, 6, 0x2c, 0x2c },
	{ PMON_VENDOR_INTEL, 6, 0x2f, 0x2f },
	{ PMON_VENDOR_INTEL, 6, 0x2a, 0x2a }, /* Sandy Bridge */
	{ PMON_VENDOR_INTEL, 6, 0x2d, 0x2d },
	{ PMON_VENDOR_INTEL, 6, 0x3a, 0x3a }, /* Ivy Bridge */
	{ PMON_VENDOR_INTEL, 6, 0x3e, 0x3e },
	{ PMON_VENDOR_INTEL, 6, 0x3c, 0x3c }, /* Haswell */
	{ PMON_VENDOR_INTEL, 6, 0x3f, 0x3f },
	{ PMON_VENDOR_INTEL, 6, 0x45, 0x46 },
	{ PMON_VENDOR_INTEL, 6, 0x3d, 0x3d }, /* Broadwell */
	{ PMON_VENDOR_INTEL, 6, 0x47, 0x47 },
	{ PMON_VENDOR_INTEL, 6, 0x4f, 0x4f },
	{ PMON_VENDOR_INTEL, 6, 0x56, 0x56 },
	{ PMON_VENDOR_INTEL, 6, 0x4e, 0x4e }, /* Skylake, Cascade Lake */
	{ PMON_VENDOR_INTEL, 6, 0x5e, 0x5e },
	{ PMON_VENDOR_INTEL, 6, 0x55, 0x55 },
	{ PMON_VENDOR_INTEL, 6, 0x8e, 0x8e }, /* Kaby, Coffee, Comet Lake */
	{ PMON_VENDOR_INTEL, 6, 0x9e, 0x9e },
	{ PMON_VENDOR_INTEL, 6, 0xa5, 0xa6 },
	{ PMON_VENDOR_INTEL, 6, 0x66, 0x66 }, /* Cannon Lake */
	{ PMON_VENDOR_INTEL, 6, 0x6a, 0x6c }, /* Ice Lake */
	{ PMON_VENDOR_INTEL, 6, 0x7d, 0x7e },
	{ PMON_VENDOR_INTEL, 6, 0x8c, 0x8d }, /* Tiger Lake */
	{ PMON_VENDOR_INTEL, 6, 0xa7, 0xa7 }, /* Rocket Lake */
	{ PMON_VENDOR_INTEL, 6, 0x8f, 0x8f }, /* Sapphire Rapids */
	{ PMON_VENDOR_INTEL, 6, 0xcf, 0xcf }, /* Emerald Rapids */
	{ PMON_VENDOR_INTEL, 6, 0xad, 0xae }, /* Granite Rapids */
	/* hybrid parts: their P-cores (an E-core is refused: pin bench to a
	 * P-core with --cpu) */
	{ PMON_VENDOR_INTEL, 6, 0x97, 0x97 }, /* Alder Lake */
	{ PMON_VENDOR_INTEL, 6, 0x9a, 0x9a },
	{ PMON_VENDOR_INTEL, 6, 0xb7, 0xb7 }, /* Raptor Lake */
	{ PMON_VENDOR_INTEL, 6, 0xba, 0xba },
	{ PMON_VENDOR_INTEL, 6, 0xbf, 0xbf },
	{ PMON_VENDOR_INTEL, 6, 0xaa, 0xaa }, /* Meteor Lake */
	{ PMON_VENDOR_INTEL, 6, 0xac, 0xac },
	{ PMON_VENDOR_INTEL, 6, 0xbd, 0xbd }, /* Lunar Lake */
	{ PMON_VENDOR_INTEL, 6, 0xc5, 0xc6 }, /* Arrow Lake */
};

unsigned pmon_bench_clock_latency(const struct pmon_cpu_info *info)
{
	const struct pmon_cpu_ident *id = info ? &info->id : NULL;

	/* a hybrid part's E-core (CPUID.1AH:EAX[31:24] = 20H, SDM Vol. 2A
	 * CPUID leaf 1AH) shares the P-cores' family and model */
	if (info && info->hybrid.hybrid && info->hybrid.core_type == 0x20)
		return 0;
	for (size_t i = 0; id && i < PMON_ARRAY_SIZE(imul3); i++)
		if (imul3[i].vendor == id->vendor && imul3[i].family == id->family &&
		    id->model >= imul3[i].model_lo && id->model <= imul3[i].model_hi)
			return 3;
	return 0;
}

/* The clock chain for @opts->clock, built like an --asm body; NULL (with
 * ->why said) where this CPU's imul latency is unknown. */
static struct pmon_bench_code *clock_chain(struct pmon_bench_clock *k)
{
	struct pmon_cpuid *id = pmon_cpuid__new_live();
	struct pmon_cpu_info info;
	struct pmon_bench_code *ref = NULL;

	memset(k, 0, sizeof(*k));
	if (!id || pmon_cpu_decode(id, &info)) {
		pmon__fmt(k->why, sizeof(k->why), "this CPU's CPUID could not be read");
		pmon_cpuid__free(id);
		return NULL;
	}
	pmon_cpuid__free(id);
	k->latency = pmon_bench_clock_latency(&info);
	if (!k->latency) {
		pmon__fmt(k->why, sizeof(k->why),
			  "the latency of imul on this CPU (%s family %02XH model %02XH%s) is not "
			  "in pmon's table",
			  info.id.vendor_id, info.id.family, info.id.model,
			  info.hybrid.core_type == 0x20 ? ", an E-core" : "");
		return NULL;
	}
	if (pmon_bench_code__asm(PMON_BENCH_CLOCK_CHAIN, 100, &ref)) {
		pmon__fmt(k->why, sizeof(k->why), "the clock chain did not build: %s",
			  pmon_errdetail());
		k->latency = 0;
		return NULL;
	}
	return ref;
}

int pmon_bench_run(const struct pmon_bench_code *c, const struct pmon_bench_opts *opts,
		   struct pmon_bench_result *out)
{
	unsigned limit = PMON_OPTS_GET(opts, time_limit_ms, 0) ? opts->time_limit_ms : 10000;
	size_t ne = opts && opts->events ? pmon_evlist__count(opts->events) : 0;
	struct pmon_bench_clock *clock = PMON_OPTS_GET(opts, clock, NULL);
	struct pmon_bench_code *ref = NULL;
	struct shared *sh;
	pid_t pid, parent = getpid();
	int status = 0, err = 0;

	memset(out, 0, sizeof(*out));
	if (ne > PMON_BENCH_MAX_EVENTS)
		return pmon__err(-E2BIG, "at most %d events", PMON_BENCH_MAX_EVENTS);
	if (clock)
		ref = clock_chain(clock); /* before the body's child: it inherits the code */
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		pmon_bench_code__free(ref);
		return -ENOMEM;
	}
	fflush(NULL); /* nothing buffered is written twice */
	pid = fork();
	if (pid < 0) {
		err = pmon__err(-errno, "cannot start the body's process: %s", strerror(errno));
		goto out;
	}
	if (pid == 0)
		child(c, opts, sh, parent, ref, ref ? clock->latency : 0);

	/* Wait, polling more slowly as time passes (1 ms .. 50 ms): a quick
	 * body is not held up, a stuck one is stopped when no run of it has
	 * finished for @limit ms. */
	uint64_t seen = 0, since = now_ms();
	for (unsigned nap = 1;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			err = pmon__err(-errno, "waiting for the body's process: %s",
					strerror(errno));
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			goto out;
		}
		uint64_t p = __atomic_load_n(&sh->progress, __ATOMIC_RELAXED), t = now_ms();
		if (p != seen) {
			seen = p;
			since = t;
		} else if (t - since >= limit) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			err = pmon__err(
				-ETIMEDOUT,
				"bench body '%s': no run of it finished in %.3g s (an endless "
				"loop, or r15, the loop counter, changed): stopped",
				c->what, limit / 1000.0);
			goto out;
		}
		nanosleep(&(struct timespec){ 0, (long)nap * 1000000 }, NULL);
		if (nap < 50)
			nap *= 2;
	}
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		err = pmon__err(-EFAULT, "bench body '%s' was killed by SIG%s (%s)", c->what,
				sigabbrev_np(sig) ? sigabbrev_np(sig) : "?", fault_hint(sig));
	} else if (!__atomic_load_n(&sh->done, __ATOMIC_ACQUIRE)) {
		err = pmon__err(-ECHILD, "bench body '%s' ended the process (exit status %d)",
				c->what, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	} else if (sh->err) {
		err = pmon__err(sh->err, "%s", sh->detail);
	} else {
		out->unroll = c->unroll;
		out->iterations = opts && opts->iterations ? opts->iterations : 1000;
		out->nevents = sh->nevents;
		out->tsc = sh->tsc;
		out->via_rdpmc = sh->via_rdpmc;
		if (sh->nevents) {
			out->events = calloc(sh->nevents, sizeof(*out->events));
			if (!out->events)
				err = -ENOMEM;
			else
				memcpy(out->events, sh->events, sh->nevents * sizeof(*out->events));
		}
		if (ref) {
			clock->ticks = sh->clock;
			clock->cycles = sh->cycles;
			/* The mode, as the seeds take it: a sample slowed by
			 * another thread on the core or by the scheduler lands
			 * anywhere above it, an undisturbed one on it. */
			clock->cycles_per_tick =
				sh->clock.mode > 0 ? clock->latency / sh->clock.mode : 0;
			if (!clock->cycles_per_tick) {
				clock->latency = 0;
				pmon__fmt(clock->why, sizeof(clock->why),
					  "the clock chain measured no time");
			}
		}
	}
out:
	munmap(sh, sizeof(*sh));
	pmon_bench_code__free(ref);
	return err;
}
