/* SPDX-License-Identifier: GPL-2.0-or-later */
/* CRC32c speed: libiwarp's iw_crc32c against ISA-L's crc32_iscsi, with the
 * portable table path as an extra column, at 64 B .. 1 MiB in one run.
 *
 * Each measurement is the best of TRIALS runs of about TRIAL_NS each; the
 * functions take turns within each trial round so drift hits all of them.
 * The buffer is touched before timing (calibration runs), so small sizes are
 * measured from L1. Every call is chained on the previous result (state in =
 * state out), as in streaming, so the time is per-call latency and calls
 * cannot overlap. The last line printed is machine-readable:
 *   crc32c_vs_isal_min_4k_up=<min over 4 KiB, 64 KiB, 1 MiB of ISA-L time / ours> */
#include <iwarp/crc32c.h>

#include <isa-l/crc.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ISA-L convention (checked at run time before any timing, on every size):
 * crc32_iscsi(buf, len, init) takes and returns the raw reflected register,
 * with no inversion at either end. So crc32_iscsi(buf, len, s) equals our
 * iw_crc32c_update(s, buf, len), and the CRC-32C value is
 * ~crc32_iscsi(buf, len, 0xFFFFFFFF) (ISA-L 2.30 returns 0x1CF96D7C for
 * "123456789", i.e. ~0xE3069283). Its length parameter is int in ISA-L 2.30
 * and uint64_t in later releases; the sizes here fit either. */
static uint32_t run_isal(uint32_t state, uint8_t *buf, size_t len) {
    return crc32_iscsi(buf, (int)len, state);
}
static uint32_t run_ours(uint32_t state, uint8_t *buf, size_t len) {
    return iw_crc32c_update(state, buf, len);
}
static uint32_t run_sw(uint32_t state, uint8_t *buf, size_t len) {
    return iw_crc32c_update_sw(state, buf, len);
}

/* One named libiwarp path, for the informational per-path table. */
static const char *path_name;
static uint32_t run_path(uint32_t state, uint8_t *buf, size_t len) {
    iw_crc32c_update_with(path_name, &state, buf, len);
    return state;
}

typedef uint32_t (*crc_fn)(uint32_t, uint8_t *, size_t);

enum { TRIALS = 7, N_FN = 3 };
#define TRIAL_NS 50e6

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static volatile uint32_t sink;

/* ns per call over reps chained calls. */
static double time_reps(crc_fn fn, uint8_t *buf, size_t len, long reps) {
    uint32_t st = IW_CRC32C_INIT;
    double t0 = now_ns();
    for (long i = 0; i < reps; i++)
        st = fn(st, buf, len);
    double t1 = now_ns();
    sink = st;
    return (t1 - t0) / (double)reps;
}

/* Repetitions that make one trial last about TRIAL_NS (also warms caches). */
static long calibrate(crc_fn fn, uint8_t *buf, size_t len) {
    long reps = 1;
    for (;;) {
        double t = time_reps(fn, buf, len, reps) * (double)reps;
        if (t >= TRIAL_NS / 10)
            return (long)((double)reps * TRIAL_NS / t) + 1;
        reps *= 4;
    }
}

/* Best ns/call of each of n (<= N_FN) functions, taking turns each round. */
static void best_of(const crc_fn *f, int n, int trials, uint8_t *buf, size_t len, double *best) {
    long reps[N_FN];
    for (int i = 0; i < n; i++) {
        reps[i] = calibrate(f[i], buf, len);
        best[i] = 1e300;
    }
    for (int t = 0; t < trials; t++) {
        for (int i = 0; i < n; i++) {
            double ns = time_reps(f[i], buf, len, reps[i]);
            if (ns < best[i])
                best[i] = ns;
        }
    }
}

