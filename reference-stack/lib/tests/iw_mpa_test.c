/* SPDX-License-Identifier: GPL-2.0-or-later */
/* MPA Request/Reply frames (RFC 5044 §7.1.1 Fig. 8, RFC 6581 §6 and §9)
 * and MULPDU (RFC 5044 §4.5).
 *
 * Golden frames are written byte by byte from the RFC figures; expected
 * field values and close reasons come from the RFC text, not from the
 * implementation. */
#include <iwarp/mpa.h>

#include "iw_test.h"
#include "iw_test_guard.h"

/* RFC 5044 §7.1.1: the two keys, in byte order. */
#define KEY_REQ_HEX "4D 50 41 20 49 44 20 52 65 71 20 46 72 61 6D 65"
#define KEY_REP_HEX "4D 50 41 20 49 44 20 52 65 70 20 46 72 61 6D 65"

static size_t unhex(uint8_t *out, const char *hex) { return iw_test_unhex(out, 600, hex); }

/* Decode with the input ending at a guard page: any over-read faults. */
static iw_ssize decode_guarded(iw_mpa_rr *rr, const uint8_t *buf, size_t len, iw_verdict *v) {
    uint8_t *p = iw_test_guard(buf, len);
    iw_ssize r = iw_mpa_rr_decode(rr, p, len, v);
    /* pointers into the frame are checked by the caller on an unguarded decode */
    iw_test_guard_free(p, len);
    return r;
}

/* Every prefix of a valid frame is "need more" (RFC 5044 §7.1.2 rule 9:
 * PD_Length says how much follows), read through a guard page. */
static void check_truncations(const uint8_t *frame, size_t len) {
    iw_test_guard_buf g;
    iw_test_guard_init(&g, len);
    for (size_t k = 0; k < len; k++) {
        const uint8_t *p = iw_test_guard_place(&g, frame, k);
        iw_mpa_rr rr;
        iw_verdict v;
        iw_ssize r = iw_mpa_rr_decode(&rr, p, k, &v);
        if (r != IW_ERR_NEED_MORE) {
            fprintf(stderr, "  prefix %zu of %zu: got %td\n", k, len, r);
            CHECK_EQ(r, IW_ERR_NEED_MORE);
        }
    }
    /* The whole frame, exactly at the guard. */
    iw_mpa_rr rr;
    iw_verdict v;
    CHECK_EQ(iw_mpa_rr_decode(&rr, iw_test_guard_place(&g, frame, len), len, &v), (iw_ssize)len);
    iw_test_guard_fini(&g);
}

/* Encoding into any buffer shorter than the frame fails with NOBUF and
 * writes nothing. */
static void check_encode_nobuf(const iw_mpa_rr *rr, size_t need) {
    uint8_t out[600];
    for (size_t k = 0; k < need; k++) {
        memset(out, 0xA5, sizeof out);
        CHECK_EQ(iw_mpa_rr_encode(out, k, rr), IW_ERR_NOBUF);
        size_t dirty = 0;
        for (size_t i = 0; i < sizeof out; i++)
            dirty += out[i] != 0xA5;
        CHECK_EQ(dirty, 0);
    }
    CHECK_EQ(iw_mpa_rr_encode(out, need, rr), (iw_ssize)need);
}

/* ---- golden frames ---- */

/* RFC 5044 Fig. 8: Request, M=1 C=1 (flags 0x80|0x40), Rev 1, PD "hello". */
IW_TEST(golden_request_v1) {
    uint8_t f[64];
    size_t n = unhex(f, KEY_REQ_HEX " C0 01 00 05  68 65 6c 6c 6f");
    CHECK_EQ(n, 25);
    iw_mpa_rr rr;
    iw_verdict v;
    REQUIRE(iw_mpa_rr_decode(&rr, f, n, &v) == 25);
    CHECK_EQ(v.kind, IW_VERDICT_OK);
    CHECK_EQ(rr.type, IW_MPA_REQUEST);
    CHECK(rr.m && rr.c && !rr.r && !rr.s && !rr.enhanced);
    CHECK_EQ(rr.res, 0);
    CHECK_EQ(rr.rev, 1);
    CHECK_EQ(rr.pd_len, 5);
    CHECK(rr.pd == f + 20);
    CHECK(rr.ulp_pd == f + 20);
    CHECK_EQ(rr.ulp_pd_len, 5);
    CHECK_EQ(rr.notes, 0);
    CHECK_EQ(iw_mpa_rr_expect(&rr, IW_MPA_REQUEST).kind, IW_VERDICT_OK);
    CHECK_EQ(decode_guarded(&rr, f, n, &v), 25);
    /* Re-encode from the fields a sender sets. */
    iw_mpa_rr e = {0};
    e.type = IW_MPA_REQUEST;
    e.m = e.c = true;
    e.rev = 1;
    e.ulp_pd = (const uint8_t *)"hello";
    e.ulp_pd_len = 5;
    uint8_t out[64];
    REQUIRE(iw_mpa_rr_encode(out, sizeof out, &e) == 25);
    CHECK_MEM(out, f, 25);
    check_truncations(f, n);
    check_encode_nobuf(&e, 25);
}

