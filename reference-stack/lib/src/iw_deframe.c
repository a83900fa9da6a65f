/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Streaming deframer: one direction of a TCP byte stream, in any chunking,
 * into MPA Request/Reply frames and FPDUs (RFC 5044 §6, §7).
 *
 * States are what the next octets are expected to be (IW_DF_RR,
 * IW_DF_FPDU), or IW_DF_LOST once framing cannot be trusted: after a CRC
 * error the next FPDU cannot be located (§6), and after a close or a reject
 * MPA has exited (§7.1.2). Frames are decoded straight from the caller's
 * input when they arrive whole; only a frame split across calls is
 * collected in _buf first, so results never depend on the split. _off is
 * the input offset of the frame being assembled. */
#include <iwarp/mpa.h>

#include <string.h>

typedef enum { DF_NEED, DF_FRAME, DF_LOST } df_step_result;

void iw_deframer_init(iw_deframer *d, const iw_df_cfg *cfg) {
    memset(d, 0, offsetof(iw_deframer, _buf));
    d->cfg = *cfg;
    if (cfg->start == IW_DF_START_FPDU) {
        d->state = IW_DF_FPDU;
        d->_pos = cfg->stream_pos;
        /* Mid-stream there is no startup frame to anchor auto-detection of
         * markers: without --markers the grid is unknown, so assume none. */
        d->_markers = cfg->markers == IW_DF_ON;
        d->_markers_known = true;
    } else {
        d->state = IW_DF_RR;
        d->_markers = cfg->markers == IW_DF_ON;
        d->_markers_known = cfg->markers != IW_DF_AUTO;
    }
    d->_crc = cfg->crc == IW_DF_ON;
    d->_crc_known = cfg->crc != IW_DF_AUTO;
}

static void df_lose(iw_deframer *d, uint64_t at, iw_close_reason why) {
    d->state = IW_DF_LOST;
    d->_lost_off = at;
    d->_lost_why = why;
}

/* MPA Request/Reply at p. */
static df_step_result df_step_rr(iw_deframer *d, const uint8_t *p, size_t n, size_t *need,
                                 iw_frame *fr) {
    iw_verdict v;
    iw_ssize r = iw_mpa_rr_decode(&fr->rr, p, n, &v);
    if (r == IW_ERR_NEED_MORE) {
        *need =
            n < IW_MPA_RR_HDR_LEN ? IW_MPA_RR_HDR_LEN : IW_MPA_RR_HDR_LEN + (size_t)fr->rr.pd_len;
        return DF_NEED;
    }
    if (r == IW_ERR_PROTO && v.close == IW_CLOSE_MPA_BAD_KEY) {
        /* No frame boundary can be known without a key (rule 5: close). */
        df_lose(d, d->_off, IW_CLOSE_MPA_BAD_KEY);
        d->_lost_verdict = v;
        return DF_LOST;
    }
    fr->type = fr->rr.type == IW_MPA_REQUEST ? IW_FRAME_MPA_REQUEST : IW_FRAME_MPA_REPLY;
    fr->offset = fr->wire_off = d->_off;
    if (r == IW_ERR_PROTO) {
        /* Bad Rev or PD_Length: judged on the fixed header alone. */
        fr->wire_len = v.close == IW_CLOSE_MPA_V2_PD_SHORT
                           ? IW_MPA_RR_HDR_LEN + (size_t)fr->rr.pd_len
                           : IW_MPA_RR_HDR_LEN;
        fr->verdict = v;
        df_lose(d, d->_off + fr->wire_len, v.close);
        return DF_FRAME;
    }
    fr->wire_len = (size_t)r;
    fr->rr_ok = true;
    if (d->cfg.start == IW_DF_START_REQUEST)
        fr->verdict = iw_mpa_rr_expect(&fr->rr, IW_MPA_REQUEST);
    else if (d->cfg.start == IW_DF_START_REPLY)
        fr->verdict = iw_mpa_rr_expect(&fr->rr, IW_MPA_REPLY);
    else
        fr->verdict = iw_verdict_ok();

    uint64_t end = d->_off + fr->wire_len;
    if (fr->verdict.kind != IW_VERDICT_OK) {
        df_lose(d, end, fr->verdict.close);
    } else if (fr->rr.type == IW_MPA_REPLY && fr->rr.r) {
        df_lose(d, end, IW_CLOSE_MPA_REJECTED); /* §7.1.2 rule 3 */
    } else {
        /* §4.3: the marker grid starts at the first octet of Full Operation. */
        d->state = IW_DF_FPDU;
        d->_pos = 0;
        /* §7.1.1: C=1 in either frame turns CRCs on for both directions. */
        if (!d->_crc_known && fr->rr.c) {
            d->_crc = true;
            d->_crc_known = true;
        }
    }
    return DF_FRAME;
}

