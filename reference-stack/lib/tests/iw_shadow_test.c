/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iw_shadow against the RFCs, and against the engine as ground truth.
 *
 *   A. rules: conversations built with the raw peer's encoders, one rule at
 *      a time. The offending FPDU gets exactly the expected verdict (triple,
 *      RFC section, rule), nothing before it gets one, and what the same
 *      receiver gets afterwards is "after terminate". Checks the capture
 *      cannot make certain give no verdict.
 *   B. valid ground truth: two engines back to back (every opcode,
 *      peer-to-peer with each RTR type, markers, CRC, small MULPDU,
 *      ORD-throttled Reads and Atomics, Send with Invalidate). Both
 *      directions are recorded in transfer order and replayed through
 *      deframers into the shadow: no verdict and no note anywhere.
 *   C. violation ground truth: the raw peer against an engine. The shadow's
 *      one verdict is on the offending FPDU and equals the Terminate the
 *      engine actually sent: the same triple and the same RFC section. */
#include <iwarp/engine.h>
#include <iwarp/shadow.h>

#include <stdlib.h>
#include <string.h>

#include "iw_peer.h"
#include "iw_test.h"

static const iw_tstamp T0 = 1000000000ull;

/* ======================================================================
 * A capture: both directions' octets in the order they crossed the wire
 * ====================================================================== */

enum { CH_DATA = 1, CH_LOST };

typedef struct chunk {
    int kind;
    unsigned dir;
    size_t off, len;
} chunk;

typedef struct caplog {
    iw_peer_buf data;
    chunk *v;
    size_t n, cap;
} caplog;

static chunk *log_push(caplog *l) {
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        if (!l->v)
            abort();
    }
    return &l->v[l->n++];
}

static void log_add(caplog *l, unsigned dir, const uint8_t *p, size_t n) {
    if (!n)
        return;
    chunk *c = log_push(l);
    *c = (chunk){CH_DATA, dir, l->data.len, n};
    if (iw_peer_buf_add(&l->data, p, n))
        abort();
}

static void log_lost(caplog *l, unsigned dir) {
    chunk *c = log_push(l);
    *c = (chunk){CH_LOST, dir, 0, 0};
}

static void log_free(caplog *l) {
    iw_peer_buf_free(&l->data);
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* ======================================================================
 * Replay: deframers per direction, codecs, then the shadow
 * ====================================================================== */

typedef struct srec {
    unsigned dir;
    uint64_t id;
    iw_frame_type type;
    bool decoded;
    uint8_t opcode;
    uint16_t term_triple; /* a Terminate's own triple */
    iw_verdict pre;       /* the stateless verdict (MPA, then DDP/RDMAP) */
    iw_shadow_result res;
} srec;

typedef struct replay {
    iw_shadow sh;
    srec *v;
    size_t n, cap;
} replay;

typedef struct rcfg {
    iw_df_start start[2];
    bool markers[2]; /* markers in direction 0 / 1 */
    bool crc;
} rcfg;

static srec *rec_push(replay *r) {
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 128;
        r->v = realloc(r->v, r->cap * sizeof *r->v);
        if (!r->v)
            abort();
    }
    srec *s = &r->v[r->n++];
    memset(s, 0, sizeof *s);
    return s;
}

static void rec_frame(replay *r, unsigned dir, const iw_frame *fr, uint64_t id) {
    srec *s = rec_push(r);
    s->dir = dir;
    s->id = id;
    s->type = fr->type;
    s->pre = fr->verdict;
    if (fr->type == IW_FRAME_MPA_REQUEST || fr->type == IW_FRAME_MPA_REPLY) {
        if (fr->verdict.kind == IW_VERDICT_OK)
            CHECK_EQ(iw_shadow_mpa(&r->sh, dir, &fr->rr, id, &s->res), 0);
        return;
    }
    if (fr->type != IW_FRAME_FPDU)
        return;
    iw_rdmap_msg m;
    memset(&m, 0, sizeof m);
    iw_verdict v;
    iw_ssize n = iw_rdmap_decode(&m, fr->fpdu.ulpdu, fr->fpdu.ulpdu_len, &v);
    if (s->pre.kind == IW_VERDICT_OK && n < 0)
        s->pre = v;
    if (fr->verdict.kind == IW_VERDICT_OK && n >= 0) {
        s->decoded = true;
        s->opcode = m.opcode;
        if (m.opcode == IW_OP_TERMINATE && m.has_hdr)
            s->term_triple = IW_TERM_TRIPLE(m.u.term.layer, m.u.term.etype, m.u.term.ecode);
    }
    int rc = iw_shadow_fpdu(&r->sh, dir, fr->verdict.kind == IW_VERDICT_OK ? &m : NULL,
                            fr->fpdu.ulpdu_len, &s->pre, id, &s->res);
    CHECK_EQ(rc, 0);
}

static void replay_run(replay *r, const caplog *l, const rcfg *c) {
    memset(r, 0, sizeof *r);
    iw_shadow_init(&r->sh);
    iw_deframer *df[2];
    for (unsigned d = 0; d < 2; d++) {
        df[d] = malloc(sizeof *df[d]);
        if (!df[d])
            abort();
        iw_df_cfg dc = {c->start[d], c->markers[d] ? IW_DF_ON : IW_DF_OFF,
                        c->crc ? IW_DF_ON : IW_DF_OFF, 0};
        iw_deframer_init(df[d], &dc);
    }
    uint64_t id = 0;
    for (size_t i = 0; i < l->n; i++) {
        const chunk *ch = &l->v[i];
        if (ch->kind == CH_LOST) {
            CHECK_EQ(iw_shadow_lost(&r->sh, ch->dir), 0);
            continue;
        }
        const uint8_t *p = l->data.p + ch->off;
        size_t left = ch->len;
        while (left) {
            iw_frame fr;
            iw_ssize n = iw_deframer_feed(df[ch->dir], p, left, &fr);
            REQUIRE(n >= 0);
            p += n;
            left -= (size_t)n;
            if (fr.type != IW_FRAME_NONE)
                rec_frame(r, ch->dir, &fr, ++id);
            else if (n == 0)
                break;
        }
    }
    for (unsigned d = 0; d < 2; d++)
        free(df[d]);
}

static void replay_free(replay *r) {
    free(r->v);
    r->v = NULL;
    r->n = r->cap = 0;
}

static const srec *rec_by_id(const replay *r, uint64_t id) {
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].id == id)
            return &r->v[i];
    return NULL;
}

static size_t n_verdicts(const replay *r) {
    size_t k = 0;
    for (size_t i = 0; i < r->n; i++)
        k += r->v[i].res.verdict.kind != IW_VERDICT_OK;
    return k;
}

static const srec *first_verdict(const replay *r) {
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].res.verdict.kind != IW_VERDICT_OK)
            return &r->v[i];
    return NULL;
}

