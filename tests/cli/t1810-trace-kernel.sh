#!/bin/sh
# pmon trace -k: the program's kernel events on the hooks' timeline. A
# workload that naps (nanosleep) and writes shows, inside each of its own
# "nap" spans, its clock_nanosleep system call, the switch out (asleep),
# the wake-up and the switch back in, in that order; inside each "write"
# span its write(2). Orders are asserted on timestamps, never durations.
# Then: every report format carries the kernel's events; a program without
# libpmon gets a kernel-only trace. (An unprivileged user: t1811.)
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"
W=$PMON_WORKLOADS/wl-tracehooks

if [ "$(id -u)" != 0 ] || ! grep -qw tracefs /proc/filesystems; then
	echo "skip: kernel tracepoints need root and tracefs"
	exit 77
fi

# In a sanitized build the workload links the instrumented libpmon, and
# LeakSanitizer clones a tracer task at its exit (clone, prctl, getppid,
# sigaltstack: a thread of the program, not pmon's writer): leak checking
# is off for the workload, so the lanes are the program's own threads.
run_pmon 0 trace -k sched,syscalls,faults -o "$TMP/k.trace" -- \
	env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$W" sleep 3
check "says how many kernel events" grep -Eq "^pmon trace: [1-9][0-9]* of them kernel events" "$TMP/err"
check "the kernel's side file is merged and gone" \
	sh -c "[ ! -e '$TMP/k.trace.kernel' ] && ! ls -A '$TMP' | grep -q '^\.k\.trace\.pmon-'"
check "the trace is 0600" [ "$(stat -c %a "$TMP/k.trace")" = 600 ]

run_pmon 0 trace report "$TMP/k.trace" --format json -o "$TMP/k.sum.json"
lost=$(jfield "$TMP/k.sum.json" 'd["kernel_lost"]')
# On a loaded machine the every-CPU wake-up rings may overflow before pmon
# gets a CPU: the loss is counted, and then a wake-up need not be there.
[ "$lost" = 0 ] || echo "# $lost kernel events lost (machine busy): wake-ups not required"
run_pmon 0 trace report "$TMP/k.trace" --format chrome-json -o "$TMP/k.json"
check "Chrome JSON: syscalls, switches and wake-ups inside the hooks' spans, in order" python3 - "$TMP/k.json" "$lost" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
lost = int(sys.argv[2])
K = 1000000000  # the kernel lane of thread T is T + K
main = [e for e in ev if e.get("name") == "nap"][0]["tid"]
mine = [e for e in ev if e["ph"] != "M" and e["tid"] in (main, main + K)]
def spans(name, tid):
    b = [e["ts"] for e in mine if e["name"] == name and e["tid"] == tid and e["ph"] == "B"]
    e = [e["ts"] for e in mine if e["name"] == name and e["tid"] == tid and e["ph"] == "E"]
    return b, e
def inside(name, lo, hi, ph=None):
    return [e for e in mine if e["name"] == name and e["tid"] == main + K and lo < e["ts"] < hi
            and (ph is None or e["ph"] == ph)]
