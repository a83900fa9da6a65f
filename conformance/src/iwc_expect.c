/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Expectations: each `expect` step judged against what the IUT sent and
 * its agent reported, with the outcomes a case allows. See
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

/* ---- expectations ---- */

static bool cmp_ok(uint64_t got, uint8_t cmp, uint64_t want) {
    switch (cmp) {
    case IWC_NE:
        return got != want;
    case IWC_LE:
        return got <= want;
    case IWC_GE:
        return got >= want;
    default:
        return got == want;
    }
}

static const char *cmp_str(uint8_t cmp) {
    return cmp == IWC_NE ? "!=" : cmp == IWC_LE ? "<=" : cmp == IWC_GE ? ">=" : "=";
}

/* The offending frame of an expect terminate: of=-N counts back from the
 * last FPDU the runner sent before this step (default -1). */
static int offending_frame(run *r, const iwc_step *s) {
    uint64_t v = 0;
    int64_t back = 1;
    if (run_arg_num(r, s, "of", &v))
        back = -(int64_t)v; /* of=-2 evaluates to 2^64-2 */
    if (back < 1)
        back = 1;
    for (int i = r->nsent - 1; i >= 0; i--)
        if (r->sent[i].fpdu && r->sent[i].kind && --back == 0)
            return i;
    return -1;
}

static bool term_arrived(run *r) { return r->term_idx >= 0 || r->eof || r->rx_lost; }
static bool is_eof(run *r) { return r->eof; }

/* M/D/R a Terminate must carry for this triple (RFC 5040 §4.8 Fig. 10,
 * §7.1): 0, 1, or -1 (either; RFC 5040 is ambiguous there). */
static void mdr_default(uint16_t t, unsigned off_opcode, int *m, int *d, int *rr) {
    unsigned layer = iw_term_layer(t), et = iw_term_etype(t);
    if (layer == 2 || (layer == 0 && et == 0) || (layer == 1 && et == 0)) {
        *m = *d = *rr = 0; /* LLP and local catastrophic: no headers */
        return;
    }
    *m = *d = 1;
    *rr = 0;
    if (layer == 0 && et == 1) {
        /* Remote Protection: the Read Request header for a Read Request;
         * Fig. 10 also asks for "the RDMA header" of a Send with Invalidate,
         * which has none defined (wire-facts F), so either is accepted. */
        *rr = off_opcode == IW_OP_READ_REQ ? 1 : off_opcode == IW_OP_READ_RESP ? 0 : -1;
    }
}

static int mdr_arg(run *r, const iwc_step *s, const char *k, int def) {
    const iwc_arg *a = iwc_step_arg(s, k);
    if (!a)
        return def;
    if (a->type == IWC_V_WORD)
        return -1; /* any */
    uint64_t v;
    return run_eval(r, s->line, &a->e, &v) ? v != 0 : def;
}

const ev_entry *run_find_event(run *r, const char *type,
                               bool (*match)(run *, const ev_entry *, const void *),
                               const void *ctx, int wait_ms) {
    uint64_t deadline = iwc_now_us() + (uint64_t)wait_ms * 1000;
    for (;;) {
        for (int i = 0; i < r->nev; i++) {
            ev_entry *e = &r->ev[i];
            if (!e->consumed && !strcmp(run_ev_type(e), type) && (!match || match(r, e, ctx))) {
                e->consumed = true;
                return e;
            }
        }
        uint64_t now = iwc_now_us();
        if (now >= deadline || r->abort_steps)
            return NULL;
        int left = (int)((deadline - now) / 1000);
        run_poll_events(r, left > 50 ? 50 : left);
    }
}

static uint16_t ev_triple(const ev_entry *e) {
    unsigned v[3] = {0, 0, 0};
    static const char *const k[3] = {"layer", "etype", "code"};
    for (int i = 0; i < 3; i++) {
        const iw_json *x = iw_json_get(e->doc, e->node, k[i]);
        if (x && x->type == IW_JSON_NUM && x->is_int && x->i >= 0 && x->i <= 0xFF)
            v[i] = (unsigned)x->i;
    }
    return IW_TERM_TRIPLE(v[0] & 0xF, v[1] & 0xF, v[2]);
}

/* "Terminate 1/1/0 or 0/1/2, or silent drop": the step's outcomes, the
 * triples first so that a message starts "expected Terminate <first>". */
static const char *alts_str(const iwc_step *s, char *buf, size_t n) {
    size_t o = 0;
    int terms = 0;
    buf[0] = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < s->nalt && o < n; i++) {
            const iwc_outcome *a = &s->alt[i];
            if ((a->kind == IWC_OUT_TERM) != (pass == 0))
                continue;
            char b[160];
            int w = a->kind == IWC_OUT_TERM
                        ? snprintf(buf + o, n - o, "%s%s", terms++ ? " or " : "Terminate ",
                                   run_triple_str(a->triple, b, sizeof b))
                        : snprintf(buf + o, n - o, ", or %s", iwc_outcome_str(a, b, sizeof b));
            o += w > 0 ? (size_t)w : 0;
        }
    return buf;
}

static const iwc_outcome *step_alt(const iwc_step *s, unsigned kind, uint16_t triple) {
    for (int i = 0; i < s->nalt; i++)
        if (s->alt[i].kind == kind && (kind != IWC_OUT_TERM || s->alt[i].triple == triple))
            return &s->alt[i];
    return NULL;
}

/* Record the outcome the IUT chose; where the case allowed several, the
 * result says which, with the RFC words that allow it ("conformant, chose
 * silent drop"). */
