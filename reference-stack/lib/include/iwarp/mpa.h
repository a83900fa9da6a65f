/* SPDX-License-Identifier: GPL-2.0-or-later */
/* MPA: Marker PDU Aligned Framing, RFC 5044; enhanced startup, RFC 6581.
 *
 * Pure codecs. Decoders read a const byte span and fill a host-order struct
 * whose pointers refer back into that span (or into caller scratch); encoders
 * write into a caller buffer, checking its size before the first write.
 * Nothing here allocates, does I/O or reads a clock.
 *
 * Stream positions ("pos") are octet positions relative to the marker grid:
 * pos = TCP sequence number - SeqStart (mod 2^32), where SeqStart is the
 * sequence number of the first octet of Full Operation (RFC 5044 §4.3). Since
 * 512 divides 2^32, unsigned 32-bit arithmetic makes sequence wrap harmless. */
#ifndef IWARP_MPA_H
#define IWARP_MPA_H

#include <iwarp/err.h>
#include <iwarp/types.h>

IW_BEGIN_DECLS

#define IW_MPA_KEY_LEN 16
#define IW_MPA_KEY_REQ "MPA ID Req Frame" /* RFC 5044 §7.1.1 */
#define IW_MPA_KEY_REP "MPA ID Rep Frame"
#define IW_MPA_RR_HDR_LEN 20    /* key + flags + rev + PD_Length */
#define IW_MPA_PD_MAX 512       /* RFC 5044 §7.1.1 */
#define IW_MPA_V2_DATA_LEN 4    /* RFC 6581 §9: A|B|IRD, C|D|ORD */
#define IW_MPA_V2_NO_NEG 0x3FFF /* RFC 6581 §9.1: no automatic IRD/ORD negotiation */
#define IW_MPA_REV1 1
#define IW_MPA_REV2 2

#define IW_MPA_HDR_LEN 2 /* ULPDU_Length */
#define IW_MPA_CRC_LEN 4
#define IW_MPA_MARKER_LEN 4
#define IW_MPA_MARKER_INTERVAL 512 /* RFC 5044 §4.3 */
#define IW_MPA_MULPDU_MIN 128      /* RFC 5044 §4.5 */
#define IW_MPA_MULPDU_MAX 64768
#define IW_MPA_ULPDU_MAX 65535 /* what the 16-bit field can say */
/* Largest FPDU on the wire: header, ULPDU, pad, CRC and its markers. */
#define IW_MPA_FPDU_WIRE_MAX                                                                       \
    (IW_MPA_HDR_LEN + IW_MPA_ULPDU_MAX + 3 + IW_MPA_CRC_LEN +                                      \
     IW_MPA_MARKER_LEN * ((IW_MPA_HDR_LEN + IW_MPA_ULPDU_MAX + 3 + IW_MPA_CRC_LEN) /               \
                              (IW_MPA_MARKER_INTERVAL - IW_MPA_MARKER_LEN) +                       \
                          2))

/* Flags for FPDU encode/decode. */
#define IW_MPA_MARKERS 0x1u /* markers are in this direction's stream */
#define IW_MPA_CRC 0x2u     /* CRCs are in use (C=1 in Request or Reply) */

/* ---- MPA Request / Reply (RFC 5044 §7.1.1, RFC 6581 §6, §9) ---- */

typedef enum iw_mpa_rr_type { IW_MPA_REQUEST = 1, IW_MPA_REPLY = 2 } iw_mpa_rr_type;

/* RFC 6581 §9 enhanced connection data. */
typedef struct iw_mpa_v2 {
    bool p2p;       /* A: peer-to-peer connection model */
    bool rtr_send;  /* B: zero-length FULPDU (Send) RTR */
    bool rtr_write; /* C: zero-length RDMA Write RTR */
    bool rtr_read;  /* D: zero-length RDMA Read RTR */
    uint16_t ird;   /* 14 bits; IW_MPA_V2_NO_NEG = no negotiation */
    uint16_t ord;
} iw_mpa_v2;

typedef struct iw_mpa_rr {
    iw_mpa_rr_type type;
    bool m;      /* markers required in the peer's FPDUs */
    bool c;      /* CRC preferred */
    bool r;      /* Reply: rejected. Request: 0, not checked */
    bool s;      /* RFC 6581: enhanced data present (meaningful with rev >= 2) */
    uint8_t res; /* reserved bits as received (0x0F mask; plus S when rev 1) */
    uint8_t rev;
    uint16_t pd_len; /* PD_Length as on the wire */
    bool enhanced;   /* rev >= 2 and S=1: v2 is valid */
    iw_mpa_v2 v2;
    const uint8_t *pd;     /* pd_len octets of Private Data (enhanced data included) */
    const uint8_t *ulp_pd; /* Private Data for the ULP (after the enhanced data) */
    uint16_t ulp_pd_len;
    uint32_t notes; /* IW_NOTE() bits */
} iw_mpa_rr;

