/* SPDX-License-Identifier: GPL-2.0-or-later */
/* TCP reassembly for one direction: see iwd_tcp.h.
 *
 * Octets are placed by offset. In-order octets are delivered straight from
 * the caller's segment; octets ahead of a hole are copied into a sorted list
 * of non-overlapping nodes and delivered when the hole fills. When copies of
 * the same octets overlap, the copy received first wins: a later copy is
 * compared with it (the held node, or the history ring of delivered octets)
 * and only its new octets are kept. */
#include "iwd_tcp.h"

#include <stdlib.h>
#include <string.h>

#define NODE_OVERHEAD 64 /* counted against the cap per held node */
#define HIST_MIN 4096u

struct iwd_tcp_node {
    iwd_tcp_node *next;
    uint64_t off;
    size_t len;
    uint64_t frame;
    iwd_ts ts;
    uint8_t data[];
};

/* Differences found while comparing one segment with earlier copies. */
typedef struct diff_acc {
    bool any;
    uint64_t first, last;
    size_t count;
} diff_acc;

const char *iwd_gap_cause_str(int cause) {
    switch (cause) {
    case IWD_GAP_CAPTURE_END:
        return "capture_end";
    case IWD_GAP_ACKED:
        return "acked";
    case IWD_GAP_RST:
        return "rst";
    case IWD_GAP_BUFFER_LIMIT:
        return "buffer_limit";
    case IWD_GAP_SNAPLEN:
        return "snaplen";
    default:
        return "unknown";
    }
}

const char *iwd_end_cause_str(int cause) {
    switch (cause) {
    case IWD_END_FIN:
        return "fin";
    case IWD_END_RST:
        return "rst";
    case IWD_END_CAPTURE:
        return "capture_end";
    default:
        return "unknown";
    }
}

void iwd_tcp_init(iwd_tcp *t, size_t ooo_cap, iwd_tcp_cb cb, void *ctx) {
    memset(t, 0, sizeof *t);
    t->_cb = cb;
    t->_ctx = ctx;
    t->_cap = ooo_cap;
}

static void tcp_free_ooo(iwd_tcp *t) {
    while (t->_ooo) {
        iwd_tcp_node *n = t->_ooo;
        t->_ooo = n->next;
        free(n);
    }
    t->_ooo_bytes = 0;
    t->_ooo_octets = 0;
}

void iwd_tcp_free(iwd_tcp *t) {
    tcp_free_ooo(t);
    free(t->_hist);
    t->_hist = NULL;
    t->_hist_cap = t->_hist_len = 0;
}

static void tcp_emit(iwd_tcp *t, iwd_tcp_ev *ev) {
    ev->seq = iwd_tcp_seq_of(t, ev->off);
    t->_cb(t->_ctx, ev);
}

/* Offset of a sequence number: within 2^31 of the next expected octet. */
static int64_t tcp_off(const iwd_tcp *t, uint32_t seq) {
    int32_t d = (int32_t)(seq - iwd_tcp_seq_of(t, t->nxt));
    return (int64_t)t->nxt + d;
}

/* ---- history of delivered octets: the octet at offset o is at o & (cap-1) ---- */

static void hist_grow(iwd_tcp *t, size_t want) {
    size_t cap = t->_hist_cap ? t->_hist_cap : HIST_MIN;
    while (cap < want && cap < IWD_TCP_HISTORY_MAX)
        cap *= 2;
    if (cap <= t->_hist_cap)
        return;
    uint8_t *h = malloc(cap);
    if (!h)
        return; /* keep the smaller history: fewer octets can be compared */
    for (size_t i = 0; i < t->_hist_len; i++) {
        uint64_t o = t->nxt - t->_hist_len + i;
        h[o & (cap - 1)] = t->_hist[o & (t->_hist_cap - 1)];
    }
    free(t->_hist);
    t->_hist = h;
    t->_hist_cap = cap;
}

/* Before nxt advances past p[0..n). */
static void hist_push(iwd_tcp *t, const uint8_t *p, size_t n) {
    if (t->_hist_cap < IWD_TCP_HISTORY_MAX && t->_hist_len + n > t->_hist_cap)
        hist_grow(t, t->_hist_len + n);
    size_t cap = t->_hist_cap;
    if (!cap)
        return;
    uint64_t o = t->nxt;
    if (n > cap) {
        o += n - cap;
        p += n - cap;
        n = cap;
    }
    size_t at = (size_t)(o & (cap - 1));
    size_t first = cap - at < n ? cap - at : n;
    memcpy(t->_hist + at, p, first);
    memcpy(t->_hist, p + first, n - first);
    t->_hist_len = t->_hist_len + n > cap ? cap : t->_hist_len + n;
}

