/* SPDX-License-Identifier: GPL-2.0-or-later */
/* FPDUs and markers: RFC 5044 §4.1 (format, PAD), §4.2-4.3 (markers),
 * §4.4 (CRC coverage, Fig. 5 and Fig. 6), §8 (codes 2 and 3).
 *
 * Expected wire images are built here by a reference builder that walks the
 * stream octet by octet and inserts a marker wherever the stream position is
 * a multiple of 512, with its own CRC32c; it shares no code with the library.
 * Fig. 5 and Fig. 6 are checked against both. */
#include <iwarp/crc32c.h>
#include <iwarp/mpa.h>

#include "iw_test.h"
#include "iw_test_guard.h"

/* ---- reference CRC32c: RFC 3720 §12.1 (reflected 0x82F63B78) ---- */

static uint32_t ref_crc_table[256];
static void ref_crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        ref_crc_table[i] = c;
    }
}
static uint32_t ref_crc(const uint8_t *p, size_t n) {
    if (!ref_crc_table[1])
        ref_crc_init();
    uint32_t c = 0xFFFFFFFFu;
    while (n--)
        c = ref_crc_table[(c ^ *p++) & 0xFF] ^ (c >> 8);
    return ~c;
}
/* §4.4 via RFC 3720 B.4: the CRC goes on the wire least significant byte first. */
static void ref_put_crc(uint8_t *p, uint32_t c) {
    p[0] = (uint8_t)c, p[1] = (uint8_t)(c >> 8), p[2] = (uint8_t)(c >> 16),
    p[3] = (uint8_t)(c >> 24);
}

/* ---- reference FPDU builder ---- */

typedef struct {
    size_t wire_len;
    size_t hdr_off;   /* wire offset of ULPDU_Length */
    size_t hdr1_off;  /* wire offset of its second octet */
    size_t ulpdu_off; /* wire offset of the first ULPDU octet */
    size_t crc_off;   /* wire offset of the first CRC octet */
    size_t crc_cover; /* octets covered by the CRC, from wire offset 0 */
    unsigned n_markers;
    size_t marker_off[140];
    bool marker_in_ulpdu; /* a marker falls between the first and last ULPDU octets */
} ref_info;

/* Build the FPDU carrying ulpdu[0..L) whose first wire octet is at stream
 * position pos (grid-relative, mod 2^32). With markers, a marker is placed
 * before any octet whose position is a multiple of 512 (§4.3); its FPDUPTR is
 * 0 before ULPDU_Length (§4.3: "falls between FPDUs"), else the distance
 * from ULPDU_Length back to the marker (§4.2). The CRC covers every wire
 * octet before the CRC field (§4.4 cases 1 and 2). */
static size_t ref_build(uint8_t *out, uint32_t pos, const uint8_t *ulpdu, size_t L, bool markers,
                        bool crc, ref_info *ri) {
    size_t pad = (4 - (2 + L) % 4) % 4; /* §4.1 */
    size_t logical = 2 + L + pad + 4;
    uint8_t *lg = malloc(logical);
    lg[0] = (uint8_t)(L >> 8), lg[1] = (uint8_t)L;
    if (L)
        memcpy(lg + 2, ulpdu, L);
    memset(lg + 2 + L, 0, pad + 4);
    memset(ri, 0, sizeof *ri);
    size_t w = 0;
    bool hdr_seen = false;
    uint32_t hdr_pos = 0;
    size_t first_ulpdu_w = 0, last_ulpdu_w = 0;
    for (size_t l = 0; l < logical; l++) {
        if (markers && ((pos + (uint32_t)w) & 511) == 0) {
            uint32_t ptr = hdr_seen ? (uint32_t)(pos + (uint32_t)w - hdr_pos) : 0;
            out[w] = 0, out[w + 1] = 0, out[w + 2] = (uint8_t)(ptr >> 8), out[w + 3] = (uint8_t)ptr;
            ri->marker_off[ri->n_markers++] = w;
            w += 4;
        }
        if (l == 0) {
            hdr_seen = true;
            hdr_pos = pos + (uint32_t)w;
            ri->hdr_off = w;
        }
        if (l == 2 + L + pad) {
            ri->crc_off = w;
            ri->crc_cover = w;
            if (crc) {
                /* The CRC octets may themselves be split by a marker when pos
                 * is off the 4-octet alignment: fill the logical copy. */
                ref_put_crc(lg + l, ref_crc(out, w));
            }
        }
        if (l == 1)
            ri->hdr1_off = w;
        if (l == 2)
            first_ulpdu_w = ri->ulpdu_off = w;
        if (L && l == 1 + L)
            last_ulpdu_w = w;
        out[w++] = lg[l];
    }
    free(lg);
    ri->wire_len = w;
    ri->marker_in_ulpdu = L && last_ulpdu_w - first_ulpdu_w != L - 1;
    return w;
}

/* Recompute and store the CRC of a (possibly edited) reference FPDU. */
static void ref_fix_crc(uint8_t *fp, const ref_info *ri) {
    uint8_t c[4];
    ref_put_crc(c, ref_crc(fp, ri->crc_cover));
    /* crc_off..: no marker falls inside the CRC for 4-aligned positions */
    memcpy(fp + ri->crc_off, c, 4);
}

static void fill(uint8_t *p, size_t n, uint32_t seed) {
    uint64_t s = 0x9E3779B97F4A7C15ULL ^ seed;
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(iw_test_rand(&s) >> 56);
}

static uint8_t g_scratch[IW_MPA_ULPDU_MAX]; /* decode scratch: always large enough */

/* ---- RFC 5044 Fig. 5 and Fig. 6 ---- */

/* Fig. 5: first FPDU of the stream (starts with a Marker), a 42-octet
 * untagged Send (DDP ctrl 0x41, RDMAP 0x43, QN 0, MSN 1, MO 0) carrying 24
 * zero octets; CRC 52 23 99 83. */
static const char fig5_hex[] = "00 00 00 00"  /* 0000 Marker: Reserved, FPDUPTR 0 */
                               " 00 2a"       /* 0004 ULPDU Length 42 */
                               " 41 43"       /* 0006 DDP Control, RDMAP Control */
                               " 00 00 00 00" /* 0008 Reserved (no STag) */
                               " 00 00 00 00" /* 000c Queue 0 */
                               " 00 00 00 01" /* 0010 MSN 1 */
                               " 00 00 00 00" /* 0014 MO 0 */
                               " 00 00 00 00 00 00 00 00 00 00 00 00" /* 0018 data... */
                               " 00 00 00 00 00 00 00 00 00 00 00 00" /* ...002f */
                               " 52 23 99 83";                        /* 0030 CRC32c */
