/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The verbs listener under hostile peers (issue 16): pending connections
 * are bounded in number and time, released when their peers close, taken
 * oldest first, and running out of descriptors does not make the listener
 * spin. Loopback only; no timing assertion (CPU time is measured against
 * a generous bound, waits are for conditions with a cap). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <iwarp/verbs.h>

#include "iw_test.h"

static int count_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the directory's own fd */
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int dial(uint16_t port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The peer closed our connection (EOF or reset) within wait_ms. */
static bool closed_by_peer(int fd, int wait_ms) {
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, wait_ms) <= 0)
        return false;
    char b;
    ssize_t r = recv(fd, &b, 1, MSG_DONTWAIT);
    return r == 0 || (r < 0 && errno == ECONNRESET);
}

static iw_listener_stats stats_of(const iw_listener *l) {
    iw_listener_stats st;
    iw_listener_get_stats(l, &st);
    return st;
}

/* Progress until cond holds, at most ~20 s: a cap, not a measurement. */
#define PROGRESS_UNTIL(dev, cond)                                                                  \
    do {                                                                                           \
        for (int spin_ = 0; spin_ < 2000 && !(cond); spin_++)                                      \
            iw_dev_progress(dev, 10);                                                              \
    } while (0)

IW_TEST(pending_is_bounded_and_released_when_peers_close) {
    iw_dev *dev;
    iw_listener *l;
    REQUIRE(iw_dev_open(&dev) == 0);
    REQUIRE(iw_listen(dev, "127.0.0.1", 0, &l) == 0);
    REQUIRE(iw_listener_set_limits(l, 8, 60000) == 0);
    int base = count_fds();
    enum { N = 40 };
    int c[N];
    for (int i = 0; i < N; i++) { /* accepting as they come: the backlog is 16 */
        REQUIRE((c[i] = dial(iw_listener_port(l))) >= 0);
        iw_dev_progress(dev, 0);
    }
    PROGRESS_UNTIL(dev, stats_of(l).accepted + stats_of(l).refused == N);
    iw_listener_stats st = stats_of(l);
    CHECK_EQ(st.accepted, 8);
    CHECK_EQ(st.refused, N - 8);
    CHECK_EQ(iw_listener_pending(l), 8);
    /* Our 40 ends, and the 8 the listener keeps: no more. */
    CHECK_EQ(count_fds(), base + N + 8);
    /* The refused ones are told at once: the first 8 wait, the rest see EOF. */
    int told = 0;
    for (int i = 0; i < N; i++)
        told += closed_by_peer(c[i], i < 8 ? 0 : 5000);
    CHECK_EQ(told, N - 8);
    for (int i = 0; i < N; i++)
        close(c[i]);
    /* Their peers gone, the pending ones go too, long before the timeout. */
    PROGRESS_UNTIL(dev, iw_listener_pending(l) == 0);
    CHECK_EQ(iw_listener_pending(l), 0);
    CHECK_EQ(stats_of(l).peer_closed, 8);
    CHECK_EQ(stats_of(l).timed_out, 0);
    CHECK_EQ(count_fds(), base);
    iw_dev_close(dev);
}

IW_TEST(pending_times_out) {
    iw_dev *dev;
    iw_listener *l;
    REQUIRE(iw_dev_open(&dev) == 0);
    REQUIRE(iw_listen(dev, "127.0.0.1", 0, &l) == 0);
    REQUIRE(iw_listener_set_limits(l, 4, 200) == 0);
    int a = dial(iw_listener_port(l)), b = dial(iw_listener_port(l));
    REQUIRE(a >= 0 && b >= 0);
    PROGRESS_UNTIL(dev, stats_of(l).timed_out == 2);
    CHECK_EQ(stats_of(l).accepted, 2);
    CHECK_EQ(stats_of(l).timed_out, 2);
    CHECK_EQ(iw_listener_pending(l), 0);
    CHECK(closed_by_peer(a, 5000));
    CHECK(closed_by_peer(b, 5000));
    close(a);
    close(b);
    iw_dev_close(dev);
}

IW_TEST(accept_takes_the_oldest) {
    iw_dev *dev;
    iw_listener *l;
    iw_cq *cq;
    iw_qp *qp;
    uint32_t pd;
    iw_conn_settings s;
    REQUIRE(iw_dev_open(&dev) == 0);
    REQUIRE(iw_pd_alloc(iw_dev_rnic(dev), &pd) == 0);
    REQUIRE(iw_cq_create(dev, 64, &cq) == 0);
    iw_conn_settings_default(&s, IW_ROLE_RESPONDER);
    REQUIRE(iw_qp_create(dev, pd, cq, &s, &qp) == 0);
    REQUIRE(iw_listen(dev, "127.0.0.1", 0, &l) == 0);
    int a = dial(iw_listener_port(l));
    REQUIRE(a >= 0);
    PROGRESS_UNTIL(dev, iw_listener_pending(l) == 1);
    int b = dial(iw_listener_port(l));
    REQUIRE(b >= 0);
    PROGRESS_UNTIL(dev, iw_listener_pending(l) == 2);
    REQUIRE(iw_accept(l, qp) == 0);
    CHECK_EQ(iw_listener_pending(l), 1);
    /* b is the one left pending: its peer closing releases it. */
    close(b);
    PROGRESS_UNTIL(dev, iw_listener_pending(l) == 0);
    CHECK_EQ(stats_of(l).peer_closed, 1);
    /* a is the QP's: it is not closed under the QP. */
    CHECK(!closed_by_peer(a, 0));
    /* Closing the listener closes what is pending, not the QP's socket. */
    int c = dial(iw_listener_port(l));
    REQUIRE(c >= 0);
    PROGRESS_UNTIL(dev, iw_listener_pending(l) == 1);
    iw_listener_close(l);
    CHECK(closed_by_peer(c, 5000));
    CHECK(!closed_by_peer(a, 0));
    close(a);
    close(c);
    iw_dev_close(dev);
}

