/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Robustness: iwarp-decode never crashes on garbage. Random octets, random
 * MPA-looking starts, mutated copies of the sample streams and random
 * hex-dump-looking text go through the real binary with a spread of
 * options; each run must end with a normal exit (0/1, or 2 for malformed hex
 * text), a silent stderr (no sanitizer report) and, in JSON mode, one valid
 * JSON object per line. Captures (after --captures) are truncated, have
 * octets flipped anywhere (file header, record headers, packets) and
 * records spliced; they may also end in exit status 2 (a damaged file) and
 * explain themselves on stderr, but never with a sanitizer report.
 *
 *   garbage_test TOOL WORKDIR [SAMPLE.bin ...] [--captures CAPTURE ...] */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iw_test.h"

/* ---- a minimal JSON validator (RFC 8259 grammar) ---- */

typedef struct {
    const char *p, *end;
    int depth;
} jp;

static void j_ws(jp *j) {
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

static bool j_lit(jp *j, const char *s) {
    size_t n = strlen(s);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, s, n) != 0)
        return false;
    j->p += n;
    return true;
}

static bool j_string(jp *j) {
    if (j->p >= j->end || *j->p != '"')
        return false;
    j->p++;
    while (j->p < j->end) {
        unsigned char c = (unsigned char)*j->p++;
        if (c == '"')
            return true;
        if (c < 0x20)
            return false;
        if (c == '\\') {
            if (j->p >= j->end)
                return false;
            char e = *j->p++;
            if (e == 'u') {
                for (int i = 0; i < 4; i++, j->p++)
                    if (j->p >= j->end || !strchr("0123456789abcdefABCDEF", *j->p))
                        return false;
            } else if (!strchr("\"\\/bfnrt", e)) {
                return false;
            }
        }
    }
    return false;
}

static bool j_number(jp *j) {
    const char *s = j->p;
    if (j->p < j->end && *j->p == '-')
        j->p++;
    if (j->p >= j->end || *j->p < '0' || *j->p > '9')
        return false;
    if (*j->p == '0')
        j->p++;
    else
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
            j->p++;
    return j->p > s;
}

static bool j_value(jp *j);

static bool j_container(jp *j, char close, bool object) {
    j->p++;
    if (++j->depth > 32)
        return false;
    j_ws(j);
    if (j->p < j->end && *j->p == close) {
        j->p++;
        j->depth--;
        return true;
    }
    for (;;) {
        j_ws(j);
        if (object) {
            if (!j_string(j))
                return false;
            j_ws(j);
            if (j->p >= j->end || *j->p++ != ':')
                return false;
        }
        if (!j_value(j))
            return false;
        j_ws(j);
        if (j->p >= j->end)
            return false;
        char c = *j->p++;
        if (c == close) {
            j->depth--;
            return true;
        }
        if (c != ',')
            return false;
    }
}

static bool j_value(jp *j) {
    j_ws(j);
    if (j->p >= j->end)
        return false;
    switch (*j->p) {
    case '{':
        return j_container(j, '}', true);
    case '[':
        return j_container(j, ']', false);
    case '"':
        return j_string(j);
    case 't':
        return j_lit(j, "true");
    case 'f':
        return j_lit(j, "false");
    case 'n':
        return j_lit(j, "null");
    default:
        return j_number(j);
    }
}

/* Every line is one JSON object. Returns the number of lines or -1. */
static long json_lines_valid(const char *s, size_t n) {
    long lines = 0;
    const char *end = s + n;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        if (!nl)
            return -1; /* every record ends with a newline */
        jp j = {s, nl, 0};
        if (*s != '{' || !j_value(&j))
            return -1;
        j_ws(&j);
        if (j.p != nl)
            return -1;
        lines++;
        s = nl + 1;
    }
    return lines;
}

/* ---- running the tool ---- */

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        char *q = realloc(buf, cap * 2 + 1);
        if (!q) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = q;
        cap *= 2;
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    *len = n;
    return buf;
}

static void spit(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(2);
    }
}

typedef struct {
    const char *tool, *work;
    unsigned runs, failures;
    unsigned status[3]; /* runs that ended with exit status 0, 1, 2 */
    unsigned inputs;    /* inputs so far: rotates the option sets each one meets */
} ctx;

/* Run tool with argv (NULL-terminated, input path last). Returns the exit
 * status, or -1 after reporting how it failed. */
