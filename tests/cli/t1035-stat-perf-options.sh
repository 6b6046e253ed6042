#!/bin/sh
# pmon stat's perf options (issue 29): -A/--no-aggr and --per-core/-die/
# -socket/-node (labels and CPU counts from sysfs, as perf prints them), -D
# (counting starts after the delay), --summary and --interval-clear with -I,
# -B/--no-big-num (the locale's thousands grouping), -d/-dd/-ddd (perf's
# detailed cache events, named not supported where the PMU lacks them),
# --metric-only (the derived metrics alone), --filter (a tracepoint's
# kernel filter), -G (per-event cgroups).
# Each beside perf stat on the same workload where perf runs; a perf that
# fails here skips its half with perf's own message. Counts are compared
# as states and sums within one run, never durations.
. "$(dirname "$0")/lib.sh"

have_perf=false
if command -v perf >/dev/null 2>&1 && perf stat -e task-clock true >/dev/null 2>&1; then
	have_perf=true
fi
# perf_skip DESC: perf's own failure, not pmon's.
perf_skip() { ok "# SKIP $1 (perf's own failure: $(head -c 200 "$TMP/perf.err" | tr '\n' ' '))"; }

# col FILE N: the Nth CSV field of each row, one per line.
col() { awk -F, -v n="$2" '{ print $n }' "$1"; }

# ---- bad input ---------------------------------------------------------------
run_pmon 2 stat -A -e task-clock -- true
one_line_error "needs -a or -C"
run_pmon 2 stat --per-socket -e task-clock -- true
one_line_error "needs -a or -C"
run_pmon 2 stat -a -A --per-cpu -e task-clock -- true
one_line_error "exclude --per-cpu"
run_pmon 2 stat -D -1 -e task-clock -- true
one_line_error "not yet"
run_pmon 2 stat -D soon -e task-clock -- true
one_line_error "milliseconds"
run_pmon 2 stat --summary -e task-clock -- true
one_line_error "--summary goes with -I"
run_pmon 2 stat --interval-clear -e task-clock -- true
one_line_error "--interval-clear goes with -I"
run_pmon 2 stat -B -x, -e task-clock -- true
one_line_error "-B groups"
run_pmon 2 stat -a -I 100 --per-socket --plot "$TMP/p.svg" -e task-clock -- true
one_line_error "not yet with --per-core"

