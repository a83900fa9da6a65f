/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwd_tcp: one direction's reassembly. Each case feeds segments and checks
 * the events: in-order runs, out-of-order placement, retransmissions (whole
 * and partial), conflicting overlaps, gaps (end of capture, RST, peer ACK,
 * snap length, buffer cap) and delivery resuming after them, sequence wrap,
 * SYN and FIN accounting. */
#include "iwd_tcp.h"

#include "iw_test.h"

#define MAX_EV 256
#define STREAM_MAX (1u << 20)

typedef struct rec {
    iwd_tcp_ev ev[MAX_EV];
    size_t nev;
    uint8_t out[STREAM_MAX]; /* delivered octets, by offset */
    uint64_t out_len;
    bool out_gap; /* DATA ever skipped an offset no GAP accounted for */
    unsigned data, ooo, conflict, gap, end;
    iwd_tcp_ev end_ev; /* the last END and CONFLICT, kept even when ev[] is full */
    iwd_tcp_ev conflict_ev;
} rec;

static rec R;

static void on_ev(void *ctx, const iwd_tcp_ev *e) {
    rec *r = ctx;
    if (r->nev < MAX_EV)
        r->ev[r->nev++] = *e;
    switch (e->type) {
    case IWD_TCP_DATA:
        r->data++;
        if (e->off != r->out_len)
            r->out_gap = true;
        if (e->off + e->len <= STREAM_MAX)
            memcpy(r->out + e->off, e->data, e->len);
        r->out_len = e->off + e->len;
        break;
    case IWD_TCP_OOO:
        r->ooo++;
        break;
    case IWD_TCP_CONFLICT:
        r->conflict++;
        r->conflict_ev = *e;
        break;
    case IWD_TCP_GAP:
        r->gap++;
        if (e->off != r->out_len)
            r->out_gap = true;
        r->out_len = e->off + e->len; /* delivery resumes past the hole */
        break;
    case IWD_TCP_END:
        r->end++;
        r->end_ev = *e;
        break;
    }
}

static iwd_tcp *start(size_t cap) {
    static iwd_tcp t;
    memset(&R, 0, sizeof R);
    iwd_tcp_init(&t, cap, on_ev, &R);
    return &t;
}

static uint64_t frame_no;

static void seg_full(iwd_tcp *t, uint32_t seq, const uint8_t *p, size_t n, size_t wire, bool syn,
                     bool fin, bool rst) {
    iwd_tcp_seg s = {0};
    s.seq = seq;
    s.data = p;
    s.len = n;
    s.wire_len = wire;
    s.syn = syn;
    s.fin = fin;
    s.rst = rst;
    s.frame = ++frame_no;
    s.ts.sec = 1;
    s.ts.nsec = (uint32_t)frame_no;
    iwd_tcp_segment(t, &s);
}

static void seg(iwd_tcp *t, uint32_t seq, const uint8_t *p, size_t n) {
    seg_full(t, seq, p, n, n, false, false, false);
}

static void syn(iwd_tcp *t, uint32_t isn) { seg_full(t, isn, NULL, 0, 0, true, false, false); }
static void fin(iwd_tcp *t, uint32_t seq) { seg_full(t, seq, NULL, 0, 0, false, true, false); }
static void rst(iwd_tcp *t, uint32_t seq) { seg_full(t, seq, NULL, 0, 0, false, false, true); }

static uint8_t src[STREAM_MAX];

static void fill_src(void) {
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)(i * 131 + (i >> 8));
}

static const iwd_tcp_ev *find(iwd_tcp_ev_type type, unsigned nth) {
    for (size_t i = 0; i < R.nev; i++)
        if (R.ev[i].type == type && nth-- == 0)
            return &R.ev[i];
    return NULL;
}

