/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The engine over SCTP (RFC 5043 §5, §6, §9, §10): one iw_conn per DDP
 * stream, fed the MPA frames and FPDUs that RFC 5043's chunks are
 * equivalent to, so placement, STag, queue and Terminate rules have one
 * implementation (iw_rx.c), whatever the transport. */
#include <iwarp/sctp_conn.h>

#include <string.h>

#include <iwarp/wire.h>

#include "iw_conn_int.h"
#include "iw_rnic.h"
#include "iw_startup.h"

/* What the peer's direction of the session has done so far, in DDP-SSN
 * order (RFC 5043 §6.1). */
typedef enum peer_phase {
    PEER_NONE = 0, /* nothing yet: its first chunk must open the session */
    PEER_OPENED,   /* its Initiate (peer active) or Accept (peer passive) */
    PEER_ENDED     /* its Reject or Terminate: nothing may follow */
} peer_phase;

typedef struct held_chunk {
    bool used;
    uint32_t ppid;
    size_t len;
    uint8_t *data;
} held_chunk;

#define STAGE_LEN 16384

struct iw_sctp_conn {
    iw_mem mem;
    iw_conn *conn;
    iw_role role;
    uint16_t sid;
    uint32_t max_seg;
    uint32_t window;
    uint8_t mpa_rev; /* 2: RFC 6581 enhanced codes known */
    bool enhanced;   /* our Initiate (active) / the peer's (passive) used RFC 6581 codes */

    iw_sctp_sess_state sess;
    peer_phase peer;
    bool began;       /* an Initiate went out (active) or came in (passive) */
    bool rejected;    /* the session ended by a Reject, either way */
    bool we_rejected; /* passive: our Reject; the active side's chunks in flight are dropped */
    bool llp_lost;    /* nothing more is sent */
    bool ended_here;  /* a received chunk broke a rule: we terminate (§6.1) */
    iw_sctp_sess_problem problem;
    iw_sctp_problem chunk_problem;

    /* rx: DDP-SSN order (§5.2.1, §10) */
    uint16_t rx_next;
    held_chunk *held; /* window slots, indexed by DDP-SSN % window */

    /* tx */
    uint16_t tx_next;
    /* §6.6: our last Session Control message, and whether it is known to
     * have arrived (SCTP acked it, or the peer answered it). */
    uint16_t ctrl_ssn;
    bool ctrl_sent, ctrl_known;
    iw_deframer *df; /* the engine's output stream, framed by the library's deframer */
    uint8_t *stage;
    size_t stage_len, stage_off;
    uint8_t *out;
    size_t out_cap;

    iw_sctp_conn_stats stats;
};

static const char *const sess_problem_str[] = {"no problem",
#define IW_X_(n, rfc, s) s,
                                               IW_SCTP_SESS_PROBLEM_LIST(IW_X_)
#undef IW_X_
};
static const char *const sess_problem_rfc[] = {NULL,
#define IW_X_(n, rfc, s) rfc,
                                               IW_SCTP_SESS_PROBLEM_LIST(IW_X_)
#undef IW_X_
};
#define N_SESS_PROBLEMS (sizeof sess_problem_str / sizeof sess_problem_str[0])

const char *iw_sctp_sess_problem_str(iw_sctp_sess_problem p) {
    return (unsigned)p < N_SESS_PROBLEMS ? sess_problem_str[p] : "unknown problem";
}

const char *iw_sctp_sess_problem_rfc(iw_sctp_sess_problem p) {
    return (unsigned)p < N_SESS_PROBLEMS ? sess_problem_rfc[p] : NULL;
}

void iw_sctp_conn_settings_default(iw_sctp_conn_settings *s, iw_role role) {
    memset(s, 0, sizeof *s);
    s->version = IW_SCTP_CONN_SETTINGS_V1;
    iw_conn_settings_default(&s->conn, role);
    s->max_seg = IW_SCTP_MAX_SEG_DEFAULT;
    s->window = IW_SCTP_WINDOW_DEFAULT;
}

static void free_held(iw_sctp_conn *sc) {
    for (uint32_t i = 0; sc->held && i < sc->window; i++) {
        if (sc->held[i].used)
            sc->mem.free(sc->held[i].data, sc->mem.user);
        sc->held[i] = (held_chunk){0};
    }
}

