#!/bin/sh
# The MSR backend and other users of the PMU (issue #24.5, #24.10): a counter
# someone else reprograms mid-run is reported "<not counted>" with the
# reason, not as pmon's count, and is left to its new owner; the NMI
# watchdog's presence alone refuses nothing. A file laid out as
# /dev/cpu/N/msr stands in for the device; the measured command itself plays
# the other user, as perf scheduling an event onto the same counter would.
. "$(dirname "$0")/lib.sh"
SKL=$PMON_CPUID_DIR/intel-core-i7-6700k-skylake.txt
DEV=$TMP/msr.bin
truncate -s 65536 "$DEV"

run_pmon 0 stat --backend msr --msr-device "$DEV" --cpuid-file "$SKL" -C 0 \
	-e cycles,instructions -- "$PMON" msr write IA32_PERFEVTSEL1 0x5300c5 --yes --device "$DEV"
check "the kept counter is counted" grep -Eq "^ +[0-9]+ +cycles$" "$TMP/err"
check "the taken counter is <not counted>" grep -Eq "^ +<not counted> +instructions$" "$TMP/err"
check "no count is shown for it" sh -c "! grep -Eq '^ +[0-9]+ +instructions$' '$TMP/err'"
check "the reason is said" grep -q "'instructions' not counted: IA32_PERFEVTSEL1 on CPU 0 no longer holds pmon's event select" "$TMP/err"
"$PMON" msr read IA32_PERFEVTSEL1 --device "$DEV" >"$TMP/sel1" 2>&1
check "the taken counter is left to its owner" grep -q "= 0x00000000005300c5 " "$TMP/sel1"
"$PMON" msr read IA32_PERFEVTSEL0 --device "$DEV" >"$TMP/sel0" 2>&1
check "pmon's other counter is put back" grep -q "= 0x0000000000000000 " "$TMP/sel0"
check "no state file is left" [ ! -e "$DEV.pmon-state" ]

# A counter that is enabled at the start is refused, whoever holds it.
"$PMON" msr write IA32_PERFEVTSEL1 0 --yes --device "$DEV" >/dev/null
"$PMON" msr write IA32_PERFEVTSEL0 0x53003c --yes --device "$DEV" >/dev/null
run_pmon 3 stat --backend msr --msr-device "$DEV" --cpuid-file "$SKL" -C 0 -e cycles -- true
one_line_error "IA32_PERFEVTSEL0 on CPU 0 is enabled (0x53003c)"
finish
