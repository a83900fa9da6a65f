/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Synthesized TCP conversations: see iw_pcapw.h. */
#include "iw_pcapw.h"

#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void iw_pcapw_put16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

void iw_pcapw_put32(uint8_t *p, uint32_t v) {
    iw_pcapw_put16(p, (uint16_t)(v >> 16));
    iw_pcapw_put16(p + 2, (uint16_t)v);
}

uint16_t iw_pcapw_csum(const uint8_t *p, size_t n, uint32_t sum) {
    for (size_t i = 0; i + 1 < n; i += 2)
        sum += (uint32_t)(p[i] << 8 | p[i + 1]);
    if (n & 1)
        sum += (uint32_t)p[n - 1] << 8;
    while (sum >> 16)
        sum = (sum & 0xFFFF) + (sum >> 16);
    return (uint16_t)~sum;
}

uint32_t iw_pcapw_ip4(uint8_t *ip, const iw_pcapw_conn *k, int from, uint8_t proto, uint16_t ipid,
                      size_t l4_len) {
    int s = from ? 1 : 0;
    memset(ip, 0, 20);
    ip[0] = 0x45;
    iw_pcapw_put16(ip + 2, (uint16_t)(20 + l4_len));
    iw_pcapw_put16(ip + 4, ipid);
    ip[6] = 0x40; /* DF */
    ip[8] = 64;
    ip[9] = proto;
    memcpy(ip + 12, k->ip[s], 4);
    memcpy(ip + 16, k->ip[!s], 4);
    iw_pcapw_put16(ip + 10, iw_pcapw_csum(ip, 20, 0));
    /* The pseudo-header (RFC 768, RFC 793 §3.1), as 16-bit words. */
    uint32_t sum = 0;
    for (int i = 12; i < 20; i += 2)
        sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
    return sum + proto + (uint32_t)l4_len;
}

size_t iw_pcapw_build(uint8_t *out, const iw_pcapw_conn *k, const iw_pcapw_tcp *t) {
    int s = t->from ? 1 : 0;
    bool v6ext = k->af == 6 && (t->shape & IW_PCAPW_V6EXT);
    size_t iph = k->af == 4 ? 20 : 40 + (v6ext ? 16 : 0);
    uint8_t *ip = out, *th = out + iph;
    size_t opt = 0;
    if (t->shape & IW_PCAPW_TCPOPTS)
        opt = (t->flags & IW_TH_SYN) ? 8 : 12;
    size_t thl = 20 + opt;
    /* TCP */
    memset(th, 0, thl);
    iw_pcapw_put16(th, k->port[s]);
    iw_pcapw_put16(th + 2, k->port[!s]);
    iw_pcapw_put32(th + 4, t->seq);
    iw_pcapw_put32(th + 8, t->ack);
    th[12] = (uint8_t)((thl / 4) << 4);
    th[13] = t->flags;
    iw_pcapw_put16(th + 14, 65535);
    if (opt == 8) { /* MSS 1460, NOP, window scale 7 */
        th[20] = 2, th[21] = 4, iw_pcapw_put16(th + 22, 1460);
        th[24] = 1, th[25] = 3, th[26] = 3, th[27] = 7;
    } else if (opt == 12) { /* NOP, NOP, timestamps */
        th[20] = 1, th[21] = 1, th[22] = 8, th[23] = 10;
        iw_pcapw_put32(th + 24, t->seq ^ 0x5A5A5A5A);
        iw_pcapw_put32(th + 28, 0x01020304);
    }
    if (t->len)
        memcpy(th + thl, t->data, t->len);
    /* IP */
    uint32_t tl = (uint32_t)(thl + t->len);
    uint32_t sum = 0;
    if (k->af == 4) {
        sum = iw_pcapw_ip4(ip, k, s, 6, t->ipid, tl);
    } else {
        memset(ip, 0, iph);
        ip[0] = 0x60;
        iw_pcapw_put16(ip + 4, (uint16_t)(iph - 40 + thl + t->len));
        ip[6] = v6ext ? 0 : 6; /* Hop-by-Hop, then Destination Options, then TCP */
        ip[7] = 64;
        memcpy(ip + 8, k->ip[s], 16);
        memcpy(ip + 24, k->ip[!s], 16);
        if (v6ext) {
            ip[40] = 60; /* HBH: next = Destination Options, 8 octets of PadN */
            ip[42] = 1;
            ip[43] = 4;
            ip[48] = 6; /* Destination Options: next = TCP */
            ip[50] = 1;
            ip[51] = 4;
        }
    }
    /* TCP checksum over the pseudo-header (IPv4's from iw_pcapw_ip4) */
    if (k->af == 6) {
        uint8_t ph[40];
        memcpy(ph, k->ip[s], 16);
        memcpy(ph + 16, k->ip[!s], 16);
        iw_pcapw_put32(ph + 32, tl);
        memset(ph + 36, 0, 3);
        ph[39] = 6;
        for (size_t i = 0; i < sizeof ph; i += 2)
            sum += (uint32_t)(ph[i] << 8 | ph[i + 1]);
    }
    iw_pcapw_put16(th + 16, iw_pcapw_csum(th, tl, sum));
    return iph + thl + t->len;
}

