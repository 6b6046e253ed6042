#!/bin/sh
# pmon trace's command line (issue #18): -e CHANNELS records those kernel
# channels and no others; --hooks/--no-hooks; -p PID traces a running
# process and all its threads until --duration (or a signal) and leaves it
# running; -a traces every task on every CPU; --duration ends a long
# command and leaves a readable file; a signal to pmon leaves a whole file.
# Everything is asserted on the trace's contents and exit statuses, never on
# how long anything took.
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"
W=$PMON_WORKLOADS/wl-tracehooks
WL=$PMON_WORKLOADS/wl-workers

run_pmon 0 trace -e help
check "-e help lists every channel group" sh -c "for g in sched syscalls faults irq softirq block kvm; do grep -Eq \"^  \$g +\" '$TMP/out' || exit 1; done"
run_pmon 2 trace -e sched,nosuch -- true
one_line_error "unknown kernel channel 'nosuch'"
run_pmon 2 trace --hooks -p 1
one_line_error "--hooks needs a COMMAND"
run_pmon 2 trace --no-hooks -- true
one_line_error "--no-hooks records nothing without -e"
run_pmon 2 trace -p 1 -a
one_line_error "-p and -a exclude each other"
run_pmon 2 trace --duration 0 -- true
one_line_error "--duration '0' is not a number of seconds"

if [ "$(id -u)" != 0 ] || ! grep -qw tracefs /proc/filesystems; then
	echo "skip: kernel tracepoints need root and tracefs"
	finish
	exit $?
fi

# wait_threads PID N: poll until the process has N threads.
wait_threads() {
	i=0
	while [ "$(ls "/proc/$1/task" 2>/dev/null | wc -l)" -lt "$2" ] && [ $i -lt 500 ]; do
		sleep 0.01
		i=$((i + 1))
	done
}

# kernel_channels FILE: the kernel channels of a trace, one a line.
kernel_channels() {
	"$PMON" trace report "$1" --format json | python3 -c '
import json, sys
for c in json.load(sys.stdin)["channels"]:
    if c["kernel"]:
        print(c["channel"])'
}

# -e with one channel: that channel's events, and no other channel's.
run_pmon 0 trace -e syscalls -o "$TMP/s.trace" -- "$W" sleep 2
kernel_channels "$TMP/s.trace" >"$TMP/s.ch"
check "-e syscalls: system calls recorded" grep -qx sys_clock_nanosleep "$TMP/s.ch"
check "-e syscalls: nothing but sys_* channels" sh -c "! grep -v '^sys_' '$TMP/s.ch'"
run_pmon 0 trace report "$TMP/s.trace" --format json
json_has "$TMP/out" '[c for c in d["channels"] if c["channel"] == "nap" and c["spans"] == 2]'
run_pmon 0 trace -e sched -o "$TMP/w.trace" -- "$W" sleep 2
kernel_channels "$TMP/w.trace" >"$TMP/w.ch"
check "-e sched: switches and off-CPU spans recorded" sh -c "grep -qx sched_switch '$TMP/w.ch' && grep -qx off-cpu '$TMP/w.ch'"
check "-e sched: no system call, fault or interrupt channel" sh -c "! grep -Ev '^(sched_switch|sched_wakeup|off-cpu)\$' '$TMP/w.ch'"
# --no-hooks: the command's hooks are not recorded, its kernel events are.
run_pmon 0 trace --no-hooks -e syscalls -o "$TMP/n.trace" -- "$W" sleep 1
run_pmon 0 trace report "$TMP/n.trace" --format json
json_has "$TMP/out" 'd["events"] == d["kernel_events"] > 0' \
	'not [c for c in d["channels"] if not c["kernel"]]'

# -p: a running process with two busy threads, traced until --duration; it
# keeps running. Its threads' events are there, and no other process's.
"$WL" 2 &
wpid=$!
wait_threads "$wpid" 3
run_pmon 0 trace -p "$wpid" -e sched,syscalls --duration 1 -o "$TMP/p.trace"
check "-p: says it stopped at --duration" grep -q "^pmon trace: stopped after --duration 1 s$" "$TMP/err"
check "-p: the process still runs" kill -0 "$wpid"
tids=$(ls "/proc/$wpid/task" | tr '\n' ' ')
run_pmon 0 trace report "$TMP/p.trace" --format chrome-json -o "$TMP/p.json"
check "-p: both workers' system calls and switches, only the process's threads" python3 - "$TMP/p.json" "$wpid" $tids <<'PY'
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] != "M"]
pid, tids = int(sys.argv[2]), {int(t) for t in sys.argv[3:]}
K = 1000000000
lanes = {e["tid"] - K for e in ev}
assert lanes <= tids, (lanes, tids)
workers = tids - {pid}
assert len(workers) == 2, tids
for t in workers:
    names = {e["name"] for e in ev if e["tid"] == t + K}
    assert {"sys_clock_nanosleep", "sched_switch", "off-cpu"} <= names, (t, names)
PY
run_pmon 0 trace report "$TMP/p.trace" --format json
json_has "$TMP/out" 'd["complete"] and d["events"] == d["kernel_events"] > 0' \
	'd["command"].startswith("-p %d" % '"$wpid"')'

