/* Connection lifecycle: MPA startup (RFC 5044 §7.1, RFC 6581 §9), work
 * requests, completions, Terminate generation (RFC 5040 §7.1), close. */
#include <string.h>

#include "iw_conn_int.h"
#include "iw_wire.h"

/* ---- ring ---- */

void *iw_ring_at(const iw_ring *r, uint32_t i) {
    return r->items + (size_t)((r->head + i) % r->cap) * r->item_size;
}

void *iw_ring_push(iw_ring *r, const iw_mem *mem) {
    if (r->count == r->cap) {
        uint32_t ncap = r->cap ? r->cap * 2 : 16;
        uint8_t *n = mem->malloc((size_t)ncap * r->item_size, mem->user);
        if (!n)
            return NULL;
        for (uint32_t i = 0; i < r->count; i++)
            memcpy(n + (size_t)i * r->item_size, iw_ring_at(r, i), r->item_size);
        mem->free(r->items, mem->user);
        r->items = n;
        r->cap = ncap;
        r->head = 0;
    }
    void *p = r->items + (size_t)((r->head + r->count) % r->cap) * r->item_size;
    r->count++;
    memset(p, 0, r->item_size);
    return p;
}

void iw_ring_pop(iw_ring *r) {
    if (!r->count)
        return;
    r->head = (r->head + 1) % r->cap;
    r->count--;
}

void iw_ring_free(iw_ring *r, const iw_mem *mem) {
    mem->free(r->items, mem->user);
    r->items = NULL;
    r->cap = r->count = r->head = 0;
}

/* ---- settings, creation ---- */

void iw_conn_settings_default(iw_conn_settings *s, iw_role role) {
    memset(s, 0, sizeof *s);
    s->role = role;
    s->mpa_rev = IW_MPA_REV2;
    s->crc = true; /* RFC 5044 §4.4: CRCs MUST be the default */
    s->ird = s->ord = 16;
    s->ird_max = 128;
    s->rtr = IW_RTR_WRITE | IW_RTR_READ | IW_RTR_SEND;
    s->emss = 1460;
    s->mpa_timeout = 10ull * 1000 * 1000 * 1000;
}

int iw_conn_new(iw_conn **out, iw_rnic *rnic, uint32_t pd, const iw_conn_settings *s,
                const iw_callbacks *cb, void *user) {
    if (!out || !rnic || !s || !cb || cb->version < IW_CALLBACKS_V1 || !cb->on_event ||
        (s->role != IW_ROLE_INITIATOR && s->role != IW_ROLE_RESPONDER) ||
        (s->mpa_rev != IW_MPA_REV1 && s->mpa_rev != IW_MPA_REV2) ||
        (s->p2p && s->mpa_rev < IW_MPA_REV2) || /* RFC 6581 enhanced data takes 4 of the 512 octets (RFC 5044 §7.1.1) */
        s->private_data_len > IW_MPA_PD_MAX - (s->mpa_rev >= IW_MPA_REV2 ? 4 : 0) ||
        (s->private_data_len && !s->private_data) || s->ird > IW_MPA_V2_NO_NEG ||
        s->ord > IW_MPA_V2_NO_NEG)
        return IW_ERR_INVALID_ARG;
    const iw_mem *mem = &rnic->mem;
    iw_conn *c = mem->calloc(1, sizeof *c, mem->user);
    if (!c)
        return IW_ERR_NOMEM;
    c->scratch = mem->malloc(RX_SCRATCH, mem->user);
    if (!c->scratch || iw_rnic_pd_ref(rnic, pd) < 0) {
        int rc = c->scratch ? IW_ERR_INVALID_ARG : IW_ERR_NOMEM; /* before c is freed */
        mem->free(c->scratch, mem->user);
        mem->free(c, mem->user);
        return rc;
    }
    c->rnic = rnic;
    c->mem = *mem;
    c->pd = pd;
    c->set = *s;
    if (!c->set.emss)
        c->set.emss = 1460;
    if (s->private_data_len)
        memcpy(c->pd_copy, s->private_data, s->private_data_len);
    c->set.private_data = c->pd_copy;
    c->cb = *cb;
    c->user = user;
    c->state = IW_CONN_IDLE;
    c->rx = RX_IDLE;
    c->rq.item_size = sizeof(rq_ent);
    c->ord.item_size = sizeof(ord_ent);
    c->resp.item_size = sizeof(tx_msg);
    c->sq.item_size = sizeof(tx_msg);
    c->cq.item_size = sizeof(cq_ent);
    c->ctrl.item_size = sizeof(tx_msg);
    /* RFC 5041 §4.3: every queue's MSN starts at 1. */
    c->rq_msn = c->qn1_msn = c->qn2_msn = c->qn3_msn = 1;
    c->tx_msn_send = c->tx_msn_read = c->tx_msn_term = c->tx_msn_atomic_resp = 1;
    iw_tx_init(c);
    *out = c;
    return 0;
}

