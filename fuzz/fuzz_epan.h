/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared by the harnesses that run the Wireshark plugin (fuzz_plugin,
 * fuzz_diff_plugin): libwireshark's epan set up as tshark does, with our
 * plugin's sources compiled in, and fake TCP captures dissected the way
 * tshark -2 does (fuzz_epan.c; docs/fuzzing.md, "fuzz_plugin and epan").
 *
 * Built with the "wireshark" need of fuzz/fuzzers.txt, which adds the
 * plugin's sources, this file's fuzz_epan.c and libwireshark. */
#ifndef IW_FUZZ_EPAN_H
#define IW_FUZZ_EPAN_H

#include <stdbool.h>

#include <epan/epan.h>
#include <epan/epan_dissect.h>
#include <epan/proto.h>

#include "fuzz.h"

#define FZ_EPAN_PORT_DECODE_AS 19000 /* bound to iwk_mpa by Decode As */
#define FZ_EPAN_PORT_HEUR 19001      /* left to the TCP heuristic */

/* Preferences, as bits (fuzz_plugin's cfg byte; bit 0 and 3 are the
 * capture's: Decode As and no handshake). */
#define FZ_EPAN_TCP_DESEGMENT 0x02u    /* tcp.desegment_tcp_streams */
#define FZ_EPAN_MPA_DESEGMENT 0x04u    /* iwk_mpa.desegment */
#define FZ_EPAN_MIDSTREAM 0x08u        /* iwk_mpa.midstream */
#define FZ_EPAN_MIDSTREAM_NO_CRC 0x10u /* iwk_mpa.midstream_no_crc */
#define FZ_EPAN_CHECK_CRC 0x20u        /* iwk_mpa.check_crc */
#define FZ_EPAN_TCP_OOO 0x40u          /* tcp.reassemble_out_of_order */
#define FZ_EPAN_TCP_HEUR_FIRST 0x80u   /* tcp.try_heuristic_first */

/* Once per process: epan, our plugin registered, only our heuristic on TCP,
 * iwk_mpa on FZ_EPAN_PORT_DECODE_AS. Later calls do nothing. */
void fz_epan_init(void);
/* Set the preferences the bits name (FZ_EPAN_*), unset the others; applied
 * only when they changed since the last call. */
void fz_epan_prefs(unsigned bits);

/* One TCP connection: client (direction 0, 10.128.x.y:40000) and server
 * (direction 1, 10.0.0.2). Each capture gets a client address of its own,
 * so its conversation never meets an earlier capture's. */
typedef struct {
    uint8_t **pkt; /* Ethernet + IPv4 + TCP frames */
    size_t *len;
    size_t n, cap;
    uint32_t seq[2];  /* next sequence number per direction */
    uint32_t tsn[2];  /* SCTP: next TSN per direction */
    uint16_t port[2]; /* client, server */
    uint32_t client;  /* the client's IPv4 address (the server is 10.0.0.2) */
    uint16_t ip_id;
} fz_capture;

/* Start a capture to the Decode As port or the heuristic one, with the
 * three-way handshake or (mid-stream) without. The server's sequence
 * numbers wrap during the capture. */
void fz_capture_open(fz_capture *c, bool decode_as, bool handshake);
/* One frame from direction dir with TCP flags and sequence number seq
 * (the caller keeps c->seq). Checksums are left zero: Wireshark does not
 * verify them by default. */
void fz_capture_frame(fz_capture *c, int dir, uint8_t flags, uint32_t seq, const uint8_t *pay,
                      size_t n);
/* An SCTP packet between the same hosts and ports with one unfragmented
 * DATA chunk (RFC 4960 §3.3.1): DDP over SCTP (RFC 5043) reaches the
 * plugin through sctp.ppi. The checksum is left zero, as for TCP. */
void fz_capture_sctp(fz_capture *c, int dir, uint16_t sid, uint32_t tsn, uint32_t ppid,
                     bool unordered, const uint8_t *pay, size_t n);
/* Data in order from direction dir, in segments of at most 8192 octets. */
void fz_capture_send(fz_capture *c, int dir, const uint8_t *pay, size_t n);
void fz_capture_free(fz_capture *c);

/* Dissect the capture twice, as tshark -2: a first pass without a tree,
 * then one with a visible tree, where each frame's tree goes to on_frame
 * (frame index in the capture, from 0). The epan session is renewed every
 * 4096 captures (FUZZ_PLUGIN_FRESH=1: every capture); FUZZ_PLUGIN_PCAP=file
 * writes the capture for tshark first. */
typedef void fz_epan_frame_fn(size_t frame, proto_tree *tree, void *user);
void fz_epan_dissect(const fz_capture *c, fz_epan_frame_fn *on_frame, void *user);

#endif
