/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwarp-perf --perftest: the client or the server of perftest's -R protocol
 * (docs/iwarp-perf.md, "Talking to perftest"), so that iwarp-perf runs the
 * same operations against ib_{write,read,send}_{bw,lat} -R.
 *
 * perftest opens two connections to the server's port. The first is the
 * communication QP: over it, pt_script's steps exchange one Send each way
 * (pt_wire.h). Between its first two handshakes the client connects the
 * second, the data QP, where the test runs: RDMA Writes or Reads walking
 * the peer's buffer in cache-line slots, Sends paced by the receiver's
 * credit word (send_bw), or one ping-pong at a time (latency).
 *
 * The timed loops and the reports are iwarp-perf's own (perf_common.c);
 * this file drives the exchange around them, behind perf_perftest in
 * perf_proto.h. */
#include "perf_proto.h"
#include "pt_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PT_WR (1ull << 62)    /* wr_id of communication Sends */
#define PT_CONNECT_TRIES 10   /* rdma_cm_client_connection: 10 tries, */
#define PT_CONNECT_GAP_MS 100 /* 100 ms apart (its server listens late) */
#define PT_DRAIN_MS 100       /* send_bw -D: data still in flight after the client's sync */
#define PT_CLOSE_WAIT_NS (10ull * 1000000000ull)
#define PT_CLOSE_GRACE_NS (200ull * 1000000ull)
#define PT_QPN_CLIENT 1 /* our QPs have no numbers; perftest only prints them */
#define PT_QPN_SERVER 2

/* x->proto: the communication QP's messages (the QP itself is x->aux_qp),
 * and what the exchange established. */
#define PT_INBOX 4
#define PT_RX_SLOTS 2
#define PT_SLOT 64 /* >= PT_MSG_MAX */
#define PT_TX_RING 4
typedef struct pt_msg {
    uint32_t len;
    uint8_t b[PT_SLOT];
} pt_msg;

typedef struct pt_state {
    bool c_connected, c_closed;
    iw_conn_info cinfo;
    uint8_t c_rx[PT_RX_SLOTS][PT_SLOT];
    uint8_t c_tx[PT_TX_RING][PT_SLOT];
    uint64_t c_posted, c_done;
    pt_msg inbox[PT_INBOX];
    int in_head, in_count;
    unsigned step;                   /* index of the step being run, for messages */
    unsigned msgs_expected, msgs_in; /* the peer may close once the last one came */
    bool done;                       /* every step ran: the peer may close now */
    bool test_done;                  /* the data QP's work is over: it may close */
    char peer_version[PT_VERSION_LEN];
    int32_t cycle_buffer, cache_line;
    pt_dest my, rem;
    bool have_rem;
    uint32_t rx_depth, credit_every;
    uint8_t *credit; /* send_bw: our credit word (the receiver writes it) */
    uint32_t credit_stag;
    uint64_t credited; /* server: the count last written to the sender */
    uint64_t rx_first_ns, rx_last_ns;
    uint64_t peer_iters; /* the client's report (server side) */
    double peer_peak, peer_avg, peer_rate;
    uint64_t peer_size;
} pt_state;

static pt_state *pt(const perf *x) { return x->proto; }

/* ---- the communication QP ---- */

static int comm_repost(perf *x, uint64_t slot) {
    int rc = iw_qp_post_recv(x->aux_qp, slot, pt(x)->c_rx[slot], PT_SLOT);
    /* A stream that takes no more work is ending: its Terminate or close
     * event follows and says why. */
    if (rc == IW_ERR_PROTO)
        return 0;
    return rc < 0 ? perf_fail(x, "communication QP: post_recv: %s", iw_strerror(rc)) : 0;
}

