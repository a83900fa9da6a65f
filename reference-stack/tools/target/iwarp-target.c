/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwarp-target: the reference implementation under test, driven through
 * the agent protocol (docs/agent-protocol.md). One runner at a time; runner
 * sessions are served one after another for as long as the program runs.
 * Malformed requests get {"ok":false,...}; nothing received on the agent or
 * the RDMA socket can stop it. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <iwarp/faults.h>
#include <iwarp/iwarp.h>
#include <iwarp/verbs.h>

#include "iw_agent.h"
#include "iw_agent_srv.h"
#include "iw_json.h"
#include "iw_jsonw.h"

#define CQ_DEPTH 4096

/* Per-session limits (docs/agent-protocol.md, "Limits"): a runner cannot
 * make the target allocate without bound. Registered memory covers the
 * largest case (8 regions of 16 MiB) twice; posted buffers are receive
 * buffers and data_hex send sources not yet completed. */
#define TGT_REG_BYTES_MAX (256u << 20)
#define TGT_REGIONS_MAX 4096
#define TGT_POSTED_BYTES_MAX (64u << 20)
#define TGT_POSTED_WRS_MAX 65536

typedef struct region {
    uint32_t stag;
    uint8_t *mem; /* guard | buf | guard */
    uint8_t *buf;
    uint64_t len, to;
    struct region *next;
} region;

typedef struct rbuf { /* posted receive buffers and data_hex send sources */
    uint64_t wr_id;
    uint8_t *buf;
    uint32_t len;
    struct rbuf *next;
} rbuf;

typedef struct tgt {
    iw_dev *dev;
    uint32_t pd, pd2;
    iw_cq *cq;
    iw_listener *lst;
    iw_qp *qp;
    bool qp_attached;
    iw_conn_settings mpa_set;
    region *regions;
    rbuf *recvs, *sends;
    uint64_t next_id;
    uint64_t posted_bytes; /* recvs + sends: TGT_POSTED_BYTES_MAX */
    uint32_t posted_wrs;
    char err[200];          /* a formatted handler error */
    char host[64];          /* the agent's own address: a listen without host serves there */
    iw_transport transport; /* the session's (reset "transport"); a new runner gets TCP */
    iw_agent_srv srv;       /* the runner, its requests, the events */
} tgt;

static volatile sig_atomic_t stop_flag;
static void on_signal(int sig) {
    (void)sig;
    stop_flag = 1;
}

/* ---- session state ---- */

static void rbuf_free(tgt *t, rbuf *r) {
    t->posted_bytes -= r->len;
    t->posted_wrs--;
    free(r->buf);
    free(r);
}

static void rbuf_free_all(tgt *t, rbuf **l) {
    while (*l) {
        rbuf *r = *l;
        *l = r->next;
        rbuf_free(t, r);
    }
}

static rbuf *rbuf_take(rbuf **l, uint64_t id) {
    for (rbuf **p = l; *p; p = &(*p)->next)
        if ((*p)->wr_id == id) {
            rbuf *r = *p;
            *p = r->next;
            return r;
        }
    return NULL;
}

static void tgt_teardown(tgt *t) {
    iw_dev_close(t->dev); /* QP, CQ, listener go with it */
    t->dev = NULL;
    t->qp = NULL;
    t->lst = NULL;
    t->cq = NULL;
    t->qp_attached = false;
    while (t->regions) {
        region *r = t->regions;
        t->regions = r->next;
        free(r->mem);
        free(r);
    }
    rbuf_free_all(t, &t->recvs);
    rbuf_free_all(t, &t->sends);
    iw_agent_srv_events_clear(&t->srv);
}

static int tgt_setup(tgt *t) {
    if (iw_dev_open_transport(&t->dev, t->transport) < 0 ||
        iw_pd_alloc(iw_dev_rnic(t->dev), &t->pd) < 0 ||
        iw_pd_alloc(iw_dev_rnic(t->dev), &t->pd2) < 0 || iw_cq_create(t->dev, CQ_DEPTH, &t->cq) < 0)
        return -1;
    return 0;
}

