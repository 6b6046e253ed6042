#!/bin/sh
# Every command given bad input (issue #14.9-10, docs/exit-codes.md): an
# unknown option, a missing value, an unknown event, a missing or malformed
# file, a vanished process, an unwritable output. Each row: the documented
# status and exactly one stderr line "pmon: ..." saying what and why.
. "$(dirname "$0")/lib.sh"

printf 'garbage\n' >"$TMP/bad.txt"
mkdir "$TMP/dir"
mkfifo "$TMP/fifo" # a trace read from a FIFO must not wait for a writer
# What a reader given the wrong file says it is (#14.11): perf's file and
# pipe headers (tools/perf/util/header.c: the magic, then the header's size)
# with nothing after them are read as perf.data (#26) and found cut short;
# one from a big-endian machine is refused; an empty file, and pmon's own
# recording and trace given to the other reader.
printf 'PERFILE2\150\0\0\0\0\0\0\0' >"$TMP/perf.data"
printf 'PERFILE2\020\0\0\0\0\0\0\0' >"$TMP/pipe.data"
printf '2ELIFREP\0\0\0\0\0\0\0\150' >"$TMP/be.data"
: >"$TMP/empty.data"
"$PMON" record -e task-clock -o "$TMP/rec.data" -- true 2>/dev/null
PMON_EVENTS=page-faults PMON_OUTPUT=/dev/null "$PMON" trace -o "$TMP/t.trace" -- \
	"$PMON_WORKLOADS/wl-tracehooks" 10 >/dev/null 2>&1
GONE=999999999 # a pid no system has (pid_max is at most 2^22)

while IFS='|' read -r code text args; do
	case $code in '' | '#'*) continue ;; esac
	# shellcheck disable=SC2086
	eval "set -- $args"
	run_pmon "$code" "$@"
	one_line_error "$text"
