/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The sans-I/O engine over SCTP (RFC 5043): one DDP stream of an SCTP
 * association, i.e. the pair of SCTP streams with one Stream Identifier
 * (RFC 5043 §6, §8).
 *
 * An iw_sctp_conn wraps one iw_conn (<iwarp/engine.h>) and translates
 * between SCTP messages and the engine's MPA byte stream, so every DDP,
 * RDMAP and STag rule (placement, queues, Terminate) is the engine's own,
 * exactly as over MPA:
 *  - a DDP Stream Session Initiate / Accept / Reject (and RFC 6581 §7's
 *    enhanced ones) is the MPA Request / Reply (R=0 / R=1) it is equivalent
 *    to (RFC 6581 §7);
 *  - a DDP Segment Chunk's DDP segment is handed to the engine as the
 *    ULPDU of an FPDU with markers and CRC off (SCTP's CRC32c covers the
 *    chunk; there are no markers), and each FPDU the engine emits leaves as
 *    a DDP Segment Chunk;
 *  - what is RFC 5043's own is done here: DDP-SSNs (§5.2.1, §6.1, §10),
 *    the legal session sequences (§6.2-§6.4, RFC 6581 §7), the DDP Stream
 *    Session Terminate (§6.2), the largest DDP segment (§9).
 *
 * Work requests, receive buffers, events, close, timers (the engine's
 * startup timeout covers the Initiate/Accept exchange) and the engine's
 * getters are used on the engine itself (iw_sctp_conn_engine); moving
 * bytes and starting go through this adapter only.
 *
 * One iw_sctp_conn is one DDP Stream Session: DDP-SSNs restart at 0 and no
 * chunk carries over to the next session (§6, §6.1), so a new session on
 * the same Stream Identifier takes a new iw_sctp_conn, once no chunk of
 * the old one can be in flight (§6.6).
 *
 * The binding sends every message on SCTP stream `sid`, unordered (U=1,
 * RFC 5043 §10), with the PPID given, and passes every DATA chunk payload
 * received on `sid` (after SCTP reassembly) to iw_sctp_conn_recv in the
 * order SCTP delivered it: the adapter restores the sender's order from
 * the DDP-SSN. It also checks the Adaptation Layer Indication in INIT /
 * INIT-ACK (§5.1, §11.1, <iwarp/sctp.h>) before creating one.
 *
 * Return values and lifetimes as in <iwarp/engine.h>. */
#ifndef IW_SCTP_CONN_H
#define IW_SCTP_CONN_H

#include <iwarp/engine.h>
#include <iwarp/sctp.h>

IW_BEGIN_DECLS

typedef struct iw_sctp_conn iw_sctp_conn;

/* Why this side ended the session: a received chunk that fits no legal
 * sequence (RFC 5043 §6.1: "the DDP Stream Session MUST be terminated").
 * X(NAME, "RFC section", "text"). */
#define IW_SCTP_SESS_PROBLEM_LIST(X)                                                               \
    X(CHUNK, "RFC 5043 §5.2", "malformed chunk (see the chunk problem)")                           \
    X(BAD_PPID, "RFC 5043 §5.1, §5.2",                                                             \
      "Payload Protocol Identifier is neither DDP Segment nor DDP Stream Session Control")         \
    X(SSN_STALE, "RFC 5043 §6, §6.1",                                                              \
      "DDP-SSN already used in this session (a duplicate or a gap the sender cannot have left)")   \
    X(SSN_DUPLICATE, "RFC 5043 §6", "DDP-SSN of a chunk already held for reordering")              \
    X(SSN_WINDOW, "RFC 5043 §10", "DDP-SSN gap larger than the receive window can account for")    \
    X(SEG_BEFORE_SESSION, "RFC 5043 §6.2, §6.6", "DDP Segment before the session was accepted")    \
    X(SEG_TOO_LONG, "RFC 5043 §9", "DDP Segment larger than the maximum DDP Segment size")         \
    X(UNEXPECTED_CTRL, "RFC 5043 §6.1",                                                            \
      "Session Control message that fits no legal sequence at this point")                         \
    X(ENH_MISMATCH, "RFC 6581 §7", "enhanced and unenhanced function codes mixed in one session")  \
    X(AFTER_END, "RFC 5043 §6.2, §6.3", "chunk after the peer's final Session Control message")