void iw_sctp_conn_del(iw_sctp_conn *sc) {
    if (!sc)
        return;
    free_held(sc);
    iw_conn_del(sc->conn);
    sc->mem.free(sc->held, sc->mem.user);
    sc->mem.free(sc->df, sc->mem.user);
    sc->mem.free(sc->stage, sc->mem.user);
    sc->mem.free(sc->out, sc->mem.user);
    sc->mem.free(sc, sc->mem.user);
}

int iw_sctp_conn_new(iw_sctp_conn **out, iw_rnic *rnic, uint32_t pd, const iw_sctp_conn_settings *s,
                     const iw_callbacks *cb, void *user) {
    if (!out || !rnic || !s || s->version != IW_SCTP_CONN_SETTINGS_V1)
        return IW_ERR_INVALID_ARG;
    uint32_t max_seg = s->max_seg ? s->max_seg : IW_SCTP_MAX_SEG_DEFAULT;
    uint32_t window = s->window ? s->window : IW_SCTP_WINDOW_DEFAULT;
    if (max_seg < IW_SCTP_MAX_SEG_MIN || max_seg > IW_MPA_MULPDU_MAX || window > IW_SCTP_WINDOW_MAX)
        return IW_ERR_INVALID_ARG;
    iw_conn_settings cs = s->conn;
    /* RFC 5043 has neither markers nor a DDP-level CRC: SCTP's CRC32c
     * covers the chunk. The engine's MULPDU (RFC 5044 §4.5 without
     * markers: EMSS - 6 - EMSS mod 4) is then at most max_seg. */
    cs.markers = false;
    cs.crc = false;
    cs.cut_through = false;
    cs.emss = max_seg + IW_MPA_HDR_LEN + IW_MPA_CRC_LEN;
    const iw_mem *mem = &rnic->mem;
    iw_sctp_conn *sc = mem->calloc(1, sizeof *sc, mem->user);
    if (!sc)
        return IW_ERR_NOMEM;
    sc->mem = *mem;
    sc->role = cs.role;
    sc->mpa_rev = cs.mpa_rev;
    sc->sid = s->sid;
    sc->max_seg = max_seg;
    sc->window = window;
    sc->out_cap =
        IW_SCTP_SSN_LEN + (max_seg > IW_SCTP_CTRL_HDR_LEN - IW_SCTP_SSN_LEN + IW_SCTP_PD_MAX
                               ? max_seg
                               : IW_SCTP_CTRL_HDR_LEN - IW_SCTP_SSN_LEN + IW_SCTP_PD_MAX);
    sc->held = mem->calloc(window, sizeof *sc->held, mem->user);
    sc->df = mem->malloc(sizeof *sc->df, mem->user);
    sc->stage = mem->malloc(STAGE_LEN, mem->user);
    sc->out = mem->malloc(sc->out_cap, mem->user);
    int rc = (sc->held && sc->df && sc->stage && sc->out) ? 0 : IW_ERR_NOMEM;
    if (!rc)
        rc = iw_conn_new(&sc->conn, rnic, pd, &cs, cb, user);
    if (rc) {
        iw_sctp_conn_del(sc);
        return rc;
    }
    iw_df_cfg dc = {.start = cs.role == IW_ROLE_INITIATOR ? IW_DF_START_REQUEST : IW_DF_START_REPLY,
                    .markers = IW_DF_OFF,
                    .crc = IW_DF_OFF};
    iw_deframer_init(sc->df, &dc);
    *out = sc;
    return 0;
}

iw_conn *iw_sctp_conn_engine(iw_sctp_conn *sc) { return sc->conn; }

int iw_sctp_conn_start(iw_sctp_conn *sc, iw_tstamp now) {
    int rc = iw_conn_start(sc->conn, now);
    if (rc == 0)
        sc->sess = IW_SCTP_SESS_STARTING;
    return rc;
}

iw_sctp_sess_state iw_sctp_conn_session(const iw_sctp_conn *sc) { return sc->sess; }

