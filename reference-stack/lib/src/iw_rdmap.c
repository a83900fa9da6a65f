/* SPDX-License-Identifier: GPL-2.0-or-later */
/* RDMAP messages over one DDP segment: RFC 5040 §4, RFC 7306 §4-6.
 *
 * iw_rdmap_decode applies the checks a receiver can make without state, in
 * the order it meets them. Each check raises its triple where it tests,
 * under the section that requires it. */
#include <iwarp/rdmap.h>

#include <string.h>

#include <iwarp/wire.h>

/* Per-opcode facts (RFC 5040 §4.2 Fig. 5, RFC 7306 §4): buffer model, queue,
 * the RDMAP header after the DDP header, and whether the message is exactly
 * that header (no ULP payload). */
typedef struct {
    bool tagged;
    uint8_t qn;
    uint8_t hdr_len;
    bool fixed;
    bool inv_stag; /* carries an Invalidate STag (§4.3) */
} rdmap_opinfo;

static const rdmap_opinfo rdmap_ops[12] = {
    [IW_OP_WRITE] = {true, 0, 0, false, false},
    [IW_OP_READ_REQ] = {false, IW_QN_READ_REQ, IW_RDMAP_READ_REQ_LEN, true, false},
    [IW_OP_READ_RESP] = {true, 0, 0, false, false},
    [IW_OP_SEND] = {false, IW_QN_SEND, 0, false, false},
    [IW_OP_SEND_INV] = {false, IW_QN_SEND, 0, false, true},
    [IW_OP_SEND_SE] = {false, IW_QN_SEND, 0, false, false},
    [IW_OP_SEND_SE_INV] = {false, IW_QN_SEND, 0, false, true},
    [IW_OP_TERMINATE] = {false, IW_QN_TERMINATE, IW_RDMAP_TERM_CTRL_LEN, false, false},
    [IW_OP_IMM] = {false, IW_QN_SEND, IW_RDMAP_IMM_LEN, true, false},
    [IW_OP_IMM_SE] = {false, IW_QN_SEND, IW_RDMAP_IMM_LEN, true, false},
    [IW_OP_ATOMIC_REQ] = {false, IW_QN_READ_REQ, IW_RDMAP_ATOMIC_REQ_LEN, true, false},
    [IW_OP_ATOMIC_RESP] = {false, IW_QN_ATOMIC_RESP, IW_RDMAP_ATOMIC_RESP_LEN, true, false},
};

int iw_rdmap_msg_init(iw_rdmap_msg *m, unsigned opcode) {
    memset(m, 0, sizeof *m);
    m->rv = IW_RDMAP_VERSION;
    m->opcode = (uint8_t)(opcode & IW_RDMAP_CTRL_OPCODE);
    m->ddp.dv = IW_DDP_VERSION;
    m->ddp.last = true;
    if (opcode >= sizeof rdmap_ops / sizeof rdmap_ops[0])
        return IW_ERR_INVALID_ARG; /* undefined: QN 0, untagged */
    m->ddp.tagged = rdmap_ops[opcode].tagged;
    m->ddp.qn = rdmap_ops[opcode].qn;
    return 0;
}

const char *iw_rdmap_opcode_str(unsigned opcode) {
    switch (opcode) {
#define IW_X_(name, val, text)                                                                     \
    case val:                                                                                      \
        return text;
        IW_RDMAP_OPCODE_LIST(IW_X_)
#undef IW_X_
    case 0xF:
        return "Reserved (Experimental)"; /* RFC 6580 §3.4 */
    default:
        return "Reserved";
    }
}

/* A segment too short for the header its own fields announce. RFC 5041
 * §6.2.2 makes invalid header fields fatal but RFC 6580 registers no code
 * for a truncated header, so we use Remote Operation / Unspecified. */
static iw_ssize rdmap_short(iw_verdict *v) {
    *v = iw_verdict_term(IW_TERM_RDMAP_OP_UNSPECIFIED, "RFC 5041 §6.2.2; RFC 5040 §7.2");
    return IW_ERR_PROTO;
}

