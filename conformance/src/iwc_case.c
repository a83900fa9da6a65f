/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Case script parser: see iwc_case.h and docs/conformance.md. Pure: no I/O,
 * no globals; every input, however broken, ends in a message naming its
 * line. */
#include "iw_json.h"
#include "iwc_case.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iwc_agent.h"
#include "iwc_util.h"
#include <iwarp/err.h>
#include <iwarp/faults.h>

/* ---- names ---- */

static const char *const send_names[] = {NULL,
#define IWC_X_(n, s) s,
                                         IWC_SEND_LIST(IWC_X_)
#undef IWC_X_
};
static const char *const expect_names[] = {NULL,
#define IWC_X_(n, s) s,
                                           IWC_EXPECT_LIST(IWC_X_)
#undef IWC_X_
};
static const char *const agent_names[] = {NULL,
#define IWC_X_(n, s) s,
                                          IWC_AGENT_LIST(IWC_X_)
#undef IWC_X_
};
static const char *const needs_names[] = {
#define IWC_X_(n, s) s,
    IWC_NEEDS_LIST(IWC_X_)
#undef IWC_X_
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *name_of(const char *const *tab, size_t n, unsigned k) {
    return k < n && tab[k] ? tab[k] : "?";
}
const char *iwc_send_name(unsigned k) { return name_of(send_names, NELEM(send_names), k); }
const char *iwc_expect_name(unsigned k) { return name_of(expect_names, NELEM(expect_names), k); }
const char *iwc_agent_name(unsigned k) { return name_of(agent_names, NELEM(agent_names), k); }
const char *iwc_needs_name(unsigned bit) { return name_of(needs_names, NELEM(needs_names), bit); }

static int lookup(const char *const *tab, size_t n, const char *s) {
    for (size_t i = 0; i < n; i++)
        if (tab[i] && !strcmp(tab[i], s))
            return (int)i;
    return -1;
}

/* ---- key tables ----
 * Every key a line may carry, with the value types it accepts. Words are
 * checked against `words` ("a|b|c") when it is not NULL. */

enum { T_E = 1, T_D = 2, T_W = 4, T_L = 8 };

typedef struct keyspec {
    const char *key;
    uint8_t types;
    const char *words;
} keyspec;

static const keyspec keyspecs[] = {
    {"stag", T_E, NULL},
    {"to", T_E, NULL},
    {"len", T_E, NULL},
    {"data", T_D, NULL},
    {"qn", T_E, NULL},
    {"msn", T_E, NULL},
    {"mo", T_E, NULL},
    {"inv", T_E, NULL},
    {"last", T_E, NULL},
    {"dv", T_E, NULL},
    {"rv", T_E, NULL},
    {"opcode", T_E, NULL},
    {"tagged", T_E, NULL},
    {"rsvd", T_E, NULL},
    {"rsv", T_E, NULL},
    {"trunc", T_E, NULL},
    {"extra", T_E, NULL},
    {"ulpdu-len", T_E, NULL},
    {"marker.fpduptr", T_E, NULL},
    {"marker.lead", T_E, NULL},
    {"pad", T_E, NULL},
    {"crc", T_W | T_E, "good|bad|zero"},
    {"split", T_L, NULL},
    {"hold", T_E, NULL},
    {"repeat", T_E, NULL},
    {"seg", T_E, NULL},
    {"cut", T_E, NULL},
    {"sink-stag", T_E, NULL},
    {"sink-to", T_E, NULL},
    {"size", T_E, NULL},
    {"src-stag", T_E, NULL},
    {"src-to", T_E, NULL},
    {"op", T_E | T_W, "fetch-add|cmp-swap"},
    {"add", T_E, NULL},
    {"add-mask", T_E, NULL},
    {"swap", T_E, NULL},
    {"swap-mask", T_E, NULL},
    {"compare", T_E, NULL},
    {"compare-mask", T_E, NULL},
    {"req-id", T_E, NULL},
    {"orig", T_E, NULL},
    {"m", T_E | T_W, "any"},
    {"c", T_E, NULL},
    {"d", T_E | T_W, "any"},
    {"r", T_E | T_W, "any"},
    {"seglen", T_E, NULL},
    {"hdr", T_D | T_W, "auto|none"},
    {"key", T_W, NULL},
    {"s", T_E, NULL},
    {"res", T_E, NULL},
    {"rev", T_E, NULL},
    {"p2p", T_E, NULL},
    {"rtr", T_W, NULL},
    {"ird", T_E, NULL},
    {"ord", T_E, NULL},
    {"pd", T_D | T_E, NULL},
    {"pd-len", T_E, NULL},
    {"rtr-send", T_E, NULL},
    {"rtr-write", T_E, NULL},
    {"rtr-read", T_E, NULL},
    {"of", T_E, NULL},
    {"optional", T_E, NULL},
    {"after", T_W, "none|any"},
    {"event", T_W, "yes|no"},
    {"silent", T_E, NULL},
    {"within", T_E, NULL},
    {"ms", T_E, NULL},
    {"at", T_E, NULL},
    {"value", T_E, NULL},
    {"count", T_E, NULL},
    {"kind", T_W,
     "send|send_se|send_inv|send_se_inv|write|read|fetch_add|cmp_swap|immediate|immediate_se"},
    {"remote_stag", T_E, NULL},
    {"remote_to", T_E, NULL},
    {"inv_stag", T_E, NULL},
    {"add_mask", T_E, NULL},
    {"swap_mask", T_E, NULL},
    {"compare_mask", T_E, NULL},
    {"sink_stag", T_E, NULL},
    {"sink_to", T_E, NULL},
    {"imm", T_D, NULL},
    {"solicited", T_E, NULL},
    /* setup lines */
    {"markers", T_E, NULL},
    {"reject", T_E, NULL},
    {"timeout_ms", T_E, NULL},
    {"rtr-use", T_W, "send|write|read"},
    {"access", T_W, NULL},
    {"fill", T_E, NULL},
    {"pd-size", T_E, NULL},
    /* DDP over SCTP (RFC 5043) */
    {"ssn", T_E, NULL},
    {"ppid", T_E, NULL},
    {"stream", T_E, NULL},
    {"ordered", T_E, NULL},
    {"fc", T_E | T_W, "initiate|accept|reject|terminate|enh-initiate|enh-accept|enh-reject"},
};

#define FPDU_COMMON                                                                                \
    " dv rv opcode tagged last rsvd rsv trunc extra ulpdu-len marker.fpduptr marker.lead pad crc " \
    "split hold repeat seg cut ssn ppid stream ordered "

static const char *const send_keys[] = {
    NULL,
    /* WRITE */ "stag to len data" FPDU_COMMON,
    /* READ_REQ */ "qn msn mo sink-stag sink-to size src-stag src-to" FPDU_COMMON,
    /* READ_RESP */ "stag to len data" FPDU_COMMON,
    /* SEND */ "qn msn mo len data inv" FPDU_COMMON,
    /* SEND_INV */ "qn msn mo len data inv" FPDU_COMMON,
    /* SEND_SE */ "qn msn mo len data inv" FPDU_COMMON,
    /* SEND_SE_INV */ "qn msn mo len data inv" FPDU_COMMON,
    /* TERM */ "qn msn mo m d r seglen hdr" FPDU_COMMON,
    /* IMM */ "qn msn mo data" FPDU_COMMON,
    /* IMM_SE */ "qn msn mo data" FPDU_COMMON,
    /* ATOMIC */
    "qn msn mo op stag to add add-mask swap swap-mask compare compare-mask req-id" FPDU_COMMON,
    /* ATOMIC_RESP */ "qn msn mo req-id orig" FPDU_COMMON,
    /* MPA_REQUEST */ "key m c r s res rev p2p rtr ird ord pd pd-len pd-size trunc split hold",
    /* MPA_REPLY */ "key m c r s res rev p2p rtr ird ord pd pd-len pd-size trunc split hold",
    /* CTRL */ "fc ssn ppid stream ordered pd pd-size p2p rtr ird ord hold",
    /* CHUNK */ "ppid data len ssn stream ordered hold",
};

#define FPDU_FIELDS                                                                                \
    "stag to qn msn mo len data last inv size sink-stag sink-to src-stag src-to orig req-id"

static const char *const expect_keys[] = {
    NULL,
    /* TERMINATE */ "m d r seglen hdr of optional after event",
    /* CLOSED */ "silent within",
    /* MPA_REPLY */ "key m c r s res rev p2p rtr-send rtr-write rtr-read ird ord pd pd-len",
    /* MPA_REQUEST */ "key m c r s res rev p2p rtr-send rtr-write rtr-read ird ord pd pd-len",
    /* FPDU */ FPDU_FIELDS,
    /* EVENT */ NULL,    /* open: agent event fields */
    /* NO_EVENT */ NULL, /* open, plus within= */
    /* REGION */ "at len data",
    /* PEER_REGION */ "at len data",
    /* PEER_U64 */ "at value",
    /* GUARD */ "",
    /* QUIET */ "ms",
    /* PEER_RECV */ "len data inv imm solicited",
    /* CTRL */ "fc ssn pd ird ord",
};

static const char *const agent_keys[] = {
    NULL,
    /* INVALIDATE */ "stag",
    /* DEREG_MR */ "stag",
    /* WRITE_MR */ "at len data",
    /* POST_RECV */ "len count",
    /* POST_SEND */
    "kind stag to len data remote_stag remote_to inv_stag add add_mask swap swap_mask compare "
    "compare_mask sink_stag sink_to",
    /* CLOSE */ "",
};

/* Expect lines that compare (<=, >=, !=) rather than only set. */
static bool expect_cmp_ok(unsigned sub) {
    return sub == IWC_EXPECT_MPA_REPLY || sub == IWC_EXPECT_MPA_REQUEST || sub == IWC_EXPECT_FPDU ||
           sub == IWC_EXPECT_EVENT || sub == IWC_EXPECT_PEER_U64;
}

static const keyspec *keyspec_find(const char *k) {
    for (size_t i = 0; i < NELEM(keyspecs); i++)
        if (!strcmp(keyspecs[i].key, k))
            return &keyspecs[i];
    return NULL;
}

/* Is k one of the words in the space-separated list? */
static bool in_list(const char *list, const char *k) {
    size_t n = strlen(k);
    for (const char *p = list; *p;) {
        while (*p == ' ')
            p++;
        size_t w = strcspn(p, " ");
        if (w == n && !strncmp(p, k, n))
            return true;
        p += w;
    }
    return false;
}

static bool in_words(const char *words, const char *w) {
    size_t n = strlen(w);
    for (const char *p = words; *p;) {
        size_t k = strcspn(p, "|");
        if (k == n && !strncmp(p, w, n))
            return true;
        p += k;
        if (*p)
            p++;
    }
    return false;
}

/* ---- parser state ---- */

typedef struct parser {
    iwc_case *c;
    int line;
    char *err;
    size_t errlen;
    bool failed;
    int last_term; /* 1-based index of the last expect terminate step, 0: none */
} parser;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int
fail(parser *p, const char *fmt, ...) {
    if (p->failed)
        return -1;
    p->failed = true;
    int n = snprintf(p->err, p->errlen, "%d: ", p->line);
    if (n < 0 || (size_t)n >= p->errlen)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

static char *dupn(const char *s, size_t n) {
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

/* ---- numbers, expressions, data, triples ---- */

static bool parse_u64(const char *s, size_t n, uint64_t *out) {
    if (n == 0)
        return false;
    uint64_t v = 0;
    if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        if (n - 2 > 16)
            return false;
        for (size_t i = 2; i < n; i++) {
            int h = iw_json_hexval(s[i]);
            if (h < 0)
                return false;
            v = v << 4 | (uint64_t)h;
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            if (s[i] < '0' || s[i] > '9')
                return false;
            uint64_t d = (uint64_t)(s[i] - '0');
            if (v > (UINT64_MAX - d) / 10)
                return false;
            v = v * 10 + d;
        }
    }
    *out = v;
    return true;
}

bool iwc_parse_triple(const char *s, uint16_t *out) {
    unsigned v[3];
    const unsigned max[3] = {0xF, 0xF, 0xFF};
    for (int i = 0; i < 3; i++) {
        if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
            s += 2;
        size_t n = 0;
        unsigned x = 0;
        while (iw_json_hexval(s[n]) >= 0 && n < 3)
            x = x << 4 | (unsigned)iw_json_hexval(s[n++]);
        if (n == 0 || x > max[i])
            return false;
        s += n;
        if (i < 2 && *s++ != '/')
            return false;
        v[i] = x;
    }
    if (*s)
        return false;
    *out = (uint16_t)(v[0] << 12 | v[1] << 8 | v[2]);
    return true;
}

bool iwc_triple_registered(uint16_t t) { return iw_term_is_registered(t); }

const char *iwc_outcome_str(const iwc_outcome *o, char *buf, size_t n) {
    if (o->kind == IWC_OUT_DROP)
        snprintf(buf, n, "silent drop");
    else if (o->kind == IWC_OUT_UNCHECKED)
        snprintf(buf, n, "check not made");
    else if (o->kind == IWC_OUT_CLOSED)
        snprintf(buf, n, "connection closed without Terminate");
    else
        snprintf(buf, n, "Terminate %X/%X/%X", iw_term_layer(o->triple), iw_term_etype(o->triple),
                 iw_term_ecode(o->triple));
    return buf;
}

bool iwc_outcome_eq(const iwc_outcome *a, const iwc_outcome *b) {
    return a->kind == b->kind && (a->kind != IWC_OUT_TERM || a->triple == b->triple);
}

const char *iwc_case_allow(const iwc_case *c, const iwc_outcome *o) {
    for (int i = 0; i < c->nallow; i++)
        if (iwc_outcome_eq(&c->allow[i].o, o))
            return c->allow[i].text;
    return NULL;
}

/* One outcome: a registered L/E/C, "drop" or "unchecked". */
static bool parse_outcome(const char *s, iwc_outcome *o) {
    memset(o, 0, sizeof *o);
    if (!strcmp(s, "drop")) {
        o->kind = IWC_OUT_DROP;
        return true;
    }
    if (!strcmp(s, "unchecked")) {
        o->kind = IWC_OUT_UNCHECKED;
        return true;
    }
    if (!strcmp(s, "closed")) {
        o->kind = IWC_OUT_CLOSED;
        return true;
    }
    o->kind = IWC_OUT_TERM;
    return iwc_parse_triple(s, &o->triple);
}

/* "A|B|C" (sep '|') or "A,B" (sep ','): at most IWC_ALT_MAX, no repeats. */
static int parse_outcomes(parser *p, const char *what, const char *v, char sep, iwc_outcome *out,
                          uint8_t *nout) {
    *nout = 0;
    for (const char *s = v;;) {
        size_t n = strcspn(s, sep == '|' ? "|" : ",");
        char item[32];
        if (n == 0 || n >= sizeof item)
            return fail(p, "%s: empty or overlong outcome in '%s'", what, v);
        memcpy(item, s, n);
        item[n] = 0;
        if (*nout == IWC_ALT_MAX)
            return fail(p, "%s: more than %d outcomes", what, IWC_ALT_MAX);
        iwc_outcome *o = &out[*nout];
        if (!parse_outcome(item, o))
            return fail(p, "%s: '%s' is not an outcome (a triple L/E/C, drop, unchecked, closed)",
                        what, item);
        if (o->kind == IWC_OUT_TERM && !iwc_triple_registered(o->triple))
            return fail(p,
                        "%s: %s is not in the RFC 6580 registry (RFC 5040 §4.8: layer 0 "
                        "RDMAP, 1 DDP, 2 LLP, each with its own error types)",
                        what, item);
        for (uint8_t i = 0; i < *nout; i++)
            if (iwc_outcome_eq(&out[i], o))
                return fail(p, "%s: '%s' given twice", what, item);
        (*nout)++;
        s += n;
        if (!*s)
            return 0;
        s++;
    }
}

static int region_index(const iwc_case *c, const char *name, size_t n) {
    for (int i = 0; i < c->nregions; i++)
        if (strlen(c->regions[i].name) == n && !strncmp(c->regions[i].name, name, n))
            return i;
    return -1;
}

static int parse_expr(parser *p, const char *key, const char *s, iwc_expr *e) {
    memset(e, 0, sizeof *e);
    char op = '+';
    if (*s == '-') {
        op = '-';
        s++;
    }
    for (;;) {
        if (e->n == IWC_EXPR_MAX)
            return fail(p, "%s: expression has more than %d terms", key, IWC_EXPR_MAX);
        iwc_term *t = &e->t[e->n];
        t->op = op;
        size_t n = strcspn(s, "+-^|&");
        if (n == 0)
            return fail(p, "%s: missing number or $REGION.field in '%s'", key, s);
        if (s[0] == '$') {
            const char *dot = memchr(s, '.', n);
            if (!dot)
                return fail(p, "%s: '%.*s' wants $REGION.field (stag, to, len, end)", key, (int)n,
                            s);
            int ri = region_index(p->c, s + 1, (size_t)(dot - s - 1));
            if (ri < 0)
                return fail(p, "%s: no region named '%.*s' (declare it with 'region:' first)", key,
                            (int)(dot - s - 1), s + 1);
            size_t fl = n - (size_t)(dot + 1 - s);
            const char *f = dot + 1;
            static const char *const fields[] = {NULL, "stag", "to", "len", "end"};
            int fi = -1;
            for (int i = 1; i < 5; i++)
                if (strlen(fields[i]) == fl && !strncmp(fields[i], f, fl))
                    fi = i;
            if (fi < 0)
                return fail(p, "%s: unknown region field '%.*s' (stag, to, len, end)", key, (int)fl,
                            f);
            t->ref = true;
            t->region = (uint8_t)ri;
            t->field = (uint8_t)fi;
        } else if (!parse_u64(s, n, &t->num)) {
            return fail(p, "%s: '%.*s' is not a number (decimal or 0x hex, 64 bits)", key, (int)n,
                        s);
        }
        e->n++;
        s += n;
        if (!*s)
            return 0;
        op = *s++;
    }
}

static int parse_hex(parser *p, const char *key, const char *s, uint8_t **out, size_t *outlen) {
    size_t n = strlen(s);
    if (n % 2)
        return fail(p, "%s: hex data has an odd number of digits", key);
    if (n / 2 > IWC_HEX_MAX)
        return fail(p, "%s: hex data longer than %d octets", key, IWC_HEX_MAX);
    uint8_t *b = malloc(n / 2 + 1);
    if (!b)
        return fail(p, "out of memory");
    for (size_t i = 0; i < n / 2; i++) {
        int hi = iw_json_hexval(s[2 * i]), lo = iw_json_hexval(s[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            free(b);
            return fail(p, "%s: '%c%c' is not hex", key, s[2 * i], s[2 * i + 1]);
        }
        b[i] = (uint8_t)(hi << 4 | lo);
    }
    *out = b;
    *outlen = n / 2;
    return 0;
}

static int parse_data(parser *p, const char *key, const char *s, iwc_data *d) {
    memset(d, 0, sizeof *d);
    uint64_t v;
    if (!strncmp(s, "pat:", 4)) {
        if (!parse_u64(s + 4, strlen(s + 4), &v) || v > 255)
            return fail(p, "%s: pat:SEED wants a seed 0..255", key);
        d->kind = IWC_DATA_PAT;
        d->byte = (uint8_t)v;
        return 0;
    }
    if (!strncmp(s, "fill:", 5)) {
        if (!parse_u64(s + 5, strlen(s + 5), &v) || v > 255)
            return fail(p, "%s: fill:N wants an octet value", key);
        d->kind = IWC_DATA_FILL;
        d->byte = (uint8_t)v;
        return 0;
    }
    if (!strcmp(s, "zero")) {
        d->kind = IWC_DATA_FILL;
        return 0;
    }
    if (!strncmp(s, "hex:", 4)) {
        d->kind = IWC_DATA_HEX;
        return parse_hex(p, key, s + 4, &d->hex, &d->hexlen);
    }
    if (s[0] == '@') {
        size_t n = strcspn(s + 1, "+");
        int ri = region_index(p->c, s + 1, n);
        if (ri < 0)
            return fail(p, "%s: no region named '%.*s'", key, (int)n, s + 1);
        d->kind = IWC_DATA_REF;
        d->region = (uint8_t)ri;
        if (s[1 + n] == '+' && !parse_u64(s + 2 + n, strlen(s + 2 + n), &d->off))
            return fail(p, "%s: @REGION+OFFSET wants a number after '+'", key);
        return 0;
    }
    return fail(p, "%s: '%s' is not data (pat:N, fill:N, zero, hex:.., @REGION[+OFF])", key, s);
}

/* ---- tokens ---- */

#define TOK_MAX 48

typedef struct tok {
    char *s; /* NUL-terminated, inside the line copy */
    bool quoted;
} tok;

/* Split a line (modified in place) into whitespace tokens; "..." quotes. */
static int tokenize(parser *p, char *line, tok *t, int *nt) {
    int n = 0;
    char *s = line;
    for (;;) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s)
            break;
        if (n == TOK_MAX)
            return fail(p, "more than %d words on one line", TOK_MAX);
        /* A quoted value may follow key=: key="a b". */
        char *start = s;
        char *q = NULL;
        while (*s && *s != ' ' && *s != '\t') {
            if (*s == '"') {
                q = s;
                break;
            }
            s++;
        }
        if (q) {
            /* Remove the quote and keep everything up to the closing one. */
            char *w = q;
            s = q + 1;
            while (*s && *s != '"')
                *w++ = *s++;
            if (*s != '"')
                return fail(p, "unterminated quoted string");
            s++;
            if (*s && *s != ' ' && *s != '\t')
                return fail(p, "text after a closing quote");
            *w = 0;
            t[n].quoted = true;
        } else {
            t[n].quoted = false;
        }
        if (*s)
            *s++ = 0;
        t[n++].s = start;
    }
    *nt = n;
    return 0;
}

static bool is_ident(const char *s, size_t n) {
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_' || ch == '-' || ch == '.'))
            return false;
    }
    return true;
}

