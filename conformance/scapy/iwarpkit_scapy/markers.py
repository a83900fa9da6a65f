# SPDX-License-Identifier: GPL-2.0-or-later
"""Markers and FPDU streams, RFC 5044 §4.2-4.4.

A Marker is 4 octets (16 reserved bits, FPDUPTR) at every stream position
that is a multiple of 512 relative to SeqStart, the sequence number of the
first octet of Full Operation (§4.3). Positions here are that grid
position: ``pos = (TCP seq - SeqStart) mod 2**32``; 512 divides 2**32, so
sequence-number wrap changes nothing.

FPDUPTR counts the octets from the Marker back to the ULPDU_Length of the
FPDU it falls in; a Marker exactly between FPDUs has FPDUPTR 0 and belongs
to the FPDU that follows: that FPDU's CRC covers it (§4.4), as it covers a
Marker that falls right after the PAD, before the CRC field.

Any grid position works, including ones off the 4-octet alignment that a
conformant sender keeps (a Marker may then split ULPDU_Length or the CRC,
and FPDUPTR gets non-zero low bits): that is for crafting broken streams.
"""

import struct
from collections import namedtuple

from scapy.packet import Packet

from .crc32c import crc32c
from .mpa import MPA_KEY_REP, MPA_KEY_REQ, MPA_RR_HDR_LEN, MPA, MPAFPDU, mpa_pad_len

__all__ = [
    "MARKER_INTERVAL",
    "MarkerInfo",
    "FramedFPDU",
    "MPAStream",
    "marker_gap",
    "wire_offset",
    "insert_markers",
    "remove_markers",
    "frame_fpdu",
    "dissect_stream",
]

MARKER_INTERVAL = 512
MARKER_LEN = 4
_POS_MASK = 0xFFFFFFFF

#: One Marker found on the wire: its offset in the octets given, its grid
#: position, and its two fields.
MarkerInfo = namedtuple("MarkerInfo", "wire_off pos reserved fpduptr")


def marker_gap(pos):
    """Octets from grid position ``pos`` to the next Marker (0: one starts here)."""
    return -pos % MARKER_INTERVAL


def wire_offset(pos, logical):
    """Wire offset of logical octet ``logical`` of a run whose first wire
    octet is at grid position ``pos``; a Marker due before an octet
    precedes it."""
    wire = 0
    while True:
        gap = marker_gap(pos + wire)
        if gap == 0:
            wire += MARKER_LEN
            continue
        if logical < gap:
            return wire + logical
        wire += gap
        logical -= gap


def _fpdu_starts(logical):
    """Offsets of the ULPDU_Length fields of FPDUs laid end to end."""
    starts, off = [], 0
    while off + 2 <= len(logical):
        starts.append(off)
        ulen = struct.unpack_from("!H", logical, off)[0]
        off += 2 + ulen + mpa_pad_len(ulen) + 4
    return starts


def insert_markers(logical, pos=0, fpdu_starts=None):
    """Insert Markers into ``logical`` (FPDUs end to end, without Markers),
    whose first octet is at grid position ``pos``.

    Each Marker's FPDUPTR points back to the ULPDU_Length of the FPDU it
    falls in, or is 0 when it falls right before an FPDU. FPDU boundaries
    are found from the ULPDU_Length fields, or given as ``fpdu_starts``
    (logical offsets). CRC fields are left as they are: frame_fpdu() and
    MPAStream compute CRCs over the Markers.
    """
    logical = bytes(logical)
    starts = sorted(fpdu_starts) if fpdu_starts is not None else _fpdu_starts(logical)
    out = bytearray()
    hdr_wire = None  # wire offset of the current FPDU's ULPDU_Length
    nxt = 0  # index into starts of the next FPDU
    off = 0
    while off < len(logical):
        wire = len(out)
        if marker_gap(pos + wire) == 0:
            if hdr_wire is None or (nxt < len(starts) and starts[nxt] == off):
                ptr = 0
            else:
                ptr = wire - hdr_wire
            out += struct.pack("!HH", 0, ptr & 0xFFFF)
            continue
        if nxt < len(starts) and starts[nxt] == off:
            hdr_wire = wire
            nxt += 1
        run = min(marker_gap(pos + wire), len(logical) - off)
        if nxt < len(starts):
            run = min(run, starts[nxt] - off)
        out += logical[off : off + run]
        off += run
    return bytes(out)


