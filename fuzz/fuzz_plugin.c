/* The Wireshark plugin (the sources in dissector/) under libwireshark's
 * epan, fed a fake TCP connection built from the input.
 *
 * How epan is driven (libwireshark-dev 4.0, as Debian 12 ships it; modelled
 * on Wireshark's own fuzzshark):
 *  - the plugin's sources are compiled into this program and
 *    plugin_register() is called before epan_init(..., load_plugins =
 *    FALSE), so epan registers iwk_mpa/iwk_ddp/iwk_rdmap exactly as it does
 *    for the loaded .so, with no plugin directory involved (root ignores
 *    WIRESHARK_PLUGIN_DIR anyway);
 *  - each input becomes one capture: Ethernet + IPv4 + TCP frames of one
 *    connection (optionally after a three-way handshake), run through
 *    epan_dissect_run() the way tshark -2 does: a first pass without a tree
 *    (the plugin computes and stores its per-connection state), then a
 *    second pass with a visible tree whose every label is formatted;
 *  - each capture is a TCP connection of its own: a new client address
 *    per input (ports stay fixed: a port walk would hand streams to
 *    whatever dissector Wireshark registers there, TPM on 2321 for one),
 *    and frame numbers that keep counting, so conversations,
 *    reassembly and the plugin's iwk_conv never meet an earlier input's.
 *    The epan session (epan_new/epan_free, which resets file-scoped memory)
 *    is renewed every SESSION_INPUTS (4096) inputs only: renewing it rereads
 *    Wireshark's name-resolution files (manuf, services), ~50 ms, and
 *    grows the process by a few MB (every 256 inputs ran ASan out of
 *    memory). FUZZ_PLUGIN_FRESH=1 renews it for every input, for an
 *    exactly isolated replay;
 *  - only our heuristic stays enabled on TCP, and the RPC-over-RDMA
 *    dissector on the iWARP ULP list is disabled: other dissectors' own
 *    bugs (docs/fuzzing.md, findings 9 and 10) are not this harness's;
 *  - WIRESHARK_ABORT_ON_DISSECTOR_BUG and _TOO_MANY_ITEMS make a
 *    DISSECTOR_ASSERT or a runaway tree abort instead of becoming an expert
 *    item, so the fuzzer sees them.
 *
 * Input: [cfg][records...], each record [ctl][len:2][len octets]
 *   cfg bit 0: our dissector on the server port by Decode As (else the TCP
 *     heuristic finds it); bit 1: TCP reassembly; bit 2: iwk_mpa.desegment;
 *     bit 3: no handshake, and iwk_mpa.midstream on; bit 4:
 *     iwk_mpa.midstream_no_crc; bit 5: iwk_mpa.check_crc; bit 6: TCP
 *     out-of-order reassembly; bit 7: TCP tries heuristics first.
 *   ctl bit 0: direction (0: client to server); bit 1: retransmission (the
 *     segment starts len octets back); bit 2: a gap of len octets is left
 *     before it (lost segment); bits 3-7 unused. len is cut to 8192 and to
 *     the input left.
 * Invariants: no crash, sanitizer report, dissector bug or leak in our code.
 * libwireshark itself is not instrumented: only the plugin and libiwarp
 * get coverage. */
#include <epan/epan.h>
#include <epan/epan_dissect.h>
#include <epan/frame_data.h>
#include <epan/packet.h>
#include <epan/prefs.h>
#include <epan/disabled_protos.h> /* after epan.h: it needs ws_symbol_export.h */
#include <epan/proto.h>
#include <wiretap/wtap.h>
#include <wsutil/privileges.h>

#include "fuzz.h"

/* plugin.c */
void plugin_register(void);

#define PORT_DECODE_AS 19000 /* bound to iwk_mpa by Decode As */
#define PORT_HEUR 19001      /* left to the TCP heuristic */
#define SEG_MAX 8192
#define FRAMES_MAX 256
#define HDR_LEN (14 + 20 + 20)
#define SESSION_INPUTS 4096

/* epan asks the application for frame time stamps through this: frames
 * first..first + n - 1 are the current input's. */
