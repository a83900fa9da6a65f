/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Engine receive speed on small segments: parse + validate + place.
 *
 * "A 64-byte segment" here is one RDMA Write DDP segment carrying 64 octets
 * of payload: ULPDU = 14-octet tagged DDP/RDMAP header + 64 = 78 octets, so
 * the FPDU is 2 + 78 + 0 pad + 4 CRC = 84 octets on the wire (plus a 4-octet
 * marker every 512 octets when markers are on).
 *
 * The stream is made once per configuration by a real initiator engine
 * (iw_conn_post_send + iw_conn_write), after a real MPA exchange with a probe
 * responder, so it is exactly what the engine sends. Each timed trial builds
 * a fresh responder (rnic, PD, 64 KiB region: the same STag every time, which
 * is checked), feeds it the MPA Request untimed, then times iw_conn_recv over
 * the whole FPDU part in CHUNK-octet slices. Writes land at consecutive
 * Tagged Offsets that wrap around the region, so placement stays in cache
 * while the input streams from memory, as a NIC's would.
 *
 * Trials of the three configurations take turns (noise hits all alike);
 * each figure is the best of TRIALS. Data integrity is checked once per
 * configuration, untimed. The last line printed is machine-readable:
 *   engine_rx_64b=<Msegments/s, CRC on, no markers> Msegments/s
 *
 * For profiling one configuration: bench_engine_rx --only crc|nocrc|markers
 * [--trials N] (then the last line names that configuration), e.g.
 *   valgrind --tool=callgrind --toggle-collect=iw_conn_recv \
 *       bench_engine_rx --only crc --trials 1 */
#include <iwarp/crc32c.h>
#include <iwarp/engine.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { PAYLOAD = 64, REGION = 65536, CHUNK = 65536, TRIALS = 9, BATCH = 4096 };
#define N_SEGS (1u << 19)

typedef struct rx_cfg {
    const char *name;
    bool crc, markers;
} rx_cfg;

typedef struct rx_cfg_named {
    const char *key;
    rx_cfg cfg;
} rx_cfg_named;

static const rx_cfg_named all_cfgs[] = {
    {"crc", {"crc, no markers", true, false}},
    {"nocrc", {"no crc, no markers", false, false}},
    {"markers", {"crc + markers", true, true}},
};
enum { N_ALL = sizeof all_cfgs / sizeof all_cfgs[0] };

typedef struct stream {
    uint8_t *buf;
    size_t len, cap;
    size_t mpa_len; /* the MPA Request at the front */
    uint32_t stag;  /* the responder's region as the sender targeted it */
} stream;

/* Counts what the engine reports; any Terminate or close is a failure. */
typedef struct ev_count {
    unsigned connected, bad;
} ev_count;

static int on_event(iw_conn *conn, const iw_event *ev, void *user) {
    (void)conn;
    ev_count *e = user;
    if (ev->type == IW_EV_CONNECTED)
        e->connected++;
    else if (ev->type != IW_EV_WRITE_DONE)
        e->bad++;
    return 0;
}
static const iw_callbacks cbs = {IW_CALLBACKS_V1, on_event};

/* This thread's CPU time: the figure is per core, and the machine is shared,
 * so wall time would count the slices other processes take. */
static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

__attribute__((noreturn)) static void die(const char *what, long rc) {
    fprintf(stderr, "bench_engine_rx: %s failed (%ld)\n", what, rc);
    exit(1);
}

static void settings(iw_conn_settings *s, iw_role role, const rx_cfg *c) {
    iw_conn_settings_default(s, role);
    s->crc = c->crc;
    s->markers = c->markers; /* both ask: markers in both directions */
    s->mpa_timeout = 0;
}

/* Move everything conn has to send into st (growing it). */
static void drain(iw_conn *conn, stream *st) {
    for (;;) {
        if (st->cap - st->len < CHUNK) {
            st->cap = st->cap ? st->cap * 2 : (size_t)1 << 24;
            st->buf = realloc(st->buf, st->cap);
            if (!st->buf)
                die("realloc", 0);
        }
        iw_ssize n = iw_conn_write(conn, st->buf + st->len, st->cap - st->len, 0);
        if (n < 0)
            die("iw_conn_write", n);
        st->len += (size_t)n;
        if (n == 0)
            return;
    }
}

