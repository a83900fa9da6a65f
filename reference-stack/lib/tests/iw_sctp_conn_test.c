/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The engine over SCTP (iw_sctp_conn) against RFC 5043 §5, §6, §9, §10 and
 * RFC 6581 §7: two endpoints exchanging DATA chunk payloads in memory.
 * Expectations come from the RFCs; where the engine answers a DDP/RDMAP
 * violation, the answer must be byte for byte the one the same engine
 * gives over MPA (one implementation of those rules). */
#include <iwarp/sctp_conn.h>

#include <stdlib.h>
#include <string.h>

#include "iw_test.h"
#include <iwarp/wire.h>

static const iw_tstamp T0 = 1000000000ull;

#define MAX_EV 64
typedef struct evlog {
    int n;
    iw_event ev[MAX_EV];
    iw_conn_info info;
    /* reentry test: what calls into the adapter return from a callback */
    iw_sctp_conn *self;
    bool reenter;
    int reenter_recv, reenter_next;
} evlog;

static int on_event(iw_conn *c, const iw_event *ev, void *user) {
    (void)c;
    evlog *l = user;
    if (ev->info)
        l->info = *ev->info;
    if (l->n < MAX_EV)
        l->ev[l->n++] = *ev;
    if (l->reenter && ev->type == IW_EV_RECV) {
        static const uint8_t chunk[4] = {0, 9, 0, 4};
        iw_sctp_msg m;
        l->reenter_recv = iw_sctp_conn_recv(l->self, IW_SCTP_PPID_DDP_CONTROL, chunk, 4, T0);
        l->reenter_next = iw_sctp_conn_next(l->self, &m, T0);
    }
    return 0;
}

static const iw_event *find_ev(const evlog *l, iw_event_type t) {
    for (int i = 0; i < l->n; i++)
        if (l->ev[i].type == t)
            return &l->ev[i];
    return NULL;
}

static const iw_callbacks CB = {IW_CALLBACKS_V1, on_event};

/* A captured message. */
#define MSG_MAX 2048
typedef struct wmsg {
    uint32_t ppid;
    uint16_t sid;
    size_t len;
    uint8_t data[MSG_MAX];
} wmsg;

typedef struct ep {
    iw_rnic *rnic;
    uint32_t pd;
    iw_sctp_conn *sc;
    evlog log;
} ep;

static void ep_new(ep *e, iw_sctp_conn_settings *s) {
    memset(e, 0, sizeof *e);
    CHECK_EQ(iw_rnic_new(&e->rnic, NULL), 0);
    CHECK_EQ(iw_pd_alloc(e->rnic, &e->pd), 0);
    CHECK_EQ(iw_sctp_conn_new(&e->sc, e->rnic, e->pd, s, &CB, &e->log), 0);
}

static void ep_del(ep *e) {
    iw_sctp_conn_del(e->sc);
    iw_rnic_del(e->rnic);
}

static iw_conn *eng(ep *e) { return iw_sctp_conn_engine(e->sc); }

/* Whether drain() has SCTP acknowledge each message at once (§6.6 waits
 * on it for the passive side's Session Terminate). */
static bool g_ack = true;

/* Take every message e has to send into out (up to max); returns the count. */
static int drain(ep *e, wmsg *out, int max) {
    int n = 0;
    iw_sctp_msg m;
    int rc;
    while ((rc = iw_sctp_conn_next(e->sc, &m, T0)) == 1) {
        if (n >= max || m.len > MSG_MAX) {
            CHECK(!"message buffer too small");
            return n;
        }
        out[n].ppid = m.ppid;
        out[n].sid = m.sid;
        out[n].len = m.len;
        memcpy(out[n].data, m.data, m.len);
        if (g_ack)
            CHECK_EQ(iw_sctp_conn_tx_acked(e->sc, iw_get_u16(m.data)), 0);
        n++;
    }
    CHECK_EQ(rc, 0);
    return n;
}

static int deliver(ep *e, const wmsg *m) {
    return iw_sctp_conn_recv(e->sc, m->ppid, m->data, m->len, T0);
}

/* Move messages both ways until neither side has any; checks every
 * message's DDP-SSN is the next of its sender (RFC 5043 §5.2.1, §6). */
static void pump(ep *a, ep *b, uint16_t *ssn_a, uint16_t *ssn_b) {
    static wmsg buf[256];
    for (int round = 0; round < 1000; round++) {
        int na = drain(a, buf, 256);
        for (int i = 0; i < na; i++) {
            CHECK_EQ(iw_get_u16(buf[i].data), (*ssn_a)++);
            CHECK_EQ(deliver(b, &buf[i]), 0);
        }
        int nb = drain(b, buf, 256);
        for (int i = 0; i < nb; i++) {
            CHECK_EQ(iw_get_u16(buf[i].data), (*ssn_b)++);
            CHECK_EQ(deliver(a, &buf[i]), 0);
        }
        if (!na && !nb)
            return;
    }
    CHECK(!"pump did not settle");
}

static void settings(iw_sctp_conn_settings *s, iw_role role, uint8_t rev) {
    iw_sctp_conn_settings_default(s, role);
    s->conn.mpa_rev = rev;
    s->sid = 3;
}

typedef struct pair {
    ep a, b; /* a active (initiator), b passive */
    uint16_t ssn_a, ssn_b;
} pair;

static void pair_up(pair *p, uint8_t rev) {
    memset(p, 0, sizeof *p);
    iw_sctp_conn_settings sa, sb;
    settings(&sa, IW_ROLE_INITIATOR, rev);
    settings(&sb, IW_ROLE_RESPONDER, rev);
    sa.conn.private_data = (const uint8_t *)"hello";
    sa.conn.private_data_len = 5;
    sb.conn.private_data = (const uint8_t *)"welcome";
    sb.conn.private_data_len = 7;
    ep_new(&p->a, &sa);
    ep_new(&p->b, &sb);
    CHECK_EQ(iw_sctp_conn_start(p->a.sc, T0), 0);
    CHECK_EQ(iw_sctp_conn_start(p->b.sc, T0), 0);
}

static void pair_del(pair *p) {
    ep_del(&p->a);
    ep_del(&p->b);
}

static void pair_open(pair *p, uint8_t rev) {
    pair_up(p, rev);
    pump(&p->a, &p->b, &p->ssn_a, &p->ssn_b);
    CHECK_EQ(iw_sctp_conn_session(p->a.sc), IW_SCTP_SESS_OPEN);
    CHECK_EQ(iw_sctp_conn_session(p->b.sc), IW_SCTP_SESS_OPEN);
}

/* ---- session establishment and rejection (§6.2, §6.3, RFC 6581 §7) ---- */

