// SPDX-License-Identifier: MIT
/*
 * A trace as Perfetto's protobuf trace format, streamed packet by packet so
 * any size converts in constant memory: the Trace message is a sequence of
 * `packet` fields (1), each a TracePacket. What is written (field numbers
 * from Perfetto's protos/perfetto/trace/trace_packet.proto and
 * the track_event/ protos):
 *   TracePacket  clock_snapshot 6, timestamp 8, trusted_packet_sequence_id 10,
 *                track_event 11, interned_data 12, sequence_flags 13,
 *                timestamp_clock_id 58, track_descriptor 60
 *   ClockSnapshot clocks 1 -> Clock clock_id 1, timestamp 2
 *                (clock_snapshot.proto: BUILTIN_CLOCK_MONOTONIC 3,
 *                BUILTIN_CLOCK_BOOTTIME 6; 64-127 a sequence-scoped clock)
 *   TrackDescriptor uuid 1, name 2, process 3, thread 4, parent_uuid 5,
 *                counter 8;  ProcessDescriptor pid 1, process_name 6;
 *                ThreadDescriptor pid 1, tid 2, thread_name 5
 *   TrackEvent   type 9 (SLICE_BEGIN 1, SLICE_END 2, INSTANT 3, COUNTER 4),
 *                name_iid 10, track_uuid 11, counter_value 30,
 *                debug_annotations 4 -> DebugAnnotation name 10, int_value 4
 *   InternedData event_names 2 -> EventName iid 1, name 2
 * Names are interned once per channel on the one packet sequence. The
 * encoding is protobuf's wire format (varints, length-delimited fields),
 * written here rather than through a library: the core library stays free
 * of protobuf-c, and the schema subset pmon keeps (tests/perfetto/) lets
 * `protoc --decode` read the output back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "trace/tracefile.h"
#include <pmon/trace.h>

#define SEQ_ID 1
#define CLOCK_MONOTONIC_ID 3
#define CLOCK_BOOTTIME_ID 6
#define CLOCK_PERF_ID 64 /* the perf clock: sequence-scoped (64-127) */
#define SEQ_INCREMENTAL_STATE_CLEARED 1
#define SEQ_NEEDS_INCREMENTAL_STATE 2

struct pb {
	uint8_t b[1024];
	size_t n;
	bool overflow;
};

static void pb_raw(struct pb *p, const void *d, size_t n)
{
	if (n > sizeof(p->b) - p->n) {
		p->overflow = true;
		return;
	}
	memcpy(p->b + p->n, d, n);
	p->n += n;
}

