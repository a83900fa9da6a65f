/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One case against an IUT: see iwc_run.h and docs/conformance.md. This
 * module drives the case (messages, capture, agent, sockets, setup, steps);
 * iwc_send.c, iwc_peer.c, iwc_model.c and iwc_expect.c do the rest
 * (iwc_run_int.h).
 *
 * Single-threaded: every wait goes through run_svc(), which reads whatever the
 * IUT sent on the RDMA socket, takes it apart with libiwarp's deframer and
 * iw_rdmap_decode, and answers it as a correct peer would (Read Responses,
 * Atomic Responses, placing Writes in the runner's own regions). Agent
 * requests keep run_svc() running while they wait. */
#include "iwc_run_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

const char *iwc_status_name(iwc_status s) {
    static const char *const n[] = {"pass",      "fail",  "error", "skip",
                                    "deviation", "fixed", "notrun"};
    return (unsigned)s < sizeof n / sizeof *n ? n[s] : "?";
}

void run_trace(run *r, int level, const char *fmt, ...) {
    bool con = r->env->verbose >= level && r->env->log;
    if (!con && !r->env->case_log)
        return;
    char buf[1400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    double ms = (double)(iwc_now_us() - r->t0) / 1000.0;
    if (con)
        fprintf(r->env->log, "    %6.1f %s\n", ms, buf);
    if (r->env->case_log) /* every level: the per-case log is the full trace */
        fprintf(r->env->case_log, "%9.1f %s\n", ms, buf);
}

/* The text after a "line N: " prefix. */
static const char *msg_body(const char *m) {
    if (!strncmp(m, "line ", 5)) {
        const char *c = strstr(m, ": ");
        if (c)
            return c + 2;
    }
    return m;
}

static void add_msg(run *r, char *m) {
    if (!m)
        return;
    /* The final region check repeats what an expect region already said. */
    for (int i = 0; i < r->res->nmsgs; i++)
        if (!strcmp(msg_body(r->res->msgs[i]), msg_body(m))) {
            free(m);
            return;
        }
    char **n = realloc(r->res->msgs, (size_t)(r->res->nmsgs + 1) * sizeof *n);
    if (!n) {
        free(m);
        return;
    }
    r->res->msgs = n;
    r->res->msgs[r->res->nmsgs++] = m;
}

/* A check that could not be made because the agent cannot observe what it
 * needs (e.g. verbs shows no Terminate): reported, neither pass nor fail. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void run_note(run *r, int line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char buf[512];
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char *m = line ? iwc_strf("line %d: %s", line, buf) : iwc_strf("%s", buf);
    if (!m)
        return;
    for (int i = 0; i < r->res->nnotes; i++)
        if (!strcmp(r->res->notes[i], m)) {
            free(m);
            return;
        }
    char **n = realloc(r->res->notes, (size_t)(r->res->nnotes + 1) * sizeof *n);
    if (!n) {
        free(m);
        return;
    }
    r->res->notes = n;
    r->res->notes[r->res->nnotes++] = m;
    run_trace(r, 1, "NOTE %s", buf);
}

/* Terminate events need an agent that sees Terminates (extension
 * "event.terminate"); otherwise the wire is the only witness. */
bool run_term_events_seen(run *r, int line, const char *what) {
    if (r->env->agent->caps.term_events)
        return true;
    run_note(r, line, "%s not checked: the agent cannot observe Terminates", what);
    return false;
}

/* A failed expectation (the IUT's doing). line 0: an automatic check. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void run_fail(run *r, int line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (r->res->status == IWC_PASS)
        r->res->status = IWC_FAIL;
    add_msg(r, line ? iwc_strf("line %d: %s", line, buf) : iwc_strf("%s", buf));
    run_trace(r, 1, "FAIL %s", buf);
}

/* The run could not do what the case asked (not the IUT's verdict). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void run_error(run *r, int line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    r->res->status = IWC_ERROR;
    add_msg(r, line ? iwc_strf("line %d: %s", line, buf) : iwc_strf("%s", buf));
    r->abort_steps = true;
    run_trace(r, 1, "ERROR %s", buf);
}

/* An agent that cannot configure an MPA setting the case asks of the IUT
 * (extension "mpa.verdict": the listen/connect response lists it under
 * "ignored", e.g. p2p on siw) cannot run the case: SKIP, with its note. */
static bool knob_ignored(run *r, const iw_json_doc *d) {
    const iwc_mpa_cfg *m = &r->c->iut_mpa;
    const struct {
        const char *name;
        int set;
    } knobs[] = {{"rev", m->rev}, {"markers", m->markers}, {"crc", m->crc}, {"p2p", m->p2p},
                 {"rtr", m->rtr}, {"ird", m->ird},         {"ord", m->ord}};
    const iw_json *ign = iw_json_get(d, &d->nodes[0], "ignored");
    for (const iw_json *e = ign ? iw_json_first(d, ign) : NULL; e; e = iw_json_next(d, e)) {
        if (e->type != IW_JSON_STR)
            continue;
        for (size_t k = 0; k < sizeof knobs / sizeof *knobs; k++) {
            if (knobs[k].set < 0 || strcmp(e->str, knobs[k].name))
                continue;
            const iw_json *notes = iw_json_get(d, &d->nodes[0], "notes");
            const iw_json *why = notes ? iw_json_get(d, notes, e->str) : NULL;
            r->res->status = IWC_SKIP;
            add_msg(r, iwc_strf("the agent cannot set the IUT's MPA '%s' as the case needs: %s",
                                e->str, why && why->type == IW_JSON_STR ? why->str : "ignored"));
            if (r->c->role == IWC_IUT_INITIATOR && r->c->startup_auto) {
                /* The IUT is already connecting: answer its Request with a
                 * reject rather than dropping the connection under it
                 * (siw's kernel crashed on that). */
                r->reject_startup = true;
                return false;
            }
            r->abort_steps = true;
            return true;
        }
    }
    return false;
}

void *run_grow(void *p, int *cap, int n, size_t item) {
    if (n < *cap)
        return p;
    int nc = *cap ? *cap * 2 : 16;
    void *q = realloc(p, (size_t)nc * item);
    if (q)
        *cap = nc;
    return q;
}

char *run_triple_str(uint16_t t, char *buf, size_t n) {
    snprintf(buf, n, "%X/%X/%X (%s)", iw_term_layer(t), iw_term_etype(t), iw_term_ecode(t),
             iw_term_str(t));
    return buf;
}

/* ---- capture ---- */

void run_cap_add(run *r, int dir, int kind, const uint8_t *p, size_t n) {
    iwc_capture *c = &r->res->cap;
    if (c->n == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 64;
        iwc_chunk *q = realloc(c->chunks, nc * sizeof *q);
        if (!q)
            return;
        c->chunks = q;
        c->cap = nc;
    }
    iwc_chunk *k = &c->chunks[c->n++];
    k->dir = (uint8_t)dir;
    k->kind = (uint8_t)kind;
    k->t_us = iwc_wall_us();
    k->off = c->stream[dir].len;
    k->len = (uint32_t)n;
    if (n)
        iwc_buf_add(&c->stream[dir], p, n);
}

static void cap_addr(run *r) {
    iwc_capture *c = &r->res->cap;
    c->used = true;
    c->t_start = iwc_wall_us();
    struct sockaddr_storage ss[2];
    socklen_t sl[2] = {sizeof ss[0], sizeof ss[1]};
    bool ok = getsockname(r->fd, (struct sockaddr *)&ss[0], &sl[0]) == 0 &&
              getpeername(r->fd, (struct sockaddr *)&ss[1], &sl[1]) == 0;
    for (int i = 0; i < 2; i++) {
        /* Synthetic addresses when not IPv4: the pcap is Ethernet/IPv4. */
        static const uint8_t synth[2][4] = {{10, 0, 0, 1}, {10, 0, 0, 2}};
        memcpy(c->ip[i], synth[i], 4);
        c->port[i] = (uint16_t)(i ? 4791 : 50000);
        if (ok && ss[i].ss_family == AF_INET) {
            struct sockaddr_in *a = (struct sockaddr_in *)&ss[i];
            memcpy(c->ip[i], &a->sin_addr, 4);
            c->port[i] = ntohs(a->sin_port);
        } else if (ok && ss[i].ss_family == AF_INET6) {
            c->port[i] = ntohs(((struct sockaddr_in6 *)&ss[i])->sin6_port);
        }
    }
}

/* ---- agent ---- */

static void idle_fn(void *ctx) { run_svc((run *)ctx, 0); }

/* One agent request; NULL doc on transport failure (an error was recorded). */
static iw_json_doc *agent(run *r, int line, const char *json, int extra_ms) {
    iw_json_doc *d = calloc(1, sizeof *d);
    if (!d) {
        run_error(r, line, "out of memory");
        return NULL;
    }
    iwc_idle idle = {idle_fn, r, r->sctp ? iwc_sctp_fd(r->sctp) : r->fd};
    run_trace(r, 2, "agent <- %.600s", json);
    if (iwc_agent_call(r->env->agent, json, d, r->timeout_ms + extra_ms, &idle) < 0) {
        free(d);
        run_error(r, line, "agent: %s", r->env->agent->err);
        return NULL;
    }
    const iwc_agent *a = r->env->agent;
    run_trace(r, 2, "agent -> %.600s%s", a->last, a->last_len > 600 ? " ..." : "");
    return d;
}

void run_doc_free(iw_json_doc *d) {
    if (d) {
        iw_json_free(d);
        free(d);
    }
}

/* A request that must succeed. */
iw_json_doc *run_agent_ok(run *r, int line, const char *json, const char *what) {
    iw_json_doc *d = agent(r, line, json, 0);
    if (d && !iwc_resp_ok(d)) {
        run_error(r, line, "agent refused %s: %s", what, iwc_resp_error(d));
        run_doc_free(d);
        return NULL;
    }
    return d;
}

void run_poll_events(run *r, int wait_ms) {
    char req[64];
    snprintf(req, sizeof req, "{\"op\":\"poll\",\"timeout_ms\":%d}", wait_ms);
    iw_json_doc *d = agent(r, 0, req, wait_ms);
    if (!d)
        return;
    if (!iwc_resp_ok(d)) {
        run_error(r, 0, "agent refused poll: %s", iwc_resp_error(d));
        run_doc_free(d);
        return;
    }
    const iw_json *evs = iw_json_get(d, &d->nodes[0], "events");
    if (!evs || evs->type != IW_JSON_ARR || !iw_json_first(d, evs)) {
        run_doc_free(d);
        return;
    }
    if (!PUSH(r->docs, r->ndocs, r->capdocs)) {
        run_doc_free(d);
        return;
    }
    r->docs[r->ndocs - 1] = d;
    for (const iw_json *e = iw_json_first(d, evs); e; e = iw_json_next(d, e)) {
        if (e->type != IW_JSON_OBJ)
            continue;
        ev_entry *x = PUSH(r->ev, r->nev, r->capev);
        if (!x)
            break;
        x->doc = d;
        x->node = e;
        const iw_json *t = iw_json_get(d, e, "type");
        run_trace(r, 2, "event %s", t && t->type == IW_JSON_STR ? t->str : "?");
    }
}

const char *run_ev_type(const ev_entry *e) {
    const iw_json *t = iw_json_get(e->doc, e->node, "type");
    return t && t->type == IW_JSON_STR ? t->str : "";
}

/* ---- sockets ---- */

/* Our writes go out as we make them (split= relies on it); all socket I/O
 * uses MSG_DONTWAIT, so the socket itself stays blocking. */
static void sock_tune(int fd) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

void run_svc(run *r, int wait_ms) {
    if (r->sctp) {
        run_sctp_svc(r, wait_ms);
        return;
    }
    if (r->fd < 0 || r->eof) {
        if (wait_ms > 0)
            iwc_sleep_ms(wait_ms);
        return;
    }
    struct pollfd pfd = {r->fd, POLLIN, 0};
    int n = poll(&pfd, 1, wait_ms);
    if (n <= 0)
        return;
    static const size_t bufsz = 65536;
    uint8_t *buf = malloc(bufsz);
    if (!buf)
        return;
    for (int rounds = 0; rounds < 64; rounds++) {
        ssize_t k = recv(r->fd, buf, bufsz, MSG_DONTWAIT);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (k <= 0) {
            r->eof = true;
            r->rst = k < 0;
            run_cap_add(r, 1, k < 0 ? IWC_CHUNK_RST : IWC_CHUNK_FIN, NULL, 0);
            run_trace(r, 2, "IUT %s the connection", k < 0 ? "reset" : "closed");
            break;
        }
        run_cap_add(r, 1, IWC_CHUNK_DATA, buf, (size_t)k);
        r->rx_bytes += (uint64_t)k;
        run_rx_process(r, buf, (size_t)k);
    }
    free(buf);
}

/* Write octets to the IUT, servicing our receive side when the socket is
 * full. pieces: split points (offsets into p) for deliberately small TCP
 * segments. */
void run_tx_write(run *r, const uint8_t *p, size_t n, const uint32_t *split, int nsplit) {
    if (r->sctp) {
        run_error(r, 0, "internal: a byte stream over SCTP");
        return;
    }
    if (r->fd < 0 || r->tx_dead)
        return;
    size_t done = 0;
    int si = 0;
    uint64_t deadline = iwc_now_us() + (uint64_t)r->timeout_ms * 1000;
    while (done < n) {
        size_t lim = n;
        while (si < nsplit && split[si] <= done)
            si++;
        if (si < nsplit && split[si] < n)
            lim = split[si];
        ssize_t w = send(r->fd, p + done, lim - done, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (iwc_now_us() > deadline) {
                r->tx_dead = true;
                run_trace(r, 1, "the IUT stopped reading: %zu octets not sent", n - done);
                return;
            }
            run_svc(r, 5);
            continue;
        }
        if (w <= 0) {
            /* The IUT closed (after a Terminate, say): not a verdict here. */
            r->tx_dead = true;
            run_trace(r, 1, "send failed: %s", strerror(errno));
            return;
        }
        run_cap_add(r, 0, IWC_CHUNK_DATA, p + done, (size_t)w);
        done += (size_t)w;
        if (si < nsplit && done == lim && done < n) {
            /* Let this piece leave as its own segment (TCP_NODELAY). */
            iwc_sleep_ms(2);
            run_svc(r, 0);
        }
    }
}

void run_flush_held(run *r) {
    if (!r->held.len)
        return;
    if (r->sctp) {
        run_sctp_flush(r);
        r->held.len = 0;
        return;
    }
    run_tx_write(r, r->held.p, r->held.len, r->split, r->nsplit);
    r->held.len = 0;
    r->nsplit = 0;
}

/* ---- setup ---- */

static int tcp_connect(run *r, uint16_t port) {
    char ports[8];
    snprintf(ports, sizeof ports, "%u", port);
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(r->env->iut_host, ports, &hints, &res) != 0) {
        run_error(r, 0, "cannot resolve IUT host '%s'", r->env->iut_host);
        return -1;
    }
    int fd = -1, last = 0;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
            last = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) {
        run_error(r, 0, "cannot connect to the IUT's RDMA listener %s:%u: %s", r->env->iut_host,
                  port, strerror(last));
        return -1;
    }
    r->fd = fd;
    sock_tune(fd);
    r->res->cap.runner_is_client = true;
    cap_addr(r);
    return 0;
}

