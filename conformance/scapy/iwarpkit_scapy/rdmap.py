# SPDX-License-Identifier: GPL-2.0-or-later
"""RDMAP headers that follow an untagged DDP header: RFC 5040 §4.4 (Read
Request), §4.8 (Terminate), RFC 7306 §5.2 (Atomic Request/Response) and
§6.2 (Immediate Data), with the RFC 6580 error registry for Terminates.

Each layer is bound under DDPUntagged with its opcode, so
``DDPUntagged()/RDMAPReadRequest()`` gets opcode 0x1 (and QN 1) by itself,
and dissection picks the layer from the opcode.
"""

from scapy.fields import (
    BitEnumField,
    BitField,
    BitMultiEnumField,
    ConditionalField,
    IntField,
    MultiEnumField,
    PacketField,
    ShortField,
    XIntField,
    XLongField,
    XStrFixedLenField,
)
from scapy.packet import Packet, bind_layers

from .ddp import (
    DDP_TAGGED_HDR_LEN,
    DDP_UNTAGGED_HDR_LEN,
    RDMAP_HEADER_LAYERS,
    DDPTagged,
    DDPUntagged,
)

__all__ = [
    "RDMAPReadRequest",
    "RDMAPTerminate",
    "RDMAPAtomicRequest",
    "RDMAPAtomicResponse",
    "RDMAPImmediateData",
    "TERM_LAYERS",
    "TERM_ETYPES",
    "TERM_ERRORS",
    "term_error",
    "term_error_name",
    "ATOMIC_OPCODES",
]


class _FixedHeader(Packet):
    """An RDMAP header that is the whole message: nothing follows it, so
    trailing octets are padding (and the layer also works inside a
    PacketField, as the Terminate's copied Read Request header does)."""

    def extract_padding(self, s):
        return b"", s


class RDMAPReadRequest(_FixedHeader):
    """RDMA Read Request header, RFC 5040 §4.4 Fig. 6 (28 octets). With
    read_size (RDMARDSZ) 0 the source STag/TO are not validated (§5.2.1)."""

    name = "RDMAP Read Request"
    fields_desc = [
        XIntField("sink_stag", 0),
        XLongField("sink_to", 0),
        IntField("read_size", 0),
        XIntField("src_stag", 0),
        XLongField("src_to", 0),
    ]


# ---- Terminate (RFC 5040 §4.8) and the RFC 6580 error registry ----

#: Terminate Layer values (RFC 5040 §4.8 Fig. 9; RFC 6580 §3).
TERM_LAYERS = {0x0: "RDMA", 0x1: "DDP", 0x2: "LLP"}

#: Error Types per Layer (RFC 6580 §3.1-3.3; Layer 2 EType 0 is MPA). The two
#: Local Catastrophic types carry their layer, as in libiwarp's err.h.
TERM_ETYPES = {
    0x0: {
        0x0: "RDMA Local Catastrophic Error",
        0x1: "Remote Protection Error",
        0x2: "Remote Operation Error",
    },
    0x1: {
        0x0: "DDP Local Catastrophic",
        0x1: "Tagged Buffer Error",
        0x2: "Untagged Buffer Error",
        0x3: "Reserved for use by Lower Layer Protocol",
    },
    0x2: {0x0: "MPA Error"},
}