static bool streq(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

/* Exactly one stateful verdict in the capture, on frame id. */
static void expect_one(const replay *r, uint64_t id, uint16_t triple, const char *rfc,
                       iw_shadow_rule rule) {
    CHECK_EQ(n_verdicts(r), 1);
    const srec *s = rec_by_id(r, id);
    REQUIRE(s);
    CHECK_EQ(s->res.verdict.kind, IW_VERDICT_TERM);
    CHECK_EQ(s->res.verdict.term, triple);
    CHECK(streq(s->res.verdict.rfc, rfc));
    CHECK_EQ(s->res.rule, rule);
    CHECK(s->res.judged);
    if (!streq(s->res.verdict.rfc, rfc))
        fprintf(stderr, "    rfc: got \"%s\", want \"%s\"\n",
                s->res.verdict.rfc ? s->res.verdict.rfc : "(null)", rfc);
}

/* No verdict, and no note outside `allowed`. */
static void expect_clean(const replay *r, uint32_t allowed) {
    for (size_t i = 0; i < r->n; i++) {
        const srec *s = &r->v[i];
        if (s->res.verdict.kind != IW_VERDICT_OK || (s->res.notes & ~allowed)) {
            fprintf(stderr,
                    "    frame %llu dir %u op %u: verdict %u triple 0x%04x (%s) notes 0x%x\n",
                    (unsigned long long)s->id, s->dir, s->opcode, s->res.verdict.kind,
                    s->res.verdict.term, iw_shadow_rule_id(s->res.rule), s->res.notes);
            CHECK(!"unexpected verdict or note");
        }
    }
}

/* ======================================================================
 * A. Hand-built conversations
 * ====================================================================== */

/* Two raw peers (0: initiator, 1: responder) and the capture between them.
 * Every call below frames one message and returns its frame id. */
typedef struct conv {
    iw_peer p[2];
    caplog log;
    uint64_t next_id;
    rcfg rc;
} conv;

static uint64_t take(conv *c, unsigned d) {
    log_add(&c->log, d, c->p[d].out.p, c->p[d].out.len);
    iw_peer_take(&c->p[d]);
    return ++c->next_id;
}

static void conv_init(conv *c) {
    memset(c, 0, sizeof *c);
    if (iw_peer_init(&c->p[0]) || iw_peer_init(&c->p[1]))
        abort();
    c->rc.start[0] = IW_DF_START_REQUEST;
    c->rc.start[1] = IW_DF_START_REPLY;
}

/* Startup with these frames; returns the Reply's id. */
static uint64_t conv_start(conv *c, const iw_mpa_rr *req, const iw_mpa_rr *rep) {
    iw_peer_rr(&c->p[0], req);
    take(c, 0);
    iw_peer_rr(&c->p[1], rep);
    uint64_t id = take(c, 1);
    bool crc = req->c || rep->c;
    iw_peer_full_operation(&c->p[0], rep->m, crc);
    iw_peer_full_operation(&c->p[1], req->m, crc);
    c->rc.markers[0] = rep->m;
    c->rc.markers[1] = req->m;
    c->rc.crc = crc;
    return id;
}

/* Default startup: Rev 2 client-server, IRD = ORD = 4, CRC. */
static void conv_default(conv *c) {
    conv_init(c);
    iw_mpa_rr req, rep;
    iw_peer_rr_default(&req, IW_MPA_REQUEST);
    iw_peer_rr_default(&rep, IW_MPA_REPLY);
    req.v2.ird = req.v2.ord = rep.v2.ird = rep.v2.ord = 4;
    conv_start(c, &req, &rep);
}

/* Mid-stream: no startup in the capture. */
static void conv_midstream(conv *c) {
    conv_init(c);
    c->rc.start[0] = c->rc.start[1] = IW_DF_START_FPDU;
    c->rc.crc = true;
    iw_peer_full_operation(&c->p[0], false, true);
    iw_peer_full_operation(&c->p[1], false, true);
}

static void conv_free(conv *c) {
    iw_peer_free(&c->p[0]);
    iw_peer_free(&c->p[1]);
    log_free(&c->log);
}

static const uint8_t g_pay[4096] = {1, 2, 3, 4, 5, 6, 7, 8};

static uint64_t send_(conv *c, unsigned d, size_t len) {
    iw_peer_send(&c->p[d], IW_OP_SEND, 0, g_pay, len);
    return take(c, d);
}

/* One untagged segment with explicit MSN / MO / L. */
static uint64_t send_seg(conv *c, unsigned d, unsigned op, uint32_t msn, uint32_t mo, bool last,
                         size_t len, uint32_t inv) {
    iw_rdmap_msg m;
    iw_peer_msg_init(&c->p[d], &m, op);
    m.ddp.msn = msn;
    m.ddp.mo = mo;
    m.ddp.last = last;
    m.ddp.rsvd_ulp2 = inv;
    iw_peer_msg(&c->p[d], &m, g_pay, len, NULL);
    return take(c, d);
}

static uint64_t send_inv(conv *c, unsigned d, uint32_t stag, size_t len) {
    iw_peer_send(&c->p[d], IW_OP_SEND_INV, stag, g_pay, len);
    return take(c, d);
}

static uint64_t write_(conv *c, unsigned d, uint32_t stag, uint64_t to, size_t len) {
    iw_peer_write(&c->p[d], stag, to, g_pay, len);
    return take(c, d);
}

static uint64_t read_req(conv *c, unsigned d, uint32_t sink, uint64_t sink_to, uint32_t size,
                         uint32_t src) {
    iw_peer_read_req(&c->p[d], sink, sink_to, size, src, 0x9000);
    return take(c, d);
}

static uint64_t read_req_msn(conv *c, unsigned d, uint32_t msn) {
    iw_rdmap_msg m;
    iw_peer_msg_init(&c->p[d], &m, IW_OP_READ_REQ);
    m.ddp.msn = msn;
    m.u.read_req = (iw_rdmap_read_req){0x100, 0, 16, 0x200, 0};
    iw_peer_msg(&c->p[d], &m, NULL, 0, NULL);
    return take(c, d);
}

static uint64_t read_resp(conv *c, unsigned d, uint32_t stag, uint64_t to, size_t len, bool last) {
    iw_rdmap_msg m;
    iw_peer_msg_init(&c->p[d], &m, IW_OP_READ_RESP);
    m.ddp.stag = stag;
    m.ddp.to = to;
    m.ddp.last = last;
    iw_peer_msg(&c->p[d], &m, g_pay, len, NULL);
    return take(c, d);
}

static uint64_t atomic_req(conv *c, unsigned d, uint32_t stag, uint32_t req_id) {
    iw_rdmap_atomic_req a = {0, IW_ATOMIC_FETCH_ADD, req_id, stag, 0x40, 1, 0, 0, ~0ull};
    iw_peer_atomic_req(&c->p[d], &a);
    return take(c, d);
}

static uint64_t atomic_resp(conv *c, unsigned d, uint32_t msn, uint32_t req_id) {
    iw_rdmap_msg m;
    iw_peer_msg_init(&c->p[d], &m, IW_OP_ATOMIC_RESP);
    if (msn)
        m.ddp.msn = msn;
    m.u.atomic_resp.req_id = req_id;
    iw_peer_msg(&c->p[d], &m, NULL, 0, NULL);
    return take(c, d);
}

static uint64_t terminate_(conv *c, unsigned d, uint32_t msn, uint16_t triple) {
    iw_rdmap_msg m;
    iw_peer_msg_init(&c->p[d], &m, IW_OP_TERMINATE);
    if (msn)
        m.ddp.msn = msn;
    m.u.term.layer = (uint8_t)iw_term_layer(triple);
    m.u.term.etype = (uint8_t)iw_term_etype(triple);
    m.u.term.ecode = (uint8_t)iw_term_ecode(triple);
    iw_peer_msg(&c->p[d], &m, NULL, 0, NULL);
    return take(c, d);
}

static void run(conv *c, replay *r) { replay_run(r, &c->log, &c->rc); }

IW_TEST(a_names) {
    CHECK(streq(iw_shadow_rule_id(IW_SHADOW_RULE_IRD_EXCEEDED), "IRD_EXCEEDED"));
    CHECK(streq(iw_shadow_rule_id(IW_SHADOW_RULE_NONE), "NONE"));
    CHECK(streq(iw_shadow_rule_id((iw_shadow_rule)999), "UNKNOWN"));
    CHECK(streq(iw_shadow_note_id(IW_SHADOW_NOTE_BIT_AFTER_TERMINATE), "AFTER_TERMINATE"));
    CHECK(streq(iw_shadow_note_rfc(IW_SHADOW_NOTE_BIT_SENT_AFTER_TERMINATE), "RFC 5040 §5.4"));
    CHECK(iw_shadow_note_rfc((iw_shadow_note)IW_SHADOW_NOTE_COUNT_) == NULL);
    CHECK(iw_shadow_assume_str(IW_SHADOW_ASSUME_ORDER) != NULL);
    CHECK(iw_shadow_assume_str(IW_SHADOW_ASSUME_RECV_BUF) != NULL);
    CHECK(iw_shadow_assume_str(IW_SHADOW_ASSUME_NO_REREG) != NULL);
    CHECK(iw_shadow_assume_str(0x3) == NULL);
    for (unsigned i = 0; i < IW_SHADOW_NOTE_COUNT_; i++)
        CHECK(iw_shadow_note_str((iw_shadow_note)i)[0] != '\0');
    /* Every note bit fits the 32-bit mask. */
    CHECK(IW_SHADOW_NOTE_COUNT_ <= 32);
}

IW_TEST(a_arguments) {
    iw_shadow sh;
    iw_shadow_init(&sh);
    iw_shadow_result res;
    iw_mpa_rr rr;
    iw_peer_rr_default(&rr, IW_MPA_REQUEST);
    iw_rdmap_msg m;
    memset(&m, 0, sizeof m);
    iw_verdict crc = iw_verdict_term(IW_TERM_LLP_MPA_CRC, "RFC 5044 §4.4, §8");
    CHECK_EQ(iw_shadow_mpa(&sh, 2, &rr, 1, &res), IW_ERR_INVALID_ARG);
    CHECK_EQ(iw_shadow_mpa(&sh, 0, NULL, 1, &res), IW_ERR_INVALID_ARG);
    CHECK_EQ(iw_shadow_mpa(&sh, 0, &rr, 1, NULL), IW_ERR_INVALID_ARG);
    CHECK_EQ(iw_shadow_fpdu(&sh, 0, NULL, 18, NULL, 1, &res), IW_ERR_INVALID_ARG);
    CHECK_EQ(iw_shadow_fpdu(&sh, 2, &m, 18, NULL, 1, &res), IW_ERR_INVALID_ARG);
    CHECK_EQ(iw_shadow_fpdu(&sh, 0, &m, 18, NULL, 1, NULL), IW_ERR_INVALID_ARG);
    CHECK_EQ(iw_shadow_lost(&sh, 2), IW_ERR_INVALID_ARG);
    CHECK_EQ(iw_shadow_initiator(&sh), -1);
    /* No message is fine when the FPDU already failed its CRC. */
    CHECK_EQ(iw_shadow_fpdu(&sh, 0, NULL, 18, &crc, 1, &res), 0);
    CHECK_EQ(res.verdict.kind, IW_VERDICT_OK);
    CHECK_EQ(iw_shadow_mpa(&sh, 1, &rr, 2, &res), 0);
    CHECK_EQ(iw_shadow_initiator(&sh), 1);
}

/* A conversation with every opcode, in both directions, all valid. */
IW_TEST(a_valid_conversation) {
    conv c;
    replay r;
    conv_default(&c);
    send_(&c, 0, 100); /* the initiator first (RFC 5044 §7.1.2 rule 4) */
    send_(&c, 1, 10);
    send_seg(&c, 0, IW_OP_SEND, 2, 0, false, 64, 0);
    send_seg(&c, 0, IW_OP_SEND, 2, 64, false, 64, 0);
    send_seg(&c, 0, IW_OP_SEND, 2, 128, true, 1, 0);
    send_inv(&c, 0, 0x1111, 4);
    send_inv(&c, 1, 0x1111, 4); /* the other side's STag namespace */
    write_(&c, 0, 0x2222, 0x1000, 100);
    write_(&c, 0, 0x1111, 0x1000, 0); /* zero length: never checked */
    uint8_t imm[8] = {1};
    iw_peer_imm(&c.p[0], true, imm);
    take(&c, 0);
    read_req(&c, 0, 0xA1, 0x100, 64, 0xB1);
    read_req(&c, 0, 0xA2, 0x200, 0, 0xB2); /* zero-length Read */
    atomic_req(&c, 0, 0xC1, 77);
    read_req(&c, 1, 0xD1, 0, 8, 0xE1); /* Read the other way while ours are outstanding */
    read_resp(&c, 1, 0xA1, 0x100, 32, false);
    read_resp(&c, 1, 0xA1, 0x120, 32, true);
    read_resp(&c, 1, 0xA2, 0x200, 0, true);
    atomic_resp(&c, 1, 0, 77);
    read_resp(&c, 0, 0xD1, 0, 8, true);
    read_req(&c, 0, 0xA3, 0x300, 16, 0xB3);
    read_resp(&c, 1, 0xA3, 0x30F, 1, true); /* one octet at the end of the sink */
    run(&c, &r);
    expect_clean(&r, 0);
    CHECK_EQ(r.n, c.next_id);
    for (size_t i = 2; i < r.n; i++)
        CHECK(r.v[i].res.judged);
    /* The Read Response refers to its request, the Atomic Response too. */
    const srec *s = rec_by_id(&r, 17);
    REQUIRE(s && s->opcode == IW_OP_READ_RESP);
    CHECK(s->res.has_ref && s->res.ref == 13);
    replay_free(&r);
    conv_free(&c);
}

IW_TEST(a_msn_replay) {
    conv c;
    replay r;
    /* The same MSN again after L=1. */
    conv_default(&c);
    send_(&c, 0, 8);
    send_(&c, 0, 8);
    uint64_t bad = send_seg(&c, 0, IW_OP_SEND, 2, 0, true, 8, 0);
    uint64_t after = send_(&c, 0, 8);
    uint64_t other = send_(&c, 1, 8);
    run(&c, &r);
    expect_one(&r, bad, IW_TERM_DDP_UT_MSN_RANGE, "RFC 5041 §7.1", IW_SHADOW_RULE_MSN_REPLAY);
    CHECK_EQ(rec_by_id(&r, bad)->res.expected, 3);
    const srec *a = rec_by_id(&r, after);
    CHECK(a->res.notes & IW_SHADOW_NOTE(AFTER_TERMINATE));
    CHECK(!a->res.judged);
    CHECK_EQ(a->res.ended_in, bad);
    /* The other direction's receiver is still alive. */
    CHECK(rec_by_id(&r, other)->res.judged);
    replay_free(&r);
    conv_free(&c);

    /* A multi-segment message, then a segment of it again. */
    conv_default(&c);
    send_seg(&c, 0, IW_OP_SEND, 1, 0, false, 100, 0);
    send_seg(&c, 0, IW_OP_SEND, 1, 100, true, 100, 0);
    bad = send_seg(&c, 0, IW_OP_SEND, 1, 100, true, 100, 0);
    run(&c, &r);
    expect_one(&r, bad, IW_TERM_DDP_UT_MSN_RANGE, "RFC 5041 §7.1", IW_SHADOW_RULE_MSN_REPLAY);
    replay_free(&r);
    conv_free(&c);

    /* Completed out of order (2 before 1), then 2 again: still a replay. */
    conv_default(&c);
    send_seg(&c, 0, IW_OP_SEND, 2, 0, true, 8, 0);
    send_seg(&c, 0, IW_OP_SEND, 1, 0, false, 8, 0);
    bad = send_seg(&c, 0, IW_OP_IMM, 2, 0, true, 0, 0);
    run(&c, &r);
    expect_one(&r, bad, IW_TERM_DDP_UT_MSN_RANGE, "RFC 5041 §7.1", IW_SHADOW_RULE_MSN_REPLAY);
    replay_free(&r);
    conv_free(&c);

    /* Zero-length replays need no validation (RFC 5041 §7.1): no verdict. */
    conv_default(&c);
    send_(&c, 0, 8);
    send_seg(&c, 0, IW_OP_SEND, 1, 0, true, 0, 0);
    run(&c, &r);
    CHECK_EQ(n_verdicts(&r), 0);
    replay_free(&r);
    conv_free(&c);
}

/* What the capture cannot judge gives notes at most. */
IW_TEST(a_msn_gaps_are_notes) {
    conv c;
    replay r;
    conv_default(&c);
    uint64_t first = send_seg(&c, 0, IW_OP_SEND, 2, 0, true, 8, 0); /* MSN 1 missing */
    uint64_t gap = send_seg(&c, 0, IW_OP_SEND, 5, 0, true, 8, 0);
    uint64_t m1 = send_seg(&c, 0, IW_OP_SEND, 6, 0, false, 50, 0);
    uint64_t mo = send_seg(&c, 0, IW_OP_SEND, 6, 60, true, 8, 0);
    uint64_t nol1 = send_seg(&c, 0, IW_OP_SEND, 7, 0, false, 8, 0);
    uint64_t nol2 = send_seg(&c, 0, IW_OP_SEND, 8, 0, true, 8, 0);
    run(&c, &r);
    CHECK_EQ(n_verdicts(&r), 0);
    CHECK_EQ(rec_by_id(&r, first)->res.notes, IW_SHADOW_NOTE(MSN_NOT_INITIAL));
    CHECK_EQ(rec_by_id(&r, gap)->res.notes, IW_SHADOW_NOTE(MSN_GAP));
    CHECK_EQ(rec_by_id(&r, gap)->res.expected, 3);
    CHECK_EQ(rec_by_id(&r, m1)->res.notes, 0);
    CHECK_EQ(rec_by_id(&r, mo)->res.notes, IW_SHADOW_NOTE(MO_GAP));
    CHECK_EQ(rec_by_id(&r, mo)->res.expected, 50);
    CHECK_EQ(rec_by_id(&r, nol1)->res.notes, 0);
    CHECK_EQ(rec_by_id(&r, nol2)->res.notes, IW_SHADOW_NOTE(NO_LAST));
    replay_free(&r);
    conv_free(&c);
}

IW_TEST(a_qn1_msn) {
    conv c;
    replay r;
    conv_default(&c);
    read_req_msn(&c, 0, 1);
    uint64_t bad = read_req_msn(&c, 0, 3);
    run(&c, &r);
    expect_one(&r, bad, IW_TERM_DDP_UT_MSN_RANGE, "RFC 5041 §7.1", IW_SHADOW_RULE_QN1_MSN);
    CHECK_EQ(rec_by_id(&r, bad)->res.expected, 2);
    replay_free(&r);
    conv_free(&c);
}

IW_TEST(a_ird) {
    conv c;
    replay r;
    iw_mpa_rr req, rep;
    /* Responder IRD 1 (RFC 6581 §9.1): the second outstanding Read is one
     * too many; Atomic Requests count against the same IRD. */
    conv_init(&c);
    iw_peer_rr_default(&req, IW_MPA_REQUEST);
    iw_peer_rr_default(&rep, IW_MPA_REPLY);
    req.v2.ord = 1;
    rep.v2.ird = 1;
    conv_start(&c, &req, &rep);
    read_req(&c, 0, 1, 0, 8, 2);
    read_resp(&c, 1, 1, 0, 8, true);
    atomic_req(&c, 0, 3, 5);
    uint64_t bad = read_req(&c, 0, 1, 0, 8, 2);
    run(&c, &r);
    expect_one(&r, bad, IW_TERM_DDP_UT_NO_BUFFER, "RFC 5040 §6.1; RFC 5041 §7.1",
               IW_SHADOW_RULE_IRD_EXCEEDED);
    CHECK_EQ(rec_by_id(&r, bad)->res.expected, 1);
    CHECK_EQ(rec_by_id(&r, bad)->res.assume, IW_SHADOW_ASSUME_ORDER);
    replay_free(&r);
    conv_free(&c);

    /* The initiator's IRD is the Request's when the Reply ORD fits it. */
    conv_init(&c);
    iw_peer_rr_default(&req, IW_MPA_REQUEST);
    iw_peer_rr_default(&rep, IW_MPA_REPLY);
    req.v2.ird = 2;
    rep.v2.ord = 2;
    conv_start(&c, &req, &rep);
    send_(&c, 0, 4);
    read_req(&c, 1, 1, 0, 8, 2);
    read_req(&c, 1, 1, 8, 8, 2);
    bad = read_req(&c, 1, 1, 16, 8, 2);
    run(&c, &r);
    expect_one(&r, bad, IW_TERM_DDP_UT_NO_BUFFER, "RFC 5040 §6.1; RFC 5041 §7.1",
               IW_SHADOW_RULE_IRD_EXCEEDED);
    replay_free(&r);
    conv_free(&c);

    /* Unknown IRDs: Rev 1, 0x3FFF, and an initiator that had to raise its
     * IRD to "at least" the responder ORD. No verdict however many. */
    for (int k = 0; k < 3; k++) {
        conv_init(&c);
        iw_peer_rr_default(&req, IW_MPA_REQUEST);
        iw_peer_rr_default(&rep, IW_MPA_REPLY);
        unsigned d = 0;
        if (k == 0) {
            req.rev = rep.rev = IW_MPA_REV1;
            req.s = rep.s = false;
        } else if (k == 1) {
            rep.v2.ird = IW_MPA_V2_NO_NEG;
        } else {
            req.v2.ird = 1;
            rep.v2.ord = 3;
            d = 1;
        }
        conv_start(&c, &req, &rep);
        if (d)
            send_(&c, 0, 4);
        for (int i = 0; i < 20; i++)
            read_req(&c, d, 1, 0, 8, 2);
        run(&c, &r);
        CHECK_EQ(n_verdicts(&r), 0);
        if (k == 2)
            CHECK(rec_by_id(&r, 2)->res.notes & IW_SHADOW_NOTE(ORD_EXCEEDS_IRD));
        replay_free(&r);
        conv_free(&c);
    }
}

IW_TEST(a_read_response) {
    conv c;
    replay r;
    /* Unsolicited: nothing outstanding (rests on the capture order). */
    conv_default(&c);
    send_(&c, 0, 4);
    uint64_t bad = read_resp(&c, 1, 0x10, 0, 8, true);
    uint64_t after = atomic_resp(&c, 1, 0, 1);
    run(&c, &r);
    expect_one(&r, bad, IW_TERM_RDMAP_UNEXPECTED_OPCODE, "RFC 5040 §5.2, §7.2",
               IW_SHADOW_RULE_READ_RESP_UNEXPECTED);
    CHECK_EQ(rec_by_id(&r, bad)->res.assume, IW_SHADOW_ASSUME_ORDER);
    CHECK(rec_by_id(&r, after)->res.notes & IW_SHADOW_NOTE(AFTER_TERMINATE));
    replay_free(&r);
    conv_free(&c);

    /* The oldest request is an Atomic: certain, whatever crossed. */
    conv_default(&c);
    uint64_t at = atomic_req(&c, 0, 3, 9);
    read_req(&c, 0, 0x10, 0, 8, 2);
    bad = read_resp(&c, 1, 0x10, 0, 8, true);
    run(&c, &r);
    expect_one(&r, bad, IW_TERM_RDMAP_UNEXPECTED_OPCODE, "RFC 5040 §5.2, §7.2",
               IW_SHADOW_RULE_READ_RESP_UNEXPECTED);
    CHECK_EQ(rec_by_id(&r, bad)->res.assume, 0);
    CHECK(rec_by_id(&r, bad)->res.ref == at);
    replay_free(&r);
    conv_free(&c);

    /* STag other than the Data Sink STag. */
    conv_default(&c);
    uint64_t rq = read_req(&c, 0, 0x10, 0x1000, 64, 2);
    bad = read_resp(&c, 1, 0x11, 0x1000, 64, true);
    run(&c, &r);
    expect_one(&r, bad, IW_TERM_DDP_T_INVALID_STAG, "RFC 5041 §7.1; RFC 5040 §5.2",
               IW_SHADOW_RULE_READ_RESP_STAG);
    CHECK(rec_by_id(&r, bad)->res.ref == rq);
    replay_free(&r);
    conv_free(&c);

    /* Outside [SinkTO, SinkTO + size): below, beyond, too long. */
    static const struct {
        uint64_t to;
        size_t len;
    } oob[] = {{0xFFF, 8}, {0x1040, 1}, {0x1020, 33}, {0x1000, 65}};
    for (size_t i = 0; i < sizeof oob / sizeof oob[0]; i++) {
        conv_default(&c);
        read_req(&c, 0, 0x10, 0x1000, 64, 2);
        bad = read_resp(&c, 1, 0x10, oob[i].to, oob[i].len, true);
        run(&c, &r);
        expect_one(&r, bad, IW_TERM_DDP_T_BASE_BOUNDS, "RFC 5041 §7.1; RFC 5040 §5.2",
                   IW_SHADOW_RULE_READ_RESP_BOUNDS);
        replay_free(&r);
        conv_free(&c);
    }

    /* A TO that wraps is named for what it is before the bounds, as for
     * every tagged segment (RFC 5041 §7.1 check 5): 1/1/3, the engine's
     * verdict too (iw_place_read_resp, issue 12). */
    conv_default(&c);
    read_req(&c, 0, 0x10, 0xFFFFFFFFFFFFFFE0ull, 64, 2);
    bad = read_resp(&c, 1, 0x10, 0xFFFFFFFFFFFFFFE0ull, 64, true);
    run(&c, &r);
    expect_one(&r, bad, IW_TERM_DDP_T_TO_WRAP, "RFC 5041 §7.1; RFC 5040 §5.2",
               IW_SHADOW_RULE_READ_RESP_BOUNDS);
    replay_free(&r);
    conv_free(&c);

    /* A zero-length response is not checked (RFC 5041 §5.2). Responses in
     * request order: the second answers the second request. */
    conv_default(&c);
    read_req(&c, 0, 0x10, 0, 0, 2);
    read_req(&c, 0, 0x20, 0, 16, 2);
    read_resp(&c, 1, 0x99, 0x77, 0, true);
    read_resp(&c, 1, 0x20, 0, 8, false);
    read_resp(&c, 1, 0x20, 8, 8, true);
    bad = read_resp(&c, 1, 0x20, 0, 8, true); /* nothing left */
    run(&c, &r);
    expect_one(&r, bad, IW_TERM_RDMAP_UNEXPECTED_OPCODE, "RFC 5040 §5.2, §7.2",
               IW_SHADOW_RULE_READ_RESP_UNEXPECTED);
    replay_free(&r);
    conv_free(&c);
}

IW_TEST(a_atomic_response) {
    conv c;
    replay r;
    conv_default(&c);
    send_(&c, 0, 4);
    uint64_t bad = atomic_resp(&c, 1, 0, 1);
    run(&c, &r);
    expect_one(&r, bad, IW_TERM_RDMAP_UNEXPECTED_OPCODE, "RFC 7306 §5",
               IW_SHADOW_RULE_ATOMIC_RESP_UNEXPECTED);
    CHECK_EQ(rec_by_id(&r, bad)->res.assume, IW_SHADOW_ASSUME_ORDER);
    replay_free(&r);
    conv_free(&c);

    /* QN 3 MSN first (the engine checks it before the queue). */
    conv_default(&c);
    atomic_req(&c, 0, 3, 1);
    bad = atomic_resp(&c, 1, 2, 1);
    run(&c, &r);
    expect_one(&r, bad, IW_TERM_DDP_UT_MSN_RANGE, "RFC 5041 §7.1", IW_SHADOW_RULE_QN3_MSN);
    CHECK_EQ(rec_by_id(&r, bad)->res.expected, 1);
    replay_free(&r);
    conv_free(&c);

    /* The oldest request is a Read. */
    conv_default(&c);
    read_req(&c, 0, 0x10, 0, 8, 2);
    atomic_req(&c, 0, 3, 1);
    bad = atomic_resp(&c, 1, 0, 1);
    run(&c, &r);
    expect_one(&r, bad, IW_TERM_RDMAP_UNEXPECTED_OPCODE, "RFC 7306 §5",
               IW_SHADOW_RULE_ATOMIC_RESP_UNEXPECTED);
    CHECK_EQ(rec_by_id(&r, bad)->res.assume, 0);
    replay_free(&r);
    conv_free(&c);

    /* A wrong Request Identifier is a note: the engine does not check it. */
    conv_default(&c);
    atomic_req(&c, 0, 3, 1);
    uint64_t note = atomic_resp(&c, 1, 0, 2);
    run(&c, &r);
    CHECK_EQ(n_verdicts(&r), 0);
    CHECK_EQ(rec_by_id(&r, note)->res.notes, IW_SHADOW_NOTE(ATOMIC_ID_MISMATCH));
    replay_free(&r);
    conv_free(&c);
}

IW_TEST(a_terminate) {
    conv c;
    replay r;
    /* QN 2 MSN: the first Terminate has MSN 1. */
    conv_default(&c);
    send_(&c, 0, 4);
    uint64_t bad = terminate_(&c, 1, 2, IW_TERM_RDMAP_OP_UNSPECIFIED);
    run(&c, &r);
    expect_one(&r, bad, IW_TERM_DDP_UT_MSN_RANGE, "RFC 5041 §7.1", IW_SHADOW_RULE_QN2_MSN);
    replay_free(&r);
    conv_free(&c);

    /* RFC 5040 §5.4: nothing after one's own Terminate (flagged), and the
     * receiver of a Terminate drains (no verdicts). The other side may go
     * on sending (MAY stop): its segments reach a receiver that already
     * sent a Terminate, so they are not judged either, but not flagged. */
    conv_default(&c);
    send_(&c, 0, 4);
    uint64_t t = terminate_(&c, 1, 0, IW_TERM_RDMAP_OP_UNSPECIFIED);
    uint64_t late = send_(&c, 1, 4);
    uint64_t late_bad = read_resp(&c, 1, 0x10, 0, 8, true);
    uint64_t other = send_(&c, 0, 4);
    run(&c, &r);
    CHECK_EQ(n_verdicts(&r), 0);
    CHECK_EQ(rec_by_id(&r, t)->res.notes, 0);
    const srec *l = rec_by_id(&r, late);
    CHECK_EQ(l->res.notes, IW_SHADOW_NOTE(SENT_AFTER_TERMINATE) | IW_SHADOW_NOTE(AFTER_TERMINATE));
    CHECK(l->res.has_ref && l->res.ref == t);
    CHECK_EQ(l->res.ended_in, t);
    CHECK(!l->res.judged);
    CHECK_EQ(rec_by_id(&r, late_bad)->res.verdict.kind, IW_VERDICT_OK);
    const srec *o = rec_by_id(&r, other);
    CHECK_EQ(o->res.notes, IW_SHADOW_NOTE(AFTER_TERMINATE));
    CHECK(!o->res.has_ref);
    CHECK_EQ(o->res.ended_in, t);
    replay_free(&r);
    conv_free(&c);
}

IW_TEST(a_invalidate) {
    conv c;
    replay r;
    /* Send with Invalidate twice. */
    conv_default(&c);
    uint64_t inv = send_inv(&c, 0, 0x4242, 8);
    send_(&c, 0, 8);
    uint64_t bad = send_inv(&c, 0, 0x4242, 0);
    run(&c, &r);
    expect_one(&r, bad, IW_TERM_RDMAP_PROT_CANT_INVALIDATE, "RFC 5040 §5.3, §7.2",
               IW_SHADOW_RULE_INVALIDATE_INVALIDATED);
    const srec *s = rec_by_id(&r, bad);
    CHECK_EQ(s->res.assume, IW_SHADOW_ASSUME_RECV_BUF | IW_SHADOW_ASSUME_NO_REREG);
    CHECK(s->res.has_ref && s->res.ref == inv);
    replay_free(&r);
    conv_free(&c);

    /* Write / Read Response into it, Read Request and Atomic from it. */
    for (int k = 0; k < 5; k++) {
        conv_default(&c);
        send_(&c, 0, 4);
        if (k == 2) {
            read_req(&c, 0, 0x4242, 0x100, 64, 2); /* our sink, before the Invalidate */
            send_inv(&c, 1, 0x4242, 8);
        } else {
            send_inv(&c, 0, 0x4242, 8);
        }
        uint16_t want = IW_TERM_DDP_T_INVALID_STAG;
        const char *rfc = "RFC 5041 §7.1";
        if (k == 0) {
            bad = write_(&c, 0, 0x4242, 0x100, 16);
        } else if (k == 1) {
            /* A multi-segment Send with Invalidate takes effect at its last
             * segment; a Write between is still fine. */
            send_seg(&c, 0, IW_OP_SEND_INV, 3, 0, false, 8, 0x5555);
            write_(&c, 0, 0x5555, 0x100, 16);
            send_seg(&c, 0, IW_OP_SEND_INV, 3, 8, true, 8, 0x5555);
            bad = write_(&c, 0, 0x5555, 0x100, 16);
        } else if (k == 2) {
            bad = read_resp(&c, 1, 0x4242, 0x100, 64, true);
        } else if (k == 3) {
            bad = read_req(&c, 0, 0x1, 0, 16, 0x4242);
            want = IW_TERM_RDMAP_INVALID_STAG;
            rfc = "RFC 5040 §7.2";
        } else {
            bad = atomic_req(&c, 0, 0x4242, 1);
            want = IW_TERM_RDMAP_INVALID_STAG;
            rfc = "RFC 5040 §7.2";
        }
        run(&c, &r);
        expect_one(&r, bad, want, rfc, IW_SHADOW_RULE_STAG_INVALIDATED);
        CHECK_EQ(rec_by_id(&r, bad)->res.assume, IW_SHADOW_ASSUME_NO_REREG);
        replay_free(&r);
        conv_free(&c);
    }

    /* Not certain, so no verdict: a zero-length Write, a zero-size Read,
     * the other side's namespace, an Invalidate that ended in a verdict,
     * and one whose last segment never came. */
    conv_default(&c);
    send_inv(&c, 0, 0x4242, 8);
    write_(&c, 0, 0x4242, 0x100, 0);
    read_req(&c, 0, 0x1, 0, 0, 0x4242);
    write_(&c, 1, 0x4242, 0x100, 16);
    send_seg(&c, 0, IW_OP_SEND_INV, 3, 0, false, 8, 0x6666);
    write_(&c, 0, 0x6666, 0, 8);
    run(&c, &r);
    CHECK_EQ(n_verdicts(&r), 0);
    replay_free(&r);
    conv_free(&c);
}

IW_TEST(a_stateless_first) {
    conv c;
    replay r;
    /* A CRC error is the stateless verdict; the shadow adds none. (The
     * deframer cannot find the next FPDU after it, RFC 5044 §6.) */
    conv_default(&c);
    send_(&c, 0, 4);
    iw_rdmap_msg m;
    iw_peer_msg_init(&c.p[0], &m, IW_OP_SEND);
    iw_peer_fpdu_opt opt = {.crc_xor = 1};
    iw_peer_msg(&c.p[0], &m, g_pay, 8, &opt);
    uint64_t bad = take(&c, 0);
    run(&c, &r);
    CHECK_EQ(n_verdicts(&r), 0);
    const srec *s = rec_by_id(&r, bad);
    REQUIRE(s);
    CHECK_EQ(s->pre.term, IW_TERM_LLP_MPA_CRC);
    CHECK(s->res.judged);
    replay_free(&r);
    conv_free(&c);

    /* A DDP/RDMAP one likewise, and the receiver drops everything after. */
    conv_default(&c);
    send_(&c, 0, 4);
    iw_peer_msg_init(&c.p[0], &m, IW_OP_SEND);
    m.ddp.dv = 2;
    iw_peer_msg(&c.p[0], &m, g_pay, 8, NULL);
    bad = take(&c, 0);
    uint64_t after = send_seg(&c, 0, IW_OP_SEND, 1, 0, true, 8, 0); /* would be a replay */
    run(&c, &r);
    CHECK_EQ(n_verdicts(&r), 0);
    s = rec_by_id(&r, bad);
    REQUIRE(s);
    CHECK_EQ(s->pre.term, IW_TERM_DDP_UT_INVALID_VERSION);
    s = rec_by_id(&r, after);
    REQUIRE(s);
    CHECK_EQ(s->res.notes, IW_SHADOW_NOTE(AFTER_TERMINATE));
    CHECK_EQ(s->res.ended_in, bad);
    replay_free(&r);
    conv_free(&c);
}

IW_TEST(a_startup) {
    conv c;
    replay r;
    iw_mpa_rr req, rep;
    /* Peer-to-peer, the Reply offers only what the Request did not: the
     * initiator must send TERM 2/0/7 (RFC 6581 §9.2). */
    conv_init(&c);
    iw_peer_rr_default(&req, IW_MPA_REQUEST);
    iw_peer_rr_default(&rep, IW_MPA_REPLY);
    req.v2.p2p = rep.v2.p2p = true;
    req.v2.rtr_write = true;
    rep.v2.rtr_send = true;
    uint64_t reply = conv_start(&c, &req, &rep);
    terminate_(&c, 0, 0, IW_TERM_LLP_MPA_NO_MATCHING_RTR);
    run(&c, &r);
    expect_one(&r, reply, IW_TERM_LLP_MPA_NO_MATCHING_RTR, "RFC 6581 §9.2",
               IW_SHADOW_RULE_NO_MATCHING_RTR);
    replay_free(&r);
    conv_free(&c);

    /* Only the Read RTR in common, and a responder IRD of 0. */
    conv_init(&c);
    iw_peer_rr_default(&req, IW_MPA_REQUEST);
    iw_peer_rr_default(&rep, IW_MPA_REPLY);
    req.v2.p2p = rep.v2.p2p = true;
    req.v2.rtr_read = rep.v2.rtr_read = true;
    rep.v2.ird = 0;
    reply = conv_start(&c, &req, &rep);
    run(&c, &r);
    expect_one(&r, reply, IW_TERM_LLP_MPA_NO_MATCHING_RTR, "RFC 6581 §9.2",
               IW_SHADOW_RULE_NO_MATCHING_RTR);
    replay_free(&r);
    conv_free(&c);

    /* RTRs: a good one, a missing one, one not offered; responder first. */
    for (int k = 0; k < 4; k++) {
        conv_init(&c);
        iw_peer_rr_default(&req, IW_MPA_REQUEST);
        iw_peer_rr_default(&rep, IW_MPA_REPLY);
        req.v2.p2p = rep.v2.p2p = true;
        req.v2.rtr_write = req.v2.rtr_read = true;
        rep.v2.rtr_read = true;
        conv_start(&c, &req, &rep);
        uint64_t first;
        if (k == 0) {
            first = read_req(&c, 0, 0, 0, 0, 0);
        } else if (k == 1) {
            first = send_(&c, 0, 4);
        } else if (k == 2) {
            first = write_(&c, 0, 0, 0, 0);
        } else {
            first = send_(&c, 1, 4);
            read_req(&c, 0, 0, 0, 0, 0);
        }
        if (k == 0 || k == 3)
            read_resp(&c, 1, 0, 0, 0, true);
        run(&c, &r);
        CHECK_EQ(n_verdicts(&r), 0);
        const srec *s = rec_by_id(&r, first);
        static const uint32_t want[4] = {0, IW_SHADOW_NOTE(RTR_MISSING),
                                         IW_SHADOW_NOTE(RTR_NOT_NEGOTIATED),
                                         IW_SHADOW_NOTE(RESPONDER_FIRST)};
        CHECK_EQ(s->res.notes, want[k]);
        CHECK_EQ(s->res.rtr, k == 0);
        replay_free(&r);
        conv_free(&c);
    }

    /* Initiator/Initiator: a close, then nothing is judged. */
    conv_init(&c);
    iw_peer_rr_default(&req, IW_MPA_REQUEST);
    iw_peer_rr(&c.p[0], &req);
    take(&c, 0);
    iw_peer_rr(&c.p[1], &req);
    uint64_t second = take(&c, 1);
    c.rc.start[1] = IW_DF_START_REQUEST;
    run(&c, &r);
    const srec *s = rec_by_id(&r, second);
    CHECK_EQ(s->res.verdict.kind, IW_VERDICT_CLOSE);
    CHECK_EQ(s->res.verdict.close, IW_CLOSE_MPA_INITIATOR_INITIATOR);
    replay_free(&r);
    conv_free(&c);

    /* A reject: MPA exits, nothing after it is iWARP. */
    conv_init(&c);
    iw_peer_rr_default(&req, IW_MPA_REQUEST);
    iw_peer_rr_default(&rep, IW_MPA_REPLY);
    rep.r = true;
    conv_start(&c, &req, &rep);
    run(&c, &r);
    CHECK_EQ(n_verdicts(&r), 0);
    iw_shadow_result res;
    iw_rdmap_msg m;
    iw_peer_msg_init(&c.p[0], &m, IW_OP_SEND);
    CHECK_EQ(iw_shadow_fpdu(&r.sh, 0, &m, 18, NULL, 99, &res), 0);
    CHECK(!res.judged);
    replay_free(&r);
    conv_free(&c);
}

/* Mid-stream and capture gaps: learned sequence numbers, no request
 * matching. */
IW_TEST(a_midstream_and_loss) {
    conv c;
    replay r;
    conv_midstream(&c);
    c.p[0].msn[0] = 41;
    c.p[0].msn[1] = 9;
    send_(&c, 0, 8);
    send_(&c, 0, 8);
    read_req(&c, 0, 0x10, 0, 8, 2);
    read_resp(&c, 1, 0x77, 0, 8, true); /* may answer a Read before the capture */
    atomic_resp(&c, 1, 5, 1);
    uint64_t bad = send_seg(&c, 0, IW_OP_SEND, 42, 0, true, 8, 0);
    run(&c, &r);
    expect_one(&r, bad, IW_TERM_DDP_UT_MSN_RANGE, "RFC 5041 §7.1", IW_SHADOW_RULE_MSN_REPLAY);
    CHECK_EQ(rec_by_id(&r, 1)->res.notes, 0); /* not "first MSN not 1" */
    replay_free(&r);
    conv_free(&c);

    /* After a gap nothing earlier counts. */
    conv_default(&c);
    send_(&c, 0, 8);
    read_req(&c, 0, 0x10, 0, 8, 2);
    log_lost(&c.log, 0);
    send_seg(&c, 0, IW_OP_SEND, 1, 0, true, 8, 0);
    read_req_msn(&c, 0, 7);
    read_resp(&c, 1, 0x99, 0, 8, true);
    run(&c, &r);
    CHECK_EQ(n_verdicts(&r), 0);
    replay_free(&r);
    conv_free(&c);

    /* Past the request table's size the queue is no longer judged. */
    conv_init(&c);
    iw_mpa_rr req, rep;
    iw_peer_rr_default(&req, IW_MPA_REQUEST);
    iw_peer_rr_default(&rep, IW_MPA_REPLY);
    req.v2.ord = rep.v2.ird = 1000;
    conv_start(&c, &req, &rep);
    for (int i = 0; i < IW_SHADOW_REQ_MAX + 1; i++)
        read_req(&c, 0, 0x10, 0, 8, 2);
    read_resp(&c, 1, 0x99, 0, 8, true);
    run(&c, &r);
    CHECK_EQ(n_verdicts(&r), 0);
    replay_free(&r);
    conv_free(&c);
}

/* ======================================================================
 * Engines: nodes, regions, the pump that records the capture
 * ====================================================================== */

enum { REG_LEN = 4096, NBUF = 48, BUF_LEN = 512 };

typedef struct enode {
    iw_rnic *rnic;
    uint32_t pd;
    iw_conn *conn;
    uint8_t *mem; /* regions and receive buffers */
    uint32_t st_rw, st_sink, st_atomic, st_inv[8];
    uint64_t to_rw, to_sink, to_atomic, to_inv[8];
    unsigned n_term_sent;
    uint16_t term_triple;
    const char *term_rfc;
    unsigned n_recv_ok, n_done, n_connected;
} enode;

static int enode_on_event(iw_conn *c, const iw_event *ev, void *user) {
    (void)c;
    enode *n = user;
    switch (ev->type) {
    case IW_EV_TERM_SENT:
        n->n_term_sent++;
        n->term_triple = ev->term.triple;
        n->term_rfc = ev->rfc;
        break;
    case IW_EV_RECV:
        n->n_recv_ok += ev->status == IW_WC_SUCCESS;
        break;
    case IW_EV_CONNECTED:
        n->n_connected++;
        break;
    case IW_EV_SEND_DONE:
    case IW_EV_WRITE_DONE:
    case IW_EV_READ_DONE:
    case IW_EV_ATOMIC_DONE:
        n->n_done += ev->status == IW_WC_SUCCESS;
        break;
    default:
        break;
    }
    return 0;
}

static const iw_callbacks g_cb = {IW_CALLBACKS_V1, enode_on_event};

static int enode_init(enode *n, const iw_conn_settings *s) {
    memset(n, 0, sizeof *n);
    n->mem = calloc(1, 16 * REG_LEN + NBUF * BUF_LEN);
    if (!n->mem || iw_rnic_new(&n->rnic, NULL) || iw_pd_alloc(n->rnic, &n->pd))
        return -1;
    const unsigned rw = IW_ACCESS_LOCAL_WRITE | IW_ACCESS_REMOTE_WRITE | IW_ACCESS_REMOTE_READ;
    n->to_rw = 0x100000;
    n->to_sink = 0x200000;
    n->to_atomic = 0x300000;
    if (iw_mr_reg(n->rnic, n->pd, n->mem, REG_LEN, n->to_rw, rw, &n->st_rw) ||
        iw_mr_reg(n->rnic, n->pd, n->mem + REG_LEN, REG_LEN, n->to_sink, rw, &n->st_sink) ||
        iw_mr_reg(n->rnic, n->pd, n->mem + 2 * REG_LEN, REG_LEN, n->to_atomic,
                  IW_ACCESS_REMOTE_ATOMIC | IW_ACCESS_LOCAL_WRITE, &n->st_atomic))
        return -1;
    for (int i = 0; i < 8; i++) {
        n->to_inv[i] = 0x400000 + 0x10000ull * (uint64_t)i;
        if (iw_mr_reg(n->rnic, n->pd, n->mem + (3 + (size_t)i) * REG_LEN, REG_LEN, n->to_inv[i],
                      rw | IW_ACCESS_REMOTE_ATOMIC, &n->st_inv[i]))
            return -1;
    }
    if (iw_conn_new(&n->conn, n->rnic, n->pd, s, &g_cb, n))
        return -1;
    uint8_t *bufs = n->mem + 16 * REG_LEN;
    for (int i = 0; i < NBUF; i++)
        if (iw_conn_post_recv(n->conn, 0x9000 + (uint64_t)i, bufs + (size_t)i * BUF_LEN, BUF_LEN))
            return -1;
    return 0;
}

static void enode_free(enode *n) {
    iw_conn_del(n->conn);
    iw_rnic_del(n->rnic);
    free(n->mem);
    memset(n, 0, sizeof *n);
}

static uint8_t g_io[1 << 17];

/* Move bytes both ways until neither side has output, recording every
 * transfer: the capture, in the order the receivers saw it. Transfers are
 * cut at `cut` octets so that both directions interleave. */
static void pump(enode *e[2], caplog *log, size_t cut) {
    for (int guard = 0; guard < 100000; guard++) {
        bool moved = false;
        for (unsigned d = 0; d < 2; d++) {
            iw_ssize n = iw_conn_write(e[d]->conn, g_io, cut, T0);
            CHECK(n >= 0);
            if (n <= 0)
                continue;
            log_add(log, d, g_io, (size_t)n);
            CHECK_EQ(iw_conn_recv(e[!d]->conn, g_io, (size_t)n, T0), n);
            moved = true;
        }
        if (!moved)
            return;
    }
    CHECK(!"pump did not settle");
}

static void post(enode *n, iw_send_wr wr) { CHECK_EQ(iw_conn_post_send(n->conn, &wr), 0); }

/* Every kind of operation from node a to node b. */
static void workload(enode *a, enode *b, unsigned salt, int inv_slot) {
    static uint8_t src[8192];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)(i * 7 + salt);
    post(a, (iw_send_wr){.op = IW_WR_SEND, .data = src, .len = 300 + salt});
    post(a, (iw_send_wr){.op = IW_WR_SEND_SE, .data = src, .len = 0});
    post(a, (iw_send_wr){.op = IW_WR_SEND, .data = src, .len = BUF_LEN});
    post(a, (iw_send_wr){.op = IW_WR_WRITE,
                         .data = src,
                         .len = 3000,
                         .remote_stag = b->st_rw,
                         .remote_to = b->to_rw + 17});
    post(a, (iw_send_wr){.op = IW_WR_WRITE, .data = src, .len = 0, .remote_stag = 0xDEAD});
    for (int k = 0; k < 6; k++)
        post(a, (iw_send_wr){.op = IW_WR_READ,
                             .len = 700 + (uint32_t)k,
                             .local_stag = a->st_sink,
                             .local_to = a->to_sink + 600ull * (uint64_t)k,
                             .remote_stag = b->st_rw,
                             .remote_to = b->to_rw});
    post(a, (iw_send_wr){.op = IW_WR_READ, .len = 0, .local_stag = 0x1, .remote_stag = 0x2});
    post(a, (iw_send_wr){.op = IW_WR_FETCH_ADD,
                         .remote_stag = b->st_atomic,
                         .remote_to = b->to_atomic,
                         .add_swap = 3});
    post(a, (iw_send_wr){.op = IW_WR_CMP_SWAP,
                         .remote_stag = b->st_atomic,
                         .remote_to = b->to_atomic + 8,
                         .compare = 0,
                         .compare_mask = ~0ull,
                         .add_swap = 5,
                         .add_swap_mask = ~0ull});
    iw_send_wr imm = {.op = IW_WR_IMM_SE};
    imm.imm[0] = (uint8_t)salt;
    post(a, imm);
    /* Invalidate one of b's STags, then use a different one. */
    post(a, (iw_send_wr){
                .op = IW_WR_SEND_INV, .data = src, .len = 5, .inv_stag = b->st_inv[inv_slot]});
    post(a,
         (iw_send_wr){
             .op = IW_WR_SEND_SE_INV, .data = src, .len = 0, .inv_stag = b->st_inv[inv_slot + 1]});
    post(a, (iw_send_wr){.op = IW_WR_WRITE,
                         .data = src,
                         .len = 100,
                         .remote_stag = b->st_inv[inv_slot + 2],
                         .remote_to = b->to_inv[inv_slot + 2]});
    post(a, (iw_send_wr){.op = IW_WR_READ,
                         .len = 64,
                         .local_stag = a->st_inv[inv_slot + 3],
                         .local_to = a->to_inv[inv_slot + 3],
                         .remote_stag = b->st_inv[inv_slot + 3],
                         .remote_to = b->to_inv[inv_slot + 3]});
    post(a, (iw_send_wr){.op = IW_WR_SEND, .data = src, .len = 1});
}

