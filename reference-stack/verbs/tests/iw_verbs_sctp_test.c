/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The verbs API over SCTP (RFC 5043, libusrsctp in UDP on loopback):
 * connect, reject, a Send/Write/Read round trip with every octet checked,
 * close with its Session Terminate, a refused connect, and raw SCTP peers
 * in a child process (their own usrsctp): one that answers the Initiate
 * and then sends a malformed DDP Segment chunk, which must get the Session
 * Terminate (§6.1), one that sends a DDP Segment instead of the Accept
 * (§6.2), also terminated, and one whose INIT-ACK lacks the DDP
 * Adaptation Layer Indication, which must get no DDP at all (§11.1).
 * Waits are for conditions, capped; no timing assertion. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <usrsctp.h>

#include <iwarp/verbs.h>

#include "iw_test.h"

#define WAIT_MS 10000 /* cap on any one wait: a hang fails, it never passes */

/* The event types a CQ has shown so far (bit per type). */
static unsigned seen_client, seen_server;

static bool wait_for(iw_cq *cq, unsigned *seen, iw_event_type type, iw_wc *out) {
    for (int i = 0; i < WAIT_MS / 10; i++) {
        iw_wc wc;
        if (iw_cq_wait(cq, &wc, 1, 10) == 1) {
            *seen |= 1u << wc.ev.type;
            if (wc.ev.type == type) {
                if (out)
                    *out = wc;
                return true;
            }
        }
    }
    return false;
}

typedef struct pair {
    iw_dev *dev;
    uint32_t pd;
    iw_cq *ccq, *scq;
    iw_listener *l;
    iw_qp *client, *server;
} pair;

/* A device, a listener, a client QP connected to it and the server QP that
 * accepted it (not yet waited for CONNECTED). */
static bool pair_open(pair *p, const iw_conn_settings *srv) {
    memset(p, 0, sizeof *p);
    seen_client = seen_server = 0;
    iw_conn_settings s;
    iw_conn_settings_default(&s, IW_ROLE_INITIATOR);
    if (iw_dev_open_transport(&p->dev, IW_TRANSPORT_SCTP) ||
        iw_pd_alloc(iw_dev_rnic(p->dev), &p->pd) || iw_cq_create(p->dev, 256, &p->ccq) ||
        iw_cq_create(p->dev, 256, &p->scq) || iw_listen(p->dev, "127.0.0.1", 0, &p->l) ||
        iw_qp_create(p->dev, p->pd, p->ccq, &s, &p->client) ||
        iw_qp_create(p->dev, p->pd, p->scq, srv ? srv : &s, &p->server))
        return false;
    if (iw_qp_connect(p->client, "127.0.0.1", iw_listener_port(p->l)))
        return false;
    int rc = IW_ERR_NEED_MORE;
    for (int i = 0; i < WAIT_MS / 10 && rc == IW_ERR_NEED_MORE; i++) {
        rc = iw_accept(p->l, p->server);
        if (rc == IW_ERR_NEED_MORE)
            iw_dev_progress(p->dev, 10);
    }
    return rc == 0;
}

IW_TEST(sctp_available) {
    CHECK(iw_transport_available(IW_TRANSPORT_TCP));
    CHECK(iw_transport_available(IW_TRANSPORT_SCTP));
    iw_transport t;
    CHECK_EQ(iw_transport_parse("sctp", &t), 0);
    CHECK_EQ(t, IW_TRANSPORT_SCTP);
    CHECK_EQ(iw_transport_parse("tcp", &t), 0);
    CHECK_EQ(t, IW_TRANSPORT_TCP);
    CHECK_EQ(iw_transport_parse("SCTP ", &t), IW_ERR_INVALID_ARG);
    CHECK_EQ(iw_transport_parse(NULL, &t), IW_ERR_INVALID_ARG);
    iw_dev *d;
    CHECK_EQ(iw_dev_open_transport(&d, (iw_transport)7), IW_ERR_INVALID_ARG);
    /* Two devices share usrsctp; it stops with the last one. */
    iw_dev *a, *b;
    REQUIRE(iw_dev_open_transport(&a, IW_TRANSPORT_SCTP) == 0);
    REQUIRE(iw_dev_open_transport(&b, IW_TRANSPORT_SCTP) == 0);
    CHECK_EQ(iw_dev_transport(a), IW_TRANSPORT_SCTP);
    iw_dev_close(a);
    iw_listener *l;
    CHECK_EQ(iw_listen(b, "127.0.0.1", 0, &l), 0);
    CHECK_EQ(iw_listen(b, "localhost", 0, &l), IW_ERR_INVALID_ARG);
    iw_dev_close(b);
}