static void rdmap_get_read_req(iw_rdmap_read_req *r, const uint8_t *p) {
    r->sink_stag = iw_get_u32(p);
    r->sink_to = iw_get_u64(p + 4);
    r->read_size = iw_get_u32(p + 12);
    r->src_stag = iw_get_u32(p + 16);
    r->src_to = iw_get_u64(p + 20);
}

/* Terminate Control as RFC 5040 §4.8 lays it out: Layer, EType, Error Code,
 * then M, D, R from the top bit of the third octet, 13 reserved bits. */
static void term_ctrl_rfc(iw_rdmap_term *t, const uint8_t *p) {
    t->layer = p[0] >> 4;
    t->etype = p[0] & 0xF;
    t->ecode = p[1];
    t->m = (p[2] & 0x80) != 0;
    t->d = (p[2] & 0x40) != 0;
    t->r = (p[2] & 0x20) != 0;
    t->rsvd = (uint16_t)((p[2] & 0x1F) << 8 | p[3]);
}

/* The same control as Linux siw sends it: its header declares the word as
 * a bitfield (layer:4, etype:4, ecode:8, flag_m:1, flag_d:1, flag_r:1,
 * reserved:13; drivers/infiniband/sw/siw/iwarp.h) that little-endian hosts
 * fill from the low bit of each octet, so Layer and EType swap nibbles and
 * M, D, R are the low bits of the third octet. The octets after it (segment
 * length, copied headers) are as the RFC has them. */
static void term_ctrl_siw(iw_rdmap_term *t, const uint8_t *p) {
    t->layer = p[0] & 0xF;
    t->etype = p[0] >> 4;
    t->ecode = p[1];
    t->m = (p[2] & 0x01) != 0;
    t->d = (p[2] & 0x02) != 0;
    t->r = (p[2] & 0x04) != 0;
    t->rsvd = (uint16_t)(p[2] >> 3 | p[3] << 5);
}

static bool term_ctrl_sane(const iw_rdmap_term *t) {
    return t->rsvd == 0 && iw_term_is_registered(IW_TERM_TRIPLE(t->layer, t->etype, t->ecode));
}

/* The sub-fields the M/D/R bits announce; a copied DDP header is sized by
 * its own T bit. Returns the octets used, or -1 if p is too short. */
static iw_ssize term_body(iw_rdmap_term *t, const uint8_t *p, size_t n) {
    size_t off = IW_RDMAP_TERM_CTRL_LEN;
    if (t->m || t->d) {
        if (n < off + 2)
            return -1;
        t->ddp_seg_len = iw_get_u16(p + off);
        off += 2;
    }
    if (t->d) {
        if (n < off + 1 || iw_ddp_decode_hdr(&t->ddp, p + off, n - off) < 0)
            return -1;
        t->ddp_raw = p + off;
        t->ddp_raw_len = iw_ddp_hdr_len(p[off]);
        off += t->ddp_raw_len;
    }
    if (t->r) {
        if (n < off + IW_RDMAP_READ_REQ_LEN)
            return -1;
        rdmap_get_read_req(&t->rreq, p + off);
        off += IW_RDMAP_READ_REQ_LEN;
    }
    return (iw_ssize)off;
}

static bool term_trailing(const uint8_t *p, size_t off, size_t n) {
    for (size_t i = off; i < n; i++)
        if (p[i])
            return true;
    return false;
}

/* Terminate header, RFC 5040 §4.8, as the RFC lays it out (receivers and
 * the conformance runner judge exactly this). Octets after the announced
 * sub-fields (senders that zero-fill the full layout, §7.1) are tolerated.
 * Linux siw's bit order is recognised separately (iw_rdmap_term_siw). */
