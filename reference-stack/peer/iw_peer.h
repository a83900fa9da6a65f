/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A raw iWARP peer: crafts one side of an MPA/DDP/RDMAP byte stream with
 * libiwarp's own encoders, and takes the other side apart with the streaming
 * deframer and iw_rdmap_decode.
 *
 * It holds no RDMAP state beyond what a byte-exact sender needs (the marker
 * grid position and the next MSN of each queue), judges nothing, and does no
 * I/O: the caller moves iw_peer.out to whatever it is testing. Since the
 * encoders write every field as given (versions, reserved bits, MSNs, the
 * CRC via crc_xor), the same calls build correct and deliberately wrong
 * traffic. Used by the engine tests and the conformance runner. */
#ifndef IW_ENGINE_PEER_H
#define IW_ENGINE_PEER_H

#include <iwarp/mpa.h>
#include <iwarp/rdmap.h>

/* A growable octet buffer. */
typedef struct iw_peer_buf {
    uint8_t *p;
    size_t len, cap;
} iw_peer_buf;

int iw_peer_buf_add(iw_peer_buf *b, const void *data, size_t len); /* 0 or IW_ERR_NOMEM */
void iw_peer_buf_free(iw_peer_buf *b);

/* ---------------- sending side ---------------- */

typedef struct iw_peer {
    iw_peer_buf out; /* octets produced and not yet taken by the caller */
    uint64_t sent;   /* octets produced in total (stream offset of out.p[out.len]) */
    uint32_t pos;    /* marker-grid position of the next FPDU octet (RFC 5044 §4.3) */
    unsigned flags;  /* IW_MPA_MARKERS / IW_MPA_CRC for the FPDUs we send */
    uint32_t msn[4]; /* next MSN of QN 0..3 (RFC 5041 §4.3: each starts at 1) */
    /* The last ULPDU framed (one DDP segment, no markers): what a Terminate
     * answering it must copy (RFC 5040 §4.8). */
    uint8_t *last_ulpdu;
    size_t last_ulpdu_len;
    uint64_t last_fpdu_off; /* stream offset of that FPDU's first wire octet */
    size_t last_fpdu_len;
    int err; /* first error, sticky: calls after it do nothing */
} iw_peer;

int iw_peer_init(iw_peer *p);
void iw_peer_free(iw_peer *p);
/* Forget the octets in out (the caller took them); positions are kept. */
void iw_peer_take(iw_peer *p);

/* An MPA Request/Reply with our defaults: Rev 2 with the RFC 6581 enhanced
 * data (client-server, IRD = ORD = 16), M = 0, C = 1, no Private Data. */
void iw_peer_rr_default(iw_mpa_rr *rr, iw_mpa_rr_type type);
/* Append a startup frame as given (iw_mpa_rr_encode). */
int iw_peer_rr(iw_peer *p, const iw_mpa_rr *rr);
/* Append raw octets (a mangled startup frame, garbage). */
int iw_peer_raw(iw_peer *p, const void *data, size_t len);
/* Enter Full Operation for our direction: the marker grid starts at the next
 * octet (§4.3); markers iff the other side asked for them (its M bit),
 * CRCs iff either side set C (§7.1.1). MSNs restart at 1. */
void iw_peer_full_operation(iw_peer *p, bool markers, bool crc);

/* How to mangle one FPDU's framing; every patch is made after encoding, and
 * with CRCs on the CRC is recomputed over the patched octets, so only the
 * patched field is wrong (unless crc_xor/crc_zero break the CRC too). */
typedef struct iw_peer_fpdu_opt {
    uint32_t crc_xor;  /* XORed into the CRC field (0: leave it) */
    bool crc_zero;     /* the CRC field says 0 */
    int marker_delta;  /* added to the FPDUPTR of the first marker after the
                          FPDU's first octet (RFC 5044 §4.2) */
    int lead_delta;    /* added to the FPDUPTR of the marker that opens the
                          FPDU, which must say 0 (§4.2) */
    bool len_override; /* write ulpdu_len instead of the true ULPDU_Length */
    uint16_t ulpdu_len;
    bool pad_set; /* PAD octets hold pad instead of zero (§4.1) */
    uint8_t pad;
} iw_peer_fpdu_opt;

