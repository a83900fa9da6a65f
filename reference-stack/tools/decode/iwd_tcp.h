/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwd_tcp: reassembly of one direction of a TCP connection for
 * iwarp-decode's capture mode. Sans-I/O: the caller feeds segments (sequence
 * number, flags, captured payload, frame number and timestamp) and gets back,
 * through one callback, the in-order byte runs and what happened on the way:
 *
 *   IWD_TCP_DATA      octets in sequence order, each exactly once;
 *   IWD_TCP_OOO       a segment arrived ahead of the next expected octet and
 *                     was buffered (informational; once per hole: the
 *                     segments that follow it while the hole is open are
 *                     only counted);
 *   IWD_TCP_CONFLICT  a retransmission or overlap carried octets that differ
 *                     from the copy received first (the first copy is kept);
 *   IWD_TCP_GAP       octets that will never arrive; delivery goes on from
 *                     the end of the hole with what was held past it (the
 *                     next DATA starts at off + len, or later after another
 *                     GAP);
 *   IWD_TCP_END       the direction ended (FIN, RST, end of capture).
 *
 * Offsets are 64-bit counts of octets since the direction's start: the octet
 * after the SYN when the SYN was seen, else the first captured payload octet.
 * Sequence numbers are compared modulo 2^32 relative to the next expected
 * octet, so wrap is harmless. Memory is bounded: out-of-order octets are
 * held up to a cap (a gap is reported when it is exceeded), and retransmitted
 * octets are compared with a bounded history of delivered octets. */
#ifndef IWD_TCP_H
#define IWD_TCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IWD_TCP_OOO_CAP_DEFAULT (16u << 20) /* octets held out of order */
#define IWD_TCP_HISTORY_MAX (256u << 10)    /* delivered octets kept for comparison */

typedef struct iwd_ts {
    int64_t sec;
    uint32_t nsec;
} iwd_ts;

typedef enum iwd_tcp_ev_type {
    IWD_TCP_DATA = 1,
    IWD_TCP_OOO,
    IWD_TCP_CONFLICT,
    IWD_TCP_GAP,
    IWD_TCP_END
} iwd_tcp_ev_type;

/* Why a gap is known to be final. */
typedef enum iwd_gap_cause {
    IWD_GAP_CAPTURE_END = 1, /* the capture ended with the hole open */
    IWD_GAP_ACKED,           /* the peer acknowledged octets past the hole: sent, not captured */
    IWD_GAP_RST,             /* the direction was reset with the hole open */
    IWD_GAP_BUFFER_LIMIT,    /* more than the cap was held waiting for the hole */
    IWD_GAP_SNAPLEN          /* the hole starts where a segment was cut by the snap length */
} iwd_gap_cause;

typedef enum iwd_end_cause {
    IWD_END_FIN = 1,
    IWD_END_RST,
    IWD_END_CAPTURE /* iwd_tcp_finish */
} iwd_end_cause;

typedef struct iwd_tcp_ev {
    iwd_tcp_ev_type type;
    uint64_t off;        /* first octet concerned (GAP: the first missing octet) */
    uint32_t seq;        /* its TCP sequence number */
    const uint8_t *data; /* DATA: the octets, valid during the callback */
    size_t len;          /* DATA, OOO: octets; CONFLICT: span from the first to the last
                            differing octet; GAP: octets missing */
    uint64_t expected;   /* OOO: the next in-order offset when it arrived */
    uint64_t held;       /* GAP: octets held past the hole (delivered next) */
    size_t differ;       /* CONFLICT: differing octets within the span */
    int cause;           /* GAP: iwd_gap_cause; END: iwd_end_cause */
    uint64_t frame;      /* the segment the octets came in (GAP: the first one past the
                            hole, or the FIN/RST; END: the segment that ended it, 0 at
                            the end of the capture) */
    iwd_ts ts;
} iwd_tcp_ev;

typedef void (*iwd_tcp_cb)(void *ctx, const iwd_tcp_ev *ev);

typedef struct iwd_tcp_seg {
    uint32_t seq;
    bool syn, fin, rst;
    const uint8_t *data; /* captured payload */
    size_t len;          /* captured payload octets */
    size_t wire_len;     /* payload octets per the IP/TCP headers (>= len; more when the
                            capture's snap length cut the packet) */
    uint64_t frame;
    iwd_ts ts;
} iwd_tcp_seg;

typedef struct iwd_tcp_node iwd_tcp_node;

/* Counters, for summaries. */
typedef struct iwd_tcp_stats {
    uint64_t segments;   /* segments carrying payload */
    uint64_t octets;     /* octets delivered in order */
    uint64_t retrans;    /* octets dropped as already received (compared when possible) */
    uint64_t unchecked;  /* of those, octets too old to compare */
    uint64_t ooo;        /* segments buffered out of order (not only OOO events) */
    uint64_t conflicts;  /* CONFLICT events */
    uint64_t keepalives; /* keep-alive probes ignored */
    uint64_t discarded;  /* octets after the end or beyond the FIN */
    uint64_t gaps;       /* GAP events */
    uint64_t missing;    /* octets in them */
} iwd_tcp_stats;

/* Caller-owned; iwd_tcp_init, then iwd_tcp_free. Private fields start with _. */
typedef struct iwd_tcp {
    iwd_tcp_cb _cb;
    void *_ctx;
    size_t _cap;
    bool started;  /* the direction's start (offset 0) is fixed */
    bool syn_seen; /* offset 0 is the octet after the SYN */
    bool ended;
    uint32_t base_seq; /* sequence number of offset 0 */
    uint64_t nxt;      /* next in-order offset */
    uint64_t _hi;      /* end of the highest octet known to exist */
    iwd_tcp_node *_ooo;
    size_t _ooo_bytes; /* held octets plus per-node overhead */
    uint64_t _ooo_octets;
    uint8_t *_hist; /* ring of the last delivered octets */
    size_t _hist_cap, _hist_len;
    bool _fin;
    uint64_t _fin_off, _fin_frame;
    iwd_ts _fin_ts;
    bool _trunc;
    uint64_t _trunc_off; /* first octet not captured of a snap-length-cut segment */
    uint64_t _trunc_frame;
    iwd_ts _trunc_ts;
    iwd_tcp_stats stats;
} iwd_tcp;

void iwd_tcp_init(iwd_tcp *t, size_t ooo_cap, iwd_tcp_cb cb, void *ctx);
void iwd_tcp_free(iwd_tcp *t);

/* One captured segment of this direction. Events are delivered before it
 * returns. Running out of memory is handled like the cap: a GAP. */
void iwd_tcp_segment(iwd_tcp *t, const iwd_tcp_seg *s);

/* The other direction acknowledged `ack`. When octets past a hole were
 * acknowledged, the hole was sent but not captured: it is reported now. */
void iwd_tcp_peer_ack(iwd_tcp *t, uint32_t ack);

/* End of the capture: a hole still open is a GAP; then END. Idempotent. */
void iwd_tcp_finish(iwd_tcp *t);

/* Sequence number of an offset. */
static inline uint32_t iwd_tcp_seq_of(const iwd_tcp *t, uint64_t off) {
    return t->base_seq + (uint32_t)off;
}

const char *iwd_gap_cause_str(int cause); /* "capture_end", "acked", ... */
const char *iwd_end_cause_str(int cause); /* "fin", "rst", "capture_end" */

#endif
