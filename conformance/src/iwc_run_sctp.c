/* SPDX-License-Identifier: GPL-2.0-or-later */
/* DDP over SCTP (RFC 5043) in a case: the association (iwc_sctp.h), our
 * messages, the IUT's chunks put back in DDP-SSN order and judged, the
 * Session Control steps. Everything above the chunk (DDP segments, the
 * answers of a correct peer, the expectations) is the same code as over
 * MPA. See iwc_run_int.h. */
#include "iwc_run_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- the association ---- */

static void on_pkt(void *ctx, int dir, const uint8_t *p, size_t n) {
    run_cap_add(ctx, dir, IWC_CHUNK_DATA, p, n);
}

static void rx_chunk(run *r, uint32_t ppid, const uint8_t *p, size_t n);

static int held_find(const run *r, uint16_t ssn) {
    for (int i = 0; i < r->nahead; i++)
        if (r->ahead[i].ssn == ssn)
            return i;
    return -1;
}

/* Every DATA message: in DDP-SSN order to rx_chunk (RFC 5043 §10: chunks
 * are sent unordered, the DDP-SSN restores the sender's order). */
static void on_msg(void *ctx, uint32_t ppid, uint16_t sid, const uint8_t *p, size_t n) {
    run *r = ctx;
    r->rx_bytes += n;
    if (r->rx_lost)
        return;
    if (sid != 0)
        run_trace(r, 1, "the IUT sent on SCTP stream %u", sid);
    if (n < IW_SCTP_SSN_LEN) {
        run_fail(r, 0,
                 "the IUT sent a %zu-octet DATA chunk with PPID %u: shorter than its DDP-SSN "
                 "(RFC 5043 §5.2.1)",
                 n, ppid);
        r->rx_lost = true;
        return;
    }
    uint16_t ssn = (uint16_t)(p[0] << 8 | p[1]);
    switch (iw_sctp_ssn_place_of(r->ssn_rx, ssn, SCTP_WINDOW)) {
    case IW_SCTP_SSN_NEXT:
        r->ssn_rx++;
        rx_chunk(r, ppid, p, n);
        for (int i; !r->rx_lost && (i = held_find(r, r->ssn_rx)) >= 0;) {
            sctp_held h = r->ahead[i];
            r->ahead[i] = r->ahead[--r->nahead];
            r->ssn_rx++;
            rx_chunk(r, h.ppid, h.p, h.n);
            free(h.p);
        }
        return;
    case IW_SCTP_SSN_AHEAD: {
        if (held_find(r, ssn) >= 0) {
            run_fail(r, 0, "the IUT sent DDP-SSN %u twice (RFC 5043 §5.2.1)", ssn);
            return;
        }
        sctp_held *h = PUSH(r->ahead, r->nahead, r->capahead);
        if (!h || !(h->p = malloc(n))) {
            if (h)
                r->nahead--;
            return;
        }
        memcpy(h->p, p, n);
        h->n = n;
        h->ssn = ssn;
        h->ppid = ppid;
        return;
    }
    default:
        run_fail(r, 0,
                 "the IUT sent DDP-SSN %u where %u was due (RFC 5043 §5.2.1: DDP-SSNs start at 0 "
                 "and go up by one, no reuse, no gap)",
                 ssn, r->ssn_rx);
        return;
    }
}

static iwc_sctp_hooks hooks_of(run *r) {
    iwc_sctp_hooks h = {on_pkt, on_msg, r};
    return h;
}

static void cap_addrs(run *r, bool client) {
    iwc_capture *c = &r->res->cap;
    c->used = c->sctp = true;
    c->runner_is_client = client;
    c->t_start = iwc_wall_us();
    static const uint8_t synth[2][4] = {{10, 0, 0, 1}, {10, 0, 0, 2}};
    uint8_t ip[2][4];
    uint16_t port[2];
    bool ok = iwc_sctp_addrs(r->sctp, ip, port);
    for (int i = 0; i < 2; i++) {
        memcpy(c->ip[i], ok ? ip[i] : synth[i], 4);
        c->port[i] = ok ? port[i] : (uint16_t)(i ? 9899 : 50000);
    }
}