/* One key=value token into an argument. allowed: the keys this line takes
 * (NULL: any identifier, with the type guessed from the value). */
static int parse_arg(parser *p, const tok *t, const char *allowed, bool cmp_ok, iwc_arg *a) {
    memset(a, 0, sizeof *a);
    const char *s = t->s;
    size_t kl = strcspn(s, "=<>!");
    if (!s[kl])
        return fail(p, "'%s': expected key=value", s);
    if (!is_ident(s, kl))
        return fail(p, "'%.*s' is not a key name", (int)kl, s);
    const char *v = s + kl;
    uint8_t cmp = IWC_EQ;
    if (v[0] == '=') {
        v += 1;
    } else if (v[1] == '=' && (v[0] == '<' || v[0] == '>' || v[0] == '!')) {
        cmp = v[0] == '<' ? IWC_LE : v[0] == '>' ? IWC_GE : IWC_NE;
        v += 2;
    } else {
        return fail(p, "'%s': expected key=value (or <=, >=, != on expect lines)", s);
    }
    if (cmp != IWC_EQ && !cmp_ok)
        return fail(p, "'%.*s': only = is allowed here", (int)kl, s);
    a->key = dupn(s, kl);
    if (!a->key)
        return fail(p, "out of memory");
    a->cmp = cmp;
    if (!*v)
        return fail(p, "%s: empty value", a->key);
    const keyspec *ks = keyspec_find(a->key);
    if (allowed && (!ks || !in_list(allowed, a->key))) {
        if (!*allowed)
            return fail(p, "this line takes no key=value arguments (got '%s')", a->key);
        return fail(p, "unknown key '%s' here (allowed: %s)", a->key, allowed);
    }
    uint8_t types;
    const char *words = NULL;
    if (ks && allowed) {
        types = ks->types;
        words = ks->words;
    } else {
        /* Open keys (agent event fields): the value's shape decides. */
        if (!strncmp(v, "pat:", 4) || !strncmp(v, "hex:", 4) || !strncmp(v, "fill:", 5) ||
            v[0] == '@' || !strcmp(v, "zero"))
            types = T_D;
        else if ((v[0] >= '0' && v[0] <= '9') || v[0] == '$' || v[0] == '-')
            types = T_E;
        else
            types = T_W;
    }
    if (t->quoted) {
        if (!(types & T_W))
            return fail(p, "%s: a quoted value is only allowed for words", a->key);
        types = T_W;
        words = NULL;
    }
    bool looks_data = !strncmp(v, "pat:", 4) || !strncmp(v, "hex:", 4) || !strncmp(v, "fill:", 5) ||
                      v[0] == '@' || !strcmp(v, "zero");
    if ((types & T_W) && words && in_words(words, v)) {
        a->type = IWC_V_WORD;
        a->word = dupn(v, strlen(v));
        return a->word ? 0 : fail(p, "out of memory");
    }
    if ((types & T_D) && (looks_data || !(types & T_E))) {
        a->type = IWC_V_DATA;
        return parse_data(p, a->key, v, &a->d);
    }
    if (types & T_E) {
        a->type = IWC_V_EXPR;
        return parse_expr(p, a->key, v, &a->e);
    }
    if (types & T_L) {
        a->type = IWC_V_LIST;
        const char *q = v;
        for (;;) {
            size_t n = strcspn(q, ",");
            if (a->nlist == IWC_LIST_MAX)
                return fail(p, "%s: more than %d numbers", a->key, IWC_LIST_MAX);
            if (!parse_u64(q, n, &a->list[a->nlist]))
                return fail(p, "%s: '%.*s' is not a number", a->key, (int)n, q);
            a->nlist++;
            q += n;
            if (!*q)
                return 0;
            q++;
        }
    }
    /* T_W */
    if (words)
        return fail(p, "%s: '%s' is not one of %s", a->key, v, words);
    a->type = IWC_V_WORD;
    a->word = dupn(v, strlen(v));
    return a->word ? 0 : fail(p, "out of memory");
}

