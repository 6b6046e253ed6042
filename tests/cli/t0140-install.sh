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
# Only pmon_-prefixed symbols are exported (version nodes are not symbols).
for lib in libpmon libpmon-report libpmon-plot; do
	so=$(find "$TMP/prefix" -name "$lib.so.*.*" | head -1)
	check "$lib.so installed" [ -n "$so" ]
	check "$lib: no stray exports" sh -c "! nm -D --defined-only '$so' | awk '\$2 != \"A\" {print \$3}' | grep -v '^pmon_' | grep -q ."
done
# The public API is versioned; the internals the sibling libraries share are
# in a private node.
core=$(find "$TMP/prefix" -name 'libpmon.so.*.*' | head -1)
check "public API under PMON_0.1" sh -c "objdump -T '$core' | grep -q 'PMON_0.1 *pmon_version\$'"
check "internals under PMON_PRIVATE_0.1" sh -c "objdump -T '$core' | grep -q 'PMON_PRIVATE_0.1 *pmon__err\$'"

# The lean core (issue #11): libpmon and the pmon binary need libc, zlib
# and jansson only (and a sanitizer build's runtimes, which may bring libm);
# the heavy libraries sit in libpmon-report, libpmon-plot and the UI
# modules. Not even libm: each library mapped costs every program linking
# libpmon ~10 page faults at start-up (bench/RESULTS.md, stat-overhead).
lean_deps() { # FILE: its direct dependencies other than the allowed ones
	needed=$(readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
	libm=libm
	echo "$needed" | grep -Eq '^lib(asan|tsan)\.so' || libm=libc
	echo "$needed" |
		grep -Ev "^(libc|$libm|libz|libjansson|ld-linux-x86-64|libasan|libubsan|libtsan|libgcc_s|libstdc\+\+)\.so" || true
}
check "libpmon.so needs only libc, zlib, jansson" [ -z "$(lean_deps "$core")" ]
check "pmon needs only libpmon, libc, zlib, jansson" \
	[ -z "$(lean_deps "$TMP/prefix/bin/pmon" | grep -v '^libpmon\.so\.0$')" ]
check "pmon binds to the shared libpmon" sh -c "readelf -d '$TMP/prefix/bin/pmon' | grep -q 'NEEDED.*libpmon\.so\.0'"
# The modules bind to the process's one libpmon (issue #25): none holds a
# copy of its functions or of the CLI helpers, which the executable exports.
for m in pmon-ui pmon-ui-report pmon-ui-annotate pmon-serve; do
	so=$(find "$TMP/prefix" -name $m.so)
	check "$m.so installed" [ -n "$so" ]
	check "$m.so holds no libpmon or CLI helper of its own" \
		sh -c "! nm --defined-only '$so' | grep -Eq ' [Tt] (pmon_|cli_)'"
done
check "pmon exports the CLI helpers to its modules" sh -c "nm -D --defined-only '$TMP/prefix/bin/pmon' | grep -q ' T cli_error\$'"
check "libpmon-report needs libdw" sh -c "readelf -d '$(find "$TMP/prefix" -name 'libpmon-report.so.*.*' | head -1)' | grep -q 'libdw'"
# pmon stat never loads the UI module: the counted command reads its parent's maps.
"$TMP/prefix/bin/pmon" stat -e task-clock -o /dev/null -- sh -c 'cat /proc/$PPID/maps' >"$TMP/maps" 2>"$TMP/maps.err"
check "pmon stat runs from the install" [ -s "$TMP/maps" ]
check "pmon stat maps no cairo, elfutils, capstone or ncurses" sh -c "! grep -E 'libcairo|libdw|libcapstone|libncurses|libprotobuf|pmon-ui' '$TMP/maps'"
# ...and the installed pmon finds its module for the commands that need it.
"$TMP/prefix/bin/pmon" plot --help >"$TMP/plot.help" 2>&1
check "installed pmon loads pmon-ui.so for plot" grep -qi 'usage' "$TMP/plot.help"
# pmon report maps elfutils but none of the libraries of plots, top and
# annotate (issue #16: they were half its resident memory). LD_DEBUG=files
# names every library the loader maps, at the time it maps it.
"$TMP/prefix/bin/pmon" record -e cpu-clock -F 1000 -g -o "$TMP/r.data" -- \
	"${PMON_WORKLOADS:-$PMON_BUILD/tests}/wl-hotcold" 3000000 >/dev/null 2>&1
check "the installed pmon records" [ -s "$TMP/r.data" ]
LD_DEBUG=files "$TMP/prefix/bin/pmon" report -i "$TMP/r.data" >"$TMP/report.out" 2>"$TMP/report.ld"
check "installed pmon reports" grep -q '^# pmon report' "$TMP/report.out"
check "pmon report loads pmon-ui-report.so and elfutils" sh -c "grep -q 'file=.*pmon-ui-report.so' '$TMP/report.ld' && grep -q 'file=libdw' '$TMP/report.ld'"
check "pmon report maps no cairo, X11, ncurses or capstone" sh -c "! grep -E 'file=.*(libcairo|libX11|libxcb|libfontconfig|libfreetype|libpixman|libncurses|libtinfo|libcapstone|pmon-ui\.so)' '$TMP/report.ld'"
LD_DEBUG=files "$TMP/prefix/bin/pmon" annotate -i "$TMP/r.data" hot >"$TMP/annotate.out" 2>"$TMP/annotate.ld"
check "installed pmon annotates, with capstone" sh -c "grep -q '^# pmon annotate: hot' '$TMP/annotate.out' && grep -q 'file=.*pmon-ui-annotate.so' '$TMP/annotate.ld' && grep -q 'file=libcapstone' '$TMP/annotate.ld'"
check "pmon annotate maps no cairo or ncurses" sh -c "! grep -E 'file=.*(libcairo|libncurses|pmon-ui\.so)' '$TMP/annotate.ld'"

# A region-instrumented program links the core alone.
cc -Wall -Werror ${PMON_USER_CFLAGS:-} "$PMON_SRC/examples/regions.c" $cflags $libs -o "$TMP/regions" 2>"$TMP/cc.err"
check "the regions example builds with libpmon alone" [ $? -eq 0 ]
check "it maps no heavy library" [ -z "$(lean_deps "$TMP/regions" | grep -v '^libpmon\.so')" ]

# Cflags carry our include path only, never a private dependency's.
for pc in libpmon libpmon-report libpmon-plot; do
	cf=$(pkg-config --cflags "$pc")
	check "pkg-config --cflags $pc names our headers only" sh -c "! printf '%s' '$cf' | tr ' ' '\n' | grep -v '^-I$TMP/prefix/' | grep -q ."
done

# Man pages and completions where the FHS and the shells look (issue #30),
# when the build made them (tools/pmon-doc.py; not with -DPMON_DOCS=OFF).
if [ -f "$PMON_BUILD/doc/stamp" ]; then
	for p in man1/pmon.1 man1/pmon-stat.1 man1/pmon-report.1 man3/libpmon.3 man3/libpmon-region.3 \
		man5/pmon-data-format.5; do
		check "$p installed" [ -s "$TMP/prefix/share/man/$p" ]
	done
	check "only section 1 pages in man1" sh -c "! ls '$TMP/prefix/share/man/man1' | grep -qv '\.1\$'"
	check "bash completion in share/bash-completion/completions/pmon" \
		grep -q 'complete -F _pmon pmon' "$TMP/prefix/share/bash-completion/completions/pmon"
	check "zsh completion in share/zsh/vendor-completions/_pmon" \
		grep -q '^#compdef pmon' "$TMP/prefix/share/zsh/vendor-completions/_pmon"
	MANPATH="$TMP/prefix/share/man" man -w pmon-stat >"$TMP/manw" 2>&1
	check "man finds pmon-stat in the installed tree" grep -q "$TMP/prefix/share/man/man1/pmon-stat.1" "$TMP/manw"
	# DESTDIR: everything under it, the prefix as configured inside.
	DESTDIR="$TMP/dest" cmake --install "$PMON_BUILD" --prefix /usr >"$TMP/dest.log" 2>&1
	check "DESTDIR install succeeds" [ $? -eq 0 ]
	check "DESTDIR holds the pages and completions" sh -c "[ -s '$TMP/dest/usr/share/man/man1/pmon.1' ] &&
		[ -s '$TMP/dest/usr/share/bash-completion/completions/pmon' ] &&
		[ -s '$TMP/dest/usr/share/zsh/vendor-completions/_pmon' ] && [ -x '$TMP/dest/usr/bin/pmon' ]"
fi
# make install passes PREFIX, LIBDIR and DESTDIR on to cmake (a dry run:
# the real one reconfigures the tree's build).
if command -v make >/dev/null 2>&1; then
	make -n -C "$PMON_SRC" install PREFIX=/opt/p LIBDIR=lib64 DESTDIR=/tmp/d >"$TMP/make.n" 2>&1
	check "make install configures PREFIX" grep -q -- '-DCMAKE_INSTALL_PREFIX=/opt/p' "$TMP/make.n"
	check "make install configures LIBDIR" grep -q -- '-DCMAKE_INSTALL_LIBDIR=lib64' "$TMP/make.n"
	check "make install installs under DESTDIR" grep -q 'DESTDIR=/tmp/d cmake --install' "$TMP/make.n"
fi

# The build tree's uninstalled .pc files build the example without installing.
ucf=$(PKG_CONFIG_PATH="$PMON_BUILD" pkg-config --cflags libpmon) &&
	ulibs=$(PKG_CONFIG_PATH="$PMON_BUILD" pkg-config --libs libpmon)
check "libpmon-uninstalled.pc points into the tree" sh -c "printf '%s' '$ucf $ulibs' | grep -q '$PMON_SRC/include'"
cc -Wall -Werror ${PMON_USER_CFLAGS:-} "$PMON_SRC/examples/rdpmc-map.c" $ucf $ulibs -o "$TMP/map-tree" 2>"$TMP/cc.err"
check "example builds against the build tree" [ $? -eq 0 ]
LD_LIBRARY_PATH="$PMON_BUILD" "$TMP/map-tree" "$PMON_CPUID_DIR/intel-core-i7-6700k-skylake.txt" >/dev/null
check "and runs" [ $? -eq 0 ]
finish
