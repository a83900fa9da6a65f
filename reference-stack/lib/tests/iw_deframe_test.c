/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Streaming deframer: one direction of a TCP byte stream split into MPA
 * Request/Reply frames and FPDUs (RFC 5044 §4-§7, RFC 6581 §6).
 *
 * Streams are built with the encoders; the expected frame sequence is
 * computed alongside (offsets, lengths, ULPDU bytes, marker counts). The core
 * property: feeding a stream whole, one octet at a time, or cut at hundreds
 * of random points gives the IDENTICAL frame sequence. Every chunk is fed
 * from a buffer that ends at a guard page, so any over-read faults. */
#include <iwarp/crc32c.h>
#include <iwarp/mpa.h>
#include <iwarp/rdmap.h>

#include "iw_test.h"
#include "iw_test_guard.h"

#define STREAM_CAP (256 * 1024)

/* Bitwise CRC32c (RFC 3720 §12.1, reflected 0x82F63B78), independent of the library. */
static uint32_t ref_crc(const uint8_t *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    while (n--) {
        c ^= *p++;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    }
    return ~c;
}

/* ---- frame records: everything a frame reports, by value ---- */

typedef struct {
    int type;
    uint64_t offset, wire_off, wire_len, lost_len;
    uint32_t pos;
    int markers, crc_on;
    int vkind, vterm, vclose, lost_why;
    /* MPA Request / Reply */
    int rr_type, rr_m, rr_c, rr_r, rr_s, rr_enh, rev, pd_len;
    uint32_t rr_notes;
    uint64_t pd_hash;
    /* FPDU */
    int ulpdu_len, crc, marker_ok;
    uint64_t ulpdu_hash, hdr_off;
    uint32_t crc_wire, f_notes;
    unsigned n_markers;
} rec;

typedef struct {
    rec *v;
    size_t n, cap;
} recs;

static uint64_t hash(const uint8_t *p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return h ^ n;
}

static rec *recs_push(recs *r) {
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 64;
        r->v = realloc(r->v, r->cap * sizeof *r->v);
    }
    rec *x = &r->v[r->n++];
    memset(x, 0, sizeof *x);
    return x;
}

static void rec_from_frame(rec *x, const iw_frame *fr) {
    x->type = fr->type;
    x->offset = fr->offset;
    x->wire_off = fr->wire_off;
    x->wire_len = fr->wire_len;
    x->lost_len = fr->lost_len;
    x->vkind = fr->verdict.kind;
    x->vterm = fr->verdict.term;
    x->vclose = fr->verdict.close;
    x->lost_why = fr->lost_why;
    if (fr->type == IW_FRAME_MPA_REQUEST || fr->type == IW_FRAME_MPA_REPLY) {
        const iw_mpa_rr *rr = &fr->rr;
        x->rr_type = rr->type;
        x->rr_m = rr->m, x->rr_c = rr->c, x->rr_r = rr->r, x->rr_s = rr->s;
        x->rr_enh = rr->enhanced;
        x->rev = rr->rev;
        x->pd_len = rr->pd_len;
        x->rr_notes = rr->notes;
        if (rr->pd)
            x->pd_hash = hash(rr->pd, rr->pd_len);
    }
    if (fr->type == IW_FRAME_FPDU) {
        const iw_mpa_fpdu *f = &fr->fpdu;
        x->pos = fr->pos;
        x->markers = fr->markers;
        x->crc_on = fr->crc_on;
        x->ulpdu_len = f->ulpdu_len;
        x->ulpdu_hash = f->ulpdu_len ? hash(f->ulpdu, f->ulpdu_len) : 0;
        x->hdr_off = f->hdr_off;
        x->crc = f->crc;
        x->crc_wire = f->crc_wire;
        x->marker_ok = f->marker_ok;
        x->f_notes = f->notes;
        x->n_markers = f->n_markers;
    }
    if (fr->type == IW_FRAME_INCOMPLETE)
        x->pos = fr->pos;
}

/* Name of the first field that differs, or NULL. */
static const char *rec_diff(const rec *a, const rec *b) {
#define F(f)                                                                                       \
    do {                                                                                           \
        if (a->f != b->f)                                                                          \
            return #f;                                                                             \
    } while (0)
    F(type);
    F(offset);
    F(wire_off);
    F(wire_len);
    F(lost_len);
    F(pos);
    F(markers);
    F(crc_on);
    F(vkind);
    F(vterm);
    F(vclose);
    F(lost_why);
    F(rr_type);
    F(rr_m);
    F(rr_c);
    F(rr_r);
    F(rr_s);
    F(rr_enh);
    F(rev);
    F(pd_len);
    F(rr_notes);
    F(pd_hash);
    F(ulpdu_len);
    F(crc);
    F(marker_ok);
    F(ulpdu_hash);
    F(hdr_off);
    F(crc_wire);
    F(f_notes);
    F(n_markers);
#undef F
    return NULL;
}

static bool recs_same(const char *what, const recs *want, const recs *got) {
    if (want->n != got->n) {
        fprintf(stderr, "  %s: %zu frames, want %zu\n", what, got->n, want->n);
        size_t m = want->n < got->n ? want->n : got->n;
        for (size_t i = 0; i < m; i++)
            if (rec_diff(&want->v[i], &got->v[i])) {
                fprintf(stderr, "    first difference at frame %zu (%s)\n", i,
                        rec_diff(&want->v[i], &got->v[i]));
                break;
            }
        return false;
    }
    for (size_t i = 0; i < want->n; i++) {
        const char *d = rec_diff(&want->v[i], &got->v[i]);
        if (d) {
            fprintf(stderr, "  %s: frame %zu differs in %s\n", what, i, d);
            return false;
        }
    }
    return true;
}

/* Frames tile the input: each starts where the previous ended, and together
 * they account for every octet. */
static bool recs_cover(const recs *r, size_t len) {
    uint64_t at = 0;
    for (size_t i = 0; i < r->n; i++) {
        const rec *x = &r->v[i];
        if (x->wire_off != at)
            return false;
        at += x->type == IW_FRAME_LOST ? x->lost_len : x->wire_len;
        if (x->type == IW_FRAME_LOST && x->wire_len != x->lost_len)
            return false;
    }
    return at == len;
}

/* ---- feeding ---- */

static iw_deframer *g_df;
static iw_test_guard_buf g_guard;

