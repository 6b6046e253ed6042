#!/bin/sh
# Where a recording's names come from (#26, #27): a perf.data made on
# another kernel is not named by this machine's kallsyms (perf's rule: same
# build id), but by --kallsyms FILE or perf's build-id cache; binaries
# moved away are found under --symfs or in the cache (~/.debug as perf
# keeps it: .build-id/XX/REST -> PATH/HEX/elf); the vDSO is named, from
# perf's cache for perf.data and from the image pmon's recording keeps; C++
# names are demangled as perf prints them.
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"
H=$PMON_WORKLOADS/wl-hotcold
V=$PMON_WORKLOADS/wl-vdso

need_perf_record
# perf's cache is kept out of the user's ~/.debug: this test's own.
export PERF_BUILDID_DIR="$TMP/cache"

# --- the kernel: its build id decides -------------------------------------
# Kernel time for certain: dd copies from /dev/zero in the kernel.
perf_record -q -e cpu-clock -o "$TMP/k.data" -- \
	dd if=/dev/zero of=/dev/null bs=64k count=40000 >/dev/null 2>&1
kid=$(perf buildid-list -i "$TMP/k.data" 2>/dev/null | awk '$2 == "[kernel.kallsyms]" { print $1 }')
if [ -z "$kid" ] || ! awk '$1 != "0000000000000000" { f = 1 } END { exit !f }' /proc/kallsyms; then
	ok "# SKIP the kernel's names: no kernel build id in perf.data or kallsyms hidden (kptr_restrict)"
else
	run_pmon 0 report -i "$TMP/k.data" --sort symbol --format json
	check "recorded on the running kernel: its addresses are named from /proc/kallsyms" \
		json_has "$TMP/out" "[e for e in d['entries'] if e['dso'] == '[kernel]' and e['symbol'] != '[kernel]']"
	# The same file as if made on another kernel: one byte of its build id changed.
	python3 - "$TMP/k.data" "$TMP/other.data" "$kid" <<'PY'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
kid = bytes.fromhex(sys.argv[3])
assert d.find(kid) >= 0, "the kernel's build id is not in the file"
# every copy: perf may write it in the header's build-id table and in the
# kernel's MMAP record too (attr.build_id, --buildid-mmap)
d = d.replace(kid, bytes([kid[0] ^ 0xff]) + kid[1:])
open(sys.argv[2], "wb").write(d)
PY
	okid=$(perf buildid-list -i "$TMP/other.data" 2>/dev/null | awk '$2 == "[kernel.kallsyms]" { print $1 }')
	run_pmon 0 report -i "$TMP/other.data" --sort symbol --format json
	check "another kernel's recording: no kernel address is named from this machine's kallsyms" \
		json_has "$TMP/out" "[e for e in d['entries'] if e['dso'] == '[kernel]']" \
		"not [e for e in d['entries'] if e['dso'] == '[kernel]' and e['symbol'] != '[kernel]']"
	check "and one warning says why, with both build ids" \
		sh -c "[ \$(wc -l <'$TMP/err') = 1 ] && grep -q 'build id $okid) is not the one running here ($kid)' '$TMP/err'"
	run_pmon 0 report -i "$TMP/other.data" --sort symbol --format json --kallsyms /proc/kallsyms
	check "--kallsyms FILE names them whatever kernel made the file" \
		json_has "$TMP/out" "[e for e in d['entries'] if e['dso'] == '[kernel]' and e['symbol'] != '[kernel]']"
	check "without a warning" [ ! -s "$TMP/err" ]
	# perf's cache layout: .build-id/XX/REST -> ../../[kernel.kallsyms]/HEX, holding kallsyms
	mkdir -p "$TMP/cache/[kernel.kallsyms]/$okid" "$TMP/cache/.build-id/$(echo "$okid" | cut -c1-2)"
	cp /proc/kallsyms "$TMP/cache/[kernel.kallsyms]/$okid/kallsyms"
	ln -s "../../[kernel.kallsyms]/$okid" \
		"$TMP/cache/.build-id/$(echo "$okid" | cut -c1-2)/$(echo "$okid" | cut -c3-)"
	run_pmon 0 report -i "$TMP/other.data" --sort symbol --format json
	check "the build-id cache's kallsyms of that build id names them (perf archive's copy)" \
		json_has "$TMP/out" "[e for e in d['entries'] if e['dso'] == '[kernel]' and e['symbol'] != '[kernel]']"
	rm -rf "$TMP/cache"
fi
run_pmon 2 report -i "$TMP/k.data" --kallsyms "$TMP/none"
one_line_error "--kallsyms '$TMP/none'"

# --- binaries moved away: --symfs, the build-id cache ---------------------
mkdir -p "$TMP/run"
cp "$H" "$TMP/run/wl"
perf_record -q -e cpu-clock -o "$TMP/moved.data" -- "$TMP/run/wl" 20000000 >/dev/null 2>&1
mkdir -p "$TMP/symfs$TMP/run"
mv "$TMP/run/wl" "$TMP/symfs$TMP/run/wl"
run_pmon 0 report -i "$TMP/moved.data" --sort symbol --format json
check "the binary gone: its samples are [unknown]" \
	json_has "$TMP/out" "not [e for e in d['entries'] if e['symbol'] in ('hot', 'cold')]"