static int run(ctx *c, char *const argv[], bool hex, bool capture, const char *what) {
    char outp[1024], errp[1024];
    snprintf(outp, sizeof outp, "%s/garbage.out", c->work);
    snprintf(errp, sizeof errp, "%s/garbage.err", c->work);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(2);
    }
    if (pid == 0) {
        FILE *o = freopen(outp, "wb", stdout);
        FILE *e = freopen(errp, "wb", stderr);
        if (!o || !e)
            _exit(127);
        execv(c->tool, argv);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) {
            perror("waitpid");
            exit(2);
        }
    c->runs++;
    size_t olen = 0, elen = 0;
    char *out = slurp(outp, &olen);
    char *err = slurp(errp, &elen);
    int rc = -1;
    bool json = true;
    for (int i = 0; argv[i]; i++)
        if (strcmp(argv[i], "--text") == 0)
            json = false;
    if (!out || !err) {
        fprintf(stderr, "  %s: cannot read the tool's output\n", what);
    } else if (WIFSIGNALED(st)) {
        fprintf(stderr, "  %s: killed by signal %d\n%s", what, WTERMSIG(st), err);
    } else if (!WIFEXITED(st) || WEXITSTATUS(st) > (hex ? 2 : 1)) {
        fprintf(stderr, "  %s: exit status %d\n%s", what, WIFEXITED(st) ? WEXITSTATUS(st) : -1,
                err);
    } else if (WEXITSTATUS(st) != 2 && elen != 0 && !capture) {
        fprintf(stderr, "  %s: unexpected stderr:\n%s", what, err);
    } else if ((WEXITSTATUS(st) == 2 || capture) &&
               (strstr(err, "Sanitizer") || strstr(err, "runtime error"))) {
        fprintf(stderr, "  %s: sanitizer report:\n%s", what, err);
    } else if (json && json_lines_valid(out, olen) < 0) {
        fprintf(stderr, "  %s: output is not one JSON object per line\n", what);
    } else {
        rc = WEXITSTATUS(st);
    }
    if (rc < 0)
        c->failures++;
    else
        c->status[rc]++;
    free(out);
    free(err);
    return rc;
}

/* Option sets tried on every binary input; the last slot takes the path. */
static void run_all(ctx *c, const char *path, uint64_t *seed, const char *what) {
    static const char *const sets[][6] = {
        {NULL},
        {"--text", "--payload", NULL},
        {"--start", "request", NULL},
        {"--start", "reply", "--text", NULL},
        {"--start", "any", "--payload", NULL},
        {"--markers", "--crc", NULL},
        {"--markers", "--no-crc", "--start", "any", NULL},
        {"--no-markers", "--no-crc", "--text", NULL},
        {"--markers", "--stream-offset", "", NULL},
    };
    char off[16];
    snprintf(off, sizeof off, "%u", (unsigned)(iw_test_rand(seed) & 0xFFFFFFFFu));
    /* Each input meets every third option set, the next input the next
     * third: three inputs in a row cover all of them, at a third of the
     * process starts (which dominate under the sanitizers). */
    unsigned third = c->inputs++ % 3;
    for (size_t s = third; s < sizeof sets / sizeof sets[0]; s += 3) {
        char *argv[10];
        int n = 0;
        argv[n++] = (char *)c->tool;
        for (int k = 0; sets[s][k]; k++)
            argv[n++] = (char *)(sets[s][k][0] ? sets[s][k] : off);
        argv[n++] = (char *)path;
        argv[n] = NULL;
        char label[256];
        snprintf(label, sizeof label, "%s (option set %zu)", what, s);
        run(c, argv, false, false, label);
    }
}

