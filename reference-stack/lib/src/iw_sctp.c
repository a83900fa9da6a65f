/* SPDX-License-Identifier: GPL-2.0-or-later */
/* DDP over SCTP chunk payloads (RFC 5043 §5) and enhanced session control
 * (RFC 6581 §7). */
#include <iwarp/sctp.h>

#include <string.h>

#include <iwarp/wire.h>

const char *iw_sctp_fc_str(uint16_t fc) {
    switch (fc) {
#define IW_X_(n, c, rfc, s)                                                                        \
    case c:                                                                                        \
        return s;
        IW_SCTP_FC_LIST(IW_X_)
#undef IW_X_
    default:
        return NULL;
    }
}

const char *iw_sctp_fc_rfc(uint16_t fc) {
    switch (fc) {
#define IW_X_(n, c, rfc, s)                                                                        \
    case c:                                                                                        \
        return rfc;
        IW_SCTP_FC_LIST(IW_X_)
#undef IW_X_
    default:
        return NULL;
    }
}

static const char *const problem_str[] = {"no problem",
#define IW_X_(n, rfc, s) s,
                                          IW_SCTP_PROBLEM_LIST(IW_X_)
#undef IW_X_
};

static const char *const problem_rfc[] = {NULL,
#define IW_X_(n, rfc, s) rfc,
                                          IW_SCTP_PROBLEM_LIST(IW_X_)
#undef IW_X_
};

#define N_PROBLEMS (sizeof problem_str / sizeof problem_str[0])

const char *iw_sctp_problem_str(iw_sctp_problem p) {
    return (unsigned)p < N_PROBLEMS ? problem_str[p] : "unknown problem";
}

const char *iw_sctp_problem_rfc(iw_sctp_problem p) {
    return (unsigned)p < N_PROBLEMS ? problem_rfc[p] : NULL;
}

static iw_ssize fail(iw_sctp_problem *why, iw_sctp_problem p) {
    *why = p;
    return IW_ERR_PROTO;
}

iw_ssize iw_sctp_seg_decode(iw_sctp_seg *s, const uint8_t *buf, size_t len, iw_sctp_problem *why) {
    memset(s, 0, sizeof *s);
    *why = IW_SCTP_PROBLEM_NONE;
    if (len < IW_SCTP_SSN_LEN)
        return fail(why, IW_SCTP_PROBLEM_SEG_SHORT);
    s->ssn = iw_get_u16(buf);
    s->ddp = buf + IW_SCTP_SSN_LEN;
    s->ddp_len = len - IW_SCTP_SSN_LEN;
    return (iw_ssize)len;
}

iw_ssize iw_sctp_seg_encode(uint8_t *out, size_t outlen, uint16_t ssn, const uint8_t *hdr,
                            size_t hl, const uint8_t *pay, size_t pl) {
    if ((hl && !hdr) || (pl && !pay))
        return IW_ERR_INVALID_ARG;
    if (outlen < IW_SCTP_SSN_LEN || outlen - IW_SCTP_SSN_LEN < hl ||
        outlen - IW_SCTP_SSN_LEN - hl < pl)
        return IW_ERR_NOBUF;
    iw_put_u16(out, ssn);
    if (hl)
        memcpy(out + IW_SCTP_SSN_LEN, hdr, hl);
    if (pl)
        memcpy(out + IW_SCTP_SSN_LEN + hl, pay, pl);
    return (iw_ssize)(IW_SCTP_SSN_LEN + hl + pl);
}

iw_ssize iw_sctp_ctrl_decode(iw_sctp_ctrl *c, const uint8_t *buf, size_t len,
                             iw_sctp_problem *why) {
    memset(c, 0, sizeof *c);
    *why = IW_SCTP_PROBLEM_NONE;
    if (len < IW_SCTP_CTRL_HDR_LEN) {
        if (len >= IW_SCTP_SSN_LEN)
            c->ssn = iw_get_u16(buf);
        return fail(why, IW_SCTP_PROBLEM_CTRL_SHORT);
    }
    c->ssn = iw_get_u16(buf);
    c->fc = iw_get_u16(buf + 2);
    size_t pd_len = len - IW_SCTP_CTRL_HDR_LEN;
    c->pd = pd_len ? buf + IW_SCTP_CTRL_HDR_LEN : NULL;
    c->pd_len = pd_len > UINT16_MAX ? UINT16_MAX : (uint16_t)pd_len;
    if (!iw_sctp_fc_str(c->fc))
        return fail(why, IW_SCTP_PROBLEM_FC_UNASSIGNED);
    if (c->fc == IW_SCTP_FC_EXPERIMENTAL)
        return (iw_ssize)len; /* RFC 6580 §3.5: no rules to judge it by */
    /* RFC 5043 §5.2.3 (and RFC 6581 §7, enhanced data included). */
    if (pd_len > IW_SCTP_PD_MAX)
        return fail(why, IW_SCTP_PROBLEM_PD_TOO_LONG);
    if (c->fc == IW_SCTP_FC_TERMINATE && pd_len)
        return fail(why, IW_SCTP_PROBLEM_TERM_WITH_PD);
    if (iw_sctp_fc_enhanced(c->fc)) {
        if (pd_len < IW_MPA_V2_DATA_LEN)
            return fail(why, IW_SCTP_PROBLEM_ENH_PD_SHORT);
        iw_mpa_v2_decode(&c->v2, c->pd, &c->notes);
        c->enhanced = true;
        c->ulp_pd_len = (uint16_t)(pd_len - IW_MPA_V2_DATA_LEN);
        c->ulp_pd = c->ulp_pd_len ? c->pd + IW_MPA_V2_DATA_LEN : NULL;
    } else {
        c->ulp_pd = c->pd;
        c->ulp_pd_len = c->pd_len;
    }
    return (iw_ssize)len;
}

