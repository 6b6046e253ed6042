#!/bin/sh
# Crafted recordings whose shape once made pmon report's memory or time
# grow beyond the file's size (issue #31): FORKs that copied maps
# (Fibonacci), a linear search per distinct path, and one per sample
# identifier. Each is read whole under a resource limit -- CPU seconds, and
# address space where no sanitizer reserves its shadow -- far above what the
# linear reader needs and far below what the old one took; the counts the
# report prints are checked.
. "$(dirname "$0")/lib.sh"
CRAFT="python3 $(dirname "$0")/craft-perfdata.py"
samples() { sed -n 's/^# pmon report: \([0-9]*\) samples.*/\1/p' "$TMP/out"; }

# 60 FORKs alternating between two pids: the old reader copied every map
# of the parent onto the child each time (4 * Fibonacci(60) maps).
$CRAFT forks 60 >"$TMP/forks.data"
check "60 alternating forks: a $(wc -c <"$TMP/forks.data")-byte file" [ -s "$TMP/forks.data" ]
bounded 2097152 "$PMON" report -i "$TMP/forks.data" --sort dso >"$TMP/out" 2>"$TMP/err"
check "reported within the limits (exit $?)" [ $? -eq 0 ]
check "its one sample in pid 1's first map, through the forks (f0)" \
	sh -c "[ '$(samples)' = 1 ] && grep -Eq '^ +100\.00% +1 +f0\$' '$TMP/out'"

# 200,000 distinct paths, then a sample in each: the files were searched
# by a linear scan per MMAP2 (more than 120 s), and each sample scanned the
# maps from the newest.
$CRAFT paths 200000 >"$TMP/paths.data"
bounded 2097152 "$PMON" report -i "$TMP/paths.data" --sort dso --limit 3 >"$TMP/out" 2>"$TMP/err"
check "200,000 distinct paths: reported within the limits (exit $?)" [ $? -eq 0 ]
check "every sample counted ($(samples))" [ "$(samples)" = 200000 ]

# 2,000,000 sample identifiers of one event, 100,001 samples: each
# sample's event was found by a linear scan of them all.
$CRAFT ids 2000000 >"$TMP/ids.data"
bounded 2097152 "$PMON" report -i "$TMP/ids.data" --sort dso >"$TMP/out" 2>"$TMP/err"
check "2,000,000 sample identifiers: reported within the limits (exit $?)" [ $? -eq 0 ]
check "every sample counted under its event ($(samples))" \
	sh -c "[ '$(samples)' = 100001 ] && grep -q 'samples of cpu-clock' '$TMP/out'"
finish
