#!/bin/sh
# pmon bench: linear (2k dependent adds measure twice k), stable (two runs
# have the same shape), a C function from a shared object, JSON, and the assembler's own
# message for bad code. Ratios only: absolute times vary with the machine.
. "$(dirname "$0")/lib.sh"

median() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["tsc_per_iteration"]["median"])' "$1"; }
cpu=$(($(nproc) - 1))

"$PMON" bench --json --cpu $cpu --asm 'add rax, 1' -u 200 -n 2000 >"$TMP/k.json"
check "bench k runs" [ $? -eq 0 ]
"$PMON" bench --json --cpu $cpu --asm 'add rax, 1; add rax, 1' -u 200 -n 2000 >"$TMP/2k.json"
"$PMON" bench --json --cpu $cpu --asm 'add rax, 1' -u 200 -n 2000 >"$TMP/k2.json"
k=$(median "$TMP/k.json")
k2=$(median "$TMP/k2.json")
two=$(median "$TMP/2k.json")
# Documented tolerance: within 25% (a VM's timer steps and noise). A
# machine busy with other work (CI runs tests side by side on 2 CPUs) can
# stretch one run: up to three rounds, k and 2k back to back; one in range
# passes, and a bench that is not linear fails all three.
round=1
while ! python3 -c "import sys; sys.exit(not 1.5 <= $two / $k <= 2.5)" && [ $round -lt 3 ]; do
	round=$((round + 1))
	"$PMON" bench --json --cpu $cpu --asm 'add rax, 1' -u 200 -n 2000 >"$TMP/kr.json"
	"$PMON" bench --json --cpu $cpu --asm 'add rax, 1; add rax, 1' -u 200 -n 2000 >"$TMP/2kr.json"
	k=$(median "$TMP/kr.json")
	two=$(median "$TMP/2kr.json")
done
check "2k adds = 2 x k adds ($two vs $k, round $round)" python3 -c "import sys; sys.exit(not 1.5 <= $two / $k <= 2.5)"
# Two runs: the same trials of the same shape, each a consistent summary
# (timing is not compared: it varies with the load, issue #14).
check "two runs: the same unroll, iterations and trials, consistent statistics ($k, $k2)" \
	python3 -c '
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
for r in (a, b):
    t = r["tsc_per_iteration"]
    assert (r["unroll"], r["iterations"]) == (200, 2000), r
    assert t["samples"] == r["samples"] and 0 <= t["culled"] < t["samples"], t
    assert 1 <= t["mode_count"] <= t["samples"] - t["culled"], t
    assert t["min"] <= t["mode"] <= t["max"] and t["min"] <= t["median"] <= t["max"], t
assert a["samples"] == b["samples"], (a["samples"], b["samples"])
' "$TMP/k.json" "$TMP/k2.json"
check "JSON has median, mode, min, max" python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["tsc_per_iteration"]
assert all(k in t for k in ("median", "mode", "min", "max")) and t["min"] <= t["median"] <= t["max"]
' "$TMP/k.json"

# A C function from a shared object.
cat >"$TMP/f.c" <<'C'
volatile unsigned long x;
void spin(void) { for (int i = 0; i < 100; i++) x += i; }
C
cc -O2 -shared -fPIC -o "$TMP/f.so" "$TMP/f.c" && {
	run_pmon 0 bench --so "$TMP/f.so:spin" -u 10 -n 100
	check "--so: a table row" grep -q "TSC ticks" "$TMP/out"
}

# A body that costs nothing: (2U - U) is noise around 0. Whatever the load,
# the mode lies in [min, max], and a value below zero or a spread wider than
# the value comes with its reason, never as a plain result (issue 29).
cat >"$TMP/nop.c" <<'C'
void nop(void) {}
C
cc -O2 -shared -fPIC -o "$TMP/nop.so" "$TMP/nop.c" && {
	run_pmon 0 bench --json --so "$TMP/nop.so:nop" -u 10 -n 100
	check "--so: mode within [min, max]; negatives and wide spreads doubted" python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["tsc_per_iteration"]
assert t["min"] <= t["mode"] <= t["max"], t
below = min(t["min"], t["median"], t["mean"], t["mode"]) < 0
wide = max(t["stddev"], t["mad"]) > abs(t["median"])
assert (below or wide) == ("doubt" in t), t
assert not below or "below zero" in t["doubt"], t
' "$TMP/out"
	run_pmon 0 bench --so "$TMP/nop.so:nop" -u 10 -n 100
	check "--so table: a negative TSC row is marked with its reason" awk '
		$1 == "TSC" { for (i = 3; i <= NF; i++) if ($i ~ /^-[0-9]/) neg = 1; q = ($NF == "?"); next }
		/\? not a result: .*below zero/ { said = 1 }
		END { exit neg && !(q && said) }' "$TMP/out"
}