/* RFC 5044 Fig. 8: Reply, R=1 (0x20, rejected), Rev 1, no Private Data. */
IW_TEST(golden_reply_v1_rejected) {
    uint8_t f[64];
    size_t n = unhex(f, KEY_REP_HEX " 20 01 00 00");
    CHECK_EQ(n, 20);
    iw_mpa_rr rr;
    iw_verdict v;
    REQUIRE(iw_mpa_rr_decode(&rr, f, n, &v) == 20);
    CHECK_EQ(v.kind, IW_VERDICT_OK);
    CHECK_EQ(rr.type, IW_MPA_REPLY);
    CHECK(!rr.m && !rr.c && rr.r && !rr.s);
    CHECK_EQ(rr.rev, 1);
    CHECK_EQ(rr.pd_len, 0);
    CHECK(rr.pd == NULL); /* §7.1.1: PD_Length 0 = no Private Data field */
    CHECK_EQ(rr.ulp_pd_len, 0);
    CHECK_EQ(rr.notes, 0); /* R is meaningful in a Reply */
    iw_mpa_rr e = {0};
    e.type = IW_MPA_REPLY;
    e.r = true;
    e.rev = 1;
    uint8_t out[64];
    REQUIRE(iw_mpa_rr_encode(out, sizeof out, &e) == 20);
    CHECK_MEM(out, f, 20);
    check_truncations(f, n);
    check_encode_nobuf(&e, 20);
}

/* RFC 6581 §6/§9: Request, C=1 S=1 (0x40|0x10), Rev 2, PD_Length 8 =
 * 4 enhanced octets + "abcd". Word 1: A=1 B=0 IRD=0x0010 -> 80 10;
 * word 2: C=1 D=1 ORD=0x0004 -> C0 04. */
IW_TEST(golden_request_v2) {
    uint8_t f[64];
    size_t n = unhex(f, KEY_REQ_HEX " 50 02 00 08  80 10 C0 04  61 62 63 64");
    CHECK_EQ(n, 28);
    iw_mpa_rr rr;
    iw_verdict v;
    REQUIRE(iw_mpa_rr_decode(&rr, f, n, &v) == 28);
    CHECK_EQ(rr.type, IW_MPA_REQUEST);
    CHECK(!rr.m && rr.c && !rr.r && rr.s && rr.enhanced);
    CHECK_EQ(rr.rev, 2);
    CHECK_EQ(rr.pd_len, 8); /* counts the enhanced data too */
    CHECK(rr.pd == f + 20);
    CHECK(rr.v2.p2p && !rr.v2.rtr_send && rr.v2.rtr_write && rr.v2.rtr_read);
    CHECK_EQ(rr.v2.ird, 0x10);
    CHECK_EQ(rr.v2.ord, 4);
    CHECK(rr.ulp_pd == f + 24);
    CHECK_EQ(rr.ulp_pd_len, 4);
    CHECK_EQ(rr.notes, 0);
    iw_mpa_rr e = {0};
    e.type = IW_MPA_REQUEST;
    e.c = e.s = true;
    e.rev = 2;
    e.v2.p2p = e.v2.rtr_write = e.v2.rtr_read = true;
    e.v2.ird = 0x10;
    e.v2.ord = 4;
    e.ulp_pd = (const uint8_t *)"abcd";
    e.ulp_pd_len = 4;
    uint8_t out[64];
    REQUIRE(iw_mpa_rr_encode(out, sizeof out, &e) == 28);
    CHECK_MEM(out, f, 28);
    check_truncations(f, n);
    check_encode_nobuf(&e, 28);
}

/* RFC 6581 §9/§9.1: Reply, M=1 S=1 (0x80|0x10), Rev 2, enhanced data only.
 * Word 1: A=1 B=1 IRD=0x3FFF -> FF FF; word 2: C=0 D=1 ORD=0x3FFF -> 7F FF. */
IW_TEST(golden_reply_v2) {
    uint8_t f[64];
    size_t n = unhex(f, KEY_REP_HEX " 90 02 00 04  FF FF 7F FF");
    CHECK_EQ(n, 24);
    iw_mpa_rr rr;
    iw_verdict v;
    REQUIRE(iw_mpa_rr_decode(&rr, f, n, &v) == 24);
    CHECK_EQ(rr.type, IW_MPA_REPLY);
    CHECK(rr.m && !rr.c && !rr.r && rr.s && rr.enhanced);
    CHECK(rr.v2.p2p && rr.v2.rtr_send && !rr.v2.rtr_write && rr.v2.rtr_read);
    CHECK_EQ(rr.v2.ird, IW_MPA_V2_NO_NEG);
    CHECK_EQ(rr.v2.ord, 0x3FFF);
    CHECK_EQ(rr.ulp_pd_len, 0);
    CHECK(rr.ulp_pd == NULL);
    CHECK_EQ(rr.notes, 0);
    iw_mpa_rr e = {0};
    e.type = IW_MPA_REPLY;
    e.m = e.s = true;
    e.rev = 2;
    e.v2.p2p = e.v2.rtr_send = e.v2.rtr_read = true;
    e.v2.ird = e.v2.ord = 0x3FFF;
    uint8_t out[64];
    REQUIRE(iw_mpa_rr_encode(out, sizeof out, &e) == 24);
    CHECK_MEM(out, f, 24);
    check_truncations(f, n);
    check_encode_nobuf(&e, 24);
}

