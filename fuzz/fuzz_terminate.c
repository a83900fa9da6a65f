/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Terminate message, RFC 5040 §4.8 (layout) and RFC 6580 (triples).
 *
 * Input: the Terminate header that follows the DDP/RDMAP header. It is used
 * twice:
 *  1. as wire bytes after a valid untagged DDP header on QN 2. An
 *     independent model of §4.8 says how long the header must be (4 octets,
 *     +2 when M or D, + the copied DDP header sized by its own T bit when D,
 *     +28 when R): decoding fails exactly when the input is shorter, and
 *     then with Remote Operation / Unspecified (the library's documented
 *     choice). Decoded fields, notes and the triple's registry lookups must
 *     match the bytes (the RFC order). iw_rdmap_term_siw re-reads a control
 *     exactly when model_siw says (senseless as §4.8 lays it out, sane in
 *     Linux siw's bit order, its sub-fields present);
 *  2. as field values, wider than their bits, for iw_rdmap_encode_term:
 *     it refuses exactly the values that do not fit, and what it writes
 *     decodes back to the same fields. */
#include <iwarp/rdmap.h>

#include "fuzz.h"

/* DDP untagged header + RDMAP control for a Terminate (RFC 5040 §4.8: QN 2,
 * L = 1, MO 0). */
static size_t term_prefix(uint8_t *out, size_t outlen) {
    iw_ddp_hdr h = {.last = true,
                    .dv = IW_DDP_VERSION,
                    .rsvd_ulp = iw_rdmap_ctrl(IW_OP_TERMINATE),
                    .qn = IW_QN_TERMINATE,
                    .msn = 1};
    iw_ssize n = iw_ddp_encode_hdr(out, outlen, &h);
    FUZZ_CHECK(n == IW_DDP_UNTAGGED_HDR_LEN);
    return (size_t)n;
}

/* What §4.8 requires of body[0..len): the header length, or 0 if short.
 * mb/db/rb: where the M, D, R bits sit in the third octet. */
static size_t model_len_bits(const uint8_t *b, size_t len, uint8_t mb, uint8_t db, uint8_t rb) {
    size_t need = IW_RDMAP_TERM_CTRL_LEN;
    if (len < need)
        return 0;
    bool m = b[2] & mb, d = b[2] & db, r = b[2] & rb;
    if (m || d)
        need += 2;
    if (d) {
        if (len < need + 1)
            return 0;
        need += (b[need] & IW_DDP_CTRL_T) ? IW_DDP_TAGGED_HDR_LEN : IW_DDP_UNTAGGED_HDR_LEN;
    }
    if (r)
        need += IW_RDMAP_READ_REQ_LEN;
    return len < need ? 0 : need;
}

static size_t model_len(const uint8_t *b, size_t len) {
    return model_len_bits(b, len, 0x80, 0x40, 0x20);
}

/* Linux siw's order (drivers/infiniband/sw/siw/iwarp.h, a little-endian
 * bitfield): Layer in the low nibble of octet 0, EType in the high one,
 * M/D/R in bits 0/1/2 of octet 2, 13 reserved bits above. The decoder
 * takes it exactly when the RFC reading has an unregistered triple or
 * reserved bits set, siw's has neither, and siw's sub-fields are all there. */
static bool model_siw(const uint8_t *b, size_t len) {
    if (len < IW_RDMAP_TERM_CTRL_LEN)
        return false;
    bool rfc_sane = (b[2] & 0x1F) == 0 && b[3] == 0 &&
                    iw_term_is_registered(IW_TERM_TRIPLE(b[0] >> 4, b[0] & 0xF, b[1]));
    bool siw_sane = (b[2] >> 3) == 0 && b[3] == 0 &&
                    iw_term_is_registered(IW_TERM_TRIPLE(b[0] & 0xF, b[0] >> 4, b[1]));
    return !rfc_sane && siw_sane && model_len_bits(b, len, 0x01, 0x02, 0x04) != 0;
}

static void check_triple_lookups(const iw_rdmap_msg *m) {
    const iw_rdmap_term *t = &m->u.term;
    uint16_t triple = IW_TERM_TRIPLE(t->layer, t->etype, t->ecode);
    bool reg = iw_term_is_registered(triple);
    FUZZ_CHECK(iw_term_str(triple) != NULL);
    FUZZ_CHECK((iw_term_rfc(triple) != NULL) == reg);
    bool siw = t->siw_layout; /* then the reading siw's order made sane */
    FUZZ_CHECK(!siw || (reg && t->rsvd == 0));
    FUZZ_CHECK(((m->notes & IW_NOTE(TERM_SIW_LAYOUT)) != 0) == siw);
    FUZZ_CHECK(((m->notes & IW_NOTE(TERM_UNREGISTERED)) != 0) == !reg);
    FUZZ_CHECK(((m->notes & IW_NOTE(TERM_RSVD_BITS)) != 0) == (t->rsvd != 0));
}

static void check_same_term(const iw_rdmap_term *a, const iw_rdmap_term *b) {
    FUZZ_CHECK(a->layer == b->layer && a->etype == b->etype && a->ecode == b->ecode);
    FUZZ_CHECK(a->m == b->m && a->d == b->d && a->r == b->r && a->rsvd == b->rsvd);
    FUZZ_CHECK(!(a->m || a->d) || a->ddp_seg_len == b->ddp_seg_len);
    FUZZ_CHECK(a->d == (b->ddp_raw != NULL) && a->ddp_raw_len == b->ddp_raw_len);
    FUZZ_CHECK(!a->d || memcmp(a->ddp_raw, b->ddp_raw, a->ddp_raw_len) == 0);
    FUZZ_CHECK(!a->r ||
               (a->rreq.sink_stag == b->rreq.sink_stag && a->rreq.sink_to == b->rreq.sink_to &&
                a->rreq.read_size == b->rreq.read_size && a->rreq.src_stag == b->rreq.src_stag &&
                a->rreq.src_to == b->rreq.src_to));
}

static void decode_path(const uint8_t *body, size_t len) {
    uint8_t *seg = malloc(IW_DDP_UNTAGGED_HDR_LEN + len);
    FUZZ_CHECK(seg != NULL);
    size_t hl = term_prefix(seg, IW_DDP_UNTAGGED_HDR_LEN);
    if (len)
        memcpy(seg + hl, body, len);
    iw_rdmap_msg m;
    iw_verdict v;
    iw_ssize r = iw_rdmap_decode(&m, seg, hl + len, &v);
    size_t need = model_len(body, len);
    if (need == 0) {
        FUZZ_CHECK(r == IW_ERR_PROTO && v.kind == IW_VERDICT_TERM);
        FUZZ_CHECK(v.term == IW_TERM_RDMAP_OP_UNSPECIFIED);
        FUZZ_CHECK(!m.has_hdr);
        free(seg);
        return;
    }
    FUZZ_CHECK(r == (iw_ssize)(hl + len) && v.kind == IW_VERDICT_OK && m.has_hdr);
    const iw_rdmap_term *t = &m.u.term;
    FUZZ_CHECK(!t->siw_layout);
    FUZZ_CHECK(t->layer == body[0] >> 4 && t->etype == (body[0] & 0xF) && t->ecode == body[1]);
    check_triple_lookups(&m);
    if (t->d) {
        /* The copied header is where §4.8 puts it and decodes on its own. */
        size_t at = IW_RDMAP_TERM_CTRL_LEN + 2;
        iw_ddp_hdr h;
        FUZZ_CHECK(t->ddp_raw == seg + hl + at);
        FUZZ_CHECK(iw_ddp_decode_hdr(&h, t->ddp_raw, len - at) == (iw_ssize)t->ddp_raw_len);
        FUZZ_CHECK(h.tagged == t->ddp.tagged && h.stag == t->ddp.stag && h.to == t->ddp.to &&
                   h.qn == t->ddp.qn && h.msn == t->ddp.msn && h.mo == t->ddp.mo);
    }
    bool trailing = false;
    for (size_t i = need; i < len; i++)
        trailing |= body[i] != 0;
    FUZZ_CHECK(trailing == ((m.notes & IW_NOTE(TERM_TRAILING)) != 0));

    /* The encoder writes back exactly the announced fields. */
    uint8_t out[IW_RDMAP_TERM_CTRL_LEN + 2 + IW_DDP_UNTAGGED_HDR_LEN + IW_RDMAP_READ_REQ_LEN];
    FUZZ_CHECK(iw_rdmap_encode_term(out, sizeof out, t) == (iw_ssize)need);
    FUZZ_CHECK(memcmp(out, body, need) == 0);

    /* siw's order: re-read exactly when model_siw says, fields and notes to
     * match, and written back as it came. */
    bool siw = model_siw(body, len);
    FUZZ_CHECK(iw_rdmap_term_siw(&m) == siw);
    if (siw) {
        size_t sneed = model_len_bits(body, len, 0x01, 0x02, 0x04);
        FUZZ_CHECK(t->siw_layout && t->layer == (body[0] & 0xF) && t->etype == body[0] >> 4 &&
                   t->ecode == body[1]);
        check_triple_lookups(&m);
        bool strail = false;
        for (size_t i = sneed; i < len; i++)
            strail |= body[i] != 0;
        FUZZ_CHECK(strail == ((m.notes & IW_NOTE(TERM_TRAILING)) != 0));
        FUZZ_CHECK(iw_rdmap_encode_term(out, sizeof out, t) == (iw_ssize)sneed);
        FUZZ_CHECK(memcmp(out, body, sneed) == 0);
    }
    free(seg);
}

static uint64_t u64_of(fuzz_in *in) {
    uint64_t hi = fuzz_u32(in);
    return hi << 32 | fuzz_u32(in);
}

static void encode_path(const uint8_t *data, size_t size) {
    fuzz_in in = {data, size};
    iw_rdmap_term t = {0};
    t.layer = fuzz_u8(&in);
    t.etype = fuzz_u8(&in);
    t.ecode = fuzz_u8(&in);
    uint8_t bits = fuzz_u8(&in);
    t.m = bits & 0x80;
    t.d = bits & 0x40;
    t.r = bits & 0x20;
    t.siw_layout = bits & 0x10; /* written in Linux siw's bit order */
    t.rsvd = fuzz_u16(&in);
    t.ddp_seg_len = fuzz_u16(&in);
    t.ddp_raw_len = fuzz_u8(&in) % (IW_DDP_UNTAGGED_HDR_LEN + 1);
    if (in.n < t.ddp_raw_len)
        return;
    t.ddp_raw = t.ddp_raw_len ? in.p : NULL;
    in.p += t.ddp_raw_len;
    in.n -= t.ddp_raw_len;
    t.rreq.sink_stag = fuzz_u32(&in);
    t.rreq.sink_to = u64_of(&in);
    t.rreq.read_size = fuzz_u32(&in);
    t.rreq.src_stag = fuzz_u32(&in);
    t.rreq.src_to = u64_of(&in);

    bool fits = t.layer <= 0xF && t.etype <= 0xF && t.rsvd <= 0x1FFF &&
                (!t.d || (t.ddp_raw_len && t.ddp_raw_len == iw_ddp_hdr_len(t.ddp_raw[0])));
    uint8_t seg[IW_DDP_UNTAGGED_HDR_LEN + IW_RDMAP_TERM_CTRL_LEN + 2 + IW_DDP_UNTAGGED_HDR_LEN +
                IW_RDMAP_READ_REQ_LEN];
    size_t hl = term_prefix(seg, sizeof seg);
    iw_ssize w = iw_rdmap_encode_term(seg + hl, sizeof seg - hl, &t);
    if (!fits) {
        FUZZ_CHECK(w == IW_ERR_INVALID_ARG);
        return;
    }
    FUZZ_CHECK(w > 0 &&
               (size_t)w == (t.siw_layout ? model_len_bits(seg + hl, (size_t)w, 0x01, 0x02, 0x04)
                                          : model_len(seg + hl, (size_t)w)));
    /* Bytes read back in the order the decoder picks (model_siw); the
     * fields survive when that is the order they were written in. */
    bool dec_siw = model_siw(seg + hl, (size_t)w);

    iw_rdmap_msg m;
    iw_verdict v;
    iw_ssize dr = iw_rdmap_decode(&m, seg, hl + (size_t)w, &v);
    if (model_len(seg + hl, (size_t)w) == 0) { /* siw's order, too short read the RFC way */
        FUZZ_CHECK(t.siw_layout && dr == IW_ERR_PROTO);
        return;
    }
    FUZZ_CHECK(dr == (iw_ssize)hl + w && m.has_hdr);
    FUZZ_CHECK(iw_rdmap_term_siw(&m) == dec_siw);
    FUZZ_CHECK(dec_siw != t.siw_layout || (m.notes & IW_NOTE(TERM_TRAILING)) == 0);
    FUZZ_CHECK(m.u.term.siw_layout == dec_siw);
    if (!t.d) /* the decoder reports no copy when D is clear */
        t.ddp_raw_len = 0, t.ddp_raw = NULL;
    if (dec_siw == t.siw_layout)
        check_same_term(&t, &m.u.term);
    check_triple_lookups(&m);

    /* One octet short: refused before anything is written. */
    uint8_t small[sizeof seg];
    memset(small, 0xA5, sizeof small);
    FUZZ_CHECK(iw_rdmap_encode_term(small, (size_t)w - 1, &t) == IW_ERR_NOBUF);
    for (size_t i = 0; i < sizeof small; i++)
        FUZZ_CHECK(small[i] == 0xA5);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    decode_path(data, size);
    encode_path(data, size);
    return 0;
}
