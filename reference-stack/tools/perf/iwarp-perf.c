/* iwarp-perf: what perftest's ib_{write,read,send}_{bw,lat} are for RNICs,
 * for libiwarp's verbs API over TCP between two processes (docs/iwarp-perf.md).
 *
 * The server listens and follows the client: the client's HELLO Send names
 * the test, the sizes and its own buffer; the server answers with a READY
 * Send naming its buffer (STag/TO/length). The buffers travel in Sends, not in
 * the MPA private data, because the server sizes its buffers from the
 * client's parameters and a responder's Reply private data is fixed before
 * the Request arrives. The private data only carries PERF_PD_ID, so both
 * sides know at IW_EV_CONNECTED that they talk to iwarp-perf.
 *
 * Control messages are 64-octet Send with Solicited Event; data Sends are
 * plain Sends, so a receiver tells them apart by the solicited flag. Each
 * size runs as BEGIN -> GO, the timed operations, DONE -> RESULT; BYE ->
 * BYE ends the session. iWARP has no receiver-not-ready retry: a Send with
 * no posted buffer is a Terminate, so data Sends are credit-limited by the
 * receives the server has reported posting (rq_total in its messages).
 *
 * With --perftest, perftest.c speaks perftest's own -R exchange instead,
 * around the same timed loops and reports; perf.h holds what both share. */
#include <iwarp/wire.h>
#include "perf.h"