IW_TEST(test_in_order_after_syn) {
    fill_src();
    iwd_tcp *t = start(IWD_TCP_OOO_CAP_DEFAULT);
    syn(t, 1000);
    seg(t, 1001, src, 100);
    seg(t, 1101, src + 100, 50);
    CHECK(t->syn_seen);
    CHECK_EQ(t->base_seq, 1001);
    CHECK_EQ(R.data, 2);
    CHECK_EQ(R.out_len, 150);
    CHECK_MEM(R.out, src, 150);
    const iwd_tcp_ev *e = find(IWD_TCP_DATA, 1);
    REQUIRE(e);
    CHECK_EQ(e->off, 100);
    CHECK_EQ(e->seq, 1101);
    CHECK_EQ(e->frame, frame_no);
    CHECK_EQ(R.ooo + R.conflict + R.gap, 0);
    iwd_tcp_finish(t);
    CHECK_EQ(R.end, 1);
    CHECK_EQ(find(IWD_TCP_END, 0)->cause, IWD_END_CAPTURE);
    iwd_tcp_free(t);
}

IW_TEST(test_out_of_order) {
    fill_src();
    iwd_tcp *t = start(IWD_TCP_OOO_CAP_DEFAULT);
    syn(t, 5);
    seg(t, 6 + 100, src + 100, 100); /* ahead of the hole */
    seg(t, 6 + 200, src + 200, 100); /* the same hole: counted, no event */
    CHECK_EQ(R.data, 0);
    CHECK_EQ(R.ooo, 1);
    CHECK_EQ(t->stats.ooo, 2);
    const iwd_tcp_ev *o = find(IWD_TCP_OOO, 0);
    REQUIRE(o);
    CHECK_EQ(o->off, 100);
    CHECK_EQ(o->len, 100);
    CHECK_EQ(o->expected, 0);
    seg(t, 6, src, 100); /* fills the hole: all three in order */
    CHECK_EQ(R.out_len, 300);
    CHECK(!R.out_gap);
    CHECK_MEM(R.out, src, 300);
    /* The held octets keep the frame they came in. */
    const iwd_tcp_ev *d = find(IWD_TCP_DATA, 1);
    REQUIRE(d);
    CHECK_EQ(d->off, 100);
    CHECK_EQ(d->frame, frame_no - 2);
    iwd_tcp_finish(t);
    CHECK_EQ(R.gap, 0);
    iwd_tcp_free(t);
}

IW_TEST(test_retransmission_dropped) {
    fill_src();
    iwd_tcp *t = start(IWD_TCP_OOO_CAP_DEFAULT);
    syn(t, 0);
    seg(t, 1, src, 100);
    seg(t, 1, src, 100);           /* whole retransmission */
    seg(t, 1 + 50, src + 50, 100); /* half old, half new */
    seg(t, 1 + 20, src + 20, 10);  /* inside delivered data */
    CHECK_EQ(R.out_len, 150);
    CHECK_MEM(R.out, src, 150);
    CHECK_EQ(R.conflict, 0);
    CHECK_EQ(t->stats.retrans, 100 + 50 + 10);
    CHECK_EQ(t->stats.unchecked, 0);
    iwd_tcp_free(t);
}

IW_TEST(test_partial_overlap_out_of_order) {
    fill_src();
    iwd_tcp *t = start(IWD_TCP_OOO_CAP_DEFAULT);
    syn(t, 0);
    seg(t, 1 + 100, src + 100, 50); /* held [100,150) */
    seg(t, 1 + 120, src + 120, 60); /* overlaps its tail, adds [150,180) */
    seg(t, 1 + 90, src + 90, 20);   /* overlaps its head, adds [90,100) */
    seg(t, 1 + 170, src + 170, 30); /* adds [180,200) */
    CHECK_EQ(R.data, 0);
    seg(t, 1, src, 90);
    CHECK_EQ(R.out_len, 200);
    CHECK(!R.out_gap);
    CHECK_MEM(R.out, src, 200);
    CHECK_EQ(R.conflict, 0);
    CHECK_EQ(t->stats.retrans, 30 + 10 + 10);
    iwd_tcp_free(t);
}

