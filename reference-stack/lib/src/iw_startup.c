/* SPDX-License-Identifier: GPL-2.0-or-later */
/* MPA startup: the Request/Reply exchange and what it negotiates (RFC 5044
 * §7.1, RFC 6581 §9). */
#include <string.h>

#include "iw_cq.h"
#include "iw_startup.h"
#include "iw_term.h"

static int startup_queue_rr(iw_conn *c, const iw_mpa_rr *rr) {
    iw_ssize n = iw_mpa_rr_encode(c->mpa_out, sizeof c->mpa_out, rr);
    if (n < 0)
        return (int)n;
    c->mpa_out_len = (size_t)n;
    c->mpa_out_off = 0;
    return 0;
}

int iw_startup_begin(iw_conn *c, iw_tstamp now) {
    c->state = IW_CONN_MPA;
    c->rx = RX_MPA;
    if (c->set.mpa_timeout)
        c->deadline = now + c->set.mpa_timeout;
    if (c->set.role == IW_ROLE_RESPONDER)
        return 0;
    iw_mpa_rr rr = {0};
    rr.type = IW_MPA_REQUEST;
    rr.m = c->set.markers;
    rr.c = c->set.crc;
    rr.rev = c->set.mpa_rev;
    if (c->set.mpa_rev >= IW_MPA_REV2) {
        rr.s = true;
        rr.v2.p2p = c->set.p2p;
        /* RFC 6581 §9.2: B/C/D only with A=1. */
        rr.v2.rtr_send = c->set.p2p && (c->set.rtr & IW_RTR_SEND);
        rr.v2.rtr_write = c->set.p2p && (c->set.rtr & IW_RTR_WRITE);
        rr.v2.rtr_read = c->set.p2p && (c->set.rtr & IW_RTR_READ);
        rr.v2.ird = c->set.ird;
        rr.v2.ord = c->set.ord;
    }
    rr.ulp_pd = c->set.private_data;
    rr.ulp_pd_len = c->set.private_data_len;
    return startup_queue_rr(c, &rr);
}

static void startup_set_framing(iw_conn *c, const iw_mpa_rr *peer) {
    /* RFC 5044 §7.1.1: M in a frame asks the *other* side for markers; C=1
     * in either frame turns CRCs on for both directions. */
    c->info.markers_rx = c->set.markers;
    c->info.markers_tx = peer->m;
    c->info.crc = c->set.crc || peer->c;
    c->rx_markers = c->info.markers_rx;
    c->tx_markers = c->info.markers_tx;
    c->rx_crc = c->tx_crc = c->info.crc;
    c->info.mpa_rev = peer->rev;
    c->info.mulpdu = iw_mpa_mulpdu(c->set.emss, c->tx_markers);
    c->info.peer_private_data_len = peer->ulp_pd_len;
    if (peer->ulp_pd_len)
        memcpy(c->info.peer_private_data, peer->ulp_pd, peer->ulp_pd_len);
}

static unsigned startup_rtr_bits(const iw_mpa_v2 *v) {
    return (v->rtr_send ? IW_RTR_SEND : 0) | (v->rtr_write ? IW_RTR_WRITE : 0) |
           (v->rtr_read ? IW_RTR_READ : 0);
}

/* RFC 5044 §7.1.2 rules 2 and 3: after a Reply with R=1 MPA exits on both
 * sides and the TCP stream is left to the ULP. */
static int startup_rejected(iw_conn *c) {
    c->state = IW_CONN_CLOSED;
    c->rx = RX_IDLE;
    c->closed_reported = true;
    iw_event ev = {.type = IW_EV_REJECTED,
                   .info = &c->info,
                   .close = IW_CLOSE_MPA_REJECTED,
                   .rfc = "RFC 5044 §7.1.2"};
    int rc = iw_cq_emit(c, &ev);
    /* Work posted before the reject completes, flushed (RFC 5040 §5.4). */
    int rf = iw_cq_flush(c, IW_WC_FLUSHED);
    return rc ? rc : rf;
}

static int startup_connected(iw_conn *c) {
    c->state = IW_CONN_RTS;
    c->deadline = 0;
    iw_event ev = {.type = IW_EV_CONNECTED, .info = &c->info};
    return iw_cq_emit(c, &ev);
}

