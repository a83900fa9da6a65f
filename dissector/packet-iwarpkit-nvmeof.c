/* SPDX-License-Identifier: GPL-2.0-or-later */
/* packet-iwarpkit-nvmeof.c
 * NVMe over Fabrics, RDMA transport, over iWARP. Part of the iwarpkit
 * Wireshark plugin.
 *
 * Wireshark 4.0 decodes NVMe/RDMA only on InfiniBand (nvme-rdma hangs off
 * the infiniband.payload heuristics and finds its queue through an
 * InfiniBand CM conversation), and its NVMe command decoders are not
 * exported to plugins, so the capsules are decoded here:
 *   - the RDMA_CM_REQUEST / RDMA_CM_ACCEPT private data (NVMe over Fabrics
 *     1.1 §7.3.1; on iWARP it travels in the MPA Request/Reply), which
 *     names the queue (QID) of the connection;
 *   - command capsules from the host: the Submission Queue Entry (NVMe Base
 *     2.0 §4.2) with its SGL Descriptor 1 (Keyed SGL Data Block: address,
 *     length, key = the STag the target's RDMA Writes/Reads use; or an
 *     in-capsule Data Block), the Fabrics commands (Connect with its data,
 *     Property Get/Set, Disconnect; Fabrics 1.1 §3) and the common admin
 *     and I/O commands' fields, and any in-capsule data;
 *   - response capsules: the Completion Queue Entry (Base 2.0 §4.6).
 * Each command is a storage command keyed by its CID on the connection
 * (one queue per connection), linked through its keyed SGL's STag to the
 * RDMA Writes (Read data to the host) and RDMA Reads (Write data from the
 * host), and to its CQE.
 *
 * Limitations: SGL segment / last-segment descriptors are shown, not
 * followed; data structures returned by Identify or Get Log Page are shown
 * as data. */
#include <string.h>

#include "packet-iwarpkit-storage.h"

static int proto_iwk_nvmeof = -1;
static int hf_cm_recfmt = -1;
static int hf_cm_qid = -1;
static int hf_cm_hrqsize = -1;
static int hf_cm_hsqsize = -1;
static int hf_cm_cntlid = -1;
static int hf_cm_crqsize = -1;
static int hf_cm = -1;
static int hf_sqe = -1;
static int hf_opc = -1;
static int hf_fctype = -1;
static int hf_fuse = -1;
static int hf_psdt = -1;
static int hf_cid = -1;
static int hf_nsid = -1;
static int hf_sgl = -1;
static int hf_sgl_addr = -1;
static int hf_sgl_len = -1;
static int hf_sgl_key = -1;
static int hf_sgl_type = -1;
static int hf_sgl_subtype = -1;
static int hf_cdw = -1;
static int hf_slba = -1;
static int hf_nlb = -1;
static int hf_cns = -1;
static int hf_prop_attrib = -1;
static int hf_prop_offset = -1;
static int hf_prop_value = -1;
static int hf_conn_recfmt = -1;
static int hf_conn_qid = -1;
static int hf_conn_sqsize = -1;
static int hf_conn_kato = -1;
static int hf_conn_hostid = -1;
static int hf_conn_cntlid = -1;
static int hf_conn_subnqn = -1;
static int hf_conn_hostnqn = -1;
static int hf_incapsule = -1;
static int hf_cqe = -1;
static int hf_cqe_dw0 = -1;
static int hf_cqe_dw1 = -1;
static int hf_cqe_sqhd = -1;
static int hf_cqe_sqid = -1;
static int hf_cqe_cid = -1;
static int hf_cqe_status = -1;
static int hf_cqe_sc = -1;
static int hf_cqe_sct = -1;
static int hf_cqe_dnr = -1;
static int hf_qid = -1;
static gint ett_nvme = -1;
static gint ett_sgl = -1;
static gint ett_cm = -1;
static gint ett_status = -1;
static expert_field ei_error = EI_INIT;
static expert_field ei_short = EI_INIT;

#define SQE_LEN 64
#define CQE_LEN 16
#define FABRICS_OPC 0x7f

static const value_string fctype_vals[] = {{0x00, "Property Set"},
                                           {0x01, "Connect"},
                                           {0x04, "Property Get"},
                                           {0x05, "Authentication Send"},
                                           {0x06, "Authentication Receive"},
                                           {0x08, "Disconnect"},
                                           {0, NULL}};

