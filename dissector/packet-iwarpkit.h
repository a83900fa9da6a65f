/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwarpkit Wireshark plugin: shared declarations.
 *
 * Three protocols, each with its own filter prefix so the plugin loads next
 * to Wireshark's built-in iwarp_mpa / iwarp_ddp_rdmap:
 *   iwk_mpa    MPA (RFC 5044, RFC 6581): startup frames, FPDUs, markers, CRC
 *   iwk_ddp    DDP (RFC 5041) headers
 *   iwk_rdmap  RDMAP (RFC 5040, RFC 7306) messages
 * All decoding goes through libiwarp (<iwarp/...>); this code turns tvb
 * bytes into codec calls and hf items. */
#ifndef PACKET_IWARPKIT_H
#define PACKET_IWARPKIT_H

#include <epan/packet.h>
#include <epan/expert.h>

#include <iwarp/iwarp.h>
#include <iwarp/shadow.h>

/* Protocol ids (registered in packet-iwarpkit-mpa.c / -rdmap.c). */
extern int proto_iwk_mpa;
extern int proto_iwk_ddp;
extern int proto_iwk_rdmap;

/* A Read or Atomic Request, for linking its response (which one answers
 * it is the shadow's matching, RFC 5040 §5.2.2, RFC 7306 §5). */
typedef struct iwk_req {
    guint32 frame;
    nstime_t ts;
    guint8 opcode;
    guint32 sink_stag; /* Read: Data Sink STag the response carries */
    guint64 sink_to;
    guint32 size;       /* Read: RDMARDSZ */
    guint32 req_id;     /* Atomic: Request Identifier */
    guint32 resp_frame; /* 0 until the response's first segment is seen */
    gboolean resp_open; /* Read Response: its last segment is still to come */
    nstime_t resp_ts;
} iwk_req;

/* Per direction of one TCP connection. Direction 0 is the initiator's
 * (sender of the MPA Request), or the first sender seen mid-stream. */
typedef struct iwk_dir {
    /* MPA framing (first pass only; results are stored per PDU). */
    gboolean started;  /* a PDU of this direction was committed: a startup frame is
                          only ever its first octets (RFC 5044 §7.1.1) */
    gboolean rr_seen;  /* an MPA Request/Reply was seen in this direction */
    guint32 rr_seq;    /* its TCP sequence number */
    gboolean fo_known; /* fo_seq is known */
    guint32 fo_seq;    /* SeqStart: first octet of Full Operation (§4.3) */
    int markers;       /* -1 unknown, 0 off, 1 on (RFC 5044 §7.1.1 M bit) */
    gboolean lost;     /* framing lost (bad CRC or undecodable data) */
    gboolean in_sync;  /* nxt_seq is the next FPDU start */
    guint32 nxt_seq;
    gboolean rejected; /* MPA exited after a Reply with R=1 */
    guint32 n_fpdus;
    guint32 first_fpdu_frame;
    /* Mid-stream / after-gap synchronisation (first pass): the octets since
     * framing was last known and the segment starts in them, for libiwarp's
     * iw_mpa_sync_probe; once it found framing, the next boundary. */
    guint8 *sync_buf;
    guint32 sync_len, sync_cap;
    guint32 sync_seq0;   /* TCP sequence number of sync_buf[0] */
    guint64 *sync_cands; /* offsets into sync_buf */
    guint32 sync_ncands;
    size_t sync_first;
    gboolean sync_found; /* framing found: an FPDU starts at sync_next */
    guint32 sync_next;
    guint32 sync_pos; /* its grid position */
    gboolean sync_markers, sync_crc;
    gboolean sync_prov; /* found by CRC-verified FPDUs whose span could not
                                 yet rule markers out: decoded, not committed */
    /* Message grouping per QN, for reassembly only (verdicts: iw_shadow). */
    guint32 last_msn[4];
    gboolean in_msg[4]; /* last segment on this QN had L=0 */
    guint32 msg_id[4];  /* reassembly id of the message in progress */
    wmem_map_t *tagged; /* STag -> iwk_tmsg (tagged message in progress) */
    guint32 next_id;    /* reassembly ids */
} iwk_dir;

/* RFC 6581 §9 negotiation state. */
typedef struct iwk_v2 {
    gboolean req_seen, rep_seen;
    iw_mpa_v2 req, rep;
    gboolean req_enh, rep_enh;
    gboolean rtr_checked; /* first initiator FPDU after an A=1 startup */
} iwk_v2;

typedef struct iwk_conv {
    address addr0; /* sender of direction 0 */
    guint32 port0;
    iwk_dir dir[2];
    int crc;            /* -1 unknown, 0 off, 1 on (C bit, RFC 5044 §7.1.1) */
    gboolean handshake; /* startup frames were in the capture */
    gboolean midstream; /* claimed from FPDUs alone */
    int init_dir;       /* direction of the MPA Request sender, -1 unknown */
    iwk_v2 v2;
    guint32 index;       /* the TCP stream index (tcp.stream) */
    guint32 claim_frame; /* first frame given to us: earlier ones never were */
    /* libiwarp's shadow of the two receivers (<iwarp/shadow.h>): the
     * engine's receive-side checks over the conversation, fed on the first
     * pass in capture order (MPA frames, FPDUs, losses). */
    iw_shadow *shadow;
    struct iwk_stor *stor;      /* storage ULP state (packet-iwarpkit-storage.c) */
    struct iwk_seg_index *segs; /* DDP header -> frame, per direction, for linking a
                                 * Terminate to the segment its copy names (rdmap.c) */
    wmem_map_t *reqs;           /* frame -> list of iwk_req (Read/Atomic Requests), for links */
} iwk_conv;

