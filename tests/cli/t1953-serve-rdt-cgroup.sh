#!/bin/sh
# pmon serve --rdt per cgroup (issue #19): a resctrl monitoring group per
# counted cgroup that follows its threads. No machine here has RDT: the
# resctrl tree is emulated in a temporary directory (as in t1400), this
# script plays the kernel's mon_data; the cgroups are real (perf counts them).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
[ "$(id -u)" = 0 ] || { echo "skip: making cgroups needs root"; exit 77; }

cg_mount
NAME=pmon-t1953-$$
BASE=$CGMNT/$NAME
W1=
W2=
cleanup() {
	stop_serve
	for p in $W1 $W2; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	for d in "$BASE/one" "$BASE/two" "$BASE"; do
		[ -d "$d" ] && poll 50 rmdir "$d" 2>/dev/null
	done
	[ -n "$OWN_MOUNT" ] && { umount "$TMP/cg" 2>/dev/null || umount -l "$TMP/cg"; }
	rm -rf "$TMP"
}
trap cleanup EXIT
mkdir "$BASE" "$BASE/one" "$BASE/two" || { echo "skip: cannot make cgroups under $CGMNT"; exit 77; }

T=$TMP/resctrl
mk() { mkdir -p "$(dirname "$1")"; printf '%s\n' "$2" >"$1"; }
mk "$T/info/L3_MON/num_rmids" 8
printf 'llc_occupancy\nmbm_total_bytes\nmbm_local_bytes\n' >"$T/info/L3_MON/mon_features"
mk "$T/info/L3_MON/max_threshold_occupancy" 1048576
for f in llc_occupancy mbm_total_bytes mbm_local_bytes; do mk "$T/mon_data/mon_L3_00/$f" 0; done
mk "$T/tasks" ""
mk "$T/mon_groups/pmon-999999999-1/tasks" "" # a crashed pmon's: removed at start

# A sleeping task in cgroup one.
sh -c 'echo $$ >"$1/cgroup.procs" && exec sleep 1000' sh "$BASE/one" &
W1=$!
check "the task is in cgroup one" poll 50 grep -qx "$W1" "$BASE/one/cgroup.procs"

start_serve --cgroup "$BASE/one" --cgroup "$BASE/two" --rdt --resctrl-root "$T" \
	-e task-clock --interval 200 || { finish; exit; }
check "no warning: the (emulated) resctrl is used" sh -c "! grep -q 'warning' '$TMP/serve.err'"
check "the stale group of a crashed pmon is removed" [ ! -e "$T/mon_groups/pmon-999999999-1" ]
ngroups() { ls -d "$T"/mon_groups/pmon-"$SPID"-* 2>/dev/null | wc -l; }
check "a monitoring group per cgroup ($(ngroups))" [ "$(ngroups)" -eq 2 ]
# Which group follows cgroup one: the one its task was written into.
G1=
group_of_w1() { G1=$(grep -lx "$W1" "$T"/mon_groups/pmon-"$SPID"-*/tasks 2>/dev/null | head -1); [ -n "$G1" ]; }
check "cgroup one's task is moved into a group" poll 300 group_of_w1
G1=${G1%/tasks}
REL1=mon_groups/${G1##*/}
L1="/$NAME/one"
L2="/$NAME/two"

# The kernel's figures for that group, the root, and cgroup two's group.
printf '4096\n' >"$G1/mon_data/mon_L3_00/llc_occupancy"
printf '123456\n' >"$G1/mon_data/mon_L3_00/mbm_total_bytes"
printf '999999\n' >"$T/mon_data/mon_L3_00/llc_occupancy"
rows_there() {
	[ "$(http /metrics)" = 200 ] &&
		grep -qx "pmon_rdt_llc_occupancy_bytes{domain=\"mon_L3_00\",group=\"$REL1\",cgroup=\"$L1\"} 4096" "$TMP/body" &&
		grep -qx "pmon_rdt_mbm_total_bytes_total{domain=\"mon_L3_00\",group=\"$REL1\",cgroup=\"$L1\"} 123456" "$TMP/body"
}
check "cgroup one's occupancy and bandwidth exported" poll 300 rows_there
cp "$TMP/body" "$TMP/m1.txt"
check "the whole system's row (the root group)" grep -qx 'pmon_rdt_llc_occupancy_bytes{domain="mon_L3_00",group="/",cgroup=""} 999999' "$TMP/m1.txt"
check "cgroup two has its own group's rows" grep -q "^pmon_rdt_llc_occupancy_bytes{domain=\"mon_L3_00\",group=\"mon_groups/pmon-$SPID-[0-9]*\",cgroup=\"$L2\"} 0\$" "$TMP/m1.txt"
check "pmon_rdt_available 1" grep -qx 'pmon_rdt_available 1' "$TMP/m1.txt"
check "pmon_rdt_errors_total 0" grep -qx 'pmon_rdt_errors_total 0' "$TMP/m1.txt"
if command -v promtool >/dev/null 2>&1; then
	check "promtool check metrics with RDT rows" sh -c "promtool check metrics <'$TMP/m1.txt' >/dev/null 2>&1"
fi

# A task that joins cgroup two later is moved into two's group; the task of
# one that moves to two leaves one's group for two's.
sh -c 'echo $$ >"$1/cgroup.procs" && exec sleep 1000' sh "$BASE/two" &
W2=$!
G2=
group_of_w2() { G2=$(grep -lx "$W2" "$T"/mon_groups/pmon-"$SPID"-*/tasks 2>/dev/null | head -1); [ -n "$G2" ]; }
check "a task that joined cgroup two is moved into a group" poll 300 group_of_w2
check "...not cgroup one's" [ "${G2%/tasks}" != "$G1" ]
echo "$W1" >"$BASE/two/cgroup.procs"
# The emulated tasks files only grow (the kernel's list the members): the
# move shows as W1 written to the root group, then into two's group.
w1_moved() { grep -qx "$W1" "$T/tasks" && grep -qx "$W1" "$G2"; }
check "a task moved from one to two follows (root, then two's group)" poll 300 w1_moved

stop_serve
check "SIGTERM: exit 0 ($STATUS)" [ "$STATUS" -eq 0 ]
check "its groups are removed" [ "$(ngroups)" -eq 0 ]
check "no descriptor left open" sh -c "! grep -q 'still open' '$TMP/serve.err'"
finish
