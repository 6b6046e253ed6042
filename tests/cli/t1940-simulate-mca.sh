#!/bin/sh
# pmon simulate --mca: the hottest block of a function, found from the
# simulated counts, through llvm-mca. For chain()'s 8 dependent adds a
# trip llvm-mca predicts one add a cycle (add's latency), whatever model
# CPUID picks; the block is exactly the loop; port pressure and the
# bottleneck are shown; a missing llvm-mca and an unknown function are
# one-line errors. (bench --predict and annotate --mca: t1942.)
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"
W=$PMON_WORKLOADS/wl-simloop
sim_setup

mkdir "$TMP/bin"
ln -s "$(command -v valgrind)" "$TMP/bin/valgrind"
PATH=$TMP/bin "$PMON" simulate $GEOM --mca chain -- "$W" chain 10 >"$TMP/out" 2>"$TMP/err"
check "no llvm-mca on PATH: exit 3" [ $? -eq 3 ]
one_line_error "llvm-mca is not installed: --mca runs LLVM's llvm-mca (Debian package 'llvm')"
if ! command -v llvm-mca >/dev/null 2>&1; then
	echo "ok - # SKIP llvm-mca is not installed (Debian package llvm)"
	finish
	exit $?
fi

run_pmon 0 simulate $GEOM -e Ir -o "$TMP/c.data" --mca chain -- "$W" chain 100000
check "the block is the loop: 10 instructions, 100,000 times" grep -q "^# pmon simulate --mca chain: the hottest block of 'chain' in .*wl-simloop, 0x[0-9a-f]*-0x[0-9a-f]*, 10 instructions, executed 100,000 times (simulated)" "$TMP/out"
check "the loop's branch goes to the block's start" grep -q "^#   jne .Lblock" "$TMP/out"
check "the simulated instructions an iteration beside the prediction" grep -q "^# simulated: 10.00 instructions an iteration (1,000,000 executed in the block, exact; llvm-mca: 10.00)" "$TMP/out"
check "8 dependent adds: one add a cycle (within 10%)" python3 -c '
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r"^# predicted: ([0-9.]+) cycles an iteration", t, re.M)
per = float(m.group(1))
print("# %.2f cycles an iteration, %.3f a dependent add" % (per, per / 8))
assert 0.9 <= per / 8 <= 1.1, per
' "$TMP/out"
check "port pressure shown" grep -q "Resource pressure" "$TMP/out"
check "bottleneck analysis shown" grep -Eq "Cycles with backend pressure increase|No resource or data dependency bottlenecks" "$TMP/out"
check "-mcpu from CPUID, said" grep -q "^# llvm-mca -mcpu=[a-z0-9-]* (.* family .* model" "$TMP/out"

run_pmon 0 simulate $GEOM -e Ir -o "$TMP/c2.data" --mca chain --mcpu skylake -- "$W" chain 1000
check "--mcpu names the model" grep -q "^# llvm-mca -mcpu=skylake (--mcpu)" "$TMP/out"
check "the tools run are named by their paths" grep -qF "the block repeated 100 times ($(command -v llvm-mca), disassembled by $(command -v objdump))" "$TMP/out"
run_pmon 0 simulate -e Ir -o "$TMP/c3.data" --mca chain --cpuid-file "$PMON_CPUID_DIR/amd-epyc-7742-zen2-rome.txt" -- "$W" chain 1000
check "a dump's CPU: Rome is znver2" grep -q "^# llvm-mca -mcpu=znver2 (AuthenticAMD family 17H model 31H, from the dump)" "$TMP/out"

run_pmon 2 simulate $GEOM -e Ir -o "$TMP/c4.data" --mca nosuchfunction -- "$W" chain 10
check "an unknown function: one error line, after the simulation" grep -q "^pmon: --mca: 'nosuchfunction' executed no instruction in the simulation" "$TMP/err"
run_pmon 2 simulate $GEOM --mcpu skylake -- "$W" chain 10
one_line_error "--mcpu goes with --mca"
finish