static void choose(run *r, const iwc_step *s, const iwc_outcome *o) {
    r->chosen = *o;
    r->has_chosen = true;
    if (s->nalt < 2)
        return;
    char b[48];
    const char *why = iwc_case_allow(r->c, o);
    char *prev = r->res->outcome;
    r->res->outcome = prev ? iwc_strf("%s; %s (%s)", prev, iwc_outcome_str(o, b, sizeof b), why)
                           : iwc_strf("%s (%s)", iwc_outcome_str(o, b, sizeof b), why);
    free(prev);
    run_trace(r, 1, "the IUT chose %s", iwc_outcome_str(o, b, sizeof b));
}

/* A recv event with status ok the IUT raised and no step consumed yet: the
 * offending Send was delivered (tells "check not made" from "silent drop"). */
static bool delivered_unclaimed(run *r) {
    run_poll_events(r, 0);
    for (int i = 0; i < r->nev; i++) {
        const ev_entry *e = &r->ev[i];
        const iw_json *st = iw_json_get(e->doc, e->node, "status");
        if (!e->consumed && !strcmp(run_ev_type(e), "recv") && st && st->type == IW_JSON_STR &&
            !strcmp(st->str, "ok"))
            return true;
    }
    return false;
}

void run_exp_terminate(run *r, const iwc_step *s) {
    char a[160], b[160], alts[700];
    r->res->checks++;
    int oi = offending_frame(r, s);
    const sent_frame *of = oi >= 0 ? &r->sent[oi] : NULL;
    bool optional = run_arg_num_or(r, s, "optional", 0) != 0;
    r->has_chosen = false;
    alts_str(s, alts, sizeof alts);
    run_wait_for(r, term_arrived, r->timeout_ms);
    r->term_judged = true;
    if (r->term_idx < 0) {
        const iwc_outcome *closed = step_alt(s, IWC_OUT_CLOSED, 0);
        if (closed && r->eof) {
            /* Torn down without a Terminate; nothing may have landed. */
            for (int i = oi >= 0 ? oi : r->nsent; i < r->nsent; i++)
                r->sent[i].rejected = true;
            r->term_judged = false;
            choose(r, s, closed);
            return;
        }
        const iwc_outcome *unchecked = step_alt(s, IWC_OUT_UNCHECKED, 0);
        const iwc_outcome *drop = step_alt(s, IWC_OUT_DROP, 0);
        if (unchecked && (!drop || delivered_unclaimed(r))) {
            /* The OPTIONAL check was not made: the segment counts as valid. */
            r->term_judged = false;
            choose(r, s, unchecked);
            return;
        }
        /* The offending segment and everything after it must not land
         * (RFC 5041 §7.1; RFC 5044 §8: a dropped segment is not delivered). */
        for (int i = oi >= 0 ? oi : r->nsent; i < r->nsent; i++)
            r->sent[i].rejected = true;
        if (drop) {
            /* A dropped segment is never delivered (RFC 5044 §8: "rather than
             * reporting the error to DDP"); a tagged one is judged by the
             * placement model at the end. */
            if (delivered_unclaimed(r)) {
                run_fail(r, s->line,
                         "expected %s; got no Terminate and the message was delivered (a silently "
                         "dropped segment never reaches the ULP, RFC 5044 §8)",
                         alts);
                return;
            }
            r->term_judged = false; /* a Terminate later is still unexpected */
            choose(r, s, drop);
            return;
        }
        if (optional)
            return;
        int fpdus = 0;
        for (int i = 0; i < r->nrx; i++)
            fpdus += r->rx[i].type == RXF_FPDU;
        run_fail(r, s->line, "expected %s, got none%s", alts,
                 r->eof  ? " (the IUT closed the connection without one)"
                 : fpdus ? " (the IUT carried on sending FPDUs)"
                         : "");
        return;
    }
    /* Whatever happens, the offending segment and everything after it must
     * not land (RFC 5041 §7.1: later segments are dropped). */
    for (int i = oi >= 0 ? oi : r->nsent; i < r->nsent; i++)
        r->sent[i].rejected = true;
    const rx_frame *tf = &r->rx[r->term_idx];
    const iw_rdmap_term *t = &tf->msg.u.term;
    uint16_t got = IW_TERM_TRIPLE(t->layer, t->etype, t->ecode);
    const iwc_outcome *match = step_alt(s, IWC_OUT_TERM, got);
    uint16_t want = match ? got : s->triple;
    if (match) {
        choose(r, s, match);
    } else {
        uint16_t swapped = IW_TERM_TRIPLE(t->etype, t->layer, t->ecode);
        if (step_alt(s, IWC_OUT_TERM, swapped))
            run_fail(r, s->line,
                     "Terminate layer and error-type nibbles swapped: got %X/%X/%X, expected %s "
                     "(RFC 5040 §4.8: Layer is the high nibble of the first octet)",
                     t->layer, t->etype, t->ecode, run_triple_str(swapped, b, sizeof b));
        else
            run_fail(r, s->line, "expected %s, got %s", alts, run_triple_str(got, b, sizeof b));
    }
    /* The Terminate itself: untagged, QN 2, first message there (RFC 5040
     * §4.8, §5.4; RFC 5041 §4.3: MSN starts at 1). */
    const iw_ddp_hdr *h = &tf->msg.ddp;
    if (h->tagged || h->qn != IW_QN_TERMINATE || h->msn != 1 || h->mo != 0 || !h->last)
        run_fail(r, s->line,
                 "the Terminate must be one untagged segment on QN 2 with MSN 1, MO 0, L=1 (RFC "
                 "5040 §5.4, RFC 5041 §4.3); got %s QN %u MSN %u MO %u L=%d",
                 h->tagged ? "tagged" : "untagged", h->qn, h->msn, h->mo, h->last);
    unsigned off_op = of && of->ulpdu_len >= 2 ? of->ulpdu[1] & IW_RDMAP_CTRL_OPCODE : 0xFF;
    int em, ed, er;
    mdr_default(want, off_op, &em, &ed, &er);
    em = mdr_arg(r, s, "m", em);
    ed = mdr_arg(r, s, "d", ed);
    er = mdr_arg(r, s, "r", er);
    const struct {
        const char *n;
        int want;
        bool got;
        const char *why;
    } bits[3] = {{"M", em, t->m, "DDP Segment Length valid"},
                 {"D", ed, t->d, "copied DDP header"},
                 {"R", er, t->r, "copied RDMA Read Request header"}};
    for (int i = 0; i < 3; i++)
        if (bits[i].want >= 0 && bits[i].want != bits[i].got)
            run_fail(r, s->line,
                     "Terminate %s bit: expected %s=%d (%s, RFC 5040 §4.8 Fig. 10), got %s=%d",
                     bits[i].n, bits[i].n, bits[i].want, bits[i].why, bits[i].n, bits[i].got);
    uint64_t seglen;
    bool seglen_given = run_arg_num(r, s, "seglen", &seglen);
    if (!seglen_given && of)
        seglen = of->ulpdu_len;
    if ((t->m || t->d) && (seglen_given || (of && em == 1)) && t->ddp_seg_len != seglen)
        run_fail(r, s->line,
                 "Terminate DDP Segment Length: expected %llu (the offending FPDU's ULPDU_Length, "
                 "RFC 5040 §4.8), got %u",
                 (unsigned long long)seglen, t->ddp_seg_len);
    const iwc_arg *ha = iwc_step_arg(s, "hdr");
    bool check_hdr = !(ha && ha->type == IWC_V_WORD && !strcmp(ha->word, "none"));
    if (check_hdr && t->d && of && t->ddp_raw) {
        size_t want_len = of->ulpdu_len ? iw_ddp_hdr_len(of->ulpdu[0]) : 0;
        size_t cmp = want_len < of->ulpdu_len ? want_len : of->ulpdu_len;
        if (t->ddp_raw_len != want_len)
            run_fail(r, s->line,
                     "Terminate copied DDP header is %zu octets, the offending segment's is %zu "
                     "(RFC 5040 §4.8)",
                     t->ddp_raw_len, want_len);
        else
            for (size_t i = 0; i < cmp; i++)
                if (t->ddp_raw[i] != of->ulpdu[i]) {
                    run_fail(r, s->line,
                             "Terminate copied DDP header differs from the offending segment's at "
                             "octet %zu: expected 0x%02x, got 0x%02x (RFC 5040 §4.8)",
                             i, of->ulpdu[i], t->ddp_raw[i]);
                    break;
                }
    }
    if (check_hdr && t->r && of && off_op == IW_OP_READ_REQ &&
        of->ulpdu_len >= IW_DDP_UNTAGGED_HDR_LEN + IW_RDMAP_READ_REQ_LEN) {
        uint8_t enc[IW_RDMAP_READ_REQ_LEN];
        iw_rdmap_encode_read_req(enc, sizeof enc, &t->rreq);
        if (memcmp(enc, of->ulpdu + IW_DDP_UNTAGGED_HDR_LEN, sizeof enc))
            run_fail(r, s->line,
                     "Terminate copied Read Request header differs from the offending one (RFC "
                     "5040 §4.8)");
    }
    /* RFC 5040 §5.4: after a Terminate the sender sends nothing more. */
    const iwc_arg *aa = iwc_step_arg(s, "after");
    if (!(aa && aa->word && !strcmp(aa->word, "any"))) {
        run_wait_for(r, is_eof, QUIET_MS < r->timeout_ms ? QUIET_MS : r->timeout_ms);
        int after = 0, first = -1;
        for (int i = r->term_idx + 1; i < r->nrx; i++)
            if (r->rx[i].type == RXF_FPDU && after++ == 0)
                first = i;
        if (after)
            run_fail(r, s->line,
                     "the IUT sent %d FPDU(s) after its Terminate (first: %s) (RFC 5040 §5.4: "
                     "nothing may follow a Terminate)",
                     after, iw_rdmap_opcode_str(r->rx[first].msg.opcode));
    }
    const iwc_arg *ea = iwc_step_arg(s, "event");
    if (!(ea && ea->word && !strcmp(ea->word, "no")) &&
        run_term_events_seen(r, s->line, "the agent's terminate_sent event")) {
        const ev_entry *e = run_find_event(r, "terminate_sent", NULL, NULL, r->timeout_ms);
        if (!e)
            run_fail(r, s->line, "the agent reported no terminate_sent event for the Terminate");
        else if (ev_triple(e) != got)
            run_fail(r, s->line, "the agent reported terminate_sent %s but the wire carried %s",
                     run_triple_str(ev_triple(e), a, sizeof a), run_triple_str(got, b, sizeof b));
    }
}

