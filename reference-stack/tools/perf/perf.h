/* iwarp-perf's internals, shared by its two protocols: iwarp-perf.c (its
 * own control protocol over Sends, the options, main) and perftest.c
 * (--perftest: perftest's -R exchange, docs/iwarp-perf.md). */
#ifndef PERF_H
#define PERF_H

#include <iwarp/verbs.h>

#include "perf_idle.h"
#include "pt_wire.h"

#define PROG "iwarp-perf"
#define PERF_VERSION "1.0"
#define PERF_PD_ID "iwarp-perf/1" /* MPA private data, both directions */
#define DEFAULT_PORT 18515
#define CTRL_LEN 64
#define CTRL_MAGIC 0x49575046u /* "IWPF" */
#define CTRL_RING 64           /* control Sends in flight */
#define INBOX 16
#define WR_CTRL (1ull << 63)
#define MAX_MSG (64u << 20)
#define SWEEP_LO 1 /* -a: 2^1 .. 2^23 octets, as perftest */
#define SWEEP_HI 23
#define AUTO_BYTES (1ull << 30) /* -n not given: at most this much per size */
#define RECV_MEM (256u << 20)   /* send test: memory for the server's receive slots */
#define CLIENT_RQ 16            /* control replies, and at most ~6 CREDITs in flight */
#define LAT_RQ 4                /* send_lat: one message in flight each way, plus control */
#define CTRL_RQ 16              /* write/read: control messages only, one request at a time */
#define CREDIT_RESERVE 2        /* receives kept back for control messages */
#define IDLE_NS (20ull * 1000000000ull)
#define MAX_DEPTH 4096
#define MAX_ORD 1024

enum test_kind { T_WRITE = 1, T_READ, T_SEND };
enum ctrl_type { C_HELLO = 1, C_READY, C_BEGIN, C_GO, C_DONE, C_RESULT, C_CREDIT, C_BYE };
enum { F_LAT = 1, F_VERIFY = 2 };
enum { ST_OK = 0, ST_ERROR = 1, ST_MISMATCH = 2 };

typedef struct opts {
    int test;
    bool lat, all, verify, json, poll, server, help, version;
    bool crc, markers, cut_through;
    int mpa_rev;
    uint32_t size, depth, emss;
    uint64_t iters;  /* 0: default */
    double duration; /* seconds; 0: iteration mode */
    uint16_t port;
    const char *host; /* client: the server; server: the address to listen on */
    /* --perftest: speak perftest's -R exchange instead of ours (perftest.c) */
    bool perftest;
    uint32_t connect_delay_ms; /* initiator: quiet time after the MPA Reply */
    uint32_t rx_depth;         /* --perftest send_bw: receives / credit window; 0: default */
} opts;

typedef struct ctrl_msg {
    uint8_t type, test, flags, status;
    uint32_t size;        /* HELLO: largest message; BEGIN: this size */
    uint32_t depth;       /* HELLO */
    uint32_t stag;        /* HELLO / READY: the sender's buffer */
    uint32_t duration_ms; /* BEGIN */
    uint64_t to, len;
    uint64_t count;    /* BEGIN: iterations (0: duration); DONE / RESULT: operations */
    uint64_t rq_total; /* receives the sender has posted so far: Send credits */
    uint32_t bad_off;  /* RESULT: first mismatching offset */
} ctrl_msg;

/* --perftest state: the communication QP (perftest's first rdma_cm
 * connection), its messages, and what the exchange established. */
#define PT_INBOX 4
#define PT_RX_SLOTS 2
#define PT_SLOT 64 /* >= PT_MSG_MAX */
#define PT_TX_RING 4
typedef struct pt_msg {
    uint32_t len;
    uint8_t b[PT_SLOT];
} pt_msg;

typedef struct pt_state {
    iw_qp *cqp;
    bool c_connected, c_closed;
    iw_conn_info cinfo;
    uint8_t c_rx[PT_RX_SLOTS][PT_SLOT];
    uint8_t c_tx[PT_TX_RING][PT_SLOT];
    uint64_t c_posted, c_done;
    pt_msg inbox[PT_INBOX];
    int in_head, in_count;
    unsigned step;                   /* index of the step being run, for messages */
    unsigned msgs_expected, msgs_in; /* the peer may close once the last one came */
    bool done;                       /* every step ran: the peer may close now */
    bool test_done;                  /* the data QP's work is over: it may close */
    char peer_version[PT_VERSION_LEN];
    int32_t cycle_buffer, cache_line;
    pt_dest my, rem;
    bool have_rem;
    uint32_t rx_depth, credit_every;
    uint8_t *credit; /* send_bw: our credit word (the receiver writes it) */
    uint32_t credit_stag;
    uint64_t credited; /* server: the count last written to the sender */
    uint64_t rx_first_ns, rx_last_ns;
    uint64_t peer_iters; /* the client's report (server side) */
    double peer_peak, peer_avg, peer_rate;
    uint64_t peer_size;
} pt_state;

