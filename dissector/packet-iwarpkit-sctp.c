/* SPDX-License-Identifier: GPL-2.0-or-later */
/* DDP over SCTP (RFC 5043): the payloads of SCTP DATA chunks with PPID 16
 * (DDP Segment Chunk) and 17 (DDP Stream Session Control), decoded by
 * libiwarp's <iwarp/sctp.h>. A DDP segment goes through the same DDP/RDMAP
 * dissection, shadow analysis and ULP hand-off as one carried by MPA
 * (iwk_dissect_ulpdu); the session control messages that correspond to
 * MPA's startup frames (RFC 6581 §7) feed the shadow as those frames do. */
#include "packet-iwarpkit.h"

#include <epan/conversation.h>
#include <epan/proto_data.h>

int proto_iwk_sctp = -1;

static int hf_ssn = -1;
static int hf_sid = -1;
static int hf_stream = -1;
static int hf_fc = -1;
static int hf_pd_len = -1;
static int hf_ulp_pd = -1;
static int hf_enh = -1;
static int hf_p2p = -1;
static int hf_rtr_send = -1;
static int hf_rtr_write = -1;
static int hf_rtr_read = -1;
static int hf_ird = -1;
static int hf_ord = -1;
static int hf_ddp_len = -1;

static gint ett_sctp = -1;
static gint ett_enh = -1;

static expert_field ei_problem = EI_INIT;
static expert_field ei_ssn = EI_INIT;
static expert_field ei_ssn_far = EI_INIT;
static expert_field ei_no_sid = EI_INIT;
static expert_field ei_held = EI_INIT;

static dissector_handle_t seg_handle, ctrl_handle;

/* One DDP stream: a matched pair of SCTP streams with the same identifier
 * (RFC 5043 §6). */
typedef struct iwk_ssn_dir {
    gboolean known;
    guint16 next;    /* lowest DDP-SSN not yet seen (§6.1) */
    guint64 waiting; /* DDP-SSNs next+1 .. next+64 seen already (bit i-1) */
} iwk_ssn_dir;

/* A DDP Segment Chunk that came before DDP-SSNs below its own: SCTP
 * delivers unordered (RFC 5043 §5.2.1) and a receiver takes chunks in
 * DDP-SSN order (§6.1), so the shadow analyses it when they have come. */
typedef struct iwk_held {
    guint16 ssn;
    guint32 num; /* its frame, and when it was captured */
    nstime_t ts;
    guint32 tsn;
    const guint8 *ddp; /* the DDP segment (file scope copy) */
    guint ddp_len;
    const void *slot;    /* the RDMAP layer's state (iwk_fpdu_ctx.seg_slot) */
    guint32 analysed_at; /* the frame whose chunk let it be analysed; 0: never */
    gboolean after_loss; /* analysed once the DDP-SSNs before it were given up */
} iwk_held;

/* Held chunks of one direction before the DDP-SSNs they wait for are
 * taken as missing from the capture (the shadow is told of a loss). */
#define HOLD_MAX 8

typedef struct iwk_sstream {
    iwk_conv *c;
    iwk_ssn_dir ssn[2];
    wmem_map_t *held[2];             /* TSN -> iwk_held, for later passes */
    iwk_held *pend[2][HOLD_MAX + 1]; /* not yet analysed, by DDP-SSN */
    guint npend[2];
} iwk_sstream;

/* Per association (the SCTP conversation): DDP streams by identifier. */
typedef struct iwk_sassoc {
    wmem_map_t *streams;
} iwk_sassoc;

/* What the first pass found for one chunk (the SSN check needs order). */
typedef struct iwk_schunk {
    guint8 place; /* iw_sctp_ssn_place, or SSN_DUPLICATE */
    guint16 ssn_due;
} iwk_schunk;

#define SSN_DUPLICATE 0x10
/* The receiver's window is not on the wire: DDP-SSNs further ahead than
 * the engine's default are noted, not judged (§10 lets it terminate). */
#define SSN_WINDOW IW_SCTP_WINDOW_DEFAULT

static guint32 stream_count;

static void iwk_sctp_init(void) { stream_count = 0; }

