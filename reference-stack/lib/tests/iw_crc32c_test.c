/* SPDX-License-Identifier: GPL-2.0-or-later */
/* CRC32c: RFC 3720 App. B.4 and RFC 5044 §4.4 (Figs. 5 and 6) vectors as wire
 * bytes, the residue property, and every hardware path against the portable
 * one over all short lengths, misalignments and stream splits. */
#include <iwarp/crc32c.h>

#include "iw_test.h"

/* Paths iw_crc32c_update_with() knows; those this CPU lacks are skipped. */
static const char *const hw_paths[] = {"vpclmul-avx512-hybrid", "vpclmul-avx512", "sse42-3way",
                                       "sse42"};
#define N_HW_PATHS (sizeof hw_paths / sizeof hw_paths[0])

/* Bit-at-a-time CRC-32C register update: no tables, so it checks the sw
 * tables independently. */
static uint32_t bitwise_update(uint32_t c, const uint8_t *p, size_t len) {
    for (size_t i = 0; i < len; i++) {
        c ^= p[i];
        for (int b = 0; b < 8; b++)
            c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
    }
    return c;
}

static void fill_random(uint8_t *buf, size_t len, uint64_t *seed) {
    for (size_t i = 0; i < len; i++)
        buf[i] = (uint8_t)(iw_test_rand(seed) >> 56);
}

/* CRC of hex bytes, stored in wire order, compared with the expected wire bytes. */
static void check_wire(const char *data_hex, const char *crc_hex) {
    uint8_t data[128], want[4], got[4];
    size_t n = iw_test_unhex(data, sizeof data, data_hex);
    REQUIRE(iw_test_unhex(want, sizeof want, crc_hex) == 4);
    iw_crc32c_put(got, iw_crc32c(data, n));
    CHECK_MEM(got, want, 4);
    if (memcmp(got, want, 4) != 0)
        fprintf(stderr, "    got %02x %02x %02x %02x, want %s\n", got[0], got[1], got[2], got[3],
                crc_hex);
    /* The portable path must agree on the same vectors. */
    iw_crc32c_put(got, ~iw_crc32c_update_sw(IW_CRC32C_INIT, data, n));
    CHECK_MEM(got, want, 4);
}

IW_TEST(rfc3720_b4_vectors) {
    uint8_t buf[32];
    char hex[32 * 3 + 1];
    check_wire("00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000",
               "aa 36 91 8a");
    check_wire("ffffffff ffffffff ffffffff ffffffff ffffffff ffffffff ffffffff ffffffff",
               "43 ab a8 62");
    for (int i = 0; i < 32; i++)
        snprintf(hex + 3 * i, sizeof hex - 3 * (size_t)i, "%02x ", i);
    check_wire(hex, "4e 79 dd 46");
    for (int i = 0; i < 32; i++)
        snprintf(hex + 3 * i, sizeof hex - 3 * (size_t)i, "%02x ", 31 - i);
    check_wire(hex, "5c db 3f 11");
    /* iSCSI SCSI Read (10) Command PDU, B.4's 48-byte example. */
    check_wire("01 c0 00 00  00 00 00 00  00 00 00 00  00 00 00 00"
               "14 00 00 00  00 00 04 00  00 00 00 14  00 00 00 18"
               "28 00 00 00  00 00 00 00  02 00 00 00  00 00 00 00",
               "56 3a 96 d9");
    /* Value form of the first vector: the wire is LSB first, not big-endian. */
    memset(buf, 0, sizeof buf);
    CHECK_EQ(iw_crc32c(buf, 32), 0x8A9136AAu);
}

IW_TEST(check_string) {
    CHECK_EQ(iw_crc32c("123456789", 9), 0xE3069283u);
    CHECK_EQ(~iw_crc32c_update_sw(IW_CRC32C_INIT, "123456789", 9), 0xE3069283u);
    CHECK_EQ(iw_crc32c("", 0), 0u);
    CHECK_EQ(iw_crc32c_update(IW_CRC32C_INIT, NULL, 0), IW_CRC32C_INIT);
    CHECK_EQ(iw_crc32c_update_sw(0x12345678u, NULL, 0), 0x12345678u);
    CHECK_EQ(iw_crc32c("a", 1), 0xC1D04330u);
}