run_pmon 0 report -i "$TMP/moved.data" --sort symbol --format json --symfs "$TMP/symfs"
check "--symfs D finds it at D/PATH: hot and cold named" \
	json_has "$TMP/out" "[e for e in d['entries'] if e['symbol'] == 'hot']" \
	"[e for e in d['entries'] if e['symbol'] == 'cold']"
run_pmon 2 report -i "$TMP/moved.data" --symfs "$TMP/nowhere"
one_line_error "--symfs '$TMP/nowhere': no such directory"
bid=$(perf buildid-list -i "$TMP/moved.data" 2>/dev/null | awk -v p="$TMP/run/wl" '$2 == p { print $1 }')
if [ -n "$bid" ]; then
	d=$TMP/cache/.build-id/$(echo "$bid" | cut -c1-2)/$(echo "$bid" | cut -c3-)
	mkdir -p "$d"
	cp "$TMP/symfs$TMP/run/wl" "$d/elf"
	run_pmon 0 report -i "$TMP/moved.data" --sort symbol --format json
	check "perf's build-id cache (.build-id/XX/REST/elf) names it" \
		json_has "$TMP/out" "[e for e in d['entries'] if e['symbol'] == 'hot']"
	# A file of another build id in the cache's place names nothing.
	cp "$PMON_WORKLOADS/wl-touch" "$d/elf"
	run_pmon 0 report -i "$TMP/moved.data" --sort symbol --format json
	check "a cached file of another build id is not taken" \
		json_has "$TMP/out" "not [e for e in d['entries'] if e['symbol'] in ('hot', 'cold')]"
	rm -rf "$TMP/cache"
else
	ok "# SKIP the build-id cache: perf wrote no build id for the workload"
fi

# --- C++ names: demangled as perf prints them (no parameters) ---------------
run_pmon 0 record -o "$TMP/cx.pmon" -- "$PMON_WORKLOADS/wl-cxxnames" 50000000
run_pmon 0 report -i "$TMP/cx.pmon" --format json
check "pmon's recording: _ZN2ns6Worker4spinEl is ns::Worker::spin" \
	json_has "$TMP/out" "[e for e in d['entries'] if e['symbol'] == 'ns::Worker::spin']"
perf_record -q -e cpu-clock -o "$TMP/cx.data" -- "$PMON_WORKLOADS/wl-cxxnames" 50000000 \
	>/dev/null 2>&1
perf report -i "$TMP/cx.data" --stdio --no-children --sort sym 2>/dev/null >"$TMP/perf.txt"
run_pmon 0 report -i "$TMP/cx.data" --format json
check "perf.data: the name perf report prints for it" \
	sh -c "grep -q '\[\.\] ns::Worker::spin *\$' '$TMP/perf.txt' && python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not [e for e in d[\"entries\"] if e[\"symbol\"] == \"ns::Worker::spin\"])' '$TMP/out'"

# --- the vDSO -------------------------------------------------------------
run_pmon 0 record -g -o "$TMP/v.pmon" -- "$V" 3000000
run_pmon 0 report -i "$TMP/v.pmon" --sort symbol --format json
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not [e for e in d["entries"] if e["dso"] == "[vdso]"])' "$TMP/out"; then
	check "pmon's recording keeps the vDSO: its samples are named (__vdso_*), none [unknown]" \
		json_has "$TMP/out" "[e for e in d['entries'] if e['dso'] == '[vdso]' and e['symbol'].startswith('__vdso_')]" \
		"not [e for e in d['entries'] if e['dso'] == '[vdso]' and e['symbol'] == '[unknown]']"
	run_pmon 0 report -i "$TMP/v.pmon" --format folded
	check "and the call stacks end in it" grep -q ';__vdso_[a-z_]* [0-9]*$' "$TMP/out"
	unset PERF_BUILDID_DIR # perf record puts the vDSO in its cache; pmon report reads it there
	export HOME="$TMP/home"
	mkdir -p "$HOME"
	perf_record -q -e cpu-clock -o "$TMP/v.data" -- "$V" 3000000 >/dev/null 2>&1
	perf report -i "$TMP/v.data" --stdio --no-children --sort dso,sym 2>/dev/null >"$TMP/perf.txt"
	run_pmon 0 report -i "$TMP/v.data" --sort symbol --format json
	if [ -z "$(ls "$HOME/.debug/[vdso]" 2>/dev/null)" ]; then
		# perf-record.sh made it again with --buildid-mmap: no build-id
		# pass, so nothing in perf's cache (perf report names the vDSO from
		# its own process's copy; pmon reads the cache only)
		ok "# SKIP perf.data's vDSO: perf's build-id cache holds no vDSO (its build-id pass died)"
	elif grep -q '\[vdso\] .*__vdso_' "$TMP/perf.txt"; then
		check "perf.data: the vDSO named from perf's build-id cache, as perf report names it" \
			json_has "$TMP/out" "[e for e in d['entries'] if e['dso'] == '[vdso]' and e['symbol'].startswith('__vdso_')]"
	else
		ok "# SKIP perf.data's vDSO: perf itself names no vDSO symbol here"
	fi
else
	ok "# SKIP the vDSO: clock_gettime made no vDSO samples here (a clock source without vDSO support)"
fi
finish
