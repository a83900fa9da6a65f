/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libwireshark's epan driven as tshark -2 drives it, for the harnesses that
 * run our plugin (fuzz_epan.h). libwireshark-dev 4.0, as Debian 12 ships
 * it; modelled on Wireshark's own fuzzshark:
 *  - the plugin's sources are compiled into the harness and
 *    plugin_register() is called before epan_init(..., load_plugins =
 *    FALSE), so epan registers iwk_mpa/iwk_ddp/iwk_rdmap exactly as it does
 *    for the loaded .so, with no plugin directory involved (root ignores
 *    WIRESHARK_PLUGIN_DIR anyway);
 *  - a capture is Ethernet + IPv4 + TCP frames of one connection, run
 *    through epan_dissect_run() twice: a first pass without a tree (the
 *    plugin computes and stores its per-connection state), then a second
 *    pass with a visible tree whose every label is formatted;
 *  - each capture is a TCP connection of its own: a new client address per
 *    capture (ports stay fixed: a port walk would hand streams to whatever
 *    dissector Wireshark registers there, TPM on 2321 for one), and frame
 *    numbers that keep counting, so conversations, reassembly and the
 *    plugin's iwk_conv never meet an earlier capture's. The epan session
 *    (epan_new/epan_free, which resets file-scoped memory) is renewed every
 *    SESSION_INPUTS (4096) captures only: renewing it rereads Wireshark's
 *    name-resolution files (manuf, services), ~50 ms, and grows the
 *    process by a few MB (every 256 inputs ran ASan out of memory);
 *  - only our heuristic stays enabled on TCP, and the RPC-over-RDMA
 *    dissector on the iWARP ULP list is disabled: other dissectors' own
 *    bugs (docs/fuzzing.md, findings 9 and 10) are not ours to fuzz;
 *  - WIRESHARK_ABORT_ON_DISSECTOR_BUG and _TOO_MANY_ITEMS make a
 *    DISSECTOR_ASSERT or a runaway tree abort instead of becoming an expert
 *    item, so the fuzzer sees them. */
#include "fuzz_epan.h"

#include <epan/frame_data.h>
#include <epan/packet.h>
#include <epan/prefs.h>
#include <epan/disabled_protos.h> /* after epan.h: it needs ws_symbol_export.h */
#include <wiretap/wtap.h>
#include <wsutil/privileges.h>

/* plugin.c */
void plugin_register(void);

#define SEG_MAX 8192
#define SESSION_INPUTS 4096

/* epan asks the application for frame time stamps through this: frames
 * first..first + n - 1 are the current capture's. */
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
static guint32 next_frame = 1;   /* frame numbers keep counting within a session */
static uint32_t next_client;     /* client address 10.128.0.0 + n */
static unsigned cur_prefs = ~0u; /* preferences as last applied */

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

void fz_epan_init(void) {
    if (inited)
        return;
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
    /* Likewise Wireshark 4.0's SMB2 asserts "length >= 0" on a Negotiate
     * with a wild NegotiateContextOffset, reached through SMB Direct exactly
     * as through the built-in iWARP path (docs/fuzzing.md, finding 18): SMB
     * Direct itself stays on, SMB2 above it is not ours to fuzz. */
    proto_disable_proto_by_name("smb2");
    heur_dissector_table_foreach("tcp", only_our_heuristic, NULL);
    dissector_handle_t h = find_dissector("iwk_mpa");
    FUZZ_CHECK(h != NULL);
    dissector_add_uint("tcp.port", FZ_EPAN_PORT_DECODE_AS, h);
    set_pref("iwk_mpa.yield_to_builtin", false);
    inited = true;
}

void fz_epan_prefs(unsigned bits) {
    if (bits == cur_prefs)
        return;
    set_pref("tcp.desegment_tcp_streams", bits & FZ_EPAN_TCP_DESEGMENT);
    set_pref("iwk_mpa.desegment", bits & FZ_EPAN_MPA_DESEGMENT);
    set_pref("iwk_mpa.midstream", bits & FZ_EPAN_MIDSTREAM);
    set_pref("iwk_mpa.midstream_no_crc", bits & FZ_EPAN_MIDSTREAM_NO_CRC);
    set_pref("iwk_mpa.check_crc", bits & FZ_EPAN_CHECK_CRC);
    set_pref("tcp.reassemble_out_of_order", bits & FZ_EPAN_TCP_OOO);
    set_pref("tcp.try_heuristic_first", bits & FZ_EPAN_TCP_HEUR_FIRST);
    prefs_apply_all();
    cur_prefs = bits;
}