static int on_comm_event(perf *x, const iw_event *ev) {
    pt_state *p = pt(x);
    const perf_opts *o = x->o;
    switch (ev->type) {
    case IW_EV_CONNECTED:
        p->c_connected = true;
        p->cinfo = *ev->info;
        return 0;
    case IW_EV_REJECTED:
        p->c_closed = true;
        return perf_fail(x, "perftest at %s port %u rejected the connection (MPA R=1)", o->host,
                         o->port);
    case IW_EV_CLOSED:
        p->c_closed = true;
        if (p->done || p->msgs_in >= p->msgs_expected || (!p->c_connected && !x->server))
            return 0; /* the end, or a client's try: pt_connect says what failed */
        return perf_fail(x, "perftest closed the communication connection in step %u (%s): %s",
                         p->step + 1, pt_step_name(pt_script((pt_test)x->test, x->lat)[p->step]),
                         iw_close_str(ev->close));
    case IW_EV_TERM_SENT:
        return perf_fail(x, "communication QP: sent a Terminate: %s (%s)",
                         iw_term_str(ev->term.triple), ev->rfc ? ev->rfc : "");
    case IW_EV_TERM_RECEIVED:
        return perf_fail(x, "communication QP: perftest sent a Terminate: %s",
                         iw_term_str(ev->term.triple));
    default:
        break;
    }
    if (ev->status != IW_WC_SUCCESS)
        return 0; /* the Terminate or close event that follows says why */
    if (ev->type == IW_EV_SEND_DONE) {
        p->c_done++;
        return 0;
    }
    if (ev->type != IW_EV_RECV)
        return 0;
    if (ev->wr_id >= PT_RX_SLOTS)
        return perf_fail(x, "communication QP: receive completion for an unknown buffer");
    /* Each side answers before the other speaks again: more than a few
     * unanswered messages means the peer does not follow the exchange. */
    if (p->in_count == PT_INBOX)
        return perf_fail(x,
                         "perftest sent %d messages without waiting for an answer: not its "
                         "exchange",
                         PT_INBOX + 1);
    pt_msg *m = &p->inbox[(p->in_head + p->in_count++) % PT_INBOX];
    p->msgs_in++;
    m->len = ev->len <= PT_SLOT ? ev->len : PT_SLOT; /* a longer Send was a Terminate */
    memcpy(m->b, p->c_rx[ev->wr_id], m->len);
    return comm_repost(x, ev->wr_id);
}

static int comm_send(perf *x, const uint8_t *b, size_t len) {
    pt_state *p = pt(x);
    while (p->c_posted - p->c_done >= PT_TX_RING)
        if (perf_progress(x, perf_wait_ms(x)) < 0)
            return -1;
    uint8_t *slot = p->c_tx[p->c_posted % PT_TX_RING];
    memcpy(slot, b, len);
    iw_send_wr wr = {
        .op = IW_WR_SEND, .wr_id = PT_WR | p->c_posted, .data = slot, .len = (uint32_t)len};
    int rc = iw_qp_post_send(x->aux_qp, &wr);
    if (rc < 0)
        return perf_fail(x, "communication QP: post_send: %s", iw_strerror(rc));
    p->c_posted++;
    return 0;
}

static int comm_recv(perf *x, pt_msg *out) {
    pt_state *p = pt(x);
    while (!p->in_count)
        if (perf_progress(x, perf_wait_ms(x)) < 0)
            return -1;
    *out = p->inbox[p->in_head];
    p->in_head = (p->in_head + 1) % PT_INBOX;
    p->in_count--;
    return 0;
}

/* One message each way: the client speaks first, the server answers
 * (ctx_hand_shake, ctx_xchg_data). */
static int xchg(perf *x, const uint8_t *mine, size_t len, pt_msg *theirs) {
    if (x->server)
        return comm_recv(x, theirs) < 0 || comm_send(x, mine, len) < 0 ? -1 : 0;
    return comm_send(x, mine, len) < 0 || comm_recv(x, theirs) < 0 ? -1 : 0;
}

static int step_fail(perf *x, pt_step s, const char *why) {
    return perf_fail(x, "perftest exchange, step %u (%s): %s", pt(x)->step + 1, pt_step_name(s),
                     why);
}

/* ---- connections ---- */

/* Both QPs: perftest's rdma_cm sends no private data. The data QP of a
 * client reads with the ORD the server grants (out_reads, 128 on siw). */
static iw_qp **qp_slot(perf *x, bool comm) { return comm ? &x->aux_qp : &x->qp; }

static int make_qp(perf *x, bool comm) {
    iw_conn_settings s;
    perf_settings(x, &s);
    if (comm)
        s.ird = s.ord = 1;
    int rc = iw_qp_create(x->dev, x->pd, x->cq, &s, qp_slot(x, comm));
    return rc < 0 ? perf_fail(x, "cannot create the %s QP: %s", comm ? "communication" : "data",
                              iw_strerror(rc))
                  : 0;
}

/* The client: connect, and as perftest does, try again while the server
 * does not listen yet (it listens for the data QP only after the first
 * handshake). Then keep quiet for --connect-delay: siw switches its socket
 * to RDMA mode only after sending the MPA Reply. */
static int pt_connect(perf *x, bool comm) {
    bool *up = comm ? &pt(x)->c_connected : &x->connected;
    bool *down = comm ? &pt(x)->c_closed : &x->closed;
    for (int t = 1;; t++) {
        if (make_qp(x, comm) < 0)
            return -1;
        *up = *down = false;
        int rc = iw_qp_connect(*qp_slot(x, comm), x->o->host, x->o->port);
        if (rc < 0)
            return perf_fail(x, "cannot connect to %s:%u: %s", x->o->host, x->o->port,
                             iw_strerror(rc));
        while (!*up && !*down)
            if (perf_progress(x, perf_wait_ms(x)) < 0)
                return -1;
        if (*up)
            break;
        iw_qp_destroy(*qp_slot(x, comm));
        *qp_slot(x, comm) = NULL;
        if (t == PT_CONNECT_TRIES)
            return perf_fail(x,
                             "cannot connect the %s QP to %s port %u (%d tries, %d ms apart): is "
                             "perftest listening there?",
                             comm ? "communication" : "data", x->o->host, x->o->port,
                             PT_CONNECT_TRIES, PT_CONNECT_GAP_MS);
        if (perf_quiet_wait(x, PT_CONNECT_GAP_MS) < 0)
            return -1;
    }
    return perf_quiet_wait(x, x->o->connect_delay_ms);
}