/* Feed s[0..len) cut at cuts[0..ncuts) (non-decreasing; equal cuts feed an
 * empty chunk), then drain iw_deframer_finish. */
static bool run(const iw_df_cfg *cfg, const uint8_t *s, size_t len, const size_t *cuts,
                size_t ncuts, recs *out) {
    out->n = 0;
    iw_deframer_init(g_df, cfg);
    size_t start = 0, calls = 0;
    for (size_t c = 0; c <= ncuts; c++) {
        size_t end = c < ncuts ? cuts[c] : len;
        size_t n = end - start;
        const uint8_t *p = iw_test_guard_place(&g_guard, s + start, n);
        if (n == 0) {
            iw_frame fr;
            iw_ssize r = iw_deframer_feed(g_df, p, 0, &fr);
            if (r != 0 || fr.type != IW_FRAME_NONE) {
                fprintf(stderr, "  empty chunk: %td, frame %d\n", r, fr.type);
                return false;
            }
        }
        while (n > 0) {
            iw_frame fr;
            iw_ssize r = iw_deframer_feed(g_df, p, n, &fr);
            if (r < 0 || (size_t)r > n || ++calls > 4 * len + 16) {
                fprintf(stderr, "  feed returned %td for %zu octets\n", r, n);
                return false;
            }
            if (fr.type != IW_FRAME_NONE)
                rec_from_frame(recs_push(out), &fr);
            else if ((size_t)r != n) {
                /* no frame: everything offered is consumed */
                fprintf(stderr, "  feed consumed %td of %zu without a frame\n", r, n);
                return false;
            }
            p += r;
            n -= (size_t)r;
        }
        start = end;
    }
    iw_frame fr;
    for (int i = 0; iw_deframer_finish(g_df, &fr); i++) {
        if (i > 4) {
            fprintf(stderr, "  finish does not stop\n");
            return false;
        }
        rec_from_frame(recs_push(out), &fr);
    }
    if (!recs_cover(out, len)) {
        fprintf(stderr, "  frames do not tile the %zu input octets\n", len);
        return false;
    }
    return true;
}

static bool run_whole(const iw_df_cfg *cfg, const uint8_t *s, size_t len, recs *out) {
    return run(cfg, s, len, NULL, 0, out);
}

static size_t *g_cuts;

static bool run_bytes(const iw_df_cfg *cfg, const uint8_t *s, size_t len, recs *out) {
    for (size_t i = 1; i < len; i++)
        g_cuts[i - 1] = i;
    return run(cfg, s, len, g_cuts, len ? len - 1 : 0, out);
}

