/* SPDX-License-Identifier: GPL-2.0-or-later */
/* RDMA Write over the TCP binding against raw TCP, same bytes, same sockets.
 *
 * Both run over loopback with one thread per side, each side with its own
 * event loop: a receiver thread per connection, the writer in the main
 * thread. The iWARP writer keeps WINDOW 1 MiB RDMA Writes outstanding into
 * a registered 1 MiB region, then sends a "done" Send; the receiver answers
 * it with a Send, and the trial ends when that arrives. The TCP writer sends
 * a 16-octet header and the same TRIAL_BYTES with blocking send() of 1 MiB;
 * the receiver recv()s into a 1 MiB buffer and answers with 8 octets. Both
 * sockets have TCP_NODELAY (the binding sets it) and the kernel's default,
 * autotuned buffer sizes.
 *
 * iWARP uses EMSS 65483 (loopback MTU 65536 - 40 - 12 option octets), so
 * MULPDU is 64768, the RFC 5044 maximum, with or without markers. Three
 * configurations: CRC without markers and CRC with markers (the goals,
 * >= 0.90 and >= 0.85 of TCP), and no CRC (for information). Trials take
 * turns: each iWARP configuration's trial is followed by a TCP trial, for
 * TRIALS rounds. A configuration's ratio is its best trial over the best
 * of the TCP trials paired with it (same count, same moments). Data
 * integrity is checked once per configuration (and for TCP), untimed: one
 * 1 MiB message of a known pattern, compared octet by octet on arrival.
 * The median of the per-round ratios is printed too: on a shared machine it
 * moves less than a ratio of two maxima. So is the CPU time both threads
 * spend per GiB (writer + receiver thread CPU time, best trial), which other
 * processes' load hardly changes: on a quiet machine throughput follows it.
 * The last lines are
 * machine-readable, one figure each, the last one
 *   write_vs_tcp_crc_nomarkers=<iWARP GB/s / TCP GB/s>
 *
 * For profiling: bench_write_vs_tcp [--only crc_nomarkers|crc_markers|nocrc]
 * [--trials N] runs one configuration (and its TCP trials). */
#include <iwarp/verbs.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MSG (1u << 20)
#define TRIAL_BYTES (128ull << 20)
#define TRIALS 15
#define MAX_TRIALS 100
#define WINDOW 8
#define EMSS 65483
#define N_RQ 8

typedef struct wcfg {
    const char *name, *key;
    bool crc, markers, cut_through;
    const char *goal; /* printed beside the row's ratio */
} wcfg;

/* cut_through: zero copy, payload placed before its CRC is known; without
 * it the receiver verifies each FPDU first (RFC 5044 §6) and copies once. */
static const wcfg cfgs[] = {
    {"iWARP CRC, no markers", "crc_nomarkers", true, false, true, "goal >= 0.90"},
    {"iWARP CRC + markers", "crc_markers", true, true, true, "goal >= 0.85"},
    {"iWARP no CRC, no markers", "nocrc", false, false, true, "information"},
    {"iWARP CRC, verify then place", "crc_verified", true, false, false, "information"},
};
enum { N_CFG = sizeof cfgs / sizeof cfgs[0] };

/* CPU time of the calling thread, ns. */
static uint64_t thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One trial: wall seconds, and CPU ns of the writer and receiver threads. */
typedef struct trial {
    double secs;
    uint64_t wr_ns, rcv_ns;
} trial;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

__attribute__((noreturn)) static void die(const char *what, long rc) {
    fprintf(stderr, "bench_write_vs_tcp: %s failed (%ld%s%s)\n", what, rc, errno ? ", " : "",
            errno ? strerror(errno) : "");
    exit(1);
}

static void fill(uint8_t *p, size_t n, uint32_t seed) {
    uint32_t x = seed * 2654435761u | 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        p[i] = (uint8_t)x;
    }
}

static bool matches(const uint8_t *p, size_t n, uint32_t seed) {
    uint8_t *want = malloc(n);
    if (!want)
        die("malloc", 0);
    fill(want, n, seed);
    bool ok = memcmp(p, want, n) == 0;
    free(want);
    return ok;
}

