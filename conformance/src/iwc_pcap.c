/* pcap synthesis: see iwc_pcap.h. */
#include "iwc_pcap.h"

#include <pcap/pcap.h>
#include <stdio.h>
#include <string.h>

#define SEG_MAX 1448 /* payload per synthesized TCP segment (a typical MSS) */
#define HDRS (14 + 20 + 20)

enum { F_FIN = 0x01, F_SYN = 0x02, F_RST = 0x04, F_PSH = 0x08, F_ACK = 0x10 };

typedef struct side {
    uint32_t isn, next; /* initial and next sequence number */
    uint16_t ipid;
} side;

typedef struct pc {
    pcap_dumper_t *d;
    const iwc_capture *cap;
    side s[2];          /* [0] runner, [1] IUT */
    uint8_t pkt[HDRS + SEG_MAX];
} pc;

static void put16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static void put32(uint8_t *p, uint32_t v) {
    put16(p, (uint16_t)(v >> 16));
    put16(p + 2, (uint16_t)v);
}

static uint32_t sum16(const uint8_t *p, size_t n, uint32_t s) {
    for (size_t i = 0; i + 1 < n; i += 2)
        s += (uint32_t)(p[i] << 8 | p[i + 1]);
    if (n & 1)
        s += (uint32_t)p[n - 1] << 8;
    return s;
}

static uint16_t fold(uint32_t s) {
    while (s >> 16)
        s = (s & 0xFFFF) + (s >> 16);
    return (uint16_t)~s;
}

/* One TCP segment from `from` (0 runner, 1 IUT). */
static void emit(pc *c, int from, uint8_t flags, const uint8_t *data, size_t n, uint64_t t_us) {
    const iwc_capture *k = c->cap;
    int to = !from;
    uint8_t *p = c->pkt;
    memset(p, 0, HDRS);
    /* Ethernet: locally administered MACs, one per side. */
    static const uint8_t mac[2][6] = {{0x02, 0, 0, 0, 0, 0x01}, {0x02, 0, 0, 0, 0, 0x02}};
    memcpy(p, mac[to], 6);
    memcpy(p + 6, mac[from], 6);
    put16(p + 12, 0x0800);
    uint8_t *ip = p + 14;
    ip[0] = 0x45;
    put16(ip + 2, (uint16_t)(20 + 20 + n));
    put16(ip + 4, c->s[from].ipid++);
    put16(ip + 6, 0x4000); /* DF */
    ip[8] = 64;
    ip[9] = 6;
    memcpy(ip + 12, k->ip[from], 4);
    memcpy(ip + 16, k->ip[to], 4);
    put16(ip + 10, fold(sum16(ip, 20, 0)));
    uint8_t *tcp = ip + 20;
    put16(tcp, k->port[from]);
    put16(tcp + 2, k->port[to]);
    put32(tcp + 4, flags & F_SYN ? c->s[from].isn : c->s[from].next);
    put32(tcp + 8, flags & F_ACK ? c->s[to].next : 0);
    tcp[12] = 5 << 4;
    tcp[13] = flags;
    put16(tcp + 14, 65535);
    if (n)
        memcpy(tcp + 20, data, n);
    /* TCP checksum over the IPv4 pseudo-header, header and payload. */
    uint8_t ph[12];
    memcpy(ph, k->ip[from], 4);
    memcpy(ph + 4, k->ip[to], 4);
    ph[8] = 0;
    ph[9] = 6;
    put16(ph + 10, (uint16_t)(20 + n));
    put16(tcp + 16, fold(sum16(tcp, 20 + n, sum16(ph, 12, 0))));
    struct pcap_pkthdr h;
    h.ts.tv_sec = (time_t)(t_us / 1000000);
    h.ts.tv_usec = (suseconds_t)(t_us % 1000000);
    h.caplen = h.len = (bpf_u_int32)(HDRS + n);
    pcap_dump((u_char *)c->d, &h, p);
    if (flags & F_SYN)
        c->s[from].next = c->s[from].isn + 1;
    else
        c->s[from].next += (uint32_t)n + (flags & F_FIN ? 1u : 0u);
}

int iwc_pcap_write(const char *path, const iwc_capture *cap, char *err, size_t errlen) {
    pcap_t *p = pcap_open_dead(DLT_EN10MB, 65535);
    if (!p) {
        snprintf(err, errlen, "pcap_open_dead failed");
        return -1;
    }
    pc c;
    memset(&c, 0, sizeof c);
    c.cap = cap;
    c.d = pcap_dump_open(p, path);
    if (!c.d) {
        snprintf(err, errlen, "%s: %s", path, pcap_geterr(p));
        pcap_close(p);
        return -1;
    }
    if (cap->used) {
        c.s[0].isn = 0x10000000u;
        c.s[1].isn = 0x20000000u;
        int cl = cap->runner_is_client ? 0 : 1;
        uint64_t t = cap->t_start;
        emit(&c, cl, F_SYN, NULL, 0, t);
        emit(&c, !cl, F_SYN | F_ACK, NULL, 0, t);
        emit(&c, cl, F_ACK, NULL, 0, t);
        for (size_t i = 0; i < cap->n; i++) {
            const iwc_chunk *k = &cap->chunks[i];
            int from = k->dir == 0 ? 0 : 1;
            if (k->kind == IWC_CHUNK_FIN) {
                emit(&c, from, F_FIN | F_ACK, NULL, 0, k->t_us);
                continue;
            }
            if (k->kind == IWC_CHUNK_RST) {
                emit(&c, from, F_RST | F_ACK, NULL, 0, k->t_us);
                continue;
            }
            const uint8_t *d = cap->stream[k->dir].p + k->off;
            for (size_t off = 0; off < k->len; off += SEG_MAX) {
                size_t n = k->len - off < SEG_MAX ? k->len - off : SEG_MAX;
                emit(&c, from, F_ACK | (off + n == k->len ? F_PSH : 0), d + off, n, k->t_us);
            }
        }
    }
    pcap_dump_close(c.d);
    pcap_close(p);
    return 0;
}