static int cmp_size(const void *a, const void *b) {
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

static bool run_random(const iw_df_cfg *cfg, const uint8_t *s, size_t len, uint64_t seed,
                       size_t ncuts, recs *out) {
    uint64_t st = seed * 0x9E3779B97F4A7C15ULL + 1;
    for (size_t i = 0; i < ncuts; i++)
        g_cuts[i] = len ? (size_t)(iw_test_rand(&st) % (len + 1)) : 0;
    qsort(g_cuts, ncuts, sizeof *g_cuts, cmp_size);
    return run(cfg, s, len, g_cuts, ncuts, out);
}

/* The property: whole == one octet at a time == random cuts (several seeds,
 * 200+ cut points, plus a few runs with only a handful of large chunks). */
static void check_split_invariance(const char *name, const iw_df_cfg *cfg, const uint8_t *s,
                                   size_t len, const recs *want) {
    recs whole = {0}, other = {0};
    REQUIRE(run_whole(cfg, s, len, &whole));
    if (!recs_same(name, want, &whole)) {
        fprintf(stderr, "  (%s: whole stream vs expected)\n", name);
        CHECK(0);
    }
    REQUIRE(run_bytes(cfg, s, len, &other));
    if (!recs_same(name, &whole, &other)) {
        fprintf(stderr, "  (%s: one octet at a time)\n", name);
        CHECK(0);
    }
    for (uint64_t seed = 1; seed <= 4; seed++) {
        size_t ncuts = 200 + (size_t)(seed * 37 % 100);
        REQUIRE(run_random(cfg, s, len, seed, ncuts, &other));
        if (!recs_same(name, &whole, &other)) {
            fprintf(stderr, "  (%s: random cuts, seed %u)\n", name, (unsigned)seed);
            CHECK(0);
        }
    }
    for (uint64_t seed = 11; seed <= 14; seed++) {
        REQUIRE(run_random(cfg, s, len, seed, (size_t)seed % 5 + 1, &other));
        if (!recs_same(name, &whole, &other)) {
            fprintf(stderr, "  (%s: few cuts, seed %u)\n", name, (unsigned)seed);
            CHECK(0);
        }
    }
    free(whole.v);
    free(other.v);
}

/* ---- stream builder ---- */

typedef struct {
    uint8_t *b;
    size_t len;
    recs exp;
    uint32_t pos;   /* grid position of the next octet */
    unsigned flags; /* IW_MPA_MARKERS / IW_MPA_CRC for the FPDUs written */
    bool crc_on;    /* what the deframer should resolve CRCs to */
    uint32_t msn;
    uint64_t seed;
} stream;

static void st_init(stream *st, unsigned flags, bool crc_on, uint32_t pos) {
    if (!st->b)
        st->b = malloc(STREAM_CAP);
    st->len = 0;
    st->exp.n = 0;
    st->flags = flags;
    st->crc_on = crc_on;
    st->pos = pos;
    st->msn = 1;
    st->seed = 0x1234567 + pos;
}

static void st_free(stream *st) {
    free(st->b);
    free(st->exp.v);
    st->b = NULL;
    st->exp.v = NULL;
}

/* Append an MPA Request/Reply; the grid starts after it (RFC 5044 §4.3). */
static void st_rr(stream *st, const iw_mpa_rr *e) {
    iw_ssize w = iw_mpa_rr_encode(st->b + st->len, STREAM_CAP - st->len, e);
    if (w <= 0)
        abort();
    rec *x = recs_push(&st->exp);
    x->type = e->type == IW_MPA_REQUEST ? IW_FRAME_MPA_REQUEST : IW_FRAME_MPA_REPLY;
    x->offset = x->wire_off = st->len;
    x->wire_len = (uint64_t)w;
    x->rr_type = e->type;
    x->rr_m = e->m, x->rr_c = e->c, x->rr_r = e->r;
    x->rr_s = e->s && e->rev >= 2;
    x->rr_enh = x->rr_s;
    x->rev = e->rev;
    x->pd_len = (int)(w - 20);
    if (w > 20)
        x->pd_hash = hash(st->b + st->len + 20, (size_t)w - 20);
    st->len += (size_t)w;
    st->pos = 0;
}

/* Append one FPDU carrying an RDMAP message of this opcode with paylen
 * octets of ULP payload (Write/Read Response/Send*). */
static size_t st_fpdu(stream *st, unsigned op, size_t paylen) {
    static uint8_t payload[65536], hdr[128], term_raw[18];
    for (size_t i = 0; i < paylen; i++)
        payload[i] = (uint8_t)(iw_test_rand(&st->seed) >> 56);
    iw_rdmap_msg m;
    memset(&m, 0, sizeof m);
    m.rv = 1;
    m.opcode = (uint8_t)op;
    m.ddp.dv = 1;
    m.ddp.last = true;
    switch (op) {
    case IW_OP_WRITE:
    case IW_OP_READ_RESP:
        m.ddp.tagged = true;
        m.ddp.stag = 0x100 + op;
        m.ddp.to = st->seed;
        break;
    case IW_OP_READ_REQ:
        m.ddp.qn = IW_QN_READ_REQ;
        m.u.read_req.read_size = 4096;
        paylen = 0;
        break;
    case IW_OP_ATOMIC_REQ:
        m.ddp.qn = IW_QN_READ_REQ;
        m.u.atomic_req.aopcode = IW_ATOMIC_FETCH_ADD;
        m.u.atomic_req.add_swap = 1;
        paylen = 0;
        break;
    case IW_OP_ATOMIC_RESP:
        m.ddp.qn = IW_QN_ATOMIC_RESP;
        paylen = 0;
        break;
    case IW_OP_TERMINATE:
        m.ddp.qn = IW_QN_TERMINATE;
        m.u.term.layer = 0, m.u.term.etype = 2, m.u.term.ecode = 6;
        m.u.term.m = m.u.term.d = true;
        memset(term_raw, 0, sizeof term_raw);
        term_raw[0] = 0x41;
        m.u.term.ddp_raw = term_raw;
        m.u.term.ddp_raw_len = 18;
        paylen = 0;
        break;
    case IW_OP_IMM:
    case IW_OP_IMM_SE:
        memcpy(m.u.imm, "immdata!", 8);
        paylen = 0;
        break;
    default:
        break;
    }
    if (!m.ddp.tagged)
        m.ddp.msn = st->msn++;
    iw_ssize hl = iw_rdmap_encode_hdr(hdr, sizeof hdr, &m);
    if (hl < 0)
        abort();
    uint8_t *at = st->b + st->len;
    iw_ssize w = iw_mpa_fpdu_encode(at, STREAM_CAP - st->len, st->pos, st->flags, hdr, (size_t)hl,
                                    payload, paylen);
    if (w <= 0)
        abort();
    bool mk = st->flags & IW_MPA_MARKERS;
    rec *x = recs_push(&st->exp);
    x->type = IW_FRAME_FPDU;
    x->wire_off = st->len;
    /* RFC 5044 §4.3: a marker at the FPDU's first grid position precedes
     * its ULPDU_Length; the frame's offset is that header. */
    x->hdr_off = mk && st->pos % 512 == 0 ? 4 : 0;
    x->offset = st->len + x->hdr_off;
    x->wire_len = (uint64_t)w;
    x->pos = st->pos;
    x->markers = mk;
    x->crc_on = st->crc_on;
    x->ulpdu_len = (int)((size_t)hl + paylen);
    uint8_t ul[65536 + 128];
    memcpy(ul, hdr, (size_t)hl);
    memcpy(ul + hl, payload, paylen);
    x->ulpdu_hash = x->ulpdu_len ? hash(ul, (size_t)x->ulpdu_len) : 0;
    x->crc = st->crc_on ? IW_CRC_GOOD : IW_CRC_UNCHECKED;
    x->crc_wire = iw_crc32c_get(at + w - 4);
    x->marker_ok = 1;
    if (mk)
        for (iw_ssize k = 0; k < w; k++)
            x->n_markers += ((st->pos + (uint32_t)k) & 511) == 0;
    st->len += (size_t)w;
    st->pos += (uint32_t)w;
    return (size_t)w;
}

/* A varied message mix: sizes around the marker interval, tiny and large. */
static const struct {
    unsigned op;
    size_t len;
} k_mix[] = {
    {IW_OP_SEND, 0},       {IW_OP_WRITE, 100},     {IW_OP_READ_REQ, 0},    {IW_OP_READ_RESP, 1000},
    {IW_OP_SEND, 494},     {IW_OP_SEND_SE, 508},   {IW_OP_IMM, 0},         {IW_OP_WRITE, 4096},
    {IW_OP_ATOMIC_REQ, 0}, {IW_OP_ATOMIC_RESP, 0}, {IW_OP_SEND_INV, 1},    {IW_OP_WRITE, 2000},
    {IW_OP_IMM_SE, 0},     {IW_OP_SEND_SE_INV, 3}, {IW_OP_READ_RESP, 511}, {IW_OP_TERMINATE, 0},
};
#define N_MIX (sizeof k_mix / sizeof k_mix[0])

static void st_mix(stream *st, size_t n, size_t first) {
    for (size_t i = 0; i < n; i++)
        st_fpdu(st, k_mix[(first + i) % N_MIX].op, k_mix[(first + i) % N_MIX].len);
}

static iw_mpa_rr mk_rr(iw_mpa_rr_type type, bool m, bool c, bool r, int rev, bool s,
                       uint16_t ulp_pd_len) {
    static uint8_t pd[512];
    for (size_t i = 0; i < sizeof pd; i++)
        pd[i] = (uint8_t)(i * 13 + 5);
    iw_mpa_rr e;
    memset(&e, 0, sizeof e);
    e.type = type;
    e.m = m, e.c = c, e.r = r, e.s = s;
    e.rev = (uint8_t)rev;
    if (s) {
        e.v2.p2p = true;
        e.v2.rtr_write = true;
        e.v2.ird = 16;
        e.v2.ord = IW_MPA_V2_NO_NEG;
    }
    e.ulp_pd_len = ulp_pd_len;
    e.ulp_pd = ulp_pd_len ? pd : NULL;
    return e;
}

static iw_df_cfg mk_cfg(iw_df_start start, iw_df_mode markers, iw_df_mode crc, uint32_t pos) {
    iw_df_cfg c;
    memset(&c, 0, sizeof c);
    c.start = start;
    c.markers = markers;
    c.crc = crc;
    c.stream_pos = pos;
    return c;
}

/* ---- property tests over well-formed streams ---- */

/* v1 Request, no PD; markers and CRC on; markers AUTO detects the leading
 * marker (RFC 5044 §7.1.2 rule 7), CRC AUTO follows C=1 (§7.1.1). */
IW_TEST(stream_v1_request_markers_crc) {
    stream st = {0};
    st_init(&st, IW_MPA_MARKERS | IW_MPA_CRC, true, 0);
    iw_mpa_rr e = mk_rr(IW_MPA_REQUEST, true, true, false, 1, false, 0);
    st_rr(&st, &e);
    st_mix(&st, 2 * N_MIX, 0);
    iw_df_cfg cfg = mk_cfg(IW_DF_START_REQUEST, IW_DF_AUTO, IW_DF_AUTO, 0);
    check_split_invariance("v1 request", &cfg, st.b, st.len, &st.exp);
    /* explicit modes give the same frames */
    cfg = mk_cfg(IW_DF_START_RR, IW_DF_ON, IW_DF_ON, 0);
    check_split_invariance("v1 request, ON/ON", &cfg, st.b, st.len, &st.exp);
    st_free(&st);
}

/* v2 Request with enhanced data and ULP PD; no markers, CRC on. */
IW_TEST(stream_v2_request_pd_no_markers) {
    stream st = {0};
    st_init(&st, IW_MPA_CRC, true, 0);
    iw_mpa_rr e = mk_rr(IW_MPA_REQUEST, false, true, false, 2, true, 20);
    st_rr(&st, &e);
    st_mix(&st, N_MIX, 3);
    iw_df_cfg cfg = mk_cfg(IW_DF_START_REQUEST, IW_DF_AUTO, IW_DF_AUTO, 0);
    check_split_invariance("v2 request", &cfg, st.b, st.len, &st.exp);
    cfg = mk_cfg(IW_DF_START_RR, IW_DF_OFF, IW_DF_AUTO, 0);
    check_split_invariance("v2 request, markers OFF", &cfg, st.b, st.len, &st.exp);
    st_free(&st);
}

/* v1 Reply with PD, C=0, CRC fields zero: CRC AUTO resolves to off, every
 * CRC is UNCHECKED and no verdict fires (§7.1.1: "MUST be considered valid"). */
IW_TEST(stream_v1_reply_crc_off) {
    stream st = {0};
    st_init(&st, IW_MPA_MARKERS, false, 0);
    iw_mpa_rr e = mk_rr(IW_MPA_REPLY, true, false, false, 1, false, 16);
    st_rr(&st, &e);
    st_mix(&st, N_MIX, 5);
    iw_df_cfg cfg = mk_cfg(IW_DF_START_REPLY, IW_DF_AUTO, IW_DF_AUTO, 0);
    check_split_invariance("v1 reply crc off", &cfg, st.b, st.len, &st.exp);
    /* CRC explicitly OFF with valid CRCs: still unchecked. */
    st_init(&st, IW_MPA_MARKERS | IW_MPA_CRC, false, 0);
    st_rr(&st, &e);
    st_mix(&st, N_MIX, 6);
    cfg = mk_cfg(IW_DF_START_REPLY, IW_DF_AUTO, IW_DF_OFF, 0);
    check_split_invariance("v1 reply crc OFF", &cfg, st.b, st.len, &st.exp);
    st_free(&st);
}

/* v2 Reply, C=0, but the sender computes CRCs anyway: CRC AUTO sees a valid
 * first CRC and turns checking on. */
IW_TEST(stream_v2_reply_c0_valid_crc) {
    stream st = {0};
    st_init(&st, IW_MPA_CRC, true, 0);
    iw_mpa_rr e = mk_rr(IW_MPA_REPLY, false, false, false, 2, true, 0);
    st_rr(&st, &e);
    st_mix(&st, N_MIX, 9);
    iw_df_cfg cfg = mk_cfg(IW_DF_START_REPLY, IW_DF_AUTO, IW_DF_AUTO, 0);
    check_split_invariance("v2 reply c0 crc", &cfg, st.b, st.len, &st.exp);
    /* markers too */
    st_init(&st, IW_MPA_MARKERS | IW_MPA_CRC, true, 0);
    st_rr(&st, &e);
    st_mix(&st, N_MIX, 10);
    check_split_invariance("v2 reply c0 crc markers", &cfg, st.b, st.len, &st.exp);
    st_free(&st);
}

/* 512 octets of Private Data and the largest marker FPDU (64768, §4.5),
 * which the deframer must hold whole when it arrives in pieces. */
IW_TEST(stream_big_frames) {
    stream st = {0};
    st_init(&st, IW_MPA_MARKERS | IW_MPA_CRC, true, 0);
    iw_mpa_rr e = mk_rr(IW_MPA_REQUEST, true, true, false, 1, false, 512);
    st_rr(&st, &e);
    st_fpdu(&st, IW_OP_SEND, 10);
    st_fpdu(&st, IW_OP_WRITE, 64768 - 14);
    st_fpdu(&st, IW_OP_SEND, 64768 - 18);
    st_fpdu(&st, IW_OP_WRITE, 0);
    iw_df_cfg cfg = mk_cfg(IW_DF_START_RR, IW_DF_AUTO, IW_DF_AUTO, 0);
    check_split_invariance("big frames", &cfg, st.b, st.len, &st.exp);
    /* no markers: the 16-bit maximum, 65535 */
    st_init(&st, IW_MPA_CRC, true, 0);
    e = mk_rr(IW_MPA_REPLY, false, true, false, 2, true, 508);
    st_rr(&st, &e);
    st_fpdu(&st, IW_OP_WRITE, 65535 - 14);
    st_fpdu(&st, IW_OP_SEND, 7);
    cfg = mk_cfg(IW_DF_START_REPLY, IW_DF_AUTO, IW_DF_AUTO, 0);
    check_split_invariance("big frames, no markers", &cfg, st.b, st.len, &st.exp);
    st_free(&st);
}

/* A short stream cut once at every possible point, and truncated at every
 * possible point. */
IW_TEST(every_single_cut) {
    stream st = {0};
    st_init(&st, IW_MPA_MARKERS | IW_MPA_CRC, true, 0);
    iw_mpa_rr e = mk_rr(IW_MPA_REQUEST, true, true, false, 2, true, 6);
    st_rr(&st, &e);
    st_fpdu(&st, IW_OP_SEND, 30);
    st_fpdu(&st, IW_OP_WRITE, 470); /* crosses the grid point at 512 */
    st_fpdu(&st, IW_OP_READ_REQ, 0);
    st_fpdu(&st, IW_OP_SEND, 400);
    iw_df_cfg cfg = mk_cfg(IW_DF_START_REQUEST, IW_DF_AUTO, IW_DF_AUTO, 0);
    recs whole = {0}, other = {0};
    REQUIRE(run_whole(&cfg, st.b, st.len, &whole));
    CHECK(recs_same("single cut: whole", &st.exp, &whole));
    size_t bad = 0;
    for (size_t k = 0; k <= st.len; k++) {
        size_t cuts[2] = {k, k};
        REQUIRE(
            run(&cfg, st.b, st.len, cuts, 1 + (k % 2), &other)); /* odd k: plus an empty chunk */
        if (!recs_same("single cut", &whole, &other) && bad++ < 3)
            fprintf(stderr, "  cut at %zu\n", k);
    }
    CHECK_EQ(bad, 0);
    /* Every truncation of the stream: the complete frames, then one
     * INCOMPLETE record holding the partial frame's octets. */
    bad = 0;
    for (size_t k = 0; k <= st.len; k++) {
        REQUIRE(run_whole(&cfg, st.b, k, &other));
        size_t i = 0;
        while (i < st.exp.n && st.exp.v[i].wire_off + st.exp.v[i].wire_len <= k)
            i++;
        bool ok = other.n == i + (i < st.exp.n && st.exp.v[i].wire_off < k);
        for (size_t j = 0; ok && j < i; j++)
            ok = rec_diff(&st.exp.v[j], &other.v[j]) == NULL;
        if (ok && other.n > i) {
            const rec *x = &other.v[i];
            ok = x->type == IW_FRAME_INCOMPLETE && x->wire_off == st.exp.v[i].wire_off &&
                 x->wire_len == k - st.exp.v[i].wire_off;
        }
        if (!ok && bad++ < 3)
            fprintf(stderr, "  truncated at %zu: %zu frames\n", k, other.n);
    }
    CHECK_EQ(bad, 0);
    free(whole.v);
    free(other.v);
    st_free(&st);
}

/* Mid-stream start (IW_DF_START_FPDU) at every grid position 0..508 (step
 * 4: FPDUs are 4-aligned, §4.1), markers and CRC on; and the same stream
 * with positions past 2^32 - 512 so the grid arithmetic wraps (§4.3). */
IW_TEST(mid_stream_every_pos) {
    stream st = {0};
    recs a = {0}, b = {0};
    for (uint32_t p = 0; p < 512; p += 4) {
        st_init(&st, IW_MPA_MARKERS | IW_MPA_CRC, true, p);
        st_fpdu(&st, IW_OP_SEND, 12);
        st_fpdu(&st, IW_OP_WRITE, 480);
        st_fpdu(&st, IW_OP_READ_RESP, 100);
        st_fpdu(&st, IW_OP_SEND, 700);
        st_fpdu(&st, IW_OP_IMM, 0);
        iw_df_cfg cfg = mk_cfg(IW_DF_START_FPDU, IW_DF_ON, IW_DF_ON, p);
        REQUIRE(run_whole(&cfg, st.b, st.len, &a));
        if (!recs_same("mid-stream", &st.exp, &a)) {
            fprintf(stderr, "  (stream_pos %u)\n", p);
            CHECK(0);
        }
        REQUIRE(run_bytes(&cfg, st.b, st.len, &b));
        if (!recs_same("mid-stream bytes", &a, &b)) {
            fprintf(stderr, "  (stream_pos %u)\n", p);
            CHECK(0);
        }
        REQUIRE(run_random(&cfg, st.b, st.len, p + 1, 40, &b));
        if (!recs_same("mid-stream random", &a, &b)) {
            fprintf(stderr, "  (stream_pos %u)\n", p);
            CHECK(0);
        }
        /* CRC AUTO: the first FPDU's CRC verifies, so on */
        cfg.crc = IW_DF_AUTO;
        REQUIRE(run_whole(&cfg, st.b, st.len, &b));
        if (!recs_same("mid-stream crc auto", &a, &b)) {
            fprintf(stderr, "  (stream_pos %u)\n", p);
            CHECK(0);
        }
        /* wrap: the same octets at stream_pos = p - 1024 (mod 2^32) */
        uint32_t wp = p - 1024u;
        cfg = mk_cfg(IW_DF_START_FPDU, IW_DF_ON, IW_DF_ON, wp);
        REQUIRE(run_random(&cfg, st.b, st.len, p + 7, 25, &b));
        bool same = a.n == b.n;
        for (size_t i = 0; same && i < a.n; i++) {
            rec x = b.v[i];
            CHECK_EQ(x.pos, (uint32_t)(wp + (uint32_t)x.wire_off));
            x.pos = a.v[i].pos;
            same = rec_diff(&a.v[i], &x) == NULL;
        }
        if (!same) {
            fprintf(stderr, "  wrap differs at stream_pos %u\n", p);
            CHECK(0);
        }
        if (!same)
            break;
    }
    /* without markers, mid-stream AUTO means none (no startup frame to anchor) */
    st_init(&st, IW_MPA_CRC, true, 0);
    st_mix(&st, N_MIX, 2);
    iw_df_cfg cfg = mk_cfg(IW_DF_START_FPDU, IW_DF_AUTO, IW_DF_AUTO, 0);
    check_split_invariance("mid-stream no markers", &cfg, st.b, st.len, &st.exp);
    free(a.v);
    free(b.v);
    st_free(&st);
}

/* ---- error paths ---- */

/* RFC 5044 §7.1.2 rule 5: a wrong key closes; nothing can be framed, so
 * finish() reports every octet as one LOST record carrying the verdict. */
IW_TEST(bad_key) {
    stream st = {0};
    st_init(&st, IW_MPA_MARKERS | IW_MPA_CRC, true, 0);
    iw_mpa_rr e = mk_rr(IW_MPA_REQUEST, true, true, false, 1, false, 0);
    st_rr(&st, &e);
    st_mix(&st, 4, 0);
    st.b[12] = 'f'; /* "MPA ID Req frame" */
    recs want = {0};
    rec *x = recs_push(&want);
    x->type = IW_FRAME_LOST;
    x->offset = x->wire_off = 0;
    x->lost_len = x->wire_len = st.len;
    x->lost_why = IW_CLOSE_MPA_BAD_KEY;
    x->vkind = IW_VERDICT_CLOSE;
    x->vclose = IW_CLOSE_MPA_BAD_KEY;
    for (int start = IW_DF_START_REQUEST; start <= IW_DF_START_RR; start++) {
        iw_df_cfg cfg = mk_cfg((iw_df_start)start, IW_DF_AUTO, IW_DF_AUTO, 0);
        check_split_invariance("bad key", &cfg, st.b, st.len, &want);
    }
    /* three octets of garbage */
    want.v[0].lost_len = want.v[0].wire_len = 3;
    iw_df_cfg cfg = mk_cfg(IW_DF_START_RR, IW_DF_AUTO, IW_DF_AUTO, 0);
    check_split_invariance("XYZ", &cfg, (const uint8_t *)"XYZ", 3, &want);
    free(want.v);
    st_free(&st);
}

/* §7.1.2 rule 8: a Request where a Reply was due is Initiator/Initiator;
 * a Reply where a Request was due fails the key check. Either way MPA
 * exits: the frame carries the close, the rest is LOST. */
IW_TEST(wrong_frame_type) {
    stream st = {0};
    for (int t = 0; t < 2; t++) {
        st_init(&st, IW_MPA_CRC, true, 0);
        iw_mpa_rr e = mk_rr(t ? IW_MPA_REPLY : IW_MPA_REQUEST, false, true, false, 1, false, 8);
        st_rr(&st, &e);
        size_t rr_len = st.len;
        st_mix(&st, 3, 0);
        recs want = {0};
        *recs_push(&want) = st.exp.v[0];
        want.v[0].vkind = IW_VERDICT_CLOSE;
        want.v[0].vclose = t ? IW_CLOSE_MPA_BAD_KEY : IW_CLOSE_MPA_INITIATOR_INITIATOR;
        rec *x = recs_push(&want);
        x->type = IW_FRAME_LOST;
        x->offset = x->wire_off = rr_len;
        x->lost_len = x->wire_len = st.len - rr_len;
        x->lost_why = want.v[0].vclose;
        iw_df_cfg cfg =
            mk_cfg(t ? IW_DF_START_REQUEST : IW_DF_START_REPLY, IW_DF_AUTO, IW_DF_AUTO, 0);
        check_split_invariance(t ? "reply where request due" : "initiator/initiator", &cfg, st.b,
                               st.len, &want);
        /* The frame alone: no LOST record (nothing after it). */
        want.n = 1;
        check_split_invariance("wrong type, frame alone", &cfg, st.b, rr_len, &want);
        free(want.v);
    }
    st_free(&st);
}

/* §7.1.2 rule 3: a Reply with R=1 is well-formed (frame ok) but MPA exits,
 * leaving the stream to the ULP: the rest is LOST with MPA_REJECTED. */
IW_TEST(reply_rejected) {
    stream st = {0};
    st_init(&st, IW_MPA_CRC, true, 0);
    iw_mpa_rr e = mk_rr(IW_MPA_REPLY, false, true, true, 1, false, 5);
    st_rr(&st, &e);
    size_t rr_len = st.len;
    memcpy(st.b + st.len, "some ULP bytes after the reject", 31);
    st.len += 31;
    recs want = {0};
    *recs_push(&want) = st.exp.v[0];
    CHECK(want.v[0].rr_r);
    rec *x = recs_push(&want);
    x->type = IW_FRAME_LOST;
    x->offset = x->wire_off = rr_len;
    x->lost_len = x->wire_len = 31;
    x->lost_why = IW_CLOSE_MPA_REJECTED;
    for (int start = IW_DF_START_REPLY; start <= IW_DF_START_RR; start++) {
        iw_df_cfg cfg = mk_cfg((iw_df_start)start, IW_DF_AUTO, IW_DF_AUTO, 0);
        check_split_invariance("reply R=1", &cfg, st.b, st.len, &want);
    }
    free(want.v);
    st_free(&st);
}

/* §7.1.1: bad Rev / PD_Length over 512 / S=1 with short PD close; the frame
 * is reported, the rest is LOST. */
IW_TEST(malformed_rr) {
    static const struct {
        uint8_t flags, rev;
        uint16_t pdl;
        iw_close_reason why;
        size_t frame_len;
    } rows[] = {
        {0x40, 0, 0, IW_CLOSE_MPA_BAD_REV, 20},
        {0x40, 3, 4, IW_CLOSE_MPA_BAD_REV, 20},
        {0x40, 1, 513, IW_CLOSE_MPA_PD_TOO_LONG, 20},
        {0x50, 2, 2, IW_CLOSE_MPA_V2_PD_SHORT, 22},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        uint8_t s[200];
        memcpy(s, "MPA ID Req Frame", 16);
        s[16] = rows[i].flags;
        s[17] = rows[i].rev;
        s[18] = (uint8_t)(rows[i].pdl >> 8);
        s[19] = (uint8_t)rows[i].pdl;
        for (size_t k = 20; k < sizeof s; k++)
            s[k] = (uint8_t)k;
        iw_df_cfg cfg = mk_cfg(IW_DF_START_REQUEST, IW_DF_AUTO, IW_DF_AUTO, 0);
        recs got = {0}, other = {0};
        REQUIRE(run_whole(&cfg, s, sizeof s, &got));
        REQUIRE(got.n == 2);
        CHECK_EQ(got.v[0].type, IW_FRAME_MPA_REQUEST);
        CHECK_EQ(got.v[0].vkind, IW_VERDICT_CLOSE);
        CHECK_EQ(got.v[0].vclose, rows[i].why);
        CHECK_EQ(got.v[0].wire_len, rows[i].frame_len);
        CHECK_EQ(got.v[1].type, IW_FRAME_LOST);
        CHECK_EQ(got.v[1].lost_why, rows[i].why);
        CHECK_EQ(got.v[1].lost_len, sizeof s - rows[i].frame_len);
        check_split_invariance("malformed rr", &cfg, s, sizeof s, &got);
        free(got.v);
        free(other.v);
    }
}

/* §6 / §8 code 2: a CRC error in FPDU k: that frame's verdict is 2/0/2 and,
 * since no valid CRC locates the next FPDU, everything after is LOST. */
IW_TEST(crc_error_loses_framing) {
    stream st = {0};
    for (int mk = 0; mk <= 1; mk++) {
        static const size_t ks[] = {0, 3, 7, 15};
        for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
            size_t k = ks[ki];
            st_init(&st, (mk ? IW_MPA_MARKERS : 0) | IW_MPA_CRC, true, 0);
            iw_mpa_rr e = mk_rr(IW_MPA_REQUEST, true, true, false, 1, false, 0);
            st_rr(&st, &e);
            st_mix(&st, 16, 0);
            const rec *bad = &st.exp.v[1 + k];
            st.b[bad->offset + 2] ^= 0x04; /* first ULPDU octet: DDP Control Rsvd bit */
            recs want = {0};
            for (size_t i = 0; i <= 1 + k; i++)
                *recs_push(&want) = st.exp.v[i];
            rec *b = &want.v[1 + k];
            b->vkind = IW_VERDICT_TERM;
            b->vterm = IW_TERM_LLP_MPA_CRC;
            b->crc = IW_CRC_BAD;
            b->ulpdu_hash = 0; /* recomputed below */
            uint64_t end = b->wire_off + b->wire_len;
            if (end < st.len) {
                rec *x = recs_push(&want);
                x->type = IW_FRAME_LOST;
                x->offset = x->wire_off = end;
                x->lost_len = x->wire_len = st.len - end;
                x->lost_why = IW_CLOSE_FRAMING_LOST;
            }
            iw_df_cfg cfg = mk_cfg(IW_DF_START_REQUEST, IW_DF_AUTO, IW_DF_AUTO, 0);
            recs got = {0};
            REQUIRE(run_whole(&cfg, st.b, st.len, &got));
            REQUIRE(got.n == want.n);
            want.v[1 + k].ulpdu_hash = got.v[1 + k].ulpdu_hash; /* the corrupted bytes */
            if (!recs_same("crc error", &want, &got)) {
                fprintf(stderr, "  (markers %d, k %zu)\n", mk, k);
                CHECK(0);
            }
            check_split_invariance("crc error", &cfg, st.b, st.len, &want);
            free(want.v);
            free(got.v);
        }
    }
    st_free(&st);
}

