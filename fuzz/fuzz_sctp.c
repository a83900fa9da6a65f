/* SPDX-License-Identifier: GPL-2.0-or-later */
/* DDP over SCTP chunk payloads, RFC 5043 §5 and RFC 6581 §7.
 *
 * Input: one selector octet (mod 3: DDP Segment Chunk, Session Control,
 * Adaptation Layer Indication), then the payload, decoded from an
 * exact-size copy so an over-read faults.
 * Invariants:
 *  - a chunk decodes to its whole length or fails with a problem that
 *    names its RFC section; spans point inside the input;
 *  - a decoded chunk re-encodes to exactly its bytes (every bit of the
 *    enhanced data is a field), and decodes again to the same fields;
 *  - Private Data over 512 octets, or on a Terminate, never decodes;
 *  - the Adaptation Layer Indication says "need more" until 8 octets
 *    decide, then the same for every longer prefix. */
#include <iwarp/sctp.h>

#include "fuzz.h"

static bool inside(const uint8_t *p, size_t n, const uint8_t *b, size_t len) {
    return !p ? n == 0 : p >= b && (size_t)(p - b) <= len && n <= len - (size_t)(p - b);
}

static void one_seg(const uint8_t *b, size_t len) {
    iw_sctp_seg s;
    iw_sctp_problem why;
    iw_ssize r = iw_sctp_seg_decode(&s, b, len, &why);
    if (len < IW_SCTP_SSN_LEN) {
        FUZZ_CHECK(r == IW_ERR_PROTO && why == IW_SCTP_PROBLEM_SEG_SHORT);
        return;
    }
    FUZZ_CHECK(r == (iw_ssize)len && why == IW_SCTP_PROBLEM_NONE);
    FUZZ_CHECK(inside(s.ddp, s.ddp_len, b, len) && s.ddp_len == len - IW_SCTP_SSN_LEN);
    uint8_t *out = malloc(len);
    FUZZ_CHECK(out != NULL);
    FUZZ_CHECK(iw_sctp_seg_encode(out, len, s.ssn, NULL, 0, s.ddp, s.ddp_len) == (iw_ssize)len);
    FUZZ_CHECK(memcmp(out, b, len) == 0);
    FUZZ_CHECK(iw_sctp_seg_encode(out, len - 1, s.ssn, NULL, 0, s.ddp, s.ddp_len) == IW_ERR_NOBUF);
    free(out);
}

static void one_ctrl(const uint8_t *b, size_t len) {
    iw_sctp_ctrl c, d;
    iw_sctp_problem why;
    iw_ssize r = iw_sctp_ctrl_decode(&c, b, len, &why);
    FUZZ_CHECK(r == IW_ERR_PROTO || r == (iw_ssize)len);
    if (r == IW_ERR_PROTO) {
        FUZZ_CHECK(why != IW_SCTP_PROBLEM_NONE && iw_sctp_problem_rfc(why) != NULL);
        return;
    }
    FUZZ_CHECK(why == IW_SCTP_PROBLEM_NONE && iw_sctp_fc_str(c.fc) != NULL);
    FUZZ_CHECK(inside(c.pd, c.pd_len, b, len) && inside(c.ulp_pd, c.ulp_pd_len, b, len));
    if (c.fc == IW_SCTP_FC_EXPERIMENTAL)
        return;
    FUZZ_CHECK(c.pd_len <= IW_SCTP_PD_MAX);
    FUZZ_CHECK(c.fc != IW_SCTP_FC_TERMINATE || c.pd_len == 0);
    FUZZ_CHECK(c.enhanced == iw_sctp_fc_enhanced(c.fc));
    FUZZ_CHECK(c.pd_len == c.ulp_pd_len + (c.enhanced ? IW_MPA_V2_DATA_LEN : 0));
    uint8_t out[IW_SCTP_CTRL_HDR_LEN + IW_SCTP_PD_MAX];
    FUZZ_CHECK(iw_sctp_ctrl_encode(out, sizeof out, &c) == (iw_ssize)len);
    FUZZ_CHECK(memcmp(out, b, len) == 0);
    FUZZ_CHECK(iw_sctp_ctrl_encode(out, len - 1, &c) == IW_ERR_NOBUF);
    FUZZ_CHECK(iw_sctp_ctrl_decode(&d, out, len, &why) == (iw_ssize)len);
    FUZZ_CHECK(d.ssn == c.ssn && d.fc == c.fc && d.enhanced == c.enhanced);
    FUZZ_CHECK(d.v2.p2p == c.v2.p2p && d.v2.rtr_send == c.v2.rtr_send &&
               d.v2.rtr_write == c.v2.rtr_write && d.v2.rtr_read == c.v2.rtr_read &&
               d.v2.ird == c.v2.ird && d.v2.ord == c.v2.ord && d.notes == c.notes);
}

static void one_adapt(const uint8_t *b, size_t len) {
    uint32_t ind, ind2;
    iw_sctp_problem why, why2;
    iw_ssize r = iw_sctp_adapt_decode(&ind, b, len, &why);
    FUZZ_CHECK(r == IW_ERR_NEED_MORE || r == IW_ERR_PROTO || r == IW_SCTP_ADAPT_PARAM_LEN);
    FUZZ_CHECK((r == IW_ERR_PROTO) == (why != IW_SCTP_PROBLEM_NONE));
    bool decided = false;
    iw_ssize first = 0;
    for (size_t k = 0; k <= len && k <= 2 * IW_SCTP_ADAPT_PARAM_LEN; k++) {
        uint8_t *cp = fuzz_dup(b, k);
        iw_ssize rk = iw_sctp_adapt_decode(&ind2, cp, k, &why2);
        free(cp);
        if (!decided && rk != IW_ERR_NEED_MORE) {
            decided = true;
            first = rk;
        }
        if (decided)
            FUZZ_CHECK(rk == first);
    }
    FUZZ_CHECK(!decided || first == r);
    if (r == IW_SCTP_ADAPT_PARAM_LEN) {
        uint8_t out[IW_SCTP_ADAPT_PARAM_LEN];
        FUZZ_CHECK(iw_sctp_adapt_encode(out, sizeof out, ind) == IW_SCTP_ADAPT_PARAM_LEN);
        FUZZ_CHECK(memcmp(out, b, sizeof out) == 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    /* Exact size (so an over-read faults); calloc, since gcc cannot see
     * that an empty payload is never read. */
    size_t n = size - 1;
    uint8_t *cp = calloc(n ? n : 1, 1);
    FUZZ_CHECK(cp != NULL);
    memcpy(cp, data + 1, n);
    switch (data[0] % 3) {
    case 0:
        one_seg(cp, n);
        break;
    case 1:
        one_ctrl(cp, n);
        break;
    default:
        one_adapt(cp, n);
        break;
    }
    free(cp);
    return 0;
}
