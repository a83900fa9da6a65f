/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwarp-decode output: JSON lines (the documented schema, see
 * docs/iwarp-decode.md) and the one-line-per-frame text form. */
#include "iwd_print.h"

#include "iwd_shadow.h"

#include <inttypes.h>
#include <string.h>

void iwd_counts_add(iwd_counts *dst, const iwd_counts *src) {
    dst->frames += src->frames;
    dst->ok += src->ok;
    dst->term += src->term;
    dst->close += src->close;
    dst->after_term += src->after_term;
    dst->lost += src->lost;
    dst->incomplete += src->incomplete;
    dst->fpdus += src->fpdus;
    if (src->fpdus) {
        dst->markers = src->markers;
        dst->crc = src->crc;
    }
}

void iwd_out_init(iwd_out *o, FILE *f, bool json, bool payload) {
    o->f = f;
    o->json = json;
    o->payload = payload;
    iw_jw_init(&o->j, f);
}

/* ---- shared helpers ---- */

static const char *rec_type(iw_frame_type t) {
    switch (t) {
    case IW_FRAME_MPA_REQUEST:
        return "mpa_request";
    case IW_FRAME_MPA_REPLY:
        return "mpa_reply";
    case IW_FRAME_FPDU:
        return "fpdu";
    case IW_FRAME_LOST:
        return "framing_lost";
    case IW_FRAME_INCOMPLETE:
        return "incomplete";
    default:
        return "none";
    }
}

/* RFC 7306 §5.2.1 Fig. 5. */
static const char *aop_name(unsigned aop) {
    switch (aop) {
    case IW_ATOMIC_FETCH_ADD:
        return "FetchAdd";
    case IW_ATOMIC_CMP_SWAP:
        return "CmpSwap";
    default:
        return "Reserved";
    }
}

static bool op_has_inv_stag(unsigned op) { return op == IW_OP_SEND_INV || op == IW_OP_SEND_SE_INV; }

static unsigned ctrl_opcode(uint8_t rdmap_ctrl) { return rdmap_ctrl & IW_RDMAP_CTRL_OPCODE; }
static unsigned ctrl_rv(uint8_t rdmap_ctrl) { return (rdmap_ctrl & IW_RDMAP_CTRL_RV) >> 6; }

static uint32_t rec_notes(const iwd_rec *r) {
    const iw_frame *fr = r->fr;
    if (fr->type == IW_FRAME_MPA_REQUEST || fr->type == IW_FRAME_MPA_REPLY)
        return fr->rr.notes;
    if (fr->type == IW_FRAME_FPDU)
        return fr->fpdu.notes | (r->msg ? r->msg->notes : 0);
    return 0;
}

/* iw_close_id is upper case ("MPA_BAD_KEY"); the schema uses lower case. */
static void close_id_lower(char *dst, size_t len, iw_close_reason c) {
    const char *id = iw_close_id(c);
    size_t i = 0;
    for (; id[i] && i + 1 < len; i++)
        dst[i] = (id[i] >= 'A' && id[i] <= 'Z') ? (char)(id[i] - 'A' + 'a') : id[i];
    dst[i] = '\0';
}

/* ---- JSON ---- */

static void json_verdict(iw_jw *j, const iw_verdict *v) {
    if (v->kind == IW_VERDICT_OK) {
        iw_jw_str(j, "verdict", "ok");
        return;
    }
    iw_jw_obj_begin(j, "verdict");
    if (v->kind == IW_VERDICT_TERM) {
        iw_jw_uint(j, "layer", iw_term_layer(v->term));
        iw_jw_uint(j, "etype", iw_term_etype(v->term));
        iw_jw_uint(j, "code", iw_term_ecode(v->term));
        iw_jw_str(j, "name", iw_term_str(v->term));
    } else {
        char id[40];
        close_id_lower(id, sizeof id, v->close);
        iw_jw_str(j, "close", id);
        iw_jw_str(j, "reason", iw_close_str(v->close));
    }
    iw_jw_str(j, "rfc", v->rfc ? v->rfc : "");
    iw_jw_obj_end(j);
}

