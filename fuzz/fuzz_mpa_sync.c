/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Mid-stream FPDU synchronisation (<iwarp/mpa_sync.h>), the one the plugin
 * and iwarp-decode share.
 *
 * Input: [mode][pos0: 4][ncands][ncands x cand: 2][data...]
 *   mode bits 0-1 markers (0 auto, 1 off, 2 on), 2-3 crc, 4 have_pos,
 *   5 final. Candidates are offsets into data (big-endian), sorted here.
 * Invariants: no read outside data (a heap block that ends at its end);
 * a FOUND answer names a candidate inside the data at or after *first, or
 * (markers) an FPDU a marker in it names, which decodes with its markers
 * right,
 * honours a forced marker mode and a known grid, and its first FPDU
 * decodes with the answer's modes (its CRC verifies when res.crc); *first
 * only grows; the boundary walk returns SIZE_MAX or a boundary at or after
 * its target, and the found offset itself for target = off. */
#include <iwarp/iwarp.h>

#include "fuzz.h"

#define MAX_CANDS 32

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static uint8_t scratch[IW_MPA_SYNC_SCRATCH];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_in in = {data, size};
    uint8_t mode = fuzz_u8(&in);
    iw_mpa_sync_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    static const iw_df_mode modes[4] = {IW_DF_AUTO, IW_DF_OFF, IW_DF_ON, IW_DF_AUTO};
    cfg.markers = modes[mode & 3];
    cfg.crc = modes[(mode >> 2) & 3];
    cfg.have_pos = mode & 0x10;
    bool final = mode & 0x20;
    cfg.pos0 = fuzz_u32(&in);
    size_t nc = fuzz_u8(&in) % (MAX_CANDS + 1);
    uint64_t cands[MAX_CANDS];
    for (size_t i = 0; i < nc; i++)
        cands[i] = fuzz_u16(&in);
    qsort(cands, nc, sizeof *cands, cmp_u64);

    size_t len = in.n;
    uint8_t *buf = (uint8_t *)malloc(len ? len : 1);
    FUZZ_CHECK(buf != NULL);
    if (len)
        memcpy(buf, in.p, len);

    size_t first = 0;
    iw_mpa_sync_res res;
    iw_mpa_sync_status st =
        iw_mpa_sync_probe(buf, len, final, cands, nc, &first, &cfg, scratch, &res);
    FUZZ_CHECK(st == IW_MPA_SYNC_MORE || st == IW_MPA_SYNC_FOUND || st == IW_MPA_SYNC_NONE);
    FUZZ_CHECK(first <= nc);
    if (st == IW_MPA_SYNC_FOUND) {
        bool named = false;
        for (size_t i = first; i < nc; i++)
            named |= cands[i] == res.off;
        FUZZ_CHECK(named || res.markers);
        FUZZ_CHECK(res.off < len);
        FUZZ_CHECK(res.fpdus >= 1);
        if (cfg.markers == IW_DF_OFF)
            FUZZ_CHECK(!res.markers);
        if (cfg.markers == IW_DF_ON)
            FUZZ_CHECK(res.markers);
        if (cfg.have_pos && res.markers)
            FUZZ_CHECK(res.pos == cfg.pos0 + (uint32_t)res.off);
        if (cfg.crc == IW_DF_ON)
            FUZZ_CHECK(res.crc);
        if (res.fpdus >= 1) {
            size_t off = (size_t)res.off;
            size_t total = iw_mpa_fpdu_len(buf + off, len - off, res.pos, res.markers);
            FUZZ_CHECK(total > 0 && total <= len - off);
            iw_mpa_fpdu f;
            iw_verdict v;
            unsigned flags = (res.markers ? IW_MPA_MARKERS : 0) | IW_MPA_CRC;
            iw_ssize r = iw_mpa_fpdu_decode(&f, buf + off, total, res.pos, flags, scratch,
                                            sizeof scratch, &v);
            FUZZ_CHECK(r >= 0 || r == IW_ERR_PROTO);
            if (!named)
                FUZZ_CHECK(f.marker_ok);
            if (res.crc)
                FUZZ_CHECK(f.crc == IW_CRC_GOOD);
        }
        FUZZ_CHECK(iw_mpa_sync_boundary(buf, len, &res, (size_t)res.off, NULL) == res.off);
        size_t prev = (size_t)res.off;
        for (size_t t = (size_t)res.off; t <= len; t += 1 + len / 16) {
            uint32_t pos;
            size_t b = iw_mpa_sync_boundary(buf, len, &res, t, &pos);
            if (b == SIZE_MAX)
                break;
            FUZZ_CHECK(b >= t && b >= prev);
            prev = b;
        }
    }
    /* Asked again from where it left off: same answer, *first never shrinks. */
    size_t again = first;
    iw_mpa_sync_res res2;
    iw_mpa_sync_status st2 =
        iw_mpa_sync_probe(buf, len, final, cands, nc, &again, &cfg, scratch, &res2);
    FUZZ_CHECK(st2 == st && again >= first);
    if (st == IW_MPA_SYNC_FOUND)
        FUZZ_CHECK(res2.off == res.off && res2.markers == res.markers && res2.pos == res.pos);
    free(buf);
    return 0;
}
