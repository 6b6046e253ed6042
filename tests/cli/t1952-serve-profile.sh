#!/bin/sh
# pmon serve's /debug/pprof/profile: `go tool pprof -top URL` names the hot
# function of a workload running beside it (a system-wide profile), one
# profile at a time (a second request gets 429), and SIGTERM during a
# profile answers it 503 and still stops cleanly.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
command -v go >/dev/null 2>&1 || { echo "skip: go is not installed (Debian golang-go)"; exit 77; }
WL=
trap 'stop_serve; [ -n "$WL" ] && kill "$WL" 2>/dev/null; rm -rf "$TMP"' EXIT

"$PMON_WORKLOADS/wl-hotcold" 1000000000000 &
WL=$!
start_serve -e task-clock --max-profile-seconds 20 || { finish; exit; }

# (-timeout: pprof waits only 1.5 x seconds by default, too little for a
# loaded machine or a sanitized build)
HOME=$TMP GOCACHE=$TMP/gocache go tool pprof -timeout 120 -top \
	"http://127.0.0.1:$PORT/debug/pprof/profile?seconds=2" >"$TMP/pprof.txt" 2>&1
check "go tool pprof fetches a profile ($(head -c 300 "$TMP/pprof.txt"))" [ $? -eq 0 ]
check "it names hot()" grep -Eq ' hot$' "$TMP/pprof.txt"
check "the sample type is cpu-clock" grep -q '^Type: cpu-clock' "$TMP/pprof.txt"
check "a profile at 49 Hz" [ "$(http '/debug/pprof/profile?seconds=1&hz=49')" = 200 ]
check "is gzipped" [ "$(head -c 2 "$TMP/body" | od -An -tx1 | tr -d ' ')" = 1f8b ]
check "as application/octet-stream" grep -qi '^Content-Type: application/octet-stream' "$TMP/headers"

# One at a time: while a long profile runs, another request gets 429.
curl -s -o "$TMP/long.pb.gz" -w '%{http_code}' --max-time 60 \
	"http://127.0.0.1:$PORT/debug/pprof/profile?seconds=8" >"$TMP/long.code" &
LONG=$!
# (polled on /metrics: a profile request would take the profile itself)
busy() { [ "$(http /metrics)" = 200 ] && grep -qx 'pmon_profile_in_progress 1' "$TMP/body"; }
check "the first profile is under way" poll 300 busy
check "a second profile meanwhile gets 429" [ "$(http '/debug/pprof/profile?seconds=1')" = 429 ]
check "429 says when to retry" grep -qi '^Retry-After: ' "$TMP/headers"
check "metrics are served during a profile" [ "$(http /metrics)" = 200 ]
wait "$LONG"
check "the first profile completes" [ "$(cat "$TMP/long.code")" = 200 ]
check "after it, profiles are taken again" [ "$(http '/debug/pprof/profile?seconds=1')" = 200 ]

# SIGTERM during a profile: it is cut short and answered 503 with a one-line
# reason (not an empty reply, not a truncated 200), and the agent still
# exits 0 with every counter closed.
curl -s -o "$TMP/cut.body" -w '%{http_code}' --max-time 60 \
	"http://127.0.0.1:$PORT/debug/pprof/profile?seconds=20" >"$TMP/cut.code" &
CUT=$!
check "the long profile is under way" poll 300 busy
stop_serve
wait "$CUT"
check "SIGTERM during a profile: exit 0 ($STATUS)" [ "$STATUS" -eq 0 ]
check "the cut profile is answered 503 ($(cat "$TMP/cut.code"))" [ "$(cat "$TMP/cut.code")" = 503 ]
check "with a one-line reason ($(head -c 200 "$TMP/cut.body"))" sh -c "[ \"\$(wc -l <'$TMP/cut.body')\" -eq 1 ] && grep -q 'stopping' '$TMP/cut.body'"
check "no descriptor left open" sh -c "! grep -q 'still open' '$TMP/serve.err'"
check "it said it stopped" grep -q "pmon serve: stopping" "$TMP/serve.err"
finish
