/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Frame crafting: see iwc_wire.h. Everything starts as the output of a
 * libiwarp encoder; the only octets written here by hand are the patched
 * fields of deliberately wrong frames, each under a comment. */
#include "iwc_wire.h"

#include "iw_peer.h"

#include <iwarp/crc32c.h>
#include <iwarp/sctp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void iwc_tx_start(iwc_tx *tx, bool markers, bool crc) {
    tx->pos = 0; /* RFC 5044 §4.3: the grid starts at Full Operation */
    tx->flags = (markers ? IW_MPA_MARKERS : 0) | (crc ? IW_MPA_CRC : 0);
    for (int q = 0; q < 4; q++)
        tx->msn[q] = 1;
}

int iwc_seg_encode(const iw_rdmap_msg *m, const uint8_t *pay, size_t paylen, iwc_buf *out) {
    /* Headers by the library's encoder, the payload appended: no ULPDU-sized
     * scratch copy per segment. */
    uint8_t hdr[IW_DDP_UNTAGGED_HDR_LEN + IW_RDMAP_ATOMIC_REQ_LEN + 8];
    iw_ssize n = iw_rdmap_encode_hdr(hdr, sizeof hdr, m);
    if (n < 0)
        return (int)n;
    out->len = 0;
    if (iwc_buf_add(out, hdr, (size_t)n) < 0 || iwc_buf_add(out, pay, paylen) < 0)
        return IW_ERR_NOMEM;
    return 0;
}

size_t iwc_seg_hdr_len(const uint8_t *seg, size_t len) {
    if (len < 2)
        return len;
    size_t hl = iw_ddp_hdr_len(seg[0]);
    return hl < len ? hl : len;
}

static void put16(uint8_t *b, uint16_t v) {
    b[0] = (uint8_t)(v >> 8);
    b[1] = (uint8_t)v;
}

