#!/bin/sh
# pmon serve (issue #19) on loopback: the pages, /metrics in both formats
# checked by promtool, the HTTP errors (unknown paths, methods, malformed
# requests, huge headers, a client that never finishes), the option errors,
# and a clean stop on SIGTERM with every counter closed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
trap 'stop_serve; rm -rf "$TMP"' EXIT

# The agent is a module of its own: pmon itself never links libmicrohttpd.
check "pmon does not link libmicrohttpd" sh -c "! readelf -d '$PMON' | grep -q microhttpd"

# ---- option errors: one line, exit 2 ---------------------------------------
run_pmon 2 serve --listen nonsense
one_line_error "--listen 'nonsense'"
run_pmon 2 serve --listen 127.0.0.1:70000
one_line_error "expected ADDRESS:PORT"
run_pmon 2 serve --interval 5
one_line_error "100 ms at least"
run_pmon 2 serve --cgroup "$TMP/no-such-cgroup"
one_line_error "does not exist"
run_pmon 2 serve -e no-such-event
run_pmon 2 serve --tls-cert "$TMP/x.pem"
one_line_error "go together"
printf 'u:p\n' >"$TMP/auth" && chmod 644 "$TMP/auth"
run_pmon 2 serve --auth-file "$TMP/auth"
one_line_error "chmod 600"
# Another user's auth file is refused, as ssh refuses another user's
# authorized_keys: that user could rewrite it (issue #31).
if [ "$(id -u)" = 0 ]; then
	chmod 600 "$TMP/auth" && chown 65534 "$TMP/auth"
	run_pmon 2 serve --auth-file "$TMP/auth"
	one_line_error "belongs to another user (uid 65534): it must be this user's (uid 0) or root's"
	chown 0 "$TMP/auth"
fi
run_pmon 0 serve --help
check "help names the endpoints" grep -q "/debug/pprof/profile" "$TMP/out"

# ---- the agent ---------------------------------------------------------------
start_serve -e task-clock,context-switches,page-faults --interval 200 || { finish; exit; }
ok "pmon serve listens on 127.0.0.1:$PORT"

check "/healthz answers 200" [ "$(http /healthz)" = 200 ]
check "/healthz says ok" grep -qx ok "$TMP/body"
check "/ answers 200" [ "$(http /)" = 200 ]
check "/ names the metrics" grep -q "pmon_task_clock_total" "$TMP/body"
check "an unknown path is 404" [ "$(http /nope)" = 404 ]
check "a path under /metrics is 404" [ "$(http /metrics/x)" = 404 ]
check "POST is 405" [ "$(http /metrics -X POST -d x=1)" = 405 ]
check "405 says what is allowed" grep -qi "^Allow: GET, HEAD" "$TMP/headers"

# Counting runs in the background: poll until a reading has been added.
has_reading() {
	[ "$(http /metrics)" = 200 ] &&
		grep -Eq '^pmon_task_clock_total\{cpu="0",cgroup="",event="task-clock",unit="seconds"\} [0-9.e+-]*[1-9]' "$TMP/body"
}
check "task-clock per CPU counts up" poll 300 has_reading
cp "$TMP/body" "$TMP/text.txt"
check "0.0.4 text without an Accept header" grep -qi '^Content-Type: text/plain; version=0.0.4' "$TMP/headers"
check "one row per CPU" [ "$(grep -c '^pmon_task_clock_total{' "$TMP/text.txt")" -eq "$(getconf _NPROCESSORS_ONLN)" ]
check "multiplexing exposed: enabled" grep -q '^pmon_task_clock_enabled_seconds_total{cpu="0"' "$TMP/text.txt"
check "multiplexing exposed: running" grep -q '^pmon_task_clock_running_seconds_total{cpu="0"' "$TMP/text.txt"
check "the counter's TYPE" grep -qx '# TYPE pmon_task_clock_total counter' "$TMP/text.txt"
check "pmon_pmu_available" grep -Eq '^pmon_pmu_available [01]$' "$TMP/text.txt"
check "pmon_build_info" grep -q '^pmon_build_info{version="' "$TMP/text.txt"
check "scrape duration" grep -q '^pmon_scrape_duration_seconds ' "$TMP/text.txt"
check "collect errors" grep -qx 'pmon_collect_errors_total 0' "$TMP/text.txt"
check "event supported" grep -qx 'pmon_event_supported{event="page-faults"} 1' "$TMP/text.txt"
# Software events given without braces are counted as one group (one read()
# per CPU per interval): the group's one reading gives every member the same
# enabled time; counted apart, each would be read at another instant.
en() { sed -n "s/^pmon_$1_enabled_seconds_total{cpu=\"0\",.*} //p" "$TMP/text.txt"; }
check "software events read as one group: enabled times equal ($(en task_clock) $(en context_switches) $(en page_faults))" \
	sh -c "[ -n '$(en task_clock)' ] && [ '$(en task_clock)' = '$(en context_switches)' ] && [ '$(en task_clock)' = '$(en page_faults)' ]"