static void json_notes(iw_jw *j, uint32_t notes) {
    if (!notes)
        return;
    iw_jw_arr_begin(j, "notes");
    for (int n = 0; n < IW_NOTE_COUNT_; n++) {
        if (!(notes & (1u << n)))
            continue;
        iw_jw_obj_begin(j, NULL);
        iw_jw_str(j, "id", iw_note_id((iw_note)n));
        iw_jw_str(j, "text", iw_note_str((iw_note)n));
        iw_jw_str(j, "rfc", iw_note_rfc((iw_note)n));
        iw_jw_obj_end(j);
    }
    iw_jw_arr_end(j);
}

/* iw_shadow_result.expected means something for these rules only. */
static bool shadow_has_expected(iw_shadow_rule r) {
    return r == IW_SHADOW_RULE_IRD_EXCEEDED || r == IW_SHADOW_RULE_MSN_REPLAY ||
           r == IW_SHADOW_RULE_QN1_MSN || r == IW_SHADOW_RULE_QN2_MSN ||
           r == IW_SHADOW_RULE_QN3_MSN;
}

/* "shadow": libiwarp's stateful analysis of this frame (iw_shadow). */
static void json_shadow(iw_jw *j, const iw_shadow_result *sh) {
    if (!iwd_sh_says(sh))
        return;
    iw_jw_obj_begin(j, "shadow");
    if (sh->rule != IW_SHADOW_RULE_NONE) {
        iw_jw_str(j, "rule", iw_shadow_rule_id(sh->rule));
        iw_jw_str(j, "rule_text", iw_shadow_rule_str(sh->rule));
        if (shadow_has_expected(sh->rule))
            iw_jw_uint(j, "expected", sh->expected);
    }
    if (sh->has_ref)
        iw_jw_uint(j, "ref", sh->ref);
    if (sh->assume) {
        iw_jw_arr_begin(j, "assume");
        for (unsigned bit = 1; bit && bit <= sh->assume; bit <<= 1)
            if ((sh->assume & bit) && iw_shadow_assume_str(bit))
                iw_jw_str(j, NULL, iw_shadow_assume_str(bit));
        iw_jw_arr_end(j);
    }
    if (!sh->judged)
        iw_jw_bool(j, "judged", false);
    if (sh->rtr)
        iw_jw_bool(j, "rtr", true);
    if (sh->notes) {
        iw_jw_arr_begin(j, "notes");
        for (unsigned n = 0; n < IW_SHADOW_NOTE_COUNT_; n++) {
            if (!(sh->notes & (1u << n)))
                continue;
            iw_jw_obj_begin(j, NULL);
            iw_jw_str(j, "id", iw_shadow_note_id((iw_shadow_note)n));
            iw_jw_str(j, "text", iw_shadow_note_str((iw_shadow_note)n));
            iw_jw_str(j, "rfc", iw_shadow_note_rfc((iw_shadow_note)n));
            if (n == IW_SHADOW_NOTE_BIT_AFTER_TERMINATE)
                iw_jw_uint(j, "ended_in", sh->ended_in);
            iw_jw_obj_end(j);
        }
        iw_jw_arr_end(j);
    }
    iw_jw_obj_end(j);
}

static void json_read_req(iw_jw *j, const char *key, const iw_rdmap_read_req *rr) {
    iw_jw_obj_begin(j, key);
    iw_jw_hex32(j, "sink_stag", rr->sink_stag);
    iw_jw_hex64(j, "sink_to", rr->sink_to);
    iw_jw_uint(j, "read_size", rr->read_size);
    iw_jw_hex32(j, "src_stag", rr->src_stag);
    iw_jw_hex64(j, "src_to", rr->src_to);
    iw_jw_obj_end(j);
}

/* DDP header fields (RFC 5041 §4.2/4.3) with the RDMAP Control octet they
 * carry; its opcode says whether RsvdULP[8:39] is an Invalidate STag
 * (RFC 5040 §4.3). */
static void json_ddp_fields(iw_jw *j, const iw_ddp_hdr *h) {
    iw_jw_bool(j, "tagged", h->tagged);
    iw_jw_bool(j, "last", h->last);
    iw_jw_uint(j, "dv", h->dv);
    unsigned op = ctrl_opcode(h->rsvd_ulp);
    iw_jw_uint(j, "rv", ctrl_rv(h->rsvd_ulp));
    iw_jw_uint(j, "opcode", op);
    iw_jw_str(j, "opcode_name", iw_rdmap_opcode_str(op));
    if (h->tagged) {
        iw_jw_hex32(j, "stag", h->stag);
        iw_jw_hex64(j, "to", h->to);
    } else {
        iw_jw_uint(j, "qn", h->qn);
        iw_jw_uint(j, "msn", h->msn);
        iw_jw_uint(j, "mo", h->mo);
        if (op_has_inv_stag(op))
            iw_jw_hex32(j, "inv_stag", h->rsvd_ulp2);
    }
}

