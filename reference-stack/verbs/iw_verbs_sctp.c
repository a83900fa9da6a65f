/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
/* The SCTP transport of the verbs binding: DDP directly on SCTP (RFC 5043)
 * with libusrsctp, a user-space SCTP stack, single-threaded.
 *
 * usrsctp runs without threads (usrsctp_init_nothreads) and with AF_CONN
 * addresses: it hands every SCTP packet it makes to our output callback,
 * which sends it as one UDP datagram (RFC 6951's format: the SCTP common
 * header and chunks as the UDP payload); every datagram our UDP sockets
 * receive goes to usrsctp_conninput. The UDP sockets sit in the device's
 * epoll set beside everything else, usrsctp's timers run from
 * iw_dev_progress, and nothing runs behind the application's back.
 *
 * An AF_CONN address is a "link": one remote UDP endpoint seen through one
 * of our UDP sockets. usrsctp knows a link by a number (slot and
 * generation), never by a pointer: it may name a link after we forgot it,
 * and then the packet is dropped, as on a dead path.
 *
 * Each QP is one association carrying one DDP stream, SCTP stream 0; an
 * iw_sctp_conn (the library's RFC 5043 adapter) does every RFC 5043 rule
 * about the DDP stream. This file does what the adapter leaves to the
 * binding (<iwarp/sctp_conn.h>): the Adaptation Layer Indication (§5.1,
 * §11.1), PPIDs and unordered delivery (§5.2, §10), SCTP's acks
 * (iw_sctp_conn_tx_acked, §6.6) and the association's loss (§11.3).
 *
 * usrsctp's state is process-wide (one output callback, one timer wheel,
 * init/finish): that state lives here, not in libiwarp, and is counted by
 * device: the first SCTP device starts usrsctp, the last one closed stops
 * it. It is not locked: a process uses its SCTP devices from one thread. */
#include "verbs_int.h"

#ifndef IW_HAVE_USRSCTP

bool iw_vsctp_available(void) { return false; }
int iw_vsctp_dev_open(iw_dev *d) {
    (void)d;
    return IW_ERR_INVALID_ARG;
}
void iw_vsctp_dev_close(iw_dev *d) { (void)d; }
int iw_vsctp_connect(iw_qp *q, const char *host, uint16_t port) {
    (void)q, (void)host, (void)port;
    return IW_ERR_INVALID_ARG;
}
void iw_vsctp_qp_destroy(iw_qp *q) { (void)q; }
int iw_vsctp_qp_kick(iw_qp *q) {
    (void)q;
    return IW_ERR_INVALID_ARG;
}
int iw_vsctp_listen(iw_dev *d, const char *host, uint16_t port, iw_listener **out) {
    (void)d, (void)host, (void)port, (void)out;
    return IW_ERR_INVALID_ARG;
}
int iw_vsctp_accept(iw_listener *l, iw_qp *q) {
    (void)l, (void)q;
    return IW_ERR_INVALID_ARG;
}
void iw_vsctp_listener_close(iw_listener *l) { (void)l; }
int iw_vsctp_progress(iw_dev *d, int timeout_ms) {
    (void)d, (void)timeout_ms;
    return IW_ERR_INVALID_ARG;
}
int iw_vsctp_qp_stats(const iw_qp *q, iw_sctp_conn_stats *out) {
    (void)q, (void)out;
    return IW_ERR_INVALID_ARG;
}

#else

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>
#include <usrsctp.h>

#include "iw_usrsctp.h"

/* usrsctp 0.9.5 cannot say when its next timer is due: while an SCTP
 * socket exists, its timers run at least this often. */
#define VS_TICK_MS 10
#define VS_DGRAM_MAX 65536
#define VS_UDP_BUF (2 << 20)
#define VS_BATCH 64       /* datagrams per readiness event: fairness */
#define VS_READS 256      /* messages per QP per progress call: fairness */
#define VS_SLOT_BITS 20   /* links: slot in the low bits of the AF_CONN address */
#define VS_NOTIF_MAX 2048 /* a notification read in one piece */
/* RFC 5043 §9: the largest DDP segment is the largest that needs neither
 * IP nor SCTP fragmentation, a little below it so a control chunk can be
 * bundled. The UDP header counts against the path MTU (RFC 6951 §5): a
 * 1500-octet path carries SCTP packets of 1500 less the IP header (20, or
 * 40 for IPv6) and UDP (8) octets; the segment is that less the SCTP
 * common (12) and DATA chunk (16) headers, the DDP-SSN (2) and room for a
 * SACK chunk without gap blocks (16, RFC 4960 §3.3.4): 1426 over IPv4,
 * 1406 over IPv6. */
