#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Crafted perf.data files (pipe mode) for the bounds of issue #31: each
shape once cost pmon report memory or time beyond the file's size.

  craft-perfdata.py forks N    4 MMAP2 in pid 1, then N FORKs alternating
                               1->2 and 2->1, then a sample of pid 1 in the
                               first map (the copying reader grew its maps
                               as Fibonacci: 16 GB in 60 s for N = 60)
  craft-perfdata.py paths N    N MMAP2 of distinct paths in pid 1, then a
                               sample in each (a linear search per path, and
                               per sample of the maps: quadratic)
  craft-perfdata.py ids N      one event with N sample identifiers, a
                               sample under each of the last 100,000 (a
                               linear search per sample: quadratic)
  craft-perfdata.py funcs BIN  BIN mapped in pid 1 (as the kernel maps a
                               PIE), a sample in each function nm lists (a
                               walk of the compile unit's DWARF per address:
                               quadratic in a unit of many functions)
  craft-perfdata.py chunks N   pmon's own recording (docs/pmon-data-format.md):
                               a chunk of 3 samples, N bytes of fake CHNK
                               headers one every 16 bytes (each claiming
                               512 KiB: a CRC of each was ~8 s per MB), then
                               a chunk of 5 samples

The layout is perf's (tools/perf/Documentation/perf.data-file-format.txt):
pipe mode (the 16-byte pipe header, a HEADER_ATTR record holding the attr
and its ids, then the records), file mode for ids (the 104-byte header, one
attr with its ids' section, the data); sample_type IP|TID|PERIOD|ID."""
import struct
import sys
import zlib


def rec(t, body, misc=0):
    return struct.pack("<IHH", t, misc, 8 + len(body)) + body


def attr_rec(ids):
    # perf_event_attr, PERF_ATTR_SIZE_VER7 (128 bytes): cpu-clock
    st = 0x1 | 0x2 | 0x100 | 0x40  # IP | TID | PERIOD | ID
    a = struct.pack("<IIQQQQQ", 1, 128, 0, 1, st, 0, 0) + b"\0" * (128 - 48)
    return rec(64, a + b"".join(struct.pack("<Q", i) for i in ids))


def mmap2(pid, start, name):
    name += b"\0" * (8 - len(name) % 8)
    return rec(10, struct.pack("<IIQQQIIQQII", pid, pid, start, 0x1000, 0, 0, 0, 0, 0, 5, 2) + name,
               misc=2)  # PERF_RECORD_MISC_USER


def sample(ip, pid, sid):
    return rec(9, struct.pack("<QIIQQ", ip, pid, pid, 1, sid), misc=2)


def main():
    kind = sys.argv[1]
    if kind == "funcs":
        import os
        import subprocess
        syms = [s.split() for s in subprocess.check_output(["nm", sys.argv[2]]).decode().splitlines()]
        addrs = sorted(int(a, 16) for a, t, _ in (s for s in syms if len(s) == 3) if t in "Tt")
        base, path = 0x555555554000, os.path.abspath(sys.argv[2]).encode()
        path += b"\0" * (8 - len(path) % 8)
        out = [struct.pack("<8sQ", b"PERFILE2", 16), attr_rec([7])]
        out.append(rec(10, struct.pack("<IIQQQIIQQII", 1, 1, base, 1 << 30, 0, 0, 0, 0, 0, 5, 2)
                       + path, misc=2))
        out += [sample(base + a, 1, 7) for a in addrs]
        sys.stdout.buffer.write(b"".join(out))
        return
    n = int(sys.argv[2])
    out = [struct.pack("<8sQ", b"PERFILE2", 16)]
    if kind == "forks":
        out.append(attr_rec([7]))
        out += [mmap2(1, 0x400000 + 0x1000 * i, b"/bin/f%d" % i) for i in range(4)]
        for k in range(n):
            c, p = (1, 2) if k % 2 else (2, 1)
            out.append(rec(7, struct.pack("<IIIIQ", c, p, c, p, k)))
        out.append(sample(0x400010, 1, 7))
    elif kind == "paths":
        out.append(attr_rec([7]))
        out += [mmap2(1, 0x400000 + 0x1000 * i, b"/p/%d" % i) for i in range(n)]
        out += [sample(0x400010 + 0x1000 * i, 1, 7) for i in range(n)]
    elif kind == "chunks":  # pmon's own recording, version 1
        st = 0x1 | 0x2 | 0x100  # IP | TID | PERIOD
        hdr = struct.pack("<8sIIQIIQQQ", b"PMONDATA", 1, 408, st, 1, 0, 0, 1, 0)
        hdr += b"cpu-clock".ljust(96, b"\0") + b"crafted".ljust(256, b"\0")

        def chunk(k):
            body = b"".join(rec(9, struct.pack("<QIIQ", 0x400010, 1, 1, 1), misc=2)
                            for _ in range(k))
            return struct.pack("<4sIII", b"CHNK", len(body), zlib.crc32(body), k) + body
        fake = bytearray(n)
        for at in range(0, n - 16, 16):
            fake[at:at + 16] = struct.pack("<4sIII", b"CHNK", 512 * 1024 - 8, 1, 1)
        sys.stdout.buffer.write(hdr + chunk(3) + bytes(fake) + chunk(5))
        return
    elif kind == "ids":  # file mode: the attr's ids in a section of their own
        st = 0x1 | 0x2 | 0x100 | 0x40
        attr = struct.pack("<IIQQQQQ", 1, 128, 0, 1, st, 0, 0) + b"\0" * (128 - 48)
        ids = b"".join(struct.pack("<Q", i) for i in range(1, n + 1))
        data = [mmap2(1, 0x400000, b"/bin/f")]
        data += [sample(0x400010 + 16 * (i % 256), 1, i) for i in range(max(1, n - 100000), n + 1)]
        data = b"".join(data)
        ids_at = 104 + 144
        data_at = ids_at + len(ids)
        hdr = struct.pack("<8sQQ", b"PERFILE2", 104, 144)
        hdr += struct.pack("<QQQQQQ", 104, 144, data_at, len(data), 0, 0) + b"\0" * 32
        sys.stdout.buffer.write(hdr + attr + struct.pack("<QQ", ids_at, len(ids)) + ids + data)
        return
    else:
        sys.exit("craft-perfdata.py: forks, paths, ids, chunks or funcs")
    sys.stdout.buffer.write(b"".join(out))


main()
