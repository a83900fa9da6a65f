/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Expert items and value_strings generated from libiwarp's single lists in
 * <iwarp/err.h> (IW_TERM_LIST, IW_CLOSE_LIST, IW_NOTE_LIST),
 * <iwarp/rdmap.h> (IW_RDMAP_OPCODE_LIST) and <iwarp/shadow.h>
 * (IW_SHADOW_RULE_LIST, IW_SHADOW_NOTE_LIST). Nothing here is kept by hand:
 * a triple added to the library shows up as a value and an expert field.
 *
 * Filter names: iwk_rdmap.must_terminate.<name>, iwk_mpa.must_terminate.<name>
 * (LLP triples): a Terminate this capture's receiver must send, apart from
 * iwk_rdmap.term.* (the fields of a Terminate received);
 * iwk_mpa.close.<name>, iwk_mpa.note.<name> / iwk_ddp.note.<name> /
 * iwk_rdmap.note.<name>, iwk_rdmap.shadow.<note>, all lower case. Stateful
 * verdicts from the shadow use the same must_terminate items as the
 * stateless ones: a Terminate is due either way. */
#include <stdarg.h>
#include <string.h>

#include "packet-iwarpkit.h"

const value_string iwk_term_vals[] = {
#define IW_X_(name, l, e, c, rfc, text) {IW_TERM_TRIPLE(l, e, c), text},
    IW_TERM_LIST(IW_X_)
#undef IW_X_
        {0, NULL}};

const value_string iwk_close_vals[] = {
#define IW_X_(name, rfc, text) {IW_CLOSE_##name, text},
    IW_CLOSE_LIST(IW_X_)
#undef IW_X_
        {0, NULL}};

const value_string iwk_opcode_vals[] = {
#define IW_X_(name, val, text) {val, text},
    IW_RDMAP_OPCODE_LIST(IW_X_)
#undef IW_X_
        {0xF, "Reserved (Experimental)"},
    {0, NULL}};

const value_string iwk_shadow_rule_vals[] = {
#define IW_X_(name, text) {IW_SHADOW_RULE_##name, text},
    IW_SHADOW_RULE_LIST(IW_X_)
#undef IW_X_
        {0, NULL}};

/* Shadow notes the plugin shows. The others (responder first, the RFC 6581
 * startup's Reply and IRD/ORD) have the MPA layer's own items. */
#define SHADOW_SHOWN                                                                               \
    (IW_SHADOW_NOTE(AFTER_TERMINATE) | IW_SHADOW_NOTE(SENT_AFTER_TERMINATE) |                      \
     IW_SHADOW_NOTE(NO_LAST) | IW_SHADOW_NOTE(MSN_NOT_INITIAL) | IW_SHADOW_NOTE(MSN_GAP) |         \
     IW_SHADOW_NOTE(MO_GAP) | IW_SHADOW_NOTE(RTR_MISSING) | IW_SHADOW_NOTE(RTR_NOT_NEGOTIATED) |   \
     IW_SHADOW_NOTE(ATOMIC_ID_MISMATCH))

enum {
#define IW_X_(name, l, e, c, rfc, text) TERM_IDX_##name,
    IW_TERM_LIST(IW_X_)
#undef IW_X_
        TERM_N
};
enum {
#define IW_X_(name, rfc, text) CLOSE_IDX_##name,
    IW_CLOSE_LIST(IW_X_)
#undef IW_X_
        CLOSE_N
};

static const struct {
    const char *id;
    guint16 triple;
} term_ids[TERM_N] = {
#define IW_X_(name, l, e, c, rfc, text) {#name, IW_TERM_TRIPLE(l, e, c)},
    IW_TERM_LIST(IW_X_)
#undef IW_X_
};
static const char *const close_ids[CLOSE_N] = {
#define IW_X_(name, rfc, text) #name,
    IW_CLOSE_LIST(IW_X_)
#undef IW_X_
};
static const char *const note_ids[IW_NOTE_COUNT_] = {
#define IW_X_(name, rfc, text) #name,
    IW_NOTE_LIST(IW_X_)
#undef IW_X_
};

