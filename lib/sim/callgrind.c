// SPDX-License-Identifier: MIT
/*
 * A parser of callgrind's output format (valgrind's "Callgrind Format
 * Specification", docs/callgrind-format in valgrind's manual), for
 * pmon simulate: the self cost of every instruction, per object. The input
 * comes from a file another program wrote, so it is treated as hostile:
 * every line is bounded by the buffer, every number by its type, every
 * compressed name id by a table limit; nothing is NUL-terminated for us.
 *
 * What matters of the format here:
 *  - "events: Ir Dr ..." names the columns; "positions: instr line" says each
 *    cost line starts with an instruction address and a line number.
 *  - A position is absolute ("0x1129", "12"), relative to the same position
 *    of the previous cost line ("+4", "-18") or the same ("*").
 *  - "ob=", "fl=", "fi=", "fe=", "fn=" (and "cob=", "cfi=", "cfl=", "cfn=")
 *    name the object, file and function; "(id) name" defines a compressed
 *    name, "(id)" refers to it later.
 *  - "calls=COUNT TARGET" is followed by one cost line: the call's
 *    inclusive cost at the call site, which is not the caller's self cost.
 *    Its target position is relative to the previous cost line and does
 *    not become the base of the next (seen in callgrind 3.19's output).
 *  - "part: N" starts another dump of the same run (--combine-dumps=yes);
 *    its "desc: Trigger: ..." says what ended it. A dump zeroes callgrind's
 *    costs, so each part holds what ran since the one before (pmon simulate
 *    --regions splits the run so); compressed names carry across parts.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include <pmon/sim.h>

#define MAX_EVENTS 64
#define MAX_POSITIONS 4
#define MAX_ID (1u << 20) /* compressed name ids */

struct names { /* id -> name, for one kind of compressed name */
	char **by_id;
	size_t cap;
	char *plain; /* the last uncompressed name: repeated, it is the same object */
};

struct part {
	const char *trigger;
	uint64_t *v; /* self costs summed, one per event; NULL: none yet */
};

struct pmon_callgrind {
	char *event[MAX_EVENTS];
	size_t nevents;
	uint32_t pid;
	char *cmd;
	/* every name seen, owned here; ids index into the tables below */
	char **strs;
	size_t nstrs, capstrs;
	struct names ob, fl, fn;
	/* the self costs, one per (object, address) */
	const char **cobj, **cfn;
	uint64_t *caddr, *cval;
	size_t ncost, capcost;
	size_t *slot; /* open addressing: cost index + 1, 0 empty */
	size_t capslot;
	struct part *parts;
	size_t nparts, capparts;
	struct pmon_callgrind_call *calls; /* the call sites, in file order */
	size_t ncalls, capcalls;
};

struct parser {
	struct pmon_callgrind *cg;
	const char *name;
	size_t lineno;
	unsigned npos;
	int instr_pos; /* index of "instr" in positions, or -1 */
	uint64_t last[MAX_POSITIONS];
	const char *cur_ob, *cur_fn, *cur_cfn;
	uint64_t call_count; /* of the last "calls=" */
	bool after_calls;
	bool have_events;
};

static int perr(const struct parser *p, const char *why)
{
	return pmon__err(-PMON_ERRNO__PARSE, "%s:%zu: %s", p->name, p->lineno, why);
}

static char *store(struct pmon_callgrind *cg, const char *s, size_t n)
{
	if (PMON_GROW(&cg->strs, &cg->capstrs, cg->nstrs + 1))
		return NULL;
	char *d = malloc(n + 1);
	if (!d)
		return NULL;
	memcpy(d, s, n);
	d[n] = '\0';
	cg->strs[cg->nstrs++] = d;
	return d;
}

