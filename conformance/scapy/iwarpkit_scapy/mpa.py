# SPDX-License-Identifier: GPL-2.0-or-later
"""MPA (RFC 5044) for Scapy: the Request/Reply startup frames (§7.1.1, with
RFC 6581 §6/§9 enhanced data), the FPDU (§4.1, CRC32c §4.4) and the Marker
(§4.2). Streams with markers are laid out and taken apart by markers.py.
"""

import struct

from scapy.fields import (
    BitField,
    ByteField,
    ConditionalField,
    ShortField,
    StrFixedLenField,
    StrLenField,
    XLEIntField,
    XShortField,
    XStrLenField,
)
from scapy.layers.inet import TCP
from scapy.packet import Packet, bind_layers, split_layers

from .crc32c import crc32c
from .ddp import DDPTagged, DDPUntagged

__all__ = [
    "MPA",
    "MPARequest",
    "MPAReply",
    "MPAFPDU",
    "MPAMarker",
    "MPA_KEY_REQ",
    "MPA_KEY_REP",
    "MPA_PD_MAX",
    "MPA_V2_NO_NEG",
    "mpa_pad_len",
    "bind_iwarp_port",
    "unbind_iwarp_port",
]

MPA_KEY_REQ = b"MPA ID Req Frame"  # RFC 5044 §7.1.1
MPA_KEY_REP = b"MPA ID Rep Frame"
MPA_RR_HDR_LEN = 20  # key, flags, Rev, PD_Length
MPA_PD_MAX = 512
MPA_V2_DATA_LEN = 4  # RFC 6581 §9
MPA_V2_NO_NEG = 0x3FFF  # RFC 6581 §9.1: no automatic IRD/ORD negotiation


def mpa_pad_len(ulpdu_len):
    """PAD octets after a ULPDU so that the FPDU is a multiple of 4 (§4.1)."""
    return -(2 + ulpdu_len) % 4


class MPA(Packet):
    """Dispatcher for one direction's octets: ``MPA(octets)`` dissects an
    MPA Request or Reply (by its key) or else an FPDU. It is the layer
    bound to TCP by bind_iwarp_port()."""

    name = "MPA"

    @classmethod
    def dispatch_hook(cls, _pkt=None, *args, **kargs):
        if cls is not MPA:
            return cls
        if _pkt and _pkt[:16] == MPA_KEY_REQ:
            return MPARequest
        if _pkt and _pkt[:16] == MPA_KEY_REP:
            return MPAReply
        return MPAFPDU


# ---- Request / Reply (RFC 5044 §7.1.1 Fig. 8, RFC 6581 §6, §9) ----


def _enhanced(pkt):
    """RFC 6581 §6: S=1 puts the enhanced data first in the Private Data;
    S is meaningful only with Rev >= 2 (under Rev 1 it is a Res bit).
    Rev left None is 2 when S=1."""
    return bool(pkt.s) and (pkt.rev is None or pkt.rev >= 2)


class _MPAStartFrame(MPA):
    """Fields shared by MPARequest and MPAReply.

    Flags (octet 16): ``m`` Markers required in the peer's FPDUs, ``c`` CRC
    preferred, ``r`` Rejected (Reply; 0 in a Request), ``s`` enhanced data
    present (RFC 6581), ``res`` the 4 reserved bits. ``rev`` left None is 2
    with S=1 and 1 otherwise. ``pd_length`` left None counts the Private
    Data including the 4-octet enhanced data.

    With S=1 (and Rev >= 2) the enhanced data (RFC 6581 §9) comes first:
    ``p2p`` = A (peer-to-peer), ``rtr_send`` = B (zero-length Send RTR),
    ``ird`` (14 bits), ``rtr_write`` = C (zero-length RDMA Write RTR),
    ``rtr_read`` = D (zero-length RDMA Read RTR), ``ord`` (14 bits);
    0x3FFF (MPA_V2_NO_NEG) means no automatic negotiation. ``private_data``
    is the ULP's part after it.
    """

    fields_desc = [
        StrFixedLenField("key", MPA_KEY_REQ, 16),
        BitField("m", 0, 1),
        BitField("c", 1, 1),
        BitField("r", 0, 1),
        BitField("s", 0, 1),
        BitField("res", 0, 4),
        ByteField("rev", None),
        ShortField("pd_length", None),
        ConditionalField(BitField("p2p", 0, 1), _enhanced),
        ConditionalField(BitField("rtr_send", 0, 1), _enhanced),
        ConditionalField(BitField("ird", 16, 14), _enhanced),
        ConditionalField(BitField("rtr_write", 0, 1), _enhanced),
        ConditionalField(BitField("rtr_read", 0, 1), _enhanced),
        ConditionalField(BitField("ord", 16, 14), _enhanced),
        StrLenField(
            "private_data",
            b"",
            length_from=lambda pkt: max(
                0, pkt.pd_length - (MPA_V2_DATA_LEN if _enhanced(pkt) else 0)
            ),
        ),
    ]

    def post_build(self, p, pay):
        if self.rev is None:
            p = p[:17] + bytes([2 if self.s else 1]) + p[18:]
        if self.pd_length is None:
            p = p[:18] + struct.pack("!H", len(p) - MPA_RR_HDR_LEN) + p[20:]
        return p + pay

    def extract_padding(self, s):
        # The frame ends with its Private Data; what follows is Full
        # Operation (FPDUs, maybe with markers: see markers.py).
        return b"", s

    def mysummary(self):
        return self.sprintf("%name% Rev=%rev% M=%m% C=%c% R=%r% S=%s% PD_Length=%pd_length%")


