/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Sending: a case's send steps framed through the raw peer (iwc_wire.h,
 * reference-stack/peer), MPA startup and the RFC 6581 RTR. See
 * iwc_run_int.h. */
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

/* ---- sending ---- */

static sent_frame *sent_push(run *r, int line, uint8_t kind, bool fpdu) {
    sent_frame *s = PUSH(r->sent, r->nsent, r->capsent);
    if (s) {
        s->line = line;
        s->kind = kind;
        s->fpdu = fpdu;
        s->region = -1;
    }
    return s;
}

/* Start our Full Operation once both MPA frames are known. */
static bool tx_ready(run *r, int line) {
    if (r->tx_full)
        return true;
    if (!r->mine_sent || !r->theirs_got) {
        run_error(r, line, "cannot send an FPDU before both MPA frames were exchanged");
        return false;
    }
    /* Our FPDUs carry markers iff the IUT asked (its M), CRCs iff either C;
     * over SCTP neither exists (RFC 5043 §5.2.2). */
    if (r->sctp)
        iwc_tx_start(&r->tx, false, false);
    else
        iwc_tx_start(&r->tx, r->theirs.m, r->mine.c || r->theirs.c);
    r->tx_full = true;
    return true;
}

/* Frame one segment, hold it, record it (model placement for tagged). */
static int frame_out(run *r, int line, uint8_t kind, const iwc_buf *seg, const iwc_mut *mut,
                     size_t pay_off) {
    char err[256];
    uint8_t *ul = NULL;
    size_t ull = 0;
    if (r->sctp) {
        /* One DDP Segment Chunk (RFC 5043 §5.2.2). */
        uint16_t ssn = run_sctp_ssn(r, mut && mut->ssn_set ? &mut->ssn : NULL);
        iwc_buf chunk = {0};
        int rc =
            iwc_sctp_chunk_build(ssn, seg->p, seg->len, mut, &chunk, &ul, &ull, err, sizeof err);
        if (rc == 0)
            run_sctp_queue(r, mut && mut->ppid_set ? mut->ppid : IW_SCTP_PPID_DDP_SEGMENT,
                           mut ? mut->sid : 0, mut && mut->ordered, chunk.p, chunk.len);
        iwc_buf_free(&chunk);
        if (rc < 0) {
            run_error(r, line, "%s", err);
            return -1;
        }
    } else if (iwc_fpdu_build(&r->tx, seg->p, seg->len, mut, &r->held, &ul, &ull, err, sizeof err) <
               0) {
        run_error(r, line, "%s", err);
        return -1;
    }
    sent_frame *s = sent_push(r, line, kind, true);
    if (!s) {
        free(ul);
        return -1;
    }
    s->ulpdu = ul;
    s->ulpdu_len = ull;
    s->pay_off = pay_off;
    r->any_fpdu_sent = true;
    /* A Write or Read Response into an IUT region: expected to land unless a
     * Terminate rejects it (expect terminate). */
    /* An aligned Atomic Request into an IUT region changes 8 octets we
     * cannot predict octet by octet (RFC 7306 §5.1: the IUT's byte order). */
    if (!r->sent_term && ull >= IW_DDP_UNTAGGED_HDR_LEN + IW_RDMAP_ATOMIC_REQ_LEN &&
        !(ul[0] & IW_DDP_CTRL_T) && (ul[1] & IW_RDMAP_CTRL_OPCODE) == IW_OP_ATOMIC_REQ) {
        iw_rdmap_msg am;
        iw_verdict av;
        if (iw_rdmap_decode(&am, ul, ull, &av) >= 0 && am.has_hdr && !(am.u.atomic_req.to & 7)) {
            int ri = run_region_find_iut(r, am.u.atomic_req.stag, am.u.atomic_req.to, 8);
            if (ri >= 0)
                run_model_add(r, ri, am.u.atomic_req.to - r->reg[ri].to, NULL, 8, r->nsent - 1);
        }
    }
    /* RFC 5040 §5.4, §6.2.1: after our Terminate the stream is over. */
    if (!r->sent_term && ull >= IW_DDP_TAGGED_HDR_LEN && (ul[0] & IW_DDP_CTRL_T) && ull > pay_off) {
        iw_ddp_hdr h;
        if (iw_ddp_decode_hdr(&h, ul, ull) > 0) {
            unsigned op = h.rsvd_ulp & IW_RDMAP_CTRL_OPCODE;
            size_t pl = ull - pay_off;
            int ri = run_region_find_iut(r, h.stag, h.to, pl);
            if ((op == IW_OP_WRITE || op == IW_OP_READ_RESP) && ri >= 0) {
                s->region = ri;
                s->roff = h.to - r->reg[ri].to;
                s->rlen = pl;
                run_model_add(r, ri, s->roff, ul + pay_off, pl, r->nsent - 1);
            }
        }
    }
    return 0;
}