static void json_terminate(iw_jw *j, const iw_rdmap_term *t) {
    uint16_t triple = IW_TERM_TRIPLE(t->layer, t->etype, t->ecode);
    iw_jw_obj_begin(j, "terminate");
    iw_jw_uint(j, "layer", t->layer);
    iw_jw_uint(j, "etype", t->etype);
    iw_jw_uint(j, "code", t->ecode);
    iw_jw_str(j, "name", iw_term_str(triple));
    if (iw_term_rfc(triple))
        iw_jw_str(j, "rfc", iw_term_rfc(triple));
    iw_jw_bool(j, "m", t->m);
    iw_jw_bool(j, "d", t->d);
    iw_jw_bool(j, "r", t->r);
    if (t->m || t->d) /* the field is present only then (RFC 5040 §4.8) */
        iw_jw_uint(j, "ddp_seg_len", t->ddp_seg_len);
    if (t->d) {
        iw_jw_obj_begin(j, "ddp_hdr");
        json_ddp_fields(j, &t->ddp);
        iw_jw_obj_end(j);
    }
    if (t->r)
        json_read_req(j, "read_req", &t->rreq);
    iw_jw_obj_end(j);
}

static void json_mpa(iwd_out *o, const iw_mpa_rr *rr) {
    iw_jw *j = &o->j;
    iw_jw_uint(j, "rev", rr->rev);
    iw_jw_bool(j, "m", rr->m);
    iw_jw_bool(j, "c", rr->c);
    iw_jw_bool(j, "r", rr->r);
    iw_jw_bool(j, "s", rr->s);
    iw_jw_uint(j, "pd_len", rr->pd_len);
    iw_jw_hexbytes(j, "private_data_hex", rr->ulp_pd, rr->ulp_pd ? rr->ulp_pd_len : 0);
    if (rr->enhanced) {
        iw_jw_obj_begin(j, "mpa_v2");
        iw_jw_bool(j, "p2p", rr->v2.p2p);
        iw_jw_bool(j, "rtr_send", rr->v2.rtr_send);
        iw_jw_bool(j, "rtr_write", rr->v2.rtr_write);
        iw_jw_bool(j, "rtr_read", rr->v2.rtr_read);
        iw_jw_uint(j, "ird", rr->v2.ird);
        iw_jw_uint(j, "ord", rr->v2.ord);
        iw_jw_obj_end(j);
    }
    if (rr->type == IW_MPA_REPLY && rr->r)
        iw_jw_bool(j, "rejected", true);
}

static void json_fpdu(iwd_out *o, const iwd_rec *r) {
    iw_jw *j = &o->j;
    const iw_frame *fr = r->fr;
    const iw_mpa_fpdu *f = &fr->fpdu;
    if (fr->markers)
        iw_jw_uint(j, "markers", f->n_markers);
    iw_jw_uint(j, "pos", fr->pos);
    if (fr->crc_on) {
        iw_jw_hex32(j, "crc", f->crc_wire);
        iw_jw_hex32(j, "crc_calc", f->crc_calc);
    }
    iw_jw_uint(j, "pad_len", f->pad_len);
    if (!r->ddp_ok)
        return;
    const iw_rdmap_msg *m = r->msg;
    json_ddp_fields(j, &m->ddp);
    if (r->msg_ok) {
        iw_jw_uint(j, "payload_len", m->payload_len);
        if (o->payload)
            iw_jw_hexbytes(j, "payload_hex", m->payload, m->payload ? m->payload_len : 0);
    }
    if (!m->has_hdr)
        return;
    switch (m->opcode) {
    case IW_OP_READ_REQ:
        json_read_req(j, "read_req", &m->u.read_req);
        break;
    case IW_OP_TERMINATE:
        json_terminate(j, &m->u.term);
        break;
    case IW_OP_ATOMIC_REQ: {
        const iw_rdmap_atomic_req *a = &m->u.atomic_req;
        iw_jw_obj_begin(j, "atomic_req");
        iw_jw_uint(j, "aopcode", a->aopcode);
        iw_jw_str(j, "aop_name", aop_name(a->aopcode));
        iw_jw_uint(j, "req_id", a->req_id);
        iw_jw_hex32(j, "stag", a->stag);
        iw_jw_hex64(j, "to", a->to);
        iw_jw_hex64(j, "add_swap", a->add_swap);
        iw_jw_hex64(j, "add_swap_mask", a->add_swap_mask);
        iw_jw_hex64(j, "compare", a->compare);
        iw_jw_hex64(j, "compare_mask", a->compare_mask);
        iw_jw_obj_end(j);
        break;
    }
    case IW_OP_ATOMIC_RESP:
        iw_jw_obj_begin(j, "atomic_resp");
        iw_jw_uint(j, "req_id", m->u.atomic_resp.req_id);
        iw_jw_hex64(j, "orig", m->u.atomic_resp.orig);
        iw_jw_obj_end(j);
        break;
    case IW_OP_IMM:
    case IW_OP_IMM_SE:
        iw_jw_hexbytes(j, "imm_hex", m->u.imm, sizeof m->u.imm);
        break;
    default:
        break;
    }
}

