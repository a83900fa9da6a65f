/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The runner's outputs: console lines, the case list (plain, Markdown,
 * JSON), the JSON result file, JUnit XML and the single-file HTML report. */
#ifndef IWC_REPORT_H
#define IWC_REPORT_H

#include <stdio.h>

#include "iwc_case.h"
#include "iwc_run.h"

typedef struct iwc_entry {
    iwc_case c;
    char *path;    /* case file */
    bool selected; /* passed --filter */
    bool ran;
    iwc_result r;
    char *pcap;         /* relative to the output directory, or NULL */
    char *log;          /* per-case log, relative to the output directory, or NULL */
    int runs, bad_runs; /* soak: times run, times not PASS/SKIP/DEVIATION */
    char *bad_iters;    /* soak: "3 (FAIL), 7 (ERROR)", or NULL */
} iwc_entry;

typedef struct iwc_meta {
    const char *agent;      /* HOST:PORT */
    const char *impl;       /* the agent's hello impl */
    const char *deviations; /* file, or NULL */
    /* provenance: what exactly was run, and how */
    const char *cases_dir, *filter, *rfc_sel, *tag_sel; /* NULL: not given */
    const char *case_hash; /* FNV-1a 64 over every loaded case file, hex */
    int cases_loaded, selected;
    int timeout_ms, mpa_timeout_ms, reply_settle_ms;
    bool slow;
    const char *transport; /* "tcp" or "sctp" */
    const char *hello;     /* the agent's hello response line */
    const char *cmdline;
    int iterations;      /* soak: suite passes run (1 without --repeat/--duration) */
    uint64_t started_us; /* wall clock */
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
/* The same as JSON lines: {"triple","name","cases":[..],"alternative_in":[..],"none":".."}. */
void iwc_coverage_json(FILE *f, const iwc_entry *e, int n);

int iwc_write_json(const char *path, const iwc_entry *e, int n, const iwc_meta *m);
int iwc_write_junit(const char *path, const iwc_entry *e, int n, const iwc_meta *m);
int iwc_write_html(const char *path, const iwc_entry *e, int n, const iwc_meta *m);

#endif
