#!/bin/sh
# SPDX-License-Identifier: MIT
# perf-record.sh ARGS...: `perf record ARGS`, for the tests that compare
# pmon with perf on perf's own recordings.
#
# perf 6.1 (Debian 12) on newer kernels aborts in its build-id pass after the
# command has ended (an assertion in util/build-id.c, then "stack smashing
# detected"): every time with a workload that has samples on one 6.18 KVM
# guest, now and then on others. The recording it leaves is torn, and a
# comparison with it fails for perf's reason, not pmon's. The pass dies on
# the build ids of the kernel's BPF programs (the records
# --no-bpf-event leaves out: with it perf records whole, seen on that guest).
# Where perf is killed by a signal, the recording is made again with
# --no-bpf-event, then with --buildid-mmap (perf >= 5.12: the kernel puts
# each build id in its MMAP2 record and perf skips that pass), then with -B
# (no build ids). Each retry is said on standard error.
#
# With -o - (pipe mode) the first try's output is held in a file and given
# out only once a try succeeded: a torn stream must not reach the reader.
pipe=
for a in "$@"; do
	[ "$a" = "--" ] && break
	[ "$a" = "-" ] && pipe=1
done
if [ -n "$pipe" ]; then
	held=$(mktemp "${TMPDIR:-/tmp}/perf-record.XXXXXX") || exit 1
	trap 'rm -f "$held"' EXIT
fi
rec() {
	if [ -n "$pipe" ]; then perf record "$@" >"$held"; else perf record "$@"; fi
}
rec "$@"
rc=$?
# Only perf's own death (SIGABRT, SIGBUS, SIGFPE, SIGSEGV) is retried: a
# refused option (perf exits 129 for usage) or permission is the answer the
# caller tests for.
case $rc in 134 | 135 | 136 | 139) crashed=1 ;; *) crashed= ;; esac
if [ -n "$crashed" ]; then
	for again in --no-bpf-event --buildid-mmap -B; do
		echo "perf-record.sh: perf record failed (exit $rc): again with $again" >&2
		rec $again "$@"
		rc=$?
		[ $rc -eq 0 ] && break
	done
fi
[ -n "$pipe" ] && [ $rc -eq 0 ] && cat "$held"
exit $rc
