# SPDX-License-Identifier: GPL-2.0-or-later
"""The Scapy layers on their own: RFC figures and vectors, defaults that
Scapy fills in, dissection from TCP, and the marker helpers."""

import os
import struct

import pytest
from scapy.layers.inet import IP, TCP
from scapy.packet import Padding, Raw, raw
from scapy.utils import rdpcap

from iwarpkit_scapy import (
    DDP,
    MPA,
    MPA_V2_NO_NEG,
    DDPTagged,
    DDPUntagged,
    MPAFPDU,
    MPAMarker,
    MPAReply,
    MPARequest,
    MPAStream,
    RDMAPAtomicRequest,
    RDMAPAtomicResponse,
    RDMAPImmediateData,
    RDMAPReadRequest,
    RDMAPTerminate,
    TERM_ERRORS,
    bind_iwarp_port,
    crc32c,
    crc32c_wire,
    dissect_iwarp,
    dissect_stream,
    frame_fpdu,
    insert_markers,
    remove_markers,
    term_error,
    term_error_name,
    unbind_iwarp_port,
    wire_offset,
)
from iwarpkit_scapy.crc32c import CRC32C_INIT, CRC32C_RESIDUE, crc32c_update

# ---- CRC32c: RFC 3720 B.4 (wire order) ----

ISCSI_READ10 = bytes.fromhex(
    "01c00000" "00000000" "00000000" "00000000" "14000000" "00000400"
    "00000014" "00000018" "28000000" "00000000" "02000000" "00000000"
)


@pytest.mark.parametrize(
    "data, wire",
    [
        (b"\0" * 32, "aa36918a"),
        (b"\xff" * 32, "43aba862"),
        (bytes(range(32)), "4e79dd46"),
        (bytes(range(31, -1, -1)), "5cdb3f11"),
        (ISCSI_READ10, "563a96d9"),
    ],
    ids=["zeros", "ones", "incrementing", "decrementing", "iscsi-read10"],
)
def test_crc32c_rfc3720(data, wire):
    assert crc32c_wire(data).hex() == wire


def test_crc32c_check_and_residue():
    assert crc32c(b"123456789") == 0xE3069283
    data = b"some FPDU octets"
    # Running the register over data + its CRC leaves the fixed residue.
    assert crc32c_update(CRC32C_INIT, data + crc32c_wire(data)) == CRC32C_RESIDUE
    assert crc32c(b"") == 0


# ---- RFC 5044 Fig. 5 and Fig. 6 ----

FIG5 = bytes.fromhex(
    "00000000" "002a" "4143" "00000000" "00000000" "00000001" "00000000" + "00" * 24 + "52239983"
)


def _fig_send(msn):
    return MPAFPDU() / DDPUntagged(msn=msn) / Raw(b"\0" * 24)


def test_rfc5044_fig5():
    assert MPAStream(markers=True).build(_fig_send(1)) == FIG5
    # Without the leading Marker the CRC differs: the Marker is covered.
    assert raw(_fig_send(1))[-4:] != FIG5[-4:]
    frame = MPAStream(markers=True).dissect(FIG5)[0]
    assert frame.crc_ok and frame.fpdu.crc == 0x83992352
    assert frame.markers[0].fpduptr == 0


def test_rfc5044_fig6():
    first = MPAFPDU() / DDPUntagged(msn=1) / Raw(b"\0" * (492 - 4 - 2 - 18 - 4))
    stream = MPAStream(markers=True)
    wire = stream.build(first, _fig_send(2))
    assert len(wire) == 0x1EC + 0x34
    second = wire[0x1EC:]
    assert second[:4] == bytes.fromhex("002a4143")
    assert second[0x200 - 0x1EC :][:4] == bytes.fromhex("00000014")
    assert second[-4:] == bytes.fromhex("84925898")


# ---- MPA Request / Reply ----


def test_mpa_request_defaults():
    req = MPARequest()
    assert raw(req) == b"MPA ID Req Frame" + bytes([0x40, 1, 0, 0])
    assert raw(MPAReply(r=1, c=0)) == b"MPA ID Rep Frame" + bytes([0x20, 1, 0, 0])


