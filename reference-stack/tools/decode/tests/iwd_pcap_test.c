/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwd_pcap (packet parsing).
 *
 * Parsing: each link type and IP version, extension headers, TCP options,
 * padding, snap-length cuts; every truncation of a valid packet and random
 * mutations must be answered without reading past the span (run under
 * ASan), and a TCP answer's payload always lies inside it.
 * Mid-stream synchronisation is libiwarp's (lib/tests/iw_mpa_sync_test.c). */
#include "iwd_pcap.h"

#include "iw_test.h"

#define DLT_EN10MB 1
#define DLT_NULL 0
#define DLT_RAW 12
#define DLT_LOOP 108
#define DLT_LINUX_SLL 113
#define DLT_IPV4 228
#define DLT_IPV6 229
#define DLT_LINUX_SLL2 276

static void put16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static void put32(uint8_t *p, uint32_t v) {
    put16(p, (uint16_t)(v >> 16));
    put16(p + 2, (uint16_t)v);
}

/* IPv4 + TCP (with timestamps option) + n payload octets at p. */
static size_t ipv4_tcp(uint8_t *p, size_t n, uint16_t total_override) {
    memset(p, 0, 20 + 32);
    p[0] = 0x45;
    put16(p + 2, total_override ? total_override : (uint16_t)(20 + 32 + n));
    p[8] = 64;
    p[9] = 6;
    p[12] = 192, p[13] = 0, p[14] = 2, p[15] = 1;
    p[16] = 192, p[17] = 0, p[18] = 2, p[19] = 2;
    uint8_t *t = p + 20;
    put16(t, 40000);
    put16(t + 2, 4791);
    put32(t + 4, 0x11223344);
    put32(t + 8, 0x55667788);
    t[12] = 8 << 4; /* 32-octet header */
    t[13] = 0x18;   /* PSH ACK */
    t[20] = 1, t[21] = 1, t[22] = 8, t[23] = 10;
    for (size_t i = 0; i < n; i++)
        t[32 + i] = (uint8_t)(0xA0 + i);
    return 20 + 32 + n;
}

static size_t ipv6_tcp(uint8_t *p, size_t n, bool ext) {
    size_t eh = ext ? 8 + 8 + 16 : 0; /* HBH, atomic Fragment, AH (16) */
    memset(p, 0, 40 + eh + 20);
    p[0] = 0x60;
    put16(p + 4, (uint16_t)(eh + 20 + n));
    p[6] = ext ? 0 : 6;
    p[7] = 64;
    p[8] = 0x20, p[9] = 0x01, p[10] = 0x0d, p[11] = 0xb8, p[23] = 1;
    p[24] = 0x20, p[25] = 0x01, p[26] = 0x0d, p[27] = 0xb8, p[39] = 2;
    uint8_t *e = p + 40;
    if (ext) {
        e[0] = 44; /* HBH -> Fragment */
        e[2] = 1, e[3] = 4;
        e[8] = 51; /* Fragment (offset 0, M 0) -> AH */
        e[16] = 6; /* AH -> TCP, length (2+2)*4 = 16 */
        e[17] = 2;
    }
    uint8_t *t = p + 40 + eh;
    put16(t, 1234);
    put16(t + 2, 4791);
    put32(t + 4, 7);
    t[12] = 5 << 4;
    t[13] = 0x02;
    for (size_t i = 0; i < n; i++)
        t[20 + i] = (uint8_t)i;
    return 40 + eh + 20 + n;
}

static uint8_t buf[4096];

