#!/bin/sh
# pmon info --cpuid-file on every shared dump: exit 0, JSON parses, and the
# right numbers for a few (the unit tests assert many more fields).
. "$(dirname "$0")/lib.sh"

n=0
for f in "$PMON_CPUID_DIR"/*.txt; do
	b=$(basename "$f" .txt)
	if "$PMON" info --json --cpuid-file "$f" >"$TMP/$b.json" 2>"$TMP/err" &&
		"$PMON" info --cpuid-file "$f" >/dev/null 2>&1; then
		n=$((n + 1))
	else
		not_ok "$b decodes"
	fi
done
check "all $n dumps decode" [ "$n" -ge 30 ]
check "all their JSON parses" json_ok "$TMP"/*.json

expect() { # FILE EXPR VALUE
	run_pmon 0 info --json --cpuid-file "$PMON_CPUID_DIR/$1.txt"
	got=$(jfield "$TMP/out" "$2")
	check "$1: $2 = $3 (got $got)" [ "$got" = "$3" ]
}
expect intel-core-ultra9-288v-lunarlake-ecore 'd["perfmon"]["fixed"]["mask"]' 119
expect intel-core-ultra9-288v-lunarlake-pcore 'd["perfmon"]["gp"]["count"]' 10
expect intel-core2-x6800-conroe 'd["perfmon"]["fixed"]["count"]' 3
expect intel-core2-x6800-conroe 'd["perfmon"]["fixed_assumed"]' True
expect intel-core-i9-12900k-alderlake-pcore 'd["perfmon"]["gp"]["count"]' 8
expect intel-core-i9-12900k-alderlake-pcore 'd["perfmon"]["core_type"]' P-core
expect intel-core-i9-12900k-alderlake-ecore 'd["perfmon"]["gp"]["count"]' 6
expect amd-epyc-9654-zen4-genoa 'd["perfmon"]["gp"]["count"]' 6
expect amd-epyc-9654-zen4-genoa 'd["rdt"]["counter_width"]' 44
expect intel-xeon-8160-skylake-sp 'd["rdt"]["upscale"]' 98304
expect intel-xeon-8160-skylake-sp 'd["tsc"]["hz"]' 2100000000
# #24.1: 15H with ECX = 0 takes the crystal Linux derives from 16H (the
# nominal table only without 16H), and says so.
expect intel-xeon-8160-skylake-sp 'd["tsc"]["crystal_hz"]' 25000000
expect intel-xeon-8160-skylake-sp 'd["tsc"]["source"]' 'CPUID.15H ratio, crystal from CPUID.16H'
expect intel-xeon-8160-skylake-sp 'd["tsc"]["cpuid"]["derived"]' True
expect intel-core-i7-6700k-skylake 'd["tsc"]["hz"]' 3999984000
expect intel-core-i7-6700k-skylake 'd["tsc"]["crystal_hz"]' 23952000
expect intel-core-i9-12900k-alderlake-pcore 'd["tsc"]["cpuid"]["derived"]' False
run_pmon 0 info --cpuid-file "$PMON_CPUID_DIR/intel-core-i7-6700k-skylake.txt"
check "6700K: the crystal's source named" grep -q "crystal *23952000 Hz (16H base 4000 MHz" "$TMP/out"
check "6700K: a derivation, checked on the machine" grep -q "cross-check *a derivation" "$TMP/out"
expect intel-pentium-pro 'd["perfmon"]["model"]' intel-p6
expect intel-pentium-pro 'd["kernel"]' None
# Issue 13: AMD 0 in 0FH.1:EAX[7:0] is 44 bits (#1); RMID field width (#6);
# max_ext_leaf is unsigned (#10); Skylake-SP stepping 4 CMT/MBM erratum (#8).
expect amd-epyc-7742-zen2-rome 'd["rdt"]["counter_width"]' 44
expect amd-epyc-7763-zen3-milan 'd["rdt"]["counter_width"]' 44
expect amd-epyc-9655-zen5-turin 'd["rdt"]["rmid_bits"]' 12
expect amd-epyc-7742-zen2-rome 'd["cpu"]["max_ext_leaf"]' 2147483680
expect intel-xeon-8160-skylake-sp 'd["cpu"]["max_ext_leaf"]' 2147483656
expect intel-xeon-8160-skylake-sp 'd["rdt"]["erratum_mon_disabled"]' True
expect intel-xeon-8160-skylake-sp 'd["rdt"]["mbm_total"]' False
expect intel-xeon-8160-skylake-sp 'd["rdt"]["mbm_correction"]["rmid_threshold"]' 127
run_pmon 0 info --cpuid-file "$PMON_CPUID_DIR/intel-xeon-8160-skylake-sp.txt"
check "SKX stepping 4: erratum named" grep -q "Linux disables CMT and MBM" "$TMP/out"
check "SKX stepping 4: verdict says why" grep -q "RDT (CMT/MBM) *no .*errata" "$TMP/out"
run_pmon 0 info --cpuid-file "$PMON_CPUID_DIR/intel-core-i9-12900k-alderlake-pcore.txt"
check "ADL: absent leaf 10H.2 is not '0-bit masks'" grep -q "L2 allocation *not enumerated (leaf 10H.2" "$TMP/out"
check "ADL: no 0-bit masks anywhere" sh -c "! grep -q '0-bit masks' '$TMP/out'"

# Text mode says "hybrid" caveats and fixed-counter notes where they apply.
run_pmon 0 info --cpuid-file "$PMON_CPUID_DIR/intel-core-i9-12900k-alderlake-pcore.txt"
check "ADL: 0AH shared-subset note" grep -q "0AH reports only what all core types share" "$TMP/out"
# #24.5: with the E-cores off 0AH is the P-core's own 8 GP / 4 fixed.
run_pmon 0 info --cpuid-file "$PMON_CPUID_DIR/intel-core-i9-12900k-alderlake-ecores-off.txt"
check "ADL E-cores off: no shared-subset note" \
	sh -c "! grep -q 'what all core types share' '$TMP/out'"
expect intel-core-i9-12900k-alderlake-ecores-off 'd["perfmon"]["hybrid_0a_subset"]' False
expect intel-core-i9-12900k-alderlake-ecore 'd["perfmon"]["hybrid_0a_subset"]' True
# #24.6: every dump with leaf 23H sets CPUID.(07H,1):EAX[8].
expect intel-core-ultra7-155h-meteorlake-pcore 'd["perfmon"]["arch_perfmon_ext"]' True
run_pmon 0 info --cpuid-file "$PMON_CPUID_DIR/intel-core2-x6800-conroe.txt"
check "Conroe: fixed-counter note" grep -q "Linux assumes 3" "$TMP/out"

# #24.2: VM dumps (tests/cpuid) are not read as counters; a hypervisor's
# CPUID that does describe counters says CPUID cannot vouch for them.
T="$PMON_SRC/tests/cpuid"
run_pmon 0 info --json --cpuid-file "$T/qemu-kvm64-on-intel.txt"
check "kvm64: no NetBurst" [ "$(jfield "$TMP/out" 'd["perfmon"]["model"]')" = none ]
why=$(jfield "$TMP/out" 'd["perfmon"]["none_why"]')
check "kvm64: says why ($why)" expr "$why" : ".*QEMU's kvm64"
run_pmon 2 rdpmc --ecx 0x11 --cpuid-file "$T/qemu-kvm64-on-intel.txt"
check "kvm64: rdpmc 0x11 refused, citing the reason" grep -q "not a Pentium 4" "$TMP/err"
run_pmon 0 info --cpuid-file "$T/amd-epyc-kvm-guest-no-vpmu.txt"
check "AMD guest: no counters" grep -q "hardware counters *no .*hypervisor hid the PMU" "$TMP/out"
run_pmon 2 rdpmc --ecx 3 --cpuid-file "$T/amd-epyc-kvm-guest-no-vpmu.txt"
check "AMD guest: rdpmc 3 refused" grep -q "PerfCtrExtCore" "$TMP/err"
# The Skylake dump with the hypervisor bit (CPUID.01H:ECX[31]) set.
while read -r leaf sub a b c d; do
	[ "$leaf" = 00000001 ] && c=$(printf %08x $((0x$c | 0x80000000)))
	echo "$leaf $sub $a $b $c $d"
done <"$PMON_CPUID_DIR/intel-core-i7-6700k-skylake.txt" >"$TMP/skl-guest.txt"
run_pmon 0 info --cpuid-file "$TMP/skl-guest.txt"
check "guest with counters: CPUID cannot vouch (verdict)" \
	grep -q "hardware counters *yes .*CPUID cannot tell whether the hypervisor provides" "$TMP/out"
check "guest with counters: CPUID cannot vouch (figures)" grep -q "note .*CPUID cannot tell" "$TMP/out"

# pmon cpuid writes a dump that reads back to the same decoding.
run_pmon 0 cpuid -o "$TMP/self.txt"
run_pmon 0 info --json --cpuid-file "$TMP/self.txt"
cp "$TMP/out" "$TMP/a.json"
run_pmon 0 info --json
check "own dump decodes like the live CPU" [ "$(jfield "$TMP/a.json" 'd["cpu"]["brand"]')" = \
	"$(jfield "$TMP/out" 'd["cpu"]["brand"]')" ]
check "own dump: same perfmon model" [ "$(jfield "$TMP/a.json" 'd["perfmon"]')" = \
	"$(jfield "$TMP/out" 'd["perfmon"]')" ]
run_pmon 0 cpuid --cpuid-file "$PMON_CPUID_DIR/intel-xeon-8160-skylake-sp.txt"
check "re-printed dump keeps every row" [ "$(grep -vc '^#' "$TMP/out")" = \
	"$(grep -vc '^#' "$PMON_CPUID_DIR/intel-xeon-8160-skylake-sp.txt")" ]
finish
