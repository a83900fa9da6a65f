/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Conformance case scripts: the data model and its parser.
 *
 * One case is one small text file (docs/conformance.md, "Case format"):
 * header lines (id, title, rfc, catches, ...), setup lines (iut, mpa, peer,
 * region, recv) and then steps in order (send, agent, expect, wait, close).
 * The parser is pure: text in, a checked iwc_case out, or an error naming the
 * line. No I/O, no global state; every limit is checked, since case files
 * are fuzzed. Expressions ($A.stag^1) and data specs (pat:3) are parsed here
 * and evaluated by the runner, which knows the STags. */
#ifndef IWC_CASE_H
#define IWC_CASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IWC_TEXT_MAX (256u << 10) /* largest case file */
#define IWC_LINE_MAX 2048
#define IWC_STEPS_MAX 128
#define IWC_ARGS_MAX 32
#define IWC_REGIONS_MAX 8
#define IWC_EXPR_MAX 6   /* terms in one expression */
#define IWC_HEX_MAX 4096 /* octets of hex: data in a case */
#define IWC_LIST_MAX 8   /* numbers in split=a,b,... */
#define IWC_NAME_MAX 16  /* region names */
#define IWC_RFC_MAX 8
#define IWC_CATCH_MAX 8
#define IWC_ALT_MAX 4   /* outcomes of one expect terminate (1/1/0|0/1/2|drop) */
#define IWC_ALLOW_MAX 8 /* allow: lines */

/* ---- expressions: numbers and region fields joined by + - ^ | & ---- */

typedef enum iwc_field { IWC_F_STAG = 1, IWC_F_TO, IWC_F_LEN, IWC_F_END } iwc_field;

typedef struct iwc_term {
    char op;        /* '+' (first term), '-', '^', '|', '&' */
    bool ref;       /* a region field, else num */
    uint8_t region; /* index into iwc_case.regions */
    uint8_t field;  /* iwc_field */
    uint64_t num;
} iwc_term;

typedef struct iwc_expr {
    uint8_t n;
    iwc_term t[IWC_EXPR_MAX];
} iwc_expr;

/* ---- data specs ---- */

typedef enum iwc_data_kind {
    IWC_DATA_NONE = 0,
    IWC_DATA_PAT,  /* pat:SEED - the runner's deterministic pattern */
    IWC_DATA_HEX,  /* hex:0011.. */
    IWC_DATA_FILL, /* fill:0xNN */
    IWC_DATA_REF   /* @NAME[+OFF] - the expected content of a region */
} iwc_data_kind;

typedef struct iwc_data {
    uint8_t kind;
    uint8_t byte;   /* pattern seed or fill octet */
    uint8_t region; /* IWC_DATA_REF */
    uint64_t off;
    uint8_t *hex; /* IWC_DATA_HEX, owned */
    size_t hexlen;
} iwc_data;

/* ---- arguments: key=value, key<=value, ... ---- */

typedef enum iwc_vtype {
    IWC_V_EXPR = 1,
    IWC_V_DATA,
    IWC_V_WORD, /* an identifier or quoted string */
    IWC_V_LIST  /* comma list of numbers (split=) */
} iwc_vtype;

typedef enum iwc_cmp { IWC_EQ = 0, IWC_NE, IWC_LE, IWC_GE } iwc_cmp;

typedef struct iwc_arg {
    char *key;
    uint8_t cmp;  /* iwc_cmp; only expect lines accept other than = */
    uint8_t type; /* iwc_vtype */
    iwc_expr e;
    iwc_data d;
    char *word;
    uint64_t list[IWC_LIST_MAX];
    uint8_t nlist;
} iwc_arg;

/* ---- outcomes: what an IUT may answer where the RFCs allow several ---- */

typedef enum iwc_outcome_kind {
    IWC_OUT_TERM = 0,  /* a Terminate with this triple */
    IWC_OUT_DROP,      /* no Terminate; the segment neither delivered nor placed
                          (RFC 5044 §8: an optimized MPA MAY silently drop) */
    IWC_OUT_UNCHECKED, /* no Terminate; an OPTIONAL check not made, the message
                          processed as if valid (RFC 5044 §8 code 3) */
    IWC_OUT_CLOSED     /* no Terminate; the IUT tore the connection down (RFC 5040
                          §6.2.1: "It is not always possible to send the Terminate") */
} iwc_outcome_kind;

typedef struct iwc_outcome {
    uint8_t kind;    /* iwc_outcome_kind */
    uint16_t triple; /* IWC_OUT_TERM */
} iwc_outcome;

/* "allow: OUTCOME RFC n §s: words": why the RFCs permit this outcome. */
typedef struct iwc_allow {
    iwc_outcome o;
    char *text;
} iwc_allow;

/* ---- steps ---- */

