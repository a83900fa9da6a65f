/* SPDX-License-Identifier: GPL-2.0-or-later */
/* DDP over SCTP: the payloads of RFC 5043's SCTP DATA chunks and its
 * Adaptation Layer Indication; enhanced session control, RFC 6581 §7.
 *
 * Pure codecs, like <iwarp/mpa.h>: decoders read a const span and point into
 * it (zero-copy), check every length before reading, and say what is wrong
 * with bad input. SCTP keeps message boundaries, so a span is one whole
 * DATA chunk payload (after SCTP reassembly); the PPID says which kind it is
 * (§5.2). The DDP segment inside a DDP Segment Chunk is RFC 5041's, decoded
 * by <iwarp/ddp.h> and <iwarp/rdmap.h>: nothing here parses it. */
#ifndef IW_SCTP_H
#define IW_SCTP_H

#include <iwarp/mpa.h>

IW_BEGIN_DECLS

/* RFC 5043 §5.1: the Adaptation Layer Indication parameter (RFC 5061) in
 * INIT or INIT-ACK, and the value assigned to DDP. */
#define IW_SCTP_ADAPT_PARAM_TYPE 0xC006
#define IW_SCTP_ADAPT_PARAM_LEN 8
#define IW_SCTP_ADAPT_DDP 0x00000001u

/* §5.2: Payload Protocol Identifiers. */
#define IW_SCTP_PPID_DDP_SEGMENT 16u
#define IW_SCTP_PPID_DDP_CONTROL 17u

#define IW_SCTP_SSN_LEN 2      /* §5.2.1 DDP-SSN, first in every chunk */
#define IW_SCTP_CTRL_HDR_LEN 4 /* §5.2.3 DDP-SSN + Function Code */
#define IW_SCTP_PD_MAX 512     /* §5.2.3; RFC 6581 §7 counts the enhanced data in */

/* RFC 6580 §3.5 registry, plus RFC 6581 §7's enhanced codes:
 * X(NAME, code, "RFC section", "registry name"). */
#define IW_SCTP_FC_LIST(X)                                                                         \
    X(INITIATE, 0x0001, "RFC 5043 §5.2.3", "DDP Stream Session Initiate")                          \
    X(ACCEPT, 0x0002, "RFC 5043 §5.2.3", "DDP Stream Session Accept")                              \
    X(REJECT, 0x0003, "RFC 5043 §5.2.3", "DDP Stream Session Reject")                              \
    X(TERMINATE, 0x0004, "RFC 5043 §5.2.3", "DDP Stream Session Terminate")                        \
    X(ENH_INITIATE, 0x0005, "RFC 6581 §7", "Enhanced DDP Stream Session Initiate")                 \
    X(ENH_ACCEPT, 0x0006, "RFC 6581 §7", "Enhanced DDP Stream Session Accept")                     \
    X(ENH_REJECT, 0x0007, "RFC 6581 §7", "Enhanced DDP Stream Session Reject")                     \
    X(EXPERIMENTAL, 0xFFFF, "RFC 6580 §3.5", "Reserved (Experimental)")

typedef enum iw_sctp_fc {
#define IW_X_(n, c, rfc, s) IW_SCTP_FC_##n = c,
    IW_SCTP_FC_LIST(IW_X_)
#undef IW_X_
} iw_sctp_fc;

/* Registry name and section of a function code; NULL when unassigned. */
const char *iw_sctp_fc_str(uint16_t fc);
const char *iw_sctp_fc_rfc(uint16_t fc);

/* RFC 6581 §7: Enhanced Initiate, Accept and Reject carry the 4-octet
 * enhanced data (IRD/ORD, peer-to-peer, RTR types) first in their Private
 * Data, as an enhanced MPA frame does (§9). */
static inline bool iw_sctp_fc_enhanced(uint16_t fc) {
    return fc == IW_SCTP_FC_ENH_INITIATE || fc == IW_SCTP_FC_ENH_ACCEPT ||
           fc == IW_SCTP_FC_ENH_REJECT;
}