static void mpa_json(iw_jw *j, const iwc_mpa_cfg *m, bool timeout_ok) {
    iw_jw_obj_begin(j, "mpa");
    if (m->rev >= 0)
        iw_jw_uint(j, "rev", (uint64_t)m->rev);
    if (m->markers >= 0)
        iw_jw_bool(j, "markers", m->markers);
    if (m->crc >= 0)
        iw_jw_bool(j, "crc", m->crc);
    if (m->p2p >= 0)
        iw_jw_bool(j, "p2p", m->p2p);
    if (m->rtr > 0)
        iw_jw_str(j, "rtr", m->rtr & 2 ? "write" : m->rtr & 4 ? "read" : "send");
    if (m->ird >= 0)
        iw_jw_uint(j, "ird", (uint64_t)m->ird);
    if (m->ord >= 0)
        iw_jw_uint(j, "ord", (uint64_t)m->ord);
    if (m->reject == 1)
        iw_jw_bool(j, "reject", true);
    if (m->timeout_ms >= 0 && timeout_ok)
        iw_jw_uint(j, "timeout_ms", (uint64_t)m->timeout_ms);
    if (m->has_pd)
        iw_jw_hexbytes(j, "private_data_hex", m->pd, m->pd_len);
    iw_jw_obj_end(j);
}