const iwc_arg *iwc_step_arg(const iwc_step *s, const char *key) {
    for (int i = 0; i < s->nargs; i++)
        if (!strcmp(s->args[i].key, key))
            return &s->args[i];
    return NULL;
}

static void arg_free(iwc_arg *a) {
    free(a->key);
    free(a->word);
    free(a->d.hex);
}

static void step_free(iwc_step *s) {
    for (int i = 0; i < s->nargs; i++)
        arg_free(&s->args[i]);
    free(s->args);
    free(s->word);
    memset(s, 0, sizeof *s);
}

/* Parse tokens [from, nt) as arguments of step s. */
static int parse_args(parser *p, iwc_step *s, const tok *t, int from, int nt, const char *allowed,
                      bool cmp_ok) {
    if (nt - from > IWC_ARGS_MAX)
        return fail(p, "more than %d arguments", IWC_ARGS_MAX);
    if (nt > from) {
        s->args = calloc((size_t)(nt - from), sizeof *s->args);
        if (!s->args)
            return fail(p, "out of memory");
    }
    for (int i = from; i < nt; i++) {
        iwc_arg *a = &s->args[s->nargs];
        int rc = parse_arg(p, &t[i], allowed, cmp_ok, a);
        s->nargs++; /* counted even on failure, so it is freed */
        if (rc < 0)
            return -1;
        for (int j = 0; j < s->nargs - 1; j++)
            if (!strcmp(s->args[j].key, a->key))
                return fail(p, "key '%s' given twice", a->key);
    }
    return 0;
}