IW_TEST(sctp_connect) {
    pair p;
    REQUIRE(pair_open(&p, NULL));
    iw_wc c, s;
    REQUIRE(wait_for(p.ccq, &seen_client, IW_EV_CONNECTED, &c));
    REQUIRE(wait_for(p.scq, &seen_server, IW_EV_CONNECTED, &s));
    CHECK_EQ(c.ev.status, IW_WC_SUCCESS);
    /* RFC 5043: no markers and no MPA CRC (SCTP's CRC32c covers chunks). */
    CHECK(!c.ev.info->crc);
    CHECK(!c.ev.info->markers_rx && !c.ev.info->markers_tx);
    CHECK_EQ(c.ev.info->mpa_rev, 2);
    iw_sctp_conn_stats cs, ss;
    CHECK_EQ(iw_qp_sctp_stats(p.client, &cs), 0);
    CHECK_EQ(iw_qp_sctp_stats(p.server, &ss), 0);
    /* The Initiate and the Accept, one each way. */
    CHECK_EQ(cs.chunks_tx, 1);
    CHECK_EQ(ss.chunks_rx, 1);
    CHECK_EQ(ss.chunks_tx, 1);
    CHECK(!cs.term_tx && !cs.term_rx);
    CHECK_EQ(iw_listener_pending(p.l), 0);
    iw_listener_stats ls;
    iw_listener_get_stats(p.l, &ls);
    CHECK_EQ(ls.accepted, 1);
    iw_dev_close(p.dev);
}

IW_TEST(sctp_reject) {
    iw_conn_settings srv;
    iw_conn_settings_default(&srv, IW_ROLE_RESPONDER);
    srv.reject = true;
    pair p;
    REQUIRE(pair_open(&p, &srv));
    CHECK(wait_for(p.ccq, &seen_client, IW_EV_REJECTED, NULL));
    CHECK(wait_for(p.scq, &seen_server, IW_EV_REJECTED, NULL));
    CHECK(!(seen_client & (1u << IW_EV_CONNECTED)));
    /* §6.3: a Reject ends the session; no Session Terminate either way. */
    for (int i = 0; i < 20; i++)
        iw_dev_progress(p.dev, 10);
    iw_sctp_conn_stats cs, ss;
    iw_qp_sctp_stats(p.client, &cs);
    iw_qp_sctp_stats(p.server, &ss);
    CHECK(!cs.term_tx && !cs.term_rx && !ss.term_tx && !ss.term_rx);
    iw_dev_close(p.dev);
}

static void fill(uint8_t *b, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)(i * 131 + seed + (i >> 8));
}

IW_TEST(sctp_round_trip) {
    pair p;
    REQUIRE(pair_open(&p, NULL));
    /* The listener goes right after accept (iwarp-perf does): the QP keeps
     * its association, and the UDP socket under it. */
    iw_listener_close(p.l);
    static uint8_t region[262144], sink[65536], recv_s[256], recv_c[8192];
    uint32_t region_stag, sink_stag;
    REQUIRE(iw_mr_reg(iw_dev_rnic(p.dev), p.pd, region, sizeof region, (uintptr_t)region,
                      IW_ACCESS_REMOTE_READ | IW_ACCESS_REMOTE_WRITE, &region_stag) == 0);
    REQUIRE(iw_mr_reg(iw_dev_rnic(p.dev), p.pd, sink, sizeof sink, (uintptr_t)sink,
                      IW_ACCESS_LOCAL_WRITE | IW_ACCESS_REMOTE_WRITE, &sink_stag) == 0);
    REQUIRE(iw_qp_post_recv(p.server, 100, recv_s, sizeof recv_s) == 0);
    REQUIRE(iw_qp_post_recv(p.client, 200, recv_c, sizeof recv_c) == 0);
    REQUIRE(wait_for(p.ccq, &seen_client, IW_EV_CONNECTED, NULL));
    REQUIRE(wait_for(p.scq, &seen_server, IW_EV_CONNECTED, NULL));

    static const char msg[] = "hello over SCTP";
    iw_send_wr send = {.op = IW_WR_SEND, .wr_id = 1, .data = msg, .len = sizeof msg};
    REQUIRE(iw_qp_post_send(p.client, &send) == 0);
    iw_wc r;
    REQUIRE(wait_for(p.scq, &seen_server, IW_EV_RECV, &r));
    CHECK_EQ(r.ev.wr_id, 100);
    CHECK_EQ(r.ev.len, sizeof msg);
    CHECK_MEM(recv_s, msg, sizeof msg);
    CHECK(wait_for(p.ccq, &seen_client, IW_EV_SEND_DONE, NULL));

    /* A Write of many DDP segments (max 1450 octets each, §9), at an odd
     * offset, then a Read of part of it back. */
    static uint8_t src[100001];
    fill(src, sizeof src, 7);
    iw_send_wr wr = {.op = IW_WR_WRITE,
                     .wr_id = 2,
                     .data = src,
                     .len = sizeof src,
                     .remote_stag = region_stag,
                     .remote_to = (uintptr_t)region + 3};
    REQUIRE(iw_qp_post_send(p.client, &wr) == 0);
    REQUIRE(wait_for(p.ccq, &seen_client, IW_EV_WRITE_DONE, NULL));
    iw_send_wr rd = {.op = IW_WR_READ,
                     .wr_id = 3,
                     .len = sizeof sink,
                     .remote_stag = region_stag,
                     .remote_to = (uintptr_t)region + 3 + 1000,
                     .local_stag = sink_stag,
                     .local_to = (uintptr_t)sink};
    REQUIRE(iw_qp_post_send(p.client, &rd) == 0);
    iw_wc rdw;
    REQUIRE(wait_for(p.ccq, &seen_client, IW_EV_READ_DONE, &rdw));
    CHECK_EQ(rdw.ev.status, IW_WC_SUCCESS);
    CHECK_MEM(region + 3, src, sizeof src);
    CHECK_MEM(sink, src + 1000, sizeof sink);
    CHECK_EQ(region[2], 0);
    CHECK_EQ(region[3 + sizeof src], 0);

    /* And a Send the other way, larger than one segment. */
    static uint8_t big[5000];
    fill(big, sizeof big, 99);
    iw_send_wr back = {.op = IW_WR_SEND, .wr_id = 4, .data = big, .len = sizeof big};
    REQUIRE(iw_qp_post_send(p.server, &back) == 0);
    iw_wc rc;
    REQUIRE(wait_for(p.ccq, &seen_client, IW_EV_RECV, &rc));
    CHECK_EQ(rc.ev.len, sizeof big);
    CHECK_MEM(recv_c, big, sizeof big);

    iw_conn_stats st;
    iw_qp_get_stats(p.server, &st);
    CHECK(st.bytes_placed >= sizeof src);
    CHECK_EQ(st.payload_copies, 0);
    iw_sctp_conn_stats ss;
    iw_qp_sctp_stats(p.server, &ss);
    /* 100001 octets in segments of at most 1450 less the headers. */
    CHECK(ss.chunks_rx > sizeof src / IW_SCTP_MAX_SEG_DEFAULT);
    iw_dev_close(p.dev);
}

