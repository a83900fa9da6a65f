/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Receive: MPA startup frames, then FPDUs taken apart in place.
 *
 * Each state names what the next octets are for (RX_HDR, RX_PAYLOAD, RX_PAD,
 * RX_CRC). rx_iov describes where they land: header octets in the
 * connection, payload at its final address (the region an STag/TO names, or
 * the posted buffer a QN/MSN/MO names), markers in a 4-octet slot. The CRC
 * is computed over the octets where they landed. A segment that fails a
 * check is drained instead of placed, and its Terminate is raised only once
 * its CRC has been judged, because RFC 5044 §6 makes the CRC the first
 * verdict on an FPDU. Placement is cut-through: payload that passed the
 * checks lands before the CRC arrives (as siw and hardware RNICs do); a bad
 * CRC then terminates the stream before that message can complete, so the
 * ULP never sees it (RFC 5041 §5.3: placement is not delivery). */
#include <string.h>

#include <iwarp/crc32c.h>

#include "iw_cq.h"
#include "iw_startup.h"
#include "iw_term.h"
#include <iwarp/wire.h>

enum { RXP_DATA = 1, RXP_MARKER };

static void rx_next_fpdu(iw_conn *c) {
    c->rx = RX_HDR;
    c->hdr_got = 0;
    c->hdr_need = IW_MPA_HDR_LEN;
    c->rx_crc_state = IW_CRC32C_INIT;
    c->fpdu_started = false;
    c->marker_bad = false;
    c->err_pending = false;
    c->err_rreq = false;
    c->pad_got = c->crc_got = 0;
    c->pay_done = 0;
    c->pay_final = NULL;
    c->pay_mr = (iw_mr_ref){0, 0};
    c->len_known = c->want_known = false;
}

static void rx_fail(iw_conn *c, uint16_t term, const char *rfc);

/* RFC 5042 §6.2.2: once the region a tagged segment is being placed into is
 * deregistered or invalidated, none of the segment's remaining octets may
 * land there. They are drained, and the segment is answered as one that
 * arrived after the revocation (RFC 5041 §7.1 tagged (1)). Checked before
 * each receive call hands out the region's address, and before staged
 * payload is placed. */
static void rx_recheck_region(iw_conn *c) {
    if (iw_rnic_ref_live(c->rnic, c->pay_mr))
        return;
    c->pay_mr = (iw_mr_ref){0, 0};
    bool pending = c->pay_final || (c->pay_dst && c->pay_left);
    if (c->pay_final)
        c->pay_final = NULL; /* staged in scratch: just never copied out */
    else
        c->pay_dst = NULL; /* the rest drains into scratch */
    if (pending)
        rx_fail(c, IW_TERM_DDP_T_INVALID_STAG, "RFC 5041 §7.1; RFC 5042 §6.2.2");
}

/* Where the octets of the current state go, and how many are still due. */
static uint8_t *rx_target(iw_conn *c, size_t *left, bool *payload) {
    *payload = false;
    switch (c->rx) {
    case RX_MPA: {
        size_t need = c->mpa_in_len < IW_MPA_RR_HDR_LEN
                          ? IW_MPA_RR_HDR_LEN
                          : IW_MPA_RR_HDR_LEN + (size_t)iw_get_u16(c->mpa_in + 18);
        /* RFC 5044 §7.1.1: PD_Length > 512 closes the connection; the fixed
         * header says so, so judge it at 20 octets, not after 512 more. */
        if (need > sizeof c->mpa_in)
            need = IW_MPA_RR_HDR_LEN;
        *left = need - c->mpa_in_len;
        return c->mpa_in + c->mpa_in_len;
    }
    case RX_HDR:
        *left = c->hdr_need - c->hdr_got;
        return c->hdr + c->hdr_got;
    case RX_PAYLOAD:
        if (c->pay_dst) {
            *payload = true;
            *left = c->pay_left;
            return c->pay_dst + c->pay_done;
        }
        *left = c->pay_left < RX_SCRATCH ? c->pay_left : RX_SCRATCH;
        return c->scratch;
    case RX_PAD:
        *left = iw_mpa_pad_len(c->ulpdu_len) - c->pad_got;
        return c->trailer + c->pad_got;
    case RX_CRC:
        *left = IW_MPA_CRC_LEN - c->crc_got;
        return c->trailer + 4 + c->crc_got;
    case RX_DRAIN:
        *left = RX_SCRATCH;
        return c->scratch;
    default:
        *left = 0;
        return NULL;
    }
}

static bool rx_in_fpdu(const iw_conn *c) {
    return c->rx == RX_HDR || c->rx == RX_PAYLOAD || c->rx == RX_PAD || c->rx == RX_CRC;
}

/* Building one rx_iov list: pieces so far and the wire position reached. */
typedef struct rx_list {
    int n, max;
    uint32_t pos;
    size_t mgot;   /* octets of a partial marker at pos already held (slot 0) */
    unsigned slot; /* next free marker slot */
} rx_list;

/* Append the pieces for len logical octets at t (state st), with a marker
 * piece wherever one falls due. Returns true when all len octets got a
 * piece. Each marker gets its own slot, so rx_commit can check every one
 * (RFC 5044 §4.2) and add it to the CRC (§4.4) after the read. */
