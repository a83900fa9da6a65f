/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Registration changes interleaved with queued work (issue 16): regions
 * registered, deregistered and invalidated at any point while the peer's
 * Read Requests wait for their responses, our Sends and Writes wait in the
 * send queue, an FPDU is half written to the socket, or a tagged segment is
 * half received (engine.h, iw_mr_dereg).
 *
 * Every region is its own mapping. The moment it is deregistered or
 * invalidated the harness makes it PROT_NONE, so any later read or write by
 * the engine (or through an iovec the engine handed out) faults, in every
 * build, not only under ASan: nothing ever touches memory outside live
 * registered regions (RFC 5042 §6.2.2, §6.3.3). The rest of each region's
 * last page is a canary, and a PROT_NONE page follows.
 *
 * Input: [cfg] then records; each record is an op octet and its operands.
 *   cfg bit 0: cut_through; bit 1: our M (the peer inserts markers);
 *   bit 2: the peer's M (we insert markers); bit 3: our C; bits 4-7: EMSS
 *   = 160 + 80 * v (small FPDUs, so responses span many).
 *   op % 12:
 *    0 reg    [slot][len:2][access]  access bits: 0 remote read, 1 remote
 *             write, 2 local write, 3 the second PD
 *    1 dereg  [slot]      2 invalidate [slot]
 *    3 peer Read Request [slot][off:2][size:2]: from the slot's STag, live,
 *             stale or never valid
 *    4 peer Write [slot][off:2][len:2]
 *    5 feed   [n:2][how]  up to n octets of the peer's stream; how bit 0:
 *             through iw_conn_rx_iov/rx_commit, else iw_conn_recv
 *    6 drain  [n:2]       up to n octets of our output through
 *             iw_conn_tx_iov/tx_commit: FPDUs end up half written
 *    7 post Send from a region   [slot][off:2][len:2]
 *    8 post Write from a region  [slot][off:2][len:2]
 *    9 post Send from the harness's own memory [len:2]
 *   10 post a receive buffer, 11 peer Send [len:2]
 *
 * Invariants: no fault, sanitizer report or leak; the output is a Reply
 * then FPDUs that deframe and decode with no verdict, at most one
 * Terminate, last; it ends inside an FPDU only after IW_EV_CLOSED with
 * IW_CLOSE_LOCAL_ABORT. Every Read Response octet equals the octet of the
 * source the Read Request named, and so does every Send or Write octet
 * from a region (checked where no peer Write could have changed it):
 * nothing stale, nothing from another region. Canaries hold. Every posted
 * work request completes at most once. */
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_engine.h"

#define SLOTS 16
#define MAX_REGS 96
#define REG_MAX 20000
#define PAGE 4096
#define OWN_LEN 8192
#define MAX_REQS 256
#define MAX_POSTS 256

typedef struct region {
    uint8_t *map; /* data pages + one PROT_NONE guard page */
    size_t map_len;
    uint32_t len, stag;
    unsigned access;
    bool other_pd;  /* registered in the second PD */
    uint32_t id;    /* registration number: the pattern's seed */
    bool mapped_rw; /* false once deregistered or invalidated */
    bool live;      /* registered and valid */
    bool written;   /* a peer Write may have changed it */
} region;

/* What each peer Read Request asked for: the response's sink STag is
 * 0xF0000000 | its index, its sink TO 0, so a response FPDU names it. */
typedef struct {
    region *src;
    uint32_t off, size;
} read_req;

/* Our posted Sends and Writes from regions, by the order they go out. */
typedef struct {
    region *src; /* NULL: the harness's own memory */
    uint32_t off, len;
    bool write;
} post_ent;

