/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE /* accept4 */
/* The TCP binding: non-blocking sockets and epoll around the sans-I/O engine.
 * Nothing here parses or validates protocol octets; it only moves them
 * between sockets and the places iw_conn_rx_iov / iw_conn_tx_iov name. */
#include <iwarp/verbs.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "verbs_int.h"

iw_tstamp iw_verbs_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (iw_tstamp)ts.tv_sec * 1000000000ull + (iw_tstamp)ts.tv_nsec;
}

int iw_verbs_wait_ms(iw_tstamp next, iw_tstamp now, int timeout_ms) {
    if (next == UINT64_MAX)
        return timeout_ms;
    int t = next <= now ? 0 : (int)((next - now + 999999) / 1000000);
    return timeout_ms < 0 || t < timeout_ms ? t : timeout_ms;
}

bool iw_transport_available(iw_transport t) {
    return t == IW_TRANSPORT_TCP || (t == IW_TRANSPORT_SCTP && iw_vsctp_available());
}

const char *iw_transport_name(iw_transport t) {
    return t == IW_TRANSPORT_TCP ? "tcp" : t == IW_TRANSPORT_SCTP ? "sctp" : "unknown";
}

int iw_transport_parse(const char *name, iw_transport *t) {
    if (!name || !t)
        return IW_ERR_INVALID_ARG;
    if (!strcmp(name, "tcp"))
        *t = IW_TRANSPORT_TCP;
    else if (!strcmp(name, "sctp"))
        *t = IW_TRANSPORT_SCTP;
    else
        return IW_ERR_INVALID_ARG;
    return 0;
}

int iw_dev_open_transport(iw_dev **out, iw_transport t) {
    if (!out || !iw_transport_available(t))
        return IW_ERR_INVALID_ARG;
    iw_dev *d = calloc(1, sizeof *d);
    if (!d)
        return IW_ERR_NOMEM;
    d->transport = t;
    d->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (d->epfd < 0 || iw_rnic_new(&d->rnic, NULL) < 0) {
        if (d->epfd >= 0)
            close(d->epfd);
        free(d);
        return IW_ERR_NOMEM;
    }
    if (t == IW_TRANSPORT_SCTP) {
        int rc = iw_vsctp_dev_open(d);
        if (rc < 0) {
            iw_rnic_del(d->rnic);
            close(d->epfd);
            free(d);
            return rc;
        }
    }
    *out = d;
    return 0;
}

int iw_dev_open(iw_dev **out) { return iw_dev_open_transport(out, IW_TRANSPORT_TCP); }
iw_transport iw_dev_transport(const iw_dev *d) { return d->transport; }

void iw_dev_close(iw_dev *d) {
    if (!d)
        return;
    while (d->qps)
        iw_qp_destroy(d->qps);
    while (d->listeners)
        iw_listener_close(d->listeners);
    while (d->cqs)
        iw_cq_destroy(d->cqs);
    if (d->transport == IW_TRANSPORT_SCTP)
        iw_vsctp_dev_close(d);
    iw_rnic_del(d->rnic);
    close(d->epfd);
    free(d);
}

iw_rnic *iw_dev_rnic(iw_dev *d) { return d->rnic; }
int iw_dev_fd(const iw_dev *d) { return d->epfd; }

/* ---- completion queues ---- */

int iw_cq_create(iw_dev *d, uint32_t depth, iw_cq **out) {
    if (!depth)
        return IW_ERR_INVALID_ARG;
    iw_cq *cq = calloc(1, sizeof *cq);
    if (!cq || !(cq->ring = calloc(depth, sizeof *cq->ring))) {
        free(cq);
        return IW_ERR_NOMEM;
    }
    cq->dev = d;
    cq->cap = depth;
    cq->next = d->cqs;
    d->cqs = cq;
    *out = cq;
    return 0;
}