/* A one-shot handoff from a receiver thread to the main thread. */
typedef struct handoff {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool ready;
} handoff;

static void handoff_post(handoff *h) {
    pthread_mutex_lock(&h->mu);
    h->ready = true;
    pthread_cond_signal(&h->cv);
    pthread_mutex_unlock(&h->mu);
}

static void handoff_wait(handoff *h) {
    pthread_mutex_lock(&h->mu);
    while (!h->ready)
        pthread_cond_wait(&h->cv, &h->mu);
    h->ready = false;
    pthread_mutex_unlock(&h->mu);
}

/* ---------------- iWARP ---------------- */

/* Control Sends: the writer's "done" {trial, seed}, the receiver's answer
 * {trial, ok, its thread's CPU time}. seed 0: a timed trial, no check. */
typedef struct ctl {
    uint32_t trial, seed_or_ok;
    uint64_t cpu_ns;
} ctl;

typedef struct iw_side {
    const wcfg *cfg;
    /* receiver thread */
    pthread_t thr;
    handoff up;
    uint16_t port;
    uint32_t stag;
    uint64_t to;
    uint64_t payload_copies;
    /* writer */
    iw_dev *dev;
    iw_cq *cq;
    iw_qp *qp;
    uint8_t *src;
    ctl rx[N_RQ], tx;
    uint32_t trial;
    uint64_t rcv_cpu; /* the receiver's CPU time at its last answer */
} iw_side;

static void settings(const wcfg *c, iw_role role, iw_conn_settings *s) {
    iw_conn_settings_default(s, role);
    s->crc = c->crc;
    s->markers = c->markers; /* both sides: markers in both directions */
    s->cut_through = c->cut_through;
    s->emss = EMSS;
}

/* Wait for the next completion on cq, failing on errors. */
static iw_wc next_wc(iw_cq *cq, const char *who) {
    iw_wc wc;
    for (;;) {
        int n = iw_cq_wait(cq, &wc, 1, 10000);
        if (n < 0)
            die(who, n);
        if (n == 0)
            die("waiting for a completion (10 s)", 0);
        if (wc.ev.type == IW_EV_TERM_SENT || wc.ev.type == IW_EV_TERM_RECEIVED) {
            fprintf(stderr, "bench_write_vs_tcp: %s: Terminate %s\n", who,
                    iw_term_str(wc.ev.term.triple));
            exit(1);
        }
        return wc;
    }
}

static void *iw_receiver(void *arg) {
    iw_side *sd = arg;
    prctl(PR_SET_NAME, "iwarp-rx"); /* for profilers */
    iw_dev *dev;
    iw_cq *cq;
    iw_qp *qp;
    iw_listener *l;
    uint32_t pd;
    long rc;
    uint8_t *region = aligned_alloc(4096, MSG);
    ctl rx[N_RQ], tx[2];
    if (!region)
        die("aligned_alloc", 0);
    memset(region, 0, MSG);
    iw_conn_settings s;
    settings(sd->cfg, IW_ROLE_RESPONDER, &s);
    if ((rc = iw_dev_open(&dev)) < 0 || (rc = iw_pd_alloc(iw_dev_rnic(dev), &pd)) < 0 ||
        (rc = iw_cq_create(dev, 64, &cq)) < 0 ||
        (rc = iw_mr_reg(iw_dev_rnic(dev), pd, region, MSG, (uintptr_t)region,
                        IW_ACCESS_REMOTE_WRITE, &sd->stag)) < 0 ||
        (rc = iw_listen(dev, "127.0.0.1", 0, &l)) < 0 ||
        (rc = iw_qp_create(dev, pd, cq, &s, &qp)) < 0)
        die("receiver set-up", rc);
    sd->to = (uintptr_t)region;
    sd->port = iw_listener_port(l);
    handoff_post(&sd->up);
    while ((rc = iw_accept(l, qp)) == IW_ERR_NEED_MORE)
        iw_dev_progress(dev, 100);
    if (rc < 0)
        die("accept", rc);
    for (int i = 0; i < N_RQ; i++)
        iw_qp_post_recv(qp, (uint64_t)i, &rx[i], sizeof rx[i]);
    unsigned k = 0;
    for (;;) {
        iw_wc wc = next_wc(cq, "iWARP receiver");
        if (wc.ev.type == IW_EV_CLOSED)
            break;
        if (wc.ev.type != IW_EV_RECV || wc.ev.status != IW_WC_SUCCESS)
            continue;
        ctl m = rx[wc.ev.wr_id];
        iw_qp_post_recv(qp, wc.ev.wr_id, &rx[wc.ev.wr_id], sizeof rx[0]);
        ctl *a = &tx[k++ % 2]; /* one answer in flight at a time */
        a->trial = m.trial;
        a->seed_or_ok = m.seed_or_ok ? matches(region, MSG, m.seed_or_ok) : 1;
        a->cpu_ns = thread_cpu_ns();
        iw_send_wr wr = {.op = IW_WR_SEND, .wr_id = 1000 + k, .data = a, .len = sizeof *a};
        if ((rc = iw_qp_post_send(qp, &wr)) < 0)
            die("receiver post_send", rc);
    }
    iw_conn_stats st;
    iw_qp_get_stats(qp, &st);
    sd->payload_copies = st.payload_copies;
    iw_dev_close(dev);
    free(region);
    return NULL;
}

