/* SPDX-License-Identifier: GPL-2.0-or-later */
/* packet-iwarpkit-mpa.c
 * MPA over TCP: RFC 5044 (Marker PDU Aligned Framing), RFC 6581 (enhanced
 * startup, MPA v2). Part of the iwarpkit Wireshark plugin.
 *
 * Framing: each direction of a TCP connection is a run of MPA Request or
 * Reply frames followed by FPDUs. The plugin keeps its own PDU loop over the
 * TCP payload (TCP desegmentation fills in FPDUs split across segments) and
 * sizes every PDU with libiwarp's iw_mpa_fpdu_len(), which returns 0 for
 * "need more". Marker positions come from the TCP sequence number of each
 * PDU relative to SeqStart, the first octet of Full Operation in that
 * direction (RFC 5044 §4.3), in unsigned 32-bit arithmetic, so markers at
 * any segment offset and across sequence wrap work.
 *
 * Stream discovery:
 *   - an MPA Request or Reply key claims the connection (heuristic);
 *   - mid-stream (no startup frames captured): a segment that starts an
 *     FPDU whose CRC verifies, or, without CRC, one whose FPDUs tile the
 *     segment and decode as DDP/RDMAP with no verdict; markers are found by
 *     trying the grid phases;
 *   - Decode As / the TCP port preference force it.
 * State is built on the first pass only (PINFO_FD_VISITED) and every PDU's
 * framing decision is stored per frame, keyed by its sequence number.
 *
 * Limitations: a segment that begins inside an FPDU after a capture gap is
 * shown as undecoded until a segment starts at an FPDU again (markers are
 * not yet used to resynchronise); RDMAC (Rev 0) framing is not decoded. */
#include <string.h>

#include <epan/conversation.h>
#include <epan/prefs.h>
#include <epan/proto_data.h>
#include <epan/show_exception.h>
#include <epan/exceptions.h>
#include <epan/dissectors/packet-tcp.h>
#include <epan/prefs-int.h>

#include "packet-iwarpkit.h"
#include "packet-iwarpkit-storage.h"

int proto_iwk_mpa = -1;
int hf_iwk_alert = -1;
gint ett_iwk_alert = -1;

static dissector_handle_t iwk_tcp_handle;

/* Preferences. */
static gboolean pref_check_crc = TRUE;
static gboolean pref_midstream = TRUE;
static gboolean pref_midstream_no_crc = TRUE;
static gboolean pref_yield = FALSE;
static gboolean pref_desegment = TRUE;

static int hf_rr = -1;
static int hf_key = -1;
static int hf_rr_type = -1;
static int hf_flags = -1;
static int hf_flag_m = -1;
static int hf_flag_c = -1;
static int hf_flag_r = -1;
static int hf_flag_s = -1;
static int hf_flag_res = -1;
static int hf_rev = -1;
static int hf_pd_len = -1;
static int hf_pd = -1;
static int hf_ulp_pd = -1;
static int hf_v2 = -1;
static int hf_v2_a = -1;
static int hf_v2_b = -1;
static int hf_v2_ird = -1;
static int hf_v2_c = -1;
static int hf_v2_d = -1;
static int hf_v2_ord = -1;
static int hf_fpdu = -1;
static int hf_ulpdu_len = -1;
static int hf_pad = -1;
static int hf_crc = -1;
static int hf_crc_status = -1;
static int hf_marker = -1;
static int hf_marker_res = -1;
static int hf_marker_ptr = -1;
static int hf_stream_pos = -1;
static int hf_markers_on = -1;
static int hf_crc_on = -1;
static int hf_lost = -1;
static int hf_conv = -1;

static gint ett_mpa = -1;
static gint ett_rr = -1;
static gint ett_flags = -1;
static gint ett_v2 = -1;
static gint ett_fpdu = -1;
static gint ett_marker = -1;

static expert_field ei_lost = EI_INIT;
static expert_field ei_truncated = EI_INIT;
static expert_field ei_partial = EI_INIT;
static expert_field ei_retrans = EI_INIT;
static expert_field ei_v2_reply_not_p2p = EI_INIT;
static expert_field ei_v2_ord = EI_INIT;
static expert_field ei_v2_rtr_unsupported = EI_INIT;
static expert_field ei_responder_first = EI_INIT;
static expert_field ei_rr_after_fo = EI_INIT;

static const value_string rr_type_vals[] = {
    {IW_MPA_REQUEST, "MPA Request"}, {IW_MPA_REPLY, "MPA Reply"}, {0, NULL}};

#define PDU_RR 1
#define PDU_FPDU 2
#define PDU_LOST 3

/* The first-pass framing decision for one PDU, replayed on later passes. */
typedef struct iwk_pdu {
    guint8 kind;
    gboolean markers;
    gboolean crc_on;
    guint32 pos;             /* grid position of the first wire octet */
    guint32 len;             /* wire length; 0 until the PDU was complete */
    gboolean track;          /* first-pass state may be updated by this PDU */
    gboolean resp_first;     /* responder FPDU before any initiator FPDU */
    gboolean midstream_lost; /* LOST before framing was established */
    gboolean provisional;    /* FPDU of a mid-stream reading whose markers are undecided */
    gboolean after_gap;      /* a direction's first PDU, its first octets not captured */
    gboolean crc_auto;       /* Full Operation's first FPDU with CRC use unknown: crc_on
                                is set from its CRC once it is whole (iw_mpa_fo_crc) */
    iw_verdict expect;       /* MPA frame where the other type was due */
    guint8 v2_flags;
    iw_shadow_result *shadow; /* MPA frame: the shadow's verdict (RFC 6581 §9.2 RTR);
                               * NULL elsewhere (kept per PDU, so not inline) */
    const void *seg;          /* FPDU: the RDMAP layer's state (iwk_fpdu_ctx.seg_slot) */
} iwk_pdu;

#define V2_REPLY_NOT_P2P 0x1
#define V2_ORD_TOO_BIG 0x2
#define V2_RR_AFTER_FO 0x4

static guint32 conv_count;

/* TCP's "relative sequence numbers" (stream_start), read once per file:
 * a change of preference redissects, which runs this again. */
static gboolean tcp_relative_seq = TRUE;

static void iwk_mpa_init(void) {
    conv_count = 0;
    module_t *m = prefs_find_module("tcp");
    pref_t *rel = m ? prefs_find_preference(m, "relative_sequence_numbers") : NULL;
    tcp_relative_seq = rel ? prefs_get_bool_value(rel, pref_current) : TRUE;
}

/* ---------------- conversation state ---------------- */

iwk_conv *iwk_conv_new(packet_info *pinfo, guint32 index) {
    iwk_conv *c = wmem_new0(wmem_file_scope(), iwk_conv);
    copy_address_wmem(wmem_file_scope(), &c->addr0, &pinfo->src);
    c->port0 = pinfo->srcport;
    c->crc = -1;
    c->index = index;
    c->claim_frame = pinfo->num;
    c->init_dir = -1;
    c->shadow = wmem_new(wmem_file_scope(), iw_shadow);
    iw_shadow_init(c->shadow);
    for (int d = 0; d < 2; d++) {
        c->dir[d].markers = -1;
        c->dir[d].tagged = wmem_map_new(wmem_file_scope(), g_direct_hash, g_direct_equal);
    }
    return c;
}

static iwk_conv *conv_new(conversation_t *conv, packet_info *pinfo) {
    /* The TCP dissector's stream index (tcp.stream), so statistics and
     * iwk_mpa.stream / iwk_rdmap.qp name streams as Wireshark does. */
    struct tcp_analysis *tcpd = get_tcp_conversation_data(conv, pinfo);
    iwk_conv *c = iwk_conv_new(pinfo, tcpd ? tcpd->stream : conv_count);
    conv_count++;
    conversation_add_proto_data(conv, proto_iwk_mpa, c);
    return c;
}

static int conv_dir(const iwk_conv *c, const packet_info *pinfo) {
    return (pinfo->srcport == c->port0 && addresses_equal(&pinfo->src, &c->addr0)) ? 0 : 1;
}

/* Generated iwk_mpa.stream, the TCP stream (tcp.stream) of this PDU: in
 * the protocol line ti with what the PDU is (one append, not two: under -V
 * each is a formatting), its field filterable but without a line of its
 * own under every FPDU. */