static void acc_diff(diff_acc *a, uint64_t off, const uint8_t *x, const uint8_t *y, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (x[i] == y[i])
            continue;
        if (!a->any)
            a->first = off + i;
        a->any = true;
        a->last = off + i;
        a->count++;
    }
}

static void acc_emit(iwd_tcp *t, diff_acc *a, uint64_t frame, iwd_ts ts) {
    if (!a->any)
        return;
    iwd_tcp_ev ev = {0};
    ev.type = IWD_TCP_CONFLICT;
    ev.off = a->first;
    ev.len = (size_t)(a->last - a->first + 1);
    ev.differ = a->count;
    ev.frame = frame;
    ev.ts = ts;
    t->stats.conflicts++;
    tcp_emit(t, &ev);
    memset(a, 0, sizeof *a);
}

/* Octets [off, off+n) with off+n <= nxt, received again. */
static void hist_compare(iwd_tcp *t, uint64_t off, const uint8_t *p, size_t n, diff_acc *a) {
    uint64_t oldest = t->nxt - t->_hist_len;
    if (off < oldest) {
        size_t k = oldest - off < n ? (size_t)(oldest - off) : n;
        t->stats.unchecked += k;
        off += k;
        p += k;
        n -= k;
    }
    size_t mask = t->_hist_cap - 1;
    for (size_t i = 0; i < n; i++) {
        uint8_t h = t->_hist[(off + i) & mask];
        acc_diff(a, off + i, &h, p + i, 1);
    }
}

/* ---- delivery and ending ---- */

static void tcp_deliver(iwd_tcp *t, const uint8_t *p, size_t n, uint64_t frame, iwd_ts ts) {
    iwd_tcp_ev ev = {0};
    ev.type = IWD_TCP_DATA;
    ev.off = t->nxt;
    ev.data = p;
    ev.len = n;
    ev.frame = frame;
    ev.ts = ts;
    hist_push(t, p, n);
    t->nxt += n;
    t->stats.octets += n;
    tcp_emit(t, &ev);
}

static void tcp_end(iwd_tcp *t, int cause, uint64_t frame, iwd_ts ts) {
    if (t->ended)
        return;
    t->ended = true;
    tcp_free_ooo(t);
    iwd_tcp_ev ev = {0};
    ev.type = IWD_TCP_END;
    ev.off = t->nxt;
    ev.cause = cause;
    ev.frame = frame;
    ev.ts = ts;
    tcp_emit(t, &ev);
}

static void tcp_drain(iwd_tcp *t);
static void tcp_check_fin(iwd_tcp *t);

static bool tcp_hole_open(const iwd_tcp *t) {
    return t->_ooo || t->_hi > t->nxt || (t->_fin && t->_fin_off > t->nxt);
}

/* The octets at nxt will never arrive: report them, then go on from the
 * end of the hole (at most `bound`) with what is held past it, as a reader
 * of the capture would: a decoder can resynchronise there. */
static void tcp_gap(iwd_tcp *t, int cause, uint64_t bound) {
    iwd_tcp_ev ev = {0};
    uint64_t end;
    ev.type = IWD_TCP_GAP;
    ev.off = t->nxt;
    if (t->_ooo) {
        end = t->_ooo->off;
        ev.frame = t->_ooo->frame;
        ev.ts = t->_ooo->ts;
    } else {
        end = t->_hi;
        if (t->_fin && t->_fin_off > end)
            end = t->_fin_off;
        if (t->_trunc && t->_trunc_off == t->nxt) {
            ev.frame = t->_trunc_frame;
            ev.ts = t->_trunc_ts;
        } else {
            ev.frame = t->_fin_frame;
            ev.ts = t->_fin_ts;
        }
    }
    if (end > bound)
        end = bound;
    if (t->_trunc && t->_trunc_off == t->nxt)
        cause = IWD_GAP_SNAPLEN;
    ev.len = (size_t)(end > t->nxt ? end - t->nxt : 0);
    ev.held = t->_ooo_octets;
    ev.cause = cause;
    t->stats.gaps++;
    t->stats.missing += ev.len;
    tcp_emit(t, &ev);
    t->nxt = end > t->nxt ? end : t->nxt;
    t->_hist_len = 0; /* history is contiguous up to nxt: it restarts here */
    tcp_drain(t);
    tcp_check_fin(t);
}

/* Every hole still open is final (end of capture, RST). */
static void tcp_close_holes(iwd_tcp *t, int cause) {
    while (!t->ended && tcp_hole_open(t))
        tcp_gap(t, cause, UINT64_MAX);
}

static void tcp_check_fin(iwd_tcp *t) {
    if (!t->ended && t->_fin && t->nxt >= t->_fin_off)
        tcp_end(t, IWD_END_FIN, t->_fin_frame, t->_fin_ts);
}