static void iw_open(iw_side *sd, const wcfg *c) {
    memset(sd, 0, sizeof *sd);
    sd->cfg = c;
    pthread_mutex_init(&sd->up.mu, NULL);
    pthread_cond_init(&sd->up.cv, NULL);
    if (pthread_create(&sd->thr, NULL, iw_receiver, sd))
        die("pthread_create", 0);
    handoff_wait(&sd->up); /* port, STag and TO are set */
    sd->src = aligned_alloc(4096, MSG);
    if (!sd->src)
        die("aligned_alloc", 0);
    uint32_t pd;
    long rc;
    iw_conn_settings s;
    settings(c, IW_ROLE_INITIATOR, &s);
    if ((rc = iw_dev_open(&sd->dev)) < 0 || (rc = iw_pd_alloc(iw_dev_rnic(sd->dev), &pd)) < 0 ||
        (rc = iw_cq_create(sd->dev, 64, &sd->cq)) < 0 ||
        (rc = iw_qp_create(sd->dev, pd, sd->cq, &s, &sd->qp)) < 0 ||
        (rc = iw_qp_connect(sd->qp, "127.0.0.1", sd->port)) < 0)
        die("writer set-up", rc);
    for (int i = 0; i < N_RQ; i++)
        iw_qp_post_recv(sd->qp, (uint64_t)i, &sd->rx[i], sizeof sd->rx[i]);
    iw_wc wc = next_wc(sd->cq, "iWARP connect");
    if (wc.ev.type != IW_EV_CONNECTED)
        die("iWARP connect", wc.ev.type);
    const iw_conn_info *in = wc.ev.info;
    if (in->mulpdu != 64768 || in->crc != c->crc || in->markers_tx != c->markers)
        die("negotiated framing", (long)in->mulpdu);
}

