#!/bin/sh
# pmon trace's processes and names (issue #28): a fork + exec + exit
# workload traced with -k sched,syscalls is two processes with their
# names, in Chrome JSON (pid per event, process_name/thread_name
# metadata) and in Perfetto (decoded with protoc against the kept schema);
# system calls that never return are no endless spans; -a draws no lane
# for the idle task nor tid -1, and names each; a program without hooks
# and no -e records sched,syscalls by default and says so.
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"
W=$PMON_WORKLOADS/wl-forkexec

if [ "$(id -u)" != 0 ] || ! grep -qw tracefs /proc/filesystems; then
	echo "skip: kernel tracepoints need root and tracefs"
	exit 77
fi

run_pmon 0 trace -k sched,syscalls -o "$TMP/fe.trace" -- "$W"
run_pmon 0 trace report "$TMP/fe.trace" --format chrome-json -o "$TMP/fe.json"
check "Chrome JSON: parent and child are two processes with their names and threads" \
	python3 - "$TMP/fe.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
K = 1000000000
meta = [e for e in ev if e["ph"] == "M"]
procs = {e["pid"]: e["args"]["name"] for e in meta if e["name"] == "process_name"}
threads = {e["tid"]: (e["pid"], e["args"]["name"]) for e in meta if e["name"] == "thread_name"}
byname = {v: k for k, v in procs.items()}
assert "wl-forkexec" in byname and "fe-child" in byname, procs
parent, child = byname["wl-forkexec"], byname["fe-child"]
assert parent != child
# every event's lane is named, under the process that named it
for e in ev:
    if e["ph"] != "M":
        assert e["tid"] in threads and threads[e["tid"]][0] == e["pid"], e
assert threads[child + K] == (child, "fe-child %d kernel" % child), threads
assert threads[parent + K] == (parent, "wl-forkexec %d kernel" % parent), threads
worker = [t for t, (p, n) in threads.items() if n.startswith("fe-worker ")]
assert len(worker) == 1 and threads[worker[0]][0] == parent, threads
# the child's own events carry its pid: its exec's return and its write
assert [e for e in ev if e["pid"] == child and e["name"] == "sys_write" and e["ph"] == "B"]
assert not [e for e in ev if e["pid"] == parent and e["name"] == "sys_write"]
# spans pair up on each lane, with the same args on begin and end
for tid in set(e["tid"] for e in ev if e["ph"] in "BE"):
    stack = []
    for e in sorted((e for e in ev if e["tid"] == tid and e["ph"] in "BE"), key=lambda e: e["ts"]):
        if e["ph"] == "B":
            stack.append(e)
        else:
            assert stack and stack[-1]["name"] == e["name"], (tid, e)
            assert stack[-1].get("args") == e.get("args"), (stack[-1], e)
            stack.pop()
    assert not stack, (tid, stack)
# exit_group never returns: closed at each process's exit
ends = [e for e in ev if e["name"] == "sys_exit_group" and e["ph"] == "E"]
assert sorted(e["pid"] for e in ends) == sorted([parent, child]), ends
PY
check "the child's execve ends at its exec: the old image's call, then the new image's return" \
	python3 - "$TMP/fe.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
