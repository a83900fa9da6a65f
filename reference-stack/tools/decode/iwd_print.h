/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwd_print: iwarp-decode's output, one record per frame, as JSON lines or
 * aligned text. Formatting only: every field printed here was decoded and
 * judged by libiwarp (iw_deframer_*, iw_rdmap_decode). */
#ifndef IWD_PRINT_H
#define IWD_PRINT_H

#include <iwarp/iwarp.h>
#include <stdio.h>

#include "iw_jsonw.h"

/* Capture mode: where a record comes from. Printed before the record's own
 * fields (JSON) or as leading columns (text). */
typedef struct iwd_tag {
    unsigned stream;       /* TCP connection, in order of first appearance */
    const char *src, *dst; /* "ip:port" */
    const char *dir;       /* "c2s", "s2c", "i2r", "r2i", "a2b", "b2a"; NULL: none */
    uint64_t frame;        /* pcap frame number (1-based); 0: none */
    uint64_t last_frame;   /* frame holding the record's last octet; 0: frame */
    int64_t ts_sec;        /* the frame's timestamp */
    uint32_t ts_nsec;
    bool have_seq;
    uint32_t tcp_seq; /* TCP sequence number of the record's first octet */
} iwd_tag;

/* One output record: a frame from the deframer plus what the tool learnt
 * about it. */
typedef struct iwd_rec {
    const iw_frame *fr;
    const iw_rdmap_msg *msg; /* FPDU: the ULPDU as decoded by iw_rdmap_decode */
    bool ddp_ok;             /* msg holds a DDP header (the ULPDU was long enough) */
    bool msg_ok;             /* iw_rdmap_decode accepted the segment */
    iw_verdict verdict;      /* the frame's final verdict */
    bool after_term;         /* follows an FPDU with a non-ok verdict */
    const iwd_tag *tag;      /* capture mode; NULL for one stream */
    /* libiwarp's iw_shadow on this frame (stateful analysis), or NULL. When
     * the stateless verdict was ok and the shadow gives one, verdict is the
     * shadow's. */
    const iw_shadow_result *shadow;
} iwd_rec;

/* Capture-mode records that do not come from the deframer. */
typedef enum iwd_ev_type {
    IWD_EV_TCP_GAP = 1,
    IWD_EV_TCP_CONFLICT,
    IWD_EV_TCP_OOO,
    IWD_EV_UNSYNCED,
    IWD_EV_NOT_IWARP
} iwd_ev_type;

typedef struct iwd_event {
    iwd_ev_type type;
    uint64_t offset;    /* first octet concerned (direction offset) */
    uint64_t len;       /* GAP: octets missing; CONFLICT: span; OOO, UNSYNCED: octets */
    uint64_t held;      /* GAP: octets held past the gap when it became final */
    uint64_t expected;  /* OOO: the next in-order offset */
    uint64_t differ;    /* CONFLICT: octets that differ */
    const char *cause;  /* GAP: keyword */
    const char *reason; /* GAP, UNSYNCED, NOT_IWARP: text */
    uint64_t segments;  /* NOT_IWARP: payload segments, both directions */
} iwd_event;

typedef struct iwd_counts {
    uint64_t frames; /* MPA frames and FPDUs */
    uint64_t ok, term, close;
    uint64_t after_term; /* records after the first non-ok FPDU verdict */
    uint64_t lost, incomplete;
    uint64_t fpdus;
    bool markers, crc; /* the modes the deframer settled on (last FPDU) */
} iwd_counts;

/* dst += src (the modes: src's, when it saw an FPDU). */
void iwd_counts_add(iwd_counts *dst, const iwd_counts *src);

typedef struct iwd_out {
    FILE *f;
    bool json;
    bool payload; /* --payload */
    iw_jw j;
} iwd_out;

void iwd_out_init(iwd_out *o, FILE *f, bool json, bool payload);
void iwd_out_record(iwd_out *o, const iwd_rec *r);
void iwd_out_event(iwd_out *o, const iwd_tag *tag, const iwd_event *e);
/* Text mode only: the closing summary line. */
void iwd_out_summary(iwd_out *o, const iwd_counts *c, uint64_t bytes);
/* Text mode only, capture mode: a stream's first line. */
void iwd_out_stream_header(iwd_out *o, unsigned stream, const char *dir0, const char *src0,
                           const char *dst0, const char *dir1);

#endif
