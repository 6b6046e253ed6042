#!/bin/sh
# SPDX-License-Identifier: MIT
# Benchmark: cost of one region begin/end pair against the bare primitive it
# wraps and against PAPI, in TSC ticks, median of REPS round-robin runs,
# pinned to one CPU. Not a test: it measures and prints a table.
# usage: bench/region-overhead.sh [BUILD_DIR] [REPS]   (default build, 15)
set -eu
BUILD=${1:-build}
REPS=${2:-15}
BIN=$(mktemp -d)/region-overhead
trap 'rm -rf "$(dirname "$BIN")"' EXIT
papi=""
if [ -f /usr/include/papi.h ]; then papi="-DHAVE_PAPI -lpapi"; fi
# shellcheck disable=SC2086
cc -O2 -Iinclude bench/region-overhead.c "$BUILD/libpmon.a" $(pkg-config --libs jansson) \
	-lm -lpthread -ldl $papi -o "$BIN"
CPU=$(($(nproc) - 1))
export PAPI_EVENTS="perf::TASK-CLOCK" PAPI_OUTPUT_DIRECTORY="$(dirname "$BIN")"
python3 - "$BIN" "$REPS" "$CPU" "$([ -n "$papi" ] && echo yes || echo no)" <<'PY'
import statistics, subprocess, sys
bin_, reps, cpu, papi = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] == "yes"
variants = ["bare-tsc", "pmon-tsc", "bare-read", "pmon-read"] + (["papi-read", "papi-hl"] if papi else [])
res = {v: [] for v in variants}
why = {}
for _ in range(reps):
    for v in variants:
        out = subprocess.run(["taskset", "-c", cpu, bin_, v], capture_output=True, text=True).stdout.split(None, 1)
        if len(out) == 2 and out[1].startswith("refused"):
            why[v] = out[1].strip()
        elif len(out) == 2:
            res[v].append(float(out[1]))
med = {v: statistics.median(x) for v, x in res.items() if x}
def row(v, base):
    if v in med:
        r = f"{med[v] / med[base]:.2f}x {base}" if base in med else ""
        print(f"{v:10s} {med[v]:10.1f} ticks/pair  {r}")
    else:
        print(f"{v:10s} {why.get(v, 'not built (no PAPI)')}")
for v, base in [("bare-tsc", None), ("pmon-tsc", "bare-tsc"), ("bare-read", None),
                ("pmon-read", "bare-read"), ("papi-read", "bare-read"), ("papi-hl", "pmon-read")]:
    row(v, base)
if "papi-hl" in med and "pmon-read" in med:
    print(f"PAPI high-level regions / pmon regions: {med['papi-hl'] / med['pmon-read']:.1f}x")
PY