/* Fig. 6: the second FPDU, at stream offset 0x1EC; MSN 2; Marker at 0x200
 * with FPDUPTR 0x14; CRC 84 92 58 98. */
static const char fig6_hex[] = "00 2a"        /* 01ec Length */
                               " 41 43"       /* 01ee DDP Control, RDMAP Control */
                               " 00 00 00 00" /* 01f0 Reserved (no STag) */
                               " 00 00 00 00" /* 01f4 Queue 0 */
                               " 00 00 00 02" /* 01f8 MSN 2 */
                               " 00 00 00 00" /* 01fc MO 0 */
                               " 00 00 00 14" /* 0200 Marker: Reserved, FPDUPTR 0x14 */
                               " 00 00 00 00 00 00 00 00 00 00 00 00" /* 0204 data... */
                               " 00 00 00 00 00 00 00 00 00 00 00 00" /* ...021b */
                               " 84 92 58 98";                        /* 021c CRC32c */

static void check_fig(const char *hex, uint32_t pos, uint8_t msn) {
    uint8_t fig[64], out[128], ulpdu[42] = {0x41, 0x43};
    size_t n = iw_test_unhex(fig, sizeof fig, hex);
    CHECK_EQ(n, 52);
    ulpdu[13] = msn; /* last octet of MSN (ULPDU octets 10-13) */
    /* encode: DDP/RDMAP header as hdr, 24 zero octets as payload */
    iw_ssize w = iw_mpa_fpdu_encode(out, sizeof out, pos, IW_MPA_MARKERS | IW_MPA_CRC, ulpdu, 18,
                                    ulpdu + 18, 24);
    CHECK_EQ(w, 52);
    CHECK_MEM(out, fig, 52);
    /* the reference builder agrees with the RFC too */
    ref_info ri;
    CHECK_EQ(ref_build(out, pos, ulpdu, 42, true, true, &ri), 52);
    CHECK_MEM(out, fig, 52);
    CHECK_EQ(iw_mpa_fpdu_wire_len(42, pos, true), 52);
    CHECK_EQ(iw_mpa_fpdu_len(fig, 52, pos, true), 52);
    /* decode */
    uint8_t *gp = iw_test_guard(fig, 52);
    iw_mpa_fpdu f;
    iw_verdict v;
    CHECK_EQ(iw_mpa_fpdu_decode(&f, gp, 52, pos, IW_MPA_MARKERS | IW_MPA_CRC, g_scratch,
                                IW_MPA_ULPDU_MAX, &v),
             52);
    CHECK_EQ(v.kind, IW_VERDICT_OK);
    CHECK_EQ(f.ulpdu_len, 42);
    CHECK(f.ulpdu != NULL && memcmp(f.ulpdu, ulpdu, 42) == 0);
    CHECK_EQ(f.crc, IW_CRC_GOOD);
    CHECK_EQ(f.crc_wire, f.crc_calc);
    CHECK_EQ(f.n_markers, 1);
    CHECK(f.marker_ok);
    CHECK_EQ(f.pad_len, 0);
    CHECK_EQ(f.wire_len, 52);
    CHECK_EQ(f.notes, 0);
    iw_test_guard_free(gp, 52);
}

IW_TEST(rfc5044_fig5) {
    check_fig(fig5_hex, 0, 1);
    /* Fig. 5 specifics: header after the leading marker, CRC value. */
    uint8_t fig[64];
    iw_test_unhex(fig, sizeof fig, fig5_hex);
    iw_mpa_fpdu f;
    iw_verdict v;
    REQUIRE(iw_mpa_fpdu_decode(&f, fig, 52, 0, IW_MPA_MARKERS | IW_MPA_CRC, g_scratch,
                               IW_MPA_ULPDU_MAX, &v) == 52);
    CHECK_EQ(f.hdr_off, 4);
    CHECK_EQ(f.crc_wire, 0x83992352u);       /* wire bytes 52 23 99 83, LSB first */
    CHECK(f.ulpdu == fig + 6);               /* no marker inside the ULPDU: zero-copy */
    CHECK_EQ(ref_crc(fig, 48), 0x83992352u); /* §4.4 case 2: marker included */
}

IW_TEST(rfc5044_fig6) {
    check_fig(fig6_hex, 0x1EC, 2);
    uint8_t fig[64];
    iw_test_unhex(fig, sizeof fig, fig6_hex);
    iw_mpa_fpdu f;
    iw_verdict v;
    REQUIRE(iw_mpa_fpdu_decode(&f, fig, 52, 0x1EC, IW_MPA_MARKERS | IW_MPA_CRC, g_scratch,
                               IW_MPA_ULPDU_MAX, &v) == 52);
    CHECK_EQ(f.hdr_off, 0);
    CHECK(f.ulpdu == g_scratch); /* the marker at 0x200 splits the ULPDU */
    CHECK_EQ(ref_crc(fig, 48), iw_crc32c_get(fig + 48));
    /* The same octets decoded 512*k later, or across a sequence wrap,
     * are the same FPDU (§4.3: the grid is mod 512, SeqNum can wrap). */
    for (uint32_t k = 1; k < 8; k++) {
        uint32_t pos = 0x1EC + k * 0x20000000u;
        CHECK_EQ(iw_mpa_fpdu_decode(&f, fig, 52, pos, IW_MPA_MARKERS | IW_MPA_CRC, g_scratch,
                                    IW_MPA_ULPDU_MAX, &v),
                 52);
    }
}

/* Fig. 4 layout: ULPDU_Length 0x0010, 10 octets, Marker 0000 000C, 6 octets,
 * 2 octets PAD, CRC. The header is 12 octets before a grid point: pos 500. */
IW_TEST(rfc5044_fig4_layout) {
    uint8_t u[16], out[64];
    for (int i = 0; i < 16; i++)
        u[i] = (uint8_t)(0xA0 + i);
    iw_ssize w =
        iw_mpa_fpdu_encode(out, sizeof out, 500, IW_MPA_MARKERS | IW_MPA_CRC, NULL, 0, u, 16);
    REQUIRE(w == 28);
    CHECK_EQ(out[0], 0x00);
    CHECK_EQ(out[1], 0x10);
    CHECK_MEM(out + 2, u, 10);
    static const uint8_t marker[4] = {0x00, 0x00, 0x00, 0x0C};
    CHECK_MEM(out + 12, marker, 4);
    CHECK_MEM(out + 16, u + 10, 6);
    CHECK_EQ(out[22], 0);
    CHECK_EQ(out[23], 0);
    CHECK_EQ(iw_crc32c_get(out + 24), ref_crc(out, 24));
}