iw_sctp_sess_problem iw_sctp_conn_problem(const iw_sctp_conn *sc, iw_sctp_problem *chunk) {
    if (chunk)
        *chunk = sc->chunk_problem;
    return sc->problem;
}

void iw_sctp_conn_get_stats(const iw_sctp_conn *sc, iw_sctp_conn_stats *out) { *out = sc->stats; }

/* ---- rx ---- */

/* Octets to hand the engine as one stretch of its byte stream; NULL: zeros. */
typedef struct span {
    const uint8_t *p;
    size_t len;
} span;

/* Feed spans into the engine through rx_iov/rx_commit: payload goes from
 * the chunk straight to its final address, with no FPDU built in between.
 * Octets the engine no longer takes (closed) are dropped, as
 * iw_conn_recv drops them. */
static int feed(iw_sctp_conn *sc, const span *sp, int n, iw_tstamp now) {
    int i = 0;
    size_t off = 0;
    for (;;) {
        while (i < n && off == sp[i].len) {
            i++;
            off = 0;
        }
        if (i == n)
            return 0;
        iw_iovec iov[16];
        int k = iw_conn_rx_iov(sc->conn, iov, 16);
        if (k <= 0)
            return k;
        size_t got = 0;
        for (int j = 0; j < k && i < n; j++) {
            size_t at = 0;
            while (at < iov[j].len && i < n) {
                size_t take = iov[j].len - at;
                if (take > sp[i].len - off)
                    take = sp[i].len - off;
                uint8_t *dst = (uint8_t *)iov[j].base + at;
                if (sp[i].p)
                    memcpy(dst, sp[i].p + off, take);
                else
                    memset(dst, 0, take);
                at += take;
                off += take;
                got += take;
                while (i < n && off == sp[i].len) {
                    i++;
                    off = 0;
                }
            }
        }
        if (got == 0)
            return 0;
        int rc = iw_conn_rx_commit(sc->conn, got, now);
        if (rc < 0)
            return rc;
    }
}

/* The MPA frame the message stands for (iw_sctp_ctrl_as_mpa), to the engine. */
static int feed_mpa(iw_sctp_conn *sc, const iw_sctp_ctrl *c, iw_tstamp now) {
    iw_mpa_rr rr;
    if (!iw_sctp_ctrl_as_mpa(c, &rr))
        return IW_ERR_INVALID_ARG; /* callers pass Initiate, Accept or Reject only */
    uint8_t frame[IW_MPA_RR_HDR_LEN + IW_MPA_PD_MAX];
    iw_ssize n = iw_mpa_rr_encode(frame, sizeof frame, &rr);
    if (n < 0)
        return (int)n; /* cannot happen: the codec took the same limits */
    span sp = {frame, (size_t)n};
    return feed(sc, &sp, 1, now);
}

/* A DDP segment as the ULPDU of an FPDU: ULPDU_Length, ULPDU, PAD, and a
 * CRC field the engine does not check (CRC off, RFC 5044 §4.4). */
static int feed_segment(iw_sctp_conn *sc, const uint8_t *ddp, size_t len, iw_tstamp now) {
    uint8_t hdr[IW_MPA_HDR_LEN];
    iw_put_u16(hdr, (uint16_t)len);
    span sp[3] = {{hdr, sizeof hdr}, {ddp, len}, {NULL, iw_mpa_pad_len(len) + IW_MPA_CRC_LEN}};
    return feed(sc, sp, 3, now);
}

static void end_session(iw_sctp_conn *sc) {
    sc->sess = IW_SCTP_SESS_ENDED;
    free_held(sc);
}

/* §6.1: a chunk in no legal sequence terminates the session: our Session
 * Terminate goes out (iw_sctp_conn_next) and the engine sees its LLP
 * stream end. RFC 6580 registers no Terminate code for SCTP's own rules,
 * so no RDMAP Terminate is made up for them. */
static int violation(iw_sctp_conn *sc, iw_sctp_sess_problem p, iw_sctp_problem chunk,
                     iw_tstamp now) {
    if (iw_fault(sc->conn, IW_FAULT_SCTP_LAX_SESSION)) {
        sc->stats.dropped++; /* deliberately non-conformant (iwarp-target --fault) */
        return 0;
    }
    sc->problem = p;
    sc->chunk_problem = chunk;
    if (sc->sess == IW_SCTP_SESS_ENDED)
        return IW_ERR_PROTO; /* already over: nothing more to end */
    sc->ended_here = true;
    end_session(sc);
    int rc = iw_conn_rx_eof(sc->conn, now);
    return rc < 0 ? rc : IW_ERR_PROTO;
}

