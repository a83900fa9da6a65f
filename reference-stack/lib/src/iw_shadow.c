/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shadow analysis (see <iwarp/shadow.h>): the engine's receive-side checks,
 * run over a capture.
 *
 * Every verdict below mirrors one the engine raises in src/iw_rx.c or
 * src/iw_place.c for the same situation: same triple, same RFC section
 * string, same order of checks. A check that needs state the capture does
 * not show (registered regions, posted receive buffers) is left out, and a
 * check that comes *after* such a check in the engine's order is only made
 * when the earlier one must have passed, or under a named assumption
 * (IW_SHADOW_ASSUME_*).
 *
 * Endpoints are named by the direction they send: for an FPDU in direction
 * d, the sender is _end[d] and the receiver, whose checks run, is _end[!d].
 * Everything a receiver knows is "known" only from the start of Full
 * Operation (an accepted MPA Reply in the capture) or once the stream has
 * shown it (MSNs are then learned from the first message seen). */
#include <iwarp/shadow.h>

#include "iw_place.h"

#include <string.h>

/* ---- names, generated from the lists in <iwarp/shadow.h> ---- */

static const struct {
    const char *id, *text;
} rule_table[] = {{"NONE", "no rule"},
#define IW_X_(name, text) {#name, text},
                  IW_SHADOW_RULE_LIST(IW_X_)
#undef IW_X_
};
#define RULE_N (sizeof rule_table / sizeof rule_table[0])

const char *iw_shadow_rule_str(iw_shadow_rule r) {
    return (unsigned)r < RULE_N ? rule_table[r].text : "unknown rule";
}
const char *iw_shadow_rule_id(iw_shadow_rule r) {
    return (unsigned)r < RULE_N ? rule_table[r].id : "UNKNOWN";
}

static const struct {
    const char *id, *rfc, *text;
} note_table[] = {
#define IW_X_(name, rfc, text) {#name, rfc, text},
    IW_SHADOW_NOTE_LIST(IW_X_)
#undef IW_X_
};

const char *iw_shadow_note_str(iw_shadow_note n) {
    return (unsigned)n < IW_SHADOW_NOTE_COUNT_ ? note_table[n].text : "unknown note";
}
const char *iw_shadow_note_rfc(iw_shadow_note n) {
    return (unsigned)n < IW_SHADOW_NOTE_COUNT_ ? note_table[n].rfc : NULL;
}
const char *iw_shadow_note_id(iw_shadow_note n) {
    return (unsigned)n < IW_SHADOW_NOTE_COUNT_ ? note_table[n].id : "UNKNOWN";
}

const char *iw_shadow_assume_str(unsigned bit) {
    switch (bit) {
    case IW_SHADOW_ASSUME_ORDER:
        return "no message of the receiver's crossed it in flight";
    case IW_SHADOW_ASSUME_RECV_BUF:
        return "a receive buffer was posted for it";
    case IW_SHADOW_ASSUME_NO_REREG:
        return "the STag was not registered again since";
    default:
        return NULL;
    }
}

/* ---- state helpers ---- */

#define RTR_SEND 0x1u
#define RTR_WRITE 0x2u
#define RTR_READ 0x4u

void iw_shadow_init(iw_shadow *sh) {
    memset(sh, 0, sizeof *sh);
    sh->_init_dir = -1;
}

int iw_shadow_initiator(const iw_shadow *sh) { return sh->_init_dir; }

static void res_init(iw_shadow_result *res) {
    memset(res, 0, sizeof *res);
    res->verdict = iw_verdict_ok();
}

static void res_term(iw_shadow_result *res, uint16_t triple, const char *rfc, iw_shadow_rule rule) {
    res->verdict = iw_verdict_term(triple, rfc);
    res->rule = rule;
}

static void res_ref(iw_shadow_result *res, uint64_t id) {
    res->has_ref = true;
    res->ref = id;
}

static void end_kill(iw_shadow_end *e, uint64_t id) {
    if (e->_dead)
        return;
    e->_dead = true;
    e->_dead_id = id;
    /* Responses to its requests are no longer judged (nor counted), so how
     * many it has outstanding is unknown from here: no IRD verdict on the
     * requests it may still be seen sending. */
    e->_req_known = false;
}

/* Everything a receiver tracks, known and empty: the start of Full
 * Operation (RFC 5041 §4.3: every queue's MSN starts at 1). */
