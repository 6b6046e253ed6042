#!/bin/sh
# SPDX-License-Identifier: MIT
# Benchmark: reports at scale (issue #16). The same workload
# (tests/workloads/hotcold.c) is recorded by pmon and by perf (`-g`,
# cpu-clock, perf with --no-bpf-event, both pinned to one CPU with
# taskset), then each recording is grown to 100 K, 1 M and 3 M samples and
# timed: `pmon report` (both cores, and one reader) and the folded export
# against `perf report --stdio --sort symbol -g none` and `perf script`,
# with peak RSS (/usr/bin/time -f %M) and the floor of reading a pmon file
# (every chunk CRC-checked and inflated, nothing else:
# bench/report-inflate-floor.c). Medians of REPS interleaved runs. The
# folded export runs with --no-inline, as perf script names no inlined
# frames by default (naming them costs pmon a constant ~0.4 s here: elfutils
# inflates libc's whole compressed .debug_info once).
#
# Growing: recording 3 M samples takes this VM's hrtimer tens of minutes,
# so each tool records BASE samples once and the larger sizes repeat its
# samples: pmon's chunks that hold samples only are appended again as they
# are; perf records in pipe mode and its SAMPLE records are appended again
# with their times moved past the end (a FINISHED_ROUND every 1000 samples,
# as perf writes them, so that perf's ordered queue flushes as it would).
# Both tools then read the same samples, k times over.
#
# Memory, recorded files: perf's memory depends on how it reads. In pipe
# mode (the grown files above) it holds its histogram and little else; a
# perf.data file, as `perf record -o perf.data` writes it and as people
# read it, is mapped and its samples queued in time order. So each tool also
# records MEM_SIZES samples for real (no repetition; perf in file mode, the
# iterations scaled from BASE's count of each tool), and the same four
# commands are measured on those files: peak RSS first, times beside.
# Recording 1 M samples takes this VM several minutes per tool. pmon
# report also reads perf's perf.data there (issue #26's goal: at most 0.2x
# perf report's time and peak memory on the same file).
#
# Not a test: it asserts nothing, it measures; 20-30 minutes here.
# usage: bench/report-scale.sh [PMON] [WORKLOAD]
#   env: SIZES (default "100000 1000000 3000000"; "" skips), BASE (100000),
#        MEM_SIZES (recorded files, default "500000 1000000"; "" skips),
#        RATE (cpu-clock Hz, 10000), REPS (3), WRITE=1 to update RESULTS.md
set -eu
PMON=${1:-build/pmon}
WL=${2:-build/tests/wl-hotcold}
command -v perf >/dev/null || { echo "perf is not installed: nothing to compare with"; exit 77; }
perf record -B --no-bpf-event -e cpu-clock -o /dev/null -q true >/dev/null 2>&1 ||
	{ echo "perf cannot sample here"; exit 77; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time is needed for peak RSS"; exit 77; }
CPU=$(($(nproc) - 1))
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
cc -O2 -o "$DIR/floor" "$(dirname "$0")/report-inflate-floor.c" -lz
python3 - "$PMON" "$WL" "$CPU" "$DIR" "$(dirname "$0")/RESULTS.md" <<'PY'
import os, re, statistics, struct, subprocess, sys, time, zlib
pmon, wl, cpu, d, results = sys.argv[1:6]
SIZES = [int(s) for s in os.environ.get("SIZES", "100000 1000000 3000000").split()]
BASE = int(os.environ.get("BASE", "100000"))
RATE = int(os.environ.get("RATE", "10000"))
REPS = int(os.environ.get("REPS", "3"))
load0 = open("/proc/loadavg").read().split()[:3]
pin = ["taskset", "-c", str(cpu)]
retried = []

def perf_record(args, **kw):
    """perf record ARGS (after "perf record"); where perf dies in its own
    build-id pass (perf 6.1 on newer kernels: tests/cli/perf-record.sh),
    the recording is made again with --buildid-mmap, and the results say so."""
    out = kw.pop("stdout", None)
    for extra in ([], ["--buildid-mmap"]):
        if out is not None:
            out.seek(0)
            out.truncate()
        r = subprocess.run(pin + ["perf", "record"] + extra + args, stdout=out,
                           stderr=subprocess.DEVNULL, **kw)
        if r.returncode in (-6, -7, -8, -11, 134, 135, 136, 139) and not extra:
            retried.append(args[-1])
            continue
        r.check_returncode()
        return r

# Iterations for BASE samples: the workload's speed, pinned.
t0 = time.perf_counter()
subprocess.run(pin + [wl, "20000000"], check=True, stdout=subprocess.DEVNULL)
ips = 20000000 / (time.perf_counter() - t0)
iters = str(int(ips * BASE / RATE * 1.05))

subprocess.run(pin + [pmon, "record", "-e", "cpu-clock", "-F", str(RATE), "-g", "-o",
                      f"{d}/pmon.data", "--", wl, iters], check=True, stderr=subprocess.DEVNULL)
with open(f"{d}/perf.pipe", "wb") as f:
    perf_record(["--no-bpf-event", "-q", "-e", "cpu-clock", "-F", str(RATE), "-g", "-o", "-",
                 "--", wl, iters], stdout=f)

def pmon_chunks(b):
    off = struct.unpack_from("<I", b, 12)[0]
    while off < len(b):
        magic, n, crc, nrec = struct.unpack_from("<4sIII", b, off)
        data = b[off + 16:off + 16 + n]
        raw = zlib.decompress(data) if magic == b"CHNZ" else data
        types, o = [], 0
        while magic != b"CHNS" and o + 8 <= len(raw):
            t, misc, size = struct.unpack_from("<IHH", raw, o)
            types.append(t)
            o += size
        yield b[off:off + 16 + n], magic, types
        off += 16 + n

def grow_pmon(k, out):
    b = open(f"{d}/pmon.data", "rb").read()
    again, total = [], 0
    for whole, magic, types in pmon_chunks(b):
        n = types.count(9)
        total += n
        if magic != b"CHNS" and n and not set(types) & {3, 7, 10, 0x7002}:
            again.append((whole, n))
    with open(out, "wb") as f:
        f.write(b)
        for _ in range(k - 1):
            for whole, n in again:
                f.write(whole)
                total += n
    return total

def grow_perf(k, out):
    b = open(f"{d}/perf.pipe", "rb").read()
    off, st, samples, tmin, tmax = 16, 0, [], None, 0
    while off + 8 <= len(b):
        t, misc, size = struct.unpack_from("<IHH", b, off)
        if size == 0:
            break
        if t == 64:  # PERF_RECORD_HEADER_ATTR: the attr's sample_type
            st = struct.unpack_from("<Q", b, off + 32)[0]
        if t == 9:
            samples.append(b[off:off + size])
        off += size
    # TIME follows IDENTIFIER, IP and TID (perf_event_open(2))
    at = 8 + 8 * sum(1 for bit in (0x10000, 0x1, 0x2) if st & bit)
    assert st & 0x4, "perf's samples carry no time"
    times = [struct.unpack_from("<Q", s, at)[0] for s in samples]
    span = max(times) - min(times) + 1
    with open(out, "wb") as f:
        f.write(b[:off])
        for c in range(1, k):
            for i, s in enumerate(samples):
                s = bytearray(s)
                struct.pack_into("<Q", s, at, times[i] + c * span)
                f.write(s)
                if i % 1000 == 999:
                    f.write(struct.pack("<IHH", 68, 0, 8))
            f.write(struct.pack("<IHH", 68, 0, 8))
    return len(samples) * k

def timed(cmd, env=None):
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, env=env)
    wall = time.perf_counter() - t0
    return wall, int(p.stderr.strip().splitlines()[-1])

