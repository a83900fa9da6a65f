/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Transmit: MPA startup frames, then messages segmented into FPDUs of at
 * most MULPDU octets (RFC 5041 §5.2, RFC 5044 §4.5), laid out as gather
 * lists so payload goes from the caller's memory to the socket uncopied. */
#include <string.h>

#include <iwarp/crc32c.h>

#include "iw_cq.h"
#include "iw_term.h"
#include "iw_tx.h"

static bool tx_mpa_pending(const iw_conn *c) { return c->mpa_out_off < c->mpa_out_len; }

/* The queue and message to frame next, or NULL. RFC 5040 §5.4: once a
 * Terminate is queued nothing but it goes out; RFC 5044 §7.1.2 rule 4: a
 * responder sends no FPDU before it has received one. */
static tx_msg *tx_pick(iw_conn *c, int *src) {
    if (c->term_queued) {
        while (c->ctrl.count) {
            const tx_msg *h = iw_ring_at(&c->ctrl, 0);
            if (h->m.opcode == IW_OP_TERMINATE || h->fault_extra)
                break;
            iw_ring_pop(&c->ctrl);
        }
        *src = TXQ_CTRL;
        return c->ctrl.count ? iw_ring_at(&c->ctrl, 0) : NULL;
    }
    if (!c->tx_allowed || c->state != IW_CONN_RTS)
        return NULL;
    if (c->ctrl.count) {
        *src = TXQ_CTRL;
        return iw_ring_at(&c->ctrl, 0);
    }
    /* Responses to the peer's requests go out in the order the requests
     * arrived (RFC 5040 §5.5 rule 20, RFC 7306 §5), between our messages. */
    if (c->resp.count) {
        *src = TXQ_RESP;
        return iw_ring_at(&c->resp, 0);
    }
    if (c->sq.count) {
        tx_msg *m = iw_ring_at(&c->sq, 0);
        bool needs_ord = m->off == 0 && !m->framed_all &&
                         (m->m.opcode == IW_OP_READ_REQ || m->m.opcode == IW_OP_ATOMIC_REQ);
        /* RFC 5040 §6.1: never exceed the negotiated outbound ORD. */
        if (needs_ord && c->ord_outstanding >= c->info.ord)
            return NULL;
        *src = TXQ_SQ;
        return m;
    }
    return NULL;
}

static int tx_assign_msn(iw_conn *c, tx_msg *m) {
    switch (m->m.opcode) {
    case IW_OP_SEND:
    case IW_OP_SEND_INV:
    case IW_OP_SEND_SE:
    case IW_OP_SEND_SE_INV:
    case IW_OP_IMM:
    case IW_OP_IMM_SE:
        m->m.ddp.msn = c->tx_msn_send++;
        break;
    case IW_OP_READ_REQ:
    case IW_OP_ATOMIC_REQ: {
        m->m.ddp.msn = c->tx_msn_read++;
        if (!m->rtr) { /* the RTR Read's ORD entry was queued with it */
            ord_ent *o = iw_ring_push(&c->ord, &c->mem);
            if (!o)
                return IW_ERR_NOMEM;
            o->atomic = m->m.opcode == IW_OP_ATOMIC_REQ;
            o->wr_id = m->wr_id;
            o->cq_seq = m->cq_seq;
            if (o->atomic) {
                o->req_id = m->m.u.atomic_req.req_id;
            } else {
                o->sink_stag = m->m.u.read_req.sink_stag;
                o->sink_to = m->m.u.read_req.sink_to;
                o->size = m->m.u.read_req.read_size;
            }
        }
        c->ord_outstanding++;
        break;
    }
    default: /* tagged, Terminate and Atomic Response MSNs are set when queued */
        break;
    }
    return 0;
}

/* The message at the head of queue src may no longer read its source: the
 * region was deregistered or invalidated after the message was checked
 * (RFC 5042 §6.2.2, §6.3.3). It leaves its queue before anything is
 * reported, then the stream is terminated (RFC 5040 §7.1). */
static int tx_revoked(iw_conn *c, int src) {
    iw_ring *q = src == TXQ_RESP ? &c->resp : &c->sq;
    tx_msg m = *(tx_msg *)iw_ring_at(q, 0);
    iw_ring_pop(q);
    if (src == TXQ_RESP) /* §7.1 rule 3: the Read Request's source is gone */
        return iw_term_fail(c, IW_TERM_RDMAP_INVALID_STAG, "RFC 5040 §7.1 rule 3; RFC 5042 §6.3.3",
                            m.req_hdr, IW_DDP_UNTAGGED_HDR_LEN, m.req_seg_len,
                            m.req_hdr + IW_DDP_UNTAGGED_HDR_LEN, true);
    /* §7.1 rule 1: an error while creating a Send or Write is a local one;
     * the work request says which, the Terminate carries no header. */
    iw_cq_mark_done(c, m.cq_seq, IW_WC_LOCAL_PROT_ERROR);
    return iw_term_fail(c, IW_TERM_RDMAP_LOCAL_CATASTROPHIC,
                        "RFC 5040 §7.1 rule 1; RFC 5042 §6.3.3", NULL, 0, 0, NULL, false);
}

