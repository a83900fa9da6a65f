/* The runner's outputs: console lines, the case list (plain, Markdown,
 * JSON), the JSON result file, JUnit XML and the single-file HTML report. */
#ifndef IWC_REPORT_H
#define IWC_REPORT_H

#include <stdio.h>

#include "iwc_case.h"
#include "iwc_run.h"

typedef struct iwc_entry {
    iwc_case c;
    char *path;      /* case file */
    bool selected;   /* passed --filter */
    bool ran;
    iwc_result r;
    char *pcap;      /* relative to the output directory, or NULL */
} iwc_entry;

typedef struct iwc_meta {
    const char *agent;      /* HOST:PORT */
    const char *impl;       /* the agent's hello impl */
    const char *deviations; /* file, or NULL */
    uint64_t started_us;    /* wall clock */
    uint64_t duration_us;
    char **warnings;
    int nwarnings;
} iwc_meta;

typedef struct iwc_counts {
    int total, pass, fail, error, skip, deviation, fixed, notrun;
} iwc_counts;

void iwc_count(const iwc_entry *e, int n, iwc_counts *k);

/* --list: plain text, Markdown (docs/conformance.md) or JSON lines. */
void iwc_list(FILE *f, const iwc_entry *e, int n, const char *format);

/* --list --coverage: every RFC 6580 triple and the cases that expect it. */
void iwc_coverage(FILE *f, const iwc_entry *e, int n, bool markdown);

int iwc_write_json(const char *path, const iwc_entry *e, int n, const iwc_meta *m);
int iwc_write_junit(const char *path, const iwc_entry *e, int n, const iwc_meta *m);
int iwc_write_html(const char *path, const iwc_entry *e, int n, const iwc_meta *m);

#endif
