/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Memory protection outlives nothing: deregistration and invalidation
 * against work that still names the region (engine.h, iw_mr_dereg).
 *
 * RFC 5042 §6.2.2 and §6.3.3: once the ULP withdraws access to a buffer, no
 * packet may modify it and the Remote Peer may not retrieve its contents.
 * Every region here is its own heap block, freed the moment it is
 * deregistered, so under ASan any later read or write by the engine is a
 * use-after-free report; the checks below say what the peer must see
 * instead. The engine is an MPA responder; a raw peer (iw_peer.c)
 * drives it and decodes everything it sends with the independent codecs. */
#include <iwarp/engine.h>

#include <stdlib.h>
#include <string.h>

#include "iw_peer.h"
#include "iw_test.h"

static const iw_tstamp T0 = 1000000000ull;

typedef struct rv {
    iw_rnic *rnic;
    uint32_t pd, pd2;
    iw_conn *c;
    iw_peer pe;
    iw_peer_buf wire; /* everything the engine sent */
    iw_event ev[64];
    size_t nev;
} rv;

static int rv_on_event(iw_conn *c, const iw_event *ev, void *user) {
    (void)c;
    rv *r = user;
    if (r->nev < sizeof r->ev / sizeof r->ev[0]) {
        r->ev[r->nev] = *ev;
        r->ev[r->nev].info = NULL;
        r->nev++;
    }
    return 0;
}
static const iw_callbacks rv_cb = {IW_CALLBACKS_V1, rv_on_event};

static void rv_feed(rv *r) {
    iw_ssize n = iw_conn_recv(r->c, r->pe.out.p, r->pe.out.len, T0);
    CHECK_EQ(n, (iw_ssize)r->pe.out.len);
    iw_peer_take(&r->pe);
}

/* Everything the engine wants to send now. */
static void rv_drain(rv *r) {
    uint8_t buf[4096];
    iw_ssize n;
    while ((n = iw_conn_write(r->c, buf, sizeof buf, T0)) > 0)
        iw_peer_buf_add(&r->wire, buf, (size_t)n);
    CHECK(n == 0);
}

/* Exactly the next FPDU (or what is left of it), through the zero-copy
 * interface a socket binding uses. Returns the octets sent. */
static size_t rv_send_fpdu(rv *r) {
    iw_iovec iov[64];
    int n = iw_conn_tx_iov(r->c, iov, 64);
    size_t tot = 0;
    for (int i = 0; i < n; i++) {
        iw_peer_buf_add(&r->wire, iov[i].base, iov[i].len);
        tot += iov[i].len;
    }
    if (tot)
        CHECK_EQ(iw_conn_tx_commit(r->c, tot, T0), 0);
    return tot;
}

/* Up to max octets of the current FPDU, then stop: a socket that took only
 * part of a writev. */
static size_t rv_send_part(rv *r, size_t max) {
    iw_iovec iov[64];
    int n = iw_conn_tx_iov(r->c, iov, 64);
    size_t tot = 0;
    for (int i = 0; i < n && tot < max; i++) {
        size_t k = iov[i].len < max - tot ? iov[i].len : max - tot;
        iw_peer_buf_add(&r->wire, iov[i].base, k);
        tot += k;
    }
    if (tot)
        CHECK_EQ(iw_conn_tx_commit(r->c, tot, T0), 0);
    return tot;
}

/* A responder in Full Operation (CRC on, no markers) that may send: the
 * peer's first FPDU, a zero-length Write, satisfies RFC 5044 §7.1.2 rule 4. */
static int rv_init(rv *r, bool cut_through) {
    memset(r, 0, sizeof *r);
    iw_conn_settings s;
    iw_conn_settings_default(&s, IW_ROLE_RESPONDER);
    s.cut_through = cut_through;
    if (iw_rnic_new(&r->rnic, NULL) || iw_pd_alloc(r->rnic, &r->pd) ||
        iw_pd_alloc(r->rnic, &r->pd2) || iw_conn_new(&r->c, r->rnic, r->pd, &s, &rv_cb, r) ||
        iw_peer_init(&r->pe) || iw_conn_start(r->c, T0))
        return -1;
    iw_mpa_rr rq;
    iw_peer_rr_default(&rq, IW_MPA_REQUEST);
    iw_peer_rr(&r->pe, &rq);
    iw_peer_full_operation(&r->pe, false, true);
    iw_peer_write(&r->pe, 0, 0, NULL, 0);
    rv_feed(r);
    rv_drain(r); /* the Reply */
    return iw_conn_get_state(r->c) == IW_CONN_RTS ? 0 : -1;
}

