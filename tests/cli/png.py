# SPDX-License-Identifier: MIT
"""PNG pixels for the CLI tests (python3 and its zlib only): read() decodes
an 8-bit, non-interlaced RGB or RGBA PNG (what cairo and rsvg-convert write)
into rows of (r, g, b); geometry() reads the timeline's layout constants
from include/pmon/plot.h, so that a test computes where a span must be
drawn from the one place that says it."""
import os
import re
import struct
import zlib


def read(path):
    b = open(path, "rb").read()
    assert b[:8] == b"\x89PNG\r\n\x1a\n", path + ": not a PNG"
    i, data, ihdr = 8, b"", None
    while i < len(b):
        n, t = struct.unpack(">I4s", b[i:i + 8])
        body = b[i + 8:i + 8 + n]
        if t == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif t == b"IDAT":
            data += body
        i += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    assert depth == 8 and ctype in (2, 6) and not interlace, ihdr
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(data)
    stride = w * bpp
    rows, prev, at = [], bytearray(stride), 0
    for _ in range(h):
        f, line = raw[at], bytearray(raw[at + 1:at + 1 + stride])
        at += 1 + stride
        if f == 1:
            for x in range(bpp, stride):
                line[x] = (line[x] + line[x - bpp]) & 255
        elif f == 2:
            for x in range(stride):
                line[x] = (line[x] + prev[x]) & 255
        elif f == 3:
            for x in range(stride):
                left = line[x - bpp] if x >= bpp else 0
                line[x] = (line[x] + ((left + prev[x]) >> 1)) & 255
        elif f == 4:
            for x in range(stride):
                a = line[x - bpp] if x >= bpp else 0
                c = prev[x - bpp] if x >= bpp else 0
                bb = prev[x]
                p = a + bb - c
                pa, pb, pc = abs(p - a), abs(p - bb), abs(p - c)
                pr = a if pa <= pb and pa <= pc else bb if pb <= pc else c
                line[x] = (line[x] + pr) & 255
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, bpp)])
        prev = line
    return w, h, rows


def light(c):
    """A background: white, the alternate lanes' grey, a grid line."""
    return min(c) > 200


def geometry(src):
    text = open(os.path.join(src, "include", "pmon", "plot.h")).read()
    return {k: int(v) for k, v in re.findall(r"#define PMON_PLOT_TRACE_(\w+) (\d+)", text)}


def bar_y(g, lane_y, row):
    """The first pixel row inside the bar of row @row of a lane at @lane_y."""
    return lane_y + g["PAD"] + row * g["ROW"] + (g["ROW"] - g["BAR"]) // 2 + 1


def x_at(g, ns, frm, to, width):
    x0, x1 = g["LEFT"], width - g["RIGHT"]
    return x0 + (ns - frm) * (x1 - x0) / (to - frm)