typedef struct {
    iw_rnic *rnic;
    uint32_t pd, pd2;
    iw_conn *c;
    iw_peer pe;
    size_t fed; /* octets of pe.out the engine has */
    fz_bytes out;
    fz_evlog ev;
    region *regs[MAX_REGS];
    size_t nregs;
    region *slot[SLOTS];
    read_req reqs[MAX_REQS];
    size_t nreqs;
    post_ent sends[MAX_POSTS], writes[MAX_POSTS];
    size_t nsends, nwrites;
    uint64_t next_wr;
    uint32_t next_id;
    uint8_t own[OWN_LEN];
    uint8_t *rbuf[MAX_POSTS];
    size_t nrbuf;
    bool aborted;
} fz_rv;

static uint8_t pat(uint32_t id, uint64_t off) {
    return (uint8_t)(id * 131u + off * 7u + (off >> 8));
}

static int rv_on_event(iw_conn *c, const iw_event *ev, void *user) {
    fz_rv *r = user;
    fz_ev_log(&r->ev, c, ev);
    if (ev->type == IW_EV_CLOSED && ev->close == IW_CLOSE_LOCAL_ABORT)
        r->aborted = true;
    return 0;
}
static const iw_callbacks rv_cb = {IW_CALLBACKS_V1, rv_on_event};

