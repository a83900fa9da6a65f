/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwarp-decode: decode one direction of an iWARP TCP byte stream (MPA
 * Request/Reply, FPDUs with or without markers and CRC, DDP and RDMAP), or
 * every TCP stream of a pcap/pcapng capture, and give every frame the
 * verdict a conformant receiver would reach.
 *
 * A thin adapter over libiwarp: framing, markers and CRC go through
 * iw_deframer_*, DDP/RDMAP through iw_rdmap_decode (both via iwd_dec). This
 * file only reads options and input (binary, hex dumps via iwd_hex, or
 * captures via iwd_capture) and drives the output (iwd_print). Manual:
 * docs/iwarp-decode.md. */
#define _GNU_SOURCE /* fopencookie: a capture on a pipe, after its magic was read */
#include <iwarp/iwarp.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iwd_capture.h"
#include "iwd_dec.h"
#include "iwd_shadow.h"
#include "iwd_hex.h"
#include "iwd_pcap.h"
#include "iwd_print.h"

#define PROG "iwarp-decode"
#define CHUNK 65536
#define EXIT_VIOLATION 1
#define EXIT_USAGE 2

/* ---- options ---- */

typedef enum { FMT_AUTO = 0, FMT_JSON, FMT_TEXT } out_format;

typedef struct opts {
    const char *path; /* NULL or "-": stdin */
    bool hex;
    iw_df_start start; /* 0: auto-detect from the first octets */
    iw_df_mode markers, crc;
    bool have_stream_off;
    uint32_t stream_off;
    out_format format;
    bool payload;
    bool pcap;       /* --pcap: the input is a capture file */
    bool have_start; /* --start was given */
    uint16_t ports[IWD_PORTS_MAX];
    size_t nports;
    bool help, version;
} opts;

static const char usage_text[] =
    "Usage: " PROG " [OPTIONS] [FILE|-]\n"
    "Decode one direction of an iWARP (MPA/DDP/RDMAP over TCP) byte stream, or every\n"
    "TCP stream of a pcap/pcapng capture. FILE is binary (one direction's octets) or\n"
    "a capture (recognised by its magic number) unless --hex or --pcap; without FILE,\n"
    "or with -, stdin is read.\n"
    "\n"
    "Input:\n"
    "  --hex                  FILE is a hex dump (plain hex, xxd, hexdump -C, od -A x -t x1z,\n"
    "                         Wireshark hex dump, tcpdump -X/-xx)\n"
    "  --pcap                 FILE is a pcap or pcapng capture: every TCP stream is followed\n"
    "                         in both directions and decoded (default when FILE starts with\n"
    "                         a capture magic number)\n"
    "  --port N               capture: decode the streams on TCP port N even without an MPA\n"
    "                         startup or a recognisable FPDU (may be repeated)\n"
    "Framing (default: auto):\n"
    "  --start request|reply|any|fpdu\n"
    "                         request/reply: the stream opens with that MPA frame (a Request\n"
    "                         on the reply side is flagged Initiator/Initiator); any: either;\n"
    "                         fpdu: mid-stream, the first octet starts an FPDU (or its marker).\n"
    "                         Auto: 'any' if the input starts with \"MPA ID R\", else 'fpdu'.\n"
    "                         Not with captures: each direction's start is found there\n"
    "  --markers, --no-markers\n"
    "                         force markers on/off (auto: a leading marker after the MPA\n"
    "                         frame; mid-stream: off)\n"
    "  --crc, --no-crc        force CRC checking on/off (auto: on if the MPA frame has C=1,\n"
    "                         else on iff the first FPDU's CRC verifies)\n"
    "  --stream-offset N      stream position of the first input octet on the marker grid\n"
    "                         (octets since the start of Full Operation, or a TCP sequence\n"
    "                         difference), decimal or 0x hex, 0..4294967295; implies fpdu.\n"
    "                         Capture: the position of each mid-stream direction's first\n"
    "                         captured octet\n"
    "Output:\n"
    "  --json                 one JSON object per line per frame (default when stdout is\n"
    "                         not a terminal)\n"
    "  --text                 one readable line per frame and a summary (default on a\n"
    "                         terminal)\n"
    "  --payload              include payload and private data octets as hex\n"
    "  --help, --version\n"
    "\n"
    "Exit status: 0 every frame ok, 1 some verdict is not ok, 2 usage or input error\n"
    "(including a capture that cannot be read to its end).\n";

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...) {
    va_list ap;
    fputs(PROG ": ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry '" PROG " --help'.\n", stderr);
    return -1;
}