/* §4.1: PAD makes the FPDU a multiple of 4: (4 - (2 + L) mod 4) mod 4. */
IW_TEST(pad_lengths) {
    static const unsigned want[9] = {2, 1, 0, 3, 2, 1, 0, 3, 2}; /* L = 0..8 */
    for (unsigned L = 0; L <= 8; L++)
        CHECK_EQ(iw_mpa_pad_len(L), want[L]);
    CHECK_EQ(iw_mpa_pad_len(16), 2); /* Fig. 4 */
    CHECK_EQ(iw_mpa_pad_len(42), 0); /* Fig. 5 */
    CHECK_EQ(iw_mpa_pad_len(65535), 3);
    CHECK_EQ(iw_mpa_pad_len(64768), 2);
    for (unsigned L = 0; L < 70000; L++)
        CHECK_EQ((2 + L + iw_mpa_pad_len(L)) % 4, 0);
    /* §4.3: octets to the next marker. */
    CHECK_EQ(iw_mpa_marker_gap(0), 0);
    CHECK_EQ(iw_mpa_marker_gap(1), 511);
    CHECK_EQ(iw_mpa_marker_gap(0x1EC), 0x14);
    CHECK_EQ(iw_mpa_marker_gap(512), 0);
    CHECK_EQ(iw_mpa_marker_gap(0xFFFFFFFFu), 1);
}

static const size_t k_sizes[] = {0, 1, 14, 18, 100, 494, 508, 512, 1000, 4096, 64768};
#define N_SIZES (sizeof k_sizes / sizeof k_sizes[0])

/* Octets of the marker at wire offset off. */
static unsigned marker_ptr(const uint8_t *fp, size_t off) { return fp[off + 2] << 8 | fp[off + 3]; }

/* Every start position 0..511 (step 4: the encoder requires pos % 4 == 0
 * with markers, §4.1) and every size: the encoder's octets equal the
 * reference builder's; markers sit on the grid and point back to the
 * header; decode returns the same ULPDU. */
IW_TEST(encode_every_aligned_pos) {
    size_t cap = IW_MPA_FPDU_WIRE_MAX;
    uint8_t *ulpdu = malloc(70000), *enc = malloc(cap), *ref = malloc(cap);
    fill(ulpdu, 70000, 1);
    for (size_t si = 0; si < N_SIZES; si++) {
        size_t L = k_sizes[si];
        for (uint32_t pos = 0; pos < 512; pos += 4) {
            for (int flags = 0; flags < 4; flags++) {
                bool mk = flags & IW_MPA_MARKERS, crc = flags & IW_MPA_CRC;
                if (!mk && pos >= 16)
                    continue; /* without markers the position plays no part */
                ref_info ri;
                size_t rl = ref_build(ref, pos, ulpdu, L, mk, crc, &ri);
                size_t h = L < 7 ? L : 7; /* split ULPDU as hdr + payload */
                iw_ssize w =
                    iw_mpa_fpdu_encode(enc, cap, pos, (unsigned)flags, ulpdu, h, ulpdu + h, L - h);
                if (w != (iw_ssize)rl || memcmp(enc, ref, rl) != 0) {
                    fprintf(stderr, "  L=%zu pos=%u flags=%d: encode differs from reference\n", L,
                            pos, flags);
                    CHECK(0);
                    continue;
                }
                CHECK_EQ(iw_mpa_fpdu_wire_len(L, pos, mk), rl);
                CHECK_EQ(iw_mpa_fpdu_len(enc, rl, pos, mk), rl);
                /* §4.2/§4.3 directly on the octets: each marker on the grid,
                 * FPDUPTR = marker position - header position, or 0 before it. */
                for (unsigned m = 0; m < ri.n_markers; m++) {
                    size_t off = ri.marker_off[m];
                    CHECK_EQ((pos + off) % 512, 0);
                    CHECK_EQ(enc[off] | enc[off + 1], 0);
                    CHECK_EQ(marker_ptr(enc, off), off < ri.hdr_off ? 0 : off - ri.hdr_off);
                }
                if (!mk)
                    CHECK_EQ(rl, 2 + L + iw_mpa_pad_len(L) + 4);
                if (!crc)
                    CHECK_EQ(iw_crc32c_get(enc + rl - 4), 0);
                iw_mpa_fpdu f;
                iw_verdict v;
                iw_ssize d = iw_mpa_fpdu_decode(&f, enc, rl, pos, (unsigned)flags, g_scratch,
                                                IW_MPA_ULPDU_MAX, &v);
                CHECK_EQ(d, (iw_ssize)rl);
                CHECK_EQ(f.ulpdu_len, L);
                CHECK(L == 0 || memcmp(f.ulpdu, ulpdu, L) == 0);
                CHECK_EQ(f.crc, crc ? IW_CRC_GOOD : IW_CRC_UNCHECKED);
                CHECK_EQ(f.n_markers, mk ? ri.n_markers : 0);
                CHECK(f.marker_ok);
                CHECK_EQ(f.hdr_off, ri.hdr_off);
                CHECK_EQ(f.pad_len, iw_mpa_pad_len(L));
            }
        }
    }
    free(ulpdu);
    free(enc);
    free(ref);
}

/* Every start position 0..511 with FPDUs built by the reference builder:
 * iw_mpa_fpdu_wire_len / iw_mpa_fpdu_len / decode agree with it. At a
 * position off the 4-octet alignment (never produced by a conformant
 * sender, §4.1) a marker after the header cannot carry the true distance in
 * an FPDUPTR whose low 2 bits the receiver treats as 0 (§4.2), so such
 * FPDUs decode with a Marker mismatch — but still yield the right ULPDU. */
