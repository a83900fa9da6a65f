/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwk-pcapgen: writes the synthetic captures in pcaps/ with libiwarp's
 * encoders and the shared capture writer (reference-stack/util/iw_pcapw.h,
 * libpcap's pcap_dump API).
 *
 *   iwk-pcapgen OUTDIR
 *
 * Every capture is Ethernet/IPv4/TCP with fixed addresses and timestamps,
 * so the output is byte-for-byte reproducible. Each scenario is one
 * function below; the golden decodes next to the captures were made from
 * them (see pcaps/README.md). */
#include <iwarp/iwarp.h>
#include <iw_pcapw.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STREAM_MAX (1u << 20)

/* One TCP connection: side 0 is the client (initiator). */
typedef iw_pcapw_conn conn;

/* One direction's octet stream: frames are appended, then cut into TCP
 * segments. pos is the marker grid position of the next octet. */
typedef struct {
    uint8_t *buf;
    size_t len, sent;
    uint32_t pos;
    unsigned flags; /* IW_MPA_MARKERS | IW_MPA_CRC */
} stream;

static void die(const char *what) {
    fprintf(stderr, "iwk-pcapgen: %s\n", what);
    exit(1);
}

/* A capture file whose clock starts at 1700000000 s and steps 100 us per packet. */
static iw_pcapw_file *cap_open_path(const char *path) {
    char err[512];
    iw_pcapw_file *c = iw_pcapw_open(path, err, sizeof err);
    if (!c)
        die(err);
    iw_pcapw_set_clock(c, 1700000000ull * 1000000ull, 100);
    return c;
}

static iw_pcapw_file *cap_open(const char *dir, const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return cap_open_path(path);
}

static void cap_close(iw_pcapw_file *c) {
    if (iw_pcapw_file_close(c) != 0)
        die("write error");
}

static conn conn_new(iw_pcapw_file *c, uint8_t n, uint16_t sport, uint16_t dport, uint32_t isn0,
                     uint32_t isn1) {
    conn k;
    iw_pcapw_conn_init(&k, 4, isn0, isn1);
    iw_pcapw_put32(k.ip[0], 0x0A000001u + (uint32_t)n * 0x100);
    iw_pcapw_put32(k.ip[1], 0x0A000002u + (uint32_t)n * 0x100);
    k.port[0] = sport;
    k.port[1] = dport;
    iw_pcapw_attach(&k, c);
    return k;
}

static void tcp_open(conn *k) { iw_pcapw_handshake(k, 0); }

static void tcp_close(conn *k) { iw_pcapw_close(k, 0); }

static stream stream_new(void) {
    stream s;
    memset(&s, 0, sizeof s);
    s.buf = malloc(STREAM_MAX);
    if (!s.buf)
        die("out of memory");
    return s;
}

static void append(stream *s, const uint8_t *p, size_t n) {
    if (s->len + n > STREAM_MAX)
        die("stream full");
    memcpy(s->buf + s->len, p, n);
    s->len += n;
}

/* MPA Request/Reply; the marker grid starts right after it (§4.3). */
static void s_rr(stream *s, const iw_mpa_rr *rr) {
    uint8_t b[IW_MPA_RR_HDR_LEN + IW_MPA_PD_MAX];
    iw_ssize n = iw_mpa_rr_encode(b, sizeof b, rr);
    if (n < 0)
        die("rr encode");
    append(s, b, (size_t)n);
    s->pos = 0;
}

/* Raw bytes (crafted frames). */
static void s_raw(stream *s, const uint8_t *p, size_t n) { append(s, p, n); }

/* One FPDU around a DDP segment given as header + payload. */
static void s_fpdu_raw(stream *s, const uint8_t *hdr, size_t hl, const uint8_t *pay, size_t pl) {
    size_t room = STREAM_MAX - s->len;
    iw_ssize n = iw_mpa_fpdu_encode(s->buf + s->len, room, s->pos, s->flags, hdr, hl, pay, pl);
    if (n < 0)
        die("fpdu encode");
    s->len += (size_t)n;
    s->pos += (uint32_t)n;
}

/* One RDMAP message (header from m, payload given) as one FPDU. */
static void s_msg(stream *s, const iw_rdmap_msg *m, const uint8_t *pay, size_t pl) {
    uint8_t h[128];
    iw_ssize hl = iw_rdmap_encode_hdr(h, sizeof h, m);
    if (hl < 0)
        die("rdmap encode");
    s_fpdu_raw(s, h, (size_t)hl, pay, pl);
}

/* Cut everything not yet sent into segments of at most mss octets. */
static void flush(conn *k, int side, stream *s, size_t mss) {
    iw_pcapw_send(k, side, s->buf + s->sent, s->len - s->sent, mss);
    s->sent = s->len;
}

/* Cut the unsent octets at the given sizes (the rest in one segment). */
static void flush_cuts(conn *k, int side, stream *s, const size_t *cuts, size_t ncuts) {
    for (size_t i = 0; i < ncuts && s->sent < s->len; i++) {
        size_t n = cuts[i];
        if (n > s->len - s->sent)
            n = s->len - s->sent;
        iw_pcapw_seg(k, side, IW_TH_PSH | IW_TH_ACK, s->buf + s->sent, n);
        s->sent += n;
    }
    flush(k, side, s, IW_PCAPW_PAYLOAD_MAX);
}

static iw_mpa_rr rr_v1(iw_mpa_rr_type t, bool m, bool crc) {
    iw_mpa_rr rr;
    memset(&rr, 0, sizeof rr);
    rr.type = t;
    rr.m = m;
    rr.c = crc;
    rr.rev = IW_MPA_REV1;
    return rr;
}

static iw_mpa_rr rr_v2(iw_mpa_rr_type t, bool m, bool crc, bool p2p, bool b, bool cc, bool d,
                       uint16_t ird, uint16_t ord) {
    iw_mpa_rr rr = rr_v1(t, m, crc);
    rr.rev = IW_MPA_REV2;
    rr.s = true;
    rr.v2.p2p = p2p;
    rr.v2.rtr_send = b;
    rr.v2.rtr_write = cc;
    rr.v2.rtr_read = d;
    rr.v2.ird = ird;
    rr.v2.ord = ord;
    return rr;
}

static void fill(uint8_t *p, size_t n, uint8_t seed) {
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(seed + i * 7);
}

/* Startup on both streams; side 0 initiates. */
static void startup(conn *k, stream *s0, stream *s1, const iw_mpa_rr *req, const iw_mpa_rr *rep) {
    tcp_open(k);
    s_rr(s0, req);
    flush(k, 0, s0, 1460);
    s_rr(s1, rep);
    flush(k, 1, s1, 1460);
    /* §7.1.1: the peer's M bit puts markers in this direction; C in either
     * frame turns CRCs on for both. */
    unsigned crc = (req->c || rep->c) ? IW_MPA_CRC : 0;
    s0->flags = crc | (rep->m ? IW_MPA_MARKERS : 0);
    s1->flags = crc | (req->m ? IW_MPA_MARKERS : 0);
}

/* Every RFC 5040 / RFC 7306 opcode on one connection, client side first
 * (Read/Atomic responses from the server). */
static void all_opcodes(conn *k, stream *s0, stream *s1, size_t mss, uint32_t msn0) {
    uint8_t pay[600];
    iw_rdmap_msg m;
    uint32_t msn1q1 = 1, msn1q3 = 1;

    fill(pay, sizeof pay, 1);
    m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, msn0++, 0, true);
    s_msg(s0, &m, pay, 40);
    m = iw_rdmap_msg_untagged(IW_OP_SEND_SE, 0, msn0++, 0, true);
    s_msg(s0, &m, pay, 23);
    m = iw_rdmap_msg_untagged(IW_OP_SEND_INV, 0, msn0++, 0, true);
    m.ddp.rsvd_ulp2 = 0x00ABCD01;
    s_msg(s0, &m, pay, 17);
    m = iw_rdmap_msg_untagged(IW_OP_SEND_SE_INV, 0, msn0++, 0, true);
    m.ddp.rsvd_ulp2 = 0x00ABCD02;
    s_msg(s0, &m, pay, 9);
    m = iw_rdmap_msg_tagged(IW_OP_WRITE, 0x11223344, 0x1000, true);
    s_msg(s0, &m, pay, 100);
    flush(k, 0, s0, mss);

    m = iw_rdmap_msg_untagged(IW_OP_READ_REQ, 1, msn1q1++, 0, true);
    m.u.read_req.sink_stag = 0x0000AA01;
    m.u.read_req.sink_to = 0x7f0000001000ull;
    m.u.read_req.read_size = 64;
    m.u.read_req.src_stag = 0x0000BB01;
    m.u.read_req.src_to = 0x2000;
    s_msg(s0, &m, NULL, 0);
    flush(k, 0, s0, mss);
    m = iw_rdmap_msg_tagged(IW_OP_READ_RESP, 0x0000AA01, 0x7f0000001000ull, true);
    s_msg(s1, &m, pay, 64);
    flush(k, 1, s1, mss);

    uint8_t imm[8] = {0xDE, 0xAD, 0xBE, 0xEF, 0x01, 0x02, 0x03, 0x04};
    m = iw_rdmap_msg_untagged(IW_OP_IMM, 0, msn0++, 0, true);
    memcpy(m.u.imm, imm, 8);
    s_msg(s0, &m, NULL, 0);
    m = iw_rdmap_msg_untagged(IW_OP_IMM_SE, 0, msn0++, 0, true);
    memcpy(m.u.imm, imm, 8);
    m.u.imm[7] = 0x05;
    s_msg(s0, &m, NULL, 0);

    m = iw_rdmap_msg_untagged(IW_OP_ATOMIC_REQ, 1, msn1q1++, 0, true);
    m.u.atomic_req.aopcode = IW_ATOMIC_FETCH_ADD;
    m.u.atomic_req.req_id = 77;
    m.u.atomic_req.stag = 0x0000CC01;
    m.u.atomic_req.to = 0x3000;
    m.u.atomic_req.add_swap = 5;
    m.u.atomic_req.compare_mask = ~0ull;
    s_msg(s0, &m, NULL, 0);
    m = iw_rdmap_msg_untagged(IW_OP_ATOMIC_REQ, 1, msn1q1++, 0, true);
    m.u.atomic_req.aopcode = IW_ATOMIC_CMP_SWAP;
    m.u.atomic_req.req_id = 78;
    m.u.atomic_req.stag = 0x0000CC01;
    m.u.atomic_req.to = 0x3008;
    m.u.atomic_req.add_swap = 0x1111;
    m.u.atomic_req.add_swap_mask = ~0ull;
    m.u.atomic_req.compare = 0x2222;
    m.u.atomic_req.compare_mask = ~0ull;
    s_msg(s0, &m, NULL, 0);
    flush(k, 0, s0, mss);

    m = iw_rdmap_msg_untagged(IW_OP_ATOMIC_RESP, 3, msn1q3++, 0, true);
    m.u.atomic_resp.req_id = 77;
    m.u.atomic_resp.orig = 40;
    s_msg(s1, &m, NULL, 0);
    m = iw_rdmap_msg_untagged(IW_OP_ATOMIC_RESP, 3, msn1q3++, 0, true);
    m.u.atomic_resp.req_id = 78;
    m.u.atomic_resp.orig = 0x2222;
    s_msg(s1, &m, NULL, 0);
    flush(k, 1, s1, mss);

    /* A two-segment Send (reassembled) and a two-segment Write. */
    m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, msn0, 0, false);
    s_msg(s0, &m, pay, 300);
    m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, msn0++, 300, true);
    s_msg(s0, &m, pay + 300, 200);
    m = iw_rdmap_msg_tagged(IW_OP_WRITE, 0x11223344, 0x2000, false);
    s_msg(s0, &m, pay, 256);
    m = iw_rdmap_msg_tagged(IW_OP_WRITE, 0x11223344, 0x2100, true);
    s_msg(s0, &m, pay + 256, 44);
    flush(k, 0, s0, mss);
}

