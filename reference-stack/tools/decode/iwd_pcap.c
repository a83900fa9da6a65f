/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Packet parsing for iwarp-decode's capture mode: see iwd_pcap.h.
 *
 * Two lengths travel down the layers: `cap`, the octets present in the
 * capture, and `wire`, the octets the packet had (more when the snap length
 * cut it). Headers must be wholly captured; payload may be cut, and the
 * caller learns how much of it is missing. A length field that claims more
 * than the packet had is malformed; less (Ethernet padding) trims. */
#include "iwd_pcap.h"
#include <iwarp/wire.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

/* pcap_datalink() values (pcap/dlt.h). DLT_RAW is 12 on most systems and 14
 * on OpenBSD; 101 is LINKTYPE_RAW as stored in files. */
enum {
    DLT_NULL_ = 0,
    DLT_EN10MB_ = 1,
    DLT_RAW_12 = 12,
    DLT_RAW_14 = 14,
    DLT_RAW_101 = 101,
    DLT_LOOP_ = 108,
    DLT_LINUX_SLL_ = 113,
    DLT_IPV4_ = 228,
    DLT_IPV6_ = 229,
    DLT_LINUX_SLL2_ = 276
};

#define ETH_IPV4 0x0800
#define ETH_IPV6 0x86DD
#define ETH_VLAN 0x8100
#define ETH_QINQ 0x88A8
#define ETH_QINQ_OLD 0x9100
#define IPPROTO_TCP_ 6
#define IPPROTO_SCTP_ 132

bool iwd_pkt_dlt_supported(int dlt) {
    switch (dlt) {
    case DLT_NULL_:
    case DLT_EN10MB_:
    case DLT_RAW_12:
    case DLT_RAW_14:
    case DLT_RAW_101:
    case DLT_LOOP_:
    case DLT_LINUX_SLL_:
    case DLT_IPV4_:
    case DLT_IPV6_:
    case DLT_LINUX_SLL2_:
        return true;
    default:
        return false;
    }
}

const char *iwd_pkt_dlt_name(int dlt) {
    switch (dlt) {
    case DLT_NULL_:
        return "BSD loopback";
    case DLT_EN10MB_:
        return "Ethernet";
    case DLT_RAW_12:
    case DLT_RAW_14:
    case DLT_RAW_101:
        return "raw IP";
    case DLT_LOOP_:
        return "OpenBSD loopback";
    case DLT_LINUX_SLL_:
        return "Linux cooked (SLL)";
    case DLT_IPV4_:
        return "raw IPv4";
    case DLT_IPV6_:
        return "raw IPv6";
    case DLT_LINUX_SLL2_:
        return "Linux cooked v2 (SLL2)";
    default:
        return "unsupported";
    }
}

#define BAD(msg)                                                                                   \
    do {                                                                                           \
        *why = (msg);                                                                              \
        return IWD_PKT_MALFORMED;                                                                  \
    } while (0)

/* TCP at p: cap octets captured, wire octets of IP payload. */
static iwd_pkt_kind parse_tcp(const uint8_t *p, size_t cap, size_t wire, iwd_pkt *o,
                              const char **why) {
    if (wire < 20)
        BAD("TCP header longer than the IP payload");
    if (cap < 20)
        BAD("TCP header cut short by the capture");
    size_t doff = (size_t)(p[12] >> 4) * 4;
    if (doff < 20)
        BAD("TCP data offset below 5");
    if (doff > wire)
        BAD("TCP header longer than the IP payload");
    if (doff > cap)
        BAD("TCP options cut short by the capture");
    o->sport = iw_get_u16(p);
    o->dport = iw_get_u16(p + 2);
    o->seq = iw_get_u32(p + 4);
    o->ack = iw_get_u32(p + 8);
    o->flags = p[13];
    o->payload = p + doff;
    o->len = wire - doff;
    o->caplen = cap - doff;
    return IWD_PKT_TCP;
}