static bool assoc_settled(run *r) { return iwc_sctp_get_state(r->sctp) != IWC_SCTP_WAITING; }

/* The association is up and the IUT said DDP (RFC 5043 §5.1, §11.1). */
static int assoc_up(run *r, bool client) {
    uint64_t deadline = iwc_now_us() + (uint64_t)r->timeout_ms * 1000;
    while (!assoc_settled(r) && iwc_now_us() < deadline)
        iwc_sctp_service(r->sctp, 10);
    if (iwc_sctp_get_state(r->sctp) != IWC_SCTP_UP) {
        run_fail(r, 0, "no SCTP association with the IUT within %d ms%s", r->timeout_ms,
                 assoc_settled(r) ? " (it was refused or aborted)" : "");
        r->abort_steps = true;
        return -1;
    }
    cap_addrs(r, client);
    /* The indication comes with the association's first notifications. */
    uint32_t ind = 0;
    for (int i = 0; i < 10 && !iwc_sctp_adaptation(r->sctp, &ind); i++)
        iwc_sctp_service(r->sctp, 5);
    r->res->checks++;
    if (!iwc_sctp_adaptation(r->sctp, &ind) || ind != IW_SCTP_ADAPT_DDP) {
        run_fail(r, 0,
                 "the IUT's %s has %s (RFC 5043 §5.1: an Adaptation Layer Indication of "
                 "0x%08x for DDP)",
                 client ? "INIT-ACK" : "INIT",
                 iwc_sctp_adaptation(r->sctp, &ind) ? "another Adaptation Layer Indication"
                                                    : "no Adaptation Layer Indication",
                 IW_SCTP_ADAPT_DDP);
        r->abort_steps = true;
        return -1;
    }
    return 0;
}

int run_sctp_connect(run *r, uint16_t port) {
    char err[256];
    iwc_sctp_hooks h = hooks_of(r);
    if (iwc_sctp_open(&r->sctp, r->env->iut_host, port, false, &h, err, sizeof err) < 0) {
        run_error(r, 0, "SCTP to the IUT's listener %s:%u: %s", r->env->iut_host, port, err);
        return -1;
    }
    return assoc_up(r, true);
}

int run_sctp_listen(run *r, uint16_t *port) {
    char err[256];
    iwc_sctp_hooks h = hooks_of(r);
    if (iwc_sctp_open(&r->sctp, r->env->local_bind, r->env->local_port, true, &h, err, sizeof err) <
        0) {
        run_error(r, 0, "SCTP listener: %s", err);
        return -1;
    }
    *port = iwc_sctp_port(r->sctp);
    return 0;
}

int run_sctp_accept(run *r) { return assoc_up(r, false); }

void run_sctp_svc(run *r, int wait_ms) {
    iwc_sctp_service(r->sctp, wait_ms);
    iwc_sctp_state st = iwc_sctp_get_state(r->sctp);
    if (!r->eof && (st == IWC_SCTP_SHUT || st == IWC_SCTP_ABORTED)) {
        r->eof = true;
        r->rst = st == IWC_SCTP_ABORTED;
        run_trace(r, 2, "the SCTP association %s", r->rst ? "was aborted" : "was shut down");
    }
}

/* ---- our messages ---- */

/* held: u32 PPID, u16 stream, u8 ordered, u32 length, the octets. */
void run_sctp_queue(run *r, uint32_t ppid, uint16_t sid, bool ordered, const uint8_t *p, size_t n) {
    uint8_t h[11];
    memcpy(h, &ppid, 4);
    memcpy(h + 4, &sid, 2);
    h[6] = ordered;
    uint32_t l = (uint32_t)n;
    memcpy(h + 7, &l, 4);
    iwc_buf_add(&r->held, h, sizeof h);
    iwc_buf_add(&r->held, p, n);
}

