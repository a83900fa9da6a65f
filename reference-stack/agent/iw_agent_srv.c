/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The server side shared by iwarp-target and iwarp-agent (iw_agent_srv.h). */
#define _GNU_SOURCE /* accept4 */
#include "iw_agent_srv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ---- JSON text in memory ---- */

bool iw_jbuf_open(iw_jbuf *b) {
    b->buf = NULL;
    b->len = 0;
    b->f = open_memstream(&b->buf, &b->len);
    if (!b->f)
        return false;
    iw_jw_init(&b->j, b->f);
    return true;
}

const char *iw_jbuf_text(iw_jbuf *b) {
    fflush(b->f);
    return b->buf ? b->buf : "";
}

void iw_jbuf_free(iw_jbuf *b) {
    fclose(b->f);
    free(b->buf);
}

/* ---- guarded regions ---- */

uint8_t *iw_agent_guard_alloc(uint64_t len, int fill) {
    uint8_t *mem = malloc(len + 2 * IW_AGENT_GUARD_LEN);
    if (!mem)
        return NULL;
    memset(mem, IW_AGENT_GUARD_BYTE, len + 2 * IW_AGENT_GUARD_LEN);
    memset(mem + IW_AGENT_GUARD_LEN, fill < 0 ? 0 : fill, len);
    return mem;
}

bool iw_agent_guard_intact(const uint8_t *mem, uint64_t len) {
    const uint8_t *buf = mem + IW_AGENT_GUARD_LEN;
    bool intact = true;
    for (size_t i = 0; i < IW_AGENT_GUARD_LEN; i++)
        if (mem[i] != IW_AGENT_GUARD_BYTE || buf[len + i] != IW_AGENT_GUARD_BYTE)
            intact = false;
    return intact;
}

const char *iw_agent_region_io(const iw_agent_req *r, uint8_t *mem, uint64_t len, iw_jw *o) {
    uint8_t *buf = mem + IW_AGENT_GUARD_LEN;
    switch (r->op) {
    case IW_AGENT_READ_MR:
        if (r->offset > len || r->len > len - r->offset)
            return "offset/len outside the region";
        iw_jw_hexbytes(o, "data_hex", buf + r->offset, r->len);
        return NULL;
    case IW_AGENT_WRITE_MR:
        if (r->offset > len || r->data_len > len - r->offset)
            return "offset/len outside the region";
        memcpy(buf + r->offset, r->data, r->data_len);
        return NULL;
    case IW_AGENT_GUARD:
        iw_jw_bool(o, "intact", iw_agent_guard_intact(mem, len));
        return NULL;
    default:
        return "internal error";
    }
}

/* ---- hello ---- */

void iw_agent_hello_begin(iw_jw *o, const char *impl) {
    iw_jw_str(o, "impl", impl);
    iw_jw_uint(o, "version", IW_AGENT_VERSION);
    iw_jw_obj_begin(o, "caps");
}

void iw_agent_hello_extensions_begin(iw_jw *o) {
    iw_jw_arr_begin(o, "extensions");
    iw_jw_str(o, NULL, "guard");
    iw_jw_str(o, NULL, "reg_mr.pd");
    iw_jw_str(o, NULL, "mpa.reject");
}

uint64_t iw_agent_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- sockets ---- */

int iw_agent_sockaddr(const char *host, uint16_t port, struct sockaddr_storage *ss) {
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons(port);
        return 0;
    }
    if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons(port);
        return 0;
    }
    return -1;
}

int iw_agent_listen_fd(const char *host, uint16_t port) {
    struct sockaddr_storage ss;
    if (iw_agent_sockaddr(host, port, &ss) < 0)
        return -2;
    socklen_t sl =
        ss.ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, 4) < 0) {
        int err = errno;
        if (fd >= 0)
            close(fd);
        errno = err;
        return -1;
    }
    return fd;
}

/* ---- the server ---- */

/* Largest backlog of responses: the soft limit plus one poll response
 * with a full event queue (or one read_mr) and room for its framing.
 * Never reached while the limits above hold; a guard, not a policy. */
#define SRV_OUT_MAX (IW_AGENT_SRV_OUT_SOFT + IW_AGENT_SRV_EVENTS_MAX + (8u << 20))
/* A drained output buffer larger than this is given back. */
#define SRV_OUT_KEEP (64u << 10)
/* What an event costs beyond its text (pointer, allocation). */
#define SRV_EVENT_OVERHEAD 32

