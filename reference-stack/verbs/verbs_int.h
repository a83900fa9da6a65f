/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libiwarp_verbs' internals, shared by its transports: iw_verbs.c (the
 * device, CQs, QPs and listeners, and TCP) and iw_verbs_sctp.c (SCTP).
 * Functions named iw_vsctp_ are hidden (C_VISIBILITY_PRESET). */
#ifndef IW_VERBS_INT_H
#define IW_VERBS_INT_H

#include <iwarp/verbs.h>

#include <sys/socket.h>

/* iovecs per readv/writev: a whole maximal FPDU with markers
 * (IW_MPA_GATHER_IOV_MAX), well under the kernel's UIO_MAXIOV of 1024. */
#define VERBS_IOV 288

/* What an epoll entry is: verbs_obj is the first member of each. */
enum { OBJ_QP = 1, OBJ_LISTENER, OBJ_PENDING, OBJ_SCTP_LINK, OBJ_SCTP_LISTENER };

typedef struct verbs_obj {
    int kind;
    int fd;
} verbs_obj;

typedef enum {
    QP_IDLE = 0,   /* created, not connected */
    QP_CONNECTING, /* TCP connect in progress */
    QP_ACTIVE,     /* engine running */
    QP_SHUT,       /* our side shut down; reading until EOF */
    QP_DONE        /* socket closed */
} qp_io_state;

struct iw_cq {
    iw_dev *dev;
    iw_wc *ring;
    uint32_t cap, head, count;
    uint64_t overflows;
    iw_cq *next;
};

struct iw_qp {
    verbs_obj obj; /* first: epoll data points here */
    iw_dev *dev;
    uint32_t pd;
    iw_cq *cq;
    iw_conn_settings set;
    uint8_t private_data[IW_MPA_PD_MAX]; /* set.private_data points here */
    iw_conn *conn;                       /* SCTP: the engine of sctp->sc */
    qp_io_state io;
    struct vs_qp *sctp; /* SCTP transport only (iw_verbs_sctp.c) */
    bool want_out;      /* EPOLLOUT armed */
    void *user;
    iw_qp *next;
};

/* An accepted TCP connection no QP has taken yet. Watched for the peer's
 * FIN only (its first octets are the engine's to read), and closed when
 * its time is up. */
typedef struct pending_conn {
    verbs_obj obj; /* first: epoll data points here */
    iw_listener *l;
    iw_tstamp deadline;
    struct pending_conn *next; /* oldest first */
} pending_conn;

struct iw_listener {
    verbs_obj obj;
    iw_dev *dev;
    uint16_t port;
    pending_conn *pending, *pending_tail;
    int n_pending;
    int max_pending;
    iw_tstamp pending_timeout;
    iw_tstamp retry_at; /* accept rests until then (out of fds); 0: armed */
    iw_listener_stats stats;
    struct vs_listener *sctp; /* SCTP transport only (iw_verbs_sctp.c) */
    iw_listener *next;
};

struct iw_dev {
    iw_transport transport;
    iw_rnic *rnic;
    int epfd;
    iw_qp *qps;
    iw_cq *cqs;
    iw_listener *listeners;
};

iw_tstamp iw_verbs_now(void);
/* epoll_wait's timeout: timeout_ms (-1: none), shortened to the earliest
 * deadline `next` (UINT64_MAX: none), rounded up to whole milliseconds. */
int iw_verbs_wait_ms(iw_tstamp next, iw_tstamp now, int timeout_ms);
/* Numeric IPv4 or IPv6 host and port: IW_ERR_INVALID_ARG otherwise. */
int iw_verbs_sockaddr(const char *host, uint16_t port, struct sockaddr_storage *ss, socklen_t *len);
/* The engine callback every QP's iw_conn uses: completions to the CQ. */
int iw_verbs_on_event(iw_conn *conn, const iw_event *ev, void *user);

/* ---- the SCTP transport (iw_verbs_sctp.c; stubs when built without
 * libusrsctp, where no device can have this transport) ---- */
bool iw_vsctp_available(void);
int iw_vsctp_dev_open(iw_dev *d);   /* takes a reference on usrsctp */
void iw_vsctp_dev_close(iw_dev *d); /* after every QP and listener is gone */
int iw_vsctp_connect(iw_qp *q, const char *host, uint16_t port);
void iw_vsctp_qp_destroy(iw_qp *q);
int iw_vsctp_qp_kick(iw_qp *q); /* after posting work or closing: send what is due */
int iw_vsctp_listen(iw_dev *d, const char *host, uint16_t port, iw_listener **out);
int iw_vsctp_accept(iw_listener *l, iw_qp *q);
void iw_vsctp_listener_close(iw_listener *l);
int iw_vsctp_progress(iw_dev *d, int timeout_ms);
int iw_vsctp_qp_stats(const iw_qp *q, iw_sctp_conn_stats *out);

#endif