/* ---- round trips ---- */

/* Encode -> decode over M/C/R/S, Rev 1/2, both types, PD sizes and IRD/ORD.
 * The header octets are checked against values computed here from Fig. 8. */
IW_TEST(round_trip_matrix) {
    static const uint16_t pd_sizes[] = {0, 1, 4, 100, 508, 512};
    static const uint16_t irds[] = {0, 1, 0x1234, 0x3FFF};
    uint8_t pd[IW_MPA_PD_MAX];
    for (size_t i = 0; i < sizeof pd; i++)
        pd[i] = (uint8_t)(i * 7 + 3);
    uint8_t out[600], again[600];
    unsigned cases = 0;
    for (unsigned bits = 0; bits < 16; bits++)
        for (int rev = 1; rev <= 2; rev++)
            for (int type = IW_MPA_REQUEST; type <= IW_MPA_REPLY; type++)
                for (size_t pi = 0; pi < sizeof pd_sizes / sizeof pd_sizes[0]; pi++)
                    for (size_t ii = 0; ii < sizeof irds / sizeof irds[0]; ii++) {
                        bool m = bits & 1, c = bits & 2, r = bits & 4, s = bits & 8;
                        size_t total_pd = pd_sizes[pi];
                        if (s && total_pd < 4)
                            continue; /* S=1 needs the 4 enhanced octets */
                        iw_mpa_rr e = {0};
                        e.type = (iw_mpa_rr_type)type;
                        e.m = m, e.c = c, e.r = r, e.s = s;
                        e.rev = (uint8_t)rev;
                        e.v2.p2p = (ii & 1) != 0;
                        e.v2.rtr_send = e.v2.p2p && (bits & 1);
                        e.v2.rtr_write = e.v2.p2p && (ii & 2);
                        e.v2.rtr_read = e.v2.p2p;
                        e.v2.ird = irds[ii];
                        e.v2.ord = irds[(ii + 1) % 4];
                        e.ulp_pd_len = (uint16_t)(total_pd - (s ? 4 : 0));
                        e.ulp_pd = e.ulp_pd_len ? pd : NULL;
                        iw_ssize w = iw_mpa_rr_encode(out, sizeof out, &e);
                        REQUIRE(w == (iw_ssize)(20 + total_pd));
                        cases++;
                        /* Fig. 8 / RFC 6581 §6 header octets. */
                        CHECK_MEM(out,
                                  type == IW_MPA_REQUEST ? "MPA ID Req Frame" : "MPA ID Rep Frame",
                                  16);
                        CHECK_EQ(out[16],
                                 (m ? 0x80 : 0) | (c ? 0x40 : 0) | (r ? 0x20 : 0) | (s ? 0x10 : 0));
                        CHECK_EQ(out[17], rev);
                        CHECK_EQ(out[18] << 8 | out[19], total_pd);
                        if (s) {
                            unsigned w1 =
                                (e.v2.p2p ? 0x8000u : 0) | (e.v2.rtr_send ? 0x4000u : 0) | e.v2.ird;
                            unsigned w2 = (e.v2.rtr_write ? 0x8000u : 0) |
                                          (e.v2.rtr_read ? 0x4000u : 0) | e.v2.ord;
                            CHECK_EQ(out[20] << 8 | out[21], w1);
                            CHECK_EQ(out[22] << 8 | out[23], w2);
                        }
                        if (e.ulp_pd_len)
                            CHECK_MEM(out + 20 + (s ? 4 : 0), pd, e.ulp_pd_len);

                        iw_mpa_rr d;
                        iw_verdict v;
                        REQUIRE(iw_mpa_rr_decode(&d, out, (size_t)w, &v) == w);
                        CHECK_EQ(v.kind, IW_VERDICT_OK);
                        CHECK_EQ(d.type, type);
                        CHECK(d.m == m && d.c == c && d.r == r);
                        CHECK_EQ(d.rev, rev);
                        CHECK_EQ(d.pd_len, total_pd);
                        uint32_t want_notes = 0;
                        if (type == IW_MPA_REQUEST && r)
                            want_notes |= IW_NOTE(MPA_R_IN_REQUEST); /* §7.1.1 */
                        if (rev == 2 && s) {
                            /* RFC 6581 §6: enhanced only with Rev >= 2 */
                            CHECK(d.s && d.enhanced);
                            CHECK_EQ(d.v2.p2p, e.v2.p2p);
                            CHECK_EQ(d.v2.rtr_send, e.v2.rtr_send);
                            CHECK_EQ(d.v2.rtr_write, e.v2.rtr_write);
                            CHECK_EQ(d.v2.rtr_read, e.v2.rtr_read);
                            CHECK_EQ(d.v2.ird, e.v2.ird);
                            CHECK_EQ(d.v2.ord, e.v2.ord);
                            CHECK_EQ(d.ulp_pd_len, e.ulp_pd_len);
                            if (e.v2.p2p && !(e.v2.rtr_send || e.v2.rtr_write || e.v2.rtr_read))
                                want_notes |= IW_NOTE(MPA_V2_P2P_NO_RTR);
                        } else {
                            CHECK(!d.enhanced);
                            CHECK_EQ(d.ulp_pd_len, total_pd); /* all PD goes to the ULP */
                            if (s)
                                want_notes |= IW_NOTE(MPA_S_WITH_REV1) | IW_NOTE(MPA_RES_BITS);
                        }
                        CHECK_EQ(d.notes, want_notes);
                        if (d.ulp_pd_len)
                            CHECK(d.ulp_pd == out + 20 + (d.enhanced ? 4 : 0));
                        /* Re-encoding what was decoded gives the same octets. */
                        iw_mpa_rr e2 = d;
                        if (!d.enhanced && s) {
                            /* Rev 1: S travels as a Res bit, not as enhanced data */
                            e2.s = false;
                            e2.res = 0;
                        }
                        iw_ssize w2 = iw_mpa_rr_encode(again, sizeof again, &e2);
                        if (!(rev == 1 && s)) {
                            CHECK_EQ(w2, w);
                            CHECK_MEM(again, out, (size_t)w);
                        }
                        /* Decoding with trailing octets consumes just the frame. */
                        memset(out + w, 0x5A, 8);
                        CHECK_EQ(iw_mpa_rr_decode(&d, out, (size_t)w + 8, &v), w);
                    }
    CHECK(cases > 1000);
}

