/* One case against an IUT: see iwc_run.h and docs/conformance.md.
 *
 * Single-threaded: every wait goes through svc(), which reads whatever the
 * IUT sent on the RDMA socket, takes it apart with libiwarp's deframer and
 * iw_rdmap_decode, and answers it as a correct peer would (Read Responses,
 * Atomic Responses, placing Writes in the runner's own regions). Agent
 * requests keep svc() running while they wait. */
#include "iw_json.h"
#include "iwc_run.h"

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

#include <iwarp/iwarp.h>

#include "iwc_wire.h"

#define PEER_STAG_BASE 0x0C0F0000u  /* STags of the runner's own regions */
#define PEER_TO_BASE 0x00007A0000000000ull
#define SETTLE_MS 20   /* quiet time before the final checks */
#define QUIET_MS 250   /* how long "nothing after the Terminate" is watched without a FIN */
#define EMSS 1460      /* our segmentation: MULPDU for this EMSS (RFC 5044 §4.5) */

const char *iwc_status_name(iwc_status s) {
    static const char *const n[] = {"pass", "fail", "error", "skip", "deviation", "fixed",
                                    "notrun"};
    return (unsigned)s < sizeof n / sizeof *n ? n[s] : "?";
}

/* ---- run state ---- */

typedef struct ev_entry {
    const iw_json_doc *doc;
    const iw_json *node;
    bool consumed;
} ev_entry;

/* FPDUs one case may send: the runner keeps each (its octets, the
 * model's placement), a few hundred octets apiece, so a tiny seg= on a
 * large message stays at tens of MiB instead of gigabytes. */
#define IWC_FPDUS_MAX 262144u

typedef struct sent_frame {
    int line;
    uint8_t kind;       /* iwc_send_kind; 0 for the runner's automatic answers */
    bool fpdu;          /* false: an MPA frame */
    uint8_t *ulpdu;     /* the DDP segment as framed */
    size_t ulpdu_len;
    int region;         /* IUT region this segment places into (-1 none) */
    uint64_t roff;
    size_t rlen;
    size_t pay_off;     /* payload offset in ulpdu */
    bool rejected;
} sent_frame;

typedef struct model_op {
    int region;
    uint64_t off;
    size_t len;
    uint8_t *bytes;
    int frame;          /* sent frame that placed it, or -1 */
} model_op;

enum { RXF_RR = 1, RXF_RR_BAD, RXF_FPDU };

typedef struct rx_frame {
    uint8_t type;
    uint64_t t_us;
    uint64_t off;
    size_t wire_len;
    iw_mpa_rr rr;
    uint8_t pd[IW_MPA_PD_MAX];
    iw_verdict verdict;  /* MPA: the frame's own verdict (CRC, marker, key, ...) */
    uint8_t *ulpdu;
    uint16_t ulpdu_len;
    iw_rdmap_msg msg;
    iw_verdict rverdict; /* iw_rdmap_decode */
    bool consumed;
} rx_frame;

typedef struct peer_msg {
    uint8_t opcode;
    uint32_t msn;
    iwc_buf data;
    bool done, consumed, rtr;
    uint32_t inv;
    bool has_imm;
    uint8_t imm[IW_RDMAP_IMM_LEN];
} peer_msg;

typedef struct region_rt {
    bool peer, gone;
    uint32_t stag;
    uint64_t to, len;
    uint8_t *mem;       /* peer: the memory; IUT: the initial content */
} region_rt;

typedef struct run {
    iwc_env *env;
    const iwc_case *c;
    iwc_result *res;
    int timeout_ms;
    int fd, lfd;
    bool eof, rst, tx_dead, we_shut;
    /* MPA */
    iw_mpa_rr mine;
    uint8_t mine_pd[IW_MPA_PD_MAX];
    bool mine_sent, theirs_got, rejected;
    iw_mpa_rr theirs;
    /* our direction */
    bool tx_full;
    iwc_tx tx;
    iwc_buf held;
    uint32_t split[IWC_LIST_MAX];
    int nsplit;
    bool any_fpdu_sent;
    /* their direction */
    iwc_buf rx_rr;
    bool rx_full, rx_lost;
    iw_deframer *df;
    uint64_t rx_bytes;
    /* records */
    sent_frame *sent;
    int nsent, capsent;
    model_op *ops;
    int nops, capops;
    rx_frame *rx;
    int nrx, caprx;
    peer_msg *pm;
    int npm, cappm;
    ev_entry *ev;
    int nev, capev;
    iw_json_doc **docs;
    int ndocs, capdocs;
    region_rt reg[IWC_REGIONS_MAX];
    int term_idx;         /* first Terminate from the IUT, or -1 */
    bool term_judged;     /* an expect terminate looked at it */
    iwc_outcome chosen;   /* the outcome the last expect terminate saw (if= steps) */
    bool has_chosen;
    bool rule4_reported;
    bool reject_startup; /* skipped IUT initiator: end its MPA startup with R=1 */
    int rx_mark;          /* rx frames when the last send step went out */
    uint64_t rx_bytes_mark;
    bool recv_posted;
    bool abort_steps;
    int step_seed;
    int want_op;          /* expect fpdu: the opcode being waited for */
    uint64_t t0;
    size_t held_mark;     /* where the current send step's octets start in held */
    bool sent_term;       /* the steps sent a Terminate: nothing after it may land */
} run;

static void trace(run *r, int level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void trace(run *r, int level, const char *fmt, ...) {
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
static void note(run *r, int line, const char *fmt, ...) {
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
    trace(r, 1, "NOTE %s", buf);
}

/* Terminate events need an agent that sees Terminates (extension
 * "event.terminate"); otherwise the wire is the only witness. */
static bool term_events_seen(run *r, int line, const char *what) {
    if (r->env->agent->caps.term_events)
        return true;
    note(r, line, "%s not checked: the agent cannot observe Terminates", what);
    return false;
}

/* A failed expectation (the IUT's doing). line 0: an automatic check. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void fail(run *r, int line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (r->res->status == IWC_PASS)
        r->res->status = IWC_FAIL;
    add_msg(r, line ? iwc_strf("line %d: %s", line, buf) : iwc_strf("%s", buf));
    trace(r, 1, "FAIL %s", buf);
}

/* The run could not do what the case asked (not the IUT's verdict). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void error(run *r, int line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    r->res->status = IWC_ERROR;
    add_msg(r, line ? iwc_strf("line %d: %s", line, buf) : iwc_strf("%s", buf));
    r->abort_steps = true;
    trace(r, 1, "ERROR %s", buf);
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

static void *grow(void *p, int *cap, int n, size_t item) {
    if (n < *cap)
        return p;
    int nc = *cap ? *cap * 2 : 16;
    void *q = realloc(p, (size_t)nc * item);
    if (q)
        *cap = nc;
    return q;
}
#define PUSH(arr, n, cap)                                                                          \
    ((arr = grow(arr, &cap, n, sizeof *arr)) ? memset(&arr[n++], 0, sizeof *arr) : NULL)

static char *triple_str(uint16_t t, char *buf, size_t n) {
    snprintf(buf, n, "%X/%X/%X (%s)", iw_term_layer(t), iw_term_etype(t), iw_term_ecode(t),
             iw_term_str(t));
    return buf;
}

/* ---- capture ---- */

static void cap_add(run *r, int dir, int kind, const uint8_t *p, size_t n) {
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

static void svc(run *r, int wait_ms);

static void idle_fn(void *ctx) { svc((run *)ctx, 0); }

/* One agent request; NULL doc on transport failure (an error was recorded). */
static iw_json_doc *agent(run *r, int line, const char *json, int extra_ms) {
    iw_json_doc *d = calloc(1, sizeof *d);
    if (!d) {
        error(r, line, "out of memory");
        return NULL;
    }
    iwc_idle idle = {idle_fn, r, r->fd};
    trace(r, 2, "agent <- %.600s", json);
    if (iwc_agent_call(r->env->agent, json, d, r->timeout_ms + extra_ms, &idle) < 0) {
        free(d);
        error(r, line, "agent: %s", r->env->agent->err);
        return NULL;
    }
    const iwc_agent *a = r->env->agent;
    trace(r, 2, "agent -> %.600s%s", a->last, a->last_len > 600 ? " ..." : "");
    return d;
}

static void doc_free(iw_json_doc *d) {
    if (d) {
        iw_json_free(d);
        free(d);
    }
}

/* A request that must succeed. */
static iw_json_doc *agent_ok(run *r, int line, const char *json, const char *what) {
    iw_json_doc *d = agent(r, line, json, 0);
    if (d && !iwc_resp_ok(d)) {
        error(r, line, "agent refused %s: %s", what, iwc_resp_error(d));
        doc_free(d);
        return NULL;
    }
    return d;
}

static void poll_events(run *r, int wait_ms) {
    char req[64];
    snprintf(req, sizeof req, "{\"op\":\"poll\",\"timeout_ms\":%d}", wait_ms);
    iw_json_doc *d = agent(r, 0, req, wait_ms);
    if (!d)
        return;
    if (!iwc_resp_ok(d)) {
        error(r, 0, "agent refused poll: %s", iwc_resp_error(d));
        doc_free(d);
        return;
    }
    const iw_json *evs = iw_json_get(d, &d->nodes[0], "events");
    if (!evs || evs->type != IW_JSON_ARR || !iw_json_first(d, evs)) {
        doc_free(d);
        return;
    }
    if (!PUSH(r->docs, r->ndocs, r->capdocs)) {
        doc_free(d);
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
        trace(r, 2, "event %s", t && t->type == IW_JSON_STR ? t->str : "?");
    }
}

static const char *ev_type(const ev_entry *e) {
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

static void rx_process(run *r, const uint8_t *p, size_t n);

static void svc(run *r, int wait_ms) {
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
            cap_add(r, 1, k < 0 ? IWC_CHUNK_RST : IWC_CHUNK_FIN, NULL, 0);
            trace(r, 2, "IUT %s the connection", k < 0 ? "reset" : "closed");
            break;
        }
        cap_add(r, 1, IWC_CHUNK_DATA, buf, (size_t)k);
        r->rx_bytes += (uint64_t)k;
        rx_process(r, buf, (size_t)k);
    }
    free(buf);
}

/* Write octets to the IUT, servicing our receive side when the socket is
 * full. pieces: split points (offsets into p) for deliberately small TCP
 * segments. */
static void tx_write(run *r, const uint8_t *p, size_t n, const uint32_t *split, int nsplit) {
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
                trace(r, 1, "the IUT stopped reading: %zu octets not sent", n - done);
                return;
            }
            svc(r, 5);
            continue;
        }
        if (w <= 0) {
            /* The IUT closed (after a Terminate, say): not a verdict here. */
            r->tx_dead = true;
            trace(r, 1, "send failed: %s", strerror(errno));
            return;
        }
        cap_add(r, 0, IWC_CHUNK_DATA, p + done, (size_t)w);
        done += (size_t)w;
        if (si < nsplit && done == lim && done < n) {
            /* Let this piece leave as its own segment (TCP_NODELAY). */
            iwc_sleep_ms(2);
            svc(r, 0);
        }
    }
}

static void flush_held(run *r) {
    if (!r->held.len)
        return;
    tx_write(r, r->held.p, r->held.len, r->split, r->nsplit);
    r->held.len = 0;
    r->nsplit = 0;
}

/* ---- regions and the placement model ---- */

static int region_find_peer(run *r, uint32_t stag, uint64_t to, uint64_t len) {
    for (int i = 0; i < r->c->nregions; i++) {
        region_rt *g = &r->reg[i];
        if (!g->peer || g->stag != stag)
            continue;
        if (to < g->to || to - g->to > g->len || len > g->len - (to - g->to))
            return -2; /* right STag, outside its bounds */
        return i;
    }
    return -1;
}

static int region_find_iut(run *r, uint32_t stag, uint64_t to, uint64_t len) {
    for (int i = 0; i < r->c->nregions; i++) {
        region_rt *g = &r->reg[i];
        if (g->peer || g->gone || g->stag != stag)
            continue;
        if (to < g->to || to - g->to > g->len || len > g->len - (to - g->to))
            return -1;
        return i;
    }
    return -1;
}

/* p == NULL: the range's new content is unknown to the runner (the target
 * of an atomic: the IUT keeps the value in its own byte order). */
static void model_add(run *r, int region, uint64_t off, const uint8_t *p, size_t n, int frame) {
    model_op *o = PUSH(r->ops, r->nops, r->capops);
    if (!o)
        return;
    o->region = region;
    o->off = off;
    o->len = n;
    o->frame = frame;
    if (!p)
        return;
    o->bytes = malloc(n ? n : 1);
    if (o->bytes)
        memcpy(o->bytes, p, n);
    else
        r->nops--;
}

/* The expected content of an IUT region: its initial fill, then every
 * write_mr and every placement not rejected by a Terminate, in order.
 * *care (if given) gets 0 for octets whose content is unknown. */
static uint8_t *model_build_mask(run *r, int region, uint8_t **care) {
    region_rt *g = &r->reg[region];
    uint8_t *m = malloc(g->len ? g->len : 1);
    uint8_t *c = care ? malloc(g->len ? g->len : 1) : NULL;
    if (!m || (care && !c)) {
        free(m);
        free(c);
        return NULL;
    }
    memcpy(m, g->mem, g->len);
    if (c)
        memset(c, 1, g->len);
    for (int i = 0; i < r->nops; i++) {
        model_op *o = &r->ops[i];
        if (o->region != region || (o->frame >= 0 && r->sent[o->frame].rejected))
            continue;
        if (o->off > g->len || o->len > g->len - o->off)
            continue;
        if (o->bytes)
            memcpy(m + o->off, o->bytes, o->len);
        if (c)
            memset(c + o->off, o->bytes ? 1 : 0, o->len);
    }
    if (care)
        *care = c;
    return m;
}

static uint8_t *model_build(run *r, int region) { return model_build_mask(r, region, NULL); }

/* ---- expressions and data ---- */