void run_exp_closed(run *r, const iwc_step *s) {
    r->res->checks++;
    int within = r->timeout_ms;
    if (r->c->tags & IWC_TAG_SLOW)
        within = (r->env->agent->caps.mpa_timeout && r->c->iut_mpa.timeout_ms >= 0
                      ? r->c->iut_mpa.timeout_ms
                      : r->env->mpa_timeout_ms) +
                 r->timeout_ms;
    uint64_t v;
    if (run_arg_num(r, s, "within", &v))
        within = (int)(v > 600000 ? 600000 : v);
    run_wait_for(r, is_eof, within);
    if (run_arg_num_or(r, s, "silent", 0)) {
        /* Nothing between our last frame and the close. */
        bool rr = false;
        int fpdus = 0;
        for (int i = r->rx_mark; i < r->nrx; i++) {
            rr |= r->rx[i].type == RXF_RR;
            fpdus += r->rx[i].type == RXF_FPDU;
        }
        if (rr)
            run_fail(r, s->line,
                     "the IUT answered with an MPA %s%s where it must close the connection without "
                     "one",
                     r->theirs.type == IW_MPA_REPLY ? "Reply" : "Request",
                     r->theirs.type == IW_MPA_REPLY && r->theirs.r ? " (R=1)" : "");
        else if (fpdus)
            run_fail(r, s->line, "the IUT sent %d FPDU(s) where it must close the connection",
                     fpdus);
        else if (r->rx_bytes != r->rx_bytes_mark)
            run_fail(r, s->line, "the IUT sent %llu octets where it must close the connection",
                     (unsigned long long)(r->rx_bytes - r->rx_bytes_mark));
    }
    if (!r->eof)
        run_fail(r, s->line,
                 "the IUT did not close the %s within %d ms: it must close the connection here",
                 r->sctp ? "DDP stream (no Session Terminate, the association still up)"
                         : "TCP connection",
                 within);
}