/* The server: the next connection on the listener, as MPA responder. */
static int pt_accept(perf *x, bool comm) {
    if (make_qp(x, comm) < 0)
        return -1;
    int rc;
    while ((rc = iw_accept(x->lst, *qp_slot(x, comm))) == IW_ERR_NEED_MORE) {
        /* No idle limit while nobody has connected yet. */
        if (comm ? (rc = iw_dev_progress(x->dev, 1000)) < 0 : perf_progress(x, perf_wait_ms(x)) < 0)
            break;
        x->last_activity = perf_now_ns();
    }
    if (rc < 0 && !x->err[0])
        return perf_fail(x, "accept: %s", iw_strerror(rc));
    if (x->err[0])
        return -1;
    bool *up = comm ? &pt(x)->c_connected : &x->connected;
    if (comm)
        for (uint64_t i = 0; i < PT_RX_SLOTS; i++)
            if (comm_repost(x, i) < 0)
                return -1;
    while (!*up)
        if (perf_progress(x, perf_wait_ms(x)) < 0)
            return -1;
    return 0;
}

/* Receives on the data QP, posted as soon as it exists: send_bw's window
 * (the sender counts on rx_depth of them) and send_lat's ping-pong. */
static int post_data_receives(perf *x) {
    if (x->test != PERF_SEND)
        return 0;
    uint32_t size = x->o->size;
    if (x->lat)
        return perf_alloc_slots(x, PERF_LAT_RQ, size);
    if (!x->server)
        return 0;
    uint64_t n = pt(x)->rx_depth;
    if (n * size > PERF_RECV_MEM)
        return perf_fail(x, "%llu receives of %u octets (--rx-depth) need more than %u MiB",
                         (unsigned long long)n, size, PERF_RECV_MEM >> 20);
    return perf_alloc_slots(x, (uint32_t)n, size);
}

static int connect_data(perf *x) {
    if (x->server) {
        if (pt_accept(x, false) < 0)
            return -1;
        iw_listener_close(x->lst); /* one session, as perftest */
        x->lst = NULL;
    } else if (pt_connect(x, false) < 0) {
        return -1;
    }
    if (x->test == PERF_READ && !x->server) {
        if (!x->info.ord)
            return perf_fail(x, "the perftest server grants no RDMA Read (its MPA IRD is 0)");
        if (x->depth > x->info.ord)
            x->depth = x->info.ord;
    }
    return post_data_receives(x);
}

/* Buffers once the cycle buffer is agreed: the peer walks max(size, cycle
 * buffer) octets at our vaddr. send_bw adds the credit word. */
static int setup_buffers(perf *x) {
    pt_state *p = pt(x);
    x->buf_len = pt_buffer_len(x->max_size, (uint32_t)p->cycle_buffer);
    if (perf_alloc_bufs(x) < 0)
        return -1;
    p->rx_depth = x->o->rx_depth ? x->o->rx_depth : PT_RX_DEPTH;
    uint64_t iters = x->o->duration > 0 ? 0 : perf_iters_for(x, x->max_size);
    if (iters && p->rx_depth > iters) /* force_dependecies */
        p->rx_depth = (uint32_t)iters;
    p->credit_every = p->rx_depth / 3 ? p->rx_depth / 3 : 1; /* ctx_alloc_credit */
    if (iters && x->depth > iters)
        x->depth = (uint32_t)iters;
    if (x->test != PERF_SEND || x->lat)
        return 0;
    p->credit = perf_alloc_buf(64);
    if (!p->credit)
        return perf_fail(x, "out of memory");
    int rc = iw_mr_reg(iw_dev_rnic(x->dev), x->pd, p->credit, 64, (uintptr_t)p->credit,
                       IW_ACCESS_LOCAL_WRITE | IW_ACCESS_REMOTE_WRITE, &p->credit_stag);
    return rc < 0 ? perf_fail(x, "cannot register memory: %s", iw_strerror(rc)) : 0;
}

/* What we tell perftest in each handshake from DEST on: the buffer it
 * targets (send_bw: the credit word the receiver writes). */
