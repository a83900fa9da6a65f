/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Agent protocol request parsing (docs/agent-protocol.md). */
#include "iw_agent.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iw_json.h"

static const char *const agent_ops[] = {NULL,
#define IW_X_(name, str) str,
                                        IW_AGENT_OP_LIST(IW_X_)
#undef IW_X_
};

static const char *const agent_kinds[] = {NULL,
#define IW_X_(name, str) str,
                                          IW_AGENT_SEND_LIST(IW_X_)
#undef IW_X_
};

const char *iw_agent_op_name(iw_agent_op op) {
    return (unsigned)op < sizeof agent_ops / sizeof *agent_ops && agent_ops[op] ? agent_ops[op]
                                                                                : "?";
}

const char *iw_agent_kind_name(iw_agent_kind k) {
    return (unsigned)k < sizeof agent_kinds / sizeof *agent_kinds && agent_kinds[k] ? agent_kinds[k]
                                                                                    : "?";
}

void iw_agent_req_free(iw_agent_req *r) {
    free(r->data);
    free(r->mpa.private_data);
    r->data = NULL;
    r->mpa.private_data = NULL;
}

static int agent_err(char *err, size_t errlen, const char *msg) {
    snprintf(err, errlen, "%s", msg);
    return -1;
}

/* Optional tri-state boolean inside the mpa object. */
static int agent_tri(const iw_json_doc *d, const iw_json *o, const char *k, int *out, char *err,
                     size_t errlen) {
    if (!iw_json_get(d, o, k))
        return 0;
    bool b = false;
    if (iw_json_bool(d, o, k, &b, err, errlen) < 0)
        return -1;
    *out = b;
    return 0;
}

static int agent_mpa(const iw_json_doc *d, const iw_json *req, iw_agent_mpa *m, char *err,
                     size_t errlen) {
    m->rev = m->markers = m->crc = m->p2p = m->rtr = m->ird = m->ord = -1;
    m->timeout_ms = -1;
    const iw_json *o = iw_json_get(d, req, "mpa");
    if (!o)
        return 0;
    if (o->type != IW_JSON_OBJ)
        return agent_err(err, errlen, "field 'mpa' must be an object");
    uint64_t v = 0;
    if (iw_json_get(d, o, "rev")) {
        if (iw_json_u64(d, o, "rev", true, 2, &v, err, errlen) < 0 || v < 1)
            return agent_err(err, errlen, "mpa.rev must be 1 or 2");
        m->rev = (int)v;
    }
    if (agent_tri(d, o, "markers", &m->markers, err, errlen) < 0 ||
        agent_tri(d, o, "crc", &m->crc, err, errlen) < 0 ||
        agent_tri(d, o, "p2p", &m->p2p, err, errlen) < 0 ||
        iw_json_bool(d, o, "reject", &m->reject, err, errlen) < 0)
        return -1;
    if (iw_json_get(d, o, "ird")) {
        if (iw_json_u64(d, o, "ird", true, 0x3FFF, &v, err, errlen) < 0)
            return -1;
        m->ird = (int)v;
    }
    if (iw_json_get(d, o, "ord")) {
        if (iw_json_u64(d, o, "ord", true, 0x3FFF, &v, err, errlen) < 0)
            return -1;
        m->ord = (int)v;
    }
    if (iw_json_get(d, o, "timeout_ms")) {
        if (iw_json_u64(d, o, "timeout_ms", true, 600000, &v, err, errlen) < 0)
            return -1;
        m->timeout_ms = (int64_t)v;
    }
    const char *rtr = NULL;
    if (iw_json_str(d, o, "rtr", false, &rtr, err, errlen) < 0)
        return -1;
    if (rtr) {
        if (!strcmp(rtr, "send"))
            m->rtr = 1;
        else if (!strcmp(rtr, "write"))
            m->rtr = 2;
        else if (!strcmp(rtr, "read"))
            m->rtr = 4;
        else
            return agent_err(err, errlen, "mpa.rtr must be \"send\", \"write\" or \"read\"");
    }
    /* 512 minus the 4 octets of RFC 6581 enhanced data. */
    return iw_json_hex(d, o, "private_data_hex", false, 508, &m->private_data, &m->private_data_len,
                       err, errlen);
}