static iw_ssize rdmap_decode_term(iw_rdmap_msg *m, const uint8_t *p, size_t n, iw_verdict *v) {
    iw_rdmap_term *t = &m->u.term;
    if (n < IW_RDMAP_TERM_CTRL_LEN)
        return rdmap_short(v);
    term_ctrl_rfc(t, p);
    t->raw = p;
    t->raw_len = n;
    if (t->rsvd)
        m->notes |= IW_NOTE(TERM_RSVD_BITS);
    if (!iw_term_is_registered(IW_TERM_TRIPLE(t->layer, t->etype, t->ecode)))
        m->notes |= IW_NOTE(TERM_UNREGISTERED);
    iw_ssize off = term_body(t, p, n);
    if (off < 0)
        return rdmap_short(v);
    if (term_trailing(p, (size_t)off, n))
        m->notes |= IW_NOTE(TERM_TRAILING);
    return 0;
}

bool iw_rdmap_term_siw(iw_rdmap_msg *m) {
    if (m->opcode != IW_OP_TERMINATE || !m->has_hdr || !m->u.term.raw || m->u.term.siw_layout ||
        term_ctrl_sane(&m->u.term))
        return false;
    const uint8_t *p = m->u.term.raw;
    size_t n = m->u.term.raw_len;
    iw_rdmap_term s;
    memset(&s, 0, sizeof s);
    term_ctrl_siw(&s, p);
    iw_ssize off;
    if (!term_ctrl_sane(&s) || (off = term_body(&s, p, n)) < 0)
        return false;
    s.siw_layout = true;
    s.raw = p;
    s.raw_len = n;
    m->u.term = s;
    m->notes &= ~(IW_NOTE(TERM_RSVD_BITS) | IW_NOTE(TERM_UNREGISTERED) | IW_NOTE(TERM_TRAILING));
    m->notes |= IW_NOTE(TERM_SIW_LAYOUT);
    if (term_trailing(p, (size_t)off, n))
        m->notes |= IW_NOTE(TERM_TRAILING);
    return true;
}

static void rdmap_decode_fixed(iw_rdmap_msg *m, const uint8_t *p) {
    switch (m->opcode) {
    case IW_OP_READ_REQ:
        rdmap_get_read_req(&m->u.read_req, p);
        break;
    case IW_OP_IMM:
    case IW_OP_IMM_SE:
        memcpy(m->u.imm, p, IW_RDMAP_IMM_LEN);
        break;
    case IW_OP_ATOMIC_REQ: {
        iw_rdmap_atomic_req *a = &m->u.atomic_req;
        uint32_t w0 = iw_get_u32(p);
        a->rsvd = w0 >> 4;
        a->aopcode = w0 & 0xF;
        a->req_id = iw_get_u32(p + 4);
        a->stag = iw_get_u32(p + 8);
        a->to = iw_get_u64(p + 12);
        a->add_swap = iw_get_u64(p + 20);
        a->add_swap_mask = iw_get_u64(p + 28);
        a->compare = iw_get_u64(p + 36);
        a->compare_mask = iw_get_u64(p + 44);
        if (a->rsvd)
            m->notes |= IW_NOTE(ATOMIC_RSVD_BITS);
        break;
    }
    case IW_OP_ATOMIC_RESP:
        m->u.atomic_resp.req_id = iw_get_u32(p);
        m->u.atomic_resp.orig = iw_get_u64(p + 4);
        break;
    default:
        break;
    }
}

/* Messages that are exactly their RDMAP header (Read Request, Immediate
 * Data, Atomic Request/Response). */
