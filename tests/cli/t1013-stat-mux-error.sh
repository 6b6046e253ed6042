#!/bin/sh
# Multiplexed counts carry their error (issue 29): a row that ran part of
# the time it was enabled shows "+- N" in the table, one more CSV field and
# "mux-error" in JSON; a fully running event shows none. Software events
# never multiplex; where a PMU exists, more hardware events than counters
# force it. Counts and fields only, never values.
. "$(dirname "$0")/lib.sh"

run_pmon 0 stat --json -e task-clock,page-faults -r 2 -- true
check "JSON: fully running events carry no error estimate" python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip().startswith("{")]
ev = [r for r in rows if "event" in r]
assert len(ev) == 2, ev
for r in ev:
    assert r["pcnt-running"] == 100 and "mux-error" not in r, r
' "$TMP/err"
run_pmon 0 stat -x, -e task-clock,page-faults -- true
check "CSV: fully running rows keep perf's 7 fields" awk -F, '
	$3 == "task-clock" || $3 == "page-faults" { if (NF != 7) exit 1; c++ }
	END { exit c != 2 }' "$TMP/err"
run_pmon 0 stat -e task-clock,page-faults -- true
check "table: no estimate on fully running rows" sh -c '! grep -q "+- " "$1"' _ "$TMP/err"

# Hardware: 12 generic events on a PMU with fewer counters multiplex.
evs=cycles,instructions,branches,branch-misses,cache-references,cache-misses
evs=$evs,$evs
if "$PMON" stat -e cycles -- true >/dev/null 2>&1; then
	run_pmon 0 stat --json -e "$evs" -- sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done'
	check "JSON: a multiplexed row has mux-error >= 0, a full one none" python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip().startswith("{")]
for r in rows:
    if r.get("status") != "counted":
        continue
    if r["pcnt-running"] < 99.995 and r["event-runtime"] > 0:
        assert r["mux-error"] >= 0, r
    else:
        assert "mux-error" not in r or r["pcnt-running"] < 100, r
' "$TMP/err"
	# -I --summary: the total's error takes the intervals' rates
	# (docs/stat-json.md): at least as large as their counting noise, so
	# a multiplexed total row carries one.
	run_pmon 0 stat --json -I 20 --summary -e "$evs" -- sh -c 'i=0; while [ $i -lt 40000 ]; do i=$((i+1)); done'
	check "-I --summary JSON: a multiplexed total row has mux-error" python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip().startswith("{")]
tot = [r for r in rows if "event" in r and "interval" not in r and r.get("status") == "counted"]
assert tot, rows
for r in tot:
    if r["pcnt-running"] < 99.995 and r["event-runtime"] > 0:
        assert r["mux-error"] >= 0, r
' "$TMP/err"
else
	ok "# SKIP multiplexed rows: this machine exposes no hardware PMU"
fi
# -I --summary of events that ran all the time: no error on any row.
run_pmon 0 stat --json -I 20 --summary -e task-clock,page-faults -- sleep 0.05
check "-I --summary JSON: fully running totals carry no error estimate" python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip().startswith("{")]
tot = [r for r in rows if "event" in r and "interval" not in r]
assert len(tot) == 2, tot
assert all("mux-error" not in r for r in tot), tot
' "$TMP/err"
finish