IW_TEST(decode_every_pos) {
    size_t cap = IW_MPA_FPDU_WIRE_MAX;
    uint8_t *ulpdu = malloc(70000), *ref = malloc(cap);
    fill(ulpdu, 70000, 2);
    for (size_t si = 0; si < N_SIZES; si++) {
        size_t L = k_sizes[si];
        for (uint32_t pos = 0; pos < 512; pos++) {
            for (int flags = 0; flags < 4; flags++) {
                bool mk = flags & IW_MPA_MARKERS, crc = flags & IW_MPA_CRC;
                if (!mk && pos >= 16)
                    continue; /* without markers the position plays no part */
                ref_info ri;
                size_t rl = ref_build(ref, pos, ulpdu, L, mk, crc, &ri);
                CHECK_EQ(iw_mpa_fpdu_wire_len(L, pos, mk), rl);
                CHECK_EQ(iw_mpa_fpdu_len(ref, rl, pos, mk), rl);
                CHECK_EQ(iw_mpa_fpdu_len(ref, ri.hdr1_off + 1, pos, mk), rl);
                CHECK_EQ(iw_mpa_fpdu_len(ref, ri.hdr1_off, pos, mk), 0);
                iw_mpa_fpdu f;
                iw_verdict v;
                iw_ssize d = iw_mpa_fpdu_decode(&f, ref, rl, pos, (unsigned)flags, g_scratch,
                                                IW_MPA_ULPDU_MAX, &v);
                bool ptr_after_hdr = false;
                for (unsigned m = 0; m < ri.n_markers; m++)
                    ptr_after_hdr |= ri.marker_off[m] > ri.hdr_off;
                bool want_mismatch = mk && pos % 4 != 0 && ptr_after_hdr;
                if (want_mismatch) {
                    CHECK_EQ(d, IW_ERR_PROTO);
                    CHECK_EQ(v.term, IW_TERM_LLP_MPA_MARKER);
                    CHECK(!f.marker_ok);
                } else {
                    if (d != (iw_ssize)rl)
                        fprintf(stderr, "  L=%zu pos=%u flags=%d: decode %td\n", L, pos, flags, d);
                    CHECK_EQ(d, (iw_ssize)rl);
                    CHECK_EQ(v.kind, IW_VERDICT_OK);
                    CHECK(f.marker_ok);
                }
                CHECK_EQ(f.wire_len, rl);
                CHECK_EQ(f.ulpdu_len, L);
                CHECK(L == 0 || memcmp(f.ulpdu, ulpdu, L) == 0);
                CHECK_EQ(f.crc, crc ? IW_CRC_GOOD : IW_CRC_UNCHECKED);
                CHECK_EQ(f.n_markers, mk ? ri.n_markers : 0);
                CHECK_EQ(f.hdr_off, ri.hdr_off);
                if (crc)
                    CHECK_EQ(f.crc_calc, ref_crc(ref, ri.crc_cover));
                /* zero-copy iff no marker splits the ULPDU */
                if (L)
                    CHECK(f.ulpdu == (ri.marker_in_ulpdu ? g_scratch : ref + ri.ulpdu_off));
            }
        }
    }
    free(ulpdu);
    free(ref);
}

/* §4.3 "Note that SeqNum can wrap": pos = SeqNum - SeqStart (mod 2^32). A
 * stream of FPDUs whose sequence numbers cross 0 decodes exactly like the
 * same stream at small positions, and raw positions near 2^32 behave like
 * their value mod 512. */
IW_TEST(sequence_wrap) {
    static const size_t sizes[] = {100, 1000, 18, 494, 4096, 14};
    uint8_t *ulpdu = malloc(8192), *a = malloc(8192), *b = malloc(8192);
    fill(ulpdu, 8192, 3);
    uint32_t seq_start = 0xFFFFFF00u - 0x800u; /* SeqStart: first marker's sequence number */
    uint32_t seq = seq_start + 0x120;          /* first FPDU here; SeqNum crosses 0 below */
    uint32_t plain = 0x120;                    /* the same stream, unwrapped */
    bool crossed = false, seq_crossed = false;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        uint32_t pos = seq - seq_start;
        CHECK_EQ(pos, plain);
        iw_ssize wa =
            iw_mpa_fpdu_encode(a, 8192, pos, IW_MPA_MARKERS | IW_MPA_CRC, NULL, 0, ulpdu, sizes[i]);
        iw_ssize wb = iw_mpa_fpdu_encode(b, 8192, plain, IW_MPA_MARKERS | IW_MPA_CRC, NULL, 0,
                                         ulpdu, sizes[i]);
        REQUIRE(wa > 0 && wa == wb);
        CHECK_MEM(a, b, (size_t)wa);
        /* Raw sequence numbers as positions with a grid anchored at 0:
         * shift so SeqStart maps to a multiple of 512 and wrap across 0. */
        uint32_t raw = pos - 0x400u; /* same grid phase, near 2^32, crosses 0 */
        iw_ssize wr =
            iw_mpa_fpdu_encode(b, 8192, raw, IW_MPA_MARKERS | IW_MPA_CRC, NULL, 0, ulpdu, sizes[i]);
        CHECK_EQ(wr, wa);
        CHECK_MEM(a, b, (size_t)wa);
        iw_mpa_fpdu f;
        iw_verdict v;
        CHECK_EQ(iw_mpa_fpdu_decode(&f, b, (size_t)wr, raw, IW_MPA_MARKERS | IW_MPA_CRC, g_scratch,
                                    IW_MPA_ULPDU_MAX, &v),
                 wa);
        CHECK(memcmp(f.ulpdu, ulpdu, sizes[i]) == 0);
        CHECK_EQ(iw_mpa_fpdu_wire_len(sizes[i], raw, true), (size_t)wa);
        if (raw > 0xFFFF0000u && raw + (uint32_t)wa < 0x10000u)
            crossed = true;
        if ((uint32_t)(seq + (uint32_t)wa) < seq)
            seq_crossed = true;
        seq += (uint32_t)wa;
        plain += (uint32_t)wa;
    }
    CHECK(crossed); /* the test did exercise a wrap inside an FPDU */
    CHECK(seq_crossed);
    free(ulpdu);
    free(a);
    free(b);
}

/* §4.4 case 1: a marker right after the PAD is covered by this FPDU's CRC;
 * a marker right after the CRC belongs to the next FPDU (§4.3). */
