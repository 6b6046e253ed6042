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
check "SVG names both series" sh -c "grep -q 'task-clock\|glyph' '$TMP/a.svg'"
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
finish