static void set_my_dest(perf *x) {
    pt_dest *d = &pt(x)->my;
    memset(d, 0, sizeof *d);
    d->out_reads = x->test != PERF_READ ? 1 : x->server ? x->info.ird : x->info.ord;
    d->qpn = x->server ? PT_QPN_SERVER : PT_QPN_CLIENT;
    d->psn = (uint32_t)(perf_now_ns() ^ (uint64_t)getpid() * 2654435761u) & 0xffffff;
    bool credit = x->test == PERF_SEND && !x->lat;
    d->rkey = credit ? pt(x)->credit_stag : x->r_stag;
    d->vaddr = credit ? (uintptr_t)pt(x)->credit : (uintptr_t)x->rbuf;
}

/* ---- the data QP's part ---- */

static uint64_t data_offset(const perf *x, uint64_t i) {
    return pt_cycle_offset(i, x->cur, (uint32_t)pt(x)->cache_line, (uint32_t)pt(x)->cycle_buffer);
}

/* run_iter_bw: post while posted + 1 - credit < rx_depth. */
static bool may_send(const perf *x) {
    uint32_t credit = pt_credit_decode(pt(x)->credit);
    return (uint32_t)(x->posted + 1 - credit) < pt(x)->rx_depth;
}

static void on_data_recv(perf *x) {
    uint64_t t = perf_now_ns();
    if (!pt(x)->rx_first_ns)
        pt(x)->rx_first_ns = t;
    pt(x)->rx_last_ns = t;
}

/* send_bw receiver: write our count of received messages into the
 * sender's credit word every credit_every receives (each buffer is
 * reposted before it is counted). */
static int send_credit(perf *x) {
    pt_state *p = pt(x);
    if (x->data_rx - p->credited < p->credit_every)
        return 0;
    while (x->ctrl_posted - x->ctrl_done >= PERF_CTRL_RING)
        if (perf_progress(x, perf_wait_ms(x)) < 0)
            return -1;
    uint8_t *b = x->ctrl_tx[x->ctrl_posted % PERF_CTRL_RING];
    pt_credit_encode(b, (uint32_t)x->data_rx);
    iw_send_wr wr = {.op = IW_WR_WRITE,
                     .wr_id = PERF_WR_CTRL | x->ctrl_posted,
                     .data = b,
                     .len = PT_CREDIT_LEN,
                     .remote_stag = p->rem.rkey,
                     .remote_to = p->rem.vaddr};
    int rc = iw_qp_post_send(x->qp, &wr);
    if (rc < 0)
        return perf_fail(x, "posting a credit: %s", iw_strerror(rc));
    x->ctrl_posted++;
    p->credited = x->data_rx;
    return 0;
}

/* send_bw server: every Send of -n, or (-D) until the client's closing
 * handshake, and what is still in flight behind it on the data QP. */
static int server_send_bw(perf *x, uint64_t iters) {
    pt_state *p = pt(x);
    for (;;) {
        if (iters ? x->data_rx >= iters : p->in_count > 0)
            break;
        if (perf_progress(x, perf_wait_ms(x)) < 0 || send_credit(x) < 0)
            return -1;
    }
    for (uint64_t seen = x->data_rx, t = perf_now_ns(); !iters;) {
        if (perf_progress(x, 10) < 0 || send_credit(x) < 0)
            return -1;
        if (x->data_rx != seen)
            seen = x->data_rx, t = perf_now_ns();
        else if (perf_now_ns() - t > PT_DRAIN_MS * 1000000ull)
            break;
    }
    return 0;
}

typedef struct pt_result {
    perf_bw_result bw;
    perf_lat_result lat;
} pt_result;

/* perftest's write_lat server writes first (run_iter_lat_write: only the
 * client waits before its first post), so its client answers: our pongs,
 * timed from one to the next. */
static int client_write_lat(perf *x, uint64_t iters, perf_lat_result *r) {
    double *s = malloc(iters * sizeof *s);
    if (!s)
        return perf_fail(x, "out of memory");
    int rc = perf_server_write_lat(x, iters, s);
    if (rc == 0) {
        perf_lat_stats(s, iters - 1, r);
        r->n = iters;
    }
    free(s);
    return rc;
}

static int client_test(perf *x, pt_result *r) {
    const perf_opts *o = x->o;
    uint64_t iters = o->duration > 0 ? 0 : perf_iters_for(x, x->cur);
    if (!o->json)
        perf_print_header(x);
    int rc = !x->lat                 ? perf_run_bw(x, x->cur, iters, o->duration, &r->bw)
             : x->test == PERF_WRITE ? client_write_lat(x, iters, &r->lat)
                                     : perf_run_lat(x, iters, 0, &r->lat);
    if (rc < 0)
        return -1;
    if (x->lat)
        perf_report_lat(x, x->cur, &r->lat);
    else
        perf_report_bw(x, x->cur, &r->bw);
    if (!o->json)
        printf(PERF_DASHES);
    return 0;
}

