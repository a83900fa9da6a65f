/* SPDX-License-Identifier: GPL-2.0-or-later */
/* DDP headers, RFC 5041 §4.1 (Control field), §4.2 (tagged, Fig. 4) and
 * §4.3 (untagged, Fig. 5). Golden headers are written byte by byte from
 * the figures. */
#include <iwarp/ddp.h>

#include "iw_test.h"
#include "iw_test_guard.h"

/* §4.2 Fig. 4: T=1 L=1 DV=1 (0xC1), RsvdULP 0x40 (RDMAP: RDMA Write),
 * STag 0x12345678, TO 0x0123456789ABCDEF. */
static const char tagged_hex[] = "C1 40  12 34 56 78  01 23 45 67 89 AB CD EF";
/* §4.3 Fig. 5: T=0 L=0 DV=1 (0x01), RsvdULP[0:7] 0x44, RsvdULP[8:39]
 * 0xDEADBEEF, QN 0, MSN 7, MO 0x5CA. */
static const char untagged_hex[] = "01 44  DE AD BE EF  00 00 00 00  00 00 00 07  00 00 05 CA";

static iw_ssize decode_guarded(iw_ddp_hdr *h, const uint8_t *buf, size_t len) {
    uint8_t *p = iw_test_guard(buf, len);
    iw_ssize r = iw_ddp_decode_hdr(h, p, len);
    iw_test_guard_free(p, len);
    return r;
}

IW_TEST(golden_tagged) {
    uint8_t b[32];
    size_t n = iw_test_unhex(b, sizeof b, tagged_hex);
    CHECK_EQ(n, IW_DDP_TAGGED_HDR_LEN);
    CHECK_EQ(n, 14);
    iw_ddp_hdr h;
    REQUIRE(decode_guarded(&h, b, n) == 14);
    CHECK(h.tagged);
    CHECK(h.last);
    CHECK_EQ(h.rsvd, 0);
    CHECK_EQ(h.dv, 1);
    CHECK_EQ(h.rsvd_ulp, 0x40);
    CHECK_EQ(h.stag, 0x12345678u);
    CHECK_EQ(h.to, 0x0123456789ABCDEFull);
    /* untagged fields stay zero */
    CHECK_EQ(h.qn, 0);
    CHECK_EQ(h.msn, 0);
    CHECK_EQ(h.mo, 0);
    CHECK_EQ(h.rsvd_ulp2, 0);
    /* encode from fields */
    iw_ddp_hdr e = {0};
    e.tagged = e.last = true;
    e.dv = 1;
    e.rsvd_ulp = 0x40;
    e.stag = 0x12345678u;
    e.to = 0x0123456789ABCDEFull;
    uint8_t out[32];
    CHECK_EQ(iw_ddp_encode_hdr(out, sizeof out, &e), 14);
    CHECK_MEM(out, b, 14);
}

IW_TEST(golden_untagged) {
    uint8_t b[32];
    size_t n = iw_test_unhex(b, sizeof b, untagged_hex);
    CHECK_EQ(n, IW_DDP_UNTAGGED_HDR_LEN);
    CHECK_EQ(n, 18);
    iw_ddp_hdr h;
    REQUIRE(decode_guarded(&h, b, n) == 18);
    CHECK(!h.tagged);
    CHECK(!h.last);
    CHECK_EQ(h.dv, 1);
    CHECK_EQ(h.rsvd, 0);
    CHECK_EQ(h.rsvd_ulp, 0x44);
    CHECK_EQ(h.rsvd_ulp2, 0xDEADBEEFu);
    CHECK_EQ(h.qn, 0);
    CHECK_EQ(h.msn, 7);
    CHECK_EQ(h.mo, 0x5CA);
    CHECK_EQ(h.stag, 0);
    CHECK_EQ(h.to, 0);
    iw_ddp_hdr e = {0};
    e.dv = 1;
    e.rsvd_ulp = 0x44;
    e.rsvd_ulp2 = 0xDEADBEEFu;
    e.msn = 7;
    e.mo = 0x5CA;
    uint8_t out[32];
    CHECK_EQ(iw_ddp_encode_hdr(out, sizeof out, &e), 18);
    CHECK_MEM(out, b, 18);
    /* RFC 5044 Fig. 5's DDP header: Send, Last, QN 0, MSN 1, MO 0. */
    n = iw_test_unhex(b, sizeof b, "41 43 00000000 00000000 00000001 00000000");
    REQUIRE(iw_ddp_decode_hdr(&h, b, n) == 18);
    CHECK(!h.tagged && h.last && h.dv == 1 && h.rsvd_ulp == 0x43 && h.msn == 1 && h.mo == 0);
}

