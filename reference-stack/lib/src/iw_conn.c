/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Connection lifecycle and the public entry points of the engine that are
 * not receive or transmit: settings, creation, MPA startup's start, work
 * requests, close, timers. Calls go downward only: into iw_startup.c,
 * iw_rx.c, iw_tx.c, iw_term.c, iw_cq.c and iw_ring.c, never back. */
#include <string.h>

#include "iw_cq.h"
#include "iw_startup.h"
#include "iw_term.h"
#include "iw_tx.h"

/* ---- settings, creation ---- */

void iw_conn_settings_default(iw_conn_settings *s, iw_role role) {
    memset(s, 0, sizeof *s);
    s->version = IW_CONN_SETTINGS_V1;
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
    /* Only versions this library knows: the struct's size depends on it. */
    if (!out || !rnic || !s || s->version != IW_CONN_SETTINGS_V1 || !cb ||
        cb->version != IW_CALLBACKS_V1 || !cb->on_event ||
        (s->role != IW_ROLE_INITIATOR && s->role != IW_ROLE_RESPONDER) ||
        (s->mpa_rev != IW_MPA_REV1 && s->mpa_rev != IW_MPA_REV2) ||
        (s->p2p &&
         s->mpa_rev <
             IW_MPA_REV2) || /* RFC 6581 enhanced data takes 4 of the 512 octets (RFC 5044 §7.1.1) */
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
    if (s->faults)
        c->faults = *s->faults;
    c->set.faults = NULL;
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

int iw_conn_rx_eof(iw_conn *c, iw_tstamp now) {
    if (iw_conn_busy(c))
        return IW_ERR_INVALID_ARG; /* called from a callback */
    (void)now;
    return iw_term_close(c, c->term_queued ? IW_CLOSE_TERMINATED : IW_CLOSE_LLP_CLOSED);
}

int iw_conn_close(iw_conn *c, iw_tstamp now) {
    (void)now;
    if (c->state == IW_CONN_CLOSED)
        return 0;
    c->closing = true;
    if (!iw_tx_pending(c))
        return iw_term_close(c, IW_CLOSE_ULP_CLOSE);
    return 0;
}

iw_tstamp iw_conn_get_expiry(const iw_conn *c) {
    return c->state == IW_CONN_MPA && c->deadline ? c->deadline : UINT64_MAX;
}

int iw_conn_start(iw_conn *c, iw_tstamp now) {
    if (c->state != IW_CONN_IDLE || c->in_cb)
        return IW_ERR_INVALID_ARG;
    return iw_startup_begin(c, now);
}

int iw_conn_handle_expiry(iw_conn *c, iw_tstamp now) {
    if (iw_conn_busy(c))
        return IW_ERR_INVALID_ARG; /* called from a callback */
    /* RFC 5044 §7.1.2 rules 8 and 10: time out the startup frames. */
    if (c->state == IW_CONN_MPA && c->deadline && now >= c->deadline)
        return iw_term_close(c, IW_CLOSE_MPA_TIMEOUT);
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
        t.m.opcode = wr->op == IW_WR_SEND       ? IW_OP_SEND
                     : wr->op == IW_WR_SEND_SE  ? IW_OP_SEND_SE
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
        t.m.u.read_req = (iw_rdmap_read_req){wr->local_stag, wr->local_to, wr->len, wr->remote_stag,
                                             wr->remote_to};
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
    e->type = wr->op == IW_WR_READ                                    ? IW_EV_READ_DONE
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