/* Start another part (the first on demand: a file may have no "part:"). */
static int part_new(struct pmon_callgrind *cg)
{
	if (PMON_GROW(&cg->parts, &cg->capparts, cg->nparts + 1))
		return -ENOMEM;
	cg->parts[cg->nparts++] = (struct part){ "", NULL };
	return 0;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* A decimal (or 0x hex) number at *@s within [@s, @e); false if none or
 * it overflows 64 bits. */
static bool number(const char **s, const char *e, uint64_t *out)
{
	const char *p = *s;
	uint64_t v = 0;
	bool hex = e - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X');

	if (hex) {
		p += 2;
		const char *start = p;
		for (; p < e; p++) {
			unsigned d;
			if (is_digit(*p))
				d = (unsigned)(*p - '0');
			else if (*p >= 'a' && *p <= 'f')
				d = (unsigned)(*p - 'a' + 10);
			else if (*p >= 'A' && *p <= 'F')
				d = (unsigned)(*p - 'A' + 10);
			else
				break;
			if (v >> 60)
				return false;
			v = v << 4 | d;
		}
		if (p == start)
			return false;
	} else {
		if (p >= e || !is_digit(*p))
			return false;
		for (; p < e && is_digit(*p); p++) {
			if (v > (UINT64_MAX - 9) / 10)
				return false;
			v = v * 10 + (uint64_t)(*p - '0');
		}
	}
	*s = p;
	*out = v;
	return true;
}

static void skip_blanks(const char **s, const char *e)
{
	while (*s < e && (**s == ' ' || **s == '\t'))
		(*s)++;
}

/* One position into @out given the previous value @last. */
static bool position(const char **s, const char *e, uint64_t last, uint64_t *out)
{
	const char *p = *s;
	uint64_t v;

	if (p < e && *p == '*') {
		*out = last;
		*s = p + 1;
		return true;
	}
	if (p < e && (*p == '+' || *p == '-')) {
		bool neg = *p == '-';
		p++;
		if (!number(&p, e, &v))
			return false;
		*out = neg ? last - v : last + v; /* wraps like callgrind's Addr */
		*s = p;
		return true;
	}
	if (!number(&p, e, &v))
		return false;
	*out = v;
	*s = p;
	return true;
}

static int names_set(struct names *t, uint64_t id, char *name)
{
	if (id >= MAX_ID)
		return -ERANGE;
	if (id >= t->cap) {
		size_t cap = t->cap ? t->cap : 64;
		while (cap <= id)
			cap *= 2;
		char **n = realloc(t->by_id, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		memset(n + t->cap, 0, (cap - t->cap) * sizeof(*n));
		t->by_id = n;
		t->cap = cap;
	}
	t->by_id[id] = name;
	return 0;
}

/* The value of a "kind=" line: "(id) name", "(id)" or "name". */
static int name_value(struct parser *p, struct names *t, const char *s, const char *e,
		      const char **out)
{
	skip_blanks(&s, e);
	if (s < e && *s == '(') {
		uint64_t id;
		s++;
		if (!number(&s, e, &id) || s >= e || *s != ')')
			return perr(p, "a compressed name is not '(id)' or '(id) name'");
		s++;
		skip_blanks(&s, e);
		if (s == e) { /* a reference */
			if (id >= t->cap || !t->by_id[id])
				return perr(p, "a compressed name refers to an id never defined");
			*out = t->by_id[id];
			return 0;
		}
		char *n = store(p->cg, s, (size_t)(e - s));
		if (!n)
			return -ENOMEM;
		int err = names_set(t, id, n);
		if (err == -ERANGE)
			return perr(p, "a compressed name id is too large");
		if (err)
			return err;
		*out = n;
		return 0;
	}
	size_t len = (size_t)(e - s);
	if (t->plain && strlen(t->plain) == len && !memcmp(t->plain, s, len)) {
		*out = t->plain;
		return 0;
	}
	char *n = store(p->cg, s, len);
	if (!n)
		return -ENOMEM;
	*out = t->plain = n;
	return 0;
}

static uint64_t mix(const char *obj, const char *fn, uint64_t addr)
{
	uint64_t h =
		((uint64_t)(uintptr_t)obj ^ (uint64_t)(uintptr_t)fn * 31) * 0x9e3779b97f4a7c15ULL ^
		addr;

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 29);
}

/* The cost entry of (@obj, @fn, @addr), made on first use; NULL without
 * memory. The function is part of the key: with --separate-callers one
 * instruction has a cost per call chain ("inner'middle'outer"), each a
 * stack of its own in the recording. */
static uint64_t *cost_of(struct pmon_callgrind *cg, const char *obj, const char *fn, uint64_t addr)
{
	if ((cg->ncost + 1) * 2 > cg->capslot) {
		size_t cap = cg->capslot ? cg->capslot * 2 : 1024;
		size_t *ns = calloc(cap, sizeof(*ns));
		if (!ns)
			return NULL;
		for (size_t i = 0; i < cg->capslot; i++) {
			if (!cg->slot[i])
				continue;
			size_t k = cg->slot[i] - 1,
			       j = mix(cg->cobj[k], cg->cfn[k], cg->caddr[k]) & (cap - 1);
			while (ns[j])
				j = (j + 1) & (cap - 1);
			ns[j] = cg->slot[i];
		}
		free(cg->slot);
		cg->slot = ns;
		cg->capslot = cap;
	}
	size_t j = mix(obj, fn, addr) & (cg->capslot - 1);
	while (cg->slot[j]) {
		size_t k = cg->slot[j] - 1;
		if (cg->cobj[k] == obj && cg->cfn[k] == fn && cg->caddr[k] == addr)
			return &cg->cval[k * cg->nevents];
		j = (j + 1) & (cg->capslot - 1);
	}
	if (cg->ncost == cg->capcost) {
		size_t cap = cg->capcost ? cg->capcost * 2 : 1024;
		const char **no = realloc(cg->cobj, cap * sizeof(*no));
		if (!no)
			return NULL;
		cg->cobj = no;
		const char **nf = realloc(cg->cfn, cap * sizeof(*nf));
		if (!nf)
			return NULL;
		cg->cfn = nf;
		uint64_t *na = realloc(cg->caddr, cap * sizeof(*na));
		if (!na)
			return NULL;
		cg->caddr = na;
		uint64_t *nv = realloc(cg->cval, cap * cg->nevents * sizeof(*nv));
		if (!nv)
			return NULL;
		cg->cval = nv;
		cg->capcost = cap;
	}
	size_t k = cg->ncost++;
	cg->cobj[k] = obj;
	cg->cfn[k] = fn;
	cg->caddr[k] = addr;
	memset(&cg->cval[k * cg->nevents], 0, cg->nevents * sizeof(uint64_t));
	cg->slot[j] = k + 1;
	return &cg->cval[k * cg->nevents];
}

/* "events: Ir Dr ..." (the same list again in a later part is fine). */
static int events_line(struct parser *p, const char *s, const char *e)
{
	struct pmon_callgrind *cg = p->cg;
	char *ev[MAX_EVENTS];
	size_t n = 0;

	for (;;) {
		skip_blanks(&s, e);
		if (s == e)
			break;
		const char *w = s;
		while (s < e && *s != ' ' && *s != '\t')
			s++;
		if (n == MAX_EVENTS)
			return perr(p, "too many events");
		if (!(ev[n++] = store(cg, w, (size_t)(s - w))))
			return -ENOMEM;
	}
	if (!n)
		return perr(p, "'events:' names no event");
	if (p->have_events) {
		bool same = n == cg->nevents;
		for (size_t i = 0; same && i < n; i++)
			same = !strcmp(ev[i], cg->event[i]);
		if (!same)
			return perr(p, "'events:' differs from the first part's");
		return 0;
	}
	memcpy(cg->event, ev, n * sizeof(*ev));
	cg->nevents = n;
	p->have_events = true;
	return 0;
}

static int positions_line(struct parser *p, const char *s, const char *e)
{
	unsigned n = 0;
	int instr = -1;

	for (;;) {
		skip_blanks(&s, e);
		if (s == e)
			break;
		const char *w = s;
		while (s < e && *s != ' ' && *s != '\t')
			s++;
		if (n == MAX_POSITIONS)
			return perr(p, "too many positions");
		if ((size_t)(s - w) == 5 && !memcmp(w, "instr", 5))
			instr = (int)n;
		n++;
	}
	if (!n)
		return perr(p, "'positions:' names no position");
	if (p->cg->ncost && (n != p->npos || instr != p->instr_pos))
		return perr(p, "'positions:' changes after costs");
	p->npos = n;
	p->instr_pos = instr;
	memset(p->last, 0, sizeof(p->last));
	return 0;
}

/* A call site: the caller (the current object and function), the call
 * instruction, the callee ("cfn="), the calls and their inclusive cost of
 * the first event. */
static int call_add(struct parser *p, uint64_t addr, uint64_t inclusive)
{
	struct pmon_callgrind *cg = p->cg;

	if (!p->cur_cfn) /* no callee named: a call site with nothing to chain */
		return 0;
	if (PMON_GROW(&cg->calls, &cg->capcalls, cg->ncalls + 1))
		return -ENOMEM;
	cg->calls[cg->ncalls++] = (struct pmon_callgrind_call){
		.obj = p->cur_ob ? p->cur_ob : "???",
		.fn = p->cur_fn ? p->cur_fn : "???",
		.addr = addr,
		.callee = p->cur_cfn,
		.count = p->call_count,
		.inclusive = inclusive,
	};
	return 0;
}

/* A cost line: the positions, then up to one count per event. */
static int cost_line(struct parser *p, const char *s, const char *e)
{
	struct pmon_callgrind *cg = p->cg;
	uint64_t pos[MAX_POSITIONS], v[MAX_EVENTS] = { 0 };
	size_t nv = 0;

	if (!p->have_events)
		return perr(p, "a cost line before 'events:'");
	for (unsigned i = 0; i < p->npos; i++) {
		skip_blanks(&s, e);
		if (!position(&s, e, p->last[i], &pos[i]))
			return perr(p, "a cost line's position is not a number, +N, -N or *");
		if (s < e && *s != ' ' && *s != '\t')
			return perr(p, "a cost line's position is followed by garbage");
	}
	for (;;) {
		skip_blanks(&s, e);
		if (s == e)
			break;
		if (nv == cg->nevents)
			return perr(p, "a cost line has more counts than 'events:' names");
		if (!number(&s, e, &v[nv++]) || (s < e && *s != ' ' && *s != '\t'))
			return perr(p, "a cost line's count is not a number");
	}
	memcpy(p->last, pos, p->npos * sizeof(pos[0]));
	if (p->after_calls) { /* the call's inclusive cost: not self cost */
		p->after_calls = false;
		return call_add(p, p->instr_pos >= 0 ? pos[p->instr_pos] : 0, nv ? v[0] : 0);
	}
	if (!p->cur_ob)
		p->cur_ob = "???";
	if (!p->cur_fn)
		p->cur_fn = "???";
	uint64_t *c = cost_of(cg, p->cur_ob, p->cur_fn, p->instr_pos >= 0 ? pos[p->instr_pos] : 0);
	if (!c)
		return -ENOMEM;
	if (!cg->nparts && part_new(cg))
		return -ENOMEM;
	struct part *pt = &cg->parts[cg->nparts - 1];
	if (!pt->v && !(pt->v = calloc(cg->nevents, sizeof(uint64_t))))
		return -ENOMEM;
	for (size_t i = 0; i < nv; i++) {
		c[i] += v[i]; /* wraps only past 2^64 events */
		pt->v[i] += v[i];
	}
	return 0;
}

/* "calls=COUNT TARGET-POSITIONS": checked, then the next cost line is skipped. */
static int calls_line(struct parser *p, const char *s, const char *e)
{
	uint64_t v;

	skip_blanks(&s, e);
	if (!number(&s, e, &v))
		return perr(p, "'calls=' has no call count");
	p->call_count = v;
	for (unsigned i = 0; i < p->npos; i++) {
		skip_blanks(&s, e);
		if (s == e)
			break; /* older files leave the target's line out */
		if (!position(&s, e, p->last[i], &v))
			return perr(p, "'calls=' target is not a position");
	}
	p->after_calls = true;
	return 0;
}

static bool prefix(const char *s, const char *e, const char *pre, const char **rest)
{
	size_t n = strlen(pre);

	if ((size_t)(e - s) < n || memcmp(s, pre, n))
		return false;
	*rest = s + n;
	return true;
}

static int line(struct parser *p, const char *s, const char *e)
{
	struct pmon_callgrind *cg = p->cg;
	const char *r, *name;
	uint64_t v;
	int err;

	while (e > s && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
		e--;
	if (s == e || *s == '#')
		return 0;
	if (is_digit(*s) || *s == '+' || *s == '-' || *s == '*')
		return cost_line(p, s, e);
	if (p->after_calls)
		return perr(p, "'calls=' is not followed by a cost line");
	if (prefix(s, e, "events:", &r))
		return events_line(p, r, e);
	if (prefix(s, e, "positions:", &r))
		return positions_line(p, r, e);
	if (prefix(s, e, "pid:", &r)) {
		skip_blanks(&r, e);
		if (!number(&r, e, &v) || v > UINT32_MAX)
			return perr(p, "'pid:' is not a process id");
		cg->pid = (uint32_t)v;
		return 0;
	}
	if (prefix(s, e, "part:", &r))
		return part_new(cg);
	if (prefix(s, e, "desc: Trigger:", &r)) {
		skip_blanks(&r, e);
		if (!cg->nparts && part_new(cg))
			return -ENOMEM;
		char *t = store(cg, r, (size_t)(e - r));
		if (!t)
			return -ENOMEM;
		cg->parts[cg->nparts - 1].trigger = t;
		return 0;
	}
	if (prefix(s, e, "cmd:", &r)) {
		skip_blanks(&r, e);
		if (!cg->cmd && !(cg->cmd = store(cg, r, (size_t)(e - r))))
			return -ENOMEM;
		return 0;
	}
	if (prefix(s, e, "ob=", &r)) {
		if ((err = name_value(p, &cg->ob, r, e, &name)))
			return err;
		p->cur_ob = name;
		return 0;
	}
	if (prefix(s, e, "cob=", &r))
		return name_value(p, &cg->ob, r, e, &name);
	if (prefix(s, e, "fl=", &r) || prefix(s, e, "fi=", &r) || prefix(s, e, "fe=", &r) ||
	    prefix(s, e, "cfi=", &r) || prefix(s, e, "cfl=", &r))
		return name_value(p, &cg->fl, r, e, &name);
	if (prefix(s, e, "fn=", &r)) {
		if ((err = name_value(p, &cg->fn, r, e, &name)))
			return err;
		p->cur_fn = name;
		return 0;
	}
	if (prefix(s, e, "cfn=", &r)) {
		if ((err = name_value(p, &cg->fn, r, e, &name)))
			return err;
		p->cur_cfn = name;
		return 0;
	}
	if (prefix(s, e, "calls=", &r))
		return calls_line(p, r, e);
	/* Header lines (version, creator, part, desc, summary, totals, event)
	 * and jump=/jcnd= (only with --collect-jumps) carry nothing we use. */
	for (const char *q = s; q < e; q++) {
		if (*q == ':' || *q == '=')
			return 0;
		if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || is_digit(*q) ||
		      *q == '_' || *q == '-'))
			break;
	}
	return perr(p, "not a line of callgrind's format");
}

