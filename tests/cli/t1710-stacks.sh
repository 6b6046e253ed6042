#!/bin/sh
# pmon record -g / report / annotate on workloads with known shapes: a
# three-level call chain, two threads, a fork; source lines; annotate's
# instructions against objdump's; flame graph, speedscope and pprof exports
# read back by an XML parser, the JSON schema's rules and protoc; pmon's
# shares beside perf report's on the very same run.
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"
S=$PMON_WORKLOADS/wl-stacks
H=$PMON_WORKLOADS/wl-hotcold
SRC=$(dirname "$0")/../workloads/hotcold.c
PROTO_DIR=/usr/share/gocode/src/github.com/google/pprof/proto

# A known call chain: main -> outer -> middle -> inner.
run_pmon 0 record -g -F 4000 -o "$TMP/chain.data" -- "$S" chain 300000000
run_pmon 0 report -i "$TMP/chain.data" --format folded
check "three-level chain: the heaviest stack is main;outer;middle;inner" \
	sh -c "sort -k2 -nr '$TMP/out' | head -1 | grep -Eq '(^|;)main;outer;middle;inner [0-9]+\$'"

# Without frame pointers the kernel's chain loses the callers; DWARF
# unwinding (--call-graph dwarf: registers + stack copy, elfutils CFI at
# report time) finds them.
N=$PMON_WORKLOADS/wl-stacks-nofp
run_pmon 0 record -g -o "$TMP/nofp-fp.data" -- "$N" chain 300000000
run_pmon 0 report -i "$TMP/nofp-fp.data" --format folded
check "no frame pointers, -g: the chain is broken (as with perf -g)" \
	sh -c "! grep -q 'main;outer;middle;inner' '$TMP/out'"
run_pmon 0 record --call-graph dwarf -o "$TMP/nofp-dw.data" -- "$N" chain 300000000
run_pmon 0 report -i "$TMP/nofp-dw.data" --format folded
check "no frame pointers, --call-graph dwarf: main;outer;middle;inner is the heaviest stack" \
	sh -c "sort -k2 -nr '$TMP/out' | head -1 | grep -Eq '(^|;)main;outer;middle;inner [0-9]+\$'"
run_pmon 0 record --call-graph dwarf,4096 -o "$TMP/nofp-thr.data" -- "$N" threads 300000000
run_pmon 0 report -i "$TMP/nofp-thr.data" --format folded
# A thread function's caller is libc's start_thread: named where libc's
# local symbols are (libc_symbols), else an [unknown] frame of libc.
thread_caller="start_thread;"
libc_symbols || thread_caller="[unknown];"
check "--call-graph dwarf,4096: both threads unwound through start_thread" python3 -c '
import sys
st = [l.rsplit(" ", 1) for l in open(sys.argv[1])]
tot = sum(int(n) for s, n in st)
for f in ("thread_a", "thread_b"):
    n = sum(int(c) for s, c in st if sys.argv[2] + f in s)
    assert 0.15 * tot < n < 0.85 * tot, (f, n, tot)' "$TMP/out" "$thread_caller"
run_pmon 2 record --call-graph dwarf,12 -o "$TMP/x.data" -- true
one_line_error "--call-graph dwarf,12: a multiple of 8 bytes"
run_pmon 2 record --call-graph lbr -o "$TMP/x.data" -- true
one_line_error "--call-graph 'lbr': fp or dwarf[,SIZE]"

# Inlined functions are frames of their own (DWARF scopes), unless --no-inline.
run_pmon 0 record -g -o "$TMP/inl.data" -- "$S" inline 300000000
run_pmon 0 report -i "$TMP/inl.data" --format folded
check "inline: the loop's samples are in mixer, inlined into inl_outer" \
	sh -c "sort -k2 -nr '$TMP/out' | head -1 | grep -Eq '(^|;)main;inl_outer;mixer [0-9]+\$'"
run_pmon 0 report -i "$TMP/inl.data" --format folded --no-inline
check "--no-inline: the same samples end in inl_outer" \
	sh -c "sort -k2 -nr '$TMP/out' | head -1 | grep -Eq '(^|;)main;inl_outer [0-9]+\$'"

