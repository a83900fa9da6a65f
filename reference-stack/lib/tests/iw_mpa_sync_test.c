/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iw_mpa_sync: mid-stream FPDU synchronisation (<iwarp/mpa_sync.h>).
 *
 * CRC and no-CRC streams, with and without markers at every grid phase, a
 * capture starting inside an FPDU, forced modes, a known grid after a gap,
 * the boundary walk a dissector resumes with, short spans that must stay
 * undecided (markers are never declared absent from one segment) and
 * random octets. */
#include <iwarp/iwarp.h>

#include <string.h>

#include "iw_test.h"

typedef struct stream {
    uint8_t buf[16384];
    size_t len;
    uint32_t pos;
    unsigned flags;
    uint64_t starts[64]; /* FPDU offsets */
    size_t n;
} stream;

static void put_fpdus(stream *s, unsigned count, size_t paylen) {
    static uint8_t pay[1200];
    for (size_t i = 0; i < sizeof pay; i++)
        pay[i] = (uint8_t)(i * 13);
    for (unsigned i = 0; i < count; i++) {
        iw_rdmap_msg m;
        memset(&m, 0, sizeof m);
        m.rv = IW_RDMAP_VERSION;
        m.opcode = IW_OP_SEND;
        m.ddp.dv = IW_DDP_VERSION;
        m.ddp.last = true;
        m.ddp.msn = 1 + i;
        uint8_t h[64];
        iw_ssize hl = iw_rdmap_encode_hdr(h, sizeof h, &m);
        REQUIRE(hl > 0);
        s->starts[s->n++] = s->len;
        iw_ssize w = iw_mpa_fpdu_encode(s->buf + s->len, sizeof s->buf - s->len, s->pos, s->flags,
                                        h, (size_t)hl, pay, paylen + i * 37);
        REQUIRE(w > 0);
        s->len += (size_t)w;
        s->pos += (uint32_t)w;
    }
}

static uint8_t scratch[IW_MPA_SYNC_SCRATCH];

static iw_mpa_sync_status probe(const stream *s, size_t len, bool final, const uint64_t *c,
                                size_t nc, iw_df_mode markers, iw_df_mode crc,
                                iw_mpa_sync_res *res) {
    iw_mpa_sync_cfg cfg = {markers, crc, false, 0};
    size_t first = 0;
    return iw_mpa_sync_probe(s->buf, len, final, c, nc, &first, &cfg, scratch, res);
}

IW_TEST(test_sync_crc_no_markers) {
    static stream s;
    memset(&s, 0, sizeof s);
    s.flags = IW_MPA_CRC;
    put_fpdus(&s, 6, 100);
    iw_mpa_sync_res r;
    CHECK_EQ(probe(&s, s.len, true, s.starts, 1, IW_DF_AUTO, IW_DF_AUTO, &r), IW_MPA_SYNC_FOUND);
    CHECK_EQ(r.off, 0);
    CHECK(!r.markers);
    CHECK(r.crc);
    /* Less than 512 octets so far: a marker may still show up. */
    CHECK_EQ(probe(&s, s.starts[2], false, s.starts, 1, IW_DF_AUTO, IW_DF_AUTO, &r),
             IW_MPA_SYNC_MORE);
    /* The first candidate is inside an FPDU: the next one is taken. */
    uint64_t c[2] = {7, s.starts[1]};
    CHECK_EQ(probe(&s, s.len, true, c, 2, IW_DF_AUTO, IW_DF_AUTO, &r), IW_MPA_SYNC_FOUND);
    CHECK_EQ(r.off, s.starts[1]);
    /* Forced markers: nothing holds. */
    CHECK_EQ(probe(&s, s.len, true, s.starts, 1, IW_DF_ON, IW_DF_ON, &r), IW_MPA_SYNC_NONE);
}

