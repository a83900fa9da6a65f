/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwarp-decode's capture mode: see iwd_capture.h.
 *
 * Each TCP connection ("stream") has two directions. A direction moves
 * through these states as its in-order octets arrive from iwd_tcp:
 *
 *   D_WAIT    the first octets decide: an MPA key ("MPA ID R") starts the
 *             direction's deframer at the MPA frame, as the Request or the
 *             Reply side; otherwise, when the other side opened with a key
 *             and this side's start is known (its SYN was captured), the
 *             MPA frame that was due is missing and the deframer says so;
 *             otherwise D_PROBE.
 *   D_PROBE   iw_mpa_sync_probe (libiwarp) looks for an FPDU boundary at segment starts.
 *   D_DECODE  the deframer runs (iwd_dec); records are printed as frames end.
 *   D_RESYNC  after a TCP gap, or a bad CRC that leaves the next FPDU
 *             unlocated (RFC 5044 §6): iw_mpa_sync_probe looks for the next
 *             FPDU boundary in the direction's own reading (its markers, CRC
 *             use and grid phase), at segment starts and, with CRCs on, at
 *             every 4-aligned grid position (iw_mpa_sync_every4); a new
 *             deframer starts there. The Wireshark plugin does the same.
 *   D_HOLD    after an accepted MPA frame, until the other side's MPA frame
 *             gives this direction's markers and CRC (RFC 5044 §7.1.1).
 *   D_NOSYNC  no key and no FPDU boundary: octets are only counted.
 *   D_NODATA  the direction ended without payload.
 *   D_SKIP    the connection is not iWARP.
 *   D_DONE    finished; records and summary written.
 *
 * Stateful analysis (libiwarp's iw_shadow, one per connection) needs both
 * directions in capture order, which the per-direction decoders above do not
 * emit records in (a direction may wait for the other's MPA frame, or for
 * enough octets to find an FPDU boundary). So the file is read twice: the
 * first pass prints nothing and keeps what iw_shadow takes from each record
 * (iwd_shadow.h); when a connection ends, its inputs are sorted by the frame
 * that completed them and run through iw_shadow, and what the shadow says is
 * kept per (connection, direction, record number). The second pass decodes
 * identically and prints every record with its shadow result. A capture on a
 * pipe is spooled to a temporary file for this.
 *
 * A connection is iWARP as soon as one direction has a key or an FPDU
 * boundary (or --port names it); it is not when both directions are
 * D_NOSYNC/D_NODATA. Until then its TCP records are queued. Octets held
 * while waiting (D_WAIT, D_PROBE, D_HOLD) are bounded by WINDOW per
 * direction; when it fills, the decision is taken with what is there. */
#include "iwd_capture.h"

#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iwd_dec.h"
#include "iwd_pcap.h"
#include "iwd_shadow.h"
#include <iwarp/mpa_sync.h>
#include "iwd_tcp.h"

#define WINDOW (256u << 10)          /* octets held per direction while its start is decided */
#define CANDS_MAX 256                /* segment starts tried as FPDU boundaries */
#define PROBE_STEP 1024              /* probe again after this many more octets */
#define RS_CANDS IW_MPA_SYNC_CANDS   /* candidates while resynchronising */
#define QUEUE_MAX 256                /* TCP records held per direction while undecided */
#define KEY_SHAPE "MPA ID ??? Frame" /* RFC 5044 §7.1.1: both keys (iw_mpa_key_shaped) */
#define KEY_TYPE_AT 9                /* 'q' in "MPA ID Req Frame", 'p' in "MPA ID Rep Frame" */

enum { D_WAIT = 0, D_PROBE, D_DECODE, D_RESYNC, D_HOLD, D_NOSYNC, D_NODATA, D_SKIP, D_DONE };
enum { ROLE_NONE = 0, ROLE_REQ, ROLE_REP, ROLE_ANY };
enum { RR_UNKNOWN = 0, RR_SEEN, RR_NONE };
enum { C_UNDECIDED = 0, C_IWARP, C_NOT };

typedef struct fment {
    uint64_t off, frame;
    iwd_ts ts;
} fment;

typedef struct cconn cconn;
typedef struct capture capture;

/* First pass: one input for the shadow, in the order the records came. */
typedef struct shitem {
    uint64_t key; /* frame that completed it, made non-decreasing per direction */
    uint64_t id;  /* the shadow's frame id: the frame holding its last octet */
    uint64_t seq; /* emission order, to keep the sort stable */
    uint32_t rec; /* record number within its direction (LOST from a gap: none) */
    uint8_t side;
    bool is_rec;
    iwd_sh_in in;
} shitem;

/* What the shadow said on one record, kept for the second pass. */
typedef struct shres {
    uint32_t rec;
    iw_shadow_result r;
} shres;

typedef struct shlist {
    shres *v;
    size_t n, cap;
} shlist;

typedef struct cdir {
    cconn *c;
    iwd_tcp tcp;
    int state;
    bool tcp_ended;
    int end_cause;
    bool gap;
    iwd_tcp_ev gap_ev;
    /* octets held while deciding (from offset 0) or in D_HOLD (from pend_off) */
    uint8_t *pend;
    size_t pend_len, pend_cap;
    uint64_t pend_off;
    bool window_full;
    uint64_t *cands; /* segment starts, for iw_mpa_sync_probe */
    size_t ncands, cands_cap, cand_first, probed_len;
    fment *fm; /* which frame each run of octets came in */
    size_t fm_head, fm_len, fm_cap;
    bool have_first;
    uint64_t first_frame;
    iwd_ts first_ts;
    iwd_dec *dec;
    bool startup; /* began with an MPA key */
    int role;
    bool midstream;
    uint64_t sync_off;
    int rr_state;
    bool rr_ok, rr_m, rr_c, rr_r;
    int rr_type;
    uint64_t unsynced; /* D_NOSYNC: octets */
    iwd_tcp_ev *q;     /* TCP records held while the connection is undecided */
    size_t qn;
    char src[IWD_ADDR_STRLEN], dst[IWD_ADDR_STRLEN];
    const char *label;
    /* kept for the summary when the decoder is freed */
    bool decoded;
    iwd_counts counts;
    uint64_t dec_bytes;
    /* the shadow (see the top) */
    uint32_t nrec;      /* records emitted */
    uint64_t key_max;   /* largest key given so far */
    bool framed;        /* framing known (iwd_sh_in_from_rec) */
    size_t res_at;      /* second pass: next result of this direction */
    uint64_t fed_frame; /* frame of the octets last fed to the decoder */
    /* the grid, from the last FPDU: its end and that end's grid position */
    bool have_grid, grid_markers, grid_crc;
    uint64_t grid_end;
    uint32_t grid_pos;
    bool lost_pending; /* a bad CRC: framing is lost at lost_at */
    uint64_t lost_at;
    bool dropped; /* carried to the next decoder: a receiver terminated before */
    /* D_RESYNC */
    iw_mpa_sync_cfg rs_cfg;
    uint64_t rs_origin; /* offset of grid position 0 (mod 2^32) */
    bool rs_lost;       /* the old decoder lost framing; it reports the octets */
    uint64_t rs_start, rs_end;
    unsigned resyncs; /* framing found again */
} cdir;

struct cconn {
    capture *k;
    unsigned index;
    uint8_t af;
    uint8_t addr[2][16];
    uint16_t port[2];
    cdir d[2];  /* d[0]: from the first packet's source */
    int client; /* side that sent the SYN, -1 unknown */
    int state;
    bool forced, closing, finished;
    uint64_t first_frame;
    iwd_ts first_ts;
    uint64_t segments, octets;
    cconn *hnext, *next, *prev;
    shitem *sh; /* first pass: the shadow's inputs */
    size_t nsh, sh_cap;
};

struct capture {
    const iwd_capture_opts *o;
    iwd_out *out;
    int dlt;
    uint64_t frame;
    cconn **buckets;
    size_t nbuckets, nlive;
    cconn *head, *tail;
    unsigned next_index;
    uint8_t *scratch;
    uint64_t packets, tcp, other, fragments, malformed;
    uint64_t sctp;        /* SCTP packets: not decoded here (see the end of capture_pass) */
    unsigned dropped_not; /* not-iWARP streams already freed */
    uint64_t bad_frame;
    const char *bad_why;
    bool oom, internal_error, shadow_error;
    bool quiet;       /* first pass: nothing is printed */
    bool opened;      /* the file was a capture this tool reads */
    shlist (*res)[2]; /* per connection index and side: the shadow's results */
    size_t nres, res_cap;
    uint64_t sh_seq;
};

static void conn_advance(cconn *c);

static cdir *peer_of(cdir *d) { return d == &d->c->d[0] ? &d->c->d[1] : &d->c->d[0]; }

/* The side shown first: the client, the initiator, or the first sender. */
static int first_side(const cconn *c) {
    const char *l = c->d[1].label;
    return l && (l[0] == 'c' || l[0] == 'i') ? 1 : 0;
}

/* ---- buffers ---- */

static bool grow(void **p, size_t *cap, size_t want, size_t elem, capture *k) {
    if (want <= *cap)
        return true;
    size_t n = *cap ? *cap : 16;
    while (n < want)
        n *= 2;
    void *q = realloc(*p, n * elem);
    if (!q) {
        k->oom = true;
        return false;
    }
    *p = q;
    *cap = n;
    return true;
}

static void pend_append(cdir *d, uint64_t off, const uint8_t *p, size_t n) {
    if (!d->pend_len)
        d->pend_off = off;
    if (!grow((void **)&d->pend, &d->pend_cap, d->pend_len + n, 1, d->c->k))
        return;
    memcpy(d->pend + d->pend_len, p, n);
    d->pend_len += n;
}

static void pend_free(cdir *d) {
    free(d->pend);
    d->pend = NULL;
    d->pend_len = d->pend_cap = 0;
}

static void fm_add(cdir *d, uint64_t off, uint64_t frame, iwd_ts ts) {
    if (d->fm_len > d->fm_head && d->fm[d->fm_len - 1].frame == frame)
        return;
    if (d->fm_len == d->fm_cap && d->fm_head) {
        memmove(d->fm, d->fm + d->fm_head, (d->fm_len - d->fm_head) * sizeof *d->fm);
        d->fm_len -= d->fm_head;
        d->fm_head = 0;
    }
    if (!grow((void **)&d->fm, &d->fm_cap, d->fm_len + 1, sizeof *d->fm, d->c->k))
        return;
    d->fm[d->fm_len].off = off;
    d->fm[d->fm_len].frame = frame;
    d->fm[d->fm_len].ts = ts;
    d->fm_len++;
}

/* The run holding offset off; runs before it are dropped (records come in
 * offset order). */
static const fment *fm_find(cdir *d, uint64_t off) {
    if (d->fm_head == d->fm_len)
        return NULL;
    while (d->fm_head + 1 < d->fm_len && d->fm[d->fm_head + 1].off <= off)
        d->fm_head++;
    return &d->fm[d->fm_head];
}

/* Done with this deframer: its counts join the direction's. */
static void dir_dec_retire(cdir *d) {
    if (!d->dec)
        return;
    iwd_counts_add(&d->counts, &d->dec->counts);
    d->dec_bytes += d->dec->bytes;
    d->dropped = d->dec->dropped;
    iwd_dec_free(d->dec);
    free(d->dec);
    d->dec = NULL;
}

static void dir_release(cdir *d) {
    pend_free(d);
    free(d->cands);
    d->cands = NULL;
    d->ncands = d->cands_cap = 0;
    free(d->fm);
    d->fm = NULL;
    d->fm_len = d->fm_head = d->fm_cap = 0;
    free(d->q);
    d->q = NULL;
    d->qn = 0;
    dir_dec_retire(d);
}

/* ---- output ---- */

static void dir_tag(cdir *d, iwd_tag *t, uint64_t off, uint64_t frame, iwd_ts ts) {
    memset(t, 0, sizeof *t);
    t->stream = d->c->index;
    t->src = d->src;
    t->dst = d->dst;
    t->dir = d->label;
    t->frame = frame;
    t->ts_sec = ts.sec;
    t->ts_nsec = ts.nsec;
    t->have_seq = d->tcp.started;
    t->tcp_seq = iwd_tcp_seq_of(&d->tcp, off);
}

static void dir_event(cdir *d, const iwd_event *e, uint64_t frame, iwd_ts ts) {
    if (d->c->k->quiet)
        return;
    iwd_tag t;
    dir_tag(d, &t, e->offset, frame, ts);
    iwd_out_event(d->c->k->out, &t, e);
}

static const char *gap_reason(int cause) {
    switch (cause) {
    case IWD_GAP_ACKED:
        return "acknowledged by the peer but not in the capture";
    case IWD_GAP_RST:
        return "not in the capture when the direction was reset";
    case IWD_GAP_BUFFER_LIMIT:
        return "not in the capture; too much data waited behind the hole";
    case IWD_GAP_SNAPLEN:
        return "cut off by the capture's snap length";
    default:
        return "not in the capture";
    }
}

static void print_tcp_ev(cdir *d, const iwd_tcp_ev *ev) {
    if (d->c->k->quiet)
        return;
    iwd_event e;
    memset(&e, 0, sizeof e);
    e.offset = ev->off;
    e.len = ev->len;
    switch (ev->type) {
    case IWD_TCP_OOO:
        e.type = IWD_EV_TCP_OOO;
        e.expected = ev->expected;
        break;
    case IWD_TCP_CONFLICT:
        e.type = IWD_EV_TCP_CONFLICT;
        e.differ = ev->differ;
        break;
    case IWD_TCP_GAP:
        e.type = IWD_EV_TCP_GAP;
        e.held = ev->held;
        e.cause = iwd_gap_cause_str(ev->cause);
        e.reason = gap_reason(ev->cause);
        break;
    default:
        return;
    }
    dir_event(d, &e, ev->frame, ev->ts);
}

static int side_of(const cdir *d) { return d == &d->c->d[0] ? 0 : 1; }

/* First pass: keep what the shadow takes from a record (or a gap). */
static void sh_keep(cdir *d, const iwd_sh_in *in, uint64_t frame, uint64_t id, bool is_rec) {
    cconn *c = d->c;
    if (in->kind == IWD_SH_NONE)
        return;
    if (!grow((void **)&c->sh, &c->sh_cap, c->nsh + 1, sizeof *c->sh, c->k))
        return;
    if (frame > d->key_max)
        d->key_max = frame;
    shitem *it = &c->sh[c->nsh++];
    it->key = d->key_max; /* a direction's inputs stay in stream order */
    it->id = id;
    it->seq = c->k->sh_seq++;
    it->rec = d->nrec;
    it->side = (uint8_t)side_of(d);
    it->is_rec = is_rec;
    it->in = *in;
}

/* Second pass: the shadow's result for this direction's next record. */
static const iw_shadow_result *sh_result(cdir *d) {
    capture *k = d->c->k;
    if (d->c->index >= k->nres)
        return NULL;
    const shlist *l = &k->res[d->c->index][side_of(d)];
    while (d->res_at < l->n && l->v[d->res_at].rec < d->nrec)
        d->res_at++;
    return d->res_at < l->n && l->v[d->res_at].rec == d->nrec ? &l->v[d->res_at].r : NULL;
}

static void dir_emit(void *ctx, iwd_rec *r) {
    cdir *d = ctx;
    capture *k = d->c->k;
    const iw_frame *fr = r->fr;
    const fment *e = fm_find(d, fr->wire_off);
    iwd_tag t;
    dir_tag(d, &t, fr->wire_off, e ? e->frame : d->first_frame, e ? e->ts : d->first_ts);
    /* The frame that completed the record: where Wireshark shows it. */
    if (fr->type != IW_FRAME_LOST && fr->wire_len) {
        const fment *l = fm_find(d, fr->wire_off + fr->wire_len - 1);
        t.last_frame = l ? l->frame : t.frame;
    } else {
        t.last_frame = t.frame;
    }
    bool stateless_ok = r->verdict.kind == IW_VERDICT_OK;
    if (fr->type == IW_FRAME_FPDU) {
        d->have_grid = true;
        d->grid_markers = fr->markers;
        d->grid_crc = fr->crc_on;
        d->grid_end = fr->wire_off + fr->wire_len;
        d->grid_pos = fr->pos + (uint32_t)fr->wire_len;
        /* The deframer lost framing after it (RFC 5044 §6). */
        if (fr->fpdu.crc == IW_CRC_BAD) {
            d->lost_pending = true;
            d->lost_at = d->grid_end;
        }
    }
    if (k->quiet) {
        iwd_sh_in in;
        iwd_sh_in_from_rec(&in, r, &d->framed);
        /* Framing is lost when the octets that prove it arrive, not at
         * the frame where the unframed octets begin. */
        uint64_t key =
            fr->type == IW_FRAME_LOST && d->fed_frame > t.last_frame ? d->fed_frame : t.last_frame;
        sh_keep(d, &in, key, t.last_frame, true);
    } else {
        const iw_shadow_result *sr = sh_result(d);
        r->verdict = iwd_sh_verdict(&r->verdict, sr);
        r->shadow = sr;
        iwd_rec rec = *r;
        rec.tag = &t;
        iwd_out_record(k->out, &rec);
    }
    d->nrec++;
    if (d->rr_state == RR_UNKNOWN) {
        if (fr->type == IW_FRAME_MPA_REQUEST || fr->type == IW_FRAME_MPA_REPLY) {
            d->rr_state = RR_SEEN;
            d->rr_ok = stateless_ok; /* decoding does not depend on the shadow */
            d->rr_type = fr->rr.type;
            d->rr_m = fr->rr.m;
            d->rr_c = fr->rr.c;
            d->rr_r = fr->rr.r;
        } else {
            d->rr_state = RR_NONE;
        }
    }
}

/* ---- deciding ---- */

static void conn_claim(cconn *c) {
    if (c->state != C_UNDECIDED)
        return;
    c->state = C_IWARP;
    cdir *a = &c->d[0], *b = &c->d[1];
    if (c->client >= 0) {
        c->d[c->client].label = "c2s";
        c->d[!c->client].label = "s2c";
    } else if (a->role == ROLE_REQ || b->role == ROLE_REP) {
        a->label = "i2r";
        b->label = "r2i";
    } else if (b->role == ROLE_REQ || a->role == ROLE_REP) {
        b->label = "i2r";
        a->label = "r2i";
    } else {
        a->label = "a2b";
        b->label = "b2a";
    }
    cdir *first = &c->d[first_side(c)];
    if (!c->k->quiet)
        iwd_out_stream_header(c->k->out, c->index, first->label, first->src, first->dst,
                              peer_of(first)->label);
    /* Queued TCP records, in capture order. */
    size_t i = 0, j = 0;
    while (i < a->qn || j < b->qn) {
        if (j >= b->qn || (i < a->qn && a->q[i].frame <= b->q[j].frame))
            print_tcp_ev(a, &a->q[i++]);
        else
            print_tcp_ev(b, &b->q[j++]);
    }
    free(a->q);
    free(b->q);
    a->q = b->q = NULL;
    a->qn = b->qn = 0;
}

static void dir_tcp_record(cdir *d, const iwd_tcp_ev *ev) {
    if (d->c->state == C_IWARP) {
        print_tcp_ev(d, ev);
    } else if (d->c->state == C_UNDECIDED) {
        if (d->qn >= QUEUE_MAX)
            return; /* more are counted in the summary, not shown */
        if (!d->q) {
            d->q = malloc(QUEUE_MAX * sizeof *d->q);
            if (!d->q) {
                d->c->k->oom = true;
                return;
            }
        }
        d->q[d->qn++] = *ev;
    }
}

/* ---- resynchronising (D_RESYNC) ---- */

/* Octets [off, off+n) of a segment join the window; its candidates too. */
static void rs_add(cdir *d, uint64_t off, const uint8_t *p, size_t n, bool seg_start) {
    capture *k = d->c->k;
    if (!d->pend_len)
        d->pend_off = off;
    if (d->ncands + 1 >= RS_CANDS && d->cand_first) {
        /* Drop the candidates the synchroniser rejected for good. */
        memmove(d->cands, d->cands + d->cand_first, (d->ncands - d->cand_first) * sizeof *d->cands);
        d->ncands -= d->cand_first;
        d->cand_first = 0;
    }
    uint64_t rel = off - d->pend_off;
    bool every4 = iw_mpa_sync_every4(&d->rs_cfg);
    for (uint64_t at = rel; at < rel + n && d->ncands < RS_CANDS; at++) {
        uint32_t pos = (uint32_t)(d->pend_off + at - d->rs_origin);
        if (!(at == rel && seg_start) && !(every4 && (pos & 3u) == 0)) {
            if (!every4)
                break;
            continue;
        }
        if (!grow((void **)&d->cands, &d->cands_cap, d->ncands + 1, sizeof *d->cands, k))
            break;
        d->cands[d->ncands++] = at;
    }
    pend_append(d, off, p, n);
    d->rs_end = off + n;
}

/* Framing is gone from `at` on: a gap ended there, or a bad CRC left the
 * next FPDU unlocated (RFC 5044 §6). Look for the next FPDU boundary in the
 * direction's own reading, as the plugin does (classify_sync): its markers
 * (fixed for the connection, §7.1.1), CRCs on when they were on (else
 * either), and its grid phase. */
static void dir_resync_begin(cdir *d, uint64_t at, bool lost) {
    const iwd_capture_opts *o = d->c->k->o;
    d->state = D_RESYNC;
    d->rs_lost = lost;
    d->rs_start = d->rs_end = at;
    pend_free(d);
    d->ncands = d->cand_first = 0;
    d->probed_len = 0;
    d->window_full = false;
    memset(&d->rs_cfg, 0, sizeof d->rs_cfg);
    d->rs_cfg.markers = o->markers != IW_DF_AUTO ? o->markers
                        : !d->have_grid          ? IW_DF_AUTO
                        : d->grid_markers        ? IW_DF_ON
                                                 : IW_DF_OFF;
    d->rs_cfg.crc = o->crc != IW_DF_AUTO          ? o->crc
                    : d->have_grid && d->grid_crc ? IW_DF_ON
                                                  : IW_DF_AUTO;
    d->rs_cfg.have_pos = d->have_grid;
    d->rs_origin = d->grid_end - d->grid_pos;
}

/* Octets [rs_start, end) stay unframed: the old deframer's framing_lost
 * record says so, or (after a gap) an UNSYNCED event. */
static void dir_resync_report(cdir *d, uint64_t end, const char *why) {
    if (d->rs_lost) {
        iwd_dec_finish_at(d->dec, end);
        if (d->dec->internal_error)
            d->c->k->internal_error = true;
    } else if (end > d->rs_start) {
        iwd_event e;
        memset(&e, 0, sizeof e);
        e.type = IWD_EV_UNSYNCED;
        e.offset = d->rs_start;
        e.len = end - d->rs_start;
        e.reason = why;
        const fment *f = fm_find(d, d->rs_start);
        dir_event(d, &e, f ? f->frame : d->first_frame, f ? f->ts : d->first_ts);
    }
    dir_dec_retire(d);
}

static void dir_feed(cdir *d, const uint8_t *p, size_t n, uint64_t off) {
    size_t used = iwd_dec_feed(d->dec, p, n);
    if (d->dec->internal_error)
        d->c->k->internal_error = true;
    if (d->dec->paused) {
        d->state = D_HOLD;
        if (used < n)
            pend_append(d, off + used, p + used, n - used);
    } else if (d->lost_pending) {
        /* A bad CRC in these octets: the deframer only counts from its end
         * on, so the synchroniser takes them from there. */
        d->lost_pending = false;
        uint64_t at = d->lost_at;
        dir_resync_begin(d, at, true);
        if (at >= off && at < off + n)
            rs_add(d, at, p + (at - off), (size_t)(off + n - at), true);
    }
}

/* Feed what was held, from offset `from`. */
static void dir_replay(cdir *d, uint64_t from) {
    uint8_t *buf = d->pend;
    size_t len = d->pend_len;
    uint64_t off = d->pend_off;
    d->pend = NULL;
    d->pend_len = d->pend_cap = 0;
    if (!buf)
        return;
    if (from > off && from - off <= len)
        dir_feed(d, buf + (from - off), len - (size_t)(from - off), from);
    else if (from <= off)
        dir_feed(d, buf, len, off);
    free(buf);
}

static bool dir_start(cdir *d, iw_df_start start, iw_df_mode markers, iw_df_mode crc, uint32_t pos,
                      uint64_t from, bool pause) {
    capture *k = d->c->k;
    iw_df_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.start = start;
    cfg.markers = markers;
    cfg.crc = crc;
    cfg.stream_pos = pos;
    d->dec = calloc(1, sizeof *d->dec);
    if (!d->dec || iwd_dec_init(d->dec, &cfg, false, dir_emit, d) != 0) {
        free(d->dec);
        d->dec = NULL;
        k->oom = true;
        d->state = D_NOSYNC;
        d->unsynced = d->pend_len;
        pend_free(d);
        return false;
    }
    d->dec->base = from;
    d->dec->pause_after_rr = pause;
    d->dec->dropped = d->dropped; /* RFC 5041 §7.1: still after a Terminate */
    d->decoded = true;
    d->state = D_DECODE;
    free(d->cands);
    d->cands = NULL;
    d->ncands = d->cands_cap = 0;
    dir_replay(d, from);
    return true;
}

/* The synchroniser found the boundary: a new deframer from there. */
static void dir_resync_found(cdir *d, const iw_mpa_sync_res *res) {
    const iwd_capture_opts *o = d->c->k->o;
    uint64_t b = d->pend_off + res->off;
    dir_resync_report(d, b, "after a gap, before the next FPDU boundary found");
    d->resyncs++;
    iw_df_mode crc = o->crc != IW_DF_AUTO ? o->crc : (res->crc ? IW_DF_ON : IW_DF_OFF);
    dir_start(d, IW_DF_START_FPDU, res->markers ? IW_DF_ON : IW_DF_OFF, crc, res->pos, b, false);
}

/* No boundary in the window: its octets stay unframed, the window restarts. */
static void dir_resync_drop(cdir *d) {
    pend_free(d);
    d->ncands = d->cand_first = 0;
    d->probed_len = 0;
    d->window_full = false;
}

static iw_df_start role_start(int role) {
    return role == ROLE_REQ   ? IW_DF_START_REQUEST
           : role == ROLE_REP ? IW_DF_START_REPLY
                              : IW_DF_START_RR;
}

static int role_other(int role) {
    return role == ROLE_REQ ? ROLE_REP : role == ROLE_REP ? ROLE_REQ : ROLE_ANY;
}

static void dir_settle_rr(cdir *d) {
    if (d->rr_state == RR_UNKNOWN && d->state != D_WAIT && d->state != D_DECODE &&
        d->state != D_HOLD)
        d->rr_state = RR_NONE;
}

static void dir_print_gap(cdir *d) {
    if (d->gap && d->c->state == C_IWARP) {
        print_tcp_ev(d, &d->gap_ev);
        d->gap = false;
    }
}

static void dir_done(cdir *d) {
    if (d->gap && d->c->k->quiet) {
        /* Octets of this direction will never be seen: the shadow forgets
         * its sequence state (the plugin does so at the next FPDU). Also
         * when nothing of it was framed: the other side's MPA frame alone
         * starts Full Operation in the shadow, and a gap where this side's
         * frame and first FPDUs were (its Read Requests) must not leave the
         * shadow judging the other side's responses. */
        iwd_sh_in in;
        iwd_sh_in_lost(&in, true);
        sh_keep(d, &in, d->gap_ev.frame, d->gap_ev.frame, false);
    }
    dir_print_gap(d);
    dir_release(d);
    iwd_tcp_free(&d->tcp);
    d->state = D_DONE;
}

/* The n octets at p could still be the start of a key: the first
 * IW_MPA_KEY_LEN are what iw_mpa_key_shaped judges (the plugin's rule for a
 * startup frame too), "MPA ID ??? Frame" with anything in the middle, which
 * a receiver answers with a close when it is not its key (§7.1.2 rule 5). */
static bool key_prefix(const uint8_t *p, size_t n) {
    if (n >= IW_MPA_KEY_LEN)
        return iw_mpa_key_shaped(p, n);
    for (size_t i = 0; i < n; i++)
        if (KEY_SHAPE[i] != '?' && p[i] != (uint8_t)KEY_SHAPE[i])
            return false;
    return true;
}

/* Still waiting for its first octets, which may be an MPA key. */
static bool may_open_with_key(const cdir *d) {
    return d->state == D_WAIT && (!d->pend_len || key_prefix(d->pend, d->pend_len));
}

/* One step for a direction; true when its state changed. */
static bool dir_advance(cdir *d) {
    cconn *c = d->c;
    capture *k = c->k;
    const iwd_capture_opts *o = k->o;
    cdir *p = peer_of(d);
    bool final = d->tcp_ended || d->window_full || c->closing;
    bool pause = o->markers == IW_DF_AUTO || o->crc == IW_DF_AUTO;

    switch (d->state) {
    case D_WAIT: {
        size_t n = d->pend_len;
        bool key = n > 0 && key_prefix(d->pend, n);
        if (!final && (key ? n < IW_MPA_KEY_LEN : n == 0))
            return false; /* the key is not all here yet */
        if (n == 0) {
            d->state = D_NODATA;
            dir_settle_rr(d);
            return true;
        }
        if (key) {
            d->startup = true;
            if (p->role != ROLE_NONE)
                d->role = role_other(p->role); /* the first frame seen fixes both roles */
            else if (n > KEY_TYPE_AT && d->pend[KEY_TYPE_AT] == 'q')
                d->role = ROLE_REQ;
            else if (n > KEY_TYPE_AT && d->pend[KEY_TYPE_AT] == 'p')
                d->role = ROLE_REP;
            else
                d->role = ROLE_ANY;
            conn_claim(c);
            dir_start(d, role_start(d->role), o->markers, o->crc, 0, 0, pause);
            return true;
        }
        if (d->tcp.syn_seen && p->startup) {
            /* Its start is known and the other side opened with a key: the
             * MPA frame due here is missing (RFC 5044 §7.1.2 rule 5). */
            d->role = role_other(p->role);
            dir_start(d, role_start(d->role), o->markers, o->crc, 0, 0, pause);
            return true;
        }
        if (d->tcp.syn_seen && !final && may_open_with_key(p))
            return false; /* the other side may still open with a key */
        d->state = D_PROBE;
        dir_settle_rr(d);
        return true;
    }
    case D_PROBE: {
        if (final && !d->pend_len) {
            d->state = D_NODATA; /* only a gap: nothing after it */
            return true;
        }
        if (!final && d->pend_len < d->probed_len + PROBE_STEP)
            return false;
        d->probed_len = d->pend_len;
        iw_mpa_sync_cfg cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.markers = o->markers;
        cfg.crc = o->crc;
        cfg.have_pos = o->have_stream_off;
        cfg.pos0 = o->stream_off + (uint32_t)d->pend_off; /* pend_off: after a gap at the start */
        iw_mpa_sync_res res;
        iw_mpa_sync_status st = iw_mpa_sync_probe(d->pend, d->pend_len, final, d->cands, d->ncands,
                                                  &d->cand_first, &cfg, k->scratch, &res);
        if (st == IW_MPA_SYNC_MORE && !final)
            return false;
        if (st == IW_MPA_SYNC_FOUND) {
            conn_claim(c);
            d->midstream = true;
            d->sync_off = d->pend_off + res.off;
            if (res.off) {
                iwd_event e;
                memset(&e, 0, sizeof e);
                e.type = IWD_EV_UNSYNCED;
                e.offset = d->pend_off;
                e.len = res.off;
                e.reason = "before the first FPDU boundary found";
                dir_event(d, &e, d->first_frame, d->first_ts);
            }
            iw_df_mode crc = o->crc != IW_DF_AUTO ? o->crc : (res.crc ? IW_DF_ON : IW_DF_OFF);
            dir_start(d, IW_DF_START_FPDU, res.markers ? IW_DF_ON : IW_DF_OFF, crc, res.pos,
                      d->pend_off + res.off, false);
            return true;
        }
        if (c->forced) {
            /* --port: decode from the first octet, as for a file. */
            d->midstream = true;
            conn_claim(c);
            dir_start(d, IW_DF_START_FPDU, o->markers == IW_DF_ON ? IW_DF_ON : IW_DF_OFF, o->crc,
                      (o->have_stream_off ? o->stream_off : 0) + (uint32_t)d->pend_off, d->pend_off,
                      false);
            return true;
        }
        d->state = D_NOSYNC;
        d->unsynced = d->pend_len;
        pend_free(d);
        free(d->cands);
        d->cands = NULL;
        d->ncands = d->cands_cap = 0;
        return true;
    }
    case D_RESYNC: {
        bool end = d->tcp_ended || c->closing;
        bool fin = end || d->window_full;
        if (!fin && d->pend_len < d->probed_len + PROBE_STEP)
            return false;
        d->probed_len = d->pend_len;
        iw_mpa_sync_res res;
        iw_mpa_sync_status st = IW_MPA_SYNC_NONE;
        if (d->pend_len) {
            iw_mpa_sync_cfg cfg = d->rs_cfg;
            cfg.pos0 = (uint32_t)(d->pend_off - d->rs_origin);
            st = iw_mpa_sync_probe(d->pend, d->pend_len, fin, d->cands, d->ncands, &d->cand_first,
                                   &cfg, k->scratch, &res);
        }
        if (st == IW_MPA_SYNC_MORE && !fin)
            return false;
        if (st == IW_MPA_SYNC_FOUND) {
            dir_resync_found(d, &res);
            return true;
        }
        if (!end) {
            bool had = d->pend_len > 0;
            dir_resync_drop(d);
            return had;
        }
        dir_resync_report(d, d->rs_end, "after a gap, no FPDU boundary found");
        dir_done(d);
        return true;
    }
    case D_HOLD: {
        bool hold_final = d->window_full || c->closing;
        if (p->rr_state == RR_SEEN && p->rr_ok && p->rr_type != d->rr_type) {
            if (p->rr_type == IW_MPA_REPLY && p->rr_r) {
                iwd_dec_exit(d->dec); /* rejected: MPA exits (§7.1.2 rule 3) */
            } else {
                /* §7.1.1: the peer's M asks for markers in this direction;
                 * C in either frame turns CRCs on. */
                iw_df_mode m =
                    o->markers != IW_DF_AUTO ? o->markers : (p->rr_m ? IW_DF_ON : IW_DF_OFF);
                iw_df_mode crc =
                    o->crc != IW_DF_AUTO ? o->crc : (d->rr_c || p->rr_c ? IW_DF_ON : IW_DF_OFF);
                iwd_dec_full_operation(d->dec, m, crc);
            }
        } else if (p->rr_state != RR_UNKNOWN || hold_final) {
            iwd_dec_resume(d->dec); /* no usable frame from the peer: this side's rules */
        } else {
            return false;
        }
        d->state = D_DECODE;
        dir_replay(d, d->pend_off);
        return true;
    }
    case D_DECODE:
        if (!(d->tcp_ended || c->closing))
            return false;
        iwd_dec_finish(d->dec);
        if (d->dec->internal_error)
            k->internal_error = true;
        dir_done(d);
        return true;
    case D_NOSYNC:
        if (c->state == C_NOT) {
            d->state = D_SKIP;
            return true;
        }
        if (c->state != C_IWARP || !(d->tcp_ended || c->closing))
            return false;
        {
            iwd_event e;
            memset(&e, 0, sizeof e);
            e.type = IWD_EV_UNSYNCED;
            e.len = d->unsynced;
            e.reason =
                c->forced ? "no FPDU boundary found" : "no MPA startup and no FPDU boundary found";
            dir_event(d, &e, d->first_frame, d->first_ts);
        }
        dir_done(d);
        return true;
    case D_NODATA:
        if (c->state == C_UNDECIDED)
            return false;
        dir_done(d);
        return true;
    case D_SKIP:
        if (!(d->tcp_ended || c->closing))
            return false;
        d->gap = false;
        dir_done(d);
        return true;
    default:
        return false;
    }
}

static bool no_evidence(const cdir *d) { return d->state == D_NOSYNC || d->state == D_NODATA; }

static bool conn_decide(cconn *c) {
    if (c->state != C_UNDECIDED || c->forced || !no_evidence(&c->d[0]) || !no_evidence(&c->d[1]))
        return false;
    c->state = C_NOT;
    iwd_event e;
    memset(&e, 0, sizeof e);
    e.type = IWD_EV_NOT_IWARP;
    e.segments = c->segments;
    e.len = c->octets;
    e.reason = c->octets ? "no MPA startup and no FPDU boundary in either direction" : "no payload";
    iwd_tag t;
    memset(&t, 0, sizeof t);
    t.stream = c->index;
    t.src = c->d[0].src;
    t.dst = c->d[0].dst;
    t.frame = c->first_frame;
    t.ts_sec = c->first_ts.sec;
    t.ts_nsec = c->first_ts.nsec;
    if (!c->k->quiet)
        iwd_out_event(c->k->out, &t, &e);
    for (int s = 0; s < 2; s++) {
        dir_release(&c->d[s]);
        c->d[s].state = D_SKIP;
    }
    return true;
}

static void conn_advance(cconn *c) {
    for (int guard = 0; guard < 64; guard++) {
        bool changed = dir_advance(&c->d[0]);
        changed |= dir_advance(&c->d[1]);
        changed |= conn_decide(c);
        if (!changed)
            return;
    }
}

/* ---- TCP events ---- */

static void dir_data(cdir *d, uint64_t off, const uint8_t *p, size_t n, uint64_t frame, iwd_ts ts) {
    if (!d->have_first) {
        d->have_first = true;
        d->first_frame = frame;
        d->first_ts = ts;
    }
    for (int again = 0; again < 8; again++) {
        switch (d->state) {
        case D_WAIT:
        case D_PROBE:
        case D_HOLD:
        case D_RESYNC:
            if (d->pend_len + n > WINDOW) {
                if (!d->window_full) {
                    d->window_full = true; /* decide now with what is held */
                    conn_advance(d->c);
                    continue;
                }
                return; /* cannot happen: a full window always decides */
            }
            fm_add(d, off, frame, ts);
            if (d->state == D_RESYNC) {
                rs_add(d, off, p, n, true);
                return;
            }
            if (!d->pend_len)
                d->pend_off = off;
            if (d->state != D_HOLD && d->ncands < CANDS_MAX &&
                grow((void **)&d->cands, &d->cands_cap, d->ncands + 1, sizeof *d->cands, d->c->k))
                d->cands[d->ncands++] = off - d->pend_off; /* relative to pend[0] */
            pend_append(d, off, p, n);
            return;
        case D_DECODE:
            d->fed_frame = frame;
            if (!iwd_dec_lost(d->dec))
                fm_add(d, off, frame, ts);
            dir_feed(d, p, n, off);
            return;
        case D_NOSYNC:
            d->unsynced += n;
            return;
        default:
            return;
        }
    }
}

/* A TCP gap after this direction was framed: the shadow forgets this
 * side's sequence state (the plugin does so too), and framing is looked
 * for again after the gap. */
static void dir_gap_resync(cdir *d, const iwd_tcp_ev *ev) {
    if (d->c->k->quiet) {
        iwd_sh_in in;
        iwd_sh_in_lost(&in, d->framed);
        sh_keep(d, &in, ev->frame, ev->frame, false);
    }
    d->gap = true;
    d->gap_ev = *ev;
    dir_print_gap(d);
    d->gap = false;
    dir_resync_begin(d, ev->off + ev->len, false);
}

/* The same in D_DECODE: what was being assembled is incomplete. */
static void dir_gap_decode(cdir *d, const iwd_tcp_ev *ev) {
    iwd_dec_finish(d->dec);
    if (d->dec->internal_error)
        d->c->k->internal_error = true;
    dir_dec_retire(d);
    dir_gap_resync(d, ev);
}

static void dir_gap(cdir *d, const iwd_tcp_ev *ev) {
    if (d->state == D_WAIT && !d->pend_len) {
        /* Its first octets are missing (its MPA frame, say): what follows
         * is read mid-stream, as the plugin reads it, and the shadow must
         * not assume it saw what they held (its Read Requests). */
        if (d->c->k->quiet) {
            iwd_sh_in in;
            iwd_sh_in_lost(&in, true);
            sh_keep(d, &in, ev->frame, ev->frame, false);
        }
        dir_tcp_record(d, ev);
        d->state = D_PROBE;
        dir_settle_rr(d);
        return;
    }
    /* Shown when the direction ends, if it ends here. */
    d->gap = true;
    d->gap_ev = *ev;
    if (d->state == D_WAIT || d->state == D_PROBE || d->state == D_HOLD || d->state == D_RESYNC) {
        /* The octets held end here: decide with them. */
        d->window_full = true;
        conn_advance(d->c);
    }
    if (d->state == D_DECODE && d->dec && !iwd_dec_lost(d->dec)) {
        d->gap = false;
        dir_gap_decode(d, ev);
    } else if (d->state == D_RESYNC) {
        /* Nothing found before the gap: the old octets stay unframed. */
        d->gap = false;
        dir_resync_report(d, d->rs_end, "after a gap, no FPDU boundary found before the next gap");
        dir_gap_resync(d, ev);
    }
}

static void dir_tcp_cb(void *ctx, const iwd_tcp_ev *ev) {
    cdir *d = ctx;
    switch (ev->type) {
    case IWD_TCP_DATA:
        dir_data(d, ev->off, ev->data, ev->len, ev->frame, ev->ts);
        break;
    case IWD_TCP_OOO:
    case IWD_TCP_CONFLICT:
        dir_tcp_record(d, ev);
        break;
    case IWD_TCP_GAP:
        dir_gap(d, ev);
        break;
    case IWD_TCP_END:
        d->tcp_ended = true;
        d->end_cause = ev->cause;
        break;
    }
}

/* ---- connections ---- */

static int ep_cmp(const uint8_t *a, uint16_t pa, const uint8_t *b, uint16_t pb) {
    int r = memcmp(a, b, 16);
    if (r)
        return r;
    return pa < pb ? -1 : pa > pb;
}

static size_t conn_hash(uint8_t af, const uint8_t *a, uint16_t pa, const uint8_t *b, uint16_t pb) {
    if (ep_cmp(a, pa, b, pb) > 0) {
        const uint8_t *t = a;
        a = b;
        b = t;
        uint16_t tp = pa;
        pa = pb;
        pb = tp;
    }
    uint64_t h = 1469598103934665603ull ^ af;
    for (int i = 0; i < 16; i++)
        h = (h ^ a[i]) * 1099511628211ull;
    for (int i = 0; i < 16; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    h = (h ^ pa) * 1099511628211ull;
    h = (h ^ pb) * 1099511628211ull;
    return (size_t)(h ^ (h >> 29));
}

static cconn *conn_find(capture *k, const iwd_pkt *p, int *side) {
    if (!k->nbuckets)
        return NULL;
    size_t b = conn_hash(p->af, p->src, p->sport, p->dst, p->dport) & (k->nbuckets - 1);
    for (cconn *c = k->buckets[b]; c; c = c->hnext) {
        if (c->af != p->af)
            continue;
        for (int s = 0; s < 2; s++)
            if (c->port[s] == p->sport && c->port[!s] == p->dport &&
                memcmp(c->addr[s], p->src, 16) == 0 && memcmp(c->addr[!s], p->dst, 16) == 0) {
                *side = s;
                return c;
            }
    }
    return NULL;
}

static void conn_unhash(capture *k, cconn *c) {
    size_t b = conn_hash(c->af, c->addr[0], c->port[0], c->addr[1], c->port[1]) & (k->nbuckets - 1);
    for (cconn **pp = &k->buckets[b]; *pp; pp = &(*pp)->hnext)
        if (*pp == c) {
            *pp = c->hnext;
            k->nlive--;
            return;
        }
}

static bool conn_rehash(capture *k) {
    size_t n = k->nbuckets ? k->nbuckets * 2 : 1024;
    cconn **nb = calloc(n, sizeof *nb);
    if (!nb)
        return false;
    for (size_t i = 0; i < k->nbuckets; i++) {
        while (k->buckets[i]) {
            cconn *c = k->buckets[i];
            k->buckets[i] = c->hnext;
            size_t b = conn_hash(c->af, c->addr[0], c->port[0], c->addr[1], c->port[1]) & (n - 1);
            c->hnext = nb[b];
            nb[b] = c;
        }
    }
    free(k->buckets);
    k->buckets = nb;
    k->nbuckets = n;
    return true;
}

static cconn *conn_new(capture *k, const iwd_pkt *p, uint64_t frame, iwd_ts ts) {
    if (k->nlive + 1 > k->nbuckets && !conn_rehash(k)) {
        k->oom = true;
        return NULL;
    }
    cconn *c = calloc(1, sizeof *c);
    if (!c) {
        k->oom = true;
        return NULL;
    }
    c->k = k;
    c->index = k->next_index++;
    c->af = p->af;
    memcpy(c->addr[0], p->src, 16);
    memcpy(c->addr[1], p->dst, 16);
    c->port[0] = p->sport;
    c->port[1] = p->dport;
    c->client = -1;
    c->first_frame = frame;
    c->first_ts = ts;
    for (size_t i = 0; i < k->o->nports; i++)
        if (p->sport == k->o->ports[i] || p->dport == k->o->ports[i])
            c->forced = true;
    size_t ooo_cap = k->o->ooo_cap ? k->o->ooo_cap : IWD_TCP_OOO_CAP_DEFAULT;
    for (int s = 0; s < 2; s++) {
        cdir *d = &c->d[s];
        d->c = c;
        iwd_tcp_init(&d->tcp, ooo_cap, dir_tcp_cb, d);
        iwd_pkt_addr_str(d->src, c->af, c->addr[s], c->port[s]);
        iwd_pkt_addr_str(d->dst, c->af, c->addr[!s], c->port[!s]);
    }
    size_t b = conn_hash(c->af, c->addr[0], c->port[0], c->addr[1], c->port[1]) & (k->nbuckets - 1);
    c->hnext = k->buckets[b];
    k->buckets[b] = c;
    k->nlive++;
    c->prev = k->tail;
    if (k->tail)
        k->tail->next = c;
    else
        k->head = c;
    k->tail = c;
    return c;
}

/* A stream judged not iWARP whose directions have both ended: nothing more
 * will be printed for it, so it is freed (memory stays bounded however
 * many connections a capture holds). */
static void conn_drop_if_done(capture *k, cconn *c) {
    if (c->state != C_NOT || c->d[0].state != D_DONE || c->d[1].state != D_DONE)
        return;
    if (!c->finished)
        conn_unhash(k, c);
    if (c->prev)
        c->prev->next = c->next;
    else
        k->head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        k->tail = c->prev;
    k->dropped_not++;
    free(c->sh);
    free(c);
}

static int sh_cmp(const void *a, const void *b) {
    const shitem *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* First pass, a connection ended: its inputs through one iw_shadow, both
 * directions in the order the frames completing them were captured (a
 * direction's own inputs keep their order: keys never decrease within it). */
static void conn_run_shadow(cconn *c) {
    capture *k = c->k;
    if (c->nsh && grow((void **)&k->res, &k->res_cap, (size_t)c->index + 1, sizeof *k->res, k)) {
        while (k->nres <= c->index)
            memset(&k->res[k->nres++], 0, sizeof *k->res);
        iw_shadow *sh = malloc(sizeof *sh);
        if (!sh)
            k->oom = true;
        else
            iw_shadow_init(sh);
        qsort(c->sh, c->nsh, sizeof *c->sh, sh_cmp);
        for (size_t i = 0; sh && i < c->nsh; i++) {
            const shitem *it = &c->sh[i];
            iw_shadow_result res;
            memset(&res, 0, sizeof res);
            res.verdict = iw_verdict_ok();
            res.judged = true;
            if (iwd_sh_feed(sh, it->side, &it->in, it->id, &res) < 0) {
                k->shadow_error = true;
                continue;
            }
            if (!it->is_rec || it->in.kind == IWD_SH_LOST || !iwd_sh_says(&res))
                continue;
            shlist *l = &k->res[c->index][it->side];
            if (!grow((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v, k))
                break;
            l->v[l->n].rec = it->rec;
            l->v[l->n].r = res;
            l->n++;
        }
        free(sh);
    }
    free(c->sh);
    c->sh = NULL;
    c->nsh = c->sh_cap = 0;
}

/* End of a connection: the capture ended, or a new one reuses its ports. */
static void conn_finish(cconn *c) {
    if (c->finished)
        return;
    /* Each direction's last gaps first: a direction ends at its own END. */
    iwd_tcp_finish(&c->d[0].tcp);
    iwd_tcp_finish(&c->d[1].tcp);
    c->closing = true;
    conn_advance(c);
    for (int s = 0; s < 2; s++)
        if (c->d[s].state != D_DONE)
            dir_done(&c->d[s]);
    if (c->k->quiet)
        conn_run_shadow(c);
    c->finished = true;
}

static void on_packet(capture *k, const struct pcap_pkthdr *h, const uint8_t *data) {
    k->packets++;
    iwd_pkt pk;
    const char *why = NULL;
    iwd_pkt_kind kind = iwd_pkt_parse(k->dlt, data, h->caplen, h->len, &pk, &why);
    if (kind == IWD_PKT_OTHER) {
        k->other++;
        return;
    }
    if (kind == IWD_PKT_SCTP) { /* counted as "other" too, and named at the end */
        k->other++;
        k->sctp++;
        return;
    }
    if (kind == IWD_PKT_FRAGMENT) {
        k->fragments++;
        return;
    }
    if (kind == IWD_PKT_MALFORMED) {
        if (!k->malformed++) {
            k->bad_frame = k->frame;
            k->bad_why = why;
        }
        return;
    }
    k->tcp++;
    iwd_ts ts = {(int64_t)h->ts.tv_sec, (uint32_t)h->ts.tv_usec}; /* nanoseconds: see open */
    bool syn = pk.flags & IWD_TCP_SYN, ack = pk.flags & IWD_TCP_ACK;
    int s = 0;
    cconn *c = conn_find(k, &pk, &s);
    if (c && syn && !ack) {
        /* A new SYN on these ports: a new connection unless it repeats the
         * one that opened this one. */
        cdir *d = &c->d[s];
        bool same = d->tcp.syn_seen && d->tcp.base_seq == pk.seq + 1;
        if (!same && (d->tcp.started || c->d[!s].tcp.started)) {
            conn_unhash(k, c);
            conn_finish(c);
            conn_drop_if_done(k, c);
            c = NULL;
        }
    }
    if (!c && !syn && !pk.len) {
        /* A bare ACK, FIN or RST opens no stream (say, the last ACK of one
         * that was closed and freed). */
        return;
    }
    if (!c) {
        c = conn_new(k, &pk, k->frame, ts);
        if (!c)
            return;
        s = 0;
    }
    if (syn && c->client < 0)
        c->client = ack ? !s : s;
    if (c->forced)
        conn_claim(c); /* --port: decoded whatever it holds */
    c->segments += pk.caplen ? 1 : 0;
    c->octets += pk.caplen;
    iwd_tcp_seg sg;
    memset(&sg, 0, sizeof sg);
    sg.seq = pk.seq;
    sg.syn = syn;
    sg.fin = pk.flags & IWD_TCP_FIN;
    sg.rst = pk.flags & IWD_TCP_RST;
    sg.data = pk.payload;
    sg.len = pk.caplen;
    sg.wire_len = pk.len;
    sg.frame = k->frame;
    sg.ts = ts;
    iwd_tcp_segment(&c->d[s].tcp, &sg);
    if (ack)
        iwd_tcp_peer_ack(&c->d[!s].tcp, pk.ack);
    conn_advance(c);
    /* First pass: once both directions are done, every record of the
     * connection is in; its shadow runs now, so memory follows the open
     * connections, not the capture. */
    if (k->quiet && c->nsh && c->d[0].state == D_DONE && c->d[1].state == D_DONE)
        conn_run_shadow(c);
    conn_drop_if_done(k, c);
}

/* ---- summaries (text) ---- */

static const char *how_str(const cdir *d, char *buf, size_t len) {
    if (!d->decoded)
        return d->unsynced ? "not decoded: no FPDU boundary found" : "no payload";
    if (d->midstream) {
        snprintf(buf, len, "decoded mid-stream from offset %" PRIu64, d->sync_off);
        return buf;
    }
    switch (d->role) {
    case ROLE_REQ:
        return "decoded from the start as the MPA Request side";
    case ROLE_REP:
        return "decoded from the start as the MPA Reply side";
    default:
        return "decoded from the start (MPA Request or Reply)";
    }
}

static const char *end_str(const cdir *d) {
    if (!d->tcp_ended)
        return "the end of the capture";
    switch (d->end_cause) {
    case IWD_END_FIN:
        return "FIN";
    case IWD_END_RST:
        return "RST";
    default:
        return "the end of the capture";
    }
}

static void dir_summary(capture *k, cdir *d) {
    FILE *f = k->out->f;
    if (!d->decoded && !d->tcp.stats.octets && !d->tcp.stats.segments)
        return;
    const iwd_counts *c = &d->counts;
    char how[64];
    fprintf(f, "-- stream %u %s: ", d->c->index, d->label ? d->label : "-");
    if (d->decoded)
        fprintf(f,
                "frames %" PRIu64 ": ok %" PRIu64 ", terminate %" PRIu64 ", close %" PRIu64
                ", after terminate %" PRIu64 "; framing lost %" PRIu64 ", incomplete %" PRIu64 "; ",
                c->frames, c->ok, c->term, c->close, c->after_term, c->lost, c->incomplete);
    fputs(how_str(d, how, sizeof how), f);
    if (c->fpdus)
        fprintf(f, ", FPDUs with markers %s, CRC %s", c->markers ? "on" : "off",
                c->crc ? "on" : "off");
    if (d->resyncs)
        fprintf(f, "; framing found again %u time%s after a gap or a bad CRC", d->resyncs,
                d->resyncs == 1 ? "" : "s");
    fputc('\n', f);
    const iwd_tcp_stats *t = &d->tcp.stats;
    fprintf(f,
            "--   tcp: octets %" PRIu64 ", segments %" PRIu64 ", out of order %" PRIu64
            ", retransmitted octets %" PRIu64 ", conflicts %" PRIu64,
            t->octets, t->segments, t->ooo, t->retrans, t->conflicts);
    if (t->gaps)
        fprintf(f, ", gaps %" PRIu64 " (%" PRIu64 " octets missing)", t->gaps, t->missing);
    fprintf(f, "; ended by %s\n", end_str(d));
}

static void capture_summary(capture *k) {
    if (k->out->json)
        return;
    iwd_counts all;
    memset(&all, 0, sizeof all);
    unsigned streams = k->dropped_not, iwarp = 0;
    for (cconn *c = k->head; c; c = c->next) {
        streams++;
        if (c->state != C_IWARP)
            continue;
        iwarp++;
        for (int i = 0; i < 2; i++) {
            cdir *d = &c->d[i ? !first_side(c) : first_side(c)];
            dir_summary(k, d);
            iwd_counts_add(&all, &d->counts);
        }
    }
    fprintf(
        k->out->f,
        "-- capture: packets %" PRIu64 ": TCP %" PRIu64 ", other %" PRIu64 ", IP fragments %" PRIu64
        ", malformed %" PRIu64 "; TCP streams %u: iWARP %u, not iWARP %u\n",
        k->packets, k->tcp, k->other, k->fragments, k->malformed, streams, iwarp, streams - iwarp);
    fprintf(k->out->f,
            "-- frames %" PRIu64 ": ok %" PRIu64 ", terminate %" PRIu64 ", close %" PRIu64
            ", after terminate %" PRIu64 "; framing lost %" PRIu64 ", incomplete %" PRIu64 "\n",
            all.frames, all.ok, all.term, all.close, all.after_term, all.lost, all.incomplete);
}

/* ---- the file ---- */

/* One pass over the capture in f (closed by libpcap). k holds the options,
 * the output and, for the second pass, the first pass's results. Returns 0,
 * 1 (a verdict other than ok) or 2; messages only when not quiet, except
 * when the file cannot be opened at all. */
static int capture_pass(capture *k, FILE *f, const char *name) {
    char errbuf[PCAP_ERRBUF_SIZE];
    errbuf[0] = '\0';
    pcap_t *pc = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO, errbuf);
    if (!pc) {
        fprintf(stderr, "iwarp-decode: %s: %s\n", name, errbuf[0] ? errbuf : "not a capture file");
        fclose(f);
        return 2;
    }
    k->dlt = pcap_datalink(pc);
    int rc = 0;
    if (!iwd_pkt_dlt_supported(k->dlt)) {
        const char *dn = pcap_datalink_val_to_name(k->dlt);
        fprintf(stderr, "iwarp-decode: %s: link type %d (%s) is not supported\n", name, k->dlt,
                dn ? dn : "unknown");
        pcap_close(pc);
        return 2;
    }
    k->scratch = malloc(IW_MPA_SYNC_SCRATCH);
    if (!k->scratch || !conn_rehash(k)) {
        fprintf(stderr, "iwarp-decode: out of memory\n");
        free(k->scratch);
        free(k->buckets);
        pcap_close(pc);
        return 2;
    }
    k->opened = true;
    const char *read_err = NULL;
    char errcopy[PCAP_ERRBUF_SIZE + 64];
    for (;;) {
        struct pcap_pkthdr *h;
        const u_char *data;
        int r = pcap_next_ex(pc, &h, &data);
        if (r == PCAP_ERROR_BREAK)
            break;
        if (r < 0) {
            snprintf(errcopy, sizeof errcopy, "%s (after frame %" PRIu64 ")", pcap_geterr(pc),
                     k->frame);
            read_err = errcopy;
            break;
        }
        if (r == 0)
            continue;
        k->frame++;
        on_packet(k, h, data);
        if (k->oom)
            break;
    }
    for (cconn *c = k->head; c; c = c->next)
        conn_finish(c);
    if (!k->quiet)
        capture_summary(k);
    for (cconn *c = k->head; c; c = c->next) {
        if (c->d[0].counts.term || c->d[0].counts.close || c->d[1].counts.term ||
            c->d[1].counts.close)
            rc = 1;
    }
    if (k->sctp && !k->quiet)
        fprintf(stderr,
                "iwarp-decode: %s: %" PRIu64 " SCTP packets skipped: this tool decodes iWARP over "
                "TCP (MPA); DDP over SCTP (RFC 5043) is decoded by the Wireshark plugin "
                "(iwk_sctp)\n",
                name, k->sctp);
    if (k->malformed && !k->quiet)
        fprintf(stderr,
                "iwarp-decode: %s: %" PRIu64 " malformed packets skipped (the first, frame %" PRIu64
                ": %s)\n",
                name, k->malformed, k->bad_frame, k->bad_why ? k->bad_why : "?");
    if (read_err) {
        if (!k->quiet)
            fprintf(stderr, "iwarp-decode: %s: %s\n", name, read_err);
        rc = 2;
    }
    if (k->oom) {
        fprintf(stderr, "iwarp-decode: out of memory\n");
        rc = 2;
    }
    if (k->internal_error && !k->quiet) {
        fprintf(stderr, "iwarp-decode: internal error: the deframer broke its contract\n");
        rc = 2;
    }
    if (k->shadow_error) {
        fprintf(stderr, "iwarp-decode: internal error: iw_shadow refused an input\n");
        rc = 2;
    }
    while (k->head) {
        cconn *c = k->head;
        k->head = c->next;
        free(c->sh);
        free(c);
    }
    free(k->buckets);
    free(k->scratch);
    pcap_close(pc);
    return rc;
}

/* A second stream on the same capture for the first pass, and where the
 * capture starts. A capture that cannot be read twice (a pipe, a cookie
 * stream) is first copied to a temporary file, which *f becomes. */
static FILE *capture_twin(FILE **f, long *start, const char *name) {
    long at = ftell(*f);
    int fd = fileno(*f);
    if (at < 0 || fd < 0 || lseek(fd, 0, SEEK_CUR) < 0) {
        FILE *t = tmpfile();
        char *buf = malloc(1u << 16);
        size_t n;
        bool bad = !t || !buf;
        while (!bad && (n = fread(buf, 1, 1u << 16, *f)) > 0)
            bad = fwrite(buf, 1, n, t) != n;
        bad = bad || ferror(*f) || fflush(t) != 0;
        free(buf);
        if (bad) {
            fprintf(stderr, "iwarp-decode: %s: cannot spool the capture to a temporary file\n",
                    name);
            if (t)
                fclose(t);
            return NULL;
        }
        fclose(*f);
        *f = t;
        rewind(t);
        at = 0;
        fd = fileno(t);
    }
    int fd2 = dup(fd);
    FILE *g = fd2 >= 0 ? fdopen(fd2, "rb") : NULL;
    if (!g) {
        if (fd2 >= 0)
            close(fd2);
        fprintf(stderr, "iwarp-decode: %s: cannot read the capture twice\n", name);
        return NULL;
    }
    /* dup shares the file offset: each pass seeks to the start itself. */
    if (fseek(g, at, SEEK_SET) != 0) {
        fclose(g);
        fprintf(stderr, "iwarp-decode: %s: cannot seek in the capture\n", name);
        return NULL;
    }
    *start = at;
    return g;
}

int iwd_capture_run(FILE *f, const char *name, const iwd_capture_opts *opts, iwd_out *out) {
    long start = 0;
    FILE *g = capture_twin(&f, &start, name);
    if (!g) {
        fclose(f);
        return 2;
    }
    capture k;
    memset(&k, 0, sizeof k);
    k.o = opts;
    k.out = out;
    k.quiet = true;
    int rc = capture_pass(&k, g, name);
    if (!k.opened) {
        /* Not a capture this tool reads (said on stderr): no second pass. */
        fclose(f);
    } else if (fseek(f, start, SEEK_SET) != 0) {
        fprintf(stderr, "iwarp-decode: %s: cannot seek in the capture\n", name);
        fclose(f);
        rc = 2;
    } else {
        capture k2;
        memset(&k2, 0, sizeof k2);
        k2.o = opts;
        k2.out = out;
        k2.res = k.res;
        k2.nres = k.nres;
        rc = capture_pass(&k2, f, name);
    }
    for (size_t i = 0; i < k.nres; i++)
        for (int s = 0; s < 2; s++)
            free(k.res[i][s].v);
    free(k.res);
    return rc;
}