/* ---- rejections (RFC 5044 §7.1.1, §7.1.2; RFC 6581 §6) ---- */

static void check_close(const uint8_t *f, size_t n, iw_close_reason want) {
    iw_mpa_rr rr;
    iw_verdict v;
    iw_ssize r = decode_guarded(&rr, f, n, &v);
    CHECK_EQ(r, IW_ERR_PROTO);
    CHECK_EQ(v.kind, IW_VERDICT_CLOSE);
    if (v.close != want)
        fprintf(stderr, "  close %s, want %s\n", iw_close_id(v.close), iw_close_id(want));
    CHECK_EQ(v.close, want);
    CHECK(v.rfc != NULL);
}

/* §7.1.1 / §7.1.2 rule 5: any other key closes the connection, judged as
 * soon as the octets present rule out both keys. */
IW_TEST(reject_bad_key) {
    uint8_t f[64];
    size_t n = unhex(f, KEY_REQ_HEX " 40 01 00 00");
    f[9] = 0x72; /* 'r': neither 'q' nor 'p' */
    check_close(f, n, IW_CLOSE_MPA_BAD_KEY);
    for (size_t i = 0; i < 16; i++) {
        uint8_t g[64];
        memcpy(g, f, n);
        g[9] = 0x71;
        g[i] ^= 0x20; /* e.g. lower case */
        check_close(g, n, IW_CLOSE_MPA_BAD_KEY);
        /* detected on the partial input that first disagrees */
        check_close(g, i + 1, IW_CLOSE_MPA_BAD_KEY);
    }
    check_close((const uint8_t *)"XYZ", 3, IW_CLOSE_MPA_BAD_KEY);
    check_close((const uint8_t *)"X", 1, IW_CLOSE_MPA_BAD_KEY);
    check_close((const uint8_t *)"MPA ID Rex", 10, IW_CLOSE_MPA_BAD_KEY);
    /* Prefixes shared by both keys cannot be judged yet. */
    iw_mpa_rr rr;
    iw_verdict v;
    CHECK_EQ(decode_guarded(&rr, (const uint8_t *)"MPA ID Re", 9, &v), IW_ERR_NEED_MORE);
    CHECK_EQ(decode_guarded(&rr, (const uint8_t *)"", 0, &v), IW_ERR_NEED_MORE);
    /* Prefixes of one key: need more. */
    CHECK_EQ(decode_guarded(&rr, (const uint8_t *)"MPA ID Req Fram", 15, &v), IW_ERR_NEED_MORE);
    CHECK_EQ(decode_guarded(&rr, (const uint8_t *)"MPA ID Rep Frame", 16, &v), IW_ERR_NEED_MORE);
}

/* §7.1.1: a revision the receiver cannot interoperate with closes. This
 * stack speaks Rev 1 (RFC 5044) and Rev 2 (RFC 6581 §6). */
IW_TEST(reject_bad_rev) {
    static const uint8_t revs[] = {0, 3, 4, 0x80, 255};
    for (size_t i = 0; i < sizeof revs; i++) {
        uint8_t f[64];
        size_t n = unhex(f, KEY_REQ_HEX " 40 00 00 00");
        f[17] = revs[i];
        check_close(f, n, IW_CLOSE_MPA_BAD_REV);
        n = unhex(f, KEY_REP_HEX " 50 00 00 04 80 00 40 00");
        f[17] = revs[i];
        check_close(f, n, IW_CLOSE_MPA_BAD_REV);
        /* judged on the 20-octet header, Private Data not needed */
        check_close(f, 20, IW_CLOSE_MPA_BAD_REV);
    }
}

