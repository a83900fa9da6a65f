/* SPDX-License-Identifier: GPL-2.0-or-later */
/* packet-iwarpkit-storage.c
 * Storage ULPs over iWARP: which ULP a connection carries, the storage
 * commands of a capture and every frame that belongs to one. Part of the
 * iwarpkit Wireshark plugin.
 *
 * A connection's ULP comes from, in order: the ULP private data of its MPA
 * Request/Reply (on iWARP, rdma_cm carries the ULP's connection-manager
 * private data there: RPC-over-RDMA's RFC 8797 message, the NVMe/RDMA
 * RDMA_CM_REQUEST/ACCEPT, iSER's CM header), a port preference (20049 NFS,
 * 4420 NVMe/RDMA, 3260 iSER, 5445 SMB Direct), or the first Send (iSER).
 * On the preference ports the plugin stands in front of the dissectors
 * Wireshark registers there (nvme-tcp on 4420, iscsi on 3260, artemis on
 * 5445): a connection that starts with an MPA Request or an FPDU is
 * iWARP, anything else still goes to the dissector that had the port.
 *
 * Commands: the ULP modules start a command on the message that carries it
 * (keyed by XID / ITT / QID+CID), name the STags it advertises (chunk
 * segments, iSER Read/Write STags, keyed SGLs) and complete it on its
 * response. Here those STags link the RDMA Writes (to the STag), RDMA Read
 * Requests (from it) and Read Responses (to the Read Request's Data Sink
 * STag) to the command. Every linked frame carries iwk_storage.cmd, so
 * "iwk_storage.cmd == N" shows all frames of command N.
 *
 * Limitations: STags are matched within one connection (a command whose
 * data moves on another connection is not linked); an STag re-advertised
 * by a later command belongs to the later one from then on. */
#include <string.h>

#include <epan/conversation.h>
#include <epan/prefs.h>
#include <epan/proto_data.h>
#include <epan/tap.h>

#include "packet-iwarpkit-storage.h"

int iwk_storage_tap = -1;
static int proto_iwk_storage = -1;

static int hf_cmd = -1;
static int hf_ulp = -1;
static int hf_op = -1;
static int hf_id = -1;
static int hf_role = -1;
static int hf_cmd_in = -1;
static int hf_rsp_in = -1;
static int hf_time = -1;
static int hf_data_first = -1;
static int hf_data_last = -1;
static int hf_bytes = -1;
static int hf_nseg = -1;
static int hf_stag = -1;
static int hf_status = -1;
static gint ett_storage = -1;

static range_t *pref_ports[IWK_ULP_COUNT];
static dissector_handle_t iwk_port_handle;
static GHashTable *saved_handles; /* port -> the handle the port had before us */
static guint32 cmd_count;

const value_string iwk_ulp_vals[] = {
    {IWK_ULP_NONE, "unknown"},      {IWK_ULP_RPCRDMA, "RPC-over-RDMA (NFS)"},
    {IWK_ULP_ISER, "iSER (iSCSI)"}, {IWK_ULP_NVMEOF, "NVMe/RDMA"},
    {IWK_ULP_SMBD, "SMB Direct"},   {0, NULL}};

static const value_string role_vals[] = {{IWK_ROLE_CMD, "command"},
                                         {IWK_ROLE_DATA, "data (RDMA Write or Read Response)"},
                                         {IWK_ROLE_READ_REQ, "RDMA Read Request for its data"},
                                         {IWK_ROLE_RSP, "completion"},
                                         {IWK_ROLE_CMD_FRAG, "command (segment of)"},
                                         {IWK_ROLE_RSP_FRAG, "completion (segment of)"},
                                         {0, NULL}};

/* Per-message record, keyed by the FPDU's sequence number. */
typedef struct iwk_link {
    iwk_cmd *cmd;
    guint8 role;
} iwk_link;

static void storage_init(void) { cmd_count = 0; }

/* ---------------- connection state ---------------- */

static iwk_ulp ulp_by_port(guint32 port) {
    for (int u = IWK_ULP_RPCRDMA; u < IWK_ULP_COUNT; u++)
        if (pref_ports[u] && value_is_in_range(pref_ports[u], port))
            return (iwk_ulp)u;
    return IWK_ULP_NONE;
}

