/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Events and completions: every callback goes through iw_cq_emit, and work
 * requests complete in submission order (RFC 5040 §5.5 rule 15). */
#include "iw_cq.h"

int iw_cq_emit(iw_conn *c, iw_event *ev) {
    /* While it runs, the entry points that move bytes refuse to be called
     * (engine.h: what a callback may do). */
    c->in_cb++;
    int rc = c->cb.on_event(c, ev, c->user);
    c->in_cb--;
    return rc ? IW_ERR_CALLBACK : 0;
}

/* Report finished work requests from the head of the completion queue:
 * RFC 5040 §5.5 rule 15, operations complete in submission order. */
static int cq_drain(iw_conn *c) {
    while (c->cq.count) {
        cq_ent e = *(cq_ent *)iw_ring_at(&c->cq, 0);
        if (!e.done)
            break;
        iw_ring_pop(&c->cq);
        c->cq_seq++;
        iw_event ev = {.type = e.type,
                       .status = e.status,
                       .wr_id = e.wr_id,
                       .len = e.len,
                       .atomic_orig = e.atomic_orig};
        int rc = iw_cq_emit(c, &ev);
        if (rc)
            return rc;
    }
    return 0;
}

static cq_ent *cq_pending(iw_conn *c, uint32_t seq) {
    uint32_t i = seq - c->cq_seq;
    if (i >= c->cq.count)
        return NULL;
    cq_ent *e = iw_ring_at(&c->cq, i);
    return e->done ? NULL : e;
}

void iw_cq_mark_done(iw_conn *c, uint32_t seq, iw_wc_status st) {
    cq_ent *e = cq_pending(c, seq);
    if (e) {
        e->done = true;
        e->status = st;
    }
}

int iw_cq_complete(iw_conn *c, uint32_t seq, iw_wc_status st, uint32_t len, uint64_t orig) {
    cq_ent *e = cq_pending(c, seq);
    if (!e)
        return 0;
    e->done = true;
    e->status = st;
    e->len = len;
    e->atomic_orig = orig;
    return cq_drain(c);
}

int iw_cq_flush(iw_conn *c, iw_wc_status st) {
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
     * is what the engine call returns (IW_ERR_CALLBACK). cq_drain
     * stops at a failing callback after popping its entry, so it is called
     * again until the queue is empty: at most once per entry queued now
     * (one more to see it empty), so no callback can keep it looping. */
    int rc = 0;
    for (uint32_t left = c->cq.count + 1; left; left--) {
        int e = cq_drain(c);
        if (!rc)
            rc = e;
        if (!e)
            break;
    }
    while (c->rq.count) {
        rq_ent *r = iw_ring_at(&c->rq, 0);
        iw_event ev = {.type = IW_EV_RECV, .status = st, .wr_id = r->wr_id};
        iw_ring_pop(&c->rq);
        int e = iw_cq_emit(c, &ev);
        if (!rc)
            rc = e;
    }
    c->resp.count = 0;
    c->resp.head = 0;
    return rc;
}
