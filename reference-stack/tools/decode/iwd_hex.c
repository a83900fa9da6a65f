/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Hex dump reader for iwarp-decode --hex: see iwd_hex.h for the formats.
 *
 * Two paths share one grammar for a hex group ([0x]hex digits, optionally
 * split by ':', an even number of digits per group):
 *  - a plain line is scanned character by character, so it may be of any
 *    length (one long "hex stream" line is common);
 *  - a line with an offset column is held whole (it is short) because its
 *    end is only known by looking at what follows the data: an ASCII column
 *    is recognised by comparing it with the rendering of the octets. */
#include "iw_json.h"
#include "iwd_hex.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum { ST_SEP, ST_ZERO, ST_TOK };
enum { TOK_OK, TOK_ODD, TOK_JUNK };

void iwd_hex_init(iwd_hex *h, iwd_hex_emit_fn emit, void *ctx) {
    memset(h, 0, sizeof *h);
    h->emit = emit;
    h->ctx = ctx;
    h->line = 1;
}

static bool is_blank(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

__attribute__((format(printf, 2, 3))) static int hex_fail(iwd_hex *h, const char *fmt, ...) {
    int n = snprintf(h->err, sizeof h->err, "line %lu: ", h->line);
    if (n < 0 || (size_t)n >= sizeof h->err)
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(h->err + n, sizeof h->err - (size_t)n, fmt, ap);
    va_end(ap);
    h->_failed = true;
    return -1;
}

static void out_flush(iwd_hex *h) {
    if (h->_nout) {
        h->emit(h->ctx, h->_out, h->_nout);
        h->total += h->_nout;
        h->_nout = 0;
    }
}

static void out_byte(iwd_hex *h, uint8_t b) {
    h->_out[h->_nout++] = b;
    if (h->_nout == sizeof h->_out)
        out_flush(h);
}

static void out_bytes(iwd_hex *h, const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        out_byte(h, p[i]);
}

/* A character for an error message: shown as is when printable. */
static void show_char(char *dst, size_t len, unsigned char c) {
    if (c > 0x20 && c < 0x7F)
        snprintf(dst, len, "'%c'", c);
    else
        snprintf(dst, len, "byte 0x%02x", c);
}

/* ---- plain hex, scanned as it comes ---- */

static void plain_begin(iwd_hex *h) {
    h->_st = ST_SEP;
    h->_comment = false;
    h->_line_start = true;
    h->_toklen = 0;
}

static int plain_odd(iwd_hex *h) {
    return hex_fail(h, "odd number of hex digits in '%s%s'", h->_tok,
                    h->_toklen >= sizeof h->_tok - 1 ? "..." : "");
}

static int plain_tok_end(iwd_hex *h) {
    if (h->_st == ST_ZERO)
        return plain_odd(h); /* a lone "0" */
    if (h->_st == ST_TOK) {
        if (h->_ndig & 1)
            return plain_odd(h);
        if (h->_tdig == 0)
            return hex_fail(h, "'%s' has no hex digits", h->_tok);
    }
    h->_st = ST_SEP;
    return 0;
}

static void plain_nibble(iwd_hex *h, unsigned v) {
    if (h->_ndig & 1)
        out_byte(h, (uint8_t)(h->_hi << 4 | v));
    else
        h->_hi = (uint8_t)v;
    h->_ndig++;
    h->_tdig++;
}

static int plain_putc(iwd_hex *h, unsigned char c) {
    if (h->_comment)
        return 0;
    if (is_blank(c) || c == ',' || c == ';')
        return plain_tok_end(h);
    if (h->_line_start && c == '#') {
        h->_comment = true;
        return 0;
    }
    h->_line_start = false;
    if (h->_st == ST_SEP) {
        h->_toklen = 0;
        h->_ndig = h->_tdig = 0;
    }
    if (h->_toklen < sizeof h->_tok - 1) {
        h->_tok[h->_toklen++] = (char)c;
        h->_tok[h->_toklen] = '\0';
    }
    if (h->_st == ST_SEP) {
        if (c == '0') {
            h->_st = ST_ZERO; /* maybe a 0x prefix */
            return 0;
        }
        h->_st = ST_TOK;
    } else if (h->_st == ST_ZERO) {
        h->_st = ST_TOK;
        if (c == 'x' || c == 'X')
            return 0;
        plain_nibble(h, 0);
    }
    int v = iw_json_hexval(c);
    if (v >= 0) {
        plain_nibble(h, (unsigned)v);
        return 0;
    }
    if (c == ':') {
        if (h->_ndig & 1)
            return plain_odd(h);
        h->_ndig = 0;
        return 0;
    }
    char what[16];
    show_char(what, sizeof what, c);
    return hex_fail(h, "%s is not a hex digit (in '%s')", what, h->_tok);
}

static int plain_line(iwd_hex *h, const char *s, size_t n) {
    plain_begin(h);
    for (size_t i = 0; i < n; i++)
        if (plain_putc(h, (unsigned char)s[i]))
            return -1;
    return h->_comment ? 0 : plain_tok_end(h);
}

/* ---- lines with an offset column ---- */

/* [0x]hex, 1..16 digits: an offset value. */
static bool parse_off(const char *s, size_t n, uint64_t *v, size_t *digits, bool *prefix) {
    *prefix = n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    if (*prefix) {
        s += 2;
        n -= 2;
    }
    if (n == 0 || n > 16)
        return false;
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        int d = iw_json_hexval((unsigned char)s[i]);
        if (d < 0)
            return false;
        x = x << 4 | (unsigned)d;
    }
    *v = x;
    *digits = n;
    return true;
}