static bool mpa_field(const rx_frame *f, const char *k, uint64_t *v) {
    const iw_mpa_rr *rr = &f->rr;
    if (!strcmp(k, "m"))
        *v = rr->m;
    else if (!strcmp(k, "c"))
        *v = rr->c;
    else if (!strcmp(k, "r"))
        *v = rr->r;
    else if (!strcmp(k, "s"))
        *v = rr->s;
    else if (!strcmp(k, "res"))
        *v = rr->res;
    else if (!strcmp(k, "rev"))
        *v = rr->rev;
    else if (!strcmp(k, "p2p"))
        *v = rr->enhanced && rr->v2.p2p;
    else if (!strcmp(k, "rtr-send"))
        *v = rr->enhanced && rr->v2.rtr_send;
    else if (!strcmp(k, "rtr-write"))
        *v = rr->enhanced && rr->v2.rtr_write;
    else if (!strcmp(k, "rtr-read"))
        *v = rr->enhanced && rr->v2.rtr_read;
    else if (!strcmp(k, "ird"))
        *v = rr->v2.ird;
    else if (!strcmp(k, "ord"))
        *v = rr->v2.ord;
    else if (!strcmp(k, "pd-len"))
        *v = rr->pd_len;
    else
        return false;
    return true;
}

void run_exp_mpa(run *r, const iwc_step *s) {
    r->res->checks++;
    iw_mpa_rr_type want = s->sub == IWC_EXPECT_MPA_REPLY ? IW_MPA_REPLY : IW_MPA_REQUEST;
    const char *wn = want == IW_MPA_REPLY ? "Reply" : "Request";
    run_wait_for(r, run_have_theirs, r->timeout_ms);
    const rx_frame *f = NULL;
    for (int i = 0; i < r->nrx; i++)
        if (r->rx[i].type == RXF_RR || r->rx[i].type == RXF_RR_BAD)
            f = &r->rx[i];
    if (!f) {
        run_fail(r, s->line, "expected an MPA %s from the IUT, got none%s", wn,
                 r->eof ? " (it closed the connection)" : "");
        return;
    }
    if (f->type == RXF_RR_BAD) {
        run_fail(r, s->line, "the IUT's MPA frame is invalid: %s (%s)",
                 iw_close_str(f->verdict.close), f->verdict.rfc ? f->verdict.rfc : "");
        return;
    }
    if (f->rr.type != want) {
        run_fail(r, s->line, "expected an MPA %s, the IUT sent an MPA %s", wn,
                 f->rr.type == IW_MPA_REPLY ? "Reply" : "Request");
        return;
    }
    if (want == IW_MPA_REPLY && !f->rr.r)
        run_reply_settle(r);
    for (int i = 0; i < s->nargs; i++) {
        const iwc_arg *a = &s->args[i];
        if (!strcmp(a->key, "pd")) {
            size_t n = 0;
            uint8_t *b = run_data_make(r, s->line, &a->d, f->rr.ulp_pd_len, &n);
            if (!b)
                return;
            if (n != f->rr.ulp_pd_len || (n && memcmp(b, f->rr.ulp_pd, n))) {
                char hw[65], hg[65];
                iwc_hex(hw, b, n < 32 ? n : 32);
                iwc_hex(hg, f->rr.ulp_pd ? f->rr.ulp_pd : b,
                        f->rr.ulp_pd_len < 32 ? f->rr.ulp_pd_len : 32);
                run_fail(r, s->line,
                         "MPA %s private data: expected %zu octets %s%s, got %u octets %s%s", wn, n,
                         hw, n > 32 ? "..." : "", f->rr.ulp_pd_len, hg,
                         f->rr.ulp_pd_len > 32 ? "..." : "");
            }
            free(b);
            continue;
        }
        if (!strcmp(a->key, "key"))
            continue; /* the type check above is the key check */
        uint64_t got, w;
        if (!mpa_field(f, a->key, &got) || !run_eval(r, s->line, &a->e, &w))
            continue;
        if (!cmp_ok(got, a->cmp, w))
            run_fail(r, s->line, "MPA %s field %s: expected %s %llu, got %llu", wn, a->key,
                     cmp_str(a->cmp), (unsigned long long)w, (unsigned long long)got);
    }
}

static int opcode_of(const char *name) {
    static const char *const n[] = {"write",    "read-req", "read-resp",   "send",
                                    "send-inv", "send-se",  "send-se-inv", "term",
                                    "imm",      "imm-se",   "atomic",      "atomic-resp"};
    for (int i = 0; i < 12; i++)
        if (!strcmp(n[i], name))
            return i;
    return -1;
}

