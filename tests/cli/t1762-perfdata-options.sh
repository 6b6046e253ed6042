#!/bin/sh
# pmon reads perf.data made with the record options users type: each file
# here is made by perf record with one set of options, then, beside perf
# on that same file, per event pmon report's samples and event count are
# perf report's (--no-group), its lost samples perf's "Total Lost
# Samples", pmon script's lines (comm, tid, time, event, ip) perf
# script's, and pmon says no warning. Leader sampling ('{a,b}:S':
# PERF_SAMPLE_READ, one sample per read value), --threads (a directory
# of data.N files, with -z too), a one-page ring under load (LOST and
# LOST_SAMPLES, not counted twice), and the options that change the
# records' layout: -T, --sample-cpu, -d, --phys-data, -s, --switch-events,
# --namespaces, --all-cgroups, -k mono, --user-regs, --intr-regs, -c,
# --call-graph fp, pipe mode. Every count is read from one file by both
# tools, so none depends on the machine's load.
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"
H=$PMON_WORKLOADS/wl-hotcold

need_perf_record

# agree NAME: perf report/script and pmon report/script of $TMP/NAME.data
# agree (see the top); prints what differs.
agree() {
	f=$TMP/$1.data
	perf report -i "$f" --stdio --no-group --no-children -n --sort comm,dso,sym \
		>"$f.perf" 2>"$f.perr"
	rc=$?
	case $rc in
	0) ;;
	134 | 135 | 136 | 139) # perf 6.1's report faults on some pipe-mode files
		echo "perf report itself died (exit $rc)"
		return 2
		;;
	*)
		echo "perf report failed (exit $rc): $(tail -c 300 "$f.perr")"
		return 1
		;;
	esac
	if ! "$PMON" report -i "$f" --sort comm,dso,symbol --format json >"$f.json" 2>"$f.err"; then
		echo "pmon report failed: $(head -c 300 "$f.err")"
		return 1
	fi
	if [ -s "$f.err" ]; then
		echo "pmon warned: $(head -c 300 "$f.err")"
		return 1
	fi
	python3 - "$f.perf" "$f.json" <<'PY' || return 1
import json, re, sys
ev, lost = {}, None
cur = None
for l in open(sys.argv[1]):
    m = re.match(r"# Total Lost Samples: (\d+)", l)
    if m:
        lost = int(m.group(1)); continue
    m = re.match(r"# Samples: \S+\s+of events? '([^']+)'", l)
    if m:
        cur = ev.setdefault(m.group(1), [0, None]); continue
    m = re.match(r"# Event count \(approx\.\): (\d+)", l)
    if m and cur:
        cur[1] = int(m.group(1)); continue
    m = re.match(r"\s*[\d.]+%\s+(\d+)\s", l)
    if m and cur and not l.startswith("#"):
        cur[0] += int(m.group(1))
j = json.load(open(sys.argv[2]))
mine = {e["name"]: [e["samples"], e["period"]] for e in j["events"] if e["samples"]}
ok = mine == ev and j["lost"] == (lost or 0)
if not ok:
    print("perf", ev, "lost", lost, "; pmon", mine, "lost", j["lost"])
sys.exit(0 if ok else 1)
PY
	F=comm,tid,time,event,ip
	perf script -i "$f" -F $F >"$f.perf-script" 2>/dev/null
	rc=$?
	case $rc in
	0) ;;
	134 | 135 | 136 | 139)
		echo "perf script itself died (exit $rc)"
		return 2
		;;
	*)
		echo "perf script failed (exit $rc)"
		return 1
		;;
	esac
	tr -s ' ' <"$f.perf-script" >"$f.ps"
	"$PMON" script -i "$f" -F $F 2>"$f.err" | tr -s ' ' >"$f.ms" || return 1
	if ! cmp -s "$f.ps" "$f.ms"; then
		echo "script: perf $(wc -l <"$f.ps") lines, pmon $(wc -l <"$f.ms"); first difference:"
		diff "$f.ps" "$f.ms" | head -4
		return 1
	fi
	[ ! -s "$f.err" ] || { echo "pmon script warned: $(head -c 300 "$f.err")"; return 1; }
}

# with NAME PERF-RECORD-ARGS... -- COMMAND...: record, then agree; skipped
# with the reason where this perf cannot record the options.
with() {
	name=$1; shift
	perf_record -q -o "$TMP/$name.data" "$@" >"$TMP/$name.out" 2>"$TMP/$name.rec"
	rc=$?
	perf_died $rc "$name" && return
	if [ $rc -ne 0 ]; then
		ok "# SKIP $name: perf record refused it (exit $rc): $(grep -v '^perf-record.sh' "$TMP/$name.rec" | head -1)"
		return
	fi
	agree "$name" >"$TMP/$name.why"
	rc=$?
	if [ $rc -eq 0 ]; then
		ok "$name: pmon report and script agree with perf's"
	elif [ $rc -eq 2 ]; then
		ok "# SKIP $name: $(cat "$TMP/$name.why")"
	elif grep -q "libzstd" "$TMP/$name.data.err"; then
		ok "# SKIP $name: no libzstd here to read perf record -z"
	else
		not_ok "$name: $(head -c 600 "$TMP/$name.why")"
	fi
}

E=cpu-clock,task-clock,page-faults
with leader-read -e '{cpu-clock,page-faults}:S' -- "$H"
with leader-read-c --running-time -c 100000 -e '{cpu-clock,page-faults,task-clock}:S' -- "$H"
with threads-dir --threads -e $E -- "$H"
with threads-dir-z --threads -z -e $E -g -- "$H"
with timestamps -T -e $E -- "$H"
with sample-cpu --sample-cpu -e $E -- "$H"
with data-addr -d --phys-data -e $E -- "$H"
with stat -s -e $E -- "$H"
with switch-ns-cgroups --switch-events --namespaces --all-cgroups -e $E -- "$H"
with clock-mono -k mono -e $E -- "$H"
with regs --user-regs=ax,bx,sp,ip --intr-regs -e $E -- "$H"
with period -c 100000 --call-graph fp -e $E -- "$H"
with forks -g -e $E -- sh -c "for i in 1 2 3; do /bin/true; (echo x | cat >/dev/null); done; $H"
# a one-page ring and eight writers at 20 kHz: what it loses (LOST
# records, and perf 6.0+'s LOST_SAMPLES at the end) is counted once
with one-page-ring --mmap-pages 1 -F 20000 -g -e $E -- \
	sh -c "for i in 1 2 3 4 5 6 7 8; do $H & done; wait"

# pipe mode: perf record -o - into a file pmon and perf both read
perf_record -q -o - -e $E -- "$H" >"$TMP/pipe.data" 2>"$TMP/pipe.rec"
rc=$?
if ! perf_died $rc pipe; then
	if [ $rc -ne 0 ]; then
		not_ok "pipe: perf record -o - failed (exit $rc)"
	else
		agree pipe >"$TMP/pipe.why"
		case $? in
		0) ok "pipe: pmon report and script agree with perf's" ;;
		2) ok "# SKIP pipe: $(cat "$TMP/pipe.why")" ;;
		*) not_ok "pipe: $(head -c 600 "$TMP/pipe.why")" ;;
		esac
	fi
fi

# perf's directory given by its file DIR/data: that file alone, as perf
# reads it (its data section: the samples are in data.N)
if [ -d "$TMP/threads-dir.data" ]; then
	run_pmon 0 report -i "$TMP/threads-dir.data/data" --format json
	check "threads-dir/data alone: no sample of data.N" \
		python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["samples"] != 0)' "$TMP/out"
fi

finish