# ---- -A and --per-*: perf's labels, from sysfs -------------------------------
if "$PMON" stat -a -e task-clock -- true 2>/dev/null; then
	cpus=$(python3 -c 'import sys
out = []
for part in open("/sys/devices/system/cpu/online").read().strip().split(","):
    a, _, b = part.partition("-")
    out += range(int(a), int(b or a) + 1)
print(" ".join(map(str, out)))')
	topo() { cat "/sys/devices/system/cpu/cpu$1/topology/$2" 2>/dev/null || echo 0; }
	node() {
		for d in /sys/devices/system/node/node[0-9]*; do
			[ -d "$d" ] || continue
			python3 -c 'import sys
c = int(sys.argv[1])
for part in open(sys.argv[2]).read().strip().split(","):
    a, _, b = part.partition("-")
    if part and int(a) <= c <= int(b or a): sys.exit(0)
sys.exit(1)' "$1" "$d/cpulist" && { echo "${d##*node}"; return; }
		done
		echo 0
	}
	# The labels and CPU counts each mode must print, in perf's order.
	: >"$TMP/want.core"; : >"$TMP/want.die"; : >"$TMP/want.socket"; : >"$TMP/want.node"
	for c in $cpus; do
		s=$(topo $c physical_package_id); d=$(topo $c die_id); k=$(topo $c core_id)
		echo "$s $d $k S$s-D$d-C$k" >>"$TMP/want.core"
		echo "$s $d 0 S$s-D$d" >>"$TMP/want.die"
		echo "$s 0 0 S$s" >>"$TMP/want.socket"
		echo "$(node $c) 0 0 N$(node $c)" >>"$TMP/want.node"
	done
	for m in core die socket node; do
		sort -n -k1,1 -k2,2 -k3,3 "$TMP/want.$m" | awk '{ print $4 }' | uniq -c |
			awk '{ print $2 "," $1 }' >"$TMP/want.$m.rows"
		run_pmon 0 stat -a --per-$m -x, -e task-clock -o "$TMP/$m.csv" -- sleep 0.2
		cut -d, -f1,2 "$TMP/$m.csv" >"$TMP/got.$m"
		check "--per-$m: a row per $m, perf's label and CPU count ($(tr '\n' ' ' <"$TMP/want.$m.rows"))" \
			cmp -s "$TMP/got.$m" "$TMP/want.$m.rows"
		# task-clock on a CPU runs all the time (idle included): each
		# group's CPUs utilized is about its CPU count (a sum that left a
		# CPU out reads 1 where it should read 2; the bounds are loose
		# for the time between the run's end and the reading on a busy
		# machine).
		check "--per-$m: CPUs utilized is each group's CPU count" awk -F, '
			{ if ($9 != "CPUs utilized" || $8 < 0.7 * $2 || $8 > $2 + 0.5) bad = 1 }
			END { exit bad || NR == 0 }' "$TMP/$m.csv"
		if $have_perf; then
			if perf stat -a --per-$m -x, -e task-clock -o "$TMP/perf.csv" -- true 2>"$TMP/perf.err"; then
				grep -v '^#' "$TMP/perf.csv" | grep . | cut -d, -f1,2 >"$TMP/perf.$m"
				check "--per-$m: the label and CPU columns perf prints" \
					cmp -s "$TMP/got.$m" "$TMP/perf.$m"
			else
				perf_skip "perf stat --per-$m"
			fi
		fi
	done
	# -A: every event's CPUs, event by event, labelled CPUn, no count column
	run_pmon 0 stat -a -A -x, -e task-clock,context-switches -o "$TMP/A.csv" -- true
	: >"$TMP/want.A"
	for e in task-clock context-switches; do
		for c in $cpus; do echo "CPU$c,$e" >>"$TMP/want.A"; done
	done
	awk -F, '{ print $1 "," $4 }' "$TMP/A.csv" >"$TMP/got.A"
	check "-A: a row per CPU and event, CPU label first, perf's order" \
		cmp -s "$TMP/got.A" "$TMP/want.A"
	if $have_perf; then
		if perf stat -a -A -x, -e task-clock,context-switches -o "$TMP/perf.csv" -- true \
			2>"$TMP/perf.err"; then
			grep -v '^#' "$TMP/perf.csv" | grep . | awk -F, '{ print $1 "," $4 }' >"$TMP/perf.A"
			check "-A: the rows perf prints" cmp -s "$TMP/got.A" "$TMP/perf.A"
		else
			perf_skip "perf stat -A"
		fi
	fi
	# -r: each row the mean of the runs' counts of its CPU (or group),
	# with the relative standard error as the totals have (the variance
	# field after the event name), in the same rows.
	run_pmon 0 stat -a -A -r 3 -x, -e task-clock,context-switches -o "$TMP/Ar.csv" -- true
	awk -F, '{ print $1 "," $4 }' "$TMP/Ar.csv" >"$TMP/got.Ar"
	check "-A -r 3: the same rows as one run" cmp -s "$TMP/got.Ar" "$TMP/want.A"
	check "-A -r 3: each row has its variance field" awk -F, '
		{ if (NF != 9 || $5 !~ /^[0-9]+\.[0-9][0-9]%$/) bad = 1 } END { exit bad || NR == 0 }' "$TMP/Ar.csv"
	run_pmon 0 stat -a -A -r 3 -j -e task-clock -o "$TMP/Ar.json" -- true
	check "-A -r 3 JSON: a row per CPU, each of 3 runs with its variance" python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if "\"event\"" in l]
