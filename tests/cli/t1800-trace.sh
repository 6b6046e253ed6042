#!/bin/sh
# pmon trace: a program with known trace hooks gives exact counts per
# channel (table, JSON, ticks view, Chrome JSON); a program without libpmon
# and bad input get one line; a damaged trace reports around the damage.
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"
W=$PMON_WORKLOADS/wl-tracehooks

# The workload's instrumented region becomes a span with its event's deltas.
PMON_EVENTS=page-faults PMON_OUTPUT=/dev/null run_pmon 0 trace -o "$TMP/t.trace" -- "$W" 300
check "trace says what it wrote" grep -q "events on 7 channels written to $TMP/t.trace (0 dropped)" "$TMP/err"
check "the trace file is 0600" [ "$(stat -c %a "$TMP/t.trace")" = 600 ]
run_pmon 0 trace report "$TMP/t.trace" --format json
check "JSON parses" json_ok "$TMP/out"
json_has "$TMP/out" \
	'[c for c in d["channels"] if c["channel"] == "outer" and c["spans"] == 600 and c["unmatched"] == 0]' \
	'[c for c in d["channels"] if c["channel"] == "inner" and c["spans"] == 1200]' \
	'[c for c in d["channels"] if c["channel"] == "tick" and c["marks"] == 600]' \
	'[c for c in d["channels"] if c["channel"] == "depth" and c["counters"] == 600 and c["counter_max"] == 2**40]' \
	'[c for c in d["channels"] if c["channel"] == "setup" and c["spans"] == 1]' \
	'[c for c in d["channels"] if c["channel"] == "region-a" and c["spans"] == 5]' \
	'[c for c in d["channels"] if c["channel"] == "region-a/page-faults" and c["counters"] == 5]' \
	'd["dropped"] == 0 and d["complete"] and d["events"] == 2 + 2 * 300 * 8 + 5 * 3' \
	'[c for c in d["channels"] if c["channel"] == "outer" and c["min_ns"] <= c["median_ns"] <= c["p99_ns"] <= c["max_ns"]]'
check "an outer span is longer than the two inner spans in it" python3 -c '
import json, sys
d = {c["channel"]: c for c in json.load(open(sys.argv[1]))["channels"]}
assert d["outer"]["total_ns"] > d["inner"]["total_ns"] > 0, d
' "$TMP/out"

run_pmon 0 trace report "$TMP/t.trace"
check "table has a row per channel" sh -c "grep -cE '^  (outer|inner|tick|depth|setup|region-a|region-a/page-faults) ' '$TMP/out' | grep -qx 7"
check "table states the clock alignment" grep -q "aligned with CLOCK_MONOTONIC to +-" "$TMP/out"

run_pmon 0 trace report "$TMP/t.trace" --format ticks --width 60
check "ticks view: one 60-column row per channel" sh -c "awk 'NR > 1 && length(\$0) != 60 {bad=1} END {exit bad || NR != 8}' '$TMP/out'"
check "outer shows spans" grep -Eq '^outer +[.#]*#' "$TMP/out"
check "tick shows instants" grep -Eq '^tick +[.|]*\|' "$TMP/out"