void run_sctp_flush(run *r) {
    size_t off = 0;
    uint64_t deadline = iwc_now_us() + (uint64_t)r->timeout_ms * 1000;
    while (off + 11 <= r->held.len && !r->tx_dead) {
        uint32_t ppid, l;
        uint16_t sid;
        memcpy(&ppid, r->held.p + off, 4);
        memcpy(&sid, r->held.p + off + 4, 2);
        bool ordered = r->held.p[off + 6];
        memcpy(&l, r->held.p + off + 7, 4);
        int w = iwc_sctp_send(r->sctp, ppid, sid, !ordered, r->held.p + off + 11, l);
        if (w == 1 && iwc_now_us() < deadline) {
            run_svc(r, 5);
            continue;
        }
        if (w != 0) {
            /* The IUT ended the association (after a Terminate, say). */
            r->tx_dead = true;
            run_trace(r, 1, "SCTP refused our message: the association is %s",
                      w == 1 ? "not taking data" : "gone");
            break;
        }
        off += 11 + l;
    }
    run_svc(r, 0);
}

uint16_t run_sctp_ssn(run *r, const uint16_t *ssn) {
    if (!ssn)
        return r->ssn_tx++;
    if ((uint16_t)(*ssn + 1 - r->ssn_tx) < 0x8000u)
        r->ssn_tx = (uint16_t)(*ssn + 1);
    return *ssn;
}

static void queue_ctrl(run *r, const iw_sctp_ctrl *c, uint32_t ppid, uint16_t sid, bool ordered,
                       int line) {
    uint8_t out[IW_SCTP_CTRL_HDR_LEN + IW_SCTP_PD_MAX];
    iw_ssize n = iw_sctp_ctrl_encode(out, sizeof out, c);
    if (n < 0) {
        run_error(r, line,
                  "Session Control message refused by the encoder: %s (send chunk "
                  "writes any octets)",
                  iw_strerror((int)n));
        return;
    }
    run_sctp_queue(r, ppid, sid, ordered, out, (size_t)n);
}

void run_sctp_send_rr(run *r, const iw_mpa_rr *rr) {
    iw_sctp_ctrl c;
    iw_sctp_ctrl_from_mpa(rr, run_sctp_ssn(r, NULL), &c);
    queue_ctrl(r, &c, IW_SCTP_PPID_DDP_CONTROL, 0, false, 0);
    run_trace(r, 2, "runner -> %s", iw_sctp_fc_str(c.fc));
    run_flush_held(r);
}

static const struct {
    const char *word;
    uint16_t fc;
} fc_words[] = {{"initiate", IW_SCTP_FC_INITIATE},
                {"accept", IW_SCTP_FC_ACCEPT},
                {"reject", IW_SCTP_FC_REJECT},
                {"terminate", IW_SCTP_FC_TERMINATE},
                {"enh-initiate", IW_SCTP_FC_ENH_INITIATE},
                {"enh-accept", IW_SCTP_FC_ENH_ACCEPT},
                {"enh-reject", IW_SCTP_FC_ENH_REJECT}};

static bool step_fc(run *r, const iwc_step *s, uint16_t *fc) {
    const iwc_arg *a = iwc_step_arg(s, "fc");
    if (a->type == IWC_V_WORD) {
        for (size_t i = 0; i < sizeof fc_words / sizeof *fc_words; i++)
            if (!strcmp(a->word, fc_words[i].word)) {
                *fc = fc_words[i].fc;
                return true;
            }
        return false;
    }
    uint64_t v;
    if (!run_eval(r, s->line, &a->e, &v) || v > 0xFFFF) {
        run_error(r, s->line, "fc: a 16-bit Function Code");
        return false;
    }
    *fc = (uint16_t)v;
    return true;
}

/* send ctrl: a Session Control message; the enhanced data and Private Data
 * are the case's peer: settings unless the step gives its own. */
