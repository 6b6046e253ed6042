// SPDX-License-Identifier: MIT
/*
 * The one PERF_RECORD_SAMPLE decoder of libpmon (pmon/sample.h): the
 * fields in the order the kernel writes them (Linux
 * kernel/events/core.c, perf_output_sample(); the layout comment of
 * PERF_RECORD_SAMPLE in include/uapi/linux/perf_event.h). Reports, top and
 * anything else reading samples share it, so they agree on every bit.
 *
 * Every bound is written as "what is left", never as "pointer + length",
 * so a length near 2^64 in a crafted record cannot wrap past the check.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

#include <pmon/sample.h>

#include "sample/reader.h"

struct cursor {
	const uint8_t *p;
	size_t left;
};

static int take_u64(struct cursor *c, uint64_t *v)
{
	if (c->left < 8)
		return -EINVAL;
	memcpy(v, c->p, 8);
	c->p += 8;
	c->left -= 8;
	return 0;
}

/* @n items of @size bytes; *@at points at them. */
static int take_array(struct cursor *c, uint64_t n, size_t size, const uint8_t **at)
{
	if (n > c->left / size)
		return -EINVAL;
	*at = c->p;
	c->p += n * size;
	c->left -= n * size;
	return 0;
}

/* { u64 abi; u64 regs[weight(mask)]; }: no registers when abi is 0 (NONE). */
static int take_regs(struct cursor *c, uint64_t mask, uint64_t *abi, uint64_t *nregs,
		     const uint8_t **regs)
{
	if (take_u64(c, abi))
		return -EINVAL;
	if (!*abi)
		return 0;
	*nregs = (uint64_t)__builtin_popcountll(mask);
	return take_array(c, *nregs, 8, regs);
}

/* { u64 size; char data[size]; } */
static int take_sized(struct cursor *c, uint64_t *size, const uint8_t **at)
{
	return take_u64(c, size) || take_array(c, *size, 1, at) ? -EINVAL : 0;
}

/*
 * struct read_format (include/uapi/linux/perf_event.h): one value, or with
 * PERF_FORMAT_GROUP a count and one value per member; the times once, the
 * id and lost count per value, each when its read_format bit is set.
 */
static int take_read(struct cursor *c, uint64_t rf, struct pmon__sample_ext *x)
{
	uint64_t per = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PMON__FORMAT_LOST);
	uint64_t times =
		!!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) + !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
	uint64_t nr = 1;
	const uint8_t *start = c->p;

	if (rf & PERF_FORMAT_GROUP && take_u64(c, &nr))
		return -EINVAL;
	/* nr is outside input: nr * per must not wrap */
	if (nr > c->left / 8 / per || times > c->left / 8 - nr * per)
		return -EINVAL;
	x->read_nr = nr;
	c->p += 8 * (times + nr * per);
	c->left -= 8 * (times + nr * per);
	x->read = start;
	x->read_size = (size_t)(c->p - start);
	return 0;
}

/* { u64 nr; { u64 hw_idx; } && HW_INDEX; { u64 from, to, flags } lbr[nr];
 *   { u64 counters[nr]; } && BRANCH_COUNTERS (Linux 6.8) } */
static int take_branches(struct cursor *c, uint64_t bst, struct pmon__sample_ext *x)
{
	if (take_u64(c, &x->branch_nr))
		return -EINVAL;
	if (bst & PERF_SAMPLE_BRANCH_HW_INDEX && take_u64(c, &x->branch_hw_idx))
		return -EINVAL;
	if (take_array(c, x->branch_nr, 24, &x->branches))
		return -EINVAL;
	if (bst & PMON__SAMPLE_BRANCH_COUNTERS &&
	    take_array(c, x->branch_nr, 8, &x->branch_counters))
		return -EINVAL;
	return 0;
}

/* The fields up to PERF_SAMPLE_PERIOD: fixed sizes. */
static int parse_head(struct cursor *c, uint64_t t, struct pmon_sample *s)
{
	uint64_t v = 0;

	if (t & PERF_SAMPLE_IDENTIFIER && take_u64(c, &s->id))
		return -EINVAL;
	if (t & PERF_SAMPLE_IP && take_u64(c, &s->ip))
		return -EINVAL;
	if (t & PERF_SAMPLE_TID) {
		if (take_u64(c, &v))
			return -EINVAL;
		s->pid = (uint32_t)v; /* { u32 pid, tid; } little-endian */
		s->tid = (uint32_t)(v >> 32);
	}
	if (t & PERF_SAMPLE_TIME && take_u64(c, &s->time))
		return -EINVAL;
	if (t & PERF_SAMPLE_ADDR && take_u64(c, &s->addr))
		return -EINVAL;
	if (t & PERF_SAMPLE_ID) {
		if (take_u64(c, &v))
			return -EINVAL;
		if (!(t & PERF_SAMPLE_IDENTIFIER))
			s->id = v; /* the same id twice when both are set */
	}
	if (t & PERF_SAMPLE_STREAM_ID && take_u64(c, &s->stream_id))
		return -EINVAL;
	if (t & PERF_SAMPLE_CPU) {
		if (take_u64(c, &v))
			return -EINVAL;
		s->cpu = (uint32_t)v; /* { u32 cpu, res; } */
	}
	if (t & PERF_SAMPLE_PERIOD && take_u64(c, &s->period))
		return -EINVAL;
	return 0;
}

