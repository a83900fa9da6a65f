/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Running one case against an IUT: set it up through its agent, play the raw
 * MPA/DDP/RDMAP peer over our own TCP connection, watch the wire and the
 * agent's events, and judge every expectation. */
#ifndef IWC_RUN_H
#define IWC_RUN_H

#include <stdio.h>

#include "iwc_agent.h"
#include "iwc_case.h"
#include "iwc_util.h"

typedef enum iwc_status {
    IWC_PASS = 0,
    IWC_FAIL,      /* the IUT did not do what the RFC requires */
    IWC_ERROR,     /* the run itself broke: agent refused a setup step, no connection */
    IWC_SKIP,      /* not run: slow, or the agent lacks a capability */
    IWC_DEVIATION, /* failed exactly as a listed expected deviation says */
    IWC_FIXED,     /* listed as a deviation but passed: remove it from the list */
    IWC_NOTRUN     /* selected, but the run ended first (the agent was lost) */
} iwc_status;

const char *iwc_status_name(iwc_status s);

typedef struct iwc_env {
    iwc_agent *agent;
    char iut_host[256];       /* where the IUT's RDMA listener is reachable */
    char iut_listen_host[64]; /* numeric iut_host, sent in listen's host; "" behind NAT */
    char local_host[64];      /* our address as the IUT sees it (numeric) */
    /* Address translation between runner and IUT (a guest behind NAT):
     * 0 = none. The IUT listens on iut_listen_port and we connect to
     * iut_connect_port; we listen on local_bind:local_port and tell the IUT
     * local_host:local_port. */
    uint16_t iut_listen_port, iut_connect_port, local_port;
    char local_bind[64];
    int timeout_ms;      /* longest wait for any one expectation */
    int mpa_timeout_ms;  /* the IUT's own MPA startup timeout (slow cases) */
    int reply_settle_ms; /* pause after the IUT's MPA Reply before our first FPDU */
    bool slow;           /* run cases tagged slow */
    bool sctp;           /* DDP over SCTP (RFC 5043, usrsctp over UDP) instead of MPA over TCP */
    int verbose;
    FILE *log;      /* verbose trace */
    FILE *case_log; /* the whole trace of the current case (--out logs/), or NULL */
} iwc_env;

/* Both directions' octets with their timing, for the pcap. Direction 0 is
 * runner -> IUT, 1 is IUT -> runner. */
enum { IWC_CHUNK_DATA = 0, IWC_CHUNK_FIN, IWC_CHUNK_RST };

typedef struct iwc_chunk {
    uint8_t dir, kind;
    uint64_t t_us; /* wall clock */
    uint64_t off;  /* offset in stream[dir] */
    uint32_t len;
} iwc_chunk;

typedef struct iwc_capture {
    bool used;             /* a TCP connection existed */
    bool sctp;             /* each chunk is one SCTP packet, carried in UDP (RFC 6951) */
    bool runner_is_client; /* we sent the SYN */
    uint8_t ip[2][4];      /* [0] runner, [1] IUT (IPv4; synthetic if not) */
    uint16_t port[2];
    uint64_t t_start;
    iwc_buf stream[2];
    iwc_chunk *chunks;
    size_t n, cap;
} iwc_capture;

typedef struct iwc_result {
    iwc_status status;
    char **msgs; /* failures (or the skip / error reason), in order */
    int nmsgs;
    int checks;   /* expectations and automatic checks evaluated */
    char **notes; /* checks the agent could not support (not failures) */
    int nnotes;
    uint64_t duration_us;
    iwc_capture cap;
    char *deviation; /* set by the caller: the matching deviation's reason */
    char *outcome;   /* where the RFCs allow several outcomes: the one the IUT
                               chose and the RFC words that allow it, else NULL */
} iwc_result;

void iwc_run_case(iwc_env *env, const iwc_case *c, iwc_result *res);
void iwc_result_free(iwc_result *r);

/* The first message (the one-line reason), or "". */
const char *iwc_result_reason(const iwc_result *r);

/* The failure text the fault matrix expects when `spec` is injected and the
 * case catches it (docs/conformance.md, "Proof that cases can fail"). */
char *iwc_fault_reason(const iwc_case *c, const char *spec);

#endif
