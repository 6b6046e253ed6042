/* SPDX-License-Identifier: MIT */
/* The recording file's on-disk layout (docs/pmon-data-format.md), shared by
 * the writer (lib/sample) and the reader (lib/report). Little-endian. */
#ifndef PMON_SAMPLE_DATAFILE_H
#define PMON_SAMPLE_DATAFILE_H

#include <stdint.h>

#define PMON_DATA_MAGIC "PMONDATA"
#define PMON_CHUNK_MAGIC "CHNK" /* payload stored as is */
#define PMON_CHUNKZ_MAGIC "CHNZ" /* payload deflated (zlib's compress2 format), version 2 on */
#define PMON_CHUNKS_MAGIC "CHNS" /* kernel symbols the recording hit, version 2 on */
#define PMON_CHUNK_RAW_MAX (512 * 1024) /* a chunk's records, inflated */
#define PMON_DATA_VERSION 2 /* 1: raw chunks only; the reader takes both */

struct pmon_data_disk_header {
	char magic[8]; /* "PMONDATA" */
	uint32_t version; /* 1 */
	uint32_t header_size; /* sizeof this struct: readers skip what they do not know */
	uint64_t sample_type; /* perf_event_attr.sample_type of the samples */
	uint32_t attr_type;
	uint32_t pad;
	uint64_t attr_config, period, freq;
	char event[96];
	char command[256];
} __attribute__((packed)); /* 408 bytes; version 2 appends the extension below */

struct pmon_data_disk_header_ext {
	uint64_t regs_user; /* sample_regs_user of DWARF-mode samples, else 0 */
	/* Added by issue #27 (header_size 493): a reader takes what header_size holds. */
	uint32_t flags; /* PMON_DATA_SYSTEM_WIDE */
	char hostname[65];
	int64_t captured; /* Unix seconds when recording began */
	/* Added by issue #29 (header_size 749): record -C's CPUs, "0,2-3". */
	char cpus[256];
} __attribute__((packed));

/*
 * perf's x86 register indexes (arch/x86/include/uapi/asm/perf_regs.h) that
 * pmon records for DWARF unwinding: AX BX CX DX SI DI BP SP IP and R8-R15,
 * in the samples in ascending index order.
 */
#define PMON_REGS_USER_X86 0xff01ffULL

struct pmon_data_chunk {
	char magic[4]; /* "CHNK" */
	uint32_t len; /* payload bytes as stored: raw perf records back to back, or deflated */
	uint32_t crc; /* zlib crc32 of the payload as stored */
	uint32_t nrec; /* records in the payload */
} __attribute__((packed));

/*
 * pmon's own record type (perf leaves types from 64 up to user space): a
 * kernel text symbol that a sample or call chain of the recording hit,
 * written from /proc/kallsyms when the recording ends, so the file names
 * its kernel addresses by itself (after a reboot with another KASLR
 * offset, or on another machine). Only in CHNS chunks.
 */
#define PMON_RECORD_KSYM 0x7001

/*
 * pmon's own record (version 2): one sampled event of the recording, with
 * the kernel's ids of its file descriptors, which a sample's
 * PERF_SAMPLE_IDENTIFIER names. Written before any sample.
 */
#define PMON_RECORD_EVENT 0x7002
struct pmon_record_event {
	uint32_t type; /* struct perf_event_header: PMON_RECORD_EVENT */
	uint16_t misc, size;
	uint32_t index, nids;
	uint64_t period, freq; /* "Sample After" N, or frequency mode's Hz */
	uint32_t attr_type, pad;
	uint64_t attr_config;
	char name[64];
	uint64_t ids[]; /* nids */
} __attribute__((packed));
/*
 * pmon's own record: the first of every CHNK/CHNZ chunk, numbering the
 * data chunks from 0, so a reader that skips a damaged stretch between
 * two good chunks knows how many chunks it held (none: junk, nothing
 * lost). Not in CHNS chunks; absent from recordings of older pmon.
 */
#define PMON_RECORD_CHUNK 0x7003
struct pmon_record_chunk {
	uint32_t type; /* struct perf_event_header: PMON_RECORD_CHUNK */
	uint16_t misc, size; /* 16 */
	uint64_t seq;
} __attribute__((packed));
/*
 * pmon's own record: the vDSO's image (the kernel's code every process
 * maps as [vdso]; in no file on disk), copied from the recorder's own
 * mapping when the recording ends, if a [vdso] mapping was recorded: the
 * reader names samples there by its symbols (perf keeps it in its
 * build-id cache for the same reason). Only in CHNS chunks; older readers
 * skip it by its size. The 64-bit vDSO: 32-bit processes map another.
 */
#define PMON_RECORD_VDSO 0x7004
struct pmon_record_vdso {
	uint32_t type; /* struct perf_event_header: PMON_RECORD_VDSO */
	uint16_t misc, size;
	uint64_t len; /* the image's bytes (then padding to 8) */
	uint64_t start; /* where the recorder had it mapped (for reference) */
	uint8_t image[];
} __attribute__((packed));
/*
 * pmon's own record: the tracefs format description of sampled event
 * @index, a tracepoint (events/SYS/NAME/format), after its
 * PMON_RECORD_EVENT and before its samples, so a reader decodes their
 * PERF_SAMPLE_RAW records by field (pmon script's trace field).
 */
#define PMON_RECORD_TPFMT 0x7005
struct pmon_record_tpfmt {
	uint32_t type; /* struct perf_event_header: PMON_RECORD_TPFMT */
	uint16_t misc, size;
	uint32_t index; /* the event's, as in its PMON_RECORD_EVENT */
	uint32_t sys_len; /* bytes of the subsystem's name that follow */
	char text[]; /* the subsystem's name, then the format, NUL-terminated,
			padded to 8 bytes */
} __attribute__((packed));
struct pmon_record_ksym {
	uint32_t type; /* struct perf_event_header: PMON_RECORD_KSYM */
	uint16_t misc, size;
	uint64_t start, end; /* [start, end): up to the next kallsyms symbol */
	char name[]; /* NUL-terminated, padded to 8 bytes */
} __attribute__((packed));

#endif