int pmon_callgrind__parse(const char *buf, size_t len, const char *name,
			  struct pmon_callgrind **out)
{
	struct pmon_callgrind *cg = calloc(1, sizeof(*cg));
	struct parser p = {
		.cg = cg, .name = name ? name : "callgrind output", .npos = 1, .instr_pos = 0
	};
	int err = 0;

	*out = NULL;
	if (!cg)
		return -ENOMEM;
	/* Without a "positions:" line, the format's default is "line". */
	p.instr_pos = -1;
	for (size_t off = 0; off < len && !err;) {
		const char *s = buf + off, *nl = memchr(s, '\n', len - off);
		const char *e = nl ? nl : buf + len;
		p.lineno++;
		err = line(&p, s, e);
		off = (size_t)(e - buf) + 1;
	}
	if (!err && p.after_calls)
		err = perr(&p, "the file ends after 'calls=' without its cost line");
	if (!err && !p.have_events)
		err = pmon__err(-PMON_ERRNO__PARSE, "%s: no 'events:' line: not callgrind output",
				p.name);
	if (err) {
		pmon_callgrind__free(cg);
		return err;
	}
	*out = cg;
	return 0;
}

void pmon_callgrind__free(struct pmon_callgrind *cg)
{
	if (!cg)
		return;
	for (size_t i = 0; i < cg->nstrs; i++)
		free(cg->strs[i]);
	free(cg->strs);
	free(cg->ob.by_id), free(cg->fl.by_id), free(cg->fn.by_id);
	free(cg->cobj), free(cg->cfn), free(cg->caddr), free(cg->cval), free(cg->slot);
	for (size_t i = 0; i < cg->nparts; i++)
		free(cg->parts[i].v);
	free(cg->parts);
	free(cg->calls);
	free(cg);
}