# The call graph both ways (perf report -g caller / callee).
run_pmon 0 report -i "$TMP/chain.data" --sort caller --format json
check "--sort caller: main > outer > middle > inner, inner's samples its own" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
def find(nodes, name, key):
    for n in nodes:
        if n["symbol"] == name:
            return n
    raise AssertionError((name, [n["symbol"] for n in nodes]))
# main under libc'"'"'s frames, however many (named or [unknown]: libc_symbols).
def first_main(nodes, depth=0):
    for n in nodes:
        if n["symbol"] == "main":
            return n
    for n in nodes if depth < 4 else ():
        m = first_main(n["callees"], depth + 1)
        if m:
            return m
m = first_main(d["roots"])
assert m, d["roots"]
o = find(m["callees"], "outer", "callees"); mi = find(o["callees"], "middle", "callees")
i = find(mi["callees"], "inner", "callees")
# inner may have kernel callees (an interrupt), middle its own few samples.
assert o["samples"] >= mi["samples"] >= i["samples"] >= i["self"] > 0.8 * d["samples"], (o, i)' "$TMP/out"
run_pmon 0 report -i "$TMP/chain.data" --sort callee
check "--sort callee: inner first, then middle, outer, main indented under it" python3 -c '
import sys
# "  TOTAL%   SELF%  " is 21 columns; the indentation after it is the depth.
rows = [l[21:] for l in open(sys.argv[1]) if not l.startswith("#")]
rows = [((len(r) - len(r.lstrip(" "))) // 2, r.split()[0]) for r in rows if r.strip()]
assert rows[:4] == [(0, "inner"), (1, "middle"), (2, "outer"), (3, "main")], rows[:5]' "$TMP/out"
run_pmon 2 report -i "$TMP/chain.data" --sort caller --min-percent 200
one_line_error "--min-percent '200': a number from 0 to 100"

# Threads: each thread's function under start_thread. They do equal work, but
# CPU time on a busy VM (steal, a sibling's load) differs: seen 68/32 in CI,
# so the check is that both are followed, each with a real share.
run_pmon 0 record -g -F 4000 -o "$TMP/thr.data" -- "$S" threads 300000000
run_pmon 0 report -i "$TMP/thr.data" --format folded
check "threads: thread_a and thread_b each hold 15-85% of the samples" python3 -c '
import sys
st = {}
for l in open(sys.argv[1]):
    s, n = l.rsplit(" ", 1)
    st[s] = st.get(s, 0) + int(n)
tot = sum(st.values())
for f in ("thread_a", "thread_b"):
    n = sum(v for k, v in st.items() if sys.argv[2] + f in k)
    assert 0.15 * tot < n < 0.85 * tot, (f, n, tot)' "$TMP/out" "$thread_caller"

# A fork: the child is followed (inherit), its maps copied from the parent.
run_pmon 0 record -g -F 4000 -o "$TMP/fork.data" -- "$S" fork 300000000
run_pmon 0 report -i "$TMP/fork.data" --format folded
check "fork: child_work and parent_work both under main, 15-85% each" python3 -c '
import sys
st = [l.rsplit(" ", 1) for l in open(sys.argv[1])]
tot = sum(int(n) for s, n in st)
for f in ("child_work", "parent_work"):
    n = sum(int(c) for s, c in st if ";main;" + f in ";" + s)
    assert 0.15 * tot < n < 0.85 * tot, (f, n, tot)' "$TMP/out"

# Source lines: hot()'s samples fall on its own lines of hotcold.c.
run_pmon 0 record -o "$TMP/hc.data" -- "$H" 30000000
run_pmon 0 report -i "$TMP/hc.data" --sort line --format json
first=$(grep -n 'void hot(' "$SRC" | cut -d: -f1)
check "--sort line: hot's entries are on lines $first..$((first + 4)) of hotcold.c" python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); lo = int(sys.argv[2])
hot = [e for e in d["entries"] if e["symbol"] == "hot"]
assert hot and d["entries"][0]["symbol"] == "hot", d["entries"][:3]
for e in hot:
    f, n = e["line"].split(":")
    assert f == "hotcold.c" and lo <= int(n) <= lo + 4, e' "$TMP/out" "$first"
run_pmon 0 report -i "$TMP/hc.data" --sort line
check "--sort line: text has a line column" grep -Eq "^ +[0-9.]+% +[0-9]+ +hotcold.c:[0-9]+ +hot " "$TMP/out"

# annotate: objdump's instructions, every sample of hot placed on one.
run_pmon 0 report -i "$TMP/hc.data" --format json
cp "$TMP/out" "$TMP/hc.json"
run_pmon 0 annotate -i "$TMP/hc.data" --format json hot
objdump -d --no-show-raw-insn "$H" | awk '/<hot>:/ {on=1; next} on && /^$/ {exit} on {sub(":", "", $1); print $1}' >"$TMP/objdump"
check "annotate: the addresses objdump -d shows for hot (up to its st_size)" python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))
end = int(a["start"], 16) + a["size"]  # objdump goes on into the padding after it
want = [int(x, 16) for x in open(sys.argv[2]).read().split() if int(x, 16) < end]
got = [int(i["address"], 16) for i in a["instructions"]]
assert want and got == want, (got, want)' "$TMP/out" "$TMP/objdump"
check "annotate: per-instruction samples add up to report's count for hot" python3 -c '
import json, sys
a = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2]))
hot = [e for e in r["entries"] if e["symbol"] == "hot"][0]
assert a["samples"] == hot["samples"] == sum(i["samples"] for i in a["instructions"]), (a["samples"], hot)
assert a["total"] == r["samples"] and a["period"] == sum(i["period"] for i in a["instructions"])
assert abs(sum(i["percent"] for i in a["instructions"]) - 100) < 0.1
assert all(i["source"].endswith("hotcold.c") for i in a["instructions"])' "$TMP/out" "$TMP/hc.json"
run_pmon 0 annotate -i "$TMP/hc.data"
check "annotate without a symbol: the hottest, hot" grep -q "^# pmon annotate: hot in " "$TMP/out"
check "annotate interleaves the source text" grep -qF "sink += (unsigned long)i * 3;" "$TMP/out"
run_pmon 0 annotate -i "$TMP/hc.data" --no-source cold
check "--no-source: instructions only" sh -c "! grep -q 'hotcold.c:' '$TMP/out' && grep -q 'cold in' '$TMP/out'"
run_pmon 2 annotate -i "$TMP/hc.data" nosuch
one_line_error "no samples in 'nosuch' (most samples: hot, cold"
run_pmon 2 annotate -i "$TMP/nope.data" hot
one_line_error "nope.data: No such file or directory"
if awk '$1 != "0000000000000000" {found=1; exit} END {exit !found}' /proc/kallsyms; then
	run_pmon 0 record -o "$TMP/kz.data" -- dd if=/dev/zero of=/dev/null bs=1M count=10000
	run_pmon 3 annotate -i "$TMP/kz.data" read_zero
	one_line_error "'read_zero' is kernel code"