/* count messages of MSG octets, then the "done" Send. */
static trial iw_trial(iw_side *sd, uint64_t count, uint32_t seed) {
    uint64_t posted = 0, done = 0;
    long rc;
    uint64_t c0 = thread_cpu_ns();
    double t0 = now_s();
    while (done < count) {
        while (posted < count && posted - done < WINDOW) {
            iw_send_wr wr = {.op = IW_WR_WRITE,
                             .wr_id = posted,
                             .data = sd->src,
                             .len = MSG,
                             .remote_stag = sd->stag,
                             .remote_to = sd->to};
            if ((rc = iw_qp_post_send(sd->qp, &wr)) < 0)
                die("post_send", rc);
            posted++;
        }
        iw_wc wc = next_wc(sd->cq, "iWARP writer");
        if (wc.ev.status != IW_WC_SUCCESS || wc.ev.type != IW_EV_WRITE_DONE)
            die("RDMA Write completion", wc.ev.type);
        done++;
    }
    sd->tx = (ctl){++sd->trial, seed, 0};
    iw_send_wr wr = {.op = IW_WR_SEND, .wr_id = 1u << 30, .data = &sd->tx, .len = sizeof sd->tx};
    if ((rc = iw_qp_post_send(sd->qp, &wr)) < 0)
        die("post_send", rc);
    for (;;) {
        iw_wc wc = next_wc(sd->cq, "iWARP writer");
        if (wc.ev.status != IW_WC_SUCCESS)
            die("completion status", wc.ev.status);
        if (wc.ev.type != IW_EV_RECV)
            continue;
        ctl a = sd->rx[wc.ev.wr_id];
        iw_qp_post_recv(sd->qp, wc.ev.wr_id, &sd->rx[wc.ev.wr_id], sizeof sd->rx[0]);
        if (a.trial != sd->trial)
            die("answer for another trial", a.trial);
        if (!a.seed_or_ok) {
            fprintf(stderr, "bench_write_vs_tcp: %s: data integrity check FAILED\n", sd->cfg->name);
            exit(1);
        }
        trial r = {now_s() - t0, thread_cpu_ns() - c0, a.cpu_ns - sd->rcv_cpu};
        sd->rcv_cpu = a.cpu_ns;
        return r;
    }
}

static void iw_close_side(iw_side *sd) {
    iw_qp_close(sd->qp);
    for (;;) {
        iw_wc wc = next_wc(sd->cq, "iWARP close");
        if (wc.ev.type == IW_EV_CLOSED)
            break;
    }
    iw_dev_close(sd->dev); /* our FIN ends the receiver's stream */
    pthread_join(sd->thr, NULL);
    free(sd->src);
}

/* ---------------- TCP ---------------- */

typedef struct tcp_side {
    pthread_t thr;
    handoff up;
    int lfd, fd;
    uint16_t port;
    uint8_t *src;
    uint64_t rcv_cpu;
} tcp_side;

static void nodelay(int fd) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static void read_full(int fd, void *p, size_t n) {
    for (size_t got = 0; got < n;) {
        ssize_t r = recv(fd, (uint8_t *)p + got, n - got, 0);
        if (r <= 0)
            die("recv", (long)r);
        got += (size_t)r;
    }
}

static void write_full(int fd, const void *p, size_t n) {
    for (size_t sent = 0; sent < n;) {
        ssize_t w = send(fd, (const uint8_t *)p + sent, n - sent, MSG_NOSIGNAL);
        if (w <= 0)
            die("send", (long)w);
        sent += (size_t)w;
    }
}

/* Per trial: a header {bytes, seed}, the bytes, an answer {ok, CPU ns}. */
static void *tcp_receiver(void *arg) {
    tcp_side *t = arg;
    prctl(PR_SET_NAME, "tcp-rx");
    int fd = accept(t->lfd, NULL, NULL);
    if (fd < 0)
        die("accept", fd);
    nodelay(fd);
    uint8_t *buf = aligned_alloc(4096, MSG);
    if (!buf)
        die("aligned_alloc", 0);
    memset(buf, 0, MSG);
    for (;;) {
        uint64_t hdr[2];
        ssize_t r = recv(fd, hdr, sizeof hdr, MSG_WAITALL);
        if (r == 0)
            break;
        if (r != (ssize_t)sizeof hdr)
            die("recv header", (long)r);
        uint64_t left = hdr[0];
        size_t got = 0; /* octets in buf: the check trial sends one MSG */
        while (left) {
            r = recv(fd, buf + got % MSG, (size_t)(left < MSG - got % MSG ? left : MSG - got % MSG),
                     0);
            if (r <= 0)
                die("recv", (long)r);
            left -= (uint64_t)r;
            got += (size_t)r;
        }
        uint64_t ans[2] = {hdr[1] ? matches(buf, MSG, (uint32_t)hdr[1]) : 1, thread_cpu_ns()};
        write_full(fd, ans, sizeof ans);
    }
    close(fd);
    free(buf);
    return NULL;
}

