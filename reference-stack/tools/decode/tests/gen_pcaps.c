/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gen_pcaps: synthetic captures for iwarp-decode's capture mode. The iWARP
 * streams come from libiwarp's encoders; the pcap and pcapng files, link
 * headers, IP and TCP are written here byte by byte, so the tests control
 * every field: reordered, duplicated, missing and conflicting segments,
 * every supported link type, IPv6 extension headers, TCP options, snap
 * length cuts, malformed packets and a file cut inside a record.
 *
 *   gen_pcaps OUTDIR
 *
 * Output is deterministic (fixed addresses, sequence numbers and clock). */
#include <iwarp/iwarp.h>
#include <iw_pcapw.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* File link types (LINKTYPE_*). */
#define LT_NULL 0
#define LT_ETH 1
#define LT_RAW 101
#define LT_LOOP 108
#define LT_SLL 113
#define LT_IPV4 228
#define LT_IPV6 229
#define LT_SLL2 276

enum { F_PCAP_US, F_PCAP_NS, F_PCAP_BE, F_PCAPNG };

static void die(const char *what) {
    fprintf(stderr, "gen_pcaps: %s\n", what);
    exit(1);
}

/* ---- capture files ---- */

typedef struct cap {
    FILE *f;
    int fmt, lt;
    uint32_t snap;
    uint64_t usec;
    /* packet shape */
    bool vlan, tcpopts, v6ext;
    uint32_t null_af6; /* AF_INET6 value for DLT_NULL/LOOP */
} cap;

static void w32(cap *c, uint32_t v) {
    uint8_t b[4];
    if (c->fmt == F_PCAP_BE) {
        iw_pcapw_put32(b, v);
    } else {
        b[0] = (uint8_t)v;
        b[1] = (uint8_t)(v >> 8);
        b[2] = (uint8_t)(v >> 16);
        b[3] = (uint8_t)(v >> 24);
    }
    fwrite(b, 1, 4, c->f);
}
static void w16(cap *c, uint16_t v) {
    uint8_t b[2];
    if (c->fmt == F_PCAP_BE)
        iw_pcapw_put16(b, v);
    else {
        b[0] = (uint8_t)v;
        b[1] = (uint8_t)(v >> 8);
    }
    fwrite(b, 1, 2, c->f);
}

static cap cap_open(const char *dir, const char *name, int fmt, int lt, uint32_t snap) {
    cap c;
    memset(&c, 0, sizeof c);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    c.f = fopen(path, "wb");
    if (!c.f)
        die(path);
    c.fmt = fmt;
    c.lt = lt;
    c.snap = snap ? snap : 65535;
    c.usec = 0;
    c.null_af6 = 10;
    if (fmt == F_PCAPNG) {
        /* Section Header Block, then one Interface Description Block
         * (microsecond timestamps, the default if_tsresol). */
        w32(&c, 0x0A0D0D0A);
        w32(&c, 28);
        w32(&c, 0x1A2B3C4D);
        w16(&c, 1);
        w16(&c, 0);
        w32(&c, 0xFFFFFFFF);
        w32(&c, 0xFFFFFFFF);
        w32(&c, 28);
        w32(&c, 1);
        w32(&c, 20);
        w16(&c, (uint16_t)lt);
        w16(&c, 0);
        w32(&c, c.snap);
        w32(&c, 20);
    } else {
        w32(&c, fmt == F_PCAP_NS ? 0xA1B23C4Du : 0xA1B2C3D4u);
        w16(&c, 2);
        w16(&c, 4);
        w32(&c, 0);
        w32(&c, 0);
        w32(&c, c.snap);
        w32(&c, (uint32_t)lt);
    }
    return c;
}

/* One record: caplen octets of a packet that had len. */
static void cap_record_raw(cap *c, const uint8_t *p, size_t caplen, size_t len) {
    c->usec += 100;
    uint64_t sec = 1700000000ull + c->usec / 1000000, us = c->usec % 1000000;
    if (c->fmt == F_PCAPNG) {
        size_t pad = (4 - caplen % 4) % 4;
        uint32_t blen = (uint32_t)(32 + caplen + pad);
        uint64_t t = sec * 1000000ull + us;
        w32(c, 6);
        w32(c, blen);
        w32(c, 0);
        w32(c, (uint32_t)(t >> 32));
        w32(c, (uint32_t)t);
        w32(c, (uint32_t)caplen);
        w32(c, (uint32_t)len);
        fwrite(p, 1, caplen, c->f);
        static const uint8_t zero[4];
        fwrite(zero, 1, pad, c->f);
        w32(c, blen);
        return;
    }
    w32(c, (uint32_t)sec);
    w32(c, (uint32_t)(c->fmt == F_PCAP_NS ? us * 1000 : us));
    w32(c, (uint32_t)caplen);
    w32(c, (uint32_t)len);
    fwrite(p, 1, caplen, c->f);
}

