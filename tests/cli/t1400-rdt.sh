#!/bin/sh
# pmon rdt against a resctrl tree laid out in a temporary directory as the
# kernel documents it; this script plays the kernel, updating the group's
# mon_data while pmon runs. No machine here has RDT.
. "$(dirname "$0")/lib.sh"
T=$TMP/resctrl
mk() { mkdir -p "$(dirname "$1")"; printf '%s\n' "$2" >"$1"; }
mk "$T/info/L3_MON/num_rmids" 8
printf 'llc_occupancy\nmbm_total_bytes\nmbm_local_bytes\n' >"$T/info/L3_MON/mon_features"
mk "$T/info/L3_MON/max_threshold_occupancy" 1048576
for f in llc_occupancy mbm_total_bytes mbm_local_bytes; do mk "$T/mon_data/mon_L3_00/$f" 0; done
mk "$T/tasks" ""
mk "$T/mon_groups/other/tasks" "4242"            # someone else's: never touched
mk "$T/mon_groups/pmon-999999999-1/tasks" ""     # a crashed pmon's: removed
mk "$T/mon_groups/pmon-1-1/tasks" ""             # its pmon (pid 1) lives: kept

wait_group() { # prints the group pmon created for PID $1
	for _ in $(seq 50); do
		g=$(ls -d "$T"/mon_groups/pmon-"$1"-* 2>/dev/null | head -1)
		[ -n "$g" ] && [ -d "$g/mon_data" ] && { echo "$g"; return 0; }
		sleep 0.05
	done
	return 1
}

"$PMON" rdt --resctrl-root "$T" -I 200 -n 6 -x, -- sleep 10 >"$TMP/out" 2>"$TMP/err" &
pid=$!
g=$(wait_group $pid)
check "a group pmon-$pid-N was created" [ -n "$g" ]
check "stale group of a dead pmon removed at start" [ ! -e "$T/mon_groups/pmon-999999999-1" ]
check "the command's pid is in the group's tasks" [ -s "$g/tasks" ]
echo 1048576 >"$g/mon_data/mon_L3_00/llc_occupancy"
echo Unavailable >"$g/mon_data/mon_L3_00/mbm_local_bytes"
sleep 0.3
echo 200000000 >"$g/mon_data/mon_L3_00/mbm_total_bytes"
mkdir -p "$g/mon_data/mon_L3_01"                 # a domain that appears mid-run
echo Error >"$g/mon_data/mon_L3_01/llc_occupancy"
echo 0 >"$g/mon_data/mon_L3_01/mbm_total_bytes"
wait $pid
rc=$?
check "-n 6 ends the run: exit 0 ($rc)" [ $rc -eq 0 ]
check "CSV header" grep -q '^time,domain,llc_occupancy_bytes,' "$TMP/out"
check "occupancy in bytes" grep -q ',mon_L3_00,1048576,' "$TMP/out"
check "Unavailable shown as such, not 0" grep -q ',mon_L3_00,[0-9]*,[0-9n/a]*,Unavailable$' "$TMP/out"
check "a bandwidth rate from cumulative bytes" \
	sh -c "awk -F, '\$2 == \"mon_L3_00\" && \$4 ~ /^[0-9]+\$/ && \$4 > 100000000 {ok=1} END {exit !ok}' '$TMP/out'"
check "the domain that appeared mid-run is read" grep -q ',mon_L3_01,Error,' "$TMP/out"
check "its group is removed at exit" [ ! -e "$g" ]
check "the foreign group is untouched" [ "$(cat "$T/mon_groups/other/tasks")" = 4242 ]
check "a live pmon's group is kept" [ -d "$T/mon_groups/pmon-1-1" ]

# -e with -x: the events' columns, as the text and JSON rows show them
# (#14.11); a name holding the separator is quoted; pmon plot reads it.
for f in llc_occupancy mbm_total_bytes mbm_local_bytes; do mk "$T/mon_data/mon_L3_01/$f" 0; done
"$PMON" rdt --resctrl-root "$T" -I 100 -n 3 -x, -e 'task-clock,software/config=2,period=1/' \
	-- sh -c 'while :; do :; done' >"$TMP/ev.csv" 2>"$TMP/err"