/* What is wrong with a chunk payload (decoders return IW_ERR_PROTO). The
 * session rules decide the consequence: a chunk that fits no legal sequence
 * terminates the DDP Stream Session (RFC 5043 §6.1).
 * X(NAME, "RFC section", "text"). */
#define IW_SCTP_PROBLEM_LIST(X)                                                                    \
    X(SEG_SHORT, "RFC 5043 §5.2.2", "DDP Segment Chunk shorter than its DDP-SSN")                  \
    X(CTRL_SHORT, "RFC 5043 §5.2.3",                                                               \
      "Session Control chunk shorter than its DDP-SSN and Function Code")                          \
    X(FC_UNASSIGNED, "RFC 6580 §3.5", "Function Code not in the registry")                         \
    X(PD_TOO_LONG, "RFC 5043 §5.2.3", "Private Data longer than 512 octets")                       \
    X(TERM_WITH_PD, "RFC 5043 §5.2.3", "Private Data in a DDP Stream Session Terminate")           \
    X(ENH_PD_SHORT, "RFC 6581 §7",                                                                 \
      "enhanced Function Code with Private Data shorter than the 4-octet enhanced data")           \
    X(ADAPT_BAD_TYPE, "RFC 5043 §5.1", "parameter type is not Adaptation Layer Indication")        \
    X(ADAPT_BAD_LEN, "RFC 5043 §5.1", "Adaptation Layer Indication length is not 8")

typedef enum iw_sctp_problem {
    IW_SCTP_PROBLEM_NONE = 0,
#define IW_X_(n, rfc, s) IW_SCTP_PROBLEM_##n,
    IW_SCTP_PROBLEM_LIST(IW_X_)
#undef IW_X_
} iw_sctp_problem;

const char *iw_sctp_problem_str(iw_sctp_problem p);
const char *iw_sctp_problem_rfc(iw_sctp_problem p);

/* ---- DDP Segment Chunk (PPID 16, §5.2.2) ---- */

typedef struct iw_sctp_seg {
    uint16_t ssn;       /* DDP-SSN (§5.2.1) */
    const uint8_t *ddp; /* the DDP segment (RFC 5041), ddp_len octets */
    size_t ddp_len;
} iw_sctp_seg;

/* Returns len, or IW_ERR_PROTO (*why = SEG_SHORT). */
iw_ssize iw_sctp_seg_decode(iw_sctp_seg *s, const uint8_t *buf, size_t len, iw_sctp_problem *why);

/* DDP-SSN, then the DDP segment given as header + payload (either may be
 * empty). Returns the chunk length or IW_ERR_NOBUF. */
iw_ssize iw_sctp_seg_encode(uint8_t *out, size_t outlen, uint16_t ssn, const uint8_t *hdr,
                            size_t hl, const uint8_t *pay, size_t pl);

/* ---- DDP Stream Session Control (PPID 17, §5.2.3) ---- */

typedef struct iw_sctp_ctrl {
    uint16_t ssn;
    uint16_t fc;       /* iw_sctp_fc, or unassigned as received */
    bool enhanced;     /* enhanced function code with its data: v2 is valid */
    iw_mpa_v2 v2;      /* RFC 6581 §7 (the layout of RFC 6581 §9) */
    const uint8_t *pd; /* the whole Private Data, pd_len octets */
    uint16_t pd_len;
    const uint8_t *ulp_pd; /* what the ULP gets (after the enhanced data) */
    uint16_t ulp_pd_len;
    uint32_t notes; /* IW_NOTE() bits of the enhanced data */
} iw_sctp_ctrl;

/* Returns len, or IW_ERR_PROTO with *why; on IW_ERR_PROTO the fields read so
 * far are filled in for display. The Experimental code decodes (its
 * Private Data is not judged); whether a code is legal where it came is
 * the session's rule (§6). */