/* §4.1 Fig. 3: T(1) L(1) Rsvd(4) DV(2): with DV=1 the control byte is 0x01
 * untagged, 0x41 untagged+last, 0x81 tagged, 0xC1 tagged+last. */
IW_TEST(control_byte_values) {
    static const struct {
        bool t, l;
        uint8_t byte;
    } rows[] = {{false, false, 0x01}, {false, true, 0x41}, {true, false, 0x81}, {true, true, 0xC1}};
    for (size_t i = 0; i < 4; i++) {
        iw_ddp_hdr e = {0};
        e.tagged = rows[i].t;
        e.last = rows[i].l;
        e.dv = IW_DDP_VERSION;
        uint8_t out[32];
        iw_ssize w = iw_ddp_encode_hdr(out, sizeof out, &e);
        CHECK_EQ(w, rows[i].t ? 14 : 18);
        CHECK_EQ(out[0], rows[i].byte);
        CHECK_EQ(iw_ddp_hdr_len(rows[i].byte), rows[i].t ? 14u : 18u);
    }
    CHECK_EQ(IW_DDP_VERSION, 1);
    CHECK_EQ(IW_DDP_CTRL_T, 0x80);
    CHECK_EQ(IW_DDP_CTRL_L, 0x40);
    CHECK_EQ(IW_DDP_CTRL_RSVD, 0x3C);
    CHECK_EQ(IW_DDP_CTRL_DV, 0x03);
    /* Rsvd is 4 bits, DV 2 bits, decoded as received. */
    uint8_t b[18] = {0x3D}; /* Rsvd 1111b, DV 01b */
    iw_ddp_hdr h;
    REQUIRE(iw_ddp_decode_hdr(&h, b, 18) == 18);
    CHECK_EQ(h.rsvd, 0xF);
    CHECK_EQ(h.dv, 1);
    b[0] = 0x86; /* T, Rsvd 0001b, DV 10b */
    REQUIRE(iw_ddp_decode_hdr(&h, b, 14) == 14);
    CHECK(h.tagged && !h.last);
    CHECK_EQ(h.rsvd, 1);
    CHECK_EQ(h.dv, 2);
}

/* Every control byte and varied fields: decode -> encode gives the same
 * octets; the fields land at the Fig. 4/5 offsets. */
IW_TEST(round_trip_all_control_bytes) {
    uint64_t s = 42;
    for (unsigned c = 0; c < 256; c++)
        for (int rep = 0; rep < 8; rep++) {
            uint8_t b[18];
            for (int i = 0; i < 18; i++)
                b[i] = (uint8_t)(iw_test_rand(&s) >> 40);
            b[0] = (uint8_t)c;
            size_t hl = c & 0x80 ? 14 : 18;
            iw_ddp_hdr h;
            REQUIRE(decode_guarded(&h, b, hl) == (iw_ssize)hl);
            CHECK_EQ(h.tagged, (c & 0x80) != 0);
            CHECK_EQ(h.last, (c & 0x40) != 0);
            CHECK_EQ(h.rsvd, (c >> 2) & 0xF);
            CHECK_EQ(h.dv, c & 3);
            CHECK_EQ(h.rsvd_ulp, b[1]);
            uint32_t w2 = (uint32_t)b[2] << 24 | b[3] << 16 | b[4] << 8 | b[5];
            if (h.tagged) {
                CHECK_EQ(h.stag, w2);
                uint64_t to = 0;
                for (int i = 6; i < 14; i++)
                    to = to << 8 | b[i];
                CHECK(h.to == to);
            } else {
                CHECK_EQ(h.rsvd_ulp2, w2);
                CHECK_EQ(h.qn, (uint32_t)b[6] << 24 | b[7] << 16 | b[8] << 8 | b[9]);
                CHECK_EQ(h.msn, (uint32_t)b[10] << 24 | b[11] << 16 | b[12] << 8 | b[13]);
                CHECK_EQ(h.mo, (uint32_t)b[14] << 24 | b[15] << 16 | b[16] << 8 | b[17]);
            }
            uint8_t out[18];
            CHECK_EQ(iw_ddp_encode_hdr(out, sizeof out, &h), (iw_ssize)hl);
            CHECK_MEM(out, b, hl);
        }
}