/* ---- header and setup lines ---- */

static int set_str(parser *p, char **dst, const char *what, const char *v) {
    if (*dst)
        return fail(p, "'%s' given twice", what);
    if (!*v)
        return fail(p, "'%s' needs a value", what);
    *dst = dupn(v, strlen(v));
    return *dst ? 0 : fail(p, "out of memory");
}

static int parse_id(parser *p, const char *v) {
    size_t n = strlen(v);
    const char *dot = strchr(v, '.');
    if (!dot || dot == v || !dot[1] || n > 80)
        return fail(p, "id '%s' must be AREA.NAME (lowercase, digits, '-', '.'; at most 80)", v);
    for (size_t i = 0; i < n; i++) {
        char ch = v[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '.'))
            return fail(p, "id '%s' must be AREA.NAME (lowercase, digits, '-', '.')", v);
    }
    if (set_str(p, &p->c->id, "id", v) < 0)
        return -1;
    p->c->area = dupn(v, (size_t)(dot - v));
    return p->c->area ? 0 : fail(p, "out of memory");
}

/* "RFC 5041 §7.1 (checks 3, 4), RFC 5040 §7.2": commas inside
 * parentheses do not separate sections. */
static int parse_rfc(parser *p, char *v) {
    for (char *s = v; *s;) {
        size_t n = 0;
        int depth = 0;
        while (s[n] && (s[n] != ',' || depth > 0)) {
            depth += s[n] == '(' ? 1 : s[n] == ')' && depth > 0 ? -1 : 0;
            n++;
        }
        char *e = s + n;
        while (*s == ' ')
            s++;
        char *end = e;
        while (end > s && end[-1] == ' ')
            end--;
        if (end > s) {
            if (p->c->nrfc == IWC_RFC_MAX)
                return fail(p, "more than %d RFC sections", IWC_RFC_MAX);
            if (strncmp(s, "RFC ", 4) || s[4] < '0' || s[4] > '9')
                return fail(p, "RFC section '%.*s' must start with 'RFC <number>'", (int)(end - s),
                            s);
            p->c->rfc[p->c->nrfc] = dupn(s, (size_t)(end - s));
            if (!p->c->rfc[p->c->nrfc++])
                return fail(p, "out of memory");
        }
        s = *e ? e + 1 : e;
    }
    return 0;
}

/* The faults iwarp-target takes are libiwarp's (iw_faults_parse): one list. */
bool iwc_fault_spec_valid(const char *spec) {
    iw_faults f;
    char err[96];
    return *spec && iw_faults_parse(&f, spec, err, sizeof err) == 0;
}

static int parse_catches(parser *p, char *v) {
    iwc_case *c = p->c;
    if (c->ncatches == IWC_CATCH_MAX)
        return fail(p, "more than %d 'catches' lines", IWC_CATCH_MAX);
    char *arrow = strstr(v, "->");
    char *reason = NULL;
    if (arrow) {
        char *r = arrow + 2;
        while (*r == ' ')
            r++;
        size_t rl = strlen(r);
        if (rl < 2 || r[0] != '"' || r[rl - 1] != '"')
            return fail(p, "catches: the reason after '->' must be a quoted string");
        reason = dupn(r + 1, rl - 2);
        if (!reason)
            return fail(p, "out of memory");
        while (arrow > v && arrow[-1] == ' ')
            arrow--;
        *arrow = 0;
    }
    iwc_catch *k = &c->catches[c->ncatches++];
    k->reason = reason;
    if (!iwc_fault_spec_valid(v))
        return fail(p,
                    "catches: '%s' is not a fault (skip:L/E/C, miscode:L/E/C, swap-nibbles, "
                    "no-hdr-copy, bad-seg-len, send-after-terminate, place-before-check, "
                    "accept-bad-crc, accept-mpa-bad-key, accept-mpa-bad-rev, ird-unbounded, "
                    "no-remote-invalidate, ignore-access, sctp-lax-session)",
                    v);
    k->spec = dupn(v, strlen(v));
    return k->spec ? 0 : fail(p, "out of memory");
}

/* "allow: OUTCOME RFC n §s[: words]": the RFC text that permits an outcome
 * of this case's expect terminate; the runner reports it with the outcome. */
static int parse_allow(parser *p, char *v) {
    iwc_case *c = p->c;
    if (c->nallow == IWC_ALLOW_MAX)
        return fail(p, "more than %d 'allow' lines", IWC_ALLOW_MAX);
    size_t n = strcspn(v, " ");
    char item[32];
    if (n == 0 || n >= sizeof item)
        return fail(p, "allow: wants an outcome (L/E/C, drop, unchecked, closed) and the RFC text");
    memcpy(item, v, n);
    item[n] = 0;
    iwc_allow *a = &c->allow[c->nallow];
    if (!parse_outcome(item, &a->o))
        return fail(p, "allow: '%s' is not an outcome (L/E/C, drop, unchecked, closed)", item);
    if (iwc_case_allow(c, &a->o))
        return fail(p, "allow: '%s' given twice", item);
    const char *text = v + n;
    while (*text == ' ')
        text++;
    if (strncmp(text, "RFC ", 4) || text[4] < '0' || text[4] > '9')
        return fail(p,
                    "allow %s: the reason must start with the RFC that allows it "
                    "('RFC 5044 §8: ...')",
                    item);
    a->text = dupn(text, strlen(text));
    if (!a->text)
        return fail(p, "out of memory");
    c->nallow++;
    return 0;
}

/* "tolerates: FAULT -> OUTCOME": iwarp-target with this fault is still
 * conformant here and must pass, choosing OUTCOME (the fault matrix checks). */
static int parse_tolerates(parser *p, char *v) {
    iwc_case *c = p->c;
    if (c->ntolerates == IWC_CATCH_MAX)
        return fail(p, "more than %d 'tolerates' lines", IWC_CATCH_MAX);
    char *arrow = strstr(v, "->");
    if (!arrow)
        return fail(p, "tolerates: wants 'FAULT -> OUTCOME', e.g. 'skip:2/0/2 -> drop'");
    char *o = arrow + 2;
    while (*o == ' ')
        o++;
    while (arrow > v && arrow[-1] == ' ')
        arrow--;
    *arrow = 0;
    iwc_outcome oc;
    if (!parse_outcome(o, &oc))
        return fail(p, "tolerates: '%s' is not an outcome (L/E/C, drop, unchecked, closed)", o);
    if (!iwc_fault_spec_valid(v))
        return fail(p, "tolerates: '%s' is not a fault", v);
    c->tolerates_o[c->ntolerates] = oc;
    iwc_catch *k = &c->tolerates[c->ntolerates++];
    char buf[64];
    iwc_outcome_str(&oc, buf, sizeof buf);
    k->reason = dupn(buf, strlen(buf));
    k->spec = dupn(v, strlen(v));
    return k->spec && k->reason ? 0 : fail(p, "out of memory");
}

/* Every outcome an expect terminate allows beyond its first needs the RFC
 * words that permit it (allow:), and every allow: and tolerates: names one. */
static int check_outcomes(parser *p) {
    iwc_case *c = p->c;
    for (int i = 0; i < c->nsteps; i++) {
        const iwc_step *s = &c->steps[i];
        if (s->kind != IWC_STEP_EXPECT || s->sub != IWC_EXPECT_TERMINATE || s->nalt < 2)
            continue;
        for (int a = 0; a < s->nalt; a++)
            if (!iwc_case_allow(c, &s->alt[a])) {
                char b[64];
                p->line = s->line;
                return fail(p,
                            "expect terminate: outcome '%s' has no 'allow:' line naming the "
                            "RFC words that allow it",
                            iwc_outcome_str(&s->alt[a], b, sizeof b));
            }
    }
    for (int k = 0; k < c->nallow + c->ntolerates; k++) {
        const iwc_outcome *o = k < c->nallow ? &c->allow[k].o : &c->tolerates_o[k - c->nallow];
        bool used = false;
        for (int i = 0; i < c->nsteps && !used; i++) {
            const iwc_step *s = &c->steps[i];
            if (s->kind != IWC_STEP_EXPECT || s->sub != IWC_EXPECT_TERMINATE || s->nalt < 2)
                continue;
            for (int a = 0; a < s->nalt && !used; a++)
                used = iwc_outcome_eq(&s->alt[a], o);
        }
        if (!used) {
            p->line = 0;
            return fail(p, "%s names an outcome no 'expect: terminate A|B' offers",
                        k < c->nallow ? "allow:" : "tolerates:");
        }
    }
    return 0;
}

