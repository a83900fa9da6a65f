/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwarp-target end to end: the agent protocol over its socket (including
 * malformed requests), and real RDMA traffic over loopback between the
 * target and a verbs client in this process. argv[1] is the iwarp-target
 * binary. */
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

#include <iwarp/verbs.h>

#include "iw_json.h"
#include "iw_test.h"

static const char *target_bin;
static pid_t target_pid;
static uint16_t agent_port;
static iw_dev *cdev; /* the client's device: driven while we wait for the agent */

static int agent_connect(void) {
    for (int i = 0; i < 100; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(agent_port)};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
            return fd;
        close(fd);
        usleep(20000);
    }
    return -1;
}

static void start_target(void) {
    /* A port unlikely to clash between parallel ctest runs. */
    agent_port = (uint16_t)(20000 + (getpid() % 20000));
    char arg[64];
    snprintf(arg, sizeof arg, "127.0.0.1:%u", agent_port);
    target_pid = fork();
    if (target_pid == 0) {
        execl(target_bin, target_bin, "--agent", arg, (char *)NULL);
        _exit(127);
    }
}

static void stop_target(void) {
    kill(target_pid, SIGTERM);
    int st;
    waitpid(target_pid, &st, 0);
    /* It must exit by itself on SIGTERM, cleanly. */
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Send one line, return the response parsed (caller frees). Keeps the
 * client's RDMA stack moving while waiting. */
static char rbuf[1 << 22];
static size_t rlen;
static int agent_rq_raw(int fd, const char *line, size_t n, iw_json_doc *out) {
    if (send(fd, line, n, MSG_NOSIGNAL) != (ssize_t)n)
        return -1;
    for (int spins = 0; spins < 3000; spins++) {
        char *nl = memchr(rbuf, '\n', rlen);
        if (nl) {
            size_t k = (size_t)(nl - rbuf);
            int rc = iw_json_parse(out, rbuf, k);
            memmove(rbuf, nl + 1, rlen - k - 1);
            rlen -= k + 1;
            return rc;
        }
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 5) > 0) {
            ssize_t r = recv(fd, rbuf + rlen, sizeof rbuf - rlen, 0);
            if (r <= 0)
                return -1;
            rlen += (size_t)r;
        }
        if (cdev)
            iw_dev_progress(cdev, 0);
    }
    return -1;
}

static int agent_rq(int fd, const char *json, iw_json_doc *out) {
    char line[4096];
    int n = snprintf(line, sizeof line, "%s\n", json);
    return agent_rq_raw(fd, line, (size_t)n, out);
}

static bool resp_ok(iw_json_doc *d) {
    const iw_json *ok = iw_json_get(d, &d->nodes[0], "ok");
    return ok && ok->type == IW_JSON_BOOL && ok->b;
}

static uint64_t resp_u64(iw_json_doc *d, const char *k) {
    uint64_t v = 0;
    char err[80];
    iw_json_u64(d, &d->nodes[0], k, true, ~0ull, &v, err, sizeof err);
    return v;
}

/* Poll the agent until an event of `type` shows up; returns its doc index. */
static const iw_json *wait_event(int fd, iw_json_doc *d, const char *type) {
    for (int i = 0; i < 100; i++) {
        iw_json_free(d);
        if (agent_rq(fd, "{\"op\":\"poll\",\"timeout_ms\":50}", d) < 0)
            return NULL;
        const iw_json *evs = iw_json_get(d, &d->nodes[0], "events");
        for (const iw_json *e = iw_json_first(d, evs); e; e = iw_json_next(d, e)) {
            const iw_json *t = iw_json_get(d, e, "type");
            if (t && t->type == IW_JSON_STR && !strcmp(t->str, type))
                return e;
        }
    }
    return NULL;
}

