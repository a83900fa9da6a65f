/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwarp-agent command line parsing. */
#include "va_opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void va_opts_default(va_opts *o) {
    memset(o, 0, sizeof *o);
    strcpy(o->agent_host, "127.0.0.1");
    o->agent_port = 7400;
    o->port = 1;
    strcpy(o->listen_host, "0.0.0.0");
}

const char *va_usage(void) {
    return "usage: iwarp-agent [--agent HOST:PORT] [--dev NAME] [--port N]\n"
           "                   [--listen-host ADDR] [--once] [--verbose]\n"
           "  --agent HOST:PORT   agent protocol listener (default 127.0.0.1:7400)\n"
           "  --dev NAME          RDMA device, e.g. siw0 (default: the first iWARP device)\n"
           "  --port N            port of that device (default 1)\n"
           "  --listen-host ADDR  address a listen op binds when it names no host\n"
           "                      (default 0.0.0.0: every address of the device)\n"
           "  --once              exit after the first runner session ends\n"
           "  --verbose           log requests and RDMA CM events to stderr\n"
           "  --version           print the version and exit\n"
           "  --help              this text\n";
}

int va_parse_hostport(const char *s, char *host, size_t hl, uint16_t *port) {
    const char *c = strrchr(s, ':');
    if (!c || c == s || (size_t)(c - s) >= hl || c[1] == 0)
        return -1;
    char *e;
    unsigned long p = strtoul(c + 1, &e, 10);
    if (*e || p > 65535 || c[1] == '-' || c[1] == '+' || c[1] == ' ')
        return -1;
    size_t n = (size_t)(c - s);
    memcpy(host, s, n);
    host[n] = 0;
    if (host[0] == '[') { /* [::1]:7400 */
        if (n < 3 || host[n - 1] != ']')
            return -1;
        memmove(host, host + 1, n - 2);
        host[n - 2] = 0;
    } else if (strchr(host, ':')) {
        return -1; /* a bare IPv6 address needs brackets */
    }
    *port = (uint16_t)p;
    return 0;
}

static int opt_err(char *err, size_t errlen, const char *what, const char *arg) {
    snprintf(err, errlen, "%s '%.60s'", what, arg);
    return VA_OPTS_ERROR;
}

int va_opts_parse(va_opts *o, int argc, char *const *argv, char *err, size_t errlen) {
    va_opts_default(o);
    if (errlen)
        err[0] = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0)
            return opt_err(err, errlen, "unexpected argument", a);
        const char *name = a + 2;
        const char *eq = strchr(name, '=');
        size_t nl = eq ? (size_t)(eq - name) : strlen(name);
        const char *val = eq ? eq + 1 : NULL;
#define IS(s) (nl == sizeof(s) - 1 && !strncmp(name, s, nl))
        bool flag = IS("once") || IS("verbose") || IS("help") || IS("version");
        bool valued = IS("agent") || IS("dev") || IS("port") || IS("listen-host");
        if (!flag && !valued)
            return opt_err(err, errlen, "unknown option", a);
        if (flag && val)
            return opt_err(err, errlen, "this option takes no value:", a);
        if (valued && !val) {
            if (i + 1 >= argc)
                return opt_err(err, errlen, "this option needs a value:", a);
            val = argv[++i];
        }
        if (!val)
            val = ""; /* flags */
        if (IS("help"))
            return VA_OPTS_HELP;
        if (IS("version"))
            return VA_OPTS_VERSION;
        if (IS("once")) {
            o->once = true;
        } else if (IS("verbose")) {
            o->verbose = true;
        } else if (IS("agent")) {
            if (va_parse_hostport(val, o->agent_host, sizeof o->agent_host, &o->agent_port) < 0)
                return opt_err(err, errlen, "--agent wants HOST:PORT, got", val);
        } else if (IS("dev")) {
            if (!val[0] || strlen(val) >= sizeof o->dev)
                return opt_err(err, errlen, "--dev wants a device name, got", val);
            strcpy(o->dev, val);
        } else if (IS("port")) {
            char *e;
            unsigned long p = strtoul(val, &e, 10);
            if (!val[0] || *e || val[0] == '-' || val[0] == '+' || p < 1 || p > 255)
                return opt_err(err, errlen, "--port wants a device port number 1..255, got", val);
            o->port = (uint8_t)p;
        } else if (IS("listen-host")) {
            if (!val[0] || strlen(val) >= sizeof o->listen_host)
                return opt_err(err, errlen, "--listen-host wants an address, got", val);
            strcpy(o->listen_host, val);
        }
#undef IS
    }
    return VA_OPTS_RUN;
}