static const value_string admin_ops[] = {{0x00, "Delete I/O Submission Queue"},
                                         {0x01, "Create I/O Submission Queue"},
                                         {0x02, "Get Log Page"},
                                         {0x04, "Delete I/O Completion Queue"},
                                         {0x05, "Create I/O Completion Queue"},
                                         {0x06, "Identify"},
                                         {0x08, "Abort"},
                                         {0x09, "Set Features"},
                                         {0x0a, "Get Features"},
                                         {0x0c, "Asynchronous Event Request"},
                                         {0x0d, "Namespace Management"},
                                         {0x10, "Firmware Commit"},
                                         {0x11, "Firmware Image Download"},
                                         {0x14, "Device Self-test"},
                                         {0x15, "Namespace Attachment"},
                                         {0x18, "Keep Alive"},
                                         {0x19, "Directive Send"},
                                         {0x1a, "Directive Receive"},
                                         {0x80, "Format NVM"},
                                         {0x81, "Security Send"},
                                         {0x82, "Security Receive"},
                                         {0x84, "Sanitize"},
                                         {0x86, "Get LBA Status"},
                                         {FABRICS_OPC, "Fabrics Command"},
                                         {0, NULL}};

static const value_string io_ops[] = {{0x00, "Flush"},
                                      {0x01, "Write"},
                                      {0x02, "Read"},
                                      {0x04, "Write Uncorrectable"},
                                      {0x05, "Compare"},
                                      {0x08, "Write Zeroes"},
                                      {0x09, "Dataset Management"},
                                      {0x0c, "Verify"},
                                      {0x0d, "Reservation Register"},
                                      {0x0e, "Reservation Report"},
                                      {0x11, "Reservation Acquire"},
                                      {0x15, "Reservation Release"},
                                      {0x19, "Copy"},
                                      {FABRICS_OPC, "Fabrics Command"},
                                      {0, NULL}};

static const value_string cns_vals[] = {{0x00, "Namespace"},
                                        {0x01, "Controller"},
                                        {0x02, "Active Namespace ID list"},
                                        {0x03, "Namespace Identification Descriptor list"},
                                        {0, NULL}};

static const value_string sgl_type_vals[] = {{0x0, "Data Block"},
                                             {0x1, "Bit Bucket"},
                                             {0x2, "Segment"},
                                             {0x3, "Last Segment"},
                                             {0x4, "Keyed Data Block"},
                                             {0x5, "Transport Data Block"},
                                             {0, NULL}};

static const value_string psdt_vals[] = {
    {0, "PRPs"}, {1, "SGL, MPTR contiguous"}, {2, "SGL, MPTR SGL"}, {3, "Reserved"}, {0, NULL}};

static const value_string sct_vals[] = {{0, "Generic Command Status"},
                                        {1, "Command Specific Status"},
                                        {2, "Media and Data Integrity Errors"},
                                        {3, "Path Related Status"},
                                        {7, "Vendor Specific"},
                                        {0, NULL}};

/* Generic Command Status values (Base 2.0 §4.6.1.2.1). */
static const value_string generic_sc[] = {{0x00, "Successful Completion"},
                                          {0x01, "Invalid Command Opcode"},
                                          {0x02, "Invalid Field in Command"},
                                          {0x03, "Command ID Conflict"},
                                          {0x04, "Data Transfer Error"},
                                          {0x05, "Commands Aborted due to Power Loss"},
                                          {0x06, "Internal Error"},
                                          {0x07, "Command Abort Requested"},
                                          {0x08, "Command Aborted due to SQ Deletion"},
                                          {0x0b, "Invalid Namespace or Format"},
                                          {0x0d, "Invalid SGL Segment Descriptor"},
                                          {0x0f, "Data SGL Length Invalid"},
                                          {0x11, "SGL Descriptor Type Invalid"},
                                          {0x16, "SGL Offset Invalid"},
                                          {0x80, "LBA Out of Range"},
                                          {0x81, "Capacity Exceeded"},
                                          {0x82, "Namespace Not Ready"},
                                          {0, NULL}};

