/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shadow analysis: the receive-side state an RNIC keeps, rebuilt from a
 * capture, and the Terminate a conformant receiver must send.
 *
 * An iw_shadow observes one RDMAP stream (both directions of one TCP
 * connection) from the outside. The caller decodes the capture (deframer,
 * iw_mpa_rr_decode, iw_mpa_fpdu_decode, iw_rdmap_decode) and hands every
 * accepted MPA Request/Reply and every FPDU to it in capture order. For each
 * FPDU it returns the *stateful* verdict the receiver in the other direction
 * must give (a Terminate triple with the RFC section of the rule, exactly as
 * the reference engine raises it in src/iw_rx.c and src/iw_place.c), plus
 * notes about things a receiver does not answer with a Terminate.
 *
 * Sans-I/O like the codecs: the struct is caller-owned (zero-filled by
 * iw_shadow_init, no allocation, no global state, no clock). Callers choose
 * their own 64-bit frame ids (a frame number, a stream offset); results refer
 * back to earlier frames by those ids.
 *
 * A capture shows no memory registrations and no posted receive buffers, so
 * STag validity, base/bounds and access rights against regions, and "no
 * buffer" / MO-within-buffer checks cannot be judged; neither can anything
 * that happened before the capture began (mid-stream) or inside a capture
 * gap (iw_shadow_lost). Where the capture cannot make a verdict certain, the
 * shadow gives none. A verdict that rests on something the capture implies
 * but cannot show names it in iw_shadow_result.assume. See
 * docs/wireshark-plugin.md, "Shadow analysis", for the full list. */
#ifndef IWARP_SHADOW_H
#define IWARP_SHADOW_H

#include <iwarp/err.h>
#include <iwarp/mpa.h>
#include <iwarp/rdmap.h>
#include <iwarp/types.h>

IW_BEGIN_DECLS

/* The rule behind a stateful verdict. X(NAME, "what the segment did")
 * The triple and the RFC section come with the verdict; they are the
 * engine's for the same situation. */
#define IW_SHADOW_RULE_LIST(X)                                                                     \
    X(NO_MATCHING_RTR, "No RTR type offered by both the Request and the Reply")                    \
    X(MSN_REPLAY, "QN 0 MSN already completed")                                                    \
    X(QN1_MSN, "QN 1 MSN out of sequence")                                                         \
    X(IRD_EXCEEDED, "Read/Atomic Request beyond the responder's IRD")                              \
    X(QN2_MSN, "QN 2 MSN out of sequence")                                                         \
    X(QN3_MSN, "QN 3 MSN out of sequence")                                                         \
    X(READ_RESP_UNEXPECTED, "Read Response with no Read Request first in line")                    \
    X(ATOMIC_RESP_UNEXPECTED, "Atomic Response with no Atomic Request first in line")              \
    X(READ_RESP_STAG, "Read Response STag is not the Data Sink STag")                              \
    X(READ_RESP_BOUNDS, "Read Response outside the Read Request's sink")                           \
    X(STAG_INVALIDATED, "STag invalidated by a Send with Invalidate")                              \
    X(INVALIDATE_INVALIDATED, "Send with Invalidate of an STag already invalidated")

typedef enum iw_shadow_rule {
    IW_SHADOW_RULE_NONE = 0,
#define IW_X_(name, text) IW_SHADOW_RULE_##name,
    IW_SHADOW_RULE_LIST(IW_X_)
#undef IW_X_
} iw_shadow_rule;

const char *iw_shadow_rule_str(iw_shadow_rule r);
/* Identifier for machine-readable output: the enum suffix, e.g. "IRD_EXCEEDED". */
const char *iw_shadow_rule_id(iw_shadow_rule r);

/* What a verdict rests on beyond the capture (iw_shadow_result.assume). */
/* The receiver met the other direction's messages in capture order: none of
 * its own messages was still in flight towards the capture point (a capture
 * taken at the receiver guarantees it). Only rules that count the receiver's
 * own responses or requests depend on it; a conformant peer never triggers
 * them from any capture point. */
#define IW_SHADOW_ASSUME_ORDER 0x1u
/* The receiver had a receive buffer posted for this Send's MSN, and its
 * MO and length fit in it. Otherwise the untagged buffer checks of RFC
 * 5041 §7.1, which come first (DDP before RDMAP), answer instead, as the
 * engine does (iw_place_untagged_msn, iw_place_untagged_mo): 1/2/0x02 (no
 * buffer for the next MSN), 1/2/0x03 (MSN beyond the posted buffers, or
 * its buffer already completed), 1/2/0x04 (MO past the buffer) or
 * 1/2/0x05 (MO + length past it). */