size_t run_seg_room(const run *r, size_t hl) {
    /* RFC 5044 §4.5 MULPDU for our EMSS; over SCTP, RFC 5043 §9. */
    return (r->sctp ? SCTP_SEG : iw_mpa_mulpdu(EMSS, r->tx.flags & IW_MPA_MARKERS)) - hl;
}

void run_send_answer(run *r, iw_rdmap_msg *m, const uint8_t *pay, size_t paylen) {
    if (r->tx_dead || !r->tx_full || r->sent_term)
        return;
    iwc_buf seg = {0};
    if (iwc_seg_encode(m, pay, paylen, &seg) == 0) {
        run_flush_held(r);
        if (frame_out(r, 0, 0, &seg, NULL, seg.len - paylen) == 0)
            run_flush_held(r);
    }
    iwc_buf_free(&seg);
}

/* A message skeleton: the library's (RFC 5040 §4.2, RFC 7306 §4), the one
 * table the decoder judges with; an undefined opcode keeps QN 0 untagged. */
static void msg_defaults(iw_rdmap_msg *m, unsigned opcode) { (void)iw_rdmap_msg_init(m, opcode); }

static const uint8_t send_opcode[] = {
    [IWC_SEND_WRITE] = IW_OP_WRITE,
    [IWC_SEND_READ_REQ] = IW_OP_READ_REQ,
    [IWC_SEND_READ_RESP] = IW_OP_READ_RESP,
    [IWC_SEND_SEND] = IW_OP_SEND,
    [IWC_SEND_SEND_INV] = IW_OP_SEND_INV,
    [IWC_SEND_SEND_SE] = IW_OP_SEND_SE,
    [IWC_SEND_SEND_SE_INV] = IW_OP_SEND_SE_INV,
    [IWC_SEND_TERM] = IW_OP_TERMINATE,
    [IWC_SEND_IMM] = IW_OP_IMM,
    [IWC_SEND_IMM_SE] = IW_OP_IMM_SE,
    [IWC_SEND_ATOMIC] = IW_OP_ATOMIC_REQ,
    [IWC_SEND_ATOMIC_RESP] = IW_OP_ATOMIC_RESP,
};

bool run_mut_from(run *r, const iwc_step *s, iwc_mut *mu) {
    memset(mu, 0, sizeof *mu);
    uint64_t v;
    if (run_arg_num(r, s, "trunc", &v)) {
        mu->trunc_set = true;
        mu->trunc = (size_t)v;
    }
    if (run_arg_num(r, s, "extra", &v))
        mu->extra = (size_t)(v > 65535 ? 65535 : v);
    if (run_arg_num(r, s, "ulpdu-len", &v)) {
        mu->len_set = true;
        mu->ulpdu_len = (uint16_t)v;
    }
    if (run_arg_num(r, s, "marker.fpduptr", &v)) {
        mu->mark_set = true;
        mu->mark_delta = (int64_t)v;
    }
    if (run_arg_num(r, s, "marker.lead", &v)) {
        mu->lead_set = true;
        mu->lead_delta = (int64_t)v;
    }
    if (run_arg_num(r, s, "pad", &v)) {
        mu->pad_set = true;
        mu->pad = (uint8_t)v;
    }
    if (run_arg_num(r, s, "ssn", &v)) {
        mu->ssn_set = true;
        mu->ssn = (uint16_t)v;
    }
    if (run_arg_num(r, s, "ppid", &v)) {
        mu->ppid_set = true;
        mu->ppid = (uint32_t)v;
    }
    mu->sid = (uint16_t)run_arg_num_or(r, s, "stream", 0);
    mu->ordered = run_arg_num_or(r, s, "ordered", 0) != 0;
    const iwc_arg *c = iwc_step_arg(s, "crc");
    if (c && c->word)
        mu->crc = !strcmp(c->word, "bad")    ? IWC_CRC_BAD
                  : !strcmp(c->word, "zero") ? IWC_CRC_ZERO
                                             : IWC_CRC_GOOD;
    return !r->abort_steps;
}

