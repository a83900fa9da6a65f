/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Report writers: see iwc_report.h. */
#include "iwc_report.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <iwarp/err.h>
#include <iwarp/iwarp.h>

#include "iw_jsonw.h"

void iwc_count(const iwc_entry *e, int n, iwc_counts *k) {
    memset(k, 0, sizeof *k);
    for (int i = 0; i < n; i++) {
        if (!e[i].ran)
            continue;
        k->total++;
        switch (e[i].r.status) {
        case IWC_PASS:
            k->pass++;
            break;
        case IWC_FAIL:
            k->fail++;
            break;
        case IWC_ERROR:
            k->error++;
            break;
        case IWC_SKIP:
            k->skip++;
            break;
        case IWC_DEVIATION:
            k->deviation++;
            break;
        case IWC_FIXED:
            k->fixed++;
            break;
        case IWC_NOTRUN:
            k->notrun++;
            break;
        }
    }
}

static void join_rfc(const iwc_case *c, char *out, size_t n) {
    size_t k = 0;
    out[0] = 0;
    for (int i = 0; i < c->nrfc && k + 1 < n; i++) {
        int w = snprintf(out + k, n - k, "%s%s", i ? "; " : "", c->rfc[i]);
        k += w > 0 ? (size_t)w : 0;
    }
}

/* Text that may contain '|' for a Markdown table cell. */
static void md_cell(FILE *f, const char *s) {
    for (; s && *s; s++)
        if (*s == '|')
            fputs("\\|", f);
        else
            fputc(*s, f);
}

/* A fault spec as iwarp-target --fault reads it: triples in strtoul base 0
 * (the case writes registry hex "0/2/FF", the target wants 0x for hex). */
static const char *target_spec(const char *sp, char *out, size_t n) {
    size_t o = 0;
    out[0] = 0;
    while (*sp && o < n) {
        size_t il = strcspn(sp, ",");
        char item[64];
        snprintf(item, sizeof item, "%.*s", (int)(il < sizeof item ? il : sizeof item - 1), sp);
        uint16_t t;
        size_t pl = !strncmp(item, "skip:", 5) ? 5 : !strncmp(item, "miscode:", 8) ? 8 : 0;
        int w = pl && iwc_parse_triple(item + pl, &t)
                    ? snprintf(out + o, n - o, "%s%.*s%u/%u/0x%02X", o ? "," : "", (int)pl, item,
                               iw_term_layer(t), iw_term_etype(t), iw_term_ecode(t))
                    : snprintf(out + o, n - o, "%s%s", o ? "," : "", item);
        o += w > 0 ? (size_t)w : 0;
        sp += il + (sp[il] == ',');
    }
    return out;
}

static void json_case(iw_jw *j, const iwc_entry *e, bool with_result) {
    const iwc_case *c = &e->c;
    iw_jw_obj_begin(j, NULL);
    iw_jw_str(j, "id", c->id);
    iw_jw_str(j, "area", c->area);
    iw_jw_str(j, "title", c->title);
    iw_jw_arr_begin(j, "rfc");
    for (int i = 0; i < c->nrfc; i++)
        iw_jw_str(j, NULL, c->rfc[i]);
    iw_jw_arr_end(j);
    if (c->choice)
        iw_jw_str(j, "choice", c->choice);
    iw_jw_str(j, "iut_role", c->role == IWC_IUT_RESPONDER ? "responder" : "initiator");
    iw_jw_bool(j, "slow", c->tags & IWC_TAG_SLOW);
    iw_jw_arr_begin(j, "transports");
    if (c->transports & IWC_TR_TCP)
        iw_jw_str(j, NULL, "tcp");
    if (c->transports & IWC_TR_SCTP)
        iw_jw_str(j, NULL, "sctp");
    iw_jw_arr_end(j);
    iw_jw_arr_begin(j, "catches");
    for (int i = 0; i < c->ncatches; i++) {
        iw_jw_obj_begin(j, NULL);
        char spec[256];
        iw_jw_str(j, "fault", target_spec(c->catches[i].spec, spec, sizeof spec));
        char *why = iwc_fault_reason(c, c->catches[i].spec);
        iw_jw_str(j, "reason", why ? why : "");
        free(why);
        iw_jw_obj_end(j);
    }
    iw_jw_arr_end(j);
    iw_jw_arr_begin(j, "tolerates");
    for (int i = 0; i < c->ntolerates; i++) {
        iw_jw_obj_begin(j, NULL);
        char spec[256];
        iw_jw_str(j, "fault", target_spec(c->tolerates[i].spec, spec, sizeof spec));
        iw_jw_str(j, "outcome", c->tolerates[i].reason);
        iw_jw_obj_end(j);
    }
    iw_jw_arr_end(j);
    iw_jw_arr_begin(j, "allow");
    for (int i = 0; i < c->nallow; i++) {
        iw_jw_obj_begin(j, NULL);
        char b[48];
        iw_jw_str(j, "outcome", iwc_outcome_str(&c->allow[i].o, b, sizeof b));
        iw_jw_str(j, "rfc", c->allow[i].text);
        iw_jw_obj_end(j);
    }
    iw_jw_arr_end(j);
    iw_jw_str(j, "file", e->path ? e->path : "");
    if (with_result) {
        iw_jw_str(j, "status", iwc_status_name(e->r.status));
        iw_jw_str(j, "reason", iwc_result_reason(&e->r));
        iw_jw_arr_begin(j, "messages");
        for (int i = 0; i < e->r.nmsgs; i++)
            iw_jw_str(j, NULL, e->r.msgs[i]);
        iw_jw_arr_end(j);
        iw_jw_arr_begin(j, "notes");
        for (int i = 0; i < e->r.nnotes; i++)
            iw_jw_str(j, NULL, e->r.notes[i]);
        iw_jw_arr_end(j);
        if (e->r.deviation)
            iw_jw_str(j, "deviation", e->r.deviation);
        if (e->r.outcome)
            iw_jw_str(j, "outcome", e->r.outcome);
        iw_jw_uint(j, "checks", (uint64_t)e->r.checks);
        iw_jw_uint(j, "duration_us", e->r.duration_us);
        if (e->pcap)
            iw_jw_str(j, "pcap", e->pcap);
        if (e->log)
            iw_jw_str(j, "log", e->log);
        if (e->runs > 1) {
            iw_jw_uint(j, "runs", (uint64_t)e->runs);
            iw_jw_uint(j, "bad_runs", (uint64_t)e->bad_runs);
            if (e->bad_iters)
                iw_jw_str(j, "bad_iterations", e->bad_iters);
        }
    }
    iw_jw_obj_end(j);
}