static iwk_stor *stor_new(iwk_conv *c, packet_info *pinfo, int d) {
    iwk_stor *st = wmem_new0(wmem_file_scope(), iwk_stor);
    st->pending = wmem_map_new(wmem_file_scope(), g_int64_hash, g_int64_equal);
    st->stags = wmem_map_new(wmem_file_scope(), g_direct_hash, g_direct_equal);
    st->sinks = wmem_map_new(wmem_file_scope(), g_direct_hash, g_direct_equal);
    st->frags = wmem_map_new(wmem_file_scope(), g_int64_hash, g_int64_equal);
    st->chunks = wmem_map_new(wmem_file_scope(), g_direct_hash, g_direct_equal);
    /* The ULP server listens on the preference port; its peer initiates. */
    iwk_ulp by_dst = ulp_by_port(pinfo->destport), by_src = ulp_by_port(pinfo->srcport);
    if (c->init_dir >= 0) {
        st->initiator = c->init_dir;
        st->ulp = d == c->init_dir ? by_dst : by_src;
    } else if (by_dst != IWK_ULP_NONE) {
        st->initiator = d;
        st->ulp = by_dst;
    } else {
        st->initiator = by_src != IWK_ULP_NONE ? !d : 0;
        st->ulp = by_src;
    }
    c->stor = st;
    return st;
}

static iwk_stor *stor_for(iwk_conv *c, packet_info *pinfo, int d) {
    return c->stor ? c->stor : stor_new(c, pinfo, d);
}

iwk_stor *iwk_stor_get(iwk_conv *c) { return c->stor; }

/* ---------------- commands ---------------- */

iwk_cmd *iwk_cmd_start(iwk_ulp_ctx *u, guint64 key, const char *op_name, const char *detail) {
    if (!u->first_pass)
        return NULL;
    iwk_cmd *cmd = wmem_new0(wmem_file_scope(), iwk_cmd);
    cmd->id = ++cmd_count;
    cmd->ulp = (guint8)u->st->ulp;
    cmd->conv_index = u->fctx->conv->index;
    cmd->op_name = op_name;
    cmd->detail = wmem_strdup(wmem_file_scope(), detail);
    cmd->req_frame = u->pinfo->num;
    cmd->req_ts = u->pinfo->abs_ts;
    guint64 *k = wmem_new(wmem_file_scope(), guint64);
    *k = key;
    wmem_map_insert(u->st->pending, k, cmd);
    return cmd;
}

iwk_cmd *iwk_cmd_lookup(iwk_ulp_ctx *u, guint64 key) {
    return (iwk_cmd *)wmem_map_lookup(u->st->pending, &key);
}

iwk_cmd *iwk_cmd_complete(iwk_ulp_ctx *u, guint64 key, gboolean has_status, guint32 status,
                          const char *status_str) {
    if (!u->first_pass)
        return NULL;
    iwk_cmd *cmd = (iwk_cmd *)wmem_map_remove(u->st->pending, &key);
    if (!cmd)
        return NULL;
    cmd->rsp_frame = u->pinfo->num;
    cmd->rsp_ts = u->pinfo->abs_ts;
    cmd->has_status = has_status;
    cmd->status = status;
    cmd->status_str = status_str;
    return cmd;
}

void iwk_cmd_stag(iwk_ulp_ctx *u, iwk_cmd *cmd, guint32 stag) {
    if (!u->first_pass || !cmd)
        return;
    wmem_map_insert(u->st->stags, GUINT_TO_POINTER(stag), cmd);
    if (cmd->n_stags < G_N_ELEMENTS(cmd->stags))
        cmd->stags[cmd->n_stags++] = stag;
}

/* ---------------- display ---------------- */

