// SPDX-License-Identifier: MIT
/*
 * The Pentium CESR (pmon/p5.h): field packing from SDM Vol. 3B 18.26.1 and
 * the event codes of Table A-19 (Pentium, and the Pentium with MMX
 * technology, whose newer codes count different events on CTR0 and CTR1).
 */
#include <errno.h>
#include <stdio.h>
#include <strings.h>

#include "internal.h"
#include <pmon/p5.h>

/* ctr: bit 0 = CTR0, bit 1 = CTR1. */
struct p5_row {
	struct pmon_p5_event ev;
	unsigned ctr;
};

#define EV(code, ctr, name, dur, mmx, desc)                                                        \
	{                                                                                          \
		{ code, name, desc, dur, mmx }, ctr                                                \
	}

/* SDM Vol. 3B Table A-19 (Pentium processor events). */
static const struct p5_row p5_events[] = {
	EV(0x00, 3, "DATA_READ", 0, 0, "memory data reads (cache hit and miss)"),
	EV(0x01, 3, "DATA_WRITE", 0, 0, "memory data writes (cache hit and miss), I/O excluded"),
	EV(0x02, 3, "DATA_TLB_MISS", 0, 0, "data TLB misses"),
	EV(0x03, 3, "DATA_READ_MISS", 0, 0, "memory reads that miss the data cache"),
	EV(0x04, 3, "DATA_WRITE_MISS", 0, 0, "memory writes that miss the data cache"),
	EV(0x05, 3, "WRITE_HIT_TO_M_OR_E_STATE_LINES", 0, 0, "write hits to M- or E-state lines"),
	EV(0x06, 3, "DATA_CACHE_LINES_WRITTEN_BACK", 0, 0, "dirty lines written back"),
	EV(0x07, 3, "EXTERNAL_SNOOPS", 0, 0, "accepted external snoops"),
	EV(0x08, 3, "EXTERNAL_DATA_CACHE_SNOOP_HITS", 0, 0,
	   "external snoops that hit the data cache"),
	EV(0x09, 3, "MEMORY_ACCESSES_IN_BOTH_PIPES", 0, 0,
	   "data memory accesses paired in both pipes"),
	EV(0x0a, 3, "BANK_CONFLICTS", 0, 0, "data cache bank conflicts"),
	EV(0x0b, 3, "MISALIGNED_DATA_MEMORY_OR_IO_REFERENCES", 0, 0,
	   "misaligned memory or I/O accesses"),
	EV(0x0c, 3, "CODE_READ", 0, 0, "instruction reads"),
	EV(0x0d, 3, "CODE_TLB_MISS", 0, 0, "instruction reads that miss the code TLB"),
	EV(0x0e, 3, "CODE_CACHE_MISS", 0, 0, "instruction reads that miss the code cache"),
	EV(0x0f, 3, "ANY_SEGMENT_REGISTER_LOADED", 0, 0, "segment register loads"),
	EV(0x12, 3, "BRANCHES", 0, 0, "taken and not-taken branches"),
	EV(0x13, 3, "BTB_HITS", 0, 0, "branch target buffer hits"),
	EV(0x14, 3, "TAKEN_BRANCH_OR_BTB_HIT", 0, 0, "taken branches or BTB hits"),
	EV(0x15, 3, "PIPELINE_FLUSHES", 0, 0, "pipeline flushes"),
	EV(0x16, 3, "INSTRUCTIONS_EXECUTED", 0, 0, "instructions executed (up to two per clock)"),
	EV(0x17, 3, "INSTRUCTIONS_EXECUTED_V_PIPE", 0, 0,
	   "instructions executed in the V pipe (paired)"),
	EV(0x18, 3, "BUS_CYCLE_DURATION", 1, 0, "clocks while a bus cycle is in progress"),
	EV(0x19, 3, "WRITE_BUFFER_FULL_STALL_DURATION", 1, 0,
	   "clocks stalled on full write buffers"),
	EV(0x1a, 3, "WAITING_FOR_DATA_MEMORY_READ_STALL_DURATION", 1, 0,
	   "clocks stalled on data memory reads"),
	EV(0x1b, 3, "STALL_ON_WRITE_TO_AN_E_OR_M_STATE_LINE", 1, 0,
	   "clocks stalled on writes to E/M lines"),
	EV(0x1c, 3, "LOCKED_BUS_CYCLE", 0, 0, "locked bus cycles"),
	EV(0x1d, 3, "IO_READ_OR_WRITE_CYCLE", 0, 0, "bus cycles to I/O space"),
	EV(0x1e, 3, "NONCACHEABLE_MEMORY_READS", 0, 0, "noncacheable memory read bus cycles"),
	EV(0x1f, 3, "PIPELINE_AGI_STALLS", 0, 0, "address generation interlock stalls"),
	EV(0x22, 3, "FLOPS", 0, 0, "floating-point operations"),
	EV(0x23, 3, "BREAKPOINT_MATCH_DR0", 0, 0, "matches on the DR0 breakpoint"),
	EV(0x24, 3, "BREAKPOINT_MATCH_DR1", 0, 0, "matches on the DR1 breakpoint"),
	EV(0x25, 3, "BREAKPOINT_MATCH_DR2", 0, 0, "matches on the DR2 breakpoint"),
	EV(0x26, 3, "BREAKPOINT_MATCH_DR3", 0, 0, "matches on the DR3 breakpoint"),
	EV(0x27, 3, "HARDWARE_INTERRUPTS", 0, 0, "taken INTR and NMI interrupts"),
	EV(0x28, 3, "DATA_READ_OR_WRITE", 0, 0, "memory data reads and/or writes"),
	EV(0x29, 3, "DATA_READ_MISS_OR_WRITE_MISS", 0, 0,
	   "data reads and/or writes that miss the cache"),
	/* Pentium with MMX technology (P55C) only; CTR0 and CTR1 differ. */
	EV(0x2a, 1, "BUS_OWNERSHIP_LATENCY", 1, 1, "clocks from bus ownership request to grant"),
	EV(0x2a, 2, "BUS_OWNERSHIP_TRANSFERS", 0, 1, "bus ownership transfers"),
	EV(0x2b, 1, "MMX_INSTRUCTIONS_EXECUTED_U_PIPE", 0, 1,
	   "MMX instructions executed in the U pipe"),
	EV(0x2b, 2, "MMX_INSTRUCTIONS_EXECUTED_V_PIPE", 0, 1,
	   "MMX instructions executed in the V pipe"),
	EV(0x2c, 1, "CACHE_M_STATE_LINE_SHARING", 0, 1,
	   "hits to a line modified by the other processor"),
	EV(0x2c, 2, "CACHE_LINE_SHARING", 0, 1, "shared data lines in the L1 cache"),
	EV(0x2d, 1, "EMMS_INSTRUCTIONS_EXECUTED", 0, 1, "EMMS instructions executed"),
	EV(0x2d, 2, "TRANSITIONS_BETWEEN_MMX_AND_FP", 0, 1,
	   "transitions between MMX and floating-point code"),
	EV(0x2e, 1, "BUS_UTILIZATION_DUE_TO_PROCESSOR_ACTIVITY", 1, 1,
	   "clocks the bus is busy for this processor"),
	EV(0x2e, 2, "WRITES_TO_NONCACHEABLE_MEMORY", 0, 1, "writes to noncacheable memory"),
	EV(0x2f, 1, "SATURATING_MMX_INSTRUCTIONS_EXECUTED", 0, 1,
	   "saturating MMX instructions executed"),
	EV(0x2f, 2, "SATURATIONS_PERFORMED", 0, 1, "MMX instructions whose result saturated"),
	EV(0x30, 1, "CYCLES_NOT_IN_HALT_STATE", 1, 1, "clocks not halted by HLT"),
	EV(0x30, 2, "DATA_CACHE_TLB_MISS_STALL_DURATION", 1, 1,
	   "clocks stalled on a data TLB miss"),
	EV(0x31, 1, "MMX_INSTRUCTION_DATA_READS", 0, 1, "MMX instruction data reads"),
	EV(0x31, 2, "MMX_INSTRUCTION_DATA_READ_MISSES", 0, 1, "MMX instruction data read misses"),
	EV(0x32, 1, "FLOATING_POINT_STALLS_DURATION", 1, 1,
	   "clocks stalled on a floating-point freeze"),
	EV(0x32, 2, "TAKEN_BRANCHES", 0, 1, "taken branches"),
	EV(0x33, 1, "D1_STARVATION_AND_FIFO_IS_EMPTY", 0, 1, "D1 stage issued nothing: FIFO empty"),
	EV(0x33, 2, "D1_STARVATION_AND_ONLY_ONE_INSTRUCTION_IN_FIFO", 0, 1,
	   "D1 stage issued one instruction"),
	EV(0x34, 1, "MMX_INSTRUCTION_DATA_WRITES", 0, 1, "MMX instruction data writes"),
	EV(0x34, 2, "MMX_INSTRUCTION_DATA_WRITE_MISSES", 0, 1, "MMX instruction data write misses"),
	EV(0x35, 1, "PIPELINE_FLUSHES_DUE_TO_WRONG_BRANCH_PREDICTIONS", 0, 1,
	   "flushes on mispredicted branches (E or WB stage)"),
	EV(0x35, 2, "PIPELINE_FLUSHES_DUE_TO_WRONG_BRANCH_PREDICTIONS_WB", 0, 1,
	   "flushes on mispredicted branches (WB stage)"),
	EV(0x36, 1, "MISALIGNED_DATA_MEMORY_REFERENCE_ON_MMX_INSTRUCTIONS", 0, 1,
	   "misaligned MMX data references"),
	EV(0x36, 2, "PIPELINE_STALL_FOR_MMX_INSTRUCTION_DATA_MEMORY_READS", 1, 1,
	   "clocks stalled on MMX data reads"),
	EV(0x37, 1, "MISPREDICTED_OR_UNPREDICTED_RETURNS", 0, 1,
	   "returns mispredicted or not predicted"),
	EV(0x37, 2, "PREDICTED_RETURNS", 0, 1, "predicted returns"),
	EV(0x38, 1, "MMX_MULTIPLY_UNIT_INTERLOCK", 1, 1, "clocks stalled on the MMX multiplier"),
	EV(0x38, 2, "MOVD_MOVQ_STORE_STALL_DUE_TO_PREVIOUS_MMX_OPERATION", 1, 1,
	   "clocks a MOVD/MOVQ store waits"),
	EV(0x39, 1, "RETURNS", 0, 1, "returns executed"),
	EV(0x3a, 1, "BTB_FALSE_ENTRIES", 0, 1, "false BTB entries"),
	EV(0x3a, 2, "BTB_MISS_PREDICTION_ON_NOT_TAKEN_BRANCH", 0, 1,
	   "not-taken branches the BTB predicted taken"),
	EV(0x3b, 1, "FULL_WRITE_BUFFER_STALL_DURATION_WHILE_EXECUTING_MMX", 1, 1,
	   "clocks stalled on full write buffers in MMX code"),
	EV(0x3b, 2, "STALL_ON_MMX_INSTRUCTION_WRITE_TO_E_OR_M_STATE_LINE", 1, 1,
	   "clocks MMX writes to E/M lines stall"),
};

