#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Measure the shape issue #25 asks of the code, and fail where it is not met.

  - cli/ holds at most 20% of the code (non-blank lines of .c and .h in
    cli/ over cli/, lib/ and include/): cli/ parses arguments and prints;
  - no function is longer than 150 lines (universal-ctags' line and end);
  - cli/ forks nothing itself and checks no liveness: at most one spawn site
    (fork, vfork, posix_spawn, exec*, system, popen, pmon_child__fork) and
    no kill(PID, 0), pmon_process_alive() or signal forwarding
    (pmon_child__forward_signals);
  - no module (BUILD/*.so loaded by cli/ui.c) holds more than 20 libpmon
    functions of its own: modules bind to the one libpmon of the process.

Usage: shape.py SOURCE_DIR [BUILD_DIR] [-v]. Prints each number; exit
status 1 when one is over its limit.
"""
import glob
import os
import re
import subprocess
import sys

CLI_SHARE = 0.20
FN_LINES = 150
SPAWN_SITES = 1
MODULE_FNS = 20

SPAWN = re.compile(r"\b(fork|vfork|posix_spawnp?|execv[pe]*|execl[pe]*|system|popen|"
                   r"pmon_child__fork)\s*\(")
LIVENESS = re.compile(r"\bkill\s*\([^,()]+,\s*0\s*\)|\bpmon_process_alive\s*\(|"
                      r"\bpmon_child__forward_signals\s*\(")


def nonblank(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return sum(1 for line in f if line.strip())


def code_lines(src):
    out = {}
    for top in ("cli", "lib", "include"):
        n = 0
        for p in glob.glob(os.path.join(src, top, "**", "*.[ch]"), recursive=True):
            n += nonblank(p)
        out[top] = n
    return out


def long_functions(src):
    files = sorted(glob.glob(os.path.join(src, "lib", "**", "*.c"), recursive=True) +
                   glob.glob(os.path.join(src, "cli", "*.c")))
    r = subprocess.run(["ctags", "--c-kinds=f", "--fields=+ne", "-o", "-"] + files,
                       capture_output=True, text=True, check=True)
    out = []
    for line in r.stdout.splitlines():
        cols = line.split("\t")
        start = end = None
        for c in cols[3:]:
            if c.startswith("line:"):
                start = int(c[5:])
            elif c.startswith("end:"):
                end = int(c[4:])
        if start and end and end - start + 1 > FN_LINES:
            out.append((end - start + 1, os.path.relpath(cols[1], src), cols[0]))
    return sorted(out, reverse=True)


def strip_c(text):
    """The code without comments and string literals (a message naming
    fork() is not a fork)."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', text)


def cli_sites(src, pattern):
    out = []
    for p in sorted(glob.glob(os.path.join(src, "cli", "*.c"))):
        with open(p, encoding="utf-8", errors="replace") as f:
            for no, line in enumerate(strip_c(f.read()).splitlines(), 1):
                if pattern.search(line):
                    out.append("%s:%d: %s" % (os.path.relpath(p, src), no, line.strip()))
    return out


def module_functions(build):
    out = []
    for so in sorted(glob.glob(os.path.join(build, "*.so"))):
        if os.path.basename(so).startswith("lib"):
            continue
        r = subprocess.run(["nm", "--defined-only", so], capture_output=True, text=True)
        names = sorted({l.split()[-1] for l in r.stdout.splitlines()
                        if len(l.split()) == 3 and l.split()[1] in "Tt"
                        and l.split()[-1].startswith("pmon_")
                        # pmon-serve.so's own server (lib/serve/), no copy
                        and not l.split()[-1].startswith("pmon_serve__")})
        out.append((os.path.basename(so), names))
    return out


def main():
    args = [a for a in sys.argv[1:] if a != "-v"]
    verbose = "-v" in sys.argv[1:]
    if not args:
        print(__doc__.strip().splitlines()[-3], file=sys.stderr)
        return 2
    src = args[0]
    build = args[1] if len(args) > 1 else None
    bad = 0

    n = code_lines(src)
    share = n["cli"] / max(1, sum(n.values()))
    ok = share <= CLI_SHARE
    bad += not ok
    print("%s cli/ share %.1f%% (%d of %d non-blank lines; limit %d%%)" %
          ("ok  " if ok else "FAIL", 100 * share, n["cli"], sum(n.values()), 100 * CLI_SHARE))

    fns = long_functions(src)
    bad += bool(fns)
    print("%s functions over %d lines: %d" % ("ok  " if not fns else "FAIL", FN_LINES, len(fns)))
    for length, path, name in fns if verbose or len(fns) < 30 else fns[:30]:
        print("       %4d %s %s" % (length, path, name))

    spawns = cli_sites(src, SPAWN)
    ok = len(spawns) <= SPAWN_SITES
    bad += not ok
    print("%s spawn sites in cli/: %d (limit %d)" % ("ok  " if ok else "FAIL", len(spawns), SPAWN_SITES))
    for s in spawns:
        print("       " + s)
    live = cli_sites(src, LIVENESS)
    bad += bool(live)
    print("%s liveness checks and signal forwarding in cli/: %d" %
          ("ok  " if not live else "FAIL", len(live)))
    for s in live:
        print("       " + s)

    if build:
        for so, names in module_functions(build):
            ok = len(names) <= MODULE_FNS
            bad += not ok
            print("%s module %s holds %d libpmon functions (limit %d)" %
                  ("ok  " if ok else "FAIL", so, len(names), MODULE_FNS))
            if verbose:
                print("       " + " ".join(names[:40]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