static const value_string fc_vals[] = {
#define IW_X_(n, c, rfc, s) {c, s},
    IW_SCTP_FC_LIST(IW_X_)
#undef IW_X_
        {0, NULL}};

/* The stream identifier and TSN of the DATA chunk whose payload tvb is:
 * the SCTP dissector hands sub-dissectors the PPID only, so they are read
 * from the chunk header that precedes an unfragmented payload in the frame
 * (RFC 4960 §3.3.1: TSN, Stream Identifier, SSN, PPID, user data). FALSE
 * for a payload SCTP reassembled from fragments. */
static gboolean chunk_ids(tvbuff_t *tvb, guint32 ppi, guint16 *sid, guint32 *tsn) {
    tvbuff_t *ds = tvb_get_ds_tvb(tvb);
    gint off = tvb_raw_offset(tvb);
    if (!ds || off < 12 || tvb_captured_length(ds) < (guint)off)
        return FALSE;
    if (tvb_get_ntohl(ds, off - 4) != ppi)
        return FALSE;
    *tsn = tvb_get_ntohl(ds, off - 12);
    *sid = tvb_get_ntohs(ds, off - 8);
    return TRUE;
}

static iwk_sstream *stream_of(packet_info *pinfo, guint16 sid) {
    conversation_t *conv = find_or_create_conversation(pinfo);
    iwk_sassoc *a = (iwk_sassoc *)conversation_get_proto_data(conv, proto_iwk_sctp);
    if (!a) {
        a = wmem_new0(wmem_file_scope(), iwk_sassoc);
        a->streams = wmem_map_new(wmem_file_scope(), g_direct_hash, g_direct_equal);
        conversation_add_proto_data(conv, proto_iwk_sctp, a);
    }
    iwk_sstream *s = (iwk_sstream *)wmem_map_lookup(a->streams, GUINT_TO_POINTER((guint)sid));
    if (!s) {
        s = wmem_new0(wmem_file_scope(), iwk_sstream);
        s->c = iwk_conv_new(pinfo, stream_count++);
        for (int d = 0; d < 2; d++)
            s->held[d] = wmem_map_new(wmem_file_scope(), g_direct_hash, g_direct_equal);
        wmem_map_insert(a->streams, GUINT_TO_POINTER((guint)sid), s);
    }
    return s;
}

static int stream_dir(const iwk_conv *c, const packet_info *pinfo) {
    return (pinfo->srcport == c->port0 && addresses_equal(&pinfo->src, &c->addr0)) ? 0 : 1;
}

/* RFC 5043 §5.2.1, §6.1, §10 through libiwarp's rule (iw_sctp_ssn_place_of,
 * as the engine takes chunks): a session's DDP-SSNs start at 0 with its
 * Initiate, Accept or Reject and are each used once; SCTP delivers chunks
 * unordered, so one ahead of the next due only waits. Judged on the first
 * pass in capture order; a capture that starts inside a session learns the
 * number first. */
static guint8 ssn_take(iwk_ssn_dir *t, guint16 ssn, gboolean starts, guint16 *due) {
    if (starts) {
        t->known = TRUE;
        t->next = 0;
        t->waiting = 0;
    } else if (!t->known) {
        t->known = TRUE;
        t->next = ssn;
        t->waiting = 0;
    }
    *due = t->next;
    iw_sctp_ssn_place place = iw_sctp_ssn_place_of(t->next, ssn, SSN_WINDOW);
    switch (place) {
    case IW_SCTP_SSN_NEXT:
        t->next++;
        while (t->waiting & 1) { /* what waited for this one */
            t->waiting >>= 1;
            t->next++;
        }
        t->waiting >>= 1;
        return place;
    case IW_SCTP_SSN_AHEAD: {
        guint64 bit = (guint64)1 << ((guint16)(ssn - t->next) - 1);
        if (t->waiting & bit)
            return SSN_DUPLICATE;
        t->waiting |= bit;
        return place;
    }
    case IW_SCTP_SSN_BEYOND:
        /* Chunks missing from the capture, most likely: start again here. */
        t->next = (guint16)(ssn + 1);
        t->waiting = 0;
        return place;
    default:
        return place;
    }
}