IW_TEST(crc_covers_marker_after_pad) {
    uint8_t u[14], fp[64];
    fill(u, sizeof u, 4);
    /* header+ULPDU = 16 octets from pos 496: the marker at 512 precedes the CRC */
    iw_ssize w =
        iw_mpa_fpdu_encode(fp, sizeof fp, 496, IW_MPA_MARKERS | IW_MPA_CRC, NULL, 0, u, 14);
    REQUIRE(w == 24);
    CHECK_EQ(marker_ptr(fp, 16), 16);
    CHECK_EQ(iw_crc32c_get(fp + 20), ref_crc(fp, 20)); /* marker in coverage */
    iw_mpa_fpdu f;
    iw_verdict v;
    CHECK_EQ(iw_mpa_fpdu_decode(&f, fp, 24, 496, IW_MPA_MARKERS | IW_MPA_CRC, g_scratch,
                                IW_MPA_ULPDU_MAX, &v),
             24);
    CHECK_EQ(f.n_markers, 1);
    CHECK(f.ulpdu == fp + 2); /* the marker is after the ULPDU: zero-copy */
    /* Flip a bit of that marker's RESERVED field: the CRC catches it. */
    fp[17] ^= 0x01;
    CHECK_EQ(iw_mpa_fpdu_decode(&f, fp, 24, 496, IW_MPA_MARKERS | IW_MPA_CRC, g_scratch,
                                IW_MPA_ULPDU_MAX, &v),
             IW_ERR_PROTO);
    CHECK_EQ(v.term, IW_TERM_LLP_MPA_CRC);
    /* An FPDU that ends exactly at a grid point: the next marker is not its. */
    w = iw_mpa_fpdu_encode(fp, sizeof fp, 492, IW_MPA_MARKERS | IW_MPA_CRC, NULL, 0, u, 14);
    CHECK_EQ(w, 20);
    CHECK_EQ(iw_mpa_fpdu_wire_len(14, 492, true), 20);
    CHECK_EQ(iw_crc32c_get(fp + 16), ref_crc(fp, 16));
    CHECK_EQ(iw_mpa_fpdu_decode(&f, fp, 20, 492, IW_MPA_MARKERS | IW_MPA_CRC, g_scratch,
                                IW_MPA_ULPDU_MAX, &v),
             20);
    CHECK_EQ(f.n_markers, 0);
}

/* §4.4 case 2: coverage starts at a leading marker (FPDUPTR 0). */
IW_TEST(crc_covers_leading_marker) {
    uint8_t u[30], fp[64];
    fill(u, sizeof u, 5);
    iw_ssize w =
        iw_mpa_fpdu_encode(fp, sizeof fp, 1024, IW_MPA_MARKERS | IW_MPA_CRC, NULL, 0, u, 30);
    REQUIRE(w == 4 + 2 + 30 + 0 + 4);
    CHECK_EQ(marker_ptr(fp, 0), 0);
    CHECK_EQ(iw_crc32c_get(fp + 36), ref_crc(fp, 36));
    CHECK(iw_crc32c_get(fp + 36) != ref_crc(fp + 4, 32));
    fp[0] = 0x80; /* RESERVED bit in the leading marker */
    iw_mpa_fpdu f;
    iw_verdict v;
    CHECK_EQ(iw_mpa_fpdu_decode(&f, fp, 40, 1024, IW_MPA_MARKERS | IW_MPA_CRC, g_scratch,
                                IW_MPA_ULPDU_MAX, &v),
             IW_ERR_PROTO);
    CHECK_EQ(v.kind, IW_VERDICT_TERM);
    CHECK_EQ(v.term, IW_TERM_LLP_MPA_CRC);
    CHECK_EQ(f.crc, IW_CRC_BAD);
}

/* §4.4 / §8 code 2: CRC mismatch is an error, every octet covered. */
IW_TEST(crc_error) {
    uint8_t u[600], fp[700];
    fill(u, sizeof u, 6);
    iw_ssize w =
        iw_mpa_fpdu_encode(fp, sizeof fp, 256, IW_MPA_MARKERS | IW_MPA_CRC, NULL, 0, u, 600);
    REQUIRE(w > 0);
    for (iw_ssize i = 0; i < w; i += 7) {
        if (i < 2)
            continue; /* ULPDU_Length changes the frame size */
        fp[i] ^= 0x10;
        iw_mpa_fpdu f;
        iw_verdict v;
        iw_ssize d = iw_mpa_fpdu_decode(&f, fp, (size_t)w, 256, IW_MPA_MARKERS | IW_MPA_CRC,
                                        g_scratch, IW_MPA_ULPDU_MAX, &v);
        CHECK_EQ(d, IW_ERR_PROTO);
        CHECK_EQ(v.kind, IW_VERDICT_TERM);
        CHECK_EQ(v.term, 0x2002);
        CHECK_EQ(f.crc, IW_CRC_BAD);
        CHECK_EQ(f.wire_len, (size_t)w); /* filled in for display */
        CHECK_EQ(f.ulpdu_len, 600);
        fp[i] ^= 0x10;
    }
}

/* §8 code 3: a marker that disagrees with ULPDU_Length (CRC valid) is a
 * Marker error; with a bad CRC too, the CRC error is reported (§4.4: the
 * CRC is checked first). */
IW_TEST(marker_mismatch) {
    uint8_t u[1424], fp[1600];
    fill(u, sizeof u, 7);
    ref_info ri;
    size_t rl = ref_build(fp, 100, u, sizeof u, true, true, &ri);
    /* markers at wire 412, 924 and 1436 — the last right after the PAD */
    REQUIRE(ri.n_markers == 3);
    CHECK_EQ(ri.marker_off[2], 1436);
    CHECK_EQ(ri.crc_off, 1440);
    for (unsigned m = 0; m < ri.n_markers; m++) {
        size_t off = ri.marker_off[m];
        unsigned good = marker_ptr(fp, off);
        fp[off + 3] = (uint8_t)(good + 4);
        ref_fix_crc(fp, &ri);
        iw_mpa_fpdu f;
        iw_verdict v;
        uint8_t *gp = iw_test_guard(fp, rl);
        iw_ssize d = iw_mpa_fpdu_decode(&f, gp, rl, 100, IW_MPA_MARKERS | IW_MPA_CRC, g_scratch,
                                        IW_MPA_ULPDU_MAX, &v);
        CHECK_EQ(d, IW_ERR_PROTO);
        CHECK_EQ(v.term, IW_TERM_LLP_MPA_MARKER);
        CHECK_EQ(f.crc, IW_CRC_GOOD);
        CHECK(!f.marker_ok);
        CHECK_EQ(f.bad_marker_off, off);
        CHECK_EQ(f.bad_marker_ptr, good + 4);
        CHECK(memcmp(f.ulpdu, u, sizeof u) == 0);
        /* CRC off: the marker is still checked. */
        d = iw_mpa_fpdu_decode(&f, gp, rl, 100, IW_MPA_MARKERS, g_scratch, IW_MPA_ULPDU_MAX, &v);
        CHECK_EQ(d, IW_ERR_PROTO);
        CHECK_EQ(v.term, IW_TERM_LLP_MPA_MARKER);
        iw_test_guard_free(gp, rl);
        /* Both wrong: CRC first. */
        fp[ri.crc_off] ^= 1;
        d = iw_mpa_fpdu_decode(&f, fp, rl, 100, IW_MPA_MARKERS | IW_MPA_CRC, g_scratch,
                               IW_MPA_ULPDU_MAX, &v);
        CHECK_EQ(d, IW_ERR_PROTO);
        CHECK_EQ(v.term, IW_TERM_LLP_MPA_CRC);
        fp[off + 3] = (uint8_t)good;
        ref_fix_crc(fp, &ri);
    }
    /* Two bad markers: the first one is reported. */
    fp[ri.marker_off[1] + 2] ^= 0x80;
    fp[ri.marker_off[2] + 2] ^= 0x80;
    ref_fix_crc(fp, &ri);
    iw_mpa_fpdu f;
    iw_verdict v;
    CHECK_EQ(iw_mpa_fpdu_decode(&f, fp, rl, 100, IW_MPA_MARKERS | IW_MPA_CRC, g_scratch,
                                IW_MPA_ULPDU_MAX, &v),
             IW_ERR_PROTO);
    CHECK_EQ(f.bad_marker_off, ri.marker_off[1]);
    /* A non-zero FPDUPTR on a leading marker (must be 0, §4.3) is a mismatch. */
    size_t l2 = ref_build(fp, 0, u, 40, true, true, &ri);
    fp[3] = 8;
    ref_fix_crc(fp, &ri);
    CHECK_EQ(iw_mpa_fpdu_decode(&f, fp, l2, 0, IW_MPA_MARKERS | IW_MPA_CRC, g_scratch,
                                IW_MPA_ULPDU_MAX, &v),
             IW_ERR_PROTO);
    CHECK_EQ(v.term, IW_TERM_LLP_MPA_MARKER);
    CHECK_EQ(f.bad_marker_off, 0);
}