static region *rv_reg(fz_rv *r, uint32_t len, unsigned bits) {
    if (r->nregs == MAX_REGS)
        return NULL;
    size_t data = ((size_t)len + PAGE - 1) / PAGE * PAGE;
    region *g = calloc(1, sizeof *g);
    FUZZ_CHECK(g != NULL);
    g->map_len = data + PAGE;
    g->map = mmap(NULL, g->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    FUZZ_CHECK(g->map != MAP_FAILED);
    FUZZ_CHECK(mprotect(g->map + data, PAGE, PROT_NONE) == 0);
    g->len = len;
    g->id = ++r->next_id;
    for (size_t i = 0; i < data; i++)
        g->map[i] = i < len ? pat(g->id, i) : 0xC5;
    g->other_pd = bits & 8;
    g->access = (bits & 1 ? IW_ACCESS_REMOTE_READ : 0) | (bits & 2 ? IW_ACCESS_REMOTE_WRITE : 0) |
                (bits & 4 ? IW_ACCESS_LOCAL_WRITE : 0);
    if (iw_mr_reg(r->rnic, bits & 8 ? r->pd2 : r->pd, g->map, len, 0, g->access, &g->stag)) {
        munmap(g->map, g->map_len);
        free(g);
        return NULL;
    }
    g->mapped_rw = g->live = true;
    r->regs[r->nregs++] = g;
    return g;
}

/* Withdrawn: nothing may touch it from now on. */
static void rv_fence(region *g) {
    g->live = false;
    if (g->mapped_rw) {
        FUZZ_CHECK(mprotect(g->map, g->map_len - PAGE, PROT_NONE) == 0);
        g->mapped_rw = false;
    }
}

static void rv_feed(fz_rv *r, size_t n, bool iov_path) {
    size_t left = r->pe.out.len - r->fed;
    if (n > left)
        n = left;
    const uint8_t *p = r->pe.out.p + r->fed;
    r->fed += n;
    if (!iov_path) {
        FUZZ_CHECK(iw_conn_recv(r->c, p, n, 0) == (iw_ssize)n);
        return;
    }
    while (n) {
        iw_iovec iov[64];
        int k = iw_conn_rx_iov(r->c, iov, 64);
        FUZZ_CHECK(k >= 0);
        if (k == 0)
            return; /* the engine reads no more */
        size_t got = 0;
        for (int i = 0; i < k && got < n; i++) {
            size_t t = iov[i].len < n - got ? iov[i].len : n - got;
            memcpy(iov[i].base, p + got, t);
            got += t;
        }
        FUZZ_CHECK(iw_conn_rx_commit(r->c, got, 0) == 0);
        p += got;
        n -= got;
    }
}

/* Up to n octets out through the zero-copy interface; the harness reads
 * what the iovecs point at, as writev would. */
static void rv_drain(fz_rv *r, size_t n) {
    while (n) {
        iw_iovec iov[64];
        int k = iw_conn_tx_iov(r->c, iov, 64);
        FUZZ_CHECK(k >= 0);
        if (k == 0)
            return;
        size_t got = 0;
        for (int i = 0; i < k && got < n; i++) {
            size_t t = iov[i].len < n - got ? iov[i].len : n - got;
            memcpy(fz_bytes_room(&r->out, t), iov[i].base, t);
            r->out.n += t;
            got += t;
        }
        FUZZ_CHECK(iw_conn_tx_commit(r->c, got, 0) == 0);
        n -= got;
    }
}

static void rv_post(fz_rv *r, region *g, uint32_t off, uint32_t len, bool write) {
    iw_send_wr w = {.op = write ? IW_WR_WRITE : IW_WR_SEND, .wr_id = ++r->next_wr, .len = len};
    size_t *n = write ? &r->nwrites : &r->nsends;
    if (*n == MAX_POSTS)
        return;
    if (g) {
        w.local_stag = g->stag;
        w.local_to = off;
    } else {
        w.data = r->own;
    }
    if (write) {
        w.remote_stag = 0xE0000000u | (uint32_t)*n;
        w.remote_to = 0;
    }
    int rc = iw_conn_post_send(r->c, &w);
    /* A source that is not a live region of our PD, in bounds, is refused
     * when posted. */
    bool ok_src = !g || (g->live && !g->other_pd && off <= g->len && len <= g->len - off);
    if (rc == 0)
        FUZZ_CHECK(ok_src || !len);
    if (rc != 0)
        return;
    (write ? r->writes : r->sends)[(*n)++] = (post_ent){g, off, len, write};
}

/* The octet at off of a response or message from e's source, if known. */
static bool rv_expect(const region *src, uint64_t off, uint8_t *want) {
    if (!src || src->written)
        return false;
    *want = pat(src->id, off);
    return true;
}

static void rv_check_output(fz_rv *r, const iw_conn_info *info) {
    iw_df_cfg cfg = {IW_DF_START_REPLY, info && info->markers_tx ? IW_DF_ON : IW_DF_OFF,
                     info && info->crc ? IW_DF_ON : IW_DF_OFF, 0};
    iw_peer_trace t = {0};
    FUZZ_CHECK(iw_peer_decode(&t, r->out.p, r->out.n, &cfg) == 0);
    FUZZ_CHECK(t.n >= 1 && t.v[0].type == IW_FRAME_MPA_REPLY);
    bool term = false;
    size_t send_msg = 0; /* Sends are numbered by MSN: 1 is the first posted */
    for (size_t i = 1; i < t.n; i++) {
        const iw_peer_frame *f = &t.v[i];
        if (f->type == IW_FRAME_INCOMPLETE && i == t.n - 1) {
            FUZZ_CHECK(r->aborted); /* only an abort leaves an FPDU half sent */
            break;
        }
        FUZZ_CHECK(f->type == IW_FRAME_FPDU);
        FUZZ_CHECK(f->verdict.kind == IW_VERDICT_OK && f->rdmap_verdict.kind == IW_VERDICT_OK);
        FUZZ_CHECK(!term); /* RFC 5040 §5.4 */
        const iw_rdmap_msg *m = &f->msg;
        const region *src = NULL;
        uint64_t base = 0;
        switch (m->opcode) {
        case IW_OP_TERMINATE:
            term = true;
            continue;
        case IW_OP_READ_RESP: {
            uint32_t k = m->ddp.stag & 0x0FFFFFFFu;
            FUZZ_CHECK((m->ddp.stag >> 28) == 0xF && k < r->nreqs);
            src = r->reqs[k].src;
            base = r->reqs[k].off + m->ddp.to;
            FUZZ_CHECK(m->ddp.to + m->payload_len <= r->reqs[k].size);
            break;
        }
        case IW_OP_WRITE: {
            uint32_t k = m->ddp.stag & 0x0FFFFFFFu;
            FUZZ_CHECK((m->ddp.stag >> 28) == 0xE && k < r->nwrites);
            src = r->writes[k].src;
            base = r->writes[k].off + m->ddp.to;
            if (!src) {
                for (size_t j = 0; j < m->payload_len; j++)
                    FUZZ_CHECK(m->payload[j] == r->own[m->ddp.to + j]);
                continue;
            }
            break;
        }
        case IW_OP_SEND: {
            if (m->ddp.mo == 0)
                send_msg++;
            FUZZ_CHECK(m->ddp.msn == send_msg && send_msg <= r->nsends);
            const post_ent *e = &r->sends[send_msg - 1];
            src = e->src;
            base = e->off + m->ddp.mo;
            if (!src) {
                for (size_t j = 0; j < m->payload_len; j++)
                    FUZZ_CHECK(m->payload[j] == r->own[m->ddp.mo + j]);
                continue;
            }
            break;
        }
        default:
            continue;
        }
        uint8_t want;
        for (size_t j = 0; j < m->payload_len; j++)
            if (rv_expect(src, base + j, &want))
                FUZZ_CHECK(m->payload[j] == want);
    }
    iw_peer_trace_free(&t);
}

static void rv_check_regions(fz_rv *r) {
    for (size_t i = 0; i < r->nregs; i++) {
        region *g = r->regs[i];
        size_t data = g->map_len - PAGE;
        if (!g->mapped_rw)
            FUZZ_CHECK(mprotect(g->map, data, PROT_READ) == 0);
        for (size_t k = g->len; k < data; k++)
            FUZZ_CHECK(g->map[k] == 0xC5);
        /* No Write may land in a region without remote write access. */
        if (!(g->access & IW_ACCESS_REMOTE_WRITE))
            for (size_t k = 0; k < g->len; k++)
                FUZZ_CHECK(g->map[k] == pat(g->id, k));
    }
}

static void rv_check_completions(const fz_rv *r) {
    for (size_t i = 0; i < r->ev.n; i++) {
        const fz_ev *e = &r->ev.v[i];
        if (e->type != IW_EV_SEND_DONE && e->type != IW_EV_WRITE_DONE)
            continue;
        for (size_t j = i + 1; j < r->ev.n; j++)
            FUZZ_CHECK(!(r->ev.v[j].wr_id == e->wr_id && (r->ev.v[j].type == IW_EV_SEND_DONE ||
                                                          r->ev.v[j].type == IW_EV_WRITE_DONE)));
        FUZZ_CHECK(e->status == IW_WC_SUCCESS || e->status == IW_WC_FLUSHED ||
                   e->status == IW_WC_REMOTE_ERROR || e->status == IW_WC_LOCAL_PROT_ERROR);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_in in = {data, size};
    uint8_t cfg = fuzz_u8(&in);
    fz_rv *r = calloc(1, sizeof *r);
    FUZZ_CHECK(r != NULL);
    for (size_t i = 0; i < OWN_LEN; i++)
        r->own[i] = (uint8_t)(i * 13 + 1);
    iw_conn_settings s;
    iw_conn_settings_default(&s, IW_ROLE_RESPONDER);
    s.cut_through = cfg & 1;
    s.markers = cfg & 2;
    s.crc = cfg & 8;
    s.emss = 160 + 80u * (cfg >> 4);
    FUZZ_CHECK(iw_rnic_new(&r->rnic, NULL) == 0);
    FUZZ_CHECK(iw_pd_alloc(r->rnic, &r->pd) == 0 && iw_pd_alloc(r->rnic, &r->pd2) == 0);
    FUZZ_CHECK(iw_conn_new(&r->c, r->rnic, r->pd, &s, &rv_cb, r) == 0);
    FUZZ_CHECK(iw_peer_init(&r->pe) == 0);
    FUZZ_CHECK(iw_conn_start(r->c, 0) == 0);
    fz_peer_request(&r->pe, false, cfg & 4, s.crc);
    iw_peer_full_operation(&r->pe, s.markers, s.crc);
    iw_peer_write(&r->pe, 0, 0, NULL, 0); /* lets the responder send (RFC 5044 §7.1.2 rule 4) */
    rv_feed(r, r->pe.out.len, false);
    rv_drain(r, SIZE_MAX);
    const iw_conn_info *info =
        iw_conn_get_state(r->c) == IW_CONN_IDLE ? NULL : iw_conn_get_info(r->c);

    static const uint8_t zeros[65536];
    for (int steps = 0; in.n && steps < 400; steps++) {
        uint8_t op = fuzz_u8(&in) % 12;
        switch (op) {
        case 0: {
            uint8_t sl = fuzz_u8(&in) % SLOTS;
            uint32_t len = 1 + fuzz_u16(&in) % REG_MAX;
            region *g = rv_reg(r, len, fuzz_u8(&in));
            if (g)
                r->slot[sl] = g;
            break;
        }
        case 1:
        case 2: {
            region *g = r->slot[fuzz_u8(&in) % SLOTS];
            if (!g || !g->live)
                break;
            int rc = op == 1 ? iw_mr_dereg(r->rnic, g->stag) : iw_mr_invalidate(r->rnic, g->stag);
            FUZZ_CHECK(rc == 0);
            rv_fence(g);
            break;
        }
        case 3: {
            region *g = r->slot[fuzz_u8(&in) % SLOTS];
            uint32_t off = fuzz_u16(&in), sz = fuzz_u16(&in) % REG_MAX;
            if (r->nreqs == MAX_REQS)
                break;
            uint32_t k = (uint32_t)r->nreqs;
            r->reqs[r->nreqs++] = (read_req){g, off, sz};
            iw_peer_read_req(&r->pe, 0xF0000000u | k, 0, sz, g ? g->stag : 0x7700u + k, off);
            break;
        }
        case 4: {
            region *g = r->slot[fuzz_u8(&in) % SLOTS];
            uint32_t off = fuzz_u16(&in), len = fuzz_u16(&in) % 4096;
            if (g)
                g->written = true;
            iw_peer_write(&r->pe, g ? g->stag : 0x6600, off, zeros, len);
            break;
        }
        case 5: {
            size_t n = fuzz_u16(&in);
            rv_feed(r, n, fuzz_u8(&in) & 1);
            break;
        }
        case 6:
            rv_drain(r, fuzz_u16(&in));
            break;
        case 7:
        case 8: {
            region *g = r->slot[fuzz_u8(&in) % SLOTS];
            uint32_t off = fuzz_u16(&in) % REG_MAX, len = fuzz_u16(&in) % REG_MAX;
            if (g)
                rv_post(r, g, off, len, op == 8);
            break;
        }
        case 9:
            rv_post(r, NULL, 0, fuzz_u16(&in) % OWN_LEN, false);
            break;
        case 10:
            if (r->nrbuf < MAX_POSTS) {
                uint8_t *b = malloc(2048);
                FUZZ_CHECK(b != NULL);
                r->rbuf[r->nrbuf++] = b;
                iw_conn_post_recv(r->c, r->next_wr++, b, 2048);
            }
            break;
        case 11:
            iw_peer_send(&r->pe, IW_OP_SEND, 0, zeros, fuzz_u16(&in) % 2048);
            break;
        }
    }
    rv_feed(r, SIZE_MAX, false);
    rv_drain(r, SIZE_MAX);
    rv_check_output(r, info);
    rv_check_regions(r);
    rv_check_completions(r);

    iw_conn_del(r->c);
    iw_rnic_del(r->rnic);
    for (size_t i = 0; i < r->nregs; i++) {
        munmap(r->regs[i]->map, r->regs[i]->map_len);
        free(r->regs[i]);
    }
    for (size_t i = 0; i < r->nrbuf; i++)
        free(r->rbuf[i]);
    iw_peer_free(&r->pe);
    free(r->out.p);
    free(r->ev.v);
    free(r);
    return 0;
}
