/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The runner's raw SCTP peer: see iwc_sctp.h. */
#define _GNU_SOURCE
#include "iwc_sctp.h"

#include <iwarp/sctp.h>

#include "iwc_util.h"

#ifndef IWC_HAVE_USRSCTP

struct iwc_sctp {
    int unused;
};

int iwc_sctp_open(iwc_sctp **out, const char *host, uint16_t port, bool listen,
                  const iwc_sctp_hooks *h, char *err, size_t errlen) {
    (void)host, (void)port, (void)listen, (void)h;
    *out = NULL;
    snprintf(err, errlen, "this runner was built without libusrsctp: no SCTP transport");
    return -1;
}
void iwc_sctp_close(iwc_sctp *s) { (void)s; }
int iwc_sctp_fd(const iwc_sctp *s) { return (void)s, -1; }
uint16_t iwc_sctp_port(const iwc_sctp *s) { return (void)s, 0; }
bool iwc_sctp_addrs(const iwc_sctp *s, uint8_t ip[2][4], uint16_t port[2]) {
    return (void)s, (void)ip, (void)port, false;
}
void iwc_sctp_service(iwc_sctp *s, int wait_ms) { (void)s, (void)wait_ms; }
int iwc_sctp_send(iwc_sctp *s, uint32_t ppid, uint16_t sid, bool unordered, const uint8_t *p,
                  size_t n) {
    return (void)s, (void)ppid, (void)sid, (void)unordered, (void)p, (void)n, -1;
}
iwc_sctp_state iwc_sctp_get_state(const iwc_sctp *s) { return (void)s, IWC_SCTP_ABORTED; }
bool iwc_sctp_adaptation(const iwc_sctp *s, uint32_t *ind) { return (void)s, (void)ind, false; }
void iwc_sctp_shutdown(iwc_sctp *s) { (void)s; }
void iwc_sctp_abort(iwc_sctp *s) { (void)s; }

#else

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <usrsctp.h>

#include "iw_usrsctp.h"

#define DGRAM_MAX 65536
#define MSG_MAX (1u << 20) /* a reassembled message larger than this is cut */

struct iwc_sctp {
    int fd;
    bool listening;
    struct sockaddr_storage peer;
    socklen_t peer_len; /* 0 until the IUT's first datagram (listening) */
    uint16_t lport;
    struct socket *ls, *so; /* listening socket; the association's */
    iwc_sctp_state state;
    bool adapt_got;
    uint32_t adapt;
    iwc_sctp_hooks h;
    uint64_t tick_us;
    uint8_t *dgram;
    uint8_t *msg; /* one message being reassembled */
    size_t msg_len;
    bool msg_cut;
};

/* usrsctp's output callback has no context but the AF_CONN address, which
 * is the link itself. */
static int out_packet(void *addr, void *buf, size_t len, uint8_t tos, uint8_t set_df) {
    (void)tos, (void)set_df;
    iwc_sctp *s = addr;
    if (!s->peer_len)
        return 0; /* no peer yet: lost, as on a dead path */
    if (s->h.pkt)
        s->h.pkt(s->h.ctx, 0, buf, len);
    (void)sendto(s->fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&s->peer,
                 s->peer_len);
    return 0;
}

static struct sockaddr_conn sconn(iwc_sctp *s, uint16_t port) {
    struct sockaddr_conn a;
    memset(&a, 0, sizeof a);
    a.sconn_family = AF_CONN;
    a.sconn_port = htons(port);
    a.sconn_addr = s;
    return a;
}

static void timers(iwc_sctp *s) {
    uint64_t now = iwc_now_us(), ms = (now - s->tick_us) / 1000;
    if (ms) {
        usrsctp_handle_timers(ms > 1000 ? 1000 : (uint32_t)ms);
        s->tick_us += ms * 1000;
    }
}

