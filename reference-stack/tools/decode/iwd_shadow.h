/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwd_shadow: what iwarp-decode hands libiwarp's iw_shadow for one record,
 * and when, exactly as the Wireshark plugin hands it (dissector/
 * packet-iwarpkit-mpa.c, packet-iwarpkit-rdmap.c):
 *
 *   - an MPA Request/Reply that iw_mpa_rr_decode accepted: iw_shadow_mpa;
 *   - an FPDU: iw_shadow_fpdu with its stateless verdict as `pre` (the MPA
 *     CRC/marker verdict, else iw_rdmap_decode's) and no message when not
 *     even the DDP header decoded;
 *   - octets of a direction that could not be framed (framing lost, a TCP
 *     gap) once that direction's framing was known: iw_shadow_lost.
 *
 * The record's pointers are only valid during the deframer's callback, so a
 * record is copied into an iwd_sh_in (no pointer the shadow reads is kept).
 * The judging is the library's. */
#ifndef IWD_SHADOW_H
#define IWD_SHADOW_H

#include <iwarp/iwarp.h>

#include "iwd_print.h"

typedef enum { IWD_SH_NONE = 0, IWD_SH_MPA, IWD_SH_FPDU, IWD_SH_LOST } iwd_sh_kind;

typedef struct iwd_sh_in {
    uint8_t kind; /* iwd_sh_kind */
    bool has_m;   /* FPDU: the DDP header decoded */
    iw_verdict pre;
    size_t ulpdu_len;
    union {
        iw_mpa_rr rr;
        iw_rdmap_msg m;
    } u;
} iwd_sh_in;

/* What the shadow takes from record r, or kind NONE. *framed tracks whether
 * this direction's framing is known (Full Operation entered, or an FPDU
 * found mid-stream): a lost record before that tells the shadow nothing it
 * does not already assume (its state starts unknown). */
void iwd_sh_in_from_rec(iwd_sh_in *in, const iwd_rec *r, bool *framed);

/* A direction's octets were lost (TCP gap): LOST when its framing was known. */
void iwd_sh_in_lost(iwd_sh_in *in, bool framed);

/* Hand one input to the shadow (direction dir, frame id). res is set for
 * MPA and FPDU inputs. Returns 0, or a libiwarp error code. */
int iwd_sh_feed(iw_shadow *sh, unsigned dir, const iwd_sh_in *in, uint64_t id,
                iw_shadow_result *res);

/* The record's verdict with the shadow's result applied: a stateless verdict
 * other than ok stays; otherwise the shadow's, if any. */
iw_verdict iwd_sh_verdict(const iw_verdict *stateless, const iw_shadow_result *res);

/* Whether a result says anything worth keeping (a verdict, a note, a link
 * to an earlier frame, an RTR, or "not judged"). */
bool iwd_sh_says(const iw_shadow_result *res);

#endif