int pmon_p5_cesr_encode(const struct pmon_p5_cesr *cfg, uint32_t *cesr)
{
	uint32_t v = 0;

	for (unsigned i = 0; i < 2; i++) {
		const struct pmon_p5_ctr *c = &cfg->ctr[i];

		if (c->event > 0x3f)
			return pmon__err(-EINVAL, "ES%u: event %#x does not fit 6 bits", i,
					 c->event);
		if (c->cc > 7)
			return pmon__err(-EINVAL, "CC%u: %u does not fit 3 bits", i, c->cc);
		v |= (c->event | c->cc << 6 | (uint32_t)c->pc_overflow << 9) << (16 * i);
	}
	*cesr = v;
	return 0;
}

uint32_t pmon_p5_cesr_decode(uint32_t cesr, struct pmon_p5_cesr *cfg)
{
	for (unsigned i = 0; i < 2; i++) {
		uint32_t h = cesr >> (16 * i);

		cfg->ctr[i].event = h & 0x3f;
		cfg->ctr[i].cc = (h >> 6) & 7;
		cfg->ctr[i].pc_overflow = (h >> 9) & 1;
	}
	return cesr & 0xfc00fc00u;
}

const struct pmon_p5_event *pmon_p5_event(unsigned code, unsigned ctr)
{
	if (ctr > 1)
		return NULL;
	for (size_t i = 0; i < PMON_ARRAY_SIZE(p5_events); i++)
		if (p5_events[i].ev.code == code && (p5_events[i].ctr & (1u << ctr)))
			return &p5_events[i].ev;
	return NULL;
}