static region *region_find(tgt *t, uint32_t stag) {
    for (region *r = t->regions; r; r = r->next)
        if (r->stag == stag)
            return r;
    return NULL;
}

static const char *status_name(iw_wc_status s) {
    switch (s) {
    case IW_WC_SUCCESS:
        return "ok";
    case IW_WC_FLUSHED:
        return "flushed";
    case IW_WC_REMOTE_ERROR:
        return "remote_error";
    default:
        return "local_error";
    }
}

static void lower_copy(char *dst, size_t n, const char *src) {
    size_t i = 0;
    for (; src[i] && i + 1 < n; i++)
        dst[i] = (char)(src[i] >= 'A' && src[i] <= 'Z' ? src[i] + 32 : src[i]);
    dst[i] = 0;
}

static void event_term(iw_jw *o, const char *type, const iw_term_info *ti) {
    iw_jw_str(o, "type", type);
    iw_jw_uint(o, "layer", iw_term_layer(ti->triple));
    iw_jw_uint(o, "etype", iw_term_etype(ti->triple));
    iw_jw_uint(o, "code", iw_term_ecode(ti->triple));
    iw_jw_str(o, "name", iw_term_str(ti->triple));
    iw_jw_bool(o, "m", ti->m);
    iw_jw_bool(o, "d", ti->d);
    iw_jw_bool(o, "r", ti->r);
    if (ti->m || ti->d)
        iw_jw_uint(o, "ddp_seg_len", ti->ddp_seg_len);
    if (ti->hdr_len)
        iw_jw_hexbytes(o, "hdr_hex", ti->hdr, ti->hdr_len);
}