static bool rx_list_run(iw_conn *c, rx_list *l, bool markers, uint8_t *t, size_t len, rx_state st) {
    while (l->n < l->max) {
        if (markers && (l->mgot || iw_mpa_marker_gap(l->pos) == 0)) {
            if (l->slot == RX_MARKER_SLOTS)
                return false;
            size_t k = IW_MPA_MARKER_LEN - l->mgot;
            c->pieces[l->n++] = (rx_piece){c->marker + l->slot * IW_MPA_MARKER_LEN + l->mgot, k,
                                           RXP_MARKER, (uint8_t)l->slot, 0};
            l->pos += (uint32_t)k;
            l->mgot = 0;
            l->slot++;
            continue;
        }
        if (len == 0)
            return true;
        size_t run = markers ? iw_mpa_marker_gap(l->pos) : len;
        if (run > len)
            run = len;
        c->pieces[l->n++] = (rx_piece){t, run, RXP_DATA, 0, (uint8_t)st};
        t += run;
        len -= run;
        l->pos += (uint32_t)run;
        if (len == 0)
            return true;
    }
    return false;
}

int iw_conn_rx_iov(iw_conn *c, iw_iovec *iov, int max) {
    if (iw_conn_busy(c))
        return IW_ERR_INVALID_ARG; /* called from a callback */
    rx_recheck_region(c);
    size_t left;
    bool payload;
    uint8_t *t = rx_target(c, &left, &payload);
    (void)payload;
    c->n_pieces = 0;
    if (!t)
        return 0;
    bool markers = c->rx_markers && rx_in_fpdu(c);
    rx_list l = {0, max > RX_PIECES ? RX_PIECES : max, c->rx_pos, c->marker_got, 0};
    /* Before its length is known, read a header as far as the smallest DDP
     * header (ULPDU_Length + 14 octets), so a tagged FPDU's header comes in
     * one read; rx_commit_data sorts out the rare ULPDU shorter than that. */
    if (c->rx == RX_HDR && !c->len_known && c->hdr_got < RX_HDR_AHEAD)
        left = RX_HDR_AHEAD - c->hdr_got;
    bool whole = rx_list_run(c, &l, markers, t, left, c->rx);
    /* Once the header is decoded the rest of the FPDU is known: its payload,
     * PAD and CRC, then the next FPDU's header as far as the smallest one:
     * one readv per tagged FPDU once the stream flows. */
    if (whole && c->rx == RX_PAYLOAD && c->pay_dst) {
        unsigned pad = iw_mpa_pad_len(c->ulpdu_len);
        whole = rx_list_run(c, &l, markers, c->trailer, pad, RX_PAD);
        if (whole)
            whole = rx_list_run(c, &l, markers, c->trailer + 4, IW_MPA_CRC_LEN, RX_CRC);
        if (whole)
            rx_list_run(c, &l, markers, c->hdr, RX_HDR_AHEAD, RX_HDR);
    }
    c->n_pieces = l.n;
    for (int i = 0; i < l.n; i++) {
        iov[i].base = c->pieces[i].base;
        iov[i].len = c->pieces[i].len;
    }
    return l.n;
}

/* ---- header: decode and validate (RFC 5041 §7.1, RFC 5040 §7.2) ---- */

static void rx_fail(iw_conn *c, uint16_t term, const char *rfc) {
    if (c->err_pending)
        return;
    c->err_pending = true;
    c->err_term = term;
    c->err_rfc = rfc;
}

/* How much of the ULPDU to gather as header: the DDP header, plus, for the
 * untagged control messages, the whole (small) message. */
static size_t rx_hdr_want(const iw_conn *c) {
    const uint8_t *seg = c->hdr + IW_MPA_HDR_LEN;
    if (c->ulpdu_len < 2)
        return c->ulpdu_len;
    if (seg[0] & IW_DDP_CTRL_T)
        return c->ulpdu_len < IW_DDP_TAGGED_HDR_LEN ? c->ulpdu_len : IW_DDP_TAGGED_HDR_LEN;
    unsigned op = seg[1] & IW_RDMAP_CTRL_OPCODE;
    size_t want = IW_DDP_UNTAGGED_HDR_LEN;
    if (op != IW_OP_SEND && op != IW_OP_SEND_INV && op != IW_OP_SEND_SE && op != IW_OP_SEND_SE_INV)
        want = RX_HDR_MAX;
    return c->ulpdu_len < want ? c->ulpdu_len : want;
}

static rq_ent *rx_rq_entry(iw_conn *c, uint32_t msn) { return iw_ring_at(&c->rq, msn - c->rq_msn); }

static void rx_set_payload(iw_conn *c, uint8_t *dst, size_t len) {
    c->pay_dst = dst;
    c->pay_left = len;
    c->pay_done = 0;
}

/* Where a validated segment's payload goes. RFC 5044 §6: with CRCs in use
 * an FPDU is verified before its ULPDU reaches DDP, so the payload is
 * staged and placed once the CRC holds (rx_fpdu_done). With cut_through it
 * goes straight to its final address (zero copy) before the CRC is known,
 * as siw and hardware RNICs do: a bad CRC then still terminates the stream
 * before the message completes, but the target may have changed. */