static void add_stream(proto_item *ti, proto_tree *mt, tvbuff_t *tvb, const iwk_conv *c,
                       const char *what) {
    proto_item_append_text(ti, ", stream %u, %s", c->index, what);
    proto_item *si = proto_tree_add_uint(mt, hf_conv, tvb, 0, 0, c->index);
    proto_item_set_generated(si);
    proto_item_set_hidden(si);
}

const guint8 *iwk_tvb_bytes(tvbuff_t *tvb, guint offset, guint *len) {
    *len = tvb_captured_length_remaining(tvb, offset);
    return *len ? tvb_get_ptr(tvb, offset, *len) : NULL;
}

/* ---------------- framing probes (all through libiwarp) ---------------- */

/* True if the bytes begin with an MPA Request or Reply key, or a key of
 * their shape (decoded as a startup frame with a bad key). */
static gboolean probe_rr(const guint8 *p, guint len, iw_mpa_rr *rr) {
    iw_verdict v;
    if (len < IW_MPA_KEY_LEN)
        return FALSE;
    iw_ssize r = iw_mpa_rr_decode(rr, p, len, &v);
    return !(r == IW_ERR_PROTO && v.close == IW_CLOSE_MPA_BAD_KEY) || iw_mpa_key_shaped(p, len);
}

static gboolean seq_before(guint32 a, guint32 b) { return (gint32)(a - b) < 0; }

/* Octets and segment starts kept per direction while framing is unknown:
 * enough for a chain of FPDUs of any size to prove itself. */
#define SYNC_WINDOW (2u * IW_MPA_FPDU_WIRE_MAX)
#define SYNC_CANDS IW_MPA_SYNC_CANDS

static void sync_reset(iwk_dir *D, guint32 seq) {
    D->sync_len = 0;
    D->sync_seq0 = seq;
    D->sync_ncands = 0;
    D->sync_first = 0;
    D->sync_found = FALSE;
}

/* Drop candidates the synchroniser rejected for good. */
static void sync_compact(iwk_dir *D) {
    memmove(D->sync_cands, D->sync_cands + D->sync_first,
            (D->sync_ncands - D->sync_first) * sizeof *D->sync_cands);
    D->sync_ncands -= (guint32)D->sync_first;
    D->sync_first = 0;
}

/* The reading the synchroniser looks for in this direction: its markers
 * and CRC use when known, and the grid position of the first octet held. */
static void sync_cfg(const iwk_conv *c, const iwk_dir *D, iw_mpa_sync_cfg *cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->markers = D->markers == 1 ? IW_DF_ON : D->markers == 0 ? IW_DF_OFF : IW_DF_AUTO;
    cfg->crc = c->crc == 1 || !pref_midstream_no_crc ? IW_DF_ON : IW_DF_AUTO;
    cfg->have_pos = D->fo_known;
    cfg->pos0 = D->sync_seq0 - D->fo_seq;
}

/* Append the octets of the segment at seq that are not held yet, and the
 * candidates libiwarp names (iw_mpa_sync_every4): its start, and with the
 * grid known and CRCs on every 4-aligned grid position in it, as
 * iwarp-decode offers them. A hole in what TCP handed us starts afresh. */
static void sync_add(iwk_conv *c, iwk_dir *D, guint32 seq, const guint8 *p, guint len) {
    if (!D->sync_buf) {
        D->sync_buf = (guint8 *)wmem_alloc(wmem_file_scope(), SYNC_WINDOW);
        D->sync_cap = SYNC_WINDOW;
        D->sync_cands = wmem_alloc_array(wmem_file_scope(), guint64, SYNC_CANDS);
        sync_reset(D, seq);
    }
    guint32 end = D->sync_seq0 + D->sync_len;
    if (D->sync_len && (seq_before(end, seq) || seq_before(seq, D->sync_seq0)))
        sync_reset(D, seq); /* a gap, or data before what we hold */
    if (!D->sync_len)
        D->sync_seq0 = seq;
    guint32 skip =
        seq_before(seq, D->sync_seq0 + D->sync_len) ? D->sync_seq0 + D->sync_len - seq : 0;
    if (skip >= len)
        return;
    if (D->sync_ncands == SYNC_CANDS)
        sync_compact(D);
    if (D->sync_len + (len - skip) > D->sync_cap || D->sync_ncands == SYNC_CANDS) {
        sync_reset(D, seq); /* window full: the decision restarts here */
        skip = 0;
    }
    if (len - skip > D->sync_cap)
        len = D->sync_cap + skip;
    iw_mpa_sync_cfg cfg;
    sync_cfg(c, D, &cfg);
    gboolean every4 = iw_mpa_sync_every4(&cfg);
    for (guint32 o = skip; o < len && D->sync_ncands < SYNC_CANDS; o++) {
        guint32 at = seq + o;
        if (o == 0 || (every4 && ((at - D->fo_seq) & 3u) == 0))
            D->sync_cands[D->sync_ncands++] = at - D->sync_seq0;
        else if (!every4)
            break;
    }
    memcpy(D->sync_buf + D->sync_len, p + skip, len - skip);
    D->sync_len += len - skip;
}

/* libiwarp's synchroniser over what the direction holds. A dissector cannot
 * know that no more octets come, so the decision is asked for with final
 * FALSE; only when that is still open is the "final" reading taken, and
 * then only a provisional one: FPDUs whose CRCs verify without markers,
 * which read the same under every marker phase still possible (a marker
 * inside them would have broken their CRC). Markers stay undecided. On
 * success the next FPDU boundary and its modes are kept in D->sync_*. */
static gboolean sync_probe(iwk_conv *c, iwk_dir *D, gboolean provisional) {
    iw_mpa_sync_cfg cfg;
    sync_cfg(c, D, &cfg);
    guint8 *scratch = (guint8 *)wmem_alloc(wmem_packet_scope(), IW_MPA_SYNC_SCRATCH);
    iw_mpa_sync_res res;
    size_t first = D->sync_first;
    if (iw_mpa_sync_probe(D->sync_buf, D->sync_len, provisional, D->sync_cands, D->sync_ncands,
                          provisional ? &first : &D->sync_first, &cfg, scratch,
                          &res) != IW_MPA_SYNC_FOUND)
        return FALSE;
    if (provisional && (res.markers || !res.crc))
        return FALSE;
    D->sync_found = TRUE;
    D->sync_prov = provisional;
    D->sync_next = D->sync_seq0 + (guint32)res.off;
    D->sync_pos = res.pos;
    D->sync_markers = res.markers;
    D->sync_crc = res.crc;
    return TRUE;
}

/* The found chain, walked to the first boundary at or after seq. */
static gboolean sync_advance(iwk_dir *D, guint32 seq) {
    iw_mpa_sync_res res;
    memset(&res, 0, sizeof res);
    res.off = D->sync_next - D->sync_seq0;
    res.markers = D->sync_markers;
    res.pos = D->sync_pos;
    uint32_t pos;
    size_t b = iw_mpa_sync_boundary(D->sync_buf, D->sync_len, &res, seq - D->sync_seq0, &pos);
    if (b == SIZE_MAX) {
        D->sync_found = FALSE;
        return FALSE;
    }
    D->sync_next = D->sync_seq0 + (guint32)b;
    D->sync_pos = pos;
    return TRUE;
}

/* Heuristic claim of a connection seen mid-stream: does this one segment
 * begin with a chain of FPDUs? (Only whether to claim; the framing itself
 * is decided by sync_probe over as many segments as it needs.) */
static gboolean claim_fpdu(const guint8 *p, guint len) {
    if (len < IW_MPA_HDR_LEN + IW_DDP_TAGGED_HDR_LEN + IW_MPA_CRC_LEN)
        return FALSE;
    iw_mpa_sync_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.crc = pref_midstream_no_crc ? IW_DF_AUTO : IW_DF_ON;
    guint8 *scratch = (guint8 *)wmem_alloc(wmem_packet_scope(), IW_MPA_SYNC_SCRATCH);
    uint64_t cand = 0;
    size_t first = 0;
    iw_mpa_sync_res res;
    return iw_mpa_sync_probe(p, len, TRUE, &cand, 1, &first, &cfg, scratch, &res) ==
           IW_MPA_SYNC_FOUND;
}

/* ---------------- PDU classification (first pass) ---------------- */

/* Framing unknown (mid-stream, after a gap, or markers not yet known):
 * the octets go to libiwarp's synchroniser, and from the boundary it finds
 * FPDUs are decoded again; octets before it stay undecoded. */
