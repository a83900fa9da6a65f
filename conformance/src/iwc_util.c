/* SPDX-License-Identifier: GPL-2.0-or-later */
/* See iwc_util.h. */
#include "iwc_util.h"

#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int iwc_buf_add(iwc_buf *b, const void *data, size_t len) {
    if (len > SIZE_MAX / 2 - b->len)
        return -1;
    if (b->len + len > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + len)
            cap *= 2;
        uint8_t *n = realloc(b->p, cap);
        if (!n)
            return -1;
        b->p = n;
        b->cap = cap;
    }
    if (len)
        memcpy(b->p + b->len, data, len);
    b->len += len;
    return 0;
}

void iwc_buf_free(iwc_buf *b) {
    free(b->p);
    memset(b, 0, sizeof *b);
}

void iwc_pattern(uint8_t seed, uint64_t off, uint8_t *out, size_t n) {
    for (size_t k = 0; k < n; k++) {
        uint64_t i = off + k;
        /* A cheap mix of seed and position (no period shorter than 2^16). */
        uint32_t x = (uint32_t)(i * 2654435761u) ^ (uint32_t)(seed * 0x9E3779B1u) ^
                     (uint32_t)(i >> 16) * 40503u;
        x ^= x >> 15;
        x *= 0x2C1B3C6Du;
        x ^= x >> 12;
        uint8_t b = (uint8_t)(x >> 8);
        if (b == 0x00 || b == 0xA5)
            b = 0x5A;
        out[k] = b;
    }
}

bool iwc_glob(const char *pat, const char *s) { return fnmatch(pat, s, 0) == 0; }

uint64_t iwc_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint64_t iwc_wall_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void iwc_sleep_ms(int ms) {
    if (ms <= 0)
        return;
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

char *iwc_strf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

void iwc_hex(char *out, const uint8_t *p, size_t n) {
    static const char h[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = h[p[i] >> 4];
        out[2 * i + 1] = h[p[i] & 15];
    }
    out[2 * n] = 0;
}