IW_TEST(test_sync_markers_every_phase) {
    static stream s;
    for (uint32_t phase = 0; phase < 512; phase += 4 * 9) {
        memset(&s, 0, sizeof s);
        s.flags = IW_MPA_CRC | IW_MPA_MARKERS;
        s.pos = 4096 + phase;
        put_fpdus(&s, 4, 300);
        iw_mpa_sync_res r;
        CHECK_EQ(probe(&s, s.len, true, s.starts, 1, IW_DF_AUTO, IW_DF_AUTO, &r),
                 IW_MPA_SYNC_FOUND);
        CHECK(r.markers);
        CHECK_EQ(r.pos % 512, phase);
        CHECK(r.crc);
        /* --no-markers: at most the first FPDU holds, when no marker falls
         * inside it (the decode then shows the marker where the next one
         * should start). */
        iw_mpa_sync_status st = probe(&s, s.len, true, s.starts, 1, IW_DF_OFF, IW_DF_AUTO, &r);
        CHECK(st == IW_MPA_SYNC_NONE || (!r.markers && r.fpdus == 1));
        /* A known grid position. */
        iw_mpa_sync_cfg cfg = {IW_DF_ON, IW_DF_AUTO, true, 4096 + phase};
        size_t first = 0;
        CHECK_EQ(iw_mpa_sync_probe(s.buf, s.len, true, s.starts, 1, &first, &cfg, scratch, &r),
                 IW_MPA_SYNC_FOUND);
        cfg.pos0 += 4;
        first = 0;
        CHECK_EQ(iw_mpa_sync_probe(s.buf, s.len, true, s.starts, 1, &first, &cfg, scratch, &r),
                 IW_MPA_SYNC_NONE);
    }
}

IW_TEST(test_sync_without_crc) {
    static stream s;
    memset(&s, 0, sizeof s);
    s.flags = 0; /* CRC field zero */
    put_fpdus(&s, 5, 40);
    iw_mpa_sync_res r;
    CHECK_EQ(probe(&s, s.len, true, s.starts, 1, IW_DF_AUTO, IW_DF_AUTO, &r), IW_MPA_SYNC_FOUND);
    CHECK(!r.crc);
    CHECK(!r.markers);
    CHECK(r.fpdus >= 4);
    CHECK_EQ(probe(&s, s.len, true, s.starts, 1, IW_DF_AUTO, IW_DF_ON, &r), IW_MPA_SYNC_NONE);
    /* Two FPDUs that end exactly where the direction ends: enough; one is not. */
    CHECK_EQ(probe(&s, s.starts[2], true, s.starts, 1, IW_DF_AUTO, IW_DF_AUTO, &r),
             IW_MPA_SYNC_FOUND);
    CHECK_EQ(probe(&s, s.starts[1], true, s.starts, 1, IW_DF_AUTO, IW_DF_AUTO, &r),
             IW_MPA_SYNC_NONE);
    /* Three, with more to come that do not hold: not enough. */
    uint64_t three = s.starts[3];
    s.buf[three + 2] ^= 0x03; /* DDP version of the fourth */
    CHECK_EQ(probe(&s, s.len, true, s.starts, 1, IW_DF_AUTO, IW_DF_AUTO, &r), IW_MPA_SYNC_NONE);
    s.buf[three + 2] ^= 0x03;
    /* With markers, no CRC. */
    memset(&s, 0, sizeof s);
    s.flags = IW_MPA_MARKERS;
    s.pos = 1000;
    put_fpdus(&s, 5, 200);
    CHECK_EQ(probe(&s, s.len, true, s.starts, 1, IW_DF_AUTO, IW_DF_AUTO, &r), IW_MPA_SYNC_FOUND);
    CHECK(r.markers);
    CHECK(!r.crc);
    CHECK_EQ(r.pos % 512, 1000 % 512);
    /* The same markers with an FPDUPTR low bit set: a receiver reads them
     * (it treats those bits as 0, RFC 5044 §4.2), but no sender writes
     * them, so they are no evidence of the grid. */
    size_t n_marks = 0;
    for (size_t w = iw_mpa_marker_gap(1000); w < s.len; w += IW_MPA_MARKER_INTERVAL, n_marks++)
        s.buf[w + 3] |= 1;
    REQUIRE(n_marks >= 2);
    iw_mpa_fpdu f;
    iw_verdict v;
    uint8_t sc[2048];
    size_t w0 = iw_mpa_fpdu_len(s.buf, s.len, 1000, true);
    REQUIRE(w0 > 0);
    iw_mpa_fpdu_decode(&f, s.buf, w0, 1000, IW_MPA_MARKERS, sc, sizeof sc, &v);
    CHECK(f.marker_ok || f.n_markers == 0);
    iw_mpa_sync_status st = probe(&s, s.len, true, s.starts, 1, IW_DF_AUTO, IW_DF_AUTO, &r);
    CHECK(st != IW_MPA_SYNC_FOUND || !r.markers);
}