/* Frame ulpdu as one FPDU at marker-grid position pos with flags
 * (IW_MPA_MARKERS/IW_MPA_CRC), applying opt, into w (cap octets,
 * IW_MPA_FPDU_WIRE_MAX always suffices). Returns the wire length, or
 * IW_ERR_INVALID_ARG when a patch has nothing to patch (no marker opens,
 * or lies inside, the FPDU), or the encoder's error. */
iw_ssize iw_peer_fpdu_encode(uint8_t *w, size_t cap, uint32_t pos, unsigned flags,
                             const uint8_t *ulpdu, size_t len, const iw_peer_fpdu_opt *opt);

/* Frame one ULPDU (any octets) as an FPDU at the current position. A patch
 * with nothing to patch returns IW_ERR_INVALID_ARG and sends nothing (not
 * sticky). */
int iw_peer_fpdu(iw_peer *p, const uint8_t *ulpdu, size_t len, const iw_peer_fpdu_opt *opt);

/* A well-formed message skeleton for opcode: RV 1, DV 1, L = 1, the buffer
 * model and QN RFC 5040 §4.2 / RFC 7306 §4 give it and, when untagged, the
 * next MSN of that QN. Change any field before iw_peer_msg to break it. */
void iw_peer_msg_init(const iw_peer *p, iw_rdmap_msg *m, unsigned opcode);
/* Encode m's headers + payload as one DDP segment into out. */
iw_ssize iw_peer_seg(uint8_t *out, size_t cap, const iw_rdmap_msg *m, const void *pay,
                     size_t paylen);
/* Encode and frame m, exactly as given, as one FPDU. An untagged last
 * segment carrying the next MSN of its QN advances that MSN. */
int iw_peer_msg(iw_peer *p, iw_rdmap_msg *m, const void *pay, size_t paylen,
                const iw_peer_fpdu_opt *opt);

/* Well-formed single-FPDU messages. */
int iw_peer_write(iw_peer *p, uint32_t stag, uint64_t to, const void *data, size_t len);
int iw_peer_read_resp(iw_peer *p, uint32_t stag, uint64_t to, const void *data, size_t len);
/* Send, Send SE, Send with Invalidate (inv_stag), Send SE Inv by opcode. */
int iw_peer_send(iw_peer *p, unsigned opcode, uint32_t inv_stag, const void *data, size_t len);
int iw_peer_read_req(iw_peer *p, uint32_t sink_stag, uint64_t sink_to, uint32_t size,
                     uint32_t src_stag, uint64_t src_to);
int iw_peer_atomic_req(iw_peer *p, const iw_rdmap_atomic_req *a);
int iw_peer_imm(iw_peer *p, bool se, const uint8_t imm[IW_RDMAP_IMM_LEN]);

/* ---------------- receiving side ---------------- */

/* One frame of a decoded stream, by value: pointers refer into the frame. */
typedef struct iw_peer_frame {
    iw_frame_type type;
    iw_verdict verdict; /* the deframer's (MPA) verdict */
    uint64_t offset, wire_off;
    size_t wire_len;
    uint32_t pos;
    /* MPA Request / Reply */
    iw_mpa_rr rr; /* rr.pd / rr.ulp_pd point into pd */
    uint8_t pd[IW_MPA_PD_MAX];
    /* FPDU */
    uint16_t ulpdu_len;
    uint8_t *ulpdu; /* ulpdu_len octets, markers removed (owned) */
    unsigned n_markers;
    bool marker_ok;
    iw_crc_status crc;
    iw_verdict rdmap_verdict; /* iw_rdmap_decode of the ULPDU */
    iw_rdmap_msg msg;         /* pointers refer into ulpdu */
} iw_peer_frame;

typedef struct iw_peer_trace {
    iw_peer_frame *v;
    size_t n, cap;
} iw_peer_trace;

/* Decode one direction of a stream (fed whole) and append its frames,
 * including the trailing IW_FRAME_INCOMPLETE / IW_FRAME_LOST reports. */
int iw_peer_decode(iw_peer_trace *t, const uint8_t *stream, size_t len, const iw_df_cfg *cfg);
void iw_peer_trace_free(iw_peer_trace *t);

/* Count of FPDUs in t whose ULPDU decoded to opcode. */
size_t iw_peer_count_op(const iw_peer_trace *t, unsigned opcode);

#endif
