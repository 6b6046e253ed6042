#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check that the code keeps the layer drawing of ../shared/ARCHITECTURE.md.

For every object file built from lib/<folder>/*.c (and cli/*.c), list the
pmon_ functions and variables it uses (and the cli_ helpers and lib/top's
top_ entry points, which the pmon-ui module links by those names) that another folder's .c defines (from
`nm` on the build's objects: what the linker really resolves, macros and
inline functions of public headers aside), rank each folder as the drawing
does, and print

  - every arrow from a lower layer up to a higher one, and
  - every circle between two folders (each uses the other), which is an
    upward arrow between layers or a circle inside one, and
  - every private header (#include "folder/x.h") of a higher layer that a
    lib/ file includes (the source tree beside this script).

Exit status 1 when there is one that ALLOWED below does not list, 0 when
the drawing is honest. Usage: layers.py BUILD_DIR [-v]  (-v: every arrow).
"""
import collections
import os
import re
import subprocess
import sys

# ../shared/ARCHITECTURE.md, "Layers", bottom up. lib/internal.h's helpers
# live in util/ (support).
RANK = {
    "util": 0, "stats": 0,  # primitives / support
    "cpu": 1, "clock": 1,  # knowing
    "event": 2,  # naming
    "counter": 3, "msr": 3,  # counting
    "monitor": 4, "sample": 4, "sim": 4, "region": 4, "trace": 4, "rdt": 4,
    "bench": 4,  # features
    "report": 5, "plot": 5, "top": 5, "serve": 5,  # presentation
    "cli": 6,
}
LAYER = {0: "support", 1: "knowing", 2: "naming", 3: "counting", 4: "features",
         5: "presentation", 6: "cli"}

# Known arrows not yet removed, as (user's file, symbol): each names the
# issue that will remove it. Empty is the goal; an entry that no longer
# matches anything is reported so that the list only shrinks.
ALLOWED = {
}


def objects(build):
    """(folder, source file, object path) for lib/ and cli/ objects."""
    top = os.path.join(build, "CMakeFiles")
    for target in sorted(os.listdir(top)):
        if not target.endswith(".dir"):
            continue
        for root, _dirs, files in os.walk(os.path.join(top, target)):
            rel = os.path.relpath(root, os.path.join(top, target))
            parts = rel.split(os.sep)
            for f in sorted(files):
                if not f.endswith(".c.o"):
                    continue
                if parts[0] == "lib" and len(parts) == 2 and parts[1] in RANK:
                    folder = parts[1]
                elif parts[0] == "cli" and len(parts) == 1:
                    folder = "cli"
                else:
                    continue
                yield folder, "/".join(parts + [f[:-2]]), os.path.join(root, f)


# lib/top is compiled into the pmon-ui module, where t0140 allows no pmon_
# names: its entry points are top_*, and a call from it to cli/util.c's
# cli_* would be an arrow up, so both prefixes are followed too.
PREFIXES = ("pmon_", "cli_", "top_")


def symbols(path):
    """The PREFIXES symbols @path defines (globally) and the ones it uses."""
    out = subprocess.run(["nm", "-P", path], check=True, capture_output=True,
                         text=True).stdout
    defs, uses = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) < 2 or not f[0].startswith(PREFIXES):
            continue
        if f[1] == "U":
            uses.add(f[0])
        elif f[1] in "TDBRWVG":
            defs.add(f[0])
    return defs, uses


def includes(src_root):
    """(file, folder, included folder) for each lib/ private include."""
    lib = os.path.join(src_root, "lib")
    for folder in sorted(os.listdir(lib)):
        if folder not in RANK or not os.path.isdir(os.path.join(lib, folder)):
            continue
        for f in sorted(os.listdir(os.path.join(lib, folder))):
            if not f.endswith((".c", ".h")):
                continue
            with open(os.path.join(lib, folder, f), encoding="utf-8") as fh:
                for line in fh:
                    m = re.match(r'\s*#\s*include\s+"([a-z]+)/', line)
                    if m and m.group(1) in RANK:
                        yield "lib/%s/%s" % (folder, f), folder, m.group(1)


def main():
    args = [a for a in sys.argv[1:] if a != "-v"]
    verbose = "-v" in sys.argv[1:]
    if len(args) != 1:
        sys.exit(__doc__)
    where = {}  # symbol -> (folder, file)
    users = []  # (folder, file, uses)
    seen = set()
    for folder, src, obj in objects(args[0]):
        if src in seen:  # cli/ files built into several executables
            continue
        seen.add(src)
        defs, uses = symbols(obj)
        for s in defs:
            where.setdefault(s, (folder, src))
        users.append((folder, src, uses))
    if not users:
        sys.exit("layers.py: no objects under %s/CMakeFiles: build first" % args[0])

    arrows = collections.defaultdict(list)  # (from, to) -> [(file, symbol)]
    for folder, src, uses in users:
        for s in sorted(uses):
            if s in where and where[s][0] != folder:
                arrows[(folder, where[s][0])].append((src, s))

    bad, used_allow = [], set()

    def report(kind, a, b):
        for src, s in arrows[(a, b)]:
            line = "%s: %s (%s) -> %s (%s): %s calls %s, defined in %s" % (
                kind, a, LAYER[RANK[a]], b, LAYER[RANK[b]], src, s, where[s][1])
            if (src, s) in ALLOWED:
                used_allow.add((src, s))
                print("allowed " + line + "  [" + ALLOWED[(src, s)] + "]")
            else:
                bad.append(line)
                print(line)

    for (a, b) in sorted(arrows):
        if verbose:
            print("arrow: %s -> %s (%d)" % (a, b, len(arrows[(a, b)])))
        if RANK[a] < RANK[b]:
            report("upward", a, b)
    for (a, b) in sorted(arrows):
        if a < b and (b, a) in arrows:
            if RANK[a] == RANK[b]:
                report("circle", a, b)
                report("circle", b, a)
            else:  # its upward half is listed above
                print("circle: %s (%s) <-> %s (%s)" % (a, LAYER[RANK[a]], b,
                                                     LAYER[RANK[b]]))
    src_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for src, a, b in includes(src_root):
        if RANK[a] < RANK[b]:
            line = "upward include: %s (%s) includes a private header of %s (%s)" % (
                src, LAYER[RANK[a]], b, LAYER[RANK[b]])
            bad.append(line)
            print(line)
    for k in sorted(set(ALLOWED) - used_allow):
        print("stale allow-list entry (remove it): %s calls %s" % k)
    n = len({(a, b) for (a, b) in arrows})
    print("layers: %d files, %d arrows between %d folders; %d upward or "
          "circular, %d allowed" % (len(users), sum(map(len, arrows.values())),
                                   len({x for ab in arrows for x in ab}),
                                   len(bad), len(used_allow)))
    return 1 if bad or set(ALLOWED) - used_allow else 0


if __name__ == "__main__":
    sys.exit(main())
