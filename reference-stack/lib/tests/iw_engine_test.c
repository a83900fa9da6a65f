/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The sans-I/O engine (iw_rnic / iw_conn) against the RFCs.
 *
 * Expectations come from RFC 5040/5041/5044/6581/7306/6580, never from the
 * engine's code; where an RFC names no triple, the choice documented in
 * docs/architecture.md and src/iw_place.c is used and marked "choice".
 *
 *   A. back-to-back: two engines joined by an in-memory pump that moves
 *      bytes in random chunks, over a matrix of MPA revisions, connection
 *      models, RTR types, markers, CRC and EMSS. Every operation checked byte
 *      for byte; every octet on the wire re-decoded with the independent
 *      codecs (iw_deframer + iw_rdmap_decode); the outcome must not depend
 *      on the chunking.
 *   B. violations: a raw peer (iw_peer.c) sends one offending FPDU and
 *      a valid Write after it; the engine must answer with exactly one
 *      Terminate carrying the right triple and headers, and place nothing.
 *   C. MPA startup: keys, revisions, PD_Length, timeouts, reject, RFC 6581
 *      IRD/ORD and RTR negotiation, the responder-waits rule, markers per
 *      direction.
 *   D. zero-copy: rx_iov / tx_iov place payload straight into registered
 *      memory (payload_copies == 0).
 *   E. robustness: random and mutated streams; memory outside writable
 *      regions never changes and nothing is placed after a Terminate. */
#include <iwarp/engine.h>

#include <stdlib.h>
#include <string.h>

#include "iw_peer.h"
#include "iw_test.h"

/* ======================================================================
 * Helper layer
 * ====================================================================== */

static const iw_tstamp T0 = 1000000000ull;

/* Failure context: which configuration / case / seed a check ran under.
 * Output is capped so that one broken invariant cannot flood the log. */
static char g_ctx[256], g_last_ctx[256];
static unsigned g_printed, g_ctx_printed;
static void fail_note(const char *file, int line, const char *what) {
    iw_test_failed_checks++;
    if (strcmp(g_ctx, g_last_ctx) != 0) {
        memcpy(g_last_ctx, g_ctx, sizeof g_ctx);
        g_ctx_printed = 0;
    }
    if (g_printed < 400 && g_ctx_printed < 6) {
        g_printed++;
        g_ctx_printed++;
        fprintf(stderr, "  %s:%d: %s failed [%s]\n", file, line, what, g_ctx);
    }
}
#define XCHECK(cond)                                                                               \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fail_note(__FILE__, __LINE__, "CHECK(" #cond ")");                                     \
    } while (0)
#define XCHECK_EQ(a, b)                                                                            \
    do {                                                                                           \
        long long xa_ = (long long)(a), xb_ = (long long)(b);                                      \
        if (xa_ != xb_) {                                                                          \
            char m_[320];                                                                          \
            snprintf(m_, sizeof m_, "CHECK_EQ(%s, %s): 0x%llx != 0x%llx", #a, #b,                  \
                     (unsigned long long)xa_, (unsigned long long)xb_);                            \
            fail_note(__FILE__, __LINE__, m_);                                                     \
        }                                                                                          \
    } while (0)
#define XREQUIRE(cond)                                                                             \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fail_note(__FILE__, __LINE__, "REQUIRE(" #cond ")");                                   \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)

static uint64_t rnd(uint64_t *s) { return iw_test_rand(s); }
static size_t rnd_below(uint64_t *s, size_t n) { return n ? (size_t)(rnd(s) % n) : 0; }

static size_t first_diff(const uint8_t *a, const uint8_t *b, size_t n) {
    if (memcmp(a, b, n) == 0)
        return SIZE_MAX;
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return i;
    return SIZE_MAX;
}

static void be16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

/* RFC 5044 §4.5, written from the text (not via iw_mpa_mulpdu). */
static uint32_t rfc_mulpdu(uint32_t emss, bool markers) {
    uint64_t over = 6 + emss % 4 + (markers ? 4 * ((emss + 511) / 512) : 0);
    uint64_t m = emss > over ? emss - over : 0;
    return (uint32_t)(m < 128 ? 128 : m > 64768 ? 64768 : m);
}

/* RFC 7306 §5.1.1, written field by field (the RFC gives it bit by bit):
 * each set Add Mask bit is the most significant bit of a field; fields add
 * independently, their carries dropped. */
static uint64_t ref_masked_add(uint64_t a, uint64_t b, uint64_t mask) {
    uint64_t r = 0;
    int lo = 0;
    for (int i = 0; i < 64; i++) {
        if (!((mask >> i) & 1) && i != 63)
            continue;
        int w = i - lo + 1;
        uint64_t fm = w == 64 ? ~0ull : ((1ull << w) - 1);
        r |= (((a >> lo) + (b >> lo)) & fm) << lo;
        lo = i + 1;
    }
    return r;
}

/* RFC 7306 §5.1.2. */
static uint64_t ref_cmp_swap(uint64_t orig, uint64_t cmp, uint64_t cmask, uint64_t swap,
                             uint64_t smask) {
    if (!((cmp ^ orig) & cmask))
        return (orig & ~smask) | (swap & smask);
    return orig;
}

/* Which Terminate sub-fields RFC 5040 §4.8 Fig. 10 (and RFC 7306 §8.1 for
 * the new messages) call for: M and D for DDP errors and RDMAP remote
 * errors; R only for a Remote Protection error on a Read Request; none for
 * LLP errors and local catastrophic ones. */
static void fig10_bits(uint16_t triple, unsigned opcode, bool *m, bool *d, bool *r) {
    unsigned layer = triple >> 12, etype = (triple >> 8) & 0xF;
    *m = *d = *r = false;
    if (layer == 1 || (layer == 0 && (etype == 1 || etype == 2)))
        *m = *d = true;
    if (layer == 0 && etype == 1 && opcode == IW_OP_READ_REQ)
        *r = true;
}

/* ---- event log ---- */

typedef struct evrec {
    iw_event_type type;
    iw_wc_status status;
    uint64_t wr_id;
    uint32_t len, msn;
    bool solicited, has_inv, has_imm;
    uint32_t inv_stag;
    uint8_t imm[IW_RDMAP_IMM_LEN];
    uint64_t atomic_orig;
    iw_term_info term;
    iw_close_reason close;
    bool has_info;
    iw_conn_info info;
} evrec;

typedef struct evlog {
    evrec *v;
    size_t n, cap;
} evlog;

static void evlog_add(evlog *l, const iw_event *ev) {
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        if (!l->v)
            abort();
    }
    evrec *r = &l->v[l->n++];
    memset(r, 0, sizeof *r);
    r->type = ev->type;
    r->status = ev->status;
    r->wr_id = ev->wr_id;
    r->len = ev->len;
    r->msn = ev->msn;
    r->solicited = ev->solicited;
    r->has_inv = ev->has_inv;
    r->inv_stag = ev->inv_stag;
    r->has_imm = ev->has_imm;
    memcpy(r->imm, ev->imm, sizeof r->imm);
    r->atomic_orig = ev->atomic_orig;
    r->term = ev->term;
    r->close = ev->close;
    if (ev->info) {
        r->has_info = true;
        r->info = *ev->info;
    }
}

static void evlog_free(evlog *l) {
    free(l->v);
    memset(l, 0, sizeof *l);
}

static size_t ev_count(const evlog *l, iw_event_type t) {
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++)
        k += l->v[i].type == t;
    return k;
}

static const evrec *ev_last(const evlog *l, iw_event_type t) {
    for (size_t i = l->n; i-- > 0;)
        if (l->v[i].type == t)
            return &l->v[i];
    return NULL;
}

static bool term_same(const iw_term_info *a, const iw_term_info *b) {
    return a->triple == b->triple && a->m == b->m && a->d == b->d && a->r == b->r &&
           a->ddp_seg_len == b->ddp_seg_len && a->hdr_len == b->hdr_len &&
           memcmp(a->hdr, b->hdr, a->hdr_len < sizeof a->hdr ? a->hdr_len : sizeof a->hdr) == 0;
}

static bool ev_same(const evrec *a, const evrec *b) {
    return a->type == b->type && a->status == b->status && a->wr_id == b->wr_id &&
           a->len == b->len && a->msn == b->msn && a->solicited == b->solicited &&
           a->has_inv == b->has_inv && a->inv_stag == b->inv_stag && a->has_imm == b->has_imm &&
           memcmp(a->imm, b->imm, sizeof a->imm) == 0 && a->atomic_orig == b->atomic_orig &&
           term_same(&a->term, &b->term) && a->close == b->close && a->has_info == b->has_info;
}

static bool is_completion(iw_event_type t) {
    return t == IW_EV_SEND_DONE || t == IW_EV_WRITE_DONE || t == IW_EV_READ_DONE ||
           t == IW_EV_ATOMIC_DONE;
}

/* ---- an engine endpoint with registered memory ---- */

/* Arena layout: every region sits between guard octets; `model` is what the
 * whole arena must hold, updated by the test from the RFC semantics. */
enum {
    OFF_T = 4096,
    LEN_T = 262144, /* remote Write/Read target */
    OFF_S = OFF_T + LEN_T + 4096,
    LEN_S = 163840, /* local Read sink */
    OFF_A = OFF_S + LEN_S + 4096,
    LEN_A = 64, /* atomic target, 8 words */
    OFF_I1 = OFF_A + LEN_A + 64,
    LEN_I = 64, /* regions remotely invalidated */
    OFF_I2 = OFF_I1 + LEN_I + 64,
    OFF_R = OFF_I2 + LEN_I + 4096,
    RBUF = 8192,
    NRBUF = 24, /* receive buffers */
    ARENA_LEN = OFF_R + RBUF * NRBUF + 4096
};

#define SRC_LEN (256 * 1024)
static uint8_t *g_src; /* random source octets for Writes and Sends */

static void src_init(void) {
    if (g_src)
        return;
    g_src = malloc(SRC_LEN);
    uint64_t s = 0x5eed5eed1234ull;
    for (size_t i = 0; i < SRC_LEN; i++)
        g_src[i] = (uint8_t)(rnd(&s) >> 29);
}

typedef struct node node;
struct node {
    int idx;
    iw_rnic *rnic;
    uint32_t pd;
    iw_conn *conn;
    iw_conn_settings set;
    evlog ev;
    iw_peer_buf wire; /* every octet this endpoint sent */
    uint8_t *arena, *model;
    uint32_t st_t, st_s, st_a, st_i1, st_i2;
    uint64_t to_t, to_s, to_a, to_i1, to_i2;
    uint64_t posted[256]; /* wr_ids in submission order (RFC 5040 §5.5 rule 15) */
    size_t n_posted;
    uint64_t next_wr;
    size_t recv_next;  /* next unused receive buffer slot */
    size_t cur[16];    /* per event type: events already taken */
    uint32_t recv_msn; /* MSN the next RECV must carry */
    size_t s_off;      /* next free Read sink offset */
    bool zc_rx, zc_tx; /* feed / drain through the iovec forms */
    bool saw_rx_iov_in_region, saw_tx_iov_in_src;
    void (*hook)(node *, const iw_event *);
    void *hook_user;
};

static int node_on_event(iw_conn *c, const iw_event *ev, void *user) {
    (void)c;
    node *n = user;
    evlog_add(&n->ev, ev);
    if (n->hook)
        n->hook(n, ev);
    return 0;
}

static const iw_callbacks g_cb = {IW_CALLBACKS_V1, node_on_event};

/* Arenas are big and made thousands of times (sections B, E): fill them
 * from a pattern template and recycle their storage. */
static uint8_t *g_pattern[2];
static uint8_t *g_arena_pool[8];
static size_t g_arena_pooled;

static void arena_fill(uint8_t *a, unsigned salt) {
    uint8_t **t = &g_pattern[salt & 1];
    if (!*t) {
        *t = malloc(ARENA_LEN);
        if (!*t)
            abort();
        for (size_t i = 0; i < ARENA_LEN; i++)
            (*t)[i] = (uint8_t)(i * 131u + (salt & 1) * 77u + (i >> 9));
    }
    memcpy(a, *t, ARENA_LEN);
}

static uint8_t *arena_get(void) {
    return g_arena_pooled ? g_arena_pool[--g_arena_pooled] : malloc(ARENA_LEN);
}

static void arena_put(uint8_t *a) {
    if (a && g_arena_pooled < sizeof g_arena_pool / sizeof g_arena_pool[0])
        g_arena_pool[g_arena_pooled++] = a;
    else
        free(a);
}

static int node_init(node *n, int idx, const iw_conn_settings *s) {
    memset(n, 0, sizeof *n);
    n->idx = idx;
    n->set = *s;
    n->next_wr = (uint64_t)(idx + 1) << 40;
    n->recv_msn = 1;
    n->arena = arena_get();
    n->model = arena_get();
    if (!n->arena || !n->model || iw_rnic_new(&n->rnic, NULL) || iw_pd_alloc(n->rnic, &n->pd))
        return -1;
    arena_fill(n->arena, (unsigned)idx);
    memcpy(n->model, n->arena, ARENA_LEN);
    const unsigned rw = IW_ACCESS_LOCAL_WRITE | IW_ACCESS_REMOTE_WRITE | IW_ACCESS_REMOTE_READ;
    n->to_t = 0x100000000ull * (uint64_t)(idx + 3) + 0x1000; /* above 2^32 */
    n->to_s = 0x5000;
    n->to_a = 0x8000;
    n->to_i1 = 0x20000;
    n->to_i2 = 0x30000;
    if (iw_mr_reg(n->rnic, n->pd, n->arena + OFF_T, LEN_T, n->to_t, rw, &n->st_t) ||
        iw_mr_reg(n->rnic, n->pd, n->arena + OFF_S, LEN_S, n->to_s, IW_ACCESS_LOCAL_WRITE,
                  &n->st_s) ||
        iw_mr_reg(n->rnic, n->pd, n->arena + OFF_A, LEN_A, n->to_a, IW_ACCESS_REMOTE_ATOMIC,
                  &n->st_a) ||
        iw_mr_reg(n->rnic, n->pd, n->arena + OFF_I1, LEN_I, n->to_i1, rw, &n->st_i1) ||
        iw_mr_reg(n->rnic, n->pd, n->arena + OFF_I2, LEN_I, n->to_i2, rw, &n->st_i2))
        return -1;
    if (iw_conn_new(&n->conn, n->rnic, n->pd, s, &g_cb, n))
        return -1;
    return 0;
}

static void node_free(node *n) {
    iw_conn_del(n->conn);
    iw_rnic_del(n->rnic);
    evlog_free(&n->ev);
    iw_peer_buf_free(&n->wire);
    arena_put(n->arena);
    arena_put(n->model);
    memset(n, 0, sizeof *n);
}

static uint64_t post(node *n, iw_send_wr wr) {
    wr.wr_id = ++n->next_wr;
    int rc = iw_conn_post_send(n->conn, &wr);
    XCHECK_EQ(rc, 0);
    if (rc == 0 && n->n_posted < sizeof n->posted / sizeof n->posted[0])
        n->posted[n->n_posted++] = wr.wr_id;
    return wr.wr_id;
}

/* Post the next receive buffer slot; returns its slot number. */
static size_t post_recv(node *n) {
    size_t k = n->recv_next++;
    if (k >= NRBUF)
        abort(); /* a test bug */
    int rc = iw_conn_post_recv(n->conn, 0x900000 + k, n->arena + OFF_R + k * RBUF, RBUF);
    XCHECK_EQ(rc, 0);
    return k;
}

/* The next event of type t not yet taken (NULL: none). */
static const evrec *take_ev(node *n, iw_event_type t) {
    for (size_t i = 0, seen = 0; i < n->ev.n; i++) {
        if (n->ev.v[i].type != t)
            continue;
        if (seen++ == n->cur[t]) {
            n->cur[t]++;
            return &n->ev.v[i];
        }
    }
    return NULL;
}

static void check_model(node *n, const char *what) {
    size_t d = first_diff(n->arena, n->model, ARENA_LEN);
    if (d != SIZE_MAX) {
        char m[160];
        snprintf(m, sizeof m, "memory of node %d after %s differs at arena offset %zu", n->idx,
                 what, d);
        fail_note(__FILE__, __LINE__, m);
        memcpy(n->model, n->arena, ARENA_LEN); /* report each divergence once */
    }
}

/* ---- moving bytes: random chunks, copy or iovec forms ---- */

static uint8_t g_io[1 << 20];

typedef struct chunker {
    uint64_t rng;
    bool whole; /* every transfer in one piece */
    bool ones;  /* every transfer one octet at a time */
} chunker;

/* 1-octet, small, medium and large pieces, so that every header, marker and
 * CRC field gets split somewhere. */
static size_t chunk_len(chunker *c, size_t max) {
    if (c->whole || max == 0)
        return max;
    if (c->ones)
        return 1;
    uint64_t r = rnd(&c->rng);
    size_t n;
    switch (r & 7) {
    case 0:
        n = 1;
        break;
    case 1:
    case 2:
        n = 1 + (size_t)((r >> 8) % 16);
        break;
    case 7:
        n = 1 + (size_t)((r >> 8) % 9000);
        break;
    default:
        n = 1 + (size_t)((r >> 8) % 700);
        break;
    }
    return n < max ? n : max;
}

/* A simulated readv(): copy up to k of in into the iovecs, in order. */
static size_t scatter(const iw_iovec *iov, int n, const uint8_t *in, size_t k) {
    size_t done = 0;
    for (int i = 0; i < n && done < k; i++) {
        size_t t = iov[i].len < k - done ? iov[i].len : k - done;
        memcpy(iov[i].base, in + done, t);
        done += t;
    }
    return done;
}

static void deliver(node *dst, const uint8_t *p, size_t n, chunker *ch) {
    size_t off = 0;
    while (off < n) {
        if (dst->zc_rx) {
            iw_iovec iov[64];
            int k = iw_conn_rx_iov(dst->conn, iov, 64);
            XCHECK(k >= 0);
            if (k <= 0)
                return; /* the engine reads no more (closed) */
            size_t room = 0;
            for (int i = 0; i < k; i++) {
                room += iov[i].len;
                const uint8_t *b = iov[i].base;
                if (b >= dst->arena + OFF_T && b < dst->arena + OFF_T + LEN_T)
                    dst->saw_rx_iov_in_region = true;
            }
            size_t want = chunk_len(ch, n - off);
            if (want > room)
                want = room;
            size_t got = scatter(iov, k, p + off, want); /* a short read */
            int rc = iw_conn_rx_commit(dst->conn, got, T0);
            XCHECK_EQ(rc, 0);
            off += got;
        } else {
            size_t k = chunk_len(ch, n - off);
            iw_ssize r = iw_conn_recv(dst->conn, p + off, k, T0);
            XCHECK_EQ(r, (iw_ssize)k);
            if (r < 0)
                return;
            off += k;
        }
    }
}