static void rx_place_at(iw_conn *c, uint8_t *dst, size_t pay, const iw_mr *mr) {
    c->pay_final = NULL;
    c->pay_mr = mr ? iw_rnic_mr_ref(c->rnic, mr) : (iw_mr_ref){0, 0};
    if (c->rx_crc && !c->set.cut_through && dst && pay) {
        c->pay_final = dst;
        dst = c->scratch; /* RX_SCRATCH holds any ULPDU's payload */
    }
    rx_set_payload(c, dst, pay);
}

static void rx_check_untagged_qn0(iw_conn *c, const iw_rdmap_msg *m, size_t pay) {
    /* RFC 6581 §9: a p2p responder's first FPDU may be the zero-length
     * Send RTR; it uses MSN 1 but no ULP buffer. */
    if (c->rtr_pending_rx && (c->info.rtr & IW_RTR_SEND) && m->opcode == IW_OP_SEND && pay == 0 &&
        m->ddp.msn == c->rq_msn && m->ddp.mo == 0 && m->ddp.last) {
        c->rtr_send_pending = true;
        return;
    }
    iw_place p = iw_place_untagged_msn(m->ddp.msn, c->rq_msn, c->rq.count);
    if (!p.ok)
        return rx_fail(c, p.term, p.rfc);
    rq_ent *r = rx_rq_entry(c, m->ddp.msn);
    if (r->done) /* its last segment came already */
        return rx_fail(c, IW_TERM_DDP_UT_MSN_RANGE, "RFC 5041 §7.1");
    p = iw_place_untagged_mo(r->buf, r->len, m->ddp.mo, (uint32_t)pay);
    if (!p.ok)
        return rx_fail(c, p.term, p.rfc);
    if (m->opcode == IW_OP_SEND_INV || m->opcode == IW_OP_SEND_SE_INV) {
        iw_place q = iw_place_invalidate(c->rnic, c->pd, m->ddp.rsvd_ulp2);
        if (!q.ok)
            return rx_fail(c, q.term, q.rfc);
    }
    rx_place_at(c, p.dst, pay, NULL);
}

static void rx_check_qn1(iw_conn *c, const iw_rdmap_msg *m) {
    /* Read and Atomic Requests share QN 1 and the IRD (RFC 7306 §4). */
    if (m->ddp.msn != c->qn1_msn)
        return rx_fail(c, IW_TERM_DDP_UT_MSN_RANGE, "RFC 5041 §7.1");
    /* RFC 5040 §6.1, RFC 5042 §6.4.3.3: no more than IRD outstanding; the
     * QN 1 buffer for this MSN does not exist: (2) "no buffer". */
    if (c->resp.count >= c->info.ird && !iw_fault(c, IW_FAULT_IRD_UNBOUNDED))
        return rx_fail(c, IW_TERM_DDP_UT_NO_BUFFER, "RFC 5040 §6.1; RFC 5041 §7.1");
}