/* One CQ entry as an agent event. */
static void event_from_wc(tgt *t, const iw_wc *wc) {
    const iw_event *e = &wc->ev;
    iw_jbuf b;
    if (!iw_jbuf_open(&b))
        return;
    iw_jw *o = &b.j;
    iw_jw_obj_begin(o, NULL);
    switch (e->type) {
    case IW_EV_CONNECTED: {
        const iw_conn_info *in = e->info;
        iw_jw_str(o, "type", "connected");
        iw_jw_obj_begin(o, "mpa");
        iw_jw_uint(o, "rev", in->mpa_rev);
        iw_jw_bool(o, "enhanced", in->enhanced);
        iw_jw_bool(o, "markers_tx", in->markers_tx);
        iw_jw_bool(o, "markers_rx", in->markers_rx);
        iw_jw_bool(o, "crc", in->crc);
        iw_jw_bool(o, "p2p", in->p2p);
        if (in->p2p)
            iw_jw_str(o, "rtr",
                      in->rtr & IW_RTR_WRITE  ? "write"
                      : in->rtr & IW_RTR_READ ? "read"
                                              : "send");
        iw_jw_uint(o, "ird", in->ird);
        iw_jw_uint(o, "ord", in->ord);
        iw_jw_uint(o, "peer_ird", in->peer_ird);
        iw_jw_uint(o, "peer_ord", in->peer_ord);
        iw_jw_uint(o, "mulpdu", in->mulpdu);
        iw_jw_obj_end(o);
        iw_jw_hexbytes(o, "peer_private_data_hex", in->peer_private_data,
                       in->peer_private_data_len);
        break;
    }
    case IW_EV_REJECTED:
        iw_jw_str(o, "type", "mpa_rejected");
        if (e->info)
            iw_jw_hexbytes(o, "peer_private_data_hex", e->info->peer_private_data,
                           e->info->peer_private_data_len);
        break;
    case IW_EV_RECV: {
        iw_jw_str(o, "type", "recv");
        iw_jw_str(o, "status", status_name(e->status));
        iw_jw_uint(o, "id", e->wr_id);
        rbuf *r = rbuf_take(&t->recvs, e->wr_id);
        if (e->status == IW_WC_SUCCESS) {
            iw_jw_uint(o, "len", e->len);
            iw_jw_uint(o, "msn", e->msn);
            if (r && e->len <= r->len)
                iw_jw_hexbytes(o, "data_hex", r->buf, e->len);
            iw_jw_bool(o, "solicited", e->solicited);
            if (e->has_inv)
                iw_jw_hex32(o, "invalidated_stag", e->inv_stag);
            if (e->has_imm)
                iw_jw_hexbytes(o, "immediate_hex", e->imm, sizeof e->imm);
        }
        if (r)
            rbuf_free(t, r);
        break;
    }
    case IW_EV_SEND_DONE:
    case IW_EV_WRITE_DONE:
    case IW_EV_READ_DONE:
    case IW_EV_ATOMIC_DONE: {
        static const char *names[] = {[IW_EV_SEND_DONE] = "send_done",
                                      [IW_EV_WRITE_DONE] = "write_done",
                                      [IW_EV_READ_DONE] = "read_done",
                                      [IW_EV_ATOMIC_DONE] = "atomic_done"};
        iw_jw_str(o, "type", names[e->type]);
        iw_jw_str(o, "status", status_name(e->status));
        iw_jw_uint(o, "id", e->wr_id);
        if (e->type == IW_EV_ATOMIC_DONE && e->status == IW_WC_SUCCESS) {
            uint8_t be[8];
            for (int i = 0; i < 8; i++)
                be[i] = (uint8_t)(e->atomic_orig >> (56 - 8 * i));
            iw_jw_hexbytes(o, "original_hex", be, 8);
        }
        rbuf *s = rbuf_take(&t->sends, e->wr_id);
        if (s)
            rbuf_free(t, s);
        break;
    }
    case IW_EV_TERM_SENT:
        event_term(o, "terminate_sent", &e->term);
        break;
    case IW_EV_TERM_RECEIVED:
        event_term(o, "terminate_received", &e->term);
        break;
    case IW_EV_CLOSED: {
        char reason[48];
        lower_copy(reason, sizeof reason, iw_close_id(e->close));
        iw_jw_str(o, "type", "closed");
        iw_jw_str(o, "reason", reason);
        break;
    }
    default:
        iw_jw_str(o, "type", "error");
        iw_jw_str(o, "what", "unknown engine event");
        break;
    }
    iw_jw_obj_end(o);
    iw_agent_srv_event_push(&t->srv, iw_jbuf_text(&b));
    iw_jbuf_free(&b);
}

static void tgt_progress(tgt *t, int timeout_ms) {
    if (!t->dev)
        return;
    iw_dev_progress(t->dev, timeout_ms);
    if (t->lst && t->qp && !t->qp_attached && iw_accept(t->lst, t->qp) == 0) {
        t->qp_attached = true;
        /* listen accepts one RDMA connection: every other pending one is
         * closed now and later ones are refused by the kernel. */
        iw_listener_close(t->lst);
        t->lst = NULL;
    }
    iw_wc wc[64];
    int n;
    while ((n = iw_cq_poll(t->cq, wc, 64)) > 0)
        for (int i = 0; i < n; i++)
            event_from_wc(t, &wc[i]);
}

/* ---- request handlers ---- */

static void settings_from_mpa(tgt *t, const iw_agent_mpa *m, iw_role role, iw_conn_settings *s) {
    *s = t->mpa_set;
    s->role = role;
    if (m->rev >= 0)
        s->mpa_rev = (uint8_t)m->rev;
    if (m->markers >= 0)
        s->markers = m->markers;
    if (m->crc >= 0)
        s->crc = m->crc;
    if (m->p2p >= 0)
        s->p2p = m->p2p;
    if (m->rtr >= 0)
        s->rtr = (unsigned)m->rtr;
    if (m->ird >= 0)
        s->ird = (uint16_t)m->ird;
    if (m->ord >= 0)
        s->ord = (uint16_t)m->ord;
    if (s->p2p && s->mpa_rev < IW_MPA_REV2)
        s->p2p = false;
    s->reject = m->reject;
    if (m->timeout_ms >= 0)
        s->mpa_timeout = (iw_tstamp)m->timeout_ms * 1000000u;
    s->private_data = m->private_data;
    s->private_data_len = (uint16_t)m->private_data_len;
}