IW_TEST(sctp_close) {
    pair p;
    REQUIRE(pair_open(&p, NULL));
    REQUIRE(wait_for(p.ccq, &seen_client, IW_EV_CONNECTED, NULL));
    REQUIRE(wait_for(p.scq, &seen_server, IW_EV_CONNECTED, NULL));
    static uint8_t buf[64];
    REQUIRE(iw_qp_post_recv(p.server, 5, buf, sizeof buf) == 0);
    REQUIRE(iw_qp_close(p.client) == 0);
    iw_wc cc, sc;
    CHECK(wait_for(p.ccq, &seen_client, IW_EV_CLOSED, &cc));
    CHECK(wait_for(p.scq, &seen_server, IW_EV_CLOSED, &sc));
    /* The posted receive is flushed on the server. */
    CHECK(seen_server & (1u << IW_EV_RECV));
    iw_sctp_conn_stats cs, ss;
    iw_qp_sctp_stats(p.client, &cs);
    iw_qp_sctp_stats(p.server, &ss);
    /* §6.2: the closing side's Session Terminate; one side suffices. */
    CHECK(cs.term_tx);
    CHECK(ss.term_rx);
    CHECK(!ss.term_tx);
    /* Posting after the close is refused by the engine. */
    iw_send_wr send = {.op = IW_WR_SEND, .wr_id = 9, .data = buf, .len = 4};
    CHECK(iw_qp_post_send(p.client, &send) < 0);
    iw_dev_close(p.dev);
}

/* Datagrams that are not SCTP packets, or are broken ones, reach the
 * listener's UDP socket: usrsctp drops them (length, CRC32c: RFC 4960
 * §6.8), the listener makes no association of them, and a real client
 * still gets in afterwards. */
IW_TEST(sctp_garbage_datagrams) {
    pair p;
    memset(&p, 0, sizeof p);
    REQUIRE(iw_dev_open_transport(&p.dev, IW_TRANSPORT_SCTP) == 0);
    REQUIRE(iw_listen(p.dev, "127.0.0.1", 0, &p.l) == 0);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    REQUIRE(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(iw_listener_port(p.l))};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    uint8_t b[2048];
    unsigned x = 12345;
    for (int i = 0; i < 300; i++) {
        size_t n = (size_t)(i % 40) * 37 % sizeof b; /* 0 .. 1443, some under a header */
        for (size_t k = 0; k < n; k++)
            b[k] = (uint8_t)((x = x * 1103515245u + 12345u) >> 16);
        if (i % 3 == 0 && n >= 16) {
            /* ports of the listener, a zero tag and an INIT chunk type:
             * only the CRC32c is wrong */
            b[0] = 0x30, b[1] = 0x39;
            b[2] = (uint8_t)(iw_listener_port(p.l) >> 8), b[3] = (uint8_t)iw_listener_port(p.l);
            memset(b + 4, 0, 4);
            b[12] = 1;
        }
        sendto(fd, b, n, 0, (struct sockaddr *)&a, sizeof a);
        if (i % 50 == 0)
            iw_dev_progress(p.dev, 0);
    }
    close(fd);
    for (int i = 0; i < 20; i++)
        iw_dev_progress(p.dev, 5);
    iw_listener_stats ls;
    iw_listener_get_stats(p.l, &ls);
    CHECK_EQ(ls.accepted, 0);
    CHECK_EQ(iw_listener_pending(p.l), 0);
    /* And the listener still works. */
    iw_conn_settings s;
    iw_conn_settings_default(&s, IW_ROLE_INITIATOR);
    REQUIRE(iw_pd_alloc(iw_dev_rnic(p.dev), &p.pd) == 0 && iw_cq_create(p.dev, 64, &p.ccq) == 0 &&
            iw_cq_create(p.dev, 64, &p.scq) == 0 &&
            iw_qp_create(p.dev, p.pd, p.ccq, &s, &p.client) == 0 &&
            iw_qp_create(p.dev, p.pd, p.scq, &s, &p.server) == 0);
    REQUIRE(iw_qp_connect(p.client, "127.0.0.1", iw_listener_port(p.l)) == 0);
    int rc = IW_ERR_NEED_MORE;
    for (int i = 0; i < WAIT_MS / 10 && rc == IW_ERR_NEED_MORE; i++) {
        rc = iw_accept(p.l, p.server);
        if (rc == IW_ERR_NEED_MORE)
            iw_dev_progress(p.dev, 10);
    }
    CHECK_EQ(rc, 0);
    seen_client = seen_server = 0;
    CHECK(wait_for(p.ccq, &seen_client, IW_EV_CONNECTED, NULL));
    CHECK(wait_for(p.scq, &seen_server, IW_EV_CONNECTED, NULL));
    iw_dev_close(p.dev);
}