def test_mpa_v2_enhanced_data():
    req = MPARequest(s=1, p2p=1, rtr_read=1, ird=5, ord=MPA_V2_NO_NEG, private_data=b"ab")
    wire = raw(req)
    # Rev 2 from S; PD_Length counts the 4 enhanced octets (RFC 6581 §6).
    assert wire[16:20] == bytes([0x50, 2, 0, 6])
    assert wire[20:24] == bytes.fromhex("8005") + bytes.fromhex("7fff")
    back = MPA(wire)
    assert isinstance(back, MPARequest)
    assert (back.p2p, back.rtr_send, back.ird, back.rtr_write, back.rtr_read, back.ord) == (
        1, 0, 5, 0, 1, MPA_V2_NO_NEG,
    )
    assert back.private_data == b"ab"


def test_mpa_rev1_s_bit_is_reserved():
    """Under Rev 1, S is a reserved bit: no enhanced data is parsed."""
    wire = b"MPA ID Rep Frame" + bytes([0x50, 1, 0, 4]) + b"\x80\x01\x00\x02"
    rep = MPA(wire)
    assert isinstance(rep, MPAReply) and rep.s == 1 and rep.rev == 1
    assert rep.private_data == b"\x80\x01\x00\x02"
    assert rep.getfieldval("ird") is None or "ird" not in rep.fields


def test_mpa_frame_followed_by_fpdu():
    fpdu = MPAFPDU() / DDPUntagged() / b"x"
    wire = raw(MPAReply()) + raw(fpdu)
    start, frames, rest = dissect_stream(wire)
    assert isinstance(start, MPAReply)
    assert len(frames) == 1 and rest == b""
    assert frames[0].fpdu[Raw].load == b"x"


# ---- DDP / RDMAP ----


def test_opcode_and_qn_follow_the_header_layer():
    cases = [
        (RDMAPReadRequest(), 0x1, 1),
        (RDMAPTerminate(), 0x7, 2),
        (RDMAPImmediateData(), 0x8, 0),
        (RDMAPAtomicRequest(), 0xA, 1),
        (RDMAPAtomicResponse(), 0xB, 3),
    ]
    for hdr, opcode, qn in cases:
        seg = DDP(raw(DDPUntagged() / hdr))
        assert (seg.opcode, seg.qn, seg.msn) == (opcode, qn, 1)
        assert isinstance(seg.payload, type(hdr))
    # Explicit values win.
    seg = DDP(raw(DDPUntagged(opcode=0x9, qn=7) / RDMAPImmediateData(data=b"12345678")))
    assert (seg.opcode, seg.qn) == (0x9, 7)
    assert isinstance(seg.payload, RDMAPImmediateData)


def test_control_octets():
    assert raw(DDPTagged())[:2] == b"\xc1\x40"  # RDMA Write, last
    assert raw(DDPTagged(l=0, opcode=2))[:2] == b"\x81\x42"
    assert raw(DDPUntagged())[:2] == b"\x41\x43"  # Send
    assert len(raw(DDPTagged())) == 14 and len(raw(DDPUntagged())) == 18


def test_dispatch_by_t_bit():
    assert isinstance(DDP(raw(DDPTagged(stag=5))), DDPTagged)
    assert isinstance(DDP(raw(DDPUntagged())), DDPUntagged)
    assert isinstance(DDP(t=1), DDPTagged)


def test_later_segment_of_a_header_is_raw():
    seg = DDP(raw(DDPUntagged(opcode=1, mo=12, l=1) / Raw(b"\0" * 16)))
    assert isinstance(seg.payload, Raw)


def test_opcode_names():
    seg = DDPUntagged(opcode=0xA)
    assert seg.sprintf("%opcode%") == "Atomic Request"
    assert DDPTagged(opcode=0xF).sprintf("%opcode%") == "Reserved (Experimental)"


# ---- Terminate ----


