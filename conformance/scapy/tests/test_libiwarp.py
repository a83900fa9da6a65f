# SPDX-License-Identifier: GPL-2.0-or-later
"""The Scapy layers against libiwarp, octet for octet.

iwk_vectors (conformance/scapy/iwk_vectors.c) prints messages encoded by
libiwarp with their parameters. Each test builds the same message with the
Scapy layers from the parameters, leaving to Scapy what it fills in by
itself (lengths, PAD, CRC, opcode from the header layer, QN from the
opcode, Rev from S, Terminate M/D/R from the headers present), and asserts
identical octets; then it dissects libiwarp's octets and checks every field.
"""

from scapy.packet import Raw, raw

from iwarpkit_scapy import (
    DDP,
    insert_markers,
    remove_markers,
    wire_offset,
    MPA,
    RDMAP_OPCODE_QN,
    DDPTagged,
    DDPUntagged,
    MPAFPDU,
    MPAReply,
    MPARequest,
    MPAStream,
    RDMAPAtomicRequest,
    RDMAPAtomicResponse,
    RDMAPImmediateData,
    RDMAPReadRequest,
    RDMAPTerminate,
    crc32c,
)

# Opcodes whose header layer sets the opcode when stacked (0x9 shares
# RDMAPImmediateData with 0x8 and is given explicitly).
_LAYER_OPCODE = {0x1: 0x1, 0x7: 0x7, 0x8: 0x8, 0xA: 0xA, 0xB: 0xB}


def _hex64(text):
    return int(text, 16)


def _ctrl_fields(ddp, rv, rsv, opcode, omit_opcode):
    """DDP + RDMAP control fields that differ from the layers' defaults."""
    kw = {}
    if not ddp["last"]:
        kw["l"] = 0
    if ddp["rsvd"]:
        kw["rsvd"] = ddp["rsvd"]
    if ddp["dv"] != 1:
        kw["dv"] = ddp["dv"]
    if rv != 1:
        kw["rv"] = rv
    if rsv:
        kw["rsv"] = rsv
    if not omit_opcode:
        kw["opcode"] = opcode
    return kw


def build_ddp(ddp, rv, rsv, opcode, omit_opcode=False):
    kw = _ctrl_fields(ddp, rv, rsv, opcode, omit_opcode)
    if ddp["tagged"]:
        return DDPTagged(stag=_hex64(ddp["stag"]), to=_hex64(ddp["to"]), **kw)
    if ddp["qn"] != RDMAP_OPCODE_QN.get(opcode, 0):
        kw["qn"] = ddp["qn"]
    if ddp["msn"] != 1:
        kw["msn"] = ddp["msn"]
    if ddp["mo"]:
        kw["mo"] = ddp["mo"]
    if _hex64(ddp["inv_stag"]):
        kw["inv_stag"] = _hex64(ddp["inv_stag"])
    return DDPUntagged(**kw)


def build_copied_ddp(ddp):
    """A Terminate's copied DDP header: RDMAP control from the raw octet."""
    ctrl = ddp["rsvd_ulp"]
    return build_ddp(ddp, ctrl >> 6, ctrl >> 4 & 3, ctrl & 0xF)


def build_read_req(rr):
    return RDMAPReadRequest(
        sink_stag=_hex64(rr["sink_stag"]),
        sink_to=_hex64(rr["sink_to"]),
        read_size=rr["read_size"],
        src_stag=_hex64(rr["src_stag"]),
        src_to=_hex64(rr["src_to"]),
    )


def build_term(t):
    kw = {"layer": t["layer"], "etype": t["etype"], "ecode": t["ecode"]}
    if t["rsvd"]:
        kw["reserved"] = t["rsvd"]
    if t["m"] or t["d"]:
        kw["ddp_seg_len"] = t["ddp_seg_len"]
    if t["d"]:
        kw["ddp_hdr"] = build_copied_ddp(t["ddp"])
    if t["r"]:
        kw["rdma_hdr"] = build_read_req(t["rreq"])
    # M/D/R left None follow the headers given; spell out the rest.
    if t["m"] != t["d"]:
        kw["m"] = int(t["m"])
    return RDMAPTerminate(**kw)


def build_rdmap_header(msg):
    op = msg["opcode"]
    if op == 0x1:
        return build_read_req(msg["read_req"])
    if op == 0x7:
        return build_term(msg["term"])
    if op in (0x8, 0x9):
        return RDMAPImmediateData(data=bytes.fromhex(msg["imm"]))
    if op == 0xA:
        a = msg["atomic_req"]
        return RDMAPAtomicRequest(
            reserved=a["rsvd"],
            aopcode=a["aopcode"],
            req_id=a["req_id"],
            stag=_hex64(a["stag"]),
            to=_hex64(a["to"]),
            add_swap=_hex64(a["add_swap"]),
            add_swap_mask=_hex64(a["add_swap_mask"]),
            compare=_hex64(a["compare"]),
            compare_mask=_hex64(a["compare_mask"]),
        )
    if op == 0xB:
        a = msg["atomic_resp"]
        return RDMAPAtomicResponse(req_id=a["req_id"], orig=_hex64(a["orig"]))
    return None


