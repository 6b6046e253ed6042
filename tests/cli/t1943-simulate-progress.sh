#!/bin/sh
# pmon simulate's long runs: the slowdown said at start, a progress line
# every few seconds (--progress S; by default every 5 s when standard error
# is a terminal, overwritten in place), and Ctrl-C: typed at a real
# terminal (a pty: the line discipline sends SIGINT to the foreground
# process group, pmon and valgrind alike) it stops the run with what was
# simulated written as a recording, exit 130. The same from a signal to
# the process group (kill -INT -PGID), and `pmon stat --simulate`'s table
# after Ctrl-C.
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"
W=$PMON_WORKLOADS/wl-simloop
sim_setup

# ---- --progress 1, interrupted through the process group --------------------
setsid "$PMON" simulate $GEOM --progress 1 -o "$TMP/g.data" -- "$W" forever "$TMP/started" >/dev/null 2>"$TMP/err" &
pid=$!
i=0
while [ $i -lt 600 ] && ! { [ -e "$TMP/started" ] && grep -q "under the engine" "$TMP/err"; }; do
	sleep 0.1
	i=$((i + 1))
done
check "a progress line on stderr (not a terminal: one a line)" grep -Eq "^pmon simulate: [0-9]+ s under the engine \([0-9.]+ s of CPU, [0-9]+ MiB\); Ctrl-C stops and keeps what was simulated$" "$TMP/err"
kill -INT -$pid
wait $pid
check "group SIGINT: exit 130" [ $? -eq 130 ]
check "group SIGINT: the recording written" grep -q "1 process simulated, written to $TMP/g.data" "$TMP/err"
run_pmon 0 report -i "$TMP/g.data" --format json
check "group SIGINT: the recording holds the spinning" grep -q '"symbol": "spin"' "$TMP/out"

# ---- Ctrl-C at a terminal ------------------------------------------------------
# ctrl_c OUT ARGS...: pmon ARGS in a pty; once a progress line is seen,
# ^C is typed. OUT gets what the terminal showed; prints the exit status.
ctrl_c() {
	python3 - "$TMP/started2" "$@" <<'PY'
import os, sys, time, signal
started, out, args = sys.argv[1], sys.argv[2], sys.argv[3:]
pid, fd = os.forkpty()
if pid == 0:
    os.execv(args[0], args)
buf = b""
deadline = time.time() + 120
typed = False
while time.time() < deadline:
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    buf += chunk
    if not typed and b"under the engine" in buf and os.path.exists(started):
        os.write(fd, b"\x03")  # ^C: the terminal's VINTR
        typed = True
_, status = os.waitpid(pid, 0)
open(out, "wb").write(buf)
print(os.waitstatus_to_exitcode(status) if typed else -1)
PY
}
rc=$(ctrl_c "$TMP/tty.out" "$PMON" simulate $GEOM -o "$TMP/t.data" -- "$W" forever "$TMP/started2")
check "Ctrl-C at a terminal: exit 130 (got $rc)" [ "$rc" = 130 ]
check "a terminal gets progress without --progress (every 5 s, in place)" grep -q "s under the engine" "$TMP/tty.out"
check "Ctrl-C: the recording written" grep -q "written to $TMP/t.data" "$TMP/tty.out"
check "Ctrl-C: says it kept what was simulated" grep -q "interrupted by signal 2: kept what was simulated" "$TMP/tty.out"
run_pmon 0 report -i "$TMP/t.data" --format json
check "Ctrl-C: the recording holds the spinning" grep -q '"symbol": "spin"' "$TMP/out"

rm -f "$TMP/started2"
rc=$(ctrl_c "$TMP/tty2.out" "$PMON" stat --simulate -e instructions -- "$W" forever "$TMP/started2")
check "stat --simulate, Ctrl-C: exit 130 (got $rc)" [ "$rc" = 130 ]
check "stat --simulate, Ctrl-C: the table of what was simulated" grep -Eq "^ +[0-9]+       sim/instructions/" "$TMP/tty2.out"

run_pmon 0 simulate $GEOM --progress 0 -o "$TMP/n.data" -- "$W" spin 10
check "--progress 0: no progress line" [ "$(grep -c 'under the engine' "$TMP/err")" -eq 0 ]
run_pmon 2 simulate --progress x -- "$W" spin 10
one_line_error "--progress"
finish