/* Poll cq for an event of type while progressing two devices. */
static bool wait2(iw_dev *a, iw_dev *b, iw_cq *cq, iw_event_type type, iw_wc *out) {
    for (int i = 0; i < WAIT_MS / 2; i++) {
        iw_dev_progress(a, 1);
        iw_dev_progress(b, 1);
        iw_wc wc;
        while (iw_cq_poll(cq, &wc, 1) == 1)
            if (wc.ev.type == type) {
                if (out)
                    *out = wc;
                return true;
            }
    }
    return false;
}

/* Client and server in two devices (sharing usrsctp), over IPv6: the
 * segment size follows the family (RFC 5043 §9 with a 40-octet header). */
IW_TEST(sctp_ipv6_two_devices) {
    iw_dev *ds, *dc;
    uint32_t ps, pc;
    iw_cq *cs, *cc;
    iw_listener *l;
    iw_qp *srv, *cli;
    iw_conn_settings s;
    iw_conn_settings_default(&s, IW_ROLE_INITIATOR);
    REQUIRE(iw_dev_open_transport(&ds, IW_TRANSPORT_SCTP) == 0);
    REQUIRE(iw_dev_open_transport(&dc, IW_TRANSPORT_SCTP) == 0);
    REQUIRE(iw_pd_alloc(iw_dev_rnic(ds), &ps) == 0 && iw_pd_alloc(iw_dev_rnic(dc), &pc) == 0);
    REQUIRE(iw_cq_create(ds, 64, &cs) == 0 && iw_cq_create(dc, 64, &cc) == 0);
    REQUIRE(iw_listen(ds, "::1", 0, &l) == 0);
    REQUIRE(iw_qp_create(ds, ps, cs, &s, &srv) == 0 && iw_qp_create(dc, pc, cc, &s, &cli) == 0);
    REQUIRE(iw_qp_connect(cli, "::1", iw_listener_port(l)) == 0);
    int rc = IW_ERR_NEED_MORE;
    for (int i = 0; i < WAIT_MS / 2 && rc == IW_ERR_NEED_MORE; i++) {
        iw_dev_progress(dc, 1);
        iw_dev_progress(ds, 1);
        rc = iw_accept(l, srv);
    }
    REQUIRE(rc == 0);
    static uint8_t rbuf[8192];
    REQUIRE(iw_qp_post_recv(srv, 1, rbuf, sizeof rbuf) == 0);
    iw_wc c;
    REQUIRE(wait2(ds, dc, cc, IW_EV_CONNECTED, &c));
    CHECK_EQ(c.ev.info->mulpdu, 1406);
    static uint8_t msg[8000];
    fill(msg, sizeof msg, 3);
    iw_send_wr send = {.op = IW_WR_SEND, .wr_id = 2, .data = msg, .len = sizeof msg};
    REQUIRE(iw_qp_post_send(cli, &send) == 0);
    iw_wc r;
    REQUIRE(wait2(ds, dc, cs, IW_EV_RECV, &r));
    CHECK_EQ(r.ev.len, sizeof msg);
    CHECK_MEM(rbuf, msg, sizeof msg);
    /* Closing the server's device aborts its association: the client's
     * QP sees its LLP go (RFC 5043 §11.3). */
    iw_dev_close(ds);
    bool closed = false;
    for (int i = 0; i < WAIT_MS / 10 && !closed; i++) {
        iw_wc wc;
        if (iw_cq_wait(cc, &wc, 1, 10) == 1)
            closed = wc.ev.type == IW_EV_CLOSED;
    }
    CHECK(closed);
    iw_dev_close(dc);
}

/* An association the client aborts before the server accepts it leaves
 * the pending list at once (peer_closed), not at its deadline. */
IW_TEST(sctp_pending_peer_aborts) {
    iw_dev *d;
    uint32_t pd;
    iw_cq *cq;
    iw_listener *l;
    iw_qp *c;
    iw_conn_settings s;
    iw_conn_settings_default(&s, IW_ROLE_INITIATOR);
    REQUIRE(iw_dev_open_transport(&d, IW_TRANSPORT_SCTP) == 0);
    REQUIRE(iw_pd_alloc(iw_dev_rnic(d), &pd) == 0 && iw_cq_create(d, 16, &cq) == 0 &&
            iw_qp_create(d, pd, cq, &s, &c) == 0 && iw_listen(d, "127.0.0.1", 0, &l) == 0);
    REQUIRE(iw_qp_connect(c, "127.0.0.1", iw_listener_port(l)) == 0);
    for (int i = 0; i < WAIT_MS / 10 && iw_listener_pending(l) == 0; i++)
        iw_dev_progress(d, 10);
    REQUIRE(iw_listener_pending(l) == 1);
    iw_qp_destroy(c); /* an ABORT to the server */
    for (int i = 0; i < WAIT_MS / 10 && iw_listener_pending(l) == 1; i++)
        iw_dev_progress(d, 10);
    CHECK_EQ(iw_listener_pending(l), 0);
    iw_listener_stats ls;
    iw_listener_get_stats(l, &ls);
    CHECK_EQ(ls.accepted, 1);
    CHECK_EQ(ls.peer_closed, 1);
    CHECK_EQ(ls.timed_out, 0);
    iw_dev_close(d);
}

