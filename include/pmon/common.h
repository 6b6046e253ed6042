/* SPDX-License-Identifier: MIT */
/*
 * Shared definitions of every public pmon header: the export tag and the
 * tri-state used where the hardware cannot always tell.
 */
#ifndef PMON_COMMON_H
#define PMON_COMMON_H

#ifdef __cplusplus
extern "C" {
#endif

/* Symbols of libpmon are hidden unless tagged (libbpf's LIBBPF_API). */
#define PMON_API __attribute__((visibility("default")))

/* An answer that may be unknowable on this machine (an unreadable MSR). */
enum pmon_tristate {
	PMON_NO = 0,
	PMON_YES = 1,
	PMON_UNKNOWN = 2,
};

#ifdef __cplusplus
}
#endif
#endif
