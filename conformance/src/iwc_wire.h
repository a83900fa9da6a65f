/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The runner's side of the raw peer: a case's mutations of a frame, mapped
 * onto reference-stack/peer (iw_peer.h), which frames and patches FPDUs and
 * encodes segments for the engine tests and fuzz seeds too; what is left
 * here is the runner's own (segment cut/extension, MPA frame patches, its
 * error texts). No I/O. */
#ifndef IWC_WIRE_H
#define IWC_WIRE_H

#include <iwarp/iwarp.h>

#include "iwc_util.h"

/* Our sending direction in Full Operation. */
typedef struct iwc_tx {
    uint32_t pos;    /* marker-grid position of the next octet (RFC 5044 §4.3) */
    unsigned flags;  /* IW_MPA_MARKERS | IW_MPA_CRC */
    uint32_t msn[4]; /* next MSN per QN (RFC 5041 §4.3: each starts at 1) */
} iwc_tx;

void iwc_tx_start(iwc_tx *tx, bool markers, bool crc);

/* Mutations of one FPDU, applied after encoding. */
typedef enum iwc_crc_mut { IWC_CRC_GOOD = 0, IWC_CRC_BAD, IWC_CRC_ZERO } iwc_crc_mut;

typedef struct iwc_mut {
    bool trunc_set; /* cut the DDP segment to trunc octets */
    size_t trunc;
    size_t extra; /* append extra pattern octets to the segment */
    bool len_set; /* ULPDU_Length field says ulpdu_len instead of the truth */
    uint16_t ulpdu_len;
    bool mark_set; /* FPDUPTR of the first marker inside the FPDU += mark_delta */
    int64_t mark_delta;
    bool lead_set; /* FPDUPTR of the marker that opens the FPDU += lead_delta */
    int64_t lead_delta;
    bool pad_set; /* PAD octets hold pad instead of zero */
    uint8_t pad;
    iwc_crc_mut crc;
    /* DDP over SCTP (RFC 5043): the chunk's DDP-SSN, PPID, stream, U flag */
    bool ssn_set;
    uint16_t ssn;
    bool ppid_set;
    uint32_t ppid;
    uint16_t sid;
    bool ordered;
} iwc_mut;

/* Frame one DDP segment (seg, seglen) as an FPDU at tx->pos, apply the
 * mutations, append the wire octets to out and advance tx->pos. The
 * (possibly truncated/extended) segment actually framed is left in
 * *ulpdu_out (malloc'd copy, length *ulpdu_len_out). Returns 0, or -1 with
 * err set (a mutation that cannot apply, e.g. no marker inside the FPDU). */
int iwc_fpdu_build(iwc_tx *tx, const uint8_t *seg, size_t seglen, const iwc_mut *mut, iwc_buf *out,
                   uint8_t **ulpdu_out, size_t *ulpdu_len_out, char *err, size_t errlen);

/* Over SCTP: the DDP segment (seg, seglen) as a DDP Segment Chunk payload
 * (RFC 5043 §5.2.2) with DDP-SSN ssn, trunc= and extra= applied, appended
 * to out; *ulpdu_out as for iwc_fpdu_build. MPA's own mutations have no
 * place here: -1 with err. */
int iwc_sctp_chunk_build(uint16_t ssn, const uint8_t *seg, size_t seglen, const iwc_mut *mut,
                         iwc_buf *out, uint8_t **ulpdu_out, size_t *ulpdu_len_out, char *err,
                         size_t errlen);

/* Encode msg's headers + payload as one DDP segment into a new buffer. */
int iwc_seg_encode(const iw_rdmap_msg *m, const uint8_t *pay, size_t paylen, iwc_buf *out);

/* MPA Request/Reply with optional patches. */
typedef struct iwc_rr_mut {
    const char *key;       /* non-NULL: these 16 octets replace the key */
    int pd_len;            /* >= 0: PD_Length field says this */
    size_t trunc;          /* > 0: only the first trunc octets go out */
    const uint8_t *pd_big; /* Private Data over what the encoder takes (> 508/512) */
    size_t pd_big_len;
} iwc_rr_mut;

int iwc_rr_build(const iw_mpa_rr *rr, const iwc_rr_mut *mut, iwc_buf *out, char *err,
                 size_t errlen);

/* ULPDU payload bytes for a sent/received segment (after its headers). */
size_t iwc_seg_hdr_len(const uint8_t *seg, size_t len);

#endif