static void rv_free(rv *r) {
    iw_conn_del(r->c);
    iw_rnic_del(r->rnic);
    iw_peer_free(&r->pe);
    iw_peer_buf_free(&r->wire);
}

/* A region in a heap block of its own, filled with fill. */
static uint8_t *rv_region(rv *r, uint32_t pd, size_t len, unsigned access, uint8_t fill,
                          uint32_t *stag) {
    uint8_t *m = malloc(len);
    if (!m)
        return NULL;
    memset(m, fill, len);
    if (iw_mr_reg(r->rnic, pd, m, len, 0, access, stag)) {
        free(m);
        return NULL;
    }
    return m;
}

/* Deregister and give the memory back at once, as a verbs user may. */
static void rv_dereg_free(rv *r, uint32_t stag, uint8_t *mem) {
    CHECK_EQ(iw_mr_dereg(r->rnic, stag), 0);
    free(mem);
}

static void rv_decode(const rv *r, iw_peer_trace *t) {
    iw_df_cfg cfg = {IW_DF_START_RR, IW_DF_AUTO, IW_DF_AUTO, 0};
    CHECK_EQ(iw_peer_decode(t, r->wire.p, r->wire.len, &cfg), 0);
}

static const iw_peer_frame *last_fpdu(const iw_peer_trace *t) {
    for (size_t i = t->n; i-- > 0;)
        if (t->v[i].type == IW_FRAME_FPDU)
            return &t->v[i];
    return NULL;
}

static size_t count_ev(const rv *r, iw_event_type type) {
    size_t n = 0;
    for (size_t i = 0; i < r->nev; i++)
        n += r->ev[i].type == type;
    return n;
}

static const iw_event *find_ev(const rv *r, iw_event_type type, uint64_t wr_id) {
    for (size_t i = 0; i < r->nev; i++)
        if (r->ev[i].type == type && r->ev[i].wr_id == wr_id)
            return &r->ev[i];
    return NULL;
}

/* The Terminate the peer must see: triple, and which headers it copies. */
static void check_term(const iw_peer_frame *f, uint16_t triple, const uint8_t *hdr, size_t hdr_len,
                       bool rreq) {
    REQUIRE(f && f->rdmap_verdict.kind == IW_VERDICT_OK);
    REQUIRE(f->msg.opcode == IW_OP_TERMINATE);
    const iw_rdmap_term *t = &f->msg.u.term;
    CHECK_EQ(IW_TERM_TRIPLE(t->layer, t->etype, t->ecode), triple);
    CHECK_EQ(t->d, hdr != NULL);
    CHECK_EQ(t->r, rreq);
    if (hdr) {
        REQUIRE(t->ddp_raw_len <= hdr_len);
        CHECK_MEM(t->ddp_raw, hdr, t->ddp_raw_len);
    }
}

/* Payload octets of every Read Response FPDU in t, checked against fill. */
static size_t read_resp_octets(const iw_peer_trace *t, uint8_t fill, size_t *wrong) {
    size_t n = 0;
    *wrong = 0;
    for (size_t i = 0; i < t->n; i++) {
        const iw_peer_frame *f = &t->v[i];
        if (f->type != IW_FRAME_FPDU || f->msg.opcode != IW_OP_READ_RESP)
            continue;
        for (size_t k = 0; k < f->msg.payload_len; k++)
            *wrong += f->msg.payload[k] != fill;
        n += f->msg.payload_len;
    }
    return n;
}

/* ---- the peer's Read Requests (the engine's queued Read Responses) ---- */

/* A response not sent at all when its source goes: the Terminate names the
 * Read Request (RFC 5040 §7.1 rule 3), and no octet of the region leaves. */