static void show_link(proto_tree *tree, tvbuff_t *tvb, packet_info *pinfo, const iwk_link *l) {
    const iwk_cmd *cmd = l->cmd;
    proto_item *ti = proto_tree_add_item(tree, proto_iwk_storage, tvb, 0, 0, ENC_NA);
    proto_item_set_generated(ti);
    proto_item_append_text(ti, ": #%u %s (%s), %s", cmd->id, cmd->op_name, cmd->detail,
                           val_to_str_const(l->role, role_vals, "?"));
    proto_tree *t = proto_item_add_subtree(ti, ett_storage);
    proto_item *pi = proto_tree_add_uint(t, hf_cmd, tvb, 0, 0, cmd->id);
    proto_item_set_generated(pi);
    pi = proto_tree_add_uint(t, hf_ulp, tvb, 0, 0, cmd->ulp);
    proto_item_set_generated(pi);
    pi = proto_tree_add_string(t, hf_op, tvb, 0, 0, cmd->op_name);
    proto_item_set_generated(pi);
    pi = proto_tree_add_string(t, hf_id, tvb, 0, 0, cmd->detail);
    proto_item_set_generated(pi);
    pi = proto_tree_add_uint(t, hf_role, tvb, 0, 0, l->role);
    proto_item_set_generated(pi);
    if (cmd->req_frame != pinfo->num || (l->role != IWK_ROLE_CMD)) {
        pi = proto_tree_add_uint(t, hf_cmd_in, tvb, 0, 0, cmd->req_frame);
        proto_item_set_generated(pi);
    }
    if (cmd->rsp_frame && cmd->rsp_frame != pinfo->num) {
        pi = proto_tree_add_uint(t, hf_rsp_in, tvb, 0, 0, cmd->rsp_frame);
        proto_item_set_generated(pi);
    }
    if (cmd->rsp_frame) {
        nstime_t dt;
        nstime_delta(&dt, &cmd->rsp_ts, &cmd->req_ts);
        pi = proto_tree_add_time(t, hf_time, tvb, 0, 0, &dt);
        proto_item_set_generated(pi);
    }
    if (cmd->n_data) {
        pi = proto_tree_add_uint(t, hf_data_first, tvb, 0, 0, cmd->first_data);
        proto_item_set_generated(pi);
        pi = proto_tree_add_uint(t, hf_data_last, tvb, 0, 0, cmd->last_data);
        proto_item_set_generated(pi);
        pi = proto_tree_add_uint64(t, hf_bytes, tvb, 0, 0, cmd->bytes);
        proto_item_set_generated(pi);
        pi = proto_tree_add_uint(t, hf_nseg, tvb, 0, 0, cmd->n_data);
        proto_item_set_generated(pi);
    }
    for (guint i = 0; i < cmd->n_stags; i++) {
        pi = proto_tree_add_uint(t, hf_stag, tvb, 0, 0, cmd->stags[i]);
        proto_item_set_generated(pi);
    }
    if (cmd->rsp_frame && cmd->has_status) {
        pi = proto_tree_add_uint_format_value(t, hf_status, tvb, 0, 0, cmd->status, "0x%x (%s)",
                                              cmd->status, cmd->status_str ? cmd->status_str : "?");
        proto_item_set_generated(pi);
    }
    if (l->role == IWK_ROLE_DATA || l->role == IWK_ROLE_READ_REQ)
        col_append_fstr(pinfo->cinfo, COL_INFO, " [#%u %s]", cmd->id, cmd->op_name);
    if (l->role == IWK_ROLE_RSP && have_tap_listener(iwk_storage_tap))
        tap_queue_packet(iwk_storage_tap, pinfo, cmd);
}

static iwk_link *link_get(packet_info *pinfo, guint32 seq) {
    return (iwk_link *)p_get_proto_data(wmem_file_scope(), pinfo, proto_iwk_storage, seq);
}

static void link_put(packet_info *pinfo, guint32 seq, iwk_cmd *cmd, int role) {
    iwk_link *l = wmem_new(wmem_file_scope(), iwk_link);
    l->cmd = cmd;
    l->role = (guint8)role;
    p_add_proto_data(wmem_file_scope(), pinfo, proto_iwk_storage, seq, l);
}

void iwk_link_message(iwk_ulp_ctx *u, tvbuff_t *tvb, iwk_cmd *cmd, int role) {
    iwk_link *l = link_get(u->pinfo, u->fctx->seq);
    if (!l && u->first_pass && cmd) {
        link_put(u->pinfo, u->fctx->seq, cmd, role);
        l = link_get(u->pinfo, u->fctx->seq);
    }
    if (l)
        show_link(u->tree, tvb, u->pinfo, l);
}

iwk_cmd *iwk_link_get(iwk_ulp_ctx *u) {
    iwk_link *l = link_get(u->pinfo, u->fctx->seq);
    return l ? l->cmd : NULL;
}

/* ---------------- hand-off ---------------- */

static void ulp_ctx(iwk_ulp_ctx *u, iwk_stor *st, packet_info *pinfo, proto_tree *tree,
                    rdmap_info_t *info, iwk_fpdu_ctx *ctx, const iw_rdmap_msg *m) {
    memset(u, 0, sizeof *u);
    u->pinfo = pinfo;
    u->tree = tree;
    u->fctx = ctx;
    u->st = st;
    u->m = m;
    u->info = info;
    u->first_pass = !PINFO_FD_VISITED(pinfo) && ctx->track;
    u->from_initiator = ctx->d == st->initiator;
}