nb, ne = spans("nap", main)
wb, we = spans("write", main)
assert len(nb) == len(ne) == 3 and len(wb) == len(we) == 3, (nb, ne, wb, we)
before = [e["ts"] for e in mine if e["name"] == "before"][0]
after = [e["ts"] for e in mine if e["name"] == "after"][0]
assert before < nb[0] and we[-1] < after
# Every nap has its wake-up (unless the kernel lost records, counted): the
# timer's, made on an idle CPU more often than not -- perf never saw those
# on some CPUs here, ftrace does (lib/trace/kernel.c, ftrace_open()).
naps_woken = 0
for lo, hi in zip(nb, ne):
    enter = inside("sys_clock_nanosleep", lo, hi, "B")
    leave = inside("sys_clock_nanosleep", lo, hi, "E")
    # asleep: prev_state has TASK_INTERRUPTIBLE (1)
    out = [e for e in inside("sched_switch", lo, hi) if e["args"]["value"] & 1]
    wake = inside("sched_wakeup", lo, hi)
    back = inside("off-cpu", lo, hi, "E")
    assert len(enter) == 1 and len(leave) == 1 and out and (wake or lost) and back, \
        (lo, hi, enter, leave, out, wake, back)
    naps_woken += bool(wake)
    t_out = out[0]["ts"]
    t_wake = wake[-1]["ts"] if wake else t_out
    t_back = [e["ts"] for e in back if e["ts"] >= t_wake][0]
    assert lo < enter[0]["ts"] < t_out <= t_wake <= t_back < leave[0]["ts"] < hi, \
        (lo, enter[0]["ts"], t_out, t_wake, t_back, leave[0]["ts"], hi)
    # its return value: on the instant at the end (a span's begin and end
    # carry no args, for speedscope)
    ret = inside("sys_clock_nanosleep", lo, hi, "i")
    assert len(ret) == 1 and ret[0]["ts"] == leave[0]["ts"], (ret, leave)
    assert ret[0]["args"]["value"] == 0  # clock_nanosleep returned 0
print("# naps with their wake-up recorded: %d of %d" % (naps_woken, len(nb)))
for lo, hi in zip(wb, we):
    b = inside("sys_write", lo, hi, "B")
    e = inside("sys_write", lo, hi, "E")
    assert len(b) == 1 and len(e) == 1 and lo < b[0]["ts"] < e[0]["ts"] < hi, (lo, hi, b, e)
    ret = inside("sys_write", lo, hi, "i")
    assert len(ret) == 1 and ret[0]["ts"] == e[0]["ts"], (ret, e)
    assert ret[0]["args"]["value"] == 6  # the bytes written
# and no write(2) of the main thread inside a nap
for lo, hi in zip(nb, ne):
    assert not inside("sys_write", lo, hi), (lo, hi)
kthreads = [e for e in ev if e["ph"] == "M" and e["args"]["name"] == "wl-tracehooks %d kernel" % main]
assert len(kthreads) == 1
PY

# libpmon's writer thread (it drains the rings: futex waits, a write(2) per
# chunk, its clock calibration's naps) is not the program's (issue #28.4):
# no lane of its own, and the table counts the main thread's 3 writes and 3
# naps alone (the workload is single-threaded).
check "pmon's writer thread: no lane in Chrome JSON" python3 - "$TMP/k.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
main = [e for e in ev if e.get("name") == "nap"][0]["tid"]
assert {e["tid"] for e in ev} == {main, main + 1000000000}, {e["tid"] for e in ev}
assert not [e for e in ev if e["ph"] == "M" and "pmon-writer" in e["args"]["name"]]
PY
run_pmon 0 trace report "$TMP/k.trace"
check "pmon's writer thread: not in the table" python3 - "$TMP/out" <<'PY'
import sys
rows = {l.split()[0]: l.split()[1] for l in open(sys.argv[1]) if l.startswith("  ")}
assert rows["sys_write"] == "3" and rows["sys_clock_nanosleep"] == "3", rows
PY
# Names of 19 characters and more (sys_clock_nanosleep, sys_set_tid_address)
# widen the name column: every number stays under its heading (#28.9).
check "table: the columns line up under their headings" python3 - "$TMP/out" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
head = [l for l in lines if l.startswith("# channel ")][0]
spans = head.index(" spans") + len(" spans")  # right-aligned, as the rest
rows = [l for l in lines if l.startswith("  ") and "not matched" not in l]
assert max(len(l.split()[0]) for l in rows) >= 19, rows
for l in rows:  # the count ends under "spans", the last column under "counters"
    assert re.match(r"  \S+ +\d+ ", l).end() - 1 == spans and len(l) == len(head), (head, l)
PY