IW_TEST(malformed_requests_get_errors_and_service_continues) {
    int fd = agent_connect();
    REQUIRE(fd >= 0);
    iw_json_doc d;
    static const char *bad[] = {
        "{",
        "[]",
        "42",
        "{\"op\":1}",
        "{\"op\":\"fly\"}",
        "{\"op\":\"reg_mr\"}",
        "{\"op\":\"reg_mr\",\"len\":-1}",
        "{\"op\":\"reg_mr\",\"len\":16,\"access\":[\"root\"]}",
        "{\"op\":\"reg_mr\",\"len\":99999999999}",
        "{\"op\":\"read_mr\",\"stag\":\"0xzz\"}",
        "{\"op\":\"write_mr\",\"stag\":1,\"offset\":0,\"data_hex\":\"abc\"}",
        "{\"op\":\"post_send\",\"kind\":\"teleport\"}",
        "{\"op\":\"post_send\",\"kind\":\"send\"}",
        "{\"op\":\"connect\",\"host\":\"nowhere\",\"port\":1}",
        "{\"op\":\"listen\",\"mpa\":7}",
        "{\"op\":\"listen\",\"mpa\":{\"rev\":9}}",
        "{\"op\":\"listen\",\"mpa\":{\"rtr\":\"fax\"}}",
        "{\"op\":\"dereg_mr\",\"stag\":12345}",
        "\"\\uZZZZ\"",
        "{\"a\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
        "{\"op\":\"post_recv\",\"len\":8}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        REQUIRE(agent_rq(fd, bad[i], &d) == 0);
        CHECK(!resp_ok(&d));
        const iw_json *e = iw_json_get(&d, &d.nodes[0], "error");
        CHECK(e && e->type == IW_JSON_STR && e->len > 0);
        iw_json_free(&d);
    }
    /* Binary junk and an over-long line: refused, then still serving. */
    char junk[300];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (char)(i * 37 + 1) == '\n' ? 'x' : (char)(i * 37 + 1);
    junk[sizeof junk - 1] = '\n';
    REQUIRE(agent_rq_raw(fd, junk, sizeof junk, &d) == 0);
    CHECK(!resp_ok(&d));
    iw_json_free(&d);
    size_t big = (4u << 20) + 100;
    char *huge = malloc(big + 1);
    memset(huge, 'a', big);
    huge[big] = '\n';
    REQUIRE(agent_rq_raw(fd, huge, big + 1, &d) == 0);
    CHECK(!resp_ok(&d));
    iw_json_free(&d);
    free(huge);
    REQUIRE(agent_rq(fd, "{\"op\":\"hello\"}", &d) == 0);
    CHECK(resp_ok(&d));
    CHECK_EQ(resp_u64(&d, "version"), 1);
    iw_json_free(&d);
    close(fd);
}

typedef struct {
    iw_dev *dev;
    iw_cq *cq;
    iw_qp *qp;
    uint32_t pd;
} client;

static bool client_wait(client *c, iw_event_type type, iw_event *out) {
    iw_wc wc[8];
    for (int i = 0; i < 200; i++) {
        int n = iw_cq_wait(c->cq, wc, 1, 10);
        if (n > 0 && wc[0].ev.type == type) {
            if (out)
                *out = wc[0].ev;
            return true;
        }
    }
    return false;
}