IW_TEST(test_sync_random_octets) {
    static stream s;
    uint64_t seed = 3;
    unsigned found = 0;
    for (int round = 0; round < 40; round++) {
        memset(&s, 0, sizeof s);
        s.len = 2000 + (size_t)(iw_test_rand(&seed) % 8000);
        for (size_t i = 0; i < s.len; i++)
            s.buf[i] = (uint8_t)iw_test_rand(&seed);
        uint64_t c[16];
        for (size_t i = 0; i < 16; i++)
            c[i] = i * (s.len / 16);
        iw_mpa_sync_res r;
        if (probe(&s, s.len, true, c, 16, IW_DF_AUTO, IW_DF_AUTO, &r) == IW_MPA_SYNC_FOUND)
            found++;
    }
    CHECK_EQ(found, 0);
}

/* A live caller (final=false) that has seen less than a grid interval
 * of an unmarked stream must not be told "no markers": a marker at a phase
 * past the data could still come. Once 512 octets chain up, it is told. */
IW_TEST(test_sync_no_marker_verdict_from_one_segment) {
    static stream s;
    memset(&s, 0, sizeof s);
    s.flags = IW_MPA_CRC;
    put_fpdus(&s, 8, 120);
    iw_mpa_sync_res r;
    size_t cut = 0;
    while (cut + 1 < s.n && s.starts[cut + 1] < 400)
        cut++;
    CHECK_EQ(probe(&s, s.starts[cut], false, s.starts, 1, IW_DF_AUTO, IW_DF_AUTO, &r),
             IW_MPA_SYNC_MORE);
    CHECK(s.len >= 512);
    CHECK_EQ(probe(&s, s.len, false, s.starts, 1, IW_DF_AUTO, IW_DF_AUTO, &r), IW_MPA_SYNC_FOUND);
    CHECK(!r.markers);
    /* With markers whose first marker lies past the first segment: the
     * first segment alone is undecided, the marker decides. */
    memset(&s, 0, sizeof s);
    s.flags = IW_MPA_CRC | IW_MPA_MARKERS;
    s.pos = 512 + 4; /* the next marker is 508 octets away */
    put_fpdus(&s, 4, 200);
    CHECK(s.starts[1] < 508);
    CHECK_EQ(probe(&s, s.starts[1], false, s.starts, 1, IW_DF_AUTO, IW_DF_AUTO, &r),
             IW_MPA_SYNC_MORE);
    CHECK_EQ(probe(&s, s.len, false, s.starts, 1, IW_DF_AUTO, IW_DF_AUTO, &r), IW_MPA_SYNC_FOUND);
    CHECK(r.markers);
    CHECK_EQ(r.pos % 512, 4);
}

/* The boundary walk: from the found FPDU to the first boundary at or after
 * a later offset, with its grid position; SIZE_MAX past the data. */