typedef struct bcfg {
    const char *name;
    uint8_t rev;
    bool p2p;
    unsigned rtr; /* initiator's offer; the responder supports all */
    bool markers_i, markers_r, crc;
    uint32_t emss;
    uint16_t ird_i, ird_r; /* also the ORDs */
    size_t cut;
} bcfg;

static const bcfg g_bcfgs[] = {
    {"rev1 crc", IW_MPA_REV1, false, 0, false, false, true, 0, 16, 16, 1 << 16},
    {"rev2 client-server, markers, no crc, small MULPDU", IW_MPA_REV2, false, 0, true, true, false,
     300, 16, 16, 333},
    {"p2p Send RTR, crc", IW_MPA_REV2, true, IW_RTR_SEND, false, true, true, 0, 4, 4, 1000},
    {"p2p Write RTR, markers one way", IW_MPA_REV2, true, IW_RTR_WRITE, true, false, true, 600, 2,
     3, 97},
    {"p2p Read RTR, IRD 1", IW_MPA_REV2, true, IW_RTR_READ, false, false, true, 0, 1, 1, 4096},
    {"rev2 IRD/ORD 2 vs 5, tiny transfers", IW_MPA_REV2, false, 0, true, true, true, 536, 2, 5, 7},
};

static void settings(const bcfg *b, iw_conn_settings *si, iw_conn_settings *sr) {
    iw_conn_settings_default(si, IW_ROLE_INITIATOR);
    iw_conn_settings_default(sr, IW_ROLE_RESPONDER);
    si->mpa_rev = sr->mpa_rev = b->rev;
    si->p2p = b->p2p;
    si->rtr = b->rtr ? b->rtr : si->rtr;
    si->markers = b->markers_i;
    sr->markers = b->markers_r;
    si->crc = sr->crc = b->crc;
    if (b->emss)
        si->emss = sr->emss = b->emss;
    si->ird = si->ord = b->ird_i;
    sr->ird = sr->ord = b->ird_r;
}