IW_TEST(limits_are_checked) {
    iw_dev *dev;
    iw_listener *l;
    REQUIRE(iw_dev_open(&dev) == 0);
    REQUIRE(iw_listen(dev, "127.0.0.1", 0, &l) == 0);
    CHECK_EQ(iw_listener_set_limits(l, -1, 0), IW_ERR_INVALID_ARG);
    CHECK_EQ(iw_listener_set_limits(l, IW_LISTEN_PENDING_HARD_MAX + 1, 0), IW_ERR_INVALID_ARG);
    CHECK_EQ(iw_listener_set_limits(l, 0, 0), 0); /* the defaults */
    enum { N = IW_LISTEN_PENDING_MAX + 4 };
    int c[N];
    for (int i = 0; i < N; i++) {
        REQUIRE((c[i] = dial(iw_listener_port(l))) >= 0);
        iw_dev_progress(dev, 0);
    }
    PROGRESS_UNTIL(dev, stats_of(l).accepted + stats_of(l).refused == N);
    CHECK_EQ(iw_listener_pending(l), IW_LISTEN_PENDING_MAX);
    for (int i = 0; i < N; i++)
        close(c[i]);
    iw_dev_close(dev);
}

/* Out of descriptors with connections queued: the listener must rest, not
 * spin. In a child, so the lowered limit stays there. Child exit codes:
 * 0 ok, 10+ a failed condition. */
static int emfile_child(int port_pipe, int go_pipe) {
    iw_dev *dev;
    iw_listener *l;
    if (iw_dev_open(&dev) < 0 || iw_listen(dev, "127.0.0.1", 0, &l) < 0)
        return 10;
    iw_listener_set_limits(l, 8, 60000);
    uint16_t port = iw_listener_port(l);
    if (write(port_pipe, &port, sizeof port) != sizeof port)
        return 11;
    char go;
    if (read(go_pipe, &go, 1) != 1) /* the parent has connected 12 times */
        return 12;
    /* Room for about 2 more descriptors: accept fails after those. */
    struct rlimit old, low;
    getrlimit(RLIMIT_NOFILE, &old);
    low = old;
    low.rlim_cur = (rlim_t)count_fds() + 2;
    if (setrlimit(RLIMIT_NOFILE, &low) < 0)
        return 13;
    double c0 = cpu_s(), t0 = now_s();
    while (now_s() - t0 < 1.5)
        iw_dev_progress(dev, 100);
    double cpu = cpu_s() - c0;
    iw_listener_stats st = stats_of(l);
    fprintf(stderr, "  out of fds for 1.5 s: %.3f s of CPU, %d pending, %llu accept errors\n", cpu,
            iw_listener_pending(l), (unsigned long long)st.accept_errors);
    int rc = 0;
    if (st.accept_errors == 0)
        rc = 14; /* the case did not happen */
    else if (cpu > 0.5)
        rc = 15; /* a spinning listener burns the whole 1.5 s */
    else if (st.accept_errors > 100)
        rc = 18; /* one failed accept per rest (100 ms), not one per loop */
    else if (iw_listener_pending(l) >= 8)
        rc = 16; /* (the limit caps fd numbers, so a few more than 2 may fit) */
    /* Descriptors back: the queued connections come in, up to the bound. */
    setrlimit(RLIMIT_NOFILE, &old);
    for (int i = 0; i < 2000 && iw_listener_pending(l) < 8; i++)
        iw_dev_progress(dev, 10);
    if (!rc && iw_listener_pending(l) != 8)
        rc = 17;
    iw_dev_close(dev);
    return rc;
}

IW_TEST(out_of_descriptors_does_not_spin) {
    int pp[2], gp[2];
    REQUIRE(pipe(pp) == 0 && pipe(gp) == 0);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        close(pp[0]);
        close(gp[1]);
        _exit(emfile_child(pp[1], gp[0]));
    }
    close(pp[1]);
    close(gp[0]);
    uint16_t port = 0;
    REQUIRE(read(pp[0], &port, sizeof port) == sizeof port);
    enum { N = 12 }; /* all fit in the listen backlog (16) */
    int c[N];
    for (int i = 0; i < N; i++)
        c[i] = dial(port);
    REQUIRE(write(gp[1], "g", 1) == 1);
    int st = 0;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st))
        fprintf(stderr, "  child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    for (int i = 0; i < N; i++)
        if (c[i] >= 0)
            close(c[i]);
    close(pp[0]);
    close(gp[1]);
}

IW_TEST_MAIN("listen", IW_CASE(pending_is_bounded_and_released_when_peers_close),
             IW_CASE(pending_times_out), IW_CASE(accept_takes_the_oldest),
             IW_CASE(limits_are_checked), IW_CASE(out_of_descriptors_does_not_spin))