IW_TEST(rdma_over_loopback_against_the_target) {
    int fd = agent_connect();
    REQUIRE(fd >= 0);
    iw_json_doc d;
    client c = {0};
    REQUIRE(iw_dev_open(&c.dev) == 0);
    cdev = c.dev;
    REQUIRE(iw_pd_alloc(iw_dev_rnic(c.dev), &c.pd) == 0);
    REQUIRE(iw_cq_create(c.dev, 64, &c.cq) == 0);

    REQUIRE(agent_rq(fd, "{\"op\":\"reset\"}", &d) == 0 && resp_ok(&d));
    iw_json_free(&d);
    REQUIRE(agent_rq(fd,
                     "{\"op\":\"reg_mr\",\"len\":4096,\"access\":[\"remote_write\",\"remote_read\"]"
                     ",\"fill\":7}",
                     &d) == 0);
    REQUIRE(resp_ok(&d));
    uint32_t tstag = (uint32_t)resp_u64(&d, "stag");
    uint64_t tto = resp_u64(&d, "to");
    iw_json_free(&d);
    REQUIRE(agent_rq(fd,
                     "{\"op\":\"listen\",\"port\":0,\"mpa\":{\"rev\":2,\"crc\":true,\"markers\":"
                     "true,\"p2p\":true}}",
                     &d) == 0);
    REQUIRE(resp_ok(&d));
    uint16_t port = (uint16_t)resp_u64(&d, "port");
    iw_json_free(&d);

    iw_conn_settings s;
    iw_conn_settings_default(&s, IW_ROLE_INITIATOR);
    s.p2p = true;
    REQUIRE(iw_qp_create(c.dev, c.pd, c.cq, &s, &c.qp) == 0);
    REQUIRE(iw_qp_connect(c.qp, "127.0.0.1", port) == 0);
    iw_event ev;
    REQUIRE(client_wait(&c, IW_EV_CONNECTED, &ev));
    CHECK(ev.info->crc && ev.info->markers_tx && ev.info->p2p);
    REQUIRE(wait_event(fd, &d, "connected"));
    iw_json_free(&d);

    /* RDMA Write into the target's region, checked through read_mr. */
    uint8_t data[3000];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 11 + 5);
    iw_send_wr w = {.op = IW_WR_WRITE,
                    .wr_id = 1,
                    .data = data,
                    .len = sizeof data,
                    .remote_stag = tstag,
                    .remote_to = tto + 100};
    REQUIRE(iw_qp_post_send(c.qp, &w) == 0);
    REQUIRE(client_wait(&c, IW_EV_WRITE_DONE, NULL));
    char q[256];
    for (int tries = 0; tries < 50; tries++) { /* the target places asynchronously */
        snprintf(q, sizeof q,
                 "{\"op\":\"read_mr\",\"stag\":\"0x%08x\",\"offset\":100,\"len\":3000}", tstag);
        REQUIRE(agent_rq(fd, q, &d) == 0 && resp_ok(&d));
        const iw_json *hex = iw_json_get(&d, &d.nodes[0], "data_hex");
        uint8_t *got = NULL;
        size_t gl = 0;
        char err[80];
        iw_json_hex(&d, &d.nodes[0], "data_hex", true, 4096, &got, &gl, err, sizeof err);
        bool same = hex && gl == sizeof data && !memcmp(got, data, gl);
        free(got);
        iw_json_free(&d);
        if (same)
            break;
        CHECK(tries < 49);
        usleep(10000);
    }
    snprintf(q, sizeof q, "{\"op\":\"read_mr\",\"stag\":\"0x%08x\",\"offset\":0,\"len\":100}",
             tstag);
    REQUIRE(agent_rq(fd, q, &d) == 0 && resp_ok(&d));
    const iw_json *head = iw_json_get(&d, &d.nodes[0], "data_hex");
    CHECK(head && head->len == 200 && !strncmp(head->str, "0707070707", 10));
    iw_json_free(&d);

    /* A Send to posted target buffers shows up as a recv event with its data. */
    REQUIRE(agent_rq(fd, "{\"op\":\"post_recv\",\"len\":64,\"count\":2}", &d) == 0 && resp_ok(&d));
    iw_json_free(&d);
    iw_send_wr sw = {
        .op = IW_WR_SEND_SE, .wr_id = 2, .data = (const uint8_t *)"hello target", .len = 12};
    REQUIRE(iw_qp_post_send(c.qp, &sw) == 0);
    const iw_json *rv = wait_event(fd, &d, "recv");
    REQUIRE(rv);
    const iw_json *dh = iw_json_get(&d, rv, "data_hex");
    CHECK(dh && !strcmp(dh->str, "68656c6c6f20746172676574"));
    const iw_json *sol = iw_json_get(&d, rv, "solicited");
    CHECK(sol && sol->b);
    iw_json_free(&d);

    /* The target reads from our region. */
    static uint8_t mine[512];
    for (size_t i = 0; i < sizeof mine; i++)
        mine[i] = (uint8_t)(255 - i);
    uint32_t cstag;
    REQUIRE(iw_mr_reg(iw_dev_rnic(c.dev), c.pd, mine, sizeof mine, 0x5000, IW_ACCESS_REMOTE_READ,
                      &cstag) == 0);
    snprintf(q, sizeof q,
             "{\"op\":\"post_send\",\"kind\":\"read\",\"stag\":\"0x%08x\",\"to\":\"0x%llx\","
             "\"remote_stag\":\"0x%08x\",\"remote_to\":\"0x5000\",\"len\":512}",
             tstag, (unsigned long long)tto + 1024, cstag);
    REQUIRE(agent_rq(fd, q, &d) == 0 && resp_ok(&d));
    iw_json_free(&d);
    const iw_json *rd = wait_event(fd, &d, "read_done");
    REQUIRE(rd);
    const iw_json *stt = iw_json_get(&d, rd, "status");
    CHECK(stt && !strcmp(stt->str, "ok"));
    iw_json_free(&d);
    snprintf(q, sizeof q, "{\"op\":\"read_mr\",\"stag\":\"0x%08x\",\"offset\":1024,\"len\":512}",
             tstag);
    REQUIRE(agent_rq(fd, q, &d) == 0 && resp_ok(&d));
    uint8_t *got = NULL;
    size_t gl = 0;
    char err[80];
    iw_json_hex(&d, &d.nodes[0], "data_hex", true, 4096, &got, &gl, err, sizeof err);
    CHECK(gl == sizeof mine && got && !memcmp(got, mine, gl));
    free(got);
    iw_json_free(&d);

    /* A Write past the region's end: the target answers with Terminate
     * 1/1/1, places nothing, and its guard octets are intact. */
    iw_send_wr bad = {.op = IW_WR_WRITE,
                      .wr_id = 3,
                      .data = data,
                      .len = 200,
                      .remote_stag = tstag,
                      .remote_to = tto + 4000};
    REQUIRE(iw_qp_post_send(c.qp, &bad) == 0);
    REQUIRE(client_wait(&c, IW_EV_TERM_RECEIVED, &ev));
    CHECK_EQ(ev.term.triple, IW_TERM_DDP_T_BASE_BOUNDS);
    const iw_json *ts = wait_event(fd, &d, "terminate_sent");
    REQUIRE(ts);
    CHECK_EQ(iw_json_get(&d, ts, "layer")->i, 1);
    CHECK_EQ(iw_json_get(&d, ts, "etype")->i, 1);
    CHECK_EQ(iw_json_get(&d, ts, "code")->i, 1);
    iw_json_free(&d);
    snprintf(q, sizeof q, "{\"op\":\"guard\",\"stag\":\"0x%08x\"}", tstag);
    REQUIRE(agent_rq(fd, q, &d) == 0 && resp_ok(&d));
    const iw_json *in = iw_json_get(&d, &d.nodes[0], "intact");
    CHECK(in && in->b);
    iw_json_free(&d);
    snprintf(q, sizeof q, "{\"op\":\"read_mr\",\"stag\":\"0x%08x\",\"offset\":3900,\"len\":196}",
             tstag);
    REQUIRE(agent_rq(fd, q, &d) == 0 && resp_ok(&d));
    const iw_json *tail = iw_json_get(&d, &d.nodes[0], "data_hex");
    bool untouched = tail && tail->len == 392;
    for (size_t i = 0; untouched && i < tail->len; i += 2)
        untouched = tail->str[i] == '0' && tail->str[i + 1] == '7';
    CHECK(untouched);
    iw_json_free(&d);

    iw_dev_close(c.dev);
    cdev = NULL;
    close(fd);
}