check "-x -e: a column per event, quoted where it holds the separator" \
	grep -q '^time,domain,llc_occupancy_bytes,mbm_total_bytes_per_s,mbm_local_bytes_per_s,task-clock msec/s,"software/config=2,period=1/ events/s"$' "$TMP/ev.csv"
check "-x -e: every row has 7 fields, the first of each interval the rates" python3 -c '
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert len(rows) >= 7, rows
first = {}
for r in rows[1:]:
    assert len(r) == 7, r
    if r[1] == "mon_L3_00":
        assert float(r[5]) > 0 and r[6] != "", r
    else:
        assert r[5] == r[6] == "", r
' "$TMP/ev.csv"
run_pmon 0 plot "$TMP/ev.csv" -o "$TMP/ev.svg"
check "pmon plot reads rdt -x -e" grep -q '<title>task-clock: ' "$TMP/ev.svg"
"$PMON" rdt --resctrl-root "$T" -I 100 -n 2 --json -e task-clock -- sh -c 'while :; do :; done' >"$TMP/ev.json" 2>/dev/null
check "--json -e: the event's rate on the first row" sh -c "head -1 '$TMP/ev.json' | grep -q '\"task-clock\": *[0-9]'"
rm -rf "$T/mon_data/mon_L3_01"

# SIGINT: the group goes, the exit status says so. Sent once the command
# is in the group: the run has begun and pmon passes signals on. Before
# that (the group made, the run not yet), a background job of sh still
# ignores SIGINT as sh set it up, and the signal was lost (exit 0 after
# the whole sleep 10, seen once under load).
"$PMON" rdt --resctrl-root "$T" -I 100 -- sleep 10 >/dev/null 2>&1 &
pid=$!
g=$(wait_group $pid)
for _ in $(seq 100); do [ -s "$g/tasks" ] && break; sleep 0.05; done
kill -INT $pid
wait $pid
rc=$?
check "SIGINT: exit 130 ($rc)" [ $rc -eq 130 ]
check "SIGINT: group removed" [ ! -e "$g" ]

# A crash (SIGKILL) leaves the group; the next --cleanup removes it.
"$PMON" rdt --resctrl-root "$T" -I 100 -- sleep 3 >/dev/null 2>&1 &
pid=$!
g=$(wait_group $pid)
kill -KILL $pid
wait $pid 2>/dev/null
check "after a crash the group remains" [ -d "$g" ]
run_pmon 0 rdt --cleanup --resctrl-root "$T"
check "--cleanup removed it" grep -q "removed 1 monitoring group" "$TMP/out"
check "--cleanup: gone" [ ! -e "$g" ]
check "--cleanup: foreign group untouched" [ -d "$T/mon_groups/other" ]

# All RMIDs in use: say which, exit 3.
echo 3 >"$T/info/L3_MON/num_rmids"
run_pmon 3 rdt --resctrl-root "$T" -- true
one_line_error "no free RMID: 3 groups hold all 3 RMIDs"
echo 8 >"$T/info/L3_MON/num_rmids"

# Bad input and this machine.
run_pmon 2 rdt --resctrl-root "$T" -p 999999999
one_line_error "process 999999999 does not exist"
run_pmon 2 rdt --resctrl-root "$T"
one_line_error "nothing to monitor"
run_pmon 3 rdt --resctrl-root "$TMP/nowhere" -- true
one_line_error "no L3 monitoring"
"$PMON" info --json >"$TMP/info.json"
if [ "$(jfield "$TMP/info.json" 'd["rdt"]["pqm"]')" = False ]; then
	run_pmon 3 rdt -- true
	one_line_error "this CPU exposes no RDT monitoring (CPUID.(07H,0):EBX[12] PQM = 0)"
fi
run_pmon 0 rdt info --cpuid-file "$PMON_CPUID_DIR/intel-xeon-8160-skylake-sp.txt"
check "rdt info decodes a Xeon dump" grep -q "upscale 98304 bytes, counter width 24" "$TMP/out"
# The 8160 dump is stepping 4: CPUID's events are shown, and why Linux (and
# pmon) do not use them -- as 'pmon info' says (resctrl __check_quirks_intel).
check "rdt info: SKX stepping 4 lists CPUID's events" \
	grep -q "events: llc_occupancy mbm_total_bytes mbm_local_bytes$" "$TMP/out"
