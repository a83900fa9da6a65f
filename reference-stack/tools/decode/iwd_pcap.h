/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwd_pcap: iwarp-decode's packet parsing for capture files. Pure: it reads
 * one captured packet (link header, IPv4/IPv6, TCP) from a byte span and
 * says where the TCP payload is. Every length is checked against both the
 * captured length and the lengths the headers claim; nothing is read past
 * the span. Reading the file is libpcap's job (iwd_capture.c).
 *
 * Link types: Ethernet (with 802.1Q/802.1ad tags), Linux cooked SLL and
 * SLL2, raw IP (DLT_RAW, DLT_IPV4, DLT_IPV6), BSD loopback (DLT_NULL, host
 * byte order) and OpenBSD loopback (DLT_LOOP, network byte order). IP
 * fragments are not reassembled (counted and skipped). */
#ifndef IWD_PCAP_H
#define IWD_PCAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IWD_TCP_FIN 0x01
#define IWD_TCP_SYN 0x02
#define IWD_TCP_RST 0x04
#define IWD_TCP_ACK 0x10

typedef struct iwd_pkt {
    uint8_t af; /* 4 or 6 */
    uint8_t src[16], dst[16];
    uint16_t sport, dport;
    uint32_t seq, ack;
    uint8_t flags; /* TCP flags octet (IWD_TCP_*) */
    const uint8_t *payload;
    size_t caplen; /* payload octets present in the capture */
    size_t len;    /* payload octets per the IP and TCP headers (>= caplen) */
} iwd_pkt;

typedef enum iwd_pkt_kind {
    IWD_PKT_TCP = 0,  /* *out is filled in */
    IWD_PKT_OTHER,    /* not TCP over IP (ARP, UDP, ...): skipped */
    IWD_PKT_SCTP,     /* SCTP over IP: skipped, and counted (DDP over SCTP, RFC 5043) */
    IWD_PKT_FRAGMENT, /* an IP fragment: skipped */
    IWD_PKT_MALFORMED /* a header is cut short or a length is impossible: *why says which */
} iwd_pkt_kind;

/* Link types this parser knows (pcap_datalink() values). */
bool iwd_pkt_dlt_supported(int dlt);
const char *iwd_pkt_dlt_name(int dlt);

/* Parse one packet: caplen octets at p, wirelen the original length (as in
 * struct pcap_pkthdr; caplen < wirelen when the snap length cut it). */
iwd_pkt_kind iwd_pkt_parse(int dlt, const uint8_t *p, size_t caplen, size_t wirelen, iwd_pkt *out,
                           const char **why);

/* "192.0.2.1:4791" or "[2001:db8::1]:4791". buf must hold IWD_ADDR_STRLEN. */
#define IWD_ADDR_STRLEN 56
void iwd_pkt_addr_str(char *buf, uint8_t af, const uint8_t *addr, uint16_t port);

/* Capture-file magic numbers: pcap (microsecond and nanosecond, either byte
 * order) and pcapng (Section Header Block). n octets at p, n >= 4 to say yes. */
bool iwd_is_capture_magic(const uint8_t *p, size_t n);

#endif