static iw_ssize rdmap_check_fixed(iw_rdmap_msg *m, const rdmap_opinfo *oi, const uint8_t *p,
                                  size_t n, iw_verdict *v) {
    uint64_t end = (uint64_t)m->ddp.mo + n; /* message octets through this segment */
    if (m->opcode == IW_OP_IMM || m->opcode == IW_OP_IMM_SE) {
        /* RFC 7306 §6.3: exactly 8 octets of Immediate Data. No code is
         * given; Remote Operation / Unspecified names the violation. */
        if (end > IW_RDMAP_IMM_LEN || (m->ddp.last && end != IW_RDMAP_IMM_LEN)) {
            *v = iw_verdict_term(IW_TERM_RDMAP_OP_UNSPECIFIED, "RFC 7306 §6.3");
            return IW_ERR_PROTO;
        }
    } else if (end > oi->hdr_len) {
        /* The QN 1 / QN 3 buffers hold exactly this header (RFC 5040
         * §5.2.2, RFC 7306 §5): anything longer overruns them. */
        *v = iw_verdict_term(IW_TERM_DDP_UT_TOO_LONG, "RFC 5041 §7.1; RFC 5040 §4.4");
        return IW_ERR_PROTO;
    }
    if (m->ddp.mo != 0 || !m->ddp.last) {
        /* Legal but rare: the header spans segments (RFC 5041 §5.2). */
        m->notes |= IW_NOTE(CONTROL_SEGMENTED);
        m->payload = p;
        m->payload_len = n;
        return 0;
    }
    if (n < oi->hdr_len)
        return rdmap_short(v);
    rdmap_decode_fixed(m, p);
    m->has_hdr = true;
    if (m->opcode == IW_OP_ATOMIC_REQ) {
        /* RFC 7306 §5.2.1 item 4: an unsupported AOpCode surfaces an error;
         * §1.1 names Remote Operation / Unexpected OpCode for it. */
        unsigned aop = m->u.atomic_req.aopcode;
        if (aop != IW_ATOMIC_FETCH_ADD && aop != IW_ATOMIC_CMP_SWAP) {
            *v = iw_verdict_term(IW_TERM_RDMAP_UNEXPECTED_OPCODE, "RFC 7306 §5.2.1");
            return IW_ERR_PROTO;
        }
        /* RFC 7306 §5.1.1/§5.1.2: the remote TO MUST be 64-bit aligned, and
         * §8.2 terminates a request that is not, whatever the STag's state.
         * Which Terminate goes out first depends on the receiver's state (a
         * bad STag is reported before the alignment), so the verdict is
         * deferred: certain that one comes, 0/2/0x07 unless a stateful check
         * fires first. */
        if (m->u.atomic_req.to & 7) {
            *v = iw_verdict_term(IW_TERM_RDMAP_CATASTROPHIC_STREAM,
                                 "RFC 7306 §8.2 (unless an STag check fires first)");
            m->deferred = true;
            return IW_ERR_PROTO;
        }
    }
    return 0;
}

