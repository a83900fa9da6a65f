/* The server side shared by iwarp-target and iwarp-agent (iw_agent_srv.h). */
#define _GNU_SOURCE /* accept4 */
#include "iw_agent_srv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
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
    socklen_t sl = ss.ss_family == AF_INET ? sizeof(struct sockaddr_in)
                                           : sizeof(struct sockaddr_in6);
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

int iw_agent_srv_init(iw_agent_srv *s, const char *name, iw_agent_srv_fn fn, void *ctx) {
    memset(s, 0, sizeof *s);
    s->lfd = -1;
    s->client = -1;
    s->name = name;
    s->handler = fn;
    s->ctx = ctx;
    s->in = malloc(IW_AGENT_SRV_IN_CAP);
    return s->in ? 0 : -1;
}

void iw_agent_srv_free(iw_agent_srv *s) {
    if (s->client >= 0)
        close(s->client);
    s->client = -1;
    if (s->lfd >= 0)
        close(s->lfd);
    s->lfd = -1;
    iw_agent_srv_events_clear(s);
    free(s->events);
    s->events = NULL;
    s->cap_events = 0;
    free(s->in);
    s->in = NULL;
}

int iw_agent_srv_accept(iw_agent_srv *s) {
    int cfd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
    if (cfd < 0)
        return -1;
    if (s->client >= 0) {
        static const char busy[] = "{\"ok\":false,\"error\":\"another runner is connected\"}\n";
        (void)!send(cfd, busy, sizeof busy - 1, MSG_NOSIGNAL);
        close(cfd);
        return -1;
    }
    s->client = cfd;
    s->in_len = 0;
    s->in_discard = false;
    struct timeval tv = {5, 0}; /* a runner that stops reading is dropped */
    setsockopt(cfd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (s->nodelay) {
        int one = 1;
        setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return cfd;
}

bool iw_agent_srv_client_gone(const iw_agent_srv *s) {
    if (s->client < 0)
        return false;
    char b;
    ssize_t r = recv(s->client, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    return r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

void iw_agent_srv_drop_client(iw_agent_srv *s) {
    if (s->client >= 0)
        close(s->client);
    s->client = -1;
    s->in_len = 0;
    s->in_discard = false;
}

static int client_write(iw_agent_srv *s, const char *p, size_t n) {
    while (n) {
        ssize_t w = send(s->client, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

void iw_agent_srv_respond(iw_agent_srv *s, iw_jbuf *o) {
    /* One send per line: no client waits on a delayed ACK between halves. */
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
    iw_jw_arr_end(&o.j);
    iw_jw_obj_end(&o.j);
    iw_agent_srv_respond(s, &o);
    iw_jbuf_free(&o);
    s->poll_pending = false;
}

void iw_agent_srv_event_push(iw_agent_srv *s, const char *text) {
    if (s->n_events == s->cap_events) {
        size_t n = s->cap_events ? s->cap_events * 2 : 64;
        char **e = realloc(s->events, n * sizeof *e);
        if (!e)
            return;
        s->events = e;
        s->cap_events = n;
    }
    char *e = strdup(text);
    if (e)
        s->events[s->n_events++] = e;
}

void iw_agent_srv_events_clear(iw_agent_srv *s) {
    for (size_t i = 0; i < s->n_events; i++)
        free(s->events[i]);
    s->n_events = 0;
    s->poll_pending = false;
}

bool iw_agent_srv_poll_due(const iw_agent_srv *s) {
    return s->client >= 0 && s->poll_pending &&
           (s->n_events || iw_agent_now_ms() >= s->poll_deadline);
}

int iw_agent_srv_wait_ms(const iw_agent_srv *s, int tick_ms) {
    int timeout = tick_ms;
    if (s->poll_pending) {
        uint64_t now = iw_agent_now_ms();
        uint64_t left = s->poll_deadline > now ? s->poll_deadline - now : 0;
        if (left < (uint64_t)timeout)
            timeout = (int)left;
    }
    return timeout;
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
        /* Answered when an event exists or the timeout passes. */
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

void iw_agent_srv_process(iw_agent_srv *s) {
    size_t start = 0;
    while (!(s->hold_behind_poll && s->poll_pending) && s->client >= 0) {
        char *nl = memchr(s->in + start, '\n', s->in_len - start);
        if (!nl)
            break;
        size_t n = (size_t)(nl - (s->in + start));
        if (s->in_discard) {
            iw_agent_srv_respond_error(s, "request line too long");
            s->in_discard = false;
        } else if (n) {
            /* A complete line over IW_AGENT_LINE_MAX: the parser refuses it. */
            handle_line(s, s->in + start, n);
        }
        start += n + 1;
    }
    memmove(s->in, s->in + start, s->in_len - start);
    s->in_len -= start;
    if (!(s->hold_behind_poll && s->poll_pending) && !memchr(s->in, '\n', s->in_len) &&
        (s->in_discard || s->in_len > IW_AGENT_LINE_MAX)) {
        s->in_discard = true; /* drop the rest of an over-long line */
        s->in_len = 0;
    }
}

int iw_agent_srv_read(iw_agent_srv *s) {
    if (s->in_len >= IW_AGENT_SRV_IN_CAP) { /* cannot happen: process keeps it short */
        s->in_len = 0;
        s->in_discard = true;
    }
    ssize_t n =
        recv(s->client, s->in + s->in_len, IW_AGENT_SRV_IN_CAP - s->in_len, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    if (n <= 0)
        return -1;
    s->in_len += (size_t)n;
    iw_agent_srv_process(s);
    return 0;
}