static int agent_access(const iw_json_doc *d, const iw_json *req, unsigned *out, char *err,
                        size_t errlen) {
    const iw_json *a = iw_json_get(d, req, "access");
    *out = 0;
    if (!a)
        return 0;
    if (a->type != IW_JSON_ARR)
        return agent_err(err, errlen, "field 'access' must be an array of names");
    for (const iw_json *e = iw_json_first(d, a); e; e = iw_json_next(d, e)) {
        if (e->type != IW_JSON_STR)
            return agent_err(err, errlen, "field 'access' must be an array of names");
        if (!strcmp(e->str, "local_write"))
            *out |= IW_AGENT_ACC_LOCAL_WRITE;
        else if (!strcmp(e->str, "remote_read"))
            *out |= IW_AGENT_ACC_REMOTE_READ;
        else if (!strcmp(e->str, "remote_write"))
            *out |= IW_AGENT_ACC_REMOTE_WRITE;
        else if (!strcmp(e->str, "remote_atomic"))
            *out |= IW_AGENT_ACC_REMOTE_ATOMIC;
        else {
            snprintf(err, errlen, "unknown access right '%.40s'", e->str);
            return -1;
        }
    }
    return 0;
}

#define U32MAX 0xFFFFFFFFull
#define U64MAX 0xFFFFFFFFFFFFFFFFull