/* Terminate sent by the server about the client's last Send: untagged DDP
 * header copied (D), segment length (M). */
static void terminate_about(stream *s, uint32_t msn, const iw_rdmap_msg *bad, uint16_t seg_len,
                            uint16_t triple, bool with_rreq) {
    uint8_t copied[IW_DDP_UNTAGGED_HDR_LEN];
    iw_ssize cl = iw_ddp_encode_hdr(copied, sizeof copied, &bad->ddp);
    if (cl < 0)
        die("ddp encode");
    copied[1] = (uint8_t)(bad->rv << 6 | bad->opcode);
    iw_rdmap_msg t = iw_rdmap_msg_untagged(IW_OP_TERMINATE, 2, msn, 0, true);
    t.u.term.layer = (uint8_t)iw_term_layer(triple);
    t.u.term.etype = (uint8_t)iw_term_etype(triple);
    t.u.term.ecode = (uint8_t)iw_term_ecode(triple);
    t.u.term.m = true;
    t.u.term.d = true;
    t.u.term.ddp_seg_len = seg_len;
    t.u.term.ddp_raw = copied;
    t.u.term.ddp_raw_len = (size_t)cl;
    if (with_rreq) {
        t.u.term.r = true;
        t.u.term.rreq = bad->u.read_req;
    }
    s_msg(s, &t, NULL, 0);
}

/* A Terminate as Linux siw sends it (Terminate Control in its bit order,
 * iw_rdmap_term.siw_layout) about bad: M and D with its segment length and
 * copied DDP header when copy is set, else the control alone. */
static void terminate_siw(stream *s, const iw_rdmap_msg *bad, uint16_t seg_len, uint16_t triple,
                          bool copy) {
    uint8_t copied[IW_DDP_UNTAGGED_HDR_LEN];
    iw_rdmap_msg t = iw_rdmap_msg_untagged(IW_OP_TERMINATE, 2, 1, 0, true);
    t.u.term.layer = (uint8_t)iw_term_layer(triple);
    t.u.term.etype = (uint8_t)iw_term_etype(triple);
    t.u.term.ecode = (uint8_t)iw_term_ecode(triple);
    t.u.term.siw_layout = true;
    if (copy) {
        iw_ssize cl = iw_ddp_encode_hdr(copied, sizeof copied, &bad->ddp);
        if (cl < 0)
            die("ddp encode");
        copied[1] = (uint8_t)(bad->rv << 6 | bad->opcode);
        t.u.term.m = true;
        t.u.term.d = true;
        t.u.term.ddp_seg_len = seg_len;
        t.u.term.ddp_raw = copied;
        t.u.term.ddp_raw_len = (size_t)cl;
    }
    s_msg(s, &t, NULL, 0);
}

/* ---------------- scenarios ---------------- */

/* MPA v1, CRC on, no markers, every opcode. */
static void gen_v1_crc_all_opcodes(const char *dir) {
    iw_pcapw_file *c = cap_open(dir, "v1-crc-all-opcodes.pcap");
    conn k = conn_new(c, 1, 40001, 4791, 1000, 5000);
    stream s0 = stream_new(), s1 = stream_new();
    iw_mpa_rr req = rr_v1(IW_MPA_REQUEST, false, true);
    iw_mpa_rr rep = rr_v1(IW_MPA_REPLY, false, true);
    startup(&k, &s0, &s1, &req, &rep);
    all_opcodes(&k, &s0, &s1, 1460, 1);
    tcp_close(&k);
    cap_close(c);
    free(s0.buf);
    free(s1.buf);
}

/* MPA v2 peer-to-peer, IRD/ORD, Send RTR, markers both ways, CRC on; FPDUs
 * cut at awkward places and many per segment. */
static void gen_v2_p2p_markers(const char *dir) {
    iw_pcapw_file *c = cap_open(dir, "v2-p2p-markers-crc.pcap");
    conn k = conn_new(c, 2, 40002, 4791, 77777, 99999);
    stream s0 = stream_new(), s1 = stream_new();
    iw_mpa_rr req = rr_v2(IW_MPA_REQUEST, true, true, true, true, true, true, 16, 8);
    uint8_t pd[5] = {'h', 'e', 'l', 'l', 'o'};
    req.ulp_pd = pd;
    req.ulp_pd_len = sizeof pd;
    iw_mpa_rr rep = rr_v2(IW_MPA_REPLY, true, true, true, true, false, true, 8, 16);
    startup(&k, &s0, &s1, &req, &rep);
    /* RTR: zero-length Send (B). */
    iw_rdmap_msg m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 1, 0, true);
    s_msg(&s0, &m, NULL, 0);
    flush(&k, 0, &s0, 1460);
    all_opcodes(&k, &s0, &s1, 333, 2); /* 333: segments end mid-FPDU, mid-marker, mid-CRC */
    /* Many FPDUs in one segment. */
    uint8_t pay[64];
    fill(pay, sizeof pay, 9);
    for (uint32_t i = 0; i < 12; i++) {
        m = iw_rdmap_msg_tagged(IW_OP_WRITE, 0x5500 + i, 0x10000 + 64ull * i, true);
        s_msg(&s0, &m, pay, 8 + i);
    }
    flush(&k, 0, &s0, 1460);
    tcp_close(&k);
    cap_close(c);
    free(s0.buf);
    free(s1.buf);
}

/* MPA v2 client-server, no CRC, no markers (what two siw peers negotiate):
 * Sends of 1 to 16 octets of every Send opcode both ways, then a two-segment
 * Send whose last segment is 3 octets. Valid: no ULP takes a Send under 16
 * octets, so none may be shown as a malformed ULP packet. */
static void gen_v2_short_sends(const char *dir) {
    static const unsigned ops[] = {IW_OP_SEND, IW_OP_SEND_SE, IW_OP_SEND_INV, IW_OP_SEND_SE_INV};
    iw_pcapw_file *c = cap_open(dir, "v2-short-sends.pcap");
    conn k = conn_new(c, 5, 40005, 18515, 5005, 6006);
    stream s[2] = {stream_new(), stream_new()};
    iw_mpa_rr req = rr_v2(IW_MPA_REQUEST, false, false, false, false, false, false, 0, 0);
    iw_mpa_rr rep = rr_v2(IW_MPA_REPLY, false, false, false, false, false, false, 0, 0);
    startup(&k, &s[0], &s[1], &req, &rep);
    uint8_t pay[32];
    fill(pay, sizeof pay, 5);
    iw_rdmap_msg m;
    for (uint32_t i = 0; i < 16; i++) {
        for (int d = 0; d < 2; d++) {
            m = iw_rdmap_msg_untagged(ops[i % 4], 0, 1 + i, 0, true);
            if (ops[i % 4] == IW_OP_SEND_INV || ops[i % 4] == IW_OP_SEND_SE_INV)
                m.ddp.rsvd_ulp2 = 0x5000 + 0x100 * (uint32_t)d + i;
            s_msg(&s[d], &m, pay, 1 + i);
            flush(&k, d, &s[d], 1460);
        }
    }
    m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 17, 0, false);
    s_msg(&s[0], &m, pay, 16);
    m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 17, 16, true);
    s_msg(&s[0], &m, pay + 16, 3);
    flush(&k, 0, &s[0], 1460);
    tcp_close(&k);
    cap_close(c);
    free(s[0].buf);
    free(s[1].buf);
}

/* MPA v1: markers only from the responder (Request M=1), no CRC; odd cuts
 * including one-octet segments. */
static void gen_v1_markers_nocrc(const char *dir) {
    iw_pcapw_file *c = cap_open(dir, "v1-markers-nocrc.pcap");
    conn k = conn_new(c, 3, 40003, 4791, 3, 4);
    stream s0 = stream_new(), s1 = stream_new();
    iw_mpa_rr req = rr_v1(IW_MPA_REQUEST, true, false);
    iw_mpa_rr rep = rr_v1(IW_MPA_REPLY, false, false);
    startup(&k, &s0, &s1, &req, &rep);
    uint8_t pay[1500];
    fill(pay, sizeof pay, 3);
    iw_rdmap_msg m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 1, 0, true);
    s_msg(&s0, &m, pay, 100);
    flush(&k, 0, &s0, 1460);
    for (uint32_t i = 0; i < 4; i++) {
        m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 1 + i, 0, true);
        s_msg(&s1, &m, pay, 700 + 37 * i);
    }
    size_t cuts[] = {1, 1, 1, 5, 509, 3, 1, 700, 2, 2, 1024};
    flush_cuts(&k, 1, &s1, cuts, sizeof cuts / sizeof cuts[0]);
    tcp_close(&k);
    cap_close(c);
    free(s0.buf);
    free(s1.buf);
}

/* No startup in the capture: CRC on, no markers; the first data segment
 * starts inside an FPDU. */
static void gen_midstream_crc(const char *dir) {
    iw_pcapw_file *c = cap_open(dir, "midstream-crc.pcap");
    conn k = conn_new(c, 4, 40004, 4791, 0x10000, 0x20000);
    stream s0 = stream_new(), s1 = stream_new();
    s0.flags = s1.flags = IW_MPA_CRC;
    uint8_t pay[256];
    fill(pay, sizeof pay, 4);
    iw_rdmap_msg m;
    for (uint32_t i = 0; i < 3; i++) {
        m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 41 + i, 0, true);
        s_msg(&s0, &m, pay, 120);
    }
    /* Drop the first 50 octets: the capture begins mid-FPDU. */
    k.next[0] += 50;
    s0.sent = 50;
    size_t cuts[] = {144 - 50}; /* the tail of the first FPDU (144 octets) */
    flush_cuts(&k, 0, &s0, cuts, 1);
    m = iw_rdmap_msg_untagged(IW_OP_READ_REQ, 1, 9, 0, true);
    m.u.read_req.sink_stag = 0x900;
    m.u.read_req.read_size = 32;
    m.u.read_req.src_stag = 0x901;
    s_msg(&s0, &m, NULL, 0);
    flush(&k, 0, &s0, 1460);
    m = iw_rdmap_msg_tagged(IW_OP_READ_RESP, 0x900, 0, true);
    s_msg(&s1, &m, pay, 32);
    flush(&k, 1, &s1, 1460);
    cap_close(c);
    free(s0.buf);
    free(s1.buf);
}