static bool eval(run *r, int line, const iwc_expr *e, uint64_t *out) {
    uint64_t acc = 0;
    for (int i = 0; i < e->n; i++) {
        const iwc_term *t = &e->t[i];
        uint64_t v = t->num;
        if (t->ref) {
            const region_rt *g = &r->reg[t->region];
            v = t->field == IWC_F_STAG ? g->stag
                : t->field == IWC_F_TO ? g->to
                : t->field == IWC_F_LEN ? g->len
                                        : g->to + g->len;
        }
        switch (t->op) {
        case '+':
            acc += v;
            break;
        case '-':
            acc -= v;
            break;
        case '^':
            acc ^= v;
            break;
        case '|':
            acc |= v;
            break;
        case '&':
            acc &= v;
            break;
        default:
            error(r, line, "bad operator in expression");
            return false;
        }
    }
    *out = acc;
    return true;
}

static bool arg_num(run *r, const iwc_step *s, const char *key, uint64_t *out) {
    const iwc_arg *a = iwc_step_arg(s, key);
    if (!a || a->type != IWC_V_EXPR)
        return false;
    return eval(r, s->line, &a->e, out);
}

static uint64_t arg_num_or(run *r, const iwc_step *s, const char *key, uint64_t def) {
    uint64_t v;
    return arg_num(r, s, key, &v) ? v : def;
}

/* Materialise a data spec. len: the length for pat/fill/@ (hex has its
 * own). Returns a malloc'd buffer and its length in *n. */
static uint8_t *data_make(run *r, int line, const iwc_data *d, uint64_t len, size_t *n) {
    if (d->kind == IWC_DATA_HEX)
        len = d->hexlen;
    if (len > (64u << 20)) {
        error(r, line, "data length %llu is too large", (unsigned long long)len);
        return NULL;
    }
    uint8_t *b = malloc(len ? len : 1);
    if (!b) {
        error(r, line, "out of memory");
        return NULL;
    }
    switch (d->kind) {
    case IWC_DATA_PAT:
        iwc_pattern(d->byte, 0, b, len);
        break;
    case IWC_DATA_FILL:
        memset(b, d->byte, len);
        break;
    case IWC_DATA_HEX:
        memcpy(b, d->hex, len);
        break;
    case IWC_DATA_REF: {
        region_rt *g = &r->reg[d->region];
        uint8_t *src = g->peer ? g->mem : model_build(r, d->region);
        if (!src || d->off > g->len || len > g->len - d->off) {
            if (!g->peer)
                free(src);
            free(b);
            error(r, line, "@%s+%llu: %llu octets are outside the region",
                  r->c->regions[d->region].name, (unsigned long long)d->off,
                  (unsigned long long)len);
            return NULL;
        }
        memcpy(b, src + d->off, len);
        if (!g->peer)
            free(src);
        break;
    }
    default:
        memset(b, 0, len);
        break;
    }
    *n = (size_t)len;
    return b;
}

/* ---- receive side ---- */

static void send_answer(run *r, iw_rdmap_msg *m, const uint8_t *pay, size_t paylen);

static void peer_place(run *r, const rx_frame *f, const char *what) {
    const iw_rdmap_msg *m = &f->msg;
    if (!m->payload_len)
        return; /* RFC 5041 §5.2: a zero-length tagged segment is not checked */
    int ri = region_find_peer(r, m->ddp.stag, m->ddp.to, m->payload_len);
    if (ri < 0) {
        fail(r, 0,
             "the IUT sent %s for STag 0x%08x TO 0x%llx (%zu octets), which is %s the runner's "
             "regions",
             what, m->ddp.stag, (unsigned long long)m->ddp.to, m->payload_len,
             ri == -2 ? "outside the bounds of" : "none of");
        return;
    }
    region_rt *g = &r->reg[ri];
    memcpy(g->mem + (m->ddp.to - g->to), m->payload, m->payload_len);
}

static void peer_read_req(run *r, const rx_frame *f) {
    const iw_rdmap_read_req *q = &f->msg.u.read_req;
    const uint8_t *src = NULL;
    if (q->read_size) {
        int ri = region_find_peer(r, q->src_stag, q->src_to, q->read_size);
        if (ri < 0) {
            fail(r, 0,
                 "the IUT sent a Read Request for source STag 0x%08x TO 0x%llx size %u, which "
                 "is %s the runner's regions",
                 q->src_stag, (unsigned long long)q->src_to, q->read_size,
                 ri == -2 ? "outside the bounds of" : "none of");
            return;
        }
        src = r->reg[ri].mem + (q->src_to - r->reg[ri].to);
    }
    /* RFC 5040 §5.2.1: Read Responses carry the Data Sink STag/TO as given,
     * segmented to our MULPDU, L on the last. Size 0 (an RTR) gets one
     * zero-length Read Response. */
    uint32_t room = iw_mpa_mulpdu(EMSS, r->tx.flags & IW_MPA_MARKERS) - IW_DDP_TAGGED_HDR_LEN;
    uint32_t off = 0;
    do {
        uint32_t seg = q->read_size - off < room ? q->read_size - off : room;
        iw_rdmap_msg m = iw_rdmap_msg_tagged(IW_OP_READ_RESP, q->sink_stag, q->sink_to + off,
                                             off + seg == q->read_size);
        send_answer(r, &m, src ? src + off : NULL, seg);
        off += seg;
    } while (off < q->read_size);
}

static uint64_t rd64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8); /* the runner's memory holds host-order values, as an RNIC's would */
    return v;
}

static void peer_atomic(run *r, const rx_frame *f) {
    const iw_rdmap_atomic_req *a = &f->msg.u.atomic_req;
    int ri = region_find_peer(r, a->stag, a->to, 8);
    if (ri < 0 || (a->to & 7)) {
        fail(r, 0, "the IUT sent an Atomic Request for STag 0x%08x TO 0x%llx, %s",
             a->stag, (unsigned long long)a->to,
             ri >= 0 ? "which is not 64-bit aligned (RFC 7306 §5.1.1)"
                     : "which is not in the runner's regions");
        return;
    }
    uint8_t *p = r->reg[ri].mem + (a->to - r->reg[ri].to);
    uint64_t orig = rd64(p), val = iw_rdmap_atomic_result(a, orig);
    memcpy(p, &val, 8);
    /* RFC 7306 §5: QN 3 MSNs in request order */
    iw_rdmap_msg m = iw_rdmap_msg_untagged(IW_OP_ATOMIC_RESP, IW_QN_ATOMIC_RESP,
                                           r->tx.msn[IW_QN_ATOMIC_RESP]++, 0, true);
    m.u.atomic_resp.req_id = a->req_id;
    m.u.atomic_resp.orig = orig;
    send_answer(r, &m, NULL, 0);
}

static void peer_untagged(run *r, const rx_frame *f) {
    const iw_rdmap_msg *m = &f->msg;
    peer_msg *pm = NULL;
    for (int i = 0; i < r->npm; i++)
        if (!r->pm[i].done && r->pm[i].msn == m->ddp.msn)
            pm = &r->pm[i];
    if (!pm) {
        pm = PUSH(r->pm, r->npm, r->cappm);
        if (!pm)
            return;
        pm->msn = m->ddp.msn;
        pm->opcode = m->opcode;
    }
    size_t need = (size_t)m->ddp.mo + m->payload_len;
    if (m->payload_len) {
        if (pm->data.len < need) {
            size_t add = need - pm->data.len;
            uint8_t *z = calloc(1, add);
            if (z) {
                iwc_buf_add(&pm->data, z, add);
                free(z);
            }
        }
        if (pm->data.len >= need)
            memcpy(pm->data.p + m->ddp.mo, m->payload, m->payload_len);
    }
    if (m->opcode == IW_OP_SEND_INV || m->opcode == IW_OP_SEND_SE_INV)
        pm->inv = m->ddp.rsvd_ulp2;
    if (m->opcode == IW_OP_IMM || m->opcode == IW_OP_IMM_SE) {
        pm->has_imm = true;
        memcpy(pm->imm, m->u.imm, IW_RDMAP_IMM_LEN);
    }
    if (m->ddp.last) {
        pm->done = true;
        /* RFC 6581 §9: a p2p initiator's first FPDU may be the zero-length Send RTR. */
        if (m->opcode == IW_OP_SEND && need == 0 && m->ddp.msn == 1 && r->theirs_got &&
            r->theirs.v2.p2p && r->c->role == IWC_IUT_INITIATOR)
            pm->rtr = true;
    }
}

static void rx_fpdu(run *r, int idx) {
    rx_frame *f = &r->rx[idx];
    char tb[160];
    if (f->verdict.kind != IW_VERDICT_OK) {
        fail(r, 0, "the IUT sent an FPDU (stream offset %llu) that a receiver must reject: %s",
             (unsigned long long)f->off,
             f->verdict.kind == IW_VERDICT_TERM ? triple_str(f->verdict.term, tb, sizeof tb)
                                                : iw_close_str(f->verdict.close));
        return;
    }
    if (f->rverdict.kind != IW_VERDICT_OK) {
        fail(r, 0,
             "the IUT sent a malformed DDP/RDMAP segment (stream offset %llu): a receiver "
             "answers it with Terminate %s (%s)",
             (unsigned long long)f->off, triple_str(f->rverdict.term, tb, sizeof tb),
             f->rverdict.rfc ? f->rverdict.rfc : "");
        return;
    }
    const iw_rdmap_msg *m = &f->msg;
    trace(r, 2, "IUT -> %s (%zu octets)", iw_rdmap_opcode_str(m->opcode), m->payload_len);
    if (r->term_idx >= 0)
        return; /* counted by expect terminate: nothing may follow a Terminate */
    if (m->opcode == IW_OP_TERMINATE) {
        r->term_idx = idx;
        return;
    }
    if (r->c->role == IWC_IUT_RESPONDER && !r->any_fpdu_sent && !r->rule4_reported) {
        r->rule4_reported = true;
        fail(r, 0,
             "the IUT (MPA responder) sent an FPDU before it received one (RFC 5044 §7.1.2 "
             "rule 4)");
    }
    switch (m->opcode) {
    case IW_OP_WRITE:
        peer_place(r, f, "an RDMA Write");
        break;
    case IW_OP_READ_RESP:
        peer_place(r, f, "a Read Response");
        break;
    case IW_OP_READ_REQ:
        /* A zero-length Read (an RTR) is answered even in manual mode. */
        if (m->has_hdr && (!r->c->answer_manual || !m->u.read_req.read_size))
            peer_read_req(r, f);
        break;
    case IW_OP_ATOMIC_REQ:
        if (m->has_hdr && !r->c->answer_manual)
            peer_atomic(r, f);
        break;
    case IW_OP_SEND:
    case IW_OP_SEND_INV:
    case IW_OP_SEND_SE:
    case IW_OP_SEND_SE_INV:
    case IW_OP_IMM:
    case IW_OP_IMM_SE:
        peer_untagged(r, f);
        break;
    default:
        break;
    }
}

static void rx_mpa_frame(run *r, const iw_mpa_rr *rr, const iw_verdict *v, bool ok, size_t len) {
    rx_frame *f = PUSH(r->rx, r->nrx, r->caprx);
    if (!f)
        return;
    f->type = ok ? RXF_RR : RXF_RR_BAD;
    f->t_us = iwc_now_us();
    f->wire_len = len;
    f->rr = *rr;
    if (rr->pd && rr->pd_len <= IW_MPA_PD_MAX) {
        memcpy(f->pd, rr->pd, rr->pd_len);
        f->rr.ulp_pd = rr->ulp_pd ? f->pd + (rr->ulp_pd - rr->pd) : NULL;
        f->rr.pd = f->pd;
    } else {
        f->rr.pd = f->rr.ulp_pd = NULL;
    }
    f->verdict = *v;
    if (ok) {
        r->theirs = f->rr;
        r->theirs_got = true;
    }
    trace(r, 2, "IUT -> MPA %s%s", rr->type == IW_MPA_REPLY ? "Reply" : "Request",
          ok ? "" : " (invalid)");
}

static void rx_fpdus(run *r, const uint8_t *p, size_t n) {
    if (!r->df) {
        if (!r->mine_sent) {
            fail(r, 0, "the IUT sent %zu octets after its MPA frame before the runner sent "
                       "its own (RFC 5044 §7.1.2)", n);
            r->rx_lost = true;
            return;
        }
        r->df = malloc(sizeof *r->df);
        if (!r->df)
            return;
        /* Their FPDUs carry markers iff we asked (our M bit); CRCs iff either
         * side set C (RFC 5044 §7.1.1). */
        iw_df_cfg cfg = {IW_DF_START_FPDU, r->mine.m ? IW_DF_ON : IW_DF_OFF,
                         r->mine.c || r->theirs.c ? IW_DF_ON : IW_DF_OFF, 0};
        iw_deframer_init(r->df, &cfg);
        r->rx_full = true;
    }
    size_t off = 0;
    while (off < n) {
        iw_frame fr;
        iw_ssize k = iw_deframer_feed(r->df, p + off, n - off, &fr);
        if (k < 0)
            return;
        off += (size_t)k;
        if (fr.type == IW_FRAME_FPDU) {
            rx_frame *f = PUSH(r->rx, r->nrx, r->caprx);
            if (!f)
                return;
            f->type = RXF_FPDU;
            f->t_us = iwc_now_us();
            f->off = fr.wire_off;
            f->wire_len = fr.wire_len;
            f->verdict = fr.verdict;
            f->ulpdu_len = fr.fpdu.ulpdu_len;
            f->ulpdu = malloc(f->ulpdu_len ? f->ulpdu_len : 1);
            if (!f->ulpdu) {
                r->nrx--;
                return;
            }
            if (f->ulpdu_len && fr.fpdu.ulpdu)
                memcpy(f->ulpdu, fr.fpdu.ulpdu, f->ulpdu_len);
            iw_rdmap_decode(&f->msg, f->ulpdu, f->ulpdu_len, &f->rverdict);
            rx_fpdu(r, r->nrx - 1);
        } else if (k == 0) {
            return;
        }
    }
}