IW_TEST(test_sync_boundary_walk) {
    static stream s;
    memset(&s, 0, sizeof s);
    s.flags = IW_MPA_CRC | IW_MPA_MARKERS;
    s.pos = 100;
    put_fpdus(&s, 6, 250);
    iw_mpa_sync_res r;
    CHECK_EQ(probe(&s, s.len, true, s.starts, 1, IW_DF_AUTO, IW_DF_AUTO, &r), IW_MPA_SYNC_FOUND);
    for (size_t i = 0; i < s.n; i++) {
        uint32_t pos = 0;
        CHECK_EQ(iw_mpa_sync_boundary(s.buf, s.len, &r, (size_t)s.starts[i], &pos), s.starts[i]);
        CHECK_EQ(pos, 100 + (uint32_t)s.starts[i]);
        if (i) {
            CHECK_EQ(iw_mpa_sync_boundary(s.buf, s.len, &r, (size_t)s.starts[i - 1] + 1, &pos),
                     s.starts[i]);
        }
    }
    CHECK_EQ(iw_mpa_sync_boundary(s.buf, s.len, &r, s.len, NULL), s.len);
    /* The last FPDU runs past the data: its end is still the boundary. */
    CHECK_EQ(iw_mpa_sync_boundary(s.buf, s.len - 1, &r, s.len - 1, NULL), s.len);
    /* A header that is not there: unknown. */
    CHECK_EQ(
        iw_mpa_sync_boundary(s.buf, (size_t)s.starts[2] + 1, &r, (size_t)s.starts[2] + 2, NULL),
        SIZE_MAX);
    CHECK_EQ(iw_mpa_sync_boundary(NULL, 0, &r, 0, NULL), SIZE_MAX);
}

/* After a gap in a direction whose grid is known: resynchronise at a
 * later segment start, only at the phase the grid gives. */
IW_TEST(test_sync_after_gap_known_grid) {
    static stream s;
    memset(&s, 0, sizeof s);
    s.flags = IW_MPA_CRC | IW_MPA_MARKERS;
    s.pos = 3000;
    put_fpdus(&s, 8, 150);
    iw_mpa_sync_res r;
    /* Octets from the middle of FPDU 1: candidates are junk, then FPDU 3;
     * FPDU 2, which no segment starts, is named by its marker. */
    size_t from = (size_t)s.starts[1] + 10;
    uint64_t c[2] = {0, s.starts[3] - from};
    iw_mpa_sync_cfg cfg = {IW_DF_ON, IW_DF_ON, true, 3000 + (uint32_t)from};
    size_t first = 0;
    CHECK_EQ(iw_mpa_sync_probe(s.buf + from, s.len - from, false, c, 2, &first, &cfg, scratch, &r),
             IW_MPA_SYNC_FOUND);
    CHECK_EQ(r.off, s.starts[2] - from);
    CHECK_EQ(r.pos, 3000 + (uint32_t)s.starts[2]);
    CHECK(r.markers);
    CHECK_EQ(first, 1u); /* the rejected candidate is not tried again */
    /* Known grid and markers: one FPDU that crosses no grid point is
     * enough, even for a live caller. */
    memset(&s, 0, sizeof s);
    s.flags = IW_MPA_CRC | IW_MPA_MARKERS;
    s.pos = 4;
    put_fpdus(&s, 2, 60);
    uint64_t c0 = 0;
    cfg = (iw_mpa_sync_cfg){IW_DF_ON, IW_DF_AUTO, true, 4};
    first = 0;
    CHECK_EQ(iw_mpa_sync_probe(s.buf, s.len, false, &c0, 1, &first, &cfg, scratch, &r),
             IW_MPA_SYNC_FOUND);
    CHECK_EQ(r.pos, 4u);
    cfg.markers = IW_DF_AUTO; /* markers unknown: a marker may still decide */
    first = 0;
    CHECK_EQ(iw_mpa_sync_probe(s.buf, s.len, false, &c0, 1, &first, &cfg, scratch, &r),
             IW_MPA_SYNC_MORE);
}

/* Segments that do not start at FPDUs (RFC 5044 §5.1: receivers must not
 * depend on it): the markers name the FPDUs, at every grid phase, with and
 * without CRC, for a file (final) and a live caller. */
