/* iwd_print: iwarp-decode's output, one record per frame, as JSON lines or
 * aligned text. Formatting only: every field printed here was decoded and
 * judged by libiwarp (iw_deframer_*, iw_rdmap_decode). */
#ifndef IWD_PRINT_H
#define IWD_PRINT_H

#include <iwarp/iwarp.h>
#include <stdio.h>

#include "iw_jsonw.h"

/* One output record: a frame from the deframer plus what the tool learnt
 * about it. */
typedef struct iwd_rec {
    const iw_frame *fr;
    const iw_rdmap_msg *msg; /* FPDU: the ULPDU as decoded by iw_rdmap_decode */
    bool ddp_ok;             /* msg holds a DDP header (the ULPDU was long enough) */
    bool msg_ok;             /* iw_rdmap_decode accepted the segment */
    iw_verdict verdict;      /* the frame's final verdict */
    bool after_term;         /* follows an FPDU with a non-ok verdict */
} iwd_rec;

typedef struct iwd_counts {
    uint64_t frames;     /* MPA frames and FPDUs */
    uint64_t ok, term, close;
    uint64_t after_term; /* records after the first non-ok FPDU verdict */
    uint64_t lost, incomplete;
    uint64_t fpdus;
    bool markers, crc; /* the modes the deframer settled on (last FPDU) */
} iwd_counts;

typedef struct iwd_out {
    FILE *f;
    bool json;
    bool payload; /* --payload */
    iw_jw j;
} iwd_out;

void iwd_out_init(iwd_out *o, FILE *f, bool json, bool payload);
void iwd_out_record(iwd_out *o, const iwd_rec *r);
/* Text mode only: the closing summary line. */
void iwd_out_summary(iwd_out *o, const iwd_counts *c, uint64_t bytes);

#endif