check "rdt info: SKX stepping 4 names the erratum" \
	grep -q "erratum: Skylake-SP stepping 4 <= 4: Linux disables CMT and MBM" "$TMP/out"
check "rdt info: SKX's MBM correction factor" \
	grep -q "erratum: MBM counts of RMIDs above 127 are multiplied by 0.969744" "$TMP/out"
run_pmon 0 rdt info --cpuid-file "$PMON_CPUID_DIR/intel-core-i7-6700k-skylake.txt"
check "rdt info on a client part: PQM 0" grep -q "PQM 0" "$TMP/out"

# Several -p targets: a group each, rows labelled with the target.
sleep 3 &
p1=$!
sleep 3 &
p2=$!
"$PMON" rdt --resctrl-root "$T" -I 100 -n 5 -x, -p $p1,$p2 >"$TMP/multi" 2>"$TMP/err" &
pid=$!
# Poll: a loaded machine (CI runs the ASan build beside other tests) may
# take longer than a fixed sleep to start pmon; the groups live 0.5 s.
groups=0
for i in $(seq 100); do
	groups=$(ls -d "$T"/mon_groups/pmon-$pid-* 2>/dev/null | wc -l)
	[ "$groups" -eq 2 ] && break
	sleep 0.02
done
check "a group per -p target" [ "$groups" -eq 2 ]
wait $pid
check "rows of pid $p1" grep -q ",pid $p1:mon_L3_00," "$TMP/multi"
check "rows of pid $p2" grep -q ",pid $p2:mon_L3_00," "$TMP/multi"
check "both groups removed" [ -z "$(ls -d "$T"/mon_groups/pmon-$pid-* 2>/dev/null)" ]
kill $p1 $p2 2>/dev/null

# -C: a group monitoring CPUs; -a: the root group, nothing created.
"$PMON" rdt --resctrl-root "$T" -I 100 -n 5 -C 1 -x, >"$TMP/cpus" 2>&1 &
pid=$!
g=
for i in $(seq 100); do
	g=$(ls -d "$T"/mon_groups/pmon-$pid-* 2>/dev/null | head -1)
	[ -n "$g" ] && [ -s "$g/cpus_list" ] && break
	sleep 0.02
done
check "-C wrote the group's cpus_list" [ "$(cat "$g/cpus_list" 2>/dev/null)" = 1 ]
wait $pid
check "-C: rows" grep -q ",mon_L3_00," "$TMP/cpus"
echo 4096 >"$T/mon_data/mon_L3_00/llc_occupancy"
before=$(ls "$T/mon_groups" | wc -l)
run_pmon 0 rdt --resctrl-root "$T" -a -I 50 -n 2 -x,
check "-a reads the root group" grep -q ",mon_L3_00,4096," "$TMP/out"
check "-a creates no group" [ "$(ls "$T/mon_groups" | wc -l)" -eq "$before" ]
if [ "$(id -u)" = 0 ]; then
	# cpu-clock of every CPU: about 1000 msec/s each.
	run_pmon 0 rdt --resctrl-root "$T" -a -e cpu-clock -I 200 -n 2
	rate=$(awk '/cpu-clock/ {print $(NF-1); exit}' "$TMP/out")
	check "-a -e cpu-clock counts every CPU ($rate msec/s)" [ "${rate:-0}" -ge $((900 * $(nproc))) ]
fi

