/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The receive side: FPDUs the IUT sends, taken apart with libiwarp, and
 * answered as a correct peer would (Read and Atomic Responses, Writes
 * placed in the runner's own regions). See iwc_run_int.h. */
#include "iwc_run_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- receive side ---- */

static void peer_place(run *r, const rx_frame *f, const char *what) {
    const iw_rdmap_msg *m = &f->msg;
    if (!m->payload_len)
        return; /* RFC 5041 §5.2: a zero-length tagged segment is not checked */
    int ri = run_region_find_peer(r, m->ddp.stag, m->ddp.to, m->payload_len);
    if (ri < 0) {
        run_fail(r, 0,
                 "the IUT sent %s for STag 0x%08x TO 0x%llx (%zu octets), which is %s the runner's "
                 "regions",
                 what, m->ddp.stag, (unsigned long long)m->ddp.to, m->payload_len,
                 ri == -2 ? "outside the bounds of" : "none of");
        return;
    }
    region_rt *g = &r->reg[ri];
    memcpy(g->mem + (m->ddp.to - g->to), m->payload, m->payload_len);
}

static void peer_read_req(run *r, const rx_frame *f) {
    const iw_rdmap_read_req *q = &f->msg.u.read_req;
    const uint8_t *src = NULL;
    if (q->read_size) {
        int ri = run_region_find_peer(r, q->src_stag, q->src_to, q->read_size);
        if (ri < 0) {
            run_fail(r, 0,
                     "the IUT sent a Read Request for source STag 0x%08x TO 0x%llx size %u, which "
                     "is %s the runner's regions",
                     q->src_stag, (unsigned long long)q->src_to, q->read_size,
                     ri == -2 ? "outside the bounds of" : "none of");
            return;
        }
        src = r->reg[ri].mem + (q->src_to - r->reg[ri].to);
    }
    /* RFC 5040 §5.2.1: Read Responses carry the Data Sink STag/TO as given,
     * segmented to our MULPDU, L on the last. Size 0 (an RTR) gets one
     * zero-length Read Response. */
    uint32_t room = (uint32_t)run_seg_room(r, IW_DDP_TAGGED_HDR_LEN);
    uint32_t off = 0;
    do {
        uint32_t seg = q->read_size - off < room ? q->read_size - off : room;
        iw_rdmap_msg m = iw_rdmap_msg_tagged(IW_OP_READ_RESP, q->sink_stag, q->sink_to + off,
                                             off + seg == q->read_size);
        run_send_answer(r, &m, src ? src + off : NULL, seg);
        off += seg;
    } while (off < q->read_size);
}

uint64_t run_rd64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8); /* the runner's memory holds host-order values, as an RNIC's would */
    return v;
}

static void peer_atomic(run *r, const rx_frame *f) {
    const iw_rdmap_atomic_req *a = &f->msg.u.atomic_req;
    int ri = run_region_find_peer(r, a->stag, a->to, 8);
    if (ri < 0 || (a->to & 7)) {
        run_fail(r, 0, "the IUT sent an Atomic Request for STag 0x%08x TO 0x%llx, %s", a->stag,
                 (unsigned long long)a->to,
                 ri >= 0 ? "which is not 64-bit aligned (RFC 7306 §5.1.1)"
                         : "which is not in the runner's regions");
        return;
    }
    uint8_t *p = r->reg[ri].mem + (a->to - r->reg[ri].to);
    uint64_t orig = run_rd64(p), val = iw_rdmap_atomic_result(a, orig);
    memcpy(p, &val, 8);
    /* RFC 7306 §5: QN 3 MSNs in request order */
    iw_rdmap_msg m = iw_rdmap_msg_untagged(IW_OP_ATOMIC_RESP, IW_QN_ATOMIC_RESP,
                                           r->tx.msn[IW_QN_ATOMIC_RESP]++, 0, true);
    m.u.atomic_resp.req_id = a->req_id;
    m.u.atomic_resp.orig = orig;
    run_send_answer(r, &m, NULL, 0);
}