/* No startup, markers and CRC on, grid phase unknown to the dissector. */
static void gen_midstream_markers(const char *dir) {
    iw_pcapw_file *c = cap_open(dir, "midstream-markers-crc.pcap");
    conn k = conn_new(c, 5, 40005, 4791, 0x31337, 0x4242);
    stream s0 = stream_new();
    s0.flags = IW_MPA_CRC | IW_MPA_MARKERS;
    uint8_t pay[900];
    fill(pay, sizeof pay, 5);
    iw_rdmap_msg m;
    /* Stream already 4 KB + 200 octets into Full Operation. */
    s0.pos = 4096 + 200;
    for (uint32_t i = 0; i < 5; i++) {
        m = iw_rdmap_msg_tagged(IW_OP_WRITE, 0x777, 0x1000 * i, true);
        s_msg(&s0, &m, pay, 500 + 100 * i);
    }
    /* One FPDU per segment, as RNICs send them. */
    size_t cuts[8];
    size_t off = 0;
    uint32_t pos = 4096 + 200;
    for (int i = 0; i < 5; i++) {
        size_t w = iw_mpa_fpdu_wire_len(14 + 500 + 100 * (size_t)i, pos, true);
        cuts[i] = w;
        off += w;
        pos += (uint32_t)w;
    }
    (void)off;
    flush_cuts(&k, 0, &s0, cuts, 5);
    cap_close(c);
    free(s0.buf);
}

/* A long conversation cut to start mid-stream (issue 11): markers and CRC
 * both ways, Sends of every size (several per segment when short, split
 * into DDP segments when long), Writes, Read Requests and their multi-segment
 * Read Responses, Sends back. TCP cuts segments at sizes unrelated to the
 * FPDUs (a fixed pseudo-random sequence), so FPDUs are split across segments
 * and several share one. The capture starts inside an FPDU of each direction
 * (no SYN, no MPA startup) and the directions interleave. */
static void gen_midstream_long(const char *dir) {
    iw_pcapw_file *c = cap_open(dir, "midstream-long-markers-crc.pcap");
    conn k = conn_new(c, 11, 40011, 4791, 0x10000000u, 0x20000000u);
    stream s[2] = {stream_new(), stream_new()};
    s[0].flags = s[1].flags = IW_MPA_CRC | IW_MPA_MARKERS;
    /* As after an MPA startup 3 KiB ago: the grid started then (§4.3);
     * FPDUs start 4-aligned to it (§4.2, PAD). */
    s[0].pos = 3 * 1024 + 76;
    s[1].pos = 3 * 1024 + 300;
    uint8_t pay[4096];
    fill(pay, sizeof pay, 11);
    uint32_t msn0 = 100, msn1 = 200, rq = 40; /* QN 0 both ways; QN 1 Read Requests */
    const size_t ddp_max = 1400;              /* largest DDP segment payload */
    for (uint32_t i = 0; i < 120; i++) {
        /* Client: a Send of 1 to ~3 KiB, split into DDP segments (MO). */
        size_t n = 1 + (i * 389u) % 3000u;
        for (size_t mo = 0; mo < n; mo += ddp_max) {
            size_t part = n - mo < ddp_max ? n - mo : ddp_max;
            iw_rdmap_msg m =
                iw_rdmap_msg_untagged(IW_OP_SEND, 0, msn0, (uint32_t)mo, mo + part == n);
            s_msg(&s[0], &m, pay + mo % 1024, part);
        }
        msn0++;
        /* Client: an RDMA Write every other round. */
        if (i % 2 == 0) {
            iw_rdmap_msg m =
                iw_rdmap_msg_tagged(IW_OP_WRITE, 0x0A0B0C01, 0x10000 + 0x100 * i, true);
            s_msg(&s[0], &m, pay, 16 + i % 200);
        }
        /* Client: a Read Request every third round; the server's Read
         * Response in DDP segments of ddp_max (RFC 5040 §5.2). */
        if (i % 3 == 0) {
            uint32_t size = 700 + 611 * (i % 5);
            iw_rdmap_msg m = iw_rdmap_msg_untagged(IW_OP_READ_REQ, 1, rq++, 0, true);
            m.u.read_req.sink_stag = 0x0000AA01;
            m.u.read_req.sink_to = 0x20000 + 0x1000ull * i;
            m.u.read_req.read_size = size;
            m.u.read_req.src_stag = 0x0000BB01;
            m.u.read_req.src_to = 0x8000;
            s_msg(&s[0], &m, NULL, 0);
            for (uint32_t off = 0; off < size; off += (uint32_t)ddp_max) {
                size_t part = size - off < ddp_max ? size - off : ddp_max;
                iw_rdmap_msg r = iw_rdmap_msg_tagged(
                    IW_OP_READ_RESP, 0x0000AA01, 0x20000 + 0x1000ull * i + off, off + part == size);
                s_msg(&s[1], &r, pay + off % 1024, part);
            }
        }
        /* Server: a short Send back. */
        iw_rdmap_msg m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, msn1++, 0, true);
        s_msg(&s[1], &m, pay, 8 + (i * 53u) % 500u);
    }
    /* The capture starts here: inside an FPDU of each direction. The octets
     * before were sent, not captured. */
    size_t skip[2] = {4000 + 37, 2500 + 11};
    for (int d = 0; d < 2; d++) {
        s[d].sent = skip[d];
        k.next[d] += (uint32_t)skip[d];
        k.ack[1 - d] += (uint32_t)skip[d];
    }
    /* Segments of 1 to 1460 octets, in rounds of a few per direction. */
    uint32_t lcg = 11;
    while (s[0].sent < s[0].len || s[1].sent < s[1].len) {
        for (int d = 0; d < 2; d++) {
            for (int j = 0; j < 3 && s[d].sent < s[d].len; j++) {
                lcg = lcg * 1103515245u + 12345u;
                size_t n = 1 + (lcg >> 8) % 1460u;
                if (n > s[d].len - s[d].sent)
                    n = s[d].len - s[d].sent;
                iw_pcapw_seg(&k, d, IW_TH_PSH | IW_TH_ACK, s[d].buf + s[d].sent, n);
                s[d].sent += n;
            }
        }
    }
    cap_close(c);
    free(s[0].buf);
    free(s[1].buf);
}

/* TCP sequence numbers wrap inside the stream; markers both ways, CRC on. */
static void gen_seqwrap(const char *dir) {
    iw_pcapw_file *c = cap_open(dir, "seqwrap-markers-crc.pcap");
    conn k = conn_new(c, 6, 40006, 4791, 0xFFFFF000u, 0xFFFFFF00u);
    stream s0 = stream_new(), s1 = stream_new();
    iw_mpa_rr req = rr_v1(IW_MPA_REQUEST, true, true);
    iw_mpa_rr rep = rr_v1(IW_MPA_REPLY, true, true);
    startup(&k, &s0, &s1, &req, &rep);
    uint8_t pay[1400];
    fill(pay, sizeof pay, 6);
    iw_rdmap_msg m;
    for (uint32_t i = 0; i < 6; i++) {
        m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 1 + i, 0, true);
        s_msg(&s0, &m, pay, 1000 + 50 * i);
        m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 1 + i, 0, true);
        s_msg(&s1, &m, pay, 300 + 7 * i);
    }
    flush(&k, 0, &s0, 1460);
    flush(&k, 1, &s1, 1460);
    tcp_close(&k);
    cap_close(c);
    free(s0.buf);
    free(s1.buf);
}

/* A rejected connection (Reply R=1), and a valid Terminate exchange. */
static void gen_reject_terminate(const char *dir) {
    iw_pcapw_file *c = cap_open(dir, "reject-and-terminate.pcap");
    conn k = conn_new(c, 7, 40007, 4791, 100, 200);
    stream s0 = stream_new(), s1 = stream_new();
    iw_mpa_rr req = rr_v1(IW_MPA_REQUEST, false, true);
    iw_mpa_rr rep = rr_v1(IW_MPA_REPLY, false, true);
    rep.r = true;
    uint8_t why[] = "no thanks";
    rep.ulp_pd = why;
    rep.ulp_pd_len = 9;
    startup(&k, &s0, &s1, &req, &rep);
    tcp_close(&k);

    conn k2 = conn_new(c, 8, 40008, 4791, 300, 400);
    stream a = stream_new(), b = stream_new();
    req = rr_v1(IW_MPA_REQUEST, false, true);
    rep = rr_v1(IW_MPA_REPLY, false, true);
    startup(&k2, &a, &b, &req, &rep);
    uint8_t pay[32];
    fill(pay, sizeof pay, 8);
    iw_rdmap_msg m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 1, 0, true);
    s_msg(&a, &m, pay, 32);
    iw_rdmap_msg rq = iw_rdmap_msg_untagged(IW_OP_READ_REQ, 1, 1, 0, true);
    rq.u.read_req.sink_stag = 0x1;
    rq.u.read_req.read_size = 4096;
    rq.u.read_req.src_stag = 0xBAD;
    rq.u.read_req.src_to = 0x8000;
    s_msg(&a, &rq, NULL, 0);
    flush(&k2, 0, &a, 1460);
    /* Server: the Read Request names an STag it does not know. Copied
     * untagged header + Read Request header (R). */
    terminate_about(&b, 1, &rq, 46, IW_TERM_RDMAP_INVALID_STAG, true);
    flush(&k2, 1, &b, 1460);
    /* And from the client: a Terminate copying a tagged header (Write),
     * for a DDP untagged-type error: sized by the copy's own T bit. */
    iw_rdmap_msg w = iw_rdmap_msg_tagged(IW_OP_WRITE, 0x42, 0x1000, true);
    uint8_t copied[IW_DDP_TAGGED_HDR_LEN];
    iw_ddp_encode_hdr(copied, sizeof copied, &w.ddp);
    copied[1] = iw_rdmap_ctrl(IW_OP_WRITE);
    iw_rdmap_msg t = iw_rdmap_msg_untagged(IW_OP_TERMINATE, 2, 1, 0, true);
    t.u.term.layer = 1;
    t.u.term.etype = 2;
    t.u.term.ecode = 1;
    t.u.term.m = true;
    t.u.term.d = true;
    t.u.term.ddp_seg_len = 60;
    t.u.term.ddp_raw = copied;
    t.u.term.ddp_raw_len = sizeof copied;
    s_msg(&a, &t, NULL, 0);
    flush(&k2, 0, &a, 1460);
    tcp_close(&k2);
    cap_close(c);
    free(s0.buf);
    free(s1.buf);
    free(a.buf);
    free(b.buf);
}

