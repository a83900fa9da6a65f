/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iw_pcapw: synthesized TCP conversations for capture files.
 *
 * Three layers, each usable on its own:
 *
 *   iw_pcapw_build     one IPv4/IPv6 + TCP packet (+ payload) with every
 *                      field given, checksums computed (crafted packets);
 *   iw_pcapw_conn      a TCP conversation between two endpoints (side 0 and
 *                      side 1) that keeps sequence and acknowledgement
 *                      numbers: handshake, data in either direction cut at
 *                      a chosen segment size, FIN/RST, and segments at any
 *                      sequence number (reordering, duplicates, gaps) that
 *                      leave the state alone;
 *   iw_pcapw_file      a libpcap (pcap_dump) Ethernet capture file that a
 *                      conversation writes to, with a stepping clock or
 *                      explicit timestamps.
 *
 * Everything is deterministic: the same calls give the same bytes. */
#ifndef IW_PCAPW_H
#define IW_PCAPW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* TCP flags. */
#define IW_TH_FIN 0x01
#define IW_TH_SYN 0x02
#define IW_TH_RST 0x04
#define IW_TH_PSH 0x08
#define IW_TH_ACK 0x10

/* Packet shape (iw_pcapw_tcp.shape, iw_pcapw_conn.shape). */
#define IW_PCAPW_TCPOPTS 0x01 /* MSS + window scale on SYNs, timestamps otherwise */
#define IW_PCAPW_V6EXT 0x02   /* IPv6: Hop-by-Hop and Destination Options headers */

/* Conversation behaviour (iw_pcapw_conn.opts). */
#define IW_PCAPW_IPID_COUNT 0x01 /* IPv4 ID counts up per side from 0 (else always 1) */
#define IW_PCAPW_FIXED_ACK 0x02  /* send ack[from] (else the peer's next sequence number) */
#define IW_PCAPW_PSH_LAST 0x04   /* iw_pcapw_send: PSH only on the last segment (else all) */

/* Room iw_pcapw_build needs beyond the payload. */
#define IW_PCAPW_HDR_MAX (40 + 16 + 32)
/* Largest payload of one segment. */
#define IW_PCAPW_PAYLOAD_MAX 65000

void iw_pcapw_put16(uint8_t *p, uint16_t v);
void iw_pcapw_put32(uint8_t *p, uint32_t v);

/* Internet checksum of p[0..n) folded onto a running (unfolded) sum. */
uint16_t iw_pcapw_csum(const uint8_t *p, size_t n, uint32_t sum);

typedef struct iw_pcapw_conn iw_pcapw_conn;

/* Where a conversation's packets go: the IP packet (no link header) from
 * side `from`. */
typedef void (*iw_pcapw_sink_fn)(void *ctx, int af, int from, const uint8_t *pkt, size_t len);

struct iw_pcapw_conn {
    int af;            /* 4 or 6 */
    uint8_t ip[2][16]; /* IPv4 addresses in the first 4 octets */
    uint16_t port[2];
    uint32_t isn[2];
    uint32_t next[2]; /* next sequence number each side sends */
    uint32_t ack[2];  /* with IW_PCAPW_FIXED_ACK: what each side acknowledges */
    uint16_t ipid[2];
    unsigned opts;  /* IW_PCAPW_IPID_COUNT | IW_PCAPW_FIXED_ACK | IW_PCAPW_PSH_LAST */
    unsigned shape; /* IW_PCAPW_TCPOPTS | IW_PCAPW_V6EXT */
    iw_pcapw_sink_fn sink;
    void *sink_ctx;
    uint8_t pkt[IW_PCAPW_HDR_MAX + IW_PCAPW_PAYLOAD_MAX]; /* the packet being built */
};

/* One packet, every field given. */
typedef struct iw_pcapw_tcp {
    int from; /* 0 or 1: source side of the conversation */
    uint32_t seq, ack;
    uint8_t flags;
    uint16_t ipid;
    unsigned shape;
    const uint8_t *data;
    size_t len;
} iw_pcapw_tcp;

/* Writes the IP packet (header, TCP header, payload) into out, which has
 * room for IW_PCAPW_HDR_MAX + t->len octets; returns its length. Uses the
 * addresses and ports of k only. */
size_t iw_pcapw_build(uint8_t *out, const iw_pcapw_conn *k, const iw_pcapw_tcp *t);

/* The 20-octet IPv4 header (DF, TTL 64) of a packet from side `from` of
 * k carrying l4_len octets of protocol proto, written at ip; returns the
 * pseudo-header's sum for the transport checksum (RFC 768, RFC 793), to
 * pass to iw_pcapw_csum. */
uint32_t iw_pcapw_ip4(uint8_t *ip, const iw_pcapw_conn *k, int from, uint8_t proto, uint16_t ipid,
                      size_t l4_len);

/* Zeroes k and sets af, the initial sequence numbers (next = isn) and
 * ack[] = the peer's isn + 1. Addresses, ports, opts, shape and the sink
 * are the caller's to fill in. */
void iw_pcapw_conn_init(iw_pcapw_conn *k, int af, uint32_t isn0, uint32_t isn1);

/* One segment at sequence number seq (built in k->pkt); the conversation's
 * state is left as it is (reordering, duplicates, retransmissions, gaps). */
void iw_pcapw_seg_at(iw_pcapw_conn *k, int from, uint32_t seq, uint8_t flags, const uint8_t *data,
                     size_t len);

/* One segment at next[from]; next advances by len (+1 for SYN or FIN). */
void iw_pcapw_seg(iw_pcapw_conn *k, int from, uint8_t flags, const uint8_t *data, size_t len);

/* len octets from side `from`, cut into segments of at most mss octets
 * (PSH|ACK; see IW_PCAPW_PSH_LAST). Nothing for len 0. */
void iw_pcapw_send(iw_pcapw_conn *k, int from, const uint8_t *data, size_t len, size_t mss);

/* One UDP datagram (IPv4 only; nothing for IPv6 or over
 * IW_PCAPW_PAYLOAD_MAX) from side `from`, with the conversation's
 * addresses and ports: SCTP carried in UDP (RFC 6951) for instance. */
void iw_pcapw_udp(iw_pcapw_conn *k, int from, const uint8_t *data, size_t len);

/* SYN, SYN|ACK, ACK with `client` opening. */
void iw_pcapw_handshake(iw_pcapw_conn *k, int client);

/* FIN|ACK from each side (`first` first), then the last ACK. */
void iw_pcapw_close(iw_pcapw_conn *k, int first);

/* A libpcap capture file, Ethernet link type: side s has the MAC address
 * 02:00:00:00:00:(s+1). */
typedef struct iw_pcapw_file iw_pcapw_file;

/* Returns NULL with err set on failure. */
iw_pcapw_file *iw_pcapw_open(const char *path, char *err, size_t errlen);
/* Flushes and closes; returns 0, or -1 on a write error. */
int iw_pcapw_file_close(iw_pcapw_file *f);
/* Timestamps: each packet first adds step_us to the clock (0: the clock
 * stands still and iw_pcapw_set_time sets it). */
void iw_pcapw_set_clock(iw_pcapw_file *f, uint64_t t_us, uint32_t step_us);
void iw_pcapw_set_time(iw_pcapw_file *f, uint64_t t_us);
/* Points k's sink at f. */
void iw_pcapw_attach(iw_pcapw_conn *k, iw_pcapw_file *f);
/* The Ethernet header for a packet from side `from`: 14 octets. */
size_t iw_pcapw_eth(uint8_t *p, int af, int from);

#endif
