#!/bin/sh
# Outputs are the user's (issue #23, docs/exit-codes.md "Outputs"): every
# command that writes a file is given a device node (a private mknod copy
# of /dev/null), a FIFO nobody reads, a FIFO with a reader, a symbolic link
# another user planted in a sticky directory, a read-only directory and an
# existing file. The node, FIFO, link and file survive as they were, the
# link's target is untouched, nothing is left beside the output (no
# temporary, no PATH.kernel), nothing hangs, and the exit status is the
# documented one: 0 where the command streams into a device or FIFO, 2
# where it refuses.
. "$(dirname "$0")/lib.sh"
: "${PMON_WORKLOADS:?}"

if [ "$(id -u)" != 0 ]; then
	echo "skip: needs root (mknod, a link owned by another user, a read-only bind mount)"
	exit 77
fi
if ! command -v timeout >/dev/null; then
	echo "skip: needs timeout (coreutils)"
	exit 77
fi

D=$TMP/d
mkdir "$D"
chmod 755 "$TMP"
# Inputs the readers need: a recording, a trace, an interval log.
"$PMON" record -g -e cpu-clock -c 100000 -o "$TMP/in.data" -- "$PMON_WORKLOADS/wl-hotcold" 20000000 \
	>/dev/null 2>&1 || not_ok "setup: record"
"$PMON" trace -o "$TMP/in.trace" -- "$PMON_WORKLOADS/wl-tracehooks" 50 >/dev/null 2>&1 ||
	not_ok "setup: trace"
"$PMON" stat -I 50 -x, -e task-clock -o "$TMP/in.csv" -- sleep 0.2 2>/dev/null ||
	not_ok "setup: stat -I"

# cmd_line KIND OUT: the command writing OUT, as a line for sh (the paths
# here have no spaces: mktemp's names).
cmd_line() {
	P="timeout 60 $PMON"
	case $1 in
	info) echo "$P info -o $2" ;;
	cpuid) echo "$P cpuid -o $2" ;;
	stat) echo "$P stat -e task-clock -o $2 -- true" ;;
	stat-I) echo "$P stat -I 50 -e task-clock -o $2 -- sleep 0.2" ;;
	record) echo "$P record -e cpu-clock -o $2 -- true" ;;
	report) echo "$P report -i $TMP/in.data -o $2" ;;
	report-pprof) echo "$P report -i $TMP/in.data --format pprof -o $2" ;;
	annotate) echo "$P annotate -i $TMP/in.data -o $2 hot" ;;
	simulate) echo "$P simulate -o $2 -- /bin/true" ;;
	trace) echo "$P trace -o $2 -- $PMON_WORKLOADS/wl-tracehooks 10" ;;
	trace-report) echo "$P trace report $TMP/in.trace -o $2" ;;
	plot) echo "$P plot $TMP/in.csv -o $2" ;;
	top) echo "$P top --batch -I 50 -n 2 -e task-clock -o $2 -- sleep 0.3" ;;
	region) echo "PMON_OUTPUT=$2 PMON_FORMAT=csv timeout 60 $PMON_WORKLOADS/wl-regions 3" ;;
	esac
}
run_cmd() { sh -c "$(cmd_line "$1" "$2")"; }
# Which of them stream into a device or FIFO (0) and which refuse (2):
# a trace is two files merged and read back.
want_stream() { [ "$1" = trace ] && echo 2 || echo 0; }
KINDS="info cpuid stat stat-I record report report-pprof annotate trace trace-report plot top region"
# simulate writes its recording as record does; valgrind runs it
command -v valgrind >/dev/null && KINDS="$KINDS simulate"

# nothing_beside DESC: no temporary or side file left in $D.
nothing_beside() {
	left=$(ls -A "$D" | grep -E '\.pmon-|\.kernel$' | head -3)
	check "$1: nothing left beside it${left:+ ($left)}" [ -z "$left" ]
}

# exit_is DESC WANT GOT
exit_is() { check "$1: exit $3, expected $2 ($(head -c 200 "$TMP/err"))" [ "$3" -eq "$2" ]; }

# refused DESC GOT TEXT: the output refused with one line naming TEXT, exit
# 2; a program's region report (the program measures on, exit 0) says it
# once as "pmon: regions: ..." and reports on standard error instead.
refused() {
	if [ "$k" = simulate ] && [ "$3" = "FIFO that nobody reads" ]; then
		# found when the recording is written, after the simulation's
		# own progress lines: exit 2, the reason on the last line
		exit_is "$1" 2 "$2"
		check "$1: the last line says why" sh -c "tail -1 '$TMP/err' | grep -q '^pmon: .*$3'"
	elif [ "$k" = region ]; then
		exit_is "$1" 0 "$2"
		check "$1: said once, naming '$3'" \
			[ "$(grep -c "^pmon: regions: .*$3" "$TMP/err")" -eq 1 ]
	else
		exit_is "$1" 2 "$2"
		one_line_error "$3"
	fi
}

