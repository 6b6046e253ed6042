#!/bin/sh
# pmon simulate --regions: callgrind collects inside the region API's
# regions only (lib/region switches it with client requests), so a hot
# function outside every region reads zero; per region, the simulated
# instructions are the region's known loop (plus the few instructions of
# the switch), beside the region runtime's own TSC and task-clock figures.
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"
W=$PMON_WORKLOADS/wl-simregions
sim_setup
if [ -n "${PMON_USER_CFLAGS:-}" ]; then
	echo "1..0 # SKIP the region workload is built with sanitizers, which valgrind cannot run"
	exit 77
fi

# alpha: 3 pairs of spin(1000) = 6000 instructions in the loop; beta:
# spin(5000) and a nested alpha pair, spin(1000): 12000, all beta's (the
# outermost open region collects); outside(): 3 x 1000000 trips, outside.
run_pmon 0 simulate $GEOM --regions --json -e sim/instructions/,sim/LLC-load-misses/ \
	-o "$TMP/reg.data" -- "$W" 3 1000 5000
cp "$TMP/err" "$TMP/reg.err"
check "per region: the loops' instructions plus at most 300 a pair for the switch; measured figures beside" \
	python3 - "$TMP/reg.err" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
sim = {(r["region"], r["event"]): r["value"] for r in rows if r["simulated"]}
real = {(r["region"], r["event"]): r for r in rows if not r["simulated"]}
print("#", sim)
a, b = sim[("alpha", "sim/instructions/")], sim[("beta", "sim/instructions/")]
assert 6000 <= a <= 6000 + 3 * 300, a
assert 12000 <= b <= 12000 + 2 * 300 + 1000, b  # + the nested site's first id lookup
assert ("alpha", "sim/LLC-load-misses/") in sim
assert not any(r == "outside regions" for r, _ in sim), sim
# the region runtime counted its pairs (the nested one too) and measured them
assert real[("alpha", "tsc")]["pairs"] == 4 and real[("alpha", "tsc")]["value"] > 0
assert real[("beta", "task-clock")]["pairs"] == 1 and real[("beta", "task-clock")]["value"] > 0
PY
run_pmon 0 report -i "$TMP/reg.data" --format json
cp "$TMP/out" "$TMP/reg.json"
check "the recording: outside() reads zero, spin() is the regions' 18000 and its 5 calls' few more" \
	python3 - "$TMP/reg.json" "$TMP/reg.err" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ins = [e for e in d["entries"] if e["event"] == "sim/instructions/"]
by = {}
for e in ins:
    by[e["symbol"]] = by.get(e["symbol"], 0) + e["period"]
print("#", sorted(by.items(), key=lambda x: -x[1])[:5])
assert by.get("outside", 0) == 0, by
assert 18000 <= by["spin"] <= 18000 + 5 * 4, by["spin"]
rows = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")]
regions = sum(r["value"] for r in rows if r["simulated"] and r["event"] == "sim/instructions/")
assert sum(by.values()) == regions, (sum(by.values()), regions)
PY

# The same run without --regions: outside() is the bulk (what --regions removed).
run_pmon 0 simulate $GEOM -e sim/instructions/ -o "$TMP/all.data" -- "$W" 3 1000 5000
run_pmon 0 report -i "$TMP/all.data" --format json
check "without --regions: outside() reads its 3 x 2000000 instructions" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
v = sum(e["period"] for e in d["entries"] if e["symbol"] == "outside")
assert 6000000 <= v <= 6000000 + 3 * 4, v
' "$TMP/out"

# The table form names what is measured and what simulated.
run_pmon 0 simulate $GEOM --regions -e sim/instructions/ -o "$TMP/t.data" -- "$W" 1 100 100
check "table: marked as simulated inside regions" grep -q "^# simulated by callgrind inside regions only" "$TMP/err"
check "table: alpha's row (its pairs counted by the runtime: 2 with the nested one)" grep -Eq "^alpha +2 +sim/instructions/ +[0-9,]+$" "$TMP/err"
check "table: the measured TSC beside" grep -Eq "tsc \[ticks, measured\] +[0-9,]+$" "$TMP/err"

# A program without regions: nothing was simulated, said in one line.
run_pmon 1 simulate $GEOM --regions -o "$TMP/none.data" -- "$PMON_WORKLOADS/wl-simloop" spin 10
check "no regions: one line says why" grep -q "^pmon: no region was simulated: the program does not use pmon's region API" "$TMP/err"
run_pmon 2 simulate $GEOM --regions -x, -- "$W" 1 1 1
one_line_error "-x is a form of --stat"
finish