IW_TEST(test_sync_marker_pointed) {
    static stream s;
    for (uint32_t phase = 0; phase < 512; phase += 4 * 13) {
        for (int crc = 0; crc < 2; crc++) {
            memset(&s, 0, sizeof s);
            s.flags = IW_MPA_MARKERS | (crc ? IW_MPA_CRC : 0);
            s.pos = 8192 + phase;
            put_fpdus(&s, 7, 500);
            /* The capture starts 10 octets into FPDU 0; segments of 1460. */
            size_t from = 10;
            uint64_t c[16];
            size_t nc = 0;
            for (size_t o = 0; o < s.len - from; o += 1460)
                c[nc++] = o;
            iw_mpa_sync_res r;
            for (int final = 0; final < 2; final++) {
                iw_mpa_sync_cfg cfg = {IW_DF_AUTO, IW_DF_AUTO, false, 0};
                size_t first = 0;
                CHECK_EQ(iw_mpa_sync_probe(s.buf + from, s.len - from, final, c, nc, &first, &cfg,
                                           scratch, &r),
                         IW_MPA_SYNC_FOUND);
                /* FPDU 1 is the first whole one; a marker names it or one
                 * after it that it chains onto. */
                CHECK_EQ(r.off, s.starts[1] - from);
                CHECK(r.markers);
                CHECK_EQ(r.pos % 512, (8192 + phase + (uint32_t)s.starts[1]) % 512);
                CHECK_EQ(r.crc, crc == 1);
            }
            /* CRC required: only the CRC stream holds. */
            iw_mpa_sync_cfg on = {IW_DF_AUTO, IW_DF_ON, false, 0};
            size_t first = 0;
            CHECK_EQ(iw_mpa_sync_probe(s.buf + from, s.len - from, true, c, nc, &first, &on,
                                       scratch, &r),
                     crc ? IW_MPA_SYNC_FOUND : IW_MPA_SYNC_NONE);
            /* Markers off: a marker reading is never given. */
            iw_mpa_sync_cfg off = {IW_DF_OFF, IW_DF_AUTO, false, 0};
            first = 0;
            CHECK(iw_mpa_sync_probe(s.buf + from, s.len - from, true, c, nc, &first, &off, scratch,
                                    &r) != IW_MPA_SYNC_FOUND ||
                  !r.markers);
        }
    }
}

/* 1-octet segments, no CRC, markers (pcaps/cut-v1-markers-nocrc.pcap):
 * every octet is a candidate; the first FPDU boundary is found, and the
 * same from a capture that starts inside the first FPDU. */
IW_TEST(test_sync_one_octet_segments) {
    static stream s;
    static uint64_t c[16384];
    memset(&s, 0, sizeof s);
    s.flags = IW_MPA_MARKERS;
    s.pos = 0;
    put_fpdus(&s, 4, 700); /* about 730 octets each: 2048 octets hold < 4 */
    for (size_t i = 0; i < s.len; i++)
        c[i] = i;
    iw_mpa_sync_res r;
    CHECK_EQ(probe(&s, s.len, true, c, s.len, IW_DF_AUTO, IW_DF_AUTO, &r), IW_MPA_SYNC_FOUND);
    CHECK_EQ(r.off, 0);
    CHECK(r.markers);
    CHECK(!r.crc);
    CHECK_EQ(r.fpdus, 4u);
    /* From inside FPDU 0 to inside FPDU 3: two whole FPDUs, too few for
     * the four-FPDU rule; their markers decide. */
    size_t from = 9, to = s.len - 5;
    iw_mpa_sync_cfg cfg = {IW_DF_AUTO, IW_DF_AUTO, false, 0};
    size_t first = 0;
    CHECK_EQ(
        iw_mpa_sync_probe(s.buf + from, to - from, true, c, to - from, &first, &cfg, scratch, &r),
        IW_MPA_SYNC_FOUND);
    CHECK_EQ(r.off, s.starts[1] - from);
    CHECK(r.markers);
    CHECK_EQ(r.pos % 512, s.starts[1] % 512);
    /* A live caller holding only the first 600 octets of FPDU 1's segment
     * run is not told anything yet. */
    first = 0;
    CHECK(iw_mpa_sync_probe(s.buf + from, (size_t)s.starts[1] + 600 - from, false, c, 0, &first,
                            &cfg, scratch, &r) != IW_MPA_SYNC_FOUND);
}