/* §8 code 3: a marker that disagrees with ULPDU_Length in an FPDU whose CRC
 * is valid: verdict 2/0/3 for that frame, framing continues. */
IW_TEST(marker_mismatch_continues) {
    stream st = {0};
    st_init(&st, IW_MPA_MARKERS | IW_MPA_CRC, true, 0);
    iw_mpa_rr e = mk_rr(IW_MPA_REPLY, true, true, false, 1, false, 0);
    st_rr(&st, &e);
    st_mix(&st, N_MIX, 0);
    /* find an FPDU with a marker after its header */
    size_t k = 0;
    for (size_t i = 1; i < st.exp.n; i++)
        if (st.exp.v[i].wire_len > 600) {
            k = i;
            break;
        }
    REQUIRE(k > 0);
    rec *x = &st.exp.v[k];
    /* the grid starts after the Reply (§4.3): markers at rr_len + 512*j;
     * take the first one after the FPDU's first octet */
    uint64_t rr_len = st.exp.v[0].wire_len;
    uint64_t m = rr_len + ((x->wire_off - rr_len) / 512 + 1) * 512;
    REQUIRE(m + 4 < x->wire_off + x->wire_len);
    uint8_t *fp = st.b + x->wire_off;
    size_t moff = (size_t)(m - x->wire_off);
    CHECK_EQ(fp[moff + 2] << 8 | fp[moff + 3], (int)(m - x->offset)); /* the right FPDUPTR */
    fp[moff + 3] ^= 0x10;
    /* recompute the CRC over the §4.4 coverage so only the marker is wrong */
    size_t crc_at = (size_t)x->wire_len - 4;
    iw_crc32c_put(fp + crc_at, ref_crc(fp, crc_at));
    x->crc_wire = iw_crc32c_get(fp + crc_at);
    x->vkind = IW_VERDICT_TERM;
    x->vterm = IW_TERM_LLP_MPA_MARKER;
    x->marker_ok = 0;
    iw_df_cfg cfg = mk_cfg(IW_DF_START_REPLY, IW_DF_AUTO, IW_DF_AUTO, 0);
    check_split_invariance("marker mismatch", &cfg, st.b, st.len, &st.exp);
    st_free(&st);
}