static void tcp_open(tcp_side *t) {
    memset(t, 0, sizeof *t);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    t->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (t->lfd < 0 || bind(t->lfd, (struct sockaddr *)&a, sizeof a) < 0 || listen(t->lfd, 1) < 0 ||
        getsockname(t->lfd, (struct sockaddr *)&a, &al) < 0)
        die("TCP listen", -1);
    if (pthread_create(&t->thr, NULL, tcp_receiver, t))
        die("pthread_create", 0);
    t->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (t->fd < 0 || connect(t->fd, (struct sockaddr *)&a, sizeof a) < 0)
        die("TCP connect", -1);
    nodelay(t->fd);
    t->src = aligned_alloc(4096, MSG);
    if (!t->src)
        die("aligned_alloc", 0);
}

static trial tcp_trial(tcp_side *t, uint64_t count, uint32_t seed) {
    uint64_t c0 = thread_cpu_ns();
    double t0 = now_s();
    uint64_t hdr[2] = {count * MSG, seed};
    write_full(t->fd, hdr, sizeof hdr);
    for (uint64_t i = 0; i < count; i++)
        write_full(t->fd, t->src, MSG);
    uint64_t ans[2];
    read_full(t->fd, ans, sizeof ans);
    if (!ans[0]) {
        fprintf(stderr, "bench_write_vs_tcp: TCP: data integrity check FAILED\n");
        exit(1);
    }
    trial r = {now_s() - t0, thread_cpu_ns() - c0, ans[1] - t->rcv_cpu};
    t->rcv_cpu = ans[1];
    return r;
}

static void tcp_close(tcp_side *t) {
    close(t->fd);
    pthread_join(t->thr, NULL);
    close(t->lfd);
    free(t->src);
}

/* ---------------- main ---------------- */

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void usage(void) {
    fprintf(stderr, "usage: bench_write_vs_tcp [--only crc_nomarkers|crc_markers|nocrc] "
                    "[--trials N]\n");
    exit(2);
}

