#!/bin/sh
# The files pmon record writes: owner-only (a recording holds kernel
# addresses and stack bytes), an existing recording kept as FILE.old as perf
# does, and a good recording never replaced by an empty one when the command
# cannot be started. Build ids are read without blocking on a FIFO.
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"
W=$PMON_WORKLOADS/wl-touch

umask 022
run_pmon 0 record -e cpu-clock -o "$TMP/keep.data" -- "$W" 200
check "a recording is created 0600 even under umask 022" [ "$(stat -c %a "$TMP/keep.data")" = 600 ]
cp "$TMP/keep.data" "$TMP/orig.data"

run_pmon 127 record -e cpu-clock -o "$TMP/keep.data" -- "$TMP/does-not-exist"
check "a command that cannot start leaves the recording as it was" cmp -s "$TMP/keep.data" "$TMP/orig.data"
check "and leaves no .old behind" [ ! -e "$TMP/keep.data.old" ]
check "it says why in one line" grep -q "^pmon: cannot run '$TMP/does-not-exist'" "$TMP/err"
check "and claims no records" sh -c "! grep -q 'records written' '$TMP/err'"

run_pmon 0 record -e cpu-clock -o "$TMP/keep.data" -- "$W" 200
check "a second recording keeps the first as .old (perf's rule)" cmp -s "$TMP/keep.data.old" "$TMP/orig.data"
run_pmon 0 report -i "$TMP/keep.data.old"
check "the kept one still reports" grep -q "samples of cpu-clock" "$TMP/out"

# A mode is never widened: a recording made over a world-readable file is 0600.
printf 'x' >"$TMP/wide.data" && chmod 644 "$TMP/wide.data"
run_pmon 0 record -e cpu-clock -o "$TMP/wide.data" -- "$W" 100
check "a new recording over a 0644 file is 0600" [ "$(stat -c %a "$TMP/wide.data")" = 600 ]
finish