#define IW_SHADOW_ASSUME_RECV_BUF 0x2u
/* The invalidated STag was not made valid again under the same value by a
 * local registration (RNICs change the key when they re-register). */
#define IW_SHADOW_ASSUME_NO_REREG 0x4u

/* What one IW_SHADOW_ASSUME_* bit means, as a short phrase ("no reply of
 * the receiver's crossed it in flight"); NULL for anything else. */
const char *iw_shadow_assume_str(unsigned bit);

/* Notes: flagged, never a verdict. X(NAME, "RFC section", "text") */
#define IW_SHADOW_NOTE_LIST(X)                                                                     \
    X(AFTER_TERMINATE, "RFC 5040 §5.4; RFC 5041 §7.1",                                             \
      "Receiver already terminated the stream: segment dropped, not judged")                       \
    X(SENT_AFTER_TERMINATE, "RFC 5040 §5.4", "FPDU sent after its sender's own Terminate")         \
    X(RESPONDER_FIRST, "RFC 5044 §7.1.2", "Responder sent an FPDU before receiving a valid one")   \
    X(RTR_MISSING, "RFC 6581 §9.2",                                                                \
      "Initiator's first FPDU after a peer-to-peer startup is not a zero-length RTR")              \
    X(RTR_NOT_NEGOTIATED, "RFC 6581 §9.2", "RTR of a type the Reply does not offer")               \
    X(REPLY_NOT_P2P, "RFC 6581 §9.2", "Peer-to-peer Request answered with A=0")                    \
    X(ORD_EXCEEDS_IRD, "RFC 6581 §9.1",                                                            \
      "Responder ORD exceeds initiator IRD: the initiator raises its IRD or sends 2/0/0x06")       \
    X(MSN_NOT_INITIAL, "RFC 5041 §4.3", "First message on QN 0 does not have MSN 1")               \
    X(MSN_GAP, "RFC 5041 §4.3", "QN 0 MSN is not the previous message's plus one")                 \
    X(MO_GAP, "RFC 5041 §5.2", "MO does not continue the message")                                 \
    X(NO_LAST, "RFC 5041 §5.2", "New QN 0 message before the previous one ended with L=1")         \
    X(ATOMIC_ID_MISMATCH, "RFC 7306 §5.2.2",                                                       \
      "Atomic Response Request Identifier differs from the request's")

typedef enum iw_shadow_note {
#define IW_X_(name, rfc, text) IW_SHADOW_NOTE_BIT_##name,
    IW_SHADOW_NOTE_LIST(IW_X_)
#undef IW_X_
        IW_SHADOW_NOTE_COUNT_
} iw_shadow_note;
#define IW_SHADOW_NOTE(name) (1u << IW_SHADOW_NOTE_BIT_##name)

const char *iw_shadow_note_str(iw_shadow_note n);
const char *iw_shadow_note_rfc(iw_shadow_note n);
const char *iw_shadow_note_id(iw_shadow_note n);

/* What the shadow says about one MPA frame or FPDU. */
typedef struct iw_shadow_result {
    /* IW_VERDICT_TERM: the Terminate the receiver must send (its triple and
     * the engine's RFC section); IW_VERDICT_CLOSE: an MPA startup the
     * receiver must close (Initiator/Initiator); IW_VERDICT_OK otherwise.
     * Stateless verdicts stay the caller's (see iw_shadow_fpdu's pre). */
    iw_verdict verdict;
    iw_shadow_rule rule; /* the rule behind verdict (NONE when ok) */
    unsigned assume;     /* IW_SHADOW_ASSUME_* the verdict rests on */
    uint32_t notes;      /* IW_SHADOW_NOTE() bits */
    bool has_ref;
    uint64_t ref;      /* id of the earlier frame the verdict refers to: the
                             request a response was matched with, the Send with
                             Invalidate; for SENT_AFTER_TERMINATE the sender's
                             Terminate */
    uint64_t ended_in; /* AFTER_TERMINATE: id of the frame that ended the
                             receiver's stream */
    uint32_t expected; /* MSN / MO that was due, or the IRD that was exceeded */
    bool judged;       /* false: not judged at all (its receiver had
                             already terminated, or MPA exited) */
    bool rtr;          /* this FPDU is the initiator's RFC 6581 RTR */
} iw_shadow_result;

/* ---- state (caller-owned; private fields start with _) ---- */

#define IW_SHADOW_REQ_MAX 64 /* outstanding requests tracked per endpoint */
#define IW_SHADOW_INV_MAX 32 /* invalidated STags remembered per endpoint */