static void peer_untagged(run *r, const rx_frame *f) {
    const iw_rdmap_msg *m = &f->msg;
    peer_msg *pm = NULL;
    for (int i = 0; i < r->npm; i++)
        if (!r->pm[i].done && r->pm[i].msn == m->ddp.msn)
            pm = &r->pm[i];
    if (!pm) {
        pm = PUSH(r->pm, r->npm, r->cappm);
        if (!pm)
            return;
        pm->msn = m->ddp.msn;
        pm->opcode = m->opcode;
    }
    size_t need = (size_t)m->ddp.mo + m->payload_len;
    if (m->payload_len) {
        if (pm->data.len < need) {
            size_t add = need - pm->data.len;
            uint8_t *z = calloc(1, add);
            if (z) {
                iwc_buf_add(&pm->data, z, add);
                free(z);
            }
        }
        if (pm->data.len >= need)
            memcpy(pm->data.p + m->ddp.mo, m->payload, m->payload_len);
    }
    if (m->opcode == IW_OP_SEND_INV || m->opcode == IW_OP_SEND_SE_INV)
        pm->inv = m->ddp.rsvd_ulp2;
    if (m->opcode == IW_OP_IMM || m->opcode == IW_OP_IMM_SE) {
        pm->has_imm = true;
        memcpy(pm->imm, m->u.imm, IW_RDMAP_IMM_LEN);
    }
    if (m->ddp.last) {
        pm->done = true;
        /* RFC 6581 §9: a p2p initiator's first FPDU may be the zero-length Send RTR. */
        if (m->opcode == IW_OP_SEND && need == 0 && m->ddp.msn == 1 && r->theirs_got &&
            r->theirs.v2.p2p && r->c->role == IWC_IUT_INITIATOR)
            pm->rtr = true;
    }
}

static void rx_fpdu(run *r, int idx) {
    rx_frame *f = &r->rx[idx];
    char tb[160];
    if (f->verdict.kind != IW_VERDICT_OK) {
        run_fail(r, 0, "the IUT sent an FPDU (stream offset %llu) that a receiver must reject: %s",
                 (unsigned long long)f->off,
                 f->verdict.kind == IW_VERDICT_TERM ? run_triple_str(f->verdict.term, tb, sizeof tb)
                                                    : iw_close_str(f->verdict.close));
        return;
    }
    if (f->rverdict.kind != IW_VERDICT_OK) {
        run_fail(r, 0,
                 "the IUT sent a malformed DDP/RDMAP segment (stream offset %llu): a receiver "
                 "answers it with Terminate %s (%s)",
                 (unsigned long long)f->off, run_triple_str(f->rverdict.term, tb, sizeof tb),
                 f->rverdict.rfc ? f->rverdict.rfc : "");
        return;
    }
    const iw_rdmap_msg *m = &f->msg;
    run_trace(r, 2, "IUT -> %s (%zu octets)", iw_rdmap_opcode_str(m->opcode), m->payload_len);
    if (r->term_idx >= 0)
        return; /* counted by expect terminate: nothing may follow a Terminate */
    if (m->opcode == IW_OP_TERMINATE) {
        r->term_idx = idx;
        return;
    }
    if (!r->sctp && r->c->role == IWC_IUT_RESPONDER && !r->any_fpdu_sent && !r->rule4_reported) {
        r->rule4_reported = true;
        run_fail(r, 0,
                 "the IUT (MPA responder) sent an FPDU before it received one (RFC 5044 §7.1.2 "
                 "rule 4)");
    }
    switch (m->opcode) {
    case IW_OP_WRITE:
        peer_place(r, f, "an RDMA Write");
        break;
    case IW_OP_READ_RESP:
        peer_place(r, f, "a Read Response");
        break;
    case IW_OP_READ_REQ:
        /* A zero-length Read (an RTR) is answered even in manual mode. */
        if (m->has_hdr && (!r->c->answer_manual || !m->u.read_req.read_size))
            peer_read_req(r, f);
        break;
    case IW_OP_ATOMIC_REQ:
        if (m->has_hdr && !r->c->answer_manual)
            peer_atomic(r, f);
        break;
    case IW_OP_SEND:
    case IW_OP_SEND_INV:
    case IW_OP_SEND_SE:
    case IW_OP_SEND_SE_INV:
    case IW_OP_IMM:
    case IW_OP_IMM_SE:
        peer_untagged(r, f);
        break;
    default:
        break;
    }
}

void run_rx_segment(run *r, const uint8_t *seg, size_t n, uint64_t off, size_t wire_len,
                    const iw_verdict *v) {
    rx_frame *f = PUSH(r->rx, r->nrx, r->caprx);
    if (!f)
        return;
    f->type = RXF_FPDU;
    f->t_us = iwc_now_us();
    f->off = off;
    f->wire_len = wire_len;
    f->verdict = *v;
    f->ulpdu_len = (uint16_t)(n > 0xFFFF ? 0xFFFF : n);
    f->ulpdu = malloc(f->ulpdu_len ? f->ulpdu_len : 1);
    if (!f->ulpdu) {
        r->nrx--;
        return;
    }
    if (f->ulpdu_len && seg)
        memcpy(f->ulpdu, seg, f->ulpdu_len);
    iw_rdmap_decode(&f->msg, f->ulpdu, f->ulpdu_len, &f->rverdict);
    rx_fpdu(r, r->nrx - 1);
}