static void rx_process(run *r, const uint8_t *p, size_t n) {
    if (r->rx_lost || !n)
        return;
    if (r->rx_full || r->theirs_got) {
        if (r->rejected) {
            /* MPA exited on R=1 (RFC 5044 §7.1.2 rule 3): nothing is framed. */
            fail(r, 0, "the IUT sent %zu octets after an MPA Reply with R=1", n);
            r->rx_lost = true;
            return;
        }
        rx_fpdus(r, p, n);
        return;
    }
    if (iwc_buf_add(&r->rx_rr, p, n) < 0)
        return;
    iw_mpa_rr rr;
    iw_verdict v;
    iw_ssize k = iw_mpa_rr_decode(&rr, r->rx_rr.p, r->rx_rr.len, &v);
    if (k == IW_ERR_NEED_MORE)
        return;
    if (k < 0) {
        rx_mpa_frame(r, &rr, &v, false, r->rx_rr.len);
        r->rx_lost = true;
        return;
    }
    rx_mpa_frame(r, &rr, &v, true, (size_t)k);
    if (rr.type == IW_MPA_REPLY && rr.r)
        r->rejected = true;
    size_t left = r->rx_rr.len - (size_t)k;
    if (left) {
        uint8_t *rest = malloc(left);
        if (rest) {
            memcpy(rest, r->rx_rr.p + k, left);
            r->rx_rr.len = 0;
            rx_process(r, rest, left);
            free(rest);
        }
    }
    r->rx_rr.len = 0;
}

/* ---- sending ---- */

static sent_frame *sent_push(run *r, int line, uint8_t kind, bool fpdu) {
    sent_frame *s = PUSH(r->sent, r->nsent, r->capsent);
    if (s) {
        s->line = line;
        s->kind = kind;
        s->fpdu = fpdu;
        s->region = -1;
    }
    return s;
}

/* Start our Full Operation once both MPA frames are known. */
static bool tx_ready(run *r, int line) {
    if (r->tx_full)
        return true;
    if (!r->mine_sent || !r->theirs_got) {
        error(r, line, "cannot send an FPDU before both MPA frames were exchanged");
        return false;
    }
    /* Our FPDUs carry markers iff the IUT asked (its M), CRCs iff either C. */
    iwc_tx_start(&r->tx, r->theirs.m, r->mine.c || r->theirs.c);
    r->tx_full = true;
    return true;
}

/* Frame one segment, hold it, record it (model placement for tagged). */
static int frame_out(run *r, int line, uint8_t kind, const iwc_buf *seg, const iwc_mut *mut,
                     size_t pay_off) {
    char err[256];
    uint8_t *ul = NULL;
    size_t ull = 0;
    if (iwc_fpdu_build(&r->tx, seg->p, seg->len, mut, &r->held, &ul, &ull, err, sizeof err) < 0) {
        error(r, line, "%s", err);
        return -1;
    }
    sent_frame *s = sent_push(r, line, kind, true);
    if (!s) {
        free(ul);
        return -1;
    }
    s->ulpdu = ul;
    s->ulpdu_len = ull;
    s->pay_off = pay_off;
    r->any_fpdu_sent = true;
    /* A Write or Read Response into an IUT region: expected to land unless a
     * Terminate rejects it (expect terminate). */
    /* An aligned Atomic Request into an IUT region changes 8 octets we
     * cannot predict octet by octet (RFC 7306 §5.1: the IUT's byte order). */
    if (!r->sent_term && ull >= IW_DDP_UNTAGGED_HDR_LEN + IW_RDMAP_ATOMIC_REQ_LEN &&
        !(ul[0] & IW_DDP_CTRL_T) && (ul[1] & IW_RDMAP_CTRL_OPCODE) == IW_OP_ATOMIC_REQ) {
        iw_rdmap_msg am;
        iw_verdict av;
        if (iw_rdmap_decode(&am, ul, ull, &av) >= 0 && am.has_hdr && !(am.u.atomic_req.to & 7)) {
            int ri = region_find_iut(r, am.u.atomic_req.stag, am.u.atomic_req.to, 8);
            if (ri >= 0)
                model_add(r, ri, am.u.atomic_req.to - r->reg[ri].to, NULL, 8, r->nsent - 1);
        }
    }
    /* RFC 5040 §5.4, §6.2.1: after our Terminate the stream is over. */
    if (!r->sent_term && ull >= IW_DDP_TAGGED_HDR_LEN && (ul[0] & IW_DDP_CTRL_T) && ull > pay_off) {
        iw_ddp_hdr h;
        if (iw_ddp_decode_hdr(&h, ul, ull) > 0) {
            unsigned op = h.rsvd_ulp & IW_RDMAP_CTRL_OPCODE;
            size_t pl = ull - pay_off;
            int ri = region_find_iut(r, h.stag, h.to, pl);
            if ((op == IW_OP_WRITE || op == IW_OP_READ_RESP) && ri >= 0) {
                s->region = ri;
                s->roff = h.to - r->reg[ri].to;
                s->rlen = pl;
                model_add(r, ri, s->roff, ul + pay_off, pl, r->nsent - 1);
            }
        }
    }
    return 0;
}

static void send_answer(run *r, iw_rdmap_msg *m, const uint8_t *pay, size_t paylen) {
    if (r->tx_dead || !r->tx_full || r->sent_term)
        return;
    iwc_buf seg = {0};
    if (iwc_seg_encode(m, pay, paylen, &seg) == 0) {
        flush_held(r);
        if (frame_out(r, 0, 0, &seg, NULL, seg.len - paylen) == 0)
            flush_held(r);
    }
    iwc_buf_free(&seg);
}

/* A message skeleton: the library's (RFC 5040 §4.2, RFC 7306 §4), the one
 * table the decoder judges with; an undefined opcode keeps QN 0 untagged. */
static void msg_defaults(iw_rdmap_msg *m, unsigned opcode) { (void)iw_rdmap_msg_init(m, opcode); }

static const uint8_t send_opcode[] = {
    [IWC_SEND_WRITE] = IW_OP_WRITE,       [IWC_SEND_READ_REQ] = IW_OP_READ_REQ,
    [IWC_SEND_READ_RESP] = IW_OP_READ_RESP, [IWC_SEND_SEND] = IW_OP_SEND,
    [IWC_SEND_SEND_INV] = IW_OP_SEND_INV, [IWC_SEND_SEND_SE] = IW_OP_SEND_SE,
    [IWC_SEND_SEND_SE_INV] = IW_OP_SEND_SE_INV, [IWC_SEND_TERM] = IW_OP_TERMINATE,
    [IWC_SEND_IMM] = IW_OP_IMM,           [IWC_SEND_IMM_SE] = IW_OP_IMM_SE,
    [IWC_SEND_ATOMIC] = IW_OP_ATOMIC_REQ, [IWC_SEND_ATOMIC_RESP] = IW_OP_ATOMIC_RESP,
};

static bool mut_from(run *r, const iwc_step *s, iwc_mut *mu) {
    memset(mu, 0, sizeof *mu);
    uint64_t v;
    if (arg_num(r, s, "trunc", &v)) {
        mu->trunc_set = true;
        mu->trunc = (size_t)v;
    }
    if (arg_num(r, s, "extra", &v))
        mu->extra = (size_t)(v > 65535 ? 65535 : v);
    if (arg_num(r, s, "ulpdu-len", &v)) {
        mu->len_set = true;
        mu->ulpdu_len = (uint16_t)v;
    }
    if (arg_num(r, s, "marker.fpduptr", &v)) {
        mu->mark_set = true;
        mu->mark_delta = (int64_t)v;
    }
    if (arg_num(r, s, "marker.lead", &v)) {
        mu->lead_set = true;
        mu->lead_delta = (int64_t)v;
    }
    if (arg_num(r, s, "pad", &v)) {
        mu->pad_set = true;
        mu->pad = (uint8_t)v;
    }
    const iwc_arg *c = iwc_step_arg(s, "crc");
    if (c && c->word)
        mu->crc = !strcmp(c->word, "bad") ? IWC_CRC_BAD
                  : !strcmp(c->word, "zero") ? IWC_CRC_ZERO
                                             : IWC_CRC_GOOD;
    return !r->abort_steps;
}

static void ensure_recv(run *r, int line) {
    if (r->recv_posted || !r->c->recv_count)
        return;
    r->recv_posted = true;
    char req[128];
    snprintf(req, sizeof req, "{\"op\":\"post_recv\",\"len\":%u,\"count\":%u}", r->c->recv_len,
             r->c->recv_count);
    doc_free(agent_ok(r, line, req, "post_recv"));
}

static void step_send_fpdu(run *r, const iwc_step *s) {
    if (!tx_ready(r, s->line))
        return;
    ensure_recv(r, s->line);
    if (r->abort_steps)
        return;
    iw_rdmap_msg m;
    unsigned op = send_opcode[s->sub];
    msg_defaults(&m, op);
    uint64_t v;
    /* Header fields as the step gives them; everything else as RFC 5040 says. */
    if (arg_num(r, s, "stag", &v))
        m.ddp.stag = (uint32_t)v;
    if (arg_num(r, s, "to", &v))
        m.ddp.to = v;
    if (arg_num(r, s, "qn", &v))
        m.ddp.qn = (uint32_t)v;
    bool auto_msn = !m.ddp.tagged;
    if (arg_num(r, s, "msn", &v)) {
        m.ddp.msn = (uint32_t)v;
        auto_msn = false;
    }
    if (arg_num(r, s, "mo", &v))
        m.ddp.mo = (uint32_t)v;
    if (arg_num(r, s, "inv", &v))
        m.ddp.rsvd_ulp2 = (uint32_t)v;
    if (arg_num(r, s, "dv", &v))
        m.ddp.dv = (uint8_t)(v & 3);
    if (arg_num(r, s, "rv", &v))
        m.rv = (uint8_t)(v & 3);
    if (arg_num(r, s, "rsvd", &v))
        m.ddp.rsvd = (uint8_t)(v & 0xF);
    if (arg_num(r, s, "rsv", &v))
        m.rsv = (uint8_t)(v & 3);
    uint64_t last = arg_num_or(r, s, "last", 1);
    bool tagged_forced = arg_num(r, s, "tagged", &v);
    if (tagged_forced)
        m.ddp.tagged = v != 0;
    if (arg_num(r, s, "opcode", &v))
        m.opcode = (uint8_t)(v & 0xF);
    switch (s->sub) {
    case IWC_SEND_READ_REQ:
        m.u.read_req.sink_stag = (uint32_t)arg_num_or(r, s, "sink-stag", 0);
        m.u.read_req.sink_to = arg_num_or(r, s, "sink-to", 0);
        m.u.read_req.read_size = (uint32_t)arg_num_or(r, s, "size", 0);
        m.u.read_req.src_stag = (uint32_t)arg_num_or(r, s, "src-stag", 0);
        m.u.read_req.src_to = arg_num_or(r, s, "src-to", 0);
        break;
    case IWC_SEND_ATOMIC: {
        iw_rdmap_atomic_req *a = &m.u.atomic_req;
        const iwc_arg *opa = iwc_step_arg(s, "op");
        a->aopcode = IW_ATOMIC_FETCH_ADD;
        if (opa && opa->type == IWC_V_WORD)
            a->aopcode = !strcmp(opa->word, "cmp-swap") ? IW_ATOMIC_CMP_SWAP : IW_ATOMIC_FETCH_ADD;
        else if (opa && eval(r, s->line, &opa->e, &v))
            a->aopcode = (uint8_t)(v & 0xF);
        a->req_id = (uint32_t)arg_num_or(r, s, "req-id", 0x1000u + (unsigned)r->nsent);
        a->stag = m.ddp.stag;
        a->to = m.ddp.to;
        m.ddp.stag = 0;
        m.ddp.to = 0;
        bool fa = a->aopcode == IW_ATOMIC_FETCH_ADD;
        a->add_swap = fa ? arg_num_or(r, s, "add", 0) : arg_num_or(r, s, "swap", 0);
        a->add_swap_mask =
            fa ? arg_num_or(r, s, "add-mask", 0) : arg_num_or(r, s, "swap-mask", ~0ull);
        /* RFC 7306 §5.2.1: FetchAdd sends Compare Data 0, Compare Mask all ones. */
        a->compare = fa ? 0 : arg_num_or(r, s, "compare", 0);
        a->compare_mask = fa ? ~0ull : arg_num_or(r, s, "compare-mask", ~0ull);
        break;
    }
    case IWC_SEND_ATOMIC_RESP:
        m.u.atomic_resp.req_id = (uint32_t)arg_num_or(r, s, "req-id", 0);
        m.u.atomic_resp.orig = arg_num_or(r, s, "orig", 0);
        break;
    case IWC_SEND_TERM: {
        iw_rdmap_term *t = &m.u.term;
        t->layer = (uint8_t)iw_term_layer(s->triple);
        t->etype = (uint8_t)iw_term_etype(s->triple);
        t->ecode = (uint8_t)iw_term_ecode(s->triple);
        t->m = arg_num_or(r, s, "m", 0) != 0;
        t->d = arg_num_or(r, s, "d", 0) != 0;
        t->ddp_seg_len = (uint16_t)arg_num_or(r, s, "seglen", 0);
        break;
    }
    default:
        break;
    }
    if (r->abort_steps)
        return;
    /* Payload. */
    uint8_t *pay = NULL;
    size_t paylen = 0;
    const iwc_arg *da = iwc_step_arg(s, "data");
    uint64_t len = arg_num_or(r, s, "len", 0);
    bool has_pay = s->sub == IWC_SEND_WRITE || s->sub == IWC_SEND_READ_RESP ||
                   s->sub == IWC_SEND_SEND || s->sub == IWC_SEND_SEND_INV ||
                   s->sub == IWC_SEND_SEND_SE || s->sub == IWC_SEND_SEND_SE_INV;
    if (s->sub == IWC_SEND_IMM || s->sub == IWC_SEND_IMM_SE) {
        iwc_data d8 = {IWC_DATA_PAT, (uint8_t)(r->step_seed + 1), 0, 0, NULL, 0};
        size_t k = 0;
        uint8_t *b = data_make(r, s->line, da ? &da->d : &d8, 8, &k);
        if (!b)
            return;
        memcpy(m.u.imm, b, k < 8 ? k : 8);
        free(b);
    } else if (has_pay) {
        iwc_data dp = {IWC_DATA_PAT, (uint8_t)(r->step_seed + 1), 0, 0, NULL, 0};
        pay = data_make(r, s->line, da ? &da->d : &dp, len, &paylen);
        if (!pay)
            return;
    }
    iwc_buf termhdr = {0};
    const iwc_arg *ha = iwc_step_arg(s, "hdr");
    if (s->sub == IWC_SEND_TERM && ha && ha->type == IWC_V_DATA) {
        size_t k = 0;
        uint8_t *b = data_make(r, s->line, &ha->d, 0, &k);
        if (!b) {
            free(pay);
            return;
        }
        iwc_buf_add(&termhdr, b, k);
        free(b);
        m.u.term.d = true;
        m.u.term.ddp_raw = termhdr.p;
        m.u.term.ddp_raw_len = k;
    }
    iwc_mut mu;
    if (!mut_from(r, s, &mu)) {
        free(pay);
        iwc_buf_free(&termhdr);
        return;
    }
    uint64_t repeat = arg_num_or(r, s, "repeat", 1);
    if (repeat < 1 || repeat > 64)
        repeat = 1;
    /* Segment size: seg= or our MULPDU (RFC 5044 §4.5, RFC 5041 §5.2). */
    size_t hl = m.ddp.tagged ? IW_DDP_TAGGED_HDR_LEN : IW_DDP_UNTAGGED_HDR_LEN;
    size_t room = iw_mpa_mulpdu(EMSS, r->tx.flags & IW_MPA_MARKERS) - hl;
    uint64_t segv;
    if (arg_num(r, s, "seg", &segv) && segv > 0)
        room = (size_t)segv;
    /* Every segment is kept (framed octets, the model's placement): a
     * bound keeps a tiny seg= on a large message from exhausting memory. */
    uint64_t nseg = has_pay && paylen ? (paylen + room - 1) / room : 1;
    if (nseg * repeat > IWC_FPDUS_MAX - (unsigned)r->nsent) {
        error(r, s->line,
              "send: %llu FPDU(s) of at most %zu payload octets would make this case send more "
              "than %u FPDUs (raise seg= or shorten the message)",
              (unsigned long long)(nseg * repeat), room, IWC_FPDUS_MAX);
        free(pay);
        iwc_buf_free(&termhdr);
        return;
    }
    for (uint64_t k = 0; k < repeat && !r->abort_steps; k++) {
        iw_rdmap_msg mk = m;
        if (auto_msn && mk.ddp.qn < 4)
            mk.ddp.msn = r->tx.msn[mk.ddp.qn]++;
        size_t off = 0;
        do {
            size_t seg = has_pay ? (paylen - off < room ? paylen - off : room) : 0;
            iw_rdmap_msg ms = mk;
            if (ms.ddp.tagged)
                ms.ddp.to = mk.ddp.to + off;
            else
                ms.ddp.mo = mk.ddp.mo + (uint32_t)off;
            bool final = off + seg >= paylen;
            ms.ddp.last = final ? last != 0 : false;
            iwc_buf sb = {0};
            int rc = iwc_seg_encode(&ms, pay ? pay + off : NULL, seg, &sb);
            if (rc < 0) {
                error(r, s->line, "encoder refused this message: %s", iw_strerror(rc));
                iwc_buf_free(&sb);
                break;
            }
            /* Mutations apply to the last segment: the one a Terminate answers. */
            frame_out(r, s->line, s->sub, &sb, final ? &mu : NULL, sb.len - seg);
            if (s->sub == IWC_SEND_TERM)
                r->sent_term = true;
            iwc_buf_free(&sb);
            off += seg;
        } while (off < paylen);
    }
    free(pay);
    iwc_buf_free(&termhdr);
}

