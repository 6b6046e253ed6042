#!/bin/sh
# pmon record / pmon report with a software event (cpu-clock) on a known
# workload: the hot function first, folded stacks, JSON, DSO sort; a
# truncated or killed recording still reports; bad input is one line.
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"
W=$PMON_WORKLOADS/wl-hotcold

run_pmon 0 record -e cpu-clock -F 2000 -g -o "$TMP/p.data" -- "$W" 30000000
check "record says how many records" grep -q "records written to $TMP/p.data" "$TMP/err"
run_pmon 0 report -i "$TMP/p.data"
awk '/^ +[0-9.]+%/ {print $3}' "$TMP/out" | head -2 >"$TMP/top2"
check "hot is the first symbol" [ "$(sed -n 1p "$TMP/top2")" = hot ]
check "cold is the second" [ "$(sed -n 2p "$TMP/top2")" = cold ]
# hot runs 70% of the iterations; on these VMs the split varies from run to
# run (perf shows 58..68%), so only clear shares are asserted.
check "hot and cold hold most samples, hot the larger share" python3 -c '
import re, sys
rows = {m.group(2): float(m.group(1)) for m in re.finditer(r"^\s+([0-9.]+)%\s+\d+\s+(\S+)", open(sys.argv[1]).read(), re.M)}
assert rows["hot"] > rows["cold"] > 15 and rows["hot"] + rows["cold"] > 85, rows
' "$TMP/out"
run_pmon 0 report -i "$TMP/p.data" --format folded
check "folded stacks end in hot" grep -Eq "^([^ ]*;)?hot [0-9]+$" "$TMP/out"
# hot is a leaf without a frame of its own, so the kernel's frame-pointer
# walk may step from it straight to main's caller, in libc: named where
# libc's local symbols are (libc_symbols), [unknown] elsewhere, as in perf.
caller='main;hot\|__libc_start_call_main;hot'
libc_symbols || caller="$caller\\|\\[unknown\\];hot"
check "folded stacks go through main" grep -q "$caller" "$TMP/out"
run_pmon 0 report -i "$TMP/p.data" --format json
check "JSON parses with samples" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["samples"] > 50 and d["entries"][0]["symbol"] == "hot" and d["event"] == "cpu-clock"
' "$TMP/out"
run_pmon 0 report -i "$TMP/p.data" --sort dso
check "by DSO: the workload first" grep -Eq "^ +[0-9.]+% +[0-9]+ +wl-hotcold" "$TMP/out"

# "Sample After" N events: -c.
run_pmon 0 record -e cpu-clock -c 1000000 -o "$TMP/c.data" -- "$W" 10000000
run_pmon 0 report -i "$TMP/c.data" --format json
check "-c: period 1000000 ns per sample" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert all(e["period"] == 1000000 * e["samples"] for e in d["entries"]), d["entries"][:2]
' "$TMP/out"

# VTune's calibration: one counting run picks the Sample After value.
run_pmon 0 record --calibrate=500 -o "$TMP/cal.data" -- "$W" 30000000
check "--calibrate: N = count / (seconds x 500), then used as -c" python3 -c '
import re, sys
m = re.search(r"counted (\d+) in ([0-9.]+) s; Sample After (\d+) for about 500 ", open(sys.argv[1]).read())
count, secs, n = int(m.group(1)), float(m.group(2)), int(m.group(3))
assert n > 1 and abs(n - count / (secs * 500)) <= 0.01 * n + 1, (count, secs, n)
open(sys.argv[2], "w").write(str(n))' "$TMP/err" "$TMP/n"
run_pmon 0 report -i "$TMP/cal.data" --format json
check "--calibrate: every sample carries the calibrated period" python3 -c '
import json, sys
n = int(open(sys.argv[2]).read()); d = json.load(open(sys.argv[1]))
assert d["samples"] > 5 and all(e["period"] == n * e["samples"] for e in d["entries"]), (n, d["entries"][:2])
' "$TMP/out" "$TMP/n"

# Code generated at run time, named by the JIT in /tmp/perf-PID.map.
run_pmon 0 record -o "$TMP/j.data" -- "$PMON_WORKLOADS/wl-jit" 300000000 "$TMP/jmap"
jmap=$(cat "$TMP/jmap")
run_pmon 0 report -i "$TMP/j.data" --format json
check "JIT: the generated loop resolves through /tmp/perf-PID.map" python3 -c '
import json, sys
e = json.load(open(sys.argv[1]))["entries"][0]
assert e["symbol"] == "jitted_loop" and e["dso"] == "[jit]" and e["percent"] > 80, e' "$TMP/out"
rm -f "$jmap"
run_pmon 0 report -i "$TMP/j.data" --format json
check "JIT: without the map file the loop is unknown" python3 -c '
import json, sys
e = json.load(open(sys.argv[1]))["entries"][0]
assert e["symbol"] == "[unknown]", e' "$TMP/out"

