/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Agent protocol client: see iwc_agent.h. */
#include "iwc_agent.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "iwc_util.h"

static int agent_fail(iwc_agent *a, const char *what) {
    snprintf(a->err, sizeof a->err, "%s", what);
    return -1;
}

int iwc_agent_connect(iwc_agent *a, const char *host, uint16_t port, int timeout_ms) {
    memset(a, 0, sizeof *a);
    a->fd = -1;
    char ports[8];
    snprintf(ports, sizeof ports, "%u", port);
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_socktype = SOCK_STREAM;
    int gai = getaddrinfo(host, ports, &hints, &res);
    if (gai) {
        snprintf(a->err, sizeof a->err, "cannot resolve agent host '%s': %s", host,
                 gai_strerror(gai));
        return -1;
    }
    uint64_t deadline = iwc_now_us() + (uint64_t)timeout_ms * 1000;
    int last = 0;
    for (;;) {
        for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
            int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (fd < 0)
                continue;
            if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
                a->fd = fd;
                break;
            }
            last = errno;
            close(fd);
        }
        if (a->fd >= 0 || iwc_now_us() >= deadline)
            break;
        iwc_sleep_ms(50);
    }
    freeaddrinfo(res);
    if (a->fd < 0) {
        snprintf(a->err, sizeof a->err, "cannot connect to the agent at %s:%u: %s", host, port,
                 strerror(last ? last : ETIMEDOUT));
        return -1;
    }
    int one = 1;
    setsockopt(a->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(a->fd, (struct sockaddr *)&ss, &sl) == 0 &&
        getnameinfo((struct sockaddr *)&ss, sl, a->local_addr, sizeof a->local_addr, NULL, 0,
                    NI_NUMERICHOST) != 0)
        a->local_addr[0] = 0;
    return 0;
}

void iwc_agent_close(iwc_agent *a) {
    if (a->fd >= 0)
        close(a->fd);
    a->fd = -1;
    free(a->in);
    a->in = NULL;
    a->in_len = a->in_cap = 0;
}

