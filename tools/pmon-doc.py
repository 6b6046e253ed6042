#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Man pages and shell completion of pmon, made at build time (issue #30,
docs/packaging.md).

One source: the option tables that make each command's --help. The built
pmon prints them (`pmon --options-json`, `pmon CMD --options-json`, hidden),
and this script renders them as
  man/pmon.1, man/pmon-CMD.1     the tables, plus the prose of docs/ (pandoc)
  man/libpmon*.3                 one page per include/pmon header, from its
                                 comments
  man/pmon-data-format.5         docs/pmon-data-format.md (pandoc)
  completion/pmon.bash, _pmon    bash and zsh completion

Usage: pmon-doc.py PMON SOURCE_DIR OUT_DIR VERSION
"""
import datetime
import json
import os
import re
import subprocess
import sys

# The docs/ page that describes each command, appended to its man page.
# A page shared by several commands goes in one; the others name it under
# SEE ALSO (RELATED).
DOC_OF = {
    "info": "info-json.md", "stat": "stat-json.md", "bench": "regions.md",
    "rdpmc": "direct.md", "record": "record.md", "diff": "diff.md", "plot": "plot.md",
    "script": "script.md", "serve": "serve.md", "simulate": "simulate.md",
    "top": "top.md", "trace": "trace.md", "rdt": "rdt.md",
}
RELATED = {"report": ["record"], "annotate": ["record", "report"], "msr": ["rdpmc"],
           "stat": ["list", "record"], "list": ["stat"], "cpuid": ["info"]}
# What a value is, by the argument's name in the table ("FILE").
FILE_ARGS = {"FILE", "OUT", "LOG", "REC", "PATH", "LIB:FUNC"}
DIR_ARGS = {"DIR", "D"}


# ---- the tables -----------------------------------------------------------
def dump(pmon, *args, quiet=False):
    out = subprocess.run([pmon, *args, "--options-json"], check=True, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL if quiet else None).stdout
    return json.loads(out)


def tables(pmon):
    """pmon's command table, each command with its options and its
    subcommands (words that have an options table of their own)."""
    top = dump(pmon)
    for c in top["commands"]:
        c.update(dump(pmon, c["name"]))
        c["words"] = c["words"].split()
        c["subs"] = []
        for w in c["words"]:
            try:
                sub = dump(pmon, c["name"], w, quiet=True)
            except subprocess.CalledProcessError:
                continue  # an action (msr read), not a subcommand
            if sub["command"] == c["name"] + " " + w:
                sub["name"] = w
                c["subs"].append(sub)
    return top


def value_kind(o):
    """What completes the value of option @o: choices, files, dirs,
    events, or nothing."""
    if not o.get("arg"):
        return None
    if o.get("choices"):
        return "choices"
    if o.get("long") == "event":
        return "events"
    if o["arg"] in FILE_ARGS:
        return "files"
    if o["arg"] in DIR_ARGS:
        return "dirs"
    return "any"


def spellings(o):
    return ([f"-{o['short']}"] if o.get("short") else []) + \
        ([f"--{o['long']}"] if o.get("long") else [])


# ---- roff ------------------------------------------------------------------
def esc(s):
    s = s.replace("\\", "\\e").replace("-", "\\-")
    return re.sub(r"^([.'])", r"\\&\1", s, flags=re.M)


def prose(text):
    """--help text as roff: lines joined into paragraphs; indented lines
    (a list, a table) kept as they are."""
    out, para = [], []
    for line in text.split("\n"):
        if line.startswith(" "):
            if para:
                out.append(esc(" ".join(para)))
                para = []
            out += [".nf", esc(line), ".fi"]
        elif line.strip():
            para.append(line.strip())
    if para:
        out.append(esc(" ".join(para)))
    return out


def option_lines(o):
    arg = o.get("arg")
    names = ", ".join(f"\\fB{esc(n)}\\fR" for n in spellings(o))
    if arg:
        a = f"\\fI{esc(arg)}\\fR"
        names += f"[={a}]" if o.get("optarg") else f" {a}"
    lines = [".TP", names] + prose(o["help"])
    if o.get("choices"):
        lines.append(".br")
        lines.append("One of: " + ", ".join(f"\\fB{esc(c)}\\fR" for c in o["choices"]) + ".")
    return lines


def table_lines(t, head):
    """SYNOPSIS, DESCRIPTION (the table's leading text) and OPTIONS of a
    table @t, under section names @head."""
    # "usage: " and the indentation under it go; the rest stays aligned
    usage = [u[7:] if u.startswith("       ") else u for u in
             re.sub(r"^usage: ", "", t["usage"]).split("\n")]
    lines = [head[0], ".nf"] + [esc(u.rstrip()) for u in usage] + [".fi"]
    opts = t["options"]
    first = next((i for i, o in enumerate(opts) if "text" not in o), len(opts))
    if first:
        lines.append(head[1])
        for o in opts[:first]:
            lines += [".PP"] + prose(o["text"])
    if first < len(opts):
        lines.append(head[2])
        for o in opts[first:]:
            lines += [".PP"] + prose(o["text"]) if "text" in o else option_lines(o)
    return lines


def pandoc(path):
    """A docs/ page as roff, its title dropped, ## as sections. Pandoc 2.17
    writes verbatim text in font V, which groff and mandoc lack: CR."""
    out = subprocess.run(["pandoc", "-f", "gfm", "-t", "man", "--shift-heading-level-by=-1",
                          path], check=True, stdout=subprocess.PIPE, text=True).stdout
    for a, b in (("\\f[VB]", "\\f[CB]"), ("\\f[V]", "\\f[CR]"), ("\\f[C]", "\\f[CR]")):
        out = out.replace(a, b)
    return out.rstrip("\n").split("\n")


def title(path):
    with open(path) as f:
        return re.sub(r"[`#]", "", f.readline()).strip()


def th(name, section, version, date):
    return [f'.TH "{name.upper()}" "{section}" "{date}" "pmon {version}" "pmon manual"']


def see_also(refs):
    return [".SH SEE ALSO", ",\n".join(f"\\fB{esc(n)}\\fR({s})" for n, s in refs)]


def command_page(c, src, version, date):
    name = f"pmon-{c['name']}"
    lines = th(name, 1, version, date) + [".SH NAME", f"{esc(name)} \\- {esc(c['help'])}"]
    lines += table_lines(c, [".SH SYNOPSIS", ".SH DESCRIPTION", ".SH OPTIONS"])
    for sub in c["subs"]:
        full = f"pmon {c['name']} {sub['name']}".upper()
        lines += [f'.SH "{full}"'] + table_lines(
            sub, [".SS Synopsis", ".SS Description", ".SS Options"])
    doc = DOC_OF.get(c["name"])
    if doc:
        lines += [f".\\\" From docs/{doc}"] + pandoc(os.path.join(src, "docs", doc))
    refs = [("pmon", 1)] + [(f"pmon-{r}", 1) for r in RELATED.get(c["name"], [])]
    if c["name"] == "record":
        refs.append(("pmon-data-format", 5))
    return lines + see_also(refs)


def main_page(top, src, version, date):
    lines = th("pmon", 1, version, date) + [
        ".SH NAME", "pmon \\- hardware performance monitoring for Linux x86\\-64",
        ".SH SYNOPSIS", ".nf", esc(re.sub(r"^usage: ", "", top["usage"])), ".fi",
        ".SH DESCRIPTION",
        "pmon counts, samples, traces and simulates hardware events: each command",
        "below has its own page, and \\fBpmon\\fR \\fIcommand\\fR \\fB\\-\\-help\\fR says",
        "the same in short.",
        ".SH COMMANDS"]
    for c in top["commands"]:
        lines += [".TP", f"\\fBpmon\\-{esc(c['name'])}\\fR(1)", esc(c["help"])]
    lines += [".SH FILES", ".TP", "\\fI$XDG_CACHE_HOME/pmon/events\\fR",
              "the event names of \\fBpmon list\\fR, kept for shell completion",
              "(\\fI~/.cache\\fR when XDG_CACHE_HOME is unset); made again when pmon",
              "is newer, removed to refresh it"]
    lines += [".\\\" From docs/exit-codes.md", ".SH EXIT STATUS"] + \
        pandoc(os.path.join(src, "docs", "exit-codes.md"))
    refs = [(f"pmon-{c['name']}", 1) for c in top["commands"]]
    return lines + see_also(refs + [("libpmon", 3), ("pmon-data-format", 5)])


# ---- libpmon(3): the headers' comments -----------------------------------
def comment_prose(text):
    """A C comment's text as roff: paragraphs, @param lines each on its own
    line, indented lines (examples) as they are."""
    out, para = [], []

    def flush():
        if para:
            out.append(esc(" ".join(para)))
            para.clear()
    for line in text.split("\n"):
        line = re.sub(r"^\s*\*( |$)", "", re.sub(r"^\s*/\*\*?\s?|\s*\*/\s*$", "", line))
        if line.startswith("    "):
            flush()
            out += [".nf", ".RS", esc(line.strip()), ".RE", ".fi"]
        elif not line.strip():
            flush()
            if out and out[-1] != ".PP":
                out.append(".PP")
        elif line.startswith("@"):
            flush()
            out.append(".br")
            para.append(line)
        else:
            para.append(line.strip())
    flush()
    return out


def header_items(body):
    """The header's declarations, split at blank lines outside braces, each
    as (comment, code)."""
    items, cur, depth = [], [], 0
    for line in body.split("\n"):
        if not line.strip() and depth == 0 and not (cur and cur[-1].lstrip().startswith(("/*", "*")) and "*/" not in cur[-1]):
            if cur:
                items.append(cur)
            cur = []
            continue
        cur.append(line)
        depth += line.count("{") - line.count("}")
    if cur:
        items.append(cur)
    out = []
    for it in items:
        text = "\n".join(it)
        m = re.match(r"\s*(/\*.*?\*/)\s*(.*)", text, re.S)
        out.append((m.group(1), m.group(2)) if m else ("", text))
    return out


def header_page(path, libs, version, date):
    base = os.path.basename(path)[:-2]
    name = "libpmon" if base == "pmon" else f"libpmon-{base}"
    with open(path) as f:
        text = f.read()
    # the file's own comment, after its SPDX line
    m = re.search(r"SPDX[^\n]*\n(/\*.*?\*/)", text, re.S)
    intro = m.group(1) if m else ""
    first = re.sub(r"\s+", " ", re.sub(r"^\s*/?\*+/?", "", intro, flags=re.M)).strip()
    summary = re.split(r"(?<=[.:])\s", first, maxsplit=1)[0].rstrip(".:")
    body = text[m.end():] if m else text
    # drop the include guard, includes and C++ wrappers: they are no API
    body = re.sub(r"^#(ifndef|define) PMON_\w+_H\s*$|^#include.*$|^#endif\s*$", "", body, flags=re.M)
    body = re.sub(r'#ifdef __cplusplus\n(extern "C" \{|\})\n#endif', "", body)
    lines = th(name, 3, version, date) + [".SH NAME", f"{esc(name)} \\- {esc(summary)}",
                                           ".SH SYNOPSIS", ".nf", f"\\fB#include <pmon/{base}.h>\\fR",
                                           "", esc(f"cc ... $(pkg-config --cflags --libs {' '.join(libs)})"),
                                           ".fi", ".SH DESCRIPTION"] + comment_prose(intro)
    lines.append(".SH API")
    for comment, code in header_items(body):
        code = code.strip()
        if not code and not comment:
            continue
        if code:
            lines += [".PP", ".nf", ".ft CR"] + [esc(c) for c in code.split("\n")] + [".ft R", ".fi"]
        if comment:
            lines += [".RS"] + comment_prose(comment) + [".RE"]
    return name, lines + see_also([("libpmon", 3), ("pmon", 1)])


def header_libs(path, src):
    """The pkg-config modules a header's functions are in (by the version
    scripts of the three libraries)."""
    with open(path) as f:
        names = set(re.findall(r"\b(pmon_\w+)\s*\(", f.read()))
    libs = []
    for lib, mp in (("libpmon-report", "lib/report/libpmon-report.map"),
                    ("libpmon-plot", "lib/plot/libpmon-plot.map")):
        with open(os.path.join(src, mp)) as f:
            if names & set(re.findall(r"\b(pmon_\w+);", f.read())):
                libs.append(lib)
    return libs or ["libpmon"]


# ---- completion -------------------------------------------------------------
EVENTS_SH = r'''
# The event names of `pmon list`, kept in $XDG_CACHE_HOME/pmon/events (made
# again when pmon is newer than it), so that Tab does not run pmon list.
_pmon_event_names() {
	local pmon=$1 dir=${XDG_CACHE_HOME:-$HOME/.cache}/pmon bin
	bin=$(command -v -- "$pmon" 2>/dev/null) || return
	if [ ! -s "$dir/events" ] || [ "$bin" -nt "$dir/events" ]; then
		mkdir -p -- "$dir" 2>/dev/null &&
			"$bin" list 2>/dev/null | awk '/^  [^ ]/ { print $1 }' >"$dir/events.$$" &&
			mv -f -- "$dir/events.$$" "$dir/events"
	fi
	cat -- "$dir/events" 2>/dev/null
}
'''


def bash_case(top, key, fn):
    """A bash case on "CMD OPT" (or "CMD SUB OPT") whose arms run fn(o)."""
    arms = []
    for c in top["commands"]:
        for t, prefix in [(c, c["name"])] + [(s, f"{c['name']} {s['name']}") for s in c["subs"]]:
            for o in t["options"]:
                if "text" in o:
                    continue
                body = fn(o)
                if body is not None:
                    pats = "|".join(f'"{prefix} {s}"' for s in spellings(o))
                    arms.append(f"\t{pats}) {body} ;;")
    # compopt fails outside a completion (a test calling _pmon): still 0
    return "\n".join([f"\tcase \"{key}\" in"] + arms + ["\t*) return 1 ;;", "\tesac", "\treturn 0"])


def bash_value(o):
    kind = value_kind(o)
    return {None: None, "any": ":",
            "choices": 'COMPREPLY=($(compgen -W "%s" -- "$cur"))' % " ".join(o.get("choices", [])),
            "files": 'COMPREPLY=($(compgen -f -- "$cur")); compopt -o filenames 2>/dev/null',
            "dirs": 'COMPREPLY=($(compgen -d -- "$cur")); compopt -o filenames 2>/dev/null',
            "events": '_pmon_complete_events "$pmon"'}[kind]


def bash_completion(top):
    cmds = " ".join(c["name"] for c in top["commands"])
    opt_arms, word_arms = [], []
    for c in top["commands"]:
        for t, prefix in [(c, c["name"])] + [(s, f"{c['name']} {s['name']}") for s in c["subs"]]:
            words = " ".join(s for o in t["options"] if "text" not in o for s in spellings(o))
            opt_arms.append(f'\t"{prefix}") echo "{words} --help" ;;')
        if c["words"]:
            word_arms.append(f'\t{c["name"]}) words="{" ".join(c["words"])}" ;;')
    subs = " ".join(f"{c['name']}:{s['name']}" for c in top["commands"] for s in c["subs"])
    return f'''# bash completion for pmon, generated by tools/pmon-doc.py from pmon's
# option tables (docs/packaging.md): do not edit.
{EVENTS_SH}
# Complete the last of a comma-separated list of events.
_pmon_complete_events() {{
	local pre="" last=$cur
	case $cur in *,*) pre=${{cur%,*}}, last=${{cur##*,}} ;; esac
	COMPREPLY=($(compgen -P "$pre" -W "$(_pmon_event_names "$1")" -- "$last"))
	compopt -o nospace 2>/dev/null
}}

# The options of command (or "command subcommand") $1.
_pmon_options() {{
	case "$1" in
{chr(10).join(opt_arms)}
	*) echo "--help" ;;
	esac
}}

# The value of option $2 of "$1": return 1 when it takes none.
_pmon_value() {{
{bash_case(top, "$1 $2", bash_value)}
}}

# Does option $2 of "$1" take a value (the next word)?
_pmon_takes_value() {{
{bash_case(top, "$1 $2", lambda o: ":" if o.get("arg") and not o.get("optarg") else None)}
}}

_pmon() {{
	local cur=${{COMP_WORDS[COMP_CWORD]}} pmon=${{COMP_WORDS[0]}} cmd="" i w
	local subs=" {subs} "
	COMPREPLY=()
	# The command, its subcommand, and whether "--" began a command line.
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${{COMP_WORDS[i]}}
		if [ "$w" = "--" ] && [ -n "$cmd" ]; then
			if declare -F _command_offset >/dev/null; then
				_command_offset $((i + 1))
			else
				COMPREPLY=($(compgen -c -- "$cur"))
			fi
			return
		fi
		case $w in
		-*) # its value (readline splits --opt=value at the '=')
			if [[ $w != *=* ]] && _pmon_takes_value "$cmd" "$w"; then
				((i++))
				[ "${{COMP_WORDS[i]}}" = "=" ] && ((i++))
			fi ;;
		*) if [ -z "$cmd" ]; then
			cmd=$w
		elif [[ $subs == *" ${{cmd// /:}}:$w "* ]]; then
			cmd="$cmd $w"
		fi ;;
		esac
	done
	if [ -z "$cmd" ]; then
		COMPREPLY=($(compgen -W "{cmds} --help --version" -- "$cur"))
		return
	fi
	local prev=${{COMP_WORDS[COMP_CWORD - 1]}}
	[ "$prev" = "=" ] && [ "$COMP_CWORD" -gt 2 ] && prev=${{COMP_WORDS[COMP_CWORD - 2]}}
	if [ "$COMP_CWORD" -gt 1 ] && [[ $prev == -* ]] && _pmon_value "$cmd" "$prev"; then
		return
	fi
	case $cur in
	--*=*) prev=${{cur%%=*}} cur=${{cur#*=}}
		_pmon_value "$cmd" "$prev" ;;
	-*) COMPREPLY=($(compgen -W "$(_pmon_options "$cmd")" -- "$cur")) ;;
	*) local words
		case $cmd in
{chr(10).join("		" + a for a in word_arms)}
		esac
		COMPREPLY=($(compgen -W "${{words:-}}" -- "$cur"))
		[ ${{#COMPREPLY[@]}} -eq 0 ] && COMPREPLY=($(compgen -f -- "$cur")) &&
			compopt -o filenames 2>/dev/null ;;
	esac
	return 0
}}
complete -F _pmon pmon
'''


def zsh_spec(o):
    # _arguments quotes []: with \; the shell's single quotes close and reopen
    help_ = re.sub(r"([\[\]:\\])", r"\\\1", o["help"].split("\n")[0]).replace("'", "'\\''")
    kind = value_kind(o)
    action = {None: "", "any": f":{o.get('arg', '')}: ",
              "choices": f":{o.get('arg', '')}:({' '.join(o.get('choices', []))})",
              "files": f":{o.get('arg', '')}:_files", "dirs": f":{o.get('arg', '')}:_files -/",
              "events": f":{o.get('arg', '')}:_pmon_events"}[kind]
    specs = []
    for s in spellings(o):
        suffix = "" if not o.get("arg") else ("=-" if o.get("optarg") else ("+" if len(s) == 2 else "="))
        specs.append(f"'{s}{suffix}[{help_}]{action}'")
    return " ".join(specs)


def zsh_completion(top):
    cmds = "\n".join(f"\t\t'{c['name']}:" + c["help"].replace("'", "'\\''") + "'"
                     for c in top["commands"])
    arms = []
    for c in top["commands"]:
        specs = " \\\n\t\t\t".join(zsh_spec(o) for o in c["options"] if "text" not in o)
        rest = "'*::argument:_files'"
        if c["words"]:
            rest = f"'1:word:({' '.join(c['words'])})' '*::argument:_files'"
        if c["name"] in ("stat", "record", "top", "rdt", "trace", "simulate", "bench"):
            rest = "'*::command:_normal'"
        for s in c["subs"]:
            sspecs = " \\\n\t\t\t\t".join(zsh_spec(o) for o in s["options"] if "text" not in o)
            arms.append(f"\t{c['name']}:{s['name']})\n\t\t_arguments -s -S {sspecs} '*::argument:_files' ;;")
        arms.append(f"\t{c['name']}:*)\n\t\t_arguments -s -S {specs} \\\n\t\t\t{rest} ;;")
    return f'''#compdef pmon
# zsh completion for pmon, generated by tools/pmon-doc.py from pmon's option
# tables (docs/packaging.md): do not edit.
{EVENTS_SH}
_pmon_events() {{
	local -a names
	names=(${{(f)"$(_pmon_event_names ${{words[1]:-pmon}})"}})
	compset -P '*,'
	compadd -S '' -a names
}}

_pmon() {{
	local -a commands
	commands=(
{cmds}
	)
	if (( CURRENT == 2 )); then
		_describe command commands
		return
	fi
	local key="$words[2]:$words[3]"
	shift words
	(( CURRENT-- ))
	case $key in
{chr(10).join(arms)}
	esac
}}

_pmon "$@"
'''


# ---- main -------------------------------------------------------------------
def tidy(lines):
    """No paragraph macro where a section, another paragraph or the end
    begins one anyway (mandoc -T lint warns of each)."""
    out = []
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ".SH"
        if line == ".PP" and (re.match(r"\.(PP|SH|SS|TP|RE)\b", nxt) or
                              (out and re.match(r"\.(SH|SS|PP|RS)\b", out[-1]))):
            continue
        out.append(line)
    return out


def write(path, lines):
    if isinstance(lines, list):
        lines = tidy(lines)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(lines) if isinstance(lines, list) else lines)
        f.write("\n" if isinstance(lines, list) else "")


def build_date(src):
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if not epoch:
        epoch = max(os.path.getmtime(os.path.join(src, d, f)) for d in ("docs", "include/pmon")
                    for f in os.listdir(os.path.join(src, d)))
    return datetime.datetime.fromtimestamp(int(float(epoch)), datetime.timezone.utc).strftime("%Y-%m-%d")


def main(argv):
    if len(argv) != 5:
        sys.exit(__doc__)
    pmon, src, out, version = argv[1:]
    date = build_date(src)
    top = tables(pmon)
    write(os.path.join(out, "options.json"), json.dumps(top, indent=1))
    man = os.path.join(out, "man")
    write(os.path.join(man, "pmon.1"), main_page(top, src, version, date))
    for c in top["commands"]:
        write(os.path.join(man, f"pmon-{c['name']}.1"), command_page(c, src, version, date))
    inc = os.path.join(src, "include", "pmon")
    for h in sorted(os.listdir(inc)):
        name, lines = header_page(os.path.join(inc, h), header_libs(os.path.join(inc, h), src),
                                  version, date)
        write(os.path.join(man, f"{name}.3"), lines)
    fmt = os.path.join(src, "docs", "pmon-data-format.md")
    write(os.path.join(man, "pmon-data-format.5"), th("pmon-data-format", 5, version, date) + [
        ".SH NAME", f"pmon\\-data\\-format \\- {esc(title(fmt))}"] + pandoc(fmt) +
        see_also([("pmon-record", 1), ("pmon-report", 1)]))
    write(os.path.join(out, "completion", "pmon.bash"), bash_completion(top))
    write(os.path.join(out, "completion", "_pmon"), zsh_completion(top))


if __name__ == "__main__":
    main(sys.argv)