static void check_establish(uint8_t rev) {
    pair p;
    pair_up(&p, rev);
    wmsg m[4];
    REQUIRE(drain(&p.b, m, 4) == 0); /* the passive side waits */
    REQUIRE(drain(&p.a, m, 4) == 1);
    CHECK_EQ(m[0].ppid, IW_SCTP_PPID_DDP_CONTROL);
    CHECK_EQ(m[0].sid, 3);
    iw_sctp_ctrl c;
    iw_sctp_problem why;
    CHECK_EQ(iw_sctp_ctrl_decode(&c, m[0].data, m[0].len, &why), (iw_ssize)m[0].len);
    CHECK_EQ(c.ssn, 0); /* §6.1: reset to zero for each session */
    CHECK_EQ(c.fc, rev == 2 ? IW_SCTP_FC_ENH_INITIATE : IW_SCTP_FC_INITIATE);
    CHECK_EQ(c.ulp_pd_len, 5);
    CHECK_MEM(c.ulp_pd, "hello", 5);
    if (rev == 2) {
        CHECK_EQ(c.v2.ird, 16);
        CHECK_EQ(c.v2.ord, 16);
    }
    CHECK_EQ(deliver(&p.b, &m[0]), 0);
    const iw_event *ev = find_ev(&p.b.log, IW_EV_CONNECTED);
    REQUIRE(ev);
    CHECK_EQ(p.b.log.info.peer_private_data_len, 5);
    CHECK_MEM(p.b.log.info.peer_private_data, "hello", 5);
    CHECK_EQ(p.b.log.info.enhanced, rev == 2);
    CHECK(!p.b.log.info.crc);
    CHECK(!p.b.log.info.markers_rx && !p.b.log.info.markers_tx);
    REQUIRE(drain(&p.b, m, 4) == 1);
    CHECK_EQ(iw_sctp_ctrl_decode(&c, m[0].data, m[0].len, &why), (iw_ssize)m[0].len);
    CHECK_EQ(c.ssn, 0); /* the passive direction's first chunk */
    CHECK_EQ(c.fc, rev == 2 ? IW_SCTP_FC_ENH_ACCEPT : IW_SCTP_FC_ACCEPT);
    CHECK_EQ(c.ulp_pd_len, 7);
    CHECK_MEM(c.ulp_pd, "welcome", 7);
    CHECK_EQ(iw_sctp_conn_session(p.b.sc), IW_SCTP_SESS_OPEN);
    CHECK_EQ(iw_sctp_conn_session(p.a.sc), IW_SCTP_SESS_STARTING);
    CHECK_EQ(deliver(&p.a, &m[0]), 0);
    CHECK(find_ev(&p.a.log, IW_EV_CONNECTED));
    CHECK_EQ(p.a.log.info.peer_private_data_len, 7);
    CHECK_MEM(p.a.log.info.peer_private_data, "welcome", 7);
    CHECK_EQ(p.a.log.info.enhanced, rev == 2);
    CHECK_EQ(iw_sctp_conn_session(p.a.sc), IW_SCTP_SESS_OPEN);
    CHECK_EQ(iw_conn_get_state(eng(&p.a)), IW_CONN_RTS);
    /* Nothing else: no Session Terminate while the session is open. */
    CHECK_EQ(drain(&p.a, m, 4), 0);
    CHECK_EQ(drain(&p.b, m, 4), 0);
    pair_del(&p);
}

IW_TEST(establish_plain) { check_establish(1); }
IW_TEST(establish_enhanced) { check_establish(2); }

/* RFC 6581 §7 with p2p: IRD/ORD negotiated through the enhanced data, and
 * the initiator's RTR goes out as the first DDP Segment (DDP-SSN 1). */
IW_TEST(establish_enhanced_p2p) {
    pair p;
    memset(&p, 0, sizeof p);
    iw_sctp_conn_settings sa, sb;
    settings(&sa, IW_ROLE_INITIATOR, 2);
    settings(&sb, IW_ROLE_RESPONDER, 2);
    sa.conn.p2p = sb.conn.p2p = true;
    sa.conn.rtr = sb.conn.rtr = IW_RTR_WRITE;
    sa.conn.ird = 4;
    sa.conn.ord = 8;
    sb.conn.ird = 2;
    sb.conn.ord = 2;
    ep_new(&p.a, &sa);
    ep_new(&p.b, &sb);
    CHECK_EQ(iw_sctp_conn_start(p.a.sc, T0), 0);
    CHECK_EQ(iw_sctp_conn_start(p.b.sc, T0), 0);
    wmsg m[4];
    REQUIRE(drain(&p.a, m, 4) == 1);
    CHECK_EQ(deliver(&p.b, &m[0]), 0);
    REQUIRE(drain(&p.b, m, 4) == 1);
    CHECK_EQ(deliver(&p.a, &m[0]), 0);
    REQUIRE(drain(&p.a, m, 4) == 1);
    CHECK_EQ(m[0].ppid, IW_SCTP_PPID_DDP_SEGMENT);
    CHECK_EQ(iw_get_u16(m[0].data), 1);
    CHECK_EQ(deliver(&p.b, &m[0]), 0);
    CHECK(p.a.log.info.p2p);
    CHECK_EQ(p.a.log.info.rtr, IW_RTR_WRITE);
    CHECK_EQ(p.a.log.info.ord, 2); /* ours <= the responder's IRD (RFC 6581 §9.1) */
    CHECK_EQ(p.b.log.info.ord, 2);
    CHECK_EQ(iw_conn_get_state(eng(&p.b)), IW_CONN_RTS);
    CHECK_EQ(drain(&p.b, m, 4), 0);
    pair_del(&p);
}

static void check_reject(uint8_t rev) {
    pair p;
    memset(&p, 0, sizeof p);
    iw_sctp_conn_settings sa, sb;
    settings(&sa, IW_ROLE_INITIATOR, rev);
    settings(&sb, IW_ROLE_RESPONDER, rev);
    sb.conn.reject = true;
    sb.conn.private_data = (const uint8_t *)"busy";
    sb.conn.private_data_len = 4;
    ep_new(&p.a, &sa);
    ep_new(&p.b, &sb);
    CHECK_EQ(iw_sctp_conn_start(p.a.sc, T0), 0);
    CHECK_EQ(iw_sctp_conn_start(p.b.sc, T0), 0);
    wmsg m[4];
    REQUIRE(drain(&p.a, m, 4) == 1);
    CHECK_EQ(deliver(&p.b, &m[0]), 0);
    CHECK(find_ev(&p.b.log, IW_EV_REJECTED));
    REQUIRE(drain(&p.b, m, 4) == 1);
    iw_sctp_ctrl c;
    iw_sctp_problem why;
    CHECK_EQ(iw_sctp_ctrl_decode(&c, m[0].data, m[0].len, &why), (iw_ssize)m[0].len);
    CHECK_EQ(c.fc, rev == 2 ? IW_SCTP_FC_ENH_REJECT : IW_SCTP_FC_REJECT);
    CHECK_EQ(c.ulp_pd_len, 4);
    CHECK_EQ(iw_sctp_conn_session(p.b.sc), IW_SCTP_SESS_ENDED);
    CHECK_EQ(deliver(&p.a, &m[0]), 0);
    const iw_event *ev = find_ev(&p.a.log, IW_EV_REJECTED);
    REQUIRE(ev);
    CHECK_EQ(p.a.log.info.peer_private_data_len, 4);
    CHECK_MEM(p.a.log.info.peer_private_data, "busy", 4);
    CHECK_EQ(iw_sctp_conn_session(p.a.sc), IW_SCTP_SESS_ENDED);
    /* §6.3: Initiate, Reject, and nothing more: no Session Terminate. */
    CHECK_EQ(drain(&p.a, m, 4), 0);
    CHECK_EQ(drain(&p.b, m, 4), 0);
    iw_sctp_conn_stats st;
    iw_sctp_conn_get_stats(p.a.sc, &st);
    CHECK(!st.term_tx && !st.term_rx);
    /* Work after the Reject is refused by the engine. */
    CHECK_EQ(iw_conn_post_recv(eng(&p.a), 1, (void *)m, 16), IW_ERR_PROTO);
    pair_del(&p);
}

IW_TEST(reject_plain) { check_reject(1); }
IW_TEST(reject_enhanced) { check_reject(2); }

/* ---- data: Send, RDMA Write, RDMA Read placed by the engine ---- */