void iw_cq_destroy(iw_cq *cq) {
    if (!cq)
        return;
    for (iw_cq **p = &cq->dev->cqs; *p; p = &(*p)->next)
        if (*p == cq) {
            *p = cq->next;
            break;
        }
    for (iw_qp *q = cq->dev->qps; q; q = q->next)
        if (q->cq == cq)
            q->cq = NULL;
    free(cq->ring);
    free(cq);
}

int iw_cq_poll(iw_cq *cq, iw_wc *wc, int n) {
    int k = 0;
    while (k < n && cq->count) {
        wc[k++] = cq->ring[cq->head];
        cq->head = (cq->head + 1) % cq->cap;
        cq->count--;
    }
    return k;
}

int iw_cq_wait(iw_cq *cq, iw_wc *wc, int n, int timeout_ms) {
    iw_tstamp end = iw_verbs_now() + (iw_tstamp)(timeout_ms < 0 ? 0 : timeout_ms) * 1000000ull;
    for (;;) {
        int k = iw_cq_poll(cq, wc, n);
        if (k)
            return k;
        iw_tstamp now = iw_verbs_now();
        if (timeout_ms >= 0 && now >= end)
            return 0;
        int wait = timeout_ms < 0 ? -1 : (int)((end - now + 999999) / 1000000);
        int rc = iw_dev_progress(cq->dev, wait);
        if (rc < 0)
            return rc;
    }
}

uint64_t iw_cq_overflows(const iw_cq *cq) { return cq->overflows; }

int iw_verbs_on_event(iw_conn *conn, const iw_event *ev, void *user) {
    (void)conn;
    iw_qp *qp = user;
    iw_cq *cq = qp->cq;
    if (!cq)
        return 0;
    if (cq->count == cq->cap) {
        cq->overflows++;
        return 0;
    }
    iw_wc *w = &cq->ring[(cq->head + cq->count) % cq->cap];
    w->qp = qp;
    w->ev = *ev;
    cq->count++;
    return 0;
}

/* ---- queue pairs ---- */

int iw_qp_create(iw_dev *d, uint32_t pd, iw_cq *cq, const iw_conn_settings *s, iw_qp **out) {
    if (!s || !cq)
        return IW_ERR_INVALID_ARG;
    iw_qp *q = calloc(1, sizeof *q);
    if (!q)
        return IW_ERR_NOMEM;
    q->obj = (verbs_obj){OBJ_QP, -1};
    q->dev = d;
    q->pd = pd;
    q->cq = cq;
    q->set = *s;
    /* The engine is created only at connect/accept time: keep our own copy
     * of the private data rather than the caller's pointer. */
    if (s->private_data_len > sizeof q->private_data || (s->private_data_len && !s->private_data)) {
        free(q);
        return IW_ERR_INVALID_ARG;
    }
    if (s->private_data_len)
        memcpy(q->private_data, s->private_data, s->private_data_len);
    q->set.private_data = q->private_data;
    q->next = d->qps;
    d->qps = q;
    *out = q;
    return 0;
}

static void qp_close_fd(iw_qp *q) {
    if (q->obj.fd >= 0) {
        epoll_ctl(q->dev->epfd, EPOLL_CTL_DEL, q->obj.fd, NULL);
        close(q->obj.fd);
        q->obj.fd = -1;
    }
    q->io = QP_DONE;
}

void iw_qp_destroy(iw_qp *q) {
    if (!q)
        return;
    for (iw_qp **p = &q->dev->qps; *p; p = &(*p)->next)
        if (*p == q) {
            *p = q->next;
            break;
        }
    if (q->dev->transport == IW_TRANSPORT_SCTP) {
        iw_vsctp_qp_destroy(q); /* the engine is the SCTP adapter's */
        free(q);
        return;
    }
    qp_close_fd(q);
    iw_conn_del(q->conn);
    free(q);
}

iw_conn *iw_qp_conn(iw_qp *q) { return q->conn; }

