#!/bin/sh
# pmon simulate (valgrind's callgrind): the instruction count of a known
# loop is exact (against callgrind_annotate and against objdump's loop
# body x trips), cache misses of a strided walk follow the configured
# geometry, report ranks functions as callgrind_annotate does, annotate
# counts per instruction, --stat in its three forms, and the errors: no
# valgrind, no command, a bad geometry, a signal death, an interrupt.
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"
W=$PMON_WORKLOADS/wl-simloop
sim_setup

# cga DIR: callgrind_annotate's self instruction counts per function, as
# "name count" lines in $TMP/cga.txt. It splits a function by source file
# (inlined code), and names a function re-entered by a jump to its first
# instruction "name'2": both summed back into the function.
cga() {
	callgrind_annotate --show=Ir --threshold=100 --inclusive=no "$1"/callgrind.out.* 2>/dev/null |
		python3 -c '
import re, sys
t = {}
for line in sys.stdin:
    m = re.match(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(\S+?)(\s+\[.*\])?\s*$", line)
    if m and ":" in m.group(2) and "PROGRAM" not in line:
        fn = re.sub(r"\x27\d+$", "", m.group(2).rsplit(":", 1)[1])
        t[fn] = t.get(fn, 0) + int(m.group(1).replace(",", ""))
for k, v in t.items():
    print(k, v)
' >"$TMP/cga.txt"
}

# ---- the exact instruction count of a known loop ----------------------
N=200000
run_pmon 0 simulate $GEOM -e sim/instructions/ -o "$TMP/spin.data" --callgrind-dir "$TMP/cg" -- "$W" spin $N
check "the slowdown is announced, naming the valgrind run" grep -qF "simulating with callgrind ($(command -v valgrind)): expect 20-100x slower" "$TMP/err"
run_pmon 0 report -i "$TMP/spin.data" --format json
cp "$TMP/out" "$TMP/spin.json"
cga "$TMP/cg"
objdump -d --no-show-raw-insn "$W" >"$TMP/objdump"
check "spin's Ir equals callgrind_annotate's and objdump's body x $N + the rest" python3 - "$TMP/spin.json" "$TMP/cga.txt" "$TMP/objdump" $N <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
n = int(sys.argv[4])
ours = sum(e["period"] for e in d["entries"] if e["symbol"] == "spin")
theirs = dict((l.split()[0], int(l.split()[1])) for l in open(sys.argv[2])).get("spin")
# spin's instructions from objdump; the loop is from the jump's target to the jump
insns, inside = [], False
for line in open(sys.argv[3]):
    if re.match(r"^[0-9a-f]+ <spin>:", line):
        inside = True
        continue
    if inside:
        m = re.match(r"^\s+([0-9a-f]+):\s+(\S+)\s*(.*)$", line)
        if not m:
            break
        insns.append((int(m.group(1), 16), m.group(2), m.group(3)))
jumps = [(a, int(re.match(r"([0-9a-f]+)", ops).group(1), 16)) for a, mn, ops in insns
         if mn.startswith("j") and re.match(r"[0-9a-f]+ <", ops)]
back = [(a, t) for a, t in jumps if t < a]
assert len(back) == 1, insns
a, t = back[0]
body = sum(1 for x, _, _ in insns if t <= x <= a)
# straight-line code around the loop runs once, up to and including ret
ret = [x for x, mn, _ in insns if mn.startswith("ret")][0]
once = sum(1 for x, _, _ in insns if x <= ret and not (t <= x <= a))
expected = once + body * n
print("# pmon %d, callgrind_annotate %d, objdump %d x %d + %d = %d" % (ours, theirs, body, n, once, expected))
assert ours == theirs == expected, (ours, theirs, expected)
PY
run_pmon 0 annotate -i "$TMP/spin.data" --format json spin
check "annotate: the loop's instructions carry $N each" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
per = [i["period"] for i in d["instructions"]]
assert per.count(int(sys.argv[2])) == 2 and d["symbol"] == "spin", per
# shares of the simulated counts, not of the records (one per instruction)
pct = [i["percent"] for i in d["instructions"] if i["period"] == int(sys.argv[2])]
assert d["period"] == sum(per) and all(abs(p - 100.0 * int(sys.argv[2]) / d["period"]) < 0.01 for p in pct) and min(pct) > 45, pct
' "$TMP/out" $N
run_pmon 0 annotate -i "$TMP/spin.data" spin
check "annotate text lists spin's instructions" grep -q "dec" "$TMP/out"

# ---- function ranking equals callgrind_annotate's ---------------------
rm -rf "$TMP/cg"
run_pmon 0 simulate $GEOM -o "$TMP/rank.data" --callgrind-dir "$TMP/cg" -- "$W" rank
run_pmon 0 report -i "$TMP/rank.data" --format json
cp "$TMP/out" "$TMP/rank.json"
cga "$TMP/cg"
check "the top functions by instructions are callgrind_annotate's, with the same counts" python3 - "$TMP/rank.json" "$TMP/cga.txt" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
ours = {}
for e in d["entries"]:
    if e["event"] == "sim/instructions/" and e["symbol"] != "[unknown]":
        ours[e["symbol"]] = ours.get(e["symbol"], 0) + e["period"]
theirs = dict((l.split()[0], int(l.split()[1])) for l in open(sys.argv[2]))
top = lambda t: sorted(t.items(), key=lambda kv: -kv[1])[:5]
print("# pmon", top(ours))
print("# callgrind_annotate", top(theirs))
assert top(ours) == top(theirs)
# hot_a's work is in spin (its tail call)
assert [k for k, _ in top(ours)[:3]] == ["spin", "hot_b", "hot_c"]
PY

# ---- misses follow the geometry -----------------------------------------
# One load per 64-byte line, 20 passes: 16K fits the 32K L1 (misses only on
# the first pass), 256K does not (a miss per load) but fits the 1M LL,
# 4M fits neither (an LL miss per load).
walk() { # BYTES -> loads, L1 misses, LL misses of walk()
	"$PMON" simulate $GEOM -e sim/L1-dcache-loads/,sim/L1-dcache-load-misses/,sim/LLC-load-misses/ \
		-o "$TMP/walk.data" -- "$W" walk "$1" 64 "$2" 2>"$TMP/err" &&
		"$PMON" report -i "$TMP/walk.data" --format json >"$TMP/walk.json" &&
		python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
v = {e["event"]: e["period"] for e in d["entries"] if e["symbol"] == "walk"}
print(v.get("sim/L1-dcache-loads/", 0), v.get("sim/L1-dcache-load-misses/", 0), v.get("sim/LLC-load-misses/", 0))
' "$TMP/walk.json"
}
set -- $(walk 16384 20)
echo "# 16K x 20: loads ${1:-?}, L1 misses ${2:-?}, LL misses ${3:-?}"
check "16K in a 32K L1: under 6% of loads miss" [ "${1:-0}" -ge 5120 ] && [ $(( ${2:-99999} * 100 )) -lt $(( ${1:-0} * 6 )) ]
# --event takes the engine's name as the alias it is: the same folded
# stacks as pmon's name gives.
"$PMON" report -i "$TMP/walk.data" --format folded --event sim/L1-dcache-load-misses/ >"$TMP/f1" 2>&1
"$PMON" report -i "$TMP/walk.data" --format folded --event D1mr >"$TMP/f2" 2>&1
check "report --event D1mr is sim/L1-dcache-load-misses/" sh -c "[ -s '$TMP/f1' ] && cmp -s '$TMP/f1' '$TMP/f2' && ! cmp -s '$TMP/f1' /dev/null && grep -q walk '$TMP/f1'"
set -- $(walk 262144 20)
echo "# 256K x 20: loads ${1:-?}, L1 misses ${2:-?}, LL misses ${3:-?}"
check "256K: over 95% of loads miss L1" [ "${1:-0}" -ge 81920 ] && [ $(( ${2:-0} * 100 )) -gt $(( ${1:-1} * 95 )) ]
check "256K in a 1M LL: under 6% miss the LL" [ $(( ${3:-99999999} * 100 )) -lt $(( ${1:-0} * 6 )) ]
set -- $(walk 4194304 3)
echo "# 4M x 3: loads ${1:-?}, L1 misses ${2:-?}, LL misses ${3:-?}"
check "4M: over 95% of loads miss the 1M LL" [ "${1:-0}" -ge 196608 ] && [ $(( ${3:-0} * 100 )) -gt $(( ${1:-1} * 95 )) ]

# ---- --stat ---------------------------------------------------------------
run_pmon 0 simulate $GEOM --stat -e Ir,D1mr -- "$W" spin 1000
check "stat: marked as simulated" grep -q "^# simulated by callgrind" "$TMP/err"
check "stat: sim/ names, grouped numbers" grep -Eq "^ +[0-9,]+ +sim/instructions/" "$TMP/err"
check "stat: no recording without -o" [ ! -e pmon.data ] || [ pmon.data -ot "$TMP/spin.data" ]
run_pmon 0 simulate $GEOM --stat -x, -e sim/instructions/ -- "$W" spin 1000
check "stat -x,: perf's CSV fields" grep -Eq "^[0-9]+,,sim/instructions/,0,100.00,," "$TMP/err"
run_pmon 0 simulate $GEOM --stat --json --branch -- "$W" spin 1000
check "stat --json: simulated rows" python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
assert rows[-1]["type"] == "summary" and rows[-1]["simulated"], rows[-1]
rows = rows[:-1]
names = [r["event"] for r in rows]
assert all(r["simulated"] and r["engine"] == "callgrind" for r in rows)
assert "sim/branch-misses/" in names and "sim/instructions/" in names, names
' "$TMP/err"

# ---- the engine found once, by an absolute path; temporary files in $TMPDIR --
# (valgrind found through a relative PATH entry: Debian's valgrind is a
# script that runs "$0.bin", so a link to it elsewhere would not do)
mkdir "$TMP/tmpdir"
VG=$(command -v valgrind)
(cd "$(dirname "$(dirname "$VG")")" && PATH=$(basename "$(dirname "$VG")"):$PATH \
	TMPDIR=$TMP/tmpdir "$PMON" simulate $GEOM -o "$TMP/t.data" -- \
	/bin/sh -c 'ls "$TMPDIR" >"$0"' "$TMP/seen" >"$TMP/out" 2>"$TMP/err")
check "a relative PATH entry: its valgrind is named by its absolute path" \
	grep -qF "simulating with callgrind ($VG)" "$TMP/err"
check "the run's directory is in \$TMPDIR" grep -q '^pmon-sim-' "$TMP/seen"
check "and removed at the end" [ -z "$(ls "$TMP/tmpdir")" ]
TMPDIR=$TMP/nonexistent "$PMON" simulate $GEOM -o "$TMP/t.data" -- /bin/true >"$TMP/out" 2>"$TMP/err"
check "a TMPDIR that does not exist: exit 1" [ $? -eq 1 ]
one_line_error "cannot make a temporary directory in '$TMP/nonexistent' (\$TMPDIR): No such file or directory"

# ---- errors -----------------------------------------------------------------
mkdir "$TMP/empty"
PATH=$TMP/empty "$PMON" simulate -- /bin/true >"$TMP/out" 2>"$TMP/err"
check "no valgrind on PATH: exit 3" [ $? -eq 3 ]
one_line_error "Debian package 'valgrind'"
run_pmon 127 simulate $GEOM -- /nonexistent/prog
one_line_error "cannot run '/nonexistent/prog'"
run_pmon 2 simulate --l1 48K,12,64 --ll 30M,12,64 -- "$W" spin 1
one_line_error "not a power of two"
run_pmon 2 simulate --l1 0,8,64 --ll 1M,16,64 -- "$W" spin 1
one_line_error "must not be zero"
run_pmon 2 simulate --l1 32K,8,48 --ll 1M,16,64 -- "$W" spin 1
one_line_error "line size 48"
run_pmon 2 simulate --l1 32K,8,64 -- "$W" spin 1
one_line_error "--l1 and --ll go together"
run_pmon 2 simulate -e sim/bogus/ -- "$W" spin 1
one_line_error "'sim/bogus/' is not a simulated event"
run_pmon 2 simulate --cpuid-file /nonexistent/dump -- "$W" spin 1
check "a missing dump is one line" [ "$(wc -l <"$TMP/err")" -eq 1 ]
run_pmon 0 simulate --cpuid-file "$PMON_CPUID_DIR/intel-core-i9-12900k-alderlake-pcore.txt" --stat -e Ir -- "$W" spin 10
check "geometry from a dump: Alder Lake P-core's L1d" grep -q "L1d 48K 12-way 64B" "$TMP/err"
check "its 30M 12-way L3 is simulated with 15 ways" grep -q "simulated with 15 ways" "$TMP/err"

# A signal death: the status is passed on, what was simulated is kept.
run_pmon 139 simulate $GEOM -o "$TMP/segv.data" -- "$W" segv
check "signal death: one line naming the signal" grep -q "^pmon: '.*wl-simloop' was killed by signal 11" "$TMP/err"
run_pmon 0 report -i "$TMP/segv.data" --format json
check "signal death: the recording holds spin" grep -q '"symbol": "spin"' "$TMP/out"

# An interrupt sent to pmon: passed to valgrind, which writes what it has.
rm -f "$TMP/started"
"$PMON" simulate $GEOM -o "$TMP/int.data" -- "$W" forever "$TMP/started" >/dev/null 2>"$TMP/err" &
pid=$!
i=0
while [ ! -e "$TMP/started" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
kill -INT $pid
wait $pid
check "interrupted: exit 130" [ $? -eq 130 ]
check "interrupted: says so" grep -q "interrupted by signal 2: kept what was simulated" "$TMP/err"
run_pmon 0 report -i "$TMP/int.data" --format json
check "interrupted: the recording holds the spinning" grep -q '"symbol": "spin"' "$TMP/out"

finish