static const value_string prop_vals[] = {{0x00, "CAP"},  {0x08, "VS"},   {0x14, "CC"},
                                         {0x1c, "CSTS"}, {0x20, "NSSR"}, {0, NULL}};

/* The queue a connection carries: CM private data, else the Connect. */
static guint16 conn_qid(const iwk_stor *st, gboolean *known) {
    *known = st->qid_known;
    return st->qid;
}

static const char *cmd_name(guint8 opc, guint8 fctype, gboolean admin) {
    if (opc == FABRICS_OPC)
        return wmem_strdup_printf(wmem_file_scope(), "Fabrics %s",
                                  val_to_str_const(fctype, fctype_vals, "unknown command"));
    return wmem_strdup_printf(wmem_file_scope(), "NVMe %s",
                              val_to_str_const(opc, admin ? admin_ops : io_ops, "unknown command"));
}

static void add_sgl(proto_tree *tree, tvbuff_t *tvb, guint off, guint32 *key) {
    guint8 id = tvb_get_guint8(tvb, off + 15);
    guint8 type = id >> 4, sub = id & 0x0f;
    proto_item *ti = proto_tree_add_item(tree, hf_sgl, tvb, off, 16, ENC_NA);
    proto_tree *t = proto_item_add_subtree(ti, ett_sgl);
    proto_tree_add_item(t, hf_sgl_addr, tvb, off, 8, ENC_LITTLE_ENDIAN);
    *key = 0;
    if (type == 0x4) {
        /* Keyed SGL Data Block: 3-octet length, 4-octet key (Base 2.0 Figure 123). */
        proto_tree_add_item(t, hf_sgl_len, tvb, off + 8, 3, ENC_LITTLE_ENDIAN);
        proto_tree_add_item(t, hf_sgl_key, tvb, off + 11, 4, ENC_LITTLE_ENDIAN);
        *key = tvb_get_letohl(tvb, off + 11);
        proto_item_append_text(
            ti, ": Keyed Data Block, %u octets at 0x%" G_GINT64_MODIFIER "x, key (STag) 0x%08x%s",
            tvb_get_letoh24(tvb, off + 8), tvb_get_letoh64(tvb, off), *key,
            sub == 0xF ? ", invalidate" : "");
    } else {
        proto_tree_add_item(t, hf_sgl_len, tvb, off + 8, 4, ENC_LITTLE_ENDIAN);
        proto_item_append_text(
            ti, ": %s%s, %u octets", val_to_str_const(type, sgl_type_vals, "Reserved"),
            type == 0 && sub == 1 ? " (in-capsule, offset)" : "", tvb_get_letohl(tvb, off + 8));
    }
    proto_tree_add_uint(t, hf_sgl_type, tvb, off + 15, 1, id);
    proto_tree_add_uint(t, hf_sgl_subtype, tvb, off + 15, 1, id);
}

static void nqn(proto_tree *t, int hf, tvbuff_t *tvb, guint off) {
    proto_tree_add_item(t, hf, tvb, off, 256, ENC_ASCII | ENC_NA);
}