/* Decimal or 0x hex, 0..2^32-1, nothing else. */
static bool parse_u32(const char *s, uint32_t *out) {
    unsigned base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    if (!*s)
        return false;
    uint64_t v = 0;
    for (; *s; s++) {
        unsigned d;
        if (*s >= '0' && *s <= '9')
            d = (unsigned)(*s - '0');
        else if (base == 16 && *s >= 'a' && *s <= 'f')
            d = (unsigned)(*s - 'a' + 10);
        else if (base == 16 && *s >= 'A' && *s <= 'F')
            d = (unsigned)(*s - 'A' + 10);
        else
            return false;
        v = v * base + d;
        if (v > UINT32_MAX)
            return false;
    }
    *out = (uint32_t)v;
    return true;
}

/* Returns 0, or -1 after printing the problem. */
static int parse_opts(int argc, char **argv, opts *o) {
    memset(o, 0, sizeof *o);
    bool only_files = false, have_start = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_files || a[0] != '-' || strcmp(a, "-") == 0) {
            if (o->path)
                return usage_error("only one input may be given ('%s' and '%s')", o->path, a);
            o->path = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_files = true;
            continue;
        }
        /* --name=value or --name value */
        char name[32];
        const char *val = NULL;
        const char *eq = strchr(a, '=');
        size_t nl = eq ? (size_t)(eq - a) : strlen(a);
        if (nl >= sizeof name)
            return usage_error("unknown option '%s'", a);
        memcpy(name, a, nl);
        name[nl] = '\0';
        if (eq)
            val = eq + 1;
        bool takes_arg = strcmp(name, "--start") == 0 || strcmp(name, "--stream-offset") == 0 ||
                         strcmp(name, "--port") == 0;
        if (takes_arg && !val) {
            if (i + 1 >= argc)
                return usage_error("option '%s' needs an argument", name);
            val = argv[++i];
        } else if (!takes_arg && val) {
            return usage_error("option '%s' takes no argument", name);
        }

        if (strcmp(name, "--hex") == 0) {
            o->hex = true;
        } else if (strcmp(name, "--pcap") == 0) {
            o->pcap = true;
        } else if (strcmp(name, "--port") == 0) {
            uint32_t port;
            if (!parse_u32(val, &port) || port > 65535)
                return usage_error("--port takes a TCP port from 0 to 65535, not '%s'", val);
            if (o->nports == IWD_PORTS_MAX)
                return usage_error("at most %d --port options", IWD_PORTS_MAX);
            o->ports[o->nports++] = (uint16_t)port;
        } else if (strcmp(name, "--json") == 0) {
            o->format = FMT_JSON;
        } else if (strcmp(name, "--text") == 0) {
            o->format = FMT_TEXT;
        } else if (strcmp(name, "--payload") == 0) {
            o->payload = true;
        } else if (strcmp(name, "--markers") == 0) {
            o->markers = IW_DF_ON;
        } else if (strcmp(name, "--no-markers") == 0) {
            o->markers = IW_DF_OFF;
        } else if (strcmp(name, "--crc") == 0) {
            o->crc = IW_DF_ON;
        } else if (strcmp(name, "--no-crc") == 0) {
            o->crc = IW_DF_OFF;
        } else if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
            o->help = true;
        } else if (strcmp(name, "--version") == 0) {
            o->version = true;
        } else if (strcmp(name, "--start") == 0) {
            have_start = true;
            o->have_start = true;
            if (strcmp(val, "request") == 0)
                o->start = IW_DF_START_REQUEST;
            else if (strcmp(val, "reply") == 0)
                o->start = IW_DF_START_REPLY;
            else if (strcmp(val, "any") == 0)
                o->start = IW_DF_START_RR;
            else if (strcmp(val, "fpdu") == 0)
                o->start = IW_DF_START_FPDU;
            else
                return usage_error("--start takes request, reply, any or fpdu, not '%s'", val);
        } else if (strcmp(name, "--stream-offset") == 0) {
            if (!parse_u32(val, &o->stream_off))
                return usage_error("--stream-offset takes a number from 0 to 4294967295 "
                                   "(decimal or 0x hex), not '%s'",
                                   val);
            o->have_stream_off = true;
        } else {
            return usage_error("unknown option '%s'", a);
        }
    }
    if (o->hex && o->pcap)
        return usage_error("--hex and --pcap cannot be combined");
    if (o->pcap && o->have_start)
        return usage_error("--start does not apply to captures: each direction's start is "
                           "found in the capture");
    if (o->have_stream_off) {
        /* A grid position only means something mid-stream. */
        if (have_start && o->start != IW_DF_START_FPDU)
            return usage_error("--stream-offset decodes mid-stream; it cannot be combined with "
                               "--start request, reply or any");
        o->start = IW_DF_START_FPDU;
    }
    return 0;
}

/* ---- one stream ---- */

