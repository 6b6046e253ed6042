#!/bin/sh
# The man pages the build makes (tools/pmon-doc.py, docs/packaging.md): one
# per command, per header and the data format; mandoc finds nothing to warn
# of, man renders each; and they come from the option tables: every option
# of a command's --help is in its page.
. "$(dirname "$0")/lib.sh"
: "${PMON_BUILD:?set PMON_BUILD}"
man=$PMON_BUILD/doc/man
if [ ! -f "$PMON_BUILD/doc/stamp" ]; then
	echo "skip: no man pages in the build (configured with -DPMON_DOCS=OFF)"
	exit 77
fi

commands=$("$PMON" --options-json | python3 -c 'import json,sys; print(" ".join(c["name"] for c in json.load(sys.stdin)["commands"]))')
check "pmon --options-json names the commands" [ -n "$commands" ]
check "pmon(1)" [ -s "$man/pmon.1" ]
for c in $commands; do
	check "pmon-$c(1)" [ -s "$man/pmon-$c.1" ]
	check "pmon(1) lists pmon-$c" grep -q "^\\\\fBpmon\\\\-$c\\\\fR(1)" "$man/pmon.1"
done
for h in "$PMON_SRC"/include/pmon/*.h; do
	b=$(basename "$h" .h)
	[ "$b" = pmon ] && p=libpmon || p=libpmon-$b
	check "$p(3) for pmon/$b.h" [ -s "$man/$p.3" ]
done
check "pmon-data-format(5)" [ -s "$man/pmon-data-format.5" ]

# One source: each option --help lists is in the page, as man prints it.
for c in $commands; do
	"$PMON" "$c" --help 2>/dev/null | grep -o -- '--[a-z][a-z0-9-]*' | sort -u >"$TMP/help.opts"
	MANWIDTH=200 man -l "$man/pmon-$c.1" 2>/dev/null | sed 's/‐/-/g' >"$TMP/page.txt"
	missing=$(while read -r o; do grep -qF -- "$o" "$TMP/page.txt" || echo "$o"; done <"$TMP/help.opts")
	check "pmon-$c(1) has every option of --help${missing:+ (missing: $missing)}" [ -z "$missing" ]
done
MANWIDTH=200 man -l "$man/pmon-trace.1" 2>/dev/null >"$TMP/trace.txt"
check "pmon-trace(1) has trace report's options" grep -q -- '--from MS' "$TMP/trace.txt"
MANWIDTH=80 man -l "$man/pmon-report.1" 2>/dev/null >"$TMP/report.txt"
check "report's --format lists its choices" grep -q 'One of: text, json, folded, flamegraph, speedscope, pprof' "$TMP/report.txt"
check "pmon-record(1) carries docs/record.md" grep -q 'Sample' "$man/pmon-record.1"
check "libpmon-region(3) carries the header's comments" grep -q 'pmon_region_init() \\- configure regions' "$man/libpmon-region.3"

# Every page renders, and mandoc (when here) has no warning about any.
for p in "$man"/*.[135]; do
	MANWIDTH=80 man -l "$p" >"$TMP/r.txt" 2>"$TMP/r.err"
	check "man -l renders $(basename "$p")" sh -c "[ -s '$TMP/r.txt' ] && ! grep -q 'error' '$TMP/r.err'"
done
if command -v mandoc >/dev/null 2>&1; then
	mandoc -T lint -W warning "$man"/*.[135] >"$TMP/lint" 2>&1
	check "mandoc -T lint: no warning$(head -c 400 "$TMP/lint" | tr '\n' ' ')" [ ! -s "$TMP/lint" ]
else
	echo "# mandoc is not installed (Debian package mandoc): the lint is skipped"
fi
finish
