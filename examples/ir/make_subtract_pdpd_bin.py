#!/usr/bin/env python3
"""Writes subtract_pdpd.bin: the Const b of subtract_pdpd.xml, i32 [3,1] = [[10],[20],[30]].

12 bytes, little-endian, at offset 0 (the Const's offset="0" size="12").
Run from anywhere: python3 examples/ir/make_subtract_pdpd_bin.py
"""
import pathlib
import struct

path = pathlib.Path(__file__).with_name("subtract_pdpd.bin")
path.write_bytes(struct.pack("<3i", 10, 20, 30))
print(f"wrote {path} ({path.stat().st_size} bytes)")
