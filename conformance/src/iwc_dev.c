/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Deviations file parser: see iwc_dev.h. */
#include "iwc_dev.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iwc_util.h"

#define DEV_MAX 1024
#define LINE_MAX_ 2048

static char *dup_trim(const char *s) {
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        n--;
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

static int dev_check(const iwc_dev *d, char *err, size_t errlen) {
    if (!d->outcome || !*d->outcome) {
        snprintf(err, errlen,
                 "%d: deviation '%s' has no 'outcome:' (the failure text it "
                 "excuses)",
                 d->line, d->id);
        return -1;
    }
    if (!d->reason || !*d->reason) {
        snprintf(err, errlen, "%d: deviation '%s' has no 'reason:'", d->line, d->id);
        return -1;
    }
    return 0;
}

int iwc_dev_parse(const char *text, size_t len, iwc_devlist *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (memchr(text, 0, len)) {
        snprintf(err, errlen, "0: NUL octet in deviations file");
        return -1;
    }
    char line[LINE_MAX_ + 1];
    size_t off = 0;
    int ln = 0;
    iwc_dev *cur = NULL;
    while (off < len) {
        ln++;
        const char *nl = memchr(text + off, '\n', len - off);
        size_t n = nl ? (size_t)(nl - text - off) : len - off;
        if (n > LINE_MAX_) {
            snprintf(err, errlen, "%d: line too long", ln);
            goto bad;
        }
        memcpy(line, text + off, n);
        line[n] = 0;
        off += n + (nl ? 1 : 0);
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s || *s == '#' || *s == '\r')
            continue;
        char *colon = strchr(s, ':');
        if (!colon) {
            snprintf(err, errlen, "%d: expected 'deviation:', 'outcome:' or 'reason:'", ln);
            goto bad;
        }
        *colon = 0;
        char *val = dup_trim(colon + 1);
        if (!val) {
            snprintf(err, errlen, "%d: out of memory", ln);
            goto bad;
        }
        if (!strcmp(s, "deviation")) {
            if (cur && dev_check(cur, err, errlen) < 0) {
                free(val);
                goto bad;
            }
            if (out->n == DEV_MAX || !*val) {
                snprintf(err, errlen, "%d: %s", ln,
                         *val ? "too many deviations" : "deviation: wants a case id");
                free(val);
                goto bad;
            }
            iwc_dev *nv = realloc(out->v, (size_t)(out->n + 1) * sizeof *nv);
            if (!nv) {
                free(val);
                snprintf(err, errlen, "%d: out of memory", ln);
                goto bad;
            }
            out->v = nv;
            cur = &out->v[out->n++];
            memset(cur, 0, sizeof *cur);
            cur->id = val;
            cur->line = ln;
        } else if (!strcmp(s, "outcome") || !strcmp(s, "reason")) {
            char **dst = s[0] == 'o' ? (cur ? &cur->outcome : NULL) : (cur ? &cur->reason : NULL);
            if (!dst) {
                snprintf(err, errlen, "%d: '%s:' before any 'deviation:'", ln, s);
                free(val);
                goto bad;
            }
            if (*dst) {
                /* A second line continues the text. */
                char *j = iwc_strf("%s %s", *dst, val);
                free(val);
                if (!j) {
                    snprintf(err, errlen, "%d: out of memory", ln);
                    goto bad;
                }
                free(*dst);
                *dst = j;
            } else {
                *dst = val;
            }
        } else if (!strcmp(s, "intermittent") && cur) {
            /* the IUT fails this way only some of the time: a pass is not
             * "fixed" */
            bool yes = !strcmp(val, "yes");
            if (!yes && strcmp(val, "no")) {
                snprintf(err, errlen, "%d: intermittent: wants yes or no", ln);
                free(val);
                goto bad;
            }
            cur->intermittent = yes;
            free(val);
        } else {
            snprintf(err, errlen, "%d: unknown key '%s' (deviation, outcome, reason, intermittent)",
                     ln, s);
            free(val);
            goto bad;
        }
    }
    if (cur && dev_check(cur, err, errlen) < 0)
        goto bad;
    return 0;
bad:
    iwc_dev_free(out);
    return -1;
}

void iwc_dev_free(iwc_devlist *l) {
    for (int i = 0; i < l->n; i++) {
        free(l->v[i].id);
        free(l->v[i].outcome);
        free(l->v[i].reason);
    }
    free(l->v);
    memset(l, 0, sizeof *l);
}

int iwc_dev_cover(iwc_devlist *l, const char *id, char *const *msgs, int nmsgs, iwc_dev **used,
                  int max) {
    int n = 0;
    for (int k = 0; k < nmsgs; k++) {
        iwc_dev *d = NULL;
        for (int i = 0; i < l->n && !d; i++)
            if (iwc_glob(l->v[i].id, id) && strstr(msgs[k], l->v[i].outcome))
                d = &l->v[i];
        if (!d)
            return 0; /* a failure no entry explains stays a failure */
        int j = 0;
        while (j < n && used[j] != d)
            j++;
        if (j == n && n < max)
            used[n++] = d;
    }
    return n;
}

iwc_dev *iwc_dev_match(iwc_devlist *l, const char *id, char *const *msgs, int nmsgs) {
    iwc_dev *d = NULL;
    return iwc_dev_cover(l, id, msgs, nmsgs, &d, 1) ? d : NULL;
}

static bool is_glob(const char *s) { return strpbrk(s, "*?[") != NULL; }

iwc_dev *iwc_dev_for(iwc_devlist *l, const char *id, bool exact) {
    for (int i = 0; i < l->n; i++)
        if ((!exact || (!is_glob(l->v[i].id) && !l->v[i].intermittent)) && iwc_glob(l->v[i].id, id))
            return &l->v[i];
    return NULL;
}