const struct pmon_p5_event *pmon_p5_event_by_name(const char *name, unsigned *ctr_mask)
{
	for (size_t i = 0; i < PMON_ARRAY_SIZE(p5_events); i++) {
		if (!strcasecmp(p5_events[i].ev.name, name)) {
			if (ctr_mask)
				*ctr_mask = p5_events[i].ctr;
			return &p5_events[i].ev;
		}
	}
	return NULL;
}

const char *pmon_p5_cc_name(unsigned cc)
{
	static const char *const names[8] = {
		"counting disabled",
		"events at CPL 0-2",
		"events at CPL 3",
		"events at any CPL",
		"counting disabled (clocks mode)",
		"clocks at CPL 0-2",
		"clocks at CPL 3",
		"clocks at any CPL",
	};
	return cc < 8 ? names[cc] : "invalid";
}

int pmon_p5_cesr_describe(uint32_t cesr, char *buf, size_t len)
{
	struct pmon_p5_cesr cfg;
	uint32_t rsvd = pmon_p5_cesr_decode(cesr, &cfg);
	int total = 0;

	if (len)
		buf[0] = '\0';
	for (unsigned i = 0; i < 2; i++) {
		const struct pmon_p5_event *e = pmon_p5_event(cfg.ctr[i].event, i);
		size_t off = (size_t)total < len ? (size_t)total : len;
		int n = snprintf(buf + off, len - off,
				 "CTR%u: event %02XH %s, %s, PM%u pin on %s%s", i, cfg.ctr[i].event,
				 e ? e->name : "(reserved)", pmon_p5_cc_name(cfg.ctr[i].cc), i,
				 cfg.ctr[i].pc_overflow ? "overflow" : "increment",
				 i == 0 || rsvd ? "\n" : "");
		if (n < 0)
			return n;
		total += n;
	}
	if (rsvd) {
		size_t off = (size_t)total < len ? (size_t)total : len;
		int n = snprintf(buf + off, len - off, "reserved bits set: %08XH", rsvd);
		if (n < 0)
			return n;
		total += n;
	}
	return total;
}
