/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwarp-agent on a real RDMA device: this test is the agent's peer, over
 * librdmacm/libibverbs in this process, and drives the agent through its
 * socket like a runner would. Label "rdma-device": not run by default.
 *
 * Needs an iWARP device the address below reaches, e.g. siw on loopback:
 *   modprobe siw && rdma link add siw_lo type siw netdev lo
 * Environment: IWARP_AGENT_ADDR (default 127.0.0.1), IWARP_AGENT_DEV
 * (passed as --dev). Exits 77 (skipped) when the agent reports no device.
 * argv[1] is the iwarp-agent binary. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "iw_json.h"
#include "iw_test.h"

static const char *agent_bin, *addr;
static pid_t agent_pid;
static uint16_t agent_port;
static int afd = -1;
static char rbuf[1 << 20];
static size_t rlen;

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int rq(const char *json, iw_json_doc *out) {
    char line[4096];
    int n = snprintf(line, sizeof line, "%s\n", json);
    if (send(afd, line, (size_t)n, MSG_NOSIGNAL) != n)
        return -1;
    uint64_t end = now_ms() + 10000;
    while (now_ms() < end) {
        char *nl = memchr(rbuf, '\n', rlen);
        if (nl) {
            size_t k = (size_t)(nl - rbuf);
            fprintf(stderr, "  agent: %.*s\n", (int)(k > 300 ? 300 : k), rbuf);
            int rc = iw_json_parse(out, rbuf, k);
            memmove(rbuf, nl + 1, rlen - k - 1);
            rlen -= k + 1;
            return rc;
        }
        struct pollfd p = {afd, POLLIN, 0};
        if (poll(&p, 1, 100) > 0) {
            ssize_t r = recv(afd, rbuf + rlen, sizeof rbuf - rlen, 0);
            if (r <= 0)
                return -1;
            rlen += (size_t)r;
        }
    }
    return -1;
}

static bool ok_of(const iw_json_doc *d) {
    const iw_json *ok = iw_json_get(d, &d->nodes[0], "ok");
    if (!(ok && ok->type == IW_JSON_BOOL && ok->b)) {
        const iw_json *e = iw_json_get(d, &d->nodes[0], "error");
        fprintf(stderr, "  agent error: %s\n", e && e->type == IW_JSON_STR ? e->str : "?");
        return false;
    }
    return true;
}

static const char *str_of(const iw_json_doc *d, const iw_json *o, const char *k) {
    const iw_json *v = iw_json_get(d, o, k);
    return v && v->type == IW_JSON_STR ? v->str : "";
}

static uint64_t u64_of(const iw_json_doc *d, const iw_json *o, const char *k) {
    uint64_t v = 0;
    char err[80];
    iw_json_u64(d, o, k, true, ~0ull, &v, err, sizeof err);
    return v;
}

/* Poll the agent until an event of `type` arrives; copy it out as text. */
static bool wait_event(const char *type, iw_json_doc *ev) {
    for (int i = 0; i < 50; i++) {
        iw_json_doc d;
        if (rq("{\"op\":\"poll\",\"timeout_ms\":200}", &d) < 0)
            return false;
        const iw_json *evs = iw_json_get(&d, &d.nodes[0], "events");
        for (const iw_json *e = iw_json_first(&d, evs); e; e = iw_json_next(&d, e)) {
            fprintf(stderr, "  event %s\n", str_of(&d, e, "type"));
            if (!strcmp(str_of(&d, e, "type"), type)) {
                *ev = d; /* the caller reads ev->nodes[idx] through find_event */
                return true;
            }
        }
        iw_json_free(&d);
    }
    return false;
}

static const iw_json *find_event(const iw_json_doc *d, const char *type) {
    const iw_json *evs = iw_json_get(d, &d->nodes[0], "events");
    for (const iw_json *e = iw_json_first(d, evs); e; e = iw_json_next(d, e))
        if (!strcmp(str_of(d, e, "type"), type))
            return e;
    return NULL;
}

/* ---- the peer ---- */