void run_sctp_step_ctrl(run *r, const iwc_step *s) {
    iw_mpa_rr rr;
    run_mine_from_cfg(r, &rr, IW_MPA_REQUEST);
    run_v2_args(r, s, &rr.v2);
    iwc_mut mu;
    iw_sctp_ctrl c = {0};
    if (!run_mut_from(r, s, &mu) || !step_fc(r, s, &c.fc))
        return;
    c.ssn = run_sctp_ssn(r, mu.ssn_set ? &mu.ssn : NULL);
    c.v2 = rr.v2;
    uint8_t *pd = NULL;
    const iwc_arg *pa = iwc_step_arg(s, "pd");
    if (pa && pa->type == IWC_V_DATA) {
        size_t n = 0;
        pd = run_data_make(r, s->line, &pa->d, run_arg_num_or(r, s, "pd-size", 0), &n);
        if (!pd)
            return;
        c.ulp_pd = pd;
        c.ulp_pd_len = (uint16_t)(n > 0xFFFF ? 0xFFFF : n);
    } else if (c.fc != IW_SCTP_FC_TERMINATE) {
        c.ulp_pd = rr.ulp_pd;
        c.ulp_pd_len = rr.ulp_pd_len;
    }
    queue_ctrl(r, &c, mu.ppid_set ? mu.ppid : IW_SCTP_PPID_DDP_CONTROL, mu.sid, mu.ordered,
               s->line);
    /* Our startup, as far as the runner's state goes (RFC 6581 §7). */
    iw_mpa_rr eq;
    c.enhanced = iw_sctp_fc_enhanced(c.fc);
    if (!r->abort_steps && !r->mine_sent && iw_sctp_ctrl_as_mpa(&c, &eq))
        run_record_mine(r, &eq);
    if (c.fc == IW_SCTP_FC_TERMINATE)
        r->sent_term = true; /* §6.2: nothing of ours after it may land */
    free(pd);
    if (!run_arg_num_or(r, s, "hold", 0))
        run_flush_held(r);
}

/* send chunk: a DATA chunk payload exactly as given. */
void run_sctp_step_chunk(run *r, const iwc_step *s) {
    const iwc_arg *da = iwc_step_arg(s, "data");
    size_t n = 0;
    uint8_t *b = run_data_make(r, s->line, &da->d, run_arg_num_or(r, s, "len", 0), &n);
    if (!b)
        return;
    iwc_mut mu;
    if (!n)
        run_error(r, s->line, "send chunk: SCTP has no empty DATA chunks (RFC 4960 §3.3.1)");
    else if (run_mut_from(r, s, &mu))
        run_sctp_queue(r, mu.ppid, mu.sid, mu.ordered, b, n);
    free(b);
    if (!run_arg_num_or(r, s, "hold", 0))
        run_flush_held(r);
}

/* ---- the IUT's chunks ---- */

static void rx_ctrl(run *r, const uint8_t *p, size_t n) {
    iw_sctp_ctrl c;
    iw_sctp_problem why;
    if (iw_sctp_ctrl_decode(&c, p, n, &why) < 0) {
        run_fail(r, 0, "the IUT sent a malformed Session Control message: %s (%s)",
                 iw_sctp_problem_str(why), iw_sctp_problem_rfc(why));
        r->rx_lost = true;
        return;
    }
    rx_frame *f = PUSH(r->rx, r->nrx, r->caprx);
    if (!f)
        return;
    f->type = RXF_CTRL;
    f->t_us = iwc_now_us();
    f->off = r->rx_bytes - n;
    f->wire_len = n;
    f->ctrl = c;
    size_t pl = c.pd_len <= IW_MPA_PD_MAX ? c.pd_len : 0;
    if (pl)
        memcpy(f->pd, c.pd, pl);
    f->ctrl.pd = pl ? f->pd : NULL;
    f->ctrl.ulp_pd = c.ulp_pd && pl ? f->pd + (c.ulp_pd - c.pd) : NULL;
    const char *name = iw_sctp_fc_str(c.fc);
    run_trace(r, 2, "IUT -> %s (DDP-SSN %u)", name ? name : "unassigned Function Code", c.ssn);
    iw_mpa_rr rr; /* from c: its Private Data (in p) outlives the frames' growing */
    if (iw_sctp_ctrl_as_mpa(&c, &rr)) {
        if (r->theirs_got) {
            run_fail(r, 0, "the IUT sent a second %s in one DDP Stream Session (RFC 5043 §6.1)",
                     name);
            return;
        }
        run_rx_startup(r, &rr, n);
        if (rr.type == IW_MPA_REPLY && rr.r)
            r->rejected = true;
        return;
    }
    if (c.fc == IW_SCTP_FC_TERMINATE) {
        /* §6.2: the IUT's last chunk of this session: its stream is over,
         * as a FIN ends TCP's (not octets a "silent" close may not send). */
        r->eof = true;
        r->rx_bytes -= n;
    }
}

