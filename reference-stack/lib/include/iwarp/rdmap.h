/* SPDX-License-Identifier: GPL-2.0-or-later */
/* RDMAP: RFC 5040 §4 headers and RFC 7306 extensions (atomics, immediate
 * data). Pure codecs over one DDP segment (an MPA ULPDU). */
#ifndef IWARP_RDMAP_H
#define IWARP_RDMAP_H

#include <iwarp/ddp.h>
#include <iwarp/err.h>
#include <iwarp/types.h>

IW_BEGIN_DECLS

#define IW_RDMAP_VERSION 1 /* RFC 5040 §4.1: RV = 01b */
#define IW_RDMAP_CTRL_RV 0xC0
#define IW_RDMAP_CTRL_RSV 0x30
#define IW_RDMAP_CTRL_OPCODE 0x0F

/* RFC 5040 §4.2 Fig. 5, RFC 7306 §4, registry RFC 6580 §3.4 / RFC 7306 §10. */
#define IW_RDMAP_OPCODE_LIST(X)                                                                    \
    X(WRITE, 0x0, "RDMA Write")                                                                    \
    X(READ_REQ, 0x1, "RDMA Read Request")                                                          \
    X(READ_RESP, 0x2, "RDMA Read Response")                                                        \
    X(SEND, 0x3, "Send")                                                                           \
    X(SEND_INV, 0x4, "Send with Invalidate")                                                       \
    X(SEND_SE, 0x5, "Send with Solicited Event")                                                   \
    X(SEND_SE_INV, 0x6, "Send with Solicited Event and Invalidate")                                \
    X(TERMINATE, 0x7, "Terminate")                                                                 \
    X(IMM, 0x8, "Immediate Data")                                                                  \
    X(IMM_SE, 0x9, "Immediate Data with Solicited Event")                                          \
    X(ATOMIC_REQ, 0xA, "Atomic Request")                                                           \
    X(ATOMIC_RESP, 0xB, "Atomic Response")

typedef enum iw_rdmap_opcode {
#define IW_X_(name, val, text) IW_OP_##name = val,
    IW_RDMAP_OPCODE_LIST(IW_X_)
#undef IW_X_
} iw_rdmap_opcode;

/* Name of an opcode; "Reserved" / "Reserved (Experimental)" for 0xC-0xF. */
const char *iw_rdmap_opcode_str(unsigned opcode);

/* Untagged queue numbers (RFC 5040 §3.1, RFC 7306 §4). */
#define IW_QN_SEND 0
#define IW_QN_READ_REQ 1 /* also Atomic Requests */
#define IW_QN_TERMINATE 2
#define IW_QN_ATOMIC_RESP 3

#define IW_RDMAP_READ_REQ_LEN 28    /* RFC 5040 §4.4 */
#define IW_RDMAP_TERM_CTRL_LEN 4    /* RFC 5040 §4.8 */
#define IW_RDMAP_IMM_LEN 8          /* RFC 7306 §6.2 */
#define IW_RDMAP_ATOMIC_REQ_LEN 52  /* RFC 7306 §5.2.1 */
#define IW_RDMAP_ATOMIC_RESP_LEN 12 /* RFC 7306 §5.2.2 (Fig. 6) */

#define IW_ATOMIC_FETCH_ADD 0x0 /* RFC 7306 §5.2.1 Fig. 5 */
#define IW_ATOMIC_CMP_SWAP 0x2

typedef struct iw_rdmap_read_req {
    uint32_t sink_stag;
    uint64_t sink_to;
    uint32_t read_size; /* RDMARDSZ */
    uint32_t src_stag;
    uint64_t src_to;
} iw_rdmap_read_req;