# A truncated file reports what its whole chunks hold, with a warning. It
# needs a whole chunk before the cut one: a chunk is written at least every
# 200 ms, and a fast machine ran the first workload in 0.1 s, so the run is
# lengthened until the file has two.
cp "$TMP/p.data" "$TMP/t0.data"
iters=30000000
for _ in 1 2 3 4 5; do
	size=$(wc -c <"$TMP/t0.data")
	head -c $((size - 10)) "$TMP/t0.data" >"$TMP/t.data"
	"$PMON" report -i "$TMP/t.data" >/dev/null 2>&1 && break
	iters=$((iters * 4))
	"$PMON" record -e cpu-clock -F 2000 -o "$TMP/t0.data" -- "$W" "$iters" 2>/dev/null
done
run_pmon 0 report -i "$TMP/t.data"
check "truncated: a warning" grep -q "cut short" "$TMP/err"
# Killed mid-run: every chunk written so far is readable.
"$PMON" record -e cpu-clock -F 1000 -o "$TMP/k.data" -- "$W" 400000000 2>/dev/null &
pid=$!
# Killed once the file holds more than 100 samples (a state, not a time:
# on a loaded machine one second held 90 to 130).
for _ in $(seq 1 600); do
	n=$("$PMON" report -i "$TMP/k.data" --format json 2>/dev/null | grep -m1 '"samples"' | tr -dc 0-9)
	[ "${n:-0}" -gt 100 ] && break
	sleep 0.1
done
kill -KILL $pid
wait $pid 2>/dev/null
pkill -f "wl-hotcold 400000000" 2>/dev/null
run_pmon 0 report -i "$TMP/k.data" --format json
check "SIGKILLed recording still reports samples" python3 -c '
import json, sys; assert json.load(open(sys.argv[1]))["samples"] > 100' "$TMP/out"

# A process already running (-p), and the whole system (-a): mappings made
# before sampling began come from /proc, so symbols still resolve.
"$W" 4000000000 &
wl=$!
sleep 0.2
timeout -k 10 --preserve-status -s INT 1.5 "$PMON" record -F 1000 -p $wl -o "$TMP/pp.data" 2>"$TMP/err"
check "-p: stops on SIGINT with status 130 (128+SIGINT), the file written" [ $? -eq 130 ]
check "-p: the mappings read from /proc carry the file's build id" python3 -c '
import struct, sys, zlib
b = open(sys.argv[1], "rb").read()
want = bytes.fromhex(sys.argv[3])
off, found = struct.unpack_from("<I", b, 12)[0], False
while off < len(b):
    magic, n, crc, nrec = struct.unpack_from("<4sIII", b, off)
    data = b[off + 16:off + 16 + n]
    data = zlib.decompress(data) if magic == b"CHNZ" else data
    o = 0
    while magic != b"CHNS" and o + 8 <= len(data):
        t, misc, size = struct.unpack_from("<IHH", data, o)
        if t == 10 and data[o + 72:o + size].split(b"\0")[0] == sys.argv[2].encode():
            assert misc & 0x4000 and data[o + 44:o + 44 + data[o + 40]] == want, data[o + 40:o + 64].hex()
            found = True
        o += size
    off += 16 + n
assert found' "$TMP/pp.data" "$(readlink -f "$W")" "$(readelf -n "$W" | awk '/Build ID/ {print $3}')"
run_pmon 0 report -i "$TMP/pp.data" --format json
check "-p: hot resolves in a process started before pmon" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["samples"] > 100 and d["entries"][0]["symbol"] == "hot", d["entries"][:3]' "$TMP/out"
timeout -k 10 --preserve-status -s INT 1.5 "$PMON" record -a -F 500 -o "$TMP/aa.data" 2>"$TMP/err"
check "-a: stops on SIGINT with status 130" [ $? -eq 130 ]
kill $wl 2>/dev/null
wait $wl 2>/dev/null
run_pmon 0 report -i "$TMP/aa.data" --sort dso --format json
check "-a: the running workload's DSO is among the samples" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert any(e["dso"] == "wl-hotcold" and e["samples"] > 50 for e in d["entries"]), d["entries"][:4]' "$TMP/out"
# Kernel names: reading /dev/zero spends its time in the kernel's read_zero,
# whatever else the machine does (an idle CPU gives -a no kernel samples).
run_pmon 0 record -o "$TMP/kz.data" -- dd if=/dev/zero of=/dev/null bs=1M count=10000
run_pmon 0 report -i "$TMP/kz.data" --format json
if awk '$1 != "0000000000000000" {found=1; exit} END {exit !found}' /proc/kallsyms; then
	check "kernel samples named from /proc/kallsyms" python3 -c '
import json, sys
names = {l.split()[2] for l in open("/proc/kallsyms")}
d = json.load(open(sys.argv[1]))
k = [e for e in d["entries"] if e["dso"] == "[kernel]"]
assert sum(e["samples"] for e in k) * 2 > d["samples"], k[:3]
assert all(e["symbol"] in names for e in k), k[:3]' "$TMP/out"
	# The recording names its kernel addresses itself (CHNS chunks written at
	# the end): rename read_zero there and the report follows the file, not
	# this machine's kallsyms (which a reboot's KASLR offset would change).
	python3 -c '