IW_TEST(read_response_unsent_dereg) {
    rv r;
    iw_peer_trace t = {0};
    REQUIRE(rv_init(&r, false) == 0);
    uint32_t st;
    uint8_t *m = rv_region(&r, r.pd, 65536, IW_ACCESS_REMOTE_READ, 0xAB, &st);
    REQUIRE(m);
    iw_peer_read_req(&r.pe, 0x4400, 0, 65536, st, 0);
    uint8_t req[IW_DDP_UNTAGGED_HDR_LEN + IW_RDMAP_READ_REQ_LEN];
    memcpy(req, r.pe.last_ulpdu, sizeof req);
    rv_feed(&r);
    rv_dereg_free(&r, st, m);
    rv_drain(&r);
    rv_decode(&r, &t);
    CHECK_EQ(iw_peer_count_op(&t, IW_OP_READ_RESP), 0);
    check_term(last_fpdu(&t), IW_TERM_RDMAP_INVALID_STAG, req, IW_DDP_UNTAGGED_HDR_LEN, true);
    const iw_peer_frame *f = last_fpdu(&t);
    if (f && f->msg.opcode == IW_OP_TERMINATE) {
        CHECK_EQ(f->msg.u.term.rreq.src_stag, st);
        CHECK_EQ(f->msg.u.term.rreq.read_size, 65536);
    }
    CHECK_EQ(count_ev(&r, IW_EV_TERM_SENT), 1);
    CHECK_EQ(iw_conn_get_state(r.c), IW_CONN_TERMINATE);
    iw_peer_trace_free(&t);
    rv_free(&r);
}

/* The response is half sent, cut between FPDUs: what went out was read
 * while the region was registered; the rest never is, and the Terminate
 * follows the last whole FPDU. A second response queued behind it, from a
 * region that stays, is not sent either: the stream is over (RFC 5040 §5.4). */
IW_TEST(read_response_partly_sent_dereg) {
    rv r;
    iw_peer_trace t = {0};
    REQUIRE(rv_init(&r, false) == 0);
    uint32_t st, st2;
    uint8_t *m = rv_region(&r, r.pd, 262144, IW_ACCESS_REMOTE_READ, 0x11, &st);
    uint8_t *m2 = rv_region(&r, r.pd, 4096, IW_ACCESS_REMOTE_READ, 0x22, &st2);
    REQUIRE(m && m2);
    iw_peer_read_req(&r.pe, 0x4400, 0, 262144, st, 0);
    uint8_t req[IW_DDP_UNTAGGED_HDR_LEN];
    memcpy(req, r.pe.last_ulpdu, sizeof req);
    iw_peer_read_req(&r.pe, 0x4500, 0, 4096, st2, 0);
    rv_feed(&r);
    for (int k = 0; k < 5; k++)
        CHECK(rv_send_fpdu(&r) > 0);
    rv_dereg_free(&r, st, m);
    rv_drain(&r);
    rv_decode(&r, &t);
    CHECK_EQ(iw_peer_count_op(&t, IW_OP_READ_RESP), 5);
    size_t wrong;
    size_t got = read_resp_octets(&t, 0x11, &wrong);
    CHECK(got > 0 && got < 262144);
    CHECK_EQ(wrong, 0);
    check_term(last_fpdu(&t), IW_TERM_RDMAP_INVALID_STAG, req, sizeof req, true);
    CHECK_EQ(t.v[t.n - 1].type, IW_FRAME_FPDU); /* framing held to the end */
    iw_peer_trace_free(&t);
    rv_free(&r);
    free(m2);
}

/* Half of an FPDU is in the socket when its memory goes: it cannot be
 * finished without reading freed memory, so the stream is torn down
 * without a Terminate (RFC 5040 §6.2) and nothing more is sent. */
IW_TEST(read_response_mid_fpdu_dereg) {
    rv r;
    iw_peer_trace t = {0};
    REQUIRE(rv_init(&r, false) == 0);
    uint32_t st;
    uint8_t *m = rv_region(&r, r.pd, 65536, IW_ACCESS_REMOTE_READ, 0x33, &st);
    REQUIRE(m);
    iw_peer_read_req(&r.pe, 0x4400, 0, 65536, st, 0);
    rv_feed(&r);
    CHECK(rv_send_fpdu(&r) > 0);
    CHECK_EQ(rv_send_part(&r, 100), 100);
    size_t before = r.wire.len;
    rv_dereg_free(&r, st, m);
    rv_drain(&r);
    CHECK_EQ(r.wire.len, before);
    REQUIRE(r.nev > 0);
    CHECK_EQ(r.ev[r.nev - 1].type, IW_EV_CLOSED);
    CHECK_EQ(r.ev[r.nev - 1].close, IW_CLOSE_LOCAL_ABORT);
    CHECK_EQ(iw_conn_get_state(r.c), IW_CONN_CLOSED);
    CHECK(!iw_conn_want_write(r.c));
    rv_decode(&r, &t);
    CHECK_EQ(iw_peer_count_op(&t, IW_OP_READ_RESP), 1);
    CHECK_EQ(t.v[t.n - 1].type, IW_FRAME_INCOMPLETE);
    iw_peer_trace_free(&t);
    rv_free(&r);
}