procs = {e["args"]["name"]: e["pid"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
child = procs["fe-child"]
x = [e for e in ev if e["pid"] == child and e["name"] == "sys_execve"]
b = [e for e in x if e["ph"] == "B"]
end = [e for e in x if e["ph"] == "E"]
ret = [e for e in x if e["ph"] == "i" and e["args"]["value"] == 0]
write = [e for e in ev if e["pid"] == child and e["name"] == "sys_write" and e["ph"] == "B"]
assert len(b) == 1 and len(end) == 1 and len(ret) == 1 and write, x
# the span ends at the exec (the COMM the kernel flags as an exec's),
# before the new image's execve returns 0: not at that return, not at
# the window's end, not as an instant
assert b[0]["ts"] < end[0]["ts"] < ret[0]["ts"] < write[0]["ts"], (b, end, ret, write)
PY
run_pmon 0 trace report "$TMP/fe.trace" --format json -o "$TMP/fe.sum.json"
json_has "$TMP/fe.sum.json" \
	'not [c for c in d["channels"] if c["kernel"] and c["unmatched"]]' \
	'[c for c in d["channels"] if c["channel"] == "sys_exit_group" and c["spans"] == 2]'

run_pmon 0 trace report "$TMP/fe.trace" --format perfetto -o "$TMP/fe.pftrace"
if command -v protoc >/dev/null; then
	protoc --proto_path="$PMON_SRC/tests/perfetto" --decode=perfetto.protos.Trace \
		trace-subset.proto <"$TMP/fe.pftrace" >"$TMP/fe.txt" 2>"$TMP/protoc.err"
	check "Perfetto: protoc decodes it" [ -s "$TMP/fe.txt" ]
	check "Perfetto: two processes with their names, each thread under its own" \
		python3 - "$TMP/fe.txt" <<'PY'
import re, sys
txt = open(sys.argv[1]).read()
procs = dict((int(p), n) for p, n in re.findall(r'process \{\s*pid: (\d+)\s*process_name: "([^"]*)"', txt))
threads = [(int(p), int(t), n) for p, t, n in
           re.findall(r'thread \{\s*pid: (\d+)\s*tid: (\d+)\s*thread_name: "([^"]*)"', txt)]
names = sorted(procs.values())
assert "wl-forkexec" in names and "fe-child" in names, procs
child = [p for p, n in procs.items() if n == "fe-child"][0]
parent = [p for p, n in procs.items() if n == "wl-forkexec"][0]
assert (child, child, "fe-child") in threads, threads
assert (parent, parent, "wl-forkexec") in threads, threads
assert [t for t in threads if t[0] == parent and t[2] == "fe-worker"], threads
# each thread track's parent is its own process's track
for uuid, pid in re.findall(r'uuid: (\d+)\s*thread \{\s*pid: (\d+)', txt):
    pass
assert len(re.findall(r'thread \{', txt)) == len(threads)
PY
else
	echo "ok - # SKIP Perfetto decode: no protoc"
fi

# -a: no lane for the idle task, none for tid -1, every lane named.
run_pmon 0 trace -a -e sched --duration 0.3 -o "$TMP/a.trace"
run_pmon 0 trace report "$TMP/a.trace" --format chrome-json -o "$TMP/a.json"
check "-a: no idle-task or tid -1 lane, and each lane has its thread_name" python3 - "$TMP/a.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
K = 1000000000
named = {e["tid"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
lanes = {e["tid"] for e in ev if e["ph"] != "M"}
assert lanes, "no events"
assert not [t for t in lanes if t % K == 0 or t == K - 1 or t < K], sorted(lanes)[:5]
assert lanes <= named, sorted(lanes - named)[:5]
PY

# A program without hooks, no -e: its sched and syscalls, said in one line.
run_pmon 0 trace -o "$TMP/ls.trace" -- ls /
check "says the default channels once" \
	sh -c "[ \$(grep -c \"^pmon trace: 'ls' has no hooks (not linked with libpmon): recorded its kernel events, -e sched,syscalls\" '$TMP/err') -eq 1 ]"
run_pmon 0 trace report "$TMP/ls.trace" --format json -o "$TMP/ls.json"
json_has "$TMP/ls.json" \
	'[c for c in d["channels"] if c["channel"] == "sys_exit_group" and c["kernel"]]' \
	'd["kernel_events"] == d["events"] > 0'
# Unprivileged (paranoid above -1): nothing can be recorded, exit 3.
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
if command -v setpriv >/dev/null && [ "$paranoid" -gt -1 ]; then
	mkdir "$TMP/nobody" && chmod 711 "$TMP" && chmod 777 "$TMP/nobody"
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$PMON" trace -o "$TMP/nobody/n.trace" -- true >"$TMP/out" 2>"$TMP/err"
	check "unprivileged, no hooks, no -e: exit 3 ($?)" [ $? -eq 3 ]
	one_line_error "'true' wrote no trace: it has no hooks (not linked with libpmon) and its kernel events (-e sched,syscalls) cannot be recorded here: "
fi
finish