/* A UDP port on loopback that nothing listens on. */
static uint16_t dead_port(void) {
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &al) < 0)
        return 0;
    close(fd);
    return ntohs(a.sin_port);
}

IW_TEST(sctp_refused) {
    iw_dev *d;
    uint32_t pd;
    iw_cq *cq;
    iw_qp *q;
    iw_conn_settings s;
    iw_conn_settings_default(&s, IW_ROLE_INITIATOR);
    REQUIRE(iw_dev_open_transport(&d, IW_TRANSPORT_SCTP) == 0);
    REQUIRE(iw_pd_alloc(iw_dev_rnic(d), &pd) == 0 && iw_cq_create(d, 16, &cq) == 0 &&
            iw_qp_create(d, pd, cq, &s, &q) == 0);
    uint16_t port = dead_port();
    REQUIRE(port != 0);
    CHECK_EQ(iw_qp_connect(q, "127.0.0.1", 0), IW_ERR_INVALID_ARG);
    CHECK_EQ(iw_qp_connect(q, "not-an-address", port), IW_ERR_INVALID_ARG);
    REQUIRE(iw_qp_connect(q, "127.0.0.1", port) == 0);
    seen_client = 0;
    CHECK(wait_for(cq, &seen_client, IW_EV_CLOSED, NULL));
    CHECK(!(seen_client & (1u << IW_EV_CONNECTED)));
    iw_dev_close(d);
}

/* ---- a raw SCTP peer in a child process, with its own usrsctp ---- */

static int rp_fd = -1;
static struct sockaddr_storage rp_peer;
static socklen_t rp_peer_len;

static int rp_output(void *addr, void *buf, size_t len, uint8_t tos, uint8_t set_df) {
    (void)addr, (void)tos, (void)set_df;
    if (rp_peer_len)
        sendto(rp_fd, buf, len, MSG_DONTWAIT, (struct sockaddr *)&rp_peer, rp_peer_len);
    return 0;
}

enum {
    RP_OK = 0,
    RP_ADAPT_MISSING = 11,
    RP_BAD_INITIATE = 12,
    RP_NOT_TERMINATE = 13,
    RP_NOT_ABORTED = 14,
    RP_DATA_WITHOUT_ADAPT = 15,
    RP_TIMEOUT = 20,
    RP_SETUP = 21
};

static int rp_send(struct socket *so, uint32_t ppid, const uint8_t *b, size_t n) {
    struct sctp_sndinfo si;
    memset(&si, 0, sizeof si);
    si.snd_ppid = htonl(ppid);
    return usrsctp_sendv(so, b, n, NULL, 0, &si, sizeof si, SCTP_SENDV_SNDINFO, 0) < 0 ? -1 : 0;
}

/* What the raw peer does after the Initiate. */
typedef enum rp_mode {
    RP_MALFORMED, /* an Accept, then a DDP Segment chunk too short for its DDP-SSN */
    RP_EARLY_SEG, /* a well-formed DDP Segment instead of the Accept (§6.2) */
    RP_NO_ADAPT   /* no DDP indication in the INIT-ACK: must get no DATA at all */
} rp_mode;

/* RP_MALFORMED, RP_EARLY_SEG: expect a Session Terminate back. RP_NO_ADAPT:
 * expect the association aborted before any DATA. */
