#!/bin/sh
# pmon trace on a full disk (issue #31.9): one line naming the file and why,
# with what the file keeps and how many kernel events were lost (never
# "0 dropped"), exit 1 (docs/exit-codes.md), not the signal that stopped the
# command. A SIGKILLed trace (#31.10): the next one removes what it left.
# Everything runs in a private mount namespace: the small tmpfs and any
# tracefs mounted vanish with it.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ] || ! grep -qw tracefs /proc/filesystems ||
	! unshare -m --propagation private true 2>/dev/null; then
	echo "1..0 # SKIP kernel events and a private tmpfs need root, tracefs and unshare -m"
	exit 77
fi

# ---- a full disk ----
mkdir "$TMP/small"
# A program without hooks: its system calls alone, far more than 64k hold.
# shellcheck disable=SC2016
unshare -m --propagation private sh -c '
	mount -t tmpfs -o size=64k none "$1/small" || exit 99
	timeout 120 "$2" trace -e syscalls -o "$1/small/t.trace" -- \
		dd if=/dev/zero of=/dev/null bs=1 count=300000 2>"$1/err"
	echo $? >"$1/rc"
	ls -A "$1/small" >"$1/left"' sh "$TMP" "$PMON"
check "trace on a full disk: exit 1 (got $(cat "$TMP/rc"))" [ "$(cat "$TMP/rc")" = 1 ]
# dd's own summary is not pmon's: only pmon's lines count.
grep '^pmon' "$TMP/err" >"$TMP/err.pmon"
check "trace on a full disk: one line, the file and why" sh -c "
	[ \$(wc -l <'$TMP/err.pmon') -eq 1 ] &&
	grep -q \"^pmon: cannot write trace '$TMP/small/t.trace': No space left on device; it keeps [0-9]* events, [0-9]* kernel events lost\" '$TMP/err.pmon'"
lost=$(sed -n 's/.* \([0-9]*\) kernel events lost.*/\1/p' "$TMP/err.pmon")
check "trace on a full disk: the events not written are counted lost ($lost)" \
	[ "${lost:-0}" -gt 0 ]
check "trace on a full disk: no temporary left beside the trace" \
	[ "$(grep -vx t.trace "$TMP/left")" = "" ]

# ---- a SIGKILLed pmon trace (#31.10) ----
# It leaves its temporaries (.k.trace.pmon-PID-*) and its tracefs instance
# (instances/pmon-trace-PID-N): the next trace removes both, as their pmon
# is gone. In the private mount namespace, tracefs mounted there (the
# instances themselves are the kernel's: the second run is what removes the
# first one's, and the check that it did is this test's own cleanup).
# shellcheck disable=SC2016
unshare -m --propagation private sh -c '
	T=/sys/kernel/tracing
	[ -d $T/instances ] || mount -t tracefs nodev $T || exit 99
	: >"$1/k1.err"
	"$2" trace -e sched -o "$1/k.trace" -- sleep 60 2>"$1/k1.err" &
	pid=$!
	echo $pid >"$1/kpid"
	# Poll until both are there (at most 20 s), then SIGKILL.
	i=0
	while [ $i -lt 200 ]; do
		ls -d $T/instances/pmon-trace-$pid-* >/dev/null 2>&1 &&
			ls -A "$1" | grep -q "^\.k\.trace\.pmon-$pid-" && break
		sleep 0.1; i=$((i + 1))
	done
	ls -d $T/instances/pmon-trace-$pid-* 2>/dev/null | wc -l >"$1/inst.before"
	ls -A "$1" | grep -c "^\.k\.trace\.pmon-$pid-" >"$1/tmp.before"
	kill -9 $pid
	wait $pid 2>/dev/null
	"$2" trace -e sched -o "$1/k.trace" -- true 2>"$1/k2.err"
	echo $? >"$1/k2.rc"
	ls -d $T/instances/pmon-trace-$pid-* 2>/dev/null | wc -l >"$1/inst.after"
	ls -A "$1" | grep -c "^\.k\.trace\.pmon-$pid-" >"$1/tmp.after"
	# Should the run above have failed to, leave the kernel as found.
	for d in $T/instances/pmon-trace-$pid-*; do [ -d "$d" ] && rmdir "$d"; done
	exit 0' sh "$TMP" "$PMON"
check "a running trace has its instance and temporaries ($(cat "$TMP/inst.before"), $(cat "$TMP/tmp.before"))" \
	[ "$(cat "$TMP/inst.before")" -ge 1 -a "$(cat "$TMP/tmp.before")" -ge 1 ]
check "the next trace runs (exit $(cat "$TMP/k2.rc"); $(head -c 200 "$TMP/k2.err"))" \
	[ "$(cat "$TMP/k2.rc")" = 0 ]
check "the next trace removed the killed one's tracefs instance" \
	[ "$(cat "$TMP/inst.after")" = 0 ]
check "the next trace removed the killed one's temporaries" \
	[ "$(cat "$TMP/tmp.after")" = 0 ]
finish
