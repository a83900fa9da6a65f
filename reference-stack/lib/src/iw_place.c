/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Data-sink validation. Comments name the RFC rule each check implements;
 * where the RFC names no code, the choice is stated at the check. */
#include "iw_place.h"

static iw_place place_fail(uint16_t term, const char *rfc) {
    iw_place p = {false, term, rfc, NULL, NULL};
    return p;
}

static iw_place place_ok(uint8_t *dst, iw_mr *mr) {
    iw_place p = {true, 0, NULL, dst, mr};
    return p;
}

/* The triples for one layer's version of the same five checks. */
typedef struct {
    uint16_t invalid, bounds, not_assoc, wrap, access;
    const char *rfc;
} place_codes;

static const place_codes place_ddp = {
    IW_TERM_DDP_T_INVALID_STAG, IW_TERM_DDP_T_BASE_BOUNDS, IW_TERM_DDP_T_STAG_NOT_ASSOC,
    IW_TERM_DDP_T_TO_WRAP,
    /* RFC 5041 §7.1 tagged (2): the STag must name a buffer that allows
     * placement. DDP registers no access-rights code, so a region without
     * the right is an Invalid STag for placement. */
    IW_TERM_DDP_T_INVALID_STAG, "RFC 5041 §7.1"};

static const place_codes place_rdmap = {IW_TERM_RDMAP_INVALID_STAG,   IW_TERM_RDMAP_BASE_BOUNDS,
                                        IW_TERM_RDMAP_STAG_NOT_ASSOC, IW_TERM_RDMAP_TO_WRAP,
                                        IW_TERM_RDMAP_ACCESS_RIGHTS,  "RFC 5040 §7.2"};

static iw_place place_check(const iw_rnic *r, uint32_t pd, uint32_t stag, uint64_t to, uint64_t len,
                            unsigned need, const place_codes *c) {
    /* (1) the STag is valid: known, current key, not invalidated. */
    iw_mr *mr = iw_rnic_mr(r, stag);
    if (!mr || mr->state != MR_VALID)
        return place_fail(c->invalid, c->rfc);
    /* ... and associated with this stream: same Protection Domain
     * (RFC 5042 §6.1.1). */
    if (mr->pd != pd)
        return place_fail(c->not_assoc, c->rfc);
    /* (2) the region allows this access (RFC 5042 §6.3.5). */
    if ((mr->access & need) != need)
        return place_fail(c->access, c->rfc);
    /* (5) TO + length must not wrap. Checked before the bounds so that a
     * wrapping segment is named for what it is rather than as (3)/(4). */
    if (to + len < to)
        return place_fail(c->wrap, c->rfc);
    /* (3) TO within the region, (4) TO + length within the region. */
    if (to < mr->base_to || to - mr->base_to > mr->len || len > mr->len - (to - mr->base_to))
        return place_fail(c->bounds, c->rfc);
    return place_ok(mr->addr + (to - mr->base_to), mr);
}

iw_place iw_place_tagged(const iw_rnic *r, uint32_t pd, uint32_t stag, uint64_t to, uint64_t len,
                         unsigned need) {
    /* RFC 5041 §5.2: a zero-length tagged segment's STag and TO MUST NOT be
     * checked; §7.1 validates non-zero-length segments only. */
    if (len == 0)
        return place_ok(NULL, NULL);
    return place_check(r, pd, stag, to, len, need, &place_ddp);
}

iw_place iw_place_read_src(const iw_rnic *r, uint32_t pd, uint32_t stag, uint64_t to,
                           uint32_t size) {
    /* RFC 5040 §5.2.1: RDMARDSZ 0 is not validated. */
    if (size == 0)
        return place_ok(NULL, NULL);
    return place_check(r, pd, stag, to, size, IW_ACCESS_REMOTE_READ, &place_rdmap);
}

iw_place iw_place_read_resp(uint32_t stag, uint64_t to, uint64_t len, uint32_t sink_stag,
                            uint64_t sink_to, uint32_t size) {
    if (len == 0)
        return place_ok(NULL, NULL);
    if (stag != sink_stag)
        return place_fail(IW_TERM_DDP_T_INVALID_STAG, "RFC 5041 §7.1; RFC 5040 §5.2");
    /* (5) before (3)/(4), as for every tagged segment (place_check). */
    if (to + len < to)
        return place_fail(IW_TERM_DDP_T_TO_WRAP, "RFC 5041 §7.1; RFC 5040 §5.2");
    uint64_t off = to - sink_to;
    if (to < sink_to || off > size || len > size - off)
        return place_fail(IW_TERM_DDP_T_BASE_BOUNDS, "RFC 5041 §7.1; RFC 5040 §5.2");
    return place_ok(NULL, NULL);
}

iw_place iw_place_local_src(const iw_rnic *r, uint32_t pd, uint32_t stag, uint64_t to,
                            uint32_t len) {
    return place_check(r, pd, stag, to, len, 0, &place_rdmap);
}

iw_place iw_place_atomic(const iw_rnic *r, uint32_t pd, uint32_t stag, uint64_t to) {
    iw_place p = place_check(r, pd, stag, to, 8, IW_ACCESS_REMOTE_ATOMIC, &place_rdmap);
    if (!p.ok)
        return p;
    /* RFC 7306 §5.1.1/§5.1.2: the Tagged Offset MUST be 64-bit aligned;
     * §8.2 names Remote Operation / Catastrophic error, localized to the
     * stream, and the memory must not be modified. */
    if (to & 7)
        return place_fail(IW_TERM_RDMAP_CATASTROPHIC_STREAM, "RFC 7306 §8.2");
    return p;
}

iw_place iw_place_invalidate(const iw_rnic *r, uint32_t pd, uint32_t stag) {
    /* RFC 5040 §7.2 (4)-(5) and §5.3: the Invalidate STag must be valid and
     * associated with this stream; otherwise, and for a region that cannot
     * be invalidated, the Terminate is "STag cannot be Invalidated" as a
     * Remote Protection error (Fig. 10 lists Send with Invalidate there). */
    iw_mr *mr = iw_rnic_mr(r, stag);
    if (!mr || mr->state != MR_VALID || mr->pd != pd || (mr->access & IW_MR_NO_INVALIDATE))
        return place_fail(IW_TERM_RDMAP_PROT_CANT_INVALIDATE, "RFC 5040 §5.3, §7.2");
    return place_ok(NULL, mr);
}

iw_place iw_place_untagged_msn(uint32_t msn, uint32_t base, uint32_t posted) {
    uint32_t d = msn - base; /* MSNs wrap modulo 2^32 (RFC 5041 §4.3) */
    if (d < posted)
        return place_ok(NULL, NULL);
    /* The next message with no buffer posted for it is (2) "no buffer
     * available"; any other MSN lies outside the legal window (5). */
    if (d == posted)
        return place_fail(IW_TERM_DDP_UT_NO_BUFFER, "RFC 5041 §7.1");
    return place_fail(IW_TERM_DDP_UT_MSN_RANGE, "RFC 5041 §7.1");
}

iw_place iw_place_untagged_mo(uint8_t *buf, uint32_t buflen, uint32_t mo, uint32_t len) {
    if (len == 0)
        return place_ok(NULL, NULL);
    /* (3) MO within the buffer, (4) MO + length within the buffer. */
    if (mo >= buflen)
        return place_fail(IW_TERM_DDP_UT_INVALID_MO, "RFC 5041 §7.1");
    if (len > buflen - mo)
        return place_fail(IW_TERM_DDP_UT_TOO_LONG, "RFC 5041 §7.1; RFC 5040 §5.3");
    return place_ok(buf + mo, NULL);
}
