/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fault injection (IW_FAULT_*, iwarp-target --fault): each switch must make
 * the engine non-conformant in exactly the way its name says, so that the
 * conformance suite can prove its cases fail for the right reason. Every
 * case runs the same scenario with and without the fault and checks both. */
#include <string.h>

#include <iwarp/engine.h>
#include <iwarp/faults.h>

#include "iw_peer.h"
#include "iw_test.h"

#define RLEN 1024

typedef struct fx {
    iw_rnic *rnic;
    uint32_t pd, pd2;
    iw_conn *c;
    iw_peer peer;
    iw_peer_buf out;   /* everything the engine sent */
    uint8_t rw[RLEN];  /* remote-write region */
    uint8_t ro[RLEN];  /* remote-read only region */
    uint8_t rbuf[256]; /* posted receive buffer */
    uint32_t stag_rw, stag_ro;
    int term_sent, recvs;
    uint16_t last_term;
} fx;

static int fx_event(iw_conn *c, const iw_event *e, void *user) {
    (void)c;
    fx *f = user;
    if (e->type == IW_EV_TERM_SENT) {
        f->term_sent++;
        f->last_term = e->term.triple;
    }
    if (e->type == IW_EV_RECV && e->status == IW_WC_SUCCESS)
        f->recvs++;
    return 0;
}

static void fx_pump(fx *f) {
    iw_conn_recv(f->c, f->peer.out.p, f->peer.out.len, 0);
    iw_peer_take(&f->peer);
    uint8_t buf[8192];
    iw_ssize n;
    while ((n = iw_conn_write(f->c, buf, sizeof buf, 0)) > 0)
        iw_peer_buf_add(&f->out, buf, (size_t)n);
}

/* An engine responder with `faults`, connected to a raw peer (CRC on). */
static void fx_setup(fx *f, const char *faults, uint16_t ird, bool bad_key, bool bad_rev) {
    memset(f, 0, sizeof *f);
    static const iw_callbacks cb = {IW_CALLBACKS_V1, fx_event};
    iw_conn_settings s;
    iw_conn_settings_default(&s, IW_ROLE_RESPONDER);
    s.ird = ird;
    char err[100];
    static iw_faults fl; /* iw_conn_new copies it */
    CHECK_EQ(iw_faults_parse(&fl, faults, err, sizeof err), 0);
    s.faults = &fl;
    iw_rnic_new(&f->rnic, NULL);
    iw_pd_alloc(f->rnic, &f->pd);
    iw_mr_reg(f->rnic, f->pd, f->rw, RLEN, 0x10000, IW_ACCESS_REMOTE_WRITE | IW_ACCESS_REMOTE_READ,
              &f->stag_rw);
    iw_mr_reg(f->rnic, f->pd, f->ro, RLEN, 0x20000, IW_ACCESS_REMOTE_READ, &f->stag_ro);
    iw_conn_new(&f->c, f->rnic, f->pd, &s, &cb, f);
    iw_conn_start(f->c, 0);
    iw_conn_post_recv(f->c, 1, f->rbuf, sizeof f->rbuf);
    iw_peer_init(&f->peer);
    iw_mpa_rr rr;
    iw_peer_rr_default(&rr, IW_MPA_REQUEST);
    iw_peer_rr(&f->peer, &rr);
    if (bad_key)
        f->peer.out.p[3] = 'X';
    if (bad_rev)
        f->peer.out.p[17] = 9;
    iw_peer_full_operation(&f->peer, false, true);
    fx_pump(f);
}

static void fx_free(fx *f) {
    iw_conn_del(f->c);
    iw_rnic_del(f->rnic);
    iw_peer_free(&f->peer);
    iw_peer_buf_free(&f->out);
}

/* The engine's output as frames (it answers an enhanced Request, no markers). */
static void fx_trace(fx *f, iw_peer_trace *t) {
    iw_df_cfg cfg = {IW_DF_START_REPLY, IW_DF_OFF, IW_DF_ON, 0};
    memset(t, 0, sizeof *t);
    iw_peer_decode(t, f->out.p, f->out.len, &cfg);
}

static const iw_peer_frame *fx_term(const iw_peer_trace *t) {
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].type == IW_FRAME_FPDU && t->v[i].msg.opcode == IW_OP_TERMINATE)
            return &t->v[i];
    return NULL;
}