/* Capture mode: where the record comes from. */
static void json_tag(iw_jw *j, const iwd_tag *t) {
    if (!t)
        return;
    iw_jw_uint(j, "stream", t->stream);
    iw_jw_str(j, "src", t->src);
    iw_jw_str(j, "dst", t->dst);
    if (t->dir)
        iw_jw_str(j, "dir", t->dir);
    else
        iw_jw_null(j, "dir");
    if (t->frame) {
        char ts[32];
        iw_jw_uint(j, "frame", t->frame);
        if (t->last_frame && t->last_frame != t->frame)
            iw_jw_uint(j, "last_frame", t->last_frame);
        snprintf(ts, sizeof ts, "%" PRId64 ".%09" PRIu32, t->ts_sec, t->ts_nsec);
        iw_jw_str(j, "ts", ts);
    } else {
        iw_jw_null(j, "frame");
        iw_jw_null(j, "ts");
    }
    if (t->have_seq)
        iw_jw_uint(j, "tcp_seq", t->tcp_seq);
    else
        iw_jw_null(j, "tcp_seq");
}

static void json_record(iwd_out *o, const iwd_rec *r) {
    iw_jw *j = &o->j;
    const iw_frame *fr = r->fr;
    bool fpdu = fr->type == IW_FRAME_FPDU;
    uint64_t wire_len = fr->type == IW_FRAME_LOST ? fr->lost_len : fr->wire_len;

    iw_jw_obj_begin(j, NULL);
    json_tag(j, r->tag);
    iw_jw_uint(j, "offset", fr->offset);
    iw_jw_uint(j, "wire_off", fr->wire_off);
    iw_jw_uint(j, "wire_len", wire_len);
    iw_jw_str(j, "type", rec_type(fr->type));
    if (fpdu)
        iw_jw_uint(j, "ulpdu_len", fr->fpdu.ulpdu_len);
    else
        iw_jw_null(j, "ulpdu_len");
    if (fpdu && fr->crc_on)
        iw_jw_bool(j, "crc_ok", fr->fpdu.crc == IW_CRC_GOOD);
    else
        iw_jw_null(j, "crc_ok");
    json_verdict(j, &r->verdict);
    if (r->after_term)
        iw_jw_bool(j, "after_terminate", true);
    switch (fr->type) {
    case IW_FRAME_MPA_REQUEST:
    case IW_FRAME_MPA_REPLY:
        json_mpa(o, &fr->rr);
        break;
    case IW_FRAME_FPDU:
        json_fpdu(o, r);
        break;
    case IW_FRAME_LOST:
        iw_jw_uint(j, "len", fr->lost_len);
        iw_jw_str(j, "reason", iw_close_str(fr->lost_why));
        iw_jw_str(j, "rfc", iw_close_rfc(fr->lost_why));
        break;
    case IW_FRAME_INCOMPLETE:
        iw_jw_uint(j, "len", fr->wire_len);
        break;
    default:
        break;
    }
    json_notes(j, rec_notes(r));
    json_shadow(j, r->shadow);
    iw_jw_obj_end(j);
    iw_jw_newline(j);
}

/* ---- text ---- */

#define TEXT_INDENT "         "
#define TAG_INDENT "               " /* the width of text_tag's columns */

