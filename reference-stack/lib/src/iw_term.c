/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The end of a stream: the Terminate for the first error (RFC 5040 §5.4,
 * §7.1) and the close. */
#include <string.h>

#include "iw_cq.h"
#include "iw_term.h"
#include <iwarp/wire.h>

int iw_term_fail(iw_conn *c, uint16_t triple, const char *rfc, const uint8_t *ddp_hdr,
                 size_t ddp_len, uint16_t seg_len, const uint8_t *rreq, bool with_hdr) {
    /* §7.1 rule 4: the first error is the one reported. */
    if (c->term_queued || c->state == IW_CONN_CLOSED || iw_fault_skip(c, triple))
        return 0;
    if (iw_fault(c, IW_FAULT_MISCODE) && c->faults.miscode_triple == triple)
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
    return iw_cq_flush(c, IW_WC_FLUSHED);
}

int iw_term_close(iw_conn *c, iw_close_reason why) {
    if (c->state == IW_CONN_CLOSED)
        return 0;
    c->state = IW_CONN_CLOSED;
    c->mpa_out_off = c->mpa_out_len; /* a closed stream sends nothing more */
    c->rx = RX_IDLE;
    int rc = iw_cq_flush(c, IW_WC_FLUSHED);
    if (c->closed_reported)
        return rc;
    c->closed_reported = true;
    iw_event ev = {.type = IW_EV_CLOSED, .close = why, .rfc = iw_close_rfc(why)};
    int e = iw_cq_emit(c, &ev);
    return rc ? rc : e;
}
