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

int pmon_sample__parse(const void *rec, size_t len, uint64_t t, uint64_t regs_user,
		       struct pmon_sample *s)
{
	struct perf_event_header h;
	struct cursor c;
	uint64_t v = 0;

	memset(s, 0, sizeof(*s));
	if (len < sizeof(h))
		return -EINVAL;
	memcpy(&h, rec, sizeof(h));
	if (h.type != PERF_RECORD_SAMPLE || h.size > len || h.size < sizeof(h))
		return -EINVAL;
	/* Their sizes depend on read_format and branch_sample_type. */
	if (t & (PERF_SAMPLE_READ | PERF_SAMPLE_BRANCH_STACK))
		return -ENOTSUP;
	c = (struct cursor){ (const uint8_t *)rec + sizeof(h), h.size - sizeof(h) };
	if (t & PERF_SAMPLE_IDENTIFIER && take_u64(&c, &s->id))
		return -EINVAL;
	if (t & PERF_SAMPLE_IP && take_u64(&c, &s->ip))
		return -EINVAL;
	if (t & PERF_SAMPLE_TID) {
		if (take_u64(&c, &v))
			return -EINVAL;
		s->pid = (uint32_t)v; /* { u32 pid, tid; } little-endian */
		s->tid = (uint32_t)(v >> 32);
	}
	if (t & PERF_SAMPLE_TIME && take_u64(&c, &s->time))
		return -EINVAL;
	if (t & PERF_SAMPLE_ADDR && take_u64(&c, &s->addr))
		return -EINVAL;
	if (t & PERF_SAMPLE_ID) {
		if (take_u64(&c, &v))
			return -EINVAL;
		if (!(t & PERF_SAMPLE_IDENTIFIER))
			s->id = v; /* the same id twice when both are set */
	}
	if (t & PERF_SAMPLE_STREAM_ID && take_u64(&c, &s->stream_id))
		return -EINVAL;
	if (t & PERF_SAMPLE_CPU) {
		if (take_u64(&c, &v))
			return -EINVAL;
		s->cpu = (uint32_t)v; /* { u32 cpu, res; } */
	}
	if (t & PERF_SAMPLE_PERIOD && take_u64(&c, &s->period))
		return -EINVAL;
	if (t & PERF_SAMPLE_CALLCHAIN &&
	    (take_u64(&c, &s->nr) || take_array(&c, s->nr, 8, &s->chain)))
		return -EINVAL;
	if (t & PERF_SAMPLE_RAW) {
		/* { u32 size; char data[size]; } padded by the kernel to 8 bytes */
		uint32_t raw;
		if (c.left < 4)
			return -EINVAL;
		memcpy(&raw, c.p, 4);
		c.p += 4, c.left -= 4;
		if (take_array(&c, raw, 1, &s->raw))
			return -EINVAL;
		s->raw_size = raw;
	}
	if (t & PERF_SAMPLE_REGS_USER) {
		if (take_u64(&c, &s->abi))
			return -EINVAL;
		if (s->abi) { /* PERF_SAMPLE_REGS_ABI_NONE: no registers follow */
			s->nregs = (uint64_t)__builtin_popcountll(regs_user);
			if (take_array(&c, s->nregs, 8, &s->regs))
				return -EINVAL;
		}
	}
	if (t & PERF_SAMPLE_STACK_USER) {
		/* { u64 size; char data[size]; u64 dyn_size; }, dyn_size only when
		 * size != 0 (perf_output_sample_ustack()) */
		if (take_u64(&c, &s->stack_size))
			return -EINVAL;
		if (s->stack_size) {
			if (take_array(&c, s->stack_size, 1, &s->stack) ||
			    take_u64(&c, &s->stack_dyn))
				return -EINVAL;
			if (s->stack_dyn > s->stack_size)
				s->stack_dyn = s->stack_size;
		}
	}
	return 0;
}