void iw_conn_del(iw_conn *c) {
    if (!c)
        return;
    iw_rnic_pd_unref(c->rnic, c->pd);
    iw_ring_free(&c->rq, &c->mem);
    iw_ring_free(&c->ord, &c->mem);
    iw_ring_free(&c->resp, &c->mem);
    iw_ring_free(&c->sq, &c->mem);
    iw_ring_free(&c->cq, &c->mem);
    iw_ring_free(&c->ctrl, &c->mem);
    c->mem.free(c->scratch, c->mem.user);
    c->mem.free(c, c->mem.user);
}

iw_conn_state iw_conn_get_state(const iw_conn *c) { return c->state; }
const iw_conn_info *iw_conn_get_info(const iw_conn *c) { return &c->info; }
void iw_conn_get_stats(const iw_conn *c, iw_conn_stats *out) { *out = c->stats; }

int iw_conn_emit(iw_conn *c, iw_event *ev) {
    return c->cb.on_event(c, ev, c->user) ? IW_ERR_CALLBACK : 0;
}

/* ---- MPA startup ---- */

static int conn_queue_rr(iw_conn *c, const iw_mpa_rr *rr) {
    iw_ssize n = iw_mpa_rr_encode(c->mpa_out, sizeof c->mpa_out, rr);
    if (n < 0)
        return (int)n;
    c->mpa_out_len = (size_t)n;
    c->mpa_out_off = 0;
    return 0;
}

int iw_conn_start(iw_conn *c, iw_tstamp now) {
    if (c->state != IW_CONN_IDLE)
        return IW_ERR_INVALID_ARG;
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
    return conn_queue_rr(c, &rr);
}