/* §4.2: RESERVED is ignored on receive; the low 2 FPDUPTR bits are treated
 * as 0. Both are notes, not errors. §4.1: PAD is ignored on receive. */
IW_TEST(marker_reserved_and_low_bits) {
    uint8_t u[700], fp[800];
    fill(u, sizeof u, 8);
    ref_info ri;
    size_t rl = ref_build(fp, 0, u, sizeof u, true, true, &ri);
    REQUIRE(ri.n_markers == 2);
    iw_mpa_fpdu f;
    iw_verdict v;
    /* RESERVED non-zero on the inner marker */
    fp[ri.marker_off[1]] = 0xAB;
    ref_fix_crc(fp, &ri);
    CHECK_EQ(iw_mpa_fpdu_decode(&f, fp, rl, 0, IW_MPA_MARKERS | IW_MPA_CRC, g_scratch,
                                IW_MPA_ULPDU_MAX, &v),
             (iw_ssize)rl);
    CHECK_EQ(f.notes, IW_NOTE(MARKER_RES_NONZERO));
    CHECK(f.marker_ok);
    fp[ri.marker_off[1]] = 0;
    /* low bits of FPDUPTR on both markers */
    for (int bits = 1; bits <= 3; bits++) {
        fp[ri.marker_off[0] + 3] |= (uint8_t)bits;
        fp[ri.marker_off[1] + 3] |= (uint8_t)bits;
        ref_fix_crc(fp, &ri);
        CHECK_EQ(iw_mpa_fpdu_decode(&f, fp, rl, 0, IW_MPA_MARKERS | IW_MPA_CRC, g_scratch,
                                    IW_MPA_ULPDU_MAX, &v),
                 (iw_ssize)rl);
        CHECK_EQ(f.notes, IW_NOTE(MARKER_PTR_LOW_BITS));
        CHECK(f.marker_ok);
        fp[ri.marker_off[0] + 3] &= (uint8_t)~3u;
        fp[ri.marker_off[1] + 3] &= (uint8_t)~3u;
    }
    /* non-zero PAD: 2 + 41 octets need 1 octet of PAD */
    uint8_t u2[41];
    memset(u2, 1, sizeof u2);
    size_t l2 = ref_build(fp, 8, u2, 41, false, true, &ri);
    REQUIRE(l2 == 2 + 41 + 1 + 4);
    fp[43] = 0x7E;
    ref_fix_crc(fp, &ri);
    CHECK_EQ(iw_mpa_fpdu_decode(&f, fp, l2, 8, IW_MPA_CRC, g_scratch, IW_MPA_ULPDU_MAX, &v),
             (iw_ssize)l2);
    CHECK_EQ(f.notes, IW_NOTE(FPDU_PAD_NONZERO));
    CHECK_EQ(f.pad_len, 1);
}

/* §7.1.1 C / §4.1: with CRCs off the field "MUST be considered valid ...
 * regardless of its contents". */
IW_TEST(crc_off) {
    uint8_t u[300], fp[400];
    fill(u, sizeof u, 9);
    for (int mk = 0; mk <= 1; mk++) {
        iw_ssize w =
            iw_mpa_fpdu_encode(fp, sizeof fp, 400, mk ? IW_MPA_MARKERS : 0, NULL, 0, u, 300);
        REQUIRE(w > 0);
        CHECK_EQ(iw_crc32c_get(fp + w - 4), 0); /* encoder writes zero without IW_MPA_CRC */
        for (uint32_t junk = 0; junk < 3; junk++) {
            ref_put_crc(fp + w - 4, junk * 0x9E3779B9u);
            iw_mpa_fpdu f;
            iw_verdict v;
            CHECK_EQ(iw_mpa_fpdu_decode(&f, fp, (size_t)w, 400, mk ? IW_MPA_MARKERS : 0, g_scratch,
                                        IW_MPA_ULPDU_MAX, &v),
                     w);
            CHECK_EQ(v.kind, IW_VERDICT_OK);
            CHECK_EQ(f.crc, IW_CRC_UNCHECKED);
            CHECK_EQ(f.crc_wire, junk * 0x9E3779B9u);
            CHECK(memcmp(f.ulpdu, u, 300) == 0);
        }
    }
}

/* ULPDU in place when no marker splits it, else gathered into scratch;
 * scratch smaller than the ULPDU is NOBUF. */