/* Take up to max output octets from src into out. */
static size_t drain_some(node *src, uint8_t *out, size_t max, chunker *ch) {
    if (!src->zc_tx) {
        iw_ssize w = iw_conn_write(src->conn, out, max, T0);
        XCHECK(w >= 0);
        return w > 0 ? (size_t)w : 0;
    }
    size_t done = 0;
    while (done < max) {
        iw_iovec iov[16];
        int k = iw_conn_tx_iov(src->conn, iov, 16);
        XCHECK(k >= 0);
        if (k <= 0)
            break;
        size_t have = 0;
        for (int i = 0; i < k; i++) {
            have += iov[i].len;
            const uint8_t *b = iov[i].base;
            if (g_src && b >= g_src && b < g_src + SRC_LEN)
                src->saw_tx_iov_in_src = true;
        }
        size_t want = chunk_len(ch, have); /* a short writev() */
        if (want > max - done)
            want = max - done;
        size_t got = 0;
        for (int i = 0; i < k && got < want; i++) {
            size_t t = iov[i].len < want - got ? iov[i].len : want - got;
            memcpy(out + done + got, iov[i].base, t);
            got += t;
        }
        int rc = iw_conn_tx_commit(src->conn, got, T0);
        XCHECK_EQ(rc, 0);
        done += got;
        if (got == 0)
            break;
    }
    return done;
}

typedef struct pair {
    node n[2]; /* [0] initiator, [1] responder */
    chunker ch;
} pair;

/* Everything src has to send right now, recorded on its wire log. */
static size_t flush_out(node *src, iw_peer_buf *dst, chunker *ch) {
    size_t total = 0;
    for (;;) {
        size_t k = drain_some(src, g_io, sizeof g_io, ch);
        if (!k)
            break;
        iw_peer_buf_add(&src->wire, g_io, k);
        if (dst)
            iw_peer_buf_add(dst, g_io, k);
        total += k;
    }
    return total;
}

static unsigned long g_pump_rounds; /* reported with IW_ENGINE_VERBOSE=1 */

/* Move bytes both ways in random chunks until neither side has output. */
static void pump(pair *p) {
    for (int guard = 0; guard < 4000000; guard++, g_pump_rounds++) {
        bool moved = false;
        for (int d = 0; d < 2; d++) {
            node *a = &p->n[d], *b = &p->n[!d];
            size_t k = drain_some(a, g_io, chunk_len(&p->ch, sizeof g_io), &p->ch);
            if (k) {
                iw_peer_buf_add(&a->wire, g_io, k);
                deliver(b, g_io, k, &p->ch);
                moved = true;
            }
        }
        if (!moved)
            return;
    }
    XCHECK(!"pump did not settle");
}

/* seed UINT64_MAX: every transfer one octet at a time. */
static int pair_init(pair *p, const iw_conn_settings *si, const iw_conn_settings *sr, uint64_t seed,
                     bool whole) {
    memset(p, 0, sizeof *p);
    src_init();
    p->ch.rng = seed * 0x9E3779B97F4A7C15ull + 1;
    p->ch.whole = whole;
    p->ch.ones = seed == UINT64_MAX;
    if (node_init(&p->n[0], 0, si) || node_init(&p->n[1], 1, sr))
        return -1;
    if (iw_conn_start(p->n[1].conn, T0) || iw_conn_start(p->n[0].conn, T0))
        return -1;
    return 0;
}

static void pair_free(pair *p) {
    node_free(&p->n[0]);
    node_free(&p->n[1]);
}

/* ---- wire decoding ---- */

static iw_df_cfg df_cfg(iw_df_start start, bool markers, bool crc) {
    iw_df_cfg c = {start, markers ? IW_DF_ON : IW_DF_OFF, crc ? IW_DF_ON : IW_DF_OFF, 0};
    return c;
}

/* Decode one node's output (it starts with its Request or Reply). */
static void decode_node(iw_peer_trace *t, const node *n, bool markers, bool crc) {
    iw_df_cfg c = df_cfg(n->set.role == IW_ROLE_INITIATOR ? IW_DF_START_REQUEST : IW_DF_START_REPLY,
                         markers, crc);
    int rc = iw_peer_decode(t, n->wire.p, n->wire.len, &c);
    XCHECK_EQ(rc, 0);
}

static size_t count_fpdus(const iw_peer_trace *t) {
    size_t k = 0;
    for (size_t i = 0; i < t->n; i++)
        k += t->v[i].type == IW_FRAME_FPDU;
    return k;
}

static const iw_peer_frame *nth_fpdu(const iw_peer_trace *t, size_t k) {
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].type == IW_FRAME_FPDU && k-- == 0)
            return &t->v[i];
    return NULL;
}

/* Every frame well formed, every FPDU within MULPDU, and the segment
 * sequence consistent with RFC 5041: per QN, MSNs start at 1 and advance by
 * one per message, MO grows by the payload sent, L marks the last segment
 * (§4.3, §5.2); a tagged message keeps its STag and advances its TO (§4.2). */
static void check_stream(const iw_peer_trace *t, uint32_t mulpdu) {
    uint32_t msn[4] = {1, 1, 1, 1}, mo[4] = {0};
    bool tagged_open = false;
    uint32_t t_stag = 0;
    uint64_t t_to = 0;
    for (size_t i = 0; i < t->n; i++) {
        const iw_peer_frame *f = &t->v[i];
        XCHECK(f->type == IW_FRAME_FPDU || f->type == IW_FRAME_MPA_REQUEST ||
               f->type == IW_FRAME_MPA_REPLY);
        XCHECK_EQ(f->verdict.kind, IW_VERDICT_OK);
        if (f->type != IW_FRAME_FPDU)
            continue;
        XCHECK_EQ(f->rdmap_verdict.kind, IW_VERDICT_OK);
        XCHECK(f->ulpdu_len <= mulpdu); /* RFC 5044 §4.5 */
        const iw_rdmap_msg *m = &f->msg;
        if (m->ddp.tagged) {
            if (tagged_open) {
                XCHECK_EQ(m->ddp.stag, t_stag);
                XCHECK_EQ(m->ddp.to, t_to);
            }
            t_stag = m->ddp.stag;
            t_to = m->ddp.to + m->payload_len;
            tagged_open = !m->ddp.last;
            continue;
        }
        XCHECK(!tagged_open); /* RFC 5041 §5.2: a message's segments in order */
        uint32_t q = m->ddp.qn < 4 ? m->ddp.qn : 0;
        XCHECK_EQ(m->ddp.msn, msn[q]);
        XCHECK_EQ(m->ddp.mo, mo[q]);
        size_t pay = f->ulpdu_len - IW_DDP_UNTAGGED_HDR_LEN;
        mo[q] += (uint32_t)pay;
        if (m->ddp.last) {
            msn[q]++;
            mo[q] = 0;
        }
    }
}

/* ======================================================================
 * A. Back-to-back
 * ====================================================================== */

typedef struct acfg {
    const char *name;
    uint8_t rev_i, rev_r;
    bool p2p;
    unsigned rtr_i, rtr_r, rtr_expect;
    bool mark_i, mark_r, crc_i, crc_r;
    uint32_t emss; /* 0: default */
} acfg;

static void acfg_settings(const acfg *c, iw_conn_settings *si, iw_conn_settings *sr) {
    iw_conn_settings_default(si, IW_ROLE_INITIATOR);
    iw_conn_settings_default(sr, IW_ROLE_RESPONDER);
    si->mpa_rev = c->rev_i;
    sr->mpa_rev = c->rev_r;
    si->p2p = sr->p2p = c->p2p;
    si->rtr = c->rtr_i;
    sr->rtr = c->rtr_r;
    si->markers = c->mark_i;
    sr->markers = c->mark_r;
    si->crc = c->crc_i;
    sr->crc = c->crc_r;
    si->emss = sr->emss = c->emss;
    static const uint8_t pdi[] = "initiator private data";
    static const uint8_t pdr[] = "responder pd";
    si->private_data = pdi;
    si->private_data_len = sizeof pdi;
    sr->private_data = pdr;
    sr->private_data_len = sizeof pdr;
}

/* Direction q -> t: markers iff t asked for them (RFC 5044 §7.1.1 M); CRC
 * iff either side set C. */
static bool dir_markers(const node *t) { return t->set.markers; }
static bool pair_crc(const pair *p) { return p->n[0].set.crc || p->n[1].set.crc; }
static uint32_t dir_mulpdu(const node *q, const node *t) {
    return rfc_mulpdu(q->set.emss ? q->set.emss : 1460, dir_markers(t));
}

static void check_connected(pair *p, const acfg *c) {
    node *ni = &p->n[0], *nr = &p->n[1];
    XCHECK_EQ(iw_conn_get_state(ni->conn), IW_CONN_RTS);
    XCHECK_EQ(iw_conn_get_state(nr->conn), IW_CONN_RTS);
    const iw_conn_info *ii = iw_conn_get_info(ni->conn), *ir = iw_conn_get_info(nr->conn);
    bool crc = pair_crc(p);
    XCHECK_EQ(ii->crc, crc);
    XCHECK_EQ(ir->crc, crc);
    XCHECK_EQ(ii->markers_tx, c->mark_r);
    XCHECK_EQ(ii->markers_rx, c->mark_i);
    XCHECK_EQ(ir->markers_tx, c->mark_i);
    XCHECK_EQ(ir->markers_rx, c->mark_r);
    XCHECK_EQ(ii->mulpdu, dir_mulpdu(ni, nr));
    XCHECK_EQ(ir->mulpdu, dir_mulpdu(nr, ni));
    XCHECK_EQ(ii->p2p, c->p2p);
    XCHECK_EQ(ir->p2p, c->p2p);
    if (c->p2p)
        XCHECK_EQ(ii->rtr, c->rtr_expect);
    /* Private Data reaches the other ULP (RFC 5044 §7.1.1). */
    XCHECK_EQ(ir->peer_private_data_len, ni->set.private_data_len);
    XCHECK(memcmp(ir->peer_private_data, ni->set.private_data, ni->set.private_data_len) == 0);
    XCHECK_EQ(ii->peer_private_data_len, nr->set.private_data_len);
    XCHECK(memcmp(ii->peer_private_data, nr->set.private_data, nr->set.private_data_len) == 0);
    XCHECK_EQ(ev_count(&ni->ev, IW_EV_CONNECTED), 1);
    XCHECK_EQ(ev_count(&nr->ev, IW_EV_CONNECTED), 1);
    /* RFC 6581 §9: a Send RTR consumed MSN 1 of the responder's QN 0. */
    if (c->p2p && c->rtr_expect == IW_RTR_SEND)
        nr->recv_msn = 2;
}

static uint64_t src_off(unsigned k) { return (uint64_t)(k * 7919u) % (SRC_LEN - 110000); }

/* RFC 5040 §5.3: Sends delivered in order, one buffer each, MSN + 1 each. */
static void step_sends(pair *p, int qi) {
    node *q = &p->n[qi], *t = &p->n[!qi];
    uint32_t room = dir_mulpdu(q, t) - IW_DDP_UNTAGGED_HDR_LEN;
    const uint32_t sizes[] = {0, 1, room - 1, room, room + 1, 5000, 3 * room + 7};
    enum { N = sizeof sizes / sizeof sizes[0] };
    size_t slot[N];
    for (int k = 0; k < N; k++)
        slot[k] = post_recv(t);
    for (int k = 0; k < N; k++) {
        iw_send_wr wr = {
            .op = k & 1 ? IW_WR_SEND_SE : IW_WR_SEND, .data = g_src + src_off(k), .len = sizes[k]};
        post(q, wr);
    }
    pump(p);
    for (int k = 0; k < N; k++) {
        const evrec *r = take_ev(t, IW_EV_RECV);
        XREQUIRE(r);
        XCHECK_EQ(r->status, IW_WC_SUCCESS);
        XCHECK_EQ(r->wr_id, 0x900000 + slot[k]);
        XCHECK_EQ(r->len, sizes[k]);
        XCHECK_EQ(r->msn, t->recv_msn++);
        XCHECK_EQ(r->solicited, (k & 1) != 0);
        XCHECK(!r->has_inv && !r->has_imm);
        memcpy(t->model + OFF_R + slot[k] * RBUF, g_src + src_off(k), sizes[k]);
        const evrec *d = take_ev(q, IW_EV_SEND_DONE);
        XREQUIRE(d);
        XCHECK_EQ(d->status, IW_WC_SUCCESS);
    }
out:
    check_model(t, "sends");
}

/* RFC 7306 §6: Immediate Data consumes one untagged buffer and hands its 8
 * octets to the ULP; with SE it is solicited. */
static void step_imm(pair *p, int qi) {
    node *q = &p->n[qi], *t = &p->n[!qi];
    size_t s0 = post_recv(t), s1 = post_recv(t);
    iw_send_wr w0 = {.op = IW_WR_IMM, .imm = {1, 2, 3, 4, 5, 6, 7, 8}};
    iw_send_wr w1 = {.op = IW_WR_IMM_SE, .imm = {0xF0, 0xE1, 0xD2, 0xC3, 0xB4, 0xA5, 0x96, 0x87}};
    post(q, w0);
    post(q, w1);
    pump(p);
    const iw_send_wr *w[2] = {&w0, &w1};
    size_t slots[2] = {s0, s1};
    for (int k = 0; k < 2; k++) {
        const evrec *r = take_ev(t, IW_EV_RECV);
        XREQUIRE(r);
        XCHECK_EQ(r->status, IW_WC_SUCCESS);
        XCHECK_EQ(r->wr_id, 0x900000 + slots[k]);
        XCHECK_EQ(r->msn, t->recv_msn++);
        XCHECK(r->has_imm);
        XCHECK(memcmp(r->imm, w[k]->imm, 8) == 0);
        XCHECK_EQ(r->solicited, k == 1);
        /* The buffer either stays as it was or holds the 8 octets. */
        uint8_t *b = t->arena + OFF_R + slots[k] * RBUF, *mb = t->model + OFF_R + slots[k] * RBUF;
        XCHECK(memcmp(b, mb, RBUF) == 0 ||
               (memcmp(b, w[k]->imm, 8) == 0 && memcmp(b + 8, mb + 8, RBUF - 8) == 0));
        memcpy(mb, b, RBUF);
        XCHECK(take_ev(q, IW_EV_SEND_DONE) != NULL);
    }
out:
    check_model(t, "immediate data");
}

/* RFC 5040 §5.1 Writes at the MULPDU edges, then a Send: once the Send is
 * delivered, the Writes before it are placed (§5.5 rule 5). */
static void step_writes(pair *p, int qi) {
    node *q = &p->n[qi], *t = &p->n[!qi];
    uint32_t mul = dir_mulpdu(q, t), room = mul - IW_DDP_TAGGED_HDR_LEN;
    const uint32_t sizes[] = {0, 1, mul - 1, mul, mul + 1, room - 1, room, room + 1, 100000};
    enum { N = sizeof sizes / sizeof sizes[0] };
    uint64_t off = 3;
    uint64_t offs[N];
    for (int k = 0; k < N; k++) {
        offs[k] = off;
        iw_send_wr wr = {.op = IW_WR_WRITE,
                         .data = g_src + src_off(100 + k),
                         .len = sizes[k],
                         .remote_stag = t->st_t,
                         .remote_to = t->to_t + off};
        post(q, wr);
        off += sizes[k] + 5;
    }
    size_t slot = post_recv(t);
    iw_send_wr s = {.op = IW_WR_SEND, .data = g_src, .len = 16};
    post(q, s);
    pump(p);
    for (int k = 0; k < N; k++) {
        memcpy(t->model + OFF_T + offs[k], g_src + src_off(100 + k), sizes[k]);
        const evrec *d = take_ev(q, IW_EV_WRITE_DONE);
        XREQUIRE(d);
        XCHECK_EQ(d->status, IW_WC_SUCCESS);
    }
    {
        const evrec *r = take_ev(t, IW_EV_RECV);
        XREQUIRE(r);
        XCHECK_EQ(r->wr_id, 0x900000 + slot);
        XCHECK_EQ(r->msn, t->recv_msn++);
        memcpy(t->model + OFF_R + slot * RBUF, g_src, 16);
        XCHECK(take_ev(q, IW_EV_SEND_DONE) != NULL);
    }
out:
    check_model(t, "writes");
}

static uint64_t sink_alloc(node *q, uint32_t len) {
    if (q->s_off + len + 3 > LEN_S)
        q->s_off = 0;
    uint64_t o = q->s_off + 1;
    q->s_off += len + 3;
    return o;
}

static void post_read(node *q, node *t, uint64_t roff, uint32_t len, uint64_t *soff) {
    *soff = sink_alloc(q, len);
    iw_send_wr wr = {.op = IW_WR_READ,
                     .len = len,
                     .local_stag = q->st_s,
                     .local_to = q->to_s + *soff,
                     .remote_stag = t->st_t,
                     .remote_to = t->to_t + roff};
    post(q, wr);
}

/* RFC 5040 §5.2: Reads of every edge size, zero-length included; each Read
 * Response lands in the sink its request named, responses in order. */
static void step_reads(pair *p, int qi) {
    node *q = &p->n[qi], *t = &p->n[!qi];
    uint32_t mul = dir_mulpdu(t, q), room = mul - IW_DDP_TAGGED_HDR_LEN;
    const uint32_t sizes[] = {0, 1, mul - 1, mul, mul + 1, room - 1, room, room + 1, 100000};
    enum { N = sizeof sizes / sizeof sizes[0] };
    uint64_t soff[N], roff[N];
    for (int k = 0; k < N; k++) {
        roff[k] = (uint64_t)(k * 4099 + 1) % (LEN_T - 100001);
        post_read(q, t, roff[k], sizes[k], &soff[k]);
    }
    pump(p);
    for (int k = 0; k < N; k++) {
        const evrec *d = take_ev(q, IW_EV_READ_DONE);
        XREQUIRE(d);
        XCHECK_EQ(d->status, IW_WC_SUCCESS);
        XCHECK_EQ(d->len, sizes[k]);
        memcpy(q->model + OFF_S + soff[k], t->model + OFF_T + roff[k], sizes[k]);
    }
out:
    check_model(q, "reads");
    check_model(t, "reads (source)");
}

/* RFC 5040 §6.1 / RFC 6581 §9.1: never more Read Requests outstanding than
 * the negotiated ORD. The requester's output is taken alone, before any
 * response can arrive. */
