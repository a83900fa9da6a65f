/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared by the libFuzzer harnesses: the entry point's prototype, an
 * invariant check that aborts, and a little cursor for the selector bytes
 * some harnesses read before their payload.
 *
 * A harness aborts only when the library breaks one of its own promises
 * (round trip, split independence, path agreement). Invalid input is the
 * normal case and must just return. */
#ifndef IW_FUZZ_H
#define IW_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Not assert(): it must stay on in release builds, and the message names
 * the invariant, which is what a crash report needs. */
#define FUZZ_CHECK(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: invariant violated: %s\n", __FILE__, __LINE__, #cond);         \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* Reads selector bytes from the front of the input; past the end it yields
 * zeros, so every input is valid and short inputs still mean something. */
typedef struct {
    const uint8_t *p;
    size_t n;
} fuzz_in;

static inline uint8_t fuzz_u8(fuzz_in *in) {
    if (!in->n)
        return 0;
    in->n--;
    return *in->p++;
}
static inline uint16_t fuzz_u16(fuzz_in *in) {
    uint16_t hi = fuzz_u8(in);
    return (uint16_t)(hi << 8 | fuzz_u8(in));
}
static inline uint32_t fuzz_u32(fuzz_in *in) {
    uint32_t hi = fuzz_u16(in);
    return hi << 16 | fuzz_u16(in);
}

/* Copy of a span in a heap block of exactly that size, so ASan faults on
 * any read past a length the harness passes (a prefix of the input, say). */
static inline uint8_t *fuzz_dup(const uint8_t *p, size_t n) {
    uint8_t *q = malloc(n ? n : 1);
    FUZZ_CHECK(q != NULL);
    if (n)
        memcpy(q, p, n);
    return q;
}

/* 64-bit FNV-1a: lets a harness compare contents that live in buffers which
 * are reused by the next call. */
static inline uint64_t fuzz_hash(const void *p, size_t n) {
    const uint8_t *b = p;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

#endif