typedef struct peer {
    struct rdma_event_channel *ch;
    struct rdma_cm_id *id;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_mr *mr;
    uint8_t *mem;
} peer;

static int cm_wait(peer *p, enum rdma_cm_event_type want, uint8_t *pd, size_t *pd_len) {
    struct pollfd f = {p->ch->fd, POLLIN, 0};
    if (poll(&f, 1, 10000) <= 0)
        return -1;
    struct rdma_cm_event *ev;
    if (rdma_get_cm_event(p->ch, &ev))
        return -1;
    int got = ev->event;
    if (pd && pd_len) {
        *pd_len = ev->param.conn.private_data ? ev->param.conn.private_data_len : 0;
        if (*pd_len)
            memcpy(pd, ev->param.conn.private_data, *pd_len);
    }
    fprintf(stderr, "  peer cm: %s (%d)\n", rdma_event_str(ev->event), ev->status);
    rdma_ack_cm_event(ev);
    return got == (int)want ? 0 : -1;
}

static int peer_connect(peer *p, uint16_t port, const uint8_t *pd, uint8_t pd_len,
                        enum rdma_cm_event_type want, uint8_t *rpd, size_t *rpd_len) {
    memset(p, 0, sizeof *p);
    struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons(port)};
    if (inet_pton(AF_INET, addr, &dst.sin_addr) != 1)
        return -1;
    p->ch = rdma_create_event_channel();
    if (!p->ch || rdma_create_id(p->ch, &p->id, NULL, RDMA_PS_TCP) ||
        rdma_resolve_addr(p->id, NULL, (struct sockaddr *)&dst, 2000) ||
        cm_wait(p, RDMA_CM_EVENT_ADDR_RESOLVED, NULL, NULL) || rdma_resolve_route(p->id, 2000) ||
        cm_wait(p, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL, NULL))
        return -1;
    p->pd = ibv_alloc_pd(p->id->verbs);
    p->cq = ibv_create_cq(p->id->verbs, 64, NULL, NULL, 0);
    p->mem = calloc(1, 4096);
    if (!p->pd || !p->cq || !p->mem)
        return -1;
    p->mr = ibv_reg_mr(p->pd, p->mem, 4096,
                       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
    struct ibv_qp_init_attr qa;
    memset(&qa, 0, sizeof qa);
    qa.send_cq = qa.recv_cq = p->cq;
    qa.qp_type = IBV_QPT_RC;
    qa.sq_sig_all = 1;
    qa.cap.max_send_wr = qa.cap.max_recv_wr = 16;
    qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
    if (!p->mr || rdma_create_qp(p->id, p->pd, &qa))
        return -1;
    /* A receive at offset 3072 for the agent's Send. */
    struct ibv_sge sge = {(uintptr_t)(p->mem + 3072), 256, p->mr->lkey};
    struct ibv_recv_wr rw = {.wr_id = 77, .sg_list = &sge, .num_sge = 1}, *bad;
    if (ibv_post_recv(p->id->qp, &rw, &bad))
        return -1;
    struct rdma_conn_param cp;
    memset(&cp, 0, sizeof cp);
    cp.responder_resources = 4;
    cp.initiator_depth = 4;
    cp.private_data = pd;
    cp.private_data_len = pd_len;
    if (rdma_connect(p->id, &cp))
        return -1;
    return cm_wait(p, want, rpd, rpd_len);
}

static void peer_free(peer *p) {
    if (p->id && p->id->qp)
        rdma_destroy_qp(p->id);
    if (p->mr)
        ibv_dereg_mr(p->mr);
    if (p->cq)
        ibv_destroy_cq(p->cq);
    if (p->pd)
        ibv_dealloc_pd(p->pd);
    if (p->id)
        rdma_destroy_id(p->id);
    if (p->ch)
        rdma_destroy_event_channel(p->ch);
    free(p->mem);
}