static rcfg engine_rcfg(const bcfg *b) {
    /* RFC 5044 §7.1.1: M asks the other side for markers; C in either. */
    rcfg c = {{IW_DF_START_REQUEST, IW_DF_START_REPLY}, {b->markers_r, b->markers_i}, b->crc};
    return c;
}

IW_TEST(b_engines_back_to_back) {
    for (size_t i = 0; i < sizeof g_bcfgs / sizeof g_bcfgs[0]; i++) {
        int before = iw_test_failed_checks;
        const bcfg *b = &g_bcfgs[i];
        enode n0, n1;
        enode *e[2] = {&n0, &n1};
        iw_conn_settings si, sr;
        settings(b, &si, &sr);
        REQUIRE(enode_init(&n0, &si) == 0 && enode_init(&n1, &sr) == 0);
        REQUIRE(iw_conn_start(n1.conn, T0) == 0 && iw_conn_start(n0.conn, T0) == 0);
        caplog log = {0};
        pump(e, &log, b->cut);
        CHECK_EQ(n0.n_connected, 1);
        CHECK_EQ(n1.n_connected, 1);
        /* Both sides at once, so requests and responses interleave. */
        workload(&n0, &n1, 1, 0);
        workload(&n1, &n0, 2, 4);
        pump(e, &log, b->cut);
        workload(&n0, &n1, 3, 4); /* fresh STags: the first ones stay invalid */
        pump(e, &log, b->cut);
        CHECK_EQ(n0.n_term_sent + n1.n_term_sent, 0);
        CHECK_EQ(iw_conn_get_state(n0.conn), IW_CONN_RTS);
        CHECK_EQ(iw_conn_get_state(n1.conn), IW_CONN_RTS);
        replay r;
        rcfg rc = engine_rcfg(b);
        replay_run(&r, &log, &rc);
        size_t fpdus = 0;
        for (size_t k = 0; k < r.n; k++) {
            fpdus += r.v[k].type == IW_FRAME_FPDU;
            CHECK_EQ(r.v[k].pre.kind, IW_VERDICT_OK);
            if (r.v[k].type == IW_FRAME_FPDU)
                CHECK(r.v[k].res.judged);
        }
        if (b->p2p) {
            const srec *s = rec_by_id(&r, 3);
            CHECK(s && s->res.rtr);
        }
        CHECK(fpdus > 60);
        expect_clean(&r, 0);
        if (iw_test_failed_checks != before)
            fprintf(stderr, "  [config %s]\n", b->name);
        replay_free(&r);
        log_free(&log);
        enode_free(&n0);
        enode_free(&n1);
    }
}

