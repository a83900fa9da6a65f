/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests for the hex dump reader behind iwarp-decode --hex: every dialect in
 * tests/dialects/ must give the octets of dialects/small.bin (a copy of
 * samples/mpa-v1-reply-nocrc.bin) however the text is chunked, and the
 * tricky lines (hex-looking ASCII columns, squeezed '*' runs, long plain
 * lines) and the error cases are pinned one by one. */
#include <stdio.h>
#include <stdlib.h>

#include "iw_test.h"
#include "iwd_hex.h"

#ifndef IWD_DIALECTS_DIR
#error "IWD_DIALECTS_DIR must name tools/tests/dialects"
#endif

typedef struct {
    uint8_t *p;
    size_t len, cap;
} sink;

static void sink_emit(void *ctx, const uint8_t *p, size_t n) {
    sink *s = ctx;
    if (s->len + n > s->cap) {
        size_t cap = s->cap ? s->cap : 256;
        while (cap < s->len + n)
            cap *= 2;
        uint8_t *q = realloc(s->p, cap);
        if (!q)
            abort();
        s->p = q;
        s->cap = cap;
    }
    memcpy(s->p + s->len, p, n);
    s->len += n;
}

typedef struct {
    int rc;
    sink out;
    char err[256];
} result;

/* Parse text fed `step` characters at a time (0: all at once). */
static result parse_step(const char *text, size_t len, size_t step) {
    result r;
    memset(&r, 0, sizeof r);
    iwd_hex *h = malloc(sizeof *h);
    if (!h)
        abort();
    iwd_hex_init(h, sink_emit, &r.out);
    size_t at = 0;
    while (at < len && r.rc == 0) {
        size_t n = step && len - at > step ? step : len - at;
        r.rc = iwd_hex_feed(h, text + at, n);
        at += n;
    }
    if (r.rc == 0)
        r.rc = iwd_hex_finish(h);
    CHECK_EQ(r.out.len, h->total);
    memcpy(r.err, h->err, sizeof r.err);
    free(h);
    return r;
}

static result parse(const char *text) { return parse_step(text, strlen(text), 0); }

static void result_free(result *r) { free(r->out.p); }

/* Expect success with exactly these octets (given as hex). */
static void expect_bytes(const char *text, const char *want_hex) {
    uint8_t want[512];
    size_t n = iw_test_unhex(want, sizeof want, want_hex);
    for (size_t step = 0; step <= 3; step++) {
        result r = parse_step(text, strlen(text), step);
        if (r.rc != 0)
            fprintf(stderr, "  unexpected error: %s\n  input: %s", r.err, text);
        CHECK_EQ(r.rc, 0);
        CHECK_EQ(r.out.len, n);
        if (r.out.len == n && n)
            CHECK_MEM(r.out.p, want, n);
        result_free(&r);
    }
}

/* Expect failure with a message containing `what`. */
static void expect_error(const char *text, const char *what) {
    result r = parse(text);
    CHECK_EQ(r.rc, -1);
    if (!strstr(r.err, what))
        fprintf(stderr, "  message '%s' lacks '%s'\n", r.err, what);
    CHECK(strstr(r.err, what) != NULL);
    result_free(&r);
}

static char *slurp(const char *name, size_t *len) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", IWD_DIALECTS_DIR, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "  cannot open %s\n", path);
        return NULL;
    }
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 4096;
            char *q = realloc(buf, cap + 1);
            if (!q)
                abort();
            buf = q;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        if (got == 0)
            break;
        n += got;
    }
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

