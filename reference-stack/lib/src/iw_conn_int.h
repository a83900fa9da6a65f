/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The connection's state, shared by the engine's modules. Each module's
 * functions are declared in its own header; calls go one way:
 *
 *   iw_conn.c (public lifecycle, work requests, close, timers)
 *     -> iw_rx.c (receive, placement) -> iw_startup.c (MPA startup frames)
 *     -> iw_tx.c (transmit)
 *          -> iw_term.c (Terminate, close) -> iw_cq.c (events, completions)
 *               -> iw_ring.c
 *
 * What this header defines inline is state initialisation only. */
#ifndef IW_CONN_INT_H
#define IW_CONN_INT_H

#include <string.h>

#include <iwarp/crc32c.h>
#include <iwarp/engine.h>
#include <iwarp/faults.h>

#include "iw_place.h"
#include "iw_ring.h"

/* An outbound message (RFC 5040 §5): what to put in its DDP/RDMAP headers
 * and where its payload lies. Segmented into FPDUs by iw_tx.c. */
typedef struct tx_msg {
    iw_rdmap_msg m;      /* opcode, ddp (tagged/stag/to or qn/msn), u */
    const uint8_t *data; /* payload, referenced until the message is sent */
    iw_mr_ref src;       /* the region data lies in, when named by an STag */
    uint32_t len;
    uint32_t off;       /* payload octets already framed */
    bool framed_all;    /* the last FPDU is framed */
    iw_event_type done; /* completion to raise when sent (0: none) */
    bool rtr;           /* RFC 6581 RTR: internal, its ORD entry already queued */
    bool fault_extra;   /* IW_FAULT_SEND_AFTER_TERM: goes out after the Terminate */
    uint64_t wr_id;
    uint32_t cq_seq; /* its completion-queue entry (posted work only) */
    /* Read Response: the request as received, for a Terminate that has to
     * report it (RFC 5040 §7.1 rule 3). */
    uint16_t req_seg_len;
    uint8_t req_hdr[IW_DDP_UNTAGGED_HDR_LEN + IW_RDMAP_READ_REQ_LEN];
} tx_msg;

/* An outstanding Read or Atomic Request we sent (the ORD queue). */
typedef struct ord_ent {
    bool atomic;
    bool rtr; /* zero-length RTR Read: internal, no completion */
    uint64_t wr_id;
    uint32_t sink_stag;
    uint64_t sink_to;
    uint32_t size;
    uint32_t got;    /* Read Response octets received */
    uint32_t req_id; /* atomic */
    uint32_t cq_seq; /* its completion-queue entry (not for the RTR) */
} ord_ent;

/* The completion of a posted work request, held until every earlier one
 * is reported: RFC 5040 §5.5 rule 15 (RFC 7306 §5.4, §6.4). */
typedef struct cq_ent {
    uint64_t wr_id;
    iw_event_type type;
    bool done;
    iw_wc_status status;
    uint32_t len;
    uint64_t atomic_orig;
} cq_ent;

/* A posted QN 0 receive buffer. */
typedef struct rq_ent {
    uint64_t wr_id;
    uint8_t *buf;
    uint32_t len;
    bool done; /* its last segment arrived */
    uint32_t msg_len;
    bool solicited, has_inv, has_imm;
    uint32_t inv_stag;
    uint8_t imm[IW_RDMAP_IMM_LEN];
} rq_ent;

/* Receive states, named for what they wait on. */
typedef enum rx_state {
    RX_MPA = 1, /* the peer's MPA Request/Reply */
    RX_HDR,     /* ULPDU_Length and the DDP/RDMAP header */
    RX_PAYLOAD, /* payload, straight to its target */
    RX_PAD,
    RX_CRC,
    RX_DRAIN, /* after a Terminate: octets are counted and dropped */
    RX_IDLE   /* startup not begun, or closed */
} rx_state;

#define RX_HDR_MAX 128
#define RX_HDR_AHEAD                                                                               \
    (IW_MPA_HDR_LEN +                                                                              \
     IW_DDP_TAGGED_HDR_LEN) /* a header read before its length is known */ /* largest header we gather; bigger control messages are "too long" */
/* Enough pieces for a whole maximal FPDU with markers (a marker every 512
 * octets: 64768 / 508 + 2 of them, each between two data pieces). */
#define RX_PIECES 288
#define RX_SCRATCH 65536

/* Marker slots per rx_iov list: one readv() can then span a whole FPDU
 * instead of stopping at every marker. */
#define RX_MARKER_SLOTS 136

typedef struct rx_piece {
    uint8_t *base;
    size_t len;
    uint8_t kind;  /* RXP_DATA, RXP_MARKER */
    uint8_t slot;  /* RXP_MARKER: which 4-octet slot of marker[] */
    uint8_t state; /* RXP_DATA: the rx_state the octets are for */
} rx_piece;

typedef struct tx_piece_list {
    iw_iovec iov[IW_MPA_GATHER_IOV_MAX];
    int n, idx;
    size_t off; /* into iov[idx] */
    uint8_t frame[IW_MPA_GATHER_FRAME_MAX];
    uint8_t hdr[IW_DDP_UNTAGGED_HDR_LEN + IW_RDMAP_ATOMIC_REQ_LEN + 64];
    bool active;
    bool last_of_msg; /* completes the message at tx_msgs' head */
    int src;          /* TXQ_* it came from */
    iw_mr_ref mr;     /* the region its payload lies in (index 0: none) */
    /* The CRC covers what is actually sent (see tx_crc_finish): the state
     * over the first crc_done octets, the wire offset where the CRC field
     * starts, how many octets are committed, and whether the last tx_iov
     * already filled the CRC field over what it handed out. */
    uint32_t crc_state;
    size_t crc_done, crc_at, sent;
    bool crc_final;
} tx_piece_list;