/* §7.1.1: PD_Length over 512 closes; judged from the header alone. */
IW_TEST(reject_pd_too_long) {
    static const uint16_t lens[] = {513, 600, 0x8000, 0xFFFF};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        uint8_t f[64];
        size_t n = unhex(f, KEY_REQ_HEX " 40 01 00 00");
        f[18] = (uint8_t)(lens[i] >> 8);
        f[19] = (uint8_t)lens[i];
        check_close(f, n, IW_CLOSE_MPA_PD_TOO_LONG);
        f[17] = 2;
        check_close(f, n, IW_CLOSE_MPA_PD_TOO_LONG);
    }
    /* 512 itself is fine (§7.1.1 "between 0 and 512"). */
    uint8_t big[20 + 512] = {0};
    unhex(big, KEY_REP_HEX " 00 01 02 00");
    iw_mpa_rr rr;
    iw_verdict v;
    CHECK_EQ(decode_guarded(&rr, big, sizeof big, &v), 532);
    CHECK_EQ(decode_guarded(&rr, big, sizeof big - 1, &v), IW_ERR_NEED_MORE);
}

/* RFC 6581 §6: with S=1 the Private Data begins with 4 octets of enhanced
 * data, so PD_Length 0..3 is malformed under Rev 2. */
IW_TEST(reject_v2_pd_short) {
    for (unsigned pdl = 0; pdl < 4; pdl++) {
        uint8_t f[64] = {0};
        unhex(f, KEY_REQ_HEX " 50 02 00 00");
        f[19] = (uint8_t)pdl;
        check_close(f, 20 + pdl, IW_CLOSE_MPA_V2_PD_SHORT);
        /* The verdict needs the whole frame first. */
        if (pdl) {
            iw_mpa_rr rr;
            iw_verdict v;
            CHECK_EQ(decode_guarded(&rr, f, 20 + pdl - 1, &v), IW_ERR_NEED_MORE);
        }
    }
}

/* RFC 6581 §6: S is only meaningful with Rev >= 2; with Rev 1 it is a Res
 * bit of RFC 5044 (not checked, §7.1.1) — not enhanced, only a note. */
IW_TEST(s_with_rev1_not_enhanced) {
    for (unsigned pdl = 0; pdl < 8; pdl++) {
        uint8_t f[64] = {0};
        unhex(f, KEY_REQ_HEX " 50 01 00 00");
        f[19] = (uint8_t)pdl;
        memset(f + 20, 0xC3, pdl);
        iw_mpa_rr rr;
        iw_verdict v;
        REQUIRE(iw_mpa_rr_decode(&rr, f, 20 + pdl, &v) == (iw_ssize)(20 + pdl));
        CHECK_EQ(v.kind, IW_VERDICT_OK);
        CHECK(!rr.enhanced);
        CHECK(!rr.s);
        CHECK(rr.notes & IW_NOTE(MPA_S_WITH_REV1));
        CHECK_EQ(rr.ulp_pd_len, pdl);
        CHECK(pdl == 0 || rr.ulp_pd == f + 20);
        CHECK(!rr.v2.p2p && rr.v2.ird == 0);
    }
}

/* Res bits (§7.1.1, RFC 6581 §6) and R in a Request: not checked on
 * receive, so notes only. */
IW_TEST(notes_reserved_and_r) {
    struct {
        uint8_t flags, rev;
        const char *key;
        uint32_t want;
    } rows[] = {
        {0x0F, 2, KEY_REQ_HEX, IW_NOTE(MPA_RES_BITS)},
        {0x01, 2, KEY_REP_HEX, IW_NOTE(MPA_RES_BITS)},
        {0x08, 1, KEY_REP_HEX, IW_NOTE(MPA_RES_BITS)},
        {0x10, 1, KEY_REP_HEX, IW_NOTE(MPA_RES_BITS) | IW_NOTE(MPA_S_WITH_REV1)},
        {0x20, 1, KEY_REQ_HEX, IW_NOTE(MPA_R_IN_REQUEST)},
        {0x20, 2, KEY_REQ_HEX, IW_NOTE(MPA_R_IN_REQUEST)},
        {0x20, 2, KEY_REP_HEX, 0}, /* R is the reject bit in a Reply */
        {0xE0, 1, KEY_REP_HEX, 0},
        {0xFF & ~0x10, 2, KEY_REQ_HEX, IW_NOTE(MPA_RES_BITS) | IW_NOTE(MPA_R_IN_REQUEST)},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        uint8_t f[64];
        char hex[128];
        snprintf(hex, sizeof hex, "%s %02x %02x 00 00", rows[i].key, rows[i].flags, rows[i].rev);
        size_t n = unhex(f, hex);
        iw_mpa_rr rr;
        iw_verdict v;
        REQUIRE(decode_guarded(&rr, f, n, &v) == 20);
        CHECK_EQ(v.kind, IW_VERDICT_OK);
        CHECK_EQ(rr.notes, rows[i].want);
        CHECK_EQ(rr.m, (rows[i].flags & 0x80) != 0);
        CHECK_EQ(rr.c, (rows[i].flags & 0x40) != 0);
        CHECK_EQ(rr.r, (rows[i].flags & 0x20) != 0);
    }
    /* S=1 with Rev 2 and other Res bits set: still enhanced, plus a note. */
    uint8_t f[64];
    size_t n = unhex(f, KEY_REQ_HEX " 13 02 00 04 80 00 40 00");
    iw_mpa_rr rr;
    iw_verdict v;
    REQUIRE(iw_mpa_rr_decode(&rr, f, n, &v) == 24);
    CHECK(rr.enhanced);
    CHECK_EQ(rr.res, 0x03);
    CHECK_EQ(rr.notes, IW_NOTE(MPA_RES_BITS));
}

