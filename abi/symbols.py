#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The version scripts against the headers and the built libraries.

usage: symbols.py SRC MAP=LIBRARY...

Checks (TAP lines, exit 1 on any failure), so that a new API function cannot
be silently left unexported and a removed one cannot linger in a map:
  - a map's global lists name symbols one by one (no glob), sorted (C
    locale), each once, and each name is in one map only;
  - every PMON_API declaration of SRC/include/pmon/*.h is listed in a map;
  - every public name listed (pmon_<name>, not pmon__<name>) is declared
    PMON_API in a public header;
  - every name listed is defined by its library under the node that lists
    it, and the library exports nothing else.
"""
import glob
import os
import re
import subprocess
import sys

results = []


def check(ok, desc):
    results.append((ok, desc))


def parse_map(path):
    """{node: [names]} of the global: lists, and the list of local patterns."""
    text = re.sub(r"/\*.*?\*/", " ", open(path).read(), flags=re.S)
    nodes = {}
    for m in re.finditer(r"([A-Za-z_][A-Za-z0-9_.]*)\s*\{(.*?)\}\s*[A-Za-z0-9_.]*\s*;", text, re.S):
        node, body = m.group(1), m.group(2)
        names = []
        scope = "global"
        for tok in re.findall(r"global:|local:|[^\s;]+", body):
            if tok in ("global:", "local:"):
                scope = tok[:-1]
            elif scope == "global":
                names.append(tok)
        nodes[node] = names
    return nodes


def api_declarations(src):
    """{name: header} of every PMON_API declaration in include/pmon/*.h."""
    decls = {}
    for h in sorted(glob.glob(os.path.join(src, "include", "pmon", "*.h"))):
        text = open(h).read()
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        text = re.sub(r"//[^\n]*", " ", text)
        text = re.sub(r"^\s*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)
        for m in re.finditer(r"\bPMON_API\b([^;{]*)", text):
            # The declared name is the first pmon_ identifier that is not a
            # struct, union or enum tag (attributes name none).
            decl = re.sub(r"\b(?:struct|union|enum)\s+\w+", " ", m.group(1))
            name = re.search(r"\b(pmon_\w+)", decl)
            if name:
                decls[name.group(1)] = os.path.relpath(h, src)
            else:
                check(False, "%s: cannot find the name in PMON_API%s" % (h, m.group(1)[:80]))
    return decls


def exports(lib):
    """{name: node} of the symbols LIBRARY defines (version nodes excluded)."""
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True,
                         capture_output=True, text=True).stdout
    syms = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) < 3 or f[1] == "A":
            continue
        name, _, node = f[2].partition("@")
        syms[name] = node.lstrip("@")
    return syms


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    src = sys.argv[1]
    decls = api_declarations(src)
    listed = {}  # name -> (map, node)
    for arg in sys.argv[2:]:
        mp, _, lib = arg.partition("=")
        rel = os.path.relpath(mp, src)
        nodes = parse_map(mp)
        check(bool(nodes), "%s has version nodes" % rel)
        for node, names in nodes.items():
            globs = [n for n in names if re.search(r"[*?\[]", n)]
            check(not globs, "%s %s lists names, no glob%s" % (rel, node, (": " + " ".join(globs)) if globs else ""))
            srt = sorted(names)
            first = next((a for a, b in zip(names, srt) if a != b), None)
            check(first is None, "%s %s is sorted%s" % (rel, node, "" if first is None else " (first out of place: %s)" % first))
            dups = sorted({n for n in names if names.count(n) > 1})
            check(not dups, "%s %s names each symbol once%s" % (rel, node, (": " + " ".join(dups)) if dups else ""))
            for n in names:
                if n in listed and listed[n][0] != rel:
                    check(False, "%s is listed in %s and in %s" % (n, listed[n][0], rel))
                listed[n] = (rel, node)
        syms = exports(lib)
        libname = os.path.basename(lib)
        stale = ["%s (%s)" % (n, node) for node, names in nodes.items() for n in names
                 if syms.get(n) != node]
        check(not stale, "every name %s lists is defined by %s under its node%s" % (
            rel, libname, (": not so for " + ", ".join(stale)) if stale else ""))
        mine = {n for names in nodes.values() for n in names}
        extra = sorted(set(syms) - mine)
        check(not extra, "%s exports only what %s lists%s" % (libname, rel, (": also " + " ".join(extra)) if extra else ""))

    unlisted = ["%s (%s)" % (n, h) for n, h in sorted(decls.items()) if n not in listed]
    check(not unlisted, "every PMON_API declaration is listed in a version script%s" % (
        (": add to the node of the coming release: " + ", ".join(unlisted)) if unlisted else ""))
    undeclared = ["%s (%s)" % (n, listed[n][0]) for n in sorted(listed)
                  if not n.startswith("pmon__") and n not in decls]
    check(not undeclared, "every public name listed is declared PMON_API in include/pmon/%s" % (
        (": not so for " + ", ".join(undeclared)) if undeclared else ""))
    check(len(decls) > 0, "%d PMON_API declarations found" % len(decls))

    print("1..%d" % len(results))
    for i, (ok, desc) in enumerate(results, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, desc))
    sys.exit(0 if all(ok for ok, _ in results) else 1)


main()