static int rx_ctrl(iw_sctp_conn *sc, const uint8_t *msg, size_t len, iw_tstamp now) {
    iw_sctp_ctrl c;
    iw_sctp_problem why;
    if (iw_sctp_ctrl_decode(&c, msg, len, &why) < 0)
        return violation(sc, IW_SCTP_SESS_PROBLEM_CHUNK, why, now);
    if (c.fc == IW_SCTP_FC_TERMINATE) {
        /* §6.2: the peer's final chunk; §6.4: the passive side's answer to
         * an Initiate it cannot pass to its ULP. Not the active side's
         * first chunk: that opens nothing. */
        if (sc->peer == PEER_NONE && sc->role == IW_ROLE_RESPONDER)
            return violation(sc, IW_SCTP_SESS_PROBLEM_UNEXPECTED_CTRL, IW_SCTP_PROBLEM_NONE, now);
        sc->peer = PEER_ENDED;
        sc->stats.term_rx = true;
        end_session(sc);
        int rc = iw_conn_rx_eof(sc->conn, now);
        return rc < 0 ? rc : 0;
    }
    if (sc->peer != PEER_NONE)
        return violation(sc, IW_SCTP_SESS_PROBLEM_UNEXPECTED_CTRL, IW_SCTP_PROBLEM_NONE, now);
    bool enh = iw_sctp_fc_enhanced(c.fc);
    if (sc->role == IW_ROLE_RESPONDER) {
        /* §6.2: the active side's first chunk is its Initiate. A passive
         * side configured for RFC 5044 frames does not know RFC 6581's
         * codes. */
        if (c.fc != IW_SCTP_FC_INITIATE && c.fc != IW_SCTP_FC_ENH_INITIATE)
            return violation(sc, IW_SCTP_SESS_PROBLEM_UNEXPECTED_CTRL, IW_SCTP_PROBLEM_NONE, now);
        sc->began = true; /* a session to answer, if only with a Terminate (§6.4) */
        if (enh && sc->mpa_rev < IW_MPA_REV2)
            return violation(sc, IW_SCTP_SESS_PROBLEM_UNEXPECTED_CTRL, IW_SCTP_PROBLEM_NONE, now);
        sc->peer = PEER_OPENED;
        sc->enhanced = enh;
        int rc = feed_mpa(sc, &c, now);
        /* RFC 5044 §7.1.2 rule 4 (the responder sends no FPDU before the
         * initiator's first) is MPA's: over SCTP the PPID tells a DDP
         * Segment from Session Control, so either side may send first
         * (RFC 6581 §7). A p2p responder still waits for its RTR. */
        if (rc == 0)
            iw_startup_any_side_first(sc->conn);
        return rc;
    }
    bool accept = c.fc == IW_SCTP_FC_ACCEPT || c.fc == IW_SCTP_FC_ENH_ACCEPT;
    bool reject = c.fc == IW_SCTP_FC_REJECT || c.fc == IW_SCTP_FC_ENH_REJECT;
    /* §6.2, §6.3: the passive side answers an Initiate it has received. */
    if ((!accept && !reject) || !sc->began)
        return violation(sc, IW_SCTP_SESS_PROBLEM_UNEXPECTED_CTRL, IW_SCTP_PROBLEM_NONE, now);
    /* RFC 6581 §7: the enhanced sequences use the enhanced codes
     * throughout; an enhanced answer to a plain Initiate, or the reverse,
     * is in no legal sequence. */
    if (enh != sc->enhanced)
        return violation(sc, IW_SCTP_SESS_PROBLEM_ENH_MISMATCH, IW_SCTP_PROBLEM_NONE, now);
    if (reject) {
        sc->peer = PEER_ENDED;
        sc->rejected = true;
        end_session(sc);
    } else {
        sc->peer = PEER_OPENED;
        sc->sess = IW_SCTP_SESS_OPEN;
    }
    return feed_mpa(sc, &c, now);
}

