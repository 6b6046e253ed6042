#!/bin/sh
# pmon report on damaged and hostile recordings: a torn or flipped middle
# chunk hides only itself (the reader resynchronises on the next valid
# chunk, and says what it skipped in one warning line and in the JSON);
# every chunk damaged is a clear error; a record size that is not a
# multiple of 8 is named; the report is the same read by one thread or
# several; files the recording names (/tmp/perf-PID.map, mapped binaries)
# that another user owns or that are FIFOs are not read.
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"
W=$PMON_WORKLOADS/wl-hotcold

cat >"$TMP/chunks.py" <<'PY'
import struct, sys, zlib

def chunks(b):
    off = struct.unpack_from("<I", b, 12)[0]
    while off < len(b):
        magic, n, crc, nrec = struct.unpack_from("<4sIII", b, off)
        yield off, magic, n
        off += 16 + n

def samples(b, off, magic, n):
    data = b[off + 16:off + 16 + n]
    if magic == b"CHNS":
        return 0
    data = zlib.decompress(data) if magic == b"CHNZ" else data
    o = c = 0
    while o + 8 <= len(data):
        t, misc, size = struct.unpack_from("<IHH", data, o)
        c += t == 9
        o += size
    return c

cmd, path = sys.argv[1], sys.argv[2]
b = bytearray(open(path, "rb").read())
ch = list(chunks(b))
if cmd == "samples":  # samples of every data chunk, and of chunk K
    k = int(sys.argv[3])
    print(sum(samples(b, *c) for c in ch), samples(b, *ch[k]) if k < len(ch) else 0, len(ch))
    sys.exit(0)
