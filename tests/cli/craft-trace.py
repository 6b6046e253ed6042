#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Crafted pmon trace files (docs/trace.md, lib/trace/tracefile.h) for the
bounds of issue #31: each shape once cost `pmon trace report` time beyond
the file's size.

  craft-trace.py resync N     N bytes of fake TEVT chunk headers, one every
                              16 bytes, each claiming the rest of the
                              stretch as its payload (a CRC of each: the
                              resync was quadratic), then a channel "good"
                              with 3 marks
  craft-trace.py syscalls N   a channel "good" with 3 marks, then one
                              kernel sys_enter record of each of N syscall
                              numbers no table names (a search of the
                              kernel channels per record: quadratic)

Every file is version 1 (no TCLK chunk: CLOCK_MONOTONIC), 1 GHz ticks, and
ends with a TEND chunk."""
import struct
import sys
import zlib


def chunk(magic, payload):
    return struct.pack("<4sIII", magic, len(payload), zlib.crc32(payload), 0) + payload


def header():
    h = struct.pack("<8sIIiIQQQQ", b"PMONTRC1", 1, 312, 4242, 0, 1000000000, 1000, 1000000, 10)
    return h + b"crafted".ljust(256, b"\0")


def good():
    out = [chunk(b"TCHN", struct.pack("<II", 1, 4) + b"good")]
    recs = b"".join(struct.pack("<QII", 2000 + 1000 * i, (3 << 28) | 1, 0) for i in range(3))
    out.append(chunk(b"TEVT", struct.pack("<iIQ", 4242, 3, 0) + recs))
    return out


def end():
    return chunk(b"TEND", struct.pack("<QQQQ", 10 ** 9, 10 ** 9 + 1000000, 10, 0))


def main():
    kind, n = sys.argv[1], int(sys.argv[2])
    out = [header()]
    if kind == "resync":
        fake = bytearray(n)
        for at in range(0, n - 16, 16):
            left = n - at - 16
            fake[at:at + 16] = struct.pack("<4sIII", b"TEVT", min(left, 16 << 20), 1, 0)
        out.append(bytes(fake))
        out += good()
    elif kind == "syscalls":
        out += good()
        for base in range(0, n, 4096):
            k = min(4096, n - base)
            recs = b"".join(struct.pack("<QiHHqq", 5000 + i, 4242, 5, 0, 100000 + base + i, 0)
                            for i in range(k))
            out.append(chunk(b"TKEV", struct.pack("<IIQ", k, 0, 0) + recs))
    else:
        sys.exit("craft-trace.py: unknown shape '%s'" % kind)
    out.append(end())
    sys.stdout.buffer.write(b"".join(out))


main()
