/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Errors: RFC 6580 Terminate triples, "close the stream" outcomes, and the
 * library's own negative return codes. The three never mix.
 *
 * - A peer's violation is an iw_verdict: either a Terminate triple
 *   (iw_term_code, laid out as the top 16 bits of the Terminate Control field,
 *   RFC 5040 §4.8: layer 4 bits, etype 4 bits, code 8 bits) or an
 *   iw_close_reason where an RFC says to close the connection instead
 *   (mostly MPA startup, RFC 5044 §7.1).
 * - Library outcomes (need more bytes, no room, ...) are negative IW_ERR_*
 *   values returned by functions.
 *
 * Both lists are written once, below, as X-macros; the enums, names, RFC
 * sections and any value tables (plugin, runner) are generated from them. */
#ifndef IWARP_ERR_H
#define IWARP_ERR_H

#include <iwarp/types.h>

IW_BEGIN_DECLS

/* X(NAME, layer, etype, code, "RFC section", "registry name")
 * Registry names are RFC 6580 §3.1-3.3 (codes 5-7 of MPA: RFC 6581 §8,
 * named as IANA registered them in RFC 6581 §11).
 * Where the registry gives "ALL" codes we use code 0x00. The two Local
 * Catastrophic types carry their layer (as RFC 5040 §7.1's table names them):
 * the registry's "Local Catastrophic" and "Local Catastrophic Error" differ
 * by one word. */
