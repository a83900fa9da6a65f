/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Agent protocol request parser, docs/agent-protocol.md (iw_agent_parse,
 * reference-stack/agent/iw_agent.c over util/iw_json.c).
 *
 * Input: one request line, without its newline (any octets: the agent reads
 * it from an untrusted runner connection).
 * Invariants:
 *  - no crash, over-read or leak, with iw_agent_req_free after every call,
 *    successful or not (the header's contract);
 *  - the line is parsed as its length says: it sits in an exact-size block
 *    with no terminating NUL;
 *  - parsing is deterministic: a second parse gives the same result, and
 *    with a short error buffer the message is a NUL-terminated prefix that
 *    stays inside the buffer;
 *  - a failure always says why (non-empty message);
 *  - on success every field is in the range docs/agent-protocol.md and
 *    iw_agent.h document for its op, and fields the op does not take, or
 *    that the line leaves out, keep their defaults (whether a member is
 *    present is asked of the same JSON reader, so escapes cannot fool it). */
#include "iw_agent.h"
#include "iw_json.h"

#include "fuzz.h"

#define ERR_LEN 256

static void check_mpa(const iw_agent_mpa *m, bool parsed) {
    if (!parsed) {
        /* Only listen and connect read an "mpa" object. */
        FUZZ_CHECK(m->rev == -1 && m->markers == -1 && m->crc == -1 && m->p2p == -1);
        FUZZ_CHECK(m->rtr == -1 && m->ird == -1 && m->ord == -1 && !m->reject);
        FUZZ_CHECK(m->private_data == NULL && m->private_data_len == 0);
        return;
    }
    FUZZ_CHECK(m->rev == -1 || m->rev == 1 || m->rev == 2);
    FUZZ_CHECK(m->markers >= -1 && m->markers <= 1);
    FUZZ_CHECK(m->crc >= -1 && m->crc <= 1);
    FUZZ_CHECK(m->p2p >= -1 && m->p2p <= 1);
    FUZZ_CHECK(m->rtr == -1 || m->rtr == 1 || m->rtr == 2 || m->rtr == 4);
    FUZZ_CHECK(m->ird >= -1 && m->ird <= 0x3FFF);
    FUZZ_CHECK(m->ord >= -1 && m->ord <= 0x3FFF);
    /* 512 octets of Private Data minus the RFC 6581 enhanced data. */
    FUZZ_CHECK(m->private_data_len <= 508);
    FUZZ_CHECK(m->private_data_len == 0 || m->private_data != NULL);
}

/* post_send's optional numbers: absent from the line means 0. */
static void check_absent(const iw_agent_req *r, const char *line, size_t len) {
    iw_json_doc d;
    FUZZ_CHECK(iw_json_parse(&d, line, len) == 0); /* iw_agent_parse accepted it */
    const iw_json *o = &d.nodes[0];
    const struct {
        const char *key;
        uint64_t v;
    } f[] = {{"inv_stag", r->inv_stag},
             {"remote_stag", r->remote_stag},
             {"remote_to", r->remote_to},
             {"len", r->len},
             {"add", r->add},
             {"swap", r->swap},
             {"compare", r->compare},
             {"add_mask", r->add_mask},
             {"swap_mask", r->swap_mask},
             {"compare_mask", r->compare_mask}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (!iw_json_get(&d, o, f[i].key)) {
            if (f[i].v)
                fprintf(stderr, "post_send: '%s' absent but %llu\n", f[i].key,
                        (unsigned long long)f[i].v);
            FUZZ_CHECK(f[i].v == 0);
        }
    if (!iw_json_get(&d, o, "stag") && !iw_json_get(&d, o, "sink_stag"))
        FUZZ_CHECK(!r->has_local && r->stag == 0 && r->to == 0);
    iw_json_free(&d);
}

static void check_req(const iw_agent_req *r) {
    FUZZ_CHECK(r->op > IW_AGENT_NONE && r->op <= IW_AGENT_GUARD);
    FUZZ_CHECK(strcmp(iw_agent_op_name(r->op), "?") != 0);
    bool listen = r->op == IW_AGENT_LISTEN || r->op == IW_AGENT_CONNECT;
    check_mpa(&r->mpa, listen);
    FUZZ_CHECK(memchr(r->host, 0, sizeof r->host) != NULL);
    if (!listen)
        FUZZ_CHECK(r->host[0] == 0 && r->port == 0);
    /* data_hex is decoded for write_mr and post_send only. */
    FUZZ_CHECK(r->data_len == 0 || r->data != NULL);
    if (r->op != IW_AGENT_WRITE_MR && r->op != IW_AGENT_POST_SEND)
        FUZZ_CHECK(!r->has_data && r->data == NULL && r->data_len == 0);
    FUZZ_CHECK(r->has_data || r->data_len == 0);
    FUZZ_CHECK(r->data_len <= IW_AGENT_DATA_MAX);
    if (r->op != IW_AGENT_POST_SEND)
        FUZZ_CHECK(r->kind == IW_AGENT_KIND_NONE);
    if (r->op != IW_AGENT_REG_MR)
        FUZZ_CHECK(r->access == 0 && r->fill == -1 && r->pd_index == 0);
    if (r->op != IW_AGENT_POLL)
        FUZZ_CHECK(r->timeout_ms == 0);

    switch (r->op) {
    case IW_AGENT_REG_MR:
        FUZZ_CHECK(r->len <= IW_AGENT_MR_MAX);
        FUZZ_CHECK((r->access & ~0xFu) == 0);
        FUZZ_CHECK(r->fill >= -1 && r->fill <= 255);
        FUZZ_CHECK(r->pd_index <= 1);
        break;
    case IW_AGENT_READ_MR:
        FUZZ_CHECK(r->offset <= IW_AGENT_MR_MAX && r->len <= IW_AGENT_DATA_MAX);
        break;
    case IW_AGENT_WRITE_MR:
        FUZZ_CHECK(r->offset <= IW_AGENT_MR_MAX && r->has_data);
        break;
    case IW_AGENT_POST_RECV:
        FUZZ_CHECK(r->len <= IW_AGENT_DATA_MAX && r->count <= 4096);
        break;
    case IW_AGENT_POLL:
        FUZZ_CHECK(r->timeout_ms >= 0 && r->timeout_ms <= 600000);
        break;
    case IW_AGENT_POST_SEND: {
        FUZZ_CHECK(r->kind > IW_AGENT_KIND_NONE && r->kind <= IW_AGENT_KIND_IMMEDIATE_SE);
        FUZZ_CHECK(strcmp(iw_agent_kind_name(r->kind), "?") != 0);
        FUZZ_CHECK(r->len <= 0xFFFFFFFFull);
        bool imm = r->kind == IW_AGENT_KIND_IMMEDIATE || r->kind == IW_AGENT_KIND_IMMEDIATE_SE;
        if (imm)
            FUZZ_CHECK(r->has_data && r->data_len == 8);
        /* Send*, Write: data_hex or a local source. */
        if (r->kind <= IW_AGENT_KIND_WRITE)
            FUZZ_CHECK(r->has_data || r->has_local);
        if (r->kind == IW_AGENT_KIND_READ)
            FUZZ_CHECK(r->has_local);
        break;
    }
    default:
        break;
    }
}

/* Everything a parse produced, field by field, for the determinism check
 * (struct copies need not keep padding, so no memcmp of whole structs). */
static bool same_req(const iw_agent_req *a, const iw_agent_req *b) {
    const iw_agent_mpa *x = &a->mpa, *y = &b->mpa;
    bool mpa = x->rev == y->rev && x->markers == y->markers && x->crc == y->crc &&
               x->p2p == y->p2p && x->rtr == y->rtr && x->ird == y->ird && x->ord == y->ord &&
               x->reject == y->reject && x->private_data_len == y->private_data_len &&
               (!x->private_data_len ||
                memcmp(x->private_data, y->private_data, x->private_data_len) == 0);
    return mpa && a->op == b->op && strcmp(a->host, b->host) == 0 && a->port == b->port &&
           a->len == b->len && a->access == b->access && a->fill == b->fill &&
           a->pd_index == b->pd_index && a->stag == b->stag && a->offset == b->offset &&
           a->data_len == b->data_len &&
           (!a->data_len || memcmp(a->data, b->data, a->data_len) == 0) &&
           a->has_data == b->has_data && a->count == b->count && a->kind == b->kind &&
           a->inv_stag == b->inv_stag && a->to == b->to && a->has_local == b->has_local &&
           a->remote_stag == b->remote_stag && a->remote_to == b->remote_to && a->add == b->add &&
           a->swap == b->swap && a->compare == b->compare && a->add_mask == b->add_mask &&
           a->swap_mask == b->swap_mask && a->compare_mask == b->compare_mask &&
           a->timeout_ms == b->timeout_ms;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *line = (const char *)data; /* exact-size block, not NUL-terminated */
    iw_agent_req a, b;
    char err[ERR_LEN];
    memset(err, 0, sizeof err);
    int rc = iw_agent_parse(&a, line, size, err, sizeof err);
    FUZZ_CHECK(rc == 0 || rc == -1);
    if (rc == 0) {
        check_req(&a);
        if (a.op == IW_AGENT_POST_SEND)
            check_absent(&a, line, size);
    } else {
        FUZZ_CHECK(err[0] != 0 && memchr(err, 0, sizeof err) != NULL);
    }

    /* Again, with an error buffer of 1..16 octets inside a larger one:
     * the message must be a prefix of the first and stay inside. */
    char small[32];
    size_t el = 1 + size % 16;
    memset(small, 0x5A, sizeof small);
    int rc2 = iw_agent_parse(&b, line, size, small, el);
    FUZZ_CHECK(rc2 == rc);
    FUZZ_CHECK(same_req(&a, &b));
    for (size_t i = el; i < sizeof small; i++)
        FUZZ_CHECK(small[i] == 0x5A);
    if (rc) {
        FUZZ_CHECK(memchr(small, 0, el) != NULL);
        FUZZ_CHECK(strncmp(small, err, strlen(small)) == 0);
    }
    iw_agent_req_free(&a);
    iw_agent_req_free(&b);
    FUZZ_CHECK(a.data == NULL && a.mpa.private_data == NULL);
    return 0;
}