/* ---- malformed ---- */

/* One bad CRC in an otherwise valid CRC stream. */
static void gen_bad_crc(const char *dir) {
    iw_pcapw_file *c = cap_open(dir, "bad-crc.pcap");
    conn k = conn_new(c, 9, 40009, 4791, 10, 20);
    stream s0 = stream_new(), s1 = stream_new();
    iw_mpa_rr req = rr_v1(IW_MPA_REQUEST, false, true);
    iw_mpa_rr rep = rr_v1(IW_MPA_REPLY, false, true);
    startup(&k, &s0, &s1, &req, &rep);
    uint8_t pay[64];
    fill(pay, sizeof pay, 10);
    for (uint32_t i = 0; i < 3; i++) {
        iw_rdmap_msg m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 1 + i, 0, true);
        size_t before = s0.len;
        s_msg(&s0, &m, pay, 64);
        if (i == 1)
            s0.buf[before + 30] ^= 0x01; /* payload bit flip: CRC no longer holds */
        flush(&k, 0, &s0, 1460);
    }
    tcp_close(&k);
    cap_close(c);
    free(s0.buf);
    free(s1.buf);
}

/* DDP/RDMAP violations a receiver answers with a Terminate, one per FPDU,
 * plus reserved bits (notes). */
static void gen_bad_ddp_rdmap(const char *dir) {
    iw_pcapw_file *c = cap_open(dir, "bad-ddp-rdmap.pcap");
    conn k = conn_new(c, 10, 40010, 4791, 1, 1);
    stream s0 = stream_new(), s1 = stream_new();
    iw_mpa_rr req = rr_v1(IW_MPA_REQUEST, false, true);
    iw_mpa_rr rep = rr_v1(IW_MPA_REPLY, false, true);
    startup(&k, &s0, &s1, &req, &rep);
    uint8_t pay[16] = {0};
    iw_rdmap_msg m;
    uint32_t msn = 1;

    m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, msn++, 0, true);
    m.ddp.dv = 2; /* untagged DDP version: 1/2/0x06 */
    s_msg(&s0, &m, pay, 8);
    m = iw_rdmap_msg_tagged(IW_OP_WRITE, 1, 0, true);
    m.ddp.dv = 0; /* tagged DDP version: 1/1/0x04 */
    s_msg(&s0, &m, pay, 8);
    m = iw_rdmap_msg_untagged(IW_OP_SEND, 7, 1, 0, true); /* QN 7: 1/2/0x01 */
    s_msg(&s0, &m, pay, 8);
    m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, msn++, 0, true);
    m.rv = 2; /* RDMAP version: 0/2/0x05 */
    s_msg(&s0, &m, pay, 8);
    m = iw_rdmap_msg_untagged(0xC, 0, msn++, 0, true); /* reserved opcode: 0/2/0x06 */
    s_msg(&s0, &m, pay, 8);
    m = iw_rdmap_msg_untagged(IW_OP_SEND, 1, 1, 0, true); /* Send on QN 1: 0/2/0x06 */
    s_msg(&s0, &m, pay, 8);
    m = iw_rdmap_msg_untagged(IW_OP_READ_REQ, 1, 2, 0, true); /* Read Request + 4 extra octets */
    m.u.read_req.read_size = 8;
    s_msg(&s0, &m, pay, 4);
    m = iw_rdmap_msg_untagged(IW_OP_IMM, 0, msn++, 0, true); /* Immediate Data of 12 octets */
    s_msg(&s0, &m, pay, 4);
    m = iw_rdmap_msg_untagged(IW_OP_ATOMIC_REQ, 1, 3, 0, true);
    m.u.atomic_req.aopcode = 1; /* reserved AOpCode: 0/2/0x06 */
    s_msg(&s0, &m, NULL, 0);
    /* ULPDU of 10 octets: shorter than an untagged DDP header. */
    uint8_t shorthdr[10] = {0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0};
    s_fpdu_raw(&s0, shorthdr, sizeof shorthdr, NULL, 0);
    /* Terminate whose D bit announces a header that is not there. */
    uint8_t tshort[18 + 4] = {0x41, 0x47, 0, 0, 0, 0, 0, 0,    0,    2,    0,
                              0,    0,    1, 0, 0, 0, 0, 0x12, 0x04, 0xC0, 0x00};
    s_fpdu_raw(&s0, tshort, sizeof tshort, NULL, 0);
    /* Reserved bits and a stray Invalidate STag (notes, no verdict). */
    m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, msn++, 0, true);
    m.ddp.rsvd = 0x5;
    m.rsv = 0x1;
    m.ddp.rsvd_ulp2 = 0xFEED;
    s_msg(&s0, &m, pay, 8);
    flush(&k, 0, &s0, 1460);
    tcp_close(&k);
    cap_close(c);
    free(s0.buf);
    free(s1.buf);
}

/* MPA startup and framing violations, one connection each. */
static void gen_bad_mpa(const char *dir) {
    iw_pcapw_file *c = cap_open(dir, "bad-mpa.pcap");
    uint8_t n = 20;
    /* Rev 3 Request: close. */
    {
        conn k = conn_new(c, n++, 41001, 4791, 1, 1);
        stream s0 = stream_new();
        tcp_open(&k);
        iw_mpa_rr rr = rr_v1(IW_MPA_REQUEST, false, true);
        rr.rev = 3;
        s_rr(&s0, &rr);
        flush(&k, 0, &s0, 1460);
        free(s0.buf);
    }
    /* PD_Length 600 > 512. */
    {
        conn k = conn_new(c, n++, 41002, 4791, 1, 1);
        stream s0 = stream_new();
        tcp_open(&k);
        uint8_t f[20] = "MPA ID Req Frame";
        f[16] = 0x40;
        f[17] = 1;
        f[18] = 0x02;
        f[19] = 0x58;
        s_raw(&s0, f, 20);
        flush(&k, 0, &s0, 1460);
        free(s0.buf);
    }
    /* Rev 2, S=1, PD_Length 2: shorter than the enhanced data. */
    {
        conn k = conn_new(c, n++, 41003, 4791, 1, 1);
        stream s0 = stream_new();
        tcp_open(&k);
        uint8_t f[22] = "MPA ID Req Frame";
        f[16] = 0x50;
        f[17] = 2;
        f[18] = 0;
        f[19] = 2;
        s_raw(&s0, f, 22);
        flush(&k, 0, &s0, 1460);
        free(s0.buf);
    }
    /* Initiator/Initiator: both sides send a Request. */
    {
        conn k = conn_new(c, n++, 41004, 4791, 1, 1);
        stream s0 = stream_new(), s1 = stream_new();
        tcp_open(&k);
        iw_mpa_rr rr = rr_v1(IW_MPA_REQUEST, false, true);
        s_rr(&s0, &rr);
        flush(&k, 0, &s0, 1460);
        s_rr(&s1, &rr);
        flush(&k, 1, &s1, 1460);
        free(s0.buf);
        free(s1.buf);
    }
    /* Marker whose FPDUPTR is wrong (CRC computed over it: §8 code 3),
     * reserved bits in the Request, responder sends first. */
    {
        conn k = conn_new(c, n++, 41005, 4791, 1, 1);
        stream s0 = stream_new(), s1 = stream_new();
        iw_mpa_rr req = rr_v1(IW_MPA_REQUEST, true, true);
        req.res = 0x3;
        iw_mpa_rr rep = rr_v1(IW_MPA_REPLY, true, true);
        startup(&k, &s0, &s1, &req, &rep);
        uint8_t pay[700];
        fill(pay, sizeof pay, 11);
        iw_rdmap_msg m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 1, 0, true);
        s_msg(&s1, &m, pay, 40);
        flush(&k, 1, &s1, 1460);
        size_t at = s0.len;
        m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 1, 0, true);
        s_msg(&s0, &m, pay, 700);
        /* Marker at grid 512 inside this FPDU: corrupt FPDUPTR, redo CRC. */
        size_t w = at + 512;
        s0.buf[w + 3] ^= 0x10;
        size_t total = s0.len - at;
        iw_crc32c_put(s0.buf + at + total - 4, iw_crc32c(s0.buf + at, total - 4));
        flush(&k, 0, &s0, 1460);
        free(s0.buf);
        free(s1.buf);
    }
    cap_close(c);
}

/* MPA v2 negotiation violations. */
static void gen_bad_v2(const char *dir) {
    iw_pcapw_file *c = cap_open(dir, "bad-v2.pcap");
    /* Reply A=0 to an A=1 Request, responder ORD > initiator IRD; first
     * FPDU is a Send with data (no RTR). */
    {
        conn k = conn_new(c, 30, 42001, 4791, 1, 1);
        stream s0 = stream_new(), s1 = stream_new();
        iw_mpa_rr req = rr_v2(IW_MPA_REQUEST, false, true, true, true, false, false, 4, 4);
        iw_mpa_rr rep = rr_v2(IW_MPA_REPLY, false, true, false, false, false, false, 4, 9);
        startup(&k, &s0, &s1, &req, &rep);
        uint8_t pay[16];
        fill(pay, sizeof pay, 13);
        iw_rdmap_msg m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 1, 0, true);
        s_msg(&s0, &m, pay, 16);
        flush(&k, 0, &s0, 1460);
        free(s0.buf);
        free(s1.buf);
    }
    /* P2P accepted with only a Read RTR offered; initiator sends a
     * zero-length Write; then a Send with data before ... fine. */
    {
        conn k = conn_new(c, 31, 42002, 4791, 1, 1);
        stream s0 = stream_new(), s1 = stream_new();
        iw_mpa_rr req = rr_v2(IW_MPA_REQUEST, false, true, true, false, true, true, 4, 4);
        iw_mpa_rr rep = rr_v2(IW_MPA_REPLY, false, true, true, false, false, true, 4, 4);
        startup(&k, &s0, &s1, &req, &rep);
        iw_rdmap_msg m = iw_rdmap_msg_tagged(IW_OP_WRITE, 0, 0, true);
        s_msg(&s0, &m, NULL, 0);
        flush(&k, 0, &s0, 1460);
        free(s0.buf);
        free(s1.buf);
    }
    /* P2P with a proper zero-length Read RTR (valid) for contrast. */
    {
        conn k = conn_new(c, 32, 42003, 4791, 1, 1);
        stream s0 = stream_new(), s1 = stream_new();
        iw_mpa_rr req = rr_v2(IW_MPA_REQUEST, false, true, true, false, false, true, 1, 1);
        iw_mpa_rr rep = rr_v2(IW_MPA_REPLY, false, true, true, false, false, true, 1, 1);
        startup(&k, &s0, &s1, &req, &rep);
        iw_rdmap_msg m = iw_rdmap_msg_untagged(IW_OP_READ_REQ, 1, 1, 0, true);
        s_msg(&s0, &m, NULL, 0);
        flush(&k, 0, &s0, 1460);
        m = iw_rdmap_msg_tagged(IW_OP_READ_RESP, 0, 0, true);
        s_msg(&s1, &m, NULL, 0);
        flush(&k, 1, &s1, 1460);
        free(s0.buf);
        free(s1.buf);
    }
    cap_close(c);
}

