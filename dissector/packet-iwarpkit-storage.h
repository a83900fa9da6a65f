/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwarpkit Wireshark plugin: storage ULPs over RDMAP.
 *
 * packet-iwarpkit-storage.c owns what all storage ULPs share: which ULP a
 * connection carries (MPA private data, port preferences, first Send), the
 * storage commands of a capture and the frames that belong to each (the
 * Send that carries it, the RDMA Writes / Reads that move its data through
 * the STags it names, its completion), the iwk_storage items and tap. The
 * ULP modules (packet-iwarpkit-rpcrdma.c, -iser.c, -nvmeof.c) decode their
 * own headers, call Wireshark's dissectors for what lies above, and report
 * commands, STags and completions through the functions below. */
#ifndef PACKET_IWARPKIT_STORAGE_H
#define PACKET_IWARPKIT_STORAGE_H

#include "packet-iwarpkit.h"

#include <epan/dissectors/packet-iwarp-ddp-rdmap.h>

typedef enum iwk_ulp {
    IWK_ULP_NONE = 0,
    IWK_ULP_RPCRDMA, /* RPC-over-RDMA v1 (RFC 8166): NFS */
    IWK_ULP_ISER,    /* iSER (RFC 7145): iSCSI */
    IWK_ULP_NVMEOF,  /* NVMe over Fabrics, RDMA transport */
    IWK_ULP_SMBD,    /* SMB Direct (MS-SMBD) */
    IWK_ULP_COUNT
} iwk_ulp;

extern const value_string iwk_ulp_vals[];

/* One storage command: from the message that starts it to its completion. */
typedef struct iwk_cmd {
    guint32 id;          /* 1-based per capture: iwk_storage.cmd */
    guint8 ulp;          /* iwk_ulp */
    guint32 conv_index;  /* iwk_conv.index of its connection */
    const char *op_name; /* "NFSv3 READ", "SCSI READ(10)", "NVMe Read", ... */
    char *detail;        /* "XID 0x1003", "ITT 0x10", "QID 1 CID 0x11" */
    guint32 req_frame;
    nstime_t req_ts;
    guint32 rsp_frame; /* 0 until completed */
    nstime_t rsp_ts;
    gboolean has_status;
    guint32 status; /* ULP status of the completion (0: success) */
    const char *status_str;
    guint64 bytes;  /* data octets moved by RDMA for it */
    guint32 n_data; /* RDMA segments that moved them */
    guint32 first_data, last_data;
    guint32 stags[4]; /* STags it advertised */
    guint8 n_stags;
} iwk_cmd;

/* Role of one DDP segment in a command. */
enum {
    IWK_ROLE_CMD = 1,
    IWK_ROLE_DATA,
    IWK_ROLE_READ_REQ,
    IWK_ROLE_RSP,
    IWK_ROLE_CMD_FRAG,
    IWK_ROLE_RSP_FRAG
};

/* Per-connection storage state (first pass). */
typedef struct iwk_stor {
    iwk_ulp ulp;
    gboolean ulp_from_pd; /* recognised from the MPA private data */
    int initiator;        /* direction index of the ULP initiator (client / host) */
    wmem_map_t *pending;  /* ULP key -> iwk_cmd awaiting completion */
    wmem_map_t *stags;    /* advertised STag -> iwk_cmd */
    wmem_map_t *sinks;    /* Read Request Data Sink STag -> iwk_cmd */
    wmem_map_t *frags;    /* (direction, reassembly id) -> iwk_cmd (Send fragments) */
    /* NVMe/RDMA: the queue this connection is (CM private data or Connect). */
    gboolean qid_known;
    guint16 qid;
    /* RPC-over-RDMA: write-chunk handle -> the RDMA Write data seen for it. */
    wmem_map_t *chunks;
} iwk_stor;

/* What a ULP module gets for one whole Send (or segment). */
typedef struct iwk_ulp_ctx {
    packet_info *pinfo;
    proto_tree *tree;
    iwk_fpdu_ctx *fctx;
    iwk_stor *st;
    const iw_rdmap_msg *m;
    rdmap_info_t *info;
    gboolean first_pass; /* may create and complete commands */
    gboolean from_initiator;
    proto_item *ulp_item; /* the module's own top item (for expert items) */
} iwk_ulp_ctx;