static iwk_pdu classify_sync(tvbuff_t *tvb, guint offset, guint32 seq, iwk_conv *c, iwk_dir *D) {
    iwk_pdu pd;
    memset(&pd, 0, sizeof pd);
    pd.track = TRUE;
    pd.kind = PDU_LOST;
    pd.midstream_lost = !D->fo_known;
    guint len;
    const guint8 *p = iwk_tvb_bytes(tvb, offset, &len);
    if (!p || D->rejected)
        return pd;
    if (D->sync_found && seq_before(D->sync_next, seq))
        D->sync_found = FALSE; /* a gap past the boundary: look again */
    if (!D->sync_found || D->sync_prov) {
        /* New octets: a provisional reading is asked again, so markers are
         * decided as soon as the stream shows them. */
        sync_add(c, D, seq, p, len);
        gboolean ok = sync_probe(c, D, FALSE) || sync_probe(c, D, TRUE);
        if (!ok || !sync_advance(D, seq)) {
            D->sync_found = FALSE;
            return pd;
        }
    }
    if (seq != D->sync_next) {
        guint32 k = D->sync_next - seq; /* undecodable up to the boundary */
        pd.len = k < len ? k : 0;
        return pd;
    }
    pd.kind = PDU_FPDU;
    pd.midstream_lost = FALSE;
    pd.markers = D->sync_markers;
    pd.pos = D->sync_pos;
    pd.crc_on = c->crc == -1 ? D->sync_crc : c->crc == 1;
    pd.provisional = D->sync_prov;
    return pd;
}

/* packet-tcp.c's tcp_flow_t.static_flags: a SYN (or SYN+ACK) of this flow
 * was seen. Only these bits are read, never set. */
#define TCP_FLOW_SAW_SYN 0x06

/* Where seq lies against this direction's first octet: -1 unknown (its SYN
 * is not in the capture), 1 at it, 0 past it. */
static int stream_start(packet_info *pinfo, guint32 seq) {
    conversation_t *conv = find_conversation_pinfo(pinfo, 0);
    struct tcp_analysis *tcpd = conv ? get_tcp_conversation_data(conv, pinfo) : NULL;
    if (!tcpd || !tcpd->fwd || !(tcpd->fwd->static_flags & TCP_FLOW_SAW_SYN))
        return -1;
    return seq == (tcp_relative_seq ? 1u : tcpd->fwd->base_seq + 1u);
}

/* Decide what starts at seq. State changes happen when the PDU is
 * complete (pdu_commit), except the synchroniser's octets (classify_sync).
 * rr_due: the other side opened with an MPA Request and seq is this side's
 * first octet, so an MPA Reply is due here whatever its key (§7.1.2). */
static iwk_pdu classify(tvbuff_t *tvb, guint offset, guint32 seq, iwk_conv *c, int d,
                        gboolean rr_due) {
    iwk_dir *D = &c->dir[d];
    iwk_pdu pd;
    memset(&pd, 0, sizeof pd);
    pd.track = TRUE;
    guint len;
    const guint8 *p = iwk_tvb_bytes(tvb, offset, &len);
    iw_mpa_rr rr;

    if (!D->fo_known && !D->rejected && !D->started && p &&
        (probe_rr(p, len, &rr) || (rr_due && len >= IW_MPA_KEY_LEN))) {
        pd.kind = PDU_RR; /* startup frame (rule 5: a bad key closes) */
        return pd;
    }
    if (!D->fo_known)
        return classify_sync(tvb, offset, seq, c, D);
    /* Full Operation: an MPA frame again is a protocol error, shown as such. */
    if (p && D->in_sync && seq == D->nxt_seq && !D->n_fpdus && probe_rr(p, len, &rr)) {
        pd.kind = PDU_RR;
        return pd;
    }
    if (D->in_sync && seq_before(seq, D->nxt_seq)) {
        pd.kind = PDU_LOST; /* retransmitted or overlapping data */
        pd.track = FALSE;
        return pd;
    }
    if (D->in_sync && seq == D->nxt_seq && D->markers != -1) {
        pd.kind = PDU_FPDU;
        pd.markers = D->markers == 1;
        pd.pos = seq - D->fo_seq;
        pd.crc_on = c->crc == 1;
        return pd;
    }
    if (p && D->in_sync && seq == D->nxt_seq && seq == D->fo_seq && !D->n_fpdus) {
        /* Full Operation whose marker mode the capture did not show (the
         * other side's MPA frame is missing or unusable): its first octet
         * is known (§4.3) and says (§7.1.2 rule 7), as for iwarp-decode. */
        int m = iw_mpa_fo_markers(p, len);
        if (m >= 0) {
            pd.kind = PDU_FPDU;
            pd.markers = m == 1;
            pd.pos = 0;
            pd.crc_on = c->crc == 1;
            pd.crc_auto = c->crc == -1;
            return pd;
        }
    }
    /* A capture gap or lost framing. */
    if (D->in_sync && seq != D->nxt_seq)
        sync_reset(D, seq);
    return classify_sync(tvb, offset, seq, c, D);
}

/* CRC use decided by Full Operation's first FPDU, whole at offset. */
static gboolean fo_crc(tvbuff_t *tvb, guint offset, const iwk_pdu *pd) {
    if (tvb_captured_length_remaining(tvb, offset) < (gint)pd->len)
        return FALSE; /* not all captured: no evidence of CRCs */
    const guint8 *p = tvb_get_ptr(tvb, offset, pd->len);
    guint8 *scratch = (guint8 *)wmem_alloc(wmem_packet_scope(), pd->len);
    iw_mpa_fpdu f;
    iw_verdict v;
    unsigned flags = (pd->markers ? IW_MPA_MARKERS : 0) | IW_MPA_CRC;
    iw_mpa_fpdu_decode(&f, p, pd->len, pd->pos, flags, scratch, pd->len, &v);
    return iw_mpa_fo_crc(&f);
}

/* Wire length of the PDU at offset, or 0 for "need more". */
static guint pdu_len(const iwk_pdu *pd, tvbuff_t *tvb, guint offset) {
    guint len;
    const guint8 *p = iwk_tvb_bytes(tvb, offset, &len);
    switch (pd->kind) {
    case PDU_RR: {
        iw_mpa_rr rr;
        iw_verdict v;
        if (len < IW_MPA_RR_HDR_LEN)
            return 0;
        iw_ssize r = iw_mpa_rr_decode(&rr, p, len, &v);
        if (r > 0)
            return (guint)r;
        if (r == IW_ERR_NEED_MORE)
            return IW_MPA_RR_HDR_LEN + rr.pd_len;
        /* Bad Rev or PD_Length: judged on the fixed header alone. */
        return v.close == IW_CLOSE_MPA_V2_PD_SHORT ? IW_MPA_RR_HDR_LEN + rr.pd_len
                                                   : IW_MPA_RR_HDR_LEN;
    }
    case PDU_FPDU:
        return p ? (guint)iw_mpa_fpdu_len(p, len, pd->pos, pd->markers) : 0;
    default:
        /* Undecodable octets: up to a resynchronisation point, or all. */
        return pd->len ? pd->len : (guint)tvb_reported_length_remaining(tvb, offset);
    }
}

/* ---------------- MPA Request / Reply ---------------- */

static void add_flag(proto_tree *t, int hf, tvbuff_t *tvb, guint off, gboolean on, guint8 mask) {
    proto_tree_add_boolean(t, hf, tvb, off, 1, on ? mask : 0);
}

