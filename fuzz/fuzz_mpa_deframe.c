/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Streaming deframer, RFC 5044 §6 and §7.1.2 (iw_deframer).
 *
 * Input: [cfg][stream_pos: 4][nsplit][nsplit x chunk: 2][stream...]
 *   cfg bits 0-1: start (REQUEST, REPLY, RR, FPDU); bits 2-3: markers
 *   (AUTO, OFF, ON, ON); bits 4-5: crc (same). Chunk lengths are big-endian,
 *   1 + value % stream length, used in turn until the stream is fed; with
 *   nsplit = 0 the stream goes in one octet at a time.
 * Invariants:
 *  - the frames, and what finish() reports, are identical whether the stream
 *    arrives whole or in those chunks (the header promises it);
 *  - every call makes progress, and frames account for every input octet:
 *    frames tile the stream in order, then at most one trailing
 *    INCOMPLETE or LOST report covers the rest;
 *  - an FPDU's grid position advances by the wire length of the one before. */
#include <iwarp/mpa.h>

#include "fuzz.h"

/* Flat log of everything a frame says, with pointed-to bytes hashed, since
 * the pointers are only valid until the next call. */
typedef struct {
    uint64_t *v;
    size_t n, cap;
} frame_log;

static void log_put(frame_log *l, uint64_t x) {
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 256;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        FUZZ_CHECK(l->v != NULL);
    }
    l->v[l->n++] = x;
}

#define LOG_FIELDS 45 /* entries log_frame writes per frame */

static void log_frame(frame_log *l, const iw_frame *f) {
    const iw_mpa_rr *rr = &f->rr;
    const iw_mpa_fpdu *p = &f->fpdu;
    uint64_t rfc = f->verdict.rfc ? fuzz_hash(f->verdict.rfc, strlen(f->verdict.rfc)) : 0;
    /* clang-format off */
    uint64_t fields[] = {
        f->type, f->offset, f->wire_off, f->wire_len, f->pos, f->markers, f->crc_on,
        f->verdict.kind, f->verdict.term, f->verdict.close, rfc, f->lost_why, f->lost_len,
        rr->type, rr->m, rr->c, rr->r, rr->s, rr->res, rr->rev, rr->pd_len, rr->enhanced,
        rr->v2.p2p, rr->v2.rtr_send, rr->v2.rtr_write, rr->v2.rtr_read, rr->v2.ird, rr->v2.ord,
        rr->ulp_pd_len, rr->notes, rr->pd ? fuzz_hash(rr->pd, rr->pd_len) : 0,
        rr->ulp_pd ? fuzz_hash(rr->ulp_pd, rr->ulp_pd_len) : 0,
        p->ulpdu_len, p->ulpdu ? fuzz_hash(p->ulpdu, p->ulpdu_len) : 0, p->wire_len,
        p->hdr_off, p->pad_len, p->n_markers, p->crc_wire, p->crc_calc, p->crc, p->marker_ok,
        p->bad_marker_off, p->bad_marker_ptr, p->notes,
    };
    /* clang-format on */
    _Static_assert(sizeof fields / sizeof fields[0] == LOG_FIELDS, "LOG_FIELDS");
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        log_put(l, fields[i]);
}

/* Per-stream bookkeeping for the accounting and grid invariants. */
typedef struct {
    uint64_t off;   /* octets covered by frames so far */
    bool tail_seen; /* an INCOMPLETE or LOST report: nothing may follow */
    bool have_fpdu;
    uint32_t next_pos;
} tally;

static void check_frame(tally *t, const iw_df_cfg *cfg, const iw_frame *f) {
    FUZZ_CHECK(!t->tail_seen);
    switch (f->type) {
    case IW_FRAME_MPA_REQUEST:
    case IW_FRAME_MPA_REPLY:
        FUZZ_CHECK(f->wire_off == t->off && f->offset == t->off && f->wire_len > 0);
        t->off += f->wire_len;
        t->have_fpdu = false; /* §4.3: the grid starts after the MPA frame */
        t->next_pos = 0;
        break;
    case IW_FRAME_FPDU:
        FUZZ_CHECK(f->wire_off == t->off && f->wire_len == f->fpdu.wire_len);
        FUZZ_CHECK(f->offset == f->wire_off + f->fpdu.hdr_off);
        FUZZ_CHECK(f->pos == (t->have_fpdu || cfg->start != IW_DF_START_FPDU ? t->next_pos
                                                                             : cfg->stream_pos));
        FUZZ_CHECK(f->wire_len == iw_mpa_fpdu_wire_len(f->fpdu.ulpdu_len, f->pos, f->markers));
        t->off += f->wire_len;
        t->have_fpdu = true;
        t->next_pos = f->pos + (uint32_t)f->wire_len;
        break;
    case IW_FRAME_INCOMPLETE:
        FUZZ_CHECK(f->wire_off == t->off && f->wire_len > 0);
        t->off += f->wire_len;
        t->tail_seen = true;
        break;
    case IW_FRAME_LOST:
        FUZZ_CHECK(f->offset == t->off && f->lost_len == f->wire_len);
        t->off += f->lost_len;
        t->tail_seen = true;
        break;
    default:
        FUZZ_CHECK(!"unexpected frame type");
    }
}

