/* iwarp-decode: decode ONE direction of an iWARP TCP byte stream (MPA
 * Request/Reply, FPDUs with or without markers and CRC, DDP and RDMAP) and
 * give every frame the verdict a conformant receiver would reach.
 *
 * A thin adapter over libiwarp: framing, markers and CRC go through
 * iw_deframer_*, DDP/RDMAP through iw_rdmap_decode. This file only reads
 * input (binary, or hex dumps via iwd_hex) and drives the output
 * (iwd_print). Manual: docs/iwarp-decode.md. */
#include <iwarp/iwarp.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iwd_hex.h"
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
    bool help, version;
} opts;

static const char usage_text[] =
    "Usage: " PROG " [OPTIONS] [FILE|-]\n"
    "Decode one direction of an iWARP (MPA/DDP/RDMAP over TCP) byte stream.\n"
    "FILE is binary unless --hex; without FILE, or with -, stdin is read.\n"
    "\n"
    "Input:\n"
    "  --hex                  FILE is a hex dump (plain hex, xxd, hexdump -C, od -A x -t x1z,\n"
    "                         Wireshark hex dump, tcpdump -X/-xx)\n"
    "Framing (default: auto):\n"
    "  --start request|reply|any|fpdu\n"
    "                         request/reply: the stream opens with that MPA frame (a Request\n"
    "                         on the reply side is flagged Initiator/Initiator); any: either;\n"
    "                         fpdu: mid-stream, the first octet starts an FPDU (or its marker).\n"
    "                         Auto: 'any' if the input starts with \"MPA ID R\", else 'fpdu'\n"
    "  --markers, --no-markers\n"
    "                         force markers on/off (auto: a leading marker after the MPA\n"
    "                         frame; mid-stream: off)\n"
    "  --crc, --no-crc        force CRC checking on/off (auto: on if the MPA frame has C=1,\n"
    "                         else on iff the first FPDU's CRC verifies)\n"
    "  --stream-offset N      stream position of the first input octet on the marker grid\n"
    "                         (octets since the start of Full Operation, or a TCP sequence\n"
    "                         difference), decimal or 0x hex, 0..4294967295; implies fpdu\n"
    "Output:\n"
    "  --json                 one JSON object per line per frame (default when stdout is\n"
    "                         not a terminal)\n"
    "  --text                 one readable line per frame and a summary (default on a\n"
    "                         terminal)\n"
    "  --payload              include payload and private data octets as hex\n"
    "  --help, --version\n"
    "\n"
    "Exit status: 0 every frame ok, 1 some verdict is not ok, 2 usage or input error.\n";

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
        bool takes_arg = strcmp(name, "--start") == 0 || strcmp(name, "--stream-offset") == 0;
        if (takes_arg && !val) {
            if (i + 1 >= argc)
                return usage_error("option '%s' needs an argument", name);
            val = argv[++i];
        } else if (!takes_arg && val) {
            return usage_error("option '%s' takes no argument", name);
        }

        if (strcmp(name, "--hex") == 0) {
            o->hex = true;
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
    if (o->have_stream_off) {
        /* A grid position only means something mid-stream. */
        if (have_start && o->start != IW_DF_START_FPDU)
            return usage_error("--stream-offset decodes mid-stream; it cannot be combined with "
                               "--start request, reply or any");
        o->start = IW_DF_START_FPDU;
    }
    return 0;
}

/* ---- decoding ---- */

typedef struct dec {
    iw_deframer *df;
    iw_df_cfg cfg;
    bool auto_start;
    bool started;
    uint8_t pre[8]; /* octets held until the start can be chosen */
    size_t npre;
    uint64_t bytes;
    bool dropped; /* an FPDU had a non-ok verdict: a receiver drops what follows */
    bool any_bad;
    bool internal_error;
    iwd_counts counts;
    iwd_out *out;
    iw_rdmap_msg msg;
} dec;