static uint32_t target_reg(int fd, uint64_t len, unsigned fill, uint64_t *to) {
    char q[200];
    iw_json_doc d;
    snprintf(q, sizeof q,
             "{\"op\":\"reg_mr\",\"len\":%llu,\"access\":[\"remote_read\"],\"fill\":%u}",
             (unsigned long long)len, fill);
    if (agent_rq(fd, q, &d) != 0 || !resp_ok(&d)) {
        iw_json_free(&d);
        return 0;
    }
    uint32_t stag = (uint32_t)resp_u64(&d, "stag");
    *to = resp_u64(&d, "to");
    iw_json_free(&d);
    return stag;
}

/* Issue 16 item 1: the target deregisters (and frees) a region whose Read
 * Response is still queued behind a large one the peer is slow to take.
 * The engine must never read that memory again (RFC 5042 §6.3.3): the
 * queued response is answered with Terminate 0/1/0 instead, the large one
 * before it arrives intact, and nothing from the freed block or from the
 * region registered in its place reaches the peer. Under ASan a read of
 * the freed block kills the target, which stop_target() then reports. */
IW_TEST(dereg_under_a_queued_read_response) {
    int fd = agent_connect();
    REQUIRE(fd >= 0);
    iw_json_doc d;
    client c = {0};
    REQUIRE(iw_dev_open(&c.dev) == 0);
    cdev = c.dev;
    REQUIRE(iw_pd_alloc(iw_dev_rnic(c.dev), &c.pd) == 0);
    REQUIRE(iw_cq_create(c.dev, 64, &c.cq) == 0);
    REQUIRE(agent_rq(fd, "{\"op\":\"reset\"}", &d) == 0 && resp_ok(&d));
    iw_json_free(&d);
    const uint32_t big = 8u << 20, small = 64u << 10;
    uint64_t big_to, small_to, new_to;
    uint32_t big_st = target_reg(fd, big, 0x61, &big_to);
    uint32_t small_st = target_reg(fd, small, 0x62, &small_to);
    REQUIRE(big_st && small_st);
    REQUIRE(agent_rq(fd, "{\"op\":\"listen\",\"port\":0,\"mpa\":{\"rev\":2,\"crc\":true}}", &d) ==
            0);
    REQUIRE(resp_ok(&d));
    uint16_t port = (uint16_t)resp_u64(&d, "port");
    iw_json_free(&d);

    iw_conn_settings s;
    iw_conn_settings_default(&s, IW_ROLE_INITIATOR);
    REQUIRE(iw_qp_create(c.dev, c.pd, c.cq, &s, &c.qp) == 0);
    REQUIRE(iw_qp_connect(c.qp, "127.0.0.1", port) == 0);
    REQUIRE(client_wait(&c, IW_EV_CONNECTED, NULL));
    REQUIRE(wait_event(fd, &d, "connected"));
    iw_json_free(&d);

    uint8_t *sink1 = calloc(1, big), *sink2 = calloc(1, small);
    REQUIRE(sink1 && sink2);
    uint32_t s1, s2;
    iw_rnic *rn = iw_dev_rnic(c.dev);
    REQUIRE(iw_mr_reg(rn, c.pd, sink1, big, 0, IW_ACCESS_LOCAL_WRITE, &s1) == 0);
    REQUIRE(iw_mr_reg(rn, c.pd, sink2, small, 0, IW_ACCESS_LOCAL_WRITE, &s2) == 0);
    iw_send_wr r1 = {.op = IW_WR_READ,
                     .wr_id = 1,
                     .len = big,
                     .local_stag = s1,
                     .remote_stag = big_st,
                     .remote_to = big_to};
    iw_send_wr r2 = {.op = IW_WR_READ,
                     .wr_id = 2,
                     .len = small,
                     .local_stag = s2,
                     .remote_stag = small_st,
                     .remote_to = small_to};
    /* The client stops reading (post_send writes the Read Requests out
     * itself): the 8 MiB response fills both socket buffers and the 64 KiB
     * one waits behind it in the target. */
    cdev = NULL;
    REQUIRE(iw_qp_post_send(c.qp, &r1) == 0);
    REQUIRE(iw_qp_post_send(c.qp, &r2) == 0);
    REQUIRE(agent_rq(fd, "{\"op\":\"poll\",\"timeout_ms\":200}", &d) == 0);
    iw_json_free(&d);
    char q[200];
    snprintf(q, sizeof q, "{\"op\":\"dereg_mr\",\"stag\":\"0x%08x\"}", small_st);
    REQUIRE(agent_rq(fd, q, &d) == 0);
    CHECK(resp_ok(&d));
    iw_json_free(&d);
    uint32_t new_st = target_reg(fd, small, 0x63, &new_to); /* may reuse the freed block */
    CHECK(new_st != 0);

    cdev = c.dev;
    bool done1 = false, done2 = false, term = false;
    iw_wc wc[8];
    for (int i = 0; i < 2000 && !(done1 && done2 && term); i++) {
        int n = iw_cq_wait(c.cq, wc, 8, 10);
        for (int k = 0; k < n; k++) {
            const iw_event *e = &wc[k].ev;
            if (e->type == IW_EV_READ_DONE && e->wr_id == 1) {
                done1 = true;
                CHECK_EQ(e->status, IW_WC_SUCCESS);
            } else if (e->type == IW_EV_READ_DONE && e->wr_id == 2) {
                done2 = true;
                CHECK(e->status != IW_WC_SUCCESS);
            } else if (e->type == IW_EV_TERM_RECEIVED) {
                term = true;
                CHECK_EQ(e->term.triple, IW_TERM_RDMAP_INVALID_STAG);
                CHECK(e->term.r); /* it names the Read Request (RFC 5040 §7.1 rule 3) */
            }
        }
    }
    CHECK(done1 && done2 && term);
    size_t bad1 = 0, bad2 = 0;
    for (size_t i = 0; i < big; i++)
        bad1 += sink1[i] != 0x61;
    for (size_t i = 0; i < small; i++)
        bad2 += sink2[i] != 0;
    CHECK_EQ(bad1, 0);
    CHECK_EQ(bad2, 0); /* not one octet of a response that must not exist */
    REQUIRE(agent_rq(fd, "{\"op\":\"hello\"}", &d) == 0);
    CHECK(resp_ok(&d));
    iw_json_free(&d);
    iw_dev_close(c.dev);
    cdev = NULL;
    free(sink1);
    free(sink2);
    close(fd);
}