iw_ssize iw_sctp_ctrl_decode(iw_sctp_ctrl *c, const uint8_t *buf, size_t len, iw_sctp_problem *why);

/* Encodes ssn, fc, for an enhanced code v2 first, then ulp_pd/ulp_pd_len
 * (pd/pd_len, enhanced and notes are ignored). IW_ERR_INVALID_ARG: Private
 * Data over 512 octets, Private Data on a Terminate, IRD/ORD over 14 bits;
 * IW_ERR_NOBUF. Unassigned codes encode as given (for tests). */
iw_ssize iw_sctp_ctrl_encode(uint8_t *out, size_t outlen, const iw_sctp_ctrl *c);

/* RFC 6581 §7: the MPA startup frame a Session Control message is
 * equivalent to: Initiate a Request, Accept a Reply with R=0, Reject a
 * Reply with R=1; the enhanced codes are Rev 2 frames with S=1 and the
 * same enhanced data; the ULP's Private Data as is. M=0 and C=0: no
 * markers and no MPA CRC over SCTP (its own CRC32c covers the chunk).
 * false for a code with no equivalent (Terminate, Experimental,
 * unassigned). rr points into c's Private Data. */
bool iw_sctp_ctrl_as_mpa(const iw_sctp_ctrl *c, iw_mpa_rr *rr);
/* The other way (same RFC 6581 §7 table): the Session Control message a
 * startup frame is sent as, for iw_sctp_ctrl_encode (ulp_pd and v2 from
 * rr; M, C, Rev and the key have no place over SCTP). */
void iw_sctp_ctrl_from_mpa(const iw_mpa_rr *rr, uint16_t ssn, iw_sctp_ctrl *c);

/* ---- DDP-SSN order (§5.2.1, §6.1, §10) ---- */

/* Where a received DDP-SSN stands against `next`, the lowest one not yet
 * taken in this session direction: chunks are taken in DDP-SSN order,
 * which starts at 0 with no gaps, while SCTP delivers them unordered. One
 * ahead within the receiver's `window` waits for the gap before it to
 * fill; one behind `next` was used already; one further ahead cannot be
 * accounted for by chunks still in flight ("An invalid DDP-SSN MAY result
 * in termination", §10). Whether one ahead repeats one already waiting is
 * the caller's to know. One rule for the engine (iw_sctp_conn) and the
 * Wireshark plugin. */
typedef enum iw_sctp_ssn_place {
    IW_SCTP_SSN_NEXT = 0, /* the one due */
    IW_SCTP_SSN_AHEAD,    /* within the window: waits */
    IW_SCTP_SSN_STALE,    /* behind: already used */
    IW_SCTP_SSN_BEYOND    /* past the window */
} iw_sctp_ssn_place;

static inline iw_sctp_ssn_place iw_sctp_ssn_place_of(uint16_t next, uint16_t ssn, uint32_t window) {
    uint16_t ahead = (uint16_t)(ssn - next);
    return ahead == 0         ? IW_SCTP_SSN_NEXT
           : ahead >= 0x8000u ? IW_SCTP_SSN_STALE
           : ahead >= window  ? IW_SCTP_SSN_BEYOND
                              : IW_SCTP_SSN_AHEAD;
}

/* ---- Adaptation Layer Indication (INIT / INIT-ACK parameter, §5.1) ---- */

/* Decodes one parameter TLV at buf: returns its length (8), IW_ERR_NEED_MORE
 * when shorter than 4, or IW_ERR_PROTO (ADAPT_BAD_TYPE, ADAPT_BAD_LEN).
 * *ind is the indication; DDP is IW_SCTP_ADAPT_DDP. */
iw_ssize iw_sctp_adapt_decode(uint32_t *ind, const uint8_t *buf, size_t len, iw_sctp_problem *why);
iw_ssize iw_sctp_adapt_encode(uint8_t *out, size_t outlen, uint32_t ind);

IW_END_DECLS
#endif
