/* SPDX-License-Identifier: GPL-2.0-or-later */
/* packet-iwarpkit-iser.c
 * iSER, iSCSI Extensions for RDMA (RFC 7145), over iWARP. Part of the
 * iwarpkit Wireshark plugin.
 *
 * Wireshark 4.0 decodes iSER only on InfiniBand (its iser dissector hangs
 * off the infiniband.payload heuristics and needs an InfiniBand CM
 * conversation), so here the plugin decodes the iSER header of every Send
 * (RFC 7145 §9.1-9.4) itself and hands the iSCSI control-type PDU that
 * follows to Wireshark's iSCSI dissector (find_dissector("iscsi")), which
 * decodes it down to the SCSI CDB.
 *
 * Each iSCSI request with an Initiator Task Tag becomes a storage command
 * (key: ITT), completed by the target's response with that ITT; a SCSI
 * command names its Read STag (Data Sink of the target's RDMA Writes,
 * §9.5.2) and Write STag (Data Source of the target's RDMA Reads, §9.5.1).
 *
 * A connection is iSER when its MPA private data is the iSER CM header
 * (Linux ib_iser's struct iser_cm_hdr: flags, 3 reserved octets), by the
 * iSER port preference (3260), or when its first Send is an iSER header
 * with reserved fields zero followed by an iSCSI Basic Header Segment. */
#include <string.h>

#include "packet-iwarpkit-storage.h"

#include <epan/exceptions.h>
#include <epan/show_exception.h>

static int proto_iwk_iser = -1;
static int hf_opcode = -1;
static int hf_wsv = -1;
static int hf_rsv = -1;
static int hf_wstag = -1;
static int hf_wbo = -1;
static int hf_rstag = -1;
static int hf_rbo = -1;
static int hf_maxver = -1;
static int hf_minver = -1;
static int hf_curver = -1;
static int hf_ird = -1;
static int hf_ord = -1;
static int hf_rej = -1;
static int hf_cm = -1;
static int hf_cm_zbva = -1;
static int hf_cm_inv = -1;
static gint ett_iser = -1;
static gint ett_cm = -1;
static expert_field ei_rsvd = EI_INIT;

static dissector_handle_t iscsi_handle;

#define ISER_HDR_LEN 28
#define ISCSI_BHS_LEN 48
#define ISER_ISCSI_CTRL 0x1
#define ISER_HELLO 0x2
#define ISER_HELLO_REPLY 0x3
#define ISER_WSV 0x08
#define ISER_RSV 0x04

static const value_string opcode_vals[] = {{ISER_ISCSI_CTRL, "iSCSI control-type PDU"},
                                           {ISER_HELLO, "iSER Hello"},
                                           {ISER_HELLO_REPLY, "iSER HelloReply"},
                                           {0, NULL}};

/* iSCSI opcodes (RFC 7143 §11.2.1.2). */
static const value_string iscsi_ops[] = {{0x00, "NOP-Out"},
                                         {0x01, "SCSI Command"},
                                         {0x02, "Task Management Request"},
                                         {0x03, "Login Request"},
                                         {0x04, "Text Request"},
                                         {0x05, "SCSI Data-Out"},
                                         {0x06, "Logout Request"},
                                         {0x10, "SNACK Request"},
                                         {0x20, "NOP-In"},
                                         {0x21, "SCSI Response"},
                                         {0x22, "Task Management Response"},
                                         {0x23, "Login Response"},
                                         {0x24, "Text Response"},
                                         {0x25, "SCSI Data-In"},
                                         {0x26, "Logout Response"},
                                         {0x31, "Ready To Transfer"},
                                         {0x32, "Asynchronous Message"},
                                         {0x3f, "Reject"},
                                         {0, NULL}};