void run_ensure_recv(run *r, int line) {
    if (r->recv_posted || !r->c->recv_count)
        return;
    r->recv_posted = true;
    char req[128];
    snprintf(req, sizeof req, "{\"op\":\"post_recv\",\"len\":%u,\"count\":%u}", r->c->recv_len,
             r->c->recv_count);
    run_doc_free(run_agent_ok(r, line, req, "post_recv"));
}

void run_step_send_fpdu(run *r, const iwc_step *s) {
    if (!tx_ready(r, s->line))
        return;
    run_ensure_recv(r, s->line);
    if (r->abort_steps)
        return;
    iw_rdmap_msg m;
    unsigned op = send_opcode[s->sub];
    msg_defaults(&m, op);
    uint64_t v;
    /* Header fields as the step gives them; everything else as RFC 5040 says. */
    if (run_arg_num(r, s, "stag", &v))
        m.ddp.stag = (uint32_t)v;
    if (run_arg_num(r, s, "to", &v))
        m.ddp.to = v;
    if (run_arg_num(r, s, "qn", &v))
        m.ddp.qn = (uint32_t)v;
    bool auto_msn = !m.ddp.tagged;
    if (run_arg_num(r, s, "msn", &v)) {
        m.ddp.msn = (uint32_t)v;
        auto_msn = false;
    }
    if (run_arg_num(r, s, "mo", &v))
        m.ddp.mo = (uint32_t)v;
    if (run_arg_num(r, s, "inv", &v))
        m.ddp.rsvd_ulp2 = (uint32_t)v;
    if (run_arg_num(r, s, "dv", &v))
        m.ddp.dv = (uint8_t)(v & 3);
    if (run_arg_num(r, s, "rv", &v))
        m.rv = (uint8_t)(v & 3);
    if (run_arg_num(r, s, "rsvd", &v))
        m.ddp.rsvd = (uint8_t)(v & 0xF);
    if (run_arg_num(r, s, "rsv", &v))
        m.rsv = (uint8_t)(v & 3);
    uint64_t last = run_arg_num_or(r, s, "last", 1);
    bool tagged_forced = run_arg_num(r, s, "tagged", &v);
    if (tagged_forced)
        m.ddp.tagged = v != 0;
    if (run_arg_num(r, s, "opcode", &v))
        m.opcode = (uint8_t)(v & 0xF);
    switch (s->sub) {
    case IWC_SEND_READ_REQ:
        m.u.read_req.sink_stag = (uint32_t)run_arg_num_or(r, s, "sink-stag", 0);
        m.u.read_req.sink_to = run_arg_num_or(r, s, "sink-to", 0);
        m.u.read_req.read_size = (uint32_t)run_arg_num_or(r, s, "size", 0);
        m.u.read_req.src_stag = (uint32_t)run_arg_num_or(r, s, "src-stag", 0);
        m.u.read_req.src_to = run_arg_num_or(r, s, "src-to", 0);
        break;
    case IWC_SEND_ATOMIC: {
        iw_rdmap_atomic_req *a = &m.u.atomic_req;
        const iwc_arg *opa = iwc_step_arg(s, "op");
        a->aopcode = IW_ATOMIC_FETCH_ADD;
        if (opa && opa->type == IWC_V_WORD)
            a->aopcode = !strcmp(opa->word, "cmp-swap") ? IW_ATOMIC_CMP_SWAP : IW_ATOMIC_FETCH_ADD;
        else if (opa && run_eval(r, s->line, &opa->e, &v))
            a->aopcode = (uint8_t)(v & 0xF);
        a->req_id = (uint32_t)run_arg_num_or(r, s, "req-id", 0x1000u + (unsigned)r->nsent);
        a->stag = m.ddp.stag;
        a->to = m.ddp.to;
        m.ddp.stag = 0;
        m.ddp.to = 0;
        bool fa = a->aopcode == IW_ATOMIC_FETCH_ADD;
        a->add_swap = fa ? run_arg_num_or(r, s, "add", 0) : run_arg_num_or(r, s, "swap", 0);
        a->add_swap_mask =
            fa ? run_arg_num_or(r, s, "add-mask", 0) : run_arg_num_or(r, s, "swap-mask", ~0ull);
        /* RFC 7306 §5.2.1: FetchAdd sends Compare Data 0, Compare Mask all ones. */
        a->compare = fa ? 0 : run_arg_num_or(r, s, "compare", 0);
        a->compare_mask = fa ? ~0ull : run_arg_num_or(r, s, "compare-mask", ~0ull);
        break;
    }
    case IWC_SEND_ATOMIC_RESP:
        m.u.atomic_resp.req_id = (uint32_t)run_arg_num_or(r, s, "req-id", 0);
        m.u.atomic_resp.orig = run_arg_num_or(r, s, "orig", 0);
        break;
    case IWC_SEND_TERM: {
        iw_rdmap_term *t = &m.u.term;
        t->layer = (uint8_t)iw_term_layer(s->triple);
        t->etype = (uint8_t)iw_term_etype(s->triple);
        t->ecode = (uint8_t)iw_term_ecode(s->triple);
        t->m = run_arg_num_or(r, s, "m", 0) != 0;
        t->d = run_arg_num_or(r, s, "d", 0) != 0;
        t->ddp_seg_len = (uint16_t)run_arg_num_or(r, s, "seglen", 0);
        break;
    }
    default:
        break;
    }
    if (r->abort_steps)
        return;
    /* Payload. */
    uint8_t *pay = NULL;
    size_t paylen = 0;
    const iwc_arg *da = iwc_step_arg(s, "data");
    uint64_t len = run_arg_num_or(r, s, "len", 0);
    bool has_pay = s->sub == IWC_SEND_WRITE || s->sub == IWC_SEND_READ_RESP ||
                   s->sub == IWC_SEND_SEND || s->sub == IWC_SEND_SEND_INV ||
                   s->sub == IWC_SEND_SEND_SE || s->sub == IWC_SEND_SEND_SE_INV;
    if (s->sub == IWC_SEND_IMM || s->sub == IWC_SEND_IMM_SE) {
        iwc_data d8 = {IWC_DATA_PAT, (uint8_t)(r->step_seed + 1), 0, 0, NULL, 0};
        size_t k = 0;
        uint8_t *b = run_data_make(r, s->line, da ? &da->d : &d8, 8, &k);
        if (!b)
            return;
        memcpy(m.u.imm, b, k < 8 ? k : 8);
        free(b);
    } else if (has_pay) {
        iwc_data dp = {IWC_DATA_PAT, (uint8_t)(r->step_seed + 1), 0, 0, NULL, 0};
        pay = run_data_make(r, s->line, da ? &da->d : &dp, len, &paylen);
        if (!pay)
            return;
    }
    iwc_buf termhdr = {0};
    const iwc_arg *ha = iwc_step_arg(s, "hdr");
    if (s->sub == IWC_SEND_TERM && ha && ha->type == IWC_V_DATA) {
        size_t k = 0;
        uint8_t *b = run_data_make(r, s->line, &ha->d, 0, &k);
        if (!b) {
            free(pay);
            return;
        }
        iwc_buf_add(&termhdr, b, k);
        free(b);
        m.u.term.d = true;
        m.u.term.ddp_raw = termhdr.p;
        m.u.term.ddp_raw_len = k;
    }
    iwc_mut mu;
    if (!run_mut_from(r, s, &mu)) {
        free(pay);
        iwc_buf_free(&termhdr);
        return;
    }
    uint64_t repeat = run_arg_num_or(r, s, "repeat", 1);
    if (repeat < 1 || repeat > 64)
        repeat = 1;
    /* Segment size: seg= or our MULPDU (RFC 5044 §4.5, RFC 5041 §5.2). */
    size_t hl = m.ddp.tagged ? IW_DDP_TAGGED_HDR_LEN : IW_DDP_UNTAGGED_HDR_LEN;
    size_t room = run_seg_room(r, hl);
    uint64_t segv;
    if (run_arg_num(r, s, "seg", &segv) && segv > 0)
        room = (size_t)segv;
    /* Every segment is kept (framed octets, the model's placement): a
     * bound keeps a tiny seg= on a large message from exhausting memory. */
    uint64_t nseg = has_pay && paylen ? (paylen + room - 1) / room : 1;
    if (nseg * repeat > IWC_FPDUS_MAX - (unsigned)r->nsent) {
        run_error(r, s->line,
                  "send: %llu FPDU(s) of at most %zu payload octets would make this case send more "
                  "than %u FPDUs (raise seg= or shorten the message)",
                  (unsigned long long)(nseg * repeat), room, IWC_FPDUS_MAX);
        free(pay);
        iwc_buf_free(&termhdr);
        return;
    }
    for (uint64_t k = 0; k < repeat && !r->abort_steps; k++) {
        iw_rdmap_msg mk = m;
        if (auto_msn && mk.ddp.qn < 4)
            mk.ddp.msn = r->tx.msn[mk.ddp.qn]++;
        size_t off = 0;
        do {
            size_t seg = has_pay ? (paylen - off < room ? paylen - off : room) : 0;
            iw_rdmap_msg ms = mk;
            if (ms.ddp.tagged)
                ms.ddp.to = mk.ddp.to + off;
            else
                ms.ddp.mo = mk.ddp.mo + (uint32_t)off;
            bool final = off + seg >= paylen;
            ms.ddp.last = final ? last != 0 : false;
            iwc_buf sb = {0};
            int rc = iwc_seg_encode(&ms, pay ? pay + off : NULL, seg, &sb);
            if (rc < 0) {
                run_error(r, s->line, "encoder refused this message: %s", iw_strerror(rc));
                iwc_buf_free(&sb);
                break;
            }
            /* Mutations apply to the last segment: the one a Terminate answers. */
            frame_out(r, s->line, s->sub, &sb, final ? &mu : NULL, sb.len - seg);
            if (s->sub == IWC_SEND_TERM)
                r->sent_term = true;
            iwc_buf_free(&sb);
            off += seg;
        } while (off < paylen);
    }
    free(pay);
    iwc_buf_free(&termhdr);
}