static void pb_varint(struct pb *p, uint64_t v)
{
	uint8_t t[10];
	size_t n = 0;
	do {
		t[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	pb_raw(p, t, n);
}

static void pb_uint(struct pb *p, unsigned field, uint64_t v)
{
	pb_varint(p, (uint64_t)field << 3); /* wire type 0 */
	pb_varint(p, v);
}

static void pb_bytes(struct pb *p, unsigned field, const void *d, size_t n)
{
	pb_varint(p, (uint64_t)field << 3 | 2);
	pb_varint(p, n);
	pb_raw(p, d, n);
}

static void pb_msg(struct pb *p, unsigned field, const struct pb *m)
{
	if (m->overflow)
		p->overflow = true;
	pb_bytes(p, field, m->b, m->n);
}

static void pb_str(struct pb *p, unsigned field, const char *s)
{
	size_t n = strlen(s);
	pb_bytes(p, field, s, n > 200 ? 200 : n);
}

/* One TracePacket as field 1 of the Trace. */
static int put_packet(FILE *f, const struct pb *pkt)
{
	struct pb outer = { .n = 0 };
	if (pkt->overflow)
		return -EOVERFLOW;
	pb_varint(&outer, 1u << 3 | 2);
	pb_varint(&outer, pkt->n);
	/* the failed write's own reason (ENOSPC), for the caller to say */
	errno = 0;
	return fwrite(outer.b, 1, outer.n, f) == outer.n && fwrite(pkt->b, 1, pkt->n, f) == pkt->n
		? 0
		: errno ? -errno
			: -EIO;
}

static uint64_t thread_uuid(int32_t tid)
{
	return 0x100000000ull | (uint32_t)tid;
}

static uint64_t counter_uuid(uint32_t ch)
{
	return 0x200000000ull | ch;
}

static uint64_t process_uuid(int32_t pid)
{
	return 0x300000000ull | (uint32_t)pid;
}

/* A thread's kernel events: a child track of the thread's, named "kernel"
 * (the hooks' and the kernel's spans each nest, not always with each
 * other: they come from two clocks, aligned to within align_err_ns). */
static uint64_t kernel_uuid(int32_t tid)
{
	return 0x400000000ull | (uint32_t)tid;
}

/* A kernel instant's or span end's arguments, as the Chrome JSON has them
 * (value, arg, cpu: a syscall's return value, a switch's prev_state, a
 * wake-up's waker), as TrackEvent debug annotations (field 4): a slice
 * end's are added to its slice. */
static void put_kernel_args(struct pb *m, const struct pmon_trace_event *e)
{
	static const char *const name[] = { "value", "arg", "cpu" };
	const int64_t v[] = { e->value, e->arg, e->cpu };
	for (size_t i = 0; i < 3; i++) {
		struct pb a = { .n = 0 };
		pb_str(&a, 10, name[i]); /* DebugAnnotation.name */
		pb_uint(&a, 4, (uint64_t)v[i]); /* int_value: two's complement varint */
		pb_msg(m, 4, &a);
	}
}

/* One TrackDescriptor packet: @uuid under @parent (0: none), named @name
 * (NULL: none), with a process (@pid > 0, @tid 0) or thread descriptor. */
static int put_track(FILE *f, uint64_t uuid, uint64_t parent, const char *name, int32_t pid,
		     int32_t tid, const char *pname)
{
	struct pb pkt = { .n = 0 }, m = { .n = 0 }, d = { .n = 0 };
	pb_uint(&m, 1, uuid);
	if (name)
		pb_str(&m, 2, name);
	if (parent)
		pb_uint(&m, 5, parent);
	if (pid && !tid) {
		pb_uint(&d, 1, (uint64_t)(uint32_t)pid);
		pb_str(&d, 6, pname);
		pb_msg(&m, 3, &d);
	} else if (tid) {
		pb_uint(&d, 1, (uint64_t)(uint32_t)pid);
		pb_uint(&d, 2, (uint64_t)(uint32_t)tid);
		if (pname[0])
			pb_str(&d, 5, pname); /* ThreadDescriptor.thread_name */
		pb_msg(&m, 4, &d);
	}
	pb_msg(&pkt, 60, &m);
	return put_packet(f, &pkt);
}

/* Every process (its pid and command), every thread under its own
 * process (its tid and name), each thread's kernel track. */
static int put_tracks(const struct pmon_trace_reader *r, FILE *f)
{
	int32_t *tids = NULL, *pids = NULL;
	long n = pmon__trace_tids(r, &tids);
	int err = 0;

	if (n < 0)
		return (int)n;
	pids = malloc(((size_t)n + 1) * sizeof(*pids));
	uint8_t *kern = calloc((size_t)n + 1, 1);
	if (!pids || !kern) {
		err = -ENOMEM;
		goto out;
	}
	size_t np = 0;
	pids[np++] = pmon_trace_reader__info(r)->pid;
	for (long i = 0; i < n; i++)
		pids[np++] = pmon__trace_thread(r, tids[i])->pid;
	qsort(pids, np, sizeof(*pids), pmon__cmp_i32);
	for (size_t i = 0; i < np && !err; i++)
		if (!i || pids[i] != pids[i - 1])
			err = put_track(f, process_uuid(pids[i]), 0, NULL, pids[i], 0,
					pmon__trace_process_name(r, pids[i]));
	for (size_t i = 0; i < pmon_trace_reader__nevents(r); i++) {
		const struct pmon_trace_event *e = pmon_trace_reader__event(r, i);
		const int32_t *k = (e->flags & PMON_TRACE_EV_KERNEL)
			? bsearch(&e->tid, tids, (size_t)n, sizeof(*tids), pmon__cmp_i32)
			: NULL;
		if (k)
			kern[k - tids] = 1;
	}
	for (long i = 0; i < n && !err; i++) {
		const struct pmon__trace_thread *t = pmon__trace_thread(r, tids[i]);
		err = put_track(f, thread_uuid(tids[i]), process_uuid(t->pid), NULL, t->pid,
				tids[i], t->name);
		if (!err && kern[i])
			err = put_track(f, kernel_uuid(tids[i]), thread_uuid(tids[i]), "kernel", 0,
					0, "");
	}
out:
	free(kern);
	free(pids);
	free(tids);
	return err;
}

/* The clock of the timestamps, declared (issue #28.6): a ClockSnapshot
 * of the trace's clock, CLOCK_MONOTONIC and CLOCK_BOOTTIME as the trace's
 * header read them together, first on the events' sequence (a
 * sequence-scoped clock must be declared on its sequence before use).
 * Return: the clock id the events' timestamps are on (0: a file without
 * the snapshot, nothing declared), or -errno. */
static long put_clocks(const struct pmon_trace_reader *r, FILE *f)
{
	uint64_t v[3];
	if (!pmon__trace_snapshot(r, &v[0], &v[1], &v[2]))
		return 0;
	bool perf = pmon_trace_reader__info(r)->time_base == PMON_TIMEBASE_PERF;
	const uint32_t id[3] = { perf ? CLOCK_PERF_ID : 0, CLOCK_MONOTONIC_ID, CLOCK_BOOTTIME_ID };
	struct pb pkt = { .n = 0 }, s = { .n = 0 };
	for (size_t i = 0; i < 3; i++) {
		if (!id[i])
			continue; /* on CLOCK_MONOTONIC: the trace clock is that one */
		struct pb c = { .n = 0 };
		pb_uint(&c, 1, id[i]);
		pb_uint(&c, 2, v[i]);
		pb_msg(&s, 1, &c);
	}
	pb_msg(&pkt, 6, &s);
	pb_uint(&pkt, 10, SEQ_ID);
	pb_uint(&pkt, 13, SEQ_INCREMENTAL_STATE_CLEARED);
	int err = put_packet(f, &pkt);
	return err ? err : perf ? CLOCK_PERF_ID : CLOCK_MONOTONIC_ID;
}

int pmon_trace_write_perfetto(const struct pmon_trace_reader *r, FILE *f)
{
	const struct pmon_trace_info *in = pmon_trace_reader__info(r);
	size_t nev = pmon_trace_reader__nevents(r), nch = pmon_trace_reader__nchannels(r);
	struct pb pkt, m, d;
	long clock = put_clocks(r, f);
	int err = clock < 0 ? (int)clock : put_tracks(r, f);

	/* A counter track per counter channel, under the trace's process. */
	bool *is_counter = calloc(nch + 1, sizeof(bool));
	if (!is_counter)
		return -ENOMEM;
	for (size_t i = 0; i < nev && !err; i++) {
		const struct pmon_trace_event *e = pmon_trace_reader__event(r, i);
		if (e->kind == PMON_TRACE_COUNTER_EV && e->channel <= nch &&
		    !is_counter[e->channel]) {
			is_counter[e->channel] = true;
			pkt = (struct pb){ .n = 0 };
			m = (struct pb){ .n = 0 };
			d = (struct pb){ .n = 0 }; /* an empty CounterDescriptor */
			pb_uint(&m, 1, counter_uuid(e->channel));
			const char *name = pmon_trace_reader__channel(r, e->channel);
			pb_str(&m, 2, name ? name : "?");
			pb_uint(&m, 5, process_uuid(in->pid));
			pb_msg(&m, 8, &d);
			pb_msg(&pkt, 60, &m);
			err = put_packet(f, &pkt);
		}
	}

	/* The events; a channel's name is interned before its first use. */
	bool *interned = calloc(nch + 1, sizeof(bool)), first = clock == 0;
	if (!interned) {
		free(is_counter);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nev && !err; i++) {
		const struct pmon_trace_event *e = pmon_trace_reader__event(r, i);
		if (e->channel > nch)
			continue;
		pkt = (struct pb){ .n = 0 };
		m = (struct pb){ .n = 0 };
		pb_uint(&pkt, 8, in->mono_start_ns + e->ns);
		if (clock)
			pb_uint(&pkt, 58, (uint64_t)clock);
		pb_uint(&pkt, 10, SEQ_ID);
		pb_uint(&pkt, 13,
			first ? SEQ_INCREMENTAL_STATE_CLEARED : SEQ_NEEDS_INCREMENTAL_STATE);
		first = false;
		if (!interned[e->channel] && e->kind != PMON_TRACE_COUNTER_EV) {
			struct pb names = { .n = 0 }, en = { .n = 0 };
			const char *name = pmon_trace_reader__channel(r, e->channel);
			pb_uint(&en, 1, e->channel);
			pb_str(&en, 2, name ? name : "?");
			pb_msg(&names, 2, &en);
			pb_msg(&pkt, 12, &names);
			interned[e->channel] = true;
		}
		switch (e->kind) {
		case PMON_TRACE_BEGIN_EV:
		case PMON_TRACE_END_EV:
		case PMON_TRACE_MARK_EV:
			pb_uint(&m, 9,
				e->kind == PMON_TRACE_BEGIN_EV	       ? 1
					: e->kind == PMON_TRACE_END_EV ? 2
								       : 3);
			if (e->kind != PMON_TRACE_END_EV)
				pb_uint(&m, 10, e->channel);
			pb_uint(&m, 11,
				e->flags & PMON_TRACE_EV_KERNEL ? kernel_uuid(e->tid)
								: thread_uuid(e->tid));
			if (e->flags & PMON_TRACE_EV_KERNEL && e->kind != PMON_TRACE_BEGIN_EV)
				put_kernel_args(&m, e);
			break;
		case PMON_TRACE_COUNTER_EV:
			pb_uint(&m, 9, 4);
			pb_uint(&m, 11, counter_uuid(e->channel));
			pb_uint(&m, 30, (uint64_t)e->value); /* int64: two's complement varint */
			break;
		}
		pb_msg(&pkt, 11, &m);
		err = put_packet(f, &pkt);
	}
	free(interned);
	free(is_counter);
	if (!err && fflush(f))
		err = -errno;
	return err;
}