assert len(rows) == len(sys.argv[2].split()), rows
assert sorted(r["cpu"] for r in rows) == sorted(map(int, sys.argv[2].split())), rows
assert all(r["runs"] == 3 and r["variance"] >= 0 for r in rows), rows' "$TMP/Ar.json" "$cpus"
	run_pmon 0 stat -a --per-core -r 2 -x, -e task-clock -o "$TMP/core-r.csv" -- true
	cut -d, -f1,2 "$TMP/core-r.csv" >"$TMP/got.core-r"
	check "--per-core -r 2: perf's labels and CPU counts, one row per core" \
		cmp -s "$TMP/got.core-r" "$TMP/want.core.rows"
	check "--per-core -r 2: each row has its variance field" awk -F, '
		{ if ($6 !~ /^[0-9]+\.[0-9][0-9]%$/) bad = 1 } END { exit bad || NR == 0 }' "$TMP/core-r.csv"
	run_pmon 0 stat -a --per-socket -j -e task-clock -o "$TMP/s.json" -- true
	head -1 "$TMP/s.json" >"$TMP/s1.json"
	json_has "$TMP/s1.json" 'd["socket"].startswith("S")' 'd["aggregate-number"] >= 1'
else
	ok "# SKIP -A/--per-*: no CPU-wide counting with these rights"
fi

# ---- -D: the command runs, counting starts after the delay -------------------
# X before the delay, Y after: the workload does X, then waits on a FIFO
# that the test opens once "Events enabled" is said, then does Y. A
# machine so loaded that X had not ended by then skips the X check.
X="dd if=/dev/zero of=/dev/null bs=64M count=1"
Y="dd if=/dev/zero of=/dev/null bs=8M count=1"
faults() { awk -F, '$3 == "page-faults" { print $1; exit }' "$1"; }
"$PMON" stat -x, -e page-faults -o "$TMP/x.csv" -- $X 2>/dev/null
"$PMON" stat -x, -e page-faults -o "$TMP/y.csv" -- $Y 2>/dev/null
nx=$(faults "$TMP/x.csv")
ny=$(faults "$TMP/y.csv")
# delayed TOOL NAME: the workload under TOOL stat -D 2500; the count in
# $TMP/NAME.csv, stderr in $TMP/NAME.err, "early" in $TMP/NAME.early when
# X had not ended as counting started. Return: the tool's status.
delayed() {
	tool=$1 name=$2
	rm -f "$TMP/go" "$TMP/xdone"
	mkfifo "$TMP/go"
	: >"$TMP/$name.err"
	: >"$TMP/$name.csv"
	"$tool" stat -D 2500 -x, -e page-faults -o "$TMP/$name.csv" -- sh -c \
		"$X 2>/dev/null; : >'$TMP/xdone'; read x <'$TMP/go'; $Y 2>/dev/null" \
		2>"$TMP/$name.err" &
	pid=$!
	i=0
	while ! grep -q 'Events enabled' "$TMP/$name.err" && kill -0 $pid 2>/dev/null &&
		[ $i -lt 3000 ]; do
		sleep 0.01
		i=$((i + 1))
	done
	[ -e "$TMP/xdone" ] || : >"$TMP/$name.early"
	exec 3<>"$TMP/go" # never blocks, whatever the reader did
	echo go >&3
	wait $pid
	st=$?
	exec 3>&-
	return $st
}
if [ -n "$nx" ] && [ -n "$ny" ] && delayed "$PMON" pmon; then
	ok "pmon stat -D 2500 exits 0"
	c=$(faults "$TMP/pmon.csv")
	check "-D: 'Events disabled' then 'Events enabled', as perf" \
		sh -c 'grep -n "Events" "$1" | tr "\n" " " | grep -q "^1:Events disabled 2:Events enabled"' - "$TMP/pmon.err"
	check "-D: what ran after the delay is counted ($c >= 90% of Y's $ny)" \
		[ "$((c * 10))" -ge "$((ny * 9))" ]
	if [ -e "$TMP/pmon.early" ]; then
		ok "# SKIP -D: X had not ended when counting started (a loaded machine)"
	else
		check "-D: what ran before it is not ($c < Y's $ny + X's $nx / 2)" \
			[ "$c" -lt "$((ny + nx / 2))" ]
	fi
	if $have_perf; then
		if delayed perf perf; then
			p=$(faults "$TMP/perf.csv")
			check "-D beside perf: perf counts Y too ($p >= 90% of $ny)" \
				[ "$((p * 10))" -ge "$((ny * 9))" ]
			[ -e "$TMP/perf.early" ] || [ -e "$TMP/pmon.early" ] ||
				check "-D beside perf: neither counts X (pmon $c, perf $p)" \
					[ "$p" -lt "$((ny + nx / 2))" ]
		else
			perf_skip "perf stat -D"
		fi
	fi
