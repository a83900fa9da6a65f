/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pt_wire: perftest's communication-QP messages. Golden vectors are octets
 * of a capture of ib_write_bw -R (perftest 4.5-0.17, "6.06") over siw,
 * client side, -s 1024 -n 5. */
#include "iw_test.h"
#include "pt_wire.h"

#include <math.h>

/* ib_write_bw client: its first handshake with real values (Send MSN 7). */
static const char dest_msn7[] = "00000000 00000001 00000003 00b3f084 ad4bbe00 00000000"
                                "000055c09b632000 52540012345600000000000000000000"
                                "00000000 00000000";
/* The same pingpong_dest in the closing handshake (MSN 16): the padding after
 * rkey is uninitialised stack in perftest. */
static const char dest_msn16[] = "00000000 00000001 00000003 00b3f084 ad4bbe00 c0550000"
                                 "000055c09b632000 52540012345600000000000000000000"
                                 "00000000 00000000";

IW_TEST(dest_golden) {
    uint8_t in[PT_DEST_LEN], out[PT_DEST_LEN];
    REQUIRE(iw_test_unhex(in, sizeof in, dest_msn7) == PT_DEST_LEN);
    pt_dest d;
    char why[128];
    REQUIRE(pt_dest_decode(&d, in, sizeof in, why, sizeof why) == PT_OK);
    CHECK_EQ(d.lid, 0);
    CHECK_EQ(d.out_reads, 1);
    CHECK_EQ(d.qpn, 3);
    CHECK_EQ(d.psn, 0xb3f084);
    CHECK_EQ(d.rkey, 0xad4bbe00u);
    CHECK_EQ(d.vaddr, 0x55c09b632000ull);
    CHECK_EQ(d.gid[0], 0x52);
    CHECK_EQ(d.gid[5], 0x56);
    CHECK_EQ(d.srqn, 0);
    CHECK_EQ(d.gid_index, 0);
    pt_dest_encode(out, &d);
    CHECK_MEM(out, in, PT_DEST_LEN);

    pt_dest e;
    REQUIRE(iw_test_unhex(in, sizeof in, dest_msn16) == PT_DEST_LEN);
    REQUIRE(pt_dest_decode(&e, in, sizeof in, why, sizeof why) == PT_OK);
    CHECK(pt_dest_same(&d, &e)); /* padding is not a field */
    e.psn ^= 1;
    CHECK(!pt_dest_same(&d, &e));
}

IW_TEST(dest_roundtrip) {
    uint64_t seed = 0x5eed;
    for (int k = 0; k < 200; k++) {
        pt_dest d, e;
        d.lid = (uint32_t)iw_test_rand(&seed);
        d.out_reads = (uint32_t)iw_test_rand(&seed);
        d.qpn = (uint32_t)iw_test_rand(&seed);
        d.psn = (uint32_t)iw_test_rand(&seed);
        d.rkey = (uint32_t)iw_test_rand(&seed);
        d.vaddr = iw_test_rand(&seed);
        for (size_t i = 0; i < sizeof d.gid; i++)
            d.gid[i] = (uint8_t)iw_test_rand(&seed);
        d.srqn = (uint32_t)iw_test_rand(&seed);
        d.gid_index = (uint32_t)iw_test_rand(&seed);
        uint8_t b[PT_DEST_LEN];
        pt_dest_encode(b, &d);
        CHECK_EQ(b[20] | b[21] | b[22] | b[23], 0); /* we zero the padding */
        REQUIRE(pt_dest_decode(&e, b, sizeof b, NULL, 0) == PT_OK);
        CHECK(pt_dest_same(&d, &e));
    }
}

IW_TEST(version) {
    uint8_t in[PT_VERSION_LEN];
    char v[PT_VERSION_LEN], why[160];
    REQUIRE(iw_test_unhex(in, sizeof in, "362e3036000000000000000000000000") == sizeof in);
    REQUIRE(pt_version_decode(v, in, sizeof in, why, sizeof why) == PT_OK);
    CHECK(!strcmp(v, "6.06"));
    uint8_t out[PT_VERSION_LEN];
    pt_version_encode(out, PT_VERSION);
    CHECK_MEM(out, in, sizeof in);
    pt_version_encode(out, "5.60");
    CHECK_EQ(pt_version_decode(v, out, sizeof out, why, sizeof why), PT_OK);
    pt_version_encode(out, "10.1");
    CHECK_EQ(pt_version_decode(v, out, sizeof out, why, sizeof why), PT_OK);

    static const char *const bad[] = {"5.5",  "5.33",  "6",    ".6", "6.",
                                      "6..0", "6.0.1", "6.O6", "",   "v6.06"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pt_version_encode(out, bad[i]);
        why[0] = '\0';
        CHECK_EQ(pt_version_decode(v, out, sizeof out, why, sizeof why), PT_EBAD);
        CHECK(why[0] != '\0');
        CHECK_EQ(v[0], '\0');
    }
    memset(out, '6', sizeof out); /* no NUL */
    CHECK_EQ(pt_version_decode(v, out, sizeof out, why, sizeof why), PT_EBAD);
    CHECK(strstr(why, "NUL") != NULL);
}

