/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iw_jw: the tools' streaming JSON writer (iwarp-decode's JSON lines,
 * iwarp-target's agent protocol, the runner's reports).
 *
 * The caller opens objects and arrays, writes members in order, and the
 * writer inserts commas and escapes strings into a FILE (a file, stdout, or
 * an open_memstream buffer). No allocation; nesting is bounded by
 * IW_JW_DEPTH. */
#ifndef IW_JSONW_H
#define IW_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define IW_JW_DEPTH 8

typedef struct iw_jw {
    FILE *f;
    unsigned depth;
    bool first[IW_JW_DEPTH]; /* nothing written yet at this level */
} iw_jw;

void iw_jw_init(iw_jw *j, FILE *f);

/* `key` names the member inside an object; pass NULL at top level and
 * inside arrays. */
void iw_jw_obj_begin(iw_jw *j, const char *key);
void iw_jw_obj_end(iw_jw *j);
void iw_jw_arr_begin(iw_jw *j, const char *key);
void iw_jw_arr_end(iw_jw *j);

void iw_jw_str(iw_jw *j, const char *key, const char *s);
void iw_jw_uint(iw_jw *j, const char *key, uint64_t v);
void iw_jw_bool(iw_jw *j, const char *key, bool v);
void iw_jw_null(iw_jw *j, const char *key);
/* Lowercase hex string of n octets ("" when n is 0). */
void iw_jw_hexbytes(iw_jw *j, const char *key, const uint8_t *p, size_t n);
/* "0x%08x" and "0x%016llx": identifiers and 64-bit values, which JSON
 * numbers (doubles) cannot carry exactly. */
void iw_jw_hex32(iw_jw *j, const char *key, uint32_t v);
void iw_jw_hex64(iw_jw *j, const char *key, uint64_t v);

/* A value that is already JSON text (e.g. an event stored earlier). */
void iw_jw_raw(iw_jw *j, const char *key, const char *json);

/* Ends the current line (one JSON value per line). */
void iw_jw_newline(iw_jw *j);

#endif
