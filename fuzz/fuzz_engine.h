/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared by the engine harnesses (fuzz_conn_rx, fuzz_place, fuzz_diff): an
 * event log, and the checks every engine output stream must pass.
 *
 * The output checks decode what the engine wrote with the codecs
 * (iw_deframer + iw_rdmap_decode, through iw_peer_decode), never with the
 * engine: a startup frame of the right kind, then FPDUs that deframe and
 * decode with no verdict, none longer than the negotiated MULPDU, and at
 * most one Terminate, which must be the last FPDU (RFC 5040 §5.4: nothing
 * is sent after it) and match the IW_EV_TERM_SENT event field by field. */
#ifndef IW_FUZZ_ENGINE_H
#define IW_FUZZ_ENGINE_H

#include <iwarp/engine.h>

#include "fuzz.h"
#include "iw_peer.h"

/* ---- event log ---- */

typedef struct {
    iw_event_type type;
    iw_wc_status status;
    uint64_t wr_id;
    uint32_t len, msn;
    bool solicited, has_inv, has_imm;
    uint32_t inv_stag;
    uint8_t imm[IW_RDMAP_IMM_LEN];
    uint64_t atomic_orig;
    iw_term_info term;
    iw_close_reason close;
    const char *rfc; /* TERM_SENT, CLOSED: the rule's RFC section (static) */
    size_t out_len;  /* engine output drained when the event came */
} fz_ev;

typedef struct {
    fz_ev *v;
    size_t n, cap;
} fz_evlog;

static inline fz_ev *fz_ev_add(fz_evlog *l, const iw_event *e, size_t out_len) {
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        FUZZ_CHECK(l->v != NULL);
    }
    fz_ev *r = &l->v[l->n++];
    memset(r, 0, sizeof *r);
    r->type = e->type;
    r->status = e->status;
    r->wr_id = e->wr_id;
    r->len = e->len;
    r->msn = e->msn;
    r->solicited = e->solicited;
    r->has_inv = e->has_inv;
    r->inv_stag = e->inv_stag;
    r->has_imm = e->has_imm;
    memcpy(r->imm, e->imm, sizeof r->imm);
    r->atomic_orig = e->atomic_orig;
    if (e->type == IW_EV_TERM_SENT || e->type == IW_EV_TERM_RECEIVED) {
        r->term = e->term;
        FUZZ_CHECK(r->term.hdr_len <= sizeof r->term.hdr);
    }
    r->close = e->close;
    r->rfc = e->rfc;
    r->out_len = out_len;
    return r;
}

/* An engine event, with the output length at this instant: bytes_tx counts
 * what was committed, so it is right even inside iw_conn_write. */
static inline fz_ev *fz_ev_log(fz_evlog *l, iw_conn *c, const iw_event *e) {
    iw_conn_stats st;
    iw_conn_get_stats(c, &st);
    return fz_ev_add(l, e, (size_t)st.bytes_tx);
}

static inline bool fz_term_same(const iw_term_info *a, const iw_term_info *b) {
    return a->triple == b->triple && a->m == b->m && a->d == b->d && a->r == b->r &&
           a->ddp_seg_len == b->ddp_seg_len && a->hdr_len == b->hdr_len &&
           memcmp(a->hdr, b->hdr, a->hdr_len) == 0;
}

static inline bool fz_str_same(const char *a, const char *b) {
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* Everything but out_len, which depends on when output was drained, and
 * rfc, which models do not predict (fz_ev_same_rfc adds it). */
static inline bool fz_ev_same(const fz_ev *a, const fz_ev *b) {
    return a->type == b->type && a->status == b->status && a->wr_id == b->wr_id &&
           a->len == b->len && a->msn == b->msn && a->solicited == b->solicited &&
           a->has_inv == b->has_inv && a->inv_stag == b->inv_stag && a->has_imm == b->has_imm &&
           memcmp(a->imm, b->imm, sizeof a->imm) == 0 && a->atomic_orig == b->atomic_orig &&
           fz_term_same(&a->term, &b->term) && a->close == b->close;
}

static inline bool fz_ev_same_rfc(const fz_ev *a, const fz_ev *b) {
    return fz_ev_same(a, b) && fz_str_same(a->rfc, b->rfc);
}

static inline size_t fz_ev_count(const fz_evlog *l, iw_event_type t) {
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++)
        k += l->v[i].type == t;
    return k;
}

