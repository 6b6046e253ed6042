#!/bin/sh
# pmon report's shares weigh by period: a simulated recording's samples
# carry counts (one sample per instruction, its period the simulated
# count), and a frequency-mode recording's samples stand for unequal
# periods. A synthetic recording (written here by the format's doc,
# docs/pmon-data-format.md) puts 1 sample of period 900 in hot_a and 9 of
# period 25 in hot_b: hot_a is 90% of the events, though 20% of the samples,
# and its row comes first (perf's order: by period).
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"
W=$PMON_WORKLOADS/wl-simloop

python3 - "$W" "$TMP/syn.data" <<'PY'
import struct, subprocess, sys, zlib
exe, out = sys.argv[1], sys.argv[2]
elf = open(exe, "rb").read()
phoff, = struct.unpack_from("<Q", elf, 0x20)
phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
seg = None
for i in range(phnum):
    p_type, p_flags, p_offset, p_vaddr, _, _, p_memsz, _ = struct.unpack_from("<IIQQQQQQ", elf, phoff + i * phentsize)
    if p_type == 1 and p_flags & 1:  # PT_LOAD, PF_X
        skew = p_vaddr & 0xfff
        seg = (p_vaddr - skew, p_memsz + skew, p_offset - skew)
syms = {}
for line in subprocess.run(["nm", exe], capture_output=True, text=True).stdout.splitlines():
    f = line.split()
    if len(f) == 3 and f[2] in ("hot_a", "hot_b"):
        syms[f[2]] = int(f[0], 16)
base = 0x555555554000
PERIOD, IDENT, IP, TID = 1 << 8, 1 << 16, 1 << 0, 1 << 1
name = exe.encode() + b"\0"
name += b"\0" * (-len(name) % 8)
recs = []
ev = struct.pack("<IHHIIQQIIQ64sQ", 0x7002, 0, 120, 0, 1, 0, 1000, 1, 0, 0, b"cpu-clock", 1)
recs.append(ev)
mm = struct.pack("<IHHIIQQQ24xII", 10, 2, 72 + len(name), 4242, 4242, base + seg[0], seg[1], seg[2], 5, 2) + name
recs.append(mm)
def sample(sym, period):
    return struct.pack("<IHHQQIIQ", 9, 2, 40, 1, base + syms[sym] + 1, 4242, 4242, period)
recs.append(sample("hot_a", 900))
recs += [sample("hot_b", 25) for _ in range(4)]
payload = b"".join(recs)
hdr = struct.pack("<8sIIQIIQQQ96s256sQ", b"PMONDATA", 2, 416, IDENT | IP | TID | PERIOD, 1, 0, 0, 0, 1000,
                  b"cpu-clock", b"synthetic", 0)
chunk = struct.pack("<4sIII", b"CHNK", len(payload), zlib.crc32(payload), len(recs)) + payload
open(out, "wb").write(hdr + chunk)
PY
check "the synthetic recording is written" [ -s "$TMP/syn.data" ]
run_pmon 0 report -i "$TMP/syn.data" --format json
check "json: hot_a is 90% by period (20% of the samples), hot_b 10%" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
p = {e["symbol"]: e for e in d["entries"]}
print("#", {k: (v["samples"], v["period"], v["percent"]) for k, v in p.items()})
assert p["hot_a"]["samples"] == 1 and p["hot_a"]["period"] == 900
assert abs(p["hot_a"]["percent"] - 90.0) < 1e-6, p["hot_a"]
assert abs(p["hot_b"]["percent"] - 10.0) < 1e-6, p["hot_b"]
' "$TMP/out"
run_pmon 0 report -i "$TMP/syn.data"
check "text: hot_a's row says 90.00%" grep -Eq "^ +90\.00% +1 +hot_a" "$TMP/out"
# Rows in perf's order, by period (the events represented), not by samples:
# hot_a (1 sample, 900) before hot_b (9 samples, 225), in text and JSON.
check "text: ordered by period: hot_a's row first" python3 -c '
import sys
rows = [l.split()[2] for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")]
print("#", rows)
assert rows[:2] == ["hot_a", "hot_b"], rows
' "$TMP/out"
run_pmon 0 report -i "$TMP/syn.data" --format json
check "json: entries ordered by period" python3 -c '
import json, sys
e = json.load(open(sys.argv[1]))["entries"]
assert [x["symbol"] for x in e[:2]] == ["hot_a", "hot_b"], e
' "$TMP/out"
run_pmon 0 report -i "$TMP/syn.data" --limit 1
check "--limit 1 keeps the entry with most period" grep -Eq "^ +90\.00% +1 +hot_a" "$TMP/out"
finish