static void end_start(iw_shadow_end *e) {
    e->_snd_known = false;
    e->_snd_from_start = true;
    e->_snd_in_msg = false;
    e->_req_known = true;
    e->_req_head = e->_req_count = 0;
    e->_q0_known = e->_q1_known = e->_q2_known = e->_q3_known = true;
    e->_q0_base = e->_q1_msn = e->_q2_msn = e->_q3_msn = 1;
    e->_q0_done = 0;
}

static iw_shadow_req *req_head(iw_shadow_end *e) {
    return e->_req_count ? &e->_req[e->_req_head] : NULL;
}

static void req_pop(iw_shadow_end *e) {
    if (!e->_req_count)
        return;
    e->_req_head = (e->_req_head + 1) % IW_SHADOW_REQ_MAX;
    e->_req_count--;
}

static void req_push(iw_shadow_end *e, const iw_shadow_req *r) {
    if (!e->_req_known)
        return;
    if (e->_req_count == IW_SHADOW_REQ_MAX) {
        e->_req_known = false; /* more outstanding than we track: stop judging */
        return;
    }
    e->_req[(e->_req_head + e->_req_count) % IW_SHADOW_REQ_MAX] = *r;
    e->_req_count++;
}

static const iw_shadow_inv *inv_find(const iw_shadow_end *e, uint32_t stag) {
    for (unsigned i = 0; i < e->_inv_count; i++)
        if (e->_inv[i].stag == stag)
            return &e->_inv[i];
    return NULL;
}

static void inv_add(iw_shadow_end *e, uint32_t stag, uint64_t id) {
    if (inv_find(e, stag))
        return;
    /* A full table forgets the oldest: fewer verdicts, never a wrong one. */
    e->_inv[e->_inv_next] = (iw_shadow_inv){stag, id};
    e->_inv_next = (e->_inv_next + 1) % IW_SHADOW_INV_MAX;
    if (e->_inv_count < IW_SHADOW_INV_MAX)
        e->_inv_count++;
}

/* The receiver's STag was invalidated by a Send with Invalidate it
 * accepted: the engine's place_check (1) "STag valid" fails first. */
static bool stag_invalidated(const iw_shadow_end *r, uint32_t stag, uint16_t triple,
                             const char *rfc, iw_shadow_result *res) {
    const iw_shadow_inv *inv = inv_find(r, stag);
    if (!inv)
        return false;
    res_term(res, triple, rfc, IW_SHADOW_RULE_STAG_INVALIDATED);
    res->assume |= IW_SHADOW_ASSUME_NO_REREG;
    res_ref(res, inv->id);
    return true;
}

/* ---- MPA startup (RFC 5044 §7.1.2, RFC 6581 §9) ---- */

static unsigned rtr_bits(const iw_mpa_v2 *v) {
    return (v->rtr_send ? RTR_SEND : 0) | (v->rtr_write ? RTR_WRITE : 0) |
           (v->rtr_read ? RTR_READ : 0);
}