static int rx_seg(iw_sctp_conn *sc, const uint8_t *msg, size_t len, iw_tstamp now) {
    iw_sctp_seg s;
    iw_sctp_problem why;
    if (iw_sctp_seg_decode(&s, msg, len, &why) < 0)
        return violation(sc, IW_SCTP_SESS_PROBLEM_CHUNK, why, now);
    /* §6.2: DDP Segments follow the sender's Initiate or Accept. */
    if (sc->peer != PEER_OPENED)
        return violation(sc, IW_SCTP_SESS_PROBLEM_SEG_BEFORE_SESSION, IW_SCTP_PROBLEM_NONE, now);
    /* §9: "MUST reject DDP Segments that are larger than the maximum". */
    if (s.ddp_len > sc->max_seg)
        return violation(sc, IW_SCTP_SESS_PROBLEM_SEG_TOO_LONG, IW_SCTP_PROBLEM_NONE, now);
    return feed_segment(sc, s.ddp, s.ddp_len, now);
}

/* One chunk, in DDP-SSN order. */
static int rx_in_order(iw_sctp_conn *sc, uint32_t ppid, const uint8_t *msg, size_t len,
                       iw_tstamp now) {
    /* §6.6: the passive side's first chunk answers our Initiate, so the
     * Initiate has arrived. */
    if (sc->rx_next == 0 && sc->role == IW_ROLE_INITIATOR)
        sc->ctrl_known = true;
    sc->rx_next++;
    if (ppid == IW_SCTP_PPID_DDP_CONTROL)
        return rx_ctrl(sc, msg, len, now);
    return rx_seg(sc, msg, len, now);
}

int iw_sctp_conn_recv(iw_sctp_conn *sc, uint32_t ppid, const uint8_t *msg, size_t len,
                      iw_tstamp now) {
    /* From a callback nothing may move (engine.h): refuse before any of
     * the session's state changes. */
    if (!sc || (len && !msg) || sc->sess == IW_SCTP_SESS_IDLE || iw_conn_busy(sc->conn))
        return IW_ERR_INVALID_ARG;
    sc->stats.chunks_rx++;
    if (sc->sess == IW_SCTP_SESS_ENDED) {
        /* Chunks of a session that ended on this side may still be in
         * flight (§6.6); after the peer's own final chunk none may come. */
        sc->stats.dropped++;
        if (sc->peer == PEER_ENDED && !sc->ended_here && !sc->llp_lost) {
            sc->problem = IW_SCTP_SESS_PROBLEM_AFTER_END;
            sc->chunk_problem = IW_SCTP_PROBLEM_NONE;
            return IW_ERR_PROTO;
        }
        return 0;
    }
    /* §5.1: a DDP association carries only RFC 5043's chunks. */
    if (ppid != IW_SCTP_PPID_DDP_SEGMENT && ppid != IW_SCTP_PPID_DDP_CONTROL)
        return violation(sc, IW_SCTP_SESS_PROBLEM_BAD_PPID, IW_SCTP_PROBLEM_NONE, now);
    if (len < IW_SCTP_SSN_LEN)
        return violation(sc, IW_SCTP_SESS_PROBLEM_CHUNK,
                         ppid == IW_SCTP_PPID_DDP_CONTROL ? IW_SCTP_PROBLEM_CTRL_SHORT
                                                          : IW_SCTP_PROBLEM_SEG_SHORT,
                         now);
    /* §5.2.1, §6.1: chunks are considered in DDP-SSN order, which starts at
     * 0 and has no gaps (§6); SCTP delivers them unordered (§10). A
     * DDP-SSN behind the next one due was used already; one further ahead
     * than the window cannot be accounted for by chunks still in flight
     * (§10: "An invalid DDP-SSN MAY result in termination"). */
    uint16_t ssn = iw_get_u16(msg);
    iw_sctp_ssn_place place = iw_sctp_ssn_place_of(sc->rx_next, ssn, sc->window);
    if (place == IW_SCTP_SSN_STALE)
        return violation(sc, IW_SCTP_SESS_PROBLEM_SSN_STALE, IW_SCTP_PROBLEM_NONE, now);
    if (place == IW_SCTP_SSN_BEYOND)
        return violation(sc, IW_SCTP_SESS_PROBLEM_SSN_WINDOW, IW_SCTP_PROBLEM_NONE, now);
    if (place == IW_SCTP_SSN_AHEAD) {
        /* §10: no resources for a chunk before it is known to be valid: the
         * DDP-SSN is in the window, and its length is one a chunk may have
         * (§9, §5.2.3), so the window holds at most window * out_cap. */
        if (len > sc->out_cap)
            return ppid == IW_SCTP_PPID_DDP_SEGMENT
                       ? violation(sc, IW_SCTP_SESS_PROBLEM_SEG_TOO_LONG, IW_SCTP_PROBLEM_NONE, now)
                       : violation(sc, IW_SCTP_SESS_PROBLEM_CHUNK, IW_SCTP_PROBLEM_PD_TOO_LONG,
                                   now);
        held_chunk *h = &sc->held[ssn % sc->window];
        if (h->used)
            return violation(sc, IW_SCTP_SESS_PROBLEM_SSN_DUPLICATE, IW_SCTP_PROBLEM_NONE, now);
        uint8_t *copy = sc->mem.malloc(len, sc->mem.user);
        if (!copy)
            return IW_ERR_NOMEM;
        memcpy(copy, msg, len);
        *h = (held_chunk){true, ppid, len, copy};
        sc->stats.reordered++;
        return 0;
    }
    int rc = rx_in_order(sc, ppid, msg, len, now);
    /* Then whatever was waiting for this one. */
    while (rc == 0 && sc->sess != IW_SCTP_SESS_ENDED) {
        held_chunk *h = &sc->held[sc->rx_next % sc->window];
        if (!h->used)
            break;
        held_chunk t = *h;
        *h = (held_chunk){0};
        rc = rx_in_order(sc, t.ppid, t.data, t.len, now);
        sc->mem.free(t.data, sc->mem.user);
    }
    return rc;
}

