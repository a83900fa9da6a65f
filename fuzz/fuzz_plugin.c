/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The Wireshark plugin (the sources in dissector/) under libwireshark's
 * epan, fed a fake TCP connection (and SCTP association) built from the
 * input.
 *
 * epan is set up and driven by fuzz_epan.c, as tshark -2 does (two passes,
 * the second with a visible tree; docs/fuzzing.md, "fuzz_plugin and epan").
 * Each input becomes one capture: Ethernet + IPv4 + TCP frames of one
 * connection (optionally after a three-way handshake), a connection of its
 * own. FUZZ_PLUGIN_FRESH=1 renews the epan session for every input, for an
 * exactly isolated replay; FUZZ_PLUGIN_PCAP=file writes the capture.
 *
 * Input: [cfg][records...], each record [ctl][len:2][len octets]
 *   cfg bit 0: our dissector on the server port by Decode As (else the TCP
 *     heuristic finds it); bit 1: TCP reassembly; bit 2: iwk_mpa.desegment;
 *     bit 3: no handshake, and iwk_mpa.midstream on; bit 4:
 *     iwk_mpa.midstream_no_crc; bit 5: iwk_mpa.check_crc; bit 6: TCP
 *     out-of-order reassembly; bit 7: TCP tries heuristics first (bits 1-7
 *     are fuzz_epan.h's FZ_EPAN_* preferences).
 *   ctl bit 0: direction (0: client to server); bit 1: retransmission (the
 *     segment starts len octets back); bit 2: a gap of len octets is left
 *     before it (lost segment); bit 3: the record is an SCTP DATA chunk
 *     instead (DDP over SCTP, RFC 5043): bit 4 PPID 17 (Session Control)
 *     else 16 (DDP Segment), bit 5 unordered, bits 6-7 the stream
 *     identifier, bits 1 and 2 a repeated or skipped TSN. len is cut to
 *     8192 and to the input left.
 * Invariants: no crash, sanitizer report, dissector bug or leak in our code.
 * libwireshark itself is not instrumented: only the plugin and libiwarp
 * get coverage. */
#include "fuzz_epan.h"

#define SEG_MAX 8192
#define FRAMES_MAX 256

static void build(fz_capture *c, uint8_t cfg, fuzz_in *in) {
    fz_capture_open(c, cfg & 0x01, !(cfg & 0x08));
    while (in->n && c->n < FRAMES_MAX) {
        uint8_t ctl = fuzz_u8(in);
        size_t len = fuzz_u16(in) % (SEG_MAX + 1);
        if (len > in->n)
            len = in->n;
        int dir = ctl & 1;
        uint32_t seq = c->seq[dir];
        if (ctl & 0x08) {
            /* An SCTP DATA chunk (bits 1 and 2 as for TCP, on the TSN). */
            uint32_t tsn = c->tsn[dir];
            if (ctl & 0x02)
                tsn--; /* the previous TSN again */
            else if (ctl & 0x04)
                tsn++; /* one lost */
            fz_capture_sctp(c, dir, (uint16_t)(ctl >> 6), tsn, ctl & 0x10 ? 17 : 16, ctl & 0x20,
                            in->p, len);
            if (!(ctl & 0x02))
                c->tsn[dir] = tsn + 1;
            in->p += len;
            in->n -= len;
            continue;
        }
        if (ctl & 0x02)
            seq -= (uint32_t)len; /* retransmission, possibly with new contents */
        else if (ctl & 0x04)
            seq = c->seq[dir] += (uint32_t)len; /* the segment before was lost */
        fz_capture_frame(c, dir, 0x18, seq, in->p, len);
        if (!(ctl & 0x02))
            c->seq[dir] = seq + (uint32_t)len;
        in->p += len;
        in->n -= len;
    }
}

/* Format every label of the tree: the plugin's field values go through
 * their hf types and value strings here. */
static void walk(proto_node *node, gpointer data) {
    size_t *ours = data;
    field_info *fi = PNODE_FINFO(node);
    if (fi) {
        char label[ITEM_LABEL_LENGTH];
        proto_item_fill_label(fi, label);
        if (fi->hfinfo && strncmp(fi->hfinfo->abbrev, "iwk_", 4) == 0)
            (*ours)++;
    }
    proto_tree_children_foreach(node, walk, data);
}

static void on_frame(size_t frame, proto_tree *tree, void *user) {
    (void)frame;
    proto_tree_children_foreach(tree, walk, user);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz_epan_init();
    fuzz_in in = {data, size};
    uint8_t cfg = fuzz_u8(&in);
    fz_epan_prefs(cfg & ~0x01u);
    fz_capture cap;
    build(&cap, cfg, &in);
    size_t ours = 0; /* our items in the second pass (FUZZ_PLUGIN_VERBOSE prints it) */
    fz_epan_dissect(&cap, on_frame, &ours);
    if (getenv("FUZZ_PLUGIN_VERBOSE"))
        fprintf(stderr, "fuzz_plugin: %zu frames, %zu iwk_* items\n", cap.n, ours);
    fz_capture_free(&cap);
    return 0;
}