/* RFC 6581 §9: the 4-octet enhanced data (MPA frames; also SCTP's enhanced
 * session control, §7). Decode adds IW_NOTE() bits to *notes; encode fails
 * with IW_ERR_INVALID_ARG when IRD or ORD is over 14 bits. */
void iw_mpa_v2_decode(iw_mpa_v2 *v2, const uint8_t *p, uint32_t *notes);
iw_ssize iw_mpa_v2_encode(uint8_t *p, const iw_mpa_v2 *v2);

/* Decode one Request or Reply at buf. Returns the frame length, or
 * IW_ERR_NEED_MORE (with len too short to decide), or IW_ERR_PROTO with *v
 * set to the close outcome (bad key, bad revision, PD_Length > 512, S=1 with
 * PD shorter than 4). A wrong key is detected as soon as the bytes present
 * disagree with both keys. On IW_ERR_PROTO the fields decoded so far are
 * filled in for display. Whether a Request or a Reply was expected is the
 * caller's check (iw_mpa_rr_expect). */
iw_ssize iw_mpa_rr_decode(iw_mpa_rr *rr, const uint8_t *buf, size_t len, iw_verdict *v);

/* Whether buf begins with "MPA ID ??? Frame": the shape both keys share
 * (RFC 5044 §7.1.1) with other octets in the middle. A decoder treats such
 * a frame as a startup frame whose key the receiver rejects (§7.1.2 rule
 * 5: it closes), rather than as data of some other protocol. Needs
 * IW_MPA_KEY_LEN octets. */
bool iw_mpa_key_shaped(const uint8_t *buf, size_t len);

/* Verdict for receiving rr where `expected` was due (RFC 5044 §7.1.2 rules
 * 5 and 8): a Request where a Reply was due is an Initiator/Initiator
 * startup; a Reply where a Request was due is a key mismatch. */
iw_verdict iw_mpa_rr_expect(const iw_mpa_rr *rr, iw_mpa_rr_type expected);

/* Encode rr (type, m, c, r, s, res, rev, v2, ulp_pd/ulp_pd_len; pd/pd_len
 * are ignored and derived). With s set the 4-octet enhanced data is written
 * first. Returns the frame length, IW_ERR_NOBUF or IW_ERR_INVALID_ARG (Private
 * Data over 512 octets, IRD/ORD over 14 bits). */
iw_ssize iw_mpa_rr_encode(uint8_t *out, size_t outlen, const iw_mpa_rr *rr);

/* ---- FPDU (RFC 5044 §4.1) and Markers (§4.2, §4.3) ---- */

/* PAD octets after a ULPDU of this length: FPDU size is a multiple of 4. */
static inline unsigned iw_mpa_pad_len(size_t ulpdu_len) {
    return (unsigned)((0u - (unsigned)(ulpdu_len + IW_MPA_HDR_LEN)) & 3u);
}

/* Octets from pos to the next marker position (0: a marker starts at pos). */
static inline unsigned iw_mpa_marker_gap(uint32_t pos) {
    return (unsigned)((0u - pos) & (IW_MPA_MARKER_INTERVAL - 1));
}

/* A marker's fields (RFC 5044 §4.2): RESERVED, and FPDUPTR as sent. The
 * receiver treats FPDUPTR's two low bits as 0: use iw_mpa_marker_ptr. */
static inline void iw_mpa_marker_decode(const uint8_t in[IW_MPA_MARKER_LEN], uint16_t *res,
                                        uint16_t *fpduptr) {
    *res = (uint16_t)(in[0] << 8 | in[1]);
    *fpduptr = (uint16_t)(in[2] << 8 | in[3]);
}
static inline uint16_t iw_mpa_marker_ptr(uint16_t fpduptr) { return fpduptr & (uint16_t)~3u; }

/* MULPDU for an EMSS (RFC 5044 §4.5), clamped to [128, 64768]. */
uint32_t iw_mpa_mulpdu(uint32_t emss, bool markers);

/* Wire octets of an FPDU carrying ulpdu_len octets whose first octet is at
 * pos, markers included (a marker at pos belongs to this FPDU, §4.2). */
size_t iw_mpa_fpdu_wire_len(size_t ulpdu_len, uint32_t pos, bool markers);

/* Wire length of the FPDU that starts at buf (stream position pos), or 0
 * when buf does not yet hold its ULPDU_Length. Serves both the engine and
 * Wireshark's tcp_dissect_pdus. */
size_t iw_mpa_fpdu_len(const uint8_t *buf, size_t len, uint32_t pos, bool markers);