static guint64 frag_key(int d, guint32 reasm_id) { return ((guint64)(guint)d << 32) | reasm_id; }

/* RDMA Write and Read Response segments: the command whose STag they
 * place into. */
static void offer_tagged(iwk_ulp_ctx *u, tvbuff_t *tvb) {
    iwk_cmd *cmd = NULL;
    if (u->first_pass) {
        wmem_map_t *map = u->m->opcode == IW_OP_WRITE ? u->st->stags : u->st->sinks;
        cmd = (iwk_cmd *)wmem_map_lookup(map, GUINT_TO_POINTER(u->m->ddp.stag));
        if (cmd) {
            cmd->bytes += tvb_reported_length(tvb);
            if (!cmd->n_data++)
                cmd->first_data = u->pinfo->num;
            cmd->last_data = u->pinfo->num;
        }
    }
    iwk_link_message(u, tvb, cmd, IWK_ROLE_DATA);
    switch (u->st->ulp) {
    case IWK_ULP_ISER:
    case IWK_ULP_NVMEOF:
        /* Data blocks: nothing above to hand them to. */
        call_data_dissector(tvb, u->pinfo, u->tree);
        break;
    case IWK_ULP_RPCRDMA:
        iwk_rpcrdma_tagged(u, tvb);
        /* RPC-over-RDMA reassembles read and reply chunks from these too. */
        iwk_rdmap_call_heur(tvb, u->pinfo, u->tree, u->info);
        break;
    default:
        iwk_rdmap_call_heur(tvb, u->pinfo, u->tree, u->info);
        break;
    }
}

/* RDMA Read Request: the command whose STag it reads from; its responses
 * will carry the Data Sink STag (RFC 5040 §4.4). */
static void offer_read_req(iwk_ulp_ctx *u, tvbuff_t *tvb) {
    iwk_cmd *cmd = NULL;
    if (u->first_pass && u->m->has_hdr) {
        cmd = (iwk_cmd *)wmem_map_lookup(u->st->stags, GUINT_TO_POINTER(u->m->u.read_req.src_stag));
        if (cmd)
            wmem_map_insert(u->st->sinks, GUINT_TO_POINTER(u->m->u.read_req.sink_stag), cmd);
    }
    iwk_link_message(u, tvb, cmd, IWK_ROLE_READ_REQ);
    if (u->st->ulp != IWK_ULP_ISER && u->st->ulp != IWK_ULP_NVMEOF) {
        /* As the built-in: the ULP sees the Read Request (RPC-over-RDMA maps
         * sink to source with it). */
        iwk_rdmap_call_heur(tvb, u->pinfo, u->tree, u->info);
    }
}

void iwk_ulp_offer(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, rdmap_info_t *info,
                   iwk_fpdu_ctx *ctx, const iw_rdmap_msg *m, guint32 reasm_id) {
    iwk_stor *st = stor_for(ctx->conv, pinfo, ctx->d);
    iwk_ulp_ctx u;
    ulp_ctx(&u, st, pinfo, tree, info, ctx, m);
    switch (m->opcode) {
    case IW_OP_WRITE:
    case IW_OP_READ_RESP:
        offer_tagged(&u, tvb);
        return;
    case IW_OP_READ_REQ:
        offer_read_req(&u, tvb);
        return;
    default:
        break;
    }
    /* A Send: the ULP's own message. */
    if (u.first_pass && st->ulp == IWK_ULP_NONE && iwk_iser_looks_like(tvb))
        st->ulp = IWK_ULP_ISER;
    switch (st->ulp) {
    case IWK_ULP_RPCRDMA:
        iwk_rpcrdma_send(&u, tvb);
        break;
    case IWK_ULP_ISER:
        iwk_iser_send(&u, tvb);
        break;
    case IWK_ULP_NVMEOF:
        iwk_nvmeof_send(&u, tvb);
        break;
    case IWK_ULP_SMBD:
        iwk_smbd_send(&u, tvb);
        break;
    default:
        iwk_rdmap_call_heur(tvb, pinfo, tree, info);
        break;
    }
    if (reasm_id && u.first_pass) {
        iwk_cmd *cmd = iwk_link_get(&u);
        if (cmd) {
            guint64 *k = wmem_new(wmem_file_scope(), guint64);
            *k = frag_key(ctx->d, reasm_id);
            wmem_map_insert(st->frags, k, cmd);
        }
    }
}