IW_TEST(test_ethernet_ipv4_options_padding) {
    memset(buf, 0xEE, sizeof buf);
    memset(buf, 0, 14);
    put16(buf + 12, 0x0800);
    size_t n = 14 + ipv4_tcp(buf + 14, 5, 0);
    iwd_pkt k;
    const char *why;
    /* One octet of Ethernet padding after the IP packet: trimmed. */
    CHECK_EQ(iwd_pkt_parse(DLT_EN10MB, buf, n + 1, n + 1, &k, &why), IWD_PKT_TCP);
    CHECK_EQ(k.af, 4);
    CHECK_EQ(k.sport, 40000);
    CHECK_EQ(k.dport, 4791);
    CHECK_EQ(k.seq, 0x11223344u);
    CHECK_EQ(k.ack, 0x55667788u);
    CHECK_EQ(k.flags, 0x18);
    CHECK_EQ(k.len, 5);
    CHECK_EQ(k.caplen, 5);
    CHECK_EQ(k.payload - buf, 14 + 20 + 32);
    CHECK_EQ(k.payload[0], 0xA0);
    char s[IWD_ADDR_STRLEN];
    iwd_pkt_addr_str(s, k.af, k.src, k.sport);
    CHECK(strcmp(s, "192.0.2.1:40000") == 0);
    /* Cut by the snap length inside the payload. */
    CHECK_EQ(iwd_pkt_parse(DLT_EN10MB, buf, n - 3, n, &k, &why), IWD_PKT_TCP);
    CHECK_EQ(k.len, 5);
    CHECK_EQ(k.caplen, 2);
    /* Segmentation offload: total length 0 means the frame's length. */
    n = 14 + ipv4_tcp(buf + 14, 5, 0);
    put16(buf + 14 + 2, 0);
    CHECK_EQ(iwd_pkt_parse(DLT_EN10MB, buf, n, n, &k, &why), IWD_PKT_TCP);
    CHECK_EQ(k.len, 5);
}

IW_TEST(test_vlan_sll_null_loop_raw) {
    iwd_pkt k;
    const char *why;
    /* QinQ + 802.1Q */
    memset(buf, 0, 22);
    put16(buf + 12, 0x88A8);
    put16(buf + 16, 0x8100);
    put16(buf + 20, 0x0800);
    size_t n = 22 + ipv4_tcp(buf + 22, 3, 0);
    CHECK_EQ(iwd_pkt_parse(DLT_EN10MB, buf, n, n, &k, &why), IWD_PKT_TCP);
    CHECK_EQ(k.len, 3);
    /* SLL */
    memset(buf, 0, 16);
    put16(buf + 14, 0x0800);
    n = 16 + ipv4_tcp(buf + 16, 3, 0);
    CHECK_EQ(iwd_pkt_parse(DLT_LINUX_SLL, buf, n, n, &k, &why), IWD_PKT_TCP);
    /* SLL2 with IPv6 and extension headers */
    memset(buf, 0, 20);
    put16(buf, 0x86DD);
    n = 20 + ipv6_tcp(buf + 20, 4, true);
    CHECK_EQ(iwd_pkt_parse(DLT_LINUX_SLL2, buf, n, n, &k, &why), IWD_PKT_TCP);
    CHECK_EQ(k.af, 6);
    CHECK_EQ(k.len, 4);
    CHECK_EQ(k.flags, 0x02);
    char s[IWD_ADDR_STRLEN];
    iwd_pkt_addr_str(s, k.af, k.dst, k.dport);
    CHECK(strcmp(s, "[2001:db8::2]:4791") == 0);
    /* DLT_NULL: host order, either; AF_INET6 as Linux, BSD and macOS say it */
    static const uint32_t af6[] = {10, 24, 28, 30};
    for (size_t i = 0; i < 4; i++) {
        memset(buf, 0, 4);
        buf[0] = (uint8_t)af6[i]; /* little-endian host */
        n = 4 + ipv6_tcp(buf + 4, 1, false);
        CHECK_EQ(iwd_pkt_parse(DLT_NULL, buf, n, n, &k, &why), IWD_PKT_TCP);
        put32(buf, af6[i]); /* big-endian host */
        CHECK_EQ(iwd_pkt_parse(DLT_NULL, buf, n, n, &k, &why), IWD_PKT_TCP);
        CHECK_EQ(iwd_pkt_parse(DLT_LOOP, buf, n, n, &k, &why), IWD_PKT_TCP);
    }
    put32(buf, 7);
    CHECK_EQ(iwd_pkt_parse(DLT_LOOP, buf, n, n, &k, &why), IWD_PKT_OTHER);
    /* raw IP */
    n = ipv4_tcp(buf, 0, 0);
    CHECK_EQ(iwd_pkt_parse(DLT_RAW, buf, n, n, &k, &why), IWD_PKT_TCP);
    CHECK_EQ(iwd_pkt_parse(DLT_IPV4, buf, n, n, &k, &why), IWD_PKT_TCP);
    CHECK_EQ(iwd_pkt_parse(DLT_IPV6, buf, n, n, &k, &why), IWD_PKT_MALFORMED);
    n = ipv6_tcp(buf, 0, false);
    CHECK_EQ(iwd_pkt_parse(DLT_IPV6, buf, n, n, &k, &why), IWD_PKT_TCP);
    CHECK_EQ(iwd_pkt_parse(101, buf, n, n, &k, &why), IWD_PKT_TCP);
    CHECK(!iwd_pkt_dlt_supported(105));
    CHECK(iwd_pkt_dlt_supported(DLT_LINUX_SLL2));
}