/* One direction is all a byte stream holds: the shadow runs on it as
 * direction 0, with record offsets as its ids. What needs the other
 * direction (the Reply's RTR and IRD, requests answered by Read Responses)
 * stays unknown to it, so it judges only what one direction proves: MSN
 * order on each queue once seen, Terminate and invalidation state. */
typedef struct stream_ctx {
    iwd_out *out;
    iw_shadow sh;
    bool framed;
    bool shadow_error;
} stream_ctx;

static void emit_record(void *ctx, iwd_rec *r) {
    stream_ctx *s = ctx;
    iwd_sh_in in;
    iw_shadow_result res;
    memset(&res, 0, sizeof res);
    res.verdict = iw_verdict_ok();
    res.judged = true;
    iwd_sh_in_from_rec(&in, r, &s->framed);
    /* Direction 1 is never in the input: nothing it sent is known, before
     * or after this record (an MPA Reply would otherwise make it known). */
    iw_shadow_lost(&s->sh, 1);
    if (iwd_sh_feed(&s->sh, 0, &in, r->fr->offset, &res) < 0)
        s->shadow_error = true;
    bool judged = in.kind == IWD_SH_MPA || in.kind == IWD_SH_FPDU;
    if (judged && iwd_sh_says(&res)) {
        r->verdict = iwd_sh_verdict(&r->verdict, &res);
        r->shadow = &res;
    }
    iwd_out_record(s->out, r);
    iw_shadow_lost(&s->sh, 1);
    r->shadow = NULL; /* res ends here */
}

static void dec_feed_cb(void *ctx, const uint8_t *p, size_t n) { iwd_dec_feed(ctx, p, n); }

/* Reads the rest of the input through the decoder, after `first` (octets
 * already read to look for a capture magic number). Returns 0 or
 * EXIT_USAGE after printing why. */
static int read_input(FILE *in, const char *name, bool hex, iwd_dec *d, const uint8_t *first,
                      size_t nfirst) {
    char *buf = malloc(CHUNK);
    iwd_hex *hx = hex ? malloc(sizeof *hx) : NULL;
    int rc = 0;
    if (!buf || (hex && !hx)) {
        fprintf(stderr, PROG ": out of memory\n");
        rc = EXIT_USAGE;
        goto out;
    }
    if (hx)
        iwd_hex_init(hx, dec_feed_cb, d);
    if (nfirst)
        iwd_dec_feed(d, first, nfirst);
    for (;;) {
        if (d->internal_error)
            break;
        size_t n = fread(buf, 1, CHUNK, in);
        if (n == 0)
            break;
        if (hx) {
            if (iwd_hex_feed(hx, buf, n)) {
                fprintf(stderr, PROG ": %s: %s\n", name, hx->err);
                rc = EXIT_USAGE;
                goto out;
            }
        } else {
            iwd_dec_feed(d, (const uint8_t *)buf, n);
        }
    }
    if (ferror(in)) {
        fprintf(stderr, PROG ": %s: read error: %s\n", name, strerror(errno));
        rc = EXIT_USAGE;
        goto out;
    }
    if (hx && iwd_hex_finish(hx)) {
        fprintf(stderr, PROG ": %s: %s\n", name, hx->err);
        rc = EXIT_USAGE;
        goto out;
    }
    if (!d->internal_error)
        iwd_dec_finish(d);
out:
    free(hx);
    free(buf);
    return rc;
}

static int run_stream(const opts *o, FILE *in, const char *name, iwd_out *out, const uint8_t *first,
                      size_t nfirst) {
    iwd_dec *d = calloc(1, sizeof *d);
    iw_df_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.start = o->start;
    cfg.markers = o->markers;
    cfg.crc = o->crc;
    cfg.stream_pos = o->stream_off;
    stream_ctx *sc = malloc(sizeof *sc);
    if (sc) {
        sc->out = out;
        iw_shadow_init(&sc->sh);
        sc->framed = false;
        sc->shadow_error = false;
    }
    if (!d || !sc || iwd_dec_init(d, &cfg, o->start == 0, emit_record, sc) != 0) {
        fprintf(stderr, PROG ": out of memory\n");
        free(d);
        free(sc);
        return EXIT_USAGE;
    }
    int rc = read_input(in, name, o->hex, d, first, nfirst);
    if (d->internal_error) {
        fprintf(stderr, PROG ": internal error: the deframer broke its contract\n");
        rc = EXIT_USAGE;
    }
    if (sc->shadow_error) {
        fprintf(stderr, PROG ": internal error: iw_shadow refused an input\n");
        rc = EXIT_USAGE;
    }
    if (rc == 0) {
        iwd_out_summary(out, &d->counts, d->bytes);
        rc = d->any_bad ? EXIT_VIOLATION : 0;
    }
    iwd_dec_free(d);
    free(d);
    free(sc);
    return rc;
}

/* ---- captures ---- */

