#!/bin/sh
# SPDX-License-Identifier: MIT
# Benchmark: `pmon stat -e task-clock,page-faults,context-switches -- true`
# beside `perf stat` with the same events and beside the floor
# (bench/stat-floor.c: fork, three counters enabled on exec, wait, one read;
# no parsing, no output). Runs are interleaved (the order rotates) and pinned
# to one CPU; figures are medians of wall time and of minor faults of the
# whole process tree (wait4's rusage, what `/usr/bin/time -f %R` reports).
# Also: the start-up cost of a region-instrumented program (examples/regions.c
# linked with libpmon) over the same program built without pmon.
# Not a test: it asserts nothing, it measures.
# usage: bench/stat-overhead.sh [BUILD] [RUNS]    (default build, 200)
set -eu
BUILD=${1:-build}
RUNS=${2:-200}
EVENTS=task-clock,page-faults,context-switches
command -v perf >/dev/null || { echo "perf is not installed: nothing to compare with"; exit 77; }
perf stat -e $EVENTS true >/dev/null 2>&1 || { echo "perf cannot count here"; exit 77; }
SRC=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pmon-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cc -O2 -o "$WORK/stat-floor" "$SRC/bench/stat-floor.c"
# The regions example with libpmon (shared, as a user links it), and the same
# source with the two macros compiled away.
cc -O2 -I"$SRC/include" -o "$WORK/regions-pmon" "$SRC/examples/regions.c" \
	-L"$BUILD" -Wl,-rpath,"$(cd "$BUILD" && pwd)" -lpmon
cc -O2 -DPMON_REGION_H '-DPMON_REGION_BEGIN(n)=((void)0)' '-DPMON_REGION_END(n)=((void)0)' \
	-I"$SRC/include" -o "$WORK/regions-bare" "$SRC/examples/regions.c"
# Linking alone: a program that only calls pmon_version(), against libpmon.so
# and against libpmon.a, beside an empty program.
printf 'int main(void) { return 0; }\n' >"$WORK/empty.c"
printf 'const char *pmon_version(void);\nint main(void) { return !pmon_version()[0]; }\n' >"$WORK/ver.c"
cc -O2 -o "$WORK/empty" "$WORK/empty.c"
cc -O2 -o "$WORK/version-shared" "$WORK/ver.c" -L"$BUILD" -Wl,-rpath,"$(cd "$BUILD" && pwd)" -lpmon
cc -O2 -o "$WORK/version-static" "$WORK/ver.c" "$BUILD/libpmon.a" -ljansson -lz -lm
CPU=$(($(nproc) - 1))
python3 - "$BUILD/pmon" "$RUNS" "$EVENTS" "$CPU" "$WORK" <<'PY'
import os, statistics, subprocess, sys, time
pmon, runs, events, cpu, work = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
os.sched_setaffinity(0, {cpu})
env = dict(os.environ, PMON_OUTPUT="/dev/null")
cmds = {
    "floor": [work + "/stat-floor", "true"],
    "pmon": [pmon, "stat", "-e", events, "--", "true"],
    "perf": ["perf", "stat", "-e", events, "--", "true"],
    "empty": [work + "/empty"],
    "version-shared": [work + "/version-shared"],
    "version-static": [work + "/version-static"],
    "regions-bare": [work + "/regions-bare"],
    "regions-pmon": [work + "/regions-pmon"],
}
def run(c):
    t0 = time.perf_counter()
    p = subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, ru = os.wait4(p.pid, 0)
    t = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"{' '.join(c)} failed: {p.returncode}")
    return t, ru.ru_minflt
times = {k: [] for k in cmds}
faults = {k: [] for k in cmds}
for _ in range(5):  # warm the page cache
    for c in cmds.values():
        run(c)
keys = list(cmds)
for i in range(runs):
    for k in keys[i % len(keys):] + keys[:i % len(keys)]:
        t, f = run(cmds[k])
        times[k].append(t)
        faults[k].append(f)
med = {k: statistics.median(v) for k, v in times.items()}
q = {k: statistics.quantiles(v, n=4) for k, v in times.items()}
mf = {k: statistics.median(v) for k, v in faults.items()}
for k in keys:
    print(f"{k:14s} median {med[k]*1e3:6.2f} ms (IQR {q[k][0]*1e3:.2f}-{q[k][2]*1e3:.2f})  minor faults {mf[k]:.0f}")
print(f"pmon/floor: time {med['pmon']/med['floor']:.2f}x (target <= 1.5), faults {mf['pmon']/mf['floor']:.2f}x (target <= 2)")
print(f"pmon/perf:  time {med['pmon']/med['perf']:.2f}x, faults {mf['pmon']/mf['perf']:.2f}x")
print(f"linking libpmon: +{mf['version-shared']-mf['empty']:.0f} minor faults shared (target <= 30), "
      f"+{mf['version-static']-mf['empty']:.0f} static")
print(f"regions example (1020 region pairs and the report at exit): +{mf['regions-pmon']-mf['regions-bare']:.0f} minor faults, "
      f"time {med['regions-pmon']/med['regions-bare']:.2f}x")
PY
