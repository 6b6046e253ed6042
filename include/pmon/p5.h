/* SPDX-License-Identifier: MIT */
/*
 * The Pentium (P5) counter model of SDM Vol. 3B 18.26 (the third seed): two
 * 40-bit counters CTR0/CTR1 (MSR 12H, 13H) controlled by the 32-bit CESR
 * (MSR 11H), next to the TSC (MSR 10H). Per counter the CESR holds a 6-bit
 * event select (ES0 bits 0-5, ES1 bits 16-21), a 3-bit counter control (CC0
 * bits 6-8, CC1 bits 22-24) and a pin control flag (PC0 bit 9, PC1 bit 25).
 */
#ifndef PMON_P5_H
#define PMON_P5_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pmon/common.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PMON_P5_MSR_TSC 0x10
#define PMON_P5_MSR_CESR 0x11
#define PMON_P5_MSR_CTR0 0x12
#define PMON_P5_MSR_CTR1 0x13
#define PMON_P5_CTR_WIDTH 40

/* Counter control (CC) values. Bit 2 selects counting clocks (duration)
 * instead of events; bits 1:0 select the privilege levels. */
enum pmon_p5_cc {
	PMON_P5_CC_OFF = 0, /* count nothing */
	PMON_P5_CC_EVENTS_CPL012 = 1, /* events at CPL 0, 1, 2 */
	PMON_P5_CC_EVENTS_CPL3 = 2, /* events at CPL 3 */
	PMON_P5_CC_EVENTS_ALL = 3, /* events at any CPL */
	PMON_P5_CC_OFF_CLOCKS = 4, /* count nothing (clocks mode) */
	PMON_P5_CC_CLOCKS_CPL012 = 5, /* clocks at CPL 0, 1, 2 */
	PMON_P5_CC_CLOCKS_CPL3 = 6, /* clocks at CPL 3 */
	PMON_P5_CC_CLOCKS_ALL = 7, /* clocks at any CPL */
};

struct pmon_p5_ctr {
	unsigned event; /* ES: 0..0x3f */
	unsigned cc; /* enum pmon_p5_cc */
	bool pc_overflow; /* PC: 1 = PMx pin signals overflow, 0 = each increment */
};

struct pmon_p5_cesr {
	struct pmon_p5_ctr ctr[2];
};

struct pmon_p5_event {
	unsigned code;
	const char *name; /* e.g. "DATA_READ_MISS" */
	const char *desc;
	bool duration; /* counts clocks while a condition holds */
	bool mmx_only; /* Pentium with MMX technology (P55C) only */
};

/**
 * pmon_p5_cesr_encode() - pack two counter settings into a CESR value.
 * Return: 0 with *@cesr set, or -EINVAL (detail names the field) when an
 * event exceeds 6 bits or a CC exceeds 3 bits.
 */
PMON_API int pmon_p5_cesr_encode(const struct pmon_p5_cesr *cfg, uint32_t *cesr);

/**
 * pmon_p5_cesr_decode() - unpack a CESR value.
 * Return: the reserved bits (10-15, 26-31) that are set in @cesr; 0 if none.
 */
PMON_API uint32_t pmon_p5_cesr_decode(uint32_t cesr, struct pmon_p5_cesr *cfg);

/**
 * pmon_p5_event() - the Table A-19 event with @code on counter @ctr (0 or 1).
 * Some P55C codes count different events on CTR0 and CTR1.
 * Return: a static entry, or NULL for a reserved or unknown code.
 */
PMON_API const struct pmon_p5_event *pmon_p5_event(unsigned code, unsigned ctr);

/** pmon_p5_event_by_name() - look up by name (case-insensitive); *@ctr_mask
 * gets the counters it exists on (bit 0 CTR0, bit 1 CTR1). NULL if unknown. */
PMON_API const struct pmon_p5_event *pmon_p5_event_by_name(const char *name, unsigned *ctr_mask);

/** pmon_p5_cc_name() - "events at CPL 3", "clocks at any CPL", ... */
PMON_API const char *pmon_p5_cc_name(unsigned cc);

/**
 * pmon_p5_cesr_describe() - one line per counter, e.g.
 * "CTR0: event 03H DATA_READ_MISS, events at CPL 3, PM0 pin on increment".
 * Return: the length snprintf() would have written.
 */
PMON_API int pmon_p5_cesr_describe(uint32_t cesr, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