/* Invalidation keeps the memory but withdraws remote access (RFC 5042
 * §6.3.3): what the ULP writes after invalidating must never reach the peer. */
IW_TEST(read_response_invalidated) {
    rv r;
    iw_peer_trace t = {0};
    REQUIRE(rv_init(&r, true) == 0);
    uint32_t st;
    uint8_t *m = rv_region(&r, r.pd, 32768, IW_ACCESS_REMOTE_READ, 0x5A, &st);
    REQUIRE(m);
    iw_peer_read_req(&r.pe, 0x4400, 0, 32768, st, 0);
    uint8_t req[IW_DDP_UNTAGGED_HDR_LEN];
    memcpy(req, r.pe.last_ulpdu, sizeof req);
    rv_feed(&r);
    CHECK(rv_send_fpdu(&r) > 0);
    CHECK_EQ(iw_mr_invalidate(r.rnic, st), 0);
    memset(m, 0xEE, 32768); /* the ULP reuses the buffer */
    rv_drain(&r);
    rv_decode(&r, &t);
    size_t wrong;
    CHECK(read_resp_octets(&t, 0x5A, &wrong) > 0);
    CHECK_EQ(wrong, 0);
    check_term(last_fpdu(&t), IW_TERM_RDMAP_INVALID_STAG, req, sizeof req, true);
    iw_peer_trace_free(&t);
    rv_free(&r);
    free(m);
}

/* The STag value comes back (same index, its 8-bit key wrapped after 256
 * reuses) naming another buffer: the queued response still does not run,
 * because it holds the registration, not the STag. */
IW_TEST(read_response_stag_reused) {
    rv r;
    iw_peer_trace t = {0};
    REQUIRE(rv_init(&r, false) == 0);
    uint32_t st, again = 0;
    uint8_t *m = rv_region(&r, r.pd, 8192, IW_ACCESS_REMOTE_READ, 0x01, &st);
    REQUIRE(m);
    iw_peer_read_req(&r.pe, 0x4400, 0, 8192, st, 0);
    uint8_t req[IW_DDP_UNTAGGED_HDR_LEN];
    memcpy(req, r.pe.last_ulpdu, sizeof req);
    rv_feed(&r);
    rv_dereg_free(&r, st, m);
    uint8_t *other = malloc(8192);
    REQUIRE(other);
    memset(other, 0x99, 8192);
    for (int k = 0; k < 256 && again != st; k++) {
        REQUIRE(iw_mr_reg(r.rnic, r.pd, other, 8192, 0, IW_ACCESS_REMOTE_READ, &again) == 0);
        if (again != st)
            REQUIRE(iw_mr_dereg(r.rnic, again) == 0);
    }
    CHECK_EQ(again, st);
    rv_drain(&r);
    rv_decode(&r, &t);
    CHECK_EQ(iw_peer_count_op(&t, IW_OP_READ_RESP), 0);
    check_term(last_fpdu(&t), IW_TERM_RDMAP_INVALID_STAG, req, sizeof req, true);
    iw_peer_trace_free(&t);
    rv_free(&r);
    free(other);
}

/* ---- our Sends and Writes from a region named by STag ---- */

/* RFC 5040 §7.1 rule 1: the error arises while creating the message, so the
 * Terminate (0/0/0) goes instead of it with no header; the work request
 * says what happened, earlier work completes, later work is flushed. */
