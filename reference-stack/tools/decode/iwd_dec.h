/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwd_dec: one direction of an iWARP byte stream through libiwarp's
 * deframer and iw_rdmap_decode, into output records with verdicts. Shared by
 * iwarp-decode's one-stream mode (a file or stdin) and its capture mode (one
 * per TCP direction). Judging happens in the library; this only combines the
 * deframer's verdict with the ULPDU's, marks what follows a non-ok FPDU
 * (RFC 5041 §7.1, RFC 5040 §5.4) and counts. */
#ifndef IWD_DEC_H
#define IWD_DEC_H

#include <iwarp/iwarp.h>

#include "iwd_print.h"

/* One record, before it is counted: the callback may set r->verdict (a
 * stateful verdict where the stateless one is ok) and r->shadow. */
typedef void (*iwd_dec_emit)(void *ctx, iwd_rec *r);

typedef struct iwd_dec {
    iw_deframer *df; /* large: allocated by iwd_dec_init */
    iw_df_cfg cfg;
    bool auto_start; /* choose the start from the first octets (one-stream mode) */
    bool started;
    uint8_t pre[8]; /* octets held until the start can be chosen */
    size_t npre;
    uint64_t bytes;      /* octets fed */
    uint64_t base;       /* added to every offset (capture mode: where this deframer began) */
    uint64_t consumed;   /* octets the current deframer has consumed */
    bool pause_after_rr; /* stop after an accepted MPA Request/Reply (capture mode) */
    bool paused;
    bool exited; /* MPA exited by the peer's reject: octets are only counted */
    uint64_t exit_off, exit_len;
    bool dropped; /* an FPDU had a non-ok verdict: a receiver drops what follows */
    bool any_bad;
    bool internal_error;
    bool finished;
    bool has_lost_end; /* iwd_dec_finish_at: the LOST record ends at lost_end */
    uint64_t lost_end;
    iwd_counts counts;
    iw_rdmap_msg msg;
    iwd_dec_emit emit;
    void *ctx;
} iwd_dec;

/* Returns 0, or -1 when out of memory. */
int iwd_dec_init(iwd_dec *d, const iw_df_cfg *cfg, bool auto_start, iwd_dec_emit emit, void *ctx);
void iwd_dec_free(iwd_dec *d);

/* Feed octets. Returns how many were consumed: all of them, unless the
 * decoder paused after an MPA frame (pause_after_rr); the caller holds the
 * rest and later calls iwd_dec_resume or iwd_dec_full_operation. */
size_t iwd_dec_feed(iwd_dec *d, const uint8_t *p, size_t n);

/* After a pause: go on with the same deframer (its auto rules) ... */
void iwd_dec_resume(iwd_dec *d);
/* ... or enter Full Operation at the next octet with these modes (the
 * direction's markers and CRC as negotiated by both MPA frames). */
void iwd_dec_full_operation(iwd_dec *d, iw_df_mode markers, iw_df_mode crc);
/* ... or stop framing: MPA exited (the peer rejected, RFC 5044 §7.1.2 rule
 * 3). The octets that follow are reported as one framing_lost record. */
void iwd_dec_exit(iwd_dec *d);

/* End of input: incomplete frame, framing_lost. Idempotent. */
void iwd_dec_finish(iwd_dec *d);
/* The same, after framing was lost and found again at input offset `end`
 * (capture mode): the framing_lost record covers the octets up to there
 * (none: no record), whatever was fed after them. */
void iwd_dec_finish_at(iwd_dec *d, uint64_t end);

/* True when the decoder only counts octets (framing lost or MPA exited). */
bool iwd_dec_lost(const iwd_dec *d);

#endif
