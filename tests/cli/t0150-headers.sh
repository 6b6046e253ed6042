#!/bin/sh
# Every public header compiles alone, first in a translation unit, under
# strict ISO C99, C11 and C17 and ISO C++11 and C++17 with -pedantic (no GNU
# extensions assumed, no feature-test macro expected from the user), with
# gcc and clang; and the region macros and inline functions, which expand in
# the user's code, compile there too (issue #29: PMON_REGION_BEGIN/END were
# statement expressions, which ISO C forbids).
. "$(dirname "$0")/lib.sh"
: "${PMON_SRC:?set PMON_SRC}"

# compile LANG STD COMPILER FILE: -pedantic -Werror, syntax only.
compile() {
	"$3" -x "$1" -std="$2" -pedantic -Wall -Wextra -Werror -fsyntax-only \
		-I"$PMON_SRC/include" "$4" 2>"$TMP/cc.err"
}

cat >"$TMP/use.c" <<'C'
#include <pmon/region.h>
int pmon_header_use(void);
int pmon_header_use(void)
{
	unsigned s = 0;
	PMON_REGION_BEGIN("loop");
	for (unsigned i = 0; i < 10; i++)
		s += i;
	PMON_REGION_END("loop");
	if (s)
		PMON_REGION_BEGIN("after");
	else
		PMON_REGION_END("after");
	pmon_region_begin(1);
	pmon_region_end(1);
	return (int)s;
}
C

for cc in cc clang; do
	command -v $cc >/dev/null 2>&1 || { ok "# SKIP $cc: not installed"; continue; }
	for std in c99 c11 c17; do
		for h in "$PMON_SRC"/include/pmon/*.h; do
			name=$(basename "$h")
			printf '#include <pmon/%s>\nint pmon_header_test_%s;\n' "$name" "$std" >"$TMP/t.c"
			if compile c $std $cc "$TMP/t.c"; then
				ok "$cc: <pmon/$name> compiles alone under -std=$std -pedantic"
			else
				not_ok "$cc: <pmon/$name> under -std=$std: $(head -2 "$TMP/cc.err" | tr '\n' ' ')"
			fi
		done
		check "$cc: the region macros expand under -std=$std -pedantic" compile c $std $cc "$TMP/use.c"
	done
done
for cxx in c++ clang++; do
	command -v $cxx >/dev/null 2>&1 || { ok "# SKIP $cxx: not installed"; continue; }
	for std in c++11 c++17; do
		for h in "$PMON_SRC"/include/pmon/*.h; do
			name=$(basename "$h")
			printf '#include <pmon/%s>\nint pmon_header_test;\n' "$name" >"$TMP/t.cc"
			if compile c++ $std $cxx "$TMP/t.cc"; then
				ok "$cxx: <pmon/$name> compiles alone under -std=$std -pedantic"
			else
				not_ok "$cxx: <pmon/$name> under -std=$std: $(head -2 "$TMP/cc.err" | tr '\n' ' ')"
			fi
		done
		check "$cxx: the region macros expand under -std=$std -pedantic" compile c++ $std $cxx "$TMP/use.c"
	done
done
finish
