#!/bin/sh
# perf record's options a perf user types first (issue #29): -C CPUS, -t TIDS,
# --no-inherit, --switch-output (signal, size, time) and pmon's own
# --duration, each beside perf record on the same workload where perf is
# installed. Counts and states only: which CPU and thread samples carry,
# which commands have samples, how many pieces, and that the pieces' samples
# add up to one whole recording's (exec tracepoint hits: exact).
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"
W=$PMON_WORKLOADS/wl-threads123
have_perf() { command -v perf >/dev/null 2>&1; }
# the samples a pmon report's first line counts
samples() { "$PMON" report -i "$1" --sort comm | sed -n 's/^# pmon report: \([0-9]*\) samples.*/\1/p'; }

# -C 0: every task on CPU 0 only, system-wide on it, as perf's -C.
run_pmon 0 record -C 0 -e task-clock -o "$TMP/c.data" -- "$W" 24
run_pmon 0 report -i "$TMP/c.data" --sort cpu
check "-C 0: samples of CPU 0 only" sh -c "[ \$(grep -c '%' '$TMP/out') -eq 1 ] && grep -Eq '^ +100\.00% +[0-9]+ +0\$' '$TMP/out'"
# The recording keeps its CPU list: every header names CPU 0, not all CPUs.
run_pmon 0 report -i "$TMP/c.data"
check "-C 0: the table's first line says CPU 0" grep -q "^# pmon report: [0-9]* samples of task-clock, system-wide (CPU 0) while '" "$TMP/out"
run_pmon 0 report -i "$TMP/c.data" --header
check "-C 0: --header's target is CPU 0" grep -qx '# target       : system-wide (CPU 0)' "$TMP/out"
run_pmon 0 report -i "$TMP/c.data" --format json
check "-C 0: JSON says cpus \"0\"" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
sys.exit(not (j["system_wide"] is True and j["cpus"] == "0"))' "$TMP/out"
run_pmon 0 report -i "$TMP/c.data" --format flamegraph -o "$TMP/c.svg"
check "-C 0: the flame graph's title says CPU 0" grep -q "system-wide (CPU 0) while" "$TMP/c.svg"
run_pmon 0 record -C 0,0-0 -e task-clock -o "$TMP/c2.data" -- true
run_pmon 0 report -i "$TMP/c2.data" --format json
check "-C 0,0-0: CPU 0 once (perf's cpu map: sorted, each once)" python3 -c '
import json, sys
sys.exit(json.load(open(sys.argv[1]))["cpus"] != "0")' "$TMP/out"
run_pmon 0 record -a -e task-clock -o "$TMP/a.data" -- true
run_pmon 0 report -i "$TMP/a.data"
check "-a: the table still says all CPUs" grep -q "^# pmon report: [0-9]* samples of task-clock, system-wide (all CPUs) while 'true' ran" "$TMP/out"
run_pmon 0 report -i "$TMP/a.data" --format json
check "-a: JSON says cpus \"all\"" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
sys.exit(not (j["system_wide"] is True and j["cpus"] == "all"))' "$TMP/out"
run_pmon 2 record -C 99999 -e task-clock -o "$TMP/bad.data" -- true
one_line_error "99999"
if have_perf; then
	perf_record -C 0 -e task-clock -o "$TMP/perf.c" -- "$W" 24 >/dev/null 2>&1
	prc=$?
	check "perf record -C 0 beside it: CPU 0 only too" sh -c \
		"perf report -i '$TMP/perf.c' --sort cpu --stdio 2>/dev/null | grep -v '^#' | grep -c '%' | grep -qx 1"
	if [ $prc -eq 0 ]; then
		run_pmon 0 report -i "$TMP/perf.c"
		check "pmon report of perf's -C 0 recording: CPU 0 (from its command line)" grep -q "system-wide (CPU 0)" "$TMP/out"
	else
		ok "# SKIP pmon report of perf's -C 0 recording (perf's own failure, exit $prc)"
	fi
fi