/* What a case expects, in a few words: its Terminate, a close, or success. */
static void expects(const iwc_case *c, char *out, size_t n) {
    for (int i = 0; i < c->nsteps; i++) {
        const iwc_step *s = &c->steps[i];
        if (s->kind != IWC_STEP_EXPECT)
            continue;
        if (s->sub == IWC_EXPECT_TERMINATE && s->has_triple) {
            bool opt = iwc_step_arg(s, "optional") != NULL;
            size_t o = (size_t)snprintf(out, n, "%s", opt ? "close (or " : "");
            for (int a = 0; a < s->nalt && o < n; a++) {
                char b[48];
                int w = snprintf(out + o, n - o, "%s%s", a ? " or " : "",
                                 iwc_outcome_str(&s->alt[a], b, sizeof b));
                o += w > 0 ? (size_t)w : 0;
            }
            if (opt && o < n)
                strncat(out, ")", n - strlen(out) - 1);
            return;
        }
        if (s->sub == IWC_EXPECT_CLOSED) {
            snprintf(out, n, "close");
            return;
        }
    }
    snprintf(out, n, "success");
}

/* Triples no peer can provoke from the wire, and why (docs/conformance.md). */
static const char *not_from_wire(uint16_t t) {
    switch (t) {
    case IW_TERM_RDMAP_LOCAL_CATASTROPHIC:
    case IW_TERM_DDP_LOCAL_CATASTROPHIC:
    case IW_TERM_LLP_MPA_LOCAL_CATASTROPHIC:
    case IW_TERM_RDMAP_CATASTROPHIC_GLOBAL:
        return "local failure inside the IUT: nothing on the wire causes it";
    case IW_TERM_RDMAP_PROT_UNSPECIFIED:
        return "no wire condition is named for it; every protection check has its own code";
    case IW_TERM_LLP_MPA_INVALID_RR:
        return "an invalid Request/Reply closes TCP before Full Operation (RFC 5044 §8 code 4): "
               "no FPDU can carry it; the mpa.request-* / mpa.reply-* close cases cover it";
    default:
        return NULL;
    }
}

/* How case c accepts triple t: 0 not, 1 its first outcome, 2 an alternative. */
static int accepts(const iwc_case *c, uint16_t t) {
    int how = 0;
    for (int q = 0; q < c->nsteps && how != 1; q++) {
        const iwc_step *s = &c->steps[q];
        if (s->kind != IWC_STEP_EXPECT || s->sub != IWC_EXPECT_TERMINATE)
            continue;
        for (int a = 0; a < s->nalt; a++)
            if (s->alt[a].kind == IWC_OUT_TERM && s->alt[a].triple == t)
                how = s->triple == t ? 1 : 2;
    }
    return how;
}

