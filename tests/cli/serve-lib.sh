# SPDX-License-Identifier: MIT
# Helpers for the `pmon serve` tests (t195x), sourced after lib.sh: start the
# agent on a free loopback port, fetch with curl, poll for states.
command -v curl >/dev/null 2>&1 || { echo "skip: curl is not installed"; exit 77; }
if ! "$PMON" stat -a -e task-clock -o /dev/null -- true 2>/dev/null; then
	echo "skip: system-wide counting is not allowed here (perf_event_paranoid, not root)"
	exit 77
fi

SPID=
PORT=
# start_serve ARGS...: pmon serve --listen 127.0.0.1:0 ARGS in the background;
# sets SPID and PORT (the port it printed), or fails the test.
start_serve() {
	# Emptied here, before the start: the shell truncates the redirections
	# in the child, which a loaded machine may run after this function
	# has read the previous serve's "listening on" line -- its port, a
	# server already gone (every check of a block then failed at once).
	: >"$TMP/serve.out"
	: >"$TMP/serve.err"
	"$PMON" serve --listen 127.0.0.1:0 "$@" >"$TMP/serve.out" 2>"$TMP/serve.err" &
	SPID=$!
	PORT=
	i=0
	while [ $i -lt 600 ]; do
		PORT=$(sed -n 's|.*listening on https*://127.0.0.1:\([0-9]*\)/.*|\1|p' "$TMP/serve.err")
		[ -n "$PORT" ] && return 0
		kill -0 "$SPID" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	not_ok "pmon serve $* did not start: $(head -c 300 "$TMP/serve.err")"
	return 1
}

# stop_serve: SIGTERM and wait; its exit status in STATUS.
stop_serve() {
	[ -n "$SPID" ] || return 0
	kill -TERM "$SPID" 2>/dev/null
	wait "$SPID"
	STATUS=$?
	SPID=
}

# http PATH [CURL ARGS...]: GET http://127.0.0.1:$PORT/PATH into $TMP/body;
# prints the status code.
http() {
	p=$1; shift
	curl -s -o "$TMP/body" -D "$TMP/headers" -w '%{http_code}' --max-time 60 "$@" \
		"http://127.0.0.1:$PORT$p"
}

# poll N CMD...: run CMD every 0.2 s until it succeeds, at most N times.
poll() {
	n=$1; shift
	while [ "$n" -gt 0 ]; do
		"$@" && return 0
		sleep 0.2
		n=$((n - 1))
	done
	return 1
}

# A perf_event cgroup hierarchy (cgroup v1) for the test, in CGMNT: the
# system's where it has one, else one mounted in $TMP/cg (OWN_MOUNT=1; the
# caller's cleanup unmounts it). Another test's own mount (under its
# pmon-t.* directory) is never used: it goes when that test ends, and took
# this test's cgroups with it once (t1953 beside t1951 under ASan).
cg_mount() {
	cg_stale_umount
	CGMNT=$(grep ' - cgroup ' /proc/self/mountinfo | grep -E '[ ,]perf_event(,|$)' |
		awk '$5 !~ /\/pmon-t\./ { print $5; exit }')
	OWN_MOUNT=
	[ -n "$CGMNT" ] && return 0
	mkdir -p "$TMP/cg"
	echo $$ >"$TMP/cg.owner" # for cg_stale_umount (lib.sh)
	if mount -t cgroup -o perf_event none "$TMP/cg" 2>"$TMP/mount.err"; then
		CGMNT=$TMP/cg
		OWN_MOUNT=1
	else
		echo "skip: no perf_event cgroup hierarchy, and mounting one failed: $(cat "$TMP/mount.err")"
		rm -rf "$TMP"
		exit 77
	fi
}