static int server_test(perf *x) {
    uint64_t iters = x->o->duration > 0 ? 0 : perf_iters_for(x, x->cur);
    if (x->test == PERF_SEND && x->lat)
        return perf_server_send_lat(x, iters);
    if (x->test == PERF_SEND)
        return server_send_bw(x, iters);
    return 0; /* Writes and Reads need nothing of us: the next handshake ends them */
}

/* ---- the report (write_bw, read_bw) ---- */

static int report_step(perf *x, pt_step s, const pt_result *r) {
    pt_state *p = pt(x);
    uint8_t b[PT_U64_LEN];
    char why[160];
    pt_msg m;
    /* The server's fields are its own observations (perftest's server sends
     * whatever its stack holds); the client's are its measurement, in MB/s
     * (2^20 octets) and Mpps, as perftest without --report_gbits. */
    double avg = r->bw.secs > 0 ? (double)r->bw.ops * x->cur / r->bw.secs : 0;
    iw_conn_stats st;
    iw_qp_get_stats(x->qp, &st);
    uint64_t placed = x->cur ? st.bytes_placed / x->cur : 0;
    switch (s) {
    case PT_STEP_REPORT_SIZE:
        pt_u64_encode(b, x->cur);
        break;
    case PT_STEP_REPORT_ITERS:
        pt_u64_encode(b, x->server ? placed : r->bw.ops);
        break;
    case PT_STEP_REPORT_PEAK:
        pt_double_encode(b, x->server ? 0 : r->bw.peak_bps / PERF_MB);
        break;
    case PT_STEP_REPORT_AVG:
        pt_double_encode(b, x->server ? 0 : avg / PERF_MB);
        break;
    default:
        pt_double_encode(b,
                         x->server || r->bw.secs <= 0 ? 0 : (double)r->bw.ops / r->bw.secs / 1e6);
        break;
    }
    if (xchg(x, b, sizeof b, &m) < 0)
        return -1;
    uint64_t u = 0;
    double d = 0;
    bool dbl = s == PT_STEP_REPORT_PEAK || s == PT_STEP_REPORT_AVG || s == PT_STEP_REPORT_RATE;
    if ((dbl ? pt_double_decode(&d, m.b, m.len, why, sizeof why)
             : pt_u64_decode(&u, m.b, m.len, why, sizeof why)) < 0)
        return step_fail(x, s, why);
    if (!x->server)
        return 0; /* perftest's server sends uninitialised fields */
    if (s == PT_STEP_REPORT_SIZE)
        p->peer_size = u;
    else if (s == PT_STEP_REPORT_ITERS)
        p->peer_iters = u;
    else if (s == PT_STEP_REPORT_PEAK)
        p->peer_peak = d;
    else if (s == PT_STEP_REPORT_AVG)
        p->peer_avg = d;
    else
        p->peer_rate = d;
    return 0;
}

/* ---- the steps ---- */

static int int_step(perf *x, pt_step s, int32_t mine, int32_t lo, int32_t hi, int32_t *agreed) {
    uint8_t b[PT_INT_LEN];
    char why[160];
    pt_msg m;
    int32_t theirs;
    pt_int_encode(b, mine);
    if (xchg(x, b, sizeof b, &m) < 0)
        return -1;
    if (pt_int_decode(&theirs, m.b, m.len, lo, hi, why, sizeof why) < 0)
        return step_fail(x, s, why);
    *agreed = theirs > mine ? theirs : mine; /* check_sys_data: the larger */
    return 0;
}

static int dest_step(perf *x, pt_step s) {
    pt_state *p = pt(x);
    uint8_t b[PT_DEST_LEN];
    char why[200];
    pt_msg m;
    pt_dest d;
    if (s == PT_STEP_DEST) {
        set_my_dest(x);
        perf_prepare_size(x, x->max_size); /* before the peer may send or write */
    }
    pt_dest_encode(b, &p->my);
    if (xchg(x, b, sizeof b, &m) < 0)
        return -1;
    if (pt_dest_decode(&d, m.b, m.len, why, sizeof why) < 0)
        return step_fail(x, s, why);
    if (s == PT_STEP_DEST) {
        p->rem = d;
        p->have_rem = true;
        x->peer_stag = d.rkey;
        x->peer_to = d.vaddr;
        if (!x->o->json)
            printf(" remote address: QPN 0x%04x PSN 0x%06x RKey 0x%08x VAddr 0x%016llx "
                   "out_reads %u\n",
                   d.qpn, d.psn, d.rkey, (unsigned long long)d.vaddr, d.out_reads);
    } else if (p->have_rem && !pt_dest_same(&d, &p->rem)) {
        snprintf(why, sizeof why,
                 "out of step: this handshake carries QPN 0x%x PSN 0x%x RKey "
                 "0x%x, the first carried QPN 0x%x PSN 0x%x RKey 0x%x",
                 d.qpn, d.psn, d.rkey, p->rem.qpn, p->rem.psn, p->rem.rkey);
        return step_fail(x, s, why);
    }
    return 0;
}

