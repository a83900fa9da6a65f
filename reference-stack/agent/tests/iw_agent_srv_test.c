/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The agent server (target/iw_agent_srv.c) in-process, over a socket pair:
 * the event queue's cap and its "dropped" note, the output backlog that
 * stops request handling while the runner does not read, and one answer
 * per request in order behind a poll. The ends of issue 16 that need no
 * RDMA peer and no 10 s wait; the rest is in iw_reliability.py. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "iw_agent_srv.h"
#include "iw_json.h"
#include "iw_test.h"

static size_t answer_len = 16; /* octets of "pad" in each hello answer */
static int handled;

static const char *handler(void *ctx, iw_agent_req *r, const char *line, size_t len, iw_jw *o) {
    (void)ctx;
    (void)line;
    (void)len;
    handled++;
    if (r->op != IW_AGENT_HELLO)
        return "unsupported op";
    char *pad = malloc(answer_len + 1);
    memset(pad, 'x', answer_len);
    pad[answer_len] = 0;
    iw_jw_str(o, "pad", pad);
    free(pad);
    return NULL;
}

typedef struct pair {
    iw_agent_srv s;
    int ep, runner; /* runner: our end */
    char *in;
    size_t in_len, in_cap;
} pair;

/* A server whose runner is the other end of a socket pair (through a real
 * listener would need ports; the server only cares about the fd). */
static bool pair_open(pair *p) {
    memset(p, 0, sizeof *p);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) < 0)
        return false;
    if (iw_agent_srv_init(&p->s, "test", handler, NULL) < 0)
        return false;
    p->ep = epoll_create1(0);
    p->s.ep = p->ep;
    p->s.tag_client = 2;
    p->s.client = sv[0];
    p->runner = sv[1];
    handled = 0;
    return true;
}

static void pair_close(pair *p) {
    iw_agent_srv_free(&p->s);
    close(p->ep);
    close(p->runner);
    free(p->in);
}

/* Serve for a while: epoll events to the server, service calls. */
static void pump(pair *p, int rounds) {
    for (int i = 0; i < rounds; i++) {
        struct epoll_event ev[4];
        int n = epoll_wait(p->ep, ev, 4, 0);
        for (int k = 0; k < n; k++)
            iw_agent_srv_on_client(&p->s, ev[k].events);
        iw_agent_srv_service(&p->s);
    }
}

static void say(pair *p, const char *text) {
    size_t n = strlen(text);
    REQUIRE(send(p->runner, text, n, 0) == (ssize_t)n);
}

/* The runner reads one answer line (pumping the server meanwhile). */
static bool answer(pair *p, iw_json_doc *d) {
    for (int spins = 0; spins < 200000; spins++) {
        char *nl = p->in_len ? memchr(p->in, '\n', p->in_len) : NULL;
        if (nl) {
            size_t k = (size_t)(nl - p->in);
            int rc = iw_json_parse(d, p->in, k);
            memmove(p->in, nl + 1, p->in_len - k - 1);
            p->in_len -= k + 1;
            return rc == 0;
        }
        if (p->in_cap - p->in_len < 65536) {
            p->in_cap = p->in_cap ? p->in_cap * 2 : 1 << 20;
            p->in = realloc(p->in, p->in_cap);
        }
        ssize_t r = recv(p->runner, p->in + p->in_len, p->in_cap - p->in_len, MSG_DONTWAIT);
        if (r > 0)
            p->in_len += (size_t)r;
        else
            pump(p, 1);
    }
    return false;
}