/* Build an FPDU at out for a ULPDU given as header + payload (either may be
 * empty) starting at stream position pos: leading marker if pos is on the
 * grid, ULPDU_Length, ULPDU with markers inserted at every grid position,
 * zero PAD, CRC32c (least significant byte first) or zero when !IW_MPA_CRC.
 * With markers pos must be a multiple of 4 (FPDUs are, §4.1). Returns the
 * wire length, IW_ERR_NOBUF, or IW_ERR_INVALID_ARG (ULPDU over 65535). */
iw_ssize iw_mpa_fpdu_encode(uint8_t *out, size_t outlen, uint32_t pos, unsigned flags,
                            const uint8_t *hdr, size_t hdrlen, const uint8_t *payload,
                            size_t paylen);

/* The same FPDU as a gather list, without copying the ULPDU: iov pieces
 * point at hdr/payload, and the framing octets (ULPDU_Length, markers, PAD,
 * CRC) are written into `frame`. A sender writev()s the list. Returns the
 * number of iov entries used; *wire_len gets the FPDU's length. Errors as
 * iw_mpa_fpdu_encode, plus IW_ERR_NOBUF when iov or frame are too small
 * (IW_MPA_GATHER_FRAME_MAX octets and 2 * markers + 6 entries suffice);
 * iov and frame are written only once both are known to suffice. */
#define IW_MPA_GATHER_FRAME_MAX                                                                    \
    (IW_MPA_HDR_LEN + 3 + IW_MPA_CRC_LEN +                                                         \
     IW_MPA_MARKER_LEN * ((IW_MPA_FPDU_WIRE_MAX / IW_MPA_MARKER_INTERVAL) + 2))
#define IW_MPA_GATHER_IOV_MAX (2 * (IW_MPA_FPDU_WIRE_MAX / IW_MPA_MARKER_INTERVAL + 2) + 6)
int iw_mpa_fpdu_gather(iw_iovec *iov, int iovmax, uint8_t *frame, size_t framelen, uint32_t pos,
                       unsigned flags, const uint8_t *hdr, size_t hdrlen, const uint8_t *payload,
                       size_t paylen, size_t *wire_len);

typedef enum iw_crc_status {
    IW_CRC_UNCHECKED = 0, /* CRCs not in use: the field "MUST be considered valid" */
    IW_CRC_GOOD,
    IW_CRC_BAD
} iw_crc_status;

typedef struct iw_mpa_fpdu {
    uint16_t ulpdu_len;
    const uint8_t *ulpdu; /* ulpdu_len octets, markers removed */
    size_t wire_len;      /* octets on the wire, markers included */
    size_t hdr_off;       /* wire offset of ULPDU_Length (4 after a leading marker) */
    unsigned pad_len;
    unsigned n_markers;
    uint32_t crc_wire; /* CRC field value (read LSB first) */
    uint32_t crc_calc; /* CRC32c over the §4.4 coverage */
    iw_crc_status crc;
    bool marker_ok;        /* every marker points at this FPDU's header */
    size_t bad_marker_off; /* wire offset of the first disagreeing marker */
    uint16_t bad_marker_ptr;
    uint32_t notes; /* IW_NOTE() bits */
} iw_mpa_fpdu;

/* Decode the whole FPDU at buf (stream position pos). The ULPDU points into
 * buf when no marker falls inside it, else into scratch, which must hold
 * ulpdu_len octets (IW_MPA_ULPDU_MAX always suffices). Returns the wire
 * length, IW_ERR_NEED_MORE, IW_ERR_NOBUF (scratch too small), or
 * IW_ERR_PROTO with *v = LLP/MPA CRC error (checked first, §4.4) or Marker
 * mismatch (§8 code 3, every marker checked). f is filled in either way. */
iw_ssize iw_mpa_fpdu_decode(iw_mpa_fpdu *f, const uint8_t *buf, size_t len, uint32_t pos,
                            unsigned flags, uint8_t *scratch, size_t scratchlen, iw_verdict *v);

/* ---- The first FPDU of Full Operation, where startup left a mode open ----
 * A reader that holds one side's MPA frame but not the other's (not
 * captured, incomplete, or not acceptable) still knows where Full Operation
 * starts (§4.3), but not every mode. Both decoders settle them with these. */

/* Markers (§7.1.2 rule 7): with markers, Full Operation opens with the
 * marker 00000000; without, with a ULPDU_Length, never 0 since a ULPDU
 * holds at least a DDP header. p: Full Operation's first octets. Returns
 * 1 markers, 0 none, -1 when fewer than 2 octets are here. */
int iw_mpa_fo_markers(const uint8_t *p, size_t len);

