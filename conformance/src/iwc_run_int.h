/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The runner's internals, shared by its modules (not installed, not for
 * tools): the state of one case (run), and what each module offers the
 * others. iwc_run.c drives a case (agent, sockets, setup, steps);
 * iwc_send.c sends (frames, MPA startup, the RTR); iwc_peer.c answers the
 * IUT as a correct peer would; iwc_model.c keeps the regions and the
 * placement model; iwc_expect.c judges the expectations. */
#ifndef IWC_RUN_INT_H
#define IWC_RUN_INT_H

#include "iw_json.h"
#include "iwc_run.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <iwarp/iwarp.h>

#include "iwc_sctp.h"
#include "iwc_wire.h"

#define PEER_STAG_BASE 0x0C0F0000u /* STags of the runner's own regions */
#define PEER_TO_BASE 0x00007A0000000000ull
#define SETTLE_MS 20 /* quiet time before the final checks */
#define QUIET_MS 250 /* how long "nothing after the Terminate" is watched without a FIN */
#define EMSS 1460    /* our segmentation: MULPDU for this EMSS (RFC 5044 §4.5) */
/* Over SCTP our DDP segments are no longer than every receiver must take:
 * RFC 5043 §9's least maximum (a 516-octet chunk less its DDP-SSN). */
#define SCTP_SEG IW_SCTP_MAX_SEG_MIN
#define SCTP_WINDOW 64 /* the IUT's chunks held until the DDP-SSNs before them come */

/* ---- run state ---- */

typedef struct ev_entry {
    const iw_json_doc *doc;
    const iw_json *node;
    bool consumed;
} ev_entry;

/* FPDUs one case may send: the runner keeps each (its octets, the
 * model's placement), a few hundred octets apiece, so a tiny seg= on a
 * large message stays at tens of MiB instead of gigabytes. */
#define IWC_FPDUS_MAX 262144u

typedef struct sent_frame {
    int line;
    uint8_t kind;   /* iwc_send_kind; 0 for the runner's automatic answers */
    bool fpdu;      /* false: an MPA frame */
    uint8_t *ulpdu; /* the DDP segment as framed */
    size_t ulpdu_len;
    int region; /* IUT region this segment places into (-1 none) */
    uint64_t roff;
    size_t rlen;
    size_t pay_off; /* payload offset in ulpdu */
    bool rejected;
} sent_frame;

typedef struct model_op {
    int region;
    uint64_t off;
    size_t len;
    uint8_t *bytes;
    int frame; /* sent frame that placed it, or -1 */
} model_op;

enum { RXF_RR = 1, RXF_RR_BAD, RXF_FPDU, RXF_CTRL /* SCTP Session Control */ };

typedef struct rx_frame {
    uint8_t type;
    uint64_t t_us;
    uint64_t off;
    size_t wire_len;
    iw_mpa_rr rr;
    uint8_t pd[IW_MPA_PD_MAX];
    iw_verdict verdict; /* MPA: the frame's own verdict (CRC, marker, key, ...) */
    uint8_t *ulpdu;
    uint16_t ulpdu_len;
    iw_rdmap_msg msg;
    iw_verdict rverdict; /* iw_rdmap_decode */
    bool consumed;
    iw_sctp_ctrl ctrl; /* RXF_CTRL; its Private Data in pd */
} rx_frame;

typedef struct sctp_held { /* one of the IUT's chunks ahead of its DDP-SSN order */
    uint16_t ssn;
    uint32_t ppid;
    uint8_t *p;
    size_t n;
} sctp_held;

typedef struct peer_msg {
    uint8_t opcode;
    uint32_t msn;
    iwc_buf data;
    bool done, consumed, rtr;
    uint32_t inv;
    bool has_imm;
    uint8_t imm[IW_RDMAP_IMM_LEN];
} peer_msg;

typedef struct region_rt {
    bool peer, gone;
    uint32_t stag;
    uint64_t to, len;
    uint8_t *mem; /* peer: the memory; IUT: the initial content */
} region_rt;

