/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A small verbs-like API over TCP or SCTP: devices, completion queues,
 * queue pairs, connect/listen, post_send/post_recv/poll.
 *
 * This is the socket binding of the sans-I/O engine (engine.h): each QP
 * owns one non-blocking TCP socket, registered with the device's epoll set.
 * Received payload goes from the kernel straight to its final address with
 * readv() on the engine's rx_iov (markers land in a scratch slot), and
 * outbound payload leaves with writev() on tx_iov: no user-space copy of
 * payload in either direction. Single-threaded: the application drives
 * progress with iw_dev_progress() or a waiting iw_cq_wait(). Memory
 * regions and PDs are the engine's (iw_dev_rnic()).
 *
 * A library of its own on top of libiwarp: link with libiwarp_verbs
 * (pkg-config iwarp-verbs, CMake iwarp::verbs), which brings libiwarp.
 * Linux only (epoll).
 *
 * SCTP (IW_TRANSPORT_SCTP, when built with libusrsctp): DDP directly on SCTP
 * (RFC 5043) through the RFC 5043 adapter (<iwarp/sctp_conn.h>), with a
 * user-space SCTP stack (libusrsctp) whose packets travel in UDP datagrams
 * (RFC 6951's format) on a non-blocking UDP socket in the same epoll set:
 * still single-threaded, progress still iw_dev_progress. One association
 * per QP, carrying one DDP stream (SCTP stream 0). usrsctp's state is
 * process-wide: the first SCTP device starts it, the last one closed stops
 * it, so all SCTP devices of a process must be used from one thread.
 * Ports are UDP ports; the SCTP port of an endpoint is its UDP port number.
 * Payload is copied once on receive (out of usrsctp, into its final
 * address) and once on send (into usrsctp). */
#ifndef IWARP_VERBS_H
#define IWARP_VERBS_H

#include <iwarp/engine.h>
#include <iwarp/sctp_conn.h>

IW_BEGIN_DECLS

typedef struct iw_dev iw_dev;
typedef struct iw_cq iw_cq;
typedef struct iw_qp iw_qp;
typedef struct iw_listener iw_listener;

/* A completion or asynchronous event of one QP. */
typedef struct iw_wc {
    iw_qp *qp;
    iw_event ev; /* ev.info points at the QP's iw_conn_info */
} iw_wc;

/* The lower layer a device's QPs and listeners use. */
typedef enum iw_transport {
    IW_TRANSPORT_TCP = 0, /* MPA over TCP (RFC 5044) */
    IW_TRANSPORT_SCTP = 1 /* DDP over SCTP (RFC 5043), libusrsctp over UDP */
} iw_transport;

/* SCTP only when this library was built with libusrsctp. */
bool iw_transport_available(iw_transport t);
/* "tcp" or "sctp"; IW_ERR_INVALID_ARG for anything else. */
int iw_transport_parse(const char *name, iw_transport *t);
const char *iw_transport_name(iw_transport t);

/* A TCP device. */
int iw_dev_open(iw_dev **out);
/* A device of the given transport; IW_ERR_INVALID_ARG when it is not
 * available, IW_ERR_FATAL when the SCTP stack cannot start. */
int iw_dev_open_transport(iw_dev **out, iw_transport t);
iw_transport iw_dev_transport(const iw_dev *dev);
void iw_dev_close(iw_dev *dev); /* destroys remaining QPs, CQs, listeners */
iw_rnic *iw_dev_rnic(iw_dev *dev);
/* An fd that is readable when iw_dev_progress has work (for outer loops).
 * An SCTP device also needs iw_dev_progress every 10 ms or so while it has
 * a listener or an association: usrsctp's timers cannot be waited for. */
int iw_dev_fd(const iw_dev *dev);
/* Wait up to timeout_ms (-1: forever, 0: poll) for socket readiness or a
 * timer, then move bytes and raise completions. Returns 0 or IW_ERR_*. */
int iw_dev_progress(iw_dev *dev, int timeout_ms);

int iw_cq_create(iw_dev *dev, uint32_t depth, iw_cq **out);
void iw_cq_destroy(iw_cq *cq);
/* Up to n completions, without waiting. Returns the count. */
int iw_cq_poll(iw_cq *cq, iw_wc *wc, int n);
/* Drive progress until at least one completion or timeout_ms passes. */
int iw_cq_wait(iw_cq *cq, iw_wc *wc, int n, int timeout_ms);
/* Completions lost because the CQ was full (RFC 5042 §6.4.6). */
uint64_t iw_cq_overflows(const iw_cq *cq);

/* A QP with the engine settings to use when it connects (s->role is set by
 * iw_qp_connect / iw_accept). */
int iw_qp_create(iw_dev *dev, uint32_t pd, iw_cq *cq, const iw_conn_settings *s, iw_qp **out);
void iw_qp_destroy(iw_qp *qp);
/* Active side: TCP connect to host:port (numeric IPv4/IPv6), then MPA as
 * initiator; SCTP: an association to host:port, then the DDP Stream Session
 * Initiate. IW_EV_CONNECTED (or CLOSED/REJECTED) arrives on the CQ. */
int iw_qp_connect(iw_qp *qp, const char *host, uint16_t port);
int iw_qp_post_send(iw_qp *qp, const iw_send_wr *wr);
int iw_qp_post_recv(iw_qp *qp, uint64_t wr_id, void *buf, uint32_t len);
/* Orderly close: pending sends go out, then the socket is shut down. */
int iw_qp_close(iw_qp *qp);
iw_conn *iw_qp_conn(iw_qp *qp); /* NULL before connect/accept */
/* SCTP QPs: the RFC 5043 adapter's counters (Session Terminate sent and
 * received, reordered chunks). IW_ERR_INVALID_ARG for a TCP QP or before
 * connect/accept. */
int iw_qp_sctp_stats(const iw_qp *qp, iw_sctp_conn_stats *out);
void iw_qp_get_stats(const iw_qp *qp, iw_conn_stats *out);
/* Application pointer carried by the QP. */
void *iw_qp_user(const iw_qp *qp);
void iw_qp_set_user(iw_qp *qp, void *user);

/* Passive side: listen on host:port (port 0: any). Accepted TCP
 * connections (SCTP: established associations; the UDP peers not yet
 * associated are bounded by IW_LISTEN_PENDING_HARD_MAX and forgotten after
 * the pending timeout) wait as "pending" until iw_accept hands one to a QP. That
 * wait is bounded: at most max_pending of them (beyond, a connection is
 * closed as soon as it is accepted), each for at most the pending timeout
 * (then closed), and one whose peer closes is closed at once. When accept
 * fails for want of descriptors or memory, the listener rests
 * IW_LISTEN_BACKOFF_MS instead of spinning; connections wait in the
 * kernel's backlog meanwhile. */
#define IW_LISTEN_PENDING_MAX 16
#define IW_LISTEN_PENDING_HARD_MAX 1024
#define IW_LISTEN_PENDING_TIMEOUT_MS 10000 /* the engine's default MPA startup timeout */
#define IW_LISTEN_BACKOFF_MS 100
int iw_listen(iw_dev *dev, const char *host, uint16_t port, iw_listener **out);
uint16_t iw_listener_port(const iw_listener *l);
/* max_pending 1..IW_LISTEN_PENDING_HARD_MAX (0: the default), timeout_ms
 * (<= 0: the default). Applies to connections accepted from now on. */
int iw_listener_set_limits(iw_listener *l, int max_pending, int timeout_ms);
/* Hand the oldest pending TCP connection to qp as MPA responder. Returns
 * 0, or IW_ERR_NEED_MORE when none has arrived yet. */
int iw_accept(iw_listener *l, iw_qp *qp);
int iw_listener_pending(const iw_listener *l);
typedef struct iw_listener_stats {
    uint64_t accepted;      /* became pending */
    uint64_t refused;       /* closed at once: max_pending reached */
    uint64_t timed_out;     /* closed at the pending timeout */
    uint64_t peer_closed;   /* closed because the peer closed first */
    uint64_t accept_errors; /* out of descriptors or memory: the listener rested */
} iw_listener_stats;
void iw_listener_get_stats(const iw_listener *l, iw_listener_stats *out);
/* Closes the listening socket and every pending connection. */
void iw_listener_close(iw_listener *l);

IW_END_DECLS
#endif
