/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One direction through the deframer: see iwd_dec.h. */
#include "iwd_dec.h"

#include <stdlib.h>
#include <string.h>

int iwd_dec_init(iwd_dec *d, const iw_df_cfg *cfg, bool auto_start, iwd_dec_emit emit, void *ctx) {
    memset(d, 0, sizeof *d);
    d->df = malloc(sizeof *d->df);
    if (!d->df)
        return -1;
    d->cfg = *cfg;
    d->auto_start = auto_start;
    d->emit = emit;
    d->ctx = ctx;
    return 0;
}

void iwd_dec_free(iwd_dec *d) {
    free(d->df);
    d->df = NULL;
}

/* Offsets from the deframer count from where it began; the record's count
 * from the start of the input. */
static void dec_frame(iwd_dec *d, const iw_frame *in) {
    iw_frame fr = *in;
    fr.offset += d->base;
    fr.wire_off += d->base;
    if (fr.type == IW_FRAME_LOST && d->has_lost_end) {
        if (d->lost_end <= fr.offset)
            return; /* framing was found again where it was lost */
        fr.lost_len = d->lost_end - fr.offset;
        fr.wire_len = (size_t)fr.lost_len;
    }
    iwd_rec rec = {&fr, NULL, false, false, fr.verdict, d->dropped, NULL, NULL};
    if (fr.type == IW_FRAME_FPDU) {
        /* The deframer's verdict (CRC, markers) comes first; otherwise the
         * ULPDU's. Decode it either way, for display. */
        const iw_mpa_fpdu *f = &fr.fpdu;
        iw_verdict mv;
        iw_ssize rc = iw_rdmap_decode(&d->msg, f->ulpdu, f->ulpdu_len, &mv);
        if (rc >= 0)
            iw_rdmap_term_siw(&d->msg); /* Linux siw's Terminate layout, explained */
        rec.msg = &d->msg;
        rec.ddp_ok = f->ulpdu_len >= 1 && f->ulpdu_len >= iw_ddp_hdr_len(f->ulpdu[0]);
        rec.msg_ok = rc >= 0;
        if (rec.verdict.kind == IW_VERDICT_OK && rc < 0)
            rec.verdict = mv;
    }
    /* Decoding goes on from the stateless verdict; the callback may add
     * the shadow's (capture mode), which is what gets counted. */
    bool rr_accepted = rec.verdict.kind == IW_VERDICT_OK;
    d->emit(d->ctx, &rec);

    iwd_counts *c = &d->counts;
    if (fr.type == IW_FRAME_LOST)
        c->lost++;
    else if (fr.type == IW_FRAME_INCOMPLETE)
        c->incomplete++;
    else
        c->frames++;
    if (rec.verdict.kind == IW_VERDICT_TERM)
        c->term++;
    else if (rec.verdict.kind == IW_VERDICT_CLOSE)
        c->close++;
    else if (fr.type != IW_FRAME_LOST && fr.type != IW_FRAME_INCOMPLETE)
        c->ok++;
    if (rec.after_term)
        c->after_term++;
    if (fr.type == IW_FRAME_FPDU) {
        c->fpdus++;
        c->markers = fr.markers;
        c->crc = fr.crc_on;
    }
    if (rec.verdict.kind != IW_VERDICT_OK)
        d->any_bad = true;
    /* RFC 5041 §7.1, RFC 5040 §5.4: after the first error nothing more is
     * placed or delivered on this stream. */
    if (fr.type == IW_FRAME_FPDU && rec.verdict.kind != IW_VERDICT_OK)
        d->dropped = true;
    /* Capture mode: an accepted MPA frame; Full Operation's modes may come
     * from the other direction's frame. */
    if (d->pause_after_rr && (fr.type == IW_FRAME_MPA_REQUEST || fr.type == IW_FRAME_MPA_REPLY) &&
        rr_accepted && !(fr.rr.type == IW_MPA_REPLY && fr.rr.r))
        d->paused = true;
}

