// SPDX-License-Identifier: MIT
/*
 * Helpers shared by the subcommands: one-line errors, number parsing, output
 * files. Everything that touches the machine goes through libpmon instead.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include <pmon/pmon.h>

/* The library's messages say what is wrong and never name a pmon command
 * (issue #11: a program linking libpmon has no 'pmon list'); the tool adds
 * where to look. The first phrase found picks the hint. */
static const struct {
	const char *phrase, *hint;
	bool at_end; /* else right after the phrase */
} hints[] = {
	{ "exposes no hardware PMU", " (see 'pmon info')", false },
	{ "exposes no core PMU", " (see 'pmon info')", false },
	{ "this machine has another one", " (see 'pmon info')", false },
	{ "the MSR backend programs Intel's", " (see 'pmon info')", true },
	{ "' is unknown", " (see 'pmon list')", true },
	{ "is not an MSR pmon knows by name", " (see 'pmon msr list')", true },
	{ "no free RMID", "; 'pmon rdt --cleanup' removes those", true },
	{ "left the counters programmed", "; 'pmon stat --backend msr --cleanup' puts them back",
	  true },
	{ "is not a simulated event", " (see 'pmon list sim')", true },
	{ "a pmon trace, not a pmon recording", " ('pmon trace report' reads it)", true },
	{ "a pmon recording, not a pmon trace", " ('pmon report -i' reads it)", true },
	{ "perf's recording, not a pmon trace", " ('pmon report -i' reads it too)", true },
	{ "perf's recording in pipe mode, not a pmon trace", " ('pmon report -i' reads it too)",
	  true },
	{ "not a pmon interval log", "; 'pmon stat -I -x,' and 'pmon rdt -x,' write one", true },
	{ "a record of counts has 8", " ('pmon stat -I -x,' and 'pmon rdt -x,' write them)", true },
	{ "not an RDT log's", " ('pmon rdt -x,' writes one)", true },
};

void cli_hint(char *buf, size_t len)
{
	if (strstr(buf, "'pmon "))
		return;
	for (size_t i = 0; i < sizeof(hints) / sizeof(hints[0]); i++) {
		char *at = strstr(buf, hints[i].phrase);
		if (!at)
			continue;
		/* Right after the phrase, where it explains; cut if it must be. */
		size_t n = strlen(buf), h = strlen(hints[i].hint);
		size_t pos = hints[i].at_end ? n : (size_t)(at - buf) + strlen(hints[i].phrase);
		if (n + h >= len)
			return;
		memmove(buf + pos + h, buf + pos, n - pos + 1);
		memcpy(buf + pos, hints[i].hint, h);
		return;
	}
}

/* The length of the well-formed UTF-8 sequence at @p (RFC 3629: no
 * overlongs, no surrogates, at most U+10FFFF), or 0 when it is not one. */
