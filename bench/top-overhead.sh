#!/bin/sh
# SPDX-License-Identifier: MIT
# Benchmark: the CPU cost of watching live rates -- pmon top --batch at a
# 1 s interval with 8 events on all CPUs, against perf stat -a -I 1000 with
# the same events, both for SECONDS seconds (and pmon top -P, which also
# samples the first event at ~250 Hz per CPU for the per-process view); CPU time (user + sys, from
# wait4) over wall time, in percent of one core. Needs root (all CPUs).
# usage: bench/top-overhead.sh [PMON] [SECONDS]    (default build/pmon, 20)
set -eu
PMON=${1:-build/pmon}
SECS=${2:-20}
EV=cpu-clock,task-clock,context-switches,cpu-migrations,page-faults,minor-faults,major-faults,alignment-faults
python3 - "$PMON" "$SECS" "$EV" <<'PY'
import os, subprocess, sys, time
pmon, secs, ev = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def cost(argv):
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    return 100 * (ru.ru_utime + ru.ru_stime) / wall, wall
runs = [("pmon top", [pmon, "top", "--batch", "-I", "1000", "-n", str(secs), "-e", ev]),
        ("pmon top -P", [pmon, "top", "--batch", "-P", "-I", "1000", "-n", str(secs), "-e", ev]),
        ("perf stat -I", ["perf", "stat", "-a", "-I", "1000", "--interval-count", str(secs), "-e", ev])]
for name, argv in runs:
    pct, wall = cost(argv)
    print(f"{name:14s} {pct:.3f}% of a core over {wall:.1f} s (8 events, all CPUs, 1 s interval)")
PY