IW_TEST(test_conflict_with_delivered) {
    fill_src();
    iwd_tcp *t = start(IWD_TCP_OOO_CAP_DEFAULT);
    syn(t, 0);
    seg(t, 1, src, 100);
    uint8_t alt[60];
    memcpy(alt, src + 70, sizeof alt);
    alt[5] ^= 0xFF; /* offsets 75 and 79 differ */
    alt[9] ^= 0x01;
    seg(t, 1 + 70, alt, sizeof alt); /* [70,100) old, [100,130) new */
    CHECK_EQ(R.conflict, 1);
    const iwd_tcp_ev *c = find(IWD_TCP_CONFLICT, 0);
    REQUIRE(c);
    CHECK_EQ(c->off, 75);
    CHECK_EQ(c->len, 5);
    CHECK_EQ(c->differ, 2);
    CHECK_EQ(c->frame, frame_no);
    CHECK_EQ(R.out_len, 130);
    CHECK_MEM(R.out, src, 130); /* the first copy was kept */
    iwd_tcp_free(t);
}

IW_TEST(test_conflict_with_held) {
    fill_src();
    iwd_tcp *t = start(IWD_TCP_OOO_CAP_DEFAULT);
    syn(t, 0);
    seg(t, 1 + 100, src + 100, 50);
    uint8_t alt[50];
    memcpy(alt, src + 120, sizeof alt);
    alt[0] ^= 0x80;  /* offset 120 */
    alt[40] ^= 0x80; /* offset 160: a new octet, nothing to compare */
    seg(t, 1 + 120, alt, sizeof alt);
    CHECK_EQ(R.conflict, 1);
    const iwd_tcp_ev *c = find(IWD_TCP_CONFLICT, 0);
    REQUIRE(c);
    CHECK_EQ(c->off, 120);
    CHECK_EQ(c->len, 1);
    CHECK_EQ(c->differ, 1);
    seg(t, 1, src, 100);
    CHECK_EQ(R.out_len, 170);
    CHECK_MEM(R.out, src, 160);
    CHECK_EQ(R.out[160], src[160] ^ 0x80); /* [150,170) came only in the second copy */
    iwd_tcp_free(t);
}

IW_TEST(test_gap_at_capture_end) {
    fill_src();
    iwd_tcp *t = start(IWD_TCP_OOO_CAP_DEFAULT);
    syn(t, 77);
    seg(t, 78, src, 100);
    seg(t, 78 + 150, src + 150, 40); /* [100,150) never comes */
    uint64_t held_frame = frame_no;
    seg(t, 78 + 190, src + 190, 10);
    CHECK_EQ(R.out_len, 100);
    iwd_tcp_finish(t);
    CHECK_EQ(R.gap, 1);
    const iwd_tcp_ev *g = find(IWD_TCP_GAP, 0);
    REQUIRE(g);
    CHECK_EQ(g->off, 100);
    CHECK_EQ(g->seq, 178);
    CHECK_EQ(g->len, 50);
    CHECK_EQ(g->held, 50);
    CHECK_EQ(g->cause, IWD_GAP_CAPTURE_END);
    CHECK_EQ(g->frame, held_frame);
    CHECK(strcmp(iwd_gap_cause_str(g->cause), "capture_end") == 0);
    /* What was held past the hole is delivered after it, then the end. */
    CHECK_EQ(R.out_len, 200);
    CHECK(!R.out_gap);
    CHECK_MEM(R.out + 150, src + 150, 50);
    CHECK_EQ(t->stats.missing, 50);
    const iwd_tcp_ev *e = find(IWD_TCP_END, 0);
    REQUIRE(e);
    CHECK_EQ(e->cause, IWD_END_CAPTURE);
    CHECK_EQ(R.ev[R.nev - 1].type, IWD_TCP_END);
    /* Nothing more after the end. */
    seg(t, 78 + 100, src + 100, 50);
    CHECK_EQ(R.out_len, 200);
    CHECK_EQ(R.end, 1);
    iwd_tcp_free(t);
}