/* Storage state of a connection (created on first use). */
iwk_stor *iwk_stor_get(iwk_conv *c);

/* ---- command tracking, first pass only (u->first_pass) ---- */
/* A new command keyed by its ULP key (XID, ITT, QID<<16|CID), started by
 * the current message. Replaces a pending command with the same key. */
iwk_cmd *iwk_cmd_start(iwk_ulp_ctx *u, guint64 key, const char *op_name, const char *detail);
/* The pending command with this key, completed by the current message (or
 * NULL). */
iwk_cmd *iwk_cmd_complete(iwk_ulp_ctx *u, guint64 key, gboolean has_status, guint32 status,
                          const char *status_str);
/* The command advertises an STag for its data (RPC chunk segment, iSER
 * Read/Write STag, NVMe keyed SGL). */
void iwk_cmd_stag(iwk_ulp_ctx *u, iwk_cmd *cmd, guint32 stag);
/* The command a pending key names, without completing it. */
iwk_cmd *iwk_cmd_lookup(iwk_ulp_ctx *u, guint64 key);

/* ---- per message display (every pass) ---- */
/* Record (first pass) and show the current message's link to cmd in role. */
void iwk_link_message(iwk_ulp_ctx *u, tvbuff_t *tvb, iwk_cmd *cmd, int role);
/* The command recorded for the current message on the first pass. */
iwk_cmd *iwk_link_get(iwk_ulp_ctx *u);

/* ---- hand-off from packet-iwarpkit-rdmap.c ---- */
/* A ULP payload of one DDP segment: the segment's own payload (tagged, or an
 * untagged message in one segment), or a reassembled untagged message
 * (reasm_id != 0). tvb is a 0-length tvb for a Read Request. */
void iwk_ulp_offer(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, rdmap_info_t *info,
                   iwk_fpdu_ctx *ctx, const iw_rdmap_msg *m, guint32 reasm_id);
/* A fragment of an untagged message that is reassembled later. */
void iwk_ulp_fragment(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, iwk_fpdu_ctx *ctx,
                      const iw_rdmap_msg *m, guint32 reasm_id);
/* The "iwarp_ddp_rdmap" heuristic list, as the built-in calls it
 * (packet-iwarpkit-rdmap.c). */
void iwk_rdmap_call_heur(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, rdmap_info_t *info);

/* MPA Request/Reply ULP private data (from packet-iwarpkit-mpa.c): shown
 * under item, and on the first pass it fixes the connection's ULP. */
void iwk_storage_mpa_pd(tvbuff_t *tvb, guint off, guint len, packet_info *pinfo, proto_tree *tree,
                        iwk_conv *c, int d, gboolean request, gboolean first_pass);

/* ---- ULP modules ---- */
void iwk_rpcrdma_send(iwk_ulp_ctx *u, tvbuff_t *tvb);
/* A tagged segment on an RPC-over-RDMA connection: RDMA Write data kept for
 * rebuilding replies from their write chunks (first pass). */
void iwk_rpcrdma_tagged(iwk_ulp_ctx *u, tvbuff_t *tvb);
gboolean iwk_rpcrdma_pd(tvbuff_t *tvb, guint off, guint len, proto_tree *tree);
void iwk_iser_send(iwk_ulp_ctx *u, tvbuff_t *tvb);
void iwk_smbd_send(iwk_ulp_ctx *u, tvbuff_t *tvb);
gboolean iwk_iser_looks_like(tvbuff_t *tvb);
gboolean iwk_iser_pd(tvbuff_t *tvb, guint off, guint len, proto_tree *tree, gboolean request);
void iwk_nvmeof_send(iwk_ulp_ctx *u, tvbuff_t *tvb);
gboolean iwk_nvmeof_pd(tvbuff_t *tvb, guint off, guint len, proto_tree *tree, gboolean request,
                       guint16 *qid);

void proto_register_iwk_storage(void);
void proto_reg_handoff_iwk_storage(void);
void proto_register_iwk_rpcrdma(void);
void proto_register_iwk_iser(void);
void proto_reg_handoff_iwk_iser(void);
void proto_register_iwk_nvmeof(void);

/* Tap "iwk_storage": one record per completed command, at its completion. */
extern int iwk_storage_tap;
void iwk_storage_stats_register(void);

#endif
