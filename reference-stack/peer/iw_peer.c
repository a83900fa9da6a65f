/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Raw iWARP peer: see iw_peer.h. */
#include "iw_peer.h"

#include <iwarp/crc32c.h>

#include <stdlib.h>
#include <string.h>

/* ---- buffer ---- */

int iw_peer_buf_add(iw_peer_buf *b, const void *data, size_t len) {
    if (b->len + len > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + len)
            cap *= 2;
        uint8_t *n = realloc(b->p, cap);
        if (!n)
            return IW_ERR_NOMEM;
        b->p = n;
        b->cap = cap;
    }
    if (len)
        memcpy(b->p + b->len, data, len);
    b->len += len;
    return 0;
}

void iw_peer_buf_free(iw_peer_buf *b) {
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* ---- sending side ---- */

int iw_peer_init(iw_peer *p) {
    memset(p, 0, sizeof *p);
    p->last_ulpdu = malloc(IW_MPA_ULPDU_MAX);
    if (!p->last_ulpdu)
        return IW_ERR_NOMEM;
    for (int q = 0; q < 4; q++)
        p->msn[q] = 1;
    return 0;
}

void iw_peer_free(iw_peer *p) {
    iw_peer_buf_free(&p->out);
    free(p->last_ulpdu);
    memset(p, 0, sizeof *p);
}

void iw_peer_take(iw_peer *p) { p->out.len = 0; }

static int peer_add(iw_peer *p, const void *data, size_t len) {
    if (p->err)
        return p->err;
    int rc = iw_peer_buf_add(&p->out, data, len);
    if (rc)
        return p->err = rc;
    p->sent += len;
    return 0;
}

void iw_peer_rr_default(iw_mpa_rr *rr, iw_mpa_rr_type type) {
    memset(rr, 0, sizeof *rr);
    rr->type = type;
    rr->c = true; /* RFC 5044 §4.4: CRCs are the default */
    rr->rev = IW_MPA_REV2;
    rr->s = true;
    rr->v2.ird = 16;
    rr->v2.ord = 16;
}

int iw_peer_rr(iw_peer *p, const iw_mpa_rr *rr) {
    uint8_t f[IW_MPA_RR_HDR_LEN + IW_MPA_PD_MAX];
    iw_ssize n = iw_mpa_rr_encode(f, sizeof f, rr);
    if (n < 0)
        return p->err ? p->err : (p->err = (int)n);
    return peer_add(p, f, (size_t)n);
}

int iw_peer_raw(iw_peer *p, const void *data, size_t len) { return peer_add(p, data, len); }

void iw_peer_full_operation(iw_peer *p, bool markers, bool crc) {
    p->pos = 0;
    p->flags = (markers ? IW_MPA_MARKERS : 0) | (crc ? IW_MPA_CRC : 0);
    for (int q = 0; q < 4; q++)
        p->msn[q] = 1;
}

static void put16(uint8_t *b, uint16_t v) {
    b[0] = (uint8_t)(v >> 8);
    b[1] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *b) { return (uint16_t)(b[0] << 8 | b[1]); }

/* Is the wire octet at FPDU offset i (stream position pos + i) a marker octet? */
static bool in_marker(uint32_t pos, size_t i) {
    return ((pos + (uint32_t)i) & (IW_MPA_MARKER_INTERVAL - 1)) < IW_MPA_MARKER_LEN;
}

iw_ssize iw_peer_fpdu_encode(uint8_t *w, size_t cap, uint32_t pos, unsigned flags,
                             const uint8_t *ulpdu, size_t len, const iw_peer_fpdu_opt *opt) {
    static const iw_peer_fpdu_opt none;
    if (!opt)
        opt = &none;
    iw_ssize n = iw_mpa_fpdu_encode(w, cap, pos, flags, ulpdu, len, NULL, 0);
    if (n < 0)
        return n;
    size_t wl = (size_t)n;
    bool markers = flags & IW_MPA_MARKERS;
    /* Wire offset of ULPDU_Length: after a leading marker (RFC 5044 §4.2). */
    size_t hdr_off = markers && iw_mpa_marker_gap(pos) == 0 ? IW_MPA_MARKER_LEN : 0;
    bool recrc = false;
    if (opt->len_override) {
        put16(w + hdr_off, opt->ulpdu_len);
        recrc = true;
    }
    if (opt->lead_delta) {
        if (!hdr_off)
            return IW_ERR_INVALID_ARG;
        put16(w + 2, (uint16_t)(get16(w + 2) + opt->lead_delta));
        recrc = true;
    }
    if (opt->marker_delta) {
        size_t i = 1;
        while (i + IW_MPA_MARKER_LEN <= wl &&
               !(markers && iw_mpa_marker_gap(pos + (uint32_t)i) == 0))
            i++;
        if (i + IW_MPA_MARKER_LEN > wl)
            return IW_ERR_INVALID_ARG;
        put16(w + i + 2, (uint16_t)(get16(w + i + 2) + opt->marker_delta));
        recrc = true;
    }
    if (opt->pad_set) {
        /* PAD: the last non-marker octets before the CRC field. */
        unsigned left = iw_mpa_pad_len(len);
        for (size_t i = wl - IW_MPA_CRC_LEN; left && i-- > 0;)
            if (!in_marker(pos, i)) {
                w[i] = opt->pad;
                left--;
            }
        recrc = true;
    }
    size_t crc_off = wl - IW_MPA_CRC_LEN;
    if (recrc && (flags & IW_MPA_CRC)) {
        /* §4.4 coverage: every wire octet before the CRC field (a leading
         * marker and one just before the CRC included); FPDUs and markers
         * are both 4-aligned, so no marker splits the CRC. */
        iw_crc32c_put(w + crc_off, iw_crc32c(w, crc_off));
    }
    if (opt->crc_zero)
        iw_crc32c_put(w + crc_off, 0);
    else if (opt->crc_xor)
        iw_crc32c_put(w + crc_off, iw_crc32c_get(w + crc_off) ^ opt->crc_xor);
    return (iw_ssize)wl;
}

int iw_peer_fpdu(iw_peer *p, const uint8_t *ulpdu, size_t len, const iw_peer_fpdu_opt *opt) {
    if (p->err)
        return p->err;
    uint8_t *w = malloc(IW_MPA_FPDU_WIRE_MAX);
    if (!w)
        return p->err = IW_ERR_NOMEM;
    iw_ssize n = iw_peer_fpdu_encode(w, IW_MPA_FPDU_WIRE_MAX, p->pos, p->flags, ulpdu, len, opt);
    if (n < 0) {
        free(w);
        /* A patch with nothing to patch sent nothing: not sticky. */
        return n == IW_ERR_INVALID_ARG ? (int)n : (p->err = (int)n);
    }
    size_t wl = (size_t)n;
    memcpy(p->last_ulpdu, ulpdu, len);
    p->last_ulpdu_len = len;
    p->last_fpdu_off = p->sent;
    p->last_fpdu_len = wl;
    int rc = peer_add(p, w, wl);
    free(w);
    p->pos += (uint32_t)wl;
    return rc;
}

void iw_peer_msg_init(const iw_peer *p, iw_rdmap_msg *m, unsigned opcode) {
    iw_rdmap_msg_init(m, opcode); /* an undefined opcode keeps QN 0 */
    if (!m->ddp.tagged)
        m->ddp.msn = p->msn[m->ddp.qn];
}

iw_ssize iw_peer_seg(uint8_t *out, size_t cap, const iw_rdmap_msg *m, const void *pay,
                     size_t paylen) {
    iw_ssize hl = iw_rdmap_encode_hdr(out, cap, m);
    if (hl < 0)
        return hl;
    if (cap - (size_t)hl < paylen)
        return IW_ERR_NOBUF;
    if (paylen)
        memcpy(out + hl, pay, paylen);
    return hl + (iw_ssize)paylen;
}

int iw_peer_msg(iw_peer *p, iw_rdmap_msg *m, const void *pay, size_t paylen,
                const iw_peer_fpdu_opt *opt) {
    if (p->err)
        return p->err;
    bool next_msn =
        !m->ddp.tagged && m->ddp.last && m->ddp.qn < 4 && m->ddp.msn == p->msn[m->ddp.qn];
    uint8_t *seg = malloc(IW_MPA_ULPDU_MAX);
    if (!seg)
        return p->err = IW_ERR_NOMEM;
    iw_ssize n = iw_peer_seg(seg, IW_MPA_ULPDU_MAX, m, pay, paylen);
    int rc = n < 0 ? (p->err = (int)n) : iw_peer_fpdu(p, seg, (size_t)n, opt);
    free(seg);
    if (!rc && next_msn)
        p->msn[m->ddp.qn]++;
    return rc;
}

int iw_peer_write(iw_peer *p, uint32_t stag, uint64_t to, const void *data, size_t len) {
    iw_rdmap_msg m;
    iw_peer_msg_init(p, &m, IW_OP_WRITE);
    m.ddp.stag = stag;
    m.ddp.to = to;
    return iw_peer_msg(p, &m, data, len, NULL);
}

int iw_peer_read_resp(iw_peer *p, uint32_t stag, uint64_t to, const void *data, size_t len) {
    iw_rdmap_msg m;
    iw_peer_msg_init(p, &m, IW_OP_READ_RESP);
    m.ddp.stag = stag;
    m.ddp.to = to;
    return iw_peer_msg(p, &m, data, len, NULL);
}

int iw_peer_send(iw_peer *p, unsigned opcode, uint32_t inv_stag, const void *data, size_t len) {
    iw_rdmap_msg m;
    iw_peer_msg_init(p, &m, opcode);
    if (opcode == IW_OP_SEND_INV || opcode == IW_OP_SEND_SE_INV)
        m.ddp.rsvd_ulp2 = inv_stag; /* RFC 5040 §4.3 */
    return iw_peer_msg(p, &m, data, len, NULL);
}

int iw_peer_read_req(iw_peer *p, uint32_t sink_stag, uint64_t sink_to, uint32_t size,
                     uint32_t src_stag, uint64_t src_to) {
    iw_rdmap_msg m;
    iw_peer_msg_init(p, &m, IW_OP_READ_REQ);
    m.u.read_req = (iw_rdmap_read_req){sink_stag, sink_to, size, src_stag, src_to};
    return iw_peer_msg(p, &m, NULL, 0, NULL);
}

int iw_peer_atomic_req(iw_peer *p, const iw_rdmap_atomic_req *a) {
    iw_rdmap_msg m;
    iw_peer_msg_init(p, &m, IW_OP_ATOMIC_REQ);
    m.u.atomic_req = *a;
    return iw_peer_msg(p, &m, NULL, 0, NULL);
}

int iw_peer_imm(iw_peer *p, bool se, const uint8_t imm[IW_RDMAP_IMM_LEN]) {
    iw_rdmap_msg m;
    iw_peer_msg_init(p, &m, se ? IW_OP_IMM_SE : IW_OP_IMM);
    memcpy(m.u.imm, imm, IW_RDMAP_IMM_LEN);
    return iw_peer_msg(p, &m, NULL, 0, NULL);
}

/* ---- receiving side ---- */

static iw_peer_frame *trace_push(iw_peer_trace *t) {
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        iw_peer_frame *v = realloc(t->v, cap * sizeof *v);
        if (!v)
            return NULL;
        t->v = v;
        t->cap = cap;
    }
    iw_peer_frame *f = &t->v[t->n++];
    memset(f, 0, sizeof *f);
    return f;
}