/* One marker is not enough without a CRC: an FPDU with a single marker,
 * otherwise valid, in octets that chain no further. */
IW_TEST(test_sync_single_marker_not_enough) {
    static stream s;
    memset(&s, 0, sizeof s);
    s.flags = IW_MPA_MARKERS;
    s.pos = 512 - 100; /* a marker 100 octets into FPDU 0 */
    put_fpdus(&s, 1, 200);
    CHECK(s.len < 412);
    iw_mpa_sync_res r;
    uint64_t c0 = 7; /* not a boundary */
    CHECK_EQ(probe(&s, s.len, true, &c0, 1, IW_DF_AUTO, IW_DF_AUTO, &r), IW_MPA_SYNC_NONE);
    /* With its CRC it holds. */
    memset(&s, 0, sizeof s);
    s.flags = IW_MPA_MARKERS | IW_MPA_CRC;
    s.pos = 512 - 100;
    put_fpdus(&s, 1, 200);
    CHECK_EQ(probe(&s, s.len, true, &c0, 1, IW_DF_AUTO, IW_DF_AUTO, &r), IW_MPA_SYNC_FOUND);
    CHECK_EQ(r.off, 0);
    CHECK(r.crc);
    CHECK_EQ(r.pos % 512, 512 - 100);
}

/* Garbage with marker-shaped octets: random streams, sparse streams (mostly
 * zero, where RESERVED is 0 everywhere), and streams with a period of 512
 * (where the same marker repeats at every grid point), each with every
 * octet a candidate (1-octet segments): nothing is found. */
IW_TEST(test_sync_garbage_markers) {
    static stream s;
    static uint64_t c[16384];
    uint64_t seed = 11;
    unsigned found = 0;
    for (int round = 0; round < 30; round++) {
        memset(&s, 0, sizeof s);
        s.len = 3000 + (size_t)(iw_test_rand(&seed) % 9000);
        int kind = round % 3;
        for (size_t i = 0; i < s.len; i++) {
            uint8_t x = (uint8_t)iw_test_rand(&seed);
            if (kind == 1)
                x = (iw_test_rand(&seed) % 8) ? 0 : x;
            if (kind == 2 && i >= 512)
                x = s.buf[i - 512];
            s.buf[i] = x;
        }
        if (kind == 2) {
            /* Plant a marker (RESERVED 0, FPDUPTR 8) and a version-1
             * DDP/RDMAP header it points at, repeated every 512 octets. */
            for (size_t g = 64; g + 4 <= s.len; g += 512) {
                s.buf[g] = s.buf[g + 1] = 0;
                s.buf[g + 2] = 0;
                s.buf[g + 3] = 8;
                s.buf[g - 8 + 2] = 0x41;
                s.buf[g - 8 + 3] = 0x43;
            }
        }
        for (size_t i = 0; i < s.len; i++)
            c[i] = i;
        iw_mpa_sync_res r;
        for (int final = 0; final < 2; final++)
            if (probe(&s, s.len, final, c, s.len, IW_DF_AUTO, IW_DF_AUTO, &r) == IW_MPA_SYNC_FOUND)
                found++;
    }
    CHECK_EQ(found, 0);
}

/* A stream with CRCs whose first FPDUs are damaged reads like one without
 * CRCs; the CRC fields tell them apart (what senders without CRCs write
 * there is zero in practice). A reading without CRCs is taken from zero
 * fields, or from fields that are not zero only when the chain holds as
 * far as it is followed; and never once a CRC in it verifies. */
static void damage_payloads(stream *s, size_t upto) {
    for (size_t i = 0; i < upto; i++)
        s->buf[s->starts[i] + 40] ^= 0x5a; /* past the headers, before any marker */
}