void iwk_ulp_fragment(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, iwk_fpdu_ctx *ctx,
                      const iw_rdmap_msg *m, guint32 reasm_id) {
    (void)m;
    iwk_stor *st = ctx->conv->stor;
    if (st && PINFO_FD_VISITED(pinfo)) {
        /* Known once the whole message was seen (first pass). */
        guint64 k = frag_key(ctx->d, reasm_id);
        iwk_cmd *cmd = (iwk_cmd *)wmem_map_lookup(st->frags, &k);
        if (cmd) {
            iwk_link l;
            l.cmd = cmd;
            l.role = cmd->req_frame > pinfo->num ? IWK_ROLE_CMD_FRAG : IWK_ROLE_RSP_FRAG;
            show_link(tree, tvb, pinfo, &l);
        }
    }
    call_data_dissector(tvb, pinfo, tree);
}

/* ---------------- MPA private data ---------------- */

void iwk_storage_mpa_pd(tvbuff_t *tvb, guint off, guint len, packet_info *pinfo, proto_tree *tree,
                        iwk_conv *c, int d, gboolean request, gboolean first_pass) {
    iwk_ulp ulp = IWK_ULP_NONE;
    guint16 qid = 0;
    if (iwk_rpcrdma_pd(tvb, off, len, tree))
        ulp = IWK_ULP_RPCRDMA;
    else if (iwk_nvmeof_pd(tvb, off, len, tree, request, &qid))
        ulp = IWK_ULP_NVMEOF;
    else if (iwk_iser_pd(tvb, off, len, tree, request))
        ulp = IWK_ULP_ISER;
    if (!first_pass || ulp == IWK_ULP_NONE)
        return;
    iwk_stor *st = stor_for(c, pinfo, d);
    st->ulp = ulp;
    st->ulp_from_pd = TRUE;
    st->initiator = request ? d : !d;
    if (ulp == IWK_ULP_NVMEOF && request) {
        st->qid = qid;
        st->qid_known = TRUE;
    }
}

/* ---------------- preference ports ---------------- */

static int dissect_iwk_port(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data) {
    if (iwk_mpa_claim(tvb, pinfo, tree, data))
        return (int)tvb_captured_length(tvb);
    /* Not iWARP: the dissector that had the port. */
    dissector_handle_t old =
        (dissector_handle_t)g_hash_table_lookup(saved_handles, GUINT_TO_POINTER(pinfo->match_uint));
    return old ? call_dissector_only(old, tvb, pinfo, tree, data) : 0;
}

static void ports_apply(void) {
    /* Put back what the ports had, then stand in front of the new ones. A
     * port whose entry is no longer ours (Decode As changed it) is left
     * as the user set it. */
    GHashTableIter it;
    gpointer key, val;
    dissector_table_t t = find_dissector_table("tcp.port");
    g_hash_table_iter_init(&it, saved_handles);
    while (g_hash_table_iter_next(&it, &key, &val)) {
        if (!t || dissector_get_uint_handle(t, GPOINTER_TO_UINT(key)) != iwk_port_handle)
            continue;
        if (val)
            dissector_add_uint("tcp.port", GPOINTER_TO_UINT(key), (dissector_handle_t)val);
        else
            dissector_delete_uint("tcp.port", GPOINTER_TO_UINT(key), iwk_port_handle);
    }
    g_hash_table_remove_all(saved_handles);
    for (int u = IWK_ULP_RPCRDMA; u < IWK_ULP_COUNT; u++) {
        const range_t *r = pref_ports[u];
        for (guint i = 0; r && i < r->nranges; i++) {
            for (guint32 p = r->ranges[i].low; p <= r->ranges[i].high && p <= 65535; p++) {
                if (g_hash_table_contains(saved_handles, GUINT_TO_POINTER(p)))
                    continue;
                dissector_handle_t old = t ? dissector_get_uint_handle(t, p) : NULL;
                if (old == iwk_port_handle)
                    old = NULL;
                g_hash_table_insert(saved_handles, GUINT_TO_POINTER(p), old);
                dissector_add_uint("tcp.port", p, iwk_port_handle);
            }
        }
    }
}