IW_TEST(send_source_dereg) {
    rv r;
    iw_peer_trace t = {0};
    REQUIRE(rv_init(&r, false) == 0);
    uint32_t st;
    uint8_t *m = rv_region(&r, r.pd, 3000, IW_ACCESS_LOCAL_WRITE, 0x77, &st);
    REQUIRE(m);
    static const uint8_t raw[40] = {1, 2, 3};
    iw_send_wr a = {.op = IW_WR_SEND, .wr_id = 1, .data = raw, .len = sizeof raw};
    iw_send_wr b = {.op = IW_WR_SEND, .wr_id = 2, .len = 3000, .local_stag = st, .local_to = 0};
    iw_send_wr c = {.op = IW_WR_WRITE, .wr_id = 3, .data = raw, .len = 8, .remote_stag = 0x1200};
    CHECK_EQ(iw_conn_post_send(r.c, &a), 0);
    CHECK_EQ(iw_conn_post_send(r.c, &b), 0);
    CHECK_EQ(iw_conn_post_send(r.c, &c), 0);
    CHECK(rv_send_fpdu(&r) > 0); /* a */
    rv_dereg_free(&r, st, m);
    rv_drain(&r);
    rv_decode(&r, &t);
    CHECK_EQ(iw_peer_count_op(&t, IW_OP_SEND), 1);
    CHECK_EQ(iw_peer_count_op(&t, IW_OP_WRITE), 0);
    check_term(last_fpdu(&t), IW_TERM_RDMAP_LOCAL_CATASTROPHIC, NULL, 0, false);
    const iw_event *ea = find_ev(&r, IW_EV_SEND_DONE, 1), *eb = find_ev(&r, IW_EV_SEND_DONE, 2),
                   *ec = find_ev(&r, IW_EV_WRITE_DONE, 3);
    REQUIRE(ea && eb && ec);
    CHECK_EQ(ea->status, IW_WC_SUCCESS);
    CHECK_EQ(eb->status, IW_WC_LOCAL_PROT_ERROR);
    CHECK_EQ(ec->status, IW_WC_FLUSHED);
    CHECK(ea < eb && eb < ec); /* RFC 5040 §5.5 rule 15 */
    iw_peer_trace_free(&t);
    rv_free(&r);
}

/* A Write from a region that stays registered carries the region's octets;
 * the source is checked when posted (RFC 5042 §5: same PD, in bounds). */
IW_TEST(write_source_by_stag) {
    rv r;
    iw_peer_trace t = {0};
    REQUIRE(rv_init(&r, false) == 0);
    uint32_t st, st_other;
    uint8_t *m = rv_region(&r, r.pd, 2000, 0, 0x42, &st);
    uint8_t *o = rv_region(&r, r.pd2, 64, 0, 0x43, &st_other);
    REQUIRE(m && o);
    m[100] = 0x17;
    iw_send_wr w = {.op = IW_WR_WRITE,
                    .wr_id = 9,
                    .len = 1000,
                    .local_stag = st,
                    .local_to = 100,
                    .remote_stag = 0x1200};
    CHECK_EQ(iw_conn_post_send(r.c, &w), 0);
    iw_send_wr bad = w;
    bad.local_to = 1001; /* 1000 octets from 1001 end past 2000 */
    CHECK_EQ(iw_conn_post_send(r.c, &bad), IW_ERR_INVALID_ARG);
    bad = w;
    bad.local_stag = st_other; /* another PD */
    bad.local_to = 0;
    bad.len = 64;
    CHECK_EQ(iw_conn_post_send(r.c, &bad), IW_ERR_INVALID_ARG);
    bad.local_stag = st + 1; /* stale key */
    CHECK_EQ(iw_conn_post_send(r.c, &bad), IW_ERR_INVALID_ARG);
    rv_drain(&r);
    rv_decode(&r, &t);
    CHECK_EQ(iw_peer_count_op(&t, IW_OP_WRITE), 1);
    size_t got = 0;
    for (size_t i = 0; i < t.n; i++) {
        const iw_peer_frame *f = &t.v[i];
        if (f->type != IW_FRAME_FPDU || f->msg.opcode != IW_OP_WRITE)
            continue;
        REQUIRE(f->msg.payload_len == 1000);
        CHECK_EQ(f->msg.payload[0], 0x17);
        CHECK_EQ(f->msg.payload[999], 0x42);
        got++;
    }
    CHECK_EQ(got, 1);
    const iw_event *e = find_ev(&r, IW_EV_WRITE_DONE, 9);
    CHECK(e && e->status == IW_WC_SUCCESS);
    iw_peer_trace_free(&t);
    rv_free(&r);
    free(m);
    free(o);
}

/* ---- the peer's Write landing in a region that goes mid-segment ---- */

/* Half the Write's payload has arrived (placed cut-through, or staged
 * until its CRC): after the deregistration nothing more lands, and the
 * segment is answered as if it had arrived after it: 1/1/0 copying its
 * DDP header (RFC 5041 §7.1). */