static int setup(run *r) {
    const iwc_case *c = r->c;
    const iwc_caps *caps = &r->env->agent->caps;
    run_doc_free(run_agent_ok(
        r, 0, r->env->sctp ? "{\"op\":\"reset\",\"transport\":\"sctp\"}" : "{\"op\":\"reset\"}",
        "reset"));
    if (r->abort_steps)
        return -1;
    /* Regions. */
    for (int i = 0; i < c->nregions; i++) {
        const iwc_region *g = &c->regions[i];
        region_rt *rt = &r->reg[i];
        rt->peer = g->peer;
        rt->len = g->len;
        rt->mem = malloc(g->len);
        if (!rt->mem) {
            run_error(r, g->line, "out of memory");
            return -1;
        }
        memset(rt->mem, g->fill < 0 ? 0 : g->fill, g->len);
        if (g->peer) {
            rt->stag = PEER_STAG_BASE + ((uint32_t)i << 8) + 0x5C;
            rt->to = PEER_TO_BASE + ((uint64_t)i << 24);
            continue;
        }
        iwc_req q;
        if (iwc_req_begin(&q, "reg_mr") < 0) {
            run_error(r, g->line, "out of memory");
            return -1;
        }
        iw_jw_uint(&q.j, "len", g->len);
        iw_jw_arr_begin(&q.j, "access");
        static const char *const an[] = {"local_write", "remote_read", "remote_write",
                                         "remote_atomic"};
        for (int b = 0; b < 4; b++)
            if (g->access & (1u << b))
                iw_jw_str(&q.j, NULL, an[b]);
        iw_jw_arr_end(&q.j);
        if (g->fill >= 0)
            iw_jw_uint(&q.j, "fill", (uint64_t)g->fill);
        if (g->pd)
            iw_jw_uint(&q.j, "pd", (uint64_t)g->pd);
        iw_json_doc *d = run_agent_ok(r, g->line, iwc_req_end(&q), "reg_mr");
        iwc_req_free(&q);
        if (!d)
            return -1;
        uint64_t stag = 0, to = 0;
        char err[128];
        if (iw_json_u64(d, &d->nodes[0], "stag", true, 0xFFFFFFFFu, &stag, err, sizeof err) < 0 ||
            iw_json_u64(d, &d->nodes[0], "to", true, UINT64_MAX, &to, err, sizeof err) < 0) {
            run_error(r, g->line, "agent reg_mr response: %s", err);
            run_doc_free(d);
            return -1;
        }
        run_doc_free(d);
        rt->stag = (uint32_t)stag;
        rt->to = to;
    }
    /* The connection. */
    iwc_req q;
    if (iwc_req_begin(&q, c->role == IWC_IUT_RESPONDER ? "listen" : "connect") < 0)
        return -1;
    uint16_t lport = 0;
    if (c->role == IWC_IUT_RESPONDER) {
        iw_jw_uint(&q.j, "port", r->env->iut_listen_port);
        /* The IUT listens where we will connect (an agent on 127.0.0.2 or
         * ::1 must not listen on 127.0.0.1); behind NAT the agent decides. */
        if (r->env->iut_listen_host[0])
            iw_jw_str(&q.j, "host", r->env->iut_listen_host);
    } else if (r->env->sctp) {
        /* We listen (SCTP over UDP); the IUT's association comes to us. */
        if (run_sctp_listen(r, &lport) < 0) {
            iwc_req_free(&q);
            return -1;
        }
        iw_jw_str(&q.j, "host", r->env->local_host);
        iw_jw_uint(&q.j, "port", lport);
    } else {
        /* We listen; the agent's IUT connects to us as MPA initiator. */
        struct addrinfo hints = {0}, *res = NULL;
        hints.ai_socktype = SOCK_STREAM;
        hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
        char lps[8];
        snprintf(lps, sizeof lps, "%u", r->env->local_port);
        if (getaddrinfo(r->env->local_bind, lps, &hints, &res) != 0) {
            iwc_req_free(&q);
            run_error(r, 0, "local address '%s' is not numeric (--local-host/--local-listen)",
                      r->env->local_bind);
            return -1;
        }
        r->lfd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int one = 1;
        setsockopt(r->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        if (r->lfd < 0 || bind(r->lfd, res->ai_addr, res->ai_addrlen) < 0 ||
            listen(r->lfd, 1) < 0 || getsockname(r->lfd, (struct sockaddr *)&ss, &sl) < 0) {
            freeaddrinfo(res);
            iwc_req_free(&q);
            run_error(r, 0, "cannot listen on %s:%u: %s", r->env->local_bind, r->env->local_port,
                      strerror(errno));
            return -1;
        }
        freeaddrinfo(res);
        lport = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                              : ((struct sockaddr_in6 *)&ss)->sin6_port);
        iw_jw_str(&q.j, "host", r->env->local_host);
        iw_jw_uint(&q.j, "port", lport);
    }
    mpa_json(&q.j, &c->iut_mpa, caps->mpa_timeout);
    iw_json_doc *d =
        run_agent_ok(r, 0, iwc_req_end(&q), c->role == IWC_IUT_RESPONDER ? "listen" : "connect");
    iwc_req_free(&q);
    if (!d)
        return -1;
    if (knob_ignored(r, d)) {
        run_doc_free(d);
        return -1;
    }
    if (c->role == IWC_IUT_RESPONDER) {
        uint64_t port = 0;
        char err[128];
        if (iw_json_u64(d, &d->nodes[0], "port", true, 65535, &port, err, sizeof err) < 0 ||
            port == 0) {
            run_doc_free(d);
            run_error(r, 0, "agent listen response has no port");
            return -1;
        }
        run_doc_free(d);
        if (r->env->iut_connect_port)
            port = r->env->iut_connect_port; /* behind NAT: the forwarded port */
        if (r->env->sctp ? run_sctp_connect(r, (uint16_t)port) < 0
                         : tcp_connect(r, (uint16_t)port) < 0)
            return -1;
    } else if (r->env->sctp) {
        run_doc_free(d);
        if (run_sctp_accept(r) < 0)
            return -1;
    } else {
        run_doc_free(d);
        struct pollfd p = {r->lfd, POLLIN, 0};
        if (poll(&p, 1, r->timeout_ms) <= 0) {
            run_fail(r, 0, "the IUT did not open a TCP connection to %s:%u within %d ms",
                     r->env->local_host, lport, r->timeout_ms);
            return -1;
        }
        r->fd = accept(r->lfd, NULL, NULL);
        if (r->fd < 0) {
            run_error(r, 0, "accept failed: %s", strerror(errno));
            return -1;
        }
        sock_tune(r->fd);
        r->res->cap.runner_is_client = false;
        cap_addr(r);
    }
    if (c->startup_auto) {
        run_startup_auto(r);
        if (!r->abort_steps)
            run_ensure_recv(r, 0);
    }
    return r->abort_steps ? -1 : 0;
}