typedef enum iw_sctp_sess_problem {
    IW_SCTP_SESS_PROBLEM_NONE = 0,
#define IW_X_(n, rfc, s) IW_SCTP_SESS_PROBLEM_##n,
    IW_SCTP_SESS_PROBLEM_LIST(IW_X_)
#undef IW_X_
} iw_sctp_sess_problem;

const char *iw_sctp_sess_problem_str(iw_sctp_sess_problem p);
const char *iw_sctp_sess_problem_rfc(iw_sctp_sess_problem p);

typedef enum iw_sctp_sess_state {
    IW_SCTP_SESS_IDLE = 0, /* not started */
    IW_SCTP_SESS_STARTING, /* Initiate sent (active) or awaited (passive) */
    IW_SCTP_SESS_OPEN,     /* accepted: DDP Segments flow (§6.2) */
    IW_SCTP_SESS_ENDED     /* rejected, or a Session Terminate sent or received */
} iw_sctp_sess_state;

/* Largest DDP segment by default: a 1500-octet IPv4 path less the IP (20),
 * SCTP common (12) and DATA chunk (16) headers and the DDP-SSN (2), so no
 * IP or SCTP fragmentation is needed (RFC 5043 §9). */
#define IW_SCTP_MAX_SEG_DEFAULT 1450u
/* §9: at least what a Session Control message with 512 octets of Private
 * Data needs (516-octet chunk, less its DDP-SSN). */
#define IW_SCTP_MAX_SEG_MIN 514u
/* The DDP-SSN window (§10): out-of-order chunks held until the gap before
 * them is filled. */
#define IW_SCTP_WINDOW_DEFAULT 64u
#define IW_SCTP_WINDOW_MAX 32767u

#define IW_SCTP_CONN_SETTINGS_V1 1
typedef struct iw_sctp_conn_settings {
    int version; /* IW_SCTP_CONN_SETTINGS_V1 */
    /* The engine's settings (iw_conn_settings_default). role INITIATOR is
     * the active side (sends the Initiate); mpa_rev 2 uses RFC 6581's
     * enhanced function codes, 1 the plain ones. markers, crc, emss and
     * cut_through are overridden: no markers, no DDP-level CRC, the
     * maximum segment below. */
    iw_conn_settings conn;
    uint16_t sid;     /* SCTP Stream Identifier of this DDP stream (§6, §8) */
    uint32_t max_seg; /* largest DDP segment both ways (§9); 0: IW_SCTP_MAX_SEG_DEFAULT */
    uint32_t window;  /* DDP-SSN reorder window (§10); 0: IW_SCTP_WINDOW_DEFAULT */
} iw_sctp_conn_settings;

void iw_sctp_conn_settings_default(iw_sctp_conn_settings *s, iw_role role);

/* Callbacks are the engine's (iw_callbacks); their iw_conn is
 * iw_sctp_conn_engine(the result). IW_ERR_INVALID_ARG (versions, max_seg
 * under IW_SCTP_MAX_SEG_MIN or over IW_MPA_MULPDU_MAX, window over
 * IW_SCTP_WINDOW_MAX, whatever iw_conn_new refuses), IW_ERR_NOMEM. */
int iw_sctp_conn_new(iw_sctp_conn **out, iw_rnic *rnic, uint32_t pd, const iw_sctp_conn_settings *s,
                     const iw_callbacks *cb, void *user);
void iw_sctp_conn_del(iw_sctp_conn *sc);