else
	echo "ok - # SKIP kernel annotate: /proc/kallsyms shows no addresses here"
fi

# Several events at once, each with its own "Sample After": cpu-clock and
# page-faults on a workload that touches 100,000 fresh pages.
T=$PMON_WORKLOADS/wl-touch
run_pmon 0 record -e cpu-clock -e page-faults --calibrate=2000 -o "$TMP/two.data" -- "$T" 100000
grep "calibrated: page-faults" "$TMP/err" >"$TMP/cal"
run_pmon 0 report -i "$TMP/two.data" --format json
check "two events: a table each, shares per event, periods from the calibration" python3 -c '
import json, re, sys
d = json.load(open(sys.argv[1])); cal = open(sys.argv[2]).read()
counted = float(re.search(r"counted (\d+)", cal).group(1))
n = int(re.search(r"Sample After (\d+)", cal).group(1))
ev = {e["name"]: e for e in d["events"]}
assert list(ev) == ["cpu-clock", "page-faults"], list(ev)
pf = ev["page-faults"]
assert pf["sample_period"] == n and pf["samples"] > 50, pf
assert abs(pf["period"] - counted) < 0.1 * counted, (pf["period"], counted)
top = [e for e in d["entries"] if e["event"] == "page-faults"][0]
assert top["symbol"] == "touch" and top["percent"] > 80, top
for name in ev:
    assert abs(sum(e["percent"] for e in d["entries"] if e["event"] == name) - 100) < 0.01' "$TMP/out" "$TMP/cal"