static void step_ord(pair *p, int qi) {
    node *q = &p->n[qi], *t = &p->n[!qi];
    uint32_t ord = iw_conn_get_info(q->conn)->ord;
    uint32_t nreq = ord + 3 < 40 ? ord + 3 : 40;
    uint64_t soff[40], roff[40];
    for (uint32_t k = 0; k < nreq; k++) {
        roff[k] = 1000 + k * 97;
        post_read(q, t, roff[k], 64 + k, &soff[k]);
    }
    size_t pos0 = q->wire.len;
    iw_peer_buf fresh = {0};
    flush_out(q, &fresh, &p->ch);
    {
        /* Decode just the fresh octets: mid-stream, at their grid position. */
        size_t rr_len = IW_MPA_RR_HDR_LEN + rd16(q->wire.p + 18);
        iw_df_cfg c = df_cfg(IW_DF_START_FPDU, dir_markers(t), pair_crc(p));
        c.stream_pos = (uint32_t)(pos0 - rr_len);
        iw_peer_trace tr = {0};
        XCHECK_EQ(iw_peer_decode(&tr, fresh.p, fresh.len, &c), 0);
        XCHECK_EQ(iw_peer_count_op(&tr, IW_OP_READ_REQ), nreq < ord ? nreq : ord);
        iw_peer_trace_free(&tr);
    }
    deliver(t, fresh.p, fresh.len, &p->ch);
    iw_peer_buf_free(&fresh);
    pump(p);
    for (uint32_t k = 0; k < nreq; k++) {
        const evrec *d = take_ev(q, IW_EV_READ_DONE);
        XREQUIRE(d);
        XCHECK_EQ(d->status, IW_WC_SUCCESS);
        memcpy(q->model + OFF_S + soff[k], t->model + OFF_T + roff[k], 64 + k);
    }
out:
    check_model(q, "reads up to ORD");
}

static void put_word(node *t, int w, uint64_t v) {
    memcpy(t->arena + OFF_A + 8 * w, &v, 8); /* host order (RFC 7306 §5.1.1) */
    memcpy(t->model + OFF_A + 8 * w, &v, 8);
}

/* RFC 7306 §5.1: FetchAdd (plain, 64-bit wrap, and with Add Mask fields),
 * CmpSwap (match, no match, masks). ATOMIC_DONE carries the original value. */
static void step_atomics(pair *p, int qi) {
    node *q = &p->n[qi], *t = &p->n[!qi];
    typedef struct {
        iw_wr_op op;
        uint64_t orig, add_swap, add_swap_mask, compare, compare_mask;
    } at;
    const at ops[] = {
        {IW_WR_FETCH_ADD, 0xFFFFFFFFFFFFFFF0ull, 0x25, 0, 0, 0},
        {IW_WR_FETCH_ADD, 0xFFFF0001FFFF7FFFull, 0x0001000100010001ull, 0x8000800080008000ull, 0,
         0},
        {IW_WR_FETCH_ADD, 0x00FFFFFF7FFFFFFFull, 0x0101000000000001ull, 0x8000000080000080ull, 0,
         0},
        {IW_WR_CMP_SWAP, 0x1122334455667788ull, 0xDEADBEEFCAFEF00Dull, 0x00000000FFFFFFFFull,
         0x1122AAAA55667788ull, 0xFFFF0000FFFFFFFFull},
        {IW_WR_CMP_SWAP, 0x1122334455667788ull, 0xDEADBEEFCAFEF00Dull, ~0ull, 0x1122334455667789ull,
         ~0ull},
        {IW_WR_CMP_SWAP, 0x0123456789ABCDEFull, 0xFFFFFFFFFFFFFFFFull, 0xF0F0F0F0F0F0F0F0ull,
         0x0ull, 0x0ull},
    };
    enum { N = sizeof ops / sizeof ops[0] };
    for (int k = 0; k < N; k++) {
        put_word(t, k, ops[k].orig);
        iw_send_wr wr = {.op = ops[k].op,
                         .remote_stag = t->st_a,
                         .remote_to = t->to_a + 8 * k,
                         .add_swap = ops[k].add_swap,
                         .add_swap_mask = ops[k].add_swap_mask,
                         .compare = ops[k].compare,
                         .compare_mask = ops[k].compare_mask};
        post(q, wr);
    }
    pump(p);
    for (int k = 0; k < N; k++) {
        const evrec *d = take_ev(q, IW_EV_ATOMIC_DONE);
        XREQUIRE(d);
        XCHECK_EQ(d->status, IW_WC_SUCCESS);
        XCHECK_EQ(d->atomic_orig, ops[k].orig);
        uint64_t v = ops[k].op == IW_WR_FETCH_ADD
                         ? ref_masked_add(ops[k].orig, ops[k].add_swap, ops[k].add_swap_mask)
                         : ref_cmp_swap(ops[k].orig, ops[k].compare, ops[k].compare_mask,
                                        ops[k].add_swap, ops[k].add_swap_mask);
        memcpy(t->model + OFF_A + 8 * k, &v, 8);
    }
out:
    check_model(t, "atomics");
}

/* RFC 5040 §5.3: Send with Invalidate invalidates the named STag before the
 * Send is delivered; the RECV reports it. */
static void step_send_inv(pair *p, int qi) {
    node *q = &p->n[qi], *t = &p->n[!qi];
    size_t s0 = post_recv(t), s1 = post_recv(t);
    iw_send_wr w0 = {.op = IW_WR_SEND_INV, .data = g_src + 77, .len = 100, .inv_stag = t->st_i1};
    iw_send_wr w1 = {.op = IW_WR_SEND_SE_INV, .len = 0, .inv_stag = t->st_i2};
    post(q, w0);
    post(q, w1);
    pump(p);
    const evrec *r = take_ev(t, IW_EV_RECV);
    XREQUIRE(r);
    XCHECK_EQ(r->status, IW_WC_SUCCESS);
    XCHECK_EQ(r->wr_id, 0x900000 + s0);
    XCHECK_EQ(r->msn, t->recv_msn++);
    XCHECK(r->has_inv && r->inv_stag == t->st_i1 && !r->solicited);
    XCHECK_EQ(r->len, 100);
    memcpy(t->model + OFF_R + s0 * RBUF, g_src + 77, 100);
    r = take_ev(t, IW_EV_RECV);
    XREQUIRE(r);
    XCHECK_EQ(r->wr_id, 0x900000 + s1);
    XCHECK_EQ(r->msn, t->recv_msn++);
    XCHECK(r->has_inv && r->inv_stag == t->st_i2 && r->solicited);
    XCHECK_EQ(r->len, 0);
    iw_mr_info mi;
    XCHECK(iw_mr_query(t->rnic, t->st_i1, &mi) != 0 || !mi.valid);
    XCHECK(iw_mr_query(t->rnic, t->st_i2, &mi) != 0 || !mi.valid);
    XCHECK(take_ev(q, IW_EV_SEND_DONE) && take_ev(q, IW_EV_SEND_DONE));
out:
    check_model(t, "send with invalidate");
}

/* RFC 5040 §5.5 rule 15: operations complete in submission order. A Send
 * and a Write posted after a Read may not complete before it; checked on
 * the requester's own output before any response exists. */
static void step_order(pair *p, int qi) {
    node *q = &p->n[qi], *t = &p->n[!qi];
    size_t slot = post_recv(t);
    uint64_t soff;
    post_read(q, t, 4242, 5000, &soff);
    iw_send_wr s = {.op = IW_WR_SEND, .data = g_src + 5, .len = 100};
    iw_send_wr w = {.op = IW_WR_WRITE,
                    .data = g_src + 9,
                    .len = 100,
                    .remote_stag = t->st_t,
                    .remote_to = t->to_t + 200000};
    uint64_t id_s = post(q, s), id_w = post(q, w);
    size_t before = q->ev.n;
    iw_peer_buf fresh = {0};
    flush_out(q, &fresh, &p->ch);
    for (size_t i = before; i < q->ev.n; i++)
        XCHECK(q->ev.v[i].wr_id != id_s && q->ev.v[i].wr_id != id_w);
    deliver(t, fresh.p, fresh.len, &p->ch);
    iw_peer_buf_free(&fresh);
    pump(p);
    const evrec *d = take_ev(q, IW_EV_READ_DONE);
    XCHECK(d && d->status == IW_WC_SUCCESS);
    XCHECK(take_ev(q, IW_EV_SEND_DONE) && take_ev(q, IW_EV_WRITE_DONE));
    memcpy(q->model + OFF_S + soff, t->model + OFF_T + 4242, 5000);
    memcpy(t->model + OFF_R + slot * RBUF, g_src + 5, 100);
    memcpy(t->model + OFF_T + 200000, g_src + 9, 100);
    const evrec *r = take_ev(t, IW_EV_RECV);
    XCHECK(r && r->msn == t->recv_msn++);
    check_model(q, "ordering");
    check_model(t, "ordering");
}

/* The completion sequence of a node equals its submission sequence. */
static void check_completion_order(const node *n) {
    size_t k = 0;
    for (size_t i = 0; i < n->ev.n; i++) {
        if (!is_completion(n->ev.v[i].type))
            continue;
        XCHECK(k < n->n_posted);
        if (k < n->n_posted && n->ev.v[i].wr_id != n->posted[k]) {
            XCHECK_EQ(n->ev.v[i].wr_id, n->posted[k]);
            return;
        }
        k++;
    }
    XCHECK_EQ(k, n->n_posted);
}

/* After step_send_inv, STag i1 of t is invalid: a Write to it is a DDP
 * Invalid STag (RFC 5041 §7.1 tagged (1)): t sends one Terminate, places
 * nothing, and sends nothing after it (RFC 5040 §5.4). */
static void step_terminate(pair *p, int qi) {
    node *q = &p->n[qi], *t = &p->n[!qi];
    iw_send_wr w = {.op = IW_WR_WRITE,
                    .data = g_src + 1,
                    .len = 16,
                    .remote_stag = t->st_i1,
                    .remote_to = t->to_i1};
    post(q, w);
    pump(p);
    const evrec *ts = ev_last(&t->ev, IW_EV_TERM_SENT);
    const evrec *tr = ev_last(&q->ev, IW_EV_TERM_RECEIVED);
    XREQUIRE(ts && tr);
    XCHECK_EQ(ev_count(&t->ev, IW_EV_TERM_SENT), 1);
    XCHECK_EQ(ts->term.triple, IW_TERM_DDP_T_INVALID_STAG);
    XCHECK(term_same(&ts->term, &tr->term));
    XCHECK(tr->term.m && tr->term.d && !tr->term.r);
    XCHECK_EQ(tr->term.hdr_len, IW_DDP_TAGGED_HDR_LEN);
    XCHECK_EQ(tr->term.ddp_seg_len, IW_DDP_TAGGED_HDR_LEN + 16);
    XCHECK_EQ(iw_conn_get_state(t->conn), IW_CONN_TERMINATE);
    iw_send_wr again = {.op = IW_WR_SEND, .data = g_src, .len = 1};
    XCHECK_EQ(iw_conn_post_send(t->conn, &again), IW_ERR_PROTO);
out:
    check_model(t, "write to an invalidated STag");
}

typedef struct aresult {
    bool valid;
    iw_peer_buf wire[2];
    evlog ev[2];
    uint8_t *arena[2];
} aresult;

static void aresult_free(aresult *r) {
    for (int i = 0; i < 2; i++) {
        iw_peer_buf_free(&r->wire[i]);
        evlog_free(&r->ev[i]);
        arena_put(r->arena[i]);
    }
    memset(r, 0, sizeof *r);
}

/* Re-decode both directions with the codecs and check the framing the
 * engine negotiated, the startup frames and the first FPDU (RTR). */
static void check_wire(pair *p, const acfg *c) {
    node *ni = &p->n[0], *nr = &p->n[1];
    bool crc = pair_crc(p);
    iw_peer_trace ti = {0}, tr = {0};
    decode_node(&ti, ni, dir_markers(nr), crc);
    decode_node(&tr, nr, dir_markers(ni), crc);
    check_stream(&ti, dir_mulpdu(ni, nr));
    check_stream(&tr, dir_mulpdu(nr, ni));
    XREQUIRE(ti.n > 1 && tr.n > 1);
    const iw_mpa_rr *rq = &ti.v[0].rr, *rp = &tr.v[0].rr;
    XCHECK_EQ(ti.v[0].type, IW_FRAME_MPA_REQUEST);
    XCHECK_EQ(tr.v[0].type, IW_FRAME_MPA_REPLY);
    XCHECK_EQ(rq->m, c->mark_i);
    XCHECK_EQ(rq->c, c->crc_i);
    XCHECK_EQ(rp->m, c->mark_r);
    XCHECK_EQ(rp->c, c->crc_r);
    XCHECK(!rp->r);
    XCHECK_EQ(rq->rev, c->rev_i);
    /* RFC 6581 §6, §10: answer an RFC 5044 Request with an RFC 5044 Reply. */
    bool enh = c->rev_i >= 2;
    XCHECK_EQ(rq->enhanced, enh);
    XCHECK_EQ(rp->enhanced, enh);
    XCHECK_EQ(rp->rev, enh ? 2 : 1);
    if (enh) {
        XCHECK_EQ(rq->v2.p2p, c->p2p);
        XCHECK_EQ(rp->v2.p2p, c->p2p);
        if (c->p2p) {
            /* §9.2: the Reply names at least one RTR, all supported by the
             * responder; the initiator's choice is among them and its own. */
            unsigned rb = (rp->v2.rtr_send ? IW_RTR_SEND : 0) |
                          (rp->v2.rtr_write ? IW_RTR_WRITE : 0) |
                          (rp->v2.rtr_read ? IW_RTR_READ : 0);
            XCHECK(rb != 0 && (rb & ~c->rtr_r) == 0);
            XCHECK(rb & c->rtr_expect);
        } else {
            XCHECK(!rq->v2.rtr_send && !rq->v2.rtr_write && !rq->v2.rtr_read);
        }
    }
    if (c->p2p) {
        /* §5: the RTR is the initiator's first FPDU. */
        const iw_peer_frame *f = nth_fpdu(&ti, 0);
        XREQUIRE(f);
        unsigned op = c->rtr_expect == IW_RTR_SEND    ? IW_OP_SEND
                      : c->rtr_expect == IW_RTR_WRITE ? IW_OP_WRITE
                                                      : IW_OP_READ_REQ;
        XCHECK_EQ(f->msg.opcode, op);
        XCHECK_EQ(f->msg.payload_len, 0);
        if (op == IW_OP_READ_REQ) {
            XCHECK_EQ(f->msg.u.read_req.read_size, 0);
            /* RFC 5040 §5.2.1: answered by a zero-length Read Response. */
            const iw_peer_frame *g = nth_fpdu(&tr, 0);
            XREQUIRE(g);
            XCHECK_EQ(g->msg.opcode, IW_OP_READ_RESP);
            XCHECK_EQ(g->ulpdu_len, IW_DDP_TAGGED_HDR_LEN);
            XCHECK(g->msg.ddp.last);
        }
    }
    /* RFC 5040 §5.4: the responder's Terminate (step_terminate) is the last
     * thing it sent, and the only Terminate on the connection. */
    const iw_peer_frame *last = nth_fpdu(&tr, count_fpdus(&tr) - 1);
    XCHECK(last && last->msg.opcode == IW_OP_TERMINATE);
    XCHECK_EQ(iw_peer_count_op(&tr, IW_OP_TERMINATE) + iw_peer_count_op(&ti, IW_OP_TERMINATE), 1);
out:
    iw_peer_trace_free(&ti);
    iw_peer_trace_free(&tr);
}

static void run_scenario(const acfg *c, uint64_t seed, bool whole, aresult *res) {
    iw_conn_settings si, sr;
    acfg_settings(c, &si, &sr);
    pair p;
    snprintf(g_ctx, sizeof g_ctx, "A %s seed %llu%s", c->name, (unsigned long long)seed,
             whole                ? " whole"
             : seed == UINT64_MAX ? " one octet at a time"
                                  : "");
    if (getenv("IW_ENGINE_VERBOSE"))
        fprintf(stderr, "-- %s\n", g_ctx);
    if (pair_init(&p, &si, &sr, seed, whole)) {
        XCHECK(!"pair_init");
        pair_free(&p);
        return;
    }
    pump(&p);
    check_connected(&p, c);
    for (int qi = 0; qi < 2; qi++) {
        step_sends(&p, qi);
        step_imm(&p, qi);
        step_writes(&p, qi);
        step_reads(&p, qi);
        step_ord(&p, qi);
        step_atomics(&p, qi);
        step_send_inv(&p, qi);
        step_order(&p, qi);
    }
    step_terminate(&p, 0); /* the initiator writes to the responder's invalidated i1 */
    for (int i = 0; i < 2; i++) {
        check_completion_order(&p.n[i]);
        check_model(&p.n[i], "scenario");
    }
    check_wire(&p, c);
    if (getenv("IW_ENGINE_VERBOSE"))
        fprintf(stderr, "   wire octets: %zu / %zu, pump rounds so far %lu\n", p.n[0].wire.len,
                p.n[1].wire.len, g_pump_rounds);
    /* The same scenario must give the same bytes, events and memory however
     * the streams were cut. */
    if (!res->valid) {
        res->valid = true;
        for (int i = 0; i < 2; i++) {
            iw_peer_buf_add(&res->wire[i], p.n[i].wire.p, p.n[i].wire.len);
            res->ev[i] = p.n[i].ev;
            memset(&p.n[i].ev, 0, sizeof p.n[i].ev);
            res->arena[i] = p.n[i].arena;
            p.n[i].arena = NULL;
        }
    } else {
        for (int i = 0; i < 2; i++) {
            XCHECK_EQ(p.n[i].wire.len, res->wire[i].len);
            XCHECK(p.n[i].wire.len == res->wire[i].len &&
                   memcmp(p.n[i].wire.p, res->wire[i].p, res->wire[i].len) == 0);
            XCHECK_EQ(p.n[i].ev.n, res->ev[i].n);
            for (size_t k = 0; k < p.n[i].ev.n && k < res->ev[i].n; k++)
                if (!ev_same(&p.n[i].ev.v[k], &res->ev[i].v[k])) {
                    XCHECK(!"event sequence depends on chunking");
                    break;
                }
            XCHECK(memcmp(p.n[i].arena, res->arena[i], ARENA_LEN) == 0);
        }
    }
    pair_free(&p);
}

static void a_run_config(const acfg *c, bool ones) {
    aresult res = {0};
    run_scenario(c, 0, true, &res);
    for (uint64_t seed = 1; seed <= 4; seed++)
        run_scenario(c, seed, false, &res);
    if (ones)
        run_scenario(c, UINT64_MAX, false, &res);
    aresult_free(&res);
}