run_pmon 0 trace report "$TMP/k.trace" --format json
json_has "$TMP/out" \
	'd["kernel_events"] > 0 and d["kernel_lost"] >= 0' \
	'[c for c in d["channels"] if c["channel"] == "sys_clock_nanosleep" and c["kernel"] and c["spans"] >= 3]' \
	'[c for c in d["channels"] if c["channel"] == "sys_write" and c["kernel"] and c["spans"] >= 3]' \
	'[c for c in d["channels"] if c["channel"] == "sched_switch" and c["kernel"] and c["marks"] >= 3]' \
	'[c for c in d["channels"] if c["channel"] == "off-cpu" and c["kernel"] and c["spans"] >= 3]' \
	'[c for c in d["channels"] if c["channel"] == "page_fault" and c["kernel"] and c["marks"] > 0]' \
	'[c for c in d["channels"] if c["channel"] == "nap" and not c["kernel"] and c["spans"] == 3]'

run_pmon 0 trace report "$TMP/k.trace"
check "table: the kernel's channels under their own heading, after the hooks'" python3 - "$TMP/out" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
head = [i for i, l in enumerate(lines) if l.startswith("# kernel events: ")]
nap = [i for i, l in enumerate(lines) if l.startswith("  nap ")]
sysw = [i for i, l in enumerate(lines) if l.startswith("  sys_write ")]
assert len(head) == 1 and nap and sysw and nap[0] < head[0] < sysw[0], (head, nap, sysw)
PY

run_pmon 0 trace report "$TMP/k.trace" --format ticks --width 80
check "ticks: a row for the kernel's sched_switch" grep -Eq '^sched_switch +[.|#]*\|' "$TMP/out"

# Perfetto: the kernel's events on a "kernel" track under the thread's.
run_pmon 0 trace report "$TMP/k.trace" --format perfetto -o "$TMP/k.pftrace"
if command -v protoc >/dev/null; then
	protoc --decode=perfetto.protos.Trace -I"$PMON_SRC/tests/perfetto" \
		"$PMON_SRC/tests/perfetto/trace-subset.proto" <"$TMP/k.pftrace" >"$TMP/pf.txt" 2>"$TMP/pf.err"
	check "protoc decodes the Perfetto trace" [ $? -eq 0 ]
	check "Perfetto: kernel tracks under thread tracks, with the syscall slices" python3 - "$TMP/pf.txt" <<'PY'
import re, sys
t = re.sub(r"\s+", " ", open(sys.argv[1]).read())
names = dict(re.findall(r"event_names \{ iid: (\d+) name: \"([^\"]*)\"", t))
threads = set(re.findall(r"uuid: (\d+) thread \{", t))
kernel = dict(re.findall(r"uuid: (\d+) name: \"kernel\" parent_uuid: (\d+)", t))
assert kernel and all(p in threads for p in kernel.values()), (kernel, threads)
slices = re.findall(r"type: TYPE_SLICE_BEGIN name_iid: (\d+) track_uuid: (\d+)", t)
ks = [names[i] for i, u in slices if u in kernel]
assert "sys_clock_nanosleep" in ks and "off-cpu" in ks and "nap" not in ks, ks
assert "nap" in [names[i] for i, u in slices if u in threads]
PY
	# The kernel events' arguments, as the Chrome JSON has them (on its
	# instants: a kernel instant's and each kernel span end's), are debug
	# annotations on the same events (issue #28.6).
	check "Perfetto: the kernel events' arguments as debug annotations" \
		python3 - "$TMP/pf.txt" "$TMP/k.json" <<'PY'
import collections, json, re, sys
t = re.sub(r"\s+", " ", open(sys.argv[1]).read())
ann = collections.Counter(re.findall(
    r'debug_annotations \{ int_value: (-?\d+) name: "value" \} '
    r'debug_annotations \{ int_value: (-?\d+) name: "arg" \} '
    r'debug_annotations \{ int_value: (-?\d+) name: "cpu" \}', t))
