/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwarp-perf's watchdog: it fires IDLE_NS after the last completion or
 * octet moved, not up to twice that (issue 16: it fired after 38-40 s). */
#include "iw_test.h"
#include "perf_idle.h"

#define S 1000000000ull
#define IDLE (20 * S)

/* Completions stop at 100 s while octets kept moving until then (a Write
 * target); from then on the peer is silent. Progress rounds every 100 ms. */
IW_TEST(fires_twenty_seconds_after_the_last_movement) {
    uint64_t last = 0, last_bytes = 0, bytes = 0, fired = 0;
    for (uint64_t t = 0; t <= 100 * S; t += S / 10) {
        bytes += 4096;
        CHECK(!perf_idle_expired(&last, &last_bytes, t, t < 10 * S ? 1 : 0, bytes, IDLE));
    }
    for (uint64_t t = 100 * S + S / 10; t <= 200 * S && !fired; t += S / 10)
        if (perf_idle_expired(&last, &last_bytes, t, 0, bytes, IDLE))
            fired = t;
    /* The first round more than 20 s after 100 s. */
    CHECK_EQ(fired, 120 * S + S / 10);
}

IW_TEST(completions_alone_keep_it_alive) {
    uint64_t last = 0, last_bytes = 0;
    for (uint64_t t = 0; t <= 300 * S; t += S)
        CHECK(!perf_idle_expired(&last, &last_bytes, t, 1, 0, IDLE));
    CHECK(!perf_idle_expired(&last, &last_bytes, 320 * S, 0, 0, IDLE));
    CHECK(perf_idle_expired(&last, &last_bytes, 320 * S + 1, 0, 0, IDLE));
}

IW_TEST(octets_alone_keep_it_alive) {
    uint64_t last = 0, last_bytes = 0;
    for (uint64_t t = 0; t <= 300 * S; t += 5 * S)
        CHECK(!perf_idle_expired(&last, &last_bytes, t, 0, t / S + 1, IDLE));
    /* A single octet after a long quiet spell restarts the clock. */
    CHECK(!perf_idle_expired(&last, &last_bytes, 319 * S, 0, 301, IDLE));
    CHECK(!perf_idle_expired(&last, &last_bytes, 330 * S, 0, 302, IDLE));
    CHECK(!perf_idle_expired(&last, &last_bytes, 350 * S, 0, 302, IDLE));
    CHECK(perf_idle_expired(&last, &last_bytes, 350 * S + 1, 0, 302, IDLE));
}

IW_TEST_MAIN("perf_idle", IW_CASE(fires_twenty_seconds_after_the_last_movement),
             IW_CASE(completions_alone_keep_it_alive), IW_CASE(octets_alone_keep_it_alive))