static void cap_record(cap *c, const uint8_t *p, size_t len) {
    cap_record_raw(c, p, len < c->snap ? len : c->snap, len);
}

static void cap_close(cap *c) {
    if (fclose(c->f) != 0)
        die("write error");
}

/* ---- packets ---- */

/* IP and TCP come from the shared writer (reference-stack/util/iw_pcapw.h);
 * every segment's sequence number is given here, and each side
 * acknowledges ack[side] (IW_PCAPW_FIXED_ACK). */
typedef iw_pcapw_conn conn;

/* Link header for an IP packet of version af; returns its length. */
static size_t link_hdr(const cap *c, uint8_t *p, int af, int side) {
    uint16_t et = af == 4 ? 0x0800 : 0x86DD;
    switch (c->lt) {
    case LT_ETH: {
        size_t l = iw_pcapw_eth(p, af, side);
        if (c->vlan) {
            iw_pcapw_put16(p + 12, 0x88A8); /* 802.1ad outer tag, then 802.1Q */
            iw_pcapw_put16(p + 14, 100);
            iw_pcapw_put16(p + 16, 0x8100);
            iw_pcapw_put16(p + 18, 7);
            iw_pcapw_put16(p + 20, et);
            return 22;
        }
        return l;
    }
    case LT_SLL:
        memset(p, 0, 16);
        iw_pcapw_put16(p, side ? 0 : 4); /* to us / sent by us */
        iw_pcapw_put16(p + 2, 1);
        iw_pcapw_put16(p + 4, 6);
        p[6] = 0x02;
        p[11] = (uint8_t)(1 + side);
        iw_pcapw_put16(p + 14, et);
        return 16;
    case LT_SLL2:
        memset(p, 0, 20);
        iw_pcapw_put16(p, et);
        iw_pcapw_put32(p + 4, 2); /* interface index */
        iw_pcapw_put16(p + 8, 1);
        p[10] = side ? 0 : 4;
        p[11] = 6;
        p[12] = 0x02;
        p[17] = (uint8_t)(1 + side);
        return 20;
    case LT_NULL: {
        uint32_t afv = af == 4 ? 2 : c->null_af6; /* host (little-endian) byte order */
        p[0] = (uint8_t)afv;
        p[1] = (uint8_t)(afv >> 8);
        p[2] = (uint8_t)(afv >> 16);
        p[3] = (uint8_t)(afv >> 24);
        return 4;
    }
    case LT_LOOP:
        iw_pcapw_put32(p, af == 4 ? 2 : c->null_af6);
        return 4;
    default: /* LT_RAW, LT_IPV4, LT_IPV6 */
        return 0;
    }
}

/* Build a whole packet (link, IP, TCP, payload) into out; returns its length. */
static size_t build(const cap *c, const conn *k, int side, uint32_t seq, uint8_t flags,
                    const uint8_t *data, size_t len, uint8_t *out) {
    size_t l = link_hdr(c, out, k->af, side);
    iw_pcapw_tcp t;
    t.from = side;
    t.seq = seq;
    t.ack = (flags & IW_TH_ACK) ? k->ack[side] : 0;
    t.flags = flags;
    t.ipid = 1;
    t.shape = (c->tcpopts ? IW_PCAPW_TCPOPTS : 0) | (c->v6ext ? IW_PCAPW_V6EXT : 0);
    t.data = data;
    t.len = len;
    return l + iw_pcapw_build(out + l, k, &t);
}

static uint8_t pkt[70000];

static void seg(cap *c, const conn *k, int side, uint32_t seq, uint8_t flags, const uint8_t *data,
                size_t len) {
    size_t n = build(c, k, side, seq, flags, data, len, pkt);
    cap_record(c, pkt, n);
}

/* ---- iWARP streams ---- */

typedef struct stream {
    uint8_t buf[65536];
    size_t len;
    uint32_t pos;
    unsigned flags;
} stream;

static void s_rr(stream *s, iw_mpa_rr_type t, bool m, bool crc) {
    iw_mpa_rr rr;
    memset(&rr, 0, sizeof rr);
    rr.type = t;
    rr.m = m;
    rr.c = crc;
    rr.rev = IW_MPA_REV1;
    iw_ssize n = iw_mpa_rr_encode(s->buf + s->len, sizeof s->buf - s->len, &rr);
    if (n < 0)
        die("rr encode");
    s->len += (size_t)n;
    s->pos = 0;
}