iw_ssize iw_rdmap_decode(iw_rdmap_msg *m, const uint8_t *seg, size_t len, iw_verdict *v) {
    /* Field by field rather than one memset of the whole message: this runs
     * once per received segment, and the union only matters for the
     * opcodes that carry a header of their own (zeroed below). */
    m->rv = m->rsv = m->opcode = 0;
    m->has_hdr = false;
    m->deferred = false;
    m->payload = NULL;
    m->payload_len = 0;
    m->notes = 0;
    *v = iw_verdict_ok();
    m->seg_len = len;
    if (len < 1 || !(seg[0] & IW_DDP_CTRL_T)) /* tagged messages leave u unused */
        memset(&m->u, 0, sizeof m->u);
    if (len < 1 || iw_ddp_decode_hdr(&m->ddp, seg, len) < 0)
        return rdmap_short(v);
    const iw_ddp_hdr *h = &m->ddp;
    size_t hl = iw_ddp_hdr_len(seg[0]);
    if (h->rsvd)
        m->notes |= IW_NOTE(DDP_RSVD_BITS);
    m->rv = h->rsvd_ulp >> 6;
    m->rsv = (h->rsvd_ulp >> 4) & 0x3;
    m->opcode = h->rsvd_ulp & IW_RDMAP_CTRL_OPCODE;
    if (m->rsv)
        m->notes |= IW_NOTE(RDMAP_RSV_BITS);

    /* DDP first (RFC 5041 §4.1, §7.2): version, then the queue (§7.1 (1)). */
    if (h->dv != IW_DDP_VERSION) {
        *v = iw_verdict_term(h->tagged ? IW_TERM_DDP_T_INVALID_VERSION
                                       : IW_TERM_DDP_UT_INVALID_VERSION,
                             "RFC 5041 §4.1, §7.2");
        return IW_ERR_PROTO;
    }
    if (!h->tagged && h->qn > IW_QN_ATOMIC_RESP) {
        *v = iw_verdict_term(IW_TERM_DDP_UT_INVALID_QN, "RFC 5041 §7.1; RFC 5040 §3.1");
        return IW_ERR_PROTO;
    }
    /* Then RDMAP (RFC 5040 §7.2): version, opcode, opcode vs buffer model. */
    if (m->rv != IW_RDMAP_VERSION) {
        *v = iw_verdict_term(IW_TERM_RDMAP_INVALID_VERSION, "RFC 5040 §4.1, §7.2");
        return IW_ERR_PROTO;
    }
    if (m->opcode >= sizeof rdmap_ops / sizeof rdmap_ops[0]) {
        *v = iw_verdict_term(IW_TERM_RDMAP_UNEXPECTED_OPCODE, "RFC 5040 §4.2, §7.2");
        return IW_ERR_PROTO;
    }
    const rdmap_opinfo *oi = &rdmap_ops[m->opcode];
    if (oi->tagged != h->tagged || (!h->tagged && oi->qn != h->qn)) {
        /* Fig. 5 fixes each opcode's model and queue. */
        *v = iw_verdict_term(IW_TERM_RDMAP_UNEXPECTED_OPCODE, "RFC 5040 §4.2, §7.2");
        return IW_ERR_PROTO;
    }
    /* §4.3: Invalidate STag is ignored unless the opcode carries one. */
    if (!h->tagged && !oi->inv_stag && h->rsvd_ulp2)
        m->notes |= IW_NOTE(RDMAP_INV_STAG_NONZERO);

    const uint8_t *p = seg + hl;
    size_t n = len - hl;
    iw_ssize rc = 0;
    if (m->opcode == IW_OP_TERMINATE) {
        rc = rdmap_decode_term(m, p, n, v);
        m->has_hdr = rc == 0;
    } else if (oi->fixed) {
        rc = rdmap_check_fixed(m, oi, p, n, v);
    } else {
        m->payload = n ? p : NULL;
        m->payload_len = n;
    }
    return rc < 0 ? rc : (iw_ssize)len;
}

/* ---- encoders ---- */

static void rdmap_put_read_req(uint8_t *p, const iw_rdmap_read_req *r) {
    iw_put_u32(p, r->sink_stag);
    iw_put_u64(p + 4, r->sink_to);
    iw_put_u32(p + 12, r->read_size);
    iw_put_u32(p + 16, r->src_stag);
    iw_put_u64(p + 20, r->src_to);
}

iw_ssize iw_rdmap_encode_read_req(uint8_t *out, size_t outlen, const iw_rdmap_read_req *r) {
    if (outlen < IW_RDMAP_READ_REQ_LEN)
        return IW_ERR_NOBUF;
    rdmap_put_read_req(out, r);
    return IW_RDMAP_READ_REQ_LEN;
}

/* RFC 7306 §4.1: AOpCode is 4 bits, the reserved field 28. */
static bool rdmap_atomic_req_ok(const iw_rdmap_atomic_req *a) {
    return a->aopcode <= 0xF && a->rsvd <= 0x0FFFFFFF;
}

iw_ssize iw_rdmap_encode_atomic_req(uint8_t *out, size_t outlen, const iw_rdmap_atomic_req *a) {
    if (!rdmap_atomic_req_ok(a))
        return IW_ERR_INVALID_ARG;
    if (outlen < IW_RDMAP_ATOMIC_REQ_LEN)
        return IW_ERR_NOBUF;
    iw_put_u32(out, a->rsvd << 4 | a->aopcode);
    iw_put_u32(out + 4, a->req_id);
    iw_put_u32(out + 8, a->stag);
    iw_put_u64(out + 12, a->to);
    iw_put_u64(out + 20, a->add_swap);
    iw_put_u64(out + 28, a->add_swap_mask);
    iw_put_u64(out + 36, a->compare);
    iw_put_u64(out + 44, a->compare_mask);
    return IW_RDMAP_ATOMIC_REQ_LEN;
}