/* MSN gap, first MSN not 1, MO discontinuity, unmatched responses. */
static void gen_bad_sequence(const char *dir) {
    iw_pcapw_file *c = cap_open(dir, "bad-sequence.pcap");
    conn k = conn_new(c, 40, 43001, 4791, 1, 1);
    stream s0 = stream_new(), s1 = stream_new();
    iw_mpa_rr req = rr_v1(IW_MPA_REQUEST, false, true);
    iw_mpa_rr rep = rr_v1(IW_MPA_REPLY, false, true);
    startup(&k, &s0, &s1, &req, &rep);
    uint8_t pay[100];
    fill(pay, sizeof pay, 12);
    iw_rdmap_msg m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 2, 0, true); /* first MSN 2 */
    s_msg(&s0, &m, pay, 16);
    m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 5, 0, true); /* gap: 3 expected */
    s_msg(&s0, &m, pay, 16);
    m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 6, 0, false);
    s_msg(&s0, &m, pay, 50);
    m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 6, 60, true); /* MO 60 where 50 was due */
    s_msg(&s0, &m, pay, 20);
    flush(&k, 0, &s0, 1460);
    m = iw_rdmap_msg_tagged(IW_OP_READ_RESP, 0x99, 0, true); /* no Read Request */
    s_msg(&s1, &m, pay, 16);
    m = iw_rdmap_msg_untagged(IW_OP_ATOMIC_RESP, 3, 1, 0, true); /* no Atomic Request */
    s_msg(&s1, &m, NULL, 0);
    flush(&k, 1, &s1, 1460);
    tcp_close(&k);
    cap_close(c);
    free(s0.buf);
    free(s1.buf);
}

/* Stateful violations (shadow analysis, libiwarp iw_shadow): each
 * connection is valid until one FPDU that only the conversation's state
 * shows to be wrong. MPA v2, CRC on. Where a conformant receiver's
 * Terminate is shown, it carries the triple the shadow names. */
static void gen_bad_stateful(const char *dir) {
    iw_pcapw_file *c = cap_open(dir, "bad-stateful.pcap");
    uint8_t pay[256];
    fill(pay, sizeof pay, 14);
    iw_rdmap_msg m;
    uint8_t n = 60;
    for (int k = 0; k < 9; k++, n++) {
        conn kk = conn_new(c, n, (uint16_t)(46001 + k), 4791, 1000u * (uint32_t)n, 7);
        conn *K = &kk;
        stream s0 = stream_new(), s1 = stream_new();
        iw_mpa_rr req = rr_v2(IW_MPA_REQUEST, false, true, false, false, false, false, 4, 4);
        iw_mpa_rr rep = rr_v2(IW_MPA_REPLY, false, true, false, false, false, false, 4, 4);
        if (k == 0) {
            req.v2.ord = 1; /* responder IRD 1 */
            rep.v2.ird = 1;
            rep.v2.ord = 1;
        } else if (k == 8) {
            /* Peer-to-peer, Write RTR asked, Send RTR offered: no RTR in
             * common, the initiator must answer 2/0/0x07 (RFC 6581 §9.2). */
            req = rr_v2(IW_MPA_REQUEST, false, true, true, false, true, false, 4, 4);
            rep = rr_v2(IW_MPA_REPLY, false, true, true, true, false, false, 4, 4);
        }
        startup(K, &s0, &s1, &req, &rep);
        if (k == 8) {
            iw_rdmap_msg t = iw_rdmap_msg_untagged(IW_OP_TERMINATE, 2, 1, 0, true);
            t.u.term.layer = 2;
            t.u.term.ecode = 7;
            s_msg(&s0, &t, NULL, 0);
            flush(K, 0, &s0, 1460);
            tcp_close(K);
            free(s0.buf);
            free(s1.buf);
            continue;
        }
        /* The initiator's first FPDU (RFC 5044 §7.1.2 rule 4). */
        m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 1, 0, true);
        s_msg(&s0, &m, pay, 32);
        flush(K, 0, &s0, 1460);
        switch (k) {
        case 0: { /* a second Read Request while one is outstanding: IRD 1 */
            iw_rdmap_msg rq = iw_rdmap_msg_untagged(IW_OP_READ_REQ, 1, 1, 0, true);
            rq.u.read_req.sink_stag = 0x100;
            rq.u.read_req.sink_to = 0x1000;
            rq.u.read_req.read_size = 64;
            rq.u.read_req.src_stag = 0x200;
            s_msg(&s0, &rq, NULL, 0);
            flush(K, 0, &s0, 1460);
            rq.ddp.msn = 2;
            rq.u.read_req.sink_to = 0x2000;
            s_msg(&s0, &rq, NULL, 0);
            flush(K, 0, &s0, 1460);
            terminate_about(&s1, 1, &rq, 46, IW_TERM_DDP_UT_NO_BUFFER, false);
            flush(K, 1, &s1, 1460);
            break;
        }
        case 1: /* a Read Response nobody asked for */
            m = iw_rdmap_msg_tagged(IW_OP_READ_RESP, 0x300, 0, true);
            s_msg(&s1, &m, pay, 32);
            flush(K, 1, &s1, 1460);
            break;
        case 2:   /* a Read Response past the end of its sink */
        case 3: { /* a Read Response to another STag than the Data Sink STag */
            iw_rdmap_msg rq = iw_rdmap_msg_untagged(IW_OP_READ_REQ, 1, 1, 0, true);
            rq.u.read_req.sink_stag = 0x400;
            rq.u.read_req.sink_to = 0x1000;
            rq.u.read_req.read_size = 64;
            rq.u.read_req.src_stag = 0x500;
            s_msg(&s0, &rq, NULL, 0);
            flush(K, 0, &s0, 1460);
            if (k == 2) {
                m = iw_rdmap_msg_tagged(IW_OP_READ_RESP, 0x400, 0x1000, false);
                s_msg(&s1, &m, pay, 32);
                m = iw_rdmap_msg_tagged(IW_OP_READ_RESP, 0x400, 0x1020, true); /* 32 + 48 > 64 */
                s_msg(&s1, &m, pay, 48);
            } else {
                m = iw_rdmap_msg_tagged(IW_OP_READ_RESP, 0x401, 0x1000, true);
                s_msg(&s1, &m, pay, 64);
            }
            flush(K, 1, &s1, 1460);
            break;
        }
        case 4: /* MSN 2 again after it completed */
            m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 2, 0, true);
            s_msg(&s0, &m, pay, 40);
            m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 2, 0, true);
            s_msg(&s0, &m, pay, 40);
            flush(K, 0, &s0, 1460);
            break;
        case 5: { /* the responder Terminates, then sends on (RFC 5040 §5.4) */
            iw_rdmap_msg t = iw_rdmap_msg_untagged(IW_OP_TERMINATE, 2, 1, 0, true);
            s_msg(&s1, &t, NULL, 0); /* 0/0/0x00 RDMA Local Catastrophic Error */
            flush(K, 1, &s1, 1460);
            m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 1, 0, true);
            s_msg(&s1, &m, pay, 24);
            flush(K, 1, &s1, 1460);
            break;
        }
        case 6: /* Send with Invalidate of an STag it already invalidated */
            m = iw_rdmap_msg_untagged(IW_OP_SEND_INV, 0, 2, 0, true);
            m.ddp.rsvd_ulp2 = 0x7701;
            s_msg(&s0, &m, pay, 16);
            m = iw_rdmap_msg_untagged(IW_OP_SEND_SE_INV, 0, 3, 0, true);
            m.ddp.rsvd_ulp2 = 0x7701;
            s_msg(&s0, &m, pay, 16);
            flush(K, 0, &s0, 1460);
            break;
        default: /* an RDMA Write to an STag a Send with Invalidate invalidated */
            m = iw_rdmap_msg_untagged(IW_OP_SEND_INV, 0, 2, 0, true);
            m.ddp.rsvd_ulp2 = 0x7702;
            s_msg(&s0, &m, pay, 16);
            flush(K, 0, &s0, 1460);
            m = iw_rdmap_msg_tagged(IW_OP_WRITE, 0x7702, 0x10000, true);
            s_msg(&s0, &m, pay, 64);
            flush(K, 0, &s0, 1460);
            break;
        }
        tcp_close(K);
        free(s0.buf);
        free(s1.buf);
    }
    cap_close(c);
}

/* Random octets on the iWARP port (replayed with Decode As): no crash. */
static void gen_garbage(const char *dir) {
    iw_pcapw_file *c = cap_open(dir, "garbage.pcap");
    conn k = conn_new(c, 50, 44001, 4791, 1, 1);
    uint32_t x = 12345;
    uint8_t b[1500];
    for (int i = 0; i < 40; i++) {
        size_t n = 1 + (size_t)(x % 1400);
        for (size_t j = 0; j < n; j++) {
            x = x * 1103515245u + 12345u;
            b[j] = (uint8_t)(x >> 16);
        }
        /* Sometimes a plausible start: 00 00 marker or a big length. */
        if (i % 5 == 0)
            b[0] = b[1] = 0;
        if (i % 7 == 0 && n > 20)
            memcpy(b, "MPA ID Req Frame", 16);
        iw_pcapw_seg(&k, i & 1, IW_TH_PSH | IW_TH_ACK, b, n);
    }
    cap_close(c);
}

/* Benchmark capture: 8 connections, MPA v1 startups, CRC on, no markers
 * (so Wireshark's built-in dissectors decode the same stream), until about
 * mb megabytes are written. Each connection cycles through four rounds so
 * that TCP reassembly is exercised as on real links:
 *   0: one 1380-octet Send per segment (FPDU aligned with the segment);
 *   1: four 200-octet Sends coalesced into one segment (several FPDUs);
 *   2: a 4152-octet RDMA Write as three FPDUs sent at an MSS of 1460, so
 *      that the second and third FPDUs straddle segment boundaries;
 *   3: a Read Request and its Read Response.
 * The receiver acknowledges each round with a pure ACK, as a real one does
 * (RFC 1122 §4.2.3.2: at least every second full-sized segment): without
 * ACKs Wireshark's TCP analysis walks an ever-growing list of unacknowledged
 * segments per packet, a quadratic cost that would swamp the iWARP
 * dissectors being compared. */