# -t: one thread of a running three-thread workload; its samples alone.
# The file exists before the start: the shell opens the redirection in the
# child, which a loaded machine may run after the first poll below.
: >"$TMP/tids"
"$W" 400 >>"$TMP/tids" &
wl=$!
i=0
while [ "$(wc -l <"$TMP/tids")" -lt 3 ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
w2=$(awk '$1 == "w2" { print $2 }' "$TMP/tids")
check "the workload's thread w2 is running ($w2)" [ -n "$w2" ]
run_pmon 0 record -t "$w2" -e task-clock --duration 0.5 -o "$TMP/t.data"
run_pmon 0 report -i "$TMP/t.data" --sort tid
check "-t $w2: samples of that thread only" sh -c "[ \$(grep -c '%' '$TMP/out') -eq 1 ] && grep -Eq '^ +100\.00% +[0-9]+ +$w2\$' '$TMP/out'"
if have_perf; then
	perf_record -t "$w2" -e task-clock -o "$TMP/perf.t" -- sleep 0.5 >/dev/null 2>&1
	check "perf record -t beside it: that thread only too" sh -c \
		"perf report -i '$TMP/perf.t' --sort pid --stdio 2>/dev/null | grep -v '^#' | grep '%' | grep -c . | grep -qx 1"
fi
# --duration with -t and no command: stopped after it, exit 0 (pmon's own:
# perf record has no --duration).
run_pmon 0 record -t "$w2" -e task-clock --duration 0.2 -o "$TMP/d.data"
check "--duration: the workload still runs after it" kill -0 "$wl"
kill "$wl"
wait "$wl" 2>/dev/null
# --duration with a command: the command is stopped, pmon exits 0.
run_pmon 0 record -e task-clock --duration 0.3 -o "$TMP/d.data" -- sleep 30
check "--duration with a command: a whole recording" [ -n "$(samples "$TMP/d.data")" ]
run_pmon 2 record --duration x -o "$TMP/d.data" -- true
one_line_error "--duration 'x'"

# --no-inherit: sh's child, the workload, is not followed; without it, it is.
run_pmon 0 record -i -e task-clock -o "$TMP/ni.data" -- sh -c "$W 24 >/dev/null; :"
run_pmon 0 report -i "$TMP/ni.data" --sort comm
run_pmon 0 stat -i -e task-clock -- true
check "-i (--no-inherit): no sample of the child (wl-threads123, w1-w3)" sh -c "! grep -Eq '%.* (wl-threads123|w[123])\$' '$TMP/out'"
run_pmon 0 record -e task-clock -o "$TMP/in.data" -- sh -c "$W 24 >/dev/null; :"
run_pmon 0 report -i "$TMP/in.data" --sort comm
check "without it: the child's threads are sampled" grep -Eq '%.* w3$' "$TMP/out"
if have_perf; then
	perf_record --no-inherit -e task-clock -o "$TMP/perf.ni" -- sh -c "$W 24 >/dev/null; :" >/dev/null 2>&1
	check "perf record --no-inherit beside it: no sample of the child either" sh -c \
		"! perf report -i '$TMP/perf.ni' --sort comm --stdio 2>/dev/null | grep -Eq '%.* (wl-threads123|w[123])\$'"
fi

# --switch-output: pieces named FILE.<timestamp>, each reporting alone, their
# exec hits adding up to a whole recording's (51: sh, 25 true, 25 sleep).
L='i=0; while [ $i -lt 25 ]; do /bin/true; sleep 0.1; i=$((i + 1)); done'
"$PMON" record -e sched:sched_process_exec -o "$TMP/one.data" -- sh -c "$L" >/dev/null 2>"$TMP/err"
if [ $? -ne 0 ]; then
	ok "# SKIP --switch-output: the exec tracepoint cannot be recorded here ($(head -1 "$TMP/err"))"
	finish
fi
whole=$(samples "$TMP/one.data")
check "a whole recording has every exec ($whole)" [ "$whole" -eq 51 ]
# sum_pieces DIR: the pieces' sample total, each one reporting alone
sum_pieces() {
	n=0
	for f in "$1"/r.data.*; do
		k=$(samples "$f")
		[ -n "$k" ] || { echo "unreadable $f"; return; }
		n=$((n + k))
	done
	echo $n
}
for mode in 1s 4K; do
	mkdir "$TMP/$mode"
	run_pmon 0 record --switch-output=$mode -e sched:sched_process_exec -o "$TMP/$mode/r.data" -- sh -c "$L"
	pieces=$(ls "$TMP/$mode" | grep -Ec '^r\.data\.[0-9]{16}$')
	check "--switch-output=$mode: at least 2 pieces named FILE.YYYYMMDDHHMMSScc ($pieces)" [ "$pieces" -ge 2 ]
	check "--switch-output=$mode: no FILE left besides them" [ ! -e "$TMP/$mode/r.data" ]
	check "--switch-output=$mode: a dump line per piece" [ "$(grep -c '^pmon record: dump: ' "$TMP/err")" -eq "$pieces" ]
	check "--switch-output=$mode: the pieces' samples add up to the whole ($(sum_pieces "$TMP/$mode") of $whole)" \
		[ "$(sum_pieces "$TMP/$mode")" = "$whole" ]
done
# signal: SIGUSR2 cuts a piece, as perf's --switch-output.
mkdir "$TMP/sig"
"$PMON" record --switch-output -e sched:sched_process_exec -o "$TMP/sig/r.data" -- sh -c "$L" >/dev/null 2>"$TMP/err" &
pm=$!
i=0
while [ ! -e "$TMP/sig/r.data" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
kill -USR2 "$pm"
wait "$pm"
check "--switch-output (signal): pmon exits 0 after SIGUSR2" [ $? -eq 0 ]
check "--switch-output (signal): 2 pieces" [ "$(ls "$TMP/sig" | grep -Ec '^r\.data\.[0-9]{16}$')" -eq 2 ]
check "--switch-output (signal): the pieces add up to the whole" [ "$(sum_pieces "$TMP/sig")" = "$whole" ]
if have_perf; then
	mkdir "$TMP/perf"
	# perf in a private mount namespace: it mounts tracefs itself where
	# it is not (libapi's tracefs__mount()) and leaves it mounted, which
	# changed the machine's state for every test after this one
	# Where perf itself dies at its end (perf-record.sh says why), its
	# pieces are made again with --buildid-mmap.
	for again in "" --buildid-mmap; do
		rm -f "$TMP"/perf/perf.data*
		unshare -m --propagation private perf record $again --switch-output=1s \
			-e sched:sched_process_exec -o "$TMP/perf/perf.data" -- sh -c "$L" >/dev/null 2>&1
		case $? in 134 | 135 | 136 | 139) echo "# perf record died: again with --buildid-mmap" ;; *) break ;; esac
	done
	# perf's pieces read by pmon (perf.data, file mode): perf 6.1 itself
	# aborts now and then on one of its own pieces (exit 134: report on a
	# piece without samples, script on the first once in a loaded run),
	# so its own count is shown, not relied on
	n=0
	m=0
	for f in "$TMP"/perf/perf.data.*; do
		k=$(samples "$f")
		n=$((n + ${k:-0}))
		m=$((m + $(unshare -m --propagation private perf script -i "$f" 2>/dev/null |
			grep -c 'sched:sched_process_exec')))
	done
	echo "# perf script counts $m in its pieces"
	check "perf's pieces, each read alone: the same total ($n)" [ "$n" -eq "$whole" ]
fi
run_pmon 2 record --switch-output=10x -o "$TMP/x.data" -- true
one_line_error "--switch-output '10x'"
run_pmon 2 record --switch-output=1s -o - -- true
one_line_error "not a regular file"
# A link named by -o is not renamed into pieces: refused, the link and its
# target as they were.
echo keep >"$TMP/target.data" && ln -s "$TMP/target.data" "$TMP/link.data"
run_pmon 2 record --switch-output=1s -o "$TMP/link.data" -- true
one_line_error "'$TMP/link.data' is not a regular file"
check "--switch-output at a link: the link and its target untouched" \
	sh -c "[ -L '$TMP/link.data' ] && [ \"\$(cat '$TMP/target.data')\" = keep ]"
finish