static int run_step(perf *x, pt_step s, pt_result *r) {
    pt_state *p = pt(x);
    char why[200];
    pt_msg m;
    switch (s) {
    case PT_STEP_VERSION: {
        uint8_t b[PT_VERSION_LEN];
        pt_version_encode(b, PT_VERSION);
        if (xchg(x, b, sizeof b, &m) < 0)
            return -1;
        if (pt_version_decode(p->peer_version, m.b, m.len, why, sizeof why) < 0)
            return step_fail(x, s, why);
        if (strcmp(p->peer_version, PT_VERSION))
            fprintf(stderr,
                    PERF_PROG ": warning: the peer is perftest %s; iwarp-perf's exchange was "
                              "verified against %s\n",
                    p->peer_version, PT_VERSION);
        return 0;
    }
    case PT_STEP_CYCLE_BUFFER:
        /* A page (4 KiB), or a huge page with perftest's --use_hugepages. */
        return int_step(x, s, PT_CYCLE_BUFFER, 64, 1 << 24, &p->cycle_buffer);
    case PT_STEP_CACHE_LINE:
        if (int_step(x, s, PT_CACHE_LINE, 8, 4096, &p->cache_line) < 0)
            return -1;
        return setup_buffers(x);
    case PT_STEP_MTU: {
        uint8_t b[PT_MTU_LEN];
        int mtu;
        pt_mtu_encode(b, PT_MTU_ENUM);
        if (xchg(x, b, sizeof b, &m) < 0)
            return -1;
        return pt_mtu_decode(&mtu, m.b, m.len, why, sizeof why) < 0 ? step_fail(x, s, why) : 0;
    }
    case PT_STEP_SYNC:
    case PT_STEP_DEST:
        return dest_step(x, s);
    case PT_STEP_CONNECT:
        return connect_data(x);
    case PT_STEP_TEST:
        if ((x->server ? server_test(x) : client_test(x, r)) < 0)
            return -1;
        p->test_done = true;
        x->bye = true; /* from here on perftest may close the data QP */
        return 0;
    default:
        return report_step(x, s, r);
    }
}

/* ---- what each side prints at the end ---- */

/* What the data QP did for the client's RDMA operations: whole Writes
 * placed (octets / size), or Read Responses sent (FPDUs / FPDUs per
 * Response: our engine cuts a tagged message into MULPDU - 14 octet
 * segments). */
static uint64_t served(const perf *x) {
    iw_conn_stats st;
    iw_qp_get_stats(x->qp, &st);
    if (x->test == PERF_WRITE)
        return st.bytes_placed / x->cur;
    uint32_t room = x->info.mulpdu > 14 ? x->info.mulpdu - 14 : 1;
    uint64_t per = x->cur ? (x->cur + room - 1) / room : 1;
    return st.fpdus_tx / per;
}