static void dissect_rr(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, iwk_conv *c, int d,
                       iwk_pdu *pd, guint32 seq) {
    guint len;
    const guint8 *p = iwk_tvb_bytes(tvb, 0, &len);
    iw_mpa_rr rr;
    iw_verdict v;
    iw_ssize r = iw_mpa_rr_decode(&rr, p, len, &v);

    proto_item *ti = proto_tree_add_item(tree, proto_iwk_mpa, tvb, 0, -1, ENC_NA);
    proto_tree *mt = proto_item_add_subtree(ti, ett_mpa);
    gboolean bad_key = r == IW_ERR_PROTO && v.close == IW_CLOSE_MPA_BAD_KEY;
    add_stream(ti, mt, tvb, c,
               bad_key ? "MPA frame with a bad key"
                       : val_to_str_const(rr.type, rr_type_vals, "MPA frame"));
    if (bad_key) {
        /* Neither key: nothing after it means anything (§7.1.2 rule 5). */
        proto_item *bi = proto_tree_add_item(mt, hf_rr, tvb, 0, -1, ENC_NA);
        proto_item_append_text(bi, " (bad key)");
        proto_tree *bt = proto_item_add_subtree(bi, ett_rr);
        proto_tree_add_item(bt, hf_key, tvb, 0, IW_MPA_KEY_LEN, ENC_ASCII);
        iwk_expert_verdict(pinfo, bi, &v);
        col_set_str(pinfo->cinfo, COL_PROTOCOL, "MPA");
        col_append_sep_str(pinfo->cinfo, COL_INFO, " | ", "MPA frame [bad key]");
        if (!PINFO_FD_VISITED(pinfo) && pd->track) {
            c->handshake = TRUE;
            c->dir[d].rejected = TRUE; /* the peer closes: nothing more to frame */
        }
        (void)seq;
        return;
    }
    proto_item *rri = proto_tree_add_item(mt, hf_rr, tvb, 0, -1, ENC_NA);
    proto_item_set_generated(rri);
    proto_item *ri = proto_tree_add_uint(mt, hf_rr_type, tvb, 0, tvb_reported_length(tvb), rr.type);
    proto_tree *rt = proto_item_add_subtree(ri, ett_rr);
    proto_tree_add_item(rt, hf_key, tvb, 0, IW_MPA_KEY_LEN, ENC_ASCII);

    /* Flags octet: composed from the decoded bits. */
    guint8 res = rr.rev >= IW_MPA_REV2 ? rr.res : (guint8)(rr.res & 0x1F);
    guint8 fl = (guint8)((rr.m ? 0x80 : 0) | (rr.c ? 0x40 : 0) | (rr.r ? 0x20 : 0) |
                         (rr.s ? 0x10 : 0) | res);
    proto_item *fi = proto_tree_add_uint(rt, hf_flags, tvb, 16, 1, fl);
    proto_tree *ft = proto_item_add_subtree(fi, ett_flags);
    add_flag(ft, hf_flag_m, tvb, 16, rr.m, 0x80);
    add_flag(ft, hf_flag_c, tvb, 16, rr.c, 0x40);
    add_flag(ft, hf_flag_r, tvb, 16, rr.r, 0x20);
    if (rr.rev >= IW_MPA_REV2)
        add_flag(ft, hf_flag_s, tvb, 16, rr.s, 0x10);
    proto_tree_add_uint(ft, hf_flag_res, tvb, 16, 1, res);
    proto_tree_add_uint(rt, hf_rev, tvb, 17, 1, rr.rev);
    proto_item *pli = proto_tree_add_uint(rt, hf_pd_len, tvb, 18, 2, rr.pd_len);

    GString *info = g_string_new(rr.type == IW_MPA_REQUEST ? "MPA Request" : "MPA Reply");
    g_string_append_printf(info, " rev %u%s%s%s", rr.rev, rr.m ? " M" : "", rr.c ? " C" : "",
                           rr.r ? " R(reject)" : "");
    if (r >= 0 && rr.pd_len) {
        proto_tree_add_item(rt, hf_pd, tvb, IW_MPA_RR_HDR_LEN, rr.pd_len, ENC_NA);
        if (rr.enhanced) {
            proto_item *vi =
                proto_tree_add_item(rt, hf_v2, tvb, IW_MPA_RR_HDR_LEN, IW_MPA_V2_DATA_LEN, ENC_NA);
            proto_tree *vt = proto_item_add_subtree(vi, ett_v2);
            guint o = IW_MPA_RR_HDR_LEN;
            proto_tree_add_boolean(vt, hf_v2_a, tvb, o, 2, rr.v2.p2p ? 0x8000 : 0);
            proto_tree_add_boolean(vt, hf_v2_b, tvb, o, 2, rr.v2.rtr_send ? 0x4000 : 0);
            proto_tree_add_uint(vt, hf_v2_ird, tvb, o, 2, rr.v2.ird);
            proto_tree_add_boolean(vt, hf_v2_c, tvb, o + 2, 2, rr.v2.rtr_write ? 0x8000 : 0);
            proto_tree_add_boolean(vt, hf_v2_d, tvb, o + 2, 2, rr.v2.rtr_read ? 0x4000 : 0);
            proto_tree_add_uint(vt, hf_v2_ord, tvb, o + 2, 2, rr.v2.ord);
            proto_item_append_text(
                vi, ": %s, IRD %u, ORD %u%s%s%s", rr.v2.p2p ? "peer-to-peer" : "client-server",
                rr.v2.ird, rr.v2.ord, rr.v2.rtr_send ? ", Send RTR" : "",
                rr.v2.rtr_write ? ", Write RTR" : "", rr.v2.rtr_read ? ", Read RTR" : "");
            g_string_append_printf(info, " IRD %u ORD %u%s%s%s%s", rr.v2.ird, rr.v2.ord,
                                   rr.v2.p2p ? " P2P" : "", rr.v2.rtr_send ? " B" : "",
                                   rr.v2.rtr_write ? " C" : "", rr.v2.rtr_read ? " D" : "");
        }
        if (rr.ulp_pd_len) {
            proto_item *ui = proto_tree_add_item(rt, hf_ulp_pd, tvb, (gint)(rr.ulp_pd - p),
                                                 rr.ulp_pd_len, ENC_NA);
            /* The storage ULP's connection-manager private data. */
            iwk_storage_mpa_pd(tvb, (guint)(rr.ulp_pd - p), rr.ulp_pd_len, pinfo,
                               proto_item_add_subtree(ui, ett_rr), c, d, rr.type == IW_MPA_REQUEST,
                               !PINFO_FD_VISITED(pinfo) && pd->track);
        }
    }
    if (r < 0)
        iwk_expert_verdict(pinfo,
                           r == IW_ERR_PROTO && v.close == IW_CLOSE_MPA_PD_TOO_LONG ? pli : ri, &v);
    iwk_expert_notes(pinfo, ri, rr.notes);

    /* First pass: record the startup (RFC 5044 §7.1.2, RFC 6581 §9). */
    if (!PINFO_FD_VISITED(pinfo) && pd->track) {
        iwk_dir *D = &c->dir[d];
        c->handshake = TRUE;
        if (c->init_dir < 0)
            c->init_dir = rr.type == IW_MPA_REQUEST ? d : !d;
        else if (r >= 0)
            pd->expect = iw_mpa_rr_expect(&rr, d == c->init_dir ? IW_MPA_REQUEST : IW_MPA_REPLY);
        if (D->fo_known)
            pd->v2_flags |= V2_RR_AFTER_FO;
        if (r >= 0) {
            D->rr_seen = TRUE;
            D->rr_seq = seq;
            /* §7.1.1: the M bit asks for markers in the other direction. */
            c->dir[!d].markers = rr.m;
            /* C=1 in either frame: CRCs on in both directions. */
            if (rr.c)
                c->crc = 1;
            else if (c->dir[!d].rr_seen && c->crc == -1)
                c->crc = 0;
            if (rr.type == IW_MPA_REQUEST) {
                c->v2.req_seen = TRUE;
                c->v2.req_enh = rr.enhanced;
                c->v2.req = rr.v2;
            } else {
                c->v2.rep_seen = TRUE;
                c->v2.rep_enh = rr.enhanced;
                c->v2.rep = rr.v2;
                if (c->v2.req_seen && c->v2.req_enh && rr.enhanced && !rr.r) {
                    /* §9.2: an A=1 Request gets an A=1 Reply. */
                    if (c->v2.req.p2p && !rr.v2.p2p)
                        pd->v2_flags |= V2_REPLY_NOT_P2P;
                    /* §9.1: responder ORD <= initiator IRD (0x3FFF: no negotiation). */
                    if (rr.v2.ord != IW_MPA_V2_NO_NEG && c->v2.req.ird != IW_MPA_V2_NO_NEG &&
                        rr.v2.ord > c->v2.req.ird)
                        pd->v2_flags |= V2_ORD_TOO_BIG;
                }
            }
            /* RFC 6581 §9: the shadow fixes IRDs and the RTR; 2/0/0x07 is
             * the initiator's answer to a Reply with no RTR in common. */
            pd->shadow = wmem_new0(wmem_file_scope(), iw_shadow_result);
            iw_shadow_mpa(c->shadow, (unsigned)d, &rr, pinfo->num, pd->shadow);
            if (pd->expect.kind == IW_VERDICT_OK && !(rr.type == IW_MPA_REPLY && rr.r)) {
                /* §4.3: the grid starts at the first octet of Full Operation. */
                D->fo_known = TRUE;
                D->fo_seq = seq + (guint32)r;
                D->in_sync = TRUE;
                D->nxt_seq = D->fo_seq;
            } else if (rr.type == IW_MPA_REPLY && rr.r) {
                /* §7.1.2 rule 3: MPA exits on both sides. */
                D->rejected = TRUE;
                c->dir[!d].rejected = TRUE;
            } else {
                /* A frame of the wrong type: the receiver closes (§7.1.2
                 * rule 5), so nothing after it is framed (the deframer's
                 * rule, iw_deframer). */
                D->rejected = TRUE;
            }
        } else {
            D->rejected = TRUE; /* bad Rev or PD_Length: closed, as above (§7.1.1) */
        }
    }
    if (pd->expect.kind != IW_VERDICT_OK)
        iwk_expert_verdict(pinfo, ri, &pd->expect);
    /* Its close verdicts are pd->expect's; only a Terminate is new here. */
    const iw_shadow_result *sr = pd->shadow;
    if (sr && sr->verdict.kind == IW_VERDICT_TERM && iwk_expert_shadow(pinfo, ri, sr))
        g_string_append_printf(info, " [TERM %u/%u/0x%02x]", iw_term_layer(sr->verdict.term),
                               iw_term_etype(sr->verdict.term), iw_term_ecode(sr->verdict.term));
    if (r >= 0 && rr.type == IW_MPA_REPLY && rr.r) {
        iw_verdict rej = iw_verdict_close(IW_CLOSE_MPA_REJECTED, "RFC 5044 §7.1.2");
        iwk_expert_verdict(pinfo, fi, &rej);
    }
    if (pd->v2_flags & V2_REPLY_NOT_P2P) {
        iwk_expert_add(pinfo, ri, &ei_v2_reply_not_p2p,
                       "Request asked for peer-to-peer (A=1) but the Reply has A=0 (RFC 6581 §9.2: "
                       "the Responder MUST set A=1)");
        iwk_alert(pinfo, ri, PI_WARN);
    }
    if (pd->v2_flags & V2_ORD_TOO_BIG) {
        iwk_expert_add(pinfo, ri, &ei_v2_ord,
                       "Responder ORD %u exceeds initiator IRD %u (RFC 6581 §9.1)", rr.v2.ord,
                       c->v2.req.ird);
        iwk_alert(pinfo, ri, PI_WARN);
    }
    if (pd->v2_flags & V2_RR_AFTER_FO) {
        expert_add_info(pinfo, ri, &ei_rr_after_fo);
        iwk_alert(pinfo, ri, PI_WARN);
    }
    col_set_str(pinfo->cinfo, COL_PROTOCOL, "MPA");
    col_append_sep_str(pinfo->cinfo, COL_INFO, " | ", info->str);
    g_string_free(info, TRUE);
}