#define VS_SEG(family) (IW_USRSCTP_PATH_MTU(family) - 12 - 16 - IW_SCTP_SSN_LEN - 16)
#define VS_MAX_SEG VS_SEG(AF_INET) /* the larger: buffers are sized for it */
/* Largest message a session takes or sends (a DDP Segment, or a Session
 * Control message with 512 octets of Private Data): iw_sctp_conn's out_cap. */
#define VS_MSG_MAX (IW_SCTP_SSN_LEN + VS_MAX_SEG)

typedef struct vs_udp vs_udp;

/* One remote UDP endpoint behind one of our UDP sockets: an AF_CONN
 * address for usrsctp. */
typedef struct vs_link {
    uintptr_t id; /* what usrsctp knows it by (never 0: 0 is the wildcard) */
    vs_udp *udp;
    struct sockaddr_storage peer;
    socklen_t peer_len;
    iw_qp *qp;            /* the QP whose association uses it, if any */
    bool held;            /* a pending association or a QP uses it */
    iw_tstamp idle_until; /* not held: forgotten then */
    struct vs_link *next;
} vs_link;

/* A UDP socket: a QP's own (connected, one link) or a listener's (a link
 * per peer). A listener's outlives the listener while its QPs need it. */
struct vs_udp {
    verbs_obj obj; /* first: OBJ_SCTP_LINK in the epoll set */
    iw_dev *dev;
    bool connected;
    iw_listener *l; /* NULL: no listener (a QP's, or its listener closed) */
    vs_link *links;
    int n_links;
};

/* An association established on a listener that no QP has taken yet. */
typedef struct vs_pending {
    struct socket *so;
    vs_link *link;
    iw_tstamp deadline;
    struct vs_pending *next;
} vs_pending;

struct vs_listener {
    struct socket *so; /* usrsctp's listening socket */
    vs_udp *udp;
    vs_pending *pending, *tail;
};

struct vs_qp {
    struct socket *so; /* NULL once aborted */
    vs_link *link;
    iw_sctp_conn *sc;
    bool up;                  /* the association is established */
    bool adapt_ok;            /* the peer indicated DDP (RFC 5043 §5.1, §11.1) */
    bool started;             /* the DDP Stream Session began here */
    bool shut;                /* our SHUTDOWN was asked for */
    bool gone;                /* the association ended: nothing more moves */
    bool rejected;            /* the session ended with a Reject */
    bool notif_tail;          /* the rest of a notification too long for one read */
    uint32_t sent;            /* messages given to SCTP: the last has DDP-SSN sent - 1 */
    uint8_t pend[VS_MSG_MAX]; /* a message SCTP had no room for yet */
    size_t pend_len;
    uint32_t pend_ppid;
    uint16_t pend_sid;
    /* One message, reassembled; one octet over the largest shows the
     * adapter it was longer (§9). */
    uint8_t rx[VS_MSG_MAX + 1];
    size_t rx_len;
    uint64_t stray; /* messages on streams other than ours, dropped */
};

/* ---- process-wide usrsctp state (the only global state of the binding) ---- */

typedef struct vs_slot {
    vs_link *link;
    uint32_t gen;
} vs_slot;

static struct {
    int refs;       /* open SCTP devices */
    iw_tstamp tick; /* when usrsctp's timers last ran */
    vs_slot *slots;
    uint32_t nslots;
    uint8_t *dgram; /* one received datagram */
} vs;

static vs_link *vs_lookup(uintptr_t id) {
    uint32_t slot = (uint32_t)(id & ((1u << VS_SLOT_BITS) - 1));
    if (slot >= vs.nslots || !vs.slots[slot].link)
        return NULL;
    return vs.slots[slot].link->id == id ? vs.slots[slot].link : NULL;
}

/* usrsctp's output: one SCTP packet, one UDP datagram (RFC 6951 §5). A
 * datagram the kernel will not take is lost, which SCTP recovers from. */