# Errors: one line, exit 2.
run_pmon 2 bench --asm 'frobnicate rax'
one_line_error "the assembler rejected the code: no such instruction: \`frobnicate rax'"
run_pmon 2 bench --asm 'add rax, 1' --so x.so:f
one_line_error "give exactly one of --asm and --so"
run_pmon 2 bench --so "$TMP/f.so:nosuch"
one_line_error "has no function 'nosuch'"
run_pmon 2 bench --so /nonexistent.so:f
one_line_error "cannot load '/nonexistent.so'"
run_pmon 2 bench --asm 'add rax, 1' -u 0
one_line_error "--unroll and -n must be at least 1"

# Bodies that fault, trap or never end run in a child with a time limit:
# one line naming the body and the signal or the time-out, exit 2 (#14.8).
run_pmon 2 bench --asm 'mov rax, [0]' -n 10 -r 3
one_line_error "bench body 'mov rax, [0]' was killed by SIGSEGV"
run_pmon 2 bench --asm 'ud2' -n 10 -r 3
one_line_error "bench body 'ud2' was killed by SIGILL"
run_pmon 2 bench --asm 'int3' -n 10 -r 3
one_line_error "bench body 'int3' was killed by SIGTRAP"
run_pmon 2 bench --asm 'jmp $' -n 10 -r 3 --timeout 1
one_line_error "bench body 'jmp \$': no run of it finished in 1 s"
run_pmon 2 bench --asm 'mov r15, 0' -n 10 -r 3 --timeout 1
one_line_error "bench body 'mov r15, 0': no run of it finished in 1 s"
cat >"$TMP/bad.c" <<'C'
#include <stdlib.h>
int variable = 3;
void quit(void) { exit(3); }
C
cc -O2 -shared -fPIC -o "$TMP/bad.so" "$TMP/bad.c" && {
	run_pmon 2 bench --so "$TMP/bad.so:variable" -n 10 -r 3
	one_line_error "'variable' in '$TMP/bad.so' is a variable, not a function"
	run_pmon 2 bench --so "$TMP/bad.so:quit" -n 10 -r 3
	one_line_error "bench body '$TMP/bad.so:quit' ended the process (exit status 3)"
}
run_pmon 2 bench --asm 'add rax, 1' --timeout 0
one_line_error "--timeout must be at least 1 second"

# The assembler and linker by absolute path, named in the output; a PATH
# with another 'as' first is not used.
mkdir -p "$TMP/evil"
printf '#!/bin/sh\ntouch "%s/evil/ran"\nexit 1\n' "$TMP" >"$TMP/evil/as"
cp "$TMP/evil/as" "$TMP/evil/ld"
chmod +x "$TMP/evil/as" "$TMP/evil/ld"
PATH="$TMP/evil:$PATH" "$PMON" bench --asm 'add rax, 1' -u 10 -n 10 -r 3 >"$TMP/out" 2>"$TMP/err"
check "an 'as' first in PATH is not run" [ ! -e "$TMP/evil/ran" ]
check "the tools used are named" grep -q "built with /.*/as, /.*/ld" "$TMP/out"