static bool fpdu_field(const iw_rdmap_msg *m, const char *k, uint64_t *v) {
    if (!strcmp(k, "stag"))
        *v = m->opcode == IW_OP_ATOMIC_REQ ? m->u.atomic_req.stag : m->ddp.stag;
    else if (!strcmp(k, "to"))
        *v = m->opcode == IW_OP_ATOMIC_REQ ? m->u.atomic_req.to : m->ddp.to;
    else if (!strcmp(k, "qn"))
        *v = m->ddp.qn;
    else if (!strcmp(k, "msn"))
        *v = m->ddp.msn;
    else if (!strcmp(k, "mo"))
        *v = m->ddp.mo;
    else if (!strcmp(k, "len"))
        *v = m->payload_len;
    else if (!strcmp(k, "last"))
        *v = m->ddp.last;
    else if (!strcmp(k, "inv"))
        *v = m->ddp.rsvd_ulp2;
    else if (!strcmp(k, "size"))
        *v = m->u.read_req.read_size;
    else if (!strcmp(k, "sink-stag"))
        *v = m->u.read_req.sink_stag;
    else if (!strcmp(k, "sink-to"))
        *v = m->u.read_req.sink_to;
    else if (!strcmp(k, "src-stag"))
        *v = m->u.read_req.src_stag;
    else if (!strcmp(k, "src-to"))
        *v = m->u.read_req.src_to;
    else if (!strcmp(k, "orig"))
        *v = m->u.atomic_resp.orig;
    else if (!strcmp(k, "req-id"))
        *v = m->opcode == IW_OP_ATOMIC_REQ ? m->u.atomic_req.req_id : m->u.atomic_resp.req_id;
    else
        return false;
    return true;
}

static bool have_fpdu_op(run *r) {
    for (int i = 0; i < r->nrx; i++)
        if (r->rx[i].type == RXF_FPDU && !r->rx[i].consumed &&
            r->rx[i].rverdict.kind == IW_VERDICT_OK && r->rx[i].msg.opcode == r->want_op)
            return true;
    return r->eof;
}

void run_exp_fpdu(run *r, const iwc_step *s) {
    r->res->checks++;
    r->want_op = opcode_of(s->word);
    run_wait_for(r, have_fpdu_op, r->timeout_ms);
    rx_frame *f = NULL;
    for (int i = 0; i < r->nrx && !f; i++)
        if (r->rx[i].type == RXF_FPDU && !r->rx[i].consumed &&
            r->rx[i].rverdict.kind == IW_VERDICT_OK && r->rx[i].msg.opcode == r->want_op)
            f = &r->rx[i];
    if (!f) {
        run_fail(r, s->line, "expected %s from the IUT, got none%s",
                 iw_rdmap_opcode_str((unsigned)r->want_op),
                 r->term_idx >= 0 ? " (it sent a Terminate)"
                 : r->eof         ? " (it closed the connection)"
                                  : "");
        return;
    }
    f->consumed = true;
    const iw_rdmap_msg *m = &f->msg;
    for (int i = 0; i < s->nargs; i++) {
        const iwc_arg *a = &s->args[i];
        if (!strcmp(a->key, "data")) {
            size_t n = 0;
            uint8_t *b = run_data_make(r, s->line, &a->d, m->payload_len, &n);
            if (!b)
                return;
            if (n != m->payload_len || (n && memcmp(b, m->payload, n)))
                run_fail(r, s->line, "%s payload differs from the expected %zu octets",
                         iw_rdmap_opcode_str(m->opcode), n);
            free(b);
            continue;
        }
        uint64_t got, w;
        if (!fpdu_field(m, a->key, &got) || !run_eval(r, s->line, &a->e, &w))
            continue;
        if (!cmp_ok(got, a->cmp, w))
            run_fail(r, s->line, "%s field %s: expected %s 0x%llx, got 0x%llx",
                     iw_rdmap_opcode_str(m->opcode), a->key, cmp_str(a->cmp), (unsigned long long)w,
                     (unsigned long long)got);
    }
}

/* Event fields: dotted paths into the event object; data= is data_hex. */
static const iw_json *ev_field(const ev_entry *e, const char *key) {
    char path[64];
    snprintf(path, sizeof path, "%s", !strcmp(key, "data") ? "data_hex" : key);
    const iw_json *n = e->node;
    char *save = NULL;
    for (char *k = strtok_r(path, ".", &save); k && n; k = strtok_r(NULL, ".", &save))
        n = n->type == IW_JSON_OBJ ? iw_json_get(e->doc, n, k) : NULL;
    return n;
}

static bool json_u64(const iw_json *j, const char *key, uint64_t *out) {
    if (j->type == IW_JSON_NUM && j->is_int && j->i >= 0) {
        *out = (uint64_t)j->i;
        return true;
    }
    if (j->type == IW_JSON_BOOL) {
        *out = j->b;
        return true;
    }
    if (j->type != IW_JSON_STR)
        return false;
    const char *s = j->str;
    size_t n = j->len;
    bool hexfield = strlen(key) > 4 && !strcmp(key + strlen(key) - 4, "_hex");
    if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        s += 2;
        n -= 2;
    } else if (!hexfield) {
        return false;
    }
    if (n == 0 || n > 16)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        int h = iw_json_hexval(s[i]);
        if (h < 0)
            return false;
        v = v << 4 | (uint64_t)h;
    }
    *out = v;
    return true;
}

typedef struct ev_match_ctx {
    const iwc_step *s;
} ev_match_ctx;

/* An agent marks a field it cannot observe with <field>_source "unknown"
 * or "requested" (for "mpa.crc": mpa_source.crc); such a field matches
 * anything. */