def remove_markers(wire, pos=0):
    """Strip Markers from ``wire`` (first octet at grid position ``pos``).
    Returns (logical octets, [MarkerInfo]). A Marker cut short by the end
    of the octets is dropped and not reported."""
    wire = bytes(wire)
    out = bytearray()
    found = []
    off = 0
    while off < len(wire):
        gap = marker_gap(pos + off)
        if gap == 0:
            if off + MARKER_LEN > len(wire):
                break
            reserved, ptr = struct.unpack_from("!HH", wire, off)
            found.append(MarkerInfo(off, (pos + off) & _POS_MASK, reserved, ptr))
            off += MARKER_LEN
            continue
        run = min(gap, len(wire) - off)
        out += wire[off : off + run]
        off += run
    return bytes(out), found


def _crc_is_auto(fpdu):
    return isinstance(fpdu, Packet) and fpdu.getlayer(MPAFPDU) is not None and (
        fpdu[MPAFPDU].crc is None
    )


def frame_fpdu(fpdu, pos=0, markers=False, crc=True):
    """Wire octets of one FPDU whose first wire octet is at grid position
    ``pos``: a leading Marker if ``pos`` is on the grid, then the FPDU with
    Markers inserted (when ``markers``).

    ``fpdu`` is an MPAFPDU packet or its octets. When the packet's ``crc``
    is None the CRC is computed over the §4.4 coverage (from the first wire
    octet, a leading Marker included, through the PAD and a Marker right
    after it) or, with ``crc=False`` (CRCs not in use), set to zero as
    libiwarp does. An explicit CRC, or octets, are sent as they are.
    """
    auto = _crc_is_auto(fpdu)
    logical = bytes(fpdu)
    if not markers:
        wire = bytearray(logical)
        crc_at = [len(logical) - 4 + i for i in range(4)]
    else:
        wire = bytearray(insert_markers(logical, pos, [0]))
        # A Marker can split the CRC field only off the 4-octet alignment.
        crc_at = [wire_offset(pos, len(logical) - 4 + i) for i in range(4)]
    if auto:
        value = crc32c(bytes(wire[: crc_at[0]])) if crc else 0
        for at, octet in zip(crc_at, struct.pack("<I", value)):
            wire[at] = octet
    return bytes(wire)


class FramedFPDU:
    """One FPDU as found on the wire by MPAStream.dissect().

    ``fpdu`` is the MPAFPDU packet (Markers removed), ``wire`` its octets
    as sent, ``pos`` the grid position of the first of them, ``wire_off``
    their offset in the stream, ``markers`` the MarkerInfo list, and
    ``crc_calc`` the CRC32c over the §4.4 coverage.
    """

    __slots__ = ("fpdu", "wire", "pos", "wire_off", "markers", "hdr_off", "crc_calc")

    def __init__(self, fpdu, wire, pos, wire_off, markers, hdr_off, crc_calc):
        self.fpdu = fpdu
        self.wire = wire
        self.pos = pos
        self.wire_off = wire_off
        self.markers = markers
        self.hdr_off = hdr_off
        self.crc_calc = crc_calc

    @property
    def crc_ok(self):
        return self.fpdu.crc == self.crc_calc

    def expected_fpduptr(self, marker):
        """What ``marker``'s FPDUPTR should be (§4.2)."""
        return 0 if marker.wire_off < self.hdr_off else marker.wire_off - self.hdr_off

    @property
    def markers_ok(self):
        """Every Marker points at this FPDU's ULPDU_Length (the receiver
        treats FPDUPTR's two low bits as 0, §4.2)."""
        return all(m.fpduptr & ~3 == self.expected_fpduptr(m) for m in self.markers)

    def __repr__(self):
        return "<FramedFPDU pos=%#x wire_len=%d markers=%d crc_ok=%s %r>" % (
            self.pos,
            len(self.wire),
            len(self.markers),
            self.crc_ok,
            self.fpdu,
        )