/* Does the request line carry this key (an absent listen host takes the
 * agent's address, not the parser's 127.0.0.1)? */
static bool line_has(const char *line, size_t len, const char *key) {
    iw_json_doc d;
    bool has = iw_json_parse(&d, line, len) == 0 && d.nodes[0].type == IW_JSON_OBJ &&
               iw_json_get(&d, &d.nodes[0], key);
    iw_json_free(&d);
    return has;
}

static const char *do_connect(tgt *t, const iw_agent_req *r, const char *host, iw_jw *o) {
    if (t->qp)
        return "a connection already exists (send reset first)";
    iw_conn_settings s;
    settings_from_mpa(t, &r->mpa, r->op == IW_AGENT_LISTEN ? IW_ROLE_RESPONDER : IW_ROLE_INITIATOR,
                      &s);
    if (iw_qp_create(t->dev, t->pd, t->cq, &s, &t->qp) < 0)
        return "cannot create the queue pair";
    const char *fail = NULL;
    if (r->op == IW_AGENT_CONNECT) {
        if (iw_qp_connect(t->qp, host, r->port) == 0)
            t->qp_attached = true;
        else
            fail = "connect failed (host must be a numeric address)";
    } else if (iw_listen(t->dev, host, r->port, &t->lst) == 0) {
        /* Pending connections wait no longer than the MPA startup would. */
        iw_listener_set_limits(t->lst, IW_LISTEN_PENDING_MAX,
                               (int)(s.mpa_timeout ? s.mpa_timeout / 1000000u : 0));
        iw_jw_uint(o, "port", iw_listener_port(t->lst));
    } else {
        fail = "cannot listen on that host and port";
    }
    if (fail) {
        /* Nothing was set up: the next listen or connect starts afresh. */
        iw_qp_destroy(t->qp);
        t->qp = NULL;
    }
    return fail;
}

/* NULL when n more buffers totalling bytes may be posted; else why not. */
static const char *posted_room(tgt *t, uint64_t n, uint64_t bytes) {
    if (n > TGT_POSTED_WRS_MAX - t->posted_wrs) {
        snprintf(t->err, sizeof t->err,
                 "session limit: at most %u receive buffers and data_hex sends outstanding "
                 "(%u now)",
                 TGT_POSTED_WRS_MAX, t->posted_wrs);
        return t->err;
    }
    if (bytes > TGT_POSTED_BYTES_MAX - t->posted_bytes) {
        snprintf(t->err, sizeof t->err,
                 "session limit: at most %u MiB in receive buffers and data_hex sends "
                 "outstanding (%llu octets now, %llu more asked)",
                 TGT_POSTED_BYTES_MAX >> 20, (unsigned long long)t->posted_bytes,
                 (unsigned long long)bytes);
        return t->err;
    }
    return NULL;
}

