/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwd_hex: turns hex dumps as people paste them into bug reports back into
 * octets, for iwarp-decode --hex.
 *
 * Accepted, line by line (the dialect is settled by the first data line):
 *  - plain hex with or without separators: "4d50 4120", "4d:50:41",
 *    "0x4d, 0x50", one long run ("xxd -p", Wireshark "hex stream");
 *  - dumps with an offset column: xxd, hexdump -C, od -A x -t x1z,
 *    Wireshark "Copy as Hex Dump" (either spacing), tcpdump -X / -xx.
 * Offset and ASCII columns are recognised and skipped, never taken as data.
 * A line's data is the run of hex groups after the offset; an ASCII column
 * starts at '|' (hexdump -C), at " >" (od), or after a gap of two or more
 * blanks, and is confirmed by comparing it with the rendering of the octets
 * before it, so ASCII text that looks like hex ("cafe") is never data.
 * "*" lines (hexdump/od squeezing repeated lines) are expanded from the
 * next offset. Lines starting with '#' are comments.
 *
 * Push parser: feed text in any chunking; octets come out through the emit
 * callback. Memory is bounded: plain hex may come in lines of any length;
 * a line with an offset column may not exceed IWD_HEX_LINE_CAP. */
#ifndef IWD_HEX_H
#define IWD_HEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IWD_HEX_LINE_CAP 4096
/* Largest span one "*" line may stand for (a squeezed run of equal lines). */
#define IWD_HEX_REPEAT_MAX (1ull << 30)

typedef void (*iwd_hex_emit_fn)(void *ctx, const uint8_t *p, size_t n);

typedef enum { IWD_HEX_UNKNOWN = 0, IWD_HEX_PLAIN, IWD_HEX_OFFSET } iwd_hex_mode;

typedef struct iwd_hex_tok {
    uint16_t start, len;
    uint16_t bend; /* octets of the line through this group */
    bool wide_gap; /* two or more blanks (or a tab) before it */
} iwd_hex_tok;

/* Caller-owned, about 30 KiB: allocate it. Fields starting with _ are private. */
typedef struct iwd_hex {
    iwd_hex_emit_fn emit;
    void *ctx;
    unsigned long line; /* 1-based number of the line being read */
    iwd_hex_mode mode;
    uint64_t total; /* octets emitted so far */
    char err[256];  /* message when a call returned -1 */

    char _buf[IWD_HEX_LINE_CAP];
    size_t _len;
    bool _streaming; /* this line outgrew _buf: plain hex, scanned as it comes */
    bool _failed;
    /* plain-hex scanner */
    int _st;
    unsigned _ndig; /* digits in the current ':'-separated group */
    unsigned _tdig; /* digits in the current token */
    uint8_t _hi;
    bool _comment, _line_start;
    char _tok[24];
    size_t _toklen;
    /* offset column bookkeeping */
    bool _have_off, _star;
    uint64_t _expect;
    uint8_t _last[IWD_HEX_LINE_CAP / 2];
    size_t _last_len;
    uint8_t _bytes[IWD_HEX_LINE_CAP / 2];
    iwd_hex_tok _toks[IWD_HEX_LINE_CAP / 2];
    /* output staging */
    uint8_t _out[4096];
    size_t _nout;
} iwd_hex;

void iwd_hex_init(iwd_hex *h, iwd_hex_emit_fn emit, void *ctx);

/* Parse n characters. Returns 0, or -1 with h->err naming the line. Once a
 * call failed, later calls fail too. */
int iwd_hex_feed(iwd_hex *h, const char *text, size_t n);

/* End of text: parses a last line without a newline. Returns 0 or -1. */
int iwd_hex_finish(iwd_hex *h);

#endif