IW_TEST(test_gap_acked_by_peer) {
    fill_src();
    iwd_tcp *t = start(IWD_TCP_OOO_CAP_DEFAULT);
    syn(t, 0);
    seg(t, 1, src, 10);
    seg(t, 1 + 20, src + 20, 10);
    iwd_tcp_peer_ack(t, 1 + 10); /* acknowledges only what was delivered */
    CHECK_EQ(R.gap, 0);
    iwd_tcp_peer_ack(t, 1 + 30); /* [10,20) reached the peer but not the capture */
    CHECK_EQ(R.gap, 1);
    const iwd_tcp_ev *g = find(IWD_TCP_GAP, 0);
    REQUIRE(g);
    CHECK_EQ(g->cause, IWD_GAP_ACKED);
    CHECK_EQ(g->off, 10);
    CHECK_EQ(g->len, 10);
    /* The direction goes on: held octets, then new ones. */
    CHECK(!t->ended);
    CHECK_EQ(R.out_len, 30);
    seg(t, 1 + 30, src + 30, 10);
    CHECK_EQ(R.out_len, 40);
    CHECK(!R.out_gap);
    CHECK_MEM(R.out + 20, src + 20, 20);
    /* An ACK inside a hole makes only the part below it final. */
    seg(t, 1 + 60, src + 60, 10);
    iwd_tcp_peer_ack(t, 1 + 50);
    CHECK_EQ(R.gap, 2);
    g = find(IWD_TCP_GAP, 1);
    REQUIRE(g);
    CHECK_EQ(g->off, 40);
    CHECK_EQ(g->len, 10);
    CHECK_EQ(R.out_len, 50);
    seg(t, 1 + 50, src + 50, 10); /* [50,60) was not acknowledged: it may still come */
    CHECK_EQ(R.out_len, 70);
    CHECK(!R.out_gap);
    CHECK_EQ(R.gap, 2);
    iwd_tcp_free(t);
}

IW_TEST(test_gap_rst) {
    fill_src();
    iwd_tcp *t = start(IWD_TCP_OOO_CAP_DEFAULT);
    syn(t, 0);
    seg(t, 1, src, 10);
    seg(t, 1 + 20, src + 20, 10);
    rst(t, 31);
    CHECK_EQ(R.gap, 1);
    CHECK_EQ(find(IWD_TCP_GAP, 0)->cause, IWD_GAP_RST);
    CHECK_EQ(find(IWD_TCP_GAP, 0)->frame, frame_no - 1); /* the first segment past the hole */
    CHECK_EQ(R.out_len, 30);                             /* what was held past it still arrives */
    CHECK(!R.out_gap);
    CHECK_EQ(R.end, 1);
    CHECK_EQ(find(IWD_TCP_END, 0)->cause, IWD_END_RST);
    iwd_tcp_free(t);

    t = start(IWD_TCP_OOO_CAP_DEFAULT);
    syn(t, 0);
    seg(t, 1, src, 10);
    rst(t, 11);
    CHECK_EQ(R.gap, 0);
    CHECK_EQ(R.end, 1);
    CHECK_EQ(find(IWD_TCP_END, 0)->cause, IWD_END_RST);
    iwd_tcp_free(t);
}

