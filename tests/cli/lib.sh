# SPDX-License-Identifier: MIT
# Helpers for the numbered CLI tests (git's t/ style). Each test script
# sources this, runs checks, and ends with `finish`.
set -u
: "${PMON:?set PMON to the pmon binary}"
: "${PMON_CPUID_DIR:?set PMON_CPUID_DIR}"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/pmon-t.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# A test cut short (ctest's timeout, Ctrl-C, a killed make test) still runs
# its EXIT trap: the cleanup of what it made (servers, mounts, cgroups).
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
# perf's build-id cache, which pmon's readers search too (docs/record.md):
# each test's own, empty, so that what earlier runs of perf left in
# ~/.debug names nothing here (and perf record leaves nothing there).
export PERF_BUILDID_DIR="$TMP/perf-buildid"
# perf_record ARGS...: perf record, made again where perf itself dies at its
# end (perf-record.sh says when and why); PERF_RECORD_SH for sh -c contexts.
PERF_RECORD_SH="$(cd "$(dirname "$0")" && pwd)/perf-record.sh"
perf_record() { sh "$PERF_RECORD_SH" "$@"; }
# need_perf_record: skip the whole test, saying why, where perf is not
# installed or cannot record cpu-clock here (perf_event_paranoid).
need_perf_record() {
	if ! command -v perf >/dev/null 2>&1; then
		echo "1..0 # SKIP perf is not installed"
		exit 77
	fi
	if ! perf_record -q -e cpu-clock -o "$TMP/probe.data" -- true >/dev/null 2>&1; then
		echo "1..0 # SKIP perf record cannot record cpu-clock here (perf_event_paranoid?)"
		exit 77
	fi
}
# bounded KIB CMD...: CMD under 60 s of CPU and KIB of address space (no
# address-space limit under a sanitizer: it reserves terabytes of shadow)
bounded() {
	as=$1
	shift
	ldd "$PMON" 2>/dev/null | grep -q 'libasan\|libtsan' && as=unlimited
	(ulimit -t 60 && ulimit -v "$as" && exec "$@")
}
# perf_died STATUS WHAT: true, with a SKIP said, where perf was killed by
# its own failure (abort, bus error, FPE, segfault: perf-record.sh): a
# comparison with a dead peer compares nothing.
perf_died() {
	case $1 in 134 | 135 | 136 | 139) ok "# SKIP $2: perf itself died (exit $1)" && return 0 ;; esac
	return 1
}
passed=0
failed=0

# cg_stale_umount: a perf_event cgroup hierarchy a test mounted at its own
# $TMP/cg, with its pid in $TMP/cg.owner, and left when it was killed
# (SIGKILL runs no trap): unmounted once that test is gone. The same
# hierarchy stays mounted wherever a running test mounted it.
cg_stale_umount() {
	grep ' - cgroup ' /proc/self/mountinfo | grep -E '[ ,]perf_event(,|$)' |
		awk '$5 ~ /\/pmon-t\.[^/]*\/cg$/ { print $5 }' | while read -r m; do
		o=$(cat "$(dirname "$m")/cg.owner" 2>/dev/null)
		if [ -n "$o" ] && ! kill -0 "$o" 2>/dev/null; then
			umount "$m" 2>/dev/null || umount -l "$m"
			rm -rf "$(dirname "$m")"
		fi
	done
}

ok() { passed=$((passed + 1)); echo "ok - $*"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $*"; }

# check DESC CMD...: CMD must succeed.
check() {
	desc=$1; shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}

# run_pmon EXPECTED_STATUS ARGS...: runs pmon, keeps stdout/stderr in
# $TMP/out and $TMP/err, and checks the exit status.
run_pmon() {
	want=$1; shift
	"$PMON" "$@" >"$TMP/out" 2>"$TMP/err"
	got=$?
	if [ "$got" -eq "$want" ]; then
		ok "pmon $* exits $want"
	else
		not_ok "pmon $* exits $got, expected $want; stderr: $(head -c 300 "$TMP/err")"
	fi
}

# stderr must be exactly one line starting "pmon: " and containing TEXT.
one_line_error() {
	text=$1
	lines=$(wc -l <"$TMP/err")
	if [ "$lines" -eq 1 ] && grep -q '^pmon: ' "$TMP/err" && grep -qF -- "$text" "$TMP/err"; then
		ok "one-line error with '$text'"
	else
		not_ok "expected one 'pmon: ...$text...' line, got: $(cat "$TMP/err")"
	fi
}

# json_ok FILE...: every file parses as JSON (one interpreter for all).
json_ok() { python3 -c 'import json,sys; [json.load(open(f)) for f in sys.argv[1:]]' "$@"; }

# json_has FILE EXPR...: one ok/not ok line per expression, evaluated with
# the document as d. A lookup must exist (any value, 0 and null included); a
# comparison must be true and a list (a filter) not empty. Python starts
# once: it costs 0.3 s here.
json_has() {
	f=$1; shift
	python3 - "$f" "$@" <<'PY' >"$TMP/json_has.out"
import json, sys
d = json.load(open(sys.argv[1]))
for e in sys.argv[2:]:
    try:
        v = eval(e)
        if v is False or (isinstance(v, list) and not v):
            raise ValueError("it is %r" % (v,))
        print("ok - JSON has " + e)
    except Exception as x:
        print("not ok - JSON lacks %s (%s)" % (e, x))
PY
	while IFS= read -r line; do
		case $line in
		ok*) passed=$((passed + 1)) ;;
		*) failed=$((failed + 1)) ;;
		esac
		echo "$line"
	done <"$TMP/json_has.out"
}

# jq-like field read: jfield FILE 'd["perfmon"]["gp"]["count"]'
# jfield FILE EXPR: the value, or a line naming FILE where it is missing, so
# that two missing values never compare equal.
jfield() {
	python3 -c '
import json, sys
try:
    d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))
except Exception as x:
    print("<no %s in %s: %s>" % (sys.argv[2], sys.argv[1], x)); sys.exit(1)' "$1" "$2"
}


# libc_symbols: succeeds when the C library's local functions have names
# (start_thread, __libc_start_call_main): its .symtab, or its detached
# debug file by build id (Debian's libc6-dbg, which valgrind recommends).
# Ubuntu's and most distributions' libc.so.6 have neither by default, and
# there every unwinder, perf's too, shows those frames as [unknown].
libc_symbols() {
	libc=$(ldd /bin/true 2>/dev/null | sed -n 's/.*libc\.so\.6 => \([^ ]*\).*/\1/p')
	[ -n "$libc" ] || return 1
	readelf -S "$libc" 2>/dev/null | grep -q ' \.symtab ' && return 0
	id=$(readelf -n "$libc" 2>/dev/null | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
	[ -n "$id" ] || return 1
	rest=${id#??}
	[ -f "/usr/lib/debug/.build-id/${id%"$rest"}/$rest.debug" ]
}
finish() {
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}

# The simulate tests (t19[0-4]x): skip without valgrind; GEOM, a fixed cache
# geometry. Reports on code in libc and ld.so make elfutils dlopen
# libdebuginfod (curl, gnutls: dynamic TLS); in the sanitizer build
# LeakSanitizer's thread scan then faults on glibc's DTLS block ("Tracer
# caught signal 11", a LeakSanitizer fault, not a leak): leak checking stays
# on, TLS scanning off.
sim_setup() {
	if ! command -v valgrind >/dev/null 2>&1; then
		echo "1..0 # SKIP valgrind is not installed (Debian package valgrind)"
		exit 77
	fi
	GEOM="--l1 32K,8,64 --ll 1M,16,64"
	export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}use_tls=0"
}