static void mpa_reply(iw_shadow *sh, unsigned dir, const iw_mpa_rr *rr, uint64_t id,
                      iw_shadow_result *res) {
    if (rr->r) {
        /* RFC 5044 §7.1.2 rules 2, 3: MPA exits; the TCP stream is the ULP's. */
        sh->_exited = true;
        return;
    }
    unsigned init = !dir;
    iw_shadow_end *ie = &sh->_end[init], *re = &sh->_end[dir];
    /* Full Operation starts after the Reply in both directions: the
     * initiator sends once it has it, the responder after the initiator. */
    sh->_full = true;
    end_start(ie);
    end_start(re);
    ie->_ird_known = re->_ird_known = false;
    bool enh = sh->_req_seen && sh->_req_enh && rr->enhanced;
    if (!enh)
        return; /* RFC 5044 startup: no IRD/ORD, no RTR on the wire */
    const iw_mpa_v2 *q = &sh->_req_v2, *p = &rr->v2;
    /* RFC 6581 §9.1: "Responder IRD ... the actual value that the responder
     * sets for its local IRD". 0x3FFF: not negotiated, not known. */
    if (p->ird != IW_MPA_V2_NO_NEG) {
        re->_ird_known = true;
        re->_ird = p->ird;
    }
    /* The initiator keeps its IRD when the responder ORD fits in it (or is
     * not negotiated); otherwise it "MUST set its IRD at least to the
     * responder ORD": how far above is not on the wire, so it is unknown. */
    if (q->ird != IW_MPA_V2_NO_NEG && (p->ord == IW_MPA_V2_NO_NEG || p->ord <= q->ird)) {
        ie->_ird_known = true;
        ie->_ird = q->ird;
    }
    if (p->ord != IW_MPA_V2_NO_NEG && q->ird != IW_MPA_V2_NO_NEG && p->ord > q->ird)
        res->notes |= IW_SHADOW_NOTE(ORD_EXCEEDS_IRD);
    if (q->p2p && !p->p2p)
        res->notes |= IW_SHADOW_NOTE(REPLY_NOT_P2P);
    if (!(q->p2p && p->p2p))
        return;
    sh->_rtr_offer = rtr_bits(p);
    /* RFC 6581 §9.2: the initiator offers every RTR it supports (B/C/D of
     * the Request) and "MUST generate one of the negotiated RTR
     * indications", else send TERM 2/0/7. A Read RTR is a Read Request,
     * impossible towards a responder IRD of 0 (RFC 5040 §6.1). The engine's
     * initiator makes exactly this choice (conn_mpa_reply_rx). */
    unsigned both = rtr_bits(q) & rtr_bits(p);
    if (p->ird == 0)
        both &= ~RTR_READ;
    if (!both) {
        res_term(res, IW_TERM_LLP_MPA_NO_MATCHING_RTR, "RFC 6581 §9.2",
                 IW_SHADOW_RULE_NO_MATCHING_RTR);
        res->judged = true;
        end_kill(ie, id); /* the initiator terminates: it drains what follows */
        return;
    }
    sh->_rtr_due = true;
}

int iw_shadow_mpa(iw_shadow *sh, unsigned dir, const iw_mpa_rr *rr, uint64_t id,
                  iw_shadow_result *res) {
    if (!sh || !rr || !res || dir > 1)
        return IW_ERR_INVALID_ARG;
    res_init(res);
    if (sh->_exited || sh->_full)
        return 0; /* after MPA exited, or a startup frame in Full Operation */
    if (rr->type == IW_MPA_REQUEST) {
        if (sh->_init_dir < 0) {
            sh->_init_dir = (int)dir;
            sh->_req_seen = true;
            sh->_req_enh = rr->enhanced;
            sh->_req_v2 = rr->v2;
            return 0;
        }
        if ((unsigned)sh->_init_dir == dir)
            return 0; /* a second Request: nothing new to learn */
    } else if (sh->_init_dir < 0) {
        sh->_init_dir = (int)!dir; /* the Request is not in the capture */
    }
    /* RFC 5044 §7.1.2 rules 5, 8: the other side's frame type is due. */
    iw_verdict v =
        iw_mpa_rr_expect(rr, (unsigned)sh->_init_dir == dir ? IW_MPA_REQUEST : IW_MPA_REPLY);
    if (v.kind != IW_VERDICT_OK) {
        res->verdict = v;
        res->judged = true;
        sh->_exited = true;
        return 0;
    }
    mpa_reply(sh, dir, rr, id, res);
    return 0;
}

/* ---- FPDUs ---- */

/* RFC 6581 §9.2: the initiator's first FPDU after a peer-to-peer startup
 * is a zero-length RTR of a negotiated type. A Terminate (2/0/6, 2/0/7) is
 * the other legal first FPDU. Notes only: no receiver is required to
 * answer a missing RTR with a Terminate, and the engine does not. */
static void check_rtr(const iw_shadow *sh, const iw_rdmap_msg *m, iw_shadow_result *res) {
    if (m->opcode == IW_OP_TERMINATE)
        return;
    bool send0 = m->opcode == IW_OP_SEND && m->payload_len == 0 && !m->ddp.tagged &&
                 m->ddp.qn == IW_QN_SEND && m->ddp.msn == 1 && m->ddp.mo == 0 && m->ddp.last;
    bool write0 = m->opcode == IW_OP_WRITE && m->payload_len == 0 && m->ddp.last;
    bool read0 = m->opcode == IW_OP_READ_REQ && m->has_hdr && m->u.read_req.read_size == 0 &&
                 m->ddp.msn == 1 && m->ddp.last;
    unsigned type = send0 ? RTR_SEND : write0 ? RTR_WRITE : read0 ? RTR_READ : 0;
    if (!type)
        res->notes |= IW_SHADOW_NOTE(RTR_MISSING);
    else if (!(sh->_rtr_offer & type))
        res->notes |= IW_SHADOW_NOTE(RTR_NOT_NEGOTIATED);
    else
        res->rtr = true;
}