/* ---- agent steps ---- */

static const char *const hex_keys[] = {
    "stag", "to",        "remote_stag", "remote_to",    "inv_stag",  "add",    "add_mask",
    "swap", "swap_mask", "compare",     "compare_mask", "sink_stag", "sink_to"};

static void step_agent(run *r, const iwc_step *s) {
    iwc_req q;
    if (iwc_req_begin(&q, iwc_agent_name(s->sub)) < 0)
        return;
    int ri = s->has_region ? s->region : -1;
    uint64_t v;
    uint8_t *wdata = NULL;
    size_t wlen = 0;
    switch (s->sub) {
    case IWC_AGENT_INVALIDATE:
    case IWC_AGENT_DEREG_MR:
        iw_jw_hex32(&q.j, "stag",
                    ri >= 0 ? r->reg[ri].stag : (uint32_t)run_arg_num_or(r, s, "stag", 0));
        break;
    case IWC_AGENT_WRITE_MR: {
        uint64_t at = run_arg_num_or(r, s, "at", 0);
        const iwc_arg *da = iwc_step_arg(s, "data");
        wdata = run_data_make(r, s->line, &da->d, run_arg_num_or(r, s, "len", r->reg[ri].len - at),
                              &wlen);
        if (!wdata) {
            iwc_req_free(&q);
            return;
        }
        iw_jw_hex32(&q.j, "stag", r->reg[ri].stag);
        iw_jw_uint(&q.j, "offset", at);
        iw_jw_hexbytes(&q.j, "data_hex", wdata, wlen);
        break;
    }
    case IWC_AGENT_POST_RECV:
        iw_jw_uint(&q.j, "len", run_arg_num_or(r, s, "len", 0));
        if (run_arg_num(r, s, "count", &v))
            iw_jw_uint(&q.j, "count", v);
        break;
    case IWC_AGENT_POST_SEND:
        for (int i = 0; i < s->nargs; i++) {
            const iwc_arg *a = &s->args[i];
            if (a->type == IWC_V_WORD) {
                iw_jw_str(&q.j, a->key, a->word);
            } else if (a->type == IWC_V_DATA) {
                size_t n = 0;
                uint8_t *b = run_data_make(r, s->line, &a->d, run_arg_num_or(r, s, "len", 8), &n);
                if (!b) {
                    iwc_req_free(&q);
                    return;
                }
                iw_jw_hexbytes(&q.j, "data_hex", b, n);
                free(b);
            } else if (a->type == IWC_V_EXPR && run_eval(r, s->line, &a->e, &v)) {
                bool hex = false;
                for (size_t k = 0; k < sizeof hex_keys / sizeof *hex_keys; k++)
                    hex |= !strcmp(hex_keys[k], a->key);
                if (!strcmp(a->key, "len") && iwc_step_arg(s, "data"))
                    continue; /* the length of data_hex */
                if (hex)
                    iw_jw_hex64(&q.j, a->key, v);
                else
                    iw_jw_uint(&q.j, a->key, v);
            }
        }
        break;
    default:
        break;
    }
    run_flush_held(r);
    iw_json_doc *d = agent(r, s->line, iwc_req_end(&q), 0);
    iwc_req_free(&q);
    if (d && !iwc_resp_ok(d)) {
        if (s->may_fail)
            run_trace(r, 1, "agent refused %s (allowed): %s", iwc_agent_name(s->sub),
                      iwc_resp_error(d));
        else
            run_error(r, s->line, "agent refused %s: %s", iwc_agent_name(s->sub),
                      iwc_resp_error(d));
    } else if (d) {
        if (s->sub == IWC_AGENT_DEREG_MR && ri >= 0)
            r->reg[ri].gone = true;
        if (s->sub == IWC_AGENT_WRITE_MR)
            run_model_add(r, ri, run_arg_num_or(r, s, "at", 0), wdata, wlen, -1);
    }
    run_doc_free(d);
    free(wdata);
}

