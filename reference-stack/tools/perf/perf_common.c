/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwarp-perf's shared layer (perf_common.h): the event loop, the set-up,
 * the timed loops and the reports, for whichever protocol installed the
 * hooks. Nothing here names a protocol. */
#include "perf_common.h"
#include "perf_idle.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t perf_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int perf_fail(perf *x, const char *fmt, ...) {
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
size_t perf_check_pattern(const uint8_t *p, uint32_t size, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != pattern_at(size, i))
            return i;
    return n;
}

const char *perf_test_name(int t) {
    return t == PERF_WRITE ? "write" : t == PERF_READ ? "read" : "send";
}

/* ---- completions ---- */

/* Peak bandwidth: the best rate over win consecutive completions, windows
 * starting after the first win. Write and Send complete when TCP takes
 * them, so a window must hold far more than socket buffers can absorb
 * (see peak_window); shorter runs report the average as the peak. */
static void note_completion(perf *x) {
    uint64_t t = perf_now_ns();
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

int perf_repost(perf *x, uint32_t slot) {
    int rc = iw_qp_post_recv(x->qp, slot, x->slots + (size_t)slot * x->slot_len, x->slot_len);
    /* A stream that takes no more work is ending: its Terminate or close
     * event follows and says why (or, after the last step, is expected). */
    if (rc == IW_ERR_PROTO)
        return 0;
    if (rc < 0)
        return perf_fail(x, "post_recv: %s", iw_strerror(rc));
    x->rq_total++;
    return 0;
}

static int on_recv(perf *x, const iw_event *ev) {
    if (x->hk->recv) { /* the protocol's own messages */
        int rc = x->hk->recv(x, ev);
        if (rc != 0)
            return rc < 0 ? -1 : 0;
    }
    if (ev->wr_id >= x->n_slots)
        return perf_fail(x, "receive completion for an unknown buffer");
    uint8_t *buf = x->slots + (size_t)ev->wr_id * x->slot_len;
    if (x->test != PERF_SEND || !x->cur)
        return perf_fail(x, "unexpected data Send of %u octets", ev->len);
    if (ev->len != x->cur)
        return perf_fail(x, "data Send of %u octets, expected %u", ev->len, x->cur);
    if (x->verify) {
        size_t off = perf_check_pattern(buf, x->cur, x->cur);
        if (off < x->cur && !x->bad++)
            x->bad_off = (uint32_t)off;
        fill_pattern(buf, x->cur, x->cur, true);
    }
    x->data_rx++;
    if (x->hk->data_recv)
        x->hk->data_recv(x);
    return perf_repost(x, (uint32_t)ev->wr_id);
}

static int on_wc(perf *x, const iw_wc *w) {
    const iw_event *ev = &w->ev;
    if (x->aux_qp && w->qp == x->aux_qp)
        return x->hk->aux_event(x, ev);
    switch (ev->type) {
    case IW_EV_CONNECTED:
        x->connected = true;
        x->info = *ev->info;
        return 0;
    case IW_EV_REJECTED:
        x->closed = true;
        return perf_fail(x, x->o->transport == IW_TRANSPORT_SCTP
                                ? "the peer rejected the session (DDP Stream Session Reject)"
                                : "the peer rejected the connection (MPA R=1)");
    case IW_EV_CLOSED:
        x->closed = true;
        if (x->bye)
            return 0;
        if (!x->connected && !x->server && x->hk->retry_connect)
            return 0; /* the protocol tries again (perftest's server may not listen yet) */
        if (x->hk->defer_close && x->connected) {
            /* perftest closes as soon as it is done: what arrived before the
             * FIN counts, so perf_progress() reports the close only once a round
             * brings nothing else. */
            x->close_why = ev->close;
            x->close_rfc = ev->rfc;
            return 0;
        }
        if (!x->connected && !x->server && x->o->transport == IW_TRANSPORT_SCTP)
            return perf_fail(x,
                             "cannot connect to %s port %u: no SCTP association with the DDP "
                             "adaptation (refused, aborted or not answered)",
                             x->o->host, x->o->port);
        if (!x->connected && !x->server)
            return perf_fail(x, "cannot connect to %s port %u: %s", x->o->host, x->o->port,
                             iw_close_str(ev->close));
        return perf_fail(x, "connection closed: %s (%s)", iw_close_str(ev->close),
                         ev->rfc ? ev->rfc : "");
    case IW_EV_TERM_SENT:
        return perf_fail(x, "sent a Terminate: %s (%s)", iw_term_str(ev->term.triple),
                         ev->rfc ? ev->rfc : "");
    case IW_EV_TERM_RECEIVED:
        return perf_fail(x, "the peer sent a Terminate: %s", iw_term_str(ev->term.triple));
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
        if (ev->wr_id & PERF_WR_CTRL)
            x->ctrl_done++;
        else
            note_completion(x);
        return 0;
    default:
        return 0;
    }
}

int perf_progress(perf *x, int ms) {
    iw_wc wc[64];
    int n = iw_cq_poll(x->cq, wc, 64);
    if (n == 0) {
        int rc = iw_dev_progress(x->dev, ms);
        if (rc < 0)
            return perf_fail(x, "progress: %s", iw_strerror(rc));
        n = iw_cq_poll(x->cq, wc, 64);
    }
    for (int i = 0; i < n; i++)
        if (on_wc(x, &wc[i]) < 0)
            return -1;
    if (iw_cq_overflows(x->cq))
        return perf_fail(x, "completion queue overflow");
    if (!n && x->closed && x->connected && !x->bye)
        return perf_fail(x, "connection closed: %s (%s)", iw_close_str(x->close_why),
                         x->close_rfc ? x->close_rfc : "");
    /* Octets moved count as progress too; read only on idle rounds. */
    uint64_t bytes = x->last_bytes;
    if (!n) {
        bytes = 0;
        iw_qp *qps[2] = {x->qp, x->aux_qp};
        for (int i = 0; i < 2; i++) {
            iw_conn_stats st;
            if (qps[i]) {
                iw_qp_get_stats(qps[i], &st);
                bytes += st.bytes_rx + st.bytes_tx;
            }
        }
    }
    if (perf_idle_expired(&x->last_activity, &x->last_bytes, perf_now_ns(), n, bytes, PERF_IDLE_NS))
        return perf_fail(x, "no progress for %llu s: is the peer alive?",
                         (unsigned long long)(PERF_IDLE_NS / 1000000000ull));
    return n;
}

int perf_wait_ms(const perf *x) { return x->o->poll ? 0 : 100; }

/* Keep the device going for ms milliseconds without posting anything. */
int perf_quiet_wait(perf *x, uint32_t ms) {
    uint64_t end = perf_now_ns() + (uint64_t)ms * 1000000ull;
    for (uint64_t t = perf_now_ns(); t < end; t = perf_now_ns())
        if (perf_progress(x, (int)((end - t) / 1000000ull) + 1) < 0)
            return -1;
    return 0;
}

/* Progress, then the protocol's housekeeping, which may itself send. */
int perf_pump(perf *x) {
    int n = perf_progress(x, perf_wait_ms(x));
    if (n < 0)
        return -1;
    if (x->hk->pump && x->hk->pump(x) < 0)
        return -1;
    return n;
}

/* ---- set-up ---- */

void *perf_alloc_buf(size_t len) {
    size_t n = (len + 4095) & ~(size_t)4095;
    void *p = aligned_alloc(4096, n ? n : 4096);
    if (p)
        memset(p, 0, n ? n : 4096); /* fault the pages in before any timing */
    return p;
}

void perf_settings(const perf *x, iw_conn_settings *s) {
    iw_conn_settings_default(s, x->server ? IW_ROLE_RESPONDER : IW_ROLE_INITIATOR);
    s->mpa_rev = (uint8_t)x->o->mpa_rev;
    s->crc = x->o->crc;
    s->markers = x->o->markers;
    s->cut_through = x->o->cut_through;
    s->emss = x->o->emss;
    if (x->hk->private_data) {
        s->private_data = (const uint8_t *)x->hk->private_data;
        s->private_data_len = (uint16_t)strlen(x->hk->private_data);
    }
    /* The client reads, the server answers: its IRD must cover the
     * client's ORD even under MPA rev 1, which does not negotiate them. */
    s->ird = x->server ? PERF_MAX_ORD : 1;
    s->ord = x->server ? 1 : (uint16_t)(x->o->depth < PERF_MAX_ORD ? x->o->depth : PERF_MAX_ORD);
}

int perf_open_dev(perf *x, uint32_t cq_depth) {
    int rc;
    if ((rc = iw_dev_open_transport(&x->dev, x->o->transport)) < 0 ||
        (rc = iw_pd_alloc(iw_dev_rnic(x->dev), &x->pd)) < 0 ||
        (rc = iw_cq_create(x->dev, cq_depth, &x->cq)) < 0)
        return perf_fail(x, "cannot open the device: %s", iw_strerror(rc));
    return 0;
}

/* Two registered buffers of buf_len octets, at least max_size. */
int perf_alloc_bufs(perf *x) {
    if (x->buf_len < x->max_size)
        x->buf_len = x->max_size;
    x->sbuf = perf_alloc_buf(x->buf_len);
    x->rbuf = perf_alloc_buf(x->buf_len);
    if (!x->sbuf || !x->rbuf)
        return perf_fail(x, "out of memory for two %zu-octet buffers", x->buf_len);
    iw_rnic *r = iw_dev_rnic(x->dev);
    int rc;
    if ((rc = iw_mr_reg(r, x->pd, x->sbuf, x->buf_len, (uintptr_t)x->sbuf, IW_ACCESS_LOCAL_WRITE,
                        &x->s_stag)) < 0 ||
        (rc = iw_mr_reg(r, x->pd, x->rbuf, x->buf_len, (uintptr_t)x->rbuf,
                        IW_ACCESS_LOCAL_WRITE | IW_ACCESS_REMOTE_WRITE | IW_ACCESS_REMOTE_READ,
                        &x->r_stag)) < 0)
        return perf_fail(x, "cannot register memory: %s", iw_strerror(rc));
    return 0;
}

int perf_alloc_slots(perf *x, uint32_t n, uint32_t len) {
    x->slot_len = len;
    x->slots = perf_alloc_buf((size_t)n * len);
    if (!x->slots)
        return perf_fail(x, "out of memory for %u receive buffers of %u octets", n, len);
    x->n_slots = n;
    for (uint32_t i = 0; i < n; i++)
        if (perf_repost(x, i) < 0)
            return -1;
    return 0;
}

/* Completions that can be pending at once: receives, the data window,
 * control Sends, plus the flush of every receive at close. */
uint32_t perf_cq_depth_for(uint32_t depth, uint32_t rq) {
    return 2 * (depth + rq + PERF_CTRL_RING) + 64;
}

void perf_destroy(perf *x) {
    iw_dev_close(x->dev); /* QPs, CQs, listeners, the rnic and its STags */
    x->dev = NULL;
    free(x->sbuf);
    free(x->rbuf);
    free(x->slots);
    free(x->ring);
}

/* ---- per-size preparation (both sides, before GO) ---- */

void perf_prepare_size(perf *x, uint32_t size) {
    x->cur = size;
    x->posted = x->completed = x->data_rx = x->pongs = x->bad = 0;
    x->bad_off = 0;
    x->peak_bps = 0;
    fill_pattern(x->sbuf, size, size, false);
    if (x->test == PERF_READ && x->server)
        fill_pattern(x->rbuf, size, size, false); /* the Read source */
    else if (x->verify)
        fill_pattern(x->rbuf, size, size, true);
    if (x->test == PERF_WRITE && x->lat)
        x->rbuf[size - 1] = 0;
    if (x->test == PERF_SEND && x->verify && x->slot_len >= size) /* the side receiving data */
        for (uint32_t i = 0; i < x->n_slots; i++)
            fill_pattern(x->slots + (size_t)i * x->slot_len, size, size, true);
}

/* ---- client: the timed loops ---- */

static int post_data(perf *x, uint32_t size) {
    iw_send_wr wr = {.wr_id = x->posted, .len = size};
    /* perftest's bandwidth runs walk both buffers in cache-line slots. */
    uint64_t off = !x->lat && x->hk->data_offset ? x->hk->data_offset(x, x->posted) : 0;
    switch (x->test) {
    case PERF_WRITE:
        wr.op = IW_WR_WRITE;
        wr.data = x->sbuf + off;
        wr.remote_stag = x->peer_stag;
        wr.remote_to = x->peer_to + off;
        break;
    case PERF_READ:
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
        return perf_fail(x, "post_send: %s", iw_strerror(rc));
    x->posted++;
    return 0;
}

static bool may_post(const perf *x) {
    if (x->test != PERF_SEND)
        return true;
    return x->hk->may_send(x);
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

int perf_run_bw(perf *x, uint32_t size, uint64_t iters, double secs, perf_bw_result *r) {
    x->win = peak_window(iters, x->depth, size);
    free(x->ring);
    x->ring = x->win ? calloc(x->win, sizeof *x->ring) : NULL;
    if (x->win && !x->ring)
        return perf_fail(x, "out of memory");
    uint64_t t0 = perf_now_ns();
    uint64_t end = secs > 0 ? t0 + (uint64_t)(secs * 1e9) : 0;
    for (;;) {
        bool more = end ? perf_now_ns() < end : x->posted < iters;
        while (more && x->posted - x->completed < x->depth && may_post(x)) {
            if (post_data(x, size) < 0)
                return -1;
            more = end ? perf_now_ns() < end : x->posted < iters;
        }
        if (!more && x->completed == x->posted)
            break;
        if (perf_pump(x) < 0)
            return -1;
    }
    /* Until the peer confirms the size (iwarp-perf's RESULT), so the time
     * covers placement at the server; else until the last completion. */
    uint64_t t1 = x->last_done_ns > t0 ? x->last_done_ns : perf_now_ns();
    if (x->hk->end_size) {
        if (x->hk->end_size(x, x->posted) < 0)
            return -1;
        t1 = perf_now_ns();
    }
    if (x->verify && x->test == PERF_READ) {
        size_t off = perf_check_pattern(x->rbuf, size, size);
        if (off < size)
            return perf_fail(x, "verify FAILED at %u octets: Read data wrong at offset %zu", size,
                             off);
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
    size_t off = perf_check_pattern(buf, n, n - 1);
    if (off == n - 1 && buf[n - 1] == st)
        return 0;
    return perf_fail(x, "verify FAILED at %u octets: wrong data at offset %zu", n, off);
}

/* Sample i of a latency run: how long one ping-pong (or Read) took. */
static int lat_once(perf *x, uint64_t i, double *us) {
    uint32_t size = x->cur;
    uint64_t t0 = perf_now_ns();
    switch (x->test) {
    case PERF_WRITE: {
        /* perftest's write_lat: the peer polls the last octet of its buffer
         * and writes back; we poll ours. */
        uint8_t st = x->hk->stamp(i);
        x->sbuf[size - 1] = st;
        if (post_data(x, size) < 0)
            return -1;
        volatile const uint8_t *last = x->rbuf + size - 1;
        while (*last != st)
            if (perf_progress(x, perf_wait_ms(x)) < 0)
                return -1;
        *us = (double)(perf_now_ns() - t0) / 2e3;
        if (x->verify) {
            if (verify_ping(x, x->rbuf, st) < 0)
                return -1;
            fill_pattern(x->rbuf, size, size, true);
            x->rbuf[size - 1] = 0;
        }
        return 0;
    }
    case PERF_SEND:
        if (post_data(x, size) < 0)
            return -1;
        while (x->data_rx <= i)
            if (perf_progress(x, perf_wait_ms(x)) < 0)
                return -1;
        *us = (double)(perf_now_ns() - t0) / 2e3;
        if (x->bad)
            return perf_fail(x, "verify FAILED at %u octets: pong data wrong at offset %u", size,
                             x->bad_off);
        return 0;
    default:
        if (post_data(x, size) < 0)
            return -1;
        while (x->completed <= i)
            if (perf_progress(x, perf_wait_ms(x)) < 0)
                return -1;
        *us = (double)(perf_now_ns() - t0) / 1e3; /* a Read is itself a round trip */
        if (x->verify) {
            size_t off = perf_check_pattern(x->rbuf, size, size);
            if (off < size)
                return perf_fail(x, "verify FAILED at %u octets: Read data wrong at offset %zu",
                                 size, off);
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

int perf_run_lat(perf *x, uint64_t iters, double secs, perf_lat_result *r) {
    uint64_t cap = iters ? iters : 65536, n = 0;
    double *s = malloc(cap * sizeof *s);
    if (!s)
        return perf_fail(x, "out of memory");
    uint64_t end = secs > 0 ? perf_now_ns() + (uint64_t)(secs * 1e9) : 0;
    while (end ? perf_now_ns() < end : n < iters) {
        if (n == cap) {
            double *t = realloc(s, 2 * cap * sizeof *s);
            if (!t) {
                free(s);
                return perf_fail(x, "out of memory");
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
    if (x->hk->end_size && x->hk->end_size(x, n) < 0) {
        free(s);
        return -1;
    }
    perf_lat_stats(s, n, r);
    free(s);
    return 0;
}

/* Sorts s: min, max, median, mean, sample deviation and percentiles. */
void perf_lat_stats(double *s, uint64_t n, perf_lat_result *r) {
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

void perf_print_header(const perf *x) {
    const perf_opts *o = x->o;
    static const char *const title[2][4] = {
        {"", "RDMA_Write BW", "RDMA_Read BW", "Send BW"},
        {"", "RDMA_Write Latency", "RDMA_Read Latency", "Send Latency"}};
    printf(PERF_DASHES);
    printf("                    %s Test\n", title[x->lat][x->test]);
    bool v6 = strchr(o->host, ':') != NULL;
    bool sctp = o->transport == IW_TRANSPORT_SCTP;
    printf(" Transport       : %s (libiwarp verbs), %sserver %s%s%s:%u%s\n",
           sctp ? "DDP over SCTP, RFC 5043" : "iWARP over TCP", x->hk->server_kind, v6 ? "[" : "",
           o->host, v6 ? "]" : "", o->port, sctp ? " (UDP, usrsctp)" : "");
    if (x->hk->header_peer)
        x->hk->header_peer(x);
    if (sctp)
        printf(" Session         : DDP Stream Session, %s function codes, max DDP segment %u\n",
               x->info.enhanced ? "enhanced (RFC 6581 section 7)" : "RFC 5043", x->info.mulpdu);
    else
        printf(" MPA             : rev %u%s, CRC %s, markers tx %s / rx %s, MULPDU %u (EMSS %u)\n",
               x->info.mpa_rev, x->info.enhanced ? " (enhanced)" : "", x->info.crc ? "on" : "off",
               x->info.markers_tx ? "on" : "off", x->info.markers_rx ? "on" : "off", x->info.mulpdu,
               o->emss);
    if (x->lat)
        printf(" Mode            : ping-pong%s, %s\n",
               x->test == PERF_WRITE  ? " (poll the last octet, perftest write_lat)"
               : x->test == PERF_SEND ? " (Send / Send)"
                                      : " (one Read at a time)",
               x->test == PERF_READ ? "time per Read" : "time = round trip / 2");
    else
        printf(" TX depth        : %u%s\n", x->depth,
               x->test == PERF_READ ? ""
               : sctp               ? " (completion = handed to SCTP)"
                                    : " (completion = handed to TCP)");
    printf(" IRD / ORD       : %u / %u\n", x->info.ird, x->info.ord);
    printf(" Verify          : %s      Polling: %s\n", x->verify ? "on" : "off",
           o->poll ? "busy (--poll)" : "epoll");
    printf(" Local buffer    : STag 0x%08x TO 0x%016llx len %zu\n", x->r_stag,
           (unsigned long long)(uintptr_t)x->rbuf, x->buf_len);
    x->hk->header_remote(x);
    printf(PERF_DASHES);
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
    printf("{\"test\":\"%s\",\"mode\":\"%s\",\"transport\":\"%s\",\"bytes\":%u,"
           "\"iterations\":%llu,\"mpa_rev\":%u,\"crc\":%s,\"markers_tx\":%s,\"markers_rx\":%s,"
           "\"mulpdu\":%u,"
           "\"emss\":%u,\"depth\":%u,\"verify\":\"%s\",",
           perf_test_name(x->test), x->lat ? "lat" : "bw", iw_transport_name(x->o->transport), size,
           (unsigned long long)n, x->info.mpa_rev, x->info.crc ? "true" : "false",
           x->info.markers_tx ? "true" : "false", x->info.markers_rx ? "true" : "false",
           x->info.mulpdu, x->o->emss, x->lat ? 1 : x->depth, x->verify ? "ok" : "off");
}

void perf_report_bw(const perf *x, uint32_t size, const perf_bw_result *r) {
    double avg = (double)r->ops * size / r->secs;
    double rate = (double)r->ops / r->secs / 1e6;
    if (x->o->json) {
        json_common(x, size, r->ops);
        printf("\"seconds\":%.6f,\"bw_peak_MBps\":%.2f,\"bw_avg_MBps\":%.2f,"
               "\"bw_avg_Gbps\":%.3f,\"msg_rate_Mpps\":%.6f}\n",
               r->secs, r->peak_bps / PERF_MB, avg / PERF_MB, avg * 8 / 1e9, rate);
    } else {
        printf(" %-10u %-12llu %16.2f %19.2f %18.3f %15.6f\n", size, (unsigned long long)r->ops,
               r->peak_bps / PERF_MB, avg / PERF_MB, avg * 8 / 1e9, rate);
    }
    fflush(stdout);
}

void perf_report_lat(const perf *x, uint32_t size, const perf_lat_result *r) {
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

/* ---- the run ---- */

uint64_t perf_iters_for(const perf *x, uint32_t size) {
    const perf_opts *o = x->o;
    if (o->iters)
        return o->iters;
    /* perftest: DEF_ITERS_WB for write bandwidth, DEF_ITERS otherwise. */
    uint64_t def = !o->lat && o->test == PERF_WRITE ? 5000 : 1000, cap = PERF_AUTO_BYTES / size;
    if (cap < 100)
        cap = 100;
    return def < cap || x->hk->iters_uncapped ? def : cap;
}

/* ---- server ---- */

/* write_lat: answer each ping (its last octet changed) with a pong: limit
 * of them, or (limit 0) until the protocol has a message waiting. With samples,
 * sample i - 1 is half the time from pong i - 1 to pong i (limit - 1 of
 * them): perftest's client answers its server's pings so. */
int perf_server_write_lat(perf *x, uint64_t limit, double *samples) {
    uint32_t size = x->cur;
    volatile const uint8_t *last = x->rbuf + size - 1;
    uint64_t prev = 0;
    for (uint64_t i = 0; !limit || i < limit; i++) {
        uint8_t st = x->hk->stamp(i);
        while (*last != st) {
            if (!limit && x->hk->msg_waiting(x))
                return 0;
            if (perf_progress(x, perf_wait_ms(x)) < 0)
                return -1;
        }
        if (x->verify) {
            if (verify_ping(x, x->rbuf, st) < 0)
                return -1;
            fill_pattern(x->rbuf, size, size, true);
            x->rbuf[size - 1] = 0;
        }
        x->sbuf[size - 1] = st;
        iw_send_wr wr = {.op = IW_WR_WRITE,
                         .wr_id = i,
                         .data = x->sbuf,
                         .len = size,
                         .remote_stag = x->peer_stag,
                         .remote_to = x->peer_to};
        uint64_t t = perf_now_ns();
        if (samples && i)
            samples[i - 1] = (double)(t - prev) / 2e3;
        prev = t;
        int rc = iw_qp_post_send(x->qp, &wr);
        if (rc < 0)
            return perf_fail(x, "post_send: %s", iw_strerror(rc));
        x->pongs = i + 1;
    }
    return 0;
}

/* send_lat: a Send back for every Send in: limit of them, or (limit 0)
 * until the protocol has a message waiting. */
int perf_server_send_lat(perf *x, uint64_t limit) {
    for (;;) {
        while (x->pongs < x->data_rx && (!limit || x->pongs < limit)) {
            iw_send_wr wr = {.op = IW_WR_SEND, .wr_id = x->pongs, .data = x->sbuf, .len = x->cur};
            int rc = iw_qp_post_send(x->qp, &wr);
            if (rc < 0)
                return perf_fail(x, "post_send: %s", iw_strerror(rc));
            x->pongs++;
        }
        if (limit ? x->pongs >= limit : x->hk->msg_waiting(x))
            return 0;
        if (perf_pump(x) < 0)
            return -1;
    }
}