static void write_split_dereg(bool cut_through) {
    rv r;
    iw_peer_trace t = {0};
    REQUIRE(rv_init(&r, cut_through) == 0);
    uint32_t st;
    uint8_t *m = rv_region(&r, r.pd, 4096, IW_ACCESS_REMOTE_WRITE, 0x00, &st);
    REQUIRE(m);
    uint8_t pay[1200];
    memset(pay, 0xC3, sizeof pay);
    iw_peer_write(&r.pe, st, 0, pay, sizeof pay);
    uint8_t hdr[IW_DDP_TAGGED_HDR_LEN];
    memcpy(hdr, r.pe.last_ulpdu, sizeof hdr);
    size_t half = r.pe.out.len / 2;
    CHECK_EQ(iw_conn_recv(r.c, r.pe.out.p, half, T0), (iw_ssize)half);
    rv_dereg_free(&r, st, m);
    CHECK_EQ(iw_conn_recv(r.c, r.pe.out.p + half, r.pe.out.len - half, T0),
             (iw_ssize)(r.pe.out.len - half));
    iw_peer_take(&r.pe);
    rv_drain(&r);
    rv_decode(&r, &t);
    check_term(last_fpdu(&t), IW_TERM_DDP_T_INVALID_STAG, hdr, sizeof hdr, false);
    iw_peer_trace_free(&t);
    rv_free(&r);
}
IW_TEST(write_split_dereg_cut_through) { write_split_dereg(true); }
IW_TEST(write_split_dereg_staged) { write_split_dereg(false); }

/* The same Write whole, after the region went: the ordinary 1/1/0. The
 * mid-segment case must give the peer the same answer. */
IW_TEST(write_after_dereg) {
    rv r;
    iw_peer_trace t = {0};
    REQUIRE(rv_init(&r, true) == 0);
    uint32_t st;
    uint8_t *m = rv_region(&r, r.pd, 4096, IW_ACCESS_REMOTE_WRITE, 0x00, &st);
    REQUIRE(m);
    rv_dereg_free(&r, st, m);
    uint8_t pay[1200] = {0};
    iw_peer_write(&r.pe, st, 0, pay, sizeof pay);
    uint8_t hdr[IW_DDP_TAGGED_HDR_LEN];
    memcpy(hdr, r.pe.last_ulpdu, sizeof hdr);
    rv_feed(&r);
    rv_drain(&r);
    rv_decode(&r, &t);
    check_term(last_fpdu(&t), IW_TERM_DDP_T_INVALID_STAG, hdr, sizeof hdr, false);
    iw_peer_trace_free(&t);
    rv_free(&r);
}

/* Not a revocation, the same hazard: a source the ULP (or a peer's Write)
 * changes while its FPDU is half written. RFC 5040 §5.5 rule 8 makes the
 * data indeterminate, never the framing: the CRC must cover exactly the
 * octets that left, so the FPDU still verifies (found by fuzz_revoke). */
IW_TEST(source_changed_mid_fpdu) {
    rv r;
    iw_peer_trace t = {0};
    REQUIRE(rv_init(&r, false) == 0);
    static uint8_t buf[1000];
    memset(buf, 0x11, sizeof buf);
    iw_send_wr w = {
        .op = IW_WR_WRITE, .wr_id = 5, .data = buf, .len = sizeof buf, .remote_stag = 0x1200};
    CHECK_EQ(iw_conn_post_send(r.c, &w), 0);
    CHECK_EQ(rv_send_part(&r, 300), 300);
    memset(buf, 0x22, sizeof buf);
    rv_drain(&r);
    rv_decode(&r, &t);
    const iw_peer_frame *f = last_fpdu(&t);
    REQUIRE(f && f->msg.opcode == IW_OP_WRITE);
    CHECK_EQ(f->crc, IW_CRC_GOOD);
    CHECK_EQ(f->verdict.kind, IW_VERDICT_OK);
    size_t old = 0, now = 0;
    for (size_t k = 0; k < f->msg.payload_len; k++) {
        old += f->msg.payload[k] == 0x11;
        now += f->msg.payload[k] == 0x22;
    }
    CHECK(old > 0 && now > 0 && old + now == sizeof buf);
    iw_peer_trace_free(&t);
    rv_free(&r);
}

IW_TEST_MAIN("iw_revoke", IW_CASE(read_response_unsent_dereg),
             IW_CASE(read_response_partly_sent_dereg), IW_CASE(read_response_mid_fpdu_dereg),
             IW_CASE(read_response_invalidated), IW_CASE(read_response_stag_reused),
             IW_CASE(send_source_dereg), IW_CASE(write_source_by_stag),
             IW_CASE(write_split_dereg_cut_through), IW_CASE(write_split_dereg_staged),
             IW_CASE(write_after_dereg), IW_CASE(source_changed_mid_fpdu))
