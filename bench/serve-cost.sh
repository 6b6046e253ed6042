#!/bin/sh
# SPDX-License-Identifier: MIT
# Where pmon serve's own CPU goes per background reading (issue #19), in
# counts that a loaded machine does not disturb: system calls of the
# collector thread per interval (strace), and instructions per interval
# (callgrind's inclusive count of collect(), divided by its calls). The
# configuration of bench/serve-load.sh's cost part: 8 software events on all
# CPUs (-a) and 20 empty cgroups (--cgroup-root), a 1 s interval, no scrape.
# And instructions per /metrics scrape (callgrind, serve_collector__render()).
# Needs root (system-wide counting, a perf_event cgroup hierarchy), strace
# and valgrind. Stops by itself after a few times SECONDS.
# usage: [PARTS="syscalls readings scrapes"] [KEEP=DIR] bench/serve-cost.sh [PMON] [SECONDS]
# KEEP: a directory to keep the strace and callgrind outputs in (for
# callgrind_annotate --auto=yes, line by line).
set -eu
PMON=${1:-build/pmon}
SECS=${2:-8}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/pmon-serve-cost.XXXXXX")
. "$(dirname "$0")/serve-lib.sh"
cleanup() {
	[ -n "${KEEP:-}" ] && mkdir -p "$KEEP" && { cp "$TMP"/strace "$TMP"/cg*.out "$KEEP"/ 2>/dev/null || true; }
	[ -f "$TMP/pid" ] && kill "$(cat "$TMP/pid")" 2>/dev/null && sleep 1
	bench_cgroups_remove
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
bench_cgroups pmon-cost

# run WRAPPER...: pmon serve under WRAPPER for SECS seconds, then SIGTERM
# (a wrapper passes it on); READINGS: the background readings it made
# (pmon_collections_total, scraped just before the stop).
run() {
	"$@" "$PMON" serve --listen 127.0.0.1:0 -a --cgroup-root "$BASE" -e "$EV" \
		--interval 1000 2>"$TMP/serve.err" &
	echo $! >"$TMP/pid"
	if [ -n "${SCRAPES:-}" ]; then # one /metrics a second, as Prometheus would
		port=
		while [ -z "$port" ]; do # valgrind takes a while to start it
			sleep 1
			port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$TMP/serve.err")
		done
		sleep 2 # a reading or two
		for _ in $(seq "$SCRAPES"); do
			curl -s -o "$TMP/scrape" --max-time 60 "http://127.0.0.1:$port/metrics" || true
			sleep 1
		done
	else
		sleep "$SECS"
	fi
	port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$TMP/serve.err")
	READINGS=$(curl -s "http://127.0.0.1:$port/metrics" | sed -n 's/^pmon_collections_total //p')
	# SIGTERM to pmon itself: strace -f does not pass it on (valgrind
	# runs pmon in its own process: no child there).
	child=$(ps -o pid= --ppid "$(cat "$TMP/pid")" | head -n 1 | tr -d ' ')
	kill -TERM "${child:-$(cat "$TMP/pid")}"
	wait "$(cat "$TMP/pid")" || true
	rm -f "$TMP/pid"
}

# PARTS: which of the three (default all): syscalls, readings, scrapes
PARTS=${PARTS:-syscalls readings scrapes}
case $PARTS in *syscalls*)
echo "== system calls per reading (strace -f, the collector thread) =="
run strace -f -qq -o "$TMP/strace" -e trace=all
# The collector is the thread that reads the counters: most read() calls.
tid=$(grep -E '^[0-9]+ +read\(' "$TMP/strace" | awk '{print $1}' | sort | uniq -c | sort -rn | awk 'NR==1{print $2}')
# Its readings: pmon_collections_total just before the stop.
n=$READINGS
total=$(grep -Ec "^$tid " "$TMP/strace" || true)
echo "collector thread $tid: $n readings, $total calls in all (its start-up included)"
# Steady state: the calls between its first and its last wait for the next
# interval (a ppoll(), or pthread_cond_timedwait()'s futex before), divided
# by the intervals between them; the start-up (opening, the first walk) is
# left out.
grep -E "^$tid " "$TMP/strace" | sed -E 's/^[0-9]+ +(<\.\.\. )?([a-z_0-9]+)[( ].*/\2 &/' >"$TMP/calls"
awk '($1 == "ppoll" || /FUTEX_WAIT_BITSET/) && !/resumed/ { if (!first) first = NR; last = NR; waits++ }
	END { print first + 0, last + 0, waits - 1 }' "$TMP/calls" >"$TMP/window"
read -r first last intervals <"$TMP/window"
if [ "$intervals" -lt 2 ]; then
	echo "  (no steady state seen: $intervals intervals)"
	intervals=1 first=1 last=1
fi
sed -n "${first},${last}p" "$TMP/calls" | grep -v ' <\.\.\. ' | awk '{print $1}' | sort | uniq -c | sort -rn |
	awk -v n="$intervals" '{ printf "  %-18s %8d  %7.1f per reading\n", $2, $1, $1 / n; t += $1 }
		END { printf "  %-18s %8d  %7.1f per reading (steady state, %d intervals)\n", "all", t, t / n, n }'

;; esac
case $PARTS in *readings*)
echo "== instructions per reading (callgrind, collect() inclusive) =="
run valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.out" --toggle-collect=collect
callgrind_annotate --inclusive=yes "$TMP/cg.out" 2>/dev/null >"$TMP/cg.txt"
ir=$(sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' "$TMP/cg.txt" | tr -d ,)
echo "$READINGS readings under valgrind: $ir instructions in collect(), $((ir / READINGS)) per reading"
echo "the most inclusive functions (instructions over all readings):"
grep -E '^ *[0-9,]+ .*\(' "$TMP/cg.txt" | head -16 | sed -E 's/ \([^)]*\)$//' | cut -c1-110

;; esac
case $PARTS in *scrapes*)
echo "== instructions per scrape (callgrind, serve_collector__render() inclusive) =="
SCRAPES=5 run valgrind --tool=callgrind --callgrind-out-file="$TMP/cg2.out" \
	--toggle-collect=serve_collector__render
callgrind_annotate --inclusive=yes "$TMP/cg2.out" 2>/dev/null >"$TMP/cg2.txt"
ir=$(sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' "$TMP/cg2.txt" | tr -d ,)
# 5 scrapes, and the one run() makes before the stop
echo "6 scrapes of $(wc -c <"$TMP/scrape") bytes: $ir instructions, $((ir / 6)) per scrape"
grep -E '^ *[0-9,]+ .*\(' "$TMP/cg2.txt" | grep -Ev 'clone|start_thread|microhttpd|handle' | head -14 | sed -E 's/ \([^)]*\)$//' | cut -c1-110
;; esac
