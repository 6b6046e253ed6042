#!/bin/sh
# SPDX-License-Identifier: MIT
# Benchmark: memory and file size of 10^8 trace hooks from 4 threads (issue
# #18: "memory bounded, every hook written or counted as dropped"), side by
# side with the floor (the same threads storing into 65536-record rings of
# their own, no writer) and an LTTng-UST session (Debian lttng-tools and
# liblttng-ust-dev, when installed). pmon runs twice: onto a slow disk (a
# FIFO drained at MB_PER_S by bench/trace-memory.c's consumer, which parses
# the chunks as they pass and counts records and drops) and onto a file in
# $TMPDIR (read back the same way). Peak RSS is getrusage's ru_maxrss of the
# program; LTTng's buffers live in its consumer daemon too, whose VmHWM is
# shown. Not a test: it measures, and it writes GBs to $TMPDIR.
# usage: [GAP=N] bench/trace-memory.sh [BUILD] [TOTAL] [MB_PER_S]   (build, 100000000, 50)
# GAP=N: N iterations of a loop after each hook (a program that works between hooks).
set -eu
BUILD=${1:-build}
TOTAL=${2:-100000000}
RATE=${3:-50}
THREADS=4
SRC=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pmon-bench.XXXXXX")
trap 'lttng destroy pmonmem >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
LTTNG=
if command -v lttng >/dev/null && echo "#include <lttng/tracepoint.h>" | cc -E -x c - >/dev/null 2>&1; then
	LTTNG="-DWITH_LTTNG -llttng-ust -ldl"
fi
# shellcheck disable=SC2086
cc -O2 -I"$SRC/include" -I"$SRC/bench" -o "$WORK/trace-memory" "$SRC/bench/trace-memory.c" \
	"$BUILD/libpmon.a" -ljansson -lz -lm -lpthread $LTTNG
B=$WORK/trace-memory
echo "# $TOTAL hooks from $THREADS threads, GAP=${GAP:-0} loop iterations after each; $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"

echo "floor:  $($B produce floor $THREADS "$TOTAL")"

mkfifo "$WORK/slow"
$B consume "$WORK/slow" "$RATE" >"$WORK/slow.out" &
echo "pmon onto a $RATE MB/s disk: $($B produce pmon $THREADS "$TOTAL" "$WORK/slow")"
wait
echo "  read back: $(cat "$WORK/slow.out")"

echo "pmon onto ${TMPDIR:-/tmp}: $($B produce pmon $THREADS "$TOTAL" "$WORK/fast.trace")"
echo "  file: $(stat -c %s "$WORK/fast.trace") bytes; read back: $($B consume "$WORK/fast.trace" 100000)"
rm -f "$WORK/fast.trace"

if [ -n "$LTTNG" ]; then
	lttng create pmonmem --output="$WORK/lttng" >/dev/null
	lttng enable-event -u 'pmonbench:*' >/dev/null
	lttng start >/dev/null
	echo "lttng:  $($B produce lttng $THREADS "$TOTAL")"
	lttng stop >/dev/null 2>&1
	lttng list pmonmem 2>/dev/null | grep -i "discarded\|lost" | sed "s/^ */  lttng: /" || true
	echo "  files: $(du -sb "$WORK/lttng" | cut -f1) bytes;" \
		"recorded $(babeltrace "$WORK/lttng" 2>/dev/null | wc -l) events (babeltrace)"
	pid=$(pgrep -f lttng-consumerd | head -1)
	[ -n "$pid" ] && echo "  lttng-consumerd $(grep -E 'VmHWM|VmRSS' "/proc/$pid/status" | tr -s ' \n' ' ')"
	lttng destroy pmonmem >/dev/null
fi