/* Initiator: the RTR goes out first (RFC 6581 §5, §9.2). */
static int startup_queue_rtr(iw_conn *c, unsigned rtr) {
    tx_msg *t = iw_ring_push(&c->ctrl, &c->mem);
    if (!t)
        return IW_ERR_NOMEM;
    t->rtr = true;
    t->m.rv = IW_RDMAP_VERSION;
    t->m.ddp.dv = IW_DDP_VERSION;
    t->m.ddp.last = true;
    if (rtr == IW_RTR_WRITE) {
        /* Zero-length RDMA Write: STag/TO "MUST NOT be checked" (RFC 5041 §5.2). */
        t->m.opcode = IW_OP_WRITE;
        t->m.ddp.tagged = true;
    } else if (rtr == IW_RTR_READ) {
        /* Zero-length Read Request; answered by a zero-length Read Response
         * (RFC 5040 §5.2.1). */
        t->m.opcode = IW_OP_READ_REQ;
        t->m.ddp.qn = IW_QN_READ_REQ;
        ord_ent *o = iw_ring_push(&c->ord, &c->mem);
        if (!o)
            return IW_ERR_NOMEM;
        o->rtr = true;
    } else {
        t->m.opcode = IW_OP_SEND; /* consumes MSN 1 on QN 0 */
        t->m.ddp.qn = IW_QN_SEND;
    }
    return 0;
}

static int startup_reply_rx(iw_conn *c, const iw_mpa_rr *rr) {
    startup_set_framing(c, rr);
    c->info.enhanced = rr->enhanced && c->set.mpa_rev >= IW_MPA_REV2;
    if (c->info.enhanced) {
        /* RFC 6581 §9.1: the responder's IRD/ORD reach the ULP for both
         * MPA Accept and Reject. */
        c->info.peer_ird = rr->v2.ird;
        c->info.peer_ord = rr->v2.ord;
    }
    if (rr->r) {
        /* RFC 5044 §7.1.2 rule 3: exit MPA; the TCP stream is the ULP's. */
        return startup_rejected(c);
    }
    c->info.ird = c->set.ird;
    c->info.ord = c->set.ord;
    unsigned rtr = 0;
    bool ird_short = false;
    if (c->info.enhanced) {
        /* RFC 6581 §9.1: our IRD >= responder ORD, our ORD <= responder IRD;
         * 0x3FFF leaves ours unchanged. */
        if (rr->v2.ord != IW_MPA_V2_NO_NEG && rr->v2.ord > c->info.ird) {
            if (rr->v2.ord > c->set.ird_max)
                ird_short = true;
            else
                c->info.ird = rr->v2.ord;
        }
        if (rr->v2.ird != IW_MPA_V2_NO_NEG && c->info.ord > rr->v2.ird)
            c->info.ord = rr->v2.ird;
        if (c->set.p2p && rr->v2.p2p) {
            c->info.p2p = true;
            unsigned both = startup_rtr_bits(&rr->v2) & c->set.rtr;
            /* A Read RTR is a Read Request: with a responder IRD of 0 it
             * cannot be sent (RFC 5040 §6.1); §9.2 then wants another RTR
             * or TERM 2/0/7. */
            if (rr->v2.ird == 0)
                both &= ~IW_RTR_READ;
            /* RFC 6581 §1.1: the choice among several is ours. Prefer the
             * zero-length Write: it consumes no buffer at the responder. */
            rtr = (both & IW_RTR_WRITE)  ? IW_RTR_WRITE
                  : (both & IW_RTR_READ) ? IW_RTR_READ
                  : (both & IW_RTR_SEND) ? IW_RTR_SEND
                                         : 0;
            c->info.rtr = rtr;
        }
    }
    c->tx_allowed = true; /* the initiator sends first (RFC 5044 §7.1.2 rule 4) */
    iw_rx_start_fpdus(c);
    int rc = startup_connected(c);
    if (rc)
        return rc;
    if (ird_short)
        return iw_term_fail(c, IW_TERM_LLP_MPA_INSUFFICIENT_IRD, "RFC 6581 §9.1", NULL, 0, 0, NULL,
                            false);
    if (c->info.p2p && !rtr)
        return iw_term_fail(c, IW_TERM_LLP_MPA_NO_MATCHING_RTR, "RFC 6581 §9.2", NULL, 0, 0, NULL,
                            false);
    if (c->info.p2p)
        return startup_queue_rtr(c, rtr);
    return 0;
}