one = dict(os.environ, PMON_REPORT_THREADS="1")
rows = []
base_pmon = grow_pmon(1, f"{d}/p1.data")
base_perf = grow_perf(1, f"{d}/f1.pipe")
for size in SIZES:
    kp, kf = max(1, round(size / base_pmon)), max(1, round(size / base_perf))
    np_, nf = grow_pmon(kp, f"{d}/p.data"), grow_perf(kf, f"{d}/f.pipe")
    cmds = {
        "floor": ([f"{d}/floor", f"{d}/p.data"], None),
        "pmon report": ([pmon, "report", "-i", f"{d}/p.data"], None),
        "pmon report, 1 reader": ([pmon, "report", "-i", f"{d}/p.data"], one),
        "pmon folded": ([pmon, "report", "-i", f"{d}/p.data", "--format", "folded",
                         "--no-inline"], None),
        "perf report": (["perf", "report", "-i", f"{d}/f.pipe", "--stdio", "--sort", "symbol",
                         "-g", "none"], None),
        "perf script": (["perf", "script", "-i", f"{d}/f.pipe"], None),
    }
    got = {k: [] for k in cmds}
    for _ in range(REPS):
        for k, (c, env) in cmds.items():
            got[k].append(timed(c, env))
    med = {k: (statistics.median(w for w, m in v), max(m for w, m in v)) for k, v in got.items()}
    rows.append((size, np_, nf, os.path.getsize(f"{d}/p.data"), os.path.getsize(f"{d}/f.pipe"), med))
    for k in cmds:
        n = nf if k.startswith("perf") else np_
        print(f"{size:>8} {k:<22} {med[k][0]:8.3f} s {med[k][0] / n * 1e9:8.0f} ns/sample "
              f"{med[k][1] / 1024:8.1f} MB", flush=True)