out, k = sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 0
off, magic, n = ch[k]
if cmd == "flip":  # one byte in the middle of chunk K's payload
    b[off + 16 + n // 2] ^= 0x40
elif cmd == "magic":  # chunk K's header is no header
    b[off:off + 4] = b"XXXX"
elif cmd == "len":  # chunk K's length points far past its end
    struct.pack_into("<I", b, off + 4, 0x7ffff)
elif cmd == "all":  # every chunk's payload
    for off, magic, n in ch:
        b[off + 16 + n // 2] ^= 0x40
elif cmd == "zero":  # chunks K to L (header and payload) all zeros
    last = int(sys.argv[5])
    end = ch[last][0] + 16 + ch[last][2]
    b[off:end] = bytes(end - off)
elif cmd == "junk":  # 777 bytes, "CHNZ" then zeros, inserted before chunk K
    b[off:off] = b"CHNZ" + bytes(773)
elif cmd == "unnumber":  # as an older pmon wrote it: no chunk numbers, raw
    hs = struct.unpack_from("<I", b, 12)[0]
    nb = bytearray(b[:hs])
    for off, magic, n in ch:
        data = bytes(b[off + 16:off + 16 + n])
        nrec = struct.unpack_from("<I", b, off + 12)[0]
        if magic == b"CHNZ":
            data, magic = zlib.decompress(data), b"CHNK"
        if magic == b"CHNK" and struct.unpack_from("<I", data, 0)[0] == 0x7003:
            data, nrec = data[16:], nrec - 1
        nb += struct.pack("<4sIII", magic, len(data), zlib.crc32(data), nrec) + data
    b = nb
open(out, "wb").write(b)
PY

# Several chunks: one is written at least every second, so a longer run
# has more. A loaded or sanitized machine may run the workload faster or
# slower than expected: lengthen it until the recording has six chunks.
iters=120000000
for _ in 1 2 3 4; do
	run_pmon 0 record -e cpu-clock -F 4000 -g -o "$TMP/p.data" -- "$W" "$iters"
	set -- $(python3 "$TMP/chunks.py" samples "$TMP/p.data" 3)
	total=$1 lost3=$2 nchunks=$3
	[ "$nchunks" -ge 6 ] && break
	iters=$((iters * 2))
done
check "the recording has chunks on both sides of chunk 3 ($nchunks)" [ "$nchunks" -ge 6 ]

# The same report from one reader and from several.
for args in "" "--format json" "--sort dso" "--sort line" "--format folded" \
	"--format speedscope" "-g caller" "-g callee --format json"; do
	# shellcheck disable=SC2086
	PMON_REPORT_THREADS=1 "$PMON" report -i "$TMP/p.data" $args >"$TMP/one" 2>&1
	# shellcheck disable=SC2086
	PMON_REPORT_THREADS=4 "$PMON" report -i "$TMP/p.data" $args >"$TMP/four" 2>&1
	check "report ${args:-text}: 1 thread and 4 threads agree" cmp -s "$TMP/one" "$TMP/four"
done
PMON_REPORT_THREADS=1 "$PMON" report -i "$TMP/p.data" --format pprof -o "$TMP/one.pb.gz"
PMON_REPORT_THREADS=3 "$PMON" report -i "$TMP/p.data" --format pprof -o "$TMP/four.pb.gz"
check "report --format pprof: 1 thread and 3 threads agree" cmp -s "$TMP/one.pb.gz" "$TMP/four.pb.gz"

# A damaged middle chunk hides itself alone, however it is damaged.
for how in flip magic len; do
	python3 "$TMP/chunks.py" "$how" "$TMP/p.data" "$TMP/d.data" 3
	run_pmon 0 report -i "$TMP/d.data" --format json
	check "$how chunk 3: one warning line naming what was skipped" \
		sh -c "[ \$(wc -l <'$TMP/err') -eq 1 ] && grep -q 'skipped 1 damaged chunk (.* bytes, about .* samples)' '$TMP/err'"
	check "$how chunk 3: the samples of every other chunk are reported" python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); want = int(sys.argv[2]) - int(sys.argv[3])
assert d["samples"] == want, (d["samples"], want)
assert d["truncated"] and d["damaged"]["chunks"] == 1 and d["damaged"]["bytes"] > 16, d["damaged"]
est = d["damaged"]["samples_estimate"]; lost = int(sys.argv[3])
assert lost / 3 <= est <= lost * 3, (est, lost)' "$TMP/out" "$total" "$lost3"
done
# Three damaged chunks in a row, zeroed (no header left to count), with
# data chunks on both sides (the last chunk may hold kernel symbols): the
# chunk numbers around them say three; a recording without them (an older
# pmon's) is counted at the good chunks' average size.
set -- $(python3 "$TMP/chunks.py" samples "$TMP/p.data" 1)
lost=$2
for k in 2 3; do
	set -- $(python3 "$TMP/chunks.py" samples "$TMP/p.data" $k)
	lost=$((lost + $2))
done
python3 "$TMP/chunks.py" zero "$TMP/p.data" "$TMP/z.data" 1 3
run_pmon 0 report -i "$TMP/z.data" --format json
check "zeroed chunks 1 to 3: one warning line saying 3 chunks" \
	sh -c "[ \$(wc -l <'$TMP/err') -eq 1 ] && grep -q 'skipped 3 damaged chunks (' '$TMP/err'"
check "zeroed chunks 1 to 3: 3 damaged chunks, the other samples reported" python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); total, lost = int(sys.argv[2]), int(sys.argv[3])
assert d["samples"] == total - lost, (d["samples"], total, lost)
assert d["damaged"]["chunks"] == 3, d["damaged"]
est = d["damaged"]["samples_estimate"]
assert lost / 3 <= est <= lost * 3, (est, lost)' "$TMP/out" "$total" "$lost"
python3 "$TMP/chunks.py" unnumber "$TMP/p.data" "$TMP/u.data"
run_pmon 0 report -i "$TMP/u.data" --format json
check "a recording without chunk numbers reads whole" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["samples"] == int(sys.argv[2]) and not d["truncated"], d["samples"]' "$TMP/out" "$total"
python3 "$TMP/chunks.py" zero "$TMP/u.data" "$TMP/uz.data" 1 3
run_pmon 0 report -i "$TMP/uz.data" --format json
check "zeroed chunks 1 to 3 without chunk numbers: counted by the median chunk size" python3 -c '
import json, struct, sys
d = json.load(open(sys.argv[1])); b = open(sys.argv[2], "rb").read()
off, sizes = struct.unpack_from("<I", b, 12)[0], []
while off < len(b):
    magic, n = struct.unpack_from("<4sI", b, off)
    sizes.append((magic, 16 + n)); off += 16 + n