/* Input ending inside a frame: INCOMPLETE with the partial frame's first
 * wire octet and the octets held. */
IW_TEST(incomplete_tail) {
    stream st = {0};
    st_init(&st, IW_MPA_MARKERS | IW_MPA_CRC, true, 0);
    iw_mpa_rr e = mk_rr(IW_MPA_REQUEST, true, true, false, 2, true, 10);
    st_rr(&st, &e);
    st_mix(&st, 6, 0);
    /* cut points: inside the Request, right after it (no INCOMPLETE), inside
     * the leading marker, inside the header, mid-ULPDU, one short of a frame */
    size_t rr_len = (size_t)st.exp.v[0].wire_len;
    const rec *f1 = &st.exp.v[1], *f3 = &st.exp.v[3];
    size_t cuts[] = {1,
                     10,
                     19,
                     20,
                     rr_len - 1,
                     rr_len,
                     rr_len + 2,
                     rr_len + 5,
                     (size_t)(f1->wire_off + f1->wire_len - 1),
                     (size_t)(f3->wire_off + 9),
                     (size_t)(f3->wire_off + f3->wire_len / 2),
                     st.len - 1};
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
        size_t cut = cuts[c];
        recs want = {0};
        size_t i = 0;
        for (; i < st.exp.n && st.exp.v[i].wire_off + st.exp.v[i].wire_len <= cut; i++)
            *recs_push(&want) = st.exp.v[i];
        uint64_t start = i < st.exp.n ? st.exp.v[i].wire_off : st.len;
        if (cut > start) {
            rec *x = recs_push(&want);
            x->type = IW_FRAME_INCOMPLETE;
            x->wire_off = start;
            x->wire_len = cut - start;
        }
        iw_df_cfg cfg = mk_cfg(IW_DF_START_REQUEST, IW_DF_AUTO, IW_DF_AUTO, 0);
        recs got = {0};
        REQUIRE(run_whole(&cfg, st.b, cut, &got));
        REQUIRE(got.n == want.n);
        if (cut > start) {
            rec *g = &got.v[got.n - 1], *w = &want.v[want.n - 1];
            /* offset/pos of a partial frame: not compared (no header yet) */
            w->offset = g->offset;
            w->pos = g->pos;
            CHECK(g->offset >= g->wire_off && g->offset <= g->wire_off + 4);
            /* without a leading marker the offset is the frame start */
            if (i == 0 || st.exp.v[i].hdr_off == 0)
                CHECK_EQ(g->offset, g->wire_off);
            if (i > 0)
                CHECK_EQ(g->pos, st.exp.v[i].pos); /* grid position of the partial FPDU */
        }
        if (!recs_same("incomplete", &want, &got)) {
            fprintf(stderr, "  (cut %zu)\n", cut);
            CHECK(0);
        }
        check_split_invariance("incomplete", &cfg, st.b, cut, &want);
        free(want.v);
        free(got.v);
    }
    st_free(&st);
}

