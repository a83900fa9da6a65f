/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Expected-deviations files: per IUT, the cases it is known to fail, each
 * with the observed outcome it must still show and the reason. An entry
 * only excuses a failure whose messages contain its outcome text, so a new
 * failure in the same case is never hidden; an entry whose case passes is
 * reported as fixed. Pure parser, like iwc_case. Format: docs/conformance.md. */
#ifndef IWC_DEV_H
#define IWC_DEV_H

#include <stdbool.h>
#include <stddef.h>

typedef struct iwc_dev {
    char *id;      /* case id (glob allowed) */
    char *outcome; /* substring of a failure message */
    char *reason;
    int line;
    int matched;       /* cases it excused (set by the caller) */
    bool intermittent; /* seen only some of the time: a pass is not "fixed" */
} iwc_dev;

typedef struct iwc_devlist {
    iwc_dev *v;
    int n;
} iwc_devlist;

/* Returns 0, or -1 with err = "LINE: message". */
int iwc_dev_parse(const char *text, size_t len, iwc_devlist *out, char *err, size_t errlen);
void iwc_dev_free(iwc_devlist *l);

/* A failure of case `id` is excused only when every one of its messages
 * contains the outcome of some entry naming the case. Returns how many
 * distinct entries that took (stored in used[], at most max), or 0 when some
 * message is excused by none. */
int iwc_dev_cover(iwc_devlist *l, const char *id, char *const *msgs, int nmsgs, iwc_dev **used,
                  int max);
/* The first entry of iwc_dev_cover, or NULL. */
iwc_dev *iwc_dev_match(iwc_devlist *l, const char *id, char *const *msgs, int nmsgs);
/* An entry naming case `id`; exact: only entries without glob characters
 * that are not intermittent (neither is "fixed" by one pass). */
iwc_dev *iwc_dev_for(iwc_devlist *l, const char *id, bool exact);

#endif
