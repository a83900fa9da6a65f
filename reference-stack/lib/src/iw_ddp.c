/* SPDX-License-Identifier: GPL-2.0-or-later */
/* DDP headers, RFC 5041 §4.1-4.3. */
#include <iwarp/ddp.h>

#include <string.h>

#include <iwarp/wire.h>

iw_ssize iw_ddp_decode_hdr(iw_ddp_hdr *h, const uint8_t *buf, size_t len) {
    *h = (iw_ddp_hdr){0};
    if (len < 1)
        return IW_ERR_NEED_MORE;
    size_t hl = iw_ddp_hdr_len(buf[0]);
    if (len < hl)
        return IW_ERR_NEED_MORE;
    uint8_t ctrl = buf[0];
    h->tagged = (ctrl & IW_DDP_CTRL_T) != 0;
    h->last = (ctrl & IW_DDP_CTRL_L) != 0;
    h->rsvd = (uint8_t)((ctrl & IW_DDP_CTRL_RSVD) >> 2);
    h->dv = ctrl & IW_DDP_CTRL_DV;
    h->rsvd_ulp = buf[1];
    if (h->tagged) { /* §4.2 */
        h->stag = iw_get_u32(buf + 2);
        h->to = iw_get_u64(buf + 6);
    } else { /* §4.3 */
        h->rsvd_ulp2 = iw_get_u32(buf + 2);
        h->qn = iw_get_u32(buf + 6);
        h->msn = iw_get_u32(buf + 10);
        h->mo = iw_get_u32(buf + 14);
    }
    return (iw_ssize)hl;
}

iw_ssize iw_ddp_encode_hdr(uint8_t *out, size_t outlen, const iw_ddp_hdr *h) {
    if (h->rsvd > 0xF || h->dv > 0x3)
        return IW_ERR_INVALID_ARG;
    size_t hl = h->tagged ? IW_DDP_TAGGED_HDR_LEN : IW_DDP_UNTAGGED_HDR_LEN;
    if (outlen < hl)
        return IW_ERR_NOBUF;
    out[0] = (uint8_t)((h->tagged ? IW_DDP_CTRL_T : 0) | (h->last ? IW_DDP_CTRL_L : 0) |
                       h->rsvd << 2 | h->dv);
    out[1] = h->rsvd_ulp;
    if (h->tagged) {
        iw_put_u32(out + 2, h->stag);
        iw_put_u64(out + 6, h->to);
    } else {
        iw_put_u32(out + 2, h->rsvd_ulp2);
        iw_put_u32(out + 6, h->qn);
        iw_put_u32(out + 10, h->msn);
        iw_put_u32(out + 14, h->mo);
    }
    return (iw_ssize)hl;
}