IW_TEST(test_buffer_limit) {
    fill_src();
    iwd_tcp *t = start(4096);
    syn(t, 0);
    seg(t, 1 + 1000, src + 1000, 1000);
    seg(t, 1 + 2000, src + 2000, 1000);
    seg(t, 1 + 3000, src + 3000, 1000);
    CHECK_EQ(R.gap, 0);
    seg(t, 1 + 4000, src + 4000, 1000); /* 4000 held + overhead > 4096 */
    CHECK_EQ(R.gap, 1);
    const iwd_tcp_ev *g = find(IWD_TCP_GAP, 0);
    REQUIRE(g);
    CHECK_EQ(g->cause, IWD_GAP_BUFFER_LIMIT);
    CHECK_EQ(g->off, 0);
    CHECK_EQ(g->len, 1000);
    CHECK_EQ(g->held, 3000);
    /* Delivery resumed at the first held octet, the new segment included. */
    CHECK(!t->ended);
    CHECK_EQ(R.out_len, 5000);
    CHECK(!R.out_gap);
    CHECK_MEM(R.out + 1000, src + 1000, 4000);
    /* A segment ahead of the held ones ends the hole at itself. */
    seg(t, 1 + 7000, src + 7000, 1000);
    seg(t, 1 + 9000, src + 9000, 1000);
    seg(t, 1 + 11000, src + 11000, 1000);
    seg(t, 1 + 5500, src + 5500, 1000); /* 3000 held + overhead + 1000 > 4096 */
    CHECK_EQ(R.gap, 2);
    g = find(IWD_TCP_GAP, 1);
    REQUIRE(g);
    CHECK_EQ(g->off, 5000);
    CHECK_EQ(g->len, 500);
    CHECK_EQ(R.out_len, 6500);
    CHECK(!R.out_gap);
    CHECK_MEM(R.out + 5500, src + 5500, 1000);
    iwd_tcp_free(t);
}

IW_TEST(test_snaplen) {
    fill_src();
    iwd_tcp *t = start(IWD_TCP_OOO_CAP_DEFAULT);
    syn(t, 0);
    seg_full(t, 1, src, 40, 100, false, false, false); /* 60 octets not captured */
    seg(t, 1 + 100, src + 100, 100);
    CHECK_EQ(R.out_len, 40);
    iwd_tcp_finish(t);
    CHECK_EQ(R.out_len, 200); /* the segment past the cut, after the gap */
    CHECK(!R.out_gap);
    const iwd_tcp_ev *g = find(IWD_TCP_GAP, 0);
    REQUIRE(g);
    CHECK_EQ(g->cause, IWD_GAP_SNAPLEN);
    CHECK_EQ(g->off, 40);
    CHECK_EQ(g->len, 60);
    CHECK_EQ(g->held, 100);
    iwd_tcp_free(t);

    /* Cut with nothing after it: the missing tail is still a gap. */
    t = start(IWD_TCP_OOO_CAP_DEFAULT);
    syn(t, 0);
    seg_full(t, 1, src, 40, 100, false, false, false);
    iwd_tcp_finish(t);
    g = find(IWD_TCP_GAP, 0);
    REQUIRE(g);
    CHECK_EQ(g->cause, IWD_GAP_SNAPLEN);
    CHECK_EQ(g->len, 60);
    CHECK_EQ(g->held, 0);
    iwd_tcp_free(t);
}

IW_TEST(test_sequence_wrap) {
    fill_src();
    iwd_tcp *t = start(IWD_TCP_OOO_CAP_DEFAULT);
    uint32_t isn = 0xFFFFFFF0u;
    syn(t, isn); /* offset 0 at 0xFFFFFFF1; octet 15 has sequence 0 */
    seg(t, isn + 1, src, 10);
    seg(t, isn + 1 + 30, src + 30, 20); /* past the wrap, ahead of the hole */
    seg(t, isn + 1 + 10, src + 10, 20); /* straddles the wrap, fills the hole */
    CHECK_EQ(R.out_len, 50);
    CHECK(!R.out_gap);
    CHECK_MEM(R.out, src, 50);
    const iwd_tcp_ev *o = find(IWD_TCP_OOO, 0);
    REQUIRE(o);
    CHECK_EQ(o->off, 30);
    CHECK_EQ(o->seq, 0x0000000Fu);
    /* A retransmission from before the wrap is recognised as old. */
    seg(t, isn + 1 + 5, src + 5, 10);
    CHECK_EQ(R.out_len, 50);
    CHECK_EQ(R.conflict, 0);
    fin(t, isn + 1 + 50);
    CHECK_EQ(find(IWD_TCP_END, 0)->cause, IWD_END_FIN);
    iwd_tcp_free(t);
}