static const char *const shadow_note_ids[IW_SHADOW_NOTE_COUNT_] = {
#define IW_X_(name, rfc, text) #name,
    IW_SHADOW_NOTE_LIST(IW_X_)
#undef IW_X_
};

static expert_field ei_term[TERM_N];
static expert_field ei_term_unregistered;
static expert_field ei_close[CLOSE_N];
static expert_field ei_note[IW_NOTE_COUNT_];
static expert_field ei_shadow_note[IW_SHADOW_NOTE_COUNT_];

static ei_register_info ei_mpa_reg[TERM_N + CLOSE_N + IW_NOTE_COUNT_ + 1];
static ei_register_info ei_rdmap_reg[TERM_N + IW_NOTE_COUNT_ + IW_SHADOW_NOTE_COUNT_ + 1];

extern int hf_iwk_alert;
extern gint ett_iwk_alert;

static char *lower_abbrev(const char *prefix, const char *id) {
    char *s = g_strconcat(prefix, id, NULL);
    for (char *p = s; *p; p++)
        *p = g_ascii_tolower(*p);
    return s;
}

static void ei_fill(ei_register_info *r, expert_field *ei, char *abbrev, int group, int severity,
                    const char *summary) {
    memset(r, 0, sizeof *r);
    r->ids = ei;
    r->eiinfo.name = abbrev;
    r->eiinfo.group = group;
    r->eiinfo.severity = severity;
    r->eiinfo.summary = summary;
    /* As EXPFILL: the hf is filled in by expert_register_field_array. */
    r->eiinfo.hf_info.hfinfo.type = FT_NONE;
    r->eiinfo.hf_info.hfinfo.display = BASE_NONE;
    HFILL_INIT(r->eiinfo.hf_info);
}

/* Notes a receiver ignores by rule but a sender violated a MUST for are
 * warnings; the legal-but-odd ones are notes. */
static int note_severity(unsigned n) {
    return n == IW_NOTE_BIT_CONTROL_SEGMENTED ? PI_NOTE : PI_WARN;
}

/* "Not judged: the stream was over" is information; the rest are a
 * sender's violations. */
static int shadow_note_severity(unsigned n) {
    return n == IW_SHADOW_NOTE_BIT_AFTER_TERMINATE ? PI_NOTE : PI_WARN;
}

static const char *note_prefix(const char *id) {
    if (g_str_has_prefix(id, "MPA_") || g_str_has_prefix(id, "FPDU_") ||
        g_str_has_prefix(id, "MARKER_"))
        return "iwk_mpa.note.";
    if (g_str_has_prefix(id, "DDP_"))
        return "iwk_ddp.note.";
    return "iwk_rdmap.note.";
}