/* ---------------- FPDU ---------------- */

/* v: the FPDU's verdict when it is the marker one, else NULL:
 * iw_mpa_fpdu_decode judges markers only where the CRC holds (RFC 5044 §8
 * code 3), and an FPDU gets one verdict. */
static void add_marker(proto_tree *t, tvbuff_t *tvb, guint w, const iw_mpa_fpdu *f,
                       const iw_verdict *v, packet_info *pinfo) {
    proto_item *mi = proto_tree_add_item(t, hf_marker, tvb, w, IW_MPA_MARKER_LEN, ENC_NA);
    proto_tree *mt = proto_item_add_subtree(mi, ett_marker);
    /* Field values from libiwarp's marker decoder, like every other field. */
    uint8_t raw[IW_MPA_MARKER_LEN];
    uint16_t res, ptr;
    tvb_memcpy(tvb, raw, w, IW_MPA_MARKER_LEN);
    iw_mpa_marker_decode(raw, &res, &ptr);
    proto_tree_add_uint(mt, hf_marker_res, tvb, w, 2, res);
    proto_tree_add_uint(mt, hf_marker_ptr, tvb, w + 2, 2, ptr);
    if (v && f->bad_marker_off == w)
        iwk_expert_verdict(pinfo, mi, v);
}

static void dissect_fpdu(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, iwk_conv *c, int d,
                         iwk_pdu *pd, guint32 seq) {
    guint wire = tvb_reported_length(tvb);
    proto_item *ti = proto_tree_add_item(tree, proto_iwk_mpa, tvb, 0, -1, ENC_NA);
    proto_tree *mt = proto_item_add_subtree(ti, ett_mpa);
    add_stream(ti, mt, tvb, c, "FPDU");
    col_set_str(pinfo->cinfo, COL_PROTOCOL, "iWARP");
    if (tvb_captured_length(tvb) < wire) {
        proto_tree_add_expert(mt, pinfo, &ei_truncated, tvb, 0, -1);
        col_append_sep_str(pinfo->cinfo, COL_INFO, " | ", "FPDU [truncated in capture]");
        return;
    }
    const guint8 *p = tvb_get_ptr(tvb, 0, wire);
    guint8 *scratch = pd->markers ? (guint8 *)wmem_alloc(pinfo->pool, wire) : NULL;
    gboolean check = pref_check_crc && pd->crc_on;
    unsigned flags = (pd->markers ? IW_MPA_MARKERS : 0) | (check ? IW_MPA_CRC : 0);
    iw_mpa_fpdu f;
    iw_verdict v;
    iw_ssize r = iw_mpa_fpdu_decode(&f, p, wire, pd->pos, flags, scratch, wire, &v);

    /* The direction's state, in the FPDU line; the fields stay filterable
     * but take no line each (-V prints them for every FPDU otherwise). */
    proto_item *fi = proto_tree_add_none_format(
        mt, hf_fpdu, tvb, 0, -1, "FPDU (grid position %u, markers %s, CRC %s)", pd->pos,
        pd->markers ? "on" : "off", pd->crc_on ? "on" : "off");
    proto_tree *ft = proto_item_add_subtree(fi, ett_fpdu);
    proto_item *gi = proto_tree_add_uint(ft, hf_stream_pos, tvb, 0, 0, pd->pos);
    proto_item_set_generated(gi);
    proto_item_set_hidden(gi);
    gi = proto_tree_add_boolean(ft, hf_markers_on, tvb, 0, 0, pd->markers);
    proto_item_set_generated(gi);
    proto_item_set_hidden(gi);
    gi = proto_tree_add_boolean(ft, hf_crc_on, tvb, 0, 0, pd->crc_on);
    proto_item_set_generated(gi);
    proto_item_set_hidden(gi);
    if (r == IW_ERR_NEED_MORE || r == IW_ERR_NOBUF) {
        proto_tree_add_expert(ft, pinfo, &ei_truncated, tvb, 0, -1);
        return;
    }
    const iw_verdict *mv = r == IW_ERR_PROTO && v.term == IW_TERM_LLP_MPA_MARKER ? &v : NULL;
    if (pd->markers && f.hdr_off)
        add_marker(ft, tvb, 0, &f, mv, pinfo);
    proto_tree_add_uint(ft, hf_ulpdu_len, tvb, (gint)f.hdr_off, IW_MPA_HDR_LEN, f.ulpdu_len);
    proto_item_append_text(ti, ", ULPDU %u octets", f.ulpdu_len);
    if (pd->markers)
        for (guint w = iw_mpa_marker_gap(pd->pos); w < wire; w += IW_MPA_MARKER_INTERVAL)
            if (w) /* w == 0 is the leading marker, added above */
                add_marker(ft, tvb, w, &f, mv, pinfo);

    /* ULPDU: in place, or markers removed into its own data source. */
    tvbuff_t *ulpdu_tvb;
    if (f.ulpdu_len == 0) {
        ulpdu_tvb = tvb_new_subset_length(tvb, (gint)f.hdr_off + IW_MPA_HDR_LEN, 0);
    } else if (f.ulpdu >= p && f.ulpdu < p + wire) {
        ulpdu_tvb = tvb_new_subset_length(tvb, (gint)(f.ulpdu - p), f.ulpdu_len);
    } else {
        ulpdu_tvb = tvb_new_child_real_data(tvb, f.ulpdu, f.ulpdu_len, f.ulpdu_len);
        add_new_data_source(pinfo, ulpdu_tvb, "ULPDU (markers removed)");
    }

    /* PAD and CRC: the last wire octets unless a marker splits them. */
    guint crc_off = wire - IW_MPA_CRC_LEN;
    gboolean crc_split = pd->markers && iw_mpa_marker_gap(pd->pos + crc_off) > 0 &&
                         iw_mpa_marker_gap(pd->pos + crc_off) < IW_MPA_CRC_LEN;
    guint pad_end = crc_off;
    if (pd->markers && pad_end >= IW_MPA_MARKER_LEN &&
        iw_mpa_marker_gap(pd->pos + pad_end - IW_MPA_MARKER_LEN) == 0)
        pad_end -= IW_MPA_MARKER_LEN; /* §4.4: a marker right after the PAD */
    if (f.pad_len && !crc_split && pad_end >= f.pad_len)
        proto_tree_add_item(ft, hf_pad, tvb, pad_end - f.pad_len, f.pad_len, ENC_NA);
    /* The status field: filterable always, a line of its own only where
     * the CRC line does not already say "[correct]". */
    proto_item *ci;
    if (!crc_split && !check) {
        ci = proto_tree_add_checksum(ft, tvb, crc_off, hf_crc, hf_crc_status, NULL, pinfo,
                                     f.crc_calc, ENC_LITTLE_ENDIAN, PROTO_CHECKSUM_NO_FLAGS);
    } else {
        if (!crc_split)
            ci = proto_tree_add_checksum(ft, tvb, crc_off, hf_crc, -1, NULL, pinfo, f.crc_calc,
                                         ENC_LITTLE_ENDIAN, PROTO_CHECKSUM_VERIFY);
        else
            ci = proto_tree_add_uint(ft, hf_crc, tvb, crc_off, IW_MPA_CRC_LEN, f.crc_wire);
        proto_item *si = proto_tree_add_uint(ft, hf_crc_status, tvb, crc_off, 0,
                                             !check                 ? PROTO_CHECKSUM_E_UNVERIFIED
                                             : f.crc == IW_CRC_GOOD ? PROTO_CHECKSUM_E_GOOD
                                                                    : PROTO_CHECKSUM_E_BAD);
        proto_item_set_generated(si);
        if (!crc_split && f.crc == IW_CRC_GOOD)
            proto_item_set_hidden(si);
    }
    if (check && f.crc == IW_CRC_BAD) {
        proto_item_append_text(ci, " [calculated 0x%08x]", f.crc_calc);
        /* RFC 5044 §6: only the ULPDU_Length of an FPDU whose CRC is valid
         * locates the next one, so framing is looked for again after it
         * (classify_sync), as libiwarp's deframer and iwarp-decode do. */
        if (!PINFO_FD_VISITED(pinfo) && pd->track)
            c->dir[d].in_sync = FALSE;
    }
    if (r == IW_ERR_PROTO && v.term == IW_TERM_LLP_MPA_CRC)
        iwk_expert_verdict(pinfo, ci, &v);
    iwk_expert_notes(pinfo, fi, f.notes);

    if (pd->resp_first) {
        expert_add_info(pinfo, fi, &ei_responder_first);
        iwk_alert(pinfo, fi, PI_WARN);
    }

    iwk_fpdu_ctx ctx;
    ctx.conv = c;
    ctx.d = d;
    ctx.seq = seq;
    ctx.crc_bad = f.crc == IW_CRC_BAD || (r == IW_ERR_PROTO);
    ctx.mpa_verdict = r == IW_ERR_PROTO ? v : iw_verdict_ok();
    ctx.track = pd->track;
    ctx.mpa_item = ti;
    ctx.seg_slot = &pd->seg;
    iwk_dissect_ulpdu(ulpdu_tvb, pinfo, tree, &ctx);
    if (ctx.crc_bad && f.crc == IW_CRC_BAD)
        col_append_str(pinfo->cinfo, COL_INFO, " [CRC error]");
}