/* ---- captures ---- */

static void put16(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static void put32(uint8_t *p, uint32_t v) {
    put16(p, v >> 16);
    put16(p + 2, v);
}

void fz_capture_open(fz_capture *c, bool decode_as, bool handshake) {
    memset(c, 0, sizeof *c);
    c->port[0] = 40000;
    c->client = 0x0A800000u + next_client++ % 0x7FFFFF; /* a connection of its own */
    c->port[1] = decode_as ? FZ_EPAN_PORT_DECODE_AS : FZ_EPAN_PORT_HEUR;
    c->seq[0] = 0x10000000;
    c->seq[1] = 0xFFFFF000; /* wraps during the capture */
    if (handshake) {
        fz_capture_frame(c, 0, 0x02, c->seq[0]++, NULL, 0); /* SYN */
        fz_capture_frame(c, 1, 0x12, c->seq[1]++, NULL, 0); /* SYN, ACK */
        fz_capture_frame(c, 0, 0x10, c->seq[0], NULL, 0);   /* ACK */
    }
}

/* A new frame of len octets with Ethernet and IPv4 (protocol proto, l4
 * octets after the IP header) filled in; returns the IP header. */
static uint8_t *frame_new(fz_capture *c, int dir, uint8_t proto, size_t l4) {
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->pkt = realloc(c->pkt, c->cap * sizeof *c->pkt);
        c->len = realloc(c->len, c->cap * sizeof *c->len);
        FUZZ_CHECK(c->pkt != NULL && c->len != NULL);
    }
    uint8_t *f = calloc(1, 14 + 20 + l4);
    FUZZ_CHECK(f != NULL);
    static const uint8_t mac[2][6] = {{2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 2}};
    memcpy(f, mac[!dir], 6);
    memcpy(f + 6, mac[dir], 6);
    put16(f + 12, 0x0800);
    uint8_t *ip = f + 14;
    ip[0] = 0x45;
    put16(ip + 2, (uint32_t)(20 + l4));
    put16(ip + 4, c->ip_id++);
    ip[8] = 64;
    ip[9] = proto;
    uint32_t addr[2] = {c->client, 0x0A000002u};
    put32(ip + 12, addr[dir]);
    put32(ip + 16, addr[!dir]);
    c->pkt[c->n] = f;
    c->len[c->n++] = 14 + 20 + l4;
    return ip;
}

void fz_capture_sctp(fz_capture *c, int dir, uint16_t sid, uint32_t tsn, uint32_t ppid,
                     bool unordered, const uint8_t *pay, size_t n) {
    FUZZ_CHECK(n <= SEG_MAX);
    size_t chunk = 16 + n, padded = (chunk + 3) & ~(size_t)3;
    uint8_t *sh = frame_new(c, dir, 132, 12 + padded) + 20;
    put16(sh, c->port[dir]);
    put16(sh + 2, c->port[!dir]);
    /* The verification tags name the association: one of its own per
     * capture, as the client address gives TCP (Wireshark's SCTP analysis
     * would take a later capture's chunks for retransmissions). */
    put32(sh + 4, (c->client << 1 | (uint32_t)!dir) ^ 0x5C000000u);
    uint8_t *d = sh + 12; /* one DATA chunk, B and E set */
    d[0] = 0;
    d[1] = (uint8_t)(0x03 | (unordered ? 0x04 : 0));
    put16(d + 2, (uint32_t)chunk);
    put32(d + 4, tsn);
    put16(d + 8, sid);
    put32(d + 12, ppid);
    if (n)
        memcpy(d + 16, pay, n);
}

