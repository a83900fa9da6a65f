/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Stateful placement: the engine as MPA responder against a raw peer
 * (iw_peer.c), with memory registered, invalidated and deregistered
 * between the peer's segments, checked after every step against an
 * independent reference model of RFC 5041 §7.1 / RFC 5040 §7.2 / RFC 7306
 * §8 and the choices docs/architecture.md documents where the RFCs name no
 * code.
 *
 * Memory: one arena of 16 slots of 1024 octets; regions and receive buffers
 * are carved out of [64, 960) of a slot, so every slot keeps 64 guard
 * octets on each side. Regions may overlap (memory may be registered
 * twice). A shadow copy holds what the arena must contain.
 *
 * Input: [cfg][emss] then 16-octet records, one step each:
 *   cfg bit 0: the engine wants markers (the peer inserts them); bit 1: the
 *     engine's C bit; bit 2: the peer's C bit; bit 3: the peer's Request is
 *     MPA Rev 1; bit 4: the peer wants markers (the engine inserts them);
 *     bits 5-7: IRD (0..7). emss: bit 7 sets the engine's cut_through;
 *     bits 0-6: its EMSS is 128 + 8 * v (its Read Responses are segmented
 *     at MULPDU).
 *   r[0] % 10 picks the step:
 *   0 REG     r1: slot (bits 0-3), the other PD (bit 4); r2-3 offset, r4-5
 *             length (both cut to the slot); r6 TO mode: 0 VA-like, 1 zero,
 *             2 just below 2^64, 3 r7-14 as given; r15: access bits 0-3,
 *             bit 4 "cannot be invalidated". Up to 24 regions per input.
 *   1 DEREG   r1: region index (live or not)
 *   2 INVAL   r1: region index (local invalidate)
 *   3 RECV    r1 slot, r2-3 offset, r4-5 length: post a QN 0 buffer
 *   4 READ    r1 sink region, r2-3 sink offset, r4-5 size, r6-9 the peer's
 *             source STag: the engine posts an RDMA Read
 *   5-9 SEG   the peer sends one DDP segment:
 *             r1: opcode (bits 0-3), flip T (4), L = 0 (5), bad CRC (6),
 *                 bad marker (7: the first marker inside the FPDU is off by 4)
 *             r2: STag mode (bits 0-1: region r3 / region r3 with its key
 *                 + 1 / (r3 << 8 | r5) / 0), TO or MO mode (bits 2-3: the
 *                 natural one + r4-5 / r4-5 / 2^64 - 1 - r4-5 / r4-5 << 48),
 *                 MSN mode (bits 4-5: natural / natural + (int8) r10 /
 *                 r10 << 24 | r10 / natural - 1), DV = 2 (6), RV = 2 (7).
 *                 The TO mode sets a Send's MO too; other untagged messages
 *                 get MO 0, or r4-5 in the absolute mode.
 *             r3: region index; r4-5: offset; r6-7: payload length % 2049
 *             r8: bits 0-6 how the split run cuts this segment's octets
 *                 (0: one read; else random pieces through rx_iov/rx_commit
 *                 and iw_conn_recv), bit 7 hold: do not drain output after
 *                 this step (responses pile up against the IRD)
 *             r9: QN mode (bits 0-1: natural / 4 + r10 / natural + 1 / 3),
 *                 truncate the ULPDU to 4 * (v - 1) octets (bits 2-4, v > 0)
 *             r11-15 per opcode: Read Request: size (r11-12), source region
 *                 (r13), source offset r14 * 8, source modes (r15, as r2
 *                 bits 0-3); Atomic Request: r11 bits 0-1 AOpCode (FetchAdd,
 *                 CmpSwap, 1, 0xF), bit 2 random masks, bit 3 compare with
 *                 the current value, r12-15 operand seed; Terminate: triple
 *                 (r11-12), M/D/R (r13 bits 0-2); Send with Invalidate: the
 *                 STag to invalidate is chosen by r2/r3 as above;
 *                 Immediate Data: r11-15 seed the 8 octets.
 *
 * Each input runs twice: "whole" feeds each step's octets with one
 * iw_conn_recv, "split" cuts them as r8 says, through iw_conn_rx_iov /
 * iw_conn_rx_commit (reads landing straight in the engine's iovecs, short
 * ones included) and iw_conn_recv. After every step of both runs:
 *  - the arena equals the shadow: nothing outside a region with the
 *    required access or a posted buffer changed, and what changed inside is
 *    exactly the segment's payload at its offset;
 *  - the step's events are exactly the model's (placement completions,
 *    RECV with MSN 1, 2, 3... on QN 0, READ_DONE, flushes, TERM_SENT /
 *    TERM_RECEIVED), so each segment ends in exactly one outcome: placed,
 *    or the Terminate (triple, M/D/R, segment length, copied headers) the
 *    model names;
 *  - what the engine sends is what the model expects: its own Read
 *    Requests, Read Responses carrying the shadow's octets, Atomic
 *    Responses with the original value, the one Terminate, last;
 *  - after a Terminate nothing is placed, delivered or sent.
 * Then the two runs must agree on events, output and final memory.
 *
 * Placement before verification. With CRCs in use the engine verifies an
 * FPDU before DDP sees it (RFC 5044 §6): a segment the model terminates for
 * its CRC or a marker places nothing. Two cases may place first: the
 * cut_through setting (zero copy, as siw and hardware RNICs: the message
 * still never completes), and markers without CRCs (§6 asks only for the
 * CRC before DDP, and the marker verdict comes with the FPDU's end). There
 * the octets the segment would have placed may hold their old value or the
 * payload, all or nothing, and are left out of the whole/split comparison.
 * Everything else is exact. */
#include "fuzz_engine.h"

#define SLOTS 16
#define SLOT 1024
#define GUARD 64
#define USABLE (SLOT - 2 * GUARD)
#define ARENA (SLOTS * SLOT)
#define MAX_MR 24
#define MAX_RQ 64
#define MAX_READS 16
#define MAX_RESP 64
#define MAX_PAY 2048
#define REC 16

/* ---------------- the reference model's state ---------------- */

typedef struct {
    uint32_t stag;
    bool live;  /* registered (not deregistered) */
    bool valid; /* not invalidated */
    int pd;     /* 0: the connection's PD, 1: the other one */
    size_t off; /* in the arena */
    uint64_t len, base_to;
    unsigned access;
} m_mr;

typedef struct {
    uint64_t wr_id;
    size_t off;
    uint32_t len;
    bool done;
    uint32_t msg_len;
    bool solicited, has_inv, has_imm;
    uint32_t inv_stag;
    uint8_t imm[8];
} m_rq;

/* A Read we posted: posted (wr_id) until its Request is seen on the wire,
 * then outstanding until its last Read Response. */
typedef struct {
    uint64_t wr_id;
    uint32_t sink_stag, src_stag;
    uint64_t sink_to, src_to;
    uint32_t size;
} m_read;

/* A response the engine owes the peer (RFC 5040 §5.2.1, RFC 7306 §5). */
typedef struct {
    bool atomic;
    uint32_t sink_stag;
    uint64_t sink_to;
    uint32_t size, done;
    size_t src_off; /* arena offset of the source */
    uint32_t msn, req_id;
    uint64_t orig;
    int src_mr; /* the source region (index in mr; -1: none, zero size) */
    uint8_t req[IW_DDP_UNTAGGED_HDR_LEN + IW_RDMAP_READ_REQ_LEN]; /* the Request */
} m_resp;

typedef struct {
    m_mr mr[MAX_MR];
    size_t n_mr;
    m_rq rq[MAX_RQ];
    size_t n_rq; /* posted, undelivered: MSNs rq_msn .. rq_msn + n_rq - 1 */
    uint32_t rq_msn;
    uint64_t next_rq_wr;
    m_read posted[MAX_READS]; /* posted, not yet on the wire */
    size_t n_posted;
    m_read ord[MAX_READS]; /* on the wire, awaiting responses */
    size_t n_ord;
    uint64_t cq[MAX_READS * 2]; /* wr_ids of reads not completed, post order */
    size_t n_cq;
    m_resp resp[MAX_RESP];
    size_t n_resp, resp_head;
    size_t undrained; /* requests accepted since the last drain */
    uint32_t qn1_msn, qn2_msn, qn3_msn, atomic_resp_msn;
    bool terminated;  /* a Terminate was sent or received */
    bool expect_term; /* our Terminate is due in the output */
    iw_term_info term;
    /* the peer's own sequence (what a conformant peer would send next) */
    uint32_t peer_msn[4];
    uint32_t peer_mo0; /* QN 0: MO of the next segment of the current message */
} model;

/* ---------------- one run ---------------- */

typedef struct {
    bool split;
    iw_rnic *rnic;
    uint32_t pd[2];
    iw_conn *conn;
    iw_peer peer;
    uint8_t *arena, *shadow;
    bool *cut; /* octets a cut-through segment may have touched */
    model m;
    fz_evlog ev;
    size_t ev_seen; /* events checked so far */
    fz_evlog want;  /* events the model expects for the current step */
    fz_bytes out;
    size_t out_seen; /* output octets fed to the deframer */
    iw_deframer *df;
    bool connected;
    bool markers_rx, markers_tx, crc, cut_through;
    unsigned ird;
    iw_tstamp now;
    uint64_t next_read_wr;
} run;

static iw_deframer df_whole, df_split; /* large: keep off the stack */
static bool verbose;                   /* FUZZ_VERBOSE=1: a line per segment */

static int on_event(iw_conn *c, const iw_event *e, void *user) {
    run *r = user;
    fz_ev_log(&r->ev, c, e);
    return 0;
}
static const iw_callbacks cbs = {IW_CALLBACKS_V1, on_event};

static uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t be32(const uint8_t *p) { return (uint32_t)be16(p) << 16 | be16(p + 2); }
static uint64_t be64(const uint8_t *p) { return (uint64_t)be32(p) << 32 | be32(p + 4); }

static uint64_t mix64(uint64_t x) { /* splitmix64 finaliser */
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Expected events of the current step. */
static fz_ev *want_ev(run *r, iw_event_type t) {
    iw_event e = {.type = t};
    return fz_ev_add(&r->want, &e, 0);
}

/* ---------------- model: checks ---------------- */

/* The region an STag names on this stream's RNIC, or NULL (RFC 5042 §5.2
 * lets the RNIC form STags: a deregistered STag names nothing; the newest
 * registration wins if the verbs' 8-bit key came round again). */
static m_mr *m_lookup(model *m, uint32_t stag) {
    for (size_t i = m->n_mr; i-- > 0;)
        if (m->mr[i].live && m->mr[i].stag == stag)
            return &m->mr[i];
    return NULL;
}

enum { L_RDMAP = 0, L_DDP = 1 };

/* Tagged validation, RFC 5041 §7.1 (DDP codes) or RFC 5040 §7.2 4a-e
 * (RDMAP codes, for a Read Request's source and an Atomic's target).
 * Order: STag valid, associated (same PD, RFC 5042 §6.1.1), access right
 * (RFC 5042 §6.3.5; DDP has no code for it: architecture.md uses Invalid
 * STag), TO wrap, then bounds. Returns 0 and the arena offset, or a triple. */
static uint16_t m_tagged(model *m, int layer, uint32_t stag, uint64_t to, uint64_t len,
                         unsigned need, size_t *off) {
    m_mr *mr = m_lookup(m, stag);
    bool ddp = layer == L_DDP;
    if (!mr || !mr->valid)
        return ddp ? IW_TERM_DDP_T_INVALID_STAG : IW_TERM_RDMAP_INVALID_STAG;
    if (mr->pd != 0)
        return ddp ? IW_TERM_DDP_T_STAG_NOT_ASSOC : IW_TERM_RDMAP_STAG_NOT_ASSOC;
    if ((mr->access & need) != need)
        return ddp ? IW_TERM_DDP_T_INVALID_STAG : IW_TERM_RDMAP_ACCESS_RIGHTS;
    if (to + len < to)
        return ddp ? IW_TERM_DDP_T_TO_WRAP : IW_TERM_RDMAP_TO_WRAP;
    if (to < mr->base_to || to - mr->base_to > mr->len || len > mr->len - (to - mr->base_to))
        return ddp ? IW_TERM_DDP_T_BASE_BOUNDS : IW_TERM_RDMAP_BASE_BOUNDS;
    *off = mr->off + (size_t)(to - mr->base_to);
    return 0;
}

/* RFC 7306 §5.1.1: each set Add Mask bit is the top bit of a field; the
 * fields add independently and their carries are dropped. */
static uint64_t m_masked_add(uint64_t a, uint64_t b, uint64_t mask) {
    uint64_t r = 0;
    int lo = 0;
    for (int i = 0; i < 64; i++) {
        if (!((mask >> i) & 1) && i != 63)
            continue;
        int w = i - lo + 1;
        uint64_t fm = w == 64 ? ~0ull : ((1ull << w) - 1);
        r |= (((a >> lo) + (b >> lo)) & fm) << lo;
        lo = i + 1;
    }
    return r;
}

/* The outcome of one segment. */
typedef struct {
    uint16_t term;  /* 0: accepted */
    bool with_hdr;  /* M and D (RFC 5040 §4.8 Fig. 10) */
    bool with_rreq; /* R: a Read Request's header too */
    bool place;     /* payload lands at place_off (also for cut-through) */
    size_t place_off;
    uint32_t pay;
    bool term_received;
} m_out;

/* The first octets of a segment as a Terminate copies them: the DDP header
 * sized by its own T bit, zero-filled past the segment's end. */
static void m_term(model *m, const m_out *o, const uint8_t *u, size_t n) {
    iw_term_info *t = &m->term;
    memset(t, 0, sizeof *t);
    t->triple = o->term;
    if (o->with_hdr) {
        size_t dl = n && (u[0] & 0x80) ? IW_DDP_TAGGED_HDR_LEN : IW_DDP_UNTAGGED_HDR_LEN;
        t->m = t->d = true;
        t->ddp_seg_len = (uint16_t)n;
        memcpy(t->hdr, u, n < dl ? n : dl);
        t->hdr_len = dl;
        if (o->with_rreq) {
            t->r = true;
            memcpy(t->hdr + dl, u + dl, IW_RDMAP_READ_REQ_LEN);
            t->hdr_len += IW_RDMAP_READ_REQ_LEN;
        }
    }
}

/* Stateless checks of one ULPDU (RFC 5041 §4, §7.2; RFC 5040 §4, §7.2;
 * RFC 7306 §4-6; architecture.md's table for the uncoded cases), in the
 * order a receiver meets them. Returns the triple, or 0. */
static uint16_t m_stateless(const uint8_t *u, size_t n) {
    const uint16_t SHORT = IW_TERM_RDMAP_OP_UNSPECIFIED; /* truncated header */
    if (n < 1)
        return SHORT;
    bool t = u[0] & 0x80, last = u[0] & 0x40;
    size_t hl = t ? 14 : 18;
    if (n < hl)
        return SHORT;
    if ((u[0] & 3) != 1)
        return t ? IW_TERM_DDP_T_INVALID_VERSION : IW_TERM_DDP_UT_INVALID_VERSION;
    uint32_t qn = t ? 0 : be32(u + 6);
    if (!t && qn > 3)
        return IW_TERM_DDP_UT_INVALID_QN;
    if (u[1] >> 6 != 1)
        return IW_TERM_RDMAP_INVALID_VERSION;
    unsigned op = u[1] & 0xF;
    /* RFC 5040 Fig. 5 / RFC 7306 §4: each opcode's buffer model and QN. */
    static const int8_t want_qn[12] = {-1, 1, -1, 0, 0, 0, 0, 2, 0, 0, 1, 3};
    if (op >= 12 || (want_qn[op] < 0) != t || (!t && (uint32_t)want_qn[op] != qn))
        return IW_TERM_RDMAP_UNEXPECTED_OPCODE;
    const uint8_t *b = u + hl;
    size_t bn = n - hl;
    if (op == IW_OP_TERMINATE) { /* RFC 5040 §4.8 */
        if (bn < 4)
            return SHORT;
        size_t need = 4;
        bool mm = b[2] & 0x80, d = b[2] & 0x40, r = b[2] & 0x20;
        if (mm || d)
            need += 2;
        if (d) {
            if (bn < need + 1)
                return SHORT;
            need += (b[need] & 0x80) ? 14 : 18;
        }
        if (r)
            need += 28;
        return bn < need ? SHORT : 0;
    }
    size_t fixed = op == IW_OP_READ_REQ                    ? 28
                   : op == IW_OP_IMM || op == IW_OP_IMM_SE ? 8
                   : op == IW_OP_ATOMIC_REQ                ? 52
                   : op == IW_OP_ATOMIC_RESP               ? 12
                                                           : 0;
    if (!fixed)
        return 0;
    uint64_t end = (uint64_t)be32(u + 14) + bn;
    if (op == IW_OP_IMM || op == IW_OP_IMM_SE) {
        if (end > 8 || (last && end != 8)) /* RFC 7306 §6.3; no code: 0/2/FF */
            return IW_TERM_RDMAP_OP_UNSPECIFIED;
    } else if (end > fixed) {
        return IW_TERM_DDP_UT_TOO_LONG; /* their queues' buffers hold the header only */
    }
    /* Split over segments (legal, RFC 5041 §5.2): the engine takes control
     * messages whole (iw_rx.c), answered as an unspecified operation error. */
    if (be32(u + 14) != 0 || !last || bn < fixed)
        return IW_TERM_RDMAP_OP_UNSPECIFIED;
    if (op == IW_OP_ATOMIC_REQ && (b[3] & 0xF) != 0 && (b[3] & 0xF) != 2)
        return IW_TERM_RDMAP_UNEXPECTED_OPCODE; /* RFC 7306 §5.2.1 item 4 */
    return 0;
}

/* Header-time (DDP, before placement) checks and completion-time (after the
 * message is delivered, RFC 5040 §7.1 rule 3) checks of one segment whose
 * CRC is not yet known; sets o->place for payload that may land. */
static void m_segment(run *r, const uint8_t *u, size_t n, bool crc_bad, bool marker_bad, m_out *o) {
    model *m = &r->m;
    memset(o, 0, sizeof *o);
    uint16_t v = m_stateless(u, n);
    uint16_t hdr_term = v; /* what the header alone says */
    bool tagged = n && (u[0] & 0x80);
    unsigned op = n > 1 ? u[1] & 0xF : 0;
    size_t hl = tagged ? 14 : 18;
    uint32_t pay = v == 0 && n > hl ? (uint32_t)(n - hl) : 0;
    uint32_t stag = tagged && n >= 14 ? be32(u + 2) : 0;
    uint64_t to = tagged && n >= 14 ? be64(u + 6) : 0;
    uint32_t msn = !tagged && n >= 18 ? be32(u + 10) : 0;
    uint32_t mo = !tagged && n >= 18 ? be32(u + 14) : 0;
    size_t off = 0;

    if (!hdr_term) {
        switch (op) {
        case IW_OP_WRITE:
            /* RFC 5041 §5.2: a zero-length tagged segment is not checked. */
            if (pay &&
                !(hdr_term = m_tagged(m, L_DDP, stag, to, pay, IW_ACCESS_REMOTE_WRITE, &off))) {
                o->place = true;
                o->place_off = off;
            }
            break;
        case IW_OP_READ_RESP: {
            /* Answers our oldest outstanding Read (RFC 5040 §5.5 rule 20)
             * and may only land in the sink that Read named (iw_rx.c). */
            if (!m->n_ord) {
                hdr_term = IW_TERM_RDMAP_UNEXPECTED_OPCODE;
                break;
            }
            const m_read *rd = &m->ord[0];
            if (pay) {
                if (stag != rd->sink_stag) {
                    hdr_term = IW_TERM_DDP_T_INVALID_STAG;
                    break;
                }
                /* RFC 5041 §7.1: a wrapping TO (5) is judged before the
                 * sink's bounds (3)/(4), as for every tagged segment. */
                if (to + pay < to) {
                    hdr_term = IW_TERM_DDP_T_TO_WRAP;
                    break;
                }
                uint64_t d = to - rd->sink_to;
                if (to < rd->sink_to || d > rd->size || pay > rd->size - d) {
                    hdr_term = IW_TERM_DDP_T_BASE_BOUNDS;
                    break;
                }
                /* Our own sink: local write is enough (iw_rx.c). */
                m_mr *mr = m_lookup(m, stag);
                unsigned need = mr && (mr->access & IW_ACCESS_REMOTE_WRITE) ? IW_ACCESS_REMOTE_WRITE
                                                                            : IW_ACCESS_LOCAL_WRITE;
                if (!(hdr_term = m_tagged(m, L_DDP, stag, to, pay, need, &off))) {
                    o->place = true;
                    o->place_off = off;
                }
            }
            break;
        }
        case IW_OP_SEND:
        case IW_OP_SEND_INV:
        case IW_OP_SEND_SE:
        case IW_OP_SEND_SE_INV:
        case IW_OP_IMM:
        case IW_OP_IMM_SE: {
            if (op == IW_OP_IMM || op == IW_OP_IMM_SE)
                pay = 0; /* the 8 octets are its header, not placed */
            /* RFC 5041 §7.1 untagged (2), (5): the MSN window of posted
             * buffers; the one just past it is "no buffer". */
            uint32_t d = msn - m->rq_msn;
            if (d > m->n_rq) {
                hdr_term = IW_TERM_DDP_UT_MSN_RANGE;
                break;
            }
            if (d == m->n_rq) {
                hdr_term = IW_TERM_DDP_UT_NO_BUFFER;
                break;
            }
            const m_rq *q = &m->rq[d];
            if (q->done) { /* its last segment came already */
                hdr_term = IW_TERM_DDP_UT_MSN_RANGE;
                break;
            }
            /* (3), (4): MO and MO + length inside the buffer. */
            if (pay && mo >= q->len) {
                hdr_term = IW_TERM_DDP_UT_INVALID_MO;
                break;
            }
            if (pay && pay > q->len - mo) {
                hdr_term = IW_TERM_DDP_UT_TOO_LONG;
                break;
            }
            /* RFC 5040 §5.3, §7.2 (4), (5): the Invalidate STag must be
             * valid, of this stream and invalidatable; Fig. 10 puts Send
             * with Invalidate under Remote Protection errors. */
            if (op == IW_OP_SEND_INV || op == IW_OP_SEND_SE_INV) {
                m_mr *mr = m_lookup(m, be32(u + 2));
                if (!mr || !mr->valid || mr->pd != 0 || (mr->access & IW_MR_NO_INVALIDATE)) {
                    hdr_term = IW_TERM_RDMAP_PROT_CANT_INVALIDATE;
                    break;
                }
            }
            if (pay) {
                o->place = true;
                o->place_off = q->off + mo;
            }
            break;
        }
        case IW_OP_READ_REQ:
        case IW_OP_ATOMIC_REQ:
            /* QN 1 holds one buffer per outstanding request: IRD of them
             * (RFC 5040 §6.1); MSNs in order. */
            if (msn != m->qn1_msn)
                hdr_term = IW_TERM_DDP_UT_MSN_RANGE;
            else if (m->undrained >= r->ird)
                hdr_term = IW_TERM_DDP_UT_NO_BUFFER;
            break;
        case IW_OP_ATOMIC_RESP:
            /* QN 3 MSN first; we never post atomics, so none is expected. */
            hdr_term =
                msn != m->qn3_msn ? IW_TERM_DDP_UT_MSN_RANGE : IW_TERM_RDMAP_UNEXPECTED_OPCODE;
            break;
        case IW_OP_TERMINATE:
            if (msn != m->qn2_msn)
                hdr_term = IW_TERM_DDP_UT_MSN_RANGE;
            break;
        }
    }
    o->pay = pay;
    if (!o->place)
        o->pay = 0;
    /* RFC 5044 §6: the CRC is the first verdict on an FPDU, then markers. */
    if (crc_bad) {
        o->term = IW_TERM_LLP_MPA_CRC;
        return;
    }
    if (marker_bad) {
        o->term = IW_TERM_LLP_MPA_MARKER;
        return;
    }
    if (hdr_term) {
        o->term = hdr_term;
        o->place = false;
        /* Fig. 10: DDP errors and RDMAP Remote Protection / Operation
         * errors carry the DDP Segment Length and header. */
        o->with_hdr = true;
        return;
    }
    /* Delivered: completion-time checks (RFC 5040 §7.2 4a-e, RFC 7306). */
    if (op == IW_OP_READ_REQ) {
        const uint8_t *h = u + 18;
        uint32_t size = be32(h + 12);
        size_t src = 0;
        uint16_t t = size ? m_tagged(m, L_RDMAP, be32(h + 16), be64(h + 20), size,
                                     IW_ACCESS_REMOTE_READ, &src)
                          : 0; /* RFC 5040 §5.2.1: zero size is not validated */
        if (t) {
            o->term = t;
            o->with_hdr = o->with_rreq = true; /* §7.1 rule 3 */
            return;
        }
        m_resp *q = &m->resp[(m->resp_head + m->n_resp++) % MAX_RESP];
        *q = (m_resp){false, be32(h), be64(h + 4), size, 0, src, 0, 0, 0, -1, {0}};
        if (size) /* the region it reads, until deregistered or invalidated */
            q->src_mr = (int)(m_lookup(m, be32(h + 16)) - m->mr);
        memcpy(q->req, u, sizeof q->req);
        m->qn1_msn++;
        m->undrained++;
    } else if (op == IW_OP_ATOMIC_REQ) {
        const uint8_t *h = u + 18;
        size_t tgt = 0;
        uint64_t ato = be64(h + 12);
        uint16_t t = m_tagged(m, L_RDMAP, be32(h + 8), ato, 8, IW_ACCESS_REMOTE_ATOMIC, &tgt);
        /* RFC 7306 §5.1: 64-bit aligned TO; §8.2 names the code. */
        if (!t && (ato & 7))
            t = IW_TERM_RDMAP_CATASTROPHIC_STREAM;
        if (t) {
            o->term = t;
            o->with_hdr = true; /* RFC 7306 §8.1: no RDMAP header copied */
            return;
        }
        uint64_t orig, val;
        memcpy(&orig, r->shadow + tgt, 8); /* a host-order 64-bit value */
        uint64_t as = be64(h + 20), asm_ = be64(h + 28), cmp = be64(h + 36), cm = be64(h + 44);
        if ((h[3] & 0xF) == IW_ATOMIC_FETCH_ADD)
            val = m_masked_add(orig, as, asm_);
        else
            val = !((cmp ^ orig) & cm) ? (orig & ~asm_) | (as & asm_) : orig;
        memcpy(r->shadow + tgt, &val, 8);
        m_resp *q = &m->resp[(m->resp_head + m->n_resp++) % MAX_RESP];
        *q = (m_resp){true, 0, 0, 0, 0, 0, m->atomic_resp_msn++, be32(h + 4), orig, -1, {0}};
        m->qn1_msn++;
        m->undrained++;
    } else if (op == IW_OP_TERMINATE) {
        o->term_received = true;
    }
}

/* ---------------- events the model expects ---------------- */

static void m_flush(run *r, iw_wc_status st) {
    model *m = &r->m;
    /* Work requests first, in post order, then the receive queue
     * (iw_conn_flush; RFC 5040 §5.4 flushes both). */
    for (size_t i = 0; i < m->n_cq; i++) {
        fz_ev *e = want_ev(r, IW_EV_READ_DONE);
        e->status = st;
        e->wr_id = m->cq[i];
    }
    m->n_cq = m->n_posted = m->n_ord = 0;
    for (size_t i = 0; i < m->n_rq; i++) {
        fz_ev *e = want_ev(r, IW_EV_RECV);
        e->status = st;
        e->wr_id = m->rq[i].wr_id;
    }
    m->n_rq = 0;
    m->n_resp = 0; /* owed responses are never sent (RFC 5040 §5.4) */
    m->terminated = true;
}

/* Completion of an accepted segment: deliveries in MSN order (RFC 5041
 * §5.4), a Send with Invalidate's STag invalidated first (RFC 5040 §5.3). */
static void m_complete(run *r, const uint8_t *u, size_t n, const m_out *o) {
    model *m = &r->m;
    unsigned op = u[1] & 0xF;
    bool last = u[0] & 0x40;
    if (o->place)
        memcpy(r->shadow + o->place_off, u + n - o->pay, o->pay);
    if (op == IW_OP_READ_RESP && last) {
        fz_ev *e = want_ev(r, IW_EV_READ_DONE);
        e->wr_id = m->ord[0].wr_id;
        e->len = m->ord[0].size;
        memmove(m->ord, m->ord + 1, --m->n_ord * sizeof *m->ord);
        FUZZ_CHECK(m->n_cq && m->cq[0] == e->wr_id);
        memmove(m->cq, m->cq + 1, --m->n_cq * sizeof *m->cq);
    }
    bool send = op == IW_OP_SEND || op == IW_OP_SEND_INV || op == IW_OP_SEND_SE ||
                op == IW_OP_SEND_SE_INV || op == IW_OP_IMM || op == IW_OP_IMM_SE;
    if (send && last) {
        m_rq *q = &m->rq[be32(u + 10) - m->rq_msn];
        q->done = true;
        q->msg_len = be32(u + 14) + o->pay;
        q->solicited = op == IW_OP_SEND_SE || op == IW_OP_SEND_SE_INV || op == IW_OP_IMM_SE;
        if (op == IW_OP_IMM || op == IW_OP_IMM_SE) {
            q->has_imm = true;
            memcpy(q->imm, u + 18, 8);
        }
        if (op == IW_OP_SEND_INV || op == IW_OP_SEND_SE_INV) {
            q->has_inv = true;
            q->inv_stag = be32(u + 2);
            m_mr *mr = m_lookup(m, q->inv_stag);
            FUZZ_CHECK(mr != NULL);
            mr->valid = false;
        }
        while (m->n_rq && m->rq[0].done) {
            fz_ev *e = want_ev(r, IW_EV_RECV);
            const m_rq *h = &m->rq[0];
            e->wr_id = h->wr_id;
            e->len = h->msg_len;
            e->msn = m->rq_msn;
            e->solicited = h->solicited;
            e->has_inv = h->has_inv;
            e->inv_stag = h->inv_stag;
            e->has_imm = h->has_imm;
            memcpy(e->imm, h->imm, 8);
            memmove(m->rq, m->rq + 1, --m->n_rq * sizeof *m->rq);
            m->rq_msn++;
        }
    }
    if (o->term_received) {
        const uint8_t *b = u + 18;
        fz_ev *e = want_ev(r, IW_EV_TERM_RECEIVED);
        e->term.triple = be16(b);
        e->term.m = b[2] & 0x80;
        e->term.d = b[2] & 0x40;
        e->term.r = b[2] & 0x20;
        if (e->term.m || e->term.d)
            e->term.ddp_seg_len = be16(b + 4);
        if (e->term.d) {
            e->term.hdr_len = (b[6] & 0x80) ? 14 : 18;
            memcpy(e->term.hdr, b + 6, e->term.hdr_len);
        }
        m->qn2_msn++;
        m_flush(r, IW_WC_REMOTE_ERROR);
    }
}

/* ---------------- the engine's output, against the model ---------------- */

static void out_frame(run *r, const iw_frame *f) {
    model *m = &r->m;
    if (f->type == IW_FRAME_MPA_REPLY) {
        FUZZ_CHECK(f->verdict.kind == IW_VERDICT_OK && !f->rr.r);
        return;
    }
    FUZZ_CHECK(f->type == IW_FRAME_FPDU && f->verdict.kind == IW_VERDICT_OK);
    iw_rdmap_msg msg;
    iw_verdict v;
    FUZZ_CHECK(iw_rdmap_decode(&msg, f->fpdu.ulpdu, f->fpdu.ulpdu_len, &v) >= 0);
    FUZZ_CHECK(!m->terminated ||
               (m->expect_term && (msg.opcode == IW_OP_TERMINATE ||
                                   (m->n_resp && (msg.opcode == IW_OP_READ_RESP ||
                                                  msg.opcode == IW_OP_ATOMIC_RESP)))));
    switch (msg.opcode) {
    case IW_OP_READ_REQ: { /* one of ours, in post order */
        FUZZ_CHECK(m->n_posted > 0 && m->n_ord < MAX_READS);
        m_read rd = m->posted[0];
        memmove(m->posted, m->posted + 1, --m->n_posted * sizeof *m->posted);
        const iw_rdmap_read_req *q = &msg.u.read_req;
        FUZZ_CHECK(q->sink_stag == rd.sink_stag && q->sink_to == rd.sink_to);
        FUZZ_CHECK(q->read_size == rd.size && q->src_stag == rd.src_stag && q->src_to == rd.src_to);
        m->ord[m->n_ord++] = rd;
        break;
    }
    case IW_OP_READ_RESP:
    case IW_OP_ATOMIC_RESP: {
        FUZZ_CHECK(m->n_resp > 0);
        m_resp *q = &m->resp[m->resp_head];
        FUZZ_CHECK(q->atomic == (msg.opcode == IW_OP_ATOMIC_RESP));
        if (q->atomic) {
            FUZZ_CHECK(msg.ddp.qn == IW_QN_ATOMIC_RESP && msg.ddp.msn == q->msn && msg.ddp.last);
            FUZZ_CHECK(msg.u.atomic_resp.req_id == q->req_id);
            FUZZ_CHECK(msg.u.atomic_resp.orig == q->orig);
        } else {
            /* The sink as the request named it; the source's octets as
             * memory holds them now. */
            FUZZ_CHECK(msg.ddp.stag == q->sink_stag && msg.ddp.to == q->sink_to + q->done);
            FUZZ_CHECK(msg.payload_len <= q->size - q->done);
            FUZZ_CHECK(msg.payload_len == 0 ||
                       memcmp(msg.payload, r->shadow + q->src_off + q->done, msg.payload_len) == 0);
            q->done += (uint32_t)msg.payload_len;
            FUZZ_CHECK(msg.ddp.last == (q->done == q->size));
        }
        if (msg.ddp.last) {
            r->m.resp_head = (r->m.resp_head + 1) % MAX_RESP;
            m->n_resp--;
        }
        break;
    }
    case IW_OP_TERMINATE: {
        FUZZ_CHECK(m->expect_term && m->n_resp == 0);
        m->expect_term = false;
        break; /* its fields: fz_check_terminate, against the event */
    }
    default:
        FUZZ_CHECK(!"unexpected opcode from the engine");
    }
}

/* A response whose source region was deregistered or invalidated after its
 * Read Request was accepted (engine.h, iw_mr_dereg): when its turn comes
 * the engine sends the responses ahead of it, then Terminate 0/1/0 naming
 * that Request (RFC 5040 §7.1 rule 3, RFC 5042 §6.3.3), and flushes the
 * rest. Drains send everything, so no response is ever half sent here. */
static void m_revoked_responses(run *r) {
    model *m = &r->m;
    if (m->terminated)
        return;
    for (size_t k = 0; k < m->n_resp; k++) {
        const m_resp *q = &m->resp[(m->resp_head + k) % MAX_RESP];
        if (q->atomic || q->src_mr < 0 || (m->mr[q->src_mr].live && m->mr[q->src_mr].valid))
            continue;
        iw_term_info *t = &m->term;
        memset(t, 0, sizeof *t);
        t->triple = IW_TERM_RDMAP_INVALID_STAG;
        t->m = t->d = t->r = true;
        t->ddp_seg_len = sizeof q->req;
        memcpy(t->hdr, q->req, sizeof q->req);
        t->hdr_len = sizeof q->req;
        m->expect_term = true;
        m_flush(r, IW_WC_FLUSHED); /* the engine flushes as it queues the Terminate */
        m->n_resp = k;             /* those ahead of it still go out */
        want_ev(r, IW_EV_TERM_SENT)->term = m->term;
        return;
    }
}

/* Drain the engine and check everything new in its output. */
static void drain(run *r) {
    m_revoked_responses(r);
    FUZZ_CHECK(fz_drain(r->conn, &r->out, 1000, r->now) >= 0);
    iw_frame f;
    while (r->out_seen < r->out.n) {
        iw_ssize k = iw_deframer_feed(r->df, r->out.p + r->out_seen, r->out.n - r->out_seen, &f);
        FUZZ_CHECK(k >= 0);
        r->out_seen += (size_t)k;
        if (f.type != IW_FRAME_NONE)
            out_frame(r, &f);
        else if (k == 0)
            break;
    }
    r->m.undrained = 0;
}

/* The step's events, as expected: exactly, in order. */
static void check_events(run *r) {
    size_t got = r->ev.n - r->ev_seen;
    if (got != r->want.n && getenv("FUZZ_VERBOSE"))
        fprintf(stderr, "%s run: events: got %zu, want %zu\n", r->split ? "split" : "whole", got,
                r->want.n);
    for (size_t i = 0; i < got && i < r->want.n; i++) {
        const fz_ev *a = &r->ev.v[r->ev_seen + i], *b = &r->want.v[i];
        if (!fz_ev_same(a, b) && getenv("FUZZ_VERBOSE"))
            fprintf(
                stderr,
                "%s run: event %zu: got type %d st %d wr %llu len %u msn %u term %04x, want type "
                "%d st %d wr %llu len %u msn %u term %04x\n",
                r->split ? "split" : "whole", i, a->type, a->status, (unsigned long long)a->wr_id,
                a->len, a->msn, a->term.triple, b->type, b->status, (unsigned long long)b->wr_id,
                b->len, b->msn, b->term.triple);
        FUZZ_CHECK(fz_ev_same(a, b));
    }
    FUZZ_CHECK(got == r->want.n);
    r->ev_seen = r->ev.n;
    r->want.n = 0;
}

static void check_memory(run *r) {
    if (memcmp(r->arena, r->shadow, ARENA) == 0)
        return;
    for (size_t i = 0; i < ARENA; i++)
        if (r->arena[i] != r->shadow[i]) {
            fprintf(stderr, "arena octet %zu (slot %zu +%zu): 0x%02x, model 0x%02x\n", i, i / SLOT,
                    i % SLOT, r->arena[i], r->shadow[i]);
            break;
        }
    FUZZ_CHECK(!"memory differs from the model");
}

/* ---------------- steps ---------------- */

static void feed(run *r, const uint8_t *p, size_t n, uint8_t how) {
    uint8_t *buf = fuzz_dup(p, n); /* exact size: over-reads fault */
    if (!r->split) {
        FUZZ_CHECK(iw_conn_recv(r->conn, buf, n, r->now) == (iw_ssize)n);
        free(buf);
        return;
    }
    uint32_t s = 0x2545F491u * (how | 1u);
    size_t used = 0;
    while (used < n) {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        size_t cap = (how & 0x7F) ? 1 + s % (1u + (how & 0x7F) * 8u) : n - used;
        if (cap > n - used)
            cap = n - used;
        if (verbose)
            fprintf(stderr, "    %s %zu of %zu\n",
                    (how & 0x7F) && (s & 0x10000) ? "recv" : "rx_iov", cap, n - used);
        if ((how & 0x7F) && (s & 0x10000)) {
            FUZZ_CHECK(iw_conn_recv(r->conn, buf + used, cap, r->now) == (iw_ssize)cap);
            used += cap;
            continue;
        }
        iw_iovec iov[32];
        int k = iw_conn_rx_iov(r->conn, iov, 32);
        FUZZ_CHECK(k > 0); /* the stream is open: there is always a place */
        size_t got = 0;
        for (int i = 0; i < k && got < cap; i++) {
            size_t c = iov[i].len < cap - got ? iov[i].len : cap - got;
            memcpy(iov[i].base, buf + used + got, c);
            got += c;
        }
        FUZZ_CHECK(iw_conn_rx_commit(r->conn, got, r->now) == 0);
        used += got;
    }
    free(buf);
}

static void take_peer(run *r, uint8_t how) {
    feed(r, r->peer.out.p, r->peer.out.len, how);
    iw_peer_take(&r->peer);
}

static void fill_payload(uint8_t *p, size_t n, size_t step) {
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(0x80 + step * 29 + i * 11 + (i >> 8));
}

/* STag by mode: a region's, the same with its key + 1, a made-up one, 0. */
static uint32_t pick_stag(const model *m, unsigned mode, uint8_t idx, uint8_t lo) {
    uint32_t s = m->n_mr ? m->mr[idx % m->n_mr].stag : 0x101;
    switch (mode & 3) {
    case 0:
        return s;
    case 1:
        return (s & ~0xFFu) | ((s + 1) & 0xFFu);
    case 2:
        return (uint32_t)idx << 8 | lo;
    default:
        return 0;
    }
}

static uint64_t pick_to(uint64_t natural, unsigned mode, uint16_t off) {
    switch (mode & 3) {
    case 0:
        return natural + off;
    case 1:
        return off;
    case 2:
        return ~0ull - off;
    default:
        return (uint64_t)off << 48;
    }
}

static void step_seg(run *r, const uint8_t *rec, size_t step) {
    model *m = &r->m;
    unsigned op = rec[1] & 0xF;
    bool flip = rec[1] & 0x10, notlast = rec[1] & 0x20;
    bool crc_bad = (rec[1] & 0x40) && r->crc; /* without CRCs the field is not checked */
    bool mark = (rec[1] & 0x80) && r->markers_rx;
    uint8_t f2 = rec[2], idx = rec[3], x = rec[9];
    uint16_t off = be16(rec + 4);
    uint32_t plen = be16(rec + 6) % (MAX_PAY + 1);

    iw_rdmap_msg msg;
    iw_peer_msg_init(&r->peer, &msg, op < 12 ? op : IW_OP_SEND);
    msg.opcode = (uint8_t)op;
    bool natural_tagged = op == IW_OP_WRITE || op == IW_OP_READ_RESP;
    msg.ddp.tagged = natural_tagged != flip;
    msg.ddp.last = !notlast;
    msg.ddp.dv = (f2 & 0x40) ? 2 : IW_DDP_VERSION;
    msg.rv = (f2 & 0x80) ? 2 : IW_RDMAP_VERSION;
    /* STag and TO: natural for a Read Response is our oldest Read's sink. */
    uint32_t stag = pick_stag(m, f2, idx, (uint8_t)off);
    const m_mr *mr = m->n_mr ? &m->mr[idx % m->n_mr] : NULL;
    uint64_t nat_to = mr ? mr->base_to : 0;
    if (op == IW_OP_READ_RESP && m->n_ord && !(f2 & 3)) {
        stag = m->ord[0].sink_stag;
        nat_to = m->ord[0].sink_to;
    }
    msg.ddp.stag = stag;
    msg.ddp.to = pick_to(nat_to, f2 >> 2, off);
    /* Untagged: QN, MSN and MO. */
    unsigned qn = msg.ddp.qn;
    switch (x & 3) {
    case 1:
        qn = 4 + rec[10];
        break;
    case 2:
        qn = (qn + 1) & 3;
        break;
    case 3:
        qn = 3;
        break;
    }
    msg.ddp.qn = qn;
    uint32_t nat_msn = m->peer_msn[qn & 3];
    switch ((f2 >> 4) & 3) {
    case 0:
        msg.ddp.msn = nat_msn;
        break;
    case 1:
        msg.ddp.msn = nat_msn + (uint32_t)(int32_t)(int8_t)rec[10];
        break;
    case 2:
        msg.ddp.msn = (uint32_t)rec[10] << 24 | rec[10];
        break;
    default:
        msg.ddp.msn = nat_msn - 1;
        break;
    }
    /* MO: a Send's follows the TO mode; a control message's is 0 unless
     * the mode says absolute (which makes it a segmented one). */
    bool send =
        op == IW_OP_SEND || op == IW_OP_SEND_INV || op == IW_OP_SEND_SE || op == IW_OP_SEND_SE_INV;
    uint32_t nat_mo = qn == 0 ? m->peer_mo0 : 0;
    msg.ddp.mo = send ? (uint32_t)pick_to(nat_mo, f2 >> 2, off) : ((f2 >> 2) & 3) == 1 ? off : 0;
    if (op == IW_OP_SEND_INV || op == IW_OP_SEND_SE_INV)
        msg.ddp.rsvd_ulp2 = stag; /* RFC 5040 §4.3: the Invalidate STag */
    const uint8_t *o = rec + 11;
    switch (op) {
    case IW_OP_READ_REQ: {
        const m_mr *sm = m->n_mr ? &m->mr[o[2] % m->n_mr] : NULL;
        msg.u.read_req.sink_stag = 0x77000000u | (uint32_t)step;
        msg.u.read_req.sink_to = 0x5000 + step;
        msg.u.read_req.read_size = be16(o);
        msg.u.read_req.src_stag = pick_stag(m, o[4], o[2], o[3]);
        msg.u.read_req.src_to = pick_to(sm ? sm->base_to : 0, o[4] >> 2, (uint16_t)(o[3] * 8));
        plen = 0;
        break;
    }
    case IW_OP_ATOMIC_REQ: {
        static const uint8_t aops[4] = {IW_ATOMIC_FETCH_ADD, IW_ATOMIC_CMP_SWAP, 1, 0xF};
        iw_rdmap_atomic_req *a = &msg.u.atomic_req;
        uint64_t seed = be32(o + 1);
        a->aopcode = aops[o[0] & 3];
        a->req_id = (uint32_t)step;
        a->stag = stag;
        a->to = msg.ddp.to;
        a->add_swap = mix64(seed);
        a->add_swap_mask = (o[0] & 4) ? mix64(seed ^ 1) : a->aopcode ? ~0ull : 0;
        a->compare = mix64(seed ^ 2);
        a->compare_mask = (o[0] & 4) ? mix64(seed ^ 3) : ~0ull;
        if (o[0] & 8) { /* compare with what is there, so the swap happens */
            size_t t;
            if (m_tagged(m, L_RDMAP, a->stag, a->to, 8, 0, &t) == 0)
                memcpy(&a->compare, r->shadow + t, 8);
        }
        msg.ddp.stag = 0;
        msg.ddp.to = 0;
        plen = 0;
        break;
    }
    case IW_OP_TERMINATE: {
        static const uint8_t copied[18] = {0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
        iw_rdmap_term *t = &msg.u.term;
        uint16_t tr = be16(o);
        t->layer = (uint8_t)(tr >> 12);
        t->etype = (uint8_t)(tr >> 8 & 0xF);
        t->ecode = (uint8_t)tr;
        t->m = o[2] & 1;
        t->d = o[2] & 2;
        t->r = o[2] & 4;
        t->ddp_seg_len = 18;
        t->ddp_raw = copied;
        t->ddp_raw_len = t->d ? sizeof copied : 0;
        plen = 0;
        break;
    }
    case IW_OP_IMM:
    case IW_OP_IMM_SE:
    case IW_OP_ATOMIC_RESP: {
        uint64_t v = mix64(be32(o) ^ (uint64_t)o[4] << 32);
        for (int i = 0; i < 8; i++)
            msg.u.imm[i] = (uint8_t)(v >> (8 * i));
        msg.u.atomic_resp.req_id = (uint32_t)v;
        msg.u.atomic_resp.orig = v;
        plen = 0;
        break;
    }
    default:
        break;
    }

    uint8_t pay[MAX_PAY];
    fill_payload(pay, plen, step);
    uint8_t *seg = malloc(IW_MPA_ULPDU_MAX);
    FUZZ_CHECK(seg != NULL);
    iw_ssize sn = iw_peer_seg(seg, IW_MPA_ULPDU_MAX, &msg, pay, plen);
    FUZZ_CHECK(sn > 0);
    size_t n = (size_t)sn;
    unsigned tr = (x >> 2) & 7;
    if (tr && 4u * (tr - 1) < n)
        n = 4u * (tr - 1);

    /* Bad marker: only if a marker falls after the FPDU's first octet
     * (iw_peer_fpdu moves that one); it then points 4 octets off. */
    size_t wl = iw_mpa_fpdu_wire_len(n, r->peer.pos, r->markers_rx);
    bool marker_bad = false;
    if (mark)
        for (size_t i = 1; i + IW_MPA_MARKER_LEN <= wl; i++)
            if (iw_mpa_marker_gap(r->peer.pos + (uint32_t)i) == 0) {
                marker_bad = true;
                break;
            }
    iw_peer_fpdu_opt fo = {.crc_xor = crc_bad ? 0x5A5A5A5Au : 0,
                           .marker_delta = marker_bad ? 4 : 0};

    /* The peer's sequence moves on as a conformant peer's would. */
    if (!msg.ddp.tagged && msg.ddp.msn == nat_msn && qn < 4) {
        if (qn == 0 && msg.ddp.mo == nat_mo)
            m->peer_mo0 = msg.ddp.last ? 0 : nat_mo + plen;
        if (msg.ddp.last)
            m->peer_msn[qn]++;
    }

    m_out out;
    bool was_term = m->terminated;
    if (!was_term)
        m_segment(r, seg, n, crc_bad, marker_bad, &out);

    FUZZ_CHECK(iw_peer_fpdu(&r->peer, seg, n, &fo) == 0);
    take_peer(r, rec[8]);

    if (was_term) {
        /* RFC 5041 §7.1: every later segment is dropped. */
    } else if (out.term) {
        bool early = r->cut_through || !r->crc; /* placement before the MPA verdict */
        if (out.place && early &&
            (out.term == IW_TERM_LLP_MPA_CRC || out.term == IW_TERM_LLP_MPA_MARKER)) {
            /* All of the payload, or none of it. */
            const uint8_t *now = r->arena + out.place_off, *old = r->shadow + out.place_off;
            const uint8_t *p = seg + n - out.pay;
            FUZZ_CHECK(memcmp(now, old, out.pay) == 0 || memcmp(now, p, out.pay) == 0);
            memcpy(r->shadow + out.place_off, now, out.pay);
            for (uint32_t i = 0; i < out.pay; i++)
                r->cut[out.place_off + i] = true;
        }
        m_term(m, &out, seg, n);
        m->expect_term = true;
        m_flush(r, IW_WC_FLUSHED);
        want_ev(r, IW_EV_TERM_SENT)->term = m->term;
    } else {
        m_complete(r, seg, n, &out);
    }
    if (verbose && !r->split)
        fprintf(stderr,
                "  step %zu: opcode %u, %zu octets%s%s: %s %04x, placed %u at %zu, %zu events\n",
                step, op, n, crc_bad ? ", bad CRC" : "", marker_bad ? ", bad marker" : "",
                was_term   ? "dropped"
                : out.term ? "Terminate"
                           : "ok",
                was_term ? 0 : out.term, was_term ? 0 : out.pay, was_term ? 0 : out.place_off,
                r->want.n);
    free(seg);
    check_memory(r);
    if (!(rec[8] & 0x80) || m->expect_term || m->terminated)
        drain(r);
    check_events(r);
    FUZZ_CHECK(!m->expect_term);
    FUZZ_CHECK((iw_conn_get_state(r->conn) == IW_CONN_RTS) == !m->terminated);
}

static void step(run *r, const uint8_t *rec, size_t stepno) {
    model *m = &r->m;
    switch (rec[0] % 10) {
    case 0: { /* REG */
        if (m->n_mr == MAX_MR)
            return;
        size_t slot = rec[1] & 0xF, o = be16(rec + 2) % USABLE;
        uint64_t len = be16(rec + 4) % (USABLE - o + 1);
        uint64_t to;
        switch (rec[6] & 3) {
        case 0:
            to = 0x10000ull * (slot + 1) + o;
            break;
        case 1:
            to = 0;
            break;
        case 2:
            to = ~0ull - len - (rec[7] & 0xF);
            break;
        default:
            to = be64(rec + 7);
            break;
        }
        unsigned acc = (rec[15] & 0xF) | ((rec[15] & 0x10) ? IW_MR_NO_INVALIDATE : 0);
        int pd = (rec[1] >> 4) & 1;
        size_t off = slot * SLOT + GUARD + o;
        uint32_t stag;
        int rc = iw_mr_reg(r->rnic, r->pd[pd], r->arena + off, len, to, acc, &stag);
        /* RFC 5041 §7.1 (5): a region may not wrap the TO space. */
        FUZZ_CHECK(rc == (to + len < to ? IW_ERR_INVALID_ARG : 0));
        if (rc)
            return;
        FUZZ_CHECK(m_lookup(m, stag) == NULL); /* a live STag is never handed out twice */
        m->mr[m->n_mr++] = (m_mr){stag, true, true, pd, off, len, to, acc};
        return;
    }
    case 1: { /* DEREG */
        if (!m->n_mr)
            return;
        /* A stale entry's STag may name a newer region again once the
         * 8-bit key came round: the model looks the value up. */
        m_mr *cur = m_lookup(m, m->mr[rec[1] % m->n_mr].stag);
        FUZZ_CHECK(iw_mr_dereg(r->rnic, m->mr[rec[1] % m->n_mr].stag) ==
                   (cur ? 0 : IW_ERR_INVALID_ARG));
        if (cur)
            cur->live = false;
        return;
    }
    case 2: { /* INVAL */
        if (!m->n_mr)
            return;
        m_mr *mr = &m->mr[rec[1] % m->n_mr];
        m_mr *cur = m_lookup(m, mr->stag);
        int want = !cur                                  ? IW_ERR_INVALID_ARG
                   : (cur->access & IW_MR_NO_INVALIDATE) ? IW_ERR_PROTO
                                                         : 0;
        FUZZ_CHECK(iw_mr_invalidate(r->rnic, mr->stag) == want);
        if (!want)
            cur->valid = false;
        return;
    }
    case 3: { /* RECV */
        if (m->n_rq == MAX_RQ)
            return;
        size_t slot = rec[1] & 0xF, o = be16(rec + 2) % USABLE;
        uint32_t len = be16(rec + 4) % (uint32_t)(USABLE - o + 1);
        uint64_t wr = ++m->next_rq_wr;
        int rc = iw_conn_post_recv(r->conn, wr, r->arena + slot * SLOT + GUARD + o, len);
        FUZZ_CHECK(rc == (m->terminated ? IW_ERR_PROTO : 0));
        if (rc)
            return;
        m->rq[m->n_rq++] = (m_rq){.wr_id = wr, .off = slot * SLOT + GUARD + o, .len = len};
        return;
    }
    case 4: { /* READ: the engine reads from the peer into a local sink */
        if (m->n_posted + m->n_ord >= MAX_READS)
            return;
        const m_mr *mr = m->n_mr ? &m->mr[rec[1] % m->n_mr] : NULL;
        m_read rd = {++r->next_read_wr,
                     mr ? mr->stag : 0x101,
                     be32(rec + 6),
                     (mr ? mr->base_to : 0) + be16(rec + 2),
                     0x9000,
                     be16(rec + 4)};
        iw_send_wr wr = {.op = IW_WR_READ,
                         .wr_id = rd.wr_id,
                         .len = rd.size,
                         .remote_stag = rd.src_stag,
                         .remote_to = rd.src_to,
                         .local_stag = rd.sink_stag,
                         .local_to = rd.sink_to};
        int rc = iw_conn_post_send(r->conn, &wr);
        FUZZ_CHECK(rc == (m->terminated ? IW_ERR_PROTO : 0));
        if (rc)
            return;
        m->posted[m->n_posted++] = rd;
        m->cq[m->n_cq++] = rd.wr_id;
        drain(r); /* the Request goes out now if it may */
        check_events(r);
        return;
    }
    default:
        step_seg(r, rec, stepno);
        return;
    }
}

static void run_input(run *r, bool split, uint8_t cfg, uint8_t emss, const uint8_t *recs,
                      size_t nrec) {
    memset(r, 0, sizeof *r);
    r->split = split;
    r->df = split ? &df_split : &df_whole;
    r->arena = malloc(ARENA);
    r->shadow = malloc(ARENA);
    r->cut = calloc(ARENA, 1);
    FUZZ_CHECK(r->arena && r->shadow && r->cut);
    for (size_t i = 0; i < ARENA; i++)
        r->arena[i] = (uint8_t)(i * 7 + (i >> 8));
    memcpy(r->shadow, r->arena, ARENA);
    r->now = 1000000000ull;
    model *m = &r->m;
    m->rq_msn = m->qn1_msn = m->qn2_msn = m->qn3_msn = m->atomic_resp_msn = 1;
    for (int q = 0; q < 4; q++)
        m->peer_msn[q] = 1;

    FUZZ_CHECK(iw_rnic_new(&r->rnic, NULL) == 0);
    FUZZ_CHECK(iw_pd_alloc(r->rnic, &r->pd[0]) == 0 && iw_pd_alloc(r->rnic, &r->pd[1]) == 0);
    iw_conn_settings s;
    iw_conn_settings_default(&s, IW_ROLE_RESPONDER);
    s.markers = cfg & 1;
    s.crc = cfg & 2;
    s.ird = (uint16_t)(cfg >> 5);
    s.emss = 128 + 8u * (emss & 0x7F);
    s.cut_through = emss & 0x80;
    r->cut_through = s.cut_through;
    FUZZ_CHECK(iw_conn_new(&r->conn, r->rnic, r->pd[0], &s, &cbs, r) == 0);
    FUZZ_CHECK(iw_conn_start(r->conn, r->now) == 0);
    FUZZ_CHECK(iw_peer_init(&r->peer) == 0);

    /* Startup: the peer's Request, our Reply (RFC 5044 §7.1, RFC 6581). */
    iw_mpa_rr rr = fz_peer_request(&r->peer, cfg & 8, cfg & 0x10, cfg & 4);
    r->markers_rx = s.markers;
    r->markers_tx = rr.m;
    r->crc = s.crc || rr.c;
    r->ird = s.ird;
    iw_df_cfg dc = {IW_DF_START_REPLY, r->markers_tx ? IW_DF_ON : IW_DF_OFF,
                    r->crc ? IW_DF_ON : IW_DF_OFF, 0};
    iw_deframer_init(r->df, &dc);
    take_peer(r, 0);
    FUZZ_CHECK(iw_conn_get_state(r->conn) == IW_CONN_RTS);
    want_ev(r, IW_EV_CONNECTED);
    drain(r);
    check_events(r);
    const iw_conn_info *info = iw_conn_get_info(r->conn);
    FUZZ_CHECK(info->markers_rx == r->markers_rx && info->markers_tx == r->markers_tx);
    FUZZ_CHECK(info->crc == r->crc);
    iw_peer_full_operation(&r->peer, r->markers_rx, r->crc);

    for (size_t i = 0; i < nrec; i++)
        step(r, recs + i * REC, i);
    drain(r);
    check_events(r);
    check_memory(r);
    /* Nothing owed is left unsent, and the one Terminate is last. */
    FUZZ_CHECK(m->n_resp == 0);
    fz_out o;
    fz_check_output(r->out.p, r->out.n, false, info, &o);
    fz_check_terminate(&r->ev, &o, r->out.n);
}

static void run_free(run *r) {
    iw_conn_del(r->conn);
    iw_rnic_del(r->rnic);
    iw_peer_free(&r->peer);
    free(r->ev.v);
    free(r->want.v);
    free(r->out.p);
    free(r->arena);
    free(r->shadow);
    free(r->cut);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    verbose = getenv("FUZZ_VERBOSE") != NULL;
    if (size < 2)
        return 0;
    size_t nrec = (size - 2) / REC;
    run a, b;
    run_input(&a, false, data[0], data[1], data + 2, nrec);
    run_input(&b, true, data[0], data[1], data + 2, nrec);
    /* However the stream was cut: the same events, output and memory
     * (octets a cut-through segment may have touched aside). */
    FUZZ_CHECK(a.ev.n == b.ev.n);
    for (size_t i = 0; i < a.ev.n; i++)
        FUZZ_CHECK(fz_ev_same_rfc(&a.ev.v[i], &b.ev.v[i]));
    FUZZ_CHECK(a.out.n == b.out.n && memcmp(a.out.p, b.out.p, a.out.n) == 0);
    for (size_t i = 0; i < ARENA; i++)
        FUZZ_CHECK(a.arena[i] == b.arena[i] || a.cut[i] || b.cut[i]);
    run_free(&a);
    run_free(&b);
    return 0;
}