static iwd_pkt_kind parse_ipv4(const uint8_t *p, size_t cap, size_t wire, iwd_pkt *o,
                               const char **why) {
    if (cap < 20 || wire < 20)
        BAD(cap < wire ? "IPv4 header cut short by the capture" : "IPv4 header truncated");
    if (p[0] >> 4 != 4)
        BAD("IP version is not 4");
    size_t ihl = (size_t)(p[0] & 0x0F) * 4;
    if (ihl < 20)
        BAD("IPv4 header length below 20");
    if (ihl > wire)
        BAD("IPv4 header longer than the packet");
    if (ihl > cap)
        BAD("IPv4 options cut short by the capture");
    size_t total = iw_get_u16(p + 2);
    if (total == 0)
        total = wire; /* TCP segmentation offload: the length was never filled in */
    if (total < ihl)
        BAD("IPv4 total length shorter than its header");
    if (total > wire)
        BAD("IPv4 total length exceeds the packet");
    uint16_t frag = iw_get_u16(p + 6);
    if (frag & 0x3FFF) /* MF or a fragment offset */
        return IWD_PKT_FRAGMENT;
    if (p[9] != IPPROTO_TCP_)
        return p[9] == IPPROTO_SCTP_ ? IWD_PKT_SCTP : IWD_PKT_OTHER;
    o->af = 4;
    memset(o->src, 0, sizeof o->src);
    memset(o->dst, 0, sizeof o->dst);
    memcpy(o->src, p + 12, 4);
    memcpy(o->dst, p + 16, 4);
    size_t cend = cap < total ? cap : total;
    return parse_tcp(p + ihl, cend - ihl, total - ihl, o, why);
}

static iwd_pkt_kind parse_ipv6(const uint8_t *p, size_t cap, size_t wire, iwd_pkt *o,
                               const char **why) {
    if (cap < 40 || wire < 40)
        BAD(cap < wire ? "IPv6 header cut short by the capture" : "IPv6 header truncated");
    if (p[0] >> 4 != 6)
        BAD("IP version is not 6");
    size_t end = 40 + (size_t)iw_get_u16(p + 4);
    if (end == 40)
        end = wire; /* jumbogram or segmentation offload */
    if (end > wire)
        BAD("IPv6 payload length exceeds the packet");
    size_t cend = cap < end ? cap : end;
    uint8_t nh = p[6];
    size_t off = 40;
    for (int hops = 0; hops < 16; hops++) {
        size_t hl;
        switch (nh) {
        case IPPROTO_TCP_:
            o->af = 6;
            memcpy(o->src, p + 8, 16);
            memcpy(o->dst, p + 24, 16);
            return parse_tcp(p + off, cend - off, end - off, o, why);
        case IPPROTO_SCTP_:
            return IWD_PKT_SCTP;
        case 0:   /* Hop-by-Hop Options */
        case 43:  /* Routing */
        case 60:  /* Destination Options */
        case 135: /* Mobility */
        case 139: /* HIP */
        case 140: /* Shim6 */
        case 253:
        case 254: /* experimental */
        case 51:  /* AH */
        case 44:  /* Fragment */
            if (off + 8 > end)
                BAD("IPv6 extension header longer than the packet");
            if (off + 8 > cend)
                BAD("IPv6 extension header cut short by the capture");
            if (nh == 44) {
                uint16_t fo = iw_get_u16(p + off + 2);
                if (fo & 0xFFF9) /* offset or M: a real fragment */
                    return IWD_PKT_FRAGMENT;
                hl = 8; /* an atomic fragment: the whole datagram */
            } else if (nh == 51) {
                hl = ((size_t)p[off + 1] + 2) * 4;
            } else {
                hl = ((size_t)p[off + 1] + 1) * 8;
            }
            if (off + hl > end)
                BAD("IPv6 extension header longer than the packet");
            if (off + hl > cend)
                BAD("IPv6 extension header cut short by the capture");
            nh = p[off];
            off += hl;
            break;
        default:
            return IWD_PKT_OTHER; /* ESP, ICMPv6, UDP, no next header, ... */
        }
    }
    BAD("IPv6 extension header chain too long");
}

static iwd_pkt_kind parse_ip(uint16_t ethertype, const uint8_t *p, size_t cap, size_t wire,
                             iwd_pkt *o, const char **why) {
    if (ethertype == ETH_IPV4)
        return parse_ipv4(p, cap, wire, o, why);
    if (ethertype == ETH_IPV6)
        return parse_ipv6(p, cap, wire, o, why);
    return IWD_PKT_OTHER;
}