IW_TEST(test_fin) {
    fill_src();
    iwd_tcp *t = start(IWD_TCP_OOO_CAP_DEFAULT);
    syn(t, 100);
    seg(t, 101, src, 10);
    fin(t, 101 + 20); /* FIN ahead of [10,20) */
    CHECK_EQ(R.end, 0);
    seg(t, 101 + 10, src + 10, 10);
    CHECK_EQ(R.end, 1);
    CHECK_EQ(find(IWD_TCP_END, 0)->cause, IWD_END_FIN);
    CHECK_EQ(R.out_len, 20);
    iwd_tcp_free(t);
    /* Data with the FIN flag, and octets after the FIN are not data. */
    t = start(IWD_TCP_OOO_CAP_DEFAULT);
    syn(t, 0);
    seg_full(t, 1, src, 10, 10, false, true, false);
    CHECK_EQ(R.out_len, 10);
    CHECK_EQ(R.end, 1);
    seg(t, 11, src + 10, 10);
    CHECK_EQ(R.out_len, 10);
    iwd_tcp_free(t);
    /* A FIN with data missing before it, at the end of the capture. */
    t = start(IWD_TCP_OOO_CAP_DEFAULT);
    syn(t, 0);
    seg(t, 1, src, 10);
    fin(t, 1 + 30);
    iwd_tcp_finish(t);
    const iwd_tcp_ev *g = find(IWD_TCP_GAP, 0);
    REQUIRE(g);
    CHECK_EQ(g->off, 10);
    CHECK_EQ(g->len, 20);
    iwd_tcp_free(t);
}

IW_TEST(test_midstream_and_keepalive) {
    fill_src();
    iwd_tcp *t = start(IWD_TCP_OOO_CAP_DEFAULT);
    seg(t, 0x10000, NULL, 0); /* a bare ACK fixes nothing */
    CHECK(!t->started);
    seg(t, 0x20000, src, 50); /* no SYN: the first payload octet is offset 0 */
    CHECK(t->started);
    CHECK(!t->syn_seen);
    CHECK_EQ(R.out_len, 50);
    uint8_t ka = 0;
    seg(t, 0x20000 + 49, &ka, 1); /* keep-alive probe: ignored, not a conflict */
    CHECK_EQ(R.conflict, 0);
    CHECK_EQ(t->stats.keepalives, 1);
    uint8_t early[20];
    memset(early, 0xEE, 10);
    memcpy(early + 10, src, 10);
    seg(t, 0x20000 - 10, early, 20); /* [-10,0) is before the start: cannot be compared */
    CHECK_EQ(t->stats.unchecked, 10);
    CHECK_EQ(t->stats.retrans, 20);
    CHECK_EQ(R.conflict, 0);
    CHECK_EQ(R.out_len, 50);
    iwd_tcp_free(t);
}