# -p of a process that does nothing in the window: an empty trace is an
# answer, not an error -- exit 0, a whole file -- and --help says so (it
# promised exit 1 "when nothing was written").
sleep 1000 &
spid=$!
run_pmon 0 trace -p "$spid" --duration 1 -o "$TMP/idle.trace"
check "-p of an idle process: 0 events written" grep -q "^pmon trace: 0 events on 0 channels written to " "$TMP/err"
run_pmon 0 trace report "$TMP/idle.trace" --format json
json_has "$TMP/out" 'd["complete"] and d["events"] == 0'
kill "$spid"
"$PMON" trace --help >"$TMP/help" 2>&1
check "--help: exit 0 for a trace with no events, 1 only when no file came out" sh -c "
	tr '\n' ' ' <'$TMP/help' | grep -q 'with -p or -a, 0 -- also for a trace with no events' &&
	! grep -q 'nothing was written' '$TMP/help'"

# A process that writes its own hooks (started with PMON_TRACE): said, and
# its kernel events traced.
PMON_TRACE="$TMP/own.trace" "$W" sleep 1000 &
opid=$!
i=0
while [ ! -s "$TMP/own.trace" ] && [ $i -lt 500 ]; do
	sleep 0.01
	i=$((i + 1))
done
run_pmon 0 trace -p "$opid" -e syscalls --duration 0.5 -o "$TMP/o.trace"
check "-p of a process tracing itself: one warning naming its file" \
	grep -q "^pmon: warning: process $opid writes its own hooks to '$TMP/own.trace'" "$TMP/err"
kill "$opid"
wait "$opid" 2>/dev/null

# SIGTERM to pmon trace -p: the trace ends, whole; the process runs on.
"$PMON" trace -p "$wpid" -e sched -o "$TMP/t.trace" >/dev/null 2>"$TMP/t.err" &
ppid=$!
# Until the kernel's events are being written: their temporary beside the
# trace (.t.trace.pmon-XXXXXX, docs/exit-codes.md "Outputs") has its header.
i=0
until find "$TMP" -maxdepth 1 -name '.t.trace.pmon-*' -size +0 | grep -q . || [ $i -ge 1000 ]; do
	sleep 0.01
	i=$((i + 1))
done
check "pmon trace -p writes the kernel's events beside the trace" [ $i -lt 1000 ]
kill -TERM "$ppid"
wait "$ppid"
check "SIGTERM: pmon trace -p exits 128+15" [ $? -eq 143 ]
check "SIGTERM: the process still runs" kill -0 "$wpid"
run_pmon 0 trace report "$TMP/t.trace" --format json
json_has "$TMP/out" 'd["complete"] and d["damaged_chunks"] == 0 and d["kernel_events"] > 0'

# -a: every task on every CPU, so the workers too, though pmon was not told
# of them; skipped, saying why, where this user may not.
"$PMON" trace -a -e sched --duration 1 -o "$TMP/a.trace" >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ $rc -eq 3 ] && grep -q "^pmon: cannot trace all CPUs" "$TMP/err"; then
	echo "skip: -a not permitted here: $(cat "$TMP/err")"
else
	check "-a exits 0" [ $rc -eq 0 ]
	run_pmon 0 trace report "$TMP/a.trace" --format chrome-json -o "$TMP/a.json"
	check "-a: another process's threads are in the trace" python3 - "$TMP/a.json" $tids <<'PY'
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] != "M"]
tids = {int(t) for t in sys.argv[2:]}
K = 1000000000
seen = {e["tid"] - K for e in ev if e["name"] in ("sched_switch", "off-cpu")}
assert len(seen & tids) >= 2, (seen & tids, tids)
assert len(seen - tids) > 0  # and tasks of other processes
PY
fi
if command -v setpriv >/dev/null && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 0 ]; then
	mkdir "$TMP/nobody" && chmod 711 "$TMP" && chmod 777 "$TMP/nobody"
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$PMON" trace -a -e sched --duration 1 -o "$TMP/nobody/a.trace" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	check "-a unprivileged: exits 3" [ $rc -eq 3 ]
	one_line_error "cannot trace all CPUs"
fi
kill "$wpid"
wait "$wpid" 2>/dev/null

# --duration with a long command (1000 naps of 20 ms): pmon ends it and
# leaves a readable file with the hooks written so far and its kernel events.
run_pmon 0 trace --duration 1 -e sched -o "$TMP/d.trace" -- "$W" sleep 1000
check "--duration: says it ended the command" grep -q "stopped after --duration 1 s; the command was ended" "$TMP/err"
run_pmon 0 trace report "$TMP/d.trace" --format json
json_has "$TMP/out" 'd["kernel_events"] > 0 and d["damaged_chunks"] == 0' \
	'[c for c in d["channels"] if c["channel"] == "nap" and not c["kernel"] and 0 < c["spans"] < 1000]' \
	'[c for c in d["channels"] if c["channel"] == "off-cpu" and c["kernel"] and c["spans"] > 0]'
check "--duration: the command is not running" sh -c "! pgrep -f 'wl-tracehook[s] sleep 1000' >/dev/null"
finish
