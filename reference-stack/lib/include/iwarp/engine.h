/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The reference iWARP engine: a sans-I/O RNIC.
 *
 * An iw_rnic holds protection domains and the STag table. An iw_conn is one
 * RDMAP stream (a queue pair): it consumes the bytes of its TCP stream in any
 * chunking and produces the bytes to send; it never touches a socket or a
 * clock. Data sinks are placed directly at their final address: tagged
 * payload into the registered region its STag/TO name, untagged payload into
 * the posted receive buffer its QN/MSN/MO name. Every receive-side check is
 * the one RFC 5041 §7.1 / RFC 5040 §7.2 / RFC 7306 §8.2 require, with the
 * RFC 6580 triple it raises; the first violation is answered with a
 * Terminate and nothing else is sent or placed after it.
 *
 * Two ways to feed and drain a connection:
 *  - iw_conn_recv / iw_conn_write copy between the engine and byte buffers
 *    (in-memory use, tests, fuzzing);
 *  - iw_conn_rx_iov + iw_conn_rx_commit / iw_conn_tx_iov + iw_conn_tx_commit
 *    describe where the next input octets belong and which octets go out
 *    next, so a socket binding can readv()/writev() payload straight between
 *    the kernel and the registered memory with no copy in user space.
 *
 * Return values: 0 (or a count), or a negative IW_ERR_* listed at each
 * function. IW_ERR_INVALID_ARG and IW_ERR_PROTO change nothing; at or below
 * IW_ERR_FATAL (IW_ERR_NOMEM, IW_ERR_CALLBACK: iw_err_is_fatal) the object
 * that returned it can only be deleted.
 *
 * Lifetimes: what a function is given is copied before it returns, except
 * where a comment says otherwise (work request payload, receive buffers,
 * registered memory, the faults of a connection's settings). What the
 * engine hands out (events, iovecs, iw_conn_info) is valid as stated there.
 * No global state: separate RNICs may be used from separate threads; one
 * RNIC and its connections from one thread at a time. */
#ifndef IWARP_ENGINE_H
#define IWARP_ENGINE_H

#include <iwarp/err.h>
#include <iwarp/mem.h>
#include <iwarp/mpa.h>
#include <iwarp/rdmap.h>
#include <iwarp/types.h>

IW_BEGIN_DECLS

/* ---------------- RNIC: protection domains and STags ---------------- */

typedef struct iw_rnic iw_rnic;

/* mem may be NULL for the C library's allocator; it is copied, and every
 * allocation of the RNIC and its connections goes through it.
 * IW_ERR_INVALID_ARG (out NULL), IW_ERR_NOMEM. */
int iw_rnic_new(iw_rnic **out, const iw_mem *mem);
/* Delete the connections first (iw_conn_del). */
void iw_rnic_del(iw_rnic *rnic);

/* A protection domain (RFC 5042 §5): never 0. IW_ERR_NOMEM. */
int iw_pd_alloc(iw_rnic *rnic, uint32_t *pd);
/* IW_ERR_INVALID_ARG if unknown, or while regions or connections use pd. */
int iw_pd_free(iw_rnic *rnic, uint32_t pd);

/* Access rights (RFC 5040 §5.1, RFC 7306 §5). */
#define IW_ACCESS_LOCAL_WRITE 0x01u
#define IW_ACCESS_REMOTE_READ 0x02u
#define IW_ACCESS_REMOTE_WRITE 0x04u
#define IW_ACCESS_REMOTE_ATOMIC 0x08u
/* Not an access right: the STag refuses invalidation, local or remote
 * (RFC 5040 §5.3 "STag cannot be Invalidated"). */
#define IW_MR_NO_INVALIDATE 0x100u

/* Register len octets at addr; the first octet has Tagged Offset base_to.
 * The memory must stay valid until iw_mr_dereg returns (or iw_rnic_del).
 * The STag is index << 8 | key, an 8-bit key that changes every time an
 * index is reused, so a stale STag does not match (RFC 5042 §5.2 lets the
 * RNIC form STags; the key is the verbs' convention, not the RFCs').
 * IW_ERR_INVALID_ARG (unknown pd, unknown access bits, len without addr, a
 * region whose Tagged Offsets would wrap: RFC 5041 §7.1), IW_ERR_NOMEM. */
int iw_mr_reg(iw_rnic *rnic, uint32_t pd, void *addr, uint64_t len, uint64_t base_to,
              unsigned access, uint32_t *stag);
/* Deregister. Once it returns the engine never reads or writes the region's
 * memory again, so the caller may free it at once, even while work that
 * named the region is still queued (RFC 5042 §6.2.2, §6.3.3). What happens
 * to that work, on every connection of the RNIC:
 *  - a Read Response not yet sent, or partly sent, from the region: the
 *    stream is terminated with 0/1/0 Invalid STag, copying the Read Request
 *    (RFC 5040 §7.1 rule 3);
 *  - a Send or Write whose source is the region (iw_send_wr.local_stag):
 *    it completes with IW_WC_LOCAL_PROT_ERROR, the stream is terminated with
 *    0/0/0 Local Catastrophic Error (§7.1 rule 1) and later work is flushed;
 *  - the rest of a tagged segment being placed into the region (Write or
 *    Read Response split across receive calls): drained, then 1/1/0 Invalid
 *    STag, as if the segment had arrived after the deregistration;
 *  - an FPDU already partly handed to the LLP whose payload lies in the
 *    region cannot be finished without reading it: the stream is closed
 *    with IW_CLOSE_LOCAL_ABORT (LLP Abortive Termination, RFC 5040 §6.2).
 * Raw pointers (iw_send_wr.data, posted receive buffers) are the caller's
 * to keep valid until their completion. IW_ERR_INVALID_ARG if unknown. */
int iw_mr_dereg(iw_rnic *rnic, uint32_t stag);
/* Local invalidate. IW_ERR_INVALID_ARG if unknown, IW_ERR_PROTO if the
 * region refuses invalidation. Queued work that named the region is handled
 * as for iw_mr_dereg: remote access is withdrawn at once (RFC 5042 §6.3.3),
 * though the memory stays registered. */
int iw_mr_invalidate(iw_rnic *rnic, uint32_t stag);

typedef struct iw_mr_info {
    uint32_t stag, pd;
    void *addr;
    uint64_t len, base_to;
    unsigned access;
    bool valid; /* false once invalidated */
} iw_mr_info;
/* IW_ERR_INVALID_ARG if unknown. */
int iw_mr_query(const iw_rnic *rnic, uint32_t stag, iw_mr_info *out);

/* ---------------- connections ---------------- */

typedef struct iw_conn iw_conn;

typedef enum iw_role { IW_ROLE_INITIATOR = 1, IW_ROLE_RESPONDER } iw_role;

/* RFC 6581 §9 RTR types (bit set). */
#define IW_RTR_SEND 0x1u
#define IW_RTR_WRITE 0x2u
#define IW_RTR_READ 0x4u

struct iw_faults; /* <iwarp/faults.h>: conformance testing only */

/* Connection settings. Fill them with iw_conn_settings_default, which sets
 * version, then change what you need: a later library may add fields at
 * the end, and reads only those of the version given (ngtcp2's versioned
 * structs). */
#define IW_CONN_SETTINGS_V1 1
typedef struct iw_conn_settings {
    int version; /* IW_CONN_SETTINGS_V1 */
    iw_role role;
    uint8_t mpa_rev;   /* 1 (RFC 5044) or 2 (RFC 6581 enhanced frames) */
    bool markers;      /* we require markers in the peer's FPDUs (our M bit) */
    bool crc;          /* our C bit: CRC is used if either side sets it */
    bool p2p;          /* rev 2: peer-to-peer model (A) with an RTR */
    unsigned rtr;      /* IW_RTR_*: offered (initiator) / supported (responder) */
    uint16_t ird, ord; /* inbound / outbound Read (and Atomic) Requests */
    uint16_t ird_max;  /* initiator: largest IRD we can provide (RFC 6581 §9.1) */
    const uint8_t *private_data;
    uint16_t private_data_len;
    bool reject;           /* responder: answer the Request with R=1 */
    uint32_t emss;         /* effective MSS for MULPDU (RFC 5044 §4.5); 0: 1460 */
    iw_tstamp mpa_timeout; /* startup frame timeout (RFC 5044 §7.1.2 rule 10); 0: none */
    /* With CRCs in use, RFC 5044 §6 wants an FPDU verified before DDP sees
     * its ULPDU, so by default payload is staged and placed after its CRC
     * (one copy). cut_through places it at its final address as it arrives
     * (zero copy), before the CRC is known, as siw and hardware RNICs do:
     * a bad CRC still terminates the stream before the message completes,
     * but the target region may already have changed. */
    bool cut_through;
    /* NULL: conformant. Deliberate violations for conformance testing
     * (<iwarp/faults.h>), copied by iw_conn_new. */
    const struct iw_faults *faults;
} iw_conn_settings;

void iw_conn_settings_default(iw_conn_settings *s, iw_role role);

/* What was negotiated (event IW_EV_CONNECTED). */
typedef struct iw_conn_info {
    uint8_t mpa_rev; /* the peer's frame revision */
    bool enhanced;   /* RFC 6581 frames on both sides */
    bool markers_tx; /* we insert markers (the peer's M) */
    bool markers_rx; /* the peer inserts markers (our M) */
    bool crc;
    bool p2p;
    unsigned rtr;      /* p2p: RTR type used (IW_RTR_*) */
    uint16_t ird, ord; /* our final IRD / ORD */
    uint16_t peer_ird, peer_ord;
    uint32_t mulpdu;
    uint8_t peer_private_data[IW_MPA_PD_MAX];
    uint16_t peer_private_data_len;
} iw_conn_info;

typedef enum iw_event_type {
    IW_EV_CONNECTED = 1, /* info */
    IW_EV_REJECTED,      /* the Reply had R=1 (initiator) or we rejected (responder) */
    IW_EV_RECV,          /* wr_id, len, msn, solicited, inv_stag, imm */
    /* The four completions come in post_send order, whatever finished
     * first (RFC 5040 §5.5 rule 15). */
    IW_EV_SEND_DONE, /* Send* / Immediate */
    IW_EV_WRITE_DONE,
    IW_EV_READ_DONE,
    IW_EV_ATOMIC_DONE,   /* atomic_orig */
    IW_EV_TERM_SENT,     /* term */
    IW_EV_TERM_RECEIVED, /* term */
    IW_EV_CLOSED         /* close, rfc */
} iw_event_type;

typedef enum iw_wc_status {
    IW_WC_SUCCESS = 0,
    IW_WC_FLUSHED,         /* the stream ended before the operation completed */
    IW_WC_REMOTE_ERROR,    /* the peer terminated the stream */
    IW_WC_LOCAL_PROT_ERROR /* its source region was deregistered or invalidated first */
} iw_wc_status;

typedef struct iw_term_info {
    uint16_t triple;
    bool m, d, r;
    uint16_t ddp_seg_len;
    uint8_t hdr[IW_DDP_UNTAGGED_HDR_LEN + IW_RDMAP_READ_REQ_LEN];
    size_t hdr_len; /* copied DDP header (+ Read Request header) */
} iw_term_info;

typedef struct iw_event {
    iw_event_type type;
    iw_wc_status status;
    uint64_t wr_id;
    uint32_t len;
    uint32_t msn;
    bool solicited;
    bool has_inv;
    uint32_t inv_stag;
    bool has_imm;
    uint8_t imm[IW_RDMAP_IMM_LEN];
    uint64_t atomic_orig;
    iw_term_info term;
    iw_close_reason close;
    const char *rfc;
    const iw_conn_info *info;
} iw_event;

#define IW_CALLBACKS_V1 1
typedef struct iw_callbacks {
    int version; /* IW_CALLBACKS_V1 */
    /* Every completion and state change. ev and what it points to are
     * valid during the call only (ev->info: until iw_conn_del; ev->rfc: a
     * static string). Return 0, or non-zero to make the current engine
     * call fail with IW_ERR_CALLBACK.
     *
     * From inside the callback the application may call, on this and
     * other connections: iw_conn_post_send, iw_conn_post_recv,
     * iw_conn_close, the getters, and iw_pd_* / iw_mr_* (a region it
     * deregisters is fenced as iw_mr_dereg says). It must not move bytes
     * or time: iw_conn_recv, _write, _rx_iov, _rx_commit, _tx_iov,
     * _tx_commit, _rx_eof, _handle_expiry and _start return
     * IW_ERR_INVALID_ARG there; and it must not delete the connection or
     * the RNIC.
     *
     * IW_ERR_CALLBACK is fatal (nghttp2's NGHTTP2_ERR_CALLBACK_FAILURE):
     * the failed call does not say how many octets it consumed
     * (iw_conn_recv, rx_commit) or wrote (iw_conn_write, tx_commit), yet
     * what it wrote is already counted as sent (iw_conn_stats.bytes_tx), so
     * neither direction of the TCP stream can be resumed: drop the
     * connection (iw_conn_del, close the socket). The engine still finishes
     * what the call was doing: a flush reports every completion even when
     * callbacks fail. */
    int (*on_event)(iw_conn *conn, const iw_event *ev, void *user);
} iw_callbacks;

/* A connection of the RNIC in protection domain pd. s and cb are copied.
 * IW_ERR_INVALID_ARG (a settings or callbacks version this library does
 * not know, an unknown pd, inconsistent settings), IW_ERR_NOMEM. */
int iw_conn_new(iw_conn **out, iw_rnic *rnic, uint32_t pd, const iw_conn_settings *s,
                const iw_callbacks *cb, void *user);
/* Frees the connection without reporting anything; posted buffers and
 * work requests are the caller's again. Not from a callback. */
void iw_conn_del(iw_conn *conn);

/* Begin MPA startup (the initiator queues its Request; the responder
 * waits). IW_ERR_INVALID_ARG if already started or from a callback. */
int iw_conn_start(iw_conn *conn, iw_tstamp now);

/* ---- work requests ---- */

typedef enum iw_wr_op {
    IW_WR_SEND = 1,
    IW_WR_SEND_SE,
    IW_WR_SEND_INV,
    IW_WR_SEND_SE_INV,
    IW_WR_WRITE,
    IW_WR_READ,
    IW_WR_FETCH_ADD,
    IW_WR_CMP_SWAP,
    IW_WR_IMM,
    IW_WR_IMM_SE
} iw_wr_op;

typedef struct iw_send_wr {
    iw_wr_op op;
    uint64_t wr_id;
    /* Send*, Write: the source octets, valid until completion; or NULL with
     * local_stag/local_to naming them in a registered region of the
     * connection's PD, which the engine then reads only while the region
     * stays registered and valid (see iw_mr_dereg). */
    const void *data;
    uint32_t len;         /* Send*, Write: octets; Read: RDMA Read Message Size */
    uint32_t inv_stag;    /* Send with Invalidate */
    uint32_t remote_stag; /* Write, Read (source), atomics */
    uint64_t remote_to;
    uint32_t local_stag; /* Read: our sink; Send*, Write with data NULL: the source */
    uint64_t local_to;
    uint64_t add_swap, add_swap_mask, compare, compare_mask; /* RFC 7306 §5.2.1 */
    uint8_t imm[IW_RDMAP_IMM_LEN];
} iw_send_wr;

/* Queue an operation; wr is copied, its payload is not (see data). Every
 * posted operation completes exactly once, in post order (RFC 5040 §5.5
 * rule 15). IW_ERR_INVALID_ARG for an inconsistent request (including a
 * local source STag that is unknown, invalid, of another PD, or too short
 * for len), IW_ERR_PROTO when the stream no longer accepts work (after a
 * Terminate, a close or iw_conn_close), IW_ERR_NOMEM. */
int iw_conn_post_send(iw_conn *conn, const iw_send_wr *wr);
/* Post an untagged receive buffer on QN 0 (RFC 5041 §5.3); buf stays the
 * engine's until its IW_EV_RECV (successful or flushed). IW_ERR_INVALID_ARG
 * (len without buf), IW_ERR_PROTO (the stream ended), IW_ERR_NOMEM. */
int iw_conn_post_recv(iw_conn *conn, uint64_t wr_id, void *buf, uint32_t len);

/* ---- bytes in and out ---- */

/* Copying forms. iw_conn_recv consumes all of in (the octets after a
 * Terminate or a close are counted and dropped) and returns len; a peer's
 * violation is never an error here: it is answered with a Terminate.
 * iw_conn_write fills out with what is ready to go and returns how many
 * octets, 0 when nothing is. Both: IW_ERR_CALLBACK, IW_ERR_NOMEM (fatal),
 * IW_ERR_INVALID_ARG from a callback. in and out are used during the call
 * only. */
iw_ssize iw_conn_recv(iw_conn *conn, const uint8_t *in, size_t len, iw_tstamp now);
iw_ssize iw_conn_write(iw_conn *conn, uint8_t *out, size_t outlen, iw_tstamp now);
/* True when iw_conn_write / iw_conn_tx_iov have octets to give. */
bool iw_conn_want_write(const iw_conn *conn);

/* Zero-copy forms. rx_iov fills up to max slots with where the next input
 * octets go (their total is what may be read now) and returns the count,
 * 0 when the stream takes no more; rx_commit says how many octets arrived
 * there (at most their total). tx_iov/tx_commit likewise for output: the
 * iovecs name octets to send, tx_commit how many were sent. The iovecs are
 * valid until the next call into the connection: read or write them, then
 * commit, with no other engine call (and so no callback) in between.
 * _iov: IW_ERR_INVALID_ARG from a callback, IW_ERR_NOMEM (tx). _commit:
 * IW_ERR_INVALID_ARG (more octets than listed, or from a callback),
 * IW_ERR_CALLBACK, IW_ERR_NOMEM. */
int iw_conn_rx_iov(iw_conn *conn, iw_iovec *iov, int max);
int iw_conn_rx_commit(iw_conn *conn, size_t n, iw_tstamp now);
int iw_conn_tx_iov(iw_conn *conn, iw_iovec *iov, int max);
int iw_conn_tx_commit(iw_conn *conn, size_t n, iw_tstamp now);

/* The LLP delivered FIN or failed (RFC 5044 §8 code 1, RFC 5041 §6.2.1):
 * work is flushed, IW_EV_CLOSED. IW_ERR_CALLBACK; IW_ERR_INVALID_ARG from a
 * callback. */
int iw_conn_rx_eof(iw_conn *conn, iw_tstamp now);
/* ULP graceful close: what is queued goes out, then IW_EV_CLOSED; no new
 * work is accepted. IW_ERR_CALLBACK. Allowed from a callback. */
int iw_conn_close(iw_conn *conn, iw_tstamp now);

/* Timers (the engine reads no clock): the next deadline (UINT64_MAX: none)
 * and its handling once now has reached it. IW_ERR_CALLBACK;
 * IW_ERR_INVALID_ARG from a callback. */
iw_tstamp iw_conn_get_expiry(const iw_conn *conn);
int iw_conn_handle_expiry(iw_conn *conn, iw_tstamp now);

typedef enum iw_conn_state {
    IW_CONN_IDLE = 0,
    IW_CONN_MPA,       /* startup frames in flight */
    IW_CONN_RTS,       /* full operation */
    IW_CONN_TERMINATE, /* a Terminate was sent or received; draining */
    IW_CONN_CLOSED
} iw_conn_state;
iw_conn_state iw_conn_get_state(const iw_conn *conn);
/* Filled at IW_EV_CONNECTED; valid until iw_conn_del. */
const iw_conn_info *iw_conn_get_info(const iw_conn *conn);

typedef struct iw_conn_stats {
    uint64_t fpdus_rx, fpdus_tx;
    uint64_t bytes_placed;       /* payload octets placed at their final address */
    uint64_t payload_copies;     /* payload octets copied in user space on receive: the
                                    copying iw_conn_recv counts every one; the
                                    rx_iov path places with none (debug counter) */
    uint64_t bytes_rx, bytes_tx; /* stream octets */
} iw_conn_stats;
void iw_conn_get_stats(const iw_conn *conn, iw_conn_stats *out);

IW_END_DECLS
#endif