static const uint8_t pat[8] = {1, 2, 3, 4, 5, 6, 7, 8};

/* A Write beyond the region's end (RFC 5041 §7.1 (4): 1/1/1), then a good one. */
static void fx_bounds_then_good(fx *f) {
    iw_peer_write(&f->peer, f->stag_rw, 0x10000 + RLEN - 4, pat, sizeof pat);
    iw_peer_write(&f->peer, f->stag_rw, 0x10000 + 100, pat, sizeof pat);
    fx_pump(f);
}

IW_TEST(parse_rejects_bad_specs) {
    iw_faults fl;
    char err[100];
    CHECK_EQ(iw_faults_parse(&fl, "skip:1/1/1,swap-nibbles", err, sizeof err), 0);
    CHECK_EQ(fl.flags, IW_FAULT_SKIP | IW_FAULT_SWAP_NIBBLES);
    CHECK_EQ(fl.n_skip, 1);
    CHECK_EQ(fl.skip_triple[0], 0x1101);
    CHECK(iw_faults_skips(&fl, 0x1101));
    /* Fields are hex, "0x" optional, as the registry writes them: the same
     * text as a case file's catches: line. */
    CHECK_EQ(iw_faults_parse(&fl, "skip:0/2/FF,miscode:0x1/0x2/0x10", err, sizeof err), 0);
    CHECK(fl.skip_triple[0] == 0x02FF && fl.miscode_triple == 0x1210);
    CHECK_EQ(iw_faults_parse(&fl, "skip:0/2/100", err, sizeof err), -1);
    CHECK_EQ(iw_faults_parse(&fl, "skip:10/0/1", err, sizeof err), -1);
    CHECK_EQ(iw_faults_parse(&fl, "swap-nibbles,", err, sizeof err), -1);
    CHECK_EQ(iw_faults_parse(&fl, "sctp-lax-session", err, sizeof err), 0);
    CHECK_EQ(fl.flags, IW_FAULT_SCTP_LAX_SESSION);
    CHECK(!iw_faults_skips(&fl, 0x2002));
    CHECK(!iw_faults_skips(NULL, 0x1101));
    /* Every skip: counts, none is silently dropped (issue 12). */
    CHECK_EQ(iw_faults_parse(&fl, "skip:2/0/2,skip:2/0/3", err, sizeof err), 0);
    CHECK_EQ(fl.n_skip, 2);
    CHECK(iw_faults_skips(&fl, 0x2002) && iw_faults_skips(&fl, 0x2003));
    CHECK_EQ(iw_faults_parse(&fl,
                             "skip:0/0/1,skip:0/0/2,skip:0/0/3,skip:0/0/4,skip:0/0/5,"
                             "skip:0/0/6,skip:0/0/7,skip:0/0/8,skip:0/0/9",
                             err, sizeof err),
             -1);
    CHECK(strstr(err, "at most 8") != NULL);
    CHECK_EQ(iw_faults_parse(&fl, "miscode:1/1/1,miscode:1/1/2", err, sizeof err), -1);
    CHECK(strstr(err, "only one miscode") != NULL);
    CHECK_EQ(iw_faults_parse(&fl, "miscode:0x1/0x2/0x05", err, sizeof err), 0);
    CHECK_EQ(fl.miscode_triple, 0x1205);
    CHECK_EQ(iw_faults_parse(&fl, "", err, sizeof err), 0);
    CHECK_EQ(fl.flags, 0);
    static const char *bad[] = {"nope",         "skip:", "skip:1/1", "skip:1/1/1/1", "skip:16/0/0",
                                "skip:1/1/256", "a,,b",  ",",        "miscode:x/y/z"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK_EQ(iw_faults_parse(&fl, bad[i], err, sizeof err), -1);
        CHECK(err[0] != 0);
    }
}