IW_TEST(send_write_read) {
    pair p;
    pair_open(&p, 2);
    static uint8_t rbuf[64], region[6000], src[6000], sink[3000];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)(i * 7 + 1);
    for (size_t i = 0; i < sizeof region; i++)
        region[i] = (uint8_t)(i * 3);
    uint8_t region0[sizeof region];
    memcpy(region0, region, sizeof region);
    uint32_t b_stag, a_stag;
    CHECK_EQ(iw_mr_reg(p.b.rnic, p.b.pd, region, sizeof region, 0x10000,
                       IW_ACCESS_REMOTE_WRITE | IW_ACCESS_REMOTE_READ | IW_ACCESS_LOCAL_WRITE,
                       &b_stag),
             0);
    CHECK_EQ(iw_mr_reg(p.a.rnic, p.a.pd, sink, sizeof sink, 0, IW_ACCESS_LOCAL_WRITE, &a_stag), 0);
    CHECK_EQ(iw_conn_post_recv(eng(&p.b), 77, rbuf, sizeof rbuf), 0);
    iw_send_wr w = {.op = IW_WR_SEND, .wr_id = 1, .data = "hello world", .len = 11};
    CHECK_EQ(iw_conn_post_send(eng(&p.a), &w), 0);
    /* A 4000-octet Write at TO 0x10000 + 500: several segments of at most
     * the maximum DDP segment (§9). */
    w = (iw_send_wr){.op = IW_WR_WRITE,
                     .wr_id = 2,
                     .data = src,
                     .len = 4000,
                     .remote_stag = b_stag,
                     .remote_to = 0x10000 + 500};
    CHECK_EQ(iw_conn_post_send(eng(&p.a), &w), 0);
    /* Read 2500 octets from the region back (what the Write put there
     * and beyond it). */
    w = (iw_send_wr){.op = IW_WR_READ,
                     .wr_id = 3,
                     .len = 2500,
                     .remote_stag = b_stag,
                     .remote_to = 0x10000 + 3000,
                     .local_stag = a_stag,
                     .local_to = 100};
    CHECK_EQ(iw_conn_post_send(eng(&p.a), &w), 0);

    static wmsg m[64];
    int n = drain(&p.a, m, 64);
    CHECK(n >= 5); /* Send, 3 Write segments, Read Request */
    for (int i = 0; i < n; i++) {
        CHECK_EQ(m[i].ppid, IW_SCTP_PPID_DDP_SEGMENT);
        CHECK_EQ(iw_get_u16(m[i].data), p.ssn_a++);
        CHECK(m[i].len - 2 <= IW_SCTP_MAX_SEG_DEFAULT);
        CHECK_EQ(deliver(&p.b, &m[i]), 0);
    }
    const iw_event *ev = find_ev(&p.b.log, IW_EV_RECV);
    REQUIRE(ev);
    CHECK_EQ(ev->wr_id, 77);
    CHECK_EQ(ev->len, 11);
    CHECK_MEM(rbuf, "hello world", 11);
    CHECK_MEM(region + 500, src, 4000);
    CHECK_MEM(region, region0, 500);
    CHECK_MEM(region + 4500, region0 + 4500, sizeof region - 4500);
    pump(&p.a, &p.b, &p.ssn_a, &p.ssn_b);
    CHECK_MEM(sink + 100, region + 3000, 2500);
    int order[3] = {0}, k = 0;
    for (int i = 0; i < p.a.log.n; i++) {
        const iw_event *e = &p.a.log.ev[i];
        if (e->type == IW_EV_SEND_DONE || e->type == IW_EV_WRITE_DONE ||
            e->type == IW_EV_READ_DONE) {
            CHECK_EQ(e->status, IW_WC_SUCCESS);
            if (k < 3)
                order[k++] = (int)e->wr_id;
        }
    }
    CHECK_EQ(k, 3);
    CHECK(order[0] == 1 && order[1] == 2 && order[2] == 3);
    iw_conn_stats cs;
    iw_conn_get_stats(eng(&p.b), &cs);
    CHECK_EQ(cs.payload_copies, 0); /* chunk payload went straight to its target */
    CHECK_EQ(cs.bytes_placed, 11 + 4000);
    pair_del(&p);
}

/* More output than the adapter stages at once: FPDUs that straddle its
 * staging buffer are put together by the deframer, none lost or split. */
IW_TEST(large_write) {
    pair p;
    pair_open(&p, 1);
    static uint8_t region[100000], src[100000];
    uint64_t seed = 42;
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)iw_test_rand(&seed);
    uint32_t stag;
    CHECK_EQ(iw_mr_reg(p.b.rnic, p.b.pd, region, sizeof region, 0, IW_ACCESS_REMOTE_WRITE, &stag),
             0);
    iw_send_wr w = {
        .op = IW_WR_WRITE, .wr_id = 1, .data = src, .len = sizeof src, .remote_stag = stag};
    CHECK_EQ(iw_conn_post_send(eng(&p.a), &w), 0);
    static wmsg m[128];
    int n = drain(&p.a, m, 128);
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        CHECK_EQ(m[i].ppid, IW_SCTP_PPID_DDP_SEGMENT);
        CHECK_EQ(iw_get_u16(m[i].data), p.ssn_a++);
        CHECK(m[i].len - 2 <= IW_SCTP_MAX_SEG_DEFAULT);
        total += m[i].len - 2 - IW_DDP_TAGGED_HDR_LEN;
        CHECK_EQ(deliver(&p.b, &m[i]), 0);
    }
    CHECK_EQ(total, sizeof src);
    CHECK(n > (int)(sizeof src / IW_SCTP_MAX_SEG_DEFAULT));
    CHECK_MEM(region, src, sizeof src);
    pair_del(&p);
}

/* §10: chunks arrive unordered; the DDP-SSN restores the sender's order. */
IW_TEST(reordered_chunks) {
    pair p;
    pair_open(&p, 1);
    static uint8_t rbuf[2][32], region[8000], src[8000];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)(i ^ (i >> 8));
    uint32_t stag;
    CHECK_EQ(iw_mr_reg(p.b.rnic, p.b.pd, region, sizeof region, 0, IW_ACCESS_REMOTE_WRITE, &stag),
             0);
    CHECK_EQ(iw_conn_post_recv(eng(&p.b), 10, rbuf[0], 32), 0);
    CHECK_EQ(iw_conn_post_recv(eng(&p.b), 11, rbuf[1], 32), 0);
    iw_send_wr w = {.op = IW_WR_SEND, .wr_id = 1, .data = "first", .len = 5};
    CHECK_EQ(iw_conn_post_send(eng(&p.a), &w), 0);
    w = (iw_send_wr){.op = IW_WR_WRITE, .wr_id = 2, .data = src, .len = 8000, .remote_stag = stag};
    CHECK_EQ(iw_conn_post_send(eng(&p.a), &w), 0);
    w = (iw_send_wr){.op = IW_WR_SEND, .wr_id = 3, .data = "second", .len = 6};
    CHECK_EQ(iw_conn_post_send(eng(&p.a), &w), 0);
    static wmsg m[32];
    int n = drain(&p.a, m, 32);
    REQUIRE(n >= 8);
    /* Deliver last to first: everything is held until the first arrives. */
    for (int i = n - 1; i >= 0; i--)
        CHECK_EQ(deliver(&p.b, &m[i]), 0);
    CHECK_MEM(region, src, sizeof src);
    CHECK_MEM(rbuf[0], "first", 5);
    CHECK_MEM(rbuf[1], "second", 6);
    int recvs = 0;
    for (int i = 0; i < p.b.log.n; i++)
        if (p.b.log.ev[i].type == IW_EV_RECV) {
            CHECK_EQ(p.b.log.ev[i].wr_id, (uint64_t)(10 + recvs));
            recvs++;
        }
    CHECK_EQ(recvs, 2);
    iw_sctp_conn_stats st;
    iw_sctp_conn_get_stats(p.b.sc, &st);
    CHECK_EQ(st.reordered, (uint64_t)(n - 1));
    CHECK_EQ(iw_sctp_conn_session(p.b.sc), IW_SCTP_SESS_OPEN);
    pair_del(&p);
}

/* ---- one implementation: the same Terminate as over MPA ---- */

/* An MPA engine pair (CRC off, as the SCTP adapter runs it) brought to RTS;
 * returns the responder, fed the FPDU that carries seg, and the
 * Terminate FPDU's ULPDU it answered with. */