static int vs_output(void *addr, void *buf, size_t len, uint8_t tos, uint8_t set_df) {
    (void)tos, (void)set_df;
    vs_link *k = vs_lookup((uintptr_t)addr);
    if (!k)
        return 0;
    if (k->udp->connected)
        (void)send(k->udp->obj.fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
    else
        (void)sendto(k->udp->obj.fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL,
                     (struct sockaddr *)&k->peer, k->peer_len);
    return 0;
}

static int vs_ref(void) {
    if (vs.refs == 0) {
        vs.dgram = malloc(VS_DGRAM_MAX);
        if (!vs.dgram)
            return IW_ERR_NOMEM;
        /* Port 0: no UDP encapsulation threads of usrsctp's own; we carry
         * its packets. No debug output. */
        usrsctp_init_nothreads(0, vs_output, NULL);
        vs.tick = iw_verbs_now();
    }
    vs.refs++;
    return 0;
}

static void vs_unref(void) {
    if (--vs.refs > 0)
        return;
    /* Every socket is closed by now (aborted associations free at once);
     * usrsctp_finish refuses while an endpoint is still being freed, which
     * its timers finish. */
    (void)iw_usrsctp_finish(1000, VS_TICK_MS);
    free(vs.slots);
    free(vs.dgram);
    vs.slots = NULL;
    vs.nslots = 0;
    vs.dgram = NULL;
}

/* Run usrsctp's timers for the time gone by (every SCTP device's progress
 * does: the timers are the process's). */
static void vs_timers(iw_tstamp now) {
    uint64_t ms = (now - vs.tick) / 1000000u;
    if (!ms)
        return;
    usrsctp_handle_timers(ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms);
    vs.tick += ms * 1000000u;
}

static vs_link *vs_link_new(vs_udp *u, const struct sockaddr_storage *peer, socklen_t plen) {
    uint32_t slot = 0;
    while (slot < vs.nslots && vs.slots[slot].link)
        slot++;
    if (slot == vs.nslots) {
        uint32_t n = vs.nslots ? vs.nslots * 2 : 16;
        if (n > (1u << VS_SLOT_BITS))
            return NULL;
        vs_slot *s = realloc(vs.slots, n * sizeof *s);
        if (!s)
            return NULL;
        memset(s + vs.nslots, 0, (n - vs.nslots) * sizeof *s);
        vs.slots = s;
        vs.nslots = n;
    }
    vs_link *k = calloc(1, sizeof *k);
    if (!k)
        return NULL;
    vs_slot *s = &vs.slots[slot];
    if (++s->gen == 0) /* generation 0 would make address 0 possible */
        s->gen = 1;
    s->link = k;
    k->id = ((uintptr_t)s->gen << VS_SLOT_BITS) | slot;
    k->udp = u;
    if (peer)
        memcpy(&k->peer, peer, plen);
    k->peer_len = plen;
    k->next = u->links;
    u->links = k;
    u->n_links++;
    usrsctp_register_address((void *)k->id);
    return k;
}

/* A UDP socket goes when nothing needs it: no listener, no link. */
static void vs_udp_maybe_free(vs_udp *u) {
    if (u->l || u->links)
        return;
    epoll_ctl(u->dev->epfd, EPOLL_CTL_DEL, u->obj.fd, NULL);
    close(u->obj.fd);
    free(u);
}

static void vs_link_free(vs_link *k) {
    vs_udp *u = k->udp;
    usrsctp_deregister_address((void *)k->id);
    vs.slots[k->id & ((1u << VS_SLOT_BITS) - 1)].link = NULL;
    for (vs_link **p = &u->links; *p; p = &(*p)->next)
        if (*p == k) {
            *p = k->next;
            break;
        }
    u->n_links--;
    free(k);
    vs_udp_maybe_free(u);
}

static vs_udp *vs_udp_new(iw_dev *d, int fd, bool connected) {
    vs_udp *u = calloc(1, sizeof *u);
    if (!u)
        return NULL;
    /* A window's worth of datagrams: a full socket drops them, and SCTP
     * then waits for its retransmission timer (RFC 4960 §6.3; the kernel
     * caps this at net.core.rmem_max / wmem_max). */
    int buf = VS_UDP_BUF;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
    u->obj = (verbs_obj){OBJ_SCTP_LINK, fd};
    u->dev = d;
    u->connected = connected;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &u->obj};
    if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
        free(u);
        return NULL;
    }
    return u;
}

/* A link no pending association or QP uses any more. */
static void vs_link_release(vs_link *k, iw_tstamp now) {
    k->held = false;
    k->qp = NULL;
    if (k->udp->l)
        k->idle_until = now + k->udp->l->pending_timeout;
    else
        vs_link_free(k);
}

/* ---- sockets ---- */

static struct socket *vs_socket(int family) {
    struct socket *so = usrsctp_socket(AF_CONN, SOCK_STREAM, IPPROTO_SCTP, NULL, NULL, 0, NULL);
    if (so && iw_usrsctp_ddp_setup(so, family) < 0) {
        usrsctp_close(so);
        return NULL;
    }
    return so;
}

static struct sockaddr_conn vs_sconn(uintptr_t id, uint16_t port) {
    struct sockaddr_conn a;
    memset(&a, 0, sizeof a);
    a.sconn_family = AF_CONN;
    a.sconn_port = htons(port);
    a.sconn_addr = (void *)id;
    return a;
}

static uint16_t vs_local_port(int fd) {
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
        return 0;
    return ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                         : ((struct sockaddr_in6 *)&ss)->sin6_port);
}

/* ---- QPs ---- */

static int vs_on_event(iw_conn *conn, const iw_event *ev, void *user) {
    iw_qp *q = user;
    if (ev->type == IW_EV_REJECTED)
        q->sctp->rejected = true; /* §6.3: the session ends there, no Terminate */
    return iw_verbs_on_event(conn, ev, user);
}

