/* SPDX-License-Identifier: GPL-2.0-or-later */
/* RDMAP over one DDP segment: RFC 5040 §4 (control field, opcodes Fig. 4,
 * Read Request §4.4, Terminate §4.8, validation §7.2), RFC 7306 §4-6
 * (Immediate Data, Atomic Request/Response), RFC 5041 §4, §7.
 *
 * Every golden segment is written out by hand from the RFC figures
 * (RFC 5040 App. A, RFC 7306 App. A layouts). */
#include <string.h>

#include <iwarp/rdmap.h>

#include "iw_test.h"
#include "iw_test_guard.h"

static size_t unhex(uint8_t *out, const char *hex) { return iw_test_unhex(out, 256, hex); }

/* Decode with the segment ending at a guard page. m's pointers are
 * rebased onto `seg` so callers can compare them after the guard is gone. */
static iw_ssize dec(iw_rdmap_msg *m, const uint8_t *seg, size_t len, iw_verdict *v) {
    uint8_t *p = iw_test_guard(seg, len);
    iw_ssize r = iw_rdmap_decode(m, p, len, v);
    if (m->payload)
        m->payload = seg + (m->payload - p);
    if (m->opcode == IW_OP_TERMINATE && m->u.term.ddp_raw)
        m->u.term.ddp_raw = seg + (m->u.term.ddp_raw - p);
    if (m->opcode == IW_OP_TERMINATE && m->u.term.raw)
        m->u.term.raw = seg + (m->u.term.raw - p);
    iw_test_guard_free(p, len);
    return r;
}

/* Expect a Terminate verdict with exactly this triple. */
#define CHECK_TERM(hexstr, triple)                                                                 \
    do {                                                                                           \
        uint8_t b_[256];                                                                           \
        size_t n_ = unhex(b_, hexstr);                                                             \
        iw_rdmap_msg m_;                                                                           \
        iw_verdict v_;                                                                             \
        CHECK_EQ(dec(&m_, b_, n_, &v_), IW_ERR_PROTO);                                             \
        CHECK_EQ(v_.kind, IW_VERDICT_TERM);                                                        \
        CHECK_EQ(v_.term, triple);                                                                 \
        CHECK(v_.rfc != NULL);                                                                     \
    } while (0)

static void check_term_len(const uint8_t *b, size_t n, uint16_t triple) {
    iw_rdmap_msg m;
    iw_verdict v;
    CHECK_EQ(dec(&m, b, n, &v), IW_ERR_PROTO);
    CHECK_EQ(v.kind, IW_VERDICT_TERM);
    CHECK_EQ(v.term, triple);
}

/* ---- hand-written segments, one per opcode (RFC 5040 App. A, RFC 7306 App. A) ---- */

/* Untagged DDP header pieces: ctrl, RDMAP ctrl, Invalidate STag, QN, MSN, MO. */
#define UT(ddpc, rc, inv, qn, msn, mo) ddpc " " rc " " inv " " qn " " msn " " mo " "

static const char seg_write[] = "C1 40  00 00 10 01  00 00 00 00 00 00 20 00  41 42 43 44";
static const char seg_read_req[] =
    UT("41", "41", "00000000", "00000001", "00000001",
       "00000000") "11223344 0000000000001000 00000200 55667788 00000000FFFF2000";
static const char seg_read_resp[] = "C1 42  11 22 33 44  00 00 00 00 00 00 10 00  01 02 03";
static const char seg_send[] =
    UT("41", "43", "00000000", "00000000", "00000001", "00000000") "68 69";
static const char seg_send_inv[] =
    UT("41", "44", "AABBCCDD", "00000000", "00000002", "00000000") "68 69";
static const char seg_send_se[] =
    UT("01", "45", "00000000", "00000000", "00000003", "00000010") "68";
static const char seg_send_se_inv[] =
    UT("41", "46", "01020304", "00000000", "00000004", "00000000");
/* Terminate: DDP Untagged / Invalid QN (1/2/0x01), M=1 D=1; DDP Segment
 * Length 0x2E; the offending untagged header (QN 7). */
static const char seg_term[] =
    UT("41", "47", "00000000", "00000002", "00000001",
       "00000000") "12 01 C0 00  00 2E  41 43 00000000 00000007 00000001 00000000";
static const char seg_imm[] =
    UT("41", "48", "00000000", "00000000", "00000005", "00000000") "01 23 45 67 89 AB CD EF";
static const char seg_imm_se[] =
    UT("41", "49", "00000000", "00000000", "00000006", "00000000") "FE DC BA 98 76 54 32 10";
/* Atomic Request, CmpSwap (AOpCode 2), RFC 7306 §5.2.1 Fig. 4. */
static const char seg_atomic_req[] =
    UT("41", "4A", "00000000", "00000001", "00000002",
       "00000000") "00000002 00000007 0000ABCD 0000000000010008 1111111111111111 FFFFFFFFFFFFFFFF "
                   "2222222222222222 00000000FFFFFFFF";
/* Atomic Response, RFC 7306 §5.2.2 Fig. 6. */
static const char seg_atomic_resp[] =
    UT("41", "4B", "00000000", "00000003", "00000001", "00000000") "00000007 0123456789ABCDEF";

static const char *const golden[12] = {
    seg_write,       seg_read_req, seg_read_resp, seg_send,   seg_send_inv,   seg_send_se,
    seg_send_se_inv, seg_term,     seg_imm,       seg_imm_se, seg_atomic_req, seg_atomic_resp,
};
static const size_t golden_len[12] = {18, 46, 17, 20, 20, 19, 18, 42, 26, 26, 70, 30};

/* The struct a sender fills to produce golden[op]. */
static void golden_msg(unsigned op, iw_rdmap_msg *m, uint8_t *termraw) {
    memset(m, 0, sizeof *m);
    m->rv = 1;
    m->opcode = (uint8_t)op;
    m->ddp.dv = 1;
    m->ddp.last = true;
    switch (op) {
    case IW_OP_WRITE:
        m->ddp.tagged = true;
        m->ddp.stag = 0x1001;
        m->ddp.to = 0x2000;
        m->payload = (const uint8_t *)"ABCD";
        m->payload_len = 4;
        break;
    case IW_OP_READ_REQ:
        m->ddp.qn = 1, m->ddp.msn = 1;
        m->u.read_req.sink_stag = 0x11223344;
        m->u.read_req.sink_to = 0x1000;
        m->u.read_req.read_size = 0x200;
        m->u.read_req.src_stag = 0x55667788;
        m->u.read_req.src_to = 0xFFFF2000;
        break;
    case IW_OP_READ_RESP:
        m->ddp.tagged = true;
        m->ddp.stag = 0x11223344;
        m->ddp.to = 0x1000;
        m->payload = (const uint8_t *)"\x01\x02\x03";
        m->payload_len = 3;
        break;
    case IW_OP_SEND:
        m->ddp.msn = 1;
        m->payload = (const uint8_t *)"hi";
        m->payload_len = 2;
        break;
    case IW_OP_SEND_INV:
        m->ddp.rsvd_ulp2 = 0xAABBCCDD;
        m->ddp.msn = 2;
        m->payload = (const uint8_t *)"hi";
        m->payload_len = 2;
        break;
    case IW_OP_SEND_SE:
        m->ddp.last = false;
        m->ddp.msn = 3;
        m->ddp.mo = 0x10;
        m->payload = (const uint8_t *)"h";
        m->payload_len = 1;
        break;
    case IW_OP_SEND_SE_INV:
        m->ddp.rsvd_ulp2 = 0x01020304;
        m->ddp.msn = 4;
        break;
    case IW_OP_TERMINATE:
        m->ddp.qn = 2, m->ddp.msn = 1;
        unhex(termraw, "41 43 00000000 00000007 00000001 00000000");
        m->u.term.layer = 1, m->u.term.etype = 2, m->u.term.ecode = 1;
        m->u.term.m = m->u.term.d = true;
        m->u.term.ddp_seg_len = 0x2E;
        m->u.term.ddp_raw = termraw;
        m->u.term.ddp_raw_len = 18;
        break;
    case IW_OP_IMM:
        m->ddp.msn = 5;
        memcpy(m->u.imm, "\x01\x23\x45\x67\x89\xAB\xCD\xEF", 8);
        break;
    case IW_OP_IMM_SE:
        m->ddp.msn = 6;
        memcpy(m->u.imm, "\xFE\xDC\xBA\x98\x76\x54\x32\x10", 8);
        break;
    case IW_OP_ATOMIC_REQ:
        m->ddp.qn = 1, m->ddp.msn = 2;
        m->u.atomic_req.aopcode = IW_ATOMIC_CMP_SWAP;
        m->u.atomic_req.req_id = 7;
        m->u.atomic_req.stag = 0xABCD;
        m->u.atomic_req.to = 0x10008;
        m->u.atomic_req.add_swap = 0x1111111111111111ull;
        m->u.atomic_req.add_swap_mask = ~0ull;
        m->u.atomic_req.compare = 0x2222222222222222ull;
        m->u.atomic_req.compare_mask = 0xFFFFFFFFull;
        break;
    case IW_OP_ATOMIC_RESP:
        m->ddp.qn = 3, m->ddp.msn = 1;
        m->u.atomic_resp.req_id = 7;
        m->u.atomic_resp.orig = 0x0123456789ABCDEFull;
        break;
    }
}

