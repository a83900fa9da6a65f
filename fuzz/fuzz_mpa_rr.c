/* SPDX-License-Identifier: GPL-2.0-or-later */
/* MPA Request/Reply codec, RFC 5044 §7.1 and RFC 6581 §6, §9.
 *
 * Input: the bytes of one frame (anything may follow it).
 * Invariants:
 *  - every prefix gets a consistent answer: "need more" until the bytes
 *    decide, then the same verdict or the same frame length for every
 *    longer prefix (a receiver may get the frame in any pieces);
 *  - a decoded frame re-encodes to exactly its wire bytes, and decoding
 *    that again gives the same fields. */
#include <iwarp/mpa.h>

#include "fuzz.h"

#define MAX_FRAME (IW_MPA_RR_HDR_LEN + IW_MPA_PD_MAX)

static void check_same_rr(const iw_mpa_rr *a, const iw_mpa_rr *b) {
    FUZZ_CHECK(a->type == b->type && a->m == b->m && a->c == b->c && a->r == b->r);
    FUZZ_CHECK(a->s == b->s && a->res == b->res && a->rev == b->rev);
    FUZZ_CHECK(a->pd_len == b->pd_len && a->enhanced == b->enhanced);
    FUZZ_CHECK(a->v2.p2p == b->v2.p2p && a->v2.rtr_send == b->v2.rtr_send &&
               a->v2.rtr_write == b->v2.rtr_write && a->v2.rtr_read == b->v2.rtr_read &&
               a->v2.ird == b->v2.ird && a->v2.ord == b->v2.ord);
    FUZZ_CHECK(a->ulp_pd_len == b->ulp_pd_len && a->notes == b->notes);
    FUZZ_CHECK((a->pd == NULL) == (b->pd == NULL) && (a->ulp_pd == NULL) == (b->ulp_pd == NULL));
    FUZZ_CHECK(a->pd_len == 0 || memcmp(a->pd, b->pd, a->pd_len) == 0);
    FUZZ_CHECK(a->ulp_pd_len == 0 || memcmp(a->ulp_pd, b->ulp_pd, a->ulp_pd_len) == 0);
}

static void check_same_verdict(iw_verdict a, iw_verdict b) {
    FUZZ_CHECK(a.kind == b.kind && a.term == b.term && a.close == b.close);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    iw_mpa_rr rr, rr2;
    iw_verdict v, v2;
    iw_ssize r = iw_mpa_rr_decode(&rr, data, size, &v);
    FUZZ_CHECK(r == IW_ERR_NEED_MORE || r == IW_ERR_PROTO ||
               (r >= IW_MPA_RR_HDR_LEN && (size_t)r <= size && (size_t)r <= MAX_FRAME));
    FUZZ_CHECK((r == IW_ERR_PROTO) == (v.kind != IW_VERDICT_OK));
    FUZZ_CHECK(v.kind != IW_VERDICT_TERM); /* startup errors close, never Terminate */
    if (r == IW_ERR_PROTO)
        FUZZ_CHECK(v.rfc != NULL);

    /* Prefixes, each in an exact-size copy so an over-read faults. Once a
     * prefix decides, every longer one (including the whole input) must
     * decide the same way. */
    size_t lim = size < MAX_FRAME + 1 ? size : MAX_FRAME + 1;
    bool decided = false;
    iw_ssize first_r = 0;
    iw_verdict first_v = iw_verdict_ok();
    for (size_t k = 0; k <= lim; k++) {
        uint8_t *cp = fuzz_dup(data, k);
        iw_ssize rk = iw_mpa_rr_decode(&rr2, cp, k, &v2);
        free(cp);
        if (!decided && rk != IW_ERR_NEED_MORE) {
            decided = true;
            first_r = rk;
            first_v = v2;
        }
        if (decided) {
            FUZZ_CHECK(rk == first_r);
            check_same_verdict(v2, first_v);
        }
        if (rk >= 0)
            FUZZ_CHECK((size_t)rk == k); /* the frame is complete at exactly k */
        if (decided && rk >= 0)
            break; /* longer prefixes only add trailing bytes: checked below */
    }
    if (decided) {
        FUZZ_CHECK(r == first_r);
        check_same_verdict(v, first_v);
    } else {
        FUZZ_CHECK(r == IW_ERR_NEED_MORE);
    }
    if (r < 0)
        return 0;

    /* Re-encode from the decoded fields: ulp_pd and the v2 fields carry
     * everything, pd/pd_len are derived. */
    uint8_t out[MAX_FRAME];
    iw_ssize w = iw_mpa_rr_encode(out, sizeof out, &rr);
    FUZZ_CHECK(w == r);
    FUZZ_CHECK(memcmp(out, data, (size_t)r) == 0);
    FUZZ_CHECK(iw_mpa_rr_decode(&rr2, out, (size_t)w, &v2) == w);
    check_same_rr(&rr, &rr2);

    /* One octet short: the size is checked before anything is written. */
    uint8_t *small = malloc((size_t)w - 1);
    FUZZ_CHECK(small != NULL);
    memset(small, 0xA5, (size_t)w - 1);
    FUZZ_CHECK(iw_mpa_rr_encode(small, (size_t)w - 1, &rr) == IW_ERR_NOBUF);
    for (size_t i = 0; i < (size_t)w - 1; i++)
        FUZZ_CHECK(small[i] == 0xA5);
    free(small);
    return 0;
}