void fz_capture_frame(fz_capture *c, int dir, uint8_t flags, uint32_t seq, const uint8_t *pay,
                      size_t n) {
    FUZZ_CHECK(n <= SEG_MAX);
    uint8_t *tcp = frame_new(c, dir, 6, 20 + n) + 20;
    put16(tcp, c->port[dir]);
    put16(tcp + 2, c->port[!dir]);
    put32(tcp + 4, seq);
    put32(tcp + 8, (flags & 0x02) && !dir ? 0 : c->seq[!dir]);
    tcp[12] = 5 << 4;
    tcp[13] = flags;
    put16(tcp + 14, 65535);
    if (n)
        memcpy(tcp + 20, pay, n);
}

void fz_capture_send(fz_capture *c, int dir, const uint8_t *pay, size_t n) {
    while (n) {
        size_t k = n < SEG_MAX ? n : SEG_MAX;
        fz_capture_frame(c, dir, 0x18, c->seq[dir], pay, k);
        c->seq[dir] += (uint32_t)k;
        pay += k;
        n -= k;
    }
}

void fz_capture_free(fz_capture *c) {
    for (size_t i = 0; i < c->n; i++)
        free(c->pkt[i]);
    free(c->pkt);
    free(c->len);
    memset(c, 0, sizeof *c);
}

/* FUZZ_PLUGIN_PCAP=file: the capture, for tshark. */
static void write_pcap(const fz_capture *c, const char *path) {
    FILE *f = fopen(path, "wb");
    if (!f)
        return;
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

/* ---- dissection ---- */

void fz_epan_dissect(const fz_capture *c, fz_epan_frame_fn *on_frame, void *user) {
    FUZZ_CHECK(inited);
    if (getenv("FUZZ_PLUGIN_PCAP"))
        write_pcap(c, getenv("FUZZ_PLUGIN_PCAP"));
    if (session && (++session_inputs >= SESSION_INPUTS || getenv("FUZZ_PLUGIN_FRESH"))) {
        epan_free(session);
        session = NULL;
    }
    if (!session) {
        session = epan_new(&prov, &prov_funcs);
        session_inputs = 0;
        next_frame = 1;
    }
    prov.frames = calloc(c->n ? c->n : 1, sizeof(frame_data));
    prov.n = c->n;
    prov.first = next_frame;
    FUZZ_CHECK(prov.frames != NULL);
    wtap_rec rec;
    wtap_rec_init(&rec);
    for (int pass = 0; pass < 2; pass++) {
        epan_dissect_t *edt = epan_dissect_new(session, pass == 1, pass == 1);
        nstime_t elapsed = NSTIME_INIT_ZERO;
        const frame_data *ref = NULL, *prev = NULL;
        guint32 cum = 0;
        for (size_t i = 0; i < c->n; i++) {
            rec.rec_type = REC_TYPE_PACKET;
            rec.presence_flags = WTAP_HAS_TS | WTAP_HAS_CAP_LEN;
            rec.ts.secs = 1700000000 + (time_t)(i / 1000);
            rec.ts.nsecs = (int)(i % 1000) * 1000000;
            rec.rec_header.packet_header.caplen = (guint32)c->len[i];
            rec.rec_header.packet_header.len = (guint32)c->len[i];
            rec.rec_header.packet_header.pkt_encap = WTAP_ENCAP_ETHERNET;
            frame_data *fd = &prov.frames[i];
            if (pass == 0) {
                frame_data_init(fd, prov.first + (guint32)i, &rec, (gint64)i * 100, cum);
                frame_data_set_before_dissect(fd, &elapsed, &ref, prev);
            }
            tvbuff_t *tvb = tvb_new_real_data(c->pkt[i], (guint)c->len[i], (gint)c->len[i]);
            epan_dissect_run(edt, WTAP_FILE_TYPE_SUBTYPE_UNKNOWN, &rec, tvb, fd, NULL);
            if (pass == 1) {
                on_frame(i, edt->tree, user);
            } else {
                frame_data_set_after_dissect(fd, &cum);
                prev = fd;
            }
            epan_dissect_reset(edt);
        }
        epan_dissect_free(edt);
    }
    wtap_rec_cleanup(&rec);
    for (size_t i = 0; i < c->n; i++)
        frame_data_destroy(&prov.frames[i]);
    next_frame += (guint32)c->n;
    free(prov.frames);
    prov.frames = NULL;
}
