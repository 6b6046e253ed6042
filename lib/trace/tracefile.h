/* SPDX-License-Identifier: MIT */
/*
 * The trace file (docs/trace.md), shared by the writer (lib/trace/trace.c)
 * and the reader (lib/trace/reader.c). Little-endian, as the machine.
 *
 *   header  "PMONTRC1", version, the first TSC/CLOCK_MONOTONIC pair, the
 *           calibrated tick rate, pid, command; then (a header_size that
 *           holds it) the clock snapshot: TSC, CLOCK_MONOTONIC and
 *           CLOCK_BOOTTIME read together
 *   chunks  magic, payload length, CRC-32 of the payload, then the payload:
 *           TCHN  a channel's id and name
 *           TEVT  one thread's records (16 bytes each) and its drop count
 *           TEND  the last TSC/CLOCK_MONOTONIC pair and the total drops
 *           TKEV  kernel events (lib/trace/kernel.c), 32 bytes each, stamped
 *                 by the kernel on the time base of the file's TCLK chunk:
 *                 CLOCK_MONOTONIC (perf's use_clockid), or the perf clock
 *                 where the perf mmap page converts the TSC to it
 *           TCLK  that time base, the page's conversion and the measured
 *                 alignment (version 2; a file without one: CLOCK_MONOTONIC)
 *           TTHR  a hooks' thread's name (and libpmon's writer thread's)
 * Each chunk is one write(): a crash leaves whole chunks and at most one
 * torn one at the end, which the reader detects and skips.
 */
#ifndef PMON_TRACEFILE_H
#define PMON_TRACEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PMON_TRACE_MAGIC "PMONTRC1"
#define PMON_TRACE_VERSION 2 /* 2: TCLK chunks; 1 (no TCLK) still read */
#define PMON_TRACE_VERSION_MIN 1
#define PMON_TRACE_MAX_CHANNELS 4095
/* The longest chunk payload the reader takes: the writers' largest are
 * 4096 records (TEVT 64 KiB, TKEV 128 KiB); a channel's name would need
 * 16 MiB to reach it. A longer length is damage, so a reader holds one
 * chunk of at most this much at a time. */
#define PMON_TRACE_CHUNK_MAX (16u << 20)
/* The tick rate is the program's own clock's, given, not measured: the
 * start/stop clock pairs must not override it. */
#define PMON_TRACE_RATE_GIVEN 1u

struct pmon_trace_disk_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size;
	int32_t pid;
	uint32_t flags; /* PMON_TRACE_RATE_GIVEN */
	uint64_t ticks_per_sec; /* calibrated at start (0: unknown) */
	uint64_t tick0; /* the first pair: mid-point of the bracket */
	uint64_t mono0_ns;
	uint64_t bracket0; /* the pair's bracket, in ticks */
	char command[256];
};

/* After the header, inside its header_size (a file without one is still
 * read): the trace's clocks read together when the trace was taken, for
 * the exports to declare their timestamps' clock (Perfetto's
 * ClockSnapshot). The trace clock's reading is the TSC's on the file's
 * time base (through the TCLK chunk's conversion on the perf clock), the
 * CLOCK_MONOTONIC one on CLOCK_MONOTONIC. */
struct pmon_trace_disk_snapshot {
	uint64_t tick; /* the TSC: mid-point of the bracket */
	uint64_t mono_ns; /* CLOCK_MONOTONIC */
	uint64_t boot_ns; /* CLOCK_BOOTTIME, read right after */
	uint64_t bracket; /* the two TSC reads around them, in ticks */
};

struct pmon_trace_chunk {
	char magic[4]; /* "TCHN", "TEVT", "TEND", "TKEV", "TCLK", "TTHR" */
	uint32_t len; /* payload bytes after this header */
	uint32_t crc; /* zlib crc32 of the payload */
	uint32_t reserved;
};

struct pmon_trace_chunk_events {
	int32_t tid;
	uint32_t nrec;
	uint64_t dropped; /* this thread's drops so far */
	/* then nrec records */
};

struct pmon_trace_chunk_end {
	uint64_t tick1, mono1_ns, bracket1;
	uint64_t dropped; /* all threads */
};

/* A record: the timestamp, then kind (4 bits) and channel (12 bits), and a
 * 32-bit argument. A counter that does not fit in 32 bits takes a second
 * record holding the whole value in place of the timestamp. */
struct pmon__trec {
	uint64_t tick;
	uint32_t word;
	uint32_t arg;
};