static void conn_set_framing(iw_conn *c, const iw_mpa_rr *peer) {
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

static unsigned conn_rtr_bits(const iw_mpa_v2 *v) {
    return (v->rtr_send ? IW_RTR_SEND : 0) | (v->rtr_write ? IW_RTR_WRITE : 0) |
           (v->rtr_read ? IW_RTR_READ : 0);
}

/* RFC 5044 §7.1.2 rules 2 and 3: after a Reply with R=1 MPA exits on both
 * sides and the TCP stream is left to the ULP. */
static int conn_rejected(iw_conn *c) {
    c->state = IW_CONN_CLOSED;
    c->rx = RX_IDLE;
    c->closed_reported = true;
    iw_event ev = {.type = IW_EV_REJECTED, .info = &c->info, .close = IW_CLOSE_MPA_REJECTED,
                   .rfc = "RFC 5044 §7.1.2"};
    int rc = iw_conn_emit(c, &ev);
    /* Work posted before the reject completes, flushed (RFC 5040 §5.4). */
    int rf = iw_conn_flush(c, IW_WC_FLUSHED);
    return rc ? rc : rf;
}

static int conn_connected(iw_conn *c) {
    c->state = IW_CONN_RTS;
    c->deadline = 0;
    iw_event ev = {.type = IW_EV_CONNECTED, .info = &c->info};
    return iw_conn_emit(c, &ev);
}

/* Initiator: the RTR goes out first (RFC 6581 §5, §9.2). */
static int conn_queue_rtr(iw_conn *c, unsigned rtr) {
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

static int conn_mpa_reply_rx(iw_conn *c, const iw_mpa_rr *rr) {
    conn_set_framing(c, rr);
    c->info.enhanced = rr->enhanced && c->set.mpa_rev >= IW_MPA_REV2;
    if (c->info.enhanced) {
        /* RFC 6581 §9.1: the responder's IRD/ORD reach the ULP for both
         * MPA Accept and Reject. */
        c->info.peer_ird = rr->v2.ird;
        c->info.peer_ord = rr->v2.ord;
    }
    if (rr->r) {
        /* RFC 5044 §7.1.2 rule 3: exit MPA; the TCP stream is the ULP's. */
        return conn_rejected(c);
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
            unsigned both = conn_rtr_bits(&rr->v2) & c->set.rtr;
            /* A Read RTR is a Read Request: with a responder IRD of 0 it
             * cannot be sent (RFC 5040 §6.1); §9.2 then wants another RTR
             * or TERM 2/0/7. */
            if (rr->v2.ird == 0)
                both &= ~IW_RTR_READ;
            /* RFC 6581 §1.1: the choice among several is ours. Prefer the
             * zero-length Write: it consumes no buffer at the responder. */
            rtr = (both & IW_RTR_WRITE) ? IW_RTR_WRITE
                  : (both & IW_RTR_READ) ? IW_RTR_READ
                  : (both & IW_RTR_SEND) ? IW_RTR_SEND : 0;
            c->info.rtr = rtr;
        }
    }
    c->tx_allowed = true; /* the initiator sends first (RFC 5044 §7.1.2 rule 4) */
    iw_rx_start_fpdus(c);
    int rc = conn_connected(c);
    if (rc)
        return rc;
    if (ird_short)
        return iw_conn_fail_terminate(c, IW_TERM_LLP_MPA_INSUFFICIENT_IRD, "RFC 6581 §9.1", NULL,
                                      0, 0, NULL, false);
    if (c->info.p2p && !rtr)
        return iw_conn_fail_terminate(c, IW_TERM_LLP_MPA_NO_MATCHING_RTR, "RFC 6581 §9.2", NULL,
                                      0, 0, NULL, false);
    if (c->info.p2p)
        return conn_queue_rtr(c, rtr);
    return 0;
}

static int conn_mpa_request_rx(iw_conn *c, const iw_mpa_rr *rr) {
    conn_set_framing(c, rr);
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
            unsigned both = conn_rtr_bits(&rr->v2) & c->set.rtr;
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
    int rc = conn_queue_rr(c, &rep);
    if (rc)
        return rc;
    if (c->set.reject) {
        /* RFC 5044 §7.1.2 rule 2: Reply with R=1, exit MPA, TCP stays open. */
        return conn_rejected(c);
    }
    iw_rx_start_fpdus(c);
    return conn_connected(c);
}

int iw_conn_mpa_rx(iw_conn *c) {
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
        return iw_conn_close_with(c, v.close);
    v = iw_mpa_rr_expect(&rr, want);
    if (v.kind != IW_VERDICT_OK)
        return iw_conn_close_with(c, v.close);
    return want == IW_MPA_REPLY ? conn_mpa_reply_rx(c, &rr) : conn_mpa_request_rx(c, &rr);
}

/* ---- Terminate (RFC 5040 §5.4, §7.1) and close ---- */

int iw_conn_fail_terminate(iw_conn *c, uint16_t triple, const char *rfc, const uint8_t *ddp_hdr,
                           size_t ddp_len, uint16_t seg_len, const uint8_t *rreq, bool with_hdr) {
    /* §7.1 rule 4: the first error is the one reported. */
    if (c->term_queued || c->state == IW_CONN_CLOSED || iw_fault_skip(c, triple))
        return 0;
    if (iw_fault(c, IW_FAULT_MISCODE) && c->set.faults.miscode_triple == triple)
        triple = (uint16_t)((triple & 0xFF00) | ((triple + 1) & 0xFF));
    if (iw_fault(c, IW_FAULT_NO_HDR_COPY))
        with_hdr = false;
    if (iw_fault(c, IW_FAULT_BAD_SEG_LEN))
        seg_len++;
    c->term_rfc = rfc;
    iw_term_info *t = &c->term_out;
    memset(t, 0, sizeof *t);
    t->triple = triple;
    /* Fig. 10: DDP and Remote Operation/Protection errors carry the DDP
     * Segment Length and header; LLP and local catastrophic ones do not.
     * Remote Protection errors on a Read Request also carry its header. */
    if (with_hdr && ddp_hdr && ddp_len) {
        t->m = t->d = true;
        t->ddp_seg_len = seg_len;
        memcpy(t->hdr, ddp_hdr, ddp_len);
        t->hdr_len = ddp_len;
        if (rreq) {
            t->r = true;
            memcpy(t->hdr + ddp_len, rreq, IW_RDMAP_READ_REQ_LEN);
            t->hdr_len += IW_RDMAP_READ_REQ_LEN;
        }
    }
    c->term_queued = true;
    c->state = IW_CONN_TERMINATE;
    /* RFC 5041 §7.1: drop every later incoming segment. */
    c->rx = RX_DRAIN;
    tx_msg *m = iw_ring_push(&c->ctrl, &c->mem);
    if (!m)
        return IW_ERR_NOMEM;
    m->m.opcode = IW_OP_TERMINATE;
    m->m.rv = IW_RDMAP_VERSION;
    m->m.ddp.dv = IW_DDP_VERSION;
    m->m.ddp.last = true;
    m->m.ddp.qn = IW_QN_TERMINATE;
    m->m.ddp.msn = c->tx_msn_term++;
    iw_rdmap_term *th = &m->m.u.term;
    th->layer = (uint8_t)iw_term_layer(triple);
    th->etype = (uint8_t)iw_term_etype(triple);
    if (iw_fault(c, IW_FAULT_SWAP_NIBBLES)) {
        th->layer = (uint8_t)iw_term_etype(triple);
        th->etype = (uint8_t)iw_term_layer(triple);
    }
    th->ecode = (uint8_t)iw_term_ecode(triple);
    th->m = t->m;
    th->d = t->d;
    th->r = t->r;
    th->ddp_seg_len = t->ddp_seg_len;
    th->ddp_raw = t->d ? t->hdr : NULL;
    th->ddp_raw_len = t->d ? ddp_len : 0;
    if (t->r) {
        /* The copied Read Request header goes back exactly as received. */
        th->rreq.sink_stag = iw_get_u32(rreq);
        th->rreq.sink_to = iw_get_u64(rreq + 4);
        th->rreq.read_size = iw_get_u32(rreq + 12);
        th->rreq.src_stag = iw_get_u32(rreq + 16);
        th->rreq.src_to = iw_get_u64(rreq + 20);
    }
    return iw_conn_flush(c, IW_WC_FLUSHED);
}

/* Report finished work requests from the head of the completion queue:
 * RFC 5040 §5.5 rule 15, operations complete in submission order. */
static int conn_cq_drain(iw_conn *c) {
    while (c->cq.count) {
        cq_ent e = *(cq_ent *)iw_ring_at(&c->cq, 0);
        if (!e.done)
            break;
        iw_ring_pop(&c->cq);
        c->cq_seq++;
        iw_event ev = {.type = e.type, .status = e.status, .wr_id = e.wr_id, .len = e.len,
                       .atomic_orig = e.atomic_orig};
        int rc = iw_conn_emit(c, &ev);
        if (rc)
            return rc;
    }
    return 0;
}

static cq_ent *conn_cq_pending(iw_conn *c, uint32_t seq) {
    uint32_t i = seq - c->cq_seq;
    if (i >= c->cq.count)
        return NULL;
    cq_ent *e = iw_ring_at(&c->cq, i);
    return e->done ? NULL : e;
}

void iw_conn_mark_done(iw_conn *c, uint32_t seq, iw_wc_status st) {
    cq_ent *e = conn_cq_pending(c, seq);
    if (e) {
        e->done = true;
        e->status = st;
    }
}

int iw_conn_complete(iw_conn *c, uint32_t seq, iw_wc_status st, uint32_t len, uint64_t orig) {
    cq_ent *e = conn_cq_pending(c, seq);
    if (!e)
        return 0;
    e->done = true;
    e->status = st;
    e->len = len;
    e->atomic_orig = orig;
    return conn_cq_drain(c);
}

int iw_conn_flush(iw_conn *c, iw_wc_status st) {
    /* Operations not yet given to DDP complete in error (RFC 5040 §5.4),
     * still in submission order (§5.5 rule 15). An FPDU half written to
     * the LLP finishes going out, but its message is no longer queued. */
    if (c->tx.active && (c->tx.src == TXQ_SQ || c->tx.src == TXQ_RESP))
        c->tx.src = TXQ_NONE;
    c->sq.count = c->sq.head = 0;
    c->ord.count = c->ord.head = 0;
    for (uint32_t i = 0; i < c->cq.count; i++) {
        cq_ent *e = iw_ring_at(&c->cq, i);
        if (!e->done) {
            e->done = true;
            e->status = st;
        }
    }
    /* Everything is flushed even if a callback fails; the first failure
     * is what the engine call returns (IW_ERR_CALLBACK). conn_cq_drain
     * stops at a failing callback after popping its entry, so it is called
     * again until the queue is empty: at most once per entry queued now
     * (one more to see it empty), so no callback can keep it looping. */
    int rc = 0;
    for (uint32_t left = c->cq.count + 1; left; left--) {
        int e = conn_cq_drain(c);
        if (!rc)
            rc = e;
        if (!e)
            break;
    }
    while (c->rq.count) {
        rq_ent *r = iw_ring_at(&c->rq, 0);
        iw_event ev = {.type = IW_EV_RECV, .status = st, .wr_id = r->wr_id};
        iw_ring_pop(&c->rq);
        int e = iw_conn_emit(c, &ev);
        if (!rc)
            rc = e;
    }
    c->resp.count = 0;
    c->resp.head = 0;
    return rc;
}

int iw_conn_close_with(iw_conn *c, iw_close_reason why) {
    if (c->state == IW_CONN_CLOSED)
        return 0;
    c->state = IW_CONN_CLOSED;
    c->mpa_out_off = c->mpa_out_len; /* a closed stream sends nothing more */
    c->rx = RX_IDLE;
    int rc = iw_conn_flush(c, IW_WC_FLUSHED);
    if (c->closed_reported)
        return rc;
    c->closed_reported = true;
    iw_event ev = {.type = IW_EV_CLOSED, .close = why, .rfc = iw_close_rfc(why)};
    int e = iw_conn_emit(c, &ev);
    return rc ? rc : e;
}

int iw_conn_rx_eof(iw_conn *c, iw_tstamp now) {
    (void)now;
    return iw_conn_close_with(c, c->term_queued ? IW_CLOSE_TERMINATED : IW_CLOSE_LLP_CLOSED);
}

int iw_conn_close(iw_conn *c, iw_tstamp now) {
    (void)now;
    if (c->state == IW_CONN_CLOSED)
        return 0;
    c->closing = true;
    if (!iw_tx_pending(c))
        return iw_conn_close_with(c, IW_CLOSE_ULP_CLOSE);
    return 0;
}

iw_tstamp iw_conn_get_expiry(const iw_conn *c) {
    return c->state == IW_CONN_MPA && c->deadline ? c->deadline : UINT64_MAX;
}

int iw_conn_handle_expiry(iw_conn *c, iw_tstamp now) {
    /* RFC 5044 §7.1.2 rules 8 and 10: time out the startup frames. */
    if (c->state == IW_CONN_MPA && c->deadline && now >= c->deadline)
        return iw_conn_close_with(c, IW_CLOSE_MPA_TIMEOUT);
    return 0;
}

/* ---- work requests ---- */

int iw_conn_post_recv(iw_conn *c, uint64_t wr_id, void *buf, uint32_t len) {
    if ((len && !buf) || c->state == IW_CONN_CLOSED || c->state == IW_CONN_TERMINATE)
        return c->state == IW_CONN_CLOSED || c->state == IW_CONN_TERMINATE ? IW_ERR_PROTO
                                                                            : IW_ERR_INVALID_ARG;
    rq_ent *r = iw_ring_push(&c->rq, &c->mem);
    if (!r)
        return IW_ERR_NOMEM;
    r->wr_id = wr_id;
    r->buf = buf;
    r->len = len;
    return 0;
}

int iw_conn_post_send(iw_conn *c, const iw_send_wr *wr) {
    if (c->state == IW_CONN_CLOSED || c->state == IW_CONN_TERMINATE || c->closing)
        return IW_ERR_PROTO;
    tx_msg t = {0};
    t.wr_id = wr->wr_id;
    t.m.rv = IW_RDMAP_VERSION;
    t.m.ddp.dv = IW_DDP_VERSION;
    t.data = wr->data;
    t.len = wr->len;
    if (wr->len && !wr->data && wr->op != IW_WR_READ) {
        /* The source named by STag: checked now, and again before every
         * FPDU that reads it (iw_mr_ref). */
        iw_place p = iw_place_local_src(c->rnic, c->pd, wr->local_stag, wr->local_to, wr->len);
        if (!p.ok)
            return IW_ERR_INVALID_ARG;
        t.data = p.dst;
        t.src = iw_rnic_mr_ref(c->rnic, p.mr);
    }
    t.done = IW_EV_SEND_DONE;
    switch (wr->op) {
    case IW_WR_SEND:
    case IW_WR_SEND_SE:
    case IW_WR_SEND_INV:
    case IW_WR_SEND_SE_INV:
        t.m.opcode = wr->op == IW_WR_SEND      ? IW_OP_SEND
                     : wr->op == IW_WR_SEND_SE ? IW_OP_SEND_SE
                     : wr->op == IW_WR_SEND_INV ? IW_OP_SEND_INV
                                                : IW_OP_SEND_SE_INV;
        t.m.ddp.qn = IW_QN_SEND;
        if (wr->op == IW_WR_SEND_INV || wr->op == IW_WR_SEND_SE_INV)
            t.m.ddp.rsvd_ulp2 = wr->inv_stag; /* RFC 5040 §4.3 Invalidate STag */
        break;
    case IW_WR_IMM:
    case IW_WR_IMM_SE:
        t.m.opcode = wr->op == IW_WR_IMM ? IW_OP_IMM : IW_OP_IMM_SE;
        t.m.ddp.qn = IW_QN_SEND;
        memcpy(t.m.u.imm, wr->imm, IW_RDMAP_IMM_LEN);
        t.data = NULL;
        t.len = 0;
        break;
    case IW_WR_WRITE:
        t.m.opcode = IW_OP_WRITE;
        t.m.ddp.tagged = true;
        t.m.ddp.stag = wr->remote_stag;
        t.m.ddp.to = wr->remote_to;
        t.done = IW_EV_WRITE_DONE;
        break;
    case IW_WR_READ:
        t.m.opcode = IW_OP_READ_REQ;
        t.m.ddp.qn = IW_QN_READ_REQ;
        t.m.u.read_req = (iw_rdmap_read_req){wr->local_stag, wr->local_to, wr->len,
                                             wr->remote_stag, wr->remote_to};
        t.data = NULL;
        t.len = 0;
        t.done = 0; /* completes on the Read Response */
        break;
    case IW_WR_FETCH_ADD:
    case IW_WR_CMP_SWAP:
        t.m.opcode = IW_OP_ATOMIC_REQ;
        t.m.ddp.qn = IW_QN_READ_REQ;
        t.m.u.atomic_req = (iw_rdmap_atomic_req){
            0, wr->op == IW_WR_FETCH_ADD ? IW_ATOMIC_FETCH_ADD : IW_ATOMIC_CMP_SWAP,
            (uint32_t)wr->wr_id, wr->remote_stag, wr->remote_to, wr->add_swap, wr->add_swap_mask,
            /* RFC 7306 §5.2.1: FetchAdd sends Compare Data 0, Compare Mask all ones. */
            wr->op == IW_WR_FETCH_ADD ? 0 : wr->compare,
            wr->op == IW_WR_FETCH_ADD ? ~0ull : wr->compare_mask};
        t.data = NULL;
        t.len = 0;
        t.done = 0; /* completes on the Atomic Response */
        break;
    default:
        return IW_ERR_INVALID_ARG;
    }
    /* Every operation completes, in submission order (RFC 5040 §5.5). */
    cq_ent *e = iw_ring_push(&c->cq, &c->mem);
    if (!e)
        return IW_ERR_NOMEM;
    e->wr_id = wr->wr_id;
    e->type = wr->op == IW_WR_READ                                   ? IW_EV_READ_DONE
              : wr->op == IW_WR_FETCH_ADD || wr->op == IW_WR_CMP_SWAP ? IW_EV_ATOMIC_DONE
                                                                      : t.done;
    t.cq_seq = c->cq_seq + c->cq.count - 1;
    tx_msg *q = iw_ring_push(&c->sq, &c->mem);
    if (!q) {
        c->cq.count--;
        return IW_ERR_NOMEM;
    }
    *q = t;
    return 0;
}