static size_t mpa_terminate_for(const uint8_t *seg, size_t seg_len, uint8_t *term, size_t term_cap,
                                uint16_t *triple) {
    iw_rnic *rc, *rd;
    uint32_t pc, pdd;
    iw_conn *c, *d;
    evlog lc = {0}, ld = {0};
    static evlog *lcp, *ldp;
    lcp = &lc;
    ldp = &ld;
    CHECK_EQ(iw_rnic_new(&rc, NULL), 0);
    CHECK_EQ(iw_rnic_new(&rd, NULL), 0);
    CHECK_EQ(iw_pd_alloc(rc, &pc), 0);
    CHECK_EQ(iw_pd_alloc(rd, &pdd), 0);
    iw_conn_settings sc, sd;
    iw_conn_settings_default(&sc, IW_ROLE_INITIATOR);
    iw_conn_settings_default(&sd, IW_ROLE_RESPONDER);
    sc.crc = sd.crc = false;
    CHECK_EQ(iw_conn_new(&c, rc, pc, &sc, &CB, lcp), 0);
    CHECK_EQ(iw_conn_new(&d, rd, pdd, &sd, &CB, ldp), 0);
    CHECK_EQ(iw_conn_start(c, T0), 0);
    CHECK_EQ(iw_conn_start(d, T0), 0);
    static uint8_t buf[70000];
    for (int i = 0; i < 4; i++) {
        iw_ssize n = iw_conn_write(c, buf, sizeof buf, T0);
        if (n > 0)
            CHECK_EQ(iw_conn_recv(d, buf, (size_t)n, T0), n);
        n = iw_conn_write(d, buf, sizeof buf, T0);
        if (n > 0)
            CHECK_EQ(iw_conn_recv(c, buf, (size_t)n, T0), n);
    }
    CHECK_EQ(iw_conn_get_state(d), IW_CONN_RTS);
    /* The FPDU: ULPDU_Length, the segment, PAD, a CRC field (unused). */
    size_t fl = 2 + seg_len + iw_mpa_pad_len(seg_len) + 4;
    memset(buf, 0, fl);
    iw_put_u16(buf, (uint16_t)seg_len);
    memcpy(buf + 2, seg, seg_len);
    CHECK_EQ(iw_conn_recv(d, buf, fl, T0), (iw_ssize)fl);
    iw_ssize n = iw_conn_write(d, buf, sizeof buf, T0);
    size_t tl = 0;
    if (n > 2) {
        tl = iw_get_u16(buf);
        if (tl <= term_cap && tl + 2 <= (size_t)n)
            memcpy(term, buf + 2, tl);
    }
    const iw_event *ev = find_ev(&ld, IW_EV_TERM_SENT);
    *triple = ev ? ev->term.triple : 0;
    iw_conn_del(c);
    iw_conn_del(d);
    iw_rnic_del(rc);
    iw_rnic_del(rd);
    return tl;
}

IW_TEST(invalid_stag_same_as_mpa) {
    pair p;
    pair_open(&p, 2);
    static uint8_t src[100];
    iw_send_wr w = {.op = IW_WR_WRITE,
                    .wr_id = 5,
                    .data = src,
                    .len = 100,
                    .remote_stag = 0xdead01,
                    .remote_to = 0};
    CHECK_EQ(iw_conn_post_send(eng(&p.a), &w), 0);
    wmsg m[8];
    REQUIRE(drain(&p.a, m, 8) == 1);
    CHECK_EQ(deliver(&p.b, &m[0]), 0);
    wmsg t[8];
    REQUIRE(drain(&p.b, t, 8) == 2);
    const iw_event *ev = find_ev(&p.b.log, IW_EV_TERM_SENT);
    REQUIRE(ev);
    /* RFC 5041 §7.1 / RFC 6580: DDP tagged buffer error, Invalid STag. */
    CHECK_EQ(ev->term.triple, IW_TERM_DDP_T_INVALID_STAG);
    uint16_t sctp_triple = ev->term.triple;
    /* The RDMAP Terminate as a DDP Segment, then the Session Terminate
     * (§6.2: it "would follow any RDMAP Terminate message"). */
    CHECK_EQ(t[0].ppid, IW_SCTP_PPID_DDP_SEGMENT);
    CHECK_EQ(t[1].ppid, IW_SCTP_PPID_DDP_CONTROL);
    CHECK_EQ(iw_get_u16(t[0].data), p.ssn_b);
    CHECK_EQ(iw_get_u16(t[1].data), p.ssn_b + 1);
    iw_sctp_ctrl c;
    iw_sctp_problem why;
    CHECK_EQ(iw_sctp_ctrl_decode(&c, t[1].data, t[1].len, &why), 4);
    CHECK_EQ(c.fc, IW_SCTP_FC_TERMINATE);
    CHECK_EQ(iw_sctp_conn_session(p.b.sc), IW_SCTP_SESS_ENDED);

    /* The same DDP segment over MPA: the same engine must answer with the
     * same Terminate, octet for octet. */
    static uint8_t mterm[256];
    uint16_t mpa_triple = 0;
    size_t ml = mpa_terminate_for(m[0].data + 2, m[0].len - 2, mterm, sizeof mterm, &mpa_triple);
    CHECK_EQ(mpa_triple, sctp_triple);
    CHECK_EQ(ml, t[0].len - 2);
    if (ml == t[0].len - 2)
        CHECK_MEM(mterm, t[0].data + 2, ml);

    /* The active side: the Terminate reaches its ULP, the Session
     * Terminate ends the session; it sends no Terminate of its own. */
    CHECK_EQ(deliver(&p.a, &t[0]), 0);
    ev = find_ev(&p.a.log, IW_EV_TERM_RECEIVED);
    REQUIRE(ev);
    CHECK_EQ(ev->term.triple, IW_TERM_DDP_T_INVALID_STAG);
    CHECK_EQ(deliver(&p.a, &t[1]), 0);
    CHECK(find_ev(&p.a.log, IW_EV_CLOSED));
    /* The Write left before the Terminate came back: it completed when it
     * was handed to the LLP (RFC 5040 §5.5: a Write has no response). */
    ev = find_ev(&p.a.log, IW_EV_WRITE_DONE);
    REQUIRE(ev);
    CHECK_EQ(ev->status, IW_WC_SUCCESS);
    CHECK_EQ(drain(&p.a, m, 8), 0);
    iw_sctp_conn_stats st;
    iw_sctp_conn_get_stats(p.a.sc, &st);
    CHECK(st.term_rx && !st.term_tx);
    /* §6.2: the Session Terminate was the peer's final chunk. */
    wmsg extra = t[0];
    iw_put_u16(extra.data, (uint16_t)(p.ssn_b + 2));
    CHECK_EQ(deliver(&p.a, &extra), IW_ERR_PROTO);
    CHECK_EQ(iw_sctp_conn_problem(p.a.sc, NULL), IW_SCTP_SESS_PROBLEM_AFTER_END);
    pair_del(&p);
}

/* ---- RFC 5043's own rules ---- */

/* A DDP Segment Chunk with the given DDP-SSN and a valid untagged Send. */
static void make_send(wmsg *m, uint16_t ssn, uint32_t msn) {
    iw_rdmap_msg r = {0};
    r.rv = IW_RDMAP_VERSION;
    r.opcode = IW_OP_SEND;
    r.ddp.dv = IW_DDP_VERSION;
    r.ddp.last = true;
    r.ddp.qn = 0;
    r.ddp.msn = msn;
    r.payload = (const uint8_t *)"x";
    r.payload_len = 1;
    m->ppid = IW_SCTP_PPID_DDP_SEGMENT;
    iw_put_u16(m->data, ssn);
    iw_ssize n = iw_rdmap_encode(m->data + 2, sizeof m->data - 2, &r);
    CHECK(n > 0);
    m->len = 2 + (size_t)(n > 0 ? n : 0);
}

static void expect_violation(ep *e, const wmsg *m, iw_sctp_sess_problem want, bool term_out) {
    CHECK_EQ(deliver(e, m), IW_ERR_PROTO);
    CHECK_EQ(iw_sctp_conn_problem(e->sc, NULL), want);
    CHECK_EQ(iw_sctp_conn_session(e->sc), IW_SCTP_SESS_ENDED);
    CHECK(find_ev(&e->log, IW_EV_CLOSED));
    wmsg out[4];
    int n = drain(e, out, 4);
    CHECK_EQ(n, term_out ? 1 : 0);
    if (n == 1) {
        CHECK_EQ(out[0].ppid, IW_SCTP_PPID_DDP_CONTROL);
        CHECK_EQ(iw_get_u16(out[0].data + 2), IW_SCTP_FC_TERMINATE);
    }
    /* Chunks still in flight after we ended it are dropped quietly. */
    CHECK_EQ(deliver(e, m), 0);
}