int iwc_sctp_chunk_build(uint16_t ssn, const uint8_t *seg, size_t seglen, const iwc_mut *mut,
                         iwc_buf *out, uint8_t **ulpdu_out, size_t *ulpdu_len_out, char *err,
                         size_t errlen) {
    static const iwc_mut none;
    if (!mut)
        mut = &none;
    *ulpdu_out = NULL;
    if (mut->len_set || mut->mark_set || mut->lead_set || mut->pad_set || mut->crc) {
        snprintf(err, errlen, "ulpdu-len, marker, pad and crc are MPA's: not over SCTP");
        return -1;
    }
    size_t ul = mut->trunc_set && mut->trunc < seglen ? mut->trunc : seglen;
    size_t total = ul + mut->extra;
    uint8_t *u = malloc(total + 1);
    if (!u) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memcpy(u, seg, ul);
    iwc_pattern(0xEE, 0, u + ul, mut->extra);
    uint8_t h[IW_SCTP_SSN_LEN];
    iw_ssize n = iw_sctp_seg_encode(h, sizeof h, ssn, NULL, 0, NULL, 0);
    if (n != IW_SCTP_SSN_LEN || iwc_buf_add(out, h, sizeof h) < 0 ||
        iwc_buf_add(out, u, total) < 0) {
        free(u);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    *ulpdu_out = u;
    *ulpdu_len_out = total;
    return 0;
}

int iwc_fpdu_build(iwc_tx *tx, const uint8_t *seg, size_t seglen, const iwc_mut *mut, iwc_buf *out,
                   uint8_t **ulpdu_out, size_t *ulpdu_len_out, char *err, size_t errlen) {
    static const iwc_mut none;
    if (!mut)
        mut = &none;
    *ulpdu_out = NULL;
    size_t ul = seglen;
    if (mut->trunc_set && mut->trunc < ul)
        ul = mut->trunc;
    size_t total = ul + mut->extra;
    if (total > IW_MPA_ULPDU_MAX) {
        snprintf(err, errlen, "segment of %zu octets does not fit an FPDU (max %u)", total,
                 IW_MPA_ULPDU_MAX);
        return -1;
    }
    uint8_t *u = malloc(total + 1);
    uint8_t *w = malloc(IW_MPA_FPDU_WIRE_MAX);
    if (!u || !w) {
        free(u);
        free(w);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memcpy(u, seg, ul);
    /* extra=: octets past what the header announces (a too-long control message). */
    iwc_pattern(0xEE, 0, u + ul, mut->extra);
    /* The framing and its patches are the raw peer's (reference-stack/peer). */
    bool crc_on = tx->flags & IW_MPA_CRC;
    iw_peer_fpdu_opt o = {
        .len_override = mut->len_set,
        .ulpdu_len = mut->ulpdu_len,
        .lead_delta = mut->lead_set ? (int)mut->lead_delta : 0,
        .marker_delta = mut->mark_set ? (int)mut->mark_delta : 0,
        .pad_set = mut->pad_set,
        .pad = mut->pad,
        .crc_zero = mut->crc == IWC_CRC_ZERO,
        /* A CRC that does not verify or, with CRCs off (field 0), any junk,
         * which the receiver MUST NOT check (RFC 5044 §7.1.1). */
        .crc_xor = mut->crc == IWC_CRC_BAD ? (crc_on ? 0x00010000u : 0xDEADBEEFu) : 0,
    };
    bool markers = tx->flags & IW_MPA_MARKERS;
    iw_ssize n = iw_peer_fpdu_encode(w, IW_MPA_FPDU_WIRE_MAX, tx->pos, tx->flags, u, total, &o);
    if (n == IW_ERR_INVALID_ARG && mut->lead_set && !(markers && iw_mpa_marker_gap(tx->pos) == 0)) {
        snprintf(err, errlen, "marker.lead: no marker opens this FPDU (stream position %u)",
                 tx->pos);
        goto bad;
    }
    if (n == IW_ERR_INVALID_ARG && mut->mark_set) {
        snprintf(err, errlen,
                 "marker.fpduptr: no marker inside this FPDU (%zu wire octets at stream "
                 "position %u%s)",
                 iw_mpa_fpdu_wire_len(total, tx->pos, markers), tx->pos,
                 markers ? "" : "; markers are off in this direction");
        goto bad;
    }
    if (n < 0) {
        snprintf(err, errlen, "FPDU encoder: %s", iw_strerror((int)n));
        goto bad;
    }
    size_t wl = (size_t)n;
    if (iwc_buf_add(out, w, wl) < 0) {
        snprintf(err, errlen, "out of memory");
        goto bad;
    }
    tx->pos += (uint32_t)wl;
    free(w);
    *ulpdu_out = u;
    *ulpdu_len_out = total;
    return 0;
bad:
    free(u);
    free(w);
    return -1;
}

int iwc_rr_build(const iw_mpa_rr *rr, const iwc_rr_mut *mut, iwc_buf *out, char *err,
                 size_t errlen) {
    uint8_t f[IW_MPA_RR_HDR_LEN + IW_MPA_PD_MAX];
    iw_ssize n = iw_mpa_rr_encode(f, sizeof f, rr);
    if (n < 0) {
        snprintf(err, errlen, "MPA frame encoder: %s", iw_strerror((int)n));
        return -1;
    }
    size_t fl = (size_t)n;
    if (mut && mut->key)
        memcpy(f, mut->key, IW_MPA_KEY_LEN); /* Patch: the key (RFC 5044 §7.1.1) */
    size_t start = out->len;
    if (iwc_buf_add(out, f, fl) < 0)
        goto nomem;
    if (mut && mut->pd_big_len) {
        /* Private Data over 512 octets cannot be encoded: append it and let
         * PD_Length say so (patched below; RFC 5044 §7.1.1). */
        if (iwc_buf_add(out, mut->pd_big, mut->pd_big_len) < 0)
            goto nomem;
        size_t pdl = (size_t)(fl - IW_MPA_RR_HDR_LEN) + mut->pd_big_len;
        put16(out->p + start + 18, (uint16_t)(pdl > 0xFFFF ? 0xFFFF : pdl));
    }
    if (mut && mut->pd_len >= 0)
        put16(out->p + start + 18, (uint16_t)mut->pd_len); /* Patch: PD_Length */
    if (mut && mut->trunc && mut->trunc < out->len - start)
        out->len = start + mut->trunc;
    return 0;
nomem:
    snprintf(err, errlen, "out of memory");
    return -1;
}
