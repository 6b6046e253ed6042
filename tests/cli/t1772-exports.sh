#!/bin/sh
# The call-graph views and the exports of issue #27: every one weighs a
# stack by the events its samples stand for (their periods), as the flat
# report and perf do; each is of one event (--event), named with its unit.
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"
T=$PMON_WORKLOADS/wl-touch

# Period weighting: page faults sampled by frequency (periods differ from
# sample to sample), so counting samples gives other shares than periods.
run_pmon 0 record -e page-faults -g -o "$TMP/pf.data" -- "$T" 20000
run_pmon 0 report -i "$TMP/pf.data" --format json -o "$TMP/flat.json"
run_pmon 0 report -i "$TMP/pf.data" --sort caller --format json --min-percent 0 -o "$TMP/caller.json"
run_pmon 0 report -i "$TMP/pf.data" --format folded -o "$TMP/folded"
check "touch's flat share (period) is its caller-view and folded share within 0.1 point" \
	python3 - "$TMP/flat.json" "$TMP/caller.json" "$TMP/folded" <<'PY'
import json, sys
flat = json.load(open(sys.argv[1])); cg = json.load(open(sys.argv[2]))
tot = sum(e["period"] for e in flat["entries"])
want = 100.0 * sum(e["period"] for e in flat["entries"] if e["symbol"] == "touch") / tot
def self_of(nodes, name):
    return sum((n["self"] if n["symbol"] == name else 0) + self_of(n["callees"], name) for n in nodes)
got_cg = 100.0 * self_of(cg["roots"], "touch") / cg["samples"]
st = [l.rsplit(" ", 1) for l in open(sys.argv[3])]
got_f = 100.0 * sum(int(n) for s, n in st if s.split(";")[-1] == "touch") / sum(int(n) for s, n in st)
by_count = 100.0 * sum(e["samples"] for e in flat["entries"] if e["symbol"] == "touch") / flat["samples"]
print("# touch: flat %.2f%%, caller %.2f%%, folded %.2f%% (by sample count %.2f%%)" % (want, got_cg, got_f, by_count))
assert cg["unit"] == "events", cg["unit"]
assert abs(want - got_cg) < 0.1 and abs(want - got_f) < 0.1, (want, got_cg, got_f)
PY

finish