static int agent_send_all(iwc_agent *a, const char *s, size_t n) {
    while (n) {
        ssize_t w = send(a->fd, s, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return agent_fail(a, "the agent connection failed while sending a request");
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

/* ACK at once: an agent that writes a response in two pieces without
 * TCP_NODELAY (iwarp-target writes the line, then its newline) would
 * otherwise wait for our delayed ACK (~40 ms) on every request. Linux only;
 * elsewhere requests are just slower. */
static void quickack(int fd) {
#ifdef TCP_QUICKACK
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
#else
    (void)fd;
#endif
}

int iwc_agent_call(iwc_agent *a, const char *json, iw_json_doc *doc, int timeout_ms,
                   const iwc_idle *idle) {
    memset(doc, 0, sizeof *doc);
    quickack(a->fd);
    if (a->fd < 0)
        return agent_fail(a, "no agent connection");
    if (agent_send_all(a, json, strlen(json)) < 0 || agent_send_all(a, "\n", 1) < 0)
        return -1;
    uint64_t deadline = iwc_now_us() + (uint64_t)timeout_ms * 1000;
    for (;;) {
        char *nl = a->in_len ? memchr(a->in, '\n', a->in_len) : NULL;
        if (nl) {
            size_t k = (size_t)(nl - a->in);
            size_t keep = k < sizeof a->last - 1 ? k : sizeof a->last - 1;
            memcpy(a->last, a->in, keep);
            a->last[keep] = 0;
            a->last_len = k;
            int rc = iw_json_parse(doc, a->in, k);
            memmove(a->in, nl + 1, a->in_len - k - 1);
            a->in_len -= k + 1;
            if (rc < 0) {
                snprintf(a->err, sizeof a->err, "the agent answered with invalid JSON: %s",
                         doc->err);
                iw_json_free(doc);
                return -1;
            }
            if (rc == 0 && doc->nodes[0].type != IW_JSON_OBJ) {
                iw_json_free(doc);
                return agent_fail(a, "the agent answered with something other than an object");
            }
            return 0;
        }
        uint64_t now = iwc_now_us();
        if (now >= deadline) {
            /* A late answer would pair with the next request: drop the link. */
            snprintf(a->err, sizeof a->err, "the agent did not answer within %d ms", timeout_ms);
            close(a->fd);
            a->fd = -1;
            return -1;
        }
        int wait = (int)((deadline - now) / 1000) + 1;
        if (wait > 20)
            wait = 20;
        struct pollfd p[2] = {{a->fd, POLLIN, 0}, {idle ? idle->fd : -1, POLLIN, 0}};
        int n = poll(p, idle && idle->fd >= 0 ? 2 : 1, wait);
        if (idle && idle->fn)
            idle->fn(idle->ctx);
        if (n <= 0 || !(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        if (a->in_len + 65536 > a->in_cap) {
            if (a->in_cap >= IWC_AGENT_LINE_MAX) {
                /* The rest of that line would pair with the next request. */
                close(a->fd);
                a->fd = -1;
                a->in_len = 0;
                return agent_fail(a, "the agent sent a response line over 64 MiB");
            }
            size_t cap = a->in_cap ? a->in_cap * 2 : 131072;
            char *nb = realloc(a->in, cap);
            if (!nb)
                return agent_fail(a, "out of memory");
            a->in = nb;
            a->in_cap = cap;
        }
        ssize_t r = recv(a->fd, a->in + a->in_len, a->in_cap - a->in_len, 0);
        quickack(a->fd);
        if (r < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (r <= 0) {
            close(a->fd);
            a->fd = -1;
            return agent_fail(a, "the agent closed the control connection");
        }
        a->in_len += (size_t)r;
    }
}

bool iwc_resp_ok(const iw_json_doc *d) {
    const iw_json *ok = iw_json_get(d, &d->nodes[0], "ok");
    return ok && ok->type == IW_JSON_BOOL && ok->b;
}

const char *iwc_resp_error(const iw_json_doc *d) {
    const iw_json *e = iw_json_get(d, &d->nodes[0], "error");
    return e && e->type == IW_JSON_STR ? e->str : "(no error message)";
}

static bool caps_bool(const iw_json_doc *d, const iw_json *o, const char *k) {
    const iw_json *v = o ? iw_json_get(d, o, k) : NULL;
    return v && v->type == IW_JSON_BOOL && v->b;
}

int iwc_agent_hello(iwc_agent *a, int timeout_ms) {
    iw_json_doc d;
    if (iwc_agent_call(a, "{\"op\":\"hello\"}", &d, timeout_ms, NULL) < 0)
        return -1;
    if (!iwc_resp_ok(&d)) {
        snprintf(a->err, sizeof a->err, "hello refused: %s", iwc_resp_error(&d));
        iw_json_free(&d);
        return -1;
    }
    snprintf(a->hello, sizeof a->hello, "%s", a->last);
    const iw_json *root = &d.nodes[0];
    iwc_caps *c = &a->caps;
    memset(c, 0, sizeof *c);
    const iw_json *impl = iw_json_get(&d, root, "impl");
    snprintf(c->impl, sizeof c->impl, "%s", impl && impl->type == IW_JSON_STR ? impl->str : "?");
    const iw_json *ver = iw_json_get(&d, root, "version");
    c->version = ver && ver->type == IW_JSON_NUM && ver->is_int ? (unsigned)ver->i : 0;
    const iw_json *caps = iw_json_get(&d, root, "caps");
    if (caps && caps->type != IW_JSON_OBJ)
        caps = NULL;
    const iw_json *revs = caps ? iw_json_get(&d, caps, "mpa_rev") : NULL;
    for (const iw_json *e = revs ? iw_json_first(&d, revs) : NULL; e; e = iw_json_next(&d, e)) {
        if (e->type == IW_JSON_NUM && e->is_int && e->i == 1)
            c->rev1 = true;
        if (e->type == IW_JSON_NUM && e->is_int && e->i == 2)
            c->rev2 = true;
    }
    c->markers = caps_bool(&d, caps, "markers");
    c->crc = caps_bool(&d, caps, "crc");
    c->atomics = caps_bool(&d, caps, "atomics");
    c->immediate = caps_bool(&d, caps, "immediate");
    c->send_inv = caps_bool(&d, caps, "send_inv");
    c->local_inv =
        !(caps && iw_json_get(&d, caps, "local_inv")) || caps_bool(&d, caps, "local_inv");
    const iw_json *ext = caps ? iw_json_get(&d, caps, "extensions") : NULL;
    for (const iw_json *e = ext ? iw_json_first(&d, ext) : NULL; e; e = iw_json_next(&d, e)) {
        if (e->type != IW_JSON_STR)
            continue;
        if (!strcmp(e->str, "guard"))
            c->guard = true;
        else if (!strcmp(e->str, "reg_mr.pd"))
            c->pd2 = true;
        else if (!strcmp(e->str, "mpa.reject"))
            c->reject = true;
        else if (!strcmp(e->str, "mpa.timeout_ms"))
            c->mpa_timeout = true;
        else if (!strcmp(e->str, "event.terminate"))
            c->term_events = true;
        else if (!strcmp(e->str, "transport.sctp"))
            c->sctp = true;
    }
    iw_json_free(&d);
    if (c->version != 1) {
        snprintf(a->err, sizeof a->err,
                 "the agent speaks protocol version %u; this runner speaks 1", c->version);
        return -1;
    }
    return 0;
}

int iwc_req_begin(iwc_req *r, const char *op) {
    r->buf = NULL;
    r->len = 0;
    r->f = open_memstream(&r->buf, &r->len);
    if (!r->f)
        return -1;
    iw_jw_init(&r->j, r->f);
    iw_jw_obj_begin(&r->j, NULL);
    iw_jw_str(&r->j, "op", op);
    return 0;
}

const char *iwc_req_end(iwc_req *r) {
    iw_jw_obj_end(&r->j);
    fflush(r->f);
    return r->buf ? r->buf : "";
}

void iwc_req_free(iwc_req *r) {
    if (r->f)
        fclose(r->f);
    free(r->buf);
    r->f = NULL;
    r->buf = NULL;
}