IW_TEST(bad_ddp_ssn) {
    static const struct {
        int delta;
        iw_sctp_sess_problem want;
    } cases[] = {
        {-1, IW_SCTP_SESS_PROBLEM_SSN_STALE},
        {-100, IW_SCTP_SESS_PROBLEM_SSN_STALE},
        {IW_SCTP_WINDOW_DEFAULT, IW_SCTP_SESS_PROBLEM_SSN_WINDOW},
        {20000, IW_SCTP_SESS_PROBLEM_SSN_WINDOW},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pair p;
        pair_open(&p, 1);
        static uint8_t rb[8];
        CHECK_EQ(iw_conn_post_recv(eng(&p.b), 1, rb, sizeof rb), 0);
        wmsg m;
        make_send(&m, (uint16_t)(p.ssn_a + cases[i].delta), 1);
        expect_violation(&p.b, &m, cases[i].want, true);
        /* Nothing was placed, and the posted buffer was flushed. */
        const iw_event *ev = find_ev(&p.b.log, IW_EV_RECV);
        CHECK(ev && ev->status == IW_WC_FLUSHED);
        pair_del(&p);
    }
    /* The same DDP-SSN twice while it waits for the gap before it. */
    pair p;
    pair_open(&p, 1);
    wmsg m;
    make_send(&m, (uint16_t)(p.ssn_a + 2), 1);
    CHECK_EQ(deliver(&p.b, &m), 0);
    expect_violation(&p.b, &m, IW_SCTP_SESS_PROBLEM_SSN_DUPLICATE, true);
    pair_del(&p);
    /* A chunk that was already processed, sent again. */
    pair_open(&p, 1);
    static uint8_t rb[8];
    CHECK_EQ(iw_conn_post_recv(eng(&p.b), 1, rb, sizeof rb), 0);
    make_send(&m, p.ssn_a, 1);
    CHECK_EQ(deliver(&p.b, &m), 0);
    CHECK(find_ev(&p.b.log, IW_EV_RECV));
    expect_violation(&p.b, &m, IW_SCTP_SESS_PROBLEM_SSN_STALE, true);
    pair_del(&p);
}

IW_TEST(segment_before_accept) {
    /* Active side, Initiate sent: the passive side's first chunk must be
     * its Accept or Reject (§6.2), not a DDP Segment. */
    pair p;
    pair_up(&p, 1);
    wmsg m[4];
    REQUIRE(drain(&p.a, m, 4) == 1);
    wmsg s;
    make_send(&s, 0, 1);
    expect_violation(&p.a, &s, IW_SCTP_SESS_PROBLEM_SEG_BEFORE_SESSION, true);
    pair_del(&p);
    /* Passive side, nothing received: a DDP Segment opens no session, and
     * there is no session to send a Terminate on. */
    pair_up(&p, 1);
    expect_violation(&p.b, &s, IW_SCTP_SESS_PROBLEM_SEG_BEFORE_SESSION, false);
    pair_del(&p);
}

IW_TEST(segment_before_accept_reordered) {
    pair p;
    pair_up(&p, 1);
    wmsg m[4];
    REQUIRE(drain(&p.a, m, 4) == 1);
    CHECK_EQ(deliver(&p.b, &m[0]), 0);
    REQUIRE(drain(&p.b, m, 4) == 1); /* the Accept, DDP-SSN 0 */
    static uint8_t rb[8];
    CHECK_EQ(iw_conn_post_recv(eng(&p.a), 1, rb, sizeof rb), 0);
    wmsg s;
    make_send(&s, 1, 1);
    CHECK_EQ(deliver(&p.a, &s), 0); /* arrived first, held */
    CHECK(!find_ev(&p.a.log, IW_EV_RECV));
    CHECK_EQ(deliver(&p.a, &m[0]), 0);
    CHECK(find_ev(&p.a.log, IW_EV_CONNECTED));
    const iw_event *ev = find_ev(&p.a.log, IW_EV_RECV);
    REQUIRE(ev);
    CHECK_EQ(ev->status, IW_WC_SUCCESS);
    CHECK_EQ(rb[0], 'x');
    pair_del(&p);
}

IW_TEST(control_out_of_sequence) {
    pair p;
    wmsg m[4];
    iw_sctp_ctrl c = {0};
    /* A second Accept on an open session (§6.1). */
    pair_open(&p, 1);
    c.ssn = p.ssn_b;
    c.fc = IW_SCTP_FC_ACCEPT;
    m[0].ppid = IW_SCTP_PPID_DDP_CONTROL;
    m[0].len = (size_t)iw_sctp_ctrl_encode(m[0].data, MSG_MAX, &c);
    expect_violation(&p.a, &m[0], IW_SCTP_SESS_PROBLEM_UNEXPECTED_CTRL, true);
    pair_del(&p);
    /* An Initiate sent to the active side. */
    pair_up(&p, 1);
    REQUIRE(drain(&p.a, m + 1, 3) == 1);
    c.ssn = 0;
    c.fc = IW_SCTP_FC_INITIATE;
    m[0].len = (size_t)iw_sctp_ctrl_encode(m[0].data, MSG_MAX, &c);
    expect_violation(&p.a, &m[0], IW_SCTP_SESS_PROBLEM_UNEXPECTED_CTRL, true);
    pair_del(&p);
    /* An Accept sent to the passive side. */
    pair_up(&p, 1);
    c.fc = IW_SCTP_FC_ACCEPT;
    m[0].len = (size_t)iw_sctp_ctrl_encode(m[0].data, MSG_MAX, &c);
    expect_violation(&p.b, &m[0], IW_SCTP_SESS_PROBLEM_UNEXPECTED_CTRL, false);
    pair_del(&p);
    /* RFC 6581 §7: an Enhanced Accept to a plain Initiate. */
    pair_up(&p, 1);
    REQUIRE(drain(&p.a, m + 1, 3) == 1);
    c.fc = IW_SCTP_FC_ENH_ACCEPT;
    c.v2.ird = c.v2.ord = 1;
    m[0].len = (size_t)iw_sctp_ctrl_encode(m[0].data, MSG_MAX, &c);
    expect_violation(&p.a, &m[0], IW_SCTP_SESS_PROBLEM_ENH_MISMATCH, true);
    CHECK(!find_ev(&p.a.log, IW_EV_CONNECTED));
    pair_del(&p);
    /* ... and a plain Accept to an Enhanced Initiate. */
    pair_up(&p, 2);
    REQUIRE(drain(&p.a, m + 1, 3) == 1);
    c.fc = IW_SCTP_FC_ACCEPT;
    m[0].len = (size_t)iw_sctp_ctrl_encode(m[0].data, MSG_MAX, &c);
    expect_violation(&p.a, &m[0], IW_SCTP_SESS_PROBLEM_ENH_MISMATCH, true);
    pair_del(&p);
    /* A passive side that speaks RFC 5044 frames only does not know the
     * enhanced codes. */
    pair_up(&p, 2);
    iw_sctp_conn_settings sb;
    settings(&sb, IW_ROLE_RESPONDER, 1);
    ep b1;
    ep_new(&b1, &sb);
    CHECK_EQ(iw_sctp_conn_start(b1.sc, T0), 0);
    REQUIRE(drain(&p.a, m, 4) == 1);
    expect_violation(&b1, &m[0], IW_SCTP_SESS_PROBLEM_UNEXPECTED_CTRL, true);
    CHECK(!find_ev(&b1.log, IW_EV_CONNECTED));
    ep_del(&b1);
    pair_del(&p);
    /* The Experimental code is in no legal sequence (RFC 6580 §3.5). */
    pair_open(&p, 1);
    c.ssn = p.ssn_a;
    c.fc = IW_SCTP_FC_EXPERIMENTAL;
    m[0].len = (size_t)iw_sctp_ctrl_encode(m[0].data, MSG_MAX, &c);
    expect_violation(&p.b, &m[0], IW_SCTP_SESS_PROBLEM_UNEXPECTED_CTRL, true);
    pair_del(&p);
}

