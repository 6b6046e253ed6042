#!/bin/sh
# pmon bench: linear (2k dependent adds measure twice k), stable (two runs
# agree), a C function from a shared object, JSON, and the assembler's own
# message for bad code. Ratios only: absolute times vary with the machine.
. "$(dirname "$0")/lib.sh"

median() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["tsc_per_iteration"]["median"])' "$1"; }
cpu=$(($(nproc) - 1))

"$PMON" bench --json --cpu $cpu --asm 'add rax, 1' -u 200 -n 2000 >"$TMP/k.json"
check "bench k runs" [ $? -eq 0 ]
"$PMON" bench --json --cpu $cpu --asm 'add rax, 1; add rax, 1' -u 200 -n 2000 >"$TMP/2k.json"
"$PMON" bench --json --cpu $cpu --asm 'add rax, 1' -u 200 -n 2000 >"$TMP/k2.json"
k=$(median "$TMP/k.json")
k2=$(median "$TMP/k2.json")
two=$(median "$TMP/2k.json")
# Documented tolerance: within 25% (a VM's timer steps and noise).
check "2k adds = 2 x k adds ($two vs $k)" python3 -c "import sys; sys.exit(not 1.5 <= $two / $k <= 2.5)"
check "two runs agree within 20% ($k vs $k2)" python3 -c "import sys; sys.exit(not abs($k - $k2) <= 0.2 * $k)"
check "JSON has median, mode, min, max" python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["tsc_per_iteration"]
assert all(k in t for k in ("median", "mode", "min", "max")) and t["min"] <= t["median"] <= t["max"]
' "$TMP/k.json"

# A C function from a shared object.
cat >"$TMP/f.c" <<'C'
volatile unsigned long x;
void spin(void) { for (int i = 0; i < 100; i++) x += i; }
C
cc -O2 -shared -fPIC -o "$TMP/f.so" "$TMP/f.c" && {
	run_pmon 0 bench --so "$TMP/f.so:spin" -u 10 -n 100
	check "--so: a table row" grep -q "TSC ticks" "$TMP/out"
}

# Errors: one line, exit 2.
run_pmon 2 bench --asm 'frobnicate rax'
one_line_error "the assembler rejected the code: no such instruction: \`frobnicate rax'"
run_pmon 2 bench --asm 'add rax, 1' --so x.so:f
one_line_error "give exactly one of --asm and --so"
run_pmon 2 bench --so "$TMP/f.so:nosuch"
one_line_error "has no function 'nosuch'"
run_pmon 2 bench --so /nonexistent.so:f
one_line_error "cannot load '/nonexistent.so'"
run_pmon 2 bench --asm 'add rax, 1' -u 0
one_line_error "--unroll and -n must be at least 1"
finish
