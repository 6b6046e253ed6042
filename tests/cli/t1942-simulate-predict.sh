#!/bin/sh
# llvm-mca beside a profile or a measurement (issue #17):
#  - pmon annotate --mca on a simulated recording finds the block pmon
#    simulate --mca finds (chain()'s loop, 10 instructions, 100,000 times)
#    and predicts 8 cycles a trip (8 dependent adds);
#  - pmon annotate --mca on a sampled recording (cpu-clock) finds the same
#    loop from its closing branch, says how many samples fell in it, and in
#    one line why no cycles were measured (software events only; the IPC
#    from cycles and instructions samples: test-sim's block_cost);
#  - pmon bench --asm 'add rax, 1' --predict: a dependent chain of add is
#    predicted at 1 cycle an add (llvm-mca is deterministic: asserted); the
#    measurement beside it (in core cycles within 10%: t1945);
#  - no llvm-mca: one line naming the Debian package, exit 3.
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"
W=$PMON_WORKLOADS/wl-simloop

mkdir "$TMP/bin"
for t in as ld objdump valgrind; do
	p=$(command -v $t) && ln -s "$p" "$TMP/bin/$t"
done
PATH=$TMP/bin "$PMON" bench --asm 'add rax, 1' --predict -r 5 >"$TMP/out" 2>"$TMP/err"
check "bench --predict without llvm-mca: exit 3" [ $? -eq 3 ]
one_line_error "llvm-mca is not installed: --predict runs LLVM's llvm-mca (Debian package 'llvm')"
PATH=$TMP/bin "$PMON" annotate -i /nonexistent --mca >"$TMP/out" 2>"$TMP/err"
check "annotate --mca without llvm-mca: exit 3" [ $? -eq 3 ]
one_line_error "(Debian package 'llvm')"
run_pmon 2 bench --so x.so:f --predict
one_line_error "--predict goes with --asm"
run_pmon 2 annotate --mcpu skylake
one_line_error "--mcpu goes with --mca"
if ! command -v llvm-mca >/dev/null 2>&1; then
	echo "ok - # SKIP llvm-mca is not installed (Debian package llvm)"
	finish
	exit $?
fi

# ---- bench --predict: one add a cycle, predicted exactly -------------------
run_pmon 0 bench --asm 'add rax, 1' --predict
check "the prediction names the -mcpu from CPUID" grep -q "predicted by llvm-mca -mcpu=[a-z0-9-]* (.* family .* model" "$TMP/out"
check "a dependent add: 1.00 cycle an execution" grep -q "^    1.00 cycles an execution of the body" "$TMP/out"
check "the measurement beside it, TSC converted with the calibrated frequency" grep -Eq "^  measured: -?[0-9.]+ TSC ticks an execution \(median\) = -?[0-9.]+ ns at the TSC's calibrated [0-9.]+ GHz|^  measured: [0-9.]+ core cycles" "$TMP/out"
sed -n '/predicted by/,$p' "$TMP/out" | sed 's/^/# /'
run_pmon 0 bench --asm 'add rax, 1; add rax, 1; add rax, 1; add rax, 1' --predict --json -r 21
json_has "$TMP/out" 'd["predicted"]["mcpu"]' 'd["predicted"]["tsc_hz"] > 0' \
	'abs(d["predicted"]["cycles_per_execution"] - 4) < 0.05' 'd["predicted"]["measured_ns"]'
echo "# 4 dependent adds: measured $(jfield "$TMP/out" 'round(d["predicted"]["measured_ns"], 3)') ns an execution; the prediction holds at a $(jfield "$TMP/out" 'round(d["predicted"]["core_ghz_if_predicted"], 2)') GHz core clock"
run_pmon 0 bench --asm 'imul rax, rax' --predict -r 5 -n 100
check "a dependent imul: its latency (3 cycles or more) predicted" python3 -c '
import re, sys
m = re.search(r"^    ([0-9.]+) cycles an execution", open(sys.argv[1]).read(), re.M)
assert m and float(m.group(1)) >= 2.9, m and m.group(1)
' "$TMP/out"

# ---- annotate --mca on a simulated recording ------------------------------
if command -v valgrind >/dev/null 2>&1; then
	GEOM="--l1 32K,8,64 --ll 1M,16,64"
	export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}use_tls=0" # lib.sh's sim_setup
	run_pmon 0 simulate $GEOM -e Ir -o "$TMP/c.data" --mca chain -- "$W" chain 100000
	grep '^# pmon simulate --mca' "$TMP/out" | sed 's/.*hottest block/hottest block/' >"$TMP/sim.block"
	run_pmon 0 annotate -i "$TMP/c.data" --mca chain
	grep '^# pmon annotate --mca' "$TMP/out" | sed 's/.*hottest block/hottest block/' >"$TMP/ann.block"
	check "annotate --mca: the loop, executed 100,000 times (simulated)" grep -q "10 instructions, executed 100,000 times (simulated)" "$TMP/ann.block"
	check "annotate --mca finds the block simulate --mca finds" cmp -s "$TMP/sim.block" "$TMP/ann.block"
	check "annotate --mca: 8 cycles a trip predicted" grep -q "^# predicted: 8.0[0-9] cycles an iteration" "$TMP/out"
	check "annotate --mca: the simulated instructions an iteration beside it" grep -q "^# simulated: 10.00 instructions an iteration (1,000,000 executed in the block, exact; llvm-mca: 10.00); measured: none (valgrind counts instructions, not cycles" "$TMP/out"
	check "annotate --mca: llvm-mca's views" grep -q "Resource pressure" "$TMP/out"
else
	echo "ok - # SKIP valgrind is not installed (Debian package valgrind)"
fi

# ---- annotate --mca on a sampled recording ---------------------------------
if "$PMON" record -e cpu-clock -o "$TMP/r.data" -- "$W" chain 100000000 >/dev/null 2>"$TMP/rec.err"; then
	run_pmon 0 annotate -i "$TMP/r.data" --mca chain
	check "sampled: the loop from its closing jne, 10 instructions" grep -q "^# pmon annotate --mca chain: the hottest block of 'chain' in .*wl-simloop, 0x[0-9a-f]*-0x[0-9a-f]*, 10 instructions (sampled)" "$TMP/out"
	check "sampled: the samples in the block stated as the measurement" grep -q "measured: [0-9]* of the function's [0-9]* samples fell in the block" "$TMP/out"
	check "sampled, software events only: one line says no cycles were measured, and why" grep -q "; no measured cycles: the recording samples cpu-clock, not cycles and instructions (hardware events: 'pmon record -e cycles,instructions' where a PMU counts them)$" "$TMP/out"
	check "sampled: 8 cycles a trip predicted" grep -q "^# predicted: 8.0[0-9] cycles an iteration" "$TMP/out"
else
	echo "ok - # SKIP pmon record cannot sample cpu-clock here: $(head -c 200 "$TMP/rec.err")"
fi
run_pmon 2 annotate -i "$TMP/r.data" --mca --format json chain
one_line_error "--mca prints text"
finish