typedef enum iwc_step_kind {
    IWC_STEP_SEND = 1,
    IWC_STEP_AGENT,
    IWC_STEP_EXPECT,
    IWC_STEP_WAIT,
    IWC_STEP_CLOSE, /* runner half-closes its side (FIN) */
    IWC_STEP_ABORT  /* runner resets the TCP connection */
} iwc_step_kind;

/* What a send step puts on the wire. */
#define IWC_SEND_LIST(X)                                                                           \
    X(WRITE, "write")                                                                              \
    X(READ_REQ, "read-req")                                                                        \
    X(READ_RESP, "read-resp")                                                                      \
    X(SEND, "send")                                                                                \
    X(SEND_INV, "send-inv")                                                                        \
    X(SEND_SE, "send-se")                                                                          \
    X(SEND_SE_INV, "send-se-inv")                                                                  \
    X(TERM, "term")                                                                                \
    X(IMM, "imm")                                                                                  \
    X(IMM_SE, "imm-se")                                                                            \
    X(ATOMIC, "atomic")                                                                            \
    X(ATOMIC_RESP, "atomic-resp")                                                                  \
    X(MPA_REQUEST, "mpa-request")                                                                  \
    X(MPA_REPLY, "mpa-reply")                                                                      \
    X(CTRL, "ctrl")   /* SCTP: a DDP Stream Session Control message (RFC 5043 §5.2.3) */          \
    X(CHUNK, "chunk") /* SCTP: a DATA chunk payload as given */

typedef enum iwc_send_kind {
    IWC_SEND_NONE_ = 0,
#define IWC_X_(n, s) IWC_SEND_##n,
    IWC_SEND_LIST(IWC_X_)
#undef IWC_X_
} iwc_send_kind;

#define IWC_EXPECT_LIST(X)                                                                         \
    X(TERMINATE, "terminate")                                                                      \
    X(CLOSED, "closed")                                                                            \
    X(MPA_REPLY, "mpa-reply")                                                                      \
    X(MPA_REQUEST, "mpa-request")                                                                  \
    X(FPDU, "fpdu")                                                                                \
    X(EVENT, "event")                                                                              \
    X(NO_EVENT, "no-event")                                                                        \
    X(REGION, "region")                                                                            \
    X(PEER_REGION, "peer-region")                                                                  \
    X(PEER_U64, "peer-u64")                                                                        \
    X(GUARD, "guard")                                                                              \
    X(QUIET, "quiet")                                                                              \
    X(PEER_RECV, "peer-recv")                                                                      \
    X(CTRL, "ctrl") /* SCTP: the IUT sent a Session Control message */

typedef enum iwc_expect_kind {
    IWC_EXPECT_NONE_ = 0,
#define IWC_X_(n, s) IWC_EXPECT_##n,
    IWC_EXPECT_LIST(IWC_X_)
#undef IWC_X_
} iwc_expect_kind;

#define IWC_AGENT_LIST(X)                                                                          \
    X(INVALIDATE, "invalidate")                                                                    \
    X(DEREG_MR, "dereg_mr")                                                                        \
    X(WRITE_MR, "write_mr")                                                                        \
    X(POST_RECV, "post_recv")                                                                      \
    X(POST_SEND, "post_send")                                                                      \
    X(CLOSE, "close")

typedef enum iwc_agent_kind {
    IWC_AGENT_NONE_ = 0,
#define IWC_X_(n, s) IWC_AGENT_##n,
    IWC_AGENT_LIST(IWC_X_)
#undef IWC_X_
} iwc_agent_kind;

typedef struct iwc_step {
    uint8_t kind; /* iwc_step_kind */
    uint8_t sub;  /* iwc_send_kind / iwc_expect_kind / iwc_agent_kind */
    int line;
    bool may_fail;  /* agent?: the request may be refused */
    char *word;     /* positional word: region name, event type, opcode name */
    uint8_t region; /* word resolved to a region, when it names one */
    bool has_region;
    uint16_t triple; /* positional L/E/C (term; expect terminate: the first one) */
    bool has_triple;
    iwc_outcome alt[IWC_ALT_MAX]; /* expect terminate: every allowed outcome */
    uint8_t nalt;
    iwc_outcome only[IWC_ALT_MAX]; /* if=: run this expectation only after these outcomes */
    uint8_t nonly;
    iwc_arg *args;
    int nargs;
} iwc_step;

/* ---- setup ---- */

/* MPA parameters: for the IUT (agent listen/connect "mpa") and for the
 * runner's own Request/Reply. -1: not given. */
typedef struct iwc_mpa_cfg {
    int rev, markers, crc, p2p, ird, ord, reject, timeout_ms;
    int s, res, r; /* runner frame only: enhanced flag, Res bits, R bit */
    int rtr;       /* bit set: 1 send, 2 write, 4 read; -1 unset */
    int rtr_use;   /* runner as initiator: the RTR it sends (one bit) */
    uint8_t *pd;   /* private data (owned) */
    size_t pd_len;
    bool has_pd;
} iwc_mpa_cfg;