void iwc_coverage_json(FILE *f, const iwc_entry *e, int n) {
    static const uint16_t triples[] = {
#define IWC_X_(name, l, et, c, rfc, text) IW_TERM_TRIPLE(l, et, c),
        IW_TERM_LIST(IWC_X_)
#undef IWC_X_
    };
    for (size_t k = 0; k < sizeof triples / sizeof *triples; k++) {
        uint16_t t = triples[k];
        iw_jw j;
        iw_jw_init(&j, f);
        iw_jw_obj_begin(&j, NULL);
        char ts[16];
        snprintf(ts, sizeof ts, "%X/%X/%X", iw_term_layer(t), iw_term_etype(t), iw_term_ecode(t));
        iw_jw_str(&j, "triple", ts);
        iw_jw_str(&j, "name", iw_term_str(t));
        int hits = 0;
        for (int pass = 1; pass <= 2; pass++) {
            iw_jw_arr_begin(&j, pass == 1 ? "cases" : "alternative_in");
            for (int i = 0; i < n; i++)
                if (e[i].selected && accepts(&e[i].c, t) == pass) {
                    iw_jw_str(&j, NULL, e[i].c.id);
                    hits++;
                }
            iw_jw_arr_end(&j);
        }
        if (!hits)
            iw_jw_str(&j, "none", not_from_wire(t) ? not_from_wire(t) : "NOT COVERED");
        iw_jw_obj_end(&j);
        fputc('\n', f);
    }
}

/* For every RFC 6580 triple (IW_TERM_LIST), the cases that expect it. */
void iwc_coverage(FILE *f, const iwc_entry *e, int n, bool md) {
    static const uint16_t triples[] = {
#define IWC_X_(name, l, et, c, rfc, text) IW_TERM_TRIPLE(l, et, c),
        IW_TERM_LIST(IWC_X_)
#undef IWC_X_
    };
    if (md)
        fputs("| triple | name | cases that expect it |\n|---|---|---|\n", f);
    int covered = 0, total = 0;
    for (size_t k = 0; k < sizeof triples / sizeof *triples; k++) {
        uint16_t t = triples[k];
        total++;
        if (md)
            fprintf(f, "| %X/%X/%X | %s | ", iw_term_layer(t), iw_term_etype(t), iw_term_ecode(t),
                    iw_term_str(t));
        else
            fprintf(f, "%X/%X/%-3X %-70s ", iw_term_layer(t), iw_term_etype(t), iw_term_ecode(t),
                    iw_term_str(t));
        int hits = 0;
        for (int i = 0; i < n; i++) {
            if (!e[i].selected)
                continue;
            /* A case counts for every triple it accepts; "(alt.)" marks one
             * that is not the case's first outcome (iwarp-target's answer). */
            int how = 0; /* 1 first outcome, 2 an alternative */
            for (int q = 0; q < e[i].c.nsteps && how != 1; q++) {
                const iwc_step *s = &e[i].c.steps[q];
                if (s->kind != IWC_STEP_EXPECT || s->sub != IWC_EXPECT_TERMINATE)
                    continue;
                for (int a = 0; a < s->nalt; a++)
                    if (s->alt[a].kind == IWC_OUT_TERM && s->alt[a].triple == t)
                        how = s->triple == t ? 1 : 2;
            }
            if (how)
                fprintf(f, md ? "%s`%s`%s" : "%s%s%s", hits++ ? ", " : "", e[i].c.id,
                        how == 2 ? " (alt.)" : "");
        }
        covered += hits > 0;
        if (!hits)
            fprintf(f, md ? "*none: %s*" : "(none: %s)",
                    not_from_wire(t) ? not_from_wire(t) : "NOT COVERED");
        fputs(md ? " |\n" : "\n", f);
    }
    fprintf(f,
            md ? "\n%d of %d registered triples are expected by a case.\n"
               : "\n%d of %d registered triples are expected by a case\n",
            covered, total);
}

void iwc_list(FILE *f, const iwc_entry *e, int n, const char *format) {
    char rfc[512];
    if (!strcmp(format, "json")) {
        iw_jw j;
        iw_jw_init(&j, f);
        for (int i = 0; i < n; i++) {
            if (!e[i].selected)
                continue;
            json_case(&j, &e[i], false);
            iw_jw_newline(&j);
        }
        return;
    }
    bool md = !strcmp(format, "markdown");
    const char *area = "";
    int count = 0;
    for (int i = 0; i < n; i++) {
        if (!e[i].selected)
            continue;
        const iwc_case *c = &e[i].c;
        join_rfc(c, rfc, sizeof rfc);
        if (strcmp(area, c->area)) {
            area = c->area;
            int k = 0;
            for (int q = i; q < n; q++)
                k += e[q].selected && !strcmp(e[q].c.area, area);
            if (md)
                fprintf(f,
                        "%s### %s (%d)\n\n| case | title | RFC | IUT | expects | catches |\n"
                        "|---|---|---|---|---|---|\n",
                        count ? "\n" : "", area, k);
            else
                fprintf(f, "%s%s (%d)\n", count ? "\n" : "", area, k);
        }
        count++;
        if (md) {
            fprintf(f, "| `%s`%s | ", c->id, c->tags & IWC_TAG_SLOW ? " (slow)" : "");
            md_cell(f, c->title);
            if (c->choice)
                fputs(" *(RFC leaves the code open)*", f);
            fputs(" | ", f);
            md_cell(f, rfc);
            char ex[48];
            expects(c, ex, sizeof ex);
            fprintf(f, " | %s | %s | ", c->role == IWC_IUT_RESPONDER ? "resp" : "init", ex);
            for (int k = 0; k < c->ncatches; k++)
                fprintf(f, "%s`%s`", k ? ", " : "", c->catches[k].spec);
            fputs(" |\n", f);
        } else {
            char ex[48];
            expects(c, ex, sizeof ex);
            fprintf(f, "  %-44s %-22s %s%s  [%s]\n", c->id, ex, c->title,
                    c->tags & IWC_TAG_SLOW ? " (slow)" : "", rfc);
        }
    }
    if (!md)
        fprintf(f, "\n%d cases\n", count);
}

