/* SPDX-License-Identifier: GPL-2.0-or-later */
/* FPDU codec with markers, RFC 5044 §4.1-4.4 (iw_mpa_fpdu_decode/encode).
 *
 * Input: [flags][pos: 4][FPDU wire bytes...]
 *   flags bit 0: markers, bit 1: CRC; pos is the grid position of the first
 *   wire octet (big-endian), any value including unaligned and wrapping.
 * Invariants:
 *  - the decoder's lengths agree with iw_mpa_fpdu_len/_wire_len, it never
 *    reads past the FPDU, and one octet less is "need more";
 *  - re-encoding the decoded ULPDU at the same pos with the same flags gives
 *    an FPDU of the same wire length that decodes cleanly to the same ULPDU;
 *  - when the input was well-formed (CRC good or, without CRCs, zero; every
 *    marker right, reserved zero, low FPDUPTR bits zero; PAD zero), the
 *    re-encoding is byte-identical: the decoder drops nothing;
 *  - MULPDU (§4.5) sizes an FPDU that fits in EMSS (pos doubles as EMSS). */
#include <iwarp/crc32c.h>
#include <iwarp/mpa.h>

#include "fuzz.h"

/* Marker-split ULPDUs are gathered here. */
static uint8_t scratch[IW_MPA_ULPDU_MAX];
static uint8_t scratch2[IW_MPA_ULPDU_MAX];
static uint8_t out[IW_MPA_FPDU_WIRE_MAX];

#define DIRTY_NOTES                                                                                \
    (IW_NOTE(FPDU_PAD_NONZERO) | IW_NOTE(MARKER_RES_NONZERO) | IW_NOTE(MARKER_PTR_LOW_BITS))

/* RFC 5044 §4.5: an FPDU carrying MULPDU octets fits in EMSS, markers
 * included, wherever a (4-aligned) FPDU starts - unless MULPDU was clamped
 * to its floor of 128. */
