#!/bin/sh
# pmon stat and list as an unprivileged user (issue #29): a refusal for rights exits
# 3, "not possible with these rights" (docs/exit-codes.md), and the advice
# names what would work: never "software events still work" when software
# events are refused too; for -a, that counting every task of a CPU needs
# root or CAP_PERFMON; for -p of another user's process, that it is another
# user's (ptrace rights), not perf_event_paranoid. tracefs is mounted in a
# private mount namespace, so nothing another test mounts changes it.
. "$(dirname "$0")/lib.sh"
TRACEFS=/sys/kernel/tracing

if [ -n "${T1025_INNER:-}" ]; then
	mountpoint -q $TRACEFS || mount -t tracefs nodev $TRACEFS
	nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
	if [ "$paranoid" -gt -1 ]; then
		nobody "$PMON" stat -e sched:sched_switch -- true >"$TMP/out" 2>"$TMP/err"
		check "a tracepoint without CAP_PERFMON: exit 3 ($?)" [ $? -eq 3 ]
		one_line_error "tracepoints need root or CAP_PERFMON"
	fi
	if [ "$paranoid" -gt 0 ]; then
		nobody "$PMON" stat -a -- true >"$TMP/out" 2>"$TMP/err"
		check "-a without CAP_PERFMON: exit 3 ($?)" [ $? -eq 3 ]
		one_line_error "counting every task of a CPU needs root or CAP_PERFMON at perf_event_paranoid $paranoid"
		check "-a: no advice to use software events, which are refused too" \
			sh -c "! grep -q 'software events still work' '$TMP/err'"
	fi
	if [ "$paranoid" -gt -1 ]; then
		# pmon list leaves out the tracepoints this user cannot open, and
		# says so; a filter that matches nothing says why.
		nobody "$PMON" list >"$TMP/out" 2>"$TMP/err"
		check "list: exit 0 ($?)" [ $? -eq 0 ]
		check "list: no tracepoint listed" sh -c "! grep -q '^  sched:' '$TMP/out'"
		one_line_error "warning: tracepoints are not listed: perf_event_paranoid is $paranoid and this user has no CAP_PERFMON"
		nobody "$PMON" list sched_switch >"$TMP/out" 2>"$TMP/err"
		check "list sched_switch: exit 2 ($?)" [ $? -eq 2 ]
		one_line_error "no event matches 'sched_switch' (tracepoints are not listed: perf_event_paranoid is $paranoid"
	fi
	if [ "$paranoid" -gt 0 ]; then
		# record -a: the same rights, said for sampling (issue #31: a bare
		# "Permission denied")
		mkdir -p "$TMP/nb" && chmod 777 "$TMP/nb" && chmod 711 "$TMP"
		nobody "$PMON" record -a -o "$TMP/nb/a.data" -- true >"$TMP/out" 2>"$TMP/err"
		check "record -a without CAP_PERFMON: exit 3 ($?)" [ $? -eq 3 ]
		one_line_error "sampling every task of a CPU needs root or CAP_PERFMON"
	fi
	nobody "$PMON" stat -e task-clock -p 1 >"$TMP/out" 2>"$TMP/err"
	check "-p 1 (root's): exit 3 ($?)" [ $? -eq 3 ]
	one_line_error "thread 1 belongs to another user (uid 0): counting it needs root, CAP_PERFMON or the right to ptrace it"
	nobody "$PMON" stat -e task-clock -o /dev/null -- true
	check "its own command: counted (exit $?)" [ $? -eq 0 ]
	finish
	exit
fi

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null ||
	! unshare -m --propagation private true 2>/dev/null || ! grep -qw tracefs /proc/filesystems; then
	echo "skip: needs root, setpriv, unshare -m (a private mount namespace) and tracefs"
	exit 77
fi
T1025_INNER=1 unshare -m --propagation private sh "$0"