typedef struct perf {
    const opts *o;
    bool server;
    int test;
    bool lat, verify;
    uint32_t max_size, depth;
    iw_dev *dev;
    iw_cq *cq;
    iw_qp *qp;
    iw_listener *lst;
    uint32_t pd;
    iw_conn_info info;
    bool connected, closed, bye;
    /* sbuf: source of Writes and Sends; rbuf: Write target / Read source
     * (server) / Read sink (client). Both registered. */
    uint8_t *sbuf, *rbuf;
    size_t buf_len;
    uint32_t s_stag, r_stag;
    /* Posted receives: one slot each, reposted once handled. */
    uint8_t *slots;
    uint32_t slot_len, n_slots;
    uint8_t hello_slot[CTRL_LEN];
    uint8_t ctrl_tx[CTRL_RING][CTRL_LEN];
    uint64_t ctrl_posted, ctrl_done;
    ctrl_msg inbox[INBOX];
    int in_head, in_count;
    /* Send credits. */
    uint64_t rq_total, rq_advertised, peer_rq_total, sent_total;
    bool in_maint;
    /* the peer's buffer */
    uint32_t peer_stag;
    uint64_t peer_to, peer_len;
    /* the size being run */
    uint32_t cur;
    uint64_t posted, completed, data_rx, pongs, bad;
    uint32_t bad_off;
    /* peak bandwidth: completion times of the last win operations */
    uint64_t *ring;
    uint64_t win;
    double peak_bps;
    uint64_t last_activity, last_bytes;
    uint64_t last_done_ns;     /* time of the latest data completion */
    iw_close_reason close_why; /* --perftest: a close put off until nothing else came */
    const char *close_rfc;
    /* --perftest (perftest.c): the communication QP and the exchange */
    pt_state pt;
    char err[320];
} perf;

typedef struct bw_result {
    uint64_t ops;
    double secs, peak_bps;
} bw_result;

typedef struct lat_result {
    uint64_t n;
    double min, max, median, avg, stdev, p99, p999;
} lat_result;

#define MB (1024.0 * 1024.0) /* perftest's MB/sec is 2^20 octets per second */
#define DASHES                                                                                     \
    "---------------------------------------------------------------------------------------\n"

/* iwarp-perf.c: the parts both protocols use. */
uint64_t now_ns(void);
__attribute__((format(printf, 2, 3))) int fail(perf *x, const char *fmt, ...);
const char *test_name(int t);
void *alloc_buf(size_t len);
int progress(perf *x, int wait_ms);
int wait_ms(const perf *x);
int quiet_wait(perf *x, uint32_t ms);
int alloc_bufs(perf *x);
void settings(const perf *x, iw_conn_settings *s);
int open_dev(perf *x, uint32_t cq_depth);
int alloc_slots(perf *x, uint32_t n, uint32_t len);
uint32_t cq_depth_for(uint32_t depth, uint32_t rq);
void prepare_size(perf *x, uint32_t size);
uint64_t iters_for(const opts *o, uint32_t size);
int run_bw(perf *x, uint32_t size, uint64_t iters, double secs, bw_result *r);
int run_lat(perf *x, uint64_t iters, double secs, lat_result *r);
void lat_stats(double *s, uint64_t n, lat_result *r);
int server_write_lat(perf *x, uint64_t limit, double *samples);
int server_send_lat(perf *x, uint64_t limit);
void print_header(const perf *x);
void report_bw(const perf *x, uint32_t size, const bw_result *r);
void report_lat(const perf *x, uint32_t size, const lat_result *r);

/* perftest.c */
int pt_on_event(perf *x, const iw_event *ev);  /* an event of the communication QP */
void pt_on_data_recv(perf *x);                 /* a data Send arrived */
uint64_t pt_offset(const perf *x, uint64_t i); /* remote/local offset of bandwidth operation i */
bool pt_may_send(const perf *x);               /* send_bw: the receiver's credit allows one more */
int pt_run_client(perf *x);
int pt_run_server(perf *x);

#endif