#: The registry (RFC 6580 §3.1-3.3; MPA codes 5-7 from RFC 6581 §8), as
#: symbolic name -> (layer, etype, code). The names are libiwarp's
#: (reference-stack/lib/include/iwarp/err.h). Where the registry says "ALL"
#: codes, code 0x00 stands for the entry.
TERM_ERRORS = {
    "RDMAP_LOCAL_CATASTROPHIC": (0x0, 0x0, 0x00),
    "RDMAP_INVALID_STAG": (0x0, 0x1, 0x00),
    "RDMAP_BASE_BOUNDS": (0x0, 0x1, 0x01),
    "RDMAP_ACCESS_RIGHTS": (0x0, 0x1, 0x02),
    "RDMAP_STAG_NOT_ASSOC": (0x0, 0x1, 0x03),
    "RDMAP_TO_WRAP": (0x0, 0x1, 0x04),
    "RDMAP_PROT_CANT_INVALIDATE": (0x0, 0x1, 0x09),
    "RDMAP_PROT_UNSPECIFIED": (0x0, 0x1, 0xFF),
    "RDMAP_INVALID_VERSION": (0x0, 0x2, 0x05),
    "RDMAP_UNEXPECTED_OPCODE": (0x0, 0x2, 0x06),
    "RDMAP_CATASTROPHIC_STREAM": (0x0, 0x2, 0x07),
    "RDMAP_CATASTROPHIC_GLOBAL": (0x0, 0x2, 0x08),
    "RDMAP_OP_CANT_INVALIDATE": (0x0, 0x2, 0x09),
    "RDMAP_OP_UNSPECIFIED": (0x0, 0x2, 0xFF),
    "DDP_LOCAL_CATASTROPHIC": (0x1, 0x0, 0x00),
    "DDP_T_INVALID_STAG": (0x1, 0x1, 0x00),
    "DDP_T_BASE_BOUNDS": (0x1, 0x1, 0x01),
    "DDP_T_STAG_NOT_ASSOC": (0x1, 0x1, 0x02),
    "DDP_T_TO_WRAP": (0x1, 0x1, 0x03),
    "DDP_T_INVALID_VERSION": (0x1, 0x1, 0x04),
    "DDP_UT_INVALID_QN": (0x1, 0x2, 0x01),
    "DDP_UT_NO_BUFFER": (0x1, 0x2, 0x02),
    "DDP_UT_MSN_RANGE": (0x1, 0x2, 0x03),
    "DDP_UT_INVALID_MO": (0x1, 0x2, 0x04),
    "DDP_UT_TOO_LONG": (0x1, 0x2, 0x05),
    "DDP_UT_INVALID_VERSION": (0x1, 0x2, 0x06),
    "LLP_CONN_LOST": (0x2, 0x0, 0x01),
    "LLP_MPA_CRC": (0x2, 0x0, 0x02),
    "LLP_MPA_MARKER": (0x2, 0x0, 0x03),
    "LLP_MPA_INVALID_RR": (0x2, 0x0, 0x04),
    "LLP_MPA_LOCAL_CATASTROPHIC": (0x2, 0x0, 0x05),
    "LLP_MPA_INSUFFICIENT_IRD": (0x2, 0x0, 0x06),
    "LLP_MPA_NO_MATCHING_RTR": (0x2, 0x0, 0x07),
}