static void dissect_lost(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, iwk_pdu *pd) {
    proto_item *ti = proto_tree_add_item(tree, proto_iwk_mpa, tvb, 0, -1, ENC_NA);
    proto_tree *mt = proto_item_add_subtree(ti, ett_mpa);
    proto_item *li = proto_tree_add_item(mt, hf_lost, tvb, 0, -1, ENC_NA);
    if (!pd->track) {
        expert_add_info(pinfo, li, &ei_retrans);
        col_append_sep_str(pinfo->cinfo, COL_INFO, " | ", "[retransmitted iWARP data]");
    } else {
        expert_add_info(pinfo, li, &ei_lost);
        col_append_sep_str(pinfo->cinfo, COL_INFO, " | ",
                           pd->midstream_lost ? "[iWARP data, FPDU framing not yet found]"
                                              : "[iWARP data, FPDU framing lost]");
    }
}

/* ---------------- the PDU loop ---------------- */

static void pdu_commit(iwk_conv *c, int d, iwk_pdu *pd, guint32 seq, packet_info *pinfo) {
    iwk_dir *D = &c->dir[d];
    if (!pd->track)
        return;
    D->started = TRUE;
    if (pd->kind == PDU_FPDU && pd->provisional) {
        /* Decoded, but framing is not fixed yet: the synchroniser goes on
         * from the next boundary with the octets still held. */
        D->sync_next = seq + pd->len;
        D->sync_pos = pd->pos + pd->len;
        c->midstream = !c->handshake;
        if (D->n_fpdus++ == 0)
            D->first_fpdu_frame = pinfo->num;
    } else if (pd->kind == PDU_FPDU) {
        /* Octets skipped without a LOST PDU (a capture gap, or an FPDU TCP
         * could not reassemble): the shadow must not assume it saw them. */
        if (D->fo_known && D->in_sync && seq != D->nxt_seq)
            iw_shadow_lost(c->shadow, (unsigned)d);
        if (!D->fo_known) {
            /* Mid-stream: SeqStart is fixed by the detected grid phase. */
            D->fo_known = TRUE;
            D->fo_seq = seq - pd->pos;
            c->midstream = !c->handshake;
        }
        if (D->markers == -1)
            D->markers = pd->markers;
        if (c->crc == -1)
            c->crc = pd->crc_on;
        D->sync_found = D->sync_prov = FALSE;
        D->sync_len = 0;
        D->in_sync = TRUE;
        D->nxt_seq = seq + pd->len;
        if (D->n_fpdus++ == 0)
            D->first_fpdu_frame = pinfo->num;
        /* RFC 5044 §7.1.2 rule 4: the Responder sends no FPDU before it
         * has received one. */
        if (c->handshake && c->init_dir >= 0 && d != c->init_dir && D->n_fpdus == 1 &&
            c->dir[c->init_dir].n_fpdus == 0)
            pd->resp_first = TRUE;
    } else if (pd->kind == PDU_LOST) {
        if (!D->fo_known && pd->after_gap) {
            /* Undecoded octets after this direction's first ones were lost
             * (its Request not captured, say): what the lost ones held
             * (Read Requests) is unknown, as iwarp-decode tells its shadow
             * at a gap, though the peer's Reply began Full Operation. */
            iw_shadow_lost(c->shadow, (unsigned)d);
        } else if (D->fo_known) {
            /* Messages were missed: DDP sequence checks restart. */
            iw_shadow_lost(c->shadow, (unsigned)d);
            D->in_sync = FALSE;
            for (int q = 0; q < 4; q++)
                D->in_msg[q] = FALSE; /* reassembly restarts */
        }
    }
}

/* One PDU; an exception in it ends that PDU only (as tcp_dissect_pdus). */
static void dissect_one(tvbuff_t *next, packet_info *pinfo, proto_tree *tree, iwk_conv *c, int d,
                        iwk_pdu *pd, guint32 seq) {
    TRY {
        switch (pd->kind) {
        case PDU_RR:
            dissect_rr(next, pinfo, tree, c, d, pd, seq);
            break;
        case PDU_FPDU:
            dissect_fpdu(next, pinfo, tree, c, d, pd, seq);
            break;
        default:
            dissect_lost(next, pinfo, tree, pd);
            break;
        }
    }
    CATCH_NONFATAL_ERRORS { show_exception(next, pinfo, tree, EXCEPT_CODE, GET_MESSAGE); }
    ENDTRY;
}

