#!/bin/sh
# SPDX-License-Identifier: MIT
# The checks that need a real PMU, run on a machine that has one (the
# project's build VMs have none): the machine's facts, pmon's view of them,
# counting, multiplexing, rdpmc self-reads, regions, sampling, and the CLI
# and unit tests whose hardware paths skip elsewhere. Run from the
# repository root with a built tree; everything lands in $OUT (default
# /tmp/pmon-hw), one file per step, and a summary on stdout.
#   BUILD=build OUT=/tmp/x sh tests/hw/device-check.sh
# Libraries the machine lacks may be put in ./devlibs (LD_LIBRARY_PATH).
set -u
OUT=${OUT:-/tmp/pmon-hw}
B=$(cd "${BUILD:-build}" && pwd)
P=$B/pmon
W=$B/tests
mkdir -p "$OUT"
[ -d devlibs ] && LD_LIBRARY_PATH=$PWD/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} &&
	export LD_LIBRARY_PATH
T=${STEP_TIMEOUT:-40}

# step NAME CMD...: run CMD with a time limit, its output in $OUT/NAME.txt.
step() {
	name=$1; shift
	timeout "$T" "$@" >"$OUT/$name.txt" 2>&1
	rc=$?
	echo "== $name: rc $rc"
	tail -n "${TAILN:-6}" "$OUT/$name.txt" | cut -c1-200
}

step facts sh -c 'uname -a; cat /etc/os-release | head -2; nproc; id;
	grep -m1 "model name" /proc/cpuinfo; grep -m1 -o hypervisor /proc/cpuinfo;
	echo paranoid $(cat /proc/sys/kernel/perf_event_paranoid);
	echo nmi_watchdog $(cat /proc/sys/kernel/nmi_watchdog 2>/dev/null);
	ls /sys/bus/event_source/devices; for d in /sys/bus/event_source/devices/cpu*; do
	echo "$d rdpmc=$(cat $d/rdpmc 2>/dev/null) caps: $(cd $d/caps 2>/dev/null && grep . * | tr "\n" " ")"; done;
	ls -d /sys/fs/resctrl /dev/cpu/0/msr /dev/cpu/0/cpuid 2>&1; mount | grep -c resctrl;
	command -v perf gcc cc python3 || true'
TAILN=40 step info "$P" info
step info-json "$P" info --json
step cpuid-dump "$P" cpuid -o "$OUT/cpuid-dump.txt"
step list sh -c "\"$P\" list | wc -l; \"$P\" list | head -40"
TAILN=14 step stat-hw "$P" stat -e cycles,instructions,branches,branch-misses,cache-references,cache-misses -- "$W/wl-simloop" spin 100000000
TAILN=14 step stat-user-kernel "$P" stat -e cycles:u,cycles:k,instructions:u,r00c0 -- "$W/wl-simloop" spin 50000000
TAILN=20 step stat-multiplex "$P" stat -e cycles,instructions,branches,branch-misses,cache-references,cache-misses,L1-dcache-loads,L1-dcache-load-misses,LLC-loads,LLC-load-misses,dTLB-loads,dTLB-load-misses,iTLB-load-misses,bus-cycles -- "$W/wl-simloop" walk 67108864 64 8
TAILN=12 step stat-repeat "$P" stat -r 5 -e cycles,instructions -- "$W/wl-simloop" spin 20000000
TAILN=8 step stat-interval "$P" stat -I 100 -x, -e cycles,instructions -- "$W/wl-simloop" spin 300000000
TAILN=10 step stat-system "$P" stat -a -e cycles,instructions -- sleep 0.3
TAILN=20 step regions "$P" stat --regions -e cycles,instructions -- "$W/wl-regions" 1000 2
TAILN=20 step bench "$P" bench -n 200 -- true
step record "$P" record -e cycles -c 200000 -g -o "$OUT/rec.pmon" -- "$W/wl-stacks"
TAILN=15 step report "$P" report -i "$OUT/rec.pmon"
rm -f "$OUT/rec.pmon"
if command -v perf >/dev/null 2>&1; then
	TAILN=14 step perf-stat-hw perf stat -e cycles,instructions,branches,branch-misses,cache-references,cache-misses -- "$W/wl-simloop" spin 100000000
fi

# The unit tests that touch the counters, and the CLI tests of counting,
# with the environment ctest gives them.
for t in rdpmc counter region region-setup monitor clock cpu stats; do
	[ -x "$W/test-$t" ] && (cd "$W" && TAILN=4 step "unit-$t" ./test-$t)
done
export PMON="$P" PMON_SRC="$PWD" PMON_BUILD="$B" PMON_WORKLOADS="$W" PMON_USER_CFLAGS=
export PMON_CPUID_DIR="${PMON_CPUID_DIR:-$PWD/devdata/cpuid}"
for t in t0100-info t1000-stat-workloads t1010-stat-basic t1020-stat-errors \
	t1013-stat-mux-error t1035-stat-perf-options t1040-stat-targets \
	t1100-stat-regions t1101-regions-env t1102-regions-empty t1300-direct \
	t1700-record t1710-stacks t1200-bench; do
	TAILN=3 T=120 step "cli-$t" sh "tests/cli/$t.sh"
	grep "^not ok" "$OUT/cli-$t.txt" | head -5 | cut -c1-200
done
echo "== done"
