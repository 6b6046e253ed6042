#!/bin/sh
# pprof with addresses, mappings, source lines and inlines, read by the real
# client (issue #27, defect 4): go tool pprof -list shows hotcold.c's lines
# with counts, -lines names hotcold.c:LINE, -traces lists the stacks,
# -disasm the instructions (a non-PIE build: go tool pprof's own object
# reader maps no relocated file), an inlined function is a second Line of
# one location; a system-wide profile carries pid, tid and comm labels and
# says it is system-wide. Also the call-graph and flame-graph headers of a
# simulated and a system-wide recording.
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"
H=$PMON_WORKLOADS/wl-hotcold
S=$PMON_WORKLOADS/wl-stacks
export HOME="$TMP" # go's caches

if ! command -v go >/dev/null || ! go tool pprof -h >/dev/null 2>&1; then
	echo "ok - # SKIP go tool pprof missing (apt-get install golang-go)"
else
	run_pmon 0 record -g -o "$TMP/hc.data" -- "$H" 100000000
	run_pmon 0 report -i "$TMP/hc.data" --format pprof -o "$TMP/hc.pb.gz"
	# From $TMP: pprof strips a source path up to the base name of its
	# directory where it holds it (ctest's build/tests would hide hotcold.c).
	(cd "$TMP" && go tool pprof -list hot hc.pb.gz) >"$TMP/list" 2>"$TMP/err"
	# hot's loop: the line of its body, and the for before it
	L=$(grep -n 'sink += (unsigned long)i \* 3' "$PMON_SRC/tests/workloads/hotcold.c" | cut -d: -f1)
	check "-list hot: hotcold.c's loop lines with non-zero counts" python3 - "$TMP/list" "$L" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
body = int(sys.argv[2])
assert "ROUTINE" in t and "hotcold.c" in t, t[:800]
rows = re.findall(r"^\s*(\S+)\s+(\S+)\s+(\d+):", t, re.M)
hit = [int(n) for f, c, n in rows if f != "."]
assert hit and all(body - 3 <= n <= body + 1 for n in hit), (hit, body, t[:800])
PY
	go tool pprof -lines -top "$TMP/hc.pb.gz" >"$TMP/lines" 2>"$TMP/err"
	check "-lines -top: hot at hotcold.c:LINE" grep -Eq " hot [^ ]*hotcold\.c:($((L - 1))|$L)\$" "$TMP/lines"
	go tool pprof -traces "$TMP/hc.pb.gz" >"$TMP/traces" 2>"$TMP/err"
	check "-traces: stacks with hot and cold" sh -c "grep -q '^-----------+' '$TMP/traces' &&
		grep -Eq '^ +[0-9.]+m?s +hot\$' '$TMP/traces' && grep -Eq ' cold\$' '$TMP/traces'"
	go tool pprof -raw "$TMP/hc.pb.gz" >"$TMP/raw" 2>"$TMP/err"
	check "-raw: locations at real addresses in a mapping with path and build id" python3 - "$TMP/raw" "$H" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
maps = re.findall(r"^(\d+): (0x[0-9a-f]+)/(0x[0-9a-f]+)/(0x[0-9a-f]+) (\S+) ([0-9a-f]{40})", t, re.M)
wl = [m for m in maps if m[4] == sys.argv[2]]
assert wl and int(wl[0][1], 16) > 0, maps
lo = re.findall(r"^\s+\d+: (0x[0-9a-f]+) M=(\d+) hot ", t, re.M)
assert lo and all(int(a, 16) and m == wl[0][0] for a, m in lo), lo
assert all(int(wl[0][1], 16) <= int(a, 16) < int(wl[0][2], 16) for a, m in lo), (lo, wl)
PY

	run_pmon 0 record -g -o "$TMP/np.data" -- "$H-nopie" 100000000
	run_pmon 0 report -i "$TMP/np.data" --format pprof -o "$TMP/np.pb.gz"
	go tool pprof -disasm hot "$TMP/np.pb.gz" >"$TMP/dis" 2>"$TMP/err"
	check "-disasm hot: its instructions, some with counts" python3 - "$TMP/dis" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