static int vs_qp_attach(iw_qp *q, struct socket *so, vs_link *k, iw_role role) {
    static const iw_callbacks cb = {IW_CALLBACKS_V1, vs_on_event};
    struct vs_qp *s = calloc(1, sizeof *s);
    if (!s)
        return IW_ERR_NOMEM;
    iw_sctp_conn_settings cs;
    iw_sctp_conn_settings_default(&cs, role);
    cs.conn = q->set;
    cs.conn.role = role;
    cs.sid = 0;
    cs.max_seg = VS_SEG(k->peer.ss_family);
    int rc = iw_sctp_conn_new(&s->sc, q->dev->rnic, q->pd, &cs, &cb, q);
    if (rc < 0) {
        free(s);
        return rc;
    }
    s->so = so;
    s->link = k;
    k->held = true;
    k->qp = q;
    q->sctp = s;
    q->conn = iw_sctp_conn_engine(s->sc);
    return 0;
}

/* The association is gone (RFC 5043 §11.3): the engine sees its LLP
 * close; nothing more is sent. */
static int vs_lost(iw_qp *q, iw_tstamp now) {
    struct vs_qp *s = q->sctp;
    if (s->gone)
        return 0;
    s->gone = true;
    q->io = QP_DONE;
    int rc = iw_sctp_conn_llp_lost(s->sc, now);
    return rc < 0 && iw_err_is_fatal(rc) ? rc : 0;
}

/* This side ends the association: an ABORT, then as lost. */
static int vs_abort(iw_qp *q, iw_tstamp now) {
    struct vs_qp *s = q->sctp;
    if (s->so) {
        iw_usrsctp_abort_close(s->so);
        s->so = NULL;
    }
    return vs_lost(q, now);
}

static int vs_notification(iw_qp *q, const uint8_t *buf, size_t len, iw_tstamp now) {
    struct vs_qp *s = q->sctp;
    union sctp_notification n;
    memset(&n, 0, sizeof n);
    memcpy(&n, buf, len < sizeof n ? len : sizeof n);
    switch (n.sn_header.sn_type) {
    case SCTP_ASSOC_CHANGE:
        if (n.sn_assoc_change.sac_state == SCTP_COMM_UP) {
            s->up = true;
            return 0;
        }
        /* lost, shut down, could not start, or the peer restarted */
        return vs_lost(q, now);
    case SCTP_ADAPTATION_INDICATION:
        /* RFC 5043 §11.1: any indication but DDP means DDP procedures MUST
         * NOT be performed on this association. */
        if (n.sn_adaptation_event.sai_adaptation_ind != IW_SCTP_ADAPT_DDP)
            return vs_abort(q, now);
        s->adapt_ok = true;
        return 0;
    case SCTP_SENDER_DRY_EVENT:
        /* Everything sent so far is acked: §6.6's "cannot be overtaken". */
        if (s->sent)
            iw_sctp_conn_tx_acked(s->sc, (uint16_t)(s->sent - 1));
        return 0;
    case SCTP_SHUTDOWN_EVENT:
        /* The peer's SHUTDOWN: no more of our data will be taken
         * (RFC 4960 §9.2), so the LLP is over for the engine. */
        return vs_lost(q, now);
    default:
        return 0;
    }
}

/* Fatal errors go up (iw_dev_progress fails); any other error of one QP
 * ends its association, never the device's progress. */
static int vs_qp_error(iw_qp *q, int rc, iw_tstamp now) {
    if (rc >= 0)
        return rc;
    return iw_err_is_fatal(rc) ? rc : vs_abort(q, now);
}

/* The session begins once the association is up and the peer indicated
 * DDP (RFC 5043 §11.1): the active side's Initiate goes out. */
static int vs_maybe_start(iw_qp *q, iw_tstamp now) {
    struct vs_qp *s = q->sctp;
    if (s->started || !s->up || !s->adapt_ok || s->gone)
        return 0;
    /* A QP closed (or timed out) before its association came up. */
    if (iw_conn_get_state(q->conn) == IW_CONN_CLOSED)
        return vs_abort(q, now);
    int rc = iw_sctp_conn_start(s->sc, now);
    if (rc < 0)
        return vs_qp_error(q, rc, now);
    s->started = true;
    q->io = QP_ACTIVE;
    return 0;
}

/* One whole message on our stream, to the adapter. */
static int vs_deliver(iw_qp *q, uint32_t ppid, iw_tstamp now) {
    struct vs_qp *s = q->sctp;
    size_t len = s->rx_len;
    s->rx_len = 0;
    /* §11.1: no DDP before the peer indicated DDP. */
    if (!s->adapt_ok)
        return vs_abort(q, now);
    /* A peer may send before our Initiate went out: the adapter judges
     * that chunk in a started session (§6.2). */
    int rc = vs_maybe_start(q, now);
    if (rc < 0 || s->gone)
        return rc;
    rc = iw_sctp_conn_recv(s->sc, ppid, s->rx, len, now);
    /* IW_ERR_PROTO: the adapter ended the session (§6.1); its Session
     * Terminate goes out with the next flush. */
    return rc == IW_ERR_PROTO ? 0 : vs_qp_error(q, rc, now);
}