class MPAStream:
    """One direction of Full Operation, from grid position ``pos``.

    ``build(*fpdus)`` lays FPDUs end to end (frame_fpdu for each) and
    returns the octets; ``dissect(octets)`` takes whole FPDUs off the
    octets given so far and returns FramedFPDU objects, keeping a trailing
    partial FPDU in ``pending`` for the next call. Both advance ``pos``.
    """

    def __init__(self, pos=0, markers=False, crc=True):
        self.pos = pos & _POS_MASK
        self.markers = markers
        self.crc = crc
        self.pending = b""
        self._consumed = 0

    def build(self, *fpdus):
        out = bytearray()
        for fpdu in fpdus:
            wire = frame_fpdu(fpdu, self.pos, self.markers, self.crc)
            out += wire
            self.pos = (self.pos + len(wire)) & _POS_MASK
        return bytes(out)

    def _wire_len(self, ulen):
        logical = 2 + ulen + mpa_pad_len(ulen) + 4
        if not self.markers:
            return logical
        return wire_offset(self.pos, logical - 1) + 1

    def dissect(self, octets):
        data = self.pending + bytes(octets)
        base = self._consumed - len(self.pending)
        frames = []
        off = 0
        while True:
            pos = self.pos
            # ULPDU_Length, which may sit after (or around) a Marker.
            hdr_end = wire_offset(pos, 1) + 1 if self.markers else 2
            if len(data) - off < hdr_end:
                break
            head = data[off : off + hdr_end]
            if self.markers:
                head = remove_markers(head, pos)[0]
            total = self._wire_len(struct.unpack("!H", head[:2])[0])
            if len(data) - off < total:
                break
            wire = data[off : off + total]
            if self.markers:
                logical, found = remove_markers(wire, pos)
                hdr_off = wire_offset(pos, 0)
                cover = wire_offset(pos, len(logical) - 4)
            else:
                logical, found, hdr_off, cover = wire, [], 0, total - 4
            frames.append(
                FramedFPDU(
                    MPAFPDU(logical), wire, pos, base + off, found, hdr_off,
                    crc32c(wire[:cover]),
                )
            )
            off += total
            self.pos = (pos + total) & _POS_MASK
        self.pending = data[off:]
        self._consumed += len(octets)
        return frames


def dissect_stream(octets, markers=None, pos=0):
    """Dissect one direction of an iWARP connection from its first octet:
    an optional MPA Request or Reply, then FPDUs from grid position 0.

    Returns ``(start_frame, frames, rest)``: the MPARequest/MPAReply (or
    None when ``octets`` start with an FPDU at grid position ``pos``), the
    FramedFPDU list, and trailing octets that do not make a whole FPDU.
    ``markers`` None guesses as libiwarp's deframer does: after a startup
    frame, FPDUs start with a Marker iff the next two octets are 00 00 (no
    ULPDU is shorter than a DDP header); mid-stream, no Markers.
    """
    octets = bytes(octets)
    start = None
    if octets[:16] in (MPA_KEY_REQ, MPA_KEY_REP) and len(octets) >= MPA_RR_HDR_LEN:
        start = MPA(octets)
        octets = octets[MPA_RR_HDR_LEN + start.pd_length :]
        pos = 0
        if markers is None:
            markers = octets[:2] == b"\0\0"
    stream = MPAStream(pos=pos, markers=bool(markers))
    frames = stream.dissect(octets)
    return start, frames, stream.pending