static void s_msg(stream *s, const iw_rdmap_msg *m, const uint8_t *pay, size_t pl) {
    uint8_t h[128];
    iw_ssize hl = iw_rdmap_encode_hdr(h, sizeof h, m);
    if (hl < 0)
        die("rdmap encode");
    iw_ssize n = iw_mpa_fpdu_encode(s->buf + s->len, sizeof s->buf - s->len, s->pos, s->flags, h,
                                    (size_t)hl, pay, pl);
    if (n < 0)
        die("fpdu encode");
    s->len += (size_t)n;
    s->pos += (uint32_t)n;
}

static iw_rdmap_msg untagged(unsigned op, uint32_t qn, uint32_t msn) {
    return iw_rdmap_msg_untagged(op, qn, msn, 0, true);
}

static iw_rdmap_msg tagged(unsigned op, uint32_t stag, uint64_t to) {
    return iw_rdmap_msg_tagged(op, stag, to, true);
}

static uint8_t pay[2048];

/* The conversation most captures carry: MPA v1 startup with CRC, then
 * Sends, a Write, a Read Request/Response and Immediate Data. */
static void conversation(stream *a, stream *b, bool markers, bool crc) {
    memset(a, 0, sizeof *a);
    memset(b, 0, sizeof *b);
    for (size_t i = 0; i < sizeof pay; i++)
        pay[i] = (uint8_t)(i * 7 + 1);
    s_rr(a, IW_MPA_REQUEST, markers, crc);
    s_rr(b, IW_MPA_REPLY, markers, crc);
    a->flags = b->flags = (crc ? IW_MPA_CRC : 0) | (markers ? IW_MPA_MARKERS : 0);
    iw_rdmap_msg m = untagged(IW_OP_SEND, 0, 1);
    s_msg(a, &m, pay, 40);
    m = untagged(IW_OP_SEND_SE, 0, 2);
    s_msg(a, &m, pay, 23);
    m = tagged(IW_OP_WRITE, 0x1234, 0x10000);
    s_msg(a, &m, pay, 300);
    m = untagged(IW_OP_READ_REQ, 1, 1);
    m.u.read_req.sink_stag = 0x77;
    m.u.read_req.sink_to = 0x2000;
    m.u.read_req.read_size = 64;
    m.u.read_req.src_stag = 0x88;
    m.u.read_req.src_to = 0x3000;
    s_msg(a, &m, NULL, 0);
    m = untagged(IW_OP_SEND, 0, 3);
    s_msg(a, &m, pay, 120);
    m = untagged(IW_OP_IMM, 0, 4);
    memcpy(m.u.imm, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
    s_msg(a, &m, NULL, 0);
    m = tagged(IW_OP_READ_RESP, 0x77, 0x2000);
    s_msg(b, &m, pay, 64);
    m = untagged(IW_OP_SEND, 0, 1);
    s_msg(b, &m, pay, 10);
}

static conn conn_v4(uint8_t net, uint16_t sport, uint16_t dport, uint32_t isn0, uint32_t isn1) {
    conn k;
    iw_pcapw_conn_init(&k, 4, isn0, isn1);
    k.opts = IW_PCAPW_FIXED_ACK;
    k.ip[0][0] = 10, k.ip[0][1] = 9, k.ip[0][2] = net, k.ip[0][3] = 1;
    k.ip[1][0] = 10, k.ip[1][1] = 9, k.ip[1][2] = net, k.ip[1][3] = 2;
    k.port[0] = sport;
    k.port[1] = dport;
    return k;
}

static conn conn_v6(uint16_t sport, uint16_t dport, uint32_t isn0, uint32_t isn1) {
    conn k = conn_v4(0, sport, dport, isn0, isn1);
    k.af = 6;
    static const uint8_t a[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    memcpy(k.ip[0], a, 16);
    memcpy(k.ip[1], a, 16);
    k.ip[1][15] = 2;
    return k;
}

static void handshake(cap *c, conn *k) {
    seg(c, k, 0, k->isn[0], IW_TH_SYN, NULL, 0);
    seg(c, k, 1, k->isn[1], IW_TH_SYN | IW_TH_ACK, NULL, 0);
    seg(c, k, 0, k->isn[0] + 1, IW_TH_ACK, NULL, 0);
}

/* Octets [off, off+len) of side's stream. */
static void data(cap *c, conn *k, int side, const stream *s, size_t off, size_t len) {
    seg(c, k, side, k->isn[side] + 1 + (uint32_t)off, IW_TH_PSH | IW_TH_ACK, s->buf + off, len);
}

static void fin(cap *c, conn *k, int side, size_t off) {
    seg(c, k, side, k->isn[side] + 1 + (uint32_t)off, IW_TH_FIN | IW_TH_ACK, NULL, 0);
}

/* The whole conversation, in order, cut at mss. */
static void play(cap *c, conn *k, const stream *a, const stream *b, size_t mss, bool syn) {
    if (syn)
        handshake(c, k);
    data(c, k, 0, a, 0, IW_MPA_RR_HDR_LEN);
    data(c, k, 1, b, 0, IW_MPA_RR_HDR_LEN);
    for (size_t o = IW_MPA_RR_HDR_LEN; o < a->len; o += mss)
        data(c, k, 0, a, o, a->len - o < mss ? a->len - o : mss);
    for (size_t o = IW_MPA_RR_HDR_LEN; o < b->len; o += mss)
        data(c, k, 1, b, o, b->len - o < mss ? b->len - o : mss);
    fin(c, k, 0, a->len);
    fin(c, k, 1, b->len);
}

static stream A, B;

/* ---- scenarios ---- */

/* The same conversation over every link type and file format: IPv4 ones
 * must decode identically, as must the IPv6 ones. */
static void gen_links(const char *dir) {
    static const struct {
        const char *name;
        int fmt, lt;
        bool vlan, opts;
    } v4[] = {
        {"link4-eth.pcap", F_PCAP_US, LT_ETH, false, true},
        {"link4-vlan.pcap", F_PCAP_US, LT_ETH, true, true},
        {"link4-sll.pcap", F_PCAP_US, LT_SLL, false, false},
        {"link4-sll2.pcap", F_PCAP_US, LT_SLL2, false, true},
        {"link4-raw.pcap", F_PCAP_US, LT_RAW, false, false},
        {"link4-ipv4.pcap", F_PCAP_US, LT_IPV4, false, false},
        {"link4-null.pcap", F_PCAP_US, LT_NULL, false, false},
        {"link4-loop.pcap", F_PCAP_US, LT_LOOP, false, false},
        {"link4-ns.pcap", F_PCAP_NS, LT_ETH, false, false},
        {"link4-be.pcap", F_PCAP_BE, LT_ETH, false, true},
        {"link4.pcapng", F_PCAPNG, LT_ETH, false, true},
    };
    for (size_t i = 0; i < sizeof v4 / sizeof v4[0]; i++) {
        cap c = cap_open(dir, v4[i].name, v4[i].fmt, v4[i].lt, 0);
        c.vlan = v4[i].vlan;
        c.tcpopts = v4[i].opts;
        conn k = conn_v4(1, 40100, 4791, 1000, 2000);
        conversation(&A, &B, false, true);
        play(&c, &k, &A, &B, 200, true);
        cap_close(&c);
    }
    static const struct {
        const char *name;
        int fmt, lt;
        bool ext, opts;
        uint32_t af6;
    } v6[] = {
        {"link6-eth.pcap", F_PCAP_US, LT_ETH, true, true, 10},
        {"link6-null.pcap", F_PCAP_US, LT_NULL, false, false, 30},
        {"link6-loop.pcap", F_PCAP_US, LT_LOOP, true, false, 24},
        {"link6-ipv6.pcap", F_PCAP_US, LT_IPV6, false, true, 10},
        {"link6.pcapng", F_PCAPNG, LT_SLL2, true, false, 10},
    };
    for (size_t i = 0; i < sizeof v6 / sizeof v6[0]; i++) {
        cap c = cap_open(dir, v6[i].name, v6[i].fmt, v6[i].lt, 0);
        c.v6ext = v6[i].ext;
        c.tcpopts = v6[i].opts;
        c.null_af6 = v6[i].af6;
        conn k = conn_v6(40600, 4791, 3000, 4000);
        conversation(&A, &B, true, true);
        play(&c, &k, &A, &B, 300, true);
        cap_close(&c);
    }
}

/* Segments out of order, across a sequence wrap. */
static void gen_reorder(const char *dir) {
    cap c = cap_open(dir, "tcp-reorder.pcap", F_PCAP_US, LT_ETH, 0);
    conn k = conn_v4(2, 40200, 4791, 0xFFFFFF80u, 0x7FFFFFF0u);
    conversation(&A, &B, false, true);
    handshake(&c, &k);
    data(&c, &k, 0, &A, 0, 20);
    data(&c, &k, 1, &B, 0, 20);
    /* c2s in 100-octet segments, sent as 0 1 3 2 4 6 5 7 ... */
    size_t n = (A.len - 20 + 99) / 100;
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        if (i % 3 == 2 && i + 1 < n)
            j = i + 1;
        else if (i % 3 == 0 && i > 0 && (i - 1) % 3 == 2)
            j = i - 1;
        size_t o = 20 + j * 100;
        data(&c, &k, 0, &A, o, A.len - o < 100 ? A.len - o : 100);
    }
    /* s2c: the last segment first */
    data(&c, &k, 1, &B, 60, B.len - 60);
    data(&c, &k, 1, &B, 20, 40);
    fin(&c, &k, 0, A.len);
    fin(&c, &k, 1, B.len);
    cap_close(&c);
}

/* Duplicates, a retransmission overlapping two segments, a duplicate of
 * an out-of-order segment: all the same octets, all dropped. */
static void gen_retrans(const char *dir) {
    cap c = cap_open(dir, "tcp-retrans.pcap", F_PCAP_US, LT_ETH, 0);
    conn k = conn_v4(3, 40300, 4791, 5000, 6000);
    conversation(&A, &B, false, true);
    handshake(&c, &k);
    data(&c, &k, 0, &A, 0, 20);
    data(&c, &k, 0, &A, 0, 20); /* duplicate MPA Request */
    data(&c, &k, 1, &B, 0, 20);
    data(&c, &k, 0, &A, 20, 100);
    data(&c, &k, 0, &A, 20, 100);  /* exact duplicate */
    data(&c, &k, 0, &A, 220, 100); /* ahead of [120,220) */
    data(&c, &k, 0, &A, 220, 100); /* duplicate of held octets */
    data(&c, &k, 0, &A, 120, 100);
    data(&c, &k, 0, &A, 70, 200);  /* partial overlap of three segments, 0 new octets */
    data(&c, &k, 0, &A, 250, 150); /* partly old, partly new */
    data(&c, &k, 0, &A, 400, A.len - 400);
    data(&c, &k, 1, &B, 20, B.len - 20);
    data(&c, &k, 1, &B, 20, B.len - 20);
    fin(&c, &k, 0, A.len);
    fin(&c, &k, 0, A.len); /* FIN retransmitted */
    fin(&c, &k, 1, B.len);
    cap_close(&c);
}

/* Missing segments that never come: at the end of the capture, confirmed
 * by the peer's ACK, and followed by a reset. */
static void gen_gap(const char *dir) {
    cap c = cap_open(dir, "tcp-gap.pcap", F_PCAP_US, LT_ETH, 0);
    for (int variant = 0; variant < 3; variant++) {
        conn k = conn_v4((uint8_t)(40 + variant), (uint16_t)(40400 + variant), 4791, 100, 200);
        conversation(&A, &B, false, true);
        handshake(&c, &k);
        data(&c, &k, 0, &A, 0, 20);
        data(&c, &k, 1, &B, 0, 20);
        data(&c, &k, 0, &A, 20, 100);
        data(&c, &k, 0, &A, 120, 100);
        /* [220,320) is missing */
        data(&c, &k, 0, &A, 320, 100);
        if (variant == 1) {
            k.ack[1] = k.isn[0] + 1 + 420; /* the receiver got it all */
            seg(&c, &k, 1, k.isn[1] + 21, IW_TH_ACK, NULL, 0);
        }
        data(&c, &k, 0, &A, 420, A.len - 420);
        data(&c, &k, 1, &B, 20, B.len - 20);
        if (variant == 2) {
            seg(&c, &k, 0, k.isn[0] + 1 + (uint32_t)A.len, IW_TH_RST, NULL, 0);
        } else {
            fin(&c, &k, 0, A.len);
            fin(&c, &k, 1, B.len);
        }
    }
    cap_close(&c);
}

/* Retransmitted octets that differ from the first copy: one against
 * delivered octets, one against octets held out of order. */
static void gen_conflict(const char *dir) {
    cap c = cap_open(dir, "tcp-conflict.pcap", F_PCAP_US, LT_ETH, 0);
    conn k = conn_v4(5, 40500, 4791, 7000, 8000);
    conversation(&A, &B, false, true);
    handshake(&c, &k);
    data(&c, &k, 0, &A, 0, 20);
    data(&c, &k, 1, &B, 0, 20);
    data(&c, &k, 0, &A, 20, 100);
    uint8_t alt[100];
    memcpy(alt, A.buf + 40, 60);
    alt[10] ^= 0xFF; /* offset 50 */
    seg(&c, &k, 0, k.isn[0] + 1 + 40, IW_TH_PSH | IW_TH_ACK, alt, 60);
    data(&c, &k, 0, &A, 220, 100); /* held */
    memcpy(alt, A.buf + 200, 100);
    alt[30] ^= 0x01; /* offset 230: held, differs; [200,220) is new and the same */
    seg(&c, &k, 0, k.isn[0] + 1 + 200, IW_TH_PSH | IW_TH_ACK, alt, 100);
    data(&c, &k, 0, &A, 120, 100); /* fills [120,200); [200,220) came with the altered copy */
    data(&c, &k, 0, &A, 320, A.len - 320);
    data(&c, &k, 1, &B, 20, B.len - 20);
    fin(&c, &k, 0, A.len);
    fin(&c, &k, 1, B.len);
    cap_close(&c);
}

/* No startup in the capture, no CRC: c2s starts inside an FPDU, without
 * markers; s2c with markers at an unknown grid phase. */
static void gen_midstream_nocrc(const char *dir) {
    cap c = cap_open(dir, "midstream-nocrc.pcap", F_PCAP_US, LT_ETH, 0);
    conn k = conn_v4(6, 40600, 4791, 0x1000, 0x2000);
    memset(&A, 0, sizeof A);
    memset(&B, 0, sizeof B);
    A.flags = 0;
    B.flags = IW_MPA_MARKERS;
    B.pos = 8192 + 100;
    size_t cut[16], nc = 0;
    for (uint32_t i = 0; i < 8; i++) {
        iw_rdmap_msg m = untagged(IW_OP_SEND, 0, 100 + i);
        s_msg(&A, &m, pay, 30 + 11 * i);
        if (i % 2)
            cut[nc++] = A.len;
    }
    for (uint32_t i = 0; i < 5; i++) {
        iw_rdmap_msg m = tagged(IW_OP_WRITE, 0x900 + i, 0x1000ull * i);
        s_msg(&B, &m, pay, 200 + 150 * i);
        cut[nc++] = B.len | ((size_t)1 << 31);
    }
    /* c2s: the capture begins 17 octets into the first FPDU, then two FPDUs
     * per segment; s2c: one FPDU per segment */
    size_t from = 17;
    for (size_t i = 0; i < nc; i++) {
        if (cut[i] & ((size_t)1 << 31))
            continue;
        data(&c, &k, 0, &A, from, cut[i] - from);
        from = cut[i];
    }
    from = 0;
    for (size_t i = 0; i < nc; i++) {
        if (!(cut[i] & ((size_t)1 << 31)))
            continue;
        size_t end = cut[i] & ~((size_t)1 << 31);
        data(&c, &k, 1, &B, from, end - from);
        from = end;
    }
    cap_close(&c);
}

/* Connections that are not iWARP, around one that is. */
static void gen_not_iwarp(const char *dir) {
    cap c = cap_open(dir, "not-iwarp.pcap", F_PCAP_US, LT_ETH, 0);
    static const char get[] = "GET /index.html HTTP/1.1\r\nHost: example.test\r\n\r\n";
    static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
    conn h = conn_v4(7, 50000, 80, 11, 22);
    handshake(&c, &h);
    seg(&c, &h, 0, h.isn[0] + 1, IW_TH_PSH | IW_TH_ACK, (const uint8_t *)get, sizeof get - 1);
    seg(&c, &h, 1, h.isn[1] + 1, IW_TH_PSH | IW_TH_ACK, (const uint8_t *)ok, sizeof ok - 1);
    /* random octets both ways */
    conn r = conn_v4(8, 50001, 5000, 33, 44);
    handshake(&c, &r);
    uint32_t x = 99, off[2] = {0, 0};
    uint8_t b[1400];
    for (int i = 0; i < 24; i++) {
        int side = i & 1;
        size_t n = 1 + (x % 1300);
        for (size_t j = 0; j < n; j++) {
            x = x * 1103515245u + 12345u;
            b[j] = (uint8_t)(x >> 16);
        }
        seg(&c, &r, side, r.isn[side] + 1 + off[side], IW_TH_PSH | IW_TH_ACK, b, n);
        off[side] += (uint32_t)n;
    }
    /* a handshake and a reset, no payload */
    conn z = conn_v4(9, 50002, 6000, 55, 66);
    handshake(&c, &z);
    seg(&c, &z, 1, z.isn[1] + 1, IW_TH_RST | IW_TH_ACK, NULL, 0);
    /* iWARP on an unusual port */
    conn w = conn_v4(10, 50003, 7777, 77, 88);
    conversation(&A, &B, false, true);
    play(&c, &w, &A, &B, 500, true);
    /* HTTP finishes */
    fin(&c, &h, 0, sizeof get - 1);
    fin(&c, &h, 1, sizeof ok - 1);
    cap_close(&c);
}

/* A snap length shorter than the data segments. */
static void gen_snaplen(const char *dir) {
    cap c = cap_open(dir, "snaplen.pcap", F_PCAP_US, LT_ETH, 120);
    conn k = conn_v4(11, 41100, 4791, 1, 2);
    conversation(&A, &B, false, true);
    play(&c, &k, &A, &B, 200, true);
    cap_close(&c);
}

/* Packets that are not valid TCP/IP between good ones: skipped, counted. */
static void gen_malformed(const char *dir) {
    cap c = cap_open(dir, "malformed.pcap", F_PCAP_US, LT_ETH, 0);
    conn k = conn_v4(12, 41200, 4791, 1, 2);
    conversation(&A, &B, false, true);
    handshake(&c, &k);
    data(&c, &k, 0, &A, 0, 20);
    data(&c, &k, 1, &B, 0, 20);
    size_t n;
    /* cut Ethernet header */
    n = build(&c, &k, 0, 9999, IW_TH_ACK, A.buf, 10, pkt);
    cap_record_raw(&c, pkt, 10, 10);
    /* IPv4 total length beyond the frame */
    n = build(&c, &k, 0, k.isn[0] + 21, IW_TH_PSH | IW_TH_ACK, A.buf + 20, 50, pkt);
    iw_pcapw_put16(pkt + 14 + 2, 1400);
    cap_record(&c, pkt, n);
    /* IHL 4 */
    n = build(&c, &k, 0, k.isn[0] + 21, IW_TH_PSH | IW_TH_ACK, A.buf + 20, 50, pkt);
    pkt[14] = 0x44;
    cap_record(&c, pkt, n);
    /* TCP data offset 4 */
    n = build(&c, &k, 0, k.isn[0] + 21, IW_TH_PSH | IW_TH_ACK, A.buf + 20, 50, pkt);
    pkt[14 + 20 + 12] = 0x40;
    cap_record(&c, pkt, n);
    /* TCP data offset beyond the IP payload */
    n = build(&c, &k, 0, k.isn[0] + 21, IW_TH_PSH | IW_TH_ACK, NULL, 0, pkt);
    pkt[14 + 20 + 12] = 0xF0;
    cap_record(&c, pkt, n);
    /* IP version 5 */
    n = build(&c, &k, 0, k.isn[0] + 21, IW_TH_PSH | IW_TH_ACK, A.buf + 20, 50, pkt);
    pkt[14] = 0x55;
    cap_record(&c, pkt, n);
    /* a record claiming more octets than were captured, cut inside IP */
    n = build(&c, &k, 0, k.isn[0] + 21, IW_TH_PSH | IW_TH_ACK, A.buf + 20, 50, pkt);
    cap_record_raw(&c, pkt, 30, n);
    /* an IPv4 fragment, UDP and ARP: not TCP, skipped */
    n = build(&c, &k, 0, k.isn[0] + 21, IW_TH_PSH | IW_TH_ACK, A.buf + 20, 50, pkt);
    pkt[14 + 6] = 0x20; /* MF */
    cap_record(&c, pkt, n);
    n = build(&c, &k, 0, k.isn[0] + 21, IW_TH_PSH | IW_TH_ACK, A.buf + 20, 50, pkt);
    pkt[14 + 9] = 17;
    cap_record(&c, pkt, n);
    memset(pkt, 0, 60);
    iw_pcapw_put16(pkt + 12, 0x0806);
    cap_record(&c, pkt, 60);
    /* IPv6 with a cut extension header, and an IPv6 fragment */
    conn k6 = conn_v6(41201, 4791, 1, 2);
    c.v6ext = true;
    n = build(&c, &k6, 0, 1, IW_TH_SYN, NULL, 0, pkt);
    cap_record_raw(&c, pkt, 14 + 40 + 4, n);
    n = build(&c, &k6, 0, 1, IW_TH_SYN, NULL, 0, pkt);
    pkt[14 + 40] = 44; /* Hop-by-Hop, then a Fragment header */
    pkt[14 + 48] = 6;  /* ... then TCP */
    pkt[14 + 48 + 2] = 0;
    pkt[14 + 48 + 3] = 0x09; /* offset 1, M */
    cap_record(&c, pkt, n);
    c.v6ext = false;
    /* the rest of the conversation, good */
    for (size_t o = 20; o < A.len; o += 300)
        data(&c, &k, 0, &A, o, A.len - o < 300 ? A.len - o : 300);
    data(&c, &k, 1, &B, 20, B.len - 20);
    fin(&c, &k, 0, A.len);
    fin(&c, &k, 1, B.len);
    cap_close(&c);
}

/* The file ends inside a record. */
static void gen_truncated(const char *dir) {
    char path[4096];
    cap c = cap_open(dir, "truncated.pcap", F_PCAP_US, LT_ETH, 0);
    conn k = conn_v4(13, 41300, 4791, 1, 2);
    conversation(&A, &B, false, true);
    play(&c, &k, &A, &B, 200, true);
    long full = ftell(c.f);
    cap_close(&c);
    snprintf(path, sizeof path, "%s/truncated.pcap", dir);
    /* cut the last FIN's record in half, and the one before it (s2c data) */
    FILE *f = fopen(path, "r+b");
    if (!f)
        die(path);
    size_t fin_rec = 16 + 54, cut = fin_rec * 2 + (16 + 54 + (B.len - 20)) / 2;
    if (ftruncate(fileno(f), (off_t)(full - (long)cut)) != 0)
        die("truncate");
    fclose(f);
}

/* The same ports twice: a new SYN makes a new stream. */
static void gen_port_reuse(const char *dir) {
    cap c = cap_open(dir, "port-reuse.pcap", F_PCAP_US, LT_ETH, 0);
    conn k = conn_v4(14, 41400, 4791, 1000, 2000);
    conversation(&A, &B, false, true);
    play(&c, &k, &A, &B, 400, true);
    k = conn_v4(14, 41400, 4791, 90000, 80000);
    play(&c, &k, &A, &B, 400, true);
    cap_close(&c);
}

/* No SYN captured: roles come from the MPA keys (i2r/r2i); and an
 * Initiator/Initiator startup without SYN. */
static void gen_nosyn(const char *dir) {
    cap c = cap_open(dir, "nosyn.pcap", F_PCAP_US, LT_ETH, 0);
    conn k = conn_v4(15, 41500, 4791, 1000, 2000);
    conversation(&A, &B, false, true);
    /* the responder's side is the first one captured: its Reply */
    data(&c, &k, 1, &B, 0, 20);
    data(&c, &k, 0, &A, 0, 20);
    for (size_t o = 20; o < A.len; o += 500)
        data(&c, &k, 0, &A, o, A.len - o < 500 ? A.len - o : 500);
    data(&c, &k, 1, &B, 20, B.len - 20);
    conn k2 = conn_v4(16, 41501, 4791, 3000, 4000);
    stream *r2 = &B;
    memset(r2, 0, sizeof *r2);
    s_rr(r2, IW_MPA_REQUEST, false, true);
    data(&c, &k2, 0, &A, 0, 20);
    data(&c, &k2, 1, r2, 0, 20);
    cap_close(&c);
}

/* Files that cannot be decoded: an unsupported link type, a file with no
 * packets, a file cut inside its header. */
static void gen_odd_files(const char *dir) {
    cap c = cap_open(dir, "linktype-user0.pcap", F_PCAP_US, 147, 0);
    static const uint8_t p[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    cap_record(&c, p, sizeof p);
    cap_close(&c);
    c = cap_open(dir, "empty.pcap", F_PCAP_US, LT_ETH, 0);
    cap_close(&c);
    c = cap_open(dir, "empty.pcapng", F_PCAPNG, LT_ETH, 0);
    cap_close(&c);
    char path[4096];
    snprintf(path, sizeof path, "%s/header-cut.pcap", dir);
    FILE *f = fopen(path, "wb");
    static const uint8_t hdr[10] = {0xD4, 0xC3, 0xB2, 0xA1, 2, 0, 4, 0, 0, 0};
    if (!f || fwrite(hdr, 1, sizeof hdr, f) != sizeof hdr || fclose(f) != 0)
        die(path);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: gen_pcaps OUTDIR\n");
        return 2;
    }
    const char *dir = argv[1];
    gen_links(dir);
    gen_reorder(dir);
    gen_retrans(dir);
    gen_gap(dir);
    gen_conflict(dir);
    gen_midstream_nocrc(dir);
    gen_not_iwarp(dir);
    gen_snaplen(dir);
    gen_malformed(dir);
    gen_truncated(dir);
    gen_port_reuse(dir);
    gen_nosyn(dir);
    gen_odd_files(dir);
    return 0;
}