/* Each opcode's hand-written segment decodes to the right fields. */
IW_TEST(golden_decode_every_opcode) {
    for (unsigned op = 0; op < 12; op++) {
        uint8_t b[256];
        size_t n = unhex(b, golden[op]);
        CHECK_EQ(n, golden_len[op]);
        iw_rdmap_msg m;
        iw_verdict v;
        iw_ssize r = dec(&m, b, n, &v);
        if (r != (iw_ssize)n)
            fprintf(stderr, "  opcode 0x%x: %td, verdict 0x%04x\n", op, r, v.term);
        CHECK_EQ(r, (iw_ssize)n);
        CHECK_EQ(v.kind, IW_VERDICT_OK);
        CHECK_EQ(m.opcode, op);
        CHECK_EQ(m.rv, 1);
        CHECK_EQ(m.rsv, 0);
        CHECK_EQ(m.ddp.dv, 1);
        CHECK_EQ(m.seg_len, n);
        CHECK_EQ(m.notes, 0);
        /* RFC 5040 Fig. 4 / RFC 7306 Fig. 2: buffer model per opcode */
        CHECK_EQ(m.ddp.tagged, op == IW_OP_WRITE || op == IW_OP_READ_RESP);
    }
    iw_rdmap_msg m;
    iw_verdict v;
    uint8_t b[256];
    size_t n;

    n = unhex(b, seg_write);
    dec(&m, b, n, &v);
    CHECK(m.ddp.last);
    CHECK_EQ(m.ddp.stag, 0x1001);
    CHECK_EQ(m.ddp.to, 0x2000);
    CHECK_EQ(m.payload_len, 4);
    CHECK(m.payload == b + 14);
    CHECK(!m.has_hdr);

    n = unhex(b, seg_read_req);
    dec(&m, b, n, &v);
    CHECK(m.has_hdr);
    CHECK_EQ(m.ddp.qn, 1);
    CHECK_EQ(m.ddp.msn, 1);
    CHECK_EQ(m.u.read_req.sink_stag, 0x11223344u);
    CHECK_EQ(m.u.read_req.sink_to, 0x1000);
    CHECK_EQ(m.u.read_req.read_size, 0x200);
    CHECK_EQ(m.u.read_req.src_stag, 0x55667788u);
    CHECK_EQ(m.u.read_req.src_to, 0xFFFF2000ull);
    CHECK_EQ(m.payload_len, 0);

    n = unhex(b, seg_read_resp);
    dec(&m, b, n, &v);
    CHECK_EQ(m.ddp.stag, 0x11223344u);
    CHECK_EQ(m.ddp.to, 0x1000);
    CHECK_EQ(m.payload_len, 3);
    CHECK(m.payload == b + 14);

    n = unhex(b, seg_send);
    dec(&m, b, n, &v);
    CHECK(m.ddp.last);
    CHECK_EQ(m.ddp.qn, 0);
    CHECK_EQ(m.ddp.msn, 1);
    CHECK_EQ(m.payload_len, 2);
    CHECK(m.payload == b + 18);

    n = unhex(b, seg_send_inv);
    dec(&m, b, n, &v);
    CHECK_EQ(m.ddp.rsvd_ulp2, 0xAABBCCDDu); /* the Invalidate STag (§4.1) */
    CHECK_EQ(m.notes, 0);

    n = unhex(b, seg_send_se);
    dec(&m, b, n, &v);
    CHECK(!m.ddp.last);
    CHECK_EQ(m.ddp.msn, 3);
    CHECK_EQ(m.ddp.mo, 0x10);
    CHECK_EQ(m.payload_len, 1);

    n = unhex(b, seg_send_se_inv);
    dec(&m, b, n, &v);
    CHECK_EQ(m.ddp.rsvd_ulp2, 0x01020304u);
    CHECK_EQ(m.payload_len, 0);

    n = unhex(b, seg_term);
    dec(&m, b, n, &v);
    CHECK(m.has_hdr);
    CHECK_EQ(m.ddp.qn, 2);
    const iw_rdmap_term *t = &m.u.term;
    CHECK_EQ(t->layer, 1);
    CHECK_EQ(t->etype, 2);
    CHECK_EQ(t->ecode, 1);
    CHECK(t->m && t->d && !t->r);
    CHECK_EQ(t->rsvd, 0);
    CHECK_EQ(t->ddp_seg_len, 0x2E);
    CHECK(!t->ddp.tagged);
    CHECK_EQ(t->ddp.qn, 7);
    CHECK_EQ(t->ddp.msn, 1);
    CHECK_EQ(t->ddp.rsvd_ulp, 0x43);
    CHECK(t->ddp_raw == b + 24);
    CHECK_EQ(t->ddp_raw_len, 18);

    n = unhex(b, seg_imm);
    dec(&m, b, n, &v);
    CHECK(m.has_hdr);
    CHECK_MEM(m.u.imm, "\x01\x23\x45\x67\x89\xAB\xCD\xEF", 8);
    n = unhex(b, seg_imm_se);
    dec(&m, b, n, &v);
    CHECK(m.has_hdr);
    CHECK_MEM(m.u.imm, "\xFE\xDC\xBA\x98\x76\x54\x32\x10", 8);

    n = unhex(b, seg_atomic_req);
    dec(&m, b, n, &v);
    CHECK(m.has_hdr);
    CHECK_EQ(m.ddp.qn, 1);
    const iw_rdmap_atomic_req *a = &m.u.atomic_req;
    CHECK_EQ(a->rsvd, 0);
    CHECK_EQ(a->aopcode, 2);
    CHECK_EQ(a->req_id, 7);
    CHECK_EQ(a->stag, 0xABCD);
    CHECK_EQ(a->to, 0x10008);
    CHECK(a->add_swap == 0x1111111111111111ull);
    CHECK(a->add_swap_mask == ~0ull);
    CHECK(a->compare == 0x2222222222222222ull);
    CHECK(a->compare_mask == 0xFFFFFFFFull);

    n = unhex(b, seg_atomic_resp);
    dec(&m, b, n, &v);
    CHECK(m.has_hdr);
    CHECK_EQ(m.ddp.qn, 3);
    CHECK_EQ(m.u.atomic_resp.req_id, 7);
    CHECK(m.u.atomic_resp.orig == 0x0123456789ABCDEFull);
}

/* Encoding the sender's struct gives the hand-written octets; the header
 * encoder gives them minus the payload; decode -> encode round-trips. */
IW_TEST(golden_encode_every_opcode) {
    for (unsigned op = 0; op < 12; op++) {
        uint8_t b[256], out[256], raw[32];
        size_t n = unhex(b, golden[op]);
        iw_rdmap_msg m;
        golden_msg(op, &m, raw);
        iw_ssize w = iw_rdmap_encode(out, sizeof out, &m);
        if (w != (iw_ssize)n || memcmp(out, b, n) != 0)
            fprintf(stderr, "  opcode 0x%x: encode differs\n", op);
        CHECK_EQ(w, (iw_ssize)n);
        CHECK_MEM(out, b, n);
        iw_ssize hw = iw_rdmap_encode_hdr(out, sizeof out, &m);
        CHECK_EQ(hw, (iw_ssize)(n - m.payload_len));
        CHECK_MEM(out, b, (size_t)hw);
        /* decode -> encode */
        iw_rdmap_msg d;
        iw_verdict v;
        REQUIRE(iw_rdmap_decode(&d, b, n, &v) == (iw_ssize)n);
        CHECK_EQ(iw_rdmap_encode(out, sizeof out, &d), (iw_ssize)n);
        CHECK_MEM(out, b, n);
        /* every short buffer: NOBUF, and nothing written at all, not even
         * the DDP header that fits (architecture.md: the size is checked
         * before the first write) */
        for (size_t k = 0; k < n; k++) {
            uint8_t o2[300];
            memset(o2, IW_TEST_CANARY, sizeof o2);
            CHECK_EQ(iw_rdmap_encode(o2, k, &m), IW_ERR_NOBUF);
            CHECK_EQ(iw_test_canary_changed(o2, sizeof o2), 0);
            if (k < (size_t)hw) {
                CHECK_EQ(iw_rdmap_encode_hdr(o2, k, &m), IW_ERR_NOBUF);
                CHECK_EQ(iw_test_canary_changed(o2, sizeof o2), 0);
            }
        }
    }
}

