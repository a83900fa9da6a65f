/* SPDX-License-Identifier: GPL-2.0-or-later */
/* packet-iwarpkit-rdmap.c
 * DDP (RFC 5041) and RDMAP (RFC 5040, RFC 7306) over one MPA ULPDU. Part of
 * the iwarpkit Wireshark plugin.
 *
 * iw_rdmap_decode() decodes the DDP header, the RDMAP header of every
 * opcode (Immediate Data and Atomics included) and the Terminate's copied
 * DDP / Read Request headers, and returns the Terminate a conformant
 * receiver would send (stateless checks). libiwarp's shadow (iw_shadow,
 * iwk_conv.shadow) runs the engine's receive-side checks over the
 * conversation and returns the stateful verdicts: MSN replay, QN 1/2/3
 * MSNs, IRD, Read/Atomic Responses against the oldest outstanding request,
 * STags the capture shows invalidated, "after Terminate", and the notes
 * (MSN and MO sequence, the RFC 6581 RTR, Atomic Request Identifiers). The
 * shadow is the only owner of stateful analysis: it knows what a capture
 * cannot show (mid-stream start, gaps, a side that terminated) and stays
 * silent there; request/response links follow the request it matched a
 * response with. This file keeps only message grouping for reassembly.
 * Checks that need
 * registered memory (STag, bounds, access rights against regions; RFC 5041
 * §7.1, RFC 5040 §7.2) or posted buffers cannot be made from a capture.
 *
 * Payloads go to Wireshark's "iwarp_ddp_rdmap" heuristic list with a struct
 * rdmapinfo, as the built-in dissector does, so SMB Direct and RPC-over-RDMA
 * decode on top. Untagged messages are reassembled by (direction, QN, MSN,
 * MO) and tagged ones by (direction, STag, TO); a reassembled Send is what
 * the heuristic list gets. */
#include <stdarg.h>
#include <string.h>

#include <epan/conversation.h>
#include <epan/prefs.h>
#include <epan/proto_data.h>
#include <epan/reassemble.h>
#include <epan/tap.h>
#include <epan/exceptions.h>
#include <epan/show_exception.h>
#include <epan/dissectors/packet-iwarp-ddp-rdmap.h>

#include "packet-iwarpkit.h"
#include "packet-iwarpkit-storage.h"

int proto_iwk_ddp = -1;
int proto_iwk_rdmap = -1;
int iwk_tap = -1;

static gboolean pref_reassemble = TRUE;
/* Tagged data is placed segment by segment (RFC 5041 §3) and no ULP takes a
 * tagged message whole, so by default a multi-segment tagged message is
 * only linked (its first and last frame, its length): copying every Write
 * and Read Response once more for display was most of the plugin's cost
 * on bulk transfers (docs/wireshark-plugin.md, Performance). */
static gboolean pref_reassemble_tagged = FALSE;
static heur_dissector_list_t rdmap_heur_list;

/* DDP */
static int hf_ddp_ctrl = -1;
static int hf_ddp_t = -1;
static int hf_ddp_l = -1;
static int hf_ddp_rsvd = -1;
static int hf_ddp_dv = -1;
static int hf_ddp_stag = -1;
static int hf_ddp_to = -1;
static int hf_ddp_qn = -1;
static int hf_ddp_msn = -1;
static int hf_ddp_mo = -1;
static int hf_ddp_payload_len = -1;
static int hf_ddp_msg_len = -1;
/* RDMAP */
static int hf_ctrl = -1;
static int hf_rv = -1;
static int hf_rsv = -1;
static int hf_opcode = -1;
static int hf_inv_stag = -1;
static int hf_rreq = -1;
static int hf_sink_stag = -1;
static int hf_sink_to = -1;
static int hf_read_size = -1;
static int hf_src_stag = -1;
static int hf_src_to = -1;
static int hf_term = -1;
static int hf_term_layer = -1;
static int hf_term_etype = -1;
static int hf_term_ecode = -1;
static int hf_term_triple = -1;
static int hf_term_m = -1;
static int hf_term_d = -1;
static int hf_term_r = -1;
static int hf_term_rsvd = -1;
static int hf_term_seg_len = -1;
static int hf_term_ddp_hdr = -1;
static int hf_term_rdma_hdr = -1;
static int hf_term_answers = -1;
static int hf_imm = -1;
static int hf_atomic = -1;
static int hf_atomic_rsvd = -1;
static int hf_atomic_aop = -1;
static int hf_atomic_req_id = -1;
static int hf_atomic_stag = -1;
static int hf_atomic_to = -1;
static int hf_atomic_add_swap = -1;
static int hf_atomic_add_swap_mask = -1;
static int hf_atomic_compare = -1;
static int hf_atomic_compare_mask = -1;
static int hf_atomic_orig = -1;
static int hf_verdict = -1;
static int hf_shadow_rule = -1;
static int hf_shadow_ref = -1;
static int hf_shadow_assumes = -1;
static int hf_rtr = -1;
static int hf_response_in = -1;
static int hf_request_in = -1;
static int hf_response_time = -1;
static int hf_qp = -1;
/* reassembly */
static int hf_fragments = -1;
static int hf_fragment = -1;
static int hf_fragment_overlap = -1;
static int hf_fragment_overlap_conflicts = -1;
static int hf_fragment_multiple_tails = -1;
static int hf_fragment_too_long = -1;
static int hf_fragment_error = -1;
static int hf_fragment_count = -1;
static int hf_reassembled_in = -1;
static int hf_msg_offset = -1;
static int hf_msg_first = -1;
static int hf_msg_last = -1;
static int hf_msg_len = -1;
static int hf_reassembled_length = -1;
static int hf_reassembled_data = -1;

static gint ett_ddp = -1;
static gint ett_ddp_ctrl = -1;
static gint ett_rdmap = -1;
static gint ett_rdmap_ctrl = -1;
static gint ett_rreq = -1;
static gint ett_term = -1;
static gint ett_term_ddp = -1;
static gint ett_term_rdma = -1;
static gint ett_atomic = -1;
static gint ett_fragment = -1;
static gint ett_fragments = -1;

static expert_field ei_terminate = EI_INIT;
static expert_field ei_not_tracked = EI_INIT;

static reassembly_table iwk_reassembly_table;

static const fragment_items iwk_frag_items = {&ett_fragment,
                                              &ett_fragments,
                                              &hf_fragments,
                                              &hf_fragment,
                                              &hf_fragment_overlap,
                                              &hf_fragment_overlap_conflicts,
                                              &hf_fragment_multiple_tails,
                                              &hf_fragment_too_long,
                                              &hf_fragment_error,
                                              &hf_fragment_count,
                                              &hf_reassembled_in,
                                              &hf_reassembled_length,
                                              &hf_reassembled_data,
                                              "iWARP message fragments"};

static const value_string layer_vals[] = {{0, "RDMAP"}, {1, "DDP"}, {2, "LLP (MPA)"}, {0, NULL}};
static const value_string aop_vals[] = {
    {IW_ATOMIC_FETCH_ADD, "FetchAdd"}, {1, "Reserved"}, {IW_ATOMIC_CMP_SWAP, "CmpSwap"}, {0, NULL}};

/* A tagged message over several segments, when its data is not reassembled:
 * where it begins and ends, and its length once the last segment is seen. */
typedef struct iwk_span {
    guint32 first, last; /* frames; last 0 until seen */
    guint32 len;
} iwk_span;

/* First-pass results for one DDP segment, keyed by its FPDU's sequence
 * number (proto_iwk_rdmap's per-frame data). */
typedef struct iwk_seg {
    iwk_req *req; /* request this segment is, or answers */
    gboolean is_resp;
    guint32 reasm_id;        /* 0: not reassembled */
    guint32 reasm_off;       /* and the offset in an iwk_span's message */
    iwk_span *span;          /* a tagged message linked, not reassembled */
    iw_shadow_result shadow; /* the stateful verdict and notes */
    guint32 answers;         /* Terminate: the frame of the segment its copied DDP header names */
} iwk_seg;

/* A DDP segment's identity, as a Terminate's copied header names it
 * (RFC 5040 §4.8): tagged by STag and TO, untagged by QN, MSN and MO. */
typedef struct iwk_seg_key {
    guint8 dir, tagged;
    guint32 a, b; /* STag, - / QN, MSN */
    guint64 c;    /* TO / MO */
} iwk_seg_key;

/* Every key bit mixed into every hash bit (murmur3's 64-bit finaliser):
 * the index below uses the low bits, and MSNs, MOs and TOs in multiples of
 * a power of two must not land in a few runs of slots. */
static guint64 mix64(guint64 h) {
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ull;
    h ^= h >> 33;
    return h;
}

static guint64 seg_key_hash(const iwk_seg_key *k) {
    return mix64(k->c ^ ((guint64)k->a << 32 | k->b) * 0x9E3779B97F4A7C15ull ^
                 (guint64)(k->dir << 1 | k->tagged) << 62);
}

static gboolean seg_key_equal(const iwk_seg_key *a, const iwk_seg_key *b) {
    return a->dir == b->dir && a->tagged == b->tagged && a->a == b->a && a->b == b->b &&
           a->c == b->c;
}

/* Every DDP segment of a conversation, key -> latest frame, for linking a
 * Terminate to the segment it answers. One append per FPDU on the first
 * pass, to a log written in order; the hash index over it (open
 * addressing, linear probing, keys inline) is built at the conversation's
 * first Terminate and kept from then on. Most conversations never carry a
 * Terminate, and an index insert per FPDU (a wmem_map before: an
 * allocation and dependent cache misses) was a sixth of the plugin's time
 * on a 100 MB capture. */
typedef struct iwk_seg_slot {
    iwk_seg_key k;
    guint32 frame; /* 0: empty (frame numbers start at 1) */
} iwk_seg_slot;

typedef struct iwk_seg_index {
    iwk_seg_slot *log; /* every segment in capture order */
    guint32 nlog, caplog;
    iwk_seg_slot *v; /* the index; NULL until the first lookup */
    guint32 mask;    /* capacity - 1, capacity a power of two */
    guint32 n;
} iwk_seg_index;

