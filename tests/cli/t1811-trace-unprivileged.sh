#!/bin/sh
# pmon trace -k as an unprivileged user, with tracefs mounted and with it
# unmounted (issue #23): one warning naming what was skipped and the real
# reason -- the rights (tracepoints need root or CAP_PERFMON above
# perf_event_paranoid -1) whatever the mount state, and "not mounted" only
# where the kernel would let this user trace (paranoid -1). Each state is
# made in a private mount namespace of its own, so nothing another test
# mounts or unmounts meanwhile changes the answer.
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"
W=$PMON_WORKLOADS/wl-tracehooks
TRACEFS=/sys/kernel/tracing

if [ -n "${T1811_STATE:-}" ]; then
	# Inside the namespace: make the state, then the checks.
	if [ "$T1811_STATE" = mounted ]; then
		mountpoint -q $TRACEFS || mount -t tracefs nodev $TRACEFS
		check "tracefs is mounted for this run" mountpoint -q $TRACEFS
	else
		while mountpoint -q $TRACEFS && umount $TRACEFS; do :; done
		check "tracefs is not mounted for this run" sh -c "! mountpoint -q $TRACEFS"
	fi
	mkdir "$TMP/nobody" && chmod 711 "$TMP" && chmod 777 "$TMP/nobody"
	nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
	nobody "$PMON" trace -k sched -o "$TMP/nobody/n.trace" -- "$W" sleep 1 >"$TMP/out" 2>"$TMP/err"
	rc=$?
	# Hooks are recorded whatever the kernel allows: exit 0 either way.
	check "$T1811_STATE: unprivileged -k sched: the hooks are recorded (exit $rc)" [ "$rc" -eq 0 ]
	"$PMON" trace report "$TMP/nobody/n.trace" --format json >"$TMP/n.json"
	json_has "$TMP/n.json" '[c for c in d["channels"] if c["channel"] == "nap" and c["spans"] == 1]'
	if [ "$paranoid" -gt -1 ]; then
		check "$T1811_STATE: never 'not mounted' or 'not available': the rights are why" \
			sh -c "! grep -q -e 'not mounted' -e 'not available' '$TMP/err'"
		# perf_allow_tracepoint(): CAP_PERFMON is needed above -1.
		check "$T1811_STATE: one warning naming sched:sched_switch and the real reason" \
			sh -c "[ \$(grep -c '^pmon: warning: kernel events skipped: .*sched:sched_switch: .*perf_event_paranoid is $paranoid .*(tracepoints need root or CAP_PERFMON)' '$TMP/err') -eq 1 ]"
		nobody "$PMON" trace --no-hooks -k sched -o "$TMP/nobody/n2.trace" -- "$W" sleep 1 \
			>"$TMP/out" 2>"$TMP/err"
		check "$T1811_STATE: unprivileged --no-hooks -k sched: nothing to record, exit 3 ($?)" \
			[ $? -eq 3 ]
		one_line_error "tracepoints need root or CAP_PERFMON"
		check "$T1811_STATE: --no-hooks left no trace file" [ ! -e "$TMP/nobody/n2.trace" ]
		check "$T1811_STATE: nothing left beside it" \
			sh -c "! ls -A '$TMP/nobody' | grep -q -e '\.pmon-' -e '\.kernel'"
	else
		# perf_allow_tracepoint() lets this user open tracepoints: what
		# stops them is the mount (unmounted: not this user's to make) or
		# tracefs's own mode (mounted root-only, as Linux 6.x does).
		echo "# perf_event_paranoid $paranoid lets an unprivileged user open tracepoints"
		if [ "$T1811_STATE" = unmounted ]; then
			check "unmounted, paranoid $paranoid: the warning says tracefs is not mounted" \
				grep -q "^pmon: warning: kernel events skipped: .*sched:sched_switch.*tracefs is not mounted at $TRACEFS" "$TMP/err"
		elif [ "$(stat -c %a $TRACEFS)" = 700 ]; then
			check "mounted root-only, paranoid $paranoid: not readable by this user" \
				grep -q "^pmon: warning: kernel events skipped: .*$TRACEFS is not readable by this user" "$TMP/err"
		else
			check "mounted readable, paranoid $paranoid: the switches are recorded" \
				grep -q '^pmon trace: [1-9][0-9]* of them kernel' "$TMP/err"
		fi
	fi
	finish
	exit
fi

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null ||
	! unshare -m --propagation private true 2>/dev/null || ! grep -qw tracefs /proc/filesystems; then
	echo "skip: needs root, setpriv, unshare -m (a private mount namespace) and tracefs"
	exit 77
fi
for state in unmounted mounted; do
	T1811_STATE=$state unshare -m --propagation private sh "$0" >"$TMP/$state.out" 2>&1
	rc=$?
	cat "$TMP/$state.out"
	n_ok=$(grep -c '^ok' "$TMP/$state.out")
	n_bad=$(grep -c '^not ok' "$TMP/$state.out")
	passed=$((passed + n_ok))
	failed=$((failed + n_bad))
	check "$state: the run in its own namespace ended well (exit $rc, $n_ok checks)" \
		[ "$rc" -eq 0 -a "$n_ok" -ge 4 ]
done
finish