def test_terminate_copied_tagged_header():
    bad = DDPTagged(stag=0xDEAD, to=0x10) / b"data"
    term = RDMAPTerminate(**term_error("DDP_T_INVALID_STAG"), ddp_seg_len=18,
                          ddp_hdr=DDPTagged(raw(bad)[:14]))
    wire = raw(DDPUntagged() / term)
    # 18 DDP + 4 control + 2 length + 14 copied header.
    assert len(wire) == 18 + 4 + 2 + 14
    assert wire[18:22] == bytes([0x11, 0x00, 0xC0, 0x00])  # M=1, D=1 from the header given
    back = DDP(wire)[RDMAPTerminate]
    assert back.triple() == (1, 1, 0)
    assert isinstance(back.ddp_hdr, DDPTagged) and back.ddp_hdr.stag == 0xDEAD
    assert back.sprintf("%layer% %etype% %ecode%") == "DDP Tagged Buffer Error Invalid Steering Tag"


def test_terminate_copied_read_request():
    rreq = DDPUntagged() / RDMAPReadRequest(read_size=100, src_stag=0xBAD)
    term = RDMAPTerminate(**term_error("RDMAP_INVALID_STAG"), ddp_seg_len=46,
                          ddp_hdr=DDPUntagged(raw(rreq)[:18]),
                          rdma_hdr=RDMAPReadRequest(raw(rreq)[18:]))
    wire = raw(DDPUntagged() / term)
    assert len(wire) == 18 + 4 + 2 + 18 + 28
    assert wire[20] == 0xE0  # M, D, R
    back = DDP(wire)[RDMAPTerminate]
    assert back.ddp_hdr.opcode == 1 and back.ddp_hdr.qn == 1
    assert back.rdma_hdr.src_stag == 0xBAD and back.rdma_hdr.read_size == 100


def test_terminate_header_sized_by_its_own_t_bit():
    """The copied header's T bit decides its size (RFC 5040 §4.8), whatever
    the opcode: an untagged copy is 18 octets even for a tagged opcode."""
    odd = DDPUntagged(opcode=0)  # Write opcode on an untagged header
    term = RDMAPTerminate(layer=0, etype=2, ecode=6, ddp_hdr=odd)
    back = DDP(raw(DDPUntagged() / term))[RDMAPTerminate]
    assert isinstance(back.ddp_hdr, DDPUntagged) and len(raw(back.ddp_hdr)) == 18


def test_terminate_flags_explicit_and_trailing_zeros():
    # M, D, R set by hand, zero-filled layout (RFC 5040 §7.1 reading).
    term = RDMAPTerminate(layer=2, etype=0, ecode=2, m=0, d=0, r=0) / Raw(b"\0" * 48)
    back = DDP(raw(DDPUntagged() / term))[RDMAPTerminate]
    assert (back.m, back.d, back.r) == (0, 0, 0)
    assert back.payload.load == b"\0" * 48
    assert back.sprintf("%ecode%") == "MPA CRC Error"


def test_error_registry():
    assert len(TERM_ERRORS) == 33
    for name, triple in TERM_ERRORS.items():
        assert term_error_name(*triple), name
    assert term_error_name(0, 0, 0x42) == "RDMA Local Catastrophic Error"  # "ALL" codes
    assert term_error_name(1, 2, 0) is None  # no untagged code 0x00
    assert term_error_name(2, 0, 7) == "No matching RTR option"


# ---- FPDU ----


def test_fpdu_lengths_pad_crc():
    fpdu = MPAFPDU() / DDPTagged() / b"abcde"  # ULPDU 19: PAD 3
    wire = raw(fpdu)
    assert wire[:2] == b"\x00\x13" and len(wire) == 2 + 19 + 3 + 4
    assert wire[21:24] == b"\0\0\0"
    assert wire[-4:] == crc32c_wire(wire[:-4])
    back = MPAFPDU(wire)
    assert back.ulpdu_length == 19 and back.pad == b"\0\0\0" and back.crc_ok()
    assert back[Raw].load == b"abcde"
    assert raw(back) == wire


def test_fpdu_explicit_fields_are_kept():
    fpdu = MPAFPDU(ulpdu_length=99, pad=b"\x01", crc=0x12345678) / DDPTagged()
    wire = raw(fpdu)
    assert wire[:2] == b"\x00\x63"
    assert wire[-5:] == b"\x01" + struct.pack("<I", 0x12345678)
    good = MPAFPDU(raw(MPAFPDU() / DDPTagged()))
    good.crc ^= 1
    assert not good.crc_ok()