/* Command capsule: SQE, then in-capsule data. */
static void dissect_cmd(iwk_ulp_ctx *u, tvbuff_t *tvb) {
    packet_info *pinfo = u->pinfo;
    guint len = tvb_captured_length(tvb);
    proto_item *ti = proto_tree_add_item(u->tree, proto_iwk_nvmeof, tvb, 0, -1, ENC_NA);
    proto_tree *root = proto_item_add_subtree(ti, ett_nvme);
    u->ulp_item = ti;
    if (len < SQE_LEN) {
        expert_add_info(pinfo, ti, &ei_short);
        return;
    }
    gboolean qknown;
    guint16 qid = conn_qid(u->st, &qknown);
    guint8 opc = tvb_get_guint8(tvb, 0);
    guint8 fctype = tvb_get_guint8(tvb, 4);
    guint16 cid = tvb_get_letohs(tvb, 2);
    gboolean admin = qknown ? qid == 0 : TRUE;
    const char *name = cmd_name(opc, fctype, admin);
    proto_item *si = proto_tree_add_item(root, hf_sqe, tvb, 0, SQE_LEN, ENC_NA);
    proto_tree *t = proto_item_add_subtree(si, ett_nvme);
    proto_item_append_text(ti, ", Command capsule: %s, CID 0x%04x", name, cid);
    if (qknown) {
        proto_item *qi = proto_tree_add_uint(root, hf_qid, tvb, 0, 0, qid);
        proto_item_set_generated(qi);
    }
    if (opc == FABRICS_OPC) {
        proto_tree_add_item(t, hf_opc, tvb, 0, 1, ENC_NA);
        proto_tree_add_item(t, hf_psdt, tvb, 1, 1, ENC_NA);
        proto_tree_add_item(t, hf_cid, tvb, 2, 2, ENC_LITTLE_ENDIAN);
        proto_tree_add_item(t, hf_fctype, tvb, 4, 1, ENC_NA);
    } else {
        proto_tree_add_uint_format_value(
            t, hf_opc, tvb, 0, 1, opc, "%s (0x%02x)",
            val_to_str_const(opc, admin ? admin_ops : io_ops, "unknown"), opc);
        proto_tree_add_item(t, hf_fuse, tvb, 1, 1, ENC_NA);
        proto_tree_add_item(t, hf_psdt, tvb, 1, 1, ENC_NA);
        proto_tree_add_item(t, hf_cid, tvb, 2, 2, ENC_LITTLE_ENDIAN);
        proto_tree_add_item(t, hf_nsid, tvb, 4, 4, ENC_LITTLE_ENDIAN);
    }
    guint32 key = 0;
    add_sgl(t, tvb, 24, &key);
    guint32 cdw10 = tvb_get_letohl(tvb, 40), cdw11 = tvb_get_letohl(tvb, 44);
    if (opc == FABRICS_OPC) {
        switch (fctype) {
        case 0x01: /* Connect (Fabrics 1.1 §3.3) */
            proto_tree_add_item(t, hf_conn_recfmt, tvb, 40, 2, ENC_LITTLE_ENDIAN);
            proto_tree_add_item(t, hf_conn_qid, tvb, 42, 2, ENC_LITTLE_ENDIAN);
            proto_tree_add_item(t, hf_conn_sqsize, tvb, 44, 2, ENC_LITTLE_ENDIAN);
            proto_tree_add_item(t, hf_conn_kato, tvb, 52, 4, ENC_LITTLE_ENDIAN);
            proto_item_append_text(ti, ", QID %u", cdw10 >> 16);
            if (u->first_pass && !u->st->qid_known) {
                u->st->qid = (guint16)(cdw10 >> 16);
                u->st->qid_known = TRUE;
            }
            break;
        case 0x00: /* Property Set */
        case 0x04: /* Property Get */
            proto_tree_add_item(t, hf_prop_attrib, tvb, 40, 1, ENC_NA);
            proto_tree_add_item(t, hf_prop_offset, tvb, 44, 4, ENC_LITTLE_ENDIAN);
            if (fctype == 0x00)
                proto_tree_add_item(t, hf_prop_value, tvb, 48, 8, ENC_LITTLE_ENDIAN);
            proto_item_append_text(ti, ", %s", val_to_str_const(cdw11, prop_vals, "property"));
            break;
        default:
            break;
        }
    } else if (!admin &&
               (opc == 0x01 || opc == 0x02 || opc == 0x05 || opc == 0x08 || opc == 0x0c)) {
        proto_tree_add_item(t, hf_slba, tvb, 40, 8, ENC_LITTLE_ENDIAN);
        proto_tree_add_uint(t, hf_nlb, tvb, 48, 2, (tvb_get_letohs(tvb, 48) + 1u));
        proto_item_append_text(ti, ", NSID %u, LBA %" G_GINT64_MODIFIER "u, %u blocks",
                               tvb_get_letohl(tvb, 4), tvb_get_letoh64(tvb, 40),
                               tvb_get_letohs(tvb, 48) + 1u);
    } else if (admin && opc == 0x06) {
        proto_tree_add_item(t, hf_cns, tvb, 40, 1, ENC_NA);
        proto_item_append_text(ti, ", CNS %s", val_to_str_const(cdw10 & 0xff, cns_vals, "?"));
    } else {
        for (guint i = 0; i < 6; i++)
            proto_tree_add_item(t, hf_cdw, tvb, 40 + 4 * i, 4, ENC_LITTLE_ENDIAN);
    }
    if (len > SQE_LEN) {
        proto_item *di = proto_tree_add_item(root, hf_incapsule, tvb, SQE_LEN, -1, ENC_NA);
        if (opc == FABRICS_OPC && fctype == 0x01 && len >= SQE_LEN + 1024) {
            /* Connect data (Fabrics 1.1 Figure 20). */
            proto_tree *dt = proto_item_add_subtree(di, ett_nvme);
            proto_tree_add_item(dt, hf_conn_hostid, tvb, SQE_LEN, 16, ENC_NA);
            proto_tree_add_item(dt, hf_conn_cntlid, tvb, SQE_LEN + 16, 2, ENC_LITTLE_ENDIAN);
            nqn(dt, hf_conn_subnqn, tvb, SQE_LEN + 256);
            nqn(dt, hf_conn_hostnqn, tvb, SQE_LEN + 512);
        }
    }
    col_set_str(pinfo->cinfo, COL_PROTOCOL, "NVMe/RDMA");
    col_append_sep_fstr(pinfo->cinfo, COL_INFO, " | ", "%s CID 0x%04x", name, cid);

    iwk_cmd *cmd = NULL;
    if (u->first_pass) {
        cmd = iwk_cmd_start(u, cid, name,
                            qknown ? wmem_strdup_printf(pinfo->pool, "QID %u CID 0x%04x", qid, cid)
                                   : wmem_strdup_printf(pinfo->pool, "CID 0x%04x", cid));
        if (key)
            iwk_cmd_stag(u, cmd, key);
    }
    iwk_link_message(u, tvb, cmd, IWK_ROLE_CMD);
}