# Registry names of the codes (RFC 6580 §3.1-3.3, RFC 6581 §11), per
# (layer, etype).
_TERM_CODE_NAMES = {
    (0x0, 0x1): {
        0x00: "Invalid Steering Tag",
        0x01: "Base or bounds violation",
        0x02: "Access rights violation",
        0x03: "Steering Tag not associated with RDMAP Stream",
        0x04: "Tagged Offset wrap",
        0x09: "Steering Tag cannot be invalidated",
        0xFF: "Unspecified Error",
    },
    (0x0, 0x2): {
        0x05: "Invalid RDMAP version",
        0x06: "Unexpected OpCode",
        0x07: "Catastrophic error, localized to RDMAP Stream",
        0x08: "Catastrophic error, global",
        0x09: "Steering Tag cannot be Invalidated",
        0xFF: "Unspecified Error",
    },
    (0x1, 0x0): {0x00: "DDP Local Catastrophic"},
    (0x1, 0x1): {
        0x00: "Invalid Steering Tag",
        0x01: "Base or bounds violation",
        0x02: "Steering Tag not associated with DDP Stream",
        0x03: "Tagged Offset wrap",
        0x04: "Invalid DDP version",
    },
    (0x1, 0x2): {
        0x01: "Invalid Queue Number",
        0x02: "Invalid Message Sequence Number - no buffer available",
        0x03: "Invalid Message Sequence Number - Message Sequence Number range is not valid",
        0x04: "Invalid Message Offset",
        0x05: "DDP Message too long for available buffer",
        0x06: "Invalid DDP version",
    },
    (0x2, 0x0): {
        0x01: "TCP connection closed, terminated, or lost",
        0x02: "MPA CRC Error",
        0x03: "MPA Marker and ULPDU Length field mismatch",
        0x04: "Invalid MPA Request Frame or MPA Response Frame",
        0x05: "Local catastrophic error",
        0x06: "Insufficient IRD resources",
        0x07: "No matching RTR option",
    },
}
# "ALL" entries: every code of these types is registered.
_TERM_ALL_CODES = {
    (0x0, 0x0): "RDMA Local Catastrophic Error",
    (0x1, 0x3): "Reserved for use by Lower Layer Protocol",
}
for _key, _text in _TERM_ALL_CODES.items():
    _TERM_CODE_NAMES[_key] = {code: _text for code in range(256)}


def term_error(name):
    """Field values for a registry entry: ``RDMAPTerminate(**term_error(
    "DDP_T_INVALID_STAG"), ...)``."""
    layer, etype, code = TERM_ERRORS[name]
    return {"layer": layer, "etype": etype, "ecode": code}


def term_error_name(layer, etype, code):
    """Registry text of a triple, or None when it is not registered."""
    return _TERM_CODE_NAMES.get((layer, etype), {}).get(code)


class _CopiedDDPHeaderField(PacketField):
    """The Terminated DDP Header (RFC 5040 §4.8): 14 or 18 octets, sized by
    its own T bit, copied from the offending segment. Dissects as
    DDPTagged/DDPUntagged without a payload."""

    def __init__(self, name):
        PacketField.__init__(self, name, None, DDPUntagged)

    def getfield(self, pkt, s):
        hlen = DDP_TAGGED_HDR_LEN if s[:1] and s[0] & 0x80 else DDP_UNTAGGED_HDR_LEN
        if len(s) < hlen:
            raise ValueError("copied DDP header truncated")
        cls = DDPTagged if s[0] & 0x80 else DDPUntagged
        return s[hlen:], cls(s[:hlen], _underlayer=pkt)

    def i2m(self, pkt, i):
        if i is None:
            return b""
        return bytes(i)


def _flag(pkt, name):
    """M/D/R left None follow the fields present: D and R are set when the
    copied DDP / Read Request header is given, M when D is."""
    val = pkt.getfieldval(name)
    if val is not None:
        return val
    if name == "d":
        return int(pkt.getfieldval("ddp_hdr") is not None)
    if name == "r":
        return int(pkt.getfieldval("rdma_hdr") is not None)
    return _flag(pkt, "d")


