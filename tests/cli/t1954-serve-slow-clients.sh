#!/bin/sh
# pmon serve against slow clients (issue #31): clients that trickle a
# request head one byte at a time (slowloris) from one address hold at most
# --max-client-connections, a scrape from another address is answered
# meanwhile, and the trickling connections are shut once their head is
# late (libmicrohttpd's own timeout only closes silent ones); a client that
# never reads its answers is closed after the timeout; the options' errors.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
trap 'stop_serve; rm -rf "$TMP"' EXIT

run_pmon 2 serve --timeout 0
one_line_error "--timeout"
run_pmon 2 serve --max-client-connections 0
one_line_error "--max-client-connections"

start_serve -e task-clock --interval 200 --timeout 2 || { finish; exit; }

# 140 connections from 127.0.0.1 (over the default 128 at once), each
# sending one more byte of a header every 0.5 s: never silent for the 2 s
# timeout. While they trickle, a scrape from 127.0.0.2 (another address on
# lo). Then poll (60 s at most) until every one has been closed.
cat >"$TMP/slow.py" <<'PY'
import socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
conns = []
for _ in range(n):
    c = socket.create_connection(("127.0.0.1", port))
    c.setblocking(False)
    c.send(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    conns.append(c)
alive = set(range(n))
sent = 0
def step():
    global sent
    for i in list(alive):
        try:
            if conns[i].recv(4096) == b"":
                alive.discard(i)
                continue
        except BlockingIOError:
            pass
        except OSError:
            alive.discard(i)
            continue
        try:
            sent += conns[i].send(b"a")
        except BlockingIOError:
            pass
        except OSError:
            alive.discard(i)
for _ in range(3):
    step()
    time.sleep(0.5)
held = len(alive)
s = socket.socket()
s.settimeout(20)
s.bind(("127.0.0.2", 0))
body = b""
try:
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
    while True:
        d = s.recv(65536)
        if not d:
            break
        body += d
except OSError as e:
    body = str(e).encode()
status = body.split(b"\r\n", 1)[0].decode(errors="replace")
held_after = len(alive)
for _ in range(120):
    if not alive:
        break
    step()
    time.sleep(0.5)
print("held=%d held_after_scrape=%d scrape=%s metrics=%d still_open=%d" % (
    held, held_after, status.replace(" ", "_"), body.count(b"\npmon_task_clock_total{"), len(alive)))
PY
python3 "$TMP/slow.py" "$PORT" 140 >"$TMP/slow.out" 2>&1
cat "$TMP/slow.out"
val() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" "$TMP/slow.out"; }
check "one address holds 64 connections at most (--max-client-connections)" \
	sh -c '[ "$1" -ge 1 ] && [ "$1" -le 64 ]' _ "$(val held)"
check "the trickling connections were still open during the scrape" [ "$(val held_after_scrape)" -ge 1 ]
check "a scrape from another address is answered 200 meanwhile" \
	sh -c 'case $1 in HTTP/1.[01]_200_OK) ;; *) exit 1 ;; esac' _ "$(val scrape)"
check "the scrape has the counters" [ "$(val metrics)" -ge 1 ]
check "every trickling connection is closed once its head is late" [ "$(val still_open)" = 0 ]

# A client that sends requests and never reads: its socket fills, and the
# connection, silent then, is closed after the timeout (the client's TCP
# state becomes CLOSE_WAIT or CLOSE; polled, 60 s at most).
cat >"$TMP/noread.py" <<'PY'
import socket, struct, sys, time
port = int(sys.argv[1])
c = socket.socket()
c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
c.connect(("127.0.0.1", port))
c.setblocking(False)
req = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
queued = 0
for _ in range(4000):
    try:
        queued += c.send(req)
    except OSError:
        break
state = 0
for _ in range(300):
    state = c.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)[0]
    if state in (7, 8):  # TCP_CLOSE, TCP_CLOSE_WAIT
        break
    time.sleep(0.2)
print("queued=%d state=%d" % (queued, state))
PY
python3 "$TMP/noread.py" "$PORT" >"$TMP/noread.out" 2>&1
cat "$TMP/noread.out"
check "a client that never reads is closed by the server" \
	grep -Eq 'state=(7|8)$' "$TMP/noread.out"
check "a scrape still succeeds after" [ "$(http /metrics)" = 200 ]

stop_serve
check "pmon serve exits 0 on SIGTERM" [ "$STATUS" = 0 ]
finish