int iw_qp_sctp_stats(const iw_qp *q, iw_sctp_conn_stats *out) {
    if (!q || !out || !q->sctp)
        return IW_ERR_INVALID_ARG;
    return iw_vsctp_qp_stats(q, out);
}
void *iw_qp_user(const iw_qp *q) { return q->user; }
void iw_qp_set_user(iw_qp *q, void *user) { q->user = user; }

void iw_qp_get_stats(const iw_qp *q, iw_conn_stats *out) {
    if (q->conn)
        iw_conn_get_stats(q->conn, out);
    else
        memset(out, 0, sizeof *out);
}

static int qp_arm(iw_qp *q, bool out) {
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | (out ? EPOLLOUT : 0u),
                             .data.ptr = &q->obj};
    q->want_out = out;
    return epoll_ctl(q->dev->epfd, EPOLL_CTL_MOD, q->obj.fd, &ev);
}

static int qp_attach(iw_qp *q, int fd, iw_role role) {
    static const iw_callbacks cb = {IW_CALLBACKS_V1, iw_verbs_on_event};
    iw_conn_settings s = q->set;
    s.role = role;
    int rc = iw_conn_new(&q->conn, q->dev->rnic, q->pd, &s, &cb, q);
    if (rc < 0)
        return rc;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    q->obj.fd = fd;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLOUT, .data.ptr = &q->obj};
    q->want_out = true;
    if (epoll_ctl(q->dev->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
        return IW_ERR_FATAL;
    return 0;
}

int iw_verbs_sockaddr(const char *host, uint16_t port, struct sockaddr_storage *ss,
                      socklen_t *len) {
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons(port);
        *len = sizeof *a4;
        return 0;
    }
    if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons(port);
        *len = sizeof *a6;
        return 0;
    }
    return IW_ERR_INVALID_ARG;
}

int iw_qp_connect(iw_qp *q, const char *host, uint16_t port) {
    if (q->io != QP_IDLE || !host)
        return IW_ERR_INVALID_ARG;
    if (q->dev->transport == IW_TRANSPORT_SCTP)
        return iw_vsctp_connect(q, host, port);
    struct sockaddr_storage ss;
    socklen_t sl;
    if (iw_verbs_sockaddr(host, port, &ss, &sl) < 0)
        return IW_ERR_INVALID_ARG;
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return IW_ERR_FATAL;
    if (connect(fd, (struct sockaddr *)&ss, sl) < 0 && errno != EINPROGRESS) {
        close(fd);
        return IW_ERR_PROTO;
    }
    int rc = qp_attach(q, fd, IW_ROLE_INITIATOR);
    if (rc < 0) {
        close(fd);
        q->obj.fd = -1;
        return rc;
    }
    q->io = QP_CONNECTING;
    return 0;
}

static int qp_flush(iw_qp *q);

int iw_qp_post_send(iw_qp *q, const iw_send_wr *wr) {
    if (!q->conn)
        return IW_ERR_INVALID_ARG;
    int rc = iw_conn_post_send(q->conn, wr);
    if (rc == 0 && q->sctp)
        return iw_vsctp_qp_kick(q);
    if (rc == 0 && q->io == QP_ACTIVE)
        rc = qp_flush(q);
    return rc;
}

int iw_qp_post_recv(iw_qp *q, uint64_t wr_id, void *buf, uint32_t len) {
    if (!q->conn)
        return IW_ERR_INVALID_ARG;
    return iw_conn_post_recv(q->conn, wr_id, buf, len);
}

int iw_qp_close(iw_qp *q) {
    if (!q->conn)
        return IW_ERR_INVALID_ARG;
    int rc = iw_conn_close(q->conn, iw_verbs_now());
    if (rc == 0 && q->sctp)
        return iw_vsctp_qp_kick(q);
    if (rc == 0 && q->io == QP_ACTIVE)
        rc = qp_flush(q);
    return rc;
}

/* Once the engine has nothing more to say, shut our half down gracefully
 * so a Terminate still reaches the peer (RFC 5040 §6.2.1). */