ev = json.load(open(sys.argv[2]))["traceEvents"]
chrome = collections.Counter((str(e["args"]["value"]), str(e["args"]["arg"]), str(e["args"]["cpu"]))
                             for e in ev if e["ph"] == "i" and e.get("cat") == "kernel")
assert chrome and ann == chrome, (sum(ann.values()), sum(chrome.values()), ann - chrome, chrome - ann)
assert t.count("debug_annotations {") == 3 * sum(ann.values())
PY
fi

# The timeline (cairo, PNG): zoomed to the first nap, the main thread's lane
# (the first: its exec is the trace's first event) has the nap's colour on
# its hooks' span row over the nap's time and the background before it,
# and the kernel's spans (the nanosleep) on the rows below, other colours.
python3 - "$TMP/k.json" >"$TMP/nap" <<'PY'
import json, sys
ev = sorted((e for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] != "M"),
            key=lambda e: e["ts"])
K = 1000000000
main = [e for e in ev if e.get("name") == "nap"][0]["tid"]
assert ev[0]["tid"] in (main, main + K), ev[0]
nap = [e for e in ev if e["name"] == "nap" and e["tid"] == main]
b, e = round(nap[0]["ts"] * 1000), round(nap[1]["ts"] * 1000)
sl = [x for x in ev if x["name"] == "sys_clock_nanosleep" and x["tid"] == main + K
      and b < x["ts"] * 1000 < e]
m = (round(sl[0]["ts"] * 1000) + round(sl[1]["ts"] * 1000)) // 2
# (the window starts no earlier than the trace: a fast machine begins the
# first nap 1 ms in)
frm, to = max(0, b - (e - b) // 4), e + (e - b) // 4
print("%.6f %.6f %d %d %d %d %d" % (frm / 1e6, to / 1e6, frm, to, b, e, m))
PY
read -r frm_ms to_ms frm to b e m <"$TMP/nap"
run_pmon 0 trace report "$TMP/k.trace" --from "$frm_ms" --to "$to_ms" -o "$TMP/k.png"
check "PNG: the nap on the hooks' row, the kernel's spans below it, one lane" python3 - "$(cd "$(dirname "$0")" && pwd)" "$PMON_SRC" "$TMP/k.png" "$frm" "$to" "$b" "$e" "$m" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import png
g = png.geometry(sys.argv[2])
w, h, px = png.read(sys.argv[3])
frm, to, b, e, m = map(int, sys.argv[4:9])
lane = g["TOP"]
xb, xe, xm = (png.x_at(g, t, frm, to, w) for t in (b, e, m))
y = png.bar_y(g, lane, 1)  # row 0: before/after; row 1: nap and write
nap = px[y][int(xm)]
assert not png.light(nap), nap
assert px[y][int(xb + 3)] == nap == px[y][int(xe - 3)], (px[y][int(xb + 3)], nap, px[y][int(xe - 3)])
assert png.light(px[y][int(xb - 3)])  # (the next nap follows its end at once)
# rows 3..5: the kernel's spans (row 2 is its ticks); the nanosleep is one
kern = [px[png.bar_y(g, lane, r)][int(xm)] for r in (3, 4, 5)]
assert [c for c in kern if not png.light(c) and c != nap], kern
PY
# A program without libpmon: the kernel's events alone make the trace.
run_pmon 0 trace -k syscalls -o "$TMP/true.trace" -- sh -c 'echo hi >/dev/null'
run_pmon 0 trace report "$TMP/true.trace" --format json
json_has "$TMP/out" \
	'd["kernel_events"] == d["events"] > 0' \
	'[c for c in d["channels"] if c["channel"] == "sys_execve" or c["channel"] == "sys_write"]' \
	'd["command"].startswith("sh -c")'

# Bad groups, and an unprivileged user: one line naming what was skipped.
run_pmon 2 trace -k sched,bogus -o "$TMP/x.trace" -- true
one_line_error "unknown kernel channel 'bogus'"
# An unprivileged user: t1811, in both tracefs states.
finish