run_pmon 0 report -i "$TMP/two.data"
check "two events: two tables in the text report" [ "$(grep -c '^# pmon report: [0-9]* samples of ' "$TMP/out")" -eq 2 ]
run_pmon 0 annotate -i "$TMP/two.data" --event page-faults --format json touch
check "annotate --event page-faults: the faults of touch" python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))
assert a["symbol"] == "touch" and a["samples"] > 0.8 * a["total"], (a["samples"], a["total"])' "$TMP/out"
run_pmon 2 report -i "$TMP/two.data" --event nope --format folded
one_line_error "event 'nope' is not in $TMP/two.data (it holds: cpu-clock, page-faults)"
# A fixed period on a software event: one sample per N faults, not per fault
# (the kernel samples every occurrence if PERF_SAMPLE_PERIOD is asked for).
run_pmon 0 record -e page-faults -c 100 -o "$TMP/pf.data" -- "$T" 100000
run_pmon 0 report -i "$TMP/pf.data" --format json
check "-c 100 on page-faults: about 1,000 samples for 100,000 faults" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert 900 <= d["samples"] <= 1200, d["samples"]
assert all(e["period"] == 100 * e["samples"] for e in d["entries"])' "$TMP/out"

# Build ids: a stripped binary is named through its debuginfo (--debug-dir),
# a binary replaced since the recording is never named by the new one.
mkdir -p "$TMP/bin"
cp "$H" "$TMP/bin/hc"
bid=$(readelf -n "$TMP/bin/hc" | awk '/Build ID/ {print $3}')
mkdir -p "$TMP/dbg/.build-id/$(echo "$bid" | cut -c1-2)"
objcopy --only-keep-debug "$TMP/bin/hc" "$TMP/dbg/.build-id/$(echo "$bid" | cut -c1-2)/$(echo "$bid" | cut -c3-).debug"
strip --strip-all "$TMP/bin/hc"
run_pmon 0 record -o "$TMP/st.data" -- "$TMP/bin/hc" 30000000
run_pmon 0 report -i "$TMP/st.data"
check "stripped: no symbols without its debuginfo" sh -c "! grep -qw hot '$TMP/out'"
run_pmon 0 report -i "$TMP/st.data" --debug-dir "$TMP/dbg"
check "stripped: --debug-dir finds hot by build id" grep -Eq "^ +[0-9.]+% +[0-9]+ +hot +hc" "$TMP/out"
run_pmon 0 annotate -i "$TMP/st.data" --debug-dir "$TMP/dbg" hot
check "stripped: annotate has the code from the binary, the lines from debuginfo" \
	grep -qF "sink += (unsigned long)i * 3;" "$TMP/out"
cp "$S" "$TMP/bin/hc" # another program where the recorded one was
run_pmon 0 report -i "$TMP/st.data"
check "replaced binary: its samples are [unknown], not the new file's symbols" \
	sh -c "grep -Eq '^ +[0-9.]+% +[0-9]+ +\[unknown\] +hc' '$TMP/out' && ! grep -Eq ' (inner|outer|main|tick) ' '$TMP/out'"
check "replaced binary: a warning names the file and the recorded build id" \
	grep -q "changed since the recording.*bin/hc, build id $bid" "$TMP/err"
run_pmon 0 report -i "$TMP/st.data" --debug-dir "$TMP/dbg"
check "replaced binary: the recorded build id's debuginfo still names hot" \
	grep -Eq "^ +[0-9.]+% +[0-9]+ +hot +hc" "$TMP/out"