static void qp_maybe_shut(iw_qp *q) {
    if (q->io != QP_ACTIVE || iw_conn_want_write(q->conn))
        return;
    iw_conn_state st = iw_conn_get_state(q->conn);
    if (st == IW_CONN_TERMINATE || st == IW_CONN_CLOSED) {
        shutdown(q->obj.fd, SHUT_WR);
        q->io = QP_SHUT;
    }
}

static int qp_flush(iw_qp *q) {
    iw_iovec iov[VERBS_IOV];
    for (;;) {
        int n = iw_conn_tx_iov(q->conn, iov, VERBS_IOV);
        if (n < 0)
            return n;
        if (n == 0)
            break;
        ssize_t w = writev(q->obj.fd, (struct iovec *)iov, n);
        if (w < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                if (!q->want_out)
                    qp_arm(q, true);
                return 0;
            }
            if (errno == EINTR)
                continue;
            /* The LLP failed (RFC 5044 §8 code 1). */
            iw_conn_rx_eof(q->conn, iw_verbs_now());
            qp_close_fd(q);
            return 0;
        }
        int rc = iw_conn_tx_commit(q->conn, (size_t)w, iw_verbs_now());
        if (rc < 0)
            return rc;
    }
    if (q->want_out)
        qp_arm(q, false);
    qp_maybe_shut(q);
    return 0;
}

static int qp_read(iw_qp *q) {
    iw_iovec iov[VERBS_IOV];
    uint8_t sink[4096];
    for (int rounds = 0; rounds < 256; rounds++) {
        int n = iw_conn_rx_iov(q->conn, iov, VERBS_IOV);
        if (n < 0)
            return n;
        ssize_t r;
        if (n == 0) /* the engine reads no more: drain to see the FIN */
            r = read(q->obj.fd, sink, sizeof sink);
        else
            r = readv(q->obj.fd, (struct iovec *)iov, n);
        if (r < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            if (errno == EINTR)
                continue;
        }
        if (r <= 0) {
            iw_conn_rx_eof(q->conn, iw_verbs_now());
            qp_close_fd(q);
            return 0;
        }
        if (n > 0) {
            int rc = iw_conn_rx_commit(q->conn, (size_t)r, iw_verbs_now());
            if (rc < 0)
                return rc;
        }
    }
    return 0; /* fairness: come back on the next progress call */
}

static int qp_event(iw_qp *q, uint32_t events) {
    if (q->io == QP_CONNECTING) {
        if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
            return 0;
        int err = 0;
        socklen_t el = sizeof err;
        getsockopt(q->obj.fd, SOL_SOCKET, SO_ERROR, &err, &el);
        if (err) {
            iw_conn_rx_eof(q->conn, iw_verbs_now());
            qp_close_fd(q);
            return 0;
        }
        q->io = QP_ACTIVE;
        int rc = iw_conn_start(q->conn, iw_verbs_now());
        if (rc < 0)
            return rc;
    }
    if (q->io != QP_ACTIVE && q->io != QP_SHUT)
        return 0;
    if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
        int rc = qp_read(q);
        if (rc < 0)
            return rc;
    }
    if (q->io == QP_ACTIVE)
        return qp_flush(q);
    return 0;
}

/* ---- listeners ---- */

int iw_listen(iw_dev *d, const char *host, uint16_t port, iw_listener **out) {
    if (!host || !out)
        return IW_ERR_INVALID_ARG;
    if (d->transport == IW_TRANSPORT_SCTP)
        return iw_vsctp_listen(d, host, port, out);
    struct sockaddr_storage ss;
    socklen_t sl;
    if (iw_verbs_sockaddr(host, port, &ss, &sl) < 0)
        return IW_ERR_INVALID_ARG;
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return IW_ERR_FATAL;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, 16) < 0 ||
        getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
        close(fd);
        return IW_ERR_PROTO;
    }
    iw_listener *l = calloc(1, sizeof *l);
    if (!l) {
        close(fd);
        return IW_ERR_NOMEM;
    }
    l->obj = (verbs_obj){OBJ_LISTENER, fd};
    l->dev = d;
    l->max_pending = IW_LISTEN_PENDING_MAX;
    l->pending_timeout = (iw_tstamp)IW_LISTEN_PENDING_TIMEOUT_MS * 1000000u;
    l->port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                            : ((struct sockaddr_in6 *)&ss)->sin6_port);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &l->obj};
    if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
        close(fd);
        free(l);
        return IW_ERR_FATAL;
    }
    l->next = d->listeners;
    d->listeners = l;
    *out = l;
    return 0;
}