/* After an EtherType: VLAN tags, then IP. */
static iwd_pkt_kind parse_ethertype(uint16_t type, const uint8_t *p, size_t cap, size_t wire,
                                    iwd_pkt *o, const char **why) {
    for (int tags = 0; tags < 4 && (type == ETH_VLAN || type == ETH_QINQ || type == ETH_QINQ_OLD);
         tags++) {
        if (cap < 4)
            BAD("VLAN tag cut short");
        type = iw_get_u16(p + 2);
        p += 4;
        cap -= 4;
        wire -= 4;
    }
    return parse_ip(type, p, cap, wire, o, why);
}

iwd_pkt_kind iwd_pkt_parse(int dlt, const uint8_t *p, size_t caplen, size_t wirelen, iwd_pkt *out,
                           const char **why) {
    static const char *none = "";
    const char *dummy;
    if (!why)
        why = &dummy;
    *why = none;
    memset(out, 0, sizeof *out);
    size_t cap = caplen, wire = wirelen > caplen ? wirelen : caplen;
    switch (dlt) {
    case DLT_EN10MB_:
        if (cap < 14)
            BAD("Ethernet header cut short");
        if (iw_get_u16(p + 12) < 0x0600)
            return IWD_PKT_OTHER; /* 802.3 length field: LLC, not IP */
        return parse_ethertype(iw_get_u16(p + 12), p + 14, cap - 14, wire - 14, out, why);
    case DLT_LINUX_SLL_:
        if (cap < 16)
            BAD("Linux cooked header cut short");
        return parse_ethertype(iw_get_u16(p + 14), p + 16, cap - 16, wire - 16, out, why);
    case DLT_LINUX_SLL2_:
        if (cap < 20)
            BAD("Linux cooked v2 header cut short");
        return parse_ethertype(iw_get_u16(p), p + 20, cap - 20, wire - 20, out, why);
    case DLT_NULL_:
    case DLT_LOOP_: {
        if (cap < 4)
            BAD("loopback header cut short");
        uint32_t af = iw_get_u32(p);
        if (dlt == DLT_NULL_ && (af & 0xFFFF0000u)) /* host byte order of the capturing host */
            af = (af >> 24) | ((af >> 8) & 0xFF00u) | ((af << 8) & 0xFF0000u) | (af << 24);
        uint16_t type;
        if (af == 2)
            type = ETH_IPV4;
        else if (af == 10 || af == 24 || af == 28 || af == 30) /* AF_INET6: Linux, BSDs, macOS */
            type = ETH_IPV6;
        else
            return IWD_PKT_OTHER;
        return parse_ip(type, p + 4, cap - 4, wire - 4, out, why);
    }
    case DLT_RAW_12:
    case DLT_RAW_14:
    case DLT_RAW_101:
    case DLT_IPV4_:
    case DLT_IPV6_:
        if (cap < 1)
            BAD("empty packet");
        if (p[0] >> 4 == 4 && dlt != DLT_IPV6_)
            return parse_ipv4(p, cap, wire, out, why);
        if (p[0] >> 4 == 6 && dlt != DLT_IPV4_)
            return parse_ipv6(p, cap, wire, out, why);
        BAD("IP version is neither 4 nor 6");
    default:
        return IWD_PKT_OTHER;
    }
}

void iwd_pkt_addr_str(char *buf, uint8_t af, const uint8_t *addr, uint16_t port) {
    char ip[INET6_ADDRSTRLEN];
    if (af == 4) {
        snprintf(buf, IWD_ADDR_STRLEN, "%u.%u.%u.%u:%u", addr[0], addr[1], addr[2], addr[3], port);
        return;
    }
    if (!inet_ntop(AF_INET6, addr, ip, sizeof ip))
        snprintf(ip, sizeof ip, "?");
    snprintf(buf, IWD_ADDR_STRLEN, "[%s]:%u", ip, port);
}

bool iwd_is_capture_magic(const uint8_t *p, size_t n) {
    if (n < 4)
        return false;
    uint32_t m = iw_get_u32(p);
    switch (m) {
    case 0xA1B2C3D4u: /* pcap, microseconds, big-endian file */
    case 0xD4C3B2A1u: /* ... little-endian */
    case 0xA1B23C4Du: /* pcap, nanoseconds */
    case 0x4D3CB2A1u:
    case 0xA1B2CD34u: /* Kuznetsov's modified pcap */
    case 0x34CDB2A1u:
    case 0x0A0D0D0Au: /* pcapng Section Header Block */
        return true;
    default:
        return false;
    }
}
