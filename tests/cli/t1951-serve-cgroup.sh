#!/bin/sh
# pmon serve per cgroup (perf's cgroup mode): a busy and an idle cgroup made
# by the test under a perf_event hierarchy, cgroups appearing and vanishing
# between scrapes, a per-cgroup profile, and a real Prometheus (started here
# on 127.0.0.1, 1 s scrapes, its own storage) whose PromQL
# rate(pmon_task_clock_total[5s]) for the busy cgroup matches the CPU time
# the workload burned, as the kernel accounts it in /proc/PID/stat.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
[ "$(id -u)" = 0 ] || { echo "skip: making cgroups needs root"; exit 77; }

cg_mount
NAME=pmon-t1951-$$
BASE=$CGMNT/$NAME
BUSY=
PROM=
cleanup() {
	stop_serve
	[ -n "$PROM" ] && kill "$PROM" 2>/dev/null && wait "$PROM" 2>/dev/null
	[ -n "$BUSY" ] && kill "$BUSY" 2>/dev/null && wait "$BUSY" 2>/dev/null
	for d in "$BASE/late" "$BASE/busy" "$BASE/idle" "$BASE"; do
		[ -d "$d" ] && poll 50 rmdir "$d" 2>/dev/null
	done
	[ -n "$OWN_MOUNT" ] && { umount "$TMP/cg" 2>/dev/null || umount -l "$TMP/cg"; }
	rm -rf "$TMP"
}
trap cleanup EXIT
mkdir "$BASE" "$BASE/busy" "$BASE/idle" || { echo "skip: cannot make cgroups under $CGMNT"; exit 77; }

# The workload joins the busy cgroup, then spins in hot() and cold().
sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" 1000000000000' sh "$BASE/busy" \
	"$PMON_WORKLOADS/wl-hotcold" &
BUSY=$!
check "the workload is in the busy cgroup" poll 50 grep -qx "$BUSY" "$BASE/busy/cgroup.procs"