/* Our MPA Request or Reply from the case's peer: settings. */
static void mine_from_cfg(run *r, iw_mpa_rr *rr, iw_mpa_rr_type type) {
    const iwc_mpa_cfg *p = &r->c->peer_mpa;
    memset(rr, 0, sizeof *rr);
    rr->type = type;
    rr->m = p->markers == 1;
    rr->c = p->crc != 0; /* RFC 5044 §4.4: CRCs by default */
    rr->rev = (uint8_t)(p->rev >= 0 ? p->rev : IW_MPA_REV2);
    rr->s = p->s >= 0 ? p->s != 0 : rr->rev >= IW_MPA_REV2;
    rr->r = p->r == 1;
    rr->res = (uint8_t)(p->res >= 0 ? p->res : 0);
    rr->v2.p2p = p->p2p == 1;
    int bits = p->rtr >= 0 ? p->rtr : 7;
    if (type == IW_MPA_REPLY && r->theirs_got && p->rtr < 0) {
        /* RFC 6581 §9.2: the requested RTRs we support (all), at least one. */
        bits = (r->theirs.v2.rtr_send ? 1 : 0) | (r->theirs.v2.rtr_write ? 2 : 0) |
               (r->theirs.v2.rtr_read ? 4 : 0);
        if (!bits)
            bits = 2;
    }
    if (type == IW_MPA_REPLY && r->theirs_got && p->p2p < 0)
        rr->v2.p2p = r->theirs.v2.p2p; /* §9.2: A=1 back when asked */
    if (rr->v2.p2p) {
        rr->v2.rtr_send = bits & 1;
        rr->v2.rtr_write = (bits & 2) != 0;
        rr->v2.rtr_read = (bits & 4) != 0;
    }
    rr->v2.ird = (uint16_t)(p->ird >= 0 ? p->ird : 16);
    rr->v2.ord = (uint16_t)(p->ord >= 0 ? p->ord : 16);
    if (type == IW_MPA_REPLY && r->theirs_got && r->theirs.enhanced && p->ord < 0) {
        /* RFC 6581 §9.1: responder ORD <= initiator IRD; 0x3FFF: no negotiation. */
        uint16_t iird = r->theirs.v2.ird;
        rr->v2.ord = iird == IW_MPA_V2_NO_NEG ? IW_MPA_V2_NO_NEG : (iird < 16 ? iird : 16);
    }
    if (type == IW_MPA_REPLY && r->theirs_got && r->theirs.enhanced && p->ird < 0 &&
        r->theirs.v2.ord == IW_MPA_V2_NO_NEG)
        rr->v2.ird = IW_MPA_V2_NO_NEG;
    if (p->has_pd && p->pd_len <= IW_MPA_PD_MAX - (rr->s ? 4 : 0)) {
        memcpy(r->mine_pd, p->pd, p->pd_len);
        rr->ulp_pd = r->mine_pd;
        rr->ulp_pd_len = (uint16_t)p->pd_len;
    }
}

static void record_mine(run *r, const iw_mpa_rr *rr) {
    r->mine = *rr;
    r->mine.pd = r->mine.ulp_pd = NULL; /* only flags and v2 are used later */
    r->mine_sent = true;
    sent_push(r, 0, rr->type == IW_MPA_REQUEST ? IWC_SEND_MPA_REQUEST : IWC_SEND_MPA_REPLY,
              false);
}

/* send: mpa-request / mpa-reply with patches (startup: tcp). */
static void step_send_rr(run *r, const iwc_step *s) {
    iw_mpa_rr rr;
    iw_mpa_rr_type type = s->sub == IWC_SEND_MPA_REQUEST ? IW_MPA_REQUEST : IW_MPA_REPLY;
    mine_from_cfg(r, &rr, type);
    uint64_t v;
    if (arg_num(r, s, "m", &v))
        rr.m = v != 0;
    if (arg_num(r, s, "c", &v))
        rr.c = v != 0;
    if (arg_num(r, s, "r", &v))
        rr.r = v != 0;
    if (arg_num(r, s, "rev", &v))
        rr.rev = (uint8_t)v;
    if (arg_num(r, s, "s", &v))
        rr.s = v != 0;
    if (arg_num(r, s, "res", &v))
        rr.res = (uint8_t)(v & 0xF);
    if (arg_num(r, s, "p2p", &v))
        rr.v2.p2p = v != 0;
    if (arg_num(r, s, "ird", &v))
        rr.v2.ird = (uint16_t)(v & 0x3FFF);
    if (arg_num(r, s, "ord", &v))
        rr.v2.ord = (uint16_t)(v & 0x3FFF);
    const iwc_arg *ra = iwc_step_arg(s, "rtr");
    if (ra && ra->word) {
        rr.v2.rtr_send = strstr(ra->word, "send") != NULL;
        rr.v2.rtr_write = strstr(ra->word, "write") != NULL;
        rr.v2.rtr_read = strstr(ra->word, "read") != NULL;
    }
    iwc_rr_mut mu = {NULL, -1, 0, NULL, 0};
    char key[IW_MPA_KEY_LEN + 1];
    const iwc_arg *ka = iwc_step_arg(s, "key");
    if (ka && ka->word) {
        if (!strcmp(ka->word, "req") || !strcmp(ka->word, "rep")) {
            memcpy(key, ka->word[2] == 'q' ? IW_MPA_KEY_REQ : IW_MPA_KEY_REP, IW_MPA_KEY_LEN);
        } else if (strlen(ka->word) == IW_MPA_KEY_LEN) {
            memcpy(key, ka->word, IW_MPA_KEY_LEN);
        } else {
            error(r, s->line, "key: wants req, rep or exactly 16 characters");
            return;
        }
        mu.key = key;
    }
    if (arg_num(r, s, "pd-len", &v))
        mu.pd_len = (int)(v & 0xFFFF);
    uint8_t *big = NULL;
    const iwc_arg *pa = iwc_step_arg(s, "pd");
    if (pa && pa->type == IWC_V_DATA) {
        size_t n = 0;
        big = data_make(r, s->line, &pa->d, arg_num_or(r, s, "pd-size", 0), &n);
        if (!big)
            return;
        size_t cap = IW_MPA_PD_MAX - (rr.s ? IW_MPA_V2_DATA_LEN : 0);
        size_t fit = n < cap ? n : cap;
        memcpy(r->mine_pd, big, fit);
        rr.ulp_pd = r->mine_pd;
        rr.ulp_pd_len = (uint16_t)fit;
        if (n > cap) {
            mu.pd_big = big + fit;
            mu.pd_big_len = n - fit;
        }
    }
    if (arg_num(r, s, "trunc", &v))
        mu.trunc = (size_t)v;
    char err[256];
    iwc_buf out = {0};
    if (iwc_rr_build(&rr, &mu, &out, err, sizeof err) < 0) {
        error(r, s->line, "%s", err);
    } else {
        record_mine(r, &rr);
        iwc_buf_add(&r->held, out.p, out.len);
        const iwc_arg *sp = iwc_step_arg(s, "split");
        r->nsplit = 0;
        for (int i = 0; sp && i < sp->nlist; i++)
            r->split[r->nsplit++] = (uint32_t)sp->list[i];
        if (!arg_num_or(r, s, "hold", 0))
            flush_held(r);
    }
    free(big);
    iwc_buf_free(&out);
}

/* ---- MPA startup (startup: auto) and the RTR ---- */

static bool wait_for(run *r, bool (*cond)(run *), int ms) {
    uint64_t deadline = iwc_now_us() + (uint64_t)ms * 1000;
    while (!cond(r)) {
        if (r->abort_steps || iwc_now_us() >= deadline)
            return cond(r);
        svc(r, 10);
        if (r->eof && !cond(r)) {
            svc(r, 0);
            return cond(r);
        }
    }
    return true;
}

static bool have_theirs(run *r) { return r->theirs_got || r->rx_lost; }

static bool never(run *r) {
    (void)r;
    return false;
}

/* --reply-settle-ms: an IUT that switches its socket to FPDU mode only after
 * sending its MPA Reply (siw) loses FPDUs that arrive in between; give it
 * time, still reading what it sends meanwhile. */
static void reply_settle(run *r) {
    if (r->env->reply_settle_ms > 0)
        wait_for(r, never, r->env->reply_settle_ms);
}

static void send_rtr(run *r) {
    /* RFC 6581 §9.2: the initiator sends one of the RTRs the Reply allows,
     * before anything else; the choice is ours (§1.1). */
    const iwc_mpa_cfg *p = &r->c->peer_mpa;
    unsigned offered = (r->mine.v2.rtr_send ? 1u : 0) | (r->mine.v2.rtr_write ? 2u : 0) |
                       (r->mine.v2.rtr_read ? 4u : 0);
    unsigned ok = ((r->theirs.v2.rtr_send ? 1u : 0) | (r->theirs.v2.rtr_write ? 2u : 0) |
                   (r->theirs.v2.rtr_read ? 4u : 0)) & offered;
    unsigned use = p->rtr_use > 0 ? (unsigned)p->rtr_use : ok & 2 ? 2 : ok & 4 ? 4 : ok & 1 ? 1 : 0;
    if (!use) {
        fail(r, 0, "the IUT's Reply allows no RTR the runner offered (RFC 6581 §9.2: the "
                   "responder sets at least one requested RTR it supports)");
        r->abort_steps = true;
        return;
    }
    iw_rdmap_msg m;
    msg_defaults(&m, use == 2 ? IW_OP_WRITE : use == 4 ? IW_OP_READ_REQ : IW_OP_SEND);
    if (use == 1)
        m.ddp.msn = r->tx.msn[IW_QN_SEND]++;
    if (use == 4)
        m.ddp.msn = r->tx.msn[IW_QN_READ_REQ]++;
    iwc_buf seg = {0};
    if (iwc_seg_encode(&m, NULL, 0, &seg) == 0 && frame_out(r, 0, 0, &seg, NULL, seg.len) == 0)
        flush_held(r);
    iwc_buf_free(&seg);
    trace(r, 2, "runner -> RTR (%s)", use == 2 ? "write" : use == 4 ? "read" : "send");
}

static const ev_entry *find_event(run *r, const char *type,
                                  bool (*match)(run *, const ev_entry *, const void *),
                                  const void *ctx, int wait_ms);

/* An RNIC behind verbs accepts work only once its connection is
 * established (siw: ibv_post_send fails before the CM event), so the
 * case's agent steps wait for "connected". Only looked at: a case may still
 * expect the event itself. */
static void await_connected(run *r) {
    const ev_entry *e = find_event(r, "connected", NULL, NULL, r->timeout_ms);
    if (e)
        r->ev[e - r->ev].consumed = false;
}