/* Common CDB operation codes (SPC-5, SBC-4). */
static const value_string cdb_ops[] = {{0x00, "TEST UNIT READY"},
                                       {0x03, "REQUEST SENSE"},
                                       {0x08, "READ(6)"},
                                       {0x0a, "WRITE(6)"},
                                       {0x12, "INQUIRY"},
                                       {0x15, "MODE SELECT(6)"},
                                       {0x1a, "MODE SENSE(6)"},
                                       {0x1b, "START STOP UNIT"},
                                       {0x1e, "PREVENT ALLOW MEDIUM REMOVAL"},
                                       {0x25, "READ CAPACITY(10)"},
                                       {0x28, "READ(10)"},
                                       {0x2a, "WRITE(10)"},
                                       {0x2f, "VERIFY(10)"},
                                       {0x35, "SYNCHRONIZE CACHE(10)"},
                                       {0x41, "WRITE SAME(10)"},
                                       {0x42, "UNMAP"},
                                       {0x4d, "LOG SENSE"},
                                       {0x55, "MODE SELECT(10)"},
                                       {0x5a, "MODE SENSE(10)"},
                                       {0x88, "READ(16)"},
                                       {0x8a, "WRITE(16)"},
                                       {0x8f, "VERIFY(16)"},
                                       {0x91, "SYNCHRONIZE CACHE(16)"},
                                       {0x93, "WRITE SAME(16)"},
                                       {0x9e, "SERVICE ACTION IN(16)"},
                                       {0xa0, "REPORT LUNS"},
                                       {0xa3, "MAINTENANCE IN"},
                                       {0xa8, "READ(12)"},
                                       {0xaa, "WRITE(12)"},
                                       {0, NULL}};

static const value_string scsi_status[] = {{0x00, "GOOD"},          {0x02, "CHECK CONDITION"},
                                           {0x08, "BUSY"},          {0x18, "RESERVATION CONFLICT"},
                                           {0x28, "TASK SET FULL"}, {0x30, "ACA ACTIVE"},
                                           {0x40, "TASK ABORTED"},  {0, NULL}};

static gboolean is_initiator_op(guint8 op) { return op <= 0x06 || op == 0x10; }

static gboolean is_target_op(guint8 op) {
    return (op >= 0x20 && op <= 0x26) || op == 0x31 || op == 0x32 || op == 0x3f;
}

/* The first Send of a connection: an iSER header whose reserved fields and
 * invalid STag fields are zero (RFC 7145 §9.2 "MUST be set to zero"), then
 * an iSCSI BHS; or a Hello (§9.3), 28 octets alone. */
gboolean iwk_iser_looks_like(tvbuff_t *tvb) {
    guint len = tvb_captured_length(tvb);
    if (len < ISER_HDR_LEN)
        return FALSE;
    guint8 b0 = tvb_get_guint8(tvb, 0);
    if (b0 >> 4 == ISER_HELLO)
        return len == ISER_HDR_LEN && (tvb_get_guint8(tvb, 1) >> 4) == 0xA;
    if (b0 >> 4 != ISER_ISCSI_CTRL || (b0 & 0x03) || tvb_get_ntoh24(tvb, 1) ||
        len < ISER_HDR_LEN + ISCSI_BHS_LEN)
        return FALSE;
    if (!(b0 & ISER_WSV) && (tvb_get_ntohl(tvb, 4) || tvb_get_ntoh64(tvb, 8)))
        return FALSE;
    if (!(b0 & ISER_RSV) && (tvb_get_ntohl(tvb, 16) || tvb_get_ntoh64(tvb, 20)))
        return FALSE;
    guint8 op = tvb_get_guint8(tvb, ISER_HDR_LEN) & 0x3f;
    return is_initiator_op(op) || is_target_op(op);
}

static const char *op_name(tvbuff_t *pdu, guint8 op) {
    if (op == 0x01 && tvb_captured_length(pdu) > 32) {
        guint8 cdb = tvb_get_guint8(pdu, 32);
        const char *n = try_val_to_str(cdb, cdb_ops);
        return n ? wmem_strdup_printf(wmem_file_scope(), "SCSI %s", n)
                 : wmem_strdup_printf(wmem_file_scope(), "SCSI CDB 0x%02x", cdb);
    }
    return wmem_strdup_printf(wmem_file_scope(), "iSCSI %s",
                              val_to_str_const(op, iscsi_ops, "unknown opcode"));
}