int iwc_sctp_open(iwc_sctp **out, const char *host, uint16_t port, bool listen,
                  const iwc_sctp_hooks *h, char *err, size_t errlen) {
    *out = NULL;
    char ports[8];
    snprintf(ports, sizeof ports, "%u", port);
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_socktype = SOCK_DGRAM;
    hints.ai_family = AF_INET; /* the capture is IPv4; loopback and guests are */
    hints.ai_flags = listen ? AI_PASSIVE | AI_NUMERICHOST : 0;
    if (getaddrinfo(host, ports, &hints, &res) != 0) {
        snprintf(err, errlen, "cannot resolve '%s' as an IPv4 address for SCTP over UDP", host);
        return -1;
    }
    iwc_sctp *s = calloc(1, sizeof *s);
    if (!s || !(s->dgram = malloc(DGRAM_MAX)) || !(s->msg = malloc(MSG_MAX))) {
        freeaddrinfo(res);
        if (s)
            free(s->dgram);
        free(s);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    s->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    s->listening = listen;
    if (h)
        s->h = *h;
    struct sockaddr_in me = {.sin_family = AF_INET};
    socklen_t ml = sizeof me;
    bool ok = s->fd >= 0;
    if (ok && listen)
        ok = bind(s->fd, res->ai_addr, res->ai_addrlen) == 0;
    if (ok && !listen) {
        memcpy(&s->peer, res->ai_addr, res->ai_addrlen);
        s->peer_len = res->ai_addrlen;
        ok = connect(s->fd, res->ai_addr, res->ai_addrlen) == 0;
    }
    freeaddrinfo(res);
    if (ok)
        ok = getsockname(s->fd, (struct sockaddr *)&me, &ml) == 0;
    if (!ok) {
        snprintf(err, errlen, "cannot %s UDP %s:%u: %s", listen ? "bind" : "connect to", host, port,
                 strerror(errno));
        if (s->fd >= 0)
            close(s->fd);
        free(s->dgram);
        free(s->msg);
        free(s);
        return -1;
    }
    s->lport = ntohs(me.sin_port);
    /* Port 0: usrsctp starts no UDP thread of its own; we carry its packets. */
    usrsctp_init_nothreads(0, out_packet, NULL);
    usrsctp_register_address(s);
    s->tick_us = iwc_now_us();
    struct socket *so = usrsctp_socket(AF_CONN, SOCK_STREAM, IPPROTO_SCTP, NULL, NULL, 0, NULL);
    struct sockaddr_conn a = sconn(s, s->lport);
    ok = so && iw_usrsctp_ddp_setup(so, AF_INET) == 0 &&
         usrsctp_bind(so, (struct sockaddr *)&a, sizeof a) == 0;
    if (ok && listen) {
        ok = usrsctp_listen(so, 1) == 0;
        s->ls = so;
    } else if (ok) {
        s->so = so;
        a.sconn_port = htons(port);
        ok = usrsctp_connect(so, (struct sockaddr *)&a, sizeof a) == 0 || errno == EINPROGRESS;
    }
    if (!ok) {
        snprintf(err, errlen, "usrsctp: cannot %s: %s", listen ? "listen" : "connect",
                 strerror(errno));
        if (so && !s->ls && !s->so)
            usrsctp_close(so);
        iwc_sctp_close(s);
        return -1;
    }
    *out = s;
    return 0;
}

void iwc_sctp_close(iwc_sctp *s) {
    if (!s)
        return;
    if (s->so)
        iw_usrsctp_abort_close(s->so);
    if (s->ls)
        usrsctp_close(s->ls);
    usrsctp_deregister_address(s);
    (void)iw_usrsctp_finish(500, 10);
    close(s->fd);
    free(s->dgram);
    free(s->msg);
    free(s);
}

int iwc_sctp_fd(const iwc_sctp *s) { return s->fd; }
uint16_t iwc_sctp_port(const iwc_sctp *s) { return s->lport; }

bool iwc_sctp_addrs(const iwc_sctp *s, uint8_t ip[2][4], uint16_t port[2]) {
    struct sockaddr_in me;
    socklen_t ml = sizeof me;
    if (!s->peer_len || s->peer.ss_family != AF_INET ||
        getsockname(s->fd, (struct sockaddr *)&me, &ml) < 0)
        return false;
    const struct sockaddr_in *p = (const struct sockaddr_in *)&s->peer;
    memcpy(ip[0], &me.sin_addr, 4);
    memcpy(ip[1], &p->sin_addr, 4);
    port[0] = ntohs(me.sin_port);
    port[1] = ntohs(p->sin_port);
    if (!ip[0][0] && !ip[0][1] && !ip[0][2] && !ip[0][3])
        memcpy(ip[0], ip[1], 4); /* bound to any: we answered from where the IUT sent */
    return true;
}

static void notification(iwc_sctp *s, const uint8_t *buf, size_t len) {
    union sctp_notification n;
    memset(&n, 0, sizeof n);
    memcpy(&n, buf, len < sizeof n ? len : sizeof n);
    switch (n.sn_header.sn_type) {
    case SCTP_ASSOC_CHANGE:
        switch (n.sn_assoc_change.sac_state) {
        case SCTP_COMM_UP:
            if (s->state == IWC_SCTP_WAITING)
                s->state = IWC_SCTP_UP;
            break;
        case SCTP_SHUTDOWN_COMP:
            if (s->state < IWC_SCTP_SHUT)
                s->state = IWC_SCTP_SHUT;
            break;
        default: /* lost, could not start, restarted */
            s->state = IWC_SCTP_ABORTED;
            break;
        }
        break;
    case SCTP_SHUTDOWN_EVENT:
        if (s->state < IWC_SCTP_SHUT)
            s->state = IWC_SCTP_SHUT;
        break;
    case SCTP_ADAPTATION_INDICATION:
        s->adapt_got = true;
        s->adapt = n.sn_adaptation_event.sai_adaptation_ind;
        break;
    default:
        break;
    }
}

static void read_msgs(iwc_sctp *s) {
    for (int rounds = 0; s->so && rounds < 256; rounds++) {
        struct sctp_rcvinfo ri;
        memset(&ri, 0, sizeof ri);
        socklen_t il = sizeof ri;
        unsigned it = 0;
        int flags = 0;
        size_t room = MSG_MAX - s->msg_len;
        uint8_t spill[2048];
        uint8_t *dst = room ? s->msg + s->msg_len : spill;
        ssize_t r = usrsctp_recvv(s->so, dst, room ? room : sizeof spill, NULL, NULL, &ri, &il, &it,
                                  &flags);
        if (r < 0)
            return; /* EAGAIN, or the association is gone (the notification said so) */
        if (r == 0) {
            if (s->state < IWC_SCTP_SHUT)
                s->state = IWC_SCTP_SHUT;
            return;
        }
        if (room)
            s->msg_len += (size_t)r;
        else
            s->msg_cut = true;
        if (!(flags & MSG_EOR))
            continue;
        if (flags & MSG_NOTIFICATION)
            notification(s, s->msg, s->msg_len);
        else if (s->h.msg)
            s->h.msg(s->h.ctx, ntohl(ri.rcv_ppid), ri.rcv_sid, s->msg, s->msg_len);
        s->msg_len = 0;
        s->msg_cut = false;
    }
}

void iwc_sctp_service(iwc_sctp *s, int wait_ms) {
    struct pollfd pfd = {s->fd, POLLIN, 0};
    /* usrsctp's timers cannot be waited for: wake at least every 10 ms. */
    uint64_t end = iwc_now_us() + (uint64_t)(wait_ms > 0 ? wait_ms : 0) * 1000;
    for (;;) {
        uint64_t now = iwc_now_us();
        int w = now >= end ? 0 : (int)((end - now + 999) / 1000);
        int n = poll(&pfd, 1, w > 10 ? 10 : w);
        for (int k = 0; n > 0 && k < 64; k++) {
            struct sockaddr_storage from;
            socklen_t fl = sizeof from;
            ssize_t got =
                recvfrom(s->fd, s->dgram, DGRAM_MAX, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
            if (got < 0)
                break;
            if (s->listening && !s->peer_len) {
                memcpy(&s->peer, &from, fl); /* the IUT's endpoint: our one peer */
                s->peer_len = fl;
            }
            if (s->h.pkt)
                s->h.pkt(s->h.ctx, 1, s->dgram, (size_t)got);
            usrsctp_conninput(s, s->dgram, (size_t)got, 0);
        }
        timers(s);
        if (s->ls && !s->so) {
            struct socket *so = usrsctp_accept(s->ls, NULL, NULL);
            if (so) {
                usrsctp_set_non_blocking(so, 1);
                s->so = so;
                s->state = IWC_SCTP_UP; /* accept returns established associations */
            }
        }
        read_msgs(s);
        if (iwc_now_us() >= end)
            return;
        if (n > 0)
            return; /* something arrived: the caller looks at it */
    }
}

int iwc_sctp_send(iwc_sctp *s, uint32_t ppid, uint16_t sid, bool unordered, const uint8_t *p,
                  size_t n) {
    if (!s->so || s->state != IWC_SCTP_UP)
        return -1;
    struct sctp_sndinfo si;
    memset(&si, 0, sizeof si);
    si.snd_ppid = htonl(ppid);
    si.snd_sid = sid;
    si.snd_flags = unordered ? SCTP_UNORDERED : 0;
    static const uint8_t none[1];
    if (usrsctp_sendv(s->so, n ? p : none, n, NULL, 0, &si, sizeof si, SCTP_SENDV_SNDINFO, 0) >= 0)
        return 0;
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS ? 1 : -1;
}

iwc_sctp_state iwc_sctp_get_state(const iwc_sctp *s) { return s->state; }

bool iwc_sctp_adaptation(const iwc_sctp *s, uint32_t *ind) {
    if (s->adapt_got)
        *ind = s->adapt;
    return s->adapt_got;
}

void iwc_sctp_shutdown(iwc_sctp *s) {
    if (s->so && s->state == IWC_SCTP_UP)
        usrsctp_shutdown(s->so, SHUT_WR);
}

void iwc_sctp_abort(iwc_sctp *s) {
    if (s->so) {
        iw_usrsctp_abort_close(s->so);
        s->so = NULL;
    }
    s->state = IWC_SCTP_ABORTED;
}

#endif