static int agent_post_send(const iw_json_doc *d, const iw_json *o, iw_agent_req *r, char *err,
                           size_t el) {
    const char *kind = NULL;
    if (iw_json_str(d, o, "kind", true, &kind, err, el) < 0)
        return -1;
    for (unsigned k = 1; k < sizeof agent_kinds / sizeof *agent_kinds; k++)
        if (!strcmp(kind, agent_kinds[k]))
            r->kind = (iw_agent_kind)k;
    if (!r->kind) {
        snprintf(err, el, "unknown post_send kind '%.40s'", kind);
        return -1;
    }
    uint64_t v = 0; /* absent optional fields read as 0 */
    bool inv = r->kind == IW_AGENT_KIND_SEND_INV || r->kind == IW_AGENT_KIND_SEND_SE_INV;
    if (iw_json_u64(d, o, "inv_stag", inv, U32MAX, &v, err, el) < 0)
        return -1;
    r->inv_stag = (uint32_t)v;
    bool remote = r->kind == IW_AGENT_KIND_WRITE || r->kind == IW_AGENT_KIND_READ ||
                  r->kind == IW_AGENT_KIND_FETCH_ADD || r->kind == IW_AGENT_KIND_CMP_SWAP;
    v = 0;
    if (iw_json_u64(d, o, "remote_stag", remote, U32MAX, &v, err, el) < 0)
        return -1;
    r->remote_stag = (uint32_t)v;
    if (iw_json_u64(d, o, "remote_to", remote, U64MAX, &r->remote_to, err, el) < 0)
        return -1;
    /* Local source/sink: stag + to (the contract's "sink stag/to" for read
     * is accepted under either name). */
    const char *sk = iw_json_get(d, o, "sink_stag") ? "sink_stag" : "stag";
    const char *tk = iw_json_get(d, o, "sink_to") ? "sink_to" : "to";
    if (iw_json_get(d, o, sk)) {
        v = 0;
        if (iw_json_u64(d, o, sk, true, U32MAX, &v, err, el) < 0 ||
            iw_json_u64(d, o, tk, true, U64MAX, &r->to, err, el) < 0)
            return -1;
        r->stag = (uint32_t)v;
        r->has_local = true;
    }
    if (r->kind == IW_AGENT_KIND_READ && !r->has_local)
        return agent_err(err, el, "read needs the sink 'stag' and 'to'");
    if (iw_json_u64(d, o, "len", false, U32MAX, &r->len, err, el) < 0 ||
        iw_json_u64(d, o, "add", false, U64MAX, &r->add, err, el) < 0 ||
        iw_json_u64(d, o, "swap", false, U64MAX, &r->swap, err, el) < 0 ||
        iw_json_u64(d, o, "compare", false, U64MAX, &r->compare, err, el) < 0 ||
        iw_json_u64(d, o, "add_mask", false, U64MAX, &r->add_mask, err, el) < 0 ||
        iw_json_u64(d, o, "swap_mask", false, U64MAX, &r->swap_mask, err, el) < 0 ||
        iw_json_u64(d, o, "compare_mask", false, U64MAX, &r->compare_mask, err, el) < 0)
        return -1;
    if (r->kind == IW_AGENT_KIND_CMP_SWAP &&
        (!iw_json_get(d, o, "compare") || !iw_json_get(d, o, "swap")))
        return agent_err(err, el, "cmp_swap needs 'compare' and 'swap'");
    if (r->kind == IW_AGENT_KIND_FETCH_ADD && !iw_json_get(d, o, "add"))
        return agent_err(err, el, "fetch_add needs 'add'");
    if (iw_json_hex(d, o, "data_hex", false, IW_AGENT_DATA_MAX, &r->data, &r->data_len, err, el) <
        0)
        return -1;
    r->has_data = iw_json_get(d, o, "data_hex") != NULL;
    bool imm = r->kind == IW_AGENT_KIND_IMMEDIATE || r->kind == IW_AGENT_KIND_IMMEDIATE_SE;
    if (imm && (!r->has_data || r->data_len != 8))
        return agent_err(err, el, "immediate needs data_hex of exactly 8 octets");
    bool carries = r->kind <= IW_AGENT_KIND_WRITE;
    if (carries && !r->has_data && !r->has_local)
        return agent_err(err, el, "needs 'data_hex' or a local 'stag' + 'to' + 'len' source");
    if (carries && r->has_local && !r->has_data && !iw_json_get(d, o, "len"))
        return agent_err(err, el, "a local source needs 'len'");
    if (r->kind == IW_AGENT_KIND_READ && !iw_json_get(d, o, "len"))
        return agent_err(err, el, "read needs 'len'");
    return 0;
}

