#!/bin/sh
# A SIGKILLed `pmon serve` mid-profile leaves its recording in
# $TMPDIR/pmon-serve-PID-XXXXXX/profile.pmon (SIGKILL runs no cleanup); the
# next profile of the next serve removes it, its pmon being gone (#31.10).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
trap 'stop_serve; rm -rf "$TMP"' EXIT

mkdir "$TMP/st"
TMPDIR=$TMP/st
export TMPDIR
start_serve -e task-clock --max-profile-seconds 60 || { finish; exit; }
: >"$TMP/long.code"
curl -s -o /dev/null -w '%{http_code}' --max-time 120 \
	"http://127.0.0.1:$PORT/debug/pprof/profile?seconds=60" >"$TMP/long.code" &
LONG=$!
killed=$SPID
profiling() { [ -f "$(ls -d "$TMP/st/pmon-serve-$killed-"* 2>/dev/null | head -1)/profile.pmon" ]; }
check "the profile is under way, in pmon-serve-$killed-*" poll 300 profiling
kill -9 "$SPID"
wait "$SPID" 2>/dev/null
SPID=
wait "$LONG"
check "the killed serve left its profile folder" profiling

start_serve -e task-clock --max-profile-seconds 5 || { finish; exit; }
check "the next serve profiles" [ "$(http '/debug/pprof/profile?seconds=1')" = 200 ]
check "and removed the killed one's folder" sh -c "! ls -d '$TMP/st/pmon-serve-$killed-'* 2>/dev/null"
check "and left none of its own" sh -c "[ -z \"\$(ls -A '$TMP/st')\" ]"
stop_serve
check "the next serve stops cleanly (exit $STATUS)" [ "$STATUS" -eq 0 ]
finish
