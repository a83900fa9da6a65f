/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Minimal test harness for libiwarp's unit tests.
 *
 * Each tests/iw_<module>_test.c defines its cases with IW_TEST() and lists them
 * in IW_TEST_MAIN(). A failing CHECK reports file:line and the expression,
 * marks the case failed and continues, so one run shows every broken
 * assertion. Exit status is non-zero when any case failed. */
#ifndef IW_TEST_H
#define IW_TEST_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*iw_test_fn)(void);
typedef struct {
    const char *name;
    iw_test_fn fn;
} iw_test_case;

extern int iw_test_failed_checks;

#define IW_TEST(name) static void name(void)
#define IW_CASE(name)                                                                              \
    { #name, name }

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);             \
            iw_test_failed_checks++;                                                               \
        }                                                                                          \
    } while (0)

#define CHECK_EQ(a, b)                                                                             \
    do {                                                                                           \
        long long iw_a_ = (long long)(a), iw_b_ = (long long)(b);                                  \
        if (iw_a_ != iw_b_) {                                                                      \
            fprintf(stderr, "  %s:%d: CHECK_EQ(%s, %s) failed: %lld (0x%llx) != %lld (0x%llx)\n",  \
                    __FILE__, __LINE__, #a, #b, iw_a_, (unsigned long long)iw_a_, iw_b_,           \
                    (unsigned long long)iw_b_);                                                    \
            iw_test_failed_checks++;                                                               \
        }                                                                                          \
    } while (0)

#define CHECK_MEM(a, b, n)                                                                         \
    do {                                                                                           \
        if (memcmp((a), (b), (n)) != 0) {                                                          \
            fprintf(stderr, "  %s:%d: CHECK_MEM(%s, %s, %s) failed\n", __FILE__, __LINE__, #a, #b, \
                    #n);                                                                           \
            iw_test_failed_checks++;                                                               \
        }                                                                                          \
    } while (0)

/* Stop the current case when a precondition for the rest of it fails. */
#define REQUIRE(cond)                                                                              \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "  %s:%d: REQUIRE(%s) failed\n", __FILE__, __LINE__, #cond);           \
            iw_test_failed_checks++;                                                               \
            return;                                                                                \
        }                                                                                          \
    } while (0)

int iw_test_run(const char *suite, const iw_test_case *cases, size_t n, int argc, char **argv);

/* Parse "aa bb cc" / "aabbcc" into out; returns the byte count. Test-only helper. */
size_t iw_test_unhex(uint8_t *out, size_t cap, const char *hex);

/* Deterministic PRNG for property tests (xorshift64*), seeded per case. */
static inline uint64_t iw_test_rand(uint64_t *s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

/* Encoder refusals write nothing: fill the output with IW_TEST_CANARY,
 * call, then count the octets that changed. */
#define IW_TEST_CANARY 0xA5
static inline size_t iw_test_canary_changed(const void *p, size_t n) {
    const uint8_t *b = p;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += b[i] != IW_TEST_CANARY;
    return k;
}

#define IW_TEST_MAIN(suite, ...)                                                                   \
    int main(int argc, char **argv) {                                                              \
        static const iw_test_case cases_[] = {__VA_ARGS__};                                        \
        return iw_test_run(suite, cases_, sizeof cases_ / sizeof cases_[0], argc, argv);           \
    }

#endif
