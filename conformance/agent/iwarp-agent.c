/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwarp-agent: the IUT agent protocol (docs/agent-protocol.md) over
 * rdma-core, so the conformance runner can drive any iWARP RNIC (Linux siw,
 * Chelsio, Intel) exactly as it drives iwarp-target. docs/iwarp-agent.md
 * says what maps to what and what verbs cannot show.
 *
 * One thread, one epoll loop over: the agent listener, the runner's
 * connection, the RDMA CM event channel, the CQ completion channel and the
 * device's async event fd. One runner at a time; sessions one after
 * another; every malformed request gets {"ok":false,...}. Without any RDMA
 * device it still serves: hello says so and device ops fail cleanly. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "iw_agent.h"
#include "iw_agent_srv.h"
#include "iw_json.h"
#include "iw_jsonw.h"
#include "va_map.h"
#include "va_opts.h"

#ifndef VA_VERSION
#define VA_VERSION "0"
#endif

#define CQ_DEPTH 8192
#define SQ_DEPTH 512
#define RQ_DEPTH 4096
#define RESOLVE_MS 2000
#define INV_WAIT_MS 2000
#define TICK_MS 100

enum { TAG_LISTEN = 1, TAG_CLIENT, TAG_CM, TAG_CQ, TAG_ASYNC };

typedef struct region {
    uint32_t stag; /* mr->rkey */
    struct ibv_mr *mr;
    uint8_t *mem; /* guard | buf | guard */
    uint8_t *buf;
    uint64_t len, to;
    unsigned access; /* IBV_ACCESS_* */
    struct region *next;
} region;

typedef enum wr_kind { WK_RECV, WK_SEND, WK_WRITE, WK_READ, WK_ATOMIC, WK_LINV } wr_kind;

/* An outstanding work request and what it owns. */
typedef struct wr {
    uint64_t id;
    wr_kind kind;
    bool posted;       /* receive buffers wait here until the QP exists */
    struct ibv_mr *mr; /* registration of buf, if any */
    uint8_t *buf;
    uint32_t len;
    struct wr *next;
} wr;

typedef enum cstate {
    CS_NONE,
    CS_LISTENING,
    CS_RESOLVING,
    CS_CONNECTING,
    CS_ESTABLISHED,
    CS_CLOSED
} cstate;

typedef struct agent {
    va_opts opt;
    /* Device: librdmacm's context, kept for the life of the process. */
    struct ibv_context *ctx;
    struct ibv_device_attr dattr;
    struct ibv_port_attr pattr;
    bool have_port;
    va_profile prof;
    char dev_name[64];
    /* Session: everything a reset tears down. */
    struct ibv_pd *pd, *pd2;
    struct ibv_comp_channel *cc;
    struct ibv_cq *cq;
    unsigned cq_unacked;
    struct rdma_event_channel *ech;
    char ech_err[160];
    struct rdma_cm_id *lid; /* listener */
    struct rdma_cm_id *id;  /* the connection */
    cstate cs;
    bool passive, we_closed, saw_error;
    struct rdma_conn_param cp;
    uint8_t cp_pd[VA_RDMA_MAX_PRIVATE_DATA];
    bool reject;
    unsigned peer_ird, peer_ord;
    uint8_t peer_pd[VA_RDMA_MAX_PRIVATE_DATA];
    size_t peer_pd_len;
    region *regions;
    wr *wrs, *wrs_tail;
    uint64_t next_id, msn;
    /* Agent protocol: the runner, its requests, the events. */
    iw_agent_srv srv;
    int ep;
    bool cc_in_ep, ech_in_ep, async_in_ep;
    char err[320]; /* text of the last failure */
} agent;

static volatile sig_atomic_t stop_flag;
static void on_signal(int sig) {
    (void)sig;
    stop_flag = 1;
}