static int dissect_iwk_tcp(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data) {
    struct tcpinfo *tcpi = (struct tcpinfo *)data;
    guint32 seq0 = tcpi ? tcpi->seq : 0;
    conversation_t *conv = find_or_create_conversation(pinfo);
    iwk_conv *c = (iwk_conv *)conversation_get_proto_data(conv, proto_iwk_mpa);
    if (!c)
        c = conv_new(conv, pinfo);
    int d = conv_dir(c, pinfo);

    guint total = tvb_reported_length(tvb);
    guint offset = 0;
    gboolean took_info = FALSE;
    while (offset < total) {
        guint32 seq = seq0 + offset;
        iwk_pdu *pd = (iwk_pdu *)p_get_proto_data(wmem_file_scope(), pinfo, proto_iwk_mpa, seq);
        iwk_pdu tmp;
        if (!pd && PINFO_FD_VISITED(pinfo) && pinfo->num < c->claim_frame) {
            /* A later pass over a frame from before the heuristic claimed
             * the connection: its octets never reached us (or the
             * synchroniser), so framing was not yet found there. */
            memset(&tmp, 0, sizeof tmp);
            tmp.kind = PDU_LOST;
            tmp.track = TRUE;
            tmp.midstream_lost = TRUE;
            tmp.len = total - offset;
            pd = &tmp;
        } else if (!pd) {
            /* §7.1.2: after the peer's startup frame, this side's first
             * octets are its own (rules 1-3), whatever their key (rule 5),
             * as iwarp-decode reads them. */
            int at = c->dir[d].started ? -1 : stream_start(pinfo, seq);
            gboolean rr_due = c->handshake && at == 1;
            tmp = classify(tvb, offset, seq, c, d, rr_due);
            /* Its first octets were not captured (a gap after the SYN). */
            tmp.after_gap = at == 0;
            pd = &tmp;
        }
        guint len = pdu_len(pd, tvb, offset);
        if (len == 0 || len > total - offset) {
            if (pd == &tmp && !PINFO_FD_VISITED(pinfo)) {
                /* Remember the decision so later passes ask TCP for the
                 * same reassembly instead of re-classifying. */
                pd = (iwk_pdu *)wmem_memdup(wmem_file_scope(), &tmp, sizeof tmp);
                p_add_proto_data(wmem_file_scope(), pinfo, proto_iwk_mpa, seq, pd);
            }
            if (pinfo->can_desegment && pref_desegment && pd->kind != PDU_LOST) {
                pinfo->desegment_offset = offset;
                pinfo->desegment_len = len ? len - (total - offset) : DESEGMENT_ONE_MORE_SEGMENT;
                break; /* the PDUs before it keep their ports in Info */
            }
            /* Cannot reassemble: show what is there. */
            proto_item *pi = proto_tree_add_item(tree, proto_iwk_mpa, tvb, offset, -1, ENC_NA);
            expert_add_info(pinfo, pi, &ei_partial);
            col_append_sep_str(pinfo->cinfo, COL_INFO, " | ", "[partial MPA PDU]");
            break;
        }
        if (pd == &tmp) {
            pd = (iwk_pdu *)wmem_memdup(wmem_file_scope(), &tmp, sizeof tmp);
            pd->len = len;
            if (pd->crc_auto)
                pd->crc_on = fo_crc(tvb, offset, pd);
            if (!PINFO_FD_VISITED(pinfo)) {
                pdu_commit(c, d, pd, seq, pinfo);
                p_add_proto_data(wmem_file_scope(), pinfo, proto_iwk_mpa, seq, pd);
            }
        }
        if (!p_get_proto_data(pinfo->pool, pinfo, proto_iwk_mpa, 0)) {
            /* First PDU of this frame: the Info column becomes ours. */
            col_clear(pinfo->cinfo, COL_INFO);
            p_add_proto_data(pinfo->pool, pinfo, proto_iwk_mpa, 0, GUINT_TO_POINTER(1));
            took_info = TRUE;
        }
        dissect_one(tvb_new_subset_length(tvb, offset, len), pinfo, tree, c, d, pd, seq);
        offset += len;
    }
    /* Ports first, as TCP shows them: the direction stays visible where the
     * addresses are the same (loopback captures). */
    if (took_info)
        col_prepend_fstr(pinfo->cinfo, COL_INFO, "%u \xe2\x86\x92 %u ", pinfo->srcport,
                         pinfo->destport);
    return (int)total;
}

/* ---------------- heuristic ---------------- */

static gboolean builtin_wants(void) {
    if (!pref_yield)
        return FALSE;
    int id = proto_get_id_by_filter_name("iwarp_mpa");
    return id != -1 && proto_is_protocol_enabled(find_protocol_by_id(id));
}

gboolean iwk_mpa_claim(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data) {
    struct tcpinfo *tcpi = (struct tcpinfo *)data;
    conversation_t *conv = find_or_create_conversation(pinfo);
    iwk_conv *c = (iwk_conv *)conversation_get_proto_data(conv, proto_iwk_mpa);
    if (!c) {
        guint len;
        const guint8 *p = iwk_tvb_bytes(tvb, 0, &len);
        iw_mpa_rr rr;
        if (len < IW_MPA_KEY_LEN)
            return FALSE;
        if (probe_rr(p, len, &rr)) {
            /* Both we and the built-in iwarp_mpa can take a startup. */
            if (builtin_wants())
                return FALSE;
        } else if (!pref_midstream || !claim_fpdu(p, len)) {
            return FALSE;
        }
        (void)tcpi;
        c = conv_new(conv, pinfo);
        conversation_set_dissector(conv, iwk_tcp_handle);
    }
    dissect_iwk_tcp(tvb, pinfo, tree, data);
    return TRUE;
}

static gboolean dissect_iwk_heur(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data) {
    return iwk_mpa_claim(tvb, pinfo, tree, data);
}

/* ---------------- registration ---------------- */