ins = re.findall(r"^\s*(\S+)\s+(\S+)\s+([0-9a-f]+): (\S+)", t, re.M)
assert len(ins) >= 5 and any(f != "." for f, c, a, op in ins), t[:800]
PY

	run_pmon 0 record -g -o "$TMP/inl.data" -- "$S" inline 300000000
	run_pmon 0 report -i "$TMP/inl.data" --format pprof -o "$TMP/inl.pb.gz"
	go tool pprof -raw "$TMP/inl.pb.gz" >"$TMP/inl.raw" 2>"$TMP/err"
	check "inlined mixer: one location, mixer's line first, then inl_outer's" python3 - "$TMP/inl.raw" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r"^\s+\d+: 0x[0-9a-f]+ M=\d+ mixer \S*stacks\.c:\d+ s=\d+\n\s+inl_outer \S*stacks\.c:\d+ s=\d+$", t, re.M)
assert m, t[t.find("Locations"):][:800]
PY

	if [ "$(id -u)" = 0 ]; then
		run_pmon 0 record -a -g -o "$TMP/a.data" -- "$H" 100000000
		run_pmon 0 report -i "$TMP/a.data" --format pprof -o "$TMP/a.pb.gz"
		go tool pprof -tags "$TMP/a.pb.gz" >"$TMP/tags" 2>"$TMP/err"
		check "system-wide: comm, pid and tid labels, wl-hotcold among them" sh -c "
			grep -q '^ comm:' '$TMP/tags' && grep -q '^ pid:' '$TMP/tags' &&
			grep -q '^ tid:' '$TMP/tags' && grep -Eq ': wl-hotcold\$' '$TMP/tags'"
		go tool pprof -tagfocus comm=wl-hotcold -top "$TMP/a.pb.gz" >"$TMP/focus" 2>"$TMP/err"
		check "-tagfocus comm=wl-hotcold: hot and cold, and the comment says system-wide" sh -c "
			grep -q '^system-wide (all CPUs) while ' '$TMP/focus' &&
			grep -q 'tagfocus=comm=wl-hotcold' '$TMP/focus' &&
			grep -Eq ' hot\$' '$TMP/focus' && grep -Eq ' cold\$' '$TMP/focus'"
		run_pmon 0 report -i "$TMP/a.data" --sort caller
		check "system-wide call graph header says so" \
			grep -q "^# pmon report: [0-9]* ns of cpu-clock, system-wide (all CPUs) while '" "$TMP/out"
		run_pmon 0 report -i "$TMP/a.data" --format flamegraph
		check "system-wide flame graph title says so" \
			grep -q "pmon flame graph: cpu-clock, system-wide (all CPUs) while '" "$TMP/out"
	else
		echo "ok - # SKIP system-wide labels: record -a needs root"
	fi
fi

# A simulated recording's stacks are weighed and damaged in simulated events.
if command -v valgrind >/dev/null 2>&1; then
	run_pmon 0 simulate -g --l1 32K,8,64 --ll 1M,16,64 -e Ir -o "$TMP/sim.data" -- "$H" 200000
	run_pmon 0 report -i "$TMP/sim.data" --sort caller
	check "simulated call graph: simulated events, never samples' stacks" sh -c "
		head -1 '$TMP/out' | grep -q '^# pmon report: [0-9]* simulated events of ' &&
		! grep -q \"samples' stacks\" '$TMP/out'"
	run_pmon 0 report -i "$TMP/sim.data" --format flamegraph
	check "simulated flame graph: no samples' stacks" sh -c "! grep -q \"samples' stacks\" '$TMP/out'"
else
	echo "ok - # SKIP simulated headers: valgrind is not installed"
fi
finish