/* The engine of this DDP stream: post work and receive buffers, close,
 * read state, info and stats on it. Do not feed or drain it directly. */
iw_conn *iw_sctp_conn_engine(iw_sctp_conn *sc);

/* Begin the session: the active side queues its Initiate, the passive side
 * waits for one. Errors as iw_conn_start. */
int iw_sctp_conn_start(iw_sctp_conn *sc, iw_tstamp now);

/* One DATA chunk payload received on this stream, with its PPID.
 * 0: taken (placed, held for reordering, or dropped after the session
 * ended here). IW_ERR_PROTO: the chunk (or one held for reordering that
 * it let through) broke an RFC 5043 rule; the session
 * is terminated as §6.1 requires (a Session Terminate is queued, the
 * engine closes: IW_EV_CLOSED) and iw_sctp_conn_problem says which rule.
 * A violation of a DDP or RDMAP rule inside a DDP Segment is not an error
 * here: the engine answers it with a Terminate, as over MPA. IW_ERR_INVALID_ARG
 * (msg NULL with len, or from a callback), IW_ERR_CALLBACK, IW_ERR_NOMEM. */
int iw_sctp_conn_recv(iw_sctp_conn *sc, uint32_t ppid, const uint8_t *msg, size_t len,
                      iw_tstamp now);

/* The next message to send. */
typedef struct iw_sctp_msg {
    uint32_t ppid; /* IW_SCTP_PPID_DDP_SEGMENT or IW_SCTP_PPID_DDP_CONTROL */
    uint16_t sid;  /* the settings' sid */
    const uint8_t *data;
    size_t len;
} iw_sctp_msg;

/* Fills *m and returns 1, or 0 when nothing is ready. m->data is valid
 * until the next call into sc. Errors as iw_conn_write. */
int iw_sctp_conn_next(iw_sctp_conn *sc, iw_sctp_msg *m, iw_tstamp now);
/* True when iw_sctp_conn_next has a message to give. */
bool iw_sctp_conn_want_write(const iw_sctp_conn *sc);

/* SCTP acknowledged the chunk with this DDP-SSN and every one before it
 * (usrsctp: a SCTP_SENDER_DRY_EVENT covers all sent so far). RFC 5043
 * §6.6 lets a Session Control message go out only once the previous one
 * cannot be overtaken: it was acked, or the peer answered it. The active
 * side's Initiate is answered by the passive side's first chunk; the
 * passive side's Accept is answered by nothing, so its Session Terminate
 * waits for this call. IW_ERR_INVALID_ARG: a DDP-SSN not sent. */
int iw_sctp_conn_tx_acked(iw_sctp_conn *sc, uint16_t ssn);

/* The SCTP association or the stream failed or went away (RFC 5043 §11.3):
 * the engine sees the LLP close (flush, IW_EV_CLOSED); nothing more is
 * sent. Errors as iw_conn_rx_eof. */
int iw_sctp_conn_llp_lost(iw_sctp_conn *sc, iw_tstamp now);

iw_sctp_sess_state iw_sctp_conn_session(const iw_sctp_conn *sc);
/* Why this side terminated the session (NONE if it did not); *chunk (may
 * be NULL) gets the codec's problem for IW_SCTP_SESS_PROBLEM_CHUNK. */
iw_sctp_sess_problem iw_sctp_conn_problem(const iw_sctp_conn *sc, iw_sctp_problem *chunk);

typedef struct iw_sctp_conn_stats {
    uint64_t chunks_rx, chunks_tx;
    uint64_t reordered;    /* chunks held until the DDP-SSNs before them arrived */
    uint64_t dropped;      /* chunks after the session ended on this side */
    bool term_tx, term_rx; /* DDP Stream Session Terminate sent / received */
} iw_sctp_conn_stats;
void iw_sctp_conn_get_stats(const iw_sctp_conn *sc, iw_sctp_conn_stats *out);

IW_END_DECLS
#endif