static int peer_wc(peer *p, uint64_t wr_id) {
    uint64_t end = now_ms() + 5000;
    struct ibv_wc wc;
    while (now_ms() < end) {
        int n = ibv_poll_cq(p->cq, 1, &wc);
        if (n > 0) {
            if (wc.wr_id == wr_id)
                return wc.status == IBV_WC_SUCCESS ? 0 : -1;
            continue;
        }
        usleep(1000);
    }
    return -1;
}

static int peer_post(peer *p, enum ibv_wr_opcode op, uint64_t id, void *buf, uint32_t len,
                     uint64_t raddr, uint32_t rkey) {
    struct ibv_sge sge = {(uintptr_t)buf, len, p->mr->lkey};
    struct ibv_send_wr sw, *bad;
    memset(&sw, 0, sizeof sw);
    sw.wr_id = id;
    sw.opcode = op;
    sw.sg_list = &sge;
    sw.num_sge = 1;
    sw.send_flags = IBV_SEND_SIGNALED;
    sw.wr.rdma.remote_addr = raddr;
    sw.wr.rdma.rkey = rkey;
    return ibv_post_send(p->id->qp, &sw, &bad);
}

IW_TEST(traffic_both_ways_through_the_agent) {
    iw_json_doc d, ev;
    char line[512];
    REQUIRE(rq("{\"op\":\"reg_mr\",\"len\":64,\"access\":[\"local_write\",\"remote_write\","
               "\"remote_read\"]}",
               &d) == 0);
    REQUIRE(ok_of(&d));
    uint32_t r_stag = (uint32_t)u64_of(&d, &d.nodes[0], "stag");
    uint64_t r_to = u64_of(&d, &d.nodes[0], "to");
    iw_json_free(&d);
    snprintf(line, sizeof line,
             "{\"op\":\"listen\",\"host\":\"%s\",\"port\":0,\"mpa\":{\"ird\":4,\"ord\":4,"
             "\"markers\":true,\"private_data_hex\":\"a1b2\"}}",
             addr);
    REQUIRE(rq(line, &d) == 0);
    REQUIRE(ok_of(&d));
    uint16_t port = (uint16_t)u64_of(&d, &d.nodes[0], "port");
    const iw_json *applied = iw_json_get(&d, &d.nodes[0], "applied");
    const iw_json *ignored = iw_json_get(&d, &d.nodes[0], "ignored");
    CHECK(applied && iw_json_first(&d, applied));
    CHECK(ignored && iw_json_first(&d, ignored)); /* markers: verbs cannot */
    iw_json_free(&d);
    /* Receive buffers before the connection exists: posted at accept. */
    REQUIRE(rq("{\"op\":\"post_recv\",\"len\":64,\"count\":2}", &d) == 0);
    CHECK(ok_of(&d));
    iw_json_free(&d);

    peer p;
    uint8_t rpd[256];
    size_t rpd_len = 0;
    const uint8_t mypd[2] = {0xc3, 0xd4};
    int rc = peer_connect(&p, port, mypd, 2, RDMA_CM_EVENT_ESTABLISHED, rpd, &rpd_len);
    if (rc) {
        peer_free(&p);
        REQUIRE(rc == 0);
    }
    CHECK_EQ(rpd_len, 2);
    CHECK(rpd_len == 2 && rpd[0] == 0xa1 && rpd[1] == 0xb2);
    REQUIRE(wait_event("connected", &ev));
    const iw_json *c = find_event(&ev, "connected");
    CHECK(!strcmp(str_of(&ev, c, "peer_private_data_hex"), "c3d4"));
    CHECK(!strcmp(str_of(&ev, c, "role"), "responder"));
    CHECK(iw_json_get(&ev, c, "mpa") != NULL);
    iw_json_free(&ev);

    /* Peer Send -> agent recv event. */
    memcpy(p.mem, "hello", 5);
    REQUIRE(peer_post(&p, IBV_WR_SEND, 1, p.mem, 5, 0, 0) == 0);
    CHECK(peer_wc(&p, 1) == 0);
    REQUIRE(wait_event("recv", &ev));
    const iw_json *r = find_event(&ev, "recv");
    CHECK(!strcmp(str_of(&ev, r, "status"), "ok"));
    CHECK(!strcmp(str_of(&ev, r, "data_hex"), "68656c6c6f"));
    CHECK_EQ(u64_of(&ev, r, "msn"), 1);
    iw_json_free(&ev);

    /* Peer Write into the agent's region, checked with read_mr and guard. */
    memcpy(p.mem + 16, "\xde\xad\xbe\xef", 4);
    REQUIRE(peer_post(&p, IBV_WR_RDMA_WRITE, 2, p.mem + 16, 4, r_to + 8, r_stag) == 0);
    CHECK(peer_wc(&p, 2) == 0);
    snprintf(line, sizeof line, "{\"op\":\"read_mr\",\"stag\":\"0x%x\",\"offset\":8,\"len\":4}",
             r_stag);
    REQUIRE(rq(line, &d) == 0);
    CHECK(!strcmp(str_of(&d, &d.nodes[0], "data_hex"), "deadbeef"));
    iw_json_free(&d);
    snprintf(line, sizeof line, "{\"op\":\"guard\",\"stag\":\"0x%x\"}", r_stag);
    REQUIRE(rq(line, &d) == 0);
    const iw_json *in = iw_json_get(&d, &d.nodes[0], "intact");
    CHECK(in && in->b);
    iw_json_free(&d);

    /* Agent Read from the peer into its region. */
    memcpy(p.mem + 1024, "\xca\xfe\xba\xbe", 4);
    snprintf(line, sizeof line,
             "{\"op\":\"post_send\",\"kind\":\"read\",\"stag\":\"0x%x\",\"to\":\"0x%llx\","
             "\"remote_stag\":\"0x%x\",\"remote_to\":\"0x%llx\",\"len\":4}",
             r_stag, (unsigned long long)(r_to + 16), p.mr->rkey,
             (unsigned long long)(uintptr_t)(p.mem + 1024));
    REQUIRE(rq(line, &d) == 0);
    CHECK(ok_of(&d));
    iw_json_free(&d);
    REQUIRE(wait_event("read_done", &ev));
    CHECK(!strcmp(str_of(&ev, find_event(&ev, "read_done"), "status"), "ok"));
    iw_json_free(&ev);
    snprintf(line, sizeof line, "{\"op\":\"read_mr\",\"stag\":\"0x%x\",\"offset\":16,\"len\":4}",
             r_stag);
    REQUIRE(rq(line, &d) == 0);
    CHECK(!strcmp(str_of(&d, &d.nodes[0], "data_hex"), "cafebabe"));
    iw_json_free(&d);

    /* Agent Write into the peer. */
    snprintf(line, sizeof line,
             "{\"op\":\"post_send\",\"kind\":\"write\",\"data_hex\":\"0badf00d\","
             "\"remote_stag\":\"0x%x\",\"remote_to\":\"0x%llx\"}",
             p.mr->rkey, (unsigned long long)(uintptr_t)(p.mem + 2048));
    REQUIRE(rq(line, &d) == 0);
    CHECK(ok_of(&d));
    iw_json_free(&d);
    REQUIRE(wait_event("write_done", &ev));
    iw_json_free(&ev);
    CHECK(!memcmp(p.mem + 2048, "\x0b\xad\xf0\x0d", 4));

    /* Agent Send into the peer's receive. */
    REQUIRE(rq("{\"op\":\"post_send\",\"kind\":\"send\",\"data_hex\":\"0102\"}", &d) == 0);
    CHECK(ok_of(&d));
    iw_json_free(&d);
    CHECK(peer_wc(&p, 77) == 0);
    CHECK(!memcmp(p.mem + 3072, "\x01\x02", 2));
    REQUIRE(wait_event("send_done", &ev));
    iw_json_free(&ev);

    /* Atomics and Immediate Data: refused honestly on iWARP. */
    REQUIRE(rq("{\"op\":\"post_send\",\"kind\":\"immediate\",\"data_hex\":\"0102030405060708\"}",
               &d) == 0);
    CHECK(!ok_of(&d));
    iw_json_free(&d);

    /* Orderly close by the agent. */
    REQUIRE(rq("{\"op\":\"close\"}", &d) == 0);
    CHECK(ok_of(&d));
    iw_json_free(&d);
    CHECK(cm_wait(&p, RDMA_CM_EVENT_DISCONNECTED, NULL, NULL) == 0);
    REQUIRE(wait_event("closed", &ev));
    CHECK(!strcmp(str_of(&ev, find_event(&ev, "closed"), "reason"), "ulp_close"));
    iw_json_free(&ev);
    peer_free(&p);
}