static void rx_mpa_frame(run *r, const iw_mpa_rr *rr, const iw_verdict *v, bool ok, size_t len) {
    rx_frame *f = PUSH(r->rx, r->nrx, r->caprx);
    if (!f)
        return;
    f->type = ok ? RXF_RR : RXF_RR_BAD;
    f->t_us = iwc_now_us();
    f->wire_len = len;
    f->rr = *rr;
    if (rr->pd && rr->pd_len <= IW_MPA_PD_MAX) {
        memcpy(f->pd, rr->pd, rr->pd_len);
        f->rr.ulp_pd = rr->ulp_pd ? f->pd + (rr->ulp_pd - rr->pd) : NULL;
        f->rr.pd = f->pd;
    } else {
        f->rr.pd = f->rr.ulp_pd = NULL;
    }
    f->verdict = *v;
    if (ok) {
        r->theirs = f->rr;
        r->theirs_got = true;
    }
    run_trace(r, 2, "IUT -> MPA %s%s", rr->type == IW_MPA_REPLY ? "Reply" : "Request",
              ok ? "" : " (invalid)");
}

static void rx_fpdus(run *r, const uint8_t *p, size_t n) {
    if (!r->df) {
        if (!r->mine_sent) {
            run_fail(r, 0,
                     "the IUT sent %zu octets after its MPA frame before the runner sent "
                     "its own (RFC 5044 §7.1.2)",
                     n);
            r->rx_lost = true;
            return;
        }
        r->df = malloc(sizeof *r->df);
        if (!r->df)
            return;
        /* Their FPDUs carry markers iff we asked (our M bit); CRCs iff either
         * side set C (RFC 5044 §7.1.1). */
        iw_df_cfg cfg = {IW_DF_START_FPDU, r->mine.m ? IW_DF_ON : IW_DF_OFF,
                         r->mine.c || r->theirs.c ? IW_DF_ON : IW_DF_OFF, 0};
        iw_deframer_init(r->df, &cfg);
        r->rx_full = true;
    }
    size_t off = 0;
    while (off < n) {
        iw_frame fr;
        iw_ssize k = iw_deframer_feed(r->df, p + off, n - off, &fr);
        if (k < 0)
            return;
        off += (size_t)k;
        if (fr.type == IW_FRAME_FPDU) {
            run_rx_segment(r, fr.fpdu.ulpdu, fr.fpdu.ulpdu_len, fr.wire_off, fr.wire_len,
                           &fr.verdict);
        } else if (k == 0) {
            return;
        }
    }
}

void run_rx_startup(run *r, const iw_mpa_rr *rr, size_t len) {
    iw_verdict ok = {0};
    rx_mpa_frame(r, rr, &ok, true, len);
}

void run_rx_process(run *r, const uint8_t *p, size_t n) {
    if (r->rx_lost || !n)
        return;
    if (r->rx_full || r->theirs_got) {
        if (r->rejected) {
            /* MPA exited on R=1 (RFC 5044 §7.1.2 rule 3): nothing is framed. */
            run_fail(r, 0, "the IUT sent %zu octets after an MPA Reply with R=1", n);
            r->rx_lost = true;
            return;
        }
        rx_fpdus(r, p, n);
        return;
    }
    if (iwc_buf_add(&r->rx_rr, p, n) < 0)
        return;
    iw_mpa_rr rr;
    iw_verdict v;
    iw_ssize k = iw_mpa_rr_decode(&rr, r->rx_rr.p, r->rx_rr.len, &v);
    if (k == IW_ERR_NEED_MORE)
        return;
    if (k < 0) {
        rx_mpa_frame(r, &rr, &v, false, r->rx_rr.len);
        r->rx_lost = true;
        return;
    }
    rx_mpa_frame(r, &rr, &v, true, (size_t)k);
    if (rr.type == IW_MPA_REPLY && rr.r)
        r->rejected = true;
    size_t left = r->rx_rr.len - (size_t)k;
    if (left) {
        uint8_t *rest = malloc(left);
        if (rest) {
            memcpy(rest, r->rx_rr.p + k, left);
            r->rx_rr.len = 0;
            run_rx_process(r, rest, left);
            free(rest);
        }
    }
    r->rx_rr.len = 0;
}