else
	not_ok "pmon stat -D 2500 with the FIFO workload: $(head -c 300 "$TMP/pmon.err")"
fi
# A command that ends within the delay: nothing counted, and pmon does not
# sleep the delay out (perf does: it is not run here).
run_pmon 0 stat -D 600000 -x, -e page-faults -- true
check "-D longer than the command: <not counted>" grep -q '^<not counted>,,page-faults' "$TMP/err"
check "-D longer than the command: counting never started" \
	sh -c '! grep -q "Events enabled" "$1"' - "$TMP/err"

# ---- --summary and --interval-clear ------------------------------------------
sum_ok() { # FILE: the summary row is the intervals' sum
	awk -F, '$4 == "page-faults" && $1 != "summary" && $2 ~ /^[0-9]+$/ { s += $2 }
		$1 == "summary" && $4 == "page-faults" { got = $2; n++ }
		END { exit !(n == 1 && got == s && s > 0) }' "$1"
}
run_pmon 0 stat -I 20 --summary -x, -e page-faults -o "$TMP/sum.csv" -- $X
check "--summary -x,: one 'summary' row, the sum of the intervals" sum_ok "$TMP/sum.csv"
if $have_perf; then
	if perf stat -I 20 --summary -x, -e page-faults -o "$TMP/perf.csv" -- $X 2>"$TMP/perf.err"; then
		sed 's/^ *//' "$TMP/perf.csv" | grep -v '^#' >"$TMP/perf-sum.csv"
		check "--summary beside perf: perf's summary row is the same sum" sum_ok "$TMP/perf-sum.csv"
	else
		perf_skip "perf stat --summary"
	fi
fi
run_pmon 0 stat -I 20 --summary -e page-faults -o "$TMP/sum.txt" -- $X
check "--summary: the table's totals after the intervals, titled as perf" \
	[ "$(grep -c 'Performance counter stats for' "$TMP/sum.txt")" -eq 2 ]
run_pmon 0 stat -I 20 --interval-clear -e page-faults -o "$TMP/clear.txt" -- $X
clears=$(grep -c "$(printf '\033')\[H$(printf '\033')\[2J#" "$TMP/clear.txt")
rows=$(grep -c 'page-faults' "$TMP/clear.txt")
check "--interval-clear: a clear and a header before each of the $rows intervals ($clears)" \
	sh -c '[ "$1" -eq "$2" ] && [ "$2" -ge 1 ]' - "$clears" "$rows"

# ---- -d, -dd, -ddd: perf's detailed cache events ------------------------------
# The events perf adds, in perf's order, each counted or not supported as
# perf finds it on this machine (no PMU: all not supported, with a reason).
states() { awk -F, '$3 != "task-clock" { print $3 "," ($1 ~ /^<not/ ? "not" : "counted") }' "$1"; }
want1="L1-dcache-loads L1-dcache-load-misses LLC-loads LLC-load-misses"
want2="L1-icache-loads L1-icache-load-misses dTLB-loads dTLB-load-misses iTLB-loads iTLB-load-misses"
want3="L1-dcache-prefetches L1-dcache-prefetch-misses"
for d in d dd ddd; do
	# (not $want: run_pmon sets it)
	case $d in d) evs=$want1 ;; dd) evs="$want1 $want2" ;; *) evs="$want1 $want2 $want3" ;; esac
	run_pmon 0 stat -$d -x, -e task-clock -o "$TMP/d.csv" -- true
	check "-$d: perf's events in perf's order" \
		[ "$(awk -F, '$3 != "task-clock" { printf "%s ", $3 }' "$TMP/d.csv")" = "$evs " ]
	"$PMON" stat -$d -e task-clock -o "$TMP/d.txt" -- true 2>/dev/null
	check "-$d: each event not countable here says why" awk '
		/<not supported>/ && NF < 4 { bad = 1 } END { exit bad }' "$TMP/d.txt"
	if $have_perf; then
		if perf stat -$d -x, -e task-clock -o "$TMP/perf.csv" -- true 2>"$TMP/perf.err"; then
			grep -v '^#' "$TMP/perf.csv" | grep . >"$TMP/perf-d.csv"
			states "$TMP/d.csv" >"$TMP/d.states"
			states "$TMP/perf-d.csv" >"$TMP/perf-d.states"
			check "-$d beside perf: the same events, counted or not as perf's" \
				cmp -s "$TMP/d.states" "$TMP/perf-d.states"
		else
			perf_skip "perf stat -$d"
		fi
	fi