/* §6.4: the passive side answers an Initiate with a Session Terminate. */
IW_TEST(non_ulp_reject) {
    pair p;
    pair_up(&p, 1);
    wmsg m[4];
    REQUIRE(drain(&p.a, m, 4) == 1);
    iw_sctp_ctrl c = {.ssn = 0, .fc = IW_SCTP_FC_TERMINATE};
    m[0].ppid = IW_SCTP_PPID_DDP_CONTROL;
    m[0].len = (size_t)iw_sctp_ctrl_encode(m[0].data, MSG_MAX, &c);
    CHECK_EQ(deliver(&p.a, &m[0]), 0);
    CHECK_EQ(iw_sctp_conn_problem(p.a.sc, NULL), IW_SCTP_SESS_PROBLEM_NONE);
    CHECK_EQ(iw_sctp_conn_session(p.a.sc), IW_SCTP_SESS_ENDED);
    const iw_event *ev = find_ev(&p.a.log, IW_EV_CLOSED);
    REQUIRE(ev);
    CHECK_EQ(ev->close, IW_CLOSE_LLP_CLOSED);
    CHECK(!find_ev(&p.a.log, IW_EV_CONNECTED));
    CHECK_EQ(drain(&p.a, m, 4), 0);
    pair_del(&p);
}

/* §6.2: the ULP's orderly close ends with one Session Terminate. */
IW_TEST(graceful_close) {
    pair p;
    pair_open(&p, 2);
    static uint8_t rb[8];
    CHECK_EQ(iw_conn_post_recv(eng(&p.b), 9, rb, sizeof rb), 0);
    iw_send_wr w = {.op = IW_WR_SEND, .wr_id = 1, .data = "bye", .len = 3};
    CHECK_EQ(iw_conn_post_send(eng(&p.a), &w), 0);
    CHECK_EQ(iw_conn_close(eng(&p.a), T0), 0);
    wmsg m[4];
    REQUIRE(drain(&p.a, m, 4) == 2);
    CHECK_EQ(m[0].ppid, IW_SCTP_PPID_DDP_SEGMENT);
    CHECK_EQ(m[1].ppid, IW_SCTP_PPID_DDP_CONTROL);
    CHECK_EQ(iw_get_u16(m[1].data), iw_get_u16(m[0].data) + 1);
    CHECK_EQ(iw_get_u16(m[1].data + 2), IW_SCTP_FC_TERMINATE);
    CHECK(find_ev(&p.a.log, IW_EV_CLOSED));
    /* Delivered out of order: the Send is still placed before the end. */
    CHECK_EQ(deliver(&p.b, &m[1]), 0);
    CHECK(!find_ev(&p.b.log, IW_EV_CLOSED));
    CHECK_EQ(deliver(&p.b, &m[0]), 0);
    const iw_event *ev = find_ev(&p.b.log, IW_EV_RECV);
    REQUIRE(ev);
    CHECK_EQ(ev->status, IW_WC_SUCCESS);
    CHECK_MEM(rb, "bye", 3);
    CHECK(find_ev(&p.b.log, IW_EV_CLOSED));
    CHECK_EQ(drain(&p.b, m, 4), 0); /* the peer's Terminate ended it */
    pair_del(&p);
}

/* §6.6: a Session Control message is not sent while the previous one
 * could still be overtaken: not acked by SCTP nor answered by the peer. */
IW_TEST(control_waits_for_previous) {
    g_ack = false;
    pair p;
    pair_up(&p, 1);
    wmsg m[4];
    /* Passive side: Accept sent, not acked; the ULP closes at once. */
    REQUIRE(drain(&p.a, m, 4) == 1);
    CHECK_EQ(deliver(&p.b, &m[0]), 0);
    REQUIRE(drain(&p.b, m, 4) == 1);
    CHECK_EQ(iw_sctp_ctrl_decode(&(iw_sctp_ctrl){0}, m[0].data, m[0].len, &(iw_sctp_problem){0}),
             (iw_ssize)m[0].len);
    CHECK_EQ(iw_conn_close(eng(&p.b), T0), 0);
    CHECK(find_ev(&p.b.log, IW_EV_CLOSED));
    CHECK(!iw_sctp_conn_want_write(p.b.sc));
    CHECK_EQ(drain(&p.b, m + 1, 3), 0);
    /* Acks for DDP-SSNs never sent are refused. */
    CHECK_EQ(iw_sctp_conn_tx_acked(p.b.sc, 1), IW_ERR_INVALID_ARG);
    CHECK_EQ(iw_sctp_conn_tx_acked(p.b.sc, 0xFFFF), IW_ERR_INVALID_ARG);
    CHECK_EQ(iw_sctp_conn_tx_acked(p.b.sc, 0), 0);
    CHECK(iw_sctp_conn_want_write(p.b.sc));
    REQUIRE(drain(&p.b, m + 1, 3) == 1);
    CHECK_EQ(iw_get_u16(m[1].data), 1);
    CHECK_EQ(iw_get_u16(m[1].data + 2), IW_SCTP_FC_TERMINATE);
    pair_del(&p);
    /* Active side: Initiate unanswered and unacked; its Terminate waits
     * for either. The answer comes: the Accept, which makes it known. */
    pair_up(&p, 1);
    REQUIRE(drain(&p.a, m, 4) == 1);
    CHECK_EQ(iw_conn_close(eng(&p.a), T0), 0);
    CHECK_EQ(drain(&p.a, m + 1, 3), 0);
    CHECK_EQ(deliver(&p.b, &m[0]), 0);
    REQUIRE(drain(&p.b, m + 1, 3) == 1);
    CHECK_EQ(deliver(&p.a, &m[1]), 0);
    REQUIRE(drain(&p.a, m + 2, 2) == 1);
    CHECK_EQ(iw_get_u16(m[2].data + 2), IW_SCTP_FC_TERMINATE);
    pair_del(&p);
    g_ack = true;
}

/* Allocation failure (as iw_failmalloc_test does for the engine): an
 * exchange with reordered chunks is run once to count allocations, then
 * with allocation k failing for every k. What fails, fails with
 * IW_ERR_NOMEM, and everything is freed (counted here; ASan too). */
typedef struct failmem {
    long n, fail_at, live;
} failmem;
static void *fm_malloc(size_t n, void *u) {
    failmem *f = u;
    if (++f->n == f->fail_at)
        return NULL;
    void *p = malloc(n);
    f->live += p != NULL;
    return p;
}
static void *fm_calloc(size_t n, size_t sz, void *u) {
    failmem *f = u;
    if (++f->n == f->fail_at)
        return NULL;
    void *p = calloc(n, sz);
    f->live += p != NULL;
    return p;
}
static void *fm_realloc(void *p, size_t n, void *u) {
    failmem *f = u;
    if (++f->n == f->fail_at)
        return NULL;
    void *q = realloc(p, n);
    f->live += q != NULL && !p;
    return q;
}
static void fm_free(void *p, void *u) {
    failmem *f = u;
    f->live -= p != NULL;
    free(p);
}

/* Returns the first error (IW_ERR_NOMEM expected), 0 when all went through. */
static int fm_exchange(failmem *f) {
    iw_mem mem = {f, fm_malloc, fm_free, fm_calloc, fm_realloc};
    iw_rnic *ra = NULL, *rb = NULL;
    iw_sctp_conn *a = NULL, *b = NULL;
    uint32_t pa = 0, pb = 0;
    static evlog la, lb;
    memset(&la, 0, sizeof la);
    memset(&lb, 0, sizeof lb);
    static uint8_t rbuf[32];
    iw_sctp_conn_settings sa, sb;
    settings(&sa, IW_ROLE_INITIATOR, 2);
    settings(&sb, IW_ROLE_RESPONDER, 2);
    int rc = iw_rnic_new(&ra, &mem);
    if (!rc)
        rc = iw_rnic_new(&rb, &mem);
    if (!rc)
        rc = iw_pd_alloc(ra, &pa);
    if (!rc)
        rc = iw_pd_alloc(rb, &pb);
    if (!rc)
        rc = iw_sctp_conn_new(&a, ra, pa, &sa, &CB, &la);
    if (!rc)
        rc = iw_sctp_conn_new(&b, rb, pb, &sb, &CB, &lb);
    if (!rc)
        rc = iw_sctp_conn_start(a, T0);
    if (!rc)
        rc = iw_sctp_conn_start(b, T0);
    if (!rc)
        rc = iw_conn_post_recv(iw_sctp_conn_engine(b), 1, rbuf, sizeof rbuf);
    iw_send_wr w = {.op = IW_WR_SEND, .wr_id = 1, .data = "abc", .len = 3};
    if (!rc)
        rc = iw_conn_post_send(iw_sctp_conn_engine(a), &w);
    w.data = "def";
    if (!rc)
        rc = iw_conn_post_send(iw_sctp_conn_engine(a), &w);
    static wmsg q[16];
    for (int round = 0; !rc && round < 6; round++) {
        iw_sctp_conn *from = round % 2 ? b : a, *to = round % 2 ? a : b;
        int n = 0;
        iw_sctp_msg m;
        while (n < 16 && (rc = iw_sctp_conn_next(from, &m, T0)) == 1) {
            q[n].ppid = m.ppid;
            q[n].len = m.len;
            memcpy(q[n].data, m.data, m.len);
            iw_sctp_conn_tx_acked(from, iw_get_u16(m.data));
            n++;
        }
        /* Last first: all but one chunk are held. */
        for (int i = n - 1; rc == 0 && i >= 0; i--)
            rc = iw_sctp_conn_recv(to, q[i].ppid, q[i].data, q[i].len, T0);
    }
    if (!rc)
        CHECK_MEM(rbuf, "abc", 3);
    iw_sctp_conn_del(a);
    iw_sctp_conn_del(b);
    iw_rnic_del(ra);
    iw_rnic_del(rb);
    return rc;
}

