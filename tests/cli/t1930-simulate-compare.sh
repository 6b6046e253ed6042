#!/bin/sh
# pmon simulate --compare: a sampling recording beside the simulation of
# the same program. Where a PMU exists the recording is of cycles; here
# (no PMU) of cpu-clock, which compares the same way (time against
# instructions). The arithmetic is checked against both reports: each
# function's measured share is its share of the recording's user-space
# period, its simulated share its share of the simulated instructions.
# The refusals: an event with no simulated counterpart, a missing file.
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"
W=$PMON_WORKLOADS/wl-simloop
sim_setup
N=5000000

if "$PMON" record -e cycles -o "$TMP/hw.data" -- "$W" spin $N >/dev/null 2>&1; then
	EV=cycles
else
	echo "ok - # SKIP cycles: this machine has no PMU; cpu-clock stands in (time against instructions)"
	EV=cpu-clock
fi
run_pmon 0 record -e $EV -F 4000 -o "$TMP/rec.data" -- "$W" spin $N
run_pmon 0 report -i "$TMP/rec.data" --format json
cp "$TMP/out" "$TMP/rec.json"
run_pmon 0 simulate $GEOM -e sim/L1-dcache-loads/ --compare "$TMP/rec.data" --json -o "$TMP/sim.data" -- "$W" spin $N
cp "$TMP/out" "$TMP/cmp.jsonl"
run_pmon 0 report -i "$TMP/sim.data" --format json
cp "$TMP/out" "$TMP/sim.json"
check "--compare: the counterpart is simulated though -e named another, rows are each side's shares" \
	python3 - "$TMP/cmp.jsonl" "$TMP/rec.json" "$TMP/sim.json" "$EV" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
rec, sim, ev = json.load(open(sys.argv[2])), json.load(open(sys.argv[3])), sys.argv[4]
def shares(d, event):
    t = {}
    for e in d["entries"]:
        if e["event"] == event and not e["dso"].startswith("[kernel"):
            t[e["symbol"]] = t.get(e["symbol"], 0) + e["period"]
    total = sum(t.values())
    return {k: 100.0 * v / total for k, v in t.items()}
m, s = shares(rec, ev), shares(sim, "sim/instructions/")
by = {r["function"]: r for r in rows}
assert set(by) == set(m) | set(s), (set(by) ^ (set(m) | set(s)))
for f, r in by.items():
    assert r["measured_event"] == ev and r["simulated_event"] == "sim/instructions/", r
    assert abs(r["measured"] - m.get(f, 0)) < 1e-6 and abs(r["simulated"] - s.get(f, 0)) < 1e-6, (f, r)
    assert abs(r["diff"] - (r["simulated"] - r["measured"])) < 1e-9
print("# spin: measured %.2f%%, simulated %.2f%%" % (by["spin"]["measured"], by["spin"]["simulated"]))
assert by["spin"]["simulated"] > 95.0, by["spin"]  # 10M of the loop, ~0.2M of start-up
# ordered by the size of the disagreement
d = [abs(r["diff"]) for r in rows]
assert d == sorted(d, reverse=True)
PY
run_pmon 0 simulate $GEOM --compare "$TMP/rec.data" -o "$TMP/sim2.data" -- "$W" spin 1000
check "table: says what is measured and what simulated" grep -q "^# measured: $EV in '.*rec.data' ([0-9]* samples); simulated: sim/instructions/ (callgrind)" "$TMP/out"
check "table: spin's row, with the simulated L1 and LL misses' shares" grep -Eq "^ +[0-9.]+% +[0-9.]+% +[0-9.]+% +[0-9.]+% +[-+][0-9.]+  spin" "$TMP/out"
check "table: the miss columns named" grep -q "^# L1 misses: the function's share of sim/L1-dcache-load-misses/ (simulated)" "$TMP/out"
# The misses beside the pair (issue #17): each function's share of the
# simulation's own L1 and LL read misses, as its report gives them.
run_pmon 0 simulate $GEOM --compare "$TMP/rec.data" --json -o "$TMP/sim3.data" -- "$W" spin 1000
cp "$TMP/out" "$TMP/cmp3.jsonl"
run_pmon 0 report -i "$TMP/sim3.data" --format json
check "--json: simulated_misses are the simulation's shares of its misses" python3 - "$TMP/cmp3.jsonl" "$TMP/out" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
sim = json.load(open(sys.argv[2]))
def shares(event):
    t = {}
    for e in sim["entries"]:
        if e["event"] == event and not e["dso"].startswith("[kernel"):
            t[e["symbol"]] = t.get(e["symbol"], 0) + e["period"]
    total = sum(t.values())
    return {k: 100.0 * v / total for k, v in t.items()}
for ev in ("sim/L1-dcache-load-misses/", "sim/LLC-load-misses/"):
    want = shares(ev)
    assert want, ev
    for r in rows:
        assert abs(r["simulated_misses"][ev] - want.get(r["function"], 0)) < 1e-6, (ev, r)
    assert abs(sum(r["simulated_misses"][ev] for r in rows) - 100) < 1e-6
PY

# Refusals, before anything is simulated.
run_pmon 0 record -e page-faults -o "$TMP/pf.data" -- "$W" spin 1000
run_pmon 2 simulate $GEOM --compare "$TMP/pf.data" -- "$W" spin 1000
one_line_error "--compare: 'page-faults' has no simulated counterpart"
run_pmon 2 simulate $GEOM --compare "$TMP/nonexistent.data" -- "$W" spin 1000
one_line_error "--compare '$TMP/nonexistent.data': No such file or directory"
finish
