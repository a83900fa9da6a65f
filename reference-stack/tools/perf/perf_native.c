/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwarp-perf's own protocol (docs/iwarp-perf.md), behind perf_native in
 * perf_proto.h.
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
 * The timed loops and the reports are perf_common.c's. */
#include <iwarp/wire.h>
#include "perf_proto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PERF_PD_ID "iwarp-perf/1" /* MPA private data, both directions */
#define CTRL_LEN PERF_CTRL_LEN
#define CTRL_MAGIC 0x49575046u /* "IWPF" */
#define INBOX 16
#define CLIENT_RQ 16        /* control replies, and at most ~6 CREDITs in flight */
#define CTRL_RQ 16          /* write/read: control messages only, one request at a time */
#define CREDIT_RESERVE 2    /* receives kept back for control messages */
#define HELLO_WR UINT32_MAX /* the server's first receive */

enum ctrl_type { C_HELLO = 1, C_READY, C_BEGIN, C_GO, C_DONE, C_RESULT, C_CREDIT, C_BYE };
enum { F_LAT = 1, F_VERIFY = 2 };
enum { ST_OK = 0, ST_ERROR = 1, ST_MISMATCH = 2 };

typedef struct ctrl_msg {
    uint8_t type, test, flags, status;
    uint32_t size;        /* HELLO: largest message; BEGIN: this size */
    uint32_t depth;       /* HELLO */
    uint32_t stag;        /* HELLO / READY: the sender's buffer */
    uint32_t duration_ms; /* BEGIN */
    uint64_t to, len;
    uint64_t count;    /* BEGIN: iterations (0: duration); DONE / RESULT: operations */
    uint64_t rq_total; /* receives the sender has posted so far: Send credits */
    uint32_t bad_off;  /* RESULT: first mismatching offset */
} ctrl_msg;

/* x->proto: the control messages received, and the Send credits. */
typedef struct native {
    uint8_t hello_slot[CTRL_LEN];
    ctrl_msg inbox[INBOX];
    int in_head, in_count;
    uint64_t rq_advertised, peer_rq_total;
    bool in_maint;
} native;

static native *nat(const perf *x) { return x->proto; }

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
    static const char *const n[] = {"?",    "HELLO",  "READY",  "BEGIN", "GO",
                                    "DONE", "RESULT", "CREDIT", "BYE"};
    return t >= C_HELLO && t <= C_BYE ? n[t] : "?";
}

static uint64_t credits(const perf *x) {
    return nat(x)->peer_rq_total > x->sent_total ? nat(x)->peer_rq_total - x->sent_total : 0;
}

static int send_ctrl(perf *x, ctrl_msg *m) {
    /* The server's own messages are bounded (one per request, credits once
     * per quarter window), within CLIENT_RQ; the client counts. */
    while ((!x->server && credits(x) < 1) || x->ctrl_posted - x->ctrl_done >= PERF_CTRL_RING)
        if (perf_progress(x, perf_wait_ms(x)) < 0)
            return -1;
    m->rq_total = x->rq_total;
    nat(x)->rq_advertised = x->rq_total;
    uint8_t *b = x->ctrl_tx[x->ctrl_posted % PERF_CTRL_RING];
    ctrl_encode(b, m);
    iw_send_wr wr = {
        .op = IW_WR_SEND_SE, .wr_id = PERF_WR_CTRL | x->ctrl_posted, .data = b, .len = CTRL_LEN};
    int rc = iw_qp_post_send(x->qp, &wr);
    if (rc < 0)
        return perf_fail(x, "posting %s: %s", ctrl_name(m->type), iw_strerror(rc));
    x->ctrl_posted++;
    x->sent_total++;
    return 0;
}

