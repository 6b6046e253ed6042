#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Writes the regression inputs of the report fuzz harnesses (run from
# tests/fuzz/): each is a crash or a path that a fix covers, as a whole
# recording for fuzz-report (seeds-report/) and as the record stream of
# fuzz-report-records (seeds-report-records/).
#  dwarf-wrap: a --call-graph dwarf sample whose rbp puts the return address
#    at 2^64 - 8: unwind.c's memory_read checked addr + 8 > sp + size, which
#    wrapped, and read ~2^64 bytes past the stack copy (issue #15, crash 1).
#    The CFI that makes the CFA rbp + 16 is libc's at 0x27904 (Debian 12's
#    libc.so.6); elsewhere the input still runs, without the crash.
#  misaligned: a record of 10 bytes puts the next header off 8-byte
#    alignment (issue #15, crash 3: UBSan in the sanitizer build).
#  torn: three chunks, the middle one's payload flipped (the resync path).
import struct, zlib

LIBC = b"/usr/lib/x86_64-linux-gnu/libc.so.6"
BASE = 0x7F0000000000
IP, TID, TIME, CPU, PERIOD, CALLCHAIN = 0x1, 0x2, 0x4, 0x80, 0x100, 0x20
REGS_USER, STACK_USER, IDENTIFIER = 0x1000, 0x2000, 0x10000
REGS_X86 = 0xFF01FF

def header(version, sample_type, regs_user=0):
    h = struct.pack("<8sIIQIIQQQ96s256s", b"PMONDATA", version, 416 if version == 2 else 408,
                    sample_type, 1, 0, 0, 0, 1000, b"cpu-clock", b"seed")
    return h + (struct.pack("<Q", regs_user) if version == 2 else b"")

def mmap2(pid, start, length, pgoff, path):
    name = path + b"\0"
    name += b"\0" * (-len(name) % 8)
    return struct.pack("<IHHIIQQQIIQQII", 10, 0, 72 + len(name), pid, pid, start, length,
                       pgoff, 0, 0, 0, 0, 5, 2) + name

def chunk(recs, raw=True):
    return struct.pack("<4sIII", b"CHNK", len(recs), zlib.crc32(recs), 1) + recs

def prefix(flags, per_chunk, sample_type, regs_user=0):
    return struct.pack("<BB6xQQ", flags, per_chunk, sample_type, regs_user)

# dwarf-wrap
st = IP | TID | CALLCHAIN | REGS_USER | STACK_USER
regs = [0] * 17  # perf order: AX BX CX DX SI DI BP SP IP R8-R15
regs[6] = 0xFFFFFFFFFFFFFFF0  # bp: the CFA (bp + 16) ends the address space
regs[7] = 0x7FFC00000000  # sp
regs[8] = BASE + 0x27904  # ip: after "push rbp; mov rbp, rsp" in libc
stack = b"\x11" * 64
body = struct.pack("<QIIQQ", BASE + 0x27904, 7, 7, 0, 2) + struct.pack("<17Q", *regs) + \
    struct.pack("<Q", len(stack)) + stack + struct.pack("<Q", len(stack))
sample = struct.pack("<IHH", 9, 0, 8 + len(body)) + body
recs = mmap2(7, BASE, 0x200000, 0, LIBC) + sample
open("seeds-report/dwarf-wrap.data", "wb").write(header(2, st, REGS_X86) + chunk(recs))
open("seeds-report-records/dwarf-wrap.bin", "wb").write(prefix(1, 15, st, REGS_X86) + recs)

# misaligned
st = IP | TID | TIME
def s3(ip):
    return struct.pack("<IHHQIIQ", 9, 0, 32, ip, 1, 1, 0)
recs = s3(0x1000) + struct.pack("<IHH", 9, 0, 10) + b"\0" * 2 + s3(0x2000) * 3
open("seeds-report/misaligned.data", "wb").write(header(1, st) + chunk(recs) + chunk(s3(0x3000)))
open("seeds-report-records/misaligned.bin", "wb").write(prefix(0, 15, st) + recs)

# torn: the middle of three chunks damaged
st = IP | TID | PERIOD | CALLCHAIN
def sc(ip, n):
    chain = [0xFFFFFFFFFFFFFE00] + [ip + 16 * k for k in range(n)]
    body = struct.pack("<QIIQQ", ip, 3, 3, 1000, len(chain)) + struct.pack("<%dQ" % len(chain), *chain)
    return struct.pack("<IHH", 9, 0, 8 + len(body)) + body
recs = [mmap2(3, 0x400000, 0x1000, 0, b"/bin/true") + sc(0x400100, 3), sc(0x400200, 2) * 4,
        sc(0x400300, 4) * 2]
c = [chunk(r) for r in recs]
mid = bytearray(c[1])
mid[40] ^= 0x40
open("seeds-report/torn.data", "wb").write(header(1, st) + c[0] + bytes(mid) + c[2])
open("seeds-report-records/torn.bin", "wb").write(prefix(4 | 8, 1, st) + b"".join(recs))
