#!/bin/sh
# Empty regions after the overhead subtraction (issue 29): no statistic or
# total is printed below 0 unless marked as within, or beyond, the
# overhead's error; the raw totals stay exact and the corrected total never
# exceeds them. Invariants only: timings on a loaded machine vary.
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"
W=$PMON_WORKLOADS/wl-emptyregions

run_pmon 0 stat --regions --json -e task-clock,page-faults -- "$W" 100000
check "JSON: empty regions never negative unmarked" python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
reg = [r for r in rows if r.get("schema") == "pmon-regions/1"][0]
by = {r["name"]: r for r in reg["regions"]}
assert by["empty"]["pairs"] == 100000, by["empty"]
for name, ov in reg["overhead_spread"].items():
    assert ov["median"] >= ov["subtracted"] and ov["p95"] >= ov["median"], (name, ov)
    assert ov["error"] >= 0, (name, ov)
for m in by["empty"]["metrics"]:
    assert isinstance(m["raw_total"], int) and m["raw_total"] >= 0, m
    assert m["total"] <= m["raw_total"], m
    assert m["min"] <= m["mode"] <= m["max"], m
    if m.get("clamped") == "beyond-error":
        continue
    for k in ("total", "median", "mode", "mean", "min", "p5", "p95", "max"):
        assert m[k] >= 0, (k, m)
' "$TMP/err"

run_pmon 0 stat --regions -e task-clock -- "$W" 100000
# Every negative number in the table's "empty" rows is followed by a note
# saying it lies beyond the overhead's spread.
check "table: a negative value comes with its reason" awk '
	/^empty / || (in_rows && /^ +(task-clock) /) {
		in_rows = 1
		for (i = 4; i <= NF; i++) if ($i ~ /^-[0-9]/) neg = 1
		next
	}
	/beyond|more than the overhead/ { said = 1 }
	END { exit neg && !said }' "$TMP/err"
check "table: raw total column stated" grep -q "raw total" "$TMP/err"
check "table: overhead spread stated" grep -q "5th percentile of 2000 empty pairs" "$TMP/err"

run_pmon 0 stat --regions -x, -e task-clock -- "$W" 1000
check "CSV: raw_total, clamped and error fields" awk -F, '
	/^region,id,/ { n = NF; ok = ($22 == "raw_total" && $23 == "clamped" && $24 == "error"); next }
	n && /^empty,/ { if (NF != n || $22 !~ /^[0-9]+$/ || $24 < 0) exit 1; c++ }
	END { exit !(ok && c == 2) }' "$TMP/err"
finish
