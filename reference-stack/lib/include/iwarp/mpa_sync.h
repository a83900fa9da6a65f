/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Mid-stream FPDU synchronisation: where does FPDU framing start in one
 * direction of a TCP stream captured without its MPA startup, or after a
 * capture gap? The one synchroniser of the project: iwarp-decode and the
 * Wireshark plugin both ask it, per direction, and nothing else.
 *
 * Pure and sans-I/O: the caller keeps the direction's octets (from some
 * offset 0) and the offsets where TCP segments began, which are the
 * candidates (senders start segments at FPDU boundaries, RFC 5044 §5.1; an
 * FPDU is a multiple of 4 octets from SeqStart, §4.1). The answer is a
 * boundary, the marker grid phase and whether CRCs verify, or "no FPDU
 * here", or "need more octets". Callers that cannot say `final` (a live
 * dissector) never get a decision that more octets could overturn: in
 * particular markers are never declared absent from a span that a marker
 * (every 512 octets, §4.3) need not have crossed.
 *
 * At each candidate every reading is tried: no markers, and markers at each
 * of the 128 grid phases an FPDU can start at (FPDUs are 4-aligned on the
 * grid, §4.1), or only the phase that a known grid position gives (after a
 * gap in a direction whose SeqStart is known). A reading is followed along
 * the chain of FPDUs its ULPDU_Lengths give (iw_mpa_fpdu_decode and
 * iw_rdmap_decode do all the work):
 *
 *   strong: the first FPDU's CRC verifies and its DDP and RDMAP versions
 *           are 1. With markers the chain must contain a marker, all with
 *           correct FPDUPTRs; without, it must span 512 octets (where a
 *           marker would have been), end at a bad FPDU, or reach the end of
 *           the data when `final`. A marker reading that holds beats the
 *           unmarked one.
 *   weak:   (no CRC; not with crc ON) four FPDUs in a row decode as
 *           DDP/RDMAP with no verdict (or, when `final`, at least two that
 *           end exactly where the data ends), with the same marker rules.
 *
 * A reading without CRC (weak, or marker below) also needs the CRC fields
 * of its first four FPDUs: none may verify, and unless all are zero (what
 * senders without CRCs write, though §4.1 allows any value) the chain must
 * hold as far as it is followed. Otherwise a stream with CRCs whose first
 * FPDUs were damaged would be read as one without.
 *
 * Segments need not start at FPDUs (RFC 5044 §5.1, Appendix A.4), so
 * with markers possible the stream's own markers name candidates too:
 * every octet is read once as a marker at a grid position, and one whose
 * RESERVED is 0 and FPDUPTR 4-aligned (both MUST on send, §4.2) names the
 * FPDU it points into, at a known grid position. Such a candidate holds
 *
 *   strong: as above, and the chain contains the marker that named it;
 *   marker: (no CRC; not with crc ON) FPDUs that decode as DDP/RDMAP
 *           contain the naming marker and at least one more, all pointing
 *           right (the second is fixed to 32 bits by the first).
 *
 * Both need the named FPDU whole, so more octets cannot overturn them: a
 * marker-named FPDU is taken even while an earlier candidate is undecided,
 * and the answer moves back to the earliest candidate (the caller's or a
 * marker-named one) whose FPDU chain lands exactly on it.
 *
 * Random octets pass the strong test with a probability of about 2^-36 per
 * reading and offset, the weak one about 2^-32 (four headers of about 2^-8
 * each), the marker-named ones about 2^-54 (strong) and 2^-58 (marker) per
 * octet; see docs/iwarp-decode.md. */
#ifndef IW_MPA_SYNC_H
#define IW_MPA_SYNC_H

#include <iwarp/mpa.h>

IW_BEGIN_DECLS

typedef struct iw_mpa_sync_cfg {
    iw_df_mode markers; /* ON/OFF: only those readings (with have_pos, or OFF, a
                           single reading needs no marker to rule others out) */
    iw_df_mode crc;     /* ON: strong readings only */
    bool have_pos;      /* the grid position of buf[0] is known (pos0) */
    uint32_t pos0;
} iw_mpa_sync_cfg;

typedef enum iw_mpa_sync_status {
    IW_MPA_SYNC_MORE = 0, /* undecided until more octets arrive */
    IW_MPA_SYNC_FOUND,
    IW_MPA_SYNC_NONE /* no candidate holds an FPDU boundary */
} iw_mpa_sync_status;

typedef struct iw_mpa_sync_res {
    uint64_t off; /* offset of the first FPDU (its leading marker, if any):
                     a candidate, or with markers one a marker names */
    bool markers;
    uint32_t pos;   /* grid position of off (meaningful with markers) */
    bool crc;       /* CRCs verified: decode with CRC on */
    unsigned fpdus; /* FPDUs that agreed */
} iw_mpa_sync_res;

#define IW_MPA_SYNC_SCRATCH IW_MPA_ULPDU_MAX

/* Candidates a caller offers. Segment starts always. After a gap or lost
 * framing in a direction whose grid is known and whose CRCs are on, also
 * every 4-aligned grid position: FPDUs are multiples of 4 octets from
 * SeqStart (RFC 5044 §4.1), a sender need not start segments at them
 * (§5.1), and only a verified CRC (the strong rule) can take one. */
static inline bool iw_mpa_sync_every4(const iw_mpa_sync_cfg *cfg) {
    return cfg->have_pos && cfg->crc == IW_DF_ON;
}
/* Candidates held per direction (callers compact rejected ones first). */
#define IW_MPA_SYNC_CANDS 4096

/* buf holds len octets from offset 0; cands[*first..ncands) are candidate
 * offsets (segment starts) in increasing order (candidates before *first were rejected by an
 * earlier call and are skipped; *first is advanced past rejected ones).
 * `final`: no more octets will come. scratch: IW_MPA_SYNC_SCRATCH octets. */
iw_mpa_sync_status iw_mpa_sync_probe(const uint8_t *buf, size_t len, bool final,
                                     const uint64_t *cands, size_t ncands, size_t *first,
                                     const iw_mpa_sync_cfg *cfg, uint8_t *scratch,
                                     iw_mpa_sync_res *res);

/* Walk the FPDU chain of a found reading (res) from res->off and return
 * the offset of the first FPDU boundary at or after `target` (a later
 * segment's start, where a caller that could not go back resumes), with
 * *pos its grid position. The boundary may lie past len (the last FPDU
 * walked need only have its ULPDU_Length in buf); SIZE_MAX when a header
 * before target is not in buf. Pure: reads only FPDU lengths. */
size_t iw_mpa_sync_boundary(const uint8_t *buf, size_t len, const iw_mpa_sync_res *res,
                            size_t target, uint32_t *pos);

IW_END_DECLS
#endif