#ifdef __GLIBC__
/* A stream that gives back the octets already read, then the rest of in:
 * libpcap must see the file from its first octet, and a pipe cannot seek. */
typedef struct prefix_cookie {
    FILE *in;
    const uint8_t *pre;
    size_t npre, at;
} prefix_cookie;

static ssize_t prefix_read(void *cookie, char *buf, size_t size) {
    prefix_cookie *c = cookie;
    if (c->at < c->npre) {
        size_t n = c->npre - c->at < size ? c->npre - c->at : size;
        memcpy(buf, c->pre + c->at, n);
        c->at += n;
        return (ssize_t)n;
    }
    size_t n = fread(buf, 1, size, c->in);
    return n == 0 && ferror(c->in) ? -1 : (ssize_t)n;
}

static int prefix_close(void *cookie) {
    (void)cookie;
    return 0;
}
#endif

static int run_capture(const opts *o, FILE *in, const char *name, iwd_out *out,
                       const uint8_t *first, size_t nfirst) {
    iwd_capture_opts co;
    memset(&co, 0, sizeof co);
    co.markers = o->markers;
    co.crc = o->crc;
    co.have_stream_off = o->have_stream_off;
    co.stream_off = o->stream_off;
    memcpy(co.ports, o->ports, sizeof co.ports);
    co.nports = o->nports;
    if (!nfirst || fseek(in, 0, SEEK_SET) == 0)
        return iwd_capture_run(in, name, &co, out); /* closes in */
#ifdef __GLIBC__
    prefix_cookie ck = {in, first, nfirst, 0};
    cookie_io_functions_t io = {prefix_read, NULL, NULL, prefix_close};
    FILE *f = fopencookie(&ck, "rb", io);
    if (!f) {
        fprintf(stderr, PROG ": out of memory\n");
        return EXIT_USAGE;
    }
    int rc = iwd_capture_run(f, name, &co, out);
    fclose(in);
    return rc;
#else
    (void)first;
    fprintf(stderr, PROG ": %s: a capture must be given as a file, not a pipe\n", name);
    return EXIT_USAGE;
#endif
}

int main(int argc, char **argv) {
    opts o;
    if (parse_opts(argc, argv, &o))
        return EXIT_USAGE;
    if (o.help) {
        fputs(usage_text, stdout);
        return fflush(stdout) == 0 ? 0 : EXIT_USAGE;
    }
    if (o.version) {
        printf(PROG " %s (libiwarp %s, crc32c %s)\n", IW_VERSION_STR, iw_version(),
               iw_crc32c_impl());
        return fflush(stdout) == 0 ? 0 : EXIT_USAGE;
    }

    bool use_stdin = !o.path || strcmp(o.path, "-") == 0;
    const char *name = use_stdin ? "<stdin>" : o.path;
    FILE *in = use_stdin ? stdin : fopen(o.path, o.hex ? "r" : "rb");
    if (!in) {
        fprintf(stderr, PROG ": cannot open '%s': %s\n", o.path, strerror(errno));
        return EXIT_USAGE;
    }

    iwd_out out;
    bool json = o.format == FMT_JSON || (o.format == FMT_AUTO && !isatty(STDOUT_FILENO));
    iwd_out_init(&out, stdout, json, o.payload);

    /* A capture is recognised by its first octets; a byte stream never
     * starts with a capture magic number (none is an MPA key or an FPDU
     * with DDP and RDMAP version 1). */
    uint8_t *first = NULL;
    size_t nfirst = 0;
    bool capture = o.pcap;
    int rc;
    if (!o.hex && !o.pcap) {
        first = malloc(CHUNK);
        if (!first) {
            fprintf(stderr, PROG ": out of memory\n");
            rc = EXIT_USAGE;
            goto out;
        }
        nfirst = fread(first, 1, CHUNK, in);
        if (ferror(in)) {
            fprintf(stderr, PROG ": %s: read error: %s\n", name, strerror(errno));
            rc = EXIT_USAGE;
            goto out;
        }
        capture = iwd_is_capture_magic(first, nfirst);
    }
    if (capture && o.have_start) {
        usage_error("--start does not apply to captures: each direction's start is found in "
                    "the capture");
        rc = EXIT_USAGE;
    } else if (!capture && o.nports) {
        usage_error("--port applies to captures only, and %s is not one", name);
        rc = EXIT_USAGE;
    } else if (capture) {
        rc = run_capture(&o, in, name, &out, first, nfirst);
        in = NULL; /* closed by libpcap */
    } else {
        rc = run_stream(&o, in, name, &out, first, nfirst);
    }
out:
    free(first);
    if (in && !use_stdin)
        fclose(in);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, PROG ": error writing output\n");
        rc = EXIT_USAGE;
    }
    return rc;
}