static void gen_bench(const char *path, unsigned mb) {
    iw_pcapw_file *c = cap_open_path(path);
    enum { NC = 8, SMALL = 200, SMALL_N = 4, BIG = 1380, WSEG = 1384, WSEGS = 3 };
    conn k[NC];
    stream s0[NC], s1[NC];
    uint32_t msn[NC], rmsn[NC];
    for (int i = 0; i < NC; i++) {
        k[i] = conn_new(c, (uint8_t)(100 + i), (uint16_t)(45000 + i), 4791, 1000u * (uint32_t)i, 7);
        s0[i] = stream_new();
        s1[i] = stream_new();
        iw_mpa_rr req = rr_v1(IW_MPA_REQUEST, false, true);
        iw_mpa_rr rep = rr_v1(IW_MPA_REPLY, false, true);
        startup(&k[i], &s0[i], &s1[i], &req, &rep);
        msn[i] = rmsn[i] = 1;
    }
    uint8_t pay[1400];
    fill(pay, sizeof pay, 42);
    uint64_t target = (uint64_t)mb << 20, written = 0;
    for (uint64_t n = 0; written < target; n++) {
        int i = (int)(n % NC);
        stream *a = &s0[i], *b = &s1[i];
        size_t before = a->len + b->len;
        iw_rdmap_msg m;
        switch ((n / NC) % 4) {
        case 0:
            m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, msn[i]++, 0, true);
            s_msg(a, &m, pay, BIG);
            flush(&k[i], 0, a, 1460);
            break;
        case 1:
            for (int j = 0; j < SMALL_N; j++) {
                m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, msn[i]++, 0, true);
                s_msg(a, &m, pay + j, SMALL);
            }
            flush(&k[i], 0, a, 1460);
            break;
        case 2:
            /* One message, three tagged segments (RFC 5041 §5.2). */
            for (int j = 0; j < WSEGS; j++) {
                m = iw_rdmap_msg_tagged(IW_OP_WRITE, 0x100 + (uint32_t)i,
                                        n * 16384 + (uint64_t)j * WSEG, j == WSEGS - 1);
                s_msg(a, &m, pay, WSEG);
            }
            flush(&k[i], 0, a, 1460);
            break;
        default:
            m = iw_rdmap_msg_untagged(IW_OP_READ_REQ, 1, rmsn[i]++, 0, true);
            m.u.read_req.sink_stag = 0x200 + (uint32_t)i;
            m.u.read_req.sink_to = n * 4096;
            m.u.read_req.read_size = WSEG;
            m.u.read_req.src_stag = 0x300;
            s_msg(a, &m, NULL, 0);
            flush(&k[i], 0, a, 1460);
            m = iw_rdmap_msg_tagged(IW_OP_READ_RESP, 0x200 + (uint32_t)i, n * 4096, true);
            s_msg(b, &m, pay, WSEG);
            flush(&k[i], 1, b, 1460);
            break;
        }
        /* The initiator's data acknowledged by the responder. */
        iw_pcapw_seg(&k[i], 1, IW_TH_ACK, NULL, 0);
        written += a->len + b->len - before;
        /* Keep the stream buffers small: restart them (positions stay). */
        if (a->len > STREAM_MAX / 2) {
            a->len = a->sent = 0;
        }
        if (b->len > STREAM_MAX / 2) {
            b->len = b->sent = 0;
        }
    }
    cap_close(c);
}

#include "iwk-pcapgen-storage.inc.c"

/* Atomic Requests whose remote TO is not 64-bit aligned (RFC 7306 §5.1.1):
 * a receiver must Terminate them whatever the STag (§8.2: 0/2/0x07 unless
 * an STag check fires first). An aligned FetchAdd and its response first,
 * then a misaligned one the responder terminates (its DDP header copied,
 * §8.1). */
static void gen_atomic_misaligned(const char *dir) {
    iw_pcapw_file *c = cap_open(dir, "atomic-misaligned.pcap");
    conn k = conn_new(c, 60, 40060, 4791, 7000, 9000);
    stream s0 = stream_new(), s1 = stream_new();
    iw_mpa_rr req = rr_v1(IW_MPA_REQUEST, false, true);
    iw_mpa_rr rep = rr_v1(IW_MPA_REPLY, false, true);
    startup(&k, &s0, &s1, &req, &rep);
    iw_rdmap_msg m = iw_rdmap_msg_untagged(IW_OP_ATOMIC_REQ, 1, 1, 0, true);
    m.u.atomic_req.aopcode = IW_ATOMIC_FETCH_ADD;
    m.u.atomic_req.req_id = 1;
    m.u.atomic_req.stag = 0x0000CC01;
    m.u.atomic_req.to = 0x3000;
    m.u.atomic_req.add_swap = 1;
    m.u.atomic_req.compare_mask = ~0ull;
    s_msg(&s0, &m, NULL, 0);
    flush(&k, 0, &s0, 1460);
    iw_rdmap_msg r = iw_rdmap_msg_untagged(IW_OP_ATOMIC_RESP, 3, 1, 0, true);
    r.u.atomic_resp.req_id = 1;
    r.u.atomic_resp.orig = 41;
    s_msg(&s1, &r, NULL, 0);
    flush(&k, 1, &s1, 1460);
    m = iw_rdmap_msg_untagged(IW_OP_ATOMIC_REQ, 1, 2, 0, true);
    m.u.atomic_req.aopcode = IW_ATOMIC_CMP_SWAP;
    m.u.atomic_req.req_id = 2;
    m.u.atomic_req.stag = 0x0000CC01;
    m.u.atomic_req.to = 0x3004; /* 4-octet aligned only */
    m.u.atomic_req.add_swap = 7;
    m.u.atomic_req.add_swap_mask = ~0ull;
    m.u.atomic_req.compare_mask = ~0ull;
    s_msg(&s0, &m, NULL, 0);
    flush(&k, 0, &s0, 1460);
    terminate_about(&s1, 1, &m, IW_DDP_UNTAGGED_HDR_LEN + IW_RDMAP_ATOMIC_REQ_LEN,
                    IW_TERM_RDMAP_CATASTROPHIC_STREAM, false);
    flush(&k, 1, &s1, 1460);
    tcp_close(&k);
    cap_close(c);
    free(s0.buf);
    free(s1.buf);
}

/* Terminates in Linux siw's layout (drivers/infiniband/sw/siw/iwarp.h: the
 * Terminate Control is a little-endian bitfield): 2/0/0x02 for an FPDU with
 * a bad CRC (octets 02 02 00 00), and 1/1/0x00 with M, D, a 33-octet segment
 * length and the copied tagged header of a Write to an unknown STag
 * (11 00 03 00 00 21 ...). */
static void gen_siw_terminate(const char *dir) {
    iw_pcapw_file *c = cap_open(dir, "siw-terminate-layout.pcap");
    uint8_t pay[64];
    fill(pay, sizeof pay, 3);
    {
        conn k = conn_new(c, 61, 40061, 4791, 100, 200);
        stream s0 = stream_new(), s1 = stream_new();
        iw_mpa_rr req = rr_v1(IW_MPA_REQUEST, false, true);
        iw_mpa_rr rep = rr_v1(IW_MPA_REPLY, false, true);
        startup(&k, &s0, &s1, &req, &rep);
        iw_rdmap_msg m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 1, 0, true);
        s_msg(&s0, &m, pay, 24);
        s0.buf[s0.len - 1] ^= 0x5A; /* CRC no longer matches */
        flush(&k, 0, &s0, 1460);
        terminate_siw(&s1, &m, 0, IW_TERM_LLP_MPA_CRC, false);
        flush(&k, 1, &s1, 1460);
        tcp_close(&k);
        free(s0.buf);
        free(s1.buf);
    }
    {
        conn k = conn_new(c, 62, 40062, 4791, 300, 400);
        stream s0 = stream_new(), s1 = stream_new();
        iw_mpa_rr req = rr_v1(IW_MPA_REQUEST, false, true);
        iw_mpa_rr rep = rr_v1(IW_MPA_REPLY, false, true);
        startup(&k, &s0, &s1, &req, &rep);
        iw_rdmap_msg m = iw_rdmap_msg_tagged(IW_OP_WRITE, 0x101, 0x1000, true);
        s_msg(&s0, &m, pay, 33);
        flush(&k, 0, &s0, 1460);
        terminate_siw(&s1, &m, 33, IW_TERM_DDP_T_INVALID_STAG, true);
        flush(&k, 1, &s1, 1460);
        tcp_close(&k);
        free(s0.buf);
        free(s1.buf);
    }
    cap_close(c);
}

/* ---------------- DDP over SCTP (RFC 5043) ---------------- */

/* One SCTP association over IPv4 (RFC 4960 §3: common header, chunks,
 * CRC32c over the packet, placed as MPA places it, RFC 3309). */
typedef struct {
    conn *k;          /* addresses, ports and the capture sink */
    uint32_t vtag[2]; /* the tag each side puts in its packets (the peer's) */
    uint32_t tsn[2];
    uint16_t ipid[2];
} sctp_assoc;

static void sctp_packet(sctp_assoc *a, int from, uint32_t vtag, const uint8_t *chunks, size_t n) {
    uint8_t pkt[20 + 12 + 2048];
    if (n > sizeof pkt - 32)
        die("sctp packet too large");
    conn *k = a->k;
    uint8_t *sh = pkt + 20;
    iw_pcapw_ip4(pkt, k, from, 132 /* SCTP */, ++a->ipid[from], 12 + n);
    memset(sh, 0, 12);
    iw_pcapw_put16(sh, k->port[from]);
    iw_pcapw_put16(sh + 2, k->port[!from]);
    iw_pcapw_put32(sh + 4, vtag);
    memcpy(sh + 12, chunks, n);
    iw_crc32c_put(sh + 8, iw_crc32c(sh, 12 + n));
    k->sink(k->sink_ctx, 4, from, pkt, 32 + n);
}

/* A chunk: type, flags, length, value, padded to 4 (RFC 4960 §3.2). */
static size_t sctp_chunk(uint8_t *out, uint8_t type, uint8_t flags, const uint8_t *v, size_t n) {
    out[0] = type;
    out[1] = flags;
    iw_pcapw_put16(out + 2, (uint16_t)(4 + n));
    if (n)
        memcpy(out + 4, v, n);
    size_t padded = (4 + n + 3) & ~(size_t)3;
    memset(out + 4 + n, 0, padded - 4 - n);
    return padded;
}

/* INIT or INIT ACK with the DDP Adaptation Layer Indication (§5.1), and
 * for INIT ACK a State Cookie. */
