# SPDX-License-Identifier: MIT
# Shared by bench/serve-cost.sh and bench/serve-load.sh (sourced): the
# configuration both measure -- 8 software events on all CPUs and 20 empty
# cgroups under a perf_event hierarchy -- and its removal. Needs TMP set.

EV=${SERVE_BENCH_EVENTS:-cpu-clock,task-clock,context-switches,cpu-migrations,page-faults,minor-faults,major-faults,alignment-faults}
CGMNT=
OWN_MOUNT=
BASE=

# bench_cgroups NAME: BASE becomes CGMNT/NAME-PID with cg1..cg20 in it, on
# the machine's perf_event hierarchy or on one mounted under TMP.
bench_cgroups() {
	CGMNT=$(grep ' - cgroup ' /proc/self/mountinfo | grep -E '[ ,]perf_event(,|$)' | awk '{print $5; exit}')
	if [ -z "$CGMNT" ]; then
		mkdir -p "$TMP/cg"
		mount -t cgroup -o perf_event none "$TMP/cg"
		CGMNT=$TMP/cg
		OWN_MOUNT=1
	fi
	BASE=$CGMNT/$1-$$
	mkdir "$BASE"
	for i in $(seq 1 20); do mkdir "$BASE/cg$i"; done
}

# bench_cgroups_remove: undo bench_cgroups (from a trap: never fails).
bench_cgroups_remove() {
	if [ -n "$BASE" ]; then
		for d in "$BASE"/cg*; do [ -d "$d" ] && rmdir "$d" 2>/dev/null; done
		rmdir "$BASE" 2>/dev/null || true
	fi
	if [ -n "$OWN_MOUNT" ]; then umount "$TMP/cg" 2>/dev/null || umount -l "$TMP/cg"; fi
	return 0
}
