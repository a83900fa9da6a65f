/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a callback may do (engine.h, iw_callbacks): post sends and receive
 * buffers, register and deregister memory, close; and what it may not:
 * move bytes or time, which the engine refuses with IW_ERR_INVALID_ARG
 * instead of corrupting the stream it is in the middle of. Two engines
 * play ping-pong where every message after the first is posted from inside
 * a callback, under ASan in CI. */
#include <iwarp/iwarp.h>

#include <stdlib.h>
#include <string.h>

#include "iw_test.h"

#define ROUNDS 300
#define NBUF 4

typedef struct side {
    const char *name;
    iw_rnic *rnic;
    uint32_t pd;
    iw_conn *c;
    uint8_t rbuf[NBUF][64];
    uint64_t next_wr;
    int recvs, sends, reads, refused, callbacks, closed;
    uint32_t last_seq;
    bool out_of_order, bad_status;
    uint8_t sink[64];
    uint32_t sink_stag, peer_src_stag;
    int ev_after_closed;
} side;

static int posted_ping(side *s, uint32_t seq) {
    uint8_t msg[8];
    memcpy(msg, &seq, sizeof seq);
    memcpy(msg + 4, "ping", 4);
    /* The payload must outlive the call: a static ring of them. */
    static uint8_t store[2][NBUF * 2][8];
    uint8_t *p = store[s->name[0] == 'b'][seq % (NBUF * 2)];
    memcpy(p, msg, sizeof msg);
    iw_send_wr w = {.op = IW_WR_SEND, .wr_id = ++s->next_wr, .data = p, .len = sizeof msg};
    return iw_conn_post_send(s->c, &w);
}

/* Every entry point that moves bytes or time must refuse to run here. */
static void try_forbidden(side *s, iw_conn *c) {
    uint8_t b[16] = {0};
    iw_iovec v[4];
    int before = s->refused;
    s->refused += iw_conn_recv(c, b, sizeof b, 0) == IW_ERR_INVALID_ARG;
    s->refused += iw_conn_write(c, b, sizeof b, 0) == IW_ERR_INVALID_ARG;
    s->refused += iw_conn_rx_iov(c, v, 4) == IW_ERR_INVALID_ARG;
    s->refused += iw_conn_rx_commit(c, 0, 0) == IW_ERR_INVALID_ARG;
    s->refused += iw_conn_tx_iov(c, v, 4) == IW_ERR_INVALID_ARG;
    s->refused += iw_conn_tx_commit(c, 0, 0) == IW_ERR_INVALID_ARG;
    s->refused += iw_conn_rx_eof(c, 0) == IW_ERR_INVALID_ARG;
    s->refused += iw_conn_handle_expiry(c, UINT64_MAX) == IW_ERR_INVALID_ARG;
    s->refused += iw_conn_start(c, 0) == IW_ERR_INVALID_ARG;
    CHECK_EQ(s->refused - before, 9);
}

static int on_event(iw_conn *c, const iw_event *ev, void *user) {
    side *s = user;
    s->callbacks++;
    if (s->closed)
        s->ev_after_closed++;
    try_forbidden(s, c);
    /* Memory registered and withdrawn from inside a callback. */
    uint8_t tmp[32];
    uint32_t st;
    CHECK_EQ(iw_mr_reg(s->rnic, s->pd, tmp, sizeof tmp, 0, IW_ACCESS_REMOTE_READ, &st), 0);
    CHECK_EQ(iw_mr_dereg(s->rnic, st), 0);
    if (ev->status != IW_WC_SUCCESS && ev->type != IW_EV_CLOSED)
        s->bad_status = ev->status != IW_WC_FLUSHED;
    switch (ev->type) {
    case IW_EV_RECV: {
        if (ev->status != IW_WC_SUCCESS)
            break;
        s->recvs++;
        uint32_t seq;
        memcpy(&seq, s->rbuf[ev->wr_id], sizeof seq);
        /* The two sides take turns: each sees every other number. */
        if (seq != (s->last_seq ? s->last_seq + 2 : seq) || (seq & 1) != (s->name[0] == 'b'))
            s->out_of_order = true;
        s->last_seq = seq;
        CHECK_EQ(iw_conn_post_recv(c, ev->wr_id, s->rbuf[ev->wr_id], 64), 0);
        if (seq < ROUNDS)
            CHECK_EQ(posted_ping(s, seq + 1), 0);
        if (seq % 50 == 0 && seq < ROUNDS) { /* a Read of the peer's region, from here too */
            iw_send_wr r = {.op = IW_WR_READ,
                            .wr_id = ++s->next_wr,
                            .len = 16,
                            .local_stag = s->sink_stag,
                            .remote_stag = s->peer_src_stag};
            CHECK_EQ(iw_conn_post_send(c, &r), 0);
        }
        if (seq == ROUNDS) /* the last one: close from inside the callback */
            CHECK_EQ(iw_conn_close(c, 0), 0);
        break;
    }
    case IW_EV_SEND_DONE:
        s->sends++;
        break;
    case IW_EV_READ_DONE:
        s->reads += ev->status == IW_WC_SUCCESS;
        break;
    case IW_EV_CLOSED:
        s->closed++;
        break;
    default:
        break;
    }
    return 0;
}
static const iw_callbacks cb = {IW_CALLBACKS_V1, on_event};