static int parse_word_list(parser *p, const char *what, char *v, unsigned *out,
                           const char *const *names, size_t n) {
    char *save = NULL;
    for (char *s = strtok_r(v, " ,", &save); s; s = strtok_r(NULL, " ,", &save)) {
        int k = lookup(names, n, s);
        if (k < 0)
            return fail(p, "%s: unknown word '%s'", what, s);
        *out |= 1u << k;
    }
    return 0;
}

/* The numeric value of a setup argument (no region references there). */
/* *out is reset on entry, so no caller reads an unset value after a failure. */
static int setup_num(parser *p, const iwc_arg *a, uint64_t max, uint64_t *out) {
    *out = 0;
    if (a->type != IWC_V_EXPR || a->e.n != 1 || a->e.t[0].ref || a->e.t[0].op != '+')
        return fail(p, "%s: wants a plain number", a->key);
    if (a->e.t[0].num > max)
        return fail(p, "%s: %llu is larger than %llu", a->key, (unsigned long long)a->e.t[0].num,
                    (unsigned long long)max);
    *out = a->e.t[0].num;
    return 0;
}

static int rtr_bits(parser *p, const char *key, const char *w, int *out) {
    int bits = 0;
    char buf[64];
    snprintf(buf, sizeof buf, "%s", w);
    char *save = NULL;
    for (char *s = strtok_r(buf, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
        if (!strcmp(s, "send"))
            bits |= 1;
        else if (!strcmp(s, "write"))
            bits |= 2;
        else if (!strcmp(s, "read"))
            bits |= 4;
        else if (strcmp(s, "none"))
            return fail(p, "%s: '%s' is not send, write, read or none", key, s);
    }
    *out = bits;
    return 0;
}

static int mpa_pd(parser *p, iwc_mpa_cfg *m, const iwc_arg *pd, const iwc_arg *size) {
    if (!pd)
        return size ? fail(p, "pd-size needs pd=pat:N") : 0;
    if (pd->type != IWC_V_DATA)
        return fail(p, "pd: wants hex:.., pat:N or fill:N");
    if (pd->d.kind == IWC_DATA_HEX) {
        if (size)
            return fail(p, "pd-size goes with pd=pat:N, not hex");
        m->pd = malloc(pd->d.hexlen + 1);
        if (!m->pd)
            return fail(p, "out of memory");
        memcpy(m->pd, pd->d.hex, pd->d.hexlen);
        m->pd_len = pd->d.hexlen;
    } else if (pd->d.kind == IWC_DATA_PAT || pd->d.kind == IWC_DATA_FILL) {
        uint64_t n;
        if (!size)
            return fail(p, "pd=pat:N / fill:N needs pd-size=");
        if (setup_num(p, size, 1024, &n) < 0)
            return -1;
        m->pd = malloc((size_t)n + 1);
        if (!m->pd)
            return fail(p, "out of memory");
        if (pd->d.kind == IWC_DATA_PAT)
            iwc_pattern(pd->d.byte, 0, m->pd, (size_t)n);
        else
            memset(m->pd, pd->d.byte, (size_t)n);
        m->pd_len = (size_t)n;
    } else {
        return fail(p, "pd: wants hex:.., pat:N or fill:N");
    }
    m->has_pd = true;
    return 0;
}

static void mpa_cfg_init(iwc_mpa_cfg *m) {
    memset(m, 0, sizeof *m);
    m->rev = m->markers = m->crc = m->p2p = m->ird = m->ord = m->reject = m->timeout_ms = -1;
    m->s = m->res = m->r = m->rtr = m->rtr_use = -1;
}

/* "mpa:" (the IUT's, sent to the agent) or "peer:" (the runner's frame). */
static int parse_mpa(parser *p, iwc_mpa_cfg *m, bool peer, const tok *t, int nt) {
    /* Repeated lines accumulate; a key may not repeat within one line. */
    iwc_step tmp = {0};
    const char *allowed = peer ? "rev m c markers crc p2p rtr rtr-use ird ord pd pd-size s res r"
                               : "rev markers crc p2p rtr ird ord pd pd-size reject timeout_ms";
    int rc = parse_args(p, &tmp, t, 1, nt, allowed, false);
    const iwc_arg *pd = NULL, *pdsize = NULL;
    for (int i = 0; rc == 0 && i < tmp.nargs; i++) {
        const iwc_arg *a = &tmp.args[i];
        uint64_t v = 0;
        const char *k = a->key;
        if (!strcmp(k, "pd")) {
            pd = a;
            continue;
        }
        if (!strcmp(k, "pd-size")) {
            pdsize = a;
            continue;
        }
        if (!strcmp(k, "rtr")) {
            rc = rtr_bits(p, k, a->word, &m->rtr);
            if (rc == 0 && !peer && (m->rtr & (m->rtr - 1)))
                rc = fail(p, "mpa rtr: the agent takes one RTR type (send, write or read)");
            continue;
        }
        if (!strcmp(k, "rtr-use")) {
            rc = rtr_bits(p, k, a->word, &m->rtr_use);
            continue;
        }
        uint64_t max = !strcmp(k, "ird") || !strcmp(k, "ord")   ? 0x3FFF
                       : !strcmp(k, "rev") || !strcmp(k, "res") ? 255
                       : !strcmp(k, "timeout_ms")               ? 600000
                                                                : 1;
        if ((rc = setup_num(p, a, max, &v)) < 0)
            break;
        int iv = (int)v;
        if (!strcmp(k, "rev"))
            m->rev = iv;
        else if (!strcmp(k, "m") || !strcmp(k, "markers"))
            m->markers = iv;
        else if (!strcmp(k, "c") || !strcmp(k, "crc"))
            m->crc = iv;
        else if (!strcmp(k, "p2p"))
            m->p2p = iv;
        else if (!strcmp(k, "ird"))
            m->ird = iv;
        else if (!strcmp(k, "ord"))
            m->ord = iv;
        else if (!strcmp(k, "reject"))
            m->reject = iv;
        else if (!strcmp(k, "timeout_ms"))
            m->timeout_ms = iv;
        else if (!strcmp(k, "s"))
            m->s = iv;
        else if (!strcmp(k, "res"))
            m->res = iv;
        else if (!strcmp(k, "r"))
            m->r = iv;
    }
    if (rc == 0 && !peer && m->rev != -1 && m->rev != 1 && m->rev != 2)
        rc = fail(p, "mpa rev: the agent takes 1 or 2");
    if (rc == 0 && (pd || pdsize)) {
        free(m->pd);
        m->pd = NULL;
        m->has_pd = false;
        rc = mpa_pd(p, m, pd, pdsize);
        if (rc == 0 && !peer && m->pd_len > 508)
            rc = fail(p, "mpa pd: the agent takes at most 508 octets");
    }
    step_free(&tmp);
    return rc;
}

static const char *const access_names[] = {"local_write", "remote_read", "remote_write",
                                           "remote_atomic"};

static int parse_region(parser *p, bool peer, const tok *t, int nt) {
    iwc_case *c = p->c;
    if (nt < 2 || strchr(t[1].s, '='))
        return fail(p, "%s: wants a name first, e.g. '%s A len=4096'",
                    peer ? "peer-region" : "region", peer ? "peer-region:" : "region:");
    size_t nl = strlen(t[1].s);
    if (nl >= IWC_NAME_MAX || !is_ident(t[1].s, nl) || strchr(t[1].s, '.') ||
        !((t[1].s[0] >= 'A' && t[1].s[0] <= 'Z') || (t[1].s[0] >= 'a' && t[1].s[0] <= 'z')))
        return fail(p, "region name '%s' must be a letter then letters/digits/_ (at most %d)",
                    t[1].s, IWC_NAME_MAX - 1);
    if (region_index(c, t[1].s, nl) >= 0)
        return fail(p, "region '%s' declared twice", t[1].s);
    if (c->nregions == IWC_REGIONS_MAX)
        return fail(p, "more than %d regions", IWC_REGIONS_MAX);
    iwc_region *r = &c->regions[c->nregions];
    memset(r, 0, sizeof *r);
    memcpy(r->name, t[1].s, nl + 1);
    r->peer = peer;
    r->fill = -1;
    r->line = p->line;
    iwc_step tmp = {0};
    int rc = parse_args(p, &tmp, t, 2, nt, peer ? "len fill" : "len access fill pd", false);
    bool have_len = false;
    for (int i = 0; rc == 0 && i < tmp.nargs; i++) {
        const iwc_arg *a = &tmp.args[i];
        uint64_t v;
        if (!strcmp(a->key, "access")) {
            char buf[128];
            snprintf(buf, sizeof buf, "%s", a->word);
            rc = parse_word_list(p, "access", buf, &r->access, access_names, NELEM(access_names));
        } else if (!strcmp(a->key, "len")) {
            if ((rc = setup_num(p, a, 16u << 20, &v)) == 0 && v == 0)
                rc = fail(p, "region len must be at least 1");
            if (rc == 0)
                r->len = v;
            have_len = true;
        } else if (!strcmp(a->key, "fill")) {
            if ((rc = setup_num(p, a, 255, &v)) == 0)
                r->fill = (int)v;
        } else if (!strcmp(a->key, "pd")) {
            /* The protection domain: 0 is the connection's, 1 a second one
             * (agent extension reg_mr.pd). */
            if (a->type != IWC_V_EXPR)
                rc = fail(p, "pd: wants 0 or 1");
            else if ((rc = setup_num(p, a, 1, &v)) == 0)
                r->pd = (int)v;
        }
    }
    step_free(&tmp);
    if (rc == 0 && !have_len)
        rc = fail(p, "region '%s' needs len=", r->name);
    if (rc == 0)
        c->nregions++;
    return rc;
}

/* ---- steps ---- */

static iwc_step *new_step(parser *p) {
    iwc_case *c = p->c;
    if (c->nsteps == IWC_STEPS_MAX) {
        fail(p, "more than %d steps", IWC_STEPS_MAX);
        return NULL;
    }
    if (c->nsteps % 16 == 0) {
        iwc_step *n = realloc(c->steps, (size_t)(c->nsteps + 16) * sizeof *n);
        if (!n) {
            fail(p, "out of memory");
            return NULL;
        }
        c->steps = n;
    }
    iwc_step *s = &c->steps[c->nsteps++];
    memset(s, 0, sizeof *s);
    s->line = p->line;
    return s;
}

static int step_word(parser *p, iwc_step *s, const char *w) {
    s->word = dupn(w, strlen(w));
    return s->word ? 0 : fail(p, "out of memory");
}

/* A positional region name: must name a region of the right kind. */
static int step_region(parser *p, iwc_step *s, const char *w, int want_peer) {
    int ri = region_index(p->c, w, strlen(w));
    if (ri < 0)
        return fail(p, "no region named '%s'", w);
    if (want_peer >= 0 && p->c->regions[ri].peer != (want_peer != 0))
        return fail(p, "'%s' is %s region", w, p->c->regions[ri].peer ? "a peer" : "an IUT");
    s->region = (uint8_t)ri;
    s->has_region = true;
    return step_word(p, s, w);
}

static const char *const fpdu_opnames[] = {"write",    "read-req", "read-resp",   "send",
                                           "send-inv", "send-se",  "send-se-inv", "term",
                                           "imm",      "imm-se",   "atomic",      "atomic-resp"};

static int parse_send(parser *p, const tok *t, int nt) {
    if (nt < 2)
        return fail(p, "send: wants what to send (write, send, read-req, mpa-request, ...)");
    int k = lookup(send_names, NELEM(send_names), t[1].s);
    if (k <= 0)
        return fail(p, "send: unknown message '%s'", t[1].s);
    iwc_step *s = new_step(p);
    if (!s)
        return -1;
    s->kind = IWC_STEP_SEND;
    s->sub = (uint8_t)k;
    int from = 2;
    if (k == IWC_SEND_TERM) {
        if (nt < 3 || !iwc_parse_triple(t[2].s, &s->triple))
            return fail(p, "send term: wants the triple first, e.g. 'send: term 1/1/0'");
        s->has_triple = true;
        from = 3;
    }
    if (parse_args(p, s, t, from, nt, send_keys[k], false) < 0)
        return -1;
    /* Limits the runner would only hit at run time, caught here: a plain
     * number (no $REGION term) is known now. */
    static const struct {
        const char *key;
        uint64_t min, max;
        const char *why;
    } lim[] = {{"len", 0, 64u << 20, "64 MiB, the most data the runner builds for one message"},
               {"seg", 1, 1u << 24, "payload octets per DDP segment, at least 1"},
               {"repeat", 1, 64, "1..64 copies in one TCP segment"}};
    for (size_t i = 0; i < NELEM(lim); i++) {
        const iwc_arg *a = iwc_step_arg(s, lim[i].key);
        if (a && a->type == IWC_V_EXPR && a->e.n == 1 && !a->e.t[0].ref && a->e.t[0].op == '+' &&
            (a->e.t[0].num < lim[i].min || a->e.t[0].num > lim[i].max))
            return fail(p, "%s=%llu: out of range (%s)", lim[i].key,
                        (unsigned long long)a->e.t[0].num, lim[i].why);
    }
    if (k == IWC_SEND_CTRL && !iwc_step_arg(s, "fc"))
        return fail(p, "send ctrl: wants fc= (initiate, accept, reject, terminate, enh-initiate, "
                       "enh-accept, enh-reject or a number)");
    if (k == IWC_SEND_CHUNK && (!iwc_step_arg(s, "ppid") || !iwc_step_arg(s, "data")))
        return fail(p, "send chunk: wants ppid= and data= (the whole DATA chunk payload)");
    /* crc= is a number on mpa: lines (the C bit); here it mangles the CRC. */
    const iwc_arg *crc = iwc_step_arg(s, "crc");
    if (crc && crc->type != IWC_V_WORD)
        return fail(p, "crc: wants good, bad or zero (the C bit is c= on MPA frames)");
    return 0;
}

static int parse_expect(parser *p, const tok *t, int nt) {
    if (nt < 2)
        return fail(p, "expect: wants what to expect (terminate, event, region, ...)");
    int k = lookup(expect_names, NELEM(expect_names), t[1].s);
    if (k <= 0)
        return fail(p, "expect: unknown expectation '%s'", t[1].s);
    iwc_step *s = new_step(p);
    if (!s)
        return -1;
    s->kind = IWC_STEP_EXPECT;
    s->sub = (uint8_t)k;
    /* if=OUTCOME[,OUTCOME]: this expectation holds only after those outcomes
     * of the last expect terminate (taken out before the kind's own keys). */
    tok tt[TOK_MAX + 1];
    int nn = 0;
    for (int i = 0; i < nt; i++) {
        if (i >= 2 && !strncmp(t[i].s, "if=", 3)) {
            if (s->nonly)
                return fail(p, "key 'if' given twice");
            if (k == IWC_EXPECT_TERMINATE)
                return fail(p, "expect terminate: if= is for the expectations after it");
            if (!p->last_term)
                return fail(p, "if=: no 'expect: terminate' with outcomes before this line");
            if (parse_outcomes(p, "if", t[i].s + 3, ',', s->only, &s->nonly) < 0)
                return -1;
            const iwc_step *lt = &p->c->steps[p->last_term - 1];
            for (int j = 0; j < s->nonly; j++) {
                bool named = false;
                for (int a = 0; a < lt->nalt; a++)
                    named |= iwc_outcome_eq(&lt->alt[a], &s->only[j]);
                if (!named)
                    return fail(p,
                                "if=: '%s' is not an outcome of the 'expect: terminate' on "
                                "line %d",
                                t[i].s + 3, lt->line);
            }
            continue;
        }
        tt[nn++] = t[i];
    }
    t = tt;
    nt = nn;
    if (k == IWC_EXPECT_TERMINATE)
        p->last_term = p->c->nsteps; /* 1-based */
    int from = 2;
    bool pos = nt > 2 && !strchr(t[2].s, '=') && !strchr(t[2].s, '<') && !strchr(t[2].s, '>');
    const char *posv = pos ? t[2].s : NULL;
    int rc = 0;
    switch (k) {
    case IWC_EXPECT_TERMINATE:
        if (!posv)
            return fail(p, "expect terminate: wants the triple, e.g. 'expect: terminate 1/1/0' "
                           "or 'expect: terminate 2/0/2|drop'");
        if (parse_outcomes(p, "expect terminate", posv, '|', s->alt, &s->nalt) < 0)
            return -1;
        for (int i = s->nalt - 1; i >= 0; i--)
            if (s->alt[i].kind == IWC_OUT_TERM) {
                s->triple = s->alt[i].triple; /* the first Terminate named */
                s->has_triple = true;
            }
        if (!s->has_triple)
            return fail(p, "expect terminate: name at least one triple among the outcomes");
        from = 3;
        break;
    case IWC_EXPECT_FPDU:
        if (!posv || lookup(fpdu_opnames, NELEM(fpdu_opnames), posv) < 0)
            return fail(p, "expect fpdu: wants the message (write, read-resp, send, ...)");
        rc = step_word(p, s, posv);
        from = 3;
        break;
    case IWC_EXPECT_PEER_RECV:
        if (posv) {
            if (lookup(fpdu_opnames, NELEM(fpdu_opnames), posv) < 0)
                return fail(p, "expect peer-recv: '%s' is not a message name", posv);
            rc = step_word(p, s, posv);
            from = 3;
        }
        break;
    case IWC_EXPECT_EVENT:
    case IWC_EXPECT_NO_EVENT:
        if (!posv || !is_ident(posv, strlen(posv)))
            return fail(p, "expect %s: wants the event type, e.g. recv", t[1].s);
        rc = step_word(p, s, posv);
        from = 3;
        break;
    case IWC_EXPECT_REGION:
    case IWC_EXPECT_GUARD:
    case IWC_EXPECT_PEER_REGION:
    case IWC_EXPECT_PEER_U64:
        if (!posv)
            return fail(p, "expect %s: wants a region name", t[1].s);
        rc = step_region(p, s, posv, k == IWC_EXPECT_PEER_REGION || k == IWC_EXPECT_PEER_U64);
        from = 3;
        break;
    default:
        break;
    }
    if (rc < 0)
        return rc;
    if (nt > from && !strchr(t[from].s, '=') && !strchr(t[from].s, '<') && !strchr(t[from].s, '>'))
        return fail(p, "expect %s: unexpected word '%s'", t[1].s, t[from].s);
    rc = parse_args(p, s, t, from, nt, expect_keys[k], expect_cmp_ok((unsigned)k));
    if (rc < 0)
        return rc;
    if (k == IWC_EXPECT_PEER_U64 && !iwc_step_arg(s, "value"))
        return fail(p, "expect peer-u64: wants value=");
    if (k == IWC_EXPECT_CTRL && !iwc_step_arg(s, "fc"))
        return fail(p, "expect ctrl: wants fc=");
    return 0;
}

static int parse_agent(parser *p, const tok *t, int nt, bool may_fail) {
    if (nt < 2)
        return fail(p, "agent: wants an operation (%s)",
                    "invalidate, dereg_mr, write_mr, post_recv, post_send, close");
    int k = lookup(agent_names, NELEM(agent_names), t[1].s);
    if (k <= 0)
        return fail(p,
                    "agent: unknown operation '%s' (invalidate, dereg_mr, write_mr, "
                    "post_recv, post_send, close)",
                    t[1].s);
    iwc_step *s = new_step(p);
    if (!s)
        return -1;
    s->kind = IWC_STEP_AGENT;
    s->sub = (uint8_t)k;
    s->may_fail = may_fail;
    int from = 2;
    if (k == IWC_AGENT_INVALIDATE || k == IWC_AGENT_DEREG_MR || k == IWC_AGENT_WRITE_MR) {
        if (nt > 2 && !strchr(t[2].s, '=')) {
            if (step_region(p, s, t[2].s, 0) < 0)
                return -1;
            from = 3;
        } else if (k == IWC_AGENT_WRITE_MR) {
            return fail(p, "agent write_mr: wants a region name");
        }
    }
    if (parse_args(p, s, t, from, nt, agent_keys[k], false) < 0)
        return -1;
    if (k == IWC_AGENT_INVALIDATE)
        p->c->needs |= IWC_NEEDS(LOCAL_INV);
    if ((k == IWC_AGENT_INVALIDATE || k == IWC_AGENT_DEREG_MR) && !s->has_region &&
        !iwc_step_arg(s, "stag"))
        return fail(p, "agent %s: wants a region name or stag=", t[1].s);
    if (k == IWC_AGENT_POST_SEND && !iwc_step_arg(s, "kind"))
        return fail(p, "agent post_send: wants kind=");
    if (k == IWC_AGENT_POST_RECV && !iwc_step_arg(s, "len"))
        return fail(p, "agent post_recv: wants len=");
    if (k == IWC_AGENT_WRITE_MR && !iwc_step_arg(s, "data"))
        return fail(p, "agent write_mr: wants data=");
    return 0;
}

/* ---- lines ---- */

static const char *const setup_kw[] = {"iut",  "startup", "answer",      "mpa",
                                       "peer", "region",  "peer-region", "recv"};
static const char *const step_kw[] = {"send", "expect", "agent", "agent?",
                                      "wait", "close",  "abort"};
static const char *const header_kw[] = {"id",         "title", "rfc",       "catches",
                                        "tags",       "needs", "choice",    "note",
                                        "timeout-ms", "allow", "tolerates", "transport"};

static int parse_line(parser *p, char *line) {
    iwc_case *c = p->c;
    /* keyword, optionally followed by ':' */
    size_t kl = strcspn(line, " \t:");
    char kw[24];
    if (kl == 0 || kl >= sizeof kw)
        return fail(p, "line does not start with a keyword");
    memcpy(kw, line, kl);
    kw[kl] = 0;
    char *rest = line + kl;
    if (*rest == ':')
        rest++;
    while (*rest == ' ' || *rest == '\t')
        rest++;
    bool is_header = lookup(header_kw, NELEM(header_kw), kw) >= 0;
    bool is_setup = lookup(setup_kw, NELEM(setup_kw), kw) >= 0;
    bool is_step = lookup(step_kw, NELEM(step_kw), kw) >= 0;
    if (!is_header && !is_setup && !is_step)
        return fail(p, "unknown keyword '%s'", kw);
    if ((is_setup || is_header) && c->nsteps)
        return fail(p, "'%s' must come before the first step", kw);

    if (is_header) {
        if (!strcmp(kw, "id"))
            return parse_id(p, rest);
        if (!strcmp(kw, "title"))
            return set_str(p, &c->title, "title", rest);
        if (!strcmp(kw, "rfc"))
            return parse_rfc(p, rest);
        if (!strcmp(kw, "choice"))
            return set_str(p, &c->choice, "choice", rest);
        if (!strcmp(kw, "note"))
            return set_str(p, &c->note, "note", rest);
        if (!strcmp(kw, "catches"))
            return parse_catches(p, rest);
        if (!strcmp(kw, "allow"))
            return parse_allow(p, rest);
        if (!strcmp(kw, "tolerates"))
            return parse_tolerates(p, rest);
        if (!strcmp(kw, "tags")) {
            static const char *const tags[] = {"slow"};
            return parse_word_list(p, "tags", rest, &c->tags, tags, NELEM(tags));
        }
        if (!strcmp(kw, "needs"))
            return parse_word_list(p, "needs", rest, &c->needs, needs_names, NELEM(needs_names));
        if (!strcmp(kw, "transport")) {
            if (c->transports)
                return fail(p, "transport: given twice");
            c->transports = !strcmp(rest, "tcp")    ? IWC_TR_TCP
                            : !strcmp(rest, "sctp") ? IWC_TR_SCTP
                            : !strcmp(rest, "any")  ? IWC_TR_TCP | IWC_TR_SCTP
                                                    : 0;
            return c->transports ? 0 : fail(p, "transport: wants tcp, sctp or any");
        }
        /* timeout-ms */
        uint64_t v;
        if (!parse_u64(rest, strlen(rest), &v) || v == 0 || v > 600000)
            return fail(p, "timeout-ms wants 1..600000");
        c->timeout_ms = (int)v;
        return 0;
    }

    tok t[TOK_MAX + 1];
    int nt = 0;
    t[0].s = kw;
    t[0].quoted = false;
    if (tokenize(p, rest, t + 1, &nt) < 0)
        return -1;
    nt++;
    if (!strcmp(kw, "iut")) {
        if (nt != 2 || (strcmp(t[1].s, "responder") && strcmp(t[1].s, "initiator")))
            return fail(p, "iut: wants 'responder' (agent listens) or 'initiator' (agent "
                           "connects)");
        c->role = t[1].s[0] == 'r' ? IWC_IUT_RESPONDER : IWC_IUT_INITIATOR;
        return 0;
    }
    if (!strcmp(kw, "startup")) {
        if (nt != 2 || (strcmp(t[1].s, "auto") && strcmp(t[1].s, "tcp")))
            return fail(p, "startup: wants 'auto' (runner does MPA) or 'tcp' (steps do)");
        c->startup_auto = t[1].s[0] == 'a';
        return 0;
    }
    if (!strcmp(kw, "answer")) {
        if (nt != 2 || (strcmp(t[1].s, "auto") && strcmp(t[1].s, "manual")))
            return fail(p, "answer: wants 'auto' (the runner answers the IUT's Read and Atomic "
                           "Requests) or 'manual' (the steps do)");
        c->answer_manual = t[1].s[0] == 'm';
        return 0;
    }
    if (!strcmp(kw, "mpa"))
        return parse_mpa(p, &c->iut_mpa, false, t, nt);
    if (!strcmp(kw, "peer"))
        return parse_mpa(p, &c->peer_mpa, true, t, nt);
    if (!strcmp(kw, "region") || !strcmp(kw, "peer-region"))
        return parse_region(p, kw[0] == 'p', t, nt);
    if (!strcmp(kw, "recv")) {
        iwc_step tmp = {0};
        int rc = parse_args(p, &tmp, t, 1, nt, "len count", false);
        uint64_t v;
        c->recv_count = 1;
        for (int i = 0; rc == 0 && i < tmp.nargs; i++) {
            if ((rc = setup_num(p, &tmp.args[i], 1u << 24, &v)) != 0)
                break;
            if (!strcmp(tmp.args[i].key, "len"))
                c->recv_len = (uint32_t)v;
            else
                c->recv_count = (uint32_t)v;
        }
        if (rc == 0 && (!iwc_step_arg(&tmp, "len") || c->recv_count == 0 || c->recv_count > 256))
            rc = fail(p, "recv: wants len= and count=1..256");
        /* What the agents post (docs/agent-protocol.md "Limits"). */
        else if (rc == 0 && c->recv_len > IWC_AGENT_DATA_MAX)
            rc = fail(p, "recv: len= is at most %u (the agent protocol's largest buffer)",
                      IWC_AGENT_DATA_MAX);
        else if (rc == 0 && (uint64_t)c->recv_len * c->recv_count > IWC_AGENT_POSTED_MAX)
            rc = fail(p,
                      "recv: len x count is at most %u MiB (what iwarp-target posts per "
                      "session)",
                      IWC_AGENT_POSTED_MAX >> 20);
        step_free(&tmp);
        return rc;
    }
    /* steps */
    if (!strcmp(kw, "send"))
        return parse_send(p, t, nt);
    if (!strcmp(kw, "expect"))
        return parse_expect(p, t, nt);
    if (!strcmp(kw, "agent") || !strcmp(kw, "agent?"))
        return parse_agent(p, t, nt, kw[5] == '?');
    iwc_step *s = new_step(p);
    if (!s)
        return -1;
    if (!strcmp(kw, "wait")) {
        s->kind = IWC_STEP_WAIT;
        if (parse_args(p, s, t, 1, nt, "ms", false) < 0)
            return -1;
        return iwc_step_arg(s, "ms") ? 0 : fail(p, "wait: wants ms=");
    }
    s->kind = !strcmp(kw, "close") ? IWC_STEP_CLOSE : IWC_STEP_ABORT;
    return parse_args(p, s, t, 1, nt, "", false);
}

/* ---- transports ---- */

/* What ties a step to one transport: NULL, or why (*sctp says which). */
static const char *step_transport(const iwc_step *s, bool *sctp) {
    static const char *const mpa_keys[] = {"ulpdu-len", "marker.fpduptr", "marker.lead", "pad",
                                           "crc",       "split",          "cut"};
    static const char *const sctp_keys[] = {"ssn", "ppid", "stream", "ordered"};
    *sctp = false;
    if (s->kind == IWC_STEP_SEND &&
        (s->sub == IWC_SEND_MPA_REQUEST || s->sub == IWC_SEND_MPA_REPLY))
        return "it sends an MPA Request or Reply";
    /* Over SCTP the Session Control message stands for the frame (RFC 6581
     * §7): R, IRD/ORD, p2p, RTRs and Private Data are judged alike. */
    static const char *const frame_keys[] = {"key", "m", "c", "res"};
    if (s->kind == IWC_STEP_EXPECT &&
        (s->sub == IWC_EXPECT_MPA_REPLY || s->sub == IWC_EXPECT_MPA_REQUEST))
        for (int i = 0; i < s->nargs; i++)
            for (size_t k = 0; k < NELEM(frame_keys); k++)
                if (!strcmp(s->args[i].key, frame_keys[k]))
                    return "it judges an MPA frame's key, M, C or Res";
    if (s->kind == IWC_STEP_EXPECT && s->sub == IWC_EXPECT_TERMINATE)
        for (int i = 0; i < s->nalt; i++)
            if (s->alt[i].kind == IWC_OUT_TERM && iw_term_layer(s->alt[i].triple) == 2)
                return "it expects an LLP (MPA) Terminate";
    *sctp = true;
    if ((s->kind == IWC_STEP_SEND && (s->sub == IWC_SEND_CTRL || s->sub == IWC_SEND_CHUNK)) ||
        (s->kind == IWC_STEP_EXPECT && s->sub == IWC_EXPECT_CTRL))
        return "it sends or judges SCTP chunks";
    for (int i = 0; i < s->nargs; i++) {
        for (size_t k = 0; k < NELEM(sctp_keys); k++)
            if (!strcmp(s->args[i].key, sctp_keys[k]))
                return "it sets DDP-SSNs, PPIDs or SCTP streams";
        *sctp = false;
        for (size_t k = 0; k < NELEM(mpa_keys); k++)
            if (s->kind == IWC_STEP_SEND && !strcmp(s->args[i].key, mpa_keys[k]))
                return "it sets an MPA field or cuts TCP segments";
        *sctp = true;
    }
    return NULL;
}

/* Which transports the case can run over, and why not both. */
static void check_transports(parser *p) {
    iwc_case *c = p->c;
    const iwc_mpa_cfg *m = &c->peer_mpa;
    const char *tcp = NULL, *sctp = NULL;
    int tcp_line = 0, sctp_line = 0;
    if (c->iut_mpa.markers >= 0 || c->iut_mpa.crc >= 0 || m->markers >= 0 || m->crc >= 0 ||
        m->s >= 0 || m->res >= 0 || (m->rev >= 0 && m->rev != 1 && m->rev != 2))
        tcp = "it sets MPA markers, CRCs, Res or an MPA revision";
    for (int i = 0; i < c->nsteps && !(tcp && sctp); i++) {
        bool is_sctp;
        const char *why = step_transport(&c->steps[i], &is_sctp);
        if (why && is_sctp && !sctp)
            sctp = why, sctp_line = c->steps[i].line;
        else if (why && !is_sctp && !tcp)
            tcp = why, tcp_line = c->steps[i].line;
    }
    unsigned can = (sctp ? 0 : IWC_TR_TCP) | (tcp ? 0 : IWC_TR_SCTP);
    if (!can) {
        p->line = sctp_line;
        fail(p, "this case is for MPA over TCP (line %d: %s) and for SCTP (%s) at once", tcp_line,
             tcp, sctp);
        return;
    }
    unsigned want = c->transports ? c->transports : IWC_TR_TCP | IWC_TR_SCTP;
    if (!(can & want)) {
        fail(p, "transport: %s, but %s", want == IWC_TR_SCTP ? "sctp" : "tcp",
             want == IWC_TR_SCTP ? tcp : sctp);
        return;
    }
    c->transports = can & want;
    if (c->transports == (IWC_TR_TCP | IWC_TR_SCTP))
        return;
    if (can == (IWC_TR_TCP | IWC_TR_SCTP))
        c->tr_why = iwc_strf("its 'transport:' line says so");
    else if (tcp)
        c->tr_why = tcp_line ? iwc_strf("line %d: %s", tcp_line, tcp) : iwc_strf("%s", tcp);
    else
        c->tr_why = iwc_strf("line %d: %s", sctp_line, sctp);
}

int iwc_case_parse(const char *text, size_t len, iwc_case *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    out->startup_auto = true;
    mpa_cfg_init(&out->iut_mpa);
    mpa_cfg_init(&out->peer_mpa);
    parser p = {out, 0, err, errlen, false, 0};
    if (errlen)
        err[0] = 0;
    if (len > IWC_TEXT_MAX) {
        fail(&p, "case file larger than %u octets", IWC_TEXT_MAX);
        goto bad;
    }
    if (memchr(text, 0, len)) {
        fail(&p, "case file contains a NUL octet");
        goto bad;
    }
    char buf[IWC_LINE_MAX + 1];
    size_t off = 0;
    while (off < len) {
        p.line++;
        const char *nl = memchr(text + off, '\n', len - off);
        size_t n = nl ? (size_t)(nl - (text + off)) : len - off;
        if (n > IWC_LINE_MAX) {
            fail(&p, "line longer than %d characters", IWC_LINE_MAX);
            goto bad;
        }
        memcpy(buf, text + off, n);
        buf[n] = 0;
        off += n + (nl ? 1 : 0);
        /* Comments start with '#' outside quotes; CR and tabs are blanks. */
        bool q = false;
        for (size_t i = 0; i < n; i++) {
            if (buf[i] == '"')
                q = !q;
            else if (buf[i] == '#' && !q) {
                buf[i] = 0;
                break;
            } else if (buf[i] == '\r' || buf[i] == '\t')
                buf[i] = ' ';
            else if ((unsigned char)buf[i] < 0x20) {
                fail(&p, "control character 0x%02x", (unsigned char)buf[i]);
                goto bad;
            }
        }
        char *s = buf;
        while (*s == ' ')
            s++;
        size_t sl = strlen(s);
        while (sl && s[sl - 1] == ' ')
            s[--sl] = 0;
        if (!*s)
            continue;
        if (parse_line(&p, s) < 0)
            goto bad;
    }
    p.line = 0;
    if (!out->id)
        fail(&p, "missing 'id:'");
    else if (!out->title)
        fail(&p, "missing 'title:'");
    else if (!out->nrfc)
        fail(&p, "missing 'rfc:' (the sections that decide this case)");
    else if (!out->nsteps)
        fail(&p, "no steps (send:, expect:, ...)");
    else if (check_outcomes(&p) == 0)
        check_transports(&p);
    if (p.failed)
        goto bad;
    return 0;
bad:
    iwc_case_free(out);
    if (!p.failed && errlen)
        snprintf(err, errlen, "0: invalid case");
    return -1;
}

void iwc_case_free(iwc_case *c) {
    free(c->id);
    free(c->tr_why);
    free(c->title);
    free(c->area);
    free(c->choice);
    free(c->note);
    for (int i = 0; i < c->nrfc; i++)
        free(c->rfc[i]);
    for (int i = 0; i < c->ncatches; i++) {
        free(c->catches[i].spec);
        free(c->catches[i].reason);
    }
    for (int i = 0; i < c->ntolerates; i++) {
        free(c->tolerates[i].spec);
        free(c->tolerates[i].reason);
    }
    for (int i = 0; i < c->nallow; i++)
        free(c->allow[i].text);
    for (int i = 0; i < c->nsteps; i++)
        step_free(&c->steps[i]);
    free(c->steps);
    free(c->iut_mpa.pd);
    free(c->peer_mpa.pd);
    memset(c, 0, sizeof *c);
}