static const char *do_reg_mr(tgt *t, const iw_agent_req *r, iw_jw *o) {
    uint64_t total = 0;
    unsigned n = 0;
    for (const region *x = t->regions; x; x = x->next, n++)
        total += x->len;
    if (n >= TGT_REGIONS_MAX) {
        snprintf(t->err, sizeof t->err, "session limit: at most %u regions", TGT_REGIONS_MAX);
        return t->err;
    }
    if (r->len > TGT_REG_BYTES_MAX - total) {
        snprintf(t->err, sizeof t->err,
                 "session limit: at most %u MiB registered (%llu octets now, %llu more asked)",
                 TGT_REG_BYTES_MAX >> 20, (unsigned long long)total, (unsigned long long)r->len);
        return t->err;
    }
    region *g = calloc(1, sizeof *g);
    if (!g || !(g->mem = iw_agent_guard_alloc(r->len, r->fill))) {
        free(g);
        return "out of memory";
    }
    g->buf = g->mem + IW_AGENT_GUARD_LEN;
    g->len = r->len;
    g->to = (uint64_t)(uintptr_t)g->buf; /* VA-based Tagged Offsets, as verbs do */
    unsigned acc = 0;
    if (r->access & IW_AGENT_ACC_LOCAL_WRITE)
        acc |= IW_ACCESS_LOCAL_WRITE;
    if (r->access & IW_AGENT_ACC_REMOTE_READ)
        acc |= IW_ACCESS_REMOTE_READ;
    if (r->access & IW_AGENT_ACC_REMOTE_WRITE)
        acc |= IW_ACCESS_REMOTE_WRITE;
    if (r->access & IW_AGENT_ACC_REMOTE_ATOMIC)
        acc |= IW_ACCESS_REMOTE_ATOMIC;
    if (iw_mr_reg(iw_dev_rnic(t->dev), r->pd_index ? t->pd2 : t->pd, g->buf, g->len, g->to, acc,
                  &g->stag) < 0) {
        free(g->mem);
        free(g);
        return "registration failed";
    }
    g->next = t->regions;
    t->regions = g;
    iw_jw_hex32(o, "stag", g->stag);
    iw_jw_hex64(o, "to", g->to);
    iw_jw_uint(o, "len", g->len);
    return NULL;
}

static const char *do_region_op(tgt *t, const iw_agent_req *r, iw_jw *o) {
    region *g = region_find(t, r->stag);
    if (!g)
        return "unknown stag";
    switch (r->op) {
    case IW_AGENT_DEREG_MR:
        /* Once iw_mr_dereg returns the engine never touches the memory
         * again, whatever work named it (engine.h), so it can go now. */
        iw_mr_dereg(iw_dev_rnic(t->dev), g->stag);
        for (region **p = &t->regions; *p; p = &(*p)->next)
            if (*p == g) {
                *p = g->next;
                break;
            }
        free(g->mem);
        free(g);
        return NULL;
    case IW_AGENT_INVALIDATE:
        return iw_mr_invalidate(iw_dev_rnic(t->dev), g->stag) < 0 ? "cannot invalidate" : NULL;
    default: /* read_mr, write_mr, guard */
        return iw_agent_region_io(r, g->mem, g->len, o);
    }
}

static const char *do_post_recv(tgt *t, const iw_agent_req *r) {
    if (!t->qp || !iw_qp_conn(t->qp))
        return "no connection";
    const char *full = posted_room(t, r->count, (uint64_t)r->count * r->len);
    if (full)
        return full;
    for (uint32_t i = 0; i < r->count; i++) {
        rbuf *b = calloc(1, sizeof *b);
        if (!b || !(b->buf = calloc(1, r->len ? r->len : 1))) {
            free(b);
            return "out of memory";
        }
        b->len = (uint32_t)r->len;
        b->wr_id = ++t->next_id;
        if (iw_qp_post_recv(t->qp, b->wr_id, b->buf, b->len) < 0) {
            free(b->buf);
            free(b);
            return "the connection no longer accepts receive buffers";
        }
        t->posted_bytes += b->len;
        t->posted_wrs++;
        b->next = t->recvs;
        t->recvs = b;
    }
    return NULL;
}

