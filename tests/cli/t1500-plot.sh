#!/bin/sh
# pmon plot: a known interval log becomes a valid SVG and a PNG of the size
# asked for with something drawn; stat -I --plot and rdt --plot do both in
# one go; a malformed log is one error naming the line.
. "$(dirname "$0")/lib.sh"

cat >"$TMP/log.csv" <<'L'
0.100000000,50.00,msec,task-clock,50000000,100.00,0.50,CPUs utilized
0.100000000,300,,page-faults,50000000,100.00,6.00,K/sec
0.200000000,<not counted>,msec,task-clock,0,100.00,,
0.200000000,0,,page-faults,0,100.00,0.00,/sec
0.300000000,80.00,msec,task-clock,80000000,100.00,0.80,CPUs utilized
0.300000000,900,,page-faults,80000000,100.00,11.25,K/sec
L
svg_ok() { python3 -c '
import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot()
assert r.tag.endswith("svg"), r.tag
assert len(list(r.iter())) > 20, "too few elements"
' "$1"; }
# PNG: size from the IHDR chunk; drawn = more than two colours in the pixels.
png_ok() { python3 -c '
import struct, sys, zlib
b = open(sys.argv[1], "rb").read()
assert b[:8] == b"\x89PNG\r\n\x1a\n"
w, h = struct.unpack(">II", b[16:24])
assert (w, h) == (int(sys.argv[2]), int(sys.argv[3])), (w, h)
data, i = b"", 8
while i < len(b):
    n, t = struct.unpack(">I4s", b[i:i + 8])
    if t == b"IDAT":
        data += b[i + 8:i + 8 + n]
    i += 12 + n
raw = zlib.decompress(data)
assert len(set(raw[k:k + 3] for k in range(1, len(raw) - 3, 7))) > 2, "blank picture"
' "$@"; }

run_pmon 0 plot "$TMP/log.csv" -o "$TMP/a.svg" --title "known log"
check "SVG parses as XML" svg_ok "$TMP/a.svg"
check "SVG names both series" sh -c "grep -q '>task-clock<' '$TMP/a.svg' && grep -q '>page-faults<' '$TMP/a.svg'"
# What a person expects of a plot (#14.13): nice-number ticks with units on
# both axes, a light grid, time in seconds, uncounted intervals marked, a
# <title> tooltip on every point, no point at time 0, names outside the frame.
check "the SVG has ticks, grid, tooltips and gap marks" python3 -c '
import sys, xml.etree.ElementTree as E
ns = "{http://www.w3.org/2000/svg}"
r = E.parse(sys.argv[1]).getroot()
texts = [t.text for t in r.iter(ns + "text")]
for want in ("task-clock", "page-faults", "msec/s", "events/s", "0 s",
             "200", "400", "600", "800", "2k", "8k", "10k", "time since start (s)"):
    assert want in texts, (want, texts)
secs = sorted(float(t[:-2]) for t in texts if t and t.endswith(" s") and t[0].isdigit())
assert secs[0] == 0 and secs[-1] >= 0.3 and len(secs) >= 4, secs  # time ticks in seconds
steps = {round(b - a, 9) for a, b in zip(secs, secs[1:])}
assert len(steps) == 1 and str(steps.pop())[-1] in "125", secs      # evenly, 1-2-5
grid = [l for l in r.iter(ns + "line") if l.get("class") == "grid"]
assert len(grid) >= 2 * (6 + 4), len(grid)
pts = list(r.iter(ns + "circle"))
titles = [p.find(ns + "title").text for p in pts]
assert len(pts) == 5, titles          # 3 page-faults intervals, 2 counted task-clock ones
assert "task-clock: 500.00 msec/s over 0.000-0.100 s" in titles, titles
assert "task-clock: 800.00 msec/s over 0.200-0.300 s" in titles, titles
assert "page-faults: 0.00 events/s over 0.100-0.200 s" in titles, titles
frames = [f for f in r.iter(ns + "rect") if f.get("class") == "frame"]
left = min(float(f.get("x")) for f in frames)
assert all(float(p.get("cx")) > left + 1 for p in pts), "a point at time 0"
gaps = [t.text for t in r.iter(ns + "title") if "not counted" in (t.text or "")]
assert gaps == ["task-clock: not counted over 0.100-0.200 s"], gaps
# panel names above their frames, not over the data
for f in frames:
    top = float(f.get("y"))
    inside = [t for t in r.iter(ns + "text") if t.text in ("task-clock", "page-faults")
              and top < float(t.get("y")) < top + float(f.get("height"))]
    assert not inside, inside
' "$TMP/a.svg"
# One interval: a segment over the interval, not a lone dot in a corner.
head -1 "$TMP/log.csv" >"$TMP/one.csv"
run_pmon 0 plot "$TMP/one.csv" -o "$TMP/one.svg"
check "a single interval is a segment from 0 to its end" python3 -c '
import sys, xml.etree.ElementTree as E
ns = "{http://www.w3.org/2000/svg}"
r = E.parse(sys.argv[1]).getroot()
poly = [p for p in r.iter(ns + "polyline")]
assert len(poly) == 1, poly
xs = [float(p.split(",")[0]) for p in poly[0].get("points").split()]
frame = next(f for f in r.iter(ns + "rect") if f.get("class") == "frame")
w = float(frame.get("width"))
assert xs[0] == float(frame.get("x")) and xs[-1] - xs[0] > 0.9 * w, (xs, w)
assert any(t.text.endswith(" s") and float(t.text[:-2]) == 0.1 for t in r.iter(ns + "text")
           if t.text and t.text[0].isdigit())
' "$TMP/one.svg"
# Names from a log are outside input: escaped, and the SVG stays XML.
printf '0.1,5,,a<b&"c\001\377,1,100.00,,\n' >"$TMP/names.csv"
run_pmon 0 plot "$TMP/names.csv" -o "$TMP/names.svg"
check "hostile names are escaped" svg_ok "$TMP/names.svg"
check "the escaped name is there" grep -q 'a&lt;b&amp;&quot;c??' "$TMP/names.svg"
# A surrogate (ED A0 80) is UTF-8 in form only: cairo refused the PNG, and
# the SVG was not XML, before names went through cairo's own rule.
printf '0.1,5,,s\355\240\200x,1,100.00,,\n' >"$TMP/sur.csv"
run_pmon 0 plot "$TMP/sur.csv" -o "$TMP/sur.png"
run_pmon 0 plot "$TMP/sur.csv" -o "$TMP/sur.svg"
check "a surrogate in a name: the SVG stays XML" svg_ok "$TMP/sur.svg"
run_pmon 0 plot "$TMP/log.csv" -o "$TMP/a.png" --width 640 --height 480
check "PNG of 640x480 with a drawing" png_ok "$TMP/a.png" 640 480

printf '0.1,5,,cs,1,100.00,,\nthis is not a log line\n' >"$TMP/bad.csv"
run_pmon 2 plot "$TMP/bad.csv" -o "$TMP/b.svg"
one_line_error "$TMP/bad.csv:2: 'this is not a log line' is not a time"
printf '0.1,5,,cs\n' >"$TMP/short.csv"
run_pmon 2 plot "$TMP/short.csv" -o "$TMP/b.svg"
one_line_error "short.csv:1: 4 fields"
: >"$TMP/empty.csv"
run_pmon 2 plot "$TMP/empty.csv" -o "$TMP/b.svg"
one_line_error "no interval records"
# Every field of every JSON record is type-checked (#15.2: a number as the
# event name was dereferenced as a NULL string).
bad_json() { # LINE EXPECTED-TEXT
	printf '%s\n' "$1" >"$TMP/bad.json"
	run_pmon 2 plot "$TMP/bad.json" -o "$TMP/b.svg"
	one_line_error "bad.json:1: $2"
}
bad_json '{"interval":1,"event":5,"value":3}' '"event" must be a non-empty string'
bad_json '{"interval":1,"event":null,"value":3}' '"event" must be a non-empty string'
bad_json '{"interval":1,"event":"","value":3}' '"event" must be a non-empty string'
bad_json '{"interval":"1","event":"cs","value":3}' '"interval" must be a number'
bad_json '{"interval":-1,"event":"cs","value":3}' '"interval" must be a number'
bad_json '{"interval":1,"event":"cs","value":"3"}' '"value" must be a number or absent'
bad_json '{"interval":1,"event":"cs","value":3,"unit":7}' '"unit" must be a string'
bad_json '{"time":1,"domain":{},"llc_occupancy_bytes":1}' '"domain" must be a non-empty string'
bad_json '{"time":true,"domain":"mon_L3_00"}' '"time" must be a number'
bad_json '{"time":1,"domain":"mon_L3_00","mbm_total_bytes_per_s":[1]}' '"mbm_total_bytes_per_s" must be a number or absent'
bad_json '{"interval":1,"interval":2,"event":"cs"}' 'not a JSON object'
printf '0.1,5,,,1,100.00,,\n' >"$TMP/noname.csv"
run_pmon 2 plot "$TMP/noname.csv" -o "$TMP/b.svg"
one_line_error "noname.csv:1: the event name is empty"
seq 70 | sed 's/.*/{"interval":1,"event":"e&","value":1}/' >"$TMP/many.json"
run_pmon 2 plot "$TMP/many.json" -o "$TMP/b.svg"
one_line_error "many.json:65: more than 64 series"

run_pmon 2 plot "$TMP/log.csv" -o "$TMP/b.svg" --height 100
one_line_error "height 100 is too small for 2 panels"
run_pmon 2 plot "$TMP/log.csv" -o "$TMP/b.gif"
one_line_error "must end in .svg or .png"
run_pmon 2 plot "$TMP/log.csv"
one_line_error "give one LOG and -o"

# JSON lines from pmon stat --json -I.
"$PMON" stat -I 100 --interval-count 3 --json -e task-clock,page-faults -o "$TMP/log.json" -- sleep 5
run_pmon 0 plot "$TMP/log.json" -o "$TMP/j.svg"
check "a JSON-lines log plots" svg_ok "$TMP/j.svg"

# stat -I --plot: counts and picture in one go.
run_pmon 0 stat -I 100 --plot "$TMP/s.png" -e task-clock,cs -- sleep 0.4
check "stat --plot wrote the picture" png_ok "$TMP/s.png" 900 360
check "stat --plot still printed the intervals" grep -q "task-clock" "$TMP/err"
run_pmon 2 stat --plot "$TMP/x.svg" -e task-clock -- true
one_line_error "--plot draws the intervals: it needs -I"

# rdt --plot on an emulated resctrl tree.
T=$TMP/resctrl
mkdir -p "$T/info/L3_MON" "$T/mon_data/mon_L3_00" "$T/mon_groups"
echo 8 >"$T/info/L3_MON/num_rmids"
for f in llc_occupancy mbm_total_bytes mbm_local_bytes; do echo 0 >"$T/mon_data/mon_L3_00/$f"; done
run_pmon 0 rdt --resctrl-root "$T" -I 100 -n 3 --plot "$TMP/r.svg" -- sleep 5
check "rdt --plot wrote an SVG" svg_ok "$TMP/r.svg"
# ... with -e: the events get their panels too (#14.11).
run_pmon 0 rdt --resctrl-root "$T" -I 100 -n 3 -e task-clock --plot "$TMP/re.svg" -- sleep 5
check "rdt -e --plot draws the event" grep -q '<title>task-clock: ' "$TMP/re.svg"

# pmon rdt -x, with -e: one column per event after the five RDT columns,
# "NAME UNIT/s", quoted when the name holds the separator; the rates on an
# interval's first row, empty on the others (no point, not a gap).
cat >"$TMP/rdt.csv" <<'L'
time,domain,llc_occupancy_bytes,mbm_total_bytes_per_s,mbm_local_bytes_per_s,task-clock msec/s,"cpu/event=0x3c,umask=0/ events/s"
0.100,mon_L3_00,4096,n/a,n/a,500,1000
0.100,mon_L3_01,8192,n/a,n/a,,
0.200,mon_L3_00,4096,100,50,250,<not counted>
0.200,mon_L3_01,8192,200,Unavailable,,
L
run_pmon 0 plot "$TMP/rdt.csv" -o "$TMP/rdt.svg"
check "rdt log with events: SVG" svg_ok "$TMP/rdt.svg"
check "rdt log: the event's rate as logged (per second already)" \
	grep -q '<title>task-clock: 500.00 msec/s over 0.000-0.100 s' "$TMP/rdt.svg"
check "rdt log: a quoted event name with the separator is one column" \
	grep -qF '<title>cpu/event=0x3c,umask=0/: 1000.00 events/s' "$TMP/rdt.svg"
check "rdt log: empty event fields make no gap; <not counted> does" \
	sh -c "[ \$(grep -c '<title>task-clock: not counted' '$TMP/rdt.svg') -eq 0 ] && grep -q '<title>cpu/event=0x3c,umask=0/: not counted' '$TMP/rdt.svg'"
check "rdt log: the domains' panels are there" grep -q '>mon_L3_01 llc_occupancy<' "$TMP/rdt.svg"
printf 'time,domain,llc_occupancy_bytes,mbm_total_bytes_per_s,mbm_local_bytes_per_s,task-clock\n0.1,d,1,2,3,4\n' >"$TMP/rdtbad.csv"
run_pmon 2 plot "$TMP/rdtbad.csv" -o "$TMP/b.svg"
one_line_error "rdtbad.csv:1: column 6 'task-clock' is not 'EVENT UNIT/s'"
printf 'time,domain,llc_occupancy_bytes,mbm_total_bytes_per_s,mbm_local_bytes_per_s,x /s\n0.1,d,1,2,3\n' >"$TMP/rdtshort.csv"
run_pmon 2 plot "$TMP/rdtshort.csv" -o "$TMP/b.svg"
one_line_error "rdtshort.csv:2: 5 fields: a record of counts has 8, one of RDT domains 6 (5, and one per event in its header) ('pmon stat -I -x,' and 'pmon rdt -x,' write them)"
finish