/* A deframer holds a whole FPDU: keep both off the stack. */
static iw_deframer df_whole, df_split;

/* Feed in[0..len) in pieces: chunks == NULL means all at once. */
static void run(iw_deframer *d, const iw_df_cfg *cfg, const uint8_t *in, size_t len,
                const uint8_t *chunks, size_t nchunks, frame_log *l) {
    iw_frame f;
    tally t = {0};
    iw_deframer_init(d, cfg);
    size_t done = 0;
    for (size_t c = 0; done < len; c++) {
        size_t piece = len - done;
        if (chunks == NULL) {
            /* whole */
        } else if (nchunks == 0) {
            piece = 1;
        } else {
            const uint8_t *q = chunks + 2 * (c % nchunks);
            size_t want = 1 + (size_t)(q[0] << 8 | q[1]) % len;
            piece = want < piece ? want : piece;
        }
        /* Each piece is its own heap block, as a receive buffer would be. */
        uint8_t *buf = fuzz_dup(in + done, piece);
        size_t used = 0;
        while (used < piece) {
            iw_ssize r = iw_deframer_feed(d, buf + used, piece - used, &f);
            FUZZ_CHECK(r >= 0 && (size_t)r <= piece - used);
            FUZZ_CHECK(r > 0 || f.type != IW_FRAME_NONE); /* else it would spin */
            used += (size_t)r;
            if (f.type != IW_FRAME_NONE) {
                check_frame(&t, cfg, &f);
                log_frame(l, &f);
            }
        }
        free(buf);
        done += piece;
    }
    int tails = 0;
    while (iw_deframer_finish(d, &f)) {
        FUZZ_CHECK(++tails == 1);
        check_frame(&t, cfg, &f);
        log_frame(l, &f);
    }
    FUZZ_CHECK(t.off == len); /* every octet is in exactly one report */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const iw_df_mode modes[4] = {IW_DF_AUTO, IW_DF_OFF, IW_DF_ON, IW_DF_ON};
    fuzz_in in = {data, size};
    uint8_t c = fuzz_u8(&in);
    iw_df_cfg cfg = {
        .start = (iw_df_start)(IW_DF_START_REQUEST + (c & 3)),
        .markers = modes[c >> 2 & 3],
        .crc = modes[c >> 4 & 3],
        .stream_pos = fuzz_u32(&in),
    };
    size_t nchunks = fuzz_u8(&in) % 16;
    const uint8_t *chunks = in.p;
    for (size_t i = 0; i < 2 * nchunks; i++)
        fuzz_u8(&in);
    if (in.p - chunks < (ptrdiff_t)(2 * nchunks))
        return 0;

    frame_log whole = {0}, split = {0};
    run(&df_whole, &cfg, in.p, in.n, NULL, 0, &whole);
    run(&df_split, &cfg, in.p, in.n, chunks, nchunks, &split);
    /* Name the first difference: frame number and field index in log_frame. */
    for (size_t i = 0; i < whole.n && i < split.n; i++)
        if (whole.v[i] != split.v[i]) {
            fprintf(stderr, "frame %zu field %zu: whole %llu, split %llu\n", i / LOG_FIELDS,
                    i % LOG_FIELDS, (unsigned long long)whole.v[i], (unsigned long long)split.v[i]);
            break;
        }
    FUZZ_CHECK(whole.n == split.n);
    FUZZ_CHECK(whole.n == 0 || memcmp(whole.v, split.v, whole.n * sizeof *whole.v) == 0);
    free(whole.v);
    free(split.v);
    return 0;
}