/* Both libraries and the portable path must agree before any timing. */
static void verify(uint8_t *buf, size_t len) {
    uint32_t ours = iw_crc32c(buf, len);
    uint32_t isal = ~crc32_iscsi(buf, (int)len, 0xFFFFFFFFu);
    uint32_t sw = ~iw_crc32c_update_sw(IW_CRC32C_INIT, buf, len);
    uint32_t mid_ours = iw_crc32c_update(0x12345678u, buf, len);
    uint32_t mid_isal = crc32_iscsi(buf, (int)len, 0x12345678u);
    if (ours != isal || ours != sw || mid_ours != mid_isal) {
        fprintf(stderr,
                "bench_crc32c: MISMATCH at %zu bytes: iwarp 0x%08" PRIx32 " isa-l 0x%08" PRIx32
                " sw 0x%08" PRIx32 " (from state 0x12345678: iwarp 0x%08" PRIx32
                " isa-l 0x%08" PRIx32 ")\n",
                len, ours, isal, sw, mid_ours, mid_isal);
        exit(1);
    }
}

static void size_label(char *out, size_t cap, size_t len) {
    if (len >= 1024 * 1024)
        snprintf(out, cap, "%zu MiB", len >> 20);
    else if (len >= 1024)
        snprintf(out, cap, "%zu KiB", len >> 10);
    else
        snprintf(out, cap, "%zu B", len);
}

int main(void) {
    static const size_t sizes[] = {64, 1024, 4096, 65536, 1u << 20};
    enum { N_SIZES = sizeof sizes / sizeof sizes[0] };
    static const crc_fn fns[N_FN] = {run_ours, run_isal, run_sw};
    const size_t cap = (size_t)1 << 20;
    uint8_t *buf = aligned_alloc(64, cap);
    if (!buf) {
        fprintf(stderr, "bench_crc32c: out of memory\n");
        return 1;
    }
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < cap; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        buf[i] = (uint8_t)x;
    }

    if (~crc32_iscsi((unsigned char *)"123456789", 9, 0xFFFFFFFFu) != 0xE3069283u) {
        fprintf(stderr, "bench_crc32c: ISA-L convention differs from the documented one\n");
        return 1;
    }
    for (size_t i = 0; i < N_SIZES; i++) {
        verify(buf, sizes[i]);
        verify(buf + 1, sizes[i] - 1); /* odd length, unaligned */
    }

    printf("CRC32c: iwarp (%s) vs ISA-L crc32_iscsi vs iwarp sw; best of %d x ~%.0f ms, "
           "chained calls\n",
           iw_crc32c_impl(), TRIALS, TRIAL_NS / 1e6);
    printf("%8s | %9s %7s | %9s %7s | %9s %7s | %s\n", "size", "iwarp ns", "GB/s", "isa-l ns",
           "GB/s", "sw ns", "GB/s", "isa-l/iwarp");
    double min_ratio = 1e300;
    char label[32];
    for (size_t i = 0; i < N_SIZES; i++) {
        size_t len = sizes[i];
        double t[N_FN];
        best_of(fns, N_FN, TRIALS, buf, len, t);
        double ratio = t[1] / t[0];
        size_label(label, sizeof label, len);
        printf("%8s |", label);
        for (int f = 0; f < N_FN; f++)
            printf(" %9.1f %7.2f |", t[f], (double)len / t[f]);
        printf(" %.2f\n", ratio);
        if (len >= 4096 && ratio < min_ratio)
            min_ratio = ratio;
    }

    /* Informational: every libiwarp path this CPU can run, forced by name
     * (the name lookup costs a few ns, so only the larger sizes are shown). */
    static const char *const paths[] = {"vpclmul-avx512-hybrid", "vpclmul-avx512", "sse42-3way",
                                        "sse42"};
    printf("\nlibiwarp paths forced with iw_crc32c_update_with, best of 3, GB/s:\n%-22s", "path");
    for (size_t i = 2; i < N_SIZES; i++) {
        size_label(label, sizeof label, sizes[i]);
        printf(" %8s", label);
    }
    printf("\n");
    for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
        uint32_t st = 0;
        if (!iw_crc32c_update_with(paths[p], &st, buf, 0))
            continue; /* not available on this CPU */
        path_name = paths[p];
        printf("%-22s", paths[p]);
        for (size_t i = 2; i < N_SIZES; i++) {
            const crc_fn f = run_path;
            double t;
            best_of(&f, 1, 3, buf, sizes[i], &t);
            printf(" %8.2f", (double)sizes[i] / t);
        }
        printf("\n");
    }

    free(buf);
    printf("crc32c_vs_isal_min_4k_up=%.2f\n", min_ratio);
    return 0;
}