enum {
	PMON__TR_BEGIN = 1,
	PMON__TR_END = 2,
	PMON__TR_MARK = 3,
	PMON__TR_COUNTER = 4, /* arg: the value, sign-extended from 32 bits */
	PMON__TR_COUNTER64 = 5, /* the next record's tick field is the value */
	PMON__TR_VALUE = 6, /* that next record */
};

/* A TKEV chunk: this header, then nrec kernel records. */
struct pmon_trace_chunk_kernel {
	uint32_t nrec;
	uint32_t reserved;
	uint64_t lost; /* records the kernel lost so far (PERF_RECORD_LOST) */
};

struct pmon__krec {
	uint64_t mono_ns; /* CLOCK_MONOTONIC */
	int32_t tid; /* the thread it belongs to (the wakee for a wake-up) */
	uint16_t type; /* PMON__K_* */
	uint16_t cpu;
	int64_t a, b; /* per type, below */
};

enum {
	PMON__K_SWITCH_OUT = 1, /* sched_switch: a prev_state, b next_pid */
	PMON__K_WAKEUP = 2, /* sched_wakeup: a the waker's tid, b target_cpu */
	PMON__K_OFFCPU_BEGIN = 3, /* PERF_RECORD_SWITCH out: a 1 if preempted */
	PMON__K_OFFCPU_END = 4, /* PERF_RECORD_SWITCH in */
	PMON__K_SYS_ENTER = 5, /* raw_syscalls:sys_enter: a the number */
	PMON__K_SYS_EXIT = 6, /* raw_syscalls:sys_exit: a the number, b ret */
	PMON__K_FAULT = 7, /* page-faults: a the address, b the ip */
	PMON__K_IRQ_ENTRY = 8, /* irq_handler_entry: a the irq */
	PMON__K_IRQ_EXIT = 9, /* irq_handler_exit: a the irq, b ret */
	PMON__K_SOFTIRQ_ENTRY = 10, /* softirq_entry: a the vector */
	PMON__K_SOFTIRQ_EXIT = 11, /* softirq_exit: a the vector */
	PMON__K_BLOCK_ISSUE = 12, /* block_rq_issue: a sector, b nr_sector */
	PMON__K_BLOCK_COMPLETE = 13, /* block_rq_complete: a sector, b nr_sector */
	PMON__K_KVM_EXIT = 14, /* kvm_exit: a exit_reason, b guest_rip */
	PMON__K_KVM_USER_EXIT = 15, /* kvm_userspace_exit: a reason (KVM_EXIT_*), b errno */
	/* Who is which process, named what (not events: the reader keeps a
	 * table of threads): PERF_RECORD_FORK/EXIT/COMM, and /proc at start. */
	PMON__K_TASK = 16, /* a the pid (tgid), b PMON__TASK_* | the parent tid << 8 */
	PMON__K_COMM = 17, /* a and b: the name, 16 bytes, NUL-padded */
	PMON__K_NTYPES
};

enum {
	PMON__TASK_SEEN = 0, /* in /proc when the trace started */
	PMON__TASK_FORK = 1,
	PMON__TASK_EXEC = 2,
	PMON__TASK_EXIT = 3,
	PMON__TASK_WRITER = 4, /* libpmon's trace writer thread (trace.c) */
};

/* A TCLK chunk (lib/trace/kernel.c writes one after its header): the time
 * base of the kernel's events and how the hooks' TSC joins it. */
struct pmon_trace_chunk_clock {
	uint32_t base; /* enum pmon_timebase: 1 CLOCK_MONOTONIC, 2 the perf clock */
	uint32_t caps; /* the page's cap bits as seen: PMON__CLK_CAP_* */
	uint32_t align_ns; /* measured alignment; PMON__CLK_UNMEASURED when not */
	uint16_t time_shift;
	uint16_t reserved;
	uint32_t time_mult;
	uint32_t reserved2;
	uint64_t time_zero, time_cycles, time_mask;
	char clocksource[32]; /* the kernel's, for the report ("kvm-clock") */
	char measured_with[32]; /* the kernel event align_ns was measured on */
};

#define PMON__CLK_CAP_TIME 1u
#define PMON__CLK_CAP_TIME_ZERO 2u
#define PMON__CLK_CAP_TIME_SHORT 4u
#define PMON__CLK_PROBED 8u /* a perf event's page was read */
#define PMON__CLK_UNMEASURED 0xffffffffu