import struct, sys, zlib
b = bytearray(open(sys.argv[1], "rb").read())
off, found = struct.unpack_from("<I", b, 12)[0], 0
while off < len(b):
    magic, n, crc, nrec = struct.unpack_from("<4sIII", b, off)
    if magic == b"CHNS":
        data = bytes(b[off + 16:off + 16 + n])
        found += data.count(b"read_zero\0")
        data = data.replace(b"read_zero\0", b"READ_ZERO\0")
        b[off + 16:off + 16 + n] = data
        struct.pack_into("<I", b, off + 8, zlib.crc32(data))
    off += 16 + n
assert found == 1, found
open(sys.argv[2], "wb").write(b)' "$TMP/kz.data" "$TMP/kz2.data"
	check "the recording carries read_zero in a CHNS chunk" [ $? -eq 0 ]
	run_pmon 0 report -i "$TMP/kz2.data" --format json
	check "kernel names come from the recording's own symbols" python3 -c '
import json, sys
e = json.load(open(sys.argv[1]))["entries"]
assert e[0]["symbol"] == "READ_ZERO" and e[0]["dso"] == "[kernel]", e[:2]' "$TMP/out"
else
	echo "ok - # SKIP kernel symbols: /proc/kallsyms shows no addresses here (kptr_restrict)"
fi

# Chunks are stored deflated; a version-1 file (raw chunks) reads the same.
run_pmon 0 report -i "$TMP/p.data" --format json
cp "$TMP/out" "$TMP/v2.json"
check "chunks are deflated (CHNZ), far smaller than the raw records" python3 -c '
import struct, sys, zlib
b = open(sys.argv[1], "rb").read()
off, z, raw, stored = struct.unpack_from("<I", b, 12)[0], 0, 0, 0
while off < len(b):
    magic, n, crc, nrec = struct.unpack_from("<4sIII", b, off)
    data = b[off + 16:off + 16 + n]
    assert zlib.crc32(data) == crc
    if magic == b"CHNZ":
        z += 1; raw += len(zlib.decompress(data))
    else:
        raw += n
    stored += n; off += 16 + n
assert z and stored * 3 < raw, (z, stored, raw)' "$TMP/p.data"
python3 -c '
import struct, sys, zlib
b = bytearray(open(sys.argv[1], "rb").read())
hs = struct.unpack_from("<I", b, 12)[0]
out = bytearray(b[:hs]); struct.pack_into("<I", out, 8, 1)
off = hs
while off < len(b):
    magic, n, crc, nrec = struct.unpack_from("<4sIII", b, off)
    data = bytes(b[off + 16:off + 16 + n])
    if magic == b"CHNZ":
        data = zlib.decompress(data)
    out += struct.pack("<4sIII", b"CHNK", len(data), zlib.crc32(data), nrec) + data
    off += 16 + n
open(sys.argv[2], "wb").write(out)' "$TMP/p.data" "$TMP/v1.data"
run_pmon 0 report -i "$TMP/v1.data" --format json
check "a version-1 recording (raw chunks) gives the same report" cmp -s "$TMP/out" "$TMP/v2.json"
python3 -c '
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read()); struct.pack_into("<I", b, 8, 9)
open(sys.argv[2], "wb").write(b)' "$TMP/p.data" "$TMP/v9.data"
run_pmon 2 report -i "$TMP/v9.data"
one_line_error "recording format version 9 (this pmon reads 1 to 2)"
: >"$TMP/empty.data"
run_pmon 2 report -i "$TMP/empty.data"
one_line_error "not a pmon recording"

# Bad input.
printf 'not a recording at all' >"$TMP/junk"
run_pmon 2 report -i "$TMP/junk"
one_line_error "not a pmon recording"
run_pmon 2 report -i "$TMP/nope.data"
one_line_error "nope.data: No such file or directory"
run_pmon 2 record -c 0 -- true
one_line_error "-c 0"
run_pmon 2 record -F 0 -- true
one_line_error "-F 0"
run_pmon 2 record -o "$TMP/x.data"
one_line_error "give one target"
run_pmon 2 record --calibrate -a -o "$TMP/x.data"
one_line_error "--calibrate runs a command twice"
run_pmon 2 record --calibrate -c 10 -o "$TMP/x.data" -- true
one_line_error "leave out -c and -F"
run_pmon 2 record --calibrate=0 -o "$TMP/x.data" -- true
one_line_error "--calibrate=0"
run_pmon 127 record --calibrate -o "$TMP/x.data" -- "$TMP/no-such-program"
one_line_error "cannot run"
run_pmon 2 record -o "$TMP/x.data"
one_line_error "give one target"
run_pmon 2 record -p 999999999 -o "$TMP/x.data"
one_line_error "process 999999999 does not exist"
if [ ! -e /sys/bus/event_source/devices/cpu ]; then
	run_pmon 3 record -e cycles -o "$TMP/x.data" -- true
	one_line_error "cannot sample 'cycles'"
fi
finish