static int trace_add(iw_peer_trace *t, const iw_frame *fr) {
    iw_peer_frame *f = trace_push(t);
    if (!f)
        return IW_ERR_NOMEM;
    f->type = fr->type;
    f->verdict = fr->verdict;
    f->offset = fr->offset;
    f->wire_off = fr->wire_off;
    f->wire_len = fr->wire_len;
    f->pos = fr->pos;
    if (fr->type == IW_FRAME_MPA_REQUEST || fr->type == IW_FRAME_MPA_REPLY) {
        f->rr = fr->rr;
        if (fr->rr.pd && fr->rr.pd_len <= IW_MPA_PD_MAX) {
            memcpy(f->pd, fr->rr.pd, fr->rr.pd_len);
            f->rr.ulp_pd = fr->rr.ulp_pd ? f->pd + (fr->rr.ulp_pd - fr->rr.pd) : NULL;
            f->rr.pd = f->pd;
        } else {
            f->rr.pd = f->rr.ulp_pd = NULL;
        }
    } else if (fr->type == IW_FRAME_FPDU) {
        const iw_mpa_fpdu *fp = &fr->fpdu;
        f->ulpdu_len = fp->ulpdu_len;
        f->n_markers = fp->n_markers;
        f->marker_ok = fp->marker_ok;
        f->crc = fp->crc;
        f->ulpdu = malloc(fp->ulpdu_len ? fp->ulpdu_len : 1);
        if (!f->ulpdu)
            return IW_ERR_NOMEM;
        if (fp->ulpdu_len && fp->ulpdu)
            memcpy(f->ulpdu, fp->ulpdu, fp->ulpdu_len);
        iw_rdmap_decode(&f->msg, f->ulpdu, f->ulpdu_len, &f->rdmap_verdict);
    }
    return 0;
}