IW_TEST(listen_with_reject) {
    iw_json_doc d, ev;
    char line[512];
    REQUIRE(rq("{\"op\":\"reset\"}", &d) == 0);
    iw_json_free(&d);
    snprintf(line, sizeof line,
             "{\"op\":\"listen\",\"host\":\"%s\",\"port\":0,\"mpa\":{\"reject\":true,"
             "\"private_data_hex\":\"ee\"}}",
             addr);
    REQUIRE(rq(line, &d) == 0);
    REQUIRE(ok_of(&d));
    uint16_t port = (uint16_t)u64_of(&d, &d.nodes[0], "port");
    iw_json_free(&d);
    peer p;
    uint8_t rpd[256];
    size_t rpd_len = 0;
    const uint8_t mypd[1] = {0x11};
    CHECK(peer_connect(&p, port, mypd, 1, RDMA_CM_EVENT_REJECTED, rpd, &rpd_len) == 0);
    CHECK(rpd_len == 1 && rpd[0] == 0xee);
    peer_free(&p);
    REQUIRE(wait_event("mpa_rejected", &ev));
    CHECK(!strcmp(str_of(&ev, find_event(&ev, "mpa_rejected"), "peer_private_data_hex"), "11"));
    iw_json_free(&ev);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: va_device_test PATH/iwarp-agent\n");
        return 2;
    }
    agent_bin = argv[1];
    addr = getenv("IWARP_AGENT_ADDR") ? getenv("IWARP_AGENT_ADDR") : "127.0.0.1";
    const char *dev = getenv("IWARP_AGENT_DEV");
    signal(SIGPIPE, SIG_IGN);
    agent_port = (uint16_t)(30000 + getpid() % 20000);
    char arg[64];
    snprintf(arg, sizeof arg, "127.0.0.1:%u", agent_port);
    agent_pid = fork();
    if (agent_pid == 0) {
        if (dev)
            execl(agent_bin, agent_bin, "--agent", arg, "--dev", dev, "--verbose", (char *)NULL);
        else
            execl(agent_bin, agent_bin, "--agent", arg, "--verbose", (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 200 && afd < 0; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(agent_port)};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
            afd = fd;
        else {
            close(fd);
            usleep(20000);
        }
    }
    int rc = 1;
    iw_json_doc d;
    if (afd >= 0 && rq("{\"op\":\"hello\"}", &d) == 0) {
        const iw_json *caps = iw_json_get(&d, &d.nodes[0], "caps");
        const iw_json *devj = caps ? iw_json_get(&d, caps, "device") : NULL;
        bool have = devj && devj->type == IW_JSON_OBJ;
        iw_json_free(&d);
        if (!have) {
            fprintf(stderr, "va_device_test: skipped: the agent reports no RDMA device\n");
            rc = 77;
        } else {
            static const iw_test_case cases[] = {IW_CASE(traffic_both_ways_through_the_agent),
                                                 IW_CASE(listen_with_reject)};
            rc = iw_test_run("va_device", cases, sizeof cases / sizeof *cases, 1, argv);
        }
    }
    if (afd >= 0)
        close(afd);
    kill(agent_pid, SIGTERM);
    int st = 0;
    waitpid(agent_pid, &st, 0);
    if (rc == 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
        rc = 1;
    return rc;
}