done <<ROWS
# unknown options and missing values: one line, not getopt's two nor the usage
2|unknown option '--bogus' (see 'pmon info --help')|info --bogus
2|unknown option '--bogus' (see 'pmon cpuid --help')|cpuid --bogus
2|unknown option '--bogus' (see 'pmon stat --help')|stat --bogus -- true
2|unknown option '-z' (see 'pmon stat --help')|stat -z -- true
2|option '-e' needs a value (see 'pmon stat --help')|stat -e
2|option '--event' needs a value (see 'pmon stat --help')|stat --event
2|option '--json' takes no value (see 'pmon stat --help')|stat --json=1 -- true
2|option '--per' is ambiguous (see 'pmon stat --help')|stat --per -- true
2|unknown option '--bogus' (see 'pmon list --help')|list --bogus
2|unknown option '--bogus' (see 'pmon bench --help')|bench --bogus
2|unknown option '--bogus' (see 'pmon rdpmc --help')|rdpmc --bogus
2|unknown option '--bogus' (see 'pmon msr --help')|msr --bogus
2|unknown option '--bogus' (see 'pmon record --help')|record --bogus -- true
2|option '-o' needs a value (see 'pmon record --help')|record -o
2|unknown option '--bogus' (see 'pmon report --help')|report --bogus
2|unknown option '--bogus' (see 'pmon annotate --help')|annotate --bogus
2|unknown option '--bogus' (see 'pmon top --help')|top --bogus
2|unknown option '--bogus' (see 'pmon plot --help')|plot --bogus
2|unknown option '--bogus' (see 'pmon simulate --help')|simulate --bogus -- true
2|unknown option '--bogus' (see 'pmon trace --help')|trace --bogus
2|unknown kernel channel 'bogus' (sched, syscalls, faults, irq, softirq, block, kvm, or all; 'pmon trace -e help' lists them)|trace -e sched,bogus -- true
2|--duration 'soon' is not a number of seconds|trace --duration soon -- true
2|--hooks needs a COMMAND|trace --hooks -p 1
2|process $GONE does not exist|trace -p $GONE
2|unknown option '--bogus' (see 'pmon rdt --help')|rdt --bogus
2|--cleanup takes no command|rdt --msr --cleanup -- true
2|'nosuch' is not a pmon command (see 'pmon --help')|nosuch
# unknown events and empty lists
2|event 'nosuchevent' is unknown|stat -e nosuchevent -- true
2|event 'nosuchevent' is unknown|top -b -n 1 -e nosuchevent -- true
2|event 'nosuchevent' is unknown|record -e nosuchevent -o $TMP/r.data -- true
2|event 'nosuchevent' is unknown|bench -e nosuchevent --asm nop
2|'nosuchevent' is not a simulated event (see 'pmon list sim')|simulate -e nosuchevent -- true
2|PMU 'nopmu' does not exist here|stat -e nopmu/event=1/ -- true
2|-e '': no event named|top -b -n 1 -e '' -- true
# -e again adds to the list: a bad first list is not dropped for the last
2|event 'nosuchevent' is unknown|top -b -n 1 -e nosuchevent -e task-clock -- true
2|event 'nosuchevent' is unknown|bench -e nosuchevent -e task-clock --asm nop
2|unknown kernel channel 'bogus'|trace -e bogus -e sched -o $TMP/again.trace -- true
2|unknown kernel channel 'bogus'|trace -k sched -e bogus -o $TMP/again.trace -- true
2|empty event in the list|top -b -n 1 -e task-clock,,cpu-clock -- true
2|each event on its own row|top -b -n 1 -e {task-clock,cpu-clock} -- true
2|-e '': no event named|record -e '' -o $TMP/r.data -- true
2|-n 0: at least 1 interval|top -b -n 0 -- true
# missing and malformed files
2|$TMP/missing.txt: No such file or directory|info --cpuid-file $TMP/missing.txt
2|$TMP/bad.txt:1: expected 'LLLLLLLL SS: EAX EBX ECX EDX', got 'garbage'|info --cpuid-file $TMP/bad.txt
2|$TMP/bad.txt:1: expected 'LLLLLLLL SS: EAX EBX ECX EDX'|cpuid --cpuid-file $TMP/bad.txt
2|$TMP/missing.data: No such file or directory|report -i $TMP/missing.data
2|$TMP/bad.txt: not a pmon recording|report -i $TMP/bad.txt
2|$TMP/dir: a directory, not a pmon recording|report -i $TMP/dir
2|$TMP/perf.data: perf.data is cut short: its header is 104 bytes, the file 16|report -i $TMP/perf.data
2|$TMP/pipe.data: perf.data in pipe mode is cut short: no event's attr (HEADER_ATTR)|report -i $TMP/pipe.data
2|$TMP/be.data: perf.data written on a big-endian machine: pmon reads little-endian perf.data only|report -i $TMP/be.data
2|$TMP/empty.data: an empty file, not a pmon recording|report -i $TMP/empty.data
2|$TMP/t.trace: a pmon trace, not a pmon recording ('pmon trace report' reads it)|report -i $TMP/t.trace
2|/dev/null: not a regular file, so not a pmon recording|report -i /dev/null
2|$TMP/missing.data: No such file or directory|annotate -i $TMP/missing.data
2|$TMP/bad.txt: not a pmon recording|annotate -i $TMP/bad.txt
2|$TMP/dir: a directory, not a pmon recording|annotate -i $TMP/dir
2|$TMP/perf.data: perf.data is cut short: its header is 104 bytes|annotate -i $TMP/perf.data
2|$TMP/perf.data: perf.data is cut short: its header is 104 bytes|simulate --compare $TMP/perf.data -- true
2|$TMP/missing.csv: No such file or directory|plot $TMP/missing.csv -o $TMP/x.svg
2|$TMP/dir: a directory, not an interval log|plot $TMP/dir -o $TMP/x.svg
2|$TMP/fifo: not a regular file, not an interval log|plot $TMP/fifo -o $TMP/x.svg
2|$TMP/bad.txt:1: 'garbage' is not a time|plot $TMP/bad.txt -o $TMP/x.svg
2|'$TMP/bad.txt' is not a pmon trace|trace report $TMP/bad.txt
2|'$TMP/dir' is a directory, not a pmon trace|trace report $TMP/dir
2|'$TMP/perf.data' is perf's recording, not a pmon trace: 'perf report -i $TMP/perf.data' or 'perf script -i $TMP/perf.data' reads it ('pmon report -i' reads it too)|trace report $TMP/perf.data
2|'$TMP/rec.data' is a pmon recording, not a pmon trace ('pmon report -i' reads it)|trace report $TMP/rec.data
2|cannot read trace '$TMP/nonexistent.trace': No such file or directory|trace report $TMP/nonexistent.trace
2|'$TMP/fifo' is not a regular file, so not a pmon trace|trace report $TMP/fifo
2|'NOSUCH' is not an MSR pmon knows by name|msr read NOSUCH
2|is not a 32-bit value|rdpmc --ecx 0x1ffffffff
# vanished processes
2|process $GONE does not exist|stat -e task-clock -p $GONE
2|process $GONE does not exist|top -b -p $GONE
2|process $GONE does not exist|record -p $GONE -o $TMP/r.data
2|process $GONE does not exist|rdt -p $GONE
# outputs that cannot be written: refused before anything runs
2|cannot write '$TMP/nodir/x.txt': its directory '$TMP/nodir' does not exist|stat -e task-clock -o $TMP/nodir/x.txt -- true
2|cannot write '$TMP/nodir/x.data'|record -o $TMP/nodir/x.data -- true
2|cannot write '$TMP/nodir/x.csv'|top -b -n 1 -o $TMP/nodir/x.csv -- true
2|cannot write '$TMP/dir': it is a directory|record -o $TMP/dir -- true
2|cannot write '$TMP/nodir/x.svg'|rdt --resctrl-root $TMP/dir --plot $TMP/nodir/x.svg -- true
2|'$TMP/x.gif': the picture's name must end in .svg or .png|rdt --resctrl-root $TMP/dir --plot $TMP/x.gif -- true
# commands that cannot be executed: 127, the reason whole even for a long name
127|cannot run '/nonexistent': No such file or directory|stat -e task-clock -- /nonexistent
127|cannot run '/nonexistent': No such file or directory|record -o $TMP/r.data -- /nonexistent
127|cannot run '/nonexistent': No such file or directory|top -b -n 1 -e task-clock -- /nonexistent
127|File name too long|stat -e task-clock -- $(printf '%05000d' 0)
127|File name too long|top -b -n 1 -e task-clock -- $(printf '%05000d' 0)
ROWS