/* Returns octets consumed. */
static size_t dec_run(iwd_dec *d, const uint8_t *p, size_t n) {
    size_t used = 0;
    while (used < n && !d->internal_error && !d->paused) {
        iw_frame fr;
        iw_ssize r = iw_deframer_feed(d->df, p + used, n - used, &fr);
        if (r < 0 || (size_t)r > n - used || (r == 0 && fr.type == IW_FRAME_NONE)) {
            d->internal_error = true; /* breaks the deframer's contract */
            return n;
        }
        used += (size_t)r;
        d->consumed += (uint64_t)r;
        if (fr.type != IW_FRAME_NONE)
            dec_frame(d, &fr);
    }
    return d->internal_error ? n : used;
}

static size_t dec_start(iwd_dec *d) {
    if (d->auto_start) {
        /* RFC 5044 §7.1.1: both keys begin "MPA ID R". A shorter input is
         * judged on the octets it has. */
        static const char key_prefix[] = "MPA ID R";
        bool rr = d->npre > 0 && memcmp(d->pre, key_prefix, d->npre) == 0;
        d->cfg.start = rr ? IW_DF_START_RR : IW_DF_START_FPDU;
    }
    iw_deframer_init(d->df, &d->cfg);
    d->started = true;
    return dec_run(d, d->pre, d->npre);
}

size_t iwd_dec_feed(iwd_dec *d, const uint8_t *p, size_t n) {
    if (d->paused || d->finished || n == 0)
        return 0;
    if (d->exited) {
        d->bytes += n;
        d->exit_len += n;
        return n;
    }
    size_t taken = 0;
    if (!d->started) {
        if (!d->auto_start) {
            iw_deframer_init(d->df, &d->cfg);
            d->started = true;
        } else {
            size_t take = sizeof d->pre - d->npre;
            if (take > n)
                take = n;
            memcpy(d->pre + d->npre, p, take);
            d->npre += take;
            d->bytes += take;
            taken = take;
            if (d->npre < sizeof d->pre)
                return n;
            /* Capture mode never auto-starts, so the held octets cannot
             * end in a pause here. */
            dec_start(d);
        }
    }
    size_t used = dec_run(d, p + taken, n - taken);
    d->bytes += used;
    return taken + used;
}

void iwd_dec_resume(iwd_dec *d) { d->paused = false; }

void iwd_dec_full_operation(iwd_dec *d, iw_df_mode markers, iw_df_mode crc) {
    /* §4.3: the marker grid starts at the first octet of Full Operation. */
    d->base += d->consumed;
    d->consumed = 0;
    d->cfg.start = IW_DF_START_FPDU;
    d->cfg.markers = markers;
    d->cfg.crc = crc;
    d->cfg.stream_pos = 0;
    iw_deframer_init(d->df, &d->cfg);
    d->paused = false;
}

void iwd_dec_exit(iwd_dec *d) {
    d->paused = false;
    d->exited = true;
    d->exit_off = d->base + d->consumed;
}

bool iwd_dec_lost(const iwd_dec *d) {
    return d->exited || (d->started && d->df->state == IW_DF_LOST);
}

void iwd_dec_finish(iwd_dec *d) {
    if (d->finished)
        return;
    if (d->exited) {
        d->finished = true;
        if (d->exit_len) {
            iw_frame fr;
            memset(&fr, 0, sizeof fr);
            fr.type = IW_FRAME_LOST;
            fr.offset = fr.wire_off = d->exit_off - d->base;
            fr.lost_len = d->exit_len;
            fr.wire_len = (size_t)d->exit_len;
            fr.lost_why = IW_CLOSE_MPA_REJECTED;
            fr.verdict = iw_verdict_ok();
            dec_frame(d, &fr);
        }
        return;
    }
    if (!d->started) {
        if (d->auto_start)
            dec_start(d);
        else {
            iw_deframer_init(d->df, &d->cfg);
            d->started = true;
        }
    }
    d->paused = false;
    iw_frame fr;
    while (!d->internal_error && iw_deframer_finish(d->df, &fr))
        dec_frame(d, &fr);
    d->finished = true;
}

void iwd_dec_finish_at(iwd_dec *d, uint64_t end) {
    d->has_lost_end = true;
    d->lost_end = end;
    iwd_dec_finish(d);
}
