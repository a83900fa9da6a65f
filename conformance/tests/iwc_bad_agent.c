/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A misbehaving agent for the runner's robustness test:
 *   iwc_bad_agent PORT MODE
 * MODE: garbage (answers non-JSON), version (hello says version 2),
 * refuse (hello ok, everything else ok:false), hangup (hello ok, then
 * closes), silent (hello ok, then never answers), lies (hello ok, then
 * nonsense fields: listen without a port, reg_mr with a bad STag), huge
 * (hello ok, then a response line over 64 MiB).
 *   iwc_bad_agent PORT flaky UPSTREAM_PORT N
 * relays to a real agent on 127.0.0.1:UPSTREAM_PORT, but closes the first
 * control connection after N requests (a lost agent that comes back).
 *   iwc_bad_agent PORT numbers UPSTREAM_PORT 0
 * relays to a real agent, turning every "0x..." value below 2^53 in its
 * responses into a JSON number (the contract allows both forms). */
#define _GNU_SOURCE /* memrchr */
#include <arpa/inet.h>
#include <ctype.h>
#include <poll.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void say(int fd, const char *s) { (void)!write(fd, s, strlen(s)); }

static int dial(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* "0x1100" -> 4352 for hex strings below 2^53, in place into out. */
static size_t numbers(const char *in, size_t n, char *out) {
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        if (in[i] == '"' && i + 3 < n && in[i + 1] == '0' && in[i + 2] == 'x') {
            size_t k = i + 3;
            unsigned long long v = 0;
            int digits = 0;
            while (k < n && isxdigit((unsigned char)in[k]) && digits < 17) {
                v = v << 4 | (unsigned long long)(isdigit((unsigned char)in[k])
                                                      ? in[k] - '0'
                                                      : (tolower((unsigned char)in[k]) - 'a' + 10));
                k++;
                digits++;
            }
            if (digits && digits <= 16 && k < n && in[k] == '"' && v < (1ull << 53)) {
                o += (size_t)sprintf(out + o, "%llu", v);
                i = k + 1;
                continue;
            }
        }
        out[o++] = in[i++];
    }
    return o;
}

/* Relay lines both ways; on the first connection stop after n requests
 * (n < 0: never); with num, hex strings in responses become numbers. */
static void flaky(int fd, int up_port, int n, bool first, bool num) {
    int up = dial(up_port);
    if (up < 0)
        return;
    int requests = 0;
    char buf[65536];
    static char pend[4 << 20], conv[4 << 20];
    size_t plen = 0;
    for (;;) {
        struct pollfd p[2] = {{fd, POLLIN, 0}, {up, POLLIN, 0}};
        if (poll(p, 2, -1) < 0)
            break;
        if (p[0].revents) {
            ssize_t r = read(fd, buf, sizeof buf);
            if (r <= 0)
                break;
            for (ssize_t i = 0; i < r; i++)
                requests += buf[i] == '\n';
            if (first && n >= 0 && requests > n)
                break; /* the request that would make n + 1 is never answered */
            (void)!write(up, buf, (size_t)r);
        }
        if (p[1].revents) {
            /* whole lines only, so a hex string is never cut in two */
            ssize_t r = read(up, pend + plen, sizeof pend - plen);
            if (r <= 0)
                break;
            plen += (size_t)r;
            char *last = memrchr(pend, '\n', plen);
            size_t whole = last ? (size_t)(last - pend) + 1 : plen == sizeof pend ? plen : 0;
            if (whole) {
                if (num) {
                    size_t o = numbers(pend, whole, conv);
                    (void)!write(fd, conv, o);
                } else {
                    (void)!write(fd, pend, whole);
                }
                memmove(pend, pend + whole, plen - whole);
                plen -= whole;
            }
        }
    }
    close(up);
}

int main(int argc, char **argv) {
    if (argc != 3 && !(argc == 5 && (!strcmp(argv[2], "flaky") || !strcmp(argv[2], "numbers"))))
        return 2;
    signal(SIGPIPE, SIG_IGN);
    const char *mode = argv[2];
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1]))};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(lfd, (struct sockaddr *)&a, sizeof a) < 0 || listen(lfd, 4) < 0)
        return 1;
    static const char hello[] =
        "{\"ok\":true,\"impl\":\"bad agent\",\"version\":1,\"caps\":{\"mpa_rev\":[1,2],"
        "\"markers\":true,\"crc\":true,\"atomics\":true,\"immediate\":true,\"send_inv\":true}}\n";
    for (;;) {
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0)
            continue;
        if (!strcmp(mode, "flaky") || !strcmp(mode, "numbers")) {
            static bool first = true;
            bool num = !strcmp(mode, "numbers");
            flaky(fd, atoi(argv[3]), num ? -1 : atoi(argv[4]), first, num);
            first = false;
            close(fd);
            continue;
        }
        char buf[65536];
        size_t have = 0;
        int n;
        while ((n = (int)read(fd, buf + have, sizeof buf - have - 1)) > 0) {
            have += (size_t)n;
            char *nl;
            while ((nl = memchr(buf, '\n', have))) {
                *nl = 0;
                bool is_hello = strstr(buf, "\"hello\"") != NULL;
                if (!strcmp(mode, "garbage"))
                    say(fd, "\x01\x02 this is not JSON\n");
                else if (!strcmp(mode, "version"))
                    say(fd, "{\"ok\":true,\"impl\":\"v2\",\"version\":2}\n");
                else if (is_hello)
                    say(fd, hello);
                else if (!strcmp(mode, "refuse"))
                    say(fd, "{\"ok\":false,\"error\":\"refused by the bad agent\"}\n");
                else if (!strcmp(mode, "hangup")) {
                    close(fd);
                    fd = -1;
                    break;
                } else if (!strcmp(mode, "huge")) {
                    /* 65 MiB without a newline, then one */
                    static char chunk[1 << 20];
                    memset(chunk, 'x', sizeof chunk);
                    say(fd, "{\"ok\":true,\"pad\":\"");
                    for (int i = 0; i < 65; i++)
                        if (write(fd, chunk, sizeof chunk) < 0)
                            break;
                    say(fd, "\"}\n");
                } else if (!strcmp(mode, "lies"))
                    say(fd, strstr(buf, "reg_mr") ? "{\"ok\":true,\"stag\":\"0xnope\"}\n"
                                                  : "{\"ok\":true,\"events\":7}\n");
                /* silent: nothing */
                size_t k = (size_t)(nl - buf) + 1;
                memmove(buf, nl + 1, have - k);
                have -= k;
            }
            if (fd < 0)
                break;
        }
        if (fd >= 0)
            close(fd);
    }
}