IW_TEST(sys_data) {
    uint8_t in[PT_INT_LEN];
    int32_t v = 0;
    char why[128];
    REQUIRE(iw_test_unhex(in, sizeof in, "00001000") == 4);
    CHECK_EQ(pt_int_decode(&v, in, 4, 64, 1 << 30, why, sizeof why), PT_OK);
    CHECK_EQ(v, 4096);
    REQUIRE(iw_test_unhex(in, sizeof in, "00000040") == 4);
    CHECK_EQ(pt_int_decode(&v, in, 4, 8, 4096, why, sizeof why), PT_OK);
    CHECK_EQ(v, 64);
    uint8_t out[PT_INT_LEN];
    pt_int_encode(out, 64);
    CHECK_MEM(out, in, 4);
    static const int32_t bad[] = {0, -4096, 3000, 4095, INT32_MIN, 8192};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pt_int_encode(out, bad[i]);
        CHECK_EQ(pt_int_decode(&v, out, 4, 64, 4096, why, sizeof why), PT_EBAD);
    }
}

IW_TEST(mtu) {
    uint8_t in[PT_MTU_LEN] = {'3', 0}, out[PT_MTU_LEN];
    int m = 0;
    char why[128];
    CHECK_EQ(pt_mtu_decode(&m, in, 2, why, sizeof why), PT_OK);
    CHECK_EQ(m, 3);
    pt_mtu_encode(out, PT_MTU_ENUM);
    CHECK_MEM(out, in, 2);
    uint8_t two[PT_MTU_LEN] = {'1', '2'};
    CHECK_EQ(pt_mtu_decode(&m, two, 2, why, sizeof why), PT_OK);
    CHECK_EQ(m, 12);
    static const uint8_t bad[][2] = {{0, 0}, {'x', 0}, {'3', 'x'}, {0, '3'}, {0xff, 0xff}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_EQ(pt_mtu_decode(&m, bad[i], 2, why, sizeof why), PT_EBAD);
}

IW_TEST(report_golden) {
    static const char *const f[] = {"0000000000000400", "0000000000000005", "4012ef3ba83dacbc",
                                    "3ff0a96a11777caa", "3f51789c70c0a984"};
    uint8_t b[PT_U64_LEN], out[PT_U64_LEN];
    uint64_t u = 0;
    double d = 0;
    REQUIRE(iw_test_unhex(b, sizeof b, f[0]) == 8);
    CHECK_EQ(pt_u64_decode(&u, b, 8, NULL, 0), PT_OK);
    CHECK_EQ(u, 1024);
    pt_u64_encode(out, 1024);
    CHECK_MEM(out, b, 8);
    REQUIRE(iw_test_unhex(b, sizeof b, f[1]) == 8);
    CHECK_EQ(pt_u64_decode(&u, b, 8, NULL, 0), PT_OK);
    CHECK_EQ(u, 5);
    static const double want[] = {4.7336, 1.0413, 0.0010663};
    for (int i = 0; i < 3; i++) {
        REQUIRE(iw_test_unhex(b, sizeof b, f[2 + i]) == 8);
        CHECK_EQ(pt_double_decode(&d, b, 8, NULL, 0), PT_OK);
        CHECK(fabs(d - want[i]) < want[i] * 1e-4);
        pt_double_encode(out, d);
        CHECK_MEM(out, b, 8);
    }
    /* A perftest server sends uninitialised stack here: any bits decode. */
    memset(b, 0xff, sizeof b);
    CHECK_EQ(pt_double_decode(&d, b, 8, NULL, 0), PT_OK);
    CHECK(isnan(d));
}

IW_TEST(credit) {
    uint8_t in[PT_CREDIT_LEN] = {0x02, 0, 0, 0}, out[PT_CREDIT_LEN];
    CHECK_EQ(pt_credit_decode(in), 2);
    pt_credit_encode(out, 0x01020304);
    CHECK_EQ(out[0], 4);
    CHECK_EQ(out[3], 1);
    CHECK_EQ(pt_credit_decode(out), 0x01020304);
}

/* Every decoder refuses every length but its own, and says so. */
IW_TEST(lengths) {
    uint8_t b[PT_MSG_MAX + 8];
    memset(b, 0, sizeof b);
    b[0] = '6', b[1] = '.', b[2] = '1'; /* a valid version when the length is right */
    for (size_t len = 0; len <= sizeof b; len++) {
        char why[128] = "";
        pt_dest d;
        char v[PT_VERSION_LEN];
        int32_t i32;
        int m;
        uint64_t u;
        double x;
        CHECK_EQ(pt_dest_decode(&d, b, len, why, sizeof why), len == PT_DEST_LEN ? PT_OK : PT_EBAD);
        CHECK_EQ(pt_version_decode(v, b, len, why, sizeof why),
                 len == PT_VERSION_LEN ? PT_OK : PT_EBAD);
        CHECK_EQ(pt_int_decode(&i32, b, len, 0, 1 << 30, why, sizeof why), PT_EBAD);
        CHECK_EQ(pt_mtu_decode(&m, b, len, why, sizeof why), PT_EBAD);
        CHECK_EQ(pt_u64_decode(&u, b, len, why, sizeof why), len == PT_U64_LEN ? PT_OK : PT_EBAD);
        CHECK_EQ(pt_double_decode(&x, b, len, why, sizeof why),
                 len == PT_U64_LEN ? PT_OK : PT_EBAD);
        if (len != PT_DEST_LEN && len != PT_VERSION_LEN && len != PT_U64_LEN) {
            CHECK(strstr(why, "expected") != NULL);
        }
    }
}

/* The steps and message sizes match the captures: 16 Sends each way for
 * write_bw and read_bw, 11 for send_bw, read_lat and send_lat, 10 for
 * write_lat. */
IW_TEST(scripts) {
    static const struct {
        pt_test t;
        bool lat;
        int msgs;
        int test_at; /* index of PT_STEP_TEST */
    } want[] = {{PT_WRITE, false, 16, 10}, {PT_READ, false, 16, 10}, {PT_SEND, false, 11, 11},
                {PT_WRITE, true, 10, 11},  {PT_READ, true, 11, 11},  {PT_SEND, true, 11, 11}};
    static const pt_step prologue[] = {
        PT_STEP_VERSION, PT_STEP_CYCLE_BUFFER, PT_STEP_CACHE_LINE, PT_STEP_MTU,  PT_STEP_SYNC,
        PT_STEP_CONNECT, PT_STEP_SYNC,         PT_STEP_DEST,       PT_STEP_SYNC, PT_STEP_SYNC};
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        const pt_step *s = pt_script(want[k].t, want[k].lat);
        int msgs = 0, test_at = -1, n = 0;
        for (; s[n] != PT_STEP_END; n++) {
            if (pt_step_len(s[n]))
                msgs++;
            if (s[n] == PT_STEP_TEST)
                test_at = n;
            CHECK(strcmp(pt_step_name(s[n]), "?") != 0);
        }
        CHECK(n > 10);
        CHECK_MEM(s, prologue, sizeof prologue);
        CHECK_EQ(msgs, want[k].msgs);
        CHECK_EQ(test_at, want[k].test_at);
    }
    CHECK_EQ(pt_step_len(PT_STEP_CONNECT), 0);
    CHECK_EQ(pt_step_len(PT_STEP_TEST), 0);
    CHECK_EQ(pt_step_len(PT_STEP_VERSION), PT_VERSION_LEN);
    CHECK_EQ(pt_step_len(PT_STEP_REPORT_RATE), PT_U64_LEN);
    CHECK(!strcmp(pt_step_name((pt_step)99), "?"));
}