static void rx_header(iw_conn *c) {
    const uint8_t *seg = c->hdr + IW_MPA_HDR_LEN;
    size_t seglen = c->hdr_got - IW_MPA_HDR_LEN;
    size_t pay = c->ulpdu_len - seglen; /* octets after what we gathered */
    iw_verdict v;
    iw_rdmap_msg *m = &c->rmsg;
    rx_set_payload(c, NULL, pay); /* drain unless a check below places it */
    c->pay_mr = (iw_mr_ref){0, 0};
    /* A deferred verdict (misaligned Atomic Request) is met again, in its
     * order, by iw_place_atomic after the MSN, IRD and STag checks. */
    if (iw_rdmap_decode(m, seg, seglen, &v) < 0 && !m->deferred)
        return rx_fail(c, v.term, v.rfc);
    bool fixed = m->opcode == IW_OP_READ_REQ || m->opcode == IW_OP_ATOMIC_REQ ||
                 m->opcode == IW_OP_ATOMIC_RESP || m->opcode == IW_OP_IMM ||
                 m->opcode == IW_OP_IMM_SE;
    /* We take control messages whole: one segment (RFC 5041 §5.2 allows
     * splitting them, but no MULPDU >= 128 ever needs to). */
    if (fixed && !m->has_hdr)
        return rx_fail(c, IW_TERM_RDMAP_OP_UNSPECIFIED, "RFC 5040 §4.4; RFC 7306 §5");
    switch (m->opcode) {
    case IW_OP_WRITE: {
        unsigned need = iw_fault(c, IW_FAULT_IGNORE_ACCESS) ? 0 : IW_ACCESS_REMOTE_WRITE;
        iw_place p = iw_place_tagged(c->rnic, c->pd, m->ddp.stag, m->ddp.to, pay, need);
        if (!p.ok && pay && iw_fault(c, IW_FAULT_PLACE_BEFORE_CHECK)) {
            iw_mr *mr = iw_rnic_mr(c->rnic, m->ddp.stag);
            if (mr && mr->len)
                mr->addr[0] = 0xFF; /* a write that lands before its check */
        }
        if (!p.ok)
            return rx_fail(c, p.term, p.rfc);
        rx_place_at(c, p.dst, pay, p.mr);
        return;
    }
    case IW_OP_READ_RESP: {
        /* A Read Response answers our oldest outstanding Read (RFC 5040
         * §5.5 rule 20) and may only land in the sink it named. */
        ord_ent *o = c->ord.count ? iw_ring_at(&c->ord, 0) : NULL;
        if (!o || o->atomic)
            return rx_fail(c, IW_TERM_RDMAP_UNEXPECTED_OPCODE, "RFC 5040 §5.2, §7.2");
        iw_place s =
            iw_place_read_resp(m->ddp.stag, m->ddp.to, pay, o->sink_stag, o->sink_to, o->size);
        if (!s.ok)
            return rx_fail(c, s.term, s.rfc);
        /* The sink is our own region, advertised for this Read: local write
         * suffices, and remote write (what iWARP verbs ask of read sinks)
         * does too. */
        const iw_mr *mr = iw_rnic_mr(c->rnic, m->ddp.stag);
        unsigned need = mr && (mr->access & IW_ACCESS_REMOTE_WRITE) ? IW_ACCESS_REMOTE_WRITE
                                                                    : IW_ACCESS_LOCAL_WRITE;
        iw_place p = iw_place_tagged(c->rnic, c->pd, m->ddp.stag, m->ddp.to, pay, need);
        if (!p.ok)
            return rx_fail(c, p.term, p.rfc);
        rx_place_at(c, p.dst, pay, p.mr);
        return;
    }
    case IW_OP_SEND:
    case IW_OP_SEND_INV:
    case IW_OP_SEND_SE:
    case IW_OP_SEND_SE_INV:
    case IW_OP_IMM:
    case IW_OP_IMM_SE:
        return rx_check_untagged_qn0(c, m, pay);
    case IW_OP_READ_REQ:
    case IW_OP_ATOMIC_REQ:
        return rx_check_qn1(c, m);
    case IW_OP_ATOMIC_RESP: {
        ord_ent *o = c->ord.count ? iw_ring_at(&c->ord, 0) : NULL;
        if (m->ddp.msn != c->qn3_msn)
            return rx_fail(c, IW_TERM_DDP_UT_MSN_RANGE, "RFC 5041 §7.1");
        if (!o || !o->atomic)
            return rx_fail(c, IW_TERM_RDMAP_UNEXPECTED_OPCODE, "RFC 7306 §5");
        return;
    }
    case IW_OP_TERMINATE:
        if (m->ddp.msn != c->qn2_msn)
            return rx_fail(c, IW_TERM_DDP_UT_MSN_RANGE, "RFC 5041 §7.1");
        return;
    default:
        return rx_fail(c, IW_TERM_RDMAP_UNEXPECTED_OPCODE, "RFC 5040 §7.2");
    }
}

/* ---- completion of an FPDU whose CRC held ---- */

static int rx_deliver_recvs(iw_conn *c) {
    /* RFC 5041 §5.4: delivery in MSN order, once the message is complete. */
    while (c->rq.count) {
        rq_ent *r = iw_ring_at(&c->rq, 0);
        if (!r->done)
            break;
        iw_event ev = {.type = IW_EV_RECV,
                       .wr_id = r->wr_id,
                       .len = r->msg_len,
                       .msn = c->rq_msn,
                       .solicited = r->solicited,
                       .has_inv = r->has_inv,
                       .inv_stag = r->inv_stag,
                       .has_imm = r->has_imm};
        memcpy(ev.imm, r->imm, sizeof ev.imm);
        iw_ring_pop(&c->rq);
        c->rq_msn++;
        int rc = iw_cq_emit(c, &ev);
        if (rc)
            return rc;
    }
    return 0;
}

static int rx_complete_send(iw_conn *c, const iw_rdmap_msg *m, size_t pay) {
    if (c->rtr_send_pending) {
        c->rtr_send_pending = false;
        c->rq_msn++;
        return 0;
    }
    if (!m->ddp.last)
        return 0;
    rq_ent *r = rx_rq_entry(c, m->ddp.msn);
    r->done = true;
    r->msg_len = m->ddp.mo + (uint32_t)pay; /* RFC 5041 §5.4 */
    r->solicited =
        m->opcode == IW_OP_SEND_SE || m->opcode == IW_OP_SEND_SE_INV || m->opcode == IW_OP_IMM_SE;
    if (m->opcode == IW_OP_IMM || m->opcode == IW_OP_IMM_SE) {
        r->has_imm = true;
        memcpy(r->imm, m->u.imm, IW_RDMAP_IMM_LEN);
    }
    if (m->opcode == IW_OP_SEND_INV || m->opcode == IW_OP_SEND_SE_INV) {
        /* RFC 5040 §5.3: invalidate before the Send is delivered. */
        iw_mr *mr = iw_rnic_mr(c->rnic, m->ddp.rsvd_ulp2);
        if (mr && !iw_fault(c, IW_FAULT_NO_REMOTE_INVALIDATE))
            iw_rnic_mr_invalidate(c->rnic, mr);
        r->has_inv = true;
        r->inv_stag = m->ddp.rsvd_ulp2;
    }
    return rx_deliver_recvs(c);
}