static void startup_auto(run *r) {
    iw_mpa_rr rr;
    char err[256];
    iwc_buf out = {0};
    if (r->c->role == IWC_IUT_RESPONDER) {
        mine_from_cfg(r, &rr, IW_MPA_REQUEST);
        if (iwc_rr_build(&rr, NULL, &out, err, sizeof err) < 0) {
            error(r, 0, "%s", err);
            goto done;
        }
        record_mine(r, &rr);
        tx_write(r, out.p, out.len, NULL, 0);
        if (!wait_for(r, have_theirs, r->timeout_ms) || !r->theirs_got) {
            fail(r, 0, "MPA startup: %s", r->rx_lost ? "the IUT's MPA Reply is invalid"
                                          : r->eof ? "the IUT closed the connection instead of replying"
                                                   : "no MPA Reply from the IUT");
            r->abort_steps = true;
            goto done;
        }
        if (r->theirs.type != IW_MPA_REPLY || r->theirs.r) {
            fail(r, 0, "MPA startup: the IUT answered with %s",
                 r->theirs.type != IW_MPA_REPLY ? "an MPA Request" : "a Reply with R=1 (reject)");
            r->abort_steps = true;
            goto done;
        }
        reply_settle(r);
        tx_ready(r, 0);
        await_connected(r);
        if (r->mine.v2.p2p && r->theirs.enhanced && r->theirs.v2.p2p)
            send_rtr(r);
    } else {
        if (!wait_for(r, have_theirs, r->timeout_ms) || !r->theirs_got) {
            fail(r, 0, "MPA startup: %s", r->rx_lost ? "the IUT's MPA Request is invalid"
                                                     : "no MPA Request from the IUT");
            r->abort_steps = true;
            goto done;
        }
        if (r->theirs.type != IW_MPA_REQUEST) {
            fail(r, 0, "MPA startup: the IUT (initiator) sent an MPA Reply");
            r->abort_steps = true;
            goto done;
        }
        mine_from_cfg(r, &rr, IW_MPA_REPLY);
        if (r->reject_startup)
            rr.r = true;
        if (iwc_rr_build(&rr, NULL, &out, err, sizeof err) < 0) {
            error(r, 0, "%s", err);
            goto done;
        }
        record_mine(r, &rr);
        tx_write(r, out.p, out.len, NULL, 0);
        if (r->reject_startup)
            r->abort_steps = true;
        else if (!rr.r) {
            tx_ready(r, 0);
            await_connected(r);
        }
    }
done:
    iwc_buf_free(&out);
}

/* ---- setup ---- */