IW_TEST(zero_copy_and_scratch) {
    uint8_t u[600], fp[700], small[600];
    fill(u, sizeof u, 10);
    iw_mpa_fpdu f;
    iw_verdict v;
    /* No markers at all: in place, scratch not needed. */
    iw_ssize w = iw_mpa_fpdu_encode(fp, sizeof fp, 0, IW_MPA_CRC, NULL, 0, u, 600);
    CHECK_EQ(iw_mpa_fpdu_decode(&f, fp, (size_t)w, 0, IW_MPA_CRC, NULL, 0, &v), w);
    CHECK(f.ulpdu == fp + 2);
    /* Only a leading marker: in place after it. */
    w = iw_mpa_fpdu_encode(fp, sizeof fp, 0, IW_MPA_MARKERS | IW_MPA_CRC, NULL, 0, u, 400);
    CHECK_EQ(iw_mpa_fpdu_decode(&f, fp, (size_t)w, 0, IW_MPA_MARKERS | IW_MPA_CRC, NULL, 0, &v), w);
    CHECK(f.ulpdu == fp + 6);
    /* A marker inside: scratch of exactly ulpdu_len works, one less is NOBUF. */
    w = iw_mpa_fpdu_encode(fp, sizeof fp, 0, IW_MPA_MARKERS | IW_MPA_CRC, NULL, 0, u, 600);
    CHECK_EQ(iw_mpa_fpdu_decode(&f, fp, (size_t)w, 0, IW_MPA_MARKERS | IW_MPA_CRC, small, 600, &v),
             w);
    CHECK(f.ulpdu == small);
    CHECK(memcmp(small, u, 600) == 0);
    CHECK_EQ(iw_mpa_fpdu_decode(&f, fp, (size_t)w, 0, IW_MPA_MARKERS | IW_MPA_CRC, small, 599, &v),
             IW_ERR_NOBUF);
    CHECK_EQ(iw_mpa_fpdu_decode(&f, fp, (size_t)w, 0, IW_MPA_MARKERS | IW_MPA_CRC, NULL, 0, &v),
             IW_ERR_NOBUF);
    /* Zero-length ULPDU: nothing to point at. */
    w = iw_mpa_fpdu_encode(fp, sizeof fp, 8, IW_MPA_CRC, NULL, 0, NULL, 0);
    CHECK_EQ(w, 8);
    CHECK_EQ(iw_mpa_fpdu_decode(&f, fp, 8, 8, IW_MPA_CRC, NULL, 0, &v), 8);
    CHECK_EQ(f.ulpdu_len, 0);
    CHECK_EQ(f.pad_len, 2);
}

/* Encoder errors: NOBUF for every short buffer (nothing written),
 * INVALID_ARG for a ULPDU the 16-bit field cannot carry, a marker stream
 * position off the 4-octet alignment (§4.1), or a marker ULPDU above 64768
 * (§4.5 / §3). */
IW_TEST(encode_errors) {
    uint8_t *u = calloc(1, 70000), *out = malloc(IW_MPA_FPDU_WIRE_MAX + 16);
    static const size_t sizes[] = {0, 1, 42, 510, 1000};
    static const uint32_t poss[] = {0, 4, 496, 508};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (size_t pi = 0; pi < sizeof poss / sizeof poss[0]; pi++)
            for (int flags = 0; flags < 4; flags++) {
                size_t need = iw_mpa_fpdu_wire_len(sizes[si], poss[pi], flags & IW_MPA_MARKERS);
                for (size_t k = 0; k < need; k++) {
                    memset(out, 0xA5, need + 16);
                    CHECK_EQ(
                        iw_mpa_fpdu_encode(out, k, poss[pi], (unsigned)flags, u, 0, u, sizes[si]),
                        IW_ERR_NOBUF);
                    size_t dirty = 0;
                    for (size_t i = 0; i < need + 16; i++)
                        dirty += out[i] != 0xA5;
                    CHECK_EQ(dirty, 0);
                }
                CHECK_EQ(
                    iw_mpa_fpdu_encode(out, need, poss[pi], (unsigned)flags, u, 0, u, sizes[si]),
                    (iw_ssize)need);
            }
    size_t big = IW_MPA_FPDU_WIRE_MAX + 16;
    CHECK_EQ(iw_mpa_fpdu_encode(out, big, 0, IW_MPA_CRC, u, 1, u, 65535), IW_ERR_INVALID_ARG);
    CHECK_EQ(iw_mpa_fpdu_encode(out, big, 0, IW_MPA_CRC, NULL, 0, u, 65536), IW_ERR_INVALID_ARG);
    CHECK_EQ(iw_mpa_fpdu_encode(out, big, 0, IW_MPA_CRC, NULL, 0, u, 65535), 65544);
    CHECK_EQ(iw_mpa_fpdu_encode(out, big, 0, IW_MPA_MARKERS, NULL, 0, u, 64769),
             IW_ERR_INVALID_ARG);
    CHECK(iw_mpa_fpdu_encode(out, big, 0, IW_MPA_MARKERS, NULL, 0, u, 64768) > 0);
    static const uint32_t odd[] = {1, 2, 3, 5, 510, 511, 0xFFFFFFFFu};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        CHECK_EQ(iw_mpa_fpdu_encode(out, big, odd[i], IW_MPA_MARKERS, NULL, 0, u, 20),
                 IW_ERR_INVALID_ARG);
        /* without markers the position is irrelevant */
        CHECK_EQ(iw_mpa_fpdu_encode(out, big, odd[i], 0, NULL, 0, u, 20), 28);
    }
    CHECK_EQ(iw_mpa_fpdu_encode(out, big, 0, 0, NULL, 3, u, 20), IW_ERR_INVALID_ARG);
    CHECK_EQ(iw_mpa_fpdu_encode(out, big, 0, 0, u, 3, NULL, 20), IW_ERR_INVALID_ARG);
    /* Big ULPDU without markers decodes too (wire 2 + 65535 + 3 + 4). */
    fill(u, 65535, 11);
    REQUIRE(iw_mpa_fpdu_encode(out, big, 0, IW_MPA_CRC, NULL, 0, u, 65535) == 65544);
    iw_mpa_fpdu f;
    iw_verdict v;
    CHECK_EQ(iw_mpa_fpdu_decode(&f, out, 65544, 0, IW_MPA_CRC, g_scratch, IW_MPA_ULPDU_MAX, &v),
             65544);
    CHECK(f.ulpdu == out + 2 && memcmp(f.ulpdu, u, 65535) == 0);
    CHECK_EQ(f.pad_len, 3);
    CHECK(65544 <= IW_MPA_FPDU_WIRE_MAX);
    /* the largest marker FPDU fits IW_MPA_FPDU_WIRE_MAX, at every alignment */
    for (uint32_t pos = 0; pos < 512; pos += 4)
        CHECK(iw_mpa_fpdu_wire_len(64768, pos, true) <= IW_MPA_FPDU_WIRE_MAX);
    free(u);
    free(out);
}

/* Every prefix of an encoded FPDU is NEED_MORE; iw_mpa_fpdu_len is 0 until
 * ULPDU_Length is present, then the full length (§6: ULPDU_Length says
 * whether the whole FPDU is present). All reads through a guard page. */