/* A delivered QN 1 request (Read or Atomic) failed its checks: Terminate,
 * or with IW_FAULT_SKIP drop it unanswered. */
static int rx_qn1_failed(iw_conn *c, const iw_place *p, const uint8_t *seg, const uint8_t *rreq) {
    if (iw_fault_skip(c, p->term)) {
        c->qn1_msn++;
        return 0;
    }
    return iw_term_fail(c, p->term, p->rfc, seg, IW_DDP_UNTAGGED_HDR_LEN, c->ulpdu_len, rreq, true);
}

/* A response to a delivered QN 1 request, queued in arrival order
 * (RFC 5040 §5.5 rule 20, RFC 7306 §5). */
static tx_msg *rx_push_resp(iw_conn *c, unsigned opcode) {
    tx_msg *t = iw_ring_push(&c->resp, &c->mem);
    if (t) {
        t->m.opcode = (uint8_t)opcode;
        t->m.rv = IW_RDMAP_VERSION;
        t->m.ddp.dv = IW_DDP_VERSION;
    }
    return t;
}

static int rx_complete_read_req(iw_conn *c, const iw_rdmap_msg *m, const uint8_t *seg) {
    const iw_rdmap_read_req *rr = &m->u.read_req;
    /* RFC 5040 §5.2.1: validated once delivered; size 0 is not validated. */
    iw_place p = iw_place_read_src(c->rnic, c->pd, rr->src_stag, rr->src_to, rr->read_size);
    if (!p.ok) /* RFC 5040 §7.1 rule 3: with the Read Request header */
        return rx_qn1_failed(c, &p, seg, seg + IW_DDP_UNTAGGED_HDR_LEN);
    c->qn1_msn++;
    tx_msg *t = rx_push_resp(c, IW_OP_READ_RESP);
    if (!t)
        return IW_ERR_NOMEM;
    t->m.ddp.tagged = true;
    t->m.ddp.stag = rr->sink_stag; /* copied without interpretation (§4.4) */
    t->m.ddp.to = rr->sink_to;
    t->data = p.dst;
    t->src = p.mr ? iw_rnic_mr_ref(c->rnic, p.mr) : (iw_mr_ref){0, 0};
    t->len = rr->read_size;
    memcpy(t->req_hdr, seg, sizeof t->req_hdr);
    t->req_seg_len = c->ulpdu_len;
    return 0;
}

static int rx_complete_atomic_req(iw_conn *c, const iw_rdmap_msg *m, const uint8_t *seg) {
    const iw_rdmap_atomic_req *a = &m->u.atomic_req;
    iw_place p = iw_place_atomic(c->rnic, c->pd, a->stag, a->to);
    if (!p.ok) /* RFC 7306 §8.1: DDP header, no RDMA header */
        return rx_qn1_failed(c, &p, seg, NULL);
    uint64_t orig;
    memcpy(&orig, p.dst, 8); /* the target holds a host-order 64-bit value */
    uint64_t val = iw_rdmap_atomic_result(a, orig);
    memcpy(p.dst, &val, 8);
    c->qn1_msn++;
    tx_msg *t = rx_push_resp(c, IW_OP_ATOMIC_RESP);
    if (!t)
        return IW_ERR_NOMEM;
    t->m.ddp.last = true;
    t->m.ddp.qn = IW_QN_ATOMIC_RESP;
    t->m.ddp.msn = c->tx_msn_atomic_resp++;
    t->m.u.atomic_resp.req_id = a->req_id;
    t->m.u.atomic_resp.orig = orig;
    return 0;
}

static int rx_complete_term(iw_conn *c, const iw_rdmap_msg *m) {
    const iw_rdmap_term *t = &m->u.term;
    iw_event ev = {.type = IW_EV_TERM_RECEIVED};
    ev.term.triple = IW_TERM_TRIPLE(t->layer, t->etype, t->ecode);
    ev.term.m = t->m;
    ev.term.d = t->d;
    ev.term.r = t->r;
    ev.term.ddp_seg_len = t->ddp_seg_len;
    if (t->d && t->ddp_raw_len <= sizeof ev.term.hdr) {
        memcpy(ev.term.hdr, t->ddp_raw, t->ddp_raw_len);
        ev.term.hdr_len = t->ddp_raw_len;
    }
    c->qn2_msn++;
    /* RFC 5040 §5.4: the stream is over; we stop sending too. */
    c->state = IW_CONN_TERMINATE;
    c->term_queued = true;
    c->ctrl.count = c->ctrl.head = 0;
    if (c->tx.active && c->tx.src == TXQ_CTRL)
        c->tx.src = TXQ_NONE;
    c->rx = RX_DRAIN;
    int rc = iw_cq_emit(c, &ev);
    int rf = iw_cq_flush(c, IW_WC_REMOTE_ERROR);
    return rc ? rc : rf;
}

/* The Terminate for the FPDU just received; with IW_FAULT_SKIP for this
 * triple the segment is dropped silently instead and the stream goes on. */