for k in $KINDS; do
	ext=out
	[ "$k" = plot ] && ext=svg
	# 1. A device node: written to as a stream, or refused; it stays a node.
	rm -rf "$D" && mkdir "$D"
	mknod -m 666 "$D/dev.$ext" c 1 3
	run_cmd "$k" "$D/dev.$ext" >/dev/null 2>"$TMP/err"
	exit_is "$k -o a device" "$(want_stream "$k")" $?
	check "$k -o a device: still a character device" [ -c "$D/dev.$ext" ]
	nothing_beside "$k -o a device"
	[ "$(want_stream "$k")" = 2 ] && one_line_error "character device"

	# 2. A FIFO nobody reads: an error at once (2), never a hang (124).
	rm -rf "$D" && mkdir "$D"
	mkfifo "$D/fifo.$ext"
	run_cmd "$k" "$D/fifo.$ext" >/dev/null 2>"$TMP/err"
	st=$?
	check "$k -o a FIFO: still a FIFO" [ -p "$D/fifo.$ext" ]
	nothing_beside "$k -o a FIFO"
	if [ "$(want_stream "$k")" = 0 ]; then
		refused "$k -o a FIFO nobody reads" $st "FIFO that nobody reads"
		# 3. The same FIFO with a reader: the output goes through it.
		# The reader is there before pmon opens (a reader still on its
		# way into open() is a race, not a FIFO nobody reads): it opens
		# without blocking, says so, then reads to the writer's end.
		rm -f "$TMP/ready"
		timeout 60 python3 -c '
import os, select, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
open(sys.argv[2], "w").close()
with open(sys.argv[3], "wb") as out:
    while True:
        select.select([fd], [], [])
        b = os.read(fd, 65536)
        if not b:
            break
        out.write(b)' "$D/fifo.$ext" "$TMP/ready" "$TMP/fifo.got" &
		reader=$!
		n=0
		until [ -e "$TMP/ready" ] || [ $n -ge 500 ]; do
			n=$((n + 1))
			sleep 0.02
		done
		run_cmd "$k" "$D/fifo.$ext" >/dev/null 2>"$TMP/err"
		exit_is "$k -o a FIFO with a reader" 0 $?
		wait $reader
		check "$k -o a FIFO with a reader: the reader got the output" [ -s "$TMP/fifo.got" ]
		check "$k -o a FIFO with a reader: still a FIFO" [ -p "$D/fifo.$ext" ]
	else
		refused "$k -o a FIFO" $st "a FIFO"
	fi

	# 4. Another user's link in a sticky world-writable directory, to a file
	# of root's: not followed (protected_symlinks), whatever the sysctl says.
	rm -rf "$D" && mkdir "$D" && chmod 1777 "$D"
	echo precious >"$TMP/victim.$ext"
	ln -s "$TMP/victim.$ext" "$D/link.$ext"
	chown -h 65534:65534 "$D/link.$ext"
	run_cmd "$k" "$D/link.$ext" >/dev/null 2>"$TMP/err"
	refused "$k -o another user's link in /tmp" $? "symbolic link of another user"
	check "$k -o another user's link: the target is untouched" \
		[ "$(cat "$TMP/victim.$ext")" = precious ]
	check "$k -o another user's link: still a link" [ -L "$D/link.$ext" ]
	nothing_beside "$k -o another user's link"
	# ... and another user's file there (protected_regular): not written.
	echo theirs >"$D/theirs.$ext" && chown 65534:65534 "$D/theirs.$ext"
	run_cmd "$k" "$D/theirs.$ext" >/dev/null 2>"$TMP/err"
	refused "$k -o another user's file in /tmp" $? "a file of another user"
	check "$k -o another user's file: untouched" [ "$(cat "$D/theirs.$ext")" = theirs ]
	# Root's own link there is followed, and its target replaced, not the link.
	ln -s "$TMP/victim.$ext" "$D/mine.$ext"
	run_cmd "$k" "$D/mine.$ext" >/dev/null 2>"$TMP/err"
	exit_is "$k -o root's own link" 0 $?
	check "$k -o root's own link: still a link" [ -L "$D/mine.$ext" ]
	check "$k -o root's own link: its target was written" \
		[ "$(cat "$TMP/victim.$ext")" != precious ]
	nothing_beside "$k -o root's own link"

	# 5. An existing file: replaced (a new inode for the commands that
	# write whole), its mode kept; nothing beside it.
	rm -rf "$D" && mkdir "$D"
	echo old >"$D/f.$ext" && chmod 640 "$D/f.$ext"
	run_cmd "$k" "$D/f.$ext" >/dev/null 2>"$TMP/err"
	exit_is "$k -o an existing file" 0 $?
	check "$k -o an existing file: written" [ "$(cat "$D/f.$ext")" != old ]
	if [ "$k" = record ] || [ "$k" = simulate ]; then
		check "$k: the old recording kept as FILE.old" [ "$(cat "$D/f.$ext.old")" = old ]
	else
		check "$k -o an existing file: its mode 640 kept" [ "$(stat -c %a "$D/f.$ext")" = 640 ]
	fi
	nothing_beside "$k -o an existing file"