typedef struct iw_shadow_req {
    uint64_t id; /* frame of the request */
    bool atomic;
    uint32_t sink_stag; /* Read */
    uint64_t sink_to;
    uint32_t size;
    uint32_t req_id; /* Atomic */
} iw_shadow_req;

typedef struct iw_shadow_inv {
    uint32_t stag;
    uint64_t id; /* frame of the Send with Invalidate */
} iw_shadow_inv;

/* One endpoint, named by the direction it sends on: endpoint e sends
 * direction e and receives direction !e. */
typedef struct iw_shadow_end {
    /* as a sender */
    bool _sent_fpdu;  /* any FPDU sent */
    bool _sent_valid; /* an FPDU that passed the MPA checks */
    bool _term_sent;  /* its Terminate was seen: it MUST NOT send more */
    uint64_t _term_id;
    bool _snd_known;      /* QN 0 sender-side sequence known (notes) */
    bool _snd_from_start; /* ... from the start of Full Operation */
    bool _snd_in_msg;
    uint32_t _snd_msn, _snd_next_mo;
    /* requests it sent (its ORD queue), answered in the other direction */
    bool _req_known;
    unsigned _req_head, _req_count;
    iw_shadow_req _req[IW_SHADOW_REQ_MAX];
    /* as a receiver */
    bool _dead; /* its receive side stopped: it sent or received a
                                Terminate, or must have sent one */
    uint64_t _dead_id;
    bool _q0_known;    /* QN 0: lowest MSN not yet completed, and */
    uint32_t _q0_base; /* which of the next 64 completed already */
    uint64_t _q0_done;
    bool _q1_known, _q2_known, _q3_known;
    uint32_t _q1_msn, _q2_msn, _q3_msn;
    bool _ird_known;
    uint16_t _ird;
    /* its own STags a Send with Invalidate from the peer invalidated */
    unsigned _inv_next, _inv_count;
    iw_shadow_inv _inv[IW_SHADOW_INV_MAX];
} iw_shadow_end;

typedef struct iw_shadow {
    int _init_dir; /* direction of the MPA Request's sender; -1 unknown */
    bool _req_seen, _req_enh;
    iw_mpa_v2 _req_v2;
    bool _exited;        /* MPA exited (reject) or the startup was closed */
    bool _full;          /* Full Operation with the startup in the capture */
    bool _rtr_due;       /* peer-to-peer: the initiator's first FPDU is the RTR */
    unsigned _rtr_offer; /* RTR types the Reply offers: bit 0 Send, 1 Write, 2 Read */
    iw_shadow_end _end[2];
} iw_shadow;

/* Zero state: nothing known (a capture may start anywhere). */
void iw_shadow_init(iw_shadow *sh);

/* An MPA Request or Reply that iw_mpa_rr_decode accepted, sent in direction
 * dir (0 or 1). The Request names the initiator; an accepted Reply (R=0)
 * starts Full Operation with every queue at MSN 1 and no request
 * outstanding, and fixes the IRDs (RFC 6581 §9.1) and the RTR (§9.2).
 * res gets a Terminate verdict when the initiator must answer the Reply with
 * 2/0/0x07 (no common RTR), or a close for Initiator/Initiator. Returns 0 or
 * IW_ERR_INVALID_ARG. */
int iw_shadow_mpa(iw_shadow *sh, unsigned dir, const iw_mpa_rr *rr, uint64_t id,
                  iw_shadow_result *res);

/* One FPDU sent in direction dir, in capture order. m is its decoded ULPDU
 * (iw_rdmap_decode), ulpdu_len the ULPDU's length (the DDP segment). pre is
 * the stateless verdict the FPDU already got, or NULL / ok: the MPA CRC or
 * marker verdict (iw_mpa_fpdu_decode), else iw_rdmap_decode's. With a pre
 * verdict the receiver terminates on this FPDU and res carries no verdict of
 * its own; m may then be NULL. Returns 0 or IW_ERR_INVALID_ARG (dir > 1, no
 * res, or no m without a pre verdict). */
int iw_shadow_fpdu(iw_shadow *sh, unsigned dir, const iw_rdmap_msg *m, size_t ulpdu_len,
                   const iw_verdict *pre, uint64_t id, iw_shadow_result *res);

/* Octets of direction dir are missing or could not be framed (capture gap,
 * framing lost): sequence numbers and outstanding requests become unknown
 * until the stream shows them again. Returns 0 or IW_ERR_INVALID_ARG. */
int iw_shadow_lost(iw_shadow *sh, unsigned dir);

/* Direction of the initiator (the MPA Request's sender), or -1 unknown. */
int iw_shadow_initiator(const iw_shadow *sh);

IW_END_DECLS
#endif
