#!/bin/sh
# One signal policy for every command that runs something (issue #14.1-2):
# SIGINT, SIGTERM, SIGHUP stop it, what was measured is written, resources
# are given back (resctrl groups, MSRs, the terminal), the command is
# stopped even when it ignores the signal, and pmon exits 128+N.
. "$(dirname "$0")/lib.sh"

# start_pmon ARGS...: pmon in the background running a workload that writes
# its pid to $TMP/pid (or that ignores INT/TERM/HUP with IGNORE=1); waits
# until the workload runs and pmon has started counting.
start_pmon() {
	rm -f "$TMP/pid"
	if [ "${IGNORE:-0}" = 1 ]; then
		w="trap '' INT TERM HUP; echo \$\$ >$TMP/pid; while :; do sleep 1; done"
	else
		w="echo \$\$ >$TMP/pid; exec sleep 60"
	fi
	"$PMON" "$@" -- sh -c "$w" >"$TMP/out" 2>"$TMP/err" &
	pm=$!
	i=0
	while [ ! -s "$TMP/pid" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	sleep 0.3 # an interval or two
}
# stop_pmon SIG N DESC: send SIG, expect exit 128+N, the workload gone.
stop_pmon() {
	kill -"$1" $pm
	wait $pm
	rc=$?
	check "$3: SIG$1 exits $((128 + $2)) ($rc)" [ $rc -eq $((128 + $2)) ]
	w=$(cat "$TMP/pid")
	# The workload is reaped before pmon exits: gone at once, no polling.
	check "$3: SIG$1: the command was stopped" sh -c "! kill -0 $w 2>/dev/null"
	[ "${IGNORE:-0}" = 1 ] && sh -c "kill -9 $w" 2>/dev/null
}

start_pmon stat -e task-clock
stop_pmon HUP 1 "stat"
check "stat: SIGHUP: the counts are printed" grep -q 'task-clock' "$TMP/err"

start_pmon stat -I 100 -e task-clock -x, -o "$TMP/s.csv"
stop_pmon TERM 15 "stat -I"
check "stat -I: SIGTERM: the intervals are in the file" grep -q ',task-clock,' "$TMP/s.csv"

start_pmon record -e cpu-clock -o "$TMP/r.data"
stop_pmon HUP 1 "record"
run_pmon 0 report -i "$TMP/r.data"
check "record: SIGHUP: the recording is whole" sh -c "! grep -q 'damaged' '$TMP/err'"

start_pmon top -b -I 100 -e task-clock -o "$TMP/t.csv"
stop_pmon INT 2 "top -b"
check "top: SIGINT: the log has the intervals" grep -q ',task-clock,' "$TMP/t.csv"

start_pmon top -b -I 60000 -e task-clock -o "$TMP/t2.csv"
stop_pmon TERM 15 "top -b -I 60000"
check "top: SIGTERM: the interval it cut short is logged" grep -q ',task-clock,' "$TMP/t2.csv"

# A command that ignores the signal does not keep pmon (or itself) running.
IGNORE=1
start_pmon stat -e task-clock
stop_pmon TERM 15 "stat, command ignoring signals"
start_pmon stat -I 100 -e task-clock -o "$TMP/s2.txt"
stop_pmon HUP 1 "stat -I, command ignoring signals"
start_pmon record -e cpu-clock -o "$TMP/r2.data"
stop_pmon INT 2 "record, command ignoring signals"
start_pmon top -b -I 100 -e task-clock
stop_pmon TERM 15 "top, command ignoring signals"
IGNORE=0

# rdt against a resctrl tree in a directory (as t1400): the group goes.
T=$TMP/resctrl
mkdir -p "$T/info/L3_MON" "$T/mon_data/mon_L3_00" "$T/mon_groups"
echo 8 >"$T/info/L3_MON/num_rmids"
printf 'llc_occupancy\nmbm_total_bytes\n' >"$T/info/L3_MON/mon_features"
echo 0 >"$T/mon_data/mon_L3_00/llc_occupancy"
echo 0 >"$T/mon_data/mon_L3_00/mbm_total_bytes"
: >"$T/tasks"
for s in HUP:1 TERM:15; do
	start_pmon rdt --resctrl-root "$T" -I 100
	stop_pmon "${s%:*}" "${s#*:}" "rdt"
	check "rdt: SIG${s%:*}: its monitoring group was removed" \
		[ -z "$(ls "$T/mon_groups")" ]
done
IGNORE=1
start_pmon rdt --resctrl-root "$T" -I 100 -n 2
wait $pm
rc=$?
check "rdt -n 2, command ignoring SIGTERM: pmon ends, exit 0 ($rc)" [ $rc -eq 0 ]
check "rdt -n 2: the command was stopped" sh -c "! kill -0 $(cat "$TMP/pid") 2>/dev/null"
IGNORE=0

# rdt --msr against a file laid out as /dev/cpu/N/msr: restored on SIGHUP.
truncate -s 65536 "$TMP/msr.bin"
cp "$TMP/msr.bin" "$TMP/msr0.bin"
start_pmon rdt --msr --msr-device "$TMP/msr.bin" \
	--cpuid-file "$PMON_CPUID_DIR/intel-xeon-4214-cascadelake-sp.txt" --cpu 0 --rmid 3 -I 50
stop_pmon HUP 1 "rdt --msr"
check "rdt --msr: SIGHUP: the MSRs are restored" cmp "$TMP/msr.bin" "$TMP/msr0.bin"

# top on a terminal (tmux): SIGHUP restores the terminal and exits 129.
if command -v tmux >/dev/null 2>&1; then
	S="pmon-t2020-$$"
	tmux -L "$S" new-session -d -x 60 -y 20 \
		"stty -a >$TMP/stty0; sh -c 'echo \$\$ >$TMP/pmonpid; exec $PMON top -I 100 -e task-clock -- sleep 60'; echo \$? >$TMP/toprc; stty -a >$TMP/stty1; sleep 30"
	i=0
	while ! grep -q task-clock "$TMP/screen" 2>/dev/null && [ $i -lt 100 ]; do
		tmux -L "$S" capture-pane -p >"$TMP/screen" 2>/dev/null
		sleep 0.1
		i=$((i + 1))
	done
	check "top draws on the terminal" grep -q task-clock "$TMP/screen"
	kill -HUP "$(cat "$TMP/pmonpid")"
	i=0
	while [ ! -s "$TMP/stty1" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	check "top on a terminal: SIGHUP exits 129 ($(cat "$TMP/toprc"))" [ "$(cat "$TMP/toprc")" = 129 ]
	check "top on a terminal: the terminal's modes are restored" cmp "$TMP/stty0" "$TMP/stty1"
	tmux -L "$S" kill-server 2>/dev/null
else
	echo "# skip: no tmux: top on a terminal"
fi
# A signal at once, before the command has even started, is not lost
# (issue #31.11: trace exited 143 after a stall): each command that runs
# something exits 130 for a SIGINT sent right after it starts. sh starts a
# background job with SIGINT ignored (and no trap can undo it), so a SIGINT
# that came after that and before pmon's handler was lost: exit 0 after the
# whole sleep (seen under ASan). env --default-signal gives pmon SIGINT's
# default action, as a terminal's foreground job has it, and the signal
# goes as soon as pmon is the process (polled, no sleep).
want=$(readlink -f "$PMON")
tfs() { mountpoint -q /sys/kernel/tracing && echo mounted || echo absent; }
tfs0=$(tfs)
for cmd in "stat -e task-clock -o $TMP/i.txt" "trace -o $TMP/i.trace" "record -o $TMP/i.data"; do
	# shellcheck disable=SC2086
	env --default-signal=INT "$PMON" $cmd -- sleep 31.7 >/dev/null 2>&1 &
	p=$!
	i=0
	while [ "$(readlink /proc/$p/exe 2>/dev/null)" != "$want" ] && [ $i -lt 20000 ]; do
		i=$((i + 1))
	done
	kill -INT $p
	wait $p
	rc=$?
	check "${cmd%% *}: SIGINT at start exits 130 ($rc)" [ $rc -eq 130 ]
	# the command dies with pmon (PR_SET_PDEATHSIG): poll for it gone
	i=0
	while pgrep -f '^sle[e]p 31.7' >/dev/null && [ $i -lt 200 ]; do
		sleep 0.01
		i=$((i + 1))
	done
	check "${cmd%% *}: SIGINT at start: the command is not left running" \
		sh -c "! pgrep -f '^sle[e]p 31.7' >/dev/null"
	# trace mounts tracefs for its kernel events where root and absent: a
	# SIGINT in that moment still unmounts it (the system as pmon found it)
	check "${cmd%% *}: SIGINT at start: tracefs as it was ($tfs0)" [ "$(tfs)" = "$tfs0" ]
done
finish