done

# ---- --filter: the kernel's filter on the tracepoint before it ----------------
# A workload of four execs, three of them /bin/true; the filter keeps
# those. Tracepoints mount tracefs: each tool runs in a private mount
# namespace so that nothing stays mounted.
run_pmon 2 stat --filter 'common_pid != 0' -- true
one_line_error "--filter follows the -e tracepoint"
run_pmon 2 stat -e task-clock --filter 'common_pid != 0' -- true
one_line_error "goes with a tracepoint"
W='/bin/true; /bin/true; /bin/echo x >/dev/null; /bin/true; exit 0'
F='filename ~ "*true"'
# tp TOOL OUT [--filter F]: TOOL stat counts sched:sched_process_exec of W.
tp() {
	tool=$1 out=$2
	shift 2
	unshare -m --propagation private "$tool" stat -x, -e sched:sched_process_exec "$@" \
		-o "$out" -- sh -c "$W" 2>"$TMP/tp.err"
}
execs() { awk -F, '$3 == "sched:sched_process_exec" { print $1; exit }' "$1"; }
if ! unshare -m --propagation private true 2>/dev/null; then
	ok "# SKIP --filter: no private mount namespace here (unshare -m)"
elif ! tp "$PMON" "$TMP/tp-all.csv"; then
	ok "# SKIP --filter: no tracepoints with these rights ($(head -c 200 "$TMP/tp.err"))"
else
	all=$(execs "$TMP/tp-all.csv")
	tp "$PMON" "$TMP/tp-f.csv" --filter "$F"
	some=$(execs "$TMP/tp-f.csv")
	n=$(printf '%s' "$W" | grep -o '/bin/true' | wc -l)
	check "--filter '$F': the $n /bin/true execs of $all ($some)" [ "$some" -eq "$n" ]
	check "--filter: fewer than without it ($some < $all)" [ "$some" -lt "$all" ]
	tp "$PMON" "$TMP/tp-bad.csv" --filter 'nonsense =='
	st=$?
	check "--filter the kernel refuses: exit 2 ($st) with one 'pmon:' line naming it" sh -c '
		[ "$2" -eq 2 ] && [ "$(wc -l <"$1")" -eq 1 ] &&
		grep -q "^pmon: the kernel refused the filter .nonsense ==." "$1"' - "$TMP/tp.err" "$st"
	if $have_perf; then
		if tp perf "$TMP/perf-tp.csv" --filter "$F"; then
			check "--filter beside perf: the same count ($(execs "$TMP/perf-tp.csv"))" \
				[ "$(execs "$TMP/perf-tp.csv")" = "$some" ]
		else
			cp "$TMP/tp.err" "$TMP/perf.err"
			perf_skip "perf stat --filter"
		fi
	fi
fi