IW_TEST(test_history_window) {
    static uint8_t big[IWD_TCP_HISTORY_MAX + 10000];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)(i * 7 + 3);
    iwd_tcp *t = start(IWD_TCP_OOO_CAP_DEFAULT);
    syn(t, 0);
    for (size_t o = 0; o < sizeof big; o += 1000) {
        size_t n = sizeof big - o < 1000 ? sizeof big - o : 1000;
        seg(t, 1 + (uint32_t)o, big + o, n);
    }
    CHECK_EQ(t->nxt, sizeof big);
    /* A recent retransmission with one octet changed: caught. */
    uint8_t alt[100];
    memcpy(alt, big + sizeof big - 100, 100);
    alt[50] ^= 1;
    seg(t, 1 + (uint32_t)(sizeof big - 100), alt, 100);
    CHECK_EQ(R.conflict, 1);
    CHECK_EQ(R.conflict_ev.off, sizeof big - 50);
    /* One older than the history: dropped unchecked. */
    seg(t, 1, alt, 100);
    CHECK_EQ(R.conflict, 1);
    CHECK_EQ(t->stats.unchecked, 100);
    iwd_tcp_free(t);
}

/* Random cuts, reordering within a window and duplicates always give the
 * original stream back, with no conflict or gap. */
IW_TEST(test_random_reassembly) {
    fill_src();
    uint64_t seed = 42;
    for (int round = 0; round < 50; round++) {
        iwd_tcp *t = start(IWD_TCP_OOO_CAP_DEFAULT);
        uint32_t isn = (uint32_t)iw_test_rand(&seed);
        size_t total = 1000 + (size_t)(iw_test_rand(&seed) % 60000);
        typedef struct {
            uint32_t off, len;
        } piece;
        static piece pieces[4096];
        size_t np = 0;
        for (size_t o = 0; o < total && np < 4000;) {
            size_t n = 1 + (size_t)(iw_test_rand(&seed) % 1500);
            if (n > total - o)
                n = total - o;
            pieces[np].off = (uint32_t)o;
            pieces[np++].len = (uint32_t)n;
            o += n;
            if (np == 4000)
                total = o;
        }
        /* Shuffle within windows of 8, then duplicate some pieces with
         * shifted bounds (partial overlaps). */
        for (size_t i = 0; i + 1 < np; i++) {
            size_t j = i + (size_t)(iw_test_rand(&seed) % 8);
            if (j >= np)
                j = np - 1;
            piece tmp = pieces[i];
            pieces[i] = pieces[j];
            pieces[j] = tmp;
        }
        syn(t, isn);
        for (size_t i = 0; i < np; i++) {
            seg(t, isn + 1 + pieces[i].off, src + pieces[i].off, pieces[i].len);
            if (iw_test_rand(&seed) % 5 == 0) {
                uint32_t a = pieces[i].off + (uint32_t)(iw_test_rand(&seed) % pieces[i].len);
                uint32_t n = 1 + (uint32_t)(iw_test_rand(&seed) % 3000);
                if (a + n > total)
                    n = (uint32_t)total - a;
                seg(t, isn + 1 + a, src + a, n);
            }
        }
        fin(t, isn + 1 + (uint32_t)total);
        iwd_tcp_finish(t);
        CHECK_EQ(R.out_len, total);
        CHECK(!R.out_gap);
        CHECK(memcmp(R.out, src, total) == 0);
        CHECK_EQ(R.conflict, 0);
        CHECK_EQ(R.gap, 0);
        CHECK_EQ(R.end, 1);
        CHECK_EQ(R.end_ev.cause, IWD_END_FIN);
        iwd_tcp_free(t);
    }
}

IW_TEST_MAIN("iwd_tcp", IW_CASE(test_in_order_after_syn), IW_CASE(test_out_of_order),
             IW_CASE(test_retransmission_dropped), IW_CASE(test_partial_overlap_out_of_order),
             IW_CASE(test_conflict_with_delivered), IW_CASE(test_conflict_with_held),
             IW_CASE(test_gap_at_capture_end), IW_CASE(test_gap_acked_by_peer),
             IW_CASE(test_gap_rst), IW_CASE(test_buffer_limit), IW_CASE(test_snaplen),
             IW_CASE(test_sequence_wrap), IW_CASE(test_fin), IW_CASE(test_midstream_and_keepalive),
             IW_CASE(test_history_window), IW_CASE(test_random_reassembly))