/* Capture mode: stream, direction and frame columns. */
static void text_tag(FILE *f, const iwd_tag *t) {
    if (!t)
        return;
    if (t->frame)
        fprintf(f, "%3u %-3s %6" PRIu64 " ", t->stream, t->dir ? t->dir : "-", t->frame);
    else
        fprintf(f, "%3u %-3s %6s ", t->stream, t->dir ? t->dir : "-", "-");
}

static void text_hex(FILE *f, const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%02x", p[i]);
}

static void text_verdict(FILE *f, const iw_verdict *v) {
    if (v->kind == IW_VERDICT_OK) {
        fputs("-> ok", f);
    } else if (v->kind == IW_VERDICT_TERM) {
        fprintf(f, "-> TERMINATE %u/%u/0x%02x %s (%s)", iw_term_layer(v->term),
                iw_term_etype(v->term), iw_term_ecode(v->term), iw_term_str(v->term),
                v->rfc ? v->rfc : "");
    } else {
        char id[40];
        close_id_lower(id, sizeof id, v->close);
        fprintf(f, "-> CLOSE %s: %s (%s)", id, iw_close_str(v->close), v->rfc ? v->rfc : "");
    }
}

static void text_mpa(FILE *f, const iw_frame *fr) {
    const iw_mpa_rr *rr = &fr->rr;
    fprintf(f, "MPA %s rev=%u M=%d C=%d", rr->type == IW_MPA_REQUEST ? "Request" : "Reply", rr->rev,
            rr->m, rr->c);
    if (rr->type == IW_MPA_REPLY)
        fprintf(f, " R=%d%s", rr->r, rr->r ? " (rejected)" : "");
    if (rr->rev >= IW_MPA_REV2)
        fprintf(f, " S=%d", rr->s);
    if (rr->enhanced) {
        const iw_mpa_v2 *v = &rr->v2;
        fprintf(f, " %s ird=%u ord=%u", v->p2p ? "p2p" : "client-server", v->ird, v->ord);
        if (v->rtr_send || v->rtr_write || v->rtr_read) {
            const char *sep = " rtr=";
            if (v->rtr_send) {
                fprintf(f, "%ssend", sep);
                sep = ",";
            }
            if (v->rtr_write) {
                fprintf(f, "%swrite", sep);
                sep = ",";
            }
            if (v->rtr_read)
                fprintf(f, "%sread", sep);
        }
    }
    if (rr->pd || !rr->pd_len)
        fprintf(f, " pd=%u", rr->ulp_pd ? rr->ulp_pd_len : 0);
    else
        fprintf(f, " PD_Length=%u", rr->pd_len); /* rejected before the PD was read */
}

static void text_ddp(FILE *f, const iw_ddp_hdr *h) {
    if (h->tagged)
        fprintf(f, "STag=0x%08" PRIx32 " TO=0x%" PRIx64, h->stag, h->to);
    else
        fprintf(f, "QN=%" PRIu32 " MSN=%" PRIu32 " MO=%" PRIu32, h->qn, h->msn, h->mo);
    if (!h->tagged && op_has_inv_stag(ctrl_opcode(h->rsvd_ulp)))
        fprintf(f, " InvSTag=0x%08" PRIx32, h->rsvd_ulp2);
    if (h->last)
        fputs(" L", f);
}