check "no EOF marker in 0.0.4" sh -c "! grep -q '^# EOF' '$TMP/text.txt'"

# Prometheus asks like this (its scrape Accept header).
ACCEPT='application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1'
check "OpenMetrics by Accept" [ "$(http /metrics -H "Accept: $ACCEPT")" = 200 ]
cp "$TMP/body" "$TMP/om.txt"
check "OpenMetrics content type" grep -qi '^Content-Type: application/openmetrics-text; version=1.0.0' "$TMP/headers"
check "OpenMetrics ends with # EOF" [ "$(tail -n 1 "$TMP/om.txt")" = "# EOF" ]
check "OpenMetrics names the family without _total" grep -qx '# TYPE pmon_task_clock counter' "$TMP/om.txt"
check "text/plain preferred gets 0.0.4" sh -c "[ \"\$(curl -s -o /dev/null -w '%{content_type}' -H 'Accept: application/openmetrics-text;q=0.2,text/plain' http://127.0.0.1:$PORT/metrics)\" = 'text/plain; version=0.0.4; charset=utf-8' ]"

# promtool lints the 0.0.4 text format; OpenMetrics goes through the
# reference parser of the Prometheus project's Python client (its strict
# OpenMetrics 1.0 parser), and t1951 through a real Prometheus scrape, which
# asks for OpenMetrics first. (promtool 2.42's check metrics reads the text
# format only: an OpenMetrics counter family is named without _total there.)
if command -v promtool >/dev/null 2>&1; then
	promtool check metrics <"$TMP/text.txt" >"$TMP/promtool.out" 2>&1
	check "promtool check metrics: 0.0.4 text ($(head -c 200 "$TMP/promtool.out"))" [ $? -eq 0 ]
else
	echo "# skip promtool check: promtool is not installed (Debian prometheus)"
fi
if /usr/bin/python3 -c 'import prometheus_client' 2>/dev/null; then
	/usr/bin/python3 - "$TMP/om.txt" <<'PY' >"$TMP/om-parse.out" 2>&1
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
text = open(sys.argv[1]).read()
fams = {f.name: f for f in text_string_to_metric_families(text)}
assert fams["pmon_task_clock"].type == "counter", fams["pmon_task_clock"].type
assert any(s.name == "pmon_task_clock_total" for s in fams["pmon_task_clock"].samples)
assert fams["pmon_pmu_available"].type == "gauge"
# every sample line of the body became a sample, and every family has a type
lines = [l for l in text.splitlines() if l and not l.startswith("#")]
nsamples = sum(len(f.samples) for f in fams.values())
assert nsamples == len(lines), (nsamples, len(lines))
assert all(f.type in ("counter", "gauge") for f in fams.values()), [f.type for f in fams.values()]
assert all(s.labels["cpu"].isdigit() for s in fams["pmon_task_clock"].samples)
print("parsed", len(fams), "families,", nsamples, "samples")
PY
	check "OpenMetrics parser accepts it ($(head -c 200 "$TMP/om-parse.out"))" [ $? -eq 0 ]
	# ...and it is strict: a body without its # EOF is refused.
	sed '$d' "$TMP/om.txt" >"$TMP/om-cut.txt"
	check "the parser refuses an OpenMetrics body cut short" sh -c "! /usr/bin/python3 -c 'import sys; from prometheus_client.openmetrics.parser import text_string_to_metric_families as p; list(p(open(sys.argv[1]).read()))' '$TMP/om-cut.txt' 2>/dev/null"
else
	echo "# skip OpenMetrics parse: python3-prometheus-client is not installed"
fi

# Clocks are exported in seconds from their nanoseconds, exactly: at most
# nine decimals, never an exponent (printf's %.17g of a scaled double gave
# "0.0012345678901234567" or "1.2e-05").
sed -n 's/^pmon_task_clock_total{[^}]*} //p' "$TMP/text.txt" >"$TMP/clock.txt"
clocks_exact() {
	[ -s "$TMP/clock.txt" ] && ! grep -Evq '^[0-9]+(\.[0-9]{1,9})?$' "$TMP/clock.txt"
}
check "task-clock in seconds, exactly from ns ($(head -n 2 "$TMP/clock.txt" 2>/dev/null | tr '\n' ' '))" clocks_exact

