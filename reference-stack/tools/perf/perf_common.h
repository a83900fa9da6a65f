/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwarp-perf's bottom layer (perf_common.c): the options, the run state,
 * the device, the event loop, the timed loops and the reports that both
 * protocols share. It depends on libiwarp's verbs only: what differs per
 * protocol (iwarp-perf's own in perf_native.c, perftest's -R exchange in
 * perftest.c) reaches it through the perf_hooks a protocol installs, never
 * through a call by name. Calls go one way: main (iwarp-perf.c) -> a
 * protocol (perf_proto.h) -> this. */
#ifndef PERF_COMMON_H
#define PERF_COMMON_H

#include <iwarp/verbs.h>

#define PERF_PROG "iwarp-perf"
#define PERF_VERSION "1.0"
#define PERF_DEFAULT_PORT 18515
#define PERF_MAX_MSG (64u << 20)
#define PERF_MAX_DEPTH 4096
#define PERF_MAX_ORD 1024
#define PERF_SWEEP_LO 1 /* -a: 2^1 .. 2^23 octets, as perftest */
#define PERF_SWEEP_HI 23
#define PERF_AUTO_BYTES (1ull << 30) /* -n not given: at most this much per size */
#define PERF_RECV_MEM (256u << 20)   /* send test: memory for the receiver's slots */
#define PERF_LAT_RQ 4                /* send_lat: one message in flight each way, plus control */
#define PERF_IDLE_NS (20ull * 1000000000ull)
/* The protocol's own small Sends and Writes: a ring of slots, their
 * completions (wr_id PERF_WR_CTRL | n) counted by the event loop. */
#define PERF_CTRL_LEN 64
#define PERF_CTRL_RING 64
#define PERF_WR_CTRL (1ull << 63)

#define PERF_MB (1024.0 * 1024.0) /* perftest's MB/sec is 2^20 octets per second */
#define PERF_DASHES                                                                                \
    "---------------------------------------------------------------------------------------\n"

enum perf_test { PERF_WRITE = 1, PERF_READ, PERF_SEND };

typedef struct perf_opts {
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
    bool connect_delay_set;    /* given on the command line */
    uint32_t rx_depth;         /* --perftest send_bw: receives / credit window; 0: default */
    iw_transport transport;    /* --transport: MPA over TCP, or DDP over SCTP (RFC 5043) */
} perf_opts;

typedef struct perf perf;

/* What a protocol adds to the shared loops. Functions may be NULL where
 * noted; a protocol sets x->hk before it opens the device. */
typedef struct perf_hooks {
    /* MPA private data both directions carry; NULL: none. */
    const char *private_data;
    /* Default -n against this peer: perftest's own, uncapped (both sides
     * must count alike), instead of at most PERF_AUTO_BYTES per size. */
    bool iters_uncapped;
    /* A client's connection that closes before it is up is tried again by
     * the protocol, not an error here. */
    bool retry_connect;
    /* The peer closes as soon as it is done: what arrived before its FIN
     * counts, so a close is an error only after a round brings nothing. */
    bool defer_close;
    /* "server %s" in the header: what kind of server, e.g. "perftest ". */
    const char *server_kind;
    /* Events of x->aux_qp (NULL if the protocol has none). */
    int (*aux_event)(perf *x, const iw_event *ev);
    /* A receive on the data QP, before it is taken for data: 1 if it was
     * the protocol's own message (and its buffer is reposted), 0 if data,
     * -1 on error. NULL: every receive is data. */
    int (*recv)(perf *x, const iw_event *ev);
    /* A data Send arrived and was counted. NULL: nothing. */
    void (*data_recv)(perf *x);
    /* send_bw: the receiver allows one more Send. */
    bool (*may_send)(const perf *x);
    /* Bandwidth operation i's offset into both buffers. NULL: 0. */
    uint64_t (*data_offset)(const perf *x, uint64_t i);
    /* After every pump round: the protocol's housekeeping. NULL: nothing. */
    int (*pump)(perf *x);
    /* The client's end of a size: the peer confirms ops operations. NULL:
     * the size ends with its last completion. */
    int (*end_size)(perf *x, uint64_t ops);
    /* The server's open-ended latency loops stop when this says so. */
    bool (*msg_waiting)(const perf *x);
    /* write_lat: the last octet of ping i. */
    uint8_t (*stamp)(uint64_t i);
    /* Header lines: the peer (NULL: none), and the remote buffer. */
    void (*header_peer)(const perf *x);
    void (*header_remote)(const perf *x);
} perf_hooks;

struct perf {
    const perf_opts *o;
    const perf_hooks *hk;
    void *proto; /* the protocol's own state */
    bool server;
    int test;
    bool lat, verify;
    uint32_t max_size, depth;
    iw_dev *dev;
    iw_cq *cq;
    iw_qp *qp;     /* the data QP */
    iw_qp *aux_qp; /* a second QP the protocol owns: perftest's communication QP */
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
    uint8_t ctrl_tx[PERF_CTRL_RING][PERF_CTRL_LEN];
    uint64_t ctrl_posted, ctrl_done;
    uint64_t rq_total;   /* receives posted on the data QP so far */
    uint64_t sent_total; /* Sends posted on the data QP so far */
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
    iw_close_reason close_why; /* defer_close: a close put off until nothing else came */
    const char *close_rfc;
    char err[320];
};

typedef struct perf_bw_result {
    uint64_t ops;
    double secs, peak_bps;
} perf_bw_result;

typedef struct perf_lat_result {
    uint64_t n;
    double min, max, median, avg, stdev, p99, p999;
} perf_lat_result;

uint64_t perf_now_ns(void);
/* Records the first problem in x->err; returns -1. */
__attribute__((format(printf, 2, 3))) int perf_fail(perf *x, const char *fmt, ...);
const char *perf_test_name(int t);
/* The first offset in [0, n) that differs from the pattern, or n. */
size_t perf_check_pattern(const uint8_t *p, uint32_t size, size_t n);

/* One round: handle what the CQ holds, else wait up to wait_ms for the
 * sockets. Returns the completions handled, or -1. */
int perf_progress(perf *x, int wait_ms);
/* perf_progress, then the protocol's pump hook. */
int perf_pump(perf *x);
int perf_wait_ms(const perf *x);
int perf_quiet_wait(perf *x, uint32_t ms);

void *perf_alloc_buf(size_t len);
void perf_settings(const perf *x, iw_conn_settings *s);
int perf_open_dev(perf *x, uint32_t cq_depth);
int perf_alloc_bufs(perf *x);
int perf_alloc_slots(perf *x, uint32_t n, uint32_t len);
int perf_repost(perf *x, uint32_t slot);
uint32_t perf_cq_depth_for(uint32_t depth, uint32_t rq);
/* Closes the device and frees what perf_common allocated. */
void perf_destroy(perf *x);

void perf_prepare_size(perf *x, uint32_t size);
uint64_t perf_iters_for(const perf *x, uint32_t size);
int perf_run_bw(perf *x, uint32_t size, uint64_t iters, double secs, perf_bw_result *r);
int perf_run_lat(perf *x, uint64_t iters, double secs, perf_lat_result *r);
void perf_lat_stats(double *s, uint64_t n, perf_lat_result *r);
int perf_server_write_lat(perf *x, uint64_t limit, double *samples);
int perf_server_send_lat(perf *x, uint64_t limit);

void perf_print_header(const perf *x);
void perf_report_bw(const perf *x, uint32_t size, const perf_bw_result *r);
void perf_report_lat(const perf *x, uint32_t size, const perf_lat_result *r);

#endif