/* Wait for the next control message; want 0 takes any type. */
static int wait_ctrl(perf *x, int want, ctrl_msg *out) {
    while (!nat(x)->in_count)
        if (perf_pump(x) < 0)
            return -1;
    *out = nat(x)->inbox[nat(x)->in_head];
    nat(x)->in_head = (nat(x)->in_head + 1) % INBOX;
    nat(x)->in_count--;
    if (want && out->type != want)
        return perf_fail(x, "protocol error: got %s, expected %s", ctrl_name(out->type),
                         ctrl_name(want));
    return 0;
}

/* ---- hooks into the shared loops (perf_hooks) ---- */

/* Control messages: every solicited receive, and HELLO. */
static int on_recv(perf *x, const iw_event *ev) {
    bool hello = ev->wr_id == HELLO_WR;
    if (!ev->solicited && !hello)
        return 0; /* data */
    if (!hello && ev->wr_id >= x->n_slots)
        return perf_fail(x, "receive completion for an unknown buffer");
    native *n = nat(x);
    const uint8_t *buf = hello ? n->hello_slot : x->slots + (size_t)ev->wr_id * x->slot_len;
    ctrl_msg m;
    if (ev->len != CTRL_LEN || !ctrl_decode(buf, &m))
        return perf_fail(x, "malformed control message (%u octets): is the peer iwarp-perf?",
                         ev->len);
    if (m.rq_total > n->peer_rq_total)
        n->peer_rq_total = m.rq_total;
    if (m.type != C_CREDIT) {
        if (n->in_count == INBOX)
            return perf_fail(x, "too many control messages queued");
        n->inbox[(n->in_head + n->in_count++) % INBOX] = m;
    }
    if (!hello && perf_repost(x, (uint32_t)ev->wr_id) < 0)
        return -1;
    return 1;
}

static void on_data_recv(perf *x) {
    /* The server reposts a ping's buffer before it answers it. */
    if (!x->server && x->lat)
        nat(x)->peer_rq_total++;
}

static bool may_send(const perf *x) { return credits(x) > CREDIT_RESERVE; }

/* The server's credits: a CREDIT once a quarter of the window is reposted. */
static int pump(perf *x) {
    native *n = nat(x);
    if (x->server && x->test == PERF_SEND && !x->lat && x->n_slots && !n->in_maint &&
        x->rq_total - n->rq_advertised >= x->n_slots / 4) {
        n->in_maint = true;
        ctrl_msg c = {.type = C_CREDIT};
        int rc = send_ctrl(x, &c);
        n->in_maint = false;
        if (rc < 0)
            return -1;
    }
    return 0;
}

static bool inbox_has(const perf *x) { return nat(x)->in_count > 0; }

/* write_lat: the last octet carries the iteration, never 0 and never the
 * previous one. */
static uint8_t stamp(uint64_t i) { return (uint8_t)(i % 255 + 1); }

static void header_remote(const perf *x) {
    printf(" Remote buffer   : STag 0x%08x TO 0x%016llx len %llu (server's READY Send)\n",
           x->peer_stag, (unsigned long long)x->peer_to, (unsigned long long)x->peer_len);
}

/* DONE -> RESULT: the server confirms the size. */
static int finish_size(perf *x, uint64_t ops) {
    ctrl_msg d = {.type = C_DONE, .count = ops}, res;
    if (send_ctrl(x, &d) < 0 || wait_ctrl(x, C_RESULT, &res) < 0)
        return -1;
    if (res.status == ST_MISMATCH)
        return perf_fail(x, "verify FAILED at %u octets: the server saw wrong data at offset %u",
                         x->cur, res.bad_off);
    if (res.status != ST_OK)
        return perf_fail(x, "the server reported an error for size %u", x->cur);
    if (x->test == PERF_SEND && res.count != ops)
        return perf_fail(x, "the server received %llu Sends, %llu were sent",
                         (unsigned long long)res.count, (unsigned long long)ops);
    return 0;
}

static const perf_hooks native_hooks = {
    .private_data = PERF_PD_ID,
    .server_kind = "",
    .recv = on_recv,
    .data_recv = on_data_recv,
    .may_send = may_send,
    .pump = pump,
    .end_size = finish_size,
    .msg_waiting = inbox_has,
    .stamp = stamp,
    .header_remote = header_remote,
};

