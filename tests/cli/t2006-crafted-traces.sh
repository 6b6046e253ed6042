#!/bin/sh
# Crafted traces, recordings and logs whose shape once made pmon's readers
# take time or memory beyond the file's size (issue #31.5, #31.6): fake
# chunk headers that each cost a CRC of a long claimed payload (trace
# report and report alike), 200,000 unknown syscall numbers (a search of
# the kernel channels, and of the open spans, per record), a sparse trace
# of gigabytes (read into memory whole), 20,000 functions in one compile
# unit (its DWARF walked per address for pprof) and a log with a line of
# megabytes (held whole). Each is read under a resource limit -- CPU
# seconds, and address space where no sanitizer reserves its shadow -- far
# above what the linear reader needs and far below what the old one took;
# the counts printed are checked.
. "$(dirname "$0")/lib.sh"
CRAFT_T="python3 $(dirname "$0")/craft-trace.py"
CRAFT_P="python3 $(dirname "$0")/craft-perfdata.py"
# marks: the "good" channel's marks in trace report's table
marks() { awk '$1 == "good" { print $8 }' "$TMP/out"; }

# 8 MB of fake TEVT headers, one every 16 bytes, each claiming the rest:
# a CRC of each was quadratic (4 MB took 77 s).
$CRAFT_T resync 8000000 >"$TMP/resync.trc"
bounded 1048576 "$PMON" trace report "$TMP/resync.trc" >"$TMP/out" 2>"$TMP/err"
check "8 MB of fake chunk headers: reported within the limits (exit $?)" [ $? -eq 0 ]
check "the 3 marks after them ($(marks))" [ "$(marks)" = 3 ]
check "the damage said in one warning" \
	sh -c "[ \$(wc -l <'$TMP/err') = 1 ] && grep -q '1 damaged chunks (8000000 bytes) skipped' '$TMP/err'"

# 200,000 sys_enter records of numbers no table names: 200,000 channels.
$CRAFT_T syscalls 200000 >"$TMP/sys.trc"
bounded 1048576 "$PMON" trace report "$TMP/sys.trc" >"$TMP/out" 2>"$TMP/err"
check "200,000 unknown syscall numbers: reported within the limits (exit $?)" [ $? -eq 0 ]
check "each its own channel, every record counted" \
	sh -c "grep -q '200003 events, 200001 channels' '$TMP/out' &&
		grep -q '^# kernel events: 200000 ' '$TMP/out' && [ '$(marks)' = 3 ]"

# A trace followed by 1.5 GB of zeros (sparse): read whole into memory,
# it did not fit in 1 GiB.
$CRAFT_T syscalls 0 >"$TMP/sparse.trc"
truncate -s 1500M "$TMP/sparse.trc"
bounded 1048576 "$PMON" trace report "$TMP/sparse.trc" >"$TMP/out" 2>"$TMP/err"
check "a 1.5 GB sparse trace: reported within the limits (exit $?)" [ $? -eq 0 ]
check "its 3 marks, and the zeros said as damage" \
	sh -c "[ '$(marks)' = 3 ] && grep -q '1 damaged chunks (1572863532 bytes) skipped' '$TMP/err'"
rm -f "$TMP/sparse.trc"

# pmon's own recording: 2 MB of fake CHNK headers, one every 16 bytes,
# each claiming 512 KiB that never leads to a header (~8 s per MB).
$CRAFT_P chunks 2000000 >"$TMP/chunks.pmon"
bounded 1048576 "$PMON" report -i "$TMP/chunks.pmon" --sort dso >"$TMP/out" 2>"$TMP/err"
check "a recording with 2 MB of fake chunk headers: reported within the limits (exit $?)" [ $? -eq 0 ]
check "the 8 samples of its 2 good chunks" \
	sh -c "grep -q '^# pmon report: 8 samples' '$TMP/out' && grep -q 'reporting the 2 good chunks' '$TMP/err'"

# pprof of 20,000 functions in one compile unit: each address's lines
# walked the unit's DWARF (dwarf_getscopes(): 50,000 took minutes).
awk 'BEGIN { for (i = 0; i < 20000; i++) printf "int f%d(int x) { return x + %d; }\n", i, i;
	print "int main(void) { return f0(0); }" }' >"$TMP/many.c"
if cc -g1 -O0 -o "$TMP/many" "$TMP/many.c" 2>"$TMP/cc.err"; then
	$CRAFT_P funcs "$TMP/many" >"$TMP/many.data"
	bounded 1048576 "$PMON" report -i "$TMP/many.data" --format pprof -o "$TMP/many.pb" >"$TMP/out" 2>"$TMP/err"
	check "pprof of 20,000 functions in one unit: within the limits (exit $?)" [ $? -eq 0 ]
	bounded 1048576 "$PMON" report -i "$TMP/many.data" --sort sym >"$TMP/out" 2>"$TMP/err"
	check "each of the 20,000 a sample of its own ($(grep -Ec ' 1 +f[0-9]+$' "$TMP/out"))" \
		[ "$(grep -Ec ' 1 +f[0-9]+$' "$TMP/out")" = 20000 ]
else
	ok "# SKIP pprof of many functions: no C compiler ($(head -c 100 "$TMP/cc.err"))"
fi

# An interval log of 64 MiB of zeros (sparse): one line, held whole.
truncate -s 64M "$TMP/zero.log"
run_pmon 2 plot "$TMP/zero.log" -o "$TMP/zero.png"
one_line_error "zero.log:1: a line longer than 1 MiB, not a pmon interval log"
check "nothing written" [ ! -e "$TMP/zero.png" ]
finish