/* Our MPA Request or Reply from the case's peer: settings. */
void run_mine_from_cfg(run *r, iw_mpa_rr *rr, iw_mpa_rr_type type) {
    const iwc_mpa_cfg *p = &r->c->peer_mpa;
    memset(rr, 0, sizeof *rr);
    rr->type = type;
    rr->m = p->markers == 1;
    rr->c = p->crc != 0; /* RFC 5044 §4.4: CRCs by default */
    rr->rev = (uint8_t)(p->rev >= 0 ? p->rev : IW_MPA_REV2);
    rr->s = p->s >= 0 ? p->s != 0 : rr->rev >= IW_MPA_REV2;
    rr->r = p->r == 1;
    rr->res = (uint8_t)(p->res >= 0 ? p->res : 0);
    rr->v2.p2p = p->p2p == 1;
    int bits = p->rtr >= 0 ? p->rtr : 7;
    if (type == IW_MPA_REPLY && r->theirs_got && p->rtr < 0) {
        /* RFC 6581 §9.2: the requested RTRs we support (all), at least one. */
        bits = (r->theirs.v2.rtr_send ? 1 : 0) | (r->theirs.v2.rtr_write ? 2 : 0) |
               (r->theirs.v2.rtr_read ? 4 : 0);
        if (!bits)
            bits = 2;
    }
    if (type == IW_MPA_REPLY && r->theirs_got && p->p2p < 0)
        rr->v2.p2p = r->theirs.v2.p2p; /* §9.2: A=1 back when asked */
    if (rr->v2.p2p) {
        rr->v2.rtr_send = bits & 1;
        rr->v2.rtr_write = (bits & 2) != 0;
        rr->v2.rtr_read = (bits & 4) != 0;
    }
    rr->v2.ird = (uint16_t)(p->ird >= 0 ? p->ird : 16);
    rr->v2.ord = (uint16_t)(p->ord >= 0 ? p->ord : 16);
    if (type == IW_MPA_REPLY && r->theirs_got && r->theirs.enhanced && p->ord < 0) {
        /* RFC 6581 §9.1: responder ORD <= initiator IRD; 0x3FFF: no negotiation. */
        uint16_t iird = r->theirs.v2.ird;
        rr->v2.ord = iird == IW_MPA_V2_NO_NEG ? IW_MPA_V2_NO_NEG : (iird < 16 ? iird : 16);
    }
    if (type == IW_MPA_REPLY && r->theirs_got && r->theirs.enhanced && p->ird < 0 &&
        r->theirs.v2.ord == IW_MPA_V2_NO_NEG)
        rr->v2.ird = IW_MPA_V2_NO_NEG;
    if (p->has_pd && p->pd_len <= IW_MPA_PD_MAX - (rr->s ? 4 : 0)) {
        memcpy(r->mine_pd, p->pd, p->pd_len);
        rr->ulp_pd = r->mine_pd;
        rr->ulp_pd_len = (uint16_t)p->pd_len;
    }
}