def test_several_fpdus_in_one_segment():
    a = MPAFPDU() / DDPUntagged(msn=1) / b"one"
    b = MPAFPDU() / DDPUntagged(msn=2) / b"two!"
    wire = raw(a) + raw(b)
    first = MPA(wire)
    assert first[Raw].load == b"one"
    assert isinstance(first.lastlayer(), Padding)
    assert raw(first) == wire  # the second FPDU rides along as Padding
    frames = MPAStream().dissect(wire)
    assert [f.fpdu[DDPUntagged].msn for f in frames] == [1, 2]


def test_tcp_dissection():
    bind_iwarp_port(20049)
    try:
        req = IP() / TCP(sport=33000, dport=20049) / MPARequest(s=1, ird=4, ord=4)
        pkt = IP(raw(req))
        assert isinstance(pkt[TCP].payload, MPARequest) and pkt[MPARequest].ird == 4
        write = IP() / TCP(sport=20049, dport=33000) / MPAFPDU() / DDPTagged(stag=7) / b"hi"
        pkt = IP(raw(write))
        assert pkt[DDPTagged].stag == 7 and pkt[Raw].load == b"hi"
        term = IP() / TCP(sport=33000, dport=20049) / MPAFPDU() / DDPUntagged() / RDMAPTerminate(
            **term_error("RDMAP_UNEXPECTED_OPCODE"))
        pkt = IP(raw(term))
        assert pkt[RDMAPTerminate].ecode == 6 and pkt[MPAFPDU].crc_ok()
    finally:
        unbind_iwarp_port(20049)
    assert not isinstance(IP(raw(write))[TCP].payload, MPA)


# ---- markers ----


def test_marker_packet():
    assert raw(MPAMarker(fpduptr=0x14)) == b"\0\0\0\x14"


@pytest.mark.parametrize("pos", [0, 1, 2, 3, 4, 254, 509, 510, 511, 512, 0xFFFFFFFF])
def test_markers_any_grid_position(pos):
    """Off the 4-octet alignment a Marker can split ULPDU_Length or the CRC
    (crafting only: conformant senders stay aligned); the helpers still lay
    out and take apart such streams, and the CRC still covers what §4.4
    says."""
    fpdus = [MPAFPDU() / DDPUntagged(msn=i) / (b"%d" % i * 150) for i in range(1, 6)]
    stream = MPAStream(pos=pos, markers=True)
    wire = stream.build(*fpdus)
    frames = MPAStream(pos=pos, markers=True).dissect(wire)
    assert len(frames) == 5
    for i, frame in enumerate(frames, 1):
        assert frame.crc_ok and frame.fpdu[DDPUntagged].msn == i
        assert all((frame.pos + m.wire_off) % 512 == 0 for m in frame.markers)
        # FPDUPTR is the exact distance; a receiver drops its two low bits
        # (§4.2), so only aligned streams pass its check.
        assert all(m.fpduptr == frame.expected_fpduptr(m) for m in frame.markers)
        assert frame.markers_ok == (pos % 4 == 0 or not any(m.fpduptr & 3 for m in frame.markers))
    logical, found = remove_markers(wire, pos)
    assert logical == b"".join(raw(f.fpdu) for f in frames)
    assert insert_markers(logical, pos) == wire
    assert all((pos + m.wire_off) % 512 == 0 for m in found)


def test_marker_before_crc_is_covered():
    # An FPDU at 0x1F0 whose CRC field starts at grid position 0x200:
    # ULPDU 10 (pad 0) makes 2 + 10 = 12 octets up to the CRC.
    fpdu = MPAFPDU() / Raw(b"\x41\x43" + b"\0" * 8)
    wire = frame_fpdu(fpdu, pos=0x200 - 12, markers=True)
    assert wire[12:16] == struct.pack("!HH", 0, 12)
    assert wire[16:] == crc32c_wire(wire[:16])
    assert wire_offset(0x200 - 12, 12) == 16