static inline const fz_ev *fz_ev_first(const fz_evlog *l, iw_event_type t) {
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].type == t)
            return &l->v[i];
    return NULL;
}

/* ---- the peer's startup ---- */

/* The peer's MPA Request, appended to p: iw_peer_rr_default's (Rev 2 with
 * the enhanced data) with the M and C bits given, or Rev 1 without the
 * enhanced data. */
static inline iw_mpa_rr fz_peer_request(iw_peer *p, bool rev1, bool m, bool c) {
    iw_mpa_rr rr;
    iw_peer_rr_default(&rr, IW_MPA_REQUEST);
    rr.m = m;
    rr.c = c;
    if (rev1) {
        rr.rev = IW_MPA_REV1;
        rr.s = false;
    }
    FUZZ_CHECK(iw_peer_rr(p, &rr) == 0);
    return rr;
}

/* ---- growable octets (engine output) ---- */

typedef struct {
    uint8_t *p;
    size_t n, cap;
} fz_bytes;

static inline uint8_t *fz_bytes_room(fz_bytes *b, size_t more) {
    if (b->n + more > b->cap) {
        while (b->cap < b->n + more)
            b->cap = b->cap ? 2 * b->cap : 4096;
        b->p = realloc(b->p, b->cap);
        FUZZ_CHECK(b->p != NULL);
    }
    return b->p + b->n;
}

/* Drain everything the engine has to send, in pieces of at most `piece`
 * octets (0: 4096) through iw_conn_write. Returns its last result.
 * iw_conn_write copies before it commits, so when a callback fails inside
 * it the octets it committed are in the buffer but not in its result: the
 * stream's own count (bytes_tx) says how many, so the output stays whole. */
static inline iw_ssize fz_drain(iw_conn *c, fz_bytes *out, size_t piece, iw_tstamp now) {
    if (!piece)
        piece = 4096;
    for (;;) {
        uint8_t *w = fz_bytes_room(out, piece);
        iw_conn_stats st0, st1;
        iw_conn_get_stats(c, &st0);
        iw_ssize r = iw_conn_write(c, w, piece, now);
        iw_conn_get_stats(c, &st1);
        size_t took = (size_t)(st1.bytes_tx - st0.bytes_tx);
        FUZZ_CHECK(took <= piece && (r < 0 || (size_t)r == took));
        out->n += took;
        if (r < 0 || (size_t)r < piece)
            return r; /* failed, or nothing more to send now */
    }
}

/* ---- the engine's output, decoded by the codecs ---- */

typedef struct {
    size_t fpdus; /* FPDUs, a Terminate included */
    size_t terms; /* Terminate FPDUs */
    bool have_term;
    iw_term_info term; /* the Terminate as decoded, in iw_term_info form */
} fz_out;

/* Check one direction of engine output. `initiator`: the stream opens with
 * an MPA Request, else a Reply; `info` (NULL before IW_EV_CONNECTED) gives
 * the framing of the FPDUs that follow. */