/* ======================================================================
 * C. The raw peer against an engine: the engine's Terminate is the truth
 * ====================================================================== */

typedef struct vctx {
    enode e;    /* the engine */
    iw_peer pe; /* the raw peer */
    caplog log;
    bool engine_initiator;
    unsigned e_dir; /* direction the engine sends */
} vctx;

/* Peer octets to the engine, then whatever the engine answers. */
static void v_flush(vctx *v) {
    unsigned pd = !v->e_dir;
    if (v->pe.out.len) {
        log_add(&v->log, pd, v->pe.out.p, v->pe.out.len);
        CHECK_EQ(iw_conn_recv(v->e.conn, v->pe.out.p, v->pe.out.len, T0), (iw_ssize)v->pe.out.len);
        iw_peer_take(&v->pe);
    }
    for (;;) {
        iw_ssize n = iw_conn_write(v->e.conn, g_io, sizeof g_io, T0);
        CHECK(n >= 0);
        if (n <= 0)
            break;
        log_add(&v->log, v->e_dir, g_io, (size_t)n);
    }
}

/* Startup. The engine is the responder unless engine_initiator; rr_tweak
 * may change the peer's frame. */
static int v_init(vctx *v, bool engine_initiator, const iw_conn_settings *tweak,
                  void (*rr_tweak)(iw_mpa_rr *)) {
    memset(v, 0, sizeof *v);
    v->engine_initiator = engine_initiator;
    v->e_dir = engine_initiator ? 0 : 1;
    iw_conn_settings s;
    if (tweak)
        s = *tweak;
    else
        iw_conn_settings_default(&s, engine_initiator ? IW_ROLE_INITIATOR : IW_ROLE_RESPONDER);
    if (enode_init(&v->e, &s) || iw_peer_init(&v->pe) || iw_conn_start(v->e.conn, T0))
        return -1;
    v_flush(v); /* the engine's Request */
    iw_mpa_rr rr;
    iw_peer_rr_default(&rr, engine_initiator ? IW_MPA_REPLY : IW_MPA_REQUEST);
    if (rr_tweak)
        rr_tweak(&rr);
    iw_peer_rr(&v->pe, &rr);
    iw_peer_full_operation(&v->pe, s.markers, rr.c || s.crc);
    v_flush(v);
    return 0;
}