iw_ssize iw_sctp_ctrl_encode(uint8_t *out, size_t outlen, const iw_sctp_ctrl *c) {
    bool enh = iw_sctp_fc_enhanced(c->fc);
    size_t pd_len = (enh ? IW_MPA_V2_DATA_LEN : 0) + (size_t)c->ulp_pd_len;
    if ((c->ulp_pd_len && !c->ulp_pd) || pd_len > IW_SCTP_PD_MAX ||
        (c->fc == IW_SCTP_FC_TERMINATE && pd_len))
        return IW_ERR_INVALID_ARG;
    if (outlen < IW_SCTP_CTRL_HDR_LEN + pd_len)
        return IW_ERR_NOBUF;
    uint8_t *p = out + IW_SCTP_CTRL_HDR_LEN;
    if (enh) {
        iw_ssize r = iw_mpa_v2_encode(p, &c->v2);
        if (r < 0)
            return r;
        p += IW_MPA_V2_DATA_LEN;
    }
    iw_put_u16(out, c->ssn);
    iw_put_u16(out + 2, c->fc);
    if (c->ulp_pd_len)
        memcpy(p, c->ulp_pd, c->ulp_pd_len);
    return (iw_ssize)(IW_SCTP_CTRL_HDR_LEN + pd_len);
}

iw_ssize iw_sctp_adapt_decode(uint32_t *ind, const uint8_t *buf, size_t len, iw_sctp_problem *why) {
    *ind = 0;
    *why = IW_SCTP_PROBLEM_NONE;
    if (len < 4)
        return IW_ERR_NEED_MORE;
    if (iw_get_u16(buf) != IW_SCTP_ADAPT_PARAM_TYPE)
        return fail(why, IW_SCTP_PROBLEM_ADAPT_BAD_TYPE);
    /* RFC 5043 §5.1: Type, Length (8), a 32-bit indication. */
    if (iw_get_u16(buf + 2) != IW_SCTP_ADAPT_PARAM_LEN)
        return fail(why, IW_SCTP_PROBLEM_ADAPT_BAD_LEN);
    if (len < IW_SCTP_ADAPT_PARAM_LEN)
        return IW_ERR_NEED_MORE;
    *ind = iw_get_u32(buf + 4);
    return IW_SCTP_ADAPT_PARAM_LEN;
}

iw_ssize iw_sctp_adapt_encode(uint8_t *out, size_t outlen, uint32_t ind) {
    if (outlen < IW_SCTP_ADAPT_PARAM_LEN)
        return IW_ERR_NOBUF;
    iw_put_u16(out, IW_SCTP_ADAPT_PARAM_TYPE);
    iw_put_u16(out + 2, IW_SCTP_ADAPT_PARAM_LEN);
    iw_put_u32(out + 4, ind);
    return IW_SCTP_ADAPT_PARAM_LEN;
}

void iw_sctp_ctrl_from_mpa(const iw_mpa_rr *rr, uint16_t ssn, iw_sctp_ctrl *c) {
    memset(c, 0, sizeof *c);
    c->ssn = ssn;
    /* A frame is enhanced when it says S=1 in Rev 2 or later (RFC 6581 §5). */
    bool enh = rr->enhanced || (rr->rev >= IW_MPA_REV2 && rr->s);
    if (rr->type == IW_MPA_REQUEST)
        c->fc = enh ? IW_SCTP_FC_ENH_INITIATE : IW_SCTP_FC_INITIATE;
    else if (rr->r)
        c->fc = enh ? IW_SCTP_FC_ENH_REJECT : IW_SCTP_FC_REJECT;
    else
        c->fc = enh ? IW_SCTP_FC_ENH_ACCEPT : IW_SCTP_FC_ACCEPT;
    c->v2 = rr->v2;
    c->ulp_pd = rr->ulp_pd;
    c->ulp_pd_len = rr->ulp_pd_len;
}

bool iw_sctp_ctrl_as_mpa(const iw_sctp_ctrl *c, iw_mpa_rr *rr) {
    memset(rr, 0, sizeof *rr);
    switch (c->fc) {
    case IW_SCTP_FC_INITIATE:
    case IW_SCTP_FC_ENH_INITIATE:
        rr->type = IW_MPA_REQUEST;
        break;
    case IW_SCTP_FC_REJECT:
    case IW_SCTP_FC_ENH_REJECT:
        rr->r = true;
        /* fall through */
    case IW_SCTP_FC_ACCEPT:
    case IW_SCTP_FC_ENH_ACCEPT:
        rr->type = IW_MPA_REPLY;
        break;
    default:
        return false;
    }
    rr->rev = c->enhanced ? IW_MPA_REV2 : IW_MPA_REV1;
    rr->s = rr->enhanced = c->enhanced;
    rr->v2 = c->v2;
    rr->pd = c->pd;
    rr->pd_len = c->pd_len;
    rr->ulp_pd = c->ulp_pd;
    rr->ulp_pd_len = c->ulp_pd_len;
    return true;
}
