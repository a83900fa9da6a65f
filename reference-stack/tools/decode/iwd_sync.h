/* iwd_sync: where does FPDU framing start in a direction captured without
 * its MPA startup? iwarp-decode's capture mode asks this for every direction
 * that does not begin with an MPA key. Pure: it looks at the direction's
 * first octets and at the offsets where TCP segments began (candidates:
 * senders start segments at FPDU boundaries, RFC 5044 §5.1), and answers
 * with a boundary, the marker grid phase and whether CRCs verify, or "no
 * FPDU here", or "need more octets".
 *
 * At each candidate every reading is tried: no markers, and markers at each
 * of the 128 grid phases an FPDU can start at (FPDUs are 4-aligned on the
 * grid, §4.1). A reading is followed along the chain of FPDUs its
 * ULPDU_Lengths give (libiwarp's iw_mpa_fpdu_decode and iw_rdmap_decode do
 * all the work):
 *
 *   strong: the first FPDU's CRC verifies and its DDP and RDMAP versions
 *           are 1. With markers the chain must contain a marker, all with
 *           correct FPDUPTRs; without, it must span 512 octets (where a
 *           marker would have been), end at a bad FPDU, or reach the end of
 *           the data. A marker reading that holds beats the unmarked one.
 *   weak:   (no CRC; not with --crc) four FPDUs in a row decode as DDP/RDMAP
 *           with no verdict (or at least two that end exactly where the
 *           direction ends), with the same marker rules.
 *
 * Random octets pass the strong test with a probability of about 2^-36 per
 * reading and offset, the weak one about 2^-32 (four headers of about 2^-8
 * each); see docs/iwarp-decode.md. */
#ifndef IWD_SYNC_H
#define IWD_SYNC_H

#include <iwarp/iwarp.h>

typedef struct iwd_sync_cfg {
    iw_df_mode markers; /* ON/OFF: only those readings */
    iw_df_mode crc;     /* ON: strong readings only */
    bool have_pos;      /* --stream-offset: the grid position of buf[0] is known */
    uint32_t pos0;
} iwd_sync_cfg;

typedef enum iwd_sync_status {
    IWD_SYNC_MORE = 0, /* undecided until more octets arrive */
    IWD_SYNC_FOUND,
    IWD_SYNC_NONE /* no candidate holds an FPDU boundary */
} iwd_sync_status;

typedef struct iwd_sync_res {
    uint64_t off; /* offset of the first FPDU (its leading marker, if any) */
    bool markers;
    uint32_t pos;   /* grid position of off (meaningful with markers) */
    bool crc;       /* CRCs verified: decode with CRC on */
    unsigned fpdus; /* FPDUs that agreed */
} iwd_sync_res;

#define IWD_SYNC_SCRATCH IW_MPA_ULPDU_MAX

/* buf holds len octets from offset 0; cands[*first..ncands) are candidate
 * offsets in increasing order (candidates before *first were rejected by an
 * earlier call and are skipped; *first is advanced past rejected ones).
 * `final`: no more octets will come. scratch: IWD_SYNC_SCRATCH octets. */
iwd_sync_status iwd_sync_probe(const uint8_t *buf, size_t len, bool final, const uint64_t *cands,
                               size_t ncands, size_t *first, const iwd_sync_cfg *cfg,
                               uint8_t *scratch, iwd_sync_res *res);

#endif