void run_record_mine(run *r, const iw_mpa_rr *rr) {
    r->mine = *rr;
    r->mine.pd = r->mine.ulp_pd = NULL; /* only flags and v2 are used later */
    r->mine_sent = true;
    sent_push(r, 0, rr->type == IW_MPA_REQUEST ? IWC_SEND_MPA_REQUEST : IWC_SEND_MPA_REPLY, false);
}

void run_v2_args(run *r, const iwc_step *s, iw_mpa_v2 *v2) {
    uint64_t v;
    if (run_arg_num(r, s, "p2p", &v))
        v2->p2p = v != 0;
    if (run_arg_num(r, s, "ird", &v))
        v2->ird = (uint16_t)(v & 0x3FFF);
    if (run_arg_num(r, s, "ord", &v))
        v2->ord = (uint16_t)(v & 0x3FFF);
    const iwc_arg *ra = iwc_step_arg(s, "rtr");
    if (ra && ra->word) {
        v2->rtr_send = strstr(ra->word, "send") != NULL;
        v2->rtr_write = strstr(ra->word, "write") != NULL;
        v2->rtr_read = strstr(ra->word, "read") != NULL;
    }
}

/* send: mpa-request / mpa-reply with patches (startup: tcp). */
void run_step_send_rr(run *r, const iwc_step *s) {
    iw_mpa_rr rr;
    iw_mpa_rr_type type = s->sub == IWC_SEND_MPA_REQUEST ? IW_MPA_REQUEST : IW_MPA_REPLY;
    run_mine_from_cfg(r, &rr, type);
    uint64_t v;
    if (run_arg_num(r, s, "m", &v))
        rr.m = v != 0;
    if (run_arg_num(r, s, "c", &v))
        rr.c = v != 0;
    if (run_arg_num(r, s, "r", &v))
        rr.r = v != 0;
    if (run_arg_num(r, s, "rev", &v))
        rr.rev = (uint8_t)v;
    if (run_arg_num(r, s, "s", &v))
        rr.s = v != 0;
    if (run_arg_num(r, s, "res", &v))
        rr.res = (uint8_t)(v & 0xF);
    run_v2_args(r, s, &rr.v2);
    iwc_rr_mut mu = {NULL, -1, 0, NULL, 0};
    char key[IW_MPA_KEY_LEN + 1];
    const iwc_arg *ka = iwc_step_arg(s, "key");
    if (ka && ka->word) {
        if (!strcmp(ka->word, "req") || !strcmp(ka->word, "rep")) {
            memcpy(key, ka->word[2] == 'q' ? IW_MPA_KEY_REQ : IW_MPA_KEY_REP, IW_MPA_KEY_LEN);
        } else if (strlen(ka->word) == IW_MPA_KEY_LEN) {
            memcpy(key, ka->word, IW_MPA_KEY_LEN);
        } else {
            run_error(r, s->line, "key: wants req, rep or exactly 16 characters");
            return;
        }
        mu.key = key;
    }
    if (run_arg_num(r, s, "pd-len", &v))
        mu.pd_len = (int)(v & 0xFFFF);
    uint8_t *big = NULL;
    const iwc_arg *pa = iwc_step_arg(s, "pd");
    if (pa && pa->type == IWC_V_DATA) {
        size_t n = 0;
        big = run_data_make(r, s->line, &pa->d, run_arg_num_or(r, s, "pd-size", 0), &n);
        if (!big)
            return;
        size_t cap = IW_MPA_PD_MAX - (rr.s ? IW_MPA_V2_DATA_LEN : 0);
        size_t fit = n < cap ? n : cap;
        memcpy(r->mine_pd, big, fit);
        rr.ulp_pd = r->mine_pd;
        rr.ulp_pd_len = (uint16_t)fit;
        if (n > cap) {
            mu.pd_big = big + fit;
            mu.pd_big_len = n - fit;
        }
    }
    if (run_arg_num(r, s, "trunc", &v))
        mu.trunc = (size_t)v;
    char err[256];
    iwc_buf out = {0};
    if (iwc_rr_build(&rr, &mu, &out, err, sizeof err) < 0) {
        run_error(r, s->line, "%s", err);
    } else {
        run_record_mine(r, &rr);
        iwc_buf_add(&r->held, out.p, out.len);
        const iwc_arg *sp = iwc_step_arg(s, "split");
        r->nsplit = 0;
        for (int i = 0; sp && i < sp->nlist; i++)
            r->split[r->nsplit++] = (uint32_t)sp->list[i];
        if (!run_arg_num_or(r, s, "hold", 0))
            run_flush_held(r);
    }
    free(big);
    iwc_buf_free(&out);
}

