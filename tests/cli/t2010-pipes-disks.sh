#!/bin/sh
# Closed pipes, full disks, bad output paths and a killed pmon (issue #14.3,
# 4, 6, 7): pmon ends with the documented status and one line, the command
# it ran is stopped, nothing is left running, nothing measured that could be
# kept is lost.
. "$(dirname "$0")/lib.sh"

# wait_gone PIDFILE: the process it names has ended (polled, at most 10 s).
wait_gone() {
	i=0
	while [ ! -s "$1" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	p=$(cat "$1" 2>/dev/null)
	[ -n "$p" ] || return 1
	while kill -0 "$p" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
	! kill -0 "$p" 2>/dev/null
}
# A workload that says its pid and runs for a minute.
LONG="echo \$\$ >$TMP/pid; exec sleep 60"

# ---- a closed pipe: `| head` (#14.3) ----
rm -f "$TMP/pid"
st=$( (timeout 30 "$PMON" list 2>"$TMP/err"; echo $? >"$TMP/rc") | head -1 >/dev/null; cat "$TMP/rc")
check "list | head -1: exit 1 (not 141, SIGPIPE)" [ "$st" = 1 ]
check "list | head -1: nothing on stderr" [ ! -s "$TMP/err" ]

st=$( (timeout 30 "$PMON" stat -I 100 -e task-clock -o /dev/stdout -- sh -c "$LONG" \
	2>"$TMP/err"; echo $? >"$TMP/rc") | head -1 >/dev/null; cat "$TMP/rc")
check "stat -I -o /dev/stdout | head -1: exit 1 (got $st)" [ "$st" = 1 ]
check "stat -I | head: the command was stopped" wait_gone "$TMP/pid"
check "stat -I | head: nothing on stderr" [ ! -s "$TMP/err" ]

rm -f "$TMP/pid"
st=$( (timeout 30 "$PMON" record -e cpu-clock -o /dev/stdout -- sh -c "$LONG" \
	2>"$TMP/err"; echo $? >"$TMP/rc") | head -c 10 >/dev/null; cat "$TMP/rc")
check "record -o /dev/stdout | head -c 10: exit 1 (got $st)" [ "$st" = 1 ]
check "record | head: the command was stopped" wait_gone "$TMP/pid"
check "record | head: nothing on stderr" [ ! -s "$TMP/err" ]

rm -f "$TMP/pid"
st=$( (timeout 30 "$PMON" top -b -I 100 -e task-clock -- sh -c "$LONG" 2>"$TMP/err"
	echo $? >"$TMP/rc") | head -1 >/dev/null; cat "$TMP/rc")
check "top -b | head -1: exit 1 (got $st)" [ "$st" = 1 ]
check "top | head: the command was stopped" wait_gone "$TMP/pid"

# rdt | head -1: the same, and its monitoring group is removed at once
# (an emulated resctrl tree, as t1400). The command's own status is passed
# on by top and rdt as by stat (#14.9).
R=$TMP/resctrl
mkdir -p "$R/info/L3_MON" "$R/mon_data/mon_L3_00" "$R/mon_groups"
echo 8 >"$R/info/L3_MON/num_rmids"
for f in llc_occupancy mbm_total_bytes mbm_local_bytes; do echo 0 >"$R/mon_data/mon_L3_00/$f"; done
rm -f "$TMP/pid"
st=$( (timeout 30 "$PMON" rdt --resctrl-root "$R" -I 50 -- sh -c "$LONG" 2>"$TMP/err"
	echo $? >"$TMP/rc") | head -1 >/dev/null; cat "$TMP/rc")
check "rdt | head -1: exit 1 (got $st)" [ "$st" = 1 ]
check "rdt | head: the command was stopped" wait_gone "$TMP/pid"
check "rdt | head: its monitoring group was removed" [ -z "$(ls "$R/mon_groups")" ]
run_pmon 4 top -b -I 100 -e task-clock -- sh -c 'exit 4'
run_pmon 4 rdt --resctrl-root "$R" -I 100 -- sh -c 'exit 4'

# The command gets SIGPIPE's default back: `yes | head` ends yes quietly.
run_pmon 0 stat -e task-clock -- sh -c 'yes | head -1 >/dev/null'
check "the command's SIGPIPE is the default (no 'Broken pipe' from yes)" \
	sh -c "! grep -q 'Broken pipe' '$TMP/err'"

# ---- full disks (#14.4) ----
if [ -w /dev/full ]; then
	rm -f "$TMP/pid"
	run_pmon 1 stat -I 100 -e task-clock -o /dev/full -- sh -c "$LONG"
	one_line_error "cannot write '/dev/full': No space left on device"
	check "stat -I -o /dev/full: the command was stopped" wait_gone "$TMP/pid"
	run_pmon 1 stat -e task-clock -o /dev/full -- true
	one_line_error "cannot write '/dev/full': No space left on device"
	rm -f "$TMP/pid"
	run_pmon 1 top -b -I 100 -e task-clock -o /dev/full -- sh -c "$LONG"
	one_line_error "cannot write '/dev/full': No space left on device"
	check "top -o /dev/full: the command was stopped" wait_gone "$TMP/pid"
	run_pmon 1 record -e cpu-clock -o /dev/full -- true
	one_line_error "cannot write '/dev/full': No space left on device"
	# Standard output on a full disk: said once, by the command (a UI
	# module's or a built-in one), not again when pmon closes stdout.
	run_pmon 0 record -e cpu-clock -o "$TMP/full.data" -- true
	for args in "report -i $TMP/full.data" info; do
		# shellcheck disable=SC2086
		"$PMON" $args >/dev/full 2>"$TMP/err"
		check "$args >/dev/full: exit 1" [ $? -eq 1 ]
		one_line_error "cannot write 'standard output': No space left on device"
	done
	# Every export says ENOSPC's words, even one whose last write was
	# larger than the buffer (the flame graph's script) and so left
	# nothing for a retried flush to tell (issue #31).
	for f in text json flamegraph speedscope pprof; do
		run_pmon 1 report -i "$TMP/full.data" --format $f -o /dev/full
		one_line_error "cannot write '/dev/full': No space left on device"
	done
fi

# A disk that fills during record: a small tmpfs (root only).
mkdir "$TMP/small"
if mount -t tmpfs -o size=64k none "$TMP/small" 2>/dev/null; then
	rm -f "$TMP/pid"
	run_pmon 1 record -e cpu-clock -F 4000 -o "$TMP/small/r.data" -- \
		sh -c "echo \$\$ >$TMP/pid; while :; do :; done"
	one_line_error "cannot write '$TMP/small/r.data': No space left on device; the recording keeps the first"
	check "record on a full disk: the command was stopped" wait_gone "$TMP/pid"
	kept=$(sed -n 's/.*keeps the first \([0-9]*\) records.*/\1/p' "$TMP/err")
	"$PMON" report -i "$TMP/small/r.data" >"$TMP/rep" 2>/dev/null
	got=$(sed -n 's/^# pmon report: \([0-9]*\) samples.*/\1/p' "$TMP/rep")
	check "the full recording is readable: $got samples of the $kept records said kept" \
		[ -n "$got" ] && [ "$got" -gt 0 ] && [ "$got" -le "$kept" ]
	# The disk full now: an export to it fails in one line and leaves
	# neither the file nor a temporary beside it.
	head -c 1M /dev/zero >"$TMP/small/fill" 2>/dev/null
	for f in flamegraph pprof; do
		run_pmon 1 report -i "$TMP/full.data" --format $f -o "$TMP/small/out.$f"
		one_line_error "No space left on device"
		check "report --format $f on a full disk leaves no file" \
			[ "$(ls "$TMP/small" | grep -vx -e r.data -e fill)" = "" ]
	done
	umount "$TMP/small"
else
	echo "# skip: cannot mount a tmpfs here (not root?): the filling-disk cases"
fi

# ---- output paths checked before the work (#14.7) ----
for args in "stat -I 100 --plot $TMP/nodir/x.png -e task-clock --" \
	"stat -o $TMP/nodir/x.txt -e task-clock --" \
	"record -e cpu-clock -o $TMP/nodir/x.data --" \
	"top -b -n 1 -e task-clock -o $TMP/nodir/x.csv --"; do
	rm -f "$TMP/ran"
	# shellcheck disable=SC2086
	run_pmon 2 $args touch "$TMP/ran"
	one_line_error "cannot write '$TMP/nodir/"
	check "$args: the command did not run" [ ! -e "$TMP/ran" ]
done
rm -f "$TMP/ran"
run_pmon 2 stat -I 100 --plot "$TMP/x.txt" -e task-clock -- touch "$TMP/ran"
one_line_error "must end in .svg or .png"
check "--plot x.txt: the command did not run" [ ! -e "$TMP/ran" ]
run_pmon 2 stat -o "$TMP" -e task-clock -- touch "$TMP/ran"
one_line_error "it is a directory"

# ---- pmon killed: its command goes too (PR_SET_PDEATHSIG, #14.6) ----
for cmd in "stat -e task-clock" "record -e cpu-clock -o $TMP/k.data" "top -b -e task-clock"; do
	rm -f "$TMP/pid"
	# shellcheck disable=SC2086
	"$PMON" $cmd -- sh -c "$LONG" >/dev/null 2>&1 &
	pm=$!
	i=0
	while [ ! -s "$TMP/pid" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	kill -9 $pm
	wait $pm 2>/dev/null
	check "pmon $cmd killed by SIGKILL: its command ended too" wait_gone "$TMP/pid"
done
# ... and no temporary file: --regions' and --plot's are unlinked at once.
mkdir "$TMP/tmpd"
rm -f "$TMP/pid"
TMPDIR=$TMP/tmpd "$PMON" stat --regions -I 100 --plot "$TMP/p.svg" -e task-clock \
	-- sh -c "$LONG" >/dev/null 2>&1 &
pm=$!
i=0
while [ ! -s "$TMP/pid" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -9 $pm
wait $pm 2>/dev/null
check "stat --regions --plot killed by SIGKILL: no temporary file left" [ -z "$(ls "$TMP/tmpd")" ]
wait_gone "$TMP/pid"
# rdt --plot likewise.
rm -f "$TMP/pid"
TMPDIR=$TMP/tmpd "$PMON" rdt --resctrl-root "$R" -I 100 --plot "$TMP/r.svg" -e task-clock \
	-- sh -c "$LONG" >/dev/null 2>&1 &
pm=$!
i=0
while [ ! -s "$TMP/pid" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -9 $pm
wait $pm 2>/dev/null
check "rdt --plot killed by SIGKILL: no temporary file left" [ -z "$(ls "$TMP/tmpd")" ]
wait_gone "$TMP/pid"
run_pmon 0 rdt --resctrl-root "$R" -I 100 -n 2 --plot "$TMP/r.svg" -- sleep 5
check "rdt --plot still draws its picture" grep -q '<svg' "$TMP/r.svg"
run_pmon 0 stat -I 100 --plot "$TMP/p.svg" -e task-clock -- sleep 0.3
check "stat --plot still draws its picture" grep -q '<svg' "$TMP/p.svg"
finish
