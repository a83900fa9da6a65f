/* SPDX-License-Identifier: GPL-2.0-or-later */
/* MPA Request/Reply frames (RFC 5044 §7.1, RFC 6581 §6, §9) and MULPDU (§4.5). */
#include <iwarp/mpa.h>

#include <string.h>

#include <iwarp/wire.h>

#define MPA_FLAG_M 0x80
#define MPA_FLAG_C 0x40
#define MPA_FLAG_R 0x20
#define MPA_FLAG_S 0x10 /* RFC 6581 §6: taken from the RFC 5044 Res bits */
#define MPA_RES_V2 0x0F
#define MPA_V2_A 0x8000 /* RFC 6581 §9, first 16-bit word */
#define MPA_V2_B 0x4000
#define MPA_V2_C 0x8000 /* second word */
#define MPA_V2_D 0x4000
#define MPA_V2_MASK 0x3FFF

/* True while the octets present could still be the given key. */
static bool mpa_key_prefix(const uint8_t *buf, size_t len, const char *key) {
    size_t n = len < IW_MPA_KEY_LEN ? len : IW_MPA_KEY_LEN;
    return memcmp(buf, key, n) == 0;
}

void iw_mpa_v2_decode(iw_mpa_v2 *v2, const uint8_t *p, uint32_t *notes) {
    uint16_t w1 = iw_get_u16(p), w2 = iw_get_u16(p + 2);
    v2->p2p = (w1 & MPA_V2_A) != 0;
    v2->rtr_send = (w1 & MPA_V2_B) != 0;
    v2->ird = w1 & MPA_V2_MASK;
    v2->rtr_write = (w2 & MPA_V2_C) != 0;
    v2->rtr_read = (w2 & MPA_V2_D) != 0;
    v2->ord = w2 & MPA_V2_MASK;
    bool any_rtr = v2->rtr_send || v2->rtr_write || v2->rtr_read;
    /* RFC 6581 §9: with A=0, B/C/D MUST be 0 on send and ignored on receive. */
    if (!v2->p2p && any_rtr)
        *notes |= IW_NOTE(MPA_V2_RTR_WITHOUT_P2P);
    /* §9.2: a peer-to-peer frame names at least one RTR. */
    if (v2->p2p && !any_rtr)
        *notes |= IW_NOTE(MPA_V2_P2P_NO_RTR);
}

iw_ssize iw_mpa_v2_encode(uint8_t *p, const iw_mpa_v2 *v2) {
    if (v2->ird > MPA_V2_MASK || v2->ord > MPA_V2_MASK)
        return IW_ERR_INVALID_ARG;
    iw_put_u16(p, (uint16_t)((v2->p2p ? MPA_V2_A : 0) | (v2->rtr_send ? MPA_V2_B : 0) | v2->ird));
    iw_put_u16(p + 2, (uint16_t)((v2->rtr_write ? MPA_V2_C : 0) | (v2->rtr_read ? MPA_V2_D : 0) |
                                 v2->ord));
    return IW_MPA_V2_DATA_LEN;
}

bool iw_mpa_key_shaped(const uint8_t *buf, size_t len) {
    return buf && len >= IW_MPA_KEY_LEN && memcmp(buf, "MPA ID ", 7) == 0 &&
           memcmp(buf + 10, " Frame", 6) == 0;
}

int iw_mpa_fo_markers(const uint8_t *p, size_t len) {
    if (!p || len < 2)
        return -1;
    return p[0] == 0 && p[1] == 0;
}

bool iw_mpa_fo_crc(const iw_mpa_fpdu *first) { return first && first->crc == IW_CRC_GOOD; }