int iw_agent_srv_init(iw_agent_srv *s, const char *name, iw_agent_srv_fn fn, void *ctx) {
    memset(s, 0, sizeof *s);
    s->lfd = -1;
    s->client = -1;
    s->ep = -1;
    s->name = name;
    s->handler = fn;
    s->ctx = ctx;
    s->in = malloc(IW_AGENT_SRV_IN_CAP);
    return s->in ? 0 : -1;
}

void iw_agent_srv_free(iw_agent_srv *s) {
    iw_agent_srv_drop_client(s);
    if (s->lfd >= 0) {
        if (s->ep >= 0)
            epoll_ctl(s->ep, EPOLL_CTL_DEL, s->lfd, NULL);
        close(s->lfd);
    }
    s->lfd = -1;
    iw_agent_srv_events_clear(s);
    free(s->events);
    s->events = NULL;
    s->cap_events = 0;
    free(s->in);
    s->in = NULL;
    free(s->out);
    s->out = NULL;
    s->out_cap = 0;
}

int iw_agent_srv_use_epoll(iw_agent_srv *s, int ep, uint32_t tag_listen, uint32_t tag_client) {
    s->ep = ep;
    s->tag_listen = tag_listen;
    s->tag_client = tag_client;
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = tag_listen};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, s->lfd, &ev) < 0)
        return -1;
    s->listen_armed = true;
    return 0;
}

size_t iw_agent_srv_out_pending(const iw_agent_srv *s) { return s->out_len - s->out_off; }

static bool want_input(const iw_agent_srv *s) {
    /* Behind a pending poll nothing is read: responses stay in order and
     * the runner's own socket buffers hold what it sent meanwhile. */
    return s->client >= 0 && !s->failed && !s->in_eof && s->in_len < IW_AGENT_SRV_IN_CAP &&
           !s->poll_pending && iw_agent_srv_out_pending(s) < IW_AGENT_SRV_OUT_SOFT;
}

static uint32_t client_interest(const iw_agent_srv *s) {
    uint32_t ev = 0;
    if (want_input(s))
        ev |= EPOLLIN;
    if (iw_agent_srv_out_pending(s))
        ev |= EPOLLOUT;
    if (!s->rdhup && !s->in_eof)
        ev |= EPOLLRDHUP; /* a FIN makes a pending poll due at once */
    return ev;
}

/* Bring ep's interest in the listener and the runner up to date. */
static void srv_arm(iw_agent_srv *s) {
    if (s->ep < 0)
        return;
    if (s->lfd >= 0) {
        bool want = !s->accept_retry_ms || iw_agent_now_ms() >= s->accept_retry_ms;
        if (want != s->listen_armed) {
            struct epoll_event ev = {.events = want ? EPOLLIN : 0, .data.u32 = s->tag_listen};
            if (epoll_ctl(s->ep, EPOLL_CTL_MOD, s->lfd, &ev) == 0)
                s->listen_armed = want;
        }
        if (want)
            s->accept_retry_ms = 0;
    }
    if (s->client < 0)
        return;
    uint32_t want = client_interest(s);
    if (s->client_in_ep && want == s->client_armed)
        return;
    struct epoll_event ev = {.events = want, .data.u32 = s->tag_client};
    if (epoll_ctl(s->ep, s->client_in_ep ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, s->client, &ev) == 0) {
        s->client_in_ep = true;
        s->client_armed = want;
    } else {
        s->failed = true; /* cannot watch it: end the session */
    }
}