static int raw_peer(uint16_t port, rp_mode mode) {
    bool malformed = mode != RP_NO_ADAPT;
    usrsctp_init_nothreads(0, rp_output, NULL);
    usrsctp_register_address(&rp_fd);
    struct socket *ls = usrsctp_socket(AF_CONN, SOCK_STREAM, IPPROTO_SCTP, NULL, NULL, 0, NULL);
    if (!ls)
        return RP_SETUP;
    usrsctp_set_non_blocking(ls, 1);
    int on = 1;
    usrsctp_setsockopt(ls, IPPROTO_SCTP, SCTP_RECVRCVINFO, &on, sizeof on);
    if (malformed) {
        struct sctp_setadaptation ad = {.ssb_adaptation_ind = IW_SCTP_ADAPT_DDP};
        usrsctp_setsockopt(ls, IPPROTO_SCTP, SCTP_ADAPTATION_LAYER, &ad, sizeof ad);
    }
    const uint16_t evs[] = {SCTP_ASSOC_CHANGE, SCTP_ADAPTATION_INDICATION};
    for (int i = 0; i < 2; i++) {
        struct sctp_event ev = {.se_assoc_id = SCTP_FUTURE_ASSOC, .se_type = evs[i], .se_on = 1};
        usrsctp_setsockopt(ls, IPPROTO_SCTP, SCTP_EVENT, &ev, sizeof ev);
    }
    struct sockaddr_conn a;
    memset(&a, 0, sizeof a);
    a.sconn_family = AF_CONN;
    a.sconn_port = htons(port);
    a.sconn_addr = &rp_fd;
    if (usrsctp_bind(ls, (struct sockaddr *)&a, sizeof a) < 0 || usrsctp_listen(ls, 1) < 0)
        return RP_SETUP;
    struct socket *so = NULL;
    bool adapt = false, accepted = false;
    int result = RP_TIMEOUT;
    static uint8_t dgram[65536];
    for (int tick = 0; tick < WAIT_MS / 5 && result == RP_TIMEOUT; tick++) {
        struct pollfd pf = {.fd = rp_fd, .events = POLLIN};
        if (poll(&pf, 1, 5) > 0) {
            rp_peer_len = sizeof rp_peer;
            ssize_t n =
                recvfrom(rp_fd, dgram, sizeof dgram, 0, (struct sockaddr *)&rp_peer, &rp_peer_len);
            if (n > 0)
                usrsctp_conninput(&rp_fd, dgram, (size_t)n, 0);
        }
        usrsctp_handle_timers(5);
        if (!so && (so = usrsctp_accept(ls, NULL, NULL)))
            usrsctp_set_non_blocking(so, 1);
        while (so && result == RP_TIMEOUT) {
            uint8_t m[2048];
            struct sctp_rcvinfo ri;
            socklen_t il = sizeof ri;
            unsigned it = 0;
            int flags = 0;
            ssize_t r = usrsctp_recvv(so, m, sizeof m, NULL, NULL, &ri, &il, &it, &flags);
            if (r <= 0)
                break;
            if (flags & MSG_NOTIFICATION) {
                union sctp_notification *nt = (union sctp_notification *)(void *)m;
                if (nt->sn_header.sn_type == SCTP_ADAPTATION_INDICATION)
                    adapt = nt->sn_adaptation_event.sai_adaptation_ind == IW_SCTP_ADAPT_DDP;
                if (nt->sn_header.sn_type == SCTP_ASSOC_CHANGE &&
                    nt->sn_assoc_change.sac_state == SCTP_COMM_LOST)
                    result = malformed ? RP_NOT_TERMINATE : RP_OK;
                continue;
            }
            if (!malformed) {
                result = RP_DATA_WITHOUT_ADAPT;
                break;
            }
            if (!adapt) { /* our peer's INIT had no DDP indication (§5.1) */
                result = RP_ADAPT_MISSING;
                break;
            }
            iw_sctp_ctrl c;
            iw_sctp_problem why;
            if (ntohl(ri.rcv_ppid) != IW_SCTP_PPID_DDP_CONTROL ||
                iw_sctp_ctrl_decode(&c, m, (size_t)r, &why) < 0) {
                result = accepted ? RP_NOT_TERMINATE : RP_BAD_INITIATE;
                break;
            }
            if (!accepted) {
                if (c.fc != IW_SCTP_FC_INITIATE && c.fc != IW_SCTP_FC_ENH_INITIATE) {
                    result = RP_BAD_INITIATE;
                    break;
                }
                iw_sctp_ctrl acc = {0};
                acc.ssn = 0;
                acc.fc = c.enhanced ? IW_SCTP_FC_ENH_ACCEPT : IW_SCTP_FC_ACCEPT;
                acc.v2 = c.v2;
                uint8_t out[64];
                iw_ssize k = iw_sctp_ctrl_encode(out, sizeof out, &acc);
                /* DDP-SSN 1 would follow; one octet is not even a DDP-SSN. */
                static const uint8_t bad[1] = {0};
                /* DDP-SSN 0, then an untagged DDP header (RFC 5041 §4.3:
                 * L=1, DV=1, RDMAP Send, QN 0, MSN 1, MO 0) and 4 octets. */
                static const uint8_t early[] = {0, 0, 0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0,
                                                0, 0, 0,    1,    0, 0, 0, 0, 1, 2, 3, 4};
                bool ok = k >= 0;
                if (ok && mode == RP_MALFORMED)
                    ok = !rp_send(so, IW_SCTP_PPID_DDP_CONTROL, out, (size_t)k) &&
                         !rp_send(so, IW_SCTP_PPID_DDP_SEGMENT, bad, sizeof bad);
                else if (ok)
                    ok = !rp_send(so, IW_SCTP_PPID_DDP_SEGMENT, early, sizeof early);
                if (!ok) {
                    result = RP_SETUP;
                    break;
                }
                accepted = true;
                continue;
            }
            result = c.fc == IW_SCTP_FC_TERMINATE && c.ssn == 1 ? RP_OK : RP_NOT_TERMINATE;
        }
    }
    if (so)
        usrsctp_close(so);
    usrsctp_close(ls);
    for (int i = 0; i < 100 && usrsctp_finish() != 0; i++)
        usrsctp_handle_timers(10);
    return result;
}

/* Runs raw_peer in a child on a fresh UDP port; returns its pid, *port. */
static pid_t raw_peer_start(rp_mode mode, uint16_t *port) {
    rp_fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    if (rp_fd < 0 || bind(rp_fd, (struct sockaddr *)&a, sizeof a) < 0 ||
        getsockname(rp_fd, (struct sockaddr *)&a, &al) < 0)
        return -1;
    *port = ntohs(a.sin_port);
    pid_t pid = fork();
    if (pid == 0)
        _exit(raw_peer(*port, mode));
    close(rp_fd);
    return pid;
}