static int server_summary(perf *x) {
    pt_state *p = pt(x);
    const perf_opts *o = x->o;
    uint64_t iters = o->duration > 0 ? 0 : perf_iters_for(x, x->cur);
    bool rdma = x->test != PERF_SEND;
    /* The client's handshake may overtake its last Writes, which travel on
     * the other connection: give them time to land. */
    uint64_t want = x->lat ? iters : p->peer_iters;
    for (uint64_t end = perf_now_ns() + PT_CLOSE_WAIT_NS / 2;
         rdma && served(x) < want && !x->closed && perf_now_ns() < end;)
        if (perf_progress(x, 10) < 0)
            return -1;
    uint64_t done = rdma ? served(x) : x->lat ? x->pongs : x->data_rx;
    double secs = (double)(p->rx_last_ns - p->rx_first_ns) * 1e-9;
    double avg = secs > 0 ? (double)x->data_rx * x->cur / secs : 0;
    const char *what = x->test == PERF_WRITE && !x->lat ? "RDMA Writes placed"
                       : x->test == PERF_READ           ? "RDMA Read Responses sent"
                       : x->lat                         ? "pings answered"
                                                        : "Sends received";
    if (o->json) {
        printf("{\"role\":\"server\",\"peer\":\"perftest %s\",\"test\":\"%s\",\"mode\":\"%s\","
               "\"bytes\":%u,\"served\":%llu,\"peer_iterations\":%llu,\"peer_bw_avg_MBps\":%.2f,"
               "\"bw_avg_MBps\":%.2f}\n",
               p->peer_version, perf_test_name(x->test), x->lat ? "lat" : "bw", x->cur,
               (unsigned long long)done, (unsigned long long)p->peer_iters, p->peer_avg,
               avg / PERF_MB);
    } else if (rdma && !x->lat) { /* the client's report, backed by our count */
        printf(" perftest client's report:\n %-10s %-12s %16s %19s %15s\n", "#bytes", "#iterations",
               "BW peak[MB/s]", "BW average[MB/s]", "MsgRate[Mpps]");
        printf(" %-10llu %-12llu %16.2f %19.2f %15.6f\n", (unsigned long long)p->peer_size,
               (unsigned long long)p->peer_iters, p->peer_peak, p->peer_avg, p->peer_rate);
        printf(" data QP: %llu %s\n", (unsigned long long)done, what);
    } else if (x->test == PERF_SEND && !x->lat) { /* perftest's server measures too */
        printf(" %-10s %-12s %19s %15s\n %-10u %-12llu %19.2f %15.6f\n", "#bytes", "#received",
               "BW average[MB/s]", "MsgRate[Mpps]", x->cur, (unsigned long long)done, avg / PERF_MB,
               secs > 0 ? (double)done / secs / 1e6 : 0);
    } else {
        printf(" data QP: %llu %s\n", (unsigned long long)done, what);
    }
    fflush(stdout);
    if (rdma && !x->lat && p->peer_size != x->cur)
        return perf_fail(x, "the client reports %llu-octet messages, this server runs %u",
                         (unsigned long long)p->peer_size, x->cur);
    if (rdma && !x->lat && iters && p->peer_iters != iters)
        return perf_fail(x, "the client reports %llu iterations, this server expected %llu (-n)",
                         (unsigned long long)p->peer_iters, (unsigned long long)iters);
    /* -n: exactly; -D: perftest reports its measured window only, and
     * received Sends are not reported by the client at all. */
    uint64_t need = rdma ? want : iters;
    if (iters ? done != need : done < need || !done)
        return perf_fail(x, "%llu %s, expected %s%llu", (unsigned long long)done, what,
                         iters ? "" : "at least ", (unsigned long long)(need ? need : 1));
    return 0;
}

/* The last step is done. As between two perftests, the server closes first
 * once its last Send has gone (after a grace period); the client waits for
 * that. (A client that closes as soon as it has the server's last message
 * can make siw fail that Send's completion with IBV_WC_LOC_QP_OP_ERR, and
 * perftest's server then fails: seen with ib_write_bw.) */
static bool all_closed(const perf *x) { return pt(x)->c_closed && (!x->qp || x->closed); }

static int close_wait(perf *x, uint64_t ns) {
    for (uint64_t end = perf_now_ns() + ns; !all_closed(x) && perf_now_ns() < end;)
        if (perf_progress(x, perf_wait_ms(x)) < 0)
            return -1;
    return 0;
}

static void close_both(perf *x) {
    if (!pt(x)->c_closed)
        iw_qp_close(x->aux_qp);
    if (x->qp && !x->closed)
        iw_qp_close(x->qp);
}

static int finish(perf *x) {
    pt_state *p = pt(x);
    p->done = true;
    x->bye = true;
    if (x->server) {
        while (p->c_done < p->c_posted && !p->c_closed)
            if (perf_progress(x, perf_wait_ms(x)) < 0)
                return -1;
        /* A perftest client that sent last polls that Send's completion:
         * give its stack a moment before our FIN. */
        if (close_wait(x, PT_CLOSE_GRACE_NS) < 0)
            return -1;
        close_both(x);
        return close_wait(x, PT_CLOSE_WAIT_NS);
    }
    if (close_wait(x, PT_CLOSE_WAIT_NS) < 0)
        return -1;
    close_both(x);
    return close_wait(x, PT_CLOSE_WAIT_NS / 10);
}

static int run_script(perf *x) {
    pt_result r;
    memset(&r, 0, sizeof r);
    const pt_step *s = pt_script((pt_test)x->test, x->lat);
    for (pt(x)->step = 0; s[pt(x)->step] != PT_STEP_END; pt(x)->step++)
        if (run_step(x, s[pt(x)->step], &r) < 0)
            return -1;
    if (x->server && server_summary(x) < 0)
        return -1;
    return finish(x);
}

/* write_lat: perftest's stamp is the iteration + 1 as a char
 * (run_iter_lat_write: *post_buf = (char)++scnt), 0 after 255. */
static uint8_t stamp(uint64_t i) { return (uint8_t)(i + 1); }

static void header_peer(const perf *x) {
    printf(" Peer            : perftest %s (--perftest: its -R exchange over a second QP)\n",
           pt(x)->peer_version);
}