int iw_agent_srv_accept(iw_agent_srv *s) {
    int cfd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (cfd < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
            /* The connection stays in the backlog; level-triggered epoll
             * would report the listener again at once, so rest a while. */
            if (!s->accept_retry_ms)
                fprintf(stderr, "%s: cannot accept a runner: %s (retrying)\n", s->name,
                        strerror(errno));
            s->accept_retry_ms = iw_agent_now_ms() + IW_AGENT_SRV_ACCEPT_BACKOFF_MS;
            srv_arm(s);
        }
        return -1;
    }
    if (s->client >= 0) {
        static const char busy[] = "{\"ok\":false,\"error\":\"another runner is connected\"}\n";
        (void)!send(cfd, busy, sizeof busy - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        close(cfd);
        return -1;
    }
    s->client = cfd;
    s->in_len = 0;
    s->in_discard = s->more_lines = s->in_eof = s->rdhup = s->failed = false;
    s->out_off = s->out_len = 0;
    s->client_in_ep = false;
    if (s->nodelay) {
        int one = 1;
        setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    srv_arm(s);
    return cfd;
}

bool iw_agent_srv_client_gone(const iw_agent_srv *s) {
    if (s->client < 0)
        return false;
    if (s->failed)
        return true;
    char b;
    ssize_t r = recv(s->client, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    return r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

void iw_agent_srv_drop_client(iw_agent_srv *s) {
    if (s->client >= 0) {
        if (s->ep >= 0 && s->client_in_ep)
            epoll_ctl(s->ep, EPOLL_CTL_DEL, s->client, NULL);
        close(s->client);
    }
    s->client = -1;
    s->client_in_ep = false;
    s->in_len = 0;
    s->in_discard = s->more_lines = s->in_eof = s->rdhup = s->failed = false;
    s->out_off = s->out_len = 0;
    if (s->out_cap > SRV_OUT_KEEP) {
        free(s->out);
        s->out = NULL;
        s->out_cap = 0;
    }
    s->poll_pending = false;
}

/* Send what is pending without blocking; a hard error fails the runner. */
static void out_flush(iw_agent_srv *s) {
    while (s->out_off < s->out_len && !s->failed) {
        ssize_t w = send(s->client, s->out + s->out_off, s->out_len - s->out_off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            s->out_off += (size_t)w;
            s->out_moved_ms = iw_agent_now_ms();
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            break;
        } else {
            s->failed = true;
        }
    }
    if (s->out_off == s->out_len) {
        s->out_off = s->out_len = 0;
        if (s->out_cap > SRV_OUT_KEEP) {
            free(s->out);
            s->out = NULL;
            s->out_cap = 0;
        }
    }
}

/* Queue one response line behind the ones not yet sent. */
static void client_write(iw_agent_srv *s, const char *p, size_t n) {
    if (s->client < 0 || s->failed)
        return;
    if (s->out_off == s->out_len) {
        s->out_moved_ms = iw_agent_now_ms();
        s->out_off = s->out_len = 0;
    }
    if (s->out_len - s->out_off + n > SRV_OUT_MAX) {
        fprintf(stderr, "%s: over %u MiB of responses unsent: the runner is dropped\n", s->name,
                (unsigned)(SRV_OUT_MAX >> 20));
        s->failed = true;
        return;
    }
    if (s->out_off && s->out_cap - s->out_len < n) {
        memmove(s->out, s->out + s->out_off, s->out_len - s->out_off);
        s->out_len -= s->out_off;
        s->out_off = 0;
    }
    if (s->out_cap - s->out_len < n) {
        size_t cap = s->out_cap ? s->out_cap : 4096;
        while (cap - s->out_len < n)
            cap *= 2;
        char *o = realloc(s->out, cap);
        if (!o) {
            s->failed = true;
            return;
        }
        s->out = o;
        s->out_cap = cap;
    }
    memcpy(s->out + s->out_len, p, n);
    s->out_len += n;
    out_flush(s);
}

void iw_agent_srv_respond(iw_agent_srv *s, iw_jbuf *o) {
    /* One line at a time into the backlog, sent as one piece when the
     * socket takes it: no client waits on a delayed ACK between halves. */
    fputc('\n', o->f);
    const char *text = iw_jbuf_text(o);
    client_write(s, text, strlen(text));
}

void iw_agent_srv_respond_oom(iw_agent_srv *s) {
    static const char oom[] = "{\"ok\":false,\"error\":\"out of memory\"}\n";
    client_write(s, oom, sizeof oom - 1);
}

void iw_agent_srv_respond_error(iw_agent_srv *s, const char *msg) {
    iw_jbuf o;
    if (!iw_jbuf_open(&o)) {
        iw_agent_srv_respond_oom(s);
        return;
    }
    iw_jw_obj_begin(&o.j, NULL);
    iw_jw_bool(&o.j, "ok", false);
    iw_jw_str(&o.j, "error", msg);
    iw_jw_obj_end(&o.j);
    iw_agent_srv_respond(s, &o);
    iw_jbuf_free(&o);
}

void iw_agent_srv_respond_poll(iw_agent_srv *s) {
    s->poll_pending = false;
    iw_jbuf o;
    if (!iw_jbuf_open(&o)) {
        iw_agent_srv_respond_oom(s);
        return;
    }
    iw_jw_obj_begin(&o.j, NULL);
    iw_jw_bool(&o.j, "ok", true);
    iw_jw_arr_begin(&o.j, "events");
    for (size_t i = 0; i < s->n_events; i++) {
        iw_jw_raw(&o.j, NULL, s->events[i]);
        free(s->events[i]);
    }
    s->n_events = 0;
    s->event_bytes = 0;
    if (s->events_dropped) {
        /* The dropped events are the latest ones: the note goes last. */
        char what[160];
        snprintf(what, sizeof what,
                 "event queue full: %llu later event(s) dropped (at most %u MiB of unpolled "
                 "events are kept; poll more often)",
                 (unsigned long long)s->events_dropped, (unsigned)(IW_AGENT_SRV_EVENTS_MAX >> 20));
        iw_jw_obj_begin(&o.j, NULL);
        iw_jw_str(&o.j, "type", "error");
        iw_jw_str(&o.j, "what", what);
        iw_jw_obj_end(&o.j);
        s->events_dropped = 0;
    }
    iw_jw_arr_end(&o.j);
    iw_jw_obj_end(&o.j);
    iw_agent_srv_respond(s, &o);
    iw_jbuf_free(&o);
}

void iw_agent_srv_event_push(iw_agent_srv *s, const char *text) {
    size_t cost = strlen(text) + SRV_EVENT_OVERHEAD;
    if (cost > IW_AGENT_SRV_EVENTS_MAX - s->event_bytes) {
        s->events_dropped++;
        return;
    }
    if (s->n_events == s->cap_events) {
        size_t n = s->cap_events ? s->cap_events * 2 : 64;
        char **e = realloc(s->events, n * sizeof *e);
        if (!e) {
            s->events_dropped++;
            return;
        }
        s->events = e;
        s->cap_events = n;
    }
    char *e = strdup(text);
    if (!e) {
        s->events_dropped++;
        return;
    }
    s->events[s->n_events++] = e;
    s->event_bytes += cost;
}

void iw_agent_srv_events_clear(iw_agent_srv *s) {
    for (size_t i = 0; i < s->n_events; i++)
        free(s->events[i]);
    s->n_events = 0;
    s->event_bytes = 0;
    s->events_dropped = 0;
    s->poll_pending = false;
}

bool iw_agent_srv_poll_due(const iw_agent_srv *s) {
    return s->client >= 0 && s->poll_pending &&
           (s->n_events || s->events_dropped || s->in_eof || s->rdhup ||
            iw_agent_now_ms() >= s->poll_deadline);
}

int iw_agent_srv_wait_ms(const iw_agent_srv *s, int tick_ms) {
    uint64_t now = iw_agent_now_ms();
    uint64_t timeout = tick_ms < 0 ? 0 : (uint64_t)tick_ms;
    if (s->client >= 0) {
        /* Work that waits for nothing; a backlog waits for EPOLLOUT. */
        if ((s->more_lines && iw_agent_srv_out_pending(s) < IW_AGENT_SRV_OUT_SOFT) ||
            iw_agent_srv_poll_due(s))
            return 0;
        if (s->poll_pending && s->poll_deadline - now < timeout)
            timeout = s->poll_deadline - now;
        if (iw_agent_srv_out_pending(s)) {
            uint64_t stall = s->out_moved_ms + IW_AGENT_SRV_STALL_MS;
            uint64_t left = stall > now ? stall - now : 0;
            if (left < timeout)
                timeout = left;
        }
    }
    if (s->accept_retry_ms) {
        uint64_t left = s->accept_retry_ms > now ? s->accept_retry_ms - now : 0;
        if (left < timeout)
            timeout = left;
    }
    return (int)timeout;
}

/* One request line: parse, defer a poll, or let the handler fill the
 * response object. */
static void handle_line(iw_agent_srv *s, const char *line, size_t len) {
    iw_agent_req r;
    char err[200];
    if (iw_agent_parse(&r, line, len, err, sizeof err) < 0) {
        iw_agent_req_free(&r);
        iw_agent_srv_respond_error(s, err);
        return;
    }
    if (s->verbose)
        fprintf(stderr, "%s: %s\n", s->name, iw_agent_op_name(r.op));
    if (r.op == IW_AGENT_POLL) {
        /* Answered when an event exists or the timeout passes; the
         * requests behind it wait (one response per request, in order). */
        s->poll_pending = true;
        s->poll_deadline = iw_agent_now_ms() + (uint64_t)r.timeout_ms;
        iw_agent_req_free(&r);
        return;
    }
    iw_jbuf ob;
    if (!iw_jbuf_open(&ob)) {
        iw_agent_req_free(&r);
        iw_agent_srv_respond_oom(s);
        return;
    }
    iw_jw *o = &ob.j;
    iw_jw_obj_begin(o, NULL);
    iw_jw_bool(o, "ok", true);
    const char *fail = s->handler(s->ctx, &r, line, len, o);
    iw_jw_obj_end(o);
    if (fail)
        iw_agent_srv_respond_error(s, fail);
    else
        iw_agent_srv_respond(s, &ob);
    iw_jbuf_free(&ob);
    iw_agent_req_free(&r);
}

/* Answer a due poll and handle buffered lines in order, a batch at a
 * time, while the runner keeps reading its responses. */
static void process_lines(iw_agent_srv *s) {
    size_t start = 0;
    int budget = IW_AGENT_SRV_LINES_PER_CALL;
    s->more_lines = false;
    while (s->client >= 0 && !s->failed) {
        if (s->poll_pending) {
            if (!iw_agent_srv_poll_due(s))
                break;
            iw_agent_srv_respond_poll(s);
        }
        char *nl = memchr(s->in + start, '\n', s->in_len - start);
        if (!nl)
            break;
        if (budget == 0 || iw_agent_srv_out_pending(s) >= IW_AGENT_SRV_OUT_SOFT) {
            s->more_lines = budget == 0;
            break;
        }
        size_t n = (size_t)(nl - (s->in + start));
        if (s->in_discard) {
            iw_agent_srv_respond_error(s, "request line too long");
            s->in_discard = false;
            budget--;
        } else if (n) {
            /* A complete line over IW_AGENT_LINE_MAX: the parser refuses it. */
            handle_line(s, s->in + start, n);
            budget--;
        }
        start += n + 1;
    }
    memmove(s->in, s->in + start, s->in_len - start);
    s->in_len -= start;
    if (!memchr(s->in, '\n', s->in_len) && (s->in_discard || s->in_len > IW_AGENT_LINE_MAX)) {
        s->in_discard = true; /* drop the rest of an over-long line */
        s->in_len = 0;
    }
    if (s->in_eof && !memchr(s->in, '\n', s->in_len))
        s->in_len = 0; /* a last line without its newline is never complete */
}

/* Read and handle what the runner sent, until the socket is empty, the
 * EOF, or handling must pause (a poll, the output, a full batch): a runner
 * that has just left is then known to be gone before anyone new is judged. */
static void read_input(iw_agent_srv *s) {
    while (want_input(s) && !s->more_lines) {
        ssize_t n =
            recv(s->client, s->in + s->in_len, IW_AGENT_SRV_IN_CAP - s->in_len, MSG_DONTWAIT);
        if (n > 0)
            s->in_len += (size_t)n;
        else if (n == 0)
            s->in_eof = true;
        else if (errno == EINTR)
            continue;
        else if (errno != EAGAIN && errno != EWOULDBLOCK)
            s->failed = true;
        process_lines(s);
        if (n < 0)
            break;
    }
}

void iw_agent_srv_on_client(iw_agent_srv *s, uint32_t events) {
    if (s->client < 0)
        return;
    if (events & EPOLLERR) {
        s->failed = true;
        return;
    }
    if (events & EPOLLOUT)
        out_flush(s);
    if (events & EPOLLRDHUP)
        s->rdhup = true;
    if ((events & (EPOLLIN | EPOLLHUP | EPOLLRDHUP)) && want_input(s))
        read_input(s);
    else if (events & EPOLLHUP)
        s->failed = true; /* both directions gone and nothing more to read */
    srv_arm(s);
}

bool iw_agent_srv_service(iw_agent_srv *s) {
    if (s->client >= 0 && !s->failed) {
        out_flush(s);
        process_lines(s);
        if (iw_agent_srv_out_pending(s) &&
            iw_agent_now_ms() - s->out_moved_ms >= IW_AGENT_SRV_STALL_MS) {
            fprintf(stderr, "%s: the runner has read nothing for %d s: dropped\n", s->name,
                    IW_AGENT_SRV_STALL_MS / 1000);
            s->failed = true;
        }
    }
    srv_arm(s);
    if (s->client < 0)
        return false;
    return s->failed ||
           (s->in_eof && !s->more_lines && !s->poll_pending && !iw_agent_srv_out_pending(s));
}