void iwk_expert_register(int proto_mpa, int proto_rdmap) {
    size_t nm = 0, nr = 0;
    for (unsigned i = 0; i < TERM_N; i++) {
        guint16 t = term_ids[i].triple;
        gboolean llp = iw_term_layer(t) == 0x2;
        char *ab = lower_abbrev(llp ? "iwk_mpa.must_terminate." : "iwk_rdmap.must_terminate.",
                                term_ids[i].id);
        int group = t == IW_TERM_LLP_MPA_CRC ? PI_CHECKSUM : PI_PROTOCOL;
        ei_register_info *r = llp ? &ei_mpa_reg[nm++] : &ei_rdmap_reg[nr++];
        ei_fill(r, &ei_term[i], ab, group, PI_ERROR, iw_term_str(t));
    }
    for (unsigned i = 0; i < CLOSE_N; i++) {
        iw_close_reason c = (iw_close_reason)(i + 1);
        gboolean reject = c == IW_CLOSE_MPA_REJECTED;
        ei_fill(&ei_mpa_reg[nm++], &ei_close[i], lower_abbrev("iwk_mpa.close.", close_ids[i]),
                reject ? PI_RESPONSE_CODE : PI_PROTOCOL, reject ? PI_NOTE : PI_ERROR,
                iw_close_str(c));
    }
    for (unsigned i = 0; i < IW_NOTE_COUNT_; i++) {
        const char *pfx = note_prefix(note_ids[i]);
        ei_register_info *r =
            g_str_has_prefix(pfx, "iwk_mpa") ? &ei_mpa_reg[nm++] : &ei_rdmap_reg[nr++];
        ei_fill(r, &ei_note[i], lower_abbrev(pfx, note_ids[i]), PI_PROTOCOL, note_severity(i),
                iw_note_str((iw_note)i));
    }
    for (unsigned i = 0; i < IW_SHADOW_NOTE_COUNT_; i++) {
        if (!(SHADOW_SHOWN & (1u << i)))
            continue;
        ei_fill(&ei_rdmap_reg[nr++], &ei_shadow_note[i],
                lower_abbrev("iwk_rdmap.shadow.", shadow_note_ids[i]),
                i == IW_SHADOW_NOTE_BIT_AFTER_TERMINATE ? PI_SEQUENCE : PI_PROTOCOL,
                shadow_note_severity(i), iw_shadow_note_str((iw_shadow_note)i));
    }
    ei_fill(&ei_rdmap_reg[nr++], &ei_term_unregistered,
            g_strdup("iwk_rdmap.must_terminate.unregistered"), PI_PROTOCOL, PI_ERROR,
            "Terminate verdict with an unregistered triple");
    expert_register_field_array(expert_register_protocol(proto_mpa), ei_mpa_reg, (int)nm);
    expert_register_field_array(expert_register_protocol(proto_rdmap), ei_rdmap_reg, (int)nr);
}

void iwk_alert(packet_info *pinfo, proto_item *item, int severity) {
    (void)pinfo;
    if (!item || severity < PI_WARN)
        return;
    proto_tree *t = proto_item_add_subtree(item, ett_iwk_alert);
    proto_item *pi = proto_tree_add_uint(t, hf_iwk_alert, NULL, 0, 0, (guint32)severity);
    proto_item_set_generated(pi);
    proto_item_set_hidden(pi);
}

void iwk_expert_add(packet_info *pinfo, proto_item *item, expert_field *ei, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    expert_add_info_format(pinfo, item, ei, "%s", msg);
    g_free(msg);
}

static expert_field *term_ei(guint16 triple) {
    for (unsigned i = 0; i < TERM_N; i++)
        if (term_ids[i].triple == triple)
            return &ei_term[i];
    return &ei_term_unregistered;
}

void iwk_expert_verdict(packet_info *pinfo, proto_item *item, const iw_verdict *v) {
    if (v->kind == IW_VERDICT_TERM) {
        expert_field *ei = term_ei(v->term);
        const char *reg = iw_term_rfc(v->term);
        expert_add_info_format(
            pinfo, item, ei,
            "RNIC must send Terminate %u/%u/0x%02x \"%s\" (rule: %s; registry: %s)",
            iw_term_layer(v->term), iw_term_etype(v->term), iw_term_ecode(v->term),
            iw_term_str(v->term), v->rfc ? v->rfc : "-", reg ? reg : "RFC 6580");
        iwk_alert(pinfo, item, PI_ERROR);
    } else if (v->kind == IW_VERDICT_CLOSE) {
        unsigned i = (unsigned)v->close - 1;
        if (i >= CLOSE_N)
            return;
        gboolean reject = v->close == IW_CLOSE_MPA_REJECTED;
        expert_add_info_format(pinfo, item, &ei_close[i], "%s: %s (%s)",
                               reject ? "MPA exits" : "RNIC must close the connection",
                               iw_close_str(v->close), v->rfc ? v->rfc : iw_close_rfc(v->close));
        iwk_alert(pinfo, item, reject ? PI_NOTE : PI_ERROR);
    }
}

void iwk_expert_note_msg(packet_info *pinfo, proto_item *item, unsigned bit, const char *fmt, ...) {
    if (bit >= IW_NOTE_COUNT_)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    expert_add_info_format(pinfo, item, &ei_note[bit], "%s", msg);
    g_free(msg);
    iwk_alert(pinfo, item, note_severity(bit));
}