#include <arpa/inet.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int fail(perf *x, const char *fmt, ...) {
    if (!x->err[0]) { /* the first problem is the one worth reporting */
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(x->err, sizeof x->err, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* ---- data pattern: depends on offset and size, so misplaced, stale or
 * short data shows; receivers pre-fill with its complement ---- */

static uint8_t pattern_at(uint32_t size, size_t off) {
    uint32_t v = (uint32_t)off * 2654435761u + size * 40503u;
    return (uint8_t)(v >> 24 ^ v >> 11);
}

static void fill_pattern(uint8_t *p, uint32_t size, size_t n, bool invert) {
    uint8_t m = invert ? 0xFF : 0;
    for (size_t i = 0; i < n; i++)
        p[i] = pattern_at(size, i) ^ m;
}

/* Returns the first offset in [0, n) that differs, or n. */
static size_t check_pattern(const uint8_t *p, uint32_t size, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != pattern_at(size, i))
            return i;
    return n;
}

/* write_lat: the last octet carries the iteration. Ours is never 0 and
 * never the previous one; perftest's is the iteration + 1 as a char
 * (run_iter_lat_write: *post_buf = (char)++scnt), 0 after 255. */
static uint8_t stamp(const perf *x, uint64_t i) {
    return x->o->perftest ? (uint8_t)(i + 1) : (uint8_t)(i % 255 + 1);
}

/* ---- control messages (network byte order: pt_wire.h) ---- */

static void ctrl_encode(uint8_t *b, const ctrl_msg *m) {
    memset(b, 0, CTRL_LEN);
    iw_put_u32(b, CTRL_MAGIC);
    b[4] = m->type, b[5] = m->test, b[6] = m->flags, b[7] = m->status;
    iw_put_u32(b + 8, m->size);
    iw_put_u32(b + 12, m->depth);
    iw_put_u32(b + 16, m->stag);
    iw_put_u32(b + 20, m->duration_ms);
    iw_put_u64(b + 24, m->to);
    iw_put_u64(b + 32, m->len);
    iw_put_u64(b + 40, m->count);
    iw_put_u64(b + 48, m->rq_total);
    iw_put_u32(b + 56, m->bad_off);
}

static bool ctrl_decode(const uint8_t *b, ctrl_msg *m) {
    if (iw_get_u32(b) != CTRL_MAGIC || b[4] < C_HELLO || b[4] > C_BYE)
        return false;
    m->type = b[4], m->test = b[5], m->flags = b[6], m->status = b[7];
    m->size = iw_get_u32(b + 8);
    m->depth = iw_get_u32(b + 12);
    m->stag = iw_get_u32(b + 16);
    m->duration_ms = iw_get_u32(b + 20);
    m->to = iw_get_u64(b + 24);
    m->len = iw_get_u64(b + 32);
    m->count = iw_get_u64(b + 40);
    m->rq_total = iw_get_u64(b + 48);
    m->bad_off = iw_get_u32(b + 56);
    return true;
}

static const char *ctrl_name(int t) {
    static const char *const n[] = {"?", "HELLO", "READY", "BEGIN", "GO",
                                    "DONE", "RESULT", "CREDIT", "BYE"};
    return t >= C_HELLO && t <= C_BYE ? n[t] : "?";
}

const char *test_name(int t) {
    return t == T_WRITE ? "write" : t == T_READ ? "read" : "send";
}

/* ---- completions ---- */

/* Peak bandwidth: the best rate over win consecutive completions, windows
 * starting after the first win. Write and Send complete when TCP takes
 * them, so a window must hold far more than socket buffers can absorb
 * (see peak_window); shorter runs report the average as the peak. */
static void note_completion(perf *x) {
    uint64_t t = now_ns();
    x->last_done_ns = t;
    uint64_t k = x->completed++;
    if (x->win && k >= 2 * x->win) {
        uint64_t dt = t - x->ring[k % x->win];
        if (dt) {
            double bps = (double)x->win * x->cur / ((double)dt * 1e-9);
            if (bps > x->peak_bps)
                x->peak_bps = bps;
        }
    }
    if (x->win)
        x->ring[k % x->win] = t;
}

static int repost(perf *x, uint32_t slot) {
    int rc = iw_qp_post_recv(x->qp, slot, x->slots + (size_t)slot * x->slot_len, x->slot_len);
    /* A stream that takes no more work is ending: its Terminate or close
     * event follows and says why (or, after the last step, is expected). */
    if (rc == IW_ERR_PROTO)
        return 0;
    if (rc < 0)
        return fail(x, "post_recv: %s", iw_strerror(rc));
    x->rq_total++;
    return 0;
}

static int on_recv(perf *x, const iw_event *ev) {
    bool hello = ev->wr_id == UINT32_MAX;
    uint8_t *buf = hello ? x->hello_slot : x->slots + (size_t)ev->wr_id * x->slot_len;
    if (!hello && ev->wr_id >= x->n_slots)
        return fail(x, "receive completion for an unknown buffer");
    if (!x->o->perftest && (ev->solicited || hello)) {
        ctrl_msg m;
        if (ev->len != CTRL_LEN || !ctrl_decode(buf, &m))
            return fail(x, "malformed control message (%u octets): is the peer iwarp-perf?",
                        ev->len);
        if (m.rq_total > x->peer_rq_total)
            x->peer_rq_total = m.rq_total;
        if (m.type != C_CREDIT) {
            if (x->in_count == INBOX)
                return fail(x, "too many control messages queued");
            x->inbox[(x->in_head + x->in_count++) % INBOX] = m;
        }
    } else {
        if (x->test != T_SEND || !x->cur)
            return fail(x, "unexpected data Send of %u octets", ev->len);
        if (ev->len != x->cur)
            return fail(x, "data Send of %u octets, expected %u", ev->len, x->cur);
        if (x->verify) {
            size_t off = check_pattern(buf, x->cur, x->cur);
            if (off < x->cur && !x->bad++)
                x->bad_off = (uint32_t)off;
            fill_pattern(buf, x->cur, x->cur, true);
        }
        x->data_rx++;
        if (x->o->perftest)
            pt_on_data_recv(x);
        /* The server reposts a ping's buffer before it answers it. */
        if (!x->server && x->lat)
            x->peer_rq_total++;
    }
    return hello ? 0 : repost(x, (uint32_t)ev->wr_id);
}

static int on_wc(perf *x, const iw_wc *w) {
    const iw_event *ev = &w->ev;
    if (x->pt.cqp && w->qp == x->pt.cqp)
        return pt_on_event(x, ev);
    switch (ev->type) {
    case IW_EV_CONNECTED:
        x->connected = true;
        x->info = *ev->info;
        return 0;
    case IW_EV_REJECTED:
        x->closed = true;
        return fail(x, "the peer rejected the connection (MPA R=1)");
    case IW_EV_CLOSED:
        x->closed = true;
        if (x->bye)
            return 0;
        if (!x->connected && !x->server && x->o->perftest)
            return 0; /* perftest's server may not listen yet: pt_connect tries again */
        if (x->o->perftest && x->connected) {
            /* perftest closes as soon as it is done: what arrived before the
             * FIN counts, so progress() reports the close only once a round
             * brings nothing else. */
            x->close_why = ev->close;
            x->close_rfc = ev->rfc;
            return 0;
        }
        if (!x->connected && !x->server)
            return fail(x, "cannot connect to %s port %u: %s", x->o->host, x->o->port,
                        iw_close_str(ev->close));
        return fail(x, "connection closed: %s (%s)", iw_close_str(ev->close),
                    ev->rfc ? ev->rfc : "");
    case IW_EV_TERM_SENT:
        return fail(x, "sent a Terminate: %s (%s)", iw_term_str(ev->term.triple),
                    ev->rfc ? ev->rfc : "");
    case IW_EV_TERM_RECEIVED:
        return fail(x, "the peer sent a Terminate: %s", iw_term_str(ev->term.triple));
    default:
        break;
    }
    /* Flushed or remotely failed work comes with a Terminate or close event
     * (raised right after the flush); that event says why. */
    if (ev->status != IW_WC_SUCCESS)
        return 0;
    switch (ev->type) {
    case IW_EV_RECV:
        return on_recv(x, ev);
    case IW_EV_SEND_DONE:
    case IW_EV_WRITE_DONE:
    case IW_EV_READ_DONE:
        if (ev->wr_id & WR_CTRL)
            x->ctrl_done++;
        else
            note_completion(x);
        return 0;
    default:
        return 0;
    }
}

/* One round: handle what the CQ holds, else wait up to wait_ms for the
 * sockets. Returns the completions handled, or -1. */
int progress(perf *x, int wait_ms) {
    iw_wc wc[64];
    int n = iw_cq_poll(x->cq, wc, 64);
    if (n == 0) {
        int rc = iw_dev_progress(x->dev, wait_ms);
        if (rc < 0)
            return fail(x, "progress: %s", iw_strerror(rc));
        n = iw_cq_poll(x->cq, wc, 64);
    }
    for (int i = 0; i < n; i++)
        if (on_wc(x, &wc[i]) < 0)
            return -1;
    if (iw_cq_overflows(x->cq))
        return fail(x, "completion queue overflow");
    if (!n && x->closed && x->connected && !x->bye)
        return fail(x, "connection closed: %s (%s)", iw_close_str(x->close_why),
                    x->close_rfc ? x->close_rfc : "");
    /* Octets moved count as progress too; read only on idle rounds. */
    uint64_t bytes = x->last_bytes;
    if (!n) {
        bytes = 0;
        iw_qp *qps[2] = {x->qp, x->pt.cqp};
        for (int i = 0; i < 2; i++) {
            iw_conn_stats st;
            if (qps[i]) {
                iw_qp_get_stats(qps[i], &st);
                bytes += st.bytes_rx + st.bytes_tx;
            }
        }
    }
    if (perf_idle_expired(&x->last_activity, &x->last_bytes, now_ns(), n, bytes, IDLE_NS))
        return fail(x, "no progress for %llu s: is the peer alive?",
                    (unsigned long long)(IDLE_NS / 1000000000ull));
    return n;
}

int wait_ms(const perf *x) { return x->o->poll ? 0 : 100; }

/* Keep the device going for ms milliseconds without posting anything. */
int quiet_wait(perf *x, uint32_t ms) {
    uint64_t end = now_ns() + (uint64_t)ms * 1000000ull;
    for (uint64_t t = now_ns(); t < end; t = now_ns())
        if (progress(x, (int)((end - t) / 1000000ull) + 1) < 0)
            return -1;
    return 0;
}

static int send_ctrl(perf *x, ctrl_msg *m);

/* Progress, then housekeeping that may itself send: the server's credits. */
static int pump(perf *x) {
    int n = progress(x, wait_ms(x));
    if (n < 0)
        return -1;
    if (x->server && x->test == T_SEND && !x->lat && x->n_slots && !x->in_maint &&
        x->rq_total - x->rq_advertised >= x->n_slots / 4) {
        x->in_maint = true;
        ctrl_msg c = {.type = C_CREDIT};
        int rc = send_ctrl(x, &c);
        x->in_maint = false;
        if (rc < 0)
            return -1;
    }
    return n;
}

/* Send credits: receives the peer reported minus the Sends we posted. */
static uint64_t credits(const perf *x) {
    return x->peer_rq_total > x->sent_total ? x->peer_rq_total - x->sent_total : 0;
}

static int send_ctrl(perf *x, ctrl_msg *m) {
    /* The server's own messages are bounded (one per request, credits once
     * per quarter window), within CLIENT_RQ; the client counts. */
    while ((!x->server && credits(x) < 1) || x->ctrl_posted - x->ctrl_done >= CTRL_RING)
        if (progress(x, wait_ms(x)) < 0)
            return -1;
    m->rq_total = x->rq_total;
    x->rq_advertised = x->rq_total;
    uint8_t *b = x->ctrl_tx[x->ctrl_posted % CTRL_RING];
    ctrl_encode(b, m);
    iw_send_wr wr = {.op = IW_WR_SEND_SE, .wr_id = WR_CTRL | x->ctrl_posted, .data = b,
                     .len = CTRL_LEN};
    int rc = iw_qp_post_send(x->qp, &wr);
    if (rc < 0)
        return fail(x, "posting %s: %s", ctrl_name(m->type), iw_strerror(rc));
    x->ctrl_posted++;
    x->sent_total++;
    return 0;
}

/* Wait for the next control message; want 0 takes any type. */
static int wait_ctrl(perf *x, int want, ctrl_msg *out) {
    while (!x->in_count)
        if (pump(x) < 0)
            return -1;
    *out = x->inbox[x->in_head];
    x->in_head = (x->in_head + 1) % INBOX;
    x->in_count--;
    if (want && out->type != want)
        return fail(x, "protocol error: got %s, expected %s", ctrl_name(out->type),
                    ctrl_name(want));
    return 0;
}

static bool inbox_has(const perf *x) { return x->in_count > 0; }

/* ---- set-up ---- */

void *alloc_buf(size_t len) {
    size_t n = (len + 4095) & ~(size_t)4095;
    void *p = aligned_alloc(4096, n ? n : 4096);
    if (p)
        memset(p, 0, n ? n : 4096); /* fault the pages in before any timing */
    return p;
}

void settings(const perf *x, iw_conn_settings *s) {
    iw_conn_settings_default(s, x->server ? IW_ROLE_RESPONDER : IW_ROLE_INITIATOR);
    s->mpa_rev = (uint8_t)x->o->mpa_rev;
    s->crc = x->o->crc;
    s->markers = x->o->markers;
    s->cut_through = x->o->cut_through;
    s->emss = x->o->emss;
    if (!x->o->perftest) { /* perftest's rdma_cm sends none */
        s->private_data = (const uint8_t *)PERF_PD_ID;
        s->private_data_len = (uint16_t)strlen(PERF_PD_ID);
    }
    /* The client reads, the server answers: its IRD must cover the
     * client's ORD even under MPA rev 1, which does not negotiate them. */
    s->ird = x->server ? MAX_ORD : 1;
    s->ord = x->server ? 1 : (uint16_t)(x->o->depth < MAX_ORD ? x->o->depth : MAX_ORD);
}

int open_dev(perf *x, uint32_t cq_depth) {
    int rc;
    if ((rc = iw_dev_open(&x->dev)) < 0 || (rc = iw_pd_alloc(iw_dev_rnic(x->dev), &x->pd)) < 0 ||
        (rc = iw_cq_create(x->dev, cq_depth, &x->cq)) < 0)
        return fail(x, "cannot open the device: %s", iw_strerror(rc));
    return 0;
}

/* Two registered buffers of buf_len octets, at least max_size. */
int alloc_bufs(perf *x) {
    if (x->buf_len < x->max_size)
        x->buf_len = x->max_size;
    x->sbuf = alloc_buf(x->buf_len);
    x->rbuf = alloc_buf(x->buf_len);
    if (!x->sbuf || !x->rbuf)
        return fail(x, "out of memory for two %zu-octet buffers", x->buf_len);
    iw_rnic *r = iw_dev_rnic(x->dev);
    int rc;
    if ((rc = iw_mr_reg(r, x->pd, x->sbuf, x->buf_len, (uintptr_t)x->sbuf, IW_ACCESS_LOCAL_WRITE,
                        &x->s_stag)) < 0 ||
        (rc = iw_mr_reg(r, x->pd, x->rbuf, x->buf_len, (uintptr_t)x->rbuf,
                        IW_ACCESS_LOCAL_WRITE | IW_ACCESS_REMOTE_WRITE | IW_ACCESS_REMOTE_READ,
                        &x->r_stag)) < 0)
        return fail(x, "cannot register memory: %s", iw_strerror(rc));
    return 0;
}

int alloc_slots(perf *x, uint32_t n, uint32_t len) {
    x->slot_len = len;
    x->slots = alloc_buf((size_t)n * len);
    if (!x->slots)
        return fail(x, "out of memory for %u receive buffers of %u octets", n, len);
    x->n_slots = n;
    for (uint32_t i = 0; i < n; i++)
        if (repost(x, i) < 0)
            return -1;
    return 0;
}

/* Completions that can be pending at once: receives, the data window,
 * control Sends, plus the flush of every receive at close. */
uint32_t cq_depth_for(uint32_t depth, uint32_t rq) {
    return 2 * (depth + rq + CTRL_RING) + 64;
}

static void destroy(perf *x) {
    iw_dev_close(x->dev); /* QPs, CQs, listeners, the rnic and its STags */
    free(x->pt.credit);
    free(x->sbuf);
    free(x->rbuf);
    free(x->slots);
    free(x->ring);
}

/* ---- per-size preparation (both sides, before GO) ---- */

void prepare_size(perf *x, uint32_t size) {
    x->cur = size;
    x->posted = x->completed = x->data_rx = x->pongs = x->bad = 0;
    x->bad_off = 0;
    x->peak_bps = 0;
    fill_pattern(x->sbuf, size, size, false);
    if (x->test == T_READ && x->server)
        fill_pattern(x->rbuf, size, size, false); /* the Read source */
    else if (x->verify)
        fill_pattern(x->rbuf, size, size, true);
    if (x->test == T_WRITE && x->lat)
        x->rbuf[size - 1] = 0;
    if (x->test == T_SEND && x->verify && x->slot_len >= size) /* the side receiving data */
        for (uint32_t i = 0; i < x->n_slots; i++)
            fill_pattern(x->slots + (size_t)i * x->slot_len, size, size, true);
}

/* ---- client: the timed loops ---- */

static int post_data(perf *x, uint32_t size) {
    iw_send_wr wr = {.wr_id = x->posted, .len = size};
    /* perftest's bandwidth runs walk both buffers in cache-line slots. */
    uint64_t off = x->o->perftest && !x->lat ? pt_offset(x, x->posted) : 0;
    switch (x->test) {
    case T_WRITE:
        wr.op = IW_WR_WRITE;
        wr.data = x->sbuf + off;
        wr.remote_stag = x->peer_stag;
        wr.remote_to = x->peer_to + off;
        break;
    case T_READ:
        wr.op = IW_WR_READ;
        wr.remote_stag = x->peer_stag;
        wr.remote_to = x->peer_to + off;
        wr.local_stag = x->r_stag;
        wr.local_to = (uintptr_t)x->rbuf + off;
        break;
    default:
        wr.op = IW_WR_SEND;
        wr.data = x->sbuf;
        x->sent_total++;
        break;
    }
    int rc = iw_qp_post_send(x->qp, &wr);
    if (rc < 0)
        return fail(x, "post_send: %s", iw_strerror(rc));
    x->posted++;
    return 0;
}

static bool may_post(const perf *x) {
    if (x->test != T_SEND)
        return true;
    return x->o->perftest ? pt_may_send(x) : credits(x) > CREDIT_RESERVE;
}

static int finish_size(perf *x, uint64_t ops, ctrl_msg *res) {
    ctrl_msg d = {.type = C_DONE, .count = ops};
    if (send_ctrl(x, &d) < 0 || wait_ctrl(x, C_RESULT, res) < 0)
        return -1;
    if (res->status == ST_MISMATCH)
        return fail(x, "verify FAILED at %u octets: the server saw wrong data at offset %u",
                    x->cur, res->bad_off);
    if (res->status != ST_OK)
        return fail(x, "the server reported an error for size %u", x->cur);
    if (x->test == T_SEND && res->count != ops)
        return fail(x, "the server received %llu Sends, %llu were sent",
                    (unsigned long long)res->count, (unsigned long long)ops);
    return 0;
}

/* At least a tenth of the run, the depth, and PEAK_BYTES on the wire (FPDU
 * framing ~24 octets); 0 (no peak) when the run cannot hold two windows. */
#define PEAK_BYTES (64ull << 20)
#define PEAK_WIN_MAX (1u << 20)
static uint64_t peak_window(uint64_t iters, uint32_t depth, uint32_t size) {
    uint64_t w = PEAK_BYTES / ((uint64_t)size + 24);
    if (w < depth)
        w = depth;
    if (iters && w < iters / 10)
        w = iters / 10;
    if (w > PEAK_WIN_MAX)
        w = PEAK_WIN_MAX;
    return iters && 2 * w > iters ? 0 : w;
}

int run_bw(perf *x, uint32_t size, uint64_t iters, double secs, bw_result *r) {
    x->win = peak_window(iters, x->depth, size);
    free(x->ring);
    x->ring = x->win ? calloc(x->win, sizeof *x->ring) : NULL;
    if (x->win && !x->ring)
        return fail(x, "out of memory");
    uint64_t t0 = now_ns();
    uint64_t end = secs > 0 ? t0 + (uint64_t)(secs * 1e9) : 0;
    for (;;) {
        bool more = end ? now_ns() < end : x->posted < iters;
        while (more && x->posted - x->completed < x->depth && may_post(x)) {
            if (post_data(x, size) < 0)
                return -1;
            more = end ? now_ns() < end : x->posted < iters;
        }
        if (!more && x->completed == x->posted)
            break;
        if (pump(x) < 0)
            return -1;
    }
    /* Ours: until the server's RESULT, so the time covers placement at the
     * server. perftest's: until the last completion. */
    uint64_t t1 = x->last_done_ns > t0 ? x->last_done_ns : now_ns();
    if (!x->o->perftest) {
        ctrl_msg res;
        if (finish_size(x, x->posted, &res) < 0)
            return -1;
        t1 = now_ns();
    }
    if (x->verify && x->test == T_READ) {
        size_t off = check_pattern(x->rbuf, size, size);
        if (off < size)
            return fail(x, "verify FAILED at %u octets: Read data wrong at offset %zu", size, off);
    }
    r->ops = x->posted;
    r->secs = t1 > t0 ? (double)(t1 - t0) * 1e-9 : 1e-9;
    double avg = (double)r->ops * size / r->secs;
    r->peak_bps = x->peak_bps > avg ? x->peak_bps : avg;
    return 0;
}

/* write_lat: the pattern, then the iteration's stamp in the last octet. */
static int verify_ping(perf *x, const uint8_t *buf, uint8_t st) {
    uint32_t n = x->cur;
    size_t off = check_pattern(buf, n, n - 1);
    if (off == n - 1 && buf[n - 1] == st)
        return 0;
    return fail(x, "verify FAILED at %u octets: wrong data at offset %zu", n, off);
}

/* Sample i of a latency run: how long one ping-pong (or Read) took. */
static int lat_once(perf *x, uint64_t i, double *us) {
    uint32_t size = x->cur;
    uint64_t t0 = now_ns();
    switch (x->test) {
    case T_WRITE: {
        /* perftest's write_lat: the peer polls the last octet of its buffer
         * and writes back; we poll ours. */
        uint8_t st = stamp(x, i);
        x->sbuf[size - 1] = st;
        if (post_data(x, size) < 0)
            return -1;
        volatile const uint8_t *last = x->rbuf + size - 1;
        while (*last != st)
            if (progress(x, wait_ms(x)) < 0)
                return -1;
        *us = (double)(now_ns() - t0) / 2e3;
        if (x->verify) {
            if (verify_ping(x, x->rbuf, st) < 0)
                return -1;
            fill_pattern(x->rbuf, size, size, true);
            x->rbuf[size - 1] = 0;
        }
        return 0;
    }
    case T_SEND:
        if (post_data(x, size) < 0)
            return -1;
        while (x->data_rx <= i)
            if (progress(x, wait_ms(x)) < 0)
                return -1;
        *us = (double)(now_ns() - t0) / 2e3;
        if (x->bad)
            return fail(x, "verify FAILED at %u octets: pong data wrong at offset %u", size,
                        x->bad_off);
        return 0;
    default:
        if (post_data(x, size) < 0)
            return -1;
        while (x->completed <= i)
            if (progress(x, wait_ms(x)) < 0)
                return -1;
        *us = (double)(now_ns() - t0) / 1e3; /* a Read is itself a round trip */
        if (x->verify) {
            size_t off = check_pattern(x->rbuf, size, size);
            if (off < size)
                return fail(x, "verify FAILED at %u octets: Read data wrong at offset %zu", size,
                            off);
            fill_pattern(x->rbuf, size, size, true);
        }
        return 0;
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(const double *s, uint64_t n, double p) {
    uint64_t k = (uint64_t)ceil(p * (double)n);
    return s[k ? k - 1 : 0];
}

int run_lat(perf *x, uint64_t iters, double secs, lat_result *r) {
    uint64_t cap = iters ? iters : 65536, n = 0;
    double *s = malloc(cap * sizeof *s);
    if (!s)
        return fail(x, "out of memory");
    uint64_t end = secs > 0 ? now_ns() + (uint64_t)(secs * 1e9) : 0;
    while (end ? now_ns() < end : n < iters) {
        if (n == cap) {
            double *t = realloc(s, 2 * cap * sizeof *s);
            if (!t) {
                free(s);
                return fail(x, "out of memory");
            }
            s = t;
            cap *= 2;
        }
        if (lat_once(x, n, &s[n]) < 0) {
            free(s);
            return -1;
        }
        n++;
    }
    ctrl_msg res;
    if (!x->o->perftest && finish_size(x, n, &res) < 0) {
        free(s);
        return -1;
    }
    lat_stats(s, n, r);
    free(s);
    return 0;
}

/* Sorts s: min, max, median, mean, sample deviation and percentiles. */
void lat_stats(double *s, uint64_t n, lat_result *r) {
    qsort(s, n, sizeof *s, cmp_double);
    double sum = 0, sq = 0;
    for (uint64_t i = 0; i < n; i++)
        sum += s[i];
    r->n = n;
    r->avg = n ? sum / (double)n : 0;
    for (uint64_t i = 0; i < n; i++)
        sq += (s[i] - r->avg) * (s[i] - r->avg);
    r->stdev = n > 1 ? sqrt(sq / (double)(n - 1)) : 0;
    r->min = n ? s[0] : 0;
    r->max = n ? s[n - 1] : 0;
    r->median = n ? s[n / 2] : 0;
    r->p99 = n ? pct(s, n, 0.99) : 0;
    r->p999 = n ? pct(s, n, 0.999) : 0;
}

/* ---- client: output ---- */

void print_header(const perf *x) {
    const opts *o = x->o;
    static const char *const title[2][4] = {{"", "RDMA_Write BW", "RDMA_Read BW", "Send BW"},
                                            {"", "RDMA_Write Latency", "RDMA_Read Latency",
                                             "Send Latency"}};
    printf(DASHES);
    printf("                    %s Test\n", title[x->lat][x->test]);
    bool v6 = strchr(o->host, ':') != NULL;
    printf(" Transport       : iWARP over TCP (libiwarp verbs), %sserver %s%s%s:%u\n",
           o->perftest ? "perftest " : "", v6 ? "[" : "", o->host, v6 ? "]" : "", o->port);
    if (o->perftest)
        printf(" Peer            : perftest %s (--perftest: its -R exchange over a second QP)\n",
               x->pt.peer_version);
    printf(" MPA             : rev %u%s, CRC %s, markers tx %s / rx %s, MULPDU %u (EMSS %u)\n",
           x->info.mpa_rev, x->info.enhanced ? " (enhanced)" : "", x->info.crc ? "on" : "off",
           x->info.markers_tx ? "on" : "off", x->info.markers_rx ? "on" : "off", x->info.mulpdu,
           o->emss);
    if (x->lat)
        printf(" Mode            : ping-pong%s, %s\n",
               x->test == T_WRITE  ? " (poll the last octet, perftest write_lat)"
               : x->test == T_SEND ? " (Send / Send)"
                                   : " (one Read at a time)",
               x->test == T_READ ? "time per Read" : "time = round trip / 2");
    else
        printf(" TX depth        : %u%s\n", x->depth,
               x->test == T_READ ? "" : " (completion = handed to TCP)");
    printf(" IRD / ORD       : %u / %u\n", x->info.ird, x->info.ord);
    printf(" Verify          : %s      Polling: %s\n", x->verify ? "on" : "off",
           o->poll ? "busy (--poll)" : "epoll");
    printf(" Local buffer    : STag 0x%08x TO 0x%016llx len %zu\n", x->r_stag,
           (unsigned long long)(uintptr_t)x->rbuf, x->buf_len);
    if (o->perftest)
        printf(" Remote buffer   : STag 0x%08x TO 0x%016llx (pingpong_dest: QPN 0x%04x PSN "
               "0x%06x out_reads %u)\n",
               x->peer_stag, (unsigned long long)x->peer_to, x->pt.rem.qpn, x->pt.rem.psn,
               x->pt.rem.out_reads);
    else
        printf(" Remote buffer   : STag 0x%08x TO 0x%016llx len %llu (server's READY Send)\n",
               x->peer_stag, (unsigned long long)x->peer_to, (unsigned long long)x->peer_len);
    printf(DASHES);
    if (x->lat)
        printf(" %-10s %-12s %12s %12s %16s %12s %14s %12s %12s\n", "#bytes", "#iterations",
               "t_min[usec]", "t_max[usec]", "t_typical[usec]", "t_avg[usec]", "t_stdev[usec]",
               "t_99[usec]", "t_99.9[usec]");
    else
        printf(" %-10s %-12s %16s %19s %18s %15s\n", "#bytes", "#iterations", "BW peak[MB/s]",
               "BW average[MB/s]", "BW average[Gb/s]", "MsgRate[Mpps]");
    fflush(stdout);
}

static void json_common(const perf *x, uint32_t size, uint64_t n) {
    printf("{\"test\":\"%s\",\"mode\":\"%s\",\"bytes\":%u,\"iterations\":%llu,"
           "\"mpa_rev\":%u,\"crc\":%s,\"markers_tx\":%s,\"markers_rx\":%s,\"mulpdu\":%u,"
           "\"emss\":%u,\"depth\":%u,\"verify\":\"%s\",",
           test_name(x->test), x->lat ? "lat" : "bw", size, (unsigned long long)n,
           x->info.mpa_rev, x->info.crc ? "true" : "false", x->info.markers_tx ? "true" : "false",
           x->info.markers_rx ? "true" : "false", x->info.mulpdu, x->o->emss,
           x->lat ? 1 : x->depth, x->verify ? "ok" : "off");
}

void report_bw(const perf *x, uint32_t size, const bw_result *r) {
    double avg = (double)r->ops * size / r->secs;
    double rate = (double)r->ops / r->secs / 1e6;
    if (x->o->json) {
        json_common(x, size, r->ops);
        printf("\"seconds\":%.6f,\"bw_peak_MBps\":%.2f,\"bw_avg_MBps\":%.2f,"
               "\"bw_avg_Gbps\":%.3f,\"msg_rate_Mpps\":%.6f}\n",
               r->secs, r->peak_bps / MB, avg / MB, avg * 8 / 1e9, rate);
    } else {
        printf(" %-10u %-12llu %16.2f %19.2f %18.3f %15.6f\n", size, (unsigned long long)r->ops,
               r->peak_bps / MB, avg / MB, avg * 8 / 1e9, rate);
    }
    fflush(stdout);
}

void report_lat(const perf *x, uint32_t size, const lat_result *r) {
    if (x->o->json) {
        json_common(x, size, r->n);
        printf("\"t_min_us\":%.3f,\"t_max_us\":%.3f,\"t_typical_us\":%.3f,\"t_avg_us\":%.3f,"
               "\"t_stdev_us\":%.3f,\"t_99_us\":%.3f,\"t_99_9_us\":%.3f}\n",
               r->min, r->max, r->median, r->avg, r->stdev, r->p99, r->p999);
    } else {
        printf(" %-10u %-12llu %12.2f %12.2f %16.2f %12.2f %14.2f %12.2f %12.2f\n", size,
               (unsigned long long)r->n, r->min, r->max, r->median, r->avg, r->stdev, r->p99,
               r->p999);
    }
    fflush(stdout);
}

/* ---- client ---- */

uint64_t iters_for(const opts *o, uint32_t size) {
    if (o->iters)
        return o->iters;
    /* perftest: DEF_ITERS_WB for write bandwidth, DEF_ITERS otherwise. */
    uint64_t def = !o->lat && o->test == T_WRITE ? 5000 : 1000, cap = AUTO_BYTES / size;
    if (cap < 100)
        cap = 100;
    /* Against perftest both sides must count alike: its default, uncapped. */
    return def < cap || o->perftest ? def : cap;
}

static int connect_wait(perf *x) {
    while (!x->connected)
        if (progress(x, wait_ms(x)) < 0)
            return -1;
    if (x->info.peer_private_data_len < strlen(PERF_PD_ID) ||
        memcmp(x->info.peer_private_data, PERF_PD_ID, strlen(PERF_PD_ID)) != 0)
        return fail(x, "the peer is not iwarp-perf (MPA private data does not say '%s')",
                    PERF_PD_ID);
    /* --connect-delay: no FPDU right after the Reply (docs/iwarp-perf.md). */
    return x->server ? 0 : quiet_wait(x, x->o->connect_delay_ms);
}

/* Orderly end: BYE both ways, then the client closes the stream. */
static int client_bye(perf *x) {
    ctrl_msg m = {.type = C_BYE};
    if (send_ctrl(x, &m) < 0 || wait_ctrl(x, C_BYE, &m) < 0)
        return -1;
    x->bye = true;
    int rc = iw_qp_close(x->qp);
    if (rc < 0)
        return fail(x, "close: %s", iw_strerror(rc));
    while (!x->closed)
        if (progress(x, wait_ms(x)) < 0)
            return -1;
    return 0;
}

static int run_client(perf *x) {
    const opts *o = x->o;
    x->test = o->test;
    x->lat = o->lat;
    x->verify = o->verify;
    x->depth = o->lat ? 1 : o->depth;
    x->max_size = o->all ? 1u << SWEEP_HI : o->size;
    if (open_dev(x, cq_depth_for(x->depth, CLIENT_RQ)) < 0 || alloc_bufs(x) < 0)
        return -1;
    iw_conn_settings s;
    settings(x, &s);
    int rc = iw_qp_create(x->dev, x->pd, x->cq, &s, &x->qp);
    if (rc < 0)
        return fail(x, "cannot create the QP: %s", iw_strerror(rc));
    rc = iw_qp_connect(x->qp, o->host, o->port);
    if (rc < 0)
        return fail(x, "cannot connect to %s:%u: %s", o->host, o->port, iw_strerror(rc));
    /* Pongs of the send test land here too: room for the largest. */
    bool pongs = x->test == T_SEND && x->lat;
    uint32_t slot = pongs && x->max_size > CTRL_LEN ? x->max_size : CTRL_LEN;
    x->last_activity = now_ns();
    if (alloc_slots(x, pongs ? LAT_RQ : CLIENT_RQ, slot) < 0 || connect_wait(x) < 0)
        return -1;

    x->peer_rq_total = 1; /* the server posts one receive for HELLO */
    ctrl_msg h = {.type = C_HELLO, .test = (uint8_t)x->test,
                  .flags = (uint8_t)((x->lat ? F_LAT : 0) | (x->verify ? F_VERIFY : 0)),
                  .size = x->max_size, .depth = x->depth, .stag = x->r_stag,
                  .to = (uintptr_t)x->rbuf, .len = x->buf_len};
    ctrl_msg r;
    if (send_ctrl(x, &h) < 0 || wait_ctrl(x, C_READY, &r) < 0)
        return -1;
    if (r.status != ST_OK)
        return fail(x, "the server refused the test (it could not allocate %u-octet buffers)",
                    x->max_size);
    x->peer_stag = r.stag;
    x->peer_to = r.to;
    x->peer_len = r.len;
    if (!o->json)
        print_header(x);

    uint32_t lo = o->all ? 1u << SWEEP_LO : o->size, hi = x->max_size;
    for (uint32_t size = lo; size && size <= hi; size = o->all ? size * 2 : 0) {
        prepare_size(x, size);
        uint64_t iters = o->duration > 0 ? 0 : iters_for(o, size);
        ctrl_msg b = {.type = C_BEGIN, .size = size, .count = iters,
                      .duration_ms = (uint32_t)(o->duration * 1000)};
        ctrl_msg g;
        if (send_ctrl(x, &b) < 0 || wait_ctrl(x, C_GO, &g) < 0)
            return -1;
        if (x->lat) {
            lat_result lr = {0};
            if (run_lat(x, iters, o->duration, &lr) < 0)
                return -1;
            report_lat(x, size, &lr);
        } else {
            bw_result br = {0};
            if (run_bw(x, size, iters, o->duration, &br) < 0)
                return -1;
            report_bw(x, size, &br);
        }
        if (!o->all)
            break;
    }
    if (!o->json)
        printf(DASHES);
    return client_bye(x);
}

/* ---- server ---- */

/* write_lat: answer each ping (its last octet changed) with a pong: limit
 * of them, or (limit 0) until a control message arrives. With samples,
 * sample i - 1 is half the time from pong i - 1 to pong i (limit - 1 of
 * them): perftest's client answers its server's pings so. */
int server_write_lat(perf *x, uint64_t limit, double *samples) {
    uint32_t size = x->cur;
    volatile const uint8_t *last = x->rbuf + size - 1;
    uint64_t prev = 0;
    for (uint64_t i = 0; !limit || i < limit; i++) {
        uint8_t st = stamp(x, i);
        while (*last != st) {
            if (!limit && inbox_has(x))
                return 0;
            if (progress(x, wait_ms(x)) < 0)
                return -1;
        }
        if (x->verify) {
            if (verify_ping(x, x->rbuf, st) < 0)
                return -1;
            fill_pattern(x->rbuf, size, size, true);
            x->rbuf[size - 1] = 0;
        }
        x->sbuf[size - 1] = st;
        iw_send_wr wr = {.op = IW_WR_WRITE, .wr_id = i, .data = x->sbuf, .len = size,
                         .remote_stag = x->peer_stag, .remote_to = x->peer_to};
        uint64_t t = now_ns();
        if (samples && i)
            samples[i - 1] = (double)(t - prev) / 2e3;
        prev = t;
        int rc = iw_qp_post_send(x->qp, &wr);
        if (rc < 0)
            return fail(x, "post_send: %s", iw_strerror(rc));
        x->pongs = i + 1;
    }
    return 0;
}

/* send_lat: a Send back for every Send in: limit of them, or (limit 0)
 * until a control message arrives. */
int server_send_lat(perf *x, uint64_t limit) {
    for (;;) {
        while (x->pongs < x->data_rx && (!limit || x->pongs < limit)) {
            iw_send_wr wr = {.op = IW_WR_SEND, .wr_id = x->pongs, .data = x->sbuf, .len = x->cur};
            int rc = iw_qp_post_send(x->qp, &wr);
            if (rc < 0)
                return fail(x, "post_send: %s", iw_strerror(rc));
            x->pongs++;
        }
        if (limit ? x->pongs >= limit : inbox_has(x))
            return 0;
        if (pump(x) < 0)
            return -1;
    }
}

static int server_session(perf *x) {
    ctrl_msg h;
    if (wait_ctrl(x, C_HELLO, &h) < 0)
        return -1;
    if (h.test < T_WRITE || h.test > T_SEND || !h.size || h.size > MAX_MSG || !h.depth ||
        h.depth > MAX_DEPTH)
        return fail(x, "HELLO with parameters out of range");
    x->test = h.test;
    x->lat = h.flags & F_LAT;
    x->verify = h.flags & F_VERIFY;
    x->max_size = h.size;
    x->depth = h.depth;
    x->peer_stag = h.stag;
    x->peer_to = h.to;
    x->peer_len = h.len;
    ctrl_msg r = {.type = C_READY};
    uint32_t slot = CTRL_LEN, n = CTRL_RQ;
    if (x->test == T_SEND) {
        slot = x->max_size > CTRL_LEN ? x->max_size : CTRL_LEN;
        n = LAT_RQ;
        if (!x->lat) {
            /* The credit window: the depth plus the reserve, within RECV_MEM. */
            uint64_t by_mem = RECV_MEM / slot, want = (uint64_t)x->depth + 2 * CREDIT_RESERVE;
            n = (uint32_t)(want < by_mem ? want : by_mem);
            if (n < 2 * CREDIT_RESERVE)
                n = 2 * CREDIT_RESERVE;
        }
    }
    if (alloc_bufs(x) < 0 || alloc_slots(x, n, slot) < 0) {
        /* Tell the client why, then give up. */
        r.status = ST_ERROR;
        char why[sizeof x->err];
        memcpy(why, x->err, sizeof why);
        x->err[0] = '\0';
        if (send_ctrl(x, &r) == 0)
            for (int i = 0; i < 20 && !x->closed && progress(x, 50) >= 0; i++)
                ;
        x->err[0] = '\0';
        return fail(x, "%s", why);
    }
    r.stag = x->r_stag;
    r.to = (uintptr_t)x->rbuf;
    r.len = x->buf_len;
    if (send_ctrl(x, &r) < 0)
        return -1;
    if (!x->o->json) {
        printf(" client: %s %s, sizes up to %u, %s; verify %s\n", test_name(x->test),
               x->lat ? "latency" : "bandwidth", x->max_size,
               x->lat ? "ping-pong" : "windowed", x->verify ? "on" : "off");
        fflush(stdout);
    }
    for (;;) {
        ctrl_msg m;
        if (wait_ctrl(x, 0, &m) < 0)
            return -1;
        if (m.type == C_BEGIN) {
            if (!m.size || m.size > x->max_size)
                return fail(x, "BEGIN with size %u out of range", m.size);
            prepare_size(x, m.size);
            ctrl_msg g = {.type = C_GO};
            if (send_ctrl(x, &g) < 0)
                return -1;
            if (x->lat && x->test == T_WRITE && server_write_lat(x, 0, NULL) < 0)
                return -1;
            if (x->lat && x->test == T_SEND && server_send_lat(x, 0) < 0)
                return -1;
        } else if (m.type == C_DONE) {
            ctrl_msg res = {.type = C_RESULT, .count = x->data_rx};
            if (x->verify && x->test == T_WRITE && !x->lat) {
                size_t off = check_pattern(x->rbuf, x->cur, x->cur);
                if (off < x->cur && !x->bad++)
                    x->bad_off = (uint32_t)off;
            }
            if (x->bad) {
                res.status = ST_MISMATCH;
                res.bad_off = x->bad_off;
                fprintf(stderr, PROG ": verify FAILED at %u octets: offset %u\n", x->cur,
                        x->bad_off);
            }
            if (send_ctrl(x, &res) < 0)
                return -1;
            if (!x->o->json) {
                printf(" size %-9u %llu operations%s\n", x->cur, (unsigned long long)m.count,
                       !x->verify ? "" : x->bad ? ", verify FAILED" : ", verify ok");
                fflush(stdout);
            }
            x->cur = 0;
        } else if (m.type == C_BYE) {
            x->bye = true;
            ctrl_msg b = {.type = C_BYE};
            if (send_ctrl(x, &b) < 0)
                return -1;
            /* The client closes; its FIN ends our stream. */
            while (!x->closed)
                if (progress(x, wait_ms(x)) < 0)
                    return -1;
            return 0;
        } else {
            return fail(x, "protocol error: unexpected %s", ctrl_name(m.type));
        }
    }
}

static int run_server(perf *x) {
    const opts *o = x->o;
    /* The CQ must hold the largest receive window's flush at close. */
    if (open_dev(x, cq_depth_for(MAX_DEPTH, MAX_DEPTH + 2 * CREDIT_RESERVE)) < 0)
        return -1;
    int rc = iw_listen(x->dev, o->host, o->port, &x->lst);
    if (rc < 0)
        return fail(x, "cannot listen on %s:%u: %s", o->host, o->port, iw_strerror(rc));
    uint16_t port = iw_listener_port(x->lst);
    bool v6 = strchr(o->host, ':') != NULL;
    if (o->json)
        printf("{\"listening\":\"%s\",\"port\":%u}\n", o->host, port);
    else
        printf(PROG " server: listening on %s%s%s:%u\n", v6 ? "[" : "", o->host, v6 ? "]" : "",
               port);
    fflush(stdout);
    iw_conn_settings s;
    settings(x, &s);
    if ((rc = iw_qp_create(x->dev, x->pd, x->cq, &s, &x->qp)) < 0)
        return fail(x, "cannot create the QP: %s", iw_strerror(rc));
    while ((rc = iw_accept(x->lst, x->qp)) == IW_ERR_NEED_MORE)
        if ((rc = iw_dev_progress(x->dev, 1000)) < 0)
            break;
    if (rc < 0)
        return fail(x, "accept: %s", iw_strerror(rc));
    iw_listener_close(x->lst); /* one session, as perftest */
    x->lst = NULL;
    /* One receive for HELLO; the rest once we know the test. */
    if ((rc = iw_qp_post_recv(x->qp, UINT32_MAX, x->hello_slot, CTRL_LEN)) < 0)
        return fail(x, "post_recv: %s", iw_strerror(rc));
    x->rq_total = 1;
    x->last_activity = now_ns();
    if (connect_wait(x) < 0)
        return -1;
    if (!o->json) {
        printf(" MPA rev %u%s, CRC %s, markers tx %s / rx %s, MULPDU %u\n", x->info.mpa_rev,
               x->info.enhanced ? " (enhanced)" : "", x->info.crc ? "on" : "off",
               x->info.markers_tx ? "on" : "off", x->info.markers_rx ? "on" : "off",
               x->info.mulpdu);
        fflush(stdout);
    }
    if (server_session(x) < 0)
        return -1;
    if (!o->json)
        printf(PROG " server: session done\n");
    return 0;
}

/* ---- arguments ---- */

static const char usage_text[] =
    "Usage: " PROG " [OPTIONS]                 server: wait for one client\n"
    "       " PROG " [OPTIONS] SERVER_ADDR     client: run the test against a server\n"
    "\n"
    "perftest's ib_{write,read,send}_{bw,lat} for iWARP over TCP (libiwarp verbs).\n"
    "The client's test options decide the test; give the framing options to both sides.\n"
    "\n"
    "Test (client):\n"
    "  -t, --test write|read|send   operation (default write)\n"
    "      --lat                    latency (ping-pong) instead of bandwidth\n"
    "  -s, --size SIZE              message size, octets; K/M suffix (default 65536 bw, 2 lat)\n"
    "  -a, --all                    sweep sizes 2, 4, ... 8388608 (2^1 .. 2^23)\n"
    "  -n, --iters N                operations per size (default 5000 write bw, else 1000,\n"
    "                               as perftest; at most 1 GiB per size unless given)\n"
    "  -D, --duration SECONDS       run each size this long instead of -n\n"
    "  -q, --tx-depth DEPTH         outstanding operations, bw (default 128, max 4096)\n"
    "      --verify                 check every octet received (slows the test)\n"
    "      --json                   one JSON object per size instead of the table\n"
    "      --poll                   busy-poll instead of sleeping in epoll\n"
    "Framing (both sides):\n"
    "      --crc, --no-crc          MPA CRC (default on; off only if both sides say so)\n"
    "      --markers, --no-markers  require markers in the peer's FPDUs (default off)\n"
    "      --cut-through            place payload before its CRC is verified: zero copy,\n"
    "                               not RFC 5044 section 6 conformant (default: verify, then place)\n"
    "      --mpa-rev 1|2            MPA revision (default 2)\n"
    "      --emss N                 effective MSS for MULPDU, 128..65535 (default 1460;\n"
    "                               65483 on loopback, whose MTU is 65536)\n"
    "Connection:\n"
    "  -p, --port PORT              TCP port (default 18515; server: 0 picks one)\n"
    "  -b, --bind ADDR              server: listen address (default 127.0.0.1)\n"
    "      --connect-delay MS       initiator: wait MS after the MPA Reply before the first\n"
    "                               FPDU (default 0; 50 with --perftest: siw's Reply race)\n"
    "perftest (both sides, with perftest's options given to both, as perftest wants):\n"
    "      --perftest               speak perftest's -R protocol (ib_*_bw/lat -R, version\n"
    "                               6.06) instead of iwarp-perf's: the peer is perftest;\n"
    "                               the server then needs -t, --lat, -s and -n/-D too\n"
    "      --rx-depth N             send bw: receives posted / the sender's credit window\n"
    "                               (default 512, as perftest's -r; at most -n)\n"
    "  -h, --help, -V, --version\n"
    "\n"
    "Exit status: 0 success, 1 connection, protocol or verify failure, 2 usage error.\n";

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...) {
    va_list ap;
    fputs(PROG ": ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry '" PROG " --help'.\n", stderr);
    return -1;
}

/* Decimal, optional K/M/G (powers of 2), within [lo, hi]. */
static bool parse_num(const char *s, uint64_t lo, uint64_t hi, bool suffix, uint64_t *out) {
    if (!*s)
        return false;
    uint64_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        v = v * 10 + (uint64_t)(*s - '0');
        if (v > hi)
            return false;
    }
    if (suffix && *s && !s[1]) {
        unsigned sh = *s == 'K' || *s == 'k' ? 10 : *s == 'M' || *s == 'm' ? 20
                      : *s == 'G' || *s == 'g' ? 30 : 0;
        if (!sh || v > hi >> sh)
            return false;
        v <<= sh;
        s++;
    }
    if (*s || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static bool valid_addr(const char *a) {
    uint8_t buf[16];
    return inet_pton(AF_INET, a, buf) == 1 || inet_pton(AF_INET6, a, buf) == 1;
}

typedef struct opt_def {
    const char *s, *l;
    bool arg;
} opt_def;

static const opt_def opt_defs[] = {
    {"-t", "--test", true},    {NULL, "--lat", false},       {"-s", "--size", true},
    {"-a", "--all", false},    {"-n", "--iters", true},      {"-D", "--duration", true},
    {"-q", "--tx-depth", true}, {NULL, "--verify", false},   {NULL, "--json", false},
    {NULL, "--poll", false},   {NULL, "--crc", false},       {NULL, "--no-crc", false},
    {NULL, "--markers", false}, {NULL, "--no-markers", false}, {NULL, "--mpa-rev", true},
    {NULL, "--emss", true},    {NULL, "--cut-through", false},    {"-p", "--port", true},       {"-b", "--bind", true},
    {"-h", "--help", false},   {"-V", "--version", false},    {NULL, "--perftest", false},
    {NULL, "--connect-delay", true}, {NULL, "--rx-depth", true},
};

static int parse_opts(int argc, char **argv, opts *o) {
    memset(o, 0, sizeof *o);
    o->test = T_WRITE;
    o->crc = true;
    o->mpa_rev = 2;
    o->depth = 128;
    o->emss = 1460;
    o->port = DEFAULT_PORT;
    bool size_set = false, only_args = false, delay_set = false;
    const char *bind = NULL, *server = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_args || a[0] != '-' || !a[1]) {
            if (server)
                return usage_error("only one server address may be given ('%s' and '%s')",
                                   server, a);
            server = a;
            continue;
        }
        if (!strcmp(a, "--")) {
            only_args = true;
            continue;
        }
        /* --name=value, --name value, -x value, -xvalue */
        char name[32];
        const char *val = NULL;
        bool is_long = a[1] == '-';
        const char *eq = is_long ? strchr(a, '=') : NULL;
        size_t nl = eq ? (size_t)(eq - a) : is_long ? strlen(a) : 2;
        if (nl >= sizeof name)
            return usage_error("unknown option '%s'", a);
        memcpy(name, a, nl);
        name[nl] = '\0';
        const opt_def *d = NULL;
        for (size_t k = 0; k < sizeof opt_defs / sizeof opt_defs[0]; k++)
            if ((opt_defs[k].s && !strcmp(name, opt_defs[k].s)) || !strcmp(name, opt_defs[k].l))
                d = &opt_defs[k];
        if (!d)
            return usage_error("unknown option '%s'", a);
        if (eq)
            val = eq + 1;
        else if (!is_long && a[2])
            val = a + 2;
        if (d->arg && !val) {
            if (i + 1 >= argc)
                return usage_error("option '%s' needs an argument", name);
            val = argv[++i];
        } else if (!d->arg && val) {
            return usage_error("option '%s' takes no argument", name);
        }
        const char *l = d->l;
        uint64_t v;
        if (!strcmp(l, "--test")) {
            o->test = !strcmp(val, "write") ? T_WRITE : !strcmp(val, "read") ? T_READ
                      : !strcmp(val, "send") ? T_SEND : 0;
            if (!o->test)
                return usage_error("--test takes write, read or send, not '%s'", val);
        } else if (!strcmp(l, "--lat")) {
            o->lat = true;
        } else if (!strcmp(l, "--size")) {
            if (!parse_num(val, 1, MAX_MSG, true, &v))
                return usage_error("--size takes a size from 1 to %u (64M), not '%s'", MAX_MSG,
                                   val);
            o->size = (uint32_t)v;
            size_set = true;
        } else if (!strcmp(l, "--all")) {
            o->all = true;
        } else if (!strcmp(l, "--iters")) {
            if (!parse_num(val, 1, 1000000000000ull, false, &v))
                return usage_error("--iters takes a number from 1 to 10^12, not '%s'", val);
            o->iters = v;
        } else if (!strcmp(l, "--duration")) {
            char *end;
            double dv = strtod(val, &end);
            if (end == val || *end || !(dv > 0) || dv > 86400)
                return usage_error("--duration takes seconds, more than 0 and at most 86400, "
                                   "not '%s'", val);
            o->duration = dv;
        } else if (!strcmp(l, "--tx-depth")) {
            if (!parse_num(val, 1, MAX_DEPTH, false, &v))
                return usage_error("--tx-depth takes a number from 1 to %u, not '%s'", MAX_DEPTH,
                                   val);
            o->depth = (uint32_t)v;
        } else if (!strcmp(l, "--verify")) {
            o->verify = true;
        } else if (!strcmp(l, "--json")) {
            o->json = true;
        } else if (!strcmp(l, "--poll")) {
            o->poll = true;
        } else if (!strcmp(l, "--crc") || !strcmp(l, "--no-crc")) {
            o->crc = !strcmp(l, "--crc");
        } else if (!strcmp(l, "--markers") || !strcmp(l, "--no-markers")) {
            o->markers = !strcmp(l, "--markers");
        } else if (!strcmp(l, "--cut-through")) {
            o->cut_through = true;
        } else if (!strcmp(l, "--mpa-rev")) {
            if (strcmp(val, "1") && strcmp(val, "2"))
                return usage_error("--mpa-rev takes 1 or 2, not '%s'", val);
            o->mpa_rev = val[0] - '0';
        } else if (!strcmp(l, "--emss")) {
            if (!parse_num(val, 128, 65535, false, &v))
                return usage_error("--emss takes a number from 128 to 65535, not '%s'", val);
            o->emss = (uint32_t)v;
        } else if (!strcmp(l, "--port")) {
            if (!parse_num(val, 0, 65535, false, &v))
                return usage_error("--port takes a number from 0 to 65535, not '%s'", val);
            o->port = (uint16_t)v;
        } else if (!strcmp(l, "--bind")) {
            bind = val;
        } else if (!strcmp(l, "--perftest")) {
            o->perftest = true;
        } else if (!strcmp(l, "--connect-delay")) {
            if (!parse_num(val, 0, 10000, false, &v))
                return usage_error("--connect-delay takes milliseconds from 0 to 10000, not '%s'",
                                   val);
            o->connect_delay_ms = (uint32_t)v;
            delay_set = true;
        } else if (!strcmp(l, "--rx-depth")) {
            if (!parse_num(val, 1, 16384, false, &v))
                return usage_error("--rx-depth takes a number from 1 to 16384, not '%s'", val);
            o->rx_depth = (uint32_t)v;
        } else if (!strcmp(l, "--help")) {
            o->help = true;
        } else {
            o->version = true;
        }
    }
    if (o->help || o->version)
        return 0;
    o->server = server == NULL;
    if (o->all && size_set)
        return usage_error("-a (all sizes) and -s (one size) cannot be combined");
    if (o->iters && o->duration > 0)
        return usage_error("-n (iterations) and -D (duration) cannot be combined");
    if (!size_set)
        o->size = o->lat ? 2 : 65536;
    if (o->perftest) {
        /* perftest's side of the exchange fixes what can be run (perftest.c). */
        if (o->all)
            return usage_error("--perftest runs one size: -a is not supported");
        if (o->verify)
            return usage_error("--perftest cannot --verify: perftest's data is its own");
        if (o->lat && o->duration > 0)
            return usage_error("--perftest latency runs count iterations: -D is not supported "
                               "with --lat");
        /* perftest's write_lat server sends the first FPDU on the data QP;
         * as MPA responder we may not (RFC 5044 section 7.1.2 rule 4). */
        if (o->server && o->lat && o->test == T_WRITE)
            return usage_error("--perftest cannot serve write latency: perftest's write_lat "
                               "server sends first, which an MPA responder may not (RFC 5044 "
                               "7.1.2 rule 4); run iwarp-perf as the client");
        if (!delay_set)
            o->connect_delay_ms = 50;
    } else if (o->rx_depth) {
        return usage_error("--rx-depth is for --perftest (perftest's send_bw credits)");
    }
    if (o->server) {
        o->host = bind ? bind : "127.0.0.1";
        if (!valid_addr(o->host))
            return usage_error("--bind takes a numeric IPv4 or IPv6 address, not '%s'", o->host);
    } else {
        if (bind)
            return usage_error("--bind is for the server (no SERVER_ADDR)");
        if (!valid_addr(server))
            return usage_error("SERVER_ADDR must be a numeric IPv4 or IPv6 address, not '%s'",
                               server);
        if (o->port == 0)
            return usage_error("the client needs the server's port, not 0");
        o->host = server;
    }
    return 0;
}

int main(int argc, char **argv) {
    opts o;
    if (parse_opts(argc, argv, &o) < 0)
        return 2;
    if (o.help) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (o.version) {
        printf(PROG " %s (libiwarp verbs; control protocol %s)\n", PERF_VERSION, PERF_PD_ID);
        return 0;
    }
    static perf x; /* large (control rings); zeroed */
    x.o = &o;
    x.server = o.server;
    int rc = o.perftest ? (o.server ? pt_run_server(&x) : pt_run_client(&x))
                        : (o.server ? run_server(&x) : run_client(&x));
    if (rc < 0)
        fprintf(stderr, PROG ": %s\n", x.err[0] ? x.err : "failed");
    destroy(&x);
    return rc < 0 ? 1 : 0;
}
