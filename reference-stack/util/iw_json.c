/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Bounded recursive-descent JSON parser. */
#include "iw_json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    iw_json_doc *doc;
    const char *p, *end;
    int depth;
} json_parser;

/* Records the first failure; iw_json_parse adds the offset. */
static int json_fail(json_parser *ps, const char *what) {
    if (!ps->doc->err[0])
        snprintf(ps->doc->err, sizeof ps->doc->err, "%s", what);
    return -1;
}

static void json_ws(json_parser *ps) {
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static int32_t json_node(json_parser *ps) {
    iw_json_doc *d = ps->doc;
    if (d->n == d->cap) {
        if (d->cap >= IW_JSON_MAX_NODES)
            return -1;
        int32_t ncap = d->cap ? d->cap * 2 : 64;
        iw_json *nn = realloc(d->nodes, (size_t)ncap * sizeof *nn);
        if (!nn)
            return -1;
        d->nodes = nn;
        d->cap = ncap;
    }
    iw_json *n = &d->nodes[d->n];
    memset(n, 0, sizeof *n);
    n->child = n->next = -1;
    return d->n++;
}

/* Strings are decoded into doc->chars; since that buffer may move, nodes
 * keep offsets while parsing and become pointers at the end. */
static int json_chars(json_parser *ps, const char *s, size_t n) {
    iw_json_doc *d = ps->doc;
    if (d->capchars - d->nchars < n + 1) {
        size_t ncap = d->capchars ? d->capchars : 256;
        while (ncap - d->nchars < n + 1)
            ncap *= 2;
        char *c = realloc(d->chars, ncap);
        if (!c)
            return -1;
        d->chars = c;
        d->capchars = ncap;
    }
    memcpy(d->chars + d->nchars, s, n);
    d->nchars += n;
    return 0;
}

int iw_json_hexval(int c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int json_hex4(const char *p, unsigned *out) {
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int d = iw_json_hexval(p[i]);
        if (d < 0)
            return -1;
        v = v << 4 | (unsigned)d;
    }
    *out = v;
    return 0;
}

/* Parses a string at ps->p (at the quote); returns the offset in chars. */
static int json_string(json_parser *ps, size_t *off, size_t *len) {
    ps->p++; /* " */
    *off = ps->doc->nchars;
    while (ps->p < ps->end && *ps->p != '"') {
        unsigned char c = (unsigned char)*ps->p;
        if (c < 0x20)
            return json_fail(ps, "control character in string");
        if (c != '\\') {
            const char *s = ps->p;
            while (ps->p < ps->end && *ps->p != '"' && *ps->p != '\\' &&
                   (unsigned char)*ps->p >= 0x20)
                ps->p++;
            if (json_chars(ps, s, (size_t)(ps->p - s)) < 0)
                return json_fail(ps, "out of memory");
            continue;
        }
        if (ps->end - ps->p < 2)
            return json_fail(ps, "unterminated escape");
        char e = ps->p[1];
        ps->p += 2;
        char ch;
        switch (e) {
        case '"':
            ch = '"';
            break;
        case '\\':
            ch = '\\';
            break;
        case '/':
            ch = '/';
            break;
        case 'b':
            ch = '\b';
            break;
        case 'f':
            ch = '\f';
            break;
        case 'n':
            ch = '\n';
            break;
        case 'r':
            ch = '\r';
            break;
        case 't':
            ch = '\t';
            break;
        case 'u': {
            unsigned u;
            if (ps->end - ps->p < 4 || json_hex4(ps->p, &u) < 0)
                return json_fail(ps, "bad \\u escape");
            ps->p += 4;
            /* Encode as UTF-8; surrogate pairs are kept as two 3-octet
             * sequences: these protocols only carry ASCII names. */
            char u8[3];
            size_t k;
            if (u < 0x80) {
                u8[0] = (char)u;
                k = 1;
            } else if (u < 0x800) {
                u8[0] = (char)(0xC0 | u >> 6);
                u8[1] = (char)(0x80 | (u & 0x3F));
                k = 2;
            } else {
                u8[0] = (char)(0xE0 | u >> 12);
                u8[1] = (char)(0x80 | (u >> 6 & 0x3F));
                u8[2] = (char)(0x80 | (u & 0x3F));
                k = 3;
            }
            if (json_chars(ps, u8, k) < 0)
                return json_fail(ps, "out of memory");
            continue;
        }
        default:
            return json_fail(ps, "bad escape");
        }
        if (json_chars(ps, &ch, 1) < 0)
            return json_fail(ps, "out of memory");
    }
    if (ps->p >= ps->end)
        return json_fail(ps, "unterminated string");
    ps->p++;
    *len = ps->doc->nchars - *off;
    if (json_chars(ps, "", 1) < 0) /* NUL terminator */
        return json_fail(ps, "out of memory");
    return 0;
}

static int json_value(json_parser *ps, int32_t *out);

static int json_number(json_parser *ps, iw_json *n) {
    const char *s = ps->p;
    if (ps->p < ps->end && *ps->p == '-')
        ps->p++;
    if (ps->p >= ps->end || !(*ps->p >= '0' && *ps->p <= '9'))
        return json_fail(ps, "bad number");
    bool integer = true;
    while (ps->p < ps->end && ((*ps->p >= '0' && *ps->p <= '9') || *ps->p == '.' || *ps->p == 'e' ||
                               *ps->p == 'E' || *ps->p == '+' || *ps->p == '-')) {
        if (*ps->p == '.' || *ps->p == 'e' || *ps->p == 'E')
            integer = false;
        ps->p++;
    }
    char tmp[64];
    size_t k = (size_t)(ps->p - s);
    if (k >= sizeof tmp)
        return json_fail(ps, "number too long");
    memcpy(tmp, s, k);
    tmp[k] = 0;
    char *e;
    n->type = IW_JSON_NUM;
    n->num = strtod(tmp, &e);
    if (*e)
        return json_fail(ps, "bad number");
    if (integer) {
        errno = 0;
        long long v = strtoll(tmp, &e, 10);
        n->is_int = !*e && errno == 0;
        n->i = v;
    }
    return 0;
}

static bool json_lit(json_parser *ps, const char *lit) {
    size_t k = strlen(lit);
    if ((size_t)(ps->end - ps->p) < k || memcmp(ps->p, lit, k) != 0)
        return false;
    ps->p += k;
    return true;
}

static int json_container(json_parser *ps, int32_t idx, bool obj) {
    if (++ps->depth > IW_JSON_MAX_DEPTH)
        return json_fail(ps, "nesting too deep");
    ps->p++;
    json_ws(ps);
    char close = obj ? '}' : ']';
    int32_t prev = -1;
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        ps->depth--;
        return 0;
    }
    for (;;) {
        size_t koff = 0, klen = 0;
        if (obj) {
            json_ws(ps);
            if (ps->p >= ps->end || *ps->p != '"')
                return json_fail(ps, "expected member name");
            if (json_string(ps, &koff, &klen) < 0)
                return -1;
            json_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':')
                return json_fail(ps, "expected ':'");
            ps->p++;
        }
        int32_t child;
        if (json_value(ps, &child) < 0)
            return -1;
        iw_json *c = &ps->doc->nodes[child];
        if (obj) {
            c->key = (const char *)(uintptr_t)koff; /* offset until fixup */
            c->key_len = klen;
        }
        if (prev < 0)
            ps->doc->nodes[idx].child = child;
        else
            ps->doc->nodes[prev].next = child;
        prev = child;
        json_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == close) {
            ps->p++;
            ps->depth--;
            return 0;
        }
        return json_fail(ps, obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int json_value(json_parser *ps, int32_t *out) {
    json_ws(ps);
    if (ps->p >= ps->end)
        return json_fail(ps, "unexpected end of input");
    int32_t idx = json_node(ps);
    if (idx < 0)
        return json_fail(ps, "document too large");
    *out = idx;
    char c = *ps->p;
    if (c == '{' || c == '[') {
        ps->doc->nodes[idx].type = c == '{' ? IW_JSON_OBJ : IW_JSON_ARR;
        return json_container(ps, idx, c == '{');
    }
    if (c == '"') {
        size_t off, len;
        if (json_string(ps, &off, &len) < 0)
            return -1;
        iw_json *n = &ps->doc->nodes[idx];
        n->type = IW_JSON_STR;
        n->str = (const char *)(uintptr_t)off;
        n->len = len;
        return 0;
    }
    if (c == '-' || (c >= '0' && c <= '9'))
        return json_number(ps, &ps->doc->nodes[idx]);
    if (json_lit(ps, "true") || json_lit(ps, "false")) {
        ps->doc->nodes[idx].type = IW_JSON_BOOL;
        ps->doc->nodes[idx].b = ps->p[-1] == 'e' && ps->p[-2] == 'u';
        return 0;
    }
    if (json_lit(ps, "null"))
        return 0;
    return json_fail(ps, "unexpected character");
}

int iw_json_parse(iw_json_doc *doc, const char *text, size_t len) {
    memset(doc, 0, sizeof *doc);
    json_parser ps = {doc, text, text + len, 0};
    int32_t root;
    int rc = json_value(&ps, &root);
    if (rc == 0) {
        json_ws(&ps);
        if (ps.p != ps.end)
            rc = json_fail(&ps, "trailing characters");
    }
    if (rc < 0) {
        char msg[sizeof doc->err];
        memcpy(msg, doc->err, sizeof msg);
        snprintf(doc->err, sizeof doc->err, "%.100s at offset %zu", msg, (size_t)(ps.p - text));
        return -1;
    }
    /* Offsets become pointers now that doc->chars no longer moves. */
    for (int32_t i = 0; i < doc->n; i++) {
        iw_json *n = &doc->nodes[i];
        if (n->type == IW_JSON_STR)
            n->str = doc->chars + (uintptr_t)n->str;
        if (n->key_len || n->key)
            n->key = doc->chars + (uintptr_t)n->key;
    }
    return 0;
}

void iw_json_free(iw_json_doc *doc) {
    free(doc->nodes);
    free(doc->chars);
    memset(doc, 0, sizeof *doc);
}

const iw_json *iw_json_get(const iw_json_doc *doc, const iw_json *obj, const char *key) {
    if (!obj || obj->type != IW_JSON_OBJ)
        return NULL;
    size_t kl = strlen(key);
    for (int32_t i = obj->child; i >= 0; i = doc->nodes[i].next) {
        const iw_json *m = &doc->nodes[i];
        if (m->key_len == kl && memcmp(m->key, key, kl) == 0)
            return m;
    }
    return NULL;
}

const iw_json *iw_json_first(const iw_json_doc *doc, const iw_json *arr) {
    return arr && arr->child >= 0 ? &doc->nodes[arr->child] : NULL;
}

const iw_json *iw_json_next(const iw_json_doc *doc, const iw_json *it) {
    return it && it->next >= 0 ? &doc->nodes[it->next] : NULL;
}

static int json_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int json_err(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* Hex digits only, all n of them (no sign, space or second prefix, which
 * strtoull would skip or accept), and no more than 64 bits. */
static int json_hex_u64(const char *p, size_t n, uint64_t *out) {
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        int d = iw_json_hexval((unsigned char)p[i]);
        if (d < 0 || x > UINT64_MAX >> 4)
            return -1;
        x = x << 4 | (uint64_t)d;
    }
    *out = x;
    return 0;
}

int iw_json_u64(const iw_json_doc *doc, const iw_json *obj, const char *key, bool required,
                uint64_t max, uint64_t *out, char *err, size_t errlen) {
    const iw_json *v = iw_json_get(doc, obj, key);
    if (!v)
        return required ? json_err(err, errlen, "missing field '%s'", key) : 0;
    uint64_t x;
    if (v->type == IW_JSON_NUM) {
        if (!v->is_int || v->i < 0)
            return json_err(err, errlen, "field '%s' must be a non-negative integer", key);
        x = (uint64_t)v->i;
    } else if (v->type == IW_JSON_STR && v->len > 2 && v->str[0] == '0' &&
               (v->str[1] == 'x' || v->str[1] == 'X')) {
        if (json_hex_u64(v->str + 2, v->len - 2, &x) < 0)
            return json_err(err, errlen, "field '%s' is not a valid hex number", key);
    } else {
        return json_err(err, errlen, "field '%s' must be a number or a \"0x...\" string", key);
    }
    if (x > max)
        return json_err(err, errlen, "field '%s' is out of range", key);
    *out = x;
    return 0;
}

int iw_json_bool(const iw_json_doc *doc, const iw_json *obj, const char *key, bool *out, char *err,
                 size_t errlen) {
    const iw_json *v = iw_json_get(doc, obj, key);
    if (!v)
        return 0;
    if (v->type != IW_JSON_BOOL)
        return json_err(err, errlen, "field '%s' must be true or false", key);
    *out = v->b;
    return 0;
}

int iw_json_str(const iw_json_doc *doc, const iw_json *obj, const char *key, bool required,
                const char **out, char *err, size_t errlen) {
    const iw_json *v = iw_json_get(doc, obj, key);
    if (!v)
        return required ? json_err(err, errlen, "missing field '%s'", key) : 0;
    if (v->type != IW_JSON_STR || strlen(v->str) != v->len)
        return json_err(err, errlen, "field '%s' must be a string", key);
    *out = v->str;
    return 0;
}

int iw_json_hex(const iw_json_doc *doc, const iw_json *obj, const char *key, bool required,
                size_t max, uint8_t **out, size_t *outlen, char *err, size_t errlen) {
    const iw_json *v = iw_json_get(doc, obj, key);
    *out = NULL;
    *outlen = 0;
    if (!v)
        return required ? json_err(err, errlen, "missing field '%s'", key) : 0;
    if (v->type != IW_JSON_STR || v->len % 2)
        return json_err(err, errlen, "field '%s' must be a hex string of whole octets", key);
    size_t n = v->len / 2;
    if (n > max)
        return json_err(err, errlen, "field '%s' is too long", key);
    uint8_t *b = malloc(n ? n : 1);
    if (!b)
        return json_err(err, errlen, "out of memory for '%s'", key);
    for (size_t i = 0; i < n; i++) {
        int hi = iw_json_hexval(v->str[2 * i]), lo = iw_json_hexval(v->str[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            free(b);
            return json_err(err, errlen, "field '%s' has a non-hex character", key);
        }
        b[i] = (uint8_t)(hi << 4 | lo);
    }
    *out = b;
    *outlen = n;
    return 0;
}