static int open_out(const char *path, FILE **f) {
    *f = fopen(path, "w");
    if (!*f) {
        fprintf(stderr, "iwarp-conform: cannot write %s\n", path);
        return -1;
    }
    return 0;
}

static void iso_time(uint64_t us, char *out, size_t n) {
    time_t t = (time_t)(us / 1000000);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int iwc_write_json(const char *path, const iwc_entry *e, int n, const iwc_meta *m) {
    FILE *f;
    if (open_out(path, &f) < 0)
        return -1;
    iwc_counts k;
    iwc_count(e, n, &k);
    char when[32];
    iso_time(m->started_us, when, sizeof when);
    iw_jw j;
    iw_jw_init(&j, f);
    iw_jw_obj_begin(&j, NULL);
    iw_jw_str(&j, "runner", "iwarp-conform " IW_VERSION_STR);
    iw_jw_obj_begin(&j, "provenance");
    iw_jw_str(&j, "runner_version", IW_VERSION_STR);
    iw_jw_str(&j, "command", m->cmdline ? m->cmdline : "");
    iw_jw_str(&j, "cases_dir", m->cases_dir ? m->cases_dir : "");
    iw_jw_str(&j, "case_set_hash", m->case_hash ? m->case_hash : "");
    iw_jw_uint(&j, "cases_loaded", (uint64_t)m->cases_loaded);
    iw_jw_uint(&j, "cases_selected", (uint64_t)m->selected);
    iw_jw_str(&j, "filter", m->filter ? m->filter : "");
    iw_jw_str(&j, "rfc", m->rfc_sel ? m->rfc_sel : "");
    iw_jw_str(&j, "tag", m->tag_sel ? m->tag_sel : "");
    iw_jw_str(&j, "deviations_file", m->deviations ? m->deviations : "");
    iw_jw_uint(&j, "timeout_ms", (uint64_t)m->timeout_ms);
    iw_jw_uint(&j, "mpa_timeout_ms", (uint64_t)m->mpa_timeout_ms);
    iw_jw_uint(&j, "reply_settle_ms", (uint64_t)m->reply_settle_ms);
    iw_jw_bool(&j, "slow", m->slow);
    iw_jw_str(&j, "transport", m->transport ? m->transport : "tcp");
    iw_jw_uint(&j, "iterations", (uint64_t)m->iterations);
    iw_jw_str(&j, "agent_hello", m->hello ? m->hello : "");
    iw_jw_obj_end(&j);
    iw_jw_str(&j, "agent", m->agent ? m->agent : "");
    iw_jw_str(&j, "impl", m->impl ? m->impl : "");
    iw_jw_str(&j, "started", when);
    iw_jw_uint(&j, "duration_us", m->duration_us);
    if (m->deviations)
        iw_jw_str(&j, "deviations_file", m->deviations);
    iw_jw_obj_begin(&j, "counts");
    iw_jw_uint(&j, "total", (uint64_t)k.total);
    iw_jw_uint(&j, "pass", (uint64_t)k.pass);
    iw_jw_uint(&j, "fail", (uint64_t)k.fail);
    iw_jw_uint(&j, "error", (uint64_t)k.error);
    iw_jw_uint(&j, "skip", (uint64_t)k.skip);
    iw_jw_uint(&j, "deviation", (uint64_t)k.deviation);
    iw_jw_uint(&j, "fixed", (uint64_t)k.fixed);
    iw_jw_uint(&j, "notrun", (uint64_t)k.notrun);
    iw_jw_obj_end(&j);
    iw_jw_arr_begin(&j, "warnings");
    for (int i = 0; i < m->nwarnings; i++)
        iw_jw_str(&j, NULL, m->warnings[i]);
    iw_jw_arr_end(&j);
    iw_jw_arr_begin(&j, "cases");
    for (int i = 0; i < n; i++)
        if (e[i].ran)
            json_case(&j, &e[i], true);
    iw_jw_arr_end(&j);
    iw_jw_obj_end(&j);
    iw_jw_newline(&j);
    return fclose(f) == 0 ? 0 : -1;
}

/* Text in markup: & < > " escaped. XML 1.0 (xml) also escapes ' and drops
 * the control characters it cannot carry; HTML keeps them as they are. */
static void markup(FILE *f, const char *s, bool xml) {
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
        switch (*p) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs(xml ? "&apos;" : "'", f);
            break;
        default:
            if (!xml || *p >= 0x20 || *p == '\n' || *p == '\t')
                fputc(*p, f);
        }
    }
}