static uint32_t rd32le(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static void wr32le(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* Offsets of the record headers of a little-endian pcap (up to max). */
static size_t pcap_records(const uint8_t *b, size_t n, size_t *at, size_t max) {
    size_t k = 0;
    if (n < 24 || rd32le(b) != 0xA1B2C3D4u)
        return 0;
    for (size_t o = 24; o + 16 <= n && k < max;) {
        at[k++] = o;
        o += 16 + rd32le(b + o + 8);
    }
    return k;
}

/* Captures: damaged files through the capture mode's option sets. */
static void run_captures(ctx *c, char **files, int nfiles, uint64_t *seed) {
    static const char *const sets[][5] = {
        {NULL},
        {"--text", "--payload", NULL},
        {"--port", "4791", NULL},
        {"--markers", "--no-crc", NULL},
        {"--stream-offset", "", NULL},
    };
    static uint8_t b[1 << 17];
    char path[1024];
    snprintf(path, sizeof path, "%s/garbage.cap", c->work);
    char off[16];
    /* A fixed budget over all captures (pcaps/ keeps growing): each gets
     * every kind of mutation at least once, more while few are given; the
     * option sets rotate across mutations and files (see below). */
    int per = nfiles ? 480 / nfiles / 6 * 6 : 0;
    if (per < 6)
        per = 6;
    if (per > 36)
        per = 36;
    for (int i = 0; i < nfiles; i++) {
        size_t n;
        char *s = slurp(files[i], &n);
        if (!s) {
            fprintf(stderr, "cannot read %s\n", files[i]);
            exit(2);
        }
        if (n > sizeof b)
            n = sizeof b;
        for (int m = 0; m < per; m++) {
            size_t len = n;
            memcpy(b, s, len);
            size_t rec[512];
            size_t nrec = pcap_records(b, len, rec, 512);
            switch (m % 6) {
            case 0: /* cut anywhere, the file header included */
                len = (size_t)(iw_test_rand(seed) % (len + 1));
                break;
            case 1: /* octets flipped anywhere */
                for (unsigned f = 1 + (unsigned)(iw_test_rand(seed) % 8); f && len; f--)
                    b[iw_test_rand(seed) % len] ^= (uint8_t)(1u << (iw_test_rand(seed) % 8));
                break;
            case 2: /* a record's lengths: caplen > len, huge, or short */
                if (nrec) {
                    size_t r = rec[iw_test_rand(seed) % nrec];
                    uint32_t cl = rd32le(b + r + 8);
                    switch (iw_test_rand(seed) % 3) {
                    case 0:
                        wr32le(b + r + 12, cl / 2);
                        break;
                    case 1:
                        wr32le(b + r + 8, (uint32_t)iw_test_rand(seed));
                        break;
                    default:
                        wr32le(b + r + 8, cl > 8 ? cl - 1 - (uint32_t)(iw_test_rand(seed) % 8) : 0);
                    }
                }
                break;
            case 3: /* a random run inside the packets */
                if (len > 64) {
                    size_t at = 24 + (size_t)(iw_test_rand(seed) % (len - 56));
                    for (size_t k = 0; k < 32; k++)
                        b[at + k] = (uint8_t)iw_test_rand(seed);
                }
                break;
            case 4: /* one packet's octets flipped (headers, IP, TCP, payload) */
                if (nrec) {
                    size_t r = rec[iw_test_rand(seed) % nrec];
                    uint32_t cl = rd32le(b + r + 8);
                    for (unsigned f = 0; f < 3 && cl && r + 16 + cl <= len; f++)
                        b[r + 16 + iw_test_rand(seed) % cl] ^= (uint8_t)iw_test_rand(seed);
                }
                break;
            default: /* records spliced: a copy of one record in the middle of another */
                if (nrec > 2) {
                    size_t r = rec[iw_test_rand(seed) % nrec];
                    size_t at = 24 + (size_t)(iw_test_rand(seed) % (len - 24));
                    size_t k = 16 + rd32le((const uint8_t *)s + r + 8);
                    if (r + k <= n && at + k <= sizeof b) {
                        memmove(b + at + k, b + at,
                                len - at < sizeof b - at - k ? len - at : sizeof b - at - k);
                        memcpy(b + at, s + r, k);
                        len = len + k <= sizeof b ? len + k : sizeof b;
                    }
                }
                break;
            }
            spit(path, b, len);
            snprintf(off, sizeof off, "%u", (unsigned)(iw_test_rand(seed) & 0xFFFFFFFFu));
            /* One option set per mutation, rotating with the mutation kind
             * (m % 6): every 36 mutations of a file meet every kind with
             * every set. */
            size_t o = (size_t)(m / 6 + i) % (sizeof sets / sizeof sets[0]);
            char *argv[8];
            int k = 0;
            argv[k++] = (char *)c->tool;
            for (int q = 0; sets[o][q]; q++)
                argv[k++] = (char *)(sets[o][q][0] ? sets[o][q] : off);
            argv[k++] = path;
            argv[k] = NULL;
            char what[1200];
            snprintf(what, sizeof what, "%s mutation %d (option set %zu)", files[i], m, o);
            run(c, argv, true, true, what);
        }
        free(s);
    }
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: garbage_test TOOL WORKDIR [SAMPLE.bin ...]\n");
        return 2;
    }
    ctx c = {.tool = argv[1], .work = argv[2]};
    char path[1024];
    snprintf(path, sizeof path, "%s/garbage.in", c.work);
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    static uint8_t buf[1 << 17];
    int nsamples = argc;
    for (int i = 3; i < argc; i++)
        if (strcmp(argv[i], "--captures") == 0) {
            nsamples = i;
            run_captures(&c, argv + i + 1, argc - i - 1, &seed);
            break;
        }

    /* The samples themselves: valid JSON, exit 0/1. */
    for (int i = 3; i < nsamples; i++) {
        size_t n;
        char *s = slurp(argv[i], &n);
        if (!s) {
            fprintf(stderr, "cannot read %s\n", argv[i]);
            return 2;
        }
        char *const av[] = {(char *)c.tool, argv[i], NULL};
        if (run(&c, av, false, false, argv[i]) < 0)
            fprintf(stderr, "  (unmodified sample)\n");
        /* Mutations: flip octets, truncate, splice in random runs. */
        for (int m = 0; m < 24; m++) {
            size_t len = n < sizeof buf ? n : sizeof buf;
            memcpy(buf, s, len);
            unsigned flips = 1 + (unsigned)(iw_test_rand(&seed) % 8);
            for (unsigned f = 0; f < flips && len; f++)
                buf[iw_test_rand(&seed) % len] ^= (uint8_t)(1u << (iw_test_rand(&seed) % 8));
            if (m % 3 == 1 && len)
                len = (size_t)(iw_test_rand(&seed) % len);
            if (m % 4 == 2 && len > 64) {
                size_t at = (size_t)(iw_test_rand(&seed) % (len - 32));
                for (size_t k = 0; k < 32; k++)
                    buf[at + k] = (uint8_t)iw_test_rand(&seed);
            }
            spit(path, buf, len);
            char what[1100];
            snprintf(what, sizeof what, "%s mutation %d", argv[i], m);
            run_all(&c, path, &seed, what);
        }
        free(s);
    }

    /* Pure noise, and noise behind plausible starts. */
    static const char *const starts[] = {"", "MPA ID Req Frame", "MPA ID Rep Frame", "\0\0\0\0",
                                         "MPA ID R"};
    for (int r = 0; r < 40; r++) {
        size_t len = (size_t)(iw_test_rand(&seed) % 9000);
        for (size_t k = 0; k < len; k++)
            buf[k] = (uint8_t)iw_test_rand(&seed);
        const char *st = starts[r % 5];
        size_t sl = r % 5 == 3 ? 4 : strlen(st);
        if (sl <= len)
            memcpy(buf, st, sl);
        if (r % 5 == 1 && len > 20) {
            buf[17] = (uint8_t)(1 + r % 3); /* a plausible Rev */
            buf[18] = 0;
            buf[19] = (uint8_t)(r * 7 % 40); /* and PD_Length */
        }
        spit(path, buf, len);
        char what[64];
        snprintf(what, sizeof what, "random input %d", r);
        run_all(&c, path, &seed, what);
    }

    /* Hex-dump-looking text. */
    static const char alphabet[] = "0123456789abcdefABCDEF  \n\n\t:|*>.x#,";
    for (int r = 0; r < 60; r++) {
        size_t len = (size_t)(iw_test_rand(&seed) % 6000);
        for (size_t k = 0; k < len; k++)
            buf[k] = (uint8_t)alphabet[iw_test_rand(&seed) % (sizeof alphabet - 1)];
        if (r % 3 == 0 && len > 12)
            memcpy(buf, "00000000: ", 10);
        spit(path, buf, len);
        char *const av[] = {(char *)c.tool, "--hex", path, NULL};
        char what[64];
        snprintf(what, sizeof what, "random hex text %d", r);
        run(&c, av, true, false, what);
    }

    printf("garbage_test: %u runs (exit 0: %u, 1: %u, 2: %u), %u failures\n", c.runs, c.status[0],
           c.status[1], c.status[2], c.failures);
    return c.failures ? 1 : 0;
}
