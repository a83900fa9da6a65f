/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwarp-agent as a program: it starts, serves the agent protocol over its
 * socket, answers malformed requests with ok:false and keeps serving,
 * keeps responses in order behind a poll, turns a second runner away,
 * serves sessions one after another and exits 0 on SIGTERM. With zero RDMA
 * devices (this machine), hello says so and every device op answers
 * "no RDMA device"; with a device those checks are replaced by local
 * region ops. argv[1] is the iwarp-agent binary. No mock anywhere. */
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

#include "iw_json.h"
#include "iw_test.h"

static const char *agent_bin;
static pid_t agent_pid;
static uint16_t agent_port;
static bool has_device;

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A port nobody listens on right now. */
static uint16_t free_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t l = sizeof a;
    uint16_t p = 0;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &l) == 0)
        p = ntohs(a.sin_port);
    close(fd);
    return p;
}

static int agent_connect(void) {
    for (int i = 0; i < 200; i++) {
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

static pid_t spawn(char *const *argv, int *out_fd) {
    int p[2] = {-1, -1};
    if (out_fd && pipe(p) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        if (out_fd) {
            dup2(p[1], 1);
            close(p[0]);
            close(p[1]);
        }
        execv(agent_bin, argv);
        _exit(127);
    }
    if (out_fd) {
        close(p[1]);
        *out_fd = p[0];
    }
    return pid;
}

static void start_agent(void) {
    agent_port = free_port();
    char arg[64];
    snprintf(arg, sizeof arg, "127.0.0.1:%u", agent_port);
    char *argv[] = {(char *)agent_bin, (char *)"--agent", arg, NULL};
    agent_pid = spawn(argv, NULL);
}

static int wait_exit(pid_t pid, int timeout_ms) {
    for (int i = 0; i < timeout_ms / 10; i++) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        usleep(10000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

/* Responses arrive as lines; keep what is left over per connection. */
typedef struct conn {
    int fd;
    char buf[1 << 16];
    size_t len;
} conn;

static int read_line(conn *c, iw_json_doc *out, int timeout_ms) {
    uint64_t end = now_ms() + (uint64_t)timeout_ms;
    for (;;) {
        char *nl = memchr(c->buf, '\n', c->len);
        if (nl) {
            size_t k = (size_t)(nl - c->buf);
            int rc = iw_json_parse(out, c->buf, k);
            memmove(c->buf, nl + 1, c->len - k - 1);
            c->len -= k + 1;
            return rc;
        }
        uint64_t now = now_ms();
        if (now >= end || c->len == sizeof c->buf)
            return -1;
        struct pollfd p = {c->fd, POLLIN, 0};
        if (poll(&p, 1, (int)(end - now)) > 0) {
            ssize_t r = recv(c->fd, c->buf + c->len, sizeof c->buf - c->len, 0);
            if (r <= 0)
                return -1;
            c->len += (size_t)r;
        }
    }
}

static int send_all(int fd, const char *s, size_t n) {
    while (n) {
        ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
        if (w <= 0)
            return -1;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

static int rq(conn *c, const char *json, iw_json_doc *out) {
    char line[4096];
    int n = snprintf(line, sizeof line, "%s\n", json);
    if (send_all(c->fd, line, (size_t)n) < 0)
        return -1;
    return read_line(c, out, 5000);
}

static bool resp_ok(const iw_json_doc *d) {
    const iw_json *ok = iw_json_get(d, &d->nodes[0], "ok");
    return ok && ok->type == IW_JSON_BOOL && ok->b;
}

static const char *resp_str(const iw_json_doc *d, const char *k) {
    const iw_json *v = iw_json_get(d, &d->nodes[0], k);
    return v && v->type == IW_JSON_STR ? v->str : "";
}

static bool conn_open(conn *c) {
    c->len = 0;
    c->fd = agent_connect();
    return c->fd >= 0;
}

IW_TEST(hello_identifies_the_agent_and_its_device) {
    conn c;
    REQUIRE(conn_open(&c));
    iw_json_doc d;
    REQUIRE(rq(&c, "{\"op\":\"hello\"}", &d) == 0);
    CHECK(resp_ok(&d));
    CHECK(strstr(resp_str(&d, "impl"), "iwarp-agent") != NULL);
    const iw_json *v = iw_json_get(&d, &d.nodes[0], "version");
    CHECK(v && v->type == IW_JSON_NUM && v->i == 1);
    const iw_json *caps = iw_json_get(&d, &d.nodes[0], "caps");
    REQUIRE(caps && caps->type == IW_JSON_OBJ);
    const iw_json *revs = iw_json_get(&d, caps, "mpa_rev");
    CHECK(revs && revs->type == IW_JSON_ARR);
    static const char *const bools[] = {"markers", "crc", "atomics", "immediate", "send_inv"};
    for (size_t i = 0; i < 5; i++) {
        const iw_json *b = iw_json_get(&d, caps, bools[i]);
        CHECK(b && b->type == IW_JSON_BOOL);
    }
    const iw_json *imm = iw_json_get(&d, caps, "immediate");
    CHECK(imm && !imm->b); /* no verbs mapping, never claimed */
    bool guard = false;
    const iw_json *ext = iw_json_get(&d, caps, "extensions");
    for (const iw_json *e = iw_json_first(&d, ext); e; e = iw_json_next(&d, e))
        if (e->type == IW_JSON_STR && !strcmp(e->str, "guard"))
            guard = true;
    CHECK(guard);
    const iw_json *dev = iw_json_get(&d, caps, "device");
    REQUIRE(dev != NULL);
    CHECK(dev->type == IW_JSON_NULL || dev->type == IW_JSON_OBJ);
    has_device = dev->type == IW_JSON_OBJ;
    if (!has_device) {
        /* No device: no capability is claimed. */
        CHECK(iw_json_first(&d, revs) == NULL);
        static const char *const off[] = {"markers", "crc", "atomics", "send_inv"};
        for (size_t i = 0; i < 4; i++) {
            const iw_json *b = iw_json_get(&d, caps, off[i]);
            CHECK(b && !b->b);
        }
    }
    fprintf(stderr, "  (agent reports %s)\n", has_device ? "an RDMA device" : "no RDMA device");
    iw_json_free(&d);
    close(c.fd);
}

IW_TEST(device_ops_without_a_device_fail_cleanly) {
    if (has_device)
        return; /* covered by local_region_ops_with_a_device */
    conn c;
    REQUIRE(conn_open(&c));
    static const char *const ops[] = {
        "{\"op\":\"listen\",\"port\":0}",
        "{\"op\":\"listen\",\"port\":0,\"mpa\":{\"rev\":2,\"markers\":true,\"ird\":4}}",
        "{\"op\":\"connect\",\"host\":\"127.0.0.1\",\"port\":1}",
        "{\"op\":\"reg_mr\",\"len\":64,\"access\":[\"remote_write\"]}",
        "{\"op\":\"dereg_mr\",\"stag\":\"0x100\"}",
        "{\"op\":\"invalidate\",\"stag\":\"0x100\"}",
        "{\"op\":\"read_mr\",\"stag\":\"0x100\",\"offset\":0,\"len\":4}",
        "{\"op\":\"write_mr\",\"stag\":\"0x100\",\"offset\":0,\"data_hex\":\"00\"}",
        "{\"op\":\"guard\",\"stag\":\"0x100\"}",
        "{\"op\":\"post_recv\",\"len\":64,\"count\":2}",
        "{\"op\":\"post_send\",\"kind\":\"send\",\"data_hex\":\"0102\"}",
        "{\"op\":\"post_send\",\"kind\":\"fetch_add\",\"remote_stag\":1,\"remote_to\":0,\"add\":1}",
        "{\"op\":\"post_send\",\"kind\":\"immediate\",\"data_hex\":\"0102030405060708\"}",
        "{\"op\":\"close\"}"};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        iw_json_doc d;
        REQUIRE(rq(&c, ops[i], &d) == 0);
        CHECK(!resp_ok(&d));
        if (strncmp(resp_str(&d, "error"), "no RDMA device", 14) != 0)
            fprintf(stderr, "  %s -> %s\n", ops[i], resp_str(&d, "error"));
        CHECK(!strncmp(resp_str(&d, "error"), "no RDMA device", 14));
        iw_json_free(&d);
    }
    /* reset and poll work without a device. */
    iw_json_doc d;
    REQUIRE(rq(&c, "{\"op\":\"reset\"}", &d) == 0);
    CHECK(resp_ok(&d));
    iw_json_free(&d);
    uint64_t t0 = now_ms();
    REQUIRE(rq(&c, "{\"op\":\"poll\",\"timeout_ms\":80}", &d) == 0);
    CHECK(now_ms() - t0 >= 70);
    CHECK(resp_ok(&d));
    const iw_json *evs = iw_json_get(&d, &d.nodes[0], "events");
    CHECK(evs && evs->type == IW_JSON_ARR && iw_json_first(&d, evs) == NULL);
    iw_json_free(&d);
    close(c.fd);
}

IW_TEST(local_region_ops_with_a_device) {
    if (!has_device)
        return; /* needs ibv_reg_mr */
    conn c;
    REQUIRE(conn_open(&c));
    iw_json_doc d;
    REQUIRE(rq(&c, "{\"op\":\"reg_mr\",\"len\":16,\"access\":[\"remote_read\"],\"fill\":7}", &d) ==
            0);
    REQUIRE(resp_ok(&d));
    char stag[32];
    snprintf(stag, sizeof stag, "%s", resp_str(&d, "stag"));
    iw_json_free(&d);
    char line[256];
    snprintf(line, sizeof line,
             "{\"op\":\"write_mr\",\"stag\":\"%s\",\"offset\":2,\"data_hex\":\"aabb\"}", stag);
    REQUIRE(rq(&c, line, &d) == 0);
    CHECK(resp_ok(&d));
    iw_json_free(&d);
    snprintf(line, sizeof line, "{\"op\":\"read_mr\",\"stag\":\"%s\",\"offset\":0,\"len\":5}",
             stag);
    REQUIRE(rq(&c, line, &d) == 0);
    CHECK(!strcmp(resp_str(&d, "data_hex"), "0707aabb07"));
    iw_json_free(&d);
    snprintf(line, sizeof line, "{\"op\":\"guard\",\"stag\":\"%s\"}", stag);
    REQUIRE(rq(&c, line, &d) == 0);
    const iw_json *in = iw_json_get(&d, &d.nodes[0], "intact");
    CHECK(in && in->type == IW_JSON_BOOL && in->b);
    iw_json_free(&d);
    snprintf(line, sizeof line, "{\"op\":\"read_mr\",\"stag\":\"%s\",\"offset\":10,\"len\":7}",
             stag);
    REQUIRE(rq(&c, line, &d) == 0);
    CHECK(!resp_ok(&d));
    iw_json_free(&d);
    snprintf(line, sizeof line, "{\"op\":\"dereg_mr\",\"stag\":\"%s\"}", stag);
    REQUIRE(rq(&c, line, &d) == 0);
    CHECK(resp_ok(&d));
    iw_json_free(&d);
    REQUIRE(rq(&c, line, &d) == 0);
    CHECK(!resp_ok(&d)); /* already gone */
    iw_json_free(&d);
    REQUIRE(rq(&c, "{\"op\":\"post_send\",\"kind\":\"send\",\"data_hex\":\"01\"}", &d) == 0);
    CHECK(!resp_ok(&d)); /* no connection */
    iw_json_free(&d);
    close(c.fd);
}

IW_TEST(malformed_requests_get_errors_and_service_continues) {
    conn c;
    REQUIRE(conn_open(&c));
    iw_json_doc d;
    static const char *const bad[] = {
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
        "{\"op\":\"post_send\",\"kind\":\"immediate\",\"data_hex\":\"01\"}",
        "{\"op\":\"connect\",\"host\":\"nowhere\",\"port\":1}",
        "{\"op\":\"connect\",\"port\":1}",
        "{\"op\":\"listen\",\"mpa\":7}",
        "{\"op\":\"listen\",\"mpa\":{\"rev\":9}}",
        "{\"op\":\"listen\",\"mpa\":{\"rtr\":\"fax\"}}",
        "{\"op\":\"listen\",\"mpa\":{\"ird\":99999}}",
        "{\"op\":\"dereg_mr\",\"stag\":12345}",
        "\"\\uZZZZ\"",
        "{\"a\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
        "{\"op\":\"poll\",\"timeout_ms\":-5}",
        "{\"op\":\"post_recv\",\"len\":8}",
        "null",
        "{\"op\":\"hello\",\"op\":\"fly\"}x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        REQUIRE(rq(&c, bad[i], &d) == 0);
        CHECK(!resp_ok(&d));
        const iw_json *e = iw_json_get(&d, &d.nodes[0], "error");
        CHECK(e && e->type == IW_JSON_STR && e->len > 0);
        iw_json_free(&d);
    }
    /* An unknown op is named in the error. */
    REQUIRE(rq(&c, "{\"op\":\"teleport\"}", &d) == 0);
    CHECK(strstr(resp_str(&d, "error"), "teleport") != NULL);
    iw_json_free(&d);
    /* Binary junk: refused, still serving. */
    char junk[300];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (char)(i * 37 + 1) == '\n' ? 'x' : (char)(i * 37 + 1);
    junk[sizeof junk - 1] = '\n';
    REQUIRE(send_all(c.fd, junk, sizeof junk) == 0);
    REQUIRE(read_line(&c, &d, 5000) == 0);
    CHECK(!resp_ok(&d));
    iw_json_free(&d);
    /* A line over 4 MiB: one error, then still serving. */
    size_t big = (4u << 20) + 4096;
    char *huge = malloc(big + 1);
    REQUIRE(huge != NULL);
    memset(huge, ' ', big);
    memcpy(huge, "{\"op\":\"hello\",\"pad\":\"", 21);
    huge[big] = '\n';
    CHECK(send_all(c.fd, huge, big + 1) == 0);
    free(huge);
    REQUIRE(read_line(&c, &d, 10000) == 0);
    CHECK(!resp_ok(&d));
    CHECK(strstr(resp_str(&d, "error"), "too long") != NULL);
    iw_json_free(&d);
    /* Empty lines get no response; the next request does. */
    REQUIRE(send_all(c.fd, "\n\n", 2) == 0);
    REQUIRE(rq(&c, "{\"op\":\"hello\"}", &d) == 0);
    CHECK(resp_ok(&d));
    CHECK(strstr(resp_str(&d, "impl"), "iwarp-agent") != NULL);
    iw_json_free(&d);
    close(c.fd);
}

IW_TEST(responses_stay_in_order_behind_a_poll) {
    conn c;
    REQUIRE(conn_open(&c));
    /* Three requests in one segment: the hello must wait for the poll. */
    const char *three = "{\"op\":\"poll\",\"timeout_ms\":150}\n{\"op\":\"hello\"}\n"
                        "{\"op\":\"fly\"}\n";
    uint64_t t0 = now_ms();
    REQUIRE(send_all(c.fd, three, strlen(three)) == 0);
    iw_json_doc d;
    REQUIRE(read_line(&c, &d, 5000) == 0);
    CHECK(resp_ok(&d));
    CHECK(iw_json_get(&d, &d.nodes[0], "events") != NULL);
    CHECK(now_ms() - t0 >= 140);
    iw_json_free(&d);
    REQUIRE(read_line(&c, &d, 5000) == 0);
    CHECK(resp_ok(&d));
    CHECK(iw_json_get(&d, &d.nodes[0], "impl") != NULL);
    iw_json_free(&d);
    REQUIRE(read_line(&c, &d, 5000) == 0);
    CHECK(!resp_ok(&d));
    iw_json_free(&d);
    /* A request split across segments. */
    REQUIRE(send_all(c.fd, "{\"op\":\"he", 9) == 0);
    usleep(50000);
    REQUIRE(send_all(c.fd, "llo\"}\n", 6) == 0);
    REQUIRE(read_line(&c, &d, 5000) == 0);
    CHECK(resp_ok(&d));
    iw_json_free(&d);
    close(c.fd);
}

IW_TEST(one_runner_at_a_time_and_sessions_in_turn) {
    conn a;
    REQUIRE(conn_open(&a));
    iw_json_doc d;
    REQUIRE(rq(&a, "{\"op\":\"hello\"}", &d) == 0);
    iw_json_free(&d);
    /* A second runner gets one error line and is disconnected. */
    conn b;
    REQUIRE(conn_open(&b));
    REQUIRE(read_line(&b, &d, 5000) == 0);
    CHECK(!resp_ok(&d));
    CHECK(strstr(resp_str(&d, "error"), "another runner") != NULL);
    iw_json_free(&d);
    char x;
    CHECK(recv(b.fd, &x, 1, 0) == 0);
    close(b.fd);
    /* The first is still served; a poll left pending when it leaves does
     * not hurt the next session. */
    REQUIRE(rq(&a, "{\"op\":\"reset\"}", &d) == 0);
    CHECK(resp_ok(&d));
    iw_json_free(&d);
    REQUIRE(send_all(a.fd, "{\"op\":\"poll\",\"timeout_ms\":3000}\n", 32) == 0);
    usleep(50000);
    close(a.fd);
    for (int s = 0; s < 3; s++) {
        conn c;
        REQUIRE(conn_open(&c));
        int rc = rq(&c, "{\"op\":\"hello\"}", &d);
        if (rc == 0 && !resp_ok(&d)) { /* the last session is still being torn down */
            iw_json_free(&d);
            close(c.fd);
            usleep(100000);
            REQUIRE(conn_open(&c));
            rc = rq(&c, "{\"op\":\"hello\"}", &d);
        }
        REQUIRE(rc == 0);
        CHECK(resp_ok(&d));
        iw_json_free(&d);
        close(c.fd);
        usleep(20000);
    }
}

IW_TEST(half_close_still_gets_every_answer) {
    conn c;
    REQUIRE(conn_open(&c));
    const char *three = "{\"op\":\"hello\"}\n{\"op\":\"poll\",\"timeout_ms\":5000}\n"
                        "{\"op\":\"fly\"}\n";
    REQUIRE(send_all(c.fd, three, strlen(three)) == 0);
    shutdown(c.fd, SHUT_WR);
    uint64_t t0 = now_ms();
    iw_json_doc d;
    REQUIRE(read_line(&c, &d, 5000) == 0);
    CHECK(resp_ok(&d) && iw_json_get(&d, &d.nodes[0], "impl"));
    iw_json_free(&d);
    REQUIRE(read_line(&c, &d, 5000) == 0);
    CHECK(resp_ok(&d) && iw_json_get(&d, &d.nodes[0], "events"));
    iw_json_free(&d);
    REQUIRE(read_line(&c, &d, 5000) == 0);
    CHECK(!resp_ok(&d));
    iw_json_free(&d);
    CHECK(now_ms() - t0 < 2000); /* the poll did not wait for its timeout */
    char x;
    CHECK(recv(c.fd, &x, 1, 0) == 0); /* then the session ends */
    close(c.fd);
}

IW_TEST(command_line) {
    int out = -1;
    char *help[] = {(char *)agent_bin, (char *)"--help", NULL};
    pid_t p = spawn(help, &out);
    char buf[4096];
    ssize_t n = read(out, buf, sizeof buf - 1);
    close(out);
    CHECK_EQ(wait_exit(p, 5000), 0);
    buf[n > 0 ? n : 0] = 0;
    CHECK(strstr(buf, "--agent HOST:PORT") != NULL);
    CHECK(strstr(buf, "--dev NAME") != NULL);
    char *ver[] = {(char *)agent_bin, (char *)"--version", NULL};
    p = spawn(ver, &out);
    n = read(out, buf, sizeof buf - 1);
    close(out);
    CHECK_EQ(wait_exit(p, 5000), 0);
    buf[n > 0 ? n : 0] = 0;
    CHECK(strstr(buf, "iwarp-agent") != NULL);
    char *bad1[] = {(char *)agent_bin, (char *)"--teleport", NULL};
    p = spawn(bad1, NULL);
    CHECK_EQ(wait_exit(p, 5000), 2);
    char *bad2[] = {(char *)agent_bin, (char *)"--agent", (char *)"localhost", NULL};
    p = spawn(bad2, NULL);
    CHECK_EQ(wait_exit(p, 5000), 2);
    char *bad3[] = {(char *)agent_bin, (char *)"--agent", (char *)"example.org:7400", NULL};
    p = spawn(bad3, NULL);
    CHECK_EQ(wait_exit(p, 5000), 2);
    /* A port in use: exit 1, with a message. */
    char arg[64];
    snprintf(arg, sizeof arg, "127.0.0.1:%u", agent_port);
    char *busy[] = {(char *)agent_bin, (char *)"--agent", arg, NULL};
    p = spawn(busy, NULL);
    CHECK_EQ(wait_exit(p, 5000), 1);
}

IW_TEST(once_exits_after_the_session) {
    uint16_t port = free_port();
    char arg[64];
    snprintf(arg, sizeof arg, "127.0.0.1:%u", port);
    char *argv[] = {(char *)agent_bin, (char *)"--agent", arg, (char *)"--once", NULL};
    pid_t p = spawn(argv, NULL);
    uint16_t keep = agent_port;
    agent_port = port;
    conn c;
    bool up = conn_open(&c);
    agent_port = keep;
    REQUIRE(up);
    iw_json_doc d;
    REQUIRE(rq(&c, "{\"op\":\"hello\"}", &d) == 0);
    iw_json_free(&d);
    close(c.fd);
    CHECK_EQ(wait_exit(p, 5000), 0);
}

IW_TEST(sigterm_exits_cleanly) {
    conn c;
    REQUIRE(conn_open(&c)); /* with a runner connected */
    kill(agent_pid, SIGTERM);
    CHECK_EQ(wait_exit(agent_pid, 10000), 0);
    close(c.fd);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: va_agent_test PATH/iwarp-agent\n");
        return 2;
    }
    agent_bin = argv[1];
    signal(SIGPIPE, SIG_IGN);
    start_agent();
    static const iw_test_case cases[] = {
        IW_CASE(hello_identifies_the_agent_and_its_device),
        IW_CASE(device_ops_without_a_device_fail_cleanly),
        IW_CASE(local_region_ops_with_a_device),
        IW_CASE(malformed_requests_get_errors_and_service_continues),
        IW_CASE(responses_stay_in_order_behind_a_poll),
        IW_CASE(one_runner_at_a_time_and_sessions_in_turn),
        IW_CASE(half_close_still_gets_every_answer),
        IW_CASE(command_line),
        IW_CASE(once_exits_after_the_session),
        IW_CASE(sigterm_exits_cleanly),
    };
    int rc = iw_test_run("va_agent", cases, sizeof cases / sizeof *cases, 1, argv);
    if (waitpid(agent_pid, NULL, WNOHANG) == 0) {
        kill(agent_pid, SIGKILL);
        waitpid(agent_pid, NULL, 0);
    }
    return rc;
}