run_pmon 3 annotate -i "$TMP/st.data" --debug-dir "$TMP/dbg" hot
one_line_error "the binary that ran was replaced"
run_pmon 2 report -i "$TMP/st.data" --debug-dir "$TMP/nodir"
one_line_error "--debug-dir '$TMP/nodir': no such directory"

# Flame graph: valid SVG; hot's box about 70% of the root's width.
run_pmon 0 record -g -F 4000 -o "$TMP/g.data" -- "$H" 100000000
run_pmon 0 report -i "$TMP/g.data" --format flamegraph --width 1000 -o "$TMP/fg.svg"
check "flame graph: XML with a root box and hot at 60-80% of its width" python3 -c '
import sys, xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
assert root.get("width") == "1000"
w = {}
for g in root.iter("{http://www.w3.org/2000/svg}g"):
    t, r = g.find("s:title", ns), g.find("s:rect", ns)
    if t is not None and r is not None:
        w[t.text.split(" ")[0].rstrip(":")] = max(w.get(t.text.split(" ")[0].rstrip(":"), 0), float(r.get("width")))
assert "all" in w and "hot" in w, list(w)[:10]
assert 0.6 < w["hot"] / w["all"] < 0.8, (w["hot"], w["all"])' "$TMP/fg.svg"

# speedscope: the file format's rules, weights the recorded periods.
run_pmon 0 report -i "$TMP/g.data" --format speedscope -o "$TMP/ss.json"
run_pmon 0 report -i "$TMP/g.data" --format json
cp "$TMP/out" "$TMP/g.json"
check "speedscope: frames, samples and weights consistent; hot in ~70% of the weight" python3 -c '
import json, sys
s = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2]))
assert s["$schema"] == "https://www.speedscope.app/file-format-schema.json"
fr = s["shared"]["frames"]; p = s["profiles"][0]
assert p["type"] == "sampled" and p["unit"] == "nanoseconds"
assert len(p["samples"]) == len(p["weights"])
assert all(0 <= i < len(fr) for st in p["samples"] for i in st)
assert sum(p["weights"]) == p["endValue"] == sum(e["period"] for e in r["entries"])
hot = sum(w for st, w in zip(p["samples"], p["weights"]) if fr[st[-1]]["name"] == "hot")
assert 0.6 < hot / p["endValue"] < 0.8, hot / p["endValue"]' "$TMP/ss.json" "$TMP/out"

# pprof: gzipped profile.proto that protoc decodes against pprof's own schema.
run_pmon 0 report -i "$TMP/g.data" --format pprof -o "$TMP/p.pb.gz"
if command -v protoc >/dev/null && [ -f "$PROTO_DIR/profile.proto" ]; then
	gunzip -c "$TMP/p.pb.gz" | protoc --decode perftools.profiles.Profile -I "$PROTO_DIR" \
		"$PROTO_DIR/profile.proto" >"$TMP/pprof.txt" 2>"$TMP/err"
	check "pprof: protoc decodes it as perftools.profiles.Profile" [ $? -eq 0 ]
	check "pprof: sample counts add up, hot and cold in the string table" python3 -c '