static const char *do_post_send(tgt *t, iw_agent_req *r, iw_jw *o) {
    if (!t->qp || !iw_qp_conn(t->qp))
        return "no connection";
    iw_send_wr w = {0};
    w.wr_id = ++t->next_id;
    static const iw_wr_op ops[] = {[IW_AGENT_KIND_SEND] = IW_WR_SEND,
                                   [IW_AGENT_KIND_SEND_SE] = IW_WR_SEND_SE,
                                   [IW_AGENT_KIND_SEND_INV] = IW_WR_SEND_INV,
                                   [IW_AGENT_KIND_SEND_SE_INV] = IW_WR_SEND_SE_INV,
                                   [IW_AGENT_KIND_WRITE] = IW_WR_WRITE,
                                   [IW_AGENT_KIND_READ] = IW_WR_READ,
                                   [IW_AGENT_KIND_FETCH_ADD] = IW_WR_FETCH_ADD,
                                   [IW_AGENT_KIND_CMP_SWAP] = IW_WR_CMP_SWAP,
                                   [IW_AGENT_KIND_IMMEDIATE] = IW_WR_IMM,
                                   [IW_AGENT_KIND_IMMEDIATE_SE] = IW_WR_IMM_SE};
    w.op = ops[r->kind];
    w.inv_stag = r->inv_stag;
    w.remote_stag = r->remote_stag;
    w.remote_to = r->remote_to;
    if (r->kind == IW_AGENT_KIND_READ) {
        w.local_stag = r->stag;
        w.local_to = r->to;
        w.len = (uint32_t)r->len;
    } else if (r->kind == IW_AGENT_KIND_FETCH_ADD) {
        w.add_swap = r->add;
        w.add_swap_mask = r->add_mask;
    } else if (r->kind == IW_AGENT_KIND_CMP_SWAP) {
        w.add_swap = r->swap;
        w.compare = r->compare;
        /* Unmasked compare-and-swap unless the runner says otherwise. */
        w.add_swap_mask = r->swap_mask ? r->swap_mask : ~0ull;
        w.compare_mask = r->compare_mask ? r->compare_mask : ~0ull;
    } else if (r->kind == IW_AGENT_KIND_IMMEDIATE || r->kind == IW_AGENT_KIND_IMMEDIATE_SE) {
        memcpy(w.imm, r->data, 8);
    } else if (r->has_data) {
        /* data_hex source: it must live until the send completes. */
        const char *full = posted_room(t, 1, r->data_len);
        if (full)
            return full;
        rbuf *b = calloc(1, sizeof *b);
        if (!b)
            return "out of memory";
        b->wr_id = w.wr_id;
        b->buf = r->data;
        b->len = (uint32_t)r->data_len;
        r->data = NULL;
        t->posted_bytes += b->len;
        t->posted_wrs++;
        b->next = t->sends;
        t->sends = b;
        w.data = b->buf;
        w.len = b->len;
    } else {
        /* The engine reads a source named by STag only while the region
         * stays registered and valid (engine.h, iw_mr_dereg). */
        w.local_stag = r->stag;
        w.local_to = r->to;
        w.len = (uint32_t)r->len;
    }
    int rc = iw_qp_post_send(t->qp, &w);
    if (rc == IW_ERR_INVALID_ARG && !w.data && w.len)
        return "local source stag/to/len is not inside a registered region of the connection's PD";
    if (rc < 0)
        return "the connection no longer accepts work";
    iw_jw_uint(o, "id", w.wr_id);
    return NULL;
}