static void xml_text(FILE *f, const char *s) { markup(f, s, true); }

/* The provenance as name/value pairs, for JUnit and HTML. */
static int provenance(const iwc_meta *m, const char *names[], char vals[][96], int max) {
    int n = 0;
#define PV(nm, ...)                                                                                \
    do {                                                                                           \
        if (n < max) {                                                                             \
            names[n] = nm;                                                                         \
            snprintf(vals[n++], 96, __VA_ARGS__);                                                  \
        }                                                                                          \
    } while (0)
    PV("runner_version", "%s", IW_VERSION_STR);
    PV("case_set_hash", "%s", m->case_hash ? m->case_hash : "");
    PV("cases", "%d selected of %d loaded from %s", m->selected, m->cases_loaded,
       m->cases_dir ? m->cases_dir : "?");
    PV("filter", "%s", m->filter ? m->filter : "(none)");
    PV("rfc", "%s", m->rfc_sel ? m->rfc_sel : "(none)");
    PV("tag", "%s", m->tag_sel ? m->tag_sel : "(none)");
    PV("deviations_file", "%s", m->deviations ? m->deviations : "(none)");
    PV("timeouts", "expectation %d ms, MPA %d ms, reply settle %d ms%s", m->timeout_ms,
       m->mpa_timeout_ms, m->reply_settle_ms, m->slow ? ", slow cases on" : "");
    PV("transport", "%s",
       m->transport && !strcmp(m->transport, "sctp") ? "DDP over SCTP (RFC 5043, in UDP)"
                                                     : "MPA over TCP");
    PV("iterations", "%d", m->iterations);
#undef PV
    return n;
}

int iwc_write_junit(const char *path, const iwc_entry *e, int n, const iwc_meta *m) {
    FILE *f;
    if (open_out(path, &f) < 0)
        return -1;
    iwc_counts all;
    iwc_count(e, n, &all);
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    /* JUnit knows pass, failure, error and skipped. A FIXED deviation is a
     * failure (the list is stale), an expected DEVIATION a skip with
     * type="deviation", a case the run never reached an error with
     * type="notrun": none of them shows as a pass. */
    fprintf(f,
            "<testsuites name=\"iwarp-conform\" tests=\"%d\" failures=\"%d\" errors=\"%d\" "
            "skipped=\"%d\" time=\"%.3f\">\n",
            all.total, all.fail + all.fixed, all.error + all.notrun, all.skip + all.deviation,
            (double)m->duration_us / 1e6);
    const char *area = NULL;
    for (int i = 0; i < n; i++) {
        if (!e[i].ran || (area && !strcmp(area, e[i].c.area)))
            continue;
        area = e[i].c.area;
        iwc_counts k = {0};
        double t = 0;
        int tests = 0;
        for (int q = i; q < n; q++) {
            if (!e[q].ran || strcmp(e[q].c.area, area))
                continue;
            tests++;
            t += (double)e[q].r.duration_us / 1e6;
            k.fail += e[q].r.status == IWC_FAIL || e[q].r.status == IWC_FIXED;
            k.error += e[q].r.status == IWC_ERROR || e[q].r.status == IWC_NOTRUN;
            k.skip += e[q].r.status == IWC_SKIP || e[q].r.status == IWC_DEVIATION;
        }
        fprintf(f, "  <testsuite name=\"");
        xml_text(f, area);
        fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" time=\"%.3f\">\n",
                tests, k.fail, k.error, k.skip, t);
        /* provenance in every suite: what was run, how, and against what */
        const char *pn[16];
        char pv[16][96];
        int np = provenance(m, pn, pv, 16);
        fputs("    <properties>\n", f);
        for (int p = 0; p < np; p++) {
            fprintf(f, "      <property name=\"%s\" value=\"", pn[p]);
            xml_text(f, pv[p]);
            fputs("\"/>\n", f);
        }
        fputs("      <property name=\"agent_hello\" value=\"", f);
        xml_text(f, m->hello ? m->hello : "");
        fputs("\"/>\n    </properties>\n", f);
        for (int q = i; q < n; q++) {
            const iwc_entry *x = &e[q];
            if (!x->ran || strcmp(x->c.area, area))
                continue;
            fprintf(f, "    <testcase classname=\"iwarp-conform.");
            xml_text(f, area);
            fprintf(f, "\" name=\"");
            xml_text(f, x->c.id);
            fprintf(f, "\" time=\"%.3f\">\n", (double)x->r.duration_us / 1e6);
            const char *tag = x->r.status == IWC_FAIL || x->r.status == IWC_FIXED       ? "failure"
                              : x->r.status == IWC_ERROR || x->r.status == IWC_NOTRUN   ? "error"
                              : x->r.status == IWC_SKIP || x->r.status == IWC_DEVIATION ? "skipped"
                                                                                        : NULL;
            fprintf(f, "      <properties><property name=\"status\" value=\"%s\"/>",
                    iwc_status_name(x->r.status));
            if (x->r.outcome) {
                fputs("<property name=\"outcome\" value=\"", f);
                xml_text(f, x->r.outcome);
                fputs("\"/>", f);
            }
            fputs("</properties>\n", f);
            if (tag) {
                fprintf(f, "      <%s type=\"%s\" message=\"", tag, iwc_status_name(x->r.status));
                xml_text(f, x->r.status == IWC_DEVIATION && x->r.deviation ? x->r.deviation
                            : x->r.status == IWC_FIXED
                                ? "listed as an expected deviation but passed: remove it from "
                                  "the list"
                                : iwc_result_reason(&x->r));
                fprintf(f, "\">");
                for (int k2 = 0; k2 < x->r.nmsgs; k2++) {
                    xml_text(f, x->r.msgs[k2]);
                    fputc('\n', f);
                }
                fprintf(f, "</%s>\n", tag);
            }
            fprintf(f, "      <system-out>");
            char rfc[512];
            join_rfc(&x->c, rfc, sizeof rfc);
            xml_text(f, x->c.title);
            fputs("\nRFC: ", f);
            xml_text(f, rfc);
            if (x->r.outcome) {
                fputs("\nconformant, chose ", f);
                xml_text(f, x->r.outcome);
            }
            if (x->r.deviation) {
                fputs("\nexpected deviation: ", f);
                xml_text(f, x->r.deviation);
            }
            if (x->r.status == IWC_FIXED)
                fputs("\nlisted as an expected deviation but passed: remove it from the list", f);
            for (int k2 = 0; k2 < x->r.nnotes; k2++) {
                fputs("\nnot checked: ", f);
                xml_text(f, x->r.notes[k2]);
            }
            if (x->pcap) {
                fputs("\npcap: ", f);
                xml_text(f, x->pcap);
            }
            if (x->log) {
                fputs("\nlog: ", f);
                xml_text(f, x->log);
            }
            if (x->runs > 1) {
                fprintf(f, "\nsoak: %d runs, %d failed or errored", x->runs, x->bad_runs);
                if (x->bad_iters) {
                    fputs(" (iterations ", f);
                    xml_text(f, x->bad_iters);
                    fputs(")", f);
                }
            }
            fprintf(f, "</system-out>\n    </testcase>\n");
        }
        fprintf(f, "  </testsuite>\n");
    }
    fprintf(f, "</testsuites>\n");
    return fclose(f) == 0 ? 0 : -1;
}