static void tcp_drain(iwd_tcp *t) {
    while (!t->ended && t->_ooo && t->_ooo->off == t->nxt) {
        iwd_tcp_node *n = t->_ooo;
        t->_ooo = n->next;
        t->_ooo_bytes -= n->len + NODE_OVERHEAD;
        t->_ooo_octets -= n->len;
        tcp_deliver(t, n->data, n->len, n->frame, n->ts);
        free(n);
    }
}

/* Hold [off, off+n) (off >= nxt): compare with held nodes where they
 * overlap, store the rest as new nodes. False when memory ran out. */
static bool ooo_insert(iwd_tcp *t, uint64_t off, const uint8_t *p, size_t n, uint64_t frame,
                       iwd_ts ts, diff_acc *a, size_t *added) {
    iwd_tcp_node **pp = &t->_ooo;
    uint64_t cur = off, end = off + n;
    while (cur < end) {
        iwd_tcp_node *nd = *pp;
        if (nd && nd->off + nd->len <= cur) {
            pp = &nd->next;
            continue;
        }
        if (nd && nd->off <= cur) {
            uint64_t ov_end = nd->off + nd->len < end ? nd->off + nd->len : end;
            acc_diff(a, cur, nd->data + (cur - nd->off), p + (cur - off), (size_t)(ov_end - cur));
            t->stats.retrans += ov_end - cur;
            cur = ov_end;
            pp = &nd->next;
            continue;
        }
        uint64_t piece_end = nd && nd->off < end ? nd->off : end;
        size_t len = (size_t)(piece_end - cur);
        iwd_tcp_node *nn = malloc(sizeof *nn + len);
        if (!nn)
            return false;
        nn->off = cur;
        nn->len = len;
        nn->frame = frame;
        nn->ts = ts;
        memcpy(nn->data, p + (cur - off), len);
        nn->next = nd;
        *pp = nn;
        pp = &nn->next;
        t->_ooo_bytes += len + NODE_OVERHEAD;
        t->_ooo_octets += len;
        *added += len;
        cur = piece_end;
    }
    return true;
}

/* The payload of one segment at offset off (may be before 0 or nxt). */
static void tcp_data(iwd_tcp *t, int64_t off, const iwd_tcp_seg *s) {
    size_t cl = s->len, wl = s->wire_len > s->len ? s->wire_len : s->len;
    /* Keep-alive: one octet (or none) just below the next expected octet. */
    if (wl <= 1 && off == (int64_t)t->nxt - 1 && !s->syn && !s->fin) {
        t->stats.keepalives++;
        return;
    }
    t->stats.segments++;
    if (off + (int64_t)wl > (int64_t)t->_hi)
        t->_hi = (uint64_t)(off + (int64_t)wl);
    /* Remember the first cut at or past nxt: that is where a gap starts. */
    uint64_t cut = (uint64_t)(off + (int64_t)cl);
    if (wl > cl && off + (int64_t)cl >= (int64_t)t->nxt &&
        (!t->_trunc || t->_trunc_off < t->nxt || cut < t->_trunc_off)) {
        t->_trunc = true;
        t->_trunc_off = cut;
        t->_trunc_frame = s->frame;
        t->_trunc_ts = s->ts;
    }
    const uint8_t *p = s->data;
    size_t n = cl;
    if (off < 0) {
        /* Before the direction's start: older than anything seen. */
        size_t k = (uint64_t)-off < n ? (size_t)-off : n;
        t->stats.retrans += k;
        t->stats.unchecked += k;
        p += k;
        n -= k;
        off = 0;
    }
    uint64_t o = (uint64_t)off;
    if (t->_fin && o + n > t->_fin_off) {
        size_t keep = o < t->_fin_off ? (size_t)(t->_fin_off - o) : 0;
        t->stats.discarded += n - keep;
        n = keep;
    }
    if (!n)
        return;
    /* Too much waits behind the hole: it is final. Octets resume at the
     * first held or at this segment, whichever comes first. */
    while (o > t->nxt && t->_ooo && t->_ooo_bytes + n + NODE_OVERHEAD > t->_cap) {
        tcp_gap(t, IWD_GAP_BUFFER_LIMIT, o);
        if (t->ended)
            return;
    }
    diff_acc acc = {0};
    if (o < t->nxt) {
        size_t k = t->nxt - o < n ? (size_t)(t->nxt - o) : n;
        hist_compare(t, o, p, k, &acc);
        t->stats.retrans += k;
        p += k;
        n -= k;
        o += k;
        acc_emit(t, &acc, s->frame, s->ts);
    }
    if (!n)
        return;
    if (o == t->nxt) {
        /* In order: straight through, up to the first held node. */
        size_t direct = n;
        if (t->_ooo && t->_ooo->off - o < n)
            direct = (size_t)(t->_ooo->off - o);
        if (direct) {
            tcp_deliver(t, p, direct, s->frame, s->ts);
            p += direct;
            n -= direct;
            o += direct;
        }
    }
    if (n) {
        bool ahead = o > t->nxt, new_hole = !t->_ooo;
        size_t added = 0;
        bool stored = ooo_insert(t, o, p, n, s->frame, s->ts, &acc, &added);
        if (ahead && added)
            t->stats.ooo++;
        if (ahead && added && new_hole) {
            /* The first segment held ahead of a hole; the ones that follow
             * it while the hole is open are only counted (a copy of held
             * octets is a retransmission). */
            iwd_tcp_ev ev = {0};
            ev.type = IWD_TCP_OOO;
            ev.off = o;
            ev.len = n;
            ev.expected = t->nxt;
            ev.frame = s->frame;
            ev.ts = s->ts;
            tcp_emit(t, &ev);
        }
        acc_emit(t, &acc, s->frame, s->ts);
        if (!stored) {
            t->stats.discarded += n - added; /* out of memory */
            tcp_gap(t, IWD_GAP_BUFFER_LIMIT, UINT64_MAX);
            return;
        }
    }
    tcp_drain(t);
}