IW_TEST(a_back_to_back_matrix) {
    static const struct {
        const char *name;
        uint8_t rev_i;
        bool p2p;
        unsigned rtr_i, rtr_r, expect;
    } modes[] = {
        {"rev1", 1, false, 0, 0, 0},
        {"rev2-cs", 2, false, 0, 0, 0},
        {"p2p-send", 2, true, IW_RTR_SEND, IW_RTR_SEND | IW_RTR_WRITE | IW_RTR_READ, IW_RTR_SEND},
        {"p2p-write", 2, true, IW_RTR_SEND | IW_RTR_WRITE | IW_RTR_READ, IW_RTR_WRITE,
         IW_RTR_WRITE},
        {"p2p-read", 2, true, IW_RTR_READ | IW_RTR_SEND, IW_RTR_READ, IW_RTR_READ},
    };
    char name[128];
    for (int mk = 0; mk < 2; mk++)
        for (int crc = 0; crc < 2; crc++)
            for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++)
                for (int e = 0; e < 2; e++) {
                    acfg c = {0};
                    snprintf(name, sizeof name, "%s markers=%d crc=%d emss=%s", modes[m].name, mk,
                             crc, e ? "300" : "default");
                    c.name = name;
                    c.rev_i = modes[m].rev_i;
                    c.rev_r = 2; /* a Rev 2 responder must accept Rev 1 (RFC 6581 §6) */
                    c.p2p = modes[m].p2p;
                    c.rtr_i = modes[m].rtr_i ? modes[m].rtr_i : IW_RTR_WRITE;
                    c.rtr_r = modes[m].rtr_r ? modes[m].rtr_r : IW_RTR_WRITE;
                    c.rtr_expect = modes[m].expect;
                    c.mark_i = c.mark_r = mk;
                    c.crc_i = c.crc_r = crc;
                    c.emss = e ? 300 : 0;
                    /* the densest markers and most FPDUs, also one octet
                     * at a time */
                    a_run_config(&c, mk && crc && e && (m == 0 || m == 4));
                }
}

/* Mixed negotiation: markers in one direction only, C=1 on one side only
 * (CRCs then run both ways, RFC 5044 §7.1.1). */