iw_ssize iw_rdmap_encode_atomic_resp(uint8_t *out, size_t outlen, const iw_rdmap_atomic_resp *a) {
    if (outlen < IW_RDMAP_ATOMIC_RESP_LEN)
        return IW_ERR_NOBUF;
    iw_put_u32(out, a->req_id);
    iw_put_u64(out + 4, a->orig);
    return IW_RDMAP_ATOMIC_RESP_LEN;
}

/* The Terminate header's length (RFC 5040 §4.8), or IW_ERR_INVALID_ARG for
 * fields that do not fit their bits or a copied DDP header not sized by its
 * own T bit. */
static iw_ssize rdmap_term_len(const iw_rdmap_term *t) {
    if (t->layer > 0xF || t->etype > 0xF || t->rsvd > 0x1FFF)
        return IW_ERR_INVALID_ARG;
    size_t ddp_len = 0;
    if (t->d) {
        if (!t->ddp_raw || t->ddp_raw_len < 1 || t->ddp_raw_len != iw_ddp_hdr_len(t->ddp_raw[0]))
            return IW_ERR_INVALID_ARG;
        ddp_len = t->ddp_raw_len;
    }
    return (iw_ssize)(IW_RDMAP_TERM_CTRL_LEN + ((t->m || t->d) ? 2 : 0) + ddp_len +
                      (t->r ? IW_RDMAP_READ_REQ_LEN : 0));
}

iw_ssize iw_rdmap_encode_term(uint8_t *out, size_t outlen, const iw_rdmap_term *t) {
    iw_ssize len = rdmap_term_len(t);
    if (len < 0)
        return len;
    size_t total = (size_t)len;
    if (outlen < total)
        return IW_ERR_NOBUF;
    out[1] = t->ecode;
    if (t->siw_layout) { /* Linux siw's bit order (term_ctrl_siw) */
        out[0] = (uint8_t)(t->etype << 4 | t->layer);
        out[2] = (uint8_t)((t->m ? 0x01 : 0) | (t->d ? 0x02 : 0) | (t->r ? 0x04 : 0) |
                           (t->rsvd & 0x1F) << 3);
        out[3] = (uint8_t)(t->rsvd >> 5);
    } else {
        out[0] = (uint8_t)(t->layer << 4 | t->etype);
        out[2] =
            (uint8_t)((t->m ? 0x80 : 0) | (t->d ? 0x40 : 0) | (t->r ? 0x20 : 0) | t->rsvd >> 8);
        out[3] = (uint8_t)t->rsvd;
    }
    size_t off = IW_RDMAP_TERM_CTRL_LEN;
    if (t->m || t->d) {
        iw_put_u16(out + off, t->ddp_seg_len);
        off += 2;
    }
    if (t->d) {
        memcpy(out + off, t->ddp_raw, t->ddp_raw_len);
        off += t->ddp_raw_len;
    }
    if (t->r) {
        rdmap_put_read_req(out + off, &t->rreq);
        off += IW_RDMAP_READ_REQ_LEN;
    }
    return off == total ? (iw_ssize)total : IW_ERR_FATAL;
}

/* The opcode's own header after DDP's (RFC 5040 §4.4-§4.8, RFC 7306 §4):
 * its length (0 when it has none), or IW_ERR_INVALID_ARG. */
static iw_ssize rdmap_opcode_hdr_len(const iw_rdmap_msg *m) {
    switch (m->opcode) {
    case IW_OP_READ_REQ:
        return IW_RDMAP_READ_REQ_LEN;
    case IW_OP_TERMINATE:
        return rdmap_term_len(&m->u.term);
    case IW_OP_IMM:
    case IW_OP_IMM_SE:
        return IW_RDMAP_IMM_LEN;
    case IW_OP_ATOMIC_REQ:
        return rdmap_atomic_req_ok(&m->u.atomic_req) ? IW_RDMAP_ATOMIC_REQ_LEN : IW_ERR_INVALID_ARG;
    case IW_OP_ATOMIC_RESP:
        return IW_RDMAP_ATOMIC_RESP_LEN;
    default:
        return 0;
    }
}

