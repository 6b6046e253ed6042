#!/bin/sh
# Regions set up from the environment (no pmon_region_init() call): each
# bad setting is said once on standard error, and the program is measured
# with what works (the TSC at least, the report on standard error).
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"
W=$PMON_WORKLOADS/wl-regions

# env_case DESC VAR=VALUE...: the workload runs with these settings, exits 0,
# and says "pmon: regions: ..." exactly once.
env_case() {
	what=$1
	shift
	env "$@" "$W" 10 >"$TMP/out" 2>"$TMP/err"
	st=$?
	check "$what: the program runs on" test "$st" -eq 0
	check "$what: said once on standard error" test "$(grep -c '^pmon: regions: ' "$TMP/err")" -eq 1
}

env_case "PMON_EVENTS=bogus" PMON_EVENTS=bogus PMON_FORMAT=csv
check "PMON_EVENTS=bogus: names the event" grep -q "^pmon: regions: .*bogus.*measuring the TSC only" "$TMP/err"
check "PMON_EVENTS=bogus: the TSC is still measured" grep -q '^faults,[0-9]*,10,1,tsc,' "$TMP/err"

if [ -e /sys/bus/event_source/devices/cpu ] || [ -e /sys/bus/event_source/devices/cpu_core ]; then
	echo "ok # skip PMON_EVENTS=cycles: this machine has a PMU"
else
	env_case "PMON_EVENTS=cycles without a PMU" PMON_EVENTS=cycles PMON_FORMAT=csv
	check "PMON_EVENTS=cycles: says why" grep -q "^pmon: regions: .*cycles.*measuring the TSC only" "$TMP/err"
	check "PMON_EVENTS=cycles: the TSC is still measured" grep -q '^faults,[0-9]*,10,1,tsc,' "$TMP/err"
fi

env_case "PMON_OUTPUT=/nonexistent/x" PMON_OUTPUT=/nonexistent/x
check "PMON_OUTPUT unwritable: names the file" grep -q "^pmon: regions: .*/nonexistent/x.*standard error" "$TMP/err"
check "PMON_OUTPUT unwritable: the report comes on standard error" grep -Eq '^faults +10 tsc' "$TMP/err"

# The report file is owner-only (0600) like every file pmon writes, whatever
# the umask: it names the program's code and its costs.
rm -f "$TMP/reg.txt"
(umask 022 && env PMON_OUTPUT="$TMP/reg.txt" PMON_FORMAT=csv "$W" 10 >"$TMP/out" 2>"$TMP/err")
check "PMON_OUTPUT: the report is in the file" grep -q '^faults,[0-9]*,10,1,tsc,' "$TMP/reg.txt"
check "PMON_OUTPUT: the file is 0600" test "$(stat -c %a "$TMP/reg.txt")" = 600

env_case "PMON_FORMAT=xml" PMON_FORMAT=xml
check "PMON_FORMAT=xml: a table instead" grep -Eq '^faults +10 tsc' "$TMP/err"

env_case "PMON_FENCE=bogus" PMON_FENCE=bogus PMON_FORMAT=csv
check "PMON_FENCE=bogus: measured anyway" grep -q '^faults,[0-9]*,10,1,tsc,' "$TMP/err"

env_case "PMON_WARMUP=abc" PMON_WARMUP=abc PMON_FORMAT=csv
check "PMON_WARMUP=abc: measured without warm-up" grep -q '^faults,[0-9]*,10,1,tsc,' "$TMP/err"

env PMON_EVENTS=page-faults PMON_FORMAT=csv "$W" 10 >"$TMP/out" 2>"$TMP/err"
check "valid settings: nothing said" test "$(grep -c '^pmon: ' "$TMP/err")" -eq 0
check "valid settings: exact counts" grep -q '^faults,[0-9]*,10,1,page-faults,160,16.00,' "$TMP/err"
finish