good = sorted(n for i, (m, n) in enumerate(sizes) if m != b"CHNS" and not 1 <= i <= 3)
lost = sum(n for m, n in sizes[1:4])
want = max(1, (lost + good[len(good) // 2] // 2) // good[len(good) // 2])
assert d["damaged"]["chunks"] == want and d["damaged"]["bytes"] == lost, (d["damaged"], want)' \
	"$TMP/out" "$TMP/u.data"

# Junk inserted between two chunks (a header of length 0 and zeros) hides
# no chunk: every sample is reported, none is said to be lost.
python3 "$TMP/chunks.py" junk "$TMP/p.data" "$TMP/j.data" 4
run_pmon 0 report -i "$TMP/j.data" --format json
check "junk between chunks: one warning line, no chunk missing" \
	sh -c "[ \$(wc -l <'$TMP/err') -eq 1 ] && grep -q 'skipped 777 bytes that were no chunk between chunks numbered in sequence: no chunk is missing' '$TMP/err'"
check "junk between chunks: every sample reported, none estimated lost" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["samples"] == int(sys.argv[2]), (d["samples"], sys.argv[2])
dm = d["damaged"]
assert dm["chunks"] == 0 and dm["samples_estimate"] == 0 and dm["bytes"] == 777, dm
assert not d["truncated"], "junk alone hides no sample: not truncated"' "$TMP/out" "$total"

python3 "$TMP/chunks.py" all "$TMP/p.data" "$TMP/all.data"
run_pmon 2 report -i "$TMP/all.data"
one_line_error "every chunk is damaged"

# A cut tail is still the killed-recording warning.
size=$(wc -c <"$TMP/p.data")
head -c $((size - 10)) "$TMP/p.data" >"$TMP/t.data"
run_pmon 0 report -i "$TMP/t.data"
check "cut tail: the warning says so" grep -q "cut short" "$TMP/err"

# A record whose size is not a multiple of 8 ends its chunk's records, named.
python3 - "$TMP/odd.data" <<'PY'
import struct, sys, zlib
hdr = struct.pack("<8sIIQIIQQQ96s256s", b"PMONDATA", 1, 408, 0x7, 1, 0, 0, 0, 1000,
                  b"cpu-clock", b"odd")
def sample(ip):  # IP | TID | TIME
    return struct.pack("<IHHQIIQ", 9, 0, 32, ip, 1, 1, 0)
recs = sample(0x1000) + struct.pack("<IHH", 9, 0, 10) + b"\0" * 2 + sample(0x2000) * 3
chunk = struct.pack("<4sIII", b"CHNK", len(recs), zlib.crc32(recs), 5) + recs
good = sample(0x3000) * 2
open(sys.argv[1], "wb").write(hdr + chunk + struct.pack("<4sIII", b"CHNK", len(good), zlib.crc32(good), 2) + good)
PY
run_pmon 0 report -i "$TMP/odd.data" --format json
check "size not a multiple of 8: the chunk is named" grep -q "chunk 0: a record of 10 bytes (not a multiple of 8)" "$TMP/err"
check "size not a multiple of 8: the records before it and the next chunk count" python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["samples"] == 3' "$TMP/out"

# A process that execs: the same address is one file before its second
# MMAP2 and another after it; each sample is named by the maps of its time,
# however many readers split the chunks.
python3 - "$TMP/exec.data" <<'PY'
import struct, sys, zlib
hdr = struct.pack("<8sIIQIIQQQ96s256s", b"PMONDATA", 1, 408, 0x3, 1, 0, 0, 0, 1000,
                  b"cpu-clock", b"exec")
def mmap2(path):
    name = path + b"\0"
    name += b"\0" * (-len(name) % 8)
    return struct.pack("<IHHIIQQQIIQQII", 10, 0, 72 + len(name), 7, 7, 0x400000, 0x10000, 0,
                       0, 0, 0, 0, 5, 2) + name
def sample():
    return struct.pack("<IHHQII", 9, 0, 24, 0x401000, 7, 7)
def chunk(r):
    return struct.pack("<4sIII", b"CHNK", len(r), zlib.crc32(r), 1) + r
out = hdr + chunk(mmap2(b"/nonexistent/before") + sample() * 3 + mmap2(b"/nonexistent/after") + sample())
out += chunk(sample() * 5) + chunk(mmap2(b"/nonexistent/third") + sample() * 7)
open(sys.argv[1], "wb").write(out)
PY
for n in 1 3; do
	PMON_REPORT_THREADS=$n "$PMON" report -i "$TMP/exec.data" --sort dso --format json >"$TMP/out" 2>"$TMP/err"
	check "exec, $n reader(s): each sample named by the maps of its time" python3 -c '
import json, sys
got = {e["dso"]: e["samples"] for e in json.load(open(sys.argv[1]))["entries"]}
assert got == {"before": 3, "after": 6, "third": 7}, got' "$TMP/out"
done

# Files named by the recording that are not the user's or not regular files.
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
	run_pmon 0 record -o "$TMP/j.data" -- "$PMON_WORKLOADS/wl-jit" 300000000 "$TMP/jmap"
	jmap=$(cat "$TMP/jmap")
	chown nobody "$jmap"
	run_pmon 0 report -i "$TMP/j.data" --format json
	check "a /tmp/perf-PID.map owned by another user is ignored" python3 -c '
import json, sys
e = json.load(open(sys.argv[1]))["entries"][0]
assert e["symbol"] != "jitted_loop", e' "$TMP/out"
	chown root "$jmap"
	run_pmon 0 report -i "$TMP/j.data" --format json
	check "the same map owned by root names the JIT code" python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["entries"][0]["symbol"] == "jitted_loop"' "$TMP/out"
	rm -f "$jmap"
	mkfifo "$jmap"
	timeout 60 "$PMON" report -i "$TMP/j.data" >"$TMP/out" 2>"$TMP/err"
	check "a FIFO at /tmp/perf-PID.map does not block the report" [ $? -eq 0 ]
	rm -f "$jmap"
	ln -s "$TMP/elsewhere.map" "$jmap"
	printf '%s\n' "0 ffffffffffff linked" >"$TMP/elsewhere.map"
	run_pmon 0 report -i "$TMP/j.data" --format json
	check "a symlink at /tmp/perf-PID.map is not followed" python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["entries"][0]["symbol"] != "linked"' "$TMP/out"
	rm -f "$jmap"
else
	echo "ok - # SKIP perf map ownership: needs root and a 'nobody' user"
fi
# A FIFO where the recording says a binary was mapped.
mkfifo "$TMP/fifo"
python3 - "$TMP/fifo.data" "$TMP/fifo" <<'PY'
import struct, sys, zlib
hdr = struct.pack("<8sIIQIIQQQ96s256s", b"PMONDATA", 1, 408, 0x3, 1, 0, 0, 0, 1000,
                  b"cpu-clock", b"fifo")
name = sys.argv[2].encode() + b"\0"
name += b"\0" * (-len(name) % 8)
mmap2 = struct.pack("<IHHIIQQQIIQQII", 10, 0, 72 + len(name), 7, 7, 0x400000, 0x10000, 0,
                    0, 0, 0, 0, 5, 0) + name
sample = struct.pack("<IHHQII", 9, 0, 24, 0x401000, 7, 7)
recs = mmap2 + sample
open(sys.argv[1], "wb").write(hdr + struct.pack("<4sIII", b"CHNK", len(recs), zlib.crc32(recs), 2) + recs)
PY
timeout 60 "$PMON" report -i "$TMP/fifo.data" --format json >"$TMP/out" 2>"$TMP/err"
check "a FIFO at a mapped binary's path does not block the report" [ $? -eq 0 ]
check "its samples are [unknown]" python3 -c '
import json, sys
e = json.load(open(sys.argv[1]))["entries"][0]
assert e["symbol"] == "[unknown]" and e["samples"] == 1, e' "$TMP/out"
finish
