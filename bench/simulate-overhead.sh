#!/bin/sh
# SPDX-License-Identifier: MIT
# Benchmark: `pmon simulate` against plain `valgrind --tool=callgrind` with
# the same options (--dump-instr=yes --cache-sim=yes, the same --I1/--D1/
# --LL), and `pmon simulate -g` against the same callgrind with
# --separate-callers=50 (what -g adds), on the same workload
# (tests/workloads/simloop.c), interleaved, pinned to one CPU, medians:
# pmon's own cost on top of the engine (target: at most 10%), the slowdown
# over the bare workload and over plain cachegrind (valgrind's cheapest
# cache simulator, no per-instruction dump, no call graph), and the time of
# `pmon report` on the simulated recording against `callgrind_annotate` on
# callgrind's file. Not a test: it asserts nothing, it measures.
# usage: bench/simulate-overhead.sh [PMON] [WORKLOAD] [RUNS]
#        (default build/pmon, build/tests/wl-simloop, 7)
set -eu
PMON=${1:-build/pmon}
WL=${2:-build/tests/wl-simloop}
RUNS=${3:-7}
command -v valgrind >/dev/null || { echo "valgrind is not installed"; exit 77; }
CPU=$(($(nproc) - 1))
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
python3 - "$PMON" "$WL" "$RUNS" "$CPU" "$DIR" <<'PY'
import os, statistics, subprocess, sys, time
pmon, wl, runs, cpu, d = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
os.sched_setaffinity(0, {cpu})
work = [wl, "walk", "1048576", "64", "40"]  # about 5 M instructions, 650 k loads
geom = ["--I1=32768,8,64", "--D1=32768,8,64", "--LL=1048576,16,64"]
def run(c):
    t0 = time.perf_counter()
    subprocess.run(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0
cmds = {
    "bare": work,
    "callgrind": ["valgrind", "--tool=callgrind", "-q", "--dump-instr=yes", "--cache-sim=yes",
                  *geom, f"--callgrind-out-file={d}/cg.out"] + work,
    "pmon": [pmon, "simulate", "--l1", "32K,8,64", "--ll", "1M,16,64", "-o", f"{d}/sim.data",
             "--"] + work,
    # -g: pmon simulate's call graph, callgrind keeping 50 callers apart
    # per function (cli/cmd-simulate.c's SIM_CALLERS), against its peer
    "callgrind -g": ["valgrind", "--tool=callgrind", "-q", "--dump-instr=yes", "--cache-sim=yes",
                     "--separate-callers=50", *geom, f"--callgrind-out-file={d}/cgg.out"] + work,
    "pmon -g": [pmon, "simulate", "-g", "--l1", "32K,8,64", "--ll", "1M,16,64", "-o",
                f"{d}/simg.data", "--"] + work,
    "cachegrind": ["valgrind", "--tool=cachegrind", "-q", "--cache-sim=yes", *geom,
                   f"--cachegrind-out-file={d}/cachegrind.out"] + work,
}
t = {k: [] for k in cmds}
for _ in range(runs):
    for k, c in cmds.items():
        t[k].append(run(c))
rep = {"pmon report": [pmon, "report", "-i", f"{d}/sim.data", "--format", "json"],
       "callgrind_annotate": ["callgrind_annotate", f"{d}/cg.out"]}
tr = {k: [] for k in rep}
for _ in range(runs):
    for k, c in rep.items():
        tr[k].append(run(c))
m = {k: statistics.median(v) for k, v in t.items()}
mr = {k: statistics.median(v) for k, v in tr.items()}
print("| run | median |")
print("|---|---|")
for k in cmds:
    print("| %s | %.3f s |" % (k, m[k]))
for k in rep:
    print("| %s | %.3f s |" % (k, mr[k]))
print("pmon simulate / callgrind: %.3f (pmon's added cost %+.1f%%)" %
      (m["pmon"] / m["callgrind"], 100 * (m["pmon"] / m["callgrind"] - 1)))
print("pmon simulate -g / callgrind -g: %.3f (pmon's added cost %+.1f%%)" %
      (m["pmon -g"] / m["callgrind -g"], 100 * (m["pmon -g"] / m["callgrind -g"] - 1)))
print("pmon simulate -g / pmon simulate: %.3f (what the call graph costs)" %
      (m["pmon -g"] / m["pmon"]))
print("callgrind / bare: %.0fx; cachegrind / bare: %.0fx; callgrind / cachegrind: %.2f" %
      (m["callgrind"] / m["bare"], m["cachegrind"] / m["bare"], m["callgrind"] / m["cachegrind"]))
print("recording %d bytes (-g: %d); callgrind file %d bytes (-g: %d)" %
      (os.path.getsize(f"{d}/sim.data"), os.path.getsize(f"{d}/simg.data"),
       os.path.getsize(f"{d}/cg.out"), os.path.getsize(f"{d}/cgg.out")))
PY