class RDMAPTerminate(Packet):
    """Terminate header, RFC 5040 §4.8 Fig. 7/8.

    Layer/EType/Error Code are the RFC 6580 triple (``term_error()`` fills
    them from a registry name). M = DDP Segment Length valid, D = DDP
    header included, R = RDMAP (Read Request) header included; the
    sub-fields are present as those bits say (the DDP Segment Length when
    M or D). ``ddp_hdr`` is a DDPTagged/DDPUntagged, 14 or 18 octets by its
    own T bit; ``rdma_hdr`` an RDMAPReadRequest. m/d/r left None follow
    the headers given. Octets after the sub-fields (senders that zero-fill
    the whole layout, §7.1) dissect as the payload."""

    name = "RDMAP Terminate"
    fields_desc = [
        BitEnumField("layer", 0, 4, TERM_LAYERS),
        BitMultiEnumField("etype", 0, 4, TERM_ETYPES, depends_on=lambda pkt: pkt.layer),
        MultiEnumField(
            "ecode",
            0,
            _TERM_CODE_NAMES,
            depends_on=lambda pkt: (pkt.layer, pkt.etype),
            fmt="B",
        ),
        BitField("m", None, 1),
        BitField("d", None, 1),
        BitField("r", None, 1),
        BitField("reserved", 0, 13),
        ConditionalField(
            ShortField("ddp_seg_len", 0), lambda pkt: _flag(pkt, "m") or _flag(pkt, "d")
        ),
        ConditionalField(_CopiedDDPHeaderField("ddp_hdr"), lambda pkt: _flag(pkt, "d")),
        ConditionalField(
            PacketField("rdma_hdr", None, RDMAPReadRequest), lambda pkt: _flag(pkt, "r")
        ),
    ]

    def post_build(self, p, pay):
        if None in (self.m, self.d, self.r):
            bits = _flag(self, "m") << 7 | _flag(self, "d") << 6 | _flag(self, "r") << 5
            p = p[:2] + bytes([(p[2] & 0x1F) | bits]) + p[3:]
        return p + pay

    def triple(self):
        return (self.layer, self.etype, self.ecode)

    def mysummary(self):
        text = term_error_name(*self.triple()) or "Unassigned"
        return "RDMAP Terminate %d/%d/0x%02x %s" % (self.layer, self.etype, self.ecode, text)


# ---- RFC 7306 ----

#: Atomic Operation Codes, RFC 7306 §5.2.1 Fig. 5.
ATOMIC_OPCODES = {0x0: "FetchAdd", 0x1: "Reserved", 0x2: "CmpSwap"}


class RDMAPAtomicRequest(_FixedHeader):
    """Atomic Request header, RFC 7306 §5.2.1 Fig. 4 (52 octets, QN 1).
    The defaults are a plain 64-bit FetchAdd: Add Mask 0, Compare Data 0,
    Compare Mask all-ones (the FetchAdd send values)."""

    name = "RDMAP Atomic Request"
    fields_desc = [
        BitField("reserved", 0, 28),
        BitEnumField("aopcode", 0x0, 4, ATOMIC_OPCODES),
        IntField("req_id", 0),
        XIntField("stag", 0),
        XLongField("to", 0),
        XLongField("add_swap", 0),
        XLongField("add_swap_mask", 0),
        XLongField("compare", 0),
        XLongField("compare_mask", 0xFFFFFFFFFFFFFFFF),
    ]


class RDMAPAtomicResponse(_FixedHeader):
    """Atomic Response header, RFC 7306 §5.2.2 Fig. 6 (12 octets, QN 3):
    the request's identifier and the original remote data."""

    name = "RDMAP Atomic Response"
    fields_desc = [
        IntField("req_id", 0),
        XLongField("orig", 0),
    ]


class RDMAPImmediateData(_FixedHeader):
    """Immediate Data, RFC 7306 §6.2 Fig. 7: exactly 8 octets (opcode 0x8,
    or 0x9 with Solicited Event), QN 0."""

    name = "RDMAP Immediate Data"
    fields_desc = [XStrFixedLenField("data", b"\0" * 8, 8)]


# Dissection: DDPUntagged.guess_payload_class picks these by opcode.
RDMAP_HEADER_LAYERS.update(
    {
        0x1: RDMAPReadRequest,
        0x7: RDMAPTerminate,
        0x8: RDMAPImmediateData,
        0x9: RDMAPImmediateData,
        0xA: RDMAPAtomicRequest,
        0xB: RDMAPAtomicResponse,
    }
)
# Building: stacking a header under DDPUntagged sets the opcode (and the QN
# follows from it), unless given explicitly.
for _opcode, _cls in RDMAP_HEADER_LAYERS.items():
    if _opcode != 0x9:
        bind_layers(DDPUntagged, _cls, opcode=_opcode)
