#!/bin/sh
# The library's messages never name a pmon command (issue #11: a program
# linking libpmon has no 'pmon list'); the tool adds the hint where it prints
# the error (cli_hint(), cli/util.c). A string literal in lib/ with a quoted
# 'pmon CMD', a "pmon CMD -option" or "see 'pmon" is such a hint.
. "$(dirname "$0")/lib.sh"
: "${PMON_SRC:?set PMON_SRC}"

grep -rnE "\"[^\"]*('pmon [a-z]|pmon [a-z]+( [a-z]+)? -|see 'pmon)" \
	"$PMON_SRC/lib" "$PMON_SRC/include" --include='*.c' --include='*.h' |
	grep -vE '^[^:]+:[0-9]+:[[:space:]]*(\*|/\*|//)' >"$TMP/hits"
check "no library string names a pmon command: $(head -3 "$TMP/hits" | tr '\n' ' ')" \
	test ! -s "$TMP/hits"

# The tool still gives the hint with the library's message.
printf 'PMONDATA' >"$TMP/rec.data"
run_pmon 2 trace report "$TMP/rec.data"
one_line_error "'$TMP/rec.data' is a pmon recording, not a pmon trace ('pmon report -i' reads it)"
run_pmon 2 simulate -e nosuchevent -- true
one_line_error "'nosuchevent' is not a simulated event (see 'pmon list sim')"
printf 'garbage\n' >"$TMP/bad.csv"
run_pmon 2 plot "$TMP/bad.csv" -o "$TMP/x.svg"
one_line_error "not a pmon interval log (CSV of counts or of RDT domains, time first); 'pmon stat -I -x,' and 'pmon rdt -x,' write one"
finish