/* ---- the case ---- */

static void final_checks(run *r) {
    run_flush_held(r);
    run_svc(r, SETTLE_MS);
    run_poll_events(r, 0);
    char a[160];
    if (r->term_idx >= 0 && !r->term_judged) {
        r->res->checks++;
        const iw_rdmap_term *t = &r->rx[r->term_idx].msg.u.term;
        run_fail(r, 0, "unexpected Terminate %s from the IUT",
                 run_triple_str(IW_TERM_TRIPLE(t->layer, t->etype, t->ecode), a, sizeof a));
    }
    if (r->sctp)
        run_sctp_final(r);
    for (int i = 0; i < r->c->nregions && !r->abort_steps; i++) {
        if (r->reg[i].peer)
            continue;
        r->res->checks++;
        run_check_region(r, 0, i, 0, r->reg[i].len);
        run_check_guard(r, 0, i);
    }
}

static void run_steps(run *r) {
    const iwc_case *c = r->c;
    for (int i = 0; i < c->nsteps && !r->abort_steps; i++) {
        const iwc_step *s = &c->steps[i];
        r->step_seed = i;
        run_trace(r, 1, "line %d: %s %s", s->line,
                  s->kind == IWC_STEP_SEND     ? "send"
                  : s->kind == IWC_STEP_EXPECT ? "expect"
                  : s->kind == IWC_STEP_AGENT  ? "agent"
                                               : "step",
                  s->kind == IWC_STEP_SEND     ? iwc_send_name(s->sub)
                  : s->kind == IWC_STEP_EXPECT ? iwc_expect_name(s->sub)
                  : s->kind == IWC_STEP_AGENT  ? iwc_agent_name(s->sub)
                                               : "");
        if (s->kind != IWC_STEP_SEND)
            run_flush_held(r);
        if (s->nonly) {
            bool hit = false;
            for (int k = 0; k < s->nonly && r->has_chosen; k++)
                hit |= iwc_outcome_eq(&s->only[k], &r->chosen);
            if (!hit) {
                run_trace(r, 1, "line %d: not for the outcome the IUT chose", s->line);
                continue;
            }
        }
        switch (s->kind) {
        case IWC_STEP_SEND: {
            if (!r->held.len) {
                r->rx_mark = r->nrx;
                r->rx_bytes_mark = r->rx_bytes;
            }
            if (s->sub == IWC_SEND_MPA_REQUEST || s->sub == IWC_SEND_MPA_REPLY) {
                run_step_send_rr(r, s);
                break;
            }
            if (s->sub == IWC_SEND_CTRL || s->sub == IWC_SEND_CHUNK) {
                if (s->sub == IWC_SEND_CTRL)
                    run_sctp_step_ctrl(r, s);
                else
                    run_sctp_step_chunk(r, s);
                break;
            }
            r->held_mark = r->held.len;
            run_step_send_fpdu(r, s);
            uint64_t cut;
            if (run_arg_num(r, s, "cut", &cut) && cut < r->held.len - r->held_mark)
                r->held.len = r->held_mark + (size_t)cut; /* the rest never goes out */
            const iwc_arg *sp = iwc_step_arg(s, "split");
            if (sp) {
                r->nsplit = 0;
                for (int k = 0; k < sp->nlist; k++)
                    r->split[r->nsplit++] = (uint32_t)sp->list[k];
            }
            if (!run_arg_num_or(r, s, "hold", 0))
                run_flush_held(r);
            break;
        }
        case IWC_STEP_AGENT:
            step_agent(r, s);
            break;
        case IWC_STEP_WAIT: {
            uint64_t deadline = iwc_now_us() + run_arg_num_or(r, s, "ms", 0) * 1000;
            while (iwc_now_us() < deadline)
                run_svc(r, 5);
            break;
        }
        case IWC_STEP_CLOSE:
            if (r->sctp && !r->we_shut) {
                iwc_sctp_shutdown(r->sctp); /* SCTP's SHUTDOWN: our side is done */
                r->we_shut = true;
            } else if (r->fd >= 0 && !r->we_shut) {
                shutdown(r->fd, SHUT_WR);
                r->we_shut = true;
                run_cap_add(r, 0, IWC_CHUNK_FIN, NULL, 0);
            }
            break;
        case IWC_STEP_ABORT:
            if (r->sctp && !r->eof) {
                iwc_sctp_abort(r->sctp);
                r->eof = true;
            } else if (r->fd >= 0) {
                struct linger lg = {1, 0};
                setsockopt(r->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
                close(r->fd);
                r->fd = -1;
                r->eof = true;
                run_cap_add(r, 0, IWC_CHUNK_RST, NULL, 0);
            }
            break;
        case IWC_STEP_EXPECT:
            switch (s->sub) {
            case IWC_EXPECT_TERMINATE:
                run_exp_terminate(r, s);
                break;
            case IWC_EXPECT_CLOSED:
                run_exp_closed(r, s);
                break;
            case IWC_EXPECT_MPA_REPLY:
            case IWC_EXPECT_MPA_REQUEST:
                run_exp_mpa(r, s);
                /* "silent" from here on means: nothing after this frame. */
                r->rx_mark = r->nrx;
                r->rx_bytes_mark = r->rx_bytes;
                break;
            case IWC_EXPECT_FPDU:
                run_exp_fpdu(r, s);
                break;
            case IWC_EXPECT_EVENT:
                run_exp_event(r, s);
                break;
            case IWC_EXPECT_NO_EVENT:
                run_exp_no_event(r, s);
                break;
            case IWC_EXPECT_REGION:
                run_exp_region(r, s);
                break;
            case IWC_EXPECT_PEER_REGION:
                run_exp_peer_region(r, s);
                break;
            case IWC_EXPECT_PEER_U64:
                run_exp_peer_u64(r, s);
                break;
            case IWC_EXPECT_GUARD:
                r->res->checks++;
                run_check_guard(r, s->line, s->region);
                break;
            case IWC_EXPECT_QUIET:
                run_exp_quiet(r, s);
                break;
            case IWC_EXPECT_PEER_RECV:
                run_exp_peer_recv(r, s);
                break;
            case IWC_EXPECT_CTRL:
                run_sctp_exp_ctrl(r, s);
                break;
            default:
                break;
            }
            break;
        default:
            break;
        }
    }
}

static char *skip_reason(const iwc_env *env, const iwc_case *c) {
    const iwc_caps *k = &env->agent->caps;
    if (!(c->transports & (env->sctp ? IWC_TR_SCTP : IWC_TR_TCP)))
        return iwc_strf("%s only (%s)", env->sctp ? "MPA over TCP" : "DDP over SCTP", c->tr_why);
    if ((c->tags & IWC_TAG_SLOW) && !env->slow && !(k->mpa_timeout && c->iut_mpa.timeout_ms >= 0))
        return iwc_strf("slow: waits for the IUT's MPA startup timeout (run with --slow)");
    const bool have[IWC_NEEDS_COUNT_] = {k->atomics, k->immediate, k->send_inv,
                                         k->markers, k->rev1,      k->pd2,
                                         k->reject,  k->guard,     k->local_inv};
    for (unsigned b = 0; b < IWC_NEEDS_COUNT_; b++)
        if ((c->needs & (1u << b)) && !have[b])
            return iwc_strf("the agent does not offer '%s'", iwc_needs_name(b));
    bool needs_pd2 = false;
    for (int i = 0; i < c->nregions; i++)
        needs_pd2 |= c->regions[i].pd != 0;
    if (needs_pd2 && !k->pd2)
        return iwc_strf("the agent does not offer a second protection domain (reg_mr.pd)");
    if (c->iut_mpa.reject == 1 && !k->reject)
        return iwc_strf("the agent does not offer mpa.reject");
    return NULL;
}

void iwc_run_case(iwc_env *env, const iwc_case *c, iwc_result *res) {
    memset(res, 0, sizeof *res);
    uint64_t t0 = iwc_now_us();
    char *why = skip_reason(env, c);
    if (why) {
        res->status = IWC_SKIP;
        res->msgs = malloc(sizeof *res->msgs);
        if (res->msgs) {
            res->msgs[0] = why;
            res->nmsgs = 1;
        } else {
            free(why);
        }
        return;
    }
    run *r = calloc(1, sizeof *r);
    if (!r) {
        res->status = IWC_ERROR;
        return;
    }
    r->env = env;
    r->c = c;
    r->res = res;
    r->fd = r->lfd = -1;
    r->term_idx = -1;
    r->t0 = t0;
    r->timeout_ms = c->timeout_ms ? c->timeout_ms : env->timeout_ms;
    if (setup(r) == 0 || !r->abort_steps)
        run_steps(r);
    if (!r->abort_steps)
        final_checks(r);
    /* Tear down. */
    if (r->fd >= 0)
        close(r->fd);
    if (r->lfd >= 0)
        close(r->lfd);
    run_sctp_free(r);
    free(r->df);
    iwc_buf_free(&r->held);
    iwc_buf_free(&r->rx_rr);
    for (int i = 0; i < r->nsent; i++)
        free(r->sent[i].ulpdu);
    free(r->sent);
    for (int i = 0; i < r->nops; i++)
        free(r->ops[i].bytes);
    free(r->ops);
    for (int i = 0; i < r->nrx; i++)
        free(r->rx[i].ulpdu);
    free(r->rx);
    for (int i = 0; i < r->npm; i++)
        iwc_buf_free(&r->pm[i].data);
    free(r->pm);
    free(r->ev);
    for (int i = 0; i < r->ndocs; i++)
        run_doc_free(r->docs[i]);
    free(r->docs);
    for (int i = 0; i < IWC_REGIONS_MAX; i++)
        free(r->reg[i].mem);
    free(r);
    res->duration_us = iwc_now_us() - t0;
}

void iwc_result_free(iwc_result *r) {
    for (int i = 0; i < r->nmsgs; i++)
        free(r->msgs[i]);
    free(r->msgs);
    for (int i = 0; i < r->nnotes; i++)
        free(r->notes[i]);
    free(r->notes);
    iwc_buf_free(&r->cap.stream[0]);
    iwc_buf_free(&r->cap.stream[1]);
    free(r->cap.chunks);
    free(r->deviation);
    free(r->outcome);
    memset(r, 0, sizeof *r);
}

const char *iwc_result_reason(const iwc_result *r) { return r->nmsgs ? r->msgs[0] : ""; }

char *iwc_fault_reason(const iwc_case *c, const char *spec) {
    for (int i = 0; i < c->ncatches; i++)
        if (!strcmp(c->catches[i].spec, spec) && c->catches[i].reason)
            return iwc_strf("%s", c->catches[i].reason);
    uint16_t t = 0;
    const iwc_step *term = NULL;
    for (int i = 0; i < c->nsteps && !term; i++)
        if (c->steps[i].kind == IWC_STEP_EXPECT && c->steps[i].sub == IWC_EXPECT_TERMINATE)
            term = &c->steps[i];
    if (!strncmp(spec, "skip:", 5) && iwc_parse_triple(spec + 5, &t))
        return iwc_strf("expected Terminate %X/%X/%X", iw_term_layer(t), iw_term_etype(t),
                        iw_term_ecode(t));
    if (!strncmp(spec, "miscode:", 8) && iwc_parse_triple(spec + 8, &t))
        return iwc_strf("got %X/%X/%X", iw_term_layer(t), iw_term_etype(t),
                        (iw_term_ecode(t) + 1) & 0xFF);
    if (!strcmp(spec, "swap-nibbles"))
        return iwc_strf("nibbles swapped");
    if (!strcmp(spec, "no-hdr-copy"))
        return iwc_strf("expected D=1");
    if (!strcmp(spec, "bad-seg-len"))
        return iwc_strf("DDP Segment Length");
    if (!strcmp(spec, "send-after-terminate"))
        return iwc_strf("after its Terminate");
    if (!strcmp(spec, "place-before-check"))
        return iwc_strf("changed outside the expected placement");
    if (!strcmp(spec, "accept-mpa-bad-key") || !strcmp(spec, "accept-mpa-bad-rev"))
        return iwc_strf("must close the connection");
    if (term)
        return iwc_strf("expected Terminate %X/%X/%X", iw_term_layer(term->triple),
                        iw_term_etype(term->triple), iw_term_ecode(term->triple));
    return iwc_strf("%s", spec);
}