# The MSR interface against a file laid out like /dev/cpu/N/msr.
XEON=$PMON_CPUID_DIR/intel-xeon-4214-cascadelake-sp.txt
SKX4=$PMON_CPUID_DIR/intel-xeon-8160-skylake-sp.txt
truncate -s 65536 "$TMP/msr.bin"
cp "$TMP/msr.bin" "$TMP/msr0.bin"
run_pmon 0 rdt --msr --msr-device "$TMP/msr.bin" --cpuid-file "$XEON" --cpu 0 --rmid 3 -I 50 -n 2 -x, -- sleep 5
# The domain is CPU 0's L3 as sysfs names it (mon_L3_NN), or rmid3@cpu0
# where this machine's sysfs gives the L3 no id (docs/rdt.md).
check "--msr: two interval rows" [ "$(grep -Ec ',(mon_L3_[0-9]+|rmid3@cpu0),' "$TMP/out")" -eq 2 ]
check "--msr: RMID written to IA32_PQR_ASSOC" grep -q "CPU0 IA32_PQR_ASSOC   <- 0x3$" "$TMP/err"
check "--msr: event and RMID selected" grep -q "IA32_QM_EVTSEL   <- 0x300000002" "$TMP/err"
check "--msr: restored" grep -q "IA32_PQR_ASSOC   <- 0  (restore)" "$TMP/err"
check "--msr: the device file is as before" cmp "$TMP/msr.bin" "$TMP/msr0.bin"
# -I longer than a second: the MBM counters are still read every <= 1 s
# (Linux's MBM_OVERFLOW_INTERVAL; a 24-bit counter wraps in 11 s at 50
# GB/s): 1100 ms is two 550-ms steps, so mbm_total (event 2) is selected at
# the start, once between the prints and at the print -- not twice.
run_pmon 0 rdt --msr --msr-device "$TMP/msr.bin" --cpuid-file "$XEON" --cpu 0 --rmid 3 -I 1100 -n 1 -x, -- sleep 5
check "--msr -I 1100: one interval row" [ "$(grep -Ec ',(mon_L3_[0-9]+|rmid3@cpu0),' "$TMP/out")" -eq 1 ]
check "--msr -I 1100: mbm_total read every <= 1 s" [ "$(grep -c 'IA32_QM_EVTSEL   <- 0x300000002$' "$TMP/err")" -eq 3 ]
# Without --cpu: the CPUs the kernel lists online, each once (an offline
# CPU is a hole in the list, not the end of 0..count-1).
run_pmon 0 rdt --msr --msr-device "$TMP/msr.bin" --cpuid-file "$XEON" --rmid 3 -I 50 -n 1 -x, -- true
check "--msr without --cpu: the online CPUs' IA32_PQR_ASSOC, each once" python3 -c '
import re, sys
online = set()
for part in open("/sys/devices/system/cpu/online").read().strip().split(","):
    lo, _, hi = part.partition("-")
    online.update(range(int(lo), int(hi or lo) + 1))
m = re.search(r"MSR writes \(the last (\d+) of (\d+)\)", open(sys.argv[1]).read())
cpus = [int(c) for c in re.findall(r"CPU(\d+) IA32_PQR_ASSOC   <- 0x3$", open(sys.argv[1]).read(), re.M)]
if m and m.group(1) != m.group(2):
    sys.exit(0)  # too many CPUs for the 12 writes shown: checked elsewhere
assert sorted(cpus) == sorted(online), (cpus, online)
' "$TMP/err"
if [ "$(jfield "$TMP/info.json" 'd["rdt"]["pqm"]')" = False ]; then
	run_pmon 3 rdt --msr -- true
	one_line_error "--msr: this CPU exposes no L3 monitoring"
fi
run_pmon 2 rdt --msr --msr-device "$TMP/msr.bin" --cpuid-file "$XEON" --rmid 999 -- true
one_line_error "RMID 999: choose 1..95"
# Skylake-SP stepping 4: Linux disables CMT/MBM for errata; so does --msr.
run_pmon 3 rdt --msr --msr-device "$TMP/msr.bin" --cpuid-file "$SKX4" --rmid 3 -- true
one_line_error "Skylake-SP stepping 4: CMT and MBM have errata"
run_pmon 2 rdt --msr-device "$TMP/msr.bin" -- true
one_line_error "go with --msr"
# This machine's rdt info advises mounting resctrl only where the CPU has
# something to monitor (issue #29).
if ! grep -q ' resctrl ' /proc/mounts; then
	run_pmon 0 rdt info
	if grep -q 'PQM 0$' "$TMP/out"; then
		check "rdt info, PQM = 0: no advice to mount resctrl" sh -c "! grep -q 'mount -t resctrl' '$TMP/out'"
		check "rdt info, PQM = 0: says why it is not worth mounting" \
			grep -q "^resctrl: not mounted, and this CPU has no resource monitoring to mount it for" "$TMP/out"
	else
		check "rdt info, PQM = 1: how to mount resctrl" grep -q 'mount -t resctrl' "$TMP/out"
	fi
fi
finish
