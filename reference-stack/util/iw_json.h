/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A small JSON reader for the tools' line protocols (the agent protocol,
 * the runner's case files); iw_jsonw.h is the writer. Input comes from untrusted peers:
 * parsing is bounded (depth, size) and every failure is a message, never a
 * crash. Not part of libiwarp's wire codecs. */
#ifndef IW_JSON_H
#define IW_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum iw_json_type {
    IW_JSON_NULL = 0,
    IW_JSON_BOOL,
    IW_JSON_NUM,
    IW_JSON_STR,
    IW_JSON_ARR,
    IW_JSON_OBJ
} iw_json_type;

typedef struct iw_json {
    iw_json_type type;
    bool b;
    double num;
    bool is_int; /* num was written as an integer within int64 */
    int64_t i;
    const char *str; /* NUL-terminated, decoded (may contain NUL: see len) */
    size_t len;
    const char *key; /* member name inside an object */
    size_t key_len;
    int32_t child; /* first element / member, -1 if none */
    int32_t next;  /* next sibling, -1 if none */
} iw_json;

typedef struct iw_json_doc {
    iw_json *nodes;
    int32_t n, cap;
    char *chars; /* decoded strings */
    size_t nchars, capchars;
    char err[160];
} iw_json_doc;

#define IW_JSON_MAX_DEPTH 32
#define IW_JSON_MAX_NODES 65536

/* Parse text (exactly one value, surrounded by optional whitespace).
 * Returns 0 and the root at doc->nodes[0], or -1 with doc->err set. */
int iw_json_parse(iw_json_doc *doc, const char *text, size_t len);
void iw_json_free(iw_json_doc *doc);

/* Member of an object by name, or NULL. */
const iw_json *iw_json_get(const iw_json_doc *doc, const iw_json *obj, const char *key);
const iw_json *iw_json_first(const iw_json_doc *doc, const iw_json *arr);
const iw_json *iw_json_next(const iw_json_doc *doc, const iw_json *it);

/* Typed accessors for request fields. Each returns 0 (absent: *out keeps
 * its default and 0 is returned when !required), or -1 with a message in
 * err naming the field. Unsigned fields accept JSON integers or "0x..."
 * hex strings (the agent protocol sends values over 2^53 as hex). */
int iw_json_u64(const iw_json_doc *doc, const iw_json *obj, const char *key, bool required,
                uint64_t max, uint64_t *out, char *err, size_t errlen);
int iw_json_bool(const iw_json_doc *doc, const iw_json *obj, const char *key, bool *out, char *err,
                 size_t errlen);
/* A string member; *out points into the document. */
int iw_json_str(const iw_json_doc *doc, const iw_json *obj, const char *key, bool required,
                const char **out, char *err, size_t errlen);
/* The value of one hex digit (either case), or -1. */
int iw_json_hexval(int c);

/* Lowercase/uppercase hex string member decoded into a new buffer (free()
 * it); at most max octets. */
int iw_json_hex(const iw_json_doc *doc, const iw_json *obj, const char *key, bool required,
                size_t max, uint8_t **out, size_t *outlen, char *err, size_t errlen);

#endif