start_serve --cgroup-root "$BASE" -e task-clock,context-switches --interval 200 || { finish; exit; }
LB="/$NAME/busy"
LI="/$NAME/idle"
busy_counts() {
	[ "$(http /metrics)" = 200 ] &&
		grep -Eq "^pmon_task_clock_total\{cpu=\"[0-9]+\",cgroup=\"$LB\",event=\"task-clock\",unit=\"seconds\"\} [0-9.e+-]*[1-9]" "$TMP/body"
}
check "the busy cgroup's task-clock counts up" poll 300 busy_counts
cp "$TMP/body" "$TMP/m1.txt"
ncpu=$(getconf _NPROCESSORS_ONLN)
check "one row per CPU for the busy cgroup" [ "$(grep -c "^pmon_task_clock_total{cpu=\"[0-9]*\",cgroup=\"$LB\"" "$TMP/m1.txt")" -eq "$ncpu" ]
check "the idle cgroup is counted" grep -q "^pmon_task_clock_total{cpu=\"0\",cgroup=\"$LI\"" "$TMP/m1.txt"
check "the idle cgroup's tasks used no CPU" sh -c "! grep '^pmon_task_clock_total{.*cgroup=\"$LI\"' '$TMP/m1.txt' | grep -qv ' 0\$'"
check "two cgroups" grep -qx 'pmon_cgroups 2' "$TMP/m1.txt"
check "no system-wide rows without -a" sh -c "! grep -q 'cgroup=\"\"' '$TMP/m1.txt'"
if command -v promtool >/dev/null 2>&1; then
	check "promtool check metrics with cgroups" sh -c "promtool check metrics <'$TMP/m1.txt' >/dev/null 2>&1"
fi

# Cgroups appear and vanish between scrapes.
mkdir "$BASE/late"
late_there() { [ "$(http /metrics)" = 200 ] && grep -q "cgroup=\"/$NAME/late\"" "$TMP/body" && grep -qx 'pmon_cgroups 3' "$TMP/body"; }
check "a new cgroup is counted" poll 300 late_there
rmdir "$BASE/late"
late_gone() { [ "$(http /metrics)" = 200 ] && ! grep -q "cgroup=\"/$NAME/late\"" "$TMP/body" && grep -qx 'pmon_cgroups 2' "$TMP/body"; }
check "a removed cgroup leaves the output" poll 300 late_gone
check "no counting errors meanwhile" grep -qx 'pmon_collect_errors_total 0' "$TMP/body"

# A profile of the busy cgroup alone names the workload's hot function.
if command -v go >/dev/null 2>&1; then
	code=$(http "/debug/pprof/profile?seconds=2&hz=199&cgroup=$LB")
	check "a per-cgroup profile (HTTP $code)" [ "$code" = 200 ]
	cp "$TMP/body" "$TMP/cg.pb.gz"
	HOME=$TMP GOCACHE=$TMP/gocache go tool pprof -top "$TMP/cg.pb.gz" >"$TMP/pprof.txt" 2>&1
	check "go tool pprof reads it" [ $? -eq 0 ]
	check "it names hot() ($(sed -n 6,8p "$TMP/pprof.txt" | tr -s ' ' | head -c 200))" grep -Eq ' hot$' "$TMP/pprof.txt"
else
	echo "# skip the profile: go is not installed (Debian golang-go)"
fi

# ---- a real Prometheus --------------------------------------------------------------
if ! command -v prometheus >/dev/null 2>&1; then
	echo "# skip Prometheus: not installed (Debian prometheus)"
	stop_serve
	finish
	exit
fi
PPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: pmon
    static_configs:
      - targets: ['127.0.0.1:$PORT']
EOF
prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/prom" \
	--web.listen-address="127.0.0.1:$PPORT" >"$TMP/prometheus.log" 2>&1 &
PROM=$!
# promql QUERY [TIME]: the first value of an instant query, or nothing.
promql() {
	curl -s --max-time 10 "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$1" \
		${2:+--data-urlencode "time=$2"} >"$TMP/q.json" 2>/dev/null &&
		python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["data"]["result"]; print(r[0]["value"][1] if r else "")' "$TMP/q.json" 2>/dev/null
}
Q="sum(rate(pmon_task_clock_total{cgroup=\"$LB\"}[5s]))"
has_rate() { [ -n "$(promql "$Q")" ]; }
check "Prometheus has the busy cgroup's rate" poll 600 has_rate

# The workload's CPU time from the kernel's own accounting, over a window
# that ends where the query is evaluated.
cputime() { awk '{print $14 + $15}' "/proc/$BUSY/stat"; }
hz=$(getconf CLK_TCK)
t0=$(date +%s.%N); c0=$(cputime)
sleep 5
t1=$(date +%s.%N); c1=$(cputime)
# What Prometheus scraped up to t1 is in once a later sample is.
after_t1() { [ "$(promql "timestamp(pmon_scrapes_total{format=\"openmetrics\"})" | cut -d. -f1)" -gt "${t1%.*}" ] 2>/dev/null; }
poll 100 after_t1
rate=$(promql "$Q" "$t1")
burned=$(python3 -c "print(($c1 - $c0) / $hz / ($t1 - $t0))")
ratio=$(python3 -c "print(float('${rate:-0}') / $burned if $burned > 0 else 0)")
check "the workload burned CPU ($burned CPUs)" python3 -c "import sys; sys.exit(not $burned > 0.05)"
check "PromQL rate $rate CPUs vs burned $burned: ratio $ratio in [0.5, 1.5]" \
	python3 -c "import sys; sys.exit(not 0.5 <= $ratio <= 1.5)"
curl -s "http://127.0.0.1:$PPORT/api/v1/targets" >"$TMP/targets.json"
json_has "$TMP/targets.json" 'd["data"]["activeTargets"][0]["health"] == "up" or 1/0' \
	'd["data"]["activeTargets"][0]["lastError"] == "" or 1/0'
# Prometheus asks for OpenMetrics first: the real parser read that format.
check "Prometheus scraped OpenMetrics" python3 -c "import sys; sys.exit(not float('$(promql 'max(pmon_scrapes_total{format="openmetrics"})')' or 0) > 0)"
kill "$PROM" && wait "$PROM"
PROM=
stop_serve
check "SIGTERM: exit 0 ($STATUS)" [ "$STATUS" -eq 0 ]
check "no descriptor left open" sh -c "! grep -q 'still open' '$TMP/serve.err'"
finish