# ---- -G: per-event cgroups (perf's order: name k for event k) -----------------
# Three task-clocks: one in a busy cgroup (the command joins it), one
# everywhere (an empty name), one in an empty cgroup. The test mounts its
# own perf_event hierarchy (the one perf and pmon find) and removes it.
run_pmon 2 stat -G x -e task-clock -- true
one_line_error "-G follows the -e events"
run_pmon 2 stat -e task-clock -G x -- true
one_line_error "-G needs -a or -C"
cg_ready=false
if [ "$(id -u)" = 0 ] && "$PMON" stat -a -e task-clock -- true 2>/dev/null; then
	cg_stale_umount
	mkdir "$TMP/cg"
	echo $$ >"$TMP/cg.owner" # for cg_stale_umount (lib.sh)
	if mount -t cgroup -o perf_event none "$TMP/cg" 2>"$TMP/mount.err"; then
		# never left mounted, whatever ends the test
		trap 'rmdir "$TMP/cg/$CGN/busy" "$TMP/cg/$CGN/idle" "$TMP/cg/$CGN" 2>/dev/null
			umount "$TMP/cg" 2>/dev/null || umount -l "$TMP/cg"; rm -rf "$TMP"' EXIT
		CGN=pmon-t1035-$$
		mkdir "$TMP/cg/$CGN" "$TMP/cg/$CGN/busy" "$TMP/cg/$CGN/idle" && cg_ready=true
	fi
fi
# in_cgroups TOOL OUT: TOOL stat the three task-clocks over a command that
# joins the busy cgroup and runs Y.
in_cgroups() {
	"$1" stat -a -x, -e task-clock,task-clock,task-clock -G "$CGN/busy,,$CGN/idle" -o "$2" \
		-- sh -c 'echo $$ >"$1/cgroup.procs" && exec '"$Y" - "$TMP/cg/$CGN/busy" 2>"$TMP/cg.err"
}
# cg_states FILE: "busy counted, all >= busy, idle nothing" as one word each
cg_states() {
	awk -F, '$3 == "task-clock" { n++; v[n] = ($1 ~ /^</ ? 0 : $1) }
		END { print (v[1] > 0 ? "busy" : "no-busy"), (v[2] >= v[1] ? "all" : "all<busy"),
			(v[3] == 0 ? "idle" : "idle-counted") }' "$1"
}
if $cg_ready; then
	in_cgroups "$PMON" "$TMP/cg.csv"
	check "-G a,,b: the busy cgroup counted, everything at least that, the empty one nothing ($(cg_states "$TMP/cg.csv"))" \
		[ "$(cg_states "$TMP/cg.csv")" = "busy all idle" ]
	run_pmon 2 stat -a -e task-clock -G "$CGN/nosuch" -- true
	one_line_error "does not exist"
	run_pmon 2 stat -a -e task-clock -G "$CGN/busy,$CGN/idle" -- true
	one_line_error "more cgroups than the 1 events"
	if $have_perf; then
		if in_cgroups perf "$TMP/perf-cg.csv"; then
			check "-G beside perf: the same states ($(cg_states "$TMP/perf-cg.csv"))" \
				[ "$(cg_states "$TMP/perf-cg.csv")" = "$(cg_states "$TMP/cg.csv")" ]
		else
			cp "$TMP/cg.err" "$TMP/perf.err"
			perf_skip "perf stat -G"
		fi
	fi
else
	ok "# SKIP -G: needs root, CPU-wide counting and a perf_event cgroup hierarchy ($(cat "$TMP/mount.err" 2>/dev/null))"
fi

# ---- --metric-only: the derived metrics alone, a column each ------------------
# Columns: the events with a metric (none for one not counted here), rates
# as EVENT/sec; one row per unit, the header once.
run_pmon 0 stat --metric-only -x, -e task-clock,page-faults,L1-dcache-loads -o "$TMP/mo.csv" -- $Y
check "--metric-only -x,: a header of the metrics, then one row" sh -c '
	[ "$(head -1 "$1")" = "CPUs utilized,page-faults/sec" ] && [ "$(wc -l <"$1")" -eq 2 ]' - "$TMP/mo.csv"
check "--metric-only -x,: the row holds both metrics, the rate above 0" awk -F, '
	NR == 2 { exit !(NF == 2 && $1 > 0 && $2 > 0) }' "$TMP/mo.csv"