/* Sender-side sequence on QN 0 (notes): RFC 5041 §4.3 MSN 1, then +1 per
 * message; §5.2 MO continues the message, L ends it. */
static void snd_sequence(iw_shadow_end *s, const iw_rdmap_msg *m, uint32_t pay,
                         iw_shadow_result *res) {
    uint32_t msn = m->ddp.msn, mo = m->ddp.mo;
    if (s->_snd_known && s->_snd_in_msg && msn == s->_snd_msn) {
        if (mo != s->_snd_next_mo) {
            res->notes |= IW_SHADOW_NOTE(MO_GAP);
            res->expected = s->_snd_next_mo;
        }
    } else {
        if (s->_snd_known && s->_snd_in_msg)
            res->notes |= IW_SHADOW_NOTE(NO_LAST);
        /* A gap is an MSN ahead of the next one; one behind it is a replay,
         * which the receiver's MSN_REPLAY verdict names (RFC 5041 §4.3:
         * MSNs compare modulo 2^32). */
        if (s->_snd_known && msn != s->_snd_msn + 1) {
            if (msn - (s->_snd_msn + 1) < 0x80000000u) {
                res->notes |= IW_SHADOW_NOTE(MSN_GAP);
                res->expected = s->_snd_msn + 1;
            }
        } else if (!s->_snd_known && s->_snd_from_start && msn != 1) {
            res->notes |= IW_SHADOW_NOTE(MSN_NOT_INITIAL);
            res->expected = 1;
        } else if (mo != 0 && (s->_snd_known || s->_snd_from_start)) {
            /* Mid-stream or after a gap the first segment seen may be any
             * part of a message: MO is judged only from a known start. */
            res->notes |= IW_SHADOW_NOTE(MO_GAP);
            res->expected = 0;
        }
    }
    s->_snd_known = true;
    s->_snd_msn = msn;
    s->_snd_in_msg = !m->ddp.last;
    s->_snd_next_mo = mo + pay;
}

/* QN 0: Send, Send with Invalidate, Send with SE (+Inv), Immediate Data
 * (engine: rx_check_untagged_qn0, then rx_complete_send). */
static void rx_untagged_qn0(iw_shadow_end *r, const iw_rdmap_msg *m, uint32_t pay, uint64_t id,
                            iw_shadow_result *res) {
    uint32_t msn = m->ddp.msn;
    if (!r->_q0_known) {
        /* Mid-stream or after a gap: the first message seen is the lowest
         * one not yet complete. */
        r->_q0_known = true;
        r->_q0_base = msn;
        r->_q0_done = 0;
    }
    uint32_t d = msn - r->_q0_base; /* MSNs wrap modulo 2^32 (RFC 5041 §4.3) */
    /* RFC 5041 §7.1 untagged (5), only for non-zero-length segments: an MSN
     * below the window (completed and delivered) is out of range, as is one
     * whose message already completed (iw_place_untagged_msn; the r->done
     * case). Neither depends on how many buffers were posted: every MSN in
     * the completed part had one. */
    bool done = d >= 0x80000000u || (d < 64 && (r->_q0_done >> d & 1));
    if (done) {
        /* A zero-length one need not be validated: no verdict, and none of
         * the later checks either (the engine would already answer 1/2/3). */
        if (pay) {
            res_term(res, IW_TERM_DDP_UT_MSN_RANGE, "RFC 5041 §7.1", IW_SHADOW_RULE_MSN_REPLAY);
            res->expected = r->_q0_base;
        }
        return;
    }
    bool inv = m->opcode == IW_OP_SEND_INV || m->opcode == IW_OP_SEND_SE_INV;
    if (inv) {
        /* RFC 5040 §7.2 (4), §5.3: iw_place_invalidate, after the buffer
         * checks the capture cannot see. */
        const iw_shadow_inv *i = inv_find(r, m->ddp.rsvd_ulp2);
        if (i) {
            res_term(res, IW_TERM_RDMAP_PROT_CANT_INVALIDATE, "RFC 5040 §5.3, §7.2",
                     IW_SHADOW_RULE_INVALIDATE_INVALIDATED);
            res->assume |= IW_SHADOW_ASSUME_RECV_BUF | IW_SHADOW_ASSUME_NO_REREG;
            res_ref(res, i->id);
            return;
        }
    }
    if (!m->ddp.last)
        return;
    /* The message completes (RFC 5041 §5.4); RFC 5040 §5.3 invalidates the
     * STag before the Send is delivered. */
    if (inv)
        inv_add(r, m->ddp.rsvd_ulp2, id);
    if (d < 64)
        r->_q0_done |= 1ull << d;
    while (r->_q0_done & 1) {
        r->_q0_done >>= 1;
        r->_q0_base++;
    }
}