/* What the MPA layer hands to DDP/RDMAP for one FPDU. */
typedef struct iwk_fpdu_ctx {
    iwk_conv *conv;
    int d;                  /* direction index */
    guint32 seq;            /* TCP sequence number of the FPDU's first wire octet */
    gboolean crc_bad;       /* the FPDU failed its CRC or marker check: decode, do not track */
    iw_verdict mpa_verdict; /* that check's verdict (ok otherwise) */
    gboolean track;         /* first pass may update conversation state */
    proto_item *mpa_item;
    /* Where the RDMAP layer keeps its first-pass state for this FPDU: a slot
     * in the MPA layer's own per-FPDU record (one proto-data entry per FPDU
     * instead of two), or NULL for proto data keyed by seq. */
    const void **seg_slot;
} iwk_fpdu_ctx;

/* The captured octets from offset on, in one span for libiwarp's codecs
 * (NULL when there are none). */
const guint8 *iwk_tvb_bytes(tvbuff_t *tvb, guint offset, guint *len);

/* A conversation's state: direction 0 is pinfo's sender; index names the
 * stream (tcp.stream, or the SCTP DDP stream's number). */
iwk_conv *iwk_conv_new(packet_info *pinfo, guint32 index);

/* Claim the TCP connection for iWARP if it is ours already or the payload
 * starts with an MPA Request/Reply or a verifiable FPDU, and dissect it
 * (packet-iwarpkit-mpa.c). */
gboolean iwk_mpa_claim(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data);

/* RDMAP over one ULPDU (packet-iwarpkit-rdmap.c). Appends to the Info
 * column. */
void iwk_dissect_ulpdu(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, iwk_fpdu_ctx *ctx);
/* The first-pass analysis of one ULPDU (tracking, the shadow) without a
 * tree, into *ctx->seg_slot, which must be NULL: DDP over SCTP analyses a
 * chunk it held back for DDP-SSN order once the chunks before it came, with
 * pinfo a copy whose num and abs_ts are the held chunk's. */
void iwk_analyse_ulpdu(packet_info *pinfo, iwk_fpdu_ctx *ctx, const guint8 *p, guint len);
/* The state a held chunk shows until then: no findings. */
const void *iwk_seg_pending(void);

/* ---- verdicts and notes as expert items (packet-iwarpkit-expert.c) ---- */

/* Register the generated expert fields of every RFC 6580 triple, close
 * reason and library note (MPA ones under proto_mpa, the rest under
 * proto_rdmap). */
void iwk_expert_register(int proto_mpa, int proto_rdmap);
/* Expert item for a verdict (Terminate triple or close), naming the triple
 * and the RFC section of the rule that fired. */
void iwk_expert_verdict(packet_info *pinfo, proto_item *item, const iw_verdict *v);
/* One expert item per note bit set. */
void iwk_expert_notes(packet_info *pinfo, proto_item *item, guint32 notes);
/* The expert item of one note (an IW_NOTE_BIT_*), with its own message. */
void iwk_expert_note_msg(packet_info *pinfo, proto_item *item, unsigned bit, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);
/* Notes whose items the caller writes itself (iwk_expert_note_msg). */
#define IWK_NOTES_OWN_MSG IW_NOTE(TERM_SIW_LAYOUT)
/* The shadow's stateful verdict (the triple's expert item, with the rule,
 * the frame it refers to and what it assumes) and the shadow notes the
 * plugin's own items do not already cover. Returns TRUE if a verdict was
 * added. */
gboolean iwk_expert_shadow(packet_info *pinfo, proto_item *item, const iw_shadow_result *res);
/* Plain expert item; marks the tree with iwk_mpa.alert at warning and above. */
void iwk_expert_add(packet_info *pinfo, proto_item *item, expert_field *ei, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);
/* Mark an item as carrying an alert of this severity (PI_WARN, PI_ERROR). */
void iwk_alert(packet_info *pinfo, proto_item *item, int severity);

extern const value_string iwk_term_vals[];
extern const value_string iwk_close_vals[];
extern const value_string iwk_opcode_vals[];
extern const value_string iwk_shadow_rule_vals[];

/* Statistics tap (packet-iwarpkit-stats.c). */
typedef struct iwk_tap_info {
    guint8 opcode;
    gboolean tagged;
    guint32 qn;
    guint32 bytes; /* DDP payload octets */
    guint32 conv_index;
    int d;
    const address *src, *dst;
    guint32 srcport, dstport;
    gboolean verdict;     /* a DDP/RDMAP Terminate verdict (iwk_rdmap.verdict) */
    gboolean mpa_verdict; /* the FPDU failed its CRC or marker check (MPA's verdict) */
} iwk_tap_info;
extern int iwk_tap;
void iwk_stats_register(void);

/* Registration entry points, called from plugin.c. */
void proto_register_iwk_mpa(void);
void proto_reg_handoff_iwk_mpa(void);
void proto_register_iwk_sctp(void);
void proto_reg_handoff_iwk_sctp(void);
void proto_register_iwk_rdmap(void);
void proto_reg_handoff_iwk_rdmap(void);

#endif