/* The child's verdict, while our side keeps answering it. */
static int raw_peer_wait(iw_dev *d, pid_t pid) {
    int st = 0;
    for (int i = 0; i < WAIT_MS / 10; i++) {
        if (waitpid(pid, &st, WNOHANG) == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
        iw_dev_progress(d, 10);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return -1;
}

/* A raw client that sets up the association (with the DDP indication)
 * and then says nothing: the passive side's session times out and the
 * association must end with SCTP's SHUTDOWN, not linger. The listener's
 * port comes through a pipe: usrsctp starts in this process only after
 * the parent's fork. */
static int raw_silent_client(int port_pipe) {
    uint16_t port = 0;
    if (read(port_pipe, &port, sizeof port) != (ssize_t)sizeof port)
        return RP_SETUP;
    rp_fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in me = {.sin_family = AF_INET};
    me.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t ml = sizeof me;
    if (rp_fd < 0 || bind(rp_fd, (struct sockaddr *)&me, sizeof me) < 0 ||
        getsockname(rp_fd, (struct sockaddr *)&me, &ml) < 0)
        return RP_SETUP;
    struct sockaddr_in *to = (struct sockaddr_in *)&rp_peer;
    memset(&rp_peer, 0, sizeof rp_peer);
    to->sin_family = AF_INET;
    to->sin_port = htons(port);
    to->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    rp_peer_len = sizeof *to;
    usrsctp_init_nothreads(0, rp_output, NULL);
    usrsctp_register_address(&rp_fd);
    struct socket *so = usrsctp_socket(AF_CONN, SOCK_STREAM, IPPROTO_SCTP, NULL, NULL, 0, NULL);
    if (!so)
        return RP_SETUP;
    usrsctp_set_non_blocking(so, 1);
    struct sctp_setadaptation ad = {.ssb_adaptation_ind = IW_SCTP_ADAPT_DDP};
    usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_ADAPTATION_LAYER, &ad, sizeof ad);
    const uint16_t evs[] = {SCTP_ASSOC_CHANGE, SCTP_SHUTDOWN_EVENT};
    for (int i = 0; i < 2; i++) {
        struct sctp_event ev = {.se_assoc_id = SCTP_FUTURE_ASSOC, .se_type = evs[i], .se_on = 1};
        usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_EVENT, &ev, sizeof ev);
    }
    struct sockaddr_conn a;
    memset(&a, 0, sizeof a);
    a.sconn_family = AF_CONN;
    a.sconn_port = me.sin_port;
    a.sconn_addr = &rp_fd;
    if (usrsctp_bind(so, (struct sockaddr *)&a, sizeof a) < 0)
        return RP_SETUP;
    a.sconn_port = htons(port);
    if (usrsctp_connect(so, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS)
        return RP_SETUP;
    bool up = false;
    int result = RP_TIMEOUT;
    static uint8_t dgram[65536];
    for (int tick = 0; tick < WAIT_MS / 5 && result == RP_TIMEOUT; tick++) {
        struct pollfd pf = {.fd = rp_fd, .events = POLLIN};
        if (poll(&pf, 1, 5) > 0) {
            ssize_t n = recv(rp_fd, dgram, sizeof dgram, 0);
            if (n > 0)
                usrsctp_conninput(&rp_fd, dgram, (size_t)n, 0);
        }
        usrsctp_handle_timers(5);
        for (;;) {
            uint8_t m[2048];
            int flags = 0;
            ssize_t r = usrsctp_recvv(so, m, sizeof m, NULL, NULL, NULL, NULL, NULL, &flags);
            if (r < 0)
                break;
            if (!(flags & MSG_NOTIFICATION)) {
                /* 0: the association shut down; anything else: DATA */
                result = r == 0 && up ? RP_OK : RP_NOT_ABORTED;
                break;
            }
            union sctp_notification *nt = (union sctp_notification *)(void *)m;
            if (nt->sn_header.sn_type == SCTP_SHUTDOWN_EVENT)
                result = up ? RP_OK : RP_NOT_ABORTED;
            else if (nt->sn_header.sn_type == SCTP_ASSOC_CHANGE) {
                uint16_t st = nt->sn_assoc_change.sac_state;
                if (st == SCTP_COMM_UP)
                    up = true;
                else /* aborted, or lost: not the graceful end wanted */
                    result = st == SCTP_SHUTDOWN_COMP && up ? RP_OK : RP_NOT_ABORTED;
            }
            if (result != RP_TIMEOUT)
                break;
        }
    }
    usrsctp_close(so);
    for (int i = 0; i < 100 && usrsctp_finish() != 0; i++)
        usrsctp_handle_timers(10);
    return result;
}

IW_TEST(sctp_silent_peer_gets_shutdown) {
    int pp[2];
    REQUIRE(pipe(pp) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(pp[1]);
        _exit(raw_silent_client(pp[0]));
    }
    close(pp[0]);
    REQUIRE(pid > 0);
    iw_dev *d;
    uint32_t pd;
    iw_cq *cq;
    iw_listener *l;
    iw_qp *q;
    iw_conn_settings s;
    iw_conn_settings_default(&s, IW_ROLE_RESPONDER);
    s.mpa_timeout = 300 * 1000000ull; /* the Initiate must come within 300 ms */
    REQUIRE(iw_dev_open_transport(&d, IW_TRANSPORT_SCTP) == 0);
    REQUIRE(iw_pd_alloc(iw_dev_rnic(d), &pd) == 0 && iw_cq_create(d, 16, &cq) == 0 &&
            iw_qp_create(d, pd, cq, &s, &q) == 0 && iw_listen(d, "127.0.0.1", 0, &l) == 0);
    uint16_t port = iw_listener_port(l);
    REQUIRE(write(pp[1], &port, sizeof port) == (ssize_t)sizeof port);
    close(pp[1]);
    int rc = IW_ERR_NEED_MORE;
    for (int i = 0; i < WAIT_MS / 10 && rc == IW_ERR_NEED_MORE; i++) {
        rc = iw_accept(l, q);
        if (rc == IW_ERR_NEED_MORE)
            iw_dev_progress(d, 10);
    }
    CHECK_EQ(rc, 0);
    seen_server = 0;
    CHECK(wait_for(cq, &seen_server, IW_EV_CLOSED, NULL));
    CHECK(!(seen_server & (1u << IW_EV_CONNECTED)));
    iw_sctp_conn_stats st;
    CHECK_EQ(iw_qp_sctp_stats(q, &st), 0);
    CHECK(!st.term_tx); /* no session began: nothing to terminate */
    CHECK_EQ(raw_peer_wait(d, pid), RP_OK);
    iw_dev_close(d);
}

static void client_to(uint16_t port, iw_dev **d, iw_cq **cq, iw_qp **q) {
    uint32_t pd;
    iw_conn_settings s;
    iw_conn_settings_default(&s, IW_ROLE_INITIATOR);
    *q = NULL;
    if (iw_dev_open_transport(d, IW_TRANSPORT_SCTP) || iw_pd_alloc(iw_dev_rnic(*d), &pd) ||
        iw_cq_create(*d, 16, cq) || iw_qp_create(*d, pd, *cq, &s, q) ||
        iw_qp_connect(*q, "127.0.0.1", port))
        *q = NULL;
}

IW_TEST(sctp_malformed_chunk_gets_terminate) {
    /* usrsctp is process-wide: the child starts its own before ours. */
    uint16_t port;
    pid_t pid = raw_peer_start(RP_MALFORMED, &port);
    REQUIRE(pid > 0);
    iw_dev *d;
    iw_cq *cq;
    iw_qp *q;
    client_to(port, &d, &cq, &q);
    REQUIRE(q != NULL);
    seen_client = 0;
    CHECK(wait_for(cq, &seen_client, IW_EV_CONNECTED, NULL));
    CHECK(wait_for(cq, &seen_client, IW_EV_CLOSED, NULL));
    iw_sctp_conn_stats st;
    CHECK_EQ(iw_qp_sctp_stats(q, &st), 0);
    CHECK(st.term_tx);
    /* The child checks it got the Terminate, with the next DDP-SSN. */
    CHECK_EQ(raw_peer_wait(d, pid), RP_OK);
    iw_dev_close(d);
}

IW_TEST(sctp_segment_before_accept_gets_terminate) {
    uint16_t port;
    pid_t pid = raw_peer_start(RP_EARLY_SEG, &port);
    REQUIRE(pid > 0);
    iw_dev *d;
    iw_cq *cq;
    iw_qp *q;
    client_to(port, &d, &cq, &q);
    REQUIRE(q != NULL);
    seen_client = 0;
    /* §6.2: DDP Segments follow the Accept: never connected, terminated. */
    CHECK(wait_for(cq, &seen_client, IW_EV_CLOSED, NULL));
    CHECK(!(seen_client & (1u << IW_EV_CONNECTED)));
    iw_sctp_conn_stats st;
    CHECK_EQ(iw_qp_sctp_stats(q, &st), 0);
    CHECK(st.term_tx);
    CHECK_EQ(raw_peer_wait(d, pid), RP_OK);
    iw_dev_close(d);
}

IW_TEST(sctp_peer_without_ddp_indication) {
    uint16_t port;
    pid_t pid = raw_peer_start(RP_NO_ADAPT, &port);
    REQUIRE(pid > 0);
    iw_dev *d;
    iw_cq *cq;
    iw_qp *q;
    client_to(port, &d, &cq, &q);
    REQUIRE(q != NULL);
    seen_client = 0;
    /* §11.1: no DDP on this association: the QP closes unconnected. */
    CHECK(wait_for(cq, &seen_client, IW_EV_CLOSED, NULL));
    CHECK(!(seen_client & (1u << IW_EV_CONNECTED)));
    iw_sctp_conn_stats st;
    CHECK_EQ(iw_qp_sctp_stats(q, &st), 0);
    CHECK_EQ(st.chunks_tx, 0);
    CHECK_EQ(raw_peer_wait(d, pid), RP_OK);
    iw_dev_close(d);
}

IW_TEST_MAIN("iw_verbs_sctp", IW_CASE(sctp_available), IW_CASE(sctp_connect), IW_CASE(sctp_reject),
             IW_CASE(sctp_round_trip), IW_CASE(sctp_close), IW_CASE(sctp_garbage_datagrams),
             IW_CASE(sctp_ipv6_two_devices), IW_CASE(sctp_pending_peer_aborts),
             IW_CASE(sctp_refused), IW_CASE(sctp_malformed_chunk_gets_terminate),
             IW_CASE(sctp_segment_before_accept_gets_terminate),
             IW_CASE(sctp_peer_without_ddp_indication), IW_CASE(sctp_silent_peer_gets_shutdown))
