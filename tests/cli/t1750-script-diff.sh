#!/bin/sh
# pmon script and pmon diff on recordings of tests/workloads: script's
# fields, their order and format beside perf script's on a perf recording
# of the same workload, -F selection, the call chain's lines; diff of a
# recording with itself (all deltas 0), of hot-heavy against cold-heavy
# runs (the signs), folded diff lines summing to each file's samples, the
# differential flame graph parsed as XML; bad input gets one line.
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"
H=$PMON_WORKLOADS/wl-hotcold
N=100000000

run_pmon 0 record -o "$TMP/hot.data" -- "$H" $N
run_pmon 0 record -o "$TMP/cold.data" -- "$H" $N cold
run_pmon 0 record -g -o "$TMP/g.data" -- "$H" $N

F=comm,tid,time,period,event,ip,sym,symoff,dso
run_pmon 0 script -i "$TMP/hot.data" -F $F
cp "$TMP/out" "$TMP/script"
# perf script's layout: "%16s %5d %12s: %10u %s: %16x sym+0xoff (dso)".
re='^ {0,15}wl-hotcold +[0-9]+ +[0-9]+\.[0-9]{6}: +[0-9]+ cpu-clock: +[0-9a-f]+ [^ ]+ \(.+\)$'
check "script -F $F: every line in perf script's layout" \
	sh -c "[ -s '$TMP/script' ] && ! grep -Evq '$re' '$TMP/script'"
check "script: hot+0x.. (…/wl-hotcold) lines" grep -Eq ' hot\+0x[0-9a-f]+ \(.*/wl-hotcold\)$' "$TMP/script"
if command -v perf >/dev/null && perf_record -e cpu-clock -o "$TMP/perf.data" -- "$H" $N \
	>/dev/null 2>&1; then
	perf script -i "$TMP/perf.data" -F $F 2>/dev/null | grep ' hot+' | head -1 >"$TMP/perf.line"
	grep ' hot+' "$TMP/script" | head -1 >"$TMP/pmon.line"
	# The same columns at the same places: only the numbers differ.
	check "script: a hot sample's line is laid out as perf script's" python3 -c '
import re, sys
a, b = (open(f).read().rstrip("\n") for f in sys.argv[1:3])
# an offset (+0x1a, +0x7) is one token whatever its digits
mask = lambda s: re.sub(r"0x[0-9a-f]+|(?<![+\w])[0-9a-f]{4,}|[0-9]+",
                        lambda m: "0x#" if m.group().startswith("0x") else "#" * len(m.group()), s)
fa, fb = (re.split(r"(\s+)", mask(x)) for x in (a, b))
assert [t for t in fa if t.strip()][-3:] == [t for t in fb if t.strip()][-3:], (a, b)
# the columns up to the symbol line up
assert a.index(" hot+") == b.index(" hot+"), (a, b)' "$TMP/pmon.line" "$TMP/perf.line"
else
	ok "# skip: perf cannot record here"
fi

run_pmon 0 script -i "$TMP/hot.data" -F tid,ip,sym
check "-F tid,ip,sym: the tid, the address, the symbol without offset or DSO" \
	grep -Eq '^ *[0-9]+ +[0-9a-f]+ hot$' "$TMP/out"
run_pmon 0 script -i "$TMP/hot.data" -F -cpu,-period
check "-F -cpu,-period: the default fields without them" \
	sh -c "! grep -q '\\[0' '$TMP/out' && grep -q 'cpu-clock:' '$TMP/out'"
run_pmon 0 script -i "$TMP/hot.data"
check "default fields: the CPU as [NNN]" grep -Eq ' \[[0-9]{3}\] ' "$TMP/out"
run_pmon 2 script -i "$TMP/hot.data" -F comm,bogus
one_line_error "unknown field 'bogus'"

run_pmon 0 script -i "$TMP/g.data" -F $F
check "script of -g: a header line, then tab-indented frames, then a blank line" python3 -c '
import re, sys
blocks = open(sys.argv[1]).read().split("\n\n")
blocks = [b for b in blocks if b.strip()]
assert blocks
for b in blocks:
    lines = b.split("\n")
    assert re.match(r"^\S+ +\d+ +\d+\.\d{6}: +\d+ cpu-clock: $", lines[0]), lines[0]
    for l in lines[1:]: # a kernel address fills the 16 columns
        assert re.match(r"^\t *[0-9a-f]{1,16} \S.* \(.+\)$", l), l
assert any("\thot" in b.replace(" ", "") or " hot+" in b for b in blocks)
assert any("main+" in b or "__libc_start_call_main+" in b for b in blocks)' "$TMP/out"

# diff: a recording against itself.
run_pmon 0 diff "$TMP/hot.data" "$TMP/hot.data"
check "diff of a recording with itself: every delta is +0.00%" python3 -c '
import sys
rows = [l.split() for l in open(sys.argv[1]) if not l.startswith("#") and l.strip()]
assert rows and all(r[2] == "+0.00%" for r in rows), rows' "$TMP/out"
run_pmon 0 diff "$TMP/hot.data" "$TMP/cold.data"
check "diff hot-heavy -> cold-heavy: hot shrank, cold grew" python3 -c '
import sys
rows = {l.split()[-1]: float(l.split()[2].rstrip("%")) for l in open(sys.argv[1])
        if not l.startswith("#") and l.strip()}