/* Round trips with varied fields for every opcode. */
IW_TEST(round_trip_random_fields) {
    uint64_t s = 7;
    uint8_t payload[300], out[400], again[400], raw[18];
    for (size_t i = 0; i < sizeof payload; i++)
        payload[i] = (uint8_t)(iw_test_rand(&s) >> 32);
    for (int iter = 0; iter < 2000; iter++) {
        unsigned op = (unsigned)(iw_test_rand(&s) % 12);
        iw_rdmap_msg m;
        golden_msg(op, &m, raw);
        uint64_t r1 = iw_test_rand(&s), r2 = iw_test_rand(&s);
        if (!m.ddp.tagged)
            m.ddp.msn = (uint32_t)r1; /* §4.3: untagged only */
        if (m.ddp.tagged) {
            m.ddp.stag = (uint32_t)(r1 >> 32);
            m.ddp.to = r2;
        }
        if (op == IW_OP_SEND_INV || op == IW_OP_SEND_SE_INV)
            m.ddp.rsvd_ulp2 = (uint32_t)r2;
        if (op != IW_OP_TERMINATE && op != IW_OP_IMM && op != IW_OP_IMM_SE &&
            op != IW_OP_READ_REQ && op != IW_OP_ATOMIC_REQ && op != IW_OP_ATOMIC_RESP) {
            m.payload_len = (size_t)(r2 % sizeof payload);
            m.payload = payload;
            m.ddp.last = r2 & 1;
            if (!m.ddp.tagged)
                m.ddp.mo = (uint32_t)(r2 >> 40);
        }
        if (op == IW_OP_READ_REQ) {
            m.u.read_req.sink_to = r2;
            m.u.read_req.read_size = (uint32_t)(r1 >> 16);
        }
        if (op == IW_OP_ATOMIC_REQ) {
            m.u.atomic_req.aopcode = (r2 & 1) ? IW_ATOMIC_CMP_SWAP : IW_ATOMIC_FETCH_ADD;
            m.u.atomic_req.compare = r1;
        }
        if (op == IW_OP_ATOMIC_RESP)
            m.u.atomic_resp.orig = r2;
        if (op == IW_OP_TERMINATE) {
            /* random M/D/R, tagged or untagged copied header */
            for (int i = 0; i < 18; i++)
                raw[i] = (uint8_t)(iw_test_rand(&s) >> 24);
            raw[0] = (r2 & 8) ? 0xC1 : 0x41;
            m.u.term.m = r2 & 1;
            m.u.term.d = (r2 & 2) != 0;
            m.u.term.r = (r2 & 4) != 0;
            m.u.term.ddp_raw_len = (r2 & 8) ? 14 : 18;
            m.u.term.ddp_seg_len = (uint16_t)r1;
            m.u.term.layer = 0, m.u.term.etype = 2, m.u.term.ecode = 6;
            m.u.term.rreq.src_to = r1;
        }
        iw_ssize w = iw_rdmap_encode(out, sizeof out, &m);
        REQUIRE(w > 0);
        iw_rdmap_msg d;
        iw_verdict v;
        iw_ssize r = dec(&d, out, (size_t)w, &v);
        if (r != w)
            fprintf(stderr, "  opcode 0x%x: %td verdict 0x%04x\n", op, r, v.term);
        CHECK_EQ(r, w);
        CHECK_EQ(d.opcode, op);
        CHECK_EQ(d.ddp.msn, m.ddp.msn);
        CHECK_EQ(d.payload_len, m.payload_len);
        if (m.payload_len)
            CHECK_MEM(d.payload, m.payload, m.payload_len);
        if (op == IW_OP_TERMINATE) {
            const iw_rdmap_term *t = &d.u.term;
            CHECK_EQ(t->m, m.u.term.m);
            CHECK_EQ(t->d, m.u.term.d);
            CHECK_EQ(t->r, m.u.term.r);
            /* §4.8: sub-fields are present as M/D/R say */
            size_t want = 18 + 4 + ((t->m || t->d) ? 2 : 0) + (t->d ? m.u.term.ddp_raw_len : 0) +
                          (t->r ? 28 : 0);
            CHECK_EQ((size_t)w, want);
            if (t->m || t->d)
                CHECK_EQ(t->ddp_seg_len, m.u.term.ddp_seg_len);
            if (t->d) {
                CHECK_EQ(t->ddp_raw_len, m.u.term.ddp_raw_len);
                CHECK_MEM(t->ddp_raw, raw, t->ddp_raw_len);
            }
            if (t->r)
                CHECK(t->rreq.src_to == m.u.term.rreq.src_to);
        }
        memset(again, 0, sizeof again);
        CHECK_EQ(iw_rdmap_encode(again, sizeof again, &d), w);
        CHECK_MEM(again, out, (size_t)w);
    }
}

/* ---- Terminate, RFC 5040 §4.8 ---- */

/* The copied DDP header is sized by its own T bit (14 tagged / 18 untagged,
 * "112 bits for Tagged Messages and 144 bits for Untagged"), not by the
 * error type in the Terminate Control. */
IW_TEST(terminate_copied_header_size) {
    static const struct {
        const char *hex;
        size_t raw_len;
    } rows[] = {
        /* untagged-buffer error 1/2/0x06, but the copied header is tagged */
        {UT("41", "47", "00000000", "00000002", "00000001",
            "00000000") "12 06 C0 00  00 20  C1 40 00001001 0000000000002000",
         14},
        /* tagged-buffer error 1/1/0x00 with an untagged copied header */
        {UT("41", "47", "00000000", "00000002", "00000001",
            "00000000") "11 00 C0 00  00 20  41 43 00000000 00000000 00000009 00000000",
         18},
        /* D without M: the DDP Segment Length is still present (§4.8) */
        {UT("41", "47", "00000000", "00000002", "00000001",
            "00000000") "02 06 40 00  00 00  81 40 00001001 0000000000002000",
         14},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        uint8_t b[256];
        size_t n = unhex(b, rows[i].hex);
        CHECK_EQ(n, 18 + 4 + 2 + rows[i].raw_len);
        iw_rdmap_msg m;
        iw_verdict v;
        REQUIRE(dec(&m, b, n, &v) == (iw_ssize)n);
        CHECK(m.has_hdr);
        CHECK(m.u.term.d);
        CHECK_EQ(m.u.term.ddp_raw_len, rows[i].raw_len);
        CHECK(m.u.term.ddp_raw == b + 24);
        CHECK_EQ(m.u.term.ddp.tagged, rows[i].raw_len == 14);
        CHECK_EQ(m.notes, 0);
        /* one octet less: the copied header is truncated */
        check_term_len(b, n - 1, IW_TERM_RDMAP_OP_UNSPECIFIED);
        /* encode from the decoded struct */
        uint8_t out[256];
        CHECK_EQ(iw_rdmap_encode(out, sizeof out, &m), (iw_ssize)n);
        CHECK_MEM(out, b, n);
    }
    uint8_t b[256];
    size_t n = unhex(b, rows[0].hex);
    iw_rdmap_msg m;
    iw_verdict v;
    REQUIRE(iw_rdmap_decode(&m, b, n, &v) == (iw_ssize)n);
    CHECK_EQ(m.u.term.ddp.stag, 0x1001);
    CHECK_EQ(m.u.term.ddp.to, 0x2000);
}

/* Every M/D/R combination, tagged and untagged copied headers; R=1 carries
 * the Read Request header (224 bits). */
IW_TEST(terminate_mdr_combinations) {
    uint8_t raw_t[14], raw_u[18];
    unhex(raw_t, "C1 42 00ABCDEF 0000000000000040");
    unhex(raw_u, "41 41 00000000 00000001 00000009 00000000");
    for (unsigned bits = 0; bits < 8; bits++)
        for (int tg = 0; tg <= 1; tg++) {
            iw_rdmap_msg m;
            memset(&m, 0, sizeof m);
            m.rv = 1;
            m.opcode = IW_OP_TERMINATE;
            m.ddp.dv = 1;
            m.ddp.last = true;
            m.ddp.qn = 2;
            m.ddp.msn = 1;
            iw_rdmap_term *t = &m.u.term;
            t->layer = 0, t->etype = 1, t->ecode = 0; /* Remote Protection / Invalid STag */
            t->m = bits & 4, t->d = bits & 2, t->r = bits & 1;
            t->ddp_seg_len = 0x2E;
            t->ddp_raw = tg ? raw_t : raw_u;
            t->ddp_raw_len = tg ? 14 : 18;
            t->rreq.sink_stag = 0x11;
            t->rreq.sink_to = 0x22;
            t->rreq.read_size = 0x33;
            t->rreq.src_stag = 0x44;
            t->rreq.src_to = 0x55;
            uint8_t out[256];
            iw_ssize w = iw_rdmap_encode(out, sizeof out, &m);
            size_t want =
                18 + 4 + ((t->m || t->d) ? 2 : 0) + (t->d ? (tg ? 14u : 18u) : 0) + (t->r ? 28 : 0);
            CHECK_EQ(w, (iw_ssize)want);
            /* Terminate Control octets (Fig. 8): Layer|EType, Code, M D R + Rsvd */
            CHECK_EQ(out[18], 0x01);
            CHECK_EQ(out[19], 0x00);
            CHECK_EQ(out[20], (t->m ? 0x80 : 0) | (t->d ? 0x40 : 0) | (t->r ? 0x20 : 0));
            CHECK_EQ(out[21], 0);
            size_t off = 22;
            if (t->m || t->d) {
                CHECK_EQ(out[off] << 8 | out[off + 1], 0x2E);
                off += 2;
            }
            if (t->d) {
                CHECK_MEM(out + off, t->ddp_raw, t->ddp_raw_len);
                off += t->ddp_raw_len;
            }
            if (t->r) {
                static const uint8_t rr[28] = {0, 0,    0, 0x11, 0, 0,    0, 0,   0, 0,
                                               0, 0x22, 0, 0,    0, 0x33, 0, 0,   0, 0x44,
                                               0, 0,    0, 0,    0, 0,    0, 0x55};
                CHECK_MEM(out + off, rr, 28);
            }
            iw_rdmap_msg d;
            iw_verdict v;
            REQUIRE(dec(&d, out, (size_t)w, &v) == w);
            CHECK(d.has_hdr);
            CHECK_EQ(d.u.term.m, t->m);
            CHECK_EQ(d.u.term.d, t->d);
            CHECK_EQ(d.u.term.r, t->r);
            if (t->r) {
                CHECK_EQ(d.u.term.rreq.sink_stag, 0x11);
                CHECK_EQ(d.u.term.rreq.read_size, 0x33);
                CHECK_EQ(d.u.term.rreq.src_to, 0x55);
            }
            if (t->d)
                CHECK_EQ(d.u.term.ddp.tagged, tg);
            /* every truncation of the announced fields: Remote Operation /
             * Unspecified (no registered code for a short header) */
            for (size_t k = 18; k < (size_t)w; k++)
                check_term_len(out, k, IW_TERM_RDMAP_OP_UNSPECIFIED);
            /* §7.1 zero-filled layout: zero octets after the announced fields are fine */
            memset(out + w, 0, 60);
            REQUIRE(dec(&d, out, (size_t)w + 60, &v) == w + 60);
            CHECK_EQ(d.notes, 0);
            /* a non-zero octet there, first or last, is flagged */
            for (int at = 0; at < 60; at += 59) {
                out[w + at] = 1;
                REQUIRE(dec(&d, out, (size_t)w + 60, &v) == w + 60);
                CHECK_EQ(d.notes, IW_NOTE(TERM_TRAILING));
                out[w + at] = 0;
            }
        }
}

