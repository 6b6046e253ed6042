#!/bin/sh
# Shell completion made from the option tables (tools/pmon-doc.py,
# docs/packaging.md), in a real bash: the completion sourced, COMP_WORDS and
# COMP_CWORD set as readline sets them, _pmon called, COMPREPLY read. The
# event names come from `pmon list`, kept under $XDG_CACHE_HOME. zsh's is
# checked for syntax and that compinit takes it.
. "$(dirname "$0")/lib.sh"
: "${PMON_BUILD:?set PMON_BUILD}"
comp=$PMON_BUILD/doc/completion
if [ ! -f "$PMON_BUILD/doc/stamp" ]; then
	echo "skip: no completion in the build (configured with -DPMON_DOCS=OFF)"
	exit 77
fi
if ! command -v bash >/dev/null 2>&1; then
	echo "skip: no bash here"
	exit 77
fi
export XDG_CACHE_HOME="$TMP/cache"

# complete WORDS...: what Tab offers after WORDS (the last one being typed),
# one a line, sorted.
complete_words() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_pmon; printf "%s\n" "${COMPREPLY[@]}" | sort' - "$comp/pmon.bash" "$PMON" "$@"
}
# offers DESC EXPECTED WORDS...: Tab after WORDS offers exactly EXPECTED
# (space-separated, in any order).
offers() {
	desc=$1 want=$(printf '%s\n' $2 | sort | tr '\n' ' '); shift 2
	got=$(complete_words "$@" | tr '\n' ' ')
	check "$desc${got:+ (got: $got)}" [ "$got" = "$want" ]
}

check "bash completion registers _pmon" bash -c ". '$comp/pmon.bash'; complete -p pmon | grep -q -- '-F _pmon'"
offers "pmon rep<TAB>: report" "report" rep
offers "pmon report --for<TAB>: --format" "--format" report --for
offers "pmon report --format <TAB>: the formats" "text json folded flamegraph speedscope pprof" report --format ""
# readline splits --format=fl at the '=' (COMP_WORDBREAKS); a shell that
# does not leaves one word
offers "pmon report --format=f<TAB>" "folded flamegraph" report --format = f
offers "pmon report --format=fl<TAB>, one word" "flamegraph" report --format=fl
offers "pmon annotate --format <TAB>: its own formats" "text json" annotate --format ""
offers "pmon diff --sort <TAB>: the keys" "symbol dso dso,sym sym dso,symbol" diff --sort ""
offers "pmon trace re<TAB>: the subcommand" "report" trace re
offers "pmon trace report --fr<TAB>: its own options" "--from" trace report --fr
offers "pmon msr <TAB>: the actions" "read write list" msr ""
offers "pmon --ver<TAB>" "--version" --ver

rm -rf "$XDG_CACHE_HOME"
offers "pmon stat -e task-<TAB>: task-clock" "task-clock" stat -e task-
check "the event names are cached under XDG_CACHE_HOME" grep -qx 'task-clock' "$XDG_CACHE_HOME/pmon/events"
offers "pmon stat -e cycles,task-<TAB>: the last of a list" "cycles,task-clock" stat -e cycles,task-
offers "pmon stat --event=page-f<TAB>" "page-faults" stat --event = page-f
# Tab reads the cache, not pmon list: a name only the cache has is offered.
echo task-cached-only >>"$XDG_CACHE_HOME/pmon/events"
touch "$XDG_CACHE_HOME/pmon/events"
offers "a second Tab reads the cache" "task-cached-only task-clock" stat -e task-
# ...until pmon is newer than it.
touch -d '2000-01-01' "$XDG_CACHE_HOME/pmon/events"
offers "an older cache is made again" "task-clock" stat -e task-

# Files where the table says a file: -i FILE, -o OUT; a value an option
# takes is not taken for a subcommand or an operand.
mkdir "$TMP/d" && : >"$TMP/d/rec.data" && : >"$TMP/d/rec.log"
offers "pmon report -i <dir>/rec.d<TAB>: the file" "$TMP/d/rec.data" report -i "$TMP/d/rec.d"
offers "pmon report --symfs <dir>/<TAB>: directories only" "" report --symfs "$TMP/d/"
offers "pmon record -e cycles -o <dir>/rec.l<TAB>" "$TMP/d/rec.log" record -e cycles -o "$TMP/d/rec.l"
offers "pmon trace -o report --dur<TAB>: an -o value is no subcommand" "--duration" trace -o report --dur

if command -v zsh >/dev/null 2>&1; then
	check "zsh parses _pmon" zsh -n "$comp/_pmon"
	check "compinit binds _pmon to pmon" zsh -fc "fpath=('$comp' \$fpath); autoload -U compinit
		compinit -u -d '$TMP/zcompdump'; [ \"\${_comps[pmon]}\" = _pmon ]"
else
	echo "# zsh is not installed: its completion is not checked"
fi
finish