/* ---- HTML ---- */

static void html(FILE *f, const char *s) { markup(f, s, false); }

/* Sort key for "RFC 5041 §7.1": the RFC number, then the section numbers. */
static int rfc_cmp(const void *a, const void *b) {
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    while (*x && *y) {
        if (*x >= '0' && *x <= '9' && *y >= '0' && *y <= '9') {
            char *ex, *ey;
            unsigned long nx = strtoul(x, &ex, 10), ny = strtoul(y, &ey, 10);
            if (nx != ny)
                return nx < ny ? -1 : 1;
            x = ex;
            y = ey;
            continue;
        }
        if (*x != *y)
            return (unsigned char)*x < (unsigned char)*y ? -1 : 1;
        x++;
        y++;
    }
    return *x ? 1 : *y ? -1 : 0;
}

/* A case cites "RFC 5041 §7.1 (tagged check 1)": the matrix row is the
 * part before any parenthesis. */
static void rfc_key(const char *s, char *out, size_t n) {
    size_t k = strcspn(s, "(");
    while (k && s[k - 1] == ' ')
        k--;
    if (k >= n)
        k = n - 1;
    memcpy(out, s, k);
    out[k] = 0;
}

static const char *st_class(iwc_status s) {
    static const char *const c[] = {"pass", "fail", "error", "skip", "dev", "fixed", "notrun"};
    return (unsigned)s < 7 ? c[s] : "skip";
}