static guint8 check_ssn(packet_info *pinfo, proto_item *item, iwk_sstream *s, int d, guint16 ssn,
                        gboolean starts, guint32 tsn) {
    iwk_schunk *k = (iwk_schunk *)p_get_proto_data(wmem_file_scope(), pinfo, proto_iwk_sctp, tsn);
    if (!k && !PINFO_FD_VISITED(pinfo)) {
        k = wmem_new0(wmem_file_scope(), iwk_schunk);
        k->place = ssn_take(&s->ssn[d], ssn, starts, &k->ssn_due);
        p_add_proto_data(wmem_file_scope(), pinfo, proto_iwk_sctp, tsn, k);
    }
    if (!k)
        return IW_SCTP_SSN_NEXT;
    switch (k->place) {
    case IW_SCTP_SSN_STALE:
        expert_add_info_format(pinfo, item, &ei_ssn,
                               "DDP-SSN %u already used in this session (%u is the lowest not "
                               "yet seen): each is used once, from 0 (RFC 5043 §6.1; an invalid "
                               "DDP-SSN MAY terminate the stream, §10)",
                               ssn, k->ssn_due);
        break;
    case SSN_DUPLICATE:
        expert_add_info_format(pinfo, item, &ei_ssn,
                               "DDP-SSN %u seen twice while %u is still awaited: each is used "
                               "once (RFC 5043 §6.1, §10)",
                               ssn, k->ssn_due);
        break;
    case IW_SCTP_SSN_BEYOND:
        expert_add_info_format(pinfo, item, &ei_ssn_far,
                               "DDP-SSN %u is %u ahead of %u, the lowest not yet seen: chunks "
                               "missing from the capture, or past a %u-chunk receive window, "
                               "which a receiver MAY terminate on (RFC 5043 §10)",
                               ssn, (unsigned)(guint16)(ssn - k->ssn_due), k->ssn_due,
                               (unsigned)SSN_WINDOW);
        break;
    default:
        break;
    }
    return k->place;
}

/* ---- DDP-SSN order for the shadow ---- */

/* The first-pass analysis of a held chunk, as of its own frame. */
static void analyse_held(packet_info *pinfo, iwk_sstream *s, int d, iwk_held *h, gboolean lost) {
    packet_info hp = *pinfo; /* read for the frame number and time of links and records */
    hp.num = h->num;
    hp.abs_ts = h->ts;
    iwk_fpdu_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.conv = s->c;
    ctx.d = d;
    ctx.seq = h->tsn;
    ctx.mpa_verdict = iw_verdict_ok();
    ctx.track = TRUE;
    h->slot = NULL;
    ctx.seg_slot = &h->slot;
    iwk_analyse_ulpdu(&hp, &ctx, h->ddp, h->ddp_len);
    h->analysed_at = pinfo->num;
    h->after_loss = lost;
}

/* Analyse the held chunks that are in order now: those below the next
 * DDP-SSN due, or all of them when the ones they wait for are given up
 * (lost: the shadow is told once). Lowest DDP-SSN first. */
static void release(packet_info *pinfo, iwk_sstream *s, int d, gboolean lost) {
    if (lost && s->npend[d])
        iw_shadow_lost(s->c->shadow, (unsigned)d);
    for (;;) {
        guint best = s->npend[d];
        for (guint i = 0; i < s->npend[d]; i++) {
            iwk_held *h = s->pend[d][i];
            gboolean due = lost || iw_sctp_ssn_place_of(s->ssn[d].next, h->ssn, SSN_WINDOW) ==
                                       IW_SCTP_SSN_STALE;
            if (due &&
                (best == s->npend[d] || (guint16)(h->ssn - s->pend[d][best]->ssn) >= 0x8000u))
                best = i;
        }
        if (best == s->npend[d])
            return;
        iwk_held *h = s->pend[d][best];
        s->pend[d][best] = s->pend[d][--s->npend[d]];
        analyse_held(pinfo, s, d, h, lost);
    }
}

