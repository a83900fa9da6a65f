# SPDX-License-Identifier: GPL-2.0-or-later
"""Whole connections from a capture: each TCP direction reassembled, then
dissected with dissect_stream(), Markers per direction decided by the M bit
of the peer's startup frame (RFC 5044 §7.1.1)."""

from collections import namedtuple

from scapy.layers.inet import IP, TCP
from scapy.layers.inet6 import IPv6

from .markers import dissect_stream
from .mpa import MPA_RR_HDR_LEN, MPAReply, MPARequest

__all__ = ["IWARPDirection", "tcp_streams", "dissect_iwarp"]

#: One direction of a connection: its (src, sport, dst, dport), the
#: startup frame (or None), whether its FPDUs carry Markers, the FramedFPDU
#: list, trailing octets that make no whole FPDU, and whether a sequence
#: gap cut the octets short.
IWARPDirection = namedtuple("IWARPDirection", "flow start markers frames rest gap")


def _flow(pkt):
    ip = pkt[IP] if IP in pkt else pkt[IPv6]
    return (ip.src, pkt[TCP].sport, ip.dst, pkt[TCP].dport)


def tcp_streams(packets):
    """Each direction's TCP payload in sequence order, as
    ``{(src, sport, dst, dport): (octets, gap)}``. Repeated octets
    (retransmissions) are dropped; at a hole the octets stop and gap is
    True. Sequence numbers may wrap."""
    segments = {}
    for pkt in packets:
        if TCP in pkt and (IP in pkt or IPv6 in pkt) and len(pkt[TCP].payload):
            segments.setdefault(_flow(pkt), []).append((pkt[TCP].seq, bytes(pkt[TCP].payload)))
    streams = {}
    for flow, segs in segments.items():
        base = segs[0][0]
        segs.sort(key=lambda s: (s[0] - base) & 0xFFFFFFFF)
        out, gap = bytearray(), False
        for seq, data in segs:
            rel = (seq - base) & 0xFFFFFFFF
            if rel > len(out):
                gap = True
                break
            out += data[len(out) - rel :]
        streams[flow] = (bytes(out), gap)
    return streams


def dissect_iwarp(packets):
    """Dissect every iWARP connection in ``packets`` (e.g. rdpcap()).
    Returns a list of IWARPDirection, one per TCP direction with payload."""
    streams = tcp_streams(packets)
    starts = {}
    for flow, (octets, _) in streams.items():
        start, _, _ = dissect_stream(octets[:20 + 512], markers=False)
        starts[flow] = start
    result = []
    for flow, (octets, gap) in streams.items():
        peer = starts.get((flow[2], flow[3], flow[0], flow[1]))
        if isinstance(peer, (MPARequest, MPAReply)) and starts[flow] is not None:
            markers = bool(peer.m)
        elif starts[flow] is not None:
            # Guess as libiwarp's deframer does: no ULPDU is shorter than a
            # DDP header, so a leading 00 00 is a Marker.
            after = octets[MPA_RR_HDR_LEN + starts[flow].pd_length :]
            markers = after[:2] == b"\0\0"
        else:
            markers = False
        start, frames, rest = dissect_stream(octets, markers=markers)
        result.append(IWARPDirection(flow, start, markers, frames, rest, gap))
    return result