/* ---- MPA startup (startup: auto) and the RTR ---- */

bool run_wait_for(run *r, bool (*cond)(run *), int ms) {
    uint64_t deadline = iwc_now_us() + (uint64_t)ms * 1000;
    while (!cond(r)) {
        if (r->abort_steps || iwc_now_us() >= deadline)
            return cond(r);
        run_svc(r, 10);
        if (r->eof && !cond(r)) {
            run_svc(r, 0);
            return cond(r);
        }
    }
    return true;
}

bool run_have_theirs(run *r) { return r->theirs_got || r->rx_lost; }

static bool never(run *r) {
    (void)r;
    return false;
}

/* --reply-settle-ms: an IUT that switches its socket to FPDU mode only after
 * sending its MPA Reply (siw) loses FPDUs that arrive in between; give it
 * time, still reading what it sends meanwhile. */
void run_reply_settle(run *r) {
    if (r->env->reply_settle_ms > 0)
        run_wait_for(r, never, r->env->reply_settle_ms);
}

static void send_rtr(run *r) {
    /* RFC 6581 §9.2: the initiator sends one of the RTRs the Reply allows,
     * before anything else; the choice is ours (§1.1). */
    const iwc_mpa_cfg *p = &r->c->peer_mpa;
    unsigned offered = (r->mine.v2.rtr_send ? 1u : 0) | (r->mine.v2.rtr_write ? 2u : 0) |
                       (r->mine.v2.rtr_read ? 4u : 0);
    unsigned ok = ((r->theirs.v2.rtr_send ? 1u : 0) | (r->theirs.v2.rtr_write ? 2u : 0) |
                   (r->theirs.v2.rtr_read ? 4u : 0)) &
                  offered;
    unsigned use = p->rtr_use > 0 ? (unsigned)p->rtr_use : ok & 2 ? 2 : ok & 4 ? 4 : ok & 1 ? 1 : 0;
    if (!use) {
        run_fail(r, 0,
                 "the IUT's Reply allows no RTR the runner offered (RFC 6581 §9.2: the "
                 "responder sets at least one requested RTR it supports)");
        r->abort_steps = true;
        return;
    }
    iw_rdmap_msg m;
    msg_defaults(&m, use == 2 ? IW_OP_WRITE : use == 4 ? IW_OP_READ_REQ : IW_OP_SEND);
    if (use == 1)
        m.ddp.msn = r->tx.msn[IW_QN_SEND]++;
    if (use == 4)
        m.ddp.msn = r->tx.msn[IW_QN_READ_REQ]++;
    iwc_buf seg = {0};
    if (iwc_seg_encode(&m, NULL, 0, &seg) == 0 && frame_out(r, 0, 0, &seg, NULL, seg.len) == 0)
        run_flush_held(r);
    iwc_buf_free(&seg);
    run_trace(r, 2, "runner -> RTR (%s)", use == 2 ? "write" : use == 4 ? "read" : "send");
}

