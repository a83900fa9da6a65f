/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Allocation failure through iw_mem (nghttp2's failmalloc_test): a whole
 * exchange between two engines is run once to count its allocations, then
 * again with allocation k failing, for every k. Whatever fails must fail
 * with IW_ERR_NOMEM (never a crash, a wrong code or silent loss), and
 * everything must still be freed: under ASan a leak fails the run.
 *
 * The codecs, the deframer (iw_deframer) and the capture analysis
 * (iw_shadow) never allocate: their state is caller-owned and fixed in
 * size, so the RNIC and its connections are all there is to inject into. */
#include <iwarp/iwarp.h>

#include <stdlib.h>
#include <string.h>

#include "iw_test.h"

typedef struct failmem {
    long n;       /* allocations so far */
    long fail_at; /* this one fails (1-based; 0: none) */
    long failed;
    long live; /* blocks not yet freed */
} failmem;

static bool fm_fail(failmem *f) {
    f->n++;
    if (f->fail_at && f->n == f->fail_at) {
        f->failed++;
        return true;
    }
    return false;
}
static void *fm_malloc(size_t n, void *u) {
    failmem *f = u;
    if (fm_fail(f))
        return NULL;
    void *p = malloc(n);
    f->live += p != NULL;
    return p;
}
static void *fm_calloc(size_t n, size_t s, void *u) {
    failmem *f = u;
    if (fm_fail(f))
        return NULL;
    void *p = calloc(n, s);
    f->live += p != NULL;
    return p;
}
static void *fm_realloc(void *p, size_t n, void *u) {
    failmem *f = u;
    if (fm_fail(f))
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

typedef struct side {
    iw_conn *c;
    int recvs, sends, writes, reads, closed;
    iw_wc_status worst;
} side;

static int on_event(iw_conn *c, const iw_event *ev, void *user) {
    (void)c;
    side *s = user;
    if (ev->status != IW_WC_SUCCESS)
        s->worst = ev->status;
    s->recvs += ev->type == IW_EV_RECV;
    s->sends += ev->type == IW_EV_SEND_DONE;
    s->writes += ev->type == IW_EV_WRITE_DONE;
    s->reads += ev->type == IW_EV_READ_DONE;
    s->closed += ev->type == IW_EV_CLOSED;
    return 0;
}
static const iw_callbacks cb = {IW_CALLBACKS_V1, on_event};

/* Move octets from a to b; an error is returned as is. */
static int move(iw_conn *a, iw_conn *b) {
    uint8_t buf[8192];
    for (;;) {
        iw_ssize n = iw_conn_write(a, buf, sizeof buf, 0);
        if (n <= 0)
            return (int)n;
        iw_ssize r = iw_conn_recv(b, buf, (size_t)n, 0);
        if (r < 0)
            return (int)r;
    }
}

#define OK_OR_NOMEM(expr)                                                                          \
    do {                                                                                           \
        int rc_ = (int)(expr);                                                                     \
        if (rc_ != 0) {                                                                            \
            CHECK_EQ(rc_, IW_ERR_NOMEM);                                                           \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)

/* One exchange: RNIC, PD, regions, two connections, then Sends, Writes and
 * Reads both ways. Returns true when it completed. */
static bool run(failmem *f) {
    const iw_mem mem = {f, fm_malloc, fm_free, fm_calloc, fm_realloc};
    static uint8_t reg_a[65536], reg_b[65536], rbuf[16][512], src[65536];
    iw_rnic *r = NULL;
    side a = {0}, b = {0};
    bool done = false;
    uint32_t pd, st_a, st_b;
    OK_OR_NOMEM(iw_rnic_new(&r, &mem));
    OK_OR_NOMEM(iw_pd_alloc(r, &pd));
    OK_OR_NOMEM(iw_mr_reg(r, pd, reg_a, sizeof reg_a, 0,
                          IW_ACCESS_LOCAL_WRITE | IW_ACCESS_REMOTE_READ | IW_ACCESS_REMOTE_WRITE,
                          &st_a));
    OK_OR_NOMEM(iw_mr_reg(r, pd, reg_b, sizeof reg_b, 0,
                          IW_ACCESS_LOCAL_WRITE | IW_ACCESS_REMOTE_READ | IW_ACCESS_REMOTE_WRITE,
                          &st_b));
    iw_conn_settings si, sr;
    iw_conn_settings_default(&si, IW_ROLE_INITIATOR);
    iw_conn_settings_default(&sr, IW_ROLE_RESPONDER);
    si.p2p = sr.p2p = true; /* an RTR, and its ORD entry, are allocated too */
    OK_OR_NOMEM(iw_conn_new(&a.c, r, pd, &si, &cb, &a));
    OK_OR_NOMEM(iw_conn_new(&b.c, r, pd, &sr, &cb, &b));
    for (int i = 0; i < 16; i++) /* more than a ring's first block */
        OK_OR_NOMEM(iw_conn_post_recv(i & 1 ? a.c : b.c, (uint64_t)i, rbuf[i], 512));
    OK_OR_NOMEM(iw_conn_start(b.c, 0));
    OK_OR_NOMEM(iw_conn_start(a.c, 0));
    for (int round = 0; round < 4; round++) {
        OK_OR_NOMEM(move(a.c, b.c));
        OK_OR_NOMEM(move(b.c, a.c));
    }
    for (int i = 0; i < 20; i++) {
        iw_conn *from = i & 1 ? b.c : a.c;
        uint32_t peer = i & 1 ? st_a : st_b, mine = i & 1 ? st_b : st_a;
        iw_send_wr w = {.op = IW_WR_WRITE,
                        .wr_id = 100u + (unsigned)i,
                        .data = src,
                        .len = 3000,
                        .remote_stag = peer,
                        .remote_to = 4096};
        iw_send_wr rd = {.op = IW_WR_READ,
                         .wr_id = 200u + (unsigned)i,
                         .len = 2000,
                         .local_stag = mine,
                         .local_to = 8192,
                         .remote_stag = peer,
                         .remote_to = 0};
        iw_send_wr s = {.op = IW_WR_SEND, .wr_id = 300u + (unsigned)i, .data = src, .len = 100};
        OK_OR_NOMEM(iw_conn_post_send(from, &w));
        OK_OR_NOMEM(iw_conn_post_send(from, &rd));
        if (i < 14)
            OK_OR_NOMEM(iw_conn_post_send(from, &s));
    }
    for (int round = 0; round < 40; round++) {
        OK_OR_NOMEM(move(a.c, b.c));
        OK_OR_NOMEM(move(b.c, a.c));
    }
    CHECK_EQ(a.writes + b.writes, 20);
    CHECK_EQ(a.reads + b.reads, 20);
    CHECK_EQ(a.sends + b.sends, 14);
    CHECK_EQ(a.recvs + b.recvs, 14);
    CHECK_EQ(a.worst, IW_WC_SUCCESS);
    CHECK_EQ(b.worst, IW_WC_SUCCESS);
    OK_OR_NOMEM(iw_conn_close(a.c, 0));
    OK_OR_NOMEM(move(a.c, b.c));
    done = true;
out:
    iw_conn_del(a.c);
    iw_conn_del(b.c);
    iw_rnic_del(r);
    return done;
}

IW_TEST(every_allocation_fails_once) {
    failmem f = {0};
    REQUIRE(run(&f));
    long total = f.n;
    CHECK(total > 10); /* the rings grow: there is something to inject */
    CHECK_EQ(f.live, 0);
    long completed = 0;
    for (long k = 1; k <= total; k++) {
        failmem g = {.fail_at = k};
        completed += run(&g);
        CHECK_EQ(g.failed, 1); /* the same run reached allocation k */
        CHECK_EQ(g.live, 0);   /* and freed everything it had */
    }
    /* Each failure surfaced as IW_ERR_NOMEM and stopped the exchange. */
    CHECK_EQ(completed, 0);
    printf("  %ld allocations, each failed once in its own run\n", total);
}

IW_TEST_MAIN("iw_failmalloc", IW_CASE(every_allocation_fails_once))
