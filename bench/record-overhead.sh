#!/bin/sh
# SPDX-License-Identifier: MIT
# Benchmark: `pmon record` against `perf record` on the same workload
# (tests/workloads/hotcold.c), both sampling cpu-clock at 1 kHz and at
# 10 kHz with frame-pointer call chains. Per run: wall time of the recording
# (workload included; the bare workload is timed too), bytes written per
# sample, lost samples (pmon's LOST records; perf report --stats), and
# the wall time of the report (pmon report / perf report --stdio, by
# symbol). Runs are interleaved and pinned to one CPU; medians are compared.
# perf record runs with --no-bpf-event (perf 6.1 otherwise waits ~0.9 s at
# exit). Not a test: it asserts nothing, it measures.
# usage: bench/record-overhead.sh [PMON] [WORKLOAD] [RUNS]
#        (default build/pmon, build/tests/wl-hotcold, 30)
set -eu
PMON=${1:-build/pmon}
WL=${2:-build/tests/wl-hotcold}
RUNS=${3:-30}
command -v perf >/dev/null || { echo "perf is not installed: nothing to compare with"; exit 77; }
perf record --no-bpf-event -e cpu-clock -o /dev/null -q true >/dev/null 2>&1 ||
	{ echo "perf cannot sample here"; exit 77; }
CPU=$(($(nproc) - 1))
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
python3 - "$PMON" "$WL" "$RUNS" "$CPU" "$DIR" <<'PY'
import json, os, re, statistics, subprocess, sys, time
pmon, wl, runs, cpu, d = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
os.sched_setaffinity(0, {cpu})
N = "100000000"
def run(c):
    t0 = time.perf_counter()
    subprocess.run(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0
def out(c):
    return subprocess.run(c, capture_output=True, text=True, check=True).stdout
for hz in ("1000", "10000"):
    rec = {
        "bare": [wl, N],
        "pmon": [pmon, "record", "-e", "cpu-clock", "-F", hz, "-g", "-o", f"{d}/p.data", "--", wl, N],
        "perf": ["perf", "record", "--no-bpf-event", "-q", "-e", "cpu-clock", "-F", hz, "-g",
                 "-o", f"{d}/f.data", "--", wl, N],
    }
    rep = {
        "pmon": [pmon, "report", "-i", f"{d}/p.data"],
        "perf": ["perf", "report", "--stdio", "-i", f"{d}/f.data", "--sort", "symbol", "-g", "none"],
    }
    def samples_lost(k):
        if k == "pmon":
            j = json.loads(out(rep["pmon"] + ["--format", "json"]))
            return j["samples"], j["lost"]
        st = out(["perf", "report", "--stats", "-i", f"{d}/f.data"])
        lost = re.search(r"LOST events:\s+(\d+)", st)
        return int(re.search(r"SAMPLE events:\s+(\d+)", st).group(1)), int(lost.group(1)) if lost else 0
    for _ in range(3):
        for c in rec.values():
            run(c)
    t = {k: [] for k in rec}
    tr = {k: [] for k in rep}
    bps = {k: [] for k in rep}
    lost = {k: 0 for k in rep}
    for i in range(runs):
        order = list(rec) if i % 2 == 0 else list(reversed(list(rec)))
        for k in order:
            t[k].append(run(rec[k]))
            if k in rep:
                tr[k].append(run(rep[k]))
                size = os.path.getsize(f"{d}/p.data" if k == "pmon" else f"{d}/f.data")
                n, l = samples_lost(k)
                bps[k].append(size / max(1, n))
                lost[k] += l
    m = {k: statistics.median(v) for k, v in t.items()}
    print(f"-F {hz}: workload alone: median {m['bare']*1e3:.1f} ms over {runs} runs")
    for k in ("pmon", "perf"):
        print(f"  {k} record: median {m[k]*1e3:.1f} ms (+{(m[k]-m['bare'])*1e3:.1f} ms over the workload), "
              f"{statistics.median(bps[k]):.1f} bytes/sample, {lost[k]} lost samples in all runs; "
              f"report: median {statistics.median(tr[k])*1e3:.1f} ms")
    print(f"  ratio pmon/perf, record time over the workload (medians): "
          f"{(m['pmon']-m['bare'])/max(1e-9, m['perf']-m['bare']):.2f}")
    print(f"  ratio pmon/perf, bytes per sample (medians): "
          f"{statistics.median(bps['pmon'])/statistics.median(bps['perf']):.2f}")
    print(f"  ratio pmon/perf, report time (medians): "
          f"{statistics.median(tr['pmon'])/statistics.median(tr['perf']):.2f}")
PY