/* First pass: commands from the initiator, completions from the target. */
static void track(iwk_ulp_ctx *u, tvbuff_t *tvb, tvbuff_t *pdu, guint8 flags) {
    guint8 op = tvb_get_guint8(pdu, 0) & 0x3f;
    guint32 itt = tvb_get_ntohl(pdu, 16);
    iwk_cmd *cmd = NULL;
    int role = 0;
    if (u->from_initiator && is_initiator_op(op) && op != 0x05 && op != 0x10 &&
        itt != 0xffffffffu) {
        cmd = iwk_cmd_start(u, itt, op_name(pdu, op),
                            wmem_strdup_printf(u->pinfo->pool, "ITT 0x%08x", itt));
        if (cmd && (flags & ISER_WSV))
            iwk_cmd_stag(u, cmd, tvb_get_ntohl(tvb, 4));
        if (cmd && (flags & ISER_RSV))
            iwk_cmd_stag(u, cmd, tvb_get_ntohl(tvb, 16));
        role = IWK_ROLE_CMD;
    } else if (u->from_initiator && op == 0x05) {
        /* Unsolicited Data-Out in a Send (RFC 7145 §7.3.2): data of the
         * command with that ITT. */
        cmd = iwk_cmd_lookup(u, itt);
        if (cmd) {
            cmd->bytes += tvb_get_ntoh24(pdu, 5);
            if (!cmd->n_data++)
                cmd->first_data = u->pinfo->num;
            cmd->last_data = u->pinfo->num;
        }
        role = IWK_ROLE_DATA;
    } else if (!u->from_initiator && op >= 0x20 && op <= 0x26 && op != 0x25) {
        guint32 status = 0;
        const char *str = "OK";
        if (op == 0x21) {
            /* Response (octet 2) and SCSI Status (octet 3), RFC 7143 §11.4. */
            status = (guint32)tvb_get_guint8(pdu, 2) << 8 | tvb_get_guint8(pdu, 3);
            str = tvb_get_guint8(pdu, 2)
                      ? "iSCSI target failure"
                      : val_to_str_const(tvb_get_guint8(pdu, 3), scsi_status, "SCSI status");
        } else if (op == 0x23) {
            /* Status-Class and Status-Detail (§11.13.5). */
            status = (guint32)tvb_get_guint8(pdu, 36) << 8 | tvb_get_guint8(pdu, 37);
            str = status ? "Login failed" : "OK";
        }
        cmd = iwk_cmd_complete(u, itt, TRUE, status, str);
        role = IWK_ROLE_RSP;
    }
    iwk_link_message(u, tvb, cmd, role);
}

static void call_iscsi(tvbuff_t *pdu, packet_info *pinfo, proto_tree *tree) {
    guint16 can_desegment = pinfo->can_desegment, saved = pinfo->saved_can_desegment;
    port_type ptype = pinfo->ptype;
    pinfo->ptype = PT_IWARP_MPA; /* iSCSI's conversation is the iWARP one */
    pinfo->can_desegment = 0;    /* one PDU per Send: nothing to reassemble */
    /* iSCSI sets or appends its summary without a separator: keep what the
     * frame's earlier FPDUs put in the Info column. */
    col_append_str(pinfo->cinfo, COL_INFO, " | ");
    col_set_fence(pinfo->cinfo, COL_INFO);
    TRY {
        if (!iscsi_handle || !call_dissector_only(iscsi_handle, pdu, pinfo, tree, NULL))
            call_data_dissector(pdu, pinfo, tree);
    }
    CATCH_NONFATAL_ERRORS { show_exception(pdu, pinfo, tree, EXCEPT_CODE, GET_MESSAGE); }
    ENDTRY;
    pinfo->ptype = ptype;
    pinfo->can_desegment = can_desegment;
    pinfo->saved_can_desegment = saved;
}