#define IW_TERM_LIST(X)                                                                            \
    X(RDMAP_LOCAL_CATASTROPHIC, 0x0, 0x0, 0x00, "RFC 5040 §4.8", "RDMA Local Catastrophic Error")  \
    X(RDMAP_INVALID_STAG, 0x0, 0x1, 0x00, "RFC 5040 §4.8",                                         \
      "Remote Protection Error / Invalid Steering Tag")                                            \
    X(RDMAP_BASE_BOUNDS, 0x0, 0x1, 0x01, "RFC 5040 §4.8",                                          \
      "Remote Protection Error / Base or bounds violation")                                        \
    X(RDMAP_ACCESS_RIGHTS, 0x0, 0x1, 0x02, "RFC 5040 §4.8",                                        \
      "Remote Protection Error / Access rights violation")                                         \
    X(RDMAP_STAG_NOT_ASSOC, 0x0, 0x1, 0x03, "RFC 5040 §4.8",                                       \
      "Remote Protection Error / Steering Tag not associated with RDMAP Stream")                   \
    X(RDMAP_TO_WRAP, 0x0, 0x1, 0x04, "RFC 5040 §4.8",                                              \
      "Remote Protection Error / Tagged Offset wrap")                                              \
    X(RDMAP_PROT_CANT_INVALIDATE, 0x0, 0x1, 0x09, "RFC 5040 §4.8",                                 \
      "Remote Protection Error / Steering Tag cannot be invalidated")                              \
    X(RDMAP_PROT_UNSPECIFIED, 0x0, 0x1, 0xFF, "RFC 5040 §4.8",                                     \
      "Remote Protection Error / Unspecified Error")                                               \
    X(RDMAP_INVALID_VERSION, 0x0, 0x2, 0x05, "RFC 5040 §4.8",                                      \
      "Remote Operation Error / Invalid RDMAP version")                                            \
    X(RDMAP_UNEXPECTED_OPCODE, 0x0, 0x2, 0x06, "RFC 5040 §4.8",                                    \
      "Remote Operation Error / Unexpected OpCode")                                                \
    X(RDMAP_CATASTROPHIC_STREAM, 0x0, 0x2, 0x07, "RFC 5040 §4.8",                                  \
      "Remote Operation Error / Catastrophic error, localized to RDMAP Stream")                    \
    X(RDMAP_CATASTROPHIC_GLOBAL, 0x0, 0x2, 0x08, "RFC 5040 §4.8",                                  \
      "Remote Operation Error / Catastrophic error, global")                                       \
    X(RDMAP_OP_CANT_INVALIDATE, 0x0, 0x2, 0x09, "RFC 5040 §4.8",                                   \
      "Remote Operation Error / Steering Tag cannot be Invalidated")                               \
    X(RDMAP_OP_UNSPECIFIED, 0x0, 0x2, 0xFF, "RFC 5040 §4.8",                                       \
      "Remote Operation Error / Unspecified Error")                                                \
    X(DDP_LOCAL_CATASTROPHIC, 0x1, 0x0, 0x00, "RFC 5041 §7.2", "DDP Local Catastrophic")           \
    X(DDP_T_INVALID_STAG, 0x1, 0x1, 0x00, "RFC 5041 §7.2",                                         \
      "Tagged Buffer Error / Invalid Steering Tag")                                                \
    X(DDP_T_BASE_BOUNDS, 0x1, 0x1, 0x01, "RFC 5041 §7.2",                                          \
      "Tagged Buffer Error / Base or bounds violation")                                            \
    X(DDP_T_STAG_NOT_ASSOC, 0x1, 0x1, 0x02, "RFC 5041 §7.2",                                       \
      "Tagged Buffer Error / Steering Tag not associated with DDP Stream")                         \
    X(DDP_T_TO_WRAP, 0x1, 0x1, 0x03, "RFC 5041 §7.2", "Tagged Buffer Error / Tagged Offset wrap")  \
    X(DDP_T_INVALID_VERSION, 0x1, 0x1, 0x04, "RFC 5041 §7.2",                                      \
      "Tagged Buffer Error / Invalid DDP version")                                                 \
    X(DDP_UT_INVALID_QN, 0x1, 0x2, 0x01, "RFC 5041 §7.2",                                          \
      "Untagged Buffer Error / Invalid Queue Number")                                              \
    X(DDP_UT_NO_BUFFER, 0x1, 0x2, 0x02, "RFC 5041 §7.2",                                           \
      "Untagged Buffer Error / Invalid Message Sequence Number - no buffer available")             \
    X(DDP_UT_MSN_RANGE, 0x1, 0x2, 0x03, "RFC 5041 §7.2",                                           \
      "Untagged Buffer Error / Invalid Message Sequence Number - Message Sequence Number range "   \
      "is not valid")                                                                              \
    X(DDP_UT_INVALID_MO, 0x1, 0x2, 0x04, "RFC 5041 §7.2",                                          \
      "Untagged Buffer Error / Invalid Message Offset")                                            \
    X(DDP_UT_TOO_LONG, 0x1, 0x2, 0x05, "RFC 5041 §7.2",                                            \
      "Untagged Buffer Error / DDP Message too long for available buffer")                         \
    X(DDP_UT_INVALID_VERSION, 0x1, 0x2, 0x06, "RFC 5041 §7.2",                                     \
      "Untagged Buffer Error / Invalid DDP version")                                               \
    X(LLP_CONN_LOST, 0x2, 0x0, 0x01, "RFC 5044 §8",                                                \
      "MPA Error / TCP connection closed, terminated, or lost")                                    \
    X(LLP_MPA_CRC, 0x2, 0x0, 0x02, "RFC 5044 §8", "MPA Error / MPA CRC Error")                     \
    X(LLP_MPA_MARKER, 0x2, 0x0, 0x03, "RFC 5044 §8",                                               \
      "MPA Error / MPA Marker and ULPDU Length field mismatch")                                    \
    X(LLP_MPA_INVALID_RR, 0x2, 0x0, 0x04, "RFC 5044 §8",                                           \
      "MPA Error / Invalid MPA Request Frame or MPA Response Frame")                               \
    X(LLP_MPA_LOCAL_CATASTROPHIC, 0x2, 0x0, 0x05, "RFC 6581 §8",                                   \
      "MPA Error / Local catastrophic error")                                                      \
    X(LLP_MPA_INSUFFICIENT_IRD, 0x2, 0x0, 0x06, "RFC 6581 §8",                                     \
      "MPA Error / Insufficient IRD resources")                                                    \
    X(LLP_MPA_NO_MATCHING_RTR, 0x2, 0x0, 0x07, "RFC 6581 §8", "MPA Error / No matching RTR option")

#define IW_TERM_TRIPLE(layer, etype, code) ((uint16_t)((layer) << 12 | (etype) << 8 | (code)))

typedef enum iw_term_code {
#define IW_X_(name, l, e, c, rfc, text) IW_TERM_##name = IW_TERM_TRIPLE(l, e, c),
    IW_TERM_LIST(IW_X_)
#undef IW_X_
} iw_term_code;

static inline unsigned iw_term_layer(uint16_t t) { return t >> 12 & 0xF; }
static inline unsigned iw_term_etype(uint16_t t) { return t >> 8 & 0xF; }
static inline unsigned iw_term_ecode(uint16_t t) { return t & 0xFF; }

