// SPDX-License-Identifier: MIT
/*
 * Tracepoint samples decoded by their fields (lib/report/ctx.h), as perf
 * script prints them: libtraceevent (Debian's libtraceevent1, the library
 * perf's own copy came from) parses each tracepoint's format description and
 * prints a record by the event's print format (tep_print_event(),
 * TEP_PRINT_INFO, no plugins: what perf script prints where none are
 * installed).
 *
 * The formats come from perf.data's tracing data, whose layout is perf's
 * (tools/perf/util/trace-event-read.c, trace_report()): the magic
 * "\027\010\104tracing", a version string, an endianness byte, the size of
 * a long, the page size (u32); "header_page\0" with a u64 size and the
 * header page's format; "header_event\0" likewise; the ftrace formats (u32
 * count, each a u64 size and the text); the event formats by system (u32
 * count of systems, each a NUL-terminated name, a u32 count, each a u64
 * size and the text); kallsyms (u32 size, text); printk formats (u32
 * size, text); from version 0.6 the saved command lines (u64 size, text).
 * Every size is checked against what is left.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

#include "internal.h"
#include "report/ctx.h"

/*
 * libtraceevent reads a record's fields at the offsets its format states,
 * and a dynamic array (__data_loc) where the record's own u16 offset and
 * length say, without checking them against the record's size. A record
 * is therefore decoded from a zeroed copy of TP_PAD bytes: a 16-bit
 * offset plus a 16-bit length stays inside it, and a format whose fixed
 * fields reach past TP_FIELDS_MAX is not used.
 */
#define TP_PAD (1u << 18)
#define TP_FIELDS_MAX (1u << 16)

struct pmon__tp {
	struct tep_handle *tep;
	struct trace_seq seq;
	unsigned nevents; /* formats parsed */
	uint8_t *pad; /* TP_PAD bytes, zero past @used */
	uint32_t used;
	int checked; /* 0: not yet; 1: every format fits; -1: one does not (none used) */
	unsigned tried; /* formats tried (TP_FORMATS_MAX) */
};

struct cursor {
	const uint8_t *p;
	size_t left;
};

static bool get(struct cursor *c, void *out, size_t n)
{
	if (c->left < n)
		return false;
	memcpy(out, c->p, n);
	c->p += n, c->left -= n;
	return true;
}

/* @n bytes of text at the cursor as a NUL-terminated copy (libtraceevent
 * wants strings), or NULL. */
static char *text(struct cursor *c, uint64_t n)
{
	char *t;

	if (n > c->left || !(t = malloc((size_t)n + 1)))
		return NULL;
	memcpy(t, c->p, (size_t)n);
	t[n] = '\0';
	c->p += n, c->left -= (size_t)n;
	return t;
}

/*
 * libtraceevent's parser is not safe against a malformed format: a fuzzed
 * print fmt made tep_parse_event() dereference NULL (libtraceevent 1.7.1).
 * A recording is outside input, so each format is first parsed in a child
 * process, and only one that parsed there without a crash is parsed here.
 * A recording holds the formats of its events only (a few); at most
 * TP_FORMATS_MAX are tried.
 */
#define TP_FORMATS_MAX 256