static int rx_terminate(iw_conn *c, uint16_t triple, const char *rfc, const uint8_t *ddp, size_t dl,
                        const uint8_t *rreq, bool with_hdr) {
    if (iw_fault_skip(c, triple)) {
        rx_next_fpdu(c);
        return 0;
    }
    return iw_term_fail(c, triple, rfc, ddp, dl, c->ulpdu_len, rreq, with_hdr);
}

static int rx_fpdu_done(iw_conn *c) {
    c->stats.fpdus_rx++;
    rx_recheck_region(c);
    const uint8_t *seg = c->hdr + IW_MPA_HDR_LEN;
    size_t seglen = c->hdr_got - IW_MPA_HDR_LEN;
    /* RFC 5044 §6: the CRC is the first verdict on an FPDU. */
    if (c->rx_crc && !iw_fault(c, IW_FAULT_ACCEPT_BAD_CRC) &&
        (uint32_t)~c->rx_crc_state != iw_crc32c_get(c->trailer + 4))
        return rx_terminate(c, IW_TERM_LLP_MPA_CRC, "RFC 5044 §4.4, §8", NULL, 0, NULL, false);
    if (c->marker_bad)
        return rx_terminate(c, IW_TERM_LLP_MPA_MARKER, "RFC 5044 §4.2, §8", NULL, 0, NULL, false);
    uint16_t rtr_bad =
        c->rtr_pending_rx ? iw_startup_rtr_verdict(c, &c->rmsg, c->ulpdu_len - seglen) : 0;
    if (rtr_bad)
        return rx_terminate(c, rtr_bad, "RFC 6581 §9.2", NULL, 0, NULL, false);
    if (c->err_pending) {
        /* Fig. 10: DDP and RDMAP remote errors copy the offending DDP header,
         * sized by its own T bit, zero-filled if the segment was shorter. */
        uint8_t ddp[IW_DDP_UNTAGGED_HDR_LEN] = {0};
        size_t dl = seglen ? iw_ddp_hdr_len(seg[0]) : IW_DDP_UNTAGGED_HDR_LEN;
        memcpy(ddp, seg, seglen < dl ? seglen : dl);
        bool with = iw_term_layer(c->err_term) != 0x2 &&
                    !(iw_term_layer(c->err_term) == 0 && iw_term_etype(c->err_term) == 0);
        return rx_terminate(c, c->err_term, c->err_rfc, ddp, dl, NULL, with);
    }
    if (c->pay_final) { /* staged: the FPDU is verified, now it may land */
        memcpy(c->pay_final, c->scratch, c->pay_done);
        c->stats.payload_copies += c->pay_done;
        c->pay_final = NULL;
    }
    /* RFC 5044 §7.1.2 rule 4: the responder may send once it has a valid FPDU. */
    c->tx_allowed = true;
    c->rtr_pending_rx = false;
    const iw_rdmap_msg *m = &c->rmsg;
    size_t pay = c->ulpdu_len - seglen;
    c->stats.bytes_placed += c->pay_dst ? pay : 0;
    int rc = 0;
    switch (m->opcode) {
    case IW_OP_WRITE:
        break; /* no completion at the data sink (RFC 5040 §5.1) */
    case IW_OP_READ_RESP:
        if (m->ddp.last) {
            ord_ent o = *(ord_ent *)iw_ring_at(&c->ord, 0);
            iw_ring_pop(&c->ord);
            c->ord_outstanding--;
            if (!o.rtr) /* RFC 5040 §5.5 rules 15, 19 */
                rc = iw_cq_complete(c, o.cq_seq, IW_WC_SUCCESS, o.size, 0);
        }
        break;
    case IW_OP_SEND:
    case IW_OP_SEND_INV:
    case IW_OP_SEND_SE:
    case IW_OP_SEND_SE_INV:
    case IW_OP_IMM:
    case IW_OP_IMM_SE:
        rc = rx_complete_send(c, m, pay);
        break;
    case IW_OP_READ_REQ:
        rc = rx_complete_read_req(c, m, seg);
        break;
    case IW_OP_ATOMIC_REQ:
        rc = rx_complete_atomic_req(c, m, seg);
        break;
    case IW_OP_ATOMIC_RESP: {
        ord_ent o = *(ord_ent *)iw_ring_at(&c->ord, 0);
        iw_ring_pop(&c->ord);
        c->ord_outstanding--;
        c->qn3_msn++;
        /* RFC 7306 §5.4 rule 7, RFC 5040 §5.5 rule 15 */
        rc = iw_cq_complete(c, o.cq_seq, IW_WC_SUCCESS, 0, m->u.atomic_resp.orig);
        break;
    }
    case IW_OP_TERMINATE:
        return rx_complete_term(c, m);
    default:
        break;
    }
    if (c->rx != RX_DRAIN && c->state != IW_CONN_CLOSED)
        rx_next_fpdu(c);
    return rc;
}