/* A DDP Segment Chunk ahead of its DDP-SSN order waits (first pass). */
static iwk_held *hold(packet_info *pinfo, iwk_sstream *s, int d, guint16 ssn, guint32 tsn,
                      const guint8 *ddp, guint len) {
    iwk_held *h = wmem_new0(wmem_file_scope(), iwk_held);
    h->ssn = ssn;
    h->num = pinfo->num;
    h->ts = pinfo->abs_ts;
    h->tsn = tsn;
    h->ddp = len ? (const guint8 *)wmem_memdup(wmem_file_scope(), ddp, len) : NULL;
    h->ddp_len = len;
    h->slot = iwk_seg_pending();
    wmem_map_insert(s->held[d], GUINT_TO_POINTER(tsn), h);
    s->pend[d][s->npend[d]++] = h;
    return h;
}

/* Past HOLD_MAX held chunks the DDP-SSNs they wait for are taken as
 * missing: they are analysed, and the order goes on after the highest. */
static void hold_limit(packet_info *pinfo, iwk_sstream *s, int d) {
    if (s->npend[d] <= HOLD_MAX)
        return;
    guint16 top = s->pend[d][0]->ssn;
    for (guint i = 1; i < s->npend[d]; i++)
        if ((guint16)(s->pend[d][i]->ssn - top) < 0x8000u)
            top = s->pend[d][i]->ssn;
    release(pinfo, s, d, TRUE);
    s->ssn[d].next = (guint16)(top + 1);
    s->ssn[d].waiting = 0;
}

static proto_item *add_top(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, proto_tree **st,
                           gboolean have_ids, guint16 sid, const iwk_sstream *s) {
    col_set_str(pinfo->cinfo, COL_PROTOCOL, "iWARP");
    proto_item *ti = proto_tree_add_item(tree, proto_iwk_sctp, tvb, 0, -1, ENC_NA);
    *st = proto_item_add_subtree(ti, ett_sctp);
    if (have_ids) {
        proto_item *pi = proto_tree_add_uint(*st, hf_sid, tvb, 0, 0, sid);
        proto_item_set_generated(pi);
        pi = proto_tree_add_uint(*st, hf_stream, tvb, 0, 0, s->c->index);
        proto_item_set_generated(pi);
    } else {
        expert_add_info(pinfo, ti, &ei_no_sid);
    }
    return ti;
}

/* What both chunk kinds begin with: the payload in one span (SCTP hands
 * over whole messages), the chunk's stream and TSN, its DDP stream, and our
 * top item. */
typedef struct {
    const guint8 *p;
    guint len;
    gboolean ids; /* sid and tsn were read from the chunk header */
    guint16 sid;
    guint32 tsn;
    iwk_sstream *s;
    proto_tree *st;
    proto_item *ti;
} iwk_chunk;

static void chunk_begin(iwk_chunk *k, tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree,
                        guint32 ppid) {
    memset(k, 0, sizeof *k);
    k->p = iwk_tvb_bytes(tvb, 0, &k->len);
    k->ids = chunk_ids(tvb, ppid, &k->sid, &k->tsn);
    k->s = stream_of(pinfo, k->ids ? k->sid : 0xFFFF);
    k->ti = add_top(tvb, pinfo, tree, &k->st, k->ids, k->sid, k->s);
}

static void problem(packet_info *pinfo, proto_item *ti, iw_sctp_problem why) {
    expert_add_info_format(pinfo, ti, &ei_problem,
                           "DDP Stream Session must be terminated: %s (%s; RFC 5043 §6.1)",
                           iw_sctp_problem_str(why), iw_sctp_problem_rfc(why));
    iwk_alert(pinfo, ti, PI_ERROR);
}

