#!/bin/sh
# Files pmon creates with -o are 0600 whatever the umask (they may hold
# kernel addresses and command lines; perf does the same for perf.data), and
# an existing file keeps its mode: never widened, never narrowed.
. "$(dirname "$0")/lib.sh"

mode() { stat -c %a "$1"; }
umask 022
run_pmon 0 info -o "$TMP/new.txt"
check "a new -o file is 0600 under umask 022 ($(mode "$TMP/new.txt"))" [ "$(mode "$TMP/new.txt")" = 600 ]
run_pmon 0 info --json -o "$TMP/new.json"
check "info --json -o: 0600 too" [ "$(mode "$TMP/new.json")" = 600 ]
run_pmon 0 cpuid -o "$TMP/dump.txt"
check "cpuid -o: 0600 too" [ "$(mode "$TMP/dump.txt")" = 600 ]

: >"$TMP/old.txt"
chmod 640 "$TMP/old.txt"
run_pmon 0 info -o "$TMP/old.txt"
check "an existing file keeps 0640" [ "$(mode "$TMP/old.txt")" = 640 ]
check "and was rewritten" [ -s "$TMP/old.txt" ]
chmod 400 "$TMP/old.txt"
if [ "$(id -u)" != 0 ]; then
	run_pmon 1 info -o "$TMP/old.txt"
fi
check "a read-only file keeps 0400" [ "$(mode "$TMP/old.txt")" = 400 ]
finish