/* A responder with one 64 KiB remotely writable region. */
typedef struct responder {
    iw_rnic *rnic;
    uint32_t pd, stag;
    iw_conn *conn;
    ev_count ev;
} responder;

static void responder_new(responder *r, const rx_cfg *c, uint8_t *region) {
    memset(r, 0, sizeof *r);
    iw_conn_settings s;
    settings(&s, IW_ROLE_RESPONDER, c);
    long rc;
    if ((rc = iw_rnic_new(&r->rnic, NULL)) < 0 || (rc = iw_pd_alloc(r->rnic, &r->pd)) < 0 ||
        (rc = iw_mr_reg(r->rnic, r->pd, region, REGION, 0, IW_ACCESS_REMOTE_WRITE, &r->stag)) < 0 ||
        (rc = iw_conn_new(&r->conn, r->rnic, r->pd, &s, &cbs, &r->ev)) < 0 ||
        (rc = iw_conn_start(r->conn, 0)) < 0)
        die("responder setup", rc);
}

static void responder_del(responder *r) {
    iw_conn_del(r->conn);
    iw_mr_dereg(r->rnic, r->stag);
    iw_pd_free(r->rnic, r->pd);
    iw_rnic_del(r->rnic);
}

static void fill_pattern(uint8_t *p, size_t n, uint32_t seed) {
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        p[i] = (uint8_t)x;
    }
}

/* Build the wire stream of N_SEGS 64-octet RDMA Writes for c. src holds
 * REGION octets; write i sends src[(i*64) % REGION ..] to that same offset. */
static void make_stream(stream *st, const rx_cfg *c, const uint8_t *src, uint8_t *region) {
    memset(st, 0, sizeof *st);
    iw_rnic *ri;
    uint32_t pdi;
    iw_conn *ini;
    ev_count evi = {0};
    iw_conn_settings s;
    settings(&s, IW_ROLE_INITIATOR, c);
    long rc;
    if ((rc = iw_rnic_new(&ri, NULL)) < 0 || (rc = iw_pd_alloc(ri, &pdi)) < 0 ||
        (rc = iw_conn_new(&ini, ri, pdi, &s, &cbs, &evi)) < 0 || (rc = iw_conn_start(ini, 0)) < 0)
        die("initiator setup", rc);
    responder probe;
    responder_new(&probe, c, region);
    st->stag = probe.stag;

    drain(ini, st); /* the MPA Request */
    st->mpa_len = st->len;
    if ((rc = iw_conn_recv(probe.conn, st->buf, st->len, 0)) < 0)
        die("probe recv", rc);
    uint8_t reply[1024];
    iw_ssize n = iw_conn_write(probe.conn, reply, sizeof reply, 0);
    if (n <= 0 || (rc = iw_conn_recv(ini, reply, (size_t)n, 0)) < 0 || evi.connected != 1)
        die("MPA exchange", n);

    for (uint32_t i = 0; i < N_SEGS;) {
        for (uint32_t k = 0; k < BATCH && i < N_SEGS; k++, i++) {
            uint32_t off = (i * PAYLOAD) % REGION;
            iw_send_wr wr = {.op = IW_WR_WRITE,
                             .wr_id = i,
                             .data = src + off,
                             .len = PAYLOAD,
                             .remote_stag = st->stag,
                             .remote_to = off};
            if ((rc = iw_conn_post_send(ini, &wr)) < 0)
                die("post_send", rc);
        }
        drain(ini, st);
    }
    if (evi.bad)
        die("initiator events", evi.bad);
    iw_conn_del(ini);
    iw_pd_free(ri, pdi);
    iw_rnic_del(ri);
    responder_del(&probe);
}

/* One fresh responder fed the whole stream; returns ns for the FPDU part.
 * check: verify the region, the counters and the absence of any Terminate. */