static int dissect_seg(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data _U_) {
    iwk_chunk k;
    chunk_begin(&k, tvb, pinfo, tree, IW_SCTP_PPID_DDP_SEGMENT);
    iw_sctp_seg seg;
    iw_sctp_problem why;
    if (!k.p || iw_sctp_seg_decode(&seg, k.p, k.len, &why) < 0) {
        problem(pinfo, k.ti, IW_SCTP_PROBLEM_SEG_SHORT);
        col_append_sep_str(pinfo->cinfo, COL_INFO, " | ", "[DDP Segment Chunk too short]");
        return tvb_captured_length(tvb);
    }
    proto_tree_add_item(k.st, hf_ssn, tvb, 0, IW_SCTP_SSN_LEN, ENC_BIG_ENDIAN);
    proto_tree_add_uint(k.st, hf_ddp_len, tvb, IW_SCTP_SSN_LEN, (gint)seg.ddp_len,
                        (guint32)seg.ddp_len);
    int d = stream_dir(k.s->c, pinfo);
    guint8 place = IW_SCTP_SSN_NEXT;
    iwk_held *h = NULL;
    if (k.ids) {
        gboolean first = !PINFO_FD_VISITED(pinfo) &&
                         !p_get_proto_data(wmem_file_scope(), pinfo, proto_iwk_sctp, k.tsn);
        place = check_ssn(pinfo, k.ti, k.s, d, seg.ssn, FALSE, k.tsn);
        if (first && place == IW_SCTP_SSN_BEYOND)
            release(pinfo, k.s, d, TRUE); /* the order starts again: what waited is lost */
        h = first && place == IW_SCTP_SSN_AHEAD
                ? hold(pinfo, k.s, d, seg.ssn, k.tsn, seg.ddp, (guint)seg.ddp_len)
                : (iwk_held *)wmem_map_lookup(k.s->held[d], GUINT_TO_POINTER(k.tsn));
    }
    /* The DDP segment, as MPA hands over a ULPDU (RFC 5043 §5.2.2: it
     * "serves the same purpose as the MPA MULPDU"). */
    iwk_fpdu_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.conv = k.s->c;
    ctx.d = d;
    ctx.seq = k.ids ? k.tsn : pinfo->num;
    ctx.mpa_verdict = iw_verdict_ok();
    ctx.track = k.ids;
    ctx.mpa_item = k.ti;
    if (h) {
        ctx.seg_slot = &h->slot;
        if (!h->analysed_at)
            expert_add_info_format(pinfo, k.ti, &ei_held,
                                   "Analysed in DDP-SSN order, after DDP-SSN %u (SCTP delivers "
                                   "unordered, RFC 5043 §5.2.1, §6.1)%s",
                                   (unsigned)(guint16)(h->ssn - 1),
                                   PINFO_FD_VISITED(pinfo)
                                       ? ": never, the capture does not hold the chunks before it"
                                       : "");
        else
            expert_add_info_format(pinfo, k.ti, &ei_held,
                                   "Analysed in DDP-SSN order when frame %u completed the "
                                   "DDP-SSNs before it%s (RFC 5043 §5.2.1, §6.1)",
                                   h->analysed_at,
                                   h->after_loss ? ", taken as missing from the capture" : "");
    }
    iwk_dissect_ulpdu(tvb_new_subset_remaining(tvb, IW_SCTP_SSN_LEN), pinfo, tree, &ctx);
    if (k.ids && !PINFO_FD_VISITED(pinfo)) {
        if (place == IW_SCTP_SSN_NEXT)
            release(pinfo, k.s, d, FALSE);
        hold_limit(pinfo, k.s, d);
    }
    return tvb_captured_length(tvb);
}