# ---- many scrapes: one polling thread, a body rendered once per reading ----------
# 50 connections at once, 4 keep-alive requests each: every answer is 200 and
# whole (it ends with the scrape counter), and the bodies of one reading are
# the same but for the scrape's own lines. Counts only, no timing.
/usr/bin/python3 - "$PORT" >"$TMP/many.out" 2>&1 <<'PY'
import http.client, re, sys, threading
port = int(sys.argv[1])
bad, bodies, lock = [], [], threading.Lock()
def scraper():
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    for _ in range(4):
        c.request("GET", "/metrics")
        r = c.getresponse()
        body = r.read().decode()
        with lock:
            if r.status != 200 or not re.search(r'pmon_scrapes_total\{format="openmetrics"\} \d+\n$', body):
                bad.append((r.status, body[-100:]))
            bodies.append(body)
    c.close()
ts = [threading.Thread(target=scraper) for _ in range(50)]
for t in ts: t.start()
for t in ts: t.join()
def reading(b):  # the part a reading decides, and its number
    head = b[:b.index("pmon_profile_in_progress ")]
    return re.search(r"^pmon_collections_total (\d+)$", head, re.M).group(1), head
by = {}
for b in bodies:
    n, head = reading(b)
    by.setdefault(n, set()).add(head)
counts = sorted(int(re.search(r'pmon_scrapes_total\{format="text"\} (\d+)', b).group(1)) for b in bodies)
print(len(bodies), "answers,", len(bad), "bad;", len(by), "readings,",
      sum(len(v) for v in by.values()), "distinct bodies; scrape counters",
      counts[0], "to", counts[-1])
assert not bad, bad[:3]
assert len(bodies) == 200
assert all(len(v) == 1 for v in by.values()), "one reading, several bodies"
assert counts == list(range(counts[0], counts[0] + 200)), "each scrape counted once"
PY
check "200 scrapes on 50 connections at once ($(cat "$TMP/many.out" | tail -n 3 | tr '\n' ' '))" [ $? -eq 0 ]
check "still serving after them" [ "$(http /healthz)" = 200 ]

# ---- profiles: parameters checked before anything opens ---------------------
check "seconds=0 is 400" [ "$(http '/debug/pprof/profile?seconds=0')" = 400 ]
check "seconds beyond the bound is 400" [ "$(http '/debug/pprof/profile?seconds=100000')" = 400 ]
check "hz=abc is 400" [ "$(http '/debug/pprof/profile?seconds=1&hz=abc')" = 400 ]
check "an uncounted cgroup is 404" [ "$(http '/debug/pprof/profile?seconds=1&cgroup=/nope')" = 404 ]

# ---- what clients do wrong ----------------------------------------------------
# Raw requests: the status line of the answer, or "closed"/"timeout".
raw() {
	python3 - "$PORT" "$1" "${2:-10}" <<'PY'
import socket, sys, time
port, what, wait = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
s = socket.create_connection(("127.0.0.1", port), timeout=wait)
if what == "garbage":
    s.sendall(b"\x16\x03\x01garbage that is not HTTP\r\n\r\n")
elif what == "badversion":
    s.sendall(b"GET /metrics HTTP/9.9\r\n\r\n")
elif what == "hugeheader":
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 200000 + b"\r\n\r\n")
elif what == "manyheaders":
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-H%d: v\r\n" % i for i in range(5000)) + b"\r\n")
elif what == "slow":
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")  # never ends its headers
elif what == "badpath":
    s.sendall(b"GET /..%2f..%2fetc%2fpasswd HTTP/1.1\r\nHost: x\r\n\r\n")
elif what == "nulpath":
    s.sendall(b"GET /metrics%00%ff/../x HTTP/1.1\r\nHost: x\r\n\r\n")
try:
    data = s.recv(200)
except socket.timeout:
    print("timeout"); sys.exit(0)
except ConnectionResetError:
    print("closed"); sys.exit(0)
print(data.split(b"\r\n")[0].decode("latin1") if data else "closed")
PY
}
status4xx_or_closed() { case $1 in "HTTP/1."[01]" 4"*|closed) return 0 ;; esac; return 1; }
r=$(raw garbage); check "garbage gets 4xx or a close ($r)" status4xx_or_closed "$r"
r=$(raw badversion); check "an unknown HTTP version gets 4xx/505 or a close ($r)" sh -c "case '$r' in 'HTTP/1.'[01]' 4'*|'HTTP/1.'[01]' 505'*|closed) exit 0;; esac; exit 1"
r=$(raw hugeheader); check "a 200 kB header gets 4xx or a close ($r)" status4xx_or_closed "$r"
r=$(raw manyheaders); check "5000 headers get 4xx or a close ($r)" status4xx_or_closed "$r"
r=$(raw badpath); check "an escaped path out of the tree gets 404 ($r)" sh -c "case '$r' in 'HTTP/1.1 404'*|'HTTP/1.1 400'*) exit 0;; esac; exit 1"
# %00 ends the path libmicrohttpd hands over: any answer, no crash.
r=$(raw nulpath); check "a NUL in the path gets an answer ($r)" sh -c "case '$r' in 'HTTP/1.1 '*) exit 0;; esac; exit 1"
# A client that never finishes its headers is dropped by the server's
# connection timeout (10 s) rather than held: closed, not answered.
r=$(raw slow 60); check "a client that stalls is closed by the server ($r)" [ "$r" = closed ]
check "still serving after all that" [ "$(http /healthz)" = 200 ]
check "pmon serve is still running" kill -0 "$SPID"