static void text_fpdu(FILE *f, const iwd_rec *r) {
    const iw_frame *fr = r->fr;
    const iw_mpa_fpdu *fp = &fr->fpdu;
    fprintf(f, "FPDU  len=%-5u  ", fp->ulpdu_len);
    if (!r->ddp_ok) {
        fputs("(too short for a DDP header)", f);
    } else {
        const iw_rdmap_msg *m = r->msg;
        fprintf(f, "%s  ", iw_rdmap_opcode_str(m->opcode));
        if (m->ddp.dv != IW_DDP_VERSION || m->rv != IW_RDMAP_VERSION)
            fprintf(f, "DV=%u RV=%u ", m->ddp.dv, m->rv);
        text_ddp(f, &m->ddp);
        if (r->msg_ok && m->payload_len)
            fprintf(f, " data=%zu", m->payload_len);
        if (m->has_hdr) {
            switch (m->opcode) {
            case IW_OP_READ_REQ: {
                const iw_rdmap_read_req *q = &m->u.read_req;
                fprintf(f,
                        "  sink=0x%08" PRIx32 "@0x%" PRIx64 " size=%" PRIu32 " src=0x%08" PRIx32
                        "@0x%" PRIx64,
                        q->sink_stag, q->sink_to, q->read_size, q->src_stag, q->src_to);
                break;
            }
            case IW_OP_TERMINATE: {
                const iw_rdmap_term *t = &m->u.term;
                uint16_t triple = IW_TERM_TRIPLE(t->layer, t->etype, t->ecode);
                fprintf(f, "  error=%u/%u/0x%02x %s%s%s%s", t->layer, t->etype, t->ecode,
                        iw_term_str(triple), t->m ? " M" : "", t->d ? " D" : "", t->r ? " R" : "");
                if (t->m || t->d)
                    fprintf(f, " seg_len=%u", t->ddp_seg_len);
                if (t->d) {
                    fprintf(f, " hdr=[%s ", iw_rdmap_opcode_str(ctrl_opcode(t->ddp.rsvd_ulp)));
                    text_ddp(f, &t->ddp);
                    fputc(']', f);
                }
                if (t->r)
                    fprintf(f, " rreq=[sink=0x%08" PRIx32 "@0x%" PRIx64 " size=%" PRIu32 "]",
                            t->rreq.sink_stag, t->rreq.sink_to, t->rreq.read_size);
                break;
            }
            case IW_OP_ATOMIC_REQ: {
                const iw_rdmap_atomic_req *a = &m->u.atomic_req;
                fprintf(f, "  %s id=%" PRIu32 " STag=0x%08" PRIx32 " TO=0x%" PRIx64,
                        aop_name(a->aopcode), a->req_id, a->stag, a->to);
                if (a->aopcode == IW_ATOMIC_FETCH_ADD)
                    fprintf(f, " add=0x%" PRIx64 " mask=0x%" PRIx64, a->add_swap, a->add_swap_mask);
                else
                    fprintf(f,
                            " swap=0x%" PRIx64 " mask=0x%" PRIx64 " cmp=0x%" PRIx64
                            " cmask=0x%" PRIx64,
                            a->add_swap, a->add_swap_mask, a->compare, a->compare_mask);
                break;
            }
            case IW_OP_ATOMIC_RESP:
                fprintf(f, "  id=%" PRIu32 " orig=0x%" PRIx64, m->u.atomic_resp.req_id,
                        m->u.atomic_resp.orig);
                break;
            case IW_OP_IMM:
            case IW_OP_IMM_SE:
                fputs("  imm=", f);
                text_hex(f, m->u.imm, sizeof m->u.imm);
                break;
            default:
                break;
            }
        }
    }
    if (fp->n_markers)
        fprintf(f, "  markers=%u", fp->n_markers);
    if (!fr->crc_on)
        fputs("  crc=off", f);
    else if (fp->crc == IW_CRC_GOOD)
        fputs("  crc=ok", f);
    else
        fprintf(f, "  crc=BAD(0x%08" PRIx32 ", calc 0x%08" PRIx32 ")", fp->crc_wire, fp->crc_calc);
}

/* The shadow's lines under a record: the rule behind a stateful verdict
 * (what it assumes, the frame it refers to) and the shadow's notes. */
