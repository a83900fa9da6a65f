/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The IUT agent protocol, version 1 (docs/agent-protocol.md): one JSON
 * request per line, one JSON response per line. This module only turns a
 * request line into a checked, typed request; iwarp-target executes it.
 * Every malformed line becomes an error message, never a crash. */
#ifndef IW_AGENT_H
#define IW_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IW_AGENT_VERSION 1
#define IW_AGENT_LINE_MAX (4u << 20) /* longest request line accepted */
#define IW_AGENT_DATA_MAX (1u << 20) /* largest data_hex payload */
#define IW_AGENT_MR_MAX (64u << 20)  /* largest region */

#define IW_AGENT_OP_LIST(X)                                                                        \
    X(HELLO, "hello")                                                                              \
    X(RESET, "reset")                                                                              \
    X(LISTEN, "listen")                                                                            \
    X(CONNECT, "connect")                                                                          \
    X(REG_MR, "reg_mr")                                                                            \
    X(DEREG_MR, "dereg_mr")                                                                        \
    X(INVALIDATE, "invalidate")                                                                    \
    X(READ_MR, "read_mr")                                                                          \
    X(WRITE_MR, "write_mr")                                                                        \
    X(POST_RECV, "post_recv")                                                                      \
    X(POST_SEND, "post_send")                                                                      \
    X(POLL, "poll")                                                                                \
    X(CLOSE, "close")                                                                              \
    X(GUARD, "guard") /* extension: are the guard octets around a region intact? */

typedef enum iw_agent_op {
    IW_AGENT_NONE = 0,
#define IW_X_(name, str) IW_AGENT_##name,
    IW_AGENT_OP_LIST(IW_X_)
#undef IW_X_
} iw_agent_op;

#define IW_AGENT_SEND_LIST(X)                                                                      \
    X(SEND, "send")                                                                                \
    X(SEND_SE, "send_se")                                                                          \
    X(SEND_INV, "send_inv")                                                                        \
    X(SEND_SE_INV, "send_se_inv")                                                                  \
    X(WRITE, "write")                                                                              \
    X(READ, "read")                                                                                \
    X(FETCH_ADD, "fetch_add")                                                                      \
    X(CMP_SWAP, "cmp_swap")                                                                        \
    X(IMMEDIATE, "immediate")                                                                      \
    X(IMMEDIATE_SE, "immediate_se")

typedef enum iw_agent_kind {
    IW_AGENT_KIND_NONE = 0,
#define IW_X_(name, str) IW_AGENT_KIND_##name,
    IW_AGENT_SEND_LIST(IW_X_)
#undef IW_X_
} iw_agent_kind;

/* Access rights named in reg_mr. */
#define IW_AGENT_ACC_LOCAL_WRITE 0x1u
#define IW_AGENT_ACC_REMOTE_READ 0x2u
#define IW_AGENT_ACC_REMOTE_WRITE 0x4u
#define IW_AGENT_ACC_REMOTE_ATOMIC 0x8u

/* "mpa" object of listen/connect; -1 / absent means the agent's default. */
typedef struct iw_agent_mpa {
    int rev;     /* 1, 2 or -1 */
    int markers; /* 0, 1 or -1 */
    int crc;
    int p2p;
    int rtr;            /* bit set of 1=send 2=write 4=read, or -1 */
    int ird, ord;       /* 0..0x3FFF or -1 */
    bool reject;        /* extension: answer the Request with R=1 */
    int64_t timeout_ms; /* extension: MPA startup timeout, -1: the agent's default */
    uint8_t *private_data;
    size_t private_data_len;
} iw_agent_mpa;

/* reset's "transport" (extension "transport.sctp"): what the session's
 * listen and connect use, MPA over TCP or DDP over SCTP (RFC 5043). */
typedef enum iw_agent_transport { IW_AGENT_TCP = 0, IW_AGENT_SCTP } iw_agent_transport;

typedef struct iw_agent_req {
    iw_agent_op op;
    iw_agent_transport transport;
    char host[64];
    uint16_t port;
    iw_agent_mpa mpa;
    uint64_t len;
    unsigned access;
    int fill;          /* -1: zeroed */
    unsigned pd_index; /* extension: 0 = the connection's PD, 1 = a second PD */
    uint32_t stag;
    uint64_t offset;
    uint8_t *data; /* data_hex */
    size_t data_len;
    bool has_data;
    uint32_t count;
    iw_agent_kind kind;
    uint32_t inv_stag;
    uint64_t to;
    bool has_local; /* stag + to (+ len) given as source / sink */
    uint32_t remote_stag;
    uint64_t remote_to;
    uint64_t add, swap, compare;
    uint64_t add_mask, swap_mask, compare_mask;
    int64_t timeout_ms;
} iw_agent_req;

/* Parse one request line (without its newline). Returns 0, or -1 with a
 * human-readable reason in err. Free with iw_agent_req_free either way. */
int iw_agent_parse(iw_agent_req *req, const char *line, size_t len, char *err, size_t errlen);
void iw_agent_req_free(iw_agent_req *req);
const char *iw_agent_op_name(iw_agent_op op);
const char *iw_agent_kind_name(iw_agent_kind k);

#endif
