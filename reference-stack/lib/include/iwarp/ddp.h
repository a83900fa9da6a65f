/* SPDX-License-Identifier: GPL-2.0-or-later */
/* DDP: Direct Data Placement, RFC 5041 §4 (headers). Pure codecs. */
#ifndef IWARP_DDP_H
#define IWARP_DDP_H

#include <iwarp/err.h>
#include <iwarp/types.h>

IW_BEGIN_DECLS

#define IW_DDP_TAGGED_HDR_LEN 14   /* RFC 5041 §4.2 */
#define IW_DDP_UNTAGGED_HDR_LEN 18 /* RFC 5041 §4.3 */
#define IW_DDP_VERSION 1           /* RFC 5041 §4.1: DV */

#define IW_DDP_CTRL_T 0x80
#define IW_DDP_CTRL_L 0x40
#define IW_DDP_CTRL_RSVD 0x3C
#define IW_DDP_CTRL_DV 0x03

typedef struct iw_ddp_hdr {
    bool tagged;      /* T */
    bool last;        /* L */
    uint8_t rsvd;     /* DDP Control reserved bits (4), as received */
    uint8_t dv;       /* DDP version */
    uint8_t rsvd_ulp; /* RsvdULP[0:7]: the RDMAP Control octet */
    /* tagged (§4.2) */
    uint32_t stag;
    uint64_t to;
    /* untagged (§4.3) */
    uint32_t rsvd_ulp2; /* RsvdULP[8:39]: RDMAP's Invalidate STag */
    uint32_t qn;
    uint32_t msn;
    uint32_t mo;
} iw_ddp_hdr;

/* Header length implied by the T bit of the DDP Control octet. */
static inline size_t iw_ddp_hdr_len(uint8_t ctrl) {
    return (ctrl & IW_DDP_CTRL_T) ? IW_DDP_TAGGED_HDR_LEN : IW_DDP_UNTAGGED_HDR_LEN;
}

/* Decode the DDP header at buf. Returns its length (14 or 18) or
 * IW_ERR_NEED_MORE. Field values are not judged here (see iw_rdmap_decode). */
iw_ssize iw_ddp_decode_hdr(iw_ddp_hdr *h, const uint8_t *buf, size_t len);

/* Encode h (rsvd and dv written as given, so callers can craft bad ones).
 * Returns 14/18 or IW_ERR_NOBUF / IW_ERR_INVALID_ARG (field wider than its bits). */
iw_ssize iw_ddp_encode_hdr(uint8_t *out, size_t outlen, const iw_ddp_hdr *h);

IW_END_DECLS
#endif