/* One request for iw_agent_srv (poll is deferred there). */
static const char *handle_req(void *ctx, iw_agent_req *r, const char *line, size_t len, iw_jw *o) {
    tgt *t = ctx;
    switch (r->op) {
    case IW_AGENT_HELLO:
        iw_agent_hello_begin(o, "iwarpkit iwarp-target " IW_VERSION_STR);
        iw_jw_arr_begin(o, "mpa_rev");
        iw_jw_uint(o, NULL, 1);
        iw_jw_uint(o, NULL, 2);
        iw_jw_arr_end(o);
        iw_jw_bool(o, "markers", true);
        iw_jw_bool(o, "crc", true);
        iw_jw_bool(o, "atomics", true);
        iw_jw_bool(o, "immediate", true);
        iw_jw_bool(o, "send_inv", true);
        iw_jw_bool(o, "local_inv", true);
        iw_agent_hello_extensions_begin(o);
        iw_jw_str(o, NULL, "mpa.timeout_ms");
        iw_jw_str(o, NULL, "event.terminate");
        if (iw_transport_available(IW_TRANSPORT_SCTP))
            iw_jw_str(o, NULL, "transport.sctp");
        iw_jw_arr_end(o);
        iw_jw_obj_end(o);
        return NULL;
    case IW_AGENT_RESET: {
        iw_transport tr = r->transport == IW_AGENT_SCTP ? IW_TRANSPORT_SCTP : IW_TRANSPORT_TCP;
        if (!iw_transport_available(tr))
            return "transport sctp is not available (built without libusrsctp)";
        tgt_teardown(t);
        t->transport = tr;
        return tgt_setup(t) < 0 ? "cannot re-create the device" : NULL;
    }
    case IW_AGENT_LISTEN:
        return do_connect(t, r, line_has(line, len, "host") ? r->host : t->host, o);
    case IW_AGENT_CONNECT:
        return do_connect(t, r, r->host, o);
    case IW_AGENT_REG_MR:
        return do_reg_mr(t, r, o);
    case IW_AGENT_DEREG_MR:
    case IW_AGENT_INVALIDATE:
    case IW_AGENT_READ_MR:
    case IW_AGENT_WRITE_MR:
    case IW_AGENT_GUARD:
        return do_region_op(t, r, o);
    case IW_AGENT_POST_RECV:
        return do_post_recv(t, r);
    case IW_AGENT_POST_SEND:
        return do_post_send(t, r, o);
    case IW_AGENT_CLOSE:
        if (!t->qp || !iw_qp_conn(t->qp))
            return "no connection";
        return iw_qp_close(t->qp) < 0 ? "close failed" : NULL;
    default:
        return "unsupported op";
    }
}

static int parse_hostport(const char *s, char *host, size_t hl, uint16_t *port) {
    const char *c = strrchr(s, ':');
    if (!c || (size_t)(c - s) >= hl || c == s)
        return -1;
    char *e;
    unsigned long p = strtoul(c + 1, &e, 10);
    if (*e || p > 65535 || c[1] == 0)
        return -1;
    memcpy(host, s, (size_t)(c - s));
    host[c - s] = 0;
    if (host[0] == '[') { /* [::1]:7400 */
        size_t k = strlen(host);
        if (host[k - 1] != ']')
            return -1;
        memmove(host, host + 1, k - 2);
        host[k - 2] = 0;
    }
    *port = (uint16_t)p;
    return 0;
}

static void usage(FILE *f) {
    fprintf(f, "usage: iwarp-target [--agent HOST:PORT] [--once] [--verbose] [--fault SPEC]\n"
               "  --agent HOST:PORT  agent protocol listener (default 127.0.0.1:7400)\n"
               "  --once             exit after the first runner session ends\n"
               "  --verbose          log each request to stderr\n"
               "  --fault SPEC       deliberately NON-conformant behaviour, to prove that\n"
               "                     conformance cases fail: a comma list of\n"
               "                     skip:L/E/C miscode:L/E/C swap-nibbles no-hdr-copy\n"
               "                     bad-seg-len send-after-terminate place-before-check\n"
               "                     accept-bad-crc accept-mpa-bad-key accept-mpa-bad-rev\n"
               "                     ird-unbounded no-remote-invalidate ignore-access\n"
               "                     sctp-lax-session\n");
}

enum { TAG_LISTEN = 1, TAG_CLIENT, TAG_DEV };

/* The runner left: back to the state after start (or stop with --once). */
static int tgt_end_session(tgt *t, int ep, bool once) {
    iw_agent_srv_drop_client(&t->srv);
    epoll_ctl(ep, EPOLL_CTL_DEL, iw_dev_fd(t->dev), NULL);
    tgt_teardown(t);
    if (once)
        stop_flag = 1;
    t->transport = IW_TRANSPORT_TCP;
    if (tgt_setup(t) < 0) {
        stop_flag = 1;
        return -1;
    }
    return 0;
}