/* QN 1: Read Request, Atomic Request (engine: rx_check_qn1, then
 * rx_complete_read_req / rx_complete_atomic_req). s is the requester. */
static void rx_qn1(iw_shadow_end *r, iw_shadow_end *s, const iw_rdmap_msg *m, uint64_t id,
                   iw_shadow_result *res) {
    if (!m->has_hdr) {
        /* A request split over segments: legal (RFC 5041 §5.2), but its
         * fields are not in this segment; matching becomes unknown. */
        s->_req_known = false;
        r->_q1_known = false;
        return;
    }
    if (r->_q1_known && m->ddp.msn != r->_q1_msn) {
        res_term(res, IW_TERM_DDP_UT_MSN_RANGE, "RFC 5041 §7.1", IW_SHADOW_RULE_QN1_MSN);
        res->expected = r->_q1_msn;
        return;
    }
    /* RFC 5040 §6.1, RFC 6581 §9.1: no more than IRD outstanding; the QN 1
     * buffer for this MSN does not exist. Outstanding = requests the
     * requester sent whose response has not ended yet, in capture order. */
    if (r->_ird_known && s->_req_known && s->_req_count >= r->_ird) {
        res_term(res, IW_TERM_DDP_UT_NO_BUFFER, "RFC 5040 §6.1; RFC 5041 §7.1",
                 IW_SHADOW_RULE_IRD_EXCEEDED);
        res->assume |= IW_SHADOW_ASSUME_ORDER;
        res->expected = r->_ird;
        return;
    }
    /* Delivered: the Data Source (Read, non-zero size: RFC 5040 §7.2 4a) or
     * the atomic target (RFC 7306 §8.2) must be a valid STag. */
    if (m->opcode == IW_OP_READ_REQ) {
        if (m->u.read_req.read_size &&
            stag_invalidated(r, m->u.read_req.src_stag, IW_TERM_RDMAP_INVALID_STAG, "RFC 5040 §7.2",
                             res))
            return;
    } else if (stag_invalidated(r, m->u.atomic_req.stag, IW_TERM_RDMAP_INVALID_STAG,
                                "RFC 5040 §7.2", res)) {
        return;
    }
    r->_q1_known = true;
    r->_q1_msn = m->ddp.msn + 1;
    iw_shadow_req q;
    memset(&q, 0, sizeof q);
    q.id = id;
    q.atomic = m->opcode == IW_OP_ATOMIC_REQ;
    if (q.atomic) {
        q.req_id = m->u.atomic_req.req_id;
    } else {
        q.sink_stag = m->u.read_req.sink_stag;
        q.sink_to = m->u.read_req.sink_to;
        q.size = m->u.read_req.read_size;
    }
    req_push(s, &q);
}

