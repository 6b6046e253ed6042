#!/bin/sh
# pmon info on this machine: exit 0, a verdict for every capability, JSON that
# parses with the documented keys, and the same facts in text and JSON.
. "$(dirname "$0")/lib.sh"

run_pmon 0 info
for cap in "hardware counters" "user-space rdpmc" "sampling" "software events" \
	"tracepoints" "TSC timing" "RDT (CMT/MBM)"; do
	check "verdict for $cap" grep -q "^  $cap " "$TMP/out"
done
check "TSC frequency shown" grep -Eq '^  frequency +[0-9]+\.[0-9]+ GHz' "$TMP/out"

run_pmon 0 info --json
check "JSON parses" json_ok "$TMP/out"
cp "$TMP/out" "$TMP/info.json"
json_has "$TMP/info.json" 'd["cpu"]["vendor"]' 'd["cpu"]["family"]' 'd["cpu"]["model"]' \
	'd["hypervisor"]' 'd["perfmon"]["version"]' 'd["perfmon"]["gp"]["count"]' \
	'd["perfmon"]["gp"]["width"]' 'd["perfmon"]["fixed"]["count"]' \
	'd["perfmon"]["fixed"]["width"]' 'd["perfmon"]["fixed"]["mask"]' \
	'd["rdt"]["cmt"] in (True, False)' 'd["rdt"]["mbm_total"] in (True, False)' \
	'd["rdt"]["mbm_local"] in (True, False)' 'd["rdt"]["max_rmid"]' \
	'd["rdt"]["upscale"]' 'd["tsc"]["hz"]' 'd["verdict"]["hardware_counters"]["state"]' \
	'd["kernel"]["perf_event_paranoid"]' 'd["clocks"][0]["resolution_ns"]'

# The verdict agrees with the kernel: hardware counters are "yes" exactly
# when the kernel registered a core PMU and cycles opens.
state=$(jfield "$TMP/info.json" 'd["verdict"]["hardware_counters"]["state"]')
if [ -e /sys/bus/event_source/devices/cpu ] || [ -e /sys/bus/event_source/devices/cpu_core ]; then
	check "core PMU present: verdict is not 'n/a'" [ "$state" != "n/a" ]
else
	check "no core PMU: hardware counters verdict is 'no'" [ "$state" = "no" ]
	check "the text says why" grep -q "exposes no PMU\|registered no 'cpu' event source" "$TMP/info.json"
	"$PMON" info >"$TMP/text.txt" 2>&1
	check "says what remains" grep -q "software events, tracepoints and TSC timing" "$TMP/text.txt"
fi
# Software events open on this machine (paranoid <= 2 or root).
if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 2 ] || [ "$(id -u)" = 0 ]; then
	check "software events verdict is yes" \
		[ "$(jfield "$TMP/info.json" 'd["verdict"]["software_events"]["state"]')" = yes ]
fi

# --cpu N gives the same CPU identity as the live default on a homogeneous VM.
run_pmon 0 info --json --cpu 0
check "--cpu 0 JSON parses" json_ok "$TMP/out"
check "--cpu 0 same vendor" [ "$(jfield "$TMP/out" 'd["cpu"]["vendor_id"]')" = \
	"$(jfield "$TMP/info.json" 'd["cpu"]["vendor_id"]')" ]

# -o writes the file; --help works.
run_pmon 0 info --json -o "$TMP/o.json"
check "-o wrote JSON" json_ok "$TMP/o.json"
run_pmon 0 info --help
check "--help names --cpuid-file" grep -q -- --cpuid-file "$TMP/out"
finish