static void put_marked(stream *s, unsigned flags, unsigned count) {
    memset(s, 0, sizeof *s);
    s->flags = flags;
    s->pos = 300;
    put_fpdus(s, count, 600); /* at least one marker in each */
}

IW_TEST(test_sync_crc_field_evidence) {
    static stream s;
    iw_mpa_sync_res r;
    /* Two FPDUs with CRCs, both damaged: no reading. */
    put_marked(&s, IW_MPA_MARKERS | IW_MPA_CRC, 2);
    damage_payloads(&s, 2);
    CHECK_EQ(probe(&s, s.len, true, s.starts, 1, IW_DF_AUTO, IW_DF_AUTO, &r), IW_MPA_SYNC_NONE);
    CHECK_EQ(probe(&s, s.len, false, s.starts, 1, IW_DF_AUTO, IW_DF_AUTO, &r), IW_MPA_SYNC_MORE);
    /* The same without CRCs (fields zero): markers, CRCs off. */
    put_marked(&s, IW_MPA_MARKERS, 2);
    CHECK_EQ(probe(&s, s.len, true, s.starts, 1, IW_DF_AUTO, IW_DF_AUTO, &r), IW_MPA_SYNC_FOUND);
    CHECK(r.markers);
    CHECK(!r.crc);
    CHECK_EQ(r.off, 0);
    /* Without CRCs, fields not zero: two FPDUs are not enough ... */
    for (size_t i = 1; i <= s.n; i++)
        s.buf[(i < s.n ? s.starts[i] : s.len) - 1] = 0x77;
    CHECK_EQ(probe(&s, s.len, true, s.starts, 1, IW_DF_AUTO, IW_DF_AUTO, &r), IW_MPA_SYNC_NONE);
    /* (unless CRCs are known to be off: then the fields say nothing) */
    CHECK_EQ(probe(&s, s.len, true, s.starts, 1, IW_DF_AUTO, IW_DF_OFF, &r), IW_MPA_SYNC_FOUND);
    CHECK_EQ(r.off, 0);
    /* ... a chain followed to its limit is. */
    put_marked(&s, IW_MPA_MARKERS, 9);
    for (size_t i = 1; i <= s.n; i++)
        s.buf[(i < s.n ? s.starts[i] : s.len) - 1] = 0x77;
    CHECK_EQ(probe(&s, s.len, true, s.starts, 1, IW_DF_AUTO, IW_DF_AUTO, &r), IW_MPA_SYNC_FOUND);
    CHECK(r.markers);
    CHECK(!r.crc);
    CHECK_EQ(r.off, 0);
    /* With CRCs and the first two damaged: the third, CRC verified, not a
     * reading without CRCs from the first. */
    put_marked(&s, IW_MPA_MARKERS | IW_MPA_CRC, 6);
    damage_payloads(&s, 2);
    CHECK_EQ(probe(&s, s.len, true, s.starts, 1, IW_DF_AUTO, IW_DF_AUTO, &r), IW_MPA_SYNC_FOUND);
    CHECK(r.crc);
    CHECK(r.markers);
    CHECK_EQ(r.off, s.starts[2]);
    CHECK_EQ(probe(&s, s.len, false, s.starts, 1, IW_DF_AUTO, IW_DF_AUTO, &r), IW_MPA_SYNC_FOUND);
    CHECK_EQ(r.off, s.starts[2]);
}

IW_TEST_MAIN("iw_mpa_sync", IW_CASE(test_sync_crc_no_markers),
             IW_CASE(test_sync_markers_every_phase), IW_CASE(test_sync_without_crc),
             IW_CASE(test_sync_random_octets),
             IW_CASE(test_sync_no_marker_verdict_from_one_segment),
             IW_CASE(test_sync_boundary_walk), IW_CASE(test_sync_after_gap_known_grid),
             IW_CASE(test_sync_marker_pointed), IW_CASE(test_sync_one_octet_segments),
             IW_CASE(test_sync_single_marker_not_enough), IW_CASE(test_sync_garbage_markers),
             IW_CASE(test_sync_crc_field_evidence))