typedef struct iw_rdmap_term {
    uint8_t layer, etype, ecode;
    bool m;        /* DDP Segment Length valid */
    bool d;        /* DDP header included */
    bool r;        /* RDMAP (Read Request) header included */
    uint16_t rsvd; /* reserved 13 bits as received */
    uint16_t ddp_seg_len;
    iw_ddp_hdr ddp; /* d: sized by its own T bit (RFC 5040 §4.8) */
    const uint8_t *ddp_raw;
    size_t ddp_raw_len;
    iw_rdmap_read_req rreq; /* r */
    bool siw_layout;        /* the control is in Linux siw's bit order (layer and
                         * etype nibbles swapped, M/D/R in the low bits of its
                         * third octet): set by iw_rdmap_term_siw, the fields
                         * above then read that way; the encoder writes it */
    const uint8_t *raw;     /* decode: the Terminate header as received, to the */
    size_t raw_len;         /* segment's end (for iw_rdmap_term_siw) */
} iw_rdmap_term;

typedef struct iw_rdmap_atomic_req {
    uint32_t rsvd; /* 28 reserved bits */
    uint8_t aopcode;
    uint32_t req_id;
    uint32_t stag;
    uint64_t to;
    uint64_t add_swap;
    uint64_t add_swap_mask;
    uint64_t compare;
    uint64_t compare_mask;
} iw_rdmap_atomic_req;

typedef struct iw_rdmap_atomic_resp {
    uint32_t req_id;
    uint64_t orig;
} iw_rdmap_atomic_resp;

/* One DDP segment decoded as RDMAP. */
typedef struct iw_rdmap_msg {
    iw_ddp_hdr ddp;
    uint8_t rv;  /* RDMAP version */
    uint8_t rsv; /* RDMAP Control reserved bits */
    uint8_t opcode;
    bool has_hdr;  /* the opcode's own header was decoded from this segment */
    bool deferred; /* the IW_ERR_PROTO verdict is certain whatever the receiver's
                     * state, but a receiver meets it after its stateful checks
                     * (MSN, IRD, STag), whose own Terminate may come first:
                     * a misaligned Atomic Request (RFC 7306 §8.2) */
    union {
        iw_rdmap_read_req read_req;
        iw_rdmap_term term;
        iw_rdmap_atomic_req atomic_req;
        iw_rdmap_atomic_resp atomic_resp;
        uint8_t imm[IW_RDMAP_IMM_LEN];
    } u;
    const uint8_t *payload; /* ULP payload (Write, Read Response, Send*) */
    size_t payload_len;
    size_t seg_len; /* whole DDP segment, header included */
    uint32_t notes; /* IW_NOTE() bits */
} iw_rdmap_msg;

/* Decode one DDP segment (an MPA ULPDU) and apply every check that needs no
 * receiver state, in the order a receiver meets them: DDP header and version
 * (RFC 5041 §7.2), QN (§7.1), RDMAP version and opcode (RFC 5040 §7.2), the
 * opcode's header and size (RFC 5040 §4.4, §4.8; RFC 7306 §5, §6.3). Returns
 * the segment length, or IW_ERR_PROTO with *v = the Terminate a conformant
 * receiver must send (m holds whatever was decoded). Checks that need
 * registered memory or posted buffers belong to the engine; a verdict that
 * is certain but ordered after them sets m->deferred (the header is then
 * decoded in full). */
iw_ssize iw_rdmap_decode(iw_rdmap_msg *m, const uint8_t *seg, size_t len, iw_verdict *v);

/* Decoders for people (iwarp-decode, the plugin), never receivers: a
 * decoded Terminate (m from iw_rdmap_decode) whose control makes no sense
 * as RFC 5040 §4.8 lays it out (unregistered triple or reserved bits set)
 * but does in Linux siw's bit order (drivers/infiniband/sw/siw/iwarp.h
 * declares it a bitfield, little-endian hosts fill it from the low bit),
 * with every sub-field that order announces present, is re-read that way:
 * m->u.term then holds siw's reading (siw_layout set, copied headers
 * decoded under it) and m->notes TERM_SIW_LAYOUT instead of the RFC
 * reading's TERM_UNREGISTERED / TERM_RSVD_BITS. Returns whether it did. */
bool iw_rdmap_term_siw(iw_rdmap_msg *m);

/* Header encoders: write the RDMAP header that follows the DDP header.
 * Each returns octets written, IW_ERR_NOBUF or (a field wider than its
 * bits) IW_ERR_INVALID_ARG. Every encoder in this header checks its
 * arguments, then the output size, before the first write: a refusal leaves
 * out untouched. */