int main(int argc, char **argv) {
    char host[64] = "127.0.0.1";
    uint16_t port = 7400;
    bool once = false, verbose = false;
    iw_faults faults = {0};
    char ferr[120];
    static const struct option opts[] = {
        {"agent", required_argument, 0, 'a'}, {"fault", required_argument, 0, 'f'},
        {"once", no_argument, 0, 'o'},        {"verbose", no_argument, 0, 'v'},
        {"help", no_argument, 0, 'h'},        {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "a:f:ovh", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (iw_faults_parse(&faults, optarg, ferr, sizeof ferr) < 0) {
                fprintf(stderr, "iwarp-target: --fault: %s\n", ferr);
                return 2;
            }
            break;
        case 'a':
            if (parse_hostport(optarg, host, sizeof host, &port) < 0) {
                fprintf(stderr, "iwarp-target: --agent wants HOST:PORT, got '%s'\n", optarg);
                return 2;
            }
            break;
        case 'o':
            once = true;
            break;
        case 'v':
            verbose = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc) {
        usage(stderr);
        return 2;
    }
    int lfd = iw_agent_listen_fd(host, port);
    if (lfd == -2) {
        fprintf(stderr, "iwarp-target: '%s' is not a numeric IPv4/IPv6 address\n", host);
        return 2;
    }
    if (lfd < 0) {
        fprintf(stderr, "iwarp-target: cannot listen on %s:%u: %s\n", host, port, strerror(errno));
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    fprintf(stderr, "iwarp-target: agent protocol on %s:%u\n", host, port);

    tgt t = {0};
    snprintf(t.host, sizeof t.host, "%s", host);
    int srv_rc = iw_agent_srv_init(&t.srv, "iwarp-target", handle_req, &t);
    t.srv.lfd = lfd;
    t.srv.nodelay = true;
    t.srv.verbose = verbose;
    iw_conn_settings_default(&t.mpa_set, IW_ROLE_RESPONDER);
    t.mpa_set.faults = &faults; /* lives until main returns */
    if (faults.flags)
        fprintf(stderr, "iwarp-target: FAULTS INJECTED: this IUT is deliberately non-conformant\n");
    if (srv_rc < 0 || tgt_setup(&t) < 0) {
        fprintf(stderr, "iwarp-target: out of memory\n");
        return 1;
    }
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0 || iw_agent_srv_use_epoll(&t.srv, ep, TAG_LISTEN, TAG_CLIENT) < 0) {
        fprintf(stderr, "iwarp-target: epoll: %s\n", strerror(errno));
        return 1;
    }
    int rc = 0;
    while (!stop_flag) {
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = TAG_DEV};
        epoll_ctl(ep, EPOLL_CTL_ADD, iw_dev_fd(t.dev), &ev); /* re-added after a reset */
        /* usrsctp's timers want a tick about every 10 ms (<iwarp/verbs.h>). */
        int timeout = iw_agent_srv_wait_ms(&t.srv, t.transport == IW_TRANSPORT_SCTP ? 10 : 50);
        struct epoll_event evs[8];
        int n = epoll_wait(ep, evs, 8, timeout);
        bool knock = false;
        for (int i = 0; i < n; i++) {
            if (evs[i].data.u32 == TAG_LISTEN)
                knock = true;
            else if (evs[i].data.u32 == TAG_CLIENT)
                iw_agent_srv_on_client(&t.srv, evs[i].events);
        }
        if (knock) {
            /* The runner's own news first: one that has just left ends its
             * session and the newcomer is served, not turned away. */
            if ((iw_agent_srv_service(&t.srv) || iw_agent_srv_client_gone(&t.srv)) &&
                tgt_end_session(&t, ep, once) < 0)
                rc = 1;
            iw_agent_srv_accept(&t.srv);
        }
        tgt_progress(&t, 0);
        if (iw_agent_srv_service(&t.srv) && tgt_end_session(&t, ep, once) < 0)
            rc = 1;
    }
    tgt_teardown(&t);
    iw_agent_srv_free(&t.srv); /* closes the runner and the listener */
    close(ep);
    return rc;
}