/* Read Response (engine: rx_header READ_RESP). r is the requester. */
static void rx_read_resp(iw_shadow_end *r, const iw_rdmap_msg *m, uint32_t pay,
                         iw_shadow_result *res) {
    if (!r->_req_known)
        return;
    /* RFC 5040 §5.2.1: it answers the oldest outstanding request. */
    iw_shadow_req *o = req_head(r);
    if (!o || o->atomic) {
        res_term(res, IW_TERM_RDMAP_UNEXPECTED_OPCODE, "RFC 5040 §5.2, §7.2",
                 IW_SHADOW_RULE_READ_RESP_UNEXPECTED);
        if (o)
            res_ref(res, o->id); /* the head is certain: requests precede responses */
        else
            res->assume |= IW_SHADOW_ASSUME_ORDER;
        return;
    }
    res_ref(res, o->id);
    if (pay) {
        /* The engine's own check (iw_place_read_resp): one rule, one place. */
        iw_place s =
            iw_place_read_resp(m->ddp.stag, m->ddp.to, pay, o->sink_stag, o->sink_to, o->size);
        if (!s.ok) {
            res_term(res, s.term, s.rfc,
                     s.term == IW_TERM_DDP_T_INVALID_STAG ? IW_SHADOW_RULE_READ_RESP_STAG
                                                          : IW_SHADOW_RULE_READ_RESP_BOUNDS);
            return;
        }
        /* Then placement into the sink region (iw_place_tagged). */
        if (stag_invalidated(r, m->ddp.stag, IW_TERM_DDP_T_INVALID_STAG, "RFC 5041 §7.1", res))
            return;
    }
    if (m->ddp.last)
        req_pop(r);
}

/* Atomic Response (engine: rx_header ATOMIC_RESP). r is the requester. */
static void rx_atomic_resp(iw_shadow_end *r, const iw_rdmap_msg *m, iw_shadow_result *res) {
    if (r->_q3_known && m->ddp.msn != r->_q3_msn) {
        res_term(res, IW_TERM_DDP_UT_MSN_RANGE, "RFC 5041 §7.1", IW_SHADOW_RULE_QN3_MSN);
        res->expected = r->_q3_msn;
        return;
    }
    iw_shadow_req *o = r->_req_known ? req_head(r) : NULL;
    if (r->_req_known && (!o || !o->atomic)) {
        res_term(res, IW_TERM_RDMAP_UNEXPECTED_OPCODE, "RFC 7306 §5",
                 IW_SHADOW_RULE_ATOMIC_RESP_UNEXPECTED);
        if (o)
            res_ref(res, o->id);
        else
            res->assume |= IW_SHADOW_ASSUME_ORDER;
        return;
    }
    r->_q3_known = true;
    r->_q3_msn = m->ddp.msn + 1;
    if (o) {
        res_ref(res, o->id);
        if (m->has_hdr && m->u.atomic_resp.req_id != o->req_id)
            res->notes |= IW_SHADOW_NOTE(ATOMIC_ID_MISMATCH);
        req_pop(r);
    }
}