/* RFC 5044 Fig. 5: first FPDU on the stream, so the CRC covers the leading
 * Marker too (octets 0x00-0x2f). */
IW_TEST(rfc5044_fig5_fpdu) {
    check_wire("00 00 00 00 | 00 2a | 41 43 | 00 00 00 00 | 00 00 00 00 | 00 00 00 01 |"
               "00 00 00 00 | 00000000 00000000 00000000 00000000 00000000 00000000",
               "52 23 99 83");
}

/* RFC 5044 Fig. 6: second FPDU at stream offset 0x1ec; the Marker at 0x200
 * (FPDUPTR 0x14) sits inside the FPDU and is covered by its CRC. */
IW_TEST(rfc5044_fig6_fpdu_with_marker) {
    check_wire("00 2a 41 43 00000000 00000000 00000002 00000000 | 00 00 00 14 |"
               "00000000 00000000 00000000 00000000 00000000 00000000",
               "84 92 58 98");
    /* Same bytes, streamed around the Marker as a deframer would feed them. */
    uint8_t hdr[20], mk[4], zero[24] = {0}, wire[4];
    iw_test_unhex(hdr, sizeof hdr, "00 2a 41 43 00000000 00000000 00000002 00000000");
    iw_test_unhex(mk, sizeof mk, "00 00 00 14");
    uint32_t s = iw_crc32c_update(IW_CRC32C_INIT, hdr, sizeof hdr);
    s = iw_crc32c_update(s, mk, sizeof mk);
    s = iw_crc32c_update(s, zero, sizeof zero);
    iw_crc32c_put(wire, ~s);
    CHECK_EQ(iw_crc32c_get(wire), 0x98589284u);
}

/* wire-facts A.7: running the register over data followed by its wire CRC
 * always leaves 0xB798B438 (the RFC 3720 remainder 0x1C2D19ED, bit-reversed
 * into the reflected register), independent of the data. iw_crc32c() of such
 * a codeword is therefore the constant ~0xB798B438. */
static uint32_t reverse32(uint32_t v) {
    uint32_t r = 0;
    for (int i = 0; i < 32; i++)
        r |= ((v >> i) & 1u) << (31 - i);
    return r;
}

IW_TEST(residue) {
    CHECK_EQ(reverse32(0x1C2D19EDu), 0xB798B438u);
    uint64_t seed = 0x5eed0001;
    static uint8_t buf[4096 + 4];
    for (size_t len = 0; len <= 4096; len += (len < 80 ? 1 : 211)) {
        fill_random(buf, len, &seed);
        iw_crc32c_put(buf + len, iw_crc32c(buf, len));
        CHECK_EQ(iw_crc32c_update(IW_CRC32C_INIT, buf, len + 4), 0xB798B438u);
        CHECK_EQ(iw_crc32c_update_sw(IW_CRC32C_INIT, buf, len + 4), 0xB798B438u);
        CHECK_EQ(iw_crc32c(buf, len + 4), ~0xB798B438u);
        /* One flipped bit anywhere (data or CRC) must break the residue. */
        size_t bit = (size_t)(iw_test_rand(&seed) % ((len + 4) * 8));
        buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        CHECK(iw_crc32c_update(IW_CRC32C_INIT, buf, len + 4) != 0xB798B438u);
    }
}

IW_TEST(sw_matches_bitwise) {
    uint64_t seed = 0x5eed0002;
    uint8_t buf[300];
    /* Every byte value at every position of an 8-byte slice, several states. */
    for (int b = 0; b < 256; b++) {
        for (size_t pos = 0; pos < 16; pos++) {
            uint8_t one[16] = {0};
            one[pos] = (uint8_t)b;
            uint32_t st = (uint32_t)iw_test_rand(&seed);
            CHECK_EQ(iw_crc32c_update_sw(st, one, 16), bitwise_update(st, one, 16));
        }
    }
    for (size_t len = 0; len <= sizeof buf; len++) {
        fill_random(buf, len, &seed);
        uint32_t st = (uint32_t)iw_test_rand(&seed);
        CHECK_EQ(iw_crc32c_update_sw(st, buf, len), bitwise_update(st, buf, len));
    }
}