static int tcp_connect(run *r, uint16_t port) {
    char ports[8];
    snprintf(ports, sizeof ports, "%u", port);
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(r->env->iut_host, ports, &hints, &res) != 0) {
        error(r, 0, "cannot resolve IUT host '%s'", r->env->iut_host);
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
        error(r, 0, "cannot connect to the IUT's RDMA listener %s:%u: %s", r->env->iut_host, port,
              strerror(last));
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
    doc_free(agent_ok(r, 0, "{\"op\":\"reset\"}", "reset"));
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
            error(r, g->line, "out of memory");
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
            error(r, g->line, "out of memory");
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
        iw_json_doc *d = agent_ok(r, g->line, iwc_req_end(&q), "reg_mr");
        iwc_req_free(&q);
        if (!d)
            return -1;
        uint64_t stag = 0, to = 0;
        char err[128];
        if (iw_json_u64(d, &d->nodes[0], "stag", true, 0xFFFFFFFFu, &stag, err, sizeof err) < 0 ||
            iw_json_u64(d, &d->nodes[0], "to", true, UINT64_MAX, &to, err, sizeof err) < 0) {
            error(r, g->line, "agent reg_mr response: %s", err);
            doc_free(d);
            return -1;
        }
        doc_free(d);
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
    } else {
        /* We listen; the agent's IUT connects to us as MPA initiator. */
        struct addrinfo hints = {0}, *res = NULL;
        hints.ai_socktype = SOCK_STREAM;
        hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
        char lps[8];
        snprintf(lps, sizeof lps, "%u", r->env->local_port);
        if (getaddrinfo(r->env->local_bind, lps, &hints, &res) != 0) {
            iwc_req_free(&q);
            error(r, 0, "local address '%s' is not numeric (--local-host/--local-listen)",
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
            error(r, 0, "cannot listen on %s:%u: %s", r->env->local_bind, r->env->local_port,
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
    iw_json_doc *d = agent_ok(r, 0, iwc_req_end(&q), c->role == IWC_IUT_RESPONDER ? "listen" : "connect");
    iwc_req_free(&q);
    if (!d)
        return -1;
    if (knob_ignored(r, d)) {
        doc_free(d);
        return -1;
    }
    if (c->role == IWC_IUT_RESPONDER) {
        uint64_t port = 0;
        char err[128];
        if (iw_json_u64(d, &d->nodes[0], "port", true, 65535, &port, err, sizeof err) < 0 ||
            port == 0) {
            doc_free(d);
            error(r, 0, "agent listen response has no port");
            return -1;
        }
        doc_free(d);
        if (r->env->iut_connect_port)
            port = r->env->iut_connect_port; /* behind NAT: the forwarded port */
        if (tcp_connect(r, (uint16_t)port) < 0)
            return -1;
    } else {
        doc_free(d);
        struct pollfd p = {r->lfd, POLLIN, 0};
        if (poll(&p, 1, r->timeout_ms) <= 0) {
            fail(r, 0, "the IUT did not open a TCP connection to %s:%u within %d ms",
                 r->env->local_host, lport, r->timeout_ms);
            return -1;
        }
        r->fd = accept(r->lfd, NULL, NULL);
        if (r->fd < 0) {
            error(r, 0, "accept failed: %s", strerror(errno));
            return -1;
        }
        sock_tune(r->fd);
        r->res->cap.runner_is_client = false;
        cap_addr(r);
    }
    if (c->startup_auto) {
        startup_auto(r);
        if (!r->abort_steps)
            ensure_recv(r, 0);
    }
    return r->abort_steps ? -1 : 0;
}

/* ---- expectations ---- */

static bool cmp_ok(uint64_t got, uint8_t cmp, uint64_t want) {
    switch (cmp) {
    case IWC_NE:
        return got != want;
    case IWC_LE:
        return got <= want;
    case IWC_GE:
        return got >= want;
    default:
        return got == want;
    }
}

static const char *cmp_str(uint8_t cmp) {
    return cmp == IWC_NE ? "!=" : cmp == IWC_LE ? "<=" : cmp == IWC_GE ? ">=" : "=";
}

/* The offending frame of an expect terminate: of=-N counts back from the
 * last FPDU the runner sent before this step (default -1). */
static int offending_frame(run *r, const iwc_step *s) {
    uint64_t v = 0;
    int64_t back = 1;
    if (arg_num(r, s, "of", &v))
        back = -(int64_t)v; /* of=-2 evaluates to 2^64-2 */
    if (back < 1)
        back = 1;
    for (int i = r->nsent - 1; i >= 0; i--)
        if (r->sent[i].fpdu && r->sent[i].kind && --back == 0)
            return i;
    return -1;
}

static bool term_arrived(run *r) { return r->term_idx >= 0 || r->eof || r->rx_lost; }
static bool is_eof(run *r) { return r->eof; }

/* M/D/R a Terminate must carry for this triple (RFC 5040 §4.8 Fig. 10,
 * §7.1): 0, 1, or -1 (either; RFC 5040 is ambiguous there). */
static void mdr_default(uint16_t t, unsigned off_opcode, int *m, int *d, int *rr) {
    unsigned layer = iw_term_layer(t), et = iw_term_etype(t);
    if (layer == 2 || (layer == 0 && et == 0) || (layer == 1 && et == 0)) {
        *m = *d = *rr = 0; /* LLP and local catastrophic: no headers */
        return;
    }
    *m = *d = 1;
    *rr = 0;
    if (layer == 0 && et == 1) {
        /* Remote Protection: the Read Request header for a Read Request;
         * Fig. 10 also asks for "the RDMA header" of a Send with Invalidate,
         * which has none defined (wire-facts F), so either is accepted. */
        *rr = off_opcode == IW_OP_READ_REQ ? 1 : off_opcode == IW_OP_READ_RESP ? 0 : -1;
    }
}

static int mdr_arg(run *r, const iwc_step *s, const char *k, int def) {
    const iwc_arg *a = iwc_step_arg(s, k);
    if (!a)
        return def;
    if (a->type == IWC_V_WORD)
        return -1; /* any */
    uint64_t v;
    return eval(r, s->line, &a->e, &v) ? v != 0 : def;
}

static const ev_entry *find_event(run *r, const char *type, bool (*match)(run *, const ev_entry *, const void *),
                                  const void *ctx, int wait_ms) {
    uint64_t deadline = iwc_now_us() + (uint64_t)wait_ms * 1000;
    for (;;) {
        for (int i = 0; i < r->nev; i++) {
            ev_entry *e = &r->ev[i];
            if (!e->consumed && !strcmp(ev_type(e), type) && (!match || match(r, e, ctx))) {
                e->consumed = true;
                return e;
            }
        }
        uint64_t now = iwc_now_us();
        if (now >= deadline || r->abort_steps)
            return NULL;
        int left = (int)((deadline - now) / 1000);
        poll_events(r, left > 50 ? 50 : left);
    }
}

static uint16_t ev_triple(const ev_entry *e) {
    unsigned v[3] = {0, 0, 0};
    static const char *const k[3] = {"layer", "etype", "code"};
    for (int i = 0; i < 3; i++) {
        const iw_json *x = iw_json_get(e->doc, e->node, k[i]);
        if (x && x->type == IW_JSON_NUM && x->is_int && x->i >= 0 && x->i <= 0xFF)
            v[i] = (unsigned)x->i;
    }
    return IW_TERM_TRIPLE(v[0] & 0xF, v[1] & 0xF, v[2]);
}

/* "Terminate 1/1/0 or 0/1/2, or silent drop": the step's outcomes, the
 * triples first so that a message starts "expected Terminate <first>". */
static const char *alts_str(const iwc_step *s, char *buf, size_t n) {
    size_t o = 0;
    int terms = 0;
    buf[0] = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < s->nalt && o < n; i++) {
            const iwc_outcome *a = &s->alt[i];
            if ((a->kind == IWC_OUT_TERM) != (pass == 0))
                continue;
            char b[160];
            int w = a->kind == IWC_OUT_TERM
                        ? snprintf(buf + o, n - o, "%s%s", terms++ ? " or " : "Terminate ",
                                   triple_str(a->triple, b, sizeof b))
                        : snprintf(buf + o, n - o, ", or %s", iwc_outcome_str(a, b, sizeof b));
            o += w > 0 ? (size_t)w : 0;
        }
    return buf;
}

static const iwc_outcome *step_alt(const iwc_step *s, unsigned kind, uint16_t triple) {
    for (int i = 0; i < s->nalt; i++)
        if (s->alt[i].kind == kind && (kind != IWC_OUT_TERM || s->alt[i].triple == triple))
            return &s->alt[i];
    return NULL;
}

/* Record the outcome the IUT chose; where the case allowed several, the
 * result says which, with the RFC words that allow it ("conformant, chose
 * silent drop"). */
static void choose(run *r, const iwc_step *s, const iwc_outcome *o) {
    r->chosen = *o;
    r->has_chosen = true;
    if (s->nalt < 2)
        return;
    char b[48];
    const char *why = iwc_case_allow(r->c, o);
    char *prev = r->res->outcome;
    r->res->outcome = prev ? iwc_strf("%s; %s (%s)", prev, iwc_outcome_str(o, b, sizeof b), why)
                           : iwc_strf("%s (%s)", iwc_outcome_str(o, b, sizeof b), why);
    free(prev);
    trace(r, 1, "the IUT chose %s", iwc_outcome_str(o, b, sizeof b));
}

/* A recv event with status ok the IUT raised and no step consumed yet: the
 * offending Send was delivered (tells "check not made" from "silent drop"). */
static bool delivered_unclaimed(run *r) {
    poll_events(r, 0);
    for (int i = 0; i < r->nev; i++) {
        const ev_entry *e = &r->ev[i];
        const iw_json *st = iw_json_get(e->doc, e->node, "status");
        if (!e->consumed && !strcmp(ev_type(e), "recv") && st && st->type == IW_JSON_STR &&
            !strcmp(st->str, "ok"))
            return true;
    }
    return false;
}

static void exp_terminate(run *r, const iwc_step *s) {
    char a[160], b[160], alts[700];
    r->res->checks++;
    int oi = offending_frame(r, s);
    const sent_frame *of = oi >= 0 ? &r->sent[oi] : NULL;
    bool optional = arg_num_or(r, s, "optional", 0) != 0;
    r->has_chosen = false;
    alts_str(s, alts, sizeof alts);
    wait_for(r, term_arrived, r->timeout_ms);
    r->term_judged = true;
    if (r->term_idx < 0) {
        const iwc_outcome *closed = step_alt(s, IWC_OUT_CLOSED, 0);
        if (closed && r->eof) {
            /* Torn down without a Terminate; nothing may have landed. */
            for (int i = oi >= 0 ? oi : r->nsent; i < r->nsent; i++)
                r->sent[i].rejected = true;
            r->term_judged = false;
            choose(r, s, closed);
            return;
        }
        const iwc_outcome *unchecked = step_alt(s, IWC_OUT_UNCHECKED, 0);
        const iwc_outcome *drop = step_alt(s, IWC_OUT_DROP, 0);
        if (unchecked && (!drop || delivered_unclaimed(r))) {
            /* The OPTIONAL check was not made: the segment counts as valid. */
            r->term_judged = false;
            choose(r, s, unchecked);
            return;
        }
        /* The offending segment and everything after it must not land
         * (RFC 5041 §7.1; RFC 5044 §8: a dropped segment is not delivered). */
        for (int i = oi >= 0 ? oi : r->nsent; i < r->nsent; i++)
            r->sent[i].rejected = true;
        if (drop) {
            /* A dropped segment is never delivered (RFC 5044 §8: "rather than
             * reporting the error to DDP"); a tagged one is judged by the
             * placement model at the end. */
            if (delivered_unclaimed(r)) {
                fail(r, s->line,
                     "expected %s; got no Terminate and the message was delivered (a silently "
                     "dropped segment never reaches the ULP, RFC 5044 §8)",
                     alts);
                return;
            }
            r->term_judged = false; /* a Terminate later is still unexpected */
            choose(r, s, drop);
            return;
        }
        if (optional)
            return;
        int fpdus = 0;
        for (int i = 0; i < r->nrx; i++)
            fpdus += r->rx[i].type == RXF_FPDU;
        fail(r, s->line, "expected %s, got none%s", alts,
             r->eof ? " (the IUT closed the connection without one)"
             : fpdus ? " (the IUT carried on sending FPDUs)"
                     : "");
        return;
    }
    /* Whatever happens, the offending segment and everything after it must
     * not land (RFC 5041 §7.1: later segments are dropped). */
    for (int i = oi >= 0 ? oi : r->nsent; i < r->nsent; i++)
        r->sent[i].rejected = true;
    const rx_frame *tf = &r->rx[r->term_idx];
    const iw_rdmap_term *t = &tf->msg.u.term;
    uint16_t got = IW_TERM_TRIPLE(t->layer, t->etype, t->ecode);
    const iwc_outcome *match = step_alt(s, IWC_OUT_TERM, got);
    uint16_t want = match ? got : s->triple;
    if (match) {
        choose(r, s, match);
    } else {
        uint16_t swapped = IW_TERM_TRIPLE(t->etype, t->layer, t->ecode);
        if (step_alt(s, IWC_OUT_TERM, swapped))
            fail(r, s->line,
                 "Terminate layer and error-type nibbles swapped: got %X/%X/%X, expected %s "
                 "(RFC 5040 §4.8: Layer is the high nibble of the first octet)",
                 t->layer, t->etype, t->ecode, triple_str(swapped, b, sizeof b));
        else
            fail(r, s->line, "expected %s, got %s", alts, triple_str(got, b, sizeof b));
    }
    /* The Terminate itself: untagged, QN 2, first message there (RFC 5040
     * §4.8, §5.4; RFC 5041 §4.3: MSN starts at 1). */
    const iw_ddp_hdr *h = &tf->msg.ddp;
    if (h->tagged || h->qn != IW_QN_TERMINATE || h->msn != 1 || h->mo != 0 || !h->last)
        fail(r, s->line,
             "the Terminate must be one untagged segment on QN 2 with MSN 1, MO 0, L=1 (RFC "
             "5040 §5.4, RFC 5041 §4.3); got %s QN %u MSN %u MO %u L=%d",
             h->tagged ? "tagged" : "untagged", h->qn, h->msn, h->mo, h->last);
    unsigned off_op = of && of->ulpdu_len >= 2 ? of->ulpdu[1] & IW_RDMAP_CTRL_OPCODE : 0xFF;
    int em, ed, er;
    mdr_default(want, off_op, &em, &ed, &er);
    em = mdr_arg(r, s, "m", em);
    ed = mdr_arg(r, s, "d", ed);
    er = mdr_arg(r, s, "r", er);
    const struct {
        const char *n;
        int want;
        bool got;
        const char *why;
    } bits[3] = {{"M", em, t->m, "DDP Segment Length valid"},
                 {"D", ed, t->d, "copied DDP header"},
                 {"R", er, t->r, "copied RDMA Read Request header"}};
    for (int i = 0; i < 3; i++)
        if (bits[i].want >= 0 && bits[i].want != bits[i].got)
            fail(r, s->line,
                 "Terminate %s bit: expected %s=%d (%s, RFC 5040 §4.8 Fig. 10), got %s=%d",
                 bits[i].n, bits[i].n, bits[i].want, bits[i].why, bits[i].n, bits[i].got);
    uint64_t seglen;
    bool seglen_given = arg_num(r, s, "seglen", &seglen);
    if (!seglen_given && of)
        seglen = of->ulpdu_len;
    if ((t->m || t->d) && (seglen_given || (of && em == 1)) && t->ddp_seg_len != seglen)
        fail(r, s->line,
             "Terminate DDP Segment Length: expected %llu (the offending FPDU's ULPDU_Length, "
             "RFC 5040 §4.8), got %u",
             (unsigned long long)seglen, t->ddp_seg_len);
    const iwc_arg *ha = iwc_step_arg(s, "hdr");
    bool check_hdr = !(ha && ha->type == IWC_V_WORD && !strcmp(ha->word, "none"));
    if (check_hdr && t->d && of && t->ddp_raw) {
        size_t want_len = of->ulpdu_len ? iw_ddp_hdr_len(of->ulpdu[0]) : 0;
        size_t cmp = want_len < of->ulpdu_len ? want_len : of->ulpdu_len;
        if (t->ddp_raw_len != want_len)
            fail(r, s->line,
                 "Terminate copied DDP header is %zu octets, the offending segment's is %zu "
                 "(RFC 5040 §4.8)",
                 t->ddp_raw_len, want_len);
        else
            for (size_t i = 0; i < cmp; i++)
                if (t->ddp_raw[i] != of->ulpdu[i]) {
                    fail(r, s->line,
                         "Terminate copied DDP header differs from the offending segment's at "
                         "octet %zu: expected 0x%02x, got 0x%02x (RFC 5040 §4.8)",
                         i, of->ulpdu[i], t->ddp_raw[i]);
                    break;
                }
    }
    if (check_hdr && t->r && of && off_op == IW_OP_READ_REQ &&
        of->ulpdu_len >= IW_DDP_UNTAGGED_HDR_LEN + IW_RDMAP_READ_REQ_LEN) {
        uint8_t enc[IW_RDMAP_READ_REQ_LEN];
        iw_rdmap_encode_read_req(enc, sizeof enc, &t->rreq);
        if (memcmp(enc, of->ulpdu + IW_DDP_UNTAGGED_HDR_LEN, sizeof enc))
            fail(r, s->line,
                 "Terminate copied Read Request header differs from the offending one (RFC "
                 "5040 §4.8)");
    }
    /* RFC 5040 §5.4: after a Terminate the sender sends nothing more. */
    const iwc_arg *aa = iwc_step_arg(s, "after");
    if (!(aa && aa->word && !strcmp(aa->word, "any"))) {
        wait_for(r, is_eof, QUIET_MS < r->timeout_ms ? QUIET_MS : r->timeout_ms);
        int after = 0, first = -1;
        for (int i = r->term_idx + 1; i < r->nrx; i++)
            if (r->rx[i].type == RXF_FPDU && after++ == 0)
                first = i;
        if (after)
            fail(r, s->line,
                 "the IUT sent %d FPDU(s) after its Terminate (first: %s) (RFC 5040 §5.4: "
                 "nothing may follow a Terminate)",
                 after, iw_rdmap_opcode_str(r->rx[first].msg.opcode));
    }
    const iwc_arg *ea = iwc_step_arg(s, "event");
    if (!(ea && ea->word && !strcmp(ea->word, "no")) &&
        term_events_seen(r, s->line, "the agent's terminate_sent event")) {
        const ev_entry *e = find_event(r, "terminate_sent", NULL, NULL, r->timeout_ms);
        if (!e)
            fail(r, s->line, "the agent reported no terminate_sent event for the Terminate");
        else if (ev_triple(e) != got)
            fail(r, s->line, "the agent reported terminate_sent %s but the wire carried %s",
                 triple_str(ev_triple(e), a, sizeof a), triple_str(got, b, sizeof b));
    }
}

static void exp_closed(run *r, const iwc_step *s) {
    r->res->checks++;
    int within = r->timeout_ms;
    if (r->c->tags & IWC_TAG_SLOW)
        within = (r->env->agent->caps.mpa_timeout && r->c->iut_mpa.timeout_ms >= 0
                      ? r->c->iut_mpa.timeout_ms
                      : r->env->mpa_timeout_ms) +
                 r->timeout_ms;
    uint64_t v;
    if (arg_num(r, s, "within", &v))
        within = (int)(v > 600000 ? 600000 : v);
    wait_for(r, is_eof, within);
    if (arg_num_or(r, s, "silent", 0)) {
        /* Nothing between our last frame and the close. */
        bool rr = false;
        int fpdus = 0;
        for (int i = r->rx_mark; i < r->nrx; i++) {
            rr |= r->rx[i].type == RXF_RR;
            fpdus += r->rx[i].type == RXF_FPDU;
        }
        if (rr)
            fail(r, s->line,
                 "the IUT answered with an MPA %s%s where it must close the connection without "
                 "one",
                 r->theirs.type == IW_MPA_REPLY ? "Reply" : "Request",
                 r->theirs.type == IW_MPA_REPLY && r->theirs.r ? " (R=1)" : "");
        else if (fpdus)
            fail(r, s->line, "the IUT sent %d FPDU(s) where it must close the connection", fpdus);
        else if (r->rx_bytes != r->rx_bytes_mark)
            fail(r, s->line, "the IUT sent %llu octets where it must close the connection",
                 (unsigned long long)(r->rx_bytes - r->rx_bytes_mark));
    }
    if (!r->eof)
        fail(r, s->line,
             "the IUT did not close the TCP connection within %d ms: it must close the connection "
             "here",
             within);
}

static bool mpa_field(const rx_frame *f, const char *k, uint64_t *v) {
    const iw_mpa_rr *rr = &f->rr;
    if (!strcmp(k, "m"))
        *v = rr->m;
    else if (!strcmp(k, "c"))
        *v = rr->c;
    else if (!strcmp(k, "r"))
        *v = rr->r;
    else if (!strcmp(k, "s"))
        *v = rr->s;
    else if (!strcmp(k, "res"))
        *v = rr->res;
    else if (!strcmp(k, "rev"))
        *v = rr->rev;
    else if (!strcmp(k, "p2p"))
        *v = rr->enhanced && rr->v2.p2p;
    else if (!strcmp(k, "rtr-send"))
        *v = rr->enhanced && rr->v2.rtr_send;
    else if (!strcmp(k, "rtr-write"))
        *v = rr->enhanced && rr->v2.rtr_write;
    else if (!strcmp(k, "rtr-read"))
        *v = rr->enhanced && rr->v2.rtr_read;
    else if (!strcmp(k, "ird"))
        *v = rr->v2.ird;
    else if (!strcmp(k, "ord"))
        *v = rr->v2.ord;
    else if (!strcmp(k, "pd-len"))
        *v = rr->pd_len;
    else
        return false;
    return true;
}

static void exp_mpa(run *r, const iwc_step *s) {
    r->res->checks++;
    iw_mpa_rr_type want = s->sub == IWC_EXPECT_MPA_REPLY ? IW_MPA_REPLY : IW_MPA_REQUEST;
    const char *wn = want == IW_MPA_REPLY ? "Reply" : "Request";
    wait_for(r, have_theirs, r->timeout_ms);
    const rx_frame *f = NULL;
    for (int i = 0; i < r->nrx; i++)
        if (r->rx[i].type == RXF_RR || r->rx[i].type == RXF_RR_BAD)
            f = &r->rx[i];
    if (!f) {
        fail(r, s->line, "expected an MPA %s from the IUT, got none%s", wn,
             r->eof ? " (it closed the connection)" : "");
        return;
    }
    if (f->type == RXF_RR_BAD) {
        fail(r, s->line, "the IUT's MPA frame is invalid: %s (%s)", iw_close_str(f->verdict.close),
             f->verdict.rfc ? f->verdict.rfc : "");
        return;
    }
    if (f->rr.type != want) {
        fail(r, s->line, "expected an MPA %s, the IUT sent an MPA %s", wn,
             f->rr.type == IW_MPA_REPLY ? "Reply" : "Request");
        return;
    }
    if (want == IW_MPA_REPLY && !f->rr.r)
        reply_settle(r);
    for (int i = 0; i < s->nargs; i++) {
        const iwc_arg *a = &s->args[i];
        if (!strcmp(a->key, "pd")) {
            size_t n = 0;
            uint8_t *b = data_make(r, s->line, &a->d, f->rr.ulp_pd_len, &n);
            if (!b)
                return;
            if (n != f->rr.ulp_pd_len || (n && memcmp(b, f->rr.ulp_pd, n))) {
                char hw[65], hg[65];
                iwc_hex(hw, b, n < 32 ? n : 32);
                iwc_hex(hg, f->rr.ulp_pd ? f->rr.ulp_pd : b, f->rr.ulp_pd_len < 32 ? f->rr.ulp_pd_len : 32);
                fail(r, s->line, "MPA %s private data: expected %zu octets %s%s, got %u octets %s%s",
                     wn, n, hw, n > 32 ? "..." : "", f->rr.ulp_pd_len, hg,
                     f->rr.ulp_pd_len > 32 ? "..." : "");
            }
            free(b);
            continue;
        }
        if (!strcmp(a->key, "key"))
            continue; /* the type check above is the key check */
        uint64_t got, w;
        if (!mpa_field(f, a->key, &got) || !eval(r, s->line, &a->e, &w))
            continue;
        if (!cmp_ok(got, a->cmp, w))
            fail(r, s->line, "MPA %s field %s: expected %s %llu, got %llu", wn, a->key,
                 cmp_str(a->cmp), (unsigned long long)w, (unsigned long long)got);
    }
}

static int opcode_of(const char *name) {
    static const char *const n[] = {"write", "read-req", "read-resp", "send", "send-inv",
                                    "send-se", "send-se-inv", "term", "imm", "imm-se",
                                    "atomic", "atomic-resp"};
    for (int i = 0; i < 12; i++)
        if (!strcmp(n[i], name))
            return i;
    return -1;
}

static bool fpdu_field(const iw_rdmap_msg *m, const char *k, uint64_t *v) {
    if (!strcmp(k, "stag"))
        *v = m->opcode == IW_OP_ATOMIC_REQ ? m->u.atomic_req.stag : m->ddp.stag;
    else if (!strcmp(k, "to"))
        *v = m->opcode == IW_OP_ATOMIC_REQ ? m->u.atomic_req.to : m->ddp.to;
    else if (!strcmp(k, "qn"))
        *v = m->ddp.qn;
    else if (!strcmp(k, "msn"))
        *v = m->ddp.msn;
    else if (!strcmp(k, "mo"))
        *v = m->ddp.mo;
    else if (!strcmp(k, "len"))
        *v = m->payload_len;
    else if (!strcmp(k, "last"))
        *v = m->ddp.last;
    else if (!strcmp(k, "inv"))
        *v = m->ddp.rsvd_ulp2;
    else if (!strcmp(k, "size"))
        *v = m->u.read_req.read_size;
    else if (!strcmp(k, "sink-stag"))
        *v = m->u.read_req.sink_stag;
    else if (!strcmp(k, "sink-to"))
        *v = m->u.read_req.sink_to;
    else if (!strcmp(k, "src-stag"))
        *v = m->u.read_req.src_stag;
    else if (!strcmp(k, "src-to"))
        *v = m->u.read_req.src_to;
    else if (!strcmp(k, "orig"))
        *v = m->u.atomic_resp.orig;
    else if (!strcmp(k, "req-id"))
        *v = m->opcode == IW_OP_ATOMIC_REQ ? m->u.atomic_req.req_id : m->u.atomic_resp.req_id;
    else
        return false;
    return true;
}

static bool have_fpdu_op(run *r) {
    for (int i = 0; i < r->nrx; i++)
        if (r->rx[i].type == RXF_FPDU && !r->rx[i].consumed &&
            r->rx[i].rverdict.kind == IW_VERDICT_OK && r->rx[i].msg.opcode == r->want_op)
            return true;
    return r->eof;
}

static void exp_fpdu(run *r, const iwc_step *s) {
    r->res->checks++;
    r->want_op = opcode_of(s->word);
    wait_for(r, have_fpdu_op, r->timeout_ms);
    rx_frame *f = NULL;
    for (int i = 0; i < r->nrx && !f; i++)
        if (r->rx[i].type == RXF_FPDU && !r->rx[i].consumed &&
            r->rx[i].rverdict.kind == IW_VERDICT_OK && r->rx[i].msg.opcode == r->want_op)
            f = &r->rx[i];
    if (!f) {
        fail(r, s->line, "expected %s from the IUT, got none%s",
             iw_rdmap_opcode_str((unsigned)r->want_op),
             r->term_idx >= 0 ? " (it sent a Terminate)" : r->eof ? " (it closed the connection)" : "");
        return;
    }
    f->consumed = true;
    const iw_rdmap_msg *m = &f->msg;
    for (int i = 0; i < s->nargs; i++) {
        const iwc_arg *a = &s->args[i];
        if (!strcmp(a->key, "data")) {
            size_t n = 0;
            uint8_t *b = data_make(r, s->line, &a->d, m->payload_len, &n);
            if (!b)
                return;
            if (n != m->payload_len || (n && memcmp(b, m->payload, n)))
                fail(r, s->line, "%s payload differs from the expected %zu octets",
                     iw_rdmap_opcode_str(m->opcode), n);
            free(b);
            continue;
        }
        uint64_t got, w;
        if (!fpdu_field(m, a->key, &got) || !eval(r, s->line, &a->e, &w))
            continue;
        if (!cmp_ok(got, a->cmp, w))
            fail(r, s->line, "%s field %s: expected %s 0x%llx, got 0x%llx",
                 iw_rdmap_opcode_str(m->opcode), a->key, cmp_str(a->cmp), (unsigned long long)w,
                 (unsigned long long)got);
    }
}

/* Event fields: dotted paths into the event object; data= is data_hex. */
static const iw_json *ev_field(const ev_entry *e, const char *key) {
    char path[64];
    snprintf(path, sizeof path, "%s", !strcmp(key, "data") ? "data_hex" : key);
    const iw_json *n = e->node;
    char *save = NULL;
    for (char *k = strtok_r(path, ".", &save); k && n; k = strtok_r(NULL, ".", &save))
        n = n->type == IW_JSON_OBJ ? iw_json_get(e->doc, n, k) : NULL;
    return n;
}

static bool json_u64(const iw_json *j, const char *key, uint64_t *out) {
    if (j->type == IW_JSON_NUM && j->is_int && j->i >= 0) {
        *out = (uint64_t)j->i;
        return true;
    }
    if (j->type == IW_JSON_BOOL) {
        *out = j->b;
        return true;
    }
    if (j->type != IW_JSON_STR)
        return false;
    const char *s = j->str;
    size_t n = j->len;
    bool hexfield = strlen(key) > 4 && !strcmp(key + strlen(key) - 4, "_hex");
    if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        s += 2;
        n -= 2;
    } else if (!hexfield) {
        return false;
    }
    if (n == 0 || n > 16)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        int h = iw_json_hexval(s[i]);
        if (h < 0)
            return false;
        v = v << 4 | (uint64_t)h;
    }
    *out = v;
    return true;
}