/* DDP header, the opcode's header and, with `payload`, a copy of
 * m->payload. Every argument and the whole length are checked before the
 * first write, so a refusal leaves out untouched (architecture.md). */
static iw_ssize rdmap_encode(uint8_t *out, size_t outlen, const iw_rdmap_msg *m, bool payload) {
    if (m->rv > 3 || m->rsv > 3 || m->opcode > 0xF)
        return IW_ERR_INVALID_ARG;
    iw_ddp_hdr h = m->ddp;
    h.rsvd_ulp = (uint8_t)(m->rv << 6 | m->rsv << 4 | m->opcode);
    uint8_t ddp[IW_DDP_UNTAGGED_HDR_LEN]; /* the longer of the two */
    iw_ssize hl = iw_ddp_encode_hdr(ddp, sizeof ddp, &h);
    if (hl < 0)
        return hl;
    iw_ssize rl = rdmap_opcode_hdr_len(m);
    if (rl < 0)
        return rl;
    size_t pl = payload ? m->payload_len : 0;
    if (pl && !m->payload)
        return IW_ERR_INVALID_ARG;
    size_t hdr = (size_t)hl + (size_t)rl;
    if (outlen < hdr || outlen - hdr < pl)
        return IW_ERR_NOBUF;
    memcpy(out, ddp, (size_t)hl);
    uint8_t *p = out + hl;
    size_t room = outlen - (size_t)hl;
    iw_ssize w = 0;
    switch (m->opcode) {
    case IW_OP_READ_REQ:
        w = iw_rdmap_encode_read_req(p, room, &m->u.read_req);
        break;
    case IW_OP_TERMINATE:
        w = iw_rdmap_encode_term(p, room, &m->u.term);
        break;
    case IW_OP_IMM:
    case IW_OP_IMM_SE:
        memcpy(p, m->u.imm, IW_RDMAP_IMM_LEN);
        w = IW_RDMAP_IMM_LEN;
        break;
    case IW_OP_ATOMIC_REQ:
        w = iw_rdmap_encode_atomic_req(p, room, &m->u.atomic_req);
        break;
    case IW_OP_ATOMIC_RESP:
        w = iw_rdmap_encode_atomic_resp(p, room, &m->u.atomic_resp);
        break;
    default:
        break;
    }
    if (w != rl) /* the exact advance (ngtcp2 habit) */
        return IW_ERR_FATAL;
    if (pl)
        memcpy(out + hdr, m->payload, pl);
    return (iw_ssize)(hdr + pl);
}

iw_ssize iw_rdmap_encode_hdr(uint8_t *out, size_t outlen, const iw_rdmap_msg *m) {
    return rdmap_encode(out, outlen, m, false);
}

iw_ssize iw_rdmap_encode(uint8_t *out, size_t outlen, const iw_rdmap_msg *m) {
    return rdmap_encode(out, outlen, m, true);
}

uint64_t iw_rdmap_atomic_result(const iw_rdmap_atomic_req *a, uint64_t orig) {
    if (a->aopcode != IW_ATOMIC_FETCH_ADD)
        return (a->compare ^ orig) & a->compare_mask
                   ? orig
                   : (orig & ~a->add_swap_mask) | (a->add_swap & a->add_swap_mask);
    uint64_t r = 0, carry = 0;
    for (int i = 0; i < 64; i++) {
        uint64_t x = orig >> i & 1, y = a->add_swap >> i & 1;
        r |= (x ^ y ^ carry) << i;
        carry = (x & y) | (x & carry) | (y & carry);
        if (a->add_swap_mask >> i & 1)
            carry = 0;
    }
    return r;
}
