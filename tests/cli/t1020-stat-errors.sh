#!/bin/sh
# Bad input to pmon stat: one line that says what and why, exit 2 (or the
# documented code), never a crash, and never the command run for nothing.
. "$(dirname "$0")/lib.sh"

while IFS='|' read -r code text args; do
	[ -z "$code" ] && continue
	# shellcheck disable=SC2086
	eval "set -- $args"
	run_pmon "$code" stat "$@"
	one_line_error "$text"
done <<'ROWS'
2|event 'cycels' is unknown; did you mean 'cycles'|-e cycels -- true
2|unknown modifier 'x'|-e task-clock:x -- true
2|raw event 'r12zz': '12zz' is not a hexadecimal number|-e r12zz -- true
2|'foo' is neither a format term nor an event of PMU 'msr'|-e msr/foo=1/ -- true
2|PMU 'nopmu' does not exist here|-e nopmu/event=1/ -- true
2|missing '}'|-e '{task-clock,cs' -- true
2|process 999999999 does not exist|-e task-clock -p 999999999
2|thread 999999999 does not exist|-e task-clock -t 999999999
2|nothing to count|-e task-clock
2|the command is empty|-e task-clock -- ''
2|-I 0: the interval must be at least 1 ms|-I 0 -- true
2|-r 0: the repeat count must be at least 1|-r 0 -- true
2|-r 'x' is not a non-negative integer|-r x -- true
2|cannot write '/nonexistent/dir/out.txt'|-o /nonexistent/dir/out.txt -- true
2|processes: 'abc' is not a valid list|-p abc
2|--per-cpu needs -a or -C|--per-cpu -- true
2|-r needs a command and excludes -I|-r 2 -I 100 -- true
2|--interval-count needs -I|--interval-count 3 -- true
ROWS

# No requested event can be counted: stop before running the command.
if [ ! -e /sys/bus/event_source/devices/cpu ] && [ ! -e /sys/bus/event_source/devices/cpu_core ]; then
	run_pmon 3 stat -e cycles,instructions -- touch "$TMP/should-not-exist"
	one_line_error "cannot open 'cycles': this machine exposes no hardware PMU (see 'pmon info')"
	check "the command did not run" [ ! -e "$TMP/should-not-exist" ]
	run_pmon 0 stat -e cycles,task-clock -- true
	check "mixed: <not supported> with the reason" \
		grep -q "<not supported>.*cycles.*exposes no hardware PMU" "$TMP/err"
fi
finish
