# SPDX-License-Identifier: GPL-2.0-or-later
"""DDP headers (RFC 5041 §4) with the RDMAP Control octet (RFC 5040 §4.1).

The DDP header's RsvdULP[0:7] octet *is* the RDMAP Control field, so each
DDP layer here carries it as the fields ``rv``, ``rsv`` and ``opcode``; the
opcode's own RDMAP header (Read Request, Terminate, ...) is the payload
layer (see rdmap.py). RFC figures number bit 0 as the most significant bit
of the first octet; all multi-octet fields are big-endian.
"""

from scapy.config import conf
from scapy.fields import (
    BitEnumField,
    BitField,
    IntField,
    XIntField,
    XLongField,
)
from scapy.packet import Packet

__all__ = [
    "DDP",
    "DDPTagged",
    "DDPUntagged",
    "RDMAP_OPCODES",
    "RDMAP_OPCODE_QN",
    "DDP_TAGGED_HDR_LEN",
    "DDP_UNTAGGED_HDR_LEN",
    "QN_SEND",
    "QN_READ_REQ",
    "QN_TERMINATE",
    "QN_ATOMIC_RESP",
]

DDP_TAGGED_HDR_LEN = 14  # RFC 5041 §4.2
DDP_UNTAGGED_HDR_LEN = 18  # RFC 5041 §4.3

#: RDMAP opcodes: RFC 5040 §4.2 Fig. 5, RFC 7306 §4, registry RFC 6580 §3.4.
RDMAP_OPCODES = {
    0x0: "RDMA Write",
    0x1: "RDMA Read Request",
    0x2: "RDMA Read Response",
    0x3: "Send",
    0x4: "Send with Invalidate",
    0x5: "Send with Solicited Event",
    0x6: "Send with Solicited Event and Invalidate",
    0x7: "Terminate",
    0x8: "Immediate Data",
    0x9: "Immediate Data with Solicited Event",
    0xA: "Atomic Request",
    0xB: "Atomic Response",
    0xC: "Reserved",
    0xD: "Reserved",
    0xE: "Reserved",
    0xF: "Reserved (Experimental)",
}

# Untagged queue numbers (RFC 5040 §3.1, RFC 7306 §4).
QN_SEND = 0
QN_READ_REQ = 1  # also Atomic Requests
QN_TERMINATE = 2
QN_ATOMIC_RESP = 3

#: The queue each untagged opcode travels on; used when ``qn`` is left None.
RDMAP_OPCODE_QN = {
    0x1: QN_READ_REQ,
    0x3: QN_SEND,
    0x4: QN_SEND,
    0x5: QN_SEND,
    0x6: QN_SEND,
    0x7: QN_TERMINATE,
    0x8: QN_SEND,
    0x9: QN_SEND,
    0xA: QN_READ_REQ,
    0xB: QN_ATOMIC_RESP,
}

#: Opcode -> layer class of the RDMAP header that follows an untagged DDP
#: header (filled in by rdmap.py, which defines those layers).
RDMAP_HEADER_LAYERS = {}


def _control_fields(tagged, opcode):
    """DDP Control (RFC 5041 §4.1: T, L, Rsvd, DV) then RDMAP Control
    (RFC 5040 §4.1: RV, Rsv, Opcode)."""
    return [
        BitField("t", int(tagged), 1),
        BitField("l", 1, 1),
        BitField("rsvd", 0, 4),
        BitField("dv", 1, 2),
        BitField("rv", 1, 2),
        BitField("rsv", 0, 2),
        BitEnumField("opcode", opcode, 4, RDMAP_OPCODES),
    ]


class DDP(Packet):
    """Dispatcher: ``DDP(octets)`` dissects as DDPTagged or DDPUntagged by
    the T bit; ``DDP(t=1, ...)`` builds a DDPTagged."""

    name = "DDP"

    @classmethod
    def dispatch_hook(cls, _pkt=None, *args, **kargs):
        if cls is not DDP:
            return cls
        if _pkt:
            return DDPTagged if _pkt[0] & 0x80 else DDPUntagged
        return DDPTagged if kargs.get("t") else DDPUntagged


class DDPTagged(DDP):
    """Tagged buffer model, RFC 5041 §4.2 (14 octets): RDMA Write and RDMA
    Read Response. The payload is ULP data placed at STag/TO."""

    name = "DDP Tagged"
    fields_desc = _control_fields(True, 0x0) + [
        XIntField("stag", 0),
        XLongField("to", 0),
    ]

    def guess_payload_class(self, payload):
        return conf.raw_layer

    def mysummary(self):
        return self.sprintf("DDP/RDMAP %opcode% STag=%stag% TO=%to%")


class DDPUntagged(DDP):
    """Untagged buffer model, RFC 5041 §4.3 (18 octets).

    ``inv_stag`` is RsvdULP[8:39], the RDMAP Invalidate STag (RFC 5040
    §4.3). ``qn`` left None is the opcode's queue (RDMAP_OPCODE_QN).
    MSN starts at 1 on each queue (RFC 5041 §5.1)."""

    name = "DDP Untagged"
    fields_desc = _control_fields(False, 0x3) + [
        XIntField("inv_stag", 0),
        IntField("qn", None),
        IntField("msn", 1),
        IntField("mo", 0),
    ]

    def post_build(self, p, pay):
        if self.qn is None:
            qn = RDMAP_OPCODE_QN.get(self.opcode, QN_SEND)
            p = p[:6] + qn.to_bytes(4, "big") + p[10:]
        return p + pay

    def guess_payload_class(self, payload):
        # The opcode's header starts the message: only a segment at MO 0
        # carries it (a later segment of a split header is plain octets).
        if self.mo == 0:
            return RDMAP_HEADER_LAYERS.get(self.opcode, conf.raw_layer)
        return conf.raw_layer

    def mysummary(self):
        return self.sprintf("DDP/RDMAP %opcode% QN=%qn% MSN=%msn% MO=%mo%")