static int startup_request_rx(iw_conn *c, const iw_mpa_rr *rr) {
    startup_set_framing(c, rr);
    iw_mpa_rr rep = {0};
    rep.type = IW_MPA_REPLY;
    rep.m = c->set.markers;
    rep.c = c->set.crc;
    /* RFC 6581 §6, §10: answer Rev 1 / S=0 with an RFC 5044 Reply; a Rev 2
     * responder MUST still accept Rev 1 Requests. */
    rep.rev = rr->rev < c->set.mpa_rev ? rr->rev : c->set.mpa_rev;
    c->info.enhanced = rr->enhanced && c->set.mpa_rev >= IW_MPA_REV2;
    c->info.ird = c->set.ird;
    c->info.ord = c->set.ord;
    if (c->info.enhanced) {
        rep.s = true;
        c->info.peer_ird = rr->v2.ird;
        c->info.peer_ord = rr->v2.ord;
        /* RFC 6581 §9.1: our ORD <= initiator IRD; 0x3FFF means no
         * negotiation in that direction. */
        rep.v2.ird = c->info.ird;
        rep.v2.ord = c->info.ord;
        if (rr->v2.ird == IW_MPA_V2_NO_NEG)
            rep.v2.ord = IW_MPA_V2_NO_NEG;
        else if (c->info.ord > rr->v2.ird)
            rep.v2.ord = c->info.ord = rr->v2.ird;
        if (rr->v2.ord == IW_MPA_V2_NO_NEG)
            rep.v2.ird = IW_MPA_V2_NO_NEG;
        if (rr->v2.p2p) {
            /* §9.2: A=1 back, the requested RTRs we support, and at least one. */
            unsigned both = startup_rtr_bits(&rr->v2) & c->set.rtr;
            if (!both)
                both = c->set.rtr ? c->set.rtr : IW_RTR_WRITE;
            rep.v2.p2p = true;
            rep.v2.rtr_send = (both & IW_RTR_SEND) != 0;
            rep.v2.rtr_write = (both & IW_RTR_WRITE) != 0;
            rep.v2.rtr_read = (both & IW_RTR_READ) != 0;
            /* §9.1: offering the Read RTR, raise an IRD of 0 to 1 so the
             * zero-length Read can be accepted. */
            if ((both & IW_RTR_READ) && c->info.ird == 0) {
                c->info.ird = 1;
                if (rep.v2.ird == 0)
                    rep.v2.ird = 1;
            }
            c->info.p2p = true;
            c->info.rtr = both;
            c->rtr_pending_rx = true;
        }
    }
    rep.r = c->set.reject;
    rep.ulp_pd = c->set.private_data;
    rep.ulp_pd_len = c->set.private_data_len;
    int rc = startup_queue_rr(c, &rep);
    if (rc)
        return rc;
    if (c->set.reject) {
        /* RFC 5044 §7.1.2 rule 2: Reply with R=1, exit MPA, TCP stays open. */
        return startup_rejected(c);
    }
    iw_rx_start_fpdus(c);
    return startup_connected(c);
}

int iw_startup_rx(iw_conn *c) {
    iw_mpa_rr rr;
    iw_verdict v;
    iw_mpa_rr_type want = c->set.role == IW_ROLE_INITIATOR ? IW_MPA_REPLY : IW_MPA_REQUEST;
    iw_ssize n = iw_mpa_rr_decode(&rr, c->mpa_in, c->mpa_in_len, &v);
    if (n == IW_ERR_PROTO && v.close == IW_CLOSE_MPA_BAD_KEY &&
        iw_fault(c, IW_FAULT_ACCEPT_MPA_BAD_KEY)) {
        if (c->mpa_in_len < IW_MPA_KEY_LEN)
            return 0;
        memcpy(c->mpa_in, want == IW_MPA_REPLY ? IW_MPA_KEY_REP : IW_MPA_KEY_REQ, IW_MPA_KEY_LEN);
        n = iw_mpa_rr_decode(&rr, c->mpa_in, c->mpa_in_len, &v);
    }
    if (n == IW_ERR_PROTO && v.close == IW_CLOSE_MPA_BAD_REV &&
        iw_fault(c, IW_FAULT_ACCEPT_MPA_BAD_REV)) {
        c->mpa_in[17] = c->set.mpa_rev;
        n = iw_mpa_rr_decode(&rr, c->mpa_in, c->mpa_in_len, &v);
    }
    if (n == IW_ERR_NEED_MORE)
        return 0;
    if (n < 0)
        return iw_term_close(c, v.close);
    v = iw_mpa_rr_expect(&rr, want);
    if (v.kind != IW_VERDICT_OK)
        return iw_term_close(c, v.close);
    return want == IW_MPA_REPLY ? startup_reply_rx(c, &rr) : startup_request_rx(c, &rr);
}

/* RFC 6581 §9.2: the initiator "MUST generate one of the negotiated RTR
 * indications". A zero-length Send, Write or Read Request of a kind our
 * Reply did not offer is none of them: the two ends have no compatible RTR
 * option, which §8 codes as No matching RTR option (2/0/7). */
uint16_t iw_startup_rtr_verdict(const iw_conn *c, const iw_rdmap_msg *m, size_t pay) {
    unsigned kind = m->opcode == IW_OP_SEND && pay == 0                           ? IW_RTR_SEND
                    : m->opcode == IW_OP_WRITE && pay == 0                        ? IW_RTR_WRITE
                    : m->opcode == IW_OP_READ_REQ && m->u.read_req.read_size == 0 ? IW_RTR_READ
                                                                                  : 0;
    return kind && !(c->info.rtr & kind) ? IW_TERM_LLP_MPA_NO_MATCHING_RTR : 0;
}

void iw_startup_any_side_first(iw_conn *c) {
    if (c->state == IW_CONN_RTS && !c->rtr_pending_rx)
        c->tx_allowed = true;
}