/* Any input shorter than the header its T bit announces is NEED_MORE, read
 * through a guard page; extra octets after the header are not consumed. */
IW_TEST(truncation_loop) {
    const char *hexes[] = {tagged_hex, untagged_hex};
    iw_test_guard_buf g;
    iw_test_guard_init(&g, 64);
    for (int i = 0; i < 2; i++) {
        uint8_t b[40];
        size_t n = iw_test_unhex(b, sizeof b, hexes[i]);
        for (size_t k = 0; k < n; k++) {
            iw_ddp_hdr h;
            CHECK_EQ(iw_ddp_decode_hdr(&h, iw_test_guard_place(&g, b, k), k), IW_ERR_NEED_MORE);
        }
        memset(b + n, 0xEE, 10);
        iw_ddp_hdr h;
        CHECK_EQ(iw_ddp_decode_hdr(&h, iw_test_guard_place(&g, b, n + 10), n + 10), (iw_ssize)n);
    }
    /* A tagged control byte alone needs 14, an untagged one 18. */
    iw_ddp_hdr h;
    uint8_t b[17] = {0x81};
    CHECK_EQ(iw_ddp_decode_hdr(&h, iw_test_guard_place(&g, b, 13), 13), IW_ERR_NEED_MORE);
    CHECK_EQ(iw_ddp_decode_hdr(&h, iw_test_guard_place(&g, b, 14), 14), 14);
    b[0] = 0x41;
    CHECK_EQ(iw_ddp_decode_hdr(&h, iw_test_guard_place(&g, b, 17), 17), IW_ERR_NEED_MORE);
    iw_test_guard_fini(&g);
}

/* Encoder: a field wider than its bits is INVALID_ARG (Rsvd 4 bits, DV 2);
 * a short buffer is NOBUF and nothing is written. */
IW_TEST(encode_errors) {
    uint8_t out[32];
    iw_ddp_hdr e = {0};
    e.dv = 1;
    e.rsvd = 0x10;
    CHECK_EQ(iw_ddp_encode_hdr(out, sizeof out, &e), IW_ERR_INVALID_ARG);
    e.rsvd = 0xF;
    CHECK_EQ(iw_ddp_encode_hdr(out, sizeof out, &e), 18);
    CHECK_EQ(out[0], 0x3D);
    e.rsvd = 0;
    e.dv = 4;
    CHECK_EQ(iw_ddp_encode_hdr(out, sizeof out, &e), IW_ERR_INVALID_ARG);
    e.dv = 0xFF;
    CHECK_EQ(iw_ddp_encode_hdr(out, sizeof out, &e), IW_ERR_INVALID_ARG);
    e.dv = 3; /* a bad version can still be crafted */
    CHECK_EQ(iw_ddp_encode_hdr(out, sizeof out, &e), 18);
    CHECK_EQ(out[0], 0x03);
    for (int t = 0; t <= 1; t++) {
        e.tagged = t;
        e.dv = 1;
        size_t hl = t ? 14 : 18;
        for (size_t k = 0; k < hl; k++) {
            memset(out, 0xA5, sizeof out);
            CHECK_EQ(iw_ddp_encode_hdr(out, k, &e), IW_ERR_NOBUF);
            size_t dirty = 0;
            for (size_t i = 0; i < sizeof out; i++)
                dirty += out[i] != 0xA5;
            CHECK_EQ(dirty, 0);
        }
        CHECK_EQ(iw_ddp_encode_hdr(out, hl, &e), (iw_ssize)hl);
    }
}

IW_TEST_MAIN("ddp", IW_CASE(golden_tagged), IW_CASE(golden_untagged), IW_CASE(control_byte_values),
             IW_CASE(round_trip_all_control_bytes), IW_CASE(truncation_loop),
             IW_CASE(encode_errors))