typedef struct ev_match_ctx {
    const iwc_step *s;
} ev_match_ctx;

/* An agent marks a field it cannot observe with <field>_source "unknown"
 * or "requested" (for "mpa.crc": mpa_source.crc); such a field matches
 * anything. */
static bool ev_unknown(const ev_entry *e, const char *key) {
    char path[80];
    const char *dot = strchr(key, '.');
    if (dot)
        snprintf(path, sizeof path, "%.*s_source%s", (int)(dot - key), key, dot);
    else
        snprintf(path, sizeof path, "%s_source", key);
    const iw_json *j = ev_field(e, path);
    /* "requested": what the agent asked for, not what is in effect */
    return j && j->type == IW_JSON_STR && (!strcmp(j->str, "unknown") || !strcmp(j->str, "requested"));
}

static bool ev_arg_ok(run *r, const ev_entry *e, const iwc_arg *a) {
    if (ev_unknown(e, a->key)) {
        note(r, 0, "%s event field '%s' not checked: the agent cannot observe it", ev_type(e),
             a->key);
        return true;
    }
    const iw_json *j = ev_field(e, a->key);
    if (!j)
        return false;
    if (a->type == IWC_V_DATA) {
        if (j->type != IW_JSON_STR || j->len % 2)
            return false;
        size_t n = j->len / 2;
        uint8_t *got = malloc(n + 1);
        if (!got)
            return false;
        for (size_t i = 0; i < n; i++) {
            int hi = iw_json_hexval(j->str[2 * i]), lo = iw_json_hexval(j->str[2 * i + 1]);
            got[i] = (uint8_t)((hi < 0 ? 0 : hi) << 4 | (lo < 0 ? 0 : lo));
        }
        size_t wn = 0;
        uint8_t *w = data_make(r, 0, &a->d, n, &wn);
        bool ok = w && wn == n && (!n || !memcmp(w, got, n));
        free(w);
        free(got);
        return ok;
    }
    if (a->type == IWC_V_EXPR) {
        uint64_t got, w;
        return json_u64(j, a->key, &got) && eval(r, 0, &a->e, &w) && cmp_ok(got, a->cmp, w);
    }
    if (a->type == IWC_V_WORD) {
        bool eq;
        if (j->type == IW_JSON_BOOL)
            eq = j->b == (!strcmp(a->word, "true") || !strcmp(a->word, "yes"));
        else
            eq = j->type == IW_JSON_STR && !strcmp(j->str, a->word);
        return a->cmp == IWC_NE ? !eq : eq;
    }
    return false;
}

static bool ev_match(run *r, const ev_entry *e, const void *ctx) {
    const iwc_step *s = ((const ev_match_ctx *)ctx)->s;
    for (int i = 0; i < s->nargs; i++)
        if (strcmp(s->args[i].key, "within") && !ev_arg_ok(r, e, &s->args[i]))
            return false;
    return true;
}

static void describe_events(run *r, const char *type, char *out, size_t n) {
    size_t k = 0;
    int cnt = 0;
    out[0] = 0;
    for (int i = 0; i < r->nev && k + 8 < n; i++) {
        if (strcmp(ev_type(&r->ev[i]), type))
            continue;
        cnt++;
        /* A compact view of the fields that most often differ. */
        static const char *const keys[] = {"status",       "len",          "layer",
                                           "etype",        "code",         "reason",
                                           "invalidated_stag", "mpa.rev",  "mpa.crc",
                                           "mpa.ird",      "mpa.ord",      "mpa.peer_ird",
                                           "mpa.peer_ord"};
        int w = snprintf(out + k, n - k, "%s{", cnt > 1 ? ", " : "");
        k += w > 0 ? (size_t)w : 0;
        for (size_t q = 0; q < sizeof keys / sizeof *keys && k + 8 < n; q++) {
            const iw_json *j = ev_field(&r->ev[i], keys[q]);
            if (!j)
                continue;
            char val[48];
            if (j->type == IW_JSON_STR)
                snprintf(val, sizeof val, "%s", j->str);
            else if (j->type == IW_JSON_NUM)
                snprintf(val, sizeof val, "%lld", (long long)j->i);
            else if (j->type == IW_JSON_BOOL)
                snprintf(val, sizeof val, "%s", j->b ? "true" : "false");
            else
                continue;
            w = snprintf(out + k, n - k, "%s=%s%s ", keys[q], val,
                         ev_unknown(&r->ev[i], keys[q]) ? "(unknown)" : "");
            k += w > 0 ? (size_t)w : 0;
        }
        if (k + 2 < n) {
            if (k && out[k - 1] == ' ')
                k--;
            out[k++] = '}';
            out[k] = 0;
        }
    }
    if (!cnt)
        snprintf(out, n, "none");
}

static bool is_term_event(const char *w) {
    return !strcmp(w, "terminate_sent") || !strcmp(w, "terminate_received");
}

static void exp_event(run *r, const iwc_step *s) {
    r->res->checks++;
    if (is_term_event(s->word) && !term_events_seen(r, s->line, "event"))
        return;
    ev_match_ctx ctx = {s};
    if (find_event(r, s->word, ev_match, &ctx, r->timeout_ms))
        return;
    char got[512];
    describe_events(r, s->word, got, sizeof got);
    char want[512];
    size_t k = 0;
    want[0] = 0;
    for (int i = 0; i < s->nargs && k + 4 < sizeof want; i++) {
        const iwc_arg *a = &s->args[i];
        uint64_t v = 0;
        char val[40];
        if (a->type == IWC_V_WORD)
            snprintf(val, sizeof val, "%s", a->word);
        else if (a->type == IWC_V_EXPR && eval(r, s->line, &a->e, &v))
            snprintf(val, sizeof val, v > 0xFFFF ? "0x%llx" : "%llu", (unsigned long long)v);
        else
            snprintf(val, sizeof val, "<data>");
        int w = snprintf(want + k, sizeof want - k, " %s%s%s", a->key, cmp_str(a->cmp), val);
        k += w > 0 ? (size_t)w : 0;
    }
    fail(r, s->line, "expected agent event %s%s, got %s", s->word, want, got);
}

static void exp_no_event(run *r, const iwc_step *s) {
    r->res->checks++;
    if (is_term_event(s->word) && !term_events_seen(r, s->line, "no-event"))
        return;
    int within = (int)arg_num_or(r, s, "within", 200);
    ev_match_ctx ctx = {s};
    const ev_entry *e = find_event(r, s->word, ev_match, &ctx, within);
    if (e) {
        r->ev[e - r->ev].consumed = false; /* only looked at */
        fail(r, s->line, "the agent reported a %s event the IUT must not raise here", s->word);
    }
}

/* read_mr of [off, off+len) of an IUT region, in requests of at most
 * IWC_AGENT_DATA_MAX octets (what the agents answer); NULL after an
 * error. */
static uint8_t *read_region(run *r, int line, int ri, uint64_t off, uint64_t len) {
    uint8_t *all = malloc(len ? len : 1);
    if (!all) {
        error(r, line, "out of memory reading %llu octets back", (unsigned long long)len);
        return NULL;
    }
    uint64_t done = 0;
    do {
        uint64_t n = len - done < IWC_AGENT_DATA_MAX ? len - done : IWC_AGENT_DATA_MAX;
        iwc_req q;
        if (iwc_req_begin(&q, "read_mr") < 0)
            goto fail;
        iw_jw_hex32(&q.j, "stag", r->reg[ri].stag);
        iw_jw_uint(&q.j, "offset", off + done);
        iw_jw_uint(&q.j, "len", n);
        iw_json_doc *d = agent_ok(r, line, iwc_req_end(&q), "read_mr");
        iwc_req_free(&q);
        if (!d)
            goto fail;
        uint8_t *b = NULL;
        size_t got = 0;
        char err[128];
        if (iw_json_hex(d, &d->nodes[0], "data_hex", true, (size_t)n, &b, &got, err, sizeof err) <
                0 ||
            got != n) {
            error(r, line, "agent read_mr: %s", got != n ? "wrong length" : err);
            free(b);
            doc_free(d);
            goto fail;
        }
        if (n)
            memcpy(all + done, b, n);
        free(b);
        doc_free(d);
        done += n;
    } while (done < len);
    return all;
fail:
    free(all);
    return NULL;
}

/* Compare an IUT region range with the model; waits for late placement
 * unless the stream is over (nothing more can land then). */
static void check_region(run *r, int line, int ri, uint64_t off, uint64_t len) {
    const char *name = r->c->regions[ri].name;
    region_rt *g = &r->reg[ri];
    if (g->gone)
        return;
    if (off > g->len || len > g->len - off) {
        error(r, line, "region %s: range %llu+%llu is outside it", name, (unsigned long long)off,
              (unsigned long long)len);
        return;
    }
    uint8_t *care = NULL;
    uint8_t *model = model_build_mask(r, ri, &care);
    if (!model)
        return;
    uint64_t deadline = iwc_now_us() + (uint64_t)r->timeout_ms * 1000;
    for (;;) {
        uint8_t *got = read_region(r, line, ri, off, len);
        if (!got)
            break;
        size_t diff = 0, first = 0;
        for (uint64_t i = 0; i < len; i++)
            if (care[off + i] && got[i] != model[off + i] && diff++ == 0)
                first = (size_t)i;
        if (!diff) {
            free(got);
            break;
        }
        bool settled = r->term_idx >= 0 || r->eof || r->rejected;
        if (settled || iwc_now_us() >= deadline) {
            fail(r, line,
                 "region %s changed outside the expected placement: %zu octet(s) differ, first "
                 "at offset %llu (expected 0x%02x, got 0x%02x)",
                 name, diff, (unsigned long long)(off + first), model[off + first], got[first]);
            free(got);
            break;
        }
        free(got);
        svc(r, 10);
    }
    free(model);
    free(care);
}

static void exp_region(run *r, const iwc_step *s) {
    r->res->checks++;
    int ri = s->region;
    uint64_t at = arg_num_or(r, s, "at", 0);
    const iwc_arg *da = iwc_step_arg(s, "data");
    if (!da) {
        check_region(r, s->line, ri, 0, r->reg[ri].len);
        return;
    }
    uint64_t len = arg_num_or(r, s, "len", r->reg[ri].len > at ? r->reg[ri].len - at : 0);
    size_t n = 0;
    uint8_t *b = data_make(r, s->line, &da->d, len, &n);
    if (!b)
        return;
    /* Declared placement: from now on the model expects these octets. */
    model_add(r, ri, at, b, n, -1);
    free(b);
    check_region(r, s->line, ri, at, n);
}