iw_ssize iw_rdmap_encode_read_req(uint8_t *out, size_t outlen, const iw_rdmap_read_req *r);
iw_ssize iw_rdmap_encode_atomic_req(uint8_t *out, size_t outlen, const iw_rdmap_atomic_req *a);
iw_ssize iw_rdmap_encode_atomic_resp(uint8_t *out, size_t outlen, const iw_rdmap_atomic_resp *a);
/* Terminate header: control, then DDP Segment Length when m or d, the
 * copied DDP header (t->ddp_raw, 14 or 18 octets, sized by its T bit) when d,
 * the Read Request header when r. */
iw_ssize iw_rdmap_encode_term(uint8_t *out, size_t outlen, const iw_rdmap_term *t);

/* A current-version message with no other field set: untagged on QN qn
 * (RFC 5041 §4.3), or tagged to stag/to (§4.2). For callers that build
 * messages to encode (generators, tests, the runner). */
static inline iw_rdmap_msg iw_rdmap_msg_untagged(unsigned opcode, uint32_t qn, uint32_t msn,
                                                 uint32_t mo, bool last) {
    iw_rdmap_msg m = {0};
    m.rv = IW_RDMAP_VERSION;
    m.opcode = (uint8_t)opcode;
    m.ddp.dv = IW_DDP_VERSION;
    m.ddp.last = last;
    m.ddp.qn = qn;
    m.ddp.msn = msn;
    m.ddp.mo = mo;
    return m;
}

static inline iw_rdmap_msg iw_rdmap_msg_tagged(unsigned opcode, uint32_t stag, uint64_t to,
                                               bool last) {
    iw_rdmap_msg m = {0};
    m.rv = IW_RDMAP_VERSION;
    m.opcode = (uint8_t)opcode;
    m.ddp.dv = IW_DDP_VERSION;
    m.ddp.tagged = true;
    m.ddp.last = last;
    m.ddp.stag = stag;
    m.ddp.to = to;
    return m;
}

/* The value an Atomic Request leaves at its target, given the original
 * (RFC 7306 §5.2.1, §5.2.2): FetchAdd adds field by field (each set Add
 * Mask bit ends a field and drops its carry); CmpSwap replaces the Swap
 * Mask bits when the masked compare matches. */
uint64_t iw_rdmap_atomic_result(const iw_rdmap_atomic_req *a, uint64_t orig);

/* RDMAP Control octet for an opcode (RV=1). */
static inline uint8_t iw_rdmap_ctrl(unsigned opcode) {
    return (uint8_t)(IW_RDMAP_VERSION << 6 | (opcode & 0xF));
}

/* A well-formed message skeleton for opcode, from the same table the
 * decoder judges with (RFC 5040 §4.2, RFC 7306 §4): RDMAP and DDP version
 * 1, L set, the opcode's buffer model and, untagged, its queue; MSN, MO,
 * STag and TO zero for the caller. An opcode with no definition (0xC-0xF)
 * gets QN 0 untagged, so deliberately wrong messages still encode; it
 * returns IW_ERR_INVALID_ARG then, else 0. */
int iw_rdmap_msg_init(iw_rdmap_msg *m, unsigned opcode);

/* DDP header + the opcode's RDMAP header for m (m->ddp fields; its rsvd_ulp
 * is derived from m->rv, m->rsv, m->opcode; u per opcode when the opcode has
 * a header). The payload is not written: senders gather it separately (see
 * iw_mpa_fpdu_encode), so it is never copied twice. Returns octets written,
 * IW_ERR_NOBUF or IW_ERR_INVALID_ARG (nothing written then). */
iw_ssize iw_rdmap_encode_hdr(uint8_t *out, size_t outlen, const iw_rdmap_msg *m);

/* The whole segment: iw_rdmap_encode_hdr followed by a copy of m->payload. */
iw_ssize iw_rdmap_encode(uint8_t *out, size_t outlen, const iw_rdmap_msg *m);

IW_END_DECLS
#endif