def build_segment(msg):
    """One DDP segment (an MPA ULPDU) built with the Scapy layers."""
    op = msg["opcode"]
    hdr = build_rdmap_header(msg)
    layer_sets_opcode = hdr is not None and _LAYER_OPCODE.get(op) == op
    pkt = build_ddp(msg["ddp"], msg["rv"], msg["rsv"], op, omit_opcode=layer_sets_opcode)
    if hdr is not None:
        pkt = pkt / hdr
    if msg["payload"]:
        pkt = pkt / Raw(bytes.fromhex(msg["payload"]))
    return pkt


def build_mpa_rr(v):
    cls = MPARequest if v["type"] == "request" else MPAReply
    kw = {"m": int(v["m"]), "c": int(v["c"]), "r": int(v["r"]), "s": int(v["s"])}
    if v["res"]:
        kw["res"] = v["res"]
    pd = bytes.fromhex(v["ulp_pd"])
    # Rev left None is what libiwarp would send for S (2 with S=1, else 1).
    if v["rev"] != (2 if v["s"] else 1):
        kw["rev"] = v["rev"]
    v2 = v["v2"]
    if v["s"] and v["rev"] >= 2:
        kw.update(
            p2p=int(v2["p2p"]),
            rtr_send=int(v2["rtr_send"]),
            rtr_write=int(v2["rtr_write"]),
            rtr_read=int(v2["rtr_read"]),
            ird=v2["ird"],
            ord=v2["ord"],
        )
    elif v["s"]:
        # Under Rev 1 the S bit is a Res bit and the Private Data is opaque
        # (RFC 6581 §6), so the layer has no enhanced fields: craft them.
        w1 = v2["p2p"] << 15 | v2["rtr_send"] << 14 | v2["ird"]
        w2 = v2["rtr_write"] << 15 | v2["rtr_read"] << 14 | v2["ord"]
        pd = w1.to_bytes(2, "big") + w2.to_bytes(2, "big") + pd
    return cls(private_data=pd, **kw)


# ---- checks of dissected fields ----


def check_ddp(pkt, ddp, rv, rsv, opcode):
    assert pkt.t == int(ddp["tagged"])
    assert isinstance(pkt, DDPTagged if ddp["tagged"] else DDPUntagged)
    assert pkt.l == int(ddp["last"])
    assert (pkt.rsvd, pkt.dv) == (ddp["rsvd"], ddp["dv"])
    assert (pkt.rv, pkt.rsv, pkt.opcode) == (rv, rsv, opcode)
    if ddp["tagged"]:
        assert (pkt.stag, pkt.to) == (_hex64(ddp["stag"]), _hex64(ddp["to"]))
    else:
        assert pkt.inv_stag == _hex64(ddp["inv_stag"])
        assert (pkt.qn, pkt.msn, pkt.mo) == (ddp["qn"], ddp["msn"], ddp["mo"])


def check_read_req(pkt, rr):
    assert isinstance(pkt, RDMAPReadRequest)
    assert pkt.sink_stag == _hex64(rr["sink_stag"])
    assert pkt.sink_to == _hex64(rr["sink_to"])
    assert pkt.read_size == rr["read_size"]
    assert pkt.src_stag == _hex64(rr["src_stag"])
    assert pkt.src_to == _hex64(rr["src_to"])


