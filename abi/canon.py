#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Put an abidw file in one order: canon.py FILE (rewritten in place).

abidw orders the declarations of a translation unit by their source
locations, which hold absolute paths: the same library built from a tree
elsewhere lists them in another order. Sorting each translation unit's
declarations (by name, then kind, then content; ids are hashes of the
types, --type-id-style hash) and the units by path gives one file for one
ABI. Members of a type keep their order, which is the layout."""
import sys
import xml.etree.ElementTree as ET


def key(e):
    return (e.get("name") or "", e.tag, e.get("id") or "", ET.tostring(e, encoding="unicode"))


path = sys.argv[1]
tree = ET.parse(path)
root = tree.getroot()
units = [e for e in root if e.tag == "abi-instr"]
for u in units:
    kids = sorted(list(u), key=key)
    for k in list(u):
        u.remove(k)
    u.extend(kids)
    root.remove(u)
root.extend(sorted(units, key=lambda u: u.get("path") or ""))
ET.indent(tree, space="  ")
tree.write(path, encoding="unicode")
with open(path, "a") as f:
    f.write("\n")