IW_TEST(conformant_baseline) {
    fx f;
    fx_setup(&f, "", 16, false, false);
    fx_bounds_then_good(&f);
    CHECK_EQ(f.term_sent, 1);
    CHECK_EQ(f.last_term, IW_TERM_DDP_T_BASE_BOUNDS);
    CHECK(f.rw[100] == 0); /* nothing placed after the Terminate */
    iw_peer_trace t;
    fx_trace(&f, &t);
    const iw_peer_frame *tf = fx_term(&t);
    REQUIRE(tf);
    CHECK_EQ(tf->ulpdu[IW_DDP_UNTAGGED_HDR_LEN], 0x11); /* layer 1, etype 1 */
    CHECK(tf->msg.u.term.d && tf->msg.u.term.m);
    CHECK(&t.v[t.n - 1] == tf); /* nothing after it */
    iw_peer_trace_free(&t);
    fx_free(&f);
}

IW_TEST(skip_drops_silently_and_carries_on) {
    fx f;
    fx_setup(&f, "skip:1/1/1", 16, false, false);
    fx_bounds_then_good(&f);
    CHECK_EQ(f.term_sent, 0);
    CHECK_MEM(f.rw + 100, pat, sizeof pat); /* the stream went on */
    CHECK(f.rw[RLEN - 4] == 0);             /* but nothing out of bounds */
    fx_free(&f);
}

IW_TEST(miscode_and_wire_layout_faults) {
    /* swap-nibbles has its own test: 1/1 reads the same swapped. */
    static const char *spec[] = {"miscode:1/1/1", "no-hdr-copy", "bad-seg-len",
                                 "send-after-terminate"};
    for (size_t k = 0; k < sizeof spec / sizeof *spec; k++) {
        fx f;
        fx_setup(&f, spec[k], 16, false, false);
        fx_bounds_then_good(&f);
        iw_peer_trace t;
        fx_trace(&f, &t);
        const iw_peer_frame *tf = fx_term(&t);
        REQUIRE(tf);
        const iw_rdmap_term *th = &tf->msg.u.term;
        uint16_t wire = IW_TERM_TRIPLE(th->layer, th->etype, th->ecode);
        size_t after = (size_t)(&t.v[t.n - 1] - tf);
        switch (k) {
        case 0:
            CHECK_EQ(wire, 0x1102);
            break;
        case 1:
            CHECK(!th->d && !th->m);
            break;
        case 2:
            CHECK_EQ(th->ddp_seg_len, IW_DDP_TAGGED_HDR_LEN + sizeof pat + 1);
            break;
        case 3:
            CHECK_EQ(after, 1); /* one FPDU after the Terminate */
            break;
        }
        iw_peer_trace_free(&t);
        fx_free(&f);
    }
}

IW_TEST(swap_nibbles_on_an_asymmetric_triple) {
    /* 1/2/5: a Send longer than the posted buffer; swapped it reads 2/1. */
    fx f;
    fx_setup(&f, "swap-nibbles", 16, false, false);
    static uint8_t big[300];
    iw_peer_send(&f.peer, IW_OP_SEND, 0, big, sizeof big);
    fx_pump(&f);
    iw_peer_trace t;
    fx_trace(&f, &t);
    const iw_peer_frame *tf = fx_term(&t);
    REQUIRE(tf);
    CHECK_EQ(tf->ulpdu[IW_DDP_UNTAGGED_HDR_LEN], 0x21);
    CHECK_EQ(f.last_term, IW_TERM_DDP_UT_TOO_LONG); /* the event still says what it meant */
    iw_peer_trace_free(&t);
    fx_free(&f);
}

IW_TEST(placement_faults) {
    fx f;
    /* place-before-check: the rejected write touches its region first. */
    fx_setup(&f, "place-before-check", 16, false, false);
    fx_bounds_then_good(&f);
    CHECK(f.rw[0] == 0xFF);
    CHECK_EQ(f.term_sent, 1);
    fx_free(&f);
    /* ignore-access: a write into a read-only region lands... */
    fx_setup(&f, "ignore-access", 16, false, false);
    iw_peer_write(&f.peer, f.stag_ro, 0x20000 + 8, pat, sizeof pat);
    fx_pump(&f);
    CHECK_MEM(f.ro + 8, pat, sizeof pat);
    CHECK_EQ(f.term_sent, 0);
    /* ...but bounds still hold. */
    iw_peer_write(&f.peer, f.stag_ro, 0x20000 + RLEN, pat, sizeof pat);
    fx_pump(&f);
    CHECK_EQ(f.last_term, IW_TERM_DDP_T_BASE_BOUNDS);
    fx_free(&f);
    /* baseline: the read-only region is refused (RFC 5041 §7.1 (2)). */
    fx_setup(&f, "", 16, false, false);
    iw_peer_write(&f.peer, f.stag_ro, 0x20000 + 8, pat, sizeof pat);
    fx_pump(&f);
    CHECK_EQ(f.last_term, IW_TERM_DDP_T_INVALID_STAG);
    CHECK(f.ro[8] == 0);
    fx_free(&f);
}