int iw_sctp_conn_llp_lost(iw_sctp_conn *sc, iw_tstamp now) {
    if (iw_conn_busy(sc->conn))
        return IW_ERR_INVALID_ARG;
    sc->llp_lost = true;
    end_session(sc);
    return iw_conn_rx_eof(sc->conn, now);
}

/* ---- tx ---- */

static int emit(iw_sctp_conn *sc, iw_sctp_msg *m, uint32_t ppid, size_t len) {
    if (ppid == IW_SCTP_PPID_DDP_CONTROL) {
        sc->ctrl_ssn = sc->tx_next;
        sc->ctrl_sent = true;
        sc->ctrl_known = false;
    }
    sc->tx_next++;
    sc->stats.chunks_tx++;
    *m = (iw_sctp_msg){ppid, sc->sid, sc->out, len};
    return 1;
}

/* The engine's MPA frame as the Session Control message it stands for
 * (RFC 6581 §7). */
static int emit_rr(iw_sctp_conn *sc, const iw_mpa_rr *rr, iw_sctp_msg *m) {
    iw_sctp_ctrl c;
    iw_sctp_ctrl_from_mpa(rr, sc->tx_next, &c);
    if (rr->type == IW_MPA_REQUEST) {
        sc->began = true;
        sc->enhanced = iw_sctp_fc_enhanced(c.fc);
    } else if (rr->r) {
        sc->rejected = sc->we_rejected = true;
        end_session(sc);
    } else if (sc->sess == IW_SCTP_SESS_STARTING) {
        sc->sess = IW_SCTP_SESS_OPEN;
    }
    iw_ssize n = iw_sctp_ctrl_encode(sc->out, sc->out_cap, &c);
    if (n < 0)
        return (int)n;
    return emit(sc, m, IW_SCTP_PPID_DDP_CONTROL, (size_t)n);
}

/* §6.2: "At least one side MUST send a DDP Stream Terminate", after any
 * RDMAP Terminate. We send ours once our engine has stopped (it sent or
 * received a Terminate, or closed) or a chunk broke a rule, unless the
 * session was rejected (§6.3 ends there), the peer's Terminate already
 * ended it, or the association is gone. */