static bool ev_unknown(const ev_entry *e, const char *key) {
    char path[80];
    const char *dot = strchr(key, '.');
    if (dot)
        snprintf(path, sizeof path, "%.*s_source%s", (int)(dot - key), key, dot);
    else
        snprintf(path, sizeof path, "%s_source", key);
    const iw_json *j = ev_field(e, path);
    /* "requested": what the agent asked for, not what is in effect */
    return j && j->type == IW_JSON_STR &&
           (!strcmp(j->str, "unknown") || !strcmp(j->str, "requested"));
}

static bool ev_arg_ok(run *r, const ev_entry *e, const iwc_arg *a) {
    if (ev_unknown(e, a->key)) {
        run_note(r, 0, "%s event field '%s' not checked: the agent cannot observe it",
                 run_ev_type(e), a->key);
        return true;
    }
    const iw_json *j = ev_field(e, a->key);
    if (!j)
        return false;
    if (a->type == IWC_V_DATA) {
        if (j->type != IW_JSON_STR || j->len % 2)
            return false;
        size_t n = j->len / 2;
        uint8_t *got = malloc(n + 1);
        if (!got)
            return false;
        for (size_t i = 0; i < n; i++) {
            int hi = iw_json_hexval(j->str[2 * i]), lo = iw_json_hexval(j->str[2 * i + 1]);
            got[i] = (uint8_t)((hi < 0 ? 0 : hi) << 4 | (lo < 0 ? 0 : lo));
        }
        size_t wn = 0;
        uint8_t *w = run_data_make(r, 0, &a->d, n, &wn);
        bool ok = w && wn == n && (!n || !memcmp(w, got, n));
        free(w);
        free(got);
        return ok;
    }
    if (a->type == IWC_V_EXPR) {
        uint64_t got, w;
        return json_u64(j, a->key, &got) && run_eval(r, 0, &a->e, &w) && cmp_ok(got, a->cmp, w);
    }
    if (a->type == IWC_V_WORD) {
        bool eq;
        if (j->type == IW_JSON_BOOL)
            eq = j->b == (!strcmp(a->word, "true") || !strcmp(a->word, "yes"));
        else
            eq = j->type == IW_JSON_STR && !strcmp(j->str, a->word);
        return a->cmp == IWC_NE ? !eq : eq;
    }
    return false;
}

static bool ev_match(run *r, const ev_entry *e, const void *ctx) {
    const iwc_step *s = ((const ev_match_ctx *)ctx)->s;
    for (int i = 0; i < s->nargs; i++)
        if (strcmp(s->args[i].key, "within") && !ev_arg_ok(r, e, &s->args[i]))
            return false;
    return true;
}

static void describe_events(run *r, const char *type, char *out, size_t n) {
    size_t k = 0;
    int cnt = 0;
    out[0] = 0;
    for (int i = 0; i < r->nev && k + 8 < n; i++) {
        if (strcmp(run_ev_type(&r->ev[i]), type))
            continue;
        cnt++;
        /* A compact view of the fields that most often differ. */
        static const char *const keys[] = {
            "status",           "len",     "layer",   "etype",   "code",    "reason",
            "invalidated_stag", "mpa.rev", "mpa.crc", "mpa.ird", "mpa.ord", "mpa.peer_ird",
            "mpa.peer_ord"};
        int w = snprintf(out + k, n - k, "%s{", cnt > 1 ? ", " : "");
        k += w > 0 ? (size_t)w : 0;
        for (size_t q = 0; q < sizeof keys / sizeof *keys && k + 8 < n; q++) {
            const iw_json *j = ev_field(&r->ev[i], keys[q]);
            if (!j)
                continue;
            char val[48];
            if (j->type == IW_JSON_STR)
                snprintf(val, sizeof val, "%s", j->str);
            else if (j->type == IW_JSON_NUM)
                snprintf(val, sizeof val, "%lld", (long long)j->i);
            else if (j->type == IW_JSON_BOOL)
                snprintf(val, sizeof val, "%s", j->b ? "true" : "false");
            else
                continue;
            w = snprintf(out + k, n - k, "%s=%s%s ", keys[q], val,
                         ev_unknown(&r->ev[i], keys[q]) ? "(unknown)" : "");
            k += w > 0 ? (size_t)w : 0;
        }
        if (k + 2 < n) {
            if (k && out[k - 1] == ' ')
                k--;
            out[k++] = '}';
            out[k] = 0;
        }
    }
    if (!cnt)
        snprintf(out, n, "none");
}

static bool is_term_event(const char *w) {
    return !strcmp(w, "terminate_sent") || !strcmp(w, "terminate_received");
}

void run_exp_event(run *r, const iwc_step *s) {
    r->res->checks++;
    if (is_term_event(s->word) && !run_term_events_seen(r, s->line, "event"))
        return;
    ev_match_ctx ctx = {s};
    if (run_find_event(r, s->word, ev_match, &ctx, r->timeout_ms))
        return;
    char got[512];
    describe_events(r, s->word, got, sizeof got);
    char want[512];
    size_t k = 0;
    want[0] = 0;
    for (int i = 0; i < s->nargs && k + 4 < sizeof want; i++) {
        const iwc_arg *a = &s->args[i];
        uint64_t v = 0;
        char val[40];
        if (a->type == IWC_V_WORD)
            snprintf(val, sizeof val, "%s", a->word);
        else if (a->type == IWC_V_EXPR && run_eval(r, s->line, &a->e, &v))
            snprintf(val, sizeof val, v > 0xFFFF ? "0x%llx" : "%llu", (unsigned long long)v);
        else
            snprintf(val, sizeof val, "<data>");
        int w = snprintf(want + k, sizeof want - k, " %s%s%s", a->key, cmp_str(a->cmp), val);
        k += w > 0 ? (size_t)w : 0;
    }
    run_fail(r, s->line, "expected agent event %s%s, got %s", s->word, want, got);
}