void iw_pcapw_udp(iw_pcapw_conn *k, int from, const uint8_t *data, size_t len) {
    int s = from ? 1 : 0;
    if (k->af != 4 || len > IW_PCAPW_PAYLOAD_MAX)
        return;
    uint8_t *uh = k->pkt + 20;
    uint32_t sum =
        iw_pcapw_ip4(k->pkt, k, s, 17, (k->opts & IW_PCAPW_IPID_COUNT) ? ++k->ipid[s] : 0, 8 + len);
    memset(uh, 0, 8);
    iw_pcapw_put16(uh, k->port[s]);
    iw_pcapw_put16(uh + 2, k->port[!s]);
    iw_pcapw_put16(uh + 4, (uint16_t)(8 + len));
    memcpy(uh + 8, data, len);
    /* RFC 768: the checksum covers the pseudo-header; 0 means none. */
    uint16_t c = iw_pcapw_csum(uh, 8 + len, sum);
    iw_pcapw_put16(uh + 6, c ? c : 0xFFFF);
    k->sink(k->sink_ctx, 4, from, k->pkt, 28 + len);
}

void iw_pcapw_conn_init(iw_pcapw_conn *k, int af, uint32_t isn0, uint32_t isn1) {
    memset(k, 0, sizeof *k);
    k->af = af;
    k->isn[0] = k->next[0] = isn0;
    k->isn[1] = k->next[1] = isn1;
    k->ack[0] = isn1 + 1;
    k->ack[1] = isn0 + 1;
}

void iw_pcapw_seg_at(iw_pcapw_conn *k, int from, uint32_t seq, uint8_t flags, const uint8_t *data,
                     size_t len) {
    uint8_t *pkt = k->pkt;
    int s = from ? 1 : 0;
    if (len > IW_PCAPW_PAYLOAD_MAX) {
        fprintf(stderr, "iw_pcapw: segment too long\n");
        abort();
    }
    iw_pcapw_tcp t;
    t.from = s;
    t.seq = seq;
    t.ack = 0;
    if (flags & IW_TH_ACK)
        t.ack = (k->opts & IW_PCAPW_FIXED_ACK) ? k->ack[s] : k->next[!s];
    t.flags = flags;
    t.ipid = (k->opts & IW_PCAPW_IPID_COUNT) ? k->ipid[s]++ : 1;
    t.shape = k->shape;
    t.data = data;
    t.len = len;
    size_t n = iw_pcapw_build(pkt, k, &t);
    if (k->sink)
        k->sink(k->sink_ctx, k->af, s, pkt, n);
}

void iw_pcapw_seg(iw_pcapw_conn *k, int from, uint8_t flags, const uint8_t *data, size_t len) {
    int s = from ? 1 : 0;
    iw_pcapw_seg_at(k, s, k->next[s], flags, data, len);
    k->next[s] += (uint32_t)len + ((flags & (IW_TH_SYN | IW_TH_FIN)) ? 1u : 0u);
}