class MPARequest(_MPAStartFrame):
    name = "MPA Request"


class MPAReply(_MPAStartFrame):
    name = "MPA Reply"
    fields_desc = [StrFixedLenField("key", MPA_KEY_REP, 16)] + _MPAStartFrame.fields_desc[1:]


# ---- FPDU (RFC 5044 §4.1) ----


class MPAFPDU(MPA):
    """One FPDU without markers: ULPDU_Length, the ULPDU (this layer's
    payload: one DDP segment), PAD and CRC.

    On the wire PAD and CRC follow the ULPDU; this layer keeps them as its
    own fields ``pad`` and ``crc`` and moves them into place when building
    and dissecting. Left None: ``ulpdu_length`` is the payload's length,
    ``pad`` the zero octets that make the FPDU a multiple of 4, and ``crc``
    the CRC32c over ULPDU_Length, ULPDU and PAD (§4.4). The CRC value is an
    integer sent least-significant byte first (0x83992352 is ``52 23 99
    83`` on the wire).

    A CRC that must cover markers (§4.4) is computed by markers.py, which
    lays FPDUs on the marker grid; building one FPDU here is the marker-free
    case. Octets after the FPDU (more FPDUs in the same TCP segment) end up
    as Padding: MPAStream.dissect() walks them.
    """

    name = "MPA FPDU"
    fields_desc = [
        ShortField("ulpdu_length", None),
        XStrLenField("pad", None, length_from=lambda pkt: mpa_pad_len(pkt.ulpdu_length)),
        XLEIntField("crc", None),
    ]

    def post_build(self, p, pay):
        # p holds ULPDU_Length, PAD (as given) and CRC; lay them out as
        # ULPDU_Length, ULPDU, PAD, CRC.
        hdr = struct.pack("!H", len(pay)) if self.ulpdu_length is None else p[:2]
        pad = b"\0" * mpa_pad_len(len(pay)) if self.pad is None else p[2:-4]
        crc = p[-4:]
        if self.crc is None:
            crc = struct.pack("<I", crc32c(hdr + pay + pad))
        return hdr + pay + pad + crc

    def pre_dissect(self, s):
        # Move PAD and CRC ahead of the ULPDU so that the fields read them
        # in order; a truncated FPDU is left as it is.
        if len(s) < 2:
            return s
        ulen = struct.unpack("!H", s[:2])[0]
        end = 2 + ulen
        tail = end + mpa_pad_len(ulen) + 4
        if len(s) < tail:
            return s
        return s[:2] + s[end:tail] + s[2:end] + s[tail:]

    def post_dissect(self, s):
        # The cached raw octets are in dissection order, not wire order:
        # drop them so that rebuilding goes through post_build.
        self.raw_packet_cache = None
        return s

    def extract_padding(self, s):
        return s[: self.ulpdu_length], s[self.ulpdu_length :]

    def guess_payload_class(self, payload):
        # RFC 5041 §4.1: the T bit picks the header.
        return DDPTagged if payload[0] & 0x80 else DDPUntagged

    def compute_crc(self):
        """CRC32c of this FPDU as built without markers (§4.4)."""
        wire = bytes(self)
        return crc32c(wire[:-4])

    def crc_ok(self):
        """True when the CRC field matches the marker-free coverage."""
        return self.crc == self.compute_crc()

    def mysummary(self):
        return self.sprintf("MPA FPDU ULPDU_Length=%ulpdu_length% CRC=%crc%")


class MPAMarker(Packet):
    """A Marker, RFC 5044 §4.2: 16 reserved bits then FPDUPTR, the octets
    from the Marker back to its FPDU's ULPDU_Length (0: the Marker sits
    just before an FPDU and belongs to it). Stream helpers place them."""

    name = "MPA Marker"
    fields_desc = [XShortField("reserved", 0), ShortField("fpduptr", 0)]

    def extract_padding(self, s):
        return b"", s


# ---- TCP binding ----


def bind_iwarp_port(port):
    """Dissect TCP payloads to or from ``port`` as iWARP (MPA startup frames
    or marker-free FPDUs). iWARP has no well-known port."""
    bind_layers(TCP, MPA, dport=port)
    bind_layers(TCP, MPA, sport=port)


def unbind_iwarp_port(port):
    split_layers(TCP, MPA, dport=port)
    split_layers(TCP, MPA, sport=port)
