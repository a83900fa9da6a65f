/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwarp-perf: what perftest's ib_{write,read,send}_{bw,lat} are for RNICs,
 * for libiwarp's verbs API over TCP (or SCTP, --transport sctp) between two
 * processes (docs/iwarp-perf.md).
 *
 * This file is the command line: the options, and main, which hands the
 * session to one of two protocols through its table (perf_proto.h):
 * iwarp-perf's own control protocol over Sends (perf_native.c), or with
 * --perftest perftest's own -R exchange (perftest.c). Both run the same
 * timed loops and reports (perf_common.c). Calls go one way: main ->
 * protocol -> common (tests/perf_layers.sh checks it). */
#include "perf_proto.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- arguments ---- */

static const char usage_text[] =
    "Usage: " PERF_PROG " [OPTIONS]                 server: wait for one client\n"
    "       " PERF_PROG " [OPTIONS] SERVER_ADDR     client: run the test against a server\n"
    "\n"
    "perftest's ib_{write,read,send}_{bw,lat} for iWARP over TCP (libiwarp verbs),\n"
    "or DDP directly over SCTP (RFC 5043) with --transport sctp.\n"
    "The client's test options decide the test; give the framing options to both sides.\n"
    "\n"
    "Test (client):\n"
    "  -t, --test write|read|send   operation (default write)\n"
    "      --lat                    latency (ping-pong) instead of bandwidth\n"
    "  -s, --size SIZE              message size, octets; K/M suffix (default 65536 bw, 2 lat)\n"
    "  -a, --all                    sweep sizes 2, 4, ... 8388608 (2^1 .. 2^23)\n"
    "  -n, --iters N                operations per size (default 5000 write bw, else 1000,\n"
    "                               as perftest; at most 1 GiB per size unless given)\n"
    "  -D, --duration SECONDS       run each size this long instead of -n\n"
    "  -q, --tx-depth DEPTH         outstanding operations, bw (default 128, max 4096)\n"
    "      --verify                 check every octet received (slows the test)\n"
    "      --json                   one JSON object per size instead of the table\n"
    "      --poll                   busy-poll instead of sleeping in epoll\n"
    "Framing (both sides):\n"
    "      --crc, --no-crc          MPA CRC (default on; off only if both sides say so)\n"
    "      --markers, --no-markers  require markers in the peer's FPDUs (default off)\n"
    "      --cut-through            place payload before its CRC is verified: zero copy,\n"
    "                               not RFC 5044 section 6 conformant (default: verify, then "
    "place)\n"
    "      --mpa-rev 1|2            MPA revision (default 2)\n"
    "      --emss N                 effective MSS for MULPDU, 128..65535 (default 1460;\n"
    "                               65483 on loopback, whose MTU is 65536)\n"
    "Connection:\n"
    "      --transport tcp|sctp     tcp: MPA over TCP (default); sctp: DDP over SCTP\n"
    "                               (RFC 5043; user-space SCTP in UDP datagrams, both\n"
    "                               sides; the MPA framing options do not apply)\n"
    "  -p, --port PORT              TCP (or UDP) port (default 18515; server: 0 picks one)\n"
    "  -b, --bind ADDR              server: listen address (default 127.0.0.1)\n"
    "      --connect-delay MS       initiator: wait MS after the MPA Reply before the first\n"
    "                               FPDU (default 0; 50 with --perftest: siw's Reply race)\n"
    "perftest (both sides, with perftest's options given to both, as perftest wants):\n"
    "      --perftest               speak perftest's -R protocol (ib_*_bw/lat -R, version\n"
    "                               6.06) instead of iwarp-perf's: the peer is perftest;\n"
    "                               the server then needs -t, --lat, -s and -n/-D too\n"
    "      --rx-depth N             send bw: receives posted / the sender's credit window\n"
    "                               (default 512, as perftest's -r; at most -n)\n"
    "  -h, --help, -V, --version\n"
    "\n"
    "Exit status: 0 success, 1 connection, protocol or verify failure, 2 usage error.\n";

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...) {
    va_list ap;
    fputs(PERF_PROG ": ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry '" PERF_PROG " --help'.\n", stderr);
    return -1;
}