void run_exp_no_event(run *r, const iwc_step *s) {
    r->res->checks++;
    if (is_term_event(s->word) && !run_term_events_seen(r, s->line, "no-event"))
        return;
    int within = (int)run_arg_num_or(r, s, "within", 200);
    ev_match_ctx ctx = {s};
    const ev_entry *e = run_find_event(r, s->word, ev_match, &ctx, within);
    if (e) {
        r->ev[e - r->ev].consumed = false; /* only looked at */
        run_fail(r, s->line, "the agent reported a %s event the IUT must not raise here", s->word);
    }
}

/* read_mr of [off, off+len) of an IUT region, in requests of at most
 * IWC_AGENT_DATA_MAX octets (what the agents answer); NULL after an
 * error. */
static uint8_t *read_region(run *r, int line, int ri, uint64_t off, uint64_t len) {
    uint8_t *all = malloc(len ? len : 1);
    if (!all) {
        run_error(r, line, "out of memory reading %llu octets back", (unsigned long long)len);
        return NULL;
    }
    uint64_t done = 0;
    do {
        uint64_t n = len - done < IWC_AGENT_DATA_MAX ? len - done : IWC_AGENT_DATA_MAX;
        iwc_req q;
        if (iwc_req_begin(&q, "read_mr") < 0)
            goto fail;
        iw_jw_hex32(&q.j, "stag", r->reg[ri].stag);
        iw_jw_uint(&q.j, "offset", off + done);
        iw_jw_uint(&q.j, "len", n);
        iw_json_doc *d = run_agent_ok(r, line, iwc_req_end(&q), "read_mr");
        iwc_req_free(&q);
        if (!d)
            goto fail;
        uint8_t *b = NULL;
        size_t got = 0;
        char err[128];
        if (iw_json_hex(d, &d->nodes[0], "data_hex", true, (size_t)n, &b, &got, err, sizeof err) <
                0 ||
            got != n) {
            run_error(r, line, "agent read_mr: %s", got != n ? "wrong length" : err);
            free(b);
            run_doc_free(d);
            goto fail;
        }
        if (n)
            memcpy(all + done, b, n);
        free(b);
        run_doc_free(d);
        done += n;
    } while (done < len);
    return all;
fail:
    free(all);
    return NULL;
}

/* Compare an IUT region range with the model; waits for late placement
 * unless the stream is over (nothing more can land then). */
void run_check_region(run *r, int line, int ri, uint64_t off, uint64_t len) {
    const char *name = r->c->regions[ri].name;
    region_rt *g = &r->reg[ri];
    if (g->gone)
        return;
    if (off > g->len || len > g->len - off) {
        run_error(r, line, "region %s: range %llu+%llu is outside it", name,
                  (unsigned long long)off, (unsigned long long)len);
        return;
    }
    uint8_t *care = NULL;
    uint8_t *model = run_model_build_mask(r, ri, &care);
    if (!model)
        return;
    uint64_t deadline = iwc_now_us() + (uint64_t)r->timeout_ms * 1000;
    for (;;) {
        uint8_t *got = read_region(r, line, ri, off, len);
        if (!got)
            break;
        size_t diff = 0, first = 0;
        for (uint64_t i = 0; i < len; i++)
            if (care[off + i] && got[i] != model[off + i] && diff++ == 0)
                first = (size_t)i;
        if (!diff) {
            free(got);
            break;
        }
        bool settled = r->term_idx >= 0 || r->eof || r->rejected;
        if (settled || iwc_now_us() >= deadline) {
            run_fail(r, line,
                     "region %s changed outside the expected placement: %zu octet(s) differ, first "
                     "at offset %llu (expected 0x%02x, got 0x%02x)",
                     name, diff, (unsigned long long)(off + first), model[off + first], got[first]);
            free(got);
            break;
        }
        free(got);
        run_svc(r, 10);
    }
    free(model);
    free(care);
}

void run_exp_region(run *r, const iwc_step *s) {
    r->res->checks++;
    int ri = s->region;
    uint64_t at = run_arg_num_or(r, s, "at", 0);
    const iwc_arg *da = iwc_step_arg(s, "data");
    if (!da) {
        run_check_region(r, s->line, ri, 0, r->reg[ri].len);
        return;
    }
    uint64_t len = run_arg_num_or(r, s, "len", r->reg[ri].len > at ? r->reg[ri].len - at : 0);
    size_t n = 0;
    uint8_t *b = run_data_make(r, s->line, &da->d, len, &n);
    if (!b)
        return;
    /* Declared placement: from now on the model expects these octets. */
    run_model_add(r, ri, at, b, n, -1);
    free(b);
    run_check_region(r, s->line, ri, at, n);
}

void run_exp_peer_region(run *r, const iwc_step *s) {
    r->res->checks++;
    region_rt *g = &r->reg[s->region];
    uint64_t at = run_arg_num_or(r, s, "at", 0);
    uint64_t len = run_arg_num_or(r, s, "len", g->len > at ? g->len - at : 0);
    const iwc_arg *da = iwc_step_arg(s, "data");
    if (!da || at > g->len || len > g->len - at) {
        run_error(r, s->line, "expect peer-region: wants data= inside the region");
        return;
    }
    size_t n = 0;
    uint8_t *b = run_data_make(r, s->line, &da->d, len, &n);
    if (!b)
        return;
    uint64_t deadline = iwc_now_us() + (uint64_t)r->timeout_ms * 1000;
    while (memcmp(g->mem + at, b, n) && iwc_now_us() < deadline && !r->eof)
        run_svc(r, 10);
    run_svc(r, 0);
    if (memcmp(g->mem + at, b, n)) {
        size_t first = 0;
        while (g->mem[at + first] == b[first])
            first++;
        run_fail(r, s->line,
                 "runner region %s does not hold the expected %zu octets: first difference at "
                 "offset %llu (expected 0x%02x, got 0x%02x)",
                 s->word, n, (unsigned long long)(at + first), b[first], g->mem[at + first]);
    }
    free(b);
}

