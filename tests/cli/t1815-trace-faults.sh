#!/bin/sh
# pmon trace on a full disk (issue #31.9): one line naming the file and why,
# with what the file keeps and how many kernel events were lost (never
# "0 dropped"), exit 1 (docs/exit-codes.md), not the signal that stopped the
# command. Everything runs in a private mount namespace: the small tmpfs and
# any tracefs pmon mounts vanish with it.
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
finish
