#!/bin/sh
# pmon top on a narrow terminal (issue #14.14): columns are dropped in a
# fixed order (the trace, then MAX, then MIN), rows never wrap. Driven in a
# tmux pane of 40, 50 and 70 columns.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null 2>&1 || { echo "# skip: no tmux"; exit 77; }
S="pmon-t2040-$$"
for w in 40 50 70 100; do
	tmux -L "$S" new-session -d -x $w -y 12 \
		"$PMON top -I 100 -e task-clock,page-faults -- sleep 90"
	i=0 # poll up to 60 s for the first counts: a loaded machine is slow to start
	: >"$TMP/screen"
	while ! grep -q '^ page-faults .*[0-9]' "$TMP/screen" && [ $i -lt 600 ]; do
		sleep 0.1
		tmux -L "$S" capture-pane -p >"$TMP/screen" 2>/dev/null
		i=$((i + 1))
	done
	tmux -L "$S" kill-server 2>/dev/null
	check "$w columns: the rows are drawn" grep -q '^>task-clock ' "$TMP/screen"
	# Every row is one of pmon top's own: a wrapped row would start mid-text.
	check "$w columns: no row wraps" sh -c "! grep -Ev '^\$|^ pmon top -- |^EVENT |^[> ](task-clock|page-faults) | a:add' '$TMP/screen'"
	# (the trace's block characters are 3 bytes each: not counted at 100)
	[ $w -lt 100 ] && check "$w columns: no row is wider than the terminal" \
		awk -v w=$w 'length($0) > w { exit 1 }' "$TMP/screen"
	case $w in
	40 | 50) check "$w columns: only the rate" sh -c "! grep -q 'MIN/s' '$TMP/screen'" ;;
	70) check "70 columns: rate, min, max, no trace" sh -c "grep -q 'MAX/s' '$TMP/screen' && ! grep -q TRACE '$TMP/screen'" ;;
	100) check "100 columns: the trace too" grep -q 'TRACE' "$TMP/screen" ;;
	esac
done
finish