/* Terminate notes: reserved bits (§4.8: ignored on receive), triples
 * outside the RFC 6580 registry, trailing octets. */
IW_TEST(terminate_notes) {
    static const struct {
        const char *ctrl;
        uint32_t notes;
        uint16_t rsvd;
    } rows[] = {
        {"00 AB 00 00", 0, 0},                          /* 0/0/ALL: any code */
        {"13 FE 00 00", 0, 0},                          /* 1/3/ALL (LLP reserved) */
        {"20 02 00 00", 0, 0},                          /* MPA CRC */
        {"01 05 00 00", IW_NOTE(TERM_UNREGISTERED), 0}, /* 0/1/0x05 unassigned */
        {"30 00 00 00", IW_NOTE(TERM_UNREGISTERED), 0}, /* no layer 3 */
        {"20 08 00 00", IW_NOTE(TERM_UNREGISTERED), 0},
        {"12 00 00 00", IW_NOTE(TERM_UNREGISTERED), 0}, /* untagged codes start at 1 */
        {"02 06 1F FF", IW_NOTE(TERM_RSVD_BITS), 0x1FFF},
        {"02 06 00 01", IW_NOTE(TERM_RSVD_BITS), 0x0001},
        {"02 06 10 00", IW_NOTE(TERM_RSVD_BITS), 0x1000},
        {"FF FF 1F FF", IW_NOTE(TERM_RSVD_BITS) | IW_NOTE(TERM_UNREGISTERED), 0x1FFF},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char hex[256];
        snprintf(hex, sizeof hex, "%s %s",
                 UT("41", "47", "00000000", "00000002", "00000001", "00000000"), rows[i].ctrl);
        uint8_t b[256];
        size_t n = unhex(b, hex);
        iw_rdmap_msg m;
        iw_verdict v;
        REQUIRE(dec(&m, b, n, &v) == (iw_ssize)n);
        CHECK_EQ(v.kind, IW_VERDICT_OK);
        CHECK_EQ(m.notes, rows[i].notes);
        CHECK_EQ(m.u.term.rsvd, rows[i].rsvd);
        CHECK_EQ(m.u.term.layer, b[18] >> 4);
        CHECK_EQ(m.u.term.etype, b[18] & 0xF);
        CHECK_EQ(m.u.term.ecode, b[19]);
    }
    /* Terminate shorter than its 4-octet control: 3 octets. */
    CHECK_TERM(UT("41", "47", "00000000", "00000002", "00000001", "00000000") "02 06 00", 0x02FF);
    CHECK_TERM(UT("41", "47", "00000000", "00000002", "00000001", "00000000"), 0x02FF);
    /* D=1 with a copied header cut short (tagged: 10 of 14 octets) */
    CHECK_TERM(UT("41", "47", "00000000", "00000002", "00000001",
                  "00000000") "11 00 C0 00 00 20 C1 40 00001001 00000000",
               0x02FF);
    /* D=1 and nothing after the segment length */
    CHECK_TERM(UT("41", "47", "00000000", "00000002", "00000001", "00000000") "11 00 C0 00 00 20",
               0x02FF);
    /* M=1 with one octet of segment length */
    CHECK_TERM(UT("41", "47", "00000000", "00000002", "00000001", "00000000") "11 00 80 00 00",
               0x02FF);
    /* R=1 with 27 of 28 RDMA header octets */
    CHECK_TERM(
        UT("41", "47", "00000000", "00000002", "00000001",
           "00000000") "01 00 20 00 00000011 0000000000000022 00000033 00000044 00000000000000",
        0x02FF);
}

/* ---- stateless validation (RFC 5041 §4.1, §7; RFC 5040 §4.1, §7.2; RFC 7306) ---- */

/* DDP version other than 1 (RFC 5041 §4.1): 1/1/0x04 tagged, 1/2/0x06 untagged. */
IW_TEST(bad_ddp_version) {
    static const char *tagged[] = {"C0", "C2", "C3", "80", "82"};
    static const char *untagged[] = {"40", "42", "43", "00", "7E"};
    for (int i = 0; i < 5; i++) {
        char hex[200];
        snprintf(hex, sizeof hex, "%s 40 00001001 0000000000002000 41", tagged[i]);
        CHECK_TERM(hex, 0x1104);
        snprintf(hex, sizeof hex, "%s",
                 UT("41", "43", "00000000", "00000000", "00000001", "00000000"));
        memcpy(hex, untagged[i], 2);
        CHECK_TERM(hex, 0x1206);
    }
}

/* RDMAP uses QN 0-3 (RFC 5040 §3.1, RFC 7306 §10.2); others: 1/2/0x01. */
IW_TEST(bad_qn) {
    CHECK_TERM(UT("41", "43", "00000000", "00000004", "00000001", "00000000"), 0x1201);
    CHECK_TERM(UT("41", "43", "00000000", "FFFFFFFF", "00000001", "00000000"), 0x1201);
    CHECK_TERM(UT("41", "43", "00000000", "80000000", "00000001", "00000000"), 0x1201);
    CHECK_TERM(UT("41", "47", "00000000", "00000100", "00000001", "00000000") "02060000", 0x1201);
}

/* RDMAP version other than 01b (RFC 5040 §4.1): 0/2/0x05. */
IW_TEST(bad_rdmap_version) {
    static const char *rc[] = {"03", "83", "C3", "33"};
    for (int i = 0; i < 4; i++) {
        char hex[200];
        snprintf(hex, sizeof hex, "41 %s 00000000 00000000 00000001 00000000", rc[i]);
        CHECK_TERM(hex, 0x0205);
    }
    CHECK_TERM("C1 00 00001001 0000000000002000", 0x0205); /* tagged Write, RV 0 */
    CHECK_TERM("C1 80 00001001 0000000000002000", 0x0205);
}

/* Opcodes 0xC-0xF are not assigned (RFC 5040 Fig. 4, RFC 6580 §3.4): 0/2/0x06. */
IW_TEST(bad_opcode) {
    for (unsigned op = 0xC; op <= 0xF; op++) {
        char hex[200];
        snprintf(hex, sizeof hex, "41 %02X 00000000 00000000 00000001 00000000", 0x40 | op);
        CHECK_TERM(hex, 0x0206);
        snprintf(hex, sizeof hex, "C1 %02X 00001001 0000000000002000", 0x40 | op);
        CHECK_TERM(hex, 0x0206);
        for (unsigned qn = 1; qn <= 3; qn++) {
            snprintf(hex, sizeof hex, "41 %02X 00000000 0000000%u 00000001 00000000", 0x40 | op,
                     qn);
            CHECK_TERM(hex, 0x0206);
        }
    }
}

/* RFC 5040 Fig. 4 / RFC 7306 Fig. 2 fix each opcode's buffer model and
 * queue; any other combination is an unexpected opcode, 0/2/0x06. */