IW_TEST(allocation_failure) {
    failmem f = {0, 0, 0};
    CHECK_EQ(fm_exchange(&f), 0);
    CHECK_EQ(f.live, 0);
    long total = f.n;
    CHECK(total > 8);
    for (long k = 1; k <= total; k++) {
        failmem g = {0, k, 0};
        int rc = fm_exchange(&g);
        CHECK_EQ(rc, IW_ERR_NOMEM);
        CHECK_EQ(g.live, 0);
    }
}

/* A callback may not move chunks: refused, and the session unchanged. */
IW_TEST(callback_reentry) {
    pair p;
    pair_open(&p, 1);
    p.b.log.self = p.b.sc;
    p.b.log.reenter = true;
    p.b.log.reenter_recv = p.b.log.reenter_next = 1;
    static uint8_t rb[8];
    CHECK_EQ(iw_conn_post_recv(eng(&p.b), 1, rb, sizeof rb), 0);
    iw_send_wr w = {.op = IW_WR_SEND, .wr_id = 1, .data = "hi", .len = 2};
    CHECK_EQ(iw_conn_post_send(eng(&p.a), &w), 0);
    pump(&p.a, &p.b, &p.ssn_a, &p.ssn_b);
    CHECK(find_ev(&p.b.log, IW_EV_RECV));
    CHECK_EQ(p.b.log.reenter_recv, IW_ERR_INVALID_ARG);
    CHECK_EQ(p.b.log.reenter_next, IW_ERR_INVALID_ARG);
    CHECK_EQ(iw_sctp_conn_session(p.b.sc), IW_SCTP_SESS_OPEN);
    CHECK_EQ(iw_sctp_conn_problem(p.b.sc, NULL), IW_SCTP_SESS_PROBLEM_NONE);
    p.b.log.reenter = false;
    /* The stream goes on. */
    CHECK_EQ(iw_conn_post_recv(eng(&p.b), 2, rb, sizeof rb), 0);
    w.data = "ok";
    CHECK_EQ(iw_conn_post_send(eng(&p.a), &w), 0);
    pump(&p.a, &p.b, &p.ssn_a, &p.ssn_b);
    CHECK_MEM(rb, "ok", 2);
    pair_del(&p);
}

/* §9: "MUST reject DDP Segments that are larger than the maximum". */
IW_TEST(segment_too_long) {
    pair p;
    memset(&p, 0, sizeof p);
    iw_sctp_conn_settings sa, sb;
    settings(&sa, IW_ROLE_INITIATOR, 1);
    settings(&sb, IW_ROLE_RESPONDER, 1);
    sb.max_seg = 600;
    ep_new(&p.a, &sa);
    ep_new(&p.b, &sb);
    CHECK_EQ(iw_sctp_conn_start(p.a.sc, T0), 0);
    CHECK_EQ(iw_sctp_conn_start(p.b.sc, T0), 0);
    pump(&p.a, &p.b, &p.ssn_a, &p.ssn_b);
    /* The responder's own segments respect its maximum. */
    static uint8_t region[2000], src[2000];
    uint32_t stag;
    CHECK_EQ(iw_mr_reg(p.a.rnic, p.a.pd, region, sizeof region, 0, IW_ACCESS_REMOTE_WRITE, &stag),
             0);
    iw_send_wr w = {.op = IW_WR_WRITE, .wr_id = 1, .data = src, .len = 2000, .remote_stag = stag};
    CHECK_EQ(iw_conn_post_send(eng(&p.b), &w), 0);
    static wmsg m[16];
    int n = drain(&p.b, m, 16);
    CHECK(n >= 4);
    for (int i = 0; i < n; i++) {
        CHECK(m[i].len - 2 <= 600);
        CHECK_EQ(deliver(&p.a, &m[i]), 0);
    }
    /* The initiator's 1450-octet segments are too long for it. */
    CHECK_EQ(iw_mr_reg(p.b.rnic, p.b.pd, region, sizeof region, 0, IW_ACCESS_REMOTE_WRITE, &stag),
             0);
    w.remote_stag = stag;
    CHECK_EQ(iw_conn_post_send(eng(&p.a), &w), 0);
    n = drain(&p.a, m, 16);
    REQUIRE(n >= 1);
    CHECK(m[0].len - 2 > 600);
    expect_violation(&p.b, &m[0], IW_SCTP_SESS_PROBLEM_SEG_TOO_LONG, true);
    pair_del(&p);
    /* Ahead of its turn, an oversized chunk is refused before it is held
     * (§10: no resources on an unchecked chunk). */
    pair_open(&p, 1);
    static wmsg big;
    make_send(&big, (uint16_t)(p.ssn_a + 3), 1);
    big.len = 2 + IW_SCTP_MAX_SEG_DEFAULT + 1;
    expect_violation(&p.b, &big, IW_SCTP_SESS_PROBLEM_SEG_TOO_LONG, true);
    iw_sctp_conn_stats st;
    iw_sctp_conn_get_stats(p.b.sc, &st);
    CHECK_EQ(st.reordered, 0);
    pair_del(&p);
}