# ---- SIGTERM: a clean stop ------------------------------------------------------
nperf=$(ls -l /proc/$SPID/fd 2>/dev/null | grep -c 'perf_event')
check "counters are open while serving ($nperf)" [ "$nperf" -gt 0 ]
stop_serve
check "SIGTERM: exit 0 (got $STATUS; $(tail -n 2 "$TMP/serve.err"))" [ "$STATUS" -eq 0 ]
check "it says it stopped" grep -q "pmon serve: stopping" "$TMP/serve.err"
check "no descriptor left open" sh -c "! grep -q 'still open' '$TMP/serve.err'"
check "nothing else on stderr" [ "$(grep -vc '^pmon serve: ' "$TMP/serve.err")" -eq 0 ]

# ---- -e again adds events, as record's and stat's (it kept only the last list) ----
start_serve -e task-clock -e page-faults,context-switches --interval 200 || { finish; exit; }
check "-e twice: 3 events ($(head -n 1 "$TMP/serve.err"))" grep -q "(3 events" "$TMP/serve.err"
both() {
	[ "$(http /metrics)" = 200 ] &&
		grep -qx 'pmon_event_supported{event="task-clock"} 1' "$TMP/body" &&
		grep -qx 'pmon_event_supported{event="page-faults"} 1' "$TMP/body" &&
		grep -qx 'pmon_event_supported{event="context-switches"} 1' "$TMP/body"
}
check "-e twice: /metrics has the events of both" poll 100 both
stop_serve

# ---- basic authentication --------------------------------------------------------
printf '# users\nalice:s3cret\n' >"$TMP/auth" && chmod 600 "$TMP/auth"
start_serve -e task-clock --auth-file "$TMP/auth" || { finish; exit; }
check "no credentials: 401" [ "$(http /metrics)" = 401 ]
check "401 asks for basic auth" grep -qi '^WWW-Authenticate: Basic' "$TMP/headers"
check "a wrong password: 401" [ "$(http /metrics -u alice:wrong)" = 401 ]
check "a prefix of the password: 401" [ "$(http /metrics -u alice:s3cre)" = 401 ]
check "the right one: 200" [ "$(http /metrics -u alice:s3cret)" = 200 ]
stop_serve
check "SIGTERM with auth: exit 0" [ "$STATUS" -eq 0 ]

# ---- --rdt where the machine has no resctrl monitoring: said once, exported as 0 ----
if [ ! -d /sys/fs/resctrl/info/L3_MON ]; then
	start_serve -e task-clock --rdt || { finish; exit; }
	# (said by the collector when it sets up, which may come after the
	# "listening" line start_serve waits for: polled)
	check "--rdt without resctrl: a warning" poll 100 grep -q '^pmon: warning: --rdt: no resctrl monitoring here' "$TMP/serve.err"
	# (the warning comes at set-up, the metric with the first interval's
	# page: polled too, as a scraper would see it soon after; it failed
	# once in a loaded ASan run when read a single time)
	check "pmon_rdt_available 0" poll 100 sh -c "[ \"\$(curl -s http://127.0.0.1:$PORT/metrics | grep '^pmon_rdt_available')\" = 'pmon_rdt_available 0' ]"
	stop_serve
	check "SIGTERM with --rdt: exit 0" [ "$STATUS" -eq 0 ]
fi

# ---- TLS ---------------------------------------------------------------------------
if command -v openssl >/dev/null 2>&1 &&
	openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
		-keyout "$TMP/key.pem" -out "$TMP/cert.pem" >/dev/null 2>&1; then
	chmod 600 "$TMP/key.pem"
	start_serve -e task-clock --tls-cert "$TMP/cert.pem" --tls-key "$TMP/key.pem" || { finish; exit; }
	check "HTTPS /healthz" [ "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$TMP/cert.pem" "https://127.0.0.1:$PORT/healthz")" = 200 ]
	check "plain HTTP to the TLS port is refused" sh -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' --max-time 20 http://127.0.0.1:$PORT/healthz)\" != 200 ]"
	stop_serve
	check "SIGTERM with TLS: exit 0" [ "$STATUS" -eq 0 ]
else
	echo "# skip TLS: openssl cannot make a certificate here"
fi
finish