IW_TEST(accept_bad_crc) {
    for (int fault = 0; fault < 2; fault++) {
        fx f;
        fx_setup(&f, fault ? "accept-bad-crc" : "", 16, false, false);
        iw_rdmap_msg m;
        iw_peer_msg_init(&f.peer, &m, IW_OP_WRITE);
        m.ddp.stag = f.stag_rw;
        m.ddp.to = 0x10000 + 200;
        iw_peer_fpdu_opt o = {.crc_xor = 0x5A};
        iw_peer_msg(&f.peer, &m, pat, sizeof pat, &o);
        fx_pump(&f);
        CHECK_EQ(f.term_sent, fault ? 0 : 1);
        if (!fault)
            CHECK_EQ(f.last_term, IW_TERM_LLP_MPA_CRC);
        fx_free(&f);
    }
}

IW_TEST(mpa_acceptance_faults) {
    for (int k = 0; k < 4; k++) {
        bool key = k < 2, fault = k % 2;
        fx f;
        fx_setup(&f, fault ? (key ? "accept-mpa-bad-key" : "accept-mpa-bad-rev") : "", 16, key,
                 !key);
        /* Conformant: closed with nothing sent (RFC 5044 §7.1.1, §7.1.2). */
        CHECK_EQ(iw_conn_get_state(f.c), fault ? IW_CONN_RTS : IW_CONN_CLOSED);
        CHECK(fault ? f.out.len > 0 : f.out.len == 0);
        fx_free(&f);
    }
}

IW_TEST(ird_unbounded) {
    for (int fault = 0; fault < 2; fault++) {
        fx f;
        fx_setup(&f, fault ? "ird-unbounded" : "", 1, false, false);
        /* Two Read Requests in one go with IRD 1 (RFC 5040 §6.1). */
        iw_peer_read_req(&f.peer, 0x99, 0, 4, f.stag_rw, 0x10000);
        iw_peer_read_req(&f.peer, 0x99, 4, 4, f.stag_rw, 0x10004);
        fx_pump(&f);
        iw_peer_trace t;
        fx_trace(&f, &t);
        CHECK_EQ(iw_peer_count_op(&t, IW_OP_READ_RESP), fault ? 2 : 0);
        CHECK_EQ(f.term_sent, fault ? 0 : 1);
        iw_peer_trace_free(&t);
        fx_free(&f);
    }
}

IW_TEST(no_remote_invalidate) {
    for (int fault = 0; fault < 2; fault++) {
        fx f;
        fx_setup(&f, fault ? "no-remote-invalidate" : "", 16, false, false);
        iw_peer_send(&f.peer, IW_OP_SEND_INV, f.stag_rw, pat, sizeof pat);
        iw_peer_write(&f.peer, f.stag_rw, 0x10000 + 300, pat, sizeof pat);
        fx_pump(&f);
        CHECK_EQ(f.recvs, 1);
        /* Conformant: the STag is gone (RFC 5040 §5.3), so the Write is refused. */
        CHECK_EQ(f.term_sent, fault ? 0 : 1);
        CHECK(fault ? f.rw[300] == 1 : f.rw[300] == 0);
        fx_free(&f);
    }
}

IW_TEST_MAIN("faults", IW_CASE(parse_rejects_bad_specs), IW_CASE(conformant_baseline),
             IW_CASE(skip_drops_silently_and_carries_on), IW_CASE(miscode_and_wire_layout_faults),
             IW_CASE(swap_nibbles_on_an_asymmetric_triple), IW_CASE(placement_faults),
             IW_CASE(accept_bad_crc), IW_CASE(mpa_acceptance_faults), IW_CASE(ird_unbounded),
             IW_CASE(no_remote_invalidate))