/* Registry name of a triple. Triples outside the registry get a generic
 * "Unassigned" name rather than NULL, since they arrive off the wire. */
const char *iw_term_str(uint16_t triple);
/* RFC section that defines the triple, or NULL when it is not registered. */
const char *iw_term_rfc(uint16_t triple);
/* True when the triple is in the RFC 6580 registry (ALL-code types match any code). */
bool iw_term_is_registered(uint16_t triple);

/* X(NAME, "RFC section", "reason") — outcomes where the RFC says to close
 * the connection (or exit MPA) rather than send a Terminate. */
#define IW_CLOSE_LIST(X)                                                                           \
    X(MPA_BAD_KEY, "RFC 5044 §7.1.2", "MPA key does not match the expected Request/Reply key")     \
    X(MPA_BAD_REV, "RFC 5044 §7.1.1",                                                              \
      "MPA revision is not one this receiver can interoperate with")                               \
    X(MPA_PD_TOO_LONG, "RFC 5044 §7.1.1", "PD_Length is greater than 512")                         \
    X(MPA_PD_MISMATCH, "RFC 5044 §7.1.2", "PD_Length does not match the Private Data present")     \
    X(MPA_V2_PD_SHORT, "RFC 6581 §6",                                                              \
      "S=1 but the Private Data is shorter than the 4-octet enhanced data")                        \
    X(MPA_INITIATOR_INITIATOR, "RFC 5044 §7.1.2",                                                  \
      "MPA Request received where a Reply was expected")                                           \
    X(MPA_TIMEOUT, "RFC 5044 §7.1.2", "no MPA Request or Reply within the startup timeout")        \
    X(MPA_REJECTED, "RFC 5044 §7.1.2",                                                             \
      "MPA Reply has R=1: MPA exits and leaves the TCP stream to the ULP")                         \
    X(FRAMING_LOST, "RFC 5044 §6",                                                                 \
      "FPDU framing lost: no FPDU with a valid CRC locates the next one")                          \
    X(TERMINATED, "RFC 5040 §6.2.1", "RDMAP stream terminated: a Terminate was sent or received")  \
    X(LLP_CLOSED, "RFC 5044 §8", "the TCP stream ended (FIN, reset or failure)")                   \
    X(ULP_CLOSE, "RFC 5040 §6.2", "orderly close requested by the ULP")                            \
    X(ULPDU_TOO_LONG, "RFC 5044 §4.5",                                                             \
      "ULPDU_Length exceeds the largest ULPDU this receiver accepts")                              \
    X(LOCAL_ABORT, "RFC 5040 §6.2",                                                                \
      "the memory under an FPDU partly handed to TCP was deregistered or invalidated: the stream " \
      "is "                                                                                        \
      "torn down without a Terminate (LLP Abortive Termination)")

typedef enum iw_close_reason {
    IW_CLOSE_NONE = 0,
#define IW_X_(name, rfc, text) IW_CLOSE_##name,
    IW_CLOSE_LIST(IW_X_)
#undef IW_X_
} iw_close_reason;

const char *iw_close_str(iw_close_reason r);
const char *iw_close_rfc(iw_close_reason r);
/* Identifier for machine-readable output: the enum suffix, e.g. "MPA_BAD_KEY". */
const char *iw_close_id(iw_close_reason r);

/* The outcome of checking one frame: accepted, answered with a Terminate, or
 * a close. `rfc` names the section of the rule that fired (may be more
 * specific than the registry entry's section). */
typedef enum iw_verdict_kind {
    IW_VERDICT_OK = 0,
    IW_VERDICT_TERM,
    IW_VERDICT_CLOSE
} iw_verdict_kind;
typedef struct iw_verdict {
    iw_verdict_kind kind;
    uint16_t term;         /* IW_VERDICT_TERM: the triple */
    iw_close_reason close; /* IW_VERDICT_CLOSE */
    const char *rfc;       /* section of the rule that fired; NULL when ok */
} iw_verdict;