/* Response capsule: the CQE. */
static void dissect_rsp(iwk_ulp_ctx *u, tvbuff_t *tvb) {
    packet_info *pinfo = u->pinfo;
    proto_item *ti = proto_tree_add_item(u->tree, proto_iwk_nvmeof, tvb, 0, -1, ENC_NA);
    proto_tree *root = proto_item_add_subtree(ti, ett_nvme);
    u->ulp_item = ti;
    if (tvb_captured_length(tvb) < CQE_LEN) {
        expert_add_info(pinfo, ti, &ei_short);
        return;
    }
    proto_item *ci = proto_tree_add_item(root, hf_cqe, tvb, 0, CQE_LEN, ENC_NA);
    proto_tree *t = proto_item_add_subtree(ci, ett_nvme);
    proto_tree_add_item(t, hf_cqe_dw0, tvb, 0, 4, ENC_LITTLE_ENDIAN);
    proto_tree_add_item(t, hf_cqe_dw1, tvb, 4, 4, ENC_LITTLE_ENDIAN);
    proto_tree_add_item(t, hf_cqe_sqhd, tvb, 8, 2, ENC_LITTLE_ENDIAN);
    proto_tree_add_item(t, hf_cqe_sqid, tvb, 10, 2, ENC_LITTLE_ENDIAN);
    proto_tree_add_item(t, hf_cqe_cid, tvb, 12, 2, ENC_LITTLE_ENDIAN);
    proto_item *sti = proto_tree_add_item(t, hf_cqe_status, tvb, 14, 2, ENC_LITTLE_ENDIAN);
    proto_tree *st = proto_item_add_subtree(sti, ett_status);
    proto_tree_add_item(st, hf_cqe_sc, tvb, 14, 2, ENC_LITTLE_ENDIAN);
    proto_tree_add_item(st, hf_cqe_sct, tvb, 14, 2, ENC_LITTLE_ENDIAN);
    proto_tree_add_item(st, hf_cqe_dnr, tvb, 14, 2, ENC_LITTLE_ENDIAN);
    guint16 cid = tvb_get_letohs(tvb, 12);
    guint16 status = (guint16)(tvb_get_letohs(tvb, 14) >> 1);
    guint8 sc = status & 0xff, sct = (status >> 8) & 0x7;
    const char *str = sct == 0 ? val_to_str_const(sc, generic_sc, "Generic status")
                               : val_to_str_const(sct, sct_vals, "Reserved status type");
    proto_item_append_text(ti, ", Response capsule: CID 0x%04x, %s", cid, str);
    if (status & 0x7ff)
        expert_add_info_format(pinfo, sti, &ei_error, "NVMe command failed: %s (SCT %u, SC 0x%02x)",
                               str, sct, sc);
    col_set_str(pinfo->cinfo, COL_PROTOCOL, "NVMe/RDMA");
    col_append_sep_fstr(pinfo->cinfo, COL_INFO, " | ", "Completion CID 0x%04x %s", cid, str);
    iwk_cmd *cmd = NULL;
    if (u->first_pass)
        cmd = iwk_cmd_complete(u, cid, TRUE, status & 0x7ff, str);
    iwk_link_message(u, tvb, cmd, IWK_ROLE_RSP);
    if (tvb_captured_length(tvb) > CQE_LEN)
        call_data_dissector(tvb_new_subset_remaining(tvb, CQE_LEN), pinfo, u->tree);
}

