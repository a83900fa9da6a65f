/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwarp-agent command line (docs/iwarp-agent.md). Pure: no I/O, no
 * globals, so the unit tests can call it as often as they like. */
#ifndef VA_OPTS_H
#define VA_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VA_HOST_MAX 64
#define VA_DEV_MAX 64

typedef struct va_opts {
    char agent_host[VA_HOST_MAX]; /* agent protocol listener */
    uint16_t agent_port;
    char dev[VA_DEV_MAX];          /* "" = the first iWARP device */
    uint8_t port;                  /* RNIC port number (ibv_query_port) */
    char listen_host[VA_HOST_MAX]; /* address for a listen op that names none */
    bool once;
    bool verbose;
} va_opts;

enum { VA_OPTS_RUN = 0, VA_OPTS_HELP = 1, VA_OPTS_VERSION = 2, VA_OPTS_ERROR = -1 };

void va_opts_default(va_opts *o);

/* Parse argv[1..argc-1] ("--name VALUE" or "--name=VALUE"). Returns
 * VA_OPTS_RUN, VA_OPTS_HELP, VA_OPTS_VERSION, or VA_OPTS_ERROR with a
 * message in err. */
int va_opts_parse(va_opts *o, int argc, char *const *argv, char *err, size_t errlen);

/* "HOST:PORT", "[V6]:PORT". Returns 0 or -1. */
int va_parse_hostport(const char *s, char *host, size_t hostlen, uint16_t *port);

/* The usage text. */
const char *va_usage(void);

#endif