/* An RNIC behind verbs accepts work only once its connection is
 * established (siw: ibv_post_send fails before the CM event), so the
 * case's agent steps wait for "connected". Only looked at: a case may still
 * expect the event itself. */
static void await_connected(run *r) {
    const ev_entry *e = run_find_event(r, "connected", NULL, NULL, r->timeout_ms);
    if (e)
        r->ev[e - r->ev].consumed = false;
}

/* Our startup frame: an MPA Request or Reply, or over SCTP the Session
 * Control message it stands for (RFC 6581 §7). */
static int startup_send(run *r, iw_mpa_rr *rr, iwc_buf *out) {
    char err[256];
    if (r->sctp) {
        run_record_mine(r, rr);
        run_sctp_send_rr(r, rr);
        return 0;
    }
    if (iwc_rr_build(rr, NULL, out, err, sizeof err) < 0) {
        run_error(r, 0, "%s", err);
        return -1;
    }
    run_record_mine(r, rr);
    run_tx_write(r, out->p, out->len, NULL, 0);
    return 0;
}

void run_startup_auto(run *r) {
    iw_mpa_rr rr;
    iwc_buf out = {0};
    if (r->c->role == IWC_IUT_RESPONDER) {
        run_mine_from_cfg(r, &rr, IW_MPA_REQUEST);
        if (startup_send(r, &rr, &out) < 0)
            goto done;
        if (!run_wait_for(r, run_have_theirs, r->timeout_ms) || !r->theirs_got) {
            run_fail(r, 0, "MPA startup: %s",
                     r->rx_lost ? "the IUT's MPA Reply is invalid"
                     : r->eof   ? "the IUT closed the connection instead of replying"
                                : "no MPA Reply from the IUT");
            r->abort_steps = true;
            goto done;
        }
        if (r->theirs.type != IW_MPA_REPLY || r->theirs.r) {
            run_fail(r, 0, "MPA startup: the IUT answered with %s",
                     r->theirs.type != IW_MPA_REPLY ? "an MPA Request"
                                                    : "a Reply with R=1 (reject)");
            r->abort_steps = true;
            goto done;
        }
        run_reply_settle(r);
        tx_ready(r, 0);
        await_connected(r);
        if (r->mine.v2.p2p && r->theirs.enhanced && r->theirs.v2.p2p)
            send_rtr(r);
    } else {
        if (!run_wait_for(r, run_have_theirs, r->timeout_ms) || !r->theirs_got) {
            run_fail(r, 0, "MPA startup: %s",
                     r->rx_lost ? "the IUT's MPA Request is invalid"
                                : "no MPA Request from the IUT");
            r->abort_steps = true;
            goto done;
        }
        if (r->theirs.type != IW_MPA_REQUEST) {
            run_fail(r, 0, "MPA startup: the IUT (initiator) sent an MPA Reply");
            r->abort_steps = true;
            goto done;
        }
        run_mine_from_cfg(r, &rr, IW_MPA_REPLY);
        if (r->reject_startup)
            rr.r = true;
        if (startup_send(r, &rr, &out) < 0)
            goto done;
        if (r->reject_startup)
            r->abort_steps = true;
        else if (!rr.r) {
            tx_ready(r, 0);
            await_connected(r);
        }
    }
done:
    iwc_buf_free(&out);
}