static int start(perf *x) {
    x->hk = &native_hooks;
    x->proto = calloc(1, sizeof(native));
    return x->proto ? 0 : perf_fail(x, "out of memory");
}

/* ---- client ---- */

static int connect_wait(perf *x) {
    while (!x->connected)
        if (perf_progress(x, perf_wait_ms(x)) < 0)
            return -1;
    if (x->info.peer_private_data_len < strlen(PERF_PD_ID) ||
        memcmp(x->info.peer_private_data, PERF_PD_ID, strlen(PERF_PD_ID)) != 0)
        return perf_fail(x, "the peer is not iwarp-perf (MPA private data does not say '%s')",
                         PERF_PD_ID);
    /* --connect-delay: no FPDU right after the Reply (docs/iwarp-perf.md). */
    return x->server ? 0 : perf_quiet_wait(x, x->o->connect_delay_ms);
}

/* Orderly end: BYE both ways, then the client closes the stream. */
static int client_bye(perf *x) {
    ctrl_msg m = {.type = C_BYE};
    if (send_ctrl(x, &m) < 0 || wait_ctrl(x, C_BYE, &m) < 0)
        return -1;
    x->bye = true;
    int rc = iw_qp_close(x->qp);
    if (rc < 0)
        return perf_fail(x, "close: %s", iw_strerror(rc));
    while (!x->closed)
        if (perf_progress(x, perf_wait_ms(x)) < 0)
            return -1;
    return 0;
}

static int run_client(perf *x) {
    const perf_opts *o = x->o;
    if (start(x) < 0)
        return -1;
    x->test = o->test;
    x->lat = o->lat;
    x->verify = o->verify;
    x->depth = o->lat ? 1 : o->depth;
    x->max_size = o->all ? 1u << PERF_SWEEP_HI : o->size;
    if (perf_open_dev(x, perf_cq_depth_for(x->depth, CLIENT_RQ)) < 0 || perf_alloc_bufs(x) < 0)
        return -1;
    iw_conn_settings s;
    perf_settings(x, &s);
    int rc = iw_qp_create(x->dev, x->pd, x->cq, &s, &x->qp);
    if (rc < 0)
        return perf_fail(x, "cannot create the QP: %s", iw_strerror(rc));
    rc = iw_qp_connect(x->qp, o->host, o->port);
    if (rc < 0)
        return perf_fail(x, "cannot connect to %s:%u: %s", o->host, o->port, iw_strerror(rc));
    /* Pongs of the send test land here too: room for the largest. */
    bool pongs = x->test == PERF_SEND && x->lat;
    uint32_t slot = pongs && x->max_size > CTRL_LEN ? x->max_size : CTRL_LEN;
    x->last_activity = perf_now_ns();
    if (perf_alloc_slots(x, pongs ? PERF_LAT_RQ : CLIENT_RQ, slot) < 0 || connect_wait(x) < 0)
        return -1;

    nat(x)->peer_rq_total = 1; /* the server posts one receive for HELLO */
    ctrl_msg h = {.type = C_HELLO,
                  .test = (uint8_t)x->test,
                  .flags = (uint8_t)((x->lat ? F_LAT : 0) | (x->verify ? F_VERIFY : 0)),
                  .size = x->max_size,
                  .depth = x->depth,
                  .stag = x->r_stag,
                  .to = (uintptr_t)x->rbuf,
                  .len = x->buf_len};
    ctrl_msg r;
    if (send_ctrl(x, &h) < 0 || wait_ctrl(x, C_READY, &r) < 0)
        return -1;
    if (r.status != ST_OK)
        return perf_fail(x, "the server refused the test (it could not allocate %u-octet buffers)",
                         x->max_size);
    x->peer_stag = r.stag;
    x->peer_to = r.to;
    x->peer_len = r.len;
    if (!o->json)
        perf_print_header(x);

    uint32_t lo = o->all ? 1u << PERF_SWEEP_LO : o->size, hi = x->max_size;
    for (uint32_t size = lo; size && size <= hi; size = o->all ? size * 2 : 0) {
        perf_prepare_size(x, size);
        uint64_t iters = o->duration > 0 ? 0 : perf_iters_for(x, size);
        ctrl_msg b = {.type = C_BEGIN,
                      .size = size,
                      .count = iters,
                      .duration_ms = (uint32_t)(o->duration * 1000)};
        ctrl_msg g;
        if (send_ctrl(x, &b) < 0 || wait_ctrl(x, C_GO, &g) < 0)
            return -1;
        if (x->lat) {
            perf_lat_result lr = {0};
            if (perf_run_lat(x, iters, o->duration, &lr) < 0)
                return -1;
            perf_report_lat(x, size, &lr);
        } else {
            perf_bw_result br = {0};
            if (perf_run_bw(x, size, iters, o->duration, &br) < 0)
                return -1;
            perf_report_bw(x, size, &br);
        }
        if (!o->all)
            break;
    }
    if (!o->json)
        printf(PERF_DASHES);
    return client_bye(x);
}