static void v_check(vctx *v, bool expect_term) {
    /* Direction 0 is the initiator's, whichever side the engine is. */
    rcfg rc = {{IW_DF_START_REQUEST, IW_DF_START_REPLY}, {false, false}, true};
    replay r;
    replay_run(&r, &v->log, &rc);
    const srec *term = NULL;
    for (size_t i = 0; i < r.n; i++)
        if (r.v[i].dir == v->e_dir && r.v[i].decoded && r.v[i].opcode == IW_OP_TERMINATE)
            term = &r.v[i];
    if (!expect_term) {
        CHECK_EQ(v->e.n_term_sent, 0);
        CHECK(term == NULL);
        CHECK_EQ(n_verdicts(&r), 0);
        replay_free(&r);
        return;
    }
    CHECK_EQ(v->e.n_term_sent, 1);
    REQUIRE(term);
    CHECK_EQ(term->term_triple, v->e.term_triple);
    const srec *sv = first_verdict(&r);
    CHECK_EQ(n_verdicts(&r), 1);
    REQUIRE(sv);
    CHECK_EQ(sv->res.verdict.kind, IW_VERDICT_TERM);
    CHECK_EQ(sv->res.verdict.term, v->e.term_triple);
    CHECK(streq(sv->res.verdict.rfc, v->e.term_rfc));
    if (!streq(sv->res.verdict.rfc, v->e.term_rfc))
        fprintf(stderr, "    shadow \"%s\", engine \"%s\"\n", sv->res.verdict.rfc,
                v->e.term_rfc ? v->e.term_rfc : "(null)");
    CHECK(sv->id < term->id);
    /* Everything the engine got after the offending frame is "after
     * terminate": it is the one the engine's Terminate answers. */
    for (size_t i = 0; i < r.n; i++)
        if (r.v[i].dir == sv->dir && r.v[i].id > sv->id && r.v[i].type == IW_FRAME_FPDU)
            CHECK(r.v[i].res.notes & IW_SHADOW_NOTE(AFTER_TERMINATE));
    replay_free(&r);
}