run_pmon 0 stat --metric-only -j -e task-clock,page-faults -o "$TMP/mo.json" -- $Y
head -1 "$TMP/mo.json" >"$TMP/mo1.json"
json_has "$TMP/mo1.json" 'd["CPUs utilized"] > 0' 'd["page-faults/sec"] > 0' '"event" not in d'
if "$PMON" stat -a -e task-clock -- true 2>/dev/null; then
	run_pmon 0 stat -a --per-socket --metric-only -x, -e task-clock -o "$TMP/mos.csv" -- true
	check "--metric-only --per-socket: a row per socket after the header" \
		[ "$(($(wc -l <"$TMP/mos.csv") - 1))" -eq "$(wc -l <"$TMP/want.socket.rows")" ]
fi
if $have_perf; then
	if perf stat --metric-only -x, -e task-clock,page-faults -o "$TMP/perf.csv" -- $Y 2>"$TMP/perf.err"; then
		ok "--metric-only: perf takes the same command line (its 6.1 prints no software metrics)"
	else
		perf_skip "perf stat --metric-only"
	fi
fi

# ---- -B: the locale's thousands grouping -------------------------------------
loc=$(locale -a 2>/dev/null | grep -E '^(de_DE|en_US)\.(utf8|UTF-8)$' | head -1)
if [ -n "$loc" ]; then
	case $loc in de_DE*) g='\.' ;; *) g=',' ;; esac
	LC_ALL=$loc "$PMON" stat -B -e page-faults -o "$TMP/B.txt" -- $X 2>/dev/null
	check "-B ($loc): the count grouped in thousands" \
		grep -Eq "^ *[0-9]{1,3}($g[0-9]{3})+ +page-faults" "$TMP/B.txt"
	LC_ALL=$loc "$PMON" stat --no-big-num -e page-faults -o "$TMP/nB.txt" -- $X 2>/dev/null
	check "--no-big-num ($loc): plain digits" grep -Eq '^ *[0-9]{4,} +page-faults' "$TMP/nB.txt"
	LC_ALL=$loc "$PMON" stat -e page-faults -o "$TMP/fB.txt" -- $X 2>/dev/null
	check "a file, not a terminal: plain digits by default" \
		grep -Eq '^ *[0-9]{4,} +page-faults' "$TMP/fB.txt"
	if $have_perf; then
		if LC_ALL=$loc perf stat -B -e page-faults -o "$TMP/perf.txt" -- $X 2>"$TMP/perf.err"; then
			check "-B beside perf: perf groups the same way" \
				grep -Eq "^ *[0-9]{1,3}($g[0-9]{3})+ +page-faults" "$TMP/perf.txt"
		else
			perf_skip "perf stat -B"
		fi
	fi
else
	ok "# SKIP -B: no de_DE or en_US locale installed to group by"
fi
# With -B every number of the table is in the locale, as perf prints them:
# "30,16 msec ... # 0.298 CPUs utilized" read 298 in de_DE, where '.'
# groups thousands.
de=$(locale -a 2>/dev/null | grep -E '^de_DE\.(utf8|UTF-8)$' | head -1)
if [ -n "$de" ]; then
	LC_ALL=$de "$PMON" stat -B -e task-clock -o "$TMP/Bde.txt" -- $X 2>/dev/null
	check "-B ($de): the metric has the count's decimal comma" \
		grep -Eq '^ *[0-9.]+,[0-9]{2} msec +task-clock +# +[0-9]+,[0-9]{3} CPUs utilized' "$TMP/Bde.txt"
	check "-B ($de): the elapsed, user and sys times too" \
		sh -c "[ \$(grep -Ec '^ *[0-9]+,[0-9]{9} seconds (time elapsed|user|sys)\$' '$TMP/Bde.txt') -eq 3 ]"
	if $have_perf; then
		if LC_ALL=$de perf stat -B -e task-clock -o "$TMP/perfde.txt" -- $X 2>"$TMP/perf.err"; then
			check "-B ($de) beside perf: perf's metric has the decimal comma too" \
				grep -Eq '# +[0-9]+,[0-9]{3} CPUs utilized' "$TMP/perfde.txt"
		else
			perf_skip "perf stat -B ($de)"
		fi
	fi
else
	ok "# SKIP -B's decimals: no de_DE locale installed"
fi
finish