def check_segment(pkt, msg):
    """Fields of a dissected DDP segment against libiwarp's parameters."""
    op = msg["opcode"]
    check_ddp(pkt, msg["ddp"], msg["rv"], msg["rsv"], op)
    hdr = pkt.payload
    tagged = msg["ddp"]["tagged"]
    if not tagged and op == 0x1:
        check_read_req(hdr, msg["read_req"])
    elif not tagged and op == 0x7:
        t = msg["term"]
        assert isinstance(hdr, RDMAPTerminate)
        assert hdr.triple() == (t["layer"], t["etype"], t["ecode"])
        assert (hdr.m, hdr.d, hdr.r, hdr.reserved) == (t["m"], t["d"], t["r"], t["rsvd"])
        if t["m"] or t["d"]:
            assert hdr.ddp_seg_len == t["ddp_seg_len"]
        if t["d"]:
            ctrl = t["ddp"]["rsvd_ulp"]
            check_ddp(hdr.ddp_hdr, t["ddp"], ctrl >> 6, ctrl >> 4 & 3, ctrl & 0xF)
            assert len(raw(hdr.ddp_hdr)) == (14 if t["ddp"]["tagged"] else 18)
        else:
            assert hdr.ddp_hdr is None
        if t["r"]:
            check_read_req(hdr.rdma_hdr, t["rreq"])
        else:
            assert hdr.rdma_hdr is None
    elif not tagged and op in (0x8, 0x9):
        assert isinstance(hdr, RDMAPImmediateData)
        assert hdr.data == bytes.fromhex(msg["imm"])
    elif not tagged and op == 0xA:
        a = msg["atomic_req"]
        assert isinstance(hdr, RDMAPAtomicRequest)
        assert (hdr.reserved, hdr.aopcode, hdr.req_id) == (a["rsvd"], a["aopcode"], a["req_id"])
        assert (hdr.stag, hdr.to) == (_hex64(a["stag"]), _hex64(a["to"]))
        assert (hdr.add_swap, hdr.add_swap_mask) == (
            _hex64(a["add_swap"]),
            _hex64(a["add_swap_mask"]),
        )
        assert (hdr.compare, hdr.compare_mask) == (
            _hex64(a["compare"]),
            _hex64(a["compare_mask"]),
        )
    elif not tagged and op == 0xB:
        a = msg["atomic_resp"]
        assert isinstance(hdr, RDMAPAtomicResponse)
        assert (hdr.req_id, hdr.orig) == (a["req_id"], _hex64(a["orig"]))
    else:
        # No RDMAP header: the rest is ULP payload.
        payload = bytes.fromhex(msg["payload"])
        if payload:
            assert isinstance(hdr, Raw) and hdr.load == payload
        else:
            assert not hdr


# ---- the tests ----


def test_mpa_rr_build(vec_mpa_rr):
    assert raw(build_mpa_rr(vec_mpa_rr)).hex() == vec_mpa_rr["hex"]


def test_mpa_rr_dissect(vec_mpa_rr):
    v = vec_mpa_rr
    wire = bytes.fromhex(v["hex"])
    pkt = MPA(wire)
    assert isinstance(pkt, MPARequest if v["type"] == "request" else MPAReply)
    assert (pkt.m, pkt.c, pkt.r, pkt.s) == (v["m"], v["c"], v["r"], v["s"])
    assert pkt.rev == v["rev"]
    enhanced = v["s"] and v["rev"] >= 2
    assert pkt.pd_length == len(wire) - 20
    if enhanced:
        assert pkt.res == v["res"]
        v2 = v["v2"]
        assert (pkt.p2p, pkt.rtr_send, pkt.rtr_write, pkt.rtr_read) == (
            v2["p2p"],
            v2["rtr_send"],
            v2["rtr_write"],
            v2["rtr_read"],
        )
        assert (pkt.ird, pkt.ord) == (v2["ird"], v2["ord"])
        assert pkt.private_data == bytes.fromhex(v["ulp_pd"])
    else:
        assert pkt.private_data == wire[20:]
    assert raw(pkt) == wire


def test_rdmap_build(vec_rdmap):
    assert raw(build_segment(vec_rdmap["msg"])).hex() == vec_rdmap["hex"]


def test_rdmap_dissect(vec_rdmap):
    wire = bytes.fromhex(vec_rdmap["hex"])
    pkt = DDP(wire)
    check_segment(pkt, vec_rdmap["msg"])
    assert raw(pkt) == wire


def _fpdu_packet(v):
    fpdu = MPAFPDU()
    if v["msg"] is not None:
        fpdu = fpdu / build_segment(v["msg"])
    return fpdu


def test_fpdu_build(vec_fpdu):
    v = vec_fpdu
    stream = MPAStream(pos=v["pos"], markers=v["markers"], crc=v["crc"])
    wire = stream.build(_fpdu_packet(v))
    assert wire.hex() == v["hex"]
    assert stream.pos == (v["pos"] + len(wire)) & 0xFFFFFFFF


def test_fpdu_dissect(vec_fpdu):
    v = vec_fpdu
    wire = bytes.fromhex(v["hex"])
    stream = MPAStream(pos=v["pos"], markers=v["markers"])
    frames = stream.dissect(wire)
    assert len(frames) == 1 and stream.pending == b""
    frame = frames[0]
    assert frame.wire == wire
    assert frame.markers_ok
    assert all(m.reserved == 0 for m in frame.markers)
    if v["markers"]:
        # One Marker at every grid position the FPDU covers.
        grid = [o for o in range(len(wire)) if (v["pos"] + o) % 512 == 0]
        assert [m.wire_off for m in frame.markers] == grid
    else:
        assert frame.markers == []
    fpdu = frame.fpdu
    if v["crc"]:
        assert frame.crc_ok
    else:
        assert fpdu.crc == 0
    assert fpdu.pad == b"\0" * (-(2 + fpdu.ulpdu_length) % 4)
    if v["msg"] is None:
        assert fpdu.ulpdu_length == 0 and not fpdu.payload
    else:
        ulpdu = raw(build_segment(v["msg"]))
        assert fpdu.ulpdu_length == len(ulpdu)
        check_segment(fpdu.payload, v["msg"])
    if not v["markers"]:
        # Marker-free FPDUs also dissect straight from the octets.
        assert raw(MPA(wire)) == wire
        if v["crc"]:
            assert MPA(wire).crc_ok()