IW_TEST(truncation_loop) {
    static const size_t sizes[] = {0, 14, 18, 100, 494, 508, 1000, 4096, 64768};
    static const uint32_t poss[] = {0, 4, 252, 492, 496, 508};
    uint8_t *u = malloc(70000), *fp = malloc(IW_MPA_FPDU_WIRE_MAX);
    uint8_t *tmp = malloc(IW_MPA_FPDU_WIRE_MAX);
    fill(u, 70000, 12);
    iw_test_guard_buf g;
    iw_test_guard_init(&g, IW_MPA_FPDU_WIRE_MAX);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (size_t pi = 0; pi < sizeof poss / sizeof poss[0]; pi++)
            for (int flags = 0; flags < 4; flags++) {
                bool mk = flags & IW_MPA_MARKERS;
                iw_ssize w = iw_mpa_fpdu_encode(fp, IW_MPA_FPDU_WIRE_MAX, poss[pi], (unsigned)flags,
                                                NULL, 0, u, sizes[si]);
                REQUIRE(w > 0);
                ref_info ri;
                ref_build(tmp, poss[pi], u, sizes[si], mk, flags & IW_MPA_CRC, &ri);
                size_t hdr_end = ri.hdr1_off + 1; /* ULPDU_Length complete */
                for (size_t k = 0; k < (size_t)w; k++) {
                    /* big frames: every prefix near the ends, a sample between */
                    if (w > 1200 && k > 600 && k + 600 < (size_t)w && k % 97 != 0)
                        continue;
                    const uint8_t *p = iw_test_guard_place(&g, fp, k);
                    CHECK_EQ(iw_mpa_fpdu_len(p, k, poss[pi], mk), k < hdr_end ? 0 : (size_t)w);
                    iw_mpa_fpdu f;
                    iw_verdict v;
                    iw_ssize d = iw_mpa_fpdu_decode(&f, p, k, poss[pi], (unsigned)flags, g_scratch,
                                                    IW_MPA_ULPDU_MAX, &v);
                    if (d != IW_ERR_NEED_MORE) {
                        fprintf(stderr, "  L=%zu pos=%u prefix %zu: %td\n", sizes[si], poss[pi], k,
                                d);
                        CHECK_EQ(d, IW_ERR_NEED_MORE);
                    }
                }
                const uint8_t *p = iw_test_guard_place(&g, fp, (size_t)w);
                iw_mpa_fpdu f;
                iw_verdict v;
                CHECK_EQ(iw_mpa_fpdu_decode(&f, p, (size_t)w, poss[pi], (unsigned)flags, g_scratch,
                                            IW_MPA_ULPDU_MAX, &v),
                         w);
            }
    /* Unaligned positions too (decoder side only), hand-built. */
    for (uint32_t pos = 505; pos < 512; pos++) {
        ref_info ri;
        size_t rl = ref_build(fp, pos, u, 30, true, true, &ri);
        for (size_t k = 0; k < rl; k++) {
            const uint8_t *p = iw_test_guard_place(&g, fp, k);
            CHECK_EQ(iw_mpa_fpdu_len(p, k, pos, true), k <= ri.hdr1_off ? 0 : rl);
            iw_mpa_fpdu f;
            iw_verdict v;
            CHECK_EQ(iw_mpa_fpdu_decode(&f, p, k, pos, IW_MPA_MARKERS | IW_MPA_CRC, g_scratch,
                                        IW_MPA_ULPDU_MAX, &v),
                     IW_ERR_NEED_MORE);
        }
    }
    iw_test_guard_fini(&g);
    free(u);
    free(fp);
    free(tmp);
}

/* iw_mpa_fpdu_gather with too few iov entries or too small a frame is
 * NOBUF and writes neither (the sizes are checked before the first write). */
static uint8_t g_gather_in[1500];

static void gather_refused(int iovmax, size_t framelen, uint32_t pos, unsigned flags, size_t len) {
    iw_iovec iov[IW_MPA_GATHER_IOV_MAX];
    uint8_t frame[IW_MPA_GATHER_FRAME_MAX];
    size_t hl = len < 18 ? len : 18, wire = 0;
    memset(iov, IW_TEST_CANARY, sizeof iov);
    memset(frame, IW_TEST_CANARY, sizeof frame);
    CHECK_EQ(iw_mpa_fpdu_gather(iov, iovmax, frame, framelen, pos, flags, g_gather_in, hl,
                                g_gather_in + 200, len - hl, &wire),
             IW_ERR_NOBUF);
    CHECK_EQ(iw_test_canary_changed(iov, sizeof iov), 0);
    CHECK_EQ(iw_test_canary_changed(frame, sizeof frame), 0);
}

IW_TEST(gather_refusal_writes_nothing) {
    static const size_t sizes[] = {0, 3, 42, 1000};
    static const uint32_t poss[] = {0, 496, 508};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (size_t pi = 0; pi < sizeof poss / sizeof poss[0]; pi++)
            for (unsigned flags = 0; flags < 4; flags++) {
                size_t len = sizes[si], hl = len < 18 ? len : 18, wire;
                iw_iovec iov[IW_MPA_GATHER_IOV_MAX];
                uint8_t frame[IW_MPA_GATHER_FRAME_MAX];
                int n =
                    iw_mpa_fpdu_gather(iov, IW_MPA_GATHER_IOV_MAX, frame, sizeof frame, poss[pi],
                                       flags, g_gather_in, hl, g_gather_in + 200, len - hl, &wire);
                REQUIRE(n > 0);
                for (int k = 0; k < n; k++)
                    gather_refused(k, IW_MPA_GATHER_FRAME_MAX, poss[pi], flags, len);
                for (size_t f = 0; f < wire - len; f++) /* length, PAD, CRC, markers */
                    gather_refused(IW_MPA_GATHER_IOV_MAX, f, poss[pi], flags, len);
            }
}

IW_TEST_MAIN("markers", IW_CASE(rfc5044_fig5), IW_CASE(rfc5044_fig6), IW_CASE(rfc5044_fig4_layout),
             IW_CASE(pad_lengths), IW_CASE(encode_every_aligned_pos), IW_CASE(decode_every_pos),
             IW_CASE(sequence_wrap), IW_CASE(crc_covers_marker_after_pad),
             IW_CASE(crc_covers_leading_marker), IW_CASE(crc_error), IW_CASE(marker_mismatch),
             IW_CASE(marker_reserved_and_low_bits), IW_CASE(crc_off),
             IW_CASE(zero_copy_and_scratch), IW_CASE(encode_errors), IW_CASE(truncation_loop),
             IW_CASE(gather_refusal_writes_nothing))