static void pump(side *a, side *b) {
    uint8_t buf[4096];
    iw_ssize n;
    while ((n = iw_conn_write(a->c, buf, sizeof buf, 0)) > 0)
        CHECK_EQ(iw_conn_recv(b->c, buf, (size_t)n, 0), n);
    CHECK(n == 0);
}

IW_TEST(ping_pong_from_callbacks) {
    side a = {.name = "a"}, b = {.name = "b"};
    static uint8_t src_a[64], src_b[64];
    memset(src_a, 0xA1, sizeof src_a);
    memset(src_b, 0xB2, sizeof src_b);
    side *both[2] = {&a, &b};
    for (int i = 0; i < 2; i++) {
        side *s = both[i];
        REQUIRE(iw_rnic_new(&s->rnic, NULL) == 0 && iw_pd_alloc(s->rnic, &s->pd) == 0);
        REQUIRE(iw_mr_reg(s->rnic, s->pd, s->sink, sizeof s->sink, 0, IW_ACCESS_LOCAL_WRITE,
                          &s->sink_stag) == 0);
        iw_conn_settings st;
        iw_conn_settings_default(&st, i ? IW_ROLE_RESPONDER : IW_ROLE_INITIATOR);
        REQUIRE(iw_conn_new(&s->c, s->rnic, s->pd, &st, &cb, s) == 0);
        for (uint64_t k = 0; k < NBUF; k++)
            REQUIRE(iw_conn_post_recv(s->c, k, s->rbuf[k], 64) == 0);
    }
    uint32_t st_src;
    REQUIRE(iw_mr_reg(a.rnic, a.pd, src_a, sizeof src_a, 0, IW_ACCESS_REMOTE_READ, &st_src) == 0);
    b.peer_src_stag = st_src;
    REQUIRE(iw_mr_reg(b.rnic, b.pd, src_b, sizeof src_b, 0, IW_ACCESS_REMOTE_READ, &st_src) == 0);
    a.peer_src_stag = st_src;
    REQUIRE(iw_conn_start(b.c, 0) == 0 && iw_conn_start(a.c, 0) == 0);
    pump(&a, &b);
    pump(&b, &a);
    REQUIRE(posted_ping(&a, 1) == 0); /* the only message posted outside a callback */
    for (int i = 0; i < 4 * ROUNDS && !(a.closed || b.closed); i++) {
        pump(&a, &b);
        pump(&b, &a);
    }
    pump(&a, &b);
    pump(&b, &a);
    CHECK_EQ(a.recvs + b.recvs, ROUNDS);
    CHECK(!a.out_of_order && !b.out_of_order);
    CHECK(!a.bad_status && !b.bad_status);
    CHECK_EQ(a.reads + b.reads, ROUNDS / 50 - 1);
    for (int k = 0; k < 16; k++) /* the even numbers, and so the Reads, were a's */
        CHECK_EQ(a.sink[k], 0xB2);
    CHECK_EQ(a.closed + b.closed, 1); /* whoever got ping ROUNDS closed */
    CHECK_EQ(a.ev_after_closed + b.ev_after_closed, 0);
    CHECK_EQ(a.refused, 9 * a.callbacks);
    CHECK_EQ(b.refused, 9 * b.callbacks);
    CHECK(a.sends + b.sends >= ROUNDS - 1);
    for (int i = 0; i < 2; i++) {
        iw_conn_del(both[i]->c);
        iw_rnic_del(both[i]->rnic);
    }
}

IW_TEST_MAIN("iw_reentry", IW_CASE(ping_pong_from_callbacks))