int iwc_write_html(const char *path, const iwc_entry *e, int n, const iwc_meta *m) {
    FILE *f;
    if (open_out(path, &f) < 0)
        return -1;
    iwc_counts k;
    iwc_count(e, n, &k);
    char when[32];
    iso_time(m->started_us, when, sizeof when);
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<title>iwarp-conform report</title>\n<style>\n"
          "body{font:14px/1.4 system-ui,-apple-system,'Segoe "
          "UI',sans-serif;margin:24px;color:#1d2329;background:#fff}\n"
          "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px "
          "solid #d8dee4;padding-bottom:4px}\n"
          ".meta{color:#57606a;margin-bottom:14px}\n"
          ".badges span{display:inline-block;padding:4px 10px;border-radius:12px;margin:0 6px 6px "
          "0;font-weight:600;color:#fff}\n"
          ".b-pass{background:#1a7f37}.b-fail{background:#cf222e}.b-error{background:#8250df}.b-"
          "skip{background:#6e7781}.b-dev{background:#bf8700}.b-fixed{background:#0969da}.b-notrun{"
          "background:#24292f}\n"
          "table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:4px "
          "8px;border-bottom:1px solid #eaeef2;vertical-align:top}\n"
          "th{background:#f6f8fa;font-weight:600}\n"
          ".matrix td.sec{white-space:nowrap;font-weight:600;width:1%}.matrix "
          "td.cnt{white-space:nowrap;width:1%;color:#57606a}\n"
          ".cell{display:inline-block;min-width:14px;height:14px;margin:1px;border-radius:3px;font-"
          "size:10px;line-height:14px;padding:0 4px;color:#fff;white-space:nowrap}\n"
          ".pass{background:#2da44e}.fail{background:#cf222e}.error{background:#8250df}.skip{"
          "background:#afb8c1}.dev{background:#d4a72c}.fixed{background:#0969da}.notrun{background:"
          "#24292f}\n"
          "td.st{font-weight:700;text-transform:uppercase;font-size:12px;white-space:nowrap}\n"
          "td.st.pass,td.st.fail,td.st.error,td.st.skip,td.st.dev,td.st.fixed{color:#fff;text-"
          "align:center}\n"
          ".why{color:#cf222e;font-family:ui-monospace,monospace;font-size:12px}.choice{color:#"
          "9a6700;font-size:12px}\n"
          ".id{font-family:ui-monospace,monospace;font-size:12px;white-space:nowrap}.small{color:#"
          "57606a;font-size:12px}\n"
          ".legend span{margin-right:12px}\n"
          "</style></head><body>\n",
          f);
    fputs("<h1>iwarp-conform report</h1>\n<div class=\"meta\">IUT: <b>", f);
    html(f, m->impl ? m->impl : "?");
    fputs("</b> &middot; agent ", f);
    html(f, m->agent ? m->agent : "?");
    fprintf(f, " &middot; %s &middot; %.1f s", when, (double)m->duration_us / 1e6);
    if (m->deviations) {
        fputs(" &middot; deviations: ", f);
        html(f, m->deviations);
    }
    fputs("</div>\n<details class=\"small\"><summary>provenance</summary><table>", f);
    {
        const char *pn[16];
        char pv[16][96];
        int np = provenance(m, pn, pv, 16);
        for (int p = 0; p < np; p++) {
            fprintf(f, "<tr><td>%s</td><td>", pn[p]);
            html(f, pv[p]);
            fputs("</td></tr>", f);
        }
        fputs("<tr><td>agent_hello</td><td><code>", f);
        html(f, m->hello ? m->hello : "");
        fputs("</code></td></tr>", f);
    }
    fputs("</table></details>\n<div class=\"badges\">", f);
    fprintf(
        f,
        "<span class=\"b-pass\">%d pass</span><span class=\"b-fail\">%d fail</span>"
        "<span class=\"b-dev\">%d expected deviation</span><span class=\"b-fixed\">%d fixed</span>"
        "<span class=\"b-error\">%d error</span><span class=\"b-skip\">%d skipped</span>"
        "<span class=\"b-notrun\">%d not run</span>",
        k.pass, k.fail, k.deviation, k.fixed, k.error, k.skip, k.notrun);
    fprintf(f, "<span style=\"color:#1d2329\">%d cases</span></div>\n", k.total);
    for (int i = 0; i < m->nwarnings; i++) {
        fputs("<div class=\"choice\">&#9888; ", f);
        html(f, m->warnings[i]);
        fputs("</div>\n", f);
    }

    /* Matrix by RFC section. */
    const char **secs = NULL;
    int ns = 0;
    for (int i = 0; i < n; i++) {
        if (!e[i].ran)
            continue;
        for (int q = 0; q < e[i].c.nrfc; q++) {
            char key[128];
            rfc_key(e[i].c.rfc[q], key, sizeof key);
            bool dup = false;
            for (int s = 0; s < ns && !dup; s++)
                dup = !strcmp(secs[s], key);
            if (dup)
                continue;
            const char **nsx = realloc(secs, (size_t)(ns + 1) * sizeof *nsx);
            char *kd = strdup(key);
            if (!nsx || !kd) {
                free(kd);
                if (nsx)
                    secs = nsx;
                continue;
            }
            secs = nsx;
            secs[ns++] = kd;
        }
    }
    qsort(secs, (size_t)ns, sizeof *secs, rfc_cmp);
    fputs("<h2>Pass/fail by RFC section</h2>\n<div class=\"legend small\">"
          "<span class=\"cell pass\">&nbsp;</span>pass <span class=\"cell fail\">&nbsp;</span>fail "
          "<span class=\"cell dev\">&nbsp;</span>expected deviation <span class=\"cell "
          "fixed\">&nbsp;</span>fixed "
          "<span class=\"cell error\">&nbsp;</span>error <span class=\"cell "
          "skip\">&nbsp;</span>skipped"
          "</div>\n<table class=\"matrix\"><tr><th>section</th><th>ok</th><th>cases</th></tr>\n",
          f);
    for (int s = 0; s < ns; s++) {
        int tot = 0, ok = 0;
        for (int i = 0; i < n; i++)
            for (int q = 0; e[i].ran && q < e[i].c.nrfc; q++) {
                char key[128];
                rfc_key(e[i].c.rfc[q], key, sizeof key);
                if (!strcmp(key, secs[s])) {
                    tot++;
                    ok += e[i].r.status == IWC_PASS || e[i].r.status == IWC_FIXED;
                    break;
                }
            }
        fputs("<tr><td class=\"sec\">", f);
        html(f, secs[s]);
        fprintf(f, "</td><td class=\"cnt\">%d/%d</td><td>", ok, tot);
        for (int i = 0; i < n; i++)
            for (int q = 0; e[i].ran && q < e[i].c.nrfc; q++) {
                char key[128];
                rfc_key(e[i].c.rfc[q], key, sizeof key);
                if (strcmp(key, secs[s]))
                    continue;
                fprintf(f, "<span class=\"cell %s\" title=\"", st_class(e[i].r.status));
                html(f, e[i].c.id);
                fputs(": ", f);
                html(f, iwc_status_name(e[i].r.status));
                if (e[i].r.nmsgs) {
                    fputs(" - ", f);
                    html(f, iwc_result_reason(&e[i].r));
                }
                fputs("\">", f);
                html(f, e[i].c.id);
                fputs("</span>", f);
                break;
            }
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    for (int s = 0; s < ns; s++)
        free((char *)secs[s]);
    free(secs);

    /* Cases by area. */
    const char *area = NULL;
    for (int i = 0; i < n; i++) {
        if (!e[i].ran || (area && !strcmp(area, e[i].c.area)))
            continue;
        area = e[i].c.area;
        fputs("<h2>", f);
        html(f, area);
        fputs("</h2>\n<table><tr><th>status</th><th>case</th><th>what</th><th>RFC</th><th>pcap, "
              "log</th></tr>\n",
              f);
        for (int q = i; q < n; q++) {
            const iwc_entry *x = &e[q];
            if (!x->ran || strcmp(x->c.area, area))
                continue;
            fprintf(f, "<tr><td class=\"st %s\">%s</td><td class=\"id\">", st_class(x->r.status),
                    iwc_status_name(x->r.status));
            html(f, x->c.id);
            fputs("</td><td>", f);
            html(f, x->c.title);
            if (x->c.choice) {
                fputs("<div class=\"choice\">RFC leaves this open: ", f);
                html(f, x->c.choice);
                fputs("</div>", f);
            }
            for (int k2 = 0; k2 < x->r.nmsgs && x->r.status != IWC_PASS; k2++) {
                fprintf(f, "<div class=\"%s\">", x->r.status == IWC_SKIP ? "small" : "why");
                html(f, x->r.msgs[k2]);
                fputs("</div>", f);
            }
            if (x->r.outcome && x->r.status != IWC_FAIL) {
                fputs("<div class=\"choice\">conformant, chose ", f);
                html(f, x->r.outcome);
                fputs("</div>", f);
            }
            if (x->r.deviation) {
                fputs("<div class=\"choice\">expected deviation: ", f);
                html(f, x->r.deviation);
                fputs("</div>", f);
            }
            if (x->r.status == IWC_FIXED)
                fputs("<div class=\"small\">listed as an expected deviation but passed: remove it "
                      "from the list</div>",
                      f);
            for (int k2 = 0; k2 < x->r.nnotes; k2++) {
                fputs("<div class=\"small\">not checked: ", f);
                html(f, x->r.notes[k2]);
                fputs("</div>", f);
            }
            fputs("</td><td class=\"small\">", f);
            for (int k2 = 0; k2 < x->c.nrfc; k2++) {
                if (k2)
                    fputs("<br>", f);
                html(f, x->c.rfc[k2]);
            }
            fputs("</td><td class=\"small\">", f);
            if (x->pcap) {
                fputs("<a href=\"", f);
                html(f, x->pcap);
                fputs("\">pcap</a>", f);
            }
            if (x->log) {
                fputs(" <a href=\"", f);
                html(f, x->log);
                fputs("\">log</a>", f);
            }
            if (x->bad_iters) {
                fputs("<div class=\"why\">failed in iteration ", f);
                html(f, x->bad_iters);
                fputs("</div>", f);
            }
            fputs("</td></tr>\n", f);
        }
        fputs("</table>\n", f);
    }
    fputs("<p class=\"small\">Generated by iwarp-conform " IW_VERSION_STR
          ". Each case's RFC sections decide its verdict; see docs/conformance.md.</p>\n"
          "</body></html>\n",
          f);
    return fclose(f) == 0 ? 0 : -1;
}