run_pmon 0 trace report "$TMP/t.trace" --format chrome-json -o "$TMP/t.json"
check "Chrome JSON: every begin and end of outer" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
b = sum(1 for e in ev if e["name"] == "outer" and e["ph"] == "B")
e = sum(1 for e in ev if e["name"] == "outer" and e["ph"] == "E")
c = [e for e in ev if e["ph"] == "C" and e["name"] == "depth"]
assert b == e == 600 and len(c) == 600 and all("value" in x["args"] for x in c), (b, e, len(c))
assert sum(1 for e in ev if e["name"] == "region-a" and e["ph"] == "B") == 5
assert len({x["tid"] for x in ev}) == 3
' "$TMP/t.json"
check "Chrome JSON: each hooks' thread's lane named by its thread name" python3 -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["tid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
lanes = {e["tid"] for e in ev if e["ph"] != "M"}
assert set(names) == lanes, (names, lanes)
assert sorted(n.rsplit(" ", 1)[0] for n in names.values()) == ["hooks-1", "hooks-2", "wl-tracehooks"], names
assert all(n.rsplit(" ", 1)[1] == str(t) for t, n in names.items()), names
' "$TMP/t.json"

# Perfetto's protobuf format: protoc decodes it with the schema subset pmon
# keeps, and the slices convert back to the same spans per channel.
run_pmon 0 trace report "$TMP/t.trace" --format perfetto -o "$TMP/t.pftrace"
if command -v protoc >/dev/null; then
	protoc --decode=perfetto.protos.Trace -I"$PMON_SRC/tests/perfetto" \
		"$PMON_SRC/tests/perfetto/trace-subset.proto" <"$TMP/t.pftrace" >"$TMP/pf.txt" 2>"$TMP/pf.err"
	check "protoc decodes the Perfetto trace" [ $? -eq 0 ]
	check "Perfetto slices are the same spans" python3 -c '
import re, sys, collections
t = open(sys.argv[1]).read()
names = dict(re.findall(r"event_names \{ iid: (\d+) name: \"([^\"]*)\"", re.sub(r"\s+", " ", t)))
pk = re.split(r"\npacket \{", "\n" + t)
begins, ends, counters, threads = collections.Counter(), 0, 0, 0
for p in pk:
    if "TYPE_SLICE_BEGIN" in p:
        begins[names[re.search(r"name_iid: (\d+)", p).group(1)]] += 1
    ends += "TYPE_SLICE_END" in p
    counters += "TYPE_COUNTER" in p
    threads += "thread {" in p
assert begins == {"outer": 600, "inner": 1200, "setup": 1, "region-a": 5}, begins
assert ends == 1806 and counters == 605 and threads == 3, (ends, counters, threads)
' "$TMP/pf.txt"
	check "Perfetto: each thread descriptor carries its thread name" python3 -c '
import re, sys
t = open(sys.argv[1]).read()
n = re.findall(r"thread \{\s*pid: \d+\s*tid: \d+\s*thread_name: \"([^\"]*)\"", t)
assert sorted(n) == ["hooks-1", "hooks-2", "wl-tracehooks"], n
' "$TMP/pf.txt"
fi

# A damaged middle: reported around it, with one warning.
python3 - "$TMP/t.trace" "$TMP/bad.trace" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[len(b) // 2] ^= 0xff
open(sys.argv[2], "wb").write(b)
PY
run_pmon 0 trace report "$TMP/bad.trace" --format json
check "damaged trace: one warning naming the skipped chunk" grep -q "damaged chunks" "$TMP/err"
check "and the rest reported" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["damaged_chunks"] == 1 and 0 < d["events"] < 4817, d["events"]
' "$TMP/out"

# Bad input: one line each.
# No hooks and no -e: its sched and syscalls where they can be recorded
# (t1812), else one line, exit 3; --hooks alone: no kernel events, exit 1.
"$PMON" trace -o "$TMP/none.trace" -- true >"$TMP/out" 2>"$TMP/err"
case $? in
0) check "no hooks, no -e: says it recorded the default channels" grep -q "^pmon trace: 'true' has no hooks" "$TMP/err" ;;
3) one_line_error "'true' wrote no trace: it has no hooks (not linked with libpmon) and its kernel events (-e sched,syscalls) cannot be recorded here" ;;
*) not_ok "no hooks, no -e: exit $? is neither 0 nor 3" ;;
esac
run_pmon 1 trace --hooks -o "$TMP/none.trace" -- true
one_line_error "'true' wrote no trace: it is not linked with libpmon"
run_pmon 2 trace report "$TMP/t.trace" --format svgz
one_line_error "unknown format 'svgz'"
printf 'garbage' >"$TMP/g.trace"
run_pmon 2 trace report "$TMP/g.trace"
one_line_error "is not a pmon trace"
run_pmon 2 trace report "$TMP/missing.trace"
one_line_error "cannot read trace"
# A full disk: one line, the file and the write's own reason (issue #28.9:
# the Perfetto export said it twice, the second "Input/output error"; the
# Chrome JSON said nothing). Both outputs are larger than stdio's buffer.
for f in perfetto chrome-json; do
	run_pmon 1 trace report "$TMP/t.trace" --format $f -o /dev/full
	one_line_error "cannot write '/dev/full': No space left on device"
	"$PMON" trace report "$TMP/t.trace" --format $f >/dev/full 2>"$TMP/err"
	check "$f to a full standard output exits 1" [ $? -eq 1 ]
	one_line_error "cannot write 'standard output': No space left on device"
done
run_pmon 2 trace -o /nonexistent/dir/t.trace -- "$W"
check "an unwritable trace file is refused before running" sh -c "grep -q '^pmon: ' '$TMP/err' && [ ! -e /nonexistent/dir ]"
run_pmon 2 trace
one_line_error "give a command to trace"
run_pmon 3 trace -o "$TMP/x.trace" -- sh -c 'exit 3'
finish