typedef struct run {
    iwc_env *env;
    const iwc_case *c;
    iwc_result *res;
    int timeout_ms;
    int fd, lfd;
    bool eof, rst, tx_dead, we_shut;
    /* MPA */
    iw_mpa_rr mine;
    uint8_t mine_pd[IW_MPA_PD_MAX];
    bool mine_sent, theirs_got, rejected;
    iw_mpa_rr theirs;
    /* our direction */
    bool tx_full;
    iwc_tx tx;
    iwc_buf held;
    uint32_t split[IWC_LIST_MAX];
    int nsplit;
    bool any_fpdu_sent;
    /* their direction */
    iwc_buf rx_rr;
    bool rx_full, rx_lost;
    iw_deframer *df;
    uint64_t rx_bytes;
    /* records */
    sent_frame *sent;
    int nsent, capsent;
    model_op *ops;
    int nops, capops;
    rx_frame *rx;
    int nrx, caprx;
    peer_msg *pm;
    int npm, cappm;
    ev_entry *ev;
    int nev, capev;
    iw_json_doc **docs;
    int ndocs, capdocs;
    region_rt reg[IWC_REGIONS_MAX];
    int term_idx;       /* first Terminate from the IUT, or -1 */
    bool term_judged;   /* an expect terminate looked at it */
    iwc_outcome chosen; /* the outcome the last expect terminate saw (if= steps) */
    bool has_chosen;
    bool rule4_reported;
    bool reject_startup; /* skipped IUT initiator: end its MPA startup with R=1 */
    int rx_mark;         /* rx frames when the last send step went out */
    uint64_t rx_bytes_mark;
    bool recv_posted;
    bool abort_steps;
    int step_seed;
    int want_op; /* expect fpdu: the opcode being waited for */
    uint64_t t0;
    size_t held_mark; /* where the current send step's octets start in held */
    bool sent_term;   /* the steps sent a Terminate: nothing after it may land */
    /* DDP over SCTP (env->sctp): the association stands for fd, and held
     * keeps whole messages (run_sctp_queue) instead of octets. */
    iwc_sctp *sctp;
    uint16_t ssn_tx, ssn_rx; /* the next DDP-SSN each way (RFC 5043 §5.2.1) */
    sctp_held *ahead;
    int nahead, capahead;
} run;

/* ---- iwc_run.c: messages, capture, agent, sockets ---- */

