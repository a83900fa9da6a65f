/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The case's memory regions (the IUT's and the runner's own) and the
 * placement model: what each region must hold after the frames sent so
 * far; plus the expressions and data patterns of case steps. See
 * iwc_run_int.h. */
#include "iwc_run_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- regions and the placement model ---- */

int run_region_find_peer(run *r, uint32_t stag, uint64_t to, uint64_t len) {
    for (int i = 0; i < r->c->nregions; i++) {
        region_rt *g = &r->reg[i];
        if (!g->peer || g->stag != stag)
            continue;
        if (to < g->to || to - g->to > g->len || len > g->len - (to - g->to))
            return -2; /* right STag, outside its bounds */
        return i;
    }
    return -1;
}

int run_region_find_iut(run *r, uint32_t stag, uint64_t to, uint64_t len) {
    for (int i = 0; i < r->c->nregions; i++) {
        region_rt *g = &r->reg[i];
        if (g->peer || g->gone || g->stag != stag)
            continue;
        if (to < g->to || to - g->to > g->len || len > g->len - (to - g->to))
            return -1;
        return i;
    }
    return -1;
}

/* p == NULL: the range's new content is unknown to the runner (the target
 * of an atomic: the IUT keeps the value in its own byte order). */
void run_model_add(run *r, int region, uint64_t off, const uint8_t *p, size_t n, int frame) {
    model_op *o = PUSH(r->ops, r->nops, r->capops);
    if (!o)
        return;
    o->region = region;
    o->off = off;
    o->len = n;
    o->frame = frame;
    if (!p)
        return;
    o->bytes = malloc(n ? n : 1);
    if (o->bytes)
        memcpy(o->bytes, p, n);
    else
        r->nops--;
}

/* The expected content of an IUT region: its initial fill, then every
 * write_mr and every placement not rejected by a Terminate, in order.
 * *care (if given) gets 0 for octets whose content is unknown. */
uint8_t *run_model_build_mask(run *r, int region, uint8_t **care) {
    region_rt *g = &r->reg[region];
    uint8_t *m = malloc(g->len ? g->len : 1);
    uint8_t *c = care ? malloc(g->len ? g->len : 1) : NULL;
    if (!m || (care && !c)) {
        free(m);
        free(c);
        return NULL;
    }
    memcpy(m, g->mem, g->len);
    if (c)
        memset(c, 1, g->len);
    for (int i = 0; i < r->nops; i++) {
        model_op *o = &r->ops[i];
        if (o->region != region || (o->frame >= 0 && r->sent[o->frame].rejected))
            continue;
        if (o->off > g->len || o->len > g->len - o->off)
            continue;
        if (o->bytes)
            memcpy(m + o->off, o->bytes, o->len);
        if (c)
            memset(c + o->off, o->bytes ? 1 : 0, o->len);
    }
    if (care)
        *care = c;
    return m;
}

static uint8_t *model_build(run *r, int region) { return run_model_build_mask(r, region, NULL); }

/* ---- expressions and data ---- */

bool run_eval(run *r, int line, const iwc_expr *e, uint64_t *out) {
    uint64_t acc = 0;
    for (int i = 0; i < e->n; i++) {
        const iwc_term *t = &e->t[i];
        uint64_t v = t->num;
        if (t->ref) {
            const region_rt *g = &r->reg[t->region];
            v = t->field == IWC_F_STAG  ? g->stag
                : t->field == IWC_F_TO  ? g->to
                : t->field == IWC_F_LEN ? g->len
                                        : g->to + g->len;
        }
        switch (t->op) {
        case '+':
            acc += v;
            break;
        case '-':
            acc -= v;
            break;
        case '^':
            acc ^= v;
            break;
        case '|':
            acc |= v;
            break;
        case '&':
            acc &= v;
            break;
        default:
            run_error(r, line, "bad operator in expression");
            return false;
        }
    }
    *out = acc;
    return true;
}

bool run_arg_num(run *r, const iwc_step *s, const char *key, uint64_t *out) {
    const iwc_arg *a = iwc_step_arg(s, key);
    if (!a || a->type != IWC_V_EXPR)
        return false;
    return run_eval(r, s->line, &a->e, out);
}

uint64_t run_arg_num_or(run *r, const iwc_step *s, const char *key, uint64_t def) {
    uint64_t v;
    return run_arg_num(r, s, key, &v) ? v : def;
}

/* Materialise a data spec. len: the length for pat/fill/@ (hex has its
 * own). Returns a malloc'd buffer and its length in *n. */
uint8_t *run_data_make(run *r, int line, const iwc_data *d, uint64_t len, size_t *n) {
    if (d->kind == IWC_DATA_HEX)
        len = d->hexlen;
    if (len > (64u << 20)) {
        run_error(r, line, "data length %llu is too large", (unsigned long long)len);
        return NULL;
    }
    uint8_t *b = malloc(len ? len : 1);
    if (!b) {
        run_error(r, line, "out of memory");
        return NULL;
    }
    switch (d->kind) {
    case IWC_DATA_PAT:
        iwc_pattern(d->byte, 0, b, len);
        break;
    case IWC_DATA_FILL:
        memset(b, d->byte, len);
        break;
    case IWC_DATA_HEX:
        memcpy(b, d->hex, len);
        break;
    case IWC_DATA_REF: {
        region_rt *g = &r->reg[d->region];
        uint8_t *src = g->peer ? g->mem : model_build(r, d->region);
        if (!src || d->off > g->len || len > g->len - d->off) {
            if (!g->peer)
                free(src);
            free(b);
            run_error(r, line, "@%s+%llu: %llu octets are outside the region",
                      r->c->regions[d->region].name, (unsigned long long)d->off,
                      (unsigned long long)len);
            return NULL;
        }
        memcpy(b, src + d->off, len);
        if (!g->peer)
            free(src);
        break;
    }
    default:
        memset(b, 0, len);
        break;
    }
    *n = (size_t)len;
    return b;
}