void iwk_iser_send(iwk_ulp_ctx *u, tvbuff_t *tvb) {
    guint len = tvb_captured_length(tvb);
    if (len < ISER_HDR_LEN) {
        call_data_dissector(tvb, u->pinfo, u->tree);
        return;
    }
    proto_item *ti = proto_tree_add_item(u->tree, proto_iwk_iser, tvb, 0, ISER_HDR_LEN, ENC_NA);
    proto_tree *t = proto_item_add_subtree(ti, ett_iser);
    u->ulp_item = ti;
    guint8 b0 = tvb_get_guint8(tvb, 0);
    guint8 op = b0 >> 4;
    proto_tree_add_item(t, hf_opcode, tvb, 0, 1, ENC_NA);
    col_set_str(u->pinfo->cinfo, COL_PROTOCOL, "iSER");
    proto_item_append_text(ti, ", %s", val_to_str_const(op, opcode_vals, "Unassigned opcode"));
    switch (op) {
    case ISER_ISCSI_CTRL: {
        proto_tree_add_item(t, hf_wsv, tvb, 0, 1, ENC_NA);
        proto_tree_add_item(t, hf_rsv, tvb, 0, 1, ENC_NA);
        proto_tree_add_item(t, hf_wstag, tvb, 4, 4, ENC_BIG_ENDIAN);
        proto_tree_add_item(t, hf_wbo, tvb, 8, 8, ENC_BIG_ENDIAN);
        proto_tree_add_item(t, hf_rstag, tvb, 16, 4, ENC_BIG_ENDIAN);
        proto_tree_add_item(t, hf_rbo, tvb, 20, 8, ENC_BIG_ENDIAN);
        if (b0 & ISER_WSV)
            proto_item_append_text(ti, ", Write STag 0x%08x", tvb_get_ntohl(tvb, 4));
        if (b0 & ISER_RSV)
            proto_item_append_text(ti, ", Read STag 0x%08x", tvb_get_ntohl(tvb, 16));
        if ((b0 & 0x03) || tvb_get_ntoh24(tvb, 1))
            expert_add_info(u->pinfo, ti, &ei_rsvd);
        tvbuff_t *pdu = tvb_new_subset_remaining(tvb, ISER_HDR_LEN);
        if (tvb_captured_length(pdu) >= ISCSI_BHS_LEN) {
            if (u->first_pass)
                track(u, tvb, pdu, b0);
            else
                iwk_link_message(u, tvb, NULL, 0);
            call_iscsi(pdu, u->pinfo, u->tree);
        } else {
            call_data_dissector(pdu, u->pinfo, u->tree);
        }
        break;
    }
    case ISER_HELLO:
        proto_tree_add_item(t, hf_maxver, tvb, 1, 1, ENC_NA);
        proto_tree_add_item(t, hf_minver, tvb, 1, 1, ENC_NA);
        proto_tree_add_item(t, hf_ird, tvb, 2, 2, ENC_BIG_ENDIAN);
        col_append_sep_str(u->pinfo->cinfo, COL_INFO, " | ", "iSER Hello");
        break;
    case ISER_HELLO_REPLY:
        proto_tree_add_item(t, hf_rej, tvb, 0, 1, ENC_NA);
        proto_tree_add_item(t, hf_maxver, tvb, 1, 1, ENC_NA);
        proto_tree_add_item(t, hf_curver, tvb, 1, 1, ENC_NA);
        proto_tree_add_item(t, hf_ord, tvb, 2, 2, ENC_BIG_ENDIAN);
        col_append_sep_str(u->pinfo->cinfo, COL_INFO, " | ", "iSER HelloReply");
        break;
    default:
        call_data_dissector(tvb_new_subset_remaining(tvb, ISER_HDR_LEN), u->pinfo, u->tree);
        break;
    }
}

/* Linux iSER CM private data (ib_iser's struct iser_cm_hdr in the Request,
 * isert's in the Reply): flags, then three reserved octets. Taken as iSER
 * when the reserved octets and the undefined flag bits are zero. */
gboolean iwk_iser_pd(tvbuff_t *tvb, guint off, guint len, proto_tree *tree, gboolean request) {
    if (len != 4 || (tvb_get_guint8(tvb, off) & 0x3f) || tvb_get_ntoh24(tvb, off + 1))
        return FALSE;
    proto_item *ti = proto_tree_add_item(tree, hf_cm, tvb, off, 4, ENC_NA);
    proto_item_append_text(ti, request ? " (initiator)" : " (target)");
    proto_tree *t = proto_item_add_subtree(ti, ett_cm);
    proto_tree_add_item(t, hf_cm_zbva, tvb, off, 1, ENC_NA);
    proto_tree_add_item(t, hf_cm_inv, tvb, off, 1, ENC_NA);
    return TRUE;
}

