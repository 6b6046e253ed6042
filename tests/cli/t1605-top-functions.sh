#!/bin/sh
# pmon top's functions view (issue #27, perf top's): the hottest functions
# of a known workload (wl-hotcold: hot above cold) refreshed each interval,
# in --batch and on the screen driven through tmux, where t and d zoom
# into the selected function's process and DSO, a annotates it, Esc backs
# out and f brings the rates back. The shares are checked against a range,
# not a value: the CPU is shared with other tests.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null 2>&1 || { echo "skip: tmux is not installed"; exit 77; }
S=pmon-t1605-$$
SOCK=$TMP/tmux.sock
tm() { tmux -S "$SOCK" "$@"; }
# Rounds of 3 ms: every interval holds both functions in their proportion.
# A copy under a name of its own: on all CPUs other tests' wl-hotcold run
# too, and zooming into "hot's process" once followed one of theirs, which
# then ended (an empty view, the annotation never came).
cp "$PMON_WORKLOADS/wl-hotcold" "$TMP/t1605hc"
"$TMP/t1605hc" 3000000 hot 1000000000 &
wl=$!
trap 'kill $wl 2>/dev/null; tm kill-server 2>/dev/null; rm -rf "$TMP"' EXIT

# The shares of hot and cold over the intervals of batch lines in FILE:
# hot first in the last interval that has both, each in a sane range,
# both of process $2.
shares_ok() {
	python3 - "$1" "$2" <<'PY'
import sys
fn = [l.split() for l in open(sys.argv[1]) if " fn " in l]
by = {}
for r in fn:
    by.setdefault(r[0], []).append(r)
both = [rows for rows in by.values() if {"hot", "cold"} <= {r[4] for r in rows}]
assert both, fn
names = [r[4] for r in both[-1]]
assert names.index("hot") < names.index("cold"), both[-1]
tot = {"hot": 0.0, "cold": 0.0}
for rows in both:
    for r in rows:
        if r[4] in tot:
            assert r[5] == "t1605hc" and r[-1] == sys.argv[2], r
            tot[r[4]] += float(r[2].rstrip("%")) / len(both)
assert 40 <= tot["hot"] <= 90 and 10 <= tot["cold"] <= 50 and tot["hot"] > tot["cold"], tot
PY
}

run_pmon 0 top --batch -f -I 300 -n 4 -e cpu-clock -p "$wl"
check "--batch -f -p: hot above cold, shares in range, named with the process" shares_ok "$TMP/out" "$wl"
check "--batch -f: the rate line stays" grep -q "^ *[0-9.]* cpu-clock " "$TMP/out"

# poll DESC CMD...: capture the pane until CMD succeeds (30 s at most: a
# loaded machine is slow to start).
poll() {
	desc=$1
	shift
	i=0
	while [ $i -lt 300 ]; do
		tm capture-pane -t "$S" -p >"$TMP/screen"
		if "$@"; then
			ok "$desc"
			return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
	not_ok "$desc"
	sed 's/^/# /' "$TMP/screen"
	return 1
}
# The table's rows as (selected, share, symbol, dso, comm, pid).
rows() {
	python3 - "$TMP/screen" "$@" <<'PY'
import re, sys
rows = []
for l in open(sys.argv[1], encoding="utf-8"):
    m = re.match(r"^([> ]) *([0-9.]+)% +[0-9]+  (\S+) +(\S+) +(.*) (\d+)$", l.rstrip())
    if m:
        rows.append((m.group(1) == ">", float(m.group(2)), m.group(3), m.group(4),
                     m.group(5).strip(), m.group(6)))
exec(sys.argv[2])
PY
}

# All CPUs where this user may sample them, else the process.
target="-p $wl"
if [ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 0 ]; then
	target=-a
fi
tm new-session -d -s "$S" -x 150 -y 40 "env LANG=C.UTF-8 PS1='$ ' sh"
sleep 0.3
tm send-keys -t "$S" "$PMON top -I 300 -e cpu-clock $target" Enter
poll "the rates first" grep -q "EVENT .*RATE/s" "$TMP/screen"
tm send-keys -t "$S" f
poll "f: the functions of cpu-clock ($target)" grep -q "^functions of cpu-clock" "$TMP/screen"
poll "hot above cold, with shares" rows '
n = [r[2] for r in rows if r[3] == "t1605hc"]
assert "hot" in n and "cold" in n and n.index("hot") < n.index("cold")
h = [r for r in rows if r[2] == "hot" and r[3] == "t1605hc"][0]
assert 3 <= h[1] <= 95 and h[5] == sys.argv[3], h' "$wl"
# Select hot (the selection follows its function from one interval to the next).
i=0
while [ $i -lt 40 ] && ! rows 'assert [r for r in rows if r[0] and r[2] == "hot" and r[3] == "t1605hc"]'; do
	tm send-keys -t "$S" Down
	sleep 0.2
	tm capture-pane -t "$S" -p >"$TMP/screen"
	i=$((i + 1))
done
check "up/down select hot" rows 'assert [r for r in rows if r[0] and r[2] == "hot" and r[3] == "t1605hc"]'
tm send-keys -t "$S" t
poll "t zooms into hot's process" grep -q "zoomed into process $wl (t1605hc)" "$TMP/screen"
poll "zoomed: every row is that process's" rows '
assert len(rows) >= 2 and all(r[5] == sys.argv[3] for r in rows), rows' "$wl"
tm send-keys -t "$S" d
poll "d zooms into hot's DSO as well" grep -q "dso t1605hc" "$TMP/screen"
poll "zoomed: every row is in t1605hc" rows '
assert len(rows) >= 2 and all(r[3] == "t1605hc" for r in rows), rows'
tm send-keys -t "$S" a
poll "a annotates hot" grep -q "^annotate hot -- .*t1605hc" "$TMP/screen"
poll "the annotation lists hot's instructions with their shares" python3 -c '
import re, sys
ins = [l for l in open(sys.argv[1]) if re.match(r"^[> ] *[0-9.]+%  +[0-9a-f]+:  [a-z]", l)]
assert len(ins) >= 3 and any(float(l[1:].split("%")[0]) > 0 for l in ins), ins' "$TMP/screen"
tm send-keys -t "$S" Escape
poll "Esc leaves the annotation" grep -q "SHARE  SAMPLES  SYMBOL" "$TMP/screen"
tm send-keys -t "$S" Escape
poll "Esc again zooms out" sh -c "! grep -q 'zoomed into' '$TMP/screen'"
tm send-keys -t "$S" f
poll "f: the rates again" grep -Eq "^>cpu-clock +[0-9]" "$TMP/screen"
tm send-keys -t "$S" q
sleep 0.5
tm send-keys -t "$S" 'echo "DONE-$?"' Enter
poll "q exits 0" grep -q "^DONE-0" "$TMP/screen"

run_pmon 2 top -a -p "$wl" -n 1
one_line_error "give one target"
finish
