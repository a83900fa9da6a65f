/* SPDX-License-Identifier: GPL-2.0-or-later */
/* packet-iwarpkit-smbd.c
 * SMB Direct (MS-SMBD) over iWARP: SMB2 commands as storage commands. Part
 * of the iwarpkit Wireshark plugin.
 *
 * Wireshark's smb_direct and smb2 dissectors decode every message (they
 * hang off the iwarp_ddp_rdmap heuristics the plugin feeds). What the
 * plugin adds, reading only what it needs: each SMB2 request in an SMB
 * Direct Data Message (MS-SMBD 2.2.3) becomes a storage command keyed by
 * its MessageId (MS-SMB2 2.2.1), named by its command, completed by the
 * response with that MessageId (an interim STATUS_PENDING response does not
 * complete it); a READ or WRITE request whose Channel is
 * SMB2_CHANNEL_RDMA_V1 or _V1_INVALIDATE names the STags (Token) of its
 * SMB_DIRECT_BUFFER_DESCRIPTOR_V1 list (MS-SMBD 2.2.3.1), so the server's
 * RDMA Writes (READ) and RDMA Reads (WRITE) link to it.
 *
 * Limitations: an SMB2 message split over several Data Messages
 * (RemainingDataLength > 0) is not tracked. */
#include <string.h>

#include "packet-iwarpkit-storage.h"

#define SMBD_DATA_HDR 24 /* MS-SMBD 2.2.3: header up to the padding */
#define SMB2_HDR 64
#define SMB2_STATUS_PENDING 0x00000103u

static const value_string smb2_cmds[] = {{0x00, "NEGOTIATE"},
                                         {0x01, "SESSION_SETUP"},
                                         {0x02, "LOGOFF"},
                                         {0x03, "TREE_CONNECT"},
                                         {0x04, "TREE_DISCONNECT"},
                                         {0x05, "CREATE"},
                                         {0x06, "CLOSE"},
                                         {0x07, "FLUSH"},
                                         {0x08, "READ"},
                                         {0x09, "WRITE"},
                                         {0x0a, "LOCK"},
                                         {0x0b, "IOCTL"},
                                         {0x0c, "CANCEL"},
                                         {0x0d, "ECHO"},
                                         {0x0e, "QUERY_DIRECTORY"},
                                         {0x0f, "CHANGE_NOTIFY"},
                                         {0x10, "QUERY_INFO"},
                                         {0x11, "SET_INFO"},
                                         {0x12, "OPLOCK_BREAK"},
                                         {0, NULL}};

/* READ and WRITE requests: Channel and the channel info's offset/length
 * (MS-SMB2 2.2.19, 2.2.21), relative to the SMB2 header. */
static void channel_stags(iwk_ulp_ctx *u, iwk_cmd *cmd, tvbuff_t *tvb, guint h, guint end,
                          guint16 command) {
    /* READ: Channel at 36, ReadChannelInfoOffset/Length at 44/46 of the
     * body; WRITE: Channel at 32, WriteChannelInfoOffset/Length at 40/42. */
    guint body = h + SMB2_HDR, at = command == 0x08 ? 36 : 32;
    if (end < body + at + 12)
        return;
    guint32 channel = tvb_get_letohl(tvb, body + at);
    guint16 ci_off = tvb_get_letohs(tvb, body + at + 8);
    guint16 ci_len = tvb_get_letohs(tvb, body + at + 10);
    if (channel != 1 && channel != 2) /* SMB2_CHANNEL_RDMA_V1[_INVALIDATE] */
        return;
    for (guint o = 0; o + 16 <= ci_len && h + ci_off + o + 16 <= end; o += 16)
        iwk_cmd_stag(u, cmd, tvb_get_letohl(tvb, h + ci_off + o + 8));
}

void iwk_smbd_send(iwk_ulp_ctx *u, tvbuff_t *tvb) {
    guint len = tvb_captured_length(tvb);
    if (u->first_pass && len >= SMBD_DATA_HDR) {
        guint32 remaining = tvb_get_letohl(tvb, 8);
        guint32 doff = tvb_get_letohl(tvb, 12), dlen = tvb_get_letohl(tvb, 16);
        guint end = doff <= len && dlen <= len - doff ? doff + dlen : 0;
        iwk_cmd *cmd = NULL;
        int role = 0;
        for (guint h = doff; end && !remaining && h + SMB2_HDR <= end;) {
            if (tvb_get_ntohl(tvb, h) != 0xfe534d42u) /* "\xfeSMB" */
                break;
            guint16 command = tvb_get_letohs(tvb, h + 12);
            guint32 status = tvb_get_letohl(tvb, h + 8);
            guint32 flags = tvb_get_letohl(tvb, h + 16);
            guint32 next = tvb_get_letohl(tvb, h + 20);
            guint64 mid = tvb_get_letoh64(tvb, h + 24);
            iwk_cmd *c = NULL;
            if (!(flags & 1) && u->from_initiator) {
                c = iwk_cmd_start(
                    u, mid,
                    wmem_strdup_printf(wmem_file_scope(), "SMB2 %s",
                                       val_to_str_const(command, smb2_cmds, "?")),
                    wmem_strdup_printf(u->pinfo->pool, "MessageId %" G_GINT64_MODIFIER "u", mid));
                if (command == 0x08 || command == 0x09)
                    channel_stags(u, c, tvb, h, end, command);
                if (!cmd)
                    role = IWK_ROLE_CMD;
            } else if ((flags & 1) && !u->from_initiator && status != SMB2_STATUS_PENDING) {
                c = iwk_cmd_complete(u, mid, TRUE, status, status ? "NTSTATUS error" : "OK");
                if (!cmd)
                    role = IWK_ROLE_RSP;
            }
            if (!cmd)
                cmd = c;
            /* Compound: NextCommand is 8-aligned and moves forward. */
            if (!next || next % 8 || next > end - h)
                break;
            h += next;
        }
        /* A compound shows its first command's links. */
        iwk_link_message(u, tvb, cmd, role);
    } else if (!u->first_pass) {
        iwk_link_message(u, tvb, NULL, 0);
    }
    iwk_rdmap_call_heur(tvb, u->pinfo, u->tree, u->info);
}