IW_TEST(sessions_one_after_another) {
    /* The previous sessions ended; a new runner is served from scratch, and a
     * second concurrent runner is refused. */
    int fd = agent_connect();
    REQUIRE(fd >= 0);
    int fd2 = agent_connect();
    REQUIRE(fd2 >= 0);
    iw_json_doc d;
    REQUIRE(agent_rq(fd2, "{\"op\":\"hello\"}", &d) == 0);
    CHECK(!resp_ok(&d));
    iw_json_free(&d);
    close(fd2);
    REQUIRE(agent_rq(fd, "{\"op\":\"hello\"}", &d) == 0);
    CHECK(resp_ok(&d));
    iw_json_free(&d);
    close(fd);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: iw_target_test PATH-TO-iwarp-target\n");
        return 2;
    }
    target_bin = argv[1];
    signal(SIGPIPE, SIG_IGN);
    start_target();
    static const iw_test_case cases[] = {
        IW_CASE(malformed_requests_get_errors_and_service_continues),
        IW_CASE(rdma_over_loopback_against_the_target), IW_CASE(dereg_under_a_queued_read_response),
        IW_CASE(sessions_one_after_another)};
    int rc = iw_test_run("target", cases, sizeof cases / sizeof *cases, 1, argv);
    int before = iw_test_failed_checks;
    stop_target();
    return rc ? rc : iw_test_failed_checks != before;
}