static inline iw_verdict iw_verdict_ok(void) {
    iw_verdict v = {IW_VERDICT_OK, 0, IW_CLOSE_NONE, NULL};
    return v;
}
static inline iw_verdict iw_verdict_term(uint16_t t, const char *rfc) {
    iw_verdict v = {IW_VERDICT_TERM, t, IW_CLOSE_NONE, rfc};
    return v;
}
static inline iw_verdict iw_verdict_close(iw_close_reason r, const char *rfc) {
    iw_verdict v = {IW_VERDICT_CLOSE, 0, r, rfc};
    return v;
}

/* Library return codes: negative, never a triple. Above IW_ERR_FATAL the
 * call failed and nothing changed; at or below it (iw_err_is_fatal) the
 * object that returned it can only be freed, as after nghttp2's fatal codes. */
typedef enum iw_err {
    IW_ERR_NEED_MORE = -501,   /* input ends before the item does */
    IW_ERR_NOBUF = -502,       /* output buffer too small */
    IW_ERR_INVALID_ARG = -503, /* caller passed a value the API forbids */
    IW_ERR_PROTO = -504,       /* input violates the protocol; details in an iw_verdict */
    IW_ERR_FATAL = -900,       /* an internal invariant failed */
    IW_ERR_NOMEM = -901,       /* the allocator failed (iw_mem) */
    IW_ERR_CALLBACK = -902     /* a callback returned non-zero (iw_callbacks) */
} iw_err;

const char *iw_strerror(int err);

/* Things worth flagging that the RFCs say a receiver ignores (reserved bits,
 * non-zero PAD, ...): reported, never a verdict. X(NAME, "RFC section", "text") */
#define IW_NOTE_LIST(X)                                                                            \
    X(MPA_RES_BITS, "RFC 5044 §7.1.1", "MPA Res bits not zero")                                    \
    X(MPA_R_IN_REQUEST, "RFC 5044 §7.1.1", "R bit set in an MPA Request")                          \
    X(MPA_S_WITH_REV1, "RFC 6581 §6", "S bit set with Rev 1: RFC 6581 features need Rev >= 2")     \
    X(MPA_V2_RTR_WITHOUT_P2P, "RFC 6581 §9", "B/C/D set with A=0: they MUST be 0 and are ignored") \
    X(MPA_V2_P2P_NO_RTR, "RFC 6581 §9.2", "A=1 but no RTR option (B/C/D) is set")                  \
    X(FPDU_PAD_NONZERO, "RFC 5044 §4.1", "PAD octets not zero")                                    \
    X(MARKER_RES_NONZERO, "RFC 5044 §4.2", "Marker RESERVED field not zero")                       \
    X(MARKER_PTR_LOW_BITS, "RFC 5044 §4.2", "Marker FPDUPTR low 2 bits not zero")                  \
    X(DDP_RSVD_BITS, "RFC 5041 §4.1", "DDP Control reserved bits not zero")                        \
    X(RDMAP_RSV_BITS, "RFC 5040 §4.1", "RDMAP Control reserved bits not zero")                     \
    X(RDMAP_INV_STAG_NONZERO, "RFC 5040 §4.3", "Invalidate STag field not zero for this opcode")   \
    X(TERM_RSVD_BITS, "RFC 5040 §4.8", "Terminate reserved bits not zero")                         \
    X(TERM_UNREGISTERED, "RFC 6580 §3", "Terminate carries a triple not in the RFC 6580 registry") \
    X(TERM_TRAILING, "RFC 5040 §4.8",                                                              \
      "Terminate has octets after the fields its M/D/R bits announce")                             \
    X(TERM_SIW_LAYOUT, "RFC 5040 §4.8",                                                            \
      "Terminate Control in Linux siw's little-endian bitfield order, read that way")              \
    X(ATOMIC_RSVD_BITS, "RFC 7306 §5.2.1", "Atomic Request reserved bits not zero")                \
    X(CONTROL_SEGMENTED, "RFC 5041 §5.2", "control message split over segments: header not decoded")

typedef enum iw_note {
#define IW_X_(name, rfc, text) IW_NOTE_BIT_##name,
    IW_NOTE_LIST(IW_X_)
#undef IW_X_
        IW_NOTE_COUNT_
} iw_note;
#define IW_NOTE(name) (1u << IW_NOTE_BIT_##name)

const char *iw_note_str(iw_note n);
const char *iw_note_rfc(iw_note n);
const char *iw_note_id(iw_note n);
static inline bool iw_err_is_fatal(int err) { return err <= IW_ERR_FATAL; }

IW_END_DECLS
#endif