void iwk_nvmeof_send(iwk_ulp_ctx *u, tvbuff_t *tvb) {
    if (u->from_initiator)
        dissect_cmd(u, tvb);
    else
        dissect_rsp(u, tvb);
}

/* RDMA_CM_REQUEST (host, 32 octets: RECFMT 0, QID, HRQSIZE, HSQSIZE,
 * CNTLID, reserved) and RDMA_CM_ACCEPT (target: RECFMT 0, CRQSIZE,
 * reserved), little endian, reserved octets zero (Fabrics 1.1 §7.3.1). */
gboolean iwk_nvmeof_pd(tvbuff_t *tvb, guint off, guint len, proto_tree *tree, gboolean request,
                       guint16 *qid) {
    if (len != 32 || tvb_get_letohs(tvb, off) != 0)
        return FALSE;
    guint rsvd_from = request ? 10 : 4;
    for (guint i = rsvd_from; i < 32; i++)
        if (tvb_get_guint8(tvb, off + i))
            return FALSE;
    if (request && tvb_get_letohs(tvb, off + 4) == 0)
        return FALSE;
    proto_item *ti = proto_tree_add_item(tree, hf_cm, tvb, off, 32, ENC_NA);
    proto_tree *t = proto_item_add_subtree(ti, ett_cm);
    proto_tree_add_item(t, hf_cm_recfmt, tvb, off, 2, ENC_LITTLE_ENDIAN);
    if (request) {
        proto_tree_add_item(t, hf_cm_qid, tvb, off + 2, 2, ENC_LITTLE_ENDIAN);
        proto_tree_add_item(t, hf_cm_hrqsize, tvb, off + 4, 2, ENC_LITTLE_ENDIAN);
        proto_tree_add_item(t, hf_cm_hsqsize, tvb, off + 6, 2, ENC_LITTLE_ENDIAN);
        proto_tree_add_item(t, hf_cm_cntlid, tvb, off + 8, 2, ENC_LITTLE_ENDIAN);
        *qid = tvb_get_letohs(tvb, off + 2);
        proto_item_append_text(ti, ": RDMA_CM_REQUEST, QID %u (%s)", *qid,
                               *qid ? "I/O queue" : "admin queue");
    } else {
        proto_tree_add_item(t, hf_cm_crqsize, tvb, off + 2, 2, ENC_LITTLE_ENDIAN);
        proto_item_append_text(ti, ": RDMA_CM_ACCEPT, CRQSIZE %u", tvb_get_letohs(tvb, off + 2));
    }
    return TRUE;
}