done

# 6. A read-only directory (a read-only bind mount: root passes any mode
# bits): one line, exit 2, nothing created.
if unshare -m --propagation private true 2>/dev/null; then
	for k in $KINDS; do
		[ "$k" = region ] && continue # the program measures on: t1101
		ext=out
		[ "$k" = plot ] && ext=svg
		rm -rf "$D" && mkdir "$D"
		unshare -m --propagation private sh -c "
			mount --bind $D $D && mount -o remount,bind,ro $D || exit 99
			$(cmd_line "$k" "$D/new.$ext")" >/dev/null 2>"$TMP/err"
		exit_is "$k -o in a read-only directory" 2 $?
		check "$k -o in a read-only directory: nothing created" [ -z "$(ls -A "$D")" ]
		# an existing file there: no temporary can be made, nothing
		# written in its place; refused before anything runs
		echo keep >"$D/old.$ext"
		unshare -m --propagation private sh -c "
			mount --bind $D $D && mount -o remount,bind,ro $D || exit 99
			$(cmd_line "$k" "$D/old.$ext")" >/dev/null 2>"$TMP/err"
		exit_is "$k -o an existing file in a read-only directory" 2 $?
		check "$k -o an existing file in a read-only directory: kept" \
			[ "$(cat "$D/old.$ext")" = keep ]
	done
else
	echo "# skipped the read-only directory: unshare -m is not available"
fi

# 7. A failed run keeps the file it would have replaced, whole.
rm -rf "$D" && mkdir "$D"
echo keep >"$D/r.out"
run_pmon 2 report -i "$TMP/nonexistent.data" -o "$D/r.out"
check "a failed report keeps the old file" [ "$(cat "$D/r.out")" = keep ]
nothing_beside "a failed report"
# --hooks: the hooks alone (without it a program without hooks now gets
# its kernel events recorded, issue #28), so /bin/true writes nothing.
run_pmon 1 trace --hooks -o "$D/r.out" -- /bin/true
check "a trace that wrote nothing keeps the old file" [ "$(cat "$D/r.out")" = keep ]
nothing_beside "a trace that wrote nothing"

run_pmon 127 stat -e task-clock -o "$D/r.out" -- "$TMP/no-such-program"
check "a command that cannot run: stat -o keeps the old file" [ "$(cat "$D/r.out")" = keep ]
nothing_beside "stat of a command that cannot run"
# A link on the way, not only the last one: another user's link to a
# directory, planted in a sticky directory, is not followed either.
mkdir "$D/sticky" "$D/real" && chmod 1777 "$D/sticky"
ln -s "$D/real" "$D/sticky/evil" && chown -h 65534:65534 "$D/sticky/evil"
run_pmon 2 stat -e task-clock -o "$D/sticky/evil/x.out" -- true
one_line_error "symbolic link of another user"
check "nothing written through a planted directory link" [ ! -e "$D/real/x.out" ]

# An output that is the command's input: refused before it is written over.
cp "$TMP/in.data" "$D/same.data"
sum=$(cksum <"$D/same.data")
run_pmon 2 report -i "$D/same.data" -o "$D/same.data"
one_line_error "is the input"
check "report -i R -o R: the recording untouched" [ "$(cksum <"$D/same.data")" = "$sum" ]
run_pmon 2 annotate -i "$D/same.data" -o "$D/same.data" hot
check "annotate -i R -o R: the recording untouched" [ "$(cksum <"$D/same.data")" = "$sum" ]
cp "$TMP/in.trace" "$D/same.trace"
sum=$(cksum <"$D/same.trace")
run_pmon 2 trace report "$D/same.trace" -o "$D/same.trace"
check "trace report T -o T: the trace untouched" [ "$(cksum <"$D/same.trace")" = "$sum" ]
echo keep >"$D/both.svg"
run_pmon 2 stat -I 50 -x, -o "$D/both.svg" --plot "$D/both.svg" -- true
one_line_error "name two files"
check "stat -o F --plot F: F untouched" [ "$(cat "$D/both.svg")" = keep ]
run_pmon 2 stat -I 50 -x, -o "$D/new.svg" --plot "$D/./new.svg" -- true
one_line_error "name two files"

