#!/bin/sh
# libpmon as a user gets it: install to a prefix, build an example with the
# installed pkg-config file, link statically and dynamically, and run it.
. "$(dirname "$0")/lib.sh"
: "${PMON_BUILD:?set PMON_BUILD}"

cmake --install "$PMON_BUILD" --prefix "$TMP/prefix" >"$TMP/install.log" 2>&1
check "cmake --install succeeds" [ $? -eq 0 ]
check "pmon installed" [ -x "$TMP/prefix/bin/pmon" ]
check "headers installed" [ -f "$TMP/prefix/include/pmon/pmon.h" ]
pc=$(find "$TMP/prefix" -name libpmon.pc | head -1)
check "libpmon.pc installed" [ -n "$pc" ]
export PKG_CONFIG_PATH=$(dirname "$pc")
cflags=$(pkg-config --cflags libpmon) && libs=$(pkg-config --libs libpmon)
check "pkg-config knows libpmon" [ -n "$libs" ]

cc -Wall -Werror ${PMON_USER_CFLAGS:-} "$PMON_SRC/examples/rdpmc-map.c" $cflags $libs -o "$TMP/map-dyn" 2>"$TMP/cc.err"
check "example links against the shared library" [ $? -eq 0 ]
LD_LIBRARY_PATH=$(dirname "$(find "$TMP/prefix" -name 'libpmon.so' | head -1)") \
	"$TMP/map-dyn" "$PMON_CPUID_DIR/intel-core-i7-6700k-skylake.txt" >"$TMP/out"
check "it runs" [ $? -eq 0 ]
check "GP 3 valid on Skylake" grep -q "gp     3  ECX=00000003  ok" "$TMP/out"
check "GP 4 faults, with the rule" grep -q "gp     4  ECX=00000004  #GP     GP index 4 must be < CPUID.0AH:EAX\[15:8\] = 4" "$TMP/out"
check "fixed 2 valid" grep -q "fixed  2  ECX=40000002  ok" "$TMP/out"

cc -Wall -Werror ${PMON_USER_CFLAGS:-} "$PMON_SRC/examples/rdpmc-map.c" $cflags \
	"$(find "$TMP/prefix" -name libpmon.a | head -1)" $(pkg-config --libs --static libpmon | sed 's/-lpmon//') \
	-o "$TMP/map-static" 2>"$TMP/cc.err"
check "example links statically" [ $? -eq 0 ]
"$TMP/map-static" >/dev/null
check "the static one reads this CPU" [ $? -eq 0 ]
# Only pmon_-prefixed symbols are exported.
check "no stray exports" sh -c "! nm -D --defined-only '$(find "$TMP/prefix" -name 'libpmon.so.*.*' | head -1)' | awk '{print \$3}' | grep -v '^pmon_' | grep -q ."
finish