IW_TEST(a_back_to_back_mixed) {
    const acfg cs[] = {
        {"mixed: M only initiator, C only responder", 2, 2, false, IW_RTR_WRITE, IW_RTR_WRITE, 0,
         true, false, false, true, 300},
        {"mixed: M only responder, C only initiator, p2p", 2, 2, true, IW_RTR_READ,
         IW_RTR_READ | IW_RTR_WRITE, IW_RTR_READ, false, true, true, false, 1000},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        a_run_config(&cs[i], false);
}

/* ======================================================================
 * B. Violations: a raw peer against an engine
 * ====================================================================== */

/* Extra regions for the violation cases, inside the node's arena (in its
 * local-only Read sink area, so every byte around them is guarded). */
enum { B_SMALL = 1024, B_RQ_LEN = 256 };

typedef struct bctx {
    node *v;     /* the engine under test (responder) */
    iw_peer *pe; /* our side */
    uint32_t pd2;
    uint32_t st_ro, st_wo, st_other, st_dereg, st_inval, st_noinv;
    uint64_t to_ro, to_wo, to_other, to_dereg, to_inval, to_noinv;
    size_t pre_recvs; /* RECVs the case itself caused before the violation */
} bctx;

static int bctx_regions(bctx *b) {
    node *v = b->v;
    uint8_t *base = v->arena + OFF_S;
    const unsigned all = IW_ACCESS_LOCAL_WRITE | IW_ACCESS_REMOTE_READ | IW_ACCESS_REMOTE_WRITE;
    uint32_t tmp;
    b->to_ro = 0x10000;
    b->to_wo = 0x20000;
    b->to_other = 0x30000;
    b->to_dereg = 0x40000;
    b->to_inval = 0x50000;
    b->to_noinv = 0x60000;
    if (iw_pd_alloc(v->rnic, &b->pd2) ||
        iw_mr_reg(v->rnic, v->pd, base, B_SMALL, b->to_ro, IW_ACCESS_REMOTE_READ, &b->st_ro) ||
        iw_mr_reg(v->rnic, v->pd, base + 2048, B_SMALL, b->to_wo, IW_ACCESS_REMOTE_WRITE,
                  &b->st_wo) ||
        iw_mr_reg(v->rnic, b->pd2, base + 4096, B_SMALL, b->to_other, all, &b->st_other) ||
        iw_mr_reg(v->rnic, v->pd, base + 6144, B_SMALL, b->to_dereg, all, &b->st_dereg) ||
        iw_mr_dereg(v->rnic, b->st_dereg) ||
        iw_mr_reg(v->rnic, v->pd, base + 8192, B_SMALL, b->to_inval, all, &b->st_inval) ||
        iw_mr_invalidate(v->rnic, b->st_inval) ||
        iw_mr_reg(v->rnic, v->pd, base + 10240, B_SMALL, b->to_noinv, all | IW_MR_NO_INVALIDATE,
                  &b->st_noinv))
        return -1;
    /* A later registration reusing st_dereg's index gets a fresh key, so
     * the stale STag stays invalid (the 8-bit key of the verbs' STag layout). */
    if (iw_mr_reg(v->rnic, v->pd, base + 12288, B_SMALL, 0x70000, all, &tmp))
        return -1;
    return tmp == b->st_dereg ? -1 : 0;
}

enum {
    BF_NO_RECV = 1 << 0, /* post no receive buffer */
    BF_IRD1 = 1 << 1,    /* engine IRD 1, and the offending FPDUs arrive in one call */
    BF_LLP = 1 << 2,     /* an MPA (LLP) error: only after a valid RTR (RFC 5044 §7.1.2 rule 4) */
    BF_MARKERS = 1 << 3, /* needs markers negotiated */
    BF_CRC = 1 << 4,     /* needs CRCs negotiated */
    BF_ACCEPT = 1 << 5,  /* no Terminate: the valid Write after it is placed */
    BF_ZERO_READ = 1 << 6, /* answered by a zero-length Read Response */
    BF_CUT = 1 << 7,       /* with cut_through its own payload may land first (cut_off/len) */
    BF_HDR_PART = 1 << 8,  /* segment shorter than its DDP header */
};

typedef struct bcase {
    const char *name;
    void (*build)(bctx *b);
    uint16_t triple;
    unsigned flags;
    uint32_t cut_off, cut_len; /* BF_CUT: the segment's target, from the region's start */
} bcase;

static const uint8_t g_pay[2048] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

/* ---- the offending FPDUs ---- */

static void bw(bctx *b, uint32_t stag, uint64_t to, size_t len) {
    iw_peer_write(b->pe, stag, to, g_pay, len);
}
/* RFC 5041 §7.1 tagged (1): unknown index */
static void b_w_unknown(bctx *b) { bw(b, 0x00777701, b->v->to_t, 64); }
/* (1): index right, key wrong (RFC 5041 §7.1: an STag the RNIC does not know) */
static void b_w_key(bctx *b) { bw(b, b->v->st_t ^ 0x5A, b->v->to_t, 64); }
static void b_w_dereg(bctx *b) { bw(b, b->st_dereg, b->to_dereg, 64); }
/* RFC 5040 §5.3 / local invalidate */
static void b_w_inval(bctx *b) { bw(b, b->st_inval, b->to_inval, 64); }
/* (1) "valid for this stream": another PD (RFC 5042 §6.1.1) */
static void b_w_other_pd(bctx *b) { bw(b, b->st_other, b->to_other, 64); }
/* (2): the region does not allow remote placement (choice: Invalid STag) */
static void b_w_ro(bctx *b) { bw(b, b->st_ro, b->to_ro, 64); }
static void b_w_local_only(bctx *b) { bw(b, b->v->st_s, b->v->to_s, 64); }
/* (3) TO below base, (4) TO + length past the end, (5) wrap */
static void b_w_below(bctx *b) { bw(b, b->v->st_t, b->v->to_t - 1, 64); }
static void b_w_beyond(bctx *b) { bw(b, b->v->st_t, b->v->to_t + LEN_T - 10, 64); }
static void b_w_wrap(bctx *b) { bw(b, b->v->st_t, 0xFFFFFFFFFFFFFFF0ull, 64); }
/* RFC 5041 §5.2: a zero-length segment's STag/TO MUST NOT be checked. */
static void b_w_zero(bctx *b) { bw(b, 0xDEADBE01, 0xFFFFFFFFFFFFFFFFull, 0); }

static void bsend_msn(bctx *b, unsigned op, uint32_t msn, uint32_t mo, size_t len, uint32_t qn) {
    iw_rdmap_msg m;
    iw_peer_msg_init(b->pe, &m, op);
    m.ddp.msn = msn;
    m.ddp.mo = mo;
    m.ddp.qn = qn;
    iw_peer_msg(b->pe, &m, g_pay, len, NULL);
}
/* RFC 5041 §7.1 untagged (2): the next MSN has no buffer */
static void b_s_nobuf(bctx *b) { iw_peer_send(b->pe, IW_OP_SEND, 0, g_pay, 10); }
/* (5): MSN outside [base, base + posted] */
static void b_s_msn_high(bctx *b) { bsend_msn(b, IW_OP_SEND, 1 + 5, 0, 10, 0); }
static void b_s_msn_old(bctx *b) { bsend_msn(b, IW_OP_SEND, 0, 0, 10, 0); }
static void b_s_msn_replay(bctx *b) {
    iw_peer_send(b->pe, IW_OP_SEND, 0, g_pay, 10); /* valid: MSN 1, buffer 0 */
    memcpy(b->v->model + OFF_R, g_pay, 10);
    b->pre_recvs = 1;
    bsend_msn(b, IW_OP_SEND, 1, 0, 10, 0); /* MSN 1 again: now old */
}
/* (3) MO beyond the buffer, (4) MO + length beyond it */
static void b_s_mo(bctx *b) { bsend_msn(b, IW_OP_SEND, 1, B_RQ_LEN, 10, 0); }
static void b_s_long(bctx *b) { iw_peer_send(b->pe, IW_OP_SEND, 0, g_pay, B_RQ_LEN + 1); }
static void b_s_long_mo(bctx *b) { bsend_msn(b, IW_OP_SEND, 1, 200, 100, 0); }
/* (1) the QN is not one RDMAP uses (RFC 5040 §3.1, RFC 7306 §4) */
static void b_s_qn5(bctx *b) { bsend_msn(b, IW_OP_SEND, 1, 0, 10, 5); }
/* RFC 5040 §5.3, §7.2 (4)-(5): the Invalidate STag */
static void b_si_invalid(bctx *b) { iw_peer_send(b->pe, IW_OP_SEND_INV, 0x00ABCD01, g_pay, 10); }
static void b_si_other(bctx *b) { iw_peer_send(b->pe, IW_OP_SEND_SE_INV, b->st_other, g_pay, 10); }
static void b_si_noinv(bctx *b) { iw_peer_send(b->pe, IW_OP_SEND_INV, b->st_noinv, g_pay, 10); }

/* RFC 5040 §7.2 Read Request 4a-e */
static void brr(bctx *b, uint32_t size, uint32_t src, uint64_t src_to) {
    iw_peer_read_req(b->pe, 0x00424201, 0x7777, size, src, src_to);
}
static void b_r_stag(bctx *b) { brr(b, 64, 0x00ABCD01, 0); }
static void b_r_key(bctx *b) { brr(b, 64, b->v->st_t ^ 0x80, b->v->to_t); }
static void b_r_noread(bctx *b) { brr(b, 64, b->st_wo, b->to_wo); }
static void b_r_other(bctx *b) { brr(b, 64, b->st_other, b->to_other); }
static void b_r_below(bctx *b) { brr(b, 64, b->v->st_t, b->v->to_t - 1); }
static void b_r_beyond(bctx *b) { brr(b, 64, b->v->st_t, b->v->to_t + LEN_T - 10); }
static void b_r_wrap(bctx *b) { brr(b, 64, b->v->st_t, 0xFFFFFFFFFFFFFFF0ull); }
/* RFC 5040 §5.2.1: size 0 is not validated; answered by a zero-length
 * Read Response */
static void b_r_zero(bctx *b) { brr(b, 0, 0x00ABCD01, 0x123); }
/* RFC 5040 §6.1, RFC 6581 §9.1: a second Read Request beyond IRD 1 while
 * the first response has not gone out (no buffer on QN 1: 1/2/2, choice) */
static void b_r_ird(bctx *b) {
    brr(b, 64, b->v->st_t, b->v->to_t);
    brr(b, 64, b->v->st_t, b->v->to_t + 64);
}

/* RFC 7306 §5.1, §8.2 */
static void batomic(bctx *b, unsigned aop, uint32_t stag, uint64_t to) {
    iw_rdmap_atomic_req a = {0, (uint8_t)aop, 7, stag, to, 1, 0, 0, ~0ull};
    iw_peer_atomic_req(b->pe, &a);
}
static void b_a_misaligned(bctx *b) { batomic(b, IW_ATOMIC_FETCH_ADD, b->v->st_a, b->v->to_a + 4); }
static void b_a_noright(bctx *b) { batomic(b, IW_ATOMIC_FETCH_ADD, b->v->st_t, b->v->to_t); }
static void b_a_stag(bctx *b) { batomic(b, IW_ATOMIC_CMP_SWAP, 0x00ABCD01, 0); }
static void b_a_aop1(bctx *b) { batomic(b, 1, b->v->st_a, b->v->to_a); }

/* Versions and opcodes (RFC 5041 §4.1, RFC 5040 §4.1, §4.2) */
static void b_ddp_v0_ut(bctx *b) {
    iw_rdmap_msg m;
    iw_peer_msg_init(b->pe, &m, IW_OP_SEND);
    m.ddp.dv = 0;
    iw_peer_msg(b->pe, &m, g_pay, 10, NULL);
}
static void b_ddp_v0_t(bctx *b) {
    iw_rdmap_msg m;
    iw_peer_msg_init(b->pe, &m, IW_OP_WRITE);
    m.ddp.dv = 0;
    m.ddp.stag = b->v->st_t;
    m.ddp.to = b->v->to_t;
    iw_peer_msg(b->pe, &m, g_pay, 10, NULL);
}
static void brv(bctx *b, uint8_t rv) {
    iw_rdmap_msg m;
    iw_peer_msg_init(b->pe, &m, IW_OP_SEND);
    m.rv = rv;
    iw_peer_msg(b->pe, &m, g_pay, 10, NULL);
}
static void b_rdmap_v0(bctx *b) { brv(b, 0); }
static void b_rdmap_v2(bctx *b) { brv(b, 2); }
static void b_op_c(bctx *b) {
    iw_rdmap_msg m;
    iw_peer_msg_init(b->pe, &m, IW_OP_SEND);
    m.opcode = 0xC;
    iw_peer_msg(b->pe, &m, g_pay, 10, NULL);
}
/* RFC 7306 §6.3: exactly 8 octets (no code named: 0/2/0xFF, choice) */
static void b_imm7(bctx *b) {
    iw_rdmap_msg m;
    iw_peer_msg_init(b->pe, &m, IW_OP_IMM);
    uint8_t seg[64];
    iw_ssize n = iw_rdmap_encode_hdr(seg, sizeof seg, &m); /* 18 + 8 */
    iw_peer_fpdu(b->pe, seg, (size_t)n - 1, NULL);
}
/* A ULPDU too short for its DDP header (choice: 0/2/0xFF) */
static void b_trunc(bctx *b) {
    iw_rdmap_msg m;
    iw_peer_msg_init(b->pe, &m, IW_OP_SEND);
    uint8_t seg[64];
    iw_rdmap_encode_hdr(seg, sizeof seg, &m);
    iw_peer_fpdu(b->pe, seg, 5, NULL);
}

/* LLP (RFC 5044 §8 codes 2 and 3) */
static void b_crc(bctx *b) {
    iw_rdmap_msg m;
    iw_peer_msg_init(b->pe, &m, IW_OP_WRITE);
    m.ddp.stag = b->v->st_t;
    m.ddp.to = b->v->to_t + 512;
    iw_peer_fpdu_opt o = {.crc_xor = 0x00010000};
    iw_peer_msg(b->pe, &m, g_pay, 64, &o);
}
/* §6: the CRC is the first verdict, ahead of DDP's placement checks */
static void b_crc_and_stag(bctx *b) {
    iw_rdmap_msg m;
    iw_peer_msg_init(b->pe, &m, IW_OP_WRITE);
    m.ddp.stag = 0x00777701;
    m.ddp.to = 0;
    iw_peer_fpdu_opt o = {.crc_xor = 0x80};
    iw_peer_msg(b->pe, &m, g_pay, 64, &o);
}
static void b_marker(bctx *b) {
    iw_rdmap_msg m;
    iw_peer_msg_init(b->pe, &m, IW_OP_WRITE);
    m.ddp.stag = b->v->st_t;
    m.ddp.to = b->v->to_t + 1024;
    iw_peer_fpdu_opt o = {.marker_delta = 4};
    iw_peer_msg(b->pe, &m, g_pay, 700, &o);
}

static const bcase g_bcases[] = {
    {"write unknown STag", b_w_unknown, IW_TERM_DDP_T_INVALID_STAG, 0, 0, 0},
    {"write wrong key", b_w_key, IW_TERM_DDP_T_INVALID_STAG, 0, 0, 0},
    {"write deregistered", b_w_dereg, IW_TERM_DDP_T_INVALID_STAG, 0, 0, 0},
    {"write invalidated", b_w_inval, IW_TERM_DDP_T_INVALID_STAG, 0, 0, 0},
    {"write other PD", b_w_other_pd, IW_TERM_DDP_T_STAG_NOT_ASSOC, 0, 0, 0},
    {"write no remote write (read only)", b_w_ro, IW_TERM_DDP_T_INVALID_STAG, 0, 0, 0},
    {"write no remote write (local only)", b_w_local_only, IW_TERM_DDP_T_INVALID_STAG, 0, 0, 0},
    {"write TO below base", b_w_below, IW_TERM_DDP_T_BASE_BOUNDS, 0, 0, 0},
    {"write TO+len beyond end", b_w_beyond, IW_TERM_DDP_T_BASE_BOUNDS, 0, 0, 0},
    {"write TO+len wraps", b_w_wrap, IW_TERM_DDP_T_TO_WRAP, 0, 0, 0},
    {"zero-length write bogus STag", b_w_zero, 0, BF_ACCEPT, 0, 0},
    {"send no buffer", b_s_nobuf, IW_TERM_DDP_UT_NO_BUFFER, BF_NO_RECV, 0, 0},
    {"send MSN too high", b_s_msn_high, IW_TERM_DDP_UT_MSN_RANGE, 0, 0, 0},
    {"send MSN old (0)", b_s_msn_old, IW_TERM_DDP_UT_MSN_RANGE, 0, 0, 0},
    {"send MSN replayed", b_s_msn_replay, IW_TERM_DDP_UT_MSN_RANGE, 0, 0, 0},
    {"send MO beyond buffer", b_s_mo, IW_TERM_DDP_UT_INVALID_MO, 0, 0, 0},
    {"send too long", b_s_long, IW_TERM_DDP_UT_TOO_LONG, 0, 0, 0},
    {"send MO+len too long", b_s_long_mo, IW_TERM_DDP_UT_TOO_LONG, 0, 0, 0},
    {"send QN 5", b_s_qn5, IW_TERM_DDP_UT_INVALID_QN, 0, 0, 0},
    {"send-inv invalid STag", b_si_invalid, IW_TERM_RDMAP_PROT_CANT_INVALIDATE, 0, 0, 0},
    {"send-se-inv other PD", b_si_other, IW_TERM_RDMAP_PROT_CANT_INVALIDATE, 0, 0, 0},
    {"send-inv no-invalidate region", b_si_noinv, IW_TERM_RDMAP_PROT_CANT_INVALIDATE, 0, 0, 0},
    {"read bad source STag", b_r_stag, IW_TERM_RDMAP_INVALID_STAG, 0, 0, 0},
    {"read wrong key", b_r_key, IW_TERM_RDMAP_INVALID_STAG, 0, 0, 0},
    {"read no remote read", b_r_noread, IW_TERM_RDMAP_ACCESS_RIGHTS, 0, 0, 0},
    {"read other PD", b_r_other, IW_TERM_RDMAP_STAG_NOT_ASSOC, 0, 0, 0},
    {"read TO below base", b_r_below, IW_TERM_RDMAP_BASE_BOUNDS, 0, 0, 0},
    {"read beyond end", b_r_beyond, IW_TERM_RDMAP_BASE_BOUNDS, 0, 0, 0},
    {"read wraps", b_r_wrap, IW_TERM_RDMAP_TO_WRAP, 0, 0, 0},
    {"zero-size read bogus source", b_r_zero, 0, BF_ACCEPT | BF_ZERO_READ, 0, 0},
    {"read beyond IRD", b_r_ird, IW_TERM_DDP_UT_NO_BUFFER, BF_IRD1, 0, 0},
    {"atomic misaligned", b_a_misaligned, IW_TERM_RDMAP_CATASTROPHIC_STREAM, 0, 0, 0},
    {"atomic without right", b_a_noright, IW_TERM_RDMAP_ACCESS_RIGHTS, 0, 0, 0},
    {"atomic bad STag", b_a_stag, IW_TERM_RDMAP_INVALID_STAG, 0, 0, 0},
    {"atomic AOpCode 1", b_a_aop1, IW_TERM_RDMAP_UNEXPECTED_OPCODE, 0, 0, 0},
    {"DDP version 0 untagged", b_ddp_v0_ut, IW_TERM_DDP_UT_INVALID_VERSION, 0, 0, 0},
    {"DDP version 0 tagged", b_ddp_v0_t, IW_TERM_DDP_T_INVALID_VERSION, 0, 0, 0},
    {"RDMAP version 0", b_rdmap_v0, IW_TERM_RDMAP_INVALID_VERSION, 0, 0, 0},
    {"RDMAP version 2", b_rdmap_v2, IW_TERM_RDMAP_INVALID_VERSION, 0, 0, 0},
    {"opcode 0xC", b_op_c, IW_TERM_RDMAP_UNEXPECTED_OPCODE, 0, 0, 0},
    {"immediate data of 7 octets", b_imm7, IW_TERM_RDMAP_OP_UNSPECIFIED, 0, 0, 0},
    {"truncated DDP header", b_trunc, IW_TERM_RDMAP_OP_UNSPECIFIED, BF_HDR_PART, 0, 0},
    {"bad CRC", b_crc, IW_TERM_LLP_MPA_CRC, BF_LLP | BF_CRC | BF_CUT, 512, 64},
    {"bad CRC beats invalid STag", b_crc_and_stag, IW_TERM_LLP_MPA_CRC, BF_LLP | BF_CRC, 0, 0},
    {"marker FPDUPTR wrong, CRC valid", b_marker, IW_TERM_LLP_MPA_MARKER,
     BF_LLP | BF_MARKERS | BF_CUT, 1024, 700},
};

typedef struct bcfg {
    const char *name;
    bool p2p, markers, crc;
    bool engine_initiator; /* the raw peer is the responder */
    bool cut_through;      /* place before the CRC verdict (engine.h) */
} bcfg;

static const bcfg g_bcfgs[] = {
    {"p2p(write RTR)+markers+crc", true, true, true, false, false},
    {"client-server, no markers, no crc", false, false, false, false, false},
    {"client-server+markers+crc", false, true, true, false, false},
    {"engine initiator, p2p(write RTR)+markers+crc", true, true, true, true, false},
    {"engine initiator, client-server, no markers, crc", false, false, true, true, false},
    {"cut-through, client-server+markers+crc", false, true, true, false, true},
    {"cut-through, engine initiator, no markers, crc", false, false, true, true, true},
};

/* Feed a raw byte stream to an engine in random chunks, draining its output
 * after every chunk as a socket loop would. */
static void feed_chunked(node *v, const uint8_t *p, size_t n, chunker *ch) {
    size_t off = 0;
    while (off < n) {
        size_t k = chunk_len(ch, n - off);
        deliver(v, p + off, k, ch);
        flush_out(v, NULL, ch);
        off += k;
    }
}

static void check_terminate_frame(const iw_peer_frame *f, uint16_t triple, const uint8_t *bad,
                                  size_t bad_len, unsigned flags, const evrec *ts) {
    XCHECK_EQ(f->verdict.kind, IW_VERDICT_OK);
    XREQUIRE(f->rdmap_verdict.kind == IW_VERDICT_OK);
    const iw_rdmap_msg *m = &f->msg;
    /* RFC 5040 §4.8, §5.4: untagged, QN 2, its own MSN 1, one segment. */
    XCHECK_EQ(m->opcode, IW_OP_TERMINATE);
    XCHECK(!m->ddp.tagged && m->ddp.last);
    XCHECK_EQ(m->ddp.qn, IW_QN_TERMINATE);
    XCHECK_EQ(m->ddp.msn, 1);
    XCHECK_EQ(m->ddp.mo, 0);
    XCHECK_EQ(m->rv, IW_RDMAP_VERSION);
    XCHECK_EQ(m->ddp.dv, IW_DDP_VERSION);
    /* Terminate Control on the wire: Layer | EType, then the code, then M D R. */
    const uint8_t *u = f->ulpdu + IW_DDP_UNTAGGED_HDR_LEN;
    XCHECK_EQ(u[0], triple >> 8);
    XCHECK_EQ(u[1], triple & 0xFF);
    bool em, ed, er;
    fig10_bits(triple, bad_len > 1 ? (bad[1] & 0xF) : 0xF, &em, &ed, &er);
    const iw_rdmap_term *t = &m->u.term;
    XCHECK_EQ(t->m, em);
    XCHECK_EQ(t->r, er);
    if (flags & BF_HDR_PART)
        XCHECK(t->d || !ed); /* "if possible" */
    else
        XCHECK_EQ(t->d, ed);
    if (t->m || t->d)
        XCHECK_EQ(t->ddp_seg_len, bad_len); /* the offending ULPDU_Length */
    if (t->d && bad_len) {
        /* The offending DDP header, sized by its own T bit. */
        XCHECK_EQ(t->ddp_raw_len, iw_ddp_hdr_len(bad[0]));
        size_t k = t->ddp_raw_len < bad_len ? t->ddp_raw_len : bad_len;
        XCHECK(memcmp(t->ddp_raw, bad, k) == 0);
    }
    if (t->r) {
        /* The Read Request header as received (RFC 5040 §7.1 case 3). */
        XREQUIRE(bad_len >= IW_DDP_UNTAGGED_HDR_LEN + IW_RDMAP_READ_REQ_LEN);
        XCHECK(memcmp(t->ddp_raw + t->ddp_raw_len, bad + IW_DDP_UNTAGGED_HDR_LEN,
                      IW_RDMAP_READ_REQ_LEN) == 0);
    }
    /* The local report says the same. */
    XREQUIRE(ts);
    XCHECK_EQ(ts->term.triple, triple);
    XCHECK(ts->term.m == t->m && ts->term.d == t->d && ts->term.r == t->r);
    if (t->m || t->d)
        XCHECK_EQ(ts->term.ddp_seg_len, t->ddp_seg_len);
    size_t hl = (t->d ? t->ddp_raw_len : 0) + (t->r ? IW_RDMAP_READ_REQ_LEN : 0);
    XCHECK_EQ(ts->term.hdr_len, hl);
    if (hl && ts->term.hdr_len == hl)
        XCHECK(memcmp(ts->term.hdr, u + 6, hl) == 0);
out:;
}

static void run_bcase(const bcase *bc, const bcfg *cfg, uint64_t seed, bool whole) {
    snprintf(g_ctx, sizeof g_ctx, "B %s / %s seed %llu%s", bc->name, cfg->name,
             (unsigned long long)seed, whole ? " whole" : "");
    src_init();
    node v;
    iw_peer pe;
    iw_peer_trace tr = {0};
    uint8_t *bad = NULL;
    size_t bad_len = 0;
    chunker ch = {seed * 0x2545F4914F6CDD1Dull + 7, whole, false};
    iw_conn_settings s;
    iw_conn_settings_default(&s, cfg->engine_initiator ? IW_ROLE_INITIATOR : IW_ROLE_RESPONDER);
    s.markers = cfg->markers;
    s.crc = cfg->crc;
    s.cut_through = cfg->cut_through;
    if (cfg->engine_initiator) {
        s.p2p = cfg->p2p;
        s.rtr = IW_RTR_WRITE;
    }
    if (bc->flags & BF_IRD1)
        s.ird = 1;
    int rc = node_init(&v, cfg->engine_initiator ? 0 : 1, &s);
    rc |= iw_peer_init(&pe);
    bctx b = {.v = &v, .pe = &pe};
    XREQUIRE(rc == 0 && bctx_regions(&b) == 0 && iw_conn_start(v.conn, T0) == 0);
    memcpy(v.model, v.arena, ARENA_LEN);
    if (!(bc->flags & BF_NO_RECV))
        for (int k = 0; k < 2; k++)
            XREQUIRE(
                iw_conn_post_recv(v.conn, 0x900000 + k, v.arena + OFF_R + k * RBUF, B_RQ_LEN) == 0);
    /* Startup: our Request (+ the Write RTR, RFC 6581 §9.2), or the
     * engine's Request, our Reply and the engine's RTR. */
    iw_mpa_rr rq;
    iw_peer_rr_default(&rq, cfg->engine_initiator ? IW_MPA_REPLY : IW_MPA_REQUEST);
    rq.m = cfg->markers;
    rq.c = cfg->crc;
    rq.v2.p2p = cfg->p2p;
    rq.v2.rtr_write = cfg->p2p;
    if (bc->flags & BF_IRD1)
        rq.v2.ord = 1;
    if (cfg->engine_initiator)
        flush_out(&v, NULL, &ch);
    iw_peer_rr(&pe, &rq);
    iw_peer_full_operation(&pe, cfg->markers, cfg->crc);
    if (cfg->p2p && !cfg->engine_initiator)
        iw_peer_write(&pe, 0, 0, NULL, 0);
    feed_chunked(&v, pe.out.p, pe.out.len, &ch);
    iw_peer_take(&pe);
    XREQUIRE(iw_conn_get_state(v.conn) == IW_CONN_RTS);
    /* The engine initiator's own RTR precedes anything it answers with. */
    size_t rtr = cfg->engine_initiator && cfg->p2p;
    /* The violation, then a valid Write that must not be placed. */
    bc->build(&b);
    bad_len = pe.last_ulpdu_len;
    bad = malloc(bad_len + 1);
    memcpy(bad, pe.last_ulpdu, bad_len);
    uint8_t fill[64];
    memset(fill, 0xEE, sizeof fill);
    iw_peer_write(&pe, v.st_t, v.to_t + 128, fill, sizeof fill);
    XREQUIRE(pe.err == 0);
    if (bc->flags & BF_IRD1) {
        /* Both Read Requests in one call: no chance to send the first
         * response in between. */
        iw_ssize r = iw_conn_recv(v.conn, pe.out.p, pe.out.len, T0);
        XCHECK_EQ(r, (iw_ssize)pe.out.len);
        flush_out(&v, NULL, &ch);
    } else {
        feed_chunked(&v, pe.out.p, pe.out.len, &ch);
    }
    flush_out(&v, NULL, &ch);

    decode_node(&tr, &v, cfg->markers, cfg->crc);
    XREQUIRE(tr.n >= 1);
    XCHECK_EQ(tr.v[0].type, cfg->engine_initiator ? IW_FRAME_MPA_REQUEST : IW_FRAME_MPA_REPLY);
    XCHECK_EQ(tr.v[0].verdict.kind, IW_VERDICT_OK);
    XCHECK(!tr.v[0].rr.r);
    for (size_t i = 1; i < tr.n; i++)
        XCHECK_EQ(tr.v[i].type, IW_FRAME_FPDU);
    if (rtr) {
        const iw_peer_frame *f = nth_fpdu(&tr, 0);
        XCHECK(f && f->msg.opcode == IW_OP_WRITE && f->msg.payload_len == 0);
    }
    size_t nf = count_fpdus(&tr) - rtr;
    size_t recvs = 0;
    for (size_t i = 0; i < v.ev.n; i++)
        recvs += v.ev.v[i].type == IW_EV_RECV && v.ev.v[i].status == IW_WC_SUCCESS;
    XCHECK_EQ(recvs, b.pre_recvs);
    if (bc->flags & BF_ACCEPT) {
        XCHECK_EQ(ev_count(&v.ev, IW_EV_TERM_SENT), 0);
        XCHECK_EQ(iw_conn_get_state(v.conn), IW_CONN_RTS);
        memcpy(v.model + OFF_T + 128, fill, sizeof fill); /* the Write after it landed */
        if (bc->flags & BF_ZERO_READ) {
            XREQUIRE(nf == 1);
            const iw_peer_frame *f = nth_fpdu(&tr, rtr);
            XCHECK_EQ(f->verdict.kind, IW_VERDICT_OK);
            XCHECK_EQ(f->msg.opcode, IW_OP_READ_RESP);
            XCHECK(f->msg.ddp.tagged && f->msg.ddp.last);
            XCHECK_EQ(f->ulpdu_len, IW_DDP_TAGGED_HDR_LEN);
            XCHECK_EQ(f->msg.ddp.stag, 0x00424201); /* the request's sink, as is */
            XCHECK_EQ(f->msg.ddp.to, 0x7777);
        } else {
            XCHECK_EQ(nf, 0);
        }
        check_model(&v, "accepted segment");
    } else {
        /* RFC 5040 §5.4, §7.1: exactly one Terminate, and nothing after it. */
        XCHECK_EQ(nf, 1);
        XCHECK_EQ(ev_count(&v.ev, IW_EV_TERM_SENT), 1);
        const iw_peer_frame *f = nth_fpdu(&tr, rtr + nf - 1);
        if (f)
            check_terminate_frame(f, bc->triple, bad, bad_len, bc->flags,
                                  ev_last(&v.ev, IW_EV_TERM_SENT));
        XCHECK_EQ(iw_conn_get_state(v.conn), IW_CONN_TERMINATE);
        iw_send_wr w = {.op = IW_WR_SEND, .data = g_pay, .len = 1};
        XCHECK_EQ(iw_conn_post_send(v.conn, &w), IW_ERR_PROTO);
        /* Nothing placed: the target, its guards, the posted buffers. The
         * one exception is documented (engine.h, cut_through): a segment
         * that passed DDP's checks may land before its CRC or marker
         * verdict, so its own target octets may hold its payload; not one
         * octet anywhere else changes. By default it is staged and nothing
         * lands at all. */
        if ((bc->flags & BF_CUT) && cfg->cut_through) {
            uint8_t *at = v.arena + OFF_T + bc->cut_off, *was = v.model + OFF_T + bc->cut_off;
            size_t other = 0;
            for (uint32_t k = 0; k < bc->cut_len; k++)
                other += at[k] != was[k] && at[k] != g_pay[k];
            XCHECK_EQ(other, 0);
            memcpy(was, at, bc->cut_len);
        }
        check_model(&v, "violation");
    }
out:
    free(bad);
    iw_peer_trace_free(&tr);
    iw_peer_free(&pe);
    node_free(&v);
}

IW_TEST(b_violations) {
    for (size_t c = 0; c < sizeof g_bcfgs / sizeof g_bcfgs[0]; c++) {
        const bcfg *cfg = &g_bcfgs[c];
        for (size_t i = 0; i < sizeof g_bcases / sizeof g_bcases[0]; i++) {
            const bcase *bc = &g_bcases[i];
            /* LLP errors need a validated FPDU before them on a responder
             * (RFC 5044 §7.1.2 rule 4): run them where an RTR came first. */
            if (((bc->flags & BF_LLP) && !cfg->p2p && !cfg->engine_initiator) ||
                ((bc->flags & BF_MARKERS) && !cfg->markers) || ((bc->flags & BF_CRC) && !cfg->crc))
                continue;
            run_bcase(bc, cfg, 0, true);
            for (uint64_t seed = 1; seed <= 2; seed++)
                run_bcase(bc, cfg, seed, false);
        }
    }
}

/* An engine initiator and a raw responder: the responder's Reply, then
 * the engine's first FPDU, then what the case sends. */
typedef struct rawrsp {
    node e;
    iw_peer pe;
    chunker ch;
} rawrsp;

static int rawrsp_init(rawrsp *r, uint64_t seed, const iw_mpa_rr *reply) {
    memset(r, 0, sizeof *r);
    src_init();
    r->ch.rng = seed + 99;
    iw_conn_settings s;
    iw_conn_settings_default(&s, IW_ROLE_INITIATOR);
    if (node_init(&r->e, 0, &s) || iw_peer_init(&r->pe) || iw_conn_start(r->e.conn, T0))
        return -1;
    flush_out(&r->e, NULL, &r->ch); /* the Request */
    iw_mpa_rr rp;
    if (!reply) {
        iw_peer_rr_default(&rp, IW_MPA_REPLY);
        reply = &rp;
    }
    iw_peer_rr(&r->pe, reply);
    iw_peer_full_operation(&r->pe, false, true);
    deliver(&r->e, r->pe.out.p, r->pe.out.len, &r->ch);
    iw_peer_take(&r->pe);
    return 0;
}

static void rawrsp_free(rawrsp *r) {
    node_free(&r->e);
    iw_peer_free(&r->pe);
}

/* RFC 5040 §5.2 / §7.2: a Read Response with no Read outstanding is an
 * unexpected opcode (0/2/6); nothing is placed, not even the Write after. */
IW_TEST(b_read_response_unexpected) {
    snprintf(g_ctx, sizeof g_ctx, "B read response without read");
    rawrsp r;
    iw_peer_trace tr = {0};
    XREQUIRE(rawrsp_init(&r, 1, NULL) == 0);
    iw_send_wr w = {.op = IW_WR_SEND, .data = g_pay, .len = 10};
    post(&r.e, w);
    flush_out(&r.e, NULL, &r.ch); /* the engine's first FPDU */
    iw_peer_read_resp(&r.pe, r.e.st_s, r.e.to_s, g_pay, 16);
    uint8_t bad[IW_DDP_TAGGED_HDR_LEN + 16];
    memcpy(bad, r.pe.last_ulpdu, sizeof bad);
    iw_peer_write(&r.pe, r.e.st_t, r.e.to_t, g_pay, 32);
    feed_chunked(&r.e, r.pe.out.p, r.pe.out.len, &r.ch);
    flush_out(&r.e, NULL, &r.ch);
    decode_node(&tr, &r.e, false, true);
    XREQUIRE(tr.n == 3);
    XCHECK_EQ(tr.v[0].type, IW_FRAME_MPA_REQUEST);
    XCHECK_EQ(nth_fpdu(&tr, 0)->msg.opcode, IW_OP_SEND);
    check_terminate_frame(nth_fpdu(&tr, 1), IW_TERM_RDMAP_UNEXPECTED_OPCODE, bad, sizeof bad, 0,
                          ev_last(&r.e.ev, IW_EV_TERM_SENT));
    check_model(&r.e, "unexpected read response");
out:
    iw_peer_trace_free(&tr);
    rawrsp_free(&r);
}

/* A Read Response whose TO wraps the 64-bit space while it also lies
 * outside the sink: the wrap is named first (RFC 5041 §7.1 check 5), as
 * for an RDMA Write to the same TO (issue 12: it used to be 1/1/1). */
IW_TEST(b_read_response_to_wrap) {
    snprintf(g_ctx, sizeof g_ctx, "B read response wrapping TO");
    rawrsp r;
    iw_peer_trace tr = {0};
    XREQUIRE(rawrsp_init(&r, 3, NULL) == 0);
    iw_send_wr rd = {.op = IW_WR_READ,
                     .wr_id = 7,
                     .len = 64,
                     .local_stag = r.e.st_s,
                     .local_to = r.e.to_s,
                     .remote_stag = 0x5501,
                     .remote_to = 0};
    post(&r.e, rd);
    flush_out(&r.e, NULL, &r.ch); /* the Read Request */
    iw_peer_read_resp(&r.pe, r.e.st_s, 0xFFFFFFFFFFFFFFE0ull, g_pay, 64);
    uint8_t bad[IW_DDP_TAGGED_HDR_LEN + 64];
    memcpy(bad, r.pe.last_ulpdu, sizeof bad);
    feed_chunked(&r.e, r.pe.out.p, r.pe.out.len, &r.ch);
    flush_out(&r.e, NULL, &r.ch);
    decode_node(&tr, &r.e, false, true);
    XREQUIRE(count_fpdus(&tr) == 2);
    check_terminate_frame(nth_fpdu(&tr, 1), IW_TERM_DDP_T_TO_WRAP, bad, sizeof bad, 0,
                          ev_last(&r.e.ev, IW_EV_TERM_SENT));
    check_model(&r.e, "wrapping read response");
out:
    iw_peer_trace_free(&tr);
    rawrsp_free(&r);
}

/* A Terminate queued while an FPDU is half written: the FPDU is finished
 * (framing must hold), the Terminate follows, and every operation completes
 * exactly once, in order (RFC 5040 §5.4, §5.5 rule 15). Fourteen Sends go
 * first so that the send queue's storage wraps around with old entries in
 * it, where a stale read would surface as a second completion. */
IW_TEST(b_terminate_mid_fpdu) {
    snprintf(g_ctx, sizeof g_ctx, "B terminate while an FPDU is half sent");
    rawrsp r;
    iw_peer_trace tr = {0};
    XREQUIRE(rawrsp_init(&r, 2, NULL) == 0);
    for (int k = 0; k < 14; k++) {
        iw_send_wr s = {.op = IW_WR_SEND, .data = g_pay, .len = 10};
        post(&r.e, s);
        flush_out(&r.e, NULL, &r.ch);
    }
    iw_send_wr w = {
        .op = IW_WR_WRITE, .data = g_src, .len = 1000, .remote_stag = 0x1234, .remote_to = 0};
    post(&r.e, w);
    iw_send_wr w2 = {
        .op = IW_WR_WRITE, .data = g_src, .len = 100, .remote_stag = 0x1234, .remote_to = 0};
    post(&r.e, w2);
    uint8_t part[10];
    iw_ssize n = iw_conn_write(r.e.conn, part, sizeof part, T0);
    XREQUIRE(n == (iw_ssize)sizeof part);
    iw_peer_buf_add(&r.e.wire, part, sizeof part);
    iw_peer_write(&r.pe, 0x00777701, 0, g_pay, 8); /* invalid STag: 1/1/0 */
    deliver(&r.e, r.pe.out.p, r.pe.out.len, &r.ch);
    flush_out(&r.e, NULL, &r.ch);
    decode_node(&tr, &r.e, false, true);
    for (size_t i = 0; i < tr.n; i++)
        XCHECK_EQ(tr.v[i].verdict.kind, IW_VERDICT_OK);
    XCHECK_EQ(count_fpdus(&tr), 16); /* 14 Sends, the Write, the Terminate */
    const iw_peer_frame *f = nth_fpdu(&tr, 15);
    XCHECK(f && f->msg.opcode == IW_OP_TERMINATE);
    for (size_t k = 0; k < r.e.n_posted; k++) {
        size_t done = 0;
        for (size_t i = 0; i < r.e.ev.n; i++)
            done += is_completion(r.e.ev.v[i].type) && r.e.ev.v[i].wr_id == r.e.posted[k];
        XCHECK_EQ(done, 1);
    }
    check_completion_order(&r.e);
out:
    iw_peer_trace_free(&tr);
    rawrsp_free(&r);
}

/* ======================================================================
 * C. MPA startup (RFC 5044 §7.1, RFC 6581 §6, §9, §10)
 * ====================================================================== */

/* An engine responder fed by a raw initiator. */
typedef struct rawreq {
    node e;
    iw_peer pe;
    chunker ch;
} rawreq;

static int rawreq_init(rawreq *r, const iw_conn_settings *s, uint64_t seed) {
    memset(r, 0, sizeof *r);
    src_init();
    r->ch.rng = seed + 5;
    iw_conn_settings d;
    if (!s) {
        iw_conn_settings_default(&d, IW_ROLE_RESPONDER);
        s = &d;
    }
    if (node_init(&r->e, 1, s) || iw_peer_init(&r->pe) || iw_conn_start(r->e.conn, T0))
        return -1;
    return 0;
}

static void rawreq_free(rawreq *r) {
    node_free(&r->e);
    iw_peer_free(&r->pe);
}

/* Feed what the raw side produced; return the engine's output length. */
static size_t rawreq_run(rawreq *r) {
    feed_chunked(&r->e, r->pe.out.p, r->pe.out.len, &r->ch);
    iw_peer_take(&r->pe);
    flush_out(&r->e, NULL, &r->ch);
    return r->e.wire.len;
}

static void expect_closed(node *e, iw_close_reason why) {
    const evrec *c = ev_last(&e->ev, IW_EV_CLOSED);
    XCHECK(c != NULL);
    if (c)
        XCHECK_EQ(c->close, why);
    XCHECK_EQ(ev_count(&e->ev, IW_EV_CLOSED), 1);
    XCHECK_EQ(iw_conn_get_state(e->conn), IW_CONN_CLOSED);
    XCHECK(!iw_conn_want_write(e->conn));
}

/* RFC 5044 §7.1.2 rule 5: a key mismatch closes the connection, and the
 * responder sends nothing. A Reply key where a Request is due is one too. */
IW_TEST(c_bad_key) {
    for (int k = 0; k < 2; k++) {
        snprintf(g_ctx, sizeof g_ctx, "C bad key %d", k);
        rawreq r;
        XREQUIRE(rawreq_init(&r, NULL, (uint64_t)k) == 0);
        iw_mpa_rr rq;
        iw_peer_rr_default(&rq, k ? IW_MPA_REPLY : IW_MPA_REQUEST);
        iw_peer_rr(&r.pe, &rq);
        if (!k)
            r.pe.out.p[15] = 'X'; /* "MPA ID Req FramX" */
        XCHECK_EQ(rawreq_run(&r), 0);
        expect_closed(&r.e, IW_CLOSE_MPA_BAD_KEY);
    out:
        rawreq_free(&r);
    }
}

/* RFC 5044 §7.1.1: a revision the receiver cannot interoperate with
 * closes the connection (we speak Rev 1 and 2; Rev 0 is RDMAC, App. C). */
IW_TEST(c_bad_rev) {
    const uint8_t revs[] = {3, 0, 0xFF};
    for (size_t k = 0; k < sizeof revs; k++) {
        snprintf(g_ctx, sizeof g_ctx, "C rev %u", revs[k]);
        rawreq r;
        XREQUIRE(rawreq_init(&r, NULL, k) == 0);
        iw_mpa_rr rq;
        iw_peer_rr_default(&rq, IW_MPA_REQUEST);
        iw_peer_rr(&r.pe, &rq);
        r.pe.out.p[17] = revs[k];
        XCHECK_EQ(rawreq_run(&r), 0);
        expect_closed(&r.e, IW_CLOSE_MPA_BAD_REV);
    out:
        rawreq_free(&r);
    }
}

/* RFC 5044 §7.1.1: PD_Length over 512 closes the connection. The fixed
 * header says so; no Private Data needs to arrive first. */
IW_TEST(c_pd_too_long) {
    for (int whole = 0; whole < 2; whole++) {
        snprintf(g_ctx, sizeof g_ctx, "C PD_Length 600 %s", whole ? "with PD" : "header only");
        rawreq r;
        XREQUIRE(rawreq_init(&r, NULL, (uint64_t)whole) == 0);
        uint8_t f[IW_MPA_RR_HDR_LEN + 600];
        memset(f, 0x33, sizeof f);
        memcpy(f, IW_MPA_KEY_REQ, IW_MPA_KEY_LEN);
        f[16] = 0x40; /* C */
        f[17] = 1;
        be16(f + 18, 600);
        iw_peer_raw(&r.pe, f, whole ? sizeof f : IW_MPA_RR_HDR_LEN);
        XCHECK_EQ(rawreq_run(&r), 0);
        expect_closed(&r.e, IW_CLOSE_MPA_PD_TOO_LONG);
    out:
        rawreq_free(&r);
    }
}

/* RFC 5044 §7.1.2 rule 8: a Request where a Reply is due. */
IW_TEST(c_initiator_initiator) {
    snprintf(g_ctx, sizeof g_ctx, "C initiator/initiator");
    rawrsp r;
    iw_mpa_rr rq;
    iw_peer_rr_default(&rq, IW_MPA_REQUEST);
    XREQUIRE(rawrsp_init(&r, 3, &rq) == 0);
    flush_out(&r.e, NULL, &r.ch);
    expect_closed(&r.e, IW_CLOSE_MPA_INITIATOR_INITIATOR);
    XCHECK_EQ(r.e.wire.len, IW_MPA_RR_HDR_LEN + rd16(r.e.wire.p + 18)); /* its Request only */
out:
    rawrsp_free(&r);
}

/* RFC 5044 §7.1.2 rules 8 and 10: startup frames time out, not before. */
IW_TEST(c_timeout) {
    for (int role = 0; role < 2; role++) {
        snprintf(g_ctx, sizeof g_ctx, "C timeout %s", role ? "responder" : "initiator");
        node e;
        iw_conn_settings s;
        iw_conn_settings_default(&s, role ? IW_ROLE_RESPONDER : IW_ROLE_INITIATOR);
        const iw_tstamp to = 5000000000ull;
        s.mpa_timeout = to;
        XREQUIRE(node_init(&e, role, &s) == 0);
        XCHECK_EQ(iw_conn_get_expiry(e.conn), UINT64_MAX); /* not started */
        XREQUIRE(iw_conn_start(e.conn, T0) == 0);
        flush_out(&e, NULL, &(chunker){1, true, false}); /* the initiator's Request goes out */
        XCHECK_EQ(iw_conn_get_expiry(e.conn), T0 + to);
        if (role) {
            /* part of a Request does not stop the clock */
            uint8_t part[10];
            memcpy(part, IW_MPA_KEY_REQ, sizeof part);
            iw_conn_recv(e.conn, part, sizeof part, T0 + 1);
        }
        XCHECK_EQ(iw_conn_handle_expiry(e.conn, T0 + to - 1), 0);
        XCHECK_EQ(iw_conn_get_state(e.conn), IW_CONN_MPA);
        XCHECK_EQ(ev_count(&e.ev, IW_EV_CLOSED), 0);
        XCHECK_EQ(iw_conn_handle_expiry(e.conn, T0 + to), 0);
        expect_closed(&e, IW_CLOSE_MPA_TIMEOUT);
        XCHECK_EQ(iw_conn_get_expiry(e.conn), UINT64_MAX);
    out:
        node_free(&e);
    }
    /* Once connected there is no startup deadline. */
    pair p;
    iw_conn_settings si, sr;
    iw_conn_settings_default(&si, IW_ROLE_INITIATOR);
    iw_conn_settings_default(&sr, IW_ROLE_RESPONDER);
    snprintf(g_ctx, sizeof g_ctx, "C timeout after connect");
    if (pair_init(&p, &si, &sr, 1, false) == 0) {
        pump(&p);
        XCHECK_EQ(iw_conn_get_expiry(p.n[0].conn), UINT64_MAX);
        XCHECK_EQ(iw_conn_get_expiry(p.n[1].conn), UINT64_MAX);
        XCHECK_EQ(iw_conn_handle_expiry(p.n[1].conn, UINT64_MAX - 1), 0);
        XCHECK_EQ(iw_conn_get_state(p.n[1].conn), IW_CONN_RTS);
    }
    pair_free(&p);
}

/* RFC 5044 §7.1.2 rules 2-3: the responder rejects with R=1 and Private
 * Data; both sides exit MPA. RFC 6581 §9.1: the initiator still passes the
 * responder's IRD/ORD (and Private Data) to its ULP. */
IW_TEST(c_reject) {
    snprintf(g_ctx, sizeof g_ctx, "C reject");
    pair p;
    iw_conn_settings si, sr;
    iw_conn_settings_default(&si, IW_ROLE_INITIATOR);
    iw_conn_settings_default(&sr, IW_ROLE_RESPONDER);
    static const uint8_t why[] = "go away";
    sr.reject = true;
    sr.private_data = why;
    sr.private_data_len = sizeof why;
    sr.ird = 3;
    sr.ord = 2;
    iw_peer_trace tr = {0};
    XREQUIRE(pair_init(&p, &si, &sr, 7, false) == 0);
    pump(&p);
    decode_node(&tr, &p.n[1], false, false);
    XREQUIRE(tr.n == 1);
    XCHECK_EQ(tr.v[0].type, IW_FRAME_MPA_REPLY);
    XCHECK(tr.v[0].rr.r);
    XCHECK_EQ(tr.v[0].rr.ulp_pd_len, sizeof why);
    XCHECK(tr.v[0].rr.ulp_pd && memcmp(tr.v[0].rr.ulp_pd, why, sizeof why) == 0);
    for (int i = 0; i < 2; i++) {
        const evrec *e = ev_last(&p.n[i].ev, IW_EV_REJECTED);
        XCHECK(e != NULL);
        XCHECK_EQ(ev_count(&p.n[i].ev, IW_EV_CONNECTED), 0);
        XCHECK(iw_conn_get_state(p.n[i].conn) != IW_CONN_RTS);
        iw_send_wr w = {.op = IW_WR_SEND, .data = g_pay, .len = 1};
        XCHECK(iw_conn_post_send(p.n[i].conn, &w) != 0);
    }
    const evrec *e = ev_last(&p.n[0].ev, IW_EV_REJECTED);
    XREQUIRE(e && e->has_info);
    XCHECK_EQ(e->info.peer_private_data_len, sizeof why);
    XCHECK(memcmp(e->info.peer_private_data, why, sizeof why) == 0);
    XCHECK_EQ(e->info.peer_ird, tr.v[0].rr.v2.ird);
    XCHECK_EQ(e->info.peer_ord, tr.v[0].rr.v2.ord);
    XCHECK_EQ(tr.v[0].rr.v2.ird, 3);
    /* Nothing follows the startup frames in either direction. */
    XCHECK_EQ(p.n[0].wire.len, IW_MPA_RR_HDR_LEN + rd16(p.n[0].wire.p + 18));
out:
    iw_peer_trace_free(&tr);
    pair_free(&p);
}

/* Requests the initiator can have outstanding against the responder and
 * vice versa, counted on each side's own output before any answer. */
static size_t outstanding_reads(pair *p, int qi, unsigned n) {
    node *q = &p->n[qi], *t = &p->n[!qi];
    uint64_t soff;
    for (unsigned k = 0; k < n; k++)
        post_read(q, t, 64 * k, 32, &soff);
    size_t pos0 = q->wire.len;
    iw_peer_buf fresh = {0};
    flush_out(q, &fresh, &p->ch);
    size_t rr_len = IW_MPA_RR_HDR_LEN + rd16(q->wire.p + 18);
    iw_df_cfg c = df_cfg(IW_DF_START_FPDU, dir_markers(t), pair_crc(p));
    c.stream_pos = (uint32_t)(pos0 - rr_len);
    iw_peer_trace tr = {0};
    iw_peer_decode(&tr, fresh.p, fresh.len, &c);
    size_t k = iw_peer_count_op(&tr, IW_OP_READ_REQ);
    iw_peer_trace_free(&tr);
    deliver(t, fresh.p, fresh.len, &p->ch);
    iw_peer_buf_free(&fresh);
    pump(p);
    return k;
}

/* RFC 6581 §9.1: initiator ORD <= responder IRD, responder ORD <= initiator
 * IRD; 0x3FFF leaves the value alone and is echoed; both sides learn the
 * peer's values. */
IW_TEST(c_ird_ord_negotiation) {
    static const struct {
        uint16_t ii, io, ri, ro;             /* settings */
        uint16_t rep_ird, rep_ord;           /* Reply fields */
        uint16_t i_ird, i_ord, r_ird, r_ord; /* final */
    } cs[] = {
        {4, 8, 2, 16, 2, 4, 4, 2, 2, 4},
        {2, 1, 5, 5, 5, 2, 2, 1, 5, 2},
        {0x3FFF, 0x3FFF, 3, 5, 0x3FFF, 0x3FFF, 0x3FFF, 0x3FFF, 3, 5},
        {8, 0x3FFF, 3, 5, 0x3FFF, 5, 8, 0x3FFF, 3, 5},
        {0x3FFF, 3, 4, 6, 4, 0x3FFF, 0x3FFF, 3, 4, 6},
    };
    for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
        snprintf(g_ctx, sizeof g_ctx, "C IRD/ORD case %zu", k);
        pair p;
        iw_conn_settings si, sr;
        iw_conn_settings_default(&si, IW_ROLE_INITIATOR);
        iw_conn_settings_default(&sr, IW_ROLE_RESPONDER);
        si.ird = cs[k].ii;
        si.ord = cs[k].io;
        si.ird_max = 0x3FFF;
        sr.ird = cs[k].ri;
        sr.ord = cs[k].ro;
        si.p2p = sr.p2p = true; /* the Write RTR: neither side waits */
        si.rtr = sr.rtr = IW_RTR_WRITE;
        iw_peer_trace tq = {0}, tp = {0};
        XREQUIRE(pair_init(&p, &si, &sr, k, false) == 0);
        pump(&p);
        decode_node(&tq, &p.n[0], false, true);
        decode_node(&tp, &p.n[1], false, true);
        XREQUIRE(tq.n >= 1 && tp.n >= 1);
        XCHECK_EQ(tq.v[0].rr.v2.ird, cs[k].ii);
        XCHECK_EQ(tq.v[0].rr.v2.ord, cs[k].io);
        XCHECK_EQ(tp.v[0].rr.v2.ird, cs[k].rep_ird);
        XCHECK_EQ(tp.v[0].rr.v2.ord, cs[k].rep_ord);
        const iw_conn_info *ii = iw_conn_get_info(p.n[0].conn), *ir = iw_conn_get_info(p.n[1].conn);
        XCHECK_EQ(ii->ird, cs[k].i_ird);
        XCHECK_EQ(ii->ord, cs[k].i_ord);
        XCHECK_EQ(ir->ird, cs[k].r_ird);
        XCHECK_EQ(ir->ord, cs[k].r_ord);
        XCHECK_EQ(ii->peer_ird, cs[k].rep_ird);
        XCHECK_EQ(ii->peer_ord, cs[k].rep_ord);
        XCHECK_EQ(ir->peer_ird, cs[k].ii);
        XCHECK_EQ(ir->peer_ord, cs[k].io);
        /* The negotiated ORDs are honoured (RFC 5040 §6.1). */
        if (cs[k].i_ord < 20)
            XCHECK_EQ(outstanding_reads(&p, 0, cs[k].i_ord + 2), cs[k].i_ord);
        if (cs[k].r_ord < 20)
            XCHECK_EQ(outstanding_reads(&p, 1, cs[k].r_ord + 2), cs[k].r_ord);
        XCHECK_EQ(iw_conn_get_state(p.n[0].conn), IW_CONN_RTS);
        XCHECK_EQ(iw_conn_get_state(p.n[1].conn), IW_CONN_RTS);
    out:
        iw_peer_trace_free(&tq);
        iw_peer_trace_free(&tp);
        pair_free(&p);
    }
}

