/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Statistics for the iwarpkit plugin: a stats_tree over the "iwk" tap,
 * one tap record per DDP segment. tshark: -z iwk,tree; Wireshark:
 * Statistics > iWARP (iwarpkit).
 *
 * Nodes: segments and payload octets per RDMAP opcode, and per stream
 * (tcp.stream and direction) the same split by opcode, plus the segments an
 * RFC-conformant receiver would answer with a DDP/RDMAP Terminate (exactly
 * those iwk_rdmap.verdict matches) and the FPDUs failing their CRC or
 * marker check (MPA's verdict, iwk_mpa.must_terminate.*). */
#include <epan/stats_tree.h>
#include <epan/to_str.h>

#include "packet-iwarpkit.h"

static int st_segments = -1;
static int st_bytes = -1;
static int st_qps = -1;
static int st_qp_bytes = -1;
static int st_verdicts = -1;
static int st_mpa_verdicts = -1;

static const char *const st_name_segments = "Segments by opcode";
static const char *const st_name_bytes = "Payload octets by opcode";
static const char *const st_name_qps = "Segments by stream (tcp.stream)";
static const char *const st_name_qp_bytes = "Payload octets by stream (tcp.stream)";
static const char *const st_name_verdicts = "Terminate verdicts (iwk_rdmap.verdict)";
static const char *const st_name_mpa_verdicts = "CRC or marker failures (MPA)";

/* Every percentage is of its parent's count in the same unit: segments
 * under segments, octets under octets. Payload octets are the ULP data of
 * Writes, Read Responses and Sends (iwk_tap_info.bytes). */
static void iwk_stats_init(stats_tree *st) {
    st_segments = stats_tree_create_node(st, st_name_segments, 0, STAT_DT_INT, TRUE);
    st_bytes = stats_tree_create_node(st, st_name_bytes, 0, STAT_DT_INT, TRUE);
    st_qps = stats_tree_create_node(st, st_name_qps, 0, STAT_DT_INT, TRUE);
    st_qp_bytes = stats_tree_create_node(st, st_name_qp_bytes, 0, STAT_DT_INT, TRUE);
    st_verdicts = stats_tree_create_node(st, st_name_verdicts, 0, STAT_DT_INT, FALSE);
    st_mpa_verdicts = stats_tree_create_node(st, st_name_mpa_verdicts, 0, STAT_DT_INT, FALSE);
}

static tap_packet_status iwk_stats_packet(stats_tree *st, packet_info *pinfo, epan_dissect_t *edt,
                                          const void *p, tap_flags_t flags) {
    (void)pinfo;
    (void)edt;
    (void)flags;
    const iwk_tap_info *ti = (const iwk_tap_info *)p;
    const char *op = val_to_str_const(ti->opcode, iwk_opcode_vals, "Reserved");

    tick_stat_node(st, st_name_segments, 0, TRUE);
    tick_stat_node(st, op, st_segments, FALSE);

    char *src = address_to_str(NULL, ti->src);
    char *dst = address_to_str(NULL, ti->dst);
    char *qp = g_strdup_printf("tcp.stream %u: %s:%u -> %s:%u", ti->conv_index, src, ti->srcport,
                               dst, ti->dstport);
    wmem_free(NULL, src);
    wmem_free(NULL, dst);
    tick_stat_node(st, st_name_qps, 0, TRUE);
    int qp_id = tick_stat_node(st, qp, st_qps, TRUE);
    tick_stat_node(st, op, qp_id, FALSE);
    if (ti->bytes) {
        increase_stat_node(st, st_name_bytes, 0, TRUE, (int)ti->bytes);
        increase_stat_node(st, op, st_bytes, FALSE, (int)ti->bytes);
        increase_stat_node(st, st_name_qp_bytes, 0, TRUE, (int)ti->bytes);
        int qb_id = increase_stat_node(st, qp, st_qp_bytes, TRUE, (int)ti->bytes);
        increase_stat_node(st, op, qb_id, FALSE, (int)ti->bytes);
    }
    g_free(qp);

    if (ti->verdict)
        tick_stat_node(st, st_name_verdicts, 0, FALSE);
    if (ti->mpa_verdict)
        tick_stat_node(st, st_name_mpa_verdicts, 0, FALSE);
    return TAP_PACKET_REDRAW;
}

static void iwk_stats_register_tree(void) {
    stats_tree_register_plugin("iwk", "iwk", "iWARP (iwarpkit)", 0, iwk_stats_packet,
                               iwk_stats_init, NULL);
}

void iwk_stats_register(void) {
    static tap_plugin plug;
    plug.register_tap_listener = iwk_stats_register_tree;
    tap_register_plugin(&plug);
}

/* ---------------- storage commands ----------------
 * A stats_tree over the "iwk_storage" tap, one record per completed
 * command. tshark: -z iwk_storage,tree; Wireshark: Statistics > iWARP
 * storage (iwarpkit). Per ULP and operation: commands, data octets moved by
 * RDMA, and the command-to-completion latency (average, min, max in the
 * stats_tree columns), in microseconds. */
#include "packet-iwarpkit-storage.h"

static int st_cmds = -1;
static int st_bytes_op = -1;
static int st_lat = -1;
static int st_failed = -1;

static const char *const st_name_cmds = "Commands by ULP and operation";
static const char *const st_name_sbytes = "Data octets moved by RDMA, by operation";
static const char *const st_name_lat = "Latency (us) by operation";
static const char *const st_name_failed = "Commands completed with an error status";

static void storage_stats_init(stats_tree *st) {
    st_cmds = stats_tree_create_node(st, st_name_cmds, 0, STAT_DT_INT, TRUE);
    st_bytes_op = stats_tree_create_node(st, st_name_sbytes, 0, STAT_DT_INT, TRUE);
    st_lat = stats_tree_create_node(st, st_name_lat, 0, STAT_DT_FLOAT, TRUE);
    st_failed = stats_tree_create_node(st, st_name_failed, 0, STAT_DT_INT, TRUE);
}

static tap_packet_status storage_stats_packet(stats_tree *st, packet_info *pinfo,
                                              epan_dissect_t *edt, const void *p,
                                              tap_flags_t flags) {
    (void)pinfo;
    (void)edt;
    (void)flags;
    const iwk_cmd *cmd = (const iwk_cmd *)p;
    const char *ulp = val_to_str_const(cmd->ulp, iwk_ulp_vals, "unknown");
    tick_stat_node(st, st_name_cmds, 0, TRUE);
    int ulp_id = tick_stat_node(st, ulp, st_cmds, TRUE);
    tick_stat_node(st, cmd->op_name, ulp_id, FALSE);
    increase_stat_node(st, st_name_sbytes, 0, TRUE, (int)MIN(cmd->bytes, G_MAXINT));
    increase_stat_node(st, cmd->op_name, st_bytes_op, FALSE, (int)MIN(cmd->bytes, G_MAXINT));
    nstime_t dt;
    nstime_delta(&dt, &cmd->rsp_ts, &cmd->req_ts);
    gfloat us = (gfloat)(nstime_to_sec(&dt) * 1e6);
    avg_stat_node_add_value_float(st, st_name_lat, 0, TRUE, us);
    avg_stat_node_add_value_float(st, cmd->op_name, st_lat, FALSE, us);
    if (cmd->has_status && cmd->status) {
        tick_stat_node(st, st_name_failed, 0, TRUE);
        tick_stat_node(st, cmd->op_name, st_failed, FALSE);
    }
    return TAP_PACKET_REDRAW;
}

static void storage_stats_register_tree(void) {
    stats_tree_register_plugin("iwk_storage", "iwk_storage", "iWARP storage (iwarpkit)", 0,
                               storage_stats_packet, storage_stats_init, NULL);
}

void iwk_storage_stats_register(void) {
    static tap_plugin plug;
    plug.register_tap_listener = storage_stats_register_tree;
    tap_register_plugin(&plug);
}
