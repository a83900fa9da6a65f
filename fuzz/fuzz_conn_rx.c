/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The whole engine (iw_conn, reference-stack/lib/src/iw_conn.c, iw_rx.c,
 * iw_tx.c) receiving arbitrary octets, as MPA responder or initiator.
 *
 * Input: [cfg][rtr_emss][ird][ord][ird_max][fail_at][work][nchunk]
 *        [nchunk x chunk:2][stream...]   (nchunk % 32 chunk descriptors)
 *   cfg bit 0: initiator (it sends its Request first; the stream is then
 *     the peer's Reply and FPDUs), else responder (the stream opens with
 *     the peer's Request); bit 1: MPA Rev 1 (else 2); bit 2: markers
 *     (our M: the peer must insert them); bit 3: our C bit; bit 4: p2p;
 *     bit 5: responder rejects; bits 6-7: private data length (0, 1, 4 or
 *     the most allowed).
 *   rtr_emss: bits 0-2 RTR types (send, write, read); bits 3-7: EMSS =
 *     128 + 48 * v (v = 0: the 1460 default).
 *   ird, ord: as given; ird_max: bits 0-6 (0 means 128), bit 7 sets
 *     cut_through (payload placed before its CRC is known).
 *   fail_at: the event with this number (1-based; 0: none) makes the
 *     callback fail, so the engine call in progress returns IW_ERR_CALLBACK.
 *   work: bits 0-2 receive buffers posted (of 512 octets); bit 3 a Send,
 *     bit 4 a Write, bit 5 a Read, bit 6 a FetchAdd posted before start;
 *     bit 7: end with iw_conn_close (else the LLP reports EOF).
 *   chunk (big-endian, used in turn until the stream is fed): bits 0-12
 *     length (1 + v % the stream's length); bit 13: a second passes before
 *     it (the MPA startup timeout is 0.5 s); bit 14: in the second run,
 *     short reads; bit 15: in the second run, through iw_conn_recv in
 *     sub-chunks instead of rx_iov/rx_commit. Output is drained after each
 *     chunk, 1 + (v & 0xFFF) octets per iw_conn_write.
 *     nchunk = 0: the stream in one chunk.
 *
 * Each input runs twice with the same chunks, draining output after each:
 * run A feeds every chunk with one iw_conn_recv; run B feeds it through
 * iw_conn_rx_iov/iw_conn_rx_commit (reads landing straight in the listed
 * iovecs, possibly short and stopping mid-piece) or iw_conn_recv in
 * sub-chunks. Invariants, per run:
 *  - no crash, UB or leak; iw_conn_recv consumes everything or fails with
 *    IW_ERR_CALLBACK, and only in a call whose callback failed;
 *  - the output decodes cleanly (fuzz_engine.h): right startup frame, then
 *    FPDUs with no verdict and within MULPDU; after IW_EV_TERM_SENT it ends
 *    with exactly one Terminate, matching the event, and nothing after;
 *  - no octet outside the regions of this stream's PD and the posted
 *    receive buffers ever changes, and none at all after the
 *    connection left RTS (Terminate sent or received, or closed);
 *  - RECV completions carry MSN 1, 2, 3... in order, each within its
 *    buffer; send-side completions come in post order (RFC 5040 §5.5);
 *    once the stream has ended every posted request completed once;
 *  - at most one CLOSED event, and nothing after it.
 * And across the runs: identical events (RFC sections included) and
 * output, however the chunks were read. (Memory is not compared: with
 * cut_through, or markers without CRCs, a segment read piecewise may land
 * before the verdict that terminates it; fuzz_place bounds exactly what
 * that may change.) */
#include "fuzz_engine.h"

#define ARENA 32768
#define RBUF 512
#define MAX_EVENTS 4096
#define HDR 7

/* Where the regions and buffers sit; the rest of the arena is guard. */
enum {
    OFF_RW = 1024,
    LEN_RW = 8192, /* remote read+write, PD A: STag 0x101 */
    OFF_AT = OFF_RW + LEN_RW + 256,
    LEN_AT = 64, /* remote atomic: 0x201 */
    OFF_SINK = OFF_AT + LEN_AT + 256,
    LEN_SINK = 4096, /* local write, our Read's sink: 0x301 */
    OFF_FOR = OFF_SINK + LEN_SINK + 256,
    LEN_FOR = 1024, /* remote write, PD B: 0x401 */
    OFF_NOINV = OFF_FOR + LEN_FOR + 256,
    LEN_NOINV = 1024,                    /* remote write, no invalidate: 0x501 */
    OFF_RQ = OFF_NOINV + LEN_NOINV + 256 /* receive buffers, RBUF apart with guards */
};

typedef struct {
    const uint8_t *cfg; /* the HDR header octets */
    const uint8_t *chunks;
    size_t nchunks;
    const uint8_t *stream;
    size_t len;
} input;

typedef struct {
    iw_conn *conn;
    fz_evlog ev;
    unsigned fail_at, n_events;
    bool cb_failed; /* the callback failed during the current call */
    bool stopped;   /* an engine call failed: feed nothing more */
    uint8_t *arena, *before;
    fz_bytes out;
    uint64_t posted_wr[8];
    size_t n_posted_wr;
    uint32_t rq_len[8];
} run;

static int on_event(iw_conn *c, const iw_event *e, void *user) {
    run *r = user;
    fz_ev_log(&r->ev, c, e);
    FUZZ_CHECK(r->ev.n <= MAX_EVENTS);
    if (++r->n_events == r->fail_at) {
        r->cb_failed = true;
        return 1;
    }
    return 0;
}

static const iw_callbacks cbs = {IW_CALLBACKS_V1, on_event};
static const uint8_t pdata[IW_MPA_PD_MAX] = "fuzz_conn_rx private data";
static uint8_t src[4096]; /* source octets of our Send and Write */

/* After every engine call: it failed iff our callback did. */
static void after_call(run *r, iw_ssize rc) {
    if (rc == IW_ERR_CALLBACK)
        FUZZ_CHECK(r->cb_failed);
    else
        FUZZ_CHECK(rc >= 0 && !r->cb_failed);
    if (rc < 0)
        r->stopped = true;
    r->cb_failed = false;
}

static void arena_init(uint8_t *a) {
    for (size_t i = 0; i < ARENA; i++)
        a[i] = (uint8_t)(i * 7 + (i >> 8));
}

/* The octets the peer may write while the stream is up, as [start, end)
 * ranges in arena order: the regions of this stream's PD (0x401 is in the
 * other one) and the posted receive buffers. */
static size_t writable(const run *r, size_t lo[], size_t hi[]) {
    static const size_t reg[][2] = {
        {OFF_RW, LEN_RW}, {OFF_AT, LEN_AT}, {OFF_SINK, LEN_SINK}, {OFF_NOINV, LEN_NOINV}};
    size_t n = 0;
    for (size_t k = 0; k < 4; k++, n++) {
        lo[n] = reg[k][0];
        hi[n] = reg[k][0] + reg[k][1];
    }
    for (size_t k = 0; k < 8; k++)
        if (r->rq_len[k]) {
            lo[n] = OFF_RQ + k * (RBUF + 64);
            hi[n] = lo[n] + RBUF;
            n++;
        }
    return n;
}

/* Nothing outside the writable ranges changed; when frozen, nothing at all. */
static void check_memory(const run *r, bool frozen) {
    if (frozen) {
        FUZZ_CHECK(memcmp(r->arena, r->before, ARENA) == 0);
        return;
    }
    size_t lo[12], hi[12];
    size_t n = writable(r, lo, hi), at = 0;
    for (size_t k = 0; k <= n; k++) {
        size_t end = k < n ? lo[k] : ARENA;
        FUZZ_CHECK(memcmp(r->arena + at, r->before + at, end - at) == 0);
        if (k < n)
            at = hi[k];
    }
}

static void setup(run *r, iw_rnic **rnic, const input *in) {
    const uint8_t *c = in->cfg;
    memset(r, 0, sizeof *r);
    r->fail_at = c[5];
    r->arena = malloc(ARENA);
    r->before = malloc(ARENA);
    FUZZ_CHECK(r->arena && r->before);
    arena_init(r->arena);
    memcpy(r->before, r->arena, ARENA);

    uint32_t pd, pd2, st;
    FUZZ_CHECK(iw_rnic_new(rnic, NULL) == 0);
    FUZZ_CHECK(iw_pd_alloc(*rnic, &pd) == 0 && iw_pd_alloc(*rnic, &pd2) == 0);
    const unsigned rw = IW_ACCESS_LOCAL_WRITE | IW_ACCESS_REMOTE_READ | IW_ACCESS_REMOTE_WRITE;
    /* First registrations get STags 0x101, 0x201, ...: the dictionary
     * and seeds name them. */
    FUZZ_CHECK(iw_mr_reg(*rnic, pd, r->arena + OFF_RW, LEN_RW, 0x1000, rw, &st) == 0);
    FUZZ_CHECK(
        iw_mr_reg(*rnic, pd, r->arena + OFF_AT, LEN_AT, 0x8000, IW_ACCESS_REMOTE_ATOMIC, &st) == 0);
    FUZZ_CHECK(iw_mr_reg(*rnic, pd, r->arena + OFF_SINK, LEN_SINK, 0x20000, IW_ACCESS_LOCAL_WRITE,
                         &st) == 0);
    FUZZ_CHECK(iw_mr_reg(*rnic, pd2, r->arena + OFF_FOR, LEN_FOR, 0x1000, rw, &st) == 0);
    FUZZ_CHECK(iw_mr_reg(*rnic, pd, r->arena + OFF_NOINV, LEN_NOINV, 0x40000,
                         rw | IW_MR_NO_INVALIDATE, &st) == 0);

    iw_conn_settings s;
    iw_conn_settings_default(&s, (c[0] & 1) ? IW_ROLE_INITIATOR : IW_ROLE_RESPONDER);
    s.mpa_rev = (c[0] & 2) ? IW_MPA_REV1 : IW_MPA_REV2;
    s.markers = c[0] & 4;
    s.crc = c[0] & 8;
    s.p2p = (c[0] & 16) && s.mpa_rev == IW_MPA_REV2;
    s.reject = (c[0] & 32) && s.role == IW_ROLE_RESPONDER;
    static const uint16_t pdl[4] = {0, 1, 4, IW_MPA_PD_MAX - 4};
    s.private_data_len = pdl[c[0] >> 6];
    if (s.mpa_rev == IW_MPA_REV1 && s.private_data_len == IW_MPA_PD_MAX - 4)
        s.private_data_len = IW_MPA_PD_MAX;
    s.private_data = pdata;
    s.rtr = c[1] & 7;
    s.emss = (c[1] >> 3) ? 128 + 48u * (c[1] >> 3) : 0;
    s.ird = c[2];
    s.ord = c[3];
    s.ird_max = (c[4] & 0x7F) ? c[4] & 0x7F : 128;
    s.cut_through = c[4] & 0x80;
    s.mpa_timeout = 500000000ull; /* 0.5 s: chunk bit 13 can expire it */
    FUZZ_CHECK(iw_conn_new(&r->conn, *rnic, pd, &s, &cbs, r) == 0);

    /* Receive buffers, then send-side work, all before start. */
    unsigned w = c[6];
    for (unsigned k = 0; k < (w & 7); k++) {
        r->rq_len[k] = RBUF;
        FUZZ_CHECK(iw_conn_post_recv(r->conn, 100 + k, r->arena + OFF_RQ + k * (RBUF + 64), RBUF) ==
                   0);
    }
    iw_send_wr wr[4] = {
        {.op = IW_WR_SEND, .wr_id = 1, .data = src, .len = 100},
        {.op = IW_WR_WRITE,
         .wr_id = 2,
         .data = src,
         .len = 3000,
         .remote_stag = 0x101,
         .remote_to = 0x1000},
        {.op = IW_WR_READ,
         .wr_id = 3,
         .len = 200,
         .remote_stag = 0x101,
         .remote_to = 0x1000,
         .local_stag = 0x301,
         .local_to = 0x20000},
        {.op = IW_WR_FETCH_ADD,
         .wr_id = 4,
         .remote_stag = 0x201,
         .remote_to = 0x8000,
         .add_swap = 5},
    };
    for (unsigned k = 0; k < 4; k++)
        if (w & (8u << k)) {
            FUZZ_CHECK(iw_conn_post_send(r->conn, &wr[k]) == 0);
            r->posted_wr[r->n_posted_wr++] = wr[k].wr_id;
        }
}

/* xorshift for the short-read pattern of one chunk: deterministic in its
 * descriptor, so the input says everything. */
static uint32_t next_rand(uint32_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* Run B's way of reading one chunk: readv into the iovecs the engine lists,
 * each read possibly short (stopping inside a piece), or iw_conn_recv in
 * random sub-chunks. */
static void feed_split(run *r, const uint8_t *p, size_t n, uint16_t d, size_t ci, iw_tstamp now) {
    uint32_t s = 0x9E3779B9u ^ d ^ (uint32_t)ci * 0x85EBCA6Bu;
    bool shortr = d & 0x4000, via_recv = d & 0x8000;
    size_t used = 0;
    while (used < n && !r->stopped) {
        size_t cap = shortr ? 1 + next_rand(&s) % 97 : n - used;
        if (cap > n - used)
            cap = n - used;
        if (via_recv) {
            iw_ssize rc = iw_conn_recv(r->conn, p + used, cap, now);
            after_call(r, rc);
            FUZZ_CHECK(rc < 0 || (size_t)rc == cap);
            used += cap;
            continue;
        }
        iw_iovec iov[64];
        int k = iw_conn_rx_iov(r->conn, iov, 64);
        FUZZ_CHECK(k >= 0 && k <= 64);
        if (k == 0)
            return; /* nothing more is read on this stream */
        size_t got = 0;
        for (int i = 0; i < k && got < cap; i++) {
            FUZZ_CHECK(iov[i].len > 0);
            size_t m = iov[i].len < cap - got ? iov[i].len : cap - got;
            /* readv: octets land exactly where the engine said. */
            FUZZ_CHECK((uint8_t *)iov[i].base != NULL);
            memcpy(iov[i].base, p + used + got, m);
            got += m;
        }
        int rc = iw_conn_rx_commit(r->conn, got, now);
        after_call(r, rc);
        used += got;
    }
}

static void do_run(const input *in, bool split, run *r) {
    iw_rnic *rnic;
    setup(r, &rnic, in);
    bool initiator = in->cfg[0] & 1;
    iw_tstamp now = 1000000000ull;
    after_call(r, iw_conn_start(r->conn, now));
    after_call(r, fz_drain(r->conn, &r->out, 0, now));
    bool frozen = false;
    size_t done = 0;
    for (size_t ci = 0; done < in->len && !r->stopped; ci++) {
        uint16_t d = 0;
        size_t piece = in->len - done;
        if (in->nchunks) {
            const uint8_t *q = in->chunks + 2 * (ci % in->nchunks);
            d = (uint16_t)(q[0] << 8 | q[1]);
            size_t want = 1 + (d & 0x1FFF) % in->len;
            piece = want < piece ? want : piece;
        }
        if (d & 0x2000) {
            now += 1000000000ull;
            after_call(r, iw_conn_handle_expiry(r->conn, now));
        }
        if (r->stopped)
            break;
        /* Each chunk its own exact-size block, as a receive buffer. */
        uint8_t *buf = fuzz_dup(in->stream + done, piece);
        if (split) {
            feed_split(r, buf, piece, d, ci, now);
        } else {
            iw_ssize rc = iw_conn_recv(r->conn, buf, piece, now);
            after_call(r, rc);
            FUZZ_CHECK(rc < 0 || (size_t)rc == piece);
        }
        free(buf);
        done += piece;
        if (!r->stopped)
            after_call(r, fz_drain(r->conn, &r->out, 1 + (d & 0xFFF), now));
        check_memory(r, frozen);
        /* Once the stream left RTS nothing may be placed any more. */
        iw_conn_state st = iw_conn_get_state(r->conn);
        if (!frozen && (st == IW_CONN_TERMINATE || st == IW_CONN_CLOSED)) {
            frozen = true;
            memcpy(r->before, r->arena, ARENA);
        }
    }
    if (!r->stopped) {
        after_call(r, (in->cfg[6] & 0x80) ? iw_conn_close(r->conn, now)
                                          : iw_conn_rx_eof(r->conn, now));
        if (!r->stopped)
            after_call(r, fz_drain(r->conn, &r->out, 0, now));
    }
    check_memory(r, frozen);

    /* Output and Terminate rules. */
    const iw_conn_info *info = NULL;
    for (size_t i = 0; i < r->ev.n; i++)
        if (r->ev.v[i].type == IW_EV_CONNECTED)
            info = iw_conn_get_info(r->conn);
    fz_out o;
    fz_check_output(r->out.p, r->out.n, initiator, info, &o);
    fz_check_terminate(&r->ev, &o, r->out.n);

    /* Events: RECV MSNs count up from 1 within their buffers; completions
     * in post order; one CLOSED, last. */
    /* A p2p responder's first MSN may go to the zero-length Send RTR
     * (RFC 6581 §9), which completes nothing. */
    bool rtr_send = !initiator && info && info->p2p && (info->rtr & IW_RTR_SEND);
    uint32_t msn = 1;
    size_t wr = 0, closed = 0, rq = 0;
    for (size_t i = 0; i < r->ev.n; i++) {
        const fz_ev *e = &r->ev.v[i];
        FUZZ_CHECK(closed == 0);
        switch (e->type) {
        case IW_EV_RECV:
            FUZZ_CHECK(e->wr_id == 100 + rq);
            rq++;
            if (e->status == IW_WC_SUCCESS) {
                if (msn == 1 && rtr_send && e->msn == 2)
                    msn = 2;
                FUZZ_CHECK(e->msn == msn);
                msn++;
                FUZZ_CHECK(e->has_imm ? e->len == 0 : e->len <= RBUF);
            }
            break;
        case IW_EV_SEND_DONE:
        case IW_EV_WRITE_DONE:
        case IW_EV_READ_DONE:
        case IW_EV_ATOMIC_DONE:
            FUZZ_CHECK(wr < r->n_posted_wr && e->wr_id == r->posted_wr[wr]);
            wr++;
            break;
        case IW_EV_CLOSED:
            closed++;
            break;
        default:
            break;
        }
    }
    /* Once the stream has ended (EOF or close, below), every posted work
     * request has completed exactly once, flushed if not done (RFC 5040
     * §5.4, §5.5). After a failed callback the harness feeds nothing more
     * (the caller drops the connection), so only if the engine had ended
     * the stream itself: its flush reports everything even when callbacks
     * fail (finding 6). */
    iw_conn_state end = iw_conn_get_state(r->conn);
    if (!r->stopped || end == IW_CONN_TERMINATE || end == IW_CONN_CLOSED) {
        if (rq != (size_t)(in->cfg[6] & 7) || wr != r->n_posted_wr)
            fprintf(stderr, "completions: %zu of %u receives, %zu of %zu work requests\n", rq,
                    in->cfg[6] & 7, wr, r->n_posted_wr);
        FUZZ_CHECK(rq == (size_t)(in->cfg[6] & 7));
        FUZZ_CHECK(wr == r->n_posted_wr);
    }
    if (getenv("FUZZ_VERBOSE")) {
        fprintf(stderr, "  run %s: %zu output octets, %zu FPDUs, events:", split ? "B" : "A",
                r->out.n, o.fpdus);
        for (size_t i = 0; i < r->ev.n; i++)
            fprintf(stderr, r->ev.v[i].type == IW_EV_TERM_SENT ? " TERM_SENT(%04x)" : " %d/%d",
                    r->ev.v[i].type == IW_EV_TERM_SENT ? r->ev.v[i].term.triple : r->ev.v[i].type,
                    r->ev.v[i].status);
        fprintf(stderr, "%s\n", r->stopped ? " (stopped)" : "");
    }
    iw_conn_del(r->conn);
    iw_rnic_del(rnic);
}

static void run_free(run *r) {
    free(r->ev.v);
    free(r->out.p);
    free(r->arena);
    free(r->before);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (src[1] == 0)
        for (size_t i = 0; i < sizeof src; i++)
            src[i] = (uint8_t)(i * 13 + 1);
    fuzz_in fi = {data, size};
    input in = {0};
    static const uint8_t zero[HDR];
    in.cfg = size >= HDR ? data : zero;
    for (int i = 0; i < HDR; i++)
        fuzz_u8(&fi);
    in.nchunks = fuzz_u8(&fi) % 32;
    in.chunks = fi.p;
    if (fi.n < 2 * in.nchunks)
        return 0;
    fi.p += 2 * in.nchunks;
    fi.n -= 2 * in.nchunks;
    in.stream = fi.p;
    in.len = fi.n;

    run a, b;
    do_run(&in, false, &a);
    do_run(&in, true, &b);
    for (size_t i = 0; i < a.ev.n && i < b.ev.n; i++)
        if (!fz_ev_same_rfc(&a.ev.v[i], &b.ev.v[i])) {
            fprintf(stderr, "event %zu differs: type %d vs %d\n", i, a.ev.v[i].type,
                    b.ev.v[i].type);
            break;
        }
    FUZZ_CHECK(a.ev.n == b.ev.n);
    for (size_t i = 0; i < a.ev.n; i++)
        FUZZ_CHECK(fz_ev_same_rfc(&a.ev.v[i], &b.ev.v[i]));
    FUZZ_CHECK(a.out.n == b.out.n && memcmp(a.out.p, b.out.p, a.out.n) == 0);
    run_free(&a);
    run_free(&b);
    return 0;
}