static void text_shadow(FILE *f, const char *ind, const iw_shadow_result *sh) {
    if (!iwd_sh_says(sh))
        return;
    if (sh->rule != IW_SHADOW_RULE_NONE) {
        fprintf(f, "%sstateful %s: %s", ind, iw_shadow_rule_id(sh->rule),
                iw_shadow_rule_str(sh->rule));
        if (shadow_has_expected(sh->rule))
            fprintf(f, " (%s %" PRIu32 ")",
                    sh->rule == IW_SHADOW_RULE_IRD_EXCEEDED ? "IRD"
                    : sh->rule == IW_SHADOW_RULE_MSN_REPLAY ? "lowest open MSN"
                                                            : "MSN due",
                    sh->expected);
        if (sh->has_ref)
            fprintf(f, ", see frame %" PRIu64, sh->ref);
        fputc('\n', f);
        for (unsigned bit = 1; bit && bit <= sh->assume; bit <<= 1)
            if ((sh->assume & bit) && iw_shadow_assume_str(bit))
                fprintf(f, "%s  assumes: %s\n", ind, iw_shadow_assume_str(bit));
    } else if (sh->has_ref && !(sh->notes & IW_SHADOW_NOTE(SENT_AFTER_TERMINATE))) {
        fprintf(f, "%sanswers the request in frame %" PRIu64 "\n", ind, sh->ref);
    }
    if (sh->rtr)
        fprintf(f, "%sRTR (RFC 6581 §9.2)\n", ind);
    for (unsigned n = 0; n < IW_SHADOW_NOTE_COUNT_; n++) {
        if (!(sh->notes & (1u << n)))
            continue;
        fprintf(f, "%sshadow %s: %s", ind, iw_shadow_note_id((iw_shadow_note)n),
                iw_shadow_note_str((iw_shadow_note)n));
        if (n == IW_SHADOW_NOTE_BIT_AFTER_TERMINATE)
            fprintf(f, ", stream ended in frame %" PRIu64, sh->ended_in);
        else if (n == IW_SHADOW_NOTE_BIT_SENT_AFTER_TERMINATE && sh->has_ref)
            fprintf(f, ", its Terminate in frame %" PRIu64, sh->ref);
        fprintf(f, " (%s)\n", iw_shadow_note_rfc((iw_shadow_note)n));
    }
}

static void text_record(iwd_out *o, const iwd_rec *r) {
    FILE *f = o->f;
    const iw_frame *fr = r->fr;
    const char *ind = r->tag ? TAG_INDENT TEXT_INDENT : TEXT_INDENT;
    text_tag(f, r->tag);
    fprintf(f, "%7" PRIu64 "  ", fr->offset);
    switch (fr->type) {
    case IW_FRAME_MPA_REQUEST:
    case IW_FRAME_MPA_REPLY:
        text_mpa(f, fr);
        break;
    case IW_FRAME_FPDU:
        text_fpdu(f, r);
        break;
    case IW_FRAME_LOST:
        fprintf(f, "LOST  %" PRIu64 " octets not framed: %s (%s)", fr->lost_len,
                iw_close_str(fr->lost_why), iw_close_rfc(fr->lost_why));
        break;
    case IW_FRAME_INCOMPLETE:
        fprintf(f, "INCOMPLETE  %zu octets: the input ends inside this frame", fr->wire_len);
        break;
    default:
        break;
    }
    if (fr->type != IW_FRAME_INCOMPLETE) {
        fputs("  ", f);
        text_verdict(f, &r->verdict);
    }
    if (r->after_term)
        fputs("  [after terminate]", f);
    fputc('\n', f);

    uint32_t notes = rec_notes(r);
    for (int n = 0; n < IW_NOTE_COUNT_; n++)
        if (notes & (1u << n))
            fprintf(f, "%snote %s: %s (%s)\n", ind, iw_note_id((iw_note)n), iw_note_str((iw_note)n),
                    iw_note_rfc((iw_note)n));
    text_shadow(f, ind, r->shadow);
    if (!o->payload)
        return;
    if ((fr->type == IW_FRAME_MPA_REQUEST || fr->type == IW_FRAME_MPA_REPLY) && fr->rr.ulp_pd &&
        fr->rr.ulp_pd_len) {
        fprintf(f, "%sprivate data: ", ind);
        text_hex(f, fr->rr.ulp_pd, fr->rr.ulp_pd_len);
        fputc('\n', f);
    } else if (fr->type == IW_FRAME_FPDU && r->msg_ok && r->msg->payload_len) {
        fprintf(f, "%spayload: ", ind);
        text_hex(f, r->msg->payload, r->msg->payload_len);
        fputc('\n', f);
    }
}

void iwd_out_record(iwd_out *o, const iwd_rec *r) {
    if (o->json)
        json_record(o, r);
    else
        text_record(o, r);
}

void iwd_out_summary(iwd_out *o, const iwd_counts *c, uint64_t bytes) {
    if (o->json)
        return;
    fprintf(o->f,
            "-- frames %" PRIu64 ": ok %" PRIu64 ", terminate %" PRIu64 ", close %" PRIu64
            ", after terminate %" PRIu64 "; framing lost %" PRIu64 ", incomplete %" PRIu64
            "; bytes %" PRIu64 "\n",
            c->frames, c->ok, c->term, c->close, c->after_term, c->lost, c->incomplete, bytes);
    if (c->fpdus)
        fprintf(o->f, "-- FPDUs decoded with markers %s, CRC %s\n", c->markers ? "on" : "off",
                c->crc ? "on" : "off");
}