uint16_t iw_listener_port(const iw_listener *l) { return l->port; }
int iw_listener_pending(const iw_listener *l) { return l->n_pending; }

void iw_listener_get_stats(const iw_listener *l, iw_listener_stats *out) { *out = l->stats; }

int iw_listener_set_limits(iw_listener *l, int max_pending, int timeout_ms) {
    if (max_pending < 0 || max_pending > IW_LISTEN_PENDING_HARD_MAX)
        return IW_ERR_INVALID_ARG;
    l->max_pending = max_pending ? max_pending : IW_LISTEN_PENDING_MAX;
    l->pending_timeout =
        (iw_tstamp)(timeout_ms > 0 ? timeout_ms : IW_LISTEN_PENDING_TIMEOUT_MS) * 1000000u;
    return 0;
}

static void pending_close(iw_listener *l, pending_conn *p) {
    for (pending_conn **pp = &l->pending; *pp; pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    if (l->pending_tail == p) {
        l->pending_tail = NULL;
        for (pending_conn *q = l->pending; q; q = q->next)
            l->pending_tail = q;
    }
    l->n_pending--;
    epoll_ctl(l->dev->epfd, EPOLL_CTL_DEL, p->obj.fd, NULL);
    close(p->obj.fd);
    free(p);
}

/* The listener's interest: readable, or nothing while accept rests. */
static void listener_arm(iw_listener *l, bool on) {
    struct epoll_event ev = {.events = on ? EPOLLIN : 0, .data.ptr = &l->obj};
    epoll_ctl(l->dev->epfd, EPOLL_CTL_MOD, l->obj.fd, &ev);
}

static void listener_accept(iw_listener *l) {
    if (l->retry_at)
        return;
    for (int k = 0; k < 64; k++) { /* a batch; level-triggered epoll brings the rest */
        int fd = accept4(l->obj.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
                continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                /* The connection stays queued in the kernel; without a
                 * rest, level-triggered epoll would report it at once. */
                l->stats.accept_errors++;
                l->retry_at = iw_verbs_now() + (iw_tstamp)IW_LISTEN_BACKOFF_MS * 1000000u;
                listener_arm(l, false);
            }
            return;
        }
        pending_conn *p = l->n_pending < l->max_pending ? calloc(1, sizeof *p) : NULL;
        if (!p) {
            close(fd); /* beyond the limit: refused at once */
            l->stats.refused++;
            continue;
        }
        p->obj = (verbs_obj){OBJ_PENDING, fd};
        p->l = l;
        p->deadline = iw_verbs_now() + l->pending_timeout;
        struct epoll_event ev = {.events = EPOLLRDHUP, .data.ptr = &p->obj};
        if (epoll_ctl(l->dev->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
            close(fd);
            free(p);
            l->stats.refused++;
            continue;
        }
        if (l->pending_tail)
            l->pending_tail->next = p;
        else
            l->pending = p;
        l->pending_tail = p;
        l->n_pending++;
        l->stats.accepted++;
    }
}

/* Time out pending connections and end an accept rest. */
static void listener_expire(iw_listener *l, iw_tstamp now) {
    while (l->pending && l->pending->deadline <= now) {
        l->stats.timed_out++;
        pending_close(l, l->pending);
    }
    if (l->retry_at && l->retry_at <= now) {
        l->retry_at = 0;
        listener_arm(l, true);
    }
}

static iw_tstamp listener_expiry(const iw_listener *l) {
    iw_tstamp e = l->pending ? l->pending->deadline : UINT64_MAX;
    if (l->retry_at && l->retry_at < e)
        e = l->retry_at;
    return e;
}

int iw_accept(iw_listener *l, iw_qp *q) {
    if (q->io != QP_IDLE || q->dev != l->dev)
        return IW_ERR_INVALID_ARG;
    if (l->dev->transport == IW_TRANSPORT_SCTP)
        return iw_vsctp_accept(l, q);
    listener_accept(l);
    pending_conn *p = l->pending;
    if (!p)
        return IW_ERR_NEED_MORE;
    /* Oldest first: hand its socket over to the QP. */
    int fd = p->obj.fd;
    epoll_ctl(l->dev->epfd, EPOLL_CTL_DEL, fd, NULL);
    l->pending = p->next;
    if (!l->pending)
        l->pending_tail = NULL;
    l->n_pending--;
    free(p);
    int rc = qp_attach(q, fd, IW_ROLE_RESPONDER);
    if (rc < 0) {
        close(fd);
        q->obj.fd = -1;
        return rc;
    }
    q->io = QP_ACTIVE;
    return iw_conn_start(q->conn, iw_verbs_now());
}

void iw_listener_close(iw_listener *l) {
    if (!l)
        return;
    for (iw_listener **p = &l->dev->listeners; *p; p = &(*p)->next)
        if (*p == l) {
            *p = l->next;
            break;
        }
    if (l->sctp) {
        iw_vsctp_listener_close(l);
        free(l);
        return;
    }
    epoll_ctl(l->dev->epfd, EPOLL_CTL_DEL, l->obj.fd, NULL);
    close(l->obj.fd);
    while (l->pending)
        pending_close(l, l->pending);
    free(l);
}

/* ---- progress ---- */

int iw_dev_progress(iw_dev *d, int timeout_ms) {
    if (d->transport == IW_TRANSPORT_SCTP)
        return iw_vsctp_progress(d, timeout_ms);
    iw_tstamp now = iw_verbs_now();
    iw_tstamp next = UINT64_MAX;
    for (iw_qp *q = d->qps; q; q = q->next)
        if (q->conn && q->io == QP_ACTIVE) {
            iw_tstamp e = iw_conn_get_expiry(q->conn);
            if (e < next)
                next = e;
        }
    for (iw_listener *l = d->listeners; l; l = l->next) {
        iw_tstamp e = listener_expiry(l);
        if (e < next)
            next = e;
    }
    timeout_ms = iw_verbs_wait_ms(next, now, timeout_ms);
    struct epoll_event evs[32];
    int n = epoll_wait(d->epfd, evs, 32, timeout_ms);
    if (n < 0 && errno != EINTR)
        return IW_ERR_FATAL;
    for (int i = 0; i < n; i++) {
        verbs_obj *o = evs[i].data.ptr;
        if (o->kind == OBJ_LISTENER) {
            listener_accept((iw_listener *)o);
            continue;
        }
        if (o->kind == OBJ_PENDING) {
            /* The peer closed (or reset) before any QP took it: its fd
             * goes now, not at its deadline. */
            pending_conn *p = (pending_conn *)o;
            p->l->stats.peer_closed++;
            pending_close(p->l, p);
            continue;
        }
        int rc = qp_event((iw_qp *)o, evs[i].events);
        if (rc < 0)
            return rc;
    }
    now = iw_verbs_now();
    for (iw_listener *l = d->listeners; l; l = l->next)
        listener_expire(l, now);
    for (iw_qp *q = d->qps; q; q = q->next)
        if (q->conn && q->io == QP_ACTIVE && iw_conn_get_expiry(q->conn) <= now) {
            int rc = iw_conn_handle_expiry(q->conn, now);
            if (rc < 0)
                return rc;
            if (iw_conn_get_state(q->conn) == IW_CONN_CLOSED)
                qp_close_fd(q);
        }
    return 0;
}