/* Nothing in, nothing out. */
IW_TEST(empty_input) {
    for (int start = IW_DF_START_REQUEST; start <= IW_DF_START_FPDU; start++) {
        iw_df_cfg cfg = mk_cfg((iw_df_start)start, IW_DF_AUTO, IW_DF_AUTO, 0);
        iw_deframer_init(g_df, &cfg);
        iw_frame fr;
        CHECK(!iw_deframer_finish(g_df, &fr));
        iw_deframer_init(g_df, &cfg);
        const uint8_t *p = iw_test_guard_place(&g_guard, "", 0);
        CHECK_EQ(iw_deframer_feed(g_df, p, 0, &fr), 0);
        CHECK_EQ(fr.type, IW_FRAME_NONE);
        CHECK(!iw_deframer_finish(g_df, &fr));
        CHECK(!iw_deframer_finish(g_df, &fr));
    }
}

/* Random garbage in every start mode and mode setting: no crash (ASan, guard
 * pages), frames tile the input, and whole == random chunks. Half the inputs
 * start with a valid Request/Reply header so the FPDU path sees garbage too. */
IW_TEST(garbage_fuzz) {
    uint64_t s = 0xDEADBEEF;
    uint8_t *buf = malloc(4096);
    recs a = {0}, b = {0};
    size_t mismatches = 0, frames = 0;
    for (int iter = 0; iter < 2000; iter++) {
        size_t len = (size_t)(iw_test_rand(&s) % 3001);
        for (size_t i = 0; i < len; i++)
            buf[i] = (uint8_t)(iw_test_rand(&s) >> 56);
        uint64_t r = iw_test_rand(&s);
        iw_df_start start = (iw_df_start)(IW_DF_START_REQUEST + r % 4);
        if ((r >> 8) & 1 && len >= 20) {
            memcpy(buf, (r >> 9) & 1 ? IW_MPA_KEY_REQ : IW_MPA_KEY_REP, 16);
            buf[17] = (uint8_t)(1 + ((r >> 10) & 1));
            buf[18] = 0;
            buf[19] = (uint8_t)((r >> 11) & 7);
            if ((r >> 14) & 1)
                buf[20 + buf[19]] = buf[21 + buf[19]] = 0; /* a marker-looking start */
        }
        if (start == IW_DF_START_FPDU && (r >> 15) & 1 && len >= 8) {
            buf[0] = 0, buf[1] = (uint8_t)(r >> 16 & 0x3F); /* short plausible ULPDU_Length */
        }
        iw_df_cfg cfg = mk_cfg(start, (iw_df_mode)((r >> 20) % 3), (iw_df_mode)((r >> 22) % 3),
                               (uint32_t)(r >> 32) & ~3u);
        if (!run_whole(&cfg, buf, len, &a)) {
            CHECK(0);
            break;
        }
        frames += a.n;
        bool ok = run_random(&cfg, buf, len, r, 1 + (size_t)(r >> 40) % 40, &b) &&
                  recs_same("garbage", &a, &b);
        if (ok && iter % 8 == 0)
            ok = run_bytes(&cfg, buf, len, &b) && recs_same("garbage bytes", &a, &b);
        if (!ok && mismatches++ < 3)
            fprintf(stderr, "  garbage iteration %d (start %d, len %zu)\n", iter, start, len);
    }
    CHECK_EQ(mismatches, 0);
    CHECK(frames > 2000);
    free(a.v);
    free(b.v);
    free(buf);
}

int main(int argc, char **argv) {
    g_df = malloc(sizeof *g_df);
    g_cuts = malloc(STREAM_CAP * sizeof *g_cuts);
    iw_test_guard_init(&g_guard, STREAM_CAP);
    static const iw_test_case cases[] = {
        IW_CASE(stream_v1_request_markers_crc),
        IW_CASE(stream_v2_request_pd_no_markers),
        IW_CASE(stream_v1_reply_crc_off),
        IW_CASE(stream_v2_reply_c0_valid_crc),
        IW_CASE(stream_big_frames),
        IW_CASE(every_single_cut),
        IW_CASE(mid_stream_every_pos),
        IW_CASE(bad_key),
        IW_CASE(wrong_frame_type),
        IW_CASE(reply_rejected),
        IW_CASE(malformed_rr),
        IW_CASE(crc_error_loses_framing),
        IW_CASE(marker_mismatch_continues),
        IW_CASE(incomplete_tail),
        IW_CASE(empty_input),
        IW_CASE(garbage_fuzz),
    };
    int rc = iw_test_run("deframe", cases, sizeof cases / sizeof cases[0], argc, argv);
    iw_test_guard_fini(&g_guard);
    free(g_cuts);
    free(g_df);
    return rc;
}