/* The current state's target is full: move on. */
static int rx_step(iw_conn *c) {
    for (;;) {
        switch (c->rx) {
        case RX_MPA:
            return iw_startup_rx(c);
        case RX_HDR:
            /* Three gathers: ULPDU_Length; the first 14 octets of the
             * ULPDU; then the rest of the header those imply. */
            if (!c->len_known) {
                c->len_known = true;
                c->ulpdu_len = iw_get_u16(c->hdr);
                /* Every DDP header has at least 14 octets (RFC 5041 §4.2,
                 * §4.3): gather that much at once, never past the ULPDU. */
                c->hdr_need = IW_MPA_HDR_LEN + (c->ulpdu_len < IW_DDP_TAGGED_HDR_LEN
                                                    ? c->ulpdu_len
                                                    : (size_t)IW_DDP_TAGGED_HDR_LEN);
                if (c->hdr_need > c->hdr_got)
                    return 0;
            }
            if (!c->want_known) {
                c->want_known = true;
                c->hdr_need = IW_MPA_HDR_LEN + rx_hdr_want(c);
                if (c->hdr_need > c->hdr_got)
                    return 0;
            }
            rx_header(c);
            c->rx = RX_PAYLOAD;
            continue;
        case RX_PAYLOAD:
            if (c->pay_left)
                return 0;
            c->rx = RX_PAD;
            continue;
        case RX_PAD:
            if (iw_mpa_pad_len(c->ulpdu_len) > c->pad_got)
                return 0;
            c->rx = RX_CRC;
            continue;
        case RX_CRC:
            if (c->crc_got < IW_MPA_CRC_LEN)
                return 0;
            return rx_fpdu_done(c);
        default:
            return 0;
        }
    }
}

static void rx_marker_done(iw_conn *c, uint32_t mpos, const uint8_t *marker) {
    /* RFC 5044 §4.2: FPDUPTR (low 2 bits treated as 0) points back to this
     * FPDU's ULPDU_Length; a marker before the header must be 0. */
    uint16_t res, raw;
    iw_mpa_marker_decode(marker, &res, &raw);
    uint16_t ptr = iw_mpa_marker_ptr(raw);
    uint32_t want = c->fpdu_started ? mpos - c->fpdu_hdr_pos : 0;
    if (ptr != want)
        c->marker_bad = true;
}

/* n data octets of one piece arrived at `at`. They are taken in the exact
 * steps the state machine asks for (so a ULPDU_Length is judged as soon as
 * its 2 octets are in). Octets read ahead under a guess that did not hold
 * (a header read past a ULPDU shorter than any DDP header) are moved to
 * where the state machine wants them; on a valid stream that never happens,
 * and payload only ever lands at its final address. */
static int rx_commit_data(iw_conn *c, uint8_t *at, size_t n) {
    while (n) {
        if (c->rx == RX_DRAIN || c->rx == RX_IDLE)
            return 0; /* dropped (RFC 5041 §7.1) */
        size_t left;
        bool payload;
        uint8_t *t = rx_target(c, &left, &payload);
        if (!t || left == 0)
            return 0;
        size_t k = n < left ? n : left;
        if (t != at) {
            memmove(t, at, k);
            if (payload)
                c->stats.payload_copies += k;
        }
        if (c->rx != RX_MPA) {
            if (c->rx == RX_HDR && c->hdr_got == 0) {
                c->fpdu_started = true;
                c->fpdu_hdr_pos = c->rx_pos;
            }
            if (c->rx != RX_CRC)
                c->rx_crc_state = iw_crc32c_update(c->rx_crc_state, t, k);
        }
        c->rx_pos += (uint32_t)k;
        switch (c->rx) {
        case RX_MPA:
            c->mpa_in_len += k;
            break;
        case RX_HDR:
            c->hdr_got += k;
            break;
        case RX_PAYLOAD:
            c->pay_left -= k;
            if (c->pay_dst)
                c->pay_done += (uint32_t)k;
            break;
        case RX_PAD:
            c->pad_got += k;
            break;
        case RX_CRC:
            c->crc_got += k;
            break;
        default:
            break;
        }
        at += k;
        n -= k;
        if (k == left) {
            int rc = rx_step(c);
            if (rc)
                return rc;
        }
    }
    return 0;
}

int iw_conn_rx_commit(iw_conn *c, size_t n, iw_tstamp now) {
    if (iw_conn_busy(c))
        return IW_ERR_INVALID_ARG; /* called from a callback */
    (void)now;
    size_t listed = 0;
    for (int i = 0; i < c->n_pieces; i++)
        listed += c->pieces[i].len;
    if (n > listed)
        return IW_ERR_INVALID_ARG; /* more than rx_iov asked for */
    c->stats.bytes_rx += n;
    int np = c->n_pieces;
    c->n_pieces = 0;
    for (int i = 0; i < np && n; i++) {
        rx_piece *p = &c->pieces[i];
        size_t take = n < p->len ? n : p->len;
        n -= take;
        if (c->rx == RX_DRAIN || c->rx == RX_IDLE)
            continue;
        if (p->kind == RXP_MARKER) {
            uint32_t mpos = c->rx_pos - (uint32_t)c->marker_got;
            /* §4.4: covered by the CRC unless the CRC field has begun. */
            if (!(c->rx == RX_CRC && c->crc_got))
                c->rx_crc_state = iw_crc32c_update(c->rx_crc_state, p->base, take);
            c->marker_got += take;
            c->rx_pos += (uint32_t)take;
            uint8_t *m = c->marker + p->slot * IW_MPA_MARKER_LEN;
            if (c->marker_got == IW_MPA_MARKER_LEN) {
                c->marker_got = 0;
                rx_marker_done(c, mpos, m);
            }
            if (take < p->len) {
                /* The read stopped inside this marker: keep its octets in
                 * slot 0, where the next rx_iov continues it. */
                memmove(c->marker, m, c->marker_got);
                break;
            }
            continue;
        }
        int rc = rx_commit_data(c, p->base, take);
        if (rc)
            return rc;
        if (take < p->len)
            break;
    }
    return 0;
}