/* Shared by the writers (trace.c, kernel.c). */
int pmon__trace_write_chunk(int fd, const char magic[4], const void *a, size_t alen, const void *b,
			    size_t blen);
struct pmon_trace_reader;
/* The trace header @h (header_size set) and a clock snapshot taken now,
 * written to @fd. Return: 0 or -errno. */
int pmon__trace_write_header(int fd, struct pmon_trace_disk_header *h);
/* The trace's clocks as @r's header recorded them: the trace clock (the
 * time base of its events' absolute ns, mono_start_ns + ns), CLOCK_MONOTONIC
 * and CLOCK_BOOTTIME. Return: false for a file without a snapshot. */
bool pmon__trace_snapshot(const struct pmon_trace_reader *r, uint64_t *trace_ns, uint64_t *mono_ns,
			  uint64_t *boot_ns);
/* A TSC (or @clk) / CLOCK_MONOTONIC pair, the narrowest bracket of five. */
void pmon__trace_clock_pair(uint64_t (*clk)(void), uint64_t *tick, uint64_t *mono,
			    uint64_t *bracket);
/*
 * One page of an ftrace ring buffer as trace_pipe_raw hands it over (Linux
 * kernel/trace/ring_buffer.c; tracefs events/header_page, header_event):
 * a u64 timestamp, a u64 commit (the data's length, and RB_MISSED_EVENTS
 * (bit 31) / RB_MISSED_STORED (bit 30)), then events, each a u32 of
 * type_len (5 bits) and time_delta (27 bits): 0 a data event whose length
 * is in the next u32, 1-28 one of type_len * 4 bytes, 29 padding, 30 a
 * time extend, 31 an absolute timestamp. @cb gets each data event's time
 * and payload (the trace entry: common_type first). Return: the events
 * lost before this page (1 when the kernel did not store how many), or
 * -EINVAL for a page that does not parse (the events before it were given).
 */
long pmon__ftrace_page(const uint8_t *page, size_t len,
		       void (*cb)(void *ctx, uint64_t ts, const uint8_t *data, size_t n),
		       void *ctx);
/*
 * A tracepoint field at @off, @size bytes, of a raw record (the trace
 * entry, common_type first) of @n bytes, as the tracefs format file places
 * it (little-endian, as the machine): 1- and 2-byte ones unsigned, 4-byte
 * ones ints (pid_t, int) that sign-extend, 8-byte ones whole. 0 when it
 * does not lie inside the record.
 */
int64_t pmon__trace_tp_field(const uint8_t *raw, size_t n, unsigned off, unsigned size);
/* x86-64 system call @nr's name, or NULL (lib/trace/syscalls.c). */
const char *pmon__syscall_name(long nr);

/* A TTHR chunk (trace.c): a hooks' thread's name, and whether it is
 * libpmon's own writer thread. */
struct pmon_trace_chunk_thread {
	int32_t tid;
	uint32_t flags; /* PMON__THREAD_WRITER */
	char name[16];
};

/* What the reader knows of a thread: its process and its name (the
 * kernel's PMON__K_TASK/COMM records, the hooks' TTHR chunks). */
struct pmon__trace_thread {
	int32_t tid, pid; /* pid: the trace's own where nothing said */
	char name[16]; /* "" when unknown */
	uint32_t flags; /* PMON__THREAD_* */
	uint64_t exit_ns; /* on the reader's time line; UINT64_MAX: not seen */
};
#define PMON__THREAD_WRITER 1u
#define PMON__THREAD_KNOWN 2u /* a kernel record or TTHR named it */

struct pmon_trace_reader;
/* Thread @tid of the trace (a default one where nothing is known of it:
 * the trace's pid, no name); valid while @r is. */
const struct pmon__trace_thread *pmon__trace_thread(const struct pmon_trace_reader *r, int32_t tid);
/* The process @pid's name: its main thread's, else the trace's command
 * where it is the trace's pid, else "". */
const char *pmon__trace_process_name(const struct pmon_trace_reader *r, int32_t pid);

/* The distinct tids of @r's events, sorted, into *@out (the caller's to
 * free). Return: their count, or -ENOMEM. */
long pmon__trace_tids(const struct pmon_trace_reader *r, int32_t **out);
int pmon__cmp_i32(const void *a, const void *b);

#define PMON__TR_WORD(kind, ch) (((uint32_t)(kind) << 28) | ((ch)&0x0fffffffu))
#define PMON__TR_KIND(w) ((w) >> 28)
#define PMON__TR_CHAN(w) ((w)&0x0fffffffu)

#endif