IW_TEST(opcode_model_and_queue_mismatch) {
    /* Write / Read Response untagged */
    CHECK_TERM(UT("41", "40", "00000000", "00000000", "00000001", "00000000") "41", 0x0206);
    CHECK_TERM(UT("41", "42", "00000000", "00000000", "00000001", "00000000") "41", 0x0206);
    /* untagged opcodes with T=1 */
    static const unsigned ut_ops[] = {1, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    for (size_t i = 0; i < sizeof ut_ops / sizeof ut_ops[0]; i++) {
        char hex[200];
        snprintf(hex, sizeof hex,
                 "C1 %02X 00001001 0000000000002000 "
                 "00000000000000000000000000000000000000000000000000000000",
                 0x40 | ut_ops[i]);
        CHECK_TERM(hex, 0x0206);
    }
    /* each untagged opcode on every wrong queue */
    static const unsigned want_qn[12] = {0, 1, 0, 0, 0, 0, 0, 2, 0, 0, 1, 3};
    for (size_t i = 0; i < sizeof ut_ops / sizeof ut_ops[0]; i++)
        for (unsigned qn = 0; qn < 4; qn++) {
            if (qn == want_qn[ut_ops[i]])
                continue;
            char hex[300];
            snprintf(hex, sizeof hex,
                     "41 %02X 00000000 0000000%u 00000001 00000000 "
                     "00000000000000000000000000000000000000000000000000000000",
                     0x40 | ut_ops[i], qn);
            CHECK_TERM(hex, 0x0206);
        }
    /* the named cases from the brief, spelled out */
    CHECK_TERM(UT("41", "43", "00000000", "00000001", "00000001", "00000000") "68", 0x0206);
    CHECK_TERM(UT("41", "41", "00000000", "00000000", "00000001",
                  "00000000") "11223344 0000000000001000 00000200 55667788 0000000000002000",
               0x0206);
    CHECK_TERM(UT("41", "47", "00000000", "00000000", "00000001", "00000000") "02 06 00 00",
               0x0206);
    CHECK_TERM(
        UT("41", "4B", "00000000", "00000001", "00000001", "00000000") "00000007 0123456789ABCDEF",
        0x0206);
}

/* A DDP header cut short, or an opcode header shorter than its fixed size:
 * Remote Operation / Unspecified (no registered code fits; see iw_rdmap.c). */
IW_TEST(truncated_headers) {
    for (unsigned op = 0; op < 12; op++) {
        uint8_t b[256];
        size_t n = unhex(b, golden[op]);
        size_t hl = (b[0] & 0x80) ? 14 : 18;
        for (size_t k = 0; k < hl; k++)
            check_term_len(b, k, IW_TERM_RDMAP_OP_UNSPECIFIED);
        /* every prefix decodes or fails cleanly, read through a guard page */
        for (size_t k = hl; k < n; k++) {
            iw_rdmap_msg m;
            iw_verdict v;
            iw_ssize r = dec(&m, b, k, &v);
            CHECK(r == (iw_ssize)k || r == IW_ERR_PROTO);
            if (op == IW_OP_READ_REQ || op == IW_OP_ATOMIC_REQ || op == IW_OP_ATOMIC_RESP ||
                op == IW_OP_IMM || op == IW_OP_IMM_SE || op == IW_OP_TERMINATE) {
                /* a whole (L=1, MO=0) message shorter than its header */
                CHECK_EQ(r, IW_ERR_PROTO);
                CHECK_EQ(v.term, 0x02FF);
            } else {
                CHECK_EQ(r, (iw_ssize)k); /* payload simply shorter */
            }
        }
    }
    /* Read Request with 27 header octets */
    uint8_t b[256];
    size_t n = unhex(b, seg_read_req);
    CHECK_EQ(n, 46);
    check_term_len(b, 45, 0x02FF);
}

/* Read Request, Atomic Request and Atomic Response are exactly their header
 * (RFC 5040 §4.4, RFC 7306 §4.2 "No" ULP payload): more overruns the queue's
 * buffer, DDP 1/2/0x05. Immediate Data must be exactly 8 octets (RFC 7306
 * §6.3): 0/2/0xFF. */
IW_TEST(fixed_size_messages) {
    uint8_t b[256];
    size_t n;
    n = unhex(b, seg_read_req);
    b[n] = 0;
    check_term_len(b, n + 1, 0x1205);
    n = unhex(b, seg_atomic_req);
    b[n] = 0;
    check_term_len(b, n + 1, 0x1205);
    check_term_len(b, n - 1, 0x02FF);
    n = unhex(b, seg_atomic_resp);
    b[n] = 0;
    check_term_len(b, n + 1, 0x1205);
    check_term_len(b, n - 1, 0x02FF);
    for (int op = IW_OP_IMM; op <= IW_OP_IMM_SE; op++) {
        n = unhex(b, golden[op]);
        b[n] = 0xEE;
        check_term_len(b, n - 1, 0x02FF); /* 7 octets */
        check_term_len(b, n + 1, 0x02FF); /* 9 octets */
        check_term_len(b, 18, 0x02FF);    /* none */
        iw_rdmap_msg m;
        iw_verdict v;
        CHECK_EQ(dec(&m, b, n, &v), (iw_ssize)n);
    }
}

/* Linux siw's Terminate Control (little-endian bitfield order, see
 * term_ctrl_siw): recognised when the RFC reading makes no sense and siw's
 * does, the copied header decoded under it; re-encoded to the same octets. */
IW_TEST(term_siw_layout) {
    static const char *const segs[] = {
        /* 2/0/0x02 with no sub-field: RFC reading 0/2/0x02, unregistered */
        UT("41", "47", "00000000", "00000002", "00000001", "00000000") "02 02 00 00",
        /* 1/1/0x00, M=1, D=1, 33 octets, a copied tagged header */
        UT("41", "47", "00000000", "00000002", "00000001",
           "00000000") "11 00 03 00 00 21 C1 40 00000101 0000000000001000",
    };
    uint8_t b[128], out[128];
    iw_rdmap_msg m;
    iw_verdict v;
    size_t n = unhex(b, segs[0]);
    CHECK_EQ(dec(&m, b, n, &v), (iw_ssize)n);
    /* The codec reads the RFC layout only (what a receiver judges). */
    CHECK(!m.u.term.siw_layout);
    CHECK(m.notes & IW_NOTE(TERM_UNREGISTERED));
    CHECK_EQ(IW_TERM_TRIPLE(m.u.term.layer, m.u.term.etype, m.u.term.ecode), 0x0202);
    CHECK(iw_rdmap_term_siw(&m));
    CHECK(!iw_rdmap_term_siw(&m)); /* once */
    CHECK(m.u.term.siw_layout);
    CHECK(m.notes & IW_NOTE(TERM_SIW_LAYOUT));
    CHECK(!(m.notes & (IW_NOTE(TERM_UNREGISTERED) | IW_NOTE(TERM_RSVD_BITS))));
    CHECK_EQ(IW_TERM_TRIPLE(m.u.term.layer, m.u.term.etype, m.u.term.ecode), 0x2002);
    CHECK(!m.u.term.m && !m.u.term.d && !m.u.term.r);
    CHECK_EQ(iw_rdmap_encode(out, sizeof out, &m), (iw_ssize)n);
    CHECK_MEM(out, b, n);

    n = unhex(b, segs[1]);
    CHECK_EQ(dec(&m, b, n, &v), (iw_ssize)n);
    CHECK(m.notes & IW_NOTE(TERM_RSVD_BITS));
    CHECK(!m.u.term.d);
    CHECK(iw_rdmap_term_siw(&m));
    const iw_rdmap_term *t = &m.u.term;
    CHECK(t->siw_layout);
    CHECK_EQ(IW_TERM_TRIPLE(t->layer, t->etype, t->ecode), IW_TERM_DDP_T_INVALID_STAG);
    CHECK(t->m && t->d && !t->r);
    CHECK_EQ(t->rsvd, 0);
    CHECK_EQ(t->ddp_seg_len, 33);
    CHECK(t->ddp.tagged && t->ddp.last);
    CHECK_EQ(t->ddp.stag, 0x101);
    CHECK(t->ddp.to == 0x1000);
    CHECK_EQ(t->ddp_raw_len, 14);
    CHECK(!(m.notes & IW_NOTE(TERM_TRAILING)));
    CHECK_EQ(iw_rdmap_encode(out, sizeof out, &m), (iw_ssize)n);
    CHECK_MEM(out, b, n);

    /* Sane as the RFC has it: never re-read (01 00 00 00 is 0/1/0x00 there,
     * 1/0/0x00 in siw's order; the RFC wins). */
    n = unhex(b, UT("41", "47", "00000000", "00000002", "00000001", "00000000") "01 00 00 00");
    CHECK_EQ(dec(&m, b, n, &v), (iw_ssize)n);
    CHECK(!iw_rdmap_term_siw(&m));
    CHECK(!m.u.term.siw_layout);
    CHECK_EQ(IW_TERM_TRIPLE(m.u.term.layer, m.u.term.etype, m.u.term.ecode), 0x0100);
    /* Senseless both ways: RFC reading, flagged as before. */
    n = unhex(b, UT("41", "47", "00000000", "00000002", "00000001", "00000000") "FF FF 1F FF");
    CHECK_EQ(dec(&m, b, n, &v), (iw_ssize)n);
    CHECK(!iw_rdmap_term_siw(&m));
    CHECK(!m.u.term.siw_layout);
    CHECK(m.notes & IW_NOTE(TERM_UNREGISTERED));
    CHECK(m.notes & IW_NOTE(TERM_RSVD_BITS));
    /* siw's order but the copied header it announces is missing: RFC
     * reading (no sub-field announced there), flagged. */
    n = unhex(b, UT("41", "47", "00000000", "00000002", "00000001", "00000000") "11 00 03 00");
    CHECK_EQ(dec(&m, b, n, &v), (iw_ssize)n);
    CHECK(!iw_rdmap_term_siw(&m));
    CHECK(!m.u.term.siw_layout);
    CHECK(m.notes & IW_NOTE(TERM_RSVD_BITS));
}

/* RFC 7306 §5.1.1, §8.2: an Atomic Request whose remote TO is not 64-bit
 * aligned must be terminated whatever its STag's state: a deferred verdict,
 * 0/2/0x07 unless a stateful check names the Terminate first, the header
 * still decoded in full. */
IW_TEST(atomic_misaligned_to) {
    for (unsigned low = 0; low < 16; low++) {
        uint8_t b[256];
        size_t n = unhex(b, seg_atomic_req);
        b[18 + 12 + 7] = (uint8_t)low; /* lowest octet of the remote TO */
        iw_rdmap_msg m;
        iw_verdict v;
        iw_ssize r = dec(&m, b, n, &v);
        CHECK(m.has_hdr);
        CHECK_EQ(m.u.atomic_req.to, 0x10000u | low);
        if (low & 7) {
            CHECK_EQ(r, IW_ERR_PROTO);
            CHECK_EQ(v.kind, IW_VERDICT_TERM);
            CHECK_EQ(v.term, IW_TERM_RDMAP_CATASTROPHIC_STREAM);
            CHECK(strstr(v.rfc, "RFC 7306 §8.2") != NULL);
            CHECK(m.deferred);
        } else {
            CHECK_EQ(r, (iw_ssize)n);
            CHECK(!m.deferred);
        }
    }
    /* An unsupported AOpCode is judged before the alignment, and not deferred. */
    uint8_t b[256];
    size_t n = unhex(b, seg_atomic_req);
    b[21] = 5;
    b[18 + 12 + 7] = 3;
    iw_rdmap_msg m;
    iw_verdict v;
    CHECK_EQ(dec(&m, b, n, &v), IW_ERR_PROTO);
    CHECK_EQ(v.term, IW_TERM_RDMAP_UNEXPECTED_OPCODE);
    CHECK(!m.deferred);
}

/* RFC 7306 §5.2.1 item 4 / §10.1: only FetchAdd (0) and CmpSwap (2);
 * anything else surfaces an error, Remote Operation / Unexpected OpCode. */
IW_TEST(atomic_aopcodes) {
    for (unsigned aop = 0; aop < 16; aop++) {
        uint8_t b[256];
        size_t n = unhex(b, seg_atomic_req);
        b[21] = (uint8_t)aop;
        iw_rdmap_msg m;
        iw_verdict v;
        iw_ssize r = dec(&m, b, n, &v);
        if (aop == 0 || aop == 2) {
            CHECK_EQ(r, (iw_ssize)n);
            CHECK_EQ(m.u.atomic_req.aopcode, aop);
        } else {
            CHECK_EQ(r, IW_ERR_PROTO);
            CHECK_EQ(v.term, 0x0206);
        }
    }
    /* FetchAdd, by hand: AOpCode 0, Add Data 5, Add Mask 0 (plain 64-bit
     * add), Compare Data 0 and Compare Mask all-ones as §5.2.1 says to send. */
    {
        uint8_t f[256];
        size_t fn =
            unhex(f, UT("41", "4A", "00000000", "00000001", "00000009",
                        "00000000") "00000000 0000002A 00001234 0000000000000040 0000000000000005 "
                                    "0000000000000000 0000000000000000 FFFFFFFFFFFFFFFF");
        CHECK_EQ(fn, 70);
        iw_rdmap_msg fm;
        iw_verdict fv;
        REQUIRE(dec(&fm, f, fn, &fv) == 70);
        CHECK(fm.has_hdr);
        CHECK_EQ(fm.u.atomic_req.aopcode, IW_ATOMIC_FETCH_ADD);
        CHECK_EQ(fm.u.atomic_req.req_id, 0x2A);
        CHECK_EQ(fm.u.atomic_req.stag, 0x1234);
        CHECK_EQ(fm.u.atomic_req.to, 0x40);
        CHECK(fm.u.atomic_req.add_swap == 5 && fm.u.atomic_req.add_swap_mask == 0);
        CHECK(fm.u.atomic_req.compare == 0 && fm.u.atomic_req.compare_mask == ~0ull);
        uint8_t out[128];
        CHECK_EQ(iw_rdmap_encode(out, sizeof out, &fm), 70);
        CHECK_MEM(out, f, 70);
    }
    /* Reserved (28 bits, ignored on receive): note only. */
    uint8_t b[256];
    size_t n = unhex(b, seg_atomic_req);
    b[18] = 0x80;
    b[21] = 0x10; /* reserved bit + AOpCode 0 */
    iw_rdmap_msg m;
    iw_verdict v;
    CHECK_EQ(dec(&m, b, n, &v), (iw_ssize)n);
    CHECK_EQ(m.u.atomic_req.aopcode, 0);
    CHECK_EQ(m.u.atomic_req.rsvd, 0x8000001u);
    CHECK_EQ(m.notes, IW_NOTE(ATOMIC_RSVD_BITS));
}

/* Checks run in the order a receiver meets the fields: DDP version, QN,
 * RDMAP version, opcode, then the opcode's header. */
IW_TEST(check_order) {
    /* bad DDP version + bad opcode: the DDP version */
    CHECK_TERM(UT("40", "4C", "00000000", "00000000", "00000001", "00000000"), 0x1206);
    CHECK_TERM("C0 4D 00001001 0000000000002000", 0x1104);
    /* bad DDP version + bad QN */
    CHECK_TERM(UT("42", "43", "00000000", "00000009", "00000001", "00000000"), 0x1206);
    /* bad QN + bad RDMAP version + bad opcode */
    CHECK_TERM(UT("41", "8E", "00000000", "00000009", "00000001", "00000000"), 0x1201);
    /* bad RDMAP version + bad opcode */
    CHECK_TERM(UT("41", "0E", "00000000", "00000000", "00000001", "00000000"), 0x0205);
    /* wrong queue + header too short */
    CHECK_TERM(UT("41", "41", "00000000", "00000000", "00000001", "00000000") "1122", 0x0206);
    /* wrong model beats bad payload size */
    CHECK_TERM(UT("41", "40", "00000000", "00000000", "00000001", "00000000"), 0x0206);
}

/* Reserved fields are ignored on receive (RFC 5041 §4.1 Rsvd, RFC 5040
 * §4.1 Rsv and Invalidate STag): notes only. */
IW_TEST(notes_reserved_fields) {
    uint8_t b[256];
    size_t n;
    iw_rdmap_msg m;
    iw_verdict v;
    /* DDP Rsvd */
    n = unhex(b, UT("45", "43", "00000000", "00000000", "00000001", "00000000") "68");
    REQUIRE(dec(&m, b, n, &v) == (iw_ssize)n);
    CHECK_EQ(m.notes, IW_NOTE(DDP_RSVD_BITS));
    CHECK_EQ(m.ddp.rsvd, 1);
    n = unhex(b, "FD 40 00001001 0000000000002000");
    REQUIRE(dec(&m, b, n, &v) == (iw_ssize)n);
    CHECK_EQ(m.notes, IW_NOTE(DDP_RSVD_BITS));
    /* RDMAP Rsv */
    n = unhex(b, UT("41", "73", "00000000", "00000000", "00000001", "00000000"));
    REQUIRE(dec(&m, b, n, &v) == (iw_ssize)n);
    CHECK_EQ(m.notes, IW_NOTE(RDMAP_RSV_BITS));
    CHECK_EQ(m.rsv, 3);
    n = unhex(b, "C1 50 00001001 0000000000002000");
    REQUIRE(dec(&m, b, n, &v) == (iw_ssize)n);
    CHECK_EQ(m.notes, IW_NOTE(RDMAP_RSV_BITS));
    CHECK_EQ(m.rsv, 1);
    /* Invalidate STag non-zero where the opcode carries none (§4.1; RFC
     * 7306 §4.1 for its opcodes); fine on the two Invalidate opcodes. */
    for (unsigned op = 0; op < 12; op++) {
        n = unhex(b, golden[op]);
        if (b[0] & 0x80)
            continue; /* tagged: no such field */
        b[5] = 0x5A;
        REQUIRE(dec(&m, b, n, &v) == (iw_ssize)n);
        bool carries = op == IW_OP_SEND_INV || op == IW_OP_SEND_SE_INV;
        CHECK_EQ(m.notes, carries ? 0u : IW_NOTE(RDMAP_INV_STAG_NONZERO));
    }
    /* All at once. */
    n = unhex(b, UT("7D", "73", "FFFFFFFF", "00000000", "00000001", "00000000"));
    REQUIRE(dec(&m, b, n, &v) == (iw_ssize)n);
    CHECK_EQ(m.notes,
             IW_NOTE(DDP_RSVD_BITS) | IW_NOTE(RDMAP_RSV_BITS) | IW_NOTE(RDMAP_INV_STAG_NONZERO));
}

/* A control message split over segments (MO != 0 or L=0) is legal DDP
 * (RFC 5041 §5.2) but leaves its header undecoded here; the message still
 * cannot exceed the header size. */
IW_TEST(segmented_control_messages) {
    uint8_t b[256];
    size_t n;
    iw_rdmap_msg m;
    iw_verdict v;
    /* Read Request, MO 4, L=1, 24 octets: the tail of the header */
    n = unhex(b, UT("41", "41", "00000000", "00000001", "00000001",
                    "00000004") "0000000000001000 00000200 55667788 0000000000002000");
    CHECK_EQ(n, 18 + 24);
    REQUIRE(dec(&m, b, n, &v) == (iw_ssize)n);
    CHECK_EQ(m.notes, IW_NOTE(CONTROL_SEGMENTED));
    CHECK(!m.has_hdr);
    CHECK_EQ(m.payload_len, 24);
    CHECK(m.payload == b + 18);
    /* MO 4 + 25 octets = 29 > 28: too long for the QN 1 buffer */
    b[n] = 0;
    check_term_len(b, n + 1, 0x1205);
    /* L=0, MO 0: the first 28 octets, last flag not set */
    n = unhex(b, UT("01", "41", "00000000", "00000001", "00000001",
                    "00000000") "11223344 0000000000001000 00000200 55667788 0000000000002000");
    REQUIRE(dec(&m, b, n, &v) == (iw_ssize)n);
    CHECK_EQ(m.notes, IW_NOTE(CONTROL_SEGMENTED));
    CHECK(!m.has_hdr);
    b[n] = 0;
    check_term_len(b, n + 1, 0x1205);
    /* L=0 with only 10 octets */
    REQUIRE(dec(&m, b, 28, &v) == 28);
    CHECK_EQ(m.notes, IW_NOTE(CONTROL_SEGMENTED));
    CHECK_EQ(m.payload_len, 10);
    /* Atomic Request, MO 52 with one octet: past the 52-octet header */
    n = unhex(b, UT("41", "4A", "00000000", "00000001", "00000001", "00000034") "00");
    check_term_len(b, n, 0x1205);
    /* Immediate Data: L=0 with 4 octets, then L=1 MO 4 with the other 4 */
    n = unhex(b, UT("01", "48", "00000000", "00000000", "00000001", "00000000") "01020304");
    REQUIRE(dec(&m, b, n, &v) == (iw_ssize)n);
    CHECK_EQ(m.notes, IW_NOTE(CONTROL_SEGMENTED));
    n = unhex(b, UT("41", "48", "00000000", "00000000", "00000001", "00000004") "05060708");
    REQUIRE(dec(&m, b, n, &v) == (iw_ssize)n);
    CHECK_EQ(m.notes, IW_NOTE(CONTROL_SEGMENTED));
    /* ... but MO 4 + 5 octets is 9 */
    n = unhex(b, UT("41", "48", "00000000", "00000000", "00000001", "00000004") "0506070809");
    check_term_len(b, n, 0x02FF);
}

/* Opcode names: RFC 6580 §3.4 and RFC 7306 §10; 0xC-0xE reserved
 * (RFC 5040 Fig. 4), 0xF "Reserved (Experimental)". */
IW_TEST(opcode_names) {
    static const char *const names[16] = {
        "RDMA Write",
        "RDMA Read Request",
        "RDMA Read Response",
        "Send",
        "Send with Invalidate",
        "Send with Solicited Event",
        "Send with Solicited Event and Invalidate",
        "Terminate",
        "Immediate Data",
        "Immediate Data with Solicited Event",
        "Atomic Request",
        "Atomic Response",
        "Reserved",
        "Reserved",
        "Reserved",
        "Reserved (Experimental)",
    };
    for (unsigned op = 0; op < 16; op++) {
        const char *s = iw_rdmap_opcode_str(op);
        CHECK(s != NULL && strcmp(s, names[op]) == 0);
    }
    CHECK(iw_rdmap_opcode_str(16) != NULL);
    CHECK(iw_rdmap_opcode_str(0xFFFFFFFFu) != NULL);
    /* RDMAP Control byte (RV=1): 0x40 | opcode (RFC 5040 §4.1) */
    for (unsigned op = 0; op < 16; op++)
        CHECK_EQ(iw_rdmap_ctrl(op), 0x40 | op);
    CHECK_EQ(IW_QN_SEND, 0);
    CHECK_EQ(IW_QN_READ_REQ, 1);
    CHECK_EQ(IW_QN_TERMINATE, 2);
    CHECK_EQ(IW_QN_ATOMIC_RESP, 3);
}

/* Encoder argument checks. */
IW_TEST(encode_invalid_arg) {
    uint8_t out[256], raw[32];
    iw_rdmap_msg m;
    golden_msg(IW_OP_SEND, &m, raw);
    m.rv = 4;
    CHECK_EQ(iw_rdmap_encode(out, sizeof out, &m), IW_ERR_INVALID_ARG);
    golden_msg(IW_OP_SEND, &m, raw);
    m.rsv = 4;
    CHECK_EQ(iw_rdmap_encode_hdr(out, sizeof out, &m), IW_ERR_INVALID_ARG);
    golden_msg(IW_OP_SEND, &m, raw);
    m.opcode = 16;
    CHECK_EQ(iw_rdmap_encode_hdr(out, sizeof out, &m), IW_ERR_INVALID_ARG);
    golden_msg(IW_OP_SEND, &m, raw);
    m.ddp.rsvd = 0x10;
    CHECK_EQ(iw_rdmap_encode(out, sizeof out, &m), IW_ERR_INVALID_ARG);
    golden_msg(IW_OP_SEND, &m, raw);
    m.ddp.dv = 4;
    CHECK_EQ(iw_rdmap_encode(out, sizeof out, &m), IW_ERR_INVALID_ARG);
    golden_msg(IW_OP_SEND, &m, raw);
    m.payload = NULL; /* length without data */
    CHECK_EQ(iw_rdmap_encode(out, sizeof out, &m), IW_ERR_INVALID_ARG);
    /* crafted bad values that still fit their bits are allowed */
    golden_msg(IW_OP_SEND, &m, raw);
    m.rv = 3, m.rsv = 3, m.opcode = 0xF, m.ddp.dv = 0;
    CHECK(iw_rdmap_encode(out, sizeof out, &m) > 0);
    CHECK_EQ(out[0], 0x40);
    CHECK_EQ(out[1], 0xFF);
    /* atomic */
    golden_msg(IW_OP_ATOMIC_REQ, &m, raw);
    m.u.atomic_req.aopcode = 16;
    CHECK_EQ(iw_rdmap_encode(out, sizeof out, &m), IW_ERR_INVALID_ARG);
    golden_msg(IW_OP_ATOMIC_REQ, &m, raw);
    m.u.atomic_req.rsvd = 0x10000000;
    CHECK_EQ(iw_rdmap_encode(out, sizeof out, &m), IW_ERR_INVALID_ARG);
    m.u.atomic_req.rsvd = 0x0FFFFFFF;
    CHECK_EQ(iw_rdmap_encode(out, sizeof out, &m), 70);
    CHECK_EQ(out[18], 0xFF);
    CHECK_EQ(out[21], 0xF2);
    CHECK_EQ(iw_rdmap_encode_atomic_req(out, 51, &m.u.atomic_req), IW_ERR_NOBUF);
    CHECK_EQ(iw_rdmap_encode_atomic_resp(out, 11, &m.u.atomic_resp), IW_ERR_NOBUF);
    CHECK_EQ(iw_rdmap_encode_read_req(out, 27, &m.u.read_req), IW_ERR_NOBUF);
    CHECK_EQ(iw_rdmap_encode_read_req(out, 28, &m.u.read_req), 28);
    /* terminate */
    golden_msg(IW_OP_TERMINATE, &m, raw);
    m.u.term.layer = 16;
    CHECK_EQ(iw_rdmap_encode(out, sizeof out, &m), IW_ERR_INVALID_ARG);
    golden_msg(IW_OP_TERMINATE, &m, raw);
    m.u.term.etype = 16;
    CHECK_EQ(iw_rdmap_encode(out, sizeof out, &m), IW_ERR_INVALID_ARG);
    golden_msg(IW_OP_TERMINATE, &m, raw);
    m.u.term.rsvd = 0x2000;
    CHECK_EQ(iw_rdmap_encode(out, sizeof out, &m), IW_ERR_INVALID_ARG);
    golden_msg(IW_OP_TERMINATE, &m, raw);
    m.u.term.ddp_raw = NULL;
    CHECK_EQ(iw_rdmap_encode(out, sizeof out, &m), IW_ERR_INVALID_ARG);
    golden_msg(IW_OP_TERMINATE, &m, raw);
    m.u.term.ddp_raw_len = 14; /* copied header says untagged: 18 */
    CHECK_EQ(iw_rdmap_encode(out, sizeof out, &m), IW_ERR_INVALID_ARG);
    golden_msg(IW_OP_TERMINATE, &m, raw);
    m.u.term.ddp_raw_len = 0;
    CHECK_EQ(iw_rdmap_encode(out, sizeof out, &m), IW_ERR_INVALID_ARG);
    golden_msg(IW_OP_TERMINATE, &m, raw);
    m.u.term.d = false; /* then ddp_raw is not used */
    m.u.term.ddp_raw = NULL;
    CHECK_EQ(iw_rdmap_encode(out, sizeof out, &m), 18 + 4 + 2);
    m.u.term.rsvd = 0x1FFF;
    CHECK_EQ(iw_rdmap_encode(out, sizeof out, &m), 18 + 4 + 2);
    CHECK_EQ(out[20], 0x80 | 0x1F);
    CHECK_EQ(out[21], 0xFF);
    iw_rdmap_term t = m.u.term;
    CHECK_EQ(iw_rdmap_encode_term(out, 5, &t), IW_ERR_NOBUF);
}

/* Every refusal of every RDMAP encoder leaves the output untouched: each
 * header encoder at every short length (NOBUF), and iw_rdmap_encode /
 * _encode_hdr with an argument they refuse (INVALID_ARG) in a buffer with
 * room for all of it, where the DDP header was written before. */
static void check_refusal(iw_ssize (*enc)(uint8_t *, size_t, const void *), const void *arg,
                          size_t need) {
    uint8_t out[128];
    for (size_t k = 0; k < need; k++) {
        memset(out, IW_TEST_CANARY, sizeof out);
        CHECK_EQ(enc(out, k, arg), IW_ERR_NOBUF);
        CHECK_EQ(iw_test_canary_changed(out, sizeof out), 0);
    }
    memset(out, IW_TEST_CANARY, sizeof out);
    CHECK_EQ(enc(out, need, arg), (iw_ssize)need);
    CHECK_EQ(iw_test_canary_changed(out + need, sizeof out - need), 0);
}
static iw_ssize enc_read_req(uint8_t *o, size_t n, const void *a) {
    return iw_rdmap_encode_read_req(o, n, a);
}
static iw_ssize enc_atomic_req(uint8_t *o, size_t n, const void *a) {
    return iw_rdmap_encode_atomic_req(o, n, a);
}
static iw_ssize enc_atomic_resp(uint8_t *o, size_t n, const void *a) {
    return iw_rdmap_encode_atomic_resp(o, n, a);
}
static iw_ssize enc_term(uint8_t *o, size_t n, const void *a) {
    return iw_rdmap_encode_term(o, n, a);
}

IW_TEST(refusal_leaves_buffer_untouched) {
    iw_rdmap_msg m;
    uint8_t raw[32];
    golden_msg(IW_OP_READ_REQ, &m, raw);
    check_refusal(enc_read_req, &m.u.read_req, IW_RDMAP_READ_REQ_LEN);
    golden_msg(IW_OP_ATOMIC_REQ, &m, raw);
    check_refusal(enc_atomic_req, &m.u.atomic_req, IW_RDMAP_ATOMIC_REQ_LEN);
    golden_msg(IW_OP_ATOMIC_RESP, &m, raw);
    check_refusal(enc_atomic_resp, &m.u.atomic_resp, IW_RDMAP_ATOMIC_RESP_LEN);
    golden_msg(IW_OP_TERMINATE, &m, raw);
    for (unsigned mdr = 0; mdr < 8; mdr++) {
        iw_rdmap_term t = m.u.term;
        t.m = mdr & 1, t.d = mdr & 2, t.r = mdr & 4;
        size_t need = IW_RDMAP_TERM_CTRL_LEN + (t.m || t.d ? 2 : 0) + (t.d ? t.ddp_raw_len : 0) +
                      (t.r ? IW_RDMAP_READ_REQ_LEN : 0);
        check_refusal(enc_term, &t, need);
    }
    /* Refused arguments, with room for the whole segment. */
    for (int c = 0; c < 7; c++) {
        unsigned op = c < 3 ? IW_OP_TERMINATE : c < 5 ? IW_OP_ATOMIC_REQ : IW_OP_SEND;
        golden_msg(op, &m, raw);
        if (c == 0)
            m.u.term.layer = 16;
        if (c == 1)
            m.u.term.ddp_raw_len = 14; /* the copied header says untagged: 18 */
        if (c == 2)
            m.u.term.rsvd = 0x2000;
        if (c == 3)
            m.u.atomic_req.aopcode = 16;
        if (c == 4)
            m.u.atomic_req.rsvd = 0x10000000;
        if (c == 5)
            m.payload = NULL, m.payload_len = 1;
        if (c == 6)
            m.ddp.rsvd = 0x10;
        uint8_t out[256];
        memset(out, IW_TEST_CANARY, sizeof out);
        CHECK_EQ(iw_rdmap_encode(out, sizeof out, &m), IW_ERR_INVALID_ARG);
        CHECK_EQ(iw_test_canary_changed(out, sizeof out), 0);
        if (c != 5) {
            CHECK_EQ(iw_rdmap_encode_hdr(out, sizeof out, &m), IW_ERR_INVALID_ARG);
            CHECK_EQ(iw_test_canary_changed(out, sizeof out), 0);
        }
    }
}

/* iw_rdmap_msg_init: the skeleton of every defined opcode has the model
 * and queue of RFC 5040 §4.2 Fig. 5 / RFC 7306 §4 (written out here, not
 * taken from the library) and decodes cleanly once its fixed header is
 * there; undefined opcodes are refused but still get QN 0, untagged. */
IW_TEST(msg_init_every_opcode) {
    static const struct {
        unsigned op;
        bool tagged;
        uint8_t qn;
    } rfc[] = {
        {0x0, true, 0},  {0x1, false, 1}, {0x2, true, 0},  {0x3, false, 0},
        {0x4, false, 0}, {0x5, false, 0}, {0x6, false, 0}, {0x7, false, 2},
        {0x8, false, 0}, {0x9, false, 0}, {0xA, false, 1}, {0xB, false, 3},
    };
    for (size_t i = 0; i < sizeof rfc / sizeof rfc[0]; i++) {
        iw_rdmap_msg m;
        memset(&m, 0xEE, sizeof m);
        CHECK_EQ(iw_rdmap_msg_init(&m, rfc[i].op), 0);
        CHECK_EQ(m.opcode, rfc[i].op);
        CHECK_EQ(m.ddp.tagged, rfc[i].tagged);
        CHECK_EQ(m.ddp.qn, rfc[i].qn);
        CHECK(m.ddp.last && m.ddp.dv == IW_DDP_VERSION && m.rv == IW_RDMAP_VERSION);
        CHECK_EQ(m.ddp.msn, 0);
        CHECK_EQ(m.ddp.stag, 0);
        if (rfc[i].op == IW_OP_TERMINATE)
            continue; /* its Terminate Control needs a registered triple */
        m.ddp.msn = 1;
        if (rfc[i].op == IW_OP_ATOMIC_REQ)
            m.u.atomic_req.aopcode = IW_ATOMIC_FETCH_ADD;
        uint8_t seg[128];
        iw_ssize n = iw_rdmap_encode_hdr(seg, sizeof seg, &m);
        REQUIRE(n > 0);
        iw_rdmap_msg d;
        iw_verdict v;
        CHECK_EQ(iw_rdmap_decode(&d, seg, (size_t)n, &v), n);
        CHECK_EQ(v.kind, IW_VERDICT_OK);
    }
    for (unsigned op = 0xC; op <= 0xF; op++) {
        iw_rdmap_msg m;
        CHECK_EQ(iw_rdmap_msg_init(&m, op), IW_ERR_INVALID_ARG);
        CHECK_EQ(m.opcode, op);
        CHECK(!m.ddp.tagged && m.ddp.qn == 0);
    }
}

IW_TEST_MAIN("rdmap", IW_CASE(msg_init_every_opcode), IW_CASE(golden_decode_every_opcode),
             IW_CASE(golden_encode_every_opcode), IW_CASE(round_trip_random_fields),
             IW_CASE(terminate_copied_header_size), IW_CASE(terminate_mdr_combinations),
             IW_CASE(terminate_notes), IW_CASE(bad_ddp_version), IW_CASE(bad_qn),
             IW_CASE(bad_rdmap_version), IW_CASE(bad_opcode),
             IW_CASE(opcode_model_and_queue_mismatch), IW_CASE(truncated_headers),
             IW_CASE(fixed_size_messages), IW_CASE(atomic_aopcodes), IW_CASE(atomic_misaligned_to),
             IW_CASE(term_siw_layout), IW_CASE(check_order), IW_CASE(notes_reserved_fields),
             IW_CASE(segmented_control_messages), IW_CASE(opcode_names),
             IW_CASE(encode_invalid_arg), IW_CASE(refusal_leaves_buffer_untouched))