iw_ssize iw_mpa_rr_decode(iw_mpa_rr *rr, const uint8_t *buf, size_t len, iw_verdict *v) {
    memset(rr, 0, sizeof *rr);
    *v = iw_verdict_ok();

    /* RFC 5044 §7.1.2 rule 5: a key mismatch closes the connection. Judge
     * as soon as the octets present rule out both keys. */
    bool req = mpa_key_prefix(buf, len, IW_MPA_KEY_REQ);
    bool rep = mpa_key_prefix(buf, len, IW_MPA_KEY_REP);
    if (!req && !rep) {
        *v = iw_verdict_close(IW_CLOSE_MPA_BAD_KEY, "RFC 5044 §7.1.2");
        return IW_ERR_PROTO;
    }
    if (len < IW_MPA_RR_HDR_LEN)
        return IW_ERR_NEED_MORE;

    rr->type = req ? IW_MPA_REQUEST : IW_MPA_REPLY;
    uint8_t flags = buf[16];
    rr->m = (flags & MPA_FLAG_M) != 0;
    rr->c = (flags & MPA_FLAG_C) != 0;
    rr->r = (flags & MPA_FLAG_R) != 0;
    rr->rev = buf[17];
    rr->pd_len = iw_get_u16(buf + 18);

    /* RFC 6581 §6: S is meaningful only with Rev >= 2; under RFC 5044 it is
     * one of the Res bits, which are not checked on receive (§7.1.1). */
    if (rr->rev >= IW_MPA_REV2) {
        rr->s = (flags & MPA_FLAG_S) != 0;
        rr->res = flags & MPA_RES_V2;
    } else {
        rr->res = flags & (MPA_FLAG_S | MPA_RES_V2);
        if (flags & MPA_FLAG_S)
            rr->notes |= IW_NOTE(MPA_S_WITH_REV1);
    }
    if (rr->res)
        rr->notes |= IW_NOTE(MPA_RES_BITS);
    /* §7.1.1: R is 0 in a Request and not checked. */
    if (rr->type == IW_MPA_REQUEST && rr->r)
        rr->notes |= IW_NOTE(MPA_R_IN_REQUEST);

    /* §7.1.1: a revision we cannot interoperate with closes the connection.
     * We speak Rev 1 (RFC 5044) and Rev 2 (RFC 6581); Rev 0 is the pre-IETF
     * RDMAC framing (App. C), which this stack does not implement. */
    if (rr->rev != IW_MPA_REV1 && rr->rev != IW_MPA_REV2) {
        *v = iw_verdict_close(IW_CLOSE_MPA_BAD_REV, "RFC 5044 §7.1.1");
        return IW_ERR_PROTO;
    }
    /* §7.1.1: PD_Length over 512 closes the connection. */
    if (rr->pd_len > IW_MPA_PD_MAX) {
        *v = iw_verdict_close(IW_CLOSE_MPA_PD_TOO_LONG, "RFC 5044 §7.1.1");
        return IW_ERR_PROTO;
    }
    size_t total = IW_MPA_RR_HDR_LEN + (size_t)rr->pd_len;
    if (len < total)
        return IW_ERR_NEED_MORE;

    rr->pd = rr->pd_len ? buf + IW_MPA_RR_HDR_LEN : NULL;
    rr->ulp_pd = rr->pd;
    rr->ulp_pd_len = rr->pd_len;
    if (rr->s) {
        /* RFC 6581 §6: PD_Length counts the 4 octets of enhanced data. */
        if (rr->pd_len < IW_MPA_V2_DATA_LEN) {
            *v = iw_verdict_close(IW_CLOSE_MPA_V2_PD_SHORT, "RFC 6581 §6");
            return IW_ERR_PROTO;
        }
        rr->enhanced = true;
        iw_mpa_v2_decode(&rr->v2, rr->pd, &rr->notes);
        rr->ulp_pd_len = (uint16_t)(rr->pd_len - IW_MPA_V2_DATA_LEN);
        rr->ulp_pd = rr->ulp_pd_len ? rr->pd + IW_MPA_V2_DATA_LEN : NULL;
    }
    return (iw_ssize)total;
}

iw_verdict iw_mpa_rr_expect(const iw_mpa_rr *rr, iw_mpa_rr_type expected) {
    if (rr->type == expected)
        return iw_verdict_ok();
    /* §7.1.2 rule 8: the key difference detects Initiator/Initiator startup. */
    if (rr->type == IW_MPA_REQUEST)
        return iw_verdict_close(IW_CLOSE_MPA_INITIATOR_INITIATOR, "RFC 5044 §7.1.2");
    /* A responder expects the Request key; anything else is rule 5. */
    return iw_verdict_close(IW_CLOSE_MPA_BAD_KEY, "RFC 5044 §7.1.2");
}

iw_ssize iw_mpa_rr_encode(uint8_t *out, size_t outlen, const iw_mpa_rr *rr) {
    size_t v2_len = rr->s ? IW_MPA_V2_DATA_LEN : 0;
    size_t pd_len = v2_len + rr->ulp_pd_len;
    if (pd_len > IW_MPA_PD_MAX || rr->v2.ird > MPA_V2_MASK || rr->v2.ord > MPA_V2_MASK ||
        (rr->ulp_pd_len && !rr->ulp_pd) || (rr->type != IW_MPA_REQUEST && rr->type != IW_MPA_REPLY))
        return IW_ERR_INVALID_ARG;
    size_t total = IW_MPA_RR_HDR_LEN + pd_len;
    if (outlen < total)
        return IW_ERR_NOBUF;

    memcpy(out, rr->type == IW_MPA_REQUEST ? IW_MPA_KEY_REQ : IW_MPA_KEY_REP, IW_MPA_KEY_LEN);
    out[16] = (uint8_t)((rr->m ? MPA_FLAG_M : 0) | (rr->c ? MPA_FLAG_C : 0) |
                        (rr->r ? MPA_FLAG_R : 0) | (rr->s ? MPA_FLAG_S : 0) |
                        /* Rev 1 keeps S among the Res bits (decode puts it in res) */
                        (rr->res & (MPA_FLAG_S | MPA_RES_V2)));
    out[17] = rr->rev;
    iw_put_u16(out + 18, (uint16_t)pd_len);
    uint8_t *p = out + IW_MPA_RR_HDR_LEN;
    if (rr->s) {
        iw_mpa_v2_encode(p, &rr->v2); /* IRD/ORD checked above */
        p += IW_MPA_V2_DATA_LEN;
    }
    if (rr->ulp_pd_len)
        memcpy(p, rr->ulp_pd, rr->ulp_pd_len);
    return (iw_ssize)total;
}

uint32_t iw_mpa_mulpdu(uint32_t emss, bool markers) {
    /* RFC 5044 §4.5: MULPDU = EMSS - (6 + 4 * Ceiling(EMSS / 512) + EMSS mod 4)
     * with markers, EMSS - (6 + EMSS mod 4) without; never below 128 nor
     * above 64768. */
    uint64_t overhead = 6 + (uint64_t)(emss % 4);
    if (markers)
        overhead += 4 * (((uint64_t)emss + IW_MPA_MARKER_INTERVAL - 1) / IW_MPA_MARKER_INTERVAL);
    uint64_t m = emss > overhead ? emss - overhead : 0;
    if (m < IW_MPA_MULPDU_MIN)
        m = IW_MPA_MULPDU_MIN;
    if (m > IW_MPA_MULPDU_MAX)
        m = IW_MPA_MULPDU_MAX;
    return (uint32_t)m;
}