/* Wire offset of an FPDU's CRC field: its four octets are the last four
 * that are not marker octets, since a marker may fall inside it (RFC 5044
 * §4.2, §4.3: markers sit at grid positions that are multiples of 512). */
static size_t tx_crc_field(uint32_t pos, size_t wire, bool markers) {
    size_t need = IW_MPA_CRC_LEN, w = wire;
    while (need) {
        w--;
        if (!(markers && ((pos + (uint32_t)w) & (IW_MPA_MARKER_INTERVAL - 1)) < IW_MPA_MARKER_LEN))
            need--;
    }
    return w;
}

/* RFC 5044 §4.4 over the octets from wire offset `from` to `to` of the FPDU
 * being sent, folded into st. */
static uint32_t tx_crc_span(const iw_conn *c, uint32_t st, size_t from, size_t to) {
    size_t w = 0;
    for (int i = 0; i < c->tx.n && w < to && from < to; i++) {
        size_t len = c->tx.iov[i].len;
        if (w + len > from) {
            size_t a = from > w ? from - w : 0, b = to - w < len ? to - w : len;
            st = iw_crc32c_update(st, (const uint8_t *)c->tx.iov[i].base + a, b - a);
        }
        w += len;
    }
    return st;
}

/* The octets an FPDU covers may change between the time it is framed and
 * the time they leave: the ULP or a peer's Write may modify a buffer while
 * a Send, Write or Read Response from it is queued (RFC 5040 §5.5 rule 8
 * makes the data indeterminate, not the framing). So the CRC is computed
 * over what was committed plus what is handed out now, just before the
 * CRC field itself is handed out, and the FPDU always verifies. Nothing
 * can change the memory between tx_iov and tx_commit, so a commit that
 * takes it all folds nothing more: the CRC is computed once per FPDU
 * unless a write stops short. */
static void tx_crc_finish(iw_conn *c) {
    uint32_t crc = ~tx_crc_span(c, c->tx.crc_state, c->tx.crc_done, c->tx.crc_at);
    c->tx.crc_final = true;
    uint8_t le[IW_MPA_CRC_LEN];
    iw_crc32c_put(le, crc);
    size_t w = 0, k = 0;
    for (int i = 0; i < c->tx.n && k < IW_MPA_CRC_LEN; w += c->tx.iov[i].len, i++) {
        if (w + c->tx.iov[i].len <= c->tx.crc_at)
            continue;                   /* before the field */
        uint8_t *b = c->tx.iov[i].base; /* the CRC field lies in tx.frame */
        for (size_t j = 0; j < c->tx.iov[i].len && k < IW_MPA_CRC_LEN; j++) {
            uint32_t at = c->tx_pos + (uint32_t)(w + j);
            if (w + j >= c->tx.crc_at &&
                !(c->tx_markers && (at & (IW_MPA_MARKER_INTERVAL - 1)) < IW_MPA_MARKER_LEN))
                b[j] = le[k++];
        }
    }
}