int main(int argc, char **argv) {
    static iw_side iw[N_CFG];
    static tcp_side tcp;
    static double g_iw[N_CFG][MAX_TRIALS], g_tcp[N_CFG][MAX_TRIALS], g_ratio[N_CFG][MAX_TRIALS],
        all_tcp[N_CFG * MAX_TRIALS];
    /* best ms of CPU per GiB: writer, receiver */
    double cpu_iw[N_CFG][2], cpu_tcp[2] = {1e300, 1e300};
    const uint64_t count = TRIAL_BYTES / MSG;
    int trials = TRIALS;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--trials") && i + 1 < argc && atoi(argv[i + 1]) > 0 &&
                 atoi(argv[i + 1]) <= MAX_TRIALS)
            trials = atoi(argv[++i]);
        else
            usage();
    }
    bool run[N_CFG];
    int n_run = 0;
    for (int c = 0; c < N_CFG; c++)
        n_run += run[c] = !only || !strcmp(only, cfgs[c].key);
    if (!n_run)
        usage();

    /* Set-up, integrity (one checked MSG each), one warm-up trial each. */
    tcp_open(&tcp);
    fill(tcp.src, MSG, 99);
    tcp_trial(&tcp, 1, 99);
    tcp_trial(&tcp, count / 2, 0);
    uint64_t copies = 0;
    for (int c = 0; c < N_CFG; c++) {
        if (!run[c])
            continue;
        iw_open(&iw[c], &cfgs[c]);
        fill(iw[c].src, MSG, 11 + (uint32_t)c);
        iw_trial(&iw[c], 1, 11 + (uint32_t)c);
        iw_trial(&iw[c], count / 2, 0);
    }

    int n_tcp = 0;
    for (int t = 0; t < trials; t++)
        for (int c = 0; c < N_CFG; c++) {
            if (!run[c])
                continue;
            const double gib = (double)TRIAL_BYTES / (1u << 30);
            trial a = iw_trial(&iw[c], count, 0), b = tcp_trial(&tcp, count, 0);
            g_iw[c][t] = (double)TRIAL_BYTES / a.secs / 1e9;
            g_tcp[c][t] = (double)TRIAL_BYTES / b.secs / 1e9;
            double aw = (double)a.wr_ns / 1e6 / gib, ar = (double)a.rcv_ns / 1e6 / gib;
            double bw = (double)b.wr_ns / 1e6 / gib, br = (double)b.rcv_ns / 1e6 / gib;
            if (!t || aw + ar < cpu_iw[c][0] + cpu_iw[c][1])
                cpu_iw[c][0] = aw, cpu_iw[c][1] = ar;
            if (bw + br < cpu_tcp[0] + cpu_tcp[1])
                cpu_tcp[0] = bw, cpu_tcp[1] = br;
            g_ratio[c][t] = g_iw[c][t] / g_tcp[c][t];
            all_tcp[n_tcp++] = g_tcp[c][t];
        }

    for (int c = 0; c < N_CFG; c++)
        if (run[c]) {
            iw_close_side(&iw[c]);
            copies += iw[c].payload_copies;
        }
    tcp_close(&tcp);

    qsort(all_tcp, (size_t)n_tcp, sizeof all_tcp[0], cmp_d);
    printf("RDMA Write (iWARP, TCP binding) vs TCP send/recv over loopback\n"
           "  1 MiB messages, %llu MiB per trial, %d rounds of interleaved trials\n"
           "  iWARP: %d Writes outstanding into a 1 MiB region, EMSS %d -> MULPDU 64768\n"
           "  TCP: blocking send()/recv() of 1 MiB buffers\n"
           "  both: one thread per side, TCP_NODELAY, default (autotuned) socket buffers\n"
           "  integrity (one 1 MiB message each, every octet): ok; iWARP receive payload "
           "copies: %llu\n"
           "  ratio = best iWARP trial / best of the TCP trials run right after each one;\n"
           "  paired median = median over rounds of (iWARP trial / the TCP trial after it)\n\n",
           (unsigned long long)(TRIAL_BYTES >> 20), trials, WINDOW, EMSS,
           (unsigned long long)copies);
    printf("%-26s %9s %8s %11s %7s %14s %15s\n", "configuration", "best GB/s", "median",
           "paired TCP", "ratio", "paired median", "CPU ms/GiB w+r");
    printf("%-26s %9.2f %8.2f %11s %7s %14s %8.0f+%-6.0f\n", "TCP send/recv (all trials)",
           all_tcp[n_tcp - 1], all_tcp[n_tcp / 2], "", "", "", cpu_tcp[0], cpu_tcp[1]);
    double ratio[N_CFG];
    for (int c = 0; c < N_CFG; c++) {
        if (!run[c])
            continue;
        qsort(g_iw[c], (size_t)trials, sizeof g_iw[c][0], cmp_d);
        qsort(g_tcp[c], (size_t)trials, sizeof g_tcp[c][0], cmp_d);
        qsort(g_ratio[c], (size_t)trials, sizeof g_ratio[c][0], cmp_d);
        ratio[c] = g_iw[c][trials - 1] / g_tcp[c][trials - 1];
        printf("%-26s %9.2f %8.2f %11.2f %7.2f %14.2f %8.0f+%-6.0f (%s)\n", cfgs[c].name,
               g_iw[c][trials - 1], g_iw[c][trials / 2], g_tcp[c][trials - 1], ratio[c],
               g_ratio[c][trials / 2], cpu_iw[c][0], cpu_iw[c][1], cfgs[c].goal);
    }
    printf("(CPU ms/GiB w+r: writer + receiver thread CPU time per GiB moved, best trial;\n"
           " TCP CPU / iWARP CPU:");
    for (int c = 0; c < N_CFG; c++)
        if (run[c])
            printf(" %s %.2f", cfgs[c].key,
                   (cpu_tcp[0] + cpu_tcp[1]) / (cpu_iw[c][0] + cpu_iw[c][1]));
    printf(")\n");
    for (int c = N_CFG - 1; c >= 0; c--) /* crc_nomarkers (index 0) last */
        if (run[c])
            printf("write_vs_tcp_%s=%.2f\n", cfgs[c].key, ratio[c]);
    return 0;
}
