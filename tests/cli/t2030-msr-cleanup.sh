#!/bin/sh
# The MSR backend killed while it has counters programmed (issue #14.6): the
# state file it keeps lets the next run say so, and --cleanup puts every
# register back. A file laid out as /dev/cpu/N/msr stands in for the device.
. "$(dirname "$0")/lib.sh"
SKL=$PMON_CPUID_DIR/intel-core-i7-6700k-skylake.txt
DEV=$TMP/msr.bin
truncate -s 65536 "$DEV"
"$PMON" msr write IA32_PMC0 0x1234 --yes --device "$DEV" >/dev/null
cp "$DEV" "$TMP/before.bin"

run_pmon 0 stat --backend msr --msr-device "$DEV" --cleanup
check "--cleanup with nothing left: says so" grep -q "nothing to restore" "$TMP/err"

"$PMON" stat --backend msr --msr-device "$DEV" --cpuid-file "$SKL" -C 0 -e cycles,instructions \
	-- sh -c "echo \$\$ >$TMP/pid; exec sleep 60" >/dev/null 2>&1 &
pm=$!
i=0
while [ ! -s "$TMP/pid" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -9 $pm
wait $pm 2>/dev/null
check "killed: the counters are left programmed" sh -c "! cmp -s '$DEV' '$TMP/before.bin'"
check "killed: a state file names what to put back" grep -q "^write 0 0x186 0$" "$DEV.pmon-state"
cp "$DEV" "$TMP/left.bin"

run_pmon 3 stat --backend msr --msr-device "$DEV" --cpuid-file "$SKL" -C 0 -e cycles -- true
one_line_error "left the counters programmed (saved in '$DEV.pmon-state'); 'pmon stat --backend msr --cleanup' puts them back"
check "the refusal writes nothing" cmp "$DEV" "$TMP/left.bin"

run_pmon 2 stat --backend msr --cleanup -- true
one_line_error "--cleanup goes with --backend msr and no command"
run_pmon 0 stat --backend msr --msr-device "$DEV" --cleanup
check "--cleanup: every register as before" cmp "$DEV" "$TMP/before.bin"
check "--cleanup: lists the writes" grep -q "IA32_PMC0 .*<- 0x1234" "$TMP/err"
check "--cleanup: the state file is gone" [ ! -e "$DEV.pmon-state" ]
run_pmon 0 stat --backend msr --msr-device "$DEV" --cpuid-file "$SKL" -C 0 -e cycles -- true
check "counting works again, and leaves no state file" [ ! -e "$DEV.pmon-state" ]

# rdt --msr the same way (#14.2/6): IA32_PQR_ASSOC and IA32_QM_EVTSEL.
XEON=$PMON_CPUID_DIR/intel-xeon-4214-cascadelake-sp.txt
RDEV=$TMP/rdt-msr.bin
truncate -s 65536 "$RDEV"
"$PMON" msr write IA32_PQR_ASSOC 0x500000000 --yes --device "$RDEV" >/dev/null
cp "$RDEV" "$TMP/rbefore.bin"
run_pmon 0 rdt --msr --msr-device "$RDEV" --cleanup
check "rdt --msr --cleanup with nothing left: says so" grep -q "nothing to restore" "$TMP/out"
rm -f "$TMP/pid"
"$PMON" rdt --msr --msr-device "$RDEV" --cpuid-file "$XEON" --cpu 0 --rmid 3 -I 50 -- sh -c "echo \$\$ >$TMP/pid; exec sleep 60" >/dev/null 2>&1 &
pm=$!
i=0
while { [ ! -s "$TMP/pid" ] || [ ! -e "$RDEV.pmon-rdt-state" ]; } && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -9 $pm
wait $pm 2>/dev/null
check "rdt killed: the RMID is left in IA32_PQR_ASSOC" sh -c "! cmp -s '$RDEV' '$TMP/rbefore.bin'"
check "rdt killed: a state file names what to put back" grep -q "^write 0 0xc8f 0x500000000$" "$RDEV.pmon-rdt-state"
cp "$RDEV" "$TMP/rleft.bin"
run_pmon 3 rdt --msr --msr-device "$RDEV" --cpuid-file "$XEON" --cpu 0 --rmid 3 -- true
one_line_error "left IA32_PQR_ASSOC and IA32_QM_EVTSEL (RDT monitoring) programmed (saved in '$RDEV.pmon-rdt-state'); 'pmon rdt --msr --cleanup' puts them back"
check "rdt: the refusal writes nothing" cmp "$RDEV" "$TMP/rleft.bin"
run_pmon 2 rdt --msr --msr-device "$RDEV" --cleanup -- true
one_line_error "--cleanup takes no command"
run_pmon 0 rdt --msr --msr-device "$RDEV" --cleanup
check "rdt --msr --cleanup: every register as before" cmp "$RDEV" "$TMP/rbefore.bin"
check "rdt --msr --cleanup: lists the writes" grep -Eq "CPU0 IA32_PQR_ASSOC +0x0c8f <- 0x500000000  \(restore\)" "$TMP/out"
check "rdt --msr --cleanup: the state file is gone" [ ! -e "$RDEV.pmon-rdt-state" ]
run_pmon 0 rdt --msr --msr-device "$RDEV" --cpuid-file "$XEON" --cpu 0 --rmid 3 -I 50 -n 1 -- sleep 5
check "rdt --msr works again, restores and leaves no state file" \
	sh -c "[ ! -e '$RDEV.pmon-rdt-state' ] && cmp -s '$RDEV' '$TMP/rbefore.bin'"
finish