static iwk_seg_slot *seg_index_find(iwk_seg_slot *v, guint32 mask, const iwk_seg_key *k) {
    for (guint32 i = (guint32)seg_key_hash(k) & mask;; i = (i + 1) & mask)
        if (!v[i].frame || seg_key_equal(&v[i].k, k))
            return &v[i];
}

static void seg_index_add(iwk_seg_index *x, const iwk_seg_slot *e) {
    if ((x->n + 1) * 4 > (x->mask + 1) * 3) {
        /* Kept at most 3/4 full: double, and re-place every key. */
        guint32 cap = (x->mask + 1) * 2;
        iwk_seg_slot *nv = wmem_alloc0_array(wmem_file_scope(), iwk_seg_slot, cap);
        for (guint32 i = 0; i <= x->mask; i++)
            if (x->v[i].frame)
                *seg_index_find(nv, cap - 1, &x->v[i].k) = x->v[i];
        wmem_free(wmem_file_scope(), x->v);
        x->v = nv;
        x->mask = cap - 1;
    }
    iwk_seg_slot *s = seg_index_find(x->v, x->mask, &e->k);
    if (!s->frame)
        x->n++;
    *s = *e; /* the latest frame with this key wins */
}

static guint32 seg_index_lookup(iwk_seg_index *x, const iwk_seg_key *k) {
    if (!x->v) {
        guint32 cap = 256;
        while (cap / 4 * 3 <= x->nlog)
            cap *= 2;
        x->v = wmem_alloc0_array(wmem_file_scope(), iwk_seg_slot, cap);
        x->mask = cap - 1;
        for (guint32 i = 0; i < x->nlog; i++)
            seg_index_add(x, &x->log[i]);
        wmem_free(wmem_file_scope(), x->log); /* the index has it all now */
        x->log = NULL;
        x->nlog = x->caplog = 0;
    }
    return seg_index_find(x->v, x->mask, k)->frame;
}

static void seg_index_put(iwk_seg_index *x, const iwk_seg_key *k, guint32 frame) {
    iwk_seg_slot e;
    e.k = *k;
    e.frame = frame;
    if (x->v) {
        seg_index_add(x, &e);
        return;
    }
    if (x->nlog == x->caplog) {
        x->caplog = x->caplog ? x->caplog * 2 : 256;
        x->log =
            (iwk_seg_slot *)wmem_realloc(wmem_file_scope(), x->log, x->caplog * sizeof *x->log);
    }
    x->log[x->nlog++] = e;
}

static iwk_seg_key seg_key(int dir, const iw_ddp_hdr *h) {
    iwk_seg_key k;
    memset(&k, 0, sizeof k);
    k.dir = (guint8)dir;
    k.tagged = h->tagged;
    if (h->tagged) {
        k.a = h->stag;
        k.c = h->to;
    } else {
        k.a = h->qn;
        k.b = h->msn;
        k.c = h->mo;
    }
    return k;
}

/* First pass: remember where each segment was; a Terminate with a copied
 * header links to the latest segment the other direction sent with it. */
static void link_term(packet_info *pinfo, iwk_fpdu_ctx *ctx, const iw_rdmap_msg *m, iwk_seg *s) {
    iwk_conv *c = ctx->conv;
    if (!c->segs)
        c->segs = wmem_new0(wmem_file_scope(), iwk_seg_index);
    if (m->opcode == IW_OP_TERMINATE && m->has_hdr && m->u.term.d) {
        iwk_seg_key k = seg_key(!ctx->d, &m->u.term.ddp);
        s->answers = seg_index_lookup(c->segs, &k);
    }
    iwk_seg_key k = seg_key(ctx->d, &m->ddp);
    seg_index_put(c->segs, &k, pinfo->num);
}

/* A tagged message in progress on one STag. */
typedef struct iwk_tmsg {
    gboolean in_msg;
    guint64 start_to;
    guint64 next_to;
    guint32 id;
    iwk_span *span;
    iwk_req *req; /* Read Response: the request it answers */
} iwk_tmsg;

/* ---------------- header fields from decoded values ---------------- */

/* The same headers appear as themselves and as the copies a Terminate
 * carries (RFC 5040 §4.8); the copies get their own filter names
 * (iwk_rdmap.term.ddp.*, .term.rdmap.*, .term.rreq.*) so that a filter on
 * a real header never matches a Terminate that quotes one. */
static int hf_tddp_ctrl = -1, hf_tddp_t = -1, hf_tddp_l = -1, hf_tddp_rsvd = -1, hf_tddp_dv = -1,
           hf_tddp_stag = -1, hf_tddp_to = -1, hf_tddp_qn = -1, hf_tddp_msn = -1, hf_tddp_mo = -1;
static int hf_tctrl = -1, hf_trv = -1, hf_trsv = -1, hf_topcode = -1;
static int hf_tsink_stag = -1, hf_tsink_to = -1, hf_tread_size = -1, hf_tsrc_stag = -1,
           hf_tsrc_to = -1;

typedef struct {
    int *ctrl, *t, *l, *rsvd, *dv, *stag, *to, *qn, *msn, *mo;
} ddp_hfs;
typedef struct {
    int *ctrl, *rv, *rsv, *opcode;
} ctrl_hfs;
typedef struct {
    int *sink_stag, *sink_to, *read_size, *src_stag, *src_to;
} rreq_hfs;

static const ddp_hfs ddp_own = {&hf_ddp_ctrl, &hf_ddp_t,  &hf_ddp_l,  &hf_ddp_rsvd, &hf_ddp_dv,
                                &hf_ddp_stag, &hf_ddp_to, &hf_ddp_qn, &hf_ddp_msn,  &hf_ddp_mo};
static const ddp_hfs ddp_copy = {&hf_tddp_ctrl, &hf_tddp_t,    &hf_tddp_l,  &hf_tddp_rsvd,
                                 &hf_tddp_dv,   &hf_tddp_stag, &hf_tddp_to, &hf_tddp_qn,
                                 &hf_tddp_msn,  &hf_tddp_mo};
static const ctrl_hfs ctrl_own = {&hf_ctrl, &hf_rv, &hf_rsv, &hf_opcode};
static const ctrl_hfs ctrl_copy = {&hf_tctrl, &hf_trv, &hf_trsv, &hf_topcode};
static const rreq_hfs rreq_own = {&hf_sink_stag, &hf_sink_to, &hf_read_size, &hf_src_stag,
                                  &hf_src_to};
static const rreq_hfs rreq_copy = {&hf_tsink_stag, &hf_tsink_to, &hf_tread_size, &hf_tsrc_stag,
                                   &hf_tsrc_to};

static guint8 ddp_ctrl_octet(const iw_ddp_hdr *h) {
    return (guint8)((h->tagged ? IW_DDP_CTRL_T : 0) | (h->last ? IW_DDP_CTRL_L : 0) |
                    (h->rsvd << 2) | (h->dv & IW_DDP_CTRL_DV));
}

/* DDP header fields at off (RFC 5041 §4.1-4.3). */
static proto_item *add_ddp_hdr(proto_tree *tree, tvbuff_t *tvb, guint off, const iw_ddp_hdr *h,
                               int hf_parent, int ett, const ddp_hfs *f) {
    guint hl = h->tagged ? IW_DDP_TAGGED_HDR_LEN : IW_DDP_UNTAGGED_HDR_LEN;
    proto_item *di = hf_parent == proto_iwk_ddp
                         ? proto_tree_add_item(tree, proto_iwk_ddp, tvb, off, hl, ENC_NA)
                         : proto_tree_add_item(tree, hf_parent, tvb, off, hl, ENC_NA);
    proto_tree *dt = proto_item_add_subtree(di, ett);
    guint8 ctrl = ddp_ctrl_octet(h);
    proto_item *ci = proto_tree_add_uint(dt, *f->ctrl, tvb, off, 1, ctrl);
    proto_tree *ct = proto_item_add_subtree(ci, ett_ddp_ctrl);
    proto_tree_add_boolean(ct, *f->t, tvb, off, 1, ctrl);
    proto_tree_add_boolean(ct, *f->l, tvb, off, 1, ctrl);
    proto_tree_add_uint(ct, *f->rsvd, tvb, off, 1, ctrl);
    proto_tree_add_uint(ct, *f->dv, tvb, off, 1, ctrl);
    if (h->tagged) {
        proto_tree_add_uint(dt, *f->stag, tvb, off + 2, 4, h->stag);
        proto_tree_add_uint64(dt, *f->to, tvb, off + 6, 8, h->to);
        proto_item_append_text(di, ", Tagged, STag 0x%08x, TO 0x%" G_GINT64_MODIFIER "x%s", h->stag,
                               h->to, h->last ? ", Last" : "");
    } else {
        proto_tree_add_uint(dt, *f->qn, tvb, off + 6, 4, h->qn);
        proto_tree_add_uint(dt, *f->msn, tvb, off + 10, 4, h->msn);
        proto_tree_add_uint(dt, *f->mo, tvb, off + 14, 4, h->mo);
        proto_item_append_text(di, ", Untagged, QN %u, MSN %u, MO %u%s", h->qn, h->msn, h->mo,
                               h->last ? ", Last" : "");
    }
    return di;
}

/* RDMAP Control octet (RFC 5040 §4.1), from DDP's RsvdULP[0:7]. */
static void add_rdmap_ctrl(proto_tree *tree, tvbuff_t *tvb, guint off, guint8 ctrl,
                           const ctrl_hfs *f) {
    proto_item *ci = proto_tree_add_uint(tree, *f->ctrl, tvb, off, 1, ctrl);
    proto_tree *ct = proto_item_add_subtree(ci, ett_rdmap_ctrl);
    proto_tree_add_uint(ct, *f->rv, tvb, off, 1, ctrl);
    proto_tree_add_uint(ct, *f->rsv, tvb, off, 1, ctrl);
    proto_tree_add_uint(ct, *f->opcode, tvb, off, 1, ctrl);
}

