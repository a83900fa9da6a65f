/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The tools' JSON writer: see iw_jsonw.h. */
#include "iw_jsonw.h"

#include <inttypes.h>
#include <stdlib.h>

void iw_jw_init(iw_jw *j, FILE *f) {
    j->f = f;
    j->depth = 0;
    j->first[0] = true;
}

static void json_string_body(FILE *f, const char *s) {
    static const char hex[] = "0123456789abcdef";
    putc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"':
            fputs("\\\"", f);
            break;
        case '\\':
            fputs("\\\\", f);
            break;
        case '\n':
            fputs("\\n", f);
            break;
        case '\r':
            fputs("\\r", f);
            break;
        case '\t':
            fputs("\\t", f);
            break;
        default:
            /* Control characters must be escaped; octets >= 0x80 pass
             * through, since every string we print (library names such as
             * "RFC 5044 §7.1.2") is valid UTF-8. */
            if (*p < 0x20) {
                fputs("\\u00", f);
                putc(hex[*p >> 4], f);
                putc(hex[*p & 0xF], f);
            } else {
                putc(*p, f);
            }
        }
    }
    putc('"', f);
}

/* Comma and key before a value at the current level. */
static void json_member(iw_jw *j, const char *key) {
    if (!j->first[j->depth])
        putc(',', j->f);
    j->first[j->depth] = false;
    if (key) {
        json_string_body(j->f, key);
        putc(':', j->f);
    }
}

static void json_open(iw_jw *j, const char *key, char c) {
    json_member(j, key);
    putc(c, j->f);
    /* Nesting is fixed by our schema; overflowing it is a bug here. */
    if (j->depth + 1 >= IW_JW_DEPTH)
        abort();
    j->depth++;
    j->first[j->depth] = true;
}

static void json_close(iw_jw *j, char c) {
    if (j->depth == 0)
        abort();
    j->depth--;
    putc(c, j->f);
}

void iw_jw_obj_begin(iw_jw *j, const char *key) { json_open(j, key, '{'); }
void iw_jw_obj_end(iw_jw *j) { json_close(j, '}'); }
void iw_jw_arr_begin(iw_jw *j, const char *key) { json_open(j, key, '['); }
void iw_jw_arr_end(iw_jw *j) { json_close(j, ']'); }

void iw_jw_str(iw_jw *j, const char *key, const char *s) {
    json_member(j, key);
    json_string_body(j->f, s ? s : "");
}

void iw_jw_uint(iw_jw *j, const char *key, uint64_t v) {
    json_member(j, key);
    fprintf(j->f, "%" PRIu64, v);
}

void iw_jw_bool(iw_jw *j, const char *key, bool v) {
    json_member(j, key);
    fputs(v ? "true" : "false", j->f);
}

void iw_jw_null(iw_jw *j, const char *key) {
    json_member(j, key);
    fputs("null", j->f);
}

void iw_jw_hexbytes(iw_jw *j, const char *key, const uint8_t *p, size_t n) {
    static const char hex[] = "0123456789abcdef";
    json_member(j, key);
    putc('"', j->f);
    /* In blocks: a read_mr answer is 2 MiB of text, two putc calls per
     * octet cost more than the rest of the request. */
    char blk[2 * 2048];
    while (n) {
        size_t k = n < sizeof blk / 2 ? n : sizeof blk / 2;
        for (size_t i = 0; i < k; i++) {
            blk[2 * i] = hex[p[i] >> 4];
            blk[2 * i + 1] = hex[p[i] & 0xF];
        }
        fwrite(blk, 1, 2 * k, j->f);
        p += k;
        n -= k;
    }
    putc('"', j->f);
}

void iw_jw_hex32(iw_jw *j, const char *key, uint32_t v) {
    json_member(j, key);
    fprintf(j->f, "\"0x%08" PRIx32 "\"", v);
}

void iw_jw_hex64(iw_jw *j, const char *key, uint64_t v) {
    json_member(j, key);
    fprintf(j->f, "\"0x%016" PRIx64 "\"", v);
}

void iw_jw_raw(iw_jw *j, const char *key, const char *json) {
    json_member(j, key);
    fputs(json, j->f);
}

void iw_jw_newline(iw_jw *j) {
    if (j->depth != 0)
        abort();
    putc('\n', j->f);
    j->first[0] = true;
}