void iwk_expert_notes(packet_info *pinfo, proto_item *item, guint32 notes) {
    for (unsigned i = 0; i < IW_NOTE_COUNT_; i++) {
        if (!(notes & (1u << i)) || (IWK_NOTES_OWN_MSG & (1u << i)))
            continue;
        expert_add_info_format(pinfo, item, &ei_note[i], "%s (%s)", iw_note_str((iw_note)i),
                               iw_note_rfc((iw_note)i));
        iwk_alert(pinfo, item, note_severity(i));
    }
}

/* What a stateful verdict's frame reference is, per rule. */
static const char *shadow_ref_what(iw_shadow_rule r) {
    switch (r) {
    case IW_SHADOW_RULE_READ_RESP_STAG:
    case IW_SHADOW_RULE_READ_RESP_BOUNDS:
        return "request in";
    case IW_SHADOW_RULE_READ_RESP_UNEXPECTED:
    case IW_SHADOW_RULE_ATOMIC_RESP_UNEXPECTED:
        return "oldest request in";
    case IW_SHADOW_RULE_STAG_INVALIDATED:
    case IW_SHADOW_RULE_INVALIDATE_INVALIDATED:
        return "invalidated in";
    default:
        return "see";
    }
}

/* The message stays within Wireshark's 240-octet item label even for the
 * longest triple name: what the verdict assumes goes in its own field
 * (iwk_rdmap.shadow.assumes), not here. */
gboolean iwk_expert_shadow(packet_info *pinfo, proto_item *item, const iw_shadow_result *res) {
    gboolean term = res->verdict.kind == IW_VERDICT_TERM;
    if (term) {
        const iw_verdict *v = &res->verdict;
        GString *why = g_string_new(iw_shadow_rule_str(res->rule));
        switch (res->rule) {
        case IW_SHADOW_RULE_IRD_EXCEEDED:
            g_string_append_printf(why, ", IRD %u", res->expected);
            break;
        case IW_SHADOW_RULE_MSN_REPLAY:
            g_string_append_printf(why, ", lowest open MSN %u", res->expected);
            break;
        case IW_SHADOW_RULE_QN1_MSN:
        case IW_SHADOW_RULE_QN2_MSN:
        case IW_SHADOW_RULE_QN3_MSN:
            g_string_append_printf(why, ", MSN %u due", res->expected);
            break;
        default:
            break;
        }
        if (res->has_ref)
            g_string_append_printf(why, ", %s frame %" G_GUINT64_FORMAT, shadow_ref_what(res->rule),
                                   res->ref);
        expert_add_info_format(
            pinfo, item, term_ei(v->term),
            "RNIC must send Terminate %u/%u/0x%02x \"%s\" (stateful: %s; rule: %s)",
            iw_term_layer(v->term), iw_term_etype(v->term), iw_term_ecode(v->term),
            iw_term_str(v->term), why->str, v->rfc ? v->rfc : "-");
        g_string_free(why, TRUE);
        iwk_alert(pinfo, item, PI_ERROR);
    }
    for (unsigned i = 0; i < IW_SHADOW_NOTE_COUNT_; i++) {
        if (!(res->notes & SHADOW_SHOWN & (1u << i)))
            continue;
        GString *t = g_string_new(iw_shadow_note_str((iw_shadow_note)i));
        if (i == IW_SHADOW_NOTE_BIT_AFTER_TERMINATE)
            g_string_append_printf(t, " (stream ended in frame %" G_GUINT64_FORMAT "; %s)",
                                   res->ended_in, iw_shadow_note_rfc((iw_shadow_note)i));
        else if (i == IW_SHADOW_NOTE_BIT_SENT_AFTER_TERMINATE && res->has_ref)
            g_string_append_printf(t, " (its Terminate: frame %" G_GUINT64_FORMAT "; %s)", res->ref,
                                   iw_shadow_note_rfc((iw_shadow_note)i));
        else
            g_string_append_printf(t, " (%s)", iw_shadow_note_rfc((iw_shadow_note)i));
        expert_add_info_format(pinfo, item, &ei_shadow_note[i], "%s", t->str);
        g_string_free(t, TRUE);
        iwk_alert(pinfo, item, shadow_note_severity(i));
    }
    return term;
}
