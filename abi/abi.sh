#!/bin/sh
# SPDX-License-Identifier: MIT
# The ABI baselines (docs/architecture.md, "ABI"), with libabigail's tools
# (Debian package abigail-tools):
#   abi.sh dump LIBRARY OUT        write LIBRARY's ABI to OUT (make abi-baseline)
#   abi.sh check LIBRARY BASELINE  compare LIBRARY with BASELINE (tests abi/<lib>)
# check fails on any change but an addition: a removed or changed function
# or variable, or a change in a type reachable from one (a field's type or
# offset, a struct's size), i.e. abidiff's ABI change (bit 2 of its status)
# or incompatible change (bit 3) left after added symbols are filtered out.
# Added functions are compatible: they are listed and pass.
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")

skip() { echo "1..0 # SKIP $*"; exit 77; }

mode=${1:-}; lib=${2:-}; file=${3:-}
[ -n "$file" ] || { echo "usage: abi.sh dump LIBRARY OUT | abi.sh check LIBRARY BASELINE" >&2; exit 2; }
[ -f "$lib" ] || { echo "abi.sh: no $lib (build first)" >&2; exit 2; }

case $mode in
dump)
	command -v abidw >/dev/null 2>&1 ||
		{ echo "abi.sh: abidw is not installed (Debian package abigail-tools; make deps)" >&2; exit 2; }
	readelf -S "$lib" | grep -q '\.debug_info' ||
		{ echo "abi.sh: $lib has no debug info (build with -g: RelWithDebInfo)" >&2; exit 2; }
	# Only what does not depend on where or when it was built: no paths of
	# the corpus or the compilation, no source locations (they move with
	# every edit), no DT_NEEDED (t0140 checks those), type ids hashed from
	# the types (an added type does not renumber the others), private
	# types (defined outside include/pmon, e.g. opaque structs) dropped.
	# The translation units' paths are made relative to the tree, and
	# abi/canon.py sorts what abidw orders by absolute paths.
	if readelf -d "$lib" | grep -Eq 'NEEDED.*lib(a|t|ub)san'; then
		echo "abi.sh: $lib is a sanitized build: the baselines are of the plain one" >&2
		exit 2
	fi
	bdir=$(cd "$(dirname "$lib")" && pwd)
	tmp=$file.tmp.$$
	abidw --no-corpus-path --no-comp-dir-path --no-show-locs --no-elf-needed \
		--type-id-style hash --headers-dir "$src/include/pmon" --drop-private-types \
		--out-file "$tmp" "$lib" || { rm -f "$tmp"; exit 1; }
	sed -e "s|path='$bdir/|path='BUILD/|g" -e "s|path='$src/|path='|g" "$tmp" >"$file" &&
		rm -f "$tmp" && python3 "$here/canon.py" "$file" || exit 1
	if grep -q "path='/" "$file"; then
		echo "abi.sh: $file still holds absolute paths" >&2
		exit 1
	fi
	;;
check)
	command -v abidiff >/dev/null 2>&1 ||
		skip "abidiff is not installed (Debian package abigail-tools; make deps)"
	case ${PMON_ABI_BUILD:-plain} in
	plain) ;;
	*) skip "the baselines are of the plain build (gcc, no sanitizer); this build is $PMON_ABI_BUILD, whose debug info and DT_NEEDED differ, and its sources are the plain build's: the plain suite checks them" ;;
	esac
	readelf -S "$lib" | grep -q '\.debug_info' ||
		skip "$(basename "$lib") has no debug info (a build type without -g): abidiff could compare symbols only"
	[ -f "$file" ] || { echo "not ok - no baseline $file (make abi-baseline)"; exit 1; }
	out=$(abidiff --no-added-syms --suppressions "$here/private.abignore" "$file" "$lib" 2>&1)
	st=$?
	rel=${file#"$src"/}
	if [ $st -ne 0 ]; then
		echo "$out"
		why="abidiff exit status $st"
		[ $((st & 1)) -ne 0 ] && why="$why: abidiff failed"
		[ $((st & 4)) -ne 0 ] && why="$why: ABI change"
		[ $((st & 8)) -ne 0 ] && why="$why, incompatible"
		echo "not ok - $(basename "$lib") keeps the ABI of $rel ($why)."
		echo "# A compatible fix keeps the old layout and names. An intended break moves"
		echo "# the version (soname, a new node in the map) and then runs make abi-baseline."
		exit 1
	fi
	echo "ok - $(basename "$lib") keeps the ABI of $rel"
	# Additions pass; say which, so that a reviewer sees them.
	added=$(abidiff --suppressions "$here/private.abignore" "$file" "$lib" 2>&1 | grep '^  \[A\]')
	[ -n "$added" ] && printf '# added since the baseline (compatible):\n%s\n' "$added"
	exit 0
	;;
*)
	echo "usage: abi.sh dump LIBRARY OUT | abi.sh check LIBRARY BASELINE" >&2
	exit 2
	;;
esac