static int server_session(perf *x) {
    ctrl_msg h;
    if (wait_ctrl(x, C_HELLO, &h) < 0)
        return -1;
    if (h.test < PERF_WRITE || h.test > PERF_SEND || !h.size || h.size > PERF_MAX_MSG || !h.depth ||
        h.depth > PERF_MAX_DEPTH)
        return perf_fail(x, "HELLO with parameters out of range");
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
    if (x->test == PERF_SEND) {
        slot = x->max_size > CTRL_LEN ? x->max_size : CTRL_LEN;
        n = PERF_LAT_RQ;
        if (!x->lat) {
            /* The credit window: the depth plus the reserve, within PERF_RECV_MEM. */
            uint64_t by_mem = PERF_RECV_MEM / slot, want = (uint64_t)x->depth + 2 * CREDIT_RESERVE;
            n = (uint32_t)(want < by_mem ? want : by_mem);
            if (n < 2 * CREDIT_RESERVE)
                n = 2 * CREDIT_RESERVE;
        }
    }
    if (perf_alloc_bufs(x) < 0 || perf_alloc_slots(x, n, slot) < 0) {
        /* Tell the client why, then give up. */
        r.status = ST_ERROR;
        char why[sizeof x->err];
        memcpy(why, x->err, sizeof why);
        x->err[0] = '\0';
        if (send_ctrl(x, &r) == 0)
            for (int i = 0; i < 20 && !x->closed && perf_progress(x, 50) >= 0; i++)
                ;
        x->err[0] = '\0';
        return perf_fail(x, "%s", why);
    }
    r.stag = x->r_stag;
    r.to = (uintptr_t)x->rbuf;
    r.len = x->buf_len;
    if (send_ctrl(x, &r) < 0)
        return -1;
    if (!x->o->json) {
        printf(" client: %s %s, sizes up to %u, %s; verify %s\n", perf_test_name(x->test),
               x->lat ? "latency" : "bandwidth", x->max_size, x->lat ? "ping-pong" : "windowed",
               x->verify ? "on" : "off");
        fflush(stdout);
    }
    for (;;) {
        ctrl_msg m;
        if (wait_ctrl(x, 0, &m) < 0)
            return -1;
        if (m.type == C_BEGIN) {
            if (!m.size || m.size > x->max_size)
                return perf_fail(x, "BEGIN with size %u out of range", m.size);
            perf_prepare_size(x, m.size);
            ctrl_msg g = {.type = C_GO};
            if (send_ctrl(x, &g) < 0)
                return -1;
            if (x->lat && x->test == PERF_WRITE && perf_server_write_lat(x, 0, NULL) < 0)
                return -1;
            if (x->lat && x->test == PERF_SEND && perf_server_send_lat(x, 0) < 0)
                return -1;
        } else if (m.type == C_DONE) {
            ctrl_msg res = {.type = C_RESULT, .count = x->data_rx};
            if (x->verify && x->test == PERF_WRITE && !x->lat) {
                size_t off = perf_check_pattern(x->rbuf, x->cur, x->cur);
                if (off < x->cur && !x->bad++)
                    x->bad_off = (uint32_t)off;
            }
            if (x->bad) {
                res.status = ST_MISMATCH;
                res.bad_off = x->bad_off;
                fprintf(stderr, PERF_PROG ": verify FAILED at %u octets: offset %u\n", x->cur,
                        x->bad_off);
            }
            if (send_ctrl(x, &res) < 0)
                return -1;
            if (!x->o->json) {
                printf(" size %-9u %llu operations%s\n", x->cur, (unsigned long long)m.count,
                       !x->verify ? ""
                       : x->bad   ? ", verify FAILED"
                                  : ", verify ok");
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
                if (perf_progress(x, perf_wait_ms(x)) < 0)
                    return -1;
            return 0;
        } else {
            return perf_fail(x, "protocol error: unexpected %s", ctrl_name(m.type));
        }
    }
}

static int run_server(perf *x) {
    const perf_opts *o = x->o;
    if (start(x) < 0)
        return -1;
    /* The CQ must hold the largest receive window's flush at close. */
    uint32_t rq = PERF_MAX_DEPTH + 2 * CREDIT_RESERVE;
    if (perf_open_dev(x, perf_cq_depth_for(PERF_MAX_DEPTH, rq)) < 0)
        return -1;
    int rc = iw_listen(x->dev, o->host, o->port, &x->lst);
    if (rc < 0)
        return perf_fail(x, "cannot listen on %s:%u: %s", o->host, o->port, iw_strerror(rc));
    uint16_t port = iw_listener_port(x->lst);
    bool v6 = strchr(o->host, ':') != NULL;
    if (o->json)
        printf("{\"listening\":\"%s\",\"port\":%u}\n", o->host, port);
    else
        printf(PERF_PROG " server: listening on %s%s%s:%u\n", v6 ? "[" : "", o->host, v6 ? "]" : "",
               port);
    fflush(stdout);
    iw_conn_settings s;
    perf_settings(x, &s);
    if ((rc = iw_qp_create(x->dev, x->pd, x->cq, &s, &x->qp)) < 0)
        return perf_fail(x, "cannot create the QP: %s", iw_strerror(rc));
    while ((rc = iw_accept(x->lst, x->qp)) == IW_ERR_NEED_MORE)
        if ((rc = iw_dev_progress(x->dev, 1000)) < 0)
            break;
    if (rc < 0)
        return perf_fail(x, "accept: %s", iw_strerror(rc));
    iw_listener_close(x->lst); /* one session, as perftest */
    x->lst = NULL;
    /* One receive for HELLO; the rest once we know the test. */
    if ((rc = iw_qp_post_recv(x->qp, HELLO_WR, nat(x)->hello_slot, CTRL_LEN)) < 0)
        return perf_fail(x, "post_recv: %s", iw_strerror(rc));
    x->rq_total = 1;
    x->last_activity = perf_now_ns();
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
        printf(PERF_PROG " server: session done\n");
    return 0;
}

/* ---- the table (perf_proto.h) ---- */

static const char *check_opts(perf_opts *o) {
    if (o->rx_depth)
        return "--rx-depth is for --perftest (perftest's send_bw credits)";
    return NULL;
}

static void cleanup(perf *x) {
    free(x->proto);
    x->proto = NULL;
}

const perf_proto perf_native = {
    .id = PERF_PD_ID,
    .check_opts = check_opts,
    .run_server = run_server,
    .run_client = run_client,
    .cleanup = cleanup,
};