void run_trace(run *r, int level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void run_note(run *r, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
bool run_term_events_seen(run *r, int line, const char *what);
void run_fail(run *r, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void run_error(run *r, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
char *run_triple_str(uint16_t t, char *buf, size_t n);
/* Room for one more item in a growing array (NULL when out of memory). */
void *run_grow(void *p, int *cap, int n, size_t item);
#define PUSH(arr, n, cap)                                                                          \
    ((arr = run_grow(arr, &cap, n, sizeof *arr)) ? memset(&arr[n++], 0, sizeof *arr) : NULL)
void run_doc_free(iw_json_doc *d);
iw_json_doc *run_agent_ok(run *r, int line, const char *json, const char *what);
void run_poll_events(run *r, int wait_ms);
const char *run_ev_type(const ev_entry *e);
void run_svc(run *r, int wait_ms);
void run_tx_write(run *r, const uint8_t *p, size_t n, const uint32_t *split, int nsplit);
void run_flush_held(run *r);
void run_cap_add(run *r, int dir, int kind, const uint8_t *p, size_t n);

/* ---- iwc_run_sctp.c: DDP over SCTP (RFC 5043) ---- */

/* The association: the runner connects to port, or listens on its local
 * address (*port: where) and waits for the IUT. 0, or -1 (recorded). */
int run_sctp_connect(run *r, uint16_t port);
int run_sctp_listen(run *r, uint16_t *port);
int run_sctp_accept(run *r);
void run_sctp_svc(run *r, int wait_ms);
/* One message into held (flushed by run_flush_held). */
void run_sctp_queue(run *r, uint32_t ppid, uint16_t sid, bool ordered, const uint8_t *p, size_t n);
void run_sctp_flush(run *r);
/* Our DDP-SSN for the next chunk: ssn when given (the counter moves past
 * it), else the counter's. */
uint16_t run_sctp_ssn(run *r, const uint16_t *ssn);
/* A startup frame sent as the Session Control message it stands for. */
void run_sctp_send_rr(run *r, const iw_mpa_rr *rr);
void run_sctp_step_ctrl(run *r, const iwc_step *s);
void run_sctp_step_chunk(run *r, const iwc_step *s);
void run_sctp_exp_ctrl(run *r, const iwc_step *s);
void run_sctp_final(run *r);
void run_sctp_free(run *r);

/* ---- iwc_model.c: regions, the placement model, expressions and data ---- */

int run_region_find_peer(run *r, uint32_t stag, uint64_t to, uint64_t len);
int run_region_find_iut(run *r, uint32_t stag, uint64_t to, uint64_t len);
void run_model_add(run *r, int region, uint64_t off, const uint8_t *p, size_t n, int frame);
uint8_t *run_model_build_mask(run *r, int region, uint8_t **care);
bool run_eval(run *r, int line, const iwc_expr *e, uint64_t *out);
bool run_arg_num(run *r, const iwc_step *s, const char *key, uint64_t *out);
uint64_t run_arg_num_or(run *r, const iwc_step *s, const char *key, uint64_t def);
uint8_t *run_data_make(run *r, int line, const iwc_data *d, uint64_t len, size_t *n);

/* ---- iwc_peer.c: the receive side, answering as a correct peer ---- */

uint64_t run_rd64(const uint8_t *p);
void run_rx_process(run *r, const uint8_t *p, size_t n);
/* One received DDP segment (an FPDU's ULPDU, or a DDP Segment Chunk's). */
void run_rx_segment(run *r, const uint8_t *seg, size_t n, uint64_t off, size_t wire_len,
                    const iw_verdict *v);
void run_rx_startup(run *r, const iw_mpa_rr *rr, size_t len);

/* ---- iwc_send.c: send steps, MPA startup and the RTR ---- */

void run_send_answer(run *r, iw_rdmap_msg *m, const uint8_t *pay, size_t paylen);
/* Payload octets per DDP segment we send after a header of hl octets. */
size_t run_seg_room(const run *r, size_t hl);
void run_record_mine(run *r, const iw_mpa_rr *rr);
/* A step's frame mutations (iwc_wire.h), SCTP's ssn= ppid= stream=
 * ordered= among them; false when the case was aborted. */
bool run_mut_from(run *r, const iwc_step *s, iwc_mut *mu);
/* A step's p2p= ird= ord= rtr= over the enhanced data (RFC 6581 §9, §7). */
void run_v2_args(run *r, const iwc_step *s, iw_mpa_v2 *v2);
void run_mine_from_cfg(run *r, iw_mpa_rr *rr, iw_mpa_rr_type type);
void run_ensure_recv(run *r, int line);
void run_step_send_fpdu(run *r, const iwc_step *s);
void run_step_send_rr(run *r, const iwc_step *s);
bool run_wait_for(run *r, bool (*cond)(run *), int ms);
bool run_have_theirs(run *r);
void run_reply_settle(run *r);
void run_startup_auto(run *r);

/* ---- iwc_expect.c: expectations ---- */

const ev_entry *run_find_event(run *r, const char *type,
                               bool (*match)(run *, const ev_entry *, const void *),
                               const void *ctx, int wait_ms);
void run_exp_terminate(run *r, const iwc_step *s);
void run_exp_closed(run *r, const iwc_step *s);
void run_exp_mpa(run *r, const iwc_step *s);
void run_exp_fpdu(run *r, const iwc_step *s);
void run_exp_event(run *r, const iwc_step *s);
void run_exp_no_event(run *r, const iwc_step *s);
void run_check_region(run *r, int line, int ri, uint64_t off, uint64_t len);
void run_exp_region(run *r, const iwc_step *s);
void run_exp_peer_region(run *r, const iwc_step *s);
void run_exp_peer_u64(run *r, const iwc_step *s);
void run_check_guard(run *r, int line, int ri);
void run_exp_quiet(run *r, const iwc_step *s);
void run_exp_peer_recv(run *r, const iwc_step *s);

#endif
