#!/bin/sh
# pmon stat --simulate: the stat table of simulated totals in stat's three
# forms (table, -x SEP, --json), marked as simulated, row for row in the
# shape pmon stat prints a counted event (same CSV fields, the JSON keys of
# docs/stat-json.md); the totals are the engine's (a loop of N more trips
# adds exactly 2N instructions: dec + jnz); -o FILE; refused options and a
# missing engine are one-line errors.
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"
W=$PMON_WORKLOADS/wl-simloop
sim_setup

# ---- the table ------------------------------------------------------------
run_pmon 0 stat --simulate -e sim/instructions/,D1mr -- "$W" spin 1000
check "the slowdown is announced" grep -q "simulating with callgrind (/.*): expect 20-100x slower" "$TMP/err"
check "table: marked as simulated" grep -q "^ Performance counter stats for '.*wl-simloop spin 1000' (simulated):" "$TMP/err"
check "table: says which engine and caches" grep -q "^# simulated by callgrind (L1i .* from CPUID" "$TMP/err"
check "table: stat's row shape with sim/ names" grep -Eq "^ +[0-9]+       sim/instructions/ +# instructions executed" "$TMP/err"
check "table: the engine's name maps to pmon's" grep -Eq "^ +[0-9]+       sim/L1-dcache-load-misses/" "$TMP/err"
check "table: elapsed under the engine" grep -q "seconds time elapsed (under the engine)" "$TMP/err"
check "no recording written" [ ! -e pmon.data ]

# ---- -x: perf's seven CSV fields, as pmon stat's own rows ------------------
run_pmon 0 stat --simulate -x, -e instructions -- "$W" spin 100000
grep -v '^#' "$TMP/err" | grep -v '^pmon simulate:' >"$TMP/sim.csv"
check "-x: one row" [ "$(wc -l <"$TMP/sim.csv")" -eq 1 ]
check "-x: value,,sim/instructions/,0,100.00,," grep -Eq '^[0-9]+,,sim/instructions/,0,100.00,,$' "$TMP/sim.csv"
check "-x: a '# simulated by' line first" grep -q "^# simulated by callgrind" "$TMP/err"
"$PMON" stat -x, -e task-clock -- true 2>"$TMP/real.csv"
check "-x: as many fields as pmon stat's own row" [ "$(awk -F, '{print NF}' "$TMP/sim.csv")" -eq "$(grep task-clock "$TMP/real.csv" | awk -F, '{print NF}')" ]
I100K=$(cut -d, -f1 "$TMP/sim.csv")

# ---- --json -o FILE: stat's keys, plus simulated ---------------------------
run_pmon 0 stat --simulate --json -o "$TMP/sim.json" -e Ir -- "$W" spin 300000
check "--json -o: nothing but the announcement on stderr" [ "$(grep -vc '^pmon simulate:' "$TMP/err")" -eq 0 ]
"$PMON" stat --json -e task-clock -- true 2>"$TMP/real.json"
check "--json: stat's keys, simulated, the engine's exact count (2 x 200,000 more trips)" python3 - "$TMP/sim.json" "$TMP/real.json" "$I100K" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
real = [json.loads(l) for l in open(sys.argv[2])]
ev = [r for r in rows if "event" in r]
assert len(ev) == 1 and ev[0]["event"] == "sim/instructions/", rows
r = ev[0]
assert r["simulated"] is True and r["engine"] == "callgrind", r
stat_row = [x for x in real if x.get("event") == "task-clock"][0]
for k in ("counter-value", "unit", "event", "event-runtime", "pcnt-running", "status", "value"):
    assert k in r, k
    assert k in stat_row, k
assert r["status"] == "counted"
assert float(r["counter-value"]) == r["value"]
d = r["value"] - int(sys.argv[3])
print("# spin 300000 - spin 100000 = %d instructions" % d)
assert d == 400000, d
summ = [x for x in rows if x.get("type") == "summary"]
assert summ and summ[0]["simulated"] is True and summ[0]["elapsed"] > 0, rows
PY

# ---- the same totals as pmon simulate --stat -------------------------------
run_pmon 0 simulate --stat -x, -e instructions -- "$W" spin 100000
check "simulate --stat gives the same total" [ "$(grep -E '^[0-9]+,' "$TMP/err" | cut -d, -f1)" = "$I100K" ]

# ---- errors ------------------------------------------------------------------
run_pmon 2 stat --simulate -r 3 -- "$W" spin 10
one_line_error "--simulate runs a command under the engine"
run_pmon 2 stat --simulate -e cycles -- "$W" spin 10
check "a hardware event: one error line naming it" grep -q "^pmon: .*cycles" "$TMP/err"
run_pmon 2 stat --simulate
one_line_error "nothing to count"
mkdir "$TMP/bin"
PATH=$TMP/bin "$PMON" stat --simulate -- "$W" spin 10 >"$TMP/out" 2>"$TMP/err"
check "no valgrind: exit 3" [ $? -eq 3 ]
one_line_error "(Debian package 'valgrind')"
finish
