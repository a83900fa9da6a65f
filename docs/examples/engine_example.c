/* SPDX-License-Identifier: GPL-2.0-or-later */
/* engine_example: the sans-I/O engine alone (<iwarp/engine.h>), no verbs
 * layer. Two iw_conn, an MPA initiator and a responder, talk over a
 * socketpair; this program is their whole I/O: it moves whatever each
 * engine wants to send into the socket, feeds whatever arrives back in, and
 * passes the time in. The initiator RDMA-Writes 100,000 octets into the
 * responder's registered region, then Sends a message that lands in a
 * posted receive buffer; every octet is checked. Prints "ok" and exits 0
 * when all of it worked.
 *
 * Built by ctest from the installed package (find_package(iwarp) and
 * pkg-config iwarp: docs/examples/downstream/). */
/* POSIX.1-2008 for clock_gettime and sendmsg under plain -std=c11. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h> /* iw_iovec has struct iovec's layout */
#include <time.h>
#include <unistd.h>

#include <iwarp/iwarp.h>

#define DIE(...)                                                                                   \
    do {                                                                                           \
        fprintf(stderr, "engine_example: " __VA_ARGS__);                                           \
        fputc('\n', stderr);                                                                       \
        exit(1);                                                                                   \
    } while (0)

#define WRITE_LEN 100000u

typedef struct side {
    const char *name;
    iw_conn *conn;
    int fd;
    bool connected, write_done, send_done, got_recv;
    uint32_t recv_len;
} side;

/* Every engine event lands here: completions and state changes. */
static int on_event(iw_conn *conn, const iw_event *ev, void *user) {
    (void)conn;
    side *s = user;
    if (ev->status != IW_WC_SUCCESS)
        DIE("%s: event %d failed with status %d", s->name, ev->type, ev->status);
    switch (ev->type) {
    case IW_EV_CONNECTED:
        s->connected = true;
        break;
    case IW_EV_WRITE_DONE:
        s->write_done = true;
        break;
    case IW_EV_SEND_DONE:
        s->send_done = true;
        break;
    case IW_EV_RECV:
        s->got_recv = true;
        s->recv_len = ev->len;
        break;
    case IW_EV_TERM_SENT:
    case IW_EV_TERM_RECEIVED:
        DIE("%s: Terminate %s", s->name, iw_term_str(ev->term.triple));
    case IW_EV_REJECTED:
    case IW_EV_CLOSED:
        DIE("%s: connection ended (%s)", s->name, iw_close_str(ev->close));
    default:
        break;
    }
    return 0;
}

static iw_tstamp now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (iw_tstamp)ts.tv_sec * 1000000000u + (iw_tstamp)ts.tv_nsec;
}

/* One round of I/O for one side: out, then in. The engine never blocks and
 * never touches the socket. Output goes zero-copy: tx_iov lists where the
 * next octets are (headers in the engine, payload in place), sendmsg takes
 * what the socket has room for, and tx_commit says how much that was. */
static void pump(side *s) {
    for (;;) {
        iw_iovec iov[16];
        int k = iw_conn_tx_iov(s->conn, iov, 16);
        if (k < 0)
            DIE("%s: iw_conn_tx_iov: %s", s->name, iw_strerror(k));
        if (k == 0)
            break;
        struct msghdr mh = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)k};
        ssize_t w = sendmsg(s->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (w < 0)
            DIE("%s: sendmsg: %s", s->name, strerror(errno));
        if (iw_conn_tx_commit(s->conn, (size_t)w, now_ns()) < 0)
            DIE("%s: iw_conn_tx_commit failed", s->name);
    }
    uint8_t buf[16384];
    ssize_t r;
    while ((r = recv(s->fd, buf, sizeof buf, MSG_DONTWAIT)) > 0)
        if (iw_conn_recv(s->conn, buf, (size_t)r, now_ns()) < 0)
            DIE("%s: iw_conn_recv failed", s->name);
    if (r == 0)
        DIE("%s: the other side closed", s->name);
}

int main(void) {
    printf("libiwarp %s (headers %s)\n", iw_version(), IW_VERSION_STR);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
        DIE("socketpair: %s", strerror(errno));

    /* One RNIC (PDs and the STag table) serves both connections here. */
    iw_rnic *rnic;
    uint32_t pd;
    if (iw_rnic_new(&rnic, NULL) || iw_pd_alloc(rnic, &pd))
        DIE("cannot create the RNIC");
    uint8_t *sink = calloc(1, WRITE_LEN), *src = malloc(WRITE_LEN);
    static uint8_t rbuf[256];
    if (!sink || !src)
        DIE("out of memory");
    for (uint32_t i = 0; i < WRITE_LEN; i++)
        src[i] = (uint8_t)(i * 7 + 3);
    uint32_t stag;
    if (iw_mr_reg(rnic, pd, sink, WRITE_LEN, 0, IW_ACCESS_REMOTE_WRITE, &stag))
        DIE("cannot register the sink");

    side ini = {.name = "initiator", .fd = sv[0]}, rsp = {.name = "responder", .fd = sv[1]};
    iw_conn_settings si, sr;
    iw_conn_settings_default(&si, IW_ROLE_INITIATOR); /* MPA rev 2, CRC */
    iw_conn_settings_default(&sr, IW_ROLE_RESPONDER);
    const iw_callbacks cb = {IW_CALLBACKS_V1, on_event};
    if (iw_conn_new(&ini.conn, rnic, pd, &si, &cb, &ini) ||
        iw_conn_new(&rsp.conn, rnic, pd, &sr, &cb, &rsp))
        DIE("cannot create the connections");
    if (iw_conn_post_recv(rsp.conn, 1, rbuf, sizeof rbuf))
        DIE("cannot post a receive buffer");
    iw_conn_start(rsp.conn, now_ns());
    iw_conn_start(ini.conn, now_ns()); /* queues the MPA Request */

    static const char msg[] = "written: 100000 octets";
    bool posted = false;
    for (int round = 0; round < 100000 && !(rsp.got_recv && ini.send_done); round++) {
        pump(&ini);
        pump(&rsp);
        if (ini.connected && !posted) {
            iw_send_wr w = {.op = IW_WR_WRITE,
                            .wr_id = 1,
                            .data = src,
                            .len = WRITE_LEN,
                            .remote_stag = stag,
                            .remote_to = 0};
            iw_send_wr s = {.op = IW_WR_SEND, .wr_id = 2, .data = msg, .len = sizeof msg};
            if (iw_conn_post_send(ini.conn, &w) || iw_conn_post_send(ini.conn, &s))
                DIE("cannot post");
            posted = true;
        }
    }
    if (!rsp.got_recv || !ini.write_done || !ini.send_done)
        DIE("the exchange did not finish");
    /* RFC 5040 §5.5: the Send was delivered after the Write was placed. */
    if (memcmp(sink, src, WRITE_LEN) != 0)
        DIE("the written octets differ");
    if (rsp.recv_len != sizeof msg || memcmp(rbuf, msg, sizeof msg) != 0)
        DIE("the received message differs");
    iw_conn_stats st;
    iw_conn_get_stats(rsp.conn, &st);
    printf("responder: %llu FPDUs, %llu octets placed\nok\n", (unsigned long long)st.fpdus_rx,
           (unsigned long long)st.bytes_placed);
    iw_conn_del(ini.conn);
    iw_conn_del(rsp.conn);
    iw_mr_dereg(rnic, stag);
    iw_rnic_del(rnic);
    free(sink);
    free(src);
    close(sv[0]);
    close(sv[1]);
    return 0;
}