/* Decimal, optional K/M/G (powers of 2), within [lo, hi]. */
static bool parse_num(const char *s, uint64_t lo, uint64_t hi, bool suffix, uint64_t *out) {
    if (!*s)
        return false;
    uint64_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        v = v * 10 + (uint64_t)(*s - '0');
        if (v > hi)
            return false;
    }
    if (suffix && *s && !s[1]) {
        unsigned sh = *s == 'K' || *s == 'k'   ? 10
                      : *s == 'M' || *s == 'm' ? 20
                      : *s == 'G' || *s == 'g' ? 30
                                               : 0;
        if (!sh || v > hi >> sh)
            return false;
        v <<= sh;
        s++;
    }
    if (*s || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static bool valid_addr(const char *a) {
    uint8_t buf[16];
    return inet_pton(AF_INET, a, buf) == 1 || inet_pton(AF_INET6, a, buf) == 1;
}

typedef struct opt_def {
    const char *s, *l;
    bool arg;
} opt_def;

static const opt_def opt_defs[] = {
    {"-t", "--test", true},      {NULL, "--lat", false},          {"-s", "--size", true},
    {"-a", "--all", false},      {"-n", "--iters", true},         {"-D", "--duration", true},
    {"-q", "--tx-depth", true},  {NULL, "--verify", false},       {NULL, "--json", false},
    {NULL, "--poll", false},     {NULL, "--crc", false},          {NULL, "--no-crc", false},
    {NULL, "--markers", false},  {NULL, "--no-markers", false},   {NULL, "--mpa-rev", true},
    {NULL, "--emss", true},      {NULL, "--cut-through", false},  {"-p", "--port", true},
    {"-b", "--bind", true},      {"-h", "--help", false},         {"-V", "--version", false},
    {NULL, "--perftest", false}, {NULL, "--connect-delay", true}, {NULL, "--rx-depth", true},
    {NULL, "--transport", true},
};

static const perf_proto *proto_of(const perf_opts *o) {
    return o->perftest ? &perf_perftest : &perf_native;
}

static int parse_opts(int argc, char **argv, perf_opts *o) {
    memset(o, 0, sizeof *o);
    o->test = PERF_WRITE;
    o->crc = true;
    o->mpa_rev = 2;
    o->depth = 128;
    o->emss = 1460;
    o->port = PERF_DEFAULT_PORT;
    bool size_set = false, only_args = false;
    const char *mpa_only = NULL; /* the first MPA framing option given */
    const char *bind = NULL, *server = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_args || a[0] != '-' || !a[1]) {
            if (server)
                return usage_error("only one server address may be given ('%s' and '%s')", server,
                                   a);
            server = a;
            continue;
        }
        if (!strcmp(a, "--")) {
            only_args = true;
            continue;
        }
        /* --name=value, --name value, -x value, -xvalue */
        char name[32];
        const char *val = NULL;
        bool is_long = a[1] == '-';
        const char *eq = is_long ? strchr(a, '=') : NULL;
        size_t nl = eq ? (size_t)(eq - a) : is_long ? strlen(a) : 2;
        if (nl >= sizeof name)
            return usage_error("unknown option '%s'", a);
        memcpy(name, a, nl);
        name[nl] = '\0';
        const opt_def *d = NULL;
        for (size_t k = 0; k < sizeof opt_defs / sizeof opt_defs[0]; k++)
            if ((opt_defs[k].s && !strcmp(name, opt_defs[k].s)) || !strcmp(name, opt_defs[k].l))
                d = &opt_defs[k];
        if (!d)
            return usage_error("unknown option '%s'", a);
        if (eq)
            val = eq + 1;
        else if (!is_long && a[2])
            val = a + 2;
        if (d->arg && !val) {
            if (i + 1 >= argc)
                return usage_error("option '%s' needs an argument", name);
            val = argv[++i];
        } else if (!d->arg && val) {
            return usage_error("option '%s' takes no argument", name);
        }
        const char *l = d->l;
        uint64_t v;
        if (!strcmp(l, "--test")) {
            o->test = !strcmp(val, "write")  ? PERF_WRITE
                      : !strcmp(val, "read") ? PERF_READ
                      : !strcmp(val, "send") ? PERF_SEND
                                             : 0;
            if (!o->test)
                return usage_error("--test takes write, read or send, not '%s'", val);
        } else if (!strcmp(l, "--lat")) {
            o->lat = true;
        } else if (!strcmp(l, "--size")) {
            if (!parse_num(val, 1, PERF_MAX_MSG, true, &v))
                return usage_error("--size takes a size from 1 to %u (64M), not '%s'", PERF_MAX_MSG,
                                   val);
            o->size = (uint32_t)v;
            size_set = true;
        } else if (!strcmp(l, "--all")) {
            o->all = true;
        } else if (!strcmp(l, "--iters")) {
            if (!parse_num(val, 1, 1000000000000ull, false, &v))
                return usage_error("--iters takes a number from 1 to 10^12, not '%s'", val);
            o->iters = v;
        } else if (!strcmp(l, "--duration")) {
            char *end;
            double dv = strtod(val, &end);
            if (end == val || *end || !(dv > 0) || dv > 86400)
                return usage_error("--duration takes seconds, more than 0 and at most 86400, "
                                   "not '%s'",
                                   val);
            o->duration = dv;
        } else if (!strcmp(l, "--tx-depth")) {
            if (!parse_num(val, 1, PERF_MAX_DEPTH, false, &v))
                return usage_error("--tx-depth takes a number from 1 to %u, not '%s'",
                                   PERF_MAX_DEPTH, val);
            o->depth = (uint32_t)v;
        } else if (!strcmp(l, "--verify")) {
            o->verify = true;
        } else if (!strcmp(l, "--json")) {
            o->json = true;
        } else if (!strcmp(l, "--poll")) {
            o->poll = true;
        } else if (!strcmp(l, "--crc") || !strcmp(l, "--no-crc")) {
            o->crc = !strcmp(l, "--crc");
            mpa_only = mpa_only ? mpa_only : l;
        } else if (!strcmp(l, "--markers") || !strcmp(l, "--no-markers")) {
            o->markers = !strcmp(l, "--markers");
            mpa_only = mpa_only ? mpa_only : l;
        } else if (!strcmp(l, "--cut-through")) {
            o->cut_through = true;
            mpa_only = mpa_only ? mpa_only : l;
        } else if (!strcmp(l, "--transport")) {
            if (iw_transport_parse(val, &o->transport) < 0)
                return usage_error("--transport takes tcp or sctp, not '%s'", val);
            if (!iw_transport_available(o->transport))
                return usage_error("--transport %s: this build has no SCTP (libusrsctp-dev)", val);
        } else if (!strcmp(l, "--mpa-rev")) {
            if (strcmp(val, "1") && strcmp(val, "2"))
                return usage_error("--mpa-rev takes 1 or 2, not '%s'", val);
            o->mpa_rev = val[0] - '0';
        } else if (!strcmp(l, "--emss")) {
            if (!parse_num(val, 128, 65535, false, &v))
                return usage_error("--emss takes a number from 128 to 65535, not '%s'", val);
            o->emss = (uint32_t)v;
            mpa_only = mpa_only ? mpa_only : l;
        } else if (!strcmp(l, "--port")) {
            if (!parse_num(val, 0, 65535, false, &v))
                return usage_error("--port takes a number from 0 to 65535, not '%s'", val);
            o->port = (uint16_t)v;
        } else if (!strcmp(l, "--bind")) {
            bind = val;
        } else if (!strcmp(l, "--perftest")) {
            o->perftest = true;
        } else if (!strcmp(l, "--connect-delay")) {
            if (!parse_num(val, 0, 10000, false, &v))
                return usage_error("--connect-delay takes milliseconds from 0 to 10000, not '%s'",
                                   val);
            o->connect_delay_ms = (uint32_t)v;
            o->connect_delay_set = true;
        } else if (!strcmp(l, "--rx-depth")) {
            if (!parse_num(val, 1, 16384, false, &v))
                return usage_error("--rx-depth takes a number from 1 to 16384, not '%s'", val);
            o->rx_depth = (uint32_t)v;
        } else if (!strcmp(l, "--help")) {
            o->help = true;
        } else {
            o->version = true;
        }
    }
    if (o->help || o->version)
        return 0;
    o->server = server == NULL;
    if (o->all && size_set)
        return usage_error("-a (all sizes) and -s (one size) cannot be combined");
    if (o->iters && o->duration > 0)
        return usage_error("-n (iterations) and -D (duration) cannot be combined");
    if (!size_set)
        o->size = o->lat ? 2 : 65536;
    if (o->transport == IW_TRANSPORT_SCTP) {
        /* RFC 5043 has no markers and no MPA CRC (SCTP's CRC32c covers each
         * chunk), and its segment size is the SCTP binding's (§9). */
        if (mpa_only)
            return usage_error("%s is an MPA option: DDP over SCTP (--transport sctp) has no "
                               "MPA framing",
                               mpa_only);
        if (o->perftest)
            return usage_error("--perftest speaks to perftest over TCP: not with --transport sctp");
    }
    /* The protocol's own rules (perf_proto.h). */
    const char *why = proto_of(o)->check_opts(o);
    if (why)
        return usage_error("%s", why);
    if (o->server) {
        o->host = bind ? bind : "127.0.0.1";
        if (!valid_addr(o->host))
            return usage_error("--bind takes a numeric IPv4 or IPv6 address, not '%s'", o->host);
    } else {
        if (bind)
            return usage_error("--bind is for the server (no SERVER_ADDR)");
        if (!valid_addr(server))
            return usage_error("SERVER_ADDR must be a numeric IPv4 or IPv6 address, not '%s'",
                               server);
        if (o->port == 0)
            return usage_error("the client needs the server's port, not 0");
        o->host = server;
    }
    return 0;
}

int main(int argc, char **argv) {
    perf_opts o;
    if (parse_opts(argc, argv, &o) < 0)
        return 2;
    if (o.help) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (o.version) {
        printf(PERF_PROG " %s (libiwarp verbs; control protocol %s)\n", PERF_VERSION,
               perf_native.id);
        return 0;
    }
    static perf x; /* large (control rings); zeroed */
    x.o = &o;
    x.server = o.server;
    const perf_proto *p = proto_of(&o);
    int rc = o.server ? p->run_server(&x) : p->run_client(&x);
    if (rc < 0)
        fprintf(stderr, PERF_PROG ": %s\n", x.err[0] ? x.err : "failed");
    perf_destroy(&x);
    p->cleanup(&x);
    return rc < 0 ? 1 : 0;
}