void proto_register_iwk_iser(void) {
    static hf_register_info hf[] = {
        {&hf_opcode,
         {"Opcode", "iwk_iser.opcode", FT_UINT8, BASE_HEX, VALS(opcode_vals), 0xF0, "RFC 7145 §9.1",
          HFILL}},
        {&hf_wsv, {"Write STag Valid", "iwk_iser.wsv", FT_BOOLEAN, 8, NULL, ISER_WSV, NULL, HFILL}},
        {&hf_rsv, {"Read STag Valid", "iwk_iser.rsv", FT_BOOLEAN, 8, NULL, ISER_RSV, NULL, HFILL}},
        {&hf_wstag,
         {"Write STag", "iwk_iser.write_stag", FT_UINT32, BASE_HEX, NULL, 0,
          "Data Source STag of the target's RDMA Reads (§9.5.1)", HFILL}},
        {&hf_wbo,
         {"Write Base Offset", "iwk_iser.write_bo", FT_UINT64, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_rstag,
         {"Read STag", "iwk_iser.read_stag", FT_UINT32, BASE_HEX, NULL, 0,
          "Data Sink STag of the target's RDMA Writes (§9.5.2)", HFILL}},
        {&hf_rbo,
         {"Read Base Offset", "iwk_iser.read_bo", FT_UINT64, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_maxver, {"MaxVer", "iwk_iser.maxver", FT_UINT8, BASE_DEC, NULL, 0xF0, NULL, HFILL}},
        {&hf_minver, {"MinVer", "iwk_iser.minver", FT_UINT8, BASE_DEC, NULL, 0x0F, NULL, HFILL}},
        {&hf_curver, {"CurVer", "iwk_iser.curver", FT_UINT8, BASE_DEC, NULL, 0x0F, NULL, HFILL}},
        {&hf_ird, {"iSER-IRD", "iwk_iser.ird", FT_UINT16, BASE_DEC, NULL, 0, NULL, HFILL}},
        {&hf_ord, {"iSER-ORD", "iwk_iser.ord", FT_UINT16, BASE_DEC, NULL, 0, NULL, HFILL}},
        {&hf_rej, {"Reject", "iwk_iser.rej", FT_BOOLEAN, 8, NULL, 0x01, NULL, HFILL}},
        {&hf_cm,
         {"iSER CM private data", "iwk_iser.cm", FT_NONE, BASE_NONE, NULL, 0,
          "Linux ib_iser / isert struct iser_cm_hdr, in the MPA Request/Reply", HFILL}},
        {&hf_cm_zbva,
         {"Zero-based VA not supported", "iwk_iser.cm.zbva_not_sup", FT_BOOLEAN, 8, NULL, 0x80,
          NULL, HFILL}},
        {&hf_cm_inv,
         {"Send with Invalidate not supported", "iwk_iser.cm.send_inv_not_sup", FT_BOOLEAN, 8, NULL,
          0x40, NULL, HFILL}},
    };
    static gint *ett[] = {&ett_iser, &ett_cm};
    static ei_register_info ei[] = {
        {&ei_rsvd,
         {"iwk_iser.reserved_not_zero", PI_PROTOCOL, PI_WARN,
          "Reserved field not zero (RFC 7145 §9.2: MUST be zero on transmit)", EXPFILL}},
    };
    proto_iwk_iser = proto_register_protocol("iSER: iSCSI Extensions for RDMA, RFC 7145 (iwarpkit)",
                                             "iSER (iWARP)", "iwk_iser");
    proto_register_field_array(proto_iwk_iser, hf, array_length(hf));
    proto_register_subtree_array(ett, array_length(ett));
    expert_register_field_array(expert_register_protocol(proto_iwk_iser), ei, array_length(ei));
}

void proto_reg_handoff_iwk_iser(void) { iscsi_handle = find_dissector("iscsi"); }
