/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwarp-perf's protocols as main (iwarp-perf.c) sees them: each one a small
 * table of functions. A protocol drives a session with perf_common's
 * helpers and hands the shared loops its perf_hooks; it never calls main
 * or the other protocol. */
#ifndef PERF_PROTO_H
#define PERF_PROTO_H

#include "perf_common.h"

typedef struct perf_proto {
    const char *id; /* what it announces on the wire (--version prints perf_native's) */
    /* The protocol's own rules for the options, after the common ones: NULL
     * if they hold (filling in its defaults), else the usage error. */
    const char *(*check_opts)(perf_opts *o);
    /* A whole session; -1 with x->err set on failure. */
    int (*run_server)(perf *x);
    int (*run_client)(perf *x);
    /* After perf_destroy: frees x->proto. */
    void (*cleanup)(perf *x);
} perf_proto;

extern const perf_proto perf_native;   /* iwarp-perf's own (perf_native.c) */
extern const perf_proto perf_perftest; /* perftest's -R exchange, --perftest (perftest.c) */

#endif