int iw_tx_build(iw_conn *c) {
    if (c->tx.active || tx_mpa_pending(c))
        return 0;
    int src = TXQ_NONE;
    tx_msg *m = tx_pick(c, &src);
    if (m && !iw_rnic_ref_live(c->rnic, m->src)) {
        int rc = tx_revoked(c, src);
        if (rc)
            return rc;
        m = tx_pick(c, &src); /* the Terminate, if one could be queued */
        if (m && !iw_rnic_ref_live(c->rnic, m->src))
            return 0; /* a fault-injected skip left it queued: send nothing */
    }
    if (!m)
        return 0;
    if (m->off == 0 && !m->framed_all) {
        int rc = tx_assign_msn(c, m);
        if (rc)
            return rc;
    }
    iw_rdmap_msg h = m->m;
    size_t hl0 = h.ddp.tagged ? IW_DDP_TAGGED_HDR_LEN : IW_DDP_UNTAGGED_HDR_LEN;
    uint32_t room = c->info.mulpdu > hl0 ? c->info.mulpdu - (uint32_t)hl0 : 1;
    uint32_t seg = m->len - m->off < room ? m->len - m->off : room;
    bool last = m->off + seg == m->len;
    /* RFC 5041 §5.2: TO / MO advance by the payload already sent; L only on
     * the last segment. */
    if (h.ddp.tagged)
        h.ddp.to = m->m.ddp.to + m->off;
    else
        h.ddp.mo = m->off;
    h.ddp.last = last;
    iw_ssize hl = iw_rdmap_encode_hdr(c->tx.hdr, sizeof c->tx.hdr, &h);
    if (hl < 0)
        return (int)hl;
    /* The CRC field is laid out zero here and filled in by tx_crc_finish
     * over the octets as they leave, not as they are now. */
    unsigned flags = c->tx_markers ? IW_MPA_MARKERS : 0;
    size_t wire;
    int n = iw_mpa_fpdu_gather(c->tx.iov, IW_MPA_GATHER_IOV_MAX, c->tx.frame, sizeof c->tx.frame,
                               c->tx_pos, flags, c->tx.hdr, (size_t)hl,
                               seg ? m->data + m->off : NULL, seg, &wire);
    if (n < 0)
        return n;
    c->tx.crc_state = IW_CRC32C_INIT;
    c->tx.crc_at = tx_crc_field(c->tx_pos, wire, c->tx_markers);
    c->tx.crc_done = c->tx.sent = 0;
    c->tx.n = n;
    c->tx.idx = 0;
    c->tx.off = 0;
    c->tx.active = true;
    c->tx.last_of_msg = last;
    c->tx.src = src;
    c->tx.mr = seg ? m->src : (iw_mr_ref){0, 0};
    m->off += seg;
    if (last)
        m->framed_all = true;
    return 0;
}

bool iw_tx_pending(const iw_conn *c) {
    if (tx_mpa_pending(c) || c->tx.active)
        return true;
    if (c->term_queued)
        return c->ctrl.count > 0;
    if (!c->tx_allowed || c->state != IW_CONN_RTS)
        return false;
    if (c->ctrl.count || c->resp.count)
        return true;
    if (c->sq.count) {
        const tx_msg *m = iw_ring_at(&c->sq, 0);
        bool needs_ord = m->off == 0 && !m->framed_all &&
                         (m->m.opcode == IW_OP_READ_REQ || m->m.opcode == IW_OP_ATOMIC_REQ);
        return !(needs_ord && c->ord_outstanding >= c->info.ord);
    }
    return false;
}

bool iw_conn_want_write(const iw_conn *c) { return iw_tx_pending(c); }

/* The FPDU being sent reads a region that has since been deregistered or
 * invalidated. Unsent, it is dropped and its message fails as in
 * iw_tx_build; partly sent, it cannot be finished without reading that
 * memory, so the stream is torn down without a Terminate (RFC 5040 §6.2
 * LLP Abortive Termination). */
static int tx_fpdu_revoked(iw_conn *c) {
    c->tx.active = false;
    if (c->tx.idx == 0 && c->tx.off == 0) {
        if (c->tx.src == TXQ_SQ || c->tx.src == TXQ_RESP)
            return tx_revoked(c, c->tx.src);
        return 0; /* its message was flushed already */
    }
    c->ctrl.count = c->ctrl.head = 0; /* not even a queued Terminate follows */
    return iw_term_close(c, IW_CLOSE_LOCAL_ABORT);
}

int iw_conn_tx_iov(iw_conn *c, iw_iovec *iov, int max) {
    if (iw_conn_busy(c))
        return IW_ERR_INVALID_ARG; /* called from a callback */
    if (max <= 0)
        return 0;
    if (c->tx.active && !iw_rnic_ref_live(c->rnic, c->tx.mr)) {
        int rc = tx_fpdu_revoked(c);
        if (rc)
            return rc;
    }
    if (tx_mpa_pending(c)) {
        iov[0].base = c->mpa_out + c->mpa_out_off;
        iov[0].len = c->mpa_out_len - c->mpa_out_off;
        return 1;
    }
    int rc = iw_tx_build(c);
    if (rc)
        return rc;
    if (!c->tx.active)
        return 0;
    int k = 0;
    for (int i = c->tx.idx; i < c->tx.n && k < max; i++, k++) {
        size_t skip = i == c->tx.idx ? c->tx.off : 0;
        iov[k].base = (uint8_t *)c->tx.iov[i].base + skip;
        iov[k].len = c->tx.iov[i].len - skip;
    }
    c->tx.crc_final = false;
    if (c->tx_crc && c->tx.idx + k == c->tx.n)
        tx_crc_finish(c); /* the list reaches the CRC field */
    return k;
}