enum { TXQ_NONE = 0, TXQ_CTRL, TXQ_RESP, TXQ_SQ };

struct iw_conn {
    iw_rnic *rnic;
    iw_mem mem;
    uint32_t pd;
    iw_conn_settings set;
    iw_faults faults; /* copied from set.faults (zero: conformant) */
    iw_callbacks cb;
    void *user;
    unsigned in_cb; /* callbacks running (iw_cq_emit) */
    iw_conn_state state;
    iw_conn_info info;
    iw_conn_stats stats;
    iw_tstamp deadline; /* MPA startup timeout */
    uint8_t pd_copy[IW_MPA_PD_MAX];

    /* MPA */
    uint8_t mpa_out[IW_MPA_RR_HDR_LEN + IW_MPA_PD_MAX];
    size_t mpa_out_len, mpa_out_off;
    bool closing; /* ULP asked to close: after the send queue drains */
    bool closed_reported;

    /* receive */
    rx_state rx;
    uint32_t rx_pos; /* grid position of the next wire octet */
    bool rx_markers, rx_crc;
    uint32_t rx_crc_state;
    uint8_t mpa_in[IW_MPA_RR_HDR_LEN + IW_MPA_PD_MAX];
    size_t mpa_in_len;
    uint8_t hdr[RX_HDR_MAX + 2];
    size_t hdr_got, hdr_need;
    bool len_known, want_known; /* RX_HDR progress: ULPDU_Length read; header size known */
    uint16_t ulpdu_len;
    uint32_t fpdu_hdr_pos; /* grid position of ULPDU_Length */
    bool fpdu_started;
    uint8_t marker[IW_MPA_MARKER_LEN * RX_MARKER_SLOTS]; /* slot 0 holds a partial one */
    size_t marker_got;
    bool marker_bad;
    uint8_t trailer[8];
    size_t pad_got, crc_got;
    uint8_t *pay_dst;   /* payload target (NULL: drain) */
    uint8_t *pay_final; /* staged payload's final address (see rx_place_at) */
    iw_mr_ref pay_mr;   /* the region pay_dst or pay_final lies in (index 0: none) */
    size_t pay_left;
    bool pay_is_scratch;
    uint32_t pay_done; /* payload octets of this segment received */
    iw_rdmap_msg rmsg; /* decoded header of the FPDU in progress */
    bool err_pending;  /* a check failed; Terminate after the CRC verdict */
    uint16_t err_term;
    const char *err_rfc;
    bool err_rreq; /* include the Read Request header */
    uint32_t first_fpdu_seen;
    rx_piece pieces[RX_PIECES];
    int n_pieces;
    uint8_t *scratch; /* drain target */

    /* QN 0 receive queue: buffers for MSNs [rq_msn, rq_msn + count) */
    iw_ring rq;
    uint32_t rq_msn;
    bool rtr_send_pending; /* responder: the RTR Send uses MSN 1 without a buffer */
    bool rtr_pending_rx;   /* responder p2p: first FPDU must be the RTR */
    /* QN 1 (Read/Atomic Requests), QN 2 (Terminate), QN 3 (Atomic Response) */
    uint32_t qn1_msn, qn2_msn, qn3_msn;
    /* our outstanding Read/Atomic Requests (ORD) */
    iw_ring ord;
    /* peer's outstanding requests we must answer (IRD): queued responses */
    iw_ring resp;
    uint32_t resp_inflight; /* responses not yet fully sent */

    /* transmit */
    iw_ring sq;      /* tx_msg from post_send, in order */
    iw_ring cq;      /* cq_ent per posted work request, in submission order */
    uint32_t cq_seq; /* sequence number of the cq head */
    iw_ring ctrl;    /* tx_msg: RTR, Terminate */
    tx_piece_list tx;
    uint32_t tx_pos; /* grid position of the next outbound octet */
    bool tx_markers, tx_crc;
    bool tx_allowed;  /* responder: not before the first valid FPDU (RFC 5044 §7.1.2 rule 4) */
    bool term_queued; /* after a Terminate nothing else goes out (RFC 5040 §5.4) */
    bool term_sent_reported;
    uint32_t tx_msn_send, tx_msn_read, tx_msn_term, tx_msn_atomic_resp;
    uint32_t ord_outstanding;
    iw_term_info term_out;
    const char *term_rfc;
};

/* Fault injection (<iwarp/faults.h>): only iwarp-target --fault sets these. */
static inline bool iw_fault(const iw_conn *c, unsigned f) { return (c->faults.flags & f) != 0; }
static inline bool iw_fault_skip(const iw_conn *c, uint16_t triple) {
    return iw_faults_skips(&c->faults, triple);
}

/* The receive side enters Full Operation: RFC 5044 §4.3, the marker grid
 * starts at its first octet. */
static inline void iw_rx_start_fpdus(iw_conn *c) {
    c->rx_pos = 0;
    c->rx = RX_HDR;
    c->hdr_got = 0;
    c->hdr_need = IW_MPA_HDR_LEN;
    c->rx_crc_state = IW_CRC32C_INIT;
    c->fpdu_started = false;
    c->marker_got = 0;
    c->len_known = c->want_known = false;
}

static inline void iw_tx_init(iw_conn *c) {
    memset(&c->tx, 0, sizeof c->tx);
    c->tx_pos = 0;
}

/* Engine entry points that must not run inside a callback (engine.h). */
static inline bool iw_conn_busy(const iw_conn *c) { return c->in_cb != 0; }

#endif