/* RFC 6581 §9.1 at the initiator, against a raw responder: raise IRD to
 * the responder's ORD when possible, else TERM 2/0/6 and terminate. */
IW_TEST(c_initiator_ird) {
    for (int k = 0; k < 2; k++) {
        snprintf(g_ctx, sizeof g_ctx, "C initiator IRD %s", k ? "insufficient" : "raised");
        rawrsp r;
        iw_peer_trace tr = {0};
        iw_mpa_rr rp;
        iw_peer_rr_default(&rp, IW_MPA_REPLY);
        rp.v2.ord = k ? 200 : 20; /* initiator: IRD 16, ird_max 128 */
        XREQUIRE(rawrsp_init(&r, 4, &rp) == 0);
        flush_out(&r.e, NULL, &r.ch);
        const iw_conn_info *ii = iw_conn_get_info(r.e.conn);
        XCHECK_EQ(ii->peer_ord, rp.v2.ord);
        decode_node(&tr, &r.e, false, true);
        if (!k) {
            XCHECK_EQ(ii->ird, 20);
            XCHECK_EQ(iw_conn_get_state(r.e.conn), IW_CONN_RTS);
            XCHECK_EQ(count_fpdus(&tr), 0);
        } else {
            XREQUIRE(count_fpdus(&tr) == 1);
            check_terminate_frame(nth_fpdu(&tr, 0), IW_TERM_LLP_MPA_INSUFFICIENT_IRD, NULL, 0, 0,
                                  ev_last(&r.e.ev, IW_EV_TERM_SENT));
            XCHECK_EQ(iw_conn_get_state(r.e.conn), IW_CONN_TERMINATE);
        }
    out:
        iw_peer_trace_free(&tr);
        rawrsp_free(&r);
    }
}

