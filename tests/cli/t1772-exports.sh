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

# Each export is of one event (--event, default the first), named with its
# unit: page faults are counted, cpu-clock's periods are nanoseconds.
run_pmon 0 record -e cpu-clock,page-faults -g -o "$TMP/two.data" -- "$T" 20000
for ev in cpu-clock page-faults; do
	run_pmon 0 report -i "$TMP/two.data" --event $ev --format speedscope -o "$TMP/$ev.ss.json"
	run_pmon 0 report -i "$TMP/two.data" --event $ev --format flamegraph -o "$TMP/$ev.svg"
	run_pmon 0 report -i "$TMP/two.data" --event $ev --sort caller -o "$TMP/$ev.caller"
	run_pmon 0 report -i "$TMP/two.data" --event $ev --sort caller --format json -o "$TMP/$ev.caller.json"
	run_pmon 0 report -i "$TMP/two.data" --event $ev --format pprof -o "$TMP/$ev.pb.gz"
done
check "speedscope: each profile named after its event, in its unit" python3 - "$TMP" <<'PY'
import json, sys
for ev, unit in (("cpu-clock", "nanoseconds"), ("page-faults", "none")):
    s = json.load(open("%s/%s.ss.json" % (sys.argv[1], ev)))
    for p in s["profiles"]:
        assert p["unit"] == unit and p["name"].startswith(ev + " "), (ev, p["unit"], p["name"])
PY
check "flame graph and caller header name the one event and its unit" python3 - "$TMP" <<'PY'
import json, re, sys
for ev, unit in (("cpu-clock", "ns"), ("page-faults", "events")):
    svg = open("%s/%s.svg" % (sys.argv[1], ev)).read()
    assert re.search(r"pmon flame graph: %s in '[^']*', \d+ %s<" % (ev, unit), svg), (ev, svg[:600])
    head = open("%s/%s.caller" % (sys.argv[1], ev)).readline()
    assert re.match(r"# pmon report: \d+ %s of %s in " % (unit, ev), head), head
    j = json.load(open("%s/%s.caller.json" % (sys.argv[1], ev)))
    assert j["event"] == ev and j["unit"] == unit, (j["event"], j["unit"])
PY
if command -v go >/dev/null && go tool pprof -h >/dev/null 2>&1; then
	for ev in cpu-clock page-faults; do
		HOME=$TMP go tool pprof -raw "$TMP/$ev.pb.gz" >"$TMP/$ev.raw" 2>"$TMP/err"
	done
	check "pprof: sample types samples/count and the event's own name and unit" \
		sh -c "grep -qx 'samples/count cpu-clock/nanoseconds' '$TMP/cpu-clock.raw' &&
			grep -qx 'samples/count page-faults/count' '$TMP/page-faults.raw' &&
			grep -qx 'PeriodType: page-faults count' '$TMP/page-faults.raw'"
else
	echo "ok - # SKIP pprof's event and unit: go tool pprof missing (apt-get install golang-go)"
fi

# speedscope: every sample in time order, one "sampled" profile per thread,
# weights the periods: a program that runs phase_a, then phase_b, then
# phase_c reads a, b, c in its samples' order (speedscope's Time Order).
S=$PMON_WORKLOADS/wl-stacks
run_pmon 0 record -g -F 2000 -o "$TMP/ph.data" -- "$S" phases 100000000
run_pmon 0 report -i "$TMP/ph.data" --format speedscope -o "$TMP/ph.json"
run_pmon 0 report -i "$TMP/ph.data" --format json -o "$TMP/ph.flat.json"
check "speedscope: the samples' order gives phase_a, phase_b, phase_c; weights the periods" \
	python3 - "$TMP/ph.json" "$TMP/ph.flat.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); flat = json.load(open(sys.argv[2]))
fr = s["shared"]["frames"]
assert all(p["type"] == "sampled" and p["unit"] == "nanoseconds" for p in s["profiles"])
assert sum(sum(p["weights"]) for p in s["profiles"]) == sum(e["period"] for e in flat["entries"])
assert sum(len(p["samples"]) for p in s["profiles"]) == flat["samples"]
p = s["profiles"][s["activeProfileIndex"]]
assert p["endValue"] - p["startValue"] == sum(p["weights"]) and len(p["samples"]) == len(p["weights"])
runs = []
for st in p["samples"]:
    ph = [fr[i]["name"] for i in st if fr[i]["name"].startswith("phase_")]
    if ph and (not runs or runs[-1] != ph[0]):
        runs.append(ph[0])