void run_exp_peer_u64(run *r, const iwc_step *s) {
    r->res->checks++;
    region_rt *g = &r->reg[s->region];
    uint64_t at = run_arg_num_or(r, s, "at", 0), want = 0;
    const iwc_arg *va = iwc_step_arg(s, "value");
    if (at + 8 > g->len || !va || !run_eval(r, s->line, &va->e, &want)) {
        run_error(r, s->line, "expect peer-u64: at= must leave 8 octets in the region");
        return;
    }
    uint64_t deadline = iwc_now_us() + (uint64_t)r->timeout_ms * 1000;
    while (!cmp_ok(run_rd64(g->mem + at), va->cmp, want) && iwc_now_us() < deadline && !r->eof)
        run_svc(r, 10);
    uint64_t got = run_rd64(g->mem + at);
    if (!cmp_ok(got, va->cmp, want))
        run_fail(r, s->line,
                 "runner region %s at %llu: expected a 64-bit value %s 0x%llx, got 0x%llx", s->word,
                 (unsigned long long)at, cmp_str(va->cmp), (unsigned long long)want,
                 (unsigned long long)got);
}

void run_check_guard(run *r, int line, int ri) {
    if (!r->env->agent->caps.guard || r->reg[ri].gone)
        return;
    iwc_req q;
    if (iwc_req_begin(&q, "guard") < 0)
        return;
    iw_jw_hex32(&q.j, "stag", r->reg[ri].stag);
    iw_json_doc *d = run_agent_ok(r, line, iwc_req_end(&q), "guard");
    iwc_req_free(&q);
    if (!d)
        return;
    bool intact = false;
    char err[64];
    iw_json_bool(d, &d->nodes[0], "intact", &intact, err, sizeof err);
    if (!intact)
        run_fail(r, line,
                 "the guard octets around region %s were overwritten: a placement went outside "
                 "its bounds",
                 r->c->regions[ri].name);
    run_doc_free(d);
}

void run_exp_quiet(run *r, const iwc_step *s) {
    r->res->checks++;
    int ms = (int)run_arg_num_or(r, s, "ms", 200);
    int before = r->nrx;
    uint64_t deadline = iwc_now_us() + (uint64_t)ms * 1000;
    while (iwc_now_us() < deadline && !r->eof)
        run_svc(r, 10);
    int n = 0, first = -1;
    for (int i = before; i < r->nrx; i++)
        if (r->rx[i].type == RXF_FPDU && n++ == 0)
            first = i;
    if (n)
        run_fail(r, s->line, "the IUT sent %d FPDU(s) (first: %s) where it must stay silent", n,
                 iw_rdmap_opcode_str(r->rx[first].msg.opcode));
}

static bool have_peer_msg(run *r) {
    for (int i = 0; i < r->npm; i++)
        if (r->pm[i].done && !r->pm[i].consumed && !r->pm[i].rtr)
            return true;
    return r->eof || r->term_idx >= 0;
}

void run_exp_peer_recv(run *r, const iwc_step *s) {
    r->res->checks++;
    run_wait_for(r, have_peer_msg, r->timeout_ms);
    peer_msg *pm = NULL;
    for (int i = 0; i < r->npm && !pm; i++)
        if (r->pm[i].done && !r->pm[i].consumed && !r->pm[i].rtr)
            pm = &r->pm[i];
    if (!pm) {
        run_fail(r, s->line, "expected a %s from the IUT, got none",
                 s->word ? s->word : "Send or Immediate Data message");
        return;
    }
    pm->consumed = true;
    if (s->word && opcode_of(s->word) != pm->opcode)
        run_fail(r, s->line, "expected %s from the IUT, got %s", s->word,
                 iw_rdmap_opcode_str(pm->opcode));
    uint64_t v;
    if (run_arg_num(r, s, "len", &v) && v != pm->data.len)
        run_fail(r, s->line, "message from the IUT has %zu octets, expected %llu", pm->data.len,
                 (unsigned long long)v);
    if (run_arg_num(r, s, "inv", &v) && v != pm->inv)
        run_fail(r, s->line, "Invalidate STag 0x%08x, expected 0x%08llx", pm->inv,
                 (unsigned long long)v);
    if (run_arg_num(r, s, "solicited", &v)) {
        bool se = pm->opcode == IW_OP_SEND_SE || pm->opcode == IW_OP_SEND_SE_INV ||
                  pm->opcode == IW_OP_IMM_SE;
        if (se != (v != 0))
            run_fail(r, s->line, "solicited event: expected %d, got %d", v != 0, se);
    }
    const iwc_arg *da = iwc_step_arg(s, "data");
    if (da) {
        size_t n = 0;
        uint8_t *b = run_data_make(r, s->line, &da->d, pm->data.len, &n);
        if (b && (n != pm->data.len || (n && memcmp(b, pm->data.p, n))))
            run_fail(r, s->line, "message data from the IUT differs from the expected %zu octets",
                     n);
        free(b);
    }
    const iwc_arg *ia = iwc_step_arg(s, "imm");
    if (ia) {
        size_t n = 0;
        uint8_t *b = run_data_make(r, s->line, &ia->d, 8, &n);
        if (b && (!pm->has_imm || n != 8 || memcmp(b, pm->imm, 8)))
            run_fail(r, s->line, "Immediate Data from the IUT differs from the expected 8 octets");
        free(b);
    }
}
