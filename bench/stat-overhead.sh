#!/bin/sh
# SPDX-License-Identifier: MIT
# Benchmark: wall time of `pmon stat -e task-clock,page-faults,context-switches
# -- true` against `perf stat` with the same events. Runs are interleaved
# (pmon, perf, pmon, perf ...) and pinned to one CPU; the result is the ratio
# of the medians. Not a test: it asserts nothing, it measures.
# usage: bench/stat-overhead.sh [PMON] [RUNS]    (default build/pmon, 200)
set -eu
PMON=${1:-build/pmon}
RUNS=${2:-200}
EVENTS=task-clock,page-faults,context-switches
command -v perf >/dev/null || { echo "perf is not installed: nothing to compare with"; exit 77; }
perf stat -e $EVENTS true >/dev/null 2>&1 || { echo "perf cannot count here"; exit 77; }
CPU=$(($(nproc) - 1))
python3 - "$PMON" "$RUNS" "$EVENTS" "$CPU" <<'PY'
import os, statistics, subprocess, sys, time
pmon, runs, events, cpu = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
os.sched_setaffinity(0, {cpu})
cmds = {
    "pmon": [pmon, "stat", "-e", events, "--", "true"],
    "perf": ["perf", "stat", "-e", events, "--", "true"],
}
times = {k: [] for k in cmds}
for _ in range(5):  # warm the page cache
    for c in cmds.values():
        subprocess.run(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
for i in range(runs):
    for k in (("pmon", "perf") if i % 2 == 0 else ("perf", "pmon")):
        t0 = time.perf_counter()
        subprocess.run(cmds[k], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times[k].append(time.perf_counter() - t0)
med = {k: statistics.median(v) for k, v in times.items()}
q = {k: statistics.quantiles(v, n=4) for k, v in times.items()}
for k in ("pmon", "perf"):
    print(f"{k}: median {med[k]*1e3:.2f} ms (IQR {q[k][0]*1e3:.2f}-{q[k][2]*1e3:.2f} ms) over {runs} runs")
print(f"ratio pmon/perf (medians): {med['pmon']/med['perf']:.2f}  (target <= 0.50)")
PY
