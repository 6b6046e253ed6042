#!/bin/sh
# pmon stat --regions: the command's instrumented regions, with the same
# events, come back with pmon's report, in every output format.
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"
W=$PMON_WORKLOADS/wl-regions

run_pmon 0 stat --regions -e page-faults,task-clock -- "$W" 100 4
check "table: regions header" grep -q "^pmon regions" "$TMP/err"
check "table: overhead stated" grep -q "overhead:  subtracted from every sample" "$TMP/err"
check "table: read path stated" grep -q "read with " "$TMP/err"
check "table: culling rule stated" grep -q "culling:" "$TMP/err"
check "table: faults region, 100 pairs" grep -Eq '^faults +100 tsc' "$TMP/err"
check "table: the stat counts are there too" grep -q "page-faults  " "$TMP/err"

run_pmon 0 stat --regions --json -e page-faults -- "$W" 100 4
check "JSON: a pmon-regions record with exact counts" python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
reg = [r for r in rows if r.get("schema") == "pmon-regions/1"][0]
by = {r["name"]: r for r in reg["regions"]}
m = {x["name"]: x for x in by["faults"]["metrics"]}
assert by["faults"]["pairs"] == 100, by["faults"]
assert m["page-faults"]["median"] == 16 and m["page-faults"]["total"] == 1600, m
assert by["inner"]["pairs"] == 200 and by["outer"]["pairs"] == 100
assert by["mt"]["pairs"] == 400 and by["mt"]["threads"] == 4
assert reg["events"] == [{"name": "page-faults", "read": "read"}] or reg["events"][0]["read"] == "rdpmc"
' "$TMP/err"

run_pmon 0 stat --regions -x, -e page-faults -- "$W" 10
check "CSV: region rows" grep -q '^faults,[0-9]*,10,1,page-faults,160,16.00' "$TMP/err"

# A program in a German locale (the workload calls setlocale(LC_ALL, "")):
# '.' decimals, and every region row has the header's number of fields.
if locale -a 2>/dev/null | grep -qi '^de_DE\.utf-\?8$'; then
	export LC_ALL=de_DE.UTF-8
	run_pmon 0 stat --regions -x, -e page-faults,task-clock -- "$W" 10
	unset LC_ALL
	check "German locale: region rows have the header's field count" awk -F, '
		/^region,id,/ { n = NF; next }
		n && /^(faults|inner|outer),/ { if (NF != n) exit 1; c++ }
		END { exit !(n == 24 && c == 9) }' "$TMP/err"
	check "German locale: '.' decimals" grep -q '^faults,[0-9]*,10,1,page-faults,160,16.00,' "$TMP/err"
else
	echo "ok # skip German locale: no de_DE.UTF-8 (make deps generates it as root)"
fi

run_pmon 0 stat --regions -e page-faults -- true
check "a command without regions: says so" grep -q "No regions were recorded" "$TMP/err"
run_pmon 2 stat --regions -p 1
one_line_error "--regions needs a command"
finish