static void exp_peer_region(run *r, const iwc_step *s) {
    r->res->checks++;
    region_rt *g = &r->reg[s->region];
    uint64_t at = arg_num_or(r, s, "at", 0);
    uint64_t len = arg_num_or(r, s, "len", g->len > at ? g->len - at : 0);
    const iwc_arg *da = iwc_step_arg(s, "data");
    if (!da || at > g->len || len > g->len - at) {
        error(r, s->line, "expect peer-region: wants data= inside the region");
        return;
    }
    size_t n = 0;
    uint8_t *b = data_make(r, s->line, &da->d, len, &n);
    if (!b)
        return;
    uint64_t deadline = iwc_now_us() + (uint64_t)r->timeout_ms * 1000;
    while (memcmp(g->mem + at, b, n) && iwc_now_us() < deadline && !r->eof)
        svc(r, 10);
    svc(r, 0);
    if (memcmp(g->mem + at, b, n)) {
        size_t first = 0;
        while (g->mem[at + first] == b[first])
            first++;
        fail(r, s->line,
             "runner region %s does not hold the expected %zu octets: first difference at "
             "offset %llu (expected 0x%02x, got 0x%02x)",
             s->word, n, (unsigned long long)(at + first), b[first], g->mem[at + first]);
    }
    free(b);
}

static void exp_peer_u64(run *r, const iwc_step *s) {
    r->res->checks++;
    region_rt *g = &r->reg[s->region];
    uint64_t at = arg_num_or(r, s, "at", 0), want = 0;
    const iwc_arg *va = iwc_step_arg(s, "value");
    if (at + 8 > g->len || !va || !eval(r, s->line, &va->e, &want)) {
        error(r, s->line, "expect peer-u64: at= must leave 8 octets in the region");
        return;
    }
    uint64_t deadline = iwc_now_us() + (uint64_t)r->timeout_ms * 1000;
    while (!cmp_ok(rd64(g->mem + at), va->cmp, want) && iwc_now_us() < deadline && !r->eof)
        svc(r, 10);
    uint64_t got = rd64(g->mem + at);
    if (!cmp_ok(got, va->cmp, want))
        fail(r, s->line, "runner region %s at %llu: expected a 64-bit value %s 0x%llx, got 0x%llx",
             s->word, (unsigned long long)at, cmp_str(va->cmp), (unsigned long long)want,
             (unsigned long long)got);
}

static void check_guard(run *r, int line, int ri) {
    if (!r->env->agent->caps.guard || r->reg[ri].gone)
        return;
    iwc_req q;
    if (iwc_req_begin(&q, "guard") < 0)
        return;
    iw_jw_hex32(&q.j, "stag", r->reg[ri].stag);
    iw_json_doc *d = agent_ok(r, line, iwc_req_end(&q), "guard");
    iwc_req_free(&q);
    if (!d)
        return;
    bool intact = false;
    char err[64];
    iw_json_bool(d, &d->nodes[0], "intact", &intact, err, sizeof err);
    if (!intact)
        fail(r, line,
             "the guard octets around region %s were overwritten: a placement went outside "
             "its bounds",
             r->c->regions[ri].name);
    doc_free(d);
}

static void exp_quiet(run *r, const iwc_step *s) {
    r->res->checks++;
    int ms = (int)arg_num_or(r, s, "ms", 200);
    int before = r->nrx;
    uint64_t deadline = iwc_now_us() + (uint64_t)ms * 1000;
    while (iwc_now_us() < deadline && !r->eof)
        svc(r, 10);
    int n = 0, first = -1;
    for (int i = before; i < r->nrx; i++)
        if (r->rx[i].type == RXF_FPDU && n++ == 0)
            first = i;
    if (n)
        fail(r, s->line, "the IUT sent %d FPDU(s) (first: %s) where it must stay silent", n,
             iw_rdmap_opcode_str(r->rx[first].msg.opcode));
}

static bool have_peer_msg(run *r) {
    for (int i = 0; i < r->npm; i++)
        if (r->pm[i].done && !r->pm[i].consumed && !r->pm[i].rtr)
            return true;
    return r->eof || r->term_idx >= 0;
}

static void exp_peer_recv(run *r, const iwc_step *s) {
    r->res->checks++;
    wait_for(r, have_peer_msg, r->timeout_ms);
    peer_msg *pm = NULL;
    for (int i = 0; i < r->npm && !pm; i++)
        if (r->pm[i].done && !r->pm[i].consumed && !r->pm[i].rtr)
            pm = &r->pm[i];
    if (!pm) {
        fail(r, s->line, "expected a %s from the IUT, got none",
             s->word ? s->word : "Send or Immediate Data message");
        return;
    }
    pm->consumed = true;
    if (s->word && opcode_of(s->word) != pm->opcode)
        fail(r, s->line, "expected %s from the IUT, got %s", s->word,
             iw_rdmap_opcode_str(pm->opcode));
    uint64_t v;
    if (arg_num(r, s, "len", &v) && v != pm->data.len)
        fail(r, s->line, "message from the IUT has %zu octets, expected %llu", pm->data.len,
             (unsigned long long)v);
    if (arg_num(r, s, "inv", &v) && v != pm->inv)
        fail(r, s->line, "Invalidate STag 0x%08x, expected 0x%08llx", pm->inv,
             (unsigned long long)v);
    if (arg_num(r, s, "solicited", &v)) {
        bool se = pm->opcode == IW_OP_SEND_SE || pm->opcode == IW_OP_SEND_SE_INV ||
                  pm->opcode == IW_OP_IMM_SE;
        if (se != (v != 0))
            fail(r, s->line, "solicited event: expected %d, got %d", v != 0, se);
    }
    const iwc_arg *da = iwc_step_arg(s, "data");
    if (da) {
        size_t n = 0;
        uint8_t *b = data_make(r, s->line, &da->d, pm->data.len, &n);
        if (b && (n != pm->data.len || (n && memcmp(b, pm->data.p, n))))
            fail(r, s->line, "message data from the IUT differs from the expected %zu octets", n);
        free(b);
    }
    const iwc_arg *ia = iwc_step_arg(s, "imm");
    if (ia) {
        size_t n = 0;
        uint8_t *b = data_make(r, s->line, &ia->d, 8, &n);
        if (b && (!pm->has_imm || n != 8 || memcmp(b, pm->imm, 8)))
            fail(r, s->line, "Immediate Data from the IUT differs from the expected 8 octets");
        free(b);
    }
}

/* ---- agent steps ---- */

static const char *const hex_keys[] = {"stag", "to", "remote_stag", "remote_to", "inv_stag",
                                       "add", "add_mask", "swap", "swap_mask", "compare",
                                       "compare_mask", "sink_stag", "sink_to"};

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
        iw_jw_hex32(&q.j, "stag", ri >= 0 ? r->reg[ri].stag : (uint32_t)arg_num_or(r, s, "stag", 0));
        break;
    case IWC_AGENT_WRITE_MR: {
        uint64_t at = arg_num_or(r, s, "at", 0);
        const iwc_arg *da = iwc_step_arg(s, "data");
        wdata = data_make(r, s->line, &da->d, arg_num_or(r, s, "len", r->reg[ri].len - at), &wlen);
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
        iw_jw_uint(&q.j, "len", arg_num_or(r, s, "len", 0));
        if (arg_num(r, s, "count", &v))
            iw_jw_uint(&q.j, "count", v);
        break;
    case IWC_AGENT_POST_SEND:
        for (int i = 0; i < s->nargs; i++) {
            const iwc_arg *a = &s->args[i];
            if (a->type == IWC_V_WORD) {
                iw_jw_str(&q.j, a->key, a->word);
            } else if (a->type == IWC_V_DATA) {
                size_t n = 0;
                uint8_t *b = data_make(r, s->line, &a->d, arg_num_or(r, s, "len", 8), &n);
                if (!b) {
                    iwc_req_free(&q);
                    return;
                }
                iw_jw_hexbytes(&q.j, "data_hex", b, n);
                free(b);
            } else if (a->type == IWC_V_EXPR && eval(r, s->line, &a->e, &v)) {
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
    flush_held(r);
    iw_json_doc *d = agent(r, s->line, iwc_req_end(&q), 0);
    iwc_req_free(&q);
    if (d && !iwc_resp_ok(d)) {
        if (s->may_fail)
            trace(r, 1, "agent refused %s (allowed): %s", iwc_agent_name(s->sub), iwc_resp_error(d));
        else
            error(r, s->line, "agent refused %s: %s", iwc_agent_name(s->sub), iwc_resp_error(d));
    } else if (d) {
        if (s->sub == IWC_AGENT_DEREG_MR && ri >= 0)
            r->reg[ri].gone = true;
        if (s->sub == IWC_AGENT_WRITE_MR)
            model_add(r, ri, arg_num_or(r, s, "at", 0), wdata, wlen, -1);
    }
    doc_free(d);
    free(wdata);
}

/* ---- the case ---- */

static void final_checks(run *r) {
    flush_held(r);
    svc(r, SETTLE_MS);
    poll_events(r, 0);
    char a[160];
    if (r->term_idx >= 0 && !r->term_judged) {
        r->res->checks++;
        const iw_rdmap_term *t = &r->rx[r->term_idx].msg.u.term;
        fail(r, 0, "unexpected Terminate %s from the IUT",
             triple_str(IW_TERM_TRIPLE(t->layer, t->etype, t->ecode), a, sizeof a));
    }
    for (int i = 0; i < r->c->nregions && !r->abort_steps; i++) {
        if (r->reg[i].peer)
            continue;
        r->res->checks++;
        check_region(r, 0, i, 0, r->reg[i].len);
        check_guard(r, 0, i);
    }
}

static void run_steps(run *r) {
    const iwc_case *c = r->c;
    for (int i = 0; i < c->nsteps && !r->abort_steps; i++) {
        const iwc_step *s = &c->steps[i];
        r->step_seed = i;
        trace(r, 1, "line %d: %s %s", s->line,
              s->kind == IWC_STEP_SEND     ? "send"
              : s->kind == IWC_STEP_EXPECT ? "expect"
              : s->kind == IWC_STEP_AGENT  ? "agent"
                                           : "step",
              s->kind == IWC_STEP_SEND     ? iwc_send_name(s->sub)
              : s->kind == IWC_STEP_EXPECT ? iwc_expect_name(s->sub)
              : s->kind == IWC_STEP_AGENT  ? iwc_agent_name(s->sub)
                                           : "");
        if (s->kind != IWC_STEP_SEND)
            flush_held(r);
        if (s->nonly) {
            bool hit = false;
            for (int k = 0; k < s->nonly && r->has_chosen; k++)
                hit |= iwc_outcome_eq(&s->only[k], &r->chosen);
            if (!hit) {
                trace(r, 1, "line %d: not for the outcome the IUT chose", s->line);
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
                step_send_rr(r, s);
                break;
            }
            r->held_mark = r->held.len;
            step_send_fpdu(r, s);
            uint64_t cut;
            if (arg_num(r, s, "cut", &cut) && cut < r->held.len - r->held_mark)
                r->held.len = r->held_mark + (size_t)cut; /* the rest never goes out */
            const iwc_arg *sp = iwc_step_arg(s, "split");
            if (sp) {
                r->nsplit = 0;
                for (int k = 0; k < sp->nlist; k++)
                    r->split[r->nsplit++] = (uint32_t)sp->list[k];
            }
            if (!arg_num_or(r, s, "hold", 0))
                flush_held(r);
            break;
        }
        case IWC_STEP_AGENT:
            step_agent(r, s);
            break;
        case IWC_STEP_WAIT: {
            uint64_t deadline = iwc_now_us() + arg_num_or(r, s, "ms", 0) * 1000;
            while (iwc_now_us() < deadline)
                svc(r, 5);
            break;
        }
        case IWC_STEP_CLOSE:
            if (r->fd >= 0 && !r->we_shut) {
                shutdown(r->fd, SHUT_WR);
                r->we_shut = true;
                cap_add(r, 0, IWC_CHUNK_FIN, NULL, 0);
            }
            break;
        case IWC_STEP_ABORT:
            if (r->fd >= 0) {
                struct linger lg = {1, 0};
                setsockopt(r->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
                close(r->fd);
                r->fd = -1;
                r->eof = true;
                cap_add(r, 0, IWC_CHUNK_RST, NULL, 0);
            }
            break;
        case IWC_STEP_EXPECT:
            switch (s->sub) {
            case IWC_EXPECT_TERMINATE:
                exp_terminate(r, s);
                break;
            case IWC_EXPECT_CLOSED:
                exp_closed(r, s);
                break;
            case IWC_EXPECT_MPA_REPLY:
            case IWC_EXPECT_MPA_REQUEST:
                exp_mpa(r, s);
                /* "silent" from here on means: nothing after this frame. */
                r->rx_mark = r->nrx;
                r->rx_bytes_mark = r->rx_bytes;
                break;
            case IWC_EXPECT_FPDU:
                exp_fpdu(r, s);
                break;
            case IWC_EXPECT_EVENT:
                exp_event(r, s);
                break;
            case IWC_EXPECT_NO_EVENT:
                exp_no_event(r, s);
                break;
            case IWC_EXPECT_REGION:
                exp_region(r, s);
                break;
            case IWC_EXPECT_PEER_REGION:
                exp_peer_region(r, s);
                break;
            case IWC_EXPECT_PEER_U64:
                exp_peer_u64(r, s);
                break;
            case IWC_EXPECT_GUARD:
                r->res->checks++;
                check_guard(r, s->line, s->region);
                break;
            case IWC_EXPECT_QUIET:
                exp_quiet(r, s);
                break;
            case IWC_EXPECT_PEER_RECV:
                exp_peer_recv(r, s);
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
    if ((c->tags & IWC_TAG_SLOW) && !env->slow && !(k->mpa_timeout && c->iut_mpa.timeout_ms >= 0))
        return iwc_strf("slow: waits for the IUT's MPA startup timeout (run with --slow)");
    const bool have[IWC_NEEDS_COUNT_] = {k->atomics, k->immediate, k->send_inv, k->markers,
                                        k->rev1,    k->pd2,       k->reject,   k->guard,
                                        k->local_inv};
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
        doc_free(r->docs[i]);
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
