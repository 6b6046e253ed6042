#!/bin/sh
# Every public header compiles alone, first in a translation unit, under
# strict ISO C99, C11 and C17 with -pedantic (no GNU extensions assumed, no
# feature-test macro expected from the user).
. "$(dirname "$0")/lib.sh"
: "${PMON_SRC:?set PMON_SRC}"

for h in "$PMON_SRC"/include/pmon/*.h; do
	name=$(basename "$h")
	for std in c99 c11 c17; do
		printf '#include <pmon/%s>\nint pmon_header_test_%s;\n' "$name" "$std" >"$TMP/t.c"
		if cc -std=$std -pedantic -Wall -Wextra -Werror -fsyntax-only \
			-I"$PMON_SRC/include" "$TMP/t.c" 2>"$TMP/cc.err"; then
			ok "<pmon/$name> compiles alone under -std=$std -pedantic"
		else
			not_ok "<pmon/$name> under -std=$std: $(head -2 "$TMP/cc.err" | tr '\n' ' ')"
		fi
	done
done
finish