static inline void fz_check_output(const uint8_t *out, size_t n, bool initiator,
                                   const iw_conn_info *info, fz_out *res) {
    memset(res, 0, sizeof *res);
    if (n == 0)
        return;
    iw_df_cfg cfg = {initiator ? IW_DF_START_REQUEST : IW_DF_START_REPLY,
                     info && info->markers_tx ? IW_DF_ON : IW_DF_OFF,
                     info && info->crc ? IW_DF_ON : IW_DF_OFF, 0};
    iw_peer_trace t = {0};
    FUZZ_CHECK(iw_peer_decode(&t, out, n, &cfg) == 0);
    FUZZ_CHECK(t.n >= 1);
    FUZZ_CHECK(t.v[0].type == (initiator ? IW_FRAME_MPA_REQUEST : IW_FRAME_MPA_REPLY));
    FUZZ_CHECK(t.v[0].verdict.kind == IW_VERDICT_OK);
    bool rejected = t.v[0].rr.r;
    for (size_t i = 1; i < t.n; i++) {
        const iw_peer_frame *f = &t.v[i];
        /* After a Reply with R=1 MPA has exited: nothing more is ours. */
        FUZZ_CHECK(!rejected);
        FUZZ_CHECK(info != NULL); /* FPDUs only after the startup completed */
        FUZZ_CHECK(f->type == IW_FRAME_FPDU);
        FUZZ_CHECK(f->verdict.kind == IW_VERDICT_OK);
        FUZZ_CHECK(f->rdmap_verdict.kind == IW_VERDICT_OK);
        FUZZ_CHECK(f->ulpdu_len <= info->mulpdu); /* RFC 5044 §4.5 */
        FUZZ_CHECK(!res->have_term);              /* RFC 5040 §5.4 */
        res->fpdus++;
        if (f->msg.opcode == IW_OP_TERMINATE) {
            const iw_rdmap_term *tm = &f->msg.u.term;
            res->terms++;
            res->have_term = true;
            iw_term_info *ti = &res->term;
            ti->triple = IW_TERM_TRIPLE(tm->layer, tm->etype, tm->ecode);
            ti->m = tm->m;
            ti->d = tm->d;
            ti->r = tm->r;
            ti->ddp_seg_len = tm->ddp_seg_len;
            if (tm->d) {
                FUZZ_CHECK(tm->ddp_raw_len <= sizeof ti->hdr);
                memcpy(ti->hdr, tm->ddp_raw, tm->ddp_raw_len);
                ti->hdr_len = tm->ddp_raw_len;
            }
            if (tm->r) {
                FUZZ_CHECK(ti->hdr_len + IW_RDMAP_READ_REQ_LEN <= sizeof ti->hdr);
                iw_rdmap_encode_read_req(ti->hdr + ti->hdr_len, IW_RDMAP_READ_REQ_LEN, &tm->rreq);
                ti->hdr_len += IW_RDMAP_READ_REQ_LEN;
            }
            /* The Terminate we send carries a registered triple, and
             * exactly the fields Fig. 10 (RFC 5040 §4.8) allows. */
            FUZZ_CHECK(iw_term_is_registered(ti->triple));
            FUZZ_CHECK(!(f->msg.notes & (IW_NOTE(TERM_TRAILING) | IW_NOTE(TERM_RSVD_BITS))));
        }
    }
    iw_peer_trace_free(&t);
}

/* The Terminate rules for one run: at most one IW_EV_TERM_SENT; with one,
 * the output holds exactly one Terminate, it is the last FPDU, nothing was
 * written after the event (its out_len is the whole output), and it says
 * what the event says. Without one, no Terminate went out. */
static inline void fz_check_terminate(const fz_evlog *ev, const fz_out *o, size_t out_len) {
    size_t sent = fz_ev_count(ev, IW_EV_TERM_SENT);
    FUZZ_CHECK(sent <= 1);
    if (!sent) {
        FUZZ_CHECK(o->terms == 0);
        return;
    }
    const fz_ev *e = fz_ev_first(ev, IW_EV_TERM_SENT);
    FUZZ_CHECK(o->terms == 1 && o->have_term);
    FUZZ_CHECK(e->out_len == out_len);
    FUZZ_CHECK(fz_term_same(&e->term, &o->term));
}

#endif
