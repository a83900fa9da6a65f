/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Differential: the engine's verdicts against the codecs' (iw_deframer +
 * iw_rdmap_decode, what iwarp-decode and the Wireshark plugin use) and the
 * shadow analysis' (iw_shadow, the plugin's stateful verdicts) on the same
 * FPDU stream; the input format is in fuzz_diff_core.h.
 *
 * The engine is an MPA responder after a valid startup, with the regions of
 * fuzz_conn_rx (STags 0x101 rw, 0x201 atomic, 0x301 local sink, 0x401 in
 * another PD). The stream after the startup is decoded by the codecs
 * (grid position 0, markers and CRC as negotiated), and the engine is fed
 * exactly the octets of each frame the deframer found, one frame at a time,
 * so a Terminate can be pinned to the frame that raised it.
 *
 * The rule checked. Let a frame's codec verdict be the deframer's (CRC,
 * then markers: RFC 5044 §6, §4.2) or else iw_rdmap_decode's. Then, frame
 * by frame, until the engine's stream has ended (a Terminate sent or
 * received):
 *  - a frame with a non-ok codec verdict makes the engine send a Terminate
 *    with exactly that triple, on that frame (a deferred one, a misaligned
 *    Atomic Request, may be named by a stateful check instead, m.deferred).
 *    Nothing else can pre-empt it on
 *    the same frame: the engine runs the same stateless checks in the same
 *    order before any stateful one (architecture.md, "Stateless and
 *    stateful checks"), and the CRC before both;
 *  - a frame the codecs accept may still be terminated by a stateful check
 *    (STag, bounds, access, MSN window, MO, IRD, Invalidate STag, atomic
 *    alignment, a response nobody asked for), or by the engine's one
 *    stricter stateless rule: control messages split over segments, which
 *    the codec only notes (CONTROL_SEGMENTED) and the engine rejects with
 *    Remote Operation / Unspecified. The triple must be one of those the
 *    frame's opcode can raise: so a stateful check "legitimately fires
 *    first" exactly when it fires on an earlier, codec-clean frame;
 *  - either way the Terminate copies that frame's DDP header and length
 *    (RFC 5040 §4.8 Fig. 10; none for MPA errors), the engine then sends
 *    nothing else, and no later frame changes that;
 *  - a peer's Terminate that the codecs accept ends the stream without a
 *    Terminate of ours (RFC 5040 §5.4), unless its MSN is wrong.
 * Frames after the end of Full Operation are fed but judged by nobody.
 *
 * The shadow sees both directions in the order the engine met them (each
 * peer frame, then what the engine wrote in answer) and:
 *  - finds nothing wrong with anything the engine sends;
 *  - when it gives a codec-clean peer frame a Terminate, the engine sends
 *    exactly that one (triple and RFC section) for that frame. The one
 *    allowed difference is the shadow's own caveat: a verdict that assumes
 *    a receive buffer (IW_SHADOW_ASSUME_RECV_BUF) may meet one of the
 *    untagged buffer checks first (RFC 5041 §7.1 untagged (2)-(5): 1/2/2,
 *    1/2/3, 1/2/4, 1/2/5, as shadow.h says);
 *  - when the engine terminates a codec-clean frame for a reason the
 *    capture shows (QN 1-3 MSNs, the IRD when the startup frames carried
 *    it, a response nobody asked for), the shadow said so too. What depends
 *    on registrations and posted buffers it cannot see, and stays silent
 *    about. */
#include "fuzz_diff_core.h"

#define ARENA 16384
#define RBUF 256

typedef struct {
    iw_conn *conn;
    fz_evlog ev;
} ctx;

static int on_event(iw_conn *c, const iw_event *e, void *user) {
    ctx *x = user;
    fz_ev_log(&x->ev, c, e);
    return 0;
}
static const iw_callbacks cbs = {IW_CALLBACKS_V1, on_event};

/* Feed octets the way the setup says. */
static void feed(iw_conn *c, const uint8_t *p, size_t n, bool iov) {
    uint8_t *buf = fuzz_dup(p, n);
    if (!iov) {
        FUZZ_CHECK(iw_conn_recv(c, buf, n, 1) == (iw_ssize)n);
    } else {
        size_t used = 0;
        while (used < n) {
            iw_iovec v[32];
            int k = iw_conn_rx_iov(c, v, 32);
            FUZZ_CHECK(k > 0);
            size_t got = 0;
            for (int i = 0; i < k && used + got < n; i++) {
                size_t m = v[i].len < n - used - got ? v[i].len : n - used - got;
                memcpy(v[i].base, buf + used + got, m);
                got += m;
            }
            FUZZ_CHECK(iw_conn_rx_commit(c, got, 1) == 0);
            used += got;
        }
    }
    free(buf);
}

/* Triples a codec-clean segment of this opcode may still get from the
 * engine (fuzz header comment; iw_rx.c, iw_place.c). */
static bool stateful_ok(const iw_rdmap_msg *m, uint16_t t) {
    bool segmented = m->notes & IW_NOTE(CONTROL_SEGMENTED);
    if (segmented && t == IW_TERM_RDMAP_OP_UNSPECIFIED)
        return true;
    bool tagged_codes = t == IW_TERM_DDP_T_INVALID_STAG || t == IW_TERM_DDP_T_BASE_BOUNDS ||
                        t == IW_TERM_DDP_T_STAG_NOT_ASSOC || t == IW_TERM_DDP_T_TO_WRAP;
    bool rdmap_prot = t == IW_TERM_RDMAP_INVALID_STAG || t == IW_TERM_RDMAP_BASE_BOUNDS ||
                      t == IW_TERM_RDMAP_ACCESS_RIGHTS || t == IW_TERM_RDMAP_STAG_NOT_ASSOC ||
                      t == IW_TERM_RDMAP_TO_WRAP;
    bool msn = t == IW_TERM_DDP_UT_NO_BUFFER || t == IW_TERM_DDP_UT_MSN_RANGE;
    switch (m->opcode) {
    case IW_OP_WRITE:
        return tagged_codes;
    case IW_OP_READ_RESP:
        return tagged_codes || t == IW_TERM_RDMAP_UNEXPECTED_OPCODE;
    case IW_OP_SEND_INV:
    case IW_OP_SEND_SE_INV:
        if (t == IW_TERM_RDMAP_PROT_CANT_INVALIDATE)
            return true;
        /* fall through */
    case IW_OP_SEND:
    case IW_OP_SEND_SE:
        return msn || t == IW_TERM_DDP_UT_INVALID_MO || t == IW_TERM_DDP_UT_TOO_LONG;
    case IW_OP_IMM:
    case IW_OP_IMM_SE:
        return msn;
    case IW_OP_READ_REQ:
        return msn || rdmap_prot;
    case IW_OP_ATOMIC_REQ:
        return msn || rdmap_prot || t == IW_TERM_RDMAP_CATASTROPHIC_STREAM;
    case IW_OP_ATOMIC_RESP:
        return t == IW_TERM_DDP_UT_MSN_RANGE || t == IW_TERM_RDMAP_UNEXPECTED_OPCODE;
    case IW_OP_TERMINATE:
        return t == IW_TERM_DDP_UT_MSN_RANGE;
    default:
        return false;
    }
}

/* Engine output as the shadow sees it: every new frame, in order. */
typedef struct {
    iw_deframer df;
    size_t seen;
    iw_shadow sh;
    uint64_t id;
    const iw_peer_trace *peer; /* the peer's frames, by id */
    fz_diff_trace *t;
} watch;

static watch w; /* large: off the stack */

/* The verdict names a peer Read Request whose sink range wraps 2^64. */
static bool sink_wraps(const iw_shadow_result *res) {
    if (!res->has_ref || !w.peer || res->ref >= w.peer->n)
        return false;
    const iw_rdmap_msg *m = &w.peer->v[res->ref].msg;
    return m->opcode == IW_OP_READ_REQ && m->has_hdr &&
           m->u.read_req.sink_to > UINT64_MAX - m->u.read_req.read_size;
}

static void watch_output(const fz_bytes *out) {
    iw_frame fr;
    while (w.seen < out->n) {
        iw_ssize k = iw_deframer_feed(&w.df, out->p + w.seen, out->n - w.seen, &fr);
        FUZZ_CHECK(k >= 0);
        w.seen += (size_t)k;
        iw_shadow_result res;
        if (fr.type == IW_FRAME_MPA_REPLY) {
            FUZZ_CHECK(iw_shadow_mpa(&w.sh, 1, &fr.rr, w.id++, &res) == 0);
            FUZZ_CHECK(res.verdict.kind == IW_VERDICT_OK);
        } else if (fr.type == IW_FRAME_FPDU) {
            iw_rdmap_msg m;
            iw_verdict v;
            FUZZ_CHECK(fr.verdict.kind == IW_VERDICT_OK);
            FUZZ_CHECK(iw_rdmap_decode(&m, fr.fpdu.ulpdu, fr.fpdu.ulpdu_len, &v) >= 0);
            FUZZ_CHECK(iw_shadow_fpdu(&w.sh, 1, &m, fr.fpdu.ulpdu_len, NULL, w.id++, &res) == 0);
            /* A conformant engine gives its peer no reason to terminate,
             * but the one the peer asked for: a Read Request whose sink
             * range wraps is still answered (RFC 5040 §7.2 checks only the
             * source), and its Data Sink's DDP layer terminates the answer
             * (RFC 5040 §4.4, "the DDP layer protects against a wrap"). */
            uint16_t *ex = realloc(w.t->eng_excused, (w.t->eng_fpdus + 1) * sizeof *ex);
            FUZZ_CHECK(ex != NULL);
            w.t->eng_excused = ex;
            ex[w.t->eng_fpdus++] = 0;
            if (res.rule == IW_SHADOW_RULE_READ_RESP_BOUNDS && sink_wraps(&res)) {
                ex[w.t->eng_fpdus - 1] = res.verdict.term;
                continue;
            }
            if (res.verdict.kind != IW_VERDICT_OK)
                fprintf(stderr, "engine's opcode %u: shadow %04x (%s)\n", m.opcode,
                        res.verdict.term, iw_shadow_rule_id(res.rule));
            FUZZ_CHECK(res.verdict.kind == IW_VERDICT_OK);
        } else if (k == 0) {
            break;
        }
    }
}

/* The IRD is on the wire only in RFC 6581 enhanced startup frames
 * (`enhanced`). */
bool fz_diff_shadow_must_see(unsigned opcode, uint16_t t, bool enhanced) {
    switch (opcode) {
    case IW_OP_READ_REQ:
    case IW_OP_ATOMIC_REQ:
        return t == IW_TERM_DDP_UT_MSN_RANGE || (t == IW_TERM_DDP_UT_NO_BUFFER && enhanced);
    case IW_OP_TERMINATE:
        return t == IW_TERM_DDP_UT_MSN_RANGE;
    case IW_OP_READ_RESP:
    case IW_OP_ATOMIC_RESP:
        return t == IW_TERM_RDMAP_UNEXPECTED_OPCODE || t == IW_TERM_DDP_UT_MSN_RANGE;
    default:
        return false;
    }
}

bool fz_diff_recv_buf_triple(uint16_t t) {
    return t == IW_TERM_DDP_UT_NO_BUFFER || t == IW_TERM_DDP_UT_MSN_RANGE ||
           t == IW_TERM_DDP_UT_INVALID_MO || t == IW_TERM_DDP_UT_TOO_LONG;
}

/* The Terminate our engine sent for frame f: Fig. 10's sub-fields. */
static void check_copy(const iw_term_info *t, const iw_peer_frame *f) {
    unsigned layer = iw_term_layer(t->triple);
    if (layer == 2) { /* LLP: no DDP header */
        FUZZ_CHECK(!t->m && !t->d && !t->r);
        return;
    }
    FUZZ_CHECK(t->m && t->d && t->ddp_seg_len == f->ulpdu_len);
    size_t dl = f->ulpdu_len ? iw_ddp_hdr_len(f->ulpdu[0]) : IW_DDP_UNTAGGED_HDR_LEN;
    FUZZ_CHECK(t->hdr_len == dl + (t->r ? IW_RDMAP_READ_REQ_LEN : 0));
    size_t have = f->ulpdu_len < t->hdr_len ? f->ulpdu_len : t->hdr_len;
    FUZZ_CHECK(memcmp(t->hdr, f->ulpdu, have) == 0);
    for (size_t i = have; i < dl; i++)
        FUZZ_CHECK(t->hdr[i] == 0);
    /* R only for a Remote Protection error on a Read Request (§7.1 rule 3). */
    FUZZ_CHECK(!t->r || (f->msg.opcode == IW_OP_READ_REQ && iw_term_layer(t->triple) == 0 &&
                         iw_term_etype(t->triple) == 1));
}

void fz_diff_run(const uint8_t *data, size_t size, fz_diff_trace *t) {
    memset(t, 0, sizeof *t);
    fuzz_in in = {data, size};
    uint8_t cfg = fuzz_u8(&in), setup = fuzz_u8(&in);
    bool markers = cfg & 1, via_iov = setup & 8;

    /* Engine, regions, buffers. */
    uint8_t *arena = calloc(ARENA, 1);
    FUZZ_CHECK(arena != NULL);
    iw_rnic *rnic;
    uint32_t pd, pd2, st;
    FUZZ_CHECK(iw_rnic_new(&rnic, NULL) == 0);
    FUZZ_CHECK(iw_pd_alloc(rnic, &pd) == 0 && iw_pd_alloc(rnic, &pd2) == 0);
    const unsigned rw = IW_ACCESS_LOCAL_WRITE | IW_ACCESS_REMOTE_READ | IW_ACCESS_REMOTE_WRITE;
    FUZZ_CHECK(iw_mr_reg(rnic, pd, arena, 4096, 0x1000, rw, &st) == 0 && st == 0x101);
    FUZZ_CHECK(iw_mr_reg(rnic, pd, arena + 4096, 64, 0x8000, IW_ACCESS_REMOTE_ATOMIC, &st) == 0);
    FUZZ_CHECK(iw_mr_reg(rnic, pd, arena + 8192, 1024, 0x20000, IW_ACCESS_LOCAL_WRITE, &st) == 0);
    FUZZ_CHECK(iw_mr_reg(rnic, pd2, arena + 9216, 1024, 0x1000, rw, &st) == 0 && st == 0x401);
    ctx x = {0};
    iw_conn_settings s;
    iw_conn_settings_default(&s, IW_ROLE_RESPONDER);
    s.markers = markers;
    s.crc = cfg & 2;
    s.ird = cfg >> 5;
    s.cut_through = setup & 32;
    FUZZ_CHECK(iw_conn_new(&x.conn, rnic, pd, &s, &cbs, &x) == 0);
    for (unsigned k = 0; k < (setup & 7u); k++)
        FUZZ_CHECK(iw_conn_post_recv(x.conn, k, arena + 10240 + k * RBUF, RBUF) == 0);
    FUZZ_CHECK(iw_conn_start(x.conn, 1) == 0);

    /* The peer: a valid Request, then the stream. */
    iw_peer p;
    FUZZ_CHECK(iw_peer_init(&p) == 0);
    iw_mpa_rr rr = fz_peer_request(&p, cfg & 16, setup & 16, cfg & 4);
    bool crc = s.crc || rr.c;
    iw_shadow_init(&w.sh);
    w.seen = 0;
    w.peer = NULL;
    w.t = t;
    w.id = 1000000; /* the engine's frames; the peer's are 0, 1, 2... */
    iw_df_cfg oc = {IW_DF_START_REPLY, rr.m ? IW_DF_ON : IW_DF_OFF, crc ? IW_DF_ON : IW_DF_OFF, 0};
    iw_deframer_init(&w.df, &oc);
    iw_mpa_rr req;
    iw_verdict rv;
    iw_shadow_result sres;
    FUZZ_CHECK(iw_mpa_rr_decode(&req, p.out.p, p.out.len, &rv) == (iw_ssize)p.out.len);
    FUZZ_CHECK(iw_shadow_mpa(&w.sh, 0, &req, 999999, &sres) == 0);
    feed(x.conn, p.out.p, p.out.len, via_iov);
    memcpy(fz_bytes_room(&t->in, p.out.len), p.out.p, p.out.len);
    t->in.n = t->in_startup = p.out.len;
    iw_peer_take(&p);
    FUZZ_CHECK(iw_conn_get_state(x.conn) == IW_CONN_RTS);
    iw_peer_full_operation(&p, markers, crc);
    if (cfg & 8) {
        while (in.n >= 3) {
            uint8_t fl = fuzz_u8(&in);
            size_t len = fuzz_u16(&in);
            if (len > in.n)
                len = in.n;
            iw_peer_fpdu_opt o = {.crc_xor = (fl & 1) ? 0xC0FFEEu : 0,
                                  .marker_delta = (fl & 2) ? 4 : 0,
                                  .len_override = (fl & 4) != 0,
                                  .ulpdu_len = (uint16_t)(len + 4)};
            int frc = iw_peer_fpdu(&p, in.p, len, &o);
            if (frc == IW_ERR_INVALID_ARG) { /* no marker inside to move: send it unmoved */
                o.marker_delta = 0;
                frc = iw_peer_fpdu(&p, in.p, len, &o);
            }
            FUZZ_CHECK(frc == 0);
            in.p += len;
            in.n -= len;
        }
    } else {
        FUZZ_CHECK(iw_peer_raw(&p, in.p, in.n) == 0);
    }
    if (p.out.len)
        memcpy(fz_bytes_room(&t->in, p.out.len), p.out.p, p.out.len);
    t->in.n += p.out.len;

    /* (b) the codecs. */
    iw_df_cfg dc = {IW_DF_START_FPDU, markers ? IW_DF_ON : IW_DF_OFF, crc ? IW_DF_ON : IW_DF_OFF,
                    0};
    iw_peer_trace tr = {0};
    FUZZ_CHECK(iw_peer_decode(&tr, p.out.p, p.out.len, &dc) == 0);
    w.peer = &tr;
    t->v = calloc(tr.n ? tr.n : 1, sizeof *t->v);
    FUZZ_CHECK(t->v != NULL);

    /* (a) the engine, frame by frame. */
    fz_bytes *out = &t->out;
    FUZZ_CHECK(fz_drain(x.conn, out, 0, 1) >= 0);
    watch_output(out);
    t->out_startup = out->n;
    size_t ev_seen = x.ev.n, fed = 0;
    bool ended = false; /* a Terminate went either way */
    for (size_t i = 0; i < tr.n; i++) {
        const iw_peer_frame *f = &tr.v[i];
        fz_diff_step *step = &t->v[t->n++];
        FUZZ_CHECK(f->wire_off == fed);
        step->in_off = t->in_startup + f->wire_off;
        step->in_len = f->wire_len;
        step->type = f->type;
        step->opcode = f->msg.opcode;
        /* (c) the shadow's verdict, before the engine answers. */
        iw_verdict pre = f->verdict.kind != IW_VERDICT_OK ? f->verdict : f->rdmap_verdict;
        step->codec = pre;
        step->codec_deferred = f->verdict.kind == IW_VERDICT_OK && f->msg.deferred;
        iw_shadow_result sh = {0};
        if (f->type == IW_FRAME_FPDU)
            FUZZ_CHECK(iw_shadow_fpdu(&w.sh, 0, pre.kind == IW_VERDICT_OK ? &f->msg : NULL,
                                      f->ulpdu_len, &pre, (uint64_t)i, &sh) == 0);
        else
            FUZZ_CHECK(iw_shadow_lost(&w.sh, 0) == 0);
        step->shadow = sh;
        feed(x.conn, p.out.p + f->wire_off, f->wire_len, via_iov);
        fed += f->wire_len;
        step->out_off = out->n;
        FUZZ_CHECK(fz_drain(x.conn, out, 0, 1) >= 0);
        step->out_len = out->n - step->out_off;
        watch_output(out);
        if (ended) {
            FUZZ_CHECK(x.ev.n == ev_seen); /* nothing after the end */
            continue;
        }
        if (f->type != IW_FRAME_FPDU) {
            /* A partial FPDU at the end: neither side may judge it. */
            FUZZ_CHECK(f->type == IW_FRAME_INCOMPLETE);
            FUZZ_CHECK(iw_conn_get_state(x.conn) == IW_CONN_RTS);
            continue;
        }
        step->judged = true;
        iw_verdict v = pre;
        const fz_ev *sent = NULL, *got = NULL;
        for (size_t k = ev_seen; k < x.ev.n; k++) {
            if (x.ev.v[k].type == IW_EV_TERM_SENT)
                sent = &x.ev.v[k];
            if (x.ev.v[k].type == IW_EV_TERM_RECEIVED)
                got = &x.ev.v[k];
        }
        ev_seen = x.ev.n;
        if (sent) {
            step->term_sent = true;
            step->term = sent->term;
            step->term_rfc = sent->rfc;
        }
        step->term_received = got != NULL;
        if (getenv("FUZZ_VERBOSE"))
            fprintf(stderr,
                    "  frame %zu: opcode %u, %u octets, codec %04x, shadow %04x, engine %s %04x\n",
                    i, f->msg.opcode, f->ulpdu_len, v.kind == IW_VERDICT_TERM ? v.term : 0,
                    sh.verdict.kind == IW_VERDICT_TERM ? sh.verdict.term : 0,
                    sent  ? "sent"
                    : got ? "received"
                          : "-",
                    sent  ? sent->term.triple
                    : got ? got->term.triple
                          : 0);
        if (v.kind == IW_VERDICT_OK && sh.verdict.kind != IW_VERDICT_OK) {
            /* The shadow's stateful Terminate is the engine's, here. */
            FUZZ_CHECK(sh.verdict.kind == IW_VERDICT_TERM);
            bool buf = (sh.assume & IW_SHADOW_ASSUME_RECV_BUF) && sent &&
                       fz_diff_recv_buf_triple(sent->term.triple);
            if (!buf && (!sent || sent->term.triple != sh.verdict.term ||
                         !fz_str_same(sent->rfc, sh.verdict.rfc)))
                fprintf(stderr, "frame %zu: shadow %04x (%s, %s), engine %04x (%s)\n", i,
                        sh.verdict.term, iw_shadow_rule_id(sh.rule), sh.verdict.rfc,
                        sent ? sent->term.triple : 0, sent ? sent->rfc : "-");
            FUZZ_CHECK(buf || (sent && sent->term.triple == sh.verdict.term &&
                               fz_str_same(sent->rfc, sh.verdict.rfc)));
        }
        if (v.kind == IW_VERDICT_OK && sent &&
            fz_diff_shadow_must_see(f->msg.opcode, sent->term.triple,
                                    iw_conn_get_info(x.conn)->enhanced)) {
            if (sh.verdict.kind != IW_VERDICT_TERM)
                fprintf(stderr, "frame %zu: engine %04x (%s), shadow silent\n", i,
                        sent->term.triple, sent->rfc);
            FUZZ_CHECK(sh.verdict.kind == IW_VERDICT_TERM);
        }
        if (v.kind != IW_VERDICT_OK) {
            /* The codecs reject this frame: exactly that Terminate, here. */
            FUZZ_CHECK(v.kind == IW_VERDICT_TERM);
            /* A deferred verdict (misaligned Atomic Request, RFC 7306 §8.2)
             * is certain, but a stateful check may name the Terminate first. */
            bool same = sent && (sent->term.triple == v.term ||
                                 (f->msg.deferred && stateful_ok(&f->msg, sent->term.triple)));
            if (!same)
                fprintf(stderr, "frame %zu: codec %04x (%s), engine %04x\n", i, v.term, v.rfc,
                        sent ? sent->term.triple : 0);
            FUZZ_CHECK(same);
            check_copy(&sent->term, f);
            ended = true;
        } else if (sent) {
            /* Clean for the codecs: only a stateful check may end it. */
            if (!stateful_ok(&f->msg, sent->term.triple))
                fprintf(stderr, "frame %zu: opcode %u clean for the codecs, engine %04x\n", i,
                        f->msg.opcode, sent->term.triple);
            FUZZ_CHECK(stateful_ok(&f->msg, sent->term.triple));
            check_copy(&sent->term, f);
            ended = true;
        } else if (got) {
            FUZZ_CHECK(f->msg.opcode == IW_OP_TERMINATE);
            ended = true;
        } else {
            FUZZ_CHECK(iw_conn_get_state(x.conn) == IW_CONN_RTS);
        }
        if (ended)
            FUZZ_CHECK(iw_conn_get_state(x.conn) == IW_CONN_TERMINATE);
    }
    FUZZ_CHECK(fed == p.out.len);
    t->enhanced = iw_conn_get_info(x.conn)->enhanced;
    fz_out o;
    fz_check_output(out->p, out->n, false, iw_conn_get_info(x.conn), &o);
    fz_check_terminate(&x.ev, &o, out->n);

    w.peer = NULL;
    iw_peer_trace_free(&tr);
    iw_peer_free(&p);
    free(x.ev.v);
    iw_conn_del(x.conn);
    iw_rnic_del(rnic);
    free(arena);
}

void fz_diff_trace_free(fz_diff_trace *t) {
    free(t->in.p);
    free(t->out.p);
    free(t->v);
    free(t->eng_excused);
    memset(t, 0, sizeof *t);
}