static void rx_chunk(run *r, uint32_t ppid, const uint8_t *p, size_t n) {
    if (ppid == IW_SCTP_PPID_DDP_CONTROL) {
        rx_ctrl(r, p, n);
        return;
    }
    if (ppid != IW_SCTP_PPID_DDP_SEGMENT) {
        run_fail(r, 0,
                 "the IUT sent a DATA chunk with PPID %u (RFC 5043 §5.2: 16, DDP Segment, or 17, "
                 "Session Control)",
                 ppid);
        return;
    }
    const char *bad = r->eof        ? "after its DDP Stream Session Terminate (RFC 5043 §6.2)"
                      : r->rejected ? "after a Reject (RFC 5043 §6.3: the session is over)"
                      : !r->theirs_got || !r->mine_sent
                          ? "before the session was accepted (RFC 5043 §6.2)"
                          : NULL;
    if (bad) {
        run_fail(r, 0, "the IUT sent a DDP Segment %s", bad);
        return;
    }
    iw_sctp_seg sg;
    iw_sctp_problem why;
    iw_sctp_seg_decode(&sg, p, n, &why); /* n >= 2: on_msg checked */
    iw_verdict ok = {0};
    run_rx_segment(r, sg.ddp, sg.ddp_len, r->rx_bytes - n, n, &ok);
}

/* ---- expectations and the end ---- */

void run_sctp_exp_ctrl(run *r, const iwc_step *s) {
    r->res->checks++;
    uint16_t fc;
    if (!step_fc(r, s, &fc))
        return;
    const char *name = iw_sctp_fc_str(fc);
    uint64_t deadline = iwc_now_us() + (uint64_t)r->timeout_ms * 1000;
    for (;;) {
        for (int i = 0; i < r->nrx; i++) {
            rx_frame *f = &r->rx[i];
            if (f->type != RXF_CTRL || f->consumed)
                continue;
            f->consumed = true;
            if (f->ctrl.fc != fc) {
                const char *got = iw_sctp_fc_str(f->ctrl.fc);
                run_fail(r, s->line, "expected a %s (0x%04x), got %s (0x%04x)",
                         name ? name : "Session Control message", fc,
                         got ? got : "an unassigned Function Code", f->ctrl.fc);
                return;
            }
            uint64_t ssn;
            if (run_arg_num(r, s, "ssn", &ssn) && ssn != f->ctrl.ssn)
                run_fail(r, s->line, "%s: DDP-SSN %u, expected %llu", name, f->ctrl.ssn,
                         (unsigned long long)ssn);
            return;
        }
        if (iwc_now_us() >= deadline || iwc_sctp_get_state(r->sctp) >= IWC_SCTP_SHUT)
            break;
        run_svc(r, 10);
    }
    run_fail(r, s->line, "expected a %s (0x%04x) from the IUT, got none%s",
             name ? name : "Session Control message", fc,
             iwc_sctp_get_state(r->sctp) == IWC_SCTP_ABORTED ? " (it aborted the association)"
             : iwc_sctp_get_state(r->sctp) == IWC_SCTP_SHUT  ? " (it shut the association down)"
                                                             : "");
}

void run_sctp_final(run *r) {
    if (r->nahead && !r->rx_lost) {
        r->res->checks++;
        run_fail(r, 0,
                 "the IUT's DDP-SSNs have a gap: %d chunk(s) wait for DDP-SSN %u, which never "
                 "came (RFC 5043 §5.2.1)",
                 r->nahead, r->ssn_rx);
    }
}

void run_sctp_free(run *r) {
    iwc_sctp_close(r->sctp);
    r->sctp = NULL;
    for (int i = 0; i < r->nahead; i++)
        free(r->ahead[i].p);
    free(r->ahead);
}