static void sctp_init(sctp_assoc *a, int from, bool ack, uint32_t vtag) {
    uint8_t v[64], c[96];
    size_t n = 16;
    iw_pcapw_put32(v, a->vtag[!from]); /* Initiate Tag: what the peer must send */
    iw_pcapw_put32(v + 4, 65536);
    iw_pcapw_put16(v + 8, 4); /* outbound streams */
    iw_pcapw_put16(v + 10, 4);
    iw_pcapw_put32(v + 12, a->tsn[from]);
    iw_ssize r = iw_sctp_adapt_encode(v + n, sizeof v - n, IW_SCTP_ADAPT_DDP);
    if (r < 0)
        die("adapt encode");
    n += (size_t)r;
    if (ack) { /* State Cookie, type 7 */
        iw_pcapw_put16(v + n, 7);
        iw_pcapw_put16(v + n + 2, 12);
        memcpy(v + n + 4, "iwkcooki", 8);
        n += 12;
    }
    size_t cl = sctp_chunk(c, ack ? 2 : 1, 0, v, n);
    sctp_packet(a, from, vtag, c, cl);
}

/* Four-way handshake (RFC 4960 §5.1), side 0 initiating. */
static void sctp_assoc_open(sctp_assoc *a) {
    uint8_t c[32];
    sctp_init(a, 0, false, 0);
    sctp_init(a, 1, true, a->vtag[1]);
    sctp_packet(a, 0, a->vtag[0], c, sctp_chunk(c, 10, 0, (const uint8_t *)"iwkcooki", 8));
    sctp_packet(a, 1, a->vtag[1], c, sctp_chunk(c, 11, 0, NULL, 0));
}

/* One unordered DATA chunk (RFC 5043 §5.2: U=1, B=E=1) on stream sid. */
static void sctp_data(sctp_assoc *a, int from, uint16_t sid, uint32_t ppid, const uint8_t *p,
                      size_t n) {
    uint8_t v[2048], c[2048 + 8];
    if (n + 12 > sizeof v)
        die("sctp data too large");
    iw_pcapw_put32(v, a->tsn[from]++);
    iw_pcapw_put16(v + 4, sid);
    iw_pcapw_put16(v + 6, 0); /* SSN: unused for unordered chunks */
    iw_pcapw_put32(v + 8, ppid);
    memcpy(v + 12, p, n);
    sctp_packet(a, from, a->vtag[from], c, sctp_chunk(c, 0, 0x07, v, 12 + n));
}

static void sctp_ctrl(sctp_assoc *a, int from, uint16_t sid, const iw_sctp_ctrl *ctl) {
    uint8_t b[IW_SCTP_CTRL_HDR_LEN + IW_SCTP_PD_MAX];
    iw_ssize n = iw_sctp_ctrl_encode(b, sizeof b, ctl);
    if (n < 0)
        die("sctp ctrl encode");
    sctp_data(a, from, sid, IW_SCTP_PPID_DDP_CONTROL, b, (size_t)n);
}

static void sctp_msg(sctp_assoc *a, int from, uint16_t sid, uint16_t ssn, const iw_rdmap_msg *m,
                     const uint8_t *pay, size_t pl) {
    uint8_t h[128], b[2048];
    iw_ssize hl = iw_rdmap_encode_hdr(h, sizeof h, m);
    if (hl < 0)
        die("rdmap encode");
    iw_ssize n = iw_sctp_seg_encode(b, sizeof b, ssn, h, (size_t)hl, pay, pl);
    if (n < 0)
        die("sctp seg encode");
    sctp_data(a, from, sid, IW_SCTP_PPID_DDP_SEGMENT, b, (size_t)n);
}

/* An association carrying DDP (RFC 5043): stream 1 accepted (enhanced,
 * RFC 6581 §7) and used for a Send, a Write, a Read Request and its
 * two-segment Response, then terminated; stream 2 rejected; stream 3 a
 * Terminate with Private Data (§5.2.3 forbids it). */
static void gen_sctp_ddp(const char *dir) {
    iw_pcapw_file *c = cap_open(dir, "sctp-ddp.pcap");
    conn k = conn_new(c, 12, 5043, 4791, 0, 0);
    sctp_assoc a = {.k = &k, .vtag = {0x5C7B0001u, 0x5C7B0002u}, .tsn = {1000, 5000}};
    sctp_assoc_open(&a);
    uint8_t pay[1024];
    fill(pay, sizeof pay, 12);
    static const uint8_t hello[] = "iwarpkit over SCTP";
    iw_sctp_ctrl ctl = {
        .fc = IW_SCTP_FC_ENH_INITIATE, .ulp_pd = hello, .ulp_pd_len = sizeof hello - 1};
    ctl.v2.ird = 4;
    ctl.v2.ord = 4;
    sctp_ctrl(&a, 0, 1, &ctl);
    ctl.fc = IW_SCTP_FC_ENH_ACCEPT;
    ctl.ssn = 0;
    ctl.ulp_pd_len = 0;
    sctp_ctrl(&a, 1, 1, &ctl);
    /* §6.1: DDP-SSN restarts at 0 with each session; the control chunk took 0. */
    iw_rdmap_msg m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 1, 0, true);
    sctp_msg(&a, 0, 1, 1, &m, pay, 100);
    m = iw_rdmap_msg_tagged(IW_OP_WRITE, 0x0000AB01, 0x4000, true);
    sctp_msg(&a, 0, 1, 2, &m, pay, 256);
    m = iw_rdmap_msg_untagged(IW_OP_READ_REQ, 1, 1, 0, true);
    m.u.read_req.sink_stag = 0x0000AA01;
    m.u.read_req.sink_to = 0x9000;
    m.u.read_req.read_size = 1000;
    m.u.read_req.src_stag = 0x0000BB01;
    m.u.read_req.src_to = 0x100;
    sctp_msg(&a, 0, 1, 3, &m, NULL, 0);
    m = iw_rdmap_msg_tagged(IW_OP_READ_RESP, 0x0000AA01, 0x9000, false);
    sctp_msg(&a, 1, 1, 1, &m, pay, 600);
    m = iw_rdmap_msg_tagged(IW_OP_READ_RESP, 0x0000AA01, 0x9000 + 600, true);
    sctp_msg(&a, 1, 1, 2, &m, pay + 600, 400);
    iw_sctp_ctrl term = {.fc = IW_SCTP_FC_TERMINATE, .ssn = 4};
    sctp_ctrl(&a, 0, 1, &term);
    /* Stream 2: Initiate, Reject with a reason. */
    static const uint8_t why[] = "no such service";
    iw_sctp_ctrl i2 = {.fc = IW_SCTP_FC_INITIATE, .ulp_pd = hello, .ulp_pd_len = 4};
    sctp_ctrl(&a, 0, 2, &i2);
    iw_sctp_ctrl r2 = {.fc = IW_SCTP_FC_REJECT, .ulp_pd = why, .ulp_pd_len = sizeof why - 1};
    sctp_ctrl(&a, 1, 2, &r2);
    /* Stream 3: a Terminate carrying Private Data, crafted. */
    const uint8_t bad[] = {0x00, 0x00, 0x00, 0x04, 0xEE, 0xEE};
    sctp_data(&a, 0, 3, IW_SCTP_PPID_DDP_CONTROL, bad, sizeof bad);
    /* Stream 4: a session whose second Send skips DDP-SSN 2 and MSN 2 (SCTP
     * delivers unordered, so DDP-SSN 3 waits for 2, §10, and the shadow
     * never analyses it: the capture ends first), then a third Send that
     * uses DDP-SSN 3 again (§6.1: each once; the shadow's MSN check flags
     * its MSN 4 after MSN 1, as over MPA). */
    iw_sctp_ctrl i4 = {.fc = IW_SCTP_FC_INITIATE};
    sctp_ctrl(&a, 0, 4, &i4);
    iw_sctp_ctrl a4 = {.fc = IW_SCTP_FC_ACCEPT};
    sctp_ctrl(&a, 1, 4, &a4);
    m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 1, 0, true);
    sctp_msg(&a, 0, 4, 1, &m, pay, 40);
    m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 3, 0, true);
    sctp_msg(&a, 0, 4, 3, &m, pay, 40);
    m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 4, 0, true);
    sctp_msg(&a, 0, 4, 3, &m, pay, 40);
    /* Stream 5: chunks captured against their DDP-SSN order (§5.2.1: sent
     * unordered). The Send with DDP-SSN 2 (MSN 2) comes before DDP-SSN 1
     * (MSN 1); the Terminate (DDP-SSN 4) before the Write (DDP-SSN 3) it
     * follows in DDP-SSN order. A receiver takes them in DDP-SSN order
     * (§6.1), and so does the shadow: nothing is "after the Terminate". */
    iw_sctp_ctrl i5 = {.fc = IW_SCTP_FC_INITIATE};
    sctp_ctrl(&a, 0, 5, &i5);
    iw_sctp_ctrl a5 = {.fc = IW_SCTP_FC_ACCEPT};
    sctp_ctrl(&a, 1, 5, &a5);
    m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 2, 0, true);
    sctp_msg(&a, 0, 5, 2, &m, pay, 30);
    m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 1, 0, true);
    sctp_msg(&a, 0, 5, 1, &m, pay, 20);
    iw_rdmap_msg t5 = iw_rdmap_msg_untagged(IW_OP_TERMINATE, 2, 1, 0, true);
    t5.u.term.layer = (uint8_t)iw_term_layer(IW_TERM_RDMAP_INVALID_STAG);
    t5.u.term.etype = (uint8_t)iw_term_etype(IW_TERM_RDMAP_INVALID_STAG);
    t5.u.term.ecode = (uint8_t)iw_term_ecode(IW_TERM_RDMAP_INVALID_STAG);
    sctp_msg(&a, 0, 5, 4, &t5, NULL, 0);
    m = iw_rdmap_msg_tagged(IW_OP_WRITE, 0x0000AB05, 0x5000, true);
    sctp_msg(&a, 0, 5, 3, &m, pay, 64);
    cap_close(c);
}

/* A startup frame whose key is neither RFC 5044 key ("MPA ID Xxx Frame"):
 * the responder closes (§7.1.2 rule 5). */
static void gen_bad_mpa_key(const char *dir) {
    iw_pcapw_file *c = cap_open(dir, "bad-mpa-key.pcap");
    conn k = conn_new(c, 63, 40063, 4791, 500, 600);
    stream s0 = stream_new();
    tcp_open(&k);
    uint8_t f[20] = "MPA ID Xxx Frame";
    f[16] = 0x40; /* C */
    f[17] = 1;    /* Rev 1, no Private Data */
    s_raw(&s0, f, sizeof f);
    flush(&k, 0, &s0, 1460);
    tcp_close(&k);
    cap_close(c);
    free(s0.buf);
}

/* Octets a side sent that the capture does not hold (a dropped segment):
 * its sequence number moves on and the peer's ACKs cover them. */
static void skip(conn *k, int side, stream *s) {
    k->next[side] += (uint32_t)(s->len - s->sent);
    s->sent = s->len;
}

/* n octets a side sent that the capture does not hold. */
static void skip_n(conn *k, int side, stream *s, size_t n) {
    k->next[side] += (uint32_t)n;
    s->sent += n;
}