assert rows["hot"] < -20 and rows["cold"] > 20, rows' "$TMP/out"
run_pmon 0 diff --sort dso "$TMP/hot.data" "$TMP/cold.data"
check "diff --sort dso: wl-hotcold's share" grep -q 'wl-hotcold' "$TMP/out"
run_pmon 0 diff --sort dso,sym "$TMP/hot.data" "$TMP/cold.data"
check "diff --sort dso,sym: DSO and symbol" grep -Eq 'wl-hotcold +hot$' "$TMP/out"

run_pmon 0 diff --format folded "$TMP/hot.data" "$TMP/cold.data"
cp "$TMP/out" "$TMP/folded"
run_pmon 0 report -i "$TMP/hot.data" --format json
cp "$TMP/out" "$TMP/hot.json"
run_pmon 0 report -i "$TMP/cold.data" --format json
check "folded diff: two counts a line, summing to each file's samples" python3 -c '
import json, sys
b = n = 0
for l in open(sys.argv[1]):
    s, x, y = l.rsplit(" ", 2)
    b += int(x); n += int(y)
hb = json.load(open(sys.argv[2]))["samples"]; hn = json.load(open(sys.argv[3]))["samples"]
assert (b, n) == (hb, hn), (b, n, hb, hn)' "$TMP/folded" "$TMP/hot.json" "$TMP/out"

run_pmon 0 diff --format flamegraph -o "$TMP/d.svg" "$TMP/hot.data" "$TMP/cold.data"
check "differential flame graph: XML, red and blue boxes" python3 -c '
import sys, xml.etree.ElementTree as ET
t = ET.parse(sys.argv[1]).getroot()
fills = [r.get("fill") for r in t.iter("{http://www.w3.org/2000/svg}rect")]
assert any(f and f.startswith("rgb(255,") for f in fills), fills
assert any(f and f.endswith(",255)") and not f.startswith("rgb(255,255") for f in fills), fills' "$TMP/d.svg"

# Beside perf diff on the same pair of perf.data files: its rows (perf
# diff's default sort, dso,sym) have pmon diff's baseline and delta, to
# perf's two decimals.
if command -v perf >/dev/null 2>&1 &&
	perf_record -q -e cpu-clock -o "$TMP/pa.data" -- "$H" 30000000 >/dev/null 2>&1 &&
	perf_record -q -e cpu-clock -o "$TMP/pb.data" -- "$H" 30000000 cold >/dev/null 2>&1; then
	perf diff "$TMP/pa.data" "$TMP/pb.data" >"$TMP/perfdiff.txt" 2>/dev/null
	run_pmon 0 diff --sort dso,sym --format json "$TMP/pa.data" "$TMP/pb.data"
	check "diff beside perf diff: every row's baseline and delta as perf's" \
		python3 - "$TMP/perfdiff.txt" "$TMP/out" <<'PY'
import json, re, sys
mine = {}
for e in json.load(open(sys.argv[2]))["entries"]:
    mine[(e["dso"], e["symbol"])] = e
rows = 0
for l in open(sys.argv[1]):
    m = re.match(r"^\s+(?:([\d.]+)%)?\s+(?:([+-][\d.]+)%)?\s+(\S+)\s+\[.\]\s+(.+?)\s*$", l)
    if not m:
        continue
    base, delta = float(m.group(1) or 0), float(m.group(2) or 0)
    dso = m.group(3).replace("[kernel.kallsyms]", "[kernel]")
    # the program's and the kernel's symbols by name (the C library's
    # aliases are named by another rule than perf's: issue #26)
    if dso not in ("wl-hotcold", "[kernel]") or m.group(4).startswith("0x"):
        continue
    e = mine.get((dso, m.group(4)))
    assert e, ("not in pmon diff", dso, m.group(4))
    assert abs(e["baseline"] - base) <= 0.006, (l, e)
    # perf leaves the delta blank where it rounds to 0.00, and where the
    # new file has no such row (it prints no pair)
    assert abs(e["delta"] - delta) <= 0.006 or (
        not m.group(2) and (abs(e["delta"]) < 0.005 or e["new"] == 0)), (l, e)
    rows += 1
assert rows >= 2, rows
print("# %d rows as perf diff's" % rows)
PY
else
	ok "# SKIP beside perf diff: perf is not installed or cannot record cpu-clock"
fi

run_pmon 2 diff "$TMP/hot.data" "$TMP/none.data"
one_line_error "none.data"
printf 'garbage' >"$TMP/junk"
run_pmon 2 script -i "$TMP/junk"
one_line_error "junk"
run_pmon 2 diff --sort bogus "$TMP/hot.data" "$TMP/cold.data"
one_line_error "bogus"
finish
