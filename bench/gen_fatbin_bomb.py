#!/usr/bin/env python3
"""Writes a small fatbin whose entries decompress to far more than they hold.

    gen_fatbin_bomb.py OUT

Three zstd-compressed PTX entries, each declaring 400 MiB (within the
per-entry limits: 420 KiB of PTX text, then RLE blocks of zeros), about
1.3 MB on disk. Used by bench/limits.sh (what the total cap saves) and
tests/cli/t_hostile_limits.sh (that inspect refuses it, issue 36 item 8a).
"""
import struct
import sys

SIZE, RAW, BLOCK = 400 << 20, 420 << 10, 128 << 10


def block_header(last, kind, n):
    return struct.pack("<I", last | kind << 1 | n << 3)[:3]


def main(out):
    ptx = b".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n// "
    text = ptx + b"x" * (RAW - len(ptx) - 1) + b"\n"
    frame = struct.pack("<IBQ", 0xFD2FB528, 0xE0, SIZE)
    for pos in range(0, RAW, BLOCK):
        frame += block_header(0, 0, len(text[pos:pos + BLOCK])) + text[pos:pos + BLOCK]
    left = SIZE - RAW
    while left:
        n = min(BLOCK, left)
        left -= n
        frame += block_header(left == 0, 1, n) + b"\0"
    frame += b"\0" * (-len(frame) % 8)
    ent = bytearray(64)
    struct.pack_into("<HHIQI", ent, 0, 1, 0x101, 64, len(frame), len(frame))
    struct.pack_into("<II", ent, 0x18, 0x80000, 90)
    struct.pack_into("<QQ", ent, 0x28, 0x8011, 0)
    struct.pack_into("<Q", ent, 0x38, SIZE)
    ents = (bytes(ent) + frame) * 3
    with open(out, "wb") as f:
        f.write(struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(ents)) + ents)


if __name__ == "__main__":
    main(sys.argv[1])