/* CRCs (§7.1.1: C=1 in either frame makes every FPDU carry a good CRC):
 * with one frame's C=0 and the other's unknown, on iff the first FPDU's
 * CRC verifies (f decoded with IW_MPA_CRC). */
bool iw_mpa_fo_crc(const iw_mpa_fpdu *first);

/* ---- Streaming deframer: one direction of a TCP byte stream ---- */

typedef enum iw_df_start {
    IW_DF_START_REQUEST = 1, /* stream begins with an MPA Request (initiator's side) */
    IW_DF_START_REPLY,       /* stream begins with an MPA Reply (responder's side) */
    IW_DF_START_RR,          /* either: the key says which */
    IW_DF_START_FPDU         /* mid-stream: the first octet starts an FPDU (or its marker) */
} iw_df_start;

typedef enum iw_df_mode { IW_DF_AUTO = 0, IW_DF_OFF, IW_DF_ON } iw_df_mode;

typedef struct iw_df_cfg {
    iw_df_start start;
    iw_df_mode markers;  /* AUTO: after an MPA frame, a leading 00 00 is a marker
                           (no ULPDU is shorter than a DDP header); mid-stream: off */
    iw_df_mode crc;      /* AUTO: on if the MPA frame seen has C=1, else on iff the
                           first FPDU's CRC verifies */
    uint32_t stream_pos; /* IW_DF_START_FPDU: grid position of the first octet */
} iw_df_cfg;

typedef enum iw_frame_type {
    IW_FRAME_NONE = 0,
    IW_FRAME_MPA_REQUEST,
    IW_FRAME_MPA_REPLY,
    IW_FRAME_FPDU,
    IW_FRAME_LOST,      /* octets after framing was lost (iw_deframer_finish) */
    IW_FRAME_INCOMPLETE /* input ended inside a frame (iw_deframer_finish) */
} iw_frame_type;

typedef struct iw_frame {
    iw_frame_type type;
    uint64_t offset;   /* input offset of the frame's first octet: the key, or ULPDU_Length */
    uint64_t wire_off; /* input offset of the first wire octet (a leading marker) */
    size_t wire_len;
    uint32_t pos; /* grid position of wire_off (FPDU only) */
    bool markers; /* resolved modes this frame was decoded with (FPDU) */
    bool crc_on;
    iw_mpa_rr rr;     /* MPA frames */
    bool rr_ok;       /* MPA frames: iw_mpa_rr_decode accepted it (the verdict may
                         still be iw_mpa_rr_expect's close): what iw_shadow_mpa takes */
    iw_mpa_fpdu fpdu; /* FPDU */
    iw_verdict verdict;
    iw_close_reason lost_why; /* IW_FRAME_LOST: what ended framing */
    uint64_t lost_len;
} iw_frame;

typedef enum iw_df_state {
    IW_DF_RR = 1, /* waiting for an MPA Request/Reply */
    IW_DF_FPDU,   /* Full Operation */
    IW_DF_LOST    /* framing lost or MPA exited: octets are counted, not parsed */
} iw_df_state;

/* Caller-owned; initialise with iw_deframer_init. Large (it can hold a whole
 * FPDU that arrives in pieces), so allocate it rather than put it on a small
 * stack. Private fields start with _. */
typedef struct iw_deframer {
    iw_df_cfg cfg;
    iw_df_state state;
    uint64_t _off;       /* input octets consumed so far */
    uint32_t _pos;       /* grid position of the next octet */
    bool _markers, _crc; /* resolved modes */
    bool _markers_known, _crc_known;
    iw_close_reason _lost_why;
    iw_verdict _lost_verdict; /* a verdict with no frame to carry it (bad key) */
    bool _lost_reported;
    uint64_t _lost_off, _lost_len;
    size_t _have; /* octets held in _buf */
    uint8_t _buf[IW_MPA_FPDU_WIRE_MAX + IW_MPA_MARKER_LEN];
    uint8_t _scratch[IW_MPA_ULPDU_MAX];
} iw_deframer;

void iw_deframer_init(iw_deframer *d, const iw_df_cfg *cfg);

/* Consume input. Returns octets consumed (>= 0); when a frame completed,
 * fr->type != IW_FRAME_NONE and the caller calls again with the rest. The
 * frame's pointers stay valid until the next call. Frames are identical
 * however the input is split. */
iw_ssize iw_deframer_feed(iw_deframer *d, const uint8_t *in, size_t len, iw_frame *fr);

/* End of input: reports a trailing partial frame (IW_FRAME_INCOMPLETE) or the
 * octets after a framing loss (IW_FRAME_LOST). Call until it returns false. */
bool iw_deframer_finish(iw_deframer *d, iw_frame *fr);

IW_END_DECLS
#endif