/* RFC 6581 §9.2: the responder offers an RTR it supports even if none was
 * requested; an initiator that can send none of them sends TERM 2/0/7. */
IW_TEST(c_no_common_rtr) {
    snprintf(g_ctx, sizeof g_ctx, "C no common RTR");
    pair p;
    iw_conn_settings si, sr;
    iw_conn_settings_default(&si, IW_ROLE_INITIATOR);
    iw_conn_settings_default(&sr, IW_ROLE_RESPONDER);
    si.p2p = true;
    si.rtr = IW_RTR_SEND;
    sr.rtr = IW_RTR_WRITE;
    iw_peer_trace ti = {0}, tr = {0};
    XREQUIRE(pair_init(&p, &si, &sr, 9, false) == 0);
    pump(&p);
    decode_node(&ti, &p.n[0], false, true);
    decode_node(&tr, &p.n[1], false, true);
    XREQUIRE(tr.n == 1);
    XCHECK(tr.v[0].rr.v2.p2p && tr.v[0].rr.v2.rtr_write);
    XREQUIRE(count_fpdus(&ti) == 1);
    check_terminate_frame(nth_fpdu(&ti, 0), IW_TERM_LLP_MPA_NO_MATCHING_RTR, NULL, 0, 0,
                          ev_last(&p.n[0].ev, IW_EV_TERM_SENT));
    const evrec *e = ev_last(&p.n[1].ev, IW_EV_TERM_RECEIVED);
    XCHECK(e && e->term.triple == IW_TERM_LLP_MPA_NO_MATCHING_RTR);
out:
    iw_peer_trace_free(&ti);
    iw_peer_trace_free(&tr);
    pair_free(&p);
}

/* RFC 6581 §9.1: "if the initiator ORD is 0 ... and the responder supports
 * the zero-length RDMA Read RTR, the responder IRD can be set to 1". An
 * engine pair must therefore connect over a Read RTR with IRD 0 configured;
 * and an initiator facing a responder IRD of 0 cannot send a Read RTR at
 * all (RFC 5040 §6.1), so with no other RTR offered it sends TERM 2/0/7
 * (RFC 6581 §9.2) rather than a Read Request the responder must refuse. */
IW_TEST(c_read_rtr_ird0) {
    snprintf(g_ctx, sizeof g_ctx, "C read RTR, IRD 0, engine pair");
    pair p;
    iw_conn_settings si, sr;
    iw_conn_settings_default(&si, IW_ROLE_INITIATOR);
    iw_conn_settings_default(&sr, IW_ROLE_RESPONDER);
    si.p2p = true;
    si.rtr = IW_RTR_READ;
    si.ord = 0;
    sr.rtr = IW_RTR_READ;
    sr.ird = 0;
    iw_peer_trace tr = {0};
    XREQUIRE(pair_init(&p, &si, &sr, 21, false) == 0);
    pump(&p);
    for (int i = 0; i < 2; i++) {
        XCHECK_EQ(iw_conn_get_state(p.n[i].conn), IW_CONN_RTS);
        XCHECK_EQ(ev_count(&p.n[i].ev, IW_EV_TERM_SENT), 0);
    }
    XCHECK(iw_conn_get_info(p.n[1].conn)->ird >= 1);
    decode_node(&tr, &p.n[1], false, true);
    XREQUIRE(tr.n == 2);
    XCHECK(tr.v[0].rr.v2.rtr_read && tr.v[0].rr.v2.ird >= 1);
    XCHECK_EQ(tr.v[1].msg.opcode, IW_OP_READ_RESP);
out:
    iw_peer_trace_free(&tr);
    pair_free(&p);

    snprintf(g_ctx, sizeof g_ctx, "C read RTR, responder IRD 0");
    rawrsp r;
    iw_peer_trace t2 = {0};
    iw_mpa_rr rp;
    iw_peer_rr_default(&rp, IW_MPA_REPLY);
    rp.v2.p2p = true;
    rp.v2.rtr_read = true;
    rp.v2.ird = 0;
    memset(&r, 0, sizeof r);
    /* rawrsp_init uses a client-server initiator; this one is p2p. */
    iw_conn_settings s;
    iw_conn_settings_default(&s, IW_ROLE_INITIATOR);
    s.p2p = true;
    r.ch.rng = 23;
    if (node_init(&r.e, 0, &s) || iw_peer_init(&r.pe) || iw_conn_start(r.e.conn, T0)) {
        XCHECK(!"init");
        goto out2;
    }
    flush_out(&r.e, NULL, &r.ch);
    iw_peer_rr(&r.pe, &rp);
    deliver(&r.e, r.pe.out.p, r.pe.out.len, &r.ch);
    flush_out(&r.e, NULL, &r.ch);
    decode_node(&t2, &r.e, false, true);
    XCHECK_EQ(iw_peer_count_op(&t2, IW_OP_READ_REQ), 0);
    XREQUIRE(count_fpdus(&t2) == 1);
    check_terminate_frame(nth_fpdu(&t2, 0), IW_TERM_LLP_MPA_NO_MATCHING_RTR, NULL, 0, 0,
                          ev_last(&r.e.ev, IW_EV_TERM_SENT));
out2:
    iw_peer_trace_free(&t2);
    rawrsp_free(&r);
}

/* Orderly close after the send queue drains (RFC 5040 §6.2); the LLP's
 * end flushes what is still posted (RFC 5041 §6.2.1), the completions
 * before the close report. */
IW_TEST(c_close_and_eof) {
    snprintf(g_ctx, sizeof g_ctx, "C close and EOF");
    pair p;
    iw_conn_settings si, sr;
    iw_conn_settings_default(&si, IW_ROLE_INITIATOR);
    iw_conn_settings_default(&sr, IW_ROLE_RESPONDER);
    XREQUIRE(pair_init(&p, &si, &sr, 25, false) == 0);
    pump(&p);
    node *ni = &p.n[0], *nr = &p.n[1];
    size_t s0 = post_recv(nr), s1 = post_recv(nr);
    iw_send_wr w = {.op = IW_WR_SEND, .data = g_src, .len = 100};
    uint64_t id = post(ni, w);
    XCHECK_EQ(iw_conn_close(ni->conn, T0), 0);
    XCHECK_EQ(ev_count(&ni->ev, IW_EV_CLOSED), 0); /* the Send is still queued */
    XCHECK_EQ(iw_conn_post_send(ni->conn, &w), IW_ERR_PROTO);
    pump(&p);
    const evrec *d = take_ev(ni, IW_EV_SEND_DONE), *c = ev_last(&ni->ev, IW_EV_CLOSED);
    XREQUIRE(d && c);
    XCHECK(d->wr_id == id && d->status == IW_WC_SUCCESS && d < c);
    XCHECK_EQ(c->close, IW_CLOSE_ULP_CLOSE);
    const evrec *e = take_ev(nr, IW_EV_RECV);
    XCHECK(e && e->wr_id == 0x900000 + s0 && e->status == IW_WC_SUCCESS);
    XCHECK_EQ(iw_conn_rx_eof(nr->conn, T0), 0);
    e = take_ev(nr, IW_EV_RECV);
    c = ev_last(&nr->ev, IW_EV_CLOSED);
    XREQUIRE(e && c);
    XCHECK(e->wr_id == 0x900000 + s1 && e->status == IW_WC_FLUSHED && e < c);
    XCHECK_EQ(c->close, IW_CLOSE_LLP_CLOSED);
    XCHECK_EQ(iw_conn_post_recv(nr->conn, 1, nr->arena + OFF_R, 8), IW_ERR_PROTO);
    memcpy(nr->model + OFF_R + s0 * RBUF, g_src, 100);
    check_model(nr, "close");
out:
    pair_free(&p);
}

/* A failing callback does not stop the flush (RFC 5040 §5.4, §5.5: every
 * operation completes, in order): each queued work request is still
 * reported once, the engine call returns IW_ERR_CALLBACK, and a callback
 * that fails on every event cannot make the flush loop. */
typedef struct {
    size_t n, fail_from, fail_every;
    iw_event_type type[16];
    iw_wc_status status[16];
    uint64_t wr_id[16];
} flush_log;

static int flush_on_event(iw_conn *c, const iw_event *ev, void *user) {
    (void)c;
    flush_log *l = user;
    size_t i = l->n++;
    if (i < 16) {
        l->type[i] = ev->type;
        l->status[i] = ev->status;
        l->wr_id[i] = ev->wr_id;
    }
    return i == l->fail_from || (l->fail_every && i > l->fail_from);
}

static void c_flush_one(bool fail_every) {
    snprintf(g_ctx, sizeof g_ctx, "C flush after a failed callback%s",
             fail_every ? " (every one fails)" : "");
    static const iw_callbacks cb = {IW_CALLBACKS_V1, flush_on_event};
    flush_log l = {.fail_from = 0, .fail_every = fail_every};
    iw_rnic *r = NULL;
    iw_conn *c = NULL;
    uint32_t pd;
    XREQUIRE(iw_rnic_new(&r, NULL) == 0 && iw_pd_alloc(r, &pd) == 0);
    iw_conn_settings s;
    iw_conn_settings_default(&s, IW_ROLE_INITIATOR);
    XREQUIRE(iw_conn_new(&c, r, pd, &s, &cb, &l) == 0);
    static const uint8_t data[8] = "payload";
    for (uint64_t id = 1; id <= 3; id++) {
        iw_send_wr w = {.op = IW_WR_SEND, .wr_id = id, .data = data, .len = sizeof data};
        XREQUIRE(iw_conn_post_send(c, &w) == 0);
    }
    uint8_t buf[16];
    XREQUIRE(iw_conn_post_recv(c, 4, buf, sizeof buf) == 0);
    XREQUIRE(iw_conn_start(c, T0) == 0);
    /* The TCP stream ends before the startup: everything is flushed. */
    XCHECK_EQ(iw_conn_rx_eof(c, T0), IW_ERR_CALLBACK);
    XREQUIRE(l.n == 5);
    for (size_t i = 0; i < 3; i++) {
        XCHECK_EQ(l.type[i], IW_EV_SEND_DONE);
        XCHECK_EQ(l.status[i], IW_WC_FLUSHED);
        XCHECK_EQ(l.wr_id[i], i + 1);
    }
    XCHECK(l.type[3] == IW_EV_RECV && l.status[3] == IW_WC_FLUSHED && l.wr_id[3] == 4);
    XCHECK_EQ(l.type[4], IW_EV_CLOSED);
out:
    iw_conn_del(c);
    iw_rnic_del(r);
}

IW_TEST(c_flush_after_failed_callback) {
    c_flush_one(false);
    c_flush_one(true);
}

/* RFC 6581 §6, §10: a Rev 2 responder accepts a Rev 1 Request and answers
 * with an unenhanced Rev 1 Reply; the stream then works. */
IW_TEST(c_rev1_request) {
    snprintf(g_ctx, sizeof g_ctx, "C rev 1 request");
    iw_conn_settings s;
    iw_conn_settings_default(&s, IW_ROLE_RESPONDER);
    static const uint8_t rpd[] = {'r', 'e', 's', 'p'}, ipd[] = {'h', 'i'};
    s.private_data = rpd;
    s.private_data_len = sizeof rpd;
    rawreq r;
    iw_peer_trace tr = {0};
    XREQUIRE(rawreq_init(&r, &s, 11) == 0);
    iw_mpa_rr rq = {
        .type = IW_MPA_REQUEST, .c = true, .rev = 1, .ulp_pd = ipd, .ulp_pd_len = sizeof ipd};
    iw_peer_rr(&r.pe, &rq);
    iw_peer_full_operation(&r.pe, false, true);
    post_recv(&r.e);
    iw_peer_send(&r.pe, IW_OP_SEND, 0, g_pay, 5);
    rawreq_run(&r);
    decode_node(&tr, &r.e, false, true);
    XREQUIRE(tr.n == 1);
    const iw_mpa_rr *rp = &tr.v[0].rr;
    XCHECK_EQ(rp->rev, 1);
    XCHECK(!rp->enhanced && rp->res == 0 && !rp->r);
    XCHECK_EQ(rp->pd_len, sizeof rpd);
    XCHECK(rp->pd && memcmp(rp->pd, rpd, sizeof rpd) == 0);
    const iw_conn_info *ir = iw_conn_get_info(r.e.conn);
    XCHECK(!ir->enhanced && ir->mpa_rev == 1);
    XCHECK_EQ(ir->peer_private_data_len, sizeof ipd);
    const evrec *e = ev_last(&r.e.ev, IW_EV_RECV);
    XCHECK(e && e->status == IW_WC_SUCCESS && e->len == 5);
out:
    iw_peer_trace_free(&tr);
    rawreq_free(&r);
}

/* RFC 5044 §7.1.2 rule 4: a responder sends no FPDU (and no marker) before
 * it has received a valid one, whatever its ULP posts. */
IW_TEST(c_responder_waits) {
    for (int mk = 0; mk < 2; mk++) {
        snprintf(g_ctx, sizeof g_ctx, "C responder waits markers=%d", mk);
        pair p;
        iw_conn_settings si, sr;
        iw_conn_settings_default(&si, IW_ROLE_INITIATOR);
        iw_conn_settings_default(&sr, IW_ROLE_RESPONDER);
        si.markers = sr.markers = mk;
        XREQUIRE(pair_init(&p, &si, &sr, 13, false) == 0);
        node *ni = &p.n[0], *nr = &p.n[1];
        flush_out(ni, NULL, &p.ch);
        deliver(nr, ni->wire.p, ni->wire.len, &p.ch); /* the Request */
        XREQUIRE(iw_conn_get_state(nr->conn) == IW_CONN_RTS);
        size_t slot = post_recv(ni);
        iw_send_wr w = {.op = IW_WR_SEND, .data = g_src, .len = 300};
        post(nr, w);
        iw_send_wr rd = {.op = IW_WR_WRITE,
                         .data = g_src,
                         .len = 50,
                         .remote_stag = ni->st_t,
                         .remote_to = ni->to_t};
        post(nr, rd);
        pump(&p);
        size_t rep_len = IW_MPA_RR_HDR_LEN + rd16(nr->wire.p + 18);
        XCHECK_EQ(nr->wire.len, rep_len); /* the Reply, nothing else */
        XCHECK_EQ(ev_count(&nr->ev, IW_EV_SEND_DONE), 0);
        /* The initiator's first FPDU releases the responder. */
        size_t s2 = post_recv(nr);
        iw_send_wr w2 = {.op = IW_WR_SEND, .data = g_src + 1, .len = 10};
        post(ni, w2);
        pump(&p);
        XCHECK(nr->wire.len > rep_len);
        const evrec *e = take_ev(ni, IW_EV_RECV);
        XCHECK(e && e->wr_id == 0x900000 + slot && e->len == 300);
        e = take_ev(nr, IW_EV_RECV);
        XCHECK(e && e->wr_id == 0x900000 + s2 && e->len == 10);
        memcpy(ni->model + OFF_R + slot * RBUF, g_src, 300);
        memcpy(ni->model + OFF_T, g_src, 50);
        memcpy(nr->model + OFF_R + s2 * RBUF, g_src + 1, 10);
        check_model(ni, "responder waits");
        check_model(nr, "responder waits");
        check_completion_order(nr);
    out:
        pair_free(&p);
    }
}

