#!/bin/sh
# pmon trace report --format svg|png: the timeline drawn with cairo. Read
# back through real clients, not our own markup: the SVG is well-formed
# (xmllint), rsvg-convert rasterizes it into the same picture as the PNG
# cairo wrote, and the PNG's pixels hold the workload's "setup" span where
# its times (from the Chrome JSON export) put it: its colour inside, the
# background outside, in two --from/--to windows that move it as computed.
# The format follows -o's extension, --format says it otherwise; names that
# are not UTF-8 still give a picture.
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"
W=$PMON_WORKLOADS/wl-tracehooks
PNGPY=$(cd "$(dirname "$0")" && pwd)

PMON_OUTPUT=/dev/null run_pmon 0 trace -o "$TMP/t.trace" -- "$W" 100
run_pmon 0 trace report "$TMP/t.trace" --format chrome-json -o "$TMP/t.json"

# The format: by -o's extension, as pmon plot; --format svg|png says it.
is_png() { [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; }
is_svg() { head -c 300 "$1" | grep -q '<svg'; }
run_pmon 0 trace report "$TMP/t.trace" -o "$TMP/t.png"
check "-o NAME.png writes a PNG" is_png "$TMP/t.png"
run_pmon 0 trace report "$TMP/t.trace" -o "$TMP/t.svg"
check "-o NAME.svg writes an SVG" is_svg "$TMP/t.svg"
run_pmon 0 trace report "$TMP/t.trace" --format png -o "$TMP/t.picture"
check "--format png writes a PNG whatever the name" is_png "$TMP/t.picture"
run_pmon 0 trace report "$TMP/t.trace" --format svg
check "--format svg without -o: the SVG on standard output" is_svg "$TMP/out"
run_pmon 2 trace report "$TMP/t.trace" --format svg -o "$TMP/x.png"
one_line_error "--format svg into '$TMP/x.png': name the picture .svg"
run_pmon 2 trace report "$TMP/t.trace" --format png --width 100 -o "$TMP/x.png"
one_line_error "width 100"
run_pmon 0 trace report "$TMP/t.trace" -o "$TMP/t.txt"
check "-o NAME.txt is still the table" grep -q '^# pmon trace' "$TMP/t.txt"

if command -v xmllint >/dev/null; then
	check "xmllint: the SVG is well-formed" xmllint --noout "$TMP/t.svg"
fi
check "cairo's SVG: glyphs and paths in a picture of pixels" python3 - "$TMP/t.svg" <<'PY'
import sys, xml.etree.ElementTree as ET
S = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
assert root.get("width") == "1200px", root.get("width")
assert len(list(root.iter(S + "symbol"))) > 10  # glyphs of the labels
assert len(list(root.iter(S + "path"))) > 100   # bars, ticks, glyph outlines
PY

# A real client: rsvg-convert (librsvg) draws the SVG as cairo drew the PNG.
if command -v rsvg-convert >/dev/null; then
	rsvg-convert "$TMP/t.svg" -o "$TMP/rsvg.png" 2>"$TMP/rsvg.err"
	check "rsvg-convert: the SVG rasterizes into the PNG's picture" python3 - "$PNGPY" "$TMP/rsvg.png" "$TMP/t.png" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import png
w1, h1, a = png.read(sys.argv[2])
w2, h2, b = png.read(sys.argv[3])
assert (w1, h1) == (w2, h2), ((w1, h1), (w2, h2))
far = total = 0
for ra, rb in zip(a, b):
    for pa, pb in zip(ra, rb):
        d = max(abs(x - y) for x, y in zip(pa, pb))
        total += d
        far += d > 64
n = w1 * h1
# glyph edges are rasterized a little differently; the picture is the same
assert far < n * 0.005 and total / n < 2, (far, n, total / n)
print("# %d of %d pixels differ by more than 64, mean difference %.3f" % (far, n, total / n))
PY
else
	echo "# skipped the rsvg-convert comparison: install librsvg2-bin (make deps)"
fi

# Pixels: the main thread's lane is the first (its "setup" span is the
# trace's first event), with no instants: setup is on its first row.
python3 - "$TMP/t.json" >"$TMP/setup" <<'PY'
import json, sys
ev = sorted((e for e in json.load(open(sys.argv[1]))["traceEvents"] if "ts" in e),
            key=lambda e: e["ts"])
assert ev[0]["name"] == "setup" and ev[0]["ph"] == "B", ev[0]
end = [e for e in ev if e["name"] == "setup" and e["ph"] == "E"][0]
b, e = round(ev[0]["ts"] * 1000), round(end["ts"] * 1000)
d = e - b
# two windows (ms, to the ns): setup in the middle third, then at [1/2, 3/4)
for frm, to in ((b - d, e + d), (b - 2 * d, e + d)):
    print("%d %d %.6f %.6f %d %d" % (frm, to, frm / 1e6, to / 1e6, b, e))
PY
n=0
while read -r frm to frm_ms to_ms b e; do
	n=$((n + 1))
	run_pmon 0 trace report "$TMP/t.trace" --from "$frm_ms" --to "$to_ms" --width 1000 -o "$TMP/z$n.png"
	check "window $n: setup's colour from $b to $e ns, the background around it" python3 - "$PNGPY" "$PMON_SRC" "$TMP/z$n.png" "$frm" "$to" "$b" "$e" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import png
g = png.geometry(sys.argv[2])
w, h, px = png.read(sys.argv[3])
frm, to, b, e = map(int, sys.argv[4:8])
assert w == 1000, w
y = png.bar_y(g, g["TOP"], 0)
xb, xe = png.x_at(g, b, frm, to, w), png.x_at(g, e, frm, to, w)
inside = [px[y][int(x)] for x in (xb + 3, (xb + xe) / 2, xe - 3)]
outside = [px[y][int(x)] for x in (xb - 3, xe + 3)]
assert len(set(inside)) == 1 and not png.light(inside[0]), (xb, xe, inside)
assert all(png.light(c) for c in outside), (xb, xe, outside)
# the rows below (the lane's edge, the next lane) are not setup's
assert px[y + g["ROW"]][int((xb + xe) / 2)] != inside[0]
print("# setup at x %.1f .. %.1f, colour %s" % (xb, xe, inside[0]))
PY
done <"$TMP/setup"
[ "$n" -eq 2 ] || not_ok "two windows to check, got $n"

run_pmon 0 trace report "$TMP/t.trace" --from 100000 --to 100001 -o "$TMP/e.png"
check "a window after the end is still a picture" is_png "$TMP/e.png"

# Names cairo would refuse: a byte that is not UTF-8, a surrogate, a control.
cat >"$TMP/bad.c" <<'EOF'
#include <pmon/trace.h>
int main(void)
{
	PMON_TRACE_BEGIN("bad\xff\xed\xa0\x80\x01name");
	PMON_TRACE_END("bad\xff\xed\xa0\x80\x01name");
	PMON_TRACE_MARK("a<b&\"c'");
	return 0;
}
EOF
if [ -n "${PMON_BUILD:-}" ] && cc ${PMON_USER_CFLAGS:-} -I"$PMON_SRC/include" -o "$TMP/bad" "$TMP/bad.c" \
	"$PMON_BUILD/libpmon.a" -lz -ljansson -lm -lpthread -ldl 2>"$TMP/cc.err"; then
	run_pmon 0 trace -o "$TMP/b.trace" -- "$TMP/bad"
	run_pmon 0 trace report "$TMP/b.trace" -o "$TMP/b.svg"
	if command -v xmllint >/dev/null; then
		check "names not UTF-8: a well-formed SVG" xmllint --noout "$TMP/b.svg"
	fi
	run_pmon 0 trace report "$TMP/b.trace" -o "$TMP/b.png"
	check "names not UTF-8: a PNG" is_png "$TMP/b.png"
else
	echo "# skipped the names run: cannot build against libpmon.a ($(head -c 200 "$TMP/cc.err"))"
fi

# Past 200,000 events: a warning. The trace is written here, in the file
# format of docs/trace.md (a program's hooks may drop some under load):
# 200,001 instants one microsecond apart.
python3 - "$TMP/big.trace" <<'PY'
import struct, sys, zlib
def chunk(magic, payload):
    return struct.pack("<4sIII", magic, len(payload), zlib.crc32(payload), 0) + payload
# magic, version, header size, pid, flags (the rate is given), ticks/s,
# tick0, mono0, bracket0, command
out = [struct.pack("<8sIIiIQQQQ256s", b"PMONTRC1", 1, 312, 42, 1, 10**9, 0, 0, 0, b"big")]
out.append(chunk(b"TCHN", struct.pack("<II", 1, 4) + b"mark"))
n, at = 200001, 0
while at < n:
    k = min(4096, n - at)
    recs = b"".join(struct.pack("<QII", 1000 * (at + i), (3 << 28) | 1, 0) for i in range(k))
    out.append(chunk(b"TEVT", struct.pack("<iIQ", 42, k, 0) + recs))
    at += k
open(sys.argv[1], "wb").write(b"".join(out))
PY
run_pmon 0 trace report "$TMP/big.trace" --from 0 --to 0.05 -o "$TMP/big.png"
check "past 200,000 events: one warning line" sh -c "[ \$(wc -l <'$TMP/err') -eq 1 ] && grep -q '200001 events make a large picture' '$TMP/err'"
finish