static void v_free(vctx *v) {
    enode_free(&v->e);
    iw_peer_free(&v->pe);
    log_free(&v->log);
}

static void tweak_ord1(iw_mpa_rr *rr) { rr->v2.ord = 1; }

/* A well-formed trailing Write after each violation: must not count. */
static void v_trailer(vctx *v) { iw_peer_write(&v->pe, v->e.st_rw, v->e.to_rw, g_pay, 32); }

IW_TEST(c_engine_responder) {
    vctx v;
    iw_conn_settings s;
    for (int k = 0; k < 9; k++) {
        int before = iw_test_failed_checks;
        iw_conn_settings_default(&s, IW_ROLE_RESPONDER);
        if (k == 0)
            s.ird = 1;
        REQUIRE(v_init(&v, false, &s, k == 0 ? tweak_ord1 : NULL) == 0);
        iw_peer_send(&v.pe, IW_OP_SEND, 0, g_pay, 8); /* a valid first FPDU */
        v_flush(&v);
        uint32_t T = v.e.st_inv[0];
        switch (k) {
        case 0: /* two Reads at once against IRD 1 */
            iw_peer_read_req(&v.pe, 0x10, 0, 64, v.e.st_rw, v.e.to_rw);
            iw_peer_read_req(&v.pe, 0x10, 64, 64, v.e.st_rw, v.e.to_rw);
            break;
        case 1: { /* QN 1 MSN 2 first */
            iw_rdmap_msg m;
            iw_peer_msg_init(&v.pe, &m, IW_OP_READ_REQ);
            m.ddp.msn = 2;
            m.u.read_req = (iw_rdmap_read_req){0x10, 0, 8, v.e.st_rw, v.e.to_rw};
            iw_peer_msg(&v.pe, &m, NULL, 0, NULL);
            break;
        }
        case 2: { /* MSN 1 again */
            iw_rdmap_msg m;
            iw_peer_msg_init(&v.pe, &m, IW_OP_SEND);
            m.ddp.msn = 1;
            iw_peer_msg(&v.pe, &m, g_pay, 8, NULL);
            break;
        }
        case 3: { /* a Terminate with MSN 2 */
            iw_rdmap_msg m;
            iw_peer_msg_init(&v.pe, &m, IW_OP_TERMINATE);
            m.ddp.msn = 2;
            m.u.term.layer = 0;
            m.u.term.etype = 2;
            m.u.term.ecode = 0xFF;
            iw_peer_msg(&v.pe, &m, NULL, 0, NULL);
            break;
        }
        case 4: /* Send with Invalidate twice */
            iw_peer_send(&v.pe, IW_OP_SEND_INV, T, g_pay, 8);
            iw_peer_send(&v.pe, IW_OP_SEND_SE_INV, T, g_pay, 8);
            break;
        case 5: /* a Write to the invalidated STag */
            iw_peer_send(&v.pe, IW_OP_SEND_INV, T, g_pay, 8);
            iw_peer_write(&v.pe, T, v.e.to_inv[0], g_pay, 16);
            break;
        case 6: /* a Read from it */
            iw_peer_send(&v.pe, IW_OP_SEND_INV, T, g_pay, 8);
            iw_peer_read_req(&v.pe, 0x10, 0, 16, T, v.e.to_inv[0]);
            break;
        case 7: { /* an Atomic on it */
            iw_peer_send(&v.pe, IW_OP_SEND_INV, T, g_pay, 8);
            iw_rdmap_atomic_req a = {0, IW_ATOMIC_FETCH_ADD, 1, T, v.e.to_inv[0], 1, 0, 0, ~0ull};
            iw_peer_atomic_req(&v.pe, &a);
            break;
        }
        default: { /* a CRC error: stateless, no stateful verdict */
            iw_rdmap_msg m;
            iw_peer_msg_init(&v.pe, &m, IW_OP_SEND);
            iw_peer_fpdu_opt opt = {.crc_xor = 0x100};
            iw_peer_msg(&v.pe, &m, g_pay, 8, &opt);
            break;
        }
        }
        v_trailer(&v);
        v_flush(&v);
        if (k == 8) {
            /* The engine's Terminate is the CRC's (2/0/2); the shadow gives
             * none of its own, and the receiver is over. */
            CHECK_EQ(v.e.n_term_sent, 1);
            CHECK_EQ(v.e.term_triple, IW_TERM_LLP_MPA_CRC);
            rcfg rc = {{IW_DF_START_REQUEST, IW_DF_START_REPLY}, {false, false}, true};
            replay r;
            replay_run(&r, &v.log, &rc);
            CHECK_EQ(n_verdicts(&r), 0);
            replay_free(&r);
        } else {
            v_check(&v, true);
        }
        if (iw_test_failed_checks != before)
            fprintf(stderr, "  [engine responder case %d]\n", k);
        v_free(&v);
    }
}