#define IWC_ACC_LOCAL_WRITE 0x1u
#define IWC_ACC_REMOTE_READ 0x2u
#define IWC_ACC_REMOTE_WRITE 0x4u
#define IWC_ACC_REMOTE_ATOMIC 0x8u

typedef struct iwc_region {
    char name[IWC_NAME_MAX];
    bool peer; /* the runner's own memory (peer-region), else the IUT's */
    uint64_t len;
    unsigned access; /* IWC_ACC_* (IUT regions) */
    int fill;        /* -1: zero */
    int pd;          /* 0 or 1 (agent extension reg_mr.pd) */
    int line;
} iwc_region;

typedef enum iwc_role { IWC_IUT_RESPONDER = 0, IWC_IUT_INITIATOR } iwc_role;

#define IWC_TAG_SLOW 0x1u

/* Agent capabilities a case needs (from hello). */
#define IWC_NEEDS_LIST(X)                                                                          \
    X(ATOMICS, "atomics")                                                                          \
    X(IMMEDIATE, "immediate")                                                                      \
    X(SEND_INV, "send_inv")                                                                        \
    X(MARKERS, "markers")                                                                          \
    X(REV1, "rev1")                                                                                \
    X(PD2, "pd2")                                                                                  \
    X(REJECT, "reject")                                                                            \
    X(GUARD, "guard")                                                                              \
    X(LOCAL_INV, "local_inv")

enum {
#define IWC_X_(n, s) IWC_NEEDS_BIT_##n,
    IWC_NEEDS_LIST(IWC_X_)
#undef IWC_X_
        IWC_NEEDS_COUNT_
};
#define IWC_NEEDS(n) (1u << IWC_NEEDS_BIT_##n)

typedef struct iwc_catch {
    char *spec;   /* fault spec for iwarp-target --fault */
    char *reason; /* substring the failure must contain; NULL: runner default */
} iwc_catch;

/* The transports a case runs over (derived from what it uses, narrowed by
 * "transport:"): MPA's own fields and scripted TCP segments exist only over
 * TCP, Session Control messages and DDP-SSNs only over SCTP. */
#define IWC_TR_TCP 0x1u
#define IWC_TR_SCTP 0x2u

typedef struct iwc_case {
    char *id, *title, *area;
    unsigned transports; /* IWC_TR_* */
    char *tr_why;        /* why only one: "line 12: crc= is MPA's", NULL for both */
    char *rfc[IWC_RFC_MAX];
    int nrfc;
    char *choice; /* non-NULL: the expected outcome is a choice the RFC leaves open */
    char *note;
    iwc_catch catches[IWC_CATCH_MAX];
    int ncatches;
    iwc_catch tolerates[IWC_CATCH_MAX]; /* faults that stay conformant: reason = outcome */
    iwc_outcome tolerates_o[IWC_CATCH_MAX];
    int ntolerates;
    iwc_allow allow[IWC_ALLOW_MAX];
    int nallow;
    unsigned tags, needs;
    int timeout_ms; /* 0: the runner's default */
    iwc_role role;
    bool startup_auto;  /* the runner does MPA startup itself (else: startup: tcp) */
    bool answer_manual; /* the runner leaves the IUT's Read/Atomic Requests to the steps */
    iwc_mpa_cfg iut_mpa, peer_mpa;
    iwc_region regions[IWC_REGIONS_MAX];
    int nregions;
    uint32_t recv_len, recv_count;
    iwc_step *steps;
    int nsteps;
} iwc_case;

/* Parse one case file. Returns 0, or -1 with err = "LINE: message" (LINE 0
 * for whole-file problems). out is always safe to pass to iwc_case_free. */
int iwc_case_parse(const char *text, size_t len, iwc_case *out, char *err, size_t errlen);
void iwc_case_free(iwc_case *c);

/* Lookups for the runner. */
const iwc_arg *iwc_step_arg(const iwc_step *s, const char *key);
const char *iwc_send_name(unsigned k);
const char *iwc_expect_name(unsigned k);
const char *iwc_agent_name(unsigned k);
const char *iwc_needs_name(unsigned bit);
/* Validate a fault spec item list for --fault (skip:L/E/C, miscode:L/E/C or
 * a named fault); true when every comma item is known. */
bool iwc_fault_spec_valid(const char *spec);
/* Parse "L/E/C" (hex fields, optional 0x) into a triple. */
bool iwc_parse_triple(const char *s, uint16_t *out);
/* True when the triple's layer and error type exist in RFC 5040 §4.8 /
 * RFC 6580 (layer 0 RDMAP, 1 DDP, 2 LLP). */
bool iwc_triple_registered(uint16_t t);
/* "Terminate 1/1/0", "silent drop", "check not made" into buf. */
const char *iwc_outcome_str(const iwc_outcome *o, char *buf, size_t n);
bool iwc_outcome_eq(const iwc_outcome *a, const iwc_outcome *b);
/* The allow: text for o, or NULL. */
const char *iwc_case_allow(const iwc_case *c, const iwc_outcome *o);

#endif
