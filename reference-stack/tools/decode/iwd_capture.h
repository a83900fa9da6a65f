/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwd_capture: iwarp-decode's capture mode. Reads a pcap or pcapng file with
 * libpcap, follows every TCP connection in both directions (iwd_pcap parses
 * the packets, iwd_tcp reassembles each direction), decides which
 * connections carry iWARP, and decodes each direction with its own
 * deframer (iwd_dec), from the MPA startup when the capture has it, else
 * from the first FPDU boundary iw_mpa_sync_probe finds. Records go to iwd_out,
 * tagged with the stream, direction, frame and timestamp. Manual:
 * docs/iwarp-decode.md, "Capture files". */
#ifndef IWD_CAPTURE_H
#define IWD_CAPTURE_H

#include <iwarp/iwarp.h>
#include <stdio.h>

#include "iwd_print.h"

#define IWD_PORTS_MAX 64

typedef struct iwd_capture_opts {
    iw_df_mode markers, crc;       /* --markers/--crc: forced for every direction */
    bool have_stream_off;          /* --stream-offset: grid position of a mid-stream */
    uint32_t stream_off;           /* direction's first captured octet */
    uint16_t ports[IWD_PORTS_MAX]; /* --port: decode these connections whatever they hold */
    size_t nports;
    size_t ooo_cap; /* per direction; 0: IWD_TCP_OOO_CAP_DEFAULT */
} iwd_capture_opts;

/* Decode the capture in f (positioned at its first octet; libpcap reads and
 * closes it). name is for messages. Returns 0 when every verdict is
 * ok, 1 when one is not, 2 when the file could not be read to its end
 * (after decoding what could be; the reason is on stderr). */
int iwd_capture_run(FILE *f, const char *name, const iwd_capture_opts *opts, iwd_out *out);

#endif