int iw_peer_decode(iw_peer_trace *t, const uint8_t *stream, size_t len, const iw_df_cfg *cfg) {
    iw_deframer *d = malloc(sizeof *d);
    if (!d)
        return IW_ERR_NOMEM;
    iw_deframer_init(d, cfg);
    iw_frame fr;
    size_t off = 0;
    int rc = 0;
    while (off < len && !rc) {
        iw_ssize n = iw_deframer_feed(d, stream + off, len - off, &fr);
        if (n < 0) {
            rc = (int)n;
            break;
        }
        off += (size_t)n;
        if (fr.type != IW_FRAME_NONE)
            rc = trace_add(t, &fr);
        else if (n == 0)
            break;
    }
    while (!rc && iw_deframer_finish(d, &fr))
        rc = trace_add(t, &fr);
    free(d);
    return rc;
}

void iw_peer_trace_free(iw_peer_trace *t) {
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i].ulpdu);
    free(t->v);
    memset(t, 0, sizeof *t);
}

size_t iw_peer_count_op(const iw_peer_trace *t, unsigned opcode) {
    size_t k = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].type == IW_FRAME_FPDU && t->v[i].rdmap_verdict.kind == IW_VERDICT_OK &&
            t->v[i].msg.opcode == opcode)
            k++;
    return k;
}
