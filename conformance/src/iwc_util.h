/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Small helpers shared by the runner's modules: octet buffers, hex, the
 * deterministic data pattern, glob matching, a monotonic clock. */
#ifndef IWC_UTIL_H
#define IWC_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A growable octet buffer. */
typedef struct iwc_buf {
    uint8_t *p;
    size_t len, cap;
} iwc_buf;

int iwc_buf_add(iwc_buf *b, const void *data, size_t len); /* 0, or -1: no memory */
void iwc_buf_free(iwc_buf *b);

/* The pattern written by data=pat:SEED: octet i of the stream is a function
 * of (seed, i) only, so any sub-range can be produced on its own. It never
 * yields 0x00 or 0xA5 (zeroed regions and agent guard octets), so a
 * misplaced octet always shows. */
void iwc_pattern(uint8_t seed, uint64_t off, uint8_t *out, size_t n);

/* fnmatch-style glob (* ? [..]) on plain strings. */
bool iwc_glob(const char *pat, const char *s);

/* Microseconds on a monotonic clock; wall-clock microseconds. */
uint64_t iwc_now_us(void);
uint64_t iwc_wall_us(void);

/* Sleep up to ms milliseconds. */
void iwc_sleep_ms(int ms);

/* printf into a new string (free() it); NULL when out of memory. */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
char *
iwc_strf(const char *fmt, ...);

/* Lowercase hex of n octets into out (2n+1 chars). */
void iwc_hex(char *out, const uint8_t *p, size_t n);

#endif