static bool term_due(const iw_sctp_conn *sc) {
    if (sc->stats.term_tx || !sc->began || sc->rejected || sc->llp_lost || sc->stats.term_rx)
        return false;
    iw_conn_state st = iw_conn_get_state(sc->conn);
    return sc->ended_here || st == IW_CONN_TERMINATE || st == IW_CONN_CLOSED;
}

/* §6.6: "A DDP Stream Session Control message MUST NOT be sent if it may
 * be received before a prior DDP Stream Session Control message within
 * the same DDP Stream Session." */
static bool ctrl_may_follow(const iw_sctp_conn *sc) { return !sc->ctrl_sent || sc->ctrl_known; }

int iw_sctp_conn_tx_acked(iw_sctp_conn *sc, uint16_t ssn) {
    /* Only DDP-SSNs that were sent: at most 32767 behind the next. */
    if (!sc)
        return IW_ERR_INVALID_ARG;
    uint16_t back = (uint16_t)(sc->tx_next - ssn);
    if (back == 0 || back >= 0x8000u || back > sc->stats.chunks_tx)
        return IW_ERR_INVALID_ARG;
    if (sc->ctrl_sent && (uint16_t)(ssn - sc->ctrl_ssn) < 0x8000u)
        sc->ctrl_known = true;
    return 0;
}

static int emit_term(iw_sctp_conn *sc, iw_sctp_msg *m) {
    iw_sctp_ctrl c = {0};
    c.ssn = sc->tx_next;
    c.fc = IW_SCTP_FC_TERMINATE;
    iw_ssize n = iw_sctp_ctrl_encode(sc->out, sc->out_cap, &c);
    if (n < 0)
        return (int)n;
    sc->stats.term_tx = true;
    end_session(sc);
    return emit(sc, m, IW_SCTP_PPID_DDP_CONTROL, (size_t)n);
}

int iw_sctp_conn_next(iw_sctp_conn *sc, iw_sctp_msg *m, iw_tstamp now) {
    if (!sc || !m || iw_conn_busy(sc->conn))
        return IW_ERR_INVALID_ARG;
    if (sc->llp_lost || sc->stats.term_tx)
        return 0;
    for (;;) {
        if (sc->stage_off < sc->stage_len) {
            iw_frame fr;
            iw_ssize k = iw_deframer_feed(sc->df, sc->stage + sc->stage_off,
                                          sc->stage_len - sc->stage_off, &fr);
            if (k < 0)
                return (int)k;
            sc->stage_off += (size_t)k;
            if (fr.type == IW_FRAME_MPA_REQUEST || fr.type == IW_FRAME_MPA_REPLY)
                return emit_rr(sc, &fr.rr, m);
            if (fr.type == IW_FRAME_FPDU) {
                /* §5.2.2: the FPDU's ULPDU is the DDP segment. */
                iw_ssize n = iw_sctp_seg_encode(sc->out, sc->out_cap, sc->tx_next, fr.fpdu.ulpdu,
                                                fr.fpdu.ulpdu_len, NULL, 0);
                if (n < 0)
                    return (int)n;
                return emit(sc, m, IW_SCTP_PPID_DDP_SEGMENT, (size_t)n);
            }
            if (k == 0 && fr.type == IW_FRAME_NONE)
                sc->stage_off = sc->stage_len; /* nothing the deframer takes */
            continue;
        }
        iw_ssize n = iw_conn_write(sc->conn, sc->stage, STAGE_LEN, now);
        if (n < 0)
            return (int)n;
        if (n > 0) {
            sc->stage_len = (size_t)n;
            sc->stage_off = 0;
            continue;
        }
        /* The engine has nothing more: a chunk that broke a rule may end
         * the session without the engine having sent anything. */
        if (term_due(sc) && ctrl_may_follow(sc))
            return emit_term(sc, m);
        return 0;
    }
}

bool iw_sctp_conn_want_write(const iw_sctp_conn *sc) {
    if (sc->llp_lost || sc->stats.term_tx)
        return false;
    return sc->stage_off < sc->stage_len || iw_conn_want_write(sc->conn) ||
           (term_due(sc) && ctrl_may_follow(sc));
}