static void header_remote(const perf *x) {
    const pt_state *p = pt(x);
    printf(" Remote buffer   : STag 0x%08x TO 0x%016llx (pingpong_dest: QPN 0x%04x PSN "
           "0x%06x out_reads %u)\n",
           x->peer_stag, (unsigned long long)x->peer_to, p->rem.qpn, p->rem.psn, p->rem.out_reads);
}

static const perf_hooks pt_hooks = {
    .iters_uncapped = true, /* both sides must count alike: perftest's default */
    .retry_connect = true,  /* perftest's server may not listen yet: pt_connect */
    .defer_close = true,    /* perftest closes as soon as it is done */
    .server_kind = "perftest ",
    .aux_event = on_comm_event,
    .data_recv = on_data_recv,
    .may_send = may_send,
    .data_offset = data_offset, /* bandwidth runs walk both buffers in cache-line slots */
    .stamp = stamp,
    .header_peer = header_peer,
    .header_remote = header_remote,
};

static int pt_init(perf *x) {
    const perf_opts *o = x->o;
    x->hk = &pt_hooks;
    x->proto = calloc(1, sizeof(pt_state));
    if (!x->proto)
        return perf_fail(x, "out of memory");
    x->test = o->test;
    x->lat = o->lat;
    x->max_size = o->size;
    x->depth = o->lat ? 1 : o->depth;
    x->last_activity = perf_now_ns();
    for (const pt_step *k = pt_script((pt_test)x->test, x->lat); *k != PT_STEP_END; k++)
        pt(x)->msgs_expected += pt_step_len(*k) ? 1 : 0;
    return 0;
}

static int run_client(perf *x) {
    if (pt_init(x) < 0)
        return -1;
    /* The CQ holds both QPs' work: the window, the receives and their flush. */
    if (perf_open_dev(x, perf_cq_depth_for(x->depth, PERF_LAT_RQ + PT_RX_SLOTS)) < 0 ||
        pt_connect(x, true) < 0)
        return -1;
    for (uint64_t i = 0; i < PT_RX_SLOTS; i++)
        if (comm_repost(x, i) < 0)
            return -1;
    return run_script(x);
}

static int run_server(perf *x) {
    const perf_opts *o = x->o;
    if (pt_init(x) < 0)
        return -1;
    uint32_t rq = o->rx_depth > PT_RX_DEPTH ? o->rx_depth : PT_RX_DEPTH;
    if (perf_open_dev(x, perf_cq_depth_for(x->depth, rq + PT_RX_SLOTS)) < 0)
        return -1;
    int rc = iw_listen(x->dev, o->host, o->port, &x->lst);
    if (rc < 0)
        return perf_fail(x, "cannot listen on %s:%u: %s", o->host, o->port, iw_strerror(rc));
    bool v6 = strchr(o->host, ':') != NULL;
    if (o->json)
        printf("{\"listening\":\"%s\",\"port\":%u}\n", o->host, iw_listener_port(x->lst));
    else
        printf(PERF_PROG " server: listening on %s%s%s:%u\n --perftest: perftest's %s %s, -R\n",
               v6 ? "[" : "", o->host, v6 ? "]" : "", iw_listener_port(x->lst),
               perf_test_name(x->test), x->lat ? "latency" : "bandwidth");
    fflush(stdout);
    if (pt_accept(x, true) < 0 || run_script(x) < 0)
        return -1;
    if (!o->json)
        printf(PERF_PROG " server: session done (perftest %s)\n", pt(x)->peer_version);
    return 0;
}

/* ---- the table (perf_proto.h) ---- */

/* perftest's side of the exchange fixes what can be run. */
static const char *check_opts(perf_opts *o) {
    if (o->all)
        return "--perftest runs one size: -a is not supported";
    if (o->verify)
        return "--perftest cannot --verify: perftest's data is its own";
    if (o->lat && o->duration > 0)
        return "--perftest latency runs count iterations: -D is not supported with --lat";
    /* perftest's write_lat server sends the first FPDU on the data QP;
     * as MPA responder we may not (RFC 5044 section 7.1.2 rule 4). */
    if (o->server && o->lat && o->test == PERF_WRITE)
        return "--perftest cannot serve write latency: perftest's write_lat server sends "
               "first, which an MPA responder may not (RFC 5044 7.1.2 rule 4); run "
               "iwarp-perf as the client";
    if (!o->connect_delay_set)
        o->connect_delay_ms = 50; /* siw's Reply race (docs/iwarp-perf.md) */
    return NULL;
}

/* After perf_destroy: the credit word's registration went with the device. */
static void cleanup(perf *x) {
    if (x->proto)
        free(pt(x)->credit);
    free(x->proto);
    x->proto = NULL;
}

const perf_proto perf_perftest = {
    .id = PT_VERSION,
    .check_opts = check_opts,
    .run_server = run_server,
    .run_client = run_client,
    .cleanup = cleanup,
};