static double run_once(const stream *st, const rx_cfg *c, uint8_t *region, const uint8_t *src,
                       bool check) {
    responder r;
    if (check)
        memset(region, 0, REGION);
    responder_new(&r, c, region);
    if (r.stag != st->stag)
        die("same STag on a fresh responder", r.stag);
    iw_ssize rc = iw_conn_recv(r.conn, st->buf, st->mpa_len, 0);
    if (rc < 0 || r.ev.connected != 1)
        die("responder MPA", rc);
    const uint8_t *p = st->buf + st->mpa_len, *end = st->buf + st->len;
    double t0 = now_ns();
    while (p < end) {
        size_t k = (size_t)(end - p) < CHUNK ? (size_t)(end - p) : CHUNK;
        if ((rc = iw_conn_recv(r.conn, p, k, 0)) < 0)
            die("iw_conn_recv", rc);
        p += k;
    }
    double t = now_ns() - t0;
    if (check) {
        iw_conn_stats cs;
        iw_conn_get_stats(r.conn, &cs);
        if (r.ev.bad || iw_conn_get_state(r.conn) != IW_CONN_RTS || cs.fpdus_rx != N_SEGS ||
            cs.bytes_placed != (uint64_t)N_SEGS * PAYLOAD || memcmp(region, src, REGION) != 0) {
            fprintf(stderr,
                    "bench_engine_rx: %s: integrity check FAILED (events %u, state %d, "
                    "fpdus %llu, placed %llu)\n",
                    c->name, r.ev.bad, (int)iw_conn_get_state(r.conn),
                    (unsigned long long)cs.fpdus_rx, (unsigned long long)cs.bytes_placed);
            exit(1);
        }
    }
    responder_del(&r);
    return t;
}

static void usage(void) {
    fprintf(stderr, "usage: bench_engine_rx [--only crc|nocrc|markers] [--trials N]\n");
    exit(2);
}

int main(int argc, char **argv) {
    static uint8_t src[REGION], region[REGION];
    rx_cfg cfgs[N_ALL];
    const char *keys[N_ALL];
    int n_cfg = 0, trials = TRIALS;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--trials") && i + 1 < argc && atoi(argv[i + 1]) > 0)
            trials = atoi(argv[++i]);
        else
            usage();
    }
    for (int i = 0; i < N_ALL; i++)
        if (!only || !strcmp(only, all_cfgs[i].key)) {
            keys[n_cfg] = all_cfgs[i].key;
            cfgs[n_cfg++] = all_cfgs[i].cfg;
        }
    if (!n_cfg)
        usage();
    fill_pattern(src, sizeof src, 7);
    stream st[N_ALL];
    for (int i = 0; i < n_cfg; i++) {
        make_stream(&st[i], &cfgs[i], src, region);
        run_once(&st[i], &cfgs[i], region, src, true); /* integrity, and a warm-up */
    }
    double best[N_ALL];
    for (int i = 0; i < n_cfg; i++)
        best[i] = 1e300;
    for (int t = 0; t < trials; t++)
        for (int i = 0; i < n_cfg; i++) {
            double ns = run_once(&st[i], &cfgs[i], region, src, false);
            if (ns < best[i])
                best[i] = ns;
        }

    printf("engine rx: %u RDMA Write segments of %d payload octets (FPDU %d octets w/o markers),\n"
           "fed by iw_conn_recv in %d-octet chunks; best of %d interleaved trials (thread CPU\n"
           "time); crc32c: %s\n"
           "integrity (region contents, FPDU and placed counters, no Terminate): ok\n\n",
           N_SEGS, PAYLOAD, 2 + 14 + PAYLOAD + 4, CHUNK, trials, iw_crc32c_impl());
    printf("%-20s %12s %12s %14s %12s\n", "config", "wire octets", "ns/segment", "Msegments/s",
           "wire GB/s");
    for (int i = 0; i < n_cfg; i++) {
        size_t wire = st[i].len - st[i].mpa_len;
        printf("%-20s %12zu %12.1f %14.2f %12.2f\n", cfgs[i].name, wire, best[i] / N_SEGS,
               N_SEGS / best[i] * 1e3, (double)wire / best[i]);
    }
    printf("goal: >= 10 Msegments/s on one core (crc, no markers)\n");
    if (only && strcmp(only, "crc"))
        printf("engine_rx_64b_%s=%.2f Msegments/s\n", keys[0], N_SEGS / best[0] * 1e3);
    else
        printf("engine_rx_64b=%.2f Msegments/s\n", N_SEGS / best[0] * 1e3);
    for (int i = 0; i < n_cfg; i++)
        free(st[i].buf);
    return 0;
}