/* increase_rem_addr, as seen on the wire: 1024-octet Writes at +0, +0x400,
 * +0x800, +0xc00, then +0 again. */
IW_TEST(cycle) {
    static const uint64_t w1024[] = {0, 1024, 2048, 3072, 0, 1024};
    for (uint64_t i = 0; i < 6; i++)
        CHECK_EQ(pt_cycle_offset(i, 1024, 64, 4096), w1024[i]);
    CHECK_EQ(pt_cycle_offset(1, 1000, 64, 4096), 1024); /* rounded to the cache line */
    CHECK_EQ(pt_cycle_offset(1, 1500, 64, 4096), 1536);
    CHECK_EQ(pt_cycle_offset(2, 1500, 64, 4096), 0); /* two slots fit */
    CHECK_EQ(pt_cycle_offset(1, 2049, 64, 4096), 0); /* above half: no cycling */
    CHECK_EQ(pt_cycle_offset(5, 65536, 64, 4096), 0);
    CHECK_EQ(pt_cycle_offset(63, 1, 64, 4096), 63 * 64);
    CHECK_EQ(pt_cycle_offset(64, 1, 64, 4096), 0);
    CHECK_EQ(pt_cycle_offset(3, 2, 0, 4096), 6); /* a zero cache line does not divide by 0 */
    for (uint64_t i = 0; i < 300; i++)           /* every slot ends inside the buffer */
        CHECK(pt_cycle_offset(i, 1000, 64, 4096) + 1000 <= pt_buffer_len(1000, 4096));
    CHECK_EQ(pt_buffer_len(65536, 4096), 65536);
    CHECK_EQ(pt_buffer_len(2, 4096), 4096);
}

IW_TEST_MAIN("pt_wire", IW_CASE(dest_golden), IW_CASE(dest_roundtrip), IW_CASE(version),
             IW_CASE(sys_data), IW_CASE(mtu), IW_CASE(report_golden), IW_CASE(credit),
             IW_CASE(lengths), IW_CASE(scripts), IW_CASE(cycle))