import json, re, sys
t = open(sys.argv[1]).read(); r = json.load(open(sys.argv[2]))
strs = re.findall(r"string_table: \"([^\"]*)\"", t)
assert "hot" in strs and "cold" in strs and strs[0] == "", strs[:8]
vals = [list(map(int, re.findall(r"value: (\d+)", b))) for b in re.findall(r"sample \{(.*?)\n\}", t, re.S)]
assert vals and all(len(v) == 2 for v in vals)
assert sum(v[0] for v in vals) == r["samples"], (sum(v[0] for v in vals), r["samples"])
assert sum(v[1] for v in vals) == sum(e["period"] for e in r["entries"])' "$TMP/pprof.txt" "$TMP/g.json"
	# pprof takes the first mapping for the program's file (go tool pprof's
	# "File:"): the user-space DSO most samples end in, even in a
	# system-wide profile whose first frames are the kernel's.
	if [ "$(id -u)" = 0 ]; then
		run_pmon 0 record -a -e cpu-clock -F 999 -o "$TMP/a.data" -- "$H" 100000000
		run_pmon 0 report -i "$TMP/a.data" --format pprof -o "$TMP/a.pb.gz"
		gunzip -c "$TMP/a.pb.gz" | protoc --decode perftools.profiles.Profile -I "$PROTO_DIR" \
			"$PROTO_DIR/profile.proto" >"$TMP/a.txt" 2>"$TMP/err"
		# Which user-space file that is comes from the recording itself:
		# on a quiet machine the workload's, but a system-wide profile
		# also holds whatever else ran (another test's valgrind beside
		# this one under ctest -j2 once had more samples than it).
		run_pmon 0 report -i "$TMP/a.data" --sort dso --format json -o "$TMP/a.dso.json"
		check "pprof: the first mapping is the user-space file with most samples" python3 -c '
import json, os, re, sys
t = open(sys.argv[1]).read()
strs = re.findall(r"string_table: \"([^\"]*)\"", t)
m = re.search(r"mapping \{\s*id: 1\s.*?filename: (\d+)", t, re.S)
user = [e for e in json.load(open(sys.argv[2]))["entries"] if not e["dso"].startswith("[")]
want = max(user, key=lambda e: e["period"])["dso"]
if want != sys.argv[3]:
    print("# the busiest user-space file was %s, not %s: the machine was busy" % (want, sys.argv[3]))
first = m and os.path.basename(strs[int(m.group(1))])  # a path: "File:" shows its base name
assert first == want, (first, want)' \
			"$TMP/a.txt" "$TMP/a.dso.json" "$(basename "$H")"
	fi
else
	echo "ok - # SKIP pprof decode: protoc or pprof's profile.proto missing"
fi

# No call chains: every export still works, with the sampled function as the stack.
run_pmon 0 report -i "$TMP/hc.data" --format folded
check "without -g: folded stacks are the leaf alone, with a warning" \
	sh -c "grep -Eq '^hot [0-9]+\$' '$TMP/out' && grep -q 'record with -g' '$TMP/err'"

# pmon beside perf on one run: perf samples pmon, which samples the workload.
# ~2 s at 4 kHz: 8000 samples each, so sampling noise stays well under 3 points.
if perf_record -q --no-bpf-event -e cpu-clock -F 4000 -o "$TMP/perf.data" -- \
	"$PMON" record -e cpu-clock -F 4000 -o "$TMP/both.data" -- "$H" 600000000 >/dev/null 2>&1 &&
	perf report -i "$TMP/perf.data" --stdio -q --sort symbol >"$TMP/perf.txt" 2>/dev/null; then
	run_pmon 0 report -i "$TMP/both.data" --format json
	check "hot/(hot+cold) within 3 points of perf report's on the same run" python3 -c '
import json, re, sys
p = {}
for l in open(sys.argv[1]):
    m = re.match(r"\s*([\d.]+)%\s+\[\.\]\s+(\S+)", l)
    if m: p[m.group(2)] = float(m.group(1))
d = {e["symbol"]: e["samples"] for e in json.load(open(sys.argv[2]))["entries"]}
ps = p["hot"] / (p["hot"] + p["cold"]); ms = d["hot"] / (d["hot"] + d["cold"])
print("# perf %.1f%%, pmon %.1f%%" % (100 * ps, 100 * ms))
assert abs(ps - ms) < 0.03, (ps, ms)' "$TMP/perf.txt" "$TMP/out"
else
	echo "ok - # SKIP perf comparison: perf record cannot sample cpu-clock here"
fi

run_pmon 2 report -i "$TMP/g.data" --format svg
one_line_error "--format 'svg': text, json, folded, flamegraph, speedscope or pprof"
run_pmon 2 report -i "$TMP/g.data" --sort nope
one_line_error "--sort 'nope': symbol, dso, line, caller or callee"
run_pmon 2 annotate -i "$TMP/g.data" hot cold
one_line_error "annotate one symbol at a time"
finish
