#!/bin/sh
# Bad input to pmon info / pmon cpuid: one line naming file and line, exit 2.
. "$(dirname "$0")/lib.sh"

: >"$TMP/empty.txt"
run_pmon 2 info --cpuid-file "$TMP/empty.txt"
one_line_error "$TMP/empty.txt:1: no CPUID rows"

# Rows are 49 bytes: 190 bytes cut the fourth row's EDX to 3 digits.
grep -v '^#' "$PMON_CPUID_DIR/intel-core-i7-6700k-skylake.txt" | head -c 190 >"$TMP/trunc.txt"
run_pmon 2 info --cpuid-file "$TMP/trunc.txt"
one_line_error "$TMP/trunc.txt:4: register EDX has 3 hex digits, expected 8 (truncated?)"

head -c 4096 /bin/sh >"$TMP/garbage.bin"
run_pmon 2 info --cpuid-file "$TMP/garbage.bin"
one_line_error "$TMP/garbage.bin:1:"
check "no raw control characters on the terminal" sh -c "! grep -q \"\$(printf '\\001')\" '$TMP/err'"

printf 'this is not a dump\n' >"$TMP/text.txt"
run_pmon 2 info --cpuid-file "$TMP/text.txt"
one_line_error "$TMP/text.txt:1: expected 'LLLLLLLL SS: EAX EBX ECX EDX'"

run_pmon 2 info --cpuid-file "$TMP/does-not-exist.txt"
one_line_error "does-not-exist.txt: No such file or directory"

run_pmon 2 info --cpu 9999
one_line_error "--cpu 9999 is too large"
run_pmon 2 info --cpu 4000
one_line_error "cannot read CPUID of that CPU"
run_pmon 2 info --cpu abc
one_line_error "--cpu 'abc' is not a non-negative integer"
run_pmon 2 info --cpu 0 --cpuid-file "$TMP/text.txt"
one_line_error "exclude each other"
run_pmon 2 info extra
one_line_error "unexpected argument 'extra'"
run_pmon 2 nosuchcommand
one_line_error "'nosuchcommand' is not a pmon command"
run_pmon 2 cpuid --cpuid-file "$TMP/empty.txt"
one_line_error "no CPUID rows"

# A full disk is a write error, not a success.
if [ -w /dev/full ]; then
	"$PMON" info --cpuid-file "$PMON_CPUID_DIR/intel-pentium-pro.txt" >/dev/full 2>"$TMP/err"
	check "write to /dev/full exits 1" [ $? -eq 1 ]
	one_line_error "cannot write 'standard output': No space left on device"
fi
finish