struct packet_provider_data {
    frame_data *frames;
    size_t n;
    guint32 first;
};

static const nstime_t *prov_frame_ts(struct packet_provider_data *prov, guint32 num) {
    return num >= prov->first && num - prov->first < prov->n
               ? &prov->frames[num - prov->first].abs_ts
               : NULL;
}

static const struct packet_provider_funcs prov_funcs = {prov_frame_ts, NULL, NULL, NULL};

static bool inited;
static struct packet_provider_data prov;
static epan_t *session;
static unsigned session_inputs;
static guint32 next_frame = 1; /* frame numbers keep counting within a session */
static uint32_t next_client;   /* client address 10.128.0.0 + n */
static uint8_t cur_cfg = 0xFF; /* preferences as last applied */

static void set_pref(const char *name, bool on) {
    char buf[128];
    char *err = NULL;
    snprintf(buf, sizeof buf, "%s:%s", name, on ? "TRUE" : "FALSE");
    FUZZ_CHECK(prefs_set_pref(buf, &err) == PREFS_SET_OK);
    g_free(err);
}

/* Only our heuristic may claim the fake connection: the fuzzer is for our
 * plugin, and other TCP heuristics (Ceph's, for one, whose "Frame visited,
 * but no saved state" DISSECTOR_ASSERT the first campaign hit within
 * seconds) would otherwise take the stream and abort on their own bugs. */
static void only_our_heuristic(const gchar *table, struct heur_dtbl_entry *e, gpointer user) {
    (void)table;
    (void)user;
    e->enabled = strcmp(e->short_name, "iwk_mpa_tcp") == 0;
}

static void init_epan(void) {
    /* Dissector bugs abort instead of becoming expert items. */
    setenv("WIRESHARK_ABORT_ON_DISSECTOR_BUG", "1", 1);
    setenv("WIRESHARK_ABORT_ON_TOO_MANY_ITEMS", "1", 1);
    init_process_policies(); /* wsutil asserts it ran first */
    ws_log_set_level(LOG_LEVEL_CRITICAL);
    plugin_register(); /* before epan_init, which registers every plugin's protocols */
    wtap_init(FALSE);
    FUZZ_CHECK(epan_init(NULL, NULL, FALSE));
    /* As tshark does: preferences (and what they initialise, such as the
     * MaxMind state the IP dissector uses), then our overrides. */
    epan_load_settings();
    set_pref("ip.use_geoip", false);
    /* Our plugin, not the built-in iwarp_mpa, gets every stream. */
    proto_disable_proto_by_name("iwarp_mpa");
    proto_disable_proto_by_name("iwarp_ddp_rdmap");
    /* Wireshark 4.0's RPC-over-RDMA heuristic on the iWARP list hits a
     * DISSECTOR_ASSERT ("tvb && tvb->initialized") on some Write streams,
     * with the built-in iWARP dissectors too (corpus input
     * wireshark_rpcordma_dissector_bug; docs/fuzzing.md): not ours to fuzz. */
    proto_disable_proto_by_name("rpcordma");
    heur_dissector_table_foreach("tcp", only_our_heuristic, NULL);
    dissector_handle_t h = find_dissector("iwk_mpa");
    FUZZ_CHECK(h != NULL);
    dissector_add_uint("tcp.port", PORT_DECODE_AS, h);
    set_pref("iwk_mpa.yield_to_builtin", false);
    inited = true;
}

static void apply_cfg(uint8_t cfg) {
    if (cfg == cur_cfg) return;
    set_pref("tcp.desegment_tcp_streams", cfg & 0x02);
    set_pref("iwk_mpa.desegment", cfg & 0x04);
    set_pref("iwk_mpa.midstream", cfg & 0x08);
    set_pref("iwk_mpa.midstream_no_crc", cfg & 0x10);
    set_pref("iwk_mpa.check_crc", cfg & 0x20);
    set_pref("tcp.reassemble_out_of_order", cfg & 0x40);
    set_pref("tcp.try_heuristic_first", cfg & 0x80);
    prefs_apply_all();
    cur_cfg = cfg;
}