/* One data group of an offset line into out. Same grammar as the plain
 * scanner. */
static int tok_decode(const char *t, size_t n, uint8_t *out, size_t *outn) {
    size_t k = 0, o = 0;
    unsigned nd = 0, td = 0;
    if (n > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X'))
        k = 2;
    for (; k < n; k++) {
        unsigned char c = (unsigned char)t[k];
        int v = iw_json_hexval(c);
        if (v >= 0) {
            if (nd & 1)
                out[o - 1] = (uint8_t)(out[o - 1] << 4 | (unsigned)v);
            else
                out[o++] = (uint8_t)v;
            nd++;
            td++;
        } else if (c == ':') {
            if (nd & 1)
                return TOK_ODD;
            nd = 0;
        } else {
            return TOK_JUNK;
        }
    }
    if (td == 0)
        return TOK_JUNK;
    if (nd & 1)
        return TOK_ODD;
    *outn = o;
    return TOK_OK;
}

/* Width in digits of a data group (0 if it is not one). */
static size_t group_width(const char *t, size_t n) {
    if (n > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
        t += 2;
        n -= 2;
    }
    if (n && t[n - 1] == ',')
        n--;
    for (size_t i = 0; i < n; i++)
        if (iw_json_hexval((unsigned char)t[i]) < 0)
            return 0;
    return n;
}

static bool ascii_char_ok(uint8_t x, char c) {
    if (x > 0x20 && x < 0x7F)
        return c == (char)x;
    if (x == 0x20)
        return c == ' ' || c == '.';
    return c == '.';
}

/* Does r[0..len) render octets b[s..s+len-(mid?1:0)), where `mid` is the
 * index in r of an extra space some dumpers (Wireshark's byte view) put
 * after the 8th octet? */
static bool ascii_render_eq(const uint8_t *b, size_t s, const char *r, size_t len, size_t mid) {
    for (size_t i = 0, k = s; i < len; i++) {
        if (i == mid) {
            if (r[i] != ' ')
                return false;
            continue;
        }
        if (!ascii_char_ok(b[k++], r[i]))
            return false;
    }
    return true;
}

/* Does text r[0..len) read as the ASCII column of octets b[0..m)? Dumpers
 * print 0x21-0x7E as themselves and everything else as '.', except that
 * most print a space as ' ' (tcpdump prints '.'). Spaces at either end of
 * the column vanish into the gap or the trimmed line end, so the column may
 * skip leading and trailing 0x20 octets. */
static bool ascii_matches(const uint8_t *b, size_t m, const char *r, size_t len) {
    size_t lead = 0, trail = 0;
    while (lead < m && b[lead] == 0x20)
        lead++;
    while (trail < m && b[m - 1 - trail] == 0x20)
        trail++;
    for (size_t s = 0; s <= lead && s < m; s++) {
        for (int with_mid = 0; with_mid < 2; with_mid++) {
            size_t mid = (size_t)-1, n = len;
            if (with_mid) {
                if (s >= 8 || len <= 8 - s)
                    continue;
                mid = 8 - s;
                n--;
            }
            /* the column covers octets s..s+n-1; what it leaves out at the
             * end must be spaces */
            if (s + n > m || s + n + trail < m)
                continue;
            if (ascii_render_eq(b, s, r, len, mid))
                return true;
        }
    }
    return false;
}

static int tok_error(iwd_hex *h, const char *s, const iwd_hex_tok *t, int st) {
    int show = t->len > 20 ? 20 : (int)t->len;
    const char *more = t->len > 20 ? "..." : "";
    if (st == TOK_ODD)
        return hex_fail(h, "odd number of hex digits in '%.*s%s'", show, s + t->start, more);
    return hex_fail(h, "'%.*s%s' is not hex data", show, s + t->start, more);
}

/* Octets decoded from the first k groups of the line. */
static size_t tok_bend(const iwd_hex *h, size_t k) { return k ? h->_toks[k - 1].bend : 0; }

/* Octets of the line whose data region is s[from..n): the groups up to the
 * ASCII column. */
static int offset_line_data(iwd_hex *h, const char *s, size_t from, size_t n, size_t *nbytes) {
    size_t ntok = 0;
    for (size_t k = from; k < n;) {
        unsigned gap = 0;
        while (k < n && is_blank((unsigned char)s[k])) {
            gap += s[k] == '\t' ? 2 : 1;
            k++;
        }
        if (k == n)
            break;
        size_t st = k;
        while (k < n && !is_blank((unsigned char)s[k]))
            k++;
        iwd_hex_tok *t = &h->_toks[ntok++];
        t->start = (uint16_t)st;
        t->len = (uint16_t)(k - st);
        t->wide_gap = gap >= 2;
    }

    /* Explicit column delimiters: hexdump -C "  |....|", od -z "  >....<".
     * Taken only when everything before the opener is hex data; otherwise
     * the line is read as undelimited (the ASCII of an xxd line may hold
     * " |" too). */
    char last = s[n - 1];
    if (ntok && (last == '|' || last == '<')) {
        char open = last == '|' ? '|' : '>';
        size_t end = 0;
        for (size_t i = 0; i < ntok; i++)
            if (s[h->_toks[i].start] == open) {
                end = i;
                break;
            }
        if (end > 0) {
            size_t o = 0, bn;
            size_t i = 0;
            for (; i < end; i++) {
                if (tok_decode(s + h->_toks[i].start, h->_toks[i].len, h->_bytes + o, &bn) !=
                    TOK_OK)
                    break;
                o += bn;
            }
            if (i == end) {
                *nbytes = o;
                return 0;
            }
        }
    }

    /* Undelimited: decode groups up to the first that is not hex. */
    size_t o = 0, j = 0;
    int jst = TOK_OK;
    for (; j < ntok; j++) {
        size_t bn;
        jst = tok_decode(s + h->_toks[j].start, h->_toks[j].len, h->_bytes + o, &bn);
        if (jst != TOK_OK)
            break;
        o += bn;
        h->_toks[j].bend = (uint16_t)o;
    }

    /* The ASCII column starts after a wide gap; the first split whose rest
     * is the rendering of the octets before it wins. */
    for (size_t k = 1; k <= j && k < ntok; k++) {
        if (!h->_toks[k].wide_gap)
            continue;
        size_t rs = h->_toks[k].start;
        if (ascii_matches(h->_bytes, tok_bend(h, k), s + rs, n - rs)) {
            *nbytes = tok_bend(h, k);
            return 0;
        }
    }
    if (j == ntok) {
        *nbytes = o; /* all hex, no ASCII column */
        return 0;
    }
    /* A column that does not render the octets (edited, another charset):
     * it still starts after the last wide gap before the first non-hex
     * group. */
    for (size_t k = j; k >= 1; k--)
        if (h->_toks[k].wide_gap) {
            *nbytes = tok_bend(h, k);
            return 0;
        }
    return tok_error(h, s, &h->_toks[j], jst);
}

/* Settle whether the first token s[0..n) of the first data line is an offset
 * column, when it has no ':' to say so: it is longer than the groups after
 * it (hexdump -C "00000000  4d 50", od "000000 4d 50", Wireshark "0000   4d"),
 * and a line boundary value. Plain "4d50 4120" has groups of equal width. */
static int guess_offset(iwd_hex *h, const char *s, size_t n, const char *next, size_t nn,
                        bool *is_off) {
    *is_off = false;
    uint64_t v;
    size_t digits;
    bool prefix;
    if (!nn || !parse_off(s, n, &v, &digits, &prefix) || prefix || digits < 4)
        return 0;
    size_t w = group_width(next, nn);
    if (w == 0 || w >= digits || v % 8 != 0)
        return 0;
    if (digits == 7 && w == 4)
        return hex_fail(h, "this looks like 'hexdump' or 'od -x' output, which prints 16-bit "
                           "words in host byte order; use 'hexdump -C', 'od -A x -t x1z' or 'xxd'");
    *is_off = true;
    return 0;
}

static int offset_line(iwd_hex *h, const char *s, size_t n, size_t e0, uint64_t off) {
    h->mode = IWD_HEX_OFFSET;
    if (h->_star) {
        /* "*" stood for copies of the previous line up to this offset. */
        uint64_t gap = off - h->_expect;
        if (off < h->_expect || h->_last_len == 0 || gap % h->_last_len != 0 ||
            gap > IWD_HEX_REPEAT_MAX)
            return hex_fail(h,
                            "offset 0x%" PRIx64 " after '*' is not a whole number of repeated "
                            "lines past 0x%" PRIx64,
                            off, h->_expect);
        for (uint64_t r = gap / h->_last_len; r; r--)
            out_bytes(h, h->_last, h->_last_len);
        h->_star = false;
    } else if (h->_have_off && off != h->_expect && off != 0) {
        /* Offset 0 starts another packet (Wireshark, tcpdump). */
        return hex_fail(h,
                        "offset 0x%" PRIx64 " does not follow the previous line "
                        "(expected 0x%" PRIx64 "): is a line missing?",
                        off, h->_expect);
    }
    size_t nb = 0;
    if (offset_line_data(h, s, e0, n, &nb))
        return -1;
    out_bytes(h, h->_bytes, nb);
    memcpy(h->_last, h->_bytes, nb);
    h->_last_len = nb;
    h->_have_off = true;
    h->_expect = off + nb;
    return 0;
}

/* One whole line (at most IWD_HEX_LINE_CAP characters, no newline). */
static int process_line(iwd_hex *h, const char *s, size_t n) {
    while (n && is_blank((unsigned char)s[n - 1]))
        n--;
    size_t i = 0;
    while (i < n && is_blank((unsigned char)s[i]))
        i++;
    if (i == n || s[i] == '#')
        return 0;
    if (n - i == 1 && s[i] == '*') {
        if (h->mode != IWD_HEX_OFFSET || !h->_have_off)
            return hex_fail(h, "'*' (repeated lines) needs an offset column and a line before it");
        h->_star = true;
        return 0;
    }
    size_t e0 = i;
    while (e0 < n && !is_blank((unsigned char)s[e0]))
        e0++;
    uint64_t off = 0;
    size_t digits;
    bool prefix, is_off = false;
    if (s[e0 - 1] == ':' && parse_off(s + i, e0 - 1 - i, &off, &digits, &prefix) &&
        (digits >= 4 || prefix)) {
        is_off = true; /* xxd "00000000:", tcpdump "0x0000:" */
    } else if (h->mode == IWD_HEX_OFFSET) {
        if (!parse_off(s + i, e0 - i, &off, &digits, &prefix)) {
            int show = e0 - i > 20 ? 20 : (int)(e0 - i);
            return hex_fail(h,
                            "'%.*s' is not an offset, but the lines before have an offset column",
                            show, s + i);
        }
        is_off = true;
    } else if (h->mode == IWD_HEX_UNKNOWN) {
        size_t ns = e0;
        while (ns < n && is_blank((unsigned char)s[ns]))
            ns++;
        size_t ne = ns;
        while (ne < n && !is_blank((unsigned char)s[ne]))
            ne++;
        if (guess_offset(h, s + i, e0 - i, s + ns, ne - ns, &is_off))
            return -1;
        if (is_off)
            parse_off(s + i, e0 - i, &off, &digits, &prefix);
    }
    if (!is_off) {
        h->mode = IWD_HEX_PLAIN;
        return plain_line(h, s + i, n - i);
    }
    return offset_line(h, s, n, e0, off);
}

int iwd_hex_feed(iwd_hex *h, const char *text, size_t n) {
    if (h->_failed)
        return -1;
    for (size_t k = 0; k < n; k++) {
        unsigned char c = (unsigned char)text[k];
        if (h->_streaming) {
            if (c == '\n') {
                h->_streaming = false;
                if (!h->_comment && plain_tok_end(h))
                    return -1;
                h->line++;
            } else if (plain_putc(h, c)) {
                return -1;
            }
            continue;
        }
        if (c == '\n') {
            if (process_line(h, h->_buf, h->_len))
                return -1;
            h->_len = 0;
            h->line++;
            continue;
        }
        if (h->_len == sizeof h->_buf) {
            /* Only plain hex comes in lines this long: scan it as it comes. */
            if (h->mode == IWD_HEX_OFFSET)
                return hex_fail(h, "line longer than %d characters in a dump with an offset column",
                                IWD_HEX_LINE_CAP);
            h->mode = IWD_HEX_PLAIN;
            h->_streaming = true;
            plain_begin(h);
            for (size_t i = 0; i < h->_len; i++)
                if (plain_putc(h, (unsigned char)h->_buf[i]))
                    return -1;
            h->_len = 0;
            if (plain_putc(h, c))
                return -1;
            continue;
        }
        h->_buf[h->_len++] = (char)c;
    }
    out_flush(h);
    return 0;
}

int iwd_hex_finish(iwd_hex *h) {
    if (h->_failed)
        return -1;
    if (h->_streaming) {
        h->_streaming = false;
        if (!h->_comment && plain_tok_end(h))
            return -1;
    } else if (h->_len) {
        if (process_line(h, h->_buf, h->_len))
            return -1;
        h->_len = 0;
    }
    if (h->_star)
        return hex_fail(h, "the dump ends after '*' without the offset line that ends the repeat");
    out_flush(h);
    return 0;
}