size_t pmon_callgrind__nevents(const struct pmon_callgrind *cg)
{
	return cg->nevents;
}

const char *pmon_callgrind__event(const struct pmon_callgrind *cg, size_t i)
{
	return i < cg->nevents ? cg->event[i] : NULL;
}

uint32_t pmon_callgrind__pid(const struct pmon_callgrind *cg)
{
	return cg->pid;
}

const char *pmon_callgrind__cmd(const struct pmon_callgrind *cg)
{
	return cg->cmd ? cg->cmd : "";
}

size_t pmon_callgrind__ncosts(const struct pmon_callgrind *cg)
{
	return cg->ncost;
}

void pmon_callgrind__cost(const struct pmon_callgrind *cg, size_t i,
			  struct pmon_callgrind_cost *out)
{
	*out = (struct pmon_callgrind_cost){ 0 };
	if (i >= cg->ncost)
		return;
	out->obj = cg->cobj[i];
	out->fn = cg->cfn[i];
	out->addr = cg->caddr[i];
	out->v = &cg->cval[i * cg->nevents];
}

int pmon_callgrind__total(const struct pmon_callgrind *cg, const char *expr, const char *fn,
			  uint64_t *out)
{
	size_t idx[MAX_EVENTS], n = 0;
	const char *s = expr;

	*out = 0;
	while (*s) {
		size_t len = strcspn(s, "+");
		size_t i = 0;
		while (i < cg->nevents &&
		       (strlen(cg->event[i]) != len || strncmp(cg->event[i], s, len)))
			i++;
		if (i == cg->nevents || n == MAX_EVENTS)
			return pmon__err(-ENOENT, "the simulation did not collect '%.*s'", (int)len,
					 s);
		idx[n++] = i;
		s += len;
		if (*s == '+')
			s++;
	}
	for (size_t k = 0; k < cg->ncost; k++) {
		if (fn && strcmp(cg->cfn[k], fn))
			continue;
		for (size_t i = 0; i < n; i++)
			*out += cg->cval[k * cg->nevents + idx[i]];
	}
	return 0;
}

size_t pmon_callgrind__nparts(const struct pmon_callgrind *cg)
{
	return cg->nparts ? cg->nparts : 1;
}

void pmon_callgrind__part(const struct pmon_callgrind *cg, size_t i,
			  struct pmon_callgrind_part *out)
{
	static const uint64_t zero[MAX_EVENTS];

	*out = (struct pmon_callgrind_part){ "", zero };
	if (i >= cg->nparts)
		return;
	out->trigger = cg->parts[i].trigger;
	if (cg->parts[i].v)
		out->v = cg->parts[i].v;
}

size_t pmon_callgrind__ncalls(const struct pmon_callgrind *cg)
{
	return cg->ncalls;
}

void pmon_callgrind__call(const struct pmon_callgrind *cg, size_t i,
			  struct pmon_callgrind_call *out)
{
	*out = cg->calls[i];
}