IW_TEST(test_not_tcp_fragments_malformed) {
    iwd_pkt k;
    const char *why = NULL;
    size_t n = ipv4_tcp(buf, 10, 0);
    buf[9] = 17;
    CHECK_EQ(iwd_pkt_parse(DLT_RAW, buf, n, n, &k, &why), IWD_PKT_OTHER);
    n = ipv4_tcp(buf, 10, 0);
    buf[6] = 0x20; /* MF */
    CHECK_EQ(iwd_pkt_parse(DLT_RAW, buf, n, n, &k, &why), IWD_PKT_FRAGMENT);
    n = ipv4_tcp(buf, 10, 0);
    buf[7] = 0x10; /* offset */
    CHECK_EQ(iwd_pkt_parse(DLT_RAW, buf, n, n, &k, &why), IWD_PKT_FRAGMENT);
    n = ipv6_tcp(buf, 10, true);
    buf[40 + 8 + 3] = 0x01; /* M */
    CHECK_EQ(iwd_pkt_parse(DLT_RAW, buf, n, n, &k, &why), IWD_PKT_FRAGMENT);
    n = ipv4_tcp(buf, 10, 2000); /* total length beyond the packet */
    CHECK_EQ(iwd_pkt_parse(DLT_RAW, buf, n, n, &k, &why), IWD_PKT_MALFORMED);
    CHECK(why && strstr(why, "exceeds"));
    n = ipv4_tcp(buf, 10, 0);
    buf[20 + 12] = 0x30; /* data offset 3 */
    CHECK_EQ(iwd_pkt_parse(DLT_RAW, buf, n, n, &k, &why), IWD_PKT_MALFORMED);
    n = ipv4_tcp(buf, 0, 0);
    buf[20 + 12] = 0xF0; /* 60-octet header in a 32-octet segment */
    CHECK_EQ(iwd_pkt_parse(DLT_RAW, buf, n, n, &k, &why), IWD_PKT_MALFORMED);
    memset(buf, 0, 14);
    put16(buf + 12, 0x0806);
    CHECK_EQ(iwd_pkt_parse(DLT_EN10MB, buf, 60, 60, &k, &why), IWD_PKT_OTHER);
    put16(buf + 12, 0x0050); /* 802.3 length */
    CHECK_EQ(iwd_pkt_parse(DLT_EN10MB, buf, 60, 60, &k, &why), IWD_PKT_OTHER);
    CHECK_EQ(iwd_pkt_parse(12345, buf, 60, 60, &k, &why), IWD_PKT_OTHER);
}

static void check_answer(int dlt, const uint8_t *p, size_t cap, size_t wire) {
    iwd_pkt k;
    const char *why = NULL;
    iwd_pkt_kind r = iwd_pkt_parse(dlt, p, cap, wire, &k, &why);
    if (r == IWD_PKT_TCP) {
        CHECK(k.payload >= p);
        CHECK(k.payload + k.caplen <= p + cap);
        CHECK(k.caplen <= k.len);
    } else if (r == IWD_PKT_MALFORMED) {
        CHECK(why && why[0]);
    }
}

/* Every cut of a valid packet, as a snap-length cut (wire = whole) and as
 * a packet that really was that short; copied to the end of a heap block
 * so that ASan sees any over-read. */
