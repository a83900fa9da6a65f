/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwarp-perf's watchdog ("no progress for 20 s"): pure, so its timing is
 * tested with made-up clocks (tests/perf_idle_test.c). */
#ifndef PERF_IDLE_H
#define PERF_IDLE_H

#include <stdbool.h>
#include <stdint.h>

/* One progress round at now_ns: completions handled, and the octets moved
 * on the connection so far (a Read's responder and a Write's target see no
 * completions, only octets). Either one moving restarts the clock; true
 * once neither has moved for more than idle_ns. The octet count is
 * compared on every idle round, so the limit counts from the last real
 * movement, not from the last time it was looked at. */
static inline bool perf_idle_expired(uint64_t *last_ns, uint64_t *last_bytes, uint64_t now_ns,
                                     int completions, uint64_t bytes, uint64_t idle_ns) {
    if (completions > 0 || bytes != *last_bytes) {
        *last_ns = now_ns;
        *last_bytes = bytes;
        return false;
    }
    return now_ns - *last_ns > idle_ns;
}

#endif