/* RFC 5044 §7.1.1: M asks the other side for markers, per direction; C=1
 * in either frame turns CRCs on both ways. */
IW_TEST(c_markers_per_direction) {
    snprintf(g_ctx, sizeof g_ctx, "C markers per direction");
    pair p;
    iw_conn_settings si, sr;
    iw_conn_settings_default(&si, IW_ROLE_INITIATOR);
    iw_conn_settings_default(&sr, IW_ROLE_RESPONDER);
    si.markers = true; /* the responder must insert markers */
    sr.markers = false;
    si.crc = false;
    sr.crc = true;
    iw_peer_trace a = {0}, b = {0}, c = {0};
    XREQUIRE(pair_init(&p, &si, &sr, 17, false) == 0);
    pump(&p);
    node *ni = &p.n[0], *nr = &p.n[1];
    const iw_conn_info *ii = iw_conn_get_info(ni->conn), *ir = iw_conn_get_info(nr->conn);
    XCHECK(ii->markers_rx && !ii->markers_tx && ir->markers_tx && !ir->markers_rx);
    XCHECK(ii->crc && ir->crc);
    for (int qi = 0; qi < 2; qi++) {
        node *q = &p.n[qi], *t = &p.n[!qi];
        iw_send_wr w = {.op = IW_WR_WRITE,
                        .data = g_src,
                        .len = 5000,
                        .remote_stag = t->st_t,
                        .remote_to = t->to_t + 8};
        post(q, w);
        pump(&p);
        memcpy(t->model + OFF_T + 8, g_src, 5000);
        check_model(t, "markers per direction");
    }
    decode_node(&a, ni, false, true);
    decode_node(&b, nr, true, true);
    check_stream(&a, rfc_mulpdu(1460, false));
    check_stream(&b, rfc_mulpdu(1460, true));
    unsigned nm = 0;
    for (size_t i = 0; i < b.n; i++)
        nm += b.v[i].n_markers;
    XCHECK(nm >= 10);
    /* The initiator's direction carries none: read as if it did, it fails. */
    decode_node(&c, ni, true, true);
    bool bad = false;
    for (size_t i = 0; i < c.n; i++)
        bad |= c.v[i].verdict.kind != IW_VERDICT_OK ||
               (c.v[i].type != IW_FRAME_FPDU && c.v[i].type != IW_FRAME_MPA_REQUEST);
    XCHECK(bad);
out:
    iw_peer_trace_free(&a);
    iw_peer_trace_free(&b);
    iw_peer_trace_free(&c);
    pair_free(&p);
}

/* API edges: bad arguments are refused without side effects. */
IW_TEST(c_api_arguments) {
    snprintf(g_ctx, sizeof g_ctx, "C API");
    iw_rnic *r = NULL;
    XREQUIRE(iw_rnic_new(&r, NULL) == 0);
    uint32_t pd, st;
    XREQUIRE(iw_pd_alloc(r, &pd) == 0);
    iw_conn_settings s;
    iw_conn_settings_default(&s, IW_ROLE_INITIATOR);
    iw_conn *c = NULL;
    XCHECK_EQ(iw_conn_new(&c, r, pd + 100, &s, &g_cb, NULL), IW_ERR_INVALID_ARG);
    s.mpa_rev = 1;
    s.p2p = true; /* RFC 6581 features need Rev 2 */
    XCHECK_EQ(iw_conn_new(&c, r, pd, &s, &g_cb, NULL), IW_ERR_INVALID_ARG);
    uint8_t buf[64];
    XCHECK_EQ(iw_mr_reg(r, pd, buf, sizeof buf, UINT64_MAX - 10, IW_ACCESS_REMOTE_WRITE, &st),
              IW_ERR_INVALID_ARG); /* the region would wrap the TO space */
    XREQUIRE(iw_mr_reg(r, pd, buf, sizeof buf, 0, IW_ACCESS_REMOTE_WRITE, &st) == 0);
    XCHECK_EQ(iw_pd_free(r, pd), IW_ERR_INVALID_ARG); /* still in use */
    XCHECK_EQ(iw_mr_dereg(r, st), 0);
    XCHECK_EQ(iw_mr_dereg(r, st), IW_ERR_INVALID_ARG);
    XCHECK_EQ(iw_pd_free(r, pd), 0);
out:
    iw_rnic_del(r);
}

/* ======================================================================
 * D. Zero-copy paths
 * ====================================================================== */

/* The initiator writes through tx_iov/tx_commit and the responder reads
 * through rx_iov/rx_commit with random short reads (a simulated readv):
 * payload must land straight in the registered region and the posted
 * buffer, with no copy in user space, when the receiver places cut-through;
 * by default (RFC 5044 §6: verify the CRC first) each payload octet is
 * staged once. The copying iw_conn_recv counts every payload octet it copies. */
static void d_run(bool markers, bool zc, bool cut, uint64_t seed) {
    snprintf(g_ctx, sizeof g_ctx, "D %s%s markers=%d seed %llu", zc ? "iovec" : "copy",
             cut ? " cut-through" : "", markers, (unsigned long long)seed);
    pair p;
    iw_conn_settings si, sr;
    iw_conn_settings_default(&si, IW_ROLE_INITIATOR);
    iw_conn_settings_default(&sr, IW_ROLE_RESPONDER);
    si.markers = sr.markers = markers;
    si.cut_through = sr.cut_through = cut;
    XREQUIRE(pair_init(&p, &si, &sr, seed, false) == 0);
    node *ni = &p.n[0], *nr = &p.n[1];
    ni->zc_tx = nr->zc_rx = zc;
    pump(&p);
    iw_conn_stats s0, s1;
    iw_conn_get_stats(nr->conn, &s0);
    size_t slot = post_recv(nr);
    iw_send_wr w = {.op = IW_WR_WRITE,
                    .data = g_src + 3,
                    .len = 100000,
                    .remote_stag = nr->st_t,
                    .remote_to = nr->to_t + 5};
    iw_send_wr s = {.op = IW_WR_SEND, .data = g_src + 7, .len = 3000};
    post(ni, w);
    post(ni, s);
    pump(&p);
    iw_conn_get_stats(nr->conn, &s1);
    memcpy(nr->model + OFF_T + 5, g_src + 3, 100000);
    memcpy(nr->model + OFF_R + slot * RBUF, g_src + 7, 3000);
    check_model(nr, "zero-copy transfer");
    const evrec *e = take_ev(nr, IW_EV_RECV);
    XCHECK(e && e->status == IW_WC_SUCCESS && e->len == 3000);
    XCHECK_EQ(s1.bytes_placed - s0.bytes_placed, 103000);
    uint64_t copies = s1.payload_copies - s0.payload_copies;
    XCHECK(ni->saw_tx_iov_in_src || !zc);
    if (zc && cut) {
        XCHECK_EQ(copies, 0);
        XCHECK(nr->saw_rx_iov_in_region);
    } else if (zc) {
        XCHECK_EQ(copies, 103000); /* staged once, placed after the CRC */
        XCHECK(!nr->saw_rx_iov_in_region);
    } else if (cut) {
        XCHECK_EQ(copies, 103000);
    } else {
        /* Whole FPDUs in a chunk are checked first and copied once; split
         * ones are staged, then placed. */
        XCHECK(copies >= 103000 && copies <= 2 * 103000);
    }
    XCHECK(s1.fpdus_rx > s0.fpdus_rx);
    check_completion_order(ni);
out:
    pair_free(&p);
}

IW_TEST(d_zero_copy) {
    for (int mk = 0; mk < 2; mk++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            for (int cut = 0; cut < 2; cut++) {
                d_run(mk, true, cut, seed);
                d_run(mk, false, cut, seed);
            }
        }
}

/* ======================================================================
 * E. Robustness: random and mutated input
 * ====================================================================== */

typedef struct erun {
    bool term_snap;
    uint8_t *snap; /* the arena when the Terminate went out */
} erun;

static void e_hook(node *n, const iw_event *ev) {
    erun *er = n->hook_user;
    if (ev->type == IW_EV_TERM_SENT && !er->term_snap) {
        er->term_snap = true;
        memcpy(er->snap, n->arena, ARENA_LEN);
    }
}

/* Valid traffic for the victim's regions (some of it legitimately
 * terminates: a Send longer than the buffer, a Send with Invalidate of a
 * region that refuses it). */
static void e_valid(bctx *b, uint64_t *rng, int n) {
    node *v = b->v;
    for (int k = 0; k < n; k++) {
        uint64_t r = rnd(rng);
        size_t len = (size_t)(r >> 20) % 600;
        switch (r % 9) {
        case 0:
            iw_peer_write(b->pe, v->st_t, v->to_t + (r >> 40) % (LEN_T - 600), g_src, len);
            break;
        case 1:
            iw_peer_write(b->pe, b->st_wo, b->to_wo + (r >> 40) % 400, g_src, len % 600 / 2);
            break;
        case 2:
            iw_peer_send(b->pe, IW_OP_SEND, 0, g_src, len % 300);
            break;
        case 3:
            iw_peer_read_req(b->pe, 0x4201, 0, (uint32_t)(len % 300), v->st_t,
                             v->to_t + (r >> 40) % 4096);
            break;
        case 4: {
            iw_rdmap_atomic_req a = {0,
                                     (r >> 8) & 1 ? IW_ATOMIC_CMP_SWAP : IW_ATOMIC_FETCH_ADD,
                                     (uint32_t)k,
                                     v->st_a,
                                     v->to_a + 8 * ((r >> 12) % 8),
                                     r,
                                     r >> 3,
                                     r >> 5,
                                     r >> 7};
            iw_peer_atomic_req(b->pe, &a);
            break;
        }
        case 5: {
            uint8_t imm[8] = {(uint8_t)r};
            iw_peer_imm(b->pe, (r >> 9) & 1, imm);
            break;
        }
        case 6:
            iw_peer_write(b->pe, (uint32_t)(r >> 32), r, NULL, 0);
            break;
        case 7:
            iw_peer_write(b->pe, b->st_noinv, b->to_noinv + (r >> 40) % 500, g_src, len % 500);
            break;
        default:
            iw_peer_send(b->pe, IW_OP_SEND_INV, b->st_noinv, g_src, len % 100);
            break;
        }
    }
}

static void e_mutate(iw_peer_buf *s, uint64_t *rng) {
    int n = 1 + (int)rnd_below(rng, 4);
    for (int i = 0; i < n && s->len; i++) {
        size_t at = rnd_below(rng, s->len);
        switch (rnd(rng) % 5) {
        case 0: /* flip bits */
            s->p[at] ^= (uint8_t)(1u << rnd_below(rng, 8));
            break;
        case 1: { /* insert random octets */
            size_t k = 1 + rnd_below(rng, 8);
            uint8_t ins[8];
            for (size_t j = 0; j < k; j++)
                ins[j] = (uint8_t)rnd(rng);
            iw_peer_buf_add(s, ins, k); /* grow, then shift */
            memmove(s->p + at + k, s->p + at, s->len - k - at);
            memcpy(s->p + at, ins, k);
            break;
        }
        case 2: { /* delete a range */
            size_t k = 1 + rnd_below(rng, 16);
            if (k > s->len - at)
                k = s->len - at;
            memmove(s->p + at, s->p + at + k, s->len - at - k);
            s->len -= k;
            break;
        }
        case 3: /* truncate */
            s->len = at;
            break;
        default: /* overwrite a byte */
            s->p[at] = (uint8_t)rnd(rng);
            break;
        }
    }
}

/* Bytes a peer can legitimately change, in arena order: the writable
 * regions and the posted buffers. Everything else keeps its pattern. */
static const struct {
    size_t off, len;
} g_e_writable[] = {
    {OFF_T, LEN_T},           {OFF_S + 2048, B_SMALL}, /* remote write only */
    {OFF_S + 10240, B_SMALL},                          /* no-invalidate */
    {OFF_A, LEN_A},           {OFF_R, B_RQ_LEN},       {OFF_R + RBUF, B_RQ_LEN},
};

static bool e_outside_unchanged(const uint8_t *a, const uint8_t *orig) {
    size_t at = 0;
    for (size_t i = 0; i <= sizeof g_e_writable / sizeof g_e_writable[0]; i++) {
        size_t end =
            i < sizeof g_e_writable / sizeof g_e_writable[0] ? g_e_writable[i].off : ARENA_LEN;
        if (memcmp(a + at, orig + at, end - at) != 0)
            return false;
        if (end < ARENA_LEN)
            at = end + g_e_writable[i].len;
    }
    return true;
}

static struct { unsigned connected, terminated, placed, recvs; } g_e_stats;

static void e_one(uint64_t *rng, int it, uint8_t *orig, uint8_t *snap) {
    snprintf(g_ctx, sizeof g_ctx, "E iteration %d", it);
    bool markers = rnd(rng) & 1, crc = rnd(rng) % 3 == 0, p2p = rnd(rng) & 1;
    node v;
    iw_peer pe;
    iw_peer_trace tr = {0};
    erun er = {false, snap};
    chunker ch = {rnd(rng), false, false};
    iw_conn_settings s;
    iw_conn_settings_default(&s, IW_ROLE_RESPONDER);
    s.markers = markers;
    s.crc = crc;
    int rc = node_init(&v, 1, &s);
    rc |= iw_peer_init(&pe);
    bctx b = {.v = &v, .pe = &pe};
    XREQUIRE(rc == 0 && bctx_regions(&b) == 0 && iw_conn_start(v.conn, T0) == 0);
    v.hook = e_hook;
    v.hook_user = &er;
    v.zc_rx = it & 1;
    for (int k = 0; k < 2; k++)
        iw_conn_post_recv(v.conn, 0x900000 + k, v.arena + OFF_R + k * RBUF, B_RQ_LEN);
    memcpy(orig, v.arena, ARENA_LEN);
    int mode = it % 3;
    if (mode == 0 && (it / 3) % 2) {
        size_t n = 1 + rnd_below(rng, 800);
        for (size_t i = 0; i < n; i++) {
            uint8_t c = (uint8_t)rnd(rng);
            iw_peer_raw(&pe, &c, 1);
        }
    } else {
        iw_mpa_rr rq;
        iw_peer_rr_default(&rq, IW_MPA_REQUEST);
        rq.m = markers;
        rq.c = crc;
        rq.v2.p2p = p2p;
        rq.v2.rtr_write = p2p;
        iw_peer_rr(&pe, &rq);
        iw_peer_full_operation(&pe, markers, crc);
        if (p2p)
            iw_peer_write(&pe, 0, 0, NULL, 0);
        if (mode == 0) {
            size_t n = rnd_below(rng, 1500);
            for (size_t i = 0; i < n; i++) {
                uint8_t c = (uint8_t)rnd(rng);
                iw_peer_raw(&pe, &c, 1);
            }
        } else {
            e_valid(&b, rng, 1 + (int)rnd_below(rng, 8));
            if (mode == 2 || rnd(rng) % 4)
                e_mutate(&pe.out, rng);
        }
    }
    feed_chunked(&v, pe.out.p, pe.out.len, &ch);
    flush_out(&v, NULL, &ch);
    /* Nothing outside the writable regions changed, ever. */
    XCHECK(e_outside_unchanged(v.arena, orig));
    iw_conn_stats st;
    iw_conn_get_stats(v.conn, &st);
    g_e_stats.connected += ev_count(&v.ev, IW_EV_CONNECTED) > 0;
    g_e_stats.terminated += er.term_snap;
    g_e_stats.placed += st.bytes_placed > 0;
    g_e_stats.recvs += ev_count(&v.ev, IW_EV_RECV) > 0;
    /* RFC 5041 §7.1: after the Terminate every incoming segment is dropped. */
    if (er.term_snap)
        XCHECK(memcmp(v.arena, snap, ARENA_LEN) == 0);
    /* The engine's own output stays well framed: at most one Terminate,
     * and it is the last FPDU (RFC 5040 §5.4). */
    if (v.wire.len) {
        const iw_conn_info *inf = iw_conn_get_info(v.conn);
        decode_node(&tr, &v, inf->markers_tx, inf->crc);
        size_t nt = 0, nf = count_fpdus(&tr);
        for (size_t i = 0; i < tr.n; i++) {
            XCHECK_EQ(tr.v[i].verdict.kind, IW_VERDICT_OK);
            XCHECK(tr.v[i].type == IW_FRAME_FPDU || (i == 0 && tr.v[i].type == IW_FRAME_MPA_REPLY));
            if (tr.v[i].type == IW_FRAME_FPDU) {
                XCHECK_EQ(tr.v[i].rdmap_verdict.kind, IW_VERDICT_OK);
                nt += tr.v[i].msg.opcode == IW_OP_TERMINATE;
            }
        }
        XCHECK(nt <= 1);
        if (nt)
            XCHECK(nth_fpdu(&tr, nf - 1)->msg.opcode == IW_OP_TERMINATE);
        XCHECK_EQ(nt, ev_count(&v.ev, IW_EV_TERM_SENT));
    }
out:
    iw_peer_trace_free(&tr);
    iw_peer_free(&pe);
    node_free(&v);
}

IW_TEST(e_robustness) {
    src_init();
    uint64_t rng = 0xE1E2E3E4E5ull;
    uint8_t *orig = malloc(ARENA_LEN), *snap = malloc(ARENA_LEN);
    for (int it = 0; it < 3000; it++)
        e_one(&rng, it, orig, snap);
    free(orig);
    free(snap);
    /* The input reached every stage often enough to mean something. */
    if (getenv("IW_ENGINE_VERBOSE"))
        fprintf(stderr, "E: connected %u, terminated %u, placed %u, recv %u\n", g_e_stats.connected,
                g_e_stats.terminated, g_e_stats.placed, g_e_stats.recvs);
    CHECK(g_e_stats.connected > 1500);
    CHECK(g_e_stats.terminated > 700);
    CHECK(g_e_stats.placed > 300);
    CHECK(g_e_stats.recvs > 300);
}

IW_TEST_MAIN("iw_engine", IW_CASE(a_back_to_back_matrix), IW_CASE(a_back_to_back_mixed),
             IW_CASE(b_violations), IW_CASE(b_read_response_unexpected),
             IW_CASE(b_read_response_to_wrap), IW_CASE(b_terminate_mid_fpdu), IW_CASE(c_bad_key),
             IW_CASE(c_bad_rev), IW_CASE(c_pd_too_long), IW_CASE(c_initiator_initiator),
             IW_CASE(c_timeout), IW_CASE(c_reject), IW_CASE(c_ird_ord_negotiation),
             IW_CASE(c_initiator_ird), IW_CASE(c_no_common_rtr), IW_CASE(c_read_rtr_ird0),
             IW_CASE(c_close_and_eof), IW_CASE(c_flush_after_failed_callback),
             IW_CASE(c_rev1_request), IW_CASE(c_responder_waits), IW_CASE(c_markers_per_direction),
             IW_CASE(c_api_arguments), IW_CASE(d_zero_copy), IW_CASE(e_robustness))