static void dec_frame(dec *d, const iw_frame *fr) {
    iwd_rec rec = {fr, NULL, false, false, fr->verdict, d->dropped};
    if (fr->type == IW_FRAME_FPDU) {
        /* The deframer's verdict (CRC, markers) comes first; otherwise the
         * ULPDU's. Decode it either way, for display. */
        const iw_mpa_fpdu *f = &fr->fpdu;
        iw_verdict mv;
        iw_ssize rc = iw_rdmap_decode(&d->msg, f->ulpdu, f->ulpdu_len, &mv);
        rec.msg = &d->msg;
        rec.ddp_ok = f->ulpdu_len >= 1 && f->ulpdu_len >= iw_ddp_hdr_len(f->ulpdu[0]);
        rec.msg_ok = rc >= 0;
        if (rec.verdict.kind == IW_VERDICT_OK && rc < 0)
            rec.verdict = mv;
    }
    iwd_out_record(d->out, &rec);

    iwd_counts *c = &d->counts;
    if (fr->type == IW_FRAME_LOST)
        c->lost++;
    else if (fr->type == IW_FRAME_INCOMPLETE)
        c->incomplete++;
    else
        c->frames++;
    if (rec.verdict.kind == IW_VERDICT_TERM)
        c->term++;
    else if (rec.verdict.kind == IW_VERDICT_CLOSE)
        c->close++;
    else if (fr->type != IW_FRAME_LOST && fr->type != IW_FRAME_INCOMPLETE)
        c->ok++;
    if (rec.after_term)
        c->after_term++;
    if (fr->type == IW_FRAME_FPDU) {
        c->fpdus++;
        c->markers = fr->markers;
        c->crc = fr->crc_on;
    }
    if (rec.verdict.kind != IW_VERDICT_OK)
        d->any_bad = true;
    /* RFC 5041 §7.1, RFC 5040 §5.4: after the first error nothing more is
     * placed or delivered on this stream. */
    if (fr->type == IW_FRAME_FPDU && rec.verdict.kind != IW_VERDICT_OK)
        d->dropped = true;
}

static void dec_run(dec *d, const uint8_t *p, size_t n) {
    while (n && !d->internal_error) {
        iw_frame fr;
        iw_ssize r = iw_deframer_feed(d->df, p, n, &fr);
        if (r < 0 || (size_t)r > n || (r == 0 && fr.type == IW_FRAME_NONE)) {
            d->internal_error = true; /* breaks the deframer's contract */
            return;
        }
        if (fr.type != IW_FRAME_NONE)
            dec_frame(d, &fr);
        p += r;
        n -= (size_t)r;
    }
}

static void dec_start(dec *d) {
    if (d->auto_start) {
        /* RFC 5044 §7.1.1: both keys begin "MPA ID R". A shorter input is
         * judged on the octets it has. */
        static const char key_prefix[] = "MPA ID R";
        bool rr = d->npre > 0 && memcmp(d->pre, key_prefix, d->npre) == 0;
        d->cfg.start = rr ? IW_DF_START_RR : IW_DF_START_FPDU;
    }
    iw_deframer_init(d->df, &d->cfg);
    d->started = true;
    dec_run(d, d->pre, d->npre);
}

static void dec_feed(void *ctx, const uint8_t *p, size_t n) {
    dec *d = ctx;
    d->bytes += n;
    if (!d->started) {
        size_t take = sizeof d->pre - d->npre;
        if (take > n)
            take = n;
        memcpy(d->pre + d->npre, p, take);
        d->npre += take;
        p += take;
        n -= take;
        if (d->npre < sizeof d->pre)
            return;
        dec_start(d);
    }
    dec_run(d, p, n);
}

static void dec_finish(dec *d) {
    if (!d->started)
        dec_start(d);
    iw_frame fr;
    while (!d->internal_error && iw_deframer_finish(d->df, &fr))
        dec_frame(d, &fr);
}

/* ---- input ---- */

/* Reads the whole input through the decoder. Returns 0 or EXIT_USAGE after
 * printing why. */
static int read_input(FILE *in, const char *name, bool hex, dec *d) {
    char *buf = malloc(CHUNK);
    iwd_hex *hx = hex ? malloc(sizeof *hx) : NULL;
    int rc = 0;
    if (!buf || (hex && !hx)) {
        fprintf(stderr, PROG ": out of memory\n");
        rc = EXIT_USAGE;
        goto out;
    }
    if (hx)
        iwd_hex_init(hx, dec_feed, d);
    for (;;) {
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
            dec_feed(d, (const uint8_t *)buf, n);
        }
        if (d->internal_error)
            break;
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
        dec_finish(d);
out:
    free(hx);
    free(buf);
    return rc;
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
        printf(PROG " %s (libiwarp %s, crc32c %s)\n", IW_VERSION_STR, IW_VERSION_STR,
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

    dec *d = calloc(1, sizeof *d);
    iw_deframer *df = malloc(sizeof *df); /* large: holds a whole FPDU */
    int rc = EXIT_USAGE;
    if (!d || !df) {
        fprintf(stderr, PROG ": out of memory\n");
        goto out;
    }
    d->df = df;
    d->out = &out;
    d->auto_start = o.start == 0;
    d->cfg.start = o.start;
    d->cfg.markers = o.markers;
    d->cfg.crc = o.crc;
    d->cfg.stream_pos = o.stream_off;

    rc = read_input(in, name, o.hex, d);
    if (d->internal_error) {
        fprintf(stderr, PROG ": internal error: the deframer broke its contract\n");
        rc = EXIT_USAGE;
    }
    if (rc == 0) {
        iwd_out_summary(&out, &d->counts, d->bytes);
        rc = d->any_bad ? EXIT_VIOLATION : 0;
    }
out:
    free(df);
    free(d);
    if (!use_stdin)
        fclose(in);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, PROG ": error writing output\n");
        rc = EXIT_USAGE;
    }
    return rc;
}
