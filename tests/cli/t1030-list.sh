#!/bin/sh
# pmon list: every source listed, filters, JSON, and what cannot count here.
. "$(dirname "$0")/lib.sh"

run_pmon 0 list
for s in "Generic hardware events" "Generic cache events" "Software events"; do
	check "section '$s'" grep -q "^$s" "$TMP/out"
done
check "task-clock listed" grep -q '^  task-clock$' "$TMP/out"
check "L1-dcache-load-misses listed" grep -q '^  L1-dcache-load-misses$' "$TMP/out"
if [ ! -e /sys/bus/event_source/devices/cpu ]; then
	check "hardware marked unusable here" grep -q "^Generic hardware events  \[not usable here" "$TMP/out"
fi
# Every listed software, generic and sysfs name parses as an event.
names=$(awk '/^Software events/ {s=1; next} /^$/ {s=0} s {print $1}' "$TMP/out" | paste -sd, -)
run_pmon 0 stat -e "$names" -- true

run_pmon 0 list --json fault
check "JSON lines parse, filter applied" python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert rows and all("fault" in r["name"].lower() or "fault" in r["pmu"].lower() for r in rows)
assert {"page-faults", "minor-faults", "major-faults"} <= {r["name"] for r in rows}
assert all(r["usable"] for r in rows if r["source"] == "software")
' "$TMP/out"
run_pmon 2 list no-such-event-anywhere
one_line_error "no event matches 'no-such-event-anywhere'"
# Globs, as perf takes them (issue #29): 'pmon list sched:sched_process_*'
# names whole tracepoints that match, and 'stat -e' counts each of them.
if [ "$(id -u)" = 0 ] && grep -qw tracefs /proc/filesystems; then
	run_pmon 0 list 'sched:sched_process_*'
	grep '^  ' "$TMP/out" | sed 's/^  //' >"$TMP/glob.list"
	n=$(wc -l <"$TMP/glob.list")
	check "list glob: the fork, exec and exit tracepoints ($n names)" \
		sh -c "grep -qx sched:sched_process_fork '$TMP/glob.list' && grep -qx sched:sched_process_exec '$TMP/glob.list' && grep -qx sched:sched_process_exit '$TMP/glob.list'"
	check "list glob: nothing else" sh -c "! grep -v '^sched:sched_process_' '$TMP/glob.list'"
	run_pmon 0 stat -e 'sched:sched_process_*' -x, -o "$TMP/glob.csv" -- true
	check "stat -e glob: one row per tracepoint listed ($n)" \
		[ "$(grep -c ',sched:sched_process_' "$TMP/glob.csv")" -eq "$n" ]
	run_pmon 2 stat -e 'sched:no_such_*' -- true
	one_line_error "no tracepoint matches 'sched:no_such_*'"
	run_pmon 2 stat -e '*:*' -- true
	one_line_error "matches more than 2048 tracepoints: name fewer"
fi
finish