static void add_read_req(proto_tree *tree, tvbuff_t *tvb, guint off, const iw_rdmap_read_req *r,
                         int hf_parent, const rreq_hfs *f) {
    proto_item *ri = proto_tree_add_item(tree, hf_parent, tvb, off, IW_RDMAP_READ_REQ_LEN, ENC_NA);
    proto_tree *rt = proto_item_add_subtree(ri, ett_rreq);
    proto_tree_add_uint(rt, *f->sink_stag, tvb, off, 4, r->sink_stag);
    proto_tree_add_uint64(rt, *f->sink_to, tvb, off + 4, 8, r->sink_to);
    proto_tree_add_uint(rt, *f->read_size, tvb, off + 12, 4, r->read_size);
    proto_tree_add_uint(rt, *f->src_stag, tvb, off + 16, 4, r->src_stag);
    proto_tree_add_uint64(rt, *f->src_to, tvb, off + 20, 8, r->src_to);
}

/* The Info column text, built only when there are columns to fill:
 * tshark -V, -q -z ... and the first pass of -2 have none (pinfo->cinfo
 * is NULL), and formatting it per FPDU there is wasted. */
static void info_add(wmem_strbuf_t *info, const char *s) {
    if (info)
        wmem_strbuf_append(info, s);
}

static void info_printf(wmem_strbuf_t *info, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void info_printf(wmem_strbuf_t *info, const char *fmt, ...) {
    if (!info)
        return;
    va_list ap;
    va_start(ap, fmt);
    wmem_strbuf_append_vprintf(info, fmt, ap);
    va_end(ap);
}

/* Terminate header (RFC 5040 §4.8): the copied DDP header is sized by its
 * own T bit and decoded as a real header, as is the Read Request header. */
static void add_term(proto_tree *tree, tvbuff_t *tvb, guint off, const iw_rdmap_term *t,
                     packet_info *pinfo, wmem_strbuf_t *info) {
    proto_item *ti = proto_tree_add_item(tree, hf_term, tvb, off, -1, ENC_NA);
    proto_tree *tt = proto_item_add_subtree(ti, ett_term);
    guint16 triple = IW_TERM_TRIPLE(t->layer, t->etype, t->ecode);
    proto_tree_add_uint(tt, hf_term_layer, tvb, off, 1, t->layer);
    proto_tree_add_uint(tt, hf_term_etype, tvb, off, 1, t->etype);
    proto_tree_add_uint(tt, hf_term_ecode, tvb, off + 1, 1, t->ecode);
    proto_item *xi =
        proto_tree_add_uint_format_value(tt, hf_term_triple, tvb, off, 2, triple, "%u/%u/0x%02x %s",
                                         t->layer, t->etype, t->ecode, iw_term_str(triple));
    proto_item_set_generated(xi);
    guint8 bits = (guint8)((t->m ? 0x80 : 0) | (t->d ? 0x40 : 0) | (t->r ? 0x20 : 0));
    proto_tree_add_boolean(tt, hf_term_m, tvb, off + 2, 1, bits);
    proto_tree_add_boolean(tt, hf_term_d, tvb, off + 2, 1, bits);
    proto_tree_add_boolean(tt, hf_term_r, tvb, off + 2, 1, bits);
    proto_tree_add_uint(tt, hf_term_rsvd, tvb, off + 2, 2, t->rsvd);
    proto_item_append_text(ti, ": %u/%u/0x%02x %s", t->layer, t->etype, t->ecode,
                           iw_term_str(triple));
    info_printf(info, " %u/%u/0x%02x (%s)", t->layer, t->etype, t->ecode, iw_term_str(triple));
    expert_add_info_format(pinfo, ti, &ei_terminate, "Terminate received: %u/%u/0x%02x %s (%s)",
                           t->layer, t->etype, t->ecode, iw_term_str(triple),
                           iw_term_rfc(triple) ? iw_term_rfc(triple) : "unregistered");
    if (t->siw_layout) {
        /* libiwarp read the control in siw's bit order (iw_rdmap.c
         * term_ctrl_siw): say so, and what the RFC order would have said. */
        guint8 b2 = tvb_get_guint8(tvb, off + 2);
        iwk_expert_note_msg(pinfo, ti, IW_NOTE_BIT_TERM_SIW_LAYOUT,
                            "Linux siw Terminate layout (little-endian bitfield, siw's "
                            "iwarp.h): most likely meant %u/%u/0x%02x%s%s%s; in RFC 5040 §4.8 "
                            "order it reads %u/%u/0x%02x, M/D/R clear, reserved 0x%04x",
                            t->layer, t->etype, t->ecode, t->m ? ", M" : "", t->d ? ", D" : "",
                            t->r ? ", R" : "", t->etype, t->layer, t->ecode,
                            (guint)(b2 & 0x1F) << 8 | tvb_get_guint8(tvb, off + 3));
        proto_item_append_text(ti, " [Linux siw bit order]");
        info_add(info, " [siw layout]");
    }
    guint o = off + IW_RDMAP_TERM_CTRL_LEN;
    if (t->m || t->d) {
        proto_tree_add_uint(tt, hf_term_seg_len, tvb, o, 2, t->ddp_seg_len);
        o += 2;
    }
    if (t->d && t->ddp_raw_len) {
        proto_item *di = add_ddp_hdr(tt, tvb, o, &t->ddp, hf_term_ddp_hdr, ett_term_ddp, &ddp_copy);
        proto_tree *dt = proto_item_get_subtree(di);
        add_rdmap_ctrl(dt, tvb, o + 1, t->ddp.rsvd_ulp, &ctrl_copy);
        proto_item_append_text(di, " (%s)",
                               iw_rdmap_opcode_str(t->ddp.rsvd_ulp & IW_RDMAP_CTRL_OPCODE));
        o += (guint)t->ddp_raw_len;
    }
    if (t->r)
        add_read_req(tt, tvb, o, &t->rreq, hf_term_rdma_hdr, &rreq_copy);
}

static void add_atomic_req(proto_tree *tree, tvbuff_t *tvb, guint off,
                           const iw_rdmap_atomic_req *a) {
    proto_item *ai =
        proto_tree_add_item(tree, hf_atomic, tvb, off, IW_RDMAP_ATOMIC_REQ_LEN, ENC_NA);
    proto_tree *at = proto_item_add_subtree(ai, ett_atomic);
    proto_tree_add_uint(at, hf_atomic_rsvd, tvb, off, 4, a->rsvd);
    proto_tree_add_uint(at, hf_atomic_aop, tvb, off, 4, a->aopcode);
    proto_tree_add_uint(at, hf_atomic_req_id, tvb, off + 4, 4, a->req_id);
    proto_tree_add_uint(at, hf_atomic_stag, tvb, off + 8, 4, a->stag);
    proto_tree_add_uint64(at, hf_atomic_to, tvb, off + 12, 8, a->to);
    proto_tree_add_uint64(at, hf_atomic_add_swap, tvb, off + 20, 8, a->add_swap);
    proto_tree_add_uint64(at, hf_atomic_add_swap_mask, tvb, off + 28, 8, a->add_swap_mask);
    proto_tree_add_uint64(at, hf_atomic_compare, tvb, off + 36, 8, a->compare);
    proto_tree_add_uint64(at, hf_atomic_compare_mask, tvb, off + 44, 8, a->compare_mask);
}

/* ---------------- first-pass tracking ---------------- */

static gboolean opcode_has_payload(guint8 op) {
    return op == IW_OP_WRITE || op == IW_OP_READ_RESP || op == IW_OP_SEND || op == IW_OP_SEND_INV ||
           op == IW_OP_SEND_SE || op == IW_OP_SEND_SE_INV;
}

/* Message grouping for reassembly only (no verdicts: the shadow's). A
 * segment continues the message in progress on its QN when it has the same
 * MSN; anything else starts a new one (RFC 5041 §5.2). */
static void track_untagged(iwk_dir *D, const iw_rdmap_msg *m, iwk_seg *s) {
    guint32 qn = m->ddp.qn, msn = m->ddp.msn;
    if (!(D->in_msg[qn] && msn == D->last_msn[qn]))
        D->msg_id[qn] = (pref_reassemble && !m->ddp.last) ? ++D->next_id : 0;
    D->last_msn[qn] = msn;
    D->in_msg[qn] = !m->ddp.last;
    if (D->msg_id[qn]) {
        s->reasm_id = D->msg_id[qn];
        s->reasm_off = m->ddp.mo;
    }
    if (m->ddp.last)
        D->msg_id[qn] = 0;
}

static iwk_tmsg *track_tagged(packet_info *pinfo, iwk_dir *D, const iw_rdmap_msg *m, iwk_seg *s,
                              gboolean *first) {
    gpointer key = GUINT_TO_POINTER(m->ddp.stag);
    iwk_tmsg *t = (iwk_tmsg *)wmem_map_lookup(D->tagged, key);
    if (!t) {
        t = wmem_new0(wmem_file_scope(), iwk_tmsg);
        wmem_map_insert(D->tagged, key, t);
    }
    guint64 dlen = m->seg_len - IW_DDP_TAGGED_HDR_LEN;
    *first = !t->in_msg || m->ddp.to != t->next_to;
    if (*first) {
        t->start_to = m->ddp.to;
        t->req = NULL;
        gboolean whole = pref_reassemble && pref_reassemble_tagged;
        t->id = (whole && !m->ddp.last) ? ++D->next_id : 0;
        t->span = NULL;
        if (pref_reassemble && !whole && !m->ddp.last) {
            t->span = wmem_new0(wmem_file_scope(), iwk_span);
            t->span->first = pinfo->num;
        }
    }
    if ((t->id || t->span) && m->ddp.to - t->start_to <= G_MAXUINT32) {
        s->reasm_id = t->id;
        s->span = t->span;
        s->reasm_off = (guint32)(m->ddp.to - t->start_to);
        if (t->span && m->ddp.last) {
            t->span->last = pinfo->num;
            t->span->len = s->reasm_off + (guint32)dlen;
        }
    }
    t->in_msg = !m->ddp.last;
    t->next_to = m->ddp.to + dlen;
    return t;
}

/* Reassembly grouping, and the requests responses are linked to. The
 * matching itself is the shadow's (s->shadow.ref: the request it matched
 * a response with, RFC 5040 §5.2.2, RFC 7306 §5). */
static void track(packet_info *pinfo, iwk_fpdu_ctx *ctx, const iw_rdmap_msg *m, iwk_seg *s) {
    iwk_conv *c = ctx->conv;
    iwk_dir *D = &c->dir[ctx->d];
    gboolean first = TRUE;
    if (m->ddp.tagged)
        track_tagged(pinfo, D, m, s, &first);
    else
        track_untagged(D, m, s);
    if (!c->reqs)
        c->reqs = wmem_map_new(wmem_file_scope(), g_direct_hash, g_direct_equal);
    if ((m->opcode == IW_OP_READ_REQ || m->opcode == IW_OP_ATOMIC_REQ) && m->has_hdr) {
        /* A frame may hold several: kept in order, linked in order. */
        wmem_list_t *l = (wmem_list_t *)wmem_map_lookup(c->reqs, GUINT_TO_POINTER(pinfo->num));
        if (!l) {
            l = wmem_list_new(wmem_file_scope());
            wmem_map_insert(c->reqs, GUINT_TO_POINTER(pinfo->num), l);
        }
        iwk_req *r = wmem_new0(wmem_file_scope(), iwk_req);
        r->frame = pinfo->num;
        r->ts = pinfo->abs_ts;
        r->opcode = m->opcode;
        wmem_list_append(l, r);
        s->req = r;
    }
}

/* After the shadow judged the segment: a response links to the request it
 * was matched with. */
static void link_response(packet_info *pinfo, iwk_fpdu_ctx *ctx, const iw_rdmap_msg *m,
                          iwk_seg *s) {
    if (m->opcode != IW_OP_READ_RESP && m->opcode != IW_OP_ATOMIC_RESP)
        return;
    if (!s->shadow.has_ref || !ctx->conv->reqs)
        return;
    wmem_list_t *l =
        (wmem_list_t *)wmem_map_lookup(ctx->conv->reqs, GUINT_TO_POINTER((guint32)s->shadow.ref));
    if (!l)
        return;
    /* The request of that frame this response answers: a Read Response's
     * later segments the one its first segment took, else the oldest one
     * of its kind not yet answered. */
    guint8 want = m->opcode == IW_OP_READ_RESP ? IW_OP_READ_REQ : IW_OP_ATOMIC_REQ;
    iwk_req *r = NULL, *last = NULL;
    for (wmem_list_frame_t *f = wmem_list_head(l); f; f = wmem_list_frame_next(f)) {
        iwk_req *q = (iwk_req *)wmem_list_frame_data(f);
        if (q->opcode != want)
            continue;
        if (q->resp_frame)
            last = q;
        else if (!r)
            r = q;
    }
    gboolean continued = m->opcode == IW_OP_READ_RESP && last && last->resp_open;
    if (continued)
        r = last;
    if (!r)
        return;
    if (!r->resp_frame) {
        r->resp_frame = pinfo->num;
        r->resp_ts = pinfo->abs_ts;
    }
    r->resp_open = m->opcode == IW_OP_READ_RESP && !m->ddp.last;
    s->req = r;
    s->is_resp = TRUE;
}

static void add_links(proto_tree *tree, tvbuff_t *tvb, const iwk_seg *s) {
    if (!s->req)
        return;
    proto_item *pi;
    if (s->is_resp) {
        pi = proto_tree_add_uint(tree, hf_request_in, tvb, 0, 0, s->req->frame);
        proto_item_set_generated(pi);
        /* Latency as the docs define it: request to the first segment of
         * its response, the same value on every segment of a Read Response. */
        nstime_t dt;
        nstime_delta(&dt, &s->req->resp_ts, &s->req->ts);
        pi = proto_tree_add_time(tree, hf_response_time, tvb, 0, 0, &dt);
        proto_item_set_generated(pi);
    } else if (s->req->resp_frame) {
        pi = proto_tree_add_uint(tree, hf_response_in, tvb, 0, 0, s->req->resp_frame);
        proto_item_set_generated(pi);
    }
}

/* ---------------- payload ---------------- */

static void fill_rdmapinfo(rdmap_info_t *info, const iw_rdmap_msg *m) {
    memset(info, 0, sizeof *info);
    info->opcode = m->opcode;
    info->last_flag = m->ddp.last;
    info->is_tagged = m->ddp.tagged;
    if (m->ddp.tagged) {
        info->steering_tag = m->ddp.stag;
        info->tagged_offset = m->ddp.to;
    } else {
        info->queue_number = m->ddp.qn;
        info->message_seq_num = m->ddp.msn;
        info->message_offset = m->ddp.mo;
    }
}

/* Wireshark's RPC-over-RDMA heuristic (packet-rpcrdma.c, 4.0 and later)
 * reads octets 12-15 of a Send before it checks the Send's length: offered a
 * whole Send shorter than the 16-octet RPC-over-RDMA header (RFC 8166 §4.2)
 * it throws, and every short Send of any other ULP (perftest's 2-, 4- and
 * 8-octet handshakes between siw peers, for one) shows as a malformed
 * RPCoRDMA packet. No ULP of the list takes a message that short
 * (RPC-over-RDMA: 16 octets, SMB Direct: 20), so such a Send goes straight to
 * the data dissector. A part of a longer Send still goes to the heuristics,
 * which may reassemble it themselves. */
#define ULP_MIN_SEND 16

static gboolean ulp_too_short(tvbuff_t *tvb, const rdmap_info_t *info) {
    switch (info->opcode) {
    case RDMA_SEND:
    case RDMA_SEND_INVALIDATE:
    case RDMA_SEND_SE:
    case RDMA_SEND_SE_INVALIDATE:
        return info->last_flag && info->message_offset == 0 &&
               tvb_reported_length(tvb) < ULP_MIN_SEND;
    default:
        return FALSE;
    }
}

/* A ULP heuristic that throws must not cut our own items short. Nor may it
 * leave TCP reassembly off for the rest of the segment: Wireshark restores
 * pinfo->can_desegment after a subdissector only when it returns, so the
 * value is put back here (else the next FPDU of the frame shows as a partial
 * PDU and framing is lost). */
void iwk_rdmap_call_heur(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, rdmap_info_t *info) {
    guint16 can_desegment = pinfo->can_desegment, saved = pinfo->saved_can_desegment;
    /* As the built-in packet-iwarp-mpa.c: ULPs see the iWARP port type, so
     * a conversation they look up or claim (RPC's conversation_set_dissector
     * on its first call) is the iWARP one, never the TCP conversation the
     * plugin itself dissects. */
    port_type ptype = pinfo->ptype;
    pinfo->ptype = PT_IWARP_MPA;
    TRY {
        heur_dtbl_entry_t *hdtbl_entry;
        if (info->opcode == RDMA_READ_REQUEST) {
            /* Offered to the ULPs, no data item when none wants it. */
            if (rdmap_heur_list)
                dissector_try_heuristic(rdmap_heur_list, tvb, pinfo, tree, &hdtbl_entry, info);
        } else if (!rdmap_heur_list || ulp_too_short(tvb, info) ||
                   !dissector_try_heuristic(rdmap_heur_list, tvb, pinfo, tree, &hdtbl_entry,
                                            info)) {
            call_data_dissector(tvb, pinfo, tree);
        }
    }
    CATCH_NONFATAL_ERRORS { show_exception(tvb, pinfo, tree, EXCEPT_CODE, GET_MESSAGE); }
    ENDTRY;
    pinfo->ptype = ptype;
    pinfo->can_desegment = can_desegment;
    pinfo->saved_can_desegment = saved;
}

/* Where this segment sits in its tagged message, in place of the data. */
static void span_items(tvbuff_t *tvb, proto_tree *tree, const iwk_seg *s) {
    /* Two lines (the links); offset and length are in their text and
     * filterable as fields of their own. */
    const iwk_span *sp = s->span;
    proto_item *pi = proto_tree_add_uint(tree, hf_msg_first, tvb, 0, 0, sp->first);
    proto_item_set_generated(pi);
    proto_item_append_text(pi, " (this segment at offset %u)", s->reasm_off);
    pi = proto_tree_add_uint(tree, hf_msg_offset, tvb, 0, 0, s->reasm_off);
    proto_item_set_generated(pi);
    proto_item_set_hidden(pi);
    if (sp->last) {
        pi = proto_tree_add_uint(tree, hf_msg_last, tvb, 0, 0, sp->last);
        proto_item_set_generated(pi);
        proto_item_append_text(pi, " (message of %u octets)", sp->len);
        pi = proto_tree_add_uint(tree, hf_msg_len, tvb, 0, 0, sp->len);
        proto_item_set_generated(pi);
        proto_item_set_hidden(pi);
    }
}

static void dissect_payload(tvbuff_t *seg_tvb, guint off, packet_info *pinfo, proto_tree *tree,
                            const iw_rdmap_msg *m, const iwk_seg *s, iwk_fpdu_ctx *ctx) {
    tvbuff_t *ptvb = tvb_new_subset_length(seg_tvb, off, (gint)m->payload_len);
    rdmap_info_t info;
    fill_rdmapinfo(&info, m);
    if (s && s->span) {
        span_items(ptvb, tree, s);
        iwk_ulp_offer(ptvb, pinfo, tree, &info, ctx, m, 0);
        return;
    }
    if (s && s->reasm_id && pref_reassemble) {
        gboolean save = pinfo->fragmented;
        pinfo->fragmented = TRUE;
        fragment_head *fh =
            fragment_add_check(&iwk_reassembly_table, ptvb, 0, pinfo, s->reasm_id, NULL,
                               s->reasm_off, (guint32)m->payload_len, !m->ddp.last);
        tvbuff_t *whole = process_reassembled_data(ptvb, 0, pinfo, "Reassembled iWARP message", fh,
                                                   &iwk_frag_items, NULL, tree);
        pinfo->fragmented = save;
        if (m->ddp.tagged) {
            /* Tagged data is placed segment by segment (RFC 5041 §3): as the
             * built-in does, the ULPs get each segment once, with its own
             * STag and TO (RPC-over-RDMA counts the octets of a chunk per
             * offer and completes its reassembly on that count). The
             * reassembled message above is for display only. */
            iwk_ulp_offer(ptvb, pinfo, tree, &info, ctx, m, 0);
            return;
        }
        if (whole) {
            /* An untagged message goes up once, whole, as from one segment
             * at MO 0 (its fragments show "Reassembled in"). */
            info.message_offset = 0;
            iwk_ulp_offer(whole, pinfo, tree, &info, ctx, m, s->reasm_id);
            return;
        }
        iwk_ulp_fragment(ptvb, pinfo, tree, ctx, m, s->reasm_id);
        return;
    }
    iwk_ulp_offer(ptvb, pinfo, tree, &info, ctx, m, 0);
}

/* ---------------- the segment ---------------- */

/* First pass: the plugin's own tracking and the shadow, stored per FPDU
 * (keyed by its sequence number); later passes replay what is stored. m is
 * NULL when not even the DDP header decoded; v is iw_rdmap_decode's. */
/* The state of a segment with nothing to show beyond its headers (no
 * link, no reassembly, an ok shadow verdict without notes): most of them,
 * so they share this one instead of a copy each (less memory per FPDU on
 * a long capture). Zero is IW_VERDICT_OK. */
static const iwk_seg seg_plain;

static gboolean seg_is_plain(const iwk_seg *s) {
    return !s->req && !s->is_resp && !s->reasm_id && !s->reasm_off && !s->span && !s->answers &&
           s->shadow.verdict.kind == IW_VERDICT_OK && !s->shadow.notes && !s->shadow.has_ref &&
           !s->shadow.rtr;
}

static const iwk_seg *seg_state(packet_info *pinfo, iwk_fpdu_ctx *ctx, const iw_rdmap_msg *m,
                                guint len, iw_ssize r, const iw_verdict *v) {
    const iwk_seg *got = ctx->seg_slot ? (const iwk_seg *)*ctx->seg_slot
                                       : (const iwk_seg *)p_get_proto_data(
                                             wmem_file_scope(), pinfo, proto_iwk_rdmap, ctx->seq);
    if (got || PINFO_FD_VISITED(pinfo))
        return got;
    iwk_seg t;
    memset(&t, 0, sizeof t);
    iwk_seg *s = &t;
    s->shadow.verdict = iw_verdict_ok();
    if (m && r >= 0 && ctx->track && !ctx->crc_bad)
        track(pinfo, ctx, m, s);
    if (m && ctx->track)
        link_term(pinfo, ctx, m, s);
    if (ctx->track) {
        /* The stateless verdict first (RFC 5044 §6: the CRC, then DDP/RDMAP). */
        iw_verdict pre = ctx->mpa_verdict.kind != IW_VERDICT_OK ? ctx->mpa_verdict
                         : r < 0                                ? *v
                                                                : iw_verdict_ok();
        iw_shadow_fpdu(ctx->conv->shadow, (unsigned)ctx->d, m, len, &pre, pinfo->num, &s->shadow);
        if (m && r >= 0 && !ctx->crc_bad)
            link_response(pinfo, ctx, m, s);
    }
    got = seg_is_plain(s) ? &seg_plain
                          : (const iwk_seg *)wmem_memdup(wmem_file_scope(), s, sizeof *s);
    if (ctx->seg_slot)
        *ctx->seg_slot = got;
    else
        p_add_proto_data(wmem_file_scope(), pinfo, proto_iwk_rdmap, ctx->seq, (void *)got);
    return got;
}

const void *iwk_seg_pending(void) { return &seg_plain; }

void iwk_analyse_ulpdu(packet_info *pinfo, iwk_fpdu_ctx *ctx, const guint8 *p, guint len) {
    static const guint8 zero = 0;
    iw_rdmap_msg m;
    iw_verdict v;
    iw_ssize r = iw_rdmap_decode(&m, len ? p : &zero, len, &v);
    if (r >= 0)
        iw_rdmap_term_siw(&m);
    iw_ddp_hdr h;
    gboolean have_ddp = len >= 1 && iw_ddp_decode_hdr(&h, p, len) > 0;
    (void)seg_state(pinfo, ctx, have_ddp ? &m : NULL, len, r, &v);
}

/* Expert items name the protocol in pinfo->current_proto: DDP's own
 * findings under DDP, the rest under RDMAP (the ULPDU is not handed over
 * through a dissector handle, which would set it). */
static void as_proto(packet_info *pinfo, int proto) {
    pinfo->current_proto = proto_get_protocol_short_name(find_protocol_by_id(proto));
}

static void dissect_ulpdu(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, iwk_fpdu_ctx *ctx);

/* The ULPDU goes through two dissector handles, DDP's then RDMAP's, so
 * that frame.protocols lists iwk_mpa:iwk_ddp:iwk_rdmap (call_dissector
 * records the layers); RDMAP's does the work. */
static dissector_handle_t iwk_ddp_handle, iwk_rdmap_handle;

static int dissect_rdmap_layer(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data) {
    const char *saved = pinfo->current_proto;
    as_proto(pinfo, proto_iwk_rdmap);
    dissect_ulpdu(tvb, pinfo, tree, (iwk_fpdu_ctx *)data);
    pinfo->current_proto = saved;
    return (int)tvb_reported_length(tvb);
}

static int dissect_ddp_layer(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data) {
    call_dissector_only(iwk_rdmap_handle, tvb, pinfo, tree, data);
    return (int)tvb_reported_length(tvb);
}

void iwk_dissect_ulpdu(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, iwk_fpdu_ctx *ctx) {
    if (!iwk_ddp_handle) {
        iwk_ddp_handle = create_dissector_handle(dissect_ddp_layer, proto_iwk_ddp);
        iwk_rdmap_handle = create_dissector_handle(dissect_rdmap_layer, proto_iwk_rdmap);
    }
    call_dissector_only(iwk_ddp_handle, tvb, pinfo, tree, ctx);
}

static void dissect_ulpdu(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, iwk_fpdu_ctx *ctx) {
    static const guint8 zero = 0;
    guint len = tvb_reported_length(tvb);
    const guint8 *p = len ? tvb_get_ptr(tvb, 0, len) : &zero;
    iw_rdmap_msg m;
    iw_verdict v;
    iw_ssize r = iw_rdmap_decode(&m, p, len, &v);
    if (r >= 0)
        iw_rdmap_term_siw(&m); /* a Terminate in Linux siw's bit order, explained */
    wmem_strbuf_t *info = pinfo->cinfo ? wmem_strbuf_new(pinfo->pool, "") : NULL;

    iw_ddp_hdr h;
    gboolean have_ddp = len >= 1 && iw_ddp_decode_hdr(&h, p, len) > 0;
    guint hl = have_ddp ? (guint)iw_ddp_hdr_len(p[0]) : 0;
    proto_item *di = NULL, *ri = NULL;
    proto_tree *rt = NULL;

    if (!have_ddp) {
        di = proto_tree_add_item(tree, proto_iwk_ddp, tvb, 0, -1, ENC_NA);
        proto_item_append_text(di, " [truncated: %u octets, DDP header needs %u]", len,
                               len ? (guint)iw_ddp_hdr_len(p[0]) : 1);
        info_add(info, "DDP segment [truncated header]");
        if (!ctx->crc_bad)
            iwk_expert_verdict(pinfo, di, &v);
        const iwk_seg *ts = seg_state(pinfo, ctx, NULL, len, r, &v);
        if (ts) {
            iwk_expert_shadow(pinfo, di, &ts->shadow);
            if (ts->shadow.notes & IW_SHADOW_NOTE(AFTER_TERMINATE))
                info_add(info, " [after Terminate]");
        }
        if (info)
            col_append_sep_str(pinfo->cinfo, COL_INFO, " | ", wmem_strbuf_get_str(info));
        return;
    }
    di = add_ddp_hdr(tree, tvb, 0, &m.ddp, proto_iwk_ddp, ett_ddp, &ddp_own);
    proto_tree *dt = proto_item_get_subtree(di);
    /* The payload length in the DDP line, its field hidden (one line less
     * per FPDU under -V); the message length gets a line where it says
     * more than that, after earlier segments (MO > 0). */
    proto_item_append_text(di, ", payload %u octets", len - hl);
    proto_item *pl = proto_tree_add_uint(dt, hf_ddp_payload_len, tvb, hl, len - hl, len - hl);
    proto_item_set_generated(pl);
    proto_item_set_hidden(pl);
    if (!m.ddp.tagged && m.ddp.last) {
        pl = proto_tree_add_uint(dt, hf_ddp_msg_len, tvb, 0, 0, m.ddp.mo + (len - hl));
        proto_item_set_generated(pl);
        if (m.ddp.mo == 0)
            proto_item_set_hidden(pl);
    }

    /* RDMAP: control octet, Invalidate STag, then the opcode's header. */
    ri = proto_tree_add_item(tree, proto_iwk_rdmap, tvb, 1, -1, ENC_NA);
    rt = proto_item_add_subtree(ri, ett_rdmap);
    add_rdmap_ctrl(rt, tvb, 1, m.ddp.rsvd_ulp, &ctrl_own);
    if (!m.ddp.tagged)
        proto_tree_add_uint(rt, hf_inv_stag, tvb, 2, 4, m.ddp.rsvd_ulp2);
    /* The same index as iwk_mpa.stream, shown there: filterable, no line. */
    proto_item *qi = proto_tree_add_uint(rt, hf_qp, tvb, 0, 0, ctx->conv->index);
    proto_item_set_generated(qi);
    proto_item_set_hidden(qi);
    proto_item_append_text(ri, ", %s", iw_rdmap_opcode_str(m.opcode));

    info_add(info, iw_rdmap_opcode_str(m.opcode));
    if (m.ddp.tagged)
        info_printf(info, " STag=0x%08x TO=0x%" G_GINT64_MODIFIER "x", m.ddp.stag, m.ddp.to);
    else
        info_printf(info, " QN=%u MSN=%u MO=%u", m.ddp.qn, m.ddp.msn, m.ddp.mo);

    if (m.has_hdr) {
        switch (m.opcode) {
        case IW_OP_READ_REQ:
            add_read_req(rt, tvb, hl, &m.u.read_req, hf_rreq, &rreq_own);
            info_printf(info,
                        " sink=0x%08x@0x%" G_GINT64_MODIFIER "x src=0x%08x@0x%" G_GINT64_MODIFIER
                        "x size=%u",
                        m.u.read_req.sink_stag, m.u.read_req.sink_to, m.u.read_req.src_stag,
                        m.u.read_req.src_to, m.u.read_req.read_size);
            break;
        case IW_OP_TERMINATE:
            add_term(rt, tvb, hl, &m.u.term, pinfo, info);
            break;
        case IW_OP_IMM:
        case IW_OP_IMM_SE:
            proto_tree_add_bytes(rt, hf_imm, tvb, hl, IW_RDMAP_IMM_LEN, m.u.imm);
            info_add(info, " data=");
            for (int i = 0; i < IW_RDMAP_IMM_LEN; i++)
                info_printf(info, "%02x", m.u.imm[i]);
            break;
        case IW_OP_ATOMIC_REQ:
            add_atomic_req(rt, tvb, hl, &m.u.atomic_req);
            info_printf(info, " %s id=%u STag=0x%08x TO=0x%" G_GINT64_MODIFIER "x",
                        val_to_str_const(m.u.atomic_req.aopcode, aop_vals, "Unassigned"),
                        m.u.atomic_req.req_id, m.u.atomic_req.stag, m.u.atomic_req.to);
            break;
        case IW_OP_ATOMIC_RESP: {
            proto_item *ai =
                proto_tree_add_item(rt, hf_atomic, tvb, hl, IW_RDMAP_ATOMIC_RESP_LEN, ENC_NA);
            proto_tree *at = proto_item_add_subtree(ai, ett_atomic);
            proto_tree_add_uint(at, hf_atomic_req_id, tvb, hl, 4, m.u.atomic_resp.req_id);
            proto_tree_add_uint64(at, hf_atomic_orig, tvb, hl + 4, 8, m.u.atomic_resp.orig);
            info_printf(info, " id=%u orig=0x%" G_GINT64_MODIFIER "x", m.u.atomic_resp.req_id,
                        m.u.atomic_resp.orig);
            break;
        }
        default:
            break;
        }
    } else if (r >= 0 && m.payload_len && !opcode_has_payload(m.opcode)) {
        /* A control message split over segments (legal, rare). */
        proto_tree_add_item(rt, hf_reassembled_data, tvb, hl, -1, ENC_NA);
    }
    if (opcode_has_payload(m.opcode) || m.payload_len)
        info_printf(info, " len=%u", (guint)(len - hl));
    if (!m.ddp.last)
        info_add(info, " [more]");

    /* Stateless verdict from libiwarp. An FPDU that failed its CRC or
     * marker check never reaches DDP (RFC 5044 §6): its ULPDU is decoded
     * for display only, and its one verdict is MPA's. */
    if (r < 0 && !ctx->crc_bad) {
        gboolean ddp_layer = v.kind == IW_VERDICT_TERM && iw_term_layer(v.term) == 0x1;
        proto_item *vi = proto_tree_add_uint(ddp_layer ? dt : rt, hf_verdict, tvb, 0, 0, v.term);
        proto_item_set_generated(vi);
        as_proto(pinfo, ddp_layer ? proto_iwk_ddp : proto_iwk_rdmap);
        iwk_expert_verdict(pinfo, ddp_layer ? di : ri, &v);
        as_proto(pinfo, proto_iwk_rdmap);
        info_printf(info, " [TERM %u/%u/0x%02x]", iw_term_layer(v.term), iw_term_etype(v.term),
                    iw_term_ecode(v.term));
    }
    as_proto(pinfo, proto_iwk_ddp);
    iwk_expert_notes(pinfo, di, m.notes & IW_NOTE(DDP_RSVD_BITS));
    as_proto(pinfo, proto_iwk_rdmap);
    iwk_expert_notes(pinfo, ri, m.notes & ~IW_NOTE(DDP_RSVD_BITS));

    /* Stateful part: first pass only, then replayed. */
    const iwk_seg *s = seg_state(pinfo, ctx, &m, len, r, &v);
    gboolean stateful = FALSE;
    if (s && s->answers) {
        proto_item *ai = proto_tree_add_uint(rt, hf_term_answers, tvb, 0, 0, s->answers);
        proto_item_set_generated(ai);
        info_printf(info, " [answers frame %u]", s->answers);
    }
    if (s) {
        /* The shadow's verdict: what a receiver with this conversation's
         * state must answer (libiwarp, as the engine does). */
        const iw_shadow_result *sr = &s->shadow;
        gboolean ddp_layer =
            sr->verdict.kind == IW_VERDICT_TERM && iw_term_layer(sr->verdict.term) == 0x1;
        if (sr->verdict.kind == IW_VERDICT_TERM) {
            proto_tree *vt = ddp_layer ? dt : rt;
            proto_item *vi = proto_tree_add_uint(vt, hf_verdict, tvb, 0, 0, sr->verdict.term);
            proto_item_set_generated(vi);
            vi = proto_tree_add_uint(vt, hf_shadow_rule, tvb, 0, 0, sr->rule);
            proto_item_set_generated(vi);
            if (sr->has_ref) {
                vi = proto_tree_add_uint(vt, hf_shadow_ref, tvb, 0, 0, (guint32)sr->ref);
                proto_item_set_generated(vi);
            }
            for (unsigned bit = 1; bit && bit <= sr->assume; bit <<= 1) {
                if (!(sr->assume & bit) || !iw_shadow_assume_str(bit))
                    continue;
                vi = proto_tree_add_string(vt, hf_shadow_assumes, tvb, 0, 0,
                                           iw_shadow_assume_str(bit));
                proto_item_set_generated(vi);
            }
            info_printf(info, " [TERM %u/%u/0x%02x]", iw_term_layer(sr->verdict.term),
                        iw_term_etype(sr->verdict.term), iw_term_ecode(sr->verdict.term));
        }
        as_proto(pinfo, ddp_layer ? proto_iwk_ddp : proto_iwk_rdmap);
        stateful = iwk_expert_shadow(pinfo, ddp_layer ? di : ri, sr);
        as_proto(pinfo, proto_iwk_rdmap);
        if (sr->notes & IW_SHADOW_NOTE(AFTER_TERMINATE))
            info_add(info, " [after Terminate]");
        if (sr->rtr) {
            proto_item *ti = proto_tree_add_boolean(rt, hf_rtr, tvb, 0, 0, TRUE);
            proto_item_set_generated(ti);
            info_add(info, " [RTR]");
        }
        add_links(rt, tvb, s);
    }
    if (ctx->crc_bad)
        expert_add_info(pinfo, ri, &ei_not_tracked);

    if (have_tap_listener(iwk_tap)) {
        iwk_tap_info *ti = wmem_new0(pinfo->pool, iwk_tap_info);
        ti->opcode = m.opcode;
        ti->tagged = m.ddp.tagged;
        ti->qn = m.ddp.qn;
        /* Payload octets: the ULP data of Writes, Read Responses and Sends;
         * the headers of control messages (Read Request, Terminate,
         * Atomics, Immediate Data) are not payload. */
        ti->bytes = opcode_has_payload(m.opcode) ? len - hl : 0;
        ti->conv_index = ctx->conv->index;
        ti->d = ctx->d;
        ti->src = &pinfo->src;
        ti->dst = &pinfo->dst;
        ti->srcport = pinfo->srcport;
        ti->dstport = pinfo->destport;
        /* As iwk_rdmap.verdict is set: a DDP/RDMAP verdict, stateless or
         * stateful. A CRC or marker failure is MPA's (counted apart). */
        ti->verdict = (!ctx->crc_bad && r < 0) || stateful;
        ti->mpa_verdict = ctx->crc_bad;
        tap_queue_packet(iwk_tap, pinfo, ti);
    }
    if (info)
        col_append_sep_str(pinfo->cinfo, COL_INFO, " | ", wmem_strbuf_get_str(info));

    /* Up the stack. */
    if (r >= 0 && !ctx->crc_bad) {
        if (opcode_has_payload(m.opcode) && m.payload_len) {
            dissect_payload(tvb, hl, pinfo, tree, &m, s, ctx);
        } else if (m.opcode == IW_OP_READ_REQ && m.has_hdr) {
            /* As the built-in: the ULP sees the Read Request (RPC-over-RDMA
             * tracks them). */
            rdmap_info_t ri2;
            rdmap_request_t rq;
            fill_rdmapinfo(&ri2, &m);
            rq.sink_stag = m.u.read_req.sink_stag;
            rq.sink_toffset = m.u.read_req.sink_to;
            rq.source_stag = m.u.read_req.src_stag;
            rq.source_toffset = m.u.read_req.src_to;
            rq.message_size = m.u.read_req.read_size;
            ri2.read_request = &rq;
            iwk_ulp_offer(tvb_new_subset_length(tvb, len, 0), pinfo, tree, &ri2, ctx, &m, 0);
        }
    }
}

/* ---------------- registration ---------------- */

void proto_register_iwk_rdmap(void) {
    static hf_register_info hf_ddp[] = {
        {&hf_ddp_ctrl, {"DDP Control", "iwk_ddp.ctrl", FT_UINT8, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_ddp_t, {"Tagged (T)", "iwk_ddp.t", FT_BOOLEAN, 8, NULL, IW_DDP_CTRL_T, NULL, HFILL}},
        {&hf_ddp_l, {"Last (L)", "iwk_ddp.l", FT_BOOLEAN, 8, NULL, IW_DDP_CTRL_L, NULL, HFILL}},
        {&hf_ddp_rsvd,
         {"Reserved", "iwk_ddp.rsvd", FT_UINT8, BASE_HEX, NULL, IW_DDP_CTRL_RSVD, NULL, HFILL}},
        {&hf_ddp_dv,
         {"DDP Version (DV)", "iwk_ddp.dv", FT_UINT8, BASE_DEC, NULL, IW_DDP_CTRL_DV, NULL, HFILL}},
        {&hf_ddp_stag, {"STag", "iwk_ddp.stag", FT_UINT32, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_ddp_to,
         {"Tagged Offset (TO)", "iwk_ddp.to", FT_UINT64, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_ddp_qn,
         {"Queue Number (QN)", "iwk_ddp.qn", FT_UINT32, BASE_DEC, NULL, 0, NULL, HFILL}},
        {&hf_ddp_msn,
         {"Message Sequence Number (MSN)", "iwk_ddp.msn", FT_UINT32, BASE_DEC, NULL, 0, NULL,
          HFILL}},
        {&hf_ddp_mo,
         {"Message Offset (MO)", "iwk_ddp.mo", FT_UINT32, BASE_DEC, NULL, 0, NULL, HFILL}},
        {&hf_ddp_payload_len,
         {"Segment payload", "iwk_ddp.payload_length", FT_UINT32, BASE_DEC | BASE_UNIT_STRING,
          &units_byte_bytes, 0, "DDP payload octets in this segment", HFILL}},
        {&hf_ddp_msg_len,
         {"Message length", "iwk_ddp.message_length", FT_UINT32, BASE_DEC | BASE_UNIT_STRING,
          &units_byte_bytes, 0, "MO + payload of the last segment (RFC 5041 §5.4)", HFILL}},
    };
    static hf_register_info hf[] = {
        {&hf_ctrl, {"RDMAP Control", "iwk_rdmap.ctrl", FT_UINT8, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_rv,
         {"RDMAP Version (RV)", "iwk_rdmap.rv", FT_UINT8, BASE_DEC, NULL, IW_RDMAP_CTRL_RV, NULL,
          HFILL}},
        {&hf_rsv,
         {"Reserved", "iwk_rdmap.rsv", FT_UINT8, BASE_HEX, NULL, IW_RDMAP_CTRL_RSV, NULL, HFILL}},
        {&hf_opcode,
         {"OpCode", "iwk_rdmap.opcode", FT_UINT8, BASE_HEX, VALS(iwk_opcode_vals),
          IW_RDMAP_CTRL_OPCODE, "RFC 5040 §4.2, RFC 7306 §4", HFILL}},
        {&hf_inv_stag,
         {"Invalidate STag", "iwk_rdmap.inv_stag", FT_UINT32, BASE_HEX, NULL, 0,
          "DDP RsvdULP[8:39] (RFC 5040 §4.3)", HFILL}},
        {&hf_rreq,
         {"Read Request header", "iwk_rdmap.read_request", FT_NONE, BASE_NONE, NULL, 0,
          "RFC 5040 §4.4", HFILL}},
        {&hf_sink_stag,
         {"Data Sink STag", "iwk_rdmap.sink_stag", FT_UINT32, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_sink_to,
         {"Data Sink Tagged Offset", "iwk_rdmap.sink_to", FT_UINT64, BASE_HEX, NULL, 0, NULL,
          HFILL}},
        {&hf_read_size,
         {"RDMA Read Message Size", "iwk_rdmap.read_size", FT_UINT32, BASE_DEC | BASE_UNIT_STRING,
          &units_byte_bytes, 0, NULL, HFILL}},
        {&hf_src_stag,
         {"Data Source STag", "iwk_rdmap.src_stag", FT_UINT32, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_src_to,
         {"Data Source Tagged Offset", "iwk_rdmap.src_to", FT_UINT64, BASE_HEX, NULL, 0, NULL,
          HFILL}},
        /* The copies a Terminate carries (RFC 5040 §4.8): own names. */
        {&hf_tddp_ctrl,
         {"DDP Control", "iwk_rdmap.term.ddp.ctrl", FT_UINT8, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_tddp_t,
         {"Tagged (T)", "iwk_rdmap.term.ddp.t", FT_BOOLEAN, 8, NULL, IW_DDP_CTRL_T, NULL, HFILL}},
        {&hf_tddp_l,
         {"Last (L)", "iwk_rdmap.term.ddp.l", FT_BOOLEAN, 8, NULL, IW_DDP_CTRL_L, NULL, HFILL}},
        {&hf_tddp_rsvd,
         {"Reserved", "iwk_rdmap.term.ddp.rsvd", FT_UINT8, BASE_HEX, NULL, IW_DDP_CTRL_RSVD, NULL,
          HFILL}},
        {&hf_tddp_dv,
         {"DDP Version (DV)", "iwk_rdmap.term.ddp.dv", FT_UINT8, BASE_DEC, NULL, IW_DDP_CTRL_DV,
          NULL, HFILL}},
        {&hf_tddp_stag,
         {"STag", "iwk_rdmap.term.ddp.stag", FT_UINT32, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_tddp_to,
         {"Tagged Offset (TO)", "iwk_rdmap.term.ddp.to", FT_UINT64, BASE_HEX, NULL, 0, NULL,
          HFILL}},
        {&hf_tddp_qn,
         {"Queue Number (QN)", "iwk_rdmap.term.ddp.qn", FT_UINT32, BASE_DEC, NULL, 0, NULL, HFILL}},
        {&hf_tddp_msn,
         {"Message Sequence Number (MSN)", "iwk_rdmap.term.ddp.msn", FT_UINT32, BASE_DEC, NULL, 0,
          NULL, HFILL}},
        {&hf_tddp_mo,
         {"Message Offset (MO)", "iwk_rdmap.term.ddp.mo", FT_UINT32, BASE_DEC, NULL, 0, NULL,
          HFILL}},
        {&hf_tctrl,
         {"RDMAP Control", "iwk_rdmap.term.rdmap.ctrl", FT_UINT8, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_trv,
         {"RDMAP Version (RV)", "iwk_rdmap.term.rdmap.rv", FT_UINT8, BASE_DEC, NULL,
          IW_RDMAP_CTRL_RV, NULL, HFILL}},
        {&hf_trsv,
         {"Reserved", "iwk_rdmap.term.rdmap.rsv", FT_UINT8, BASE_HEX, NULL, IW_RDMAP_CTRL_RSV, NULL,
          HFILL}},
        {&hf_topcode,
         {"OpCode", "iwk_rdmap.term.rdmap.opcode", FT_UINT8, BASE_HEX, VALS(iwk_opcode_vals),
          IW_RDMAP_CTRL_OPCODE, "The opcode of the message the Terminate is about", HFILL}},
        {&hf_tsink_stag,
         {"Data Sink STag", "iwk_rdmap.term.rreq.sink_stag", FT_UINT32, BASE_HEX, NULL, 0, NULL,
          HFILL}},
        {&hf_tsink_to,
         {"Data Sink Tagged Offset", "iwk_rdmap.term.rreq.sink_to", FT_UINT64, BASE_HEX, NULL, 0,
          NULL, HFILL}},
        {&hf_tread_size,
         {"RDMA Read Message Size", "iwk_rdmap.term.rreq.read_size", FT_UINT32,
          BASE_DEC | BASE_UNIT_STRING, &units_byte_bytes, 0, NULL, HFILL}},
        {&hf_tsrc_stag,
         {"Data Source STag", "iwk_rdmap.term.rreq.src_stag", FT_UINT32, BASE_HEX, NULL, 0, NULL,
          HFILL}},
        {&hf_tsrc_to,
         {"Data Source Tagged Offset", "iwk_rdmap.term.rreq.src_to", FT_UINT64, BASE_HEX, NULL, 0,
          NULL, HFILL}},
        {&hf_term,
         {"Terminate header", "iwk_rdmap.term", FT_NONE, BASE_NONE, NULL, 0, "RFC 5040 §4.8",
          HFILL}},
        {&hf_term_answers,
         {"Answers segment in", "iwk_rdmap.term.answers", FT_FRAMENUM, BASE_NONE,
          FRAMENUM_TYPE(FT_FRAMENUM_REQUEST), 0,
          "The frame of the segment whose DDP header this Terminate copies (RFC 5040 §4.8), "
          "the latest the other side sent with that header",
          HFILL}},
        {&hf_term_layer,
         {"Layer", "iwk_rdmap.term.layer", FT_UINT8, BASE_DEC, VALS(layer_vals), 0, NULL, HFILL}},
        {&hf_term_etype,
         {"Error Type", "iwk_rdmap.term.etype", FT_UINT8, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_term_ecode,
         {"Error Code", "iwk_rdmap.term.ecode", FT_UINT8, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_term_triple,
         {"Error", "iwk_rdmap.term.triple", FT_UINT16, BASE_HEX, VALS(iwk_term_vals), 0,
          "Layer/EType/Code as one value (RFC 6580 registry)", HFILL}},
        {&hf_term_m,
         {"DDP Segment Length valid (M)", "iwk_rdmap.term.m", FT_BOOLEAN, 8, NULL, 0x80, NULL,
          HFILL}},
        {&hf_term_d,
         {"DDP header included (D)", "iwk_rdmap.term.d", FT_BOOLEAN, 8, NULL, 0x40, NULL, HFILL}},
        {&hf_term_r,
         {"RDMAP header included (R)", "iwk_rdmap.term.r", FT_BOOLEAN, 8, NULL, 0x20, NULL, HFILL}},
        {&hf_term_rsvd,
         {"Reserved", "iwk_rdmap.term.rsvd", FT_UINT16, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_term_seg_len,
         {"DDP Segment Length", "iwk_rdmap.term.ddp_seg_len", FT_UINT16, BASE_DEC, NULL, 0, NULL,
          HFILL}},
        {&hf_term_ddp_hdr,
         {"Terminated DDP header", "iwk_rdmap.term.ddp_hdr", FT_NONE, BASE_NONE, NULL, 0,
          "Copied DDP header, sized by its own T bit; fields use iwk_ddp.*", HFILL}},
        {&hf_term_rdma_hdr,
         {"Terminated RDMA header", "iwk_rdmap.term.rdma_hdr", FT_NONE, BASE_NONE, NULL, 0,
          "Copied Read Request header; fields use iwk_rdmap.sink_stag etc.", HFILL}},
        {&hf_imm,
         {"Immediate Data", "iwk_rdmap.imm_data", FT_BYTES, BASE_NONE, NULL, 0, "RFC 7306 §6.2",
          HFILL}},
        {&hf_atomic,
         {"Atomic header", "iwk_rdmap.atomic", FT_NONE, BASE_NONE, NULL, 0, "RFC 7306 §5.2",
          HFILL}},
        {&hf_atomic_rsvd,
         {"Reserved", "iwk_rdmap.atomic.rsvd", FT_UINT32, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_atomic_aop,
         {"Atomic OpCode", "iwk_rdmap.atomic.aopcode", FT_UINT8, BASE_HEX, VALS(aop_vals), 0, NULL,
          HFILL}},
        {&hf_atomic_req_id,
         {"Request Identifier", "iwk_rdmap.atomic.req_id", FT_UINT32, BASE_DEC, NULL, 0, NULL,
          HFILL}},
        {&hf_atomic_stag,
         {"Remote STag", "iwk_rdmap.atomic.stag", FT_UINT32, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_atomic_to,
         {"Remote Tagged Offset", "iwk_rdmap.atomic.to", FT_UINT64, BASE_HEX, NULL, 0, NULL,
          HFILL}},
        {&hf_atomic_add_swap,
         {"Add or Swap Data", "iwk_rdmap.atomic.add_swap", FT_UINT64, BASE_HEX, NULL, 0, NULL,
          HFILL}},
        {&hf_atomic_add_swap_mask,
         {"Add or Swap Mask", "iwk_rdmap.atomic.add_swap_mask", FT_UINT64, BASE_HEX, NULL, 0, NULL,
          HFILL}},
        {&hf_atomic_compare,
         {"Compare Data", "iwk_rdmap.atomic.compare", FT_UINT64, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_atomic_compare_mask,
         {"Compare Mask", "iwk_rdmap.atomic.compare_mask", FT_UINT64, BASE_HEX, NULL, 0, NULL,
          HFILL}},
        {&hf_atomic_orig,
         {"Original Remote Data Value", "iwk_rdmap.atomic.orig_value", FT_UINT64, BASE_HEX, NULL, 0,
          NULL, HFILL}},
        {&hf_verdict,
         {"Shadow verdict", "iwk_rdmap.verdict", FT_UINT16, BASE_HEX, VALS(iwk_term_vals), 0,
          "The Terminate an RFC-conformant receiver must send for this segment", HFILL}},
        {&hf_shadow_rule,
         {"Stateful rule", "iwk_rdmap.shadow.rule", FT_UINT8, BASE_DEC, VALS(iwk_shadow_rule_vals),
          0, "Which receive-side rule the shadow verdict comes from (libiwarp iw_shadow)", HFILL}},
        {&hf_shadow_ref,
         {"Stateful verdict refers to", "iwk_rdmap.shadow.ref", FT_FRAMENUM, BASE_NONE, NULL, 0,
          "The earlier frame the verdict rests on: the request, the Send with Invalidate", HFILL}},
        {&hf_shadow_assumes,
         {"Stateful verdict assumes", "iwk_rdmap.shadow.assumes", FT_STRING, BASE_NONE, NULL, 0,
          "What the verdict rests on that a capture cannot show (iw_shadow_result.assume)", HFILL}},
        {&hf_rtr,
         {"RFC 6581 RTR", "iwk_rdmap.rtr", FT_BOOLEAN, BASE_NONE, NULL, 0,
          "This message is the initiator's Ready-To-Receive after a peer-to-peer startup", HFILL}},
        {&hf_response_in,
         {"Response in", "iwk_rdmap.response_in", FT_FRAMENUM, BASE_NONE,
          FRAMENUM_TYPE(FT_FRAMENUM_RESPONSE), 0, NULL, HFILL}},
        {&hf_request_in,
         {"Request in", "iwk_rdmap.request_in", FT_FRAMENUM, BASE_NONE,
          FRAMENUM_TYPE(FT_FRAMENUM_REQUEST), 0, NULL, HFILL}},
        {&hf_response_time,
         {"Response time", "iwk_rdmap.response_time", FT_RELATIVE_TIME, BASE_NONE, NULL, 0,
          "Time from the Read/Atomic Request to the first segment of its response (the same "
          "value on every segment of a multi-segment Read Response)",
          HFILL}},
        {&hf_qp,
         {"Stream (QP)", "iwk_rdmap.qp", FT_UINT32, BASE_DEC, NULL, 0,
          "The TCP stream (tcp.stream) this RDMAP stream runs on", HFILL}},
        {&hf_fragments,
         {"Message fragments", "iwk_rdmap.fragments", FT_NONE, BASE_NONE, NULL, 0, NULL, HFILL}},
        {&hf_fragment,
         {"Message fragment", "iwk_rdmap.fragment", FT_FRAMENUM, BASE_NONE, NULL, 0, NULL, HFILL}},
        {&hf_fragment_overlap,
         {"Fragment overlap", "iwk_rdmap.fragment.overlap", FT_BOOLEAN, BASE_NONE, NULL, 0, NULL,
          HFILL}},
        {&hf_fragment_overlap_conflicts,
         {"Conflicting data in fragment overlap", "iwk_rdmap.fragment.overlap.conflicts",
          FT_BOOLEAN, BASE_NONE, NULL, 0, NULL, HFILL}},
        {&hf_fragment_multiple_tails,
         {"Multiple tail fragments", "iwk_rdmap.fragment.multiple_tails", FT_BOOLEAN, BASE_NONE,
          NULL, 0, NULL, HFILL}},
        {&hf_fragment_too_long,
         {"Fragment too long", "iwk_rdmap.fragment.too_long", FT_BOOLEAN, BASE_NONE, NULL, 0, NULL,
          HFILL}},
        {&hf_fragment_error,
         {"Reassembly error", "iwk_rdmap.fragment.error", FT_FRAMENUM, BASE_NONE, NULL, 0, NULL,
          HFILL}},
        {&hf_fragment_count,
         {"Fragment count", "iwk_rdmap.fragment.count", FT_UINT32, BASE_DEC, NULL, 0, NULL, HFILL}},
        {&hf_reassembled_in,
         {"Reassembled in", "iwk_rdmap.reassembled_in", FT_FRAMENUM, BASE_NONE, NULL, 0, NULL,
          HFILL}},
        {&hf_reassembled_length,
         {"Reassembled length", "iwk_rdmap.reassembled.length", FT_UINT32, BASE_DEC, NULL, 0, NULL,
          HFILL}},
        {&hf_reassembled_data,
         {"Reassembled data", "iwk_rdmap.reassembled.data", FT_BYTES, BASE_NONE, NULL, 0, NULL,
          HFILL}},
        {&hf_msg_offset,
         {"Offset in message", "iwk_rdmap.msg.offset", FT_UINT32, BASE_DEC, NULL, 0,
          "Octets of the tagged message before this segment's (TO - the first segment's TO)",
          HFILL}},
        {&hf_msg_first,
         {"Message begins in", "iwk_rdmap.msg.first", FT_FRAMENUM, BASE_NONE, NULL, 0,
          "Frame of the tagged message's first segment", HFILL}},
        {&hf_msg_last,
         {"Message ends in", "iwk_rdmap.msg.last", FT_FRAMENUM, BASE_NONE, NULL, 0,
          "Frame of the tagged message's last segment (L set)", HFILL}},
        {&hf_msg_len,
         {"Message length", "iwk_rdmap.msg.length", FT_UINT32, BASE_DEC, NULL, 0,
          "Octets of the whole tagged message", HFILL}},
    };
    static gint *ett[] = {&ett_ddp,    &ett_ddp_ctrl, &ett_rdmap,    &ett_rdmap_ctrl,
                          &ett_rreq,   &ett_term,     &ett_term_ddp, &ett_term_rdma,
                          &ett_atomic, &ett_fragment, &ett_fragments};
    static ei_register_info ei[] = {
        {&ei_terminate,
         {"iwk_rdmap.terminate", PI_RESPONSE_CODE, PI_NOTE, "Terminate received", EXPFILL}},
        {&ei_not_tracked,
         {"iwk_rdmap.not_tracked", PI_CHECKSUM, PI_NOTE,
          "FPDU failed its CRC or marker check: decoded for display, not delivered", EXPFILL}},
    };

    proto_iwk_ddp = proto_register_protocol("iWARP DDP (iwarpkit): Direct Data Placement, RFC 5041",
                                            "iWARP-DDP", "iwk_ddp");
    proto_iwk_rdmap = proto_register_protocol(
        "iWARP RDMAP (iwarpkit): RDMA Protocol, RFC 5040/7306", "iWARP-RDMAP", "iwk_rdmap");
    proto_register_field_array(proto_iwk_ddp, hf_ddp, array_length(hf_ddp));
    proto_register_field_array(proto_iwk_rdmap, hf, array_length(hf));
    proto_register_subtree_array(ett, array_length(ett));
    expert_module_t *em = expert_register_protocol(proto_iwk_rdmap);
    expert_register_field_array(em, ei, array_length(ei));
    iwk_expert_register(proto_iwk_mpa, proto_iwk_rdmap);

    module_t *mod = prefs_register_protocol(proto_iwk_rdmap, NULL);
    prefs_register_bool_preference(
        mod, "reassemble", "Reassemble messages",
        "Reassemble untagged messages by QN/MSN/MO, and link the segments of tagged ones by "
        "STag/TO",
        &pref_reassemble);
    prefs_register_bool_preference(
        mod, "reassemble_tagged", "Reassemble tagged messages' data",
        "Also copy a multi-segment Write or Read Response into one reassembled message for "
        "display (memory and time on bulk transfers); off, its segments are linked instead",
        &pref_reassemble_tagged);
    reassembly_table_register(&iwk_reassembly_table, &addresses_ports_reassembly_table_functions);

    /* SMB Direct and RPC-over-RDMA register on the built-in's list; feed
     * the same list (create it if the built-in is absent). */
    rdmap_heur_list = find_heur_dissector_list("iwarp_ddp_rdmap");
    if (!rdmap_heur_list)
        rdmap_heur_list = register_heur_dissector_list("iwarp_ddp_rdmap", proto_iwk_rdmap);
    iwk_tap = register_tap("iwk");
}

void proto_reg_handoff_iwk_rdmap(void) {}