IW_TEST(test_every_truncation) {
    static const int dlts[] = {DLT_EN10MB, DLT_LINUX_SLL, DLT_LINUX_SLL2, DLT_NULL, DLT_RAW};
    for (size_t d = 0; d < sizeof dlts / sizeof dlts[0]; d++) {
        for (int v6 = 0; v6 < 2; v6++) {
            size_t lh = dlts[d] == DLT_EN10MB       ? 14
                        : dlts[d] == DLT_LINUX_SLL  ? 16
                        : dlts[d] == DLT_LINUX_SLL2 ? 20
                        : dlts[d] == DLT_NULL       ? 4
                                                    : 0;
            memset(buf, 0, lh);
            if (dlts[d] == DLT_EN10MB)
                put16(buf + 12, v6 ? 0x86DD : 0x0800);
            else if (dlts[d] == DLT_LINUX_SLL)
                put16(buf + 14, v6 ? 0x86DD : 0x0800);
            else if (dlts[d] == DLT_LINUX_SLL2)
                put16(buf, v6 ? 0x86DD : 0x0800);
            else if (dlts[d] == DLT_NULL)
                buf[0] = v6 ? 10 : 2;
            size_t n = lh + (v6 ? ipv6_tcp(buf + lh, 9, true) : ipv4_tcp(buf + lh, 9, 0));
            for (size_t cut = 0; cut <= n; cut++) {
                uint8_t *h = malloc(cut ? cut : 1);
                REQUIRE(h);
                memcpy(h, buf, cut);
                check_answer(dlts[d], h, cut, n);
                check_answer(dlts[d], h, cut, cut);
                free(h);
            }
        }
    }
}

IW_TEST(test_random_packets) {
    uint64_t seed = 7;
    static const int dlts[] = {DLT_EN10MB, DLT_LINUX_SLL, DLT_LINUX_SLL2, DLT_NULL,
                               DLT_LOOP,   DLT_RAW,       DLT_IPV4,       DLT_IPV6};
    for (int r = 0; r < 20000; r++) {
        int dlt = dlts[iw_test_rand(&seed) % 8];
        size_t n;
        /* Mostly valid packets with a few octets changed; some pure noise. */
        if (r % 4) {
            size_t lh = dlt == DLT_EN10MB ? 14 : 0;
            memset(buf, 0, 14);
            put16(buf + 12, 0x0800);
            bool v6 = r & 1;
            n = lh + (v6 ? ipv6_tcp(buf + lh, r % 50, r & 2) : ipv4_tcp(buf + lh, r % 50, 0));
            unsigned flips = 1 + (unsigned)(iw_test_rand(&seed) % 4);
            for (unsigned f = 0; f < flips; f++)
                buf[iw_test_rand(&seed) % n] = (uint8_t)iw_test_rand(&seed);
        } else {
            n = (size_t)(iw_test_rand(&seed) % 200);
            for (size_t i = 0; i < n; i++)
                buf[i] = (uint8_t)iw_test_rand(&seed);
        }
        size_t cap = n - (n ? (size_t)(iw_test_rand(&seed) % (n + 1)) / 4 : 0);
        uint8_t *h = malloc(cap ? cap : 1);
        REQUIRE(h);
        memcpy(h, buf, cap);
        check_answer(dlt, h, cap, n);
        free(h);
    }
}

IW_TEST(test_capture_magic) {
    static const uint8_t pcap_le[] = {0xD4, 0xC3, 0xB2, 0xA1}, pcap_ns[] = {0xA1, 0xB2, 0x3C, 0x4D},
                         ng[] = {0x0A, 0x0D, 0x0D, 0x0A}, mpa[] = "MPA ID Req Frame";
    CHECK(iwd_is_capture_magic(pcap_le, 4));
    CHECK(iwd_is_capture_magic(pcap_ns, 4));
    CHECK(iwd_is_capture_magic(ng, 4));
    CHECK(!iwd_is_capture_magic(ng, 3));
    CHECK(!iwd_is_capture_magic(mpa, 16));
}

IW_TEST_MAIN("iwd_pcap", IW_CASE(test_ethernet_ipv4_options_padding),
             IW_CASE(test_vlan_sll_null_loop_raw), IW_CASE(test_not_tcp_fragments_malformed),
             IW_CASE(test_every_truncation), IW_CASE(test_random_packets),
             IW_CASE(test_capture_magic), )