def test_stream_build(vec_stream):
    v = vec_stream
    stream = MPAStream(pos=v["pos"], markers=v["markers"], crc=v["crc"])
    fpdus = [MPAFPDU() / build_segment(msg) for msg in v["msgs"]]
    assert stream.build(*fpdus).hex() == v["hex"]


def test_stream_dissect(vec_stream):
    v = vec_stream
    wire = bytes.fromhex(v["hex"])
    stream = MPAStream(pos=v["pos"], markers=v["markers"])
    # Fed in odd pieces: whole FPDUs come out, the rest waits in `pending`.
    frames = []
    for i in range(0, len(wire), 97):
        frames += stream.dissect(wire[i : i + 97])
    assert stream.pending == b""
    assert len(frames) == len(v["msgs"])
    assert b"".join(f.wire for f in frames) == wire
    for frame, msg in zip(frames, v["msgs"]):
        assert frame.markers_ok
        assert frame.crc_ok if v["crc"] else frame.fpdu.crc == 0
        check_segment(frame.fpdu.payload, msg)


def test_stream_markers_roundtrip(vec_stream):
    """remove_markers() then insert_markers() gives libiwarp's octets back:
    the FPDUPTRs are recomputed from the ULPDU_Length fields alone."""
    v = vec_stream
    if not v["markers"]:
        return
    wire = bytes.fromhex(v["hex"])
    logical, found = remove_markers(wire, v["pos"])
    assert len(wire) - len(logical) == 4 * len(found)
    assert insert_markers(logical, v["pos"]) == wire


def test_vectors_cover_marker_cases():
    """The FPDU vectors include the §4.2-4.4 corner cases: a leading Marker
    (FPDUPTR 0, inside the CRC coverage), a Marker right before the CRC
    field, an FPDU that ends on the grid, and a Marker inside the ULPDU."""
    from conftest import load_vectors

    vecs = [v for v in load_vectors() if v["kind"] == "fpdu" and v["markers"]]
    if not vecs:
        import pytest

        pytest.skip("IWK_VECTORS not set")
    seen = set()
    for v in vecs:
        wire = bytes.fromhex(v["hex"])
        logical, found = remove_markers(wire, v["pos"])
        crc_w = wire_offset(v["pos"], len(logical) - 4)
        for m in found:
            if m.wire_off == 0:
                seen.add("leading")
            elif m.wire_off + 4 == crc_w:
                seen.add("before-crc")
            elif m.fpduptr:
                seen.add("inside")
        if (v["pos"] + len(wire)) % 512 == 0:
            seen.add("ends-on-grid")
    assert seen == {"leading", "before-crc", "ends-on-grid", "inside"}


def test_crc32c(vec_crc):
    assert crc32c(bytes.fromhex(vec_crc["data"])) == vec_crc["crc"]


def test_vectors_cover_every_opcode():
    """The vector set (when present) has every RDMAP opcode 0x0-0xB."""
    from conftest import load_vectors

    vecs = [v for v in load_vectors() if v["kind"] == "rdmap"]
    if not vecs:
        import pytest

        pytest.skip("IWK_VECTORS not set")
    assert {v["msg"]["opcode"] for v in vecs} >= set(range(12))


def test_term_registry(vec_term):
    """Names and triples as libiwarp's IW_TERM_LIST (reference-stack/lib/include/
    iwarp/err.h) has them; the registry text as "EType / Code"."""
    from iwarpkit_scapy import TERM_ERRORS, TERM_ETYPES, term_error_name

    v = vec_term
    triple = (v["layer"], v["etype"], v["code"])
    assert TERM_ERRORS[v["name"]] == triple
    etype = TERM_ETYPES[v["layer"]][v["etype"]]
    code = term_error_name(*triple)
    assert v["text"] in (etype, "%s / %s" % (etype, code))


def test_term_registry_complete():
    from conftest import load_vectors
    from iwarpkit_scapy import TERM_ERRORS

    names = {v["name"] for v in load_vectors() if v["kind"] == "term"}
    if not names:
        import pytest

        pytest.skip("IWK_VECTORS not set")
    assert names == set(TERM_ERRORS)