IW_TEST(impl_name) {
    const char *name = iw_crc32c_impl();
    REQUIRE(name != NULL);
    printf("     iw_crc32c_impl() = %s\n", name);
    bool known = strcmp(name, "sw") == 0;
    for (size_t i = 0; i < N_HW_PATHS; i++)
        known = known || strcmp(name, hw_paths[i]) == 0;
    CHECK(known);
    /* The reported path must be runnable; unknown names must be refused. */
    uint32_t st = IW_CRC32C_INIT;
    CHECK(iw_crc32c_update_with(name, &st, "123456789", 9));
    CHECK_EQ(~st, 0xE3069283u);
    st = 0x1234u;
    CHECK(!iw_crc32c_update_with("no-such-path", &st, "x", 1));
    CHECK(!iw_crc32c_update_with(NULL, &st, "x", 1));
    CHECK_EQ(st, 0x1234u);
    CHECK(iw_crc32c_update_with("sw", &st, "x", 1));
#if defined(__x86_64__)
    /* Everything this project targets has at least SSE4.2. */
    CHECK(strcmp(name, "sw") != 0);
#endif
}

/* Path p (or the dispatcher when p is NULL) from state st. */
static uint32_t run_path(const char *p, uint32_t st, const uint8_t *buf, size_t len) {
    if (!p)
        return iw_crc32c_update(st, buf, len);
    if (!iw_crc32c_update_with(p, &st, buf, len))
        abort(); /* callers only pass available paths */
    return st;
}

static bool path_available(const char *p) {
    uint32_t st = 0;
    return iw_crc32c_update_with(p, &st, "", 0);
}

/* Every length 0..1024 at every start offset 0..63, random data and state. */
IW_TEST(hw_equals_sw_short) {
    enum { MAXLEN = 1024, MAXOFF = 63 };
    static uint8_t buf[MAXLEN + MAXOFF + 1];
    uint64_t seed = 0x5eed0003;
    fill_random(buf, sizeof buf, &seed);
    for (size_t pi = 0; pi <= N_HW_PATHS; pi++) {
        const char *p = pi < N_HW_PATHS ? hw_paths[pi] : NULL;
        if (p && !path_available(p)) {
            printf("     (path %s not available on this CPU: skipped)\n", p);
            continue;
        }
        int bad = 0;
        for (size_t off = 0; off <= MAXOFF; off++) {
            for (size_t len = 0; len <= MAXLEN; len++) {
                uint32_t st = (uint32_t)iw_test_rand(&seed);
                uint32_t want = iw_crc32c_update_sw(st, buf + off, len);
                uint32_t got = run_path(p, st, buf + off, len);
                if (got != want && bad++ < 5)
                    fprintf(stderr, "  %s: off %zu len %zu: 0x%08" PRIx32 " != 0x%08" PRIx32 "\n",
                            p ? p : "dispatch", off, len, got, want);
            }
        }
        CHECK_EQ(bad, 0);
    }
}

/* Large and odd sizes, including every block-size boundary of the paths:
 * 2^k for k = 10..20 (one chunk of each size), 2^k - 1 and 2^k + 2^(k-1) + 5
 * (every smaller chunk size in one call, then a tail). */
static void check_large(const char *p, const uint8_t *buf, size_t len, uint64_t *seed) {
    for (size_t off = 0; off < 64; off += 21) {
        uint32_t st = (uint32_t)iw_test_rand(seed);
        uint32_t want = iw_crc32c_update_sw(st, buf + off, len);
        uint32_t got = run_path(p, st, buf + off, len);
        if (got != want) {
            fprintf(stderr, "  %s: off %zu len %zu: 0x%08" PRIx32 " != 0x%08" PRIx32 "\n",
                    p ? p : "dispatch", off, len, got, want);
            iw_test_failed_checks++;
        }
    }
}

