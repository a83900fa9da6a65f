/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The differential run shared by fuzz_diff and fuzz_diff_plugin: one FPDU
 * stream through the engine, the codecs and the shadow analysis, every
 * agreement between them checked (fuzz_diff_core.c; docs/fuzzing.md,
 * "fuzz_diff's precedence rule"), and a trace of what each side said about
 * each frame, for a harness to compare a further decoder with (the plugin).
 *
 * Input: [cfg][setup] then either the raw FPDU stream, or records
 * [flags][len:2][len octets of ULPDU] that the harness frames (so CRCs and
 * markers are right unless the flags say otherwise).
 *   cfg bit 0: the engine wants markers (the stream has them); bit 1: the
 *     engine's C bit; bit 2: the peer's C bit; bit 3: framed records (else
 *     raw); bit 4: the peer's Request is Rev 1; bits 5-7: IRD.
 *   setup bits 0-2: receive buffers of 256 octets posted; bit 3: feed
 *     through iw_conn_rx_iov/rx_commit (else iw_conn_recv); bit 4: the
 *     peer wants markers (the engine's output has them); bit 5: the
 *     engine's cut_through; bits 6-7: not read here (fuzz_diff_plugin's).
 *   record flags bit 0: bad CRC; bit 1: the first marker inside the FPDU
 *     points 4 octets off; bit 2: ULPDU_Length says 4 more than there is.
 * Built with the "diff" need of fuzz/fuzzers.txt (and "peer"). */
#ifndef IW_FUZZ_DIFF_CORE_H
#define IW_FUZZ_DIFF_CORE_H

#include <iwarp/shadow.h>

#include "fuzz_engine.h"

/* One frame the deframer found in the peer's stream after the startup,
 * fed to the engine on its own, and what the engine wrote in answer. */
typedef struct {
    size_t in_off, in_len;   /* its wire octets in fz_diff_trace.in */
    size_t out_off, out_len; /* the engine's answer in fz_diff_trace.out */
    iw_frame_type type;      /* IW_FRAME_FPDU, or a trailing IW_FRAME_INCOMPLETE */
    bool judged;             /* an FPDU, and the engine's stream had not ended before it */
    iw_verdict codec;    /* the codecs': the deframer's (CRC, markers), else iw_rdmap_decode's */
    bool codec_deferred; /* codec is deferred (iw_rdmap_msg.deferred): certain, but a
                              * stateful check may name the engine's Terminate first */
    unsigned opcode;     /* iw_rdmap_decode's (when the DDP header decoded) */
    iw_shadow_result shadow; /* the run's own shadow, before the engine answered */
    bool term_sent;          /* the engine terminated on this frame, with term */
    iw_term_info term;
    const char *term_rfc;
    bool term_received; /* a peer Terminate the engine took */
} fz_diff_step;

typedef struct {
    fz_bytes in;        /* the peer's stream: the MPA Request, then the frames */
    fz_bytes out;       /* the engine's: the MPA Reply, then its answers */
    size_t in_startup;  /* octets of the Request */
    size_t out_startup; /* octets the engine wrote before the first frame (the Reply) */
    fz_diff_step *v;
    size_t n;
    bool enhanced; /* RFC 6581 enhanced startup frames (the IRD is on the wire) */
    /* Per FPDU the engine sent, in order: 0, or the triple the shadow gave
     * it because the peer asked for it (a Read Response into a sink range
     * that wraps, fuzz_diff_core.c's sink_wraps()). */
    uint16_t *eng_excused;
    size_t eng_fpdus;
} fz_diff_trace;

/* Run one input; aborts (FUZZ_CHECK) on any disagreement between the
 * engine, the codecs and the shadow. t is filled in either way. */
void fz_diff_run(const uint8_t *data, size_t size, fz_diff_trace *t);
void fz_diff_trace_free(fz_diff_trace *t);

/* An engine triple t on a codec-clean frame of this opcode that a capture
 * shows the reason for (QN 1-3 MSNs, the IRD when the startup frames
 * carried it, a response nobody asked for): a capture analysis must give
 * it too. Anything else rests on registrations or posted buffers. */
bool fz_diff_shadow_must_see(unsigned opcode, uint16_t t, bool enhanced);
/* The untagged buffer checks of RFC 5041 §7.1 (1/2/2 - 1/2/5), which a
 * shadow verdict under IW_SHADOW_ASSUME_RECV_BUF may meet first. */
bool fz_diff_recv_buf_triple(uint16_t t);

#endif