# Temporary code goes under $TMPDIR and runs where it (or /tmp) is noexec:
# a tmpfs mounted noexec over /tmp in a private mount namespace (root only).
# (A build under /tmp would vanish under that tmpfs: then the case is skipped.)
case $(readlink -f "$PMON") in /tmp/*) under_tmp=1 ;; *) under_tmp= ;; esac
if [ -n "$under_tmp" ]; then
	echo "ok - # SKIP the noexec /tmp case: pmon itself is under /tmp ($PMON)"
elif [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; then
	unshare -m --propagation private sh -c '
		mount -t tmpfs -o noexec,nosuid,size=16m tmpfs /tmp || exit 9
		mkdir /tmp/mine || exit 9
		TMPDIR=/tmp/mine "$0" bench --asm "add rax, 1" -u 10 -n 10 -r 3 >/dev/null || exit 1
		unset TMPDIR
		"$0" bench --asm "add rax, 1" -u 10 -n 10 -r 3 >/dev/null || exit 2
		[ -z "$(ls /tmp/mine)" ] && [ "$(ls /tmp)" = mine ] || exit 3' "$PMON" 2>"$TMP/err"
	rc=$?
	check "bench runs with a noexec TMPDIR and /tmp, leaving nothing (rc $rc)" [ "$rc" -eq 0 ]
else
	echo "# skipped the noexec /tmp case: needs root and unshare -m"
fi
# Killed while assembling (#14.6): the build is in memory (memfds the tools
# open as /proc/self/fd/N), so nothing is left under $TMPDIR.
mkdir "$TMP/bt"
TMPDIR=$TMP/bt "$PMON" bench --asm 'add rax, 1; add rbx, 1' -u 100000 -n 10 -r 3 >/dev/null 2>&1 &
pm=$!
caught=
for _ in $(seq 500); do
	case $(ps -o comm= --ppid $pm 2>/dev/null) in *as* | *ld*) caught=1; break ;; esac
	sleep 0.01
done
kill -9 $pm 2>/dev/null
wait $pm 2>/dev/null
check "caught pmon bench while it assembled" [ -n "$caught" ]
check "SIGKILL while assembling leaves nothing under TMPDIR" [ -z "$(ls "$TMP/bt")" ]
# A folder of a file build whose pmon is gone is removed by the next build;
# a live pmon's, and one holding something else, are kept.
mkdir "$TMP/bt/pmon-bench-999999999-aB3xYz" "$TMP/bt/pmon-bench-$$-aB3xYz" "$TMP/bt/pmon-bench-999999998-aB3xYz"
: >"$TMP/bt/pmon-bench-999999999-aB3xYz/body.s"
: >"$TMP/bt/pmon-bench-999999998-aB3xYz/notes.txt"
TMPDIR=$TMP/bt "$PMON" bench --asm 'add rax, 1' -u 10 -n 10 -r 3 >/dev/null 2>&1
check "a dead pmon's bench folder is removed" [ ! -e "$TMP/bt/pmon-bench-999999999-aB3xYz" ]
check "a live pmon's bench folder is kept" [ -d "$TMP/bt/pmon-bench-$$-aB3xYz" ]
check "a folder holding other files is kept" [ -e "$TMP/bt/pmon-bench-999999998-aB3xYz/notes.txt" ]
# A linker that cannot write through /proc (ld.lld writes a temporary file
# beside its output): the files build, named with the pid; killed in it,
# the folder is removed by the next run (root, unshare -m, ld.lld).
LLD=$(readlink -f /usr/bin/ld.lld 2>/dev/null)
if [ "$(id -u)" = 0 ] && [ -x "$LLD" ] && unshare -m --propagation private true 2>/dev/null; then
	unshare -m --propagation private sh -c '
		mount --bind "$1" "$(readlink -f /usr/bin/ld)" || exit 9
		mkdir "$2/lt" || exit 9
		TMPDIR=$2/lt "$0" bench --asm "add rax, 1" -u 10 -n 10 -r 3 >"$2/lt.out" 2>&1 || exit 1
		[ -z "$(ls "$2/lt")" ] || exit 2
		TMPDIR=$2/lt "$0" bench --asm "add rax, 1; add rbx, 1" -u 100000 -n 10 -r 3 >/dev/null 2>&1 &
		pm=$!
		for _ in $(seq 1000); do
			ls "$2/lt" | grep -q "^pmon-bench-$pm-" && break
			sleep 0.01
		done
		kill -9 $pm
		wait $pm
		ls "$2/lt" | grep -q "^pmon-bench-$pm-" || exit 3
		TMPDIR=$2/lt "$0" bench --asm "add rax, 1" -u 10 -n 10 -r 3 >/dev/null 2>&1 || exit 4
		[ -z "$(ls "$2/lt")" ] || exit 5' "$PMON" "$LLD" "$TMP" 2>"$TMP/err"
	rc=$?
	check "with ld.lld: built with files, a killed build's folder removed by the next (rc $rc)" [ "$rc" -eq 0 ]
else
	echo "# skipped the ld.lld case: needs root, ld.lld and unshare -m"
fi
finish