void iwd_tcp_segment(iwd_tcp *t, const iwd_tcp_seg *s) {
    if (t->ended) {
        t->stats.discarded += s->len;
        return;
    }
    if (!t->started) {
        if (s->syn) {
            t->base_seq = s->seq + 1;
            t->syn_seen = true;
        } else if (s->rst) {
            t->started = true;
            t->base_seq = s->seq;
            tcp_end(t, IWD_END_RST, s->frame, s->ts);
            return;
        } else if (s->len || s->wire_len || s->fin) {
            t->base_seq = s->seq;
        } else {
            return; /* a bare ACK says nothing about where data starts */
        }
        t->started = true;
    }
    int64_t off = tcp_off(t, s->seq + (s->syn ? 1u : 0u));
    if (s->len || s->wire_len)
        tcp_data(t, off, s);
    tcp_check_fin(t);
    if (t->ended)
        return;
    if (s->fin) {
        int64_t fo = off + (int64_t)(s->wire_len > s->len ? s->wire_len : s->len);
        if (fo >= (int64_t)t->nxt && !t->_fin) {
            t->_fin = true;
            t->_fin_off = (uint64_t)fo;
            t->_fin_frame = s->frame;
            t->_fin_ts = s->ts;
            /* Octets held past the FIN can never be delivered. */
            iwd_tcp_node **pp = &t->_ooo;
            while (*pp) {
                iwd_tcp_node *n = *pp;
                if (n->off >= t->_fin_off) {
                    *pp = n->next;
                    t->_ooo_bytes -= n->len + NODE_OVERHEAD;
                    t->_ooo_octets -= n->len;
                    t->stats.discarded += n->len;
                    free(n);
                    continue;
                }
                if (n->off + n->len > t->_fin_off) {
                    size_t cut = (size_t)(n->off + n->len - t->_fin_off);
                    n->len -= cut;
                    t->_ooo_bytes -= cut;
                    t->_ooo_octets -= cut;
                    t->stats.discarded += cut;
                }
                pp = &n->next;
            }
        }
        tcp_check_fin(t);
    }
    if (s->rst && !t->ended) {
        if (tcp_hole_open(t)) {
            t->_fin_frame = s->frame; /* the gap is reported against the RST */
            t->_fin_ts = s->ts;
            tcp_close_holes(t, IWD_GAP_RST);
        }
        tcp_end(t, IWD_END_RST, s->frame, s->ts);
    }
}

void iwd_tcp_peer_ack(iwd_tcp *t, uint32_t ack) {
    if (!t->started || t->ended || !tcp_hole_open(t))
        return;
    /* Only a hole with octets known past it: a bare FIN is not data. */
    if (!t->_ooo && t->_hi <= t->nxt)
        return;
    /* Acknowledged octets reached the peer: holes below the ACK are final. */
    while (!t->ended && tcp_hole_open(t) && (t->_ooo || t->_hi > t->nxt) &&
           tcp_off(t, ack) > (int64_t)t->nxt)
        tcp_gap(t, IWD_GAP_ACKED, (uint64_t)tcp_off(t, ack));
}

void iwd_tcp_finish(iwd_tcp *t) {
    if (t->ended)
        return;
    if (t->started)
        tcp_close_holes(t, IWD_GAP_CAPTURE_END);
    if (t->ended)
        return;
    iwd_ts none = {0, 0};
    tcp_end(t, IWD_END_CAPTURE, 0, none);
}