/* The capture being built: frames of one TCP connection. */
typedef struct {
    uint8_t *pkt[FRAMES_MAX];
    size_t len[FRAMES_MAX];
    size_t n;
    uint32_t seq[2];  /* next sequence number per direction */
    uint16_t port[2]; /* client, server */
    uint32_t client;  /* the client's IPv4 address (the server is 10.0.0.2) */
    uint16_t ip_id;
} capture;

static void put16(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static void put32(uint8_t *p, uint32_t v) {
    put16(p, v >> 16);
    put16(p + 2, v);
}

/* One Ethernet + IPv4 + TCP frame from direction dir. Checksums are left
 * zero: Wireshark does not verify them by default. */
static void add_frame(capture *c, int dir, uint8_t flags, uint32_t seq, const uint8_t *pay,
                      size_t n) {
    if (c->n == FRAMES_MAX) return;
    uint8_t *f = calloc(1, HDR_LEN + n);
    FUZZ_CHECK(f != NULL);
    static const uint8_t mac[2][6] = {{2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 2}};
    memcpy(f, mac[!dir], 6);
    memcpy(f + 6, mac[dir], 6);
    put16(f + 12, 0x0800);
    uint8_t *ip = f + 14;
    ip[0] = 0x45;
    put16(ip + 2, (uint32_t)(20 + 20 + n));
    put16(ip + 4, c->ip_id++);
    ip[8] = 64;
    ip[9] = 6;
    uint32_t addr[2] = {c->client, 0x0A000002u};
    put32(ip + 12, addr[dir]);
    put32(ip + 16, addr[!dir]);
    uint8_t *tcp = ip + 20;
    put16(tcp, c->port[dir]);
    put16(tcp + 2, c->port[!dir]);
    put32(tcp + 4, seq);
    put32(tcp + 8, (flags & 0x02) && !dir ? 0 : c->seq[!dir]);
    tcp[12] = 5 << 4;
    tcp[13] = flags;
    put16(tcp + 14, 65535);
    if (n) memcpy(tcp + 20, pay, n);
    c->pkt[c->n] = f;
    c->len[c->n++] = HDR_LEN + n;
}

static void build(capture *c, uint8_t cfg, fuzz_in *in) {
    c->port[0] = 40000;
    c->client = 0x0A800000u + next_client++ % 0x7FFFFF; /* a connection of its own */
    c->port[1] = (cfg & 0x01) ? PORT_DECODE_AS : PORT_HEUR;
    c->seq[0] = 0x10000000;
    c->seq[1] = 0xFFFFF000; /* wraps during the capture */
    if (!(cfg & 0x08)) {
        add_frame(c, 0, 0x02, c->seq[0]++, NULL, 0); /* SYN */
        add_frame(c, 1, 0x12, c->seq[1]++, NULL, 0); /* SYN, ACK */
        add_frame(c, 0, 0x10, c->seq[0], NULL, 0);   /* ACK */
    }
    while (in->n && c->n < FRAMES_MAX) {
        uint8_t ctl = fuzz_u8(in);
        size_t len = fuzz_u16(in) % (SEG_MAX + 1);
        if (len > in->n) len = in->n;
        int dir = ctl & 1;
        uint32_t seq = c->seq[dir];
        if (ctl & 0x02)
            seq -= (uint32_t)len; /* retransmission, possibly with new contents */
        else if (ctl & 0x04)
            seq = c->seq[dir] += (uint32_t)len; /* the segment before was lost */
        add_frame(c, dir, 0x18, seq, in->p, len);
        if (!(ctl & 0x02)) c->seq[dir] = seq + (uint32_t)len;
        in->p += len;
        in->n -= len;
    }
}

/* FUZZ_PLUGIN_PCAP=file: the capture an input builds, for tshark. */
static void write_pcap(const capture *c, const char *path) {
    FILE *f = fopen(path, "wb");
    if (!f) return;
    const uint32_t gh[6] = {0xa1b2c3d4u, 2 | 4u << 16, 0, 0, 65535, 1}; /* host order, Ethernet */
    fwrite(gh, sizeof gh, 1, f);
    for (size_t i = 0; i < c->n; i++) {
        uint32_t rh[4] = {1700000000u + (uint32_t)(i / 1000), (uint32_t)(i % 1000) * 1000u,
                          (uint32_t)c->len[i], (uint32_t)c->len[i]};
        fwrite(rh, sizeof rh, 1, f);
        fwrite(c->pkt[i], 1, c->len[i], f);
    }
    fclose(f);
}

/* Format every label of the tree: the plugin's field values go through
 * their hf types and value strings here. */
static void walk(proto_node *node, gpointer data) {
    size_t *ours = data;
    field_info *fi = PNODE_FINFO(node);
    if (fi) {
        char label[ITEM_LABEL_LENGTH];
        proto_item_fill_label(fi, label);
        if (fi->hfinfo && strncmp(fi->hfinfo->abbrev, "iwk_", 4) == 0) (*ours)++;
    }
    proto_tree_children_foreach(node, walk, data);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!inited) init_epan();
    fuzz_in in = {data, size};
    uint8_t cfg = fuzz_u8(&in);
    apply_cfg(cfg);
    capture cap = {0};
    build(&cap, cfg, &in);
    if (getenv("FUZZ_PLUGIN_PCAP")) write_pcap(&cap, getenv("FUZZ_PLUGIN_PCAP"));

    if (session && (++session_inputs >= SESSION_INPUTS || getenv("FUZZ_PLUGIN_FRESH"))) {
        epan_free(session);
        session = NULL;
    }
    if (!session) {
        session = epan_new(&prov, &prov_funcs);
        session_inputs = 0;
        next_frame = 1;
    }
    prov.frames = calloc(cap.n ? cap.n : 1, sizeof(frame_data));
    prov.n = cap.n;
    prov.first = next_frame;
    FUZZ_CHECK(prov.frames != NULL);
    wtap_rec rec;
    wtap_rec_init(&rec);
    size_t ours = 0; /* our items in the second pass (FUZZ_PLUGIN_VERBOSE prints it) */
    for (int pass = 0; pass < 2; pass++) {
        epan_dissect_t *edt = epan_dissect_new(session, pass == 1, pass == 1);
        nstime_t elapsed = NSTIME_INIT_ZERO;
        const frame_data *ref = NULL, *prev = NULL;
        guint32 cum = 0;
        for (size_t i = 0; i < cap.n; i++) {
            rec.rec_type = REC_TYPE_PACKET;
            rec.presence_flags = WTAP_HAS_TS | WTAP_HAS_CAP_LEN;
            rec.ts.secs = 1700000000 + (time_t)(i / 1000);
            rec.ts.nsecs = (int)(i % 1000) * 1000000;
            rec.rec_header.packet_header.caplen = (guint32)cap.len[i];
            rec.rec_header.packet_header.len = (guint32)cap.len[i];
            rec.rec_header.packet_header.pkt_encap = WTAP_ENCAP_ETHERNET;
            frame_data *fd = &prov.frames[i];
            if (pass == 0) {
                frame_data_init(fd, prov.first + (guint32)i, &rec, (gint64)i * 100, cum);
                frame_data_set_before_dissect(fd, &elapsed, &ref, prev);
            }
            tvbuff_t *tvb = tvb_new_real_data(cap.pkt[i], (guint)cap.len[i], (gint)cap.len[i]);
            epan_dissect_run(edt, WTAP_FILE_TYPE_SUBTYPE_UNKNOWN, &rec, tvb, fd, NULL);
            if (pass == 1) {
                proto_tree_children_foreach(edt->tree, walk, &ours);
            } else {
                frame_data_set_after_dissect(fd, &cum);
                prev = fd;
            }
            epan_dissect_reset(edt);
        }
        epan_dissect_free(edt);
    }
    wtap_rec_cleanup(&rec);
    for (size_t i = 0; i < cap.n; i++) {
        frame_data_destroy(&prov.frames[i]);
        free(cap.pkt[i]);
    }
    next_frame += (guint32)cap.n;
    free(prov.frames);
    prov.frames = NULL;
    if (getenv("FUZZ_PLUGIN_VERBOSE"))
        fprintf(stderr, "fuzz_plugin: %zu frames, %zu iwk_* items\n", cap.n, ours);
    return 0;
}