/* READ to STACK_USER: the sizes pmon_sample__parse() always decoded, and
 * the two that depend on more of the attr. */
static int parse_middle(struct cursor *c, const struct pmon__sample_fmt *f, struct pmon_sample *s,
			struct pmon__sample_ext *x)
{
	uint64_t t = f->sample_type;

	if (t & PERF_SAMPLE_READ && take_read(c, f->read_format, x))
		return -EINVAL;
	if (t & PERF_SAMPLE_CALLCHAIN &&
	    (take_u64(c, &s->nr) || take_array(c, s->nr, 8, &s->chain)))
		return -EINVAL;
	if (t & PERF_SAMPLE_RAW) {
		/* { u32 size; char data[size]; } padded by the kernel to 8 bytes */
		uint32_t raw;
		if (c->left < 4)
			return -EINVAL;
		memcpy(&raw, c->p, 4);
		c->p += 4, c->left -= 4;
		if (take_array(c, raw, 1, &s->raw))
			return -EINVAL;
		s->raw_size = raw;
	}
	if (t & PERF_SAMPLE_BRANCH_STACK && take_branches(c, f->branch_sample_type, x))
		return -EINVAL;
	if (t & PERF_SAMPLE_REGS_USER && take_regs(c, f->regs_user, &s->abi, &s->nregs, &s->regs))
		return -EINVAL;
	if (t & PERF_SAMPLE_STACK_USER) {
		/* { u64 size; char data[size]; u64 dyn_size; }, dyn_size only when
		 * size != 0 (perf_output_sample_ustack()) */
		if (take_u64(c, &s->stack_size))
			return -EINVAL;
		if (s->stack_size) {
			if (take_array(c, s->stack_size, 1, &s->stack) ||
			    take_u64(c, &s->stack_dyn))
				return -EINVAL;
			if (s->stack_dyn > s->stack_size)
				s->stack_dyn = s->stack_size;
		}
	}
	return 0;
}

/*
 * WEIGHT to AUX, in the order the kernel writes them (perf_output_sample():
 * PHYS_ADDR, CGROUP, DATA_PAGE_SIZE, CODE_PAGE_SIZE, then AUX last; the
 * uapi comment lists AUX before the page sizes and CGROUP not at all).
 */
static int parse_tail(struct cursor *c, const struct pmon__sample_fmt *f,
		      struct pmon__sample_ext *x)
{
	uint64_t t = f->sample_type;

	if (t & (PERF_SAMPLE_WEIGHT | PMON__SAMPLE_WEIGHT_STRUCT) && take_u64(c, &x->weight))
		return -EINVAL;
	if (t & PERF_SAMPLE_DATA_SRC && take_u64(c, &x->data_src))
		return -EINVAL;
	if (t & PERF_SAMPLE_TRANSACTION && take_u64(c, &x->transaction))
		return -EINVAL;
	if (t & PERF_SAMPLE_REGS_INTR &&
	    take_regs(c, f->regs_intr, &x->intr_abi, &x->nregs_intr, &x->regs_intr))
		return -EINVAL;
	if (t & PERF_SAMPLE_PHYS_ADDR && take_u64(c, &x->phys_addr))
		return -EINVAL;
	if (t & PMON__SAMPLE_CGROUP && take_u64(c, &x->cgroup))
		return -EINVAL;
	if (t & PMON__SAMPLE_DATA_PAGE_SIZE && take_u64(c, &x->data_page_size))
		return -EINVAL;
	if (t & PMON__SAMPLE_CODE_PAGE_SIZE && take_u64(c, &x->code_page_size))
		return -EINVAL;
	if (t & PMON__SAMPLE_AUX && take_sized(c, &x->aux_size, &x->aux))
		return -EINVAL;
	return 0;
}

int pmon__sample_parse(const void *rec, size_t len, const struct pmon__sample_fmt *f,
		       struct pmon_sample *s, struct pmon__sample_ext *x)
{
	struct pmon__sample_ext spare;
	struct perf_event_header h;
	struct cursor c;

	memset(s, 0, sizeof(*s));
	if (!x)
		x = &spare;
	memset(x, 0, sizeof(*x));
	if (len < sizeof(h))
		return -EINVAL;
	memcpy(&h, rec, sizeof(h));
	if (h.type != PERF_RECORD_SAMPLE || h.size > len || h.size < sizeof(h))
		return -EINVAL;
	c = (struct cursor){ (const uint8_t *)rec + sizeof(h), h.size - sizeof(h) };
	if (parse_head(&c, f->sample_type, s) || parse_middle(&c, f, s, x) || parse_tail(&c, f, x))
		return -EINVAL;
	return 0;
}

int pmon_sample__parse(const void *rec, size_t len, uint64_t t, uint64_t regs_user,
		       struct pmon_sample *s)
{
	const struct pmon__sample_fmt f = { .sample_type = t, .regs_user = regs_user };

	/* Their sizes depend on read_format and branch_sample_type, which
	 * this call is not given: pmon__sample_parse() is. */
	if (t & (PERF_SAMPLE_READ | PERF_SAMPLE_BRANCH_STACK)) {
		memset(s, 0, sizeof(*s));
		return -ENOTSUP;
	}
	return pmon__sample_parse(rec, len, &f, s, NULL);
}