# Memory on recorded files (perf in file mode): see the header.
MEM_SIZES = [int(v) for v in os.environ.get("MEM_SIZES", "500000 1000000").split()]
mem_rows = []
for size in MEM_SIZES:
    it_p, it_f = int(int(iters) * size / base_pmon), int(int(iters) * size / base_perf)
    subprocess.run(pin + [pmon, "record", "-e", "cpu-clock", "-F", str(RATE), "-g", "-o",
                          f"{d}/m.pmon", "--", wl, str(it_p)], check=True,
                   stderr=subprocess.DEVNULL)
    perf_record(["--no-bpf-event", "-q", "-e", "cpu-clock", "-F", str(RATE), "-g", "-o",
                 f"{d}/m.perf", "--", wl, str(it_f)])
    np_ = sum(t.count(9) for _, _, t in pmon_chunks(open(f"{d}/m.pmon", "rb").read()))
    stats = subprocess.run(["perf", "report", "-i", f"{d}/m.perf", "--stats"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    nf = int(re.search(r"SAMPLE events:\s+(\d+)", stats).group(1))
    cmds = {
        "pmon report": [pmon, "report", "-i", f"{d}/m.pmon"],
        "pmon folded": [pmon, "report", "-i", f"{d}/m.pmon", "--format", "folded",
                        "--no-inline"],
        "perf report": ["perf", "report", "-i", f"{d}/m.perf", "--stdio", "--sort", "symbol",
                        "-g", "none"],
        "perf script": ["perf", "script", "-i", f"{d}/m.perf"],
        # issue #26: pmon reading perf's own file, beside perf report on it
        "pmon on perf.data": [pmon, "report", "-i", f"{d}/m.perf"],
    }
    got = {k: [timed(c) for _ in range(REPS)] for k, c in cmds.items()}
    med = {k: (statistics.median(w for w, m in v), max(m for w, m in v)) for k, v in got.items()}
    mem_rows.append((np_, nf, os.path.getsize(f"{d}/m.pmon"), os.path.getsize(f"{d}/m.perf"), med))
    for k in cmds:
        n, sz = ((nf, mem_rows[-1][3]) if k.startswith("perf") or k.endswith("perf.data")
                 else (np_, mem_rows[-1][2]))
        print(f"{size:>8} recorded {k:<13} {med[k][0]:8.3f} s {med[k][1] / 1024:8.1f} MB "
              f"({n} samples, a {sz / 1e6:.1f} MB file)", flush=True)
    os.unlink(f"{d}/m.perf")
load1 = open("/proc/loadavg").read().split()[:3]
print("load average before/after:", " ".join(load0), "/", " ".join(load1))

lines = ["| samples (pmon / perf) | floor: inflate | pmon report | 1 reader | perf report "
         "| pmon/perf | RSS pmon / perf | folded | perf script | folded/script |",
         "|---|---|---|---|---|---|---|---|---|---|"]
for size, np_, nf, sp, sf, m in rows:
    ns = lambda k, n: f"{m[k][0]:.2f} s ({m[k][0] / n * 1e9:.0f} ns)"
    lines.append(
        f"| {np_ / 1e6:.2f} M / {nf / 1e6:.2f} M | {ns('floor', np_)} | **{ns('pmon report', np_)}** "
        f"| {ns('pmon report, 1 reader', np_)} | {ns('perf report', nf)} "
        f"| **{m['pmon report'][0] / np_ / (m['perf report'][0] / nf):.2f}** "
        f"| {m['pmon report'][1] / 1024:.0f} / {m['perf report'][1] / 1024:.0f} MB "
        f"(**{m['pmon report'][1] / m['perf report'][1]:.2f}**) "
        f"| **{ns('pmon folded', np_)}** | {ns('perf script', nf)} "
        f"| **{m['pmon folded'][0] / np_ / (m['perf script'][0] / nf):.2f}** |")
table = "\n".join(lines) if rows else ""  # SIZES="": the memory part alone
mlines = ["| samples (pmon / perf) | file (pmon / perf) | pmon report | perf report | RSS ratio "
          "| pmon folded | perf script | RSS ratio | pmon report of perf.data | time, RSS / perf report |",
          "|---|---|---|---|---|---|---|---|---|---|"]
for np_, nf, sp, sf, m in mem_rows:
    cell = lambda k: f"{m[k][1] / 1024:.1f} MB ({m[k][0]:.2f} s)"
    mlines.append(
        f"| {np_ / 1e6:.2f} M / {nf / 1e6:.2f} M | {sp / 1e6:.1f} / {sf / 1e6:.1f} MB "
        f"| {cell('pmon report')} | {cell('perf report')} "
        f"| **{m['pmon report'][1] / m['perf report'][1]:.2f}** "
        f"| {cell('pmon folded')} | {cell('perf script')} "
        f"| **{m['pmon folded'][1] / m['perf script'][1]:.2f}** "
        f"| {cell('pmon on perf.data')} "
        f"| **{m['pmon on perf.data'][0] / m['perf report'][0]:.2f}x, "
        f"{m['pmon on perf.data'][1] / m['perf report'][1]:.2f}x** |")
mtable = "\n".join(mlines) if mem_rows else ""
print(table)
print(mtable)
note = (f"perf record died in its build-id pass {len(retried)} time(s) and was made again "
        f"with --buildid-mmap (its files then name build ids in MMAP2 records)." if retried else "")
if note:
    print(note)
if os.environ.get("WRITE") == "1":
    text = open(results).read()
    head = "## report-scale (`bench/report-scale.sh`)"
    date = time.strftime("%Y-%m-%d")
    body = (f"{head}\n\nMeasured {date}, {os.cpu_count()} CPUs, load average {' '.join(load0)} "
            f"before and {' '.join(load1)} after (other work was running: compare the ratios "
            f"within this table, not its absolute times). Times are medians of {REPS} runs, "
            f"per sample in parentheses; ratios are per sample (pmon's and perf's counts "
            f"differ a little). RSS is the peak over the runs.\n\n{table}\n")
    if mtable:
        body += (f"\nMemory on recorded files (no repetition; perf reads a perf.data file, "
                 f"not a pipe): peak RSS, the largest of {REPS} runs, median time beside; "
                 f"peak RSS does not depend on the load.\n\n{mtable}\n")
    if note:
        body += f"\n{note}\n"
    if head in text:
        a = text.index(head)
        b = text.find("\n## ", a + len(head))
        text = text[:a] + body + (text[b + 1:] if b >= 0 else "")
    else:
        text = text.rstrip("\n") + "\n\n" + body
    open(results, "w").write(text)
PY