/* ---- capture-mode records ---- */

static const char *ev_type(iwd_ev_type t) {
    switch (t) {
    case IWD_EV_TCP_GAP:
        return "tcp_gap";
    case IWD_EV_TCP_CONFLICT:
        return "tcp_overlap_conflict";
    case IWD_EV_TCP_OOO:
        return "tcp_out_of_order";
    case IWD_EV_UNSYNCED:
        return "unsynced";
    case IWD_EV_NOT_IWARP:
        return "not_iwarp";
    default:
        return "none";
    }
}

static void json_event(iwd_out *o, const iwd_tag *tag, const iwd_event *e) {
    iw_jw *j = &o->j;
    iw_jw_obj_begin(j, NULL);
    json_tag(j, tag);
    iw_jw_uint(j, "offset", e->offset);
    iw_jw_uint(j, "wire_off", e->offset);
    iw_jw_uint(j, "wire_len", e->len);
    iw_jw_str(j, "type", ev_type(e->type));
    iw_jw_null(j, "ulpdu_len");
    iw_jw_null(j, "crc_ok");
    iw_jw_str(j, "verdict", "ok");
    switch (e->type) {
    case IWD_EV_TCP_GAP:
        iw_jw_uint(j, "len", e->len);
        iw_jw_uint(j, "held", e->held);
        iw_jw_str(j, "cause", e->cause);
        iw_jw_str(j, "reason", e->reason);
        break;
    case IWD_EV_TCP_CONFLICT:
        iw_jw_uint(j, "len", e->len);
        iw_jw_uint(j, "differ", e->differ);
        break;
    case IWD_EV_TCP_OOO:
        iw_jw_uint(j, "len", e->len);
        iw_jw_uint(j, "expected", e->expected);
        break;
    case IWD_EV_UNSYNCED:
        iw_jw_uint(j, "len", e->len);
        iw_jw_str(j, "reason", e->reason);
        break;
    case IWD_EV_NOT_IWARP:
        iw_jw_uint(j, "segments", e->segments);
        iw_jw_uint(j, "octets", e->len);
        iw_jw_str(j, "reason", e->reason);
        break;
    }
    iw_jw_obj_end(j);
    iw_jw_newline(j);
}

static void text_event(iwd_out *o, const iwd_tag *tag, const iwd_event *e) {
    FILE *f = o->f;
    text_tag(f, tag);
    if (e->type == IWD_EV_NOT_IWARP)
        fprintf(f, "%7s  ", "-");
    else
        fprintf(f, "%7" PRIu64 "  ", e->offset);
    switch (e->type) {
    case IWD_EV_TCP_GAP:
        fprintf(f, "TCP GAP  %" PRIu64 " octets missing: %s; decoding goes on after it", e->len,
                e->reason);
        break;
    case IWD_EV_TCP_CONFLICT:
        fprintf(f,
                "TCP OVERLAP CONFLICT  %" PRIu64 " of %" PRIu64
                " octets differ from the copy received first (kept)",
                e->differ, e->len);
        break;
    case IWD_EV_TCP_OOO:
        fprintf(f,
                "TCP OUT OF ORDER  %" PRIu64 " octets arrived while offset %" PRIu64
                " was missing: held",
                e->len, e->expected);
        break;
    case IWD_EV_UNSYNCED:
        fprintf(f, "UNSYNCED  %" PRIu64 " octets not decoded: %s", e->len, e->reason);
        break;
    case IWD_EV_NOT_IWARP:
        fprintf(f, "NOT IWARP  %s -> %s, %" PRIu64 " segments, %" PRIu64 " octets: %s",
                tag ? tag->src : "?", tag ? tag->dst : "?", e->segments, e->len, e->reason);
        break;
    }
    fputc('\n', f);
}

void iwd_out_event(iwd_out *o, const iwd_tag *tag, const iwd_event *e) {
    if (o->json)
        json_event(o, tag, e);
    else
        text_event(o, tag, e);
}

void iwd_out_stream_header(iwd_out *o, unsigned stream, const char *dir0, const char *src0,
                           const char *dst0, const char *dir1) {
    if (o->json)
        return;
    fprintf(o->f, "== stream %u: %s %s -> %s, %s the other way\n", stream, dir0, src0, dst0, dir1);
}