static size_t utf8_len(const unsigned char *p)
{
	size_t n;
	unsigned min;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, min = 0x80;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, min = 0x800;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, min = 0x10000;
	else
		return 0;
	unsigned cp = p[0] & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0; /* also stops at the terminating NUL */
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* Mask control characters (a garbage file's bytes must not drive the
 * terminal) and bytes that are not UTF-8 (a garbage file's high bytes would
 * print as mojibake or a terminal's C1 controls) with '?'; well-formed
 * UTF-8 passes, so file names in any language stay readable. */
static void mask(char *buf)
{
	for (unsigned char *p = (unsigned char *)buf; *p;) {
		size_t n = utf8_len(p);
		if (!n) {
			*p++ = '?';
			continue;
		}
		if (n == 1 && (*p < 0x20 || *p == 0x7f))
			*p = '?';
		p += n;
	}
}

void cli_lib_error(int err)
{
	const char *d = pmon_errdetail();

	cli_error("%s", d[0] ? d : strerror(err < 0 ? -err : err));
}

const char *cli_printable(const char *s, char *buf, size_t len)
{
	if (!s)
		return NULL;
	snprintf(buf, len, "%s", s);
	mask(buf);
	return buf;
}

__attribute__((format(printf, 2, 0))) static void vmsg(const char *prefix, const char *fmt,
						       va_list ap)
{
	char buf[1024];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	cli_hint(buf, sizeof(buf));
	mask(buf);
	fflush(stdout);
	fprintf(stderr, "pmon: %s%s\n", prefix, buf);
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

int cli_run_interrupted(struct pmon_run *run)
{
	int sig = run ? pmon_run__signal(run) : 0;

	if (!sig)
		return 0;
	pmon_run__wait(run);
	return 128 + sig;
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

int cli_event_error_code(int err)
{
	const char *d = pmon_errdetail();

	if (err == -PMON_ERRNO__PMU_MISSING &&
	    (strstr(d, "exposes no core PMU") || strstr(d, "this machine has another one")))
		return CLI_UNSUPPORTED;
	/* A known event this user may not use (a tracepoint without
	 * CAP_PERFMON): not possible with these rights (docs/exit-codes.md). */
	if (err == -EACCES || err == -EPERM)
		return CLI_UNSUPPORTED;
	return CLI_USAGE;
}

bool cli_parse_uint(const char *s, unsigned long max, const char *what, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!s || !isdigit((unsigned char)*s)) {
		cli_error("%s '%s' is not a non-negative integer", what, s ? s : "");
		return false;
	}
	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end) {
		cli_error("%s '%s' is not a non-negative integer", what, s);
		return false;
	}
	if (v > max) {
		cli_error("%s %lu is too large (at most %lu)", what, v, max);
		return false;
	}
	*out = v;
	return true;
}

/* The outputs open now, by stream: cli_close_output() commits the one its
 * FILE came from. A command has one or two (top's log beside its screen). */
static struct {
	FILE *f;
	struct pmon_output *out;
	int err; /* a failed write's errno, as cli_output_failed() was told */
} outputs[8];

FILE *cli_open_output_as(const char *path, unsigned flags)
{
	struct pmon_output_opts o = { .sz = sizeof(o), .flags = flags };
	struct pmon_output *out;
	size_t i;

	if (!path || !strcmp(path, "-"))
		return stdout;
	for (i = 0; i < sizeof(outputs) / sizeof(outputs[0]) && outputs[i].f; i++)
		;
	if (i == sizeof(outputs) / sizeof(outputs[0])) {
		cli_error("cannot write '%s': too many outputs open", path);
		return NULL;
	}
	/* 0600 for a new file, as perf creates its recordings: outputs may
	 * hold kernel addresses, raw user-stack bytes, command lines; a
	 * replaced file keeps its mode: pmon never widens what the user set. */
	if (!(out = pmon_output__open(path, &o))) {
		cli_error("%s", pmon_errdetail());
		return NULL;
	}
	outputs[i].f = pmon_output__file(out);
	outputs[i].out = out;
	return outputs[i].f;
}

/* The output @f came from, taken out of the table (*@err: the errno
 * cli_output_errno() kept, else 0); NULL for stdout. */
static struct pmon_output *output_of(FILE *f, int *err)
{
	*err = 0;
	for (size_t i = 0; i < sizeof(outputs) / sizeof(outputs[0]); i++)
		if (outputs[i].f == f && f) {
			struct pmon_output *out = outputs[i].out;
			*err = outputs[i].err;
			outputs[i] = (typeof(outputs[i])){ 0 };
			return out;
		}
	return NULL;
}

void cli_output_errno(FILE *f, int e)
{
	for (size_t i = 0; i < sizeof(outputs) / sizeof(outputs[0]); i++)
		if (outputs[i].f == f && f && !outputs[i].err)
			outputs[i].err = e;
}

/* Reported once per stream: a loop that checks every interval says it once. */
static const FILE *reported;

void cli_abandon_output(FILE *f)
{
	struct pmon_output *out = output_of(f, &(int){ 0 });

	if (reported == f) /* @f is freed: another stream may get its address */
		reported = NULL;

	if (out)
		pmon_output__abandon(out);
	else if (f && f != stdout && f != stderr)
		fclose(f);
}

bool cli_reader_gone(int fd)
{
	/* Linux's pipe_poll() and sock_poll() say POLLERR to a writer once
	 * every reader is gone: the state, whatever errno a past write left. */
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	struct stat st;

	if (fd < 0 || fstat(fd, &st) || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		return false;
	return poll(&p, 1, 0) == 1 && (p.revents & POLLERR);
}

static const char *out_name(const FILE *f, const char *path)
{
	return path ? path : f == stderr ? "standard error" : "standard output";
}

static bool report_write_error(FILE *f, const char *path, int e)
{
	if (reported == f)
		return true;
	reported = f;
	if (e == EPIPE || cli_reader_gone(fileno(f)))
		return true; /* the reader closed the pipe: its choice, say nothing */
	cli_error("cannot write '%s': %s", out_name(f, path), strerror(e ? e : EIO));
	return true;
}

void cli_output_error(FILE *f, const char *path, int e)
{
	errno = 0;
	if (fflush(f) && errno && (!e || e == EIO))
		e = errno;
	report_write_error(f, path, e);
}

bool cli_output_failed(FILE *f, const char *path)
{
	int e;

	errno = 0;
	if (fflush(f) == 0 && !ferror(f))
		return false;
	e = errno;
	return report_write_error(f, path, e);
}

int cli_close_output(FILE *f, const char *path)
{
	bool bad;
	int e;

	errno = 0;
	bad = ferror(f) != 0;
	bool said = reported == f;
	if (f == stdout || f == stderr) {
		bad |= fflush(f) != 0;
		e = errno;
		if (bad)
			report_write_error(f, path, e);
	} else {
		bool gone = cli_reader_gone(fileno(f));
		int kept;
		struct pmon_output *out = output_of(f, &kept);
		if (out && !bad) {
			/* flush, close and, for a temporary, rename over the file */
			int r = pmon_output__commit(out);
			bad = r != 0;
			e = -r;
			if (bad && !said && !gone && e != EPIPE)
				cli_error("%s", pmon_errdetail());
		} else {
			/* the failed write's reason: a flush retried gives it
			 * (ENOSPC) where the error flag alone does not */
			errno = 0;
			e = out && fflush(f) && errno ? errno : 0;
			/* a write larger than the buffer went straight to the
			 * file and left nothing to retry: the errno kept then */
			e = e ? e : kept;
			if (out) {
				pmon_output__abandon(out);
			} else {
				bad |= fclose(f) != 0;
				e = errno;
			}
			/* fclose() freed @f: only its address is compared from here */
			if (bad && !said && !gone && e != EPIPE)
				cli_error("cannot write '%s': %s", out_name(NULL, path),
					  strerror(e ? e : EIO));
		}
	}
	if (said)
		reported = NULL;
	return bad ? CLI_FAIL : CLI_OK;
}

bool cli_check_output_as(const char *path, const char *what, unsigned flags)
{
	struct pmon_output_opts o = { .sz = sizeof(o), .flags = flags };

	if (!path || !strcmp(path, "-"))
		return true;
	if (pmon_output__check(path, &o)) {
		/* the file is named in the detail; another option's name
		 * ("--plot") says which output it is */
		if (!strcmp(what, "-o"))
			cli_error("%s", pmon_errdetail());
		else
			cli_error("%s: %s", what, pmon_errdetail());
		return false;
	}
	return true;
}

bool cli_output_is_input(const char *out, const char *in, const char *what)
{
	struct stat so, si;

	if (!out || !in || !strcmp(out, "-") || stat(out, &so) || stat(in, &si) ||
	    so.st_dev != si.st_dev || so.st_ino != si.st_ino || !S_ISREG(so.st_mode))
		return false;
	cli_error("%s '%s' is the input '%s': it would be written over what is read; name "
		  "another file",
		  what, out, in);
	return true;
}

bool cli_plot_name_ok(const char *path)
{
	const char *ext = strrchr(path, '.');

	if (ext && (!strcasecmp(ext, ".svg") || !strcasecmp(ext, ".png")))
		return true;
	cli_error("--plot '%s': the picture's name must end in .svg or .png", path);
	return false;
}

int cli_bad_option(const char *cmd, char **argv, const char *shortopts,
		   const struct option *longopts)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "";

	if (!strncmp(arg, "--", 2)) {
		/* Unknown, ambiguous, given a value it takes none of, or missing
		 * the one it needs. */
		size_t n = strcspn(arg, "=");
		const struct option *hit = NULL;
		size_t nhit = 0;
		for (const struct option *o = longopts; o && o->name; o++) {
			if (strncmp(o->name, arg + 2, n - 2))
				continue;
			if (strlen(o->name) == n - 2) { /* exact: wins over prefixes */
				hit = o;
				nhit = 1;
				break;
			}
			hit = o;
			nhit++;
		}
		if (nhit > 1) {
			cli_error("option '%.*s' is ambiguous (see 'pmon %s --help')",
				  (int)(n > 200 ? 200 : n), arg, cmd);
			return CLI_USAGE;
		}
		if (hit) {
			if (arg[n] == '=' && hit->has_arg == no_argument)
				cli_error("option '--%s' takes no value (see 'pmon %s --help')",
					  hit->name, cmd);
			else
				cli_error("option '--%s' needs a value (see 'pmon %s --help')",
					  hit->name, cmd);
			return CLI_USAGE;
		}
		cli_error("unknown option '%.*s' (see 'pmon %s --help')", (int)(n > 200 ? 200 : n),
			  arg, cmd);
		return CLI_USAGE;
	}
	const char *at =
		optopt > 0 && optopt != ':' && optopt != '+' ? strchr(shortopts, optopt) : NULL;
	if (at && at[1] == ':')
		cli_error("option '-%c' needs a value (see 'pmon %s --help')", optopt, cmd);
	else if (optopt > 0x20 && optopt < 0x7f)
		cli_error("unknown option '-%c' (see 'pmon %s --help')", optopt, cmd);
	else
		cli_error("unknown option (see 'pmon %s --help')", cmd);
	return CLI_USAGE;
}

struct pmon_cpuid *cli_cpuid_snapshot(const char *file, int cpu, int *rc)
{
	struct pmon_cpuid *snap;
	int e;

	if (file && cpu >= 0) {
		cli_error("--cpu and --cpuid-file exclude each other: a dump is one CPU already");
		*rc = CLI_USAGE;
		return NULL;
	}
	snap = file	   ? pmon_cpuid__new_file(file)
		: cpu >= 0 ? pmon_cpuid__new_cpu(cpu)
			   : pmon_cpuid__new_live();
	if (snap)
		return snap;
	e = errno;
	if (file)
		cli_error("%s", pmon_errdetail());
	else
		cli_error("cannot read CPUID%s: %s", cpu >= 0 ? " of that CPU" : "",
			  pmon_errdetail()[0] ? pmon_errdetail() : strerror(e));
	*rc = e == ENOMEM || e == EIO ? CLI_FAIL : CLI_USAGE;
	return NULL;
}

bool cli_cpu_decode(const char *file, struct pmon_cpu_info *ci)
{
	int rc;
	struct pmon_cpuid *snap = cli_cpuid_snapshot(file, -1, &rc);
	bool ok = snap && pmon_cpu_decode(snap, ci) == 0;

	if (snap && !ok)
		cli_error("%s", pmon_errdetail());
	pmon_cpuid__free(snap);
	return ok;
}

int cli_parse_u64(const char *s, int base, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno == ERANGE)
		return -ERANGE;
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

void cli_group_digits(char *buf, size_t len, uint64_t v)
{
	char num[32];
	size_t n, o = 0;

	snprintf(num, sizeof(num), "%llu", (unsigned long long)v);
	n = strlen(num);
	for (size_t k = 0; k < n && o + 2 < len; k++) {
		if (k && (n - k) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = num[k];
	}
	buf[o] = '\0';
}

int cli_msr_cleanup(FILE *f, const char *who, const char *path)
{
	struct pmon_msr_write_rec *w = NULL;
	size_t n = 0;
	int err;

	if (!path || access(path, F_OK)) {
		fprintf(f, "%s: no MSR state left by a pmon: nothing to restore\n", who);
		return CLI_OK;
	}
	err = pmon_msr_state__restore(path, &w, &n);
	if (err == -EBUSY || err == -EINVAL) {
		cli_error("--cleanup: %s", pmon_errdetail());
		free(w);
		return err == -EBUSY ? CLI_UNSUPPORTED : CLI_USAGE;
	}
	for (size_t i = 0; i < n; i++) {
		const struct pmon_msr_info *info = pmon_msr_by_addr(w[i].addr);
		fprintf(f, "   CPU%d %-24s %#06" PRIx32 " <- %#" PRIx64 "  (restore)\n", w[i].cpu,
			info ? info->name : "?", w[i].addr, w[i].value);
	}
	free(w);
	if (err) {
		cli_error("--cleanup: RESTORE FAILED, check the registers listed: %s",
			  pmon_errdetail());
		return CLI_FAIL;
	}
	fprintf(f, "%s: restored %zu MSR writes from '%s'\n", who, n, path);
	return CLI_OK;
}