IW_TEST(dialects_match_binary) {
    static const char *const files[] = {
        "xxd.txt",
        "xxd-g1.txt",
        "xxd-p.txt",
        "hexdump-C.txt",
        "od.txt",
        "wireshark.txt",
        "wireshark-bytes.txt",
        "tcpdump-X.txt",
        "tcpdump-xx.txt",
        "plain-groups.txt",
        "plain-colons.txt",
        "plain-0x.txt",
        "plain-oneline.txt",
    };
    size_t blen;
    char *bin = slurp("small.bin", &blen);
    REQUIRE(bin != NULL);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        size_t tlen;
        char *text = slurp(files[i], &tlen);
        CHECK(text != NULL);
        if (!text)
            continue;
        /* Whole, one character at a time, and in odd-sized chunks. */
        static const size_t steps[] = {0, 1, 7, 4093};
        for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
            result r = parse_step(text, tlen, steps[s]);
            if (r.rc != 0 || r.out.len != blen || memcmp(r.out.p, bin, blen) != 0)
                fprintf(stderr, "  %s (step %zu): rc=%d len=%zu/%zu %s\n", files[i], steps[s], r.rc,
                        r.out.len, blen, r.err);
            CHECK_EQ(r.rc, 0);
            CHECK_EQ(r.out.len, blen);
            if (r.out.len == blen)
                CHECK_MEM(r.out.p, bin, blen);
            result_free(&r);
        }
        free(text);
    }
    free(bin);
}

IW_TEST(plain_forms) {
    expect_bytes("4d50 4120\n4944\n", "4d50412049 44");
    expect_bytes("4d:50:41\n", "4d5041");
    expect_bytes("0x4d, 0x50,\n0X41;\n", "4d5041");
    expect_bytes("4D5041204944\n", "4d5041204944");
    expect_bytes("4d50  4120\n", "4d504120"); /* equal groups: no offset column */
    expect_bytes("  4d 50\r\n41\r\n", "4d5041");
    expect_bytes("# a comment 00ff\n\n4d50\n   # another\n", "4d50");
    expect_bytes("4d50", "4d50"); /* no final newline */
    expect_bytes("", "");
}

IW_TEST(ascii_column_that_looks_like_hex) {
    /* xxd: "cafe babe" in the ASCII column is not data. */
    expect_bytes("00000000: 6361 6665 2062 6162 6520 6465 6164 2062  cafe babe dead b\n",
                 "63616665 20626162 65206465 61642062");
    expect_bytes("00000000: 6361 6665                                cafe\n", "63616665");
    /* Wireshark: an ASCII column made only of 2-digit hex words. */
    expect_bytes("0000   41 42 20 43 44 20 45 46                           AB CD EF\n",
                 "41422043442045 46");
    expect_bytes("0000   41 42  AB\n", "4142");
    /* tcpdump -X prints spaces as '.', and its ASCII may read as hex. */
    expect_bytes("\t0x0000:  6465 6164 2062 6565 66                 dead.beef\n",
                 "6465616420626565 66");
    /* hexdump -C with '|' inside the column. */
    expect_bytes("00000000  7c 20 7c 41                                       || |A|\n",
                 "7c207c41");
    /* xxd whose ASCII column ends in '|' and holds " |": not a hexdump -C
     * delimiter. */
    expect_bytes("00000000: 6120 7c                                  a |\n", "61207c");
    /* od with '>' in the column. */
    expect_bytes("000000 3e 20 3e                                         >> ><\n", "3e203e");
    /* A column that no longer renders the octets (edited) still starts
     * after the wide gap. */
    expect_bytes("00000000: 4d50 4120  cafe MPA?\n", "4d504120");
}

IW_TEST(offset_columns) {
    /* hexdump -C squeezing: '*' repeats the line before up to the next
     * offset; the lone last offset ends the dump. */
    expect_bytes("00000000  00 01 02 03 04 05 06 07  08 09 0a 0b 0c 0d 0e 0f  |................|\n"
                 "*\n"
                 "00000030  ff                                                |.|\n"
                 "00000031\n",
                 "000102030405060708090a0b0c0d0e0f 000102030405060708090a0b0c0d0e0f"
                 "000102030405060708090a0b0c0d0e0f ff");
    /* A second packet restarts at offset 0 (Wireshark, tcpdump). */
    expect_bytes("0000   01 02   ..\n0000   03   .\n", "010203");
    /* Offsets keep tracking after a lone offset line. */
    expect_bytes("00000000: 0102  ..\n00000002: 03  .\n", "010203");
}