static df_step_result df_step_fpdu(iw_deframer *d, const uint8_t *p, size_t n, size_t *need,
                                   iw_frame *fr) {
    if (!d->_markers_known) {
        int m = iw_mpa_fo_markers(p, n); /* §7.1.2 rule 7 */
        if (m < 0) {
            *need = 2;
            return DF_NEED;
        }
        d->_markers = m == 1;
        d->_markers_known = true;
    }
    size_t total = iw_mpa_fpdu_len(p, n, d->_pos, d->_markers);
    if (total == 0 || n < total) {
        *need = total ? total : n + 1;
        return DF_NEED;
    }
    unsigned flags = (d->_markers ? IW_MPA_MARKERS : 0) | IW_MPA_CRC;
    iw_verdict v;
    iw_ssize r =
        iw_mpa_fpdu_decode(&fr->fpdu, p, n, d->_pos, flags, d->_scratch, sizeof d->_scratch, &v);
    if (!d->_crc_known) {
        d->_crc = iw_mpa_fo_crc(&fr->fpdu);
        d->_crc_known = true;
    }
    if (!d->_crc) {
        fr->fpdu.crc = IW_CRC_UNCHECKED;
        if (r == IW_ERR_PROTO && v.term == IW_TERM_LLP_MPA_CRC)
            v = fr->fpdu.marker_ok ? iw_verdict_ok()
                                   : iw_verdict_term(IW_TERM_LLP_MPA_MARKER, "RFC 5044 §4.2, §8");
    }
    fr->type = IW_FRAME_FPDU;
    fr->wire_off = d->_off;
    fr->offset = d->_off + fr->fpdu.hdr_off;
    fr->wire_len = total;
    fr->pos = d->_pos;
    fr->markers = d->_markers;
    fr->crc_on = d->_crc;
    fr->verdict = v;
    d->_pos += (uint32_t)total;
    /* §6: the next FPDU is located from the ULPDU_Length of one whose CRC
     * is valid; after a bad CRC nothing locates it. */
    if (fr->fpdu.crc == IW_CRC_BAD)
        df_lose(d, d->_off + total, IW_CLOSE_FRAMING_LOST);
    return DF_FRAME;
}

static df_step_result df_step(iw_deframer *d, const uint8_t *p, size_t n, size_t *need,
                              iw_frame *fr) {
    return d->state == IW_DF_RR ? df_step_rr(d, p, n, need, fr) : df_step_fpdu(d, p, n, need, fr);
}

iw_ssize iw_deframer_feed(iw_deframer *d, const uint8_t *in, size_t len, iw_frame *fr) {
    memset(fr, 0, sizeof *fr);
    size_t used = 0;
    for (;;) {
        if (d->state == IW_DF_LOST) {
            d->_lost_len += d->_have + (len - used);
            d->_have = 0;
            return (iw_ssize)len;
        }
        /* Octets held may already complete a frame (the last chunk ended
         * exactly on its boundary): step on them before returning. */
        if (used == len && d->_have == 0)
            return (iw_ssize)used;
        size_t need = 0;
        df_step_result s;
        if (d->_have == 0) {
            /* Fast path: decode in place from the caller's bytes. */
            s = df_step(d, in + used, len - used, &need, fr);
            if (s == DF_FRAME) {
                d->_off += fr->wire_len;
                return (iw_ssize)(used + fr->wire_len);
            }
            if (s == DF_LOST)
                continue;
            /* Incomplete: every octet left belongs to this frame, which is
             * no larger than _buf. */
            memcpy(d->_buf, in + used, len - used);
            d->_have = len - used;
            return (iw_ssize)len;
        }
        /* Slow path: top _buf up to exactly what the next step needs, so a
         * frame never ends before the octets held. */
        s = df_step(d, d->_buf, d->_have, &need, fr);
        if (s == DF_FRAME) {
            d->_off += fr->wire_len;
            d->_have = 0;
            return (iw_ssize)used;
        }
        if (s == DF_LOST)
            continue;
        if (need > sizeof d->_buf)
            need = sizeof d->_buf;
        size_t take = need - d->_have;
        if (take > len - used)
            take = len - used;
        memcpy(d->_buf + d->_have, in + used, take);
        d->_have += take;
        used += take;
        /* Out of input: return only once the octets held have been judged
         * together with the new ones. An MPA key can be rejected before its
         * frame is complete (RFC 5044 §7.1.2 rule 5), exactly as when the
         * same octets arrive in one piece. */
        if (take == 0)
            return (iw_ssize)used;
    }
}

bool iw_deframer_finish(iw_deframer *d, iw_frame *fr) {
    memset(fr, 0, sizeof *fr);
    if (d->_have && d->state != IW_DF_LOST) {
        fr->type = IW_FRAME_INCOMPLETE;
        fr->offset = fr->wire_off = d->_off;
        fr->wire_len = d->_have;
        fr->pos = d->_pos;
        d->_have = 0;
        return true;
    }
    if (d->state == IW_DF_LOST && !d->_lost_reported &&
        (d->_lost_len || d->_lost_verdict.kind != IW_VERDICT_OK)) {
        d->_lost_reported = true;
        fr->type = IW_FRAME_LOST;
        fr->offset = fr->wire_off = d->_lost_off;
        fr->lost_len = d->_lost_len;
        fr->wire_len = (size_t)d->_lost_len;
        fr->lost_why = d->_lost_why;
        fr->verdict = d->_lost_verdict;
        return true;
    }
    return false;
}
