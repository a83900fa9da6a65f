/* Frame crafting: see iwc_wire.h. Everything starts as the output of a
 * libiwarp encoder; the only octets written here by hand are the patched
 * fields of deliberately wrong frames, each under a comment. */
#include "iwc_wire.h"

#include <iwarp/crc32c.h>

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
static uint16_t get16(const uint8_t *b) { return (uint16_t)(b[0] << 8 | b[1]); }

/* Is the wire octet at FPDU offset i (stream position pos + i) a marker octet? */
static bool in_marker(uint32_t pos, size_t i) {
    return ((pos + (uint32_t)i) & (IW_MPA_MARKER_INTERVAL - 1)) < IW_MPA_MARKER_LEN;
}

int iwc_fpdu_build(iwc_tx *tx, const uint8_t *seg, size_t seglen, const iwc_mut *mut,
                   iwc_buf *out, uint8_t **ulpdu_out, size_t *ulpdu_len_out, char *err,
                   size_t errlen) {
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
    iw_ssize n = iw_mpa_fpdu_encode(w, IW_MPA_FPDU_WIRE_MAX, tx->pos, tx->flags, u, total, NULL, 0);
    if (n < 0) {
        snprintf(err, errlen, "FPDU encoder: %s", iw_strerror((int)n));
        free(u);
        free(w);
        return -1;
    }
    size_t wl = (size_t)n;
    bool markers = tx->flags & IW_MPA_MARKERS;
    size_t hdr_off = markers && iw_mpa_marker_gap(tx->pos) == 0 ? IW_MPA_MARKER_LEN : 0;
    bool recrc = false;
    if (mut->len_set) {
        /* Patch: ULPDU_Length (RFC 5044 §4.1) no longer matches the ULPDU. */
        put16(w + hdr_off, mut->ulpdu_len);
        recrc = true;
    }
    if (mut->lead_set) {
        if (!hdr_off) {
            snprintf(err, errlen, "marker.lead: no marker opens this FPDU (stream position %u)",
                     tx->pos);
            goto bad;
        }
        /* Patch: the marker between FPDUs must say 0 (RFC 5044 §4.2). */
        put16(w + 2, (uint16_t)(get16(w + 2) + mut->lead_delta));
        recrc = true;
    }
    if (mut->mark_set) {
        size_t i;
        for (i = 1; i + IW_MPA_MARKER_LEN <= wl; i++)
            if (markers && iw_mpa_marker_gap(tx->pos + (uint32_t)i) == 0)
                break;
        if (i + IW_MPA_MARKER_LEN > wl) {
            snprintf(err, errlen,
                     "marker.fpduptr: no marker inside this FPDU (%zu wire octets at stream "
                     "position %u%s)",
                     wl, tx->pos, markers ? "" : "; markers are off in this direction");
            goto bad;
        }
        /* Patch: FPDUPTR of a marker inside the FPDU (RFC 5044 §4.2). */
        put16(w + i + 2, (uint16_t)(get16(w + i + 2) + mut->mark_delta));
        recrc = true;
    }
    if (mut->pad_set) {
        /* Patch: PAD octets are the last non-marker octets before the CRC. */
        unsigned left = iw_mpa_pad_len(total);
        for (size_t i = wl - IW_MPA_CRC_LEN; left && i-- > 0;)
            if (!in_marker(tx->pos, i)) {
                w[i] = mut->pad;
                left--;
            }
        recrc = true;
    }
    size_t crc_off = wl - IW_MPA_CRC_LEN;
    bool crc_on = tx->flags & IW_MPA_CRC;
    if (recrc && crc_on) {
        /* RFC 5044 §4.4: coverage is every wire octet before the CRC field
         * (a leading marker and a marker just before the CRC included);
         * markers and FPDUs are 4-aligned, so none splits the CRC. */
        iw_crc32c_put(w + crc_off, iw_crc32c(w, crc_off));
    }
    if (mut->crc == IWC_CRC_BAD) {
        /* Patch: a CRC that does not verify (or, with CRCs off, any junk,
         * which the receiver MUST NOT check: RFC 5044 §7.1.1). */
        uint32_t c = iw_crc32c_get(w + crc_off);
        iw_crc32c_put(w + crc_off, crc_on ? c ^ 0x00010000u : 0xDEADBEEFu);
    } else if (mut->crc == IWC_CRC_ZERO) {
        iw_crc32c_put(w + crc_off, 0);
    }
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
