#!/bin/sh
# SPDX-License-Identifier: MIT
# Benchmark: the cost of one pmon trace hook (PMON_TRACE_MARK into a running
# trace) against the floor (an inline rdtsc and a 16-byte store into a ring)
# and an LTTng-UST tracepoint recorded by a real LTTng session (Debian
# lttng-tools and liblttng-ust-dev, when installed). Each variant runs in its
# own process, rounds interleaved, pinned to one CPU; each process reports
# its best batch of 50,000 hooks; the figure is the median over the rounds.
# Not a test: it measures.
# usage: bench/trace-overhead.sh [BUILD] [ROUNDS]   (default build, 11)
set -eu
BUILD=${1:-build}
ROUNDS=${2:-11}
SRC=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pmon-bench.XXXXXX")
trap 'lttng destroy pmonbench >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
VARIANTS="bare pmon"
LTTNG=
if command -v lttng >/dev/null && echo "#include <lttng/tracepoint.h>" | cc -E -x c - >/dev/null 2>&1; then
	LTTNG="-DWITH_LTTNG -I$SRC/bench -llttng-ust -ldl"
	VARIANTS="$VARIANTS lttng"
fi
# shellcheck disable=SC2086
cc -O2 -I"$SRC/include" -I"$SRC/bench" -o "$WORK/trace-overhead" "$SRC/bench/trace-overhead.c" \
	"$BUILD/libpmon.a" -ljansson -lz -lm -lpthread $LTTNG
if [ -n "$LTTNG" ]; then
	lttng create pmonbench --output="$WORK/lttng" >/dev/null
	lttng enable-event -u 'pmonbench:*' >/dev/null
	lttng start >/dev/null
fi
CPU=$(($(nproc) - 1))
for r in $(seq "$ROUNDS"); do
	for v in $VARIANTS; do
		TMPDIR=$WORK taskset -c "$CPU" "$WORK/trace-overhead" "$v"
	done
done >"$WORK/out"
[ -n "$LTTNG" ] && lttng stop >/dev/null && \
	echo "lttng recorded $(babeltrace "$WORK/lttng" 2>/dev/null | wc -l) events" || true
python3 - "$WORK/out" <<'PY'
import statistics, sys, collections
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    v, t = line.split()
    d[v].append(float(t))
m = {v: statistics.median(t) for v, t in d.items()}
for v in d:
    print(f"{v:6s} {m[v]:7.2f} TSC ticks per hook (median of {len(d[v])}; range {min(d[v]):.2f}-{max(d[v]):.2f})")
print(f"pmon / bare: {m['pmon'] / m['bare']:.2f}x (target <= 1.5)")
if "lttng" in m:
    print(f"lttng / pmon: {m['lttng'] / m['pmon']:.2f}x (target >= 5)")
PY