void proto_register_iwk_nvmeof(void) {
    static hf_register_info hf[] = {
        {&hf_cm,
         {"NVMe/RDMA CM private data", "iwk_nvmeof.cm", FT_NONE, BASE_NONE, NULL, 0,
          "NVMe over Fabrics 1.1 §7.3.1, in the MPA Request/Reply", HFILL}},
        {&hf_cm_recfmt,
         {"RECFMT", "iwk_nvmeof.cm.recfmt", FT_UINT16, BASE_DEC, NULL, 0, NULL, HFILL}},
        {&hf_cm_qid, {"QID", "iwk_nvmeof.cm.qid", FT_UINT16, BASE_DEC, NULL, 0, NULL, HFILL}},
        {&hf_cm_hrqsize,
         {"HRQSIZE", "iwk_nvmeof.cm.hrqsize", FT_UINT16, BASE_DEC, NULL, 0, NULL, HFILL}},
        {&hf_cm_hsqsize,
         {"HSQSIZE", "iwk_nvmeof.cm.hsqsize", FT_UINT16, BASE_DEC, NULL, 0, "0's based", HFILL}},
        {&hf_cm_cntlid,
         {"CNTLID", "iwk_nvmeof.cm.cntlid", FT_UINT16, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_cm_crqsize,
         {"CRQSIZE", "iwk_nvmeof.cm.crqsize", FT_UINT16, BASE_DEC, NULL, 0, NULL, HFILL}},
        {&hf_sqe,
         {"Submission Queue Entry", "iwk_nvmeof.sqe", FT_NONE, BASE_NONE, NULL, 0, NULL, HFILL}},
        {&hf_opc, {"Opcode", "iwk_nvmeof.opc", FT_UINT8, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_fctype,
         {"Fabrics Command Type", "iwk_nvmeof.fctype", FT_UINT8, BASE_HEX, VALS(fctype_vals), 0,
          NULL, HFILL}},
        {&hf_fuse,
         {"Fused Operation", "iwk_nvmeof.fuse", FT_UINT8, BASE_DEC, NULL, 0x03, NULL, HFILL}},
        {&hf_psdt,
         {"PRP or SGL", "iwk_nvmeof.psdt", FT_UINT8, BASE_DEC, VALS(psdt_vals), 0xC0, NULL, HFILL}},
        {&hf_cid,
         {"Command Identifier", "iwk_nvmeof.cid", FT_UINT16, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_nsid, {"Namespace ID", "iwk_nvmeof.nsid", FT_UINT32, BASE_DEC, NULL, 0, NULL, HFILL}},
        {&hf_sgl, {"SGL Descriptor 1", "iwk_nvmeof.sgl", FT_NONE, BASE_NONE, NULL, 0, NULL, HFILL}},
        {&hf_sgl_addr,
         {"Address", "iwk_nvmeof.sgl.addr", FT_UINT64, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_sgl_len,
         {"Length", "iwk_nvmeof.sgl.length", FT_UINT32, BASE_DEC, NULL, 0, NULL, HFILL}},
        {&hf_sgl_key,
         {"Key (STag)", "iwk_nvmeof.sgl.key", FT_UINT32, BASE_HEX, NULL, 0,
          "The STag of the host buffer the target's RDMA operations use", HFILL}},
        {&hf_sgl_type,
         {"Descriptor Type", "iwk_nvmeof.sgl.type", FT_UINT8, BASE_HEX, VALS(sgl_type_vals), 0xF0,
          NULL, HFILL}},
        {&hf_sgl_subtype,
         {"Descriptor Sub Type", "iwk_nvmeof.sgl.subtype", FT_UINT8, BASE_HEX, NULL, 0x0F, NULL,
          HFILL}},
        {&hf_cdw, {"Command Dword", "iwk_nvmeof.cdw", FT_UINT32, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_slba, {"Starting LBA", "iwk_nvmeof.slba", FT_UINT64, BASE_DEC, NULL, 0, NULL, HFILL}},
        {&hf_nlb,
         {"Number of Logical Blocks", "iwk_nvmeof.nlb", FT_UINT32, BASE_DEC, NULL, 0,
          "NLB + 1 (the field is 0's based)", HFILL}},
        {&hf_cns, {"CNS", "iwk_nvmeof.cns", FT_UINT8, BASE_HEX, VALS(cns_vals), 0, NULL, HFILL}},
        {&hf_prop_attrib,
         {"Property size", "iwk_nvmeof.prop.attrib", FT_UINT8, BASE_DEC, NULL, 0x07,
          "0: 4 octets, 1: 8 octets", HFILL}},
        {&hf_prop_offset,
         {"Property offset", "iwk_nvmeof.prop.offset", FT_UINT32, BASE_HEX, VALS(prop_vals), 0,
          NULL, HFILL}},
        {&hf_prop_value,
         {"Property value", "iwk_nvmeof.prop.value", FT_UINT64, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_conn_recfmt,
         {"RECFMT", "iwk_nvmeof.connect.recfmt", FT_UINT16, BASE_DEC, NULL, 0, NULL, HFILL}},
        {&hf_conn_qid,
         {"QID", "iwk_nvmeof.connect.qid", FT_UINT16, BASE_DEC, NULL, 0, NULL, HFILL}},
        {&hf_conn_sqsize,
         {"SQSIZE", "iwk_nvmeof.connect.sqsize", FT_UINT16, BASE_DEC, NULL, 0, "0's based", HFILL}},
        {&hf_conn_kato,
         {"Keep Alive Timeout", "iwk_nvmeof.connect.kato", FT_UINT32, BASE_DEC, NULL, 0,
          "milliseconds", HFILL}},
        {&hf_conn_hostid,
         {"Host Identifier", "iwk_nvmeof.connect.hostid", FT_BYTES, BASE_NONE, NULL, 0, NULL,
          HFILL}},
        {&hf_conn_cntlid,
         {"Controller ID", "iwk_nvmeof.connect.cntlid", FT_UINT16, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_conn_subnqn,
         {"Subsystem NQN", "iwk_nvmeof.connect.subnqn", FT_STRINGZPAD, BASE_NONE, NULL, 0, NULL,
          HFILL}},
        {&hf_conn_hostnqn,
         {"Host NQN", "iwk_nvmeof.connect.hostnqn", FT_STRINGZPAD, BASE_NONE, NULL, 0, NULL,
          HFILL}},
        {&hf_incapsule,
         {"In-capsule data", "iwk_nvmeof.incapsule_data", FT_BYTES, BASE_NONE, NULL, 0, NULL,
          HFILL}},
        {&hf_cqe,
         {"Completion Queue Entry", "iwk_nvmeof.cqe", FT_NONE, BASE_NONE, NULL, 0, NULL, HFILL}},
        {&hf_cqe_dw0,
         {"DW0", "iwk_nvmeof.cqe.dw0", FT_UINT32, BASE_HEX, NULL, 0,
          "Command specific (Connect: CNTLID; Property Get: value)", HFILL}},
        {&hf_cqe_dw1, {"DW1", "iwk_nvmeof.cqe.dw1", FT_UINT32, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_cqe_sqhd,
         {"SQ Head Pointer", "iwk_nvmeof.cqe.sqhd", FT_UINT16, BASE_DEC, NULL, 0, NULL, HFILL}},
        {&hf_cqe_sqid,
         {"SQ Identifier", "iwk_nvmeof.cqe.sqid", FT_UINT16, BASE_DEC, NULL, 0, NULL, HFILL}},
        {&hf_cqe_cid,
         {"Command Identifier", "iwk_nvmeof.cqe.cid", FT_UINT16, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_cqe_status,
         {"Status", "iwk_nvmeof.cqe.status", FT_UINT16, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_cqe_sc,
         {"Status Code", "iwk_nvmeof.cqe.sc", FT_UINT16, BASE_HEX, NULL, 0x01FE, NULL, HFILL}},
        {&hf_cqe_sct,
         {"Status Code Type", "iwk_nvmeof.cqe.sct", FT_UINT16, BASE_DEC, VALS(sct_vals), 0x0E00,
          NULL, HFILL}},
        {&hf_cqe_dnr,
         {"Do Not Retry", "iwk_nvmeof.cqe.dnr", FT_BOOLEAN, 16, NULL, 0x8000, NULL, HFILL}},
        {&hf_qid,
         {"Queue (QID)", "iwk_nvmeof.qid", FT_UINT16, BASE_DEC, NULL, 0,
          "From the CM private data or the Connect command of this connection", HFILL}},
    };
    static gint *ett[] = {&ett_nvme, &ett_sgl, &ett_cm, &ett_status};
    static ei_register_info ei[] = {
        {&ei_error,
         {"iwk_nvmeof.status_error", PI_RESPONSE_CODE, PI_NOTE,
          "NVMe command completed with an error status", EXPFILL}},
        {&ei_short,
         {"iwk_nvmeof.short_capsule", PI_MALFORMED, PI_ERROR,
          "Capsule shorter than a Submission/Completion Queue Entry", EXPFILL}},
    };
    proto_iwk_nvmeof = proto_register_protocol("NVMe over Fabrics, RDMA transport (iwarpkit)",
                                               "NVMe/RDMA (iWARP)", "iwk_nvmeof");
    proto_register_field_array(proto_iwk_nvmeof, hf, array_length(hf));
    proto_register_subtree_array(ett, array_length(ett));
    expert_register_field_array(expert_register_protocol(proto_iwk_nvmeof), ei, array_length(ei));
}