/* Framing found again where no segment starts at an FPDU, with markers and
 * CRCs: i2r loses one 90-octet segment inside a Write (the peer's ACKs
 * cover it); r2i's Read Response has a corrupted ULPDU_Length, so its CRC
 * fails and nothing locates the next FPDU (RFC 5044 §6). Both tools look
 * again at every 4-aligned grid position (iw_mpa_sync_every4) and take the
 * next FPDU whose CRC verifies: the Read Request, the 200-octet Send. */
static void gen_resync(const char *dir) {
    iw_pcapw_file *c = cap_open(dir, "resync.pcap");
    uint8_t pay[400];
    fill(pay, sizeof pay, 33);
    conn k = conn_new(c, 95, 47010, 4791, 1, 1);
    stream s0 = stream_new(), s1 = stream_new();
    iw_mpa_rr req = rr_v1(IW_MPA_REQUEST, true, true);
    iw_mpa_rr rep = rr_v1(IW_MPA_REPLY, true, true);
    tcp_open(&k);
    s_rr(&s0, &req);
    flush(&k, 0, &s0, 1460);
    s_rr(&s1, &rep);
    flush(&k, 1, &s1, 1460);
    s0.flags = s1.flags = IW_MPA_CRC | IW_MPA_MARKERS;
    iw_rdmap_msg m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 1, 0, true);
    s_msg(&s0, &m, pay, 40);
    m = iw_rdmap_msg_untagged(IW_OP_SEND_SE, 0, 2, 0, true);
    s_msg(&s0, &m, pay, 23);
    m = iw_rdmap_msg_tagged(IW_OP_WRITE, 0x1234, 0x10000, true);
    s_msg(&s0, &m, pay, 300);
    m = iw_rdmap_msg_untagged(IW_OP_READ_REQ, 1, 1, 0, true);
    m.u.read_req.sink_stag = 0x77;
    m.u.read_req.sink_to = 0x2000;
    m.u.read_req.read_size = 64;
    m.u.read_req.src_stag = 0x88;
    m.u.read_req.src_to = 0x3000;
    s_msg(&s0, &m, NULL, 0);
    m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 3, 0, true);
    s_msg(&s0, &m, pay, 120);
    static const size_t cuts[] = {90, 90};
    for (size_t i = 0; i < 2; i++) {
        iw_pcapw_seg(&k, 0, IW_TH_PSH | IW_TH_ACK, s0.buf + s0.sent, cuts[i]);
        s0.sent += cuts[i];
    }
    skip_n(&k, 0, &s0, 90);
    flush(&k, 0, &s0, 90);
    m = iw_rdmap_msg_tagged(IW_OP_READ_RESP, 0x77, 0x2000, true);
    s_msg(&s1, &m, pay, 64);
    m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 1, 0, true);
    s_msg(&s1, &m, pay, 200);
    m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 2, 0, true);
    s_msg(&s1, &m, pay, 30);
    /* The Read Response's ULPDU_Length, after the marker at grid position 0. */
    s1.buf[IW_MPA_RR_HDR_LEN + IW_MPA_MARKER_LEN + 1] ^= 0x10;
    flush(&k, 1, &s1, 90);
    tcp_close(&k);
    cap_close(c);
    free(s0.buf);
    free(s1.buf);
}

/* Startups the capture holds only half of: one side's MPA frame missing,
 * incomplete or with a bad key. Full Operation still starts where RFC 5044
 * §4.3 puts it, and its first FPDU says what the missing frame would have
 * (§7.1.2 rule 7 markers; CRCs from the frame that is there). */
static void gen_half_startup(const char *dir) {
    iw_pcapw_file *c = cap_open(dir, "half-startup.pcap");
    uint8_t pay[700];
    fill(pay, sizeof pay, 21);
    /* Reply not captured; the first FPDU carries DDP version 0: 1/2/0x06. */
    {
        conn k = conn_new(c, 90, 47001, 4791, 1, 1);
        stream s0 = stream_new(), s1 = stream_new();
        iw_mpa_rr req = rr_v1(IW_MPA_REQUEST, false, true);
        iw_mpa_rr rep = rr_v1(IW_MPA_REPLY, false, true);
        tcp_open(&k);
        s_rr(&s0, &req);
        flush(&k, 0, &s0, 1460);
        s_rr(&s1, &rep);
        skip(&k, 1, &s1);
        s0.flags = IW_MPA_CRC;
        iw_rdmap_msg m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 1, 0, true);
        uint8_t h[64];
        iw_ssize hl = iw_rdmap_encode_hdr(h, sizeof h, &m);
        if (hl < 0)
            die("rdmap encode");
        h[0] &= (uint8_t)~IW_DDP_CTRL_DV; /* DV 0 (RDMAC), CRC over it */
        s_fpdu_raw(&s0, h, (size_t)hl, pay, 16);
        m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 2, 0, true);
        s_msg(&s0, &m, pay, 24);
        flush(&k, 0, &s0, 1460);
        tcp_close(&k);
        free(s0.buf);
        free(s1.buf);
    }
    /* Reply (M=1) not captured; the first FPDU's second marker points
     * wrong under a good CRC: 2/0/0x03. */
    {
        conn k = conn_new(c, 91, 47002, 4791, 1, 1);
        stream s0 = stream_new(), s1 = stream_new();
        iw_mpa_rr req = rr_v1(IW_MPA_REQUEST, false, true);
        iw_mpa_rr rep = rr_v1(IW_MPA_REPLY, true, true);
        tcp_open(&k);
        s_rr(&s0, &req);
        flush(&k, 0, &s0, 1460);
        s_rr(&s1, &rep);
        skip(&k, 1, &s1);
        s0.flags = IW_MPA_CRC | IW_MPA_MARKERS;
        size_t at = s0.len;
        iw_rdmap_msg m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 1, 0, true);
        s_msg(&s0, &m, pay, 700);
        s0.buf[at + 512 + 3] ^= 0x10;
        size_t total = s0.len - at;
        iw_crc32c_put(s0.buf + at + total - 4, iw_crc32c(s0.buf + at, total - 4));
        flush(&k, 0, &s0, 1460);
        tcp_close(&k);
        free(s0.buf);
        free(s1.buf);
    }
    /* Reply whose PD_Length (160) the responder never sends: its M bit is
     * never known; the initiator's second Send has a bad CRC: 2/0/0x02. */
    {
        conn k = conn_new(c, 92, 47003, 4791, 1, 1);
        stream s0 = stream_new(), s1 = stream_new();
        iw_mpa_rr req = rr_v1(IW_MPA_REQUEST, false, true);
        tcp_open(&k);
        s_rr(&s0, &req);
        flush(&k, 0, &s0, 1460);
        uint8_t f[20] = "MPA ID Rep Frame";
        f[16] = 0x40;
        f[17] = 1;
        f[18] = 0;
        f[19] = 160;
        s_raw(&s1, f, 20);
        flush(&k, 1, &s1, 1460);
        s0.flags = IW_MPA_CRC;
        for (uint32_t i = 0; i < 2; i++) {
            iw_rdmap_msg m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 1 + i, 0, true);
            size_t before = s0.len;
            s_msg(&s0, &m, pay, 64);
            if (i == 1)
                s0.buf[before + 30] ^= 0x01;
            flush(&k, 0, &s0, 1460);
        }
        tcp_close(&k);
        free(s0.buf);
        free(s1.buf);
    }
    /* Reply with one key octet wrong outside "MPA ID ??? Frame": still the
     * Reply due there, so the initiator closes (§7.1.2 rule 5). */
    {
        conn k = conn_new(c, 93, 47004, 4791, 1, 1);
        stream s0 = stream_new(), s1 = stream_new();
        iw_mpa_rr req = rr_v1(IW_MPA_REQUEST, false, true);
        iw_mpa_rr rep = rr_v1(IW_MPA_REPLY, false, true);
        tcp_open(&k);
        s_rr(&s0, &req);
        flush(&k, 0, &s0, 1460);
        s_rr(&s1, &rep);
        s1.buf[6] = ',';
        flush(&k, 1, &s1, 1460);
        tcp_close(&k);
        free(s0.buf);
        free(s1.buf);
    }
    /* Request not captured: the Read Request after it is in the same lost
     * stretch for iwarp-decode (a TCP gap ends a direction), so the Read
     * Response must not be judged as answering nothing. */
    {
        conn k = conn_new(c, 94, 47005, 4791, 1, 1);
        stream s0 = stream_new(), s1 = stream_new();
        iw_mpa_rr req = rr_v1(IW_MPA_REQUEST, false, true);
        iw_mpa_rr rep = rr_v1(IW_MPA_REPLY, false, true);
        tcp_open(&k);
        s_rr(&s0, &req);
        skip(&k, 0, &s0);
        s_rr(&s1, &rep);
        flush(&k, 1, &s1, 1460);
        s0.flags = s1.flags = IW_MPA_CRC;
        iw_rdmap_msg m = iw_rdmap_msg_untagged(IW_OP_READ_REQ, 1, 1, 0, true);
        m.u.read_req.sink_stag = 0x0000AA01;
        m.u.read_req.sink_to = 0x1000;
        m.u.read_req.read_size = 64;
        m.u.read_req.src_stag = 0x0000BB01;
        m.u.read_req.src_to = 0x2000;
        s_msg(&s0, &m, NULL, 0);
        flush(&k, 0, &s0, 1460);
        m = iw_rdmap_msg_tagged(IW_OP_READ_RESP, 0x0000AA01, 0x1000, true);
        s_msg(&s1, &m, pay, 64);
        flush(&k, 1, &s1, 1460);
        tcp_close(&k);
        free(s0.buf);
        free(s1.buf);
    }
    cap_close(c);
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "--bench") == 0) {
        gen_bench(argv[2], (unsigned)atoi(argv[3]));
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: iwk-pcapgen OUTDIR | iwk-pcapgen --bench FILE.pcap MEGABYTES\n");
        return 2;
    }
    const char *d = argv[1];
    gen_v1_crc_all_opcodes(d);
    gen_v2_p2p_markers(d);
    gen_v2_short_sends(d);
    gen_v1_markers_nocrc(d);
    gen_midstream_crc(d);
    gen_midstream_markers(d);
    gen_seqwrap(d);
    gen_reject_terminate(d);
    gen_bad_crc(d);
    gen_bad_ddp_rdmap(d);
    gen_bad_mpa(d);
    gen_bad_v2(d);
    gen_bad_sequence(d);
    gen_bad_stateful(d);
    gen_garbage(d);
    gen_storage(d);
    gen_atomic_misaligned(d);
    gen_siw_terminate(d);
    gen_bad_mpa_key(d);
    gen_midstream_long(d);
    gen_sctp_ddp(d);
    gen_half_startup(d);
    gen_resync(d);
    return 0;
}