# A command shorter than one interval: its one line is in the log, and
# --plot has a point to draw (it was a sliver under 1 ms, dropped, and
# --plot then failed a command that succeeded).
for i in 1 2 3; do
	run_pmon 0 stat -I 100 -x, -e task-clock -o "$D/short.csv" --plot "$D/short.svg" -- true
	check "a command shorter than -I: its interval in the log (run $i)" \
		grep -q ',task-clock,' "$D/short.csv"
	check "a command shorter than -I: the plot drawn (run $i)" grep -q '<svg' "$D/short.svg"
done

# A link to a file not there yet (outside shared directories) creates it
# where it points, as open(O_CREAT) and perf do; the link stays.
ln -s "$D/made-here.out" "$D/ahead.out"
run_pmon 0 stat -e task-clock -o "$D/ahead.out" -- true
check "a link to a file not there yet: the file made where it points" \
	grep -q task-clock "$D/made-here.out"
check "a link to a file not there yet: still a link" [ -L "$D/ahead.out" ]
# A descriptor that is not open.
run_pmon 2 stat -e task-clock -o /dev/fd/9 -- true
one_line_error "descriptor 9 is not open"

# A full disk: exit 1 with the reason, the file named left as it was,
# nothing beside it (a private tmpfs, filled up).
if unshare -m --propagation private true 2>/dev/null; then
	rm -rf "$D" && mkdir "$D"
	for k in report plot trace-report stat; do
		ext=out
		[ "$k" = plot ] || [ "$k" = trace-report ] && ext=svg
		unshare -m --propagation private sh -c "
			mount -t tmpfs -o size=256k none $D || exit 99
			echo keep >$D/f.$ext
			head -c 1000000 /dev/zero >$D/filler 2>/dev/null
			$(cmd_line "$k" "$D/f.$ext")
			st=\$?
			[ \"\$(cat $D/f.$ext)\" = keep ] || exit 98
			ls -A $D | grep -q pmon- && exit 97
			exit \$st" >/dev/null 2>"$TMP/err"
		st=$?
		check "$k -o on a full disk: exit 1, the file kept, nothing beside it (got $st)" \
			[ "$st" -eq 1 ]
		one_line_error "No space left on device"
	done
fi

# 8. A signal pmon does not handle (SIGQUIT) while a temporary is open:
# removed on the way out, the old file whole. (A shell starts a background
# job with SIGQUIT ignored: env gives it its default back.)
# has_temp NAME: a temporary of NAME's is in $D now.
has_temp() { ls -A "$D" | grep -q "^\.$1\.pmon-"; }
# wait_temp NAME: until pmon has made it (it runs), 10 s at most.
wait_temp() {
	n=0
	until has_temp "$1" || [ $n -ge 500 ]; do
		n=$((n + 1))
		sleep 0.02
	done
}
echo keep >"$D/q.out"
env --default-signal=QUIT "$PMON" stat -e task-clock -o "$D/q.out" -- sleep 30 2>/dev/null &
pid=$!
wait_temp 'q\.out'
check "stat -o: a temporary beside the file while it runs" has_temp 'q\.out'
kill -QUIT $pid
wait $pid
st=$?
check "SIGQUIT: pmon died by it ($st)" [ "$st" -eq $((128 + 3)) ]
check "SIGQUIT: the old file whole" [ "$(cat "$D/q.out")" = keep ]
nothing_beside "SIGQUIT"
# SIGTERM is passed to the command: stat writes its counts and ends.
"$PMON" stat -e task-clock -o "$D/t.out" -- sleep 30 2>/dev/null &
pid=$!
wait_temp 't\.out'
check "stat -o: a temporary beside the file while it runs (2)" has_temp 't\.out'
# once the command runs (a SIGTERM before its exec ends it unmeasured: the
# file then keeps what it held, exit 143)
i=0
while ! pgrep -P $pid -x sleep >/dev/null 2>&1 && [ $i -lt 500 ]; do
	sleep 0.01
	i=$((i + 1))
done
kill -TERM $pid
wait $pid
check "SIGTERM: the counts are written" grep -q task-clock "$D/t.out"
nothing_beside "SIGTERM"

# 9. simulate --compare REC with -o the same file: refused before anything
# runs, the recording untouched (it would have become pmon.data.old).
if command -v valgrind >/dev/null; then
	cp "$TMP/in.data" "$D/pmon.data"
	sum=$(cksum <"$D/pmon.data")
	(cd "$D" && "$PMON" simulate --compare pmon.data -- /bin/true >/dev/null 2>"$TMP/err")
	check "simulate --compare with the default -o: exit 2 ($?)" [ $? -eq 2 ]
	one_line_error "is the recording this simulation would write"
	check "simulate --compare: the recording untouched" [ "$(cksum <"$D/pmon.data")" = "$sum" ]
	check "simulate --compare: no pmon.data.old" [ ! -e "$D/pmon.data.old" ]
fi
finish