/* Whole-FPDU fast path for the copying form: when an entire FPDU with no
 * marker inside lies in the input, take it apart in one pass through the
 * same header, validation and completion steps the piecewise path uses
 * (rx_header, rx_fpdu_done), so both give the same verdicts. Returns the
 * octets used, or 0 to let the piecewise path handle it. */
static size_t rx_fast_fpdu(iw_conn *c, const uint8_t *in, size_t len) {
    if (c->rx != RX_HDR || c->hdr_got || c->marker_got || len < IW_MPA_HDR_LEN + 2)
        return 0;
    uint16_t ulpdu = iw_get_u16(in);
    size_t total = IW_MPA_HDR_LEN + (size_t)ulpdu + iw_mpa_pad_len(ulpdu) + IW_MPA_CRC_LEN;
    if (len < total || ulpdu < 2)
        return 0;
    if (c->rx_markers && iw_mpa_marker_gap(c->rx_pos) < total)
        return 0; /* a marker falls inside: the piecewise path steers it */
    c->fpdu_started = true;
    c->fpdu_hdr_pos = c->rx_pos;
    c->ulpdu_len = ulpdu;
    c->len_known = c->want_known = true;
    memcpy(c->hdr, in, IW_MPA_HDR_LEN + 2);
    c->hdr_got = IW_MPA_HDR_LEN + 2;
    size_t want = rx_hdr_want(c);
    memcpy(c->hdr, in, IW_MPA_HDR_LEN + want);
    c->hdr_got = c->hdr_need = IW_MPA_HDR_LEN + want;
    rx_header(c);
    if (c->pay_final) { /* the CRC is checked below, before any copy */
        c->pay_dst = c->pay_final;
        c->pay_final = NULL;
    }
    const uint8_t *pay = in + c->hdr_got;
    /* RFC 5044 §6: the whole FPDU is here, so verify it before DDP places
     * anything (rx_fpdu_done then raises the CRC error). */
    if (c->rx_crc) {
        /* From the state so far: a leading marker may have come alone in an
         * earlier read and is covered too (RFC 5044 §4.4). */
        c->rx_crc_state = iw_crc32c_update(c->rx_crc_state, in, total - IW_MPA_CRC_LEN);
        if ((uint32_t)~c->rx_crc_state != iw_crc32c_get(in + total - IW_MPA_CRC_LEN) &&
            !iw_fault(c, IW_FAULT_ACCEPT_BAD_CRC))
            c->pay_dst = NULL;
    }
    if (c->pay_dst && c->pay_left) {
        memcpy(c->pay_dst, pay, c->pay_left);
        c->stats.payload_copies += c->pay_left;
        c->pay_done = (uint32_t)c->pay_left;
    }
    c->pay_left = 0;
    unsigned pad = iw_mpa_pad_len(ulpdu);
    memcpy(c->trailer, pay + (ulpdu + IW_MPA_HDR_LEN - c->hdr_got), pad + IW_MPA_CRC_LEN);
    memcpy(c->trailer + 4, in + total - IW_MPA_CRC_LEN, IW_MPA_CRC_LEN);
    c->pad_got = pad;
    c->crc_got = IW_MPA_CRC_LEN;
    c->rx_pos += (uint32_t)total;
    c->stats.bytes_rx += total;
    c->rx = RX_CRC;
    c->n_pieces = 0;
    return total;
}

iw_ssize iw_conn_recv(iw_conn *c, const uint8_t *in, size_t len, iw_tstamp now) {
    if (iw_conn_busy(c))
        return IW_ERR_INVALID_ARG; /* called from a callback */
    size_t used = 0;
    iw_iovec iov[RX_PIECES];
    while (used < len) {
        if (c->rx == RX_IDLE)
            return (iw_ssize)len; /* nothing more is read on this stream */
        size_t fast = rx_fast_fpdu(c, in + used, len - used);
        if (fast) {
            used += fast;
            int rc = rx_fpdu_done(c);
            if (rc)
                return rc;
            continue;
        }
        int n = iw_conn_rx_iov(c, iov, RX_PIECES);
        if (n <= 0)
            return (iw_ssize)len;
        size_t got = 0;
        for (int i = 0; i < n && used < len; i++) {
            size_t k = iov[i].len < len - used ? iov[i].len : len - used;
            memcpy(iov[i].base, in + used, k);
            if (c->pay_dst && c->pieces[i].kind == RXP_DATA && c->pieces[i].state == RX_PAYLOAD)
                c->stats.payload_copies += k;
            used += k;
            got += k;
            if (k < iov[i].len)
                break;
        }
        int rc = iw_conn_rx_commit(c, got, now);
        if (rc)
            return rc;
    }
    return (iw_ssize)used;
}