/* Truncated and malformed chunks: a clear problem, never a crash. */
IW_TEST(malformed_chunks) {
    static const struct {
        uint32_t ppid;
        const char *hex;
        iw_sctp_sess_problem want;
        iw_sctp_problem chunk;
    } cases[] = {
        {IW_SCTP_PPID_DDP_SEGMENT, "", IW_SCTP_SESS_PROBLEM_CHUNK, IW_SCTP_PROBLEM_SEG_SHORT},
        {IW_SCTP_PPID_DDP_SEGMENT, "00", IW_SCTP_SESS_PROBLEM_CHUNK, IW_SCTP_PROBLEM_SEG_SHORT},
        {IW_SCTP_PPID_DDP_CONTROL, "00", IW_SCTP_SESS_PROBLEM_CHUNK, IW_SCTP_PROBLEM_CTRL_SHORT},
        {IW_SCTP_PPID_DDP_CONTROL, "0001 00", IW_SCTP_SESS_PROBLEM_CHUNK,
         IW_SCTP_PROBLEM_CTRL_SHORT},
        {IW_SCTP_PPID_DDP_CONTROL, "0001 0009", IW_SCTP_SESS_PROBLEM_CHUNK,
         IW_SCTP_PROBLEM_FC_UNASSIGNED},
        {IW_SCTP_PPID_DDP_CONTROL, "0001 0004 00", IW_SCTP_SESS_PROBLEM_CHUNK,
         IW_SCTP_PROBLEM_TERM_WITH_PD},
        {51, "0001 0004", IW_SCTP_SESS_PROBLEM_BAD_PPID, IW_SCTP_PROBLEM_NONE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pair p;
        pair_open(&p, 1);
        wmsg m;
        m.ppid = cases[i].ppid;
        m.len = iw_test_unhex(m.data, sizeof m.data, cases[i].hex);
        if (m.len >= 2)
            iw_put_u16(m.data, p.ssn_a);
        CHECK_EQ(deliver(&p.b, &m), IW_ERR_PROTO);
        iw_sctp_problem why = IW_SCTP_PROBLEM_NONE;
        CHECK_EQ(iw_sctp_conn_problem(p.b.sc, &why), cases[i].want);
        CHECK_EQ(why, cases[i].chunk);
        CHECK(iw_sctp_sess_problem_rfc(cases[i].want) != NULL);
        CHECK(find_ev(&p.b.log, IW_EV_CLOSED));
        wmsg out[2];
        CHECK_EQ(drain(&p.b, out, 2), 1);
        pair_del(&p);
    }
    /* Private Data over 512 octets in an Initiate. */
    pair p;
    pair_up(&p, 1);
    wmsg m;
    m.ppid = IW_SCTP_PPID_DDP_CONTROL;
    memset(m.data, 0, 4 + 513);
    iw_put_u16(m.data + 2, IW_SCTP_FC_INITIATE);
    m.len = 4 + 513;
    CHECK_EQ(deliver(&p.b, &m), IW_ERR_PROTO);
    iw_sctp_problem why;
    CHECK_EQ(iw_sctp_conn_problem(p.b.sc, &why), IW_SCTP_SESS_PROBLEM_CHUNK);
    CHECK_EQ(why, IW_SCTP_PROBLEM_PD_TOO_LONG);
    CHECK(!find_ev(&p.b.log, IW_EV_CONNECTED));
    pair_del(&p);
    /* API misuse: chunks before start, NULL with a length. */
    iw_sctp_conn_settings s;
    settings(&s, IW_ROLE_RESPONDER, 1);
    ep e;
    ep_new(&e, &s);
    CHECK_EQ(iw_sctp_conn_recv(e.sc, IW_SCTP_PPID_DDP_CONTROL, m.data, 4, T0), IW_ERR_INVALID_ARG);
    CHECK_EQ(iw_sctp_conn_start(e.sc, T0), 0);
    CHECK_EQ(iw_sctp_conn_recv(e.sc, IW_SCTP_PPID_DDP_CONTROL, NULL, 4, T0), IW_ERR_INVALID_ARG);
    ep_del(&e);
    s.max_seg = IW_SCTP_MAX_SEG_MIN - 1;
    iw_sctp_conn *bad = NULL;
    iw_rnic *r;
    uint32_t pd;
    CHECK_EQ(iw_rnic_new(&r, NULL), 0);
    CHECK_EQ(iw_pd_alloc(r, &pd), 0);
    CHECK_EQ(iw_sctp_conn_new(&bad, r, pd, &s, &CB, NULL), IW_ERR_INVALID_ARG);
    s.max_seg = 0;
    s.window = IW_SCTP_WINDOW_MAX + 1;
    CHECK_EQ(iw_sctp_conn_new(&bad, r, pd, &s, &CB, NULL), IW_ERR_INVALID_ARG);
    CHECK(bad == NULL);
    iw_rnic_del(r);
}

/* Random chunks into both roles, before and after establishment: every
 * call returns 0 or a documented error, memory outside the registered
 * region never changes, and the endpoint stays usable for deletion. */
IW_TEST(random_chunks) {
    uint64_t seed = 0x5c7905043ull;
    static uint8_t region[4096 + 64];
    for (int iter = 0; iter < 300; iter++) {
        pair p;
        if (iter % 3 == 0)
            pair_up(&p, (uint8_t)(1 + iter % 2));
        else
            pair_open(&p, (uint8_t)(1 + iter % 2));
        memset(region, 0xEE, sizeof region);
        uint32_t stag;
        CHECK_EQ(iw_mr_reg(p.b.rnic, p.b.pd, region + 32, 4096, 0,
                           IW_ACCESS_REMOTE_WRITE | IW_ACCESS_REMOTE_READ, &stag),
                 0);
        static uint8_t rb[64];
        CHECK_EQ(iw_conn_post_recv(eng(&p.b), 1, rb, sizeof rb), 0);
        for (int k = 0; k < 20; k++) {
            wmsg m;
            uint64_t r = iw_test_rand(&seed);
            m.ppid = (r & 7) == 0 ? (uint32_t)(r >> 8) : (r & 1) ? 16u : 17u;
            m.len = (size_t)(iw_test_rand(&seed) % 80);
            for (size_t j = 0; j < m.len; j++)
                m.data[j] = (uint8_t)iw_test_rand(&seed);
            /* Mostly the DDP-SSN due, so the chunk reaches the session rules. */
            if (m.len >= 2 && (r & 0x30))
                iw_put_u16(m.data, (uint16_t)(p.ssn_a + k));
            if (m.len >= 4 && m.ppid == 17u && (r & 0x300))
                iw_put_u16(m.data + 2, (uint16_t)(1 + (r >> 16) % 7));
            if (m.len >= 10 && m.ppid == 16u && (r & 0x400)) {
                m.data[2] = 0x80 | 0x41; /* tagged, L, DV 1; RV 1 Write */
                m.data[3] = 0x40;
                iw_put_u32(m.data + 4, stag);
            }
            int rc = iw_sctp_conn_recv((iter & 1) ? p.b.sc : p.a.sc, m.ppid, m.data, m.len, T0);
            CHECK(rc == 0 || rc == IW_ERR_PROTO);
            wmsg out[8];
            drain(&p.a, out, 8);
            drain(&p.b, out, 8);
        }
        for (int j = 0; j < 32; j++) {
            CHECK_EQ(region[j], 0xEE);
            CHECK_EQ(region[32 + 4096 + j], 0xEE);
        }
        pair_del(&p);
    }
}

/* Independent DDP streams: two sessions on two stream identifiers of one
 * association keep their own DDP-SSNs and sessions (§6, §8). */
IW_TEST(two_streams) {
    pair p1, p2;
    pair_open(&p1, 1);
    pair_open(&p2, 2);
    static uint8_t rb1[8], rb2[8];
    CHECK_EQ(iw_conn_post_recv(eng(&p1.b), 1, rb1, 8), 0);
    CHECK_EQ(iw_conn_post_recv(eng(&p2.b), 2, rb2, 8), 0);
    iw_send_wr w = {.op = IW_WR_SEND, .wr_id = 1, .data = "one", .len = 3};
    CHECK_EQ(iw_conn_post_send(eng(&p1.a), &w), 0);
    w.data = "two";
    CHECK_EQ(iw_conn_post_send(eng(&p2.a), &w), 0);
    /* A violation on one stream ends that session only. */
    wmsg bad;
    make_send(&bad, (uint16_t)(p1.ssn_a + 5000), 1);
    CHECK_EQ(deliver(&p1.b, &bad), IW_ERR_PROTO);
    pump(&p2.a, &p2.b, &p2.ssn_a, &p2.ssn_b);
    CHECK_MEM(rb2, "two", 3);
    CHECK_EQ(iw_sctp_conn_session(p2.b.sc), IW_SCTP_SESS_OPEN);
    CHECK_EQ(iw_sctp_conn_session(p1.b.sc), IW_SCTP_SESS_ENDED);
    pair_del(&p1);
    pair_del(&p2);
}

IW_TEST_MAIN("iw_sctp_conn", IW_CASE(establish_plain), IW_CASE(establish_enhanced),
             IW_CASE(establish_enhanced_p2p), IW_CASE(reject_plain), IW_CASE(reject_enhanced),
             IW_CASE(send_write_read), IW_CASE(reordered_chunks), IW_CASE(large_write),
             IW_CASE(invalid_stag_same_as_mpa), IW_CASE(bad_ddp_ssn),
             IW_CASE(segment_before_accept), IW_CASE(segment_before_accept_reordered),
             IW_CASE(control_out_of_sequence), IW_CASE(non_ulp_reject), IW_CASE(graceful_close),
             IW_CASE(control_waits_for_previous), IW_CASE(callback_reentry),
             IW_CASE(allocation_failure), IW_CASE(segment_too_long), IW_CASE(malformed_chunks),
             IW_CASE(random_chunks), IW_CASE(two_streams))
