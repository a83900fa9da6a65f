/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fault injection spec parsing (<iwarp/faults.h>). */
#include <iwarp/err.h>
#include <iwarp/faults.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    unsigned flag;
} faults_named[] = {
    {"swap-nibbles", IW_FAULT_SWAP_NIBBLES},
    {"no-hdr-copy", IW_FAULT_NO_HDR_COPY},
    {"bad-seg-len", IW_FAULT_BAD_SEG_LEN},
    {"send-after-terminate", IW_FAULT_SEND_AFTER_TERM},
    {"place-before-check", IW_FAULT_PLACE_BEFORE_CHECK},
    {"accept-bad-crc", IW_FAULT_ACCEPT_BAD_CRC},
    {"accept-mpa-bad-key", IW_FAULT_ACCEPT_MPA_BAD_KEY},
    {"accept-mpa-bad-rev", IW_FAULT_ACCEPT_MPA_BAD_REV},
    {"ird-unbounded", IW_FAULT_IRD_UNBOUNDED},
    {"no-remote-invalidate", IW_FAULT_NO_REMOTE_INVALIDATE},
    {"ignore-access", IW_FAULT_IGNORE_ACCESS},
    {"sctp-lax-session", IW_FAULT_SCTP_LAX_SESSION},
};

/* "L/E/C": hex fields, "0x" optional, as the registry and Terminate
 * triples are written (0/2/FF, 0x0/0x2/0xff): case files and the command
 * line take the same text. */
static int faults_triple(const char *s, uint16_t *out) {
    static const unsigned max[3] = {0xF, 0xF, 0xFF};
    unsigned v[3];
    for (int i = 0; i < 3; i++) {
        if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
            s += 2;
        unsigned x = 0;
        int n = 0;
        for (;; n++) {
            char ch = s[n];
            int d = ch >= '0' && ch <= '9'   ? ch - '0'
                    : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                    : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                             : -1;
            if (d < 0 || n == 3)
                break;
            x = x << 4 | (unsigned)d;
        }
        if (n == 0 || x > max[i])
            return -1;
        s += n;
        if (i < 2 && *s++ != '/')
            return -1;
        v[i] = x;
    }
    if (*s)
        return -1;
    *out = IW_TERM_TRIPLE(v[0], v[1], v[2]);
    return 0;
}

int iw_faults_parse(iw_faults *f, const char *spec, char *err, size_t errlen) {
    memset(f, 0, sizeof *f);
    char item[64];
    while (*spec) {
        size_t n = strcspn(spec, ",");
        if (n == 0 || n >= sizeof item) {
            snprintf(err, errlen, "bad fault list near '%.20s'", spec);
            return -1;
        }
        memcpy(item, spec, n);
        item[n] = 0;
        spec += n + (spec[n] == ',');
        if (spec[-1] == ',' && !*spec) {
            snprintf(err, errlen, "fault list ends with a comma");
            return -1;
        }
        if (!strncmp(item, "skip:", 5) || !strncmp(item, "miscode:", 8)) {
            bool skip = item[0] == 's';
            uint16_t t;
            if (faults_triple(item + (skip ? 5 : 8), &t)) {
                snprintf(err, errlen, "fault '%s': want L/E/C, e.g. skip:1/1/1", item);
                return -1;
            }
            if (skip && f->n_skip == IW_FAULT_SKIP_MAX) {
                snprintf(err, errlen, "fault '%s': at most %d skip: items", item,
                         IW_FAULT_SKIP_MAX);
                return -1;
            }
            if (!skip && (f->flags & IW_FAULT_MISCODE)) {
                snprintf(err, errlen, "fault '%s': only one miscode: item", item);
                return -1;
            }
            if (skip)
                f->skip_triple[f->n_skip++] = t;
            else
                f->miscode_triple = t;
            f->flags |= skip ? IW_FAULT_SKIP : IW_FAULT_MISCODE;
            continue;
        }
        size_t k;
        for (k = 0; k < sizeof faults_named / sizeof *faults_named; k++)
            if (!strcmp(item, faults_named[k].name))
                break;
        if (k == sizeof faults_named / sizeof *faults_named) {
            snprintf(err, errlen, "unknown fault '%s'", item);
            return -1;
        }
        f->flags |= faults_named[k].flag;
    }
    return 0;
}

bool iw_faults_skips(const iw_faults *f, uint16_t triple) {
    if (!f || !(f->flags & IW_FAULT_SKIP))
        return false;
    for (unsigned i = 0; i < f->n_skip; i++)
        if (f->skip_triple[i] == triple)
            return true;
    return false;
}
