#!/bin/sh
# pmon stat's options: exit statuses, signals, intervals, repeats, CSV and
# JSON, output files, targets other than a command.
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"

# The child's exit status passes through; a signal death is 128+N.
"$PMON" stat -e task-clock -- sh -c 'exit 7' 2>/dev/null
check "exit status 7 passes through" [ $? -eq 7 ]
"$PMON" stat -e task-clock -- sh -c 'kill -TERM $$' 2>/dev/null
check "killed by SIGTERM: 143" [ $? -eq 143 ]
"$PMON" stat -e task-clock -- /nonexistent/cmd 2>"$TMP/err"
check "missing command: 127" [ $? -eq 127 ]
one_line_error "cannot run '/nonexistent/cmd': No such file or directory"

# SIGINT to pmon is forwarded; the counts so far are still printed.
"$PMON" stat -e task-clock,cs -o "$TMP/int.txt" -- sleep 5 &
pid=$!
# Poll for the state (the command running under pmon), not for a time.
i=0
while ! pgrep -P $pid sleep >/dev/null 2>&1 && [ $i -lt 500 ]; do
	sleep 0.01
	i=$((i + 1))
done
kill -INT $pid
wait $pid
rc=$?
check "SIGINT: exit 130 ($rc)" [ $rc -eq 130 ]
check "SIGINT: counts printed" grep -q "task-clock" "$TMP/int.txt"
check "SIGINT: says interrupted" grep -q "Interrupted" "$TMP/int.txt"

# Default events say which set they are.
run_pmon 0 stat -- true
check "default set announced" grep -q "default events" "$TMP/err"
check "default set has task-clock" grep -q "task-clock" "$TMP/err"

# -o writes the counts to a file; the command's stdout is untouched.
"$PMON" stat -e task-clock -o "$TMP/o.txt" -- echo hello >"$TMP/stdout" 2>"$TMP/stderr"
check "-o: command stdout untouched" [ "$(cat "$TMP/stdout")" = hello ]
check "-o: counts in the file" grep -q "task-clock" "$TMP/o.txt"
check "-o: nothing on stderr" [ ! -s "$TMP/stderr" ]

# CSV in perf's field order: value,unit,event,runtime,pct,metric,metric unit
run_pmon 0 stat -x, -e task-clock,page-faults,cycles -- true
check "CSV: 7 fields per row" sh -c "awk -F, 'NF != 7 { bad=1 } END { exit bad }' '$TMP/err'"
check "CSV: task-clock row" grep -Eq '^[0-9.]+,msec,task-clock,[0-9]+,[0-9.]+,' "$TMP/err"
check "CSV: not supported row like perf's" sh -c "grep -q '^<not supported>,,cycles,0,100.00,,\$' '$TMP/err' || grep -Eq '^[0-9]+,,cycles,' '$TMP/err'"

# JSON lines parse, with perf's keys and pmon's status.
run_pmon 0 stat --json -e task-clock,page-faults -- true
check "JSON lines parse" python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ev = [r for r in rows if "event" in r]
assert [r["event"] for r in ev] == ["task-clock", "page-faults"], ev
for r in ev:
    assert r["status"] == "counted" and r["value"] > 0 and "counter-value" in r and "pcnt-running" in r
assert rows[-1]["type"] == "summary" and rows[-1]["exit-status"] == 0
' "$TMP/err"

# -I: one record per interval per event; --interval-count stops exactly.
run_pmon 0 stat -I 100 --interval-count 4 -x, -e task-clock,cs -- sleep 10
check "-I 100 --interval-count 4: 4 intervals" [ "$(grep -c ',task-clock,' "$TMP/err")" -eq 4 ]
check "-I rows start with the time" grep -Eq '^0\.[0-9]+,' "$TMP/err"
# (No count of records per span of time: these machines are noisy. A
# sleeping command's intervals read <not counted>, as perf's do.)
run_pmon 0 stat -I 100 -x, -e task-clock -- sleep 0.25
n=$(grep -c ',task-clock,' "$TMP/err")
check "-I 100 -- sleep 0.25: records printed ($n)" [ "$n" -ge 1 ]
check "-I: the first record counts the command's start" grep -Eq '^[0-9.]+,[0-9.]*[1-9][0-9.]*,msec,task-clock,' "$TMP/err"

# -r N: mean, stddev and CV.
run_pmon 0 stat -r 5 -e task-clock,page-faults -- true
check "-r 5: header says 5 runs" grep -q "(5 runs)" "$TMP/err"
check "-r 5: perf's +- shown" grep -q "( +- *[0-9.]*% )" "$TMP/err"
run_pmon 0 stat -r 3 --json -e page-faults -- true
check "-r 3 JSON has stddev and runs" python3 -c '
import json, sys
r = [json.loads(l) for l in open(sys.argv[1]) if "event" in l][0]
assert r["runs"] == 3 and "stddev" in r and "cv-percent" in r
' "$TMP/err"

# -p: an existing process, until it exits.
sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done' &
busy=$!
run_pmon 0 stat -p $busy -x, -e task-clock
check "-p counts a running process" sh -c "awk -F, '\$3==\"task-clock\" && \$1 > 10 {ok=1} END {exit !ok}' '$TMP/err'"
wait $busy 2>/dev/null

# -t and --per-thread on a two-thread process.
"$PMON_WORKLOADS/wl-touch" 0 >/dev/null
sh -c 'sleep 1' &
sl=$!
run_pmon 0 stat -t $sl --per-thread -x, -e task-clock
check "--per-thread: a row labelled with the thread id" grep -q "^$sl," "$TMP/err"
wait $sl

# -a / -C / --per-cpu: system-wide needs root or perf_event_paranoid <= 0.
if [ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 0 ]; then
	run_pmon 0 stat -a --per-cpu -x, -e cpu-clock -- sleep 0.2
	ncpu=$(grep -c ',cpu-clock,' "$TMP/err")
	check "-a --per-cpu: one row per online CPU ($ncpu)" [ "$ncpu" -eq "$(nproc)" ]
	run_pmon 0 stat -C 0 --per-cpu -x, -e cpu-clock -- sleep 0.1
	check "-C 0: CPU0 only" [ "$(grep -c '^CPU0,' "$TMP/err")" -eq 1 ]
else
	echo "# not root and paranoid > 0: system-wide tests skipped"
fi
finish
