# SPDX-License-Identifier: GPL-2.0-or-later
"""CRC32c (Castagnoli), as RFC 5044 §4.4 uses it: the iSCSI CRC of RFC 3720
§12.1 and App. B.4.

Reflected, polynomial 0x1EDC6F41 (reflected constant 0x82F63B78), initial
value and final XOR 0xFFFFFFFF; check("123456789") = 0xE3069283. On the
wire MPA sends the 32-bit value least-significant byte first, so the CRC
field of an FPDU is ``struct.pack("<I", crc32c(covered_octets))``.

Pure Python, one table lookup per octet.
"""

import struct

__all__ = ["crc32c", "crc32c_update", "crc32c_wire", "CRC32C_INIT", "CRC32C_RESIDUE"]

CRC32C_POLY_REFLECTED = 0x82F63B78
CRC32C_INIT = 0xFFFFFFFF
#: Register value left after running the CRC over data plus its CRC field
#: (the bit reversal of RFC 3720's remainder 0x1C2D19ED).
CRC32C_RESIDUE = 0xB798B438


def _make_table():
    table = []
    for byte in range(256):
        reg = byte
        for _ in range(8):
            reg = (reg >> 1) ^ (CRC32C_POLY_REFLECTED if reg & 1 else 0)
        table.append(reg)
    return tuple(table)


_TABLE = _make_table()


def crc32c_update(state, data):
    """Feed ``data`` into a running register (start from CRC32C_INIT); the
    CRC is the final register XOR 0xFFFFFFFF."""
    table = _TABLE
    for octet in bytes(data):
        state = table[(state ^ octet) & 0xFF] ^ (state >> 8)
    return state


def crc32c(data):
    """CRC32c of ``data`` as an integer (0xE3069283 for b"123456789")."""
    return crc32c_update(CRC32C_INIT, data) ^ 0xFFFFFFFF


def crc32c_wire(data):
    """The 4 octets MPA puts on the wire for ``data``: least significant first."""
    return struct.pack("<I", crc32c(data))