IW_TEST(long_plain_lines) {
    /* Lines longer than the line buffer are plain hex, scanned as they come. */
    size_t n = 3 * IWD_HEX_LINE_CAP + 2;
    char *text = malloc(n + 2);
    REQUIRE(text != NULL);
    for (size_t i = 0; i < n; i++)
        text[i] = "0123456789abcdef"[i % 16];
    text[n] = '\n';
    text[n + 1] = '\0';
    for (size_t step = 0; step < 2; step++) {
        result r = parse_step(text, n + 1, step ? 1000 : 0);
        CHECK_EQ(r.rc, 0);
        CHECK_EQ(r.out.len, n / 2);
        if (r.out.len == n / 2)
            CHECK_EQ(r.out.p[n / 2 - 1], (n - 2) % 16 << 4 | (n - 1) % 16);
        result_free(&r);
    }
    text[n - 1] = '\n'; /* now odd */
    result r = parse_step(text, n, 0);
    CHECK_EQ(r.rc, -1);
    CHECK(strstr(r.err, "line 1: odd number of hex digits") != NULL);
    result_free(&r);
    /* ...but not in a dump with an offset column. */
    memcpy(text, "00000000: 4d50\n", 15);
    memset(text + 15, '4', n - 15);
    r = parse_step(text, n, 0);
    CHECK_EQ(r.rc, -1);
    CHECK(strstr(r.err, "line 2: line longer than") != NULL);
    result_free(&r);
    free(text);
}

IW_TEST(errors_name_the_line) {
    expect_error("4d5\n", "line 1: odd number of hex digits in '4d5'");
    expect_error("4d50\n4d 5 0\n", "line 2: odd number of hex digits in '5'");
    expect_error("4d50\n\n4d 50 zz\n", "line 3: 'z' is not a hex digit");
    expect_error("0x\n", "line 1: '0x' has no hex digits");
    expect_error("0\n", "line 1: odd number of hex digits in '0'");
    expect_error("4d:5\n", "odd number of hex digits");
    expect_error("00000000: 4d5 4120\n", "line 1: odd number of hex digits in '4d5'");
    expect_error("00000000: 4d50 zz41 4120\n", "line 1: 'zz41' is not hex data");
    expect_error("00000000: 4d50\n00000010: 4120\n",
                 "line 2: offset 0x10 does not follow the previous line (expected 0x2)");
    expect_error("00000000: 4d50\nhello\n", "line 2: 'hello' is not an offset");
    expect_error("4d50\n*\n", "line 2: '*'");
    expect_error("00000000  00 01  |..|\n*\n", "ends after '*'");
    expect_error("00000000  00 01  |..|\n*\n00000003\n", "not a whole number of repeated lines");
    expect_error("0000000 504d 2041\n", "host byte order");
    expect_error("12:00:00.000000 IP 10.0.0.1.4000 > 10.0.0.2.4001: Flags [P.]\n",
                 "line 1: '.' is not a hex digit");
    /* After an error every call fails. */
    iwd_hex *h = malloc(sizeof *h);
    REQUIRE(h != NULL);
    sink s = {0};
    iwd_hex_init(h, sink_emit, &s);
    CHECK_EQ(iwd_hex_feed(h, "zz\n", 3), -1);
    CHECK_EQ(iwd_hex_feed(h, "4d50\n", 5), -1);
    CHECK_EQ(iwd_hex_finish(h), -1);
    free(h);
    free(s.p);
}

IW_TEST_MAIN("iwd_hex", IW_CASE(dialects_match_binary), IW_CASE(plain_forms),
             IW_CASE(ascii_column_that_looks_like_hex), IW_CASE(offset_columns),
             IW_CASE(long_plain_lines), IW_CASE(errors_name_the_line))