assert runs == ["phase_a", "phase_b", "phase_c"], runs
PY
run_pmon 0 record -g -F 2000 -o "$TMP/thr.data" -- "$S" threads 30000000
run_pmon 0 report -i "$TMP/thr.data" --format speedscope -o "$TMP/thr.json"
check "speedscope: a profile per thread, thread_a and thread_b each in its own" \
	python3 - "$TMP/thr.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); fr = s["shared"]["frames"]
has = [{fr[i]["name"] for st in p["samples"] for i in st} for p in s["profiles"]]
a = [k for k, h in enumerate(has) if "thread_a" in h]; b = [k for k, h in enumerate(has) if "thread_b" in h]
assert len(s["profiles"]) >= 2 and len(a) == 1 and len(b) == 1 and a != b, [p["name"] for p in s["profiles"]]
assert "thread_b" not in has[a[0]] and "(pid " in s["profiles"][a[0]]["name"]
PY

# The flame graph: flamegraph.pl's click-to-zoom, reset and search in an
# inline script; every title says its samples, their period and share.
H=$PMON_WORKLOADS/wl-hotcold
run_pmon 0 record -g -F 2000 -o "$TMP/hc.data" -- "$H" 30000000
run_pmon 0 report -i "$TMP/hc.data" --format json -o "$TMP/hc.json"
run_pmon 0 report -i "$TMP/hc.data" --format flamegraph --width 1000 -o "$TMP/fg.svg"
check "flame graph: well-formed XML with its script; titles' samples and periods add up" \
	python3 - "$TMP/fg.svg" "$TMP/hc.json" <<'PY'
import json, re, sys, xml.etree.ElementTree as ET
N = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot(); r = json.load(open(sys.argv[2]))
sc = [e.text for e in root.iter(N + "script")]
assert len(sc) == 1 and "onclick" in sc[0] and "RegExp" in sc[0], sc
assert root.find(".//*[@id='unzoom']") is not None and root.find(".//*[@id='search']") is not None
t = [g.find(N + "title").text for g in root.iter(N + "g") if g.get("class") == "f"]
m = [re.match(r"(\S+).*: (\d+) samples \((\d+) ns\), ([\d.]+)%$", x) for x in t]
assert all(m), [x for x, y in zip(t, m) if not y][:3]
allf = [x for x in m if x.group(1) == "all"][0]
assert int(allf.group(2)) == r["samples"] and int(allf.group(3)) == sum(e["period"] for e in r["entries"])
hot = sum(int(x.group(3)) for x in m if x.group(1) == "hot")
want = 100.0 * hot / int(allf.group(3))
assert abs(want - sum(float(x.group(4)) for x in m if x.group(1) == "hot")) < 0.02 * len(m)
PY
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$CHROMIUM" ]; then
	# The SVG inline in a page (its script runs there as in the file), a
	# click on hot's frame: its box widens to the root's.
	python3 - "$TMP/fg.svg" "$TMP/click.html" <<'PY'
import sys
body = open(sys.argv[1]).read().split("?>", 1)[1]
open(sys.argv[2], "w").write("<!DOCTYPE html><html><body>" + body + """<script>
var gs = document.querySelectorAll("g.f"), hot = null;
for (var i = 0; i < gs.length; i++)
  if (/^hot /.test(gs[i].querySelector("title").textContent)) hot = gs[i];
var w = function (g) { return +g.querySelector("rect").getAttribute("width"); };
var before = w(hot);
hot.dispatchEvent(new MouseEvent("click", {bubbles: true}));
var d = document.createElement("pre"); d.id = "result";
d.textContent = JSON.stringify({before: before, after: w(hot), root: w(gs[0])});
document.body.appendChild(d);
</script></body></html>""")
PY
	HOME=$TMP timeout 120 "$CHROMIUM" --headless=new --no-sandbox --disable-gpu \
		--user-data-dir="$TMP/chromium" --dump-dom "file://$TMP/click.html" 2>/dev/null |
		sed -n 's|.*<pre id="result">\([^<]*\)</pre>.*|\1|p' >"$TMP/click.json"
	check "flame graph in Chromium: a click on hot zooms it to the root's width ($(cat "$TMP/click.json"))" \
		python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["before"] < 0.9 * d["root"] and abs(d["after"] - d["root"]) < 0.5, d' "$TMP/click.json"
else
	echo "ok - # SKIP the flame graph's zoom in a browser: chromium is not installed"
fi

finish
