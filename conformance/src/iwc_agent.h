/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The runner's side of the agent protocol (shared/design/agent-protocol.md,
 * docs/agent-protocol.md): one JSON request line out, one response line in,
 * over a TCP control connection. While it waits, the caller's idle hook
 * keeps the RDMA socket serviced, so nothing the IUT sends is missed. A
 * misbehaving agent (garbage, silence, a closed socket) is an error with a
 * message, never a hang or a crash. */
#ifndef IWC_AGENT_H
#define IWC_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "iw_json.h"
#include "iw_jsonw.h"

#define IWC_AGENT_LINE_MAX (64u << 20)
/* Largest read_mr, post_recv len and data_hex the agents take
 * (IW_AGENT_DATA_MAX, docs/agent-protocol.md "Limits"): larger regions
 * are read back in pieces. */
#define IWC_AGENT_DATA_MAX (1u << 20)
/* Receive buffers and data_hex sends iwarp-target keeps outstanding per
 * session (docs/agent-protocol.md "Limits"). */
#define IWC_AGENT_POSTED_MAX (64u << 20)

typedef struct iwc_caps {
    char impl[128];
    unsigned version;
    bool rev1, rev2, markers, crc, atomics, immediate, send_inv;
    bool local_inv; /* the agent's invalidate op works (absent in hello: yes) */
    /* extensions (docs/agent-protocol.md) */
    bool guard, pd2, reject, mpa_timeout, term_events;
    bool sctp; /* "transport.sctp": reset takes "transport":"sctp" */
} iwc_caps;

/* Called while waiting for the agent: service other sockets without
 * blocking. fd is polled alongside the agent socket (-1: none). */
typedef struct iwc_idle {
    void (*fn)(void *ctx);
    void *ctx;
    int fd;
} iwc_idle;

typedef struct iwc_agent {
    int fd;
    char *in; /* received, not yet returned */
    size_t in_len, in_cap;
    iwc_caps caps;
    char local_addr[64]; /* our address on the control connection */
    char err[256];
    char last[1024];  /* the last response line (cut), for traces */
    size_t last_len;  /* its whole length */
    char hello[1024]; /* the hello response line (cut), for provenance */
} iwc_agent;

/* Connect to host:port (numeric or a name), retrying until timeout_ms. */
int iwc_agent_connect(iwc_agent *a, const char *host, uint16_t port, int timeout_ms);
void iwc_agent_close(iwc_agent *a);

/* One request (JSON object text, no newline). On 0, *doc holds the parsed
 * response (free with iw_json_free) - which may still be ok:false. On -1,
 * a->err says why (timeout, closed, not JSON). */
int iwc_agent_call(iwc_agent *a, const char *json, iw_json_doc *doc, int timeout_ms,
                   const iwc_idle *idle);

/* Response helpers. */
bool iwc_resp_ok(const iw_json_doc *d);
const char *iwc_resp_error(const iw_json_doc *d);

/* hello: fill a->caps. */
int iwc_agent_hello(iwc_agent *a, int timeout_ms);

/* A request built with the shared JSON writer into memory. */
typedef struct iwc_req {
    iw_jw j;
    FILE *f;
    char *buf;
    size_t len;
} iwc_req;
int iwc_req_begin(iwc_req *r, const char *op); /* opens the object, writes "op" */
const char *iwc_req_end(iwc_req *r);           /* closes it; text valid until free */
void iwc_req_free(iwc_req *r);

#endif