/* The FPDU just sent completed its message: retire it. */
static int tx_msg_sent(iw_conn *c) {
    /* TXQ_NONE: the message was flushed while this FPDU was going out. */
    if (c->tx.src == TXQ_NONE)
        return 0;
    iw_ring *q = c->tx.src == TXQ_CTRL ? &c->ctrl : c->tx.src == TXQ_RESP ? &c->resp : &c->sq;
    if (!q->count)
        return 0;
    tx_msg *m = iw_ring_at(q, 0);
    bool done = m->done != 0;
    uint32_t seq = m->cq_seq;
    bool term = m->m.opcode == IW_OP_TERMINATE;
    iw_ring_pop(q);
    if (term) {
        c->term_sent_reported = true;
        if (iw_fault(c, IW_FAULT_SEND_AFTER_TERM)) {
            /* Non-conformant on purpose: RFC 5040 §5.4 forbids this FPDU. */
            tx_msg *x = iw_ring_push(&c->ctrl, &c->mem);
            if (!x)
                return IW_ERR_NOMEM;
            x->fault_extra = true;
            x->m.opcode = IW_OP_SEND;
            x->m.rv = IW_RDMAP_VERSION;
            x->m.ddp.dv = IW_DDP_VERSION;
            x->m.ddp.last = true;
            x->m.ddp.qn = IW_QN_SEND;
        }
        iw_event te = {.type = IW_EV_TERM_SENT, .term = c->term_out, .rfc = c->term_rfc};
        return iw_cq_emit(c, &te);
    }
    /* RFC 5040 §5.5 rule 14: a Send or Write is complete once DDP took it;
     * it is reported after every earlier operation (rule 15). */
    if (done)
        return iw_cq_complete(c, seq, IW_WC_SUCCESS, 0, 0);
    return 0;
}

int iw_conn_tx_commit(iw_conn *c, size_t n, iw_tstamp now) {
    if (iw_conn_busy(c))
        return IW_ERR_INVALID_ARG; /* called from a callback */
    (void)now;
    c->stats.bytes_tx += n;
    if (tx_mpa_pending(c)) {
        size_t left = c->mpa_out_len - c->mpa_out_off;
        if (n > left)
            return IW_ERR_INVALID_ARG;
        c->mpa_out_off += n;
        return 0;
    }
    while (n && c->tx.active) {
        size_t left = c->tx.iov[c->tx.idx].len - c->tx.off;
        size_t take = n < left ? n : left;
        c->tx.sent += take;
        /* A write that stopped short: fold what left, as it was. */
        if (c->tx_crc && !(c->tx.crc_final && c->tx.sent >= c->tx.crc_at) &&
            c->tx.crc_done < c->tx.crc_at) {
            size_t to = c->tx.sent < c->tx.crc_at ? c->tx.sent : c->tx.crc_at;
            c->tx.crc_state = tx_crc_span(c, c->tx.crc_state, c->tx.crc_done, to);
            c->tx.crc_done = to;
        }
        c->tx.off += take;
        n -= take;
        if (c->tx.off < c->tx.iov[c->tx.idx].len)
            break;
        c->tx.idx++;
        c->tx.off = 0;
        if (c->tx.idx < c->tx.n)
            continue;
        /* Whole FPDU out. */
        size_t wire = 0;
        for (int i = 0; i < c->tx.n; i++)
            wire += c->tx.iov[i].len;
        c->tx_pos += (uint32_t)wire;
        c->tx.active = false;
        c->stats.fpdus_tx++;
        if (c->tx.last_of_msg) {
            int rc = tx_msg_sent(c);
            if (rc)
                return rc;
        }
    }
    if (n)
        return IW_ERR_INVALID_ARG;
    if (c->closing && !iw_tx_pending(c) && c->state != IW_CONN_CLOSED)
        return iw_term_close(c, IW_CLOSE_ULP_CLOSE);
    return 0;
}

iw_ssize iw_conn_write(iw_conn *c, uint8_t *out, size_t outlen, iw_tstamp now) {
    if (iw_conn_busy(c))
        return IW_ERR_INVALID_ARG; /* called from a callback */
    size_t w = 0;
    iw_iovec iov[16];
    while (w < outlen) {
        int n = iw_conn_tx_iov(c, iov, 16);
        if (n < 0)
            return n;
        if (n == 0)
            break;
        size_t got = 0;
        for (int i = 0; i < n && w < outlen; i++) {
            size_t k = iov[i].len < outlen - w ? iov[i].len : outlen - w;
            memcpy(out + w, iov[i].base, k);
            w += k;
            got += k;
            if (k < iov[i].len)
                break;
        }
        int rc = iw_conn_tx_commit(c, got, now);
        if (rc)
            return rc;
    }
    return (iw_ssize)w;
}
