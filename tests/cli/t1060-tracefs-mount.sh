#!/bin/sh
# As root, pmon mounts tracefs when a tracepoint is asked for and it is
# absent; it unmounts what it mounted (and only that) when done. Run in a
# private mount namespace, so the machine's own tracefs is never touched.
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ] || ! unshare -m --propagation private true 2>/dev/null; then
	echo "skip: needs root and unshare -m (a private mount namespace)"
	exit 77
fi
T=/sys/kernel/tracing
export PMON T
unshare -m --propagation private sh -c '
	while grep -q " $T " /proc/self/mounts; do umount "$T" || exit 3; done
	"$PMON" stat -x, -e sched:sched_switch -- true >/dev/null 2>"$0.err" || exit 4
	grep -q " $T " /proc/self/mounts && exit 5
	mount -t tracefs nodev "$T" || exit 6
	"$PMON" stat -x, -e sched:sched_switch -- true >/dev/null 2>>"$0.err" || exit 4
	grep -q " $T " /proc/self/mounts || exit 7
	exit 0' "$TMP/ns"
rc=$?
check "tracefs mounted by pmon is unmounted, one mounted before is kept (rc $rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || head -c 300 "$TMP/ns.err"

# pmon trace keeps tracefs mounted for the whole trace where it reads the
# wake-ups from an instance of its own, and unmounts it after: with no
# tracefs mounted, no "perf's instead" warning, and no mount left.
unshare -m --propagation private sh -c '
	while grep -q " $T " /proc/self/mounts; do umount "$T" || exit 3; done
	"$PMON" trace -k sched -o "$0.trace" -- true >/dev/null 2>"$0.err" || exit 4
	grep -q "perf.s instead" "$0.err" && exit 8
	grep -q " $T " /proc/self/mounts && exit 5
	exit 0' "$TMP/tr"
rc=$?
check "pmon trace: wake-ups from its tracefs instance, tracefs unmounted after (rc $rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || head -c 300 "$TMP/tr.err"
finish