void proto_register_iwk_storage(void) {
    static hf_register_info hf[] = {
        {&hf_cmd,
         {"Storage command", "iwk_storage.cmd", FT_UINT32, BASE_DEC, NULL, 0,
          "Number of the storage command this frame belongs to (filter on it to see all its "
          "frames)",
          HFILL}},
        {&hf_ulp,
         {"ULP", "iwk_storage.ulp", FT_UINT8, BASE_DEC, VALS(iwk_ulp_vals), 0, NULL, HFILL}},
        {&hf_op, {"Operation", "iwk_storage.op", FT_STRING, BASE_NONE, NULL, 0, NULL, HFILL}},
        {&hf_id,
         {"ULP identifier", "iwk_storage.ulp_id", FT_STRING, BASE_NONE, NULL, 0,
          "XID, ITT or queue and command identifier", HFILL}},
        {&hf_role,
         {"This frame", "iwk_storage.role", FT_UINT8, BASE_DEC, VALS(role_vals), 0, NULL, HFILL}},
        {&hf_cmd_in,
         {"Command in", "iwk_storage.cmd_in", FT_FRAMENUM, BASE_NONE,
          FRAMENUM_TYPE(FT_FRAMENUM_REQUEST), 0, NULL, HFILL}},
        {&hf_rsp_in,
         {"Completion in", "iwk_storage.completion_in", FT_FRAMENUM, BASE_NONE,
          FRAMENUM_TYPE(FT_FRAMENUM_RESPONSE), 0, NULL, HFILL}},
        {&hf_time,
         {"Latency", "iwk_storage.latency", FT_RELATIVE_TIME, BASE_NONE, NULL, 0,
          "From the command to its completion", HFILL}},
        {&hf_data_first,
         {"First data segment in", "iwk_storage.data_first", FT_FRAMENUM, BASE_NONE, NULL, 0,
          "First RDMA Write or Read Response that moved the command's data", HFILL}},
        {&hf_data_last,
         {"Last data segment in", "iwk_storage.data_last", FT_FRAMENUM, BASE_NONE, NULL, 0, NULL,
          HFILL}},
        {&hf_bytes,
         {"Data moved by RDMA", "iwk_storage.data_bytes", FT_UINT64, BASE_DEC | BASE_UNIT_STRING,
          &units_byte_bytes, 0, NULL, HFILL}},
        {&hf_nseg,
         {"Data segments", "iwk_storage.data_segments", FT_UINT32, BASE_DEC, NULL, 0, NULL, HFILL}},
        {&hf_stag,
         {"Advertised STag", "iwk_storage.stag", FT_UINT32, BASE_HEX, NULL, 0,
          "STag the command names for its data (chunk segment, iSER STag, keyed SGL)", HFILL}},
        {&hf_status,
         {"Status", "iwk_storage.status", FT_UINT32, BASE_HEX, NULL, 0,
          "ULP status of the completion", HFILL}},
    };
    static gint *ett[] = {&ett_storage};
    proto_iwk_storage =
        proto_register_protocol("Storage over iWARP (iwarpkit)", "iWARP-Storage", "iwk_storage");
    proto_register_field_array(proto_iwk_storage, hf, array_length(hf));
    proto_register_subtree_array(ett, array_length(ett));

    module_t *mod = prefs_register_protocol(proto_iwk_storage, proto_reg_handoff_iwk_storage);
    static const struct {
        iwk_ulp ulp;
        const char *name, *title, *def;
    } ports[] = {
        {IWK_ULP_RPCRDMA, "nfs_ports", "NFS/RDMA ports", "20049"},
        {IWK_ULP_NVMEOF, "nvme_ports", "NVMe/RDMA ports", "4420"},
        {IWK_ULP_ISER, "iser_ports", "iSER ports", "3260"},
        {IWK_ULP_SMBD, "smbd_ports", "SMB Direct ports", "5445"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(ports); i++) {
        range_convert_str(wmem_epan_scope(), &pref_ports[ports[i].ulp], ports[i].def, 65535);
        prefs_register_range_preference(
            mod, ports[i].name, ports[i].title,
            "TCP ports whose iWARP connections carry this ULP; the plugin also recognises iWARP "
            "there before the dissector Wireshark registers on the port",
            &pref_ports[ports[i].ulp], 65535);
    }
    iwk_port_handle = create_dissector_handle(dissect_iwk_port, proto_iwk_storage);
    saved_handles = g_hash_table_new(g_direct_hash, g_direct_equal);
    iwk_storage_tap = register_tap("iwk_storage");
    register_init_routine(storage_init);
}

void proto_reg_handoff_iwk_storage(void) { ports_apply(); }