# Not possible on this machine: 3 (no hardware PMU here, a VM).
if [ ! -e /sys/bus/event_source/devices/cpu ] && [ ! -e /sys/bus/event_source/devices/cpu_core ]; then
	for c in "stat -e cycles -- true" "stat -e cpu/event=0x3c/ -- true" \
		"top -b -n 1 -e cycles -- true" "record -e cycles -o $TMP/r.data -- true" \
		"record -e cpu/event=0x3c/ -o $TMP/r.data -- true"; do
		# shellcheck disable=SC2086
		run_pmon 3 $c
		one_line_error "PMU"
	done
fi
# A garbage file's high bytes are not printed raw: the line is UTF-8, with
# '?' for what is not (a UTF-8 name still reads as it is).
printf '\377\376\200garbage \303\251t\303\251\n' >"$TMP/high.txt"
run_pmon 2 info --cpuid-file "$TMP/high.txt"
one_line_error "got '???garbage été'"
# A permission pmon lacks (not as root: root bypasses file modes).
if [ "$(id -u)" != 0 ]; then
	: >"$TMP/ro.data"
	chmod 000 "$TMP/ro.data"
	run_pmon 2 report -i "$TMP/ro.data"
	one_line_error "Permission denied"
fi
# Strings from a file reach the terminal with their control bytes masked
# (issue #31): a dump's brand string, a trace's channel names. ESC is 0x1b.
esc=$(printf '\033')
sed 's/^80000002 00: 65746e49/80000002 00: 31335b1b/' \
	"$PMON_CPUID_DIR/intel-core-i7-6700k-skylake.txt" >"$TMP/esc-cpuid.txt"
run_pmon 0 info --cpuid-file "$TMP/esc-cpuid.txt"
check "info: the brand string's ESC is not printed" sh -c "! grep -q '$esc' '$TMP/out'"
check "info: it is shown masked" grep -q '^  CPU .*?\[31l(R) Core(TM) i7-6700K' "$TMP/out"
cat >"$TMP/esc.c" <<'C'
#include <pmon/trace.h>
int main(void)
{
	unsigned ch = pmon_trace_channel("\033[31mred\007");
	for (int i = 0; i < 3; i++) {
		pmon_trace_begin(ch);
		pmon_trace_end(ch);
	}
	return 0;
}
C
if cc ${PMON_USER_CFLAGS:-} -I"$PMON_SRC/include" "$TMP/esc.c" -o "$TMP/esc" -L"$PMON_BUILD" \
	-Wl,-rpath,"$PMON_BUILD" -lpmon 2>"$TMP/cc.err"; then
	run_pmon 0 trace -o "$TMP/esc.trace" -- "$TMP/esc"
	run_pmon 0 trace report "$TMP/esc.trace"
	check "trace report: a channel's ESC and BEL are not printed" \
		sh -c "! grep -q -e '$esc' -e '$(printf '\007')' '$TMP/out'"
	check "trace report: the channel is listed, masked" grep -q '^  ?\[31mred? ' "$TMP/out"
	run_pmon 0 trace report --format ticks "$TMP/esc.trace"
	check "trace report ticks: no ESC" sh -c "! grep -q '$esc' '$TMP/out'"
else
	not_ok "cannot build a trace program against libpmon: $(head -c 200 "$TMP/cc.err")"
fi
finish