static bool parses_safely(const struct pmon__tp *t, const char *fmt, size_t n, const char *sys)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return false;
	if (pid == 0) {
		struct tep_handle *tep = tep_alloc();
		if (!tep)
			_exit(1);
		tep_set_file_bigendian(tep, TEP_LITTLE_ENDIAN);
		tep_set_local_bigendian(tep, TEP_LITTLE_ENDIAN);
		tep_set_long_size(tep, tep_get_long_size(t->tep));
		_exit(tep_parse_event(tep, fmt, n, sys) == 0 ? 0 : 1);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void add_format(struct pmon__tp *t, const char *fmt, size_t n, const char *sys)
{
	if (t->tried++ >= TP_FORMATS_MAX || !parses_safely(t, fmt, n, sys))
		return;
	if (tep_parse_event(t->tep, fmt, (unsigned long)n, sys) == 0)
		t->nevents++;
	t->checked = 0; /* its fields are checked before a record is decoded */
}

/* A u64-sized section's text, a format of subsystem @sys. */
static bool section(struct cursor *c, struct pmon__tp *t, const char *sys)
{
	uint64_t n;
	char *s;

	if (!get(c, &n, 8) || !(s = text(c, n)))
		return false;
	add_format(t, s, (size_t)n, sys);
	free(s);
	return true;
}

static bool parse(struct pmon__tp *t, struct cursor *c)
{
	static const char magic[10] = "\027\010\104tracing";
	char m[10], name[13];
	uint8_t big, lsize;
	uint32_t psize, n, nsys;
	uint64_t sz;
	bool v06;

	if (!get(c, m, 10) || memcmp(m, magic, 10))
		return false;
	const char *ver = (const char *)c->p;
	size_t vlen = strnlen(ver, c->left);
	if (vlen == c->left)
		return false;
	v06 = strtod(ver, NULL) >= 0.6;
	c->p += vlen + 1, c->left -= vlen + 1;
	if (!get(c, &big, 1) || big || !get(c, &lsize, 1) || !get(c, &psize, 4))
		return false; /* a big-endian machine's: the reader refused it already */
	tep_set_file_bigendian(t->tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(t->tep, TEP_LITTLE_ENDIAN);
	tep_set_long_size(t->tep, lsize);
	tep_set_page_size(t->tep, (int)psize);
	if (!get(c, name, 12) || memcmp(name, "header_page", 12) || !get(c, &sz, 8))
		return false;
	char *hp = text(c, sz);
	if (!hp)
		return false;
	tep_parse_header_page(t->tep, hp, (unsigned long)sz, lsize);
	free(hp);
	if (!get(c, name, 13) || memcmp(name, "header_event", 13) || !get(c, &sz, 8) ||
	    sz > c->left)
		return false;
	c->p += sz, c->left -= (size_t)sz;
	if (!get(c, &n, 4))
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (!section(c, t, "ftrace"))
			return false;
	if (!get(c, &nsys, 4))
		return false;
	for (uint32_t s = 0; s < nsys; s++) {
		const char *sys = (const char *)c->p;
		size_t slen = strnlen(sys, c->left);
		if (slen == c->left)
			return false;
		char *sname = strndup(sys, slen);
		c->p += slen + 1, c->left -= slen + 1;
		bool ok = sname && get(c, &n, 4);
		for (uint32_t i = 0; ok && i < n; i++)
			ok = section(c, t, sname);
		free(sname);
		if (!ok)
			return false;
	}
	/* kallsyms and printk formats: function names and bprintk strings */
	uint32_t k;
	char *s;
	if (get(c, &k, 4) && (s = text(c, k))) {
		tep_parse_kallsyms(t->tep, s);
		free(s);
		if (get(c, &k, 4) && (s = text(c, k))) {
			tep_parse_printk_formats(t->tep, s);
			free(s);
			if (v06 && get(c, &sz, 8) && (s = text(c, sz))) {
				tep_parse_saved_cmdlines(t->tep, s);
				free(s);
			}
		}
	}
	return true;
}

struct pmon__tp *pmon__tp_new_perf(const uint8_t *data, size_t n)
{
	struct pmon__tp *t = calloc(1, sizeof(*t));
	struct cursor c = { data, n };

	if (!t || !(t->tep = tep_alloc())) {
		free(t);
		return NULL;
	}
	trace_seq_init(&t->seq);
	/* The formats parsed before a damaged part still decode. */
	parse(t, &c);
	if (!t->nevents) {
		pmon__tp_free(t);
		return NULL;
	}
	return t;
}

int pmon__tp_add_format(struct pmon__tp **tp, const char *sys, const char *fmt, size_t n)
{
	struct pmon__tp *t = *tp;

	if (!t) {
		if (!(t = calloc(1, sizeof(*t))) || !(t->tep = tep_alloc())) {
			free(t);
			return -ENOMEM;
		}
		trace_seq_init(&t->seq);
		tep_set_file_bigendian(t->tep, TEP_LITTLE_ENDIAN);
		tep_set_local_bigendian(t->tep, TEP_LITTLE_ENDIAN);
		tep_set_long_size(t->tep, 8);
		tep_set_page_size(t->tep, 4096);
		*tp = t;
	}
	add_format(t, fmt, n, sys);
	return 0;
}

/* Do @e's fields lie within TP_FIELDS_MAX bytes? */
static bool fields_fit(const struct tep_event *e)
{
	const struct tep_format_field *lists[2] = { e->format.common_fields, e->format.fields };

	for (int i = 0; i < 2; i++)
		for (const struct tep_format_field *f = lists[i]; f; f = f->next)
			if (f->offset < 0 || f->size < 0 ||
			    (unsigned)f->offset + (unsigned)f->size > TP_FIELDS_MAX)
				return false;
	return true;
}

const char *pmon__tp_print(struct pmon__tp *t, const void *raw, uint32_t size, int cpu)
{
	struct tep_record rec = { .size = (int)size, .cpu = cpu };
	struct tep_event *e;

	if (!t || size < 2 || size > TP_FIELDS_MAX)
		return NULL;
	if (!t->checked) { /* the type itself is read where the formats say */
		t->checked = 1;
		for (int i = 0, n = tep_get_events_count(t->tep); i < n; i++)
			if (!fields_fit(tep_get_event(t->tep, i)))
				t->checked = -1;
	}
	if (t->checked < 0)
		return NULL;
	if (!t->pad && !(t->pad = calloc(1, TP_PAD)))
		return NULL;
	memcpy(t->pad, raw, size);
	if (t->used > size) /* what the last record left past this one's end */
		memset(t->pad + size, 0, t->used - size);
	t->used = size;
	rec.data = t->pad;
	if (!(e = tep_find_event(t->tep, tep_data_type(t->tep, &rec))))
		return NULL;
	trace_seq_reset(&t->seq);
	tep_print_event(t->tep, &t->seq, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&t->seq);
	return t->seq.state == TRACE_SEQ__GOOD ? t->seq.buffer : NULL;
}

void pmon__tp_free(struct pmon__tp *t)
{
	if (!t)
		return;
	trace_seq_destroy(&t->seq);
	tep_free(t->tep);
	free(t->pad);
	free(t);
}
