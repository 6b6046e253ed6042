#!/bin/sh
# SPDX-License-Identifier: MIT
# Benchmark for pmon serve (issue #19), on loopback only; stops by itself.
#  1. load: 50 concurrent scrapers of /metrics for SECONDS (default 10) s:
#     scrapes done, latency p50/p99/max, pmon's RSS before, after, and after
#     a second round (flat means no growth per scrape).
#  2. cost: pmon serve's own CPU (user + sys from /proc/PID/stat over wall
#     time) at a 1 s interval with 8 events on all CPUs and 20 cgroups,
#     scraped once a second, against prometheus-node-exporter with only its
#     perf collector, scraped the same way, for COST_SECONDS (default 30).
# Needs root (system-wide counting, a perf_event cgroup hierarchy).
# usage: bench/serve-load.sh [PMON] [SECONDS] [COST_SECONDS]
set -eu
PMON=${1:-build/pmon}
SECS=${2:-10}
COST=${3:-30}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/pmon-serve-bench.XXXXXX")
. "$(dirname "$0")/serve-lib.sh"
cleanup() {
	for p in $(cat "$TMP"/*.pid 2>/dev/null); do kill "$p" 2>/dev/null || true; done
	sleep 1
	bench_cgroups_remove
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

# start_pmon ARGS: pmon serve on a free port; sets PID and PORT.
start_pmon() {
	"$PMON" serve --listen 127.0.0.1:0 "$@" 2>"$TMP/serve.err" &
	PID=$!
	echo "$PID" >"$TMP/pmon.pid"
	PORT=
	while [ -z "$PORT" ]; do
		kill -0 "$PID" || { cat "$TMP/serve.err"; exit 1; }
		sleep 0.1
		PORT=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$TMP/serve.err")
	done
}
stop_pmon() { kill -TERM "$PID"; wait "$PID" || true; rm -f "$TMP/pmon.pid"; }

echo "== load: 50 scrapers for $SECS s =="
start_pmon
sleep 1.5 # a first reading
python3 - "$PORT" "$PID" "$SECS" <<'PY'
import http.client, sys, threading, time
port, pid, secs = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
def rss():
    for l in open(f"/proc/{pid}/status"):
        if l.startswith("VmRSS:"):
            return int(l.split()[1])
def round_(n=50):
    lat, errors, lock = [], [0], threading.Lock()
    end = time.monotonic() + secs
    def scraper():
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        mine = []
        while time.monotonic() < end:
            t0 = time.monotonic()
            try:
                c.request("GET", "/metrics")
                r = c.getresponse()
                r.read()
                if r.status != 200:
                    errors[0] += 1
            except Exception:
                errors[0] += 1
                c.close()
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                continue
            mine.append(time.monotonic() - t0)
        with lock:
            lat.extend(mine)
    ts = [threading.Thread(target=scraper) for _ in range(n)]
    for t in ts: t.start()
    for t in ts: t.join()
    lat.sort()
    q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] * 1000
    return len(lat), errors[0], q(0.5), q(0.99), lat[-1] * 1000
r0 = rss()
for k in (1, 2):
    n, err, p50, p99, mx = round_()
    print(f"round {k}: {n} scrapes ({n / secs:.0f}/s), {err} errors, latency p50 {p50:.2f} ms, "
          f"p99 {p99:.2f} ms, max {mx:.1f} ms; RSS {r0} kB before, {rss()} kB after")
PY
stop_pmon

echo "== cost: 8 events, all CPUs, 20 cgroups, 1 s interval, $COST s =="
bench_cgroups pmon-bench

# cpu_of PID PORT: CPU% of PID over COST s while /metrics is scraped each second.
cpu_of() {
	python3 - "$1" "$2" "$COST" "$3" <<'PY'
import os, sys, time, urllib.request
pid, port, secs, path = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
hz = os.sysconf("SC_CLK_TCK")
def cpu():
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / hz
time.sleep(2)  # past start-up
c0, t0 = cpu(), time.monotonic()
size = 0
while time.monotonic() - t0 < secs:
    size = len(urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10).read())
    time.sleep(max(0, 1 - (time.monotonic() - t0) % 1))
c1, t1 = cpu(), time.monotonic()
print(f"{100 * (c1 - c0) / (t1 - t0):.3f}% of a core ({size} bytes per scrape)")
PY
}
start_pmon -a --cgroup-root "$BASE" -e "$EV" --interval 1000
printf 'pmon serve:                     '
cpu_of "$PID" "$PORT" /metrics
stop_pmon

NE=$(command -v prometheus-node-exporter || command -v node_exporter || true)
if [ -n "$NE" ]; then
	NPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"$NE" --web.listen-address="127.0.0.1:$NPORT" --collector.disable-defaults \
		--collector.perf >"$TMP/ne.log" 2>&1 &
	NPID=$!
	echo "$NPID" >"$TMP/ne.pid"
	sleep 1
	if kill -0 "$NPID" 2>/dev/null; then
		printf 'node-exporter --collector.perf: '
		cpu_of "$NPID" "$NPORT" /metrics
		curl -s "http://127.0.0.1:$NPORT/metrics" >"$TMP/ne.metrics" || true
		echo "node-exporter perf series: $(grep -c '^node_perf_' "$TMP/ne.metrics" || true);" \
			"scrape errors: $(grep '^node_scrape_collector_success{collector="perf"}' "$TMP/ne.metrics" || echo none)"
		kill "$NPID"
		wait "$NPID" 2>/dev/null || true
	fi
	echo "node-exporter log (first lines):"
	head -n 5 "$TMP/ne.log" | cut -c1-300
else
	echo "prometheus-node-exporter is not installed: no peer"
fi