static int vs_qp_read(iw_qp *q, iw_tstamp now) {
    struct vs_qp *s = q->sctp;
    union {
        union sctp_notification n;
        uint8_t b[VS_MSG_MAX + 1 > VS_NOTIF_MAX ? VS_MSG_MAX + 1 : VS_NOTIF_MAX];
    } buf;
    for (int rounds = 0; rounds < VS_READS; rounds++) {
        if (s->gone || !s->so)
            return 0;
        struct sctp_rcvinfo ri;
        memset(&ri, 0, sizeof ri);
        socklen_t il = sizeof ri;
        unsigned int it = 0;
        int flags = 0;
        ssize_t r = usrsctp_recvv(s->so, buf.b, sizeof buf.b, NULL, NULL, &ri, &il, &it, &flags);
        if (r < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                /* Drained: whatever came with the association's start is
                 * here, so a missing DDP indication is known now. */
                if (s->up && !s->adapt_ok)
                    return vs_abort(q, now);
                return 0;
            }
            if (errno == EINTR)
                continue;
            return vs_lost(q, now);
        }
        int rc = 0;
        if (flags & MSG_NOTIFICATION) {
            if (!s->notif_tail)
                rc = vs_notification(q, buf.b, (size_t)r, now);
            s->notif_tail = !(flags & MSG_EOR);
        } else if (r == 0) { /* the association shut down */
            rc = vs_lost(q, now);
        } else if (ri.rcv_sid != 0) {
            /* One DDP stream per association here: another stream's
             * messages have no session to go to. */
            if (flags & MSG_EOR)
                s->stray++;
        } else {
            size_t room = sizeof s->rx - s->rx_len;
            size_t take = (size_t)r < room ? (size_t)r : room;
            memcpy(s->rx + s->rx_len, buf.b, take);
            s->rx_len += take;
            if (flags & MSG_EOR)
                rc = vs_deliver(q, ntohl(ri.rcv_ppid), now);
        }
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* 1: SCTP took it; 0: no room now; -1: the association failed. */
static int vs_send(struct vs_qp *s, uint32_t ppid, uint16_t sid, const uint8_t *data, size_t len) {
    struct sctp_sndinfo si;
    memset(&si, 0, sizeof si);
    si.snd_sid = sid;
    si.snd_flags = SCTP_UNORDERED; /* RFC 5043 §10: U=1 */
    si.snd_ppid = htonl(ppid);
    ssize_t w = usrsctp_sendv(s->so, data, len, NULL, 0, &si, sizeof si, SCTP_SENDV_SNDINFO, 0);
    if (w >= 0 && (size_t)w != len)
        return -1; /* a message cut in two has no framing left */
    if (w >= 0) {
        s->sent++;
        return 1;
    }
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS ? 0 : -1;
}

static int vs_qp_flush(iw_qp *q, iw_tstamp now) {
    struct vs_qp *s = q->sctp;
    if (!s->started || s->gone || !s->so)
        return 0;
    if (s->pend_len) {
        int w = vs_send(s, s->pend_ppid, s->pend_sid, s->pend, s->pend_len);
        if (w < 0)
            return vs_abort(q, now);
        if (w == 0)
            return 0;
        s->pend_len = 0;
    }
    for (;;) {
        iw_sctp_msg m;
        int rc = iw_sctp_conn_next(s->sc, &m, now);
        if (rc < 0)
            return vs_qp_error(q, rc, now);
        if (rc == 0)
            break;
        int w = vs_send(s, m.ppid, m.sid, m.data, m.len);
        if (w < 0)
            return vs_abort(q, now);
        if (w == 0) {
            /* m.data lasts until the next call into the adapter. */
            memcpy(s->pend, m.data, m.len);
            s->pend_len = m.len;
            s->pend_ppid = m.ppid;
            s->pend_sid = m.sid;
            return 0;
        }
    }
    /* Once the session has nothing more to say, SCTP's graceful SHUTDOWN
     * ends the association after the last chunk is acked. */
    iw_sctp_conn_stats st;
    iw_sctp_conn_get_stats(s->sc, &st);
    /* A session that never began (no Initiate came before the engine's
     * startup timeout or the ULP's close) has nothing to terminate. */
    bool never = iw_sctp_conn_session(s->sc) == IW_SCTP_SESS_STARTING &&
                 iw_conn_get_state(q->conn) == IW_CONN_CLOSED;
    /* A chunk that broke RFC 5043 §6.1 before any session began (a DDP
     * Segment or an Accept where the Initiate belongs) leaves no session to
     * send a Session Terminate in: the association's end terminates it. */
    bool violated = iw_sctp_conn_problem(s->sc, NULL) != IW_SCTP_SESS_PROBLEM_NONE;
    if (!s->shut && (st.term_tx || st.term_rx || s->rejected || never || violated) &&
        !iw_sctp_conn_want_write(s->sc)) {
        usrsctp_shutdown(s->so, SHUT_WR);
        s->shut = true;
    }
    return 0;
}

static int vs_qp_service(iw_qp *q, iw_tstamp now) {
    struct vs_qp *s = q->sctp;
    int rc = vs_qp_read(q, now);
    if (rc == 0 && !s->gone)
        rc = vs_maybe_start(q, now);
    if (rc < 0 || s->gone)
        return rc;
    return vs_qp_flush(q, now);
}

int iw_vsctp_qp_kick(iw_qp *q) { return vs_qp_flush(q, iw_verbs_now()); }

int iw_vsctp_qp_stats(const iw_qp *q, iw_sctp_conn_stats *out) {
    iw_sctp_conn_get_stats(q->sctp->sc, out);
    return 0;
}

int iw_vsctp_connect(iw_qp *q, const char *host, uint16_t port) {
    struct sockaddr_storage ss;
    socklen_t sl;
    if (port == 0 || iw_verbs_sockaddr(host, port, &ss, &sl) < 0)
        return IW_ERR_INVALID_ARG;
    int fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return IW_ERR_FATAL;
    if (connect(fd, (struct sockaddr *)&ss, sl) < 0) {
        close(fd);
        return IW_ERR_PROTO;
    }
    uint16_t lport = vs_local_port(fd);
    vs_udp *u = vs_udp_new(q->dev, fd, true);
    if (!u) {
        close(fd);
        return IW_ERR_NOMEM;
    }
    vs_link *k = vs_link_new(u, &ss, sl);
    if (!k) {
        vs_udp_maybe_free(u);
        return IW_ERR_NOMEM;
    }
    struct socket *so = vs_socket(ss.ss_family);
    /* Our SCTP port is our UDP port, as the listener's is its. */
    struct sockaddr_conn a = vs_sconn(k->id, lport);
    int rc = so ? 0 : IW_ERR_FATAL;
    if (!rc && usrsctp_bind(so, (struct sockaddr *)&a, sizeof a) < 0)
        rc = IW_ERR_FATAL;
    if (!rc)
        rc = vs_qp_attach(q, so, k, IW_ROLE_INITIATOR);
    if (rc < 0) {
        if (so)
            usrsctp_close(so);
        vs_link_free(k);
        return rc;
    }
    q->io = QP_CONNECTING;
    a.sconn_port = htons(port);
    if (usrsctp_connect(so, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS)
        return vs_abort(q, iw_verbs_now());
    return 0;
}

void iw_vsctp_qp_destroy(iw_qp *q) {
    struct vs_qp *s = q->sctp;
    if (!s)
        return; /* never connected */
    if (s->so)
        iw_usrsctp_abort_close(s->so);
    vs_link_release(s->link, iw_verbs_now());
    iw_sctp_conn_del(s->sc);
    free(s);
    q->sctp = NULL;
    q->conn = NULL;
}

/* ---- listeners ---- */

int iw_vsctp_listen(iw_dev *d, const char *host, uint16_t port, iw_listener **out) {
    struct sockaddr_storage ss;
    socklen_t sl;
    if (iw_verbs_sockaddr(host, port, &ss, &sl) < 0)
        return IW_ERR_INVALID_ARG;
    int fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return IW_ERR_FATAL;
    if (bind(fd, (struct sockaddr *)&ss, sl) < 0) {
        close(fd);
        return IW_ERR_PROTO;
    }
    uint16_t lport = vs_local_port(fd);
    iw_listener *l = calloc(1, sizeof *l);
    struct vs_listener *vl = calloc(1, sizeof *vl);
    vs_udp *u = l && vl ? vs_udp_new(d, fd, false) : NULL;
    if (!u) {
        free(l);
        free(vl);
        close(fd);
        return IW_ERR_NOMEM;
    }
    u->l = l;
    /* Bound to every AF_CONN address (NULL): each peer is a link of its
     * own; the port tells this listener's associations apart. */
    struct socket *so = vs_socket(ss.ss_family);
    struct sockaddr_conn a = vs_sconn(0, lport);
    if (!so || usrsctp_bind(so, (struct sockaddr *)&a, sizeof a) < 0 ||
        usrsctp_listen(so, IW_LISTEN_PENDING_MAX) < 0) {
        if (so)
            usrsctp_close(so);
        u->l = NULL;
        vs_udp_maybe_free(u);
        free(l);
        free(vl);
        return IW_ERR_PROTO;
    }
    vl->so = so;
    vl->udp = u;
    l->obj = (verbs_obj){OBJ_SCTP_LISTENER, fd};
    l->sctp = vl;
    l->dev = d;
    l->port = lport;
    l->max_pending = IW_LISTEN_PENDING_MAX;
    l->pending_timeout = (iw_tstamp)IW_LISTEN_PENDING_TIMEOUT_MS * 1000000u;
    l->next = d->listeners;
    d->listeners = l;
    *out = l;
    return 0;
}

static void vs_pending_drop(iw_listener *l, vs_pending *p, iw_tstamp now) {
    struct vs_listener *vl = l->sctp;
    vs_pending *prev = NULL;
    for (vs_pending **pp = &vl->pending; *pp; prev = *pp, pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    if (vl->tail == p)
        vl->tail = prev;
    l->n_pending--;
    iw_usrsctp_abort_close(p->so);
    vs_link_release(p->link, now);
    free(p);
}

/* Associations usrsctp has established on the listening socket become
 * pending, within the listener's limits. */
static void vs_listener_accept(iw_listener *l, iw_tstamp now) {
    struct vs_listener *vl = l->sctp;
    for (;;) {
        struct sockaddr_conn from;
        socklen_t fl = sizeof from;
        memset(&from, 0, sizeof from);
        struct socket *so = usrsctp_accept(vl->so, (struct sockaddr *)&from, &fl);
        if (!so)
            return;
        vs_link *k = vs_lookup((uintptr_t)from.sconn_addr);
        vs_pending *p = NULL;
        /* The accepted socket inherits the listener's options. */
        if (k && !k->held && l->n_pending < l->max_pending && usrsctp_set_non_blocking(so, 1) == 0)
            p = calloc(1, sizeof *p);
        if (!p) {
            iw_usrsctp_abort_close(so);
            l->stats.refused++;
            continue;
        }
        p->so = so;
        p->link = k;
        k->held = true;
        p->deadline = now + l->pending_timeout;
        if (vl->tail)
            vl->tail->next = p;
        else
            vl->pending = p;
        vl->tail = p;
        l->n_pending++;
        l->stats.accepted++;
    }
}

int iw_vsctp_accept(iw_listener *l, iw_qp *q) {
    iw_tstamp now = iw_verbs_now();
    vs_listener_accept(l, now);
    struct vs_listener *vl = l->sctp;
    vs_pending *p = vl->pending;
    if (!p)
        return IW_ERR_NEED_MORE;
    vl->pending = p->next;
    if (!vl->pending)
        vl->tail = NULL;
    l->n_pending--;
    struct socket *so = p->so;
    vs_link *k = p->link;
    free(p);
    int rc = vs_qp_attach(q, so, k, IW_ROLE_RESPONDER);
    if (rc < 0) {
        iw_usrsctp_abort_close(so);
        vs_link_release(k, now);
        return rc;
    }
    struct vs_qp *s = q->sctp;
    s->up = true;
    /* The passive side waits for the Initiate: starting it sends nothing,
     * and what arrived meanwhile (the peer's indication first) is read
     * next. */
    rc = iw_sctp_conn_start(s->sc, now);
    if (rc < 0)
        return rc;
    s->started = true;
    q->io = QP_ACTIVE;
    return vs_qp_service(q, now);
}

void iw_vsctp_listener_close(iw_listener *l) {
    struct vs_listener *vl = l->sctp;
    iw_tstamp now = iw_verbs_now();
    vs_udp *u = vl->udp;
    while (vl->pending)
        vs_pending_drop(l, vl->pending, now);
    usrsctp_close(vl->so);
    /* Links no QP holds go (u->l keeps u meanwhile); the socket stays
     * while accepted QPs use it. */
    for (vs_link *k = u->links, *next; k; k = next) {
        next = k->next;
        if (!k->held)
            vs_link_free(k);
    }
    u->l = NULL;
    vs_udp_maybe_free(u);
    free(vl);
}

/* ---- progress ---- */

static vs_link *vs_link_of(vs_udp *u, const struct sockaddr_storage *from, socklen_t fl,
                           iw_tstamp now) {
    if (u->connected)
        return u->links;
    for (vs_link *k = u->links; k; k = k->next)
        if (k->peer_len == fl && memcmp(&k->peer, from, fl) == 0)
            return k;
    iw_listener *l = u->l;
    /* A new peer: only while listening, and a bounded number of them. */
    if (!l || u->n_links >= IW_LISTEN_PENDING_HARD_MAX) {
        if (l)
            l->stats.refused++;
        return NULL;
    }
    vs_link *k = vs_link_new(u, from, fl);
    if (k)
        k->idle_until = now + l->pending_timeout;
    return k;
}

static int vs_udp_input(vs_udp *u, iw_tstamp now) {
    for (int i = 0; i < VS_BATCH; i++) {
        struct sockaddr_storage from;
        socklen_t fl = sizeof from;
        ssize_t r = recvfrom(u->obj.fd, vs.dgram, VS_DGRAM_MAX, 0, (struct sockaddr *)&from, &fl);
        if (r < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            if (errno == ECONNREFUSED && u->connected && u->links && u->links->qp) {
                /* ICMP port unreachable: nothing listens there. Before the
                 * association is up that is a refused connection; after,
                 * SCTP's own timers judge the path. */
                iw_qp *q = u->links->qp;
                if (!q->sctp->up)
                    return vs_abort(q, now);
            }
            continue;
        }
        vs_link *k = vs_link_of(u, &from, fl, now);
        if (!k)
            continue;
        if (!k->held && u->l)
            k->idle_until = now + u->l->pending_timeout;
        usrsctp_conninput((void *)k->id, vs.dgram, (size_t)r, 0);
    }
    return 0;
}

static bool vs_dev_busy(const iw_dev *d) {
    for (const iw_qp *q = d->qps; q; q = q->next)
        if (q->sctp && q->sctp->so)
            return true;
    return d->listeners != NULL;
}

static void vs_listener_expire(iw_listener *l, iw_tstamp now) {
    struct vs_listener *vl = l->sctp;
    while (vl->pending && vl->pending->deadline <= now) {
        l->stats.timed_out++;
        vs_pending_drop(l, vl->pending, now);
    }
    /* A pending association the peer aborted goes now, not at its
     * deadline (the socket reports the error). */
    for (vs_pending *p = vl->pending, *next; p; p = next) {
        next = p->next;
        if (usrsctp_get_events(p->so) & SCTP_EVENT_ERROR) {
            l->stats.peer_closed++;
            vs_pending_drop(l, p, now);
        }
    }
    for (vs_link *k = vl->udp->links, *next; k; k = next) {
        next = k->next;
        if (!k->held && k->idle_until <= now)
            vs_link_free(k);
    }
}

static iw_tstamp vs_listener_expiry(const iw_listener *l) {
    const struct vs_listener *vl = l->sctp;
    iw_tstamp e = vl->pending ? vl->pending->deadline : UINT64_MAX;
    for (const vs_link *k = vl->udp->links; k; k = k->next)
        if (!k->held && k->idle_until < e)
            e = k->idle_until;
    return e;
}

int iw_vsctp_progress(iw_dev *d, int timeout_ms) {
    iw_tstamp now = iw_verbs_now();
    iw_tstamp next = UINT64_MAX;
    for (iw_qp *q = d->qps; q; q = q->next)
        if (q->sctp && q->sctp->started && !q->sctp->gone) {
            iw_tstamp e = iw_conn_get_expiry(q->conn);
            if (e < next)
                next = e;
        }
    for (iw_listener *l = d->listeners; l; l = l->next) {
        iw_tstamp e = vs_listener_expiry(l);
        if (e < next)
            next = e;
    }
    if (vs_dev_busy(d) && vs.tick + VS_TICK_MS * 1000000ull < next)
        next = vs.tick + VS_TICK_MS * 1000000ull;
    timeout_ms = iw_verbs_wait_ms(next, now, timeout_ms);
    struct epoll_event evs[32];
    int n = epoll_wait(d->epfd, evs, 32, timeout_ms);
    if (n < 0 && errno != EINTR)
        return IW_ERR_FATAL;
    now = iw_verbs_now();
    for (int i = 0; i < n; i++) {
        verbs_obj *o = evs[i].data.ptr;
        if (o->kind != OBJ_SCTP_LINK)
            continue;
        /* Nothing frees a UDP socket during input (links go only when
         * their QP or listener does), so the batch stays valid. */
        int rc = vs_udp_input((vs_udp *)o, now);
        if (rc < 0)
            return rc;
    }
    vs_timers(now);
    for (iw_listener *l = d->listeners; l; l = l->next) {
        vs_listener_accept(l, now);
        vs_listener_expire(l, now);
    }
    for (iw_qp *q = d->qps; q; q = q->next) {
        if (!q->sctp)
            continue;
        int rc = vs_qp_service(q, now);
        if (rc < 0)
            return rc;
        if (q->sctp->started && !q->sctp->gone && iw_conn_get_expiry(q->conn) <= now) {
            rc = vs_qp_error(q, iw_conn_handle_expiry(q->conn, now), now);
            if (rc < 0)
                return rc;
            rc = vs_qp_flush(q, now);
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

int iw_vsctp_dev_open(iw_dev *d) {
    (void)d;
    return vs_ref();
}

void iw_vsctp_dev_close(iw_dev *d) {
    (void)d;
    vs_unref();
}

bool iw_vsctp_available(void) { return true; }

#endif