static int dissect_ctrl(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data _U_) {
    iwk_chunk k;
    chunk_begin(&k, tvb, pinfo, tree, IW_SCTP_PPID_DDP_CONTROL);
    iw_sctp_ctrl c;
    iw_sctp_problem why = IW_SCTP_PROBLEM_CTRL_SHORT;
    iw_ssize r = k.p ? iw_sctp_ctrl_decode(&c, k.p, k.len, &why) : IW_ERR_PROTO;
    if (k.len >= IW_SCTP_SSN_LEN)
        proto_tree_add_item(k.st, hf_ssn, tvb, 0, IW_SCTP_SSN_LEN, ENC_BIG_ENDIAN);
    if (k.len >= IW_SCTP_CTRL_HDR_LEN) {
        proto_tree_add_item(k.st, hf_fc, tvb, IW_SCTP_SSN_LEN, 2, ENC_BIG_ENDIAN);
        proto_tree_add_uint(k.st, hf_pd_len, tvb, IW_SCTP_CTRL_HDR_LEN, (gint)(k.len - 4),
                            k.len - 4);
    }
    const char *name = k.len >= IW_SCTP_CTRL_HDR_LEN ? iw_sctp_fc_str(c.fc) : NULL;
    col_append_sep_fstr(pinfo->cinfo, COL_INFO, " | ", "%s SID=%u",
                        name ? name : "DDP Stream Session Control", (unsigned)k.sid);
    if (r < 0) {
        problem(pinfo, k.ti, why);
        return tvb_captured_length(tvb);
    }
    int d = stream_dir(k.s->c, pinfo);
    /* A direction'k.s session begins with the Initiate (active side) or the
     * Accept or Reject (passive side). */
    iw_mpa_rr rr;
    gboolean starts = iw_sctp_ctrl_as_mpa(&c, &rr);
    guint8 place = k.ids ? check_ssn(pinfo, k.ti, k.s, d, c.ssn, starts, k.tsn) : 0;
    guint off = IW_SCTP_CTRL_HDR_LEN;
    if (c.enhanced) {
        proto_item *ei = proto_tree_add_item(k.st, hf_enh, tvb, off, IW_MPA_V2_DATA_LEN, ENC_NA);
        proto_tree *et = proto_item_add_subtree(ei, ett_enh);
        proto_tree_add_boolean(et, hf_p2p, tvb, off, 2, c.v2.p2p);
        proto_tree_add_boolean(et, hf_rtr_send, tvb, off, 2, c.v2.rtr_send);
        proto_tree_add_uint(et, hf_ird, tvb, off, 2, c.v2.ird);
        proto_tree_add_boolean(et, hf_rtr_write, tvb, off + 2, 2, c.v2.rtr_write);
        proto_tree_add_boolean(et, hf_rtr_read, tvb, off + 2, 2, c.v2.rtr_read);
        proto_tree_add_uint(et, hf_ord, tvb, off + 2, 2, c.v2.ord);
        iwk_expert_notes(pinfo, ei, c.notes);
        col_append_fstr(pinfo->cinfo, COL_INFO, " IRD=%u ORD=%u%s", c.v2.ird, c.v2.ord,
                        c.v2.p2p ? " p2p" : "");
        off += IW_MPA_V2_DATA_LEN;
    }
    if (c.ulp_pd_len)
        proto_tree_add_item(k.st, hf_ulp_pd, tvb, off, c.ulp_pd_len, ENC_NA);
    /* The shadow learns the session'k.s start as from MPA frames (RTR and
     * IRD/ORD rules, RFC 6581 §7 and §9). */
    if (k.ids && !PINFO_FD_VISITED(pinfo) && starts) {
        iw_shadow_result res;
        iw_shadow_mpa(k.s->c->shadow, (unsigned)d, &rr, pinfo->num, &res);
    }
    /* Segments that waited for this chunk's DDP-SSN come after it. */
    if (k.ids && !PINFO_FD_VISITED(pinfo) && place == IW_SCTP_SSN_NEXT)
        release(pinfo, k.s, d, FALSE);
    return tvb_captured_length(tvb);
}