void iw_pcapw_send(iw_pcapw_conn *k, int from, const uint8_t *data, size_t len, size_t mss) {
    for (size_t off = 0; off < len; off += mss) {
        size_t n = len - off < mss ? len - off : mss;
        uint8_t fl = IW_TH_ACK;
        if (!(k->opts & IW_PCAPW_PSH_LAST) || off + n == len)
            fl |= IW_TH_PSH;
        iw_pcapw_seg(k, from, fl, data + off, n);
    }
}

void iw_pcapw_handshake(iw_pcapw_conn *k, int client) {
    int c = client ? 1 : 0;
    iw_pcapw_seg(k, c, IW_TH_SYN, NULL, 0);
    iw_pcapw_seg(k, !c, IW_TH_SYN | IW_TH_ACK, NULL, 0);
    iw_pcapw_seg(k, c, IW_TH_ACK, NULL, 0);
}

void iw_pcapw_close(iw_pcapw_conn *k, int first) {
    int f = first ? 1 : 0;
    iw_pcapw_seg(k, f, IW_TH_FIN | IW_TH_ACK, NULL, 0);
    iw_pcapw_seg(k, !f, IW_TH_FIN | IW_TH_ACK, NULL, 0);
    iw_pcapw_seg(k, f, IW_TH_ACK, NULL, 0);
}

/* ---- libpcap file ---- */

struct iw_pcapw_file {
    pcap_t *p;
    pcap_dumper_t *d;
    uint64_t usec;
    uint32_t step;
    uint8_t frame[14 + IW_PCAPW_HDR_MAX + IW_PCAPW_PAYLOAD_MAX];
};

iw_pcapw_file *iw_pcapw_open(const char *path, char *err, size_t errlen) {
    iw_pcapw_file *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    f->p = pcap_open_dead(DLT_EN10MB, 65535);
    if (!f->p) {
        snprintf(err, errlen, "pcap_open_dead failed");
        free(f);
        return NULL;
    }
    f->d = pcap_dump_open(f->p, path);
    if (!f->d) {
        snprintf(err, errlen, "%s: %s", path, pcap_geterr(f->p));
        pcap_close(f->p);
        free(f);
        return NULL;
    }
    return f;
}

int iw_pcapw_file_close(iw_pcapw_file *f) {
    if (!f)
        return 0;
    int rc = pcap_dump_flush(f->d) == 0 ? 0 : -1;
    pcap_dump_close(f->d);
    pcap_close(f->p);
    free(f);
    return rc;
}

void iw_pcapw_set_clock(iw_pcapw_file *f, uint64_t t_us, uint32_t step_us) {
    f->usec = t_us;
    f->step = step_us;
}

void iw_pcapw_set_time(iw_pcapw_file *f, uint64_t t_us) { f->usec = t_us; }

size_t iw_pcapw_eth(uint8_t *p, int af, int from) {
    memset(p, 0, 12);
    p[0] = 0x02;
    p[5] = (uint8_t)(1 + !from);
    p[6] = 0x02;
    p[11] = (uint8_t)(1 + !!from);
    iw_pcapw_put16(p + 12, af == 6 ? 0x86DD : 0x0800);
    return 14;
}

static void file_sink(void *ctx, int af, int from, const uint8_t *pkt, size_t len) {
    iw_pcapw_file *f = ctx;
    size_t l = iw_pcapw_eth(f->frame, af, from);
    memcpy(f->frame + l, pkt, len);
    f->usec += f->step;
    struct pcap_pkthdr h;
    h.ts.tv_sec = (time_t)(f->usec / 1000000);
    h.ts.tv_usec = (suseconds_t)(f->usec % 1000000);
    h.caplen = h.len = (bpf_u_int32)(l + len);
    pcap_dump((u_char *)f->d, &h, f->frame);
}

void iw_pcapw_attach(iw_pcapw_conn *k, iw_pcapw_file *f) {
    k->sink = file_sink;
    k->sink_ctx = f;
}