static void set_nonblock(int fd) {
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void ep_add(agent *a, int fd, uint32_t tag, uint32_t events) {
    struct epoll_event ev = {.events = events, .data.u32 = tag};
    epoll_ctl(a->ep, EPOLL_CTL_ADD, fd, &ev);
}

static const char *fail(agent *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *fail(agent *a, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->err, sizeof a->err, fmt, ap);
    va_end(ap);
    return a->err;
}

/* ---- events ---- */

static void event_push(agent *a, iw_jbuf *o) {
    iw_agent_srv_event_push(&a->srv, iw_jbuf_text(o));
    if (a->opt.verbose)
        fprintf(stderr, "iwarp-agent: event %s\n", iw_jbuf_text(o));
}

/* {"type":"error","what":...,"raw":...} */
static void event_error(agent *a, const char *what, const char *raw) {
    iw_jbuf b;
    if (!iw_jbuf_open(&b))
        return;
    iw_jw_obj_begin(&b.j, NULL);
    iw_jw_str(&b.j, "type", "error");
    iw_jw_str(&b.j, "what", what);
    if (raw)
        iw_jw_str(&b.j, "raw", raw);
    iw_jw_obj_end(&b.j);
    event_push(a, &b);
    iw_jbuf_free(&b);
}

static void event_closed(agent *a, const char *reason, const char *raw, int status) {
    iw_jbuf b;
    if (!iw_jbuf_open(&b))
        return;
    iw_jw_obj_begin(&b.j, NULL);
    iw_jw_str(&b.j, "type", "closed");
    iw_jw_str(&b.j, "reason", reason);
    if (raw)
        iw_jw_str(&b.j, "raw", raw);
    if (status) {
        iw_jw_uint(&b.j, "raw_status", (uint64_t)(status < 0 ? -status : status));
        iw_jw_str(&b.j, "raw_status_text", strerror(status < 0 ? -status : status));
    }
    if (a->saw_error)
        iw_jw_bool(&b.j, "after_error", true);
    iw_jw_obj_end(&b.j);
    event_push(a, &b);
    iw_jbuf_free(&b);
}

static void event_rejected(agent *a, const uint8_t *pd, size_t pd_len, const char *raw,
                           int status) {
    iw_jbuf b;
    if (!iw_jbuf_open(&b))
        return;
    iw_jw_obj_begin(&b.j, NULL);
    iw_jw_str(&b.j, "type", "mpa_rejected");
    iw_jw_hexbytes(&b.j, "peer_private_data_hex", pd, pd_len);
    iw_jw_str(&b.j, "raw", raw);
    if (status) {
        iw_jw_uint(&b.j, "raw_status", (uint64_t)(status < 0 ? -status : status));
        iw_jw_str(&b.j, "raw_status_text", strerror(status < 0 ? -status : status));
    }
    iw_jw_obj_end(&b.j);
    event_push(a, &b);
    iw_jbuf_free(&b);
}

static void event_connected(agent *a) {
    iw_jbuf b;
    if (!iw_jbuf_open(&b))
        return;
    iw_jw *o = &b.j;
    iw_jw_obj_begin(o, NULL);
    iw_jw_str(o, "type", "connected");
    va_connected_json(&a->prof, a->passive, a->cp.responder_resources, a->cp.initiator_depth,
                      a->peer_ird, a->peer_ord, o);
    iw_jw_hexbytes(o, "peer_private_data_hex", a->peer_pd, a->peer_pd_len);
    iw_jw_str(o, "role", a->passive ? "responder" : "initiator");
    iw_jw_obj_end(o);
    event_push(a, &b);
    iw_jbuf_free(&b);
}

/* ---- work requests ---- */

static wr *wr_new(agent *a, wr_kind k) {
    wr *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->id = ++a->next_id;
    w->kind = k;
    if (a->wrs_tail)
        a->wrs_tail->next = w;
    else
        a->wrs = w;
    a->wrs_tail = w;
    return w;
}

static void wr_free(wr *w) {
    if (w->mr)
        ibv_dereg_mr(w->mr);
    free(w->buf);
    free(w);
}

/* Unlink (not free) the request with this id. */
static wr *wr_take(agent *a, uint64_t id) {
    wr *prev = NULL;
    for (wr *w = a->wrs; w; prev = w, w = w->next)
        if (w->id == id) {
            if (prev)
                prev->next = w->next;
            else
                a->wrs = w->next;
            if (a->wrs_tail == w)
                a->wrs_tail = prev;
            w->next = NULL;
            return w;
        }
    return NULL;
}

/* A work request that could not be posted: forget it. */
static void wr_drop(agent *a, wr *w) {
    wr_take(a, w->id);
    wr_free(w);
}

static int recv_post(agent *a, wr *w) {
    struct ibv_sge sge = {
        .addr = (uintptr_t)w->buf, .length = w->len, .lkey = w->mr ? w->mr->lkey : 0};
    struct ibv_recv_wr rw = {.wr_id = w->id, .sg_list = &sge, .num_sge = w->len ? 1 : 0};
    struct ibv_recv_wr *bad = NULL;
    int rc = ibv_post_recv(a->id->qp, &rw, &bad);
    if (rc)
        return rc;
    w->posted = true;
    return 0;
}

/* ---- completions ---- */

static void event_from_wc(agent *a, const struct ibv_wc *wc) {
    wr *w = wr_take(a, wc->wr_id);
    if (!w) {
        event_error(a, "completion for an unknown work request", va_wc_status_name(wc->status));
        return;
    }
    if (w->kind == WK_LINV) { /* an invalidate whose wait timed out */
        if (wc->status != IBV_WC_SUCCESS)
            event_error(a, "late local invalidate failed", va_wc_status_name(wc->status));
        wr_free(w);
        return;
    }
    bool ok = wc->status == IBV_WC_SUCCESS;
    iw_jbuf b;
    if (!iw_jbuf_open(&b)) {
        wr_free(w);
        return;
    }
    iw_jw *o = &b.j;
    iw_jw_obj_begin(o, NULL);
    static const char *const names[] = {
        [WK_RECV] = "recv",      [WK_SEND] = "send_done",     [WK_WRITE] = "write_done",
        [WK_READ] = "read_done", [WK_ATOMIC] = "atomic_done", [WK_LINV] = "error"};
    iw_jw_str(o, "type", names[w->kind]);
    iw_jw_str(o, "status", va_wc_status_class(wc->status));
    iw_jw_uint(o, "id", w->id);
    if (w->kind == WK_RECV && ok) {
        /* MSN: RFC 5040 §5.1, the n-th untagged message on QN 0 carries
         * MSN n; verbs completes receives in that order, so counting them
         * is exact for every message that completed. */
        iw_jw_uint(o, "len", wc->byte_len);
        iw_jw_uint(o, "msn", ++a->msn);
        if (wc->byte_len <= w->len)
            iw_jw_hexbytes(o, "data_hex", w->buf, wc->byte_len);
        /* ibv_wc has no solicited-event bit: SE cannot be seen. */
        iw_jw_bool(o, "solicited", false);
        iw_jw_str(o, "solicited_source", "unknown");
        if (wc->wc_flags & IBV_WC_WITH_INV)
            iw_jw_hex32(o, "invalidated_stag", wc->invalidated_rkey);
        else if (a->prof.inv_unseen)
            iw_jw_str(o, "invalidated_stag_source", "unknown");
    }
    if (w->kind == WK_ATOMIC && ok && w->buf) {
        /* The 8 octets the device wrote, read as a host-order u64 and sent
         * big-endian like iwarp-target's original_hex. */
        uint64_t v;
        memcpy(&v, w->buf, 8);
        uint8_t be[8];
        for (int i = 0; i < 8; i++)
            be[i] = (uint8_t)(v >> (56 - 8 * i));
        iw_jw_hexbytes(o, "original_hex", be, 8);
    }
    if (!ok) {
        iw_jw_str(o, "wc_status", va_wc_status_name(wc->status));
        iw_jw_uint(o, "vendor_err", wc->vendor_err);
    }
    iw_jw_obj_end(o);
    event_push(a, &b);
    iw_jbuf_free(&b);
    if (!ok && wc->status != IBV_WC_WR_FLUSH_ERR) {
        /* Verbs shows no Terminate; a failed completion is the nearest
         * sign of one (docs/iwarp-agent.md). */
        a->saw_error = true;
        bool remote = !strcmp(va_wc_status_class(wc->status), "remote_error");
        event_error(a, remote ? "remote error completion" : "local error completion",
                    va_wc_status_name(wc->status));
    }
    wr_free(w);
}

/* Take completion notifications, re-arm, and turn every CQE into an event
 * except the one with id want (a local invalidate waited for), whose
 * status goes to *want_status. */
static void cq_drain(agent *a, uint64_t want, int *want_status) {
    if (!a->cq)
        return;
    struct ibv_cq *ecq;
    void *ectx;
    while (a->cc && ibv_get_cq_event(a->cc, &ecq, &ectx) == 0) {
        if (++a->cq_unacked >= 64) {
            ibv_ack_cq_events(a->cq, a->cq_unacked);
            a->cq_unacked = 0;
        }
    }
    ibv_req_notify_cq(a->cq, 0);
    struct ibv_wc wc[32];
    int n;
    while ((n = ibv_poll_cq(a->cq, 32, wc)) > 0)
        for (int i = 0; i < n; i++) {
            if (want && wc[i].wr_id == want) {
                *want_status = wc[i].status;
                wr *w = wr_take(a, want);
                if (w)
                    wr_free(w);
                continue;
            }
            event_from_wc(a, &wc[i]);
        }
}

static void async_drain(agent *a) {
    if (!a->ctx)
        return;
    struct ibv_async_event ev;
    while (ibv_get_async_event(a->ctx, &ev) == 0) {
        int t = ev.event_type;
        bool ours = true;
        if (t == IBV_EVENT_QP_FATAL || t == IBV_EVENT_QP_REQ_ERR || t == IBV_EVENT_QP_ACCESS_ERR ||
            t == IBV_EVENT_COMM_EST || t == IBV_EVENT_SQ_DRAINED ||
            t == IBV_EVENT_QP_LAST_WQE_REACHED)
            ours = a->id && a->id->qp && ev.element.qp == a->id->qp;
        else if (t == IBV_EVENT_CQ_ERR)
            ours = ev.element.cq == a->cq;
        ibv_ack_async_event(&ev);
        if (a->opt.verbose)
            fprintf(stderr, "iwarp-agent: async %s%s\n", va_async_event_name(t),
                    ours ? "" : " (not ours)");
        if (ours && va_async_is_error(t)) {
            a->saw_error = true;
            event_error(a, "asynchronous error", va_async_event_name(t));
        }
    }
}

/* ---- connection management ---- */

static const char *dev_of(struct ibv_context *c) {
    return c ? ibv_get_device_name(c->device) : "(none)";
}

static int qp_create(agent *a, struct rdma_cm_id *id) {
    struct ibv_qp_init_attr qa;
    memset(&qa, 0, sizeof qa);
    unsigned maxwr = (unsigned)a->dattr.max_qp_wr;
    qa.send_cq = a->cq;
    qa.recv_cq = a->cq;
    qa.qp_type = IBV_QPT_RC;
    qa.sq_sig_all = 1;
    qa.cap.max_send_wr = maxwr && maxwr < SQ_DEPTH ? maxwr : SQ_DEPTH;
    qa.cap.max_recv_wr = maxwr && maxwr < RQ_DEPTH ? maxwr : RQ_DEPTH;
    qa.cap.max_send_sge = 1;
    qa.cap.max_recv_sge = 1;
    if (rdma_create_qp(id, a->pd, &qa))
        return -1;
    /* Receive buffers the runner posted before the QP existed. */
    for (wr *w = a->wrs, *nx; w; w = nx) {
        nx = w->next;
        if (w->kind == WK_RECV && !w->posted && recv_post(a, w)) {
            event_error(a, "a receive buffer posted before the connection could not be posted",
                        "ibv_post_recv");
            wr_drop(a, w);
        }
    }
    return 0;
}

static void conn_drop(agent *a) {
    if (!a->id)
        return;
    if (a->id->qp)
        rdma_destroy_qp(a->id);
    rdma_destroy_id(a->id);
    a->id = NULL;
    /* Anything posted died with the QP. */
    for (wr *w = a->wrs, *nx; w; w = nx) {
        nx = w->next;
        if (w->posted)
            wr_drop(a, w);
    }
}

static void connect_failed(agent *a, const char *reason, const char *raw, int status) {
    event_closed(a, reason, raw, status);
    a->cs = CS_CLOSED;
}

typedef struct cm_ev {
    enum rdma_cm_event_type type;
    struct rdma_cm_id *id, *listen_id;
    int status;
    uint8_t pd[VA_RDMA_MAX_PRIVATE_DATA];
    size_t pd_len;
    unsigned initiator_depth, responder_resources;
} cm_ev;

static void cm_connect_request(agent *a, const cm_ev *e) {
    struct rdma_cm_id *nid = e->id;
    if (a->id || !a->lid || e->listen_id != a->lid) {
        rdma_reject(nid, NULL, 0);
        rdma_destroy_id(nid);
        event_error(a, "a further connection request was rejected (one connection per session)",
                    "RDMA_CM_EVENT_CONNECT_REQUEST");
        return;
    }
    if (nid->verbs != a->ctx) {
        rdma_reject(nid, NULL, 0);
        rdma_destroy_id(nid);
        char what[200];
        snprintf(what, sizeof what,
                 "connection request arrived on RDMA device %s, the agent uses %s: rejected",
                 dev_of(nid->verbs), a->dev_name);
        event_error(a, what, "RDMA_CM_EVENT_CONNECT_REQUEST");
        return;
    }
    memcpy(a->peer_pd, e->pd, e->pd_len);
    a->peer_pd_len = e->pd_len;
    /* iw_cm: CONNECT_REQUEST carries the initiator's IRD as
     * initiator_depth and its ORD as responder_resources. */
    a->peer_ird = e->initiator_depth;
    a->peer_ord = e->responder_resources;
    if (a->reject) {
        int rc = rdma_reject(nid, a->cp.private_data, a->cp.private_data_len);
        rdma_destroy_id(nid);
        if (rc)
            event_error(a, "rdma_reject failed", strerror(errno));
        else /* as iwarp-target: the responder that rejects reports it too */
            event_rejected(a, a->peer_pd, a->peer_pd_len, "rdma_reject", 0);
        return;
    }
    a->id = nid;
    a->passive = true;
    if (qp_create(a, nid)) {
        int err = errno;
        rdma_reject(nid, NULL, 0);
        conn_drop(a);
        event_error(a, "cannot create the queue pair for the connection request", strerror(err));
        return;
    }
    if (rdma_accept(nid, &a->cp)) {
        int err = errno;
        conn_drop(a);
        connect_failed(a, "accept_failed", "rdma_accept", err);
        return;
    }
    a->cs = CS_CONNECTING;
}

static void cm_event(agent *a, const cm_ev *e) {
    if (a->opt.verbose)
        fprintf(stderr, "iwarp-agent: cm %s status %d\n", rdma_event_str(e->type), e->status);
    const char *raw = rdma_event_str(e->type);
    if (e->type == RDMA_CM_EVENT_CONNECT_REQUEST) {
        cm_connect_request(a, e);
        return;
    }
    if (e->id != a->id && e->id != a->lid)
        return; /* an id already dropped */
    switch (e->type) {
    case RDMA_CM_EVENT_ADDR_RESOLVED:
        if (!a->id || e->id != a->id)
            break;
        if (a->id->verbs != a->ctx) {
            char what[200];
            snprintf(what, sizeof what, "the address is on RDMA device %s, the agent uses %s",
                     dev_of(a->id->verbs), a->dev_name);
            event_error(a, what, raw);
            conn_drop(a);
            connect_failed(a, "connect_failed", raw, 0);
        } else if (rdma_resolve_route(a->id, RESOLVE_MS)) {
            int err = errno;
            conn_drop(a);
            connect_failed(a, "connect_failed", "rdma_resolve_route", err);
        }
        break;
    case RDMA_CM_EVENT_ROUTE_RESOLVED:
        if (!a->id || e->id != a->id)
            break;
        if (qp_create(a, a->id)) {
            int err = errno;
            conn_drop(a);
            connect_failed(a, "connect_failed", "rdma_create_qp", err);
        } else if (rdma_connect(a->id, &a->cp)) {
            /* siw connects TCP inside rdma_connect: a refused or unreachable
             * address fails here. */
            int err = errno;
            conn_drop(a);
            connect_failed(a, "connect_failed", "rdma_connect", err);
        } else {
            a->cs = CS_CONNECTING;
        }
        break;
    case RDMA_CM_EVENT_ESTABLISHED:
        if (!a->passive) {
            /* iw_cm CONNECT_REPLY: the values the initiator will use,
             * IRD = the responder's ORD, ORD = the responder's IRD. */
            a->peer_ord = e->initiator_depth;
            a->peer_ird = e->responder_resources;
            memcpy(a->peer_pd, e->pd, e->pd_len);
            a->peer_pd_len = e->pd_len;
        }
        a->cs = CS_ESTABLISHED;
        event_connected(a);
        break;
    case RDMA_CM_EVENT_REJECTED:
        event_rejected(a, e->pd, e->pd_len, raw, e->status);
        a->cs = CS_CLOSED;
        break;
    case RDMA_CM_EVENT_ADDR_ERROR:
    case RDMA_CM_EVENT_ROUTE_ERROR:
    case RDMA_CM_EVENT_CONNECT_ERROR:
        connect_failed(a, "connect_failed", raw, e->status);
        break;
    case RDMA_CM_EVENT_UNREACHABLE:
        /* iWARP: the MPA exchange timed out (-ETIMEDOUT from the driver). */
        connect_failed(a, "unreachable", raw, e->status);
        break;
    case RDMA_CM_EVENT_DISCONNECTED:
        if (a->cs != CS_CLOSED) {
            a->cs = CS_CLOSED;
            event_closed(a, a->we_closed ? "ulp_close" : "llp_closed", raw, e->status);
        }
        break;
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
        event_error(a, "the RDMA device was removed", raw);
        if (a->cs != CS_CLOSED && e->id == a->id) {
            a->cs = CS_CLOSED;
            event_closed(a, "device_removal", raw, 0);
        }
        break;
    case RDMA_CM_EVENT_ADDR_CHANGE:
        event_error(a, "the address of the connection changed", raw);
        break;
    default:
        break; /* TIMEWAIT_EXIT and IB-only events */
    }
}

static void cm_drain(agent *a) {
    if (!a->ech)
        return;
    struct rdma_cm_event *ev;
    while (rdma_get_cm_event(a->ech, &ev) == 0) {
        cm_ev e;
        memset(&e, 0, sizeof e);
        e.type = ev->event;
        e.id = ev->id;
        e.listen_id = ev->listen_id;
        e.status = ev->status;
        if (e.type == RDMA_CM_EVENT_CONNECT_REQUEST || e.type == RDMA_CM_EVENT_ESTABLISHED ||
            e.type == RDMA_CM_EVENT_REJECTED) {
            const struct rdma_conn_param *c = &ev->param.conn;
            e.pd_len = c->private_data && c->private_data_len ? c->private_data_len : 0;
            if (e.pd_len > sizeof e.pd)
                e.pd_len = sizeof e.pd;
            if (e.pd_len)
                memcpy(e.pd, c->private_data, e.pd_len);
            e.initiator_depth = c->initiator_depth;
            e.responder_resources = c->responder_resources;
        }
        rdma_ack_cm_event(ev);
        cm_event(a, &e);
    }
}

/* ---- device and session ---- */

static void dev_scan(agent *a) {
    if (a->ctx)
        return;
    int n = 0;
    struct ibv_context **l = rdma_get_devices(&n);
    struct ibv_context *pick = NULL;
    for (int i = 0; l && i < n; i++) {
        const char *name = ibv_get_device_name(l[i]->device);
        if (a->opt.dev[0] ? !strcmp(name, a->opt.dev)
                          : l[i]->device->transport_type == IBV_TRANSPORT_IWARP) {
            pick = l[i];
            break;
        }
    }
    if (l)
        rdma_free_devices(l);
    if (!pick)
        return;
    if (ibv_query_device(pick, &a->dattr)) {
        fprintf(stderr, "iwarp-agent: ibv_query_device(%s) failed: %s\n",
                ibv_get_device_name(pick->device), strerror(errno));
        return;
    }
    a->ctx = pick;
    snprintf(a->dev_name, sizeof a->dev_name, "%s", ibv_get_device_name(pick->device));
    a->have_port = ibv_query_port(pick, a->opt.port, &a->pattr) == 0;
    va_profile_detect(&a->prof, a->dev_name, a->dattr.vendor_id, "/sys");
    set_nonblock(pick->async_fd);
    ep_add(a, pick->async_fd, TAG_ASYNC, EPOLLIN);
    a->async_in_ep = true;
    if (pick->device->transport_type != IBV_TRANSPORT_IWARP)
        fprintf(stderr, "iwarp-agent: warning: %s is not an iWARP device\n", a->dev_name);
    fprintf(stderr, "iwarp-agent: device %s (driver profile %s), port %u%s\n", a->dev_name,
            a->prof.name, a->opt.port, a->have_port ? "" : " (cannot be queried)");
}

static void sess_teardown(agent *a) {
    conn_drop(a);
    if (a->lid)
        rdma_destroy_id(a->lid);
    a->lid = NULL;
    while (a->wrs) {
        wr *w = a->wrs;
        a->wrs = w->next;
        wr_free(w);
    }
    a->wrs_tail = NULL;
    while (a->regions) {
        region *g = a->regions;
        a->regions = g->next;
        ibv_dereg_mr(g->mr);
        free(g->mem);
        free(g);
    }
    if (a->cq) {
        if (a->cq_unacked)
            ibv_ack_cq_events(a->cq, a->cq_unacked);
        a->cq_unacked = 0;
        ibv_destroy_cq(a->cq);
        a->cq = NULL;
    }
    if (a->cc) {
        if (a->cc_in_ep)
            epoll_ctl(a->ep, EPOLL_CTL_DEL, a->cc->fd, NULL);
        a->cc_in_ep = false;
        ibv_destroy_comp_channel(a->cc);
        a->cc = NULL;
    }
    if (a->pd2)
        ibv_dealloc_pd(a->pd2);
    if (a->pd)
        ibv_dealloc_pd(a->pd);
    a->pd = a->pd2 = NULL;
    if (a->ech) {
        if (a->ech_in_ep)
            epoll_ctl(a->ep, EPOLL_CTL_DEL, a->ech->fd, NULL);
        a->ech_in_ep = false;
        rdma_destroy_event_channel(a->ech);
        a->ech = NULL;
    }
    iw_agent_srv_events_clear(&a->srv);
    a->cs = CS_NONE;
    a->passive = a->we_closed = a->saw_error = a->reject = false;
    memset(&a->cp, 0, sizeof a->cp);
    a->peer_ird = a->peer_ord = 0;
    a->peer_pd_len = 0;
    a->next_id = 0;
    a->msn = 0;
}

/* Session resources on the device; without a device nothing (device ops
 * then answer "no RDMA device"). Returns -1 only on a device failure. */
static int sess_setup(agent *a) {
    dev_scan(a);
    if (!a->ctx)
        return 0;
    a->pd = ibv_alloc_pd(a->ctx);
    a->pd2 = ibv_alloc_pd(a->ctx);
    a->cc = ibv_create_comp_channel(a->ctx);
    if (!a->pd || !a->pd2 || !a->cc)
        return -1;
    int cqe = a->dattr.max_cqe > 0 && a->dattr.max_cqe < CQ_DEPTH ? a->dattr.max_cqe : CQ_DEPTH;
    a->cq = ibv_create_cq(a->ctx, cqe, NULL, a->cc, 0);
    if (!a->cq)
        return -1;
    set_nonblock(a->cc->fd);
    ep_add(a, a->cc->fd, TAG_CQ, EPOLLIN);
    a->cc_in_ep = true;
    ibv_req_notify_cq(a->cq, 0);
    a->ech = rdma_create_event_channel();
    if (a->ech) {
        set_nonblock(a->ech->fd);
        ep_add(a, a->ech->fd, TAG_CM, EPOLLIN);
        a->ech_in_ep = true;
        a->ech_err[0] = 0;
    } else {
        snprintf(a->ech_err, sizeof a->ech_err, "cannot open the RDMA CM event channel: %s",
                 strerror(errno));
    }
    return 0;
}

static region *region_find(agent *a, uint32_t stag) {
    for (region *r = a->regions; r; r = r->next)
        if (r->stag == stag)
            return r;
    return NULL;
}

/* [to, to+len) inside region g? */
static bool region_span(const region *g, uint64_t to, uint64_t len) {
    return to >= g->to && to - g->to <= g->len && len <= g->len - (to - g->to);
}

/* ---- request handlers ---- */

static void do_hello(agent *a, iw_jw *o) {
    iw_agent_hello_begin(o, "iwarpkit iwarp-agent " VA_VERSION " (rdma-core verbs)");
    va_profile_caps_json(&a->prof, o);
    bool dev = a->ctx != NULL;
    iw_jw_bool(o, "atomics", dev && a->dattr.atomic_cap != IBV_ATOMIC_NONE);
    iw_jw_bool(o, "immediate", false); /* RFC 7306 Immediate Data: no verbs mapping */
    iw_jw_bool(o, "send_inv", dev && (a->dattr.device_cap_flags & IBV_DEVICE_MEM_MGT_EXTENSIONS));
    iw_jw_bool(o, "local_inv",
               dev && (a->dattr.device_cap_flags & IBV_DEVICE_MEM_MGT_EXTENSIONS) &&
                   !a->prof.no_local_inv);
    iw_agent_hello_extensions_begin(o);
    iw_jw_str(o, NULL, "mpa.verdict");
    iw_jw_str(o, NULL, "event.raw");
    iw_jw_arr_end(o);
    iw_jw_str(o, "agent", "verbs");
    if (!dev) {
        iw_jw_null(o, "device");
        if (a->opt.dev[0])
            iw_jw_str(o, "device_wanted", a->opt.dev);
    } else {
        static const char *const tr[] = {"infiniband", "iwarp", "usnic", "usnic_udp",
                                         "unspecified"};
        int t = a->ctx->device->transport_type;
        static const char *const ps[] = {"nop", "down", "init", "armed", "active", "active_defer"};
        iw_jw_obj_begin(o, "device");
        iw_jw_str(o, "name", a->dev_name);
        iw_jw_str(o, "driver", a->prof.name);
        iw_jw_str(o, "transport", t >= 0 && t < 5 ? tr[t] : "unknown");
        iw_jw_hex32(o, "vendor_id", a->dattr.vendor_id);
        iw_jw_hex32(o, "vendor_part_id", a->dattr.vendor_part_id);
        iw_jw_str(o, "fw_ver", a->dattr.fw_ver);
        iw_jw_uint(o, "port", a->opt.port);
        if (a->have_port)
            iw_jw_str(o, "port_state",
                      (unsigned)a->pattr.state < 6 ? ps[a->pattr.state] : "unknown");
        else
            iw_jw_null(o, "port_state");
        iw_jw_uint(o, "max_qp_rd_atom", (uint64_t)a->dattr.max_qp_rd_atom);
        iw_jw_uint(o, "max_qp_init_rd_atom", (uint64_t)a->dattr.max_qp_init_rd_atom);
        iw_jw_uint(o, "max_qp_wr", (uint64_t)a->dattr.max_qp_wr);
        iw_jw_str(o, "atomic_cap",
                  a->dattr.atomic_cap == IBV_ATOMIC_NONE  ? "none"
                  : a->dattr.atomic_cap == IBV_ATOMIC_HCA ? "hca"
                                                          : "glob");
        iw_jw_bool(o, "mem_mgt_extensions",
                   (a->dattr.device_cap_flags & IBV_DEVICE_MEM_MGT_EXTENSIONS) != 0);
        iw_jw_obj_end(o);
    }
    iw_jw_obj_end(o);
}

static const char *do_connect(agent *a, const iw_agent_req *r, const char *host, iw_jw *o) {
    bool passive = r->op == IW_AGENT_LISTEN;
    if (a->lid || a->id || a->cs != CS_NONE)
        return "a connection already exists (send reset first)";
    if (!a->ech)
        return fail(a, "%s", a->ech_err[0] ? a->ech_err : "no RDMA CM event channel");
    struct sockaddr_storage ss;
    if (iw_agent_sockaddr(host, r->port, &ss) < 0)
        return passive ? "listen host must be a numeric address"
                       : "connect failed (host must be a numeric address)";
    va_verdict v;
    if (va_mpa_classify(&a->prof, &r->mpa, passive, (unsigned)a->dattr.max_qp_rd_atom,
                        (unsigned)a->dattr.max_qp_init_rd_atom, &v) < 0)
        return fail(a, "%s", v.err);
    memset(&a->cp, 0, sizeof a->cp);
    a->cp.responder_resources = (uint8_t)(v.ird > 255 ? 255 : v.ird);
    a->cp.initiator_depth = (uint8_t)(v.ord > 255 ? 255 : v.ord);
    if (r->mpa.private_data_len) {
        memcpy(a->cp_pd, r->mpa.private_data, r->mpa.private_data_len);
        a->cp.private_data = a->cp_pd;
        a->cp.private_data_len = (uint8_t)r->mpa.private_data_len;
    }
    a->reject = passive && r->mpa.reject;
    if (passive) {
        if (rdma_create_id(a->ech, &a->lid, a, RDMA_PS_TCP))
            return fail(a, "rdma_create_id failed: %s", strerror(errno));
        const char *why = NULL;
        if (rdma_bind_addr(a->lid, (struct sockaddr *)&ss))
            why = fail(a, "cannot bind %s:%u: %s", host, r->port, strerror(errno));
        else if (a->lid->verbs && a->lid->verbs != a->ctx)
            why = fail(a, "address %s belongs to RDMA device %s, the agent uses %s", host,
                       dev_of(a->lid->verbs), a->dev_name);
        else if (rdma_listen(a->lid, 4))
            why = fail(a, "cannot listen on %s:%u: %s", host, r->port, strerror(errno));
        if (why) {
            rdma_destroy_id(a->lid);
            a->lid = NULL;
            return why;
        }
        a->cs = CS_LISTENING;
        a->passive = true;
        iw_jw_uint(o, "port", ntohs(rdma_get_src_port(a->lid)));
    } else {
        if (rdma_create_id(a->ech, &a->id, a, RDMA_PS_TCP))
            return fail(a, "rdma_create_id failed: %s", strerror(errno));
        if (rdma_resolve_addr(a->id, NULL, (struct sockaddr *)&ss, RESOLVE_MS)) {
            const char *why = fail(a, "cannot resolve %s: %s", host, strerror(errno));
            rdma_destroy_id(a->id);
            a->id = NULL;
            return why;
        }
        a->cs = CS_RESOLVING;
        a->passive = false;
    }
    va_verdict_json(&v, o);
    return NULL;
}

static const char *do_reg_mr(agent *a, const iw_agent_req *r, iw_jw *o) {
    region *g = calloc(1, sizeof *g);
    if (!g || !(g->mem = iw_agent_guard_alloc(r->len, r->fill))) {
        free(g);
        return "out of memory";
    }
    g->buf = g->mem + IW_AGENT_GUARD_LEN;
    g->len = r->len;
    g->to = (uint64_t)(uintptr_t)g->buf; /* VA-based Tagged Offsets */
    bool added = false;
    g->access = va_access_to_ibv(r->access, &added);
    g->mr = ibv_reg_mr(r->pd_index ? a->pd2 : a->pd, g->buf, g->len, (int)g->access);
    if (!g->mr) {
        const char *why = fail(a, "registration failed: ibv_reg_mr: %s", strerror(errno));
        free(g->mem);
        free(g);
        return why;
    }
    g->stag = g->mr->rkey;
    if (region_find(a, g->stag)) { /* cannot happen with a sane driver */
        ibv_dereg_mr(g->mr);
        free(g->mem);
        free(g);
        return "the device returned an STag that is already registered";
    }
    g->next = a->regions;
    a->regions = g;
    iw_jw_hex32(o, "stag", g->stag);
    iw_jw_hex64(o, "to", g->to);
    iw_jw_uint(o, "len", g->len);
    iw_jw_hex32(o, "lkey", g->mr->lkey);
    if (added)
        iw_jw_str(o, "note",
                  "local_write added: verbs requires it with remote_write or remote_atomic");
    return NULL;
}

static const char *do_invalidate(agent *a, region *g) {
    if (!(a->dattr.device_cap_flags & IBV_DEVICE_MEM_MGT_EXTENSIONS))
        return "invalidate unsupported: the device lacks IBV_DEVICE_MEM_MGT_EXTENSIONS "
               "(no IBV_WR_LOCAL_INV)";
    if (!a->id || !a->id->qp || a->cs != CS_ESTABLISHED)
        return "invalidate needs an established connection: IBV_WR_LOCAL_INV is a send queue "
               "work request";
    wr *w = wr_new(a, WK_LINV);
    if (!w)
        return "out of memory";
    struct ibv_send_wr sw;
    memset(&sw, 0, sizeof sw);
    sw.wr_id = w->id;
    sw.opcode = IBV_WR_LOCAL_INV;
    sw.send_flags = IBV_SEND_SIGNALED;
    sw.invalidate_rkey = g->stag;
    struct ibv_send_wr *bad = NULL;
    int rc = ibv_post_send(a->id->qp, &sw, &bad);
    if (rc) {
        wr_drop(a, w);
        return fail(a, "cannot post IBV_WR_LOCAL_INV: %s", strerror(rc));
    }
    w->posted = true;
    uint64_t id = w->id;
    int st = -1;
    uint64_t end = iw_agent_now_ms() + INV_WAIT_MS;
    while (st < 0 && iw_agent_now_ms() < end) {
        cq_drain(a, id, &st);
        if (st >= 0)
            break;
        struct pollfd p = {a->cc->fd, POLLIN, 0};
        poll(&p, 1, 10);
    }
    if (st < 0)
        return "IBV_WR_LOCAL_INV did not complete within 2 s";
    if (st != IBV_WC_SUCCESS)
        return fail(a,
                    "IBV_WR_LOCAL_INV completed with %s (regions from ibv_reg_mr are not "
                    "invalidatable on most devices; FRWR and memory windows are)",
                    va_wc_status_name(st));
    return NULL;
}

static const char *do_region_op(agent *a, const iw_agent_req *r, iw_jw *o) {
    region *g = region_find(a, r->stag);
    if (!g)
        return "unknown stag";
    switch (r->op) {
    case IW_AGENT_DEREG_MR: {
        int rc = ibv_dereg_mr(g->mr);
        if (rc)
            return fail(a, "ibv_dereg_mr failed: %s", strerror(rc));
        for (region **p = &a->regions; *p; p = &(*p)->next)
            if (*p == g) {
                *p = g->next;
                break;
            }
        free(g->mem);
        free(g);
        return NULL;
    }
    case IW_AGENT_INVALIDATE:
        return do_invalidate(a, g);
    default: /* read_mr, write_mr, guard */
        return iw_agent_region_io(r, g->mem, g->len, o);
    }
}

static const char *do_post_recv(agent *a, const iw_agent_req *r) {
    if (!a->id && !a->lid)
        return "no connection";
    if (a->cs == CS_CLOSED)
        return "the connection no longer accepts receive buffers";
    bool now = a->id && a->id->qp;
    for (uint32_t i = 0; i < r->count; i++) {
        wr *w = wr_new(a, WK_RECV);
        if (!w || !(w->buf = calloc(1, r->len ? r->len : 1))) {
            if (w)
                wr_drop(a, w);
            return "out of memory";
        }
        w->len = (uint32_t)r->len;
        if (w->len && !(w->mr = ibv_reg_mr(a->pd, w->buf, w->len, IBV_ACCESS_LOCAL_WRITE))) {
            wr_drop(a, w);
            return fail(a, "cannot register a receive buffer: %s", strerror(errno));
        }
        if (now) {
            int rc = recv_post(a, w);
            if (rc) {
                wr_drop(a, w);
                return fail(a, "the connection no longer accepts receive buffers (%s)",
                            strerror(rc));
            }
        }
    }
    return NULL;
}

static const char *do_post_send(agent *a, iw_agent_req *r, iw_jw *o) {
    if (!a->id || !a->id->qp || a->cs == CS_CLOSED)
        return "no connection";
    bool mme = a->dattr.device_cap_flags & IBV_DEVICE_MEM_MGT_EXTENSIONS;
    struct ibv_send_wr sw;
    struct ibv_sge sge;
    memset(&sw, 0, sizeof sw);
    memset(&sge, 0, sizeof sge);
    sw.send_flags = IBV_SEND_SIGNALED;
    sw.sg_list = &sge;
    wr_kind kind = WK_SEND;
    const char *warning = NULL;
    switch (r->kind) {
    case IW_AGENT_KIND_SEND:
        sw.opcode = IBV_WR_SEND;
        break;
    case IW_AGENT_KIND_SEND_SE:
        sw.opcode = IBV_WR_SEND;
        sw.send_flags |= IBV_SEND_SOLICITED;
        break;
    case IW_AGENT_KIND_SEND_INV:
    case IW_AGENT_KIND_SEND_SE_INV:
        if (!mme)
            return "send_inv unsupported: the device lacks IBV_DEVICE_MEM_MGT_EXTENSIONS";
        sw.opcode = IBV_WR_SEND_WITH_INV;
        sw.invalidate_rkey = r->inv_stag;
        if (r->kind == IW_AGENT_KIND_SEND_SE_INV)
            sw.send_flags |= IBV_SEND_SOLICITED;
        break;
    case IW_AGENT_KIND_WRITE:
        sw.opcode = IBV_WR_RDMA_WRITE;
        sw.wr.rdma.remote_addr = r->remote_to;
        sw.wr.rdma.rkey = r->remote_stag;
        kind = WK_WRITE;
        break;
    case IW_AGENT_KIND_READ:
        sw.opcode = IBV_WR_RDMA_READ;
        sw.wr.rdma.remote_addr = r->remote_to;
        sw.wr.rdma.rkey = r->remote_stag;
        kind = WK_READ;
        break;
    case IW_AGENT_KIND_FETCH_ADD:
    case IW_AGENT_KIND_CMP_SWAP:
        if (a->dattr.atomic_cap == IBV_ATOMIC_NONE)
            return "atomics unsupported: the device reports atomic_cap IBV_ATOMIC_NONE (iWARP "
                   "verbs devices do not expose RFC 7306 atomics)";
        if (r->add_mask || (r->swap_mask && r->swap_mask != ~0ull) ||
            (r->compare_mask && r->compare_mask != ~0ull))
            return "masked atomics have no standard verbs mapping";
        sw.opcode = r->kind == IW_AGENT_KIND_FETCH_ADD ? IBV_WR_ATOMIC_FETCH_AND_ADD
                                                       : IBV_WR_ATOMIC_CMP_AND_SWP;
        sw.wr.atomic.remote_addr = r->remote_to;
        sw.wr.atomic.rkey = r->remote_stag;
        sw.wr.atomic.compare_add = r->kind == IW_AGENT_KIND_FETCH_ADD ? r->add : r->compare;
        sw.wr.atomic.swap = r->swap;
        kind = WK_ATOMIC;
        break;
    case IW_AGENT_KIND_IMMEDIATE:
    case IW_AGENT_KIND_IMMEDIATE_SE:
        return "immediate unsupported: RFC 7306 Immediate Data has no verbs mapping on iWARP "
               "(IBV_WR_SEND_WITH_IMM is InfiniBand/RoCE semantics)";
    default:
        return "unknown post_send kind";
    }
    wr *w = wr_new(a, kind);
    if (!w)
        return "out of memory";
    sw.wr_id = w->id;
    if (kind == WK_ATOMIC) {
        w->len = 8;
        if (!(w->buf = calloc(1, 8)) ||
            !(w->mr = ibv_reg_mr(a->pd, w->buf, 8, IBV_ACCESS_LOCAL_WRITE))) {
            wr_drop(a, w);
            return fail(a, "cannot register the atomic result buffer: %s", strerror(errno));
        }
        sge = (struct ibv_sge){(uintptr_t)w->buf, 8, w->mr->lkey};
        sw.num_sge = 1;
    } else if (kind == WK_READ) {
        region *g = region_find(a, r->stag);
        if (!g || !region_span(g, r->to, r->len)) {
            wr_drop(a, w);
            return "read sink stag/to/len is not inside a registered region";
        }
        if (a->ctx->device->transport_type == IBV_TRANSPORT_IWARP &&
            !(g->access & IBV_ACCESS_REMOTE_WRITE))
            warning = "iWARP places a Read Response like a tagged write: the sink region "
                      "lacks remote_write and the RNIC may fail this read";
        sge = (struct ibv_sge){r->to, (uint32_t)r->len, g->mr->lkey};
        sw.num_sge = r->len ? 1 : 0;
    } else if (r->has_data) {
        /* data_hex source: lives until the completion. */
        w->buf = r->data;
        w->len = (uint32_t)r->data_len;
        r->data = NULL;
        if (w->len && !(w->mr = ibv_reg_mr(a->pd, w->buf, w->len, 0))) {
            wr_drop(a, w);
            return fail(a, "cannot register the source buffer: %s", strerror(errno));
        }
        sge = (struct ibv_sge){(uintptr_t)w->buf, w->len, w->mr ? w->mr->lkey : 0};
        sw.num_sge = w->len ? 1 : 0;
    } else {
        region *g = region_find(a, r->stag);
        if (!g || !region_span(g, r->to, r->len)) {
            wr_drop(a, w);
            return "local source stag/to/len is not inside a registered region";
        }
        sge = (struct ibv_sge){r->to, (uint32_t)r->len, g->mr->lkey};
        sw.num_sge = r->len ? 1 : 0;
    }
    struct ibv_send_wr *bad = NULL;
    int rc = ibv_post_send(a->id->qp, &sw, &bad);
    if (rc) {
        wr_drop(a, w);
        return fail(a, "the connection no longer accepts work (ibv_post_send: %s)", strerror(rc));
    }
    w->posted = true;
    iw_jw_uint(o, "id", w->id);
    if (warning)
        iw_jw_str(o, "warning", warning);
    return NULL;
}

/* Did the request line name this field? (the parser fills defaults) */
static bool line_has(const char *line, size_t len, const char *key) {
    iw_json_doc d;
    bool has = iw_json_parse(&d, line, len) == 0 && d.nodes[0].type == IW_JSON_OBJ &&
               iw_json_get(&d, &d.nodes[0], key);
    iw_json_free(&d);
    return has;
}

/* One request for iw_agent_srv (poll is deferred there). */
static const char *handle_req(void *ctx, iw_agent_req *r, const char *line, size_t len, iw_jw *o) {
    agent *a = ctx;
    bool devop = r->op != IW_AGENT_HELLO && r->op != IW_AGENT_RESET;
    if (devop && !a->pd) {
        if (a->opt.dev[0])
            return fail(a, "no RDMA device (--dev %s not found)", a->opt.dev);
        return "no RDMA device (no iWARP device found)";
    }
    switch (r->op) {
    case IW_AGENT_HELLO:
        do_hello(a, o);
        return NULL;
    case IW_AGENT_RESET:
        /* rdma_cm's iWARP devices (siw, vendors' RNICs) are MPA over TCP. */
        if (r->transport != IW_AGENT_TCP)
            return "transport sctp is not offered: rdma_cm's iWARP devices run MPA over TCP";
        sess_teardown(a);
        return sess_setup(a) < 0 ? "cannot re-create the device resources" : NULL;
    case IW_AGENT_LISTEN: {
        const char *host = line_has(line, len, "host") ? r->host : a->opt.listen_host;
        return do_connect(a, r, host, o);
    }
    case IW_AGENT_CONNECT:
        return do_connect(a, r, r->host, o);
    case IW_AGENT_REG_MR:
        return do_reg_mr(a, r, o);
    case IW_AGENT_DEREG_MR:
    case IW_AGENT_INVALIDATE:
    case IW_AGENT_READ_MR:
    case IW_AGENT_WRITE_MR:
    case IW_AGENT_GUARD:
        return do_region_op(a, r, o);
    case IW_AGENT_POST_RECV:
        return do_post_recv(a, r);
    case IW_AGENT_POST_SEND:
        return do_post_send(a, r, o);
    case IW_AGENT_CLOSE:
        if (!a->id || (a->cs != CS_ESTABLISHED && a->cs != CS_CONNECTING))
            return "no connection";
        if (rdma_disconnect(a->id))
            return fail(a, "close failed: rdma_disconnect: %s", strerror(errno));
        a->we_closed = true;
        return NULL;
    default:
        return "unsupported op";
    }
}

/* ---- the runner's connection ---- */

static void session_end(agent *a) {
    iw_agent_srv_drop_client(&a->srv);
    sess_teardown(a);
    if (sess_setup(a) < 0)
        fprintf(stderr, "iwarp-agent: cannot re-create the device resources\n");
    if (a->opt.once)
        stop_flag = 1;
}

static void client_accept(agent *a) {
    /* The runner's own news first: one that has just left ends its session
     * and the newcomer is served, not turned away. */
    if (iw_agent_srv_service(&a->srv) || iw_agent_srv_client_gone(&a->srv))
        session_end(a);
    iw_agent_srv_accept(&a->srv);
}

static int agent_listen(const va_opts *o) {
    int fd = iw_agent_listen_fd(o->agent_host, o->agent_port);
    if (fd == -2)
        fprintf(stderr, "iwarp-agent: '%s' is not a numeric IPv4/IPv6 address\n", o->agent_host);
    else if (fd < 0)
        fprintf(stderr, "iwarp-agent: cannot listen on %s:%u: %s\n", o->agent_host, o->agent_port,
                strerror(errno));
    return fd;
}

int main(int argc, char **argv) {
    static agent ag; /* large; zeroed */
    agent *a = &ag;
    char err[200];
    switch (va_opts_parse(&a->opt, argc, argv, err, sizeof err)) {
    case VA_OPTS_HELP:
        fputs(va_usage(), stdout);
        return 0;
    case VA_OPTS_VERSION:
        printf("iwarp-agent %s\n", VA_VERSION);
        return 0;
    case VA_OPTS_ERROR:
        fprintf(stderr, "iwarp-agent: %s\n%s", err, va_usage());
        return 2;
    default:
        break;
    }
    int srv_rc = iw_agent_srv_init(&a->srv, "iwarp-agent", handle_req, a);
    a->srv.verbose = a->opt.verbose;
    a->srv.lfd = agent_listen(&a->opt);
    if (a->srv.lfd < 0)
        return a->srv.lfd == -2 ? 2 : 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    a->ep = epoll_create1(EPOLL_CLOEXEC);
    if (a->ep < 0 || srv_rc < 0) {
        fprintf(stderr, "iwarp-agent: out of resources\n");
        return 1;
    }
    if (iw_agent_srv_use_epoll(&a->srv, a->ep, TAG_LISTEN, TAG_CLIENT) < 0) {
        fprintf(stderr, "iwarp-agent: epoll: %s\n", strerror(errno));
        return 1;
    }
    va_profile_detect(&a->prof, NULL, 0, "/sys");
    if (sess_setup(a) < 0) {
        fprintf(stderr, "iwarp-agent: cannot create resources on %s\n", a->dev_name);
        return 1;
    }
    if (!a->ctx)
        fprintf(stderr, "iwarp-agent: no RDMA device%s%s: serving hello/reset/poll only\n",
                a->opt.dev[0] ? " named " : "", a->opt.dev);
    fprintf(stderr, "iwarp-agent: agent protocol on %s:%u\n", a->opt.agent_host, a->opt.agent_port);

    while (!stop_flag) {
        int timeout = iw_agent_srv_wait_ms(&a->srv, TICK_MS);
        struct epoll_event evs[8];
        int n = epoll_wait(a->ep, evs, 8, timeout);
        bool knock = false;
        for (int i = 0; i < n && !stop_flag; i++) {
            switch (evs[i].data.u32) {
            case TAG_LISTEN:
                knock = true;
                break;
            case TAG_CLIENT:
                iw_agent_srv_on_client(&a->srv, evs[i].events);
                break;
            case TAG_CM:
                cm_drain(a);
                break;
            case TAG_CQ:
                cq_drain(a, 0, NULL);
                break;
            case TAG_ASYNC:
                async_drain(a);
                break;
            default:
                break;
            }
        }
        if (knock)
            client_accept(a);
        /* Cheap, and covers a missed notification. */
        cq_drain(a, 0, NULL);
        if (iw_agent_srv_service(&a->srv))
            session_end(a);
    }
    sess_teardown(a);
    iw_agent_srv_free(&a->srv); /* closes the runner and the listener */
    close(a->ep);
    return 0;
}