/* RFC 6581 §9: B/C/D MUST be 0 when A=0 (ignored on receive); §9.2: with
 * A=1 at least one RTR option is set. */
IW_TEST(notes_v2_rtr) {
    struct {
        const char *v2;
        uint32_t want;
    } rows[] = {
        {"00 00 00 00", 0},
        {"40 00 00 00", IW_NOTE(MPA_V2_RTR_WITHOUT_P2P)},
        {"00 00 80 00", IW_NOTE(MPA_V2_RTR_WITHOUT_P2P)},
        {"00 00 40 00", IW_NOTE(MPA_V2_RTR_WITHOUT_P2P)},
        {"80 00 00 00", IW_NOTE(MPA_V2_P2P_NO_RTR)},
        {"BF FF 3F FF", IW_NOTE(MPA_V2_P2P_NO_RTR)},
        {"C0 00 00 00", 0},
        {"80 00 80 00", 0},
        {"80 00 40 00", 0},
        {"FF FF FF FF", 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char hex[128];
        snprintf(hex, sizeof hex, "%s 10 02 00 04 %s", KEY_REP_HEX, rows[i].v2);
        uint8_t f[64];
        size_t n = unhex(f, hex);
        iw_mpa_rr rr;
        iw_verdict v;
        REQUIRE(decode_guarded(&rr, f, n, &v) == 24);
        CHECK(rr.enhanced);
        CHECK_EQ(rr.notes, rows[i].want);
    }
}

/* §7.1.2 rules 5 and 8: the key tells a Request from a Reply. */
IW_TEST(rr_expect) {
    uint8_t req[32], rep[32];
    unhex(req, KEY_REQ_HEX " 00 01 00 00");
    unhex(rep, KEY_REP_HEX " 00 01 00 00");
    iw_mpa_rr a, b;
    iw_verdict v;
    REQUIRE(iw_mpa_rr_decode(&a, req, 20, &v) == 20);
    REQUIRE(iw_mpa_rr_decode(&b, rep, 20, &v) == 20);
    /* Initiator expecting a Reply gets a Request: Initiator/Initiator (rule 8). */
    v = iw_mpa_rr_expect(&a, IW_MPA_REPLY);
    CHECK_EQ(v.kind, IW_VERDICT_CLOSE);
    CHECK_EQ(v.close, IW_CLOSE_MPA_INITIATOR_INITIATOR);
    /* Responder expecting a Request gets a Reply: wrong key (rule 5). */
    v = iw_mpa_rr_expect(&b, IW_MPA_REQUEST);
    CHECK_EQ(v.kind, IW_VERDICT_CLOSE);
    CHECK_EQ(v.close, IW_CLOSE_MPA_BAD_KEY);
    CHECK_EQ(iw_mpa_rr_expect(&a, IW_MPA_REQUEST).kind, IW_VERDICT_OK);
    CHECK_EQ(iw_mpa_rr_expect(&b, IW_MPA_REPLY).kind, IW_VERDICT_OK);
}

/* Truncation of frames with every PD size used above. */
IW_TEST(truncation_loop) {
    uint8_t pd[512];
    for (size_t i = 0; i < sizeof pd; i++)
        pd[i] = (uint8_t)~i;
    static const uint16_t sizes[] = {0, 1, 4, 5, 508, 512};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (int s = 0; s <= 1; s++) {
            if (s && sizes[i] < 4)
                continue;
            iw_mpa_rr e = {0};
            e.type = s ? IW_MPA_REPLY : IW_MPA_REQUEST;
            e.rev = (uint8_t)(s ? 2 : 1);
            e.s = s;
            e.v2.p2p = e.v2.rtr_read = true;
            e.ulp_pd_len = (uint16_t)(sizes[i] - (s ? 4 : 0));
            e.ulp_pd = pd;
            uint8_t out[600];
            iw_ssize w = iw_mpa_rr_encode(out, sizeof out, &e);
            REQUIRE(w == 20 + sizes[i]);
            check_truncations(out, (size_t)w);
            check_encode_nobuf(&e, (size_t)w);
        }
}

/* Encoder argument checks (§7.1.1: PD at most 512; RFC 6581 §9: 14-bit
 * IRD/ORD). */
IW_TEST(encode_invalid_arg) {
    uint8_t pd[600] = {0}, out[700];
    iw_mpa_rr e = {0};
    e.type = IW_MPA_REQUEST;
    e.rev = 1;
    e.ulp_pd = pd;
    e.ulp_pd_len = 513;
    CHECK_EQ(iw_mpa_rr_encode(out, sizeof out, &e), IW_ERR_INVALID_ARG);
    e.ulp_pd_len = 512;
    CHECK_EQ(iw_mpa_rr_encode(out, sizeof out, &e), 532);
    e.s = true;
    e.rev = 2;
    CHECK_EQ(iw_mpa_rr_encode(out, sizeof out, &e), IW_ERR_INVALID_ARG); /* 4 + 512 */
    e.ulp_pd_len = 509;
    CHECK_EQ(iw_mpa_rr_encode(out, sizeof out, &e), IW_ERR_INVALID_ARG);
    e.ulp_pd_len = 508;
    CHECK_EQ(iw_mpa_rr_encode(out, sizeof out, &e), 532);
    e.ulp_pd_len = 0;
    e.v2.ird = 0x4000;
    CHECK_EQ(iw_mpa_rr_encode(out, sizeof out, &e), IW_ERR_INVALID_ARG);
    e.v2.ird = 0x3FFF;
    e.v2.ord = 0x4000;
    CHECK_EQ(iw_mpa_rr_encode(out, sizeof out, &e), IW_ERR_INVALID_ARG);
    e.v2.ord = 0xFFFF;
    CHECK_EQ(iw_mpa_rr_encode(out, sizeof out, &e), IW_ERR_INVALID_ARG);
    e.v2.ord = 0x3FFF;
    CHECK_EQ(iw_mpa_rr_encode(out, sizeof out, &e), 24);
    /* Private Data length without the data. */
    e.ulp_pd = NULL;
    e.ulp_pd_len = 3;
    CHECK_EQ(iw_mpa_rr_encode(out, sizeof out, &e), IW_ERR_INVALID_ARG);
    /* Neither a Request nor a Reply. */
    e.ulp_pd_len = 0;
    e.type = (iw_mpa_rr_type)0;
    CHECK_EQ(iw_mpa_rr_encode(out, sizeof out, &e), IW_ERR_INVALID_ARG);
    e.type = (iw_mpa_rr_type)3;
    CHECK_EQ(iw_mpa_rr_encode(out, sizeof out, &e), IW_ERR_INVALID_ARG);
    /* Argument errors win over a short buffer: nothing is written. */
    e.type = IW_MPA_REQUEST;
    e.v2.ird = 0x4000;
    CHECK_EQ(iw_mpa_rr_encode(out, 0, &e), IW_ERR_INVALID_ARG);
}

/* ---- MULPDU, RFC 5044 §4.5 ---- */

/* Formula written out here: with markers
 *   EMSS - (6 + 4 * Ceiling(EMSS / 512) + EMSS mod 4)
 * without: EMSS - (6 + EMSS mod 4); never below 128 nor above 64768 (§3). */
static uint32_t model_mulpdu(uint32_t emss, bool markers) {
    int64_t over = 6 + emss % 4;
    if (markers)
        over += 4 * (((int64_t)emss + 511) / 512);
    int64_t m = (int64_t)emss - over;
    if (m < 128)
        m = 128;
    if (m > 64768)
        m = 64768;
    return (uint32_t)m;
}

IW_TEST(mulpdu) {
    /* RFC-derived table (wire-facts A.6). */
    CHECK_EQ(iw_mpa_mulpdu(1460, true), 1442);
    CHECK_EQ(iw_mpa_mulpdu(1460, false), 1454);
    CHECK_EQ(iw_mpa_mulpdu(8960, true), 8882);
    CHECK_EQ(iw_mpa_mulpdu(8960, false), 8954);
    /* By hand: 1459 = 2*512+435, mod 4 = 3: 1459-(6+12+3) = 1438; 1459-9 = 1450. */
    CHECK_EQ(iw_mpa_mulpdu(1459, true), 1438);
    CHECK_EQ(iw_mpa_mulpdu(1459, false), 1450);
    /* 1000: ceil = 2, mod 4 = 0: 986 / 994. */
    CHECK_EQ(iw_mpa_mulpdu(1000, true), 986);
    CHECK_EQ(iw_mpa_mulpdu(1000, false), 994);
    /* 513: ceil = 2, mod 4 = 1: 513-15 = 498; 513-7 = 506. */
    CHECK_EQ(iw_mpa_mulpdu(513, true), 498);
    CHECK_EQ(iw_mpa_mulpdu(513, false), 506);
    /* 512: ceil = 1: 512-10 = 502; 506. */
    CHECK_EQ(iw_mpa_mulpdu(512, true), 502);
    CHECK_EQ(iw_mpa_mulpdu(512, false), 506);
    /* 1462: mod 4 = 2, ceil = 3: 1462-20 = 1442; 1462-8 = 1454. */
    CHECK_EQ(iw_mpa_mulpdu(1462, true), 1442);
    CHECK_EQ(iw_mpa_mulpdu(1462, false), 1454);
    /* 9001: mod 4 = 1, ceil = 18: 9001-79 = 8922; 9001-7 = 8994. */
    CHECK_EQ(iw_mpa_mulpdu(9001, true), 8922);
    CHECK_EQ(iw_mpa_mulpdu(9001, false), 8994);
    /* §4.5: never below 128, even for tiny EMSS. */
    CHECK_EQ(iw_mpa_mulpdu(0, true), 128);
    CHECK_EQ(iw_mpa_mulpdu(0, false), 128);
    CHECK_EQ(iw_mpa_mulpdu(1, true), 128);
    CHECK_EQ(iw_mpa_mulpdu(100, false), 128);
    CHECK_EQ(iw_mpa_mulpdu(134, false), 128); /* 134-8 = 126 */
    CHECK_EQ(iw_mpa_mulpdu(140, false), 134);
    CHECK_EQ(iw_mpa_mulpdu(146, true), 134); /* 146-(6+4+2) */
    /* §3: never above 64768. */
    CHECK_EQ(iw_mpa_mulpdu(64774, false), 64766); /* mod 4 = 2 */
    CHECK_EQ(iw_mpa_mulpdu(64776, false), 64768);
    CHECK_EQ(iw_mpa_mulpdu(65535, false), 64768);
    CHECK_EQ(iw_mpa_mulpdu(100000, true), 64768);
    CHECK_EQ(iw_mpa_mulpdu(0xFFFFFFFFu, true), 64768);
    CHECK_EQ(iw_mpa_mulpdu(0xFFFFFFFFu, false), 64768);
    /* And the formula everywhere in a wide range. */
    unsigned bad = 0;
    for (uint32_t e = 0; e < 70000; e++)
        for (int mk = 0; mk <= 1; mk++)
            if (iw_mpa_mulpdu(e, mk) != model_mulpdu(e, mk) && bad++ < 5)
                fprintf(stderr, "  EMSS %u markers %d: %u != %u\n", e, mk, iw_mpa_mulpdu(e, mk),
                        model_mulpdu(e, mk));
    CHECK_EQ(bad, 0);
}

/* Full Operation's first FPDU where startup left a mode open (RFC 5044
 * §7.1.2 rule 7, §7.1.1), as both decoders settle it. */
IW_TEST(full_operation_first_fpdu) {
    uint8_t hdr[18] = {0x41, 0x43}; /* untagged DDP v1, RDMAP v1 Send, last */
    uint8_t pay[600];
    for (size_t i = 0; i < sizeof pay; i++)
        pay[i] = (uint8_t)(i * 13 + 1);
    uint8_t w[1024], scratch[1024];
    for (int mk = 0; mk <= 1; mk++) {
        unsigned fl = IW_MPA_CRC | (mk ? IW_MPA_MARKERS : 0);
        iw_ssize n = iw_mpa_fpdu_encode(w, sizeof w, 0, fl, hdr, sizeof hdr, pay, sizeof pay);
        CHECK(n > 0);
        /* A marker at the grid's first octet is 00000000 (FPDUPTR 0); a
         * ULPDU_Length there (600 + 18) is not. */
        CHECK_EQ(iw_mpa_fo_markers(w, (size_t)n), mk);
        CHECK_EQ(iw_mpa_fo_markers(w, 2), mk);
        iw_mpa_fpdu f;
        iw_verdict v;
        CHECK(iw_mpa_fpdu_decode(&f, w, (size_t)n, 0, fl, scratch, sizeof scratch, &v) == n);
        CHECK(iw_mpa_fo_crc(&f));
        /* One flipped payload bit: the CRC no longer verifies, so C=0 in
         * the one frame seen leaves CRCs off. */
        w[n - 40] ^= 0x01;
        iw_mpa_fpdu_decode(&f, w, (size_t)n, 0, fl, scratch, sizeof scratch, &v);
        CHECK_EQ(v.term, IW_TERM_LLP_MPA_CRC);
        CHECK(!iw_mpa_fo_crc(&f));
        /* Decoded without CRC checking: nothing says CRCs are on. */
        w[n - 40] ^= 0x01;
        iw_mpa_fpdu_decode(&f, w, (size_t)n, 0, fl & ~IW_MPA_CRC, scratch, sizeof scratch, &v);
        CHECK(!iw_mpa_fo_crc(&f));
    }
    /* Fewer than two octets decide nothing. */
    uint8_t z[2] = {0, 0};
    CHECK_EQ(iw_mpa_fo_markers(z, 1), -1);
    CHECK_EQ(iw_mpa_fo_markers(NULL, 4), -1);
    CHECK(!iw_mpa_fo_crc(NULL));
    /* 00 xx with xx != 0 is a short ULPDU_Length, not a marker. */
    uint8_t u[2] = {0, 0x12};
    CHECK_EQ(iw_mpa_fo_markers(u, 2), 0);
}

IW_TEST_MAIN("mpa", IW_CASE(golden_request_v1), IW_CASE(golden_reply_v1_rejected),
             IW_CASE(golden_request_v2), IW_CASE(golden_reply_v2), IW_CASE(round_trip_matrix),
             IW_CASE(reject_bad_key), IW_CASE(reject_bad_rev), IW_CASE(reject_pd_too_long),
             IW_CASE(reject_v2_pd_short), IW_CASE(s_with_rev1_not_enhanced),
             IW_CASE(notes_reserved_and_r), IW_CASE(notes_v2_rtr), IW_CASE(rr_expect),
             IW_CASE(truncation_loop), IW_CASE(encode_invalid_arg), IW_CASE(mulpdu),
             IW_CASE(full_operation_first_fpdu))
