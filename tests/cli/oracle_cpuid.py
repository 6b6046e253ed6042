#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Cross-check `pmon info --json --cpuid-file` against Debian's `cpuid -f`
(an independent decoder) over every shared CPUID dump.

Each comparison prints one ok/not ok line; the last line is the plain
"N passed, N failed" summary. Where the two decoders legitimately differ the
script says why instead of comparing (leaf 23H, which `cpuid` reports
separately; fixed counters, where `cpuid` reads ECX alone).
"""
import glob, json, os, re, subprocess, sys, tempfile

pmon, dumps = os.environ["PMON"], os.environ["PMON_CPUID_DIR"]
passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
        print("ok -", what)
    else:
        failed += 1
        print("not ok -", what)


def first(text, label):
    """Value of the first 'label = value' line, as an int or a string."""
    m = re.search(r"^\s*" + re.escape(label) + r"\s*=\s*(\S+)(?: \((\d+)\))?", text, re.M)
    if not m:
        return None
    if m.group(2) is not None:
        return int(m.group(2))
    v = m.group(1)
    if v == "not":  # "not available"
        return False
    if v in ("true", "false", "available", "unavailable"):
        return v in ("true", "available")
    try:
        return int(v, 0)
    except ValueError:
        return v


EVENTS = [("core cycle event", "core cycles"), ("instruction retired event", "instructions retired"),
          ("reference cycles event", "reference cycles"), ("last-level cache ref event", "LLC references"),
          ("last-level cache miss event", "LLC misses"),
          ("branch inst retired event", "branch instructions retired"),
          ("branch mispred retired event", "branch mispredicts retired")]

with tempfile.TemporaryDirectory() as tmp:
    for path in sorted(glob.glob(os.path.join(dumps, "*.txt"))):
        name = os.path.basename(path)[:-4]
        raw = os.path.join(tmp, name + ".raw")
        with open(path) as f, open(raw, "w") as out:
            out.write("CPU 0:\n")
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                l, s, a, b, c, d = line.replace(":", "").split()
                out.write(f"   0x{l} 0x{s}: eax=0x{a} ebx=0x{b} ecx=0x{c} edx=0x{d}\n")
        ref = subprocess.run(["cpuid", "-f", raw], capture_output=True, text=True).stdout
        me = json.loads(subprocess.run([pmon, "info", "--json", "--cpuid-file", path],
                                       capture_output=True, text=True, check=True).stdout)
        pm, rdt = me["perfmon"], me["rdt"]

        check(first(ref, "(family synth)") == me["cpu"]["family"], f"{name}: family")
        check(first(ref, "(model synth)") == me["cpu"]["model"], f"{name}: model")
        version = first(ref, "version ID")
        if me["cpu"]["vendor"] == "Intel" and version is not None:
            check(version == pm["version"], f"{name}: perfmon version {version}")
            if version > 0 and not pm["leaf_23"]:
                # A hybrid P-core without 23H: cpuid shows 0AH's common
                # subset, pmon the P-core's (+2 GP, +1 fixed, as Linux).
                extra = 2 if pm.get("hybrid_pcore_extra") else 0
                check(first(ref, "number of counters per logical processor") + extra ==
                      pm["gp"]["count"], f"{name}: GP counters")
                check(first(ref, "bit width of counter") == pm["gp"]["width"], f"{name}: GP width")
                for label, ev in EVENTS:
                    v = first(ref, label)
                    if v is not None:
                        check(v == (ev in pm["arch_events"]), f"{name}: {ev}")
                if version > 1:
                    n = first(ref, "number of contiguous fixed counters")
                    # SDM RDPMC: fixed counter x exists if EDX[4:0] > x or ECX[x];
                    # these dumps' ECX masks never exceed the contiguous count.
                    # v2-v4 bare metal with EDX[4:0] < 3: pmon counts 3 (Linux's quirk)
                    want = 3 if pm.get("fixed_assumed") else n + extra // 2
                    check(want == pm["fixed"]["count"], f"{name}: fixed counters {n} -> {want}")
                    # EDX[12:5] reads 0 with EDX[4:0] = 0: pmon takes the GP width then
                    fw = first(ref, "bit width of fixed counters")
                    if pm.get("fixed_assumed") and fw == 0:
                        fw = pm["gp"]["width"]
                    check(fw == pm["fixed"]["width"], f"{name}: fixed width")
                    # cpuid's per-counter lines read ECX alone: on v2-v4 they
                    # say 'false' for counters EDX[4:0] enumerates.
                    if version < 5 and n:
                        check(first(ref, "fixed counter  0 supported") is False,
                              f"{name}: cpuid's ECX-only view disagrees with the SDM rule, as expected")
            elif pm["leaf_23"]:
                print(f"# {name}: leaf 23H present: pmon reports 23H's counters, cpuid 0AH's")
        if rdt["pqm"] and rdt["l3"]:
            check(first(ref, "Maximum range of RMID") == rdt["max_rmid"], f"{name}: max RMID")
            check(first(ref, "Conversion factor from IA32_QM_CTR to bytes") == rdt["upscale"],
                  f"{name}: upscale")
            # cpuid prints the raw fields; pmon's figures add the vendor
            # default width and Linux's errata on top (issue 13 #1, #8).
            raw = rdt["cpuid"]
            check(first(ref, "Counter width") == raw["counter_width"], f"{name}: RMID counter width")
            check(first(ref, "supports L3 occupancy monitoring") == raw["cmt"], f"{name}: CMT")
            check(first(ref, "supports L3 total bandwidth monitoring") == raw["mbm_total"],
                  f"{name}: MBM total")
            check(first(ref, "supports L3 local bandwidth monitoring") == raw["mbm_local"],
                  f"{name}: MBM local")
            want = raw["counter_width"] + (20 if me["cpu"]["vendor"] == "AMD" and
                                           raw["counter_width"] == 24 else 0)
            check(rdt["counter_width"] == want, f"{name}: effective counter width {want}")
        if me["cpu"]["vendor"] == "AMD":
            ext = first(ref, "core performance counter extensions")
            if ext is not None:
                check(ext == pm["amd"]["perfctr_ext_core"], f"{name}: PerfCtrExtCore")

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed or passed < 200 else 0)