def test_marker_between_fpdus_belongs_to_the_next():
    # Leading Marker 4 + ULPDU_Length 2 + ULPDU 502 (no PAD) + CRC 4 = 512.
    a = MPAFPDU() / DDPUntagged() / (b"a" * (502 - 18))
    b = MPAFPDU() / DDPUntagged(msn=2) / b"b"
    wire = MPAStream(markers=True).build(a, b)
    frames = MPAStream(markers=True).dissect(wire)
    assert len(frames[0].wire) == 512 and len(frames[0].markers) == 1
    second = frames[1]
    assert second.markers and second.markers[0].wire_off == 0
    assert second.markers[0].fpduptr == 0 and second.hdr_off == 4
    assert second.crc_ok
    assert second.fpdu.crc == crc32c(second.wire[:-4])


def test_crc_off_writes_zero():
    wire = MPAStream(crc=False).build(MPAFPDU() / DDPTagged())
    assert wire[-4:] == b"\0\0\0\0"
    # An explicit CRC is sent as given either way.
    wire = MPAStream(crc=False).build(MPAFPDU(crc=0xAABBCCDD) / DDPTagged())
    assert wire[-4:] == bytes.fromhex("ddccbbaa")


def test_dissect_stream_guesses_markers():
    fpdu = MPAFPDU() / DDPUntagged() / b"payload"
    with_markers = raw(MPARequest(m=1)) + MPAStream(markers=True).build(fpdu)
    start, frames, rest = dissect_stream(with_markers)
    assert isinstance(start, MPARequest) and len(frames) == 1 and frames[0].markers
    without = raw(MPARequest()) + MPAStream().build(fpdu)
    start, frames, rest = dissect_stream(without)
    assert len(frames) == 1 and not frames[0].markers and frames[0].crc_ok


def test_bad_marker_detected():
    wire = bytearray(MPAStream(pos=508, markers=True).build(MPAFPDU() / DDPTagged() / (b"x" * 10)))
    wire[4:8] = struct.pack("!HH", 0, 8)  # FPDUPTR should be 4
    frame = MPAStream(pos=508, markers=True).dissect(bytes(wire))[0]
    assert not frame.markers_ok and frame.expected_fpduptr(frame.markers[0]) == 4


# ---- captures made by libiwarp (pcaps/, see pcaps/gen/iwk-pcapgen.c) ----

PCAPS = os.path.join(
    os.environ.get("IWK_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "..")),
    "pcaps",
)


@pytest.mark.parametrize(
    "name", ["v1-crc-all-opcodes", "v2-p2p-markers-crc", "seqwrap-markers-crc", "v1-markers-nocrc"]
)
def test_libiwarp_captures(name):
    path = os.path.join(PCAPS, name + ".pcap")
    if not os.path.exists(path):
        pytest.skip("%s not in this tree" % path)
    directions = dissect_iwarp(rdpcap(path))
    assert len(directions) == 2
    for d in directions:
        assert isinstance(d.start, (MPARequest, MPAReply)) and d.frames and d.rest == b""
        for frame in d.frames:
            assert frame.markers_ok
            # CRCs are in use when either startup frame has C=1 (§7.1.1).
            if any(x.start.c for x in directions):
                assert frame.crc_ok
            logical = remove_markers(frame.wire, frame.pos)[0] if d.markers else frame.wire
            assert raw(frame.fpdu) == logical
    assert [d.markers for d in directions] == {
        "v1-crc-all-opcodes": [False, False],
        "v2-p2p-markers-crc": [True, True],
        "seqwrap-markers-crc": [True, True],
        "v1-markers-nocrc": [False, True],
    }[name]


def test_libiwarp_capture_bad_marker():
    """pcapgen's marker with a wrong FPDUPTR and a CRC redone over it."""
    path = os.path.join(PCAPS, "bad-mpa.pcap")
    if not os.path.exists(path):
        pytest.skip("%s not in this tree" % path)
    bad = [
        f for d in dissect_iwarp(rdpcap(path)) for f in d.frames if not f.markers_ok
    ]
    assert len(bad) == 1 and bad[0].crc_ok