IW_TEST(hw_equals_sw_large) {
    static const size_t odd[] = {191,
                                 192,
                                 193,
                                 255,
                                 256,
                                 257,
                                 319,
                                 320,
                                 1535,
                                 1536,
                                 1537,
                                 2047,
                                 2049,
                                 12287,
                                 12288,
                                 12289,
                                 3 * 4096 * 5 + 3 * 512 * 3 + 3 * 64 * 2 + 37};
    size_t cap = (1u << 20) + (1u << 19) + 64 + 64;
    uint8_t *buf = malloc(cap);
    REQUIRE(buf != NULL);
    uint64_t seed = 0x5eed0004;
    fill_random(buf, cap, &seed);
    size_t sizes[sizeof odd / sizeof odd[0] + 3 * 11];
    size_t n = 0;
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
        sizes[n++] = odd[i];
    for (unsigned k = 10; k <= 20; k++) {
        sizes[n++] = (size_t)1 << k;
        sizes[n++] = ((size_t)1 << k) - 1;
        sizes[n++] = ((size_t)1 << k) + ((size_t)1 << (k - 1)) + 5;
    }
    for (size_t i = 0; i < n; i++) {
        check_large(NULL, buf, sizes[i], &seed);
        for (size_t pi = 0; pi < N_HW_PATHS; pi++)
            if (path_available(hw_paths[pi]))
                check_large(hw_paths[pi], buf, sizes[i], &seed);
    }
    free(buf);
}

/* Splitting a buffer at random points and chaining updates (through random
 * paths) must give the one-shot value. */
IW_TEST(streaming_splits) {
    size_t cap = 200000;
    uint8_t *buf = malloc(cap);
    REQUIRE(buf != NULL);
    uint64_t seed = 0x5eed0005;
    fill_random(buf, cap, &seed);
    const uint32_t whole = iw_crc32c(buf, cap);
    CHECK_EQ(whole, ~iw_crc32c_update_sw(IW_CRC32C_INIT, buf, cap));
    for (int round = 0; round < 200; round++) {
        uint32_t st = IW_CRC32C_INIT;
        size_t pos = 0;
        while (pos < cap) {
            uint64_t r = iw_test_rand(&seed);
            /* Mostly short pieces, sometimes long ones, sometimes empty. */
            size_t piece = (r & 3) == 0 ? (size_t)(r >> 8) % 20000 : (size_t)(r >> 8) % 300;
            if (piece > cap - pos)
                piece = cap - pos;
            size_t pi = (size_t)(r >> 40) % (N_HW_PATHS + 2);
            if (pi < N_HW_PATHS && path_available(hw_paths[pi]))
                st = run_path(hw_paths[pi], st, buf + pos, piece);
            else if (pi == N_HW_PATHS)
                st = iw_crc32c_update_sw(st, buf + pos, piece);
            else
                st = iw_crc32c_update(st, buf + pos, piece);
            pos += piece;
        }
        CHECK_EQ(~st, whole);
    }
    free(buf);
}

IW_TEST(put_get_round_trip) {
    uint8_t b[4];
    iw_crc32c_put(b, 0x83992352u);
    CHECK_EQ(b[0], 0x52);
    CHECK_EQ(b[1], 0x23);
    CHECK_EQ(b[2], 0x99);
    CHECK_EQ(b[3], 0x83);
    CHECK_EQ(iw_crc32c_get(b), 0x83992352u);
    uint64_t seed = 0x5eed0006;
    for (int i = 0; i < 1000; i++) {
        uint32_t v = (uint32_t)iw_test_rand(&seed);
        iw_crc32c_put(b, v);
        CHECK_EQ(iw_crc32c_get(b), v);
    }
    const uint8_t w[4] = {0x01, 0x02, 0x03, 0x04};
    CHECK_EQ(iw_crc32c_get(w), 0x04030201u);
}

IW_TEST_MAIN("crc32c", IW_CASE(rfc3720_b4_vectors), IW_CASE(check_string),
             IW_CASE(rfc5044_fig5_fpdu), IW_CASE(rfc5044_fig6_fpdu_with_marker), IW_CASE(residue),
             IW_CASE(sw_matches_bitwise), IW_CASE(impl_name), IW_CASE(hw_equals_sw_short),
             IW_CASE(hw_equals_sw_large), IW_CASE(streaming_splits), IW_CASE(put_get_round_trip))
