/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Names and RFC sections for triples, close reasons and notes, generated
 * from the single lists in <iwarp/err.h>. */
#include <iwarp/err.h>

typedef struct {
    uint16_t triple;
    const char *rfc;
    const char *text;
} term_entry;

static const term_entry term_table[] = {
#define IW_X_(name, l, e, c, rfc, text) {IW_TERM_TRIPLE(l, e, c), rfc, text},
    IW_TERM_LIST(IW_X_)
#undef IW_X_
};

/* RFC 6580 registers these types with "ALL" codes: any code matches. */
static bool term_type_is_all(uint16_t t) {
    unsigned l = iw_term_layer(t), e = iw_term_etype(t);
    return (l == 0x0 && e == 0x0) || (l == 0x1 && e == 0x3);
}

static const term_entry *term_find(uint16_t t) {
    if (term_type_is_all(t))
        t &= 0xFF00;
    for (size_t i = 0; i < sizeof term_table / sizeof term_table[0]; i++)
        if (term_table[i].triple == t)
            return &term_table[i];
    return NULL;
}

const char *iw_term_str(uint16_t t) {
    const term_entry *e = term_find(t);
    if (e)
        return e->text;
    if (iw_term_layer(t) == 0x1 && iw_term_etype(t) == 0x3)
        return "Reserved for use by Lower Layer Protocol";
    return "Unassigned";
}

const char *iw_term_rfc(uint16_t t) {
    const term_entry *e = term_find(t);
    if (e)
        return e->rfc;
    if (iw_term_layer(t) == 0x1 && iw_term_etype(t) == 0x3)
        return "RFC 6580 §3.2";
    return NULL;
}

bool iw_term_is_registered(uint16_t t) {
    return term_find(t) != NULL || (iw_term_layer(t) == 0x1 && iw_term_etype(t) == 0x3);
}

static const struct {
    const char *id, *rfc, *text;
} close_table[] = {{"none", NULL, "no close"},
#define IW_X_(name, rfc, text) {#name, rfc, text},
                   IW_CLOSE_LIST(IW_X_)
#undef IW_X_
};
#define CLOSE_N (sizeof close_table / sizeof close_table[0])

const char *iw_close_str(iw_close_reason r) {
    return (unsigned)r < CLOSE_N ? close_table[r].text : "unknown close reason";
}
const char *iw_close_rfc(iw_close_reason r) {
    return (unsigned)r < CLOSE_N ? close_table[r].rfc : NULL;
}
const char *iw_close_id(iw_close_reason r) {
    return (unsigned)r < CLOSE_N ? close_table[r].id : "UNKNOWN";
}

static const struct {
    const char *id, *rfc, *text;
} note_table[] = {
#define IW_X_(name, rfc, text) {#name, rfc, text},
    IW_NOTE_LIST(IW_X_)
#undef IW_X_
};

const char *iw_note_str(iw_note n) {
    return (unsigned)n < IW_NOTE_COUNT_ ? note_table[n].text : "unknown note";
}
const char *iw_note_rfc(iw_note n) {
    return (unsigned)n < IW_NOTE_COUNT_ ? note_table[n].rfc : NULL;
}
const char *iw_note_id(iw_note n) {
    return (unsigned)n < IW_NOTE_COUNT_ ? note_table[n].id : "UNKNOWN";
}

const char *iw_strerror(int err) {
    switch (err) {
    case 0:
        return "success";
    case IW_ERR_NEED_MORE:
        return "input ends before the item does";
    case IW_ERR_NOBUF:
        return "output buffer too small";
    case IW_ERR_INVALID_ARG:
        return "invalid argument";
    case IW_ERR_PROTO:
        return "protocol violation";
    case IW_ERR_NOMEM:
        return "out of memory";
    case IW_ERR_CALLBACK:
        return "callback failed";
    case IW_ERR_FATAL:
        return "fatal error";
    default:
        return "unknown error";
    }
}
