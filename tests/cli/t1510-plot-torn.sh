#!/bin/sh
# pmon plot of a log whose last line was cut short (issue #31.9): a full disk
# or a kill stops `stat -I -o` or `top -o` mid-line; plot draws the intervals
# there are and says in one warning what it skipped and why. A damaged line
# before the last one stays an error (exit 2). CSV and JSON alike, and a log
# a real full disk left.
. "$(dirname "$0")/lib.sh"

# points FILE.svg: the points drawn (one <circle> per interval and series).
points() { grep -o '<circle' "$1" | wc -l; }

cat >"$TMP/whole.csv" <<'L'
0.100000000,50.00,msec,task-clock,50000000,100.00,0.50,CPUs utilized
0.100000000,300,,page-faults,50000000,100.00,6.00,K/sec
0.200000000,60.00,msec,task-clock,60000000,100.00,0.60,CPUs utilized
0.200000000,400,,page-faults,60000000,100.00,6.00,K/sec
L
cp "$TMP/whole.csv" "$TMP/torn.csv"
printf '0.300000000,70.00,msec,task-clo' >>"$TMP/torn.csv"
run_pmon 0 plot "$TMP/whole.csv" -o "$TMP/whole.svg"
npts=$(points "$TMP/whole.svg")
run_pmon 0 plot "$TMP/torn.csv" -o "$TMP/torn.svg"
check "CSV cut mid-line: one warning naming the line and why" sh -c "
	[ \$(wc -l <'$TMP/err') -eq 1 ] &&
	grep -q '^pmon: warning: .*torn.csv:5: the last line has no newline.*full disk.*skipped' '$TMP/err'"
check "CSV cut mid-line: the whole intervals are drawn ($npts points)" \
	[ "$(points "$TMP/torn.svg")" -eq "$npts" -a "$npts" -gt 0 ]
# Cut anywhere in the last line, even after its last comma: never trusted.
head -c -1 "$TMP/whole.csv" >"$TMP/torn2.csv"
run_pmon 0 plot "$TMP/torn2.csv" -o "$TMP/torn2.svg"
check "CSV without its last newline: the last record skipped and said" \
	grep -q 'torn2.csv:4: the last line has no newline' "$TMP/err"
# The same cut line in the middle: the log is damaged, not torn.
{ head -2 "$TMP/whole.csv"; echo '0.300000000,70.00,msec,task-clo'; tail -2 "$TMP/whole.csv"; } \
	>"$TMP/mid.csv"
run_pmon 2 plot "$TMP/mid.csv" -o "$TMP/mid.svg"
one_line_error "mid.csv:3:"

cat >"$TMP/whole.json" <<'L'
{"interval":0.1,"event":"task-clock","value":50.0,"unit":"msec"}
{"interval":0.1,"event":"page-faults","value":300}
{"interval":0.2,"event":"task-clock","value":60.0,"unit":"msec"}
{"interval":0.2,"event":"page-faults","value":400}
L
cp "$TMP/whole.json" "$TMP/torn.json"
printf '{"interval":0.3,"event":"task-clock","va' >>"$TMP/torn.json"
run_pmon 0 plot "$TMP/whole.json" -o "$TMP/whole.svg"
npts=$(points "$TMP/whole.svg")
run_pmon 0 plot "$TMP/torn.json" -o "$TMP/torn.svg"
check "JSON cut mid-line: one warning naming the line and why" sh -c "
	[ \$(wc -l <'$TMP/err') -eq 1 ] &&
	grep -q '^pmon: warning: .*torn.json:5: the last line has no newline (not a whole JSON record' '$TMP/err'"
check "JSON cut mid-line: the whole intervals are drawn ($npts points)" \
	[ "$(points "$TMP/torn.svg")" -eq "$npts" -a "$npts" -gt 0 ]
# A last JSON record whole but for its newline is a record: kept, no warning.
cp "$TMP/whole.json" "$TMP/nonl.json"
printf '{"interval":0.3,"event":"task-clock","value":70.0,"unit":"msec"}' >>"$TMP/nonl.json"
run_pmon 0 plot "$TMP/nonl.json" -o "$TMP/nonl.svg"
check "JSON whole last record without newline: drawn, no warning" \
	[ "$(points "$TMP/nonl.svg")" -eq $((npts + 1)) -a ! -s "$TMP/err" ]
{ head -2 "$TMP/whole.json"; echo '{"interval":0.3,"event":"task-clock","va'; tail -2 "$TMP/whole.json"; } \
	>"$TMP/mid.json"
run_pmon 2 plot "$TMP/mid.json" -o "$TMP/mid.svg"
one_line_error "mid.json:3: not a JSON object"
# Nothing but a torn line: no intervals, an error.
printf '0.1,50.00,msec,task-cl' >"$TMP/only.csv"
run_pmon 2 plot "$TMP/only.csv" -o "$TMP/only.svg"
check "a log of one torn line: no interval records (exit 2)" \
	grep -q 'no interval records' "$TMP/err"

# A real full disk: stat -I -o on a small tmpfs, in a private mount
# namespace (root only), fills it; plot then reads what it left.
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null 2>&1 &&
	unshare -m --propagation private true 2>/dev/null; then
	mkdir "$TMP/small"
	# shellcheck disable=SC2016
	unshare -m --propagation private sh -c '
		mount -t tmpfs -o size=64k none "$1/small" || exit 99
		head -c 48k /dev/zero >"$1/small/fill"
		timeout 60 "$2" stat -I 10 -x, -e task-clock,page-faults,cs -o "$1/small/log.csv" \
			-- sh -c "while :; do :; done" 2>"$1/stat.err"
		echo $? >"$1/stat.rc"
		cp "$1/small/log.csv" "$1/full.csv"' sh "$TMP" "$PMON"
	check "stat -I on a full disk: exit 1 (got $(cat "$TMP/stat.rc" 2>/dev/null))" \
		[ "$(cat "$TMP/stat.rc" 2>/dev/null)" = 1 ]
	check "stat -I on a full disk: No space left on device" \
		grep -q 'No space left on device' "$TMP/stat.err"
	run_pmon 0 plot "$TMP/full.csv" -o "$TMP/full.svg"
	# Where the disk filled is where it filled: a line cut there is said
	# and skipped; a log that happened to end on a newline reads quietly.
	if [ "$(tail -c 1 "$TMP/full.csv" | od -An -c | tr -d ' ')" = '\n' ]; then
		check "full-disk log ending on a newline: no warning" [ ! -s "$TMP/err" ]
	else
		check "full-disk log cut mid-line: one warning" sh -c "
			[ \$(wc -l <'$TMP/err') -eq 1 ] && grep -q 'full.csv:.*no newline' '$TMP/err'"
	fi
	check "full-disk log: intervals drawn" [ "$(points "$TMP/full.svg")" -gt 0 ]
else
	echo "# skip the real full disk: needs root and unshare -m (a private tmpfs)"
fi
finish