void proto_register_iwk_sctp(void) {
    static hf_register_info hf[] = {
        {&hf_ssn,
         {"DDP-SSN", "iwk_sctp.ssn", FT_UINT16, BASE_DEC, NULL, 0,
          "DDP Source Sequence Number (RFC 5043 §5.2.1)", HFILL}},
        {&hf_sid,
         {"Stream Identifier", "iwk_sctp.sid", FT_UINT16, BASE_DEC, NULL, 0,
          "SCTP stream of the DATA chunk: one DDP stream per identifier (RFC 5043 §6)", HFILL}},
        {&hf_stream,
         {"DDP stream", "iwk_sctp.stream", FT_UINT32, BASE_DEC, NULL, 0,
          "Index of this DDP stream (association and stream identifier) in the capture", HFILL}},
        {&hf_fc,
         {"Function Code", "iwk_sctp.fc", FT_UINT16, BASE_HEX, VALS(fc_vals), 0,
          "DDP Stream Session Control function (RFC 6580 §3.5, RFC 6581 §7)", HFILL}},
        {&hf_pd_len,
         {"Private Data length", "iwk_sctp.pd_len", FT_UINT32, BASE_DEC, NULL, 0,
          "Octets after the Function Code, enhanced data included (at most 512)", HFILL}},
        {&hf_ulp_pd,
         {"Private Data", "iwk_sctp.private_data", FT_BYTES, BASE_NONE, NULL, 0,
          "Private Data for the ULP", HFILL}},
        {&hf_enh,
         {"Enhanced connection data", "iwk_sctp.enhanced", FT_BYTES, BASE_NONE, NULL, 0,
          "RFC 6581 §7: IRD, ORD and the peer-to-peer RTR types", HFILL}},
        {&hf_p2p,
         {"Peer-to-peer (A)", "iwk_sctp.p2p", FT_BOOLEAN, BASE_NONE, NULL, 0, NULL, HFILL}},
        {&hf_rtr_send,
         {"RTR: zero-length Send (B)", "iwk_sctp.rtr_send", FT_BOOLEAN, BASE_NONE, NULL, 0, NULL,
          HFILL}},
        {&hf_rtr_write,
         {"RTR: zero-length RDMA Write (C)", "iwk_sctp.rtr_write", FT_BOOLEAN, BASE_NONE, NULL, 0,
          NULL, HFILL}},
        {&hf_rtr_read,
         {"RTR: zero-length RDMA Read (D)", "iwk_sctp.rtr_read", FT_BOOLEAN, BASE_NONE, NULL, 0,
          NULL, HFILL}},
        {&hf_ird, {"IRD", "iwk_sctp.ird", FT_UINT16, BASE_DEC, NULL, 0, NULL, HFILL}},
        {&hf_ord, {"ORD", "iwk_sctp.ord", FT_UINT16, BASE_DEC, NULL, 0, NULL, HFILL}},
        {&hf_ddp_len,
         {"DDP segment length", "iwk_sctp.ddp_len", FT_UINT32, BASE_DEC, NULL, 0, NULL, HFILL}},
    };
    static gint *ett[] = {&ett_sctp, &ett_enh};
    static ei_register_info ei[] = {
        {&ei_problem,
         {"iwk_sctp.session_terminate", PI_PROTOCOL, PI_ERROR,
          "DDP Stream Session must be terminated", EXPFILL}},
        {&ei_ssn, {"iwk_sctp.ssn_bad", PI_SEQUENCE, PI_WARN, "DDP-SSN used twice", EXPFILL}},
        {&ei_ssn_far,
         {"iwk_sctp.ssn_far", PI_SEQUENCE, PI_NOTE, "DDP-SSN far ahead of the lowest awaited",
          EXPFILL}},
        {&ei_held,
         {"iwk_sctp.ssn_order", PI_SEQUENCE, PI_CHAT,
          "Chunk analysed in DDP-SSN order, not capture order", EXPFILL}},
        {&ei_no_sid,
         {"iwk_sctp.no_sid", PI_REASSEMBLE, PI_NOTE,
          "Reassembled chunk: its stream identifier is not known here, no state kept", EXPFILL}},
    };
    proto_iwk_sctp = proto_register_protocol("iWARP DDP over SCTP (iwarpkit), RFC 5043",
                                             "iWARP-SCTP", "iwk_sctp");
    proto_register_field_array(proto_iwk_sctp, hf, array_length(hf));
    proto_register_subtree_array(ett, array_length(ett));
    expert_module_t *em = expert_register_protocol(proto_iwk_sctp);
    expert_register_field_array(em, ei, array_length(ei));
    seg_handle = register_dissector_with_description(
        "iwk_sctp_seg", "iWARP DDP Segment Chunk (iwarpkit)", dissect_seg, proto_iwk_sctp);
    ctrl_handle = register_dissector_with_description("iwk_sctp_ctrl",
                                                      "iWARP DDP Stream Session Control (iwarpkit)",
                                                      dissect_ctrl, proto_iwk_sctp);
    register_init_routine(iwk_sctp_init);
}

void proto_reg_handoff_iwk_sctp(void) {
    /* RFC 5043 §5.2: the PPIDs IANA assigned. */
    dissector_add_uint("sctp.ppi", IW_SCTP_PPID_DDP_SEGMENT, seg_handle);
    dissector_add_uint("sctp.ppi", IW_SCTP_PPID_DDP_CONTROL, ctrl_handle);
}
