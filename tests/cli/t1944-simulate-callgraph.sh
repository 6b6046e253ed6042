#!/bin/sh
# pmon simulate -g: call stacks from callgrind's contexts (--separate-callers),
# so report's call-graph views show the call tree with simulated costs:
# wl-stacks' known chain main -> outer -> middle -> inner (-> tick) in the
# folded output, the caller and callee graphs and the flame graph, each
# stack weighed by its simulated count; a node's total is exactly the sum of
# its subtree's self counts (report's own entries); threads and a fork get
# their own stacks; without -g, stacks are the leaf alone.
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"
S=$PMON_WORKLOADS/wl-stacks
sim_setup

run_pmon 0 simulate -g $GEOM -e Ir -o "$TMP/g.data" -- "$S" chain 20000
run_pmon 0 report -i "$TMP/g.data" --format json
cp "$TMP/out" "$TMP/entries.json"
run_pmon 0 report -i "$TMP/g.data" --format folded
cp "$TMP/out" "$TMP/folded"
check "folded: the chain main;outer;middle;inner, weighed by inner's simulated count" python3 - "$TMP/folded" "$TMP/entries.json" <<'PY'
import json, sys
folded = {}
for l in open(sys.argv[1]):
    stack, n = l.rsplit(" ", 1)
    folded[stack] = folded.get(stack, 0) + int(n)
e = {}
for x in json.load(open(sys.argv[2]))["entries"]:  # a name may be in two objects
    if x["event"] == "sim/instructions/":
        e[x["symbol"]] = e.get(x["symbol"], 0) + x["period"]
inner = {s: n for s, n in folded.items() if s.endswith(";main;outer;middle;inner")}
print("#", inner, "inner's self:", e["inner"])
assert len(inner) == 1 and list(inner.values())[0] == e["inner"], (inner, e["inner"])
assert e["inner"] > 20000 * 5, e["inner"]  # the loop: 20,000 trips of several instructions
tick = [n for s, n in folded.items() if s.endswith(";main;outer;middle;inner;tick")]
assert tick and tick[0] == e["tick"], (tick, e.get("tick"))
assert sum(folded.values()) == sum(e.values()), (sum(folded.values()), sum(e.values()))
PY

run_pmon 0 report -i "$TMP/g.data" --sort caller --format json --min-percent 0
check "caller graph: outer's total is the self counts of outer, middle, inner and tick" python3 - "$TMP/out" "$TMP/entries.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
e = {}
for x in json.load(open(sys.argv[2]))["entries"]:  # a name may be in two objects
    if x["event"] == "sim/instructions/":
        e[x["symbol"]] = e.get(x["symbol"], 0) + x["period"]
def find(nodes, name):
    for n in nodes:
        if n["symbol"] == name:
            return n
        f = find(n["callees"], name)
        if f:
            return f
outer = find(g["roots"], "outer")
want = sum(e.get(f, 0) for f in ("outer", "middle", "inner", "tick"))
print("# outer: total", outer["samples"], "self", outer["self"], "subtree's self", want)
assert outer["samples"] == want and outer["self"] == e["outer"], (outer["samples"], want)
middle = [n for n in outer["callees"] if n["symbol"] == "middle"]
assert middle and [n["symbol"] for n in middle[0]["callees"]][:1] == ["inner"], middle
PY
run_pmon 0 report -i "$TMP/g.data" --sort callee --min-percent 1
check "callee graph: inner, then middle, outer, main above it" python3 - "$TMP/out" <<'PY'
import sys
rows = [l.rstrip("\n") for l in open(sys.argv[1]) if not l.startswith("#")]
i = [k for k, l in enumerate(rows) if l.split()[2:3] == ["inner"]][0]
names = [rows[i].split()[2]] + [r.split()[1] for r in rows[i + 1:i + 4]]
print("#", rows[0])
assert names == ["inner", "middle", "outer", "main"], names
assert "simulated events" in open(sys.argv[1]).readline()
PY
run_pmon 0 report -i "$TMP/g.data" --format flamegraph
check "flame graph: inner's frame with its simulated count" grep -q "<title>inner (wl-stacks): [0-9]* simulated events" "$TMP/out"

# ---- threads and a fork ------------------------------------------------------
run_pmon 0 simulate -g $GEOM -e Ir -o "$TMP/t.data" -- "$S" threads 20000
run_pmon 0 report -i "$TMP/t.data" --format folded
check "threads: each thread's function under start_thread" grep -Eq ";start_thread;thread_a [0-9]+$" "$TMP/out"
check "threads: thread_b too" grep -Eq ";start_thread;thread_b [0-9]+$" "$TMP/out"
run_pmon 0 simulate -g $GEOM -e Ir -o "$TMP/f.data" -- "$S" fork 20000
run_pmon 0 report -i "$TMP/f.data" --format folded
check "fork: the child's stack, main;child_work" grep -Eq ";main;child_work [0-9]+$" "$TMP/out"
check "fork: the parent's stack, main;parent_work" grep -Eq ";main;parent_work [0-9]+$" "$TMP/out"

# ---- without -g: no call stacks ------------------------------------------------
run_pmon 0 simulate $GEOM -e Ir -o "$TMP/n.data" -- "$S" chain 2000
run_pmon 0 report -i "$TMP/n.data" --format folded
check "without -g: the leaf alone" grep -Eq "^inner [0-9]+$" "$TMP/out"
finish
