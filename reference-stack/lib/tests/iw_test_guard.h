/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Guard-page inputs for decoder tests.
 *
 * A decoder handed (buf, len) must never read buf[len]. To make any
 * over-read fault, the input is copied so that it ends exactly where an
 * inaccessible (PROT_NONE) page begins.
 *
 *   uint8_t *p = iw_test_guard(src, len);   one-shot: maps, copies, returns
 *   ...decode(p, len)...
 *   iw_test_guard_free(p, len);
 *
 * For loops over many truncations, map once and re-place each prefix:
 *
 *   iw_test_guard_buf g;
 *   iw_test_guard_init(&g, max_len);
 *   const uint8_t *p = iw_test_guard_place(&g, src, k);   ends at the guard
 *   iw_test_guard_fini(&g);
 *
 * Test-only; aborts on mmap failure. */
#ifndef IW_TEST_GUARD_H
#define IW_TEST_GUARD_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct iw_test_guard_buf {
    uint8_t *base; /* start of the mapping */
    size_t data;   /* accessible octets before the guard page */
    size_t maplen; /* data + one guard page */
} iw_test_guard_buf;

static inline size_t iw_test_guard_page_(void) {
    long pg = sysconf(_SC_PAGESIZE);
    return pg > 0 ? (size_t)pg : 4096;
}

/* Map room for cap octets followed by one PROT_NONE page. */
static inline void iw_test_guard_init(iw_test_guard_buf *g, size_t cap) {
    size_t pg = iw_test_guard_page_();
    g->data = (cap + pg - 1) / pg * pg;
    if (g->data == 0)
        g->data = pg;
    g->maplen = g->data + pg;
    void *m = mmap(NULL, g->maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        perror("iw_test_guard: mmap");
        abort();
    }
    g->base = m;
    if (mprotect(g->base + g->data, pg, PROT_NONE) != 0) {
        perror("iw_test_guard: mprotect");
        abort();
    }
}

/* Copy len octets of src so they end at the guard page; returns their start.
 * len must not exceed the cap given to iw_test_guard_init. */
static inline uint8_t *iw_test_guard_place(iw_test_guard_buf *g, const void *src, size_t len) {
    if (len > g->data)
        abort(); /* test bug: buffer too small */
    uint8_t *p = g->base + g->data - len;
    if (len)
        memcpy(p, src, len);
    return p;
}

static inline void iw_test_guard_fini(iw_test_guard_buf *g) {
    if (g->base)
        munmap(g->base, g->maplen);
    g->base = NULL;
}

/* One-shot form: a fresh mapping holding exactly src[0..len) before the guard. */
static inline uint8_t *iw_test_guard(const void *src, size_t len) {
    iw_test_guard_buf g;
    iw_test_guard_init(&g, len);
    return iw_test_guard_place(&g, src, len);
}

/* Release a pointer returned by iw_test_guard(src, len). */
static inline void iw_test_guard_free(uint8_t *p, size_t len) {
    if (!p)
        return;
    size_t pg = iw_test_guard_page_();
    size_t data = (len + pg - 1) / pg * pg;
    if (data == 0)
        data = pg;
    munmap(p + len - data, data + pg);
}

#endif