IW_TEST(c_engine_initiator) {
    vctx v;
    for (int k = 0; k < 9; k++) {
        int before = iw_test_failed_checks;
        REQUIRE(v_init(&v, true, NULL, NULL) == 0);
        enode *e = &v.e;
        /* The engine sends first; then what the case needs outstanding. */
        post(e, (iw_send_wr){.op = IW_WR_SEND, .data = g_pay, .len = 4});
        if (k == 1 || k == 2 || k == 3 || k == 6)
            post(e, (iw_send_wr){.op = IW_WR_READ,
                                 .len = 64,
                                 .local_stag = e->st_sink,
                                 .local_to = e->to_sink,
                                 .remote_stag = 0x77,
                                 .remote_to = 0});
        if (k == 5 || k == 7 || k == 8)
            post(e, (iw_send_wr){.op = IW_WR_FETCH_ADD, .remote_stag = 0x66, .add_swap = 1});
        if (k == 7)
            post(e, (iw_send_wr){.op = IW_WR_READ,
                                 .len = 64,
                                 .local_stag = e->st_sink,
                                 .local_to = e->to_sink,
                                 .remote_stag = 0x77});
        v_flush(&v);
        switch (k) {
        case 0: /* a Read Response with no Read */
            iw_peer_read_resp(&v.pe, e->st_sink, e->to_sink, g_pay, 16);
            break;
        case 1: /* not the Data Sink STag */
            iw_peer_read_resp(&v.pe, e->st_rw, e->to_sink, g_pay, 16);
            break;
        case 2: /* beyond the sink */
            iw_peer_read_resp(&v.pe, e->st_sink, e->to_sink + 60, g_pay, 16);
            break;
        case 3: /* into a sink the peer invalidated first */
            iw_peer_send(&v.pe, IW_OP_SEND_INV, e->st_sink, g_pay, 4);
            iw_peer_read_resp(&v.pe, e->st_sink, e->to_sink, g_pay, 16);
            break;
        case 4: /* an Atomic Response with no Atomic */
            iw_peer_send(&v.pe, IW_OP_SEND, 0, g_pay, 4);
            {
                iw_rdmap_msg m;
                iw_peer_msg_init(&v.pe, &m, IW_OP_ATOMIC_RESP);
                iw_peer_msg(&v.pe, &m, NULL, 0, NULL);
            }
            break;
        case 5: { /* QN 3 MSN 2 */
            iw_rdmap_msg m;
            iw_peer_msg_init(&v.pe, &m, IW_OP_ATOMIC_RESP);
            m.ddp.msn = 2;
            iw_peer_msg(&v.pe, &m, NULL, 0, NULL);
            break;
        }
        case 6: { /* an Atomic Response to a Read */
            iw_rdmap_msg m;
            iw_peer_msg_init(&v.pe, &m, IW_OP_ATOMIC_RESP);
            iw_peer_msg(&v.pe, &m, NULL, 0, NULL);
            break;
        }
        case 7: /* a Read Response while the Atomic is the oldest */
            iw_peer_read_resp(&v.pe, e->st_sink, e->to_sink, g_pay, 16);
            break;
        default: { /* the right Atomic Response with another Request Identifier: accepted */
            iw_rdmap_msg m;
            iw_peer_msg_init(&v.pe, &m, IW_OP_ATOMIC_RESP);
            m.u.atomic_resp.req_id = 0xBAD;
            iw_peer_msg(&v.pe, &m, NULL, 0, NULL);
            break;
        }
        }
        v_trailer(&v);
        v_flush(&v);
        v_check(&v, k != 8);
        if (iw_test_failed_checks != before)
            fprintf(stderr, "  [engine initiator case %d]\n", k);
        v_free(&v);
    }
}

static void tweak_p2p_send_only(iw_mpa_rr *rr) {
    rr->v2.p2p = true;
    rr->v2.rtr_send = true;
}

/* RFC 6581 §9.2: the engine initiator offers only the Write RTR and the
 * Reply only the Send RTR: the engine answers the Reply with 2/0/7. */
IW_TEST(c_engine_no_matching_rtr) {
    vctx v;
    iw_conn_settings s;
    iw_conn_settings_default(&s, IW_ROLE_INITIATOR);
    s.p2p = true;
    s.rtr = IW_RTR_WRITE;
    REQUIRE(v_init(&v, true, &s, tweak_p2p_send_only) == 0);
    v_flush(&v);
    v_check(&v, true);
    v_free(&v);
}

/* Issue 11 regressions: what the capture cannot show stays silent. */
IW_TEST(a_no_guessing) {
    conv c;
    replay r;
    /* A replayed MSN is a replay (the verdict), not an "MSN gap". */
    conv_default(&c);
    send_(&c, 0, 8);
    send_(&c, 0, 8);
    uint64_t bad = send_seg(&c, 0, IW_OP_SEND, 1, 0, true, 8, 0);
    run(&c, &r);
    expect_one(&r, bad, IW_TERM_DDP_UT_MSN_RANGE, "RFC 5041 §7.1", IW_SHADOW_RULE_MSN_REPLAY);
    CHECK(!(rec_by_id(&r, bad)->res.notes & IW_SHADOW_NOTE(MSN_GAP)));
    replay_free(&r);
    conv_free(&c);

    /* Mid-stream, the first segment seen is the middle of a Send: its MO
     * is no "MO gap", and its continuation none either. */
    conv_midstream(&c);
    uint64_t mid = send_seg(&c, 0, IW_OP_SEND, 7, 1424, false, 100, 0);
    uint64_t next = send_seg(&c, 0, IW_OP_SEND, 7, 1524, true, 100, 0);
    uint64_t new_msg = send_seg(&c, 0, IW_OP_SEND, 8, 0, true, 100, 0);
    uint64_t gap = send_seg(&c, 0, IW_OP_SEND, 9, 50, true, 100, 0);
    run(&c, &r);
    CHECK_EQ(rec_by_id(&r, mid)->res.notes, 0);
    CHECK_EQ(rec_by_id(&r, next)->res.notes, 0);
    CHECK_EQ(rec_by_id(&r, new_msg)->res.notes, 0);
    /* From a known start on, MO is judged again. */
    CHECK(rec_by_id(&r, gap)->res.notes & IW_SHADOW_NOTE(MO_GAP));
    replay_free(&r);
    conv_free(&c);

    /* Knock-on: endpoint 1 must Terminate (a replayed Send from 0), so the
     * Read Response 0 sends it is not judged; 1's later Read Request must
     * not then count that Read as still outstanding against 0's IRD. */
    iw_mpa_rr req, rep;
    conv_init(&c);
    iw_peer_rr_default(&req, IW_MPA_REQUEST);
    iw_peer_rr_default(&rep, IW_MPA_REPLY);
    req.v2.ird = req.v2.ord = rep.v2.ird = rep.v2.ord = 1;
    conv_start(&c, &req, &rep);
    send_(&c, 0, 8);
    read_req(&c, 1, 1, 0, 8, 2);
    bad = send_seg(&c, 0, IW_OP_SEND, 1, 0, true, 8, 0);
    uint64_t resp = read_resp(&c, 0, 1, 0, 8, true);
    uint64_t later = read_req(&c, 1, 1, 8, 8, 2);
    run(&c, &r);
    expect_one(&r, bad, IW_TERM_DDP_UT_MSN_RANGE, "RFC 5041 §7.1", IW_SHADOW_RULE_MSN_REPLAY);
    CHECK(rec_by_id(&r, resp)->res.notes & IW_SHADOW_NOTE(AFTER_TERMINATE));
    CHECK_EQ(rec_by_id(&r, later)->res.verdict.kind, IW_VERDICT_OK);
    replay_free(&r);
    conv_free(&c);
}

IW_TEST_MAIN("iw_shadow", IW_CASE(a_names), IW_CASE(a_arguments), IW_CASE(a_valid_conversation),
             IW_CASE(a_msn_replay), IW_CASE(a_msn_gaps_are_notes), IW_CASE(a_qn1_msn),
             IW_CASE(a_ird), IW_CASE(a_read_response), IW_CASE(a_atomic_response),
             IW_CASE(a_terminate), IW_CASE(a_invalidate), IW_CASE(a_stateless_first),
             IW_CASE(a_startup), IW_CASE(a_midstream_and_loss), IW_CASE(b_engines_back_to_back),
             IW_CASE(c_engine_responder), IW_CASE(c_engine_initiator),
             IW_CASE(c_engine_no_matching_rtr), IW_CASE(a_no_guessing))