static int agent_fields(const iw_json_doc *d, const iw_json *o, iw_agent_req *r, char *err,
                        size_t el) {
    uint64_t v = 0;
    switch (r->op) {
    case IW_AGENT_LISTEN:
    case IW_AGENT_CONNECT: {
        bool conn = r->op == IW_AGENT_CONNECT;
        if (iw_json_u64(d, o, "port", conn, 65535, &v, err, el) < 0)
            return -1;
        r->port = (uint16_t)v;
        const char *host = conn ? NULL : "127.0.0.1";
        if (iw_json_str(d, o, "host", conn, &host, err, el) < 0)
            return -1;
        if (strlen(host) >= sizeof r->host)
            return agent_err(err, el, "field 'host' is too long");
        strcpy(r->host, host);
        return agent_mpa(d, o, &r->mpa, err, el);
    }
    case IW_AGENT_REG_MR:
        if (iw_json_u64(d, o, "len", true, IW_AGENT_MR_MAX, &r->len, err, el) < 0 ||
            agent_access(d, o, &r->access, err, el) < 0)
            return -1;
        r->fill = -1;
        if (iw_json_get(d, o, "fill")) {
            if (iw_json_u64(d, o, "fill", true, 255, &v, err, el) < 0)
                return -1;
            r->fill = (int)v;
        }
        v = 0; /* absent: the connection's PD */
        if (iw_json_u64(d, o, "pd", false, 1, &v, err, el) < 0)
            return -1;
        r->pd_index = (unsigned)v;
        return 0;
    case IW_AGENT_DEREG_MR:
    case IW_AGENT_INVALIDATE:
    case IW_AGENT_GUARD:
        if (iw_json_u64(d, o, "stag", true, U32MAX, &v, err, el) < 0)
            return -1;
        r->stag = (uint32_t)v;
        return 0;
    case IW_AGENT_READ_MR:
    case IW_AGENT_WRITE_MR:
        if (iw_json_u64(d, o, "stag", true, U32MAX, &v, err, el) < 0 ||
            iw_json_u64(d, o, "offset", true, IW_AGENT_MR_MAX, &r->offset, err, el) < 0)
            return -1;
        r->stag = (uint32_t)v;
        if (r->op == IW_AGENT_READ_MR)
            return iw_json_u64(d, o, "len", true, IW_AGENT_DATA_MAX, &r->len, err, el);
        if (iw_json_hex(d, o, "data_hex", true, IW_AGENT_DATA_MAX, &r->data, &r->data_len, err,
                        el) < 0)
            return -1;
        r->has_data = true;
        return 0;
    case IW_AGENT_POST_RECV:
        r->count = 1;
        if (iw_json_u64(d, o, "len", true, IW_AGENT_DATA_MAX, &r->len, err, el) < 0 ||
            iw_json_u64(d, o, "count", false, 4096, &v, err, el) < 0)
            return -1;
        if (iw_json_get(d, o, "count"))
            r->count = (uint32_t)v;
        return 0;
    case IW_AGENT_POST_SEND:
        return agent_post_send(d, o, r, err, el);
    case IW_AGENT_RESET: {
        /* extension "transport.sctp": the session's transport (absent: tcp) */
        const char *tr = "tcp";
        if (iw_json_str(d, o, "transport", false, &tr, err, el) < 0)
            return -1;
        if (!strcmp(tr, "tcp"))
            r->transport = IW_AGENT_TCP;
        else if (!strcmp(tr, "sctp"))
            r->transport = IW_AGENT_SCTP;
        else
            return agent_err(err, el, "field 'transport' must be \"tcp\" or \"sctp\"");
        return 0;
    }
    case IW_AGENT_POLL:
        v = 0;
        if (iw_json_u64(d, o, "timeout_ms", false, 600000, &v, err, el) < 0)
            return -1;
        r->timeout_ms = (int64_t)v;
        return 0;
    default:
        return 0;
    }
}

int iw_agent_parse(iw_agent_req *r, const char *line, size_t len, char *err, size_t errlen) {
    memset(r, 0, sizeof *r);
    r->fill = -1;
    r->mpa.rev = r->mpa.markers = r->mpa.crc = r->mpa.p2p = r->mpa.rtr = -1;
    r->mpa.ird = r->mpa.ord = -1;
    r->mpa.timeout_ms = -1;
    if (len > IW_AGENT_LINE_MAX)
        return agent_err(err, errlen, "request line too long");
    iw_json_doc d;
    if (iw_json_parse(&d, line, len) < 0) {
        snprintf(err, errlen, "malformed JSON: %s", d.err);
        iw_json_free(&d);
        return -1;
    }
    int rc = -1;
    const iw_json *o = &d.nodes[0];
    const char *op = NULL;
    if (o->type != IW_JSON_OBJ) {
        agent_err(err, errlen, "a request must be a JSON object");
        goto out;
    }
    if (iw_json_str(&d, o, "op", true, &op, err, errlen) < 0)
        goto out;
    for (unsigned k = 1; k < sizeof agent_ops / sizeof *agent_ops; k++)
        if (!strcmp(op, agent_ops[k]))
            r->op = (iw_agent_op)k;
    if (!r->op) {
        snprintf(err, errlen, "unknown op '%.40s'", op);
        goto out;
    }
    rc = agent_fields(&d, o, r, err, errlen);
out:
    iw_json_free(&d);
    return rc;
}