void proto_register_iwk_mpa(void) {
    static hf_register_info hf[] = {
        {&hf_rr, {"MPA startup frame", "iwk_mpa.rr", FT_NONE, BASE_NONE, NULL, 0, NULL, HFILL}},
        {&hf_rr_type,
         {"Frame type", "iwk_mpa.type", FT_UINT8, BASE_DEC, VALS(rr_type_vals), 0,
          "MPA Request or Reply (RFC 5044 §7.1.1)", HFILL}},
        {&hf_key, {"Key", "iwk_mpa.key", FT_STRING, BASE_NONE, NULL, 0, NULL, HFILL}},
        {&hf_flags, {"Flags", "iwk_mpa.flags", FT_UINT8, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_flag_m,
         {"Markers required (M)", "iwk_mpa.m", FT_BOOLEAN, 8, NULL, 0x80,
          "Markers required in the peer's FPDUs (RFC 5044 §7.1.1)", HFILL}},
        {&hf_flag_c, {"CRC (C)", "iwk_mpa.c", FT_BOOLEAN, 8, NULL, 0x40, NULL, HFILL}},
        {&hf_flag_r, {"Rejected (R)", "iwk_mpa.r", FT_BOOLEAN, 8, NULL, 0x20, NULL, HFILL}},
        {&hf_flag_s,
         {"Enhanced data (S)", "iwk_mpa.s", FT_BOOLEAN, 8, NULL, 0x10, "RFC 6581 §6", HFILL}},
        {&hf_flag_res, {"Reserved", "iwk_mpa.res", FT_UINT8, BASE_HEX, NULL, 0x1F, NULL, HFILL}},
        {&hf_rev, {"Revision", "iwk_mpa.rev", FT_UINT8, BASE_DEC, NULL, 0, NULL, HFILL}},
        {&hf_pd_len,
         {"PD_Length", "iwk_mpa.pd_length", FT_UINT16, BASE_DEC | BASE_UNIT_STRING,
          &units_byte_bytes, 0, NULL, HFILL}},
        {&hf_pd, {"Private Data", "iwk_mpa.pd", FT_BYTES, BASE_NONE, NULL, 0, NULL, HFILL}},
        {&hf_ulp_pd,
         {"ULP Private Data", "iwk_mpa.ulp_pd", FT_BYTES, BASE_NONE, NULL, 0,
          "Private Data after the RFC 6581 enhanced data", HFILL}},
        {&hf_v2,
         {"Enhanced connection data", "iwk_mpa.v2", FT_NONE, BASE_NONE, NULL, 0, "RFC 6581 §9",
          HFILL}},
        {&hf_v2_a,
         {"Peer-to-peer (A)", "iwk_mpa.v2.p2p", FT_BOOLEAN, 16, NULL, 0x8000, NULL, HFILL}},
        {&hf_v2_b,
         {"Zero-length Send RTR (B)", "iwk_mpa.v2.rtr_send", FT_BOOLEAN, 16, NULL, 0x4000, NULL,
          HFILL}},
        {&hf_v2_ird, {"IRD", "iwk_mpa.v2.ird", FT_UINT16, BASE_DEC, NULL, 0, NULL, HFILL}},
        {&hf_v2_c,
         {"Zero-length Write RTR (C)", "iwk_mpa.v2.rtr_write", FT_BOOLEAN, 16, NULL, 0x8000, NULL,
          HFILL}},
        {&hf_v2_d,
         {"Zero-length Read RTR (D)", "iwk_mpa.v2.rtr_read", FT_BOOLEAN, 16, NULL, 0x4000, NULL,
          HFILL}},
        {&hf_v2_ord, {"ORD", "iwk_mpa.v2.ord", FT_UINT16, BASE_DEC, NULL, 0, NULL, HFILL}},
        {&hf_fpdu, {"FPDU", "iwk_mpa.fpdu", FT_NONE, BASE_NONE, NULL, 0, NULL, HFILL}},
        {&hf_ulpdu_len,
         {"ULPDU_Length", "iwk_mpa.ulpdu_length", FT_UINT16, BASE_DEC | BASE_UNIT_STRING,
          &units_byte_bytes, 0, NULL, HFILL}},
        {&hf_pad, {"PAD", "iwk_mpa.pad", FT_BYTES, BASE_NONE, NULL, 0, NULL, HFILL}},
        {&hf_crc,
         {"CRC32c", "iwk_mpa.crc", FT_UINT32, BASE_HEX, NULL, 0,
          "Least significant octet first on the wire (RFC 5044 §4.4)", HFILL}},
        {&hf_crc_status,
         {"CRC status", "iwk_mpa.crc.status", FT_UINT8, BASE_NONE, VALS(proto_checksum_vals), 0,
          NULL, HFILL}},
        {&hf_marker, {"Marker", "iwk_mpa.marker", FT_NONE, BASE_NONE, NULL, 0, NULL, HFILL}},
        {&hf_marker_res,
         {"Reserved", "iwk_mpa.marker.res", FT_UINT16, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_marker_ptr,
         {"FPDUPTR", "iwk_mpa.marker.fpduptr", FT_UINT16, BASE_DEC, NULL, 0,
          "Octets back to this FPDU's ULPDU_Length (RFC 5044 §4.2)", HFILL}},
        {&hf_stream_pos,
         {"Marker grid position", "iwk_mpa.stream_pos", FT_UINT32, BASE_DEC, NULL, 0,
          "TCP sequence number minus SeqStart (RFC 5044 §4.3), modulo 2^32", HFILL}},
        {&hf_markers_on,
         {"Markers in this direction", "iwk_mpa.markers_in_use", FT_BOOLEAN, BASE_NONE, NULL, 0,
          NULL, HFILL}},
        {&hf_crc_on,
         {"CRCs in use", "iwk_mpa.crc_in_use", FT_BOOLEAN, BASE_NONE, NULL, 0, NULL, HFILL}},
        {&hf_lost,
         {"Undecoded iWARP data", "iwk_mpa.undecoded", FT_BYTES, BASE_NONE, NULL, 0, NULL, HFILL}},
        {&hf_conv, {"Stream", "iwk_mpa.stream", FT_UINT32, BASE_DEC, NULL, 0, NULL, HFILL}},
        {&hf_iwk_alert,
         {"iwarpkit alert", "iwk_mpa.alert", FT_UINT32, BASE_HEX, VALS(expert_severity_vals), 0,
          "Set on any iwarpkit expert item of warning or error severity", HFILL}},
    };
    static gint *ett[] = {&ett_mpa,  &ett_rr,     &ett_flags,    &ett_v2,
                          &ett_fpdu, &ett_marker, &ett_iwk_alert};
    static ei_register_info ei[] = {
        {&ei_lost,
         {"iwk_mpa.lost", PI_SEQUENCE, PI_NOTE,
          "iWARP data not decoded: FPDU framing not established (capture gap or mid-FPDU start)",
          EXPFILL}},
        {&ei_retrans,
         {"iwk_mpa.retransmission", PI_SEQUENCE, PI_NOTE,
          "Retransmitted or overlapping iWARP data: not decoded again", EXPFILL}},
        {&ei_truncated,
         {"iwk_mpa.truncated", PI_MALFORMED, PI_ERROR, "FPDU truncated in the capture", EXPFILL}},
        {&ei_partial,
         {"iwk_mpa.partial", PI_REASSEMBLE, PI_NOTE,
          "Partial MPA PDU (enable TCP reassembly to see it whole)", EXPFILL}},
        {&ei_v2_reply_not_p2p,
         {"iwk_mpa.v2.reply_not_p2p", PI_PROTOCOL, PI_WARN,
          "Peer-to-peer Request answered by a client-server Reply", EXPFILL}},
        {&ei_v2_ord,
         {"iwk_mpa.v2.ord_exceeds_ird", PI_PROTOCOL, PI_WARN, "Responder ORD exceeds initiator IRD",
          EXPFILL}},
        {&ei_v2_rtr_unsupported,
         {"iwk_mpa.v2.rtr_unsupported", PI_PROTOCOL, PI_WARN, "RTR type not negotiated", EXPFILL}},
        {&ei_responder_first,
         {"iwk_mpa.responder_sent_first", PI_SEQUENCE, PI_WARN,
          "Responder sent an FPDU before receiving one (RFC 5044 §7.1.2 rule 4)", EXPFILL}},
        {&ei_rr_after_fo,
         {"iwk_mpa.rr_after_full_operation", PI_PROTOCOL, PI_WARN,
          "MPA startup frame after Full Operation began (RFC 5044 §7.1.2)", EXPFILL}},
    };

    proto_iwk_mpa = proto_register_protocol(
        "iWARP MPA (iwarpkit): Marker PDU Aligned Framing, RFC 5044/6581", "iWARP-MPA", "iwk_mpa");
    proto_register_field_array(proto_iwk_mpa, hf, array_length(hf));
    proto_register_subtree_array(ett, array_length(ett));
    expert_register_field_array(expert_register_protocol(proto_iwk_mpa), ei, array_length(ei));

    module_t *mod = prefs_register_protocol(proto_iwk_mpa, NULL);
    prefs_register_bool_preference(mod, "check_crc", "Validate the MPA CRC32c",
                                   "Check each FPDU's CRC when CRCs are in use (RFC 5044 §4.4)",
                                   &pref_check_crc);
    prefs_register_bool_preference(
        mod, "midstream", "Find streams without an MPA startup",
        "Claim TCP streams whose MPA Request/Reply is not in the capture when a segment starts "
        "with an FPDU that verifies",
        &pref_midstream);
    prefs_register_bool_preference(
        mod, "midstream_no_crc", "Mid-stream: accept FPDUs without a valid CRC",
        "Also accept segments whose FPDUs tile the segment exactly and decode as DDP/RDMAP "
        "without a verdict (for streams that run without CRCs)",
        &pref_midstream_no_crc);
    prefs_register_bool_preference(
        mod, "yield_to_builtin", "Leave MPA startups to the built-in iwarp_mpa",
        "When both this plugin and Wireshark's iwarp_mpa dissector could take a connection that "
        "starts with an MPA Request, let the built-in one have it",
        &pref_yield);
    prefs_register_bool_preference(
        mod, "desegment", "Reassemble FPDUs spanning TCP segments",
        "Requires TCP's \"Allow subdissector to reassemble TCP streams\"", &pref_desegment);

    iwk_tcp_handle = register_dissector("iwk_mpa", dissect_iwk_tcp, proto_iwk_mpa);
    register_init_routine(iwk_mpa_init);
}

void proto_reg_handoff_iwk_mpa(void) {
    heur_dissector_add("tcp", dissect_iwk_heur, "iWARP over TCP (iwarpkit)", "iwk_mpa_tcp",
                       proto_iwk_mpa, HEURISTIC_ENABLE);
    dissector_add_for_decode_as_with_preference("tcp.port", iwk_tcp_handle);
}