static void check_mulpdu(uint32_t emss, uint32_t pos, bool markers) {
    uint32_t m = iw_mpa_mulpdu(emss, markers);
    FUZZ_CHECK(m >= IW_MPA_MULPDU_MIN && m <= IW_MPA_MULPDU_MAX);
    FUZZ_CHECK(!markers || m <= iw_mpa_mulpdu(emss, false));
    if (m > IW_MPA_MULPDU_MIN)
        FUZZ_CHECK(iw_mpa_fpdu_wire_len(m, pos & ~3u, markers) <= emss);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_in in = {data, size};
    unsigned flags = fuzz_u8(&in) & (IW_MPA_MARKERS | IW_MPA_CRC);
    uint32_t pos = fuzz_u32(&in);
    bool markers = (flags & IW_MPA_MARKERS) != 0;
    const uint8_t *buf = in.p;
    size_t len = in.n;
    check_mulpdu(pos, pos, markers); /* pos doubles as an EMSS */

    iw_mpa_fpdu f, g;
    iw_verdict v, v2;
    iw_ssize r = iw_mpa_fpdu_decode(&f, buf, len, pos, flags, scratch, sizeof scratch, &v);
    size_t want = iw_mpa_fpdu_len(buf, len, pos, markers);
    if (r == IW_ERR_NEED_MORE) {
        FUZZ_CHECK(want == 0 || want > len);
        return 0;
    }
    FUZZ_CHECK(r == IW_ERR_PROTO || r > 0);
    FUZZ_CHECK(want > 0 && want <= len && f.wire_len == want);
    FUZZ_CHECK(want == iw_mpa_fpdu_wire_len(f.ulpdu_len, pos, markers));
    FUZZ_CHECK(f.wire_len <= IW_MPA_FPDU_WIRE_MAX);
    FUZZ_CHECK(f.pad_len == iw_mpa_pad_len(f.ulpdu_len));
    FUZZ_CHECK(f.ulpdu_len == 0 || f.ulpdu == scratch ||
               (f.ulpdu > buf && f.ulpdu + f.ulpdu_len <= buf + f.wire_len));
    if (r > 0) {
        FUZZ_CHECK((size_t)r == f.wire_len && v.kind == IW_VERDICT_OK && f.marker_ok);
        FUZZ_CHECK(f.crc == ((flags & IW_MPA_CRC) ? IW_CRC_GOOD : IW_CRC_UNCHECKED));
    } else {
        /* §4.4 first, then §8 code 3. */
        FUZZ_CHECK(v.kind == IW_VERDICT_TERM && v.rfc != NULL);
        FUZZ_CHECK(f.crc == IW_CRC_BAD ? v.term == IW_TERM_LLP_MPA_CRC
                                       : v.term == IW_TERM_LLP_MPA_MARKER && !f.marker_ok);
    }
    if (!markers)
        FUZZ_CHECK(f.n_markers == 0 && f.hdr_off == 0);

    /* Exactly the FPDU, in an exact-size block: the same answer. One octet
     * less: need more, and no read past it. */
    uint8_t *cp = fuzz_dup(buf, f.wire_len);
    FUZZ_CHECK(iw_mpa_fpdu_decode(&g, cp, f.wire_len, pos, flags, scratch2, sizeof scratch2, &v2) ==
               r);
    FUZZ_CHECK(g.ulpdu_len == f.ulpdu_len && g.crc_calc == f.crc_calc && g.crc_wire == f.crc_wire &&
               g.notes == f.notes && g.n_markers == f.n_markers && g.marker_ok == f.marker_ok &&
               g.bad_marker_off == f.bad_marker_off);
    FUZZ_CHECK(f.ulpdu_len == 0 || memcmp(g.ulpdu, f.ulpdu, f.ulpdu_len) == 0);
    FUZZ_CHECK(iw_mpa_fpdu_decode(&g, cp, f.wire_len - 1, pos, flags, scratch2, sizeof scratch2,
                                  &v2) == IW_ERR_NEED_MORE);
    free(cp);

    /* A gathered ULPDU needs scratch for all of it: one octet less is
     * refused (and, in an exact-size block, never overrun). */
    if (f.ulpdu_len && f.ulpdu == scratch) {
        uint8_t *small = malloc(f.ulpdu_len - 1u); /* >= 1: a gathered ULPDU spans a marker */
        FUZZ_CHECK(small != NULL);
        FUZZ_CHECK(iw_mpa_fpdu_decode(&g, buf, len, pos, flags, small, f.ulpdu_len - 1u, &v2) ==
                   IW_ERR_NOBUF);
        free(small);
    }

    /* Re-encode. Markers need a 4-aligned pos and a ULPDU within MULPDU's
     * ceiling (§4.1, §4.5); those are the only refusals allowed. */
    iw_ssize w = iw_mpa_fpdu_encode(out, sizeof out, pos, flags, f.ulpdu, f.ulpdu_len, NULL, 0);
    if (markers && ((pos & 3) || f.ulpdu_len > IW_MPA_MULPDU_MAX)) {
        FUZZ_CHECK(w == IW_ERR_INVALID_ARG);
        return 0;
    }
    FUZZ_CHECK(w > 0 && (size_t)w == f.wire_len);
    FUZZ_CHECK(iw_mpa_fpdu_decode(&g, out, (size_t)w, pos, flags, scratch2, sizeof scratch2, &v2) ==
               w);
    FUZZ_CHECK(g.ulpdu_len == f.ulpdu_len && g.marker_ok && (g.notes & DIRTY_NOTES) == 0);
    FUZZ_CHECK(f.ulpdu_len == 0 || memcmp(g.ulpdu, f.ulpdu, f.ulpdu_len) == 0);
    FUZZ_CHECK(g.crc_wire == ((flags & IW_MPA_CRC) ? g.crc_calc : 0));
    FUZZ_CHECK(g.n_markers == f.n_markers && g.hdr_off == f.hdr_off);

    bool clean = r > 0 && (f.notes & DIRTY_NOTES) == 0 &&
                 ((flags & IW_MPA_CRC) ? f.crc == IW_CRC_GOOD : f.crc_wire == 0);
    if (clean)
        FUZZ_CHECK(memcmp(out, buf, f.wire_len) == 0);

    /* One octet short: refused before anything is written. */
    memset(out, 0xA5, f.wire_len);
    FUZZ_CHECK(iw_mpa_fpdu_encode(out, f.wire_len - 1, pos, flags, f.ulpdu, f.ulpdu_len, NULL, 0) ==
               IW_ERR_NOBUF);
    for (size_t i = 0; i < f.wire_len; i++)
        FUZZ_CHECK(out[i] == 0xA5);
    return 0;
}