IW_TEST(events_beyond_the_cap_are_counted_and_reported) {
    pair p;
    REQUIRE(pair_open(&p));
    /* 40 MiB of events, 1 MiB each: 31 fit under 32 MiB with their cost. */
    size_t one = 1u << 20;
    char *ev = malloc(one + 64);
    int n = snprintf(ev, 64, "{\"type\":\"x\",\"pad\":\"");
    memset(ev + n, 'y', one - (size_t)n - 2);
    strcpy(ev + one - 2, "\"}");
    for (int i = 0; i < 40; i++)
        iw_agent_srv_event_push(&p.s, ev);
    free(ev);
    CHECK(p.s.event_bytes <= IW_AGENT_SRV_EVENTS_MAX);
    CHECK_EQ(p.s.n_events + p.s.events_dropped, 40);
    CHECK(p.s.events_dropped >= 8);
    size_t kept = p.s.n_events;
    say(&p, "{\"op\":\"poll\",\"timeout_ms\":0}\n");
    iw_json_doc d;
    REQUIRE(answer(&p, &d));
    const iw_json *evs = iw_json_get(&d, &d.nodes[0], "events");
    size_t count = 0;
    const iw_json *last = NULL;
    for (const iw_json *e = iw_json_first(&d, evs); e; e = iw_json_next(&d, e), count++)
        last = e;
    CHECK_EQ(count, kept + 1);
    const char *what = NULL;
    char err[80];
    REQUIRE(last);
    iw_json_str(&d, last, "what", true, &what, err, sizeof err);
    REQUIRE(what);
    char want[64];
    snprintf(want, sizeof want, "event queue full: %zu later event(s) dropped", 40 - kept);
    CHECK(strstr(what, want) == what);
    iw_json_free(&d);
    /* The queue is empty again and new events are kept. */
    CHECK_EQ(p.s.n_events + p.s.events_dropped + p.s.event_bytes, 0);
    iw_agent_srv_event_push(&p.s, "{\"type\":\"z\"}");
    CHECK_EQ(p.s.n_events, 1);
    pair_close(&p);
}

IW_TEST(a_runner_that_does_not_read_stops_being_served) {
    pair p;
    REQUIRE(pair_open(&p));
    answer_len = 64 << 10; /* 64 KiB answers */
    /* 400 requests pipelined (25 MiB of answers), none read. */
    char *many = malloc(400 * 16 + 1);
    many[0] = 0;
    for (int i = 0; i < 400; i++)
        strcat(many, "{\"op\":\"hello\"}\n");
    REQUIRE(send(p.runner, many, strlen(many), 0) == (ssize_t)strlen(many));
    free(many);
    pump(&p, 2000);
    /* It stopped: the backlog is about the soft limit, not 25 MiB. */
    CHECK(handled < 400);
    CHECK(iw_agent_srv_out_pending(&p.s) < IW_AGENT_SRV_OUT_SOFT + answer_len + 64);
    CHECK(iw_agent_srv_out_pending(&p.s) >= IW_AGENT_SRV_OUT_SOFT);
    int before = handled;
    pump(&p, 2000);
    CHECK_EQ(handled, before);
    /* Reading resumes it, answers in order and whole. */
    int got = 0;
    iw_json_doc d;
    while (got < 400 && answer(&p, &d)) {
        const iw_json *pad = iw_json_get(&d, &d.nodes[0], "pad");
        CHECK(pad && pad->len == answer_len);
        iw_json_free(&d);
        got++;
    }
    CHECK_EQ(got, 400);
    CHECK_EQ(handled, 400);
    answer_len = 16;
    pair_close(&p);
}

IW_TEST(answers_stay_in_order_behind_a_poll) {
    pair p;
    REQUIRE(pair_open(&p));
    say(&p, "{\"op\":\"poll\",\"timeout_ms\":200}\n{\"op\":\"hello\"}\n{\"op\":\"fly\"}\n"
            "{\"op\":\"poll\",\"timeout_ms\":0}\n{\"op\":\"poll\",\"timeout_ms\":0}\n"
            "{\"op\":\"hello\"}\n");
    pump(&p, 10);
    CHECK_EQ(handled, 0); /* held behind the first poll */
    static const char *want[] = {"events", "pad", "error", "events", "events", "pad"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        iw_json_doc d;
        REQUIRE(answer(&p, &d));
        CHECK(iw_json_get(&d, &d.nodes[0], want[i]) != NULL);
        iw_json_free(&d);
    }
    pump(&p, 10);
    char x;
    CHECK(recv(p.runner, &x, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN); /* nothing more */
    pair_close(&p);
}

IW_TEST_MAIN("agent_srv", IW_CASE(events_beyond_the_cap_are_counted_and_reported),
             IW_CASE(a_runner_that_does_not_read_stops_being_served),
             IW_CASE(answers_stay_in_order_behind_a_poll))
