#!/bin/sh
# A process is all its threads for record and top too (issue 12, item 1):
# a process whose main thread sits in pause() while two workers burn CPU
# gets samples and a rate, not 0. Counts and states only.
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"

"$PMON_WORKLOADS/wl-workers" 2 &
wl=$!
i=0
while [ "$(ls /proc/$wl/task 2>/dev/null | wc -l)" -lt 3 ] && [ $i -lt 500 ]; do
	sleep 0.01
	i=$((i + 1))
done

# record -p PID -- sleep: the command only sets how long (perf's form).
run_pmon 0 record -p $wl -e cpu-clock -o "$TMP/w.data" -- sleep 0.5
n=$(sed -n 's/^pmon record: \([0-9]*\) records written.*/\1/p' "$TMP/err")
check "record -p: records written ($n)" [ "${n:-0}" -gt 0 ]
run_pmon 0 report -i "$TMP/w.data"
check "record -p: the workers' samples are in the report" grep -q "burn .*wl-workers" "$TMP/out"

# top -p: the process's rate is the workers' (the main thread alone: 0.00).
run_pmon 0 top -p $wl --batch -I 200 -n 2 -e task-clock
check "top -p: a non-zero task-clock rate" \
	awk '$2 == "task-clock" && $3 > 0 { ok = 1 } END { exit !ok }' "$TMP/out"
# top -P of the same process: the sampler follows the threads too.
run_pmon 0 top -p $wl --batch -I 200 -n 2 -P -e task-clock
check "top -p -P: the process is listed with its pid" grep -q "pid $wl " "$TMP/out"
kill $wl
wait $wl 2>/dev/null

# One list parser: top and record refuse what stat refuses.
run_pmon 2 top -p 1,,2 --batch -n 1
one_line_error "'1,,2' is not a valid list (e.g. 1,3-5): an empty item"
run_pmon 2 record -p 1,,2 -o "$TMP/x.data"
one_line_error "'1,,2' is not a valid list (e.g. 1,3-5): an empty item"
last=$(tr ',' '\n' </sys/devices/system/cpu/online | tail -1 | sed 's/.*-//')
run_pmon 2 top -C $((last + 1)) --batch -n 1
one_line_error "CPU $((last + 1)) does not exist (online: $(cat /sys/devices/system/cpu/online))"
# No silent cap at 64 processes (top dropped the rest): 64 times this
# shell, then one that does not exist, which must be named.
list=$(for i in $(seq 64); do printf '%s,' $$; done)1073741823
run_pmon 2 top -p "$list" --batch -n 1
one_line_error "process 1073741823 does not exist"
finish