int iw_shadow_fpdu(iw_shadow *sh, unsigned dir, const iw_rdmap_msg *m, size_t ulpdu_len,
                   const iw_verdict *pre, uint64_t id, iw_shadow_result *res) {
    bool pre_bad = pre && pre->kind != IW_VERDICT_OK;
    if (!sh || !res || dir > 1 || (!m && !pre_bad))
        return IW_ERR_INVALID_ARG;
    res_init(res);
    if (sh->_exited)
        return 0;
    iw_shadow_end *s = &sh->_end[dir], *r = &sh->_end[!dir];
    /* With an MPA-level verdict (CRC, marker) the ULPDU is not to be
     * trusted; with a DDP/RDMAP one its header still says what it was. */
    bool llp_bad = pre_bad && pre->kind == IW_VERDICT_TERM && iw_term_layer(pre->term) == 0x2;
    if (pre_bad && pre->kind != IW_VERDICT_TERM)
        llp_bad = true;
    const iw_rdmap_msg *mm = llp_bad ? NULL : m;
    /* A Terminate even if its own header failed a check (iw_rdmap_decode
     * sets the opcode first, and the DDP header before it when there is
     * one): the sender meant to end the stream. */
    bool is_term = mm && mm->opcode == IW_OP_TERMINATE && mm->ddp.dv == IW_DDP_VERSION &&
                   mm->rv == IW_RDMAP_VERSION && !mm->ddp.tagged && mm->ddp.qn == IW_QN_TERMINATE;

    /* Sender side: RFC 5040 §5.4, RFC 5044 §7.1.2 rule 4, RFC 6581 §9.2. */
    if (s->_term_sent) {
        res->notes |= IW_SHADOW_NOTE(SENT_AFTER_TERMINATE);
        res_ref(res, s->_term_id);
    }
    int init = sh->_init_dir;
    if (sh->_full && init >= 0 && dir != (unsigned)init && !s->_sent_fpdu &&
        !sh->_end[init]._sent_valid && !is_term)
        res->notes |= IW_SHADOW_NOTE(RESPONDER_FIRST);
    if (sh->_rtr_due && init >= 0 && dir == (unsigned)init) {
        sh->_rtr_due = false;
        if (!pre_bad && !r->_dead)
            check_rtr(sh, m, res);
    }
    s->_sent_fpdu = true;
    if (!llp_bad)
        s->_sent_valid = true;
    if (is_term) {
        /* RFC 5040 §5.4: its last message; the engine also stops reading. */
        if (!s->_term_sent) {
            s->_term_sent = true;
            s->_term_id = id;
        }
        end_kill(s, id);
    }

    /* Receiver side. */
    if (r->_dead) {
        /* RFC 5041 §7.1, RFC 5040 §5.4: nothing after the Terminate is
         * placed or judged. */
        res->notes |= IW_SHADOW_NOTE(AFTER_TERMINATE);
        res->ended_in = r->_dead_id;
        return 0;
    }
    res->judged = true;
    if (pre_bad) {
        end_kill(r, id); /* the stateless verdict is this FPDU's Terminate */
        return 0;
    }
    /* A control message split over segments: RFC 5041 §5.2 allows it, the
     * engine refuses it (docs/architecture.md), so which check a receiver
     * meets first is its own choice: no stateful verdict is given. */
    if (m->notes & IW_NOTE(CONTROL_SEGMENTED)) {
        res->judged = false;
        return 0;
    }
    uint32_t hl = m->ddp.tagged ? IW_DDP_TAGGED_HDR_LEN : IW_DDP_UNTAGGED_HDR_LEN;
    uint32_t pay = ulpdu_len > hl ? (uint32_t)(ulpdu_len - hl) : 0; /* DDP payload */
    switch (m->opcode) {
    case IW_OP_WRITE:
        /* RFC 5041 §7.1 tagged, non-zero length only (iw_place_tagged). */
        if (pay)
            stag_invalidated(r, m->ddp.stag, IW_TERM_DDP_T_INVALID_STAG, "RFC 5041 §7.1", res);
        break;
    case IW_OP_READ_RESP:
        rx_read_resp(r, m, pay, res);
        break;
    case IW_OP_SEND:
    case IW_OP_SEND_INV:
    case IW_OP_SEND_SE:
    case IW_OP_SEND_SE_INV:
    case IW_OP_IMM:
    case IW_OP_IMM_SE:
        snd_sequence(s, m, (uint32_t)m->payload_len, res);
        rx_untagged_qn0(r, m, pay, id, res);
        break;
    case IW_OP_READ_REQ:
    case IW_OP_ATOMIC_REQ:
        rx_qn1(r, s, m, id, res);
        break;
    case IW_OP_ATOMIC_RESP:
        rx_atomic_resp(r, m, res);
        break;
    case IW_OP_TERMINATE:
        if (r->_q2_known && m->ddp.msn != r->_q2_msn) {
            res_term(res, IW_TERM_DDP_UT_MSN_RANGE, "RFC 5041 §7.1", IW_SHADOW_RULE_QN2_MSN);
            res->expected = r->_q2_msn;
            break;
        }
        /* Delivered (RFC 5040 §5.4): the receiver's stream is over. */
        end_kill(r, id);
        break;
    default:
        break; /* iw_rdmap_decode gives reserved opcodes a verdict */
    }
    if (res->verdict.kind == IW_VERDICT_TERM)
        end_kill(r, id);
    return 0;
}

int iw_shadow_lost(iw_shadow *sh, unsigned dir) {
    if (!sh || dir > 1)
        return IW_ERR_INVALID_ARG;
    iw_shadow_end *s = &sh->_end[dir], *r = &sh->_end[!dir];
    /* Messages of this direction are missing: the receiver's sequence
     * numbers, the sender's requests and the responses to the receiver's
     * requests all become unknown. Invalidated STags stay invalid. */
    s->_snd_known = s->_snd_in_msg = false;
    s->_snd_from_start = false;
    s->_req_known = false;
    r->_req_known = false;
    r->_q0_known = r->_q1_known = r->_q2_known = r->_q3_known = false;
    r->_q0_done = 0;
    sh->_rtr_due = false;
    /* The lost octets may have held the sender's first valid FPDU: whether
     * the other side spoke first (RFC 5044 §7.1.2 rule 4) is unknown. */
    s->_sent_valid = true;
    return 0;
}
